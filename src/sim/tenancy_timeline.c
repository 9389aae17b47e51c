/*
 * A run over time, for reports that draw it (gpusched report): each tenant's allocated and busy
 * share and each queue's deserved share, allocation and demand, sampled on a grid of simulated
 * time, and every eviction with its time and cause.
 *
 * Samples are taken between instants, never inside a scheduling pass: the value at a grid point b
 * is the state the pass before b left. A tenant's figure for a step [b, b + step) is its mean over
 * the step, from the same integrals the summary's GPU-hours come from, so the steps of a series
 * add up to the tenant's gpu_hours. The grid starts at 60 s; a run longer than GS_TL_SAMPLES_MAX
 * grid points halves it (every other point is kept), so memory stays bounded; the JSON gives the
 * grid coarsened to at most GS_TL_OUT_MAX steps of a round length (5 min, 15 min, 1 h, ...).
 */
#include "tsim_impl.h"

#include "gpusched/grow.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define GS_TL_BASE_US     (60LL * 1000000)
#define GS_TL_SAMPLES_MAX 8192
#define GS_TL_OUT_MAX     300

/* One grid point: per tenant the allocation and busy integrals (milli-GPU x s), per queue the
 * deserved share, allocation and demand (milli-GPU). */
struct gs__timeline {
    int64_t step_us;
    size_t n, cap, width; /* points taken, allocated, int64 values per point */
    int64_t *v;           /* n x width */
    int64_t *end;         /* the integrals at the end of the run (width values, queues unused) */
    struct eviction {
        int64_t t_us;
        int32_t pod, by;
        int reclaim;
    } * ev;
    size_t nev, capev;
};

static size_t width_of(const struct gs_tsim *t)
{
    return 2 * t->ntenants + 3 * t->nqueues;
}

int gs__tsim_timeline_new(struct gs_tsim *t)
{
    struct gs__timeline *tl = calloc(1, sizeof(*tl));
    if (!tl || !(tl->end = calloc(width_of(t), sizeof(*tl->end)))) {
        free(tl);
        return -ENOMEM;
    }
    tl->step_us = GS_TL_BASE_US;
    tl->width = width_of(t);
    t->tl = tl;
    return 0;
}

void gs__tsim_timeline_free(struct gs_tsim *t)
{
    if (!t->tl)
        return;
    free(t->tl->v);
    free(t->tl->end);
    free(t->tl->ev);
    free(t->tl);
    t->tl = NULL;
}

/* The integrals of every tenant as they stand at @at (not before the scheduler's clock), into
 * @out: the work ledger's (gs_tenancy_usage_at()). */
static void integrals_at(const struct gs_tsim *t, int64_t at, int64_t *out)
{
    for (size_t i = 0; i < t->ntenants; i++) {
        struct gs_tenancy_usage u = {0};
        gs_tenancy_usage_at(t->sched, GS_USAGE_TENANT, i, at, &u);
        out[2 * i] = u.alloc_milli_s;
        out[2 * i + 1] = u.busy_milli_s;
    }
}

/* Halve the grid: keep the even points. */
static void coarsen(struct gs__timeline *tl)
{
    size_t k = 0;
    for (size_t i = 0; i < tl->n; i += 2, k++)
        memmove(tl->v + k * tl->width, tl->v + i * tl->width, tl->width * sizeof(*tl->v));
    tl->n = k;
    tl->step_us *= 2;
}

int gs__tsim_timeline_sample(struct gs_tsim *t, int64_t upto)
{
    struct gs__timeline *tl = t->tl;
    for (int64_t b = (int64_t)tl->n * tl->step_us; b < upto; b = (int64_t)tl->n * tl->step_us) {
        if (tl->n == GS_TL_SAMPLES_MAX) {
            coarsen(tl);
            continue;
        }
        int64_t *v = gs_grow(tl->v, &tl->cap, (tl->n + 1) * tl->width, sizeof(*v), 1024);
        if (!v)
            return -ENOMEM;
        tl->v = v;
        v += tl->n++ * tl->width;
        integrals_at(t, b, v);
        v += 2 * t->ntenants;
        for (size_t q = 0; q < t->nqueues; q++) {
            v[3 * q] = gs_tenancy_queue_deserved(t->sched, q);
            v[3 * q + 1] = gs_tenancy_queue_milli(t->sched, q);
            v[3 * q + 2] = gs_tenancy_queue_demand(t->sched, q);
        }
    }
    return 0;
}

void gs__tsim_timeline_end(struct gs_tsim *t)
{
    integrals_at(t, t->now, t->tl->end);
}

int gs__tsim_timeline_evicted(struct gs_tsim *t, int32_t pod, int32_t by, int reclaim)
{
    struct gs__timeline *tl = t->tl;
    struct eviction *e = gs_grow(tl->ev, &tl->capev, tl->nev + 1, sizeof(*e), 64);
    if (!e)
        return -ENOMEM;
    tl->ev = e;
    tl->ev[tl->nev++] = (struct eviction){t->now, pod, by, reclaim};
    return 0;
}

