/*
 * What a Pod posted to gpuschedd asks is honoured or refused, never accepted and ignored: the
 * gpusched.io/vgpu-class, gpusched.io/topology and gpusched.io/profile annotations act as in a
 * simulated run; spec.nodeName and nodeSelector hold a pod to nodes, tolerations let it onto
 * tainted ones (and bad ones are refused naming the field); affinity is refused naming the field;
 * init containers count as Kubernetes counts them; a PriorityClass, queue, step profile or GPU
 * model that gives the pod nothing is a 400, so are a pod of another scheduler and a label an API
 * server would refuse; a DaemonConfig policy the daemon does not run stops the start. The
 * scheduler's own rules seen through the API: a pending reason says when free cards are spread too
 * thin, a tier-less pod keeps to one NVLink bridge, an elastic PodGroup runs what fits and loses
 * its members beyond minMember first, the az tier isolates tenants by node and a prefer-colocate
 * tier is a preference.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char policy[] = "apiVersion: gpu.example.com/v1\n"
                             "kind: VirtualGPUClass\n"
                             "metadata: {name: shared-gpu-small}\n"
                             "spec: {driver: vgpu, profile: quadro-v100-2q, memory: 2gb, cores: 10,"
                             " computeCap: 7.0, isShareable: true, maxClients: 8}\n"
                             "---\n"
                             "apiVersion: v1\n"
                             "kind: ConfigMap\n"
                             "metadata: {name: kubeflow-gpu-profiles, namespace: kubeflow}\n"
                             "data:\n"
                             "  profiles.yaml: |\n"
                             "    profiles:\n"
                             "      - {name: light-training, gpuShare: true, maxMemory: 16Gi,"
                             " overcommitRatio: 1.5, priority: 100, preemptible: false}\n"
                             "---\n"
                             "apiVersion: gpu.example.com/v1\n"
                             "kind: GPUQuota\n"
                             "metadata: {name: team-b-quota, namespace: team-b}\n"
                             "spec:\n"
                             "  tenant: team-b\n"
                             "  quotas:\n"
                             "    a100-80gb: {total: 16, dedicated: 8, shared: 8}\n"
                             "---\n"
                             "apiVersion: scheduling.k8s.io/v1\n"
                             "kind: PriorityClass\n"
                             "metadata: {name: high}\n"
                             "value: 1000\n"
                             "---\n"
                             "apiVersion: scheduling.k8s.io/v1\n"
                             "kind: PriorityClass\n"
                             "metadata: {name: polite}\n"
                             "value: 1000\n"
                             "preemptionPolicy: Never\n";

static json_t *spec_of(json_t *pod)
{
    return json_object_get(pod, "spec");
}

/* POST @pod (consumed) as its namespace's tenant: the answer's JSON when @status came. */
static json_t *post(const struct daemon *d, json_t *pod, long status)
{
    char *body = json_dumps(pod, JSON_COMPACT);
    const char *token = h_token_of(
        json_string_value(json_object_get(json_object_get(pod, "metadata"), "namespace")));
    json_decref(pod);
    return h_submit(d, token, body, status);
}

/* POST @pod, expecting a 400 naming @field and saying @says. */
static void refused(const struct daemon *d, json_t *pod, const char *field, const char *says)
{
    json_t *a = post(d, pod, 400);
    const char *f = json_string_value(json_object_get(a, "field"));
    const char *e = json_string_value(json_object_get(a, "error"));
    if (!f || strcmp(f, field) || !e || !strstr(e, says))
        fail_msg("400 with field \"%s\" (%s), expected \"%s\" saying \"%s\"", f ? f : "",
                 e ? e : "", field, says);
    json_decref(a);
}

static const char *sget(const json_t *j, const char *k)
{
    const char *s = json_string_value(json_object_get(j, k));
    return s ? s : "";
}

static void pod_is(const struct daemon *d, const char *ns, const char *name, const char *state,
                   const char *why)
{
    json_t *p = h_pod_get(d, ns, name);
    if (strcmp(sget(p, "state"), state) || (why && !strstr(sget(p, "reason"), why)))
        fail_msg("%s/%s: %s (%s), expected %s with \"%s\"", ns, name, sget(p, "state"),
                 sget(p, "reason"), state, why ? why : "");
    json_decref(p);
}

static void start(struct daemon *d, const char *extra)
{
    assert_int_equal(h_setup(d, extra), 0);
    assert_int_equal(h_policy(d, policy), 0);
    assert_int_equal(h_start(d), 0);
}

