/*
 * The multi-tenant scheduler's front: construction, the events a driver sends (a pod submitted
 * or completed, the clock moving), the pass and the decisions it hands back, and what a driver
 * may read. Invariants: see gpusched/tenancy.h.
 */
#include "tenancy_impl.h"

#include "gpusched/diag.h"
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

const char *gs__amount(enum gs__unit unit, int64_t v, char *buf)
{
    if (unit == GS_UNIT_MILLI)
        return gs_quantity_format_milli(v, buf, GS_QUANTITY_STR_MAX);
    if (unit == GS_UNIT_MIB)
        return gs_quantity_format_mib(v, buf, GS_QUANTITY_STR_MAX);
    snprintf(buf, GS_QUANTITY_STR_MAX, "%lld", (long long)v);
    return buf;
}

int gs__tn_decide(struct gs_tenancy *t, const struct gs_decision *d)
{
    if (t->dec_taken) { /* the driver has had those: a new transaction starts */
        t->ndec = 0;
        t->dec_taken = 0;
    }
    struct gs_decision *v = gs_grow(t->dec, &t->capdec, t->ndec + 1, sizeof(*v), 64);
    if (!v)
        return -ENOMEM;
    t->dec = v;
    t->dec[t->ndec++] = *d;
    return 0;
}

int gs__tn_pods_room(struct gs_tenancy *t)
{
    struct rpod *v = gs_grow(t->pods, &t->cappods, t->npods + 1, sizeof(*v), 1024);
    if (!v)
        return -ENOMEM;
    t->pods = v;
    return 0;
}

int gs__tn_before(const struct rpod *a, const struct rpod *b)
{
    return a->submit < b->submit || (a->submit == b->submit && a->seq < b->seq);
}

#define ALLOC(ptr, n) (((ptr) = gs__zalloc((n), sizeof(*(ptr)))) == NULL)

static int alloc_state(struct gs_tenancy *t)
{
    const struct gs_policy *pol = t->pol;
    size_t nt = pol->ntenants + 1, nodes = pol->nnodes;
    t->ntenants = nt;
    t->nqueues = pol->nqueues + 1;
    if (ALLOC(t->ded_used, nt * GS_MODEL_MAX) || ALLOC(t->sh_used, nt * GS_MODEL_MAX) ||
        ALLOC(t->shw_used, nt * GS_MODEL_MAX) || ALLOC(t->use_tenant, nt) ||
        ALLOC(t->use_queue, t->nqueues) || ALLOC(t->usable_held, nt * GS_MODEL_MAX) ||
        ALLOC(t->usable_asked, nt * GS_MODEL_MAX) || ALLOC(t->q_used, t->nqueues) ||
        ALLOC(t->q_res, t->nqueues) || ALLOC(t->q_demand, t->nqueues) ||
        ALLOC(t->q_deserved, 2 * t->nqueues) || ALLOC(t->q_over, t->nqueues) ||
        ALLOC(t->q_weight, t->nqueues) || ALLOC(t->rq_used, pol->nrquotas) ||
        ALLOC(t->bo_key, GS_MEMO_SLOTS) || ALLOC(t->clean, GS_MEMO_SLOTS) ||
        ALLOC(t->scratch, nodes) || ALLOC(t->logbits, nodes / 64 + 1) ||
        ALLOC(t->bo_until, GS_MEMO_SLOTS) || ALLOC(t->resv_ev, GS_RESV_DEPTH) ||
        ALLOC(t->resv_next, GS_RESV_DEPTH) || ALLOC(t->resv_ids, GS_RESV_DEPTH) ||
        ALLOC(t->resv_nodes, nodes) || ALLOC(t->ts_asked, nt) || ALLOC(t->ts_entitled, nt) ||
        ALLOC(t->ts_received, nt) || ALLOC(t->gang_open, nodes))
        return -ENOMEM;
    for (size_t q = 0; q < t->nqueues; q++)
        t->q_weight[q] = q < pol->nqueues ? pol->queues[q].weight : 1;
    for (size_t n = 0; n < nodes; n++)
        if (gs_fleet_node_gpus(t->fleet, n) > 0)
            t->models |= 1u << gs_fleet_node_model(t->fleet, n);
    /* Zones of the fleet are numbered below the node count; templates x zones stamps ... */
    size_t nz = 0;
    for (size_t n = 0; n < nodes; n++)
        if ((size_t)gs_fleet_node_zone(t->fleet, n) + 1 > nz)
            nz = (size_t)gs_fleet_node_zone(t->fleet, n) + 1;
    t->nzones = nz ? nz : 1;
    /* ... x taint classes: empty nodes alike in all three take the same pods */
    size_t nk = pol->ntemplates * t->nzones * (size_t)(gs_fleet_taint_classes(t->fleet, NULL) + 1);
    if (ALLOC(t->seen, nk) || ALLOC(t->seen_reason, nk) || ALLOC(t->node_key, nodes))
        return -ENOMEM;
    for (size_t n = 0; n < nodes; n++)
        t->node_key[n] = (int32_t)(((size_t)pol->nodes[n].template_index * t->nzones +
                                    (size_t)gs_fleet_node_zone(t->fleet, n)) *
                                       (size_t)(gs_fleet_taint_classes(t->fleet, NULL) + 1) +
                                   (size_t)gs_fleet_node_taint_class(t->fleet, n));
    if (gs__tn_admission_init(t) < 0 || gs__tn_victims_alloc(t) < 0 ||
        ALLOC(t->blists, t->nlevels * t->nqueues) || ALLOC(t->running_by_level, t->nlevels) ||
        ALLOC(t->borrowed, nt * t->nlevels))
        return -ENOMEM;
    return 0;
}

