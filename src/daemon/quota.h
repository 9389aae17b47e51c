/*
 * Quotas: GPUQuota, ResourceQuota and maxPodsPerUser, and what the running pods use.
 */
#ifndef GSD_QUOTA_H
#define GSD_QUOTA_H

#include "config.h"

#include "gpusched/catalog.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct gs_diag;
struct gs_pod_req;
struct gsd_config;
struct gsd_ferr;
struct gsd_pod;
struct gsd_podspec;
struct gsd_state;
struct gsd_tenant;

/* GPUQuota use of one tenant per catalog model, in milli-GPU. */
struct gsd_quota_use {
    int64_t dedicated[GS_MODEL_MAX], shared[GS_MODEL_MAX];
};
struct gsd_user_use {
    char tenant[GSD_NAME_MAX], user[GSD_NAME_MAX];
    int32_t running;
};
/* ResourceQuota resources counted: requests.nvidia.com/gpu (milli-GPU), requests.nvidia.com/gpumem
 * (MiB, cards x per card), requests.cpu (milli-cores), requests.memory (MiB), pods. */
#define GSD_RQ_RES 5
extern const char *const gsd_rq_res[GSD_RQ_RES];

/*
 * gsd_quota_load() - read the policy files @paths[0..@n) — the simulator's YAML kinds, loaded and
 * checked by gs_scenario_load() and gs_scenario_resolve() (include/gpusched/scenario.h) — into
 * @c->quotas, and tie each GPUQuota to the DaemonConfig tenant its spec.tenant names. Enforced:
 * GPUQuota quotas (per model: total, dedicated, shared), limits.maxGPUsPerPod and
 * limits.maxPodsPerUser (pods running per value of the pod label `user`); ResourceQuota
 * requests.nvidia.com/gpu, requests.nvidia.com/gpumem, requests.cpu, requests.memory and pods,
 * with its PriorityClass scope. Other kinds are logged as not applied by the daemon; Pods, a
 * Cluster or a Simulation are errors (pods come through the API, nodes from --nodes).
 * Warnings of the loader are logged. Return: 0; -EINVAL with @d naming file:line:column (a
 * GPUQuota of a tenant the DaemonConfig does not list among them); -ENOENT; -EIO; -ENOMEM.
 */
int gsd_quota_load(struct gsd_config *c, const char *const *paths, size_t n, struct gs_diag *d);

/*
 * gsd_quota_check() - may pod @p start now as far as quotas go? @eff gets its request with the
 * GPU models narrowed to those where its tenant's GPUQuota has room. Return: 0; GS_UNSCHEDULABLE
 * with @why (a ResourceQuota, maxPodsPerUser or GPUQuota it is over, with use, hard and ask).
 */
int gsd_quota_check(const struct gsd_state *st, const struct gsd_pod *p, struct gs_pod_req *eff,
                    char *why, size_t size);
/*
 * gsd_quota_limit() - is @spec refused outright by its tenant's maxGPUsPerPod? Return: 0; -EINVAL
 * with @e (400 naming the field).
 */
int gsd_quota_limit(const struct gsd_config *c, const char *tenant, const struct gsd_podspec *spec,
                    struct gsd_ferr *e);
/* gsd_quota_charge() - count running pod @p in (@sign 1) or out of (@sign -1) every quota it
 * falls under. Return: 0; -ENOMEM (a new user entry). */
int gsd_quota_charge(struct gsd_state *st, struct gsd_pod *p, int sign);
/* gsd_quota_recount() - forget all use and count every running pod again, in arrival order (at
 * start, after a reload). Return: 0; -ENOMEM. */
int gsd_quota_recount(struct gsd_state *st);
void gsd_quota_free(struct gsd_state *st);
/* gsd_quota_json() - tenant @t's GPUQuota hard and used per model, and its namespaces'
 * ResourceQuotas (new reference; null when it has neither). */
json_t *gsd_quota_json(const struct gsd_state *st, const struct gsd_tenant *t);

#endif
