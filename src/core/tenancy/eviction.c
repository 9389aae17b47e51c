/*
 * Preemption and reclaim: the smallest set of whole gangs whose eviction lets a pod fit, checked
 * card by card on the real fleet and undone unless it is the set chosen.
 *
 * Who may be evicted. Preemption: pods of lower priority that are preemptible, and, for a pod
 * within its tenant's dedicated GPUQuota, other tenants' pods of no higher priority running
 * beyond their own dedicated quota (the guarantee: dedicated cards are the tenant's whenever it
 * asks). Reclaim (Volcano): a
 * queue below its deserved share takes back from reclaimable queues above theirs, never taking
 * a queue below its deserved share, and never growing past its own: that margin is the
 * hysteresis that keeps evict -> readmit -> evict cycles from starting. A pod charged to its
 * tenant's dedicated quota is never evicted for another tenant. Priority preemption across queues
 * (not the guarantee) by a pod whose queue would go past its deserved share never takes another
 * queue below its own: that would only be reclaimed back, each time discarding work (Volcano
 * keeps preemption inside a queue and moves capacity between queues by reclaim alone).
 * Elastic gangs shrink first: a member beyond its gang's minMember (counting completed members)
 * and beyond its task's minTaskMember is a unit of its own, evicted before any other victim, for
 * any pod of its priority or higher, as long as the gang keeps minMember and each task its
 * minimum; the gang goes whole only below that.
 * Against evict -> readmit -> evict churn (a restarted pod loses its work each time): a pod run
 * again after an eviction is not evicted in its first GS_READMIT_GRACE_US (KAI-Scheduler's
 * min-runtime idea), and one evicted GS_EVICTIONS_MAX times is not evicted again.
 * Which set: the one that discards the least work. An eviction's cost is the work its victims
 * lose, each since its last checkpoint (work.c; all of its run without one): per node, victims
 * are taken in order (priority, work lost, GPU share, newest first) until the pod fits, then
 * each is put back if the pod still fits without it; over nodes the set with the lowest
 * (highest victim priority, work lost, milli-GPU evicted, pods evicted, first found) wins. As
 * kube-scheduler's DefaultPreemption does (minCandidateNodesPercentage 10,
 * minCandidateNodesAbsolute 100), a search stops once max(100, 10 % of the nodes) nodes offer a
 * set, and the next search goes on from there, so large clusters are not scanned whole for
 * every preemptor; a cluster of up to 100 nodes is always searched whole, from node 0.
 */
#include "tenancy_impl.h"

#include "gpusched/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct unit {
    int32_t pod; /* a pod, or the first running member of its gang */
    int32_t prio;
    int guarded;   /* only priority preemption across queues may take it (not the guarantee) */
    int32_t group; /* an elastic gang's member beyond minMember: its gang; else -1 */
    int64_t lost;  /* milli-GPU x us of work its eviction would discard */
    int64_t milli, start;
    int32_t pods;
    int64_t seq; /* @pod's: the last tie-break */
    /* @pod's gang (-1 none) and queue, and the cards it holds on the node searched (a pod of no
     * gang): what the search reads of it later, kept so as not to read its record again */
    int32_t gang, queue, cards;
    int32_t here, held; /* on the node searched (units_here()): the pods a trial takes off and
                         * the cards they hold */
    int32_t slot;       /* a pod alone met in the node's list (struct vnode): its place; else -1 */
};

/*
 * What a victim search reads of each pod on a node, in the node's order, written by
 * gs__tn_victims_update() from the pods' records: none of it changes while a pod stays on its
 * node (gs_tenancy_restore() sets a start anew: gs__tn_victims_started()). A search reads these
 * few bytes a pod, side by side, then a pod alone that they do not rule out from its valone, and
 * reads the record of a gang's member only: most pods on a node are not a victim for a given pod,
 * and a pod's record is far from the next one's (a cache miss each).
 */
struct vpod {
    int32_t pod, prio, tenant, queue, group;
    uint8_t preemptible, charged, spent; /* spent: evicted GS_EVICTIONS_MAX times */
};

/* What makes a pod of no gang that may be taken a unit, read only for those: its record is not. */
struct valone {
    int64_t milli, start, seq;
    int32_t cards;
    int32_t readmitted;    /* evicted before: its readmission grace applies */
    int64_t lost, lost_at; /* the work it would lose, worked out at @lost_at (none: INT64_MIN) */
};

struct pick {
    int found;
    size_t node;
    int32_t prio;
    int64_t lost, milli, pods;
    struct vec units;
};

static int guaranteed(const struct gs_tenancy *t, const struct rpod *p)
{
    if (!p->fit.whole || (size_t)p->tenant >= t->pol->ntenants ||
        !t->pol->tenants[p->tenant].has_quota)
        return 0;
    const struct gs_tenant_spec *ts = &t->pol->tenants[p->tenant];
    for (int i = 0; i < ts->nquotas; i++)
        if (ts->quotas[i].model >= 0 && gs__tn_in_dedicated(t, p, ts->quotas[i].model))
            return 1;
    return 0;
}

int gs__tn_reclaimable(const struct gs_tenancy *t, int32_t q)
{
    return (size_t)q >= t->pol->nqueues || t->pol->queues[q].reclaimable;
}

/* Running members of @v's elastic gang beyond its minMember (0 for a pod of no such gang). */
static int32_t gang_extras(const struct gs_tenancy *t, const struct rpod *v)
{
    const struct gang *g = v->group >= 0 ? &t->gangs[v->group] : NULL;
    if (!g || !gs__tn_gang_elastic(g))
        return 0;
    int32_t over = g->running + g->done - g->min;
    return over > g->running ? g->running : over > 0 ? over : 0;
}

/* How many members of @v's elastic gang of @v's task may go alone: beyond minMember and beyond
 * its task's minTaskMember, so that the gang stays ready (gs__tn_gang_lacking()); 0 for a pod
 * of no such gang. */
static int32_t extras_of(const struct gs_tenancy *t, const struct rpod *v)
{
    int32_t over = gang_extras(t, v);
    int32_t spare = over > 0 ? gs__tn_task_spare(t, v->group, v) : 0;
    return spare < over ? spare : over;
}

static int eligible(const struct gs_tenancy *t, const struct rpod *p, const struct rpod *v,
                    enum evict_mode mode, int guarantee)
{
    if (v->state != GS_POD_RUNNING || (p->group >= 0 && v->group == p->group))
        return 0;
    if (v->preemptions >= GS_EVICTIONS_MAX ||
        (v->preemptions > 0 && t->now - v->start < GS_READMIT_GRACE_US))
        return 0;
    if (v->charged == 1 && v->tenant != p->tenant)
        return 0;
    if (mode == EVICT_PREEMPT && v->prio <= p->prio && extras_of(t, v) > 0)
        return 1; /* it grew into room others need now */
    if (mode == EVICT_RECLAIM)
        return v->queue != p->queue && gs__tn_reclaimable(t, v->queue) &&
               t->q_used[v->queue] > t->q_deserved[v->queue];
    /* The guarantee never reaches over a higher priority: evictions only go down or level,
     * so a pod evicted for a guarantee cannot turn round and evict its evictor's kin. */
    return (v->prio < p->prio && v->preemptible) ||
           (guarantee && v->tenant != p->tenant && v->prio <= p->prio);
}

/* May priority preemption alone take eligible @v for @p, from another queue? */
static int cross_queue(const struct rpod *p, int32_t queue, int32_t tenant, int32_t prio,
                       enum evict_mode mode, int guarantee)
{
    return mode == EVICT_PREEMPT && queue != p->queue &&
           !(guarantee && tenant != p->tenant && prio <= p->prio);
}

/* A pod as a unit for @p, alone (unit_of() goes on from there for a gang's member). */
static struct unit pod_unit(const struct rpod *p, const struct vpod *c, const struct valone *a,
                            enum evict_mode mode, int guarantee)
{
    return (struct unit){.pod = c->pod,
                         .prio = c->prio,
                         .guarded = cross_queue(p, c->queue, c->tenant, c->prio, mode, guarantee),
                         .group = -1,
                         .milli = a->milli,
                         .start = a->start,
                         .pods = 1,
                         .seq = a->seq,
                         .gang = c->group,
                         .queue = c->queue,
                         .cards = a->cards,
                         .slot = -1};
}

/* Would @p's queue go past its deserved share with it? */
static int past_deserved(const struct gs_tenancy *t, const struct rpod *p)
{
    return t->q_used[p->queue] + p->milli > t->q_deserved[p->queue];
}

