/*
 * gpusched — the multi-tenant scheduler: one clock-agnostic core that both drivers run, the
 * simulator (src/sim, a virtual clock) and gpuschedd (src/daemon, the real clock).
 *
 * Events go in — a pod submitted, cancelled or completed; a node ready or not; a card healthy
 * or not — each with the time it happened; gs_tenancy_schedule() then runs a scheduling pass
 * and hands out what it decided as one transaction: pods bound (node, cards, share or MIG
 * instance), pods evicted (preempted or reclaimed, and for whom); why a pod waits is read with
 * gs_tenancy_pod(). The core reads no clock, does no I/O, keeps no globals and logs nothing:
 * time is an argument, and the same events at the same times give the same decisions, byte for
 * byte, whichever driver sends them.
 *
 * The policy, one concept per module (src/core/tenancy/): admission (LimitRange defaults and
 * bounds, step profiles and tenant overrides, the device demand: whole cards, shares, MIG
 * instances, vGPU classes, time-slice replicas), the ledger (GPUQuota dedicated/shared/total,
 * ResourceQuotas, maxPodsPerUser, queue capability and overcommit), the pending order
 * (GPUQueueSort: priority, the queue's fair-share deficit, arrival), placement (tiers, gangs,
 * card modes), eviction (priority preemption, reclaim between queues, the dedicated-quota
 * guarantee, churn guards) and backfill (EASY, with the walltimes pods declare). What the
 * scheduler may do depends on the way it runs:
 *   exclusive  whole exclusive cards only (a fractional request takes whole cards); no tiers,
 *              no GPUQuota, no gangs, no preemption — a device-plugin cluster;
 *   sharing    fractions of cards (memory MiB + compute share, vGPU classes) and time-slice
 *              replicas, otherwise as exclusive;
 *   full       sharing, the four topology tiers, GPUQuota, queues with deserved shares and
 *              reclaim, gangs, priority preemption and backfill.
 * Namespace ResourceQuota and LimitRange are Kubernetes admission and apply in every way.
 *
 * Units: milli-GPU, milli-CPU, MiB; times are microseconds on the driver's clock, which only
 * moves forward. Pods are named by the id gs_tenancy_submit() gives (dense, from 0); @seq, the
 * driver's own arrival order, breaks every tie between pods (the earlier first).
 * Thread safety: none; a scheduler is used by one thread at a time.
 */
#ifndef GPUSCHED_TENANCY_H
#define GPUSCHED_TENANCY_H

#include <stddef.h>
#include <stdint.h>

#include "gpusched/policy.h"

struct gs_diag;
struct gs_tenancy;

enum gs_way { GS_WAY_EXCLUSIVE = 0, GS_WAY_SHARING, GS_WAY_FULL, GS_WAY_COUNT };

/* gs_way_name() - "exclusive", "sharing", "full". gs_way_find(): the way, or -ENOENT. */
const char *gs_way_name(enum gs_way w);
int gs_way_find(const char *name);

enum gs_pod_state {
    GS_POD_PENDING = 0,
    GS_POD_RUNNING,
    GS_POD_COMPLETED,
    GS_POD_PREEMPTED, /* evicted and not running again (reports only; the core keeps PENDING) */
    GS_POD_REJECTED   /* can never run: admission or a limit refuses it */
};

/* gs_pod_state_name() - "pending", "running", ... as SCENARIO.md spells them. */
const char *gs_pod_state_name(enum gs_pod_state s);

/* How a scheduler runs: its way, and card mode conversion (the Simulation's cardModes). */
struct gs_tenancy_opts {
    enum gs_way way;
    int convert;         /* an empty card may change mode (gs_fleet_set_modes()); default 1 */
    int64_t min_hold_us; /* after holding its mode that long, microseconds (>= 0) */
    int nodes_later;     /* 1: @pol may have no node yet (a driver whose nodes join later makes
                            the scheduler again as they do); its pods wait, "0/0 nodes" */
};

