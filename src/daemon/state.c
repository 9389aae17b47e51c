/*
 * gpuschedd: the scheduler thread's state — the pod table, placement, release and the retry of
 * pending pods. Everything here runs on the scheduler thread only.
 *
 * Pods are kept three ways: a chained hash by namespace/name, a list of every pod in arrival
 * order (lists and restarts read it), and a list of the pending ones in arrival order (retries).
 * A pending pod is retried only after capacity came back (a cancel); within one retry pass a
 * request that failed stays failed (the pass only takes capacity), so each distinct request is
 * tried once per pass, not once per pod.
 */
#include "state.h"
#include "agents.h"
#include "extender.h"
#include "log.h"
#include "mig.h"
#include "nodes.h"
#include "preempt.h"
#include "queue.h"
#include "snapshot.h"
#include "store.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define RETRY_FAILED_MAX 64 /* distinct failed requests remembered in one retry pass */

int64_t gsd_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t gsd_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static uint64_t key_hash(const char *ns, const char *name)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *p = ns; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    h = (h ^ '/') * 1099511628211ULL;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return h;
}

struct gsd_pod *gsd_pod_find(struct gsd_state *st, const char *ns, const char *name)
{
    if (!st->tab_cap)
        return NULL;
    struct gsd_pod *p = st->tab[key_hash(ns, name) & (st->tab_cap - 1)];
    while (p && (strcmp(p->ns, ns) || strcmp(p->name, name)))
        p = p->hnext;
    return p;
}

static int tab_grow(struct gsd_state *st)
{
    size_t cap = st->tab_cap ? st->tab_cap * 2 : 1024;
    struct gsd_pod **t = calloc(cap, sizeof(*t));
    if (!t)
        return -ENOMEM;
    for (struct gsd_pod *p = st->head; p; p = p->next) {
        size_t h = key_hash(p->ns, p->name) & (cap - 1);
        p->hnext = t[h];
        t[h] = p;
    }
    free(st->tab);
    st->tab = t;
    st->tab_cap = cap;
    return 0;
}

/* Link @p into the table and the arrival list (at the tail: @p is the newest). */
static int link_pod(struct gsd_state *st, struct gsd_pod *p)
{
    if (st->npods + 1 > st->tab_cap / 2 && tab_grow(st))
        return -ENOMEM;
    size_t h = key_hash(p->ns, p->name) & (st->tab_cap - 1);
    p->hnext = st->tab[h];
    st->tab[h] = p;
    p->prev = st->tail;
    p->next = NULL;
    *(st->tail ? &st->tail->next : &st->head) = p;
    st->tail = p;
    st->npods++;
    if (p->grp)
        p->grp->members++;
    gsd_snap_touch(st, p);
    return 0;
}

static void unlink_pod(struct gsd_state *st, struct gsd_pod *p)
{
    gsd_snap_forget(st, p);
    struct gsd_pod **pp = &st->tab[key_hash(p->ns, p->name) & (st->tab_cap - 1)];
    while (*pp != p)
        pp = &(*pp)->hnext;
    *pp = p->hnext;
    *(p->prev ? &p->prev->next : &st->head) = p->next;
    *(p->next ? &p->next->prev : &st->tail) = p->prev;
    st->npods--;
    if (p->grp)
        p->grp->members--;
}

/* @p starts (1) or stops (-1) running: its quotas and its gang's count follow. */
static int ran(struct gsd_state *st, struct gsd_pod *p, int sign)
{
    if (sign > 0 && p->source == GSD_SRC_API && p->priority < st->prio_floor)
        st->prio_floor = p->priority;
    if (p->grp)
        p->grp->running += sign;
    return gsd_quota_charge(st, p, sign);
}

/*
 * The pending list runs by priority, highest first, then arrival (kube-scheduler's PrioritySort).
 * Each priority present has a level holding its last pod, so a pod goes into its place in
 * O(log levels) (a new pod) or by walking back inside its level (a requeued one), whatever the
 * pods of other priorities.
 */
static size_t level_at(const struct gsd_state *st, int32_t prio)
{
    size_t lo = 0, hi = st->nplevels;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->plevels[mid].prio > prio)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The pod @p goes after: its level's last pod of an earlier arrival, else the last pod of the
 * next higher level; NULL for the head. Makes the level when it is new. Return: the level's
 * index; -ENOMEM. */