int gs_tenancy_new(const struct gs_policy *pol, const struct gs_tenancy_opts *o,
                   struct gs_tenancy **out, struct gs_diag *d)
{
    if ((unsigned)o->way >= GS_WAY_COUNT)
        return gs_diag_error(d, "unknown way %d", (int)o->way);
    if (pol->nnodes == 0 && !o->nodes_later)
        return gs_diag_error(d, "the scenario has no nodes (a Cluster document lists them)");
    struct gs_tenancy *t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    t->pol = pol;
    t->opt = *o;
    t->way = o->way;
    t->head = t->resv_node = -1;
    t->epoch = 1;
    t->resv_gen = 1;
    t->wake = t->retry_at = INT64_MAX;
    int r = gs__tn_scores_init(t, d);
    if (r == 0)
        r = gs_fleet_new(pol, &t->fleet, d);
    if (r == 0) {
        gs_fleet_set_modes(t->fleet, o->convert, o->min_hold_us);
        r = alloc_state(t);
    }
    if (r < 0) {
        gs_tenancy_free(t);
        return r;
    }
    *out = t;
    return 0;
}

void gs_tenancy_free(struct gs_tenancy *t)
{
    if (!t)
        return;
    gs_fleet_free(t->fleet);
    gs__tn_queue_free(t);
    gs__tn_admission_free(t);
    gs__tn_victims_free(t);
    gs__tn_shapes_free(t);
    void *all[] = {t->pods,
                   t->ded_used,
                   t->sh_used,
                   t->shw_used,
                   t->use_tenant,
                   t->use_queue,
                   t->usable_held,
                   t->usable_asked,
                   t->slot_alloc,
                   t->q_used,
                   t->q_res,
                   t->q_demand,
                   t->q_deserved,
                   t->q_over,
                   t->q_weight,
                   t->rq_used,
                   t->user_running,
                   t->user_pods,
                   t->free_users.v,
                   t->user_said,
                   t->heap,
                   t->vindex,
                   t->vsum,
                   t->vlevel,
                   t->vqueues,
                   t->aux,
                   t->resv_ev,
                   t->resv_next,
                   t->resv_ids,
                   t->resv_nodes,
                   t->vmemo,
                   t->clog.v.v,
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
                   t->node_key,
                   t->running_by_level,
                   t->borrowed,
                   t->bo_key,
                   t->clean,
                   t->scratch,
                   t->logbits,
                   t->gunits,
                   t->rlog.v.v,
                   t->bo_until,
                   t->ts_asked,
                   t->ts_entitled,
                   t->ts_received,
                   t->ts_shares,
                   t->dec,
                   t->dirty_gangs.v,
                   t->retired.v};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        free(all[i]);
    free(t);
}

/* When an empty card's hold ends next; INT64_MAX when none does. O(cards). */
static int64_t next_hold_end(const struct gs_tenancy *t)
{
    int64_t next = INT64_MAX;
    for (size_t n = 0; n < t->pol->nnodes; n++) {
        int64_t at = gs_fleet_next_convertible(t->fleet, n);
        next = at < next ? at : next;
    }
    return next;
}

/* Holds ended by now: the nodes of those cards count as freed, so pending pods are tried there. */
static int holds_end(struct gs_tenancy *t, int64_t before)
{
    gs_fleet_set_now(t->fleet, before);
    for (size_t n = 0; n < t->pol->nnodes; n++) {
        int64_t at = gs_fleet_next_convertible(t->fleet, n);
        if (at <= t->now && gs__tn_log(&t->rlog, (int32_t)n))
            return -ENOMEM;
    }
    gs_fleet_set_now(t->fleet, t->now);
    t->wake = INT64_MAX;
    t->epoch++;
    return 0;
}

/* The clock moves to @now (never back): card holds that ended are freed room. */
static int clock_to(struct gs_tenancy *t, int64_t now)
{
    if (now <= t->now && t->now != 0)
        return 0;
    int64_t before = t->now;
    gs__tn_work_accrue(t, now);
    t->now = now;
    gs_fleet_set_now(t->fleet, now);
    gs__tn_retry_due(t);
    return t->wake <= now ? holds_end(t, before > now - 1 ? now - 1 : before) : 0;
}

int gs_tenancy_admit(const struct gs_tenancy *t, const struct gs_pod_spec *sp,
                     struct gs_tenancy_pod *out, char *why, size_t size)
{
    struct rpod p;
    memset(&p, 0, sizeof(p));
    p.sp = sp;
    int rejected = gs__tn_admit(t, &p);
    memset(out, 0, sizeof(*out));
    out->state = (enum gs_pod_state)p.state;
    out->tenant = p.tenant;
    out->queue = p.queue;
    out->priority = p.prio;
    out->node = -1;
    out->whole = p.fit.whole;
    out->timeslice = p.fit.timeslice;
    out->units = p.fit.units > 1 ? p.fit.units : 1;
    out->share_milli = gs__tn_card_share(&p);
    out->slice_milli = out->share_milli / out->units;
    out->milli = p.milli;
    out->rate_milli = p.rate;
    out->ncards = p.fit.ncards;
    out->mem_mib = p.fit.whole ? 0 : p.fit.mem_mib;
    out->cpu_milli = p.fit.cpu_milli;
    out->memory_mib = p.fit.memory_mib;
    out->mig_start = -1;
    out->start_us = out->first_start_us = -1;
    out->reason = "";
    out->field = rejected && p.field ? p.field : "spec";
    out->field_at = rejected ? p.field_at : -1;
    if (why && size)
        snprintf(why, size, "%s", rejected ? p.reason : "");
    return rejected;
}

