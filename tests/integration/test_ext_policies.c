/*
 * The multi-tenant policy seen through the verbs kube-scheduler calls (/extender/filter,
 * prioritize, bind) on the real daemon: a GPUQuota's maxGPUsPerPod and maxPodsPerUser, a
 * namespace ResourceQuota and a Volcano Queue's capability (with its overcommitRatio for shares)
 * fail a node with the rule's own words; a vGPU class and a step profile shape what bind takes;
 * the profile's score weights order prioritize's answer; the topology a node's agent registers
 * picks the cards bind takes; what a pod bound this way ran is billed from the rate card; an
 * elastic PodGroup's members beyond minMember pass filter one by one as room allows; the
 * topology policy's tiers (nvlink as a preference, sharing on or off) and time-slice replicas
 * decide what bind takes.
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

static const char *const a100s[] = {"n-a100-0", "n-a100-1"};
static const char *const all[] = {"n-a100-0", "n-a100-1", "n-t4-0"};

/* A fresh daemon with @pol (NULL: none) as its policy file and @extra in its DaemonConfig. */
static void start(struct daemon *d, const char *pol, const char *extra)
{
    assert_int_equal(h_setup(d, extra), 0);
    if (pol)
        assert_int_equal(h_policy(d, pol), 0);
    assert_int_equal(h_start(d), 0);
}

static void stop(struct daemon *d)
{
    assert_int_equal(h_stop(d), 0);
    h_cleanup(d);
}
/* The first container's limits. */
static json_t *limits_of(json_t *pod)
{
    json_t *c = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
    return json_object_get(json_object_get(c, "resources"), "limits");
}

static char *text_of(json_t *pod)
{
    char *s = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    return s;
}

/* filter @pod (JSON text) over @nodes: the answer. */
static json_t *filter(const struct daemon *d, const char *pod, const char *const *nodes, size_t n)
{
    json_t *r = h_extender(d, "filter", pod, nodes, n);
    if (!r)
        fail_msg("filter: no 200 answer");
    return r;
}

/* filter passes @pod on none of @nodes, and says @says of node @node. */
static void fails_on(const struct daemon *d, const char *pod, const char *const *nodes, size_t n,
                     const char *node, const char *says)
{
    json_t *r = filter(d, pod, nodes, n);
    const char *why = json_string_value(json_object_get(json_object_get(r, "FailedNodes"), node));
    if (json_array_size(json_object_get(r, "NodeNames")) || !why || !strstr(why, says))
        fail_msg("filter: %zu nodes pass; %s: \"%s\", expected \"%s\"",
                 json_array_size(json_object_get(r, "NodeNames")), node, why ? why : "(none)",
                 says);
    json_decref(r);
}

/* fails_on() over every GPU node. */
static void fails_with(const struct daemon *d, const char *pod, const char *node, const char *says)
{
    fails_on(d, pod, all, 3, node, says);
}

