/* The outcome of a multi-tenant run: per pod, per tenant, per queue, per workload kind. */
#include "tenancy_impl.h"

#include "gpusched/fairshare.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile @pct of @v[0..n) (sorted here). */
static void percentiles(int64_t *v, size_t n, int64_t *p50, int64_t *p95, int64_t *p99,
                        int64_t *max)
{
    qsort(v, n, sizeof(*v), cmp_i64);
    int64_t *out[3] = {p50, p95, p99};
    const int pct[3] = {50, 95, 99};
    for (int k = 0; k < 3; k++)
        *out[k] = n ? v[(n * (size_t)pct[k] + 99) / 100 - 1] : 0;
    *max = n ? v[n - 1] : 0;
}

/* How long a pod waited for its first start; one never started waited until the end. */
static int64_t wait_of(const struct gs_tsim *t, const struct rpod *p)
{
    return (p->first_start >= 0 ? p->first_start : t->now) - p->submit;
}

static int waits(struct gs_tsim *t, int by_kind, int32_t who, int64_t *v, struct gs_tsim_waits *w)
{
    size_t n = 0;
    for (size_t i = 0; i < t->npods; i++) {
        const struct rpod *p = &t->pods[i];
        if (!p->arrived || p->state == GS_POD_REJECTED || (by_kind ? p->kind : p->tenant) != who)
            continue;
        v[n++] = wait_of(t, p);
    }
    percentiles(v, n, &w->p50_us, &w->p95_us, &w->p99_us, &w->max_us);
    return 0;
}

static void pod_out(struct gs_tsim *t, size_t i)
{
    const struct rpod *p = &t->pods[i];
    struct gs_tsim_pod *o = &t->out[i];
    const struct gs_scenario *s = t->s;
    o->ns = p->sp->ns;
    o->name = p->sp->name;
    o->tenant =
        (size_t)p->tenant < s->policy.ntenants ? s->policy.tenants[p->tenant].name : p->sp->ns;
    o->queue = (size_t)p->queue < s->policy.nqueues ? s->policy.queues[p->queue].name : "default";
    o->workload = p->sp->workload;
    o->state = (enum gs_pod_state)p->state;
    if (p->state == GS_POD_PENDING && p->preemptions > 0)
        o->state = GS_POD_PREEMPTED;
    o->node = p->state == GS_POD_RUNNING || p->state == GS_POD_COMPLETED ? p->node : -1;
    o->gpu_mask = o->node >= 0 ? p->mask : 0;
    o->whole = p->fit.whole;
    o->mig = o->node >= 0 && p->fit.mig ? p->fit.mig : NULL;
    o->mig_start = o->mig ? p->fit.mig_start : -1;
    o->share_milli = p->fit.whole ? 1000 : p->fit.compute;
    o->priority = p->prio;
    o->submit_us = p->submit;
    o->start_us = p->first_start;
    o->end_us = p->end;
    o->preemptions = p->preemptions;
    o->reason = p->state == GS_POD_RUNNING || p->state == GS_POD_COMPLETED || !p->reason[0]
                    ? NULL
                    : p->reason;
    if (!p->arrived && !o->reason)
        o->reason = "not submitted before the end of the run";
}

static void summary(struct gs_tsim *t)
{
    struct gs_tsim_summary *s = &t->sum;
    s->way = t->way;
    s->horizon_us = t->now;
    s->gpus = gs_fleet_card_count(t->fleet);
    gs_i128 cap = (gs_i128)s->gpus * 1000 * (t->now > 0 ? t->now : 1);
    s->allocation_milli = cap ? (int32_t)(t->alloc_int * 1000 / cap) : 0;
    s->utilization_milli = cap ? (int32_t)(t->busy_int * 1000 / cap) : 0;
    s->pods = (int64_t)t->npods;
    for (size_t i = 0; i < t->npods; i++) {
        const struct gs_tsim_pod *o = &t->out[i];
        s->completed += o->state == GS_POD_COMPLETED;
        s->running += o->state == GS_POD_RUNNING;
        s->pending += o->state == GS_POD_PENDING;
        s->rejected += o->state == GS_POD_REJECTED;
        s->preempted_pods += t->pods[i].preemptions > 0;
    }
}

