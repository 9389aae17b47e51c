/*
 * The scheduler core as a driver uses it (gpusched/tenancy.h): pods submitted, a pass and its
 * decisions, cancellation, a node or a card failing, a bind from outside, a restart restoring
 * placements, PodGroups made at run time, and the extender's probe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpusched/diag.h"
#include "gpusched/fleet.h"
#include "gpusched/scenario.h"
#include "gpusched/tenancy.h"

#include "common/util.h"
#include "tenancy/tenancy_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S 1000000LL

/* Two 8-card nodes, a queue, PriorityClasses, one PodGroup, and the pods named in @pods. */
static const char *const cluster_yaml =
    "apiVersion: gpusched.io/v1alpha1\n"
    "kind: Cluster\n"
    "metadata: {name: c}\n"
    "spec:\n"
    "  nodeTemplates:\n"
    "    - {name: t, gpuModel: A100-SXM4-80GB, gpus: 8, cpuMilli: 64000, memoryMiB: 524288}\n"
    "  nodes:\n"
    "    - {name: n0, zone: z, template: t}\n"
    "    - {name: n1, zone: z, template: t}\n"
    "---\n"
    "apiVersion: scheduling.k8s.io/v1\n"
    "kind: PriorityClass\n"
    "metadata: {name: hi}\n"
    "value: 100\n"
    "---\n"
    "apiVersion: scheduling.volcano.sh/v1beta1\n"
    "kind: PodGroup\n"
    "metadata: {name: g, namespace: a}\n"
    "spec: {minMember: 2}\n";

struct fx {
    struct gs_scenario *s;
    struct gs_tenancy *t;
};

/* The cluster above plus the pods of @pods (YAML documents), and a full-way scheduler whose
 * empty cards keep their mode @hold_us. */
static void setup_fx_hold(struct fx *f, const char *pods, int64_t hold_us)
{
    char path[] = "/tmp/gs_test_sched_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *out = fdopen(fd, "w");
    fprintf(out, "%s%s", cluster_yaml, pods);
    fclose(out);
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_scenario_new(&f->s), 0);
    int r = gs_scenario_load(f->s, path, &d);
    unlink(path);
    if (r == 0)
        r = gs_scenario_resolve(f->s, &d);
    if (r)
        fail_msg("%s", d.msg);
    struct gs_tenancy_opts o = {GS_WAY_FULL, 1, hold_us, 0};
    assert_int_equal(gs_tenancy_new(&f->s->policy, &o, &f->t, &d), 0);
}

static void setup_fx(struct fx *f, const char *pods)
{
    setup_fx_hold(f, pods, 0);
}

static void teardown_fx(struct fx *f)
{
    gs_tenancy_free(f->t);
    gs_scenario_free(f->s);
}

static int32_t submit(struct fx *f, int64_t now, size_t i)
{
    int32_t id;
    char why[256];
    assert_int_equal(
        gs_tenancy_submit(f->t, now, &f->s->pods[i], (int64_t)i, &id, why, sizeof(why)), 0);
    return id;
}

static size_t schedule(struct fx *f, int64_t now, const struct gs_decision **dec)
{
    size_t n;
    assert_int_equal(gs_tenancy_schedule(f->t, now, dec, &n), 0);
    return n;
}

static struct gs_tenancy_pod view(struct fx *f, int32_t id)
{
    struct gs_tenancy_pod v;
    assert_int_equal(gs_tenancy_pod(f->t, id, &v), 0);
    return v;
}

#define POD(name, gpus, extra)                                                                     \
    "---\n{apiVersion: v1, kind: Pod, metadata: {name: " name ", namespace: a" extra "}, "         \
    "spec: {containers: [{name: m, resources: {limits: {nvidia.com/gpu: " #gpus "}}}]}}\n"

/* A pass binds what fits and says so once; a cancelled pod gives its cards back. */
static void test_submit_schedule_cancel(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("p0", 8, "") POD("p1", 8, "") POD("p2", 8, ""));
    int32_t a = submit(&f, 0, 0), b = submit(&f, 0, 1), c = submit(&f, 0, 2);
    const struct gs_decision *dec;
    size_t n = schedule(&f, 0, &dec);
    assert_int_equal(n, 2);
    assert_int_equal(dec[0].kind, GS_DECIDE_BIND);
    assert_int_equal(dec[0].pod, a);
    assert_int_equal(dec[0].gpu_mask, 0xff);
    assert_int_equal(dec[1].pod, b);
    assert_int_equal(dec[0].node + dec[1].node, 1); /* one node each */
    assert_int_equal(view(&f, c).state, GS_POD_PENDING);
    assert_non_null(strstr(view(&f, c).reason, "Insufficient nvidia.com/gpu"));
    assert_int_equal(schedule(&f, 1 * S, &dec), 0); /* nothing changed: no pass, no decision */
    assert_int_equal(gs_tenancy_cancel(f.t, 2 * S, a), 0);
    assert_int_equal(gs_tenancy_cancel(f.t, 2 * S, a), -EINVAL);
    n = schedule(&f, 2 * S, &dec);
    assert_int_equal(n, 1);
    assert_int_equal(dec[0].pod, c);
    assert_int_equal(view(&f, c).start_us, 2 * S);
    teardown_fx(&f);
}

/* A node that fails sends its pods back (the rest of a gang too), and takes none till ready. */
static void test_node_failure_requeues_gang(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("m0", 8, ", annotations: {scheduling.k8s.io/group-name: g}")
                     POD("m1", 8, ", annotations: {scheduling.k8s.io/group-name: g}"));
    int32_t a = submit(&f, 0, 0), b = submit(&f, 0, 1);
    const struct gs_decision *dec;
    assert_int_equal(schedule(&f, 0, &dec), 2);
    int32_t node_a = view(&f, a).node;
    assert_int_equal(gs_tenancy_node_ready(f.t, 5 * S, node_a, 0, 1), 0);
    size_t n = schedule(&f, 5 * S, &dec);
    /* both members evicted (the gang goes back whole), then nothing fits: one node is down */
    assert_int_equal(n, 2);
    assert_int_equal(dec[0].kind, GS_DECIDE_EVICT);
    assert_int_equal(dec[1].kind, GS_DECIDE_EVICT);
    assert_int_equal(dec[0].by, -1);
    assert_int_equal(view(&f, a).state, GS_POD_PENDING);
    assert_int_equal(view(&f, b).state, GS_POD_PENDING);
    assert_non_null(strstr(view(&f, b).reason, "gang g: member m1 cannot be placed"));
    assert_non_null(strstr(view(&f, b).reason, "node.kubernetes.io/not-ready"));
    assert_int_equal(gs_tenancy_node_ready(f.t, 6 * S, node_a, 1, 1), 0);
    n = schedule(&f, 6 * S, &dec);
    if (n != 2)
        fail_msg("%zu decisions; a: %s", n, view(&f, a).reason);
    assert_int_equal(view(&f, a).state, GS_POD_RUNNING);
    teardown_fx(&f);
}

/* A driver sends one running gang member back (its mate gone before binding): it waits with
 * its own words until a pass tries it, its mate stays, and it is placed again with a new mate. */
