/*
 * The multi-tenant simulator on small scenarios built in code: each test is a case users met
 * with other schedulers, and asserts the outcome pod by pod.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/fairshare.h"
#include "gpusched/fleet.h"
#include "gpusched/scenario.h"
#include "gpusched/tsim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S 1000000LL /* one second in microseconds */

static void *grow(void *p, size_t *n, size_t size)
{
    void *q = realloc(p, (*n + 1) * size);
    assert_non_null(q);
    memset((char *)q + *n * size, 0, size);
    (*n)++;
    return q;
}

static struct gs_scenario *scn(void)
{
    struct gs_scenario *s;
    assert_int_equal(gs_scenario_new(&s), 0);
    return s;
}

/* scn_file() - the scenario in @path, loaded and resolved. */
static struct gs_scenario *scn_file(const char *path)
{
    struct gs_scenario *s = scn();
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_scenario_load(s, path, &d), 0);
    assert_int_equal(gs_scenario_resolve(s, &d), 0);
    return s;
}

/* A template of @gpus A100-80GB cards in one NVLink group (or none when @nvlink is 0). */
static int tmpl(struct gs_scenario *s, const char *name, int gpus, int nvlink)
{
    s->policy.templates =
        grow(s->policy.templates, &s->policy.ntemplates, sizeof(*s->policy.templates));
    struct gs_node_template *t = &s->policy.templates[s->policy.ntemplates - 1];
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->model = gs_catalog_find("A100-SXM4-80GB", -1);
    t->gpus = gpus;
    t->cpu_milli = 128000;
    t->memory_mib = 1 << 20;
    for (int i = 0; i < gpus; i++) {
        t->pcie_domain[i] = (uint8_t)(i / 4);
        t->nvlink_group[i] = nvlink ? 0 : GS_NO_GROUP;
    }
    return (int)s->policy.ntemplates - 1;
}

static void node(struct gs_scenario *s, const char *name, const char *zone, int t)
{
    s->policy.nodes = grow(s->policy.nodes, &s->policy.nnodes, sizeof(*s->policy.nodes));
    struct gs_scn_node *n = &s->policy.nodes[s->policy.nnodes - 1];
    snprintf(n->name, sizeof(n->name), "%s", name);
    snprintf(n->zone, sizeof(n->zone), "%s", zone);
    n->template_index = t;
}

static struct gs_pod_spec *pod(struct gs_scenario *s, const char *ns, const char *name, int gpus,
                               int64_t arrival_s, int64_t duration_s)
{
    s->pods = grow(s->pods, &s->npods, sizeof(*s->pods));
    struct gs_pod_spec *p = &s->pods[s->npods - 1];
    snprintf(p->ns, sizeof(p->ns), "%s", ns);
    snprintf(p->name, sizeof(p->name), "%s", name);
    p->arrival_us = arrival_s * S;
    p->duration_us = duration_s < 0 ? GS_UNSET : duration_s * S;
    p->util_pct = GS_UNSET;
    p->checkpoint_us = GS_UNSET;
    p->ncontainers = 1;
    p->containers[0] =
        (struct gs_scn_container){gpus, GS_UNSET, GS_UNSET, 1000, 1024, "", 0, 0, 0, 0, 0};
    return p;
}

static void pclass(struct gs_scenario *s, const char *name, int32_t value)
{
    s->policy.priority_classes = grow(s->policy.priority_classes, &s->policy.npriority_classes,
                                      sizeof(*s->policy.priority_classes));
    struct gs_priority_class_spec *c = &s->policy.priority_classes[s->policy.npriority_classes - 1];
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->value = value;
}

static void podgroup(struct gs_scenario *s, const char *ns, const char *name, int min,
                     const char *queue)
{
    s->policy.podgroups =
        grow(s->policy.podgroups, &s->policy.npodgroups, sizeof(*s->policy.podgroups));
    struct gs_podgroup_spec *g = &s->policy.podgroups[s->policy.npodgroups - 1];
    snprintf(g->ns, sizeof(g->ns), "%s", ns);
    snprintf(g->name, sizeof(g->name), "%s", name);
    snprintf(g->queue, sizeof(g->queue), "%s", queue ? queue : "");
    g->min_member = min;
}

static void queue(struct gs_scenario *s, const char *name, int weight)
{
    s->policy.queues = grow(s->policy.queues, &s->policy.nqueues, sizeof(*s->policy.queues));
    struct gs_queue_spec *q = &s->policy.queues[s->policy.nqueues - 1];
    snprintf(q->name, sizeof(q->name), "%s", name);
    q->weight = weight;
    q->cap_gpu_milli = q->cap_cpu_milli = q->cap_memory_mib = q->cap_pods = GS_UNSET;
    q->reclaimable = 1;
    q->overcommit_milli = 1000;
}

static void gang(struct gs_scenario *s, const char *ns, const char *name, int n, int gpus,
                 int64_t arrival_s, int64_t duration_s, const char *cls, const char *queue_name)
{
    podgroup(s, ns, name, n, queue_name);
    for (int i = 0; i < n; i++) {
        char pn[GS_SCN_NAME_MAX];
        snprintf(pn, sizeof(pn), "%s-%d", name, i);
        struct gs_pod_spec *p = pod(s, ns, pn, gpus, arrival_s, duration_s);
        snprintf(p->group, sizeof(p->group), "%s", name);
        snprintf(p->priority_class, sizeof(p->priority_class), "%s", cls ? cls : "");
    }
}

/* A tenant with a dedicated quota of @ded_cards A100 cards and a total of @total_cards. */
static void tenant(struct gs_scenario *s, const char *name, int ded_cards, int total_cards)
{
    s->policy.tenants = grow(s->policy.tenants, &s->policy.ntenants, sizeof(*s->policy.tenants));
    struct gs_tenant_spec *ts = &s->policy.tenants[s->policy.ntenants - 1];
    gs_tenant_spec_init(ts, name);
    snprintf(ts->namespaces[0], sizeof(ts->namespaces[0]), "%s", name);
    ts->nnamespaces = 1;
    ts->has_quota = 1;
    ts->nquotas = 1;
    snprintf(ts->quotas[0].key, sizeof(ts->quotas[0].key), "a100-80gb");
    ts->quotas[0].model = gs_catalog_find("A100-SXM4-80GB", -1);
    ts->quotas[0].total_milli = total_cards * 1000;
    ts->quotas[0].dedicated_milli = ded_cards * 1000;
    ts->quotas[0].shared_milli = (total_cards - ded_cards) * 1000;
}

static struct gs_tsim *run(struct gs_scenario *s, enum gs_way way)
{
    struct gs_tsim *t;
    struct gs_diag d;
    gs_diag_init(&d);
    int r = gs_tsim_run(s, way, &t, &d);
    if (r)
        fprintf(stderr, "%s\n", d.msg);
    assert_int_equal(r, 0);
    return t;
}

static const struct gs_tsim_pod *find(const struct gs_tsim *t, const char *name)
{
    for (size_t i = 0; i < gs_tsim_pod_count(t); i++)
        if (strcmp(gs_tsim_pod(t, i)->name, name) == 0)
            return gs_tsim_pod(t, i);
    fail_msg("no pod %s", name);
    return NULL;
}

static const char *node_of(const struct gs_tsim *t, const char *name)
{
    const struct gs_tsim_pod *p = find(t, name);
    return p->node >= 0 ? gs_tsim_node_name(t, p->node) : "(none)";
}

/* Pod @name's runs: node index, start and end (seconds) of each, "n@s-e;" in order. */
static void runs_of(const struct gs_tsim *t, const char *name, char *buf, size_t cap)
{
    size_t off = 0;
    const struct gs_tsim_pod *p = find(t, name);
    buf[0] = '\0';
    for (size_t i = 0; i < gs_tsim_use_count(t) && off < cap; i++) {
        const struct gs_tsim_use *u = gs_tsim_use(t, i);
        if (gs_tsim_pod(t, (size_t)u->pod) == p)
            off += (size_t)snprintf(
                buf + off, cap - off, "%s@%lld-%lld;", gs_tsim_node_name(t, u->node),
                (long long)(u->start_us / 1000000), (long long)(u->end_us / 1000000));
    }
}

/* A GPUQuota's schedulingPolicy (tests/data/scenario/scheduling-policy.yaml): each of
 * binPacking, gangScheduling and topologyAwareness changes where and when its tenant's pods run
 * when turned off, and nothing of the other tenant's. */
static void test_scheduling_policy(void **state)
{
    (void)state;
    char buf[256];
    for (int on = 1; on >= 0; on--) {
        struct gs_scenario *s = scn_file("tests/data/scenario/scheduling-policy.yaml");
        for (size_t i = 0; i < s->policy.ntenants; i++) {
            struct gs_tenant_spec *ts = &s->policy.tenants[i];
            assert_true(ts->bin_packing && ts->gang_scheduling && ts->topology_awareness);
            ts->bin_packing = ts->gang_scheduling = ts->topology_awareness = on;
        }
        struct gs_tsim *t = run(s, GS_WAY_FULL);
        assert_string_equal(node_of(t, "p0"), "n1");
        assert_string_equal(node_of(t, "p1"), on ? "n1" : "n2");
        runs_of(t, "g0", buf, sizeof(buf));
        assert_string_equal(buf, on ? "" : "n1@1-3601;");
        runs_of(t, "g2", buf, sizeof(buf));
        assert_string_equal(buf, on ? "" : "n1@3601-7201;");
        assert_string_equal(node_of(t, "b0"), on ? "(none)" : "n3");
        gs_tsim_free(t);
        gs_scenario_free(s);
    }
}

/* The head's promise binds only pods behind it in GPUQueueSort's order as it is now
 * (tests/data/scenario/queue-promise.yaml): a queue that fell further below its deserved share
 * since the promise goes first, and no pod is reclaimed twice for it. */
static void test_promise_follows_queues(void **state)
{
    (void)state;
    char buf[256];
    struct gs_scenario *s = scn_file("tests/data/scenario/queue-promise.yaml");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    runs_of(t, "b7", buf, sizeof(buf));
    assert_string_equal(buf, "n0@4200-7800;");
    runs_of(t, "a4", buf, sizeof(buf));
    assert_string_equal(buf, "n0@0-14400;"); /* once: 4 reclaimed at 600 s, no fifth */
    runs_of(t, "a0", buf, sizeof(buf));
    assert_string_equal(buf, "n0@0-600;n0@7800-22200;");
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* Taints and tolerations (tests/data/scenario/taints.yaml): an untolerated NoSchedule or
 * NoExecute taint keeps a pod off its node, an empty key with Exists tolerates every taint, the
 * API server's default NoExecute tolerations (tolerationSeconds 300) are accepted and change
 * nothing; a pod kept waiting names the taint as kube-scheduler does. */
static void test_taints(void **state)
{
    (void)state;
    struct gs_scenario *s = scn_file("tests/data/scenario/taints.yaml");
    s->sim.horizon_us = 1800LL * 1000000; /* before plain ends: late and ml still wait */
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_string_equal(node_of(t, "plain"), "n1");
    assert_string_equal(node_of(t, "gpu-ok"), "n2");
    assert_string_equal(node_of(t, "any"), "n3");
    assert_string_equal(node_of(t, "late"), "(none)");
    assert_string_equal(find(t, "late")->reason,
                        "0/3 nodes are available: 2 Insufficient nvidia.com/gpu, 1 node(s) had "
                        "untolerated taint {nvidia.com/gpu: present}.");
    assert_string_equal(node_of(t, "ml"), "(none)");
    gs_tsim_free(t);
    s->sim.horizon_us = GS_UNSET;
    t = run(s, GS_WAY_EXCLUSIVE);
    char runs[128];
    runs_of(t, "late", runs, sizeof(runs));
    assert_string_equal(runs, "n1@3600-7200;"); /* n1 frees at 1h; n2 never takes it */
    runs_of(t, "ml", runs, sizeof(runs));
    assert_string_equal(runs, "n1@3600-7200;");
    runs_of(t, "after", runs, sizeof(runs)); /* n2 has its two cards free from 6000 s on */
    assert_string_equal(runs, "n1@7200-9000;");
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* A gang losing a node (tests/data/scenario/node-failure.yaml): n2 fails at 30 min, both
 * members wait again, and "four", which did not fit before, takes n1 at once (the member sent
 * back from n1 freed it) until 1 h 30 min, when the gang runs again; n3 failing at 3 h 30 min
 * sends its pod to n1, freed by the gang then; n2 failing again takes its pod with it. */
static void test_node_failures(void **state)
{
    (void)state;
    struct gs_scenario *s;
    struct gs_diag d;
    char runs[256];
    gs_diag_init(&d);
    assert_int_equal(gs_scenario_new(&s), 0);
    assert_int_equal(gs_scenario_load(s, "tests/data/scenario/node-failure.yaml", &d), 0);
    assert_int_equal(gs_scenario_resolve(s, &d), 0);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    runs_of(t, "job-0", runs, sizeof(runs));
    assert_string_equal(runs, "n1@10-1800;n1@5400-12600;");
    runs_of(t, "job-1", runs, sizeof(runs));
    assert_string_equal(runs, "n2@10-1800;n2@5400-12600;");
    runs_of(t, "four", runs, sizeof(runs));
    assert_string_equal(runs, "n1@1800-5400;");
    runs_of(t, "whole-node", runs, sizeof(runs));
    assert_string_equal(runs, "n3@60-12600;n1@12600-21600;");
    runs_of(t, "late", runs, sizeof(runs)); /* n2 down again from 5 h to 5 h 30 min */
    assert_string_equal(runs, "n2@12600-18000;n2@19800-21600;");
    assert_int_equal(find(t, "job-0")->start_us, 10 * 1000000LL); /* its first start */
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* A higher-priority pod needing 1 GPU, whose only candidates are a 3-pod gang's members: the
 * whole gang goes, and nothing else. */
static void test_preempt_whole_gang(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t2 = tmpl(s, "two", 2, 0), t1 = tmpl(s, "one", 1, 0);
    node(s, "n1", "az-1", t2);
    node(s, "n2", "az-1", t1);
    node(s, "n3", "az-1", t1);
    pclass(s, "low", 10);
    pclass(s, "mid", 50);
    pclass(s, "high", 100);
    gang(s, "ns", "g", 3, 1, 0, 1000, "low", NULL);
    snprintf(pod(s, "ns", "other", 1, 0, 1000)->priority_class, GS_SCN_NAME_MAX, "mid");
    struct gs_pod_spec *hp = pod(s, "ns", "urgent", 1, 10, 100);
    snprintf(hp->priority_class, GS_SCN_NAME_MAX, "high");
    /* "other" lands first on a one-card node; the gang then fills the rest. */
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "urgent")->start_us, 10 * S);
    for (int i = 0; i < 3; i++) {
        char n[16];
        snprintf(n, sizeof(n), "g-%d", i);
        assert_int_equal(find(t, n)->preemptions, 1);
    }
    assert_int_equal(find(t, "other")->preemptions, 0);
    assert_int_equal(gs_tsim_summary(t)->preemptions, 3);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* A snapshot continued (--from-now): a gang put back where it ran and then evicted waits and
 * runs again when room comes back; a pod put back with its evictions (sim.gpusched.io/evictions)
 * keeps its churn guard, so the preemptor that would take it waits. */
static void test_restored_gang_runs_again(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t2 = tmpl(s, "two", 2, 0), t1 = tmpl(s, "one", 1, 0);
    node(s, "n1", "az-1", t2);
    node(s, "n2", "az-1", t1);
    pclass(s, "low", 10);
    pclass(s, "high", 100);
    gang(s, "ns", "g", 2, 1, 0, 1000, "low", NULL);
    struct gs_pod_spec *kept = pod(s, "ns", "kept", 1, 0, 1000);
    snprintf(kept->priority_class, GS_SCN_NAME_MAX, "low");
    struct gs_pod_spec *a = &s->pods[0], *b = &s->pods[1];
    for (int i = 0; i < 3; i++) {
        struct gs_pod_spec *p = i == 0 ? a : i == 1 ? b : kept;
        p->placed_node_index = i < 2 ? 0 : 1;
        snprintf(p->placed_node, sizeof(p->placed_node), "%s", i < 2 ? "n1" : "n2");
        p->placed_mask = i == 1 ? 2u : 1u;
        p->placed_start_us = 50 * S;
        p->placed_given = GS_PLACED_GPUS | GS_PLACED_START;
    }
    kept->evictions = 1; /* run again at 50 s after an eviction: spared until 350 s */
    struct gs_pod_spec *hp = pod(s, "ns", "urgent", 2, 100, 100);
    snprintf(hp->priority_class, GS_SCN_NAME_MAX, "high");
    struct gs_pod_spec *one = pod(s, "ns", "urgent-one", 1, 110, 100);
    snprintf(one->priority_class, GS_SCN_NAME_MAX, "high");
    s->sim.now_us = 100 * S;
    s->sim.from_now = 1;
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "urgent")->start_us, 100 * S);
    for (int i = 0; i < 2; i++) {
        char n[16];
        snprintf(n, sizeof(n), "g-%d", i);
        assert_int_equal(find(t, n)->preemptions, 1);
        assert_int_equal(find(t, n)->end_us, 1300 * S); /* run again from 300 s, from 0 */
    }
    assert_int_equal(find(t, "kept")->preemptions, 1);          /* not evicted again */
    assert_int_equal(find(t, "urgent-one")->start_us, 200 * S); /* kept was spared */
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A snapshot continued: which part of its tenant's GPUQuota a pod put back is held in
 * (sim.gpusched.io/charged) is what victim searches read, not the order pods are put back in:
 * team-a's first pod in file order holds the shared part, so it is the one team-b's guarantee
 * takes, and the dedicated one stays.
 */
static void test_restored_charge_is_searched(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t2", 2, 1));
    tenant(s, "team-a", 1, 2);
    tenant(s, "team-b", 1, 2);
    const char *names[] = {"lent", "own"};
    for (int i = 0; i < 2; i++) {
        struct gs_pod_spec *p = pod(s, "team-a", names[i], 1, 0, 1000);
        snprintf(p->placed_node, sizeof(p->placed_node), "n1");
        p->placed_node_index = 0;
        p->placed_mask = 1u << i;
        p->placed_start_us = 50 * S;
        p->placed_given = GS_PLACED_GPUS | GS_PLACED_START;
        p->charged = i == 0 ? 2 : 1; /* shared, dedicated */
    }
    pod(s, "team-b", "b", 1, 110, 100);
    s->sim.now_us = 100 * S;
    s->sim.from_now = 1;
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "b")->start_us, 110 * S);
    assert_int_equal(find(t, "lent")->preemptions, 1);
    assert_int_equal(find(t, "own")->preemptions, 0);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * cardFailures: a card failing with an Xid that loses the work (79) sends its pod back to wait;
 * one that does not (13 here) drains: its pod runs on, and no new pod lands there until the card
 * is back. A snapshot continued keeps its unhealthy cards: what runs there runs on.
 */