/* filter, then bind @pod to the first node that passes: that node into @node (64 bytes). */
static void filter_bind(const struct daemon *d, const char *pod, const char *const *nodes, size_t n,
                        char *node)
{
    json_t *r = filter(d, pod, nodes, n);
    const char *first = json_string_value(json_array_get(json_object_get(r, "NodeNames"), 0));
    if (!first)
        fail_msg("filter passes no node: %s", json_dumps(json_object_get(r, "FailedNodes"), 0));
    snprintf(node, 64, "%s", first ? first : "");
    json_decref(r);
    const char *to[] = {node};
    r = h_extender(d, "bind", pod, to, 1);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    json_decref(r);
}
static json_int_t num(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

static const char limits_policy[] = "apiVersion: gpu.example.com/v1\n"
                                    "kind: GPUQuota\n"
                                    "metadata: {name: q, namespace: team-a}\n"
                                    "spec:\n"
                                    "  tenant: team-a\n"
                                    "  quotas: {a100-80gb: {total: 16, dedicated: 16, shared: 0}}\n"
                                    "  limits: {maxGPUsPerPod: 4, maxPodsPerUser: 2}\n"
                                    "---\n"
                                    "apiVersion: v1\n"
                                    "kind: ResourceQuota\n"
                                    "metadata: {name: gpus, namespace: team-b}\n"
                                    "spec:\n"
                                    "  hard: {requests.nvidia.com/gpu: \"2\"}\n";

/* A GPUQuota's per-pod and per-user limits and a namespace ResourceQuota, as filter says them. */
static void test_limits(void **state)
{
    (void)state;
    struct daemon d;
    start(&d, limits_policy, NULL);
    char *big = h_pod("team-a", "big", 5, 0);
    fails_with(&d, big, "n-a100-0", "maxGPUsPerPod 4");
    free(big);

    /* user u1 (h_pod's label) runs two pods through the API: a third of u1's fails, u2's binds */
    json_decref(h_submit(&d, NULL, h_pod("team-a", "u1-0", 1, 0), 201));
    json_decref(h_submit(&d, NULL, h_pod("team-a", "u1-1", 1, 0), 201));
    char *third = h_pod("team-a", "u1-2", 1, 0);
    fails_with(&d, third, "n-a100-1", "user u1 has 2 pods running (maxPodsPerUser 2)");
    free(third);
    json_t *p = h_pod_json("team-a", "u2-0", 1, 0);
    json_object_set_new(json_object_get(json_object_get(p, "metadata"), "labels"), "user",
                        json_string("u2"));
    char *other = text_of(p), node[64];
    filter_bind(&d, other, a100s, 2, node);
    free(other);

    /* team-b's namespace holds two cards at most, whichever path placed them */
    json_decref(h_submit(&d, NULL, h_pod("team-b", "b0", 2, 0), 201));
    char *b1 = h_pod("team-b", "b1", 1, 0);
    fails_with(&d, b1, "n-a100-0", "requests.nvidia.com/gpu 2+1 > 2 (ResourceQuota gpus)");
    free(b1);
    stop(&d);
}

static const char queue_policy[] = "apiVersion: scheduling.volcano.sh/v1beta1\n"
                                   "kind: Queue\n"
                                   "metadata: {name: research}\n"
                                   "spec:\n"
                                   "  weight: 3\n"
                                   "  capability: {nvidia.com/gpu: \"2\"}\n"
                                   "  overcommitRatio: {nvidia.com/gpu: 1.5}\n";

/* A Queue's capability holds for pods kube-scheduler brings, shares up to overcommitRatio. */
static void test_queue_capability(void **state)
{
    (void)state;
    struct daemon d;
    char node[64];
    start(&d, queue_policy, NULL);
    char *r0 =
        h_pod_annotated("team-a", "r0", 2, 0, "scheduling.volcano.sh/queue-name", "research");
    filter_bind(&d, r0, a100s, 2, node);
    free(r0);
    char *r1 =
        h_pod_annotated("team-a", "r1", 1, 0, "scheduling.volcano.sh/queue-name", "research");
    fails_with(&d, r1, "n-a100-0", "queue research: nvidia.com/gpu 2+1 > capability 2");
    free(r1);
    /* a share of 40 % fits within 2 x 1.5 */
    char *r2 =
        h_pod_annotated("team-a", "r2", 1, 40, "scheduling.volcano.sh/queue-name", "research");
    filter_bind(&d, r2, a100s, 2, node);
    free(r2);
    json_t *g = h_pod_get(&d, "team-a", "r2");
    assert_string_equal(json_string_value(json_object_get(g, "state")), "running");
    assert_string_equal(json_string_value(json_object_get(g, "queue")), "research");
    json_decref(g);
    struct answer a; /* the queue counts what the extender bound */
    h_expect(&d, "GET", "/v1/queues/research", TOKEN_A, NULL, 200, &a);
    assert_int_equal(num(a.json, "allocated_milli"), 2400);
    assert_int_equal(num(a.json, "pods_running"), 2);
    h_answer_free(&a);
    /* a member naming another queue than its PodGroup's is refused, naming both */
    h_expect(&d, "POST", "/v1/podgroups", TOKEN_A,
             "{\"apiVersion\": \"scheduling.volcano.sh/v1beta1\", \"kind\": \"PodGroup\", "
             "\"metadata\": {\"name\": \"g\", \"namespace\": \"team-a\"}, \"spec\": "
             "{\"minMember\": 1, \"queue\": \"research\"}}",
             201, &a);
    h_answer_free(&a);
    json_t *m = h_pod_json("team-a", "g0", 1, 0);
    json_t *ann = json_object();
    json_object_set_new(ann, "scheduling.k8s.io/group-name", json_string("g"));
    json_object_set_new(ann, "scheduling.volcano.sh/queue-name", json_string("default"));
    json_object_set_new(json_object_get(m, "metadata"), "annotations", ann);
    char *body = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    h_expect(&d, "POST", "/v1/pods", TOKEN_A, body, 400, &a);
    free(body);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")),
                        "metadata.annotations.scheduling.volcano.sh/queue-name");
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")),
                           "names queue default but its PodGroup team-a/g is in queue research"));
    h_answer_free(&a);
    stop(&d);
}

