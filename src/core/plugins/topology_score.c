/*
 * TopologyScore (seed 000 §3.2, weight 6 there), a score of the multi-tenant scheduler: what the
 * pod's topology tier asks of a node. Replicas of a gang spread over nodes (tier node) or zones
 * (tier az); otherwise the pod's cards keep together: one PCIe domain scores full, cards over d
 * domains 500 / d, and a pod that prefers one NVLink group scores below 800 outside one.
 */
#include "../sched_impl.h"
#include "gpusched/fleet.h"

static int32_t place(const struct gs_place_view *v)
{
    switch (v->pod->tier) {
    case GS_TIER_NODE:
        return v->choice->spread;
    case GS_TIER_AZ:
        return v->zone_spread;
    default:
        return v->choice->topology;
    }
}

const struct gs_plugin gs_plugin_topology_score = {
    .name = "TopologyScore",
    .points = 1u << GS_EP_SCORE,
    .place = place,
};
