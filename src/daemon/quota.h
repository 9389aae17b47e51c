/*
 * The policy files of gpuschedd's DaemonConfig, and each tenant's quotas as the API shows them.
 */
#ifndef GSD_QUOTA_H
#define GSD_QUOTA_H

#include "config.h"

#include <jansson.h>
#include <stddef.h>

struct gs_diag;
struct gsd_state;
struct gsd_tenant;

/* ResourceQuota resources shown: requests.nvidia.com/gpu (milli-GPU), requests.nvidia.com/gpumem
 * (MiB, cards x per card), requests.cpu (milli-cores), requests.memory (MiB), pods. */
#define GSD_RQ_RES 5
extern const char *const gsd_rq_res[GSD_RQ_RES];

/*
 * gsd_quota_load() - read the policy files @paths[0..@n) — the simulator's YAML kinds, loaded and
 * checked by gs_scenario_load() and gs_scenario_resolve() (include/gpusched/scenario.h) — into
 * @c->quotas, and tie each GPUQuota to the DaemonConfig tenant its spec.tenant names. Every kind
 * the scheduler reads is in force (sched.h); Pods, a Cluster or a Simulation are errors (pods
 * come through the API, nodes from --nodes). Warnings of the loader are logged.
 * Return: 0; -EINVAL with @d naming file:line:column (a GPUQuota of a tenant the DaemonConfig
 * does not list among them); -ENOENT; -EIO; -ENOMEM.
 */
int gsd_quota_load(struct gsd_config *c, const char *const *paths, size_t n, struct gs_diag *d);

/* gsd_rquota_used() - what the pods ResourceQuota @i of the policy counts hold, in the units of
 * gsd_rq_res. */
void gsd_rquota_used(const struct gsd_state *st, size_t i, int64_t used[GSD_RQ_RES]);

/* gsd_quota_json() - tenant @t's GPUQuota hard and used per model, and its namespaces'
 * ResourceQuotas (new reference). */
json_t *gsd_quota_json(const struct gsd_state *st, const struct gsd_tenant *t);

#endif