static long pend_after(struct gsd_state *st, const struct gsd_pod *p, struct gsd_pod **after)
{
    size_t i = level_at(st, p->priority);
    if (i == st->nplevels || st->plevels[i].prio != p->priority) {
        struct gsd_plevel *m =
            gs_grow(st->plevels, &st->capplevels, st->nplevels + 1, sizeof(*m), 8);
        if (!m)
            return -ENOMEM;
        st->plevels = m;
        memmove(&st->plevels[i + 1], &st->plevels[i], (st->nplevels - i) * sizeof(*st->plevels));
        st->plevels[i] = (struct gsd_plevel){.prio = p->priority};
        st->nplevels++;
    }
    struct gsd_pod *a = st->plevels[i].tail;
    while (a && a->priority == p->priority && a->seq > p->seq)
        a = a->pprev;
    *after = a ? a : i > 0 ? st->plevels[i - 1].tail : NULL;
    st->plevels[i].n++;
    return (long)i;
}

static void pend(struct gsd_state *st, struct gsd_pod *p)
{
    struct gsd_pod *after = st->ptail;
    long i = pend_after(st, p, &after);
    if (i < 0) /* out of memory for a level: the same place, found slower */
        while (after && (after->priority < p->priority ||
                         (after->priority == p->priority && after->seq > p->seq)))
            after = after->pprev;
    p->state = GSD_PENDING;
    p->pprev = after;
    p->pnext = after ? after->pnext : st->phead;
    *(p->pnext ? &p->pnext->pprev : &st->ptail) = p;
    *(after ? &after->pnext : &st->phead) = p;
    st->npending++;
    if (i >= 0 && (!p->pnext || p->pnext->priority != p->priority))
        st->plevels[i].tail = p;
}

static void unpend(struct gsd_state *st, struct gsd_pod *p)
{
    size_t i = level_at(st, p->priority);
    if (i < st->nplevels && st->plevels[i].prio == p->priority) {
        struct gsd_plevel *l = &st->plevels[i];
        if (l->tail == p)
            l->tail = p->pprev && p->pprev->priority == p->priority ? p->pprev : NULL;
        if (--l->n == 0) {
            memmove(l, l + 1, (st->nplevels - i - 1) * sizeof(*l));
            st->nplevels--;
        }
    }
    *(p->pprev ? &p->pprev->pnext : &st->phead) = p->pnext;
    *(p->pnext ? &p->pnext->pprev : &st->ptail) = p->pprev;
    p->pprev = p->pnext = NULL;
    st->npending--;
}

static void free_pod(struct gsd_pod *p)
{
    if (p)
        free(p->meta);
    free(p);
}

/* A random RFC 4122 version 4 UUID, as Kubernetes gives pods. */
static void new_uid(char out[GSD_UID_MAX])
{
    uint8_t b[16] = {0};
    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
        uint64_t t = (uint64_t)gsd_mono_us();
        memcpy(b, &t, sizeof(t));
    }
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    snprintf(out, GSD_UID_MAX,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
             b[15]);
}

/* Give back what running pod @p holds: its share of the engine and its MIG instance. */
static void give_back(struct gsd_state *st, struct gsd_pod *p)
{
    gs_sched_release(st->sched, &p->req, &p->pl);
    gsd_mig_release(st, p);
}

/* Run the engine for @p asking @eff (its request as its quotas allow); on success it is running
 * and counted in its quotas. Return: 0; GS_UNSCHEDULABLE (reason set); -EINVAL (reason set: no
 * node could ever host it); -ENOMEM. */
