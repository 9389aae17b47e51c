/*
 * The multi-tenant discrete-event simulator: events, binding, the scheduling pass, gangs and
 * backfill. Invariants: see gpusched/tsim.h.
 */
#include "tenancy_impl.h"

#include "../core/heap.h"

#include "gpusched/diag.h"
#include "gpusched/fairshare.h"
#include "gpusched/grow.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const way_names[GS_WAY_COUNT] = {"exclusive", "sharing", "full"};
static const char *const state_names[] = {"pending", "running", "completed", "preempted",
                                          "rejected"};

const char *gs_way_name(enum gs_way w)
{
    return (unsigned)w < GS_WAY_COUNT ? way_names[w] : "unknown";
}

int gs_way_find(const char *name)
{
    for (int i = 0; i < GS_WAY_COUNT; i++)
        if (strcmp(way_names[i], name) == 0)
            return i;
    return -ENOENT;
}

const char *gs_pod_state_name(enum gs_pod_state s)
{
    return (unsigned)s <= GS_POD_REJECTED ? state_names[s] : "unknown";
}

int gs__vec_push(struct vec *v, int32_t x)
{
    int32_t *p = gs_grow(v->v, &v->cap, v->n + 1, sizeof(*p), 8);
    if (!p)
        return -ENOMEM;
    v->v = p;
    v->v[v->n++] = x;
    return 0;
}

/* Completion events: a binary min-heap by (time, pod). */
static int ev_less(const struct event *a, const struct event *b)
{
    return a->t < b->t || (a->t == b->t && a->pod < b->pod);
}

GS_HEAP(ev, struct event, ev_less)

/* A completion and where it sits in the heap: the heap is read in order without copying it. */
struct evi {
    struct event e;
    size_t at;
};

static int evi_less(const struct evi *a, const struct evi *b)
{
    return ev_less(&a->e, &b->e);
}

GS_HEAP(evi, struct evi, evi_less)

/* Busy share of the pod's cards, each card counted at most 1000. */
static void busy_apply(struct gs_tsim *t, const struct rpod *p, int sign)
{
    int32_t share = p->fit.whole ? 1000 : p->fit.compute;
    int32_t add = share * p->util_pct / 100;
    for (int g = 0; g < GS_GPUS_MAX; g++) {
        if (!(p->mask & (1u << g)))
            continue;
        int32_t *c = &t->card_busy[(size_t)p->node * GS_GPUS_MAX + (size_t)g];
        int32_t before = *c < 1000 ? *c : 1000;
        *c += sign * add;
        t->busy_now += (*c < 1000 ? *c : 1000) - before;
    }
    t->tenant_busy[p->tenant] += sign * (int64_t)add * __builtin_popcount(p->mask);
}

static int use_open(struct gs_tsim *t, int32_t pod)
{
    struct gs_tsim_use *u = gs_grow(t->uses, &t->capuses, t->nuses + 1, sizeof(*u), 64);
    if (!u)
        return -ENOMEM;
    t->uses = u;
    const struct rpod *p = &t->pods[pod];
    int32_t units = p->fit.units > 1 ? p->fit.units : 1;
    t->uses[t->nuses] =
        (struct gs_tsim_use){.pod = pod,
                             .node = p->node,
                             .gpu_mask = p->mask,
                             .whole = p->fit.whole,
                             .timeslice = p->fit.timeslice,
                             .share_milli = p->fit.whole ? 1000 : p->fit.compute / units,
                             .units = units,
                             .start_us = t->now,
                             .end_us = -1,
                             .mig = p->fit.mig,
                             .mig_start = p->fit.mig_start};
    t->pods[pod].use = (int32_t)t->nuses++;
    return 0;
}

/* Account a pod arriving on (+1) or leaving (-1) its devices; the fleet is done by the caller. */
static void account(struct gs_tsim *t, int32_t pod, int sign, int restore)
{
    struct rpod *p = &t->pods[pod];
    int model = p->fit.ncards > 0 ? gs_fleet_node_model(t->fleet, (size_t)p->node) : -1;
    gs__quota_charge(t, p, model, sign, restore);
    t->tenant_alloc[p->tenant] += sign * p->milli;
    busy_apply(t, p, sign);
    if (p->group >= 0)
        t->gangs[p->group].running += sign;
    t->running_by_level[p->level] += sign;
    if (p->charged != 1)
        t->borrowed[(size_t)p->tenant * t->nlevels + (size_t)p->level] += sign;
}

int gs__tsim_bind(struct gs_tsim *t, int32_t pod, size_t node, uint32_t mask, struct txn *x)
{
    struct rpod *p = &t->pods[pod];
    int r = gs_fleet_commit(t->fleet, node, &p->fit, mask, pod);
    if (r < 0)
        return r;
    p->node = (int32_t)node;
    p->mask = mask;
    p->state = GS_POD_RUNNING;
    if (pod == t->head) { /* the promise is kept: nothing is held for it any more */
        t->head = -1;
        t->resv_gen++;
    }
    gs__tsim_pending_left(t, pod);
    if ((int32_t)node == t->resv_node && t->head >= 0 && !gs__tsim_late(t, p) &&
        (p->sp->duration_us == GS_UNSET || t->now + p->sp->duration_us > t->shadow_t))
        t->resv_stale = 1; /* it will still be there when the head was promised the node */
    p->start = t->now;
    if (p->first_start < 0)
        p->first_start = t->now;
    p->reason[0] = 0;
    account(t, pod, 1, 0);
    gs__tsim_victims_update(t, node);
    if ((r = use_open(t, pod)) < 0 || (x && (r = gs__vec_push(&x->bound, pod)) < 0) ||
        (p->preemptions > 0 && (r = gs__tsim_readmitted(t, t->now)) < 0))
        return r;
    if (p->fit.timeslice) {
        gs__tsim_slice_start(t, pod);
        return gs__tsim_slice_retime(t, node, mask);
    }
    if (p->sp->duration_us != GS_UNSET)
        r = gs__tsim_schedule(t, pod, t->now + p->sp->duration_us);
    return r;
}

