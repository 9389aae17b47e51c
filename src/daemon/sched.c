/*
 * gpuschedd's scheduler: the core's, over the daemon's inventory, policy files and tenants; see
 * sched.h. This file makes the policy the core reads, hands it pods and events, and carries out
 * its decisions on the daemon's own records (state, store, ledger, logs, counters).
 */
#include "sched.h"
#include "config.h"
#include "gang.h"
#include "kube.h"
#include "log.h"
#include "nodes.h"
#include "snapshot.h"
#include "state.h"
#include "store.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/diag.h"
#include "gpusched/fleet.h"
#include "gpusched/grow.h"
#include "gpusched/scenario.h"
#include "gpusched/tenancy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t gsd_sched_now(const struct gsd_state *st)
{
    return st->manual_clock ? st->manual_now_us : gsd_now_us();
}

int gsd_sched_tenant(const struct gsd_state *st, const char *name)
{
    for (size_t i = 0; i < st->sched.pol.ntenants; i++)
        if (!strcmp(st->sched.pol.tenants[i].name, name))
            return (int)i;
    return -1;
}

int gsd_node_index(const struct gsd_state *st, const char *name)
{
    return gs_cluster_find(st->cluster, name);
}

/* A copy of the @n items of @size bytes at @src with room for @extra more, zeroed (malloc'd);
 * NULL out of memory. */
static void *with_room(const void *src, size_t n, size_t extra, size_t size)
{
    void *v = calloc(n + extra + 1, size);
    if (v && n)
        memcpy(v, src, n * size);
    return v;
}

/* DaemonConfig tenant @dt into the @n tenants at @v: the namespaces it lists go to the tenant of
 * its name, made when the policy files have none. Return: how many tenants there are now. */
static size_t add_tenant(struct gs_tenant_spec *v, size_t n, const struct gsd_tenant *dt)
{
    size_t k = 0;
    while (k < n && strcmp(v[k].name, dt->name))
        k++;
    if (k == n)
        gs_tenant_spec_init(&v[n++], dt->name);
    v[k].nnamespaces = 0;
    for (size_t j = 0; j < dt->nns && j < GS_SCN_NAMESPACES; j++)
        memcpy(v[k].namespaces[v[k].nnamespaces++], dt->ns[j], sizeof(v[k].namespaces[0]));
    return n;
}

/*
 * What the core reads of tenants: the policy files' tenants (GPUQuota, the topology policy), each
 * DaemonConfig tenant owning the namespaces it lists (a tenant of the files of the same name takes
 * them). Queues are the Queue documents alone, as in the simulator: a pod that names none runs in
 * `default` (the core's rule, queue_of()).
 */
static int merge_tenants(struct gsd_state *st, const struct gs_policy *files)
{
    const struct gsd_config *c = st->cfg;
    size_t nt = files->ntenants;
    struct gs_tenant_spec *t = with_room(files->tenants, nt, c->ntenants, sizeof(*t));
    if (!t)
        return -ENOMEM;
    for (size_t i = 0; i < c->ntenants; i++)
        nt = add_tenant(t, nt, &c->tenants[i]);
    st->sched.tenants = st->sched.pol.tenants = t;
    st->sched.pol.ntenants = nt;
    return 0;
}

int gsd_sched_open(struct gsd_state *st, struct gs_diag *d)
{
    struct gsd_sched *s = &st->sched;
    struct gs_policy none;
    memset(&none, 0, sizeof(none));
    const struct gs_policy *files = st->cfg->quotas ? &st->cfg->quotas->policy : &none;
    s->pol = *files;
    s->pol.templates = st->inv->policy.templates;
    s->pol.ntemplates = st->inv->policy.ntemplates;
    s->pol.nodes = st->inv->policy.nodes;
    s->pol.nnodes = st->inv->policy.nnodes;
    s->pol.taints = st->inv->policy.taints;
    s->pol.ntaints = st->inv->policy.ntaints;
    int rc = merge_tenants(st, files);
    struct gs_tenancy_opts o = {.way = (enum gs_way)st->way,
                                .convert = 1,
                                .min_hold_us = 0,
                                .nodes_later = st->nodes_from_kube};
    if (!rc)
        rc = gs_tenancy_new(&s->pol, &o, &s->tn, d);
    for (size_t i = 0; !rc && i < st->ngroups; i++) {
        const struct gsd_group *g = st->groups[i];
        rc = gs_tenancy_podgroup(s->tn, &g->spec);
        if (!rc && g->succeeded)
            rc = gs_tenancy_podgroup_succeeded(s->tn, g->spec.ns, g->spec.name, g->succeeded);
    }
    if (rc)
        gsd_sched_close(st);
    return rc;
}

