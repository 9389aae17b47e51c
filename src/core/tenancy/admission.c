/*
 * Admission: what a pod asks of the devices, whose it is, and the quotas that count it.
 * Kubernetes admission (LimitRange defaults and bounds, ResourceQuota scopes) holds in every
 * way; GPUQuota, tiers and step profiles only in the full scheme. A pod refused here never runs
 * and is never kept: the reason says why.
 */
#include "tenancy_impl.h"

#include "gpusched/grow.h"
#include "gpusched/mig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A (string, string) -> index map with open addressing, grown at half full; keys borrowed, or
 * copied when @owns (the users': pods' strings go with the pods). */
struct namemap {
    const char **k1, **k2;
    int32_t *val;
    size_t cap, n;
    int owns;
};

static uint64_t hash2(const char *a, const char *b)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *a; a++)
        h = (h ^ (unsigned char)*a) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
    for (; b && *b; b++)
        h = (h ^ (unsigned char)*b) * 1099511628211ULL;
    return h;
}

/* The slot of (a, b): found, or the empty slot where it would go. */
static size_t namemap_slot(const struct namemap *m, const char *a, const char *b)
{
    size_t h = hash2(a, b) & (m->cap - 1);
    while (m->k1[h] && (strcmp(m->k1[h], a) || strcmp(m->k2[h], b ? b : "")))
        h = (h + 1) & (m->cap - 1);
    return h;
}

static int32_t namemap_get(const struct namemap *m, const char *a, const char *b)
{
    if (!m || !m->cap)
        return -1;
    size_t h = namemap_slot(m, a, b);
    return m->k1[h] ? m->val[h] : -1;
}

static int namemap_rehash(struct namemap *m, size_t cap)
{
    struct namemap g = {calloc(cap, sizeof(*g.k1)),
                        calloc(cap, sizeof(*g.k2)),
                        calloc(cap, sizeof(*g.val)),
                        cap,
                        0,
                        m->owns};
    if (!g.k1 || !g.k2 || !g.val) {
        free(g.k1);
        free(g.k2);
        free(g.val);
        return -ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->k1[i])
            continue;
        size_t h = namemap_slot(&g, m->k1[i], m->k2[i]);
        g.k1[h] = m->k1[i];
        g.k2[h] = m->k2[i];
        g.val[h] = m->val[i];
    }
    g.n = m->n;
    free(m->k1);
    free(m->k2);
    free(m->val);
    *m = g;
    return 0;
}

/* The index of (a, b), adding it with value @next when absent. Return: >= 0; -ENOMEM. */
static int32_t namemap_intern(struct namemap *m, const char *a, const char *b, int32_t next)
{
    if (2 * (m->n + 1) > m->cap && namemap_rehash(m, gs_grow_cap(m->cap, 2 * (m->n + 1), 16)) < 0)
        return -ENOMEM;
    size_t h = namemap_slot(m, a, b);
    if (!m->k1[h] && m->owns) { /* keys of its own: the strings given may not outlive it */
        size_t la = strlen(a) + 1, lb = b ? strlen(b) + 1 : 1;
        char *k = malloc(la + lb);
        if (!k)
            return -ENOMEM;
        memcpy(k, a, la);
        memcpy(k + la, b ? b : "", lb);
        a = k;
        b = k + la;
    }
    if (!m->k1[h]) {
        m->k1[h] = a;
        m->k2[h] = b ? b : "";
        m->val[h] = next;
        m->n++;
    }
    return m->val[h];
}

/* (a, b) leaves @m, if there; the entries after it in its run move back (linear probing keeps no
 * tombstones). Its key is freed when @m owns its keys. */
static void namemap_del(struct namemap *m, const char *a, const char *b)
{
    if (!m || !m->cap)
        return;
    size_t mask = m->cap - 1, i = namemap_slot(m, a, b);
    if (!m->k1[i])
        return;
    if (m->owns)
        free((char *)m->k1[i]);
    m->k1[i] = NULL;
    m->n--;
    for (size_t j = (i + 1) & mask; m->k1[j]; j = (j + 1) & mask) {
        size_t h = hash2(m->k1[j], m->k2[j]) & mask;
        if (((j - h) & mask) < ((j - i) & mask)) /* its home is after the hole: it stays */
            continue;
        m->k1[i] = m->k1[j];
        m->k2[i] = m->k2[j];
        m->val[i] = m->val[j];
        m->k1[j] = NULL;
        i = j;
    }
}

static void namemap_free(struct namemap *m)
{
    if (!m)
        return;
    for (size_t i = 0; m->owns && i < m->cap; i++)
        free((char *)m->k1[i]); /* k2 shares the allocation */
    free(m->k1);
    free(m->k2);
    free(m->val);
    free(m);
}

static const struct gs_priority_class_spec *class_of(const struct gs_policy *pol, const char *name)
{
    return name[0] ? gs_priority_class_find(pol, name) : NULL;
}

/* The pod's step profile with its tenant's override applied, in @buf; NULL when it has none. */
static const struct gs_step_profile *profile_of(const struct gs_tenancy *t, const struct rpod *p,
                                                struct gs_step_profile *buf)
{
    const struct gs_policy *pol = t->pol;
    const char *tenant =
        (size_t)p->tenant < pol->ntenants ? pol->tenants[p->tenant].name : p->sp->ns;
    if (!p->sp->profile[0] || gs_step_profile_for(pol, p->sp->profile, tenant, buf) < 0)
        return NULL;
    return buf;
}

/*
 * Priority: the pod's class, its PodGroup's, its step profile's, its tenant's, the default.
 * *@never is set when the class that gave it says preemptionPolicy: Never. A class the policy
 * lacks gives the spec.priority an API server resolved it to (admission checked there is one).
 */
static int32_t priority_of(const struct gs_tenancy *t, const struct gs_pod_spec *sp, int32_t group,
                           int32_t tenant, const struct gs_step_profile *prof, uint8_t *never)
{
    const struct gs_policy *pol = t->pol;
    const struct gs_priority_class_spec *c = class_of(pol, sp->priority_class);
    *never = sp->preemption == 2;    /* what an API server's Priority admission wrote, if it did */
    if (!c && sp->priority_class[0]) /* a class of the API server's, not ours: its value */
        return sp->priority;
    if (!c && group >= 0)
        c = class_of(pol, t->pgs[group]->priority_class);
    if (!c && t->way == GS_WAY_FULL && prof)
        return prof->priority;
    if (!c && tenant >= 0 && (size_t)tenant < pol->ntenants) {
        const struct gs_tenant_spec *ts = &pol->tenants[tenant];
        c = class_of(pol, ts->priority_class);
        if (!c && ts->priority != GS_UNSET)
            return ts->priority;
    }
    for (size_t i = 0; !c && i < pol->npriority_classes; i++)
        if (pol->priority_classes[i].global_default)
            c = &pol->priority_classes[i];
    *never = *never || (c && c->never_preempt);
    return c ? c->value : 0;
}

/* The Pod fields a LimitRange refusal names, per resource (nvidia.com/gpu, memory, cpu). */
static const char *const limits_field[] = {"spec.containers[].resources.limits.nvidia.com/gpu",
                                           "spec.containers[].resources.limits.memory",
                                           "spec.containers[].resources.limits.cpu"};
static const char *const requests_field[] = {"spec.containers[].resources.requests.nvidia.com/gpu",
                                             "spec.containers[].resources.requests.memory",
                                             "spec.containers[].resources.requests.cpu"};

/* The unit of each resource limits_field names. */
static const enum gs__unit units[] = {GS_UNIT_COUNT, GS_UNIT_MIB, GS_UNIT_MILLI};

/*
 * One bound of a LimitRange on resource @res of a container asking @v; a violation is written to
 * @why and *@field names the Pod field at fault, as LimitRanger's refusal does ("maximum memory
 * usage per Container is 32Gi, but limit is 64Gi": a max bounds the limit, a min the request).
 * Quantities are written as Kubernetes writes them (cpu 2, not 2000m).
 */
static int bound(int64_t v, int64_t min, int64_t max, const char *res, const char *per,
                 const struct gs_limit_range_spec *lr, const char **field, char *why, size_t size)
{
    int k = res[0] == 'n' ? 0 : res[0] == 'm' ? 1 : 2;
    char a[GS_QUANTITY_STR_MAX], b[GS_QUANTITY_STR_MAX];
    if (max != GS_UNSET && v > max) {
        *field = limits_field[k];
        gs__say(why, size, "LimitRange %s/%s: %s %s > max %s per %s", lr->ns, lr->name, res,
                gs__amount(units[k], v, a), gs__amount(units[k], max, b), per);
        return -1;
    }
    if (min != GS_UNSET && v < min) {
        *field = requests_field[k];
        gs__say(why, size, "LimitRange %s/%s: %s %s < min %s per %s", lr->ns, lr->name, res,
                gs__amount(units[k], v, a), gs__amount(units[k], min, b), per);
        return -1;
    }
    return 0;
}

static int64_t or_default(int64_t v, int64_t def)
{
    return v != GS_UNSET ? v : def;
}

/*
 * A LimitRange's maxLimitRequestRatio @ratio (thousandths, GS_UNSET: none) on resource @k
 * (limits_field's index) of a container with request @req and limit @lim (0: none given), as
 * LimitRanger checks it (plugin/pkg/admission/limitranger, limitRequestRatioConstraint): a request
 * and a limit must be given, and limit / request must not exceed the ratio; else -1 with its
 * message in @why and the Pod field at fault in *@field.
 */
static int limit_ratio(int64_t req, int64_t lim, int64_t ratio, int k, const char *per,
                       const struct gs_limit_range_spec *lr, const char **field, char *why,
                       size_t size)
{
    static const char *const res[] = {"nvidia.com/gpu", "memory", "cpu"};
    if (ratio == GS_UNSET)
        return 0;
    char enforced[GS_QUANTITY_STR_MAX];
    gs_quantity_format_milli(ratio, enforced, sizeof(enforced));
    if (req <= 0 || lim <= 0) {
        const char *what = req <= 0 ? "request" : "limit";
        *field = req <= 0 ? requests_field[k] : limits_field[k];
        gs__say(why, size,
                "LimitRange %s/%s: %s max limit to request ratio per %s is %s, but no %s is "
                "specified or %s is 0",
                lr->ns, lr->name, res[k], per, enforced, what, what);
        return -1;
    }
    double observed = (double)lim / (double)req;
    if (observed * 1000.0 <= (double)ratio)
        return 0;
    *field = limits_field[k];
    gs__say(why, size,
            "LimitRange %s/%s: %s max limit to request ratio per %s is %s, but provided ratio "
            "is %f",
            lr->ns, lr->name, res[k], per, enforced, observed);
    return -1;
}

/* A limit the container does not give: the LimitRange's `default`, else its `max` (the defaults
 * Kubernetes gives a LimitRange item of type Container); 0 when neither. */
static int64_t limit_of(int64_t given, int64_t def, int64_t max)
{
    return given > 0 ? given : def != GS_UNSET ? def : max != GS_UNSET ? max : 0;
}

/* Container @c (its requests after the LimitRange's defaults) against @lr's maxLimitRequestRatio:
 * nvidia.com/gpu, an extended resource, has its limit equal to its request. */
static int ratios(const struct gs_scn_container *c, const struct gs_limit_range_spec *lr,
                  const char **field, char *why, size_t size)
{
    int64_t gpu = c->gpu == GS_UNSET ? 0 : c->gpu, mem = or_default(c->memory_mib, 0),
            cpu = or_default(c->cpu_milli, 0);
    const char *per = "Container";
    return limit_ratio(gpu, gpu, lr->ratio_gpu_milli, 0, per, lr, field, why, size) ||
           limit_ratio(mem,
                       limit_of(c->memory_limit_mib, lr->default_memory_mib, lr->max_memory_mib),
                       lr->ratio_memory_milli, 1, per, lr, field, why, size) ||
           limit_ratio(cpu, limit_of(c->cpu_limit_milli, lr->default_cpu_milli, lr->max_cpu_milli),
                       lr->ratio_cpu_milli, 2, per, lr, field, why, size);
}