/*
 * A pod may name a PodGroup before it is made, as Kubernetes objects come in any order: the name
 * is held by a PodGroup of minMember 0, whose pods wait parked (pending, not arrived: no pass
 * tries them, no queue counts them) until gs_tenancy_podgroup() makes it (unpark()).
 */
static int placeholder(struct gs_tenancy *t, const struct gs_pod_spec *sp)
{
    struct gs_podgroup_spec g = {.min_member = 0};
    snprintf(g.ns, sizeof(g.ns), "%s", sp->ns);
    snprintf(g.name, sizeof(g.name), "%s", sp->group);
    if (gs__tn_group_find(t, g.ns, g.name) >= 0)
        return 0;
    int r = gs__tn_podgroup(t, &g);
    return r < 0 ? r : 0;
}

/* PodGroup @group was made: its parked pods are admitted again, now with its queue and class,
 * and arrive. */
static int unpark(struct gs_tenancy *t, int32_t group)
{
    struct gang *g = &t->gangs[group];
    g->cards = 0;
    g->level_low = -1;
    g->preemptible = 0;
    for (size_t k = 0; k < g->members.n; k++) {
        int32_t pod = g->members.v[k];
        struct rpod *m = &t->pods[pod];
        if (m->state == GS_POD_PENDING && !m->arrived) {
            int32_t user = m->user;
            int rejected = gs__tn_admit(t, m);
            m->user = user;
            if (rejected)
                continue;
            m->arrived = 1;
            t->q_demand[m->queue] += m->milli;
            m->usable = gs__tn_usable_models(t, m);
            gs__tn_usable_charge(t, m, 0, 1);
            t->arrivals_since_pass = 1;
            int r = gs__tn_pending_add(t, pod);
            if (r < 0)
                return r;
        }
        if (m->state == GS_POD_REJECTED)
            continue;
        g->cards += m->fit.whole ? m->fit.ncards : 0;
        g->level_low = m->level > g->level_low ? m->level : g->level_low;
        g->preemptible |= m->preemptible;
    }
    gs__tn_usable_refresh(t, group);
    if (!g->dirty) {
        g->dirty = 1;
        return gs__vec_push(&t->dirty_gangs, group);
    }
    return 0;
}

/* @field into @buf with its "containers[]" naming container @at of @sp (index in sp->containers,
 * -1 none) by its place in its own list, as an API server names it ("spec.containers[1]",
 * "spec.initContainers[0]"). */
void gs__tn_field_path(const struct gs_pod_spec *sp, const char *field, int at, char *buf,
                       size_t size)
{
    static const char list[] = "containers[]";
    if (at < 0 && sp->ncontainers == 1) /* the pod's sum is its one container's ask */
        at = 0;
    const char *c = at >= 0 && at < sp->ncontainers ? strstr(field, list) : NULL;
    if (!c) {
        snprintf(buf, size, "%s", field);
        return;
    }
    int init = sp->containers[at].init != 0, k = 0;
    for (int i = 0; i < at; i++)
        k += (sp->containers[i].init != 0) == init;
    snprintf(buf, size, "%.*s%s[%d]%s", (int)(c - field), field,
             init ? "initContainers" : "containers", k, c + sizeof(list) - 1);
}

/* Can released record @id serve a new pod? Not while a bucket still lists it, its own or one it
 * moved on from (the entry is dropped in time), nor while it is the head of the queue. */
static int reusable(const struct gs_tenancy *t, int32_t id)
{
    return !t->pods[id].in_pending && !t->pods[id].stale && id != t->head;
}

/* The released records that nothing reads any more go to the front of t->retired, ready: when
 * none is ready and the driver has had every decision (which may name them), once as many were
 * released as the last sweep left waiting, so that a release costs O(1) amortised. */
static void sweep(struct gs_tenancy *t)
{
    struct vec *v = &t->retired;
    if (t->ready || v->n <= 2 * t->kept || (t->ndec && !t->dec_taken))
        return;
    for (size_t i = 0; i < v->n; i++)
        if (reusable(t, v->v[i])) {
            int32_t id = v->v[i];
            v->v[i] = v->v[t->ready];
            v->v[t->ready++] = id;
        }
    t->kept = v->n - t->ready;
}

/* The id a new pod gets: a released record's (its completion's generation moving on, so that
 * what was pushed for the pod before is stale), else the next. *@reused: 1 the former. */
static int32_t next_id(struct gs_tenancy *t, int *reused)
{
    sweep(t);
    *reused = t->ready > 0;
    if (!*reused)
        return (int32_t)t->npods;
    int32_t id = t->retired.v[t->ready - 1];
    uint32_t gen = t->pods[id].gen + 1;
    memset(&t->pods[id], 0, sizeof(t->pods[id]));
    t->pods[id].gen = gen;
    return id;
}

