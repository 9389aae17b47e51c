/*
 * gpusched — the scheduling framework: profiles, plugins and the scheduling cycle.
 *
 * A profile lists plugins per extension point, as a KubeSchedulerConfiguration profile does:
 * queueSort, preFilter, filter, postFilter, score (each with an integer weight), reserve. Plugins
 * are compiled in; src/core/plugins/plugins.def lists each once and generates the registry.
 *
 * The scheduling cycle for one pod: preFilter once; filter and score once per *node state* (nodes
 * whose free resources, GPU model, shape and placement tags are equal are one state and score the
 * same, so a cycle costs O(distinct states), and a (state, pod shape) result is cached for good
 * because states are immutable); the best weighted sum wins; ties go to a fixed per-seed random
 * node priority (as the FGD study's simulator does) or, for plugins that ask for it, to a uniform
 * draw; postFilter explains a pod that fits nowhere; reserve picks the cards and binds.
 *
 * Invariants: scores are integers 0..GS_SCORE_MAX before weighting; weights are 1..GS_WEIGHT_MAX.
 * Same cluster, profile, workload and seed give the same decisions, byte for byte.
 * Thread safety: none; one scheduler per thread.
 */
#ifndef GPUSCHED_SCHED_H
#define GPUSCHED_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "gpusched/cluster.h"
#include "gpusched/pod.h"

struct gs_diag;
struct gs_profile;
struct gs_sched;

#define GS_SCORE_MAX  1000
#define GS_WEIGHT_MAX 500

enum gs_ext_point {
    GS_EP_QUEUE_SORT = 0,
    GS_EP_PRE_FILTER,
    GS_EP_FILTER,
    GS_EP_POST_FILTER,
    GS_EP_SCORE,
    GS_EP_RESERVE,
    GS_EP_COUNT
};

/* gs_ext_point_name() - "queueSort", "preFilter", ... as KubeSchedulerConfiguration spells them. */
const char *gs_ext_point_name(enum gs_ext_point ep);

/* gs_ext_point_find() - the extension point named @name, or -ENOENT. */
int gs_ext_point_find(const char *name);

/* gs_plugin_count() - number of compiled-in plugins. */
int gs_plugin_count(void);

/* gs_plugin_find() - the plugin id of @name (exact, case-sensitive), or -ENOENT. */
int gs_plugin_find(const char *name);

/* gs_plugin_name() - name of plugin @id, or NULL when out of range. */
const char *gs_plugin_name(int id);

/* gs_plugin_points() - bit (1 << ep) set for each extension point plugin @id implements. */
unsigned gs_plugin_points(int id);

/*
 * Which scheduler a score plugin scores for: gs_plugin_scores_states() - the trace replay's
 * (gs_sched, node states); gs_plugin_places() - the multi-tenant scheduler's placements
 * (gpusched/tenancy.h: GPUBinPacking, TopologyScore, FairnessScore). Return: 1 or 0 (0 too for
 * an id out of range or a plugin that does not score).
 */
int gs_plugin_scores_states(int id);
int gs_plugin_places(int id);

/*
 * gs_profile_new() - an empty profile named @scheduler_name (copied; NULL = "gpusched").
 * Return: 0 and *@out (free with gs_profile_free()), or -ENOMEM.
 */
int gs_profile_new(const char *scheduler_name, struct gs_profile **out);

/* gs_profile_free() - NULL allowed. */
void gs_profile_free(struct gs_profile *p);

/* gs_profile_name() - the schedulerName, owned by @p. */
const char *gs_profile_name(const struct gs_profile *p);

/*
 * gs_profile_enable() - enable plugin @id at @ep with @weight (score only; others pass 1).
 * Enabling a plugin twice at one point replaces its weight.
 * Return: 0; -EINVAL with @d set when the plugin does not implement @ep or the weight is outside
 * 1..GS_WEIGHT_MAX; -E2BIG past 16 plugins at one point.
 */
int gs_profile_enable(struct gs_profile *p, enum gs_ext_point ep, int id, int weight,
                      struct gs_diag *d);

/*
 * gs_profile_disable() - remove plugin @id from @ep (no-op when absent); id -1 removes all.
 */
void gs_profile_disable(struct gs_profile *p, enum gs_ext_point ep, int id);

/* gs_profile_count() - plugins enabled at @ep. */
int gs_profile_count(const struct gs_profile *p, enum gs_ext_point ep);

/*
 * gs_profile_at() - the @i-th plugin at @ep: returns its id and writes its weight to @weight
 * (may be NULL). Return: -ENOENT when @i is out of range.
 */
int gs_profile_at(const struct gs_profile *p, enum gs_ext_point ep, int i, int *weight);

/*
 * gs_policy_names() - NULL-terminated list of the placement policy names gs_profile_for_policy()
 * knows: "gpusched" (the default), "fgd", "bestfit", "gpupacking", "gpuclustering", "dotprod",
 * "random". Owned by the library.
 */
const char *const *gs_policy_names(void);

