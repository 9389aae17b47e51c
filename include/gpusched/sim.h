/*
 * gpusched — trace replay with the method of the FGD study (Weng et al., USENIX ATC '23, §6):
 * pods arrive one at a time and never leave; a pod that fits nowhere is recorded as failed with
 * its reason and skipped; after every arrival the allocated and arrived GPU share are recorded.
 *
 * Invariants: milli-GPU integers; a run owns its own cluster, built fresh from the node rows, so
 * runs are independent and repeatable (same inputs and seed, same events).
 * Thread safety: none; distinct runs may go on distinct threads.
 */
#ifndef GPUSCHED_SIM_H
#define GPUSCHED_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "gpusched/sched.h"
#include "gpusched/trace.h"

struct gs_diag;
struct gs_profile;

#define GS_SIM_ARRIVALS_MAX 2000000 /* arrivals one replay may have (48 bytes each) */

/* What happened to one arriving pod. */
struct gs_sim_event {
    uint32_t pod;          /* index into the pod list */
    int32_t node;          /* node index, -1 when it fit nowhere */
    uint32_t gpu_mask;     /* cards taken (bit = node-local index) */
    uint32_t gpu_milli;    /* share of each card taken */
    int64_t arrived_milli; /* GPU share asked by all pods so far, this one included */
    int64_t used_milli;    /* GPU share allocated after this pod */
    const char *reason;    /* failed: the reason most nodes gave (static); NULL otherwise */
    char *detail;          /* failed: the full "0/N nodes are available: ..." text (owned) */
};

struct gs_sim_run {
    char policy[64];
    uint64_t seed;
    int64_t capacity_milli; /* GPUs x 1000 */
    struct gs_sim_event *ev;
    size_t n;
    size_t placed, failed;
    int64_t frag_milli; /* fragmented GPU share at the end (typical pods of the workload) */
    int64_t cpu_milli, cpu_used, memory_mib, memory_used;
    int64_t gpus_idle, gpus_partial;
    size_t states;              /* distinct node states the engine interned */
    struct gs_sched_stats work; /* the engine's work for this run */
    /* agreement with a reference run, when the sequence has its placements */
    int64_t peer_same_node;    /* the reference placed it, on the same node */
    int64_t peer_same_outcome; /* placed by both, or failed in both */
    int64_t peer_ref_placed, peer_compared;
};

/* Progress: called with (done, total) now and then; may be NULL. */
typedef void (*gs_sim_progress)(void *ud, size_t done, size_t total);

/*
 * gs_sim_sample() - the arrival order of the FGD method: every pod of @pods once, shuffled with
 * @seed, then pods drawn with replacement (the same seed's stream) and appended while the total
 * GPU request stays within @tune_permille / 1000 x @capacity_milli; when the pods alone ask for
 * more, random pods are dropped until it fits. (The study's simulator: `-tune`, `-tuneseed`.)
 * Return: 0 and *@order (indexes into @pods; free()) of *@n entries (at least one); -EINVAL when
 * @tune_permille is not in 1..100000 or @pods is empty; -EDOM when no pod asks for a GPU (the
 * target is never reached); -ERANGE when not one pod fits within the target; -E2BIG past
 * GS_SIM_ARRIVALS_MAX arrivals; -ENOMEM. On an error *@order and *@n are left as they were.
 * O(arrivals).
 */
int gs_sim_sample(const struct gs_trace_pod *pods, size_t npods, int64_t capacity_milli,
                  int tune_permille, uint64_t seed, uint32_t **order, size_t *n);

/*
 * gs_sim_sched_new() - a fresh cluster of @nodes and a scheduler over it running @profile with
 * @seed, @pods (all of them, before sampling) its workload: what gs_sim_replay() places on.
 * Return: 0 and *@c, *@s (free @s with gs_sched_free(), then @c with gs_cluster_free()); else
 * both left untouched: -EINVAL with @d (empty cluster, a pod whose GPU model no node has: named),
 * -ENOMEM.
 */
int gs_sim_sched_new(const struct gs_trace_node *nodes, size_t nnodes,
                     const struct gs_profile *profile, const struct gs_trace_pod *pods,
                     size_t npods, uint64_t seed, struct gs_cluster **c, struct gs_sched **s,
                     struct gs_diag *d);

/*
 * gs_sim_replay() - place @order (indexes into @pods) one by one on a fresh cluster of @nodes
 * under @profile. Typical pods come from all of @pods (the workload, before sampling).
 * @prio: the node tie-break order (see gs_sched_set_priority()), or NULL for the one drawn
 * from @seed.
 * @seq: when not NULL and it has a peer column for the run's policy (@peer_col >= 0), the run
 * counts how often it agrees with that reference placement.
 * Return: 0 and *@out (free with gs_sim_run_free()); -EINVAL with @d (empty cluster, a pod whose
 * GPU model no node has: named); -ENOMEM.
 */
int gs_sim_replay(const struct gs_trace_node *nodes, size_t nnodes,
                  const struct gs_profile *profile, const struct gs_trace_pod *pods, size_t npods,
                  const uint32_t *order, size_t norder, uint64_t seed, const uint32_t *prio,
                  const struct gs_sequence *seq, int peer_col, gs_sim_progress progress,
                  void *progress_ud, struct gs_sim_run **out, struct gs_diag *d);

/*
 * gs_sim_reference_order() - the tie-break node order of a reference run, recovered from the
 * placements @seq records: each ranked policy with a peer_<Policy> column is replayed binding
 * every pod where the reference put it, and wherever several nodes share the best score the
 * reference's node must rank first. A topological order of these constraints (lowest node index
 * first where free) satisfies all of them, so a replay with it makes the reference's decisions
 * again; it isolates the policy rules, ours to check, from the reference's random draws.
 * @prio: out, node -> rank (lower wins), @nnodes entries, free(); @constraints: out, pairs
 * learned; @policies: out, reference columns used.
 * Return: 0; -EINVAL with @d when a reference node is not among our best (the rules differ), the
 * constraints contradict each other, or no column is usable; -E2BIG past 20,000 nodes; -ENOMEM.
 * Complexity: O(policies x pods x nodes) evaluations, O(nodes^2) bits.
 */
int gs_sim_reference_order(const struct gs_trace_node *nodes, size_t nnodes,
                           const struct gs_trace_pod *pods, size_t npods,
                           const struct gs_sequence *seq, uint32_t **prio, size_t *constraints,
                           int *policies, struct gs_diag *d);

/* gs_sim_run_free() - NULL allowed. */
void gs_sim_run_free(struct gs_sim_run *r);

/*
 * gs_sim_last_pct() - the arrived share of @r's last arrival, in whole % of capacity rounded as
 * gs_sim_alloc_at() rounds it (so gs_sim_alloc_at(@r, gs_sim_last_pct(@r)) is a figure), e.g.
 * 130 for a trace replayed to 129.99 %. Arrivals only grow, so it is the last point of the curve.
 * Return: the %, or -1 when @r placed nothing or has no capacity.
 */
int gs_sim_last_pct(const struct gs_sim_run *r);

/*
 * gs_sim_alloc_at() - GPU allocation at @pct % arrived, in basis points of capacity (9523 =
 * 95.23 %): the mean allocation over the arrivals whose arrived share rounds to @pct % of
 * capacity, else over those within one point of it (the study's merge_alloc_discrete rule).
 * Return: basis points, or -1 when no arrival came near @pct.
 */
int64_t gs_sim_alloc_at(const struct gs_sim_run *r, int pct);

#endif
