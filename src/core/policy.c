/*
 * Rules over the policy kinds that more than one module applies (include/gpusched/policy.h):
 * tier names, a tenant's step profile with its override, a GPUQuota entry, a queue's GPU
 * capability, where a pod's share goes under a GPUQuota.
 */
#include "gpusched/policy.h"
#include "gpusched/scenario.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const tier_names[] = {"none", "nvlink", "pcie", "node", "az"};

const char *gs_tier_name(enum gs_tier t)
{
    return (unsigned)t < sizeof(tier_names) / sizeof(tier_names[0]) ? tier_names[t] : "none";
}

int gs_tier_find(const char *name)
{
    for (int i = 0; name && i < (int)(sizeof(tier_names) / sizeof(tier_names[0])); i++)
        if (strcmp(name, tier_names[i]) == 0)
            return i;
    return -ENOENT;
}

int gs_step_profile_for(const struct gs_policy *pol, const char *name, const char *tenant,
                        struct gs_step_profile *out)
{
    const struct gs_step_profile *base = NULL, *over = NULL;
    for (size_t i = 0; i < pol->nprofiles; i++) {
        const struct gs_step_profile *p = &pol->profiles[i];
        if (strcmp(p->name, name) != 0)
            continue;
        if (!p->tenant[0])
            base = p;
        else if (tenant && strcmp(p->tenant, tenant) == 0)
            over = p;
    }
    if (!base)
        return -ENOENT;
    *out = *base;
    if (!over)
        return 0;
    if (over->set & (1u << GS_PROFILE_SHARE))
        out->gpu_share = over->gpu_share;
    if (over->set & (1u << GS_PROFILE_MAX_MEMORY))
        out->max_memory_mib = over->max_memory_mib;
    if (over->set & (1u << GS_PROFILE_OVERCOMMIT))
        out->overcommit_milli = over->overcommit_milli;
    if (over->set & (1u << GS_PROFILE_PRIORITY))
        out->priority = over->priority;
    if (over->set & (1u << GS_PROFILE_PREEMPTIBLE))
        out->preemptible = over->preemptible;
    memcpy(out->tenant, over->tenant, sizeof(out->tenant));
    return 0;
}

void gs_tenant_spec_init(struct gs_tenant_spec *ts, const char *name)
{
    memset(ts, 0, sizeof(*ts));
    snprintf(ts->name, sizeof(ts->name), "%s", name);
    ts->tier = GS_TIER_NONE;
    ts->priority = GS_UNSET;
    ts->gpu_count_milli = ts->max_gpus_per_pod = ts->max_pods_per_user = GS_UNSET;
    ts->topology_awareness = ts->gang_scheduling = ts->bin_packing = 1;
}

const struct gs_model_quota *gs_tenant_model_quota(const struct gs_tenant_spec *ts, int model)
{
    for (int i = 0; ts->has_quota && i < ts->nquotas; i++)
        if (ts->quotas[i].model == model)
            return &ts->quotas[i];
    return NULL;
}

int64_t gs_queue_gpu_cap_milli(const struct gs_queue_spec *q, int whole)
{
    if (q->cap_gpu_milli == GS_UNSET || whole)
        return q->cap_gpu_milli;
    return q->cap_gpu_milli * q->overcommit_milli / 1000;
}

int64_t gs_quota_borrowed(const struct gs_model_quota *q, int64_t ded, int64_t sh, int64_t sh_whole)
{
    int64_t left = q->dedicated_milli > ded ? q->dedicated_milli - ded : 0;
    return sh - (sh_whole < left ? sh_whole : left);
}

