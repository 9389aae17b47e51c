/*
 * Tests of the scenario loader (gpusched/scenario.h). Run from the source root: the seed
 * manifests and fixtures are read at fixed relative paths; every other input is written to /tmp.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "config/scenario_impl.h"
#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/quantity.h"
#include "gpusched/scenario.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEEDS "tests/data/seed-manifests/"
#define FULL  "tests/data/scenario/full.yaml"
#define WARNS "tests/data/scenario/warnings.yaml"

#define MAX_WARNS 64
#define SIM_HDR   "apiVersion: sim.gpusched.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\n"
#include "diag_capture.h"

/* assert_warned() - some warning holds every one of @needles. */
static void assert_warned(const struct warns *w, const char *const *needles)
{
    for (int i = 0; i < w->n && i < MAX_WARNS; i++) {
        int all = 1;
        for (int k = 0; needles[k] && all; k++)
            all = strstr(w->msg[i], needles[k]) != NULL;
        if (all)
            return;
    }
    print_error("no warning with \"%s\" among %d:\n", needles[0], w->n);
    for (int i = 0; i < w->n && i < MAX_WARNS; i++)
        print_error("  %s\n", w->msg[i]);
    fail();
}

#define ASSERT_WARNED(w, ...) assert_warned(w, (const char *const[]){__VA_ARGS__, NULL})

static struct gs_scenario *new_scenario(void)
{
    struct gs_scenario *s = NULL;
    assert_int_equal(gs_scenario_new(&s), 0);
    assert_non_null(s);
    return s;
}

static void load_ok(struct gs_scenario *s, const char *path, struct gs_diag *d)
{
    int rc = gs_scenario_load(s, path, d);
    if (rc)
        print_error("%s: rc %d: %s\n", path, rc, d->msg);
    assert_int_equal(rc, 0);
}

static void resolve_ok(struct gs_scenario *s, struct gs_diag *d)
{
    int rc = gs_scenario_resolve(s, d);
    if (rc)
        print_error("resolve: rc %d: %s\n", rc, d->msg);
    assert_int_equal(rc, 0);
}

/* A temporary file holding @text; the path lives in a static buffer until the next call. */
static const char *tmp_file(const char *text)
{
    static char path[64];
    snprintf(path, sizeof(path), "/tmp/gs_test_scenario_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len = strlen(text);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
    return path;
}

/* load_text_ok() - @text loads and resolves; @d and @w see it. */
static struct gs_scenario *load_text_ok(const char *text, struct gs_diag *d, struct warns *w)
{
    diag_with(d, w);
    struct gs_scenario *s = new_scenario();
    const char *path = tmp_file(text);
    load_ok(s, path, d);
    unlink(path);
    resolve_ok(s, d);
    return s;
}

static const struct gs_tenant_spec *tenant(const struct gs_scenario *s, const char *name)
{
    for (size_t i = 0; i < s->policy.ntenants; i++)
        if (strcmp(s->policy.tenants[i].name, name) == 0)
            return &s->policy.tenants[i];
    print_error("no tenant %s\n", name);
    fail();
    return NULL;
}

/* --- the seeds --- */

static const char *const seed_files[] = {
    SEEDS "dcgm-servicemonitor.yaml",       SEEDS "gpuquota-team-a.yaml",
    SEEDS "kube-scheduler-config.yaml",     SEEDS "kubeflow-gpu-profiles.yaml",
    SEEDS "mig-cluster-policy.yaml",        SEEDS "tenant-a-resourcequota-limitrange.yaml",
    SEEDS "tenant-gpu-prometheusrule.yaml", SEEDS "topology-gpu-policy.yaml",
    SEEDS "vgpu-class-shared-small.yaml",   SEEDS "volcano-queue-podgroup.yaml",
};

static struct gs_scenario *load_seeds(struct gs_diag *d)
{
    struct gs_scenario *s = new_scenario();
    for (size_t i = 0; i < sizeof(seed_files) / sizeof(seed_files[0]); i++)
        load_ok(s, seed_files[i], d);
    resolve_ok(s, d);
    return s;
}

static void test_seeds_load_each(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(seed_files) / sizeof(seed_files[0]); i++) {
        struct gs_diag d;
        struct warns w;
        struct gs_scenario *s = new_scenario();
        diag_with(&d, &w);
        load_ok(s, seed_files[i], &d);
        resolve_ok(s, &d);
        gs_scenario_free(s);
    }
}

static void test_seed_policy_values(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    diag_with(&d, &w);
    struct gs_scenario *s = load_seeds(&d);
    const struct gs_tier_spec *t = s->policy.tiers;
    assert_true(t[GS_TIER_NVLINK].defined && t[GS_TIER_AZ].defined);
    assert_int_equal(t[GS_TIER_NVLINK].strategy, GS_STRATEGY_COLOCATE);
    assert_int_equal(t[GS_TIER_NVLINK].isolation, GS_ISOLATION_EXCLUSIVE);
    assert_int_equal(t[GS_TIER_NVLINK].max_skew, 0);
    assert_int_equal(t[GS_TIER_PCIE].strategy, GS_STRATEGY_PREFER_COLOCATE);
    assert_int_equal(t[GS_TIER_PCIE].overcommit_milli, 1300);
    assert_int_equal(t[GS_TIER_PCIE].sharing, 1);
    assert_int_equal(t[GS_TIER_NODE].overcommit_milli, 1500);
    assert_int_equal(t[GS_TIER_NODE].max_skew, GS_UNSET);
    assert_int_equal(t[GS_TIER_AZ].isolation, GS_ISOLATION_HARD);
    assert_int_equal(t[GS_TIER_AZ].overcommit_milli, 1000);
    /* 1-based line and column of the nvlink tier's mapping inside the embedded policy.yaml */
    assert_int_equal(t[GS_TIER_NVLINK].src.line, 11);
    assert_int_equal(t[GS_TIER_NVLINK].src.col, 9);

    const struct gs_tenant_spec *a = tenant(s, "team-a");
    assert_true(a->has_quota && !a->in_policy);
    assert_string_equal(a->priority_class, "high");
    assert_int_equal(a->nquotas, 2);
    assert_string_equal(a->quotas[0].key, "a100-80gb");
    assert_int_equal(a->quotas[0].model, gs_catalog_find("A100-SXM4-80GB", -1));
    assert_int_equal(a->quotas[0].total_milli, 16000);
    assert_int_equal(a->quotas[0].dedicated_milli, 8000);
    assert_int_equal(a->quotas[0].shared_milli, 8000);
    assert_int_equal(a->quotas[1].model, gs_catalog_find("H100-80GB", -1));
    assert_int_equal(a->quotas[1].total_milli, 4000);
    assert_int_equal(a->quotas[1].shared_milli, 0);
    assert_int_equal(a->max_gpus_per_pod, 8);
    assert_int_equal(a->max_pods_per_user, 32);
    assert_true(a->topology_awareness && a->gang_scheduling && a->bin_packing);
    assert_int_equal(gs_scenario_tenant_of(s, "team-a"), (int)(a - s->policy.tenants));

    const struct gs_tenant_spec *ta = tenant(s, "tenant-a");
    assert_true(ta->in_policy && !ta->has_quota);
    assert_int_equal(ta->tier, GS_TIER_NVLINK);
    assert_int_equal(ta->gpu_count_milli, 16000);
    assert_int_equal(ta->priority, 100);
    assert_int_equal(tenant(s, "tenant-c")->tier, GS_TIER_NODE);
    assert_int_equal(gs_scenario_tenant_of(s, "tenant-a"), (int)(ta - s->policy.tenants));
    assert_int_equal(gs_scenario_tenant_of(s, "nowhere"), -ENOENT);
    assert_int_equal(s->policy.has_scores, 1);

    /* seed 000 §2.3: memory "2gb" is the 2 GiB frame buffer of vGPU profile quadro-v100-2q */
    assert_int_equal(s->policy.nvgpu_classes, 1);
    const struct gs_vgpu_class_spec *vc = &s->policy.vgpu_classes[0];
    assert_string_equal(vc->name, "shared-gpu-small");
    assert_int_equal(vc->memory_mib, 2048);
    assert_int_equal(vc->cores_pct, 10);
    assert_int_equal(vc->max_clients, 8);
    assert_int_equal(vc->shareable, 1);
    assert_string_equal(vc->src.file, SEEDS "vgpu-class-shared-small.yaml");
    assert_int_equal(vc->src.line, 2);
    gs_scenario_free(s);
}

static void test_seed_kube_values(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    diag_with(&d, &w);
    struct gs_scenario *s = load_seeds(&d);
    assert_int_equal(s->policy.nprofiles, 4);
    assert_string_equal(s->policy.profiles[0].name, "data-loading");
    assert_int_equal(s->policy.profiles[0].gpu_share, 1);
    assert_int_equal(s->policy.profiles[0].max_memory_mib, 8192);
    assert_int_equal(s->policy.profiles[0].overcommit_milli, 2000);
    assert_int_equal(s->policy.profiles[0].priority, 50);
    assert_int_equal(s->policy.profiles[0].preemptible, 1);
    assert_int_equal(s->policy.profiles[2].max_memory_mib, 81920);
    assert_int_equal(s->policy.profiles[2].overcommit_milli, 1000);
    assert_int_equal(s->policy.profiles[3].overcommit_milli, 1300);
    assert_int_equal(s->policy.profiles[3].src.line, 31);

    assert_int_equal(s->policy.nqueues, 1);
    assert_int_equal(s->policy.queues[0].weight, 2);
    assert_int_equal(s->policy.queues[0].cap_gpu_milli, 32000);
    assert_int_equal(s->policy.queues[0].cap_cpu_milli, 320000);
    assert_int_equal(s->policy.queues[0].cap_memory_mib, 4 * 1024 * 1024);
    assert_int_equal(s->policy.queues[0].reclaimable, 1);
    assert_int_equal(s->policy.queues[0].overcommit_milli, 1500);
    assert_int_equal(s->policy.npodgroups, 1);
    assert_string_equal(s->policy.podgroups[0].ns, "kubeflow");
    assert_int_equal(s->policy.podgroups[0].min_member, 1);
    assert_string_equal(s->policy.podgroups[0].queue, "kubeflow-queue");

    assert_int_equal(s->policy.nrquotas, 1);
    assert_int_equal(s->policy.rquotas[0].gpu_milli,
                     4000); /* the tighter of "4" and requests "8" */
    assert_int_equal(s->policy.rquotas[0].nscope_classes, 2);
    assert_string_equal(s->policy.rquotas[0].scope_classes[1], "kubeflow-normal");
    assert_int_equal(s->policy.nlimit_ranges, 1);
    const struct gs_limit_range_spec *r = &s->policy.limit_ranges[0];
    assert_int_equal(r->max_gpu_milli, 2000);
    assert_int_equal(r->min_gpu_milli, 0);
    assert_int_equal(r->max_memory_mib, 32768);
    assert_int_equal(r->min_memory_mib, 1024);
    assert_int_equal(r->default_memory_mib, 8192);
    assert_int_equal(r->default_request_memory_mib, 4096);
    assert_int_equal(r->max_cpu_milli, GS_UNSET);
    gs_scenario_free(s);
}

static void test_seed_warnings(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    diag_with(&d, &w);
    struct gs_scenario *s = load_seeds(&d);
    ASSERT_WARNED(&w, "tenant-a-resourcequota-limitrange.yaml:11:5: ",
                  "limits.nvidia.com/gpu is not enforced by Kubernetes");
    ASSERT_WARNED(&w, "tenant-a-resourcequota-limitrange.yaml:10:5: ", "same quota",
                  "the tighter, nvidia.com/gpu, applies");
    ASSERT_WARNED(&w, "gpuquota-team-a.yaml:8:11: ",
                  "GPUQuota tenant team-a is not in the "
                  "tenants: map");
    ASSERT_WARNED(&w, "topology-gpu-policy.yaml:30:7: ", "tenant tenant-a has no GPUQuota");
    ASSERT_WARNED(&w, "volcano-queue-podgroup.yaml:17:1: ", "PriorityClass \"kubeflow-priority\"");
    ASSERT_WARNED(&w, "volcano-queue-podgroup.yaml:30:9: ", "ConfigMap kubeflow/volcano-gpu-config",
                  "not interpreted");
    ASSERT_WARNED(&w, "dcgm-servicemonitor.yaml:3:7: ", "ServiceMonitor");
    ASSERT_WARNED(&w, "tenant-gpu-prometheusrule.yaml:3:7: ", "PrometheusRule");
    assert_int_equal(d.nwarn, (unsigned)w.n);
    /* The GpuClusterPolicy is read: mixed, A100-80GB with its four listed profiles. */
    assert_true(s->policy.has_mig_policy);
    assert_int_equal(s->policy.mig_policy.strategy, GS_MIG_STRATEGY_MIXED);
    assert_int_equal(s->policy.mig_policy.ndevices, 1);
    assert_true(s->policy.mig_policy.devices[0].mig_enabled);
    assert_int_equal(__builtin_popcount(s->policy.mig_policy.devices[0].allowed), 4);
    gs_scenario_free(s);
}

static void expect_code(const char *text, int code, const char *what);

/* A GpuClusterPolicy inside a scenario stream: read, its errors at the stream's own lines; one a
 * cluster; not inside a List. */
static void test_mig_policy_in_stream(void **state)
{
    (void)state;
    static const char *const head = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: "
                                    "a}\nspec: {containers: [{name: c}]}\n---\n";
    static const char *const policy = "apiVersion: nvidia.com/v1\nkind: GpuClusterPolicy\n"
                                      "metadata: {name: p}\nspec:\n  mig: {strategy: mixed}\n"
                                      "  devices:\n    - name: A100-SXM4-80GB\n"
                                      "      migEnabled: true\n      migProfiles: [%s]\n";
    char text[2048], body[512];
    struct gs_diag d;
    struct warns w;
    snprintf(body, sizeof(body), policy, "1g.10gb, 7g.80gb");
    snprintf(text, sizeof(text), "%s%s---\n%s", head, body,
             "{apiVersion: v1, kind: Pod, metadata: {name: q, namespace: a}, spec: {containers: "
             "[{name: c}]}}\n");
    struct gs_scenario *s = load_text_ok(text, &d, &w);
    assert_true(s->policy.has_mig_policy);
    assert_int_equal(s->npods, 2); /* the document after the policy is read too */
    assert_int_equal(s->policy.mig_policy.devices[0].line, 12);
    gs_scenario_free(s);
    /* A profile the model lacks: named at the scenario's own line and column. */
    snprintf(body, sizeof(body), policy, "1g.10gb, 9g.99gb");
    snprintf(text, sizeof(text), "%s%s", head, body);
    expect_code(text, -EINVAL, ":14:30: A100-SXM4-80GB has no MIG profile \"9g.99gb\"");
    snprintf(body, sizeof(body), policy, "1g.10gb");
    snprintf(text, sizeof(text), "%s---\n%s", body, body);
    expect_code(text, -EINVAL, "a second GpuClusterPolicy");
    snprintf(text, sizeof(text),
             "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: "
             "nvidia.com/v1\n    kind: GpuClusterPolicy\n    spec: {}\n");
    expect_code(text, -EINVAL, "not as an item of a List");
}

/* A ResourceQuota's scopeSelector: its expressions ANDed, as the API server reads them; In
 * with no value refused, as the API server refuses it (it was read as no scope at all). */
static void test_quota_scope_expressions(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    static const char *const rq = "apiVersion: v1\nkind: ResourceQuota\n"
                                  "metadata: {name: rq, namespace: a}\nspec:\n  hard: {pods: 1}\n"
                                  "  scopeSelector:\n    matchExpressions:\n%s";
    char text[512];
    snprintf(text, sizeof(text), rq,
             "    - {scopeName: PriorityClass, operator: In, values: [hi, mid, lo]}\n"
             "    - {scopeName: PriorityClass, operator: In, values: [lo, top, mid]}\n");
    struct gs_scenario *s = load_text_ok(text, &d, &w);
    assert_int_equal(s->policy.rquotas[0].nscope_classes, 2);
    assert_string_equal(s->policy.rquotas[0].scope_classes[0], "mid");
    assert_string_equal(s->policy.rquotas[0].scope_classes[1], "lo");
    gs_scenario_free(s);
    snprintf(text, sizeof(text), rq,
             "    - {scopeName: PriorityClass, operator: In, values: [hi]}\n"
             "    - {scopeName: PriorityClass, operator: In, values: [lo]}\n");
    expect_code(text, -EINVAL, ":9:7: no PriorityClass is in every expression");
    snprintf(text, sizeof(text), rq,
             "    - {scopeName: PriorityClass, operator: In, values: []}\n");
    expect_code(text, -EINVAL,
                ":8:56: scopeSelector.matchExpressions[0].values: at least one value when the "
                "operator is In");
    snprintf(text, sizeof(text), rq, "    - {scopeName: PriorityClass, operator: In}\n");
    expect_code(text, -EINVAL, ":8:7: scopeSelector.matchExpressions[0].values: at least one");
}

