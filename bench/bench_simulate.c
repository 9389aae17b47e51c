/*
 * Benchmark: trace replay speed per policy on the bundled Alibaba trace, and its growth on a
 * cluster replicated k times (same nodes k times over, tune 1.3 of the larger capacity).
 * Prints figures and a checksum of the placements (so a change to the engine can be checked to
 * place every pod where it did before); asserts nothing.
 * Usage: see usage[] below (or bench_simulate --help).
 */
#include "gpusched/diag.h"
#include "gpusched/sched.h"
#include "gpusched/sim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct gs_trace_node *replicate(const struct gs_trace_node *n, size_t nn, int k)
{
    struct gs_trace_node *v = malloc(nn * (size_t)k * sizeof(*v));
    if (!v)
        return NULL;
    for (int r = 0; r < k; r++)
        for (size_t i = 0; i < nn; i++) {
            struct gs_trace_node *x = &v[(size_t)r * nn + i];
            *x = n[i];
            snprintf(x->name, sizeof(x->name), "r%d-%.50s", r, n[i].name);
        }
    return v;
}

/* FNV-1a over every arrival's node, cards and share: equal for runs that place alike. */
static uint64_t checksum(const struct gs_sim_run *run)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < run->n; i++) {
        const struct gs_sim_event *e = &run->ev[i];
        uint64_t v[3] = {(uint64_t)(uint32_t)e->node, e->gpu_mask, e->gpu_milli};
        for (int k = 0; k < 3; k++)
            for (int b = 0; b < 64; b += 8)
                h = (h ^ ((v[k] >> b) & 0xff)) * 0x100000001b3ULL;
    }
    return h;
}

/* Best of @reps: seconds for one sampled replay; *pods, *states, *work and *sum from the last. */
static double time_run(const struct gs_trace_node *nodes, size_t nn, const struct gs_profile *p,
                       const struct gs_trace_pod *pods, size_t np, int reps, size_t *npods,
                       size_t *states, struct gs_sched_stats *work, uint64_t *sum)
{
    int64_t gpus = 0;
    double best = 1e9;
    for (size_t i = 0; i < nn; i++)
        gpus += nodes[i].gpus;
    for (int r = 0; r < reps; r++) {
        uint32_t *order;
        size_t n;
        struct gs_sim_run *run;
        struct gs_diag d;
        gs_diag_init(&d);
        int rc = gs_sim_sample(pods, np, gpus * 1000, 1300, 42, &order, &n);
        if (rc) {
            fprintf(stderr, "bench: sampling the arrivals: %s\n", strerror(-rc));
            return -1;
        }
        double t0 = now_s();
        rc = gs_sim_replay(nodes, nn, p, pods, np, order, n, 42, NULL, NULL, -1, NULL, NULL, &run,
                           &d);
        double t = now_s() - t0;
        free(order);
        if (rc) {
            fprintf(stderr, "bench: %s\n", d.msg);
            return -1;
        }
        best = t < best ? t : best;
        *npods = run->n;
        *states = run->states;
        *work = run->work;
        *sum = checksum(run);
        gs_sim_run_free(run);
    }
    return best;
}

static const char usage[] =
    "usage: bench_simulate [NODES.csv PODS.csv [MAX_K]]\n"
    "  replays PODS on NODES (default: the bundled Alibaba trace) with every policy, the cluster\n"
    "  replicated k = 1, 2, 10, 20, 50, 100 times up to MAX_K (0..100, default 10)\n"
    "  BENCH_REPEAT=N  runs per size, the best kept (1..1000, default 3)\n"
    "  BENCH_POLICY=P  one policy only\n";