static int place_as(struct gsd_state *st, struct gsd_pod *p, const struct gs_pod_req *eff)
{
    struct gs_diag why;
    struct gs_placement pl;
    const char *mig_why = NULL;
    gs_diag_init(&why);
    gsd_snap_touch(st, p); /* placed, or another reason */
    int64_t t0 = gsd_mono_us();
    int rc = p->mig[0] ? gsd_mig_take(st, p, eff, -1, &why, &mig_why)
                       : gs_sched_place(st->sched, eff, &pl, &why);
    gsd_hist_observe(&st->sched_lat, gsd_mono_us() - t0);
    if (rc == 0) {
        if (!p->mig[0])
            p->pl = pl;
        p->state = GSD_RUNNING;
        p->start_us = gsd_now_us();
        p->reason[0] = '\0';
        st->nrunning++;
        st->placed_total++;
        return ran(st, p, 1);
    } else if (rc > 0 || rc == -EINVAL) {
        snprintf(p->reason, sizeof(p->reason), "%.255s", why.msg);
        size_t len = strlen(p->reason);
        if (rc > 0 && st->not_ready) /* the engine sees their capacity as taken: say why */
            snprintf(p->reason + len, sizeof(p->reason) - len,
                     " (%zu node(s) NotReady: their capacity is held back)", st->not_ready);
        p->why = rc <= 0 ? "invalid request" : mig_why ? mig_why : gs_sched_last_reason(st->sched);
    }
    return rc;
}

/* Quotas first: a pod over one waits, naming it, and the engine is not asked. */
static int admit_quota(struct gsd_state *st, struct gsd_pod *p, struct gs_pod_req *eff)
{
    int rc = gsd_quota_check(st, p, eff, p->reason, sizeof(p->reason));
    if (rc) {
        p->why = "over quota";
        gsd_snap_touch(st, p);
    }
    return rc;
}

int gsd_pod_place(struct gsd_state *st, struct gsd_pod *p)
{
    struct gs_pod_req eff;
    int rc = admit_quota(st, p, &eff);
    return rc ? rc : place_as(st, p, &eff);
}

void gsd_pod_unplace(struct gsd_state *st, struct gsd_pod *p)
{
    gsd_snap_touch(st, p);
    ran(st, p, -1);
    give_back(st, p);
    p->pl = (struct gs_placement){.node = -1};
    p->state = GSD_PENDING;
    p->start_us = 0;
    st->nrunning--;
    st->placed_total--;
}

static void log_pod(const char *msg, const struct gsd_state *st, const struct gsd_pod *p)
{
    char key[2 * GSD_NAME_MAX + 1], gpus[64] = "", milli[16];
    snprintf(key, sizeof(key), "%s/%s", p->ns, p->name);
    if (p->state != GSD_RUNNING) {
        gsd_log("info", msg, "pod", key, "tenant", p->tenant, "state", "pending", "reason",
                p->reason, NULL);
        return;
    }
    for (int g = 0, off = 0; g < GS_GPUS_MAX && off < (int)sizeof(gpus); g++)
        if (gsd_pod_cards(p) & (1u << g))
            off += snprintf(gpus + off, sizeof(gpus) - (size_t)off, off ? ",%d" : "%d", g);
    snprintf(milli, sizeof(milli), "%u", p->req.num_gpu ? p->pl.gpu_milli : 0);
    gsd_log("info", msg, "pod", key, "tenant", p->tenant, "state", "running", "node",
            gs_cluster_node_name(st->cluster, (size_t)p->pl.node), "gpus", gpus, "gpu_milli", milli,
            p->mig[0] ? "mig" : NULL, p->mig, NULL);
}

/* The pod label `user`, which maxPodsPerUser counts by ("" when absent or too long). */
static void pod_user(struct gsd_pod *p, const json_t *labels)
{
    const char *u = json_string_value(json_object_get(labels, "user"));
    snprintf(p->user, sizeof(p->user), "%s", u && strlen(u) < sizeof(p->user) ? u : "");
}

void gsd_pod_probe(const struct gsd_state *st, const struct gsd_podspec *spec, const char *tenant,
                   struct gsd_pod *p)
{
    memcpy(p->ns, spec->ns, sizeof(p->ns));
    memcpy(p->name, spec->name, sizeof(p->name));
    snprintf(p->tenant, sizeof(p->tenant), "%s", tenant ? tenant : "");
    memcpy(p->uid, spec->uid, sizeof(p->uid));
    p->req = spec->req;
    p->gpumem_mib = spec->gpumem_mib;
    p->gpucores = spec->gpucores;
    p->priority = spec->priority;
    memcpy(p->models, spec->models, sizeof(p->models));
    memcpy(p->group, spec->group, sizeof(p->group));
    memcpy(p->pclass, spec->pclass, sizeof(p->pclass));
    memcpy(p->queue, spec->queue, sizeof(p->queue));
    memcpy(p->mig, spec->mig, sizeof(p->mig));
    p->mig_gpu = -1;
    p->grp = p->group[0] ? gsd_group_find(st, p->ns, p->group) : NULL;
    pod_user(p, spec->labels);
}

