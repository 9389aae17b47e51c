/*
 * The tenancy policy kinds: GPUQuota (seed 000 §1.2), the topology-gpu-policy ConfigMap (its
 * policy.yaml, seed 000 §3.1) and the kubeflow-gpu-profiles ConfigMap (its profiles.yaml, seed
 * 004 §1.2). A tenant is the merge, by tenant name, of its GPUQuota and its entry in the
 * policy's `tenants:` map.
 *
 * GPUQuota model keys: a key names a catalog model by its name or alias in any case ("a100-80gb"
 * is A100-SXM4-80GB, "h100" is H100-SXM5-80GB, whose alias H100-80GB it also answers to), or as
 * GPU feature discovery labels it ("NVIDIA-A100-SXM4-80GB"). Two keys of one quota may not name
 * the same model. total/dedicated/shared are GPUs (fractions allowed, kept in milli-GPU); an
 * absent dedicated or shared is 0 and an absent total is their sum. The tenant is spec.tenant,
 * else the quota's namespace; its namespaces are metadata.namespace plus spec.namespaces.
 *
 * The ConfigMaps' entries are YAML inside a string; they are parsed as YAML and their errors
 * name the line and column in the outer file (exactly for a `|` block, which the seeds use).
 */
#include "scenario_impl.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define GPU_MILLI_MAX (INT64_C(1000000) * 1000) /* a million GPUs */

static const char *const obj_keys[] = {"apiVersion", "kind", "metadata", "spec"};
enum { O_API, O_KIND, O_META, O_SPEC };

int gs__scn_tenant(struct gs__yctx *c, struct gs__scn_load *L, const yaml_node_t *at,
                   const char *name, long *out)
{
    struct gs_tenant_spec t;
    *out = gs__scn_find(L->s, GS__K_TENANT, "", name);
    if (*out >= 0)
        return 0;
    gs_tenant_spec_init(&t, name);
    gs__scn_src(c, L, at, &t.src);
    *out = gs__scn_push(c, at, L->s, GS__K_TENANT, &t);
    return *out < 0 ? (int)*out : 0;
}

/* add_ns() - namespace @ns into tenant @t of @s, once; the resolved ns index is then stale. */
static int add_ns(struct gs__yctx *c, const yaml_node_t *at, struct gs_scenario *s,
                  struct gs_tenant_spec *t, const char *ns)
{
    s->priv->ns_tenant_for = (size_t)-1;
    for (int i = 0; i < t->nnamespaces; i++)
        if (strcmp(t->namespaces[i], ns) == 0)
            return 0;
    if (t->nnamespaces >= GS_SCN_NAMESPACES)
        return gs__yaml_err_code(c, at, -E2BIG, "tenant %s: more than %d namespaces", t->name,
                                 GS_SCN_NAMESPACES);
    memcpy(t->namespaces[t->nnamespaces++], ns, strlen(ns) + 1);
    return 0;
}

struct tref {
    struct gs__scn_load *L;
    long t;
    yaml_node_t *seq; /* the namespaces' list */
};

static int ns_item(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg);

int gs__scn_tenant_owns(struct gs__yctx *c, struct gs__scn_load *L, long t, yaml_node_t *seq)
{
    struct tref r = {L, t, seq};
    L->s->policy.tenants[t].nnamespaces = 0;
    L->s->priv->ns_tenant_for = (size_t)-1;
    return gs__yaml_each_item(c, seq, "tenants[].namespaces", ns_item, &r);
}

static int ns_item(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    struct tref *r = arg;
    char ns[GS_SCN_NAME_MAX];
    int rc = gs__scn_dns_name(c, n, 1, "namespaces[]", ns, sizeof(ns));
    yaml_node_t *before = rc ? NULL : gs__yaml_earlier(c, r->seq, idx, NULL);
    if (before)
        return gs__yaml_err(c, n, "namespace %s is listed twice (also at %zu:%zu)", ns,
                            before->start_mark.line + 1, before->start_mark.column + 1);
    return rc ? rc : add_ns(c, n, r->L->s, &r->L->s->policy.tenants[r->t], ns);
}