void gsd_sched_close(struct gsd_state *st)
{
    struct gsd_sched *s = &st->sched;
    gs_tenancy_free(s->tn);
    free(s->tenants);
    free(s->by_sid);
    memset(s, 0, sizeof(*s));
}

static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

void gsd_own_words(const struct gsd_state *st, const char *tenant, char *reason)
{
    static const char *const before[] = {"preempted by ", "reclaimed by ", "held for "};
    char out[GSD_REASON_MAX], ns[GSD_NAME_MAX];
    const char *from = reason, *at;
    size_t o = 0;
    for (size_t k = 0; k < sizeof(before) / sizeof(before[0]); k++) {
        if (!(at = strstr(from, before[k])))
            continue;
        const char *a = at + strlen(before[k]), *slash = a, *z;
        while (name_char(*slash) && *slash != '.')
            slash++;
        for (z = slash + 1; *slash == '/' && name_char(*z); z++)
            ;
        const struct gsd_tenant *t = NULL;
        if (*slash == '/' && slash > a && (size_t)(slash - a) < sizeof(ns)) {
            snprintf(ns, sizeof(ns), "%.*s", (int)(slash - a), a);
            t = gsd_tenant_of_ns(st->cfg, ns);
        }
        if (!t || !strcmp(t->name, tenant))
            continue;
        o += (size_t)snprintf(out + o, sizeof(out) - o, "%.*sa pod of another tenant",
                              (int)(a - from), from);
        o = o < sizeof(out) ? o : sizeof(out) - 1;
        from = z;
    }
    if (from == reason)
        return;
    snprintf(out + o, sizeof(out) - o, "%s", from);
    memcpy(reason, out, sizeof(out));
}

/* @p's JSON-facing view, from the scheduler's. */
int gsd_sched_sync(struct gsd_state *st, struct gsd_pod *p)
{
    struct gs_tenancy_pod v;
    char reason[GSD_REASON_MAX] = "";
    if (p->sid < 0 || gs_tenancy_pod(st->sched.tn, p->sid, &v) < 0)
        return 0;
    const struct gs_policy *pol = &st->sched.pol;
    p->priority = v.priority;
    snprintf(p->queue, sizeof(p->queue), "%s",
             (size_t)v.queue < pol->nqueues ? pol->queues[v.queue].name : "default");
    p->req.cpu_milli = v.cpu_milli;
    p->req.memory_mib = v.memory_mib;
    p->req.num_gpu = v.mig ? 0 : (uint32_t)v.ncards;
    p->req.gpu_milli = v.mig || !v.ncards ? 0 : (uint32_t)(v.whole ? 1000 : v.share_milli);
    p->req.model_mask = p->spec.model_mask;
    p->gpumem_mib = (int32_t)v.mem_mib;
    p->milli = v.milli;
    p->evictions = v.preemptions;
    p->first_start_us = v.first_start_us;
    p->charged = (int8_t)v.charged;
    p->saved_us = v.saved_us;
    snprintf(p->mig, sizeof(p->mig), "%s", v.mig ? v.mig : "");
    if (v.state == GS_POD_RUNNING) {
        p->pl = (struct gs_placement){v.node, v.gpu_mask, (uint32_t)v.share_milli};
        p->mig_start = (int8_t)v.mig_start;
        p->why = NULL;
    } else {
        snprintf(reason, sizeof(reason), "%s", v.reason);
        gsd_own_words(st, p->tenant, reason);
        p->why = v.why;
    }
    return gsd_pod_reason(p, "%s", reason) > 0;
}

static int remember(struct gsd_sched *s, int32_t sid, struct gsd_pod *p)
{
    struct gsd_pod **v = gs_grow(s->by_sid, &s->capsid, (size_t)sid + 1, sizeof(*v), 1024);
    if (!v)
        return -ENOMEM;
    s->by_sid = v;
    while (s->nsid <= (size_t)sid)
        s->by_sid[s->nsid++] = NULL;
    s->by_sid[sid] = p;
    return 0;
}

