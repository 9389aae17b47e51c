/* Fragmentation (FGD) and stranded share, on states worked out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "sched_impl.h"

#include <errno.h>
#include <string.h>

static struct gs_sched *one_node_sched(struct gs_cluster **c, const char *policy)
{
    struct gs_profile *p;
    struct gs_sched *s;
    struct gs_diag d;
    gs_diag_init(&d);
    gs_cluster_new(c);
    struct gs_node_spec n = {.name = "n",
                             .model = gs_catalog_find("G2", -1),
                             .gpus = 4,
                             .cpu_milli = 32000,
                             .memory_mib = 65536};
    gs_cluster_add_node(*c, &n, &d);
    gs_profile_for_policy(policy, &p, &d);
    assert_int_equal(gs_sched_new(*c, p, 1, &s, &d), 0);
    gs_profile_free(p);
    return s;
}

static struct gs_pod_req req(int64_t cpu, uint32_t num, uint32_t milli)
{
    return (struct gs_pod_req){
        .cpu_milli = cpu, .memory_mib = 1024, .num_gpu = num, .gpu_milli = milli};
}

static void test_typical_pods_cover_95(void **state)
{
    (void)state;
    struct gs_cluster *c;
    struct gs_sched *s = one_node_sched(&c, "fgd");
    /* 60 x (1 GPU share 500), 36 x (1 whole), 3 x CPU-only, 1 x 2 whole: 100 pods. The
     * smallest prefix by frequency reaching 95 pods is the first two classes (96 pods). */
    struct gs_pod_req w[100];
    for (int i = 0; i < 100; i++)
        w[i] = i < 60   ? req(4000, 1, 500)
               : i < 96 ? req(8000, 1, 1000)
               : i < 99 ? req(2000, 0, 0)
                        : req(8000, 2, 1000);
    assert_int_equal(gs_sched_set_workload(s, w, 100), 0);
    assert_int_equal(s->ntypical, 2);
    assert_int_equal(s->typical_total, 96);
    assert_int_equal(s->typical[0].count, 60);
    assert_int_equal(s->typical[0].pc.req.gpu_milli, 500);
    assert_int_equal(s->typical[1].count, 36);
    assert_int_equal(s->typical[0].memory_mib, 1024);
    gs_sched_free(s);
    gs_cluster_free(c);
}

/* The workload can be replaced until a pod is placed or scored, and not after: cached results
 * would otherwise keep the old typical pods. */
static void test_workload_before_placements(void **state)
{
    (void)state;
    struct gs_cluster *c;
    struct gs_sched *s = one_node_sched(&c, "fgd");
    struct gs_pod_req share = req(4000, 1, 500), whole = req(8000, 1, 1000);
    assert_int_equal(gs_sched_frag_milli(s), 0); /* no workload yet */
    assert_int_equal(gs_sched_set_workload(s, &whole, 1), 0);
    struct gs_placement pl;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(
        gs_sched_bind_placement(s, &share, &(struct gs_placement){0, 1u << 1, 500}, &d),
        0); /* card 1 has 500 left: a fragment for whole-card pods */
    assert_int_equal(gs_sched_frag_milli(s), 500);
    assert_int_equal(gs_sched_set_workload(s, &share, 1), 0); /* nothing scored yet */
    assert_int_equal(gs_sched_frag_milli(s), 0);              /* a 500 share fits the 500 left */
    assert_int_equal(gs_sched_place(s, &share, &pl, &d), 0);
    assert_int_equal(gs_sched_set_workload(s, &whole, 1), -EBUSY);
    gs_sched_free(s);
    gs_cluster_free(c);
}