static void test_card_failures(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    s->sim.failures = calloc(4, sizeof(*s->sim.failures)); /* freed with the scenario */
    assert_non_null(s->sim.failures);
    node(s, "n1", "az-1", tmpl(s, "t2", 2, 1));
    pod(s, "ns", "lost", 1, 0, 1000);
    pod(s, "ns", "drained", 1, 0, 1000);
    pod(s, "ns", "late", 1, 200, 100);
    static const int xids[] = {79, 13};
    for (int g = 0; g < 2; g++)
        s->sim.failures[s->sim.nfailures++] =
            (struct gs_node_failure){.node = "n1",
                                     .index = 0,
                                     .gpu = g,
                                     .xid = xids[g],
                                     .at_us = 100 * S,
                                     .restore_us = g ? 1500 * S : GS_UNSET};
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "lost")->preemptions, 0);
    char runs[128];
    runs_of(t, "lost", runs, sizeof(runs)); /* back when card 1 is, at 1500 s */
    assert_string_equal(runs, "n1@0-100;n1@1500-2500;");
    runs_of(t, "drained", runs, sizeof(runs));
    assert_string_equal(runs, "n1@0-1000;");
    runs_of(t, "late", runs, sizeof(runs)); /* card 1 freed at 1000 s, healthy at 1500 s */
    assert_string_equal(runs, "n1@2500-2600;");
    gs_tsim_free(t);
    s->sim.nfailures = 0;
    /* continued from a snapshot at 300 s: card 1 unhealthy (draining), card 0 empty */
    s->pods[1].placed_node_index = 0;
    snprintf(s->pods[1].placed_node, sizeof(s->pods[1].placed_node), "n1");
    s->pods[1].placed_mask = 2u;
    s->pods[1].placed_start_us = 0;
    s->pods[1].placed_given = GS_PLACED_GPUS | GS_PLACED_START;
    s->pods[0].arrival_us = 300 * S;
    s->sim.failures[s->sim.nfailures++] = (struct gs_node_failure){
        .node = "n1", .index = 0, .gpu = 1, .xid = 79, .at_us = 300 * S, .restore_us = GS_UNSET};
    s->sim.now_us = 300 * S;
    s->sim.from_now = 1;
    t = run(s, GS_WAY_FULL);
    runs_of(t, "drained", runs, sizeof(runs)); /* runs on, though its card failed */
    assert_string_equal(runs, "n1@0-1000;");
    runs_of(t, "late", runs, sizeof(runs)); /* arrived first: card 0, the healthy one */
    assert_string_equal(runs, "n1@300-400;");
    runs_of(t, "lost", runs, sizeof(runs)); /* card 1 freed at 1000 s stays unhealthy */
    assert_string_equal(runs, "n1@400-1400;");
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * cardHolds: a snapshot taken while a pod evicted through Kubernetes stops on n1 holds both its
 * cards from 300 s to 330 s (its grace period): the pod on card 1 runs on, one arriving at
 * 300 s takes card 0 only at 330 s.
 */
static void test_card_holds(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    s->sim.failures = calloc(2, sizeof(*s->sim.failures)); /* freed with the scenario */
    assert_non_null(s->sim.failures);
    node(s, "n1", "az-1", tmpl(s, "t2", 2, 1));
    pod(s, "ns", "on", 1, 0, 1000);
    pod(s, "ns", "next", 1, 300, 100);
    s->pods[0].placed_node_index = 0;
    snprintf(s->pods[0].placed_node, sizeof(s->pods[0].placed_node), "n1");
    s->pods[0].placed_mask = 2u;
    s->pods[0].placed_start_us = 0;
    s->pods[0].placed_given = GS_PLACED_GPUS | GS_PLACED_START;
    for (int g = 0; g < 2; g++)
        s->sim.failures[s->sim.nfailures++] = (struct gs_node_failure){.node = "n1",
                                                                       .index = 0,
                                                                       .gpu = g,
                                                                       .xid = GS_XID_HELD,
                                                                       .at_us = 300 * S,
                                                                       .restore_us = 330 * S};
    s->sim.now_us = 300 * S;
    s->sim.from_now = 1;
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    char runs[128];
    runs_of(t, "on", runs, sizeof(runs));
    assert_string_equal(runs, "n1@0-1000;");
    runs_of(t, "next", runs, sizeof(runs));
    assert_string_equal(runs, "n1@330-430;");
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * cardModes.cards: a snapshot's empty card keeps the mode it last had and its hold. Card 0 last
 * ran shared slices from 250 s, so with a 10-minute hold a whole-card pod may take it only at
 * 850 s; card 1, never used, takes one at once. A card holding a pod in another mode, or a mode
 * its node cannot have, is refused naming the entry.
 */
static void test_restored_card_modes(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t2", 2, 1));
    pod(s, "ns", "first", 1, 300, 3000);
    pod(s, "ns", "second", 1, 300, 100);
    s->sim.convert = 1;
    s->sim.min_hold_us = 600 * S;
    s->sim.modes_defined = 1;
    struct gs_card_history h = {
        .node = "n1", .index = 0, .gpu = 0, .mode = GS_CARD_SHARED, .since_us = 250 * S};
    s->sim.cards = &h;
    s->sim.ncards = 1;
    s->sim.now_us = 300 * S;
    s->sim.from_now = 1;
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    char runs[128];
    runs_of(t, "first", runs, sizeof(runs));
    assert_string_equal(runs, "n1@300-3300;");
    runs_of(t, "second", runs, sizeof(runs)); /* card 0 held shared until 850 s */
    assert_string_equal(runs, "n1@850-950;");
    gs_tsim_free(t);
    h.mode = GS_CARD_MIG; /* an A100 has a MIG geometry; time slicing needs replicas */
    t = run(s, GS_WAY_FULL);
    gs_tsim_free(t);
    h.mode = GS_CARD_TIMESLICED;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_tsim_run(s, GS_WAY_FULL, &t, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "cardModes.cards: card 0 of node n1 cannot be in mode"));
    s->sim.cards = NULL;
    s->sim.ncards = 0;
    gs_scenario_free(s);
    /* a snapshot of an idle cluster (no pod arrived by now) keeps its cards' modes too: the
     * scheduler's clock was behind every since, and the card refused as if in a bad mode */
    s = scn();
    node(s, "n1", "az-1", tmpl(s, "t2", 2, 1));
    pod(s, "ns", "later", 1, 400, 100);
    s->sim.modes_defined = 1;
    h.mode = GS_CARD_SHARED;
    s->sim.cards = &h;
    s->sim.ncards = 1;
    s->sim.now_us = 300 * S;
    s->sim.from_now = 1;
    t = run(s, GS_WAY_FULL);
    runs_of(t, "later", runs, sizeof(runs));
    assert_string_equal(runs, "n1@400-500;");
    gs_tsim_free(t);
    s->sim.cards = NULL;
    s->sim.ncards = 0;
    gs_scenario_free(s);
}

/* Of two gangs that could make room, the smaller one goes. */
static void test_preempt_smallest_gang(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t4 = tmpl(s, "four", 4, 0);
    node(s, "n1", "az-1", t4);
    node(s, "n2", "az-1", t4);
    pclass(s, "low", 10);
    pclass(s, "high", 100);
    gang(s, "ns", "big", 4, 1, 0, 1000, "low", NULL);
    gang(s, "ns", "small", 2, 2, 1, 1000, "low", NULL);
    struct gs_pod_spec *hp = pod(s, "ns", "urgent", 1, 10, 100);
    snprintf(hp->priority_class, GS_SCN_NAME_MAX, "high");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "urgent")->start_us, 10 * S);
    assert_int_equal(find(t, "big-0")->preemptions, 0);
    assert_int_equal(gs_tsim_summary(t)->preemptions, 2);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A victim search that found victims starts no back-off: when the top pods end at 50 s, each
 * node keeps a low pod beside 2 free cards, and both members of the gang, which found no
 * victims at 10 s, search and preempt one low pod each in the same pass.
 */
static void test_backoff_after_failed_search_only(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t4 = tmpl(s, "four", 4, 0);
    node(s, "n1", "az-1", t4);
    node(s, "n2", "az-1", t4);
    pclass(s, "low", 10);
    pclass(s, "high", 100);
    pclass(s, "top", 1000);
    const char *names[4] = {"top-1", "low-1", "top-2", "low-2"};
    for (int i = 0; i < 4; i++) {
        struct gs_pod_spec *p = pod(s, "ns", names[i], 2, 0, i % 2 ? 1000 : 50);
        snprintf(p->priority_class, GS_SCN_NAME_MAX, "%s", i % 2 ? "low" : "top");
        snprintf(p->node_name, sizeof(p->node_name), "n%d", i / 2 + 1);
    }
    gang(s, "ns", "g", 2, 4, 10, 100, "high", NULL);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "g-0")->start_us, 50 * S);
    assert_int_equal(find(t, "g-1")->start_us, 50 * S);
    assert_int_equal(find(t, "low-1")->preemptions, 1);
    assert_int_equal(find(t, "low-2")->preemptions, 1);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* Free GPUs 2, 1 and 1; job A (two 1-GPU pods) then job B (one 2-GPU pod). */
static void test_small_pods_keep_the_big_hole(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "two", "az-1", tmpl(s, "t2", 2, 0));
    int t1 = tmpl(s, "t1", 1, 0);
    node(s, "one-a", "az-1", t1);
    node(s, "one-b", "az-1", t1);
    pod(s, "ns", "a-0", 1, 0, -1);
    pod(s, "ns", "a-1", 1, 0, -1);
    pod(s, "ns", "b-0", 2, 1, -1);
    for (int way = 0; way < GS_WAY_COUNT; way++) {
        struct gs_tsim *t = run(s, (enum gs_way)way);
        assert_string_equal(node_of(t, "a-0"), "one-a");
        assert_string_equal(node_of(t, "a-1"), "one-b");
        assert_string_equal(node_of(t, "b-0"), "two");
        gs_tsim_free(t);
    }
    gs_scenario_free(s);
}

/* Eight GPUs, four equal queues, gangs of 6, 5, 4 and 3: no evict-readmit loop. */
static void test_fair_share_settles(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t8", 8, 1));
    const char *qn[4] = {"q1", "q2", "q3", "q4"};
    const char *gn[4] = {"g6", "g5", "g4", "g3"};
    for (int i = 0; i < 4; i++) {
        queue(s, qn[i], 1);
        gang(s, "ns", gn[i], 6 - i, 1, i, 600, NULL, qn[i]);
    }
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    for (size_t i = 0; i < gs_tsim_pod_count(t); i++) {
        assert_true(gs_tsim_pod(t, i)->preemptions <= 1);
        assert_int_equal(gs_tsim_pod(t, i)->state, GS_POD_COMPLETED);
    }
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* A reclaim frees more than the first pod needs: the queue's other pending pods use it too. */
static void test_reclaim_then_fill(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t8 = tmpl(s, "t8", 8, 1);
    node(s, "n1", "az-1", t8);
    node(s, "n2", "az-1", t8);
    queue(s, "qa", 1);
    queue(s, "qb", 2);
    gang(s, "ns", "a9", 9, 1, 0, 10000, NULL, "qa");
    gang(s, "ns", "a7", 7, 1, 0, 10000, NULL, "qa");
    for (int i = 0; i < 5; i++) {
        char n[16];
        snprintf(n, sizeof(n), "b-%d", i);
        struct gs_pod_spec *p = pod(s, "ns", n, 2, 10, 1000);
        snprintf(p->queue, sizeof(p->queue), "qb");
    }
    /* qb deserves 10 of 16 GPUs (weight 2 of 3), qa 6: reclaiming gang a7 keeps qa at 9 >= 6;
     * the 7 GPUs freed take three 2-GPU pods at once. Taking a9 too would leave qa at 0. */
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    for (int i = 0; i < 5; i++) {
        char n[16];
        snprintf(n, sizeof(n), "b-%d", i);
        if (i < 3)
            assert_int_equal(find(t, n)->start_us, 10 * S);
        else
            assert_true(find(t, n)->start_us > 10 * S);
    }
    assert_int_equal(find(t, "a7-0")->preemptions, 1);
    assert_true(gs_tsim_summary(t)->reclaims > 0);
    assert_int_equal(find(t, "a9-0")->preemptions, 0);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* A queue that goes past its deserved share after another queue's pod failed gives that pod
 * victims: it reclaims at once, as it would after a scheduler restart (Volcano's reclaim action
 * looks at every pending job each session), not only once something frees. */
static void test_reclaim_when_victims_arrive(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t4 = tmpl(s, "t4", 4, 1);
    node(s, "n1", "az-1", t4);
    node(s, "n2", "az-1", t4);
    queue(s, "qa", 1);
    queue(s, "qb", 1);
    const char *names[] = {"a0", "a1", "b0", "b1", "p", "b2", "b3", "b4", "b5"};
    for (int i = 0; i < 9; i++) {
        struct gs_pod_spec *p = pod(s, "ns", names[i], i == 4 ? 2 : 1,
                                    i < 4   ? 0
                                    : i < 5 ? 1
                                            : 2,
                                    10000);
        snprintf(p->queue, sizeof(p->queue), "%s", names[i][0] == 'b' ? "qb" : "qa");
        snprintf(p->node_name, sizeof(p->node_name), "%s", i < 5 ? "n1" : "n2");
    }
    /* At 1 s qb holds 2 of the 2 GPUs it deserves (its demand), so p waits and its victim
     * search backs off 10 s; at 2 s qb runs 6 against 4 deserved: once the back-off is over,
     * b0 and b1 are reclaimed for p, which keeps qb at its share. */
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "p")->start_us, 11 * S);
    assert_int_equal(find(t, "b0")->preemptions + find(t, "b1")->preemptions, 2);
    for (int i = 5; i < 9; i++)
        assert_int_equal(find(t, names[i])->preemptions, 0);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* A node runs its template's maxPods at most (kubelet's maxPods, 110 when not given), pods of no
 * GPU included: the next waits with kube-scheduler's "Too many pods", and runs when one ends. */
static void test_max_pods(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t8 = tmpl(s, "eight", 8, 0);
    s->policy.templates[t8].max_pods = 2;
    node(s, "n1", "az-1", t8);
    pod(s, "ns", "cpu-only", 0, 0, 100);
    pod(s, "ns", "one-card", 1, 0, 1000);
    pod(s, "ns", "third", 1, 1, 100);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "third")->start_us, 100 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
    s = scn();
    node(s, "n1", "az-1", tmpl(s, "eight", 8, 0));
    for (int i = 0; i < GS_NODE_PODS_DEFAULT + 1; i++) {
        char n[16];
        snprintf(n, sizeof(n), "p-%d", i);
        pod(s, "ns", n, 0, 0, -1);
    }
    t = run(s, GS_WAY_FULL);
    char last[16];
    snprintf(last, sizeof(last), "p-%d", GS_NODE_PODS_DEFAULT);
    assert_int_equal(find(t, last)->state, GS_POD_PENDING);
    assert_non_null(strstr(find(t, last)->reason, "Too many pods"));
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* A node with a PreferNoSchedule taint a pod does not tolerate takes it only when no other node
 * fits (kube-scheduler's TaintToleration score): n1 comes first on a tie otherwise, as it does
 * for a pod that tolerates the taint; "big" finds n2 short of cards and takes n1 all the same. */
static void test_prefer_no_schedule(void **state)
{
    (void)state;
    for (int tolerate = 0; tolerate < 2; tolerate++) {
        struct gs_scenario *s = scn();
        int t8 = tmpl(s, "eight", 8, 0);
        node(s, "n1", "az-1", t8);
        node(s, "n2", "az-1", t8);
        s->policy.taints = calloc(1, sizeof(*s->policy.taints));
        s->policy.ntaints = 1;
        snprintf(s->policy.taints[0].key, sizeof(s->policy.taints[0].key), "spot");
        s->policy.taints[0].effect = GS_EFFECT_PREFER_NO_SCHEDULE;
        s->policy.nodes[0].ntaints = 1;
        struct gs_pod_spec *p = pod(s, "ns", "first", 1, 0, -1);
        if (tolerate) {
            p->ntolerations = 1;
            snprintf(p->tolerations[0].key, sizeof(p->tolerations[0].key), "spot");
            p->tolerations[0].exists = 1;
        }
        pod(s, "ns", "big", 8, 1, -1);
        struct gs_tsim *t = run(s, GS_WAY_FULL);
        assert_string_equal(node_of(t, "first"), tolerate ? "n1" : "n2");
        assert_string_equal(node_of(t, "big"), tolerate ? "n2" : "n1");
        gs_tsim_free(t);
        gs_scenario_free(s);
    }
}

/* A pod whose victim search backs off when room appears searches again once the back-off is
 * over, as kube-scheduler moves a pod out of its backoff queue: p (2 cards) finds one victim at
 * 1 s; h0 ends at 5 s, while p backs off; at 11 s a card and the low pod make its room. */
static void test_backoff_ends_in_a_search(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    pclass(s, "low", 0);
    pclass(s, "high", 1000);
    node(s, "n1", "az-1", tmpl(s, "eight", 8, 0));
    for (int i = 0; i < 7; i++) {
        char n[16];
        snprintf(n, sizeof(n), "h%d", i);
        snprintf(pod(s, "ns", n, 1, 0, i ? 10000 : 5)->priority_class, GS_SCN_NAME_MAX, "high");
    }
    snprintf(pod(s, "ns", "low", 1, 0, 10000)->priority_class, GS_SCN_NAME_MAX, "low");
    snprintf(pod(s, "ns", "p", 2, 1, 100)->priority_class, GS_SCN_NAME_MAX, "high");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "p")->start_us, 11 * S);
    assert_int_equal(find(t, "low")->preemptions, 1);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* A ResourceQuota @name in namespace "ns" that bounds nothing yet. */
static struct gs_rquota_spec *rquota(struct gs_scenario *s, const char *name)
{
    s->policy.rquotas = grow(s->policy.rquotas, &s->policy.nrquotas, sizeof(*s->policy.rquotas));
    struct gs_rquota_spec *q = &s->policy.rquotas[s->policy.nrquotas - 1];
    snprintf(q->ns, sizeof(q->ns), "ns");
    snprintf(q->name, sizeof(q->name), "%s", name);
    q->gpu_milli = q->gpumem_mib = q->cpu_milli = q->memory_mib = q->pods = GS_UNSET;
    return q;
}

/* Two cards x 200 MiB is charged 400 MiB against the namespace's gpumem quota. */
static void test_gpumem_quota_per_card(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t4", 4, 0));
    rquota(s, "mem")->gpumem_mib = 600;
    const char *names[3] = {"a", "b", "c"};
    const int gpus[3] = {2, 2, 1};
    for (int i = 0; i < 3; i++) {
        struct gs_pod_spec *p = pod(s, "ns", names[i], gpus[i], i, -1);
        p->containers[0].gpumem_mib = 200;
    }
    for (int way = GS_WAY_SHARING; way < GS_WAY_COUNT; way++) {
        struct gs_tsim *t = run(s, (enum gs_way)way);
        assert_int_equal(find(t, "a")->state, GS_POD_RUNNING);
        assert_int_equal(find(t, "b")->state, GS_POD_PENDING);
        assert_non_null(strstr(find(t, "b")->reason, "requests.nvidia.com/gpumem 400+400 > 600"));
        assert_int_equal(find(t, "c")->state, GS_POD_RUNNING);
        gs_tsim_free(t);
    }
    gs_scenario_free(s);
}