static void test_requeue_one(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("m0", 8, ", annotations: {scheduling.k8s.io/group-name: g}")
                     POD("m1", 8, ", annotations: {scheduling.k8s.io/group-name: g}")
                         POD("m2", 8, ", annotations: {scheduling.k8s.io/group-name: g}"));
    int32_t a = submit(&f, 0, 0), b = submit(&f, 0, 1);
    const struct gs_decision *dec;
    assert_int_equal(schedule(&f, 0, &dec), 2);
    int32_t node_a = view(&f, a).node;
    assert_int_equal(gs_tenancy_requeue(f.t, 5 * S, b + 1, "x"), -EINVAL); /* no such pod */
    assert_int_equal(gs_tenancy_cancel(f.t, 5 * S, b), 0);
    assert_int_equal(gs_tenancy_requeue(f.t, 5 * S, b, "x"), -EINVAL); /* not running */
    assert_int_equal(gs_tenancy_requeue(f.t, 6 * S, a, "its mate went"), 0);
    assert_int_equal(view(&f, a).state, GS_POD_PENDING);
    assert_string_equal(view(&f, a).reason, "its mate went");
    assert_int_equal(schedule(&f, 6 * S, &dec), 1);
    assert_int_equal(dec[0].kind, GS_DECIDE_EVICT);
    assert_int_equal(dec[0].by, -1);
    assert_int_equal(dec[0].node, node_a);
    assert_int_equal(view(&f, a).state, GS_POD_PENDING); /* its gang lacks a member */
    if (!strstr(view(&f, a).reason, "PodGroup g: 1 of minMember 2"))
        fail_msg("reason: %s", view(&f, a).reason);
    int32_t c = submit(&f, 7 * S, 2);
    assert_int_equal(schedule(&f, 7 * S, &dec), 2);
    assert_int_equal(view(&f, a).state, GS_POD_RUNNING);
    assert_int_equal(view(&f, c).state, GS_POD_RUNNING);
    teardown_fx(&f);
}

/* An unhealthy card takes no pod; the fault that killed the work sends its pod back. */
static void test_card_health(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("p0", 1, "") POD("p1", 8, ""));
    int32_t a = submit(&f, 0, 0);
    const struct gs_decision *dec;
    assert_int_equal(schedule(&f, 0, &dec), 1);
    struct gs_tenancy_pod v = view(&f, a);
    int gpu = __builtin_ctz(v.gpu_mask);
    assert_int_equal(gs_tenancy_card_health(f.t, S, v.node, gpu, 0, 1), 0);
    /* it is requeued, then placed again, on another card */
    size_t n = schedule(&f, S, &dec);
    assert_int_equal(n, 2);
    assert_int_equal(dec[0].kind, GS_DECIDE_EVICT);
    assert_int_equal(dec[1].kind, GS_DECIDE_BIND);
    assert_true(dec[1].node != v.node || !(dec[1].gpu_mask & (1u << gpu)));
    /* a whole node's pod cannot have the node with the bad card */
    int32_t b = submit(&f, 2 * S, 1);
    assert_int_equal(schedule(&f, 2 * S, &dec), 1);
    assert_int_not_equal(view(&f, b).node, v.node);
    teardown_fx(&f);
}

/* A bind from outside goes only where it was asked, or not at all. */
static void test_bind_to(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("p0", 8, "") POD("p1", 8, ""));
    int32_t a = submit(&f, 0, 0);
    assert_int_equal(gs_tenancy_bind_to(f.t, 0, a, 1), 0);
    const struct gs_decision *dec;
    assert_int_equal(schedule(&f, 0, &dec), 1);
    assert_int_equal(dec[0].node, 1);
    int32_t b = submit(&f, S, 1);
    assert_int_equal(gs_tenancy_bind_to(f.t, S, b, 1), 1); /* node 1 is full */
    assert_non_null(strstr(view(&f, b).reason, "Insufficient nvidia.com/gpu"));
    assert_int_equal(gs_tenancy_bind_to(f.t, S, a, 0), -EINVAL); /* not pending */
    teardown_fx(&f);
}

/* A restart puts running pods back on their very cards, with their start times. */
static void test_restore(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("p0", 2, "") POD("p1", 8, ""));
    int32_t a = submit(&f, 10 * S, 0);
    assert_int_equal(gs_tenancy_restore(f.t, a, 1, 0x30, -1, 3 * S), 0);
    struct gs_tenancy_pod v = view(&f, a);
    assert_int_equal(v.state, GS_POD_RUNNING);
    assert_int_equal(v.node, 1);
    assert_int_equal(v.gpu_mask, 0x30);
    assert_int_equal(v.start_us, 3 * S);
    int32_t b = submit(&f, 10 * S, 1);
    const struct gs_decision *dec;
    assert_int_equal(schedule(&f, 10 * S, &dec), 1);
    assert_int_equal(view(&f, b).node, 0); /* node 1 is part taken */
    teardown_fx(&f);
}

/* A node's taints changed while pods run there (gs_node_set_taints(), a scheduler made again over
 * them): the pod that ran there is put back all the same (a taint evicts nothing), a new pod that
 * does not tolerate the taint goes to the other node, and the taints lifted again take pods. */
static void test_restore_tainted_since(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("p0", 2, "") POD("p1", 2, "") POD("p2", 2, ""));
    struct gs_taint tn;
    const char *field;
    char why[128];
    assert_int_equal(gs_taint_make("maintenance", "", "NoSchedule", &tn, &field, why, sizeof(why)),
                     0);
    assert_int_equal(gs_node_set_taints(&f.s->policy, 2, &tn, 1), -EINVAL); /* no node 2 */
    assert_int_equal(gs_node_set_taints(&f.s->policy, 1, &tn, 1), 0);
    assert_int_equal(f.s->policy.nodes[1].ntaints, 1);
    assert_string_equal(f.s->policy.taints[f.s->policy.nodes[1].taint_first].key, "maintenance");
    assert_int_equal(f.s->policy.nodes[0].ntaints, 0);
    gs_tenancy_free(f.t);
    struct gs_diag d;
    gs_diag_init(&d);
    struct gs_tenancy_opts o = {GS_WAY_FULL, 1, 0, 0};
    assert_int_equal(gs_tenancy_new(&f.s->policy, &o, &f.t, &d), 0);
    int32_t a = submit(&f, 10 * S, 0);
    assert_int_equal(gs_tenancy_restore(f.t, a, 1, 0x3, -1, 3 * S), 0);
    assert_int_equal(view(&f, a).node, 1);
    int32_t b = submit(&f, 10 * S, 1);
    assert_int_equal(gs_tenancy_bind_to(f.t, 10 * S, b, 1), 1);
    assert_non_null(strstr(view(&f, b).reason, "untolerated taint {maintenance: }"));
    const struct gs_decision *dec;
    assert_int_equal(schedule(&f, 10 * S, &dec), 1);
    assert_int_equal(view(&f, b).node, 0);
    /* lifted: the node takes pods again */
    assert_int_equal(gs_node_set_taints(&f.s->policy, 1, NULL, 0), 0);
    assert_int_equal(f.s->policy.nodes[1].ntaints, 0);
    gs_tenancy_free(f.t);
    assert_int_equal(gs_tenancy_new(&f.s->policy, &o, &f.t, &d), 0);
    assert_int_equal(gs_tenancy_bind_to(f.t, 10 * S, submit(&f, 10 * S, 2), 1), 0);
    teardown_fx(&f);
}

/* Pods put back over a GPUQuota lowered under them (a reload, a restart) all count: the tenant
 * waits until its use is below the quota again, and what is over its dedicated cards is
 * borrowed, even for pods held in dedicated cards before (here all four, of a quota since cut
 * from 4 dedicated to 1). */
