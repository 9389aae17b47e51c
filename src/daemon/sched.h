/*
 * gpuschedd's scheduler: the one core scheduler (gpusched/tenancy.h) on the daemon's clock.
 *
 * The daemon keeps no scheduling policy of its own. Its policy is the core's, over the inventory
 * (inventory.c), the policy files of its DaemonConfig (GPUQuota, ResourceQuota, LimitRange,
 * Queue, PodGroup, PriorityClass, VirtualGPUClass, the step profiles, the topology policy and
 * the GpuClusterPolicy, read by the simulator's loader) and its tenants (each DaemonConfig
 * tenant owns its namespaces; the queues are the Queue documents, and a pod that names none runs
 * in `default`, as in Volcano and the simulator). Pods go in as they are
 * submitted or bound, events as they happen; after each batch of requests a pass runs and its
 * decisions are carried out here: the store, the ledger, the logs and the counters follow every
 * bind and eviction.
 *
 * The clock is the wall clock, or the manual one with --manual-clock (POST /v1/clock moves it;
 * pods then end when their declared walltime runs out, as in a simulated run, and a pass runs
 * only when the clock request asks for one).
 */
#ifndef GSD_SCHED_H
#define GSD_SCHED_H

#include "gpusched/policy.h"

#include <stddef.h>
#include <stdint.h>

struct gs_diag;
struct gs_scenario;
struct gs_tenancy;
struct gsd_bind;
struct gsd_ferr;
struct gsd_pod;
struct gsd_state;

struct gsd_sched {
    struct gs_policy pol;           /* what the core reads; its arrays are borrowed or below */
    struct gs_tenant_spec *tenants; /* pol.tenants: the policy files' and the DaemonConfig's */
    struct gs_tenancy *tn;
    struct gsd_pod **by_sid; /* the scheduler's pod ids -> the pods held, NULL once gone */
    size_t nsid, capsid;
    int passed; /* a pass or an event decided since the pending pods' reasons were read */
};

/*
 * gsd_sched_open() - the scheduler of @st's inventory, configuration and PodGroups, no pod.
 * Return: 0; -EINVAL with @d (a node the scheduler refuses); -E2BIG; -ENOMEM.
 */
int gsd_sched_open(struct gsd_state *st, struct gs_diag *d);
void gsd_sched_close(struct gsd_state *st);

/* gsd_sched_now() - the scheduler's clock: wall clock microseconds, or the manual clock. */
int64_t gsd_sched_now(const struct gsd_state *st);

/*
 * gsd_sched_submit() - pod @p (its spec parsed, seq and names set) goes to the scheduler.
 * Return: 0; -EINVAL with @e (400: admission refuses it, e.g. maxGPUsPerPod, a LimitRange, a
 * VirtualGPUClass or MIG profile no node offers); -ENOMEM.
 */
int gsd_sched_submit(struct gsd_state *st, struct gsd_pod *p, struct gsd_ferr *e);

/*
 * gsd_sched_run() - a pass when anything changed, then every decision since the last run
 * carried out: binds start pods (store, ledger), evictions send them back to pending (an
 * extender pod is also evicted in Kubernetes, see kube.c). Return: 0; -EIO (the store failed:
 * st->failed is set); -ENOMEM.
 */
int gsd_sched_run(struct gsd_state *st);

/*
 * gsd_sched_adopt() - submitted pod @p, not linked yet (no pass since its submission), runs from
 * now on node @node (inventory index) on cards @gpu_mask (bit i: card i), its MIG instance at
 * @mig_start (-1 none): a pod found bound in Kubernetes by gpuschedd's annotations that its
 * store does not hold. gs_tenancy_restore() decides whether it fits there exactly (the rule a
 * restart puts a stored pod back by); no decision is made of it; its run counts from now, over
 * quota too. Return: 0 (p->state GSD_RUNNING, its placement synced); 1 it does not fit there
 * (@p still pending); -ENOMEM.
 */
int gsd_sched_adopt(struct gsd_state *st, struct gsd_pod *p, int node, uint32_t gpu_mask,
                    int mig_start);

/* gsd_sched_take() - carry out the decisions events made since the last run, without a pass
 * (a bind the extender asked, a node failing). Return: as gsd_sched_run(). */
int gsd_sched_take(struct gsd_state *st);

/* gsd_sched_forget() - pod @p leaves the daemon: the scheduler no longer names it (@done: it was
 * completed there already, else it is cancelled there). */
void gsd_sched_forget(struct gsd_state *st, struct gsd_pod *p, int done);

/*
 * gsd_sched_clock() - the manual clock moves to @to (microseconds, not before now), as a
 * simulated run moves: at each time before it that a running pod's walltime runs out (or a card's
 * mode hold ends), those pods complete and a pass runs; at @to, the pods due complete. The one
 * pass at @to is the request batch's, after the nodes silent too long are NotReady, as the
 * simulator runs one pass per instant after its node events; without @pass, passes wait
 * (st->held) for the next call with @pass. Return: as gsd_sched_run().
 */
int gsd_sched_clock(struct gsd_state *st, int64_t to, int pass);

/* gsd_sched_evict() - queue the Eviction of pod @p (GSD_EVICTING) in the API server, sent once the
 * batch commits (st->evictions, handed to a bind thread by server.c); @again: decided before a
 * restart, so perhaps sent already (kube.h). Out of memory it is logged and not sent (the pod's
 * node then stays closed to the extender until the pod goes). */
void gsd_sched_evict(struct gsd_state *st, const struct gsd_pod *p, int again);
/* gsd_sched_api_call() - queue API call @b (taken; NULL: out of memory, logged) about pod @p, to
 * be made once the batch commits, as gsd_sched_evict() queues an Eviction. */
void gsd_sched_api_call(struct gsd_state *st, struct gsd_bind *b, const struct gsd_pod *p);

/*
 * gsd_own_words() - @reason (GSD_REASON_MAX bytes, NUL-ended, rewritten in place) as tenant
 * @tenant may read it: where the scheduler names the pod one was evicted for ("preempted by
 * NS/NAME", "reclaimed by NS/NAME") or the pod backfill holds cards for ("held for NS/NAME, which
 * waits ahead in the queue"), another tenant's pod is "a pod of another tenant", as no tenant
 * learns another's pod names or namespaces (security.md); the log names it.
 */
void gsd_own_words(const struct gsd_state *st, const char *tenant, char *reason);

/* gsd_sched_sync() - @p's view (state, reason, placement) from the scheduler. Return: 1 when its
 * reason changed; 0 when not (or, out of memory, the reason it had stays). */
int gsd_sched_sync(struct gsd_state *st, struct gsd_pod *p);

/* gsd_sched_tenant() - the scheduler's index of tenant @name, or -1. */
int gsd_sched_tenant(const struct gsd_state *st, const char *name);

/* gsd_node_index() - the index of node @name in the inventory, or -ENOENT. */
int gsd_node_index(const struct gsd_state *st, const char *name);

#endif