/* A whole-card container beside a HAMi slice became a second slice (the largest gpumem was applied
 * to every card): containers asking cards of different shapes are refused, naming both. */
static void test_mixed_card_shapes_refused(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t4", 4, 0));
    for (int k = 0; k < 2; k++) {
        struct gs_pod_spec *p = pod(s, "ns", k ? "same" : "mixed", 1, 0, -1);
        p->ncontainers = 2;
        p->containers[1] = p->containers[0];
        p->containers[0].gpumem_mib = 1000;
        p->containers[1].gpumem_mib = k ? 1000 : GS_UNSET;
    }
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "mixed")->state, GS_POD_REJECTED);
    assert_non_null(strstr(find(t, "mixed")->reason,
                           "containers[0] asks nvidia.com/gpumem 1000 MiB per card and "
                           "containers[1] a whole card"));
    assert_int_equal(find(t, "same")->state, GS_POD_RUNNING);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* A ResourceQuota's reason writes cpu as Kubernetes writes the quantity: 3 cores "3", not the
 * milli-cores 3000 (which read as 3,000 cores). */
static void test_cpu_quota_reason(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t4", 4, 0));
    rquota(s, "cpu")->cpu_milli = 4000;
    pod(s, "ns", "a", 1, 0, -1)->containers[0].cpu_milli = 3000;
    pod(s, "ns", "b", 1, 1, -1)->containers[0].cpu_milli = 1500;
    for (int way = 0; way < GS_WAY_COUNT; way++) {
        struct gs_tsim *t = run(s, (enum gs_way)way);
        assert_int_equal(find(t, "a")->state, GS_POD_RUNNING);
        assert_int_equal(find(t, "b")->state, GS_POD_PENDING);
        assert_string_equal(find(t, "b")->reason,
                            "namespace ns: requests.cpu 3+1500m > 4 (ResourceQuota cpu)");
        gs_tsim_free(t);
    }
    gs_scenario_free(s);
}

/* A gang with a hard nvlink tier that would fit only across two NVLink groups stays pending. */
static void test_nvlink_gang_never_split(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t8 = tmpl(s, "t8", 8, 1);
    node(s, "n1", "az-1", t8);
    node(s, "n2", "az-1", t8);
    pod(s, "other", "busy-1", 5, 0, -1);
    pod(s, "other", "busy-2", 5, 0, -1);
    gang(s, "ns", "job", 2, 3, 1, 100, NULL, NULL); /* 6 GPUs: 3 free on each node */
    for (size_t i = 0; i < s->npods; i++)
        if (strcmp(s->pods[i].ns, "ns") == 0)
            s->pods[i].tier = GS_TIER_NVLINK;
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_string_not_equal(node_of(t, "busy-1"), node_of(t, "busy-2"));
    assert_int_equal(find(t, "job-0")->state, GS_POD_PENDING);
    assert_int_equal(find(t, "job-1")->state, GS_POD_PENDING);
    assert_non_null(strstr(find(t, "job-0")->reason, "one NVLink group"));
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* Over GPUQuota is a result with a reason, not an error. */
static void test_gpuquota_reason(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t8", 8, 1));
    tenant(s, "team-a", 2, 3);
    pod(s, "team-a", "a", 2, 0, -1);
    pod(s, "team-a", "b", 1, 0, -1);
    pod(s, "team-a", "c", 1, 0, -1);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "a")->state, GS_POD_RUNNING);
    assert_int_equal(find(t, "b")->state, GS_POD_RUNNING);
    assert_int_equal(find(t, "c")->state, GS_POD_PENDING);
    assert_string_equal(find(t, "c")->reason, "tenant team-a: GPUQuota a100-80gb total 3/3 GPUs");
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A pod of whole cards takes what is left of its tenant's dedicated quota and borrows the rest:
 * team-a (dedicated 8, shared 8) holds 4 dedicated cards and 0.3 of a card shared; its 8-card
 * pod borrows 4 of the 8 it may (it was refused as 8 past shared's 7.7); then another 4 would
 * pass total (the 8-card pod's 4 dedicated cards counted as taken), while half a card more fits.
 */
static void test_gpuquota_borrows_past_dedicated(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t8 = tmpl(s, "t8", 8, 1);
    node(s, "n1", "az-1", t8);
    node(s, "n2", "az-1", t8);
    node(s, "n3", "az-1", t8);
    tenant(s, "team-a", 8, 16);
    pod(s, "team-a", "four", 4, 0, -1);
    pod(s, "team-a", "slice", 1, 1, -1)->containers[0].gpucores = 30;
    pod(s, "team-a", "eight", 8, 2, -1);
    pod(s, "team-a", "more", 4, 3, -1);
    pod(s, "team-a", "half", 1, 4, -1)->containers[0].gpucores = 50;
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "four")->state, GS_POD_RUNNING);
    assert_int_equal(find(t, "slice")->state, GS_POD_RUNNING);
    assert_int_equal(find(t, "eight")->state, GS_POD_RUNNING);
    assert_int_equal(find(t, "more")->state, GS_POD_PENDING);
    assert_string_equal(find(t, "more")->reason,
                        "tenant team-a: GPUQuota a100-80gb total 12.3/16 GPUs, the pod asks 4");
    assert_int_equal(find(t, "half")->state, GS_POD_RUNNING); /* borrows 4.3 + 0.5 of 8 */
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* The head of the queue is not starved by smaller pods behind it. */
static void test_backfill_keeps_head(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t4", 4, 0));
    pod(s, "ns", "running", 2, 0, 100);
    pod(s, "ns", "head", 4, 1, 100);
    pod(s, "ns", "short", 1, 2, 50); /* ends at 52 < 100: may backfill */
    pod(s, "ns", "long", 1, 3, 500); /* would delay the head: waits */
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "short")->start_us, 2 * S);
    assert_int_equal(find(t, "head")->start_us, 100 * S);
    assert_true(find(t, "long")->start_us >= 200 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* EASY backfill's other half: a pod that ends after the promised time may still use what the
 * head will not need then. */
static void test_backfill_uses_spare_cards(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t4", 4, 0));
    pod(s, "ns", "running", 3, 0, 100);
    pod(s, "ns", "head", 2, 1, 100); /* fits at 100, when three cards come free */
    pod(s, "ns", "long", 1, 2, 500); /* ends after 100, but leaves the head its two cards */
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "long")->start_us, 2 * S);
    assert_int_equal(find(t, "head")->start_us, 100 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* activeDeadlineSeconds: a run ends at its deadline from its start when its work is not done by
 * then (DeadlineExceeded), a pod without a duration too; one done first ends when it is done. */
static void test_active_deadline(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t4", 4, 0));
    pod(s, "ns", "capped", 1, 0, 1000)->deadline_us = 100 * S;
    pod(s, "ns", "open", 1, 0, -1)->deadline_us = 50 * S;
    pod(s, "ns", "done", 1, 0, 30)->deadline_us = 100 * S;
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "capped")->end_us, 100 * S);
    assert_non_null(strstr(find(t, "capped")->reason, "DeadlineExceeded"));
    assert_int_equal(find(t, "open")->end_us, 50 * S);
    assert_int_equal(find(t, "done")->end_us, 30 * S);
    assert_null(find(t, "done")->reason);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* Backfill reads a deadline as the pod's walltime: a pod whose run is capped before the head's
 * promised start backfills, however long its work. */
static void test_backfill_reads_deadline(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t4", 4, 0));
    pod(s, "ns", "running", 2, 0, 100);
    pod(s, "ns", "head", 4, 1, 100);
    pod(s, "ns", "capped", 1, 2, 500)->deadline_us = 50 * S; /* ends by 52 < 100 */
    pod(s, "ns", "long", 1, 3, 500);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "capped")->start_us, 2 * S);
    assert_int_equal(find(t, "capped")->end_us, 52 * S);
    assert_int_equal(find(t, "head")->start_us, 100 * S);
    assert_true(find(t, "long")->start_us >= 200 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* spec.overhead counts with the containers' requests: 1 GiB asked plus 1023 GiB of overhead fits
 * the node's 1 TiB with nothing else, so a second such pod waits. */
static void test_overhead_counts(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t4", 4, 0));
    pod(s, "ns", "a", 1, 0, 100)->overhead_memory_mib = 1023 * 1024;
    pod(s, "ns", "b", 1, 1, 100)->overhead_memory_mib = 1023 * 1024;
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "a")->start_us, 0);
    assert_int_equal(find(t, "b")->start_us, 100 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* Same scenario, same JSON, byte for byte. */
static void test_deterministic_json(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t8 = tmpl(s, "t8", 8, 1);
    node(s, "n1", "az-1", t8);
    node(s, "n2", "az-2", t8);
    pclass(s, "low", 1);
    for (int i = 0; i < 40; i++) {
        char n[16];
        snprintf(n, sizeof(n), "p%d", i);
        struct gs_pod_spec *p = pod(s, i % 2 ? "a" : "b", n, 1 + i % 3, i * 7 % 50, 30 + i % 40);
        if (i % 4 == 0) {
            p->containers[0].gpumem_mib = 8192;
            p->containers[0].gpucores = 30;
        }
    }
    char *out[2];
    for (int k = 0; k < 2; k++) {
        struct gs_tsim *t[3];
        for (int w = 0; w < 3; w++)
            t[w] = run(s, (enum gs_way)w);
        size_t len;
        FILE *f = open_memstream(&out[k], &len);
        assert_int_equal(gs_tsim_write_json(f, t, 3), 0);
        fclose(f);
        for (int w = 0; w < 3; w++)
            gs_tsim_free(t[w]);
    }
    assert_string_equal(out[0], out[1]);
    assert_non_null(strstr(out[0], "\"usage\""));
    free(out[0]);
    free(out[1]);
    gs_scenario_free(s);
}

static void test_waterfill(void **state)
{
    (void)state;
    int32_t w[3] = {1, 1, 2};
    int64_t lim[3] = {1000, 100000, 100000}, out[3];
    gs_fairshare_waterfill(16000, w, lim, 3, out);
    assert_int_equal(out[0], 1000);
    assert_int_equal(out[1], 5000);
    assert_int_equal(out[2], 10000);
    int64_t eq[3] = {5, 5, 5}, one[3] = {9, 0, 0};
    assert_int_equal(gs_fairshare_jain(eq, 3), 1000);
    assert_int_equal(gs_fairshare_jain(one, 3), 333);
}

/* Per-tenant step-profile overrides, loaded from profiles.yaml, change what a pod may ask. */
static void test_profile_overrides(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_scenario_load(s, "tests/data/scenario/overrides.yaml", &d), 0);
    assert_int_equal(gs_scenario_resolve(s, &d), 0);
    struct gs_step_profile p;
    assert_int_equal(gs_step_profile_for(&s->policy, "light-training", "tenant-a", &p), 0);
    assert_int_equal(p.max_memory_mib, 8192);
    assert_int_equal(p.gpu_share, 1); /* not overridden: the profile's */
    assert_int_equal(gs_step_profile_for(&s->policy, "light-training", "tenant-c", &p), 0);
    assert_int_equal(p.max_memory_mib, 16384);
    assert_int_equal(gs_step_profile_for(&s->policy, "no-such", "tenant-a", &p), -ENOENT);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "a0")->state, GS_POD_REJECTED);
    assert_non_null(strstr(find(t, "a0")->reason, "maxMemory 8192 MiB"));
    assert_int_equal(find(t, "b0")->whole, 1); /* gpuShare off for tenant-b */
    assert_int_equal(find(t, "b0")->priority, 300);
    assert_int_equal(find(t, "c0")->whole, 0);
    assert_int_equal(find(t, "c0")->share_milli, 150);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * MIG instances by NVIDIA's geometry: seven 1g.10gb fill one A100-80GB in the order the driver
 * picks (6, 4, 5, 0, 1, 2, 3), the eighth goes to the other card, and a 7g.80gb or a whole card
 * waits until a card is empty again: a card is never in two modes.
 */
static void test_mig_instances(void **state)
{
    (void)state;
    struct gs_scenario *s = scn_file("tests/data/scenario/mig.yaml");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    static const int starts[8] = {6, 4, 5, 0, 1, 2, 3, 6};
    for (int i = 0; i < 8; i++) {
        char n[16];
        snprintf(n, sizeof(n), "small-%d", i);
        const struct gs_tsim_pod *p = find(t, n);
        assert_non_null(p->mig);
        assert_string_equal(p->mig, "1g.10gb");
        assert_int_equal(p->mig_start, starts[i]);
        assert_int_equal(p->gpu_mask, i < 7 ? 1u : 2u);
        assert_int_equal(p->start_us, i * S);
    }
    assert_int_equal(find(t, "full-card")->start_us, 3606 * S); /* card 0 empty again */
    assert_int_equal(find(t, "full-card")->mig_start, 0);
    assert_int_equal(find(t, "whole")->start_us, 3607 * S); /* card 1 empty again */
    assert_null(find(t, "whole")->mig);
    assert_int_equal(find(t, "nope")->state, GS_POD_REJECTED);
    gs_tsim_free(t);
    /* Without MIG, an instance request takes a whole card. */
    t = run(s, GS_WAY_SHARING);
    assert_null(find(t, "small-0")->mig);
    assert_int_equal(find(t, "small-1")->start_us, 1 * S);
    assert_int_equal(find(t, "small-2")->start_us, 3600 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * The GpuClusterPolicy decides where MIG goes: it enables the A100 with 1g.10gb and 7g.80gb only,
 * so 1g.10gb pods share the A100 (node 1), a 2g.20gb pod has nowhere to go (the H100 has that
 * profile, but the policy leaves MIG off there), and a whole card goes to the H100. Under
 * strategy none no nvidia.com/mig-* resource exists at all.
 */
static void test_mig_policy_applied(void **state)
{
    (void)state;
    struct gs_scenario *s = scn_file("tests/data/scenario/mig-policy.yaml");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "small-0")->node, 1);
    assert_int_equal(find(t, "small-1")->node, 1);
    assert_int_equal(find(t, "small-1")->start_us, 2 * S);
    assert_int_equal(find(t, "two-g")->state, GS_POD_REJECTED);
    assert_non_null(strstr(find(t, "two-g")->reason, "GpuClusterPolicy allows that MIG profile"));
    assert_int_equal(find(t, "whole")->node, 0);
    assert_null(find(t, "whole")->mig);
    gs_tsim_free(t);
    s->policy.mig_policy.strategy = GS_MIG_STRATEGY_NONE;
    t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "small-0")->state, GS_POD_REJECTED);
    assert_non_null(strstr(find(t, "small-0")->reason, "strategy none advertises no"));
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A gang that cannot start (its 8-card member finds no free node) is tried, its trial binds rolled
 * back, and the run moves on: once room frees, all three members start together at 9573 s (n0
 * free since 7313 s, then a card on n2 at 9573 s; team-b's 8-card pod, its queue past its
 * deserved share, waited for a free node instead of preempting team-a's).
 */
static void test_gang_retry_ends(void **state)
{
    (void)state;
    struct gs_scenario *s = scn_file("tests/data/scenario/gang-retry.yaml");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    static const char *const members[] = {"p6", "p19", "p171"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(find(t, members[i])->state, GS_POD_COMPLETED);
        assert_int_equal(find(t, members[i])->start_us, 9573 * S);
    }
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * PodGroup spec.minResources (tests/data/scenario/gang-minresources.yaml): b's 16 GPUs pass the
 * cluster but not queue train's capability while solo and a hold 16 of its 24, though b's two
 * 4-card members alone would fit it: b waits whole, naming the figures, and starts at 1 h when
 * solo ends. c's 32 GPUs wait for the overcommit check (32 x 1.2 less what runs) until a and b
 * end at 7260 s. Without minResources, both would start on arrival.
 */
static void test_gang_min_resources(void **state)
{
    (void)state;
    struct gs_scenario *s = scn_file("tests/data/scenario/gang-minresources.yaml");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "a-0")->start_us, 60 * S);
    assert_int_equal(find(t, "b-0")->start_us, 3600 * S);
    assert_int_equal(find(t, "b-1")->start_us, 3600 * S);
    assert_int_equal(find(t, "c-0")->start_us, 7260 * S);
    gs_tsim_free(t);
    s->sim.horizon_us = 1800 * S; /* the reasons they wait with */
    t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "b-1")->state, GS_POD_PENDING);
    assert_string_equal(find(t, "b-1")->reason,
                        "PodGroup ml/b minResources nvidia.com/gpu 16 exceed what queue train "
                        "may admit: 16 of capability 24 in use");
    assert_string_equal(find(t, "c-0")->reason,
                        "PodGroup ml/c minResources nvidia.com/gpu 32 exceed what the cluster "
                        "may admit: 16 in use and 0 held by PodGroups admitted, of 32 x "
                        "overcommit-factor 1.2");
    gs_tsim_free(t);
    /* cpu is written as Kubernetes writes it (2700m, not 2.7) */
    s->policy.queues[0].cap_cpu_milli = 2500;
    s->policy.podgroups[1].min_gpu_milli = 0;
    s->policy.podgroups[1].min_cpu_milli = 2700;
    t = run(s, GS_WAY_FULL);
    assert_string_equal(find(t, "b-1")->reason,
                        "PodGroup ml/b minResources cpu 2700m exceed what queue train may admit: "
                        "0 of capability 2500m in use");
    gs_tsim_free(t);
    for (size_t i = 0; i < s->policy.npodgroups; i++) /* the same gangs, none named */
        s->policy.podgroups[i].min_gpu_milli = s->policy.podgroups[i].min_cpu_milli =
            s->policy.podgroups[i].min_memory_mib = 0;
    t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "b-0")->start_us, 120 * S);
    assert_int_equal(find(t, "c-0")->start_us, 180 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * The same PodGroups (tests/data/scenario/gang-minresources.yaml) with tenant ml given a GPUQuota
 * of 31 cards in total: c's minResources of 32 are more than the tenant may ever hold,
 * so c waits naming the quota and both figures, and never starts (its one-card member would fit
 * the quota, and it ran at 7260 s when only the cluster bounded it); a total of 32 lets it start
 * then again. The quota bounds only where quotas apply: the sharing way starts it as before.
 */
static void test_gang_min_resources_over_quota(void **state)
{
    (void)state;
    struct gs_scenario *s = scn_file("tests/data/scenario/gang-minresources.yaml");
    assert_int_equal(s->policy.ntenants, 1); /* ml's, without a quota */
    struct gs_tenant_spec *ts = &s->policy.tenants[0];
    ts->has_quota = 1;
    ts->nquotas = 1;
    snprintf(ts->quotas[0].key, sizeof(ts->quotas[0].key), "%s", "h100-80gb");
    ts->quotas[0].model = gs_catalog_find("H100-SXM5-80GB", -1);
    ts->quotas[0].total_milli = ts->quotas[0].shared_milli = 31000;
    s->sim.horizon_us = 1800 * S;
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_string_equal(find(t, "c-0")->reason,
                        "PodGroup ml/c minResources nvidia.com/gpu 32 exceed what tenant ml may "
                        "ever hold: its GPUQuota's total over its GPU models is 31");
    gs_tsim_free(t);
    s->sim.horizon_us = GS_UNSET;
    t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "b-0")->start_us, 3600 * S); /* the others as before */
    assert_int_equal(find(t, "c-0")->state, GS_POD_PENDING);
    gs_tsim_free(t);
    t = run(s, GS_WAY_SHARING);
    assert_int_equal(find(t, "c-0")->state, GS_POD_COMPLETED);
    gs_tsim_free(t);
    ts->quotas[0].total_milli = ts->quotas[0].shared_milli = 32000;
    t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "c-0")->start_us, 7260 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A Queue's capability bounds its running pods in every resource it names, the pod count too
 * (tests/data/scenario/queue-capability.yaml); a PodGroup's minResources pods is admitted
 * against it. Each waits naming the queue and the figures, and starts when room is made.
 */