/* A label's empty value is valid in Kubernetes: `user: ""` names nobody, as no label does. */
static void test_empty_user_label(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    struct gs_scenario *s = load_text_ok(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: a, labels: {user: \"\", "
        "gpusched.io/workload: \"\"}}\nspec: {containers: [{name: m}]}\n",
        &d, &w);
    assert_int_equal(s->npods, 1);
    assert_string_equal(s->pods[0].user, "");
    assert_string_equal(s->pods[0].workload, "");
    gs_scenario_free(s);
}

/* Settings that cancel each other are said to, where they are written. */
static void test_contradictions_warned(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    struct gs_scenario *s = load_text_ok(
        "apiVersion: nvidia.com/v1\nkind: GpuClusterPolicy\nmetadata: {name: p}\nspec:\n"
        "  mig: {strategy: none}\n  devices:\n    - {name: A100-SXM4-80GB, migEnabled: true}\n"
        "---\napiVersion: sim.gpusched.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\n"
        "spec: {cardModes: {convert: false, minHold: 1h}}\n",
        &d, &w);
    ASSERT_WARNED(&w, ":1:1: ", "strategy none advertises no MIG device");
    ASSERT_WARNED(&w, ":12:45: ", "cardModes.minHold has no effect");
    assert_int_equal(w.n, 2);
    gs_scenario_free(s);
}

/* Dedicated cards of a model that outnumber the cluster's are said to, at each GPUQuota: as
 * Kueue's and Volcano's, the guarantees are not checked against capacity, and they cannot all
 * hold at once. Dedicated cards within the cluster's are not. */
static void test_dedicated_past_the_cluster(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    static const char quotas[] =
        "apiVersion: gpu.example.com/v1\nkind: GPUQuota\nmetadata: {name: q, namespace: a}\n"
        "spec: {quotas: {a100-80gb: {dedicated: 8}}}\n---\n"
        "apiVersion: gpu.example.com/v1\nkind: GPUQuota\nmetadata: {name: q, namespace: b}\n"
        "spec: {quotas: {a100-80gb: {dedicated: 4, shared: 2}}}\n---\n"
        "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n"
        "  nodeTemplates: [{name: t, gpuModel: A100-SXM4-80GB, gpus: 8}]\n";
    char text[2048];
    snprintf(text, sizeof(text), "%s  nodes: [{name: n1, template: t}]\n", quotas);
    struct gs_scenario *s = load_text_ok(text, &d, &w);
    ASSERT_WARNED(&w, ":3:32: ", "GPUQuota tenant a: quotas.a100-80gb.dedicated is 8 of the 12",
                  "A100-SXM4-80GB GPUs the GPUQuotas dedicate, and the cluster has 8");
    ASSERT_WARNED(&w, ":8:32: ", "GPUQuota tenant b: quotas.a100-80gb.dedicated is 4 of the 12");
    assert_int_equal(w.n, 2);
    gs_scenario_free(s);
    snprintf(text, sizeof(text), "%s  nodes: [{name: n1, template: t}, {name: n2, template: t}]\n",
             quotas);
    s = load_text_ok(text, &d, &w);
    assert_int_equal(w.n, 0);
    gs_scenario_free(s);
    /* a model the cluster has none of: said so, not weighed against the others' */
    snprintf(text, sizeof(text),
             "%s---\napiVersion: gpu.example.com/v1\nkind: GPUQuota\nmetadata: {name: q, "
             "namespace: h}\nspec: {quotas: {h100: {dedicated: 4}}}\n",
             "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n"
             "  nodeTemplates: [{name: t, gpuModel: A100-SXM4-80GB, gpus: 8}]\n"
             "  nodes: [{name: n1, template: t}]\n");
    s = load_text_ok(text, &d, &w);
    ASSERT_WARNED(&w, ":10:32: ",
                  "GPUQuota tenant h: quotas.h100.dedicated is 4, and the cluster "
                  "has no H100-SXM5-80GB GPU: none can be given");
    assert_int_equal(w.n, 1);
    gs_scenario_free(s);
}

static void test_warnings(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    diag_with(&d, &w);
    struct gs_scenario *s = new_scenario();
    load_ok(s, WARNS, &d);
    resolve_ok(s, &d);
    ASSERT_WARNED(&w, WARNS ":7:24: ", "total 10 is not dedicated 4 + shared 4");
    ASSERT_WARNED(&w, WARNS ":27:10: ", "limits.nvidia.com/gpu is not enforced");
    ASSERT_WARNED(&w, WARNS ":31:18: ", "ConfigMap team-b/other is not interpreted");
    ASSERT_WARNED(&w, WARNS ":4:32: ", "GPUQuota tenant team-b is not in the tenants: map");
    ASSERT_WARNED(&w, WARNS ":40:7: ", "tenant team-z has no GPUQuota");
    ASSERT_WARNED(&w, WARNS ":18:1: ", "PriorityClass \"ghost\", which is not defined");
    ASSERT_WARNED(&w, WARNS ":10:1: ", "LimitRange team-b/small caps a container at 2 GPUs",
                  "below maxGPUsPerPod 8", "the LimitRange wins");
    ASSERT_WARNED(&w, WARNS ":51:7: ", "kind Service has no bearing on scheduling; skipped");
    ASSERT_WARNED(&w,
                  WARNS ":10:1: ", "LimitRange team-b/small: max nvidia.com/gpu 2 and no default",
                  "every container that asks no nvidia.com/gpu gets 2");
    ASSERT_WARNED(&w, WARNS ":27:96: ",
                  "requests.ephemeral-storage: local ephemeral storage is not simulated");
    assert_int_equal(w.n, 10);
    assert_int_equal(s->policy.rquotas[0].gpu_milli, 6000);
    assert_int_equal(s->policy.rquotas[0].pods, 3); /* count/pods, the tighter, was dropped */
    gs_scenario_free(s);
    /* a near miss of a ConfigMap gpusched reads says which was meant */
    s = load_text_ok("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: topology-gpu-polcy}\n"
                     "data: {a: b}\n",
                     &d, &w);
    assert_int_equal(w.n, 1);
    assert_has(w.msg[0], "(did you mean \"topology-gpu-policy\"?); ignored");
    gs_scenario_free(s);
    /* a gang of fewer pods than its minMember waits to the end */
    s = load_text_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                     "metadata: {name: g, namespace: a}\nspec: {minMember: 3}\n---\n"
                     "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a, annotations: "
                     "{scheduling.k8s.io/group-name: g}}\nspec: {containers: [{name: m}]}\n",
                     &d, &w);
    assert_int_equal(w.n, 1);
    assert_has(w.msg[0], ":1:1: PodGroup a/g has minMember 3 and 1 pods of the scenario");
    gs_scenario_free(s);
    /* minTaskMember, and each member's task from volcano.sh/task-spec (a task min of 0 taken) */
    s = load_text_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                     "metadata: {name: g, namespace: a}\n"
                     "spec: {minMember: 1, minTaskMember: {ps: 1, worker: 0}}\n---\n"
                     "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a, annotations: "
                     "{scheduling.k8s.io/group-name: g, volcano.sh/task-spec: ps}}\n"
                     "spec: {containers: [{name: m}]}\n",
                     &d, &w);
    assert_int_equal(s->policy.podgroups[0].ntasks, 2);
    assert_string_equal(s->policy.podgroups[0].tasks[1].name, "worker");
    assert_int_equal(s->policy.podgroups[0].tasks[0].min, 1);
    assert_int_equal(s->policy.podgroups[0].tasks[1].min, 0);
    assert_string_equal(s->pods[0].task, "ps");
    gs_scenario_free(s);
    /* ... unless its tenant's GPUQuota says gangScheduling: false: its pods start one by one */
    s = load_text_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                     "metadata: {name: g, namespace: a}\nspec: {minMember: 3}\n---\n"
                     "kind: GPUQuota\nmetadata: {name: q, namespace: a}\nspec:\n  tenant: a\n"
                     "  quotas: {a100-80gb: {total: 8}}\n"
                     "  schedulingPolicy: {gangScheduling: false}\n---\n"
                     "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a, annotations: "
                     "{scheduling.k8s.io/group-name: g}}\nspec: {containers: [{name: m}]}\n",
                     &d, &w);
    for (int i = 0; i < w.n; i++)
        assert_null(strstr(w.msg[i], "minMember"));
    gs_scenario_free(s);
    /* an override for a tenant nothing defines applies to no pod */
    s = load_text_ok("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kubeflow-gpu-profiles}\n"
                     "data:\n  profiles.yaml: |\n    profiles: [{name: x, maxMemory: 16Gi}]\n"
                     "    tenantOverrides: {nobody: {x: {maxMemory: 8Gi}}}\n",
                     &d, &w);
    assert_int_equal(w.n, 1);
    assert_has(w.msg[0], ":7:35: tenantOverrides.nobody.x: no document defines tenant nobody");
    gs_scenario_free(s);
}

/* --- a full scenario into exact records --- */

static void check_cluster(const struct gs_scenario *s)
{
    assert_int_equal(s->policy.ntemplates, 2);
    const struct gs_node_template *h = &s->policy.templates[0], *l = &s->policy.templates[1];
    assert_string_equal(h->name, "hgx-a100-80");
    assert_int_equal(h->model, gs_catalog_find("A100-SXM4-80GB", -1));
    assert_int_equal(h->gpus, 8);
    assert_int_equal(h->cpu_milli, 128000);
    assert_int_equal(h->memory_mib, 1048576);
    static const uint8_t pcie[8] = {0, 0, 0, 0, 1, 1, 1, 1}, nv[8] = {0};
    assert_memory_equal(h->pcie_domain, pcie, 8);
    assert_memory_equal(h->nvlink_group, nv, 8);
    assert_int_equal(l->model, gs_catalog_find("L40S", -1));
    assert_int_equal(l->cpu_milli, GS_UNSET);
    uint8_t dp[GS_GPUS_MAX], dn[GS_GPUS_MAX];
    gs_topology_default(l->model, 4, dp, dn);
    assert_memory_equal(l->pcie_domain, dp, 4);
    assert_memory_equal(l->nvlink_group, dn, 4);
    assert_int_equal(s->policy.nnodes, 12);
    assert_string_equal(s->policy.nodes[0].name, "a1-n01");
    assert_string_equal(s->policy.nodes[7].name, "a1-n08");
    assert_string_equal(s->policy.nodes[7].zone, "az-1");
    assert_int_equal(s->policy.nodes[7].template_index, 0);
    assert_string_equal(s->policy.nodes[8].name, "a2-n1");
    assert_string_equal(s->policy.nodes[11].name, "a2-n4");
    assert_int_equal(s->policy.nodes[11].template_index, 1);
}

static void check_policy(const struct gs_scenario *s)
{
    const struct gs_tenant_spec *t = tenant(s, "team-a");
    assert_true(t->has_quota && t->in_policy);
    assert_int_equal(t->tier, GS_TIER_NVLINK);
    assert_int_equal(t->priority, 100);
    assert_int_equal(t->gpu_count_milli, 10000); /* its GPUQuota's dedicated: 8 + 2 */
    assert_int_equal(t->nquotas, 2);
    assert_int_equal(t->quotas[1].model, gs_catalog_find("L40S", -1));
    assert_int_equal(t->quotas[1].total_milli, 2500);
    assert_int_equal(t->quotas[1].shared_milli, 500);
    assert_int_equal(t->bin_packing, 0);
    assert_int_equal(s->policy.tiers[GS_TIER_PCIE].overcommit_milli, 1300);
    assert_int_equal(s->policy.tiers[GS_TIER_NODE].defined, 0);
    assert_int_equal(s->policy.npriority_classes, 1);
    assert_int_equal(s->policy.priority_classes[0].value, 1000);
    assert_int_equal(s->policy.priority_classes[0].never_preempt, 1);
    assert_int_equal(s->policy.queues[0].weight, 3);
    assert_int_equal(s->policy.queues[0].cap_memory_mib, 512 * 1024);
    assert_int_equal(s->policy.queues[0].reclaimable, 0);
    assert_int_equal(s->policy.podgroups[0].min_member, 2);
    assert_true(s->sim.defined);
    assert_int_equal(s->sim.ncompare, 3);
    assert_string_equal(s->sim.compare[2], "full");
    assert_int_equal(s->sim.horizon_us, INT64_C(86400000000));
}

static void check_pods(const struct gs_scenario *s)
{
    assert_int_equal(s->npods, 3);
    const struct gs_pod_spec *p = &s->pods[0], *q = &s->pods[1];
    assert_string_equal(p->ns, "team-a");
    assert_string_equal(p->name, "train-0");
    assert_string_equal(p->user, "user-1");
    assert_string_equal(p->workload, "train");
    assert_string_equal(p->group, "train-job");
    assert_string_equal(p->queue, "training");
    assert_string_equal(p->priority_class, "high");
    assert_int_equal(p->tier, GS_TIER_NVLINK);
    assert_int_equal(p->arrival_us, INT64_C(120000000));
    assert_int_equal(p->duration_us, INT64_C(7200000000));
    assert_int_equal(p->util_pct, 85);
    assert_int_equal(p->checkpoint_us, INT64_C(1800000000));
    assert_int_equal(p->model_mask, 1u << gs_catalog_find("A100-SXM4-80GB", -1));
    assert_int_equal(p->ncontainers, 1);
    assert_int_equal(p->containers[0].gpu, 4);
    assert_int_equal(p->containers[0].gpumem_mib, GS_UNSET);
    assert_int_equal(p->containers[0].cpu_milli, 500);   /* the request wins */
    assert_int_equal(p->containers[0].memory_mib, 1536); /* 1.5Gi */
    assert_int_equal(p->src.line, 66);
    assert_int_equal(q->arrival_us, INT64_C(120000000));
    assert_int_equal(q->duration_us, INT64_C(5400000000));
    assert_int_equal(q->util_pct, GS_UNSET);
    assert_int_equal(q->checkpoint_us, GS_UNSET);
    assert_int_equal(q->tier, GS_TIER_NONE);
    assert_int_equal(q->ncontainers, 2);
    assert_int_equal(q->containers[0].gpu, 2);
    assert_int_equal(q->containers[0].gpumem_mib, 20480);
    assert_int_equal(q->containers[0].gpucores, 30);
    assert_int_equal(q->containers[0].cpu_milli, 2000); /* the limit stands in */
    assert_int_equal(q->containers[0].memory_mib, 65536);
    assert_int_equal(q->containers[1].gpu, GS_UNSET);
    assert_int_equal(q->containers[1].cpu_milli, 1500);
    assert_int_equal(q->containers[1].memory_mib, GS_UNSET);
    const struct gs_pod_spec *m = &s->pods[2]; /* a MIG instance is a pod of its own */
    assert_string_equal(m->name, "notebook-0");
    assert_string_equal(m->containers[0].mig_profile, "2g.20gb");
    assert_int_equal(m->containers[0].gpu, GS_UNSET);
}

static void test_full_scenario(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    diag_with(&d, &w);
    struct gs_scenario *s = new_scenario();
    load_ok(s, FULL, &d);
    resolve_ok(s, &d);
    assert_int_equal(w.n, 0);
    check_cluster(s);
    check_policy(s);
    check_pods(s);
    /* resolving again changes nothing */
    size_t nt = s->policy.ntenants;
    resolve_ok(s, &d);
    assert_int_equal(s->policy.ntenants, nt);
    gs_scenario_free(s);
}

/* gpu-util "0.4" was refused as docs/scenario.md shows it, and "1" read as 1 %: a decimal point
 * makes a fraction, a bare integer or N% a percentage. */
static void test_gpu_util_forms(void **state)
{
    static const struct {
        const char *v;
        int pct;
    } forms[] = {{"0.4", 40}, {".5", 50}, {"1.0", 100}, {"1.", 100}, {"0.05", 5},
                 {"40%", 40}, {"40", 40}, {"1", 1},     {"0", 0}};
    (void)state;
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        char text[512];
        struct gs_diag d;
        struct warns w;
        snprintf(text, sizeof(text),
                 "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nspec:\n"
                 "  nodeTemplates: [{name: t, gpuModel: T4, gpus: 2}]\n  nodes: [{name: "
                 "n1, template: t}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, "
                 "annotations: {sim.gpusched.io/gpu-util: \"%s\"}}\nspec: {containers: "
                 "[{name: m}]}\n",
                 forms[i].v);
        struct gs_scenario *s = load_text_ok(text, &d, &w);
        assert_int_equal(s->pods[0].util_pct, forms[i].pct);
        gs_scenario_free(s);
    }
}

/* --- bad inputs: each names the place --- */

struct bad {
    const char *text;
    int rc;
    const char *where; /* ":LINE:COL: " after the path */
    const char *what;
    int at_resolve;
};

#define POD_HDR  "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\n"
#define POD_META "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: a\n"
#define LR_HDR                                                                                     \
    "apiVersion: v1\nkind: LimitRange\nmetadata: {name: r, namespace: a}\nspec: {limits: [{type: " \
    "Container, maxLimitRequestRatio: "
#define LR_TYPE                                                                                    \
    "apiVersion: v1\nkind: LimitRange\nmetadata: {name: r, namespace: a}\nspec: {limits: [{type: "
#define CL_HDR   "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nspec:\n"
#define VGPU_HDR "apiVersion: gpu.example.com/v1\nkind: VirtualGPUClass\nmetadata: {name: small}\n"
/* A snapshot's running pod, its cards on node n1 at now 2h, with more annotations @a. */
#define RUNNING(a)                                                                                 \
    CL_HDR "  nodeTemplates: [{name: t, gpuModel: T4, gpus: 2}]\n  nodes: [{name: n1, template: "  \
           "t}]\n---\n" SIM_HDR "spec: {now: 2h}\n---\n" POD_META                                  \
           "  annotations:\n    sim.gpusched.io/node: n1\n    sim.gpusched.io/gpus: \"0\"\n" a     \
           "spec: {containers: [{name: m}]}\n"
#define RES(r) POD_HDR "spec:\n  containers:\n  - name: m\n    resources:\n      limits: {" r "}\n"

#define PG_HDR                                                                                     \
    "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: "   \
    "a}\n"