static void test_fragmentation_by_hand(void **state)
{
    (void)state;
    struct gs_cluster *c;
    struct gs_sched *s = one_node_sched(&c, "fgd");
    struct gs_pod_req w[4] = {req(4000, 1, 500), req(4000, 1, 500), req(4000, 1, 500),
                              req(8000, 1, 1000)};
    gs_sched_set_workload(s, w, 4); /* classes: share 500 (3 pods), whole (1 pod) */
    struct gs_nstate st = s->states[0];
    /* empty node: both classes fit every card -> no fragment */
    assert_int_equal(gs__frag_raw(s, &st), 0);
    /* cards left 1000, 300, 700, 0: the 500-share class cannot use the 300 card (3 x 300);
     * the whole-card class cannot use 300 + 700 (1 x 1000) */
    st.gpu_left[1] = 300, st.gpu_left[2] = 700, st.gpu_left[3] = 0;
    st.gpu_left_sum = 2000;
    assert_int_equal(gs__frag_raw(s, &st), 3 * 300 + 1 * 1000);
    /* CPU below the share class's 4 cores: all free share is a fragment for it */
    st.cpu_left = 3000;
    assert_int_equal(gs__frag_raw(s, &st), 3 * 2000 + 1 * 2000);
    /* stranded share, CPU for one 500 pod only: 2000 - 500 left over for it; whole class
     * needs 8 cores: all 2000 */
    st.cpu_left = 4000;
    assert_int_equal(gs__frag_pack_raw(s, &st), 3 * 1500 + 1 * 2000);
    gs_sched_free(s);
    gs_cluster_free(c);
}

static void test_model_constraint_is_fragment(void **state)
{
    (void)state;
    struct gs_cluster *c;
    struct gs_sched *s = one_node_sched(&c, "fgd");
    struct gs_pod_req t4 = req(1000, 1, 1000);
    t4.model_mask = 1u << gs_catalog_find("T4", -1);
    gs_sched_set_workload(s, &t4, 1);
    /* a G2 node cannot host the T4-only class: its whole free share is a fragment */
    assert_int_equal(gs__frag_raw(s, &s->states[0]), 4000);
    assert_int_equal(gs_sched_frag_milli(s), 4000);
    gs_sched_free(s);
    gs_cluster_free(c);
}

static void test_sigmoid_scale(void **state)
{
    (void)state;
    /* int(100 x sigmoid(x)), x = d / total / 1000 */
    assert_int_equal(gs__sigmoid_pct(0, 1), 50);
    assert_int_equal(gs__sigmoid_pct(-1, 1), 49);
    assert_int_equal(gs__sigmoid_pct(1000, 1), 73);  /* sigmoid(1) = 0.731 */
    assert_int_equal(gs__sigmoid_pct(-1000, 1), 26); /* sigmoid(-1) = 0.269 */
    assert_int_equal(gs__sigmoid_pct(2000, 2), 73);  /* weights normalise */
    assert_int_equal(gs__sigmoid_pct(10000000, 1), 99);
    assert_int_equal(gs__sigmoid_pct(-10000000, 1), 0);
}

static void test_fgd_prefers_less_fragmenting_card(void **state)
{
    (void)state;
    struct gs_cluster *c;
    struct gs_sched *s = one_node_sched(&c, "fgd");
    struct gs_pod_req w[2] = {req(1000, 1, 500), req(1000, 1, 500)};
    gs_sched_set_workload(s, w, 2);
    struct gs_placement a, b;
    struct gs_diag d;
    struct gs_pod_req p = req(1000, 1, 500);
    assert_int_equal(gs_sched_place(s, &p, &a, &d), 0);
    assert_int_equal(a.gpu_mask, 1u); /* all cards equal: the lowest index */
    /* the second 500 share completes card 0 (no new fragment) rather than opening card 1 */
    assert_int_equal(gs_sched_place(s, &p, &b, &d), 0);
    assert_int_equal(b.gpu_mask, 1u);
    gs_sched_free(s);
    gs_cluster_free(c);
}

/* A workload of 0.65 x 40, 0.32 x 40, 0.47 x 20 and 1 whole x 10 (110 card requests) and
 * CPU-only pods, which fill no card and do not count. */
static void set_mix(struct gs_sched *s, int small)
{
    struct gs_pod_req w[130];
    size_t n = 0;
    for (int i = 0; i < 40; i++) {
        w[n++] = req(1000, 1, 650);
        w[n++] = req(1000, 1, 320);
    }
    for (int i = 0; i < 20; i++)
        w[n++] = req(1000, 1, 470);
    for (int i = 0; i < 10; i++) {
        w[n++] = req(1000, 1, 1000);
        w[n++] = req(4000, 0, 0);
    }
    for (int i = 0; i < small; i++)
        w[n++] = req(1000, 1, 100);
    assert_int_equal(gs_sched_set_workload(s, w, n), 0);
}

