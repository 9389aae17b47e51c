/*
 * gpusched — the multi-tenant discrete-event simulator: a scenario (gpusched/scenario.h) run in
 * simulated time.
 *
 * Events are pod arrivals and completions; at each instant every event due is applied, then the
 * pending queue is tried in GPUQueueSort order: priority, then the queue's fair-share deficit
 * (used / deserved, lowest first), then arrival. What the scheduler may do depends on the way the
 * scenario is run:
 *   exclusive  whole exclusive cards only (a fractional request takes whole cards); no tiers,
 *              no GPUQuota, no gangs, no preemption — a device-plugin cluster;
 *   sharing    fractions of cards (memory MiB + compute share, vGPU classes) and time-slice
 *              replicas, otherwise as exclusive;
 *   full       sharing, the four topology tiers, GPUQuota, queues with deserved shares and
 *              reclaim, gangs (all-or-nothing), priority preemption and backfill with a
 *              reservation for the head of the queue.
 * Namespace ResourceQuota and LimitRange are Kubernetes admission and apply in every way.
 * Time-sliced cards share their time by weighted water-filling over the tenant queues on them
 * (src/sim/tenancy_slice.c): a pod there runs at what it gets over what it asks, so its end
 * stretches, and is recomputed whenever the pods on its cards change.
 * Determinism: same scenario, same way, same result, byte for byte (no randomness is used; every
 * tie goes to the lowest index).
 * Thread safety: a run touches only its own state; runs may go on in parallel threads.
 */
#ifndef GPUSCHED_TSIM_H
#define GPUSCHED_TSIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpusched/tenancy.h"

struct gs_diag;
struct gs_scenario;
struct gs_tsim;

/* One pod's outcome. Strings are owned by the run. */
struct gs_tsim_pod {
    const char *ns, *name, *tenant, *queue, *workload;
    enum gs_pod_state state;
    int32_t node;      /* node index of its last placement, -1 when it never ran */
    uint32_t gpu_mask; /* node-local GPU indexes of its last placement */
    int whole;         /* 1: exclusive cards; 0: shared slices or a MIG instance */
    const char *mig;   /* MIG profile of its last placement, NULL when none */
    int32_t mig_start; /* and the instance's first memory slice */
    int32_t share_milli;
    int32_t priority;
    int64_t submit_us, start_us, end_us; /* start/end -1 when not reached */
    int32_t preemptions;
    const char *reason; /* why it is not running, or NULL */
};

/* One contiguous run of a pod on its devices (a pod preempted and run again has two). */
struct gs_tsim_use {
    int32_t pod;
    int32_t node;
    uint32_t gpu_mask;
    int whole;
    int timeslice;       /* time-slice replicas: share_milli is the card's time each received on
                            average over the use, rounded up (what billing meters) */
    int32_t share_milli; /* per card (per slice or replica): 1000 when whole */
    int32_t units;       /* slices or replicas on each card (gpusched.io/same-card), else 1 */
    int64_t start_us, end_us;
    const char *mig; /* MIG profile of the instance held, NULL when none */
    int32_t mig_start;
};

/* Waits from submission to first start (a pod never started waited to the end), nearest rank. */
struct gs_tsim_waits {
    int64_t p50_us, p95_us, p99_us, max_us;
};

/*
 * What pods held and did, milli-GPU x seconds (the work ledger of gpusched/tenancy.h,
 * gs_tenancy_usage()): allocated (a shared card's allocation split among its pods, so parts add up
 * to the fleet), busy (as DCGM_FI_DEV_GPU_UTIL measures the cards), and of busy the work discarded
 * by evictions and failures (lost); goodput = busy - lost.
 */
struct gs_tsim_usage {
    int64_t gpu_milli_s, busy_milli_s, lost_milli_s, goodput_milli_s;
};

/* Per-tenant totals. */
struct gs_tsim_tenant {
    const char *name;
    int64_t pods, completed, preemptions;
    int64_t gpu_milli_s;  /* allocated milli-GPU x seconds (as usage.gpu_milli_s) */
    int64_t busy_milli_s; /* modelled busy milli-GPU x seconds (as usage.busy_milli_s) */
    struct gs_tsim_usage usage;
    int64_t short_milli_s; /* below its GPUQuota dedicated cards of a model while pods that could
                              use them waited (the guarantee's shortfall, gs_tenancy_usage());
                              0 when it held */
    struct gs_tsim_waits wait;
    int64_t entitlement_milli; /* GPUQuota total over its models, 0 when it has none */
    /* On time-sliced cards, milli-GPU x seconds: what its pods asked (nvidia.com/gpucores, else
     * whole cards) while they ran, what weighted round-robin over the tenant queues on each card
     * entitled it to (its queue's weight over theirs), and what it received. */
    int64_t ts_asked_milli_s, ts_entitled_milli_s, ts_received_milli_s;
};

/* Per-queue totals. */
struct gs_tsim_queue {
    const char *name;
    int32_t weight;
    int64_t deserved_milli; /* at the end of the run */
    int64_t gpu_milli_s;    /* allocated milli-GPU x seconds */
    struct gs_tsim_usage usage;
};

/* Per GPU model of the fleet (catalog name, its cards). */
struct gs_tsim_model {
    const char *name;
    int64_t gpus;
    struct gs_tsim_usage usage;
};

/* Per-workload-kind waits (label gpusched.io/workload). */
struct gs_tsim_kind {
    const char *name;
    int64_t pods, started;
    struct gs_tsim_waits wait;
};