static const struct bad bads[] = {
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: x\n", -EINVAL, ":4:1: ", "YAML error", 0},
    {"apiVersion: v1\nkind: Pod\nmetadata: [a]\n", -EINVAL, ":3:11: ", "metadata must be a mapping",
     0},
    {POD_HDR "spec: {containers: 5}\n", -EINVAL, ":4:20: ", "spec.containers must be a sequence",
     0},
    {POD_HDR "spec: {priorityClassName: [x], containers: []}\n", -EINVAL,
     ":4:27: ", "spec.priorityClassName must be a name", 0},
    {"kind: [Pod]\n", -EINVAL, ":1:7: ", "kind must be a kind name", 0},
    /* a file that says nothing is more likely the wrong file */
    {"# only a comment\n", -EINVAL, ": ", "no YAML document in it (empty, comments only, or", 0},
    {"---\n--- null\n", -EINVAL, ": ", "no YAML document in it (empty, comments only, or", 0},
    {"apiVersion: v1\nmetadata: {name: x}\n", -EINVAL, ":1:1: ", "missing field \"kind\"", 0},
    {RES("nvidia.com/gpu: 8Gx"), -EINVAL,
     ":8:32: ", "limits.nvidia.com/gpu: \"8Gx\" is not a Kubernetes quantity", 0},
    {RES("cpu: \"-1\""), -EINVAL, ":8:21: ", "limits.cpu: \"-1\" must not be negative", 0},
    {RES("memory: 99999999999999999Ei"), -EINVAL, ":8:24: ", "is too large", 0},
    {RES("memory: 12345678901234567890123"), -EINVAL, ":8:24: ", "is too large", 0},
    {RES("nvidia.com/gpu: 1.5"), -EINVAL, ":8:32: ", "not a whole number of GPUs", 0},
    {RES("nvidia.com/gpucores: 101"), -EINVAL, ":8:37: ", "out of range (0..100 percent)", 0},
    {RES("nvidia.com/gpumem: 20Gi"), -EINVAL,
     ":8:35: \"20Gi\": ", "nvidia.com/gpumem is MiB as a plain number, e.g. 20480", 0},
    /* no example of a figure no card holds */
    /* a decimal suffix is a count, as Kubernetes reads it: 20G is far past any card's MiB */
    {RES("nvidia.com/gpumem: 20G"), -EINVAL, ":8:35: \"20G\": ",
     "nvidia.com/gpumem is MiB as a plain number (this is 20000000000 MiB as Kubernetes", 0},
    {RES("nvidia.com/gpumem: 1Ei"), -EINVAL, ":8:35: \"1Ei\": ",
     "nvidia.com/gpumem is MiB as a plain number (this is 1099511627776 MiB, more than ", 0},
    {RES("nvidia.com/mig-9x.1gb: 1"), -EINVAL, ":8:16: ", "is not a MIG profile", 0},
    {RES("nvidia.com/gpumem: 1024"), -EINVAL, ":8:16: ", "needs nvidia.com/gpu", 0},
    {RES("nvidia.com/gpu: 1, nvidia.com/gpumem: 0"), -EINVAL, ":8:35: ", "at least 1 MiB", 0},
    {RES("nvidia.com/gpu: 1, nvidia.com/gpucores: 0"), -EINVAL, ":8:35: ", "asks for nothing", 0},
    {POD_HDR "spec:\n  containers:\n  - name: m\n    resources:\n      requests: {cpu: 2}\n"
             "      limits: {cpu: 1}\n",
     -EINVAL, ":8:18: ", "requests.cpu is above limits.cpu", 0},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: MyPod}\n", -EINVAL,
     ":3:18: ", "metadata.name \"MyPod\": expected a DNS subdomain", 0},
    {"apiVersion: sim.gpusched.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec: "
     "{compare: []}\n",
     -EINVAL, ":4:17: ", "compare: empty; list the ways to run", 0},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {sim.gpusched.io/arrival: "
     "\"1\\e\"}}\n",
     -EINVAL, ":3:60: ", "arrival: \"1\\x1b\" is not a duration", 0},
    {CL_HDR "  nodeTemplates: [{name: t, gpuModel: A100-SXM4-80GB, gpus: 4, nvlinks: [[0, 1, 4]], "
            "nvlinkGroups: [[2, 3]]}]\n",
     -EINVAL, ":4:100: ", "node template t: GPU 0 is NVLinked to GPU 1 but in no NVLink group", 0},
    {CL_HDR "  nodeTemplates: [{name: t, gpuModel: L40S, gpus: 4, nvlinkGroups: [[0, 1]]}]\n",
     -EINVAL, ":4:68: ", "node template t: L40S has no NVLink", 0},
    /* values the API server refuses were accepted without a word */
    {POD_HDR "spec: {restartPolicy: Sometimes, containers: [{name: m}]}\n", -EINVAL,
     ":4:23: ", "spec.restartPolicy must be one of Always, OnFailure, Never, not \"Sometimes\"", 0},
    {POD_HDR "spec: {dnsPolicy: 42, containers: [{name: m}]}\n", -EINVAL,
     ":4:19: ", "spec.dnsPolicy must be a string", 0},
    /* the API server's rules beyond the types */
    {POD_HDR "spec:\n  containers:\n  - name: m\n    env: [{name: \"A=B\", value: x}]\n", -EINVAL,
     ":7:18: ",
     "env[0].name: a valid environment variable name must consist only of printable ASCII", 0},
    {POD_HDR "spec:\n  containers:\n  - name: m\n    env: [{name: A, value: x, valueFrom: "
             "{fieldRef: {fieldPath: metadata.name}}}]\n",
     -EINVAL, ":7:42: ", "env[0].valueFrom: may not be specified when `value` is not empty", 0},
    {POD_HDR "spec:\n  containers:\n  - name: m\n    securityContext: {privileged: true, "
             "allowPrivilegeEscalation: false}\n",
     -EINVAL, ":7:67: ", "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
     0},
    {POD_HDR "spec:\n  containers:\n  - name: m\n    volumeMounts: [{name: nope, mountPath: /x}]\n",
     -EINVAL, ":7:27: ", "spec.containers[0].volumeMounts[0].name: Not found: \"nope\"", 0},
    {POD_HDR "spec:\n  containers: [{name: m}]\n  volumes:\n  - {name: V_1, emptyDir: {}}\n",
     -EINVAL, ":7:12: ", "spec.volumes[0].name: \"V_1\" is not a DNS label", 0},
    {POD_HDR "spec:\n  containers: [{name: m}]\n  volumes:\n  - {name: v, emptyDir: {}}\n"
             "  - {name: v, emptyDir: {}}\n",
     -EINVAL, ":8:12: ", "spec.volumes[1].name: Duplicate value \"v\"", 0},
    {POD_HDR "spec:\n  dnsPolicy: None\n  containers: [{name: m}]\n", -EINVAL,
     ":5:14: ", "must provide `dnsConfig` when `dnsPolicy` is None", 0},
    {POD_HDR "spec: {containers: [{name: m, imagePullPolicy: Sometimes}]}\n", -EINVAL,
     ":4:48: ", "spec.containers[0].imagePullPolicy must be one of Always, IfNotPresent, Never", 0},
    {POD_HDR "spec: {containers: [{name: m, livenessProbe: x}]}\n", -EINVAL,
     ":4:46: ", "spec.containers[0].livenessProbe must be a mapping", 0},
    {POD_HDR "spec: {containers: [{name: m}], ephemeralContainers: [{bogus: 1}]}\n", -EINVAL,
     ":4:56: ", "unknown field \"bogus\" in spec.ephemeralContainers[0]", 0},
    {POD_HDR "spec: {containers: [{name: m}], ephemeralContainers: [{name: d, resources: "
             "{limits: {nvidia.com/gpu: 8}}}]}\n",
     -EINVAL,
     ":4:76: ", "spec.ephemeralContainers[0].resources: an ephemeral container may not have it", 0},
    {POD_HDR "spec: {containers: [{name: m}], ephemeralContainers: [{name: d, restartPolicy: "
             "Always}]}\n",
     -EINVAL, ":4:80: ", "spec.ephemeralContainers[0].restartPolicy: an ephemeral container", 0},
    {POD_HDR "spec: {containers: [{name: {zz: 1}}]}\n", -EINVAL,
     ":4:28: ", "spec.containers[0].name must be a string, not a mapping", 0},
    {POD_HDR "spec: {initContainers: [{name: [i]}], containers: [{name: m}]}\n", -EINVAL,
     ":4:32: ", "spec.initContainers[0].name must be a string", 0},
    {POD_HDR "spec:\n  containers: [{name: m}]\n  volumes:\n    name: data\n    emptyDir: {}\n",
     -EINVAL, ":7:5: ", "spec.volumes must be a sequence, not a mapping", 0},
    {POD_HDR "spec: {containers: [{name: m, readinessProbe: {periodSeconds: 5}}]}\n", -EINVAL,
     ":4:47: ", "readinessProbe: one of exec, grpc, httpGet, tcpSocket is required", 0},
    {POD_HDR "spec: {containers: [{name: m, envFrom: [{configMapRef: {name: a}, secretRef: "
             "{name: b}}]}]}\n",
     -EINVAL, ":4:78: ", "envFrom[0]: configMapRef and secretRef are both given", 0},
    /* nested fields of no effect on placement are typed as the API server types them: a typo
     * or a wrong type there was taken and dropped (a misspelt hostPort slipped its warning) */
    {POD_HDR "spec: {containers: [{name: m, env: [{name: A, vaule: b}]}]}\n", -EINVAL, ":4:47: ",
     "unknown field \"vaule\" in spec.containers[0].env[0] (did you mean \"value\"?)", 0},
    {POD_HDR "spec: {containers: [{name: m, env: [{name: A, value: 8080}]}]}\n", -EINVAL,
     ":4:54: ", "spec.containers[0].env[0].value must be a string, not the integer 8080", 0},
    {POD_HDR "spec: {containers: [{name: m, ports: [{containerPort: 80, hostPrt: 80}]}]}\n",
     -EINVAL, ":4:59: ", "unknown field \"hostPrt\" in spec.containers[0].ports[0] (did you mean",
     0},
    {POD_HDR "spec: {containers: [{name: m, ports: [{name: http}]}]}\n", -EINVAL,
     ":4:39: ", "spec.containers[0].ports[0].containerPort is required", 0},
    {POD_HDR "spec: {containers: [{name: m, command: python}]}\n", -EINVAL,
     ":4:40: ", "spec.containers[0].command must be a sequence", 0},
    {POD_HDR "spec: {containers: [{name: m, args: [--lr, 0.1]}]}\n", -EINVAL,
     ":4:44: ", "spec.containers[0].args[1] must be a string, not the float 0.1", 0},
    {POD_HDR "spec: {terminationGracePeriodSeconds: \"30\", containers: [{name: m}]}\n", -EINVAL,
     ":4:39: ", "spec.terminationGracePeriodSeconds must be an integer", 0},
    {POD_HDR "spec: {containers: [{name: m, livenessProbe: {httpGet: {path: /}}}]}\n", -EINVAL,
     ":4:56: ", "spec.containers[0].livenessProbe.httpGet.port is required", 0},
    {POD_HDR "spec: {containers: [{name: m, readinessProbe: {exec: {command: [a]}, tcpSocket: "
             "{port: 80}}}]}\n",
     -EINVAL, ":4:81: ", "readinessProbe: exec and tcpSocket are both given", 0},
    {POD_HDR "spec: {containers: [{name: m, securityContext: {runAsUser: root}}]}\n", -EINVAL,
     ":4:60: ", "securityContext.runAsUser must be an integer", 0},
    {POD_HDR "spec: {containers: [{name: m, volumeMounts: [{name: v}]}]}\n", -EINVAL,
     ":4:46: ", "spec.containers[0].volumeMounts[0].mountPath is required", 0},
    {POD_HDR "spec:\n  containers: [{name: m}]\n  volumes: [{name: v, persistentVolumeClam: "
             "{claimName: c}}]\n",
     -EINVAL, ":6:23: ",
     "unknown field \"persistentVolumeClam\" in spec.volumes[0] (did you mean "
     "\"persistentVolumeClaim\"?)",
     0},
    {POD_HDR "spec:\n  containers: [{name: m}]\n  volumes: [{name: v, emptyDir: {}, hostPath: "
             "{path: /x}}]\n",
     -EINVAL, ":6:47: ", "spec.volumes[0]: emptyDir and hostPath are both given", 0},
    {POD_HDR "spec:\n  containers: [{name: m}]\n  volumes: [{name: v, emptyDir: {sizeLimit: "
             "lots}}]\n",
     -EINVAL, ":6:45: ", "spec.volumes[0].emptyDir.sizeLimit: \"lots\"", 0},
    {POD_HDR "spec: {securityContext: {sysctls: [{name: a}]}, containers: [{name: m}]}\n", -EINVAL,
     ":4:36: ", "spec.securityContext.sysctls[0].value is required", 0},
    {POD_HDR "spec: {os: {name: macos}, containers: [{name: m}]}\n", -EINVAL,
     ":4:19: ", "spec.os.name must be one of linux, windows", 0},
    /* a port out of range was taken without a word: the API server refuses it */
    {POD_HDR "spec: {containers: [{name: m, ports: [{containerPort: 0}]}]}\n", -EINVAL, ":4:55: ",
     "spec.containers[0].ports[0].containerPort: Invalid value: 0: must be between 1 and 65535, "
     "inclusive",
     0},
    {POD_HDR "spec: {containers: [{name: m, ports: [{containerPort: 70000}]}]}\n", -EINVAL,
     ":4:55: ", "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be", 0},
    {POD_HDR "spec:\n  initContainers: [{name: i, ports: [{containerPort: 80, hostPort: "
             "70000}]}]\n  containers: [{name: m}]\n",
     -EINVAL, ":5:68: ", "spec.initContainers[0].ports[0].hostPort: Invalid value: 70000: must be",
     0},
    {POD_HDR "spec: {containers: [{name: m, ports: [{containerPort: 80, protocol: HTTP}]}]}\n",
     -EINVAL, ":4:69: ",
     "spec.containers[0].ports[0].protocol must be one of TCP, UDP, SCTP, not \"HTTP\"", 0},
    /* a Windows pod was taken, and no node runs Windows */
    {POD_HDR "spec: {os: {name: windows}, containers: [{name: m}]}\n", -EINVAL, ":4:19: ",
     "spec.os.name: windows: every node gpusched models runs Linux, so the pod could never start",
     0},
    /* the API server refuses ephemeral containers in a pod to create */
    {POD_HDR "spec: {containers: [{name: m}], ephemeralContainers: [{name: d, image: busybox}]}\n",
     -EINVAL, ":4:54: ", "spec.ephemeralContainers: Forbidden: cannot be set on create", 0},
    {POD_HDR "spec: {containers: [{name: m}], ephemeralContainers: [{name: d, envv: []}]}\n",
     -EINVAL, ":4:65: ",
     "unknown field \"envv\" in spec.ephemeralContainers[0] (did you mean "
     "\"env\"?)",
     0},
    {RES("hugepages-2Mi: 1Gi"), -EINVAL, ":8:16: ",
     "resource hugepages-2Mi is not modelled: kube-scheduler places such a pod only on a node", 0},