/*
 * The pod's effective request of the quantities counted per container (cards, time-slice
 * replicas, CPU, memory, MIG instances), as Kubernetes counts it ("Init Containers" and "Sidecar
 * Containers: Resource sharing within containers"; kubelet's device manager hands out devices
 * the same way): the larger of the app containers' sum with every sidecar beside them, and each
 * init container's own with the sidecars started before it.
 */
enum { E_GPU, E_SHARED, E_CPU, E_MEMORY, E_MIG, E_CPU_LIMIT, E_MEMORY_LIMIT, E_COUNT };
struct effective {
    int64_t app[E_COUNT], side[E_COUNT], init[E_COUNT];
};

static void effective_add(struct effective *e, const struct gs_scn_container *c)
{
    const int64_t v[E_COUNT] = {or_default(c->gpu, 0),       c->gpu_shared,
                                or_default(c->cpu_milli, 0), or_default(c->memory_mib, 0),
                                c->mig_profile[0] != '\0',   c->cpu_limit_milli,
                                c->memory_limit_mib};
    for (int k = 0; k < E_COUNT; k++) {
        if (!c->init) {
            e->app[k] += v[k];
            continue;
        }
        if (e->side[k] + v[k] > e->init[k])
            e->init[k] = e->side[k] + v[k];
        e->side[k] += c->init == 2 ? v[k] : 0;
    }
}

static int64_t effective_of(const struct effective *e, int k)
{
    return e->app[k] + e->side[k] > e->init[k] ? e->app[k] + e->side[k] : e->init[k];
}

/* The next LimitRange of namespace @ns after index *@i (start at 0), or NULL. */
static const struct gs_limit_range_spec *limits_of(const struct gs_policy *pol, const char *ns,
                                                   size_t *i)
{
    for (; *i < pol->nlimit_ranges; (*i)++)
        if (strcmp(pol->limit_ranges[*i].ns, ns) == 0)
            return &pol->limit_ranges[(*i)++];
    return NULL;
}

/* A LimitRange's defaultRequest of a resource as the API server defaults it
 * (SetDefaults_LimitRangeItem, pkg/apis/core/v1/defaults.go): the default limit where none is
 * given, which is the max where no default is given, else the min. */
static int64_t default_request(int64_t request, int64_t limit, int64_t max, int64_t min)
{
    return or_default(request, or_default(limit, or_default(max, min)));
}

/* A container's requests after the defaults of LimitRange @lr, where it asks none. */
static void limit_defaults(struct gs_scn_container *c, const struct gs_limit_range_spec *lr)
{
    c->memory_mib = or_default(
        c->memory_mib, default_request(lr->default_request_memory_mib, lr->default_memory_mib,
                                       lr->max_memory_mib, lr->min_memory_mib));
    c->cpu_milli = or_default(c->cpu_milli,
                              default_request(lr->default_request_cpu_milli, lr->default_cpu_milli,
                                              lr->max_cpu_milli, lr->min_cpu_milli));
}

/* A container's limits after the first LimitRange that gives one (its default, else its max),
 * where it gives none: what a type: Pod entry sums. */
static void limit_default_limits(struct gs_scn_container *c, const struct gs_limit_range_spec *lr)
{
    c->memory_limit_mib = limit_of(c->memory_limit_mib, lr->default_memory_mib, lr->max_memory_mib);
    c->cpu_limit_milli = limit_of(c->cpu_limit_milli, lr->default_cpu_milli, lr->max_cpu_milli);
}

/*
 * Container @c (its requests after the ranges' defaults) within the bounds and ratios of
 * LimitRange @lr, as LimitRanger's maxConstraint and minConstraint: a max bounds the limit the
 * container gives (one it does not give is the range's default, else its max, never above it), a
 * min the request; nvidia.com/gpu, an extended resource, has its limit equal to its request. -1
 * with @why and *@field if not.
 */
static int limit_check(const struct gs_scn_container *c, const struct gs_limit_range_spec *lr,
                       const char **field, char *why, size_t size)
{
    const char *per = "Container";
    return bound(c->gpu == GS_UNSET ? 0 : c->gpu,
                 lr->min_gpu_milli == GS_UNSET ? GS_UNSET : lr->min_gpu_milli / 1000,
                 lr->max_gpu_milli == GS_UNSET ? GS_UNSET : lr->max_gpu_milli / 1000,
                 "nvidia.com/gpu", per, lr, field, why, size) ||
           bound(c->memory_limit_mib > 0 ? c->memory_limit_mib : 0, GS_UNSET, lr->max_memory_mib,
                 "memory", per, lr, field, why, size) ||
           bound(or_default(c->memory_mib, 0), lr->min_memory_mib, GS_UNSET, "memory", per, lr,
                 field, why, size) ||
           bound(c->cpu_limit_milli > 0 ? c->cpu_limit_milli : 0, GS_UNSET, lr->max_cpu_milli,
                 "cpu", per, lr, field, why, size) ||
           bound(or_default(c->cpu_milli, 0), lr->min_cpu_milli, GS_UNSET, "cpu", per, lr, field,
                 why, size) ||
           ratios(c, lr, field, why, size);
}

/*
 * A max of type Pod bounds the pod's limit (@lim, 0: no container gives one), a min its
 * request (@req, 0: none), as LimitRanger's maxConstraint and minConstraint do ("maximum memory
 * usage per Pod is 8Gi.  No limit is specified"); -1 with @why and *@field if not within.
 */
static int pod_bound(int64_t req, int64_t lim, int64_t min, int64_t max, int k,
                     const struct gs_limit_range_spec *lr, const char **field, char *why,
                     size_t size)
{
    static const char *const res[] = {"nvidia.com/gpu", "memory", "cpu"};
    char a[GS_QUANTITY_STR_MAX];
    if (max != GS_UNSET && lim <= 0) {
        *field = limits_field[k];
        gs__say(why, size,
                "LimitRange %s/%s: maximum %s usage per Pod is %s.  No limit is specified", lr->ns,
                lr->name, res[k], gs__amount(units[k], max, a));
        return -1;
    }
    if (min != GS_UNSET && req <= 0) {
        *field = requests_field[k];
        gs__say(why, size,
                "LimitRange %s/%s: minimum %s usage per Pod is %s.  No request is specified",
                lr->ns, lr->name, res[k], gs__amount(units[k], min, a));
        return -1;
    }
    return bound(lim, GS_UNSET, max, res[k], "Pod", lr, field, why, size) ||
           bound(req, min, GS_UNSET, res[k], "Pod", lr, field, why, size);
}

/*
 * The pod, its requests @e (their effective sums, E_*) and the limits its containers give after
 * the LimitRanges' default limits, against @lr's type: Pod entry, as LimitRanger's
 * PodValidateLimitFunc (plugin/pkg/admission/limitranger): min and max, then
 * maxLimitRequestRatio, on the sums. nvidia.com/gpu, an extended resource, has its limit equal to
 * its request. -1 with @why and *@field if not within.
 */
static int pod_check(const int64_t *e, const struct gs_limit_range_spec *lr, const char **field,
                     char *why, size_t size)
{
    const char *per = "Pod";
    int64_t gmin = lr->pod_min_gpu_milli, gmax = lr->pod_max_gpu_milli;
    return pod_bound(e[E_GPU], e[E_GPU], gmin == GS_UNSET ? GS_UNSET : gmin / 1000,
                     gmax == GS_UNSET ? GS_UNSET : gmax / 1000, 0, lr, field, why, size) ||
           pod_bound(e[E_MEMORY], e[E_MEMORY_LIMIT], lr->pod_min_memory_mib, lr->pod_max_memory_mib,
                     1, lr, field, why, size) ||
           pod_bound(e[E_CPU], e[E_CPU_LIMIT], lr->pod_min_cpu_milli, lr->pod_max_cpu_milli, 2, lr,
                     field, why, size) ||
           limit_ratio(e[E_GPU], e[E_GPU], lr->pod_ratio_gpu_milli, 0, per, lr, field, why, size) ||
           limit_ratio(e[E_MEMORY], e[E_MEMORY_LIMIT], lr->pod_ratio_memory_milli, 1, per, lr,
                       field, why, size) ||
           limit_ratio(e[E_CPU], e[E_CPU_LIMIT], lr->pod_ratio_cpu_milli, 2, per, lr, field, why,
                       size);
}

/*
 * A container's nvidia.com/gpu after the namespace's LimitRanges, as LimitRanger fills it: where
 * it gives no limit, the first range with a `default` (the API server makes it the `max` where
 * none is given: SetDefaults_LimitRangeItem) gives one, and where it gives no request, the first
 * with a `defaultRequest` (else that default, else the `min`) gives that. An extended resource
 * must then have a limit, equal to its request and a whole number, or the API server refuses the
 * pod ("Limit must be set for non overcommitable resources", ValidateResourceRequirements). A
 * container that gives a limit has its request (defaulting on decode). 0, or -1 with @why and
 * *@field.
 */
static int gpu_defaults(const struct gs_policy *pol, const char *ns, struct gs_scn_container *c,
                        const char **field, char *why, size_t size)
{
    int64_t req = c->gpu == GS_UNSET ? GS_UNSET : c->gpu * 1000;
    int64_t lim = c->gpu_request_only ? GS_UNSET : req;
    const struct gs_limit_range_spec *lr, *from_req = NULL, *from_lim = NULL;
    for (size_t k = 0; (lr = limits_of(pol, ns, &k));) {
        int64_t d = or_default(lr->default_gpu_milli, lr->max_gpu_milli);
        int64_t r = default_request(lr->default_request_gpu_milli, lr->default_gpu_milli,
                                    lr->max_gpu_milli, lr->min_gpu_milli);
        if (lim == GS_UNSET && d != GS_UNSET) {
            lim = d;
            from_lim = lr;
        }
        if (req == GS_UNSET && r != GS_UNSET) {
            req = r;
            from_req = lr;
        }
    }
    char a[GS_QUANTITY_STR_MAX], b[GS_QUANTITY_STR_MAX],
        rs[2 * GS_SCN_NAME_MAX + 24] = "", ls[sizeof(rs)] = "";
    if (from_req)
        snprintf(rs, sizeof(rs), " (from LimitRange %s/%s)", from_req->ns, from_req->name);
    if (from_lim)
        snprintf(ls, sizeof(ls), " (from LimitRange %s/%s)", from_lim->ns, from_lim->name);
    if (req != GS_UNSET && lim == GS_UNSET) {
        *field = limits_field[0];
        gs__say(why, size,
                "requests.nvidia.com/gpu %s%s without limits.nvidia.com/gpu: Kubernetes requires "
                "a limit for an extended resource, and no LimitRange in namespace %s gives one",
                gs_quantity_format_milli(req, a, sizeof(a)), rs, ns);
        return -1;
    }
    if (req != lim) {
        *field = requests_field[0];
        gs__say(why, size, "requests.nvidia.com/gpu %s%s must equal limits.nvidia.com/gpu %s%s",
                gs_quantity_format_milli(req, a, sizeof(a)), rs,
                gs_quantity_format_milli(lim, b, sizeof(b)), ls);
        return -1;
    }
    if (lim != GS_UNSET && lim % 1000) {
        *field = limits_field[0];
        gs__say(why, size, "nvidia.com/gpu %s%s: must be a whole number of GPUs",
                gs_quantity_format_milli(lim, a, sizeof(a)), ls);
        return -1;
    }
    c->gpu = lim == GS_UNSET ? GS_UNSET : lim / 1000;
    return 0;
}

