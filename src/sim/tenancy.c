/*
 * The multi-tenant simulator: the core scheduler (gpusched/tenancy.h) driven by a virtual clock.
 * Events are the scenario's arrivals, the pods' ends (their walltimes, as the scheduler stretches
 * them on time-sliced cards) and the end of card mode holds; at each instant the ends due come
 * first, then the arrivals, then a scheduling pass, whose decisions open and close the use
 * records the reports and bills read. Invariants: see gpusched/tsim.h.
 */
#include "tsim_impl.h"

#include "gpusched/diag.h"
#include "gpusched/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pod @i (scenario index, scheduler id @id) was bound: a use record opens. */
static int bound(struct gs_tsim *t, size_t i, int32_t id, const struct gs_decision *d)
{
    struct gs_tenancy_pod v;
    gs_tenancy_pod(t->sched, id, &v);
    struct gs_tsim_use *u = gs_grow(t->uses, &t->capuses, t->nuses + 1, sizeof(*u), 64);
    if (!u)
        return -ENOMEM;
    t->uses = u;
    t->uses[t->nuses] = (struct gs_tsim_use){.pod = (int32_t)i,
                                             .node = d->node,
                                             .gpu_mask = d->gpu_mask,
                                             .whole = v.whole,
                                             .timeslice = v.timeslice,
                                             .share_milli = d->share_milli,
                                             .units = v.units,
                                             .start_us = t->now,
                                             .end_us = -1,
                                             .mig = v.mig,
                                             .mig_start = v.mig_start};
    t->pods[i].use = (int32_t)t->nuses++;
    return 0;
}

/* Pod @i left its cards (evicted or done): its use record closes with what it received. */
static void left(struct gs_tsim *t, size_t i, int32_t share)
{
    struct gs_tsim_use *u = &t->uses[t->pods[i].use];
    u->end_us = t->now;
    if (u->timeslice)
        u->share_milli = share;
    t->pods[i].use = -1;
}

static int take(struct gs_tsim *t, const struct gs_decision *dec, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const struct gs_decision *d = &dec[k];
        size_t i = (size_t)t->scn_of[d->pod];
        if (d->kind == GS_DECIDE_BIND) {
            int r = bound(t, i, d->pod, d);
            if (r < 0)
                return r;
            continue;
        }
        left(t, i, d->share_milli);
        if (d->reclaim)
            t->sum.reclaims++;
        else
            t->sum.preemptions++;
        int r = gs__tsim_timeline_evicted(t, (int32_t)i, d->by >= 0 ? t->scn_of[d->by] : -1,
                                          d->reclaim);
        if (r < 0)
            return r;
    }
    return 0;
}

static int complete(struct gs_tsim *t, int32_t id)
{
    size_t i = (size_t)t->scn_of[id];
    int32_t share;
    int r = gs_tenancy_complete(t->sched, t->now, id, &share);
    if (r < 0)
        return r;
    left(t, i, share);
    t->pods[i].end = t->now;
    return 0;
}

/* Scenario pod @i arrives; it is the next_arrival-th (its place orders it, as a daemon's
 * arrival sequence orders its pods). */
static int arrive(struct gs_tsim *t, size_t i)
{
    char why[256];
    const struct gs_pod_spec *sp = &t->s->pods[i];
    int32_t id;
    int r =
        gs_tenancy_submit(t->sched, t->now, sp, (int64_t)t->next_arrival, &id, why, sizeof(why));
    if (r < 0)
        return r;
    if (r == 1) {
        t->pods[i].rejected = strdup(why);
        return t->pods[i].rejected ? 0 : -ENOMEM;
    }
    t->pods[i].id = id;
    t->scn_of[id] = (int32_t)i;
    return 0;
}

static int next_time(struct gs_tsim *t, int64_t *when)
{
    int64_t a = t->next_arrival < t->npods
                    ? t->s->pods[t->arrival_order[t->next_arrival]].arrival_us
                    : INT64_MAX;
    int64_t c = gs_tenancy_next_end(t->sched), w = gs_tenancy_wake(t->sched);
    int64_t f =
        t->next_node_event < t->nnode_events ? t->node_events[t->next_node_event].t : INT64_MAX;
    *when = a < c ? a : c;
    *when = w < *when ? w : *when;
    *when = f < *when ? f : *when;
    return *when != INT64_MAX;
}