int gs__tsim_schedule(struct gs_tsim *t, int32_t pod, int64_t end)
{
    return ev_push(&t->heap, &t->nheap, &t->capheap, (struct event){end, pod, t->pods[pod].gen});
}

/* Take a pod off its devices; its completion event goes stale. */
static int unplace(struct gs_tsim *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    if (p->fit.timeslice)
        gs__tsim_slice_settle(t, pod);
    account(t, pod, -1, 0);
    gs_fleet_release(t->fleet, (size_t)p->node, &p->fit, p->mask, pod);
    gs__tsim_victims_update(t, (size_t)p->node);
    p->gen++;
    return p->fit.timeslice ? gs__tsim_slice_retime(t, (size_t)p->node, p->mask) : 0;
}

int gs__tsim_evict(struct gs_tsim *t, int32_t pod, struct txn *x)
{
    struct rpod *p = &t->pods[pod];
    int r = unplace(t, pod);
    p->state = GS_POD_PENDING;
    t->uses[p->use].end_us = t->now;
    if (p->fit.timeslice)
        gs__tsim_slice_close(t, pod);
    return r < 0 ? r : gs__vec_push(&x->evicted, pod);
}

int gs__tsim_rollback(struct gs_tsim *t, struct txn *x, size_t bound_to, size_t evicted_to)
{
    while (x->bound.n > bound_to) {
        int32_t pod = x->bound.v[--x->bound.n];
        struct rpod *p = &t->pods[pod];
        int r = unplace(t, pod);
        if (r < 0)
            return r;
        p->state = GS_POD_PENDING;
        p->node = -1;
        t->nuses--; /* binds append uses in order; undone in reverse, it is the last one */
        p->use = -1;
        if (p->preemptions == 0) /* it had never run: only an eviction brings a pod back */
            p->first_start = -1;
    }
    while (x->evicted.n > evicted_to) {
        int32_t pod = x->evicted.v[--x->evicted.n];
        struct rpod *p = &t->pods[pod];
        int r = gs_fleet_commit(t->fleet, (size_t)p->node, &p->fit, p->mask, pod);
        if (r < 0)
            return r; /* cannot happen: the exact state it left is restored in reverse order */
        p->state = GS_POD_RUNNING;
        p->gen--; /* its completion event is valid again */
        t->uses[p->use].end_us = -1;
        account(t, pod, 1, 1);
        gs__tsim_victims_update(t, (size_t)p->node);
        if (p->fit.timeslice && (r = gs__tsim_slice_retime(t, (size_t)p->node, p->mask)) < 0)
            return r;
    }
    return 0;
}

int gs__tsim_commit(struct gs_tsim *t, struct txn *x, int32_t by)
{
    for (size_t i = 0; i < x->evicted.n; i++) {
        struct rpod *p = &t->pods[x->evicted.v[i]];
        int reclaim = p->reclaimed;
        if (gs__vec_push(&t->rlog, p->node) < 0)
            return -ENOMEM;
        p->preemptions++;
        p->node = -1;
        p->use = -1;
        gs__say(p->reason, sizeof(p->reason), "%s by %s/%s", reclaim ? "reclaimed" : "preempted",
                t->pods[by].sp->ns, t->pods[by].sp->name);
        if (reclaim)
            t->sum.reclaims++;
        else
            t->sum.preemptions++;
        int r = gs__tsim_timeline_evicted(t, x->evicted.v[i], by, reclaim);
        if (r == 0)
            r = gs__tsim_pending_add(t, x->evicted.v[i]);
        if (r < 0)
            return r;
        t->epoch++;
    }
    x->bound.n = x->evicted.n = 0;
    return 0;
}

/* Zone spread of a gang: 1000 when no member runs in @node's zone, less for each that does. */
static int32_t zone_spread(const struct gs_tsim *t, const struct rpod *p, size_t node)
{
    if (p->group < 0)
        return 1000;
    const struct gang *g = &t->gangs[p->group];
    int zone = gs_fleet_node_zone(t->fleet, node), same = 0;
    for (size_t i = 0; i < g->members.n; i++) {
        const struct rpod *m = &t->pods[g->members.v[i]];
        same += m->state == GS_POD_RUNNING && gs_fleet_node_zone(t->fleet, (size_t)m->node) == zone;
    }
    return same >= 4 ? 0 : 1000 - 250 * same;
}

/*
 * Weighted score of the seed's profile (seed 000 §3.2): GPUBinPacking 8, TopologyScore 6,
 * FairnessScore 4. TopologyScore is what the pod's tier asks: cards kept together (nvlink,
 * pcie, none), replicas spread over nodes (node) or zones (az). FairnessScore keeps tenants
 * apart where it costs nothing: a node holding only this tenant's pods scores full.
 */
static int64_t score(const struct gs_tsim *t, const struct rpod *p, size_t node,
                     const struct gs_fit_choice *c)
{
    int32_t topo = p->fit.tier == GS_TIER_NODE ? c->spread
                   : p->fit.tier == GS_TIER_AZ ? zone_spread(t, p, node)
                                               : c->topology;
    int64_t s = 8 * (int64_t)c->packing + 6 * (int64_t)topo;
    if (t->way == GS_WAY_FULL)
        s += 4 * (int64_t)c->isolation;
    return s;
}

#define SCORE_MAX(t) (8 * 1000 + 6 * 1000 + ((t)->way == GS_WAY_FULL ? 4 * 1000 : 0))

