/* Trace replay: sampling of arrivals, placement one by one, allocation curve. */
#include "gpusched/sim.h"

#include "gpusched/diag.h"
#include "gpusched/grow.h"
#include "gpusched/rng.h"
#include "gpusched/sched.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Drop random pods of @o (keeping the order of the rest) until @total fits @target. O(n). */
static size_t drop_until(struct gs_rng *rng, const struct gs_trace_pod *pods, uint32_t *o, size_t n,
                         int64_t *total, int64_t target)
{
    uint32_t *left = malloc(n * sizeof(*left)); /* positions not dropped yet */
    char *gone = calloc(n, 1);
    size_t m = n, k = 0;
    if (!left || !gone) {
        free(left);
        free(gone);
        return SIZE_MAX;
    }
    for (size_t i = 0; i < n; i++)
        left[i] = (uint32_t)i;
    while (*total > target && m > 0) {
        size_t j = gs_rng_below(rng, m);
        gone[left[j]] = 1;
        *total -= gs_pod_req_gpu_milli(&pods[o[left[j]]].req);
        left[j] = left[--m];
    }
    for (size_t i = 0; i < n; i++)
        if (!gone[i])
            o[k++] = o[i];
    free(left);
    free(gone);
    return k;
}

int gs_sim_sample(const struct gs_trace_pod *pods, size_t npods, int64_t capacity_milli,
                  int tune_permille, uint64_t seed, uint32_t **order, size_t *nout)
{
    if (tune_permille < 1 || tune_permille > 100000 || npods == 0 || npods > UINT32_MAX)
        return -EINVAL;
    struct gs_rng rng;
    gs_rng_seed(&rng, seed);
    size_t n = npods, cap = npods * 2 + 16;
    uint32_t *o = malloc(cap * sizeof(*o));
    if (!o)
        return -ENOMEM;
    int64_t total = 0, target = capacity_milli * tune_permille / 1000;
    for (size_t i = 0; i < npods; i++) {
        o[i] = (uint32_t)i;
        total += gs_pod_req_gpu_milli(&pods[i].req);
    }
    if (total == 0) { /* drawing would never reach the target */
        free(o);
        return -EDOM;
    }
    gs_rng_shuffle(&rng, o, n);
    if (total > target && (n = drop_until(&rng, pods, o, n, &total, target)) == SIZE_MAX) {
        free(o);
        return -ENOMEM;
    }
    for (;;) { /* draw with replacement until the next draw would pass the target */
        uint32_t k = (uint32_t)gs_rng_below(&rng, npods);
        int64_t want = gs_pod_req_gpu_milli(&pods[k].req);
        if (total + want > target)
            break;
        if (n == GS_SIM_ARRIVALS_MAX) {
            free(o);
            return -E2BIG;
        }
        if (n == cap) {
            cap = gs_grow_cap(cap, n + 1, 1);
            cap = !cap || cap > GS_SIM_ARRIVALS_MAX ? GS_SIM_ARRIVALS_MAX : cap;
            uint32_t *g = realloc(o, cap * sizeof(*o));
            if (!g) {
                free(o);
                return -ENOMEM;
            }
            o = g;
        }
        o[n++] = k;
        total += want;
    }
    if (n == 0) {
        free(o);
        return -ERANGE;
    }
    *order = o;
    *nout = n;
    return 0;
}

void gs_sim_run_free(struct gs_sim_run *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->ev[i].detail);
    free(r->ev);
    free(r);
}

static int set_workload(struct gs_sched *s, const struct gs_trace_pod *pods, size_t npods)
{
    struct gs_pod_req *w = malloc(npods * sizeof(*w));
    if (!w)
        return -ENOMEM;
    for (size_t i = 0; i < npods; i++)
        w[i] = pods[i].req;
    int rc = gs_sched_set_workload(s, w, npods);
    free(w);
    return rc;
}

int gs_sim_sched_new(const struct gs_trace_node *nodes, size_t nnodes,
                     const struct gs_profile *profile, const struct gs_trace_pod *pods,
                     size_t npods, uint64_t seed, struct gs_cluster **c, struct gs_sched **s,
                     struct gs_diag *d)
{
    struct gs_cluster *nc = NULL;
    struct gs_sched *ns = NULL;
    int rc = gs_trace_build_cluster(nodes, nnodes, &nc, d);
    if (!rc)
        rc = gs_sched_new(nc, profile, seed, &ns, d);
    if (!rc)
        rc = set_workload(ns, pods, npods);
    if (rc) {
        gs_sched_free(ns);
        gs_cluster_free(nc);
        return rc;
    }
    *c = nc;
    *s = ns;
    return 0;
}

static void finish(struct gs_sim_run *r, const struct gs_cluster *c, const struct gs_sched *s)
{
    struct gs_cluster_totals t;
    gs_cluster_totals(c, &t);
    r->cpu_milli = t.cpu_milli;
    r->cpu_used = t.cpu_milli_used;
    r->memory_mib = t.memory_mib;
    r->memory_used = t.memory_mib_used;
    r->gpus_idle = t.gpus_idle;
    r->gpus_partial = t.gpus_partial;
    r->frag_milli = gs_sched_frag_milli(s);
    r->states = gs_sched_state_count(s);
    gs_sched_stats(s, &r->work);
}

