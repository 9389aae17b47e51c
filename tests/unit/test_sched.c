/*
 * Scheduling framework: plugin registry, profiles, queue order, and the incremental engine
 * checked against a brute-force scan of every node under random arrivals and departures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/rng.h"
#include "sched_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * This binary links with -Wl,--wrap for malloc, calloc and realloc (tests/meson.build): while
 * fail_every is set, about one allocation in fail_every fails, so that the engine's -ENOMEM paths
 * run for real.
 */
void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);

static unsigned fail_every;
static struct gs_rng fail_rng;

static int alloc_fails(void)
{
    return fail_every && gs_rng_below(&fail_rng, fail_every) == 0;
}

void *__wrap_malloc(size_t n)
{
    return alloc_fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
    return alloc_fails() ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
    return alloc_fails() ? NULL : __real_realloc(p, n);
}

static void test_registry(void **state)
{
    (void)state;
    int n = gs_plugin_count();
    assert_true(n >= 12);
    for (int i = 0; i < n; i++) {
        const struct gs_plugin *p = gs__plugins[i];
        assert_int_equal(gs_plugin_find(p->name), i); /* names unique */
        assert_true(p->points != 0);
        if (p->points & (1u << GS_EP_FILTER))
            assert_non_null(p->filter);
        if (p->points & (1u << GS_EP_SCORE)) /* the trace replay's, the placements', or both */
            assert_true(p->score || p->place);
        if (p->points & (1u << GS_EP_RESERVE))
            assert_non_null(p->reserve);
        if (p->points & (1u << GS_EP_PRE_FILTER))
            assert_non_null(p->pre_filter);
    }
    assert_int_equal(gs_plugin_find("NoSuchPlugin"), -ENOENT);
    assert_null(gs_plugin_name(n));
    assert_int_equal(gs_ext_point_find("postFilter"), GS_EP_POST_FILTER);
    assert_string_equal(gs_ext_point_name(GS_EP_QUEUE_SORT), "queueSort");
}

static void test_profile_rules(void **state)
{
    (void)state;
    struct gs_profile *p;
    struct gs_diag d;
    int w;
    gs_diag_init(&d);
    assert_int_equal(gs_profile_new("x", &p), 0);
    int fgd = gs_plugin_find("FGD"), filt = gs_plugin_find("NodeGPUFilter");
    assert_int_equal(gs_profile_enable(p, GS_EP_FILTER, fgd, 1, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "does not implement filter"));
    assert_int_equal(gs_profile_enable(p, GS_EP_SCORE, fgd, 0, &d), -EINVAL);
    assert_int_equal(gs_profile_enable(p, GS_EP_SCORE, fgd, 5, &d), 0);
    assert_int_equal(gs_profile_enable(p, GS_EP_SCORE, fgd, 7, &d), 0); /* replaces */
    assert_int_equal(gs_profile_count(p, GS_EP_SCORE), 1);
    assert_int_equal(gs_profile_at(p, GS_EP_SCORE, 0, &w), fgd);
    assert_int_equal(w, 7);
    assert_int_equal(gs_profile_enable(p, GS_EP_FILTER, filt, 1, &d), 0);
    gs_profile_disable(p, GS_EP_SCORE, -1);
    assert_int_equal(gs_profile_count(p, GS_EP_SCORE), 0);
    /* no reserve plugin: a scheduler cannot be made from it */
    struct gs_cluster *c;
    struct gs_sched *s;
    gs_cluster_new(&c);
    assert_int_equal(gs_sched_new(c, p, 1, &s, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "reserve"));
    /* Random draws among all feasible nodes: combined with another score it would hide it */
    assert_int_equal(gs_profile_enable(p, GS_EP_SCORE, fgd, 1, &d), 0);
    assert_int_equal(gs_profile_enable(p, GS_EP_SCORE, gs_plugin_find("Random"), 1, &d), 0);
    assert_int_equal(gs_profile_enable(p, GS_EP_RESERVE, gs_plugin_find("NodeGPUReserve"), 1, &d),
                     0);
    assert_int_equal(gs_sched_new(c, p, 1, &s, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "cannot be combined"));
    gs_cluster_free(c);
    gs_profile_free(p);
}

