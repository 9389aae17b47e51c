/*
 * FairnessScore (seed 000 §3.2, weight 4 there), a score of the multi-tenant scheduler: tenants
 * kept apart where it costs nothing. A node that holds no other tenant's pods scores full, one
 * that does scores 0. Only the full way has tenants' isolation; elsewhere it scores nothing.
 */
#include "../sched_impl.h"
#include "gpusched/fleet.h"

static int32_t place(const struct gs_place_view *v)
{
    return v->full ? v->choice->isolation : 0;
}

/* The score itself: the node's tenants are known before it is fitted. */
static int32_t place_bound(const struct gs_place_view *v)
{
    return v->full ? gs_fleet_isolation(v->fleet, v->node, v->pod) : 0;
}

const struct gs_plugin gs_plugin_fairness_score = {
    .name = "FairnessScore",
    .points = 1u << GS_EP_SCORE,
    .place = place,
    .place_full_only = 1,
    .place_bound = place_bound,
};