static void why_nodes(struct gs_tsim *t, struct rpod *p, const int64_t *count, int64_t quota,
                      const char *quota_why, int64_t reserved)
{
    if (quota == (int64_t)t->s->nnodes && quota_why[0]) {
        gs__say(p->reason, sizeof(p->reason), "%s", quota_why);
        return;
    }
    int n = gs__say(p->reason, sizeof(p->reason), "0/%zu nodes are available:", t->s->nnodes);
    for (int r = 1; r < GS_FIT_REASONS && n < (int)sizeof(p->reason); r++)
        if (count[r])
            n += gs__say(p->reason + n, sizeof(p->reason) - (size_t)n, " %lld %s,",
                         (long long)count[r], gs_fit_reason_text((enum gs_fit_reason)r));
    if (quota && n < (int)sizeof(p->reason))
        n += gs__say(p->reason + n, sizeof(p->reason) - (size_t)n, " %lld %s,", (long long)quota,
                     quota_why);
    if (reserved && n < (int)sizeof(p->reason))
        n += gs__say(p->reason + n, sizeof(p->reason) - (size_t)n,
                     " %lld reserved for a pod ahead in the queue,", (long long)reserved);
    if (n > 0 && n < (int)sizeof(p->reason) && p->reason[n - 1] == ',')
        p->reason[n - 1] = '.';
}

/* The reservation of the blocked head holds @node against @p unless @p ends before it is due. */
int gs__tsim_late(const struct gs_tsim *t, const struct rpod *p)
{
    /* A promise to the head binds only pods that queue behind it: never one of higher priority,
     * nor one of its level that arrived before it (an evicted pod queues where it was). */
    const struct rpod *h = t->head >= 0 ? &t->pods[t->head] : NULL;
    if (!h || p == h || p->level < h->level ||
        (p->level == h->level && (p->submit < h->submit || (p->submit == h->submit && p < h))))
        return 0;
    return p->sp->duration_us == GS_UNSET || t->now + p->sp->duration_us > t->shadow_t;
}

/*
 * Would the head still fit on its node at the promised time were @p put there now on @c? EASY
 * backfill lets a pod that ends later use what the head will not need then: the pods due to end
 * by then are taken off, the head tried, and everything put back.
 */