static void test_queue_capability(void **state)
{
    (void)state;
    struct gs_scenario *s = scn_file("tests/data/scenario/queue-capability.yaml");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    static const char *const names[] = {"r0", "r1", "r2", "r3", "r4", "b0", "b1", "b2", "g-0"};
    static const int64_t start_s[] = {0, 0, 3600, 3600, 180, 0, 0, 3600, 5400};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        assert_int_equal(find(t, names[i])->start_us, start_s[i] * S);
    gs_tsim_free(t);
    s->sim.horizon_us = 1800 * S; /* the reasons they wait with */
    t = run(s, GS_WAY_FULL);
    assert_string_equal(find(t, "r2")->reason, "queue research: cpu 2+1 > capability 2");
    assert_string_equal(find(t, "r3")->reason, "queue research: memory 8Gi+12Gi > capability 16Gi");
    assert_string_equal(find(t, "b2")->reason, "queue batch: pods 2+1 > capability 2");
    assert_string_equal(find(t, "g-1")->reason, "PodGroup ml/g minResources pods 2 exceed what "
                                                "queue batch may admit: 2 of capability 2 in use");
    gs_tsim_free(t);
    for (size_t i = 0; i < s->policy.nqueues; i++) /* without capabilities, all start on arrival */
        s->policy.queues[i].cap_cpu_milli = s->policy.queues[i].cap_memory_mib =
            s->policy.queues[i].cap_pods = GS_UNSET;
    s->sim.horizon_us = GS_UNSET;
    t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "r2")->start_us, 60 * S);
    assert_int_equal(find(t, "b2")->start_us, 60 * S);
    assert_int_equal(find(t, "g-0")->start_us, 1860 * S); /* n1's 8 cards full until b2 ends */
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A PodGroup member whose queue-name annotation names another queue than its PodGroup's
 * spec.queue is refused in the full way, naming both (Volcano would drop the annotation without
 * a word); the same annotation naming the PodGroup's queue, or none, is taken.
 */
static void test_queue_conflict(void **state)
{
    (void)state;
    struct gs_scenario *s = scn_file("tests/data/scenario/gang-minresources.yaml");
    struct gs_pod_spec *b1 = NULL;
    for (size_t i = 0; i < s->npods; i++)
        if (strcmp(s->pods[i].name, "b-1") == 0)
            b1 = &s->pods[i];
    assert_non_null(b1);
    snprintf(b1->queue, sizeof(b1->queue), "%s", "default");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "b-1")->state, GS_POD_REJECTED);
    assert_string_equal(find(t, "b-1")->reason,
                        "its queue-name annotation names queue default but its PodGroup ml/b is in "
                        "queue train (a PodGroup's members run in its queue): drop the annotation "
                        "or make them agree");
    gs_tsim_free(t);
    t = run(s, GS_WAY_EXCLUSIVE); /* no PodGroups there: the annotation is its queue */
    assert_int_not_equal(find(t, "b-1")->state, GS_POD_REJECTED);
    gs_tsim_free(t);
    snprintf(b1->queue, sizeof(b1->queue), "%s", "train");
    t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "b-1")->start_us, 3600 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A PodGroup that names no queue is in `default`, as Volcano's admission writes it in, and so
 * are its members, in every way: c-0's annotation naming train neither puts it there nor (in the
 * full way) is taken, refused saying the PodGroup runs in default; naming default, or none, it
 * runs there.
 */
static void test_podgroup_without_queue(void **state)
{
    (void)state;
    struct gs_scenario *s = scn_file("tests/data/scenario/gang-minresources.yaml");
    struct gs_pod_spec *c0 = NULL;
    for (size_t i = 0; i < s->npods; i++)
        if (strcmp(s->pods[i].name, "c-0") == 0)
            c0 = &s->pods[i];
    assert_non_null(c0);
    snprintf(c0->queue, sizeof(c0->queue), "%s", "train");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "c-0")->state, GS_POD_REJECTED);
    assert_string_equal(find(t, "c-0")->reason,
                        "its queue-name annotation names queue train but its PodGroup ml/c names "
                        "no queue and so runs in default (a PodGroup's members run in its queue): "
                        "drop the annotation, or name queue train in the PodGroup's spec.queue");
    gs_tsim_free(t);
    t = run(s, GS_WAY_EXCLUSIVE); /* not refused there, but in its PodGroup's queue all the same */
    assert_string_equal(find(t, "c-0")->queue, "default");
    gs_tsim_free(t);
    for (int named = 0; named < 2; named++) {
        snprintf(c0->queue, sizeof(c0->queue), "%s", named ? "default" : "");
        t = run(s, GS_WAY_FULL);
        assert_int_not_equal(find(t, "c-0")->state, GS_POD_REJECTED);
        assert_string_equal(find(t, "c-0")->queue, "default");
        gs_tsim_free(t);
    }
    gs_scenario_free(s);
}

/*
 * Declared GPU memory is charged: ten 10 GiB pods on four 24 GiB cards, eight run and two wait;
 * when the eight end, both start at once (a kept reservation holds nothing back).
 */
static void test_memory_is_charged(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t4 = tmpl(s, "a10x4", 4, 0);
    s->policy.templates[t4].model = gs_catalog_find("A10", -1);
    node(s, "n1", "az-1", t4);
    for (int i = 0; i < 10; i++) {
        char n[16];
        snprintf(n, sizeof(n), "p%d", i);
        struct gs_pod_spec *p = pod(s, "ns", n, 1, 0, 3600);
        p->containers[0].gpumem_mib = 10240;
        p->containers[0].gpucores = 30;
    }
    for (int way = GS_WAY_SHARING; way < GS_WAY_COUNT; way++) {
        struct gs_tsim *t = run(s, (enum gs_way)way);
        int at0 = 0;
        for (size_t i = 0; i < gs_tsim_pod_count(t); i++)
            at0 += gs_tsim_pod(t, i)->start_us == 0;
        assert_int_equal(at0, 8);
        assert_int_equal(find(t, "p8")->start_us, 3600 * S);
        assert_int_equal(find(t, "p9")->start_us, 3600 * S);
        gs_tsim_free(t);
    }
    gs_scenario_free(s);
}

/*
 * A gang goes whole: team-a's gang of two holds one card on its dedicated quota and one beyond
 * it; team-b, asking for its own dedicated card, takes the gang back whole (as Kueue reclaims a
 * borrowing workload), and the gang runs again when team-b's pod ends.
 */
static void test_borrowing_gang_goes_whole(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t2", 2, 1));
    tenant(s, "team-a", 1, 2);
    tenant(s, "team-b", 1, 2);
    gang(s, "team-a", "g", 2, 1, 0, 1000, NULL, NULL);
    pod(s, "team-b", "b", 1, 10, 100);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "b")->start_us, 10 * S);
    assert_int_equal(find(t, "g-0")->preemptions, 1);
    assert_int_equal(find(t, "g-1")->preemptions, 1);
    assert_int_equal(find(t, "g-0")->state, GS_POD_COMPLETED);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * After a preemption the evicted pods run again as soon as there is room, in queue order: they
 * keep their place ahead of a pod that arrived after them, even when that pod has become the
 * blocked head with a promise.
 */
static void test_evicted_pods_come_back(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t8", 8, 1));
    pclass(s, "lo", 1);
    pclass(s, "hi", 1000);
    for (int i = 0; i < 5; i++) {
        char n[16];
        snprintf(n, sizeof(n), "lo%d", i);
        snprintf(pod(s, "ns", n, 2, 60 * i, 3 * 3600)->priority_class, GS_SCN_NAME_MAX, "lo");
    }
    snprintf(pod(s, "ns", "hi", 8, 600, 3600)->priority_class, GS_SCN_NAME_MAX, "hi");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "hi")->start_us, 600 * S);
    for (int i = 0; i < 4; i++) { /* evicted at 600, back at 4200 when hi ends */
        char n[16];
        snprintf(n, sizeof(n), "lo%d", i);
        const struct gs_tsim_pod *p = find(t, n);
        assert_int_equal(p->preemptions, 1);
        assert_int_equal(p->state, GS_POD_COMPLETED);
        assert_int_equal(p->end_us, (4200 + 3 * 3600) * S);
    }
    assert_int_equal(find(t, "lo4")->start_us, (4200 + 3 * 3600) * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* A gang goes whole, but priority preemption never takes a member of higher priority with it. */
static void test_gang_keeps_its_high_member(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t2", 2, 1));
    pclass(s, "low", 10);
    pclass(s, "mid", 100);
    pclass(s, "top", 1000);
    gang(s, "ns", "g", 2, 1, 0, 1000, "low", NULL);
    snprintf(s->pods[1].priority_class, GS_SCN_NAME_MAX, "top");
    snprintf(pod(s, "ns", "mid", 1, 10, 100)->priority_class, GS_SCN_NAME_MAX, "mid");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "g-0")->preemptions, 0);
    assert_int_equal(find(t, "mid")->start_us, 1000 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* maxPodsPerUser counts the pods of each `user` label; a pod without one is nobody's. */
static void test_max_pods_per_user(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t8", 8, 1));
    tenant(s, "team-a", 8, 8);
    s->policy.tenants[0].max_pods_per_user = 1;
    snprintf(pod(s, "team-a", "ann-1", 1, 0, 100)->user, GS_SCN_NAME_MAX, "ann");
    snprintf(pod(s, "team-a", "ann-2", 1, 1, 100)->user, GS_SCN_NAME_MAX, "ann");
    pod(s, "team-a", "nobody-1", 1, 2, 100);
    pod(s, "team-a", "nobody-2", 1, 3, 100);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "ann-2")->start_us, 100 * S);
    assert_int_equal(find(t, "nobody-1")->start_us, 2 * S);
    assert_int_equal(find(t, "nobody-2")->start_us, 3 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* preemptionPolicy: Never (Kubernetes): a high-priority pod waits instead of preempting. */
static void test_never_preempts(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t1", 1, 0));
    pclass(s, "low", 10);
    pclass(s, "polite", 100);
    s->policy.priority_classes[1].never_preempt = 1;
    snprintf(pod(s, "ns", "low", 1, 0, 100)->priority_class, GS_SCN_NAME_MAX, "low");
    snprintf(pod(s, "ns", "polite", 1, 10, 100)->priority_class, GS_SCN_NAME_MAX, "polite");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "low")->preemptions, 0);
    assert_int_equal(find(t, "polite")->start_us, 100 * S);
    gs_tsim_free(t);
    s->policy.priority_classes[1].never_preempt = 0; /* the same pod may preempt otherwise */
    t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "low")->preemptions, 1);
    assert_int_equal(find(t, "polite")->start_us, 10 * S);
    gs_tsim_free(t);
    /* ... unless it says preemptionPolicy: Never itself: then its class must say so too */
    s->pods[1].preemption = 2;
    t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "polite")->state, GS_POD_REJECTED);
    assert_non_null(strstr(find(t, "polite")->reason, "spec.preemptionPolicy Never differs"));
    gs_tsim_free(t);
    /* a class of an API server's, not in the policy: the pod's word is taken */
    snprintf(s->pods[1].priority_class, GS_SCN_NAME_MAX, "cluster-high");
    s->pods[1].priority = 100;
    s->pods[1].has_priority = 1;
    t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "low")->preemptions, 0);
    assert_int_equal(find(t, "polite")->start_us, 100 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A pod run again after an eviction is spared for GS_READMIT_GRACE_US (300 s); a pod that could
 * preempt it only then is tried again when the grace ends, not when something else moves: "low"
 * runs again at 30 s once "mid" is done, "high" comes at 40 s and takes its card at 330 s (it
 * waited for low's end at 5030 s, nothing else happening between).
 */
static void test_preempts_after_grace(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t1", 1, 0));
    pclass(s, "low", 10);
    pclass(s, "mid", 100);
    pclass(s, "high", 1000);
    snprintf(pod(s, "ns", "low", 1, 0, 5000)->priority_class, GS_SCN_NAME_MAX, "low");
    snprintf(pod(s, "ns", "mid", 1, 10, 20)->priority_class, GS_SCN_NAME_MAX, "mid");
    snprintf(pod(s, "ns", "high", 1, 40, 100)->priority_class, GS_SCN_NAME_MAX, "high");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "mid")->start_us, 10 * S);
    assert_int_equal(find(t, "low")->preemptions, 2);
    assert_int_equal(find(t, "high")->start_us, 330 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * Pods alike are tried once per pass, not one by one: 200 one-card pods on 8 cards all run in
 * turn, in arrival order, and the ones still waiting when the run stops each carry the reason
 * their bucket last failed for.
 */
static void test_alike_pods_tried_once(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t8", 8, 1));
    for (int i = 0; i < 200; i++) {
        char n[16];
        snprintf(n, sizeof(n), "p%03d", i);
        pod(s, "ns", n, 1, i / 50, 100);
    }
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    for (int i = 0; i < 200; i++) {
        char n[16];
        snprintf(n, sizeof(n), "p%03d", i);
        assert_int_equal(find(t, n)->start_us, (int64_t)(i / 8) * 100 * S);
    }
    /* Each instant with events tries the bucket once, and each placement once more. */
    assert_true(gs_tsim_work(t)->tries <= gs_tsim_work(t)->passes + 200);
    gs_tsim_free(t);
    s->sim.horizon_us = 150 * S;
    t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "p199")->state, GS_POD_PENDING);
    assert_string_equal(find(t, "p199")->reason,
                        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* A template of @gpus cards of catalog model @model, no NVLink. */
static int tmpl_of(struct gs_scenario *s, const char *name, int gpus, const char *model)
{
    int t = tmpl(s, name, gpus, 0);
    s->policy.templates[t].model = gs_catalog_find(model, -1);
    assert_true(s->policy.templates[t].model >= 0);
    return t;
}

/* A pod of @cards slices of @mem_mib each (nvidia.com/gpumem; gpucores not given). */
static struct gs_pod_spec *slice_pod(struct gs_scenario *s, const char *name, int cards,
                                     int64_t mem_mib, int64_t arrival_s)
{
    struct gs_pod_spec *p = pod(s, "ns", name, cards, arrival_s, 3600);
    p->containers[0].gpumem_mib = mem_mib;
    return p;
}

static int count_started_at(const struct gs_tsim *t, int64_t at_us)
{
    int n = 0;
    for (size_t i = 0; i < gs_tsim_pod_count(t); i++)
        n += gs_tsim_pod(t, i)->start_us == at_us;
    return n;
}

/*
 * GPU memory is never overcommitted: 24 pods of 2000 MiB on an L40S (46068 MiB), 23 placed, 1
 * pending, under the seed's node tier (overcommit 1.5) and without overcommit (the sharing way)
 * alike: a slice asking memory alone takes its memory's share of compute rounded down (43 milli),
 * so compute never binds before memory.
 */
static void test_vgpu_memory_cap(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl_of(s, "l40s", 1, "L40S"));
    s->policy.tiers[GS_TIER_NODE] = (struct gs_tier_spec){.defined = 1,
                                                          .strategy = GS_STRATEGY_SPREAD,
                                                          .sharing = 1,
                                                          .overcommit_milli = 1500,
                                                          .isolation = GS_ISOLATION_SOFT,
                                                          .max_skew = GS_UNSET};
    for (int i = 0; i < 24; i++) {
        char n[16];
        snprintf(n, sizeof(n), "p%02d", i);
        slice_pod(s, n, 1, 2000, 0)->tier = GS_TIER_NODE;
    }
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(count_started_at(t, 0), 23);
    assert_int_equal(find(t, "p23")->start_us, 3600 * S);
    gs_tsim_free(t);
    /* Without overcommit too: memory alone decides, in every way that shares. */
    t = run(s, GS_WAY_SHARING);
    assert_int_equal(count_started_at(t, 0), 23);
    assert_int_equal(find(t, "p23")->start_us, 3600 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * Three 12 GiB pods at once against the only free 24 GiB card (an A30, 24576 MiB; the other card
 * is held whole): two placed, one pending until one of the two ends.
 */
static void test_vgpu_three_on_one_card(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl_of(s, "a30x2", 2, "A30"));
    pod(s, "ns", "whole", 1, 0, 7200);
    for (int i = 0; i < 3; i++) {
        char n[16];
        snprintf(n, sizeof(n), "p%d", i);
        slice_pod(s, n, 1, 12288, 0);
    }
    for (int way = GS_WAY_SHARING; way < GS_WAY_COUNT; way++) {
        struct gs_tsim *t = run(s, (enum gs_way)way);
        assert_int_equal(find(t, "whole")->gpu_mask, 1u);
        assert_int_equal(find(t, "p0")->gpu_mask, 2u);
        assert_int_equal(find(t, "p1")->gpu_mask, 2u);
        assert_int_equal(find(t, "p0")->start_us, 0);
        assert_int_equal(find(t, "p1")->start_us, 0);
        assert_int_equal(find(t, "p2")->start_us, 3600 * S);
        assert_int_equal(find(t, "p2")->gpu_mask, 2u);
        gs_tsim_free(t);
    }
    gs_scenario_free(s);
}

static void vgpu_class(struct gs_scenario *s, const char *name, int64_t mem_mib, int cores,
                       int max_clients, int shareable)
{
    s->policy.vgpu_classes =
        grow(s->policy.vgpu_classes, &s->policy.nvgpu_classes, sizeof(*s->policy.vgpu_classes));
    struct gs_vgpu_class_spec *c = &s->policy.vgpu_classes[s->policy.nvgpu_classes - 1];
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->memory_mib = mem_mib;
    c->cores_pct = cores;
    c->max_clients = max_clients;
    c->shareable = shareable;
}

/*
 * A card holds at most maxClients pods while one of the class is there, whoever comes later: the
 * seed's shared-gpu-small (2 GiB, 10 %, 8 clients), twelve pods on one A100-80GB: 8 run; a plain
 * 1 GiB slice arriving next waits with the other four, and all five run when the eight end.
 */
static void test_vgpu_class_clients(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "one", 1, 0));
    vgpu_class(s, "shared-gpu-small", 2048, 10, 8, 1);
    for (int i = 0; i < 12; i++) {
        char n[16];
        snprintf(n, sizeof(n), "small-%02d", i);
        struct gs_pod_spec *p = pod(s, "ns", n, 0, 0, 3600);
        snprintf(p->vgpu_class, sizeof(p->vgpu_class), "shared-gpu-small");
    }
    slice_pod(s, "plain", 1, 1024, 1)->containers[0].gpucores = 5;
    struct gs_tsim *t = run(s, GS_WAY_SHARING);
    assert_int_equal(count_started_at(t, 0), 8);
    assert_int_equal(count_started_at(t, 3600 * S), 5);
    assert_int_equal(find(t, "plain")->start_us, 3600 * S);
    assert_int_equal(find(t, "small-00")->share_milli, 100);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A class that is not shareable takes a card alone; a pod asking for two slices gets two
 * different cards, so with one card taken alone it waits for it.
 */
static void test_vgpu_alone_and_distinct(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "two", 2, 0));
    vgpu_class(s, "alone", 4096, 50, 8, 0);
    vgpu_class(s, "small", 2048, 10, 8, 1);
    snprintf(pod(s, "ns", "alone", 1, 0, 3600)->vgpu_class, GS_SCN_NAME_MAX, "alone");
    snprintf(pod(s, "ns", "small", 1, 1, 7200)->vgpu_class, GS_SCN_NAME_MAX, "small");
    slice_pod(s, "pair", 2, 1024, 2);
    struct gs_tsim *t = run(s, GS_WAY_SHARING);
    uint32_t alone = find(t, "alone")->gpu_mask;
    assert_int_equal(__builtin_popcount(alone), 1);
    assert_int_equal(find(t, "small")->gpu_mask, 3u & ~alone);
    assert_int_equal(find(t, "pair")->start_us, 3600 * S);
    assert_int_equal(find(t, "pair")->gpu_mask, 3u);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* A pod of @n time-slice replicas (nvidia.com/gpu.shared) declaring @mem_mib each (0: none). */
