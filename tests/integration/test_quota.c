/*
 * Quotas on the real daemon, from a policy file of the simulator's kinds given as a second
 * --config: a GPUQuota (seed-manifests/gpuquota-team-a.yaml's shape) keeps team-a's pods within
 * its A100 total, the pod over it waits naming the quota and starts once use drops; maxGPUsPerPod
 * refuses a pod outright; a namespace ResourceQuota caps team-b; a LimitRange fills defaults in
 * and refuses a pod past its bounds, on both paths; use is counted again after a
 * restart; a bad policy file stops the start (naming file:line:col) and is refused at SIGHUP.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/api.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char policy[] = "apiVersion: gpu.example.com/v1\n"
                             "kind: GPUQuota\n"
                             "metadata: {name: team-gpu-quota, namespace: team-a}\n"
                             "spec:\n"
                             "  tenant: team-a\n"
                             "  quotas:\n"
                             "    a100-80gb: {total: 8, dedicated: 8, shared: 0}\n"
                             "  limits: {maxGPUsPerPod: 4, maxPodsPerUser: 32}\n"
                             "---\n"
                             "apiVersion: v1\n"
                             "kind: ResourceQuota\n"
                             "metadata: {name: gpus, namespace: team-b}\n"
                             "spec:\n"
                             "  hard: {requests.nvidia.com/gpu: \"2\"}\n";

/* A fresh daemon with @pol as its policy file. */
static void start(struct daemon *d, const char *pol)
{
    assert_int_equal(h_setup(d, NULL), 0);
    assert_int_equal(h_policy(d, pol), 0);
    assert_int_equal(h_start(d), 0);
}

static long post(const struct daemon *d, const char *ns, const char *name, int gpus,
                 struct answer *a)
{
    char *body = h_pod(ns, name, gpus, 0);
    assert_int_equal(h_call(d, "POST", "/v1/pods", h_token_of(ns), body, a), 0);
    free(body);
    return a->status;
}

/* Answer @a (freed here) must be a 400 naming @field and saying @error. */
static void refused(struct answer *a, const char *field, const char *error)
{
    assert_int_equal(a->status, 400);
    assert_string_equal(json_string_value(json_object_get(a->json, "field")), field);
    assert_string_equal(json_string_value(json_object_get(a->json, "error")), error);
    h_answer_free(a);
}

/* Pod object @pod, named @name, posted by team-a: refused as refused() says. */
static void post_refused(const struct daemon *d, json_t *pod, const char *name, const char *field,
                         const char *error)
{
    struct answer a;
    json_object_set_new(json_object_get(pod, "metadata"), "name", json_string(name));
    char *body = json_dumps(pod, JSON_COMPACT);
    assert_int_equal(h_call(d, "POST", "/v1/pods", TOKEN_A, body, &a), 0);
    free(body);
    refused(&a, field, error);
}

