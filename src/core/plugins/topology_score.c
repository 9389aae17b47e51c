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

/*
 * A preferred NVLink group is kept whenever a node has one free: with the seed's weights, a
 * placement outside one (topology at most 500) scores below any inside one (at least 6 x 800).
 * The az tier spreads a gang over zones, for disaster recovery (seed 000 §1.1: zone affinity,
 * active-active across zones): a zone none of its members runs in is taken whenever one has
 * room, as a preferred NVLink group is.
 */
static int place_demote(const struct gs_place_view *v)
{
    return (v->pod->tier_soft && v->choice->topology < 800) + (v->zone_spread < 1000);
}

const struct gs_plugin gs_plugin_topology_score = {
    .name = "TopologyScore",
    .points = 1u << GS_EP_SCORE,
    .place = place,
    .place_demote = place_demote,
};