static void test_restore_over_quota(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f,
             "---\napiVersion: gpu.example.com/v1\nkind: GPUQuota\n"
             "metadata: {name: q, namespace: a}\n"
             "spec: {tenant: ta, quotas: {a100-80gb: {total: 2, dedicated: 1, shared: 1}}}\n" POD(
                 "a0", 1, "") POD("a1", 1, "") POD("a2", 1, "") POD("a3", 1, "") POD("b0", 1, ""));
    int32_t a[4];
    for (int i = 0; i < 4; i++) {
        f.s->pods[i].charged = 1;
        a[i] = submit(&f, 10 * S, (size_t)i);
        assert_int_equal(gs_tenancy_restore(f.t, a[i], 0, 1u << i, -1, 3 * S), 0);
    }
    int model = gs_fleet_node_model(gs_tenancy_fleet(f.t), 0);
    int64_t ded, sh;
    gs_tenancy_quota_used(f.t, 0, model, &ded, &sh);
    assert_int_equal(ded, 1000);
    assert_int_equal(sh, 3000);
    int32_t b = submit(&f, 10 * S, 4);
    const struct gs_decision *dec;
    assert_int_equal(schedule(&f, 10 * S, &dec), 0);
    assert_non_null(strstr(view(&f, b).reason, "GPUQuota a100-80gb total 4/2"));
    assert_int_equal(gs_tenancy_cancel(f.t, 11 * S, a[0]), 0);
    assert_int_equal(schedule(&f, 11 * S, &dec), 0); /* 3 of 2 still held */
    assert_int_equal(gs_tenancy_cancel(f.t, 12 * S, a[1]), 0);
    assert_int_equal(gs_tenancy_cancel(f.t, 12 * S, a[2]), 0);
    assert_int_equal(schedule(&f, 12 * S, &dec), 1);
    assert_int_equal(dec[0].pod, b);
    gs_tenancy_quota_used(f.t, 0, model, &ded, &sh);
    assert_int_equal(ded, 1000); /* b0, in the dedicated card a0 left */
    assert_int_equal(sh, 1000);
    teardown_fx(&f);
}

/* A PodGroup made at run time makes its pods a gang; the probe answers without binding. */
static void test_podgroup_and_probe(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("x0", 8, "") POD("x1", 4, ""));
    snprintf(f.s->pods[0].group, sizeof(f.s->pods[0].group), "late"); /* as the API sets it */
    struct gs_podgroup_spec g = {.ns = "a", .name = "late", .min_member = 2};
    assert_int_equal(gs_tenancy_podgroup(f.t, &g), 0);
    int32_t a = submit(&f, 0, 0);
    const struct gs_decision *dec;
    assert_int_equal(schedule(&f, 0, &dec), 0); /* a gang of 2 with one member */
    assert_non_null(strstr(view(&f, a).reason, "1 of minMember 2"));
    g.min_member = 1;
    assert_int_equal(gs_tenancy_podgroup(f.t, &g), 0);
    assert_int_equal(schedule(&f, S, &dec), 1);
    struct gs_tenancy_probe *pr;
    char why[256];
    assert_int_equal(gs_tenancy_probe_new(f.t, &f.s->pods[1], &pr, why, sizeof(why)), 0);
    int32_t score;
    const char *no;
    int full = view(&f, a).node;
    assert_int_equal(gs_tenancy_probe_node(f.t, pr, full, &score, &no), 1);
    assert_string_equal(no, "Insufficient nvidia.com/gpu");
    assert_int_equal(gs_tenancy_probe_node(f.t, pr, 1 - full, &score, &no), 0);
    assert_true(score > 0 && score <= 1000);
    gs_tenancy_probe_free(pr);
    teardown_fx(&f);
}

/* A gang member probed for a user no pod of the scheduler has had: the trial binds of the
 * members its gang lacks count nothing for that user (and touch nothing outside the counts). */
static void test_probe_gang_new_user(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("u0", 4,
                     ", labels: {user: newcomer}, annotations: {scheduling.k8s.io/group-name: g}"));
    struct gs_tenancy_probe *pr;
    char why[256];
    assert_int_equal(gs_tenancy_probe_new(f.t, &f.s->pods[0], &pr, why, sizeof(why)), 0);
    int32_t score;
    const char *no;
    assert_int_equal(gs_tenancy_probe_node(f.t, pr, 0, &score, &no), 0);
    gs_tenancy_probe_free(pr);
    int32_t a = submit(&f, 0, 0); /* the probe left nothing behind: a gang of 2 with one member */
    const struct gs_decision *dec;
    assert_int_equal(schedule(&f, 0, &dec), 0);
    assert_non_null(strstr(view(&f, a).reason, "1 of minMember 2"));
    teardown_fx(&f);
}

/* A pod may name its PodGroup before it is made: it waits parked, then joins the gang. */
static void test_podgroup_made_after_its_pods(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("y0", 4, "") POD("y1", 4, "") POD("y2", 4, ""));
    for (int i = 0; i < 3; i++)
        snprintf(f.s->pods[i].group, sizeof(f.s->pods[i].group), "later");
    int32_t a = submit(&f, 0, 0), b = submit(&f, 0, 1), c = submit(&f, 0, 2);
    const struct gs_decision *dec;
    assert_int_equal(schedule(&f, 0, &dec), 0);
    assert_non_null(strstr(view(&f, a).reason, "PodGroup a/later does not exist yet"));
    assert_int_equal(gs_tenancy_queue_demand(f.t, gs_tenancy_queue_count(f.t) - 1), 0);
    assert_int_equal(gs_tenancy_cancel(f.t, S, c), 0); /* a parked pod may go */
    struct gs_podgroup_spec g = {.ns = "a", .name = "later", .min_member = 2};
    assert_int_equal(gs_tenancy_podgroup(f.t, &g), 0);
    assert_int_equal(schedule(&f, 2 * S, &dec), 2); /* the gang of two, together */
    assert_int_equal(view(&f, a).state, GS_POD_RUNNING);
    assert_int_equal(view(&f, b).state, GS_POD_RUNNING);
    assert_int_equal(view(&f, c).state, GS_POD_COMPLETED);
    assert_int_equal(gs_tenancy_queue_demand(f.t, gs_tenancy_queue_count(f.t) - 1), 8000);
    teardown_fx(&f);
}

/* A pod asks its effective request, as Kubernetes counts it: the app containers' sum with the
 * sidecars beside them, or an init container's own with the sidecars started before it. */
static void test_effective_request(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, "---\n{apiVersion: v1, kind: Pod, metadata: {name: k, namespace: a}, spec: {"
                 "initContainers: [{name: side, restartPolicy: Always, resources: {limits: "
                 "{nvidia.com/gpu: 1, cpu: '1'}}}, {name: warm, resources: {limits: "
                 "{nvidia.com/gpu: 4, cpu: '8'}}}], containers: [{name: a, resources: {limits: "
                 "{nvidia.com/gpu: 2, cpu: '2'}}}, {name: b, resources: {limits: "
                 "{nvidia.com/gpu: 1, cpu: '2'}}}]}}\n"
                 "---\n{apiVersion: v1, kind: Pod, metadata: {name: j, namespace: a}, spec: {"
                 "initContainers: [{name: i, resources: {limits: {nvidia.com/gpu: 1}}}], "
                 "containers: [{name: a, resources: {limits: {nvidia.com/gpu: 1}}}, {name: b, "
                 "resources: {limits: {nvidia.com/gpu: 1}}}]}}\n"
                 "---\n{apiVersion: v1, kind: Pod, metadata: {name: m, namespace: a}, spec: {"
                 "initContainers: [{name: i, restartPolicy: Always, resources: {limits: "
                 "{nvidia.com/mig-1g.10gb: 1}}}], containers: [{name: a, resources: {limits: "
                 "{nvidia.com/mig-1g.10gb: 1}}}]}}\n");
    struct gs_tenancy_pod v;
    char why[256];
    assert_int_equal(gs_tenancy_admit(f.t, &f.s->pods[0], &v, why, sizeof(why)), 0);
    assert_int_equal(v.ncards, 5);       /* the init container's 4 beside the sidecar's 1 */
    assert_int_equal(v.cpu_milli, 9000); /* 8 + 1 against 2 + 2 + 1 */
    assert_int_equal(gs_tenancy_admit(f.t, &f.s->pods[1], &v, why, sizeof(why)), 0);
    assert_int_equal(v.ncards, 2); /* the app containers' two; the init one runs before them */
    assert_int_equal(gs_tenancy_admit(f.t, &f.s->pods[2], &v, why, sizeof(why)), 1);
    assert_non_null(strstr(why, "more than one MIG instance at once")); /* sidecar + app */
    teardown_fx(&f);
}