#define UTIL(v)                                                                                    \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {sim.gpusched.io/gpu-util: \"" v  \
    "\"}}\n"
    {UTIL("40.0"), -EINVAL, ":3:61: ", "gpu-util must be a whole percentage 0..100", 0},
    {UTIL("0.333"), -EINVAL, ":3:61: ", "at most two decimals (\"0.4\"), not \"0.333\"", 0},
    {UTIL("1.5"), -EINVAL, ":3:61: ", "or a fraction 0..1", 0},
    {UTIL("0.4%"), -EINVAL, ":3:61: ", "gpu-util must be", 0},
    {UTIL("101"), -EINVAL, ":3:61: ", "gpu-util must be", 0},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: \"a\\eb\"}\n", -EINVAL,
     ":3:18: ", "metadata.name \"a\\x1bb\": expected a DNS subdomain", 0},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: \"a\xe2\x80\xae"
     "b\xe2\x81\xa6\xe2\x80\xa8\"}\n",
     -EINVAL, ":3:18: ", "metadata.name \"a\\u202eb\\u2066\\u2028\": expected a DNS subdomain", 0},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: \"\xc3\xa9\"}\n", -EINVAL,
     ":3:18: ", "metadata.name \"\xc3\xa9\": expected a DNS subdomain", 0},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team_a}\n", -EINVAL,
     ":3:32: ", "metadata.namespace \"team_a\": expected a DNS label", 0},
    {POD_HDR "spec: {containers: [{image: x}]}\n", -EINVAL,
     ":4:21: ", "spec.containers[0].name is required", 0},
    {POD_HDR "spec: {containers: [{name: Main}]}\n", -EINVAL,
     ":4:28: ", "spec.containers[0].name \"Main\": expected a DNS label", 0},
    {POD_HDR "spec: {initContainers: [{name: m}], containers: [{name: m}]}\n", -EINVAL,
     ":4:57: ", "spec.containers[0].name m: spec.initContainers[0] has that name too", 0},
    {POD_HDR "spec:\n  containers:\n  - name: m\n    resources:\n      requests: {nvidia.com/gpu: "
             "1, nvidia.com/gpumem: 1024}\n",
     -EINVAL, ":8:37: ", "requests.nvidia.com/gpumem without limits.nvidia.com/gpumem", 0},
    {"apiVersion: v1\nkind: Pod\nmetadata:\n  name: "
     "ppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
     "ppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
     "ppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
     "ppppppppppppppppppppppppppppppppp\n",
     -EINVAL, ":4:9: ", "metadata.name is 300 bytes long; names are at most 253", 0},
    /* names written by hand (a Queue's) stay at a DNS label's 63 bytes */
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: "
     "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq}\n",
     -EINVAL, ":3:18: ", "metadata.name is 64 bytes long; names are at most 63", 0},
    {POD_META "  annotations: {sim.gpusched.io/arrival: \"120\"}\n", -EINVAL,
     ":6:42: ", "is not a duration", 0},
    {POD_META "  annotations: {sim.gpusched.io/arrival: 120}\n", -EINVAL, ":6:42: ",
     "annotation sim.gpusched.io/arrival must be a string, not the integer \"120\": write a "
     "duration with its unit, \"120s\"",
     0},
    {POD_META "  annotations: {sim.gpusched.io/evictions: x}\n", -EINVAL,
     ":6:44: ", "sim.gpusched.io/evictions must be a count of evictions", 0},
    {POD_META "  annotations: {sim.gpusched.io/charged: maybe}\n", -EINVAL,
     ":6:42: ", "sim.gpusched.io/charged must be dedicated or shared", 0},
    {POD_META "  annotations: {sim.gpusched.io/arrival: 0.0000001s}\n", -EINVAL,
     ":6:42: ", "not a whole number of microseconds", 0},
    {LR_HDR "{cpu: 0.5}}]}\n", -EINVAL,
     ":4:63: ", "maxLimitRequestRatio.cpu: \"0.5\" is out of range", 0},
    /* a card may not be overcommitted: 2 as the limit and 1 as the request gave every pod 2 */
    {"apiVersion: v1\nkind: LimitRange\nmetadata: {name: r, namespace: a}\nspec: {limits: [{type: "
     "Container, default: {nvidia.com/gpu: 2}, defaultRequest: {nvidia.com/gpu: 1}}]}\n",
     -EINVAL, ":4:81: ",
     "limits[0]: default value 2 must equal to defaultRequest value 1 in nvidia.com/gpu", 0},
    {"apiVersion: v1\nkind: LimitRange\nmetadata: {name: r, namespace: a}\nspec: {limits: [{type: "
     "Container, max: {nvidia.com/gpu: 2}, defaultRequest: {nvidia.com/gpu: 1}}]}\n",
     -EINVAL, ":4:77: ",
     "limits[0]: default value 2 (the max, as no default is given) must equal to defaultRequest "
     "value 1 in nvidia.com/gpu",
     0},
    /* Kubernetes' order per resource: min <= defaultRequest <= default <= max */
    {"apiVersion: v1\nkind: LimitRange\nmetadata: {name: r, namespace: a}\nspec: {limits: [{type: "
     "Container, min: {nvidia.com/gpu: 4}, max: {nvidia.com/gpu: 2}}]}\n",
     -EINVAL, ":4:17: ", "limits[0]: min nvidia.com/gpu 4 is more than max 2", 0},
    {"apiVersion: v1\nkind: LimitRange\nmetadata: {name: r, namespace: a}\nspec: {limits: [{type: "
     "Container, defaultRequest: {memory: 1Gi}, min: {memory: 2Gi}}]}\n",
     -EINVAL, ":4:17: ", "limits[0]: min memory 2Gi is more than defaultRequest 1Gi", 0},
    {"apiVersion: v1\nkind: LimitRange\nmetadata: {name: r, namespace: a}\nspec: {limits: [{type: "
     "Container, max: {cpu: 2}, default: {cpu: 2500m}}]}\n",
     -EINVAL, ":4:17: ", "limits[0]: default cpu 2500m is more than max 2", 0},
    {"apiVersion: v1\nkind: LimitRange\nmetadata: {name: r, namespace: a}\nspec: {limits: [{type: "
     "Pod, min: {memory: 8Gi}, max: {memory: 4Gi}}]}\n",
     -EINVAL, ":4:17: ", "limits[0]: min memory 8Gi is more than max 4Gi", 0},
    {LR_HDR "{ephemeral-storage: 2}}]}\n", -EINVAL,
     ":4:58: ", "checks the ratio of nvidia.com/gpu, cpu and memory only", 0},
    {LR_TYPE "PersistentVolumeClaim, max: {storage: 2Gi}}]}\n", -EINVAL, ":4:24: ",
     "limits[0]: type PersistentVolumeClaim bounds the storage of volume claims, and storage is "
     "not scheduled here",
     0},
    {LR_TYPE "Pod, default: {cpu: 1}}]}\n", -EINVAL,
     ":4:38: ", "limits[0].default: may not be specified when type is Pod", 0},
    {LR_TYPE "Pod, max: {cpu: 1}}, {type: Pod}]}\n", -EINVAL,
     ":4:45: ", "a second type: Pod entry in one LimitRange", 0},
    {LR_TYPE "Node}]}\n", -EINVAL, ":4:24: ", "limits[0]: type Node: expected Container or Pod", 0},
    {CL_HDR "  nodes:\n  - {name: \"x[08-01]\", template: t}\n", -EINVAL,
     ":5:12: ", "node name range [08-01] runs backwards", 0},
    {CL_HDR "  nodes:\n  - {name: \"x[1-2]y[3-4]\", template: t}\n", -EINVAL,
     ":5:12: ", "one range", 0},
    {CL_HDR "  nodes:\n  - {name: \"x[1-1234567890]\", template: t}\n", -EINVAL,
     ":5:12: ", "1 to 9 digits", 0},
    {CL_HDR "  nodeTemplates: [{name: t}]\n  nodes:\n  - {name: \"n[1-3]\", template: t}\n"
            "  - {name: n2, template: t}\n",
     -EINVAL, ":7:12: ", "duplicate node name \"n2\"", 0},
    /* a node name gpuschedd and the API server would refuse, as they would */
    {CL_HDR "  nodeTemplates: [{name: t}]\n  nodes:\n  - {name: n_1, template: t}\n", -EINVAL,
     ":6:12: ", "node name n_1 is not a Kubernetes node name (a DNS-1123 subdomain", 0},
    {CL_HDR "  nodeTemplates: [{name: t}]\n  nodes:\n  - {name: \"N[1-2]\", template: t}\n",
     -EINVAL, ":6:12: ", "node name N1 is not a Kubernetes node name", 0},
    {CL_HDR "  nodeTemplates: [{name: t}]\n  nodes:\n  - {name: \"..\", template: t}\n", -EINVAL,
     ":6:12: ", "node name .. is not a Kubernetes node name", 0},
    {CL_HDR "  nodes:\n  - {name: \"n[1-3]\", template: nope}\n", -EINVAL,
     ":5:32: ", "node template \"nope\" is not defined", 1},
    {CL_HDR "  nodeTemplates: [{name: t, gpuModel: Z100, gpus: 2}]\n", -EINVAL,
     ":4:39: ", "gpuModel \"Z100\" is not in the GPU catalog", 0},
    {CL_HDR "  nodeTemplates: [{name: t, gpuModel: A30, gpus: 2, timeSlicing: {replicas: 0}}]\n",
     -EINVAL, ":4:77: ", "timeSlicing.replicas must be in 1..1024", 0},
    {CL_HDR "  nodeTemplates: [{name: t, gpuModel: A30, gpus: 2, timeSlicing: {}}]\n", -EINVAL,
     ":4:66: ", "timeSlicing has no replicas", 0},
    {RES("nvidia.com/gpu: 1, nvidia.com/gpu.shared: 1"), -EINVAL,
     ":8:35: ", "nvidia.com/gpu.shared with nvidia.com/gpu", 0},
    {"apiVersion: sim.gpusched.io/v1alpha1\nkind: Simulation\nspec: {cardModes: {minHold: soon}}\n",
     -EINVAL, ":3:29: ", "cardModes.minHold", 0},
    {SIM_HDR "spec:\n  nodeFailures:\n  - {node: n1, at: 2h, restore: 1h}\n", -EINVAL,
     ":6:33: ", "nodeFailures[0].restore: must come after at", 0},
    {SIM_HDR "spec:\n  nodeFailures:\n  - {node: n1}\n", -EINVAL,
     ":6:5: ", "nodeFailures[0] needs at", 0},
    {SIM_HDR "spec:\n  nodeFailures:\n  - {node: n1, at: soon}\n", -EINVAL,
     ":6:20: ", "nodeFailures[].at", 0},
    {SIM_HDR "spec:\n  nodeFailures:\n  - {at: 1h}\n", -EINVAL,
     ":6:5: ", "nodeFailures[0].node: expected the name of a node", 0},
    {CL_HDR
     "  nodeTemplates: [{name: t, gpuModel: T4, gpus: 2}]\n  nodes: [{name: n1, template: t}]\n"
     "---\n" SIM_HDR "spec:\n  nodeFailures:\n  - {node: n1, at: 1h}\n  - {node: n9, at: 1h}\n",
     -EINVAL, ":13:5: ", "nodeFailures: node \"n9\" is not a node of the Cluster", 1},
    {CL_HDR
     "  nodeTemplates: [{name: t, gpuModel: T4, gpus: 2}]\n  nodes: [{name: n1, template: t}]\n"
     "---\n" SIM_HDR "spec:\n  nodeFailures:\n  - {node: n1, at: 1h, restore: 3h}\n"
     "  - {node: n1, at: 2h}\n",
     -EINVAL, ":13:5: ", "nodeFailures: node n1 is down or held then already (", 1},
    /* the overlap found however far apart the two are, in the file and in time */
    {CL_HDR
     "  nodeTemplates: [{name: t, gpuModel: T4, gpus: 2}]\n"
     "  nodes: [{name: n1, template: t}, {name: n2, template: t}]\n"
     "---\n" SIM_HDR "spec:\n  nodeFailures:\n  - {node: n1, at: 1h, restore: 9h}\n"
     "  - {node: n2, at: 2h}\n  - {node: n1, at: 10h}\n  - {node: n1, at: 3h, restore: 4h}\n",
     -EINVAL, ":15:5: ", "nodeFailures: node n1 is down or held then already (", 1},
    {SIM_HDR "spec:\n  tenants:\n  - {name: t}\n", -EINVAL,
     ":6:5: ", "tenants[0] needs name and namespaces", 0},
    {SIM_HDR "spec:\n  tenants:\n  - {name: t, namespaces: [a b]}\n", -EINVAL,
     ":6:28: ", "namespaces[] \"a b\": expected a DNS label", 0},
    /* tenants and namespaces as gpuschedd and the API server take them: DNS labels */
    {SIM_HDR "spec:\n  tenants:\n  - {name: Team_A, namespaces: [a]}\n", -EINVAL,
     ":6:12: ", "tenants[].name \"Team_A\": expected a DNS label", 0},
    {SIM_HDR "spec:\n  tenants:\n  - {name: t, namespaces: [ML.prod]}\n", -EINVAL,
     ":6:28: ", "namespaces[] \"ML.prod\": expected a DNS label", 0},
    {SIM_HDR "spec:\n  tenants:\n  - {name: t, namespaces: []}\n", -EINVAL,
     ":6:27: ", "tenants[0].namespaces: empty: a tenant owns at least one namespace", 0},
    /* listed twice, the last entry won and the first's namespaces went to tenants of their own */
    {SIM_HDR "spec:\n  tenants:\n  - {name: t, namespaces: [a]}\n  - {name: t, namespaces: [b]}\n",
     -EINVAL, ":7:12: ", "tenant t is listed twice (also at 6:5)", 0},
    {SIM_HDR "spec:\n  tenants:\n  - {name: t, namespaces: [a, a]}\n", -EINVAL,
     ":6:31: ", "namespace a is listed twice (also at 6:28)", 0},
    {SIM_HDR "spec:\n  cardFailures:\n  - {node: n1, at: 1h}\n", -EINVAL,
     ":6:5: ", "cardFailures[0] needs gpu (the card's index on its node)", 0},
    {SIM_HDR "spec:\n  cardFailures:\n  - {node: n1, at: 1h, gpu: 99}\n", -EINVAL,
     ":6:29: ", "cardFailures[].gpu", 0},
    {SIM_HDR "spec:\n  cardFailures:\n  - {node: n1, at: 1h, gpu: 0, xid: many}\n", -EINVAL,
     ":6:37: ", "cardFailures[].xid", 0},
    {CL_HDR
     "  nodeTemplates: [{name: t, gpuModel: T4, gpus: 2}]\n  nodes: [{name: n1, template: t}]\n"
     "---\n" SIM_HDR "spec:\n  cardFailures:\n  - {node: n1, gpu: 2, at: 1h}\n",
     -EINVAL, ":12:5: ", "cardFailures: node n1 has 2 cards, no gpu 2", 1},
    {SIM_HDR "spec:\n  cardHolds:\n  - {node: n1, gpu: 0, at: 1h}\n", -EINVAL,
     ":6:5: ", "cardHolds[0] needs until (when the card is free)", 0},
    {SIM_HDR "spec:\n  cardHolds:\n  - {node: n1, gpu: 0, at: 1h, until: 1h}\n", -EINVAL,
     ":6:39: ", "cardHolds[0].until: must come after at", 0},
    {CL_HDR
     "  nodeTemplates: [{name: t, gpuModel: T4, gpus: 2}]\n  nodes: [{name: n1, template: t}]\n"
     "---\n" SIM_HDR "spec:\n  cardFailures:\n  - {node: n1, gpu: 1, at: 1h}\n"
     "  cardHolds:\n  - {node: n1, gpu: 1, at: 1h, until: 90m}\n",
     -EINVAL, ":14:5: ", "cardHolds: a card of node n1 is down or held then already (", 1},
    {SIM_HDR "spec:\n  cardModes:\n    cards:\n    - {node: n1, gpu: 0, since: 1h}\n", -EINVAL,
     ":7:7: ", "cardModes.cards[0] needs mode", 0},
    {SIM_HDR "spec:\n  cardModes:\n    cards:\n    - {node: n1, gpu: 0, mode: free, since: 1h}\n",
     -EINVAL, ":7:32: ", "cardModes.cards[].mode", 0},
    {CL_HDR
     "  nodeTemplates: [{name: t, gpuModel: T4, gpus: 2}]\n  nodes: [{name: n1, template: t}]\n"
     "---\n" SIM_HDR "spec:\n  now: 1h\n  cardModes:\n    cards:\n"
     "    - {node: n1, gpu: 1, mode: shared, since: 2h}\n",
     -EINVAL, ":14:7: ", "cardModes.cards: since is after now", 1},
    {CL_HDR
     "  nodeTemplates: [{name: t, gpuModel: T4, gpus: 2}]\n  nodes: [{name: n1, template: t}]\n"
     "---\n" SIM_HDR "spec:\n  cardModes:\n    cards:\n"
     "    - {node: n2, gpu: 1, mode: shared, since: 2h}\n",
     -EINVAL, ":13:7: ", "cardModes.cards: node \"n2\" is not a node of the Cluster", 1},
    {RES("nvidia.com/gpu.shared: -1"), -EINVAL, ":8:39: ", "limits.nvidia.com/gpu.shared", 0},
    {CL_HDR "  nodeTemplates: [{name: t, gpuModel: T4, gpus: 4, pcieDomains: [[0,1],[2]]}]\n",
     -EINVAL, ":4:65: ", "pcieDomains: GPU 3 is in none of them", 0},
    {CL_HDR "  nodeTemplates: [{name: t, gpuModel: T4, gpus: 2, nvlinkGroups: [[0,1],[1]]}]\n",
     -EINVAL, ":4:74: ", "nvlinkGroups: GPU 1 is listed twice", 0},
    /* beside the scenario, in /tmp: a name no other program there would use */
    {CL_HDR "  nodeTemplates: [{name: t, gpuModel: T4, gpus: 2, topologyFile: gs-no-such.txt}]\n",
     -EINVAL, ":4:66: ", "gs-no-such.txt: No such file or directory", 0},
    {"apiVersion: gpu.example.com/v1\nkind: GPUQuota\nmetadata: {name: q, namespace: a}\n"
     "spec:\n  quotas:\n    b200x: {total: 1}\n",
     -EINVAL, ":6:5: ", "quotas key \"b200x\" names no GPU model", 0},
    {"apiVersion: gpu.example.com/v1\nkind: GPUQuota\nmetadata: {name: q, namespace: a}\n"
     "spec:\n  quotas:\n    h100: {total: 1}\n    H100-80GB: {total: 2}\n",
     -EINVAL, ":7:5: ", "name the same GPU model", 0},
    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: topology-gpu-policy}\ndata:\n"
     "  policy.yaml: |\n    scheduling:\n      nvlink:\n        strategy: colcate\n",
     -EINVAL, ":8:19: ", "strategy must be one of colocate, prefer-colocate, spread", 0},
    /* the range as the ratio is written, not in the thousandths it is kept in */
    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: topology-gpu-policy}\ndata:\n"
     "  policy.yaml: |\n    scheduling:\n      nvlink: {overcommit: 1000}\n",
     -EINVAL, ":7:28: ", "scheduling.nvlink.overcommit: \"1000\" is out of range (1..100)", 0},
    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kubeflow-gpu-profiles}\ndata:\n"
     "  profiles.yaml: \"profiles:\\n- {name: x, overcommitRatio: 0.5}\\n\"\n",
     -EINVAL, ":5:18: ", "overcommitRatio: \"0.5\" is out of range (1..100)", 0},
    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: topology-gpu-policy}\ndata:\n"
     "  policy.yaml: |\n    scheduling:\n      node:\n        timeSlicing: often\n",
     -EINVAL, ":8:22: ", "timeSlicing must be true or false", 0},
    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: topology-gpu-policy}\ndata:\n"
     "  policy.yaml: |\n    scheduling:\n      node:\n        timeSlicing: true\n",
     -EINVAL, ":8:22: ", "timeSlicing: true needs sharing: true beside it", 0},
    /* read and left without effect, or misread: refused */
    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: topology-gpu-policy}\ndata:\n"
     "  policy.yaml: |\n    scheduling:\n      node: {overcommit: 1.5}\n",
     -EINVAL, ":7:26: ", "overcommit needs sharing: true beside it", 0},
    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kubeflow-gpu-profiles}\ndata:\n"
     "  profiles.yaml: |\n    profiles:\n    - {name: x, maxMemory: 16384}\n",
     -EINVAL, ":7:28: ", "profiles[0].maxMemory: 16384 is bytes; did you mean 16384Mi?", 0},
    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kubeflow-gpu-profiles}\ndata:\n"
     "  profiles.yaml: |\n    profiles:\n    - {name: x, maxMemory: 1.5Ki}\n",
     -EINVAL, ":7:28: ", "profiles[0].maxMemory: \"1.5Ki\" is not a whole number of MiB", 0},
    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kubeflow-gpu-profiles}\ndata:\n"
     "  profiles.yaml: |\n    profiles:\n    - {name: x, maxMemory: 16Gi}\n"
     "    tenantOverrides:\n      t: {y: {maxMemory: 8Gi}}\n",
     -EINVAL, ":9:14: ", "tenantOverrides.t.y: step profile \"y\" is not in profiles", 1},
    {"apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: r, namespace: a}\n"
     "spec: {hard: {requests.nvidia.com/gpumem: 1Gi}}\n",
     -EINVAL, ":4:43: ", "nvidia.com/gpumem is MiB as a plain number, e.g. 1024", 0},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a, annotations: {x.io/a: [1]}}\n",
     -EINVAL, ":3:57: ", "annotation x.io/a must be a string, not a sequence", 0},
    {RES("nvidia.com/mig-1g.10gb: 1, nvidia.com/mig-2g.20gb: 1"), -EINVAL, ":8:43: ",
     "nvidia.com/mig-1g.10gb and nvidia.com/mig-2g.20gb in limits: gpusched places one MIG "
     "profile per container",
     0},
    /* a strategy or maxSkew a tier does not build would be read and do nothing */
    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: topology-gpu-policy}\ndata:\n"
     "  policy.yaml: |\n    scheduling:\n      node: {strategy: colocate}\n",
     -EINVAL, ":7:24: ", "scheduling.node.strategy colocate: this tier is spread", 0},
    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: topology-gpu-policy}\ndata:\n"
     "  policy.yaml: |\n    scheduling:\n      pcie: {maxSkew: 1}\n",
     -EINVAL, ":7:23: ", "scheduling.pcie.maxSkew: read on the nvlink tier only", 0},
    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: topology-gpu-policy}\ndata:\n"
     "  policy.yaml: |\n    tenants:\n      t: {gpuCount: 1x}\n",
     -EINVAL, ":7:21: ", "tenants.t.gpuCount: \"1x\" is not a Kubernetes quantity", 0},
    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: topology-gpu-policy}\ndata:\n"
     "  policy.yaml: |\n    tenants:\n      t: {topology: [\n",
     -EINVAL, ":8:5: ", "YAML error", 0},
    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kubeflow-gpu-profiles}\ndata:\n"
     "  profiles.yaml: \"profiles:\\n- {name: x, overcommitRatio: 1.3333}\\n\"\n",
     -EINVAL, ":5:18: ", "in profiles.yaml at line 2, column 30", 0},
    {POD_META "  annotations: {scheduling.k8s.io/group-name: g}\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":1:1: ", "PodGroup (annotation scheduling.k8s.io/group-name) \"g\" is not defined",
     1},
    /* Volcano's own key names it too */
    {POD_META "  annotations: {scheduling.volcano.sh/group-name: g}\n"
              "spec: {containers: [{name: m}]}\n",
     -EINVAL,
     ":1:1: ", "PodGroup (annotation scheduling.volcano.sh/group-name) \"g\" is not defined", 1},
    /* the coscheduling plugin's label names the PodGroup as the annotation does; the two
     * naming different ones are an error, not one of them taken */
    {POD_META "  labels: {scheduling.x-k8s.io/pod-group: g}\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":1:1: ", "PodGroup (label scheduling.x-k8s.io/pod-group) \"g\" is not defined", 1},
    {POD_META "  labels: {pod-group.scheduling.sigs.k8s.io: g}\n"
              "spec: {containers: [{name: m}]}\n",
     -EINVAL, ":1:1: ", "PodGroup (label pod-group.scheduling.sigs.k8s.io) \"g\" is not defined",
     1},
    {PG_HDR "spec: {minMember: 1}\n---\n" POD_META "  labels: {scheduling.x-k8s.io/pod-group: g}\n"
            "  annotations: {scheduling.k8s.io/group-name: h}\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":12:47: ",
     "scheduling.k8s.io/group-name \"h\": metadata.labels.scheduling.x-k8s.io/pod-group names "
     "PodGroup g: a pod joins one PodGroup",
     0},
    {POD_META "  labels: {scheduling.x-k8s.io/pod-group: G}\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:43: ", "scheduling.x-k8s.io/pod-group \"G\": expected a PodGroup's name", 0},
    {POD_HDR "spec: {priorityClassName: hi, containers: [{name: m}]}\n", -EINVAL,
     ":1:1: ", "PriorityClass (spec.priorityClassName) \"hi\" is not defined", 1},
    /* a PodGroup's missing queue: refused, as Volcano's admission does, members or not; its
     * missing PriorityClass: its members refused, not run at the default priority */
    {PG_HDR "spec: {minMember: 1, queue: nope}\n", -EINVAL,
     ":1:1: ", "PodGroup a/g: spec.queue \"nope\" is not defined", 1},
    {PG_HDR "spec: {minMember: 1, priorityClassName: ghost}\n---\n" POD_META
            "  annotations: {scheduling.k8s.io/group-name: g}\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:1: ",
     "pod a/p: PriorityClass (its PodGroup's spec.priorityClassName) \"ghost\" is not defined", 1},
    {POD_HDR "spec:\n  containers:\n  - name: m\n    resoures: {}\n", -EINVAL, ":7:5: ",
     "unknown field \"resoures\" in spec.containers[0] (did you mean \"resources\"?): refused "
     "rather than ignored",
     0},
    {POD_HDR "spec:\n  containers:\n  - name: m\n    ports: [{containerPort: 80, name: a},\n"
             "      {containerPort: 81, name: a}]\n",
     -EINVAL, ":8:33: ", "spec.containers[0].ports[1].name: Duplicate value: \"a\"", 0},
    {POD_HDR "spec:\n  containers:\n  - name: m\n    ports: [{containerPort: 80, name: Web}]\n",
     -EINVAL, ":7:39: ", "ports[0].name: Invalid value: \"Web\": must be an IANA service name", 0},
    /* a Queue or PriorityClass not defined, with the one most likely meant */
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: serving}\n"
     "spec: {weight: 1}\n---\n" POD_META
     "  annotations: {scheduling.volcano.sh/queue-name: servng}\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:1: ",
     "pod a/p: Queue (annotation scheduling.volcano.sh/queue-name) \"servng\" is not defined (did "
     "you mean \"serving\"?)",
     1},
    /* fields that place nothing still have their types */
    {VGPU_HDR "spec: {memory: 2gb, cores: 10, maxClients: 4, driver: 5}\n", -EINVAL,
     ":4:55: ", "spec.driver must be a string, not the integer 5", 0},
    {VGPU_HDR "spec: {memory: 2gb, cores: 10, maxClients: 4, computeCap: [7]}\n", -EINVAL,
     ":4:59: ", "spec.computeCap: a sequence is not a CUDA compute capability (major.minor", 0},
    {"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: pc}\nvalue: 5\n"
     "description: 5\n",
     -EINVAL, ":5:14: ", "description must be a string, not the integer 5", 0},
    /* what the API server sets is set aside, but typed as it decodes it */
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: p, uid: 5}\n", -EINVAL,
     ":3:26: ", "metadata.uid must be a string, not the integer 5", 0},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: p, ownerReferences: [{kind: Job, name: j}]}\n",
     -EINVAL, ":3:39: ", "metadata.ownerReferences[0].apiVersion is required", 0},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: p, finalizers: [5]}\n", -EINVAL,
     ":3:34: ", "metadata.finalizers[0] must be a string", 0},
    /* a misspelt resource name is refused with the name it most likely meant */
    {POD_HDR "spec:\n  containers:\n  - name: m\n    resources: {limits: {nvidia.com/gpus: 1}}\n",
     -EINVAL, ":7:26: ",
     "resource nvidia.com/gpus is not interpreted (did you mean \"nvidia.com/gpu\"?): refused "
     "rather than ignored",
     0},
    /* HAMi's percentage of the card's memory: refused, naming what is read instead */
    {POD_HDR "spec:\n  containers:\n  - name: m\n    resources: {limits: {nvidia.com/gpu: 1, "
             "nvidia.com/gpumem-percentage: 50}}\n",
     -EINVAL, ":7:45: ",
     "resource nvidia.com/gpumem-percentage is not interpreted (write nvidia.com/gpumem, the "
     "share's MiB): refused rather than ignored",
     0},
    /* Volcano's vGPU device plugin's names: refused, naming the ones read */
    {POD_HDR
     "spec:\n  containers:\n  - name: m\n    resources: {limits: {volcano.sh/vgpu-number: 1}}\n",
     -EINVAL, ":7:26: ",
     "resource volcano.sh/vgpu-number is not interpreted (write nvidia.com/gpu, nvidia.com/gpumem "
     "in MiB and nvidia.com/gpucores in %): refused rather than ignored",
     0},
    {"apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: rq, namespace: a}\n"
     "spec: {hard: {requets.nvidia.com/gpu: 1}}\n",
     -EINVAL, ":4:15: ",
     "quota item requets.nvidia.com/gpu is not interpreted (did you mean "
     "\"requests.nvidia.com/gpu\"?)",
     0},
    /* outside Pods too, an unknown field is an error and a field not modelled is refused */
    {CL_HDR "  nodeTemplates: [{name: t, gpuModel: T4, gpus: 0}]\n", -EINVAL,
     ":4:49: ", "gpus: 0 with gpuModel \"T4\": a node without GPUs has no GPU model", 0},
    {CL_HDR "  nodeTemplates: [{name: t, gpuModel: A100-80G, gpus: 1}]\n", -EINVAL,
     ":4:39: ", "gpuModel \"A100-80G\" is not in the GPU catalog (P100, T4,", 0},
    {CL_HDR "  nodeTemplates: [{name: t, gpuModle: T4, gpus: 2}]\n", -EINVAL,
     ":4:29: ", "unknown field \"gpuModle\" in nodeTemplates[0] (did you mean \"gpuModel\"?)", 0},
    {"apiVersion: gpu.example.com/v1\nkind: GPUQuota\nmetadata: {name: q, namespace: a}\n"
     "spec: {tenant: t, quota: {t4: {total: 1}}}\n",
     -EINVAL, ":4:19: ", "unknown field \"quota\" in GPUQuota spec (did you mean \"quotas\"?)", 0},
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
     "spec: {weight: 1, guarantee: {resource: {nvidia.com/gpu: 1}}}\n",
     -EINVAL, ":4:30: ", "Queue spec.guarantee is not interpreted: refused rather than ignored", 0},
    /* of two, the one written first is named */
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
     "spec: {deserved: {nvidia.com/gpu: 1}, guarantee: {resource: {nvidia.com/gpu: 1}}}\n",
     -EINVAL, ":4:18: ", "Queue spec.deserved is not interpreted: refused rather than ignored", 0},
    /* Volcano's multi-cluster dispatch and its queue type: neither applied, so neither taken */
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
     "spec: {weight: 1, extendClusters: [{name: other, weight: 1}]}\n",
     -EINVAL,
     ":4:35: ", "Queue spec.extendClusters is not interpreted: refused rather than ignored", 0},
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
     "spec:\n  weight: 1\n  type: batch\n",
     -EINVAL, ":6:9: ", "Queue spec.type is not interpreted: refused rather than ignored", 0},
    {"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n", -EINVAL, ":2:7: ",
     "kind Deployment is not expanded into pods by gpusched: write each pod it would create as "
     "a Pod document",
     0},
    {"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\n", -EINVAL,
     ":2:7: ",
     "kind ClusterQueue (Kueue) is not read: write a GPUQuota per tenant and GPU model "
     "(nominalQuota of nvidia.com/gpu as dedicated",
     0},
    /* a List's own keys are checked as a kind's: none skipped, none twice */
    {"apiVersion: v1\nkind: List\nitem: []\n", -EINVAL,
     ":3:1: ", "unknown field \"item\" in List (did you mean \"items\"?)", 0},
    {"apiVersion: v1\nkind: List\nitems: []\nkind: List\n", -EINVAL,
     ":4:1: ", "duplicate field \"kind\" in List", 0},
    /* `kubectl get nodes -o yaml`: the nearest kind, Pod, would mislead */
    {"apiVersion: v1\nkind: Node\nmetadata: {name: n}\n", -EINVAL,
     ":2:7: ", "kind Node is not read: write the nodes as a Cluster's nodeTemplates", 0},
    {"apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: p}\n", -EINVAL, ":2:7: ",
     "kind ClusterPolicy is not read: write the GPU Operator's MIG choice per GPU model as a "
     "GpuClusterPolicy",
     0},
    {"apiVersion: kubeflow.org/v1\nkind: Notebook\nmetadata: {name: nb}\n", -EINVAL,
     ":2:7: ", "kind Notebook is not expanded into pods by gpusched", 0},
    {"apiVersion: v1\nkind: PodGroop\nmetadata: {name: g}\n", -EINVAL,
     ":2:7: ", "kind \"PodGroop\" is not a kind gpusched reads (did you mean \"PodGroup\"?)", 0},
    {"apiVersion: scheduling.k8s.io/v1\nkind: Queue\nmetadata: {name: q}\n", -EINVAL, ":1:13: ",
     "kind Queue of apiVersion \"scheduling.k8s.io/v1\" is not the Queue gpusched reads", 0},
    {"apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: rq, namespace: a}\n"
     "spec: {hard: {requests.example.com/fpga: 1}}\n",
     -EINVAL, ":4:15: ", "quota item requests.example.com/fpga is not interpreted: refused", 0},
    /* a scoped quota read as covering the whole namespace refused pods it does not count */
    {"apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: rq, namespace: a}\n"
     "spec: {hard: {pods: 1}, scopes: [BestEffort]}\n",
     -EINVAL, ":4:33: ", "quota scopes are not interpreted (only a scopeSelector of", 0},
    {"apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: rq, namespace: a}\n"
     "spec:\n  hard: {pods: 1}\n  scopeSelector:\n"
     "    matchExpressions: [{scopeName: Terminating, operator: Exists}]\n",
     -EINVAL, ":7:24: ", "quota scope Terminating Exists is not interpreted (only", 0},
    {POD_HDR "spec:\n  tolerations: [{key: k, operator: Exists, value: v}]\n"
             "  containers: [{name: m}]\n",
     -EINVAL, ":5:51: ", "spec.tolerations[0].value: operator Exists takes no value", 0},
    {POD_HDR "spec:\n  tolerations: [{operator: Equal}]\n  containers: [{name: m}]\n", -EINVAL,
     ":5:28: ", "spec.tolerations[0].operator: an empty key needs operator Exists", 0},
    {POD_HDR "spec:\n  tolerations: [{key: k, effect: NoEvict}]\n  containers: [{name: m}]\n",
     -EINVAL, ":5:34: ", "spec.tolerations[0].effect: NoEvict: expected NoSchedule", 0},
    {POD_HDR "spec:\n  tolerations: [{key: k, effect: NoSchedule, tolerationSeconds: 5}]\n"
             "  containers: [{name: m}]\n",
     -EINVAL, ":5:65: ", "tolerationSeconds: tolerationSeconds needs effect NoExecute", 0},
    {POD_HDR "spec:\n  tolerations: [{key: \"a b\"}]\n  containers: [{name: m}]\n", -EINVAL,
     ":5:23: ", "spec.tolerations[0].key: a b: expected a label key", 0},
    {CL_HDR "  nodeTemplates: [{name: t}]\n  nodes:\n"
            "  - {name: n, template: t, taints: [{key: k, value: v}]}\n",
     -EINVAL, ":6:37: ", "taints[0].effect: (none): expected NoSchedule, PreferNoSchedule or", 0},
    {CL_HDR "  nodeTemplates: [{name: t}]\n  nodes:\n"
            "  - {name: n, template: t, taints: [{key: k, effect: NoSchedule},\n"
            "                                    {key: k, value: v, effect: NoSchedule}]}\n",
     -EINVAL, ":7:37: ", "taints[1]: taint k:NoSchedule is given twice", 0},
    {POD_HDR "spec:\n  schedulingGates: [{name: g}]\n  containers: [{name: m}]\n", -EINVAL,
     ":5:20: ",
     "spec.schedulingGates is not interpreted: a gated pod waits until its gates are removed", 0},
    {POD_HDR "spec:\n  resourceClaims: [{name: gpu, resourceClaimName: c}]\n"
             "  containers: [{name: m}]\n",
     -EINVAL, ":5:19: ", "spec.resourceClaims is not interpreted (Dynamic Resource Allocation)", 0},
    {POD_HDR "spec:\n  volumes: [{name: d, persistentVolumeClaim: {claimName: c}}]\n"
             "  containers: [{name: m}]\n",
     -EINVAL, ":5:46: ",
     "spec.volumes[0].persistentVolumeClaim is not interpreted: kube-scheduler's VolumeBinding "
     "holds a pod to the nodes its claim's PersistentVolume reaches",
     0},
    {POD_HDR "spec:\n  volumes: [{name: s, emptyDir: {}}, {name: d, ephemeral: "
             "{volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce]}}}}]\n"
             "  containers: [{name: m}]\n",
     -EINVAL, ":5:59: ", "spec.volumes[1].ephemeral is not interpreted", 0},
    {POD_HDR "spec:\n  volumes: [{name: d, gcePersistentDisk: {pdName: p}}]\n"
             "  containers: [{name: m}]\n",
     -EINVAL, ":5:42: ",
     "spec.volumes[0].gcePersistentDisk is not interpreted: kube-scheduler counts a disk against "
     "its node's attach limit",
     0},
    {POD_HDR "spec:\n  containers:\n  - name: m\n    resources:\n      claims: [{name: gpu}]\n",
     -EINVAL, ":8:15: ", "resources.claims (Dynamic Resource Allocation) is not interpreted", 0},
    {POD_HDR
     "spec:\n  containers:\n  - name: m\n    ports: [{containerPort: 80, hostPort: 8080}]\n",
     -EINVAL, ":7:43: ", "a host port (hostPort, or a port under spec.hostNetwork)", 0},
    {POD_HDR "spec:\n  hostNetwork: true\n  containers:\n  - name: m\n    ports: [{containerPort: "
             "80}]\n",
     -EINVAL, ":8:13: ", "a host port (hostPort, or a port under spec.hostNetwork)", 0},
    {POD_HDR "spec:\n  overhead: {nvidia.com/gpu: 1}\n  containers: [{name: m}]\n", -EINVAL,
     ":5:14: ", "spec.overhead: nvidia.com/gpu is not a pod overhead (cpu, memory)", 0},
    {POD_HDR "spec:\n  activeDeadlineSeconds: 0\n  containers: [{name: m}]\n", -EINVAL,
     ":5:26: ", "spec.activeDeadlineSeconds must be in 1..4294967295", 0},
    {POD_HDR "spec:\n  preemptionPolicy: Sometimes\n  containers: [{name: m}]\n", -EINVAL,
     ":5:21: ", "spec.preemptionPolicy", 0},
    /* at the field: a pod document is long, and its top says nothing of what is wrong */
    {POD_HDR "spec: {schedulerName: volcano, containers: [{name: m}]}\n", -EINVAL, ":4:23: ",
     "spec.schedulerName volcano names another scheduler: this one is default-scheduler; write "
     "schedulerName: default-scheduler, or load a KubeSchedulerConfiguration whose profile has "
     "schedulerName: volcano",
     1},
    {POD_META "  labels: {bad_: x}\nspec: {containers: [{name: m}]}\n", -EINVAL,
     ":6:12: ", "label key bad_: expected", 0},
    {POD_META "  labels: {Example.com/app: x}\nspec: {containers: [{name: m}]}\n", -EINVAL,
     ":6:12: ", "label key Example.com/app: expected", 0},
    {POD_META "  labels: {app: x-}\nspec: {containers: [{name: m}]}\n", -EINVAL,
     ":6:17: ", "label app: value x-: expected at most 63 bytes", 0},
    /* an annotation's value read as a number: a mapping is refused, not read through NULL */
    {POD_META
     "  annotations: {sim.gpusched.io/evictions: {a: 1}}\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:44: ", "annotation sim.gpusched.io/evictions must be a string, not a mapping", 0},
    /* ... and a string holding one is read, as a snapshot writes it */
    {POD_META
     "  annotations: {sim.gpusched.io/mig-start: \"9\"}\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:44: ",
     "sim.gpusched.io/mig-start must be a first memory slice \"0\"..\"7\", not \"9\"", 0},
    {POD_HDR "spec: {containers: [{name: m}]}\n---\n" POD_HDR "spec: {containers: [{name: m}]}\n",
     -EINVAL, ":8:18: ", "a second pod a/p (the first is at ", 0},
    {POD_HDR "spec: {containers: [{name: a}, {name: b}, {name: c}, {name: d}, {name: e}, "
             "{name: f}, {name: g}, {name: h}, {name: i}]}\n",
     -E2BIG, ":4:109: ", "more than 8 containers in a pod", 0},
    {"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: x}\nvalue: "
     "3000000000\n",
     -EINVAL, ":4:8: ", "value must be in -2147483648..2147483647", 0},
    {"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: x}\nvalue: "
     "1000000001\n",
     -EINVAL, ":4:8: ", "value 1000000001 is above 1000000000", 0},
    {"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: system-x}\n"
     "value: 1\n",
     -EINVAL, ":1:1: ", "names starting system- are reserved", 0},
    {"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: "
     "system-node-critical}\nvalue: 1\n",
     -EINVAL, ":4:8: ", "is built in with value 2000001000", 0},
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
     "spec: {weight: 0}\n",
     -EINVAL, ":4:16: ", "weight must be in 1..1000000", 0},
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n"
     "spec: {minMember: 0}\n",
     -EINVAL, ":4:19: ", "minMember must be in 1..", 0},
    /* Volcano's other PodGroup fields, applied by neither driver, were taken without a word */
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n"
     "spec: {minMember: 2, networkTopology: {mode: hard}}\n",
     -EINVAL,
     ":4:39: ", "PodGroup spec.networkTopology is not applied: refused rather than ignored", 0},
    /* minTaskMember: task names as Volcano's job webhook takes them, counts of 0 or more */
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n"
     "spec: {minMember: 2, minTaskMember: {w: -1}}\n",
     -EINVAL, ":4:41: ", "minTaskMember: task w: expected a member count in 0..2000000, not -1", 0},
    /* two near 2^31 summed to a negative lack, and the gang started without them */
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n"
     "spec: {minMember: 1, minTaskMember: {a: 2147483647, b: 1}}\n",
     -EINVAL, ":4:38: ", "task a: expected a member count in 0..2000000, not 2147483647", 0},
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n"
     "spec: {minMember: 2, minTaskMember: {W_1: 1}}\n",
     -EINVAL, ":4:38: ", "task \"W_1\": expected a Volcano task's name, a DNS label", 0},
    {POD_META "  annotations: {volcano.sh/task-spec: Ps}\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:39: ", "volcano.sh/task-spec \"Ps\": expected a Volcano task's name", 0},
    /* minResources: the names and quantities of a Queue's capability */
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n"
     "spec: {minMember: 2, minResources: {nvidia.com/gpus: 2}}\n",
     -EINVAL, ":4:37: ", "resource nvidia.com/gpus in minResources is not interpreted", 0},
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n"
     "spec: {minMember: 2, minResources: {cpu: 2x}}\n",
     -EINVAL, ":4:42: ", "minResources.cpu", 0},
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n"
     "spec: {minMember: 2, minResources: [cpu]}\n",
     -EINVAL, ":4:36: ", "minResources", 0},
    /* a resource nothing reads still holds a quantity: "xyz" or -1 were taken and dropped */
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n"
     "spec: {minMember: 2, minResources: {pods: xyz}}\n",
     -EINVAL, ":4:43: ", "minResources.pods: \"xyz\" is not a Kubernetes quantity", 0},
    /* the quota's names Volcano's job controller writes beside the plain ones are quantities */
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n"
     "spec: {minMember: 2, minResources: {requests.cpu: 2x}}\n",
     -EINVAL, ":4:51: ", "minResources.requests.cpu: \"2x\" is not a Kubernetes quantity", 0},
    {"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
     "spec: {capability: {ephemeral-storage: -1}}\n",
     -EINVAL, ":4:40: ", "capability.ephemeral-storage: \"-1\" must not be negative", 0},
    {"apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: a}\n"
     "spec: {hard: {services: [1]}}\n",
     -EINVAL, ":4:25: ", "hard.services must be a quantity", 0},
    {POD_HDR "spec: {containers: [{name: m, resources: {limits: {ephemeral-storage: lots}}}]}\n",
     -EINVAL, ":4:71: ", "limits.ephemeral-storage: \"lots\" is not a Kubernetes quantity", 0},
    {"apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: a}\n"
     "spec: {hard: {requests.nvidia.com/gpu: \"0.5\"}}\n",
     -EINVAL, ":4:40: ", "hard.requests.nvidia.com/gpu: \"0.5\" is not a whole number of GPUs", 0},
    {POD_META "  annotations: {gpusched.io/checkpoint-interval: 0s}\n"
              "spec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:50: ", "gpusched.io/checkpoint-interval must be longer than 0 s", 0},
    {POD_META "  annotations: {gpusched.io/checkpoint-interval: often}\n"
              "spec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:50: ", "gpusched.io/checkpoint-interval", 0},
    {VGPU_HDR "spec: {memory: 2gb, cores: 101, maxClients: 8}\n", -EINVAL,
     ":4:28: ", "spec.cores must be in 1..100", 0},
    {VGPU_HDR "spec: {memory: 2xb, cores: 10, maxClients: 8}\n", -EINVAL,
     ":4:16: ", "spec.memory: \"2xb\"", 0},
    {VGPU_HDR "spec: {memory: 0mb, cores: 10, maxClients: 8}\n", -EINVAL,
     ":4:16: ", "spec.memory: \"0mb\" is below 512 MiB", 0},
    {VGPU_HDR "spec: {memory: 2048, cores: 10, maxClients: 8}\n", -EINVAL,
     ":4:16: ", "spec.memory: 2048 is bytes; did you mean 2048Mi?", 0},
    {VGPU_HDR "spec: {memory: 1000000000, cores: 10, maxClients: 8}\n", -EINVAL, ":4:16: ",
     "spec.memory: 1000000000 is bytes, not a whole MiB: about 954Mi; write the unit", 0},
    {VGPU_HDR "spec: {memory: 8589934592, cores: 10, maxClients: 8}\n", -EINVAL,
     ":4:16: ", "spec.memory: 8589934592 is bytes, 8192Mi; write the unit", 0},
    {VGPU_HDR "spec: {memory: 2049k, cores: 10, maxClients: 8}\n", -EINVAL,
     ":4:16: ", "spec.memory: \"2049k\" is not a whole number of MiB", 0},
    {VGPU_HDR "spec: {memory: 256Mi, cores: 10, maxClients: 8}\n", -EINVAL,
     ":4:16: ", "spec.memory: \"256Mi\" is below 512 MiB", 0},
    {VGPU_HDR "spec: {memory: 2Gi, cores: 10}\n", -EINVAL, ":4:7: ", "has no spec.maxClients", 0},
    {VGPU_HDR "spec: {memory: 2Gi, cores: 10, maxClients: 0}\n", -EINVAL,
     ":4:44: ", "spec.maxClients must be in 1..1024", 0},
    {VGPU_HDR "spec: {memory: 2Gi, cores: 10, maxClients: 2, isShareable: maybe}\n", -EINVAL,
     ":4:60: ", "spec.isShareable", 0},
    {POD_META "  annotations: {gpusched.io/vgpu-class: small}\nspec: {containers: [{name: m, "
              "resources: {limits: {nvidia.com/gpu: 1}}}]}\n",
     -EINVAL,
     ":1:1: ", "VirtualGPUClass (annotation gpusched.io/vgpu-class) \"small\" is not defined", 1},
    /* a class's slice comes through nvidia.com/gpu's device plugin, as an amount's does */
    {POD_META "  annotations: {gpusched.io/vgpu-class: small}\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:41: ", "annotation gpusched.io/vgpu-class needs nvidia.com/gpu", 0},
    {VGPU_HDR "spec: {memory: 2Gi, cores: 10, maxClients: 2}\n---\n" POD_META
              "  annotations: {gpusched.io/vgpu-class: small}\nspec:\n  containers:\n  - name: m\n"
              "    resources:\n      limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 1024}\n",
     -EINVAL, ":6:1: ", "VirtualGPUClass small and nvidia.com/gpumem", 1},
    /* a first start the daemon's clock cannot give: a report's start and wait are read from it */
    {SIM_HDR "spec:\n  now: 1h\n---\n" POD_META
             "  annotations: {sim.gpusched.io/arrival: 0s, sim.gpusched.io/first-start: 2h}\n"
             "spec: {containers: [{name: m}]}\n",
     -EINVAL,
     ":12:75: ", "pod a/p: sim.gpusched.io/first-start 7200000000us is after now, 3600000000us", 1},
    {POD_META "  annotations: {sim.gpusched.io/arrival: 1h, sim.gpusched.io/first-start: 0s}\n"
              "spec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:75: ", "sim.gpusched.io/first-start 0us is before its arrival, 3600000000us", 1},
    /* a hand-edited snapshot's times: each error names the value; the work a pod has left,
     * duration - saved - done, is never negative */
    {POD_META "  annotations: {sim.gpusched.io/duration: 1h, sim.gpusched.io/saved: 2h}\n"
              "spec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:70: ",
     "pod a/p: sim.gpusched.io/saved 7200000000us is more than its sim.gpusched.io/duration, "
     "3600000000us",
     1},
    /* a card the node does not have, said so (not that it is taken) */
    {CL_HDR "  nodeTemplates: [{name: t, gpuModel: T4, gpus: 2}]\n  nodes: [{name: n1, template: "
            "t}]\n---\n" SIM_HDR "spec: {now: 2h}\n---\n" POD_META
            "  annotations:\n    sim.gpusched.io/node: n1\n    sim.gpusched.io/gpus: \"0,5\"\n"
            "    sim.gpusched.io/start: 1h\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":19:27: ",
     "pod a/p: sim.gpusched.io/gpus names card 5, and node n1 has 2 GPUs (numbered from 0)", 1},
    {RUNNING("    sim.gpusched.io/arrival: 30m\n    sim.gpusched.io/start: 10m\n"), -EINVAL,
     ":21:28: ",
     "sim.gpusched.io/start 600000000us is before its sim.gpusched.io/arrival, 1800000000us", 1},
    {RUNNING("    sim.gpusched.io/start: 1h\n    sim.gpusched.io/done: 3h\n"), -EINVAL, ":21:27: ",
     "sim.gpusched.io/done 10800000000us is more than the time from its arrival to now, "
     "7200000000us",
     1},
    {RUNNING("    sim.gpusched.io/duration: 1h\n    sim.gpusched.io/saved: 40m\n"
             "    sim.gpusched.io/start: 1h\n    sim.gpusched.io/done: 30m\n"),
     -EINVAL, ":23:27: ",
     "sim.gpusched.io/done 1800000000us is more than its sim.gpusched.io/duration less what it "
     "saved, 1200000000us",
     1},
    /* a key given twice in a free-keyed mapping: which value held was the library's choice */
    {POD_HDR "spec:\n  nodeSelector: {topology.kubernetes.io/zone: a, topology.kubernetes.io/zone: "
             "b}\n  containers: [{name: m}]\n",
     -EINVAL, ":5:50: ", "key \"topology.kubernetes.io/zone\" given twice in spec.nodeSelector", 0},
    {POD_META "  labels: {app: a, app: b}\nspec: {containers: [{name: m}]}\n", -EINVAL,
     ":6:20: ", "key \"app\" given twice in metadata.labels", 0},
    /* a string field takes no plain number or boolean, as Kubernetes' API server refuses them */
    {POD_HDR "spec: {priorityClassName: 123, containers: []}\n", -EINVAL, ":4:27: ",
     "spec.priorityClassName must be a string, not the integer 123 (as Kubernetes refuses it): "
     "quote it for the text, \"123\"",
     0},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: 1.5, namespace: a}\nspec: {containers: []}\n",
     -EINVAL, ":3:18: ", "metadata.name must be a string, not the float 1.5", 0},
    {PG_HDR "spec: {minMember: 1, queue: true}\n", -EINVAL,
     ":4:29: ", "queue must be a string, not the boolean true", 0},
    {POD_META "  labels: {team: 7}\nspec: {containers: [{name: m}]}\n", -EINVAL,
     ":6:18: ", "label team must be a string, not the integer 7", 0},
    /* keys an API server refuses, and ours in capitals, were taken and dropped */
    {POD_META "  annotations: {-bad: x}\nspec: {containers: [{name: m}]}\n", -EINVAL,
     ":6:17: ", "annotation key -bad: expected an optional DNS subdomain prefix", 0},
    {POD_META "  annotations: {GPUSCHED.IO/topology: rack}\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:17: ", "unknown annotation \"GPUSCHED.IO/topology\"", 0},
    /* a scheduler's key we read, misspelt: the pod ran alone, outside its gang */
    {POD_META "  annotations: {scheduling.k8s.io/group-nam: g}\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:17: ",
     "unknown annotation \"scheduling.k8s.io/group-nam\" (did you mean "
     "\"scheduling.k8s.io/group-name\"?)",
     0},
    {POD_META "  annotations: {Scheduling.k8s.io/group-name: g}\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:17: ",
     "unknown annotation \"Scheduling.k8s.io/group-name\" (did you mean "
     "\"scheduling.k8s.io/group-name\"?)",
     0},
    {POD_META "  annotations: {gpusched.io/queue: 0x1F}\nspec: {containers: [{name: m}]}\n",
     -EINVAL, ":6:36: ", "\"0x1F\" is an integer to kubectl (YAML 1.1 reads 010 as 8", 0},
    /* kubectl reads these otherwise than they look; they were taken as written (010 cores) */
    {POD_HDR "spec: {containers: [{name: m, resources: {limits: {cpu: 0100}}}]}\n", -EINVAL,
     ":4:57: ", "\"0100\" is an integer to kubectl", 0},
    {POD_HDR "spec:\n  containers: [{name: m}]\n  volumes:\n  - {name: s, secret: {secretName: s, "
             "defaultMode: 0999}}\n",
     -EINVAL, ":7:52: ", "\"0999\" is text to kubectl (YAML 1.1 reads a leading 0 as octal", 0},
    {POD_META "  labels: {user: yes}\nspec: {containers: [{name: m}]}\n", -EINVAL,
     ":6:18: ", "user: \"yes\" is a boolean to kubectl", 0},
    {"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: p}\nvalue: 0100\n",
     -EINVAL, ":4:8: ", "\"0100\" is an integer to kubectl", 0},
    /* an apiVersion's version was not read: banana, v2 and v9 loaded as v1 */
    {"apiVersion: v2\nkind: Pod\nmetadata: {name: p, namespace: a}\nspec: {containers: []}\n",
     -EINVAL, ":1:13: ", "kind Pod of apiVersion \"v2\" is not the Pod gpusched reads (v1)", 0},
    {"apiVersion: scheduling.volcano.sh/v9\nkind: Queue\nmetadata: {name: q}\nspec: {}\n", -EINVAL,
     ":1:13: ", "is not the Queue gpusched reads (scheduling.volcano.sh/v1beta1)", 0},
    {POD_HDR "spec:\n  tolerations: [{key: k, value: false}]\n  containers: [{name: m}]\n", -EINVAL,
     ":5:33: ", "spec.tolerations[0].value must be a string, not the boolean false", 0},
    {POD_HDR "spec:\n  nodeSelector: {topology.kubernetes.io/zone: 1e3}\n  containers: [{name: "
             "m}]\n",
     -EINVAL,
     ":5:47: ", "nodeSelector topology.kubernetes.io/zone must be a string, not the float 1e3", 0},
    {POD_HDR "spec: {containers: [{name: 2.5}]}\n", -EINVAL,
     ":4:28: ", "spec.containers[0].name must be a string, not the float 2.5", 0},
    {POD_HDR "spec: {containers: [{name: m, image: true}]}\n", -EINVAL,
     ":4:38: ", "spec.containers[0].image must be a string, not the boolean true", 0},
};