static int spares_head(struct gs_tsim *t, const struct rpod *p, int32_t pod, size_t node,
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
        if (v != pod && r->sp->duration_us != GS_UNSET &&
            r->start + r->sp->duration_us <= t->shadow_t)
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

/* Is @node held against @p, placed on @c, for the head of the queue? */
static int held(struct gs_tsim *t, const struct rpod *p, int32_t pod, size_t node,
                const struct gs_fit_choice *c)
{
    int late =
        (int32_t)node == t->resv_node && gs__tsim_late(t, p) && !spares_head(t, p, pod, node, c);
    t->held_hits += late; /* the pass learns that the reservation stood in the way */
    return late;
}

/* A pod's shape (tenancy_admit.c, static_shape()), and whether it ends after the reservation of
 * the blocked head, the one thing about it a run changes. */
static uint64_t shape_of(const struct gs_tsim *t, const struct rpod *p)
{
    return (p->shape ^ (uint64_t)gs__tsim_late(t, p)) * 1099511628211ULL | 1;
}

/*
 * Nodes freed since: completions and evictions append their node to a log. A shape that failed
 * everywhere for want of room (no quota or reservation in the way) can fit later only where room
 * was freed, so its next search visits the log's tail instead of every node.
 */
struct clean {
    uint64_t key;
    size_t since;    /* log position after its last failed search */
    uint32_t models; /* the models whose quotas the pod passed then: the record holds while
                      * they are the same (quota is freed by releases, but on any node) */
    uint64_t resv;   /* the reservation that held a node against it, 0 none: the record holds
                      * while that one stands */
    char reason[GS_REASON_MAX];
};

static struct clean *clean_of(struct gs_tsim *t, uint64_t key)
{
    struct clean *c = &t->clean[key & (GS_MEMO_SLOTS - 1)];
    return c->key == key ? c : NULL;
}

int gs__cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

size_t gs__tsim_logged_since(struct gs_tsim *t, const struct vec *log, size_t since, size_t cap,
                             size_t n0)
{
    size_t nn = t->s->nnodes, n = log->n - since;
    if (n > cap)
        return SIZE_MAX;
    for (size_t i = 0; i < n; i++) /* rotated so that @n0 sorts first */
        t->scratch[i] = (int32_t)(((size_t)log->v[since + i] + nn - n0) % nn);
    qsort(t->scratch, n, sizeof(*t->scratch), gs__cmp_i32);
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (w == 0 || t->scratch[w - 1] != t->scratch[i])
            t->scratch[w++] = t->scratch[i];
    for (size_t i = 0; i < w; i++)
        t->scratch[i] = (int32_t)(((size_t)t->scratch[i] + n0) % nn);
    return w;
}

/* Does some model of the cluster pass @p's quotas? @ok caches the answer per model. */
static int quota_anywhere(struct gs_tsim *t, struct rpod *p, int8_t *ok, char *why)
{
    int any = 0;
    for (int m = 0; m < GS_MODEL_MAX; m++) {
        if (!(t->models & (1u << m)) || (p->fit.model_mask && !(p->fit.model_mask & (1u << m))))
            continue;
        ok[m] = (int8_t)gs__quota_check(t, p, m, why, GS_REASON_MAX);
        any |= ok[m];
    }
    return any;
}

/* What one search saw: per-reason node counts, and the best node. */
struct scan {
    int64_t count[GS_FIT_REASONS], quota, reserved, best;
    size_t node;
    uint32_t mask;
    int mig_start;
    int8_t model_ok[GS_MODEL_MAX];
    char quota_why[GS_REASON_MAX];
};

/* Filter and score @p on the nodes @list[lo..hi) (all nodes from @lo when @list is NULL). */
static void scan(struct gs_tsim *t, struct rpod *p, int32_t pod, const int32_t *list, size_t lo,
                 size_t hi, int only_node, struct scan *o)
{
    t->stamp++;
    for (size_t i = lo; i < hi; i++) {
        size_t n = list ? (size_t)list[i] : i;
        t->work.node_fits++;
        int model = gs_fleet_node_model(t->fleet, n);
        size_t key = (size_t)t->s->nodes[n].template_index * t->nzones +
                     (size_t)gs_fleet_node_zone(t->fleet, n);
        int empty =
            gs_fleet_pod_count(t->fleet, n) == 0 && only_node < 0 && (int32_t)n != t->resv_node;
        if (empty && t->seen[key] == t->stamp) {
            if (t->seen_reason[key] >= 0)
                o->count[t->seen_reason[key]]++;
            else
                o->quota += t->seen_reason[key] == -2;
            continue;
        }
        if (empty) {
            t->seen[key] = t->stamp;
            t->seen_reason[key] = -1;
        }
        int m = p->fit.ncards > 0 ? model : 0;
        if (o->model_ok[m] < 0)
            o->model_ok[m] = (int8_t)gs__quota_check(t, p, p->fit.ncards > 0 ? model : -1,
                                                     o->quota_why, sizeof(o->quota_why));
        if (!o->model_ok[m]) {
            o->quota++;
            if (empty)
                t->seen_reason[key] = -2;
            continue;
        }
        struct gs_fit_choice c;
        enum gs_fit_reason why = gs_fleet_fit(t->fleet, n, &p->fit, &c);
        if (why != GS_FIT_OK) {
            o->count[why]++;
            if (empty)
                t->seen_reason[key] = (int8_t)why;
            continue;
        }
        if (held(t, p, pod, n, &c)) {
            o->reserved++;
            continue;
        }
        int64_t sc = score(t, p, n, &c);
        if (sc > o->best || (sc == o->best && n < o->node)) {
            o->best = sc;
            o->node = n;
            o->mask = c.mask;
            o->mig_start = c.mig_start;
            if (sc == SCORE_MAX(t)) /* nodes come in ascending order: none after can win */
                break;
        }
    }
}

static void scan_init(struct scan *o)
{
    memset(o, 0, sizeof(*o));
    o->best = -1;
    memset(o->model_ok, -1, sizeof(o->model_ok));
}

int gs__tsim_find(struct gs_tsim *t, int32_t pod, int only_node, const struct txn *x, size_t *node,
                  uint32_t *mask, int *capacity)
{
    struct rpod *p = &t->pods[pod];
    struct scan o;
    scan_init(&o);
    size_t lo = only_node >= 0 ? (size_t)only_node : 0;
    size_t hi = only_node >= 0 ? lo + 1 : t->s->nnodes;
    /* A GPU pod can only go where a card is free or shared: visit those nodes only. */
    const int32_t *open = NULL;
    struct clean *cl = NULL;
    uint64_t shape = 0;
    uint32_t models = 0;
    int settled = 1;
    if (only_node < 0 && p->fit.ncards > 0) {
        if (!quota_anywhere(t, p, o.model_ok, o.quota_why)) {
            *capacity = 0;
            memcpy(p->reason,
                   o.quota_why[0] ? o.quota_why : "no node has a GPU model this pod allows",
                   sizeof(p->reason));
            return 1;
        }
        size_t nopen, nfreed;
        open = gs_fleet_open(t->fleet, &nopen);
        o.count[GS_FIT_GPU] = (int64_t)(t->s->nnodes - nopen);
        hi = nopen;
        for (int m = 0; m < GS_MODEL_MAX; m++)
            models |= o.model_ok[m] == 1 ? 1u << m : 0;
        /* Pods bound by the attempt under way only take room: a record still bounds where
         * the pod can go. Evicted ones give room the log does not show yet. */
        if (!x || x->evicted.n == 0) {
            shape = shape_of(t, p);
            cl = clean_of(t, shape);
            if (cl && (cl->models != models || (cl->resv && cl->resv != t->resv_gen)))
                cl = NULL;
            if (x && x->bound.n > 0) /* ... but a failure now says nothing of the real state */
                settled = 0;
        }
        if (cl && (nfreed = gs__tsim_logged_since(t, &t->rlog, cl->since, nopen, 0)) != SIZE_MAX) {
            scan(t, p, pod, t->scratch, 0, nfreed, only_node, &o);
            if (o.best >= 0) {
                *node = o.node;
                *mask = o.mask;
                p->fit.mig_start = o.mig_start;
                return 0;
            }
            if (o.reserved == 0) { /* still nowhere: the full search's reason stands */
                *capacity = 1;
                memcpy(p->reason, cl->reason, sizeof(p->reason));
                if (settled)
                    cl->since = t->rlog.n;
                return 1;
            }
            /* A freed node is held for the head: only a full search gives the reason right. */
            int8_t ok[GS_MODEL_MAX];
            memcpy(ok, o.model_ok, sizeof(ok));
            scan_init(&o);
            memcpy(o.model_ok, ok, sizeof(ok));
            o.count[GS_FIT_GPU] = (int64_t)(t->s->nnodes - nopen);
        }
    }
    scan(t, p, pod, open, lo, hi, only_node, &o);
    if (o.best >= 0) {
        *node = o.node;
        *mask = o.mask;
        p->fit.mig_start = o.mig_start;
        return 0;
    }
    *capacity = 1;
    why_nodes(t, p, o.count, o.quota, o.quota_why, o.reserved);
    if (shape && settled) {
        cl = &t->clean[shape & (GS_MEMO_SLOTS - 1)];
        cl->key = shape;
        cl->models = models;
        cl->resv = o.reserved ? t->resv_gen : 0;
        cl->since = t->rlog.n;
        memcpy(cl->reason, p->reason, sizeof(cl->reason));
    }
    return 1;
}

/*
 * A victim search visits every node, so pods of one shape that found no victims wait
 * GS_EVICT_BACKOFF_US before the next search, as kube-scheduler backs off unschedulable pods;
 * a pod's first try after it arrives (or is evicted) always searches.
 */
static int backing_off(struct gs_tsim *t, const struct rpod *p)
{
    /* Coarse on purpose: tenant, priority and card count decide who could be a victim. */
    uint64_t h = ((uint64_t)p->tenant * 1000003u + (uint64_t)p->level) * 1000003u +
                 (uint64_t)(p->fit.ncards * 2 + p->fit.whole) + 1;
    h *= 0x9e3779b97f4a7c15ULL;
    size_t i = (size_t)(h >> 32) & (GS_MEMO_SLOTS - 1);
    if (p->tried_epoch != 0 && t->bo_key[i] == h && t->now < t->bo_until[i])
        return 1;
    t->bo_key[i] = h;
    t->bo_until[i] = t->now + GS_EVICT_BACKOFF_US;
    return 0;
}

/* Place one pod now, preempting or reclaiming in the full scheme; 0 placed, 1 not. */
int gs__tsim_place_one(struct gs_tsim *t, int32_t pod, struct txn *x, int only_node, int *capacity)
{
    size_t node;
    uint32_t mask;
    int r = gs__tsim_find(t, pod, only_node, x, &node, &mask, capacity);
    if (r == 0)
        return gs__tsim_bind(t, pod, node, mask, x) < 0 ? -ENOMEM : 0;
    struct rpod *p = &t->pods[pod];
    if (t->way != GS_WAY_FULL || !*capacity || only_node >= 0 || backing_off(t, p))
        return 1;
    /* A pod that found no victims waits a while before looking again, as kube-scheduler
     * backs off an unschedulable pod: the search visits every node. */
    char why[GS_REASON_MAX];
    memcpy(why, t->pods[pod].reason, sizeof(why));
    /* preemptionPolicy: Never keeps a pod from preempting; its queue may still reclaim. */
    for (int mode = p->never_preempt ? EVICT_RECLAIM : EVICT_PREEMPT; mode <= EVICT_RECLAIM;
         mode++) {
        r = gs__tsim_evict_for(t, pod, (enum evict_mode)mode, x);
        if (r <= 0)
            return r;
    }
    memcpy(t->pods[pod].reason, why, sizeof(why));
    return 1;
}

/*
 * Gang colocation for the nvlink tier: when the whole gang fits one NVLink group somewhere in
 * the cluster, it must be placed inside one; NVLink groups are tried best fit first.
 */
static int place_gang_nvlink(struct gs_tsim *t, struct gang *g, const int32_t *m, int nm,
                             struct txn *x)
{
    int64_t best_free = -1;
    size_t nopen;
    const int32_t *live_open = gs_fleet_open(t->fleet, &nopen);
    int32_t *open = t->gang_open; /* a copy: binds below change the list */
    memcpy(open, live_open, nopen * sizeof(*open));
    for (int pass = 0; pass < 2; pass++) {
        int64_t want = best_free;
        for (size_t i = 0; i < nopen; i++) {
            size_t n = (size_t)open[i];
            int free_in[GS_GPUS_MAX];
            if (gs_fleet_node_free_cards(t->fleet, n) < g->cards ||
                gs_fleet_node_nvlink_max(t->fleet, n) < g->cards ||
                gs_fleet_nvlink_free(t->fleet, n, free_in) < g->cards)
                continue;
            for (int grp = 0; grp < GS_GPUS_MAX; grp++) {
                if (free_in[grp] < g->cards)
                    continue;
                if (pass == 0) {
                    if (best_free < 0 || free_in[grp] < best_free)
                        best_free = free_in[grp];
                    continue;
                }
                if (free_in[grp] != want)
                    continue;
                size_t b0 = x->bound.n;
                int k = 0, cap, r = 0;
                for (; k < nm; k++) {
                    t->pods[m[k]].fit.nvlink_only = 1u << grp;
                    r = gs__tsim_place_one(t, m[k], x, (int)n, &cap);
                    t->pods[m[k]].fit.nvlink_only = 0;
                    if (r)
                        break;
                }
                if (k == nm || r < 0 || gs__tsim_rollback(t, x, b0, x->evicted.n) < 0)
                    return k == nm ? 0 : r < 0 ? r : -ENOMEM;
            }
        }
        if (best_free < 0)
            break;
    }
    for (int k = 0; k < nm; k++)
        gs__say(t->pods[m[k]].reason, GS_REASON_MAX,
                "gang needs %lld GPUs inside one NVLink group (tier nvlink); no group has them "
                "free",
                (long long)g->cards);
    return 1;
}

/* Members of gang @g waiting to run, in member order. */
static int gang_waiting(const struct gs_tsim *t, const struct gang *g, int32_t *out)
{
    int n = 0;
    for (size_t i = 0; i < g->members.n; i++) {
        const struct rpod *p = &t->pods[g->members.v[i]];
        if (p->state == GS_POD_PENDING && p->arrived)
            out[n++] = g->members.v[i];
    }
    return n;
}

/*
 * All or nothing: a gang below minMember places its waiting members together, or none of them
 * (every bind and eviction of the attempt is undone). Once minMember run, later members go one
 * by one. Return: 0 placed, 1 not, < 0 error.
 */
int gs__tsim_place_gang(struct gs_tsim *t, int32_t group, int *capacity)
{
    struct gang *g = &t->gangs[group];
    int32_t *m = t->gang_members;
    int nm = gang_waiting(t, g, m), r = 1;
    struct txn *x = &t->txn_gang;
    x->bound.n = x->evicted.n = 0;
    *capacity = 1;
    if (g->running + nm < g->min) {
        for (int k = 0; k < nm; k++)
            gs__say(t->pods[m[k]].reason, GS_REASON_MAX,
                    "PodGroup %s: %d of minMember %d pods submitted", t->pods[m[k]].sp->group,
                    g->running + nm, g->min);
        *capacity = 0;
    } else if (g->running >= g->min) {
        r = 1; /* satisfied gangs grow one pod at a time through the normal path */
    } else if (t->pods[m[0]].fit.tier == GS_TIER_NVLINK && g->cards > 0 &&
               g->cards <= gs_fleet_nvlink_max(t->fleet)) {
        r = place_gang_nvlink(t, g, m, nm, x);
    } else {
        int k = 0;
        for (; k < nm; k++)
            if ((r = gs__tsim_place_one(t, m[k], x, -1, capacity)) != 0)
                break;
        if (r > 0) {
            char why[GS_REASON_MAX];
            memcpy(why, t->pods[m[k]].reason, sizeof(why));
            for (int j = 0; j < nm; j++)
                if (j != k)
                    gs__say(t->pods[m[j]].reason, GS_REASON_MAX,
                            "gang %s: member %s cannot be placed: %s", t->pods[m[j]].sp->group,
                            t->pods[m[k]].sp->name, why);
            r = gs__tsim_rollback(t, x, 0, 0) < 0 ? -ENOMEM : 1;
        }
    }
    if (r == 0)
        r = gs__tsim_commit(t, x, m[0]);
    return r;
}

static int live(const struct gs_tsim *t, const struct event *e)
{
    return t->pods[e->pod].gen == e->gen && t->pods[e->pod].state == GS_POD_RUNNING;
}

/*
 * EASY backfill: the head of the queue, blocked, is promised the node where it would fit first
 * as running pods end (their durations are the walltimes); a later pod may use that node only
 * if it ends before then. Found by releasing running pods from the fleet in order of end time
 * until the head fits, then putting every one back. A gang at the head gets no promise.
 */
int gs__tsim_reserve_for(struct gs_tsim *t, int32_t head)
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
    while (t->naux && k < GS_RESV_DEPTH && r == 0) {
        struct evi x = evi_pop(t->aux, &t->naux);
        for (size_t ch = 2 * x.at + 1; ch <= 2 * x.at + 2 && ch < t->nheap && r == 0; ch++)
            r = evi_push(&t->aux, &t->naux, &t->capaux, (struct evi){t->heap[ch], ch});
        struct event e = x.e;
        if (r < 0)
            break;
        if (!live(t, &e))
            continue;
        ev[k++] = e;
        struct rpod *p = &t->pods[e.pod];
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
        gs_fleet_commit(t->fleet, (size_t)p->node, &p->fit, p->mask, ev[k].pod);
    }
    if (r < 0) { /* out of memory half-way: no promise */
        t->head = t->resv_node = -1;
        return -ENOMEM;
    }
    return 0;
}