static int node_event(struct gs_tsim *t, const struct node_event *e)
{
    return e->gpu < 0 ? gs_tenancy_node_ready(t->sched, e->t, e->node, e->ready, 1)
                      : gs_tenancy_card_health(t->sched, e->t, e->node, e->gpu, e->ready, e->evict);
}

/* The nodes and cards failing or coming back at @when (after the ends due then, before the
 * arrivals). */
static int node_events(struct gs_tsim *t, int64_t when)
{
    int r = 0;
    while (r >= 0 && t->next_node_event < t->nnode_events &&
           t->node_events[t->next_node_event].t == when)
        r = node_event(t, &t->node_events[t->next_node_event++]);
    return r;
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
        t->now = when;
        int32_t id;
        while (r >= 0 && gs_tenancy_due(t->sched, when, &id))
            r = complete(t, id);
        if (r >= 0)
            r = node_events(t, when);
        while (r >= 0 && t->next_arrival < t->npods &&
               t->s->pods[t->arrival_order[t->next_arrival]].arrival_us == when)
            r = arrive(t, (size_t)t->arrival_order[t->next_arrival++]);
        const struct gs_decision *dec;
        size_t n;
        if (r >= 0 && (r = gs_tenancy_schedule(t->sched, when, &dec, &n)) >= 0)
            r = take(t, dec, n);
        t->sum.events++;
    }
    if (r >= 0) {
        int64_t end = t->horizon != GS_UNSET ? t->horizon : t->now;
        if ((r = gs__tsim_timeline_sample(t, end + 1)) < 0)
            return r;
        t->now = end;
        gs__tsim_timeline_end(t);
        gs_tenancy_advance(t->sched, end);
        /* Time-sliced pods still running: their uses so far are metered at what they got. */
        for (size_t i = 0; i < t->npods; i++) {
            struct gs_tenancy_pod v;
            if (t->pods[i].use < 0 || gs_tenancy_pod(t->sched, t->pods[i].id, &v) < 0)
                continue;
            if (v.timeslice)
                t->uses[t->pods[i].use].share_milli = v.slice_milli;
        }
    }
    return r;
}

/*
 * --from-now: the clock starts at the snapshot's now. The nodes down by then go down; the pods
 * that arrived by then are submitted in file order (a snapshot lists them in the daemon's
 * arrival order) and those running are put back on their cards by the core's restore, the rule a
 * daemon restarting from its store follows; the cards take the mode history the snapshot gives
 * them; then the cards unhealthy by then fail, over the pods that still run there (a card that
 * drains), and a pass runs as the daemon's next would.
 */