int gs_tenancy_submit(struct gs_tenancy *t, int64_t now, const struct gs_pod_spec *sp, int64_t seq,
                      int32_t *id, char *why, size_t size)
{
    int r = clock_to(t, now), reused;
    if (r < 0 || (r = gs__tn_pods_room(t)) < 0)
        return r;
    int32_t pod = next_id(t, &reused);
    struct rpod *p = &t->pods[pod];
    if (!reused)
        memset(p, 0, sizeof(*p));
    p->sp = sp;
    p->succeeded = 0;
    p->task = gs__tn_task_hash(sp->task);
    p->seq = seq;
    p->submit = t->now;
    p->saved_us = sp->saved_us > 0 ? sp->saved_us : 0; /* a snapshot's pod resumes there */
    if (t->way == GS_WAY_FULL && sp->group[0] && (r = placeholder(t, sp)) < 0)
        return r;
    if (gs__tn_admit(t, p)) {
        if (why && size)
            snprintf(why, size, "%s", p->reason);
        gs__tn_field_path(sp, p->field ? p->field : "spec", p->field_at, t->refused_field,
                          sizeof(t->refused_field));
        p->state = GS_POD_COMPLETED; /* a record ready for reuse stays so */
        p->released = 1;
        return 1;
    }
    p->preemptions = sp->evictions; /* a snapshot's pod: its history goes on */
    if (sp->placed_given & GS_PLACED_FIRST)
        p->first_start = sp->first_start_us;
    if (reused) { /* the last ready one: the last of all takes its place */
        t->ready--;
        t->retired.v[t->ready] = t->retired.v[--t->retired.n];
    } else {
        t->npods++;
    }
    if ((r = gs__tn_enroll(t, pod)) < 0)
        return r;
    if (p->group >= 0) {
        size_t need = 2 * t->gangs[p->group].members.n; /* and room to reorder them */
        int32_t *m = gs_grow(t->gang_members, &t->gang_members_cap, need, sizeof(*m), 16);
        if (!m)
            return -ENOMEM;
        t->gang_members = m;
    }
    *id = pod;
    if (gs__tn_group_parked(t, p->group)) { /* not arrived yet */
        gs__say(p->reason, sizeof(p->reason),
                "PodGroup %s/%s does not exist yet: the pod waits for it to be made", sp->ns,
                sp->group);
        return 0;
    }
    p->arrived = 1;
    t->q_demand[p->queue] += p->milli;
    p->usable = gs__tn_usable_models(t, p);
    gs__tn_usable_charge(t, p, 0, 1);
    if (p->group >= 0)
        gs__tn_usable_refresh(t, p->group);
    t->arrivals_since_pass = 1;
    return gs__tn_pending_add(t, pod);
}

/* @p, a member of a gang, is gone (completed, failed or deleted): it no longer makes its gang
 * elastic, unless it completed (then it counts among done). */
static void left_gang(struct gs_tenancy *t, const struct rpod *p)
{
    if (p->group < 0)
        return;
    t->gangs[p->group].left++;
    gs__tn_gang_changed(t, p->group);
}

int gs_tenancy_complete(struct gs_tenancy *t, int64_t now, int32_t id, int32_t *share_milli)
{
    if (id < 0 || (size_t)id >= t->npods || t->pods[id].state != GS_POD_RUNNING)
        return -EINVAL;
    int r = clock_to(t, now);
    if (r < 0)
        return r;
    struct rpod *p = &t->pods[id];
    gs__tn_work_settle(t, id); /* its work by now: did its deadline come first? */
    int failed = p->sp->deadline_us > 0 && t->now >= p->start + p->sp->deadline_us &&
                 (p->sp->duration_us == GS_UNSET || p->left > 0);
    if (p->wgroup >= 0 && !failed) /* Succeeded: it no longer holds its gang mates back */
        t->gangs[p->wgroup].done++;
    p->succeeded = !failed;
    r = gs__tn_unplace(t, id);
    gs__tn_log(&t->rlog, p->node);
    if (share_milli)
        *share_milli = gs__tn_slice_share(t, id);
    p->state = GS_POD_COMPLETED;
    left_gang(t, p);
    if (failed) /* its work not done when its deadline came: the kubelet's words for it */
        gs__say(p->reason, sizeof(p->reason),
                "DeadlineExceeded: ended %lld s after it started (activeDeadlineSeconds)",
                (long long)(p->sp->deadline_us / 1000000));
    t->q_demand[p->queue] -= p->milli;
    gs__tn_usable_charge(t, p, 0, -1);
    t->epoch++;
    return r < 0 ? r : failed;
}

int gs_tenancy_cancel(struct gs_tenancy *t, int64_t now, int32_t id)
{
    if (id < 0 || (size_t)id >= t->npods || t->pods[id].state == GS_POD_COMPLETED)
        return -EINVAL;
    int r = clock_to(t, now);
    struct rpod *p = &t->pods[id];
    if (r >= 0 && p->state == GS_POD_RUNNING) {
        r = gs__tn_unplace(t, id);
        gs__tn_work_lost(t, id);
        if (gs__tn_log(&t->rlog, p->node) < 0)
            r = -ENOMEM;
    } else if (!p->arrived) { /* parked, waiting for its PodGroup: counted nowhere yet */
        p->state = GS_POD_COMPLETED;
        left_gang(t, p);
        return r;
    } else {
        gs__tn_pending_left(t, id);
    }
    if (id == t->head) {
        t->head = -1;
        t->resv_gen++;
    }
    p->state = GS_POD_COMPLETED;
    left_gang(t, p);
    t->q_demand[p->queue] -= p->milli;
    gs__tn_usable_charge(t, p, 0, -1);
    t->epoch++;
    return r;
}