/* --- GPUQuota --- */

enum { G_TENANT, G_PC, G_QUOTAS, G_LIMITS, G_POLICY, G_NAMESPACES };
static const char *const gq_keys[] = {"tenant", "priorityClass",    "quotas",
                                      "limits", "schedulingPolicy", "namespaces"};
enum { MQ_TOTAL, MQ_DEDICATED, MQ_SHARED };
static const char *const mq_keys[] = {"total", "dedicated", "shared"};
enum { GL_MAX_GPUS, GL_MAX_PODS };
static const char *const gl_keys[] = {"maxGPUsPerPod", "maxPodsPerUser"};
enum { GP_TOPOLOGY, GP_GANG, GP_BINPACK };
static const char *const gp_keys[] = {"topologyAwareness", "gangScheduling", "binPacking"};

/* check_sum() - warn when total is not dedicated + shared, saying what applies. */
static void check_sum(struct gs__yctx *c, yaml_node_t *at, const struct gs_model_quota *q)
{
    char t[32], dd[32], sh[32];
    int64_t sum = q->dedicated_milli + q->shared_milli;
    if (q->total_milli == sum)
        return;
    gs__scn_gpus(q->total_milli, t, sizeof(t));
    gs__scn_gpus(q->dedicated_milli, dd, sizeof(dd));
    gs__scn_gpus(q->shared_milli, sh, sizeof(sh));
    if (q->total_milli < sum)
        gs__yaml_warn(c, at,
                      "quota %s: total %s is not dedicated %s + shared %s; total applies (it "
                      "caps dedicated and shared use together)",
                      q->key, t, dd, sh);
    else
        gs__yaml_warn(c, at,
                      "quota %s: total %s is not dedicated %s + shared %s; the GPUs above their "
                      "sum can be used neither as dedicated nor as shared",
                      q->key, t, dd, sh);
}

static int model_quota(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct tref *r = arg;
    struct gs_tenant_spec *t = &r->L->s->policy.tenants[r->t];
    yaml_node_t *f[3] = {NULL};
    char what[128], buf[GS__YAML_SHOW_BUF];
    if (t->nquotas >= GS_SCN_QUOTA_MODELS)
        return gs__yaml_err_code(c, k, -E2BIG, "more than %d GPU models in a quota",
                                 GS_SCN_QUOTA_MODELS);
    struct gs_model_quota q = {.model = GS_UNSET};
    int rc = gs__scn_key_name(c, k, "a quotas key", q.key, sizeof(q.key));
    if (rc)
        return rc;
    q.model = gs_catalog_find_product(q.key);
    if (q.model < 0)
        return gs__yaml_err(c, k, "quotas key %s names no GPU model in the catalog",
                            gs__yaml_show(k, buf));
    for (int i = 0; i < t->nquotas; i++)
        if (t->quotas[i].model == q.model)
            return gs__yaml_err(c, k, "quotas keys \"%s\" and \"%s\" name the same GPU model",
                                t->quotas[i].key, q.key);
    gs__yaml_label(what, sizeof(what), "quotas.%s", q.key);
    rc = gs__yaml_each_field(c, v, mq_keys, 3, what, gs__scn_keep, f);
    int64_t *dst[3] = {&q.total_milli, &q.dedicated_milli, &q.shared_milli};
    for (int i = 0; !rc && i < 3; i++) {
        gs__yaml_label(what, sizeof(what), "quotas.%s.%s", q.key, mq_keys[i]);
        if (f[i])
            rc = gs__scn_qty(c, f[i], what, 3, 0, 0, "milli-GPU", 0, GPU_MILLI_MAX, dst[i]);
    }
    if (rc)
        return rc;
    if (!f[MQ_TOTAL])
        q.total_milli = q.dedicated_milli + q.shared_milli;
    check_sum(c, f[MQ_TOTAL] ? f[MQ_TOTAL] : k, &q);
    t->quotas[t->nquotas++] = q;
    return 0;
}

