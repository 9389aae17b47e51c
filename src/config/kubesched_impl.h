/* The KubeSchedulerConfiguration loader's entry for the scenario loader (kubesched.c). */
#ifndef GS_KUBESCHED_IMPL_H
#define GS_KUBESCHED_IMPL_H

#include "yamlutil.h"

struct gs_policy;

/*
 * gs__kubesched_policy() - KubeSchedulerConfiguration document @root, read as the multi-tenant
 * scheduler's profile: its first profile, merged with gs_profile_new_placement() as
 * kube-scheduler merges a profile with its defaults, every profile checked as
 * gs_config_load_kubesched() checks them; its score point into @pol->scores. A score plugin
 * gpusched does not build is an error naming its line and column; one of the trace replay's
 * (FGD, ...) a warning there, and left out. Return: 0; -EINVAL with @c->d; -ENOMEM.
 */
int gs__kubesched_policy(struct gs__yctx *c, yaml_node_t *root, struct gs_policy *pol);

#endif