struct gs_tsim_summary {
    enum gs_way way;
    int64_t horizon_us;         /* end of the measured window */
    int64_t gpus;               /* cards */
    int32_t allocation_milli;   /* time-averaged allocated share of the cards, 0..1000 */
    int32_t utilization_milli;  /* time-averaged modelled busy share, 0..1000 */
    int32_t goodput_milli;      /* of it, the work that completed or still runs, 0..1000 */
    int32_t ceiling_milli;      /* busy were every card held all the time by the pods in the
                                   proportions they ask for it (their work over what they hold:
                                   whole cards, or shares), 0..1000 */
    struct gs_tsim_usage usage; /* the fleet's */
    int64_t pods, completed, running, pending, rejected, preempted_pods;
    int64_t preemptions; /* evictions by priority preemption */
    int64_t reclaims;    /* evictions by queue reclaim */
    int32_t jain_milli;  /* Jain's index over tenants' allocation per entitlement */
    int64_t events;
    int timeslice; /* some pod ran on a time-sliced card (reports then show the tenants' time) */
    int modes;     /* the scenario configures card modes (reports then show conversions) */
    int64_t conversions; /* empty cards that changed mode (gs_fleet_conversions()) */
};

/* What a run cost the scheduler, in work done rather than seconds: for benchmarks. */
struct gs_tsim_work {
    int64_t passes;          /* scheduling passes (one per instant with events) */
    int64_t tries;           /* pods (or gangs) tried in passes; alike ones are tried once */
    int64_t node_fits;       /* nodes a placement search filtered and scored */
    int64_t victim_searches; /* preemption or reclaim searches with someone to evict */
    int64_t victim_nodes;    /* nodes whose pods a victim search examined */
    int64_t victim_trials;   /* nodes where a victim search tried eviction sets */
};

/*
 * gs_tsim_run() - simulate @s (resolved; borrowed for the life of the result) the @way way.
 * Return: 0 and *@out (free with gs_tsim_free()); -EINVAL with @d for a scenario that cannot be
 * run (no nodes); -ENOMEM.
 * Complexity: per instant with events, the pending buckets (pods alike) times the nodes freed
 * since each last failed, plus the victim searches; see bench/README.md for figures.
 */
int gs_tsim_run(const struct gs_scenario *s, enum gs_way way, struct gs_tsim **out,
                struct gs_diag *d);

/* gs_tsim_free() - NULL allowed. */
void gs_tsim_free(struct gs_tsim *t);

/* Results; every pointer is owned by @t. */
const struct gs_tsim_summary *gs_tsim_summary(const struct gs_tsim *t);
const struct gs_tsim_work *gs_tsim_work(const struct gs_tsim *t);
size_t gs_tsim_pod_count(const struct gs_tsim *t);
const struct gs_tsim_pod *gs_tsim_pod(const struct gs_tsim *t, size_t i);
size_t gs_tsim_use_count(const struct gs_tsim *t);
const struct gs_tsim_use *gs_tsim_use(const struct gs_tsim *t, size_t i);
size_t gs_tsim_tenant_count(const struct gs_tsim *t);
const struct gs_tsim_tenant *gs_tsim_tenant(const struct gs_tsim *t, size_t i);
size_t gs_tsim_queue_count(const struct gs_tsim *t);
const struct gs_tsim_queue *gs_tsim_queue(const struct gs_tsim *t, size_t i);
size_t gs_tsim_model_count(const struct gs_tsim *t);
const struct gs_tsim_model *gs_tsim_model(const struct gs_tsim *t, size_t i);
size_t gs_tsim_kind_count(const struct gs_tsim *t);
const struct gs_tsim_kind *gs_tsim_kind(const struct gs_tsim *t, size_t i);

/* gs_tsim_node_name() - the name of node @i of the run's scenario; gs_tsim_node_model(): its
 * catalog model index. */
const char *gs_tsim_node_name(const struct gs_tsim *t, int32_t i);
int gs_tsim_node_model(const struct gs_tsim *t, int32_t i);

/*
 * gs_tsim_write_json() - write @n runs of one scenario as the JSON object of SCENARIO.md:
 * {"way", "pods", "summary"} for one run; for several, the last run's "way", "pods" and
 * "summary" at the top and every run under "ways" (each {"way", "pods", "summary"}). Every pod
 * has "usage": one entry per contiguous run on its devices (mode, model, cards, share_milli,
 * start_s, end_s), the input of `gpusched bill`. Times are whole simulated seconds.
 * Return: 0; -EIO when writing fails; -ENOMEM.
 */
int gs_tsim_write_json(FILE *f, struct gs_tsim *const *runs, size_t n);

/*
 * gs_tsim_bill() - meter every use of @t's pods into @b (its rate card prices them), exactly as
 * `gpusched bill` meters the "usage" entries gs_tsim_write_json() writes for them.
 * Return: 0; the first error of gs_bill_add_use() with @d (a resource the rate card cannot price:
 * -ENOENT; -ERANGE; -E2BIG; -ENOMEM).
 */
struct gs_bill;
int gs_tsim_bill(const struct gs_tsim *t, struct gs_bill *b, struct gs_diag *d);

/*
 * gs_tsim_write_text() - a person's report of @n runs: per run the summary, the tenants, the
 * queues and the workload kinds; for several runs a side-by-side table first.
 */
void gs_tsim_write_text(FILE *f, struct gs_tsim *const *runs, size_t n);

#endif