static const char class_policy[] =
    "apiVersion: gpu.example.com/v1\n"
    "kind: VirtualGPUClass\n"
    "metadata: {name: shared-gpu-small}\n"
    "spec: {driver: vgpu, profile: quadro-v100-2q, memory: 2gb,"
    " cores: 10, computeCap: 7.0, isShareable: true, maxClients: 8}\n"
    "---\n"
    "apiVersion: v1\n"
    "kind: ConfigMap\n"
    "metadata: {name: kubeflow-gpu-profiles, namespace: kubeflow}\n"
    "data:\n"
    "  profiles.yaml: |\n"
    "    profiles:\n"
    "      - {name: light-training, gpuShare: true, maxMemory: 16Gi,"
    " overcommitRatio: 1.5, priority: 100, preemptible: false}\n";

/* A vGPU class and a step profile shape what bind takes, as on the API path. */
static void test_class_and_profile(void **state)
{
    (void)state;
    struct daemon d;
    char node[64];
    start(&d, class_policy, NULL);
    char *v0 = h_pod_annotated("team-b", "v0", 1, 0, "gpusched.io/vgpu-class", "shared-gpu-small");
    filter_bind(&d, v0, all, 3, node);
    free(v0);
    json_t *g = h_pod_get(&d, "team-b", "v0");
    assert_int_equal(num(g, "gpu_milli"), 100); /* the class's 10 % and 2 GiB, not a card */
    assert_int_equal(num(g, "gpumem_mib"), 2048);
    json_decref(g);

    json_t *p = h_pod_json("team-a", "p0", 1, 30);
    h_annotate(p, "gpusched.io/profile", "light-training");
    json_object_set_new(limits_of(p), "nvidia.com/gpumem", json_integer(20480));
    char *p0 = text_of(p);
    fails_with(&d, p0, "n-a100-0",
               "profile light-training: nvidia.com/gpumem 20480 MiB > maxMemory 16384 MiB");
    free(p0);
    char *p1 = h_pod_annotated("team-a", "p1", 1, 30, "gpusched.io/profile", "light-training");
    filter_bind(&d, p1, all, 3, node);
    free(p1);
    g = h_pod_get(&d, "team-a", "p1");
    assert_int_equal(num(g, "priority"), 100); /* the profile's */
    json_decref(g);
    stop(&d);
}

#define KSC                                                                                        \
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"    \
    "  - schedulerName: default-scheduler\n    plugins:\n      score:\n        enabled:\n"

/* The host prioritize scores highest for team-b's pod after team-a's runs on n-a100-0. */
static const char *top_after_team_a(const char *pol, char *out)
{
    struct daemon d;
    start(&d, pol, NULL);
    json_t *p = h_pod_json("team-a", "a1", 1, 0);
    json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string("n-a100-0"));
    json_decref(h_submit(&d, NULL, text_of(p), 201));
    char *b = h_pod("team-b", "b1", 1, 0);
    json_t *r = h_extender(&d, "prioritize", b, a100s, 2);
    free(b);
    assert_int_equal(json_array_size(r), 2);
    const json_t *x = json_array_get(r, 0), *y = json_array_get(r, 1);
    assert_int_not_equal(num(x, "Score"), num(y, "Score"));
    snprintf(out, 64, "%s",
             json_string_value(json_object_get(num(x, "Score") > num(y, "Score") ? x : y, "Host")));
    json_decref(r);
    stop(&d);
    return out;
}

/* The KubeSchedulerConfiguration's weights order prioritize's answer: the seed's keep team-b
 * off team-a's node (FairnessScore), GPUBinPacking 50 puts it there. */
static void test_score_weights(void **state)
{
    (void)state;
    char top[64];
    assert_string_equal(top_after_team_a(KSC "          - {name: FairnessScore, weight: 4}\n", top),
                        "n-a100-1");
    assert_string_equal(
        top_after_team_a(KSC "          - {name: GPUBinPacking, weight: 50}\n", top), "n-a100-0");
}

#define TOKEN_NODE   "node-token-0123456789abcdef"
#define T4_GPU(i, d) "{\"index\": " #i ", \"pcieDomain\": " #d ", \"nvlinkGroup\": null}"
/* The 4-card T4 box, its cards in two PCIe domains, (0,2) and (1,3). */
static const char t4_paired[] =
    "{\"gpus\": 4, \"gpuModel\": \"T4\", \"topology\": {\"gpus\": [" T4_GPU(0, 0) ", " T4_GPU(
        1, 1) ", " T4_GPU(2, 0) ", " T4_GPU(3, 1) "]}}";

