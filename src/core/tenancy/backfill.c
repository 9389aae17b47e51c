/*
 * Backfill (EASY): the head of the queue, blocked, is promised the node where it would fit
 * first as running pods reach their expected ends (the walltimes they declare); a later pod may
 * use that node only if it ends before then, or leaves the head room there anyway. The expected
 * ends are kept here, in a heap by time (then arrival order), entries going stale when the pod
 * they were pushed for leaves its cards.
 */
#include "tenancy_impl.h"

#include "../heap.h"

#include <errno.h>
#include <string.h>

/* Expected ends: a binary min-heap by (time, seq). */
static int ev_less(const struct event *a, const struct event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

GS_HEAP(ev, struct event, ev_less)

/* An expected end and where it sits in the heap: the heap is read in order without copying it. */
struct evi {
    struct event e;
    size_t at;
};

static int evi_less(const struct evi *a, const struct evi *b)
{
    return ev_less(&a->e, &b->e);
}

GS_HEAP(evi, struct evi, evi_less)

/* The reservation of the blocked head holds @node against @p unless @p ends before it is due. */
int gs__tn_late(const struct gs_tenancy *t, const struct rpod *p)
{
    /* A promise to the head binds only pods that queue behind it, in GPUQueueSort's order as it
     * is now: never one of higher priority, nor one of its level whose queue has fallen further
     * below its deserved share than the head's since the promise, nor one of its level that
     * arrived before it (an evicted pod queues where it was). */
    const struct rpod *h = t->head >= 0 ? &t->pods[t->head] : NULL;
    if (!h || p == h || p->level < h->level)
        return 0;
    if (p->level == h->level &&
        (gs__tn_before(p, h) ||
         (p->queue != h->queue && gs__tn_hungrier(t, (size_t)p->queue, (size_t)h->queue, 0))))
        return 0;
    int64_t w = gs__tn_walltime(p->sp);
    return w == GS_UNSET || t->now + w > t->shadow_t;
}

/*
 * Would the head still fit on its node at the promised time were @p put there now on @c? EASY
 * backfill lets a pod that ends later use what the head will not need then: the pods due to end
 * by then are taken off, the head tried, and everything put back.
 */
static int spares_head(struct gs_tenancy *t, const struct rpod *p, int32_t pod, size_t node,
                       const struct gs_fit_choice *c)
{
    const struct rpod *h = &t->pods[t->head];
    struct gs_fit f = p->fit;
    f.mig_start = c->mig_start;
    if (gs_fleet_commit(t->fleet, node, &f, c->mask, pod) < 0)
        return 0;
    int32_t off[GS_GPUS_MAX * 8];
    size_t k = 0, np = gs_fleet_pod_count(t->fleet, node);
    for (size_t i = 0; i < np && k < sizeof(off) / sizeof(off[0]); i++) {
        int32_t v = gs_fleet_pod_at(t->fleet, node, i);
        const struct rpod *r = &t->pods[v];
        if (v != pod && r->end <= t->shadow_t)
            off[k++] = v;
    }
    for (size_t i = 0; i < k; i++)
        gs_fleet_release(t->fleet, node, &t->pods[off[i]].fit, t->pods[off[i]].mask, off[i]);
    struct gs_fit_choice hc;
    int ok = gs_fleet_fit(t->fleet, node, &h->fit, &hc) == GS_FIT_OK;
    while (k-- > 0)
        gs_fleet_commit(t->fleet, node, &t->pods[off[k]].fit, t->pods[off[k]].mask, off[k]);
    gs_fleet_release(t->fleet, node, &f, c->mask, pod);
    return ok;
}

int gs__tn_held(struct gs_tenancy *t, const struct rpod *p, int32_t pod, size_t node,
                const struct gs_fit_choice *c)
{
    int late =
        (int32_t)node == t->resv_node && gs__tn_late(t, p) && !spares_head(t, p, pod, node, c);
    t->held_hits += late; /* the pass learns that the reservation stood in the way */
    return late;
}

int gs__tn_probe_held(struct gs_tenancy *t, const struct rpod *p, size_t node,
                      const struct gs_fit_choice *c, char *why, size_t size)
{
    /* the probed pod has no id: the one the next pod would take tags its trial cards */
    if ((int32_t)node != t->resv_node || !gs__tn_late(t, p) ||
        spares_head(t, p, (int32_t)t->npods, node, c))
        return 0;
    const struct rpod *h = &t->pods[t->head];
    int64_t in_s = t->shadow_t > t->now ? (t->shadow_t - t->now + 999999) / 1000000 : 0;
    int64_t w = gs__tn_walltime(p->sp);
    if (w == GS_UNSET)
        gs__say(why, size,
                "held for %s/%s, which waits ahead in the queue and can start here in %lld s; "
                "this pod declares no run time (sim.gpusched.io/duration or "
                "activeDeadlineSeconds), so it could delay it",
                h->sp->ns, h->sp->name, (long long)in_s);
    else
        gs__say(why, size,
                "held for %s/%s, which waits ahead in the queue and can start here in %lld s; "
                "this pod's run time (%s) of %lld s would delay it",
                h->sp->ns, h->sp->name, (long long)in_s,
                w == p->sp->duration_us ? "sim.gpusched.io/duration" : "activeDeadlineSeconds",
                (long long)((w + 999999) / 1000000));
    return 1;
}

int gs__tn_end_live(const struct gs_tenancy *t, const struct event *e)
{
    return t->pods[e->pod].gen == e->gen && t->pods[e->pod].state == GS_POD_RUNNING;
}

/*
 * Completion @i of reserve_for() (@e, its pod @p) on a node where the cards of the pods taken off
 * so far could not make room for head @h's whole cards: the fit there cannot pass (the node has
 * fewer free cards than it asks), so the pod is put off, not released. Once they could, the pods
 * put off there are released, in order, and the caller releases @p and fits the head. Only a sound
 * node's pods are put off. Return: 1 put off.
 */
static int put_off(struct gs_tenancy *t, const struct rpod *h, const struct rpod *p, int32_t i)
{
    size_t node = (size_t)p->node;
    struct resv_node *n = &t->resv_nodes[node];
    if (n->stamp != t->resv_stamp)
        *n = (struct resv_node){t->resv_stamp, gs_fleet_node_sound(t->fleet, node),
                                gs_fleet_node_free_cards(t->fleet, node), -1, -1};
    if (!n->lazy)
        return 0;
    n->free += __builtin_popcount(p->mask);
    if (n->free < h->fit.ncards) {
        t->resv_next[i] = -1;
        if (n->last >= 0)
            t->resv_next[n->last] = i;
        else
            n->first = i;
        n->last = i;
        return 1;
    }
    for (int32_t j = n->first; j >= 0; j = t->resv_next[j]) {
        const struct rpod *v = &t->pods[t->resv_ev[j].pod];
        gs_fleet_release(t->fleet, node, &v->fit, v->mask, t->resv_ev[j].pod);
    }
    n->lazy = 0;
    return 0;
}

/* Completion @i's node put back as releasing its pods put off and committing them back leaves it
 * (gs_fleet_cycle()), once; or its pod committed back when it was released. */
static void put_back(struct gs_tenancy *t, int32_t i)
{
    const struct rpod *p = &t->pods[t->resv_ev[i].pod];
    struct resv_node *n = &t->resv_nodes[p->node];
    if (!n->lazy) {
        gs_fleet_commit(t->fleet, (size_t)p->node, &p->fit, p->mask, t->resv_ev[i].pod);
        return;
    }
    size_t k = 0;
    for (int32_t j = n->first; j >= 0; j = t->resv_next[j])
        t->resv_ids[k++] = t->resv_ev[j].pod;
    if (k)
        gs_fleet_cycle(t->fleet, (size_t)p->node, t->resv_ids, k);
    n->first = -1;
}

/*
 * EASY backfill: the head of the queue, blocked, is promised the node where it would fit first
 * as running pods end (their durations are the walltimes); a later pod may use that node only
 * if it ends before then. Found by releasing running pods from the fleet in order of end time
 * until the head fits, then putting every one back. A gang at the head gets no promise.
 */
int gs__tn_reserve_for(struct gs_tenancy *t, int32_t head)
{
    t->resv_gen++;
    t->resv_node = -1;
    t->head = -1;
    struct rpod *h = &t->pods[head];
    if (h->group >= 0 || t->nheap == 0)
        return 0;
    /* The completions in order, as far as needed: the smallest entry not yet taken is always
     * the root or a child of one taken, so a small heap of those frontier entries reads them. */
    struct event *ev = t->resv_ev;
    size_t k = 0;
    int r = 0;
    t->naux = 0;
    if (evi_push(&t->aux, &t->naux, &t->capaux, (struct evi){t->heap[0], 0}) < 0)
        return -ENOMEM;
    struct gs_fit_choice c;
    int lazy = h->fit.whole && !h->fit.mig && h->fit.ncards > 0;
    t->resv_stamp++;
    while (t->naux && k < GS_RESV_DEPTH && r == 0) {
        struct evi x = evi_pop(t->aux, &t->naux);
        for (size_t ch = 2 * x.at + 1; ch <= 2 * x.at + 2 && ch < t->nheap && r == 0; ch++)
            r = evi_push(&t->aux, &t->naux, &t->capaux, (struct evi){t->heap[ch], ch});
        struct event e = x.e;
        if (r < 0)
            break;
        if (!gs__tn_end_live(t, &e))
            continue;
        ev[k++] = e;
        struct rpod *p = &t->pods[e.pod];
        if (lazy && put_off(t, h, p, (int32_t)k - 1))
            continue;
        gs_fleet_release(t->fleet, (size_t)p->node, &p->fit, p->mask, e.pod);
        if (gs_fleet_fit(t->fleet, (size_t)p->node, &h->fit, &c) == GS_FIT_OK) {
            t->resv_node = p->node;
            t->head = head;
            t->shadow_t = e.t;
            break;
        }
    }
    while (k-- > 0) {
        struct rpod *p = &t->pods[ev[k].pod];
        if (lazy)
            put_back(t, (int32_t)k);
        else
            gs_fleet_commit(t->fleet, (size_t)p->node, &p->fit, p->mask, ev[k].pod);
    }
    if (r < 0) { /* out of memory half-way: no promise */
        t->head = t->resv_node = -1;
        return -ENOMEM;
    }
    return 0;
}

int gs__tn_schedule_end(struct gs_tenancy *t, int32_t pod, int64_t end)
{
    const struct rpod *p = &t->pods[pod];
    return ev_push(&t->heap, &t->nheap, &t->capheap, (struct event){end, p->seq, pod, p->gen});
}

struct event gs__tn_end_pop(struct gs_tenancy *t)
{
    return ev_pop(t->heap, &t->nheap);
}