/* A refusal names the container at fault where one is: the one asking the MIG profile no model
 * has (a pod's one MIG instance is its sum too); a pod-wide ask (more cards than any node) names
 * none. */
static void test_refusal_container(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, "---\n{apiVersion: v1, kind: Pod, metadata: {name: w, namespace: a}, spec: {"
                 "initContainers: [{name: i, resources: {limits: {cpu: '1'}}}], containers: "
                 "[{name: a, resources: {limits: {nvidia.com/gpu: 9}}}]}}\n"
                 "---\n{apiVersion: v1, kind: Pod, metadata: {name: m, namespace: a}, spec: {"
                 "initContainers: [{name: i, resources: {limits: {cpu: '1'}}}], containers: "
                 "[{name: a, resources: {limits: {cpu: '1'}}}, {name: b, resources: {limits: "
                 "{nvidia.com/mig-1g.11gb: 1}}}]}}\n");
    struct gs_tenancy_pod v;
    char why[256];
    assert_int_equal(gs_tenancy_admit(f.t, &f.s->pods[0], &v, why, sizeof(why)), 1);
    assert_string_equal(v.field, "spec.containers[].resources.limits.nvidia.com/gpu");
    assert_int_equal(v.field_at, -1);
    assert_int_equal(gs_tenancy_admit(f.t, &f.s->pods[1], &v, why, sizeof(why)), 1);
    assert_non_null(strstr(why, "nvidia.com/mig-1g.11gb"));
    assert_string_equal(v.field, "spec.containers[].resources.limits");
    assert_int_equal(v.field_at, 2); /* init container 0, then a and b */
    teardown_fx(&f);
}

#define RQ(name, hard)                                                                             \
    "---\n{apiVersion: v1, kind: ResourceQuota, metadata: {name: " name ", namespace: a}, "        \
    "spec: {hard: {" hard "}}}\n"

/* A pod of one card asking the CPU and memory a quota on them needs it to ask. */
#define POD_ASKING(name)                                                                           \
    "---\n{apiVersion: v1, kind: Pod, metadata: {name: " name ", namespace: a}, spec: "            \
    "{containers: [{name: m, resources: {limits: {nvidia.com/gpu: 1, cpu: 1, memory: 1Gi}}}]}}\n"

/* Every ResourceQuota of a namespace counts, however many and in whatever order. */
static void test_three_resource_quotas(void **state)
{
    (void)state;
    const char *order[2] = {
        RQ("cpu", "requests.cpu: 100") RQ("mem", "requests.memory: 100Gi") RQ("pods", "pods: 1"),
        RQ("pods", "pods: 1") RQ("mem", "requests.memory: 100Gi") RQ("cpu", "requests.cpu: 100")};
    for (int k = 0; k < 2; k++) {
        struct fx f;
        char docs[2048];
        snprintf(docs, sizeof(docs), "%s%s%s", order[k], POD_ASKING("p0"), POD_ASKING("p1"));
        setup_fx(&f, docs);
        int32_t a = submit(&f, 0, 0), b = submit(&f, 0, 1);
        const struct gs_decision *dec;
        assert_int_equal(schedule(&f, 0, &dec), 1);
        assert_int_equal(view(&f, a).state, GS_POD_RUNNING);
        assert_int_equal(view(&f, b).state, GS_POD_PENDING);
        assert_non_null(strstr(view(&f, b).reason, "pods 1+1 > 1 (ResourceQuota pods)"));
        int64_t used[5];
        gs_tenancy_rquota_used(f.t, k == 0 ? 2 : 0, used);
        assert_int_equal(used[4], 1);
        teardown_fx(&f);
    }
}

/* A node's discovered topology replaces its template's: a 2-card pod takes a bridged pair. */
static void test_node_topology(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("p0", 2, "") POD("p1", 2, ""));
    const struct gs_decision *dec;
    submit(&f, 0, 0);
    assert_int_equal(schedule(&f, 0, &dec), 1);
    assert_int_equal(dec[0].gpu_mask, 0x3); /* the template: two cards per PCIe switch */
    const uint8_t pcie[GS_GPUS_MAX] = {0, 1, 0, 1, 2, 3, 2, 3};
    uint8_t nvlink[GS_GPUS_MAX] = {0, 1, 0, 1, 2, 3, 2, 3}, links[GS_GPUS_MAX][GS_GPUS_MAX] = {0};
    links[0][2] = links[2][0] = links[1][3] = links[3][1] = 4;
    for (int32_t n = 0; n < 2; n++)
        assert_int_equal(gs_tenancy_node_topology(f.t, 1 * S, n, pcie, nvlink,
                                                  (const uint8_t(*)[GS_GPUS_MAX])links),
                         0);
    submit(&f, 1 * S, 1);
    assert_int_equal(schedule(&f, 1 * S, &dec), 1);
    uint32_t m = dec[0].gpu_mask; /* a bridged pair: (0,2), (1,3), (4,6) or (5,7) */
    assert_true(m == 0x5 || m == 0xa || m == 0x50 || m == 0xa0);
    assert_int_equal(gs_fleet_node_nvlink_max(gs_tenancy_fleet(f.t), 0), 2);
    nvlink[0] = GS_GPUS_MAX; /* out of range: refused, nothing changed */
    assert_int_equal(gs_tenancy_node_topology(f.t, 1 * S, 0, pcie, nvlink, NULL), -EINVAL);
    assert_int_equal(gs_tenancy_node_topology(f.t, 1 * S, 2, pcie, nvlink, NULL), -EINVAL);
    assert_int_equal(gs_fleet_node_nvlink_max(gs_tenancy_fleet(f.t), 0), 2);
    teardown_fx(&f);
}

#define LIMITS(name, limits)                                                                       \
    "---\n{apiVersion: v1, kind: Pod, metadata: {name: " name ", namespace: a}, "                  \
    "spec: {containers: [{name: m, resources: {limits: {" limits "}}}]}}\n"

/* Pods 0-2 run in turn; 3-10 are only probed: whole cards, shares of three sizes (one with
 * memory: the node's view of a kind of share serves every size), MIG instances. */
static const char *const shape_pods =
    POD("r0", 4, "") LIMITS("r1", "nvidia.com/gpu: 1, nvidia.com/gpucores: 50")
        LIMITS("r2", "nvidia.com/mig-3g.40gb: 1") POD("w1", 1, "") POD("w2", 2, "") POD("w8", 8, "")
            LIMITS("s30", "nvidia.com/gpu: 1, nvidia.com/gpucores: 30")
                LIMITS("s30b", "nvidia.com/gpu: 1, nvidia.com/gpucores: 30")
                    LIMITS("m1", "nvidia.com/mig-1g.10gb: 1")
                        LIMITS("s70", "nvidia.com/gpu: 1, nvidia.com/gpucores: 70")
                            LIMITS("s10m", "nvidia.com/gpu: 1, nvidia.com/gpucores: 10, "
                                           "nvidia.com/gpumem: 70000");

