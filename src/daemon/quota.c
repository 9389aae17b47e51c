/*
 * gpuschedd: tenants' quotas, from the simulator's own policy kinds (GPUQuota, ResourceQuota),
 * read by the simulator's loader (src/config/scenario*.c) so a file means the same to both.
 *
 * GPUQuota, per tenant and GPU model, as the simulator counts it (src/sim/tenancy_admit.c): a pod
 * of whole cards counts against `dedicated` while that has room, anything else against `shared`,
 * and the two together never pass `total`; a MIG instance counts its compute slices' part of the
 * card (gs_mig_profile_share_milli()), as shared. A pod whose candidate models all lack room waits
 * with the quota named; where some have room, the engine is offered only those. ResourceQuota
 * counts what Kubernetes' quota admission counts for the pods it scopes (requests.*, pods).
 *
 * Use lives only in memory: it is counted from the running pods, which the store holds, at start
 * and after every reload (a reload may change tenants, quotas and their order).
 */
#include "quota.h"
#include "log.h"
#include "queue.h"
#include "state.h"

#include "gpusched/cluster.h"
#include "gpusched/grow.h"
#include "gpusched/mig.h"
#include "gpusched/scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const gsd_rq_res[GSD_RQ_RES] = {"requests.nvidia.com/gpu", "requests.nvidia.com/gpumem",
                                            "requests.cpu", "requests.memory", "pods"};

static void log_warning(void *ud, const char *msg)
{
    (void)ud;
    gsd_log("warn", "config", "warning", msg, NULL);
}

/* "file:line:col" of @src. */
static const char *src_at(const struct gs_scn_src *src, char at[160])
{
    snprintf(at, 160, "%s:%u:%u", src->file, src->line, src->col);
    return at;
}

static void not_applied(const char *kind, const struct gs_scn_src *src, size_t n)
{
    char at[160];
    if (n)
        gsd_log("warn", "config: kind not applied by gpuschedd", "kind", kind, "at",
                src_at(src, at), NULL);
}

static int src_error(struct gs_diag *d, const struct gs_scn_src *src, const char *what,
                     const char *name)
{
    return gs_diag_error(d, "%s:%u:%u: %s %s", src->file, src->line, src->col, what, name);
}

/* Refuse what the daemon takes from elsewhere and tie GPUQuotas to the DaemonConfig's tenants. */
static int bind_policy(struct gsd_config *c, struct gs_scenario *s, struct gs_diag *d)
{
    if (s->npods)
        return src_error(d, &s->pods[0].src, "Pod",
                         "in a config file: submit pods to POST /v1/pods");
    if (s->ntemplates)
        return src_error(d, &s->templates[0].src, "Cluster",
                         "in a config file: the daemon's nodes come from --nodes");
    if (s->sim.defined)
        return gs_diag_error(d, "a config file holds a Simulation document: the daemon runs none");
    for (size_t i = 0; i < s->ntenants; i++) {
        const struct gs_tenant_spec *ts = &s->tenants[i];
        if (!ts->has_quota)
            continue;
        size_t k = 0;
        while (k < c->ntenants && strcmp(c->tenants[k].name, ts->name))
            k++;
        if (k == c->ntenants)
            return src_error(d, &ts->src,
                             "GPUQuota: spec.tenant is not a DaemonConfig tenant:", ts->name);
        c->tenants[k].quota = ts;
    }
    char at[160];
    if (s->has_mig_policy)
        gsd_log("info", "config: GpuClusterPolicy decides which cards turn MIG", "at",
                src_at(&s->mig_policy_src, at), NULL);
    if (s->nlimit_ranges)
        not_applied("LimitRange", &s->limit_ranges[0].src, s->nlimit_ranges);
    if (s->nprofiles)
        not_applied("ConfigMap kubeflow-gpu-profiles", &s->profiles[0].src, s->nprofiles);
    if (s->npodgroups)
        not_applied("PodGroup (POST it to /v1/podgroups)", &s->podgroups[0].src, s->npodgroups);
    return 0;
}

int gsd_quota_load(struct gsd_config *c, const char *const *paths, size_t n, struct gs_diag *d)
{
    struct gs_scenario *s;
    if (!n)
        return 0;
    int rc = gs_scenario_new(&s);
    if (rc)
        return rc;
    void (*warn)(void *, const char *) = d ? d->warn : NULL;
    if (d && !d->warn)
        d->warn = log_warning;
    for (size_t i = 0; i < n && !rc; i++)
        rc = gs_scenario_load(s, paths[i], d);
    if (!rc)
        rc = gs_scenario_resolve(s, d);
    if (d)
        d->warn = warn;
    if (!rc)
        rc = bind_policy(c, s, d);
    if (rc) {
        for (size_t k = 0; k < c->ntenants; k++)
            c->tenants[k].quota = NULL;
        gs_scenario_free(s);
        return rc;
    }
    c->quotas = s;
    return 0;
}

