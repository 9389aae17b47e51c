/*
 * gpuschedd: the policy files, read by the simulator's loader (src/config/scenario*.c) so a file
 * means the same to both, and each tenant's quotas as GET /v1/tenants shows them. The quotas
 * themselves are enforced by the scheduler (src/core/tenancy/ledger.c), which also keeps their
 * use.
 */
#include "quota.h"
#include "log.h"
#include "queue.h"
#include "state.h"

#include "../config/yamlutil.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/grow.h"
#include "gpusched/mig.h"
#include "gpusched/scenario.h"
#include "gpusched/tenancy.h"

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

static int src_error(struct gs_diag *d, const struct gs_scn_src *src, const char *what,
                     const char *name)
{
    return gs_diag_error(d, "%s:%u:%u: %s %s", src->file, src->line, src->col, what, name);
}

/* Refuse what the daemon takes from elsewhere, before the policy is resolved: a Pod naming a
 * Queue no file defines is there by mistake, not for want of the Queue. */
static int foreign_kinds(const struct gs_scenario *s, struct gs_diag *d)
{
    if (s->npods)
        return src_error(d, &s->pods[0].src, "Pod",
                         "in a config file: submit pods to POST /v1/pods");
    if (s->policy.ntemplates)
        return src_error(d, &s->policy.templates[0].src, "Cluster",
                         "in a config file: the daemon's nodes come from --nodes");
    if (s->sim.defined)
        return src_error(d, &s->sim.src, "Simulation",
                         "in a config file: the daemon runs none (simulate it with gpusched "
                         "simulate --scenario)");
    if (!strcmp(s->foreign_kind, "DaemonConfig") || !strcmp(s->foreign_kind, "RateCard"))
        return src_error(d, &s->foreign_src, s->foreign_kind,
                         "in a policy file: the first --config is the DaemonConfig, and its "
                         "rateCard names the RateCard");
    return 0;
}

/* Tie GPUQuotas to the DaemonConfig's tenants. */
static int bind_policy(struct gsd_config *c, struct gs_scenario *s, struct gs_diag *d)
{
    for (size_t i = 0; i < s->policy.ntenants; i++) {
        const struct gs_tenant_spec *ts = &s->policy.tenants[i];
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
    if (s->policy.has_mig_policy)
        gsd_log("info", "config: GpuClusterPolicy decides which cards turn MIG", "at",
                src_at(&s->policy.mig_policy_src, at), NULL);
    return 0;
}

/* The text of policy files @paths[0..@n), each after a "---" line and a comment naming it, into
 * c->policy_text: what GET /v1/snapshot hands on; their paths into c->policy_paths. Each is read
 * with the scenario loader's cap, which read it first. Return: 0; -ENOENT, -EIO, -EINVAL (grown
 * past the cap); -ENOMEM. */
static int keep_text(struct gsd_config *c, const char *const *paths, size_t n, struct gs_diag *d)
{
    char *all = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        unsigned char *text;
        size_t tlen;
        if ((rc = gs__yaml_read(paths[i], false, (size_t)1 << 30, "too large for a policy file",
                                &text, &tlen, d)))
            break;
        size_t h = strlen(paths[i]) + 7; /* "---\n# " PATH "\n" */
        char *g = gs_grow(all, &cap, len + h + tlen + 2, 1, 65536);
        if (g) {
            all = g;
            len += (size_t)snprintf(all + len, h + 1, "---\n# %s\n", paths[i]);
            memcpy(all + len, text, tlen);
            len += tlen;
            if (len && all[len - 1] != '\n')
                all[len++] = '\n';
            all[len] = '\0';
        } else {
            rc = -ENOMEM;
        }
        free(text);
    }
    if (rc) {
        free(all);
        return rc;
    }
    size_t plen = 1;
    for (size_t i = 0; i < n; i++)
        plen += strlen(paths[i]) + 2;
    char *names = malloc(plen);
    if (!names) {
        free(all);
        return -ENOMEM;
    }
    for (size_t i = 0, at = 0; i < n; i++)
        at += (size_t)snprintf(names + at, plen - at, "%s%s", i ? ", " : "", paths[i]);
    free(c->policy_text);
    c->policy_text = all;
    free(c->policy_paths);
    c->policy_paths = names;
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
        if (!(rc = gsd_file_regular(paths[i], d)))
            rc = gs_scenario_load(s, paths[i], d);
    if (!rc)
        rc = foreign_kinds(s, d);
    if (!rc)
        rc = gs_scenario_resolve(s, d);
    if (d)
        d->warn = warn;
    if (!rc)
        rc = bind_policy(c, s, d);
    if (!rc)
        rc = keep_text(c, paths, n, d);
    if (rc) {
        for (size_t k = 0; k < c->ntenants; k++)
            c->tenants[k].quota = NULL;
        gs_scenario_free(s);
        return rc;
    }
    c->quotas = s;
    return 0;
}

static json_t *model_json(const struct gsd_state *st, const struct gs_model_quota *q, int tenant)
{
    int m = q->model;
    int64_t ded = 0, sh = 0;
    if (tenant >= 0 && m >= 0)
        gs_tenancy_quota_used(st->sched.tn, (size_t)tenant, m, &ded, &sh);
    return json_pack("{s:s, s:s, s:{s:I, s:I, s:I}, s:{s:I, s:I, s:I}}", "key", q->key, "modelName",
                     m >= 0 ? gs_catalog_at(m)->name : "", "hard", "total",
                     (json_int_t)q->total_milli, "dedicated", (json_int_t)q->dedicated_milli,
                     "shared", (json_int_t)q->shared_milli, "used", "total", (json_int_t)(ded + sh),
                     "dedicated", (json_int_t)ded, "shared", (json_int_t)sh);
}

void gsd_rquota_used(const struct gsd_state *st, size_t i, int64_t used[GSD_RQ_RES])
{
    gs_tenancy_rquota_used(st->sched.tn, i, used);
    used[0] *= 1000; /* cards, shown in milli-GPU as the hard limit is */
}

static json_t *rquotas_json(const struct gsd_state *st, const struct gsd_tenant *t)
{
    const struct gs_policy *pol = &st->sched.pol;
    json_t *a = json_array();
    for (size_t i = 0; i < pol->nrquotas; i++) {
        const struct gs_rquota_spec *q = &pol->rquotas[i];
        if (gsd_tenant_of_ns(st->cfg, q->ns) != t)
            continue;
        int64_t hard[GSD_RQ_RES] = {q->gpu_milli, q->gpumem_mib, q->cpu_milli, q->memory_mib,
                                    q->pods},
                used[GSD_RQ_RES];
        gsd_rquota_used(st, i, used);
        json_t *h = json_object(), *u = json_object();
        for (int r = 0; r < GSD_RQ_RES; r++)
            if (hard[r] != GS_UNSET) {
                json_object_set_new(h, gsd_rq_res[r], json_integer(hard[r]));
                json_object_set_new(u, gsd_rq_res[r], json_integer(used[r]));
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
    int ix = gsd_sched_tenant(st, t->name);
    for (int i = 0; ts && i < ts->nquotas; i++)
        json_array_append_new(models, model_json(st, &ts->quotas[i], ix));
    return json_pack(
        "{s:o, s:o, s:o, s:o}", "models", models, "maxGPUsPerPod",
        ts && ts->max_gpus_per_pod != GS_UNSET ? json_integer(ts->max_gpus_per_pod) : json_null(),
        "maxPodsPerUser",
        ts && ts->max_pods_per_user != GS_UNSET ? json_integer(ts->max_pods_per_user) : json_null(),
        "resourceQuotas", rquotas_json(st, t));
}