static struct gs_pod_spec *replica_pod(struct gs_scenario *s, const char *ns, const char *name,
                                       int n, int64_t mem_mib, int64_t arrival_s,
                                       int64_t duration_s)
{
    struct gs_pod_spec *p = pod(s, ns, name, 0, arrival_s, duration_s);
    p->containers[0].gpu_shared = n;
    p->containers[0].gpumem_mib = mem_mib ? mem_mib : GS_UNSET;
    return p;
}

/*
 * Declared memory is charged on time-sliced cards too: ten 10 GiB replicas on four 24 GiB cards
 * (A30, 4 replicas each) -> eight run, two wait. Two on a card share its time, so each runs at
 * half speed and its hour takes two; the two waiting start then, each on a card of its own (as
 * NVIDIA's device plugin hands replicas out, fewest taken first), so each takes its hour.
 */
static void test_timeslice_memory(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t4 = tmpl_of(s, "a30x4", 4, "A30");
    s->policy.templates[t4].timeslice_replicas = 4;
    node(s, "n1", "az-1", t4);
    for (int i = 0; i < 10; i++) {
        char n[16];
        snprintf(n, sizeof(n), "p%d", i);
        replica_pod(s, "ns", n, 1, 10240, 0, 3600);
    }
    for (int way = GS_WAY_SHARING; way < GS_WAY_COUNT; way++) {
        struct gs_tsim *t = run(s, (enum gs_way)way);
        assert_int_equal(count_started_at(t, 0), 8);
        assert_int_equal(find(t, "p0")->end_us, 7200 * S);
        assert_int_equal(find(t, "p8")->start_us, 7200 * S);
        assert_int_equal(find(t, "p9")->start_us, 7200 * S);
        assert_int_equal(find(t, "p8")->end_us, 10800 * S);
        assert_int_equal(find(t, "p9")->end_us, 10800 * S);
        assert_true(find(t, "p8")->gpu_mask != find(t, "p9")->gpu_mask);
        assert_int_equal(gs_tsim_summary(t)->timeslice, 1);
        gs_tsim_free(t);
    }
    /* Without sharing, a replica is a whole card: four run at a time, an hour each; five are
     * more cards than a node has, said as the pod asked them */
    replica_pod(s, "ns", "five", 5, 0, 0, 3600);
    struct gs_tsim *t = run(s, GS_WAY_EXCLUSIVE);
    assert_int_equal(count_started_at(t, 0), 4);
    assert_int_equal(find(t, "p0")->end_us, 3600 * S);
    assert_int_equal(gs_tsim_summary(t)->timeslice, 0);
    assert_int_equal(find(t, "five")->state, GS_POD_REJECTED);
    assert_string_equal(find(t, "five")->reason,
                        "nvidia.com/gpu.shared 5 (whole cards where nothing is shared): the "
                        "largest node this pod may use has 4 GPUs");
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A replica asking a card's whole time does not join a card of its node whose time is taken
 * while another is idle, as NVIDIA's device plugin hands replicas out: two such on a two-card
 * node each run alone and take their hour (they stacked on one card, two hours each). Four of a
 * quarter each still share one card, which they fill without stretching.
 */
static void test_timeslice_spread(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t = tmpl_of(s, "a30x2", 2, "A30");
    s->policy.templates[t].timeslice_replicas = 4;
    node(s, "n1", "az-1", t);
    replica_pod(s, "ns", "r0", 1, 0, 0, 3600);
    replica_pod(s, "ns", "r1", 1, 0, 0, 3600);
    struct gs_tsim *sim = run(s, GS_WAY_SHARING);
    const struct gs_tsim_pod *a = find(sim, "r0"), *b = find(sim, "r1");
    assert_int_equal(a->end_us, 3600 * S);
    assert_int_equal(b->end_us, 3600 * S);
    assert_int_not_equal(a->gpu_mask, b->gpu_mask);
    gs_tsim_free(sim);
    gs_scenario_free(s);
}

/*
 * Two replicas of one pod go to two different cards, never one: with card 0's four replicas
 * taken, a two-replica pod waits for them although card 1 has four free.
 */
static void test_timeslice_distinct(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t2 = tmpl_of(s, "a30x2", 2, "A30");
    s->policy.templates[t2].timeslice_replicas = 4;
    node(s, "n1", "az-1", t2);
    for (int i = 0; i < 4; i++) {
        char n[16];
        snprintf(n, sizeof(n), "q%d", i);
        replica_pod(s, "ns", n, 1, 0, 0, 3600)->containers[0].gpucores = 25;
    }
    replica_pod(s, "ns", "pair", 2, 0, 1, 3600)->containers[0].gpucores = 25;
    struct gs_tsim *t = run(s, GS_WAY_SHARING);
    for (int i = 0; i < 4;
         i++) { /* the best fit packs them on one card; 4 x 25 % runs full speed */
        char n[16];
        snprintf(n, sizeof(n), "q%d", i);
        assert_int_equal(find(t, n)->gpu_mask, 1u);
        assert_int_equal(find(t, n)->end_us, 3600 * S);
    }
    assert_int_equal(find(t, "pair")->start_us, 3600 * S);
    assert_int_equal(find(t, "pair")->gpu_mask, 3u);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * Weighted round-robin over tenant queues (seed 000 §2.1): on one time-sliced A30, team-a's
 * queue (weight 3) and team-b's (weight 1) each run a pod asking the whole card for an hour.
 * team-a gets 3/4 of the card and ends at 4800 s; team-b's pod, alone from then, does its last
 * 2400 s of work at full speed and ends at 7200 s. Each tenant was entitled to and received one
 * GPU-hour; team-a asked 4800 GPU-s, team-b 7200. A pod arriving later on the card recomputes
 * the others' ends, in whole microseconds.
 */
static void test_timeslice_weighted(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t1 = tmpl_of(s, "a30", 1, "A30");
    s->policy.templates[t1].timeslice_replicas = 4;
    node(s, "n1", "az-1", t1);
    queue(s, "team-a", 3);
    queue(s, "team-b", 1);
    replica_pod(s, "team-a", "a0", 1, 0, 0, 3600);
    replica_pod(s, "team-b", "b0", 1, 0, 0, 3600);
    for (int i = 0; i < 2; i++)
        snprintf(s->pods[i].queue, GS_SCN_NAME_MAX, "%s", i ? "team-b" : "team-a");
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_scenario_resolve(s, &d), 0); /* a tenant per namespace */
    struct gs_tsim *t = run(s, GS_WAY_SHARING);
    assert_int_equal(find(t, "a0")->end_us, 4800 * S);
    assert_int_equal(find(t, "b0")->end_us, 7200 * S);
    for (size_t i = 0; i < gs_tsim_tenant_count(t); i++) {
        const struct gs_tsim_tenant *x = gs_tsim_tenant(t, i);
        if (!x->pods)
            continue;
        int a = strcmp(x->name, "team-a") == 0;
        assert_int_equal(x->ts_asked_milli_s, (a ? 4800 : 7200) * 1000LL);
        assert_int_equal(x->ts_entitled_milli_s, 3600 * 1000LL);
        assert_int_equal(x->ts_received_milli_s, 3600 * 1000LL);
    }
    gs_tsim_free(t);
    /* A third pod (team-b, 30 %, 60 s) at 600 s: a0 keeps 3/4 and ends at 4800 s still; the
     * two team-b pods share 1/4 in proportion 1000:300, each at 250/1300 of full speed, until
     * b1 ends; b0 then has 1/4 again, and the whole card after a0 ends. */
    replica_pod(s, "team-b", "b1", 1, 0, 600, 60)->containers[0].gpucores = 30;
    snprintf(s->pods[2].queue, GS_SCN_NAME_MAX, "team-b");
    assert_int_equal(gs_scenario_resolve(s, &d), 0);
    t = run(s, GS_WAY_SHARING);
    assert_int_equal(find(t, "a0")->end_us, 4800 * S);
    assert_int_equal(find(t, "b1")->end_us, 912001124);  /* 60 s at 192307 ppm, rounded up */
    assert_int_equal(find(t, "b0")->end_us, 7218000281); /* 0.25, 0.192307, 0.25, then 1 */
    gs_tsim_free(t);
    gs_scenario_free(s);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Every open node of @f stands once in the packing level of its card count and compute held,
 * ascending there, under a bound no lower than its own; the others in none. Going down, the next
 * level that holds a node is the one gs_fleet_open_next_level() names. */
static void check_levels(const struct gs_fleet *f, const struct gs_fit *r)
{
    size_t nopen, seen = 0;
    const int32_t *open = gs_fleet_open(f, &nopen);
    for (int g = 1; g <= GS_GPUS_MAX; g++) {
        int next = -1; /* the highest level below l that holds a node, as read going up */
        for (int l = 0; l <= GS_FLEET_LEVELS + 1; l++) {
            assert_int_equal(gs_fleet_open_next_level(f, g, l - 1), next);
            size_t n;
            int32_t bound;
            const int32_t *v = gs_fleet_open_level(f, g, l, r, &n, &bound);
            next = n > 0 ? l : next;
            for (size_t k = 0; k < n; k++) {
                size_t i = (size_t)v[k];
                int64_t whole = (int64_t)g * 1000, held = 0;
                for (int c = 0; c < g; c++) {
                    int32_t u = gs_fleet_card_compute(f, i, c);
                    held += u < 1000 ? u : 1000;
                }
                assert_int_equal(gs_fleet_node_gpus(f, i), g);
                assert_int_equal(held * GS_FLEET_LEVELS / whole, l);
                assert_true(k == 0 || v[k - 1] < v[k]);
                assert_true(bound >= gs_fleet_packing_bound(f, i, r));
                assert_non_null(bsearch(&v[k], open, nopen, sizeof(*open), cmp_i32));
                seen++;
            }
        }
    }
    assert_int_equal(seen, nopen);
}

/*
 * The fleet keeps its open nodes by card count and packing level through commits and releases,
 * and what one card leaves a shared slice (gs_fleet_slice_room()).
 */
static void test_fleet_open_levels(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t8 = tmpl(s, "t8", 8, 1), t4 = tmpl(s, "t4", 4, 0);
    for (int i = 0; i < 6; i++)
        node(s, i % 3 == 2 ? "four" : "eight", "az-1", i % 3 == 2 ? t4 : t8);
    struct gs_fleet *f;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_fleet_new(&s->policy, &f, &d), 0);
    struct gs_fit whole = {.ncards = 1, .whole = 1, .group = -1};
    struct gs_fit shared = {.ncards = 1, .compute = 300, .overcommit = 1000, .group = -1};
    check_levels(f, &whole);
    assert_int_equal(gs_fleet_slice_room(f, 0), 1000);
    struct placed {
        size_t node;
        uint32_t mask;
        const struct gs_fit *fit;
    } placed[6 * 8 * 4];
    int32_t n = 0;
    for (int round = 0; round < 4; round++)
        for (size_t i = 0; i < 6; i++) {
            for (int c = 0; c < gs_fleet_node_gpus(f, i); c++) {
                const struct gs_fit *r = (c + round) % 3 ? &shared : &whole;
                if (gs_fleet_commit(f, i, r, 1u << c, n) == 0)
                    placed[n++] = (struct placed){i, 1u << c, r};
            }
            check_levels(f, &shared);
        }
    assert_int_equal(gs_fleet_slice_room(f, 0), 100); /* its shared cards at 900, none free */
    size_t nopen;
    gs_fleet_open(f, &nopen);
    assert_int_equal(nopen, 6);
    for (int32_t k = n - 1; k >= 0; k -= 2) { /* every other pod leaves */
        assert_int_equal(gs_fleet_release(f, placed[k].node, placed[k].fit, placed[k].mask, k), 0);
        check_levels(f, &whole);
    }
    check_levels(f, &whole);
    gs_fleet_free(f);
    gs_scenario_free(s);
}

/*
 * One mode per card, and conversion: an empty card takes another mode only when conversion is on
 * and it has held its mode for the hold time; each change counts, but not one undone in the same
 * instant (an attempt rolled back, a backfill probe).
 */
static void test_mode_conversion(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n", "az-1", tmpl(s, "t1", 1, 0));
    struct gs_fleet *f;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_fleet_new(&s->policy, &f, &d), 0);
    struct gs_fit whole = {.ncards = 1, .whole = 1, .group = -1};
    struct gs_fit shared = {
        .ncards = 1, .compute = 100, .mem_mib = 1024, .overcommit = 1000, .group = -1};
    struct gs_fit_choice c;
    gs_fleet_set_modes(f, 1, 10 * S);
    gs_fleet_set_now(f, 0);
    assert_int_equal(gs_fleet_commit(f, 0, &shared, 1u, 1), 0);
    assert_int_equal(gs_fleet_commit(f, 0, &whole, 1u, 2), -EINVAL); /* not empty */
    gs_fleet_set_now(f, 5 * S);
    assert_int_equal(gs_fleet_release(f, 0, &shared, 1u, 1), 0);
    assert_int_equal(gs_fleet_fit(f, 0, &whole, &c), GS_FIT_GPU); /* empty, held 5 s of 10 */
    assert_int_equal(gs_fleet_commit(f, 0, &whole, 1u, 2), -EINVAL);
    assert_int_equal(gs_fleet_fit(f, 0, &shared, &c), GS_FIT_OK); /* its own mode: any time */
    gs_fleet_set_now(f, 10 * S);
    assert_int_equal(gs_fleet_fit(f, 0, &whole, &c), GS_FIT_OK);
    assert_int_equal(gs_fleet_commit(f, 0, &whole, 1u, 2), 0);
    assert_int_equal(gs_fleet_release(f, 0, &whole, 1u, 2), 0); /* undone at once */
    assert_int_equal(gs_fleet_conversions(f), 0);
    assert_int_equal(gs_fleet_commit(f, 0, &whole, 1u, 2), 0);
    gs_fleet_set_now(f, 11 * S);
    assert_int_equal(gs_fleet_release(f, 0, &whole, 1u, 2), 0);
    assert_int_equal(gs_fleet_conversions(f), 1);
    gs_fleet_set_modes(f, 0, 0); /* no conversion: it stays exclusive */
    assert_int_equal(gs_fleet_fit(f, 0, &shared, &c), GS_FIT_GPU);
    assert_int_equal(gs_fleet_fit(f, 0, &whole, &c), GS_FIT_OK);
    gs_fleet_free(f);

    /* In a run: a slice 0..100 s, then a whole-card pod asked for at 50 s. */
    slice_pod(s, "slice", 1, 1024, 0)->duration_us = 100 * S;
    pod(s, "ns", "whole", 1, 50, 100);
    s->sim.modes_defined = 1;
    struct gs_tsim *t = run(s, GS_WAY_SHARING);
    assert_int_equal(find(t, "whole")->start_us, 100 * S);
    assert_int_equal(gs_tsim_summary(t)->conversions, 1);
    gs_tsim_free(t);
    s->sim.min_hold_us = 1000 * S;
    t = run(s, GS_WAY_SHARING);
    assert_int_equal(find(t, "whole")->start_us, 1000 * S);
    gs_tsim_free(t);
    s->sim.convert = 0;
    t = run(s, GS_WAY_SHARING);
    assert_int_equal(find(t, "whole")->state, GS_POD_PENDING);
    assert_int_equal(gs_tsim_summary(t)->conversions, 0);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A memory slice without nvidia.com/gpucores asks the compute of its memory's share of the largest
 * card it may use, so memory alone decides how many share a card: on a cluster of a T4 (15360
 * MiB) and an H100 (81559 MiB), two 30000 MiB slices share the H100, each counted 367 milli (it
 * took the T4's measure, 1000, a whole H100 each). A slice of gpucores alone holds its share of
 * the smallest card's memory, which every card holds.
 */
static void test_memory_slice_share(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "t4", "az-1", tmpl_of(s, "t4", 1, "T4"));
    node(s, "h100", "az-1", tmpl_of(s, "h100", 1, "H100-SXM5-80GB"));
    slice_pod(s, "a", 1, 30000, 0);
    slice_pod(s, "b", 1, 30000, 0);
    struct gs_pod_spec *c = slice_pod(s, "cores", 1, 0, 0);
    c->containers[0].gpumem_mib = GS_UNSET;
    c->containers[0].gpucores = 50;
    struct gs_tsim *t = run(s, GS_WAY_SHARING);
    for (int i = 0; i < 2; i++) {
        const struct gs_tsim_pod *p = find(t, i ? "b" : "a");
        assert_int_equal(p->start_us, 0);
        assert_int_equal(p->node, 1);
        assert_int_equal(p->share_milli, 367); /* 30000 x 1000 / 81559, rounded down */
    }
    assert_int_equal(find(t, "cores")->start_us, 0); /* 7680 MiB: on the T4 as on the H100 */
    assert_int_equal(find(t, "cores")->share_milli, 500);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* Time-slice replicas run only where a node template offers replicas: a tenant whose GPUQuota
 * gives A100s only, on a cluster whose replicas are the A30's, is refused on arrival in the full
 * way, naming why, not left pending for the day (the A100 nodes said "Insufficient"). */
static void test_replicas_quota_refused(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "a100", "az-1", tmpl(s, "a100", 8, 1));
    int t1 = tmpl_of(s, "a30", 2, "A30");
    s->policy.templates[t1].timeslice_replicas = 4;
    node(s, "t1", "az-1", t1);
    tenant(s, "ns", 4, 8);
    replica_pod(s, "ns", "ts", 1, 4096, 0, 3600);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "ts")->state, GS_POD_REJECTED);
    assert_string_equal(find(t, "ts")->reason,
                        "tenant ns: its GPUQuota gives none of the GPU models whose nodes offer "
                        "time-slice replicas");
    gs_tsim_free(t);
    t = run(s, GS_WAY_SHARING); /* no GPUQuota there: it runs on the A30 */
    assert_int_equal(find(t, "ts")->start_us, 0);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* Fractional use is charged to a GPUQuota's shared quota only: with shared 0 a slice never runs,
 * and is refused on arrival in the full way, saying so, while a whole card runs on dedicated. */
