/*
 * The work model: what a pod's kernels keep its cards busy, as DCGM's DCGM_FI_DEV_GPU_UTIL
 * measures a card (the share of time a kernel runs on it), how fast the pod progresses, and what
 * each pod holds of a card it shares.
 *
 * A pod's work is its own, whatever the way gives it: at full speed it keeps each of its cards
 * busy at its rate, gpu-util (sim.gpusched.io/gpu-util, else 100 %) times the compute share it
 * asks (nvidia.com/gpucores, else its memory's share of the smallest card it may use; a MIG
 * profile's compute slices; a whole card, or a replica's whole time), for its nominal duration
 * (sim.gpusched.io/duration). A card's busy share is the sum of its pods' rates, up to 1: while
 * the rates sum to 1000 or less every pod runs at full speed, whatever shares they asked (so four
 * replicas at 25 % of one card's time do their hour in an hour, and the card is busy for one
 * GPU-hour); beyond, the card's time goes round the tenant queues on it by weight (seed 000
 * §2.1, the Volcano queue's weight: weighted water-filling, each queue using at most what its
 * pods ask), inside a queue in proportion to the rates; a pod runs at what it gets over what it
 * asks on the slowest of its cards, and its expected end stretches. A pod of a PodGroup whose
 * running and completed members are fewer than minMember (Volcano counts Succeeded pods) does no
 * work, in every way: its collectives wait for the rest, so it holds its cards, keeps none of
 * them busy and does not progress.
 *
 * What a card holds is split among its pods: min(1000, the shares on it) in proportion to the
 * share each asks, rounded so the parts add up to the card's, so tenants, queues and models
 * never hold more than the fleet has. Speeds and parts change only when the pods on a node
 * change; the pods whose speed changes have their progress settled first and their expected end
 * recomputed, in integer microseconds (rounded up).
 *
 * Checkpoints: a pod that declares gpusched.io/checkpoint-interval saves its state every so much
 * of its nominal run (counted over all its runs); evicted, it resumes from its last checkpoint,
 * and only the work since then is lost. Any other pod restarts from zero. Writing a checkpoint
 * is taken as free (CheckFreq, FAST '21, bounds it to 3.5 % of the run at iteration grain).
 *
 * The ledger: per tenant, queue, GPU model and the fleet, what is held and busy now, and the
 * integrals of both over time, with the busy time of work later discarded (an evicted run since
 * its last checkpoint, a pod on a failed node or card, a running pod deleted). Goodput, the busy
 * time of work that completed or still runs, is busy less discarded. Per tenant also the
 * guarantee's shortfall: per GPU model, how far below its dedicated quota of it it held while
 * pods of its that could run there waited (gs__tn_usable_models()).
 */
#include "tenancy_impl.h"

#include "gpusched/fairshare.h"
#include "gpusched/grow.h"

#include <errno.h>
#include <stdlib.h>

#define PPM  1000000 /* speed unit: parts per million of full speed */
#define GPUS ((uint32_t)((1ull << GS_GPUS_MAX) - 1)) /* the cards a mask may name */

/* What one card gives the queues on it: per queue, its pods' rates and what it got, x PPM. */
struct card_shares {
    size_t n;
    int over; /* the rates sum to more than the card: the queues share its time */
    int32_t queue[GS_CARD_CLIENTS_MAX], weight[GS_CARD_CLIENTS_MAX];
    int64_t asked[GS_CARD_CLIENTS_MAX], got[GS_CARD_CLIENTS_MAX];
    int64_t wsum;
};

int32_t gs__tn_work_rate(const struct rpod *p)
{
    int64_t util = p->sp->util_pct == GS_UNSET ? 100 : p->sp->util_pct;
    int64_t share = p->fit.whole ? p->work_share : p->fit.compute;
    return (int32_t)(share * util / 100);
}