static int start_from_now(struct gs_tsim *t, struct gs_diag *d)
{
    t->now = t->s->sim.now_us;
    int r = 0;
    size_t first = t->next_node_event;
    while (t->next_node_event < t->nnode_events && t->node_events[t->next_node_event].t <= t->now)
        t->next_node_event++;
    for (size_t k = first; r >= 0 && k < t->next_node_event; k++)
        if (t->node_events[k].gpu < 0)
            r = gs_tenancy_node_ready(t->sched, t->now, t->node_events[k].node,
                                      t->node_events[k].ready, 1);
    while (r >= 0 && t->next_arrival < t->npods &&
           t->s->pods[t->arrival_order[t->next_arrival]].arrival_us <= t->now) {
        size_t i = (size_t)t->arrival_order[t->next_arrival++];
        const struct gs_pod_spec *sp = &t->s->pods[i];
        char at[160], cards_at[160];
        snprintf(at, sizeof(at), "%.*s:%u:%u", (int)sizeof(sp->placed_src.file),
                 sp->placed_src.file, sp->placed_src.line, sp->placed_src.col);
        snprintf(cards_at, sizeof(cards_at), "%.*s:%u:%u", (int)sizeof(sp->placed_src.file),
                 sp->placed_src.file, sp->cards_line, sp->cards_col);
        if ((r = arrive(t, i)) < 0 || !sp->placed_node[0] || sp->placed_node_index < 0)
            continue;
        if (t->pods[i].rejected)
            return gs_diag_error(d, "%s: pod %s/%s runs on %s in the snapshot, but is refused: %s",
                                 at, sp->ns, sp->name, sp->placed_node, t->pods[i].rejected);
        r = gs_tenancy_restore(t->sched, t->pods[i].id, sp->placed_node_index, sp->placed_mask,
                               sp->placed_given & GS_PLACED_MIG ? sp->placed_mig_start : -1,
                               sp->placed_start_us);
        if (r == -EINVAL) /* the cards given are where to look: name them, not the node */
            return gs_diag_error(d,
                                 "%s: pod %s/%s cannot run on node %s where the snapshot puts "
                                 "it: %s",
                                 cards_at, sp->ns, sp->name, sp->placed_node,
                                 sp->placed_mask || (sp->placed_given & GS_PLACED_MIG)
                                     ? "those cards (or that MIG instance) are taken or do not "
                                       "hold it"
                                     : "sim.gpusched.io/gpus gives no card, and it asks some "
                                       "(or the node has no room for it)");
        struct gs_tenancy_pod v;
        if (r < 0 || (r = gs_tenancy_pod(t->sched, t->pods[i].id, &v)) < 0)
            continue;
        struct gs_decision dec = {
            .node = v.node, .gpu_mask = v.gpu_mask, .share_milli = v.share_milli};
        if ((r = bound(t, i, t->pods[i].id, &dec)) == 0)
            t->uses[t->nuses - 1].start_us = sp->placed_start_us;
    }
    /* No pod arrived: the scheduler's clock is still at its start, before a card's since. */
    if (r >= 0 && gs_tenancy_now(t->sched) < t->now)
        r = gs_tenancy_advance(t->sched, t->now);
    for (size_t k = 0; r >= 0 && k < t->s->sim.ncards; k++) {
        const struct gs_card_history *c = &t->s->sim.cards[k];
        r = gs_tenancy_card_mode(t->sched, c->index, c->gpu, c->mode, c->since_us);
        if (r == -EINVAL)
            return gs_diag_error(d,
                                 "%.*s:%u:%u: cardModes.cards: card %d of node %s cannot be "
                                 "in mode %s: the pods put back on it are not, or the node "
                                 "has no such mode",
                                 (int)sizeof(c->src.file), c->src.file, c->src.line, c->src.col,
                                 c->gpu, c->node, gs_card_mode_name((enum gs_card_mode)c->mode));
    }
    for (size_t k = first; r >= 0 && k < t->next_node_event; k++)
        if (t->node_events[k].gpu >= 0)
            r = gs_tenancy_card_health(t->sched, t->now, t->node_events[k].node,
                                       t->node_events[k].gpu, t->node_events[k].ready, 0);
    const struct gs_decision *dec;
    size_t n;
    if (r >= 0 && (r = gs_tenancy_schedule(t->sched, t->now, &dec, &n)) >= 0)
        r = take(t, dec, n);
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
        a[i] = (struct arrival){t->s->pods[i].arrival_us, (int32_t)i};
    qsort(a, t->npods, sizeof(*a), cmp_arrival);
    for (size_t i = 0; i < t->npods; i++)
        t->arrival_order[i] = a[i].pod;
    free(a);
    return 0;
}

static int cmp_node_event(const void *a, const void *b)
{
    const struct node_event *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t ? 1 : (x->order > y->order) - (x->order < y->order);
}

/* The Simulation's nodeFailures and cardFailures as events in time order: each a failure, and
 * a restore when it gives one. */
static int order_node_events(struct gs_tsim *t)
{
    const struct gs_sim_spec *sim = &t->s->sim;
    t->node_events = calloc(2 * sim->nfailures + 1, sizeof(*t->node_events));
    if (!t->node_events)
        return -ENOMEM;
    for (size_t i = 0; i < sim->nfailures; i++) {
        const struct gs_node_failure *f = &sim->failures[i];
        size_t n = t->nnode_events;
        int evict = f->gpu >= 0 && gs_xid_loses_work(f->xid);
        t->node_events[t->nnode_events++] =
            (struct node_event){f->at_us, f->index, 0, (int32_t)n, f->gpu, evict};
        if (f->restore_us != GS_UNSET)
            t->node_events[t->nnode_events++] =
                (struct node_event){f->restore_us, f->index, 1, (int32_t)n + 1, f->gpu, 0};
    }
    qsort(t->node_events, t->nnode_events, sizeof(*t->node_events), cmp_node_event);
    return 0;
}

