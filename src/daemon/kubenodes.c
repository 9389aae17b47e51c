/*
 * gpuschedd: the inventory following the API server's Node objects (contract: kubenodes.h).
 * Nodes are never removed from the inventory (node indexes are the scheduler's, the store's and
 * the ledger's): a deleted Node is a node NotReady, and a Node made again under its name is that
 * node Ready again.
 */
#include "kubenodes.h"
#include "inventory.h"
#include "log.h"
#include "nodes.h"
#include "snapshot.h"
#include "state.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/diag.h"
#include "gpusched/scenario.h"
#include "gpusched/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether inventory node @i has taints @tn[@ntn], in that order. */
static int same_taints(const struct gsd_state *st, size_t i, const struct gs_taint *tn, int ntn)
{
    const struct gs_policy *pol = &st->inv->policy;
    if (pol->nodes[i].ntaints != ntn)
        return 0;
    for (int k = 0; k < ntn; k++) {
        const struct gs_taint *x = &pol->taints[pol->nodes[i].taint_first + k];
        if (x->effect != tn[k].effect || strcmp(x->key, tn[k].key) || strcmp(x->value, tn[k].value))
            return 0;
    }
    return 1;
}

/* Whether Node @r in @zone has the shape inventory node @i was taken in with. */
static int same_shape(const struct gsd_state *st, size_t i, const struct gs_trace_node *r,
                      const char *zone)
{
    struct gs_node_info ni;
    const struct gs_policy *pol = &st->inv->policy;
    gs_cluster_node_info(st->cluster, i, &ni);
    return ni.gpus == r->gpus && (!r->gpus || ni.model == r->model) &&
           pol->templates[pol->nodes[i].template_index].max_pods == r->pods &&
           pol->templates[pol->nodes[i].template_index].gpu_replicas == r->replicas &&
           ni.cpu_milli == r->cpu_milli && ni.memory_mib == r->memory_mib &&
           !strcmp(ni.zone, *zone ? zone : "default");
}

/* One Node object: taken in, or its readiness told. Return: its inventory index; -1. */
static int take(struct gsd_state *st, const json_t *node, int deleted)
{
    const char *name =
        json_string_value(json_object_get(json_object_get(node, "metadata"), "name"));
    int i = name ? gs_cluster_find(st->cluster, name) : -1, ready;
    struct gs_trace_node r;
    struct gs_taint tn[GS_NODE_TAINTS];
    char zone[GS_NAME_MAX];
    int ntn = 0;
    struct gs_diag d;
    gs_diag_init(&d);
    if (i < 0) { /* a Node's warnings once, as it joins; each resync reads it again */
        d.warn = gsd_log_warning;
        d.warn_ud = "Node taken with a warning";
    }
    if (deleted || gsd_inventory_node(node, &r, zone, tn, &ntn, &ready, &d)) {
        if (!deleted && (i >= 0 || !gsd_inventory_told(d.msg)))
            gsd_log(i >= 0 ? "warn" : "error",
                    i >= 0 ? "Node unreadable now: not ready" : "Node not taken into the inventory",
                    "error", d.msg, NULL);
        if (i >= 0 && gsd_health_api(st, (size_t)i, 0))
            st->failed = 1;
        return i;
    }
    if (i < 0 && gsd_state_add_node(st, &r, zone, tn, ntn, &d)) {
        gsd_log("error", "Node not taken into the inventory", "error", d.msg, NULL);
        return -1;
    }
    i = gs_cluster_find(st->cluster, r.name);
    /* taints follow the Node: the lifecycle controller lifts node.kubernetes.io/not-ready from
     * every new Node once kubelet reports Ready, and operators taint and cordon nodes */
    if (!same_taints(st, (size_t)i, tn, ntn) && gsd_state_set_taints(st, (size_t)i, tn, ntn, &d))
        gsd_log(st->failed ? "error" : "warn", "Node's taints not taken", "node", r.name, "error",
                d.msg, NULL);
    int same = same_shape(st, (size_t)i, &r, zone);
    if (!same) { /* cards told after the Node joins: taken in while no pod is there */
        int rc = gsd_state_reshape_node(st, (size_t)i, &r, zone, &d);
        same = !rc;
        if (rc && rc != -EBUSY)
            gsd_log(st->failed ? "error" : "warn", "Node's new shape not taken", "node", r.name,
                    "error", d.msg, NULL);
    }
    if (!same && !st->health[i].reshaped)
        gsd_log("warn",
                "Node changed its cards, CPU, memory, pods or zone while pods are on it (or its "
                "agent registered other cards): placed as it was until gpuschedd starts again",
                "node", r.name, NULL);
    st->health[i].reshaped = (uint8_t)!same;
    gsd_snap_node_touch(st, (size_t)i);
    if (gsd_health_api(st, (size_t)i, ready))
        st->failed = 1;
    return i;
}

void gsd_kube_nodes(struct gsd_state *st, const json_t *items, int listed, int deleted)
{
    size_t k, n = gs_cluster_node_count(st->cluster);
    uint8_t *seen = listed ? calloc(n ? n : 1, 1) : NULL;
    const json_t *node;
    json_array_foreach(items, k, node)
    {
        int i = take(st, node, deleted);
        if (seen && i >= 0 && (size_t)i < n)
            seen[i] = 1;
    }
    for (size_t i = 0; seen && i < n; i++)
        if (!seen[i] && gsd_health_api(st, i, 0)) /* deleted while no watch ran */
            st->failed = 1;
    if (listed && !seen)
        gsd_log("error", "out of memory: the Nodes a list lacks are not marked NotReady", NULL);
    free(seen);
}