static void test_policies_resolve(void **state)
{
    (void)state;
    struct gs_diag d;
    gs_diag_init(&d);
    int n = 0;
    for (const char *const *name = gs_policy_names(); *name; name++, n++) {
        struct gs_profile *p;
        assert_int_equal(gs_profile_for_policy(*name, &p, &d), 0);
        assert_string_equal(gs_profile_name(p), *name);
        assert_true(gs_profile_count(p, GS_EP_SCORE) >= 1);
        assert_int_equal(gs_profile_count(p, GS_EP_RESERVE), 1);
        gs_profile_free(p);
    }
    assert_int_equal(n, 7);
    struct gs_profile *p = NULL;
    assert_int_equal(gs_profile_for_policy("fdg", &p, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "unknown policy"));
    assert_null(p);
}

static void test_queue_order(void **state)
{
    (void)state;
    assert_true(gs_queue_less(10, 5, 1, 1)); /* higher priority first */
    assert_false(gs_queue_less(1, 1, 10, 5));
    assert_true(gs_queue_less(3, 1, 3, 2)); /* then arrival */
    assert_false(gs_queue_less(3, 2, 3, 2));
}

/* A small mixed cluster; identical nodes must share one interned state. */
static struct gs_cluster *mixed_cluster(int copies)
{
    struct gs_cluster *c;
    struct gs_diag d;
    char name[32];
    gs_diag_init(&d);
    gs_cluster_new(&c);
    const char *models[] = {"G2", "T4", "V100M32", "P100"};
    const int gpus[] = {8, 4, 8, 2};
    for (int k = 0; k < copies; k++)
        for (int m = 0; m < 4; m++) {
            snprintf(name, sizeof(name), "%s-%d", models[m], k);
            struct gs_node_spec s = {.name = name,
                                     .model = gs_catalog_find(models[m], -1),
                                     .gpus = gpus[m],
                                     .cpu_milli = 64000 + 32000 * (m % 2),
                                     .memory_mib = 262144};
            assert_true(gs_cluster_add_node(c, &s, &d) >= 0);
        }
    return c;
}

static struct gs_pod_req random_pod(struct gs_rng *r)
{
    static const uint32_t shares[] = {250, 470, 500, 810, 1000};
    struct gs_pod_req p = {.cpu_milli = 1000 * (int64_t)(1 + gs_rng_below(r, 16)),
                           .memory_mib = 1024 * (int64_t)(1 + gs_rng_below(r, 32))};
    uint64_t k = gs_rng_below(r, 10);
    if (k == 0)
        return p; /* CPU-only */
    p.gpu_milli = shares[gs_rng_below(r, 5)];
    p.num_gpu = p.gpu_milli < 1000 ? 1 : (uint32_t)(1u << gs_rng_below(r, 4));
    if (k == 1)
        p.model_mask = 1u << gs_catalog_find("T4", -1);
    return p;
}

/*
 * The failure message a full scan implies: for each reason, "N <reason>" with N the nodes that
 * fail with it, checked against @msg.
 */
static void check_reasons(struct gs_sched *s, const struct gs_pod_req *p, const char *msg)
{
    const char *text[8];
    int count[8], nt = 0;
    struct gs_diag d;
    for (size_t i = 0; i < s->c->n; i++) {
        assert_int_equal(gs_sched_score_node(s, p, i, &d), GS_UNSCHEDULABLE);
        const char *t = gs_sched_last_reason(s);
        int k = 0;
        while (k < nt && strcmp(text[k], t) != 0)
            k++;
        if (k == nt) {
            assert_true(nt < 8);
            text[nt] = t;
            count[nt++] = 0;
        }
        count[k]++;
    }
    for (int k = 0; k < nt; k++) {
        char want[128];
        snprintf(want, sizeof(want), " %d %s", count[k], text[k]);
        assert_non_null(strstr(msg, want));
    }
}

/* The node a full scan would pick: best score, then the lowest node priority. */
static int64_t brute_force(struct gs_sched *s, const struct gs_pod_req *p)
{
    int64_t best = -1, node = -1;
    struct gs_diag d;
    for (size_t i = 0; i < s->c->n; i++) {
        int64_t v = gs_sched_score_node(s, p, i, &d);
        if (v < 2)
            continue;
        if (v > best || (v == best && s->prio[i] < s->prio[node])) {
            best = v;
            node = (int64_t)i;
        }
    }
    return node;
}