/*
 * The unit a victim belongs to: its whole gang when it is a gang member; pod -1 when no member
 * may be taken. A gang goes whole or not at all, so one member that may be taken takes the
 * others with it — as Kueue takes a borrowing workload whole, members within their tenant's
 * dedicated quota included.
 */
static struct unit unit_of(const struct gs_tenancy *t, const struct rpod *p, int32_t pod,
                           enum evict_mode mode, int guarantee, int64_t *until)
{
    const struct rpod *v = &t->pods[pod];
    struct unit u =
        pod_unit(p, &(struct vpod){pod, v->prio, v->tenant, v->queue, v->group, 0, 0, 0},
                 &(struct valone){.milli = v->milli,
                                  .start = v->start,
                                  .seq = v->seq,
                                  .cards = __builtin_popcount(v->mask)},
                 mode, guarantee);
    if (extras_of(t, v) > 0) { /* it goes alone, before any victim that is not such a member */
        u.group = v->group;
        u.prio = INT32_MIN;
        u.guarded = 0; /* lent room: its queue's deserved share does not keep it */
        return u;
    }
    if (v->group < 0)
        return u;
    const struct gang *g = &t->gangs[v->group];
    u.milli = u.lost = 0;
    u.pods = 0;
    u.pod = -1;
    u.guarded = 1;
    int any = 0;
    for (size_t i = 0; i < g->members.n; i++) {
        const struct rpod *m = &t->pods[g->members.v[i]];
        if (m->state != GS_POD_RUNNING)
            continue;
        int64_t grace_end = m->start + GS_READMIT_GRACE_US; /* eligible() changes then */
        if (until && m->preemptions > 0 && grace_end > t->now && grace_end < *until)
            *until = grace_end;
        if (u.pod < 0) {
            u.pod = g->members.v[i];
            u.seq = m->seq;
            u.queue = m->queue;
        }
        int may = eligible(t, p, m, mode, guarantee);
        any |= may;
        u.guarded &= !may || cross_queue(p, m->queue, m->tenant, m->prio, mode, guarantee);
        u.prio = m->prio > u.prio ? m->prio : u.prio;
        u.milli += m->milli;
        u.pods++;
        if (m->start > u.start)
            u.start = m->start;
    }
    /* ...but priority preemption never takes a member of higher priority along with it. */
    int level_ok = u.prio < p->prio || (u.prio == p->prio && guarantee && v->tenant != p->tenant);
    if (!any || (mode == EVICT_PREEMPT && !level_ok))
        u.pod = -1;
    return u;
}

/* The work a unit's eviction would discard: its pod's, or its whole gang's (unit_of()'s
 * members). Apart from unit_of(): only units on a node where the pod could fit need it. */
static int64_t unit_lost(const struct gs_tenancy *t, const struct unit *u)
{
    const struct rpod *v = &t->pods[u->pod];
    if (u->gang < 0)
        return gs__tn_work_at_risk(t, v, u->cards);
    if (u->group >= 0)
        return gs__tn_work_at_risk(t, v, __builtin_popcount(v->mask));
    const struct gang *g = &t->gangs[u->gang];
    int64_t lost = 0;
    for (size_t i = 0; i < g->members.n; i++) {
        const struct rpod *m = &t->pods[g->members.v[i]];
        if (m->state == GS_POD_RUNNING)
            lost += gs__tn_work_at_risk(t, m, __builtin_popcount(m->mask));
    }
    return lost;
}

/*
 * A gang's unit is the same on every node where a search meets one of its members: unit_of()
 * reads the gang, the preemptor and the shares, none of which a search changes, and of the
 * member met only its tenant. A preemption search's unit stays right for later searches by pods
 * of the same priority, tenant, queue and guarantee (and not of the gang), until a member starts or
 * stops (the gang's running members, start times and counts: gs__tn_gang_changed()) or a member's
 * readmission grace ends (@until); a reclaim search's, which reads the queues' shares too, for
 * later reclaim searches that may take from the same queues (same_donors()). The work it would
 * lose is worked out once per search, as it moves with the clock. Both save reading every member on
 * every node holding one. Searches by pods of a few kinds take turns, so a gang keeps the units of
 * the last GS_GUNIT_WAYS kinds (a kind's replacing the oldest): one kept would be worked out anew
 * at nearly every turn.
 */
#define GS_GUNIT_WAYS 4

struct gway {
    uint64_t stamp, donors;
    int valid;
    int other; /* the member it was worked out from is of another tenant than the preemptor */
    int mode, guarantee;
    int32_t prio, tenant, queue; /* the preemptor's */
    int own;                     /* the gang is the preemptor's own */
    int64_t until;
    struct unit u;
};

struct gunit {
    /* The work the gang would lose, worked out at @lost_at: it holds for every search at that
     * time (a member's progress by then is what it is) until a member starts or stops. */
    int64_t lost, lost_at;
    int lost_kept;
    uint32_t next; /* the way written next when none is free */
    struct gway w[GS_GUNIT_WAYS];
};

void gs__tn_gang_changed(struct gs_tenancy *t, int32_t group)
{
    if (group < 0)
        return;
    struct gang *g = &t->gangs[group];
    int8_t el = (int8_t)gs__tn_gang_elastic(g);
    if (el != g->el) {
        t->elastic_running += el ? g->running : -g->running;
        g->el = el;
    }
    if ((size_t)group >= t->capgunits)
        return;
    for (int k = 0; k < GS_GUNIT_WAYS; k++)
        t->gunits[group].w[k].valid = 0;
    t->gunits[group].lost_kept = 0;
}

/* Were @w's reclaim units worked out with the queues over their shares as they are now? Of the
 * queues' shares, unit_of() reads only that (eligible()), for a preemptor of the queue in @w's key:
 * the queues the search may take from say it, where each has its bit (64 queues at most); else
 * the unit is the search's alone. */
static int same_donors(const struct gs_tenancy *t, const struct gway *w)
{
    return t->nqueues <= 64 ? w->donors == t->vdonors : w->stamp == t->vsearch;
}

/* The unit kept in @g that unit_of() would give now for @p, met through a member of another
 * tenant (@other) or not; NULL none. */
static const struct unit *gunit_current(const struct gs_tenancy *t, const struct gunit *g,
                                        const struct rpod *p, enum evict_mode mode, int guarantee,
                                        int other)
{
    int own = p->group >= 0 && g - t->gunits == p->group;
    for (int k = 0; k < GS_GUNIT_WAYS; k++) {
        const struct gway *w = &g->w[k];
        if (w->valid && w->other == other && w->mode == (int)mode && w->guarantee == guarantee &&
            w->prio == p->prio && w->tenant == p->tenant && w->queue == p->queue && w->own == own &&
            t->now < w->until && (mode == EVICT_PREEMPT || same_donors(t, w)))
            return &w->u;
    }
    return NULL;
}

static int gunits_grow(struct gs_tenancy *t)
{
    size_t cap = t->capgunits;
    struct gunit *g = gs_grow(t->gunits, &cap, t->npgs ? t->npgs : 1, sizeof(*g), 64);
    if (!g)
        return -ENOMEM;
    memset(g + t->capgunits, 0, (cap - t->capgunits) * sizeof(*g));
    t->gunits = g;
    t->capgunits = cap;
    return 0;
}

static struct unit gang_unit(struct gs_tenancy *t, const struct rpod *p, int32_t pod,
                             enum evict_mode mode, int guarantee)
{
    const struct rpod *v = &t->pods[pod];
    int other = v->tenant != p->tenant;
    struct gunit *g =
        (size_t)v->group < t->capgunits && v->state == GS_POD_RUNNING ? &t->gunits[v->group] : NULL;
    const struct unit *kept = g ? gunit_current(t, g, p, mode, guarantee, other) : NULL;
    if (kept)
        return *kept;
    int64_t until = INT64_MAX;
    struct unit u = unit_of(t, p, pod, mode, guarantee, &until);
    if (!g)
        return u;
    int k = 0;
    while (k < GS_GUNIT_WAYS && g->w[k].valid)
        k++;
    if (k == GS_GUNIT_WAYS)
        k = (int)(g->next++ % GS_GUNIT_WAYS);
    g->w[k] = (struct gway){.stamp = t->vsearch,
                            .donors = t->vdonors,
                            .valid = 1,
                            .other = other,
                            .mode = (int)mode,
                            .guarantee = guarantee,
                            .prio = p->prio,
                            .tenant = p->tenant,
                            .queue = p->queue,
                            .own = p->group >= 0 && v->group == p->group,
                            .until = until,
                            .u = u};
    return u;
}