static int gq_limits(struct gs__yctx *c, yaml_node_t *n, struct gs_tenant_spec *t)
{
    yaml_node_t *f[2] = {NULL};
    int64_t v;
    int rc = gs__yaml_each_field(c, n, gl_keys, 2, "spec.limits", gs__scn_keep, f);
    if (!rc && f[GL_MAX_GPUS] &&
        !(rc = gs__scn_int(c, f[GL_MAX_GPUS], "maxGPUsPerPod", 1, 1000000, &v)))
        t->max_gpus_per_pod = (int32_t)v;
    if (!rc && f[GL_MAX_PODS] &&
        !(rc = gs__scn_int(c, f[GL_MAX_PODS], "maxPodsPerUser", 1, INT32_MAX, &v)))
        t->max_pods_per_user = (int32_t)v;
    return rc;
}

static int gq_policy(struct gs__yctx *c, yaml_node_t *n, struct gs_tenant_spec *t)
{
    yaml_node_t *f[3] = {NULL};
    int *dst[3] = {&t->topology_awareness, &t->gang_scheduling, &t->bin_packing};
    int rc = gs__yaml_each_field(c, n, gp_keys, 3, "spec.schedulingPolicy", gs__scn_keep, f);
    for (int i = 0; !rc && i < 3; i++)
        if (f[i])
            rc = gs__scn_bool(c, f[i], gp_keys[i], dst[i]);
    return rc;
}

/* gq_tenant() - the tenant a GPUQuota is for, refusing a second quota for it. */
static int gq_tenant(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *at, const char *name,
                     long *t)
{
    char where[160];
    int rc = gs__scn_tenant(c, L, at, name, t);
    if (rc)
        return rc;
    struct gs_tenant_spec *ts = &L->s->policy.tenants[*t];
    if (ts->has_quota)
        return gs__yaml_err(c, at, "a second GPUQuota for tenant %s (the first is at %s)", name,
                            gs__scn_where(&ts->src, where, sizeof(where)));
    if (!ts->in_policy) /* created here: the tenant's place is the quota's */
        gs__scn_src(c, L, at, &ts->src);
    ts->has_quota = 1;
    return 0;
}

int gs__scn_gpuquota(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root)
{
    yaml_node_t *o[4] = {NULL}, *f[GS__YAML_NKEYS(gq_keys)] = {NULL};
    struct gs__scn_meta m;
    char name[GS_SCN_NAME_MAX];
    int rc = gs__yaml_each_field(c, root, obj_keys, 4, "GPUQuota", gs__scn_keep, o);
    if (!rc)
        rc = gs__scn_meta(c, root, o[O_META], true, sizeof(name), &m);
    if (!rc && o[O_SPEC])
        rc = gs__yaml_each_field(c, o[O_SPEC], gq_keys, GS__YAML_NKEYS(gq_keys), "GPUQuota spec",
                                 gs__scn_keep, f);
    memcpy(name, m.ns_s, sizeof(name));
    if (!rc && f[G_TENANT])
        rc = gs__scn_dns_name(c, f[G_TENANT], 1, "spec.tenant", name, sizeof(name));
    struct tref r = {L, -1, f[G_NAMESPACES]};
    if (!rc)
        rc = gq_tenant(c, L, f[G_TENANT] ? f[G_TENANT] : m.ns ? m.ns : root, name, &r.t);
    if (rc)
        return rc;
    struct gs_tenant_spec *t = &L->s->policy.tenants[r.t];
    rc = add_ns(c, m.ns ? m.ns : root, L->s, t, m.ns_s);
    if (!rc && f[G_NAMESPACES])
        rc = gs__yaml_each_item(c, f[G_NAMESPACES], "spec.namespaces", ns_item, &r);
    if (!rc && f[G_PC])
        rc = gs__scn_name(c, f[G_PC], "spec.priorityClass", t->priority_class,
                          sizeof(t->priority_class));
    if (!rc && f[G_QUOTAS])
        rc = gs__yaml_each_pair(c, f[G_QUOTAS], "spec.quotas", model_quota, &r);
    if (!rc && f[G_LIMITS])
        rc = gq_limits(c, f[G_LIMITS], t);
    if (!rc && f[G_POLICY])
        rc = gq_policy(c, f[G_POLICY], t);
    return rc;
}