/* The topology a node's agent registers picks the cards bind takes: a pair in one domain. */
static void test_registered_topology(void **state)
{
    (void)state;
    struct daemon d;
    char node[64];
    start(&d, NULL, "nodeToken: " TOKEN_NODE "\n");
    h_request(&d, "POST", "/v1/nodes/n-t4-0/register", TOKEN_NODE, t4_paired, 201);
    char *pair = h_pod_annotated("team-a", "pair", 2, 0, "gpusched.io/gpu-model", "T4");
    const char *t4[] = {"n-t4-0"};
    filter_bind(&d, pair, t4, 1, node);
    free(pair);
    json_t *g = h_pod_get(&d, "team-a", "pair");
    assert_string_equal(json_string_value(json_object_get(json_object_get(g, "annotations"),
                                                          "gpusched.io/gpu-index")),
                        "0,2");
    json_decref(g);
    stop(&d);
}

/* What a pod bound through the extender ran is billed from the rate card: one A100 card for an
 * hour, $8 (seed 000 section 4.2). */
static void test_billed(void **state)
{
    (void)state;
    struct daemon d;
    char node[64];
    assert_int_equal(h_setup(&d, NULL), 0);
    d.manual_clock = 1;
    assert_int_equal(h_start(&d), 0);
    char *pod = h_pod("team-a", "run", 1, 0);
    filter_bind(&d, pod, a100s, 2, node);
    free(pod);
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 3600}", 200);
    h_request(&d, "DELETE", "/v1/pods/team-a/run", TOKEN_ADMIN, NULL, 200);
    struct answer a;
    h_expect(&d, "GET", "/v1/bills", TOKEN_A, NULL, 200, &a);
    const json_t *l = json_array_get(json_object_get(a.json, "lines"), 0);
    assert_int_equal(json_array_size(json_object_get(a.json, "lines")), 1);
    assert_string_equal(json_string_value(json_object_get(l, "resource")),
                        "A100-SXM4-80GB exclusive");
    assert_int_equal(num(l, "quantity"), 3600);
    assert_string_equal(json_string_value(json_object_get(l, "cost")), "8.00");
    h_answer_free(&a);
    stop(&d);
}

/* A one-card T4 member of PodGroup pg-e, as JSON text. */
static char *member(const char *name)
{
    json_t *p = h_pod_json("team-a", name, 1, 0);
    h_annotate(p, "scheduling.k8s.io/group-name", "pg-e");
    h_annotate(p, "gpusched.io/gpu-model", "T4");
    return text_of(p);
}

/* An elastic PodGroup (minMember 2 of 5) offered the 4-card T4 box: minMember all or nothing,
 * its first two held by gpuschedd's scheduler (nominated) until both can be placed at once,
 * then the others pass filter and bind one by one while cards are free; the fifth finds none,
 * naming the cards, not the gang. */
static void test_elastic_podgroup(void **state)
{
    (void)state;
    struct daemon d;
    char node[64];
    start(&d, NULL, NULL);
    h_podgroup(&d, "team-a", "pg-e", 2, 201);
    const char *t4[] = {"n-t4-0"};
    /* with one card free, minMember 2 is all or nothing */
    char *m = h_pod_annotated("team-a", "blocker", 3, 0, "gpusched.io/gpu-model", "T4");
    json_decref(h_submit(&d, NULL, m, 201));
    m = member("e0");
    fails_on(&d, m, t4, 1, "n-t4-0", "gang pg-e: 2 members like this one are needed, 1 can be");
    free(m);
    h_request(&d, "DELETE", "/v1/pods/team-a/blocker", TOKEN_A, NULL, 200);
    m = member("e1"); /* e0 was held as it failed: e1 is, and both are placed then */
    fails_on(&d, m, t4, 1, "n-t4-0", "gang pg-e: its members bind together");
    free(m);
    for (int i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof(name), "e%d", i);
        m = member(name);
        for (int k = 0; i < 2 && k < 100; k++) { /* the nomination is taken after the answer */
            json_t *r = filter(&d, m, t4, 1);
            size_t n = json_array_size(json_object_get(r, "NodeNames"));
            json_decref(r);
            if (n)
                break;
            nanosleep(&(struct timespec){0, 50000000}, NULL);
        }
        if (i < 4) {
            filter_bind(&d, m, t4, 1, node);
        } else { /* the cards, not the gang */
            fails_on(&d, m, t4, 1, "n-t4-0", "Insufficient nvidia.com/gpu");
        }
        free(m);
    }
    struct answer a;
    h_expect(&d, "GET", "/v1/podgroups/team-a/pg-e", TOKEN_A, NULL, 200, &a);
    assert_int_equal(num(a.json, "running"), 4);
    h_answer_free(&a);
    stop(&d);
}