/* team-b's GPUQuota use of its A100s, milli-GPU: dedicated and shared. */
static void team_b_use(const struct daemon *d, json_int_t *ded, json_int_t *sh)
{
    struct answer a;
    h_expect(d, "GET", "/v1/tenants/team-b", TOKEN_B, NULL, 200, &a);
    json_t *m = json_array_get(json_object_get(json_object_get(a.json, "quota"), "models"), 0);
    json_t *used = json_object_get(m, "used");
    *ded = json_integer_value(json_object_get(used, "dedicated"));
    *sh = json_integer_value(json_object_get(used, "shared"));
    h_answer_free(&a);
}

static void test_annotations(void **state)
{
    (void)state;
    struct daemon d;
    json_int_t ded, sh;
    start(&d, NULL);

    /* A vGPU class: the class's slice (10 % and 2 GiB of one card), counted as shared use. */
    json_t *v = h_pod_json("team-b", "v0", 1, 0);
    h_annotate(v, "gpusched.io/vgpu-class", "shared-gpu-small");
    json_t *a = post(&d, v, 201);
    assert_string_equal(sget(a, "state"), "running");
    assert_int_equal(json_integer_value(json_object_get(a, "gpu_milli")), 100);
    assert_int_equal(json_integer_value(json_object_get(a, "gpumem_mib")), 2048);
    json_decref(a);
    team_b_use(&d, &ded, &sh);
    assert_int_equal(ded, 0);
    assert_int_equal(sh, 100);
    v = h_pod_json("team-b", "v1", 1, 0);
    h_annotate(v, "gpusched.io/vgpu-class", "no-such-class");
    refused(&d, v, "metadata.annotations.gpusched.io/vgpu-class",
            "VirtualGPUClass no-such-class is not defined");
    /* the slice comes through nvidia.com/gpu's device plugin: a class alone gets no card */
    v = h_pod_json("team-b", "v2", 0, 0);
    h_annotate(v, "gpusched.io/vgpu-class", "shared-gpu-small");
    refused(&d, v, "metadata.annotations.gpusched.io/vgpu-class",
            "annotation gpusched.io/vgpu-class needs nvidia.com/gpu");

    /* A topology tier: T4 cards have no NVLink, so a pod that must have its two in one NVLink
     * group could never run and is refused; the same pod without the tier runs there. */
    json_t *t = h_pod_json("team-a", "t0", 2, 0);
    h_annotate(t, "gpusched.io/topology", "nvlink");
    h_annotate(t, "gpusched.io/gpu-model", "T4");
    refused(&d, t, "metadata.annotations.gpusched.io/topology",
            "tier nvlink: its 2 GPUs must be in one NVLink group; the nodes it may use have no "
            "NVLink");
    t = h_pod_json("team-a", "t1", 2, 0);
    h_annotate(t, "gpusched.io/gpu-model", "T4");
    a = post(&d, t, 201);
    assert_string_equal(sget(a, "node"), "n-t4-0");
    json_decref(a);

    /* A step profile: its bounds and its priority hold; one not defined is refused. */
    json_t *p = h_pod_json("team-a", "p0", 1, 30);
    h_annotate(p, "gpusched.io/profile", "no-such-profile");
    refused(&d, p, "metadata.annotations.gpusched.io/profile",
            "step profile no-such-profile is not defined");
    p = h_pod_json("team-a", "p1", 1, 30);
    h_annotate(p, "gpusched.io/profile", "light-training");
    json_object_set_new(
        json_object_get(
            json_object_get(json_array_get(json_object_get(spec_of(p), "containers"), 0),
                            "resources"),
            "limits"),
        "nvidia.com/gpumem", json_integer(20480));
    refused(&d, p, "metadata.annotations.gpusched.io/profile",
            "profile light-training: nvidia.com/gpumem 20480 MiB > maxMemory 16384 MiB");
    p = h_pod_json("team-a", "p2", 1, 30);
    h_annotate(p, "gpusched.io/profile", "light-training");
    a = post(&d, p, 201);
    assert_int_equal(json_integer_value(json_object_get(a, "priority")), 100);
    json_decref(a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Tiers as the seed's policy gives them (000 §3.1): team-a's pods ask az (hard isolation), and
 * nvlink is a preference (prefer-colocate). */
static const char tiers[] = "apiVersion: v1\nkind: ConfigMap\n"
                            "metadata: {name: topology-gpu-policy, namespace: kube-system}\n"
                            "data:\n  policy.yaml: |\n    scheduling:\n"
                            "      nvlink: {strategy: prefer-colocate, sharing: false, isolation: "
                            "exclusive}\n"
                            "      az: {strategy: spread, sharing: false, isolation: hard}\n"
                            "    tenants:\n      team-a: {topology: az}\n";

static void start_tiers(struct daemon *d)
{
    assert_int_equal(h_setup(d, NULL), 0);
    assert_int_equal(h_policy(d, tiers), 0);
    assert_int_equal(h_start(d), 0);
}

/* The az tier's hard isolation through POST /v1/pods and the extender: a node that holds
 * team-a's pod takes no team-b pod, and team-a's next pod keeps off team-b's node. */
static void test_az_isolation(void **state)
{
    (void)state;
    struct daemon d;
    start_tiers(&d);
    json_t *p = h_pod_json("team-a", "a0", 1, 0);
    h_annotate(p, "gpusched.io/gpu-model", "A100-SXM4-80GB");
    json_t *a = post(&d, p, 201);
    char mine[32], other[32];
    snprintf(mine, sizeof(mine), "%s", sget(a, "node"));
    json_decref(a);
    snprintf(other, sizeof(other), "%s", strcmp(mine, "n-a100-0") ? "n-a100-0" : "n-a100-1");
    p = h_pod_json("team-b", "b0", 1, 0);
    h_annotate(p, "gpusched.io/gpu-model", "A100-SXM4-80GB");
    a = post(&d, p, 201);
    assert_string_equal(sget(a, "node"), other); /* not beside team-a's pod */
    json_decref(a);
    p = h_pod_json("team-a", "a1", 1, 0);
    h_annotate(p, "gpusched.io/gpu-model", "A100-SXM4-80GB");
    a = post(&d, p, 201);
    assert_string_equal(sget(a, "node"), mine); /* not beside team-b's */
    json_decref(a);
    p = h_pod_json("team-b", "b1", 8, 0); /* the only free A100 board is team-a's */
    h_annotate(p, "gpusched.io/gpu-model", "A100-SXM4-80GB");
    json_decref(post(&d, p, 201));
    pod_is(&d, "team-b", "b1", "pending", NULL);
    const char *nodes[] = {mine};
    char *body = h_pod("team-b", "x", 1, 0);
    json_t *r = h_extender(&d, "filter", body, nodes, 1);
    free(body);
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "FailedNodes"), mine)),
                        "hard isolation: node used by another tenant");
    json_decref(r);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A tier as a preference (prefer-colocate): a 2-card nvlink pod on T4s, which have no NVLink,
 * runs there (with colocate it is refused: test_annotations), and the extender passes the node. */