/*
 * gs_profile_for_policy() - the profile of a named placement policy: GPUQueueSort,
 * GPUAvailability, NodeGPUFilter, the policy's score plugin(s), NodeGPUReserve.
 * Return: 0 and *@out; -EINVAL with @d listing the known names; -ENOMEM.
 */
int gs_profile_for_policy(const char *policy, struct gs_profile **out, struct gs_diag *d);

/*
 * gs_profile_new_default() - the default profile, named @scheduler_name (NULL = "gpusched"):
 * what a KubeSchedulerConfiguration profile starts from before its enabled/disabled lists, as
 * kube-scheduler merges a profile with its default plugins. Its plugins are those of the
 * "gpusched" policy. Return: 0 and *@out; -ENOMEM.
 */
int gs_profile_new_default(const char *scheduler_name, struct gs_profile **out, struct gs_diag *d);

/*
 * gs_profile_new_placement() - the multi-tenant scheduler's default profile, named
 * @scheduler_name (NULL = "gpusched"): the seed's (seed 000 §3.2) score plugins GPUBinPacking 8,
 * TopologyScore 6 and FairnessScore 4, with GPUQueueSort, GPUAvailability, NodeGPUFilter and
 * NodeGPUReserve; what a KubeSchedulerConfiguration profile for that scheduler starts from.
 * Return: 0 and *@out; -ENOMEM.
 */
int gs_profile_new_placement(const char *scheduler_name, struct gs_profile **out,
                             struct gs_diag *d);

/* Where a pod was put. */
struct gs_placement {
    int32_t node;       /* node index */
    uint32_t gpu_mask;  /* bit i = node-local GPU i */
    uint32_t gpu_milli; /* milli-GPU taken on each GPU in gpu_mask */
};

/*
 * gs_sched_new() - a scheduler over @c (borrowed, must outlive it; the scheduler becomes the only
 * writer of its free resources) running profile @p (copied) with @seed for every random choice.
 * Return: 0 and *@out; -EINVAL with @d when the profile has no filter or no reserve plugin;
 * -ENOMEM.
 */
int gs_sched_new(struct gs_cluster *c, const struct gs_profile *p, uint64_t seed,
                 struct gs_sched **out, struct gs_diag *d);

/*
 * gs_sched_set_priority() - replace the tie-break order: @prio[i] is node i's rank (lower wins
 * a tie), a permutation of 0..n-1 (not checked for repeats: equal ranks fall to the heap order).
 * Only before the first pod is scheduled.
 * Return: 0; -EBUSY after a pod was scheduled; -EINVAL when a rank is >= the node count.
 */
int gs_sched_set_priority(struct gs_sched *s, const uint32_t *prio);

/* gs_sched_priority() - node @node's tie-break rank (UINT32_MAX when out of range). */
uint32_t gs_sched_priority(const struct gs_sched *s, size_t node);

/* gs_sched_free() - NULL allowed; the cluster is left as it is. */
void gs_sched_free(struct gs_sched *s);

/*
 * gs_sched_set_workload() - describe the workload the cluster serves: @n pod requests (copied),
 * from which the fragmentation-aware plugins derive the "typical pods" (the most frequent request
 * classes covering 95 % of pods, FGD, USENIX ATC '23 §4). Call before the first pod is placed
 * or scored; calling it again before then replaces the workload.
 * Return: 0; -EBUSY after a pod was placed or scored; -ENOMEM.
 */
int gs_sched_set_workload(struct gs_sched *s, const struct gs_pod_req *pods, size_t n);

/* Returned by gs_sched_place() when the pod fits on no node; the diag holds why. */
#define GS_UNSCHEDULABLE 1

/*
 * gs_sched_place() - run one scheduling cycle for @pod and, when a node fits, bind it there.
 * @out: written on success only.
 * @why: on GS_UNSCHEDULABLE, a kube-scheduler style summary ("0/152 nodes are available: 120
 * Insufficient nvidia.com/gpu, 32 Insufficient cpu."); on -EINVAL the bad field.
 * Return: 0 placed; GS_UNSCHEDULABLE; -EINVAL (invalid request, or one no node could ever host:
 * a GPU model no node has); -ENOMEM.
 * Complexity: O(distinct node states) per call, amortised.
 */
int gs_sched_place(struct gs_sched *s, const struct gs_pod_req *pod, struct gs_placement *out,
                   struct gs_diag *why);

/*
 * gs_sched_score_node() - filter and score @pod on node @node (an index) without binding: what
 * a scheduler extender's filter and prioritize verbs ask.
 * Return: the weighted score + 2 (>= 2) when the pod fits; GS_UNSCHEDULABLE with @why; -EINVAL
 * (bad request or node index); -ENOMEM.
 */
int64_t gs_sched_score_node(struct gs_sched *s, const struct gs_pod_req *pod, size_t node,
                            struct gs_diag *why);