static void test_shared_zero_refuses_shares(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "a100", "az-1", tmpl(s, "a100", 8, 1));
    tenant(s, "ns", 4, 4); /* dedicated 4, shared 0 */
    slice_pod(s, "share", 1, 8192, 0);
    pod(s, "ns", "whole", 1, 0, 3600);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "share")->state, GS_POD_REJECTED);
    assert_non_null(strstr(find(t, "share")->reason,
                           "tenant ns: its GPUQuota's shared quota holds less than this pod's "
                           "share on every GPU model it may run on"));
    assert_int_equal(find(t, "whole")->start_us, 0);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A pod may ask its slices or replicas on one card (gpusched.io/same-card: "true"): two 1 GiB
 * slices on a one-card node run there as two clients, so with a class pod capping the card at
 * three clients a further slice waits; without the annotation two slices need two cards and are
 * refused on a one-card cluster. Two replicas on one card take two of its four replicas.
 */
static void test_same_card(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t1 = tmpl_of(s, "a30", 1, "A30");
    s->policy.templates[t1].timeslice_replicas = 4;
    node(s, "n1", "az-1", t1);
    vgpu_class(s, "three", 1024, 10, 3, 1);
    slice_pod(s, "pair", 2, 1024, 0)->same_card = 1;
    snprintf(pod(s, "ns", "capped", 0, 1, 3600)->vgpu_class, GS_SCN_NAME_MAX, "three");
    slice_pod(s, "late", 1, 1024, 2);
    slice_pod(s, "apart", 2, 1024, 3);
    struct gs_tsim *t = run(s, GS_WAY_SHARING);
    assert_int_equal(find(t, "pair")->gpu_mask, 1u);
    assert_int_equal(find(t, "pair")->start_us, 0);
    assert_int_equal(find(t, "capped")->start_us, 1 * S);
    assert_int_equal(find(t, "late")->start_us, 3600 * S);
    assert_int_equal(find(t, "apart")->state, GS_POD_REJECTED);
    /* metered as the two slices they are: 2 x 1024/24576 of the card, 41 milli each (down) */
    const struct gs_tsim_use *u = gs_tsim_use(t, 0);
    assert_string_equal(gs_tsim_pod(t, (size_t)u->pod)->name, "pair");
    assert_int_equal(u->units, 2);
    assert_int_equal(u->share_milli, 41);
    gs_tsim_free(t);
    gs_scenario_free(s);

    s = scn();
    t1 = tmpl_of(s, "a30", 1, "A30");
    s->policy.templates[t1].timeslice_replicas = 4;
    node(s, "n1", "az-1", t1);
    replica_pod(s, "ns", "two", 2, 0, 0, 3600)->same_card = 1;
    replica_pod(s, "ns", "r1", 1, 0, 0, 3600);
    replica_pod(s, "ns", "r2", 1, 0, 0, 3600);
    replica_pod(s, "ns", "r3", 1, 0, 1, 3600);
    t = run(s, GS_WAY_SHARING);
    assert_int_equal(find(t, "two")->start_us, 0);
    assert_int_equal(find(t, "r2")->start_us, 0);
    assert_true(find(t, "r3")->start_us > 0); /* four replicas taken */
    /* 4000 milli asked of the card ("two" asks 2000), a quarter of each met: its hour takes 4 */
    assert_int_equal(find(t, "two")->end_us, 4 * 3600 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);

    /* what no card could ever hold is refused on arrival, naming why, not left pending: five
     * replicas where cards offer four, two of 16 GiB on a 24 GiB card, two 20 GiB slices, three
     * slices of a class letting two share a card */
    s = scn();
    t1 = tmpl_of(s, "a30", 1, "A30");
    s->policy.templates[t1].timeslice_replicas = 4;
    node(s, "n1", "az-1", t1);
    int t2 = tmpl_of(s, "a10", 1, "A10");
    node(s, "n2", "az-1", t2);
    vgpu_class(s, "two", 1024, 10, 2, 1);
    replica_pod(s, "ns", "five", 5, 0, 0, 3600)->same_card = 1;
    replica_pod(s, "ns", "big", 2, 16384, 0, 3600)->same_card = 1;
    replica_pod(s, "ns", "fits", 2, 8192, 0, 3600)->same_card = 1;
    slice_pod(s, "wide", 2, 20480, 0)->same_card = 1;
    struct gs_pod_spec *three = slice_pod(s, "three", 3, 0, 0);
    three->same_card = 1;
    three->containers[0].gpumem_mib = GS_UNSET;
    snprintf(three->vgpu_class, GS_SCN_NAME_MAX, "two");
    pod(s, "ns", "whole", 1, 0, 3600)->same_card = 1; /* nothing to put on one card */
    t = run(s, GS_WAY_SHARING);
    assert_int_equal(find(t, "five")->state, GS_POD_REJECTED);
    assert_string_equal(find(t, "five")->reason,
                        "nvidia.com/gpu.shared 5 on one card (gpusched.io/same-card): no card this "
                        "pod may use offers that many time-slice replicas (at most 4)");
    assert_int_equal(find(t, "big")->state, GS_POD_REJECTED);
    assert_string_equal(find(t, "big")->reason,
                        "nvidia.com/gpumem 16384 MiB x 2 replicas on one card "
                        "(gpusched.io/same-card): more than the largest time-sliced card this pod "
                        "may use has (24576 MiB)");
    assert_int_equal(find(t, "fits")->start_us, 0);
    assert_int_equal(find(t, "wide")->state, GS_POD_REJECTED);
    assert_string_equal(find(t, "wide")->reason,
                        "nvidia.com/gpu 2 slices on one card (gpusched.io/same-card): 40960 MiB "
                        "and 166% of a card together, more than any card this pod may use gives "
                        "(24576 MiB, 100%)");
    assert_int_equal(find(t, "three")->state, GS_POD_REJECTED);
    assert_string_equal(find(t, "three")->reason,
                        "nvidia.com/gpu 3 slices on one card (gpusched.io/same-card): "
                        "VirtualGPUClass two lets 2 share a card");
    assert_int_equal(find(t, "whole")->state, GS_POD_REJECTED);
    assert_string_equal(
        find(t, "whole")->reason,
        "gpusched.io/same-card puts slices (nvidia.com/gpumem, nvidia.com/gpucores, "
        "a VirtualGPUClass) or time-slice replicas on one card; this pod asks "
        "whole cards (nvidia.com/gpu 1)");
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A tier may hand out time-slice replicas for plain nvidia.com/gpu (policy.yaml
 * `timeSlicing: true`), as a node whose device plugin shares by time without renaming does: in
 * the full way three one-GPU pods of that tier on a card of two replicas, two run at half speed
 * and the third waits; in the sharing way, where tiers do not apply, they take whole cards.
 */
static void test_timeslice_tier(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t1 = tmpl_of(s, "a30", 1, "A30");
    s->policy.templates[t1].timeslice_replicas = 2;
    node(s, "n1", "az-1", t1);
    s->policy.tiers[GS_TIER_NODE] = (struct gs_tier_spec){.defined = 1,
                                                          .strategy = GS_STRATEGY_SPREAD,
                                                          .sharing = 1,
                                                          .overcommit_milli = 1000,
                                                          .isolation = GS_ISOLATION_SOFT,
                                                          .max_skew = GS_UNSET,
                                                          .timeslice = 1};
    for (int i = 0; i < 3; i++) {
        char n[16];
        snprintf(n, sizeof(n), "p%d", i);
        pod(s, "ns", n, 1, 0, 3600)->tier = GS_TIER_NODE;
    }
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "p0")->end_us, 7200 * S);
    assert_int_equal(find(t, "p1")->end_us, 7200 * S);
    assert_int_equal(find(t, "p2")->start_us, 7200 * S);
    assert_int_equal(find(t, "p2")->end_us, 3 * 3600 * S);
    gs_tsim_free(t);
    /* while it waits, for the card's replicas, not for memory it never declared */
    s->sim.horizon_us = 1800 * S;
    t = run(s, GS_WAY_FULL);
    assert_string_equal(find(t, "p2")->reason,
                        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
    gs_tsim_free(t);
    s->sim.horizon_us = GS_UNSET;
    t = run(s, GS_WAY_SHARING);
    assert_int_equal(find(t, "p1")->start_us, 3600 * S);
    assert_int_equal(find(t, "p2")->end_us, 3 * 3600 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* Every card's mode agrees with the kinds of the pods on it: one kind per card, one pod on a
 * card held whole, and a free card holds nobody. */
static void assert_one_mode(const struct gs_fleet *f, const struct gs_fit *fits,
                            const uint32_t *masks, const int *live, int npods)
{
    for (int g = 0; g < gs_fleet_node_gpus(f, 0); g++) {
        int whole = 0, shared = 0, mig = 0;
        for (int i = 0; i < npods; i++) {
            if (!live[i] || !(masks[i] & (1u << g)))
                continue;
            whole += fits[i].whole;
            mig += fits[i].mig != NULL;
            shared += !fits[i].whole && !fits[i].mig;
        }
        enum gs_card_mode m = gs_fleet_card_mode(f, 0, g);
        assert_true((whole > 0) + (shared > 0) + (mig > 0) <= 1);
        assert_true(whole <= 1);
        assert_int_equal(m, whole    ? GS_CARD_EXCLUSIVE
                            : shared ? GS_CARD_SHARED
                            : mig    ? GS_CARD_MIG
                                     : GS_CARD_FREE);
        assert_true(gs_fleet_card_mem_used(f, 0, g) <= gs_fleet_card_mem(f, 0, g));
    }
}

/*
 * A card offered in two modes at once (whole card plus shares, whole card plus MIG, shares plus
 * MIG): never. First the direct attempts, then a random sequence of fits, commits and releases
 * of the three kinds on one node of four A100-80GB cards, checked after every step.
 */
static void test_one_mode_per_card(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n", "az-1", tmpl(s, "t4", 4, 0));
    struct gs_fleet *f;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_fleet_new(&s->policy, &f, &d), 0);
    struct gs_fit whole = {.ncards = 1, .whole = 1, .tenant = 0, .group = -1};
    struct gs_fit shared = {
        .ncards = 1, .compute = 100, .mem_mib = 1024, .overcommit = 1000, .group = -1};
    struct gs_fit mig = {.ncards = 1, .mig = "1g.10gb", .mig_start = 0, .group = -1};
    assert_int_equal(gs_fleet_commit(f, 0, &shared, 1u, 1), 0);
    assert_int_equal(gs_fleet_commit(f, 0, &mig, 2u, 2), 0);
    assert_int_equal(gs_fleet_commit(f, 0, &whole, 4u, 3), 0);
    for (int g = 0; g < 3; g++) { /* no second mode on any of them */
        assert_int_equal(gs_fleet_commit(f, 0, &whole, 1u << g, 9), -EINVAL);
        if (g != 0)
            assert_int_equal(gs_fleet_commit(f, 0, &shared, 1u << g, 9), -EINVAL);
        if (g != 1)
            assert_int_equal(gs_fleet_commit(f, 0, &mig, 1u << g, 9), -EINVAL);
    }
    struct gs_fit_choice c;
    assert_int_equal(gs_fleet_fit(f, 0, &shared, &c), GS_FIT_OK);
    assert_int_equal(c.mask, 1u);
    assert_int_equal(gs_fleet_fit(f, 0, &mig, &c), GS_FIT_OK);
    assert_int_equal(c.mask, 2u);
    struct gs_fit two = whole;
    two.ncards = 2;
    assert_int_equal(gs_fleet_fit(f, 0, &two, &c), GS_FIT_GPU);
    gs_fleet_free(f);

    assert_int_equal(gs_fleet_new(&s->policy, &f, &d), 0);
    static const char *const profiles[] = {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"};
    struct gs_fit fits[256];
    uint32_t masks[256];
    int live[256] = {0}, npods = 0;
    uint64_t x = 7;
    for (int step = 0; step < 3000; step++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int kind = (int)((x >> 33) % 3);
        if ((x >> 40) % 3 == 0 && npods) { /* release a live pod */
            int i = (int)((x >> 20) % (uint64_t)npods);
            if (live[i]) {
                assert_int_equal(gs_fleet_release(f, 0, &fits[i], masks[i], i), 0);
                live[i] = 0;
            }
        } else if (npods < 256) {
            struct gs_fit r = kind == 0 ? whole : kind == 1 ? shared : mig;
            r.ncards = kind == 0   ? 1 + (int)((x >> 44) % 2)
                       : kind == 1 ? 1 + (int)((x >> 44) % 2)
                                   : 1;
            r.mem_mib = 1024 << ((x >> 46) % 5);
            r.max_clients = (int32_t)((x >> 50) % 4);
            r.mig = kind == 2 ? profiles[(x >> 52) % 4] : NULL;
            if (gs_fleet_fit(f, 0, &r, &c) == GS_FIT_OK) {
                r.mig_start = c.mig_start;
                assert_int_equal(gs_fleet_commit(f, 0, &r, c.mask, npods), 0);
                fits[npods] = r;
                masks[npods] = c.mask;
                live[npods++] = 1;
            }
        }
        assert_one_mode(f, fits, masks, live, npods);
    }
    gs_fleet_free(f);
    gs_scenario_free(s);
}

/*
 * gs_fleet_fits_without() answers as releasing the pods, fitting and committing them back does:
 * checked over random fleets of exclusive and shared pods, on NVLink and PCIe nodes.
 */
static void test_fits_without_matches_release(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "sxm", "az-1", tmpl(s, "t8", 8, 1));
    node(s, "pcie", "az-1", tmpl(s, "t4", 4, 0));
    struct gs_fleet *f;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_fleet_new(&s->policy, &f, &d), 0);
    struct gs_fit fits[64];
    uint32_t masks[64];
    int32_t on[64];
    int npods = 0;
    uint64_t x = 42;
    for (int step = 0; step < 4000; step++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t n = (size_t)(x >> 33) % 2;
        struct gs_fit r = {.ncards = 1 + (int)((x >> 40) % 4),
                           .whole = (x >> 45) % 3 != 0,
                           .compute = 300,
                           .mem_mib = 8192,
                           .overcommit = 1000,
                           .cpu_milli = 16000,
                           .memory_mib = 1024,
                           .tenant = (int32_t)((x >> 50) % 2),
                           .group = -1,
                           .tier = (x >> 52) % 2 ? GS_TIER_NVLINK : GS_TIER_NONE};
        if (!r.whole)
            r.ncards = 1;
        if (r.whole && npods) { /* compare on a random subset of the node's pods */
            int32_t gone[64];
            size_t ng = 0;
            for (int i = 0; i < npods; i++)
                if ((size_t)on[i] == n && (x >> (i % 60)) & 1)
                    gone[ng++] = i;
            int quick = gs_fleet_fits_without(f, n, &r, gone, ng);
            for (size_t k = 0; k < ng; k++)
                assert_int_equal(gs_fleet_release(f, n, &fits[gone[k]], masks[gone[k]], gone[k]),
                                 0);
            struct gs_fit_choice c;
            int slow = gs_fleet_fit(f, n, &r, &c) == GS_FIT_OK;
            while (ng-- > 0)
                assert_int_equal(gs_fleet_commit(f, n, &fits[gone[ng]], masks[gone[ng]], gone[ng]),
                                 0);
            assert_int_equal(quick, slow);
        }
        struct gs_fit_choice c;
        if (npods < 64 && gs_fleet_fit(f, n, &r, &c) == GS_FIT_OK) {
            fits[npods] = r;
            masks[npods] = c.mask;
            on[npods] = (int32_t)n;
            assert_int_equal(gs_fleet_commit(f, n, &r, c.mask, npods), 0);
            npods++;
        } else if (npods > 0) { /* the oldest pod ends: the fleet keeps moving */
            int i = (int)((x >> 20) % (uint64_t)npods);
            if (on[i] >= 0) {
                assert_int_equal(gs_fleet_release(f, (size_t)on[i], &fits[i], masks[i], i), 0);
                on[i] = -1;
            }
        }
    }
    struct gs_fit shared = {.ncards = 1, .compute = 100, .mem_mib = 1, .overcommit = 1000};
    assert_int_equal(gs_fleet_fits_without(f, 0, &shared, NULL, 0), -EINVAL);
    gs_fleet_free(f);
    gs_scenario_free(s);
}

/* ---- the work model and its ledger (src/core/tenancy/work.c) ----------------------------------
 */

#define GPU_S(x) ((x)*1000LL) /* x GPU-seconds in milli-GPU x seconds */

static struct gs_tsim_usage tenant_usage(const struct gs_tsim *t, const char *name)
{
    for (size_t i = 0; i < gs_tsim_tenant_count(t); i++)
        if (strcmp(gs_tsim_tenant(t, i)->name, name) == 0)
            return gs_tsim_tenant(t, i)->usage;
    fail_msg("no tenant %s", name);
    return (struct gs_tsim_usage){0};
}

/* @name's GPU-seconds below its dedicated quota while pods that could use it waited. */
static int64_t shortfall_s(const struct gs_tsim *t, const char *name)
{
    for (size_t i = 0; i < gs_tsim_tenant_count(t); i++)
        if (strcmp(gs_tsim_tenant(t, i)->name, name) == 0)
            return gs_tsim_tenant(t, i)->short_milli_s / 1000;
    fail_msg("no tenant %s", name);
    return -1;
}

/* A node of 4 L40S cards (no NVLink). */
static void l40s_node(struct gs_scenario *s)
{
    int l = tmpl(s, "l40s", 4, 0);
    s->policy.templates[l].model = gs_catalog_find("L40S", -1);
    node(s, "n-l40s", "", l);
}

/* The last tenant's quota of L40S cards: @ded dedicated of @total. */
static void l40s_quota(struct gs_scenario *s, int ded, int total)
{
    struct gs_tenant_spec *ts = &s->policy.tenants[s->policy.ntenants - 1];
    struct gs_model_quota *q = &ts->quotas[ts->nquotas++];
    snprintf(q->key, sizeof(q->key), "l40s");
    q->model = gs_catalog_find("L40S", -1);
    q->total_milli = total * 1000;
    q->dedicated_milli = ded * 1000;
    q->shared_milli = (total - ded) * 1000;
}

/*
 * The guarantee's shortfall is counted per GPU model against the pods that could run on it.
 * team-a holds 3 A100 cards, above its 2 dedicated ones, while two more one-card pods that must
 * have NVLink wait: its 2 dedicated L40S (no NVLink) are nothing they could use, so it is not
 * short (summed over models it would have been a card short for the hour). Then a pod that could
 * run on an L40S waits while team-b, of higher priority, borrows every L40S: team-a is a card
 * short of its dedicated L40S until they end (summed over models it would not have been: it held
 * 4 A100 cards, as many as its dedicated cards of both models).
 */