/* Events @from..@to-1 of those below on @f (@id: the pods submitted): binds, completions, a node
 * and a card failing, the clock passing the cards' hold time, a topology found. */
static void shape_events(struct fx *f, int from, int to, int32_t id[3])
{
    const struct gs_decision *dec;
    const uint8_t pcie[GS_GPUS_MAX] = {0, 1, 2, 3, 4, 5, 6, 7};
    for (int e = from; e < to; e++) {
        int64_t now = (e + 1) * S;
        if (e < 3) {
            id[e] = submit(f, now, (size_t)e);
            schedule(f, now, &dec);
        } else if (e == 3 || e == 4) {
            assert_int_equal(gs_tenancy_complete(f->t, now, id[e - 3], NULL), 0);
        } else if (e == 5 || e == 6) {
            assert_int_equal(gs_tenancy_node_ready(f->t, now, 1, e == 6, 1), 0);
        } else if (e == 7) {
            assert_int_equal(gs_tenancy_card_health(f->t, now, 0, 7, 0, 0), 0);
        } else if (e == 8) {
            assert_int_equal(gs_tenancy_advance(f->t, 60 * S), 0); /* every hold has ended */
        } else {
            assert_int_equal(gs_tenancy_node_topology(f->t, 60 * S, 0, pcie, pcie, NULL), 0);
        }
    }
}

/* The probe's answers for pods 3.. on both nodes, as text. */
static void shape_answers(struct fx *f, char *out, size_t cap)
{
    size_t len = 0;
    for (size_t i = 3; i < f->s->npods; i++)
        for (int32_t n = 0; n < 2; n++) {
            struct gs_tenancy_probe *pr;
            char why[256];
            int32_t score = -1;
            const char *no = "";
            assert_int_equal(gs_tenancy_probe_new(f->t, &f->s->pods[i], &pr, why, sizeof(why)), 0);
            int rc = gs_tenancy_probe_node(f->t, pr, n, &score, &no);
            len += (size_t)snprintf(out + len, cap - len, "%zu@%d: %d %d %s\n", i, (int)n, rc,
                                    rc ? -1 : (int)score, rc ? no : "");
            gs_tenancy_probe_free(pr);
            assert_true(len < cap);
        }
}

/* The probe keeps each node's answer per pod shape while the node is unchanged: after every
 * kind of change, a scheduler that has answered all along says what a new one says; with a hold
 * time, the clock alone may change what an empty card takes. */
static void test_probe_kept_by_shape(void **state)
{
    (void)state;
    for (int64_t hold = 0; hold <= 10 * S; hold += 10 * S) {
        struct fx warm;
        setup_fx_hold(&warm, shape_pods, hold);
        char a[4096], b[4096];
        int32_t id[3], cold_id[3];
        for (int k = 0; k <= 10; k++) {
            shape_events(&warm, k ? k - 1 : 0, k, id);
            shape_answers(&warm, a, sizeof(a));
            struct fx cold;
            setup_fx_hold(&cold, shape_pods, hold);
            shape_events(&cold, 0, k, cold_id);
            shape_answers(&cold, b, sizeof(b));
            teardown_fx(&cold);
            assert_string_equal(a, b);
        }
        teardown_fx(&warm);
    }
}

/* Two schedulers of one run, decision by decision: A keeps every record, B releases each pod
 * once it is gone (gs_tenancy_release(), as gpuschedd does), so its ids are reused. Ids map to
 * seq, the pods' own order. */
#define CHURN_PODS 600
struct churn {
    struct fx f;
    struct gs_tenancy *b;
    int64_t seq_a[4 * CHURN_PODS], seq_b[4 * CHURN_PODS]; /* id -> seq, -1 none */
    int32_t id_a[CHURN_PODS], id_b[CHURN_PODS];           /* seq -> id, -1 gone */
    uint64_t rng;
};

static uint32_t churn_rand(struct churn *c, uint32_t n)
{
    c->rng = c->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(c->rng >> 33) % n;
}

/* Pod i: whole cards or a share, some of priority hi, some of gang g, all of a known walltime. */
static char *churn_pods(uint64_t seed)
{
    size_t cap = CHURN_PODS * 320, len = 0;
    char *y = malloc(cap);
    assert_non_null(y);
    static const char *const limits[] = {"nvidia.com/gpu: 1",
                                         "nvidia.com/gpu: 2",
                                         "nvidia.com/gpu: 4",
                                         "nvidia.com/gpu: 8",
                                         "nvidia.com/gpu: 1, nvidia.com/gpucores: 30",
                                         "nvidia.com/gpu: 1, nvidia.com/gpucores: 50"};
    for (int i = 0; i < CHURN_PODS; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t r = (uint32_t)(seed >> 33);
        len += (size_t)snprintf(
            y + len, cap - len,
            "---\n{apiVersion: v1, kind: Pod, metadata: {name: p%d, namespace: a, annotations: "
            "{sim.gpusched.io/duration: %us%s}}, spec: {%scontainers: [{name: m, resources: "
            "{limits: {%s}}}]}}\n",
            i, 5 + r % 120, r % 7 == 0 ? ", scheduling.k8s.io/group-name: g" : "",
            r % 5 == 0 ? "priorityClassName: hi, " : "", limits[(r >> 8) % 6]);
    }
    return y;
}

static void churn_same(struct churn *c, const struct gs_decision *da, size_t na,
                       const struct gs_decision *db, size_t nb)
{
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++) {
        assert_int_equal(da[i].kind, db[i].kind);
        assert_int_equal(c->seq_a[da[i].pod], c->seq_b[db[i].pod]);
        assert_int_equal(da[i].node, db[i].node);
        assert_int_equal(da[i].gpu_mask, db[i].gpu_mask);
        assert_int_equal(da[i].share_milli, db[i].share_milli);
        assert_int_equal(da[i].by < 0 ? -1 : c->seq_a[da[i].by],
                         db[i].by < 0 ? -1 : c->seq_b[db[i].by]);
        assert_int_equal(da[i].reclaim, db[i].reclaim);
    }
}

/* Pod @i is gone from both: B releases it, and the id it had names nothing till it is reused. */
static void churn_gone(struct churn *c, int i)
{
    assert_int_equal(gs_tenancy_release(c->b, c->id_b[i]), 0);
    assert_int_equal(gs_tenancy_release(c->b, c->id_b[i]), -EINVAL);
    c->seq_b[c->id_b[i]] = -1;
    c->id_a[i] = c->id_b[i] = -1;
}

/* Pods seen by A and B alike; pending reasons too when @reasons. */
static void churn_views(struct churn *c, int submitted, int reasons)
{
    for (int i = 0; i < submitted; i++) {
        if (c->id_a[i] < 0)
            continue;
        struct gs_tenancy_pod a, b;
        assert_int_equal(gs_tenancy_pod(c->f.t, c->id_a[i], &a), 0);
        assert_int_equal(gs_tenancy_pod(c->b, c->id_b[i], &b), 0);
        assert_int_equal(a.state, b.state);
        assert_int_equal(a.node, b.node);
        assert_int_equal(a.gpu_mask, b.gpu_mask);
        assert_int_equal(a.preemptions, b.preemptions);
        if (reasons)
            assert_string_equal(a.reason, b.reason);
    }
}