/* @s as a whole number in @lo..@hi (digits only), into *@out. Return: 0, -1 when it is not. */
static int whole(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = *s >= '0' && *s <= '9' ? strtol(s, &end, 10) : -1;
    if (v < 0 || *end || errno == ERANGE || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Every size up to @max_k of policy @name: one table row each. Return: 0, 1 (said on stderr). */
static int bench_policy(const char *name, const struct gs_trace_node *nodes, size_t nn,
                        const struct gs_trace_pod *pods, size_t np, long max_k, int reps)
{
    static const int sizes[] = {1, 2, 10, 20, 50, 100};
    struct gs_profile *p;
    struct gs_diag d;
    gs_diag_init(&d);
    if (gs_profile_for_policy(name, &p, &d)) {
        fprintf(stderr, "bench: %s\n", d.msg);
        return 1;
    }
    for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]) && sizes[z] <= max_k; z++) {
        int k = sizes[z];
        struct gs_trace_node *rep = replicate(nodes, nn, k);
        size_t npods = 0, states = 0;
        struct gs_sched_stats w = {0};
        uint64_t sum = 0;
        double t = rep ? time_run(rep, nn * (size_t)k, p, pods, np, reps, &npods, &states, &w, &sum)
                       : (fprintf(stderr, "bench: out of memory\n"), -1);
        free(rep);
        if (t < 0) {
            gs_profile_free(p);
            return 1;
        }
        printf("%-14s %6d %8zu %8zu %9.4f %8.0f %7.3f %7zu %11llu %12llu %12llu %016llx\n", name, k,
               nn * (size_t)k, npods, t, (double)npods / t, t * 1e6 / (double)npods, states,
               (unsigned long long)w.evaluations, (unsigned long long)w.change_visits,
               (unsigned long long)w.state_visits, (unsigned long long)sum);
    }
    gs_profile_free(p);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        fputs(usage, stdout);
        return 0;
    }
    long max_k = 10, reps = 3;
    const char *rep_env = getenv("BENCH_REPEAT"), *only = getenv("BENCH_POLICY");
    if (argc == 2 || argc > 4) {
        fprintf(stderr, "bench: %s\n%s",
                argc == 2 ? "NODES.csv without PODS.csv" : "too many arguments", usage);
        return 2;
    }
    if (argc == 4 && whole(argv[3], 0, 100, &max_k)) {
        fprintf(stderr, "bench: MAX_K \"%s\": not a whole number in 0..100\n", argv[3]);
        return 2;
    }
    if (rep_env && *rep_env && whole(rep_env, 1, 1000, &reps)) {
        fprintf(stderr, "bench: BENCH_REPEAT=%s: not a whole number in 1..1000\n", rep_env);
        return 2;
    }
    int known = !only || !*only;
    for (const char *const *name = gs_policy_names(); *name && !known; name++)
        known = strcmp(only, *name) == 0;
    if (!known) {
        fprintf(stderr, "bench: BENCH_POLICY=%s: no such policy\n", only);
        return 2;
    }
    const char *nodes_path =
        argc > 2 ? argv[1] : "data/alibaba-gpu-v2023/openb_node_list_gpu_node.csv";
    const char *pods_path =
        argc > 2 ? argv[2] : "data/alibaba-gpu-v2023/openb_pod_list_default.csv";
    struct gs_trace_node *nodes = NULL;
    struct gs_trace_pod *pods = NULL;
    size_t nn, np;
    struct gs_diag d;
    gs_diag_init(&d);
    int rc = 0;
    if (gs_trace_read_nodes(nodes_path, &nodes, &nn, &d) ||
        gs_trace_read_pods(pods_path, &pods, &np, &d)) {
        fprintf(stderr, "bench: %s\n", d.msg);
        rc = 1;
    } else {
        printf("replay of %s on %s (tune 1.3, seed 42); seconds: best of %ld;\n"
               "evaluations, changes read and state visits: the engine's work in that run;\n"
               "checksum: of the placements\n",
               pods_path, nodes_path, reps);
        printf("%-14s %6s %8s %8s %9s %8s %7s %7s %11s %12s %12s %16s\n", "policy", "copies",
               "nodes", "pods", "seconds", "pods/s", "us/pod", "states", "evaluations",
               "changes read", "state visits", "checksum");
    }
    for (const char *const *name = gs_policy_names(); *name && !rc; name++)
        if (!only || !*only || strcmp(only, *name) == 0)
            rc = bench_policy(*name, nodes, nn, pods, np, max_k, (int)reps);
    free(nodes);
    free(pods);
    return rc;
}