/* unit_lost(), a gang's once per time it is asked at. */
static int64_t unit_lost_once(struct gs_tenancy *t, const struct unit *u)
{
    int32_t group = u->gang;
    if (u->group >= 0 || group < 0 || (size_t)group >= t->capgunits)
        return unit_lost(t, u);
    struct gunit *g = &t->gunits[group];
    if (!g->lost_kept || g->lost_at != t->now) {
        g->lost = unit_lost(t, u);
        g->lost_at = t->now;
        g->lost_kept = 1;
    }
    return g->lost;
}

/*
 * A search's gang units at hand: the unit gunit_current() gave for a gang and the work it would
 * lose, kept for the rest of the search by gang (direct-mapped; a gang meeting another's entry is
 * looked up in its gunit again). Within a search neither changes (see gunit_current()), and a
 * gang has members on many of the nodes visited: the gunit, far from the node's pods, is then
 * read once, not on every node.
 */
#define GS_GMEMO 256

struct gmemo {
    int32_t group[GS_GMEMO]; /* -1 empty */
    int32_t other[GS_GMEMO];
    int64_t lost[GS_GMEMO]; /* -1 not yet worked out */
    struct unit u[GS_GMEMO];
};

static void gmemo_clear(struct gmemo *m)
{
    memset(m->group, 0xff, sizeof(m->group));
}

static const struct unit *gmemo_find(const struct gmemo *m, int32_t group, int other)
{
    size_t k = (size_t)group & (GS_GMEMO - 1);
    return m->group[k] == group && m->other[k] == other ? &m->u[k] : NULL;
}

static void gmemo_put(struct gmemo *m, int32_t group, int other, const struct unit *u)
{
    size_t k = (size_t)group & (GS_GMEMO - 1);
    m->group[k] = group;
    m->other[k] = other;
    m->lost[k] = -1;
    m->u[k] = *u;
}

/* unit_lost_once() through the memo: a gang's work lost is worked out once per search. */
static int64_t unit_lost_memo(struct gs_tenancy *t, struct gmemo *m, const struct unit *u)
{
    size_t k = (size_t)u->gang & (GS_GMEMO - 1);
    if (u->group >= 0 || u->gang < 0 || m->group[k] != u->gang)
        return unit_lost_once(t, u);
    if (m->lost[k] < 0)
        m->lost[k] = unit_lost_once(t, u);
    return m->lost[k];
}

static int unit_less(const struct unit *a, const struct unit *b)
{
    if (a->prio != b->prio)
        return a->prio < b->prio;
    if (a->lost != b->lost)
        return a->lost < b->lost;
    if (a->milli != b->milli)
        return a->milli < b->milli;
    if (a->start != b->start)
        return a->start > b->start;
    return a->seq < b->seq;
}

static int evict_unit(struct gs_tenancy *t, int32_t pod, struct txn *y)
{
    const struct rpod *v = &t->pods[pod];
    if (v->group < 0)
        return gs__tn_evict(t, pod, y);
    const struct gang *g = &t->gangs[v->group];
    for (size_t i = 0; i < g->members.n; i++)
        if (t->pods[g->members.v[i]].state == GS_POD_RUNNING) {
            int r = gs__tn_evict(t, g->members.v[i], y);
            if (r < 0)
                return r;
        }
    return 0;
}

struct vnode {
    struct vpod *v; /* @cap of them, then @cap valone (@a) in the same block */
    struct valone *a;
    size_t n, cap;
    int ok; /* @v holds every pod on the node (it could be allocated) */
};

void gs__tn_victims_free(struct gs_tenancy *t)
{
    for (size_t i = 0; i < t->nvpods; i++)
        free(t->vpods[i].v);
    free(t->vpods);
}

/* Could eligible() take a pod of whom @c is known, its state and readmission grace aside? */
static int may_take(const struct gs_tenancy *t, const struct rpod *p, const struct vpod *c,
                    enum evict_mode mode, int guarantee)
{
    if ((p->group >= 0 && c->group == p->group) || c->spent ||
        (c->charged == 1 && c->tenant != p->tenant))
        return 0;
    if (mode == EVICT_RECLAIM)
        return c->queue != p->queue && gs__tn_reclaimable(t, c->queue) &&
               t->q_used[c->queue] > t->q_deserved[c->queue];
    return (c->prio < p->prio && c->preemptible) ||
           (guarantee && c->tenant != p->tenant && c->prio <= p->prio);
}

/* eligible() and unit_of() for a pod of no gang that may_take() takes, from what the index keeps
 * of it; pod -1 when it may not be taken. */
static struct unit alone_unit(const struct gs_tenancy *t, const struct rpod *p,
                              const struct vpod *c, const struct valone *a, enum evict_mode mode,
                              int guarantee)
{
    if (a->readmitted && t->now - a->start < GS_READMIT_GRACE_US)
        return (struct unit){.pod = -1};
    return pod_unit(p, c, a, mode, guarantee);
}

/* Eligible units with a pod on @node, in no order and without the work they would lose (see
 * sort_units()); the count. A gang is worked out once per node. @takes: bit i what may_take()
 * says of the node's i-th pod alone (fetch_work()), for its first 64; NULL: asked here. */
static size_t node_units(struct gs_tenancy *t, const struct rpod *p, size_t node,
                         enum evict_mode mode, int guarantee, struct gmemo *memo,
                         const uint64_t *takes, struct unit *out)
{
    int32_t groups[GS_GPUS_MAX * 4];
    const struct vnode *vn = &t->vpods[node];
    /* The units found do not depend on the order the pods are met in while no limit below is
     * reached (a gang's members share its namespace, so its tenant), so the list, which has
     * the node's pods but not always in the fleet's order (trials take pods off and put them
     * back), serves as it is; else the fleet's order is followed, as it always was. */
    int own = vn->ok && vn->n <= GS_GPUS_MAX * 4;
    size_t n = 0, ng = 0, np = own ? vn->n : gs_fleet_pod_count(t->fleet, node);
    for (size_t i = 0; i < np && n < GS_GPUS_MAX * 4; i++) {
        int32_t vid = own ? vn->v[i].pod : gs_fleet_pod_at(t->fleet, node, i);
        const struct vpod *c = i < vn->n && vn->v[i].pod == vid ? &vn->v[i] : NULL;
        if (c && c->group < 0) { /* alone: eligible() or not, its record unread */
            if (takes && i < 64 ? !(*takes >> i & 1) : !may_take(t, p, c, mode, guarantee))
                continue;
            struct unit a = alone_unit(t, p, c, &vn->a[i], mode, guarantee);
            a.slot = (int32_t)i;
            if (a.pod >= 0)
                out[n++] = a;
            continue;
        }
        size_t g = 0;
        while (c && c->group >= 0 && g < ng && groups[g] != c->group)
            g++;
        if (c && c->group >= 0 && g < ng)
            continue; /* its gang is a unit here already */
        int other = c && c->tenant != p->tenant;
        const struct gunit *gu = c && (size_t)c->group < t->capgunits ? &t->gunits[c->group] : NULL;
        const struct unit *kept = gu ? gmemo_find(memo, c->group, other) : NULL;
        if (gu && !kept && (kept = gunit_current(t, gu, p, mode, guarantee, other)))
            gmemo_put(memo, c->group, other, kept);
        struct unit u;
        if (kept) {
            u = *kept; /* a gang (not alone: gang_unit() made it) met on another node */
            if (ng < sizeof(groups) / sizeof(groups[0]))
                groups[ng++] = c->group;
        } else {
            const struct rpod *v = &t->pods[vid];
            int alone = v->group < 0 || extras_of(t, v) > 0;
            g = 0;
            while (!alone && g < ng && groups[g] != v->group)
                g++;
            if ((!alone && g < ng) || (alone && !eligible(t, p, v, mode, guarantee)))
                continue;
            if (!alone && ng < sizeof(groups) / sizeof(groups[0]))
                groups[ng++] = v->group;
            u = alone ? unit_of(t, p, vid, mode, guarantee, NULL)
                      : gang_unit(t, p, vid, mode, guarantee);
        }
        int dup = u.pod < 0;
        for (size_t k = 0; k < n && !dup; k++)
            dup = out[k].pod == u.pod;
        if (!dup)
            out[n++] = u;
    }
    return n;
}

/* Each unit's work lost, then the units in eviction order (unit_less(): a total order, seq
 * being unique, so the order does not depend on how they were found). */