/* --- topology-gpu-policy: policy.yaml --- */

enum { PY_SCHEDULING, PY_TENANTS };
static const char *const policy_keys[] = {"scheduling", "tenants"};
static const char *const tier_keys[] = {"nvlink", "pcie", "node", "az"};
enum { TS_STRATEGY, TS_SHARING, TS_OVERCOMMIT, TS_ISOLATION, TS_MAX_SKEW, TS_TIME_SLICING };
static const char *const ts_keys[] = {"strategy",  "sharing", "overcommit",
                                      "isolation", "maxSkew", "timeSlicing"};
static const char *const strategies[] = {"colocate", "prefer-colocate", "spread"};
static const char *const isolations[] = {"exclusive", "soft", "hard"};
enum { PT_TOPOLOGY, PT_GPU_COUNT, PT_PRIORITY, PT_NAMESPACES };
static const char *const pt_keys[] = {"topology", "gpuCount", "priority", "namespaces"};

struct pol {
    struct gs__scn_load *L;
    int ndocs;
    const char *key;    /* the data entry: "policy.yaml" */
    gs__yaml_doc_fn fn; /* its reader */
};

static int tier_fields(struct gs__yctx *c, yaml_node_t **f, const char *what,
                       struct gs_tier_spec *t)
{
    int v = 0;
    int64_t x;
    int rc = 0;
    if (f[TS_STRATEGY] && !(rc = gs__scn_enum(c, f[TS_STRATEGY], "strategy", strategies, 3, &v)))
        t->strategy = (enum gs_strategy)v;
    if (!rc && f[TS_SHARING])
        rc = gs__scn_bool(c, f[TS_SHARING], "sharing", &t->sharing);
    t->isolation = t->sharing ? GS_ISOLATION_SOFT : GS_ISOLATION_EXCLUSIVE;
    if (!rc && f[TS_ISOLATION] &&
        !(rc = gs__scn_enum(c, f[TS_ISOLATION], "isolation", isolations, 3, &v)))
        t->isolation = (enum gs_isolation)v;
    if (!rc && f[TS_OVERCOMMIT] &&
        !(rc = gs__scn_qty(c, f[TS_OVERCOMMIT], what, 3, 0, GS__Q_PLAIN, "thousandths", 1000,
                           100000, &x)))
        t->overcommit_milli = (int32_t)x;
    if (!rc && f[TS_MAX_SKEW] && !(rc = gs__scn_int(c, f[TS_MAX_SKEW], "maxSkew", 0, 1000000, &x)))
        t->max_skew = (int32_t)x;
    if (!rc && f[TS_TIME_SLICING])
        rc = gs__scn_bool(c, f[TS_TIME_SLICING], "timeSlicing", &t->timeslice);
    if (!rc && f[TS_OVERCOMMIT] && !t->sharing && t->overcommit_milli != 1000)
        rc = gs__yaml_err(c, f[TS_OVERCOMMIT],
                          "overcommit needs sharing: true beside it (it overcommits a shared "
                          "card's compute; without sharing its pods take whole cards)");
    if (!rc && t->timeslice && !t->sharing) /* time slicing is a way of sharing a card */
        rc = gs__yaml_err(c, f[TS_TIME_SLICING],
                          "timeSlicing: true needs sharing: true beside it (time slicing shares "
                          "a card; without sharing its pods take whole cards)");
    return rc;
}