static const struct gsd_tenant *tenant_named(const struct gsd_config *c, const char *name,
                                             size_t *ix)
{
    const struct gsd_tenant *t = gsd_tenant_named(c, name);
    *ix = t ? (size_t)(t - c->tenants) : 0;
    return t;
}

/* Does ResourceQuota @q count pod @p (its namespace, and its PriorityClass when scoped)? */
static int rq_counts(const struct gs_rquota_spec *q, const struct gsd_pod *p)
{
    if (strcmp(q->ns, p->ns))
        return 0;
    int in = q->nscope_classes == 0;
    for (int j = 0; j < q->nscope_classes && !in; j++)
        in = !strcmp(q->scope_classes[j], p->pclass);
    return in;
}

static void rq_ask(const struct gsd_pod *p, int64_t add[GSD_RQ_RES])
{
    add[0] = (int64_t)p->req.num_gpu * 1000;
    add[1] = (int64_t)p->req.num_gpu * p->gpumem_mib;
    add[2] = p->req.cpu_milli;
    add[3] = p->req.memory_mib;
    add[4] = 1;
}

static int rq_check(const struct gsd_state *st, const struct gsd_pod *p, char *why, size_t size)
{
    const struct gs_scenario *s = st->cfg->quotas;
    int64_t add[GSD_RQ_RES];
    rq_ask(p, add);
    for (size_t i = 0; s && i < s->nrquotas; i++) {
        const struct gs_rquota_spec *q = &s->rquotas[i];
        int64_t hard[GSD_RQ_RES] = {q->gpu_milli, q->gpumem_mib, q->cpu_milli, q->memory_mib,
                                    q->pods};
        for (int r = 0; r < GSD_RQ_RES && rq_counts(q, p); r++)
            if (hard[r] != GS_UNSET && st->rq_used[i][r] + add[r] > hard[r]) {
                snprintf(why, size,
                         "over ResourceQuota %s/%s: %s %lld of %lld in use, pod asks %lld", q->ns,
                         q->name, gsd_rq_res[r], (long long)st->rq_used[i][r], (long long)hard[r],
                         (long long)add[r]);
                return GS_UNSCHEDULABLE;
            }
    }
    return 0;
}

static struct gsd_user_use *user_of(const struct gsd_state *st, const struct gsd_pod *p)
{
    for (size_t i = 0; i < st->nusers; i++)
        if (!strcmp(st->users[i].user, p->user) && !strcmp(st->users[i].tenant, p->tenant))
            return &st->users[i];
    return NULL;
}

/* Which bucket a share of @milli on @model goes to: 1 dedicated, 2 shared, 0 none has room. */
static int bucket(const struct gs_model_quota *q, const struct gsd_quota_use *u, int model,
                  int whole, int64_t milli)
{
    return gs_quota_bucket(q, u->dedicated[model], u->shared[model], whole, milli);
}

/*
 * The share pod @p counts in GPUQuota on catalog model @model, milli-GPU, and whether as whole
 * cards (@whole); -1 when it cannot run on that model. A MIG instance counts as the simulator
 * counts it: gs_mig_profile_share_milli() of the model, never whole.
 */
static int64_t share_on(const struct gsd_pod *p, int model, int *whole)
{
    *whole = !p->mig[0] && p->req.gpu_milli == 1000;
    if (!p->mig[0])
        return gs_pod_req_gpu_milli(&p->req);
    int mm = gs_mig_model_find(gs_catalog_at(model)->name);
    int k = mm >= 0 ? gs_mig_profile_find(mm, p->mig, -1) : -1;
    return k >= 0 ? gs_mig_profile_share_milli(mm, k) : -1;
}

static void over_gpuquota(const struct gsd_tenant *t, const struct gs_model_quota *q,
                          const struct gsd_quota_use *u, int model, int64_t milli, char *why,
                          size_t size)
{
    const char *name = gs_catalog_at(model)->name;
    if (!q) {
        snprintf(why, size, "over GPUQuota %s: it gives no %s", t->name, name);
        return;
    }
    int64_t used = u->dedicated[model] + u->shared[model];
    int total = used + milli > q->total_milli;
    snprintf(why, size, "over GPUQuota %s: %lld of %lld milli-GPU %s%s in use, pod asks %lld",
             t->name, (long long)(total ? used : u->shared[model]),
             (long long)(total ? q->total_milli : q->shared_milli), name, total ? "" : " (shared)",
             (long long)milli);
}