int gs_tenancy_release(struct gs_tenancy *t, int32_t id)
{
    if (id < 0 || (size_t)id >= t->npods || t->pods[id].state != GS_POD_COMPLETED ||
        t->pods[id].released)
        return -EINVAL;
    struct rpod *p = &t->pods[id];
    p->released = 1;
    gs__tn_user_release(t, p);
    if (gs__tn_group_parked(t, p->group)) { /* never made: the last member drops it */
        const struct gs_podgroup_spec *pg = t->pgs[p->group];
        int r = gs_tenancy_podgroup_drop(t, pg->ns, pg->name);
        return r == -EBUSY ? 0 : r;
    }
    if (p->group >= 0 || p->wgroup >= 0) /* its gang counts it: released with the PodGroup */
        return 0;
    return gs__vec_push(&t->retired, id);
}

int gs_tenancy_podgroup(struct gs_tenancy *t, const struct gs_podgroup_spec *g)
{
    if (g->min_member < 1)
        return -EINVAL;
    int32_t i = gs__tn_group_find(t, g->ns, g->name);
    int parked = gs__tn_group_parked(t, i);
    int r = gs__tn_podgroup(t, g);
    t->epoch++; /* a gang's minMember may have changed: its members are worth a try */
    if (r >= 0 && parked)
        r = unpark(t, r);
    return r < 0 ? r : 0;
}

int gs_tenancy_podgroup_drop(struct gs_tenancy *t, const char *ns, const char *name)
{
    int32_t i = gs__tn_group_find(t, ns, name);
    if (i < 0)
        return -ENOENT;
    for (int w = 0; w < 2; w++) {
        const struct vec *v = w ? &t->gangs[i].workers : &t->gangs[i].members;
        for (size_t k = 0; k < v->n; k++)
            if (t->pods[v->v[k]].state != GS_POD_COMPLETED)
                return -EBUSY;
    }
    t->pgs[i]->min_member = 0;
    struct gang *g = &t->gangs[i];
    /* One made again has none of them; those released go (out of memory, only not reused). A
     * worker of a way without gangs (group -1) is none of its members. */
    for (size_t k = 0; k < g->workers.n; k++) {
        struct rpod *w = &t->pods[g->workers.v[k]];
        w->wgroup = -1;
        if (w->released && w->group < 0)
            (void)gs__vec_push(&t->retired, g->workers.v[k]);
    }
    for (size_t k = 0; k < g->members.n; k++) {
        struct rpod *m = &t->pods[g->members.v[k]];
        m->group = m->wgroup = -1;
        if (m->released)
            (void)gs__vec_push(&t->retired, g->members.v[k]);
    }
    g->members.n = g->workers.n = 0;
    g->min = g->done = g->left = g->inqueue = g->tasked = 0;
    g->cards = g->milli_low = g->preemptible = 0;
    g->level_low = -1;
    g->key = gs__tn_gang_key(t, g);
    gs__tn_gang_changed(t, i);
    gs__tn_podgroup_forget(t, i);
    return 0;
}

int gs_tenancy_podgroup_succeeded(struct gs_tenancy *t, const char *ns, const char *name, int32_t n)
{
    int32_t i = gs__tn_group_find(t, ns, name);
    if (i < 0)
        return -ENOENT;
    if (n < 0)
        return -EINVAL;
    struct gang *g = &t->gangs[i];
    int before = g->working + g->done >= g->min;
    g->done = n;
    gs__tn_gang_changed(t, i);
    t->epoch++; /* fewer of its members may now have to start together */
    return (g->working + g->done >= g->min) != before ? gs__tn_work_gang(t, i) : 0;
}

int32_t gs_tenancy_podgroup_done(const struct gs_tenancy *t, const char *ns, const char *name)
{
    int32_t i = gs__tn_group_find(t, ns, name);
    return i < 0 ? -ENOENT : t->gangs[i].done;
}

int32_t gs_tenancy_podgroup_lacking(const struct gs_tenancy *t, const char *ns, const char *name)
{
    int32_t i = gs__tn_group_find(t, ns, name), n;
    if (!gs__tn_made_group(t, i)) /* none, or a placeholder */
        return -ENOENT;
    n = gs__tn_gang_lacking(t, i);
    return n > 0 ? n : 0;
}

int gs_tenancy_bind_to(struct gs_tenancy *t, int64_t now, int32_t id, int32_t node)
{
    if (id < 0 || (size_t)id >= t->npods || t->pods[id].state != GS_POD_PENDING || node < 0 ||
        (size_t)node >= t->pol->nnodes)
        return -EINVAL;
    int r = clock_to(t, now), capacity;
    struct txn *x = &t->txn_pod;
    x->bound.n = x->evicted.n = 0;
    if (r >= 0)
        r = gs__tn_place_one(t, id, x, node, &capacity);
    return r == 0 ? gs__tn_commit(t, x, id) : r;
}

int gs_tenancy_restore(struct gs_tenancy *t, int32_t id, int32_t node, uint32_t gpu_mask,
                       int32_t mig_start, int64_t start_us)
{
    if (id < 0 || (size_t)id >= t->npods || t->pods[id].state != GS_POD_PENDING || node < 0 ||
        (size_t)node >= t->pol->nnodes)
        return -EINVAL;
    struct rpod *p = &t->pods[id];
    p->fit.mig_start = mig_start;
    t->restore_charged = (int8_t)p->sp->charged; /* read by the ledger as it charges the pod */
    t->restoring = 1;
    /* a taint keeps pods from being placed, it does not take them off (NoSchedule never evicts;
     * NoExecute's evictions are the taint manager's, seen as the pod going): one that ran on a
     * node tainted since stays there */
    uint64_t tolerated = p->fit.tolerated;
    p->fit.tolerated = ~(uint64_t)0;
    int r = gs__tn_bind(t, id, (size_t)node, gpu_mask, NULL);
    p->fit.tolerated = tolerated;
    t->restore_charged = t->restoring = 0;
    if (r < 0)
        return r;
    p->start = p->since = start_us; /* its work counts from its start */
    gs__tn_victims_started(t, id);
    p->first_start = p->sp->placed_given & GS_PLACED_FIRST ? p->sp->first_start_us : start_us;
    if (p->preemptions > 0) /* its readmission grace runs from its start, not from now */
        gs__tn_readmit_at(t, start_us);
    if (p->sp->placed_given & GS_PLACED_DONE) /* ... unless its progress by now is known */
        gs__tn_work_resume(t, id, p->sp->done_us);
    return gs__tn_work_end(t, id);
}