int gsd_sched_submit(struct gsd_state *st, struct gsd_pod *p, struct gsd_ferr *e)
{
    char why[GSD_REASON_MAX];
    int32_t sid;
    int rc = gs_tenancy_submit(st->sched.tn, gsd_sched_now(st), &p->spec, p->seq, &sid, why,
                               sizeof(why));
    if (rc == 1) {
        e->status = 400;
        snprintf(e->field, sizeof(e->field), "%s", gs_tenancy_refused_field(st->sched.tn));
        snprintf(e->msg, sizeof(e->msg), "%s", why);
        return -EINVAL;
    }
    if (rc == 0 && (rc = remember(&st->sched, sid, p)) == 0)
        p->sid = sid;
    if (rc < 0) {
        e->status = 500;
        snprintf(e->field, sizeof(e->field), "%s", "");
        snprintf(e->msg, sizeof(e->msg), "out of memory");
        return rc;
    }
    gsd_sched_sync(st, p);
    return 0;
}

void gsd_sched_forget(struct gsd_state *st, struct gsd_pod *p, int done)
{
    struct gsd_sched *s = &st->sched;
    if (p->sid < 0)
        return;
    if (!done)
        gs_tenancy_cancel(s->tn, gsd_sched_now(st), p->sid);
    gs_tenancy_release(s->tn, p->sid); /* its record may serve a later pod: -ENOMEM keeps it */
    s->by_sid[p->sid] = NULL;
    p->sid = -1;
}

/* @by: the pod it was evicted for, which the log names whoever's it is (gsd_own_words()), or NULL
 */
static void log_pod(const char *msg, const struct gsd_state *st, const struct gsd_pod *p,
                    const char *by)
{
    char key[GSD_KEY_MAX], gpus[64] = "", milli[16];
    snprintf(key, sizeof(key), "%s/%s", p->spec.ns, p->spec.name);
    if (p->state != GSD_RUNNING) {
        gsd_log("info", msg, "pod", key, "tenant", p->tenant, "state", "pending", "reason",
                gsd_reason(p), by ? "by" : NULL, by, NULL);
        return;
    }
    for (int g = 0, off = 0; g < GS_GPUS_MAX && off < (int)sizeof(gpus); g++)
        if (p->pl.gpu_mask & (1u << g))
            off += snprintf(gpus + off, sizeof(gpus) - (size_t)off, off ? ",%d" : "%d", g);
    snprintf(milli, sizeof(milli), "%u", p->pl.gpu_mask ? p->pl.gpu_milli : 0);
    gsd_log("info", msg, "pod", key, "tenant", p->tenant, "state",
            gsd_pod_allocated(p) ? "allocated" : "running", "node",
            gs_cluster_node_name(st->cluster, (size_t)p->pl.node), "gpus", gpus, "gpu_milli", milli,
            p->mig[0] ? "mig" : NULL, p->mig, NULL);
}

/* A bind: @p starts on what decision @d gave it. A later decision of the same batch may have
 * evicted it already (the scheduler's view is then pending): the bind is carried out as made,
 * the eviction after it. */
static int started(struct gsd_state *st, struct gsd_pod *p, const struct gs_decision *d,
                   int64_t now)
{
    gsd_pod_set_state(st, p, GSD_RUNNING);
    p->start_us = now;
    st->nudge_due |= p->nominated;
    st->gangs_check |= p->nominated && p->grp; /* whole again: its clock stops */
    gsd_sched_sync(st, p);
    p->pl = (struct gs_placement){d->node, d->gpu_mask, (uint32_t)d->share_milli};
    gsd_snap_touch(st, p);
    st->placed_total++;
    log_pod("pod placed", st, p, NULL);
    if (p->id &&
        gsd_store_pod_start(st->store, p, gs_cluster_node_name(st->cluster, (size_t)p->pl.node),
                            gsd_node_model(st, p->pl.node))) {
        st->failed = 1;
        return -EIO;
    }
    return 0;
}