/* gs_sched_score_nodes() answers as gs_sched_score_node() does, node by node, and skips -1. */
static void check_batch_scores(struct gs_sched *s, const struct gs_pod_req *p)
{
    int32_t nodes[25];
    int64_t out[25];
    const char *reason[25];
    struct gs_diag d;
    for (int i = 0; i < 24; i++)
        nodes[i] = 23 - i;
    nodes[24] = -1;
    assert_int_equal(gs_sched_score_nodes(s, p, nodes, 25, out, reason, &d), 0);
    assert_int_equal(out[24], -ENOENT);
    for (int i = 0; i < 24; i++) {
        int64_t v = gs_sched_score_node(s, p, (size_t)nodes[i], &d);
        assert_int_equal(out[i], v);
        if (v == GS_UNSCHEDULABLE)
            assert_string_equal(reason[i], gs_sched_last_reason(s));
        else
            assert_null(reason[i]);
    }
}

/*
 * gs_sched_fits_without() answers what releasing the pods would, and changes nothing: the pods
 * on @live[k]'s node in the set @pick are released for real, the pod scored, and they come back.
 */
static void check_fits_without(struct gs_sched *s, const struct gs_pod_req *p,
                               const struct gs_pod_req *reqs, const struct gs_placement *pls,
                               int nlive, int k, uint64_t pick)
{
    struct gs_pod_req gone[64] = {0};
    struct gs_placement at[64] = {0};
    struct gs_diag d;
    size_t n = 0;
    for (int i = 0; i < nlive && n < 64; i++)
        if (pls[i].node == pls[k].node && (pick >> (i % 64) & 1)) {
            gone[n] = reqs[i];
            at[n++] = pls[i];
        }
    int fits = gs_sched_fits_without(s, p, (size_t)pls[k].node, gone, at, n, &d);
    assert_true(fits == 0 || fits == 1);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(gs_sched_release(s, &gone[i], &at[i]), 0);
    assert_int_equal(gs_sched_score_node(s, p, (size_t)pls[k].node, &d) >= 2, fits);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(gs_sched_bind_placement(s, &gone[i], &at[i], &d), 0);
    struct gs_placement elsewhere = at[0];
    elsewhere.node = (pls[k].node + 1) % 24;
    if (n)
        assert_int_equal(gs_sched_fits_without(s, p, (size_t)pls[k].node, gone, &elsewhere, 1, &d),
                         -EINVAL);
}

/*
 * @policy's engine against a full scan under arrivals and departures; @sweep_min: empty states
 * kept before their ids are freed (0: the engine's default).
 */
