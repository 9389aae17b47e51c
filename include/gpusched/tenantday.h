/*
 * gpusched — the tenant-day scenario generator: one simulated day of the seeds' three tenants on a
 * two-zone cluster, written as the multi-document YAML `gpusched simulate` reads (SCENARIO.md).
 *
 * What is written, in this order: a `Simulation` document; a `Cluster` (zones az-1 and az-2; HGX
 * A100 and H100 boards, H100 NVL cards bridged in pairs, L40S PCIe boxes); the policy kinds of the
 * seeds (the topology-gpu-policy ConfigMap, one GPUQuota per tenant, Volcano Queues,
 * PriorityClasses, the kubeflow-gpu-profiles ConfigMap); then every Pod in arrival order, one
 * flow-style document each, a gang's PodGroup just before its first member. The workload model
 * (four kinds of seed 004 section 1.1) is described in docs/tenant-day.md.
 *
 * Invariants: the output is a function of the parameters alone: the same parameters give the same
 * bytes on every platform (gs_rng, integer arithmetic only). Exactly `pods` Pod documents are
 * written; arrivals never decrease; a gang's members all follow its PodGroup and number its
 * minMember. Memory: 28 bytes per pod while writing, nothing kept after the call.
 */
#ifndef GPUSCHED_TENANTDAY_H
#define GPUSCHED_TENANTDAY_H

#include <stdint.h>
#include <stdio.h>

struct gs_diag;

#define GS_TENANTDAY_NODES_MAX 100000  /* 750,000 GPUs: beyond any cluster simulated here */
#define GS_TENANTDAY_PODS_MAX  1000000 /* about 450 MB of YAML */
#define GS_TENANTDAY_HOURS_MAX 168     /* a week */

/* The four workload kinds of seed 004 section 1.1, as the `gpusched.io/workload` label names. */
enum gs_workload {
    GS_WORKLOAD_TRAINING = 0, /* data team (tenant-a): ETL + training, nights, whole cards */
    GS_WORKLOAD_INTERACTIVE,  /* algorithm team (tenant-b): experiments, daytime, fractions */
    GS_WORKLOAD_INFERENCE,    /* online inference (tenant-c): all day, fractional replicas */
    GS_WORKLOAD_HPO,          /* batch HPO/NAS (tenant-a): bursts of preemptible gangs */
    GS_WORKLOAD_KINDS
};

/*
 * How the fractional pods (interactive experiments, inference replicas) share a card:
 * - SLICES: HAMi-style vGPU slices, nvidia.com/gpumem MiB + nvidia.com/gpucores % (the default);
 * - MIG: nvidia.com/mig-<profile>: 1, the smallest A100/H100-80GB profile holding the pod's
 *   memory (1g.10gb up to 10 GiB, else 2g.20gb), with a GpuClusterPolicy enabling MIG on those
 *   models (NVIDIA MIG user guide: both have the 1g.10gb and 2g.20gb profiles);
 * - TIMESLICE: nvidia.com/gpu.shared: 1 with the same gpumem and gpucores, every node offering
 *   4 time-slice replicas per card (NVIDIA k8s-device-plugin's timeSlicing.replicas).
 */
enum gs_tenantday_sharing {
    GS_TENANTDAY_SLICES = 0,
    GS_TENANTDAY_MIG,
    GS_TENANTDAY_TIMESLICE,
    GS_TENANTDAY_SHARINGS
};

/* "slices", "mig", "timeslice": the --sharing names, by enum value. */
extern const char *const gs_tenantday_sharing_names[GS_TENANTDAY_SHARINGS];

struct gs_tenantday_params {
    uint32_t nodes; /* 1..GS_TENANTDAY_NODES_MAX */
    uint32_t pods;  /* 1..GS_TENANTDAY_PODS_MAX: the exact number of Pod documents */
    uint32_t hours; /* 1..GS_TENANTDAY_HOURS_MAX: the horizon; the daily shapes repeat */
    uint64_t seed;  /* any value */
    /* how the fractional pods of the algorithm team's experiments [0] and of online inference
     * [1] ask for their part of a card */
    enum gs_tenantday_sharing sharing[2];
    /* Elastic inference: the traffic a forecast predicts, one value per hour from the start
     * (any unit, 0..2^40, some > 0; repeated when shorter than the horizon). The replicas that
     * otherwise serve all day then follow it: at hour h, max(1, ceil(N x traffic[h] / its
     * peak)) of them run, a replica added when the count rises and the newest one ended when it
     * falls, N as large as the replicas the day would have held allow. NULL: a fixed count,
     * or with @elastic the all-day arrival profile's hourly weights. */
    const int64_t *traffic;
    uint32_t ntraffic; /* 1..GS_TENANTDAY_HOURS_MAX when @traffic is set */
    /* Elastic scaling (seed 000 §5): gangs run from the low end of their kind's GPU range in
     * seed 004 §1.1 (training 2, HPO 4 GPUs), their other members growing into free cards and
     * saving their state every 30 min (as elastic training must), and the inference replicas
     * follow the day's traffic (the all-day arrival profile) unless @traffic is given. 0: every
     * gang whole, the replicas a fixed count serving all day. */
    int elastic;
    /* Training and HPO pods save their state every so many seconds of their run
     * (gpusched.io/checkpoint-interval) and resume there when evicted; 0: none do (they
     * restart from zero). gs_tenantday_defaults() sets GS_TENANTDAY_CHECKPOINT_S. */
    uint32_t checkpoint_s;
};

/* What a call wrote, for summaries and checks. */
struct gs_tenantday_stats {
    uint32_t nodes, gpus, pods, podgroups;
    uint32_t pods_by_kind[GS_WORKLOAD_KINDS];
    /* GPU time the pods ask for (milli-GPU x seconds of duration, fractions by their compute
     * share), per mille of the cluster's GPU time over the horizon. */
    uint32_t offered_permille;
    /* Per hour: the GPU demand of the pods that would be running if each started at its arrival,
     * averaged over the hour, per mille of capacity. Above 1000 the cluster is oversubscribed. */
    uint32_t hourly_permille[GS_TENANTDAY_HOURS_MAX];
};

/* The default checkpoint interval of training and HPO pods, seconds: Check-N-Run (Eisenman et
 * al., NSDI '22), Facebook's checkpointing system for training, saves every 30 minutes by
 * default. */
#define GS_TENANTDAY_CHECKPOINT_S 1800

/* gs_tenantday_defaults() - 64 nodes (480 GPUs), 2,000 pods, 24 hours, seed 42, training and
 * HPO saving their state every GS_TENANTDAY_CHECKPOINT_S. */
void gs_tenantday_defaults(struct gs_tenantday_params *p);

/*
 * gs_tenantday_check() - validate @p against the limits above.
 * Return: 0; -EINVAL with @d naming the field, its value and its range.
 */
int gs_tenantday_check(const struct gs_tenantday_params *p, struct gs_diag *d);

/*
 * gs_tenantday_write() - write the scenario for @p to @f.
 * @f: an open stream; written from its current position, not closed.
 * @st: filled on success when not NULL.
 * Return: 0; -EINVAL with @d (parameters out of range, see gs_tenantday_check()); -ENOMEM; -EIO
 * with @d when writing to @f failed (part of the output may have been written).
 * Complexity: O(pods log pods) time.
 */
int gs_tenantday_write(FILE *f, const struct gs_tenantday_params *p, struct gs_tenantday_stats *st,
                       struct gs_diag *d);

#endif
