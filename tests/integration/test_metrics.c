/*
 * GET /metrics on the real daemon: the names and DCGM-style labels a dashboard joins on, and
 * `promtool check metrics` on a real scrape (skipped, saying so, only where promtool is absent;
 * scripts/install-deps installs it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/harness.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_scrape(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    char path[128], cmd[512];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_policy(&d, "kind: GPUQuota\n"
                                  "metadata: {name: q, namespace: team-a}\n"
                                  "spec:\n"
                                  "  tenant: team-a\n"
                                  "  quotas: {a100-80gb: {total: 64, dedicated: 8, shared: 56}}\n"
                                  "---\n"
                                  "kind: ResourceQuota\n"
                                  "metadata: {name: rq, namespace: team-b}\n"
                                  "spec: {hard: {requests.nvidia.com/gpu: 4, pods: 10}}\n"
                                  "---\n"
                                  "apiVersion: nvidia.com/v1\n"
                                  "kind: GpuClusterPolicy\n"
                                  "spec:\n"
                                  "  mig: {strategy: mixed}\n"
                                  "  devices: [{name: A100-SXM4-80GB, migEnabled: true}]\n"),
                     0);
    assert_int_equal(h_start(&d), 0);
    const int gpus[] = {2, 1, 8, 16, 8}; /* 16 cards fit no node: m3 waits */
    for (int i = 0; i < 5; i++) {
        char name[16], *body;
        snprintf(name, sizeof(name), "m%d", i);
        body = h_pod(i % 2 ? "team-b" : "team-a", name, gpus[i], i == 1 ? 40 : 0);
        assert_int_equal(h_call(&d, "POST", "/v1/pods", i % 2 ? TOKEN_B : TOKEN_A, body, &a), 0);
        assert_int_equal(a.status, 201);
        h_answer_free(&a);
        free(body);
    }
    json_t *mig =
        json_pack("{s:s, s:{s:s, s:s}, s:{s:[{s:s, s:{s:{s:i, s:s}}}]}}", "kind", "Pod", "metadata",
                  "name", "m5", "namespace", "team-b", "spec", "containers", "name", "main",
                  "resources", "limits", "nvidia.com/mig-1g.10gb", 1, "cpu", "1");
    char *body = json_dumps(mig, JSON_COMPACT);
    json_decref(mig);
    assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_B, body, &a), 0);
    assert_int_equal(a.status, 201);
    h_answer_free(&a);
    free(body);
    assert_int_equal(h_call(&d, "GET", "/metrics", NULL, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    const char *want[] = {
        "gpusched_allocated_gpus{tenant=\"team-a\",queue=\"team-a\",namespace=\"team-a\"} ",
        "gpusched_allocated_gpu_milli{tenant=\"team-b\",queue=\"team-b\",namespace=\"team-b\"} 542",
        /* 400: a 40 % share; 142: the 1g.10gb instance, one of the card's 7 compute slices */
        "gpusched_pending_pods{reason=\"Insufficient nvidia.com/gpu\"} ",
        "gpusched_bill_accrued{tenant=\"team-a\",currency=\"USD\"} 0.0",
        "gpusched_preemption_victims_total 0",
        "gpusched_scheduling_duration_seconds_bucket{le=\"+Inf\"} ",
        "gpusched_store_commit_duration_seconds_count ",
        "gpusched_gpu_allocated_milli{Hostname=\"n-t4-0\",gpu=\"0\",modelName=\"T4\"}",
        "gpusched_pod_gpu_allocated_milli{namespace=\"team-b\",pod=\"m1\",Hostname=",
        "gpusched_quota_hard{kind=\"GPUQuota\",tenant=\"team-a\",modelName=\"A100-SXM4-80GB\","
        "resource=\"nvidia.com/gpu\"} 64000",
        "gpusched_quota_used{kind=\"GPUQuota\",tenant=\"team-a\",modelName=\"A100-SXM4-80GB\","
        "resource=\"nvidia.com/gpu.dedicated\"} 2000",
        "gpusched_quota_used{kind=\"GPUQuota\",tenant=\"team-a\",modelName=\"A100-SXM4-80GB\","
        "resource=\"nvidia.com/gpu.shared\"} 8000",
        "gpusched_quota_used{kind=\"ResourceQuota\",tenant=\"team-b\",namespace=\"team-b\","
        "quota=\"rq\",resource=\"pods\"} 2",
        "gpusched_mig_instances_allocated{tenant=\"team-b\",queue=\"team-b\",namespace=\"team-b\","
        "profile="
        "\"1g.10gb\"} 1\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (!strstr(a.body, want[i]))
            fail_msg("scrape lacks: %s", want[i]);
    snprintf(path, sizeof(path), "%s/scrape.txt", d.dir);
    assert_int_equal(h_write(path, a.body), 0);
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    if (system("command -v promtool >/dev/null 2>&1") != 0) {
        h_cleanup(&d);
        fprintf(stderr, "SKIP: promtool is not installed (scripts/install-deps installs the "
                        "prometheus package that has it)\n");
        skip();
    }
    /* promtool parses the scrape (a format error fails here) and lints it. Its one lint finding
     * allowed is the camelCase of DCGM's own label names (Hostname, modelName), kept so these
     * series join with dcgm-exporter's; any other finding fails the test. */
    snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s' > '%s.out' 2>&1", path, path);
    int st = system(cmd);
    snprintf(cmd, sizeof(cmd), "%s.out", path);
    FILE *f = fopen(cmd, "r");
    char line[1024];
    int other = 0, lines = 0;
    while (f && fgets(line, sizeof(line), f)) {
        lines++;
        if (!strstr(line, "label names should be written in 'snake_case' not 'camelCase'")) {
            fprintf(stderr, "promtool: %s", line);
            other++;
        }
    }
    if (f)
        fclose(f);
    assert_true(WIFEXITED(st));
    assert_int_equal(other, 0);
    if (WEXITSTATUS(st) != 0)
        assert_true(lines > 0); /* a non-zero exit only for the finding above */
    h_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_scrape)};
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
