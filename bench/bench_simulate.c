/*
 * Benchmark: trace replay speed per policy on the bundled Alibaba trace, and its growth on a
 * cluster replicated k times (same nodes k times over, tune 1.3 of the larger capacity), set
 * against k clusters of the original size replayed one after another and interleaved: exactly k
 * times the work of one, in the memory of one and in k times that.
 * Prints figures and a checksum of the placements (so a change to the engine can be checked to
 * place every pod where it did before); asserts nothing.
 * Usage: see usage[] below (or bench_simulate --help).
 */
#include "gpusched/diag.h"
#include "gpusched/sched.h"
#include "gpusched/sim.h"
#include "gpusched/trace.h"
#include "gpusched/cluster.h"

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
            snprintf(x->name, sizeof(x->name), "r%d-n%zu", r,
                     i); /* unique, however long the names */
        }
    return v;
}

/* One step of FNV-1a over the 8 bytes of @v. */
static uint64_t fnv(uint64_t h, uint64_t v)
{
    for (int b = 0; b < 64; b += 8)
        h = (h ^ ((v >> b) & 0xff)) * 0x100000001b3ULL;
    return h;
}

#define FNV_START 0xcbf29ce484222325ULL

/* @h carried over one pod's node (-1: none), cards and share. */
static uint64_t fnv_placement(uint64_t h, int32_t node, uint32_t gpu_mask, uint32_t gpu_milli)
{
    return fnv(fnv(fnv(h, (uint64_t)(uint32_t)node), gpu_mask), gpu_milli);
}

/* FNV-1a over every arrival's node, cards and share: equal for runs that place alike. */
static uint64_t checksum(const struct gs_sim_run *run)
{
    uint64_t h = FNV_START;
    for (size_t i = 0; i < run->n; i++) {
        const struct gs_sim_event *e = &run->ev[i];
        h = fnv_placement(h, e->node, e->gpu_mask, e->gpu_milli);
    }
    return h;
}

/* What one table row shows. */
struct figures {
    size_t nodes, pods, states;
    struct gs_sched_stats work;
    uint64_t sum;
    double secs;
};

static void print_row(const char *policy, const char *layout, const struct figures *f)
{
    printf("%-14s %-21s %8zu %8zu %9.4f %8.0f %7.3f %7zu %11llu %12llu %12llu %016llx\n", policy,
           layout, f->nodes, f->pods, f->secs, (double)f->pods / f->secs,
           f->secs * 1e6 / (double)f->pods, f->states, (unsigned long long)f->work.evaluations,
           (unsigned long long)f->work.change_visits, (unsigned long long)f->work.state_visits,
           (unsigned long long)f->sum);
}

static int64_t gpu_milli(const struct gs_trace_node *nodes, size_t nn)
{
    int64_t gpus = 0;
    for (size_t i = 0; i < nn; i++)
        gpus += nodes[i].gpus;
    return gpus * 1000;
}

/* Say why gs_sim_sample() failed with @rc for @seed. Return: -1. */
static int sample_error(int rc, uint64_t seed)
{
    if (rc == -EDOM)
        fprintf(stderr,
                "bench: no pod asks for a GPU, so arrivals never reach 1.3 x GPU capacity\n");
    else if (rc == -ERANGE)
        fprintf(stderr,
                "bench: with seed %llu not one pod fits within 1.3 x GPU capacity (every pod, or "
                "the one that ended the sampling, asks for more)\n",
                (unsigned long long)seed);
    else
        fprintf(stderr, "bench: sampling the arrivals: %s\n", strerror(-rc));
    return -1;
}

/* Best of @reps into @f->secs: one sampled replay on @nodes; the rest of @f from the last.
 * Return: 0, -1 (said on stderr). */
static int time_run(const struct gs_trace_node *nodes, size_t nn, const struct gs_profile *p,
                    const struct gs_trace_pod *pods, size_t np, int reps, struct figures *f)
{
    f->secs = 1e9;
    f->nodes = nn;
    for (int r = 0; r < reps; r++) {
        uint32_t *order;
        size_t n;
        struct gs_sim_run *run;
        struct gs_diag d;
        gs_diag_init(&d);
        int rc = gs_sim_sample(pods, np, gpu_milli(nodes, nn), 1300, 42, &order, &n);
        if (rc)
            return sample_error(rc, 42);
        double t0 = now_s();
        rc = gs_sim_replay(nodes, nn, p, pods, np, order, n, 42, NULL, NULL, -1, NULL, NULL, &run,
                           &d);
        double t = now_s() - t0;
        free(order);
        if (rc) {
            fprintf(stderr, "bench: %s\n", d.msg);
            return -1;
        }
        f->secs = t < f->secs ? t : f->secs;
        f->pods = run->n;
        f->states = run->states;
        f->work = run->work;
        f->sum = checksum(run);
        gs_sim_run_free(run);
    }
    return 0;
}