/*
 * What tier @field (0 nvlink, 1 pcie, 2 node, 3 az) builds of @t: nvlink keeps a pod's cards in
 * one NVLink group, required under colocate with maxSkew 0 (or none) and preferred otherwise;
 * pcie prefers one PCIe domain; node and az spread a gang's members. A strategy a tier does not
 * build, or a maxSkew off nvlink, would be taken and do nothing: refused.
 */
static int tier_built(struct gs__yctx *c, int field, yaml_node_t **f, const struct gs_tier_spec *t)
{
    static const unsigned built[] = {1u << GS_STRATEGY_COLOCATE | 1u << GS_STRATEGY_PREFER_COLOCATE,
                                     1u << GS_STRATEGY_PREFER_COLOCATE, 1u << GS_STRATEGY_SPREAD,
                                     1u << GS_STRATEGY_SPREAD};
    static const char *const does[] = {
        "colocate (required) or prefer-colocate", "prefer-colocate (one PCIe domain preferred)",
        "spread (a gang's members over nodes)", "spread (a gang's members over zones)"};
    if (f[TS_STRATEGY] && !(built[field] >> t->strategy & 1))
        return gs__yaml_err(c, f[TS_STRATEGY], "scheduling.%s.strategy %s: this tier is %s",
                            tier_keys[field], strategies[t->strategy], does[field]);
    if (f[TS_MAX_SKEW] && field != 0)
        return gs__yaml_err(c, f[TS_MAX_SKEW],
                            "scheduling.%s.maxSkew: read on the nvlink tier only (0 or none: its "
                            "NVLink group is required; more: preferred)",
                            tier_keys[field]);
    return 0;
}

static int tier_field(struct gs__yctx *c, int field, yaml_node_t *val, void *arg)
{
    struct pol *p = arg;
    /* The seed's choices are the defaults: NVLink and PCIe keep a job together, node and zone
     * spread it. */
    static const enum gs_strategy dflt[] = {GS_STRATEGY_COLOCATE, GS_STRATEGY_PREFER_COLOCATE,
                                            GS_STRATEGY_SPREAD, GS_STRATEGY_SPREAD};
    yaml_node_t *f[6] = {NULL};
    char what[64];
    struct gs_tier_spec t = {
        .defined = 1, .strategy = dflt[field], .overcommit_milli = 1000, .max_skew = GS_UNSET};
    gs__yaml_label(what, sizeof(what), "scheduling.%s", tier_keys[field]);
    int rc = gs__yaml_each_field(c, val, ts_keys, 6, what, gs__scn_keep, f);
    gs__yaml_label(what, sizeof(what), "scheduling.%s.overcommit", tier_keys[field]);
    if (!rc)
        rc = tier_fields(c, f, what, &t);
    if (!rc)
        rc = tier_built(c, field, f, &t);
    if (rc)
        return rc;
    gs__scn_src(c, p->L, val, &t.src);
    p->L->s->policy.tiers[field + 1] = t;
    return 0;
}

static int policy_tenant(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct pol *p = arg;
    yaml_node_t *f[4] = {NULL};
    char name[GS_SCN_NAME_MAX], what[128];
    struct tref r = {p->L, -1, NULL};
    int64_t x;
    int tier = 0;
    int rc = gs__scn_key_name(c, k, "a tenants key", name, sizeof(name));
    if (!rc)
        rc = gs__scn_tenant(c, p->L, k, name, &r.t);
    if (rc)
        return rc;
    struct gs_tenant_spec *t = &p->L->s->policy.tenants[r.t];
    if (t->in_policy)
        return gs__yaml_err(c, k, "tenant %s is listed twice in the policy", name);
    t->in_policy = 1;
    gs__yaml_label(what, sizeof(what), "tenants.%s", name);
    rc = gs__yaml_each_field(c, v, pt_keys, 4, what, gs__scn_keep, f);
    if (!rc && f[PT_TOPOLOGY] &&
        !(rc = gs__scn_enum(c, f[PT_TOPOLOGY], "topology", tier_keys, 4, &tier)))
        t->tier = (enum gs_tier)(tier + 1);
    gs__yaml_label(what, sizeof(what), "tenants.%s.gpuCount", name);
    if (!rc && f[PT_GPU_COUNT] &&
        !(rc = gs__scn_qty(c, f[PT_GPU_COUNT], what, 3, 0, 0, "milli-GPU", 0, GPU_MILLI_MAX, &x)))
        t->gpu_count_milli = x;
    if (!rc && f[PT_PRIORITY] &&
        !(rc = gs__scn_int(c, f[PT_PRIORITY], "priority", INT32_MIN, INT32_MAX, &x)))
        t->priority = (int32_t)x;
    if (!rc && f[PT_NAMESPACES])
        rc = gs__yaml_each_item(c, f[PT_NAMESPACES], "namespaces", ns_item,
                                &(struct tref){p->L, r.t, f[PT_NAMESPACES]});
    return rc;
}