/* @spec's labels, annotations and PriorityClass as a pod keeps them (p->meta): JSON text, keys
 * sorted (malloc'd; NULL out of memory). */
static char *spec_meta(const struct gsd_podspec *spec)
{
    json_t *m = json_pack("{sOsO}", "labels", spec->labels, "annotations", spec->annotations);
    if (m && spec->pclass[0])
        json_object_set_new(m, "priorityClassName", json_string(spec->pclass));
    char *meta = m ? json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(m);
    return meta;
}

int gsd_pod_same(const struct gsd_state *st, const struct gsd_pod *p,
                 const struct gsd_podspec *spec, const char *tenant)
{
    struct gsd_pod q;
    memset(&q, 0, sizeof(q));
    gsd_pod_probe(st, spec, tenant, &q);
    char *meta = spec_meta(spec);
    int same = meta && p->source == GSD_SRC_API && !strcmp(meta, p->meta) &&
               !strcmp(q.tenant, p->tenant) && (!spec->uid[0] || !strcmp(spec->uid, p->uid)) &&
               q.req.cpu_milli == p->req.cpu_milli && q.req.memory_mib == p->req.memory_mib &&
               q.req.num_gpu == p->req.num_gpu && q.req.gpu_milli == p->req.gpu_milli &&
               q.req.model_mask == p->req.model_mask && q.gpumem_mib == p->gpumem_mib &&
               q.gpucores == p->gpucores && q.priority == p->priority &&
               !strcmp(q.models, p->models) && !strcmp(q.group, p->group) &&
               !strcmp(q.pclass, p->pclass) && !strcmp(q.queue, p->queue) && !strcmp(q.mig, p->mig);
    free(meta);
    return same;
}

static int new_pod(struct gsd_state *st, struct gsd_podspec *spec, const char *tenant, int source,
                   struct gsd_pod **out, struct gsd_ferr *e)
{
    char *meta = spec_meta(spec);
    struct gsd_pod *p = meta ? calloc(1, sizeof(*p)) : NULL;
    if (!p) {
        free(meta);
        return -ENOMEM;
    }
    p->meta = meta;
    if (strlen(meta) > GSD_META_MAX) {
        free_pod(p);
        e->status = 400;
        snprintf(e->field, sizeof(e->field), "metadata.annotations");
        snprintf(e->msg, sizeof(e->msg), "labels and annotations together exceed %d bytes",
                 GSD_META_MAX);
        return -EINVAL;
    }
    gsd_pod_probe(st, spec, tenant, p);
    if (!spec->uid[0])
        new_uid(p->uid);
    p->source = (uint8_t)source;
    p->seq = st->next_seq++;
    p->submit_us = gsd_now_us();
    p->pl.node = -1;
    *out = p;
    return 0;
}

static void set_ferr(struct gsd_ferr *e, int status, const char *field, const char *msg)
{
    e->status = status;
    snprintf(e->field, sizeof(e->field), "%s", field);
    snprintf(e->msg, sizeof(e->msg), "%s", msg);
}

/* Bind @p to node @node as kube-scheduler chose. Return: 0; -EINVAL with @e. */
static int bind_there(struct gsd_state *st, struct gsd_pod *p, int node, struct gsd_ferr *e)
{
    struct gs_diag why;
    struct gs_placement pl;
    struct gs_pod_req eff;
    const char *mig_why;
    gs_diag_init(&why);
    if (admit_quota(st, p, &eff)) {
        set_ferr(e, 409, "Node", p->reason);
        return -EINVAL;
    }
    int rc = p->mig[0] ? gsd_mig_take(st, p, &eff, node, &why, &mig_why)
                       : gs_sched_bind_node(st->sched, &eff, (size_t)node, &pl, &why);
    if (rc) {
        set_ferr(e, rc == -ENOMEM ? 500 : 409, "Node", why.msg[0] ? why.msg : "does not fit");
        return -EINVAL;
    }
    if (!p->mig[0])
        p->pl = pl;
    p->state = GSD_RUNNING;
    p->start_us = gsd_now_us();
    gsd_snap_touch(st, p);
    st->nrunning++;
    st->placed_total++;
    if (ran(st, p, 1)) {
        set_ferr(e, 500, "", "out of memory");
        return -ENOMEM;
    }
    return 0;
}