int gsd_quota_check(const struct gsd_state *st, const struct gsd_pod *p, struct gs_pod_req *eff,
                    char *why, size_t size)
{
    *eff = p->req;
    int rc = rq_check(st, p, why, size);
    if (!rc)
        rc = gsd_queue_check(st, p, why, size);
    size_t ix;
    const struct gsd_tenant *t = tenant_named(st->cfg, p->tenant, &ix);
    if (rc || !t || !t->quota)
        return rc;
    const struct gs_tenant_spec *ts = t->quota;
    const struct gsd_user_use *uu = p->user[0] ? user_of(st, p) : NULL;
    if (ts->max_pods_per_user != GS_UNSET && uu && uu->running >= ts->max_pods_per_user) {
        snprintf(why, size, "over GPUQuota %s: user %s has %d pods running (maxPodsPerUser %d)",
                 t->name, p->user, uu->running, ts->max_pods_per_user);
        return GS_UNSCHEDULABLE;
    }
    if (!gs_pod_req_gpu_milli(&p->req) && !p->mig[0])
        return 0;
    uint32_t cand =
                 (p->req.model_mask ? p->req.model_mask : ~0u) & gs_cluster_model_mask(st->cluster),
             ok = 0;
    int first = -1, whole;
    for (int m = 0; m < GS_MODEL_MAX; m++) {
        int64_t milli = cand & (1u << m) ? share_on(p, m, &whole) : -1;
        if (milli < 0)
            continue;
        const struct gs_model_quota *q = gs_tenant_model_quota(ts, m);
        if (q && bucket(q, &st->quse[ix], m, whole, milli))
            ok |= 1u << m;
        else if (first < 0 || (q && !gs_tenant_model_quota(ts, first)))
            first = m; /* the model the reason names: one the quota gives, when there is one */
    }
    if (first < 0) /* no candidate model in the cluster: the engine says so */
        return 0;
    if (ok) {
        eff->model_mask = ok;
        return 0;
    }
    over_gpuquota(t, gs_tenant_model_quota(ts, first), &st->quse[ix], first,
                  share_on(p, first, &whole), why, size);
    return GS_UNSCHEDULABLE;
}

int gsd_quota_limit(const struct gsd_config *c, const char *tenant, const struct gsd_podspec *spec,
                    struct gsd_ferr *e)
{
    size_t ix;
    const struct gsd_tenant *t = tenant_named(c, tenant, &ix);
    if (!t || !t->quota || t->quota->max_gpus_per_pod == GS_UNSET ||
        spec->req.num_gpu <= (uint32_t)t->quota->max_gpus_per_pod)
        return 0;
    e->status = 400;
    snprintf(e->field, sizeof(e->field), "spec.containers[].resources.limits.nvidia.com/gpu");
    snprintf(e->msg, sizeof(e->msg),
             "the pod asks %u GPUs; GPUQuota of tenant %s allows maxGPUsPerPod %d",
             spec->req.num_gpu, t->name, t->quota->max_gpus_per_pod);
    return -EINVAL;
}

static int user_charge(struct gsd_state *st, const struct gsd_pod *p, int sign)
{
    struct gsd_user_use *u = user_of(st, p);
    if (!u && sign < 0)
        return 0;
    if (!u) {
        struct gsd_user_use *m = gs_grow(st->users, &st->capusers, st->nusers + 1, sizeof(*m), 64);
        if (!m)
            return -ENOMEM;
        st->users = m;
        u = &st->users[st->nusers++];
        memcpy(u->tenant, p->tenant, sizeof(u->tenant));
        memcpy(u->user, p->user, sizeof(u->user));
        u->running = 0;
    }
    u->running += sign;
    return 0;
}

int gsd_quota_charge(struct gsd_state *st, struct gsd_pod *p, int sign)
{
    const struct gs_scenario *s = st->cfg->quotas;
    int64_t add[GSD_RQ_RES];
    gsd_queue_charge(st, p, sign);
    rq_ask(p, add);
    for (size_t i = 0; s && i < s->nrquotas; i++)
        for (int r = 0; r < GSD_RQ_RES && rq_counts(&s->rquotas[i], p); r++)
            st->rq_used[i][r] += sign * add[r];
    size_t ix;
    const struct gsd_tenant *t = tenant_named(st->cfg, p->tenant, &ix);
    if (!t || !t->quota)
        return 0;
    struct gs_node_info ni;
    int whole = !p->mig[0] && p->req.gpu_milli == 1000;
    int64_t milli = p->mig[0] ? p->mig_milli : gs_pod_req_gpu_milli(&p->req);
    if (milli && !gs_cluster_node_info(st->cluster, (size_t)p->pl.node, &ni) && ni.model >= 0) {
        const struct gs_model_quota *q = gs_tenant_model_quota(t->quota, ni.model);
        if (sign > 0) /* over every bucket (a bind by kube-scheduler, a lowered quota): shared */
            p->charged = (int8_t)(q ? bucket(q, &st->quse[ix], ni.model, whole, milli) : 0);
        if (sign > 0 && q && !p->charged)
            p->charged = 2;
        if (p->charged)
            (p->charged == 1 ? st->quse[ix].dedicated : st->quse[ix].shared)[ni.model] +=
                sign * milli;
    }
    return p->user[0] && t->quota->max_pods_per_user != GS_UNSET ? user_charge(st, p, sign) : 0;
}