static int read_policy(struct gs__yctx *c, yaml_node_t *root, void *arg)
{
    struct pol *p = arg;
    yaml_node_t *f[2] = {NULL};
    int rc = gs__yaml_each_field(c, root, policy_keys, 2, "policy.yaml", gs__scn_keep, f);
    if (!rc && f[PY_SCHEDULING])
        rc = gs__yaml_each_field(c, f[PY_SCHEDULING], tier_keys, 4, "scheduling", tier_field, p);
    if (!rc && f[PY_TENANTS]) {
        p->L->s->priv->policy_tenants = true;
        rc = gs__yaml_each_pair(c, f[PY_TENANTS], "tenants", policy_tenant, p);
    }
    return rc;
}

/* --- kubeflow-gpu-profiles: profiles.yaml --- */

enum { PR_NAME, PR_SHARE, PR_MAX_MEMORY, PR_OVERCOMMIT, PR_PRIORITY, PR_PREEMPTIBLE };
static const char *const pr_keys[] = {"name",     "gpuShare",   "maxMemory", "overcommitRatio",
                                      "priority", "preemptible"};

static int pr_fields(struct gs__yctx *c, yaml_node_t **f, const char *where,
                     struct gs_step_profile *p)
{
    char what[128];
    int64_t x;
    int rc = f[PR_NAME] ? gs__scn_name(c, f[PR_NAME], "profile name", p->name, sizeof(p->name)) : 0;
    for (int k = PR_SHARE; k <= PR_PREEMPTIBLE; k++)
        if (f[k])
            p->set |= 1u << (k - PR_SHARE);
    if (!rc && f[PR_SHARE])
        rc = gs__scn_bool(c, f[PR_SHARE], "gpuShare", &p->gpu_share);
    gs__yaml_label(what, sizeof(what), "%s.maxMemory", where);
    if (!rc && f[PR_MAX_MEMORY])
        rc = gs__scn_bytes(c, f[PR_MAX_MEMORY], what, 0, INT32_MAX, &p->max_memory_mib);
    gs__yaml_label(what, sizeof(what), "%s.overcommitRatio", where);
    if (!rc && f[PR_OVERCOMMIT] &&
        !(rc = gs__scn_qty(c, f[PR_OVERCOMMIT], what, 3, 0, GS__Q_PLAIN, "thousandths", 1000,
                           100000, &x)))
        p->overcommit_milli = (int32_t)x;
    if (!rc && f[PR_PRIORITY] &&
        !(rc = gs__scn_int(c, f[PR_PRIORITY], "priority", INT32_MIN, INT32_MAX, &x)))
        p->priority = (int32_t)x;
    if (!rc && f[PR_PREEMPTIBLE])
        rc = gs__scn_bool(c, f[PR_PREEMPTIBLE], "preemptible", &p->preemptible);
    return rc;
}