/* Nodes and cards of both schedulers fail and come back at random (@c's dice). */
static void churn_failures(struct churn *c, int64_t now)
{
    uint32_t r = churn_rand(c, 40);
    if (r >= 2)
        return;
    int32_t node = (int32_t)churn_rand(c, 2);
    int up = (int)churn_rand(c, 2);
    if (r == 0) {
        assert_int_equal(gs_tenancy_node_ready(c->f.t, now, node, up, 1), 0);
        assert_int_equal(gs_tenancy_node_ready(c->b, now, node, up, 1), 0);
    } else {
        int gpu = (int)churn_rand(c, 8);
        assert_int_equal(gs_tenancy_card_health(c->f.t, now, node, gpu, up, 1), 0);
        assert_int_equal(gs_tenancy_card_health(c->b, now, node, gpu, up, 1), 0);
    }
}

/* CHURN_PODS pods through A and B (made alike by the caller), submitted, deleted, completed and
 * their gang's PodGroup deleted and made again at random; with @failures, nodes and cards fail
 * too. Every decision the same; with @reasons, every pending reason too. */
static void churn_run(struct churn *c, int failures, int reasons)
{
    memset(c->seq_a, -1, sizeof(c->seq_a));
    memset(c->seq_b, -1, sizeof(c->seq_b));
    c->rng = 11;
    struct gs_podgroup_spec g = *c->f.s->policy.podgroups;
    int64_t now = 0;
    int next = 0, drops = 0;
    while (next < CHURN_PODS || now < 4000 * S) {
        uint32_t r = churn_rand(c, 10);
        if (r < 5 && next < CHURN_PODS) {
            int32_t a, b;
            char why[256];
            const struct gs_pod_spec *sp = &c->f.s->pods[next];
            assert_int_equal(gs_tenancy_submit(c->f.t, now, sp, next, &a, why, sizeof(why)), 0);
            assert_int_equal(gs_tenancy_submit(c->b, now, sp, next, &b, why, sizeof(why)), 0);
            c->seq_a[a] = c->seq_b[b] = next;
            c->id_a[next] = a;
            c->id_b[next++] = b;
        } else if (r < 6 && next > 0) { /* a pod deleted, pending or running */
            int i = (int)churn_rand(c, (uint32_t)next);
            if (c->id_a[i] >= 0) {
                assert_int_equal(gs_tenancy_cancel(c->f.t, now, c->id_a[i]), 0);
                assert_int_equal(gs_tenancy_cancel(c->b, now, c->id_b[i]), 0);
                churn_gone(c, i);
            }
        } else {
            now += (int64_t)(1 + churn_rand(c, 30)) * S;
        }
        if (failures)
            churn_failures(c, now);
        int32_t a, b;
        while (gs_tenancy_due(c->f.t, now, &a)) {
            assert_int_equal(gs_tenancy_due(c->b, now, &b), 1);
            assert_int_equal(c->seq_a[a], c->seq_b[b]);
            assert_int_equal(gs_tenancy_complete(c->f.t, now, a, NULL),
                             gs_tenancy_complete(c->b, now, b, NULL));
            churn_gone(c, (int)c->seq_a[a]);
        }
        assert_int_equal(gs_tenancy_due(c->b, now, &b), 0);
        const struct gs_decision *da, *db;
        size_t na, nb;
        assert_int_equal(gs_tenancy_schedule(c->f.t, now, &da, &na), 0);
        assert_int_equal(gs_tenancy_schedule(c->b, now, &db, &nb), 0);
        churn_same(c, da, na, db, nb);
        if (gs_tenancy_podgroup_drop(c->f.t, "a", "g") == 0) { /* a new gang g of later pods */
            assert_int_equal(gs_tenancy_podgroup_drop(c->b, "a", "g"), 0);
            assert_int_equal(gs_tenancy_podgroup(c->f.t, &g), 0);
            assert_int_equal(gs_tenancy_podgroup(c->b, &g), 0);
            drops++;
        }
        churn_views(c, next, reasons);
    }
    assert_true(drops > 0);
}

/* A new churn: A as setup_fx() makes it, and B alike. */
static struct churn *churn_new(void)
{
    struct churn *c = calloc(1, sizeof(*c));
    assert_non_null(c);
    char *pods = churn_pods(7);
    setup_fx(&c->f, pods);
    free(pods);
    struct gs_diag d;
    gs_diag_init(&d);
    struct gs_tenancy_opts o = {GS_WAY_FULL, 1, 0, 0};
    assert_int_equal(gs_tenancy_new(&c->f.s->policy, &o, &c->b, &d), 0);
    return c;
}

static void churn_free(struct churn *c)
{
    gs_tenancy_free(c->b);
    teardown_fx(&c->f);
    free(c);
}

static void test_released_records_reused(void **state)
{
    (void)state;
    struct churn *c = churn_new();
    churn_run(c, 0, 1);
    /* Every pod ran its course; B held far fewer records than pods went through it. */
    assert_int_equal(gs_tenancy_pod_count(c->f.t), CHURN_PODS);
    assert_true(gs_tenancy_pod_count(c->b) < CHURN_PODS / 4);
    churn_free(c);
}

/* A pod whose last search failed looks again only at the nodes freed since (struct clean): B
 * searches every node every time, and decides the same, nodes and cards failing meanwhile
 * (a gang mate sent back from a node still up frees that node). */
static void test_remembered_searches_miss_nothing(void **state)
{
    (void)state;
    struct churn *c = churn_new();
    c->b->full_searches = 1;
    churn_run(c, 1, 0);
    churn_free(c);
}

/* The nodes-freed and nodes-changed logs keep GS_NODE_LOG_MAX entries at most, however long the
 * service runs: past that their older half goes; a search from a position dropped visits every
 * node, one from a position kept the nodes logged since. */
static void test_node_log_bounded(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, "");
    struct nodelog l = {0};
    for (size_t i = 0; i < GS_NODE_LOG_MAX + 10; i++)
        assert_int_equal(gs__tn_log(&l, 0), 0);
    assert_int_equal(gs__tn_log_end(&l), GS_NODE_LOG_MAX + 10);
    assert_true(l.v.n <= GS_NODE_LOG_MAX);
    assert_int_equal(gs__tn_logged_since(f.t, &l, 5, 2, 0), SIZE_MAX);
    size_t end = gs__tn_log_end(&l);
    assert_int_equal(gs__tn_log(&l, 1), 0);
    assert_int_equal(gs__tn_logged_since(f.t, &l, end, 2, 0), 1);
    assert_int_equal(f.t->scratch[0], 1);
    assert_int_equal(gs__tn_logged_since(f.t, &l, end - 1, 2, 0), 2);
    free(l.v.v);
    teardown_fx(&f);
}

#define GANG_POD(name, group)                                                                      \
    "---\n{apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: " group     \
    ", namespace: a}, spec: {minMember: 1}}\n" POD(                                                \
        name, 8, ", annotations: {scheduling.k8s.io/group-name: " group "}")

/* A gang member moved to its gang's new bucket leaves an entry behind in the old one: its record,
 * released with its PodGroup, serves no pod while that entry stands, or a later pod of that
 * bucket would take the old pod's place in line. g4m1 came first: it gets the card. */
