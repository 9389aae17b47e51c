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

struct gs_tsim {
    const struct gs_scenario *s;
    enum gs_way way;
    struct gs_tenancy *sched;
    const struct gs_fleet *fleet; /* the scheduler's, for reports */
    struct spod *pods;
    size_t npods;
    int32_t *scn_of; /* scheduler id -> scenario index */
    int32_t *arrival_order;
    size_t next_arrival;
    /* Use records: one per contiguous run of a pod on its devices. */
    struct gs_tsim_use *uses;
    size_t nuses, capuses;
    size_t ntenants; /* the policy's, plus one for pods of no tenant */
    size_t nqueues;
    int64_t now, horizon;
    gs_i128 mix_held, mix_work; /* the day's mix: milli-GPU x us asked and worked (report.c) */
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

#endif