static void advance(struct gs_tsim *t, int64_t to)
{
    int64_t dt = to - t->last_t;
    if (dt <= 0)
        return;
    t->alloc_int += (gs_i128)gs_fleet_allocated(t->fleet) * dt;
    t->busy_int += (gs_i128)t->busy_now * dt;
    for (size_t i = 0; i <= t->s->ntenants; i++) {
        t->tenant_alloc_int[i] += (gs_i128)t->tenant_alloc[i] * dt;
        t->tenant_busy_int[i] += (gs_i128)t->tenant_busy[i] * dt;
    }
    for (size_t q = 0; q < t->nqueues; q++)
        t->q_alloc_int[q] += (gs_i128)t->q_used[q] * dt;
    t->last_t = to;
}

static int complete(struct gs_tsim *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    int r = unplace(t, pod);
    gs__vec_push(&t->rlog, p->node);
    p->state = GS_POD_COMPLETED;
    p->end = t->now;
    t->uses[p->use].end_us = t->now;
    if (p->fit.timeslice)
        gs__tsim_slice_close(t, pod);
    t->q_demand[p->queue] -= p->milli;
    t->epoch++;
    return r;
}

static int arrive(struct gs_tsim *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    p->arrived = 1;
    if (p->state == GS_POD_REJECTED)
        return 0;
    t->q_demand[p->queue] += p->milli;
    t->arrivals_since_pass = 1;
    return gs__tsim_pending_add(t, pod);
}