/*
 * The control for the growth: @k clusters of the original size, each with its own arrivals and
 * tie-break (seed 42 + j), sampled as time_run() samples; so exactly k times the work of a run on
 * one, in k times the memory.
 */
struct apart {
    int k;
    uint32_t **order;
    size_t *n;
    struct gs_cluster **c;
    struct gs_sched **s;
    uint64_t *sum;
};

static void apart_free(struct apart *a)
{
    for (int j = 0; j < a->k; j++) {
        free(a->order ? a->order[j] : NULL);
        gs_sched_free(a->s ? a->s[j] : NULL);
        gs_cluster_free(a->c ? a->c[j] : NULL);
    }
    free(a->order);
    free(a->n);
    free(a->c);
    free(a->s);
    free(a->sum);
}

/* Sample the arrivals of the @k clusters of @a. Return: 0, -1 (said on stderr; @a is then for
 * apart_free()). */
static int apart_new(struct apart *a, int k, const struct gs_trace_node *nodes, size_t nn,
                     const struct gs_trace_pod *pods, size_t np)
{
    *a = (struct apart){.k = k};
    a->order = calloc((size_t)k, sizeof(*a->order));
    a->n = calloc((size_t)k, sizeof(*a->n));
    a->c = calloc((size_t)k, sizeof(*a->c));
    a->s = calloc((size_t)k, sizeof(*a->s));
    a->sum = calloc((size_t)k, sizeof(*a->sum));
    if (!a->order || !a->n || !a->c || !a->s || !a->sum) {
        fprintf(stderr, "bench: out of memory\n");
        return -1;
    }
    for (int j = 0; j < k; j++) {
        int rc = gs_sim_sample(pods, np, gpu_milli(nodes, nn), 1300, 42 + (uint64_t)j, &a->order[j],
                               &a->n[j]);
        if (rc)
            return sample_error(rc, 42 + (uint64_t)j);
        a->sum[j] = FNV_START;
    }
    return 0;
}

/* Place arrival @i of cluster @j. Return: 0, -1 (said on stderr). */
static int apart_place(struct apart *a, int j, size_t i, const struct gs_trace_pod *pods)
{
    struct gs_placement pl;
    struct gs_diag why;
    gs_diag_init(&why);
    int rc = gs_sched_place(a->s[j], &pods[a->order[j][i]].req, &pl, &why);
    if (rc < 0) {
        fprintf(stderr, "bench: %s\n", why.msg);
        return -1;
    }
    if (rc == GS_UNSCHEDULABLE)
        pl = (struct gs_placement){.node = -1};
    a->sum[j] = fnv_placement(a->sum[j], pl.node, pl.gpu_mask, pl.gpu_milli);
    return 0;
}

/*
 * Replay the clusters of @a, one after another (@interleave 0) or one arrival to each in rotation:
 * each built before its first arrival and its fragmentation read after its last, as
 * gs_sim_replay() does. Return: seconds, or -1 (said on stderr).
 */
static double apart_replay(struct apart *a, const struct gs_trace_node *nodes, size_t nn,
                           const struct gs_profile *p, const struct gs_trace_pod *pods, size_t np,
                           int interleave)
{
    size_t most = 0;
    int64_t frag = 0;
    for (int j = 0; j < a->k; j++)
        most = a->n[j] > most ? a->n[j] : most;
    double t0 = now_s();
    for (int j = 0; j < a->k; j++) {
        struct gs_diag d;
        gs_diag_init(&d);
        int rc = gs_sim_sched_new(nodes, nn, p, pods, np, 42 + (uint64_t)j, &a->c[j], &a->s[j], &d);
        if (rc) {
            fprintf(stderr, "bench: %s\n", d.msg[0] ? d.msg : strerror(-rc));
            return -1;
        }
        for (size_t i = 0; i < a->n[j] && !interleave; i++)
            if (apart_place(a, j, i, pods))
                return -1;
    }
    for (size_t i = 0; i < most && interleave; i++)
        for (int j = 0; j < a->k; j++)
            if (i < a->n[j] && apart_place(a, j, i, pods))
                return -1;
    for (int j = 0; j < a->k; j++)
        frag += gs_sched_frag_milli(a->s[j]);
    double t = now_s() - t0;
    return frag >= 0 ? t : -1;
}