struct gsd_pod *gsd_pod_add(struct gsd_state *st, struct gsd_podspec *spec, const char *tenant,
                            int source, int node, struct gsd_ferr *e)
{
    struct gsd_pod *p;
    if (gsd_pod_find(st, spec->ns, spec->name)) {
        set_ferr(e, 409, "metadata.name", "a pod of that name exists in the namespace");
        return NULL;
    }
    if (st->npods >= (size_t)st->cfg->max_pods) {
        set_ferr(e, 507, "", "the daemon holds maxPods pods; cancel some first");
        return NULL;
    }
    if ((node < 0 && gsd_quota_limit(st->cfg, tenant ? tenant : "", spec, e)) ||
        gsd_mig_admit(st, spec, e))
        return NULL;
    int rc = new_pod(st, spec, tenant, source, &p, e);
    if (rc) {
        if (rc == -ENOMEM)
            set_ferr(e, 500, "", "out of memory");
        return NULL;
    }
    int gang = node < 0 && p->grp && gsd_gang_waiting(p->grp); /* placed with its gang, below */
    rc = node >= 0 ? bind_there(st, p, node, e) : gang ? GS_UNSCHEDULABLE : gsd_pod_place(st, p);
    if (rc == GS_UNSCHEDULABLE && node < 0 && !gang)
        rc = gsd_preempt_for(st, p);
    if (rc == -EIO)
        set_ferr(e, 503, "", "the store failed; the daemon restarts from its last commit");
    if (rc == -EINVAL && node < 0)
        set_ferr(e, 400, "spec.containers", p->reason);
    if (rc == -ENOMEM)
        set_ferr(e, 500, "", "out of memory");
    if (rc < 0 || link_pod(st, p)) {
        if (rc == 0 || (rc == -ENOMEM && p->state == GSD_RUNNING)) /* out of memory */
            gsd_pod_unplace(st, p);
        gsd_snap_forget(st, p); /* touched while it was tried */
        free_pod(p);
        return NULL;
    }
    if (p->state == GSD_PENDING)
        pend(st, p);
    const char *node_name =
        p->state == GSD_RUNNING ? gs_cluster_node_name(st->cluster, (size_t)p->pl.node) : NULL;
    if (gsd_store_pod_insert(st->store, p, node_name, gsd_node_model(st, p->pl.node))) {
        set_ferr(e, 503, "", "the store failed; the daemon restarts from its last commit");
        st->failed = 1;
        return NULL; /* memory is abandoned with the process: the store is the truth */
    }
    log_pod(source == GSD_SRC_EXTENDER ? "pod bound" : "pod submitted", st, p);
    if (gang && (rc = gsd_gang_try(st, p->grp)) != 0) {
        set_ferr(e, rc == -ENOMEM ? 500 : 503, "",
                 rc == -ENOMEM ? "out of memory" : "the store failed");
        return NULL;
    }
    return p;
}

int gsd_pod_cancel(struct gsd_state *st, struct gsd_pod *p)
{
    if (gsd_store_pod_delete(st->store, p, gsd_now_us())) {
        st->failed = 1;
        return -EIO;
    }
    if (p->state == GSD_RUNNING) {
        ran(st, p, -1);
        give_back(st, p);
        gsd_health_released(st, p->pl.node);
        st->nrunning--;
        st->retry = 1;
    } else {
        unpend(st, p);
    }
    char key[2 * GSD_NAME_MAX + 1];
    snprintf(key, sizeof(key), "%s/%s", p->ns, p->name);
    gsd_log("info", "pod cancelled", "pod", key, "tenant", p->tenant, NULL);
    unlink_pod(st, p);
    st->cancelled_total++;
    free_pod(p);
    return 0;
}

static int requeue_one(struct gsd_state *st, struct gsd_pod *p, const char *why)
{
    int node = p->pl.node;
    ran(st, p, -1);
    give_back(st, p);
    gsd_snap_touch(st, p);
    snprintf(p->reason, sizeof(p->reason), "%.255s", why);
    p->why = "requeued";
    p->pl = (struct gs_placement){.node = -1};
    p->state = GSD_PENDING;
    st->nrunning--;
    pend(st, p);
    gsd_health_released(st, node);
    st->requeued_total++;
    st->retry = 1;
    log_pod("pod requeued", st, p);
    if (gsd_store_pod_unstart(st->store, p, gsd_now_us())) {
        st->failed = 1;
        return -EIO;
    }
    return 0;
}

