/*
 * Admission of a scenario's pods: what each one asks of the devices, whose it is, and the
 * quotas that count it. Kubernetes admission (LimitRange defaults and bounds, ResourceQuota) holds
 * in every way; GPUQuota, tiers and step profiles only in the full scheme.
 */
#include "tenancy_impl.h"

#include "gpusched/diag.h"
#include "gpusched/grow.h"
#include "gpusched/mig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A string -> index map with open addressing; keys are borrowed. */
struct strmap {
    const char **k1, **k2;
    int32_t *val;
    size_t cap, n;
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

static int strmap_init(struct strmap *m, size_t n)
{
    m->cap = gs_grow_cap(0, 2 * n + 2, 16);
    m->n = 0;
    m->k1 = calloc(m->cap, sizeof(*m->k1));
    m->k2 = calloc(m->cap, sizeof(*m->k2));
    m->val = calloc(m->cap, sizeof(*m->val));
    return m->k1 && m->k2 && m->val ? 0 : -ENOMEM;
}

static void strmap_free(struct strmap *m)
{
    free(m->k1);
    free(m->k2);
    free(m->val);
}

/* The slot of (a, b): found, or the empty slot where it would go. */
static size_t strmap_slot(const struct strmap *m, const char *a, const char *b)
{
    size_t h = hash2(a, b) & (m->cap - 1);
    while (m->k1[h] && (strcmp(m->k1[h], a) || strcmp(m->k2[h], b ? b : "")))
        h = (h + 1) & (m->cap - 1);
    return h;
}

/* Index of (a, b), adding it with value @next when absent (the map is sized for every key). */
static int32_t strmap_intern(struct strmap *m, const char *a, const char *b, int32_t next)
{
    size_t h = strmap_slot(m, a, b);
    if (!m->k1[h]) {
        m->k1[h] = a;
        m->k2[h] = b ? b : "";
        m->val[h] = next;
        m->n++;
    }
    return m->val[h];
}

static int32_t strmap_get(const struct strmap *m, const char *a, const char *b)
{
    size_t h = strmap_slot(m, a, b);
    return m->k1[h] ? m->val[h] : -1;
}

int gs__tenant_is_hard(const struct gs_tsim *t, int32_t tenant)
{
    const struct gs_scenario *s = t->s;
    return tenant >= 0 && (size_t)tenant < s->ntenants && s->tenants[tenant].tier == GS_TIER_AZ &&
           s->tiers[GS_TIER_AZ].isolation == GS_ISOLATION_HARD;
}

static const struct gs_priority_class_spec *class_of(const struct gs_scenario *s, const char *name)
{
    for (size_t i = 0; name[0] && i < s->npriority_classes; i++)
        if (strcmp(s->priority_classes[i].name, name) == 0)
            return &s->priority_classes[i];
    return NULL;
}

/* The pod's step profile with its tenant's override applied, in @buf; NULL when it has none. */
static const struct gs_step_profile *profile_of(const struct gs_tsim *t, const struct rpod *p,
                                                struct gs_step_profile *buf)
{
    const struct gs_scenario *s = t->s;
    const char *tenant = (size_t)p->tenant < s->ntenants ? s->tenants[p->tenant].name : p->sp->ns;
    if (!p->sp->profile[0] || gs_step_profile_for(s, p->sp->profile, tenant, buf) < 0)
        return NULL;
    return buf;
}

/*
 * Priority: the pod's class, its PodGroup's, its step profile's, its tenant's, the default.
 * *@never is set when the class that gave it says preemptionPolicy: Never.
 */
static int32_t priority_of(const struct gs_tsim *t, const struct gs_scn_pod *sp, int32_t group,
                           int32_t tenant, const struct gs_step_profile *prof, uint8_t *never)
{
    const struct gs_scenario *s = t->s;
    const struct gs_priority_class_spec *c = class_of(s, sp->priority_class);
    if (!c && group >= 0)
        c = class_of(s, s->podgroups[group].priority_class);
    if (!c && t->way == GS_WAY_FULL && prof)
        return prof->priority;
    if (!c && tenant >= 0 && (size_t)tenant < s->ntenants) {
        const struct gs_tenant_spec *ts = &s->tenants[tenant];
        c = class_of(s, ts->priority_class);
        if (!c && ts->priority != GS_UNSET)
            return ts->priority;
    }
    for (size_t i = 0; !c && i < s->npriority_classes; i++)
        if (s->priority_classes[i].global_default)
            c = &s->priority_classes[i];
    *never = c && c->never_preempt;
    return c ? c->value : 0;
}

static const struct gs_limit_range_spec *limits_of(const struct gs_scenario *s, const char *ns)
{
    for (size_t i = 0; i < s->nlimit_ranges; i++)
        if (strcmp(s->limit_ranges[i].ns, ns) == 0)
            return &s->limit_ranges[i];
    return NULL;
}

/* One bound of a LimitRange; a violation is written to @why. */
static int bound(int64_t v, int64_t min, int64_t max, const char *res, const char *unit,
                 const struct gs_limit_range_spec *lr, char *why, size_t size)
{
    if (max != GS_UNSET && v > max) {
        gs__say(why, size, "LimitRange %s/%s: %s %lld%s > max %lld%s per Container", lr->ns,
                lr->name, res, (long long)v, unit, (long long)max, unit);
        return -1;
    }
    if (min != GS_UNSET && v < min) {
        gs__say(why, size, "LimitRange %s/%s: %s %lld%s < min %lld%s per Container", lr->ns,
                lr->name, res, (long long)v, unit, (long long)min, unit);
        return -1;
    }
    return 0;
}

static int64_t or_default(int64_t v, int64_t def)
{
    return v != GS_UNSET ? v : def;
}

/* Containers after LimitRange defaults, summed; -1 with @why when a bound is broken. */
static int containers(const struct gs_scenario *s, const struct gs_scn_pod *sp,
                      struct gs_scn_container *sum, char *why, size_t size)
{
    const struct gs_limit_range_spec *lr = limits_of(s, sp->ns);
    *sum = (struct gs_scn_container){0, GS_UNSET, GS_UNSET, 0, 0, "", 0};
    for (int i = 0; i < sp->ncontainers; i++) {
        struct gs_scn_container c = sp->containers[i];
        if (lr) {
            if (c.gpu == GS_UNSET && lr->default_gpu_milli != GS_UNSET)
                c.gpu = lr->default_gpu_milli / 1000;
            c.memory_mib = or_default(
                c.memory_mib, or_default(lr->default_memory_mib, lr->default_request_memory_mib));
            c.cpu_milli = or_default(
                c.cpu_milli, or_default(lr->default_cpu_milli, lr->default_request_cpu_milli));
            int64_t g = c.gpu == GS_UNSET ? 0 : c.gpu * 1000;
            if (bound(g / 1000, lr->min_gpu_milli == GS_UNSET ? GS_UNSET : lr->min_gpu_milli / 1000,
                      lr->max_gpu_milli == GS_UNSET ? GS_UNSET : lr->max_gpu_milli / 1000,
                      "nvidia.com/gpu", "", lr, why, size) ||
                bound(or_default(c.memory_mib, 0), lr->min_memory_mib, lr->max_memory_mib, "memory",
                      "Mi", lr, why, size) ||
                bound(or_default(c.cpu_milli, 0), lr->min_cpu_milli, lr->max_cpu_milli, "cpu", "m",
                      lr, why, size))
                return -1;
        }
        sum->gpu += c.gpu == GS_UNSET ? 0 : c.gpu;
        sum->gpu_shared += c.gpu_shared;
        if (c.gpumem_mib != GS_UNSET && c.gpumem_mib > sum->gpumem_mib)
            sum->gpumem_mib = c.gpumem_mib;
        if (c.gpucores != GS_UNSET && c.gpucores > sum->gpucores)
            sum->gpucores = c.gpucores;
        sum->cpu_milli += or_default(c.cpu_milli, 0);
        sum->memory_mib += or_default(c.memory_mib, 0);
        if (c.mig_profile[0] && sum->mig_profile[0]) {
            gs__say(why, size, "nvidia.com/mig-%s and nvidia.com/mig-%s: one MIG instance per pod",
                    sum->mig_profile, c.mig_profile);
            return -1;
        }
        if (c.mig_profile[0])
            memcpy(sum->mig_profile, c.mig_profile, sizeof(sum->mig_profile));
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
    int64_t small_mib; /* memory of the smallest card: turns a memory slice into a share */
    int64_t large_mib; /* memory of the largest card: a slice above it never fits */
};

static struct card_bounds bounds_of(const struct gs_tsim *t, uint32_t model_mask)
{
    struct card_bounds b = {0, 0, 0};
    for (size_t i = 0; i < t->s->ntemplates; i++) {
        const struct gs_node_template *tp = &t->s->templates[i];
        const struct gs_gpu_model *m = tp->model >= 0 ? gs_catalog_at(tp->model) : NULL;
        if (tp->gpus <= 0 || !m || (model_mask && !(model_mask & (1u << tp->model))))
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

static enum gs_tier tier_of(const struct gs_tsim *t, const struct gs_scn_pod *sp, int32_t tenant)
{
    if (t->way != GS_WAY_FULL)
        return GS_TIER_NONE;
    if (sp->tier != GS_TIER_NONE)
        return sp->tier;
    return tenant >= 0 && (size_t)tenant < t->s->ntenants ? t->s->tenants[tenant].tier
                                                          : GS_TIER_NONE;
}

/*
 * A MIG instance (`nvidia.com/mig-<profile>: 1`): in the full scheme, one instance of the
 * profile on a card of a model with MIG geometry; without MIG (exclusive and sharing ways), a
 * whole card, as a cluster without MIG would give it. Its share is the profile's compute slices
 * over the card's, on the first model of the cluster that has the profile.
 */
static int mig_demand(struct gs_tsim *t, struct rpod *p, const char *profile, char *why,
                      size_t size)
{
    struct gs_fit *f = &p->fit;
    int32_t share = -1;
    int exists = 0;
    for (size_t i = 0; share < 0 && i < t->s->ntemplates; i++) {
        const struct gs_gpu_model *m = gs_catalog_at(t->s->templates[i].model);
        int mm = m && t->s->templates[i].gpus > 0 ? gs_mig_model_find(m->name) : -1;
        int prof = mm >= 0 ? gs_mig_profile_find(mm, profile, -1) : -1;
        exists |= prof >= 0;
        if (prof >= 0 && gs_fleet_mig_allowed(t->s, mm, prof))
            share = gs_mig_profile_share_milli(mm, prof);
    }
    if (share < 0 && exists && t->s->mig_policy.strategy != GS_MIG_STRATEGY_MIXED) {
        gs__say(why, size,
                "nvidia.com/mig-%s: the GpuClusterPolicy's strategy %s advertises no "
                "nvidia.com/mig-* resources (mixed does)",
                profile, t->s->mig_policy.strategy == GS_MIG_STRATEGY_NONE ? "none" : "single");
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
    if (t->way != GS_WAY_FULL) {
        f->whole = 1;
        p->milli = 1000;
        p->gpus = 1;
        return 0;
    }
    snprintf(p->mig, sizeof(p->mig), "%s", profile);
    f->mig = p->mig;
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
static const struct gs_vgpu_class_spec *vgpu_class(const struct gs_scenario *s,
                                                   const struct gs_scn_pod *sp,
                                                   struct gs_scn_container *c, char *why,
                                                   size_t size)
{
    for (size_t i = 0; sp->vgpu_class[0] && i < s->nvgpu_classes; i++) {
        const struct gs_vgpu_class_spec *vc = &s->vgpu_classes[i];
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
static int timeslice_demand(struct gs_tsim *t, struct rpod *p, const struct gs_scn_container *c,
                            enum gs_tier tier, char *why, size_t size)
{
    struct gs_fit *f = &p->fit;
    int most = 0;
    int64_t large = 0;
    for (size_t i = 0; i < t->s->ntemplates; i++) {
        const struct gs_node_template *tp = &t->s->templates[i];
        const struct gs_gpu_model *m = tp->model >= 0 ? gs_catalog_at(tp->model) : NULL;
        if (tp->gpus <= 0 || !m || tp->timeslice_replicas <= 0 ||
            (p->sp->model_mask && !(p->sp->model_mask & (1u << tp->model))))
            continue;
        most = tp->gpus > most ? tp->gpus : most;
        large = m->memory_mib > large ? m->memory_mib : large;
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
    const struct gs_tier_spec *ts = tier ? &t->s->tiers[tier] : NULL;
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
 * the smallest card @b allows, rounded down; without gpumem, the memory of its compute share. Its
 * overcommit cap in the full way is its step profile's, else its tier's.
 */
static int slice_demand(struct gs_tsim *t, struct rpod *p, const struct gs_step_profile *prof,
                        const struct gs_tier_spec *ts, const struct gs_scn_container *c,
                        const struct card_bounds *b, char *why, size_t size)
{
    struct gs_fit *f = &p->fit;
    int64_t card = b->small_mib;
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
    f->mem_mib = c->gpumem_mib != GS_UNSET ? c->gpumem_mib : card * f->compute / 1000;
    if (f->mem_mib < 1)
        f->mem_mib = 1;
    f->overcommit = 1000;
    if (t->way == GS_WAY_FULL)
        f->overcommit = prof                ? prof->overcommit_milli
                        : ts && ts->defined ? ts->overcommit_milli
                                            : 1000;
    if (f->overcommit < 1000)
        f->overcommit = 1000;
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

/* The device demand of a pod; -1 with @why when it can never be admitted. */
static int demand(struct gs_tsim *t, struct rpod *p, const struct gs_step_profile *prof, char *why,
                  size_t size)
{
    const struct gs_scn_pod *sp = p->sp;
    struct gs_scn_container c;
    if (containers(t->s, sp, &c, why, size))
        return -1;
    const struct gs_vgpu_class_spec *vc = vgpu_class(t->s, sp, &c, why, size);
    if (sp->vgpu_class[0] && !vc)
        return -1;
    p->fit.cpu_milli = c.cpu_milli;
    p->fit.memory_mib = c.memory_mib;
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
    const struct gs_tier_spec *ts = tier ? &t->s->tiers[tier] : NULL;
    int may_share = t->way != GS_WAY_EXCLUSIVE && (!ts || !ts->defined || ts->sharing) &&
                    (t->way != GS_WAY_FULL || !prof || prof->gpu_share);
    if (wants_replicas(&c, ts, may_share))
        return timeslice_demand(t, p, &c, tier, why, size);
    struct card_bounds b = bounds_of(t, p->sp->model_mask);
    int fractional = c.gpumem_mib != GS_UNSET || c.gpucores != GS_UNSET;
    if (c.gpu > b.most_gpus && !(sp->same_card && fractional)) {
        gs__say(why, size, "nvidia.com/gpu %lld: the largest node this pod may use has %d GPUs",
                (long long)c.gpu, b.most_gpus);
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
    f->hard = ts && ts->defined && ts->isolation == GS_ISOLATION_HARD;
    p->gpus = c.gpu;
    if (t->way == GS_WAY_FULL && prof && prof->max_memory_mib != GS_UNSET &&
        c.gpumem_mib != GS_UNSET && c.gpumem_mib > prof->max_memory_mib) {
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
    on_one_card(p);
    return 0;
}

static int32_t queue_of(const struct gs_tsim *t, const struct gs_scn_pod *sp, int32_t group,
                        int32_t tenant)
{
    const struct gs_scenario *s = t->s;
    const char *want = group >= 0 && s->podgroups[group].queue[0]    ? s->podgroups[group].queue
                       : sp->queue[0]                                ? sp->queue
                       : tenant >= 0 && (size_t)tenant < s->ntenants ? s->tenants[tenant].name
                                                                     : sp->ns;
    for (size_t i = 0; i < s->nqueues; i++)
        if (strcmp(s->queues[i].name, want) == 0)
            return (int32_t)i;
    return (int32_t)s->nqueues; /* the implicit default queue */
}

static void quotas_of(const struct gs_tsim *t, struct rpod *p)
{
    const struct gs_scenario *s = t->s;
    int k = 0;
    p->rq[0] = p->rq[1] = -1;
    for (size_t i = 0; i < s->nrquotas && k < 2; i++) {
        const struct gs_rquota_spec *q = &s->rquotas[i];
        if (strcmp(q->ns, p->sp->ns))
            continue;
        int in_scope = q->nscope_classes == 0;
        for (int j = 0; j < q->nscope_classes; j++)
            in_scope |= strcmp(q->scope_classes[j], p->sp->priority_class) == 0;
        if (in_scope)
            p->rq[k++] = (int32_t)i;
    }
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
    return (int32_t)lo;
}

static int cmp_desc(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x < y) - (x > y);
}

/* Distinct priorities, highest first. */
static int make_levels(struct gs_tsim *t)
{
    t->levels = malloc((t->npods ? t->npods : 1) * sizeof(*t->levels));
    if (!t->levels)
        return -ENOMEM;
    for (size_t i = 0; i < t->npods; i++)
        t->levels[i] = t->pods[i].prio;
    qsort(t->levels, t->npods, sizeof(*t->levels), cmp_desc);
    size_t n = 0;
    for (size_t i = 0; i < t->npods; i++)
        if (n == 0 || t->levels[n - 1] != t->levels[i])
            t->levels[n++] = t->levels[i];
    t->nlevels = n ? n : 1;
    for (size_t i = 0; i < t->npods; i++)
        t->pods[i].level = level_of(t->levels, n, t->pods[i].prio);
    return 0;
}

/* Names interned: users (tenant/user) and workload kinds. */
static int intern_names(struct gs_tsim *t, struct strmap *groups)
{
    struct strmap users, kinds;
    int r = strmap_init(&users, t->npods) | strmap_init(&kinds, t->npods);
    t->kind_names = calloc(t->npods + 1, sizeof(*t->kind_names));
    if (r || !t->kind_names) {
        strmap_free(&users);
        strmap_free(&kinds);
        return -ENOMEM;
    }
    for (size_t i = 0; i < t->npods; i++) {
        struct rpod *p = &t->pods[i];
        const char *tn = p->tenant >= 0 && (size_t)p->tenant < t->s->ntenants
                             ? t->s->tenants[p->tenant].name
                             : p->sp->ns;
        p->user = strmap_intern(&users, tn, p->sp->user, (int32_t)users.n);
        const char *k = p->sp->workload[0] ? p->sp->workload : "-";
        p->kind = strmap_intern(&kinds, k, NULL, (int32_t)kinds.n);
        t->kind_names[p->kind] = k;
        p->group = p->sp->group[0] ? strmap_get(groups, p->sp->ns, p->sp->group) : -1;
    }
    t->nusers = users.n;
    t->nkinds = kinds.n;
    strmap_free(&users);
    strmap_free(&kinds);
    t->user_running = calloc(t->nusers + 1, sizeof(*t->user_running));
    return t->user_running ? 0 : -ENOMEM;
}

static void admit_one(struct gs_tsim *t, struct rpod *p)
{
    const struct gs_scenario *s = t->s;
    const struct gs_scn_pod *sp = p->sp;
    struct gs_step_profile buf;
    const struct gs_step_profile *prof = profile_of(t, p, &buf);
    p->queue = queue_of(t, sp, p->group, p->tenant);
    p->prio = priority_of(t, sp, p->group, p->tenant, prof, &p->never_preempt);
    p->preemptible = prof && t->way == GS_WAY_FULL ? (uint8_t)prof->preemptible : 1;
    p->util_pct = sp->util_pct == GS_UNSET ? 100 : sp->util_pct;
    p->node = -1;
    p->model = -1;
    p->use = -1;
    p->start = p->first_start = p->end = -1;
    p->submit = sp->arrival_us;
    quotas_of(t, p);
    if (sp->group[0] && p->group < 0 && t->way == GS_WAY_FULL) {
        gs__say(p->reason, sizeof(p->reason), "PodGroup %s/%s is not defined", sp->ns, sp->group);
        p->state = GS_POD_REJECTED;
        return;
    }
    if (t->way != GS_WAY_FULL)
        p->group = -1;
    if (demand(t, p, prof, p->reason, sizeof(p->reason)) < 0) {
        p->state = GS_POD_REJECTED;
        return;
    }
    const struct gs_tenant_spec *ts =
        p->tenant >= 0 && (size_t)p->tenant < s->ntenants ? &s->tenants[p->tenant] : NULL;
    if (t->way == GS_WAY_FULL && ts && ts->max_gpus_per_pod != GS_UNSET &&
        p->gpus > ts->max_gpus_per_pod) {
        gs__say(p->reason, sizeof(p->reason), "tenant %s: maxGPUsPerPod %d < nvidia.com/gpu %lld",
                ts->name, ts->max_gpus_per_pod, (long long)p->gpus);
        p->state = GS_POD_REJECTED;
    }
}

/*
 * What makes two pods alike for the scheduler (tenancy.c's pass memo and searches): the device
 * request, tenant, queue, priority and quotas. The user is left out, as maxPodsPerUser is
 * checked on its own, and so is the duration, which only a reservation looks at.
 */
static uint64_t static_shape(const struct rpod *p)
{
    const struct gs_fit *f = &p->fit;
    const int64_t v[] = {f->ncards,     f->whole,      f->compute,   f->mem_mib,
                         f->overcommit, f->model_mask, f->cpu_milli, f->memory_mib,
                         f->tenant,     f->hard,       f->tier,      p->queue,
                         p->level,      p->rq[0],      p->rq[1],     p->preemptible};
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        h = (h ^ (uint64_t)v[i]) * 1099511628211ULL;
    for (const char *c = p->mig; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    if (f->max_clients) /* only then: pods without a cap keep the shapes they always had */
        h = (h ^ (uint64_t)f->max_clients) * 1099511628211ULL;
    if (f->units > 1 || f->timeslice)
        h = (h ^ (uint64_t)(f->units * 2 + f->timeslice)) * 1099511628211ULL;
    return h;
}

int gs__tsim_admit(struct gs_tsim *t, struct gs_diag *d)
{
    const struct gs_scenario *s = t->s;
    struct strmap groups;
    if (strmap_init(&groups, s->npodgroups))
        return -ENOMEM;
    for (size_t i = 0; i < s->npodgroups; i++)
        strmap_intern(&groups, s->podgroups[i].ns, s->podgroups[i].name, (int32_t)i);
    t->gangs = calloc(s->npodgroups + 1, sizeof(*t->gangs));
    int r = t->gangs ? 0 : -ENOMEM;
    for (size_t i = 0; !r && i < t->npods; i++) {
        t->pods[i].sp = &s->pods[i];
        int tn = gs_scenario_tenant_of(s, s->pods[i].ns);
        t->pods[i].tenant = tn >= 0 ? tn : (int32_t)s->ntenants; /* unknown: one shared "other" */
    }
    if (!r)
        r = intern_names(t, &groups);
    strmap_free(&groups);
    for (size_t i = 0; !r && i < t->npods; i++) {
        struct rpod *p = &t->pods[i];
        admit_one(t, p);
        if (p->group >= 0 && p->state != GS_POD_REJECTED) {
            struct gang *g = &t->gangs[p->group];
            g->min = s->podgroups[p->group].min_member;
            g->cards += p->fit.whole ? p->fit.ncards : 0;
            r = gs__vec_push(&g->members, (int32_t)i);
        }
    }
    if (!r)
        r = make_levels(t);
    for (size_t i = 0; !r && i < t->npods; i++) {
        t->pods[i].shape = static_shape(&t->pods[i]);
        t->pods[i].bucket = -1;
    }
    for (size_t i = 0; !r && i < s->npodgroups; i++) {
        struct gang *g = &t->gangs[i];
        g->key = ((uint64_t)g->min * 1099511628211ULL) ^ g->members.n;
        g->level_low = -1;
        for (size_t k = 0; k < g->members.n; k++) {
            const struct rpod *m = &t->pods[g->members.v[k]];
            g->key = (g->key ^ m->shape) * 1099511628211ULL;
            g->level_low = m->level > g->level_low ? m->level : g->level_low;
            g->preemptible |= m->preemptible;
        }
    }
    (void)d;
    return r;
}

/* GPUQuota entry of @tenant for catalog @model, or NULL. */
static const struct gs_model_quota *model_quota(const struct gs_tsim *t, int32_t tenant, int model)
{
    if (tenant < 0 || (size_t)tenant >= t->s->ntenants)
        return NULL;
    return gs_tenant_model_quota(&t->s->tenants[tenant], model);
}

static void milli_str(char *buf, size_t size, int64_t m)
{
    gs__say(buf, size, "%lld.%lld", (long long)(m / 1000), (long long)(m % 1000 / 100));
}

/* GPUQuota: 1 dedicated, 2 shared, 0 with @why over quota. */
static int gpuquota_bucket(const struct gs_tsim *t, const struct rpod *p, int model, char *why,
                           size_t size)
{
    const struct gs_tenant_spec *ts = &t->s->tenants[p->tenant];
    const struct gs_model_quota *q = model_quota(t, p->tenant, model);
    if (!q) {
        gs__say(why, size, "tenant %s: no GPUQuota for %s", ts->name,
                gs_catalog_at(model) ? gs_catalog_at(model)->name : "this model");
        return 0;
    }
    size_t k = (size_t)p->tenant * GS_MODEL_MAX + (size_t)model;
    int64_t ded = t->ded_used[k], sh = t->sh_used[k];
    int bucket = gs_quota_bucket(q, ded, sh, p->fit.whole, p->milli);
    if (bucket)
        return bucket;
    char a[32], b[32], c[32];
    int over_total = ded + sh + p->milli > q->total_milli;
    int64_t used = over_total ? ded + sh : sh, cap = over_total ? q->total_milli : q->shared_milli;
    milli_str(a, sizeof(a), used);
    milli_str(b, sizeof(b), cap);
    milli_str(c, sizeof(c), p->milli);
    int n = gs__say(why, size, "tenant %s: %s %s %s/%s GPUs", ts->name, q->key,
                    over_total ? "total" : "shared", a, b);
    if (used < cap) /* room is left, only not enough for this pod */
        gs__say(why + n, size - (size_t)n, ", the pod asks %s", c);
    return 0;
}

static int rquota_ok(const struct gs_tsim *t, const struct rpod *p, char *why, size_t size)
{
    static const char *const res[5] = {"requests.nvidia.com/gpu", "requests.nvidia.com/gpumem",
                                       "requests.cpu", "requests.memory", "pods"};
    int64_t add[5] = {p->gpus, p->gpumem_mib, p->fit.cpu_milli, p->fit.memory_mib, 1};
    for (int k = 0; k < 2 && p->rq[k] >= 0; k++) {
        const struct gs_rquota_spec *q = &t->s->rquotas[p->rq[k]];
        int64_t hard[5] = {q->gpu_milli == GS_UNSET ? GS_UNSET : q->gpu_milli / 1000, q->gpumem_mib,
                           q->cpu_milli, q->memory_mib, q->pods};
        for (int r = 0; r < 5; r++)
            if (hard[r] != GS_UNSET && t->rq_used[p->rq[k]][r] + add[r] > hard[r]) {
                gs__say(why, size, "namespace %s: %s %lld+%lld > %lld (ResourceQuota %s)", q->ns,
                        res[r], (long long)t->rq_used[p->rq[k]][r], (long long)add[r],
                        (long long)hard[r], q->name);
                return 0;
            }
    }
    return 1;
}

int gs__quota_check(struct gs_tsim *t, struct rpod *p, int model, char *why, size_t size)
{
    if (!rquota_ok(t, p, why, size))
        return 0;
    if (t->way != GS_WAY_FULL)
        return 1;
    const struct gs_scenario *s = t->s;
    if ((size_t)p->queue < s->nqueues && s->queues[p->queue].cap_gpu_milli != GS_UNSET) {
        const struct gs_queue_spec *q = &s->queues[p->queue];
        int64_t cap = gs_queue_gpu_cap_milli(q, p->fit.whole);
        if (t->q_used[p->queue] + p->milli > cap) {
            char a[32], b[32];
            milli_str(a, sizeof(a), t->q_used[p->queue]);
            milli_str(b, sizeof(b), cap);
            gs__say(why, size, "queue %s: nvidia.com/gpu %s/%s capability", q->name, a, b);
            return 0;
        }
    }
    if ((size_t)p->tenant < s->ntenants) {
        const struct gs_tenant_spec *ts = &s->tenants[p->tenant];
        if (ts->max_pods_per_user != GS_UNSET && p->sp->user[0] &&
            t->user_running[p->user] >= ts->max_pods_per_user) {
            gs__say(why, size, "tenant %s: user %s has %d pods running (maxPodsPerUser %d)",
                    ts->name, p->sp->user[0] ? p->sp->user : "(none)", t->user_running[p->user],
                    ts->max_pods_per_user);
            return 0;
        }
        if (ts->has_quota && p->milli > 0 && model >= 0)
            return gpuquota_bucket(t, p, model, why, size) ? 1 : 0;
    }
    return 1;
}

void gs__quota_charge(struct gs_tsim *t, struct rpod *p, int model, int sign, int restore)
{
    int64_t add[5] = {p->gpus, p->gpumem_mib, p->fit.cpu_milli, p->fit.memory_mib, 1};
    for (int k = 0; k < 2 && p->rq[k] >= 0; k++)
        for (int r = 0; r < 5; r++)
            t->rq_used[p->rq[k]][r] += sign * add[r];
    t->user_running[p->user] += sign;
    t->q_used[p->queue] += sign * p->milli;
    if (sign > 0 && !restore) {
        char why[8];
        p->model = model;
        p->charged = 0;
        if (t->way == GS_WAY_FULL && (size_t)p->tenant < t->s->ntenants &&
            t->s->tenants[p->tenant].has_quota && p->milli > 0 && model >= 0)
            p->charged = (int8_t)gpuquota_bucket(t, p, model, why, sizeof(why));
    }
    if (p->charged && p->model >= 0) {
        size_t k = (size_t)p->tenant * GS_MODEL_MAX + (size_t)p->model;
        (p->charged == 1 ? t->ded_used : t->sh_used)[k] += sign * p->milli;
    }
}
