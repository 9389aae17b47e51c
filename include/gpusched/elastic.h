/*
 * gpusched — elastic provisioning replayed: a demand history (gpusched/forecast.h) as replicas
 * arriving and leaving on a cluster whose nodes are turned on and off by the forecast's capacity
 * advice, set against static clusters of fixed size.
 *
 * Each demand record is one replica: its GPUs (milli / 1000 whole cards, or one card's share
 * under 1000) from its start to its end. A replica is placed by the scheduling core
 * (gs_sched_place(), the profile of a named policy) on a node that is on; one that fits nowhere
 * waits, in arrival order, and still leaves at its end (the demand it served is gone then); one
 * that never started waited its whole life. A node that is off holds all its cards (as gpuschedd
 * holds an unavailable node's), so placement never sees it.
 *
 * The elastic way: at every hour, the advice for that hour, forecast from the history up to
 * @lead_s before it (refitted once a day, the day's 24 hours forecast at once), says how many
 * nodes to run; nodes are asked for @lead_s before the hour and take @lead_s to come up. The
 * upper quantile a wait target under the lead time plans at is that of the hour's mean, raised
 * for each hour of the day by the 95th percentile, over the arrivals in that hour of the week
 * before, of how much the replicas held rose within one lead time before each: the scale-outs
 * inside an hour its mean hides. Right-sized, a node counts as its GPUs times how full the cards
 * that hold replicas are. A replica left waiting takes cordoned nodes back first, then asks for
 * the new nodes still needed at once (as Kubernetes' cluster autoscaler does for pending pods).
 * Nodes beyond the advice are cordoned, the emptiest first, and turned off once idle ("drained
 * when idle"); a cordoned node is taken back before a new one is started. The static way runs
 * @static_nodes nodes throughout.
 *
 * The replay's clock starts at the hour of the first record. What is measured, over
 * [that + warmup_s, end): node-seconds on (from the moment a node is asked for,
 * boot included); waits of the replicas that arrive then (nearest-rank percentiles); GPU
 * allocation and modelled busy time (each replica's utilisation, drawn in turn from
 * @util_permille) per GPU-second on. Right-sized (@right_size), a replica of one card asks only
 * gs_elastic_share() of its pod's peak utilisation, placed by the share scheduler beside others
 * on a card, and the elastic way forecasts the demand of those shares; with @overcommit_milli the
 * cards' compute is overcommitted, and with @series each shared card's duty cycle is summed at
 * every sample time (each replica following its pod's measured day, laid over every day of the
 * replay) to measure what passed the card. Before warmup_s the elastic
 * way runs what the static one would with the most nodes the warm-up needed: the forecast needs
 * that history.
 *
 * Units: seconds, milli-GPU, per mille. Determinism: same input, same result.
 */
#ifndef GPUSCHED_ELASTIC_H
#define GPUSCHED_ELASTIC_H

#include <stddef.h>
#include <stdint.h>

#include "gpusched/forecast.h"

struct gs_diag;

#define GS_ELASTIC_NODES_MAX 100000

struct gs_elastic_params {
    int node_gpus;         /* GPUs a node, 1..16 */
    int model;             /* catalog model of the nodes */
    const char *policy;    /* placement policy (gs_profile_for_policy()), NULL: "gpusched" */
    int64_t lead_s;        /* a node's boot time, >= 0 */
    int64_t wait_target_s; /* the replicas' wait p95 target (the advice's target), >= 0 */
    int64_t warmup_s;      /* history before the measured window, >= 2 days */
    enum gs_fc_method method;
    const int32_t *util_permille; /* replicas' utilisation, drawn in turn; NULL: 1000 */
    const int32_t *peak_permille; /* the same pods' highest utilisation (NULL: none) */
    const int16_t *series;        /* the same pods' duty cycle, nutil x slots (NULL: none) */
    size_t nutil, slots;
    int right_size;           /* a one-card replica asks gs_elastic_share() of its pod's peak */
    int32_t overcommit_milli; /* right-sized: a card's compute overcommit, 1000 (or 0): none */
};

struct gs_elastic_result {
    int64_t nodes;    /* static: the nodes run; elastic: the most on at once */
    int64_t node_s;   /* node-seconds on in the window */
    int64_t hours;    /* hours in the window */
    int64_t replicas; /* replicas arriving in the window */
    int64_t waited;   /* of them, those that waited a second or more */
    int64_t wait_p50_s, wait_p95_s, wait_p99_s, wait_max_s;
    int64_t unserved_milli_s; /* GPU time asked but not given (while replicas waited), milli-GPU
                                 x s */
    int32_t alloc_permille;   /* allocated / on GPU-seconds */
    int32_t util_permille;    /* modelled busy / on GPU-seconds, less @over_milli_s (what
                                 waited is not busy twice) */
    int64_t duty_milli_s;     /* with @series: the duty cycle asked of shared cards, x s */
    int64_t over_milli_s;     /* of it, what passed 100 % of the card it was asked of */
};