int gsd_pod_requeue(struct gsd_state *st, struct gsd_pod *p, const char *why)
{
    if (p->state != GSD_RUNNING)
        return 0;
    if (!p->group[0])
        return requeue_one(st, p, why) ? -EIO : 1;
    char ns[GSD_NAME_MAX], group[GSD_NAME_MAX], mate_why[GSD_REASON_MAX + GSD_NAME_MAX];
    memcpy(ns, p->ns, sizeof(ns));
    memcpy(group, p->group, sizeof(group));
    snprintf(mate_why, sizeof(mate_why), "PodGroup %s went back whole: %.200s", group, why);
    int n = 0;
    for (struct gsd_pod *q = st->head; q; q = q->next) /* arrival order: the ledger is too */
        if (q->state == GSD_RUNNING && !strcmp(q->ns, ns) && !strcmp(q->group, group)) {
            if (requeue_one(st, q, q == p ? why : mate_why))
                return -EIO;
            n++;
        }
    return n;
}

static int req_eq(const struct gs_pod_req *a, const struct gs_pod_req *b)
{
    return a->cpu_milli == b->cpu_milli && a->memory_mib == b->memory_mib &&
           a->num_gpu == b->num_gpu && a->gpu_milli == b->gpu_milli &&
           a->model_mask == b->model_mask;
}

int gsd_state_retry(struct gsd_state *st)
{
    struct gs_pod_req failed[RETRY_FAILED_MAX];
    const struct gsd_pod *failed_pod[RETRY_FAILED_MAX];
    int nfailed = 0;
    st->retry = 0;
    st->pass++;
    for (struct gsd_pod *p = st->phead, *next; p; p = next) {
        next = p->pnext;
        if (p->grp && gsd_gang_waiting(p->grp)) { /* the gang is tried whole, once a pass */
            struct gsd_group *g = p->grp;
            while (next && next->grp == g) /* those it may start leave the list */
                next = next->pnext;
            int rc = g->tried == st->pass ? 0 : gsd_gang_try(st, g);
            if (rc)
                return rc;
            continue;
        }
        struct gs_pod_req eff;
        if (admit_quota(st, p, &eff))
            continue;
        int seen = -1;
        for (int i = 0; i < nfailed && seen < 0; i++)
            seen = req_eq(&failed[i], &eff) && !strcmp(failed_pod[i]->mig, p->mig) ? i : -1;
        if (seen >= 0) { /* the same request failed earlier in this pass: so would this one */
            p->why = failed_pod[seen]->why;
            memcpy(p->reason, failed_pod[seen]->reason, sizeof(p->reason));
            gsd_snap_touch(st, p);
            continue;
        }
        int rc = place_as(st, p, &eff);
        if (rc == GS_UNSCHEDULABLE)
            rc = gsd_preempt_for(st, p);
        if (rc < 0)
            return rc;
        if (rc) {
            if (nfailed < RETRY_FAILED_MAX) {
                failed_pod[nfailed] = p;
                failed[nfailed++] = eff;
            }
            continue;
        }
        if (gsd_pod_started(st, p))
            return -EIO;
    }
    return 0;
}

const char *gsd_node_model(const struct gsd_state *st, int node)
{
    struct gs_node_info ni;
    if (node < 0 || gs_cluster_node_info(st->cluster, (size_t)node, &ni) || ni.model < 0)
        return "";
    return gs_catalog_at(ni.model)->name;
}

int gsd_pod_started(struct gsd_state *st, struct gsd_pod *p)
{
    unpend(st, p);
    if (gsd_store_pod_start(st->store, p, gs_cluster_node_name(st->cluster, (size_t)p->pl.node),
                            gsd_node_model(st, p->pl.node))) {
        st->failed = 1;
        return -EIO;
    }
    log_pod("pod placed", st, p);
    return 0;
}

