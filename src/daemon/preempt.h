/*
 * Priorities and preemption: PriorityClass admission, the preempt verb, preemption for
 * pending pods.
 */
#ifndef GSD_PREEMPT_H
#define GSD_PREEMPT_H

#include <jansson.h>

struct gsd_req;
struct gsd_state;

/* gsd_extender_preempt() - the preempt verb (preempt.c) on ExtenderPreemptionArgs @args:
 * 200 with ExtenderPreemptionResult, 400 naming the bad field, 500 out of memory. */
void gsd_extender_preempt(struct gsd_state *st, struct gsd_req *r, const json_t *args);

/*
 * gsd_priority_class_known() - whether PriorityClass @name ("" = none named) may be named: one of
 * the policy files' PriorityClasses or Kubernetes' built-in system-cluster-critical and
 * system-node-critical, whether or not the files hold any; otherwise answers @r 400 on @field.
 * The built-in classes (above every class a policy may define, so they preempt anything) are for
 * the admin token only (@admin): a tenant naming one is answered 403, as Kubernetes' Priority
 * admission kept them to kube-system and clusters now keep them with a ResourceQuota's
 * limitedResources. (The rest of Priority admission, spec.priority against the class, is the
 * scheduler's.) Return: 1 known, 0 answered.
 */
int gsd_priority_class_known(const struct gsd_state *st, const char *name, const char *field,
                             int admin, struct gsd_req *r);
#endif
