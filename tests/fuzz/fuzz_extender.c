/*
 * Fuzz target: the scheduler extender's arguments — ExtenderArgs (filter, prioritize: the fast
 * NodeNames reader and the whole-tree reader) and ExtenderPreemptionArgs (preempt) — against a
 * real daemon state: four nodes, a GPUQuota, MIG allowed on the A100s, and six running pods
 * (UIDs uid-0..uid-5) for preempt to weigh. The input's first byte picks the verb; the rest is
 * the body. bind is left out: it stores pods, and its arguments are three strings.
 * Checked beyond not crashing: every answer is a status with a body, 200 bodies are JSON.
 */
#include "fuzz.h"

#include "config.h"
#include "extender.h"
#include "inventory.h"
#include "podspec.h"
#include "quota.h"
#include "server.h"
#include "state.h"
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct gsd_state st;
static char dir[64];

static const char nodes_csv[] = "sn,cpu_milli,memory_mib,gpu,model\n"
                                "n0,96000,786432,8,A100-SXM4-80GB\n"
                                "n1,96000,786432,8,A100-SXM4-80GB\n"
                                "n2,64000,262144,4,T4\n"
                                "n3,32000,131072,0,\n";
static const char config[] = "apiVersion: gpusched.io/v1alpha1\n"
                             "kind: DaemonConfig\n"
                             "tenants:\n"
                             "  - {name: team-a, token: token-a-0123456789abcdef, "
                             "namespaces: [team-a, default]}\n"
                             "  - {name: team-b, token: token-b-0123456789abcdef, "
                             "namespaces: [team-b]}\n";
static const char policy[] = "kind: GPUQuota\n"
                             "metadata: {name: q, namespace: team-a}\n"
                             "spec:\n"
                             "  tenant: team-a\n"
                             "  quotas: {a100-80gb: {total: 12, dedicated: 8, shared: 4}}\n"
                             "---\n"
                             "apiVersion: nvidia.com/v1\n"
                             "kind: GpuClusterPolicy\n"
                             "spec:\n"
                             "  mig: {strategy: mixed}\n"
                             "  devices: [{name: A100-SXM4-80GB, migEnabled: true}]\n";

static void write_file(const char *name, const char *text, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f)) {
        fprintf(stderr, "fuzz_extender: cannot write %s\n", path);
        abort();
    }
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd))
        fprintf(stderr, "fuzz_extender: cannot remove %s\n", dir);
}

/* Six running pods, placed as POST /v1/pods places them, with the UIDs an API server gave them
 * (read as the extender reads a pod: not strictly, since a create may not set a UID). */
static void seed_pods(void)
{
    FUZZ_CHECK(gsd_store_begin(st.store) == 0);
    for (int i = 0; i < 6; i++) {
        char text[512];
        snprintf(text, sizeof(text),
                 "{\"metadata\":{\"name\":\"p%d\",\"namespace\":\"%s\",\"uid\":\"uid-%d\"},"
                 "\"spec\":{\"containers\":[{\"name\":\"m\",\"resources\":{\"limits\":{\"nvidia."
                 "com/gpu\":%d%s}"
                 "}}]}}",
                 i, i % 2 ? "team-b" : "team-a", i, i % 3 ? 2 : 1,
                 i == 3 ? ",\"nvidia.com/gpucores\":30" : "");
        struct gsd_podspec spec;
        struct gsd_ferr e;
        FUZZ_CHECK(gsd_podspec_parse(text, strlen(text), 0, &spec, &e) == 0);
        FUZZ_CHECK(gsd_pod_add(&st, &spec, i % 2 ? "team-b" : "team-a", GSD_SRC_API, -1, &e));
        gsd_podspec_clear(&spec);
    }
    FUZZ_CHECK(gsd_store_commit(st.store) == 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char nodes[96], cfg_path[96], pol_path[96];
    struct gsd_config *cfg = NULL;
    struct gs_cluster *cluster = NULL;
    struct gs_scenario *inv = NULL;
    struct gs_diag d;
    gs_diag_init(&d);
    snprintf(dir, sizeof(dir), "/tmp/gs_fuzz_ext.XXXXXX");
    if (!mkdtemp(dir))
        abort();
    atexit(remove_dir);
    write_file("nodes.csv", nodes_csv, nodes, sizeof(nodes));
    write_file("config.yaml", config, cfg_path, sizeof(cfg_path));
    write_file("policy.yaml", policy, pol_path, sizeof(pol_path));
    const char *pols[1] = {pol_path};
    if (gsd_config_load(cfg_path, &cfg, &d) || gsd_quota_load(cfg, pols, 1, &d) ||
        gsd_inventory_load(nodes, NULL, &cluster, &inv, NULL, &d) ||
        gsd_state_init(&st, cfg, cluster, inv, dir, NULL, &d)) {
        fprintf(stderr, "fuzz_extender: cannot set up: %s\n", d.msg);
        abort();
    }
    seed_pods();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const verbs[3] = {"filter", "prioritize", "preempt"};
    if (size < 1)
        return 0;
    struct gsd_req r;
    memset(&r, 0, sizeof(r));
    r.body = fuzz_str(data + 1, size - 1);
    r.len = size - 1;
    if (!r.body)
        return 0;
    strcpy(r.method, "POST");
    gsd_extender_handle(&st, &r, verbs[data[0] % 3]);
    FUZZ_CHECK(r.status >= 200 && r.status < 600 && r.resp);
    if (r.status == 200) {
        json_t *j = json_loadb(r.resp, r.resp_len, 0, NULL);
        FUZZ_CHECK(j);
        json_decref(j);
    }
    free(r.resp);
    free(r.body);
    return 0;
}