/* One pod as the scheduler sees it. Strings are owned by the scheduler (or, for the spec's
 * names, by the caller's spec) and valid until the next call that changes it. */
struct gs_tenancy_pod {
    enum gs_pod_state state; /* PENDING, RUNNING, COMPLETED or REJECTED */
    int32_t tenant;          /* index into the policy's tenants; ntenants: none */
    int32_t queue;           /* index into the policy's queues; nqueues: the implicit default */
    int32_t priority;
    int32_t node;        /* node of its last placement, -1 when it never ran */
    uint32_t gpu_mask;   /* node-local cards of its last placement */
    int whole;           /* 1: exclusive cards; 0: shared slices, replicas or a MIG instance */
    int timeslice;       /* time-slice replicas */
    int32_t units;       /* slices or replicas on each card (gpusched.io/same-card), else 1 */
    const char *mig;     /* MIG profile of its demand (full way), NULL when none */
    int32_t mig_start;   /* the instance's first memory slice while placed, else -1 */
    int32_t share_milli; /* per card: 1000 when whole, else the compute share */
    int32_t slice_milli; /* running time-sliced: received per card and unit since it started, on
                            average up to the clock; else share_milli / units */
    int64_t milli;       /* GPU share charged to quotas and queues: cards x share */
    int32_t rate_milli;  /* busy milli-GPU per card it keeps its cards at full speed: gpu-util x
                            the compute share it asks, whatever the way gives it */
    int64_t alloc_milli; /* running: milli-GPU of its cards it holds now (a shared card's
                            allocation split among its pods), else 0 */
    int64_t busy_milli;  /* running: milli-GPU its kernels keep busy now, else 0 */
    int32_t ncards;      /* cards (or slices on distinct cards, or replicas) it asks */
    int64_t mem_mib;     /* shared: GPU memory per card, MiB; 0 otherwise */
    int64_t cpu_milli, memory_mib;               /* host CPU and memory, as admission left them */
    int64_t submit_us, start_us, first_start_us; /* start_us: of its last placement; -1 none */
    int32_t preemptions;                         /* times evicted */
    int32_t charged;    /* running, full way: 1 on its tenant's dedicated GPUQuota, 2 on its shared
                           one (another tenant may evict it), 0 neither */
    int64_t saved_us;   /* of its nominal run, what its checkpoints saved before this run */
    int64_t done_us;    /* running: of its nominal run, what this run did by the clock; else 0 */
    const char *reason; /* why it is not running, "" when it runs or has none */
    const char *why;    /* of that reason, the filter reason most nodes gave, in kube-scheduler's
                           words (a static gs_fit_reason_text()); NULL when the reason is not
                           about nodes (a quota, its gang, an eviction) */
    const char *field;  /* REJECTED: the Pod field at fault, as a JSON path ("spec.priority",
                           "spec.containers[].resources.limits.nvidia.com/gpu"); "spec" when no
                           one field is */
    int32_t field_at;   /* REJECTED: the container @field names (index in the pod's containers,
                           init ones first); -1 when it names none or the pod's sum */
};

enum gs_decision_kind { GS_DECIDE_BIND = 1, GS_DECIDE_EVICT };

/* One decision of a transaction. */
struct gs_decision {
    enum gs_decision_kind kind;
    int32_t pod;
    int32_t node;        /* where it was bound, or the node it left */
    uint32_t gpu_mask;   /* its cards there */
    int32_t share_milli; /* per card and unit: bind, what it asks (1000 whole); evict, what it
                            received on average since it started (time-sliced cards) or asked */
    int32_t by;          /* evict: the pod it made room for */
    int reclaim;         /* evict: 1 queue reclaim, 0 priority preemption */
};

