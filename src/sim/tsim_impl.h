/*
 * Layout of a simulated multi-tenant run, shared by src/sim/tenancy*.c. The scheduler is the
 * core's (gpusched/tenancy.h); this driver gives it the scenario's pods at their arrival times,
 * ends them when their walltimes run out, and keeps what the reports show. See gpusched/tsim.h.
 */
#ifndef GS_TSIM_IMPL_H
#define GS_TSIM_IMPL_H

#include "gpusched/catalog.h"
#include "gpusched/fleet.h"
#include "gpusched/scenario.h"
#include "gpusched/tenancy.h"
#include "gpusched/tsim.h"

#include <stdint.h>

__extension__ typedef __int128 gs_i128;

/* One scenario pod as the run sees it. */
struct spod {
    int32_t id;     /* the scheduler's id; -1 before it arrived, or when admission refused it */
    int32_t use;    /* its open use record, -1 none */
    int32_t kind;   /* its workload kind (label gpusched.io/workload) */
    int64_t end;    /* when it completed, -1 */
    char *rejected; /* admission's reason when it refused the pod (owned), else NULL */
};

struct gs__timeline;
struct json_t;

struct node_event {
    int64_t t;
    int32_t node, ready, order;
    int32_t gpu, evict; /* a card's (-1: the node's); its pods are evicted with it */
};

struct gs_tsim {
    const struct gs_scenario *s;
    struct gs__timeline *tl; /* the run over time, for reports (tenancy_timeline.c) */
    enum gs_way way;
    struct gs_tenancy *sched;
    const struct gs_fleet *fleet; /* the scheduler's, for reports */
    struct spod *pods;
    size_t npods;
    int32_t *scn_of; /* scheduler id -> scenario index */
    int32_t *arrival_order;
    size_t next_arrival;
    struct node_event *node_events; /* the Simulation's nodeFailures and cardFailures as fail
                                       and restore events, by time (then file order) */
    size_t nnode_events, next_node_event;
    /* Use records: one per contiguous run of a pod on its devices. */
    struct gs_tsim_use *uses;
    size_t nuses, capuses;
    size_t ntenants; /* the policy's, plus one for pods of no tenant */
    size_t nqueues;
    int64_t now, horizon;
    gs_i128 mix_held, mix_work; /* the run's mix: milli-GPU x us asked and worked (report.c) */
    /* Reports. */
    struct gs_tsim_summary sum;
    struct gs_tsim_work work;
    struct gs_tsim_pod *out;
    struct gs_tsim_tenant *tout;
    struct gs_tsim_queue *qout;
    struct gs_tsim_kind *kout;
    struct gs_tsim_model *mout; /* the GPU models the fleet has, in catalog order */
    size_t nkinds, nmodels;
    const char **kind_names;
};

/* tenancy_report.c */
int gs__tsim_finish(struct gs_tsim *t);

/* gs__tsim_permille() - @milli_s (milli-GPU x s) of @gpus cards over @horizon_us (us, <= 0: 1),
 * per mille, rounded down: the one rule every report table's percentages follow (each prints
 * it to the tenth of a percent). */
int32_t gs__tsim_permille(int64_t milli_s, int64_t gpus, int64_t horizon_us);

/* tenancy_timeline.c */
int gs__tsim_timeline_new(struct gs_tsim *t);
void gs__tsim_timeline_free(struct gs_tsim *t);
/* Take the grid points before @upto (microseconds), as the last pass left the run: 0, -ENOMEM. */
int gs__tsim_timeline_sample(struct gs_tsim *t, int64_t upto);
/* The run has ended at t->now: the integrals there close the last step. */
void gs__tsim_timeline_end(struct gs_tsim *t);
/* Scenario pod @pod was evicted now for scenario pod @by (-1: its node or card failed), by queue
 * reclaim or priority preemption: 0, -ENOMEM. */
int gs__tsim_timeline_evicted(struct gs_tsim *t, int32_t pod, int32_t by, int reclaim);
/* {"step_s", "steps", "capacity_milli", "tenants", "queues", "evictions"} after the run's
 * reports are made (gs__tsim_finish()); NULL when out of memory. */
struct json_t *gs__tsim_timeline_json(const struct gs_tsim *t);

#endif