static int next_time(struct gs_tsim *t, int64_t *when)
{
    while (t->nheap && !live(t, &t->heap[0]))
        ev_pop(t->heap, &t->nheap);
    int64_t a =
        t->next_arrival < t->npods ? t->pods[t->arrival_order[t->next_arrival]].submit : INT64_MAX;
    int64_t c = t->nheap ? t->heap[0].t : INT64_MAX;
    *when = a < c ? a : c;
    *when = t->wake < *when ? t->wake : *when;
    return *when != INT64_MAX;
}

/* When an empty card's hold ends next; INT64_MAX when none does. O(cards). */
static int64_t next_hold_end(const struct gs_tsim *t)
{
    int64_t next = INT64_MAX;
    for (size_t n = 0; n < t->s->nnodes; n++) {
        int64_t at = gs_fleet_next_convertible(t->fleet, n);
        next = at < next ? at : next;
    }
    return next;
}

/* Holds end now: the nodes of those cards count as freed, so pending pods are tried there. */
static int holds_end(struct gs_tsim *t)
{
    gs_fleet_set_now(t->fleet, t->now - 1);
    for (size_t n = 0; n < t->s->nnodes; n++)
        if (gs_fleet_next_convertible(t->fleet, n) == t->now && gs__vec_push(&t->rlog, (int32_t)n))
            return -ENOMEM;
    gs_fleet_set_now(t->fleet, t->now);
    t->wake = INT64_MAX;
    t->epoch++;
    return 0;
}