static void tenants(struct gs_tsim *t, int64_t *scratch, int64_t *share)
{
    const struct gs_scenario *s = t->s;
    for (size_t i = 0; i <= s->policy.ntenants; i++) {
        struct gs_tsim_tenant *o = &t->tout[i];
        o->name = i < s->policy.ntenants ? s->policy.tenants[i].name : "(no tenant)";
        o->gpu_milli_s = (int64_t)(t->tenant_alloc_int[i] / 1000000);
        o->busy_milli_s = (int64_t)(t->tenant_busy_int[i] / 1000000);
        o->ts_asked_milli_s = (int64_t)(t->ts_asked[i] / 1000000);
        o->ts_entitled_milli_s = (int64_t)(t->ts_entitled[i] / 1000000);
        o->ts_received_milli_s = (int64_t)(t->ts_received[i] / 1000000);
        for (int k = 0; i < s->policy.ntenants && k < s->policy.tenants[i].nquotas; k++)
            o->entitlement_milli += s->policy.tenants[i].quotas[k].total_milli;
        waits(t, 0, (int32_t)i, scratch, &o->wait);
        /* Allocation per unit of entitlement, scaled so integer division keeps precision. */
        share[i] = o->gpu_milli_s * 1000 / (o->entitlement_milli ? o->entitlement_milli : 1000);
    }
    for (size_t i = 0; i < t->npods; i++) {
        const struct rpod *p = &t->pods[i];
        t->tout[p->tenant].pods++;
        t->tout[p->tenant].completed += p->state == GS_POD_COMPLETED;
        t->tout[p->tenant].preemptions += p->preemptions;
    }
    /* Jain over the tenants that asked for GPUs at all. */
    size_t n = 0;
    for (size_t i = 0; i <= s->policy.ntenants; i++)
        if (t->tout[i].pods > 0)
            share[n++] = share[i];
    t->sum.jain_milli = gs_fairshare_jain(share, n);
}

int gs__tsim_finish(struct gs_tsim *t)
{
    gs__tsim_settle_reasons(t);
    size_t nt = t->s->policy.ntenants + 1;
    int64_t *scratch = malloc((t->npods + 1) * sizeof(*scratch));
    int64_t *share = malloc(nt * sizeof(*share));
    t->out = calloc(t->npods + 1, sizeof(*t->out));
    t->tout = calloc(nt, sizeof(*t->tout));
    t->qout = calloc(t->nqueues, sizeof(*t->qout));
    t->kout = calloc(t->nkinds + 1, sizeof(*t->kout));
    if (!scratch || !share || !t->out || !t->tout || !t->qout || !t->kout) {
        free(scratch);
        free(share);
        return -ENOMEM;
    }
    for (size_t i = 0; i < t->npods; i++)
        pod_out(t, i);
    for (size_t i = 0; i < t->nuses; i++)
        if (t->uses[i].end_us < 0)
            t->uses[i].end_us = t->now;
    summary(t);
    t->sum.timeslice = t->ts_used;
    t->sum.modes = t->s->sim.modes_defined;
    t->sum.conversions = gs_fleet_conversions(t->fleet);
    tenants(t, scratch, share);
    for (size_t q = 0; q < t->nqueues; q++) {
        t->qout[q].name = q < t->s->policy.nqueues ? t->s->policy.queues[q].name : "default";
        t->qout[q].weight = t->q_weight[q];
        t->qout[q].deserved_milli = t->q_deserved[q];
        t->qout[q].gpu_milli_s = (int64_t)(t->q_alloc_int[q] / 1000000);
    }
    for (size_t k = 0; k < t->nkinds; k++) {
        struct gs_tsim_kind *o = &t->kout[k];
        o->name = t->kind_names[k];
        waits(t, 1, (int32_t)k, scratch, &o->wait);
    }
    for (size_t i = 0; i < t->npods; i++) {
        t->kout[t->pods[i].kind].pods++;
        t->kout[t->pods[i].kind].started += t->pods[i].first_start >= 0;
    }
    free(scratch);
    free(share);
    return 0;
}