/* A stored running pod back on its cards; when that is impossible it waits again. */
static int restore_running(struct gsd_state *st, struct gsd_pod *p, const char *node)
{
    struct gs_diag why;
    gs_diag_init(&why);
    int idx = gs_cluster_find(st->cluster, node);
    int rc = -ENOENT;
    if (idx >= 0) {
        p->pl.node = idx;
        rc = p->mig[0] ? gsd_mig_restore(st, p, &why)
                       : gs_sched_bind_placement(st->sched, &p->req, &p->pl, &why);
    }
    if (rc == 0) {
        st->nrunning++;
        return 0;
    }
    if (rc == -ENOMEM)
        return rc;
    snprintf(p->reason, sizeof(p->reason), "was running on %s, which %s", node,
             idx < 0 ? "the inventory no longer lists" : "cannot hold it any more");
    gsd_log("warn", "pod put back to pending", "pod", p->name, "namespace", p->ns, "reason",
            idx < 0 ? "node not in inventory" : why.msg, NULL);
    p->state = GSD_PENDING;
    p->pl = (struct gs_placement){.node = -1};
    p->mig_gpu = -1;
    return gsd_store_pod_unstart(st->store, p, gsd_now_us());
}

static int restore_one(void *ud, struct gsd_stored *sp)
{
    struct gsd_state *st = ud;
    struct gsd_pod *p = malloc(sizeof(*p));
    if (!p) {
        free(sp->pod.meta);
        return -ENOMEM;
    }
    *p = sp->pod;
    json_t *meta = json_loads(p->meta, 0, NULL);
    gsd_pod_group(json_object_get(meta, "labels"), json_object_get(meta, "annotations"), p->group);
    pod_user(p, json_object_get(meta, "labels"));
    const char *qn = json_string_value(
        json_object_get(json_object_get(meta, "annotations"), "scheduling.volcano.sh/queue-name"));
    snprintf(p->queue, sizeof(p->queue), "%s", qn && strlen(qn) < sizeof(p->queue) ? qn : "");
    const char *pc = json_string_value(json_object_get(meta, "priorityClassName"));
    snprintf(p->pclass, sizeof(p->pclass), "%s", pc && strlen(pc) < sizeof(p->pclass) ? pc : "");
    json_decref(meta);
    p->grp = p->group[0] ? gsd_group_find(st, p->ns, p->group) : NULL;
    int64_t mask = gsd_models_mask(p->models); /* catalog indexes are per build: by name */
    p->req.model_mask = mask > 0 && (p->req.num_gpu || p->mig[0]) ? (uint32_t)mask : 0;
    int rc = p->state == GSD_RUNNING ? restore_running(st, p, sp->node) : 0;
    if (p->state == GSD_RUNNING && p->source == GSD_SRC_API && p->priority < st->prio_floor)
        st->prio_floor = p->priority;
    if (!rc)
        rc = link_pod(st, p);
    if (rc) {
        free_pod(p);
        return rc;
    }
    if (p->state == GSD_PENDING)
        pend(st, p);
    return 0;
}

static uint32_t min_card_mib(const struct gs_cluster *c)
{
    uint32_t mask = gs_cluster_model_mask(c), best = 0;
    for (int m = 0; m < GS_MODEL_MAX; m++)
        if ((mask & (1u << m)) && (!best || gs_catalog_at(m)->memory_mib < best))
            best = gs_catalog_at(m)->memory_mib;
    return best;
}

static const double lat_bounds[] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                    0.01,    0.025,  0.05,    0.1,    0.25,  0.5,    1.0};