static void test_shortfall_per_model(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n-a100", "", tmpl(s, "a100", 3, 1));
    l40s_node(s);
    tenant(s, "team-a", 2, 4);
    l40s_quota(s, 2, 4);
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof(name), "nv-%d", i);
        pod(s, "team-a", name, 1, 0, 3600)->tier = GS_TIER_NVLINK;
    }
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_string_equal(node_of(t, "nv-4"), "n-a100"); /* after the first three */
    assert_int_equal(shortfall_s(t, "team-a"), 0);
    gs_tsim_free(t);
    gs_scenario_free(s);

    s = scn();
    node(s, "n-a100", "", tmpl(s, "a100", 4, 1));
    l40s_node(s);
    tenant(s, "team-a", 2, 4);
    l40s_quota(s, 2, 4);
    tenant(s, "team-b", 0, 0);
    l40s_quota(s, 0, 4);
    pclass(s, "high", 100);
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof(name), "a-%d", i);
        pod(s, "team-a", name, 1, 0, 7200)->model_mask = 1u << s->policy.templates[0].model;
        snprintf(name, sizeof(name), "b-%d", i);
        snprintf(pod(s, "team-b", name, 1, 0, 7200)->priority_class, GS_SCN_NAME_MAX, "high");
    }
    pod(s, "team-a", "any", 1, 60, 600);
    t = run(s, GS_WAY_FULL);
    assert_string_equal(node_of(t, "b-0"), "n-l40s");
    char runs[64];
    runs_of(t, "any", runs, sizeof(runs));
    assert_string_equal(runs, "n-a100@7200-7800;");
    assert_int_equal(shortfall_s(t, "team-a"), 7200 - 60);
    assert_int_equal(shortfall_s(t, "team-b"), 0);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A gang's members count as demand only for the models where the gang could start. team-a's
 * training gang of two 2-card members must start inside one NVLink group: the A100 node's group
 * of 4 can hold it, the H100 NVL node's pairs cannot (each member alone would fit a pair). While
 * the A100 node is busy for the first hour (a card of it, team-a's one dedicated A100 card),
 * team-a holds none of its 4 dedicated H100 NVL cards and is not short of them: the gang could
 * not use them. Counted per member, it was 4 cards short for 59 minutes.
 */
static void test_shortfall_gang_nvlink(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n-a100", "", tmpl(s, "a100", 4, 1));
    int nvl = tmpl(s, "nvl", 4, 0);
    s->policy.templates[nvl].model = gs_catalog_find("H100-NVL-94GB", -1);
    for (int i = 0; i < 4; i++)
        s->policy.templates[nvl].nvlink_group[i] = (uint8_t)(i / 2);
    node(s, "n-nvl", "", nvl);
    tenant(s, "team-a", 1, 4);
    struct gs_tenant_spec *ts = &s->policy.tenants[0];
    struct gs_model_quota *q = &ts->quotas[ts->nquotas++];
    snprintf(q->key, sizeof(q->key), "h100-nvl");
    q->model = s->policy.templates[nvl].model;
    q->total_milli = q->dedicated_milli = 4000;
    pod(s, "team-a", "busy", 1, 0, 3600)->model_mask = 1u << s->policy.templates[0].model;
    gang(s, "team-a", "tr", 2, 2, 60, 600, NULL, NULL);
    for (size_t i = 1; i < s->npods; i++)
        s->pods[i].tier = GS_TIER_NVLINK;
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    char runs[64];
    runs_of(t, "tr-1", runs, sizeof(runs));
    assert_string_equal(runs, "n-a100@3600-4200;");
    assert_int_equal(shortfall_s(t, "team-a"), 0);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* Time-slice replicas waiting for the A30's replicas are no shortfall of the tenant's dedicated
 * A100s, which they could not use: four take the card's four replicas, the fifth waits an hour. */
static void test_shortfall_replicas(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "a100", "az-1", tmpl(s, "a100", 8, 1));
    int t1 = tmpl_of(s, "a30", 1, "A30");
    s->policy.templates[t1].timeslice_replicas = 4;
    node(s, "t1", "az-1", t1);
    tenant(s, "ns", 4, 8);
    for (int i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof(name), "r%d", i);
        replica_pod(s, "ns", name, 1, 4096, 0, 3600)->containers[0].gpucores = 25;
    }
    struct gs_tsim *t = run(s, GS_WAY_SHARING);
    assert_int_equal(find(t, "r4")->start_us, 3600 * S);
    assert_int_equal(shortfall_s(t, "ns"), 0);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * Dedicated quota is kept for its tenant. team-a's training borrows the A100 cards dedicated to
 * team-c; team-c's replica then finds free L40S cards, but they are team-a's dedicated ones, and
 * its own dedicated A100 cards are borrowed: it takes those back (the guarantee) instead of
 * borrowing team-a's, so team-a's sweep a minute later gets its L40S at once. Before, the replica
 * took an L40S card and the sweep waited the replica's two hours, team-a 4 cards short of its
 * dedicated quota all along.
 */
static void test_dedicated_room_kept(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n-a100", "", tmpl(s, "a100", 4, 1));
    l40s_node(s);
    tenant(s, "team-a", 0, 4);
    l40s_quota(s, 4, 4);
    tenant(s, "team-c", 4, 4);
    l40s_quota(s, 0, 4);
    pclass(s, "high", 100);
    pod(s, "team-a", "train", 4, 0, 7200)->model_mask = 1u << s->policy.templates[0].model;
    snprintf(pod(s, "team-c", "serve", 1, 1, 7200)->priority_class, GS_SCN_NAME_MAX, "high");
    pod(s, "team-a", "sweep", 4, 60, 3600);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_string_equal(node_of(t, "serve"), "n-a100");
    char runs[64];
    runs_of(t, "sweep", runs, sizeof(runs));
    assert_string_equal(runs, "n-l40s@60-3660;");
    runs_of(t, "train", runs, sizeof(runs));
    assert_string_equal(runs, "n-a100@0-1;n-a100@7201-14401;");
    assert_int_equal(shortfall_s(t, "team-a"), 0);
    assert_int_equal(shortfall_s(t, "team-c"), 0);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * The room kept for a tenant's dedicated quota is counted in whole cards. team-c's two slices
 * of 0.3 of an L40S, too large in memory to share a card, hold two of the node's four cards;
 * a third would take a third card and leave team-a one of its two dedicated L40S cards. It goes
 * to the A100 node, within team-c's quota there, and team-a's sweep of two cards starts when it
 * comes. Counted in milli-GPU (4.0 - 0.9 left against team-a's 2.0), the slice took
 * the L40S card and the sweep waited its two hours.
 */
static void test_dedicated_room_whole_cards(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n-a100", "", tmpl(s, "a100", 4, 1));
    l40s_node(s);
    tenant(s, "team-a", 0, 4);
    l40s_quota(s, 2, 4);
    tenant(s, "team-c", 4, 8);
    l40s_quota(s, 0, 4);
    pclass(s, "high", 100);
    uint32_t l40s = 1u << s->policy.templates[1].model;
    const char *names[3] = {"c-1", "c-2", "c-3"};
    for (int i = 0; i < 3; i++) {
        struct gs_pod_spec *p = pod(s, "team-c", names[i], 1, i, 7200);
        snprintf(p->priority_class, GS_SCN_NAME_MAX, "high");
        p->containers[0].gpucores = 30;
        p->containers[0].gpumem_mib = 30000;
        p->model_mask = i < 2 ? l40s : 0;
    }
    pod(s, "team-a", "sweep", 2, 60, 600)->model_mask = l40s;
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_string_equal(node_of(t, "c-1"), "n-l40s");
    assert_string_equal(node_of(t, "c-3"), "n-a100");
    char runs[64];
    runs_of(t, "sweep", runs, sizeof(runs));
    assert_string_equal(runs, "n-l40s@60-660;");
    assert_int_equal(shortfall_s(t, "team-a"), 0);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* Every ledger adds up: tenants and models to the fleet, none above what exists. */
static void assert_adds_up(const struct gs_tsim *t)
{
    const struct gs_tsim_summary *sum = gs_tsim_summary(t);
    int64_t alloc = 0, busy = 0, lost = 0, secs = sum->horizon_us / S;
    for (size_t i = 0; i < gs_tsim_tenant_count(t); i++) {
        alloc += gs_tsim_tenant(t, i)->usage.gpu_milli_s;
        busy += gs_tsim_tenant(t, i)->usage.busy_milli_s;
        lost += gs_tsim_tenant(t, i)->usage.lost_milli_s;
    }
    assert_int_equal(alloc, sum->usage.gpu_milli_s);
    assert_int_equal(busy, sum->usage.busy_milli_s);
    assert_int_equal(lost, sum->usage.lost_milli_s);
    alloc = busy = 0;
    for (size_t m = 0; m < gs_tsim_model_count(t); m++) {
        const struct gs_tsim_model *x = gs_tsim_model(t, m);
        assert_true(x->usage.gpu_milli_s <= GPU_S(x->gpus * secs));
        assert_true(x->usage.busy_milli_s <= x->usage.gpu_milli_s);
        alloc += x->usage.gpu_milli_s;
        busy += x->usage.busy_milli_s;
    }
    assert_int_equal(alloc, sum->usage.gpu_milli_s);
    assert_int_equal(busy, sum->usage.busy_milli_s);
    assert_true(sum->usage.gpu_milli_s <= GPU_S(sum->gpus * secs));
}

/*
 * Time-sliced cards were credited at the shares asked over the whole stretched run: four
 * replicas of one card at 25 % gpu-util, no gpucores, an hour of work each, stretched to four
 * hours and counted 4 busy GPU-hours for 1 of work, the tenants credited 16. Their rates sum to
 * the card: each does its hour in an hour, the card is busy one GPU-hour and held one, and the
 * two tenants hold half of it each. At 50 % the rates sum to twice the card: two hours each,
 * busy all along.
 */
static void test_work_timeslice_credit(void **state)
{
    (void)state;
    for (int util = 25; util <= 50; util += 25) {
        struct gs_scenario *s = scn();
        int t1 = tmpl_of(s, "a30", 1, "A30");
        s->policy.templates[t1].timeslice_replicas = 4;
        node(s, "n1", "az-1", t1);
        for (int i = 0; i < 4; i++) {
            char n[16];
            snprintf(n, sizeof(n), "r%d", i);
            replica_pod(s, i < 2 ? "team-a" : "team-b", n, 1, 0, 0, 3600)->util_pct = util;
        }
        struct gs_diag d;
        gs_diag_init(&d);
        assert_int_equal(gs_scenario_resolve(s, &d), 0); /* a tenant per namespace */
        struct gs_tsim *t = run(s, GS_WAY_SHARING);
        int64_t hours = util == 25 ? 1 : 2;
        for (int i = 0; i < 4; i++) {
            char n[16];
            snprintf(n, sizeof(n), "r%d", i);
            assert_int_equal(find(t, n)->end_us, hours * 3600 * S);
        }
        const struct gs_tsim_summary *sum = gs_tsim_summary(t);
        assert_int_equal(sum->usage.busy_milli_s, GPU_S(hours * 3600));
        assert_int_equal(sum->usage.gpu_milli_s, GPU_S(hours * 3600));
        assert_int_equal(tenant_usage(t, "team-a").gpu_milli_s, GPU_S(hours * 1800));
        assert_int_equal(tenant_usage(t, "team-b").busy_milli_s, GPU_S(hours * 1800));
        assert_adds_up(t);
        gs_tsim_free(t);
        gs_scenario_free(s);
    }
}

/*
 * A card's allocation is split among the pods on it, so tenants never hold more than the fleet
 * and a model never more than its cards: two tenants' slices asking 60 % of one card each (120 %,
 * as a 1.5 overcommit ratio allows) hold half of it each; their 30 % gpu-util keeps it busy
 * 2 x 18 %.
 */
static void test_work_shares_add_up(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t1", 1, 0));
    s->policy.tiers[GS_TIER_NODE] = (struct gs_tier_spec){
        .defined = 1, .sharing = 1, .overcommit_milli = 1500, .strategy = GS_STRATEGY_SPREAD};
    for (int i = 0; i < 2; i++) {
        struct gs_pod_spec *p = pod(s, i ? "team-b" : "team-a", i ? "b" : "a", 1, 0, 3600);
        p->containers[0].gpumem_mib = 10240;
        p->containers[0].gpucores = 60;
        p->tier = GS_TIER_NODE;
        p->util_pct = 30;
    }
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_scenario_resolve(s, &d), 0);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "a")->start_us, 0);
    assert_int_equal(find(t, "b")->start_us, 0);
    assert_int_equal(find(t, "b")->end_us, 3600 * S);
    assert_int_equal(tenant_usage(t, "team-a").gpu_milli_s, GPU_S(1800));
    assert_int_equal(tenant_usage(t, "team-b").gpu_milli_s, GPU_S(1800));
    assert_int_equal(tenant_usage(t, "team-a").busy_milli_s, 3600 * 180LL);
    assert_int_equal(gs_tsim_summary(t)->usage.busy_milli_s, 3600 * 360LL);
    assert_adds_up(t);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * Work an eviction discards counted busy and nowhere else: an hour-long pod at full gpu-util
 * preempted after 1800 s restarts from zero; the card was busy for those 1800 s, but they are
 * lost, not goodput. The exclusive way of the same pods is counted the same way: a pod's work is
 * its own (gpu-util x the share it asks), not the card it is given.
 */
static void test_work_discarded(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t1", 1, 0));
    pclass(s, "lo", 1);
    pclass(s, "hi", 1000);
    snprintf(pod(s, "ns", "lo", 1, 0, 3600)->priority_class, GS_SCN_NAME_MAX, "lo");
    struct gs_pod_spec *hi = pod(s, "ns", "hi", 1, 1800, 600);
    snprintf(hi->priority_class, GS_SCN_NAME_MAX, "hi");
    hi->containers[0].gpumem_mib = 8192;
    hi->containers[0].gpucores = 20;
    hi->util_pct = 50;
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "lo")->preemptions, 1);
    assert_int_equal(find(t, "lo")->end_us, (1800 + 600 + 3600) * S);
    const struct gs_tsim_usage *u = &gs_tsim_summary(t)->usage;
    assert_int_equal(u->busy_milli_s, GPU_S(1800 + 3600) + 600 * 100LL);
    assert_int_equal(u->lost_milli_s, GPU_S(1800));
    assert_int_equal(u->goodput_milli_s, GPU_S(3600) + 600 * 100LL);
    assert_adds_up(t);
    gs_tsim_free(t);
    /* Exclusive: "hi" waits for the card, and its 20 % x 50 % keeps the whole card 10 % busy. */
    t = run(s, GS_WAY_EXCLUSIVE);
    assert_int_equal(find(t, "hi")->start_us, 3600 * S);
    assert_int_equal(gs_tsim_summary(t)->usage.busy_milli_s, GPU_S(3600) + 600 * 100LL);
    assert_int_equal(gs_tsim_summary(t)->usage.gpu_milli_s, GPU_S(3600 + 600));
    assert_int_equal(gs_tsim_summary(t)->usage.lost_milli_s, 0);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A gang below minMember does no work in the ways that do not place gangs whole: on three cards
 * with one taken for an hour, two members of a three-member gang start at once and wait for the
 * third, holding their cards idle; the gang works from 3600 s, and all three end an hour later.
 */
static void test_work_partial_gang_idle(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t3", 3, 0));
    pod(s, "ns", "first", 1, 0, 3600);
    gang(s, "ns", "g", 3, 1, 0, 3600, NULL, NULL);
    for (int way = GS_WAY_EXCLUSIVE; way <= GS_WAY_SHARING; way++) {
        struct gs_tsim *t = run(s, (enum gs_way)way);
        assert_int_equal(find(t, "g-0")->start_us, 0);
        assert_int_equal(find(t, "g-2")->start_us, 3600 * S);
        for (int i = 0; i < 3; i++) {
            char n[16];
            snprintf(n, sizeof(n), "g-%d", i);
            assert_int_equal(find(t, n)->end_us, 7200 * S);
        }
        const struct gs_tsim_usage *u = &gs_tsim_summary(t)->usage;
        assert_int_equal(u->busy_milli_s, GPU_S(4 * 3600));
        assert_int_equal(u->gpu_milli_s, GPU_S(6 * 3600));
        assert_adds_up(t);
        gs_tsim_free(t);
    }
    gs_scenario_free(s);
}

/*
 * An eviction costs the work it discards, and the cheapest set goes: of two preemptible pods on
 * two one-card nodes, the one started at 1000 s loses less at 2000 s than the one started at 0,
 * so it goes, though the other node comes first. A pod saving a checkpoint every 30 min loses only
 * what it did since the last: started at 0, it has 200 s at risk at 2000 s against the younger
 * pod's 1000, so it goes instead, resumes at 2600 s from its checkpoint at 1800 s and ends 1800 s
 * later; the ledger discards 200 GPU-seconds.
 */
static void test_evict_least_work(void **state)
{
    (void)state;
    for (int ckpt = 0; ckpt < 2; ckpt++) {
        struct gs_scenario *s = scn();
        int t1 = tmpl(s, "t1", 1, 0);
        node(s, "n1", "az-1", t1);
        node(s, "n2", "az-1", t1);
        pclass(s, "lo", 1);
        pclass(s, "hi", 1000);
        struct gs_pod_spec *old = pod(s, "ns", "old", 1, 0, 3600);
        snprintf(old->priority_class, GS_SCN_NAME_MAX, "lo");
        old->checkpoint_us = ckpt ? 1800 * S : GS_UNSET;
        snprintf(pod(s, "ns", "young", 1, 1000, 3600)->priority_class, GS_SCN_NAME_MAX, "lo");
        snprintf(pod(s, "ns", "hi", 1, 2000, 600)->priority_class, GS_SCN_NAME_MAX, "hi");
        struct gs_tsim *t = run(s, GS_WAY_FULL);
        const char *gone = ckpt ? "old" : "young", *kept = ckpt ? "young" : "old";
        assert_string_equal(node_of(t, kept), ckpt ? "n2" : "n1");
        assert_int_equal(find(t, kept)->preemptions, 0);
        assert_int_equal(find(t, gone)->preemptions, 1);
        assert_int_equal(find(t, gone)->end_us, (ckpt ? 2600 + 1800 : 2600 + 3600) * S);
        assert_int_equal(gs_tsim_summary(t)->usage.lost_milli_s, GPU_S(ckpt ? 200 : 1000));
        assert_adds_up(t);
        gs_tsim_free(t);
        gs_scenario_free(s);
    }
}

/* Nodes n1 and n2 of template @t, under an nvlink tier that requires (@soft 0) or prefers. */
static void two_nodes_nvlink(struct gs_scenario *s, int t, int soft, int32_t skew)
{
    node(s, "n1", "az-1", t);
    node(s, "n2", "az-1", t);
    s->policy.tiers[GS_TIER_NVLINK] =
        (struct gs_tier_spec){.defined = 1,
                              .strategy = soft ? GS_STRATEGY_PREFER_COLOCATE : GS_STRATEGY_COLOCATE,
                              .overcommit_milli = 1000,
                              .max_skew = skew};
}

/*
 * The nvlink tier as the seed writes it (strategy colocate, maxSkew 0) is a requirement; as
 * prefer-colocate it is a preference. A 2-card nvlink pod on 8-card nodes of NVLink pairs: while
 * a node has a pair free the pods take pairs, the emptier node first over the fuller one where
 * only lone cards are left; once no pair is free, the required one waits and the preferred one
 * starts at once on two lone cards. A 2 x 3 gang on two NVLink nodes with 3 cards free each
 * waits for one group when required, starts split when preferred.
 */
static void test_nvlink_preferred(void **state)
{
    (void)state;
    for (int soft = 0; soft < 2; soft++) {
        struct gs_scenario *s = scn();
        int t8 = tmpl(s, "pairs", 8, 1);
        for (int i = 0; i < 8; i++)
            s->policy.templates[t8].nvlink_group[i] = (uint8_t)(i / 2);
        two_nodes_nvlink(s, t8, soft, soft ? GS_UNSET : 0);
        pod(s, "other", "x", 3, 0, -1); /* n1 cards 0-2 */
        pod(s, "other", "y", 3, 0, -1); /* n1 cards 4-6 */
        pod(s, "other", "z", 3, 0, -1); /* n2 cards 0-2 */
        for (int i = 1; i <= 3; i++) {
            char n[8];
            snprintf(n, sizeof(n), "tp%d", i);
            pod(s, "ns", n, 2, i, -1)->tier = GS_TIER_NVLINK;
        }
        struct gs_tsim *t = run(s, GS_WAY_FULL);
        assert_string_equal(node_of(t, "tp1"), "n2");
        assert_int_equal(find(t, "tp1")->gpu_mask, 0x30u);
        assert_int_equal(find(t, "tp2")->gpu_mask, 0xc0u);
        if (soft) {
            assert_string_equal(node_of(t, "tp3"), "n1");
            assert_int_equal(find(t, "tp3")->gpu_mask, 0x88u);
        } else {
            assert_int_equal(find(t, "tp3")->state, GS_POD_PENDING);
            assert_non_null(strstr(find(t, "tp3")->reason, "NVLink"));
        }
        gs_tsim_free(t);
        gs_scenario_free(s);
    }
    for (int soft = 0; soft < 2; soft++) {
        struct gs_scenario *s = scn();
        int t8 = tmpl(s, "t8", 8, 1);
        two_nodes_nvlink(s, t8, soft, 0);
        pod(s, "other", "busy-1", 5, 0, 3600);
        pod(s, "other", "busy-2", 5, 0, 3600);
        gang(s, "ns", "job", 2, 3, 1, 100, NULL, NULL);
        for (size_t i = 0; i < s->npods; i++)
            if (strcmp(s->pods[i].ns, "ns") == 0)
                s->pods[i].tier = GS_TIER_NVLINK;
        struct gs_tsim *t = run(s, GS_WAY_FULL);
        assert_int_equal(find(t, "job-0")->start_us, (soft ? 1 : 3600) * S);
        if (soft)
            assert_string_not_equal(node_of(t, "job-0"), node_of(t, "job-1"));
        else
            assert_string_equal(node_of(t, "job-0"), node_of(t, "job-1"));
        gs_tsim_free(t);
        gs_scenario_free(s);
    }
}

/*
 * Sharing that follows utilisation: slices of 60 % of a card's compute at 30 % gpu-util keep it
 * busy 18 % each. Where the tier allows overcommit (node, 1.5), three go on one card at once —
 * 180 % of its compute asked, 54 % of its time used — and the card's allocation is split in
 * three; at 60 % gpu-util the third would make it 108 % busy and waits for a card. Without
 * overcommit (1.0) each waits for the one before it.
 */
static void test_sharing_follows_util(void **state)
{
    (void)state;
    static const struct {
        int util, ratio;
        int64_t third_start_s;
    } cases[] = {{30, 1500, 0}, {60, 1500, 3600}, {30, 1000, 7200}};
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct gs_scenario *s = scn();
        node(s, "n1", "az-1", tmpl(s, "t1", 1, 0));
        s->policy.tiers[GS_TIER_NODE] = (struct gs_tier_spec){.defined = 1,
                                                              .sharing = 1,
                                                              .overcommit_milli = cases[k].ratio,
                                                              .strategy = GS_STRATEGY_SPREAD};
        for (int i = 0; i < 3; i++) {
            char n[8];
            snprintf(n, sizeof(n), "s%d", i);
            struct gs_pod_spec *p = pod(s, "ns", n, 1, 0, 3600);
            p->containers[0].gpumem_mib = 10240;
            p->containers[0].gpucores = 60;
            p->tier = GS_TIER_NODE;
            p->util_pct = cases[k].util;
        }
        struct gs_tsim *t = run(s, GS_WAY_FULL);
        assert_int_equal(find(t, "s2")->start_us, cases[k].third_start_s * S);
        if (k == 0) {
            assert_int_equal(gs_tsim_summary(t)->usage.busy_milli_s, 3600 * 540LL);
            assert_int_equal(gs_tsim_summary(t)->usage.gpu_milli_s, GPU_S(3600));
        }
        assert_adds_up(t);
        gs_tsim_free(t);
        gs_scenario_free(s);
    }
}