static void sort_units(struct gs_tenancy *t, struct gmemo *memo, size_t node, struct unit *u,
                       size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct unit x = u[i];
        struct valone *a = x.slot >= 0 ? &t->vpods[node].a[x.slot] : NULL;
        if (!a) {
            x.lost = unit_lost_memo(t, memo, &x);
        } else if (a->lost_at == t->now) { /* a pod alone: as a search at this time found */
            x.lost = a->lost;
        } else {
            a->lost = x.lost = unit_lost(t, &x);
            a->lost_at = t->now;
        }
        size_t k = i;
        for (; k > 0 && unit_less(&x, &u[k - 1]); k--)
            u[k] = u[k - 1];
        u[k] = x;
    }
}

static int fits(struct gs_tenancy *t, const struct rpod *p, size_t node)
{
    struct gs_fit_choice c;
    return gs_fleet_fit(t->fleet, node, &p->fit, &c) == GS_FIT_OK;
}

/* The pods of the units in @use on @node into @off (units_here() counted them, and try_set()
 * that they fit): from the node's own pod list (@own, when it is whole), else in the fleet's order,
 * which taking them off and putting them back in reverse keeps. */
static size_t units_off(const struct gs_tenancy *t, size_t node, const struct unit *u, uint64_t use,
                        size_t n, int own, int32_t *off)
{
    const struct vnode *vn = &t->vpods[node];
    own &= vn->ok;
    size_t k = 0, np = own ? vn->n : gs_fleet_pod_count(t->fleet, node);
    for (size_t i = 0; i < n; i++) {
        if (!(use & (1ull << i)))
            continue;
        int32_t group = u[i].group >= 0 ? -1 : u[i].gang;
        for (size_t s = 0; s < np; s++) {
            int32_t pod = own ? vn->v[s].pod : gs_fleet_pod_at(t->fleet, node, s);
            int32_t g = group < 0 ? -1 : own ? vn->v[s].group : t->pods[pod].group;
            if (pod == u[i].pod || (group >= 0 && g == group))
                off[k++] = pod;
        }
    }
    return k;
}

/*
 * A trial: would @p fit on @node without the pods there of the units in @use (bit i = units[i])?
 * Whole-card requests are answered by the fleet without changes to it, after a bound (free cards
 * and the cards of the pods taken off) that rules most sets out unasked; others by taking the
 * pods off and putting them back. Reclaim may not take a queue below its deserved share, counting
 * every unit of the set, nor may priority preemption across queues for a pod whose own queue
 * would go past its share. 1 fits, 0 not, -ENOMEM.
 */
static int try_set(struct gs_tenancy *t, const struct rpod *p, size_t node, const struct unit *u,
                   uint64_t use, size_t n, enum evict_mode mode)
{
    int32_t off[GS_GPUS_MAX * 4];
    size_t k = 0;
    int64_t cards = gs_fleet_node_free_cards(t->fleet, node);
    int past = mode == EVICT_PREEMPT && past_deserved(t, p);
    for (size_t i = 0; i < n; i++) {
        if (!(use & (1ull << i)))
            continue;
        int32_t q = u[i].queue;
        int64_t taken = 0, alone = 0, alone_task = 0;
        const struct rpod *v = u[i].group >= 0 ? &t->pods[u[i].pod] : NULL;
        for (size_t j = 0; j <= i; j++) {
            int mate = (use & (1ull << j)) && v && u[j].group == u[i].group;
            if ((use & (1ull << j)) && u[j].queue == q)
                taken += u[j].milli;
            alone += mate;
            alone_task += mate && t->pods[u[j].pod].task == v->task;
        }
        if (v && (alone > gang_extras(t, v) || alone_task > extras_of(t, v)))
            return 0; /* an elastic gang's member alone: the gang keeps minMember and each task
                       * its minTaskMember */
        if ((mode == EVICT_RECLAIM || (past && u[i].guarded)) &&
            t->q_used[q] - taken < t->q_deserved[q])
            return 0;
        if (k + (size_t)u[i].here > sizeof(off) / sizeof(off[0]))
            return -ENOMEM;
        k += (size_t)u[i].here;
        cards += u[i].held;
    }
    int whole = p->fit.whole && !p->fit.mig && p->fit.ncards > 0; /* gs_fleet_fits_without()'s */
    if (whole && cards < p->fit.ncards)
        return 0; /* what the fleet would say: too few cards could be free */
    k = units_off(t, node, u, use, n, whole, off);
    int r = gs_fleet_fits_without(t->fleet, node, &p->fit, off, k);
    if (r != -EINVAL)
        return r;
    for (size_t i = 0; i < k; i++) {
        const struct rpod *v = &t->pods[off[i]];
        if (gs_fleet_release(t->fleet, node, &v->fit, v->mask, off[i]) < 0)
            return -ENOMEM; /* cannot happen: each is on @node once */
    }
    r = fits(t, p, node);
    while (k-- > 0) {
        const struct rpod *v = &t->pods[off[k]];
        if (gs_fleet_commit(t->fleet, node, &v->fit, v->mask, off[k]) < 0)
            r = -ENOMEM; /* cannot happen: the state it left is restored in reverse order */
    }
    return r;
}

/* Could a set whose last unit added is @k (so holding it, prio, work and size at least its)
 * come before @b? */
static int may_beat(const struct pick *b, const struct unit *k)
{
    return !b->found || (k->prio != b->prio     ? k->prio < b->prio
                         : k->lost != b->lost   ? k->lost < b->lost
                         : k->milli != b->milli ? k->milli < b->milli
                                                : k->pods < b->pods);
}

/*
 * The smallest set on @node, as a bit set of @u, or 0 when none makes @p fit. The units are
 * added in order until @p fits, then each is dropped that it fits without. When taking more
 * pods off can only leave more room (no share or minMember limit on any unit added: see
 * try_set()), the last unit added stays in the set, so a set that cannot beat @best with that
 * unit alone is left as it is: consider() turns it down whatever is dropped.
 */
static int node_set(struct gs_tenancy *t, const struct rpod *p, size_t node, const struct unit *u,
                    size_t n, enum evict_mode mode, const struct pick *best, uint64_t *set)
{
    t->work.victim_trials++;
    uint64_t use = 0;
    int r = 0, past = mode == EVICT_PREEMPT && past_deserved(t, p), mono = mode == EVICT_PREEMPT;
    size_t i = 0;
    for (; i < n && r == 0; i++) {
        use |= 1ull << i;
        mono &= u[i].group < 0 && !(past && u[i].guarded);
        r = try_set(t, p, node, u, use, n, mode);
    }
    if (r > 0 && mono && !may_beat(best, &u[i - 1]))
        n = 0;
    for (i = 0; r > 0 && i < n; i++) {
        if (!(use & (1ull << i)))
            continue;
        int without = try_set(t, p, node, u, use & ~(1ull << i), n, mode);
        if (without < 0)
            r = without;
        else if (without)
            use &= ~(1ull << i);
    }
    *set = use;
    return r;
}

static void consider(struct pick *b, size_t node, const struct unit *u, size_t n, uint64_t set)
{
    int32_t prio = INT32_MIN;
    int64_t lost = 0, milli = 0, pods = 0;
    for (size_t i = 0; i < n; i++)
        if (set & (1ull << i)) {
            prio = u[i].prio > prio ? u[i].prio : prio;
            lost += u[i].lost;
            milli += u[i].milli;
            pods += u[i].pods;
        }
    if (b->found && (prio != b->prio     ? prio > b->prio
                     : lost != b->lost   ? lost > b->lost
                     : milli != b->milli ? milli > b->milli
                                         : pods >= b->pods))
        return;
    b->found = 1;
    b->node = node;
    b->prio = prio;
    b->lost = lost;
    b->milli = milli;
    b->pods = pods;
    b->units.n = 0;
    for (size_t i = 0; i < n; i++) /* an elastic gang's member going alone as -(pod + 1) */
        if (set & (1ull << i))
            gs__vec_push(&b->units, u[i].group >= 0 ? -u[i].pod - 1 : u[i].pod);
}

/* Is there anyone at all this search could evict? Counters, not a scan. */
static int worth_trying(const struct gs_tenancy *t, const struct rpod *p, enum evict_mode mode,
                        int guarantee)
{
    if (mode == EVICT_RECLAIM) {
        if (t->q_used[p->queue] + p->milli > t->q_deserved[p->queue])
            return 0;
        for (size_t q = 0; q < t->nqueues; q++)
            if ((int32_t)q != p->queue && gs__tn_reclaimable(t, (int32_t)q) &&
                t->q_used[q] > t->q_deserved[q])
                return 1;
        return 0;
    }
    for (size_t l = (size_t)p->level + 1; l < t->nlevels; l++)
        if (t->running_by_level[l] > 0)
            return 1;
    if (t->elastic_running != 0) /* a member beyond an elastic gang's minMember, maybe */
        return 1;
    for (size_t tn = 0; guarantee && tn <= t->pol->ntenants; tn++)
        for (size_t l = (size_t)p->level; tn != (size_t)p->tenant && l < t->nlevels; l++)
            if (t->borrowed[tn * t->nlevels + l] > 0)
                return 1;
    return 0;
}