int gsd_state_init(struct gsd_state *st, struct gsd_config *cfg, struct gs_cluster *cluster,
                   const struct gs_pod_req *workload, size_t nworkload, const char *data_dir,
                   struct gs_diag *d)
{
    memset(st, 0, sizeof(*st));
    st->prio_floor = INT32_MAX;
    st->cfg = cfg;
    st->cluster = cluster;
    st->min_card_mib = min_card_mib(cluster);
    st->started_us = gsd_now_us();
    st->sched_lat = st->commit_lat = (struct gsd_hist){lat_bounds, 14, {0}, 0, 0};
    st->ext = calloc(GSD_EXT_CACHE, sizeof(*st->ext));
    if (!st->ext)
        return -ENOMEM;
    int rc = gs_profile_for_policy(cfg->policy, &st->prof, d);
    if (!rc)
        rc = gs_sched_new(cluster, st->prof, 42, &st->sched, d);
    if (!rc && nworkload)
        rc = gs_sched_set_workload(st->sched, workload, nworkload);
    if (!rc)
        rc = gsd_mig_init(st);
    if (!rc)
        rc = gsd_store_open(data_dir, &st->store, d);
    if (rc)
        return rc;
    st->next_seq = gsd_store_next_seq(st->store);
    int64_t t0 = gsd_mono_us();
    rc = gsd_store_begin(st->store);
    if (!rc)
        rc = gsd_groups_restore(st);
    if (!rc)
        rc = gsd_store_load(st->store, restore_one, st);
    if (!rc)
        rc = gsd_quota_recount(st);
    if (!rc)
        gsd_groups_recount(st);
    if (!rc)
        rc = gsd_health_init(st);
    if (!rc)
        rc = gsd_agents_init(st);
    if (!rc)
        rc = gsd_state_retry(st);
    if (!rc)
        rc = gsd_store_commit(st->store);
    else
        gsd_store_rollback(st->store);
    if (rc)
        return gs_diag_error_code(d, rc, "%s/gpusched.db: cannot restore the pods (%s)", data_dir,
                                  strerror(-rc));
    char n[3][24];
    snprintf(n[0], sizeof(n[0]), "%zu", st->nrunning);
    snprintf(n[1], sizeof(n[1]), "%zu", st->npending);
    snprintf(n[2], sizeof(n[2]), "%lld", (long long)(gsd_mono_us() - t0) / 1000);
    gsd_log("info", "store restored", "running", n[0], "pending", n[1], "ms", n[2], NULL);
    return 0;
}

void gsd_state_free(struct gsd_state *st)
{
    gsd_agents_free(st);
    for (struct gsd_pod *p = st->head, *next; p; p = next) {
        next = p->next;
        free_pod(p);
    }
    for (size_t i = 0; st->ext && i < GSD_EXT_CACHE; i++)
        gsd_podspec_clear(&st->ext[i].spec);
    free(st->ext);
    gsd_extender_free(st);
    free(st->tab);
    free(st->plevels);
    json_decref(st->bill_cache);
    free(st->fc_text);
    free(st->health);
    free(st->mig);
    free(st->mig_memo);
    gsd_quota_free(st);
    gsd_groups_free(st);
    gsd_store_close(st->store);
    gs_sched_free(st->sched);
    gs_profile_free(st->prof);
    gs_cluster_free(st->cluster);
    gsd_config_free(st->cfg);
    memset(st, 0, sizeof(*st));
}

void gsd_state_reload(struct gsd_state *st, struct gsd_config *cfg)
{
    if (strcmp(cfg->policy, st->cfg->policy))
        gsd_log("warn", "policy change takes effect at the next start", "policy", cfg->policy,
                NULL);
    memcpy(cfg->policy, st->cfg->policy, sizeof(cfg->policy));
    gsd_config_free(st->cfg);
    st->cfg = cfg;
    gsd_snap_touch_all(st);      /* queues may be others */
    json_decref(st->bill_cache); /* the rate card may have changed */
    st->bill_cache = NULL;
    if (gsd_quota_recount(st))
        st->failed = 1; /* out of memory: stop rather than enforce half-counted quotas */
    st->retry = 1;      /* a quota may have grown */
    char n[24];
    snprintf(n, sizeof(n), "%zu", cfg->ntenants);
    gsd_log("info", "config reloaded", "path", cfg->path ? cfg->path : "", "tenants", n, NULL);
}

/* RFC 3339 UTC with microseconds, as Kubernetes' MicroTime. */
json_t *gsd_time_json(int64_t us)
{
    if (!us)
        return json_null();
    char buf[40];
    time_t s = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t off = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + off, sizeof(buf) - off, ".%06dZ", (int)(us % 1000000));
    return json_string(buf);
}

json_t *gsd_pod_assignment(const struct gsd_state *st, const struct gsd_pod *p)
{
    struct gsd_podview v;
    gsd_podview_fill(st, p, &v);
    return gsd_podview_assignment(&v);
}

json_t *gsd_pod_json(const struct gsd_state *st, const struct gsd_pod *p)
{
    struct gsd_podview v;
    gsd_podview_fill(st, p, &v);
    return gsd_podview_json(&v);
}
