/*
 * The node inventory gpuschedd schedules on.
 */
#ifndef GSD_INVENTORY_H
#define GSD_INVENTORY_H

#include "gpusched/cluster.h"
#include "gpusched/policy.h"

#include <jansson.h>

struct gs_cluster;
struct gs_diag;
struct gs_scenario;
struct gsd_kube;
struct gs_trace_node;

/*
 * gsd_inventory_load() - the nodes the daemon schedules on, from @path: a Cluster document (YAML,
 * the simulator's own, node templates with their PCIe domains and NVLink groups) when the name
 * ends in .yaml or .yml; "kubernetes", the Node objects of the API server @k (GET /api/v1/nodes,
 * in the order it lists them: CPU and memory from status.capacity, rounded down, the cards from
 * the nvidia.com/gpu.count label, else capacity nvidia.com/gpu, their model from
 * nvidia.com/gpu.product as NVIDIA's GPU feature discovery writes it, "NVIDIA-A100-SXM4-80GB",
 * the zone from topology.kubernetes.io/zone, the taints from spec.taints; blocks); else the node
 * CSV of include/gpusched/trace.h. CSV and Kubernetes nodes go on the default template of their
 * model (gs_topology_default()). The one place that knows the inventory formats.
 * *@cluster: names, zones and shapes, for lookups; *@inv: the same nodes as templates and nodes,
 * for the scheduler (gs_scenario_free()); *@down (free()), for "kubernetes", one byte per node in
 * inventory order, 1 where the Node was not Ready as read (gsd_inventory_node()), else NULL. Any
 * of the three may be NULL when not wanted.
 * A GPU Node of a product gpusched does not know is logged and left out (gsd_inventory_node()).
 * "kubernetes" may list no Node yet, or none with a GPU (a warning is logged): the Nodes made
 * later join (kubenodes.c), and pods wait meanwhile; a file must give nodes and a GPU.
 * Return: 0; -EINVAL/-ENOENT/-EIO with @d (a YAML file with kinds other than Cluster among
 * them, a Node gpusched cannot read, no API server answer, a file of no nodes or no GPU);
 * -ENOMEM.
 */
int gsd_inventory_load(const char *path, const struct gsd_kube *k, struct gs_cluster **cluster,
                       struct gs_scenario **inv, uint8_t **down, struct gs_diag *d);

/*
 * gsd_inventory_node() - Node object @node (a list item or a watch event's object) as the
 * inventory reads it: *@row its name, CPU, memory, cards and model (as gsd_inventory_load()
 * reads them), @zone its zone ("" none), @taints (room for GS_NODE_TAINTS) its spec.taints,
 * *@ntaints of them, *@ready whether it is Ready (its Ready condition "True", or none given
 * yet). Return: 0; -ENOENT with @d for a GPU Node whose nvidia.com/gpu.product names no model
 * of the catalog (gs_catalog_find_product()): such a Node is logged and left out of the
 * inventory, at start as while gpuschedd runs; -EINVAL with @d naming the Node and what is
 * wrong (a taint gs_taint_make() refuses: PreferNoSchedule among them).
 */
int gsd_inventory_node(const json_t *node, struct gs_trace_node *row, char zone[GS_NAME_MAX],
                       struct gs_taint *taints, int *ntaints, int *ready, struct gs_diag *d);

/*
 * gsd_inventory_told() - whether line @msg (a Node left out of the inventory, with why) was
 * logged already: 1; else 0, and it is remembered, so that a Node read again at every list is
 * said once (a Node whose reason changes is said again). Not thread-safe: the start and the
 * Nodes' follower call it, one after the other.
 */
int gsd_inventory_told(const char *msg);

/*
 * gsd_inventory_append() - node @r in @zone, with taints @taints[@ntaints] (copied), joins the
 * lookup cluster @c (last), then the
 * inventory @inv (on a template of its shape, with its model's default topology, made when
 * new). Return: 0, and @inv's arrays may have moved: a scheduler reading them must be made
 * again; -EINVAL with @d (@c refuses it: nothing changed); -ENOMEM, -E2BIG (@c holds it and @inv
 * may not, its arrays moved: the caller cannot go on).
 */
int gsd_inventory_append(struct gs_scenario *inv, struct gs_cluster *c,
                         const struct gs_trace_node *r, const char *zone,
                         const struct gs_taint *taints, int ntaints, struct gs_diag *d);

/*
 * gsd_inventory_reshape() - inventory node @i (0..count-1) made again as Node @r in @zone says
 * (its name kept): in the lookup cluster @c (gs_cluster_reshape_node()) and in @inv, on a
 * template of its new shape, made when new, with its model's default topology. The caller has
 * made sure no pod is on it. Return: 0, and @inv's templates may have moved: a scheduler reading
 * them must be made again; -ENOENT (@i out of range), -EINVAL with @d (@c refuses it): nothing
 * changed; -ENOMEM (@c holds the new shape and @inv the old: the caller cannot go on).
 */
int gsd_inventory_reshape(struct gs_scenario *inv, struct gs_cluster *c, size_t i,
                          const struct gs_trace_node *r, const char *zone, struct gs_diag *d);

#endif