/* The output step: the shortest round length, a multiple of the grid, that covers @end_us in at
 * most GS_TL_OUT_MAX steps; doublings of the grid past the last of them. */
static int64_t out_step(const struct gs__timeline *tl, int64_t end_us)
{
    static const int64_t round_s[] = {60,   120,   300,   600,   900,   1800,  3600,
                                      7200, 10800, 21600, 43200, 86400, 604800};
    for (size_t i = 0; i < sizeof(round_s) / sizeof(round_s[0]); i++) {
        int64_t s = round_s[i] * 1000000;
        if (s % tl->step_us == 0 && (end_us + s - 1) / s <= GS_TL_OUT_MAX)
            return s;
    }
    int64_t s = tl->step_us;
    while ((end_us + s - 1) / s > GS_TL_OUT_MAX)
        s *= 2;
    return s;
}

/* The value @k (an integral) at output point @i of @n, or the end's past the last point. */
static int64_t point(const struct gs__timeline *tl, size_t every, size_t i, size_t n, size_t k)
{
    return i < n ? tl->v[i * every * tl->width + k] : tl->end[k];
}

static void push(json_t *a, int64_t v)
{
    json_array_append_new(a, json_integer((json_int_t)v));
}

/* Means over each step of integral @k (milli-GPU x s) in milli-GPU, rounded half up; the last
 * step ends with the run. */
static json_t *means(const struct gs__timeline *tl, size_t every, size_t n, int64_t step_us,
                     int64_t end_us, size_t k)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        int64_t from = (int64_t)i * step_us, to = i + 1 < n ? from + step_us : end_us;
        int64_t len = (to - from) / 1000000;
        int64_t d = point(tl, every, i + 1, n, k) - point(tl, every, i, n, k);
        push(a, len > 0 ? (2 * d + len) / (2 * len) : 0);
    }
    return a;
}

static json_t *samples(const struct gs__timeline *tl, size_t every, size_t n, size_t k)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        push(a, tl->v[i * every * tl->width + k]);
    return a;
}

static json_t *evictions_json(const struct gs_tsim *t)
{
    const struct gs__timeline *tl = t->tl;
    json_t *a = json_array();
    char pod[GS_SCN_POD_KEY_MAX], by[GS_SCN_POD_KEY_MAX];
    for (size_t i = 0; a && i < tl->nev; i++) {
        const struct gs_tsim_pod *p = &t->out[tl->ev[i].pod];
        const struct gs_tsim_pod *b = tl->ev[i].by >= 0 ? &t->out[tl->ev[i].by] : NULL;
        snprintf(pod, sizeof(pod), "%s/%s", p->ns, p->name);
        snprintf(by, sizeof(by), "%s/%s", b ? b->ns : "", b ? b->name : "");
        json_array_append_new(a, json_pack("{s:I,s:s,s:s,s:s,s:s,s:s?}", "t_s",
                                           (json_int_t)(tl->ev[i].t_us / 1000000), "pod", pod,
                                           "tenant", p->tenant, "queue", p->queue, "kind",
                                           !b                  ? "node"
                                           : tl->ev[i].reclaim ? "reclaim"
                                                               : "preemption",
                                           "by", b ? by : NULL));
    }
    return a;
}

json_t *gs__tsim_timeline_json(const struct gs_tsim *t)
{
    const struct gs__timeline *tl = t->tl;
    int64_t end_us = t->now, step_us = out_step(tl, end_us);
    size_t every = (size_t)(step_us / tl->step_us), n = (size_t)((end_us + step_us - 1) / step_us);
    size_t nt = t->ntenants;
    json_t *ten = json_array(), *qs = json_array();
    for (size_t i = 0; i < nt; i++)
        if (t->tout[i].pods)
            json_array_append_new(
                ten, json_pack("{s:s,s:o,s:o}", "name", t->tout[i].name, "allocated_milli",
                               means(tl, every, n, step_us, end_us, 2 * i), "busy_milli",
                               means(tl, every, n, step_us, end_us, 2 * i + 1)));
    for (size_t q = 0; q < t->nqueues; q++)
        if (t->qout[q].gpu_milli_s || q < t->s->policy.nqueues)
            json_array_append_new(
                qs, json_pack("{s:s,s:i,s:o,s:o,s:o}", "name", t->qout[q].name, "weight",
                              t->qout[q].weight, "deserved_milli",
                              samples(tl, every, n, 2 * nt + 3 * q), "allocated_milli",
                              samples(tl, every, n, 2 * nt + 3 * q + 1), "demand_milli",
                              samples(tl, every, n, 2 * nt + 3 * q + 2)));
    return json_pack("{s:I,s:I,s:I,s:o,s:o,s:o}", "step_s", (json_int_t)(step_us / 1000000),
                     "steps", (json_int_t)n, "capacity_milli", (json_int_t)(t->sum.gpus * 1000),
                     "tenants", ten, "queues", qs, "evictions", evictions_json(t));
}