static void expect_bad(const struct bad *b)
{
    struct gs_diag d;
    struct warns w;
    char want[320];
    diag_with(&d, &w);
    struct gs_scenario *s = new_scenario();
    const char *path = tmp_file(b->text);
    int rc = gs_scenario_load(s, path, &d);
    if (b->at_resolve) {
        if (rc)
            print_error("load: %s\n", d.msg);
        assert_int_equal(rc, 0);
        rc = gs_scenario_resolve(s, &d);
    }
    unlink(path);
    if (rc != b->rc)
        print_error("case \"%s\": rc %d, msg: %s\n", b->what, rc, d.msg);
    assert_int_equal(rc, b->rc);
    snprintf(want, sizeof(want), "%s%s", path, b->where);
    assert_has(d.msg, want);
    assert_has(d.msg, b->what);
    gs_scenario_free(s);
}

/* Time slicing and vGPU classes as a scenario writes them (tests/data/scenario/timeslice.yaml). */
static void test_timeslice_scenario(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    diag_with(&d, &w);
    struct gs_scenario *s = new_scenario();
    load_ok(s, "tests/data/scenario/timeslice.yaml", &d);
    resolve_ok(s, &d);
    assert_int_equal(d.nwarn, 0);
    assert_int_equal(s->policy.templates[0].timeslice_replicas, 4);
    assert_int_equal(s->policy.templates[1].timeslice_replicas, 0);
    assert_int_equal(s->pods[0].containers[0].gpu_shared, 1);
    assert_int_equal(s->pods[0].containers[0].gpu, GS_UNSET);
    assert_int_equal(s->pods[0].containers[0].gpumem_mib, 6144);
    assert_string_equal(s->pods[2].vgpu_class, "shared-gpu-small");
    assert_int_equal(s->policy.vgpu_classes[0].memory_mib, 2048);
    assert_true(s->sim.modes_defined && s->sim.convert);
    assert_int_equal(s->sim.min_hold_us, 600 * 1000000LL);
    gs_scenario_free(s);
}