/* Running pod @id leaves its cards for @why (its node or card failed): it waits again. */
static int requeue(struct gs_tenancy *t, int32_t id, const char *why)
{
    struct rpod *p = &t->pods[id];
    struct gs_decision d = {
        .kind = GS_DECIDE_EVICT, .pod = id, .node = p->node, .gpu_mask = p->mask, .by = -1};
    int r = gs__tn_unplace(t, id);
    d.share_milli = gs__tn_slice_share(t, id);
    gs__tn_work_lost(t, id);
    if (r >= 0) /* a gang mate's node, still up, has room again */
        r = gs__tn_log(&t->rlog, p->node);
    p->state = GS_POD_PENDING;
    p->node = -1;
    gs__say(p->reason, sizeof(p->reason), "%s", why);
    p->said = ++t->said; /* its words until a pass tries it: not an earlier failure of alike pods */
    if (r < 0 || (r = gs__tn_decide(t, &d)) < 0)
        return r;
    t->epoch++;
    return gs__tn_pending_add(t, id);
}

/* Requeue every pod on @node using a card of @cards (0: any), and the rest of their gangs. */
static int requeue_node(struct gs_tenancy *t, size_t node, uint32_t cards, const char *why)
{
    int r = 0;
    for (size_t i = gs_fleet_pod_count(t->fleet, node); r >= 0 && i-- > 0;) {
        if (i >= gs_fleet_pod_count(t->fleet, node))
            continue; /* a gang mate went from here too */
        int32_t id = gs_fleet_pod_at(t->fleet, node, i);
        const struct rpod *p = &t->pods[id];
        if (cards && !(p->mask & cards))
            continue;
        int32_t group = p->group;
        if ((r = requeue(t, id, why)) < 0 || group < 0)
            continue;
        const struct gang *g = &t->gangs[group];
        for (size_t k = 0; r >= 0 && k < g->members.n; k++)
            if (t->pods[g->members.v[k]].state == GS_POD_RUNNING)
                r = requeue(t, g->members.v[k], why);
    }
    return r;
}

int gs_tenancy_requeue(struct gs_tenancy *t, int64_t now, int32_t id, const char *why)
{
    if (id < 0 || (size_t)id >= t->npods || t->pods[id].state != GS_POD_RUNNING || !why)
        return -EINVAL;
    int r = clock_to(t, now);
    return r < 0 ? r : requeue(t, id, why);
}

int gs_tenancy_node_ready(struct gs_tenancy *t, int64_t now, int32_t node, int ready, int evict)
{
    if (node < 0 || (size_t)node >= t->pol->nnodes)
        return -EINVAL;
    int r = clock_to(t, now);
    if (r < 0 || ready == gs_fleet_node_ready(t->fleet, (size_t)node))
        return r;
    gs_fleet_set_node_ready(t->fleet, (size_t)node, ready);
    t->epoch++;
    t->health_gen++; /* the pending pods' reasons count the node anew */
    if (ready)
        return gs__tn_log(&t->rlog, node);
    if (!evict)
        return 0;
    char why[GS_REASON_MAX];
    gs__say(why, sizeof(why), "node %s is not ready: its pods wait again",
            t->pol->nodes[node].name);
    return requeue_node(t, (size_t)node, 0, why);
}

int gs_tenancy_card_health(struct gs_tenancy *t, int64_t now, int32_t node, int gpu, int healthy,
                           int evict)
{
    if (node < 0 || (size_t)node >= t->pol->nnodes || gpu < 0 ||
        gpu >= gs_fleet_node_gpus(t->fleet, (size_t)node))
        return -EINVAL;
    int r = clock_to(t, now);
    if (r < 0)
        return r;
    int was = gs_fleet_card_healthy(t->fleet, (size_t)node, gpu);
    gs_fleet_set_card_healthy(t->fleet, (size_t)node, gpu, healthy);
    t->epoch++;
    t->health_gen += was != !!healthy;
    if (healthy)
        return gs__tn_log(&t->rlog, node);
    if (!evict)
        return 0;
    char why[GS_REASON_MAX];
    gs__say(why, sizeof(why), "GPU %d of node %s failed: its pods wait again", gpu,
            t->pol->nodes[node].name);
    return requeue_node(t, (size_t)node, 1u << gpu, why);
}

int gs_tenancy_card_mode(struct gs_tenancy *t, int32_t node, int gpu, int mode, int64_t since_us)
{
    if (node < 0 || (size_t)node >= t->pol->nnodes || gpu < 0 ||
        gpu >= gs_fleet_node_gpus(t->fleet, (size_t)node) || since_us > t->now ||
        mode < GS_CARD_EXCLUSIVE || mode > GS_CARD_TIMESLICED)
        return -EINVAL;
    int r =
        gs_fleet_set_card_history(t->fleet, (size_t)node, gpu, (enum gs_card_mode)mode, since_us);
    if (r < 0)
        return r;
    t->epoch++; /* pending pods are worth a try there: a card's hold may have ended */
    return gs__tn_log(&t->rlog, node);
}