int gsd_sched_adopt(struct gsd_state *st, struct gsd_pod *p, int node, uint32_t gpu_mask,
                    int mig_start)
{
    int64_t now = gsd_sched_now(st);
    /* the core's rule of what a pod may hold on a node, as a restart puts a stored pod back:
     * exactly those cards, free, of the mode and size its spec asks */
    int rc = gs_tenancy_restore(st->sched.tn, p->sid, node, gpu_mask, mig_start, now);
    if (rc == -EINVAL)
        return 1;
    if (rc)
        return rc;
    p->state = GSD_RUNNING; /* not linked yet: linking counts it running */
    p->start_us = now;      /* it counts (quotas, bills) from now: its run before is not known */
    gsd_sched_sync(st, p);
    return 0;
}

void gsd_sched_api_call(struct gsd_state *st, struct gsd_bind *b, const struct gsd_pod *p)
{
    struct gsd_bind **v =
        b ? gs_grow(st->evictions, &st->capevictions, st->nevictions + 1, sizeof(*v), 16) : NULL;
    if (!v) {
        gsd_bind_free(b);
        char key[GSD_KEY_MAX];
        snprintf(key, sizeof(key), "%s/%s", p->spec.ns, p->spec.name);
        gsd_log("error", "out of memory: a call to the API server is not made", "pod", key, NULL);
        return;
    }
    st->evictions = v;
    v[st->nevictions++] = b;
}

void gsd_sched_evict(struct gsd_state *st, const struct gsd_pod *p, int again)
{
    struct gsd_bind *b = st->cfg->kube ? gsd_evict_new(st->cfg->kube, p) : NULL;
    if (b)
        b->again = again;
    if (st->cfg->kube)
        gsd_sched_api_call(st, b, p);
}

/*
 * An eviction of a pod bound through Kubernetes: the API server, when the DaemonConfig names one,
 * is asked to evict it (once the batch commits, on a bind thread: kube.c), as kube-scheduler's
 * preemption does, and the
 * scheduler forgets it (its cards went to whom it was evicted for); the daemon keeps it, holding
 * no card, until the API server says it is gone, and no pod is bound on its node through the
 * extender meanwhile.
 */
static int evicted_in_kube(struct gsd_state *st, struct gsd_pod *p, int64_t now)
{
    char node[GS_NAME_MAX];
    snprintf(node, sizeof(node), "%s", gs_cluster_node_name(st->cluster, (size_t)p->pl.node));
    gsd_sched_forget(st, p, 0);
    gsd_pod_set_state(st, p, GSD_EVICTING); /* off the pending list stopped() put it on */
    char why[GSD_REASON_MAX];
    snprintf(why, sizeof(why), "%s", gsd_reason(p));
    gsd_pod_reason(p, /* it is never placed again: say what it waits for */
                   "evicted (%.330s): bound by kube-scheduler, it runs on node %s until %s", why,
                   node,
                   st->cfg->kube ? "the API server says it is gone" : "the admin deletes it here");
    p->evicted_us = now;
    gsd_pod_unnominate(st, p);
    gsd_snap_touch(st, p);
    gsd_sched_evict(st, p, 0);
    if (gsd_store_pod_evicting(st->store, p, node, now)) {
        st->failed = 1;
        return -EIO;
    }
    return 0;
}