/* Does @p wait for its gang's other members to do any work? */
static int stalled(const struct gs_tenancy *t, const struct rpod *p)
{
    const struct gang *g = p->wgroup >= 0 ? &t->gangs[p->wgroup] : NULL;
    return g && g->working + g->done < g->min;
}

static size_t queue_slot(struct card_shares *cs, const struct gs_tenancy *t, int32_t q)
{
    size_t k = 0;
    while (k < cs->n && cs->queue[k] != q)
        k++;
    if (k == cs->n && cs->n < GS_CARD_CLIENTS_MAX) {
        cs->queue[k] = q;
        cs->weight[k] = t->q_weight[q];
        cs->asked[k] = 0;
        cs->wsum += cs->weight[k];
        cs->n++;
    }
    return k;
}

/*
 * Speed of working pod @p on a card with @cs, ppm: full unless the card is over-asked, else
 * what its queue got over what it asked; and in *@entitled its part of its queue's entitlement
 * there (the queue's weight over the weights on the card), milli-GPU.
 */
static int64_t speed_on(const struct card_shares *cs, const struct rpod *p, int64_t *entitled)
{
    *entitled = 0;
    for (size_t k = 0; k < cs->n; k++) {
        if (cs->queue[k] != p->queue)
            continue;
        if (cs->asked[k] > 0)
            *entitled = (int64_t)((gs_i128)1000 * cs->weight[k] * p->rate * PPM /
                                  ((gs_i128)cs->wsum * cs->asked[k]));
        if (!cs->over || cs->asked[k] == 0)
            return PPM;
        int64_t s = (int64_t)((gs_i128)cs->got[k] * PPM / cs->asked[k]);
        return s < 1 ? 1 : s;
    }
    return PPM;
}

static int model_of(const struct gs_tenancy *t, const struct rpod *p)
{
    return gs_fleet_node_model(t->fleet, (size_t)p->node);
}

/* @p's allocation and busy rate change by @da and @db: every ledger that counts it. */
static void ledger_add(struct gs_tenancy *t, const struct rpod *p, int64_t da, int64_t db)
{
    struct usage *u[4] = {&t->use_tenant[p->tenant], &t->use_queue[p->queue],
                          &t->use_model[model_of(t, p)], &t->use_fleet};
    for (int i = 0; i < 4; i++) {
        u[i]->alloc += da;
        u[i]->busy += db;
    }
}

void gs__tn_work_accrue(struct gs_tenancy *t, int64_t now)
{
    int64_t dt = now - t->acc_t;
    if (dt <= 0)
        return;
    struct usage *all[3] = {t->use_tenant, t->use_queue, t->use_model};
    size_t n[3] = {t->ntenants, t->nqueues, GS_MODEL_MAX};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < n[k]; i++) {
            all[k][i].sum[0] += (gs_i128)all[k][i].alloc * dt;
            all[k][i].sum[1] += (gs_i128)all[k][i].busy * dt;
        }
    t->use_fleet.sum[0] += (gs_i128)t->use_fleet.alloc * dt;
    t->use_fleet.sum[1] += (gs_i128)t->use_fleet.busy * dt;
    for (size_t i = 0; i < t->pol->ntenants; i++) { /* the guarantee's shortfall, per model */
        const struct gs_tenant_spec *ts = &t->pol->tenants[i];
        for (int k = 0; ts->has_quota && k < ts->nquotas; k++) {
            int m = ts->quotas[k].model;
            if (m < 0 || m >= GS_MODEL_MAX)
                continue;
            size_t x = i * GS_MODEL_MAX + (size_t)m;
            int64_t held = t->ded_used[x] + t->sh_used[x];
            int64_t waiting = t->usable_asked[x] - t->usable_held[x];
            int64_t room = ts->quotas[k].dedicated_milli - held;
            int64_t gap = waiting < room ? waiting : room;
            if (gap > 0)
                t->use_tenant[i].sum[3] += (gs_i128)gap * dt;
        }
    }
    t->acc_t = now;
}