/* The running members of gang @group on @node and the cards they hold, into *@cards: from the
 * node's own pod list (the victim index's), or from the fleet's when that could not be made. */
static int32_t gang_here(const struct gs_tenancy *t, size_t node, int32_t group, int32_t *cards)
{
    const struct vnode *vn = &t->vpods[node];
    int32_t n = 0;
    *cards = 0;
    if (vn->ok) {
        for (size_t i = 0; i < vn->n; i++)
            if (vn->v[i].group == group) {
                n++;
                *cards += vn->a[i].cards;
            }
        return n;
    }
    for (size_t i = 0, np = gs_fleet_pod_count(t->fleet, node); i < np; i++) {
        const struct rpod *m = &t->pods[gs_fleet_pod_at(t->fleet, node, i)];
        if (m->group == group) {
            n++;
            *cards += __builtin_popcount(m->mask);
        }
    }
    return n;
}

/* Each unit's pods on @node and their cards (unit.here, unit.held): what try_set() takes off.
 * A pod alone or an elastic gang's member going alone is the one pod, met on @node. */
static void units_here(const struct gs_tenancy *t, size_t node, struct unit *u, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (u[i].gang < 0 || u[i].group >= 0) {
            u[i].here = 1;
            u[i].held = u[i].cards;
        } else {
            u[i].here = gang_here(t, node, u[i].gang, &u[i].held);
        }
    }
}

/*
 * Could @p fit on @node if every unit in @u that a set may hold went? Only whole-card requests
 * are bounded this way (free cards plus every card such a victim is on, an upper bound, an
 * elastic gang's member counting its whole gang's there); it saves working out the work each
 * unit would lose and trying evictions that cannot help. A unit whose queue's share limits it
 * (try_set()) and that alone would take its queue below its deserved share is in no set:
 * node_set() adds units in order, and from it on every set fails. Most reclaim searches' nodes
 * are ruled out by that alone.
 */
static int could_fit(const struct gs_tenancy *t, const struct rpod *p, size_t node,
                     const struct unit *u, size_t n, enum evict_mode mode)
{
    if (!p->fit.whole || p->fit.ncards == 0)
        return 1;
    int32_t cards = gs_fleet_node_free_cards(t->fleet, node), all;
    int past = mode == EVICT_PREEMPT && past_deserved(t, p);
    for (size_t i = 0; i < n; i++) {
        if (u[i].gang >= 0 && u[i].group >= 0) {
            cards += (gang_here(t, node, u[i].gang, &all), all);
        } else if ((mode == EVICT_PREEMPT && !(past && u[i].guarded)) ||
                   u[i].milli <= t->q_used[u[i].queue] - t->q_deserved[u[i].queue]) {
            cards += u[i].held;
        }
    }
    return cards >= p->fit.ncards;
}

/*
 * The victim index: per node and tenant (tenants beyond GS_VSLOTS_MAX share slots, which only
 * makes the index say "maybe" more often), the lowest priority level of a preemptible pod
 * charged beyond (open) or within (ded) dedicated quota, the lowest level of a pod beyond
 * dedicated quota (the guarantee's victims), and the queues with pods there. Per node, cards
 * held by preemptible pods of each level or lower, by pods beyond dedicated quota of each level
 * or lower, and by each queue's pods (each pod's cards counted, so a shared card may count
 * twice, and a gang member's at the lowest level, as its gang may take it: bounds). Pods
 * evicted GS_EVICTIONS_MAX times are left out of what they alone would make possible.
 * A search looks at a node's pods only when the index says a victim set may be there.
 */
#define GS_VSLOTS_MAX 16

struct vslot {
    int32_t low_open, low_ded, borrow;
    uint64_t q_open, q_ded;
};

/* Per node, the slots at once: may_hold() reads this and the preemptor's own slot. */
struct vsum {
    int32_t low_open;        /* the highest of the slots' */
    int32_t borrow, borrow2; /* the highest of the slots' and the highest of the others' */
    uint32_t borrow_slot;    /* the first slot with @borrow */
    uint64_t q_open;         /* all slots' */
    int32_t low_ded;         /* the highest of the slots': the preemptor's own is read only when
                              * this says it may hold one (the slots are far apart, nodes' sums not) */
    uint64_t q_ded;          /* all slots' */
};

struct vmemo {
    uint64_t key;
    size_t since;    /* change-log position at the failed search */
    uint32_t models; /* models whose quotas the pod passed */
    int64_t until;   /* the first end of a readmission grace running then */
};

/* The packed may_hold() of a preemption search by a pod of tenant slot @slot, with the guarantee
 * or without, by node: its victims' highest level + 1, the guarantee's borrowed level + 2 counted
 * (a node may hold a victim of a pod of level l when its byte is above l + 1). */
static uint8_t *vlevel_row(const struct gs_tenancy *t, int guarantee, size_t slot)
{
    return &t->vlevel[((size_t)guarantee * t->vslots + slot) * t->pol->nnodes];
}

int gs__tn_victims_alloc(struct gs_tenancy *t)
{
    size_t nodes = t->pol->nnodes;
    t->vslots = t->pol->ntenants + 1 < GS_VSLOTS_MAX ? t->pol->ntenants + 1 : GS_VSLOTS_MAX;
    if (!(t->vindex = gs__zalloc(nodes * t->vslots, sizeof(*t->vindex))) ||
        !(t->vsum = gs__zalloc(nodes, sizeof(*t->vsum))) ||
        !(t->vpods = gs__zalloc(nodes, sizeof(*t->vpods))) ||
        !(t->vmemo = gs__zalloc(GS_MEMO_SLOTS, sizeof(*t->vmemo))) ||
        !(t->vqueues = gs__zalloc(nodes, sizeof(*t->vqueues))) ||
        (t->nlevels + 2 < 128 && !(t->vlevel = gs__zalloc(2 * t->vslots * nodes, 1))))
        return -ENOMEM;
    t->nvpods = nodes;
    for (size_t i = 0; i < nodes * t->vslots; i++)
        t->vindex[i] = (struct vslot){-1, -1, -1, 0, 0};
    for (size_t i = 0; i < nodes; i++)
        t->vsum[i] = (struct vsum){-1, -1, -1, 0, 0, -1, 0};
    if (t->nlevels <= GS_NODE_CARDS_MAX && t->nqueues <= GS_NODE_CARDS_MAX &&
        !(t->node_cards = gs__zalloc(nodes * (2 * t->nlevels + 4 * t->nqueues), sizeof(int32_t))))
        return -ENOMEM;
    return 0;
}

/* The node cards' counts: by level then node, so that a search reading one level's count node
 * after node reads them side by side (bound k: preemptible pods' cards of level k or lower, then
 * nlevels + k beyond-quota pods', then 2 nlevels + q queue q's, 2 nlevels + nqueues + q those of
 * queue q's pods of no gang, 2 nlevels + 2 nqueues + q the least milli-GPU of one of these and
 * 2 nlevels + 3 nqueues + q the least of a gang's members (milli_low) of one of its gang pods:
 * INT32_MAX none). */
static int32_t *node_cards_at(const struct gs_tenancy *t, size_t k, size_t node)
{
    return &t->node_cards[k * t->nvpods + node];
}

static void cards_update(struct gs_tenancy *t, size_t node)
{
    size_t nl = t->nlevels, nq = t->nqueues, stride = 2 * nl + 4 * nq;
    size_t np = gs_fleet_pod_count(t->fleet, node);
    int32_t c[6 * GS_NODE_CARDS_MAX], *pc = c, *bc = pc + nl, *qc = bc + nl, *qa = qc + nq,
                                      *qm = qa + nq, *qg = qm + nq;
    memset(c, 0, stride * sizeof(*c));
    for (size_t q = 0; q < 2 * nq; q++)
        qm[q] = INT32_MAX;
    for (size_t i = 0; i < np; i++) {
        const struct rpod *v = &t->pods[gs_fleet_pod_at(t->fleet, node, i)];
        int32_t cards = __builtin_popcount(v->mask);
        if (v->preemptions >= GS_EVICTIONS_MAX && v->group < 0)
            continue;
        /* A gang member goes with its gang whatever its own priority, profile or charge: its
         * cards count at the lowest level, in every bound. */
        size_t l = v->group >= 0 ? nl - 1 : (size_t)v->level;
        pc[l] += v->preemptible || v->group >= 0 ? cards : 0;
        bc[l] += v->charged != 1 || v->group >= 0 ? cards : 0;
        qc[v->queue] += cards;
        if (v->group < 0) {
            qa[v->queue] += cards;
            qm[v->queue] = v->milli < qm[v->queue] ? (int32_t)v->milli : qm[v->queue];
        } else {
            int32_t low = t->gangs[v->group].milli_low;
            qg[v->queue] = low < qg[v->queue] ? low : qg[v->queue];
        }
    }
    for (size_t l = nl - 1; l-- > 0;) {
        pc[l] += pc[l + 1];
        bc[l] += bc[l + 1];
    }
    for (size_t k = 0; k < stride; k++)
        *node_cards_at(t, k, node) = c[k];
}