/* An eviction: @p waits again, its reason saying why (preempted, reclaimed, a node lost). */
static int stopped(struct gsd_state *st, struct gsd_pod *p, const struct gs_decision *d,
                   int64_t now)
{
    /* bound in Kubernetes, where it cannot move: it is evicted there (with no API server to ask,
     * it stays evicting until the admin's DELETE says it is gone); a nominated pod is not bound
     * yet, so it just waits again */
    int kube = p->source == GSD_SRC_EXTENDER && p->state == GSD_RUNNING && !p->nominated;
    p->nudged = 0;
    gsd_pod_set_state(st, p, GSD_PENDING);
    gsd_sched_sync(st, p);
    gsd_snap_touch(st, p);
    p->pl = (struct gs_placement){.node = -1};
    const struct gsd_pod *by =
        d->by >= 0 && (size_t)d->by < st->sched.nsid ? st->sched.by_sid[d->by] : NULL;
    char by_key[GSD_KEY_MAX] = "";
    if (by) { /* the scheduler's words at the time: the pass since may have said more */
        snprintf(by_key, sizeof(by_key), "%s/%s", by->spec.ns, by->spec.name);
        char reason[GSD_REASON_MAX];
        snprintf(reason, sizeof(reason), "%s by %s", d->reclaim ? "reclaimed" : "preempted",
                 by_key);
        gsd_own_words(st, p->tenant, reason);
        gsd_pod_reason(p, "%s", reason);
    }
    char *kept = strdup(gsd_reason(p)); /* kept past the next pass */
    if (!kept)
        return -ENOMEM;
    free(p->last_eviction);
    p->last_eviction = kept;
    p->last_eviction_us = now;
    if (d->by < 0)
        st->requeued_total++;
    else if (d->reclaim)
        st->reclaimed_total++;
    else
        st->preempted_total++;
    log_pod(d->by < 0    ? "pod requeued"
            : d->reclaim ? "pod reclaimed"
                         : "pod preempted",
            st, p, by ? by_key : NULL);
    if (kube) {
        p->pl.node = d->node;
        return evicted_in_kube(st, p, now);
    }
    if (gsd_pod_unstart(st, p, now)) {
        st->failed = 1;
        return -EIO;
    }
    return 0;
}

static int carry_out(struct gsd_state *st, const struct gs_decision *dec, size_t n)
{
    /* the time the scheduler made them: the clock may have moved on since it was read */
    int64_t now = gs_tenancy_now(st->sched.tn);
    for (size_t i = 0; i < n; i++) {
        const struct gs_decision *d = &dec[i];
        struct gsd_pod *p = (size_t)d->pod < st->sched.nsid ? st->sched.by_sid[d->pod] : NULL;
        if (!p)
            continue; /* cancelled since */
        int rc = d->kind == GS_DECIDE_BIND ? started(st, p, d, now) : stopped(st, p, d, now);
        if (rc)
            return rc;
    }
    return 0;
}

int gsd_sched_run(struct gsd_state *st)
{
    const struct gs_decision *dec;
    size_t n;
    int64_t t0 = gsd_mono_us();
    int rc = gs_tenancy_schedule(st->sched.tn, gsd_sched_now(st), &dec, &n);
    gsd_hist_observe(&st->sched_lat, gsd_mono_us() - t0);
    st->sched.passed = 1;
    int r2 = carry_out(st, dec, n);
    return rc < 0 ? rc : r2;
}

int gsd_sched_take(struct gsd_state *st)
{
    const struct gs_decision *dec;
    size_t n;
    gs_tenancy_decisions(st->sched.tn, &dec, &n);
    st->sched.passed = 1;
    return carry_out(st, dec, n);
}

/* Complete every pod whose walltime ran out by @now, at @now. */
static int complete_due(struct gsd_state *st, int64_t now)
{
    int32_t sid;
    while (gs_tenancy_due(st->sched.tn, now, &sid)) {
        struct gsd_pod *p = (size_t)sid < st->sched.nsid ? st->sched.by_sid[sid] : NULL;
        int rc = gs_tenancy_complete(st->sched.tn, now, sid, NULL);
        if (rc >= 0)
            rc = p ? gsd_pod_complete(st, p, now, rc == 0) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

int gsd_sched_clock(struct gsd_state *st, int64_t to, int pass)
{
    int rc = 0;
    for (;;) { /* the scheduler's own times before @to: ends and mode holds, each with a pass */
        int64_t e = gs_tenancy_next_end(st->sched.tn), w = gs_tenancy_wake(st->sched.tn);
        e = w < e ? w : e;
        if (e >= to || rc)
            break;
        st->manual_now_us = e > st->manual_now_us ? e : st->manual_now_us;
        rc = complete_due(st, st->manual_now_us);
        if (!rc)
            rc = gsd_sched_run(st);
    }
    st->manual_now_us = to > st->manual_now_us ? to : st->manual_now_us;
    if (!rc)
        rc = complete_due(st, st->manual_now_us);
    if (!rc) /* stored: a restart goes on from here, never back */
        rc = gsd_store_clock(st->store, st->manual_now_us);
    st->held = !pass; /* the pass at @to is the batch's, after the nodes' expiry (server.c) */
    return rc;
}