/* shape() - what container @c asks of each of its cards, into @buf. */
static const char *shape(const struct gs_scn_container *c, char *buf, size_t size)
{
    if (c->gpumem_mib == GS_UNSET && c->gpucores == GS_UNSET)
        snprintf(buf, size, "a whole card");
    else if (c->gpucores == GS_UNSET)
        snprintf(buf, size, "nvidia.com/gpumem %lld MiB", (long long)c->gpumem_mib);
    else if (c->gpumem_mib == GS_UNSET)
        snprintf(buf, size, "nvidia.com/gpucores %lld", (long long)c->gpucores);
    else
        snprintf(buf, size, "nvidia.com/gpumem %lld MiB and gpucores %lld",
                 (long long)c->gpumem_mib, (long long)c->gpucores);
    return buf;
}

/*
 * same_shape() - refuse container @i when it asks cards of a shape other than the pod's first
 * GPU container @first asked: a pod's cards are all of one shape (a share of each, or each
 * whole), so a whole-card container beside a HAMi slice would silently become a slice.
 */
static int same_shape(const struct gs_pod_spec *sp, int i, const struct gs_scn_container *c,
                      int *first, struct gs_scn_container *seen, char *why, size_t size)
{
    char a[64], b[64], pa[64], pb[64];
    if (!(c->gpu != GS_UNSET && c->gpu > 0) && c->gpumem_mib == GS_UNSET && c->gpucores == GS_UNSET)
        return 0;
    if (*first < 0) {
        *first = i;
        *seen = *c;
        return 0;
    }
    if (c->gpumem_mib == seen->gpumem_mib && c->gpucores == seen->gpucores)
        return 0;
    gs__tn_field_path(sp, "containers[]", *first, pa, sizeof(pa));
    gs__tn_field_path(sp, "containers[]", i, pb, sizeof(pb));
    gs__say(why, size,
            "%s asks %s per card and %s %s: a pod's cards are of one shape, so its GPU "
            "containers must ask the same (run them as separate pods)",
            pa, shape(seen, a, sizeof(a)), pb, shape(c, b, sizeof(b)));
    return -1;
}

/*
 * Containers after LimitRange defaults, as the pod's effective request; -1 with @why (and *@field)
 * when a bound is broken. As Kubernetes' LimitRanger admission ("Limit Ranges", kubernetes.io):
 * a container that asks none of a resource gets the range's defaultRequest as its request (its
 * `default`, the limit, where no defaultRequest is given); an extended resource such as
 * nvidia.com/gpu, whose request must equal its limit, gets `default` (else defaultRequest). Each
 * container must then lie within min and max, and within maxLimitRequestRatio (ratios()). With
 * several LimitRanges in a namespace, each is applied in the order loaded: defaults first (a
 * field one of them set is not set again), then every range's bounds, as LimitRanger mutates with
 * all of them before it validates against each. A type: Pod entry then bounds the pod's sums
 * (pod_check()).
 */
static int containers(const struct gs_policy *pol, const struct gs_pod_spec *sp,
                      struct gs_scn_container *sum, const char **field, int16_t *at, char *why,
                      size_t size)
{
    struct effective e;
    struct gs_scn_container seen = {0};
    int first = -1;
    memset(&e, 0, sizeof(e));
    *sum = (struct gs_scn_container){0, GS_UNSET, GS_UNSET, 0, 0, "", 0, 0, 0, 0, 0};
    /* app containers, then init containers, as LimitRanger checks them: the first at fault is
     * the one named */
    for (int n = 0; n < 2 * sp->ncontainers; n++) {
        int i = n % sp->ncontainers;
        if ((sp->containers[i].init != 0) != (n >= sp->ncontainers))
            continue;
        struct gs_scn_container c = sp->containers[i];
        const struct gs_limit_range_spec *lr;
        size_t k = 0;
        *at = (int16_t)i; /* a container's own bound at fault names it */
        if (gpu_defaults(pol, sp->ns, &c, field, why, size))
            return -1;
        while ((lr = limits_of(pol, sp->ns, &k)))
            limit_defaults(&c, lr);
        for (k = 0; (lr = limits_of(pol, sp->ns, &k));)
            limit_default_limits(&c, lr);
        for (k = 0; (lr = limits_of(pol, sp->ns, &k));)
            if (limit_check(&c, lr, field, why, size))
                return -1;
        if (same_shape(sp, i, &c, &first, &seen, why, size)) {
            *field = "spec.containers[].resources.limits";
            return -1;
        }
        effective_add(&e, &c);
        if (c.gpumem_mib != GS_UNSET && c.gpumem_mib > sum->gpumem_mib)
            sum->gpumem_mib = c.gpumem_mib;
        if (c.gpucores != GS_UNSET && c.gpucores > sum->gpucores)
            sum->gpucores = c.gpucores;
        if (c.mig_profile[0] && sum->mig_profile[0] && strcmp(c.mig_profile, sum->mig_profile)) {
            gs__say(why, size, "nvidia.com/mig-%s and nvidia.com/mig-%s: one MIG instance per pod",
                    sum->mig_profile, c.mig_profile);
            return -1;
        }
        if (c.mig_profile[0])
            memcpy(sum->mig_profile, c.mig_profile, sizeof(sum->mig_profile));
    }
    *at = -1; /* from here on the pod's sums are at fault */
    int64_t pod[E_COUNT];
    for (int k = 0; k < E_COUNT; k++)
        pod[k] = effective_of(&e, k);
    const struct gs_limit_range_spec *lr;
    for (size_t k = 0; (lr = limits_of(pol, sp->ns, &k));)
        if (pod_check(pod, lr, field, why, size))
            return -1;
    sum->gpu = effective_of(&e, E_GPU);
    sum->gpu_shared = effective_of(&e, E_SHARED);
    /* RuntimeClass overhead: kube-scheduler and ResourceQuota count it, LimitRange does not
     * (kubernetes.io/docs/concepts/scheduling-eviction/pod-overhead) */
    sum->cpu_milli = effective_of(&e, E_CPU) + sp->overhead_cpu_milli;
    sum->memory_mib = effective_of(&e, E_MEMORY) + sp->overhead_memory_mib;
    if (effective_of(&e, E_MIG) > 1) {
        gs__say(why, size,
                "nvidia.com/mig-%s: the pod's containers hold more than one MIG instance at once; "
                "a pod takes one (run more pods)",
                sum->mig_profile);
        return -1;
    }
    if (sum->mig_profile[0] &&
        (sum->gpu > 0 || sum->gpumem_mib != GS_UNSET || sum->gpucores != GS_UNSET)) {
        gs__say(why, size,
                "nvidia.com/mig-%s with nvidia.com/gpu, gpumem or gpucores: a pod takes a MIG "
                "instance or cards, not both",
                sum->mig_profile);
        return -1;
    }
    return 0;
}

/* What the nodes a pod may use (GPU model in @model_mask, 0 = any) hold at most and at least. */
struct card_bounds {
    int most_gpus;     /* GPUs of the largest node */
    int64_t small_mib; /* memory of the smallest card: a compute slice's memory is its share */
    int64_t large_mib; /* memory of the largest card: a slice above it never fits, and a memory
                          slice's compute share is its share of it */
};

/* The node template @sp's spec.nodeName pins it to, -1 when it names none (or no node: pin()
 * refuses it). */
static int pinned_template(const struct gs_tenancy *t, const struct gs_pod_spec *sp)
{
    int32_t i = sp->node_name[0] ? namemap_get(t->node_names, sp->node_name, NULL) : -1;
    return i >= 0 ? t->pol->nodes[i].template_index : -1;
}

/* The bounds over the nodes @sp may use: of GPU models in @model_mask, and only its own node's
 * template when spec.nodeName pins it (kubelet then refuses what that node cannot hold). */
static struct card_bounds bounds_of(const struct gs_tenancy *t, const struct gs_pod_spec *sp,
                                    uint32_t model_mask)
{
    struct card_bounds b = {0, 0, 0};
    int only = pinned_template(t, sp);
    for (size_t i = 0; i < t->pol->ntemplates; i++) {
        const struct gs_node_template *tp = &t->pol->templates[i];
        if (only >= 0 && (int)i != only)
            continue;
        const struct gs_gpu_model *m = tp->model >= 0 ? gs_catalog_at(tp->model) : NULL;
        if (tp->gpus <= 0 || !m || !gs__model_allowed(model_mask, tp->model))
            continue;
        if (tp->gpus > b.most_gpus)
            b.most_gpus = tp->gpus;
        if (b.small_mib == 0 || m->memory_mib < b.small_mib)
            b.small_mib = m->memory_mib;
        if (m->memory_mib > b.large_mib)
            b.large_mib = m->memory_mib;
    }
    return b;
}

/* The cards gang @group must start with inside one NVLink group (gs__tn_place_gang()): its
 * first minMember arrived members' when it is elastic, else all its arrived members'; 0 when
 * that fits no NVLink group it may use (gs__tn_gang_in_group()). */
static int64_t gang_nvlink_cards(const struct gs_tenancy *t, int32_t group)
{
    const struct gang *g = &t->gangs[group];
    const struct rpod *first = NULL;
    int64_t cards = 0;
    int32_t n = 0, most = gs__tn_gang_elastic(g) ? g->min : INT32_MAX;
    for (size_t i = 0; i < g->members.n && n < most; i++) {
        const struct rpod *m = &t->pods[g->members.v[i]];
        if (m->state != GS_POD_REJECTED && m->arrived) {
            cards += m->fit.whole ? m->fit.ncards : 0;
            first = first ? first : m;
            n++;
        }
    }
    return first && gs__tn_gang_in_group(t, first, cards) ? cards : 0;
}

int gs__tn_gang_in_group(const struct gs_tenancy *t, const struct rpod *p, int64_t cards)
{
    uint32_t mask = p->fit.model_mask ? p->fit.model_mask : UINT32_MAX;
    return cards > 0 && cards <= GS_GPUS_MAX &&
           (gs_fleet_models_with(t->fleet, (int)cards, 1) & mask) != 0;
}

/* Does @p need its cards in one NVLink group? */
static int needs_nvlink(const struct rpod *p)
{
    return p->fit.whole && p->fit.tier == GS_TIER_NVLINK && !p->fit.tier_soft;
}

static uint32_t runs_on(const struct gs_tenancy *t, const struct rpod *p);

/* gs__tn_usable_models() for @p, its gang (if any) asking @gang cards in one NVLink group: a MIG
 * instance or time-slice replicas only on the models that offer them (runs_on()). */
static uint32_t usable_with(const struct gs_tenancy *t, const struct rpod *p, int64_t gang)
{
    const struct gs_fit *f = &p->fit;
    int64_t cards = f->whole ? f->ncards : 1;
    uint32_t m =
        gs_fleet_models_with(t->fleet, (int)(gang > cards ? gang : cards), needs_nvlink(p));
    if (f->mig || f->timeslice)
        return m & runs_on(t, p);
    return f->model_mask ? m & f->model_mask : m;
}

uint32_t gs__tn_usable_models(const struct gs_tenancy *t, const struct rpod *p)
{
    return usable_with(t, p, needs_nvlink(p) && p->group >= 0 ? gang_nvlink_cards(t, p->group) : 0);
}

void gs__tn_usable_refresh(struct gs_tenancy *t, int32_t group)
{
    const struct gang *g = &t->gangs[group];
    int64_t cards = gang_nvlink_cards(t, group);
    for (size_t i = 0; i < g->members.n; i++) {
        struct rpod *m = &t->pods[g->members.v[i]];
        if (m->state != GS_POD_PENDING || !m->arrived || !needs_nvlink(m))
            continue;
        gs__tn_usable_charge(t, m, 0, -1);
        m->usable = usable_with(t, m, cards);
        gs__tn_usable_charge(t, m, 0, 1);
    }
}