static void test_reused_record_keeps_its_place(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("b1", 8, "") POD("b2", 8, "") GANG_POD("g0m1", "g0") GANG_POD("a1", "g1")
                     POD("a2", 8, ", annotations: {scheduling.k8s.io/group-name: g1}")
                         GANG_POD("g4m1", "g4") GANG_POD("y1", "g3"));
    const struct gs_decision *dec;
    int32_t b1 = submit(&f, 0, 0), b2 = submit(&f, 0, 1);
    submit(&f, 0, 2);
    int32_t a1 = submit(&f, 0, 3);
    schedule(&f, 0, &dec);
    int32_t a2 = submit(&f, 1 * S, 4);
    schedule(&f, 1 * S, &dec); /* a1 moves to its gang's new bucket */
    assert_int_equal(gs_tenancy_cancel(f.t, 2 * S, a1), 0);
    assert_int_equal(gs_tenancy_cancel(f.t, 2 * S, a2), 0);
    schedule(&f, 2 * S, &dec);
    assert_int_equal(gs_tenancy_release(f.t, a1), 0); /* kept with its gang till it is dropped */
    assert_int_equal(gs_tenancy_release(f.t, a2), 0);
    assert_int_equal(gs_tenancy_podgroup_drop(f.t, "a", "g1"), 0);
    int32_t g4m1 = submit(&f, 3 * S, 5);
    schedule(&f, 3 * S, &dec);
    int32_t y1 = submit(&f, 4 * S, 6);
    assert_int_equal(gs_tenancy_cancel(f.t, 5 * S, b1), 0);
    schedule(&f, 5 * S, &dec);
    assert_int_equal(gs_tenancy_cancel(f.t, 6 * S, b2), 0);
    schedule(&f, 6 * S, &dec);
    assert_int_equal(view(&f, g4m1).state, GS_POD_RUNNING);
    assert_int_equal(view(&f, y1).state, GS_POD_PENDING);
    teardown_fx(&f);
}

/* PodGroups made and deleted by the thousand (one per job, as Volcano makes them) take the places
 * of those deleted: the scheduler holds the PodGroups that stand. One deleted is unknown (its
 * pods wait for it); one made again under a deleted name is a new gang. */
static void test_podgroup_places_reused(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("p0", 8, ""));
    for (int i = 0; i < 1000; i++) {
        struct gs_podgroup_spec g = {.ns = "a", .min_member = 1};
        snprintf(g.name, sizeof(g.name), "h%d", i);
        assert_int_equal(gs_tenancy_podgroup(f.t, &g), 0);
        if (i % 100 != 7)
            assert_int_equal(gs_tenancy_podgroup_drop(f.t, "a", g.name), 0);
    }
    assert_true(f.t->npgs <= 1 + 10 + 1); /* g, the ten that stand, one place free */
    for (int i = 0; i < 1000; i++) {
        char name[16];
        snprintf(name, sizeof(name), "h%d", i);
        assert_int_equal(gs_tenancy_podgroup_done(f.t, "a", name), i % 100 == 7 ? 0 : -ENOENT);
    }
    struct gs_podgroup_spec h1 = {.ns = "a", .name = "h1", .min_member = 2};
    assert_int_equal(gs_tenancy_podgroup(f.t, &h1), 0);
    struct gs_pod_spec sp = f.s->pods[0];
    snprintf(sp.group, sizeof(sp.group), "h1");
    int32_t id;
    char why[256];
    assert_int_equal(gs_tenancy_submit(f.t, 0, &sp, 0, &id, why, sizeof(why)), 0);
    const struct gs_decision *dec;
    assert_int_equal(schedule(&f, 0, &dec), 0);
    assert_string_equal(view(&f, id).reason, "PodGroup h1: 1 of minMember 2 pods submitted");
    teardown_fx(&f);
}

/* Pods naming a PodGroup that is never made, submitted and deleted by the thousand: the last one
 * gone drops the PodGroup they waited for, and their records serve the next (they were kept for
 * a PodGroup deletion that never comes, about 1 KB a pod). */
static void test_unmade_podgroup_released(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("p0", 8, ""));
    for (int i = 0; i < 1000; i++) {
        struct gs_pod_spec sp = f.s->pods[0];
        snprintf(sp.name, sizeof(sp.name), "w%d", i);
        snprintf(sp.group, sizeof(sp.group), "never-%d", i % 3);
        int32_t id;
        char why[256];
        assert_int_equal(gs_tenancy_submit(f.t, i * S, &sp, i, &id, why, sizeof(why)), 0);
        assert_non_null(strstr(view(&f, id).reason, "does not exist yet"));
        assert_int_equal(gs_tenancy_cancel(f.t, i * S, id), 0);
        assert_int_equal(gs_tenancy_release(f.t, id), 0);
    }
    assert_true(f.t->npods <= 2);
    assert_true(f.t->npgs <= 2);
    teardown_fx(&f);
}

/* In a way without gangs (whole cards only) a pod of a PodGroup still names it: its record is
 * reused once the PodGroup is deleted. */
static void test_released_without_gangs(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("m0", 8, ", annotations: {scheduling.k8s.io/group-name: g}") POD("p1", 8, ""));
    gs_tenancy_free(f.t);
    struct gs_diag d;
    gs_diag_init(&d);
    struct gs_tenancy_opts o = {GS_WAY_EXCLUSIVE, 1, 0, 0};
    assert_int_equal(gs_tenancy_new(&f.s->policy, &o, &f.t, &d), 0);
    int32_t m0 = submit(&f, 0, 0);
    const struct gs_decision *dec;
    assert_int_equal(schedule(&f, 0, &dec), 1);
    assert_int_equal(gs_tenancy_cancel(f.t, 1 * S, m0), 0);
    assert_int_equal(gs_tenancy_release(f.t, m0), 0);
    assert_int_equal(schedule(&f, 1 * S, &dec), 0);
    assert_int_equal(gs_tenancy_podgroup_drop(f.t, "a", "g"), 0);
    assert_int_equal(submit(&f, 2 * S, 1), m0);
    teardown_fx(&f);
}

/* A released pod's `user` is forgotten once no pod held names it: a service seeing a new user in
 * every pod holds the users of the pods it holds, and an id served again counts maxPodsPerUser
 * from zero for its new user. */
static void test_released_users_reused(void **state)
{
    (void)state;
    enum { USERS = 300 };
    size_t size = 512 + (USERS + 2) * 256, len = 0;
    char *pods = malloc(size);
    assert_non_null(pods);
    len += (size_t)snprintf(pods, size,
                            "---\napiVersion: gpu.example.com/v1\nkind: GPUQuota\n"
                            "metadata: {name: q, namespace: a}\n"
                            "spec: {tenant: ta, quotas: {a100-80gb: {total: 16, dedicated: 16}},"
                            " limits: {maxPodsPerUser: 1}}\n");
    for (int i = 0; i < USERS + 2; i++)
        len += (size_t)snprintf(pods + len, size - len,
                                "---\n{apiVersion: v1, kind: Pod, metadata: {name: p%d, "
                                "namespace: a, labels: {user: %s%d}}, spec: {containers: [{name: "
                                "m, resources: {limits: {nvidia.com/gpu: 1}}}]}}\n",
                                i, i < USERS ? "u" : "late", i < USERS ? i : 0);
    struct fx f;
    setup_fx(&f, pods);
    free(pods);
    const struct gs_decision *dec;
    for (int i = 0; i < USERS; i++) {
        int32_t id = submit(&f, i * S, (size_t)i);
        assert_int_equal(schedule(&f, i * S, &dec), 1);
        assert_int_equal(gs_tenancy_cancel(f.t, i * S, id), 0);
        assert_int_equal(gs_tenancy_release(f.t, id), 0);
    }
    assert_true(f.t->nusers <= 2);
    int32_t a = submit(&f, USERS * S, USERS), b = submit(&f, USERS * S, USERS + 1);
    assert_int_equal(schedule(&f, USERS * S, &dec), 1);
    assert_int_equal(dec[0].pod, a);
    assert_non_null(strstr(view(&f, b).reason, "user late0 has 1 pods running"));
    assert_int_equal(gs_tenancy_cancel(f.t, (USERS + 1) * S, a), 0);
    assert_int_equal(schedule(&f, (USERS + 1) * S, &dec), 1);
    assert_int_equal(dec[0].pod, b);
    teardown_fx(&f);
}