static const char tiers_policy[] =
    "apiVersion: v1\n"
    "kind: ConfigMap\n"
    "metadata: {name: topology-gpu-policy, namespace: kube-system}\n"
    "data:\n"
    "  policy.yaml: |\n"
    "    scheduling:\n"
    "      nvlink: {strategy: prefer-colocate, sharing: false}\n"
    "      pcie: {strategy: prefer-colocate, sharing: false}\n"
    "      node: {strategy: spread, sharing: true, overcommit: 1.5}\n";

/* A T4 pod of @gpus cards (a share of @cores % when 1..99) asking tier @tier, as JSON text. */
static char *tiered(const char *name, int gpus, int cores, const char *tier)
{
    json_t *p = h_pod_json("team-a", name, gpus, cores);
    h_annotate(p, "gpusched.io/gpu-model", "T4");
    h_annotate(p, "gpusched.io/topology", tier);
    return text_of(p);
}

/* Tiers as the topology policy sets them: nvlink as a preference places two T4 cards (no
 * NVLink there) where `colocate` would refuse; a tier without sharing takes no share of a card,
 * the node tier shares one. */
static void test_tiers(void **state)
{
    (void)state;
    struct daemon d;
    char node[64];
    const char *t4[] = {"n-t4-0"};
    start(&d, tiers_policy, NULL);
    char *p = tiered("pref", 2, 0, "nvlink");
    filter_bind(&d, p, t4, 1, node);
    free(p);
    const char *tier[] = {"pcie", "node"};
    const json_int_t milli[] = {1000, 300};
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), "%s-share", tier[i]);
        p = tiered(name, 1, 30, tier[i]);
        filter_bind(&d, p, t4, 1, node);
        free(p);
        json_t *g = h_pod_get(&d, "team-a", name);
        assert_int_equal(num(g, "gpu_milli"), milli[i]);
        json_decref(g);
    }
    stop(&d);
}

/* One A30 offered as 4 time-slice replicas (NVIDIA device plugin timeSlicing.replicas), and one
 * of a template giving no CPU or memory, which then bound no pod. */
static const char timeslice_nodes[] =
    "apiVersion: gpusched.io/v1alpha1\n"
    "kind: Cluster\n"
    "metadata: {name: ts}\n"
    "spec:\n"
    "  nodeTemplates:\n"
    "    - {name: a30-ts, gpuModel: A30, gpus: 1, cpuMilli: 32000, memoryMiB: 262144,\n"
    "       timeSlicing: {replicas: 4}}\n"
    "    - {name: bare, gpuModel: A30, gpus: 1}\n"
    "  nodes:\n"
    "    - {name: ts1, template: a30-ts}\n"
    "    - {name: plain, template: bare}\n";

/* Pod team-a/@name asking one time-slice replica (nvidia.com/gpu.shared) with 4 GiB: new ref. */
static json_t *replica_pod(const char *name)
{
    json_t *p = h_pod_json("team-a", name, 0, 0);
    json_t *lim = limits_of(p);
    json_object_del(lim, "nvidia.com/gpu");
    json_object_set_new(lim, "nvidia.com/gpu.shared", json_integer(1));
    json_object_set_new(lim, "nvidia.com/gpumem", json_integer(4096));
    return p;
}

/* Time-slice replicas through the extender: four pods bind to the one card, the fifth finds
 * none. */
/* A daemon of the time-sliced inventory above, on the manual clock when @manual. */
static void start_timeslice(struct daemon *d, int manual)
{
    assert_int_equal(h_setup(d, NULL), 0);
    d->manual_clock = manual;
    snprintf(d->nodes, sizeof(d->nodes), "%s/nodes.yaml", d->dir);
    assert_int_equal(h_write(d->nodes, timeslice_nodes), 0);
    assert_int_equal(h_start(d), 0);
}