void gs__tn_usable_charge(struct gs_tenancy *t, const struct rpod *p, int running, int sign)
{
    int64_t *a = (running ? t->usable_held : t->usable_asked) + (size_t)p->tenant * GS_MODEL_MAX;
    for (uint32_t m = p->usable; m; m &= m - 1)
        a[__builtin_ctz(m)] += sign * p->milli;
}

void gs__tn_work_settle(struct gs_tenancy *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    int64_t dt = t->now - p->since;
    if (dt <= 0)
        return;
    int64_t cards = __builtin_popcount(p->mask);
    p->left -= (gs_i128)dt * p->speed;
    p->run_busy += (gs_i128)dt * p->busy;
    p->got += (gs_i128)dt * p->rate * p->speed / PPM;
    if (p->fit.timeslice) {
        t->ts_asked[p->tenant] += (gs_i128)dt * p->rate * cards;
        t->ts_received[p->tenant] += (gs_i128)dt * p->busy;
        t->ts_entitled[p->tenant] += (gs_i128)dt * p->ts_entitled;
    }
    p->since = t->now;
}

void gs__tn_work_start(struct gs_tenancy *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    p->left =
        p->sp->duration_us == GS_UNSET ? 0 : (gs_i128)(p->sp->duration_us - p->saved_us) * PPM;
    p->left0 = p->left;
    p->every_us = p->sp->checkpoint_us;
    p->speed = -1; /* unknown: the retime that follows sets it and the expected end */
    p->since = t->now;
    p->got = p->run_busy = 0;
    p->alloc = p->busy = p->ts_entitled = 0;
    p->end = INT64_MAX;
    t->ts_used |= p->fit.timeslice;
}

void gs__tn_work_stop(struct gs_tenancy *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    gs__tn_work_settle(t, pod);
    ledger_add(t, p, -p->alloc, -p->busy);
    p->alloc = p->busy = 0;
}

/* Nominal microseconds of its run @p has done by now; and in *@keep what of them its last
 * checkpoint saves (all of the run's progress counted from its first run's start). */
static int64_t run_done(const struct gs_tenancy *t, const struct rpod *p, int64_t *keep)
{
    int64_t dt = t->now > p->since && p->speed > 0 ? t->now - p->since : 0;
    int64_t run = (int64_t)((p->left0 - p->left + (gs_i128)dt * p->speed) / PPM);
    int64_t every = p->every_us, total = p->saved_us + run;
    *keep = every > 0 ? total / every * every - p->saved_us : 0;
    if (*keep < 0)
        *keep = 0;
    return run;
}

void gs__tn_work_resume(struct gs_tenancy *t, int32_t pod, int64_t done_us)
{
    struct rpod *p = &t->pods[pod];
    p->since = t->now;
    p->left -= (gs_i128)done_us * PPM;
}

int64_t gs__tn_work_done(const struct gs_tenancy *t, const struct rpod *p)
{
    int64_t keep;
    return run_done(t, p, &keep);
}

int64_t gs__tn_work_at_risk(const struct gs_tenancy *t, const struct rpod *p, int32_t cards)
{
    int64_t keep, run = run_done(t, p, &keep);
    return (run - keep) * p->rate * cards;
}

void gs__tn_work_lost(struct gs_tenancy *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    int64_t keep, run = run_done(t, p, &keep);
    gs_i128 lost = p->run_busy;
    if (keep > 0) { /* what its kernels did since its checkpoint, at most what they did */
        gs_i128 since = (gs_i128)(run - keep) * p->rate * __builtin_popcount(p->mask);
        lost = since < lost ? since : lost;
    }
    p->saved_us += keep;
    struct usage *u[4] = {&t->use_tenant[p->tenant], &t->use_queue[p->queue],
                          &t->use_model[model_of(t, p)], &t->use_fleet};
    for (int i = 0; i < 4; i++)
        u[i]->sum[2] += lost;
}

int64_t gs__tn_walltime(const struct gs_pod_spec *sp)
{
    int64_t d = sp->duration_us, dl = sp->deadline_us;
    return dl > 0 && (d == GS_UNSET || dl < d) ? dl : d;
}