static void check_engine_against_scan(const char *policy, size_t sweep_min)
{
    struct gs_cluster *c = mixed_cluster(6);
    struct gs_profile *prof;
    struct gs_sched *s;
    struct gs_diag d;
    struct gs_rng r;
    gs_diag_init(&d);
    gs_rng_seed(&r, 99);
    assert_int_equal(gs_profile_for_policy(policy, &prof, &d), 0);
    assert_int_equal(gs_sched_new(c, prof, 7, &s, &d), 0);
    assert_int_equal(gs_sched_state_count(s), 4); /* four node shapes, six copies each */
    if (sweep_min)
        s->sweep_min = sweep_min;
    struct gs_pod_req w[64];
    for (int i = 0; i < 64; i++)
        w[i] = random_pod(&r);
    assert_int_equal(gs_sched_set_workload(s, w, 64), 0);
    struct {
        struct gs_pod_req p;
        struct gs_placement pl;
    } live[400];
    int nlive = 0;
    for (int step = 0; step < (sweep_min ? 3000 : 1500); step++) {
        if (nlive > 0 && (gs_rng_below(&r, 3) == 0 || nlive == 400)) { /* a departure */
            int k = (int)gs_rng_below(&r, (uint64_t)nlive);
            assert_int_equal(gs_sched_release(s, &live[k].p, &live[k].pl), 0);
            live[k] = live[--nlive];
            continue;
        }
        struct gs_pod_req p = random_pod(&r);
        int64_t want = brute_force(s, &p);
        if (step % 10 == 0)
            check_batch_scores(s, &p);
        if (step % 10 == 5 && nlive > 0) {
            struct gs_pod_req reqs[400];
            struct gs_placement pls[400];
            for (int i = 0; i < nlive; i++) {
                reqs[i] = live[i].p;
                pls[i] = live[i].pl;
            }
            check_fits_without(s, &p, reqs, pls, nlive, (int)gs_rng_below(&r, (uint64_t)nlive),
                               gs_rng_next(&r));
        }
        struct gs_placement pl;
        int rc = gs_sched_place(s, &p, &pl, &d);
        if (want < 0) {
            assert_int_equal(rc, GS_UNSCHEDULABLE);
            assert_non_null(strstr(d.msg, "0/24 nodes are available"));
            check_reasons(s, &p, d.msg);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(pl.node, want);
        live[nlive].p = p;
        live[nlive++].pl = pl;
    }
    gs_sched_free(s);
    gs_profile_free(prof);
    gs_cluster_free(c);
}

static void test_engine_matches_scan(void **state)
{
    (void)state;
    const char *policies[] = {"gpusched",   "fgd",           "bestfit",
                              "gpupacking", "gpuclustering", "dotprod"};
    for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
        check_engine_against_scan(policies[i], 0);
}

/*
 * The same with state ids freed as soon as a few states are empty: results cached for a freed id
 * must not answer for the state that takes the id next, nor a class heap entry or a log entry of
 * the old state count for the new one.
 */
static void test_engine_reuses_state_ids(void **state)
{
    (void)state;
    const char *policies[] = {"gpusched", "fgd", "bestfit", "gpuclustering"};
    for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
        check_engine_against_scan(policies[i], 4);
}

/*
 * Allocations that fail inside a placement or a release: the call returns -ENOMEM and leaves the
 * scheduler as if it had not been made (the same call then succeeds as a full scan says), or it
 * succeeds; placements and failure reasons stay those of a full scan throughout. Return: the
 * allocations made to fail.
 */
static int check_engine_without_memory(const char *policy, unsigned every, uint64_t seed)
{
    struct gs_cluster *c = mixed_cluster(3);
    struct gs_profile *prof;
    struct gs_sched *s;
    struct gs_diag d;
    struct gs_rng r;
    gs_diag_init(&d);
    gs_rng_seed(&r, seed);
    gs_rng_seed(&fail_rng, seed);
    assert_int_equal(gs_profile_for_policy(policy, &prof, &d), 0);
    assert_int_equal(gs_sched_new(c, prof, seed, &s, &d), 0);
    s->sweep_min = 2; /* ids freed and reused all the time */
    struct {
        struct gs_pod_req p;
        struct gs_placement pl;
    } live[200];
    int nlive = 0, failed = 0;
    for (int step = 0; step < 1500; step++) {
        struct gs_node before[12];
        memcpy(before, c->nodes, sizeof(before));
        if (nlive > 0 && (gs_rng_below(&r, 3) == 0 || nlive == 200)) {
            int k = (int)gs_rng_below(&r, (uint64_t)nlive);
            fail_every = every;
            int rc = gs_sched_release(s, &live[k].p, &live[k].pl);
            fail_every = 0;
            if (rc == -ENOMEM) {
                failed++;
                assert_memory_equal(before, c->nodes, sizeof(before));
                rc = gs_sched_release(s, &live[k].p, &live[k].pl);
            }
            assert_int_equal(rc, 0);
            live[k] = live[--nlive];
            continue;
        }
        struct gs_pod_req p = random_pod(&r);
        int64_t want = brute_force(s, &p);
        struct gs_placement pl;
        fail_every = every;
        int rc = gs_sched_place(s, &p, &pl, &d);
        fail_every = 0;
        if (rc == -ENOMEM) {
            failed++;
            assert_memory_equal(before, c->nodes, sizeof(before));
            rc = gs_sched_place(s, &p, &pl, &d);
        }
        if (want < 0) {
            assert_int_equal(rc, GS_UNSCHEDULABLE);
            check_reasons(s, &p, d.msg);
            continue;
        }
        assert_int_equal(rc, 0);
        if (s->tie != GS_TIE_UNIFORM) /* random draws among the feasible nodes */
            assert_int_equal(pl.node, want);
        live[nlive].p = p;
        live[nlive++].pl = pl;
    }
    gs_sched_free(s);
    gs_profile_free(prof);
    gs_cluster_free(c);
    return failed;
}

static void test_engine_without_memory(void **state)
{
    (void)state;
    const char *policies[] = {"gpusched", "fgd", "bestfit", "random"};
    for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
        int failed = 0;
        for (unsigned every = 3; every <= 48; every *= 4)
            failed += check_engine_without_memory(policies[i], every, 11 + every);
        /* the failures did happen (random, which keeps little while it only draws, allocates
         * rarely: all of its may fall in the densest run) */
        assert_true(failed > 0);
    }
}