static void test_timeslice(void **state)
{
    (void)state;
    struct daemon d;
    char node[64];
    const char *ts1[] = {"ts1"};
    start_timeslice(&d, 0);
    for (int i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof(name), "r%d", i);
        json_t *p = replica_pod(name);
        char *m = text_of(p);
        if (i < 4) {
            filter_bind(&d, m, ts1, 1, node);
        } else {
            fails_on(&d, m, ts1, 1, "ts1", "Insufficient nvidia.com/gpu.shared");
        }
        free(m);
    }
    struct answer a;
    h_expect(&d, "GET", "/v1/nodes/ts1", TOKEN_ADMIN, NULL, 200, &a);
    const json_t *card = json_array_get(json_object_get(a.json, "gpu"), 0);
    assert_string_equal(json_string_value(json_object_get(card, "mode")), "timesliced");
    assert_int_equal(json_array_size(json_object_get(card, "pods")), 4);
    assert_int_equal(json_integer_value(json_object_get(a.json, "cpu_milli")), 32000);
    assert_int_equal(json_integer_value(json_object_get(a.json, "memory_mib")), 262144);
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/nodes/plain", TOKEN_ADMIN, NULL, 200, &a); /* null, not 2^40 */
    static const char *const unbounded[] = {"cpu_milli", "cpu_milli_free", "memory_mib",
                                            "memory_mib_free"};
    for (int k = 0; k < 4; k++)
        assert_true(json_is_null(json_object_get(a.json, unbounded[k])));
    h_answer_free(&a);
    /* one posted that finds no replica waits short of replicas, not of cards, and is counted
     * so (the fifth above, held for kube-scheduler, may use ts1 only: "affinity" elsewhere) */
    json_t *got = h_submit(&d, TOKEN_A, text_of(replica_pod("r5")), 201);
    assert_non_null(strstr(json_string_value(json_object_get(got, "reason")),
                           "Insufficient nvidia.com/gpu.shared."));
    json_decref(got);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(h_call(&d, "GET", "/metrics", NULL, NULL, &a), 0);
        int seen = a.body && strstr(a.body, "gpusched_pending_pods{reason=\"Insufficient "
                                            "nvidia.com/gpu.shared\"} 1\n");
        if (!seen && i == 99)
            fail_msg("no pending replica counted: %s",
                     a.body && strstr(a.body, "gpusched_pending_pods")
                         ? strstr(a.body, "gpusched_pending_pods")
                         : "(no gpusched_pending_pods)");
        h_answer_free(&a);
        if (seen)
            break;
        usleep(50000);
    }
    stop(&d);
}

/* POST /v1/clock with the admin token, @body: its next_end_us. */
static long long next_end(const struct daemon *d, const char *body)
{
    struct answer a;
    h_expect(d, "POST", "/v1/clock", TOKEN_ADMIN, body, 200, &a);
    long long v = (long long)json_integer_value(json_object_get(a.json, "next_end_us"));
    h_answer_free(&a);
    return v;
}

/* A pod slowed by a time-sliced card's other pod keeps the progress it made across a reload
 * (SIGHUP: a new scheduler of the pods held), not the progress a run at its new speed since its
 * start would have made: two pods keeping the card busy run at half speed for 40 s, so the one
 * left has 80 s of its 100 s still to do. */
static void test_progress_kept(void **state)
{
    (void)state;
    struct daemon d;
    start_timeslice(&d, 1);
    for (int i = 0; i < 2; i++) {
        char name[8];
        snprintf(name, sizeof(name), "s%d", i);
        json_t *p = replica_pod(name);
        h_annotate(p, "sim.gpusched.io/duration", i ? "1000s" : "100s");
        json_decref(h_submit(&d, TOKEN_A, text_of(p), 201));
    }
    assert_int_equal(next_end(&d, "{\"advance_seconds\": 40}"), 200000000); /* half speed */
    h_request(&d, "DELETE", "/v1/pods/team-a/s1", TOKEN_A, NULL, 200);
    assert_int_equal(h_reload(&d), 0);
    assert_int_equal(next_end(&d, "{\"advance_seconds\": 1}"), 120000000);
    stop(&d);
}

static const char classes[] = "apiVersion: scheduling.k8s.io/v1\n"
                              "kind: PriorityClass\n"
                              "metadata: {name: high}\n"
                              "value: 1000\n"
                              "---\n"
                              "apiVersion: scheduling.k8s.io/v1\n"
                              "kind: PriorityClass\n"
                              "metadata: {name: top}\n"
                              "value: 2000\n";