/*
 * Elastic PodGroups (minMember below the members, as Volcano means them): a PodGroup of minMember
 * 2 and six one-card members on a 4-card node runs four at once — two all or nothing, two grown
 * into the free cards — and the last two wait. A pod of the same priority needing a card takes
 * one grown member's, not the gang's: the gang shrinks to three and keeps running; the evicted
 * member comes back when a card frees. A gang at its minMember goes whole or not at all.
 */
static void test_elastic_gang(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t4", 4, 0));
    podgroup(s, "ns", "el", 2, NULL);
    for (int i = 0; i < 6; i++) {
        char n[8];
        snprintf(n, sizeof(n), "el-%d", i);
        snprintf(pod(s, "ns", n, 1, 0, 3600)->group, GS_SCN_NAME_MAX, "el");
    }
    pod(s, "other", "late", 1, 100, 600);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    int at0 = 0, evicted = 0;
    for (int i = 0; i < 6; i++) {
        char n[8];
        snprintf(n, sizeof(n), "el-%d", i);
        at0 += find(t, n)->start_us == 0;
        evicted += find(t, n)->preemptions;
        assert_int_equal(find(t, n)->state, GS_POD_COMPLETED);
    }
    assert_int_equal(at0, 4);
    assert_int_equal(evicted, 1);
    assert_int_equal(find(t, "late")->start_us, 100 * S);
    assert_int_equal(gs_tsim_summary(t)->preemptions, 1);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* PodGroup ns/job of minMember @min with minTaskMember {ps: @ps, worker: @workers}, in @s. */
static void ps_worker_group(struct gs_scenario *s, int min, int ps, int workers)
{
    char why[160];
    podgroup(s, "ns", "job", min, NULL);
    struct gs_podgroup_spec *g = &s->policy.podgroups[s->policy.npodgroups - 1];
    assert_int_equal(gs_podgroup_task_add(g, "ps", ps, why, sizeof(why)), 0);
    assert_int_equal(gs_podgroup_task_add(g, "worker", workers, why, sizeof(why)), 0);
}

/* In PodGroup ns/job of @s: three workers w-0..w-2 of one card each, then ps-0 of @ps_gpus
 * cards, all submitted at 0 for an hour. */
static void ps_worker_pods(struct gs_scenario *s, int ps_gpus)
{
    for (int i = 0; i < 4; i++) {
        char n[8];
        snprintf(n, sizeof(n), i < 3 ? "w-%d" : "ps-0", i);
        struct gs_pod_spec *p = pod(s, "ns", n, i < 3 ? 1 : ps_gpus, 0, 3600);
        snprintf(p->group, sizeof(p->group), "job");
        snprintf(p->task, sizeof(p->task), "%s", i < 3 ? "worker" : "ps");
    }
}

/* A Volcano Job's PodGroup, minMember 3 and minTaskMember {ps: 1, worker: 2}, whose three workers
 * (one card each) come before its ps: @ps_gpus cards for the ps, a 3-card node. */
static struct gs_scenario *task_gang(int ps_gpus)
{
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t3", 3, 0));
    ps_worker_group(s, 3, 1, 2);
    ps_worker_pods(s, ps_gpus);
    return s;
}

/*
 * minTaskMember (Volcano's gang plugin: a job is ready when minMember of its members are and each
 * task's minimum of that task's): with room for three of the four members, the three that start
 * together are the ps and two workers, not the first three to come (all workers); the third
 * worker grows in when a card frees. A ps that cannot fit holds the whole gang back, though three
 * workers would make minMember: a 2-card ps fits the node, but not beside two workers.
 */
static void test_task_min_gang(void **state)
{
    (void)state;
    struct gs_scenario *s = task_gang(1);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "ps-0")->start_us, 0);
    assert_int_equal(find(t, "w-0")->start_us, 0);
    assert_int_equal(find(t, "w-1")->start_us, 0);
    assert_int_equal(find(t, "w-2")->start_us, 3600 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
    s = task_gang(2);
    t = run(s, GS_WAY_FULL);
    for (int i = 0; i < 3; i++) {
        char n[8];
        snprintf(n, sizeof(n), "w-%d", i);
        assert_int_equal(find(t, n)->state, GS_POD_PENDING);
    }
    assert_int_equal(find(t, "ps-0")->state, GS_POD_PENDING);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * A member a task's minimum needs is no extra, though minMember is met: a minMember 1,
 * {ps: 1, worker: 1} gang of high priority on a node full of low-priority pods starts its ps and
 * its worker together, each preempting one, where the worker (a member beyond minMember) would
 * only have grown into free room and the gang waited.
 */
static void test_task_min_preempts(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t2", 2, 0));
    pclass(s, "low", 10);
    pclass(s, "high", 100);
    ps_worker_group(s, 1, 1, 1);
    for (int i = 0; i < 2; i++) {
        char n[8];
        snprintf(n, sizeof(n), "low-%d", i);
        snprintf(pod(s, "other", n, 1, 0, 3600)->priority_class, GS_SCN_NAME_MAX, "low");
    }
    for (int i = 0; i < 2; i++) {
        struct gs_pod_spec *p = pod(s, "ns", i ? "job-worker" : "job-ps", 1, 10, 600);
        snprintf(p->priority_class, GS_SCN_NAME_MAX, "high");
        snprintf(p->group, sizeof(p->group), "job");
        snprintf(p->task, sizeof(p->task), "%s", i ? "worker" : "ps");
    }
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "job-ps")->start_us, 10 * S);
    assert_int_equal(find(t, "job-worker")->start_us, 10 * S);
    assert_int_equal(gs_tsim_summary(t)->preemptions, 2);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/*
 * An elastic gang shrinks only by members its tasks can spare: minMember 1, {ps: 1, worker: 2},
 * its ps and three workers on a 4-card node. A pod of the same priority needing two cards may
 * take the one worker beyond its task's minimum, not two: the gang would no longer be ready
 * (gs__tn_gang_lacking()). It waits for the gang to finish.
 */
static void test_elastic_shrink_keeps_tasks(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    node(s, "n1", "az-1", tmpl(s, "t4", 4, 0));
    ps_worker_group(s, 1, 1, 2);
    ps_worker_pods(s, 1);
    pod(s, "other", "late", 2, 100, 600);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(gs_tsim_summary(t)->preemptions, 0);
    assert_int_equal(find(t, "late")->start_us, 3600 * S);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* A pod asking no tier keeps to one NVLink bridge on a board whose bridges join pairs: with card 0
 * taken, two cards come from the whole pair 2-3, not 1 and 2 of the same PCIe domain. */
static void test_nvlink_pair_without_tier(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t8 = tmpl(s, "pairs", 8, 1);
    for (int i = 0; i < 8; i++)
        s->policy.templates[t8].nvlink_group[i] = (uint8_t)(i / 2);
    node(s, "n1", "az-1", t8);
    pod(s, "ns", "one", 1, 0, -1);
    pod(s, "ns", "two", 2, 1, -1);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "one")->gpu_mask, 0x01u);
    assert_int_equal(find(t, "two")->gpu_mask, 0x0cu);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* Free cards enough in the cluster but on no one node: the reason says how they are spread. */
static void test_reason_free_cards_spread(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t8 = tmpl(s, "eight", 8, 0);
    node(s, "n1", "az-1", t8);
    node(s, "n2", "az-1", t8);
    pod(s, "ns", "a", 6, 0, -1);
    pod(s, "ns", "b", 6, 0, -1);
    pod(s, "ns", "c", 3, 1, -1);
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_int_equal(find(t, "c")->state, GS_POD_PENDING);
    if (!strstr(find(t, "c")->reason,
                "0/2 nodes are available: 2 Insufficient nvidia.com/gpu; 4 free nvidia.com/gpu in "
                "the cluster, at most 2 on one node."))
        fail_msg("reason: %s", find(t, "c")->reason);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

/* spec.nodeName and nodeSelector topology.kubernetes.io/zone hold a pod to its node or zone; a
 * node or zone the cluster lacks is refused. */
static void test_node_name_and_zone(void **state)
{
    (void)state;
    struct gs_scenario *s = scn();
    int t8 = tmpl(s, "eight", 8, 0);
    node(s, "n1", "az-1", t8);
    node(s, "n2", "az-2", t8);
    snprintf(pod(s, "ns", "named", 1, 0, -1)->node_name, GS_SCN_NAME_MAX, "n2");
    snprintf(pod(s, "ns", "zoned", 1, 0, -1)->node_zone, GS_SCN_NAME_MAX, "az-2");
    snprintf(pod(s, "ns", "big", 8, 1, -1)->node_name, GS_SCN_NAME_MAX, "n2");
    snprintf(pod(s, "ns", "lost", 1, 0, -1)->node_name, GS_SCN_NAME_MAX, "n9");
    snprintf(pod(s, "ns", "far", 1, 0, -1)->node_zone, GS_SCN_NAME_MAX, "az-9");
    struct gs_tsim *t = run(s, GS_WAY_FULL);
    assert_string_equal(node_of(t, "named"), "n2");
    assert_string_equal(node_of(t, "zoned"), "n2");
    assert_int_equal(find(t, "big")->state, GS_POD_PENDING);
    assert_non_null(strstr(find(t, "big")->reason, "node n2: Insufficient nvidia.com/gpu"));
    assert_int_equal(find(t, "lost")->state, GS_POD_REJECTED);
    assert_non_null(strstr(find(t, "lost")->reason, "node n9 is not in the cluster"));
    assert_int_equal(find(t, "far")->state, GS_POD_REJECTED);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preempt_whole_gang),
        cmocka_unit_test(test_restored_gang_runs_again),
        cmocka_unit_test(test_restored_charge_is_searched),
        cmocka_unit_test(test_card_failures),
        cmocka_unit_test(test_card_holds),
        cmocka_unit_test(test_restored_card_modes),
        cmocka_unit_test(test_node_failures),
        cmocka_unit_test(test_taints),
        cmocka_unit_test(test_scheduling_policy),
        cmocka_unit_test(test_promise_follows_queues),
        cmocka_unit_test(test_shortfall_per_model),
        cmocka_unit_test(test_shortfall_gang_nvlink),
        cmocka_unit_test(test_shortfall_replicas),
        cmocka_unit_test(test_dedicated_room_kept),
        cmocka_unit_test(test_dedicated_room_whole_cards),
        cmocka_unit_test(test_preempt_smallest_gang),
        cmocka_unit_test(test_backoff_after_failed_search_only),
        cmocka_unit_test(test_small_pods_keep_the_big_hole),
        cmocka_unit_test(test_fair_share_settles),
        cmocka_unit_test(test_reclaim_then_fill),
        cmocka_unit_test(test_reclaim_when_victims_arrive),
        cmocka_unit_test(test_max_pods),
        cmocka_unit_test(test_backoff_ends_in_a_search),
        cmocka_unit_test(test_prefer_no_schedule),
        cmocka_unit_test(test_gpumem_quota_per_card),
        cmocka_unit_test(test_mixed_card_shapes_refused),
        cmocka_unit_test(test_cpu_quota_reason),
        cmocka_unit_test(test_nvlink_gang_never_split),
        cmocka_unit_test(test_gpuquota_reason),
        cmocka_unit_test(test_gpuquota_borrows_past_dedicated),
        cmocka_unit_test(test_backfill_keeps_head),
        cmocka_unit_test(test_backfill_uses_spare_cards),
        cmocka_unit_test(test_active_deadline),
        cmocka_unit_test(test_backfill_reads_deadline),
        cmocka_unit_test(test_overhead_counts),
        cmocka_unit_test(test_deterministic_json),
        cmocka_unit_test(test_waterfill),
        cmocka_unit_test(test_profile_overrides),
        cmocka_unit_test(test_mig_instances),
        cmocka_unit_test(test_mig_policy_applied),
        cmocka_unit_test(test_gang_retry_ends),
        cmocka_unit_test(test_gang_min_resources),
        cmocka_unit_test(test_gang_min_resources_over_quota),
        cmocka_unit_test(test_queue_capability),
        cmocka_unit_test(test_queue_conflict),
        cmocka_unit_test(test_podgroup_without_queue),
        cmocka_unit_test(test_memory_is_charged),
        cmocka_unit_test(test_borrowing_gang_goes_whole),
        cmocka_unit_test(test_evicted_pods_come_back),
        cmocka_unit_test(test_gang_keeps_its_high_member),
        cmocka_unit_test(test_max_pods_per_user),
        cmocka_unit_test(test_never_preempts),
        cmocka_unit_test(test_preempts_after_grace),
        cmocka_unit_test(test_alike_pods_tried_once),
        cmocka_unit_test(test_fits_without_matches_release),
        cmocka_unit_test(test_vgpu_memory_cap),
        cmocka_unit_test(test_vgpu_three_on_one_card),
        cmocka_unit_test(test_vgpu_class_clients),
        cmocka_unit_test(test_vgpu_alone_and_distinct),
        cmocka_unit_test(test_one_mode_per_card),
        cmocka_unit_test(test_timeslice_memory),
        cmocka_unit_test(test_timeslice_spread),
        cmocka_unit_test(test_timeslice_distinct),
        cmocka_unit_test(test_timeslice_weighted),
        cmocka_unit_test(test_mode_conversion),
        cmocka_unit_test(test_fleet_open_levels),
        cmocka_unit_test(test_same_card),
        cmocka_unit_test(test_memory_slice_share),
        cmocka_unit_test(test_replicas_quota_refused),
        cmocka_unit_test(test_shared_zero_refuses_shares),
        cmocka_unit_test(test_timeslice_tier),
        cmocka_unit_test(test_work_timeslice_credit),
        cmocka_unit_test(test_work_shares_add_up),
        cmocka_unit_test(test_work_discarded),
        cmocka_unit_test(test_work_partial_gang_idle),
        cmocka_unit_test(test_evict_least_work),
        cmocka_unit_test(test_nvlink_preferred),
        cmocka_unit_test(test_sharing_follows_util),
        cmocka_unit_test(test_elastic_gang),
        cmocka_unit_test(test_elastic_shrink_keeps_tasks),
        cmocka_unit_test(test_task_min_gang),
        cmocka_unit_test(test_task_min_preempts),
        cmocka_unit_test(test_nvlink_pair_without_tier),
        cmocka_unit_test(test_reason_free_cards_spread),
        cmocka_unit_test(test_node_name_and_zone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