static int profile_item(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    struct pol *pl = arg;
    yaml_node_t *f[6] = {NULL};
    char where[64];
    struct gs_step_profile p = {.max_memory_mib = GS_UNSET, .overcommit_milli = 1000};
    gs__yaml_label(where, sizeof(where), "profiles[%d]", idx);
    int rc = gs__yaml_each_field(c, n, pr_keys, 6, where, gs__scn_keep, f);
    if (!rc && !f[PR_NAME])
        rc = gs__yaml_err(c, n, "%s has no name", where);
    if (!rc)
        rc = pr_fields(c, f, where, &p);
    if (rc)
        return rc;
    return gs__scn_commit(c, pl->L, n, f[PR_NAME], GS__K_PROFILE, &p);
}

/* One tenant's overrides: {PROFILE: {fields but the name}}. */
struct ovr {
    struct pol *pl;
    const char *tenant;
};

static int override_pair(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct ovr *o = arg;
    yaml_node_t *f[6] = {NULL};
    char where[192];
    struct gs_step_profile p = {.max_memory_mib = GS_UNSET, .overcommit_milli = 1000};
    gs__yaml_label(where, sizeof(where), "tenantOverrides.%s.%s", o->tenant, gs__yaml_str(k));
    int rc = gs__scn_key_name(c, k, "profile name", p.name, sizeof(p.name));
    snprintf(p.tenant, sizeof(p.tenant), "%s", o->tenant);
    if (!rc)
        rc = gs__yaml_each_field(c, v, pr_keys + 1, 5, where, gs__scn_keep, f + 1);
    if (!rc)
        rc = pr_fields(c, f, where, &p);
    return rc ? rc : gs__scn_commit(c, o->pl->L, v, k, GS__K_PROFILE, &p);
}

static int override_tenant(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    char tenant[GS_SCN_NAME_MAX];
    int rc = gs__scn_key_name(c, k, "tenant name", tenant, sizeof(tenant));
    struct ovr o = {arg, tenant};
    return rc ? rc : gs__yaml_each_pair(c, v, "tenantOverrides", override_pair, &o);
}

static const char *const profiles_keys[] = {"profiles", "tenantOverrides"};

static int read_profiles(struct gs__yctx *c, yaml_node_t *root, void *arg)
{
    struct pol *p = arg;
    yaml_node_t *f[2] = {NULL};
    int rc = gs__yaml_each_field(c, root, profiles_keys, 2, "profiles.yaml", gs__scn_keep, f);
    if (!rc && f[0])
        rc = gs__yaml_each_item(c, f[0], "profiles", profile_item, p);
    if (!rc && f[1])
        rc = gs__yaml_each_pair(c, f[1], "tenantOverrides", override_tenant, p);
    return rc;
}

/* --- ConfigMap --- */

enum { CM_API, CM_KIND, CM_META, CM_DATA, CM_BINARY, CM_IMMUTABLE };
static const char *const cm_keys[] = {"apiVersion", "kind",       "metadata",
                                      "data",       "binaryData", "immutable"};

/* one_doc() - an entry holds one YAML document: which of several would apply? */
static int one_doc(struct gs__yctx *c, yaml_node_t *root, void *arg)
{
    struct pol *p = arg;
    if (++p->ndocs > 1)
        return gs__yaml_err(c, root, "%s holds more than one YAML document", p->key);
    return p->fn(c, root, p);
}

/*
 * embedded() - parse data entry @n (a string) of the ConfigMap as YAML with @fn. Positions map to
 * the outer file: a literal block's content starts on the line after its `|`, indented by the
 * first content line's indentation, so inner line i, column j is outer line + 1 + i, indent + j.
 */
