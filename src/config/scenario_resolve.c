/*
 * gs_scenario_resolve(): cross-references, once every file is loaded; the contract is in
 * gpusched/scenario.h.
 *
 * Namespaces to tenants: a tenant's namespaces are those its GPUQuota (or policy entry) names; a
 * tenant that names none owns the namespace of its own name, unless another tenant claims it; a
 * namespace of a pod or PodGroup that no tenant owns is a tenant of its own. A namespace owned by
 * two tenants is an error. Pods' references (PodGroup, step profile, VirtualGPUClass,
 * PriorityClass, Queue) must resolve: they decide how a pod runs; a pod asks by VirtualGPUClass
 * or by nvidia.com/gpumem and gpucores, never both. References that only describe policy (a
 * PodGroup's queue or PriorityClass, a quota's scope) are warnings, as are the policy's
 * disagreements: a GPUQuota tenant missing from the topology policy or the other way round, and a
 * LimitRange that caps a container below its tenant's maxGPUsPerPod.
 */
#include "scenario_impl.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/quantity.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AT_MAX 160

/* Built into every cluster: Kubernetes' system classes and Volcano's default queue. */
static bool builtin_class(const char *name)
{
    const struct gs_priority_class_spec *b;
    for (size_t i = 0; (b = gs_priority_class_builtin(i)); i++)
        if (strcmp(name, b->name) == 0)
            return true;
    return false;
}

static bool class_known(struct gs_scenario *s, const char *name)
{
    return !*name || builtin_class(name) || gs__scn_find(s, GS__K_PRIORITY_CLASS, "", name) >= 0;
}

static bool queue_known(struct gs_scenario *s, const char *name)
{
    return !*name || strcmp(name, "default") == 0 || gs__scn_find(s, GS__K_QUEUE, "", name) >= 0;
}

static int own_ns(struct gs_scenario *s, size_t t, int k, struct gs_diag *d)
{
    struct gs_scn_priv *p = s->priv;
    const char *ns = s->policy.tenants[t].namespaces[k];
    uint32_t h = gs__nidx_hash("", ns);
    char a[AT_MAX], b[AT_MAX];
    long v = gs__nidx_find(&p->ns_tenant, h, gs__scn_ns_key, s, "", ns);
    if (v >= 0 && (size_t)v / GS_SCN_NAMESPACES != t)
        return gs_diag_error(
            d, "%s: namespace %s belongs to tenant %s and to tenant %s (%s)",
            gs__scn_where(&s->policy.tenants[t].src, a, sizeof(a)), ns, s->policy.tenants[t].name,
            s->policy.tenants[v / GS_SCN_NAMESPACES].name,
            gs__scn_where(&s->policy.tenants[v / GS_SCN_NAMESPACES].src, b, sizeof(b)));
    if (v < 0 && gs__nidx_add(&p->ns_tenant, h, (uint32_t)(t * GS_SCN_NAMESPACES + (size_t)k)))
        return gs_diag_error_code(d, -ENOMEM, "out of memory");
    return 0;
}

/* map_namespaces() - the ns -> tenant index over the tenants' own namespaces. */
static int map_namespaces(struct gs_scenario *s, struct gs_diag *d)
{
    struct gs_scn_priv *p = s->priv;
    char at[AT_MAX];
    gs__nidx_clear(&p->ns_tenant);
    p->ns_tenant_for = (size_t)-1;
    if (s->policy.ntenants > UINT32_MAX / GS_SCN_NAMESPACES)
        return gs_diag_error_code(d, -E2BIG, "more than %u tenants",
                                  UINT32_MAX / GS_SCN_NAMESPACES);
    for (size_t t = 0; t < s->policy.ntenants; t++) {
        struct gs_tenant_spec *ts = &s->policy.tenants[t];
        for (int i = 0; i < ts->nquotas; i++) {
            if (ts->quotas[i].model == GS_UNSET)
                ts->quotas[i].model = gs_catalog_find_product(ts->quotas[i].key);
            if (ts->quotas[i].model < 0)
                return gs_diag_error(d, "%s: tenant %s: quota key \"%s\" names no GPU model",
                                     gs__scn_where(&ts->src, at, sizeof(at)), ts->name,
                                     ts->quotas[i].key);
        }
        for (int k = 0; k < ts->nnamespaces && k < GS_SCN_NAMESPACES; k++) {
            int rc = own_ns(s, t, k, d);
            if (rc)
                return rc;
        }
    }
    p->ns_tenant_for = s->policy.ntenants;            /* complete for the namespaces named so far */
    for (size_t t = 0; t < s->policy.ntenants; t++) { /* a tenant naming none owns its own name */
        struct gs_tenant_spec *ts = &s->policy.tenants[t];
        if (ts->nnamespaces || gs_scenario_tenant_of(s, ts->name) >= 0)
            continue;
        memcpy(ts->namespaces[0], ts->name, sizeof(ts->name));
        ts->nnamespaces = 1;
        int rc = own_ns(s, t, 0, d);
        if (rc)
            return rc;
    }
    return 0;
}