/* A T4 pod of @gpus cards of PriorityClass @pclass (NULL: none), as JSON text. */
static char *t4_pod(const char *name, int gpus, const char *pclass)
{
    json_t *p = h_pod_json("team-a", name, gpus, 0);
    h_annotate(p, "gpusched.io/gpu-model", "T4");
    if (pclass)
        json_object_set_new(json_object_get(p, "spec"), "priorityClassName", json_string(pclass));
    return text_of(p);
}

/* Pod team-a/@name comes to state @want within 10 s: filter hands a pod to the scheduler
 * after its answer. */
static void state_is(const struct daemon *d, const char *name, const char *want)
{
    char path[96], got[32] = "(none)";
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    for (int i = 0; i < 1000 && strcmp(got, want); i++) {
        struct answer a;
        if (i)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
        if (h_call(d, "GET", path, TOKEN_ADMIN, NULL, &a) == 0 && a.status == 200)
            snprintf(got, sizeof(got), "%s", json_string_value(json_object_get(a.json, "state")));
        h_answer_free(&a);
    }
    if (strcmp(got, want))
        fail_msg("team-a/%s: %s, expected %s", name, got, want);
}

/* Pods filter finds no node for wait in the scheduler's queue (nominated), and room that
 * appears goes in GPUQueueSort's order: the later pod of higher priority first. */
static void test_pending_order(void **state)
{
    (void)state;
    struct daemon d;
    const char *t4[] = {"n-t4-0"};
    start(&d, classes, NULL);
    json_decref(h_submit(&d, NULL, t4_pod("blocker", 4, "top"), 201));
    char *lo = t4_pod("lo", 3, NULL), *hi = t4_pod("hi", 3, "high");
    fails_on(&d, lo, t4, 1, "n-t4-0", "Insufficient nvidia.com/gpu");
    fails_on(&d, hi, t4, 1, "n-t4-0", "Insufficient nvidia.com/gpu");
    state_is(&d, "lo", "pending");
    state_is(&d, "hi", "pending");
    h_request(&d, "DELETE", "/v1/pods/team-a/blocker", TOKEN_A, NULL, 200);
    state_is(&d, "hi", "allocated"); /* placed, its cards held, not bound yet */
    state_is(&d, "lo", "pending");
    json_t *r = filter(&d, hi, t4, 1); /* kube-scheduler binds it where it was placed */
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 1);
    json_decref(r);
    free(lo);
    free(hi);
    stop(&d);
}

/* An A100 pod of @gpus cards of PriorityClass @pclass (NULL: none) on node @node (NULL: any). */
static char *a100_pod(const char *name, int gpus, const char *pclass, const char *node)
{
    json_t *p = h_pod_json("team-a", name, gpus, 0), *spec = json_object_get(p, "spec");
    h_annotate(p, "gpusched.io/gpu-model", "A100-SXM4-80GB");
    if (pclass)
        json_object_set_new(spec, "priorityClassName", json_string(pclass));
    if (node)
        json_object_set_new(spec, "nodeName", json_string(node));
    return text_of(p);
}

/* A pod filter finds no node for is placed, and evicted for, only among the nodes kube-scheduler
 * offered (those its own filters passed: affinity, taints...): never on a node it could not bind
 * to, however cheap the victims there. */