/* Pod @ns/@name's state; its reason in @reason when pending. */
static void pod_state(const struct daemon *d, const char *ns, const char *name, char *state,
                      char *reason, size_t cap)
{
    struct answer a;
    char path[128];
    snprintf(path, sizeof(path), "/v1/pods/%s/%s", ns, name);
    assert_int_equal(h_call(d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    snprintf(state, 16, "%s", json_string_value(json_object_get(a.json, "state")));
    const char *r = json_string_value(json_object_get(a.json, "reason"));
    snprintf(reason, cap, "%s", r ? r : "");
    h_answer_free(&a);
}

static void expect_state(const struct daemon *d, const char *ns, const char *name, const char *want,
                         const char *reason_has)
{
    char state[16], reason[512];
    pod_state(d, ns, name, state, reason, sizeof(reason));
    if (strcmp(state, want) || (reason_has && !strstr(reason, reason_has)))
        fail_msg("%s/%s: %s (%s), expected %s with \"%s\"", ns, name, state, reason, want,
                 reason_has ? reason_has : "");
}

/* team-a's A100 GPUQuota: used.total and hard.total in milli-GPU. */
static void a100_quota(const struct daemon *d, int64_t *used, int64_t *hard)
{
    struct answer a;
    assert_int_equal(h_call(d, "GET", "/v1/tenants/team-a", TOKEN_A, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    json_t *m = json_array_get(json_object_get(json_object_get(a.json, "quota"), "models"), 0);
    assert_non_null(m);
    assert_string_equal(json_string_value(json_object_get(m, "modelName")), "A100-SXM4-80GB");
    *used = json_integer_value(json_object_get(json_object_get(m, "used"), "total"));
    *hard = json_integer_value(json_object_get(json_object_get(m, "hard"), "total"));
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(a.json, "quota"), "maxGPUsPerPod")), 4);
    h_answer_free(&a);
}

static const char over[] = "tenant team-a: GPUQuota a100-80gb total 8/8 GPUs";

static void test_gpuquota(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    int64_t used, hard;
    start(&d, policy);
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a1", 4, 0), 201));
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a2", 4, 0), 201));
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a3", 1, 0),
                         201)); /* A100s are free, the T4s are not in the quota */
    expect_state(&d, "team-a", "a1", "running", NULL);
    expect_state(&d, "team-a", "a3", "pending", over);
    a100_quota(&d, &used, &hard);
    assert_int_equal(used, 8000);
    assert_int_equal(hard, 8000);
    post(&d, "team-a", "a4", 5, &a);
    refused(&a, "spec.containers[0].resources.limits.nvidia.com/gpu",
            "tenant team-a: maxGPUsPerPod 4 < nvidia.com/gpu 5");
    /* The same pod through the extender: filter passes no node, naming the limit. */
    static const char *const a100[] = {"n-a100-0"};
    char *five = h_pod("team-a", "a4", 5, 0);
    json_t *r = h_extender(&d, "filter", five, a100, 1);
    free(five);
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(r, "FailedNodes"), "n-a100-0")),
        "tenant team-a: maxGPUsPerPod 4 < nvidia.com/gpu 5");
    json_decref(r);

    /* Use is counted again from the store after a restart. */
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    expect_state(&d, "team-a", "a3", "pending", over);
    a100_quota(&d, &used, &hard);
    assert_int_equal(used, 8000);

    /* A cancel lowers the use: the waiting pod starts. */
    assert_int_equal(h_call(&d, "DELETE", "/v1/pods/team-a/a1", TOKEN_A, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    h_answer_free(&a);
    expect_state(&d, "team-a", "a3", "running", NULL);
    a100_quota(&d, &used, &hard);
    assert_int_equal(used, 5000);

    /* A quota lowered under running pods counts them all, at a reload and after a restart: the
     * tenant waits until its use is below the quota again. */
    assert_int_equal(h_policy(&d, "apiVersion: gpu.example.com/v1\nkind: GPUQuota\n"
                                  "metadata: {name: team-gpu-quota, namespace: team-a}\n"
                                  "spec: {tenant: team-a, quotas: {a100-80gb: {total: 2, "
                                  "dedicated: 2}}, limits: {maxGPUsPerPod: 4}}\n"),
                     0);
    assert_int_equal(h_reload(&d), 0);
    a100_quota(&d, &used, &hard);
    assert_int_equal(used, 5000);
    assert_int_equal(hard, 2000);
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a5", 1, 0), 201));
    expect_state(&d, "team-a", "a5", "pending", "GPUQuota a100-80gb total 5/2 GPUs");
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    a100_quota(&d, &used, &hard);
    assert_int_equal(used, 5000);
    expect_state(&d, "team-a", "a5", "pending", "GPUQuota a100-80gb total 5/2 GPUs");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* The extender path keeps the same quotas: filter passes no node to a pod over its tenant's
 * GPUQuota, naming the quota, and a bind kube-scheduler sends anyway is refused. */
static void test_gpuquota_through_extender(void **state)
{
    (void)state;
    struct daemon d;
    static const char *const all[] = {"n-a100-0", "n-a100-1", "n-t4-0"};
    start(&d, policy);
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a1", 4, 0), 201));
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a2", 4, 0), 201));
    char *pod = h_pod("team-a", "x1", 1, 0);
    json_t *r = h_extender(&d, "filter", pod, all, 3);
    assert_non_null(r);
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    const json_t *failed = json_object_get(r, "FailedNodes");
    for (size_t i = 0; i < 2; i++)
        assert_string_equal(json_string_value(json_object_get(failed, all[i])), over);
    assert_string_equal(json_string_value(json_object_get(failed, "n-t4-0")),
                        "tenant team-a: no GPUQuota for T4");
    json_decref(r);
    r = h_extender(&d, "prioritize", pod, all, 3);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(r, 0), "Score")), 0);
    json_decref(r);
    r = h_extender(&d, "bind", pod, all, 1);
    assert_non_null(strstr(json_string_value(json_object_get(r, "Error")), over));
    json_decref(r);

    /* Within the quota again, the same pod passes and binds: filter, finding no node for it,
     * handed it to the scheduler (nominated), which placed it as the quota let it, so filter
     * now offers it that node alone (an A100, not the T4s). */
    struct answer a;
    assert_int_equal(h_call(&d, "DELETE", "/v1/pods/team-a/a1", TOKEN_A, NULL, &a), 0);
    h_answer_free(&a);
    r = h_extender(&d, "filter", pod, all, 3);
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 1);
    char node[64];
    snprintf(node, sizeof(node), "%s",
             json_string_value(json_array_get(json_object_get(r, "NodeNames"), 0)));
    assert_non_null(strstr(node, "n-a100-"));
    json_decref(r);
    const char *held[] = {node};
    r = h_extender(&d, "bind", pod, held, 1);
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    json_decref(r);
    expect_state(&d, "team-a", "x1", "running", NULL);
    free(pod);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A node without cards has no GPU model: a pod asking cards fails there as short of cards, never
 * as over the quota of a model (the one a node of no cards is numbered with), on the extender's
 * filter and on the scheduler's own reason. */