static int loop(struct gs_tsim *t)
{
    int64_t when;
    int r = 0;
    while (r >= 0 && next_time(t, &when)) {
        if (t->horizon != GS_UNSET && when > t->horizon)
            break;
        if ((r = gs__tsim_timeline_sample(t, when)) < 0)
            break;
        advance(t, when);
        t->now = when;
        gs_fleet_set_now(t->fleet, when);
        if (when == t->wake && (r = holds_end(t)) < 0)
            break;
        while (r >= 0 && t->nheap && t->heap[0].t == when) {
            struct event e = ev_pop(t->heap, &t->nheap);
            if (live(t, &e))
                r = complete(t, e.pod);
        }
        while (r >= 0 && t->next_arrival < t->npods &&
               t->pods[t->arrival_order[t->next_arrival]].submit == when)
            r = arrive(t, t->arrival_order[t->next_arrival++]);
        if (r >= 0 && (t->epoch != t->pass_epoch || t->arrivals_since_pass)) {
            t->pass_epoch = t->epoch;
            t->arrivals_since_pass = 0;
            r = gs__tsim_pass(t);
            if (t->s->sim.min_hold_us > 0)
                t->wake = next_hold_end(t);
        }
        t->sum.events++;
    }
    if (r >= 0) {
        int64_t end = t->horizon != GS_UNSET ? t->horizon : t->now;
        if ((r = gs__tsim_timeline_sample(t, end + 1)) < 0)
            return r;
        advance(t, end);
        t->now = end;
        gs__tsim_timeline_end(t);
        for (size_t i = 0; t->ts_used && i < t->npods; i++)
            if (t->pods[i].fit.timeslice && t->pods[i].state == GS_POD_RUNNING) {
                gs__tsim_slice_settle(t, (int32_t)i);
                gs__tsim_slice_close(t, (int32_t)i);
            }
    }
    return r;
}

struct arrival {
    int64_t t;
    int32_t pod;
};

static int cmp_arrival(const void *a, const void *b)
{
    const struct arrival *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t ? 1 : (x->pod > y->pod) - (x->pod < y->pod);
}

static int order_arrivals(struct gs_tsim *t)
{
    struct arrival *a = malloc((t->npods ? t->npods : 1) * sizeof(*a));
    t->arrival_order = malloc((t->npods ? t->npods : 1) * sizeof(*t->arrival_order));
    if (!a || !t->arrival_order) {
        free(a);
        return -ENOMEM;
    }
    for (size_t i = 0; i < t->npods; i++)
        a[i] = (struct arrival){t->pods[i].submit, (int32_t)i};
    qsort(a, t->npods, sizeof(*a), cmp_arrival);
    for (size_t i = 0; i < t->npods; i++)
        t->arrival_order[i] = a[i].pod;
    free(a);
    return 0;
}

#define ALLOC(ptr, n) (((ptr) = gs__zalloc((n), sizeof(*(ptr)))) == NULL)

void *gs__zalloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

int gs__say(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n < 0 ? 0 : n >= (int)size ? (int)size - 1 : n;
}

static int alloc_state(struct gs_tsim *t)
{
    const struct gs_scenario *s = t->s;
    size_t nt = s->ntenants + 1, nodes = s->nnodes;
    t->nqueues = s->nqueues + 1;
    t->nzones = nodes;
    if (ALLOC(t->pods, t->npods) || ALLOC(t->ded_used, nt * GS_MODEL_MAX) ||
        ALLOC(t->sh_used, nt * GS_MODEL_MAX) || ALLOC(t->tenant_alloc, nt) ||
        ALLOC(t->tenant_busy, nt) || ALLOC(t->tenant_alloc_int, nt) ||
        ALLOC(t->tenant_busy_int, nt) || ALLOC(t->q_used, t->nqueues) ||
        ALLOC(t->q_demand, t->nqueues) || ALLOC(t->q_deserved, 2 * t->nqueues) ||
        ALLOC(t->q_alloc_int, t->nqueues) || ALLOC(t->q_weight, t->nqueues) ||
        ALLOC(t->rq_used, s->nrquotas) || ALLOC(t->card_busy, nodes * GS_GPUS_MAX) ||
        ALLOC(t->bo_key, GS_MEMO_SLOTS) || ALLOC(t->clean, GS_MEMO_SLOTS) ||
        ALLOC(t->scratch, nodes) || ALLOC(t->bo_until, GS_MEMO_SLOTS) ||
        ALLOC(t->resv_ev, GS_RESV_DEPTH) || ALLOC(t->ts_asked, nt) || ALLOC(t->ts_entitled, nt) ||
        ALLOC(t->ts_received, nt))
        return -ENOMEM;
    for (size_t q = 0; q < t->nqueues; q++)
        t->q_weight[q] = q < s->nqueues ? s->queues[q].weight : 1;
    for (size_t n = 0; n < nodes; n++)
        if (gs_fleet_node_gpus(t->fleet, n) > 0)
            t->models |= 1u << gs_fleet_node_model(t->fleet, n);
    /* Zones of the fleet are numbered below the node count; templates x zones stamps. */
    size_t nz = 0;
    for (size_t n = 0; n < nodes; n++)
        if ((size_t)gs_fleet_node_zone(t->fleet, n) + 1 > nz)
            nz = (size_t)gs_fleet_node_zone(t->fleet, n) + 1;
    t->nzones = nz ? nz : 1;
    if (ALLOC(t->seen, s->ntemplates * t->nzones) ||
        ALLOC(t->seen_reason, s->ntemplates * t->nzones))
        return -ENOMEM;
    return 0;
}

