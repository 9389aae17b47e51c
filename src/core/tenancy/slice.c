/*
 * Time-sliced cards (seed 000 §2.1: per-tenant queues share a card by time slice, with the time
 * each one used kept).
 *
 * A card's time goes round its tenant queues by weight (the Volcano queue's weight): weighted
 * round-robin with slices short against a pod's run is, over the run, weighted water-filling of
 * the card's time (gs_fairshare_waterfill()), each queue using at most what its pods on the card
 * ask (nvidia.com/gpucores, else the whole card each); inside a queue the pods share in proportion
 * to what they ask. A pod whose card gives it all it asks runs at full speed; otherwise it runs
 * at the fraction it gets, on the slowest of its cards, so its expected end stretches: with equal
 * weights, at its share / max(1, the card's total share). Speeds change only when the pods on a
 * card change; the pods there then have their progress settled and their expected end recomputed,
 * in integer microseconds (rounded up). A pod's progress is its walltime (what it declares, as
 * sim.gpusched.io/duration) at full speed: the simulator ends it then, backfill counts on it.
 *
 * Per tenant the run keeps three integrals, milli-GPU x microseconds: asked (what its pods ask,
 * while they run), entitled (its queue's weight over the weights of the queues on the card,
 * times the card), and received (what water-filling gave it).
 */
#include "tenancy_impl.h"

#include "gpusched/fairshare.h"

#include <errno.h>
#include <stdlib.h>

#define PPM 1000000 /* speed unit: parts per million of full speed */

/* What water-filling gives the queues on one card: per queue, speed (ppm) and entitled share. */
struct card_shares {
    size_t n;
    int32_t queue[GS_CARD_CLIENTS_MAX], weight[GS_CARD_CLIENTS_MAX];
    int64_t asked[GS_CARD_CLIENTS_MAX], got[GS_CARD_CLIENTS_MAX];
    int64_t wsum;
};

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

/* The queues on card @g of @node and what the card's time gives each, in milli-GPU x PPM. */
static void card_shares(const struct gs_tenancy *t, size_t node, int g, struct card_shares *cs)
{
    cs->n = 0;
    cs->wsum = 0;
    size_t np = gs_fleet_pod_count(t->fleet, node);
    for (size_t i = 0; i < np; i++) {
        const struct rpod *p = &t->pods[gs_fleet_pod_at(t->fleet, node, i)];
        if (p->fit.timeslice && (p->mask & (1u << g)))
            cs->asked[queue_slot(cs, t, p->queue)] += (int64_t)p->fit.compute * PPM;
    }
    gs_fairshare_waterfill((int64_t)1000 * PPM, cs->weight, cs->asked, cs->n, cs->got);
}

/*
 * Speed of pod @p on a card with @cs, ppm: what its queue got over what it asked; and in
 * *@entitled its part of its queue's entitlement there, milli-GPU.
 */
static int64_t speed_on(const struct card_shares *cs, const struct rpod *p, int64_t *entitled)
{
    for (size_t k = 0; k < cs->n; k++) {
        if (cs->queue[k] != p->queue)
            continue;
        *entitled = (int64_t)((gs_i128)1000 * cs->weight[k] * p->fit.compute * PPM /
                              ((gs_i128)cs->wsum * cs->asked[k]));
        int64_t s = (int64_t)((gs_i128)cs->got[k] * PPM / cs->asked[k]);
        return s < 1 ? 1 : s;
    }
    *entitled = 0;
    return PPM;
}

void gs__tn_slice_settle(struct gs_tenancy *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    int64_t dt = t->now - p->ts_since;
    if (dt <= 0)
        return;
    int64_t cards = __builtin_popcount(p->mask), share = p->fit.compute;
    p->ts_work -= (gs_i128)dt * p->ts_speed;
    p->ts_got += (gs_i128)dt * share * p->ts_speed / PPM;
    t->ts_asked[p->tenant] += (gs_i128)dt * share * cards;
    t->ts_received[p->tenant] += (gs_i128)dt * share * cards * p->ts_speed / PPM;
    t->ts_entitled[p->tenant] += (gs_i128)dt * p->ts_entitled;
    p->ts_since = t->now;
}

void gs__tn_slice_start(struct gs_tenancy *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    p->ts_work = p->sp->duration_us == GS_UNSET ? 0 : (gs_i128)p->sp->duration_us * PPM;
    p->ts_speed = PPM;
    p->ts_got = 0;
    p->ts_entitled = 0;
    p->ts_since = t->now;
    t->ts_used = 1;
}

int32_t gs__tn_slice_share(const struct gs_tenancy *t, int32_t pod)
{
    const struct rpod *p = &t->pods[pod];
    int32_t units = p->fit.units > 1 ? p->fit.units : 1;
    if (!p->fit.timeslice)
        return p->fit.whole ? 1000 : p->fit.compute / units;
    int64_t held = t->now - p->start, s = p->fit.compute / units;
    if (held > 0)
        s = (int64_t)((p->ts_got + held * units - 1) / (held * units));
    return (int32_t)(s < 1 ? 1 : s);
}

/*
 * The new speed, entitlement and completion of time-sliced pod @pod of @node; @cs[g] holds card
 * g's shares once bit g of *@done is set (each card is water-filled once per retime).
 */
static int retime_pod(struct gs_tenancy *t, int32_t pod, size_t node, struct card_shares *cs,
                      uint32_t *done)
{
    struct rpod *p = &t->pods[pod];
    int64_t speed = PPM, entitled = 0;
    for (int g = 0; g < GS_GPUS_MAX; g++) {
        if (!(p->mask & (1u << g)))
            continue;
        int64_t e;
        if (!(*done & (1u << g)))
            card_shares(t, node, g, &cs[g]);
        *done |= 1u << g;
        int64_t s = speed_on(&cs[g], p, &e);
        speed = s < speed ? s : speed;
        entitled += e;
    }
    gs__tn_slice_settle(t, pod);
    p->ts_speed = speed;
    p->ts_entitled = entitled;
    if (p->sp->duration_us == GS_UNSET)
        return 0;
    gs_i128 left = p->ts_work > 0 ? p->ts_work : 0;
    int64_t end = t->now + (int64_t)((left + speed - 1) / speed);
    p->gen++; /* the completion pushed before is stale */
    return gs__tn_schedule_end(t, pod, end);
}

int gs__tn_slice_retime(struct gs_tenancy *t, size_t node, uint32_t mask)
{
    if (!t->ts_shares && !(t->ts_shares = calloc(GS_GPUS_MAX, sizeof(*t->ts_shares))))
        return -ENOMEM;
    size_t np = gs_fleet_pod_count(t->fleet, node);
    uint32_t done = 0;
    int r = 0;
    for (size_t i = 0; i < np && r == 0; i++) {
        int32_t pod = gs_fleet_pod_at(t->fleet, node, i);
        const struct rpod *p = &t->pods[pod];
        if (p->fit.timeslice && (p->mask & mask))
            r = retime_pod(t, pod, node, t->ts_shares, &done);
    }
    return r;
}