static void test_gpuquota_cpu_node(void **state)
{
    (void)state;
    struct daemon d;
    static const char *const nodes[] = {"n-cpu-0", "n-t4-0"};
    start(&d, policy);
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a1", 4, 0), 201));
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a2", 4, 0), 201));
    char *pod = h_pod("team-a", "c1", 2, 0);
    json_t *r = h_extender(&d, "filter", pod, nodes, 2);
    assert_non_null(r);
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    const json_t *failed = json_object_get(r, "FailedNodes");
    const char *cpu = json_string_value(json_object_get(failed, "n-cpu-0"));
    assert_non_null(cpu);
    assert_string_equal(cpu, "Insufficient nvidia.com/gpu");
    assert_string_equal(json_string_value(json_object_get(failed, "n-t4-0")),
                        "tenant team-a: no GPUQuota for T4");
    json_decref(r);
    free(pod);
    /* The scheduler's reason for a pod that fits nowhere names no model the cluster lacks. */
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a3", 2, 0), 201));
    char st[16], reason[512];
    pod_state(&d, "team-a", "a3", st, reason, sizeof(reason));
    assert_string_equal(st, "pending");
    if (strstr(reason, "P100"))
        fail_msg("reason: %s", reason);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_resourcequota(void **state)
{
    (void)state;
    struct daemon d;
    char pol[2048];
    snprintf(pol, sizeof(pol),
             "%s---\napiVersion: v1\nkind: ResourceQuota\n"
             "metadata: {name: cores, namespace: team-b}\nspec:\n  hard: {requests.cpu: 1500m}\n",
             policy);
    start(&d, pol);
    json_decref(h_submit(&d, NULL, h_pod("team-b", "b1", 2, 0), 201));
    json_decref(h_submit(&d, NULL, h_pod("team-b", "b2", 1, 0), 201));
    expect_state(&d, "team-b", "b1", "running", NULL);
    expect_state(&d, "team-b", "b2", "pending",
                 "namespace team-b: requests.nvidia.com/gpu 2+1 > 2 (ResourceQuota gpus)");
    /* b3 asks no card, but a second core past 1500m: cpu written as Kubernetes writes it, not
     * in milli-cores (1000+1000 > 1500) */
    json_decref(h_submit(&d, NULL, h_pod("team-b", "b3", 0, 0), 201));
    expect_state(&d, "team-b", "b3", "pending",
                 "namespace team-b: requests.cpu 1+1 > 1500m (ResourceQuota cores)");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A namespace LimitRange (seed 004 §3.1's shape), as Kubernetes' LimitRanger admits pods: a
 * container that omits memory gets defaultRequest 4Gi; one past max, below min or with a limit
 * past maxLimitRequestRatio times its request is refused with a 400 naming the field, and through
 * the extender filter passes no node, saying why. */
static void test_limit_range(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    start(&d, "apiVersion: v1\nkind: LimitRange\nmetadata: {name: gpu-limits, namespace: team-a}\n"
              "spec:\n  limits:\n  - type: Container\n"
              "    max: {nvidia.com/gpu: 2, memory: 32Gi, cpu: 2500m}\n"
              "    min: {nvidia.com/gpu: 0, memory: 1Gi}\n"
              "    default: {nvidia.com/gpu: 0, memory: 8Gi}\n"
              "    defaultRequest: {nvidia.com/gpu: 0, memory: 4Gi}\n"
              "    maxLimitRequestRatio: {memory: 2}\n");
    char *text = h_pod("team-a", "plain", 1, 0);
    json_t *pod = json_loads(text, 0, NULL);
    free(text);
    json_t *lim = json_object_get(
        json_object_get(
            json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0),
            "resources"),
        "limits");
    json_object_del(lim, "memory");
    char *body = json_dumps(pod, JSON_COMPACT);
    json_t *got = h_submit(&d, TOKEN_A, body, 201);
    assert_int_equal(json_integer_value(json_object_get(got, "memory_mib")), 4096);
    json_decref(got);
    json_object_set_new(lim, "memory", json_string("64Gi"));
    post_refused(&d, pod, "fat", "spec.containers[0].resources.limits.memory",
                 "LimitRange team-a/gpu-limits: memory 64Gi > max 32Gi per Container");
    /* a request within max does not make up for a limit past it: a max bounds the limit */
    json_t *res = json_object_get(
        json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0),
        "resources");
    json_object_set_new(res, "requests", json_pack("{s:s}", "memory", "16Gi"));
    post_refused(&d, pod, "loose-limit", "spec.containers[0].resources.limits.memory",
                 "LimitRange team-a/gpu-limits: memory 64Gi > max 32Gi per Container");
    json_object_del(res, "requests");
    /* quantities as Kubernetes writes them: 3 cores, not 3000m */
    json_object_set_new(lim, "memory", json_string("8Gi"));
    json_object_set_new(lim, "cpu", json_string("3"));
    post_refused(&d, pod, "wide", "spec.containers[0].resources.limits.cpu",
                 "LimitRange team-a/gpu-limits: cpu 3 > max 2500m per Container");
    json_object_set_new(lim, "cpu", json_string("1"));
    /* limit 4Gi over a request of 1Gi: past maxLimitRequestRatio 2 */
    json_object_set_new(lim, "memory", json_string("4Gi"));
    json_object_set_new(
        json_object_get(
            json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0),
            "resources"),
        "requests", json_pack("{s:s}", "memory", "1Gi"));
    json_object_set_new(json_object_get(pod, "metadata"), "name", json_string("loose"));
    body = json_dumps(pod, JSON_COMPACT);
    assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_A, body, &a), 0);
    static const char loose[] = "LimitRange team-a/gpu-limits: memory max limit to request ratio "
                                "per Container is 2, but provided ratio is 4.000000";
    refused(&a, "spec.containers[0].resources.limits.memory", loose);
    static const char *const one[] = {"n-a100-0"};
    json_t *f = h_extender(&d, "filter", body, one, 1);
    free(body);
    assert_non_null(strstr(
        json_string_value(json_object_get(json_object_get(f, "FailedNodes"), "n-a100-0")), loose));
    json_decref(f);
    json_decref(pod);
    post(&d, "team-a", "big", 3, &a);
    refused(&a, "spec.containers[0].resources.limits.nvidia.com/gpu",
            "LimitRange team-a/gpu-limits: nvidia.com/gpu 3 > max 2 per Container");
    static const char *const all[] = {"n-a100-0", "n-a100-1", "n-t4-0"};
    char *big = h_pod("team-a", "big", 3, 0);
    json_t *r = h_extender(&d, "filter", big, all, 3);
    free(big);
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    for (size_t i = 0; i < 3; i++)
        assert_non_null(
            strstr(json_string_value(json_object_get(json_object_get(r, "FailedNodes"), all[i])),
                   "LimitRange team-a/gpu-limits: nvidia.com/gpu 3 > max 2 per Container"));
    json_decref(r);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A pod of @n containers in team-a, each asking one card, @mem_limit of memory and @mem_request
 * ("" none: the limit is the request), as POST /v1/pods takes it. */
