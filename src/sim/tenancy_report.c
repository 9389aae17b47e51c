/* The outcome of a multi-tenant run: per pod, per tenant, per queue, per workload kind. */
#include "tsim_impl.h"

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
static int64_t wait_of(const struct gs_tsim *t, const struct gs_tsim_pod *o)
{
    return (o->start_us >= 0 ? o->start_us : t->now) - o->submit_us;
}

static int waits(struct gs_tsim *t, const int32_t *tenant, int by_kind, int32_t who, int64_t *v,
                 struct gs_tsim_waits *w)
{
    size_t n = 0;
    for (size_t i = 0; i < t->npods; i++) {
        const struct gs_tsim_pod *o = &t->out[i];
        int arrived = t->s->pods[i].arrival_us <= t->now;
        if (!arrived || o->state == GS_POD_REJECTED ||
            (by_kind ? t->pods[i].kind : tenant[i]) != who)
            continue;
        v[n++] = wait_of(t, o);
    }
    percentiles(v, n, &w->p50_us, &w->p95_us, &w->p99_us, &w->max_us);
    return 0;
}

/*
 * The run's mix (docs/utilisation.md, "the ceiling"): what pod @sp asks of the cards between its
 * arrival and the end of the run (its duration, else all of it) — its cards, whole or its share
 * of each — and the work it would do there. Their ratio over all pods is the busy share the
 * fleet would have were every card held all the time by the run's pods in those proportions.
 */
static void mix(struct gs_tsim *t, const struct gs_pod_spec *sp, const struct gs_tenancy_pod *v)
{
    if (v->state == GS_POD_REJECTED || sp->arrival_us >= t->now)
        return;
    int64_t span = t->now - sp->arrival_us;
    if (sp->duration_us != GS_UNSET && sp->duration_us < span)
        span = sp->duration_us;
    gs_i128 cards = (gs_i128)span * v->ncards;
    t->mix_held += cards * (v->whole ? 1000 : v->share_milli);
    t->mix_work += cards * v->rate_milli;
}

/* Pod @i as the scheduler has it, or as admission would take it when it never got that far. */
static int pod_out(struct gs_tsim *t, size_t i, int32_t *tenant)
{
    struct spod *sp = &t->pods[i];
    const struct gs_pod_spec *spec = &t->s->pods[i];
    const struct gs_policy *pol = &t->s->policy;
    struct gs_tenancy_pod v;
    struct gs_tsim_pod *o = &t->out[i];
    char why[256];
    if (sp->id >= 0) {
        gs_tenancy_pod(t->sched, sp->id, &v);
    } else if (gs_tenancy_admit(t->sched, spec, &v, why, sizeof(why)) && !sp->rejected &&
               !(sp->rejected = strdup(why))) {
        return -ENOMEM;
    }
    *tenant = v.tenant;
    mix(t, spec, &v);
    o->ns = spec->ns;
    o->name = spec->name;
    o->tenant = (size_t)v.tenant < pol->ntenants ? pol->tenants[v.tenant].name : spec->ns;
    o->queue = (size_t)v.queue < pol->nqueues ? pol->queues[v.queue].name : "default";
    o->workload = spec->workload;
    o->state = v.state;
    if (v.state == GS_POD_PENDING && v.preemptions > 0)
        o->state = GS_POD_PREEMPTED;
    o->node = v.node;
    o->gpu_mask = v.gpu_mask;
    o->whole = v.whole;
    o->mig = o->node >= 0 ? v.mig : NULL;
    o->mig_start = o->mig ? v.mig_start : -1;
    o->share_milli = v.share_milli;
    o->priority = v.priority;
    o->submit_us = spec->arrival_us;
    o->start_us = v.first_start_us;
    o->end_us = sp->end;
    o->preemptions = v.preemptions;
    o->reason = sp->rejected ? sp->rejected : v.reason[0] ? v.reason : NULL;
    if (sp->id < 0 && !sp->rejected)
        o->reason = "not submitted before the end of the run";
    return 0;
}