/* Workload kinds (label gpusched.io/workload), numbered in scenario order of first use. */
static int kinds(struct gs_tsim *t)
{
    if (!(t->kind_names = calloc(t->npods + 1, sizeof(*t->kind_names))))
        return -ENOMEM;
    for (size_t i = 0; i < t->npods; i++) {
        const char *k = t->s->pods[i].workload[0] ? t->s->pods[i].workload : "-";
        size_t j = 0;
        while (j < t->nkinds && strcmp(t->kind_names[j], k) != 0)
            j++;
        if (j == t->nkinds)
            t->kind_names[t->nkinds++] = k;
        t->pods[i].kind = (int32_t)j;
    }
    return 0;
}

static void *zalloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

#define ALLOC(ptr, n) (((ptr) = zalloc((n), sizeof(*(ptr)))) == NULL)

static int alloc_state(struct gs_tsim *t)
{
    const struct gs_policy *pol = &t->s->policy;
    t->ntenants = pol->ntenants + 1;
    t->nqueues = gs_tenancy_queue_count(t->sched);
    if (ALLOC(t->pods, t->npods) || ALLOC(t->scn_of, t->npods))
        return -ENOMEM;
    for (size_t i = 0; i < t->npods; i++)
        t->pods[i] = (struct spod){.id = -1, .use = -1, .end = -1};
    if (kinds(t) < 0 || order_node_events(t) < 0)
        return -ENOMEM;
    return order_arrivals(t);
}

int gs_tsim_run(const struct gs_scenario *s, enum gs_way way, struct gs_tsim **out,
                struct gs_diag *d)
{
    struct gs_tenancy_opts o = {way, s->sim.convert, s->sim.min_hold_us, 0};
    struct gs_tenancy *sched;
    int r = gs_tenancy_new(&s->policy, &o, &sched, d);
    if (r < 0)
        return r;
    struct gs_tsim *t = calloc(1, sizeof(*t));
    if (!t) {
        gs_tenancy_free(sched);
        return -ENOMEM;
    }
    t->s = s;
    t->way = way;
    t->sched = sched;
    t->fleet = gs_tenancy_fleet(sched);
    t->npods = s->npods;
    t->horizon = s->sim.horizon_us;
    r = alloc_state(t);
    if (r == 0)
        r = gs__tsim_timeline_new(t);
    if (r == 0 && s->sim.from_now)
        r = start_from_now(t, d);
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
    for (size_t i = 0; t->pods && i < t->npods; i++)
        free(t->pods[i].rejected);
    gs_tenancy_free(t->sched);
    gs__tsim_timeline_free(t);
    void *all[] = {t->pods, t->scn_of, t->arrival_order, t->uses,       t->out,        t->tout,
                   t->qout, t->kout,   t->mout,          t->kind_names, t->node_events};
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
    return t->ntenants;
}

const struct gs_tsim_tenant *gs_tsim_tenant(const struct gs_tsim *t, size_t i)
{
    return i < t->ntenants ? &t->tout[i] : NULL;
}

size_t gs_tsim_queue_count(const struct gs_tsim *t)
{
    return t->nqueues;
}

const struct gs_tsim_queue *gs_tsim_queue(const struct gs_tsim *t, size_t i)
{
    return i < t->nqueues ? &t->qout[i] : NULL;
}

size_t gs_tsim_model_count(const struct gs_tsim *t)
{
    return t->nmodels;
}

const struct gs_tsim_model *gs_tsim_model(const struct gs_tsim *t, size_t i)
{
    return i < t->nmodels ? &t->mout[i] : NULL;
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
    return i >= 0 && (size_t)i < t->s->policy.nnodes ? t->s->policy.nodes[i].name : NULL;
}

int gs_tsim_node_model(const struct gs_tsim *t, int32_t i)
{
    return i >= 0 && (size_t)i < t->s->policy.nnodes ? gs_fleet_node_model(t->fleet, (size_t)i)
                                                     : -1;
}