/* A Simulation's nodeFailures: each node failing at a time, ready again when restore is given
 * (tests/data/scenario/node-failure.yaml), in file order, tied to the Cluster's nodes. */
static void test_node_failures(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    diag_with(&d, &w);
    struct gs_scenario *s = new_scenario();
    load_ok(s, "tests/data/scenario/node-failure.yaml", &d);
    resolve_ok(s, &d);
    assert_int_equal(d.nwarn, 0);
    assert_int_equal(s->sim.nfailures, 3);
    assert_string_equal(s->sim.failures[0].node, "n2");
    assert_int_equal(s->sim.failures[0].index, 1);
    assert_int_equal(s->sim.failures[0].at_us, 1800 * 1000000LL);
    assert_int_equal(s->sim.failures[0].restore_us, 3600 * 1000000LL);
    assert_int_equal(s->sim.failures[1].index, 2);
    assert_int_equal(s->sim.failures[1].restore_us, GS_UNSET);
    gs_scenario_free(s);
}

/* A snapshot of a large cluster lists every unhealthy card: 2,000 cardFailures of 250 nodes are
 * all read, in file order (there is no fixed bound on the list). */
static void test_many_card_failures(void **state)
{
    (void)state;
    enum { NODES = 250, GPUS = 8 };
    size_t cap = 64 * 1024 + NODES * GPUS * 48, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len +=
        (size_t)snprintf(text + len, cap - len,
                         CL_HDR "  nodeTemplates: [{name: t, gpuModel: A100-SXM4-80GB, gpus: 8}]\n"
                                "  nodes: [{name: \"n[1-%d]\", template: t}]\n---\n" SIM_HDR
                                "spec:\n  cardFailures:\n",
                         NODES);
    for (int n = 1; n <= NODES; n++)
        for (int g = 0; g < GPUS; g++)
            len +=
                (size_t)snprintf(text + len, cap - len, "  - {node: n%d, gpu: %d, at: 1h}\n", n, g);
    assert_true(len < cap);
    struct gs_diag d;
    struct warns w;
    struct gs_scenario *s = load_text_ok(text, &d, &w);
    assert_int_equal(s->sim.nfailures, NODES * GPUS);
    assert_string_equal(s->sim.failures[NODES * GPUS - 1].node, "n250");
    assert_int_equal(s->sim.failures[NODES * GPUS - 1].gpu, GPUS - 1);
    gs_scenario_free(s);
    free(text);
}

/* Quoted, a number is text, as it is to Kubernetes: a name "123", a label value "7"; a mapping
 * key is text whatever it looks like (sigs.k8s.io/yaml makes every key a string). */
static void test_quoted_numbers(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    struct gs_scenario *s = load_text_ok(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: '123', namespace: a, labels: {team: \"7\", "
        "2024: x}}\nspec: {containers: [{name: m}]}\n",
        &d, &w);
    assert_int_equal(s->npods, 1);
    assert_string_equal(s->pods[0].name, "123");
    gs_scenario_free(s);
}

/* A pod and its PodGroup of the longest names Kubernetes allows (253 bytes: a Volcano job's
 * PodGroup is "<job>-<uid>", its pods "<job>-<task>-<index>") load whole and find each other. */
static void test_long_object_names(void **state)
{
    (void)state;
    char pod[254], group[254], text[2048];
    memset(pod, 'p', 253), memset(group, 'g', 253);
    pod[253] = group[253] = '\0';
    snprintf(text, sizeof(text),
             "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: %s, "
             "namespace: a}\nspec: {minMember: 1}\n---\napiVersion: v1\nkind: Pod\nmetadata: "
             "{name: %s, namespace: a, annotations: {scheduling.k8s.io/group-name: %s}}\n"
             "spec: {containers: [{name: m}]}\n",
             group, pod, group);
    struct gs_diag d;
    struct warns w;
    struct gs_scenario *s = load_text_ok(text, &d, &w);
    assert_int_equal(s->npods, 1);
    assert_string_equal(s->pods[0].name, pod);
    assert_string_equal(s->pods[0].group, group);
    assert_string_equal(s->policy.podgroups[0].name, group);
    gs_scenario_free(s);
}

/* gs_time_text(): RFC 3339 UTC, to the second or the microsecond; what no calendar takes as us. */
static void test_time_text(void **state)
{
    (void)state;
    char buf[GS_TIME_TEXT_MAX];
    assert_string_equal(gs_time_text(buf, 1796418000000000, 0), "2026-12-04T21:00:00Z");
    assert_string_equal(gs_time_text(buf, 1796420697764281, 1), "2026-12-04T21:44:57.764281Z");
    assert_string_equal(gs_time_text(buf, 0, 1), "1970-01-01T00:00:00.000000Z");
    assert_string_equal(gs_time_text(buf, -1, 0), "-1 us");
    gs_time_text(buf, INT64_MAX, 1); /* a year of six digits, or the microseconds: either fits */
    assert_true(strlen(buf) < sizeof(buf));
}

/* gs_text_escape(): what messages write; a character is written whole or not at all. */
static void test_text_escape(void **state)
{
    (void)state;
    char out[16];
    assert_int_equal(gs_text_escape(out, sizeof(out), "a\x1b\xc3\xa9\xe2\x80\x8b"), 13);
    assert_string_equal(out, "a\\x1b\xc3\xa9\\u200b");
    assert_int_equal(gs_text_escape(out, 3, "a\xc3\xa9"), 1); /* no half of the e-acute */
    assert_string_equal(out, "a");
    assert_int_equal(gs_text_escape(out, 5, "a\x7f"), 1); /* \x7f needs 4 bytes and the NUL */
    assert_string_equal(out, "a");
    assert_int_equal(gs_text_escape(out, 0, "a"), 0);
    /* characters of three and four bytes are written whole (Chinese names, an emoji) */
    assert_int_equal(gs_text_escape(out, sizeof(out), "\xe4\xbe\x8b\xf0\x9f\x98\x80"), 7);
    assert_string_equal(out, "\xe4\xbe\x8b\xf0\x9f\x98\x80");
    /* bytes that are not well-formed UTF-8 (RFC 3629), one by one: a stray byte, a character
     * cut short, an overlong form, a surrogate */
    char big[64];
    gs_text_escape(big, sizeof(big),
                   "a\xff"
                   "b\xc3");
    assert_string_equal(big, "a\\xffb\\xc3");
    gs_text_escape(big, sizeof(big), "\xe0\x80\xaf|\xed\xa0\x80|\xf4\x90\x80\x80");
    assert_string_equal(big, "\\xe0\\x80\\xaf|\\xed\\xa0\\x80|\\xf4\\x90\\x80\\x80");
    assert_false(gs_text_plain("caf\xc3"));
    assert_true(gs_text_plain("caf\xc3\xa9 \xf0\x9f\x98\x80"));
}

/* A rule of the API server's that a pod breaks is said as the API server says it, not as a
 * field "refused rather than ignored": nothing in the pod was going to be ignored. */
static void test_api_rule_said_as_is(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    diag_with(&d, &w);
    struct gs_scenario *s = new_scenario();
    const char *path = tmp_file(POD_HDR "spec: {containers: [{name: m, ports: [{containerPort: "
                                        "0}]}]}\n");
    assert_int_equal(gs_scenario_load(s, path, &d), -EINVAL);
    unlink(path);
    assert_has(d.msg, ":4:55: spec.containers[0].ports[0].containerPort: Invalid value: 0: must "
                      "be between 1 and 65535, inclusive, as the API server says");
    assert_null(strstr(d.msg, "refused rather than ignored"));
    gs_scenario_free(s);
}

/* A Queue is cluster-scoped: a namespace on one is dropped, as kubectl drops it, and said; the
 * fields an API server writes (uid, resourceVersion) of a pasted `kubectl get -o yaml` are taken
 * without a word. */
static void test_queue_namespace_dropped(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    struct gs_scenario *s =
        load_text_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n"
                     "  name: q\n  namespace: team\n  uid: 0f1e2d3c\n  resourceVersion: \"42\"\n"
                     "spec: {weight: 2}\n",
                     &d, &w);
    assert_int_equal(w.n, 1);
    assert_has(w.msg[0], ":5:14: metadata.namespace: a Queue is cluster-scoped (no namespace holds "
                         "it); namespace \"team\" is dropped, as kubectl drops it");
    assert_int_equal(s->policy.nqueues, 1);
    assert_string_equal(s->policy.queues[0].name, "q");
    gs_scenario_free(s);
    s = load_text_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: "
                     "q, uid: u}\nspec: {weight: 2}\nstatus: {state: Open}\n",
                     &d, &w);
    assert_int_equal(w.n, 0);
    gs_scenario_free(s);
    /* a Closed Queue (vcctl queue operate --action close) is run as Open, and said */
    s = load_text_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: "
                     "q}\nspec: {weight: 2}\nstatus: {state: Closed}\n",
                     &d, &w);
    assert_int_equal(w.n, 1);
    assert_has(w.msg[0], ":5:17: status.state Closed: Volcano takes no new PodGroup in a Queue "
                         "that is not Open; the scenario runs Queue q as Open");
    gs_scenario_free(s);
}

/* The simulator's own annotations, which a snapshot writes beside a pod's, do not count against
 * the API server's 256 KiB: a pod accepted at the cap is read back from the snapshot. */