/* Ledger @of, index @i, of the scheduler, as the reports give it. */
static struct gs_tsim_usage usage_of(const struct gs_tsim *t, enum gs_usage_of of, size_t i)
{
    struct gs_tenancy_usage u = {0};
    gs_tenancy_usage(t->sched, of, i, &u);
    return (struct gs_tsim_usage){u.alloc_milli_s, u.busy_milli_s, u.lost_milli_s,
                                  u.busy_milli_s - u.lost_milli_s};
}

int32_t gs__tsim_permille(int64_t milli_s, int64_t gpus, int64_t horizon_us)
{
    gs_i128 cap = (gs_i128)gpus * 1000 * (horizon_us > 0 ? horizon_us : 1);
    return cap ? (int32_t)((gs_i128)milli_s * 1000000000 / cap) : 0;
}

static void summary(struct gs_tsim *t)
{
    struct gs_tsim_summary *s = &t->sum;
    s->way = t->way;
    s->horizon_us = t->now;
    s->gpus = gs_fleet_card_count(t->fleet);
    s->usage = usage_of(t, GS_USAGE_FLEET, 0);
    s->allocation_milli = gs__tsim_permille(s->usage.gpu_milli_s, s->gpus, t->now);
    s->utilization_milli = gs__tsim_permille(s->usage.busy_milli_s, s->gpus, t->now);
    s->goodput_milli = gs__tsim_permille(s->usage.goodput_milli_s, s->gpus, t->now);
    s->ceiling_milli = t->mix_held ? (int32_t)(t->mix_work * 1000 / t->mix_held) : 0;
    s->pods = (int64_t)t->npods;
    for (size_t i = 0; i < t->npods; i++) {
        const struct gs_tsim_pod *o = &t->out[i];
        s->completed += o->state == GS_POD_COMPLETED;
        s->running += o->state == GS_POD_RUNNING;
        s->pending += o->state == GS_POD_PENDING;
        s->rejected += o->state == GS_POD_REJECTED;
        s->preempted_pods += o->preemptions > 0;
    }
}

static void tenants(struct gs_tsim *t, const int32_t *tenant, int64_t *scratch, int64_t *share)
{
    const struct gs_policy *pol = &t->s->policy;
    for (size_t i = 0; i <= pol->ntenants; i++) {
        struct gs_tsim_tenant *o = &t->tout[i];
        o->name = i < pol->ntenants ? pol->tenants[i].name : "(no tenant)";
        o->usage = usage_of(t, GS_USAGE_TENANT, i);
        struct gs_tenancy_usage u = {0};
        gs_tenancy_usage(t->sched, GS_USAGE_TENANT, i, &u);
        o->short_milli_s = u.short_milli_s;
        o->gpu_milli_s = o->usage.gpu_milli_s;
        o->busy_milli_s = o->usage.busy_milli_s;
        gs_tenancy_slice_totals(t->sched, i, &o->ts_asked_milli_s, &o->ts_entitled_milli_s,
                                &o->ts_received_milli_s);
        for (int k = 0; i < pol->ntenants && k < pol->tenants[i].nquotas; k++)
            o->entitlement_milli += pol->tenants[i].quotas[k].total_milli;
        waits(t, tenant, 0, (int32_t)i, scratch, &o->wait);
        /* Allocation per unit of entitlement, scaled so integer division keeps precision. */
        share[i] = o->gpu_milli_s * 1000 / (o->entitlement_milli ? o->entitlement_milli : 1000);
    }
    for (size_t i = 0; i < t->npods; i++) {
        const struct gs_tsim_pod *o = &t->out[i];
        t->tout[tenant[i]].pods++;
        t->tout[tenant[i]].completed += o->state == GS_POD_COMPLETED;
        t->tout[tenant[i]].preemptions += o->preemptions;
    }
    /* Jain over the tenants that asked for GPUs at all. */
    size_t n = 0;
    for (size_t i = 0; i <= pol->ntenants; i++)
        if (t->tout[i].pods > 0)
            share[n++] = share[i];
    t->sum.jain_milli = gs_fairshare_jain(share, n);
}