static int place_one(struct gs_sim_run *r, struct gs_sched *s, const struct gs_trace_pod *pod,
                     struct gs_sim_event *e, int64_t *used, struct gs_diag *d)
{
    struct gs_placement pl;
    struct gs_diag why;
    gs_diag_init(&why);
    int rc = gs_sched_place(s, &pod->req, &pl, &why);
    if (rc < 0)
        return gs_diag_error_code(d, rc, "pod %s: %s", pod->name, why.msg);
    if (rc == GS_UNSCHEDULABLE) {
        e->reason = gs_sched_last_reason(s);
        e->detail = strdup(why.msg);
        r->failed++;
        return e->detail ? 0 : -ENOMEM;
    }
    e->node = pl.node;
    e->gpu_mask = pl.gpu_mask;
    e->gpu_milli = pl.gpu_milli;
    *used += (int64_t)__builtin_popcount(pl.gpu_mask) * pl.gpu_milli;
    r->placed++;
    return 0;
}

static void compare_peer(struct gs_sim_run *r, const struct gs_sequence *seq, int peer_col,
                         size_t i, const struct gs_sim_event *e)
{
    if (!seq || peer_col < 0 || i >= seq->n)
        return;
    int32_t ref = seq->peer[i * (size_t)seq->npeers + (size_t)peer_col];
    r->peer_compared++;
    r->peer_ref_placed += ref >= 0;
    r->peer_same_outcome += (ref >= 0) == (e->node >= 0);
    r->peer_same_node += ref >= 0 && ref == e->node;
}

int gs_sim_replay(const struct gs_trace_node *nodes, size_t nnodes,
                  const struct gs_profile *profile, const struct gs_trace_pod *pods, size_t npods,
                  const uint32_t *order, size_t norder, uint64_t seed, const uint32_t *prio,
                  const struct gs_sequence *seq, int peer_col, gs_sim_progress progress,
                  void *progress_ud, struct gs_sim_run **out, struct gs_diag *d)
{
    struct gs_cluster *c = NULL;
    struct gs_sched *s = NULL;
    struct gs_sim_run *r = calloc(1, sizeof(*r));
    int rc = r ? 0 : -ENOMEM;
    if (!rc)
        rc = gs_sim_sched_new(nodes, nnodes, profile, pods, npods, seed, &c, &s, d);
    if (!rc && prio)
        rc = gs_sched_set_priority(s, prio);
    if (!rc && !(r->ev = calloc(norder ? norder : 1, sizeof(*r->ev))))
        rc = -ENOMEM;
    if (rc)
        goto out;
    snprintf(r->policy, sizeof(r->policy), "%s", gs_profile_name(profile));
    r->seed = seed;
    r->capacity_milli = gs_cluster_gpu_count(c) * GS_MILLI_GPU;
    int64_t arrived = 0, used = 0;
    for (size_t i = 0; i < norder && !rc; i++) {
        const struct gs_trace_pod *pod = &pods[order[i]];
        if (i + 1 < norder) /* the next arrival, at random in the pod list: fetched meanwhile */
            __builtin_prefetch(&pods[order[i + 1]].req);
        struct gs_sim_event *e = &r->ev[r->n++];
        e->pod = order[i];
        e->node = -1;
        arrived += gs_pod_req_gpu_milli(&pod->req);
        rc = place_one(r, s, pod, e, &used, d);
        e->arrived_milli = arrived;
        e->used_milli = used;
        compare_peer(r, seq, peer_col, i, e);
        if (progress && (i % 256 == 0 || i + 1 == norder))
            progress(progress_ud, i + 1, norder);
    }
    if (!rc)
        finish(r, c, s);
out:
    gs_sched_free(s);
    gs_cluster_free(c);
    if (rc) {
        gs_sim_run_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* Arrived @milli GPUs as a % of @r's capacity, rounded to the nearest point. */
static int64_t round_pct(const struct gs_sim_run *r, int64_t milli)
{
    return (milli * 200 + r->capacity_milli) / (2 * r->capacity_milli);
}

static int64_t mean_bp(const struct gs_sim_run *r, int pct, int slack)
{
    int64_t sum = 0, cnt = 0;
    for (size_t i = 0; i < r->n; i++) {
        int64_t a = round_pct(r, r->ev[i].arrived_milli);
        if (a - pct <= slack && pct - a <= slack) {
            sum += r->ev[i].used_milli;
            cnt++;
        }
    }
    if (!cnt)
        return -1;
    /* basis points of capacity, rounded */
    return (sum * 20000 / r->capacity_milli / cnt + 1) / 2;
}

int gs_sim_last_pct(const struct gs_sim_run *r)
{
    if (!r->n || r->capacity_milli <= 0)
        return -1;
    return (int)round_pct(r, r->ev[r->n - 1].arrived_milli);
}

int64_t gs_sim_alloc_at(const struct gs_sim_run *r, int pct)
{
    if (!r->n || r->capacity_milli <= 0)
        return -1;
    int64_t v = mean_bp(r, pct, 0);
    return v >= 0 ? v : mean_bp(r, pct, 1);
}