void gs__tn_victims_update(struct gs_tenancy *t, size_t node)
{
    struct vslot *vs = &t->vindex[node * t->vslots];
    for (size_t k = 0; k < t->vslots; k++)
        vs[k] = (struct vslot){-1, -1, -1, 0, 0};
    size_t np = gs_fleet_pod_count(t->fleet, node);
    struct vnode *vn = &t->vpods[node];
    struct vpod *vp =
        gs_grow(vn->v, &vn->cap, np ? np : 1, sizeof(struct vpod) + sizeof(struct valone), 8);
    vn->v = vp ? vp : vn->v;
    vn->a = vn->v ? (struct valone *)(vn->v + vn->cap) : NULL;
    vn->n = vp ? np : 0; /* none: node_units() reads the pods' records */
    vn->ok = vp != NULL;
    for (size_t i = 0; i < np; i++) {
        int32_t id = gs_fleet_pod_at(t->fleet, node, i);
        const struct rpod *v = &t->pods[id];
        if (vp) {
            vp[i] = (struct vpod){
                id,       v->prio,        v->tenant,           v->queue,
                v->group, v->preemptible, (uint8_t)v->charged, v->preemptions >= GS_EVICTIONS_MAX};
            vn->a[i] =
                (struct valone){v->milli,           v->start, v->seq,   __builtin_popcount(v->mask),
                                v->preemptions > 0, 0,        INT64_MIN};
        }
        if (v->preemptions >= GS_EVICTIONS_MAX)
            continue;
        struct vslot *s = &vs[(size_t)v->tenant % t->vslots];
        uint64_t q = 1ull << (v->queue & 63);
        int32_t low = v->preemptible ? v->level : -1;
        if (v->group >= 0) { /* its gang may be taken through any member: what it could be */
            const struct gang *g = &t->gangs[v->group];
            low = g->preemptible ? g->level_low : -1;
            if (gs__tn_gang_elastic(g)) /* beyond minMember, any pod of its level may take it */
                low = (int32_t)t->nlevels;
            s->q_open |= q;
            s->low_open = low > s->low_open ? low : s->low_open;
            s->borrow = g->level_low > s->borrow ? g->level_low : s->borrow;
        } else if (v->charged == 1) {
            s->q_ded |= q;
            s->low_ded = low > s->low_ded ? low : s->low_ded;
        } else {
            s->q_open |= q;
            s->low_open = low > s->low_open ? low : s->low_open;
            s->borrow = v->level > s->borrow ? v->level : s->borrow;
        }
    }
    struct vsum *sum = &t->vsum[node];
    *sum = (struct vsum){-1, -1, -1, 0, 0, -1, 0};
    for (size_t k = 0; k < t->vslots; k++) {
        sum->low_open = vs[k].low_open > sum->low_open ? vs[k].low_open : sum->low_open;
        sum->q_open |= vs[k].q_open;
        sum->low_ded = vs[k].low_ded > sum->low_ded ? vs[k].low_ded : sum->low_ded;
        sum->q_ded |= vs[k].q_ded;
        if (vs[k].borrow > sum->borrow) {
            sum->borrow2 = sum->borrow;
            sum->borrow = vs[k].borrow;
            sum->borrow_slot = (uint32_t)k;
        } else if (vs[k].borrow > sum->borrow2) {
            sum->borrow2 = vs[k].borrow;
        }
    }
    t->vqueues[node] = sum->q_open | sum->q_ded;
    int shared = t->pol->ntenants + 1 > t->vslots;        /* as may_hold() reads the guarantee's */
    for (size_t k = 0; t->vlevel && k < t->vslots; k++) { /* may_hold() for slot k, packed */
        int32_t low = sum->low_open > vs[k].low_ded ? sum->low_open : vs[k].low_ded;
        int32_t b = shared || sum->borrow_slot != k ? sum->borrow : sum->borrow2;
        vlevel_row(t, 0, k)[node] = (uint8_t)(low + 1);
        vlevel_row(t, 1, k)[node] = (uint8_t)((low > b ? low : b + 1) + 1);
    }
    if (t->node_cards)
        cards_update(t, node);
    if (gs__tn_log(&t->clog, (int32_t)node) < 0)
        t->clog_lost = 1; /* a change not logged: memos are not trusted again */
}

void gs__tn_victims_started(struct gs_tenancy *t, int32_t pod)
{
    const struct rpod *v = &t->pods[pod];
    struct vnode *vn = &t->vpods[v->node];
    for (size_t i = 0; i < vn->n; i++)
        if (vn->v[i].pod == pod) {
            vn->a[i].start = v->start;
            vn->a[i].lost_at = INT64_MIN; /* its progress is restored too */
        }
}

/*
 * Could evicting every pod a search may take on a node free the cards its pod asks for? Only
 * whole-card requests are bounded this way. Reclaim takes no unit that alone would take its
 * queue below its deserved share (could_fit()): no pod of no gang of more milli-GPU than the
 * queue's margin, no gang whose least member has more (a gang's unit is all its running members,
 * or an elastic gang's one). What the bound reads of the search (the counts' rows, the margins)
 * is looked up once per search (bound_init()), as it is read for most of the cluster's nodes.
 */
struct donor {
    const int32_t *all, *alone; /* queue q's cards, those of its pods of no gang (rows by node) */
    const int32_t *least_alone, *least_gang; /* the least milli-GPU of such a unit (by node) */
    int64_t margin;                          /* what the queue holds above its deserved share */
};

struct bound {
    int nvlink;   /* an NVLink group of the pod's card count is needed */
    int counted;  /* the node cards' counts bound the pod (whole cards, counts kept) */
    int32_t need; /* the cards it asks for */
    const int32_t *lower, *beyond; /* preemption: the level rows read (NULL: none) */
    size_t ndonors;
    struct donor donor[64]; /* reclaim: the queues it may take from */
};

static void bound_init(const struct gs_tenancy *t, const struct rpod *p, enum evict_mode mode,
                       int guarantee, uint64_t donors, struct bound *b)
{
    size_t nl = t->nlevels, nq = t->nqueues, l = (size_t)p->level;
    b->nvlink = p->fit.whole && p->fit.tier == GS_TIER_NVLINK && !p->fit.tier_soft;
    b->need = p->fit.ncards;
    /* members of elastic gangs at its level may go too: no bound counts them */
    b->counted = p->fit.whole && p->fit.ncards > 0 && t->node_cards &&
                 !(mode == EVICT_PREEMPT && l + 1 == nl);
    b->lower = b->beyond = NULL;
    b->ndonors = 0;
    if (!b->counted)
        return;
    if (mode == EVICT_PREEMPT) {
        b->lower = l + 1 < nl ? node_cards_at(t, l + 1, 0) : NULL;
        b->beyond = guarantee ? node_cards_at(t, nl + l, 0) : NULL;
        return;
    }
    for (uint64_t d = donors; d; d &= d - 1) { /* queue q < nq <= 64: bit q */
        size_t q = (size_t)__builtin_ctzll(d);
        b->donor[b->ndonors++] = (struct donor){
            .all = node_cards_at(t, 2 * nl + q, 0),
            .alone = node_cards_at(t, 2 * nl + nq + q, 0),
            .least_alone = node_cards_at(t, 2 * nl + 2 * nq + q, 0),
            .least_gang = t->vgang_stale ? NULL : node_cards_at(t, 2 * nl + 3 * nq + q, 0),
            .margin = t->q_used[q] - t->q_deserved[q]};
    }
}

