/* Trace replay: arrival sampling, the allocation-at-arrived rule, reference agreement, reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/report.h"
#include "gpusched/sched.h"
#include "gpusched/sim.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define EIGHTH "data/fgd-reference/openb-eighth/"
#define PODS   "data/alibaba-gpu-v2023/openb_pod_list_default.csv"

static struct gs_trace_pod pod(const char *name, uint32_t num, uint32_t milli)
{
    struct gs_trace_pod p = {
        .req = {.cpu_milli = 1000, .memory_mib = 1024, .num_gpu = num, .gpu_milli = milli}};
    snprintf(p.name, sizeof(p.name), "%s", name);
    return p;
}

static void test_sample_up_and_down(void **state)
{
    (void)state;
    struct gs_trace_pod pods[4] = {pod("a", 1, 500), pod("b", 1, 1000), pod("c", 0, 0),
                                   pod("d", 2, 1000)};
    uint32_t *o;
    size_t n;
    /* 3.5 GPUs asked, capacity 10 GPUs x 1.3 = 13: every pod once, then clones */
    assert_int_equal(gs_sim_sample(pods, 4, 10000, 1300, 5, &o, &n), 0);
    assert_true(n > 4);
    int seen[4] = {0};
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (i < 4)
            seen[o[i]]++;
        total += gs_pod_req_gpu_milli(&pods[o[i]].req);
    }
    assert_true(seen[0] == 1 && seen[1] == 1 && seen[2] == 1 && seen[3] == 1);
    assert_true(total <= 13000 && total > 13000 - 2000);
    free(o);
    /* capacity 2 GPUs x 1.0: the pods alone ask for more, so some are dropped */
    assert_int_equal(gs_sim_sample(pods, 4, 2000, 1000, 5, &o, &n), 0);
    total = 0;
    for (size_t i = 0; i < n; i++)
        total += gs_pod_req_gpu_milli(&pods[o[i]].req);
    assert_true(n < 4 + 3 && total <= 2000);
    free(o);
    assert_int_equal(gs_sim_sample(pods, 4, 2000, 0, 5, &o, &n), -EINVAL);
    /* Errors leave the outputs alone (nothing to free): a 2-GPU pod over a target of 1 GPU, and
     * a pod list that asks for no GPU. */
    o = NULL;
    n = 7;
    assert_int_equal(gs_sim_sample(&pods[3], 1, 1000, 1000, 5, &o, &n), -ERANGE);
    assert_null(o);
    assert_int_equal(n, 7);
    assert_int_equal(gs_sim_sample(&pods[2], 1, 1000, 1000, 5, &o, &n), -EDOM);
    assert_null(o);
}

static void test_sample_deterministic(void **state)
{
    (void)state;
    struct gs_trace_pod pods[3] = {pod("a", 1, 300), pod("b", 1, 1000), pod("c", 4, 1000)};
    uint32_t *a, *b, *c;
    size_t na, nb, nc;
    gs_sim_sample(pods, 3, 64000, 1300, 42, &a, &na);
    gs_sim_sample(pods, 3, 64000, 1300, 42, &b, &nb);
    gs_sim_sample(pods, 3, 64000, 1300, 43, &c, &nc);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na * sizeof(*a));
    assert_true(na != nc || memcmp(a, c, na * sizeof(*a)) != 0);
    free(a), free(b), free(c);
}

static void test_alloc_at_rule(void **state)
{
    (void)state;
    /* capacity 10 GPUs; arrivals at 9.96, 10.02 and 10.30 GPUs round to 100, 100, 103 % */
    struct gs_sim_event ev[3] = {
        {.arrived_milli = 9960, .used_milli = 9000},
        {.arrived_milli = 10020, .used_milli = 9500},
        {.arrived_milli = 10300, .used_milli = 9800},
    };
    struct gs_sim_run r = {.capacity_milli = 10000, .ev = ev, .n = 3};
    assert_int_equal(gs_sim_alloc_at(&r, 100), 9250); /* mean of 90.00 and 95.00 % */
    assert_int_equal(gs_sim_alloc_at(&r, 102), 9800); /* none at 102: within one point */
    assert_int_equal(gs_sim_alloc_at(&r, 80), -1);
    assert_int_equal(gs_sim_last_pct(&r), 103);
    ev[2].arrived_milli = 10296; /* 102.96 % rounds to 103: the curve's last point is a figure */
    assert_int_equal(gs_sim_last_pct(&r), 103);
    assert_int_equal(gs_sim_alloc_at(&r, gs_sim_last_pct(&r)), 9800);
    r.n = 0;
    assert_int_equal(gs_sim_last_pct(&r), -1);
}

struct eighth {
    struct gs_trace_node *nodes;
    size_t nn;
    struct gs_trace_pod *pods;
    size_t np;
    struct gs_sequence seq;
};