static void test_annotations_cap_sim_own(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    size_t n = 256 * 1024 - 1, cap = n + 512;
    char *text = malloc(cap);
    assert_non_null(text);
    int at = snprintf(text, cap, POD_META "  annotations:\n    x: \"");
    memset(text + at, 'a', n);
    snprintf(text + at + n, cap - (size_t)at - n,
             "\"\n    sim.gpusched.io/arrival: \"1s\"\n    sim.gpusched.io/duration: "
             "\"1h\"\nspec: {containers: [{name: m}]}\n");
    struct gs_scenario *s = load_text_ok(text, &d, &w);
    free(text);
    assert_int_equal(s->npods, 1);
    gs_scenario_free(s);
}

/* A list of thousands of named entries (volumes' names must differ) costs its square to check:
 * past the walk's budget the message says so, not that YAML aliases were expanded (there are
 * none). */
static void test_many_volumes_said(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    diag_with(&d, &w);
    struct gs_scenario *s = new_scenario();
    size_t cap = 5000 * 32 + 256, at = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    at += (size_t)snprintf(text, cap, POD_HDR "spec: {containers: [{name: m}], volumes: [");
    for (int i = 0; i < 5000; i++)
        at +=
            (size_t)snprintf(text + at, cap - at, "%s{name: v%d, emptyDir: {}}", i ? ", " : "", i);
    snprintf(text + at, cap - at, "]}\n");
    const char *path = tmp_file(text);
    free(text);
    assert_int_equal(gs_scenario_load(s, path, &d), -EINVAL);
    unlink(path);
    assert_has(d.msg, "a list of thousands of entries each checked against the others");
    gs_scenario_free(s);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
        expect_bad(&bads[i]);
}

static void test_missing_file(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    diag_with(&d, &w);
    struct gs_scenario *s = new_scenario();
    assert_int_equal(gs_scenario_load(s, "/nonexistent/scenario.yaml", &d), -ENOENT);
    assert_has(d.msg, "/nonexistent/scenario.yaml: no such file");
    assert_int_equal(gs_scenario_load(s, NULL, &d), -EINVAL);
    gs_scenario_free(s);
    gs_scenario_free(NULL);
}

/* --- quantities and durations, exactly --- */

struct qcase {
    const char *s;
    int e10, e2;
    unsigned flags;
    int rc;
    int64_t v;
};

static const struct qcase qcases[] = {
    {"16", 3, 0, 0, 0, 16000},
    {"500m", 3, 0, 0, 0, 500},
    {"64Gi", 0, -20, 0, 0, 65536},
    {"1.5", 3, 0, 0, 0, 1500},
    {"1.5k", 0, 0, 0, 0, 1500},
    {"2e3", 0, 0, 0, 0, 2000},
    {"2E-3", 6, 0, 0, 0, 2000},
    /* nano and micro, as apimachinery reads them ("250u" was not a quantity) */
    {"250u", 3, 0, GS__Q_CEIL, 0, 1},
    {"500000n", 6, 0, 0, 0, 500},
    {"1500u", 3, 0, 0, -EDOM, 0},
    {"2000u", 3, 0, 0, 0, 2},
    {"1E", 0, 0, 0, 0, INT64_C(1000000000000000000)},
    {"7Ei", 0, 0, 0, 0, INT64_C(8070450532247928832)},
    {"9Ei", 0, 0, 0, -ERANGE, 0},
    {"0.1Gi", 0, -20, 0, -EDOM, 0},
    {"0.1Gi", 0, -20, GS__Q_CEIL, 0, 103},
    {"1G", 0, -20, GS__Q_CEIL, 0, 954},
    {"1e-30", 0, 0, GS__Q_CEIL, 0, 1},
    {"2.0", 3, 0, GS__Q_PLAIN, 0, 2000},
    {"1.3333", 3, 0, GS__Q_PLAIN, -EDOM, 0},
    {"2k", 0, 0, GS__Q_PLAIN, 0, 2000}, /* a count as an API server writes it back */
    {"2Ki", 0, 0, GS__Q_PLAIN, -EINVAL, 0},
    {"8Gx", 0, 0, 0, -EINVAL, 0},
    {"1e", 0, 0, 0, -EINVAL, 0},
    {".", 0, 0, 0, -EINVAL, 0},
    {"", 0, 0, 0, -EINVAL, 0},
    {"-1", 0, 0, 0, -EDOM, 0},
    {"-0", 0, 0, 0, 0, 0},
    {"+5", 0, 0, 0, 0, 5},
    {"0.000", 0, 0, 0, 0, 0},
    {"922337203685477580", 0, 0, 0, 0, INT64_C(922337203685477580)},
    {"1234567890123456789", 0, 0, 0, 0, INT64_C(1234567890123456789)},
    {"12345678901234567890", 0, 0, 0, -ERANGE, 0},
    {"12345678901234567800000", 0, 0, 0, -ERANGE, 0},
    {"123456789012345678000", -3, 0, 0, 0, INT64_C(123456789012345678)},
    {"1e10000", 0, 0, 0, -ERANGE, 0},
    {"1e10001", 0, 0, 0, -ERANGE, 0},
    {"100000000000000000", 3, 0, 0, -ERANGE, 0},
    /* bytes past 64 bits whose MiB fit: the powers of two cancel first */
    {"1e24", 0, -20, 0, 0, INT64_C(953674316406250000)},
    {"5e22", 0, -20, GS__Q_CEIL, 0, INT64_C(47683715820312500)},
    {"1e25", 0, -20, 0, -ERANGE, 0},
    {"1.5Gi", 0, 0, 0, 0, INT64_C(1610612736)},
    {"0.3Ki", 0, 0, GS__Q_CEIL, 0, 308},
};

static void test_quantities(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(qcases) / sizeof(qcases[0]); i++) {
        const struct qcase *q = &qcases[i];
        const char *why = NULL;
        int64_t v = -42;
        int rc = gs__qty_parse(q->s, q->e10, q->e2, q->flags, &v, &why);
        if (rc != q->rc || (!rc && v != q->v))
            print_error("\"%s\": rc %d (want %d), %lld (want %lld), %s\n", q->s, rc, q->rc,
                        (long long)v, (long long)q->v, why ? why : "");
        assert_int_equal(rc, q->rc);
        if (!rc)
            assert_int_equal(v, q->v);
        else
            assert_non_null(why);
    }
}

/* The writer spells a count of thousandths as Kubernetes' Quantity.String() does, and the
 * parser reads each spelling back to the same count. */
static void test_quantity_writer(void **state)
{
    (void)state;
    static const struct {
        int64_t milli;
        const char *s;
    } cases[] = {
        {0, "0"},
        {1, "1m"},
        {500, "500m"},
        {1500, "1500m"},
        {2000, "2"},
        {1000000, "1k"},
        {20000000, "20k"},
        {1500000, "1500"},
        {1000000000, "1M"},
        {INT64_C(9000000000000000000), "9P"},
        {INT64_MAX, "9223372036854775807m"},
        {-500, "-500m"},
        {-2000000, "-2k"},
    };
    char buf[GS_QUANTITY_STR_MAX];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_string_equal(gs_quantity_format_milli(cases[i].milli, buf, sizeof(buf)), cases[i].s);
        int64_t back = -42;
        if (cases[i].milli >= 0) {
            assert_int_equal(gs_quantity_parse(buf, 3, 0, 0, &back), 0);
            assert_int_equal(back, cases[i].milli);
        }
    }
    /* any number of digits, as Kubernetes' parser (inf.Dec) takes them: int64's largest is
     * exact, one more is too large, and digits past 64 bits still count */
    int64_t v = 0;
    assert_int_equal(gs_quantity_parse("9223372036854775807", 0, 0, 0, &v), 0);
    assert_int_equal(v, INT64_MAX);
    assert_int_equal(gs_quantity_parse("9223372036854775807m", 3, 0, 0, &v), 0);
    assert_int_equal(v, INT64_MAX);
    assert_int_equal(gs_quantity_parse("9223372036854775808m", 3, 0, 0, &v), -ERANGE);
    assert_int_equal(gs_quantity_parse("18446744073709551616", 0, 0, 0, &v), -ERANGE);
    assert_int_equal(gs_quantity_parse("12345678901234567890123e-20", 0, 0, 1, &v), 0);
    assert_int_equal(v, 124); /* 123.4...: rounded up as asked */
    assert_int_equal(gs_quantity_parse("123.00000000000000000000001", 0, 0, -1, &v), 0);
    assert_int_equal(v, 123);
    assert_int_equal(gs_quantity_parse("123.00000000000000000000001", 0, 0, 0, &v), -EINVAL);
    assert_int_equal(gs_quantity_parse("0.12345678901234567890123", 3, 0, 1, &v), 0);
    assert_int_equal(v, 124);
    assert_int_equal(gs_quantity_parse("1000000000000000000000000e-6", 0, 0, 0, &v), 0);
    assert_int_equal(v, 1000000000000000000);
    /* every count of a range, and powers of ten, round trip */
    for (int64_t m = 0; m < 100000; m += 7) {
        int64_t back = -42;
        assert_int_equal(
            gs_quantity_parse(gs_quantity_format_milli(m, buf, sizeof(buf)), 3, 0, 0, &back), 0);
        assert_int_equal(back, m);
    }
    for (int64_t m = 1; m <= INT64_MAX / 10; m *= 10) {
        int64_t back = -42;
        assert_int_equal(
            gs_quantity_parse(gs_quantity_format_milli(m, buf, sizeof(buf)), 3, 0, 0, &back), 0);
        assert_int_equal(back, m);
    }
    /* memory as BinarySI: the largest suffix that divides it, as kubectl shows a LimitRange */
    static const struct {
        int64_t mib;
        const char *s;
    } mem[] = {{0, "0"},
               {512, "512Mi"},
               {1024, "1Gi"},
               {1536, "1536Mi"},
               {32768, "32Gi"},
               {1048576, "1Ti"},
               {-2048, "-2Gi"},
               {1073741824, "1Pi"},
               {INT64_C(1) << 40, "1Ei"},
               {(INT64_C(1) << 50) * 3, "3072Ei"}};
    for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++) {
        assert_string_equal(gs_quantity_format_mib(mem[i].mib, buf, sizeof(buf)), mem[i].s);
        int64_t back = -42;
        if (mem[i].mib >= 0 && mem[i].mib < (INT64_C(1) << 43)) {
            assert_int_equal(gs_quantity_parse(buf, 0, -20, 0, &back), 0);
            assert_int_equal(back, mem[i].mib);
        }
    }
}

static void test_durations(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int rc;
        int64_t us;
    } cases[] = {
        {"90s", 0, INT64_C(90000000)},
        {"1h30m", 0, INT64_C(5400000000)},
        {"1.5h", 0, INT64_C(5400000000)},
        {"250ms", 0, 250000},
        {"5us", 0, 5},
        {"2d", 0, INT64_C(172800000000)},
        {"0", 0, 0},
        {"1m", 0, 60000000},
        {"1m30s", 0, 90000000},
        {"120", -EINVAL, 0},
        {"1.5", -EINVAL, 0},
        {"1x", -EINVAL, 0},
        {"s", -EINVAL, 0},
        {"-1s", -EDOM, 0},
        {"0.0000001s", -EDOM, 0},
        {"300000000000d", -ERANGE, 0},
        {"100000000d100000000d", -ERANGE, 0},
        /* Go's units were refused: ns (whole microseconds only), and the micro signs */
        {"1000ns", 0, 1},
        {"1500ns", -EDOM, 0},
        {"1\xc2\xb5s", 0, 1},
        {"2\xce\xbcs", 0, 2},
        {"+5s", 0, 5000000},
        {".5h", 0, INT64_C(1800000000)},
        {"1.h", 0, INT64_C(3600000000)},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *why = NULL;
        int64_t us = -42;
        int rc = gs__duration_parse(cases[i].s, &us, &why);
        if (rc != cases[i].rc || (!rc && us != cases[i].us))
            print_error("\"%s\": rc %d, %lld us\n", cases[i].s, rc, (long long)us);
        assert_int_equal(rc, cases[i].rc);
        if (!rc)
            assert_int_equal(us, cases[i].us);
    }
}

/* --- kubectl output, tenants, limits --- */

static const char kubectl_list[] =
    "apiVersion: v1\n"
    "items:\n"
    "- apiVersion: v1\n"
    "  kind: Pod\n"
    "  metadata:\n"
    "    creationTimestamp: \"2024-05-01T10:00:00Z\"\n"
    "    name: web-0\n"
    "    namespace: shop\n"
    "    uid: 0d7c0a4e\n"
    "    resourceVersion: \"42\"\n"
    "    ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: web, uid: 7f3e9b2a,\n"
    "      controller: true, blockOwnerDeletion: true}]\n"
    "  spec:\n"
    "    nodeName: node-7\n"
    "    schedulerName: default-scheduler\n"
    "    containers:\n"
    "    - name: app\n"
    "      image: nginx\n"
    "      resources:\n"
    "        requests: {cpu: 250m, memory: 512Mi, nvidia.com/gpu: \"1\"}\n"
    "        limits: {nvidia.com/gpu: \"1\", ephemeral-storage: 1Gi}\n"
    "  status: {phase: Running, hostIP: 10.0.0.7}\n"
    "- apiVersion: v1\n"
    "  kind: Pod\n"
    "  metadata: {name: web-1, namespace: shop}\n"
    "  spec: {containers: [{name: app, resources: {requests: {cpu: \"1\"}}}]}\n"
    "kind: List\n"
    "metadata: {resourceVersion: \"\"}\n";

/* Taints on nodes and tolerations on pods, read as Kubernetes writes them, matched as
 * Toleration.ToleratesTaint matches (tests/data/scenario/taints.yaml). */
static void test_taints(void **state)
{
    (void)state;
    struct gs_scenario *s;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_scenario_new(&s), 0);
    assert_int_equal(gs_scenario_load(s, "tests/data/scenario/taints.yaml", &d), 0);
    assert_int_equal(gs_scenario_resolve(s, &d), 0);
    const struct gs_policy *pol = &s->policy;
    assert_int_equal(pol->ntaints, 2);
    assert_int_equal(pol->nodes[0].ntaints, 0);
    const struct gs_taint *n2 = &pol->taints[pol->nodes[1].taint_first];
    assert_string_equal(n2->key, "nvidia.com/gpu");
    assert_string_equal(n2->value, "present");
    assert_int_equal(n2->effect, GS_EFFECT_NO_SCHEDULE);
    assert_int_equal(pol->taints[pol->nodes[2].taint_first].effect, GS_EFFECT_NO_EXECUTE);
    const struct gs_pod_spec *ok = &s->pods[1], *any = &s->pods[2], *late = &s->pods[3],
                             *ml = &s->pods[4];
    assert_int_equal(ok->ntolerations, 3);
    assert_true(ok->tolerations[0].exists);
    assert_int_equal(ok->tolerations[0].seconds, GS_UNSET);
    assert_int_equal(ok->tolerations[1].seconds, 300);
    assert_int_equal(ok->tolerations[1].effect, GS_EFFECT_NO_EXECUTE);
    for (size_t n = 0; n < 3; n++) /* an empty key with Exists tolerates every taint */
        assert_null(gs_node_untolerated(pol, n, any));
    assert_null(gs_node_untolerated(pol, 0, late)); /* no taint, nothing to tolerate */
    assert_ptr_equal(gs_node_untolerated(pol, 1, late), n2);
    assert_null(gs_node_untolerated(pol, 1, ok));
    assert_non_null(gs_node_untolerated(pol, 2, ok));
    assert_non_null(gs_node_untolerated(pol, 1, ml));
    assert_null(gs_node_untolerated(pol, 2, ml));
    /* Equal compares the value; a toleration of another effect tolerates nothing */
    struct gs_toleration tl;
    const char *field;
    char why[128];
    assert_int_equal(gs_toleration_make("nvidia.com/gpu", NULL, "absent", "", GS_UNSET, &tl, &field,
                                        why, sizeof(why)),
                     0);
    assert_false(gs_tolerates(&tl, n2));
    assert_int_equal(gs_toleration_make("nvidia.com/gpu", "Equal", "present", "NoExecute", GS_UNSET,
                                        &tl, &field, why, sizeof(why)),
                     0);
    assert_false(gs_tolerates(&tl, n2));
    tl.effect = GS_EFFECT_ANY;
    assert_true(gs_tolerates(&tl, n2));
    gs_scenario_free(s);
}

static void test_kubectl_list(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    struct gs_scenario *s = load_text_ok(kubectl_list, &d, &w);
    assert_int_equal(s->npods, 2);
    assert_string_equal(s->pods[0].name, "web-0");
    assert_int_equal(s->pods[0].containers[0].gpu, 1);
    assert_int_equal(s->pods[0].containers[0].cpu_milli, 250);
    assert_int_equal(s->pods[0].containers[0].memory_mib, 512);
    assert_int_equal(s->pods[1].containers[0].gpu, GS_UNSET);
    assert_int_equal(s->pods[1].src.line, 23);
    assert_string_equal(s->pods[0].node_name, "node-7"); /* held to it, as kubelet would */
    /* ephemeral-storage, which no node declares, is said to be unchecked, not refused */
    assert_int_equal(w.n, 1);
    assert_non_null(strstr(w.msg[0], ":21:39: limits.ephemeral-storage: local ephemeral storage is "
                                     "taken without effect: gpusched neither places nor limits by "
                                     "it"));
    assert_int_equal(gs_scenario_tenant_of(s, "shop"), 0);
    assert_string_equal(s->policy.tenants[0].name, "shop");
    gs_scenario_free(s);
}

static const char tenancy[] =
    "apiVersion: gpu.example.com/v1\n"
    "kind: GPUQuota\n"
    "metadata: {name: q, namespace: a}\n"
    "spec: {tenant: t, namespaces: [b, c], quotas: {t4: {dedicated: 2}}}\n"
    "---\n"
    "apiVersion: v1\n"
    "kind: ConfigMap\n"
    "metadata: {name: topology-gpu-policy}\n"
    "data:\n"
    "  policy.yaml: |\n"
    "    tenants:\n"
    "      t: {priority: 7}\n"
    "      a: {priority: 1}\n"
    "      e: {priority: 2}\n"
    "---\n"
    "{apiVersion: v1, kind: Pod, metadata: {name: x, namespace: b}, spec: {containers: [{name: "
    "m}]}}\n"
    "---\n"
    "{apiVersion: v1, kind: Pod, metadata: {name: x, namespace: d}, spec: {containers: [{name: "
    "m}]}}\n";