/* A bestfit scheduler over @c, seed 1. */
static struct gs_sched *bestfit_over(struct gs_cluster *c, struct gs_profile **prof,
                                     struct gs_diag *d)
{
    struct gs_sched *s = NULL;
    gs_diag_init(d);
    assert_int_equal(gs_profile_for_policy("bestfit", prof, d), 0);
    assert_int_equal(gs_sched_new(c, *prof, 1, &s, d), 0);
    return s;
}

static void test_release_restores(void **state)
{
    (void)state;
    struct gs_cluster *c = mixed_cluster(1);
    struct gs_profile *prof;
    struct gs_diag d;
    struct gs_sched *s = bestfit_over(c, &prof, &d);
    size_t before = gs_sched_state_count(s);
    struct gs_pod_req p = {.cpu_milli = 4000, .memory_mib = 1024, .num_gpu = 2, .gpu_milli = 1000};
    struct gs_placement a, b;
    assert_int_equal(gs_sched_place(s, &p, &a, &d), 0);
    assert_int_equal(__builtin_popcount(a.gpu_mask), 2);
    assert_int_equal(gs_sched_release(s, &p, &a), 0);
    assert_int_equal(gs_sched_place(s, &p, &b, &d), 0);
    assert_int_equal(a.node, b.node);
    assert_int_equal(a.gpu_mask, b.gpu_mask);
    assert_int_equal(gs_sched_release(s, &p, &b), 0);
    assert_int_equal(gs_sched_release(s, &p, &b), -EINVAL); /* not held any more */
    struct gs_cluster_totals t;
    gs_cluster_totals(c, &t);
    assert_int_equal(t.gpu_milli_used, 0);
    assert_int_equal(t.cpu_milli_used, 0);
    assert_true(gs_sched_state_count(s) >= before);
    struct gs_pod_req bad = {.num_gpu = 2, .gpu_milli = 500};
    assert_int_equal(gs_sched_place(s, &bad, &a, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "more than one GPU"));
    gs_sched_free(s);
    gs_profile_free(prof);
    gs_cluster_free(c);
}

/* A recorded placement binds back to the very cards, and the engine then sees them taken. */
static void test_bind_placement(void **state)
{
    (void)state;
    struct gs_cluster *c = mixed_cluster(1);
    struct gs_profile *prof;
    struct gs_diag d;
    struct gs_sched *s = bestfit_over(c, &prof, &d);
    struct gs_pod_req p = {.cpu_milli = 1000, .memory_mib = 1024, .num_gpu = 1, .gpu_milli = 600};
    struct gs_placement at = {.node = 0, .gpu_mask = 1u << 1, .gpu_milli = 600};
    assert_int_equal(gs_sched_bind_placement(s, &p, &at, &d), 0);
    struct gs_node_info ni;
    assert_int_equal(gs_cluster_node_info(c, 0, &ni), 0);
    assert_int_equal(ni.gpu_left[1], 400);
    assert_int_equal(ni.gpu_left[0], 1000);
    assert_int_equal(ni.cpu_left, ni.cpu_milli - 1000);
    assert_int_equal(gs_sched_bind_placement(s, &p, &at, &d), GS_UNSCHEDULABLE); /* 400 left */
    assert_non_null(strstr(d.msg, "GPU 1"));
    struct gs_placement two = {.node = 0, .gpu_mask = 3u, .gpu_milli = 600};
    assert_int_equal(gs_sched_bind_placement(s, &p, &two, &d), -EINVAL); /* 2 cards for 1 */
    struct gs_placement far = {.node = 1 << 30, .gpu_mask = 1u, .gpu_milli = 600};
    assert_int_equal(gs_sched_bind_placement(s, &p, &far, &d), -EINVAL);
    assert_int_equal(gs_cluster_node_info(c, 1u << 30, &ni), -ENOENT);
    assert_int_equal(gs_sched_release(s, &p, &at), 0);
    assert_int_equal(gs_cluster_node_info(c, 0, &ni), 0);
    assert_int_equal(ni.gpu_left[1], 1000);
    gs_sched_free(s);
    gs_profile_free(prof);
    gs_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_profile_rules),
        cmocka_unit_test(test_policies_resolve),
        cmocka_unit_test(test_queue_order),
        cmocka_unit_test(test_engine_matches_scan),
        cmocka_unit_test(test_engine_reuses_state_ids),
        cmocka_unit_test(test_engine_without_memory),
        cmocka_unit_test(test_release_restores),
        cmocka_unit_test(test_bind_placement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