int gs__tn_tier_required(const struct gs_tier_spec *ts)
{
    return !ts || !ts->defined ||
           (ts->strategy == GS_STRATEGY_COLOCATE &&
            (ts->max_skew == GS_UNSET || ts->max_skew == 0));
}

static enum gs_tier tier_of(const struct gs_tenancy *t, const struct gs_pod_spec *sp,
                            int32_t tenant)
{
    if (t->way != GS_WAY_FULL)
        return GS_TIER_NONE;
    if (sp->tier != GS_TIER_NONE || sp->tier_given) /* "none" too: the pod's over its tenant's */
        return sp->tier;
    const struct gs_tenant_spec *ts =
        tenant >= 0 && (size_t)tenant < t->pol->ntenants ? &t->pol->tenants[tenant] : NULL;
    return ts && ts->topology_awareness ? ts->tier : GS_TIER_NONE;
}

/* The field that limits @sp to its GPU models: the annotation, or the nodeSelector alone. */
static const char *model_field(const struct gs_pod_spec *sp)
{
    return sp->model_by_selector ? "spec.nodeSelector.nvidia.com/gpu.product"
                                 : "metadata.annotations.gpusched.io/gpu-model";
}

/*
 * A MIG instance (`nvidia.com/mig-<profile>: 1`): in the full scheme, one instance of the
 * profile on a card of a model with MIG geometry; without MIG (exclusive and sharing ways), a
 * whole card, as a cluster without MIG would give it. Its share is the profile's compute slices
 * over the card's, on the first model of the cluster that has the profile.
 */
static int mig_demand(const struct gs_tenancy *t, struct rpod *p, const char *profile, char *why,
                      size_t size)
{
    struct gs_fit *f = &p->fit;
    int32_t share = -1;
    int exists = 0, elsewhere = 0;
    uint32_t allowed = p->sp->model_mask;
    for (size_t i = 0; share < 0 && i < t->pol->ntemplates; i++) {
        const struct gs_gpu_model *m = gs_catalog_at(t->pol->templates[i].model);
        int mm = m && t->pol->templates[i].gpus > 0 ? gs_mig_model_find(m->name) : -1;
        int prof = mm >= 0 ? gs_mig_profile_find(mm, profile, -1) : -1;
        if (prof >= 0 && allowed && !(allowed & (1u << t->pol->templates[i].model))) {
            elsewhere = 1; /* a model the pod does not allow */
            continue;
        }
        exists |= prof >= 0;
        if (prof >= 0 && gs_fleet_mig_allowed(t->pol, mm, prof))
            share = gs_mig_profile_share_milli(mm, prof);
    }
    if (share < 0 && !exists && elsewhere) {
        p->field = model_field(p->sp);
        gs__say(why, size,
                "nvidia.com/mig-%s: no GPU model this pod allows (gpusched.io/gpu-model, "
                "nodeSelector nvidia.com/gpu.product) has that MIG profile",
                profile);
        return -1;
    }
    if (share < 0 && exists && t->pol->mig_policy.strategy != GS_MIG_STRATEGY_MIXED) {
        gs__say(why, size,
                "nvidia.com/mig-%s: the GpuClusterPolicy's strategy %s advertises no "
                "nvidia.com/mig-* resources (mixed does)",
                profile, t->pol->mig_policy.strategy == GS_MIG_STRATEGY_NONE ? "none" : "single");
        return -1;
    }
    if (share < 0) {
        gs__say(why, size,
                exists ? "nvidia.com/mig-%s: the GpuClusterPolicy allows that MIG profile on no "
                         "GPU model of this cluster"
                       : "nvidia.com/mig-%s: no GPU model in this cluster has that MIG profile",
                profile);
        return -1;
    }
    f->ncards = 1;
    f->model_mask = p->sp->model_mask;
    f->tenant = p->tenant;
    f->group = p->group;
    f->tier = GS_TIER_NONE;
    p->work_share = share;
    if (t->way != GS_WAY_FULL) {
        f->whole = 1;
        p->milli = 1000;
        p->gpus = 1;
        return 0;
    }
    snprintf(p->mig, sizeof(p->mig), "%s", profile);
    /* The name as the pod's spec spells it: the spec outlives the pod, the pod table moves. */
    for (int i = 0; i < p->sp->ncontainers && !f->mig; i++)
        if (strcmp(p->sp->containers[i].mig_profile, profile) == 0)
            f->mig = p->sp->containers[i].mig_profile;
    f->compute = share;
    f->overcommit = 1000;
    p->milli = share;
    p->gpus = 0; /* a ResourceQuota on nvidia.com/gpu does not count nvidia.com/mig-* */
    return 0;
}

/*
 * The VirtualGPUClass a pod names, its slice written into @c (one slice unless nvidia.com/gpu
 * asks for more, on as many cards); NULL when it names none, or with @why when it is undefined.
 */
static const struct gs_vgpu_class_spec *vgpu_class(const struct gs_policy *pol,
                                                   const struct gs_pod_spec *sp,
                                                   struct gs_scn_container *c, char *why,
                                                   size_t size)
{
    for (size_t i = 0; sp->vgpu_class[0] && i < pol->nvgpu_classes; i++) {
        const struct gs_vgpu_class_spec *vc = &pol->vgpu_classes[i];
        if (strcmp(vc->name, sp->vgpu_class))
            continue;
        c->gpu = c->gpu > 0 ? c->gpu : 1;
        c->gpumem_mib = vc->memory_mib;
        c->gpucores = vc->cores_pct;
        return vc;
    }
    if (sp->vgpu_class[0])
        gs__say(why, size, "VirtualGPUClass %s is not defined", sp->vgpu_class);
    return NULL;
}

/*
 * A pod asking its N slices or replicas on one card (gpusched.io/same-card) is one slice of N
 * times the share and memory, counted as N clients there.
 */
static void on_one_card(struct rpod *p)
{
    struct gs_fit *f = &p->fit;
    if (!p->sp->same_card || f->ncards < 2)
        return;
    f->units = f->ncards;
    f->compute *= f->ncards;
    f->mem_mib *= f->ncards;
    f->ncards = 1;
}

/*
 * Time-slice replicas (nvidia.com/gpu.shared: N): N replicas on distinct time-sliced cards of
 * nodes that offer replicas, each charged its declared nvidia.com/gpumem (else the card's memory
 * over its replicas) and asking nvidia.com/gpucores of the card's time (else all of it).
 */
static int timeslice_demand(const struct gs_tenancy *t, struct rpod *p,
                            const struct gs_scn_container *c, enum gs_tier tier, char *why,
                            size_t size)
{
    struct gs_fit *f = &p->fit;
    int most = 0, one_card = 0, replicas = 0;
    int64_t large = 0, mem = c->gpumem_mib == GS_UNSET ? 0 : c->gpumem_mib;
    for (size_t i = 0; i < t->pol->ntemplates; i++) {
        const struct gs_node_template *tp = &t->pol->templates[i];
        const struct gs_gpu_model *m = tp->model >= 0 ? gs_catalog_at(tp->model) : NULL;
        if (tp->gpus <= 0 || !m || tp->timeslice_replicas <= 0 ||
            !gs__model_allowed(p->sp->model_mask, tp->model))
            continue;
        most = tp->gpus > most ? tp->gpus : most;
        large = m->memory_mib > large ? m->memory_mib : large;
        replicas = tp->timeslice_replicas > replicas ? tp->timeslice_replicas : replicas;
        one_card |= tp->timeslice_replicas >= c->gpu_shared && c->gpu_shared * mem <= m->memory_mib;
    }
    /* all on one card, and no card holds them (one replica is for the checks below) */
    int none_holds = most > 0 && p->sp->same_card && c->gpu_shared > 1 && !one_card;
    if (none_holds && c->gpu_shared > replicas) {
        p->field = "metadata.annotations.gpusched.io/same-card";
        gs__say(why, size,
                "nvidia.com/gpu.shared %lld on one card (gpusched.io/same-card): no card this pod "
                "may use offers that many time-slice replicas (at most %d)",
                (long long)c->gpu_shared, replicas);
        return -1;
    }
    if (none_holds && c->gpu_shared * mem <= large) {
        p->field = "metadata.annotations.gpusched.io/same-card";
        gs__say(why, size,
                "nvidia.com/gpu.shared %lld on one card (gpusched.io/same-card): no time-sliced "
                "card this pod may use offers that many replicas with %lld MiB for them",
                (long long)c->gpu_shared, (long long)(c->gpu_shared * mem));
        return -1;
    }
    if (none_holds) {
        p->field = "spec.containers[].resources.limits.nvidia.com/gpumem";
        gs__say(why, size,
                "nvidia.com/gpumem %lld MiB x %lld replicas on one card (gpusched.io/same-card): "
                "more than the largest time-sliced card this pod may use has (%lld MiB)",
                (long long)mem, (long long)c->gpu_shared, (long long)large);
        return -1;
    }
    if (most == 0 || (c->gpu_shared > most && !p->sp->same_card)) {
        gs__say(why, size,
                "nvidia.com/gpu.shared %lld: no node this pod may use offers that many cards "
                "with time-slice replicas (Cluster nodeTemplates timeSlicing.replicas)",
                (long long)c->gpu_shared);
        return -1;
    }
    if (c->gpumem_mib != GS_UNSET && c->gpumem_mib > large) {
        gs__say(why, size,
                "nvidia.com/gpumem %lld MiB: more than the largest time-sliced card this pod may "
                "use has (%lld MiB)",
                (long long)c->gpumem_mib, (long long)large);
        return -1;
    }
    const struct gs_tier_spec *ts = tier ? &t->pol->tiers[tier] : NULL;
    f->ncards = (int)c->gpu_shared;
    f->timeslice = 1;
    f->compute = c->gpucores == GS_UNSET ? 1000 : c->gpucores < 1 ? 1 : (int32_t)c->gpucores * 10;
    f->mem_mib = c->gpumem_mib == GS_UNSET ? 0 : c->gpumem_mib;
    f->overcommit = 1000;
    f->model_mask = p->sp->model_mask;
    f->tenant = p->tenant;
    f->group = p->group;
    f->tier = tier;
    f->hard = ts && ts->defined && ts->isolation == GS_ISOLATION_HARD;
    p->milli = f->ncards * f->compute;
    p->gpus = 0; /* a ResourceQuota on nvidia.com/gpu does not count nvidia.com/gpu.shared */
    p->gpumem_mib = f->ncards * f->mem_mib;
    on_one_card(p);
    return 0;
}

/* The device demand of a pod; -1 with @why when it can never be admitted. */
/*
 * A fractional request's share of a card: without gpucores, the compute share of its memory on
 * the largest card @b allows, rounded down, so that on no card its compute binds before its
 * memory: memory alone decides how many such pods a card holds, as in HAMi, which asks no compute
 * of a pod without nvidia.com/gpucores (on a smaller card the share counts less than the memory
 * it holds); without gpumem, the memory of its compute share of the smallest card, which every
 * card it may use holds. Its overcommit cap in the full way is its step profile's, else its
 * tier's.
 */