/* Best of @reps into @f: @k clusters apart (struct apart), replayed as apart_replay() does.
 * Return: 0, -1 (said on stderr). */
static int time_apart(const struct gs_trace_node *nodes, size_t nn, const struct gs_profile *p,
                      const struct gs_trace_pod *pods, size_t np, int k, int interleave, int reps,
                      struct figures *f)
{
    int rc = 0;
    f->secs = 1e9;
    for (int r = 0; r < reps && !rc; r++) {
        struct apart a;
        double t = -1;
        if (!apart_new(&a, k, nodes, nn, pods, np))
            t = apart_replay(&a, nodes, nn, p, pods, np, interleave);
        rc = t < 0 ? -1 : 0;
        *f = (struct figures){
            .nodes = nn * (size_t)k, .sum = FNV_START, .secs = t >= 0 && t < f->secs ? t : f->secs};
        for (int j = 0; j < k && !rc; j++) {
            struct gs_sched_stats sj;
            gs_sched_stats(a.s[j], &sj);
            f->pods += a.n[j];
            f->states += gs_sched_state_count(a.s[j]);
            f->work.evaluations += sj.evaluations;
            f->work.change_visits += sj.change_visits;
            f->work.state_visits += sj.state_visits;
            f->sum = fnv(f->sum, a.sum[j]);
        }
        apart_free(&a);
    }
    return rc;
}

static const char usage[] =
    "usage: bench_simulate [NODES.csv PODS.csv [MAX_K]]\n"
    "  replays PODS on NODES (default: the bundled Alibaba trace) with every policy, the cluster\n"
    "  replicated k = 1, 2, 10, 20, 50, 100 times up to MAX_K (0..100, default 10; 0 loads the\n"
    "  files and replays nothing); for k > 1 also k clusters of NODES (seeds 42..42+k-1)\n"
    "  replayed one after another (sequential) and one arrival to each in rotation (interleaved)\n"
    "  BENCH_REPEAT=N  runs per size, the best kept (1..1000, default 3)\n"
    "  BENCH_POLICY=P  one policy only (unset or empty: every policy)\n"
    "exit status: 0; 2 for bad arguments or files; 1 when a replay fails\n";

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

/*
 * Every size up to @max_k of policy @name: one row each for the cluster replicated k times and,
 * for k > 1, two for k clusters apart (struct apart): sequential, then interleaved.
 * Return: 0, 1 (said on stderr).
 */
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
    int rc = 0;
    for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]) && sizes[z] <= max_k && !rc; z++) {
        int k = sizes[z];
        char label[32];
        struct figures f = {0};
        struct gs_trace_node *rep = replicate(nodes, nn, k);
        rc = rep ? time_run(rep, nn * (size_t)k, p, pods, np, reps, &f)
                 : (fprintf(stderr, "bench: out of memory\n"), -1);
        free(rep);
        snprintf(label, sizeof(label), "1 of %dx", k);
        if (!rc)
            print_row(name, label, &f);
        for (int interleave = 0; interleave < 2 && k > 1 && !rc; interleave++) {
            rc = time_apart(nodes, nn, p, pods, np, k, interleave, reps, &f);
            snprintf(label, sizeof(label), "%d of 1x %s", k,
                     interleave ? "interleaved" : "sequential");
            if (!rc)
                print_row(name, label, &f);
        }
    }
    gs_profile_free(p);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        fputs(usage, stdout);
        return 0;
    }
    long max_k = 10, reps = 3;
    const char *rep_env = getenv("BENCH_REPEAT"), *only = getenv("BENCH_POLICY");
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-') {
            fprintf(stderr, "bench: unknown option %s\n%s", argv[i], usage);
            return 2;
        }
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
        fprintf(stderr, "bench: BENCH_POLICY=%s: no such policy; one of:", only);
        for (const char *const *name = gs_policy_names(); *name; name++)
            fprintf(stderr, " %s", *name);
        fputc('\n', stderr);
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
        rc = 2;
    } else {
        printf("replay of %s on %s (tune 1.3, seed 42); seconds: best of %ld;\n"
               "evaluations, changes read and state visits: the engine's work in that run;\n"
               "checksum: of the placements\n",
               pods_path, nodes_path, reps);
        printf("%-14s %-21s %8s %8s %9s %8s %7s %7s %11s %12s %12s %16s\n", "policy", "clusters",
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