int gs_xid_loses_work(int xid)
{
    static const int lost[] = {0, 48, 63, 64, 74, 79, 94, 95};
    for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++)
        if (xid == lost[i])
            return 1;
    return 0;
}

int gs_tenancy_node_topology(struct gs_tenancy *t, int64_t now, int32_t node, const uint8_t *pcie,
                             const uint8_t *nvlink, const uint8_t (*links)[GS_GPUS_MAX])
{
    if (node < 0 || (size_t)node >= t->pol->nnodes)
        return -EINVAL;
    int r = clock_to(t, now);
    if (r < 0 || (r = gs_fleet_set_topology(t->fleet, (size_t)node, pcie, nvlink, links)) < 0)
        return r;
    t->epoch++;
    return gs__tn_log(&t->rlog, node); /* its cards may now suit a pod they did not */
}

int gs_tenancy_advance(struct gs_tenancy *t, int64_t now)
{
    if (now > t->now) {
        gs__tn_work_accrue(t, now);
        t->now = now;
        gs_fleet_set_now(t->fleet, now);
    }
    for (size_t i = 0; t->ts_used && i < t->npods; i++)
        if (t->pods[i].fit.timeslice && t->pods[i].state == GS_POD_RUNNING)
            gs__tn_work_settle(t, (int32_t)i);
    return 0;
}

int gs_tenancy_schedule(struct gs_tenancy *t, int64_t now, const struct gs_decision **dec,
                        size_t *n)
{
    int r = clock_to(t, now);
    if (t->dec_taken)
        t->ndec = 0;
    if (r >= 0 && (t->epoch != t->pass_epoch || t->arrivals_since_pass)) {
        t->pass_epoch = t->epoch;
        t->arrivals_since_pass = 0;
        r = gs__tn_pass(t);
        if (t->opt.min_hold_us > 0)
            t->wake = next_hold_end(t);
    }
    *dec = t->dec;
    *n = t->ndec;
    t->dec_taken = 1;
    return r < 0 ? r : 0;
}

void gs_tenancy_decisions(struct gs_tenancy *t, const struct gs_decision **dec, size_t *n)
{
    if (t->dec_taken)
        t->ndec = 0;
    *dec = t->dec;
    *n = t->ndec;
    t->dec_taken = 1;
}

int64_t gs_tenancy_now(const struct gs_tenancy *t)
{
    return t->now;
}

int gs_tenancy_due(struct gs_tenancy *t, int64_t now, int32_t *id)
{
    while (t->nheap && !gs__tn_end_live(t, &t->heap[0]))
        gs__tn_end_pop(t);
    if (!t->nheap || t->heap[0].t > now)
        return 0;
    *id = gs__tn_end_pop(t).pod;
    return 1;
}

int64_t gs_tenancy_next_end(struct gs_tenancy *t)
{
    while (t->nheap && !gs__tn_end_live(t, &t->heap[0]))
        gs__tn_end_pop(t);
    return t->nheap ? t->heap[0].t : INT64_MAX;
}

int64_t gs_tenancy_wake(const struct gs_tenancy *t)
{
    return t->wake < t->retry_at ? t->wake : t->retry_at;
}

/* The filter reason most nodes gave in a reason of placement.c's why_nodes() ("0/N nodes are
 * available: C1 TEXT1, C2 TEXT2."): a static gs_fit_reason_words(), or NULL for another reason. */
static const char *main_why(const char *reason)
{
    const char *best = NULL, *at = strchr(reason, ':');
    long long most = 0;
    if (strncmp(reason, "0/", 2) != 0 || !at)
        return NULL;
    while (at && *at) {
        char *end;
        long long c = strtoll(at + 1, &end, 10);
        for (int r = 1; r <= GS_FIT_REASONS && end > at + 1; r++) { /* the last: replicas */
            const char *text = r < GS_FIT_REASONS ? gs_fit_reason_text((enum gs_fit_reason)r)
                                                  : gs_fit_reason_words(GS_FIT_GPU, 1);
            size_t len = strlen(text);
            if (*end == ' ' && !strncmp(end + 1, text, len) && gs__words_end(end + 1 + len, ", ") &&
                c > most) {
                most = c;
                best = text;
            }
        }
        at = strchr(at + 1, ',');
    }
    return best;
}