static char *containers_pod(const char *name, int n, const char *mem_limit, const char *mem_request)
{
    json_t *cs = json_array();
    for (int i = 0; i < n; i++) {
        char cname[16];
        snprintf(cname, sizeof(cname), "c%d", i);
        json_t *res = json_pack("{s:{s:i, s:s, s:s}}", "limits", "nvidia.com/gpu", 1, "cpu", "1",
                                "memory", mem_limit);
        if (*mem_request)
            json_object_set_new(res, "requests", json_pack("{s:s}", "memory", mem_request));
        json_array_append_new(cs, json_pack("{s:s, s:o}", "name", cname, "resources", res));
    }
    json_t *pod =
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:o}}", "apiVersion", "v1", "kind", "Pod",
                  "metadata", "name", name, "namespace", "team-a", "spec", "containers", cs);
    char *body = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    return body;
}

/* A LimitRange of type Pod bounds the sums of a pod's containers, as LimitRanger does: two
 * one-card containers pass a max of 2 cards per Pod, three are refused with a 400 naming the
 * field, and so are two containers whose memory limits add up past the Pod's max, or whose
 * limits are twice their requests where the Pod's ratio allows 1.5. */
static void test_limit_range_pod(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    start(&d, "apiVersion: v1\nkind: LimitRange\nmetadata: {name: pod-limits, namespace: team-a}\n"
              "spec:\n  limits:\n  - type: Pod\n"
              "    max: {nvidia.com/gpu: 2, memory: 8Gi}\n"
              "    maxLimitRequestRatio: {memory: 1500m}\n");
    char *body = containers_pod("pair", 2, "2Gi", "");
    json_decref(h_submit(&d, TOKEN_A, body, 201)); /* it frees the body */
    expect_state(&d, "team-a", "pair", "running", NULL);
    body = containers_pod("trio", 3, "1Gi", "");
    assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_A, body, &a), 0);
    free(body);
    refused(&a, "spec.containers[].resources.limits.nvidia.com/gpu",
            "LimitRange team-a/pod-limits: nvidia.com/gpu 3 > max 2 per Pod");
    body = containers_pod("roomy", 2, "6Gi", "");
    assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_A, body, &a), 0);
    free(body);
    refused(&a, "spec.containers[].resources.limits.memory",
            "LimitRange team-a/pod-limits: memory 12Gi > max 8Gi per Pod");
    body = containers_pod("bursty", 2, "2Gi", "1Gi");
    assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_A, body, &a), 0);
    refused(&a, "spec.containers[].resources.limits.memory",
            "LimitRange team-a/pod-limits: memory max limit to request ratio per Pod is 1500m, but "
            "provided ratio is 2.000000");
    static const char *const one[] = {"n-a100-1"};
    json_t *f = h_extender(&d, "filter", body, one, 1);
    free(body);
    assert_non_null(
        strstr(json_string_value(json_object_get(json_object_get(f, "FailedNodes"), "n-a100-1")),
               "memory max limit to request ratio per Pod is 1500m"));
    json_decref(f);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_pods_per_user(void **state)
{
    (void)state;
    struct daemon d;
    start(&d, "kind: GPUQuota\n"
              "metadata: {name: q, namespace: team-a}\n"
              "spec:\n"
              "  tenant: team-a\n"
              "  quotas: {a100-80gb: {total: 16, dedicated: 16, shared: 0}}\n"
              "  limits: {maxPodsPerUser: 2}\n");
    json_decref(h_submit(&d, NULL, h_pod("team-a", "u1", 1, 0),
                         201)); /* h_pod() labels each pod user: u1 */
    json_decref(h_submit(&d, NULL, h_pod("team-a", "u2", 1, 0), 201));
    json_decref(h_submit(&d, NULL, h_pod("team-a", "u3", 1, 0), 201));
    expect_state(&d, "team-a", "u2", "running", NULL);
    expect_state(&d, "team-a", "u3", "pending",
                 "tenant team-a: user u1 has 2 pods running (maxPodsPerUser 2)");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void wait_log(const struct daemon *d, const char *needle)
{
    for (int i = 0; i < 3000 && !h_log_has(d, needle); i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    if (!h_log_has(d, needle))
        fail_msg("the log lacks: %s", needle);
}

static void test_bad_policy(void **state)
{
    (void)state;
    struct daemon d;
    char want[256];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_policy(&d, "kind: GPUQuota\n"
                                  "metadata: {name: q}\n"
                                  "spec:\n"
                                  "  tenant: team-z\n"
                                  "  quotas: {a100-80gb: {total: 1, dedicated: 1, shared: 0}}\n"),
                     0);
    assert_int_equal(h_start(&d), -1); /* exits at once: a tenant the DaemonConfig lacks */
    snprintf(want, sizeof(want),
             "%s:4:11: GPUQuota: spec.tenant is not a DaemonConfig tenant: team-z", d.policy);
    assert_true(h_log_has(&d, want));

    /* a second DaemonConfig, or a Simulation, in a policy file would be read and do nothing */
    assert_int_equal(h_policy(&d, "kind: DaemonConfig\ntenants: []\n"), 0);
    assert_int_equal(h_start(&d), -1);
    snprintf(want, sizeof(want), "%s:1:1: DaemonConfig in a policy file", d.policy);
    assert_true(h_log_has(&d, want));
    assert_int_equal(h_policy(&d, "apiVersion: sim.gpusched.io/v1alpha1\nkind: Simulation\n"
                                  "metadata: {name: s}\n"),
                     0);
    assert_int_equal(h_start(&d), -1);
    snprintf(want, sizeof(want), "%s:1:1: Simulation in a config file", d.policy);
    assert_true(h_log_has(&d, want));

    /* At SIGHUP a bad policy file is refused and the quota in force stays. */
    assert_int_equal(h_policy(&d, policy), 0);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(h_policy(&d, "kind: GPUQuota\nmetadata: {name: q}\n"
                                  "spec: {tenant: team-a, quotas: {a100-80gb: {total: x}}}\n"),
                     0);
    kill(d.pid, SIGHUP);
    snprintf(want, sizeof(want), "%s:3:", d.policy);
    wait_log(&d, want);
    assert_true(h_log_has(&d, "config reload refused: the one in force stays"));
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a1", 4, 0), 201));
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a2", 4, 0), 201));
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a3", 1, 0), 201));
    expect_state(&d, "team-a", "a3", "pending", over);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A policy that would refuse what the daemon holds — a running pod past a lowered
 * maxGPUsPerPod, a Queue a pod or PodGroup names — is refused at SIGHUP and at a start alike:
 * held back as pending, the running pod's cards went to another pod while it ran on them, and a
 * pod of a deleted Queue ran in `default` under an annotation naming the other. */
static void test_policy_keeps_held(void **state)
{
    (void)state;
    struct daemon d;
    static const char queue[] = "---\n"
                                "apiVersion: scheduling.volcano.sh/v1beta1\n"
                                "kind: Queue\n"
                                "metadata: {name: qb}\n"
                                "spec: {weight: 1}\n";
    char both[2048], lowered[2048], want[256];
    snprintf(both, sizeof(both), "%s%s", policy, queue);
    snprintf(lowered, sizeof(lowered), "%s", both);
    memcpy(strstr(lowered, "maxGPUsPerPod: 4"), "maxGPUsPerPod: 2", 16);
    start(&d, both);
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a4", 4, 0), 201));
    json_decref(h_submit(
        &d, NULL, h_pod_annotated("team-b", "b1", 1, 0, "scheduling.volcano.sh/queue-name", "qb"),
        201));
    expect_state(&d, "team-a", "a4", "running", NULL);
    assert_int_equal(h_policy(&d, lowered), 0);
    kill(d.pid, SIGHUP);
    wait_log(&d, "config reload refused");
    snprintf(want, sizeof(want), "pod team-a/a4 runs on node ");
    assert_true(h_log_has(&d, want));
    assert_true(h_log_has(&d, "maxGPUsPerPod 2"));
    assert_int_equal(h_policy(&d, policy), 0); /* without Queue qb */
    kill(d.pid, SIGHUP);
    wait_log(&d, "Queue qb, which pod team-b/b1 names, would be gone");
    expect_state(&d, "team-a", "a4", "running", NULL);
    /* a4 still holds its 4 cards of team-a's 8: 4 more fit */
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a5", 4, 0), 201));
    expect_state(&d, "team-a", "a5", "running", NULL);
    assert_int_equal(h_stop(&d), 0);
    /* a start under either policy is refused, naming the pod and the files (the Queue's: the
     * policy file), each said by the start itself (the log emptied first); under the old one
     * all is back */
    assert_int_equal(h_policy(&d, lowered), 0);
    assert_int_equal(h_write(d.log, ""), 0);
    assert_int_equal(h_start(&d), -1);
    snprintf(want, sizeof(want), "%s, %s: pod team-a/a4 runs on node ", d.config, d.policy);
    assert_true(h_log_has(&d, want));
    assert_int_equal(h_policy(&d, policy), 0);
    assert_int_equal(h_write(d.log, ""), 0);
    assert_int_equal(h_start(&d), -1);
    snprintf(want, sizeof(want), "%s: Queue qb, which pod team-b/b1 names, would be gone",
             d.policy);
    assert_true(h_log_has(&d, want));
    assert_int_equal(h_policy(&d, both), 0);
    assert_int_equal(h_start(&d), 0);
    expect_state(&d, "team-a", "a4", "running", NULL);
    expect_state(&d, "team-b", "b1", "running", NULL);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A pending pod a policy holds back (maxGPUsPerPod lowered below what it asks), reloaded and
 * across a restart, is counted pending in its queue, as GET /v1/status counts it: after a
 * restart it had no queue and was in none. */
static void test_held_back_counted(void **state)
{
    (void)state;
    struct daemon d;
    char lowered[2048];
    snprintf(lowered, sizeof(lowered), "%s", policy);
    memcpy(strstr(lowered, "maxGPUsPerPod: 4"), "maxGPUsPerPod: 2", 16);
    start(&d, policy);
    for (int i = 0; i < 4; i++) { /* team-a's 8 cards */
        char name[8];
        snprintf(name, sizeof(name), "r%d", i);
        json_decref(h_submit(&d, NULL, h_pod("team-a", name, 2, 0), 201));
    }
    json_decref(h_submit(&d, NULL, h_pod("team-a", "w4", 4, 0), 201));
    expect_state(&d, "team-a", "w4", "pending", NULL);
    assert_int_equal(h_policy(&d, lowered), 0);
    assert_int_equal(h_reload(&d), 0);
    expect_state(&d, "team-a", "w4", "pending", "maxGPUsPerPod 2");
    assert_int_equal(h_stop(&d), 0); /* a start reads it anew: the scheduler never gives one */
    assert_int_equal(h_start(&d), 0);
    expect_state(&d, "team-a", "w4", "pending", "maxGPUsPerPod 2");
    struct answer a;
    h_expect(&d, "GET", "/v1/queues/default", TOKEN_ADMIN, NULL, 200, &a);
    assert_int_equal(json_integer_value(json_object_get(a.json, "pods_pending")), 1);
    assert_int_equal(json_integer_value(json_object_get(a.json, "pods_running")), 4);
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/pods/team-a/w4", TOKEN_ADMIN, NULL, 200, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "queue")), "default");
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* The node pod @ns/@name runs on. */
static void node_of(const struct daemon *d, const char *ns, const char *name, char *node)
{
    struct answer a;
    char path[128];
    snprintf(path, sizeof(path), "/v1/pods/%s/%s", ns, name);
    h_expect(d, "GET", path, TOKEN_ADMIN, NULL, 200, &a);
    const char *n = json_string_value(json_object_get(a.json, "node"));
    assert_non_null(n);
    snprintf(node, 64, "%s", n);
    h_answer_free(&a);
}

/* Where team-b's one-card pod goes after team-a's, with the policy file @pol: 1 on team-a's
 * node, 0 on another. */
static int joins_team_a(const char *pol)
{
    struct daemon d;
    char na[64], nb[64];
    start(&d, pol);
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a1", 1, 0), 201));
    json_decref(h_submit(&d, NULL, h_pod("team-b", "b1", 1, 0), 201));
    node_of(&d, "team-a", "a1", na);
    node_of(&d, "team-b", "b1", nb);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
    return strcmp(na, nb) == 0;
}

#define KSC                                                                                        \
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"    \
    "  - schedulerName: gpu-scheduler\n    plugins:\n      score:\n        enabled:\n"

/*
 * A KubeSchedulerConfiguration among the policy files sets the score plugins' weights, as in
 * `gpusched simulate --scenario`: the seed's keep team-b off team-a's node (FairnessScore);
 * GPUBinPacking 50 puts it there. A weight for a plugin that is not built stops the start,
 * naming file:line:col.
 */
static void test_score_weights(void **state)
{
    (void)state;
    assert_int_equal(joins_team_a(KSC "          - {name: FairnessScore, weight: 4}\n"), 0);
    assert_int_equal(joins_team_a(KSC "          - {name: GPUBinPacking, weight: 50}\n"), 1);
    struct daemon d;
    char want[256];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_policy(&d, KSC "          - {name: FairnesScore, weight: 4}\n"), 0);
    assert_int_equal(h_start(&d), -1);
    snprintf(want, sizeof(want), "%s:8:20: plugin ", d.policy);
    assert_true(h_log_has(&d, want));
    assert_true(h_log_has(&d, "FairnesScore\\\" is not a score plugin of the multi-tenant"));
    h_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpuquota),          cmocka_unit_test(test_gpuquota_through_extender),
        cmocka_unit_test(test_gpuquota_cpu_node), cmocka_unit_test(test_resourcequota),
        cmocka_unit_test(test_limit_range),       cmocka_unit_test(test_limit_range_pod),
        cmocka_unit_test(test_pods_per_user),     cmocka_unit_test(test_bad_policy),
        cmocka_unit_test(test_score_weights),     cmocka_unit_test(test_policy_keeps_held),
        cmocka_unit_test(test_held_back_counted),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