static int alloc_levels(struct gs_tsim *t)
{
    size_t gmax = 1;
    for (size_t g = 0; t->gangs && g < t->s->npodgroups; g++)
        gmax = t->gangs[g].members.n > gmax ? t->gangs[g].members.n : gmax;
    if (gs__tsim_victims_alloc(t) < 0 || ALLOC(t->gang_members, gmax) ||
        ALLOC(t->gang_open, t->s->nnodes))
        return -ENOMEM;
    if (ALLOC(t->blists, t->nlevels * t->nqueues) || ALLOC(t->running_by_level, t->nlevels) ||
        ALLOC(t->borrowed, (t->s->ntenants + 1) * t->nlevels))
        return -ENOMEM;
    return order_arrivals(t);
}

int gs_tsim_run(const struct gs_scenario *s, enum gs_way way, struct gs_tsim **out,
                struct gs_diag *d)
{
    if ((unsigned)way >= GS_WAY_COUNT)
        return gs_diag_error(d, "unknown way %d", (int)way);
    if (s->nnodes == 0)
        return gs_diag_error(d, "the scenario has no nodes (a Cluster document lists them)");
    struct gs_tsim *t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    t->s = s;
    t->way = way;
    t->npods = s->npods;
    t->head = t->resv_node = -1;
    t->epoch = 1;
    t->resv_gen = 1;
    t->horizon = s->sim.horizon_us;
    t->wake = INT64_MAX;
    int r = gs_fleet_new(s, &t->fleet, d);
    if (r == 0) {
        gs_fleet_set_modes(t->fleet, s->sim.convert, s->sim.min_hold_us);
        r = alloc_state(t);
    }
    if (r == 0)
        r = gs__tsim_timeline_new(t);
    if (r == 0)
        r = gs__tsim_admit(t, d);
    if (r == 0)
        r = alloc_levels(t);
    if (r == 0)
        r = loop(t);
    if (r == 0)
        r = gs__tsim_finish(t);
    if (r < 0) {
        gs_tsim_free(t);
        return r;
    }
    *out = t;
    return 0;
}

void gs_tsim_free(struct gs_tsim *t)
{
    if (!t)
        return;
    gs_fleet_free(t->fleet);
    gs__tsim_queue_free(t);
    gs__tsim_timeline_free(t);
    for (size_t i = 0; t->gangs && i <= t->s->npodgroups; i++)
        free(t->gangs[i].members.v);
    void *all[] = {t->pods,
                   t->arrival_order,
                   t->gangs,
                   t->ded_used,
                   t->sh_used,
                   t->tenant_alloc,
                   t->tenant_busy,
                   t->tenant_alloc_int,
                   t->tenant_busy_int,
                   t->q_used,
                   t->q_demand,
                   t->q_deserved,
                   t->q_alloc_int,
                   t->q_weight,
                   t->rq_used,
                   t->user_running,
                   t->levels,
                   t->heap,
                   t->uses,
                   t->card_busy,
                   t->vindex,
                   t->aux,
                   t->resv_ev,
                   t->vmemo,
                   t->clog.v,
                   t->readmit,
                   t->gang_members,
                   t->gang_open,
                   t->txn_gang.bound.v,
                   t->txn_gang.evicted.v,
                   t->txn_pod.bound.v,
                   t->txn_pod.evicted.v,
                   t->node_cards,
                   t->seen,
                   t->seen_reason,
                   t->running_by_level,
                   t->borrowed,
                   t->bo_key,
                   t->clean,
                   t->scratch,
                   t->rlog.v,
                   t->bo_until,
                   t->out,
                   t->tout,
                   t->qout,
                   t->kout,
                   t->kind_names,
                   t->ts_asked,
                   t->ts_entitled,
                   t->ts_received,
                   t->ts_shares};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        free(all[i]);
    free(t);
}

const struct gs_tsim_summary *gs_tsim_summary(const struct gs_tsim *t)
{
    return &t->sum;
}

const struct gs_tsim_work *gs_tsim_work(const struct gs_tsim *t)
{
    return &t->work;
}

size_t gs_tsim_pod_count(const struct gs_tsim *t)
{
    return t->npods;
}

const struct gs_tsim_pod *gs_tsim_pod(const struct gs_tsim *t, size_t i)
{
    return i < t->npods ? &t->out[i] : NULL;
}

size_t gs_tsim_use_count(const struct gs_tsim *t)
{
    return t->nuses;
}

const struct gs_tsim_use *gs_tsim_use(const struct gs_tsim *t, size_t i)
{
    return i < t->nuses ? &t->uses[i] : NULL;
}

size_t gs_tsim_tenant_count(const struct gs_tsim *t)
{
    return t->s->ntenants + 1;
}

const struct gs_tsim_tenant *gs_tsim_tenant(const struct gs_tsim *t, size_t i)
{
    return i <= t->s->ntenants ? &t->tout[i] : NULL;
}

size_t gs_tsim_queue_count(const struct gs_tsim *t)
{
    return t->nqueues;
}

const struct gs_tsim_queue *gs_tsim_queue(const struct gs_tsim *t, size_t i)
{
    return i < t->nqueues ? &t->qout[i] : NULL;
}

size_t gs_tsim_kind_count(const struct gs_tsim *t)
{
    return t->nkinds;
}

const struct gs_tsim_kind *gs_tsim_kind(const struct gs_tsim *t, size_t i)
{
    return i < t->nkinds ? &t->kout[i] : NULL;
}

const char *gs_tsim_node_name(const struct gs_tsim *t, int32_t i)
{
    return i >= 0 && (size_t)i < t->s->nnodes ? t->s->nodes[i].name : NULL;
}

int gs_tsim_node_model(const struct gs_tsim *t, int32_t i)
{
    return i >= 0 && (size_t)i < t->s->nnodes ? gs_fleet_node_model(t->fleet, (size_t)i) : -1;
}