void gsd_quota_free(struct gsd_state *st)
{
    free(st->quse);
    free(st->rq_used);
    free(st->users);
    free(st->qused);
    st->qused = NULL;
    st->quse = NULL;
    st->rq_used = NULL;
    st->users = NULL;
    st->nusers = st->capusers = 0;
}

int gsd_quota_recount(struct gsd_state *st)
{
    gsd_quota_free(st);
    size_t nt = st->cfg->ntenants, nq = st->cfg->quotas ? st->cfg->quotas->nrquotas : 0;
    st->quse = calloc(nt ? nt : 1, sizeof(*st->quse));
    st->rq_used = calloc(nq ? nq : 1, sizeof(*st->rq_used));
    st->qused = calloc((st->cfg->quotas ? st->cfg->quotas->nqueues : 0) + 1, sizeof(*st->qused));
    if (!st->quse || !st->rq_used || !st->qused)
        return -ENOMEM;
    for (struct gsd_pod *p = st->head; p; p = p->next) {
        p->charged = 0;
        p->qcharged = 0;
        if (p->state == GSD_RUNNING && gsd_quota_charge(st, p, 1))
            return -ENOMEM;
    }
    return 0;
}

static json_t *model_json(const struct gs_model_quota *q, const struct gsd_quota_use *u)
{
    int m = q->model;
    return json_pack("{s:s, s:s, s:{s:I, s:I, s:I}, s:{s:I, s:I, s:I}}", "key", q->key, "modelName",
                     m >= 0 ? gs_catalog_at(m)->name : "", "hard", "total",
                     (json_int_t)q->total_milli, "dedicated", (json_int_t)q->dedicated_milli,
                     "shared", (json_int_t)q->shared_milli, "used", "total",
                     (json_int_t)(m >= 0 ? u->dedicated[m] + u->shared[m] : 0), "dedicated",
                     (json_int_t)(m >= 0 ? u->dedicated[m] : 0), "shared",
                     (json_int_t)(m >= 0 ? u->shared[m] : 0));
}

static json_t *rquotas_json(const struct gsd_state *st, const struct gsd_tenant *t)
{
    const struct gs_scenario *s = st->cfg->quotas;
    json_t *a = json_array();
    for (size_t i = 0; s && i < s->nrquotas; i++) {
        const struct gs_rquota_spec *q = &s->rquotas[i];
        if (gsd_tenant_of_ns(st->cfg, q->ns) != t)
            continue;
        int64_t hard[GSD_RQ_RES] = {q->gpu_milli, q->gpumem_mib, q->cpu_milli, q->memory_mib,
                                    q->pods};
        json_t *h = json_object(), *u = json_object();
        for (int r = 0; r < GSD_RQ_RES; r++)
            if (hard[r] != GS_UNSET) {
                json_object_set_new(h, gsd_rq_res[r], json_integer(hard[r]));
                json_object_set_new(u, gsd_rq_res[r], json_integer(st->rq_used[i][r]));
            }
        json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:o}", "namespace", q->ns, "name",
                                           q->name, "hard", h, "used", u));
    }
    return a;
}

json_t *gsd_quota_json(const struct gsd_state *st, const struct gsd_tenant *t)
{
    const struct gs_tenant_spec *ts = t->quota;
    json_t *models = json_array();
    size_t ix = (size_t)(t - st->cfg->tenants);
    for (int i = 0; ts && i < ts->nquotas; i++)
        json_array_append_new(models, model_json(&ts->quotas[i], &st->quse[ix]));
    return json_pack(
        "{s:o, s:o, s:o, s:o}", "models", models, "maxGPUsPerPod",
        ts && ts->max_gpus_per_pod != GS_UNSET ? json_integer(ts->max_gpus_per_pod) : json_null(),
        "maxPodsPerUser",
        ts && ts->max_pods_per_user != GS_UNSET ? json_integer(ts->max_pods_per_user) : json_null(),
        "resourceQuotas", rquotas_json(st, t));
}