/* What the scheduler's passes cost, in work done rather than seconds: for benchmarks. */
struct gs_tenancy_work {
    int64_t passes;          /* scheduling passes */
    int64_t tries;           /* pods (or gangs) tried in passes; alike ones are tried once */
    int64_t node_fits;       /* nodes a placement search filtered and scored */
    int64_t victim_searches; /* preemption or reclaim searches with someone to evict */
    int64_t victim_nodes;    /* nodes whose pods a victim search examined */
    int64_t victim_trials;   /* nodes where a victim search tried eviction sets */
};

/*
 * gs_tenancy_new() - a scheduler over @pol's nodes, every card free, no pod. @pol (its nodes,
 * templates, tenants, queues, PodGroups, classes, quotas) is borrowed until gs_tenancy_free().
 * Return: 0 and *@out; -EINVAL with @d (no nodes, unless @o->nodes_later; an unknown way, a
 * node's template or model unknown); -ENOMEM.
 */
int gs_tenancy_new(const struct gs_policy *pol, const struct gs_tenancy_opts *o,
                   struct gs_tenancy **out, struct gs_diag *d);

/* gs_tenancy_free() - NULL allowed. */
void gs_tenancy_free(struct gs_tenancy *t);

/*
 * gs_tenancy_admit() - what admission makes of pod @sp, without submitting it: @out as
 * gs_tenancy_pod() would show it pending (tenant, queue, priority, share), or REJECTED with the
 * reason in @why (at least 200 bytes). Return: 0 admitted; 1 rejected. Changes nothing.
 */
int gs_tenancy_admit(const struct gs_tenancy *t, const struct gs_pod_spec *sp,
                     struct gs_tenancy_pod *out, char *why, size_t size);

/*
 * gs_tenancy_submit() - pod @sp (borrowed while the pod is pending or running: a driver may free
 * it once gs_tenancy_cancel() or gs_tenancy_complete() let the pod go) arrives at @now; @seq
 * orders it among pods (unique, the driver's arrival order). It waits for the next pass.
 * Return: 0 and *@id; 1 rejected by admission, with @why (nothing kept); -ENOMEM.
 */
int gs_tenancy_submit(struct gs_tenancy *t, int64_t now, const struct gs_pod_spec *sp, int64_t seq,
                      int32_t *id, char *why, size_t size);

/* gs_tenancy_refused_field() - the Pod field the last submission admission refused was refused
 * for, as gs_tenancy_pod()'s field gives it, with the container at fault named by its index where
 * one is ("spec.containers[1].resources.limits.memory"). Owned by @t, valid until the next
 * submission. */
const char *gs_tenancy_refused_field(const struct gs_tenancy *t);

/*
 * gs_tenancy_complete() - running pod @id ended at @now: its cards and quotas go back; in
 * *@share_milli (may be NULL) what it received per card and unit on average since it started,
 * as a bind or evict decision gives it. A pod that ended Succeeded counts towards its gang's
 * minMember from then on; one its activeDeadlineSeconds ended with work left Failed
 * (DeadlineExceeded), as the kubelet fails it, and counts for nothing, as Volcano counts it.
 * Return: 0 Succeeded; 1 Failed; -EINVAL when it is not running; -ENOMEM.
 */
int gs_tenancy_complete(struct gs_tenancy *t, int64_t now, int32_t id, int32_t *share_milli);

/*
 * gs_tenancy_cancel() - pod @id, pending or running, is deleted at @now: what it held goes back
 * and it is never tried again (gs_tenancy_pod() shows it COMPLETED). Return: 0; -EINVAL when it
 * is already gone.
 */
int gs_tenancy_cancel(struct gs_tenancy *t, int64_t now, int32_t id);