/* ns_tenant() - make namespace @ns, used at @src, a tenant of its own unless one owns it. */
static int ns_tenant(struct gs_scenario *s, const char *ns, const struct gs_scn_src *src,
                     struct gs_diag *d)
{
    struct gs_scn_priv *p = s->priv;
    char at[AT_MAX];
    if (gs_scenario_tenant_of(s, ns) >= 0)
        return 0;
    for (size_t i = 0; i < s->policy.ntenants; i++) /* one name, one tenant */
        if (strcmp(s->policy.tenants[i].name, ns) == 0) {
            char own[AT_MAX];
            return gs_diag_error(d,
                                 "%s: namespace %s is no tenant's, and would be a tenant of its "
                                 "own named %s, but tenant %s (%s) does not list it among its "
                                 "namespaces: list it there, or use a namespace of that tenant",
                                 gs__scn_where(src, at, sizeof(at)), ns, ns, ns,
                                 gs__scn_where(&s->policy.tenants[i].src, own, sizeof(own)));
        }
    struct gs_tenant_spec t;
    gs_tenant_spec_init(&t, ns);
    memcpy(t.namespaces[0], ns, sizeof(t.name));
    t.nnamespaces = 1;
    t.src = *src;
    long i = gs__scn_add(s, GS__K_TENANT, &t);
    if (i == -E2BIG)
        return gs_diag_error_code(d, -E2BIG, "%s: namespace %s: more than %zu tenants",
                                  gs__scn_where(src, at, sizeof(at)), ns,
                                  gs__scn_kind_max(GS__K_TENANT));
    if (i < 0)
        return gs_diag_error_code(d, -ENOMEM, "out of memory");
    if (gs__nidx_add(&p->ns_tenant, gs__nidx_hash("", ns), (uint32_t)(i * GS_SCN_NAMESPACES)))
        return gs_diag_error_code(d, -ENOMEM, "out of memory");
    p->ns_tenant_for = s->policy.ntenants;
    return 0;
}

/* node_card() - node @name of the Cluster, and its card @gpu when >= 0, named by entry @src of
 * @list: its index into *@index. */
static int node_card(const struct gs_scenario *s, const char *name, int32_t gpu,
                     const struct gs_scn_src *src, const char *list, int32_t *index,
                     struct gs_diag *d)
{
    char at[AT_MAX];
    for (size_t k = 0; k < s->policy.nnodes; k++) {
        if (strcmp(s->policy.nodes[k].name, name))
            continue;
        int gpus = s->policy.templates[s->policy.nodes[k].template_index].gpus;
        if (gpu >= gpus)
            return gs_diag_error(d, "%s: %s: node %s has %d cards, no gpu %d",
                                 gs__scn_where(src, at, sizeof(at)), list, name, gpus, gpu);
        *index = (int32_t)k;
        return 0;
    }
    return gs_diag_error(d, "%s: %s: node \"%s\" is not a node of the Cluster",
                         gs__scn_where(src, at, sizeof(at)), list, name);
}

static const char *failure_list(const struct gs_node_failure *f)
{
    return f->gpu < 0 ? "nodeFailures" : f->xid == GS_XID_HELD ? "cardHolds" : "cardFailures";
}

static int64_t failure_end(const struct gs_node_failure *f)
{
    return f->restore_us == GS_UNSET ? INT64_MAX : f->restore_us;
}

/* By node, card and start; ties in the order given. */
static int cmp_failure(const void *a, const void *b)
{
    const struct gs_node_failure *x = *(const struct gs_node_failure *const *)a,
                                 *y = *(const struct gs_node_failure *const *)b;
    int c = strcmp(x->node, y->node);
    if (c)
        return c;
    if (x->gpu != y->gpu)
        return x->gpu < y->gpu ? -1 : 1;
    if (x->at_us != y->at_us)
        return x->at_us < y->at_us ? -1 : 1;
    return (x > y) - (x < y);
}

/*
 * failure_overlaps() - no two of a Simulation's nodeFailures (cardFailures, cardHolds) entries
 * hold one node (one card) down at once. Sorted by node, card and start, an entry overlaps an
 * earlier one exactly when it starts before the latest end seen on its node or card: O(n log n),
 * where every pair took 11 s for 80,000 entries. Of the overlapping pairs found, the one whose
 * later entry comes first in the file is named.
 */