/*
 * Expected leftover, worked by hand (milli x 1000). Below 320 nothing of the mix fits: V(r) = r.
 * V(360) = V(40) (only 0.32 fits, and often enough that q = 1). V(680) = (40 V(30) + 20 V(210) +
 * 40 V(360)) / 100 = (1200 + 4200 + 1600) / 100 = 70. V(470) = (20 V(0) + 40 V(150)) / 60 = 100;
 * V(620) = (20 V(150) + 40 V(300)) / 60 = 250; V(940) = (40 V(290) + 20 V(470) + 40 V(620)) /
 * 100 = 236. An empty card is no remainder: V(1000) = 0.
 */
static void test_expected_waste_by_hand(void **state)
{
    (void)state;
    struct gs_cluster *c;
    struct gs_sched *s = one_node_sched(&c, "gpusched");
    set_mix(s, 0);
    assert_int_equal(s->waste->left[0], 0);
    assert_int_equal(s->waste->left[210], 210000);
    assert_int_equal(s->waste->left[360], 40000);
    assert_int_equal(s->waste->left[680], 70000);
    assert_int_equal(s->waste->left[470], 100000);
    assert_int_equal(s->waste->left[620], 250000);
    assert_int_equal(s->waste->left[940], 236000);
    assert_int_equal(s->waste->left[1000], 0);
    /* Two pods of 0.1 among 112: a 0.19 remainder is taken with q = 5 x 2 / 112 only, and V(90)
     * = 90 (0.1 does not fit): (102 x 190000 + 10 x 90000) / 112 = 181071. */
    set_mix(s, 2);
    assert_int_equal(s->waste->left[190], 181071);
    gs_sched_free(s);
    gs_cluster_free(c);
}

/* Card 0 has 0.68 free, card 1 0.97. FGD (and best fit) put a 0.47 pod on card 0, leaving 0.21
 * that nothing of the mix fills: V(210) - V(680) = 210 - 70 = +140. gpusched's ExpectedWaste sees
 * that on card 1 it leaves 0.50, which a 0.47 or a 0.32 pod takes: V(500) = (20 V(30) + 40 V(180))
 * / 60 = 130; V(970) = (40 V(320) + 20 V(500) + 40 V(650)) / 100 = (0 + 2600 + 1600) / 100 = 42
 * (V(650) = (20 V(180) + 40 V(10)) / 100 = 40); +88, less. FGD gives both cards the same sigmoid
 * step and so takes the lower index; in gpusched ExpectedWaste settles that tie: card 1. */
static void test_expected_waste_card_choice(void **state)
{
    (void)state;
    static const char *const policy[] = {"gpusched", "fgd"};
    for (int k = 0; k < 2; k++) {
        struct gs_cluster *c;
        struct gs_sched *s = one_node_sched(&c, policy[k]);
        set_mix(s, 0);
        struct gs_diag d;
        gs_diag_init(&d);
        struct gs_pod_req a = req(1000, 1, 320), b = req(1000, 1, 30), p = req(1000, 1, 470);
        struct gs_placement pa = {0, 1u, 320}, pb = {0, 2u, 30}, pl;
        assert_int_equal(gs_sched_bind_placement(s, &a, &pa, &d), 0);
        assert_int_equal(gs_sched_bind_placement(s, &b, &pb, &d), 0);
        assert_int_equal(gs_sched_place(s, &p, &pl, &d), 0);
        assert_int_equal(pl.gpu_mask, k == 0 ? 2u : 1u);
        gs_sched_free(s);
        gs_cluster_free(c);
    }
}

/* ExpectedWaste's score for a one-card pod (a share of card @gpu, or a whole card: @gpu -1) on a
 * state with @ngpu cards free as @left and @cpu milli-CPU left: 500 - growth / 2000. */
static int waste_score(const struct gs_sched *s, int ngpu, const uint16_t *left, int64_t cpu,
                       int64_t pod_cpu, uint32_t milli, int gpu)
{
    struct gs_nstate st = {.cpu_milli = 32000,
                           .memory_mib = 65536,
                           .cpu_left = cpu,
                           .memory_left = 65536,
                           .ngpu = (uint8_t)ngpu};
    for (int i = 0; i < ngpu; i++) {
        st.gpu_left[i] = left[i];
        st.gpu_left_sum += left[i];
    }
    struct gs_podclass pc;
    struct gs_pod_req r = req(pod_cpu, 1, milli);
    gs__podclass_init(&pc, &r);
    return gs__plugins[gs_plugin_find("ExpectedWaste")]->score(s, &st, &pc, gpu);
}