/*
 * gs_tenancy_release() - the driver is done with pod @id, completed or cancelled, and holds no
 * decision naming it: its record may serve a pod submitted later, which then gets @id, so a
 * service that runs for months holds the records of the pods it holds, not of every pod it has
 * seen. A member of a gang is kept (its gang counts it) until its PodGroup is dropped. Decisions
 * do not change: every order among pods goes by their seq, never by their ids. Its `user` label
 * (maxPodsPerUser's count) is forgotten once no pod still held names it, so distinct users cost
 * memory only while their pods are held; the pod's spec must still be readable during the call.
 * A driver that never releases (the simulator, which reads every pod at the end) keeps them all.
 * Return: 0; -EINVAL when @id is not a completed or cancelled pod, or was released before;
 * -ENOMEM.
 */
int gs_tenancy_release(struct gs_tenancy *t, int32_t id);

/*
 * gs_tenancy_podgroup() - PodGroup @g (copied) is made, or made again with a new spec: pods that
 * name it from now on are members of its gang. The policy's PodGroups exist from the start. In
 * the full way a pod may name a PodGroup before it is made (Kubernetes objects come in any
 * order): it waits, tried by no pass and counted by no queue, until the PodGroup is made; then
 * admission reads it again (the PodGroup's queue and PriorityClass) and it arrives.
 * Return: 0; -EINVAL (minMember below 1); -ENOMEM.
 */
int gs_tenancy_podgroup(struct gs_tenancy *t, const struct gs_podgroup_spec *g);

/* gs_tenancy_podgroup_drop() - PodGroup @ns/@name is deleted: pods that name it later wait for it
 * to be made again, a new gang (its members that completed no longer count, as a PodGroup made
 * anew counts none); those released go (gs_tenancy_release()).
 * Return: 0; -ENOENT; -EBUSY while a pod of it is pending or running. */
int gs_tenancy_podgroup_drop(struct gs_tenancy *t, const char *ns, const char *name);

/*
 * gs_tenancy_podgroup_succeeded() - @n members of PodGroup @ns/@name completed before this
 * scheduler was made (a driver restarting from its store, or making a new scheduler of the pods
 * it holds): from now on they count towards its minMember as members completed here do, in
 * place of those counted so far (Volcano counts a PodGroup's Succeeded pods, status.succeeded,
 * towards minMember). Return: 0; -ENOENT (no such PodGroup); -EINVAL (@n below 0); -ENOMEM.
 */
int gs_tenancy_podgroup_succeeded(struct gs_tenancy *t, const char *ns, const char *name,
                                  int32_t n);
/* gs_tenancy_podgroup_done() - the members of PodGroup @ns/@name counted as completed (what
 * gs_tenancy_podgroup_succeeded() sets), or -ENOENT. */
int32_t gs_tenancy_podgroup_done(const struct gs_tenancy *t, const char *ns, const char *name);
/* gs_tenancy_podgroup_lacking() - the members PodGroup @ns/@name lacks to be ready, counted as
 * gs_tenancy_probe_gang_lacking() counts them (running or Succeeded; minMember and each task's
 * minimum): >= 0; -ENOENT (no such PodGroup, or one only its pods have named: not made yet). */
int32_t gs_tenancy_podgroup_lacking(const struct gs_tenancy *t, const char *ns, const char *name);

/*
 * gs_tenancy_bind_to() - place pending pod @id on node @node now, as a binder outside the
 * scheduler (kube-scheduler through the extender) asks: only there, with every quota checked and
 * no eviction. The bind decision is handed out by the next gs_tenancy_schedule().
 * Return: 0 bound; 1 it does not fit there (gs_tenancy_pod() says why); -EINVAL (not pending, no
 * such node); -ENOMEM.
 */
int gs_tenancy_bind_to(struct gs_tenancy *t, int64_t now, int32_t id, int32_t node);

/*
 * gs_tenancy_requeue() - running pod @id gives its cards back at @now and waits again, as a
 * node's failure puts its pods back, @why (copied, cut to GS_REASON_MAX - 1 bytes) its reason
 * until a pass tries it: for a driver whose binder has not started it yet (a gang member held
 * for mates that are gone). Its gang mates stay where they are. The eviction decision (by -1)
 * is handed out by the next gs_tenancy_schedule(). Return: 0; -EINVAL (no such pod, or not
 * running); -ENOMEM.
 */