static int failure_overlaps(const struct gs_scenario *s, struct gs_diag *d)
{
    size_t n = s->sim.nfailures;
    const struct gs_node_failure **v = malloc((n + 1) * sizeof(*v)), *bad = NULL, *with = NULL,
                                 *open = NULL;
    if (!v)
        return gs_diag_error_code(d, -ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        v[i] = &s->sim.failures[i];
    qsort(v, n, sizeof(*v), cmp_failure);
    for (size_t i = 0; i < n; i++) {
        if (open && (strcmp(open->node, v[i]->node) || open->gpu != v[i]->gpu))
            open = NULL;
        const struct gs_node_failure *late = open && v[i] > open ? v[i] : open;
        if (open && v[i]->at_us < failure_end(open) && (!bad || late < bad)) {
            bad = late;
            with = late == v[i] ? open : v[i];
        }
        if (!open || failure_end(v[i]) > failure_end(open))
            open = v[i];
    }
    free(v);
    if (!bad)
        return 0;
    char at[AT_MAX], other[AT_MAX];
    return gs_diag_error(d, "%s: %s: %s %s is down or held then already (%s)",
                         gs__scn_where(&bad->src, at, sizeof(at)), failure_list(bad),
                         bad->gpu < 0 ? "node" : "a card of node", bad->node,
                         gs__scn_where(&with->src, other, sizeof(other)));
}

/* failure_node() - the node (and card) a Simulation's nodeFailures (cardFailures, cardHolds)
 * entry names must be a Cluster's. */
static int failure_node(struct gs_scenario *s, struct gs_node_failure *f, struct gs_diag *d)
{
    return node_card(s, f->node, f->gpu, &f->src, failure_list(f), &f->index, d);
}

/* card_node() - a cardModes.cards entry names a node of the Cluster and one of its cards, and
 * a time no later than the snapshot's now. */
static int card_node(struct gs_scenario *s, struct gs_card_history *e, struct gs_diag *d)
{
    char at[AT_MAX];
    if (s->sim.now_us != GS_UNSET && e->since_us > s->sim.now_us)
        return gs_diag_error(d, "%s: cardModes.cards: since is after now",
                             gs__scn_where(&e->src, at, sizeof(at)));
    return node_card(s, e->node, e->gpu, &e->src, "cardModes.cards", &e->index, d);
}

/* " (did you mean \"NAME\"?)" for the defined Queue (@queue) or PriorityClass nearest @name,
 * into @buf (@size bytes); "" when none is near. */
static void nearest_defined(const struct gs_scenario *s, int queue, const char *name, char *buf,
                            size_t size)
{
    size_t n = queue ? s->policy.nqueues : s->policy.npriority_classes;
    const char **names = malloc((n + 1) * sizeof(*names));
    if (!names)
        return;
    for (size_t i = 0; i < n; i++)
        names[i] = queue ? s->policy.queues[i].name : s->policy.priority_classes[i].name;
    names[n] = "default"; /* a Queue taken without being defined */
    gs__hint(name, names, (int)(n + (size_t)queue), buf, size);
    free(names);
}

/* pod_refs() - a pod's group, profile, PriorityClass and queue must exist, and so must the
 * queue and PriorityClass its PodGroup names: Volcano's admission refuses such a PodGroup, as
 * gpuschedd does, so a run that put its members in `default` would schedule what never runs. */
static int pod_refs(struct gs_scenario *s, const struct gs_pod_spec *p, struct gs_diag *d)
{
    char at[AT_MAX];
    const char *what = NULL, *name = NULL;
    long g = *p->group ? gs__scn_find(s, GS__K_PODGROUP, p->ns, p->group) : -1;
    const struct gs_podgroup_spec *pg = g >= 0 ? &s->policy.podgroups[g] : NULL;
    char by[GS_SCN_NAME_MAX + 96];
    if (*p->group && !pg) { /* named by an annotation or a label (scenario_pod.c) */
        const char *key =
            p->group_key ? p->group_key : "metadata.annotations.scheduling.k8s.io/group-name";
        int label = strncmp(key, "metadata.labels.", 16) == 0;
        snprintf(by, sizeof(by), "PodGroup (%s %s)", label ? "label" : "annotation",
                 strchr(key + strlen("metadata."), '.') + 1);
        what = by, name = p->group;
    } else if (pg && !class_known(s, pg->priority_class))
        what = "PriorityClass (its PodGroup's spec.priorityClassName)", name = pg->priority_class;
    else if (*p->profile && gs__scn_find(s, GS__K_PROFILE, "", p->profile) < 0)
        what = "step profile (annotation gpusched.io/profile)", name = p->profile;
    else if (*p->vgpu_class && gs__scn_find(s, GS__K_VGPU_CLASS, "", p->vgpu_class) < 0)
        what = "VirtualGPUClass (annotation gpusched.io/vgpu-class)", name = p->vgpu_class;
    else if (!class_known(s, p->priority_class))
        what = "PriorityClass (spec.priorityClassName)", name = p->priority_class;
    else if (!queue_known(s, p->queue))
        what = "Queue (annotation scheduling.volcano.sh/queue-name)", name = p->queue;
    char why[GS_DIAG_MSG_MAX];
    if (!what && !gs_policy_scheduler_takes(&s->policy, p->scheduler, why, sizeof(why)))
        return gs_diag_error(d, "%s: pod %s/%s: spec.%s",
                             gs__scn_where(&p->scheduler_src, at, sizeof(at)), p->ns, p->name, why);
    for (int i = 0; !what && *p->vgpu_class && i < p->ncontainers; i++)
        if (p->containers[i].gpumem_mib != GS_UNSET || p->containers[i].gpucores != GS_UNSET)
            return gs_diag_error(d,
                                 "%s: pod %s/%s: VirtualGPUClass %s and nvidia.com/gpumem or "
                                 "nvidia.com/gpucores: a pod asks by class or by amount, not both",
                                 gs__scn_where(&p->src, at, sizeof(at)), p->ns, p->name,
                                 p->vgpu_class);
    if (!what)
        return 0;
    char near[GS_SCN_NAME_MAX + 32] = "";
    if (name == p->queue || name == p->priority_class)
        nearest_defined(s, name == p->queue, name, near, sizeof(near));
    return gs_diag_error(d, "%s: pod %s/%s: %s \"%s\" is not defined%s",
                         gs__scn_where(&p->src, at, sizeof(at)), p->ns, p->name, what, name, near);
}

/* profile_overrides() - a tenant's override changes fields of a step profile the profiles list
 * defines: one of a profile it lacks (a misspelt name) would apply to no pod, silently; one for a
 * tenant no document defines applies to none either (warned: a policy may be kept for tenants
 * this scenario lacks). */
static int profile_overrides(struct gs_scenario *s, struct gs_diag *d)
{
    char at[AT_MAX];
    for (size_t i = 0; i < s->policy.nprofiles; i++) {
        const struct gs_step_profile *o = &s->policy.profiles[i];
        size_t t = 0;
        while (*o->tenant && t < s->policy.ntenants && strcmp(s->policy.tenants[t].name, o->tenant))
            t++;
        if (*o->tenant && gs__scn_find(s, GS__K_PROFILE, "", o->name) < 0)
            return gs_diag_error(d,
                                 "%s: tenantOverrides.%s.%s: step profile \"%s\" is not in "
                                 "profiles (an override changes a profile's fields)",
                                 gs__scn_where(&o->src, at, sizeof(at)), o->tenant, o->name,
                                 o->name);
        if (*o->tenant && t == s->policy.ntenants)
            gs_diag_warn(d,
                         "%s: tenantOverrides.%s.%s: no document defines tenant %s (a GPUQuota, "
                         "the topology-gpu-policy's tenants, a namespace of a pod): it applies to "
                         "no pod",
                         gs__scn_where(&o->src, at, sizeof(at)), o->tenant, o->name, o->tenant);
    }
    return 0;
}

static void warn_policy_tenants(struct gs_scenario *s, struct gs_diag *d)
{
    char at[AT_MAX], pol[AT_MAX];
    bool any_quota = false;
    if (!s->priv->policy_tenants)
        return;
    gs__scn_where(&s->priv->policy_src, pol, sizeof(pol));
    for (size_t t = 0; t < s->policy.ntenants; t++)
        any_quota |= s->policy.tenants[t].has_quota != 0;
    for (size_t t = 0; t < s->policy.ntenants; t++) {
        const struct gs_tenant_spec *ts = &s->policy.tenants[t];
        if (ts->has_quota && !ts->in_policy)
            gs_diag_warn(d,
                         "%s: GPUQuota tenant %s is not in the tenants: map of the "
                         "topology-gpu-policy (%s): it gets no topology tier or priority there",
                         gs__scn_where(&ts->src, at, sizeof(at)), ts->name, pol);
        else if (any_quota && ts->in_policy && !ts->has_quota)
            gs_diag_warn(d,
                         "%s: topology-gpu-policy tenant %s has no GPUQuota: no per-model quota "
                         "applies to it",
                         gs__scn_where(&ts->src, at, sizeof(at)), ts->name);
    }
}

/*
 * gpu_counts() - a tenant's gpuCount (the topology-gpu-policy's tenants: map) is its dedicated
 * cards, as the tenants' day writes it: with a GPUQuota it must be what the quota's dedicated
 * cards add up to, else the two say different things (an error); without one nothing holds
 * those cards for it (a warning: the seed's policy names tenants no GPUQuota does).
 */
static int gpu_counts(struct gs_scenario *s, struct gs_diag *d)
{
    char at[AT_MAX], a[2][GS_QUANTITY_STR_MAX];
    for (size_t t = 0; t < s->policy.ntenants; t++) {
        const struct gs_tenant_spec *ts = &s->policy.tenants[t];
        int64_t ded = 0;
        if (ts->gpu_count_milli == GS_UNSET)
            continue;
        for (int q = 0; q < ts->nquotas; q++)
            ded += ts->quotas[q].dedicated_milli;
        gs_quantity_format_milli(ts->gpu_count_milli, a[0], sizeof(a[0]));
        gs_quantity_format_milli(ded, a[1], sizeof(a[1]));
        if (!ts->has_quota)
            gs_diag_warn(d,
                         "%s: tenant %s: gpuCount %s is its dedicated cards, but no GPUQuota names "
                         "it: nothing holds them for it (write a GPUQuota with dedicated cards)",
                         gs__scn_where(&ts->src, at, sizeof(at)), ts->name, a[0]);
        else if (ded != ts->gpu_count_milli)
            return gs_diag_error(d,
                                 "%s: tenant %s: gpuCount %s is its dedicated cards, and its "
                                 "GPUQuota's dedicated add up to %s: give one number",
                                 gs__scn_where(&ts->src, at, sizeof(at)), ts->name, a[0], a[1]);
    }
    return 0;
}

/* warn_dedicated() - a model whose tenants' dedicated cards outnumber the cluster's cards of it:
 * those guarantees cannot all hold at once. A warning, as neither a Kueue ClusterQueue's nominal
 * quota nor a Volcano queue's guarantee is checked against capacity; each tenant is named where
 * its GPUQuota names it. Without nodes (policies validated alone) there is nothing to weigh. */
static void warn_dedicated(struct gs_scenario *s, struct gs_diag *d)
{
    int64_t cards[GS_MODEL_MAX] = {0}, ded[GS_MODEL_MAX] = {0};
    if (!s->policy.nnodes) /* policies checked without their cluster */
        return;
    for (size_t i = 0; i < s->policy.nnodes; i++) {
        const struct gs_node_template *tp = &s->policy.templates[s->policy.nodes[i].template_index];
        if (tp->model >= 0 && tp->model < GS_MODEL_MAX)
            cards[tp->model] += tp->gpus;
    }
    for (size_t t = 0; t < s->policy.ntenants; t++)
        for (int q = 0; q < s->policy.tenants[t].nquotas; q++) {
            const struct gs_model_quota *mq = &s->policy.tenants[t].quotas[q];
            if (mq->model >= 0 && mq->model < GS_MODEL_MAX)
                ded[mq->model] += mq->dedicated_milli;
        }
    for (size_t t = 0; t < s->policy.ntenants; t++)
        for (int q = 0; q < s->policy.tenants[t].nquotas; q++) {
            const struct gs_model_quota *mq = &s->policy.tenants[t].quotas[q];
            char at[AT_MAX];
            int m = mq->model;
            if (m < 0 || m >= GS_MODEL_MAX || !mq->dedicated_milli || ded[m] <= cards[m] * 1000)
                continue;
            char own[32], all[32];
            if (!cards[m]) { /* no tenant could have them, whatever the others dedicate */
                gs_diag_warn(d,
                             "%s: GPUQuota tenant %s: quotas.%s.dedicated is %s, and the cluster "
                             "has no %s GPU: none can be given",
                             gs__scn_where(&s->policy.tenants[t].src, at, sizeof(at)),
                             s->policy.tenants[t].name, mq->key,
                             gs__scn_gpus(mq->dedicated_milli, own, sizeof(own)),
                             gs_catalog_at(m)->name);
                continue;
            }
            gs_diag_warn(d,
                         "%s: GPUQuota tenant %s: quotas.%s.dedicated is %s of the %s %s GPUs the "
                         "GPUQuotas dedicate, and the cluster has %lld: not every tenant can have "
                         "its dedicated cards at once",
                         gs__scn_where(&s->policy.tenants[t].src, at, sizeof(at)),
                         s->policy.tenants[t].name, mq->key,
                         gs__scn_gpus(mq->dedicated_milli, own, sizeof(own)),
                         gs__scn_gpus(ded[m], all, sizeof(all)), gs_catalog_at(m)->name,
                         (long long)cards[m]);
        }
}

/* A PodGroup names a Queue that exists: Volcano's admission refuses one that does not (its
 * PriorityClass is looked up as its members are admitted: pod_refs()). Return: 0; -EINVAL. */
static int podgroup_queue(struct gs_scenario *s, const struct gs_podgroup_spec *g,
                          struct gs_diag *d)
{
    char at[AT_MAX];
    if (queue_known(s, g->queue))
        return 0;
    return gs_diag_error(d, "%s: PodGroup %s/%s: spec.queue \"%s\" is not defined",
                         gs__scn_where(&g->src, at, sizeof(at)), g->ns, g->name, g->queue);
}

static void warn_refs(struct gs_scenario *s, struct gs_diag *d)
{
    char at[AT_MAX];
    /* a gang with fewer pods than minMember never starts: its members wait to the end */
    int32_t *members = calloc(s->policy.npodgroups + 1, sizeof(*members));
    for (size_t i = 0; members && i < s->npods; i++) {
        long g = *s->pods[i].group
                     ? gs__scn_find(s, GS__K_PODGROUP, s->pods[i].ns, s->pods[i].group)
                     : -1;
        members[g >= 0 ? g : (long)s->policy.npodgroups]++;
    }
    for (size_t i = 0; i < s->policy.npodgroups; i++) {
        const struct gs_podgroup_spec *g = &s->policy.podgroups[i];
        long tn = gs_scenario_tenant_of(s, g->ns); /* gangScheduling false: one by one */
        int gang = tn < 0 || s->policy.tenants[tn].gang_scheduling;
        if (gang && members && members[i] > 0 && members[i] < g->min_member)
            gs_diag_warn(d,
                         "%s: PodGroup %s/%s has minMember %d and %d pods of the scenario: they "
                         "wait to the end unless more join it",
                         gs__scn_where(&g->src, at, sizeof(at)), g->ns, g->name, g->min_member,
                         members[i]);
        if (!class_known(s, g->priority_class))
            gs_diag_warn(d, "%s: PodGroup %s/%s names PriorityClass \"%s\", which is not defined",
                         gs__scn_where(&g->src, at, sizeof(at)), g->ns, g->name, g->priority_class);
    }
    for (size_t i = 0; i < s->policy.nrquotas; i++)
        for (int k = 0; k < s->policy.rquotas[i].nscope_classes; k++)
            if (!class_known(s, s->policy.rquotas[i].scope_classes[k]))
                gs_diag_warn(d,
                             "%s: ResourceQuota %s/%s is scoped to PriorityClass \"%s\", which "
                             "is not defined: no pod of that class can exist",
                             gs__scn_where(&s->policy.rquotas[i].src, at, sizeof(at)),
                             s->policy.rquotas[i].ns, s->policy.rquotas[i].name,
                             s->policy.rquotas[i].scope_classes[k]);
    for (size_t t = 0; t < s->policy.ntenants; t++)
        if (s->policy.tenants[t].has_quota && !class_known(s, s->policy.tenants[t].priority_class))
            gs_diag_warn(d,
                         "%s: GPUQuota of tenant %s names PriorityClass \"%s\", which is not "
                         "defined",
                         gs__scn_where(&s->policy.tenants[t].src, at, sizeof(at)),
                         s->policy.tenants[t].name, s->policy.tenants[t].priority_class);
    free(members);
}

/* warn_limit_ranges() - a LimitRange cap per container below the tenant's per-pod cap wins; a
 * max of nvidia.com/gpu without a default is every container's default (the API server defaults
 * a LimitRange's default to its max: SetDefaults_LimitRangeItem). */
static void warn_limit_ranges(struct gs_scenario *s, struct gs_diag *d)
{
    char at[AT_MAX], q[AT_MAX];
    for (size_t i = 0; i < s->policy.nlimit_ranges; i++) {
        const struct gs_limit_range_spec *r = &s->policy.limit_ranges[i];
        if (r->max_gpu_milli > 0 && r->default_gpu_milli == GS_UNSET)
            gs_diag_warn(d,
                         "%s: LimitRange %s/%s: max nvidia.com/gpu %lld and no default: Kubernetes "
                         "makes the max the default, so every container that asks no "
                         "nvidia.com/gpu gets %lld (give default: {nvidia.com/gpu: 0})",
                         gs__scn_where(&r->src, at, sizeof(at)), r->ns, r->name,
                         (long long)(r->max_gpu_milli / 1000),
                         (long long)(r->max_gpu_milli / 1000));
        int t = gs_scenario_tenant_of(s, r->ns);
        if (r->max_gpu_milli == GS_UNSET || t < 0 ||
            s->policy.tenants[t].max_gpus_per_pod == GS_UNSET)
            continue;
        const struct gs_tenant_spec *ts = &s->policy.tenants[t];
        if (r->max_gpu_milli >= (int64_t)ts->max_gpus_per_pod * 1000)
            continue;
        gs_diag_warn(d,
                     "%s: LimitRange %s/%s caps a container at %lld GPUs, below maxGPUsPerPod "
                     "%d of the GPUQuota of tenant %s (%s): the LimitRange wins for "
                     "single-container pods",
                     gs__scn_where(&r->src, at, sizeof(at)), r->ns, r->name,
                     (long long)(r->max_gpu_milli / 1000), ts->max_gpus_per_pod, ts->name,
                     gs__scn_where(&ts->src, q, sizeof(q)));
    }
}

struct named {
    const char *name;
    int32_t index;
};

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

/* time_error() - the error of pod @p's time annotation @k (GS_AT_*), @t us, which is @why,
 * @bound us: named where its value is. Return: -EINVAL with @d set. */
static int time_error(const struct gs_pod_spec *p, int k, int64_t t, const char *why, int64_t bound,
                      struct gs_diag *d)
{
    static const char *const names[GS_AT_TIMES] = {"arrival", "start", "done", "saved",
                                                   "first-start"};
    char at[AT_MAX];
    struct gs_scn_src src = p->src;
    if (p->times_line[k]) {
        src.line = p->times_line[k];
        src.col = p->times_col[k];
    }
    return gs_diag_error(d, "%s: pod %s/%s: sim.gpusched.io/%s %" PRId64 "us is %s, %" PRId64 "us",
                         gs__scn_where(&src, at, sizeof(at)), p->ns, p->name, names[k], t, why,
                         bound);
}

/* placed_times() - a running pod @p of a snapshot whose now is @now arrived by its start, started
 * by now and has done at most the time since it arrived (a slowed pod does less; the daemon's
 * start may be stamped a few microseconds after the pass that began the work): what the daemon's
 * clock allows. Return: 0; -EINVAL with @d set. */
static int placed_times(const struct gs_pod_spec *p, int64_t now, struct gs_diag *d)
{
    if (p->placed_start_us > now)
        return time_error(p, GS_AT_START, p->placed_start_us, "after now", now, d);
    if (p->arrival_us > p->placed_start_us)
        return time_error(p, GS_AT_START, p->placed_start_us, "before its sim.gpusched.io/arrival",
                          p->arrival_us, d);
    if (p->done_us > now - p->arrival_us)
        return time_error(p, GS_AT_DONE, p->done_us, "more than the time from its arrival to now",
                          now - p->arrival_us, d);
    return 0;
}

/* saved_times() - what pod @p saved before (sim.gpusched.io/saved) and has done of this run
 * (sim.gpusched.io/done) add up to at most its sim.gpusched.io/duration: the work it has left
 * (duration - saved - done) is never negative. The daemon writes no more: a run ends when it
 * has done all. Return: 0; -EINVAL with @d set. */
static int saved_times(const struct gs_pod_spec *p, struct gs_diag *d)
{
    if (p->duration_us == GS_UNSET)
        return 0;
    if (p->saved_us > p->duration_us)
        return time_error(p, GS_AT_SAVED, p->saved_us, "more than its sim.gpusched.io/duration",
                          p->duration_us, d);
    if (p->done_us > p->duration_us - p->saved_us)
        return time_error(p, GS_AT_DONE, p->done_us,
                          "more than its sim.gpusched.io/duration less what it saved",
                          p->duration_us - p->saved_us, d);
    return 0;
}

/* first_start() - a pod's sim.gpusched.io/first-start is a time the daemon's clock can give: not
 * before its arrival, nor after now or its running start (a report's start and wait are read
 * from it). Return: 0; -EINVAL with @d set. */
static int first_start(const struct gs_pod_spec *p, int64_t now, struct gs_diag *d)
{
    int64_t t = p->first_start_us, start = p->placed_start_us;
    if (!(p->placed_given & GS_PLACED_FIRST))
        return 0;
    if (t < p->arrival_us)
        return time_error(p, GS_AT_FIRST, t, "before its arrival", p->arrival_us, d);
    if (now != GS_UNSET && t > now)
        return time_error(p, GS_AT_FIRST, t, "after now", now, d);
    if ((p->placed_given & GS_PLACED_START) && t > start)
        return time_error(p, GS_AT_FIRST, t, "after its sim.gpusched.io/start", start, d);
    return 0;
}

/* Snapshot pod @p's sim.gpusched.io/gpus names only cards node @node has. Return: 0; -EINVAL
 * with @d at the annotation's value. */
static int card_of_node(const struct gs_scenario *s, const struct gs_pod_spec *p, int32_t node,
                        struct gs_diag *d)
{
    int gpus = s->policy.templates[s->policy.nodes[node].template_index].gpus;
    uint32_t beyond = gpus >= 32 ? 0 : p->placed_mask & ~((1u << gpus) - 1);
    if (!beyond)
        return 0;
    int card = __builtin_ctz(beyond);
    return gs_diag_error(d,
                         "%.*s:%u:%u: pod %s/%s: sim.gpusched.io/gpus names card %d, and node %s "
                         "has %d GPUs%s",
                         (int)sizeof(p->placed_src.file), p->placed_src.file, p->cards_line,
                         p->cards_col, p->ns, p->name, card, p->placed_node, gpus,
                         gpus ? " (numbered from 0)" : "");
}

/* placed_nodes() - a snapshot's running pods (sim.gpusched.io/node) name a node of the Cluster
 * and give their cards (or MIG instance) and start with it. O(pods log nodes). */
static int placed_nodes(struct gs_scenario *s, struct gs_diag *d)
{
    char at[AT_MAX];
    struct named *by = malloc((s->policy.nnodes + 1) * sizeof(*by));
    if (!by)
        return gs_diag_error_code(d, -ENOMEM, "out of memory");
    for (size_t k = 0; k < s->policy.nnodes; k++)
        by[k] = (struct named){s->policy.nodes[k].name, (int32_t)k};
    qsort(by, s->policy.nnodes, sizeof(*by), cmp_named);
    int rc = 0;
    for (size_t i = 0; !rc && i < s->npods; i++) {
        struct gs_pod_spec *p = &s->pods[i];
        int loose = (p->placed_given & ~GS_PLACED_FIRST) != 0; /* first-start: a pending pod too */
        if ((rc = first_start(p, s->sim.now_us, d)) != 0 || (rc = saved_times(p, d)) != 0)
            break;
        if (!p->placed_node[0] && loose)
            rc = gs_diag_error(d,
                               "%s: pod %s/%s: sim.gpusched.io/gpus, mig-start, start and done "
                               "describe a running pod and need sim.gpusched.io/node",
                               gs__scn_where(&p->src, at, sizeof(at)), p->ns, p->name);
        if (rc || !p->placed_node[0])
            continue;
        const struct named key = {p->placed_node, -1},
                           *k = bsearch(&key, by, s->policy.nnodes, sizeof(*by), cmp_named);
        if (!k)
            rc = gs_diag_error(d,
                               "%s: pod %s/%s: sim.gpusched.io/node \"%s\" is not a node of the "
                               "Cluster",
                               gs__scn_where(&p->placed_src, at, sizeof(at)), p->ns, p->name,
                               p->placed_node);
        else if (!(p->placed_given & (GS_PLACED_GPUS | GS_PLACED_MIG)) ||
                 !(p->placed_given & GS_PLACED_START))
            rc = gs_diag_error(d,
                               "%s: pod %s/%s: a running pod needs sim.gpusched.io/gpus (or "
                               "mig-start) and sim.gpusched.io/start with its node",
                               gs__scn_where(&p->placed_src, at, sizeof(at)), p->ns, p->name);
        else if ((rc = card_of_node(s, p, k->index, d)) == 0 &&
                 !(rc = s->sim.now_us == GS_UNSET ? 0 : placed_times(p, s->sim.now_us, d)))
            p->placed_node_index = k->index;
    }
    free(by);
    return rc;
}

int gs_scenario_resolve(struct gs_scenario *s, struct gs_diag *d)
{
    if (!s)
        return gs_diag_error(d, "gs_scenario_resolve: scenario must not be NULL");
    if (!gs__scn_priv(s))
        return gs_diag_error_code(d, -ENOMEM, "out of memory");
    int rc = gs__scn_resolve_templates(s, d);
    if (!rc)
        rc = map_namespaces(s, d);
    if (!rc)
        s->priv->ns_tenant_for = s->policy.ntenants;
    for (size_t i = 0; !rc && i < s->policy.npodgroups; i++)
        rc = ns_tenant(s, s->policy.podgroups[i].ns, &s->policy.podgroups[i].src, d);
    for (size_t i = 0; !rc && i < s->npods; i++)
        rc = ns_tenant(s, s->pods[i].ns, &s->pods[i].src, d);
    if (!rc)
        rc = profile_overrides(s, d);
    for (size_t i = 0; !rc && i < s->policy.npodgroups; i++)
        rc = podgroup_queue(s, &s->policy.podgroups[i], d);
    for (size_t i = 0; !rc && i < s->npods; i++)
        rc = pod_refs(s, &s->pods[i], d);
    if (!rc)
        rc = failure_overlaps(s, d);
    for (size_t i = 0; !rc && i < s->sim.nfailures; i++)
        rc = failure_node(s, &s->sim.failures[i], d);
    for (size_t i = 0; !rc && i < s->sim.ncards; i++)
        rc = card_node(s, &s->sim.cards[i], d);
    if (!rc)
        rc = placed_nodes(s, d);
    if (!rc)
        rc = gpu_counts(s, d);
    if (rc)
        return rc;
    warn_policy_tenants(s, d);
    warn_dedicated(s, d);
    warn_refs(s, d);
    warn_limit_ranges(s, d);
    return 0;
}