static int cards_bound(const struct gs_tenancy *t, const struct bound *b, enum evict_mode mode,
                       size_t node)
{
    if (b->nvlink && gs_fleet_node_nvlink_max(t->fleet, node) < b->need)
        return 0; /* no NVLink group here is large enough, whatever goes */
    if (!b->counted)
        return 1;
    int64_t cards = gs_fleet_node_free_cards(t->fleet, node);
    if (mode == EVICT_RECLAIM) {
        for (size_t k = 0; k < b->ndonors; k++) {
            const struct donor *d = &b->donor[k];
            int64_t all = d->all[node], alone = d->alone[node];
            cards += d->least_alone[node] > d->margin ? 0 : alone;
            cards += d->least_gang && d->least_gang[node] > d->margin ? 0 : all - alone;
        }
    } else {
        cards += b->lower ? b->lower[node] : 0;
        cards += b->beyond ? b->beyond[node] : 0;
    }
    return cards >= b->need;
}

/*
 * Fruitless searches remembered. A preemption search that found no set anywhere stays fruitless
 * on every node whose pods have not changed since, as long as no pod there has come out of its
 * readmission grace, the preemptor's quotas pass the same models and its guarantee is the same:
 * the next search of the same pod kind looks only at the nodes changed since (the victim index
 * logs each change), in the order a full search would, and so gives the same answer. Reclaim
 * searches are not remembered: every bind moves the queues' shares they depend on.
 */

static uint64_t memo_key(const struct rpod *p, int bounds)
{
    uint64_t h = (p->shape ^ (uint64_t)(uint32_t)p->group * 0x9e3779b97f4a7c15ULL) * 2 + 1;
    return (h ^ (uint64_t)bounds) * 1099511628211ULL | 1;
}

/* The first end of a grace period running now; readmissions come in time order. */
static int64_t grace_until(struct gs_tenancy *t)
{
    while (t->readmit_head < t->nreadmit &&
           t->readmit[t->readmit_head] + GS_READMIT_GRACE_US <= t->now)
        t->readmit_head++;
    return t->readmit_head < t->nreadmit ? t->readmit[t->readmit_head] + GS_READMIT_GRACE_US
                                         : INT64_MAX;
}

void gs__tn_readmit_at(struct gs_tenancy *t, int64_t start)
{
    size_t k = t->nreadmit - 1; /* the entry gs__tn_bind() just added, at now */
    for (; k > t->readmit_head && t->readmit[k - 1] > start; k--)
        t->readmit[k] = t->readmit[k - 1];
    t->readmit[k] = start;
}

int gs__tn_readmitted(struct gs_tenancy *t, int64_t start)
{
    int64_t *v = gs_grow(t->readmit, &t->capreadmit, t->nreadmit + 1, sizeof(*v), 64);
    if (!v)
        return -ENOMEM;
    t->readmit = v;
    t->readmit[t->nreadmit++] = start;
    return 0;
}

struct search {
    const struct rpod *p;
    enum evict_mode mode;
    int guarantee;
    uint64_t donors;
    uint32_t models;
    struct pick best;
    size_t found;
    struct gmemo *memo;
    uint32_t slot; /* the preemptor's tenant's slot of the victim index */
    struct bound bound;
    size_t takes_node; /* fetch_work()'s last node and what may_take() says of its pods alone */
    uint64_t takes;
};

/* The preemptor's tenant's slot of the victim index on @node: read only if need be. */
static const struct vslot *own_slot(const struct gs_tenancy *t, const struct search *se,
                                    size_t node)
{
    return &t->vindex[node * t->vslots + se->slot];
}

/* May @node hold a pod search @se could take? Only "no" is sure. */
static int may_hold(const struct gs_tenancy *t, const struct search *se, size_t node)
{
    const struct rpod *p = se->p;
    if (t->vlevel && se->mode == EVICT_PREEMPT) /* packed: one byte, not the sums */
        return vlevel_row(t, se->guarantee, se->slot)[node] > p->level + 1;
    const struct vsum *sum = &t->vsum[node];
    if (se->mode == EVICT_RECLAIM)
        return (sum->q_open & se->donors) ||
               ((sum->q_ded & se->donors) && (own_slot(t, se, node)->q_ded & se->donors));
    if (sum->low_open > p->level ||
        (sum->low_ded > p->level && own_slot(t, se, node)->low_ded > p->level))
        return 1;
    /* the guarantee: a slot not the preemptor's own, or any when its own is shared */
    int shared = t->pol->ntenants + 1 > t->vslots;
    int32_t b = shared || sum->borrow_slot != se->slot ? sum->borrow : sum->borrow2;
    return se->guarantee && b >= p->level;
}

/* May @n offer a set, by what the index says? Reads no pod; a visit does not change its answer. */
static int worth_visit(const struct gs_tenancy *t, const struct search *se, size_t n)
{
    const struct rpod *p = se->p; /* the index first: its sums are read node after node */
    return may_hold(t, se, n) &&
           !(p->fit.ncards > 0 && !(se->models & (1u << gs_fleet_node_model(t->fleet, n)))) &&
           cards_bound(t, &se->bound, se->mode, n);
}

/* Look for a set on @n (worth_visit()); 1 when it offers one, 0 not, -ENOMEM. */
static int visit(struct gs_tenancy *t, struct search *se, size_t n)
{
    const struct rpod *p = se->p;
    struct unit u[GS_GPUS_MAX * 4];
    gs_fleet_prefetch(t->fleet, n, 1); /* its record came while the node before was searched */
    size_t nu = node_units(t, p, n, se->mode, se->guarantee, se->memo,
                           se->takes_node == n ? &se->takes : NULL, u);
    t->work.victim_nodes++;
    uint64_t set;
    if (!nu)
        return 0;
    units_here(t, n, u, nu);
    if (!could_fit(t, p, n, u, nu, se->mode))
        return 0;
    for (size_t i = 0; i < nu; i++) { /* what sort_units() reads of each: the work model */
        __builtin_prefetch(&t->pods[u[i].pod].rate);
        __builtin_prefetch(&t->pods[u[i].pod].left);
        __builtin_prefetch(&t->pods[u[i].pod].every_us);
    }
    sort_units(t, se->memo, n, u, nu);
    int r = node_set(t, p, n, u, nu, se->mode, &se->best, &set);
    if (r > 0) {
        consider(&se->best, n, u, nu, set);
        se->found++;
    }
    return r;
}

/* The @at-th node of the search's order: from @n0 on, or the memo's list (@nc). */
static size_t node_of(const struct gs_tenancy *t, size_t at, size_t nc, size_t n0)
{
    size_t n = n0 + at; /* both below the node count: no division */
    return nc != SIZE_MAX ? (size_t)t->scratch[at] : n >= t->pol->nnodes ? n - t->pol->nnodes : n;
}

/* From @i on (below @end), the first of @b[] above @thr, or @end; every byte below 128. Eight at
 * a time: most nodes a search passes hold no victim of a level it may take. */
static size_t first_above(const uint8_t *b, size_t i, size_t end, uint8_t thr)
{
    const uint64_t ones = 0x0101010101010101ULL, add = ones * (uint64_t)(127 - thr);
    for (; i + 8 <= end; i += 8) {
        uint64_t x;
        memcpy(&x, b + i, sizeof(x));
        uint64_t m = (x + add) & (ones << 7); /* a byte's top bit: it is above @thr */
        if (m)
            return i + (size_t)__builtin_ctzll(m) / 8;
    }
    while (i < end && b[i] <= thr)
        i++;
    return i;
}

/* From @i on (below @end), the first of @q[] sharing a bit with @donors, or @end. */
static size_t first_donor(const uint64_t *q, size_t i, size_t end, uint64_t donors)
{
    while (i < end && !(q[i] & donors))
        i++;
    return i;
}

/* From node @i on (below @end), the first not ruled out by may_hold()'s packed bounds (a
 * preemption's levels, a reclaim's queues), or @end. */
static size_t first_held(const struct gs_tenancy *t, const struct search *se, size_t i, size_t end)
{
    if (se->mode == EVICT_RECLAIM)
        return first_donor(t->vqueues, i, end, se->donors);
    return first_above(vlevel_row(t, se->guarantee, se->slot), i, end, (uint8_t)(se->p->level + 1));
}

/* From @at on (below @end), the first position whose node is worth a visit, or @end: positions
 * in node order from @n0 (wrapping round), or in the memo's list (@nc). In node order the nodes
 * may_hold()'s packed bounds rule out are passed in runs, unread. */
static size_t visit_from(const struct gs_tenancy *t, const struct search *se, size_t at, size_t end,
                         size_t nc, size_t n0)
{
    size_t nn = t->pol->nnodes;
    if (nc != SIZE_MAX || (se->mode == EVICT_PREEMPT && !t->vlevel)) {
        while (at < end && !worth_visit(t, se, node_of(t, at, nc, n0)))
            at++;
        return at;
    }
    for (size_t node = n0 + at >= nn ? n0 + at - nn : n0 + at; at < end;) {
        size_t stop = node + (nn - node < end - at ? nn - node : end - at);
        size_t to = first_held(t, se, node, stop);
        at += to - node;
        if (to < stop && worth_visit(t, se, to))
            return at;
        at += to < stop;
        node = to + 1 < nn && to < stop ? to + 1 : 0; /* at @end, or wrapped round to node 0 */
    }
    return end;
}