int gs_tenancy_requeue(struct gs_tenancy *t, int64_t now, int32_t id, const char *why);

/*
 * gs_tenancy_restore() - put pending pod @id back where it ran (a driver restarting from its
 * store): on node @node, cards @gpu_mask, a MIG instance at @mig_start (else -1), running since
 * @start_us. No decision is made of it. Its work counts from @start_us at the speed it runs at
 * now, unless its spec gives done_us (GS_PLACED_DONE; a snapshot: what it did of its nominal
 * run by the clock's now), which then counts from now. The node's taints do not keep it off (it
 * ran there: a taint added since keeps new pods away and evicts none, gs_node_set_taints()).
 * Return: 0; -EINVAL when it does not fit there exactly.
 */
int gs_tenancy_restore(struct gs_tenancy *t, int32_t id, int32_t node, uint32_t gpu_mask,
                       int32_t mig_start, int64_t start_us);

/*
 * gs_tenancy_node_ready() - node @node became ready (@ready 1) or not (0) at @now. A node not
 * ready takes no pod; with @evict the pods on it, and the rest of their gangs, are evicted (by
 * -1) and wait again; without, they stay (a driver whose pods another system evicts by their
 * own tolerations: Kubernetes' taint manager). gs_tenancy_card_health(): card @gpu of @node healthy
 * or not; an unhealthy card takes no new pod, and when @evict (the fault killed the work on it) its
 * pods and their gangs wait again. Return: 0; -EINVAL (no such node or card); -ENOMEM.
 */
int gs_tenancy_node_ready(struct gs_tenancy *t, int64_t now, int32_t node, int ready, int evict);
int gs_tenancy_card_health(struct gs_tenancy *t, int64_t now, int32_t node, int gpu, int healthy,
                           int evict);

/*
 * gs_tenancy_card_mode() - card @gpu of @node last took mode @mode (not GS_CARD_FREE) at
 * @since_us, no later than now: a snapshot's card put back (gs_fleet_set_card_history()), after
 * its pods are; from then on an empty card changes mode as cardModes allows counting from then.
 * Pending pods are tried on @node again (a hold may have ended).
 * Return: 0; -EINVAL (no such node or card, @since_us after now, a mode its pods or its node
 * cannot have); -ENOMEM.
 */
int gs_tenancy_card_mode(struct gs_tenancy *t, int32_t node, int gpu, int mode, int64_t since_us);

/*
 * gs_xid_loses_work() - whether Xid @xid means the work on the card died, so its pods are
 * evicted with the card (gs_tenancy_card_health()'s @evict): the ones NVIDIA's Xid catalogue
 * (docs.nvidia.com/deploy/xid-errors) has end or lose the running contexts — 48 (double-bit
 * ECC), 63/64 (row remapping), 74 (NVLink), 79 (fallen off the bus), 94/95 (contained or
 * uncontained ECC) — and 0, a failure without an Xid, taken at its worst. Return: 1 or 0.
 */
int gs_xid_loses_work(int xid);

/*
 * gs_tenancy_node_topology() - node @node's PCIe domains, NVLink groups and NVLink pair counts
 * are found to be @pcie, @nvlink and @links (as gs_fleet_set_topology() takes them) at @now: from
 * then on placement reads these in place of its template's. What runs there stays; the pending
 * pods are tried on the node again. Return: 0; -EINVAL (no such node, an index out of range);
 * -ENOMEM.
 */
int gs_tenancy_node_topology(struct gs_tenancy *t, int64_t now, int32_t node, const uint8_t *pcie,
                             const uint8_t *nvlink, const uint8_t (*links)[GS_GPUS_MAX]);