static void test_nominated_within_offered(void **state)
{
    (void)state;
    struct daemon d;
    const char *one[] = {"n-a100-1"};
    start(&d, classes, NULL);
    json_decref(h_submit(&d, NULL, a100_pod("cheap", 8, NULL, "n-a100-0"), 201));
    json_decref(h_submit(&d, NULL, a100_pod("dear", 8, "high", "n-a100-1"), 201));
    char *top = a100_pod("top", 8, "top", NULL);
    fails_on(&d, top, one, 1, "n-a100-1", "Insufficient nvidia.com/gpu");
    state_is(&d, "dear", "pending"); /* evicted, on the node offered */
    state_is(&d, "cheap", "running");
    json_t *v = h_pod_get(&d, "team-a", "top");
    assert_string_equal(json_string_value(json_object_get(v, "node")), "n-a100-1");
    json_decref(v);
    /* kube-scheduler's own preemption for it (a node short of CPU or a host port it checks)
     * gets no victim on another node: its cards are held, its victims already evicted */
    v = h_pod_get(&d, "team-a", "cheap");
    json_t *r = h_verb(&d, "preempt",
                       json_pack("{s:o, s:{s:{s:[{s:s}]}}}", "Pod", json_loads(top, 0, NULL),
                                 "NodeNameToMetaVictims", "n-a100-0", "Pods", "UID",
                                 json_string_value(json_object_get(v, "uid"))));
    json_decref(v);
    assert_int_equal(json_object_size(json_object_get(r, "NodeNameToMetaVictims")), 0);
    json_decref(r);
    free(top);
    /* the nodes offered outlive a restart: a pod nominated with no room on them is not placed
     * on another node that frees up after it, only on one of them */
    h_request(&d, "DELETE", "/v1/pods/team-a/top", TOKEN_ADMIN, NULL, 200);
    state_is(&d, "dear", "running"); /* back on n-a100-1 */
    char *late = a100_pod("late", 8, NULL, NULL);
    fails_on(&d, late, one, 1, "n-a100-1", "Insufficient nvidia.com/gpu");
    free(late);
    state_is(&d, "late", "pending");
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    h_request(&d, "DELETE", "/v1/pods/team-a/cheap", TOKEN_ADMIN, NULL, 200);
    state_is(&d, "late", "pending");
    h_request(&d, "DELETE", "/v1/pods/team-a/dear", TOKEN_ADMIN, NULL, 200);
    state_is(&d, "late", "allocated");
    v = h_pod_get(&d, "team-a", "late");
    assert_string_equal(json_string_value(json_object_get(v, "node")), "n-a100-1");
    json_decref(v);
    stop(&d);
}

/* The churn guard holds for preemptors kube-scheduler brings: a pod an extender pod evicted and
 * that runs again is spared a while, so the next such preemptor waits. */
static void test_churn_guard(void **state)
{
    (void)state;
    struct daemon d;
    char node[64];
    const char *t4[] = {"n-t4-0"};
    start(&d, classes, NULL);
    json_decref(h_submit(&d, NULL, t4_pod("v", 4, NULL), 201));
    char *e1 = t4_pod("e1", 4, "high"), *e2 = t4_pod("e2", 4, "high");
    fails_on(&d, e1, t4, 1, "n-t4-0", "Insufficient nvidia.com/gpu"); /* nominated: evicts v */
    state_is(&d, "v", "pending");
    filter_bind(&d, e1, t4, 1, node);
    h_request(&d, "DELETE", "/v1/pods/team-a/e1", TOKEN_ADMIN, NULL, 200);
    state_is(&d, "v", "running"); /* run again */
    fails_on(&d, e2, t4, 1, "n-t4-0", "Insufficient nvidia.com/gpu");
    state_is(&d, "e2", "pending");
    json_t *g = h_pod_get(&d, "team-a", "e2"); /* the scheduler has tried it: v is spared */
    const char *why = json_string_value(json_object_get(g, "reason"));
    if (!why || !strstr(why, "Insufficient nvidia.com/gpu"))
        fail_msg("e2: %s", why ? why : "(no reason)");
    json_decref(g);
    state_is(&d, "v", "running");
    free(e1);
    free(e2);
    stop(&d);
}

/* A pod kube-scheduler hands over is its own, whatever profile (schedulerName) it names: bound,
 * and still running after a restart. */
static void test_profile_name(void **state)
{
    (void)state;
    struct daemon d;
    char node[64];
    start(&d, NULL, NULL);
    json_t *p = h_pod_json("team-a", "named", 1, 0);
    json_object_set_new(json_object_get(p, "spec"), "schedulerName", json_string("gpu-scheduler"));
    char *named = text_of(p);
    filter_bind(&d, named, a100s, 2, node);
    free(named);
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    json_t *g = h_pod_get(&d, "team-a", "named");
    const char *st = json_string_value(json_object_get(g, "state"));
    const char *on = json_string_value(json_object_get(g, "node"));
    if (!st || strcmp(st, "running") || !on || strcmp(on, node))
        fail_msg("after a restart: %s", json_dumps(g, JSON_COMPACT));
    json_decref(g);
    stop(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_queue_capability),
        cmocka_unit_test(test_class_and_profile),
        cmocka_unit_test(test_score_weights),
        cmocka_unit_test(test_registered_topology),
        cmocka_unit_test(test_billed),
        cmocka_unit_test(test_elastic_podgroup),
        cmocka_unit_test(test_tiers),
        cmocka_unit_test(test_timeslice),
        cmocka_unit_test(test_progress_kept),
        cmocka_unit_test(test_pending_order),
        cmocka_unit_test(test_nominated_within_offered),
        cmocka_unit_test(test_churn_guard),
        cmocka_unit_test(test_profile_name),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