/* The fleet's GPU models, in catalog order, with their cards and ledgers. */
static void models(struct gs_tsim *t)
{
    int64_t cards[GS_MODEL_MAX] = {0};
    for (size_t n = 0; n < gs_fleet_node_count(t->fleet); n++)
        cards[gs_fleet_node_model(t->fleet, n)] += gs_fleet_node_gpus(t->fleet, n);
    for (int m = 0; m < GS_MODEL_MAX; m++) {
        const struct gs_gpu_model *gm = gs_catalog_at(m);
        if (!cards[m] || !gm)
            continue;
        t->mout[t->nmodels++] =
            (struct gs_tsim_model){gm->name, cards[m], usage_of(t, GS_USAGE_MODEL, (size_t)m)};
    }
}

int gs__tsim_finish(struct gs_tsim *t)
{
    size_t nt = t->ntenants;
    int64_t *scratch = malloc((t->npods + 1) * sizeof(*scratch));
    int64_t *share = malloc(nt * sizeof(*share));
    int32_t *tenant = malloc((t->npods + 1) * sizeof(*tenant));
    t->out = calloc(t->npods + 1, sizeof(*t->out));
    t->tout = calloc(nt, sizeof(*t->tout));
    t->qout = calloc(t->nqueues, sizeof(*t->qout));
    t->kout = calloc(t->nkinds + 1, sizeof(*t->kout));
    t->mout = calloc(GS_MODEL_MAX, sizeof(*t->mout));
    int r = !scratch || !share || !tenant || !t->out || !t->tout || !t->qout || !t->kout || !t->mout
                ? -ENOMEM
                : 0;
    for (size_t i = 0; r == 0 && i < t->npods; i++)
        r = pod_out(t, i, &tenant[i]);
    if (r < 0) {
        free(scratch);
        free(share);
        free(tenant);
        return r;
    }
    for (size_t i = 0; i < t->nuses; i++)
        if (t->uses[i].end_us < 0)
            t->uses[i].end_us = t->now;
    summary(t);
    t->sum.timeslice = gs_tenancy_slice_any(t->sched);
    t->sum.modes = t->s->sim.modes_defined;
    t->sum.conversions = gs_fleet_conversions(t->fleet);
    tenants(t, tenant, scratch, share);
    for (size_t q = 0; q < t->nqueues; q++) {
        t->qout[q].name = q < t->s->policy.nqueues ? t->s->policy.queues[q].name : "default";
        t->qout[q].weight = gs_tenancy_queue_weight(t->sched, q);
        t->qout[q].deserved_milli = gs_tenancy_queue_deserved(t->sched, q);
        t->qout[q].usage = usage_of(t, GS_USAGE_QUEUE, q);
        t->qout[q].gpu_milli_s = t->qout[q].usage.gpu_milli_s;
    }
    models(t);
    for (size_t k = 0; k < t->nkinds; k++) {
        struct gs_tsim_kind *o = &t->kout[k];
        o->name = t->kind_names[k];
        waits(t, tenant, 1, (int32_t)k, scratch, &o->wait);
    }
    for (size_t i = 0; i < t->npods; i++) {
        t->kout[t->pods[i].kind].pods++;
        t->kout[t->pods[i].kind].started += t->out[i].start_us >= 0;
    }
    const struct gs_tenancy_work *w = gs_tenancy_work(t->sched);
    t->work = (struct gs_tsim_work){w->passes,          w->tries,        w->node_fits,
                                    w->victim_searches, w->victim_nodes, w->victim_trials};
    free(scratch);
    free(share);
    free(tenant);
    return 0;
}