/*
 * The extender's questions about a pod kube-scheduler is placing: could it go on node @node now,
 * and how well. gs_tenancy_probe_new() admits @sp (borrowed while the probe lives) without
 * submitting it: 0 and *@out; 1 with @why (admission refuses it); -ENOMEM.
 * gs_tenancy_probe_node(): 0 and *@scored, 0..1000, the weighted score placement would give it
 * there (divided by the largest possible); 1 with *@why (static or the probe's, valid until the
 * next call): a quota it is over, the node's filter reason in kube-scheduler's words, or the
 * node held for the head of the queue, which the pod would delay (EASY backfill, backfill.c:
 * the pods' ends are their sim.gpusched.io/duration walltimes). The answer holds until the
 * scheduler next changes; a probe remembers its quota answers per GPU model, and the scheduler
 * each node's filter and score for the last few pod shapes until that node changes
 * (gs_fleet_node_version()). O(cards and pods of the node); O(1) for a node asked about before
 * for a pod of the same shape.
 */
struct gs_tenancy_probe;
int gs_tenancy_probe_new(struct gs_tenancy *t, const struct gs_pod_spec *sp,
                         struct gs_tenancy_probe **out, char *why, size_t size);
int gs_tenancy_probe_node(struct gs_tenancy *t, struct gs_tenancy_probe *pr, int32_t node,
                          int32_t *scored, const char **why);
void gs_tenancy_probe_free(struct gs_tenancy_probe *pr);
/*
 * gs_tenancy_probe_gang_lacking() - the members the probed pod's gang lacks to be ready, as
 * Volcano's gang plugin counts them (running or Succeeded: minMember, and each task's
 * minTaskMember), the probed pod among them; 0 for a pod of no gang (or whose tenant turns gangs
 * off) or one whose gang is ready. O(1); O(members x tasks) with minTaskMember.
 */
int32_t gs_tenancy_probe_gang_lacking(const struct gs_tenancy *t,
                                      const struct gs_tenancy_probe *pr);
/*
 * gs_tenancy_probe_nodes() - gs_tenancy_probe_node() of each of the @n nodes @node (indexes; one
 * below 0 is skipped, its entries untouched) into @scored[i] (0..1000 it fits; -1 it does not,
 * with @why[i] as gs_tenancy_probe_node() gives it): the same answers, a node asked about before
 * for a pod of the same shape costing a comparison. Return: 0. O(n) for such nodes.
 */
int gs_tenancy_probe_nodes(struct gs_tenancy *t, struct gs_tenancy_probe *pr, const int32_t *node,
                           size_t n, int32_t *scored, const char **why);

/*
 * gs_tenancy_probe_may_evict() - may the probed pod evict running pod @pod (the scheduler's pod
 * id), as the scheduler's own evictions would: priority preemption takes a preemptible pod of
 * lower priority, or, while the probed pod is within its tenant's dedicated GPUQuota, another
 * tenant's pod at its priority or below, or an elastic gang's member beyond minMember (none of
 * them for a pod whose PriorityClass says preemptionPolicy: Never); a reclaim takes a pod of a
 * reclaimable queue over its deserved share, from another queue; neither takes a member of the
 * probed pod's own gang, a pod in another tenant's dedicated quota, nor one under the churn
 * guard (GS_EVICTIONS_MAX, GS_READMIT_GRACE_US). A gang member goes with its gang, so it may be
 * taken only when its gang may. Return: 1 may; 0 may not (or @pod is not running). O(members
 * of its gang).
 */
int gs_tenancy_probe_may_evict(const struct gs_tenancy *t, const struct gs_tenancy_probe *pr,
                               int32_t pod);

/*
 * gs_tenancy_probe_without() - would the probed pod fit node @node were the running pods
 * @gone[0..@n) (all on that node) evicted, as kube-scheduler's preemption asks: its quota
 * answers as gs_tenancy_probe_node() gives them, the node's cards as they would be. Nothing
 * changes. Return: 1 fits; 0 not; -EINVAL (a pod of @gone not running there); -ENOMEM.
 */