static void test_prefer_colocate(void **state)
{
    (void)state;
    struct daemon d;
    start_tiers(&d);
    static const char *const t4[] = {"n-t4-0"};
    json_t *t = h_pod_json("team-b", "t0", 2, 0);
    h_annotate(t, "gpusched.io/topology", "nvlink");
    h_annotate(t, "gpusched.io/gpu-model", "T4");
    char *body = json_dumps(t, JSON_COMPACT);
    json_t *r = h_extender(&d, "filter", body, t4, 1);
    free(body);
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 1);
    json_decref(r);
    json_t *a = post(&d, t, 201);
    assert_string_equal(sget(a, "state"), "running");
    assert_string_equal(sget(a, "node"), "n-t4-0");
    json_decref(a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_nodes(void **state)
{
    (void)state;
    struct daemon d;
    start(&d, NULL);
    /* spec.nodeName: the second board, though the first scores as well */
    json_t *p = h_pod_json("team-a", "n0", 1, 0);
    json_object_set_new(spec_of(p), "nodeName", json_string("n-a100-1"));
    json_t *a = post(&d, p, 201);
    assert_string_equal(sget(a, "node"), "n-a100-1");
    json_decref(a);
    /* ... and nowhere else: no room there, it waits saying so */
    p = h_pod_json("team-a", "n1", 8, 0);
    json_object_set_new(spec_of(p), "nodeName", json_string("n-a100-1"));
    json_decref(post(&d, p, 201));
    pod_is(&d, "team-a", "n1", "pending", "node n-a100-1: Insufficient nvidia.com/gpu");
    p = h_pod_json("team-a", "n2", 1, 0);
    json_object_set_new(spec_of(p), "nodeName", json_string("n-nowhere"));
    refused(&d, p, "spec.nodeName", "node n-nowhere is not in the cluster");

    /* nodeSelector on the labels every node carries */
    p = h_pod_json("team-a", "s0", 1, 0);
    json_object_set_new(spec_of(p), "nodeSelector",
                        json_pack("{s:s}", "kubernetes.io/hostname", "n-t4-0"));
    a = post(&d, p, 201);
    assert_string_equal(sget(a, "node"), "n-t4-0");
    json_decref(a);
    p = h_pod_json("team-a", "s9", 1, 0); /* a name none has: the field it came from named */
    json_object_set_new(spec_of(p), "nodeSelector",
                        json_pack("{s:s}", "kubernetes.io/hostname", "n-nowhere"));
    refused(&d, p, "spec.nodeSelector.kubernetes.io/hostname",
            "node n-nowhere is not in the cluster");
    p = h_pod_json("team-a", "s1", 1, 0);
    json_object_set_new(spec_of(p), "nodeName", json_string("n-a100-0"));
    json_object_set_new(spec_of(p), "nodeSelector",
                        json_pack("{s:s}", "kubernetes.io/hostname", "n-t4-0"));
    refused(&d, p, "spec.nodeSelector.kubernetes.io/hostname", "name different nodes");
    p = h_pod_json("team-a", "s2", 1, 0);
    json_object_set_new(spec_of(p), "nodeSelector", json_pack("{s:s}", "disktype", "ssd"));
    refused(&d, p, "spec.nodeSelector.disktype", "nodeSelector \"disktype\" is not interpreted");

    /* affinity: refused, unless empty; tolerations Kubernetes would refuse: refused */
    p = h_pod_json("team-a", "x0", 1, 0);
    json_object_set_new(spec_of(p), "tolerations",
                        json_pack("[{s:s, s:s, s:s}]", "key", "nvidia.com/gpu", "operator",
                                  "Exists", "value", "present"));
    refused(&d, p, "spec.tolerations[0].value", "operator Exists takes no value");
    p = h_pod_json("team-a", "x0", 1, 0);
    json_object_set_new(spec_of(p), "tolerations",
                        json_pack("[{s:s, s:s}]", "key", "k", "operator", "Lt"));
    refused(&d, p, "spec.tolerations[0].operator", "Lt: expected Equal or Exists");
    p = h_pod_json("team-a", "x0", 1, 0);
    json_object_set_new(spec_of(p), "tolerations",
                        json_pack("[{s:s, s:s, s:i}]", "key", "k", "effect", "NoSchedule",
                                  "tolerationSeconds", 60));
    refused(&d, p, "spec.tolerations[0].tolerationSeconds", "needs effect NoExecute");
    p = h_pod_json("team-a", "x1", 1, 0);
    json_object_set_new(spec_of(p), "affinity",
                        json_pack("{s:{s:[{s:s}]}}", "podAntiAffinity",
                                  "requiredDuringSchedulingIgnoredDuringExecution", "topologyKey",
                                  "kubernetes.io/hostname"));
    refused(&d, p, "spec.affinity", "spec.affinity is not interpreted");
    p = h_pod_json("team-a", "x2", 1, 0);
    json_object_set_new(spec_of(p), "tolerations", json_array());
    json_decref(post(&d, p, 201));
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A container of @gpus cards. */
static json_t *container(const char *name, int gpus)
{
    return json_pack("{s:s, s:{s:{s:i}}}", "name", name, "resources", "limits", "nvidia.com/gpu",
                     gpus);
}

static void test_init_containers(void **state)
{
    (void)state;
    struct daemon d;
    start(&d, NULL);
    /* the larger of the biggest init container (4) and the app containers together (1) */
    json_t *p = h_pod_json("team-a", "i0", 1, 0);
    json_object_set_new(spec_of(p), "initContainers", json_pack("[o]", container("init", 4)));
    json_t *a = post(&d, p, 201);
    assert_int_equal(json_array_size(json_object_get(a, "gpus")), 4);
    json_decref(a);
    /* ... and the other way: init 3, app 2 + 2 */
    p = h_pod_json("team-a", "i1", 2, 0);
    json_array_append_new(json_object_get(spec_of(p), "containers"), container("side", 2));
    json_object_set_new(spec_of(p), "initContainers", json_pack("[o]", container("init", 3)));
    a = post(&d, p, 201);
    assert_int_equal(json_array_size(json_object_get(a, "gpus")), 4);
    json_decref(a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_names_that_give_nothing(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0); /* no policy file: no PriorityClass, no Queue */
    assert_int_equal(h_start(&d), 0);
    json_t *p = h_pod_json("team-a", "c0", 1, 0);
    json_object_set_new(spec_of(p), "priorityClassName", json_string("high"));
    refused(&d, p, "spec.priorityClassName", "no PriorityClass with name high");
    /* the built-in classes outrank every tenant's pods: a tenant token took them and preempted */
    p = h_pod_json("team-a", "c1", 1, 0);
    json_object_set_new(spec_of(p), "priorityClassName", json_string("system-cluster-critical"));
    json_t *a = post(&d, p, 403);
    assert_string_equal(sget(a, "field"), "spec.priorityClassName");
    assert_non_null(strstr(sget(a, "error"), "only the admin token may name it"));
    json_decref(a);
    p = h_pod_json("team-a", "c1", 1, 0);
    json_object_set_new(spec_of(p), "priorityClassName", json_string("system-node-critical"));
    char *body = json_dumps(p, JSON_COMPACT);
    json_decref(p);
    json_decref(h_submit(&d, TOKEN_ADMIN, body, 201));
    p = h_pod_json("team-a", "q0", 1, 0);
    h_annotate(p, "scheduling.volcano.sh/queue-name", "no-such-queue");
    refused(&d, p, "metadata.annotations.scheduling.volcano.sh/queue-name",
            "queue no-such-queue does not exist (queues: default)");
    p = h_pod_json("team-a", "q1", 1, 0);
    h_annotate(p, "scheduling.volcano.sh/queue-name", "default");
    json_decref(post(&d, p, 201));
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);

    /* team-b's GPUQuota lists the A100 only: a pod allowed only T4s could never run */
    start(&d, NULL);
    p = h_pod_json("team-b", "m0", 1, 0);
    h_annotate(p, "gpusched.io/gpu-model", "T4");
    refused(&d, p, "metadata.annotations.gpusched.io/gpu-model",
            "tenant team-b: its GPUQuota gives none of the GPU models this pod allows");
    /* ... and said by a nodeSelector, the refusal names it, not an annotation the pod lacks */
    p = h_pod_json("team-b", "m2", 1, 0);
    json_object_set_new(spec_of(p), "nodeSelector",
                        json_pack("{s:s}", "nvidia.com/gpu.product", "Tesla-T4"));
    refused(&d, p, "spec.nodeSelector.nvidia.com/gpu.product",
            "tenant team-b: its GPUQuota gives none of the GPU models this pod allows");
    /* both given: both hold (the nodeSelector, read after the annotation, replaced it) */
    p = h_pod_json("team-b", "m3", 1, 0);
    h_annotate(p, "gpusched.io/gpu-model", "A100-SXM4-80GB");
    json_object_set_new(spec_of(p), "nodeSelector",
                        json_pack("{s:s}", "nvidia.com/gpu.product", "Tesla-T4"));
    refused(&d, p, "spec.nodeSelector.nvidia.com/gpu.product", "name no model in common");
    p = h_pod_json("team-b", "m1", 1, 0);
    h_annotate(p, "gpusched.io/gpu-model", "T4|A100-SXM4-80GB");
    a = post(&d, p, 201);
    assert_string_equal(sget(a, "state"), "running");
    json_decref(a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* What Kubernetes' API server would refuse, or a pod of another scheduler, is a 400 naming the
 * field; a pod asking more memory than any node has waits saying so. */
static void test_not_ours(void **state)
{
    (void)state;
    struct daemon d;
    start(&d, NULL);
    json_t *p = h_pod_json("team-a", "s0", 1, 0);
    json_object_set_new(spec_of(p), "schedulerName", json_string("volcano"));
    refused(&d, p, "spec.schedulerName",
            "schedulerName volcano names another scheduler: this one is default-scheduler; write "
            "schedulerName: default-scheduler, or load a KubeSchedulerConfiguration whose profile "
            "has schedulerName: volcano");
    p = h_pod_json("team-a", "s1", 1, 0);
    json_object_set_new(spec_of(p), "schedulerName", json_string("default-scheduler"));
    json_decref(post(&d, p, 201));
    p = h_pod_json("team-a", "l0", 1, 0);
    json_object_set_new(json_object_get(json_object_get(p, "metadata"), "labels"), "app",
                        json_string("web server"));
    refused(&d, p, "metadata.labels.app", "label app: value web server: expected at most 63");
    p = h_pod_json("team-a", "l1", 1, 0);
    json_object_set_new(json_object_get(json_object_get(p, "metadata"), "labels"), "a/b/c",
                        json_string("x"));
    refused(&d, p, "metadata.labels.a/b/c", "label key a/b/c: expected");
    p = h_pod_json("team-a", "m0", 1, 0);
    json_object_set_new(
        json_object_get(
            json_object_get(json_array_get(json_object_get(spec_of(p), "containers"), 0),
                            "resources"),
            "limits"),
        "memory", json_string("1Ei"));
    json_decref(post(&d, p, 201));
    pod_is(&d, "team-a", "m0", "pending",
           "; no node has 1099511627776 MiB of memory, the most is 786432.");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Pod @name of team-a, @gpus cards, of PriorityClass @cls, saying preemptionPolicy @preempt. */
static json_t *classed(const char *name, int gpus, const char *cls, const char *preempt)
{
    json_t *p = h_pod_json("team-a", name, gpus, 0);
    json_object_set_new(spec_of(p), "priorityClassName", json_string(cls));
    json_object_set_new(spec_of(p), "preemptionPolicy", json_string(preempt));
    return p;
}

/* The PodSpec fields that change scheduling in Kubernetes: activeDeadlineSeconds ends the pod on
 * the manual clock, overhead counts with its requests, preemptionPolicy: Never keeps a pod from
 * preempting and must be its class's; schedulingGates, resourceClaims, host ports and a
 * PersistentVolumeClaim volume are refused naming the field, an empty list of gates and an
 * emptyDir or configMap volume are not. */
static void test_run_fields(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    d.manual_clock = 1;
    assert_int_equal(h_policy(&d, policy), 0);
    assert_int_equal(h_start(&d), 0);
    json_t *p = h_pod_json("team-a", "dl", 1, 0);
    json_object_set_new(spec_of(p), "activeDeadlineSeconds", json_integer(600));
    json_decref(post(&d, p, 201));
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 599}", 200);
    pod_is(&d, "team-a", "dl", "running", NULL);
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 1}", 200);
    h_request(&d, "GET", "/v1/pods/team-a/dl", TOKEN_ADMIN, NULL, 404); /* ended, gone */

    p = h_pod_json("team-a", "oh", 1, 0);
    json_object_set_new(spec_of(p), "overhead", json_pack("{s:s}", "memory", "800Gi"));
    json_decref(post(&d, p, 201));
    pod_is(&d, "team-a", "oh", "pending", "no node has 820224 MiB of memory, the most is 786432");

    /* both A100 boards full of team-a's pods of no class: a pod of preemptionPolicy: Never
     * waits, one of PreemptLowerPriority takes a board; either must be its class's */
    for (int i = 0; i < 2; i++) {
        char name[8];
        snprintf(name, sizeof(name), "f%d", i);
        json_decref(post(&d, h_pod_json("team-a", name, 8, 0), 201));
    }
    json_decref(post(&d, classed("never", 8, "polite", "Never"), 201));
    pod_is(&d, "team-a", "never", "pending", NULL);
    h_request(&d, "DELETE", "/v1/pods/team-a/never", TOKEN_ADMIN, NULL, 200);
    json_decref(post(&d, classed("may", 8, "high", "PreemptLowerPriority"), 201));
    pod_is(&d, "team-a", "may", "running", NULL);
    refused(&d, classed("pp", 1, "high", "Never"), "spec.preemptionPolicy",
            "spec.preemptionPolicy Never differs from PreemptLowerPriority, what PriorityClass "
            "high gives");
    refused(&d, classed("pq", 1, "polite", "PreemptLowerPriority"), "spec.preemptionPolicy",
            "spec.preemptionPolicy PreemptLowerPriority differs from Never, what PriorityClass "
            "polite gives");

    p = h_pod_json("team-a", "g0", 1, 0);
    json_object_set_new(spec_of(p), "schedulingGates", json_pack("[{s:s}]", "name", "wait"));
    refused(&d, p, "spec.schedulingGates", "a gated pod waits until its gates are removed");
    p = h_pod_json("team-a", "g1", 1, 0);
    json_object_set_new(spec_of(p), "schedulingGates", json_array());
    json_decref(post(&d, p, 201));
    p = h_pod_json("team-a", "c0", 1, 0);
    json_object_set_new(spec_of(p), "resourceClaims",
                        json_pack("[{s:s, s:s}]", "name", "gpu", "resourceClaimName", "c"));
    refused(&d, p, "spec.resourceClaims", "Dynamic Resource Allocation");
    p = h_pod_json("team-a", "h0", 1, 0);
    json_object_set_new(json_array_get(json_object_get(spec_of(p), "containers"), 0), "ports",
                        json_pack("[{s:i, s:i}]", "containerPort", 80, "hostPort", 8080));
    refused(&d, p, "spec.containers[0].ports[0].hostPort", "a host port");
    p = h_pod_json("team-a", "v0", 1, 0);
    json_object_set_new(spec_of(p), "volumes",
                        json_pack("[{s:s, s:{s:s}}]", "name", "data", "persistentVolumeClaim",
                                  "claimName", "data"));
    refused(&d, p, "spec.volumes[0].persistentVolumeClaim", "VolumeBinding");
    p = h_pod_json("team-a", "v1", 1, 0); /* mounted wherever the pod runs */
    json_object_set_new(spec_of(p), "volumes",
                        json_pack("[{s:s, s:{}}, {s:s, s:{s:s}}]", "name", "scratch", "emptyDir",
                                  "name", "cfg", "configMap", "name", "cfg"));
    json_decref(post(&d, p, 201));
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_policy_not_run(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, "policy: fgd\n"), 0);
    assert_int_not_equal(h_start(&d), 0);
    assert_true(h_log_has(&d, "config.yaml:"));
    assert_true(h_log_has(&d, ": policy: gpuschedd runs the gpusched policy only"));
    h_cleanup(&d);
    assert_int_equal(h_setup(&d, "policy: gpusched\n"), 0);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_free_cards_spread_thin(void **state)
{
    (void)state;
    struct daemon d;
    start(&d, NULL);
    const char *names[] = {"f0", "f1"};
    for (int i = 0; i < 2; i++) {
        json_t *p = h_pod_json("team-a", names[i], 6, 0);
        h_annotate(p, "gpusched.io/gpu-model", "A100-SXM4-80GB");
        json_decref(post(&d, p, 201));
    }
    json_t *p = h_pod_json("team-a", "f2", 3, 0);
    h_annotate(p, "gpusched.io/gpu-model", "A100-SXM4-80GB");
    json_decref(post(&d, p, 201));
    pod_is(&d, "team-a", "f2", "pending",
           "; 4 free nvidia.com/gpu in the cluster, at most 2 on one node.");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Start @d on the nodes of Cluster document @cluster. */
static void start_on(struct daemon *d, const char *cluster)
{
    assert_int_equal(h_setup(d, NULL), 0);
    snprintf(d->nodes, sizeof(d->nodes), "%s/nodes.yaml", d->dir);
    assert_int_equal(h_write(d->nodes, cluster), 0);
    assert_int_equal(h_start(d), 0);
}

/* An untainted node and a GPU node tainted as GPU nodes commonly are. */
static const char tainted[] =
    "apiVersion: gpusched.io/v1alpha1\n"
    "kind: Cluster\n"
    "metadata: {name: tainted}\n"
    "spec:\n"
    "  nodeTemplates:\n"
    "    - {name: a100, gpuModel: A100-SXM4-80GB, gpus: 4, cpuMilli: 64000, memoryMiB: 524288}\n"
    "  nodes:\n"
    "    - {name: n-plain, template: a100}\n"
    "    - {name: n-gpu, template: a100,\n"
    "       taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}\n";

/* The tolerations the API server's DefaultTolerationSeconds admission adds to every pod, and
 * @gpu_ok: one of the GPU nodes' taint. */
static json_t *tolerations(int gpu_ok)
{
    json_t *v =
        json_pack("[{s:s, s:s, s:s, s:i}, {s:s, s:s, s:s, s:i}]", "key",
                  "node.kubernetes.io/not-ready", "operator", "Exists", "effect", "NoExecute",
                  "tolerationSeconds", 300, "key", "node.kubernetes.io/unreachable", "operator",
                  "Exists", "effect", "NoExecute", "tolerationSeconds", 300);
    if (gpu_ok)
        json_array_append_new(v, json_pack("{s:s, s:s, s:s}", "key", "nvidia.com/gpu", "operator",
                                           "Exists", "effect", "NoSchedule"));
    return v;
}

/* Node taints and pod tolerations: a pod goes only where it tolerates every NoSchedule and
 * NoExecute taint; one kept off a node says which taint, as kube-scheduler does; GET
 * /v1/nodes/NAME shows the taints. */
static void test_taints(void **state)
{
    (void)state;
    struct daemon d;
    start_on(&d, tainted);
    json_t *p = h_pod_json("team-a", "plain", 4, 0);
    json_object_set_new(spec_of(p), "tolerations", tolerations(0));
    json_t *a = post(&d, p, 201);
    assert_string_equal(sget(a, "node"), "n-plain");
    json_decref(a);
    p = h_pod_json("team-a", "late", 1, 0);
    json_object_set_new(spec_of(p), "tolerations", tolerations(0));
    json_decref(post(&d, p, 201));
    pod_is(&d, "team-a", "late", "pending",
           "1 node(s) had untolerated taint {nvidia.com/gpu: present}");
    p = h_pod_json("team-a", "gpu-ok", 2, 0);
    json_object_set_new(spec_of(p), "tolerations", tolerations(1));
    a = post(&d, p, 201);
    assert_string_equal(sget(a, "node"), "n-gpu");
    json_decref(a);
    struct answer n;
    h_expect(&d, "GET", "/v1/nodes/n-gpu", TOKEN_ADMIN, NULL, 200, &n);
    json_t *t = json_array_get(json_object_get(n.json, "taints"), 0);
    assert_string_equal(sget(t, "key"), "nvidia.com/gpu");
    assert_string_equal(sget(t, "value"), "present");
    assert_string_equal(sget(t, "effect"), "NoSchedule");
    h_answer_free(&n);
    h_expect(&d, "GET", "/v1/nodes/n-plain", TOKEN_ADMIN, NULL, 200, &n);
    assert_int_equal(json_array_size(json_object_get(n.json, "taints")), 0);
    h_answer_free(&n);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* One PCIe board of eight H100 NVL cards in two PCIe domains, NVLink bridges joining pairs. */
static const char pairs[] =
    "apiVersion: gpusched.io/v1alpha1\n"
    "kind: Cluster\n"
    "metadata: {name: pairs}\n"
    "spec:\n"
    "  nodeTemplates:\n"
    "    - {name: nvl, gpuModel: H100-NVL-94GB, gpus: 8, cpuMilli: 64000, memoryMiB: 524288,\n"
    "       pcieDomains: [[0,1,2,3],[4,5,6,7]], nvlinkGroups: [[0,1],[2,3],[4,5],[6,7]]}\n"
    "  nodes:\n"
    "    - {name: n-nvl-0, template: nvl}\n";

static void test_nvlink_pair_without_tier(void **state)
{
    (void)state;
    struct daemon d;
    start_on(&d, pairs);
    json_t *a = post(&d, h_pod_json("team-a", "one", 1, 0), 201);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(a, "gpus"), 0)), 0);
    json_decref(a);
    /* cards 1 and 2 are free in the first domain, but on two bridges: the pair 2, 3 is whole */
    a = post(&d, h_pod_json("team-a", "two", 2, 0), 201);
    json_t *g = json_object_get(a, "gpus");
    assert_int_equal(json_array_size(g), 2);
    assert_int_equal(json_integer_value(json_array_get(g, 0)), 2);
    assert_int_equal(json_integer_value(json_array_get(g, 1)), 3);
    json_decref(a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void group_is(const struct daemon *d, int members, int running)
{
    struct answer a;
    h_expect(d, "GET", "/v1/podgroups/team-a/pg-e", TOKEN_A, NULL, 200, &a);
    assert_int_equal(json_integer_value(json_object_get(a.json, "members")), members);
    assert_int_equal(json_integer_value(json_object_get(a.json, "running")), running);
    h_answer_free(&a);
}

static void test_elastic_podgroup(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_policy(&d, policy), 0);
    assert_int_equal(h_write(d.nodes, "sn,cpu_milli,memory_mib,gpu,model\n"
                                      "n-t4-0,64000,262144,4,T4\n"),
                     0);
    assert_int_equal(h_start(&d), 0);
    h_podgroup(&d, "team-a", "pg-e", 2, 201);
    /* six one-card members on four cards: minMember 2 at once, then two more as room allows */
    for (int i = 0; i < 6; i++) {
        char name[8];
        snprintf(name, sizeof(name), "e%d", i);
        json_t *p = h_pod_json("team-a", name, 1, 0);
        h_annotate(p, "scheduling.k8s.io/group-name", "pg-e");
        json_decref(post(&d, p, 201));
    }
    group_is(&d, 6, 4);
    /* a pod of higher priority takes one member beyond minMember, not the gang */
    json_t *p = h_pod_json("team-a", "hi", 1, 0);
    json_object_set_new(spec_of(p), "priorityClassName", json_string("high"));
    json_decref(post(&d, p, 201));
    pod_is(&d, "team-a", "hi", "running", NULL);
    group_is(&d, 6, 3);
    struct answer a; /* one victim in all: the members left stay within the gang */
    h_expect(&d, "GET", "/metrics", TOKEN_ADMIN, NULL, 200, &a);
    assert_non_null(strstr(a.body, "\ngpusched_preemption_victims_total 1\n"));
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_annotations),
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_taints),
        cmocka_unit_test(test_init_containers),
        cmocka_unit_test(test_names_that_give_nothing),
        cmocka_unit_test(test_policy_not_run),
        cmocka_unit_test(test_not_ours),
        cmocka_unit_test(test_run_fields),
        cmocka_unit_test(test_free_cards_spread_thin),
        cmocka_unit_test(test_nvlink_pair_without_tier),
        cmocka_unit_test(test_elastic_podgroup),
        cmocka_unit_test(test_az_isolation),
        cmocka_unit_test(test_prefer_colocate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