/*
 * gs_sched_score_nodes() - gs_sched_score_node() for many nodes and one pod (an extender call
 * names thousands): the request is checked and its class found once, and a node that does not
 * fit costs no message. @nodes[0..@n): node indexes; an entry < 0 or out of range is skipped.
 * @out[i]: the weighted score + 2 (>= 2) when the pod fits node @nodes[i]; GS_UNSCHEDULABLE
 * with @reason[i] the kube-scheduler words for it (a static string, else NULL); -ENOENT when
 * skipped. @nodes, @out and @reason: arrays of @n, owned by the caller.
 * Return: 0; -EINVAL with @why (a bad request: then @out is not written); -ENOMEM.
 */
int gs_sched_score_nodes(struct gs_sched *s, const struct gs_pod_req *pod, const int32_t *nodes,
                         size_t n, int64_t *out, const char **reason, struct gs_diag *why);

/*
 * gs_sched_fits_without() - would @pod fit node @node were the pods @gone[0..@ngone) released
 * from their placements @pl[0..@ngone) there (both arrays read only, the caller's)? The filter
 * of the profile runs on a copy of the node: no node's free resources, state or place in the
 * scheduler's order changes (the pod's class is remembered, as by every call). What an
 * extender's preempt verb asks of a set of victims.
 * Return: 1 fits; 0 does not; -EINVAL with @why (a bad request, a node out of range, a placement
 * on another node or giving back more than the node has allocated); -ENOMEM.
 */
int gs_sched_fits_without(struct gs_sched *s, const struct gs_pod_req *pod, size_t node,
                          const struct gs_pod_req *gone, const struct gs_placement *pl,
                          size_t ngone, struct gs_diag *why);

/*
 * gs_sched_bind_node() - bind @pod to node @node chosen elsewhere (kube-scheduler's bind verb):
 * the cards are picked by the profile's reserve plugin.
 * Return: 0 and *@out; GS_UNSCHEDULABLE with @why when it does not fit there; -EINVAL; -ENOMEM.
 */
int gs_sched_bind_node(struct gs_sched *s, const struct gs_pod_req *pod, size_t node,
                       struct gs_placement *out, struct gs_diag *why);

/*
 * gs_sched_release() - give back what @pod held at @pl (a placement this scheduler returned).
 * The scheduler keeps amounts per node and card, not pod identities: the caller owns its pods
 * and must release each placement once. What can be checked is: the amounts fit back.
 * Return: 0; -EINVAL when @pl gives back more than the node or a card has allocated.
 */
int gs_sched_release(struct gs_sched *s, const struct gs_pod_req *pod,
                     const struct gs_placement *pl);

/*
 * gs_sched_frag_milli() - the cluster's GPU fragmentation for the typical pods, in milli-GPU: the
 * frequency-weighted free GPU share that the typical pods could not use (FGD's F_n summed over
 * nodes). 0 before gs_sched_set_workload(). O(nodes x typical pods x GPUs).
 */
int64_t gs_sched_frag_milli(const struct gs_sched *s);

/*
 * gs_sched_last_reason() - after GS_UNSCHEDULABLE, the reason most nodes gave, in kube-scheduler
 * words ("Insufficient nvidia.com/gpu"); a static string.
 */
const char *gs_sched_last_reason(const struct gs_sched *s);

/* Work done so far, the algorithm's own cost measure (benchmarks). */
struct gs_sched_stats {
    uint64_t evaluations;   /* (node state, pod class) pairs filtered and scored */
    uint64_t change_visits; /* changes a pod class read to catch up: membership changes it
                               replayed, states of the fresh list it walked, active states it
                               looked at afresh */
    uint64_t state_visits;  /* (state, pod class) results read to apply a change: once per state
                               a catch-up found changed for the class */
};

/* gs_sched_stats() - fill @out. */
void gs_sched_stats(const struct gs_sched *s, struct gs_sched_stats *out);

/*
 * gs_sched_state_count() - distinct node states met so far (for benchmarks), each counted once
 * however often it is freed and created again; told apart by their 64-bit hash.
 */
size_t gs_sched_state_count(const struct gs_sched *s);

/*
 * gs_queue_less() - GPUQueueSort order: higher @prio first, then earlier @seq.
 * Return: non-zero when (a_prio, a_seq) sorts before (b_prio, b_seq).
 */
int gs_queue_less(int32_t a_prio, uint64_t a_seq, int32_t b_prio, uint64_t b_seq);

/*
 * gs_sched_bind_placement() - bind @pod at exactly @pl (node, cards, share per card), a placement
 * recorded earlier, so a restarted service gets back the very cards its pods hold.
 * Checked: @pl->node in range; @pl->gpu_mask names exactly @pod->num_gpu existing cards and
 * @pl->gpu_milli equals @pod->gpu_milli; the GPU model is allowed; CPU, memory and every named
 * card have room.
 * Return: 0; GS_UNSCHEDULABLE with @why when something has no room; -EINVAL with @why for a
 * request or placement that breaks the rules above; -ENOMEM.
 */
int gs_sched_bind_placement(struct gs_sched *s, const struct gs_pod_req *pod,
                            const struct gs_placement *pl, struct gs_diag *why);

#endif