static int embedded(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *n, const char *key,
                    gs__yaml_doc_fn fn)
{
    char what[64];
    struct pol p = {L, 0, key, fn};
    const char *s = gs__yaml_text(n); /* a ConfigMap's data is map[string]string */
    gs__yaml_label(what, sizeof(what), "data.%s", key);
    if (!s)
        return gs__yaml_text_error(c, n, what);
    struct gs__yctx proto = {.path = c->path, .d = c->d};
    proto.line0 = c->line0 + n->start_mark.line;
    proto.col0 = c->col0 + n->start_mark.column;
    if (n->data.scalar.style == YAML_LITERAL_SCALAR_STYLE && !c->inner) {
        size_t i = n->start_mark.index, indent = 0;
        while (i < L->len && L->buf[i] != '\n')
            i++;
        for (size_t col = 0; ++i < L->len;) { /* the first line with content sets the indent */
            if (L->buf[i] == ' ') {
                col++;
            } else if (L->buf[i] == '\n' || L->buf[i] == '\r') {
                col = 0;
            } else {
                indent = col;
                break;
            }
        }
        proto.line0 = c->line0 + n->start_mark.line + 1;
        proto.col0 = indent;
    } else {
        proto.inner = key; /* only the entry's own place is exact */
    }
    const unsigned char *b = (const unsigned char *)s;
    return gs__yaml_stream_documents(&proto, b, n->data.scalar.length, GS_SCN_MAX_DEPTH,
                                     GS_SCN_DOC_NODES_MAX, one_doc, &p);
}

struct cm {
    struct gs__scn_load *L;
    const char *want; /* the data key this ConfigMap is read for */
    gs__yaml_doc_fn fn;
    bool found;
};

static int cm_data(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct cm *cm = arg;
    char buf[GS__YAML_SHOW_BUF];
    if (strcmp(gs__yaml_str(k), cm->want) != 0)
        return gs__yaml_err(c, k,
                            "data entry %s is not interpreted (only %s): refused rather than "
                            "ignored",
                            gs__yaml_show(k, buf), cm->want);
    cm->found = true;
    return embedded(c, cm->L, v, cm->want, cm->fn);
}

/* once() - refuse a second topology policy or profiles ConfigMap: which would apply? */
static int once(struct gs__yctx *c, yaml_node_t *at, bool *seen, const char *name)
{
    if (*seen)
        return gs__yaml_err(c, at, "a second %s ConfigMap; give one", name);
    *seen = true;
    return 0;
}

int gs__scn_configmap(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root)
{
    yaml_node_t *f[GS__YAML_NKEYS(cm_keys)] = {NULL};
    struct gs__scn_meta m;
    struct cm cm = {L, NULL, NULL, false};
    int rc = gs__yaml_each_field(c, root, cm_keys, GS__YAML_NKEYS(cm_keys), "ConfigMap",
                                 gs__scn_keep, f);
    if (!rc)
        rc = gs__scn_meta(c, root, f[CM_META], true, GS_SCN_NAME_MAX, &m);
    if (rc)
        return rc;
    if (strcmp(m.name_s, "topology-gpu-policy") == 0) {
        cm.want = "policy.yaml";
        cm.fn = read_policy;
        rc = once(c, m.name, &L->s->priv->policy_seen, "topology-gpu-policy");
    } else if (strcmp(m.name_s, "kubeflow-gpu-profiles") == 0) {
        cm.want = "profiles.yaml";
        cm.fn = read_profiles;
        rc = once(c, m.name, &L->s->priv->profiles_seen, "kubeflow-gpu-profiles");
    } else { /* a near miss of ours says which was meant */
        static const char *const ours[] = {"topology-gpu-policy", "kubeflow-gpu-profiles"};
        int near = m.name ? gs__yaml_nearest(m.name, ours, 2) : -1;
        gs__yaml_warn(c, m.name,
                      "ConfigMap %s/%s is not interpreted by the scenario%s%s%s; ignored", m.ns_s,
                      m.name_s, near >= 0 ? " (did you mean \"" : "", near >= 0 ? ours[near] : "",
                      near >= 0 ? "\"?)" : "");
        return 0;
    }
    if (!rc && f[CM_DATA])
        rc = gs__yaml_each_pair(c, f[CM_DATA], "data", cm_data, &cm);
    if (!rc && !cm.found)
        rc = gs__yaml_err(c, f[CM_DATA] ? f[CM_DATA] : root, "ConfigMap %s has no data.%s",
                          m.name_s, cm.want);
    if (!rc && cm.fn == read_policy)
        gs__scn_src(c, L, root, &L->s->priv->policy_src);
    return rc;
}