static void test_tenancy(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    struct gs_scenario *s = load_text_ok(tenancy, &d, &w);
    const char *path;
    const struct gs_tenant_spec *t = tenant(s, "t");
    int ti = (int)(t - s->policy.tenants);
    assert_int_equal(t->priority, 7);
    assert_int_equal(t->nnamespaces, 3);
    assert_int_equal(t->quotas[0].total_milli, 2000); /* dedicated + shared */
    assert_int_equal(gs_scenario_tenant_of(s, "a"), ti);
    assert_int_equal(gs_scenario_tenant_of(s, "b"), ti);
    assert_int_equal(gs_scenario_tenant_of(s, "c"), ti);
    assert_int_equal(tenant(s, "a")->nnamespaces, 0); /* its namespace is t's */
    assert_int_equal(gs_scenario_tenant_of(s, "e"), (int)(tenant(s, "e") - s->policy.tenants));
    assert_int_equal(gs_scenario_tenant_of(s, "d"), (int)(tenant(s, "d") - s->policy.tenants));
    assert_int_equal(s->policy.ntenants, 4);
    gs_scenario_free(s);

    /* one namespace, two tenants */
    diag_with(&d, &w);
    s = new_scenario();
    path = tmp_file("{apiVersion: gpu.example.com/v1, kind: GPUQuota, metadata: {name: q, "
                    "namespace: a}}\n---\n"
                    "{apiVersion: gpu.example.com/v1, kind: GPUQuota, metadata: {name: q, "
                    "namespace: b}, spec: {namespaces: [a]}}\n");
    load_ok(s, path, &d);
    assert_int_equal(gs_scenario_resolve(s, &d), -EINVAL);
    assert_has(d.msg, "namespace a belongs to tenant");
    assert_has(d.msg, path);
    unlink(path);
    gs_scenario_free(s);

    /* a pod's namespace is no tenant's, and a tenant of that name owns others: two tenants of
     * one name were made, the pod's ignoring the other's quota and limits */
    diag_with(&d, &w);
    s = new_scenario();
    path = tmp_file("{apiVersion: sim.gpusched.io/v1alpha1, kind: Simulation, metadata: {name: "
                    "s}, spec: {tenants: [{name: qa, namespaces: [xx]}]}}\n---\n"
                    "{apiVersion: v1, kind: Pod, metadata: {name: a, namespace: qa}, spec: "
                    "{containers: [{name: m}]}}\n");
    load_ok(s, path, &d);
    assert_int_equal(gs_scenario_resolve(s, &d), -EINVAL);
    assert_has(d.msg, ":3:1: namespace qa is no tenant's, and would be a tenant of its own named "
                      "qa, but tenant qa (");
    unlink(path);
    gs_scenario_free(s);

    /* gpuCount is the tenant's dedicated cards: its GPUQuota may not say otherwise */
    diag_with(&d, &w);
    s = new_scenario();
    path = tmp_file("{apiVersion: gpu.example.com/v1, kind: GPUQuota, metadata: {name: q, "
                    "namespace: a}, spec: {quotas: {t4: {dedicated: 4, shared: 4}}}}\n---\n"
                    "{apiVersion: v1, kind: ConfigMap, metadata: {name: topology-gpu-policy}, "
                    "data: {policy.yaml: \"tenants: {a: {gpuCount: 6}}\"}}\n");
    load_ok(s, path, &d);
    assert_int_equal(gs_scenario_resolve(s, &d), -EINVAL);
    assert_has(d.msg, "tenant a: gpuCount 6 is its dedicated cards, and its GPUQuota's dedicated "
                      "add up to 4: give one number");
    unlink(path);
    gs_scenario_free(s);
}

static void expect_code(const char *text, int code, const char *what)
{
    struct gs_diag d;
    struct warns w;
    diag_with(&d, &w);
    struct gs_scenario *s = new_scenario();
    const char *path = tmp_file(text);
    int rc = gs_scenario_load(s, path, &d);
    unlink(path);
    if (rc != code)
        print_error("rc %d: %s\n", rc, d.msg);
    assert_int_equal(rc, code);
    assert_has(d.msg, path);
    assert_has(d.msg, what);
    gs_scenario_free(s);
}

static void test_limits(void **state)
{
    (void)state;
    char text[8192];
    size_t k = (size_t)snprintf(text, sizeof(text),
                                "apiVersion: gpu.example.com/v1\nkind: "
                                "GPUQuota\nmetadata: {name: q, namespace: "
                                "a}\nspec:\n  namespaces:\n");
    for (int i = 0; i < 17; i++)
        k += (size_t)snprintf(text + k, sizeof(text) - k, "  - n%d\n", i);
    expect_code(text, -E2BIG, "more than 16 namespaces");

    k = 0;
    for (int i = 0; i < 70; i++)
        text[k++] = '[';
    text[k] = '\0';
    expect_code(text, -EINVAL, "nested deeper than 64 levels");
    expect_code("a: *nothing\n", -EINVAL, "undefined alias");
    expect_code("kind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: m, resources: "
                "{limits: {nvidia.com/mig-1g.10gb: 2}}}]}\n",
                -EINVAL, "out of range (0..1 instances");
    /* the API server caps a pod's annotations at 256 KiB in all */
    size_t big = 300 * 1024;
    char *huge = malloc(big + 256);
    assert_non_null(huge);
    k = (size_t)snprintf(huge, 256, "kind: Pod\nmetadata: {name: x, annotations: {a: \"");
    memset(huge + k, 'v', big);
    snprintf(huge + k + big, 128, "\"}}\nspec: {containers: [{name: m}]}\n");
    expect_code(huge, -EINVAL, "metadata.annotations: more than 262144 bytes");
    free(huge);
    /* aliases are plain YAML: the aliased mapping reads as if written out */
    struct gs_diag d;
    struct warns w;
    diag_with(&d, &w);
    struct gs_scenario *s = new_scenario();
    /* (anchors belong to their document: a later document cannot use them) */
    const char *path = tmp_file("kind: Pod\nmetadata: {name: x, labels: &l {user: u}, "
                                "annotations: *l}\nspec: {containers: [{name: m, resources: "
                                "{limits: &r {cpu: 1}, requests: *r}}]}\n---\nkind: Pod\n"
                                "metadata: {name: y, labels: *l}\n");
    assert_int_equal(gs_scenario_load(s, path, &d), -EINVAL);
    assert_has(d.msg, ":6:29: YAML error: found undefined alias");
    assert_int_equal(s->npods, 1);

    unlink(path);
    assert_int_equal(s->pods[0].containers[0].cpu_milli, 1000);
    assert_string_equal(s->pods[0].user, "u");
    gs_scenario_free(s);
}

/* Every prefix of the full scenario and every byte replaced by a YAML indicator: no crash, and
 * either success or one message that names the file. */
static void test_never_crashes_on_mutations(void **state)
{
    (void)state;
    FILE *f = fopen(FULL, "rb");
    assert_non_null(f);
    static char text[8192];
    size_t len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    static const char subst[] = ":[{-\"'&*!|>#\n ";
    for (size_t i = 0; i < len; i += 3) {
        for (int m = 0; m <= (int)sizeof(subst) - 1; m++) {
            char copy[8192];
            memcpy(copy, text, len);
            copy[len] = '\0';
            if (m == (int)sizeof(subst) - 1)
                copy[i] = '\0'; /* a prefix */
            else
                copy[i] = subst[m];
            struct gs_diag d;
            struct warns w;
            diag_with(&d, &w);
            struct gs_scenario *s = new_scenario();
            const char *path = tmp_file(copy);
            int rc = gs_scenario_load(s, path, &d);
            if (!rc)
                rc = gs_scenario_resolve(s, &d);
            unlink(path);
            assert_true(rc == 0 || rc == -EINVAL || rc == -E2BIG);
            if (rc)
                assert_has(d.msg, path);
            gs_scenario_free(s);
        }
    }
}

/* 100,000 flow-style pods load into exact records (the time is bench_scenario's business). */
static void test_many_pods(void **state)
{
    (void)state;
    char path[] = "/tmp/gs_test_scenario_pods_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    for (long i = 0; i < 100000; i++)
        fprintf(f,
                "--- {apiVersion: v1, kind: Pod, metadata: {name: p-%06ld, namespace: ns-%ld, "
                "annotations: {sim.gpusched.io/arrival: \"%lds\"}}, spec: {containers: [{name: "
                "m, resources: {limits: {nvidia.com/gpu: %ld, memory: 16Gi}}}]}}\n",
                i, i % 50, i, 1 + i % 4);
    assert_int_equal(fclose(f), 0);
    struct gs_diag d;
    struct warns w;
    diag_with(&d, &w);
    struct gs_scenario *s = new_scenario();
    load_ok(s, path, &d);
    resolve_ok(s, &d);
    unlink(path);
    assert_int_equal(s->npods, 100000);
    assert_string_equal(s->pods[99999].name, "p-099999");
    assert_string_equal(s->pods[99999].ns, "ns-49");
    assert_int_equal(s->pods[99999].arrival_us, INT64_C(99999000000));
    assert_int_equal(s->pods[99999].containers[0].gpu, 4);
    assert_int_equal(s->pods[99999].containers[0].memory_mib, 16384);
    assert_int_equal(s->pods[99999].src.line, 100000);
    assert_int_equal(s->policy.ntenants, 50);
    assert_int_equal(w.n, 0);
    gs_scenario_free(s);
}

/* Files in any order: nodes may come before their template, pods before their PodGroup. */
static void test_any_order(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    char a[64], b[64];
    diag_with(&d, &w);
    struct gs_scenario *s = new_scenario();
    snprintf(a, sizeof(a), "%s",
             tmp_file(CL_HDR "  nodes:\n  - {name: \"g[8-10]\", template: "
                             "late}\n"
                             "---\n" POD_META "  annotations: "
                             "{scheduling.k8s.io/group-name: g}\nspec: "
                             "{containers: [{name: m}]}\n"));
    snprintf(b, sizeof(b), "%s",
             tmp_file(CL_HDR "  nodeTemplates: [{name: late, gpuModel: T4, "
                             "gpus: 1}]\n---\n"
                             "{apiVersion: scheduling.volcano.sh/v1beta1, "
                             "kind: PodGroup, metadata: {name: g, namespace: "
                             "a}}\n"));
    load_ok(s, a, &d);
    load_ok(s, b, &d);
    unlink(a);
    unlink(b);
    assert_int_equal(s->policy.nodes[0].template_index, GS_UNSET);
    resolve_ok(s, &d);
    assert_int_equal(s->policy.nnodes, 3);
    assert_string_equal(s->policy.nodes[0].name, "g8");
    assert_string_equal(s->policy.nodes[2].name, "g10");
    for (int i = 0; i < 3; i++)
        assert_int_equal(s->policy.nodes[i].template_index, 0);
    assert_int_equal(w.n, 0);
    gs_scenario_free(s);
}

/* gs_pod_parse_json() of @json read by jansson reads what gs_pod_parse() of its compact text
 * does: the same return, spec, field and message (but the position, which a value has not). */
static void same_as_text(const char *json)
{
    struct gs_pod_spec a, b;
    struct gs_diag da, db;
    char fa[128], fb[128];
    json_t *v = json_loads(json, JSON_REJECT_DUPLICATES, NULL);
    char *text = json_dumps(v, JSON_COMPACT);
    assert_non_null(text);
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    gs_diag_init(&da);
    gs_diag_init(&db);
    int ra = gs_pod_parse("body", text, strlen(text), 1, &a, fa, sizeof(fa), &da);
    int rb = gs_pod_parse_json("body", v, 1, &b, fb, sizeof(fb), &db);
    json_decref(v);
    free(text);
    assert_int_equal(ra, rb);
    assert_string_equal(fa, fb);
    if (ra)
        assert_string_equal(strstr(da.msg, ": "), strstr(db.msg, ": "));
    else
        assert_memory_equal(&a, &b, sizeof(a));
}

/* One Pod object, as gpuschedd's API receives it (JSON), through the loader's own parser. */
/*
 * What Kubernetes defaults when it is left empty is taken empty: "" for a string enum the API
 * server fills in (imagePullPolicy, protocol, dnsPolicy, ...), for priorityClassName,
 * schedulerName and nodeName (as a chart's empty `| quote` writes them); a file mode in octal
 * as the Kubernetes docs write it (defaultMode: 0400, read as kubectl reads it).
 */
static void test_pod_defaults_taken(void **state)
{
    (void)state;
    struct gs_diag d;
    struct warns w;
    struct gs_scenario *s = load_text_ok(
        POD_HDR "spec:\n  restartPolicy: \"\"\n  dnsPolicy: \"\"\n  priorityClassName: \"\"\n"
                "  schedulerName: \"\"\n  nodeName: \"\"\n  containers:\n  - name: m\n"
                "    imagePullPolicy: \"\"\n    terminationMessagePolicy: \"\"\n"
                "    ports: [{containerPort: 80, protocol: \"\"}]\n"
                "    readinessProbe: {httpGet: {port: 80, scheme: \"\"}}\n"
                "  volumes:\n  - {name: s, secret: {secretName: s, defaultMode: 0400, items: "
                "[{key: k, path: p, mode: 0644}]}}\n"
                "  - {name: i, image: {reference: r, pullPolicy: \"\"}}\n",
        &d, &w);
    assert_int_equal(d.nwarn, 0);
    assert_int_equal(s->npods, 1);
    assert_string_equal(s->pods[0].priority_class, "");
    assert_string_equal(s->pods[0].scheduler, "");
    gs_scenario_free(s);
}

static void test_pod_parse_json(void **state)
{
    (void)state;
    struct gs_pod_spec p;
    struct gs_diag d;
    char field[128];
    static const char ok[] =
        "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p\", "
        "\"namespace\": \"team-a\", \"labels\": {\"user\": \"u1\"}, \"annotations\": "
        "{\"gpusched.io/gpu-model\": \"A100-SXM4-80GB|H100-SXM5-80GB\", "
        "\"scheduling.volcano.sh/queue-name\": \"q\"}}, \"spec\": {\"priorityClassName\": "
        "\"hi\", \"containers\": [{\"name\": \"m\", \"resources\": {\"limits\": "
        "{\"nvidia.com/gpu\": 1, \"nvidia.com/gpumem\": \"20k\", \"cpu\": \"2e0\", "
        "\"memory\": \"1Pi\"}}}], \"activeDeadlineSeconds\": 600, \"preemptionPolicy\": "
        "\"Never\", \"overhead\": {\"cpu\": \"250m\", \"memory\": \"120Mi\"}, "
        "\"schedulingGates\": [], \"hostNetwork\": false, \"volumes\": [{\"name\": \"s\", "
        "\"emptyDir\": {}}, {\"name\": \"c\", \"configMap\": {\"name\": \"x\"}}, {\"name\": "
        "\"t\", \"projected\": {\"sources\": []}}, {\"name\": \"h\", \"hostPath\": {\"path\": "
        "\"/d\"}}, {\"name\": \"i\", \"csi\": {\"driver\": \"x\"}}, {\"name\": \"n\", "
        "\"persistentVolumeClaim\": null}]}}";
    gs_diag_init(&d);
    if (gs_pod_parse("body", ok, strlen(ok), 1, &p, field, sizeof(field), &d))
        fail_msg("%s (%s)", d.msg, field);
    assert_string_equal(p.ns, "team-a");
    assert_string_equal(p.user, "u1");
    assert_string_equal(p.queue, "q");
    assert_string_equal(p.priority_class, "hi");
    assert_int_equal(p.ncontainers, 1);
    assert_int_equal(p.containers[0].gpu, 1);
    assert_int_equal(p.containers[0].gpumem_mib, 20000); /* "20k": how an API server stores it */
    assert_int_equal(p.containers[0].cpu_milli, 2000);
    assert_int_equal(p.containers[0].memory_mib, 1LL << 30);
    assert_int_equal(p.model_mask, (1u << gs_catalog_find("A100-SXM4-80GB", -1)) |
                                       (1u << gs_catalog_find("H100-SXM5-80GB", -1)));
    assert_int_equal(p.deadline_us, 600000000);
    assert_int_equal(p.preemption, 2);
    assert_int_equal(p.overhead_cpu_milli, 250);
    assert_int_equal(p.overhead_memory_mib, 120);
    /* refusals name the field, and the place in the text */
    static const struct {
        const char *text, *field;
    } bad[] = {
        {"{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"containers\": [{\"name\": \"m\", "
         "\"resources\": {\"limits\": {\"cpu\": \"two\"}}}]}}",
         "spec.containers[0].resources.limits.cpu"},
        {"{\"metadata\": {\"name\": \"p\", \"annotations\": {\"gpusched.io/gpu-model\": "
         "\"B9000\"}}, \"spec\": {\"containers\": [{\"name\": \"m\"}]}}",
         "metadata.annotations.gpusched.io/gpu-model"},
        {"{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"schedulingGates\": [{\"name\": "
         "\"g\"}], \"containers\": [{\"name\": \"m\"}]}}",
         "spec.schedulingGates"},
        {"{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"containers\": [{\"name\": \"m\", "
         "\"ports\": [{\"containerPort\": 80, \"hostPort\": 8080}]}]}}",
         "spec.containers[0].ports[0].hostPort"},
        {"{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"volumes\": [{\"name\": \"s\", "
         "\"secret\": {\"secretName\": \"s\"}}, {\"name\": \"d\", \"persistentVolumeClaim\": "
         "{\"claimName\": \"c\"}}], \"containers\": [{\"name\": \"m\", \"volumeDevices\": "
         "[{\"name\": \"d\", \"devicePath\": \"/dev/xvda\"}]}]}}",
         "spec.volumes[1].persistentVolumeClaim"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        gs_diag_init(&d);
        assert_int_equal(
            gs_pod_parse("body", bad[i].text, strlen(bad[i].text), 1, &p, field, sizeof(field), &d),
            -EINVAL);
        assert_string_equal(field, bad[i].field);
        assert_non_null(strstr(d.msg, "body:1:"));
        same_as_text(bad[i].text);
    }
    same_as_text(ok);
    /* numbers, booleans and null as JSON spells them; a string that looks like one; escapes */
    same_as_text("{\"metadata\": {\"name\": \"p\", \"labels\": {\"a\": \"1\", \"b\": "
                 "\"\\u00e9\\n\\\"\"}}, \"spec\": {\"containers\": [{\"name\": \"m\", "
                 "\"resources\": {\"limits\": {\"cpu\": 1.5, \"memory\": \"1Gi\", "
                 "\"nvidia.com/gpu\": 2}}}], \"activeDeadlineSeconds\": 6e2, "
                 "\"hostNetwork\": true, \"nodeName\": null}}");
    same_as_text("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"containers\": [{\"name\": "
                 "\"m\", \"resources\": {\"limits\": {\"cpu\": true}}}]}}");
    same_as_text("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"containers\": [], "
                 "\"priority\": \"7\"}}");
    same_as_text("[1, 2]");
    /* past the bound on depth (the one on nodes, 8 M, is the same code's) */
    size_t n = 4096, at = 0;
    char *big = malloc(n);
    assert_non_null(big);
    for (int i = 0; i < GS_SCN_MAX_DEPTH + 1; i++)
        at += (size_t)snprintf(big + at, n - at, "{\"a\": ");
    at += (size_t)snprintf(big + at, n - at, "1");
    for (int i = 0; i < GS_SCN_MAX_DEPTH + 1; i++)
        big[at++] = '}';
    big[at] = '\0';
    same_as_text(big);
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_util_forms),
        cmocka_unit_test(test_pod_parse_json),
        cmocka_unit_test(test_pod_defaults_taken),
        cmocka_unit_test(test_seeds_load_each),
        cmocka_unit_test(test_seed_policy_values),
        cmocka_unit_test(test_seed_kube_values),
        cmocka_unit_test(test_quota_scope_expressions),
        cmocka_unit_test(test_seed_warnings),
        cmocka_unit_test(test_warnings),
        cmocka_unit_test(test_dedicated_past_the_cluster),
        cmocka_unit_test(test_mig_policy_in_stream),
        cmocka_unit_test(test_empty_user_label),
        cmocka_unit_test(test_contradictions_warned),
        cmocka_unit_test(test_full_scenario),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_many_volumes_said),
        cmocka_unit_test(test_annotations_cap_sim_own),
        cmocka_unit_test(test_api_rule_said_as_is),
        cmocka_unit_test(test_queue_namespace_dropped),
        cmocka_unit_test(test_text_escape),
        cmocka_unit_test(test_time_text),
        cmocka_unit_test(test_quoted_numbers),
        cmocka_unit_test(test_long_object_names),
        cmocka_unit_test(test_node_failures),
        cmocka_unit_test(test_many_card_failures),
        cmocka_unit_test(test_timeslice_scenario),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_quantities),
        cmocka_unit_test(test_quantity_writer),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_kubectl_list),
        cmocka_unit_test(test_taints),
        cmocka_unit_test(test_tenancy),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_never_crashes_on_mutations),
        cmocka_unit_test(test_many_pods),
        cmocka_unit_test(test_any_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