int gs_quota_bucket(const struct gs_model_quota *q, int64_t ded, int64_t sh, int64_t sh_whole,
                    int whole, int64_t milli)
{
    if (ded + sh + milli > q->total_milli)
        return 0;
    /* dedicated room a borrowing pod's whole cards fill counts as taken */
    if (whole && ded + milli <= q->dedicated_milli &&
        gs_quota_borrowed(q, ded + milli, sh, sh_whole) <= q->shared_milli)
        return 1;
    return gs_quota_borrowed(q, ded, sh + milli, sh_whole + (whole ? milli : 0)) <= q->shared_milli
               ? 2
               : 0;
}

/* Kubernetes' built-in classes (kubernetes/pkg/apis/scheduling: SystemClusterCritical and
 * SystemNodeCritical), which exist in every cluster without a document. */
static const struct gs_priority_class_spec builtin_classes[] = {
    {.name = "system-cluster-critical", .value = 2000000000},
    {.name = "system-node-critical", .value = 2000001000},
};

const struct gs_priority_class_spec *gs_priority_class_builtin(size_t i)
{
    return i < sizeof(builtin_classes) / sizeof(builtin_classes[0]) ? &builtin_classes[i] : NULL;
}

const struct gs_priority_class_spec *gs_priority_class_find(const struct gs_policy *pol,
                                                            const char *name)
{
    for (size_t i = 0; i < pol->npriority_classes; i++)
        if (strcmp(pol->priority_classes[i].name, name) == 0)
            return &pol->priority_classes[i];
    const struct gs_priority_class_spec *b;
    for (size_t i = 0; (b = gs_priority_class_builtin(i)); i++)
        if (strcmp(b->name, name) == 0)
            return b;
    return NULL;
}

const char *gs_podgroup_queue(const struct gs_podgroup_spec *g)
{
    return g->queue[0] ? g->queue : "default";
}

int gs_podgroup_task_add(struct gs_podgroup_spec *g, const char *name, long long min, char *why,
                         size_t size)
{
    size_t n = strlen(name);
    if (!gs_dns_label_ok(name, n))
        return snprintf(why, size,
                        "task \"%.64s\": expected a Volcano task's name, a DNS label (a-z, 0-9, "
                        "'-', 1..63 bytes)",
                        name),
               -EINVAL;
    if (min < 0 || min > GS_SCN_PODS_MAX) /* as minMember: the sum of the tasks' stays an int */
        return snprintf(why, size, "task %s: expected a member count in 0..%d, not %lld", name,
                        GS_SCN_PODS_MAX, min),
               -EINVAL;
    for (int32_t i = 0; i < g->ntasks; i++)
        if (!strcmp(g->tasks[i].name, name))
            return snprintf(why, size, "task %s is given twice", name), -EINVAL;
    if (g->ntasks >= GS_PG_TASKS_MAX)
        return snprintf(why, size, "more than %d tasks: gpusched holds %d per PodGroup",
                        GS_PG_TASKS_MAX, GS_PG_TASKS_MAX),
               -EINVAL;
    memcpy(g->tasks[g->ntasks].name, name, n + 1);
    g->tasks[g->ntasks++].min = (int32_t)min;
    return 0;
}

const char *gs_pod_queue(const struct gs_pod_spec *sp, const struct gs_podgroup_spec *g)
{
    return g ? gs_podgroup_queue(g) : sp->queue[0] ? sp->queue : "default";
}

const char *gs_policy_scheduler_name(const struct gs_policy *pol)
{
    return pol->scheduler_name[0] ? pol->scheduler_name : "default-scheduler";
}

int gs_policy_scheduler_takes(const struct gs_policy *pol, const char *name, char *why, size_t size)
{
    const char *mine = gs_policy_scheduler_name(pol);
    if (!name[0] || !strcmp(name, mine))
        return 1;
    if (why) /* a Volcano user's pods say volcano: the two ways to have this scheduler take them */
        snprintf(why, size,
                 "schedulerName %s names another scheduler: this one is %s; write schedulerName: "
                 "%s, or load a KubeSchedulerConfiguration whose profile has schedulerName: %s",
                 name, mine, mine, name);
    return 0;
}