/*
 * gs_elastic_run() - replay @dm until @end_s (seconds; open records end there) on nodes of @p,
 * elastic when @static_nodes is 0, else on that many nodes throughout.
 * Return: 0 and *@out; -EINVAL with @d (bad parameters, a replica no node can ever hold, a
 * history shorter than the warm-up plus a day, more than GS_ELASTIC_NODES_MAX nodes); -ENOMEM.
 */
int gs_elastic_run(const struct gs_demand *dm, int64_t end_s, const struct gs_elastic_params *p,
                   int64_t static_nodes, struct gs_elastic_result *out, struct gs_diag *d);

/*
 * gs_elastic_static_fit() - the fewest nodes in @lo..@hi (1 <= lo <= hi) on which no replica of
 * the static way waits, by bisection (assumes more nodes never make a replica wait longer), and
 * that run's result in *@out; @hi when even it makes one wait. Right-sized shares leave gaps on
 * cards, so the static-at-peak size of shares is not their sum over a node: this measures it.
 * Return: the nodes (>= 1); the errors of gs_elastic_run(). Cost: log2(hi - lo) + 1 replays.
 */
int64_t gs_elastic_static_fit(const struct gs_demand *dm, int64_t end_s,
                              const struct gs_elastic_params *p, int64_t lo, int64_t hi,
                              struct gs_elastic_result *out, struct gs_diag *d);

/*
 * gs_elastic_share() - right-sizing: the share of one card (per mille) a replica whose measured
 * utilisation never went above @peak_permille (0..1000) asks for: that peak rounded up to a
 * tenth of the card, at least a tenth, divided by the card's compute overcommit
 * @overcommit_milli (1000..4000; 1000 or less: none), rounded up. Utilisation here is NVML's
 * duty cycle (the share of time a kernel ran, DCGM's DCGM_FI_DEV_GPU_UTIL), so without
 * overcommit time-sliced replicas whose shares add up to a card never, at their peaks together,
 * ask for more time than it has; with it they may, and the replay measures how much
 * (gs_elastic_result.over_milli_s). The overcommit is the seeds' node tier's (seed 000 §1.1 and
 * §3.1: inference services share GPUs at the node tier, `overcommit: 1.5`). GPU memory is not
 * modelled. Return: 25..1000.
 */
int32_t gs_elastic_share(int32_t peak_permille, int32_t overcommit_milli);

/*
 * gs_elastic_peak_nodes() - the nodes the most replicas ever held at once need (whole cards,
 * shares rounded up per replica; right-sized, the sum of their shares): the static-at-peak
 * size. Return: >= 1; -EINVAL with @d.
 */
int64_t gs_elastic_peak_nodes(const struct gs_demand *dm, int64_t end_s,
                              const struct gs_elastic_params *p, struct gs_diag *d);

/*
 * struct gs_duty - the GenAI pods' measured GPU duty cycle (NVML's utilization.gpu, DCGM's
 * DCGM_FI_DEV_GPU_UTIL: the share of time a kernel ran), per mille, pods in the order they first
 * appear in the file, samples on the grid of the file's distinct sample times (ascending).
 * Owned by whoever filled it: gs_duty_free().
 */
#define GS_DUTY_SAMPLES_MAX (1 << 24) /* pods x sample times held at most */
struct gs_duty {
    size_t pods;
    size_t slots;    /* distinct sample times */
    int32_t *mean;   /* pods: each pod's mean sample */
    int32_t *peak;   /* pods: its highest sample */
    int16_t *series; /* pods x slots: its sample at each time, 0 where it has none */
};

/*
 * gs_util_read_duty() - read pod_gpu_duty_cycle_anon.csv (columns value %, timestamp_anon
 * seconds, container_ip) into *@out (gs_duty_free() it).
 * Return: 0; -EINVAL with @d naming the file, line and column (a value outside 0..100, a bad
 * time, a pod sampled twice at one time, no rows, more than GS_DUTY_SAMPLES_MAX samples to hold);
 * the demand readers' I/O errors; -ENOMEM.
 */
int gs_util_read_duty(const char *path, struct gs_duty *out, struct gs_diag *d);
void gs_duty_free(struct gs_duty *u);

#endif