int gs_tenancy_pod(struct gs_tenancy *t, int32_t id, struct gs_tenancy_pod *out)
{
    if (id < 0 || (size_t)id >= t->npods)
        return -ENOENT;
    gs__tn_settle_reason(t, id);
    const struct rpod *p = &t->pods[id];
    int placed = p->state == GS_POD_RUNNING || p->state == GS_POD_COMPLETED;
    *out = (struct gs_tenancy_pod){
        .state = (enum gs_pod_state)p->state,
        .tenant = p->tenant,
        .queue = p->queue,
        .priority = p->prio,
        .node = placed ? p->node : -1,
        .gpu_mask = placed ? p->mask : 0,
        .whole = p->fit.whole,
        .timeslice = p->fit.timeslice,
        .units = p->fit.units > 1 ? p->fit.units : 1,
        .mig = p->fit.mig,
        .mig_start = placed && p->fit.mig ? p->fit.mig_start : -1,
        .share_milli = gs__tn_card_share(p),
        .slice_milli = gs__tn_slice_share(t, id),
        .milli = p->milli,
        .rate_milli = p->rate,
        .alloc_milli = p->state == GS_POD_RUNNING ? p->alloc : 0,
        .busy_milli = p->state == GS_POD_RUNNING ? p->busy : 0,
        .ncards = p->fit.ncards,
        .mem_mib = p->fit.whole ? 0 : p->fit.mem_mib,
        .cpu_milli = p->fit.cpu_milli,
        .memory_mib = p->fit.memory_mib,
        .submit_us = p->submit,
        .start_us = p->start,
        .first_start_us = p->first_start,
        .preemptions = p->preemptions,
        .charged = p->state == GS_POD_RUNNING ? p->charged : 0,
        .saved_us = p->saved_us,
        .done_us = p->state == GS_POD_RUNNING ? gs__tn_work_done(t, p) : 0,
        .reason = p->state == GS_POD_RUNNING ? "" : p->reason, /* a run ended: DeadlineExceeded */
        .why = placed ? NULL : main_why(p->reason),
        .field = p->state == GS_POD_REJECTED && p->field ? p->field : "spec",
        .field_at = p->state == GS_POD_REJECTED ? p->field_at : -1,
    };
    return 0;
}

const char *gs_tenancy_refused_field(const struct gs_tenancy *t)
{
    return t->refused_field[0] ? t->refused_field : "spec";
}

size_t gs_tenancy_pod_count(const struct gs_tenancy *t)
{
    return t->npods;
}

size_t gs_tenancy_queue_count(const struct gs_tenancy *t)
{
    return t->nqueues;
}

int64_t gs_tenancy_allocated(const struct gs_tenancy *t)
{
    return gs_fleet_allocated(t->fleet);
}

int64_t gs_tenancy_tenant_milli(const struct gs_tenancy *t, size_t i)
{
    return i < t->ntenants ? t->use_tenant[i].alloc : 0;
}

int64_t gs_tenancy_queue_milli(const struct gs_tenancy *t, size_t q)
{
    return q < t->nqueues ? t->q_used[q] : 0;
}

int64_t gs_tenancy_queue_deserved(const struct gs_tenancy *t, size_t q)
{
    return q < t->nqueues ? t->q_deserved[q] : 0;
}

int32_t gs_tenancy_queue_weight(const struct gs_tenancy *t, size_t q)
{
    return q < t->nqueues ? t->q_weight[q] : 0;
}

int64_t gs_tenancy_queue_demand(const struct gs_tenancy *t, size_t q)
{
    return q < t->nqueues ? t->q_demand[q] : 0;
}

void gs_tenancy_quota_used(const struct gs_tenancy *t, size_t tenant, int model, int64_t *ded,
                           int64_t *sh)
{
    int ok = tenant < t->ntenants && model >= 0 && model < GS_MODEL_MAX;
    size_t k = tenant * GS_MODEL_MAX + (size_t)model;
    *ded = ok ? t->ded_used[k] : 0;
    *sh = ok ? t->sh_used[k] : 0;
}

void gs_tenancy_rquota_used(const struct gs_tenancy *t, size_t i, int64_t used[5])
{
    for (int r = 0; r < 5; r++)
        used[r] = i < t->pol->nrquotas ? t->rq_used[i][r] : 0;
}

const struct gs_tenancy_work *gs_tenancy_work(const struct gs_tenancy *t)
{
    return &t->work;
}

int gs_tenancy_usage_at(const struct gs_tenancy *t, enum gs_usage_of of, size_t i, int64_t at_us,
                        struct gs_tenancy_usage *out)
{
    const struct usage *u = of == GS_USAGE_FLEET                       ? &t->use_fleet
                            : of == GS_USAGE_TENANT && i < t->ntenants ? &t->use_tenant[i]
                            : of == GS_USAGE_QUEUE && i < t->nqueues   ? &t->use_queue[i]
                            : of == GS_USAGE_MODEL && i < GS_MODEL_MAX ? &t->use_model[i]
                                                                       : NULL;
    if (!u)
        return -ENOENT;
    int64_t dt = at_us > t->acc_t ? at_us - t->acc_t : 0;
    *out = (struct gs_tenancy_usage){u->alloc,
                                     u->busy,
                                     (int64_t)((u->sum[0] + (gs_i128)u->alloc * dt) / 1000000),
                                     (int64_t)((u->sum[1] + (gs_i128)u->busy * dt) / 1000000),
                                     (int64_t)(u->sum[2] / 1000000),
                                     (int64_t)(u->sum[3] / 1000000)};
    return 0;
}

int gs_tenancy_usage(const struct gs_tenancy *t, enum gs_usage_of of, size_t i,
                     struct gs_tenancy_usage *out)
{
    return gs_tenancy_usage_at(t, of, i, t->acc_t, out);
}

const struct gs_fleet *gs_tenancy_fleet(const struct gs_tenancy *t)
{
    return t->fleet;
}

void gs_tenancy_slice_totals(const struct gs_tenancy *t, size_t tenant, int64_t *asked_milli_s,
                             int64_t *entitled_milli_s, int64_t *received_milli_s)
{
    int ok = tenant < t->ntenants;
    *asked_milli_s = ok ? (int64_t)(t->ts_asked[tenant] / 1000000) : 0;
    *entitled_milli_s = ok ? (int64_t)(t->ts_entitled[tenant] / 1000000) : 0;
    *received_milli_s = ok ? (int64_t)(t->ts_received[tenant] / 1000000) : 0;
}

int gs_tenancy_slice_any(const struct gs_tenancy *t)
{
    return t->ts_used;
}