static int slice_demand(const struct gs_tenancy *t, struct rpod *p,
                        const struct gs_step_profile *prof, const struct gs_tier_spec *ts,
                        const struct gs_scn_container *c, const struct card_bounds *b, char *why,
                        size_t size)
{
    struct gs_fit *f = &p->fit;
    int64_t card = b->large_mib;
    if (c->gpumem_mib != GS_UNSET && c->gpumem_mib > b->large_mib) {
        gs__say(why, size,
                "nvidia.com/gpumem %lld MiB: more than the largest card this pod may use "
                "has (%lld MiB)",
                (long long)c->gpumem_mib, (long long)b->large_mib);
        return -1;
    }
    if (card <= 0) {
        gs__say(why, size, "no node has GPUs of the models this pod allows");
        return -1;
    }
    /* Memory alone asks no compute of its own (HAMi's default nvidia.com/gpucores is 0); its share
     * is its memory's, rounded down, so cards fill by memory: 23 pods of 2000 MiB on 46068. */
    int64_t cores = c->gpucores != GS_UNSET ? c->gpucores * 10 : c->gpumem_mib * 1000 / card;
    f->compute = (int32_t)(cores < 1 ? 1 : cores > 1000 ? 1000 : cores);
    f->mem_mib = c->gpumem_mib != GS_UNSET ? c->gpumem_mib : b->small_mib * f->compute / 1000;
    if (f->mem_mib < 1)
        f->mem_mib = 1;
    f->overcommit = 1000;
    if (t->way == GS_WAY_FULL)
        f->overcommit = prof                ? prof->overcommit_milli
                        : ts && ts->defined ? ts->overcommit_milli
                                            : 1000;
    if (f->overcommit < 1000)
        f->overcommit = 1000;
    if (p->sp->same_card && c->gpu > 1 &&
        (c->gpu * f->mem_mib > b->large_mib || c->gpu * f->compute > f->overcommit)) {
        p->field = "metadata.annotations.gpusched.io/same-card";
        gs__say(why, size,
                "nvidia.com/gpu %lld slices on one card (gpusched.io/same-card): %lld MiB and "
                "%lld%% of a card together, more than any card this pod may use gives (%lld MiB, "
                "%d%%)",
                (long long)c->gpu, (long long)(c->gpu * f->mem_mib),
                (long long)(c->gpu * f->compute / 10), (long long)b->large_mib, f->overcommit / 10);
        return -1;
    }
    p->milli = c->gpu * f->compute;
    p->gpumem_mib = c->gpu * f->mem_mib;
    return 0;
}

/*
 * Time-slice replicas as the pod or its tier asks for them (a tier with timeSlicing turns plain
 * nvidia.com/gpu into replicas); where nothing may be shared a replica is a whole card.
 * Return: 1 when @c asks for replicas that may be given, else 0 (@c rewritten as cards).
 */
static int wants_replicas(struct gs_scn_container *c, const struct gs_tier_spec *ts, int may_share)
{
    int fractional = c->gpumem_mib != GS_UNSET || c->gpucores != GS_UNSET;
    if (may_share && ts && ts->defined && ts->timeslice && c->gpu > 0 && !fractional) {
        c->gpu_shared = c->gpu;
        c->gpu = 0;
    }
    if (c->gpu_shared <= 0 || may_share)
        return c->gpu_shared > 0;
    c->gpu = c->gpu_shared;
    c->gpumem_mib = c->gpucores = GS_UNSET;
    return 0;
}

/*
 * The compute share of a card a pod's kernels use, per card, as it asks it whatever the way gives
 * it (the work model, work.c): nvidia.com/gpucores; else a slice's memory's share of the largest
 * card it may use (as slice_demand() counts it); else the whole card, or a replica's whole time.
 */
static int32_t work_share(const struct gs_tenancy *t, const struct rpod *p,
                          const struct gs_scn_container *c)
{
    int64_t s = 1000;
    int64_t card = bounds_of(t, p->sp, p->sp->model_mask).large_mib;
    if (c->gpucores != GS_UNSET)
        s = c->gpucores * 10;
    else if (c->gpumem_mib != GS_UNSET && c->gpu_shared <= 0 && card > 0)
        s = c->gpumem_mib * 1000 / card;
    return (int32_t)(s < 1 ? 1 : s > 1000 ? 1000 : s);
}

/* The init container whose own nvidia.com/gpu is the pod's @gpu, the app containers and sidecars
 * together asking fewer (a pod asks the larger of its init containers' ask and their sum, as
 * kubelet admits it); -1 when the sum is the pod's. */
static int16_t gpu_from_init(const struct gs_pod_spec *sp, int64_t gpu)
{
    int64_t sum = 0;
    int16_t init = -1;
    for (int i = 0; i < sp->ncontainers; i++) {
        int64_t g = sp->containers[i].gpu > 0 ? sp->containers[i].gpu : 0;
        if (sp->containers[i].init != 1)
            sum += g;
        else if (g == gpu && init < 0)
            init = (int16_t)i;
    }
    return sum < gpu ? init : -1;
}

/* The device demand of a pod; -1 with @why when it can never be admitted. */
static int demand(const struct gs_tenancy *t, struct rpod *p, const struct gs_step_profile *prof,
                  char *why, size_t size)
{
    const struct gs_pod_spec *sp = p->sp;
    struct gs_scn_container c;
    p->field = "spec.containers[].resources";
    if (containers(t->pol, sp, &c, &p->field, &p->field_at, why, size))
        return -1;
    const struct gs_vgpu_class_spec *vc = vgpu_class(t->pol, sp, &c, why, size);
    if (sp->vgpu_class[0] && !vc) {
        p->field = "metadata.annotations.gpusched.io/vgpu-class";
        return -1;
    }
    p->fit.cpu_milli = c.cpu_milli;
    p->fit.memory_mib = c.memory_mib;
    p->work_share = work_share(t, p, &c);
    p->field = "spec.containers[].resources.limits";
    for (int i = 0; c.mig_profile[0] && p->field_at < 0 && i < sp->ncontainers; i++)
        if (strcmp(sp->containers[i].mig_profile, c.mig_profile) == 0)
            p->field_at = (int16_t)i; /* the container that asks the profile */
    if (c.mig_profile[0])
        return mig_demand(t, p, c.mig_profile, why, size);
    if (c.gpu_shared > 0 && c.gpu > 0) {
        gs__say(why, size,
                "nvidia.com/gpu.shared with nvidia.com/gpu: a pod takes time-slice "
                "replicas or cards, not both");
        return -1;
    }
    struct gs_fit *f = &p->fit;
    enum gs_tier tier = tier_of(t, sp, p->tenant);
    const struct gs_tier_spec *ts = tier ? &t->pol->tiers[tier] : NULL;
    int may_share = t->way != GS_WAY_EXCLUSIVE && (!ts || !ts->defined || ts->sharing) &&
                    (t->way != GS_WAY_FULL || !prof || prof->gpu_share);
    int fractional = c.gpumem_mib != GS_UNSET || c.gpucores != GS_UNSET;
    if (sp->same_card && c.gpu > 0 && !fractional && !vc && !(ts && ts->defined && ts->timeslice)) {
        p->field = "metadata.annotations.gpusched.io/same-card";
        gs__say(why, size,
                "gpusched.io/same-card puts slices (nvidia.com/gpumem, nvidia.com/gpucores, a "
                "VirtualGPUClass) or time-slice replicas on one card; this pod asks whole cards "
                "(nvidia.com/gpu %lld)",
                (long long)c.gpu);
        return -1;
    }
    if (wants_replicas(&c, ts, may_share))
        return timeslice_demand(t, p, &c, tier, why, size);
    struct card_bounds b = bounds_of(t, p->sp, p->sp->model_mask);
    fractional = c.gpumem_mib != GS_UNSET || c.gpucores != GS_UNSET;
    if (c.gpu > 0 && b.most_gpus == 0 && sp->model_mask) {
        p->field = model_field(sp);
        gs__say(why, size, "no node has GPUs of the models this pod allows");
        return -1;
    }
    if (c.gpu > b.most_gpus && !(sp->same_card && fractional)) {
        p->field = c.gpu_shared > 0 ? "spec.containers[].resources.limits.nvidia.com/gpu.shared"
                                    : "spec.containers[].resources.limits.nvidia.com/gpu";
        p->field_at = gpu_from_init(sp, c.gpu);
        /* time-slice replicas are whole cards where nothing may be shared: said as asked */
        gs__say(why, size, "%s %lld%s: the largest node this pod may use has %d GPUs",
                c.gpu_shared > 0 ? "nvidia.com/gpu.shared" : "nvidia.com/gpu", (long long)c.gpu,
                c.gpu_shared > 0 ? " (whole cards where nothing is shared)" : "", b.most_gpus);
        return -1;
    }
    f->ncards = (int)c.gpu;
    f->whole = !(fractional && may_share);
    f->model_mask = sp->model_mask;
    f->cpu_milli = c.cpu_milli;
    f->memory_mib = c.memory_mib;
    f->tenant = p->tenant;
    f->group = p->group;
    f->tier = tier;
    f->tier_soft = tier == GS_TIER_NVLINK && !gs__tn_tier_required(ts);
    f->hard = ts && ts->defined && ts->isolation == GS_ISOLATION_HARD;
    p->gpus = c.gpu;
    if (t->way == GS_WAY_FULL && prof && prof->max_memory_mib != GS_UNSET &&
        c.gpumem_mib != GS_UNSET && c.gpumem_mib > prof->max_memory_mib) {
        p->field = "metadata.annotations.gpusched.io/profile";
        gs__say(why, size, "profile %s: nvidia.com/gpumem %lld MiB > maxMemory %lld MiB",
                prof->name, (long long)c.gpumem_mib, (long long)prof->max_memory_mib);
        return -1;
    }
    if (f->whole) {
        p->milli = c.gpu * 1000;
        p->gpumem_mib = c.gpu * or_default(c.gpumem_mib, 0);
        return 0;
    }
    if (slice_demand(t, p, prof, ts, &c, &b, why, size))
        return -1;
    f->max_clients = !vc ? 0 : vc->shareable ? vc->max_clients : 1;
    if (vc && sp->same_card && c.gpu > (f->max_clients > 0 ? f->max_clients : 1)) {
        p->field = "metadata.annotations.gpusched.io/same-card";
        gs__say(why, size,
                "nvidia.com/gpu %lld slices on one card (gpusched.io/same-card): VirtualGPUClass "
                "%s lets %d share a card",
                (long long)c.gpu, vc->name, f->max_clients > 0 ? f->max_clients : 1);
        return -1;
    }
    on_one_card(p);
    return 0;
}

/*
 * The Volcano Queue a pod runs in, by the one rule (gs_pod_queue()): its PodGroup's spec.queue,
 * `default` when the PodGroup names none (Volcano's admission writes it in); a pod of no PodGroup
 * its annotation scheduling.volcano.sh/queue-name, else `default` ("default queue": a job that
 * names no queue belongs to `default`, volcano.sh Queue docs). A pod parked for a PodGroup not
 * made yet counts by its annotation meanwhile, and is admitted again when it is made. A Queue
 * document named `default` defines that queue; without one it is the implicit one, weight 1 and
 * no capability.
 */
static int32_t queue_of(const struct gs_tenancy *t, const struct gs_pod_spec *sp, int32_t group)
{
    const struct gs_policy *pol = t->pol;
    const char *want = gs_pod_queue(sp, gs__tn_made_group(t, group));
    for (size_t i = 0; i < pol->nqueues; i++)
        if (strcmp(pol->queues[i].name, want) == 0)
            return (int32_t)i;
    return (int32_t)pol->nqueues; /* the implicit default queue */
}

/*
 * A member of a PodGroup whose own queue-name annotation names another queue than the PodGroup's
 * (`default` when its spec.queue names none): Volcano runs it in its PodGroup's queue and drops
 * the annotation without a word. One of the two is a mistake, so the pod is refused, naming both
 * (in the full way, where PodGroups are read).
 */