/*
 * A remainder is lost when the node has no CPU left for the pods that fit it. Every pod of the
 * mix asks for 1 core, so a card keeps its table figure with a core left and is lost without
 * one. A 0.32 pod on a one-card node with 8 cores: with 1 core it leaves 0.68 and V(680) = 70,
 * score 500 - 70000 / 2000 = 465; taking all 8 it leaves 0.68 that nothing can reach: 500 - 340 =
 * 160. Cards compete for the CPU, largest free share first: with two empty cards and 3 cores, the
 * 0.32 pod leaves 2, one for the empty card (V(1000) = 0) and one for the 0.68: 465; with 2
 * cores it leaves 1, which the empty card takes, and the 0.68 is lost: 160. A whole-card pod is
 * scored on the partly used cards alone: next to a 0.68 remainder with 2 cores left, one that
 * takes 1 core leaves it its core (500), one that takes both loses it: 500 - 610000 / 2000 = 195.
 */
static void test_expected_waste_counts_cpu(void **state)
{
    (void)state;
    struct gs_cluster *c;
    struct gs_sched *s = one_node_sched(&c, "gpusched");
    set_mix(s, 0);
    assert_int_equal(s->waste->cpu_fit[680 / WASTE_STEP][0], 0);
    assert_int_equal(s->waste->cpu_fit[680 / WASTE_STEP][1], 1000);
    assert_int_equal(s->waste->cpu_mean[1000 / WASTE_STEP], 1000);
    const uint16_t one[1] = {1000}, two[2] = {1000, 1000};
    assert_int_equal(waste_score(s, 1, one, 8000, 7000, 320, 0), 465);
    assert_int_equal(waste_score(s, 1, one, 8000, 8000, 320, 0), 160);
    assert_int_equal(waste_score(s, 2, two, 3000, 1000, 320, 1), 465);
    assert_int_equal(waste_score(s, 2, two, 2000, 1000, 320, 1), 160);
    const uint16_t part[2] = {680, 1000};
    assert_int_equal(waste_score(s, 2, part, 2000, 1000, 1000, -1), 500);
    assert_int_equal(waste_score(s, 2, part, 2000, 2000, 1000, -1), 195);
    gs_sched_free(s);
    gs_cluster_free(c);
}

/*
 * A share that leaves a partly used card with 0.10 to 0.30 free scores 0: nothing of the mix fits
 * there. Without the rule, by the table above: 0.47 on 0.68 leaves 0.21, 500 - (210 - 70) / 2 =
 * 430; 0.32 on 0.42 leaves 0.10, V(420) = V(100) = 100, so 500. Just outside: 0.32 on 0.62 leaves
 * 0.30, 500 - (300 - 250) / 2 = 475. An empty card is exempt: a 0.81 pod leaves 0.19 wherever it
 * goes, 500 - (190 - 0) / 2 = 405. Every pod of the mix asks for 1 core; 7 are left.
 */
static void test_expected_waste_dead_remainder(void **state)
{
    (void)state;
    struct gs_cluster *c;
    struct gs_sched *s = one_node_sched(&c, "gpusched");
    set_mix(s, 0);
    const uint16_t r680[1] = {680}, r420[1] = {420}, r620[1] = {620}, empty[1] = {1000};
    assert_int_equal(waste_score(s, 1, r680, 8000, 1000, 470, 0), 0);
    assert_int_equal(waste_score(s, 1, r420, 8000, 1000, 320, 0), 0);
    assert_int_equal(waste_score(s, 1, r620, 8000, 1000, 320, 0), 475);
    assert_int_equal(waste_score(s, 1, empty, 8000, 1000, 810, 0), 405);
    gs_sched_free(s);
    gs_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_typical_pods_cover_95),
        cmocka_unit_test(test_workload_before_placements),
        cmocka_unit_test(test_fragmentation_by_hand),
        cmocka_unit_test(test_model_constraint_is_fragment),
        cmocka_unit_test(test_sigmoid_scale),
        cmocka_unit_test(test_fgd_prefers_less_fragmenting_card),
        cmocka_unit_test(test_expected_waste_by_hand),
        cmocka_unit_test(test_expected_waste_card_choice),
        cmocka_unit_test(test_expected_waste_counts_cpu),
        cmocka_unit_test(test_expected_waste_dead_remainder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