int gs__tn_work_end(struct gs_tenancy *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    p->gen++; /* the completion pushed before is stale */
    p->end = INT64_MAX;
    if (p->sp->duration_us != GS_UNSET && p->speed > 0) {
        gs_i128 left = p->left > 0 ? p->left : 0;
        p->end = p->since + (int64_t)((left + p->speed - 1) / p->speed);
    }
    /* the kubelet ends the pod activeDeadlineSeconds after it started, its work done or not */
    if (p->sp->deadline_us > 0 && p->start + p->sp->deadline_us < p->end)
        p->end = p->start + p->sp->deadline_us;
    return p->end == INT64_MAX ? 0 : gs__tn_schedule_end(t, pod, p->end);
}

/* @p's speed is now @speed: its progress so far settled, its expected end pushed again. */
static int respeed(struct gs_tenancy *t, int32_t pod, int64_t speed)
{
    gs__tn_work_settle(t, pod);
    t->pods[pod].speed = speed;
    return gs__tn_work_end(t, pod);
}

/*
 * The cards of @node in @cards, over its pods in node order: per card, the queues on it, what
 * their working pods ask and what the card gives them (@cs); and, on each card whose shares the
 * card holds (their sum 1000 or less), each pod's share, added to @acc per pod slot. Return: the
 * cards whose shares pass the card (time-sliced replicas, overcommitted slices): alloc_by_use()
 * splits those once the pods' speeds are known.
 */
static uint32_t cards_share(const struct gs_tenancy *t, size_t node, uint32_t cards,
                            struct card_shares *cs, int64_t *acc)
{
    int64_t sum[GS_GPUS_MAX] = {0}, c[GS_GPUS_MAX];
    uint32_t passed = 0;
    for (uint32_t m = cards; m; m &= m - 1) {
        int g = __builtin_ctz(m);
        cs[g].n = 0;
        cs[g].wsum = 0;
        c[g] = gs_fleet_card_compute(t->fleet, node, g);
        passed |= c[g] > 1000 ? 1u << g : 0;
    }
    size_t np = gs_fleet_pod_count(t->fleet, node);
    for (size_t i = 0; i < np; i++) {
        const struct rpod *p = &t->pods[gs_fleet_pod_at(t->fleet, node, i)];
        int64_t ask = stalled(t, p) ? 0 : (int64_t)p->rate * PPM;
        for (uint32_t m = p->mask & GPUS; m; m &= m - 1) {
            int g = __builtin_ctz(m);
            cs[g].asked[queue_slot(&cs[g], t, p->queue)] += ask;
            sum[g] += ask;
            if (c[g] > 0 && !(passed & (1u << g))) /* the card holds every share */
                acc[i] += gs__tn_card_share(p);
        }
    }
    for (uint32_t m = cards; m; m &= m - 1) {
        int g = __builtin_ctz(m);
        cs[g].over = sum[g] > (int64_t)1000 * PPM;
        if (cs[g].over)
            gs_fairshare_waterfill((int64_t)1000 * PPM, cs[g].weight, cs[g].asked, cs[g].n,
                                   cs[g].got);
    }
    return passed;
}

/*
 * The allocation of each card of @passed (its shares past the card), 1000, split among its pods
 * in proportion to what each keeps it busy (its rate at its speed), running sums rounded down so
 * the parts add up; by their shares where none of them works. By shares, a replica at 90 % of
 * the card's time held a half beside one at 5 %, and a tenant kept busy more GPU-hours than it
 * held.
 */