int gs_tenancy_probe_without(struct gs_tenancy *t, struct gs_tenancy_probe *pr, int32_t node,
                             const int32_t *gone, size_t n);

/*
 * gs_tenancy_decisions() - the decisions made since gs_tenancy_schedule() last handed some out
 * (events such as gs_tenancy_bind_to() or a node failing make them too), without a pass: *@dec
 * (owned by @t, valid until the next call that decides) and *@n.
 */
void gs_tenancy_decisions(struct gs_tenancy *t, const struct gs_decision **dec, size_t *n);

/*
 * gs_tenancy_now() - the scheduler's clock: the latest time any call gave it (it never goes
 * back), in µs on the caller's clock; the time its decisions were made, and pods' starts counted.
 */
int64_t gs_tenancy_now(const struct gs_tenancy *t);

/*
 * gs_tenancy_advance() - move the clock to @now without a pass: the time-sliced pods' progress
 * and the tenants' time are settled up to then. Return: 0; -ENOMEM.
 */
int gs_tenancy_advance(struct gs_tenancy *t, int64_t now);

/*
 * gs_tenancy_schedule() - a scheduling pass at @now, when anything changed since the last one,
 * and the decisions made since the last call (passes and events), in the order made: *@dec
 * (owned by @t, valid until the next call), *@n of them. Return: 0; -ENOMEM (then the pass
 * stopped part-way: what it decided before is in *@dec and stands).
 */
int gs_tenancy_schedule(struct gs_tenancy *t, int64_t now, const struct gs_decision **dec,
                        size_t *n);

/*
 * gs_tenancy_due() - a running pod whose walltime (sim.gpusched.io/duration, stretched on
 * time-sliced cards by the share it gets) has run out by @now, taken off the list of expected
 * ends: 1 and *@id; 0 when none. gs_tenancy_next_end(): the earliest expected end of a running
 * pod, INT64_MAX when none declares one. A driver whose pods end when their work is done (the
 * simulator) completes them then; backfill reads the same ends.
 */
int gs_tenancy_due(struct gs_tenancy *t, int64_t now, int32_t *id);
int64_t gs_tenancy_next_end(struct gs_tenancy *t);

/* gs_tenancy_wake() - when a pass should run next though no pod arrives or ends: an empty card's
 * mode hold ends, or a pod skipped while its victim search backed off tries again (us on the
 * scheduler's clock); INT64_MAX when none is due. */
int64_t gs_tenancy_wake(const struct gs_tenancy *t);

/* gs_tenancy_pod() - pod @id as the scheduler sees it (reasons of pods alike settled first).
 * Return: 0; -ENOENT for an id never given. */
int gs_tenancy_pod(struct gs_tenancy *t, int32_t id, struct gs_tenancy_pod *out);

/* Counters for reports; every index as in the policy (tenants: ntenants + 1, the last for pods
 * of no tenant; queues: nqueues + 1, the last the implicit default queue). */
size_t gs_tenancy_pod_count(const struct gs_tenancy *t);
size_t gs_tenancy_queue_count(const struct gs_tenancy *t);
int64_t gs_tenancy_allocated(const struct gs_tenancy *t);              /* gs_fleet_allocated() */
int64_t gs_tenancy_tenant_milli(const struct gs_tenancy *t, size_t i); /* held now (ledger) */
int64_t gs_tenancy_queue_milli(const struct gs_tenancy *t, size_t q);  /* held now */
int64_t gs_tenancy_queue_deserved(const struct gs_tenancy *t, size_t q);
int32_t gs_tenancy_queue_weight(const struct gs_tenancy *t, size_t q);
int64_t gs_tenancy_queue_demand(const struct gs_tenancy *t, size_t q); /* pending + running */
const struct gs_tenancy_work *gs_tenancy_work(const struct gs_tenancy *t);