/* visit_from(), that node's pod lists then fetched into the cache while the node before it is
 * searched. */
static size_t next_visit(const struct gs_tenancy *t, const struct search *se, size_t at, size_t end,
                         size_t nc, size_t n0)
{
    at = visit_from(t, se, at, end, nc, n0);
    if (at >= end)
        return end;
    size_t node = node_of(t, at, nc, n0);
    const struct vnode *vn = &t->vpods[node];
    for (size_t b = 0; b < vn->n * sizeof(*vn->v); b += 64)
        __builtin_prefetch((const char *)vn->v + b);
    for (size_t b = 0; b < vn->n * sizeof(*vn->a); b += 64)
        __builtin_prefetch((const char *)vn->a + b);
    gs_fleet_prefetch(t->fleet, node, 0); /* for its trials */
    return at;
}

/* Start fetching the work models of the pods alone on @node this search may take (what
 * sort_units() reads), its pod list having come while the node before it was searched; which
 * they are is kept for its visit (se->takes): nothing may_take() reads changes in a search. */
static void fetch_work(const struct gs_tenancy *t, struct search *se, size_t node)
{
    const struct vnode *vn = &t->vpods[node];
    se->takes_node = node;
    se->takes = 0;
    for (size_t i = 0; i < vn->n; i++) {
        if (vn->v[i].group >= 0 || !may_take(t, se->p, &vn->v[i], se->mode, se->guarantee))
            continue;
        se->takes |= i < 64 ? 1ull << i : 0;
        if (vn->a[i].lost_at != t->now) {
            __builtin_prefetch(&t->pods[vn->v[i].pod].rate);
            __builtin_prefetch(&t->pods[vn->v[i].pod].left);
            __builtin_prefetch(&t->pods[vn->v[i].pod].every_us);
        }
    }
}

/* Every node, from where the last search stopped, or only those a memo leaves; 0 or -ENOMEM. */
static int search_nodes(struct gs_tenancy *t, struct search *se, struct vmemo *m)
{
    size_t nn = t->pol->nnodes, want = nn / 10 > 100 ? nn / 10 : 100, nc = SIZE_MAX;
    size_t n0 = t->evict_next < nn ? t->evict_next : 0;
    if (m && !t->clog_lost && m->models == se->models && t->now < m->until)
        nc = gs__tn_logged_since(t, &t->clog, m->since, nn / 4, n0);
    int r = 0;
    size_t last = n0, end = nc == SIZE_MAX ? nn : nc;
    for (size_t at = next_visit(t, se, 0, end, nc, n0); at < end && r >= 0 && se->found < want;) {
        size_t after = next_visit(t, se, at + 1, end, nc, n0);
        last = node_of(t, at, nc, n0);
        r = visit(t, se, last);
        if (after < end)
            fetch_work(t, se, node_of(t, after, nc, n0));
        at = after;
    }
    if (r >= 0 && se->found >= want) /* cut short: the next search starts after @last */
        t->evict_next = (last + 1) % nn;
    return r < 0 ? r : 0;
}

/* One mode of gs_tenancy_probe_may_evict(). */
static int may_evict(const struct gs_tenancy *t, const struct rpod *p, int32_t pod,
                     enum evict_mode mode)
{
    const struct rpod *v = &t->pods[pod];
    int guarantee = mode == EVICT_PREEMPT && guaranteed(t, p);
    if (mode == EVICT_RECLAIM && past_deserved(t, p)) /* as worth_trying() */
        return 0;
    if (v->group < 0 || extras_of(t, v) > 0)
        return eligible(t, p, v, mode, guarantee);
    return unit_of(t, p, pod, mode, guarantee, NULL).pod >= 0;
}

int gs_tenancy_probe_may_evict(const struct gs_tenancy *t, const struct gs_tenancy_probe *pr,
                               int32_t pod)
{
    const struct rpod *p = &pr->p;
    if (pod < 0 || (size_t)pod >= t->npods || t->pods[pod].state != GS_POD_RUNNING)
        return 0;
    return (!p->never_preempt && may_evict(t, p, pod, EVICT_PREEMPT)) ||
           may_evict(t, p, pod, EVICT_RECLAIM);
}

int gs__tn_evict_for(struct gs_tenancy *t, int32_t pod, enum evict_mode mode, struct txn *x)
{
    struct rpod *p = &t->pods[pod];
    int guarantee = mode == EVICT_PREEMPT && guaranteed(t, p);
    if (!worth_trying(t, p, mode, guarantee))
        return 1;
    if (t->npgs > t->capgunits && gunits_grow(t) < 0)
        return -ENOMEM;
    t->vsearch++;
    t->work.victim_searches++;
    struct gmemo memo;
    gmemo_clear(&memo);
    struct search se = {.p = p,
                        .mode = mode,
                        .guarantee = guarantee,
                        .memo = &memo,
                        .slot = (uint32_t)((size_t)p->tenant % t->vslots),
                        .takes_node = SIZE_MAX};
    char why[GS_REASON_MAX];
    for (int m = 0; m < GS_MODEL_MAX; m++)
        if ((t->models & (1u << m)) && gs__model_allowed(p->fit.model_mask, m) &&
            gs__quota_check(t, p, m, why, sizeof(why)))
            se.models |= 1u << m;
    if (t->model_limit)
        se.models &= t->model_limit;
    for (size_t q = 0; mode == EVICT_RECLAIM && q < t->nqueues; q++)
        if ((int32_t)q != p->queue && gs__tn_reclaimable(t, (int32_t)q) &&
            t->q_used[q] > t->q_deserved[q])
            se.donors |= 1ull << (q & 63); /* reclaim: queues (mod 64) above their share */
    t->vdonors = se.donors;
    bound_init(t, p, mode, guarantee, se.donors, &se.bound);
    /* A search bounded by the queues' shares (see try_set()) is remembered apart; shares that
     * move while no node changes may then leave a set unseen until one does: an eviction
     * missed for a while, never a wrong one. */
    uint64_t key = memo_key(p, guarantee * 2 + past_deserved(t, p));
    struct vmemo *m =
        mode == EVICT_PREEMPT && !t->model_limit ? &t->vmemo[key & (GS_MEMO_SLOTS - 1)] : NULL;
    int r = search_nodes(t, &se, m && m->key == key ? m : NULL);
    int64_t grace = r >= 0 && !se.best.found ? grace_until(t) : INT64_MAX;
    if (grace < t->retry_at) /* a victim it spared may be taken then: try the pod again */
        t->retry_at = grace;
    if (r >= 0 && m && !se.best.found)
        *m = (struct vmemo){key, gs__tn_log_end(&t->clog), se.models, grace};
    else if (m && m->key == key)
        m->key = 0;
    struct pick best = se.best;
    size_t b0 = x->bound.n, e0 = x->evicted.n;
    if (r >= 0 && best.found) {
        for (size_t i = 0; i < best.units.n && r >= 0; i++) {
            int32_t first = best.units.v[i], alone = first < 0;
            first = alone ? -first - 1 : first;
            const struct rpod *v = &t->pods[first];
            for (size_t k = 0; !alone && v->group >= 0 && k < t->gangs[v->group].members.n; k++)
                t->pods[t->gangs[v->group].members.v[k]].reclaimed = mode == EVICT_RECLAIM;
            t->pods[first].reclaimed = mode == EVICT_RECLAIM;
            r = alone ? gs__tn_evict(t, first, x) : evict_unit(t, first, x);
        }
        int cap, served = 0;
        if (r >= 0 && mode == EVICT_PREEMPT && !guarantee && !t->model_limit && p->group < 0)
            r = served = gs__tn_serve_higher(t, p->level, best.node, x);
        if (r >= 0) {
            size_t node;
            uint32_t mask;
            r = gs__tn_find(t, pod, (int)best.node, x, &node, &mask, &cap);
            if (r == 0)
                r = gs__tn_bind(t, pod, node, mask, x);
            else if (served) /* pods above it took the room: it preempts again if it can */
                r = 0;
            else if (gs__tn_rollback(t, x, b0, e0) < 0) /* held for the head of the queue */
                r = -ENOMEM;
            else
                best.found = 0;
        }
    }
    free(best.units.v);
    return r < 0 ? r : best.found ? 0 : 1;
}