static void alloc_by_use(const struct gs_tenancy *t, size_t node, uint32_t passed, int64_t *acc)
{
    int64_t total[GS_GPUS_MAX] = {0}, shares[GS_GPUS_MAX] = {0}, cum[GS_GPUS_MAX] = {0},
            before[GS_GPUS_MAX] = {0};
    size_t np = gs_fleet_pod_count(t->fleet, node);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < np; i++) {
            const struct rpod *p = &t->pods[gs_fleet_pod_at(t->fleet, node, i)];
            int64_t use = (int64_t)p->rate * p->speed / PPM, share = gs__tn_card_share(p);
            for (uint32_t m = p->mask & passed; m; m &= m - 1) {
                int g = __builtin_ctz(m);
                if (pass == 0) {
                    total[g] += use;
                    shares[g] += share;
                    continue;
                }
                cum[g] += total[g] > 0 ? use : share;
                int64_t upto = cum[g] * 1000 / (total[g] > 0 ? total[g] : shares[g]);
                acc[i] += upto - before[g];
                before[g] = upto;
            }
        }
}

int gs__tn_work_retime(struct gs_tenancy *t, size_t node)
{
    if (!t->ts_shares && !(t->ts_shares = calloc(GS_GPUS_MAX, sizeof(*t->ts_shares))))
        return -ENOMEM;
    size_t np = gs_fleet_pod_count(t->fleet, node);
    int64_t *acc = gs_grow(t->slot_alloc, &t->cap_slot_alloc, np + 1, sizeof(*acc), 16);
    if (!acc)
        return -ENOMEM;
    t->slot_alloc = acc;
    uint32_t cards = 0;
    for (size_t i = 0; i < np; i++) {
        acc[i] = 0;
        cards |= t->pods[gs_fleet_pod_at(t->fleet, node, i)].mask;
    }
    struct card_shares *cs = t->ts_shares;
    uint32_t passed = cards_share(t, node, cards & GPUS, cs, acc);
    int r = 0;
    for (size_t i = 0; i < np && r == 0; i++) {
        int32_t pod = gs_fleet_pod_at(t->fleet, node, i);
        struct rpod *p = &t->pods[pod];
        int64_t speed = stalled(t, p) ? 0 : PPM, entitled = 0;
        for (uint32_t m = p->mask & GPUS; m && speed > 0; m &= m - 1) {
            int64_t e, s = speed_on(&cs[__builtin_ctz(m)], p, &e);
            speed = s < speed ? s : speed;
            entitled += p->fit.timeslice ? e : 0;
        }
        if (speed != p->speed || entitled != p->ts_entitled) {
            gs__tn_work_settle(t, pod);
            p->ts_entitled = entitled;
            if (speed != p->speed)
                r = respeed(t, pod, speed);
        }
    }
    if (r)
        return r;
    alloc_by_use(t, node, passed, acc);
    for (size_t i = 0; i < np; i++) {
        struct rpod *p = &t->pods[gs_fleet_pod_at(t->fleet, node, i)];
        int64_t busy = (int64_t)p->rate * p->speed / PPM * __builtin_popcount(p->mask);
        ledger_add(t, p, acc[i] - p->alloc, busy - p->busy);
        p->alloc = acc[i];
        p->busy = busy;
    }
    return 0;
}

int gs__tn_work_gang(struct gs_tenancy *t, int32_t g)
{
    const struct vec *w = &t->gangs[g].workers;
    int r = 0;
    for (size_t k = 0; k < w->n && r == 0; k++) {
        const struct rpod *m = &t->pods[w->v[k]];
        if (m->state == GS_POD_RUNNING)
            r = gs__tn_work_retime(t, (size_t)m->node);
    }
    return r;
}

int32_t gs__tn_slice_share(const struct gs_tenancy *t, int32_t pod)
{
    const struct rpod *p = &t->pods[pod];
    int32_t units = p->fit.units > 1 ? p->fit.units : 1;
    if (!p->fit.timeslice)
        return gs__tn_card_share(p) / (p->fit.whole ? 1 : units);
    int64_t held = t->now - p->start, s = p->fit.compute / units;
    if (held > 0)
        s = (int64_t)((p->got + held * units - 1) / (held * units));
    return (int32_t)(s < 1 ? 1 : s);
}