static int queue_conflict(const struct gs_tenancy *t, const struct gs_pod_spec *sp, int32_t group,
                          char *why, size_t size)
{
    const struct gs_podgroup_spec *g = gs__tn_made_group(t, group);
    const char *pg = g ? gs_podgroup_queue(g) : "";
    if (!g || !sp->queue[0] || strcmp(pg, sp->queue) == 0)
        return 0;
    if (!g->queue[0])
        gs__say(why, size,
                "its queue-name annotation names queue %s but its PodGroup %s/%s names no queue "
                "and so runs in default (a PodGroup's members run in its queue): drop the "
                "annotation, or name queue %s in the PodGroup's spec.queue",
                sp->queue, g->ns, g->name, sp->queue);
    else
        gs__say(why, size,
                "its queue-name annotation names queue %s but its PodGroup %s/%s is in queue %s "
                "(a PodGroup's members run in its queue): drop the annotation or make them agree",
                sp->queue, g->ns, g->name, pg);
    return 1;
}

/* The ResourceQuotas of its namespace that count @p: all but those scoped to PriorityClasses
 * it is not of. */
static void quotas_of(const struct gs_tenancy *t, struct rpod *p)
{
    const struct gs_policy *pol = t->pol;
    p->rq_ns = namemap_get(t->rq_nsmap, p->sp->ns, NULL);
    p->rq_mask = 0;
    if (p->rq_ns < 0)
        return;
    const struct rq_group *g = &t->rq_groups[p->rq_ns];
    for (size_t k = 0; k < g->n; k++) {
        const struct gs_rquota_spec *q = &pol->rquotas[t->rq_idx[g->start + k]];
        int in_scope = q->nscope_classes == 0;
        for (int j = 0; j < q->nscope_classes; j++)
            in_scope |= strcmp(q->scope_classes[j], p->sp->priority_class) == 0;
        if (in_scope)
            p->rq_mask |= 1ull << k;
    }
}

/* Namespaces with ResourceQuotas: each one's quotas, in the policy's order (at most
 * GS_RQ_PER_NS). Return: 0; -E2BIG; -ENOMEM. */
static int rq_index(struct gs_tenancy *t)
{
    const struct gs_policy *pol = t->pol;
    size_t n = pol->nrquotas;
    t->rq_nsmap = calloc(1, sizeof(*t->rq_nsmap));
    t->rq_groups = gs__zalloc(n, sizeof(*t->rq_groups));
    t->rq_idx = gs__zalloc(n, sizeof(*t->rq_idx));
    int32_t *group = gs__zalloc(n, sizeof(*group));
    int r = t->rq_nsmap && t->rq_groups && t->rq_idx && group ? 0 : -ENOMEM;
    size_t ngroups = 0;
    for (size_t i = 0; r == 0 && i < n; i++) {
        int32_t g = namemap_intern(t->rq_nsmap, pol->rquotas[i].ns, NULL, (int32_t)ngroups);
        if (g < 0)
            r = g;
        else if ((size_t)g == ngroups)
            ngroups++;
        group[i] = g;
        if (g >= 0 && ++t->rq_groups[g].n > GS_RQ_PER_NS)
            r = -E2BIG;
    }
    for (size_t g = 1; r == 0 && g < ngroups; g++)
        t->rq_groups[g].start = t->rq_groups[g - 1].start + t->rq_groups[g - 1].n;
    for (size_t g = 0; r == 0 && g < ngroups; g++)
        t->rq_groups[g].n = 0;
    for (size_t i = 0; r == 0 && i < n; i++) {
        struct rq_group *gr = &t->rq_groups[group[i]];
        t->rq_idx[gr->start + gr->n++] = (int32_t)i;
    }
    free(group);
    return r;
}

static int32_t level_of(const int32_t *levels, size_t n, int32_t prio)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (levels[mid] > prio)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (int32_t)(lo < n ? lo : n - 1); /* below every level: the lowest */
}

static int cmp_desc(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x < y) - (x > y);
}

/*
 * The priority levels, highest first: every priority admission can give a pod (priority_of()):
 * the PriorityClasses' values (Kubernetes' built-in two too), the tenants' priorities, the step
 * profiles' (and their overrides'), and 0, the priority of a pod nothing gives one.
 */
static int make_levels(struct gs_tenancy *t)
{
    const struct gs_policy *pol = t->pol;
    size_t n = 0, max = pol->npriority_classes + pol->ntenants + pol->nprofiles + 3;
    if (!(t->levels = malloc(max * sizeof(*t->levels))))
        return -ENOMEM;
    for (size_t i = 0; i < pol->npriority_classes; i++)
        t->levels[n++] = pol->priority_classes[i].value;
    const struct gs_priority_class_spec *b;
    for (size_t i = 0; (b = gs_priority_class_builtin(i)); i++)
        t->levels[n++] = b->value;
    for (size_t i = 0; i < pol->ntenants; i++)
        if (pol->tenants[i].priority != GS_UNSET)
            t->levels[n++] = pol->tenants[i].priority;
    for (size_t i = 0; i < pol->nprofiles; i++)
        if (!pol->profiles[i].tenant[0] || (pol->profiles[i].set & (1u << GS_PROFILE_PRIORITY)))
            t->levels[n++] = pol->profiles[i].priority;
    t->levels[n++] = 0;
    qsort(t->levels, n, sizeof(*t->levels), cmp_desc);
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (w == 0 || t->levels[w - 1] != t->levels[i])
            t->levels[w++] = t->levels[i];
    t->nlevels = w;
    return 0;
}

/*
 * What makes two pods alike for the scheduler (tenancy.c's pass memo and searches): the device
 * request, tenant, queue, priority and quotas. The user is left out, as maxPodsPerUser is
 * checked on its own, and so is the duration, which only a reservation looks at.
 */
