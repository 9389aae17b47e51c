/*
 * Priorities and preemption: PriorityClass admission, the preempt verb, preemption for
 * pending pods.
 */
#ifndef GSD_PREEMPT_H
#define GSD_PREEMPT_H

#include <jansson.h>

struct gsd_ferr;
struct gsd_pod;
struct gsd_podspec;
struct gsd_req;
struct gsd_state;

/* gsd_extender_preempt() - the preempt verb (preempt.c) on ExtenderPreemptionArgs @args:
 * 200 with ExtenderPreemptionResult, 400 naming the bad field, 500 out of memory. */
void gsd_extender_preempt(struct gsd_state *st, struct gsd_req *r, const json_t *args);

/*
 * gsd_priority_resolve() - what Kubernetes' Priority admission does to a pod, with the
 * PriorityClass documents among the policy files: spec.priorityClassName gives spec.priority its
 * class's value (a class not found among them is a 400 naming the field); a pod naming none gets
 * the globalDefault class's value, else 0. A spec.priority other than that value is a 400 naming
 * spec.priority: a pod cannot rank itself above others. Return: 0; -EINVAL with @e.
 */
int gsd_priority_resolve(const struct gsd_state *st, struct gsd_podspec *spec, struct gsd_ferr *e);
/*
 * gsd_priority_class_known() - whether PriorityClass @name ("" = none named) may be named: always
 * without PriorityClass documents; otherwise answers @r 400 on @field when none has that name.
 * Return: 1 known, 0 answered.
 */
int gsd_priority_class_known(const struct gsd_state *st, const char *name, const char *field,
                             struct gsd_req *r);
/*
 * gsd_preempt_for() - pending pod @p fits nowhere: make room by requeueing running pods of lower
 * priority, as kube-scheduler's DefaultPreemption chooses them — on each node the fewest victims
 * in eviction order (lowest priority, then the latest started) that let it fit, on the node whose
 * most important victim is least important, then with the fewest victims. Victims are API pods
 * (kube-scheduler preempts those it bound, through the preempt verb) of @p's own queue, as
 * Volcano's preempt action (across queues it would be reclaim, which the daemon does not do); a
 * victim's PodGroup goes back whole. Not tried for a member of a gang not yet running, a pod over a
 * quota, or one whose PriorityClass says preemptionPolicy Never. Return: 0 @p placed (as
 * gsd_pod_place() leaves it); GS_UNSCHEDULABLE; -ENOMEM; -EIO (the store failed).
 */
int gsd_preempt_for(struct gsd_state *st, struct gsd_pod *p);

#endif