static int eighth_setup(void **state)
{
    struct eighth *e = calloc(1, sizeof(*e));
    struct gs_diag d;
    gs_diag_init(&d);
    if (gs_trace_read_nodes(EIGHTH "nodes.csv", &e->nodes, &e->nn, &d) ||
        gs_trace_read_pods(PODS, &e->pods, &e->np, &d) ||
        gs_trace_read_sequence(EIGHTH "sequence.csv", e->pods, e->np, e->nodes, e->nn, &e->seq, &d))
        return -1;
    *state = e;
    return 0;
}

static int eighth_teardown(void **state)
{
    struct eighth *e = *state;
    free(e->nodes);
    free(e->pods);
    gs_sequence_free(&e->seq);
    free(e);
    return 0;
}

static int peer_col(const struct gs_sequence *seq, const char *name)
{
    for (int k = 0; k < seq->npeers; k++)
        if (strcasecmp(seq->peer_policy[k], name) == 0)
            return k;
    return -1;
}

/* With the reference's node order recovered, every ranked policy makes every decision again. */
static void test_reference_reproduced(void **state)
{
    struct eighth *e = *state;
    struct gs_diag d;
    uint32_t *prio;
    size_t pairs;
    int used;
    gs_diag_init(&d);
    assert_int_equal(
        gs_sim_reference_order(e->nodes, e->nn, e->pods, e->np, &e->seq, &prio, &pairs, &used, &d),
        0);
    assert_int_equal(used, 5);
    assert_true(pairs > 1000);
    const char *names[] = {"fgd", "bestfit", "gpupacking", "gpuclustering", "dotprod"};
    /* the published simulator's GPU allocation at 100 % arrived, in basis points */
    const int64_t published[] = {9499, 9270, 9138, 9077, 9033};
    for (int i = 0; i < 5; i++) {
        struct gs_profile *p;
        struct gs_sim_run *r;
        gs_profile_for_policy(names[i], &p, &d);
        assert_int_equal(gs_sim_replay(e->nodes, e->nn, p, e->pods, e->np, e->seq.pod, e->seq.n, 42,
                                       prio, &e->seq, peer_col(&e->seq, names[i]), NULL, NULL, &r,
                                       &d),
                         0);
        assert_int_equal(r->peer_same_node, r->peer_ref_placed);
        assert_int_equal(r->peer_same_outcome, r->peer_compared);
        int64_t at = gs_sim_alloc_at(r, 100);
        if (i == 0)
            assert_true(at >= 9499 && at <= 9501); /* 94.99 published, 95.00 by its own rule */
        else
            assert_int_equal(at, published[i]);
        gs_sim_run_free(r);
        gs_profile_free(p);
    }
    free(prio);
}

static void test_reports_written(void **state)
{
    struct eighth *e = *state;
    struct gs_diag d;
    struct gs_profile *p;
    struct gs_sim_run *r;
    gs_diag_init(&d);
    gs_profile_for_policy("gpusched", &p, &d);
    assert_int_equal(gs_sim_replay(e->nodes, e->nn, p, e->pods, e->np, e->seq.pod, e->seq.n, 1,
                                   NULL, NULL, -1, NULL, NULL, &r, &d),
                     0);
    assert_int_equal(r->placed + r->failed, e->seq.n);
    char dir[] = "/tmp/gs-sim-XXXXXX", json[64], curve[64];
    assert_non_null(mkdtemp(dir));
    snprintf(json, sizeof(json), "%s/out.json", dir);
    snprintf(curve, sizeof(curve), "%s/curve.csv", dir);
    struct gs_report_ctx ctx = {.nodes = e->nodes,
                                .nnodes = e->nn,
                                .pods = e->pods,
                                .npods = e->np,
                                .nodes_path = "n",
                                .pods_path = "p"};
    assert_int_equal(gs_report_json(json, &ctx, &r, 1, 1, &d), 0);
    assert_int_equal(gs_report_curve(curve, &ctx, &r, 1, &d), 0);
    json_error_t err;
    json_t *root = json_load_file(json, 0, &err);
    assert_non_null(root);
    assert_int_equal(json_array_size(json_object_get(root, "pods")), e->seq.n);
    json_t *at = json_object_get(json_object_get(root, "summary"), "gpu_allocation_at_arrived_pct");
    assert_true(json_is_real(json_object_get(at, "100")));
    assert_true(json_real_value(json_object_get(at, "100")) > 90.0);
    json_decref(root);
    FILE *f = fopen(curve, "r");
    char line[256];
    size_t lines = 0;
    while (fgets(line, sizeof(line), f))
        lines++;
    fclose(f);
    assert_int_equal(lines, e->seq.n + 1);
    assert_int_equal(gs_report_json("/nonexistent-dir/x.json", &ctx, &r, 1, 1, &d), -EIO);
    assert_non_null(strstr(d.msg, "/nonexistent-dir/x.json"));
    unlink(json);
    unlink(curve);
    rmdir(dir);
    gs_sim_run_free(r);
    gs_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_up_and_down),
        cmocka_unit_test(test_sample_deterministic),
        cmocka_unit_test(test_alloc_at_rule),
        cmocka_unit_test_setup_teardown(test_reference_reproduced, eighth_setup, eighth_teardown),
        cmocka_unit_test_setup_teardown(test_reports_written, eighth_setup, eighth_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
