/*
 * The inventory following the API server's Node objects (--nodes kubernetes).
 */
#ifndef GSD_KUBENODES_H
#define GSD_KUBENODES_H

#include <jansson.h>

struct gsd_state;

/*
 * gsd_kube_nodes() - Node objects @items (an array, borrowed) as gsd_kube_follow() reports them:
 * every Node (@listed 1), or one ADDED or MODIFIED (@listed 0), or DELETED (@deleted 1). On the
 * scheduler thread. A Node the inventory lacks joins it (gsd_state_add_node()); a Node NotReady
 * or deleted, or one the list no longer has, is NotReady to the scheduler (its pods handled as a
 * node lost: requeued) until it is Ready again (gsd_health_api()). A Node gpusched cannot read
 * (a product it does not know, no capacity) is logged with why and not taken; one already in the
 * inventory is then NotReady. A Node's spec.taints are followed: when they change the node is
 * placed by the new ones from then on (gsd_state_set_taints(): a new scheduler), so a Node that
 * joined with node.kubernetes.io/not-ready, which the API server gives every new Node, takes pods
 * once the lifecycle controller lifts it; pods running there stay whatever they tolerate (no
 * eviction: NoExecute's are the taint manager's). A Node whose shape (cards, model, CPU, memory,
 * pods, zone) changed keeps the shape it had, logged once, until gpuschedd starts again.
 */
void gsd_kube_nodes(struct gsd_state *st, const json_t *items, int listed, int deleted);

#endif