/* A gang held by maxPodsPerUser says the user's running count as it is when read: another of
 * the user's pods starting after the gang's try moves it. */
static void test_gang_user_limit_words(void **state)
{
    (void)state;
#define U0   ", labels: {user: u0}"
#define IN_G U0 ", annotations: {scheduling.k8s.io/group-name: g}"
    struct fx f;
    setup_fx(&f, "---\napiVersion: gpu.example.com/v1\nkind: GPUQuota\n"
                 "metadata: {name: q, namespace: a}\n"
                 "spec: {tenant: ta, quotas: {a100-80gb: {total: 16, dedicated: 16}},"
                 " limits: {maxPodsPerUser: 2}}\n" POD("s0", 1, U0) POD("s1", 1, U0)
                     POD("m0", 1, IN_G) POD("m1", 1, IN_G));
#undef IN_G
#undef U0
    const struct gs_decision *dec;
    submit(&f, 0, 0);
    assert_int_equal(schedule(&f, 0, &dec), 1);
    int32_t m0 = submit(&f, 1 * S, 2), m1 = submit(&f, 1 * S, 3);
    assert_int_equal(schedule(&f, 1 * S, &dec), 0);
    const char *said = "tenant ta: user u0 has %d pods running, the gang needs 2 more "
                       "(maxPodsPerUser 2)";
    char want[256];
    snprintf(want, sizeof(want), said, 1);
    assert_string_equal(view(&f, m1).reason, want);
    submit(&f, 2 * S, 1);
    assert_int_equal(schedule(&f, 2 * S, &dec), 1);
    snprintf(want, sizeof(want), said, 2);
    assert_string_equal(view(&f, m0).reason, want);
    assert_string_equal(view(&f, m1).reason, want);
    teardown_fx(&f);
}

/* A pending pod's reason counts the nodes as they are: a node that went down since its last
 * search is counted not ready, not as it was then, and counted again once it is back; a failed
 * card is no free card. */
static void test_reason_after_node_down(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("x0", 8, "") POD("x1", 8, "") POD("x2", 8, "") POD("x3", 8, ""));
    const struct gs_decision *dec;
    submit(&f, 0, 0);
    int32_t b = submit(&f, 0, 1), c = submit(&f, 0, 2);
    assert_int_equal(schedule(&f, 0, &dec), 2);
    assert_string_equal(view(&f, c).reason,
                        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.");
    assert_int_equal(gs_tenancy_node_ready(f.t, 1 * S, 1, 0, 1), 0);
    schedule(&f, 1 * S, &dec); /* x1 waits again beside x2 */
    assert_string_equal(view(&f, c).reason,
                        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had "
                        "untolerated taint {node.kubernetes.io/not-ready: }.");
    assert_int_equal(gs_tenancy_cancel(f.t, 2 * S, c), 0);
    schedule(&f, 2 * S, &dec);
    assert_int_equal(gs_tenancy_node_ready(f.t, 3 * S, 1, 1, 1), 0);
    schedule(&f, 3 * S, &dec); /* x1 runs again */
    assert_int_equal(view(&f, b).state, GS_POD_RUNNING);
    int32_t d = submit(&f, 4 * S, 3);
    schedule(&f, 4 * S, &dec);
    assert_string_equal(view(&f, d).reason,
                        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.");
    teardown_fx(&f);
}

/* "N free in the cluster, at most M on one node" counts the cards free when the reason is read,
 * not when the pod's last search failed: another pod taking some moves it, or drops it once too
 * few are left for the pod. */
static void test_reason_free_cards_now(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f,
             POD("x0", 6, "") POD("x1", 5, "") POD("big", 4, "") POD("s0", 1, "") POD("s1", 1, ""));
    const struct gs_decision *dec;
    submit(&f, 0, 0);
    submit(&f, 0, 1);
    assert_int_equal(schedule(&f, 0, &dec), 2);
    int32_t big = submit(&f, 1 * S, 2);
    assert_int_equal(schedule(&f, 1 * S, &dec), 0);
    assert_string_equal(view(&f, big).reason,
                        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu; 5 free "
                        "nvidia.com/gpu in the cluster, at most 3 on one node.");
    submit(&f, 2 * S, 3);
    assert_int_equal(schedule(&f, 2 * S, &dec), 1);
    assert_string_equal(view(&f, big).reason,
                        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu; 4 free "
                        "nvidia.com/gpu in the cluster, at most 3 on one node.");
    submit(&f, 3 * S, 4);
    assert_int_equal(schedule(&f, 3 * S, &dec), 1);
    assert_string_equal(view(&f, big).reason,
                        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.");
    teardown_fx(&f);
}

/* "N free in the cluster, at most M on one node" counts the free cards a pod could take: not a
 * failed one. */
static void test_reason_free_cards_healthy(void **state)
{
    (void)state;
    struct fx f;
    setup_fx(&f, POD("h0", 5, "") POD("h1", 5, "") POD("h2", 4, ""));
    const struct gs_decision *dec;
    submit(&f, 0, 0);
    int32_t b = submit(&f, 0, 1), c = submit(&f, 0, 2);
    assert_int_equal(schedule(&f, 0, &dec), 2);
    assert_non_null(strstr(view(&f, c).reason,
                           "; 6 free nvidia.com/gpu in the cluster, at most 3 on one node"));
    struct gs_tenancy_pod v = view(&f, b);
    int idle = __builtin_ctz(~v.gpu_mask); /* a card of its node that h1 does not use */
    assert_int_equal(gs_tenancy_card_health(f.t, 1 * S, v.node, idle, 0, 1), 0);
    schedule(&f, 1 * S, &dec);
    assert_non_null(strstr(view(&f, c).reason,
                           "; 5 free nvidia.com/gpu in the cluster, at most 3 on one node"));
    teardown_fx(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_submit_schedule_cancel),
        cmocka_unit_test(test_released_records_reused),
        cmocka_unit_test(test_remembered_searches_miss_nothing),
        cmocka_unit_test(test_node_log_bounded),
        cmocka_unit_test(test_reused_record_keeps_its_place),
        cmocka_unit_test(test_podgroup_places_reused),
        cmocka_unit_test(test_unmade_podgroup_released),
        cmocka_unit_test(test_released_without_gangs),
        cmocka_unit_test(test_released_users_reused),
        cmocka_unit_test(test_gang_user_limit_words),
        cmocka_unit_test(test_reason_after_node_down),
        cmocka_unit_test(test_reason_free_cards_now),
        cmocka_unit_test(test_reason_free_cards_healthy),
        cmocka_unit_test(test_node_failure_requeues_gang),
        cmocka_unit_test(test_requeue_one),
        cmocka_unit_test(test_card_health),
        cmocka_unit_test(test_bind_to),
        cmocka_unit_test(test_restore),
        cmocka_unit_test(test_restore_tainted_since),
        cmocka_unit_test(test_restore_over_quota),
        cmocka_unit_test(test_podgroup_and_probe),
        cmocka_unit_test(test_probe_gang_new_user),
        cmocka_unit_test(test_podgroup_made_after_its_pods),
        cmocka_unit_test(test_effective_request),
        cmocka_unit_test(test_refusal_container),
        cmocka_unit_test(test_three_resource_quotas),
        cmocka_unit_test(test_node_topology),
        cmocka_unit_test(test_probe_kept_by_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