static uint64_t static_shape(const struct rpod *p)
{
    const struct gs_fit *f = &p->fit;
    const int64_t v[] = {f->ncards,
                         f->whole,
                         f->compute,
                         f->mem_mib,
                         f->overcommit,
                         f->model_mask,
                         f->cpu_milli,
                         f->memory_mib,
                         f->tenant,
                         f->hard,
                         f->tier * 2 + f->tier_soft,
                         p->queue,
                         p->level,
                         p->rq_ns,
                         (int64_t)p->rq_mask,
                         p->preemptible};
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        h = (h ^ (uint64_t)v[i]) * 1099511628211ULL;
    for (const char *c = p->mig; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    if (f->max_clients) /* only then: pods without a cap keep the shapes they always had */
        h = (h ^ (uint64_t)f->max_clients) * 1099511628211ULL;
    if (!f->whole && f->overcommit > 1000) /* packed by utilisation: alike only at one rate */
        h = (h ^ (uint64_t)p->rate) * 1099511628211ULL;
    if (f->units > 1 || f->timeslice)
        h = (h ^ (uint64_t)(f->units * 2 + f->timeslice)) * 1099511628211ULL;
    if (f->node_only || f->zone_only)
        h = (h ^ ((uint64_t)f->node_only << 32 | (uint32_t)f->zone_only)) * 1099511628211ULL;
    for (uint32_t w = 0; f->nodes_ok && w < (f->nodes_ok_n + 63) / 64; w++)
        h = (h ^ f->nodes_ok[w]) * 1099511628211ULL; /* its nodes alike, by their bits */
    if (f->nodes_ok)
        h = (h ^ f->nodes_ok_n) * 1099511628211ULL;
    if (f->tolerated)
        h = (h ^ f->tolerated) * 1099511628211ULL;
    if (f->prefer_not)
        h = (h ^ f->prefer_not ^ 0x5bd1e995u) * 1099511628211ULL;
    return h;
}

/*
 * Kubernetes' Priority admission (kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-
 * preemption): a pod's spec.priority, when it gives one, is the value of its PriorityClass, or of
 * the globalDefault class (else 0) when it names none: a pod cannot rank itself. A class the
 * policy lacks is refused unless spec.priority says what an API server made of it. Its
 * spec.preemptionPolicy, when given, is likewise its class's (else PreemptLowerPriority): the
 * admission plugin refuses another; a class the policy lacks takes the pod's word for it.
 */
static int priority_refused(const struct gs_policy *pol, const struct gs_pod_spec *sp, char *why,
                            size_t size, const char **field)
{
    const struct gs_priority_class_spec *c = class_of(pol, sp->priority_class);
    *field = "spec.priorityClassName";
    if (sp->priority_class[0] && !c && !sp->has_priority)
        return gs__say(why, size, "PriorityClass %s is not defined", sp->priority_class), 1;
    *field = "spec.priority";
    for (size_t i = 0; !c && !sp->priority_class[0] && i < pol->npriority_classes; i++)
        if (pol->priority_classes[i].global_default)
            c = &pol->priority_classes[i];
    int never = c && c->never_preempt;
    if (sp->preemption && !(sp->priority_class[0] && !c) && (sp->preemption == 2) != never) {
        *field = "spec.preemptionPolicy";
        return gs__say(why, size,
                       "spec.preemptionPolicy %s differs from %s, what %s%s gives: a pod's "
                       "preemptionPolicy comes from its PriorityClass",
                       sp->preemption == 2 ? "Never" : "PreemptLowerPriority",
                       never ? "Never" : "PreemptLowerPriority",
                       c ? "PriorityClass " : "no PriorityClass", c ? c->name : ""),
               1;
    }
    int32_t want = c ? c->value : 0;
    if (!sp->has_priority || sp->priority == want || (sp->priority_class[0] && !c))
        return 0;
    gs__say(why, size,
            "spec.priority %d differs from %d, the value %s%s gives: a pod's priority comes "
            "from its PriorityClass",
            sp->priority, want, c ? "PriorityClass " : "no PriorityClass", c ? c->name : "");
    return 1;
}

/*
 * The node or zone a pod is held to (spec.nodeName, nodeSelector kubernetes.io/hostname or
 * topology.kubernetes.io/zone) as the fleet numbers them, and the taint classes it tolerates;
 * -1 with the reason when the cluster has no such node or zone, where it could never run.
 */
static int pin(const struct gs_tenancy *t, struct rpod *p)
{
    const struct gs_pod_spec *sp = p->sp;
    const struct gs_policy *pol = t->pol;
    p->fit.node_only = p->fit.zone_only = 0;
    p->fit.nodes_ok = sp->nodes_ok;
    p->fit.nodes_ok_n = sp->nodes_ok ? sp->nodes_ok_n : 0;
    if (sp->node_name[0]) /* by name, not a scan: a pod per node of a large cluster pins them */
        p->fit.node_only = namemap_get(t->node_names, sp->node_name, NULL) + 1;
    for (size_t i = 0; sp->node_zone[0] && !p->fit.zone_only && i < pol->nnodes; i++)
        if (strcmp(pol->nodes[i].zone, sp->node_zone) == 0)
            p->fit.zone_only = gs_fleet_node_zone(t->fleet, i) + 1;
    if (sp->node_name[0] && !p->fit.node_only) {
        p->field =
            sp->node_by_selector ? "spec.nodeSelector.kubernetes.io/hostname" : "spec.nodeName";
        gs__say(p->reason, sizeof(p->reason), "node %s is not in the cluster", sp->node_name);
        return -1;
    }
    if (sp->node_zone[0] && !p->fit.zone_only) {
        p->field = "spec.nodeSelector.topology.kubernetes.io/zone";
        gs__say(p->reason, sizeof(p->reason), "no node of the cluster is in zone %s",
                sp->node_zone);
        return -1;
    }
    size_t first[GS_TAINT_CLASSES]; /* the tainted nodes it may use, by their taint classes */
    int nc = gs_fleet_taint_classes(t->fleet, first);
    p->fit.tolerated = p->fit.prefer_not = 0;
    for (int c = 0; c < nc; c++) {
        if (!gs_node_untolerated(pol, first[c], sp))
            p->fit.tolerated |= 1ULL << c;
        if (gs_node_prefers_not(pol, first[c], sp))
            p->fit.prefer_not |= 1ULL << c;
    }
    return 0;
}

/*
 * A ResourceQuota that tracks requests.cpu or requests.memory, and is in scope for the pod,
 * refuses a pod with a container (app or init) that asks none of it once the LimitRanges'
 * defaults are in: Kubernetes' quota admission for pods ("must specify requests.cpu",
 * podEvaluator.Constraints, kubernetes.io "Resource Quotas": "users must specify requests or
 * limits for those values"). A request given by a limit alone counts. -1 with the reason.
 */
static int rquota_requires(const struct gs_tenancy *t, struct rpod *p)
{
    static const char *const res[2] = {"requests.cpu", "requests.memory"};
    const struct gs_pod_spec *sp = p->sp;
    int need[2] = {0, 0};
    const struct gs_rquota_spec *by[2] = {NULL, NULL};
    for (uint64_t m = p->rq_mask; m; m &= m - 1) {
        const struct gs_rquota_spec *q =
            &t->pol->rquotas[gs__tn_rquota_at(t, p, __builtin_ctzll(m))];
        for (int r = 0; r < 2; r++)
            if (!need[r] && (r ? q->memory_mib : q->cpu_milli) != GS_UNSET) {
                need[r] = 1;
                by[r] = q;
            }
    }
    for (int i = 0; (need[0] || need[1]) && i < sp->ncontainers; i++) {
        struct gs_scn_container c = sp->containers[i];
        const struct gs_limit_range_spec *lr;
        for (size_t k = 0; (lr = limits_of(t->pol, sp->ns, &k));)
            limit_defaults(&c, lr);
        for (int r = 0; r < 2; r++)
            if (need[r] && (r ? c.memory_mib : c.cpu_milli) == GS_UNSET) {
                p->field = r ? "spec.containers[].resources.requests.memory"
                             : "spec.containers[].resources.requests.cpu";
                p->field_at = (int16_t)i;
                gs__say(p->reason, sizeof(p->reason),
                        "namespace %s: ResourceQuota %s tracks %s: a container that asks none "
                        "must specify %s",
                        sp->ns, by[r]->name, res[r], res[r]);
                return -1;
            }
    }
    return 0;
}

/* The GPU models of the cluster a pod of tenant @p may be given: with a GPUQuota (full way),
 * only those it gives some of (a pod allowed none of them would wait forever); else all. */
static uint32_t quota_models(const struct gs_tenancy *t, const struct rpod *p)
{
    const struct gs_tenant_spec *ts =
        p->tenant >= 0 && (size_t)p->tenant < t->pol->ntenants ? &t->pol->tenants[p->tenant] : NULL;
    if (t->way != GS_WAY_FULL || !ts || !ts->has_quota)
        return UINT32_MAX;
    uint32_t m = 0;
    for (int k = 0; k < GS_MODEL_MAX; k++) {
        const struct gs_model_quota *q = gs_tenant_model_quota(ts, k);
        m |= (t->models & (1u << k)) && q && q->total_milli > 0 ? 1u << k : 0;
    }
    return m;
}

/*
 * A pod whose cards must share one NVLink group (needs_nvlink(): tier nvlink, required) waits
 * forever where no node it may use (its spec.nodeName, else its zone's nodes of GPU models it
 * allows and its tenant's GPUQuota gives) has an NVLink group that large: placement never splits it
 * (docs/topology.md). -1 with the reason.
 */
static int nvlink_possible(const struct gs_tenancy *t, struct rpod *p)
{
    const struct gs_fit *f = &p->fit;
    if (!needs_nvlink(p) || f->ncards <= 0)
        return 0;
    uint32_t allowed = (f->model_mask ? f->model_mask : UINT32_MAX) & quota_models(t, p);
    if (!(allowed & t->models))
        return 0;         /* no model at all: the GPUQuota's check says so */
    int most = f->ncards; /* else the largest group there is, for the message */
    if (f->node_only) {
        most = gs_fleet_node_nvlink_max(t->fleet, (size_t)f->node_only - 1);
    } else if (f->zone_only) { /* its zone's nodes of its models */
        most = 0;
        for (size_t n = 0; n < gs_fleet_node_count(t->fleet); n++) {
            int model = gs_fleet_node_model(t->fleet, n), g = gs_fleet_node_nvlink_max(t->fleet, n);
            if (g > most && model >= 0 && gs_fleet_node_zone(t->fleet, n) + 1 == f->zone_only &&
                (allowed & (1u << model)))
                most = g;
        }
    } else {
        while (most > 0 && !(gs_fleet_models_with(t->fleet, most, 1) & allowed))
            most--;
    }
    if (f->ncards <= most)
        return 0;
    char has[64];
    if (most)
        gs__say(has, sizeof(has), "the largest on %s holds %d",
                f->node_only ? "its node" : "the nodes it may use", most);
    else
        gs__say(has, sizeof(has), "%s no NVLink",
                f->node_only ? "its node has" : "the nodes it may use have");
    p->field = "metadata.annotations.gpusched.io/topology";
    gs__say(p->reason, sizeof(p->reason),
            "tier nvlink%s: its %d GPU%s must be in one NVLink group; %s",
            p->sp->tier != GS_TIER_NONE || p->sp->tier_given ? "" : " (its tenant's)", f->ncards,
            f->ncards > 1 ? "s" : "", has);
    return -1;
}

/* The GPU models a pod may run on: those it allows (all when it names none), and for a MIG
 * instance (full way) only those whose GpuClusterPolicy allows its profile, for time-slice
 * replicas only those of node templates that offer replicas. */
static uint32_t runs_on(const struct gs_tenancy *t, const struct rpod *p)
{
    uint32_t mask = p->fit.model_mask ? p->fit.model_mask : UINT32_MAX;
    if (!p->fit.mig && !p->fit.timeslice)
        return p->fit.model_mask;
    uint32_t on = 0;
    for (size_t i = 0; i < t->pol->ntemplates; i++) {
        const struct gs_node_template *tp = &t->pol->templates[i];
        int model = tp->model;
        const struct gs_gpu_model *m = model >= 0 ? gs_catalog_at(model) : NULL;
        if (!m)
            continue;
        if (p->fit.timeslice) {
            on |= tp->timeslice_replicas > 0 ? 1u << model : 0;
            continue;
        }
        int mm = gs_mig_model_find(m->name);
        int prof = mm >= 0 ? gs_mig_profile_find(mm, p->fit.mig, -1) : -1;
        if (prof >= 0 && gs_fleet_mig_allowed(t->pol, mm, prof))
            on |= 1u << model;
    }
    return mask & on;
}

/* The models @p may run on (runs_on(), 0: any) that its tenant's GPUQuota gives. */
static uint32_t quota_runs_on(const struct gs_tenancy *t, const struct rpod *p)
{
    uint32_t on = runs_on(t, p);
    return quota_models(t, p) & (on ? on : UINT32_MAX);
}

/* Can @p's share fit the shared quota of a model it may run on? Fractional use (slices, replicas,
 * MIG instances) is charged to shared only (docs/quotas.md), so with too little there it never
 * runs. 1 for whole cards. */
static int shared_gives(const struct gs_tenancy *t, const struct rpod *p)
{
    const struct gs_tenant_spec *ts = &t->pol->tenants[p->tenant];
    if (p->fit.whole)
        return 1;
    for (uint32_t m = quota_runs_on(t, p); m; m &= m - 1) {
        const struct gs_model_quota *q = gs_tenant_model_quota(ts, __builtin_ctz(m));
        if (q && q->shared_milli >= p->milli)
            return 1;
    }
    return 0;
}

static void admit_one(const struct gs_tenancy *t, struct rpod *p)
{
    const struct gs_policy *pol = t->pol;
    const struct gs_pod_spec *sp = p->sp;
    struct gs_step_profile buf;
    const struct gs_step_profile *prof = profile_of(t, p, &buf);
    p->queue = queue_of(t, sp, p->group);
    p->prio = priority_of(t, sp, p->group, p->tenant, prof, &p->never_preempt);
    p->preemptible = prof && t->way == GS_WAY_FULL ? (uint8_t)prof->preemptible : 1;
    p->node = -1;
    p->model = -1;
    p->start = p->first_start = -1;
    quotas_of(t, p);
    if (priority_refused(pol, sp, p->reason, sizeof(p->reason), &p->field)) {
        p->state = GS_POD_REJECTED;
        return;
    }
    if (!gs_policy_scheduler_takes(pol, sp->scheduler, p->reason, sizeof(p->reason))) {
        p->field = "spec.schedulerName";
        p->state = GS_POD_REJECTED;
        return;
    }
    if (sp->group[0] && p->group < 0 && t->way == GS_WAY_FULL) {
        p->field =
            sp->group_key ? sp->group_key : "metadata.annotations.scheduling.k8s.io/group-name";
        gs__say(p->reason, sizeof(p->reason), "PodGroup %s/%s is not defined", sp->ns, sp->group);
        p->state = GS_POD_REJECTED;
        return;
    }
    if (t->way == GS_WAY_FULL && queue_conflict(t, sp, p->group, p->reason, sizeof(p->reason))) {
        p->field = "metadata.annotations.scheduling.volcano.sh/queue-name";
        p->state = GS_POD_REJECTED;
        return;
    }
    if (sp->profile[0] && !prof) {
        p->field = "metadata.annotations.gpusched.io/profile";
        gs__say(p->reason, sizeof(p->reason), "step profile %s is not defined", sp->profile);
        p->state = GS_POD_REJECTED;
        return;
    }
    if (t->way != GS_WAY_FULL)
        p->group = -1;
    if (demand(t, p, prof, p->reason, sizeof(p->reason)) < 0 || pin(t, p) < 0 ||
        nvlink_possible(t, p) < 0 || rquota_requires(t, p) < 0) {
        p->state = GS_POD_REJECTED;
        return;
    }
    const struct gs_tenant_spec *ts =
        p->tenant >= 0 && (size_t)p->tenant < pol->ntenants ? &pol->tenants[p->tenant] : NULL;
    if (t->way == GS_WAY_FULL && ts && ts->max_gpus_per_pod != GS_UNSET &&
        p->gpus > ts->max_gpus_per_pod) {
        p->field = "spec.containers[].resources.limits.nvidia.com/gpu";
        gs__say(p->reason, sizeof(p->reason), "tenant %s: maxGPUsPerPod %d < nvidia.com/gpu %lld",
                ts->name, ts->max_gpus_per_pod, (long long)p->gpus);
        p->state = GS_POD_REJECTED;
    } else if (t->way == GS_WAY_FULL && ts && ts->has_quota && p->milli > 0 &&
               !quota_runs_on(t, p)) {
        int shared = 0; /* asked as nvidia.com/gpu.shared, not turned to replicas by a tier */
        for (int i = 0; i < sp->ncontainers; i++)
            shared |= sp->containers[i].gpu_shared > 0;
        p->field = sp->model_mask ? model_field(sp)
                   : shared       ? "spec.containers[].resources.limits.nvidia.com/gpu.shared"
                                  : "spec.containers[].resources.limits.nvidia.com/gpu";
        gs__say(p->reason, sizeof(p->reason),
                "tenant %s: its GPUQuota gives none of the GPU models %s%s", ts->name,
                p->fit.mig         ? "with MIG profile "
                : p->fit.timeslice ? "whose nodes offer time-slice replicas"
                : sp->model_mask   ? "this pod allows"
                                   : "of the cluster",
                p->fit.mig ? p->fit.mig : "");
        p->state = GS_POD_REJECTED;
    } else if (t->way == GS_WAY_FULL && ts && ts->has_quota && p->milli > 0 &&
               !shared_gives(t, p)) {
        p->field = "spec.containers[].resources";
        gs__say(p->reason, sizeof(p->reason),
                "tenant %s: its GPUQuota's shared quota holds less than this pod's share on every "
                "GPU model it may run on (a share, a replica or a MIG instance is charged to "
                "shared, dedicated being whole cards)",
                ts->name);
        p->state = GS_POD_REJECTED;
    }
}

int32_t gs__tn_group_find(const struct gs_tenancy *t, const char *ns, const char *name)
{
    return namemap_get(t->groups, ns, name);
}

/* Are PodGroup @g's members a gang: not where its tenant's GPUQuota says
 * schedulingPolicy.gangScheduling false (they start one by one)? */
static int gang_on(const struct gs_tenancy *t, const struct gs_podgroup_spec *g)
{
    int32_t tn = gs__tn_ns_tenant(t, g->ns);
    return tn < 0 || t->pol->tenants[tn].gang_scheduling;
}

int32_t gs__tn_ns_tenant(const struct gs_tenancy *t, const char *ns)
{
    int32_t tn = namemap_get(t->namespaces, ns, NULL);
    return tn >= 0 && (size_t)tn < t->pol->ntenants ? tn : -1;
}

/* The members PodGroup @g starts together: its minMember, or 1 (each alone) without gangs. */
static int32_t gang_min(const struct gs_tenancy *t, const struct gs_podgroup_spec *g)
{
    return gang_on(t, g) || g->min_member < 1 ? g->min_member : 1;
}

/* A gang for PodGroup @g with no members yet; @old: the dropped gang whose place it takes (its
 * lists' memory is kept and its generation moves on), or NULL for a new place. */
static struct gang gang_new(const struct gs_tenancy *t, const struct gs_podgroup_spec *g,
                            const struct gang *old)
{
    struct gang n = {.min = gang_min(t, g), .level_low = -1, .capped = -1};
    n.tasked = (int8_t)(g->ntasks > 0 && gang_on(t, g));
    if (old) {
        n.gen = old->gen + 1;
        n.members.v = old->members.v;
        n.members.cap = old->members.cap;
        n.workers.v = old->workers.v;
        n.workers.cap = old->workers.cap;
    }
    return n;
}

int gs__tn_podgroup(struct gs_tenancy *t, const struct gs_podgroup_spec *g)
{
    int32_t i = namemap_get(t->groups, g->ns, g->name);
    if (i >= 0) { /* a PodGroup made again: its pods keep their gang, with the new spec */
        *t->pgs[i] = *g;
        t->gangs[i].min = gang_min(t, g);
        t->gangs[i].tasked = (int8_t)(g->ntasks > 0 && gang_on(t, g));
        gs__tn_gang_changed(t, i);
        return i;
    }
    if (t->free_gangs.n > 0) { /* a dropped one's place, its lists' memory kept */
        i = t->free_gangs.v[t->free_gangs.n - 1];
        struct gang fresh = gang_new(t, g, &t->gangs[i]);
        *t->pgs[i] = *g; /* the map's keys point into it */
        if (namemap_intern(t->groups, t->pgs[i]->ns, t->pgs[i]->name, i) < 0)
            return -ENOMEM;
        t->free_gangs.n--;
        t->gangs[i] = fresh;
        return i;
    }
    size_t cg = t->cappgs;
    struct gs_podgroup_spec **v = gs_grow(t->pgs, &t->cappgs, t->npgs + 1, sizeof(*v), 16);
    if (!v)
        return -ENOMEM;
    t->pgs = v;
    struct gang *gv = gs_grow(t->gangs, &cg, t->npgs + 1, sizeof(*gv), 16);
    if (!gv)
        return -ENOMEM;
    t->gangs = gv;
    /* A copy of its own, which the name map points into: the caller's may go. */
    struct gs_podgroup_spec *copy = malloc(sizeof(*copy));
    if (!copy)
        return -ENOMEM;
    *copy = *g;
    i = (int32_t)t->npgs;
    if (namemap_intern(t->groups, copy->ns, copy->name, i) < 0) {
        free(copy);
        return -ENOMEM;
    }
    t->pgs[i] = copy;
    t->gangs[i] = gang_new(t, g, NULL);
    t->npgs++;
    return i;
}

void gs__tn_podgroup_forget(struct gs_tenancy *t, int32_t group)
{
    namemap_del(t->groups, t->pgs[group]->ns, t->pgs[group]->name);
    (void)gs__vec_push(&t->free_gangs, group); /* out of memory, it is only not reused */
}

int gs__tn_admission_init(struct gs_tenancy *t)
{
    const struct gs_policy *pol = t->pol;
    t->groups = calloc(1, sizeof(*t->groups));
    t->users = calloc(1, sizeof(*t->users));
    if (t->users)
        t->users->owns = 1;
    t->namespaces = calloc(1, sizeof(*t->namespaces));
    t->node_names = calloc(1, sizeof(*t->node_names));
    if (!t->groups || !t->users || !t->namespaces || !t->node_names)
        return -ENOMEM;
    for (size_t i = 0; i < pol->nnodes; i++) /* names are unique: the loader refuses others */
        if (namemap_intern(t->node_names, pol->nodes[i].name, NULL, (int32_t)i) < 0)
            return -ENOMEM;
    /* A namespace named by two tenants is an error of the policy's loader; the first wins. */
    for (size_t i = 0; i < pol->ntenants; i++)
        for (int k = 0; k < pol->tenants[i].nnamespaces && k < GS_SCN_NAMESPACES; k++)
            if (namemap_intern(t->namespaces, pol->tenants[i].namespaces[k], NULL, (int32_t)i) < 0)
                return -ENOMEM;
    for (size_t i = 0; i < pol->npodgroups; i++) /* after the namespaces: gang_min() reads them */
        if (gs__tn_podgroup(t, &pol->podgroups[i]) < 0)
            return -ENOMEM;
    int r = rq_index(t);
    return r < 0 ? r : make_levels(t);
}

void gs__tn_admission_free(struct gs_tenancy *t)
{
    for (size_t i = 0; i < t->npgs; i++) {
        free(t->gangs[i].members.v);
        free(t->gangs[i].workers.v);
        free(t->pgs[i]);
    }
    free(t->gangs);
    free(t->pgs);
    free(t->free_gangs.v);
    namemap_free(t->groups);
    namemap_free(t->users);
    namemap_free(t->namespaces);
    namemap_free(t->node_names);
    namemap_free(t->rq_nsmap);
    free(t->rq_groups);
    free(t->rq_idx);
    free(t->levels);
}

int gs__tn_admit(const struct gs_tenancy *t, struct rpod *p)
{
    const struct gs_pod_spec *sp = p->sp;
    int32_t tn = namemap_get(t->namespaces, sp->ns, NULL);
    p->tenant = tn >= 0 ? tn : (int32_t)t->pol->ntenants; /* unknown: one shared "other" */
    p->group = sp->group[0] ? namemap_get(t->groups, sp->ns, sp->group) : -1;
    p->wgroup = p->group;
    p->bucket = -1;
    p->user = -1;
    p->field_at = -1;
    admit_one(t, p);
    p->rate = gs__tn_work_rate(p);
    p->fit.rate = p->fit.whole ? 0 : p->rate;
    p->level = level_of(t->levels, t->nlevels, p->prio);
    p->shape = static_shape(p);
    return p->state == GS_POD_REJECTED;
}

int gs__tn_enroll(struct gs_tenancy *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    const char *tn =
        (size_t)p->tenant < t->pol->ntenants ? t->pol->tenants[p->tenant].name : p->sp->ns;
    size_t fresh = t->free_users.n ? (size_t)t->free_users.v[t->free_users.n - 1] : t->nusers;
    if (fresh == t->nusers) { /* room first: an id interned is one that exists */
        int32_t *v = gs_grow(t->user_running, &t->capusers, t->nusers + 1, sizeof(*v), 64);
        if (!v)
            return -ENOMEM;
        t->user_running = v;
        if (!(v = gs_grow(t->user_pods, &t->cap_user_pods, t->nusers + 1, sizeof(*v), 64)))
            return -ENOMEM;
        t->user_pods = v;
    }
    size_t known = t->users->n;
    int32_t u = namemap_intern(t->users, tn, p->sp->user, (int32_t)fresh);
    if (u < 0)
        return -ENOMEM;
    if (t->users->n > known) { /* a user no pod names now: counts from zero */
        t->user_running[u] = t->user_pods[u] = 0;
        if ((size_t)u < t->cap_user_said)
            t->user_said[u].running = 0;
        if (fresh == t->nusers)
            t->nusers++;
        else
            t->free_users.n--;
    }
    t->user_pods[u]++;
    p->user = u;
    if (p->wgroup >= 0 && gs__vec_push(&t->gangs[p->wgroup].workers, pod) < 0)
        return -ENOMEM;
    if (p->group < 0)
        return 0;
    struct gang *g = &t->gangs[p->group];
    if (gs__vec_push(&g->members, pod) < 0)
        return -ENOMEM;
    gs__tn_gang_changed(t, p->group);
    if (g->members.n == 1 || p->milli < g->milli_low) {
        t->vgang_stale |= g->members.n > 1;
        g->milli_low = (int32_t)p->milli;
    }
    g->cards += p->fit.whole ? p->fit.ncards : 0;
    g->level_low = p->level > g->level_low ? p->level : g->level_low;
    g->preemptible |= p->preemptible;
    if (!g->dirty) {
        g->dirty = 1;
        return gs__vec_push(&t->dirty_gangs, p->group);
    }
    return 0;
}

/* FNV-1a of @s into @key. */
static uint64_t fnv_str(uint64_t key, const char *s)
{
    for (; *s; s++)
        key = (key ^ (uint8_t)*s) * 1099511628211ULL;
    return (key ^ 0xff) * 1099511628211ULL;
}

/* @key with gang @g's tasks mixed in: two gangs alike but for them are not tried as one. */
static uint64_t tasks_key(const struct gs_tenancy *t, const struct gang *g,
                          const struct gs_podgroup_spec *pg, uint64_t key)
{
    for (int k = 0; k < pg->ntasks; k++)
        key = fnv_str(key ^ (uint64_t)pg->tasks[k].min, pg->tasks[k].name);
    for (size_t k = 0; k < g->members.n; k++)
        key = (key ^ t->pods[g->members.v[k]].task) * 1099511628211ULL;
    return key;
}

uint64_t gs__tn_gang_key(const struct gs_tenancy *t, const struct gang *g)
{
    uint64_t key = ((uint64_t)g->min * 1099511628211ULL) ^ g->members.n;
    for (size_t k = 0; k < g->members.n; k++)
        key = (key ^ t->pods[g->members.v[k]].shape) * 1099511628211ULL;
    const struct gs_podgroup_spec *pg = t->pgs[g - t->gangs];
    if (g->tasked) /* which member is of which task, and each task's minimum */
        key = tasks_key(t, g, pg, key);
    if (pg->min_gpu_milli || pg->min_cpu_milli || pg->min_memory_mib) /* its enqueue check */
        key = ((key ^ (uint64_t)pg->min_gpu_milli) * 1099511628211ULL ^
               (uint64_t)pg->min_cpu_milli ^ (uint64_t)pg->min_memory_mib << 20) *
              1099511628211ULL;
    return key;
}

void gs__tn_user_release(struct gs_tenancy *t, struct rpod *p)
{
    if (p->user < 0)
        return;
    int32_t u = p->user;
    p->user = -1;
    if (--t->user_pods[u] > 0)
        return;
    const char *tn =
        (size_t)p->tenant < t->pol->ntenants ? t->pol->tenants[p->tenant].name : p->sp->ns;
    namemap_del(t->users, tn, p->sp->user);
    (void)gs__vec_push(&t->free_users, u); /* out of memory, the id is only not reused */
}

int32_t gs__tn_user_of(const struct gs_tenancy *t, const struct rpod *p)
{
    const char *tn =
        (size_t)p->tenant < t->pol->ntenants ? t->pol->tenants[p->tenant].name : p->sp->ns;
    return namemap_get(t->users, tn, p->sp->user);
}

int32_t gs__tn_user_running(const struct gs_tenancy *t, const struct rpod *p)
{
    return p->user >= 0 ? t->user_running[p->user] : 0;
}