/*
 * The work ledger (src/core/tenancy/work.c; the work model is docs/utilisation.md's): what pods
 * hold of the cards and keep busy (as DCGM_FI_DEV_GPU_UTIL measures a card), now in milli-GPU,
 * and integrated up to the clock in milli-GPU x seconds. A card's allocation is min(1000, the
 * shares on it), split among its pods by share, so tenants, queues and models add up to the
 * fleet; busy is at most the allocation. @lost_milli_s: the busy time of runs whose work was
 * discarded (evicted, on a failed node or card, deleted while running); goodput is busy less
 * lost. @short_milli_s, tenants only: how far below its GPUQuota dedicated cards of each model
 * the tenant held while pods of its that could run on that model waited (a node of the model has
 * the cards they ask, in one NVLink group where their tier requires one, and their GPU-model
 * constraint allows it), min(dedicated - held, waiting) per model, summed and integrated: 0 when
 * the guarantee always held.
 * gs_tenancy_usage(): @of picks the ledger, @i the tenant, queue or catalog model (as
 * gs_tenancy_tenant_milli() and gs_tenancy_queue_milli() number them; ignored for the fleet).
 * Return: 0 and *@out; -ENOENT for an index out of range. O(1).
 */
enum gs_usage_of { GS_USAGE_FLEET = 0, GS_USAGE_TENANT, GS_USAGE_QUEUE, GS_USAGE_MODEL };
struct gs_tenancy_usage {
    int64_t alloc_milli, busy_milli;                   /* now */
    int64_t alloc_milli_s, busy_milli_s, lost_milli_s; /* up to the clock */
    int64_t short_milli_s;                             /* tenants: below dedicated quota */
};
int gs_tenancy_usage(const struct gs_tenancy *t, enum gs_usage_of of, size_t i,
                     struct gs_tenancy_usage *out);
/* gs_tenancy_usage_at() - as gs_tenancy_usage(), the integrals carried on from the clock to
 * @at_us (microseconds, not before the clock) at what is held and busy now: a driver's samples
 * between two events. */
int gs_tenancy_usage_at(const struct gs_tenancy *t, enum gs_usage_of of, size_t i, int64_t at_us,
                        struct gs_tenancy_usage *out);

/*
 * The ledger as it stands: gs_tenancy_quota_used() - tenant @tenant's GPUQuota use on catalog
 * model @model, milli-GPU, in *@ded (dedicated) and *@sh (shared). gs_tenancy_rquota_used() -
 * what the pods ResourceQuota @i of the policy counts hold: @used[0] requests.nvidia.com/gpu
 * (cards), [1] requests.nvidia.com/gpumem (MiB), [2] requests.cpu (milli-CPU), [3]
 * requests.memory (MiB), [4] pods. Zero for an index out of range. O(1).
 */
void gs_tenancy_quota_used(const struct gs_tenancy *t, size_t tenant, int model, int64_t *ded,
                           int64_t *sh);
void gs_tenancy_rquota_used(const struct gs_tenancy *t, size_t i, int64_t used[5]);
const struct gs_fleet *gs_tenancy_fleet(const struct gs_tenancy *t);

/*
 * gs_tenancy_slice_totals() - time-sliced cards (seed 000 §2.1): what tenant @tenant's pods asked
 * while they ran, what weighted round-robin over the queues on each card entitled it to, and what
 * it received, milli-GPU x seconds, up to the clock. gs_tenancy_slice_any(): some pod ran
 * time-sliced.
 */
void gs_tenancy_slice_totals(const struct gs_tenancy *t, size_t tenant, int64_t *asked_milli_s,
                             int64_t *entitled_milli_s, int64_t *received_milli_s);
int gs_tenancy_slice_any(const struct gs_tenancy *t);

#endif
