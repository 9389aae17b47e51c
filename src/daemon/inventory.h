/*
 * The node inventory gpuschedd schedules on.
 */
#ifndef GSD_INVENTORY_H
#define GSD_INVENTORY_H

struct gs_cluster;
struct gs_diag;
struct gs_scenario;
struct gsd_kube;

/*
 * gsd_inventory_load() - the nodes the daemon schedules on, from @path: a Cluster document (YAML,
 * the simulator's own, node templates with their PCIe domains and NVLink groups) when the name
 * ends in .yaml or .yml; "kubernetes", the Node objects of the API server @k (GET /api/v1/nodes,
 * in the order it lists them: CPU and memory from status.capacity, rounded down, the cards from
 * the nvidia.com/gpu.count label, else capacity nvidia.com/gpu, their model from
 * nvidia.com/gpu.product as NVIDIA's GPU feature discovery writes it, "NVIDIA-A100-SXM4-80GB",
 * the zone from topology.kubernetes.io/zone; blocks); else the node CSV of
 * include/gpusched/trace.h. CSV and Kubernetes nodes go on the default template of their model
 * (gs_topology_default()). The one place that knows the inventory formats.
 * *@cluster: names, zones and shapes, for lookups; *@inv: the same nodes as templates and nodes,
 * for the scheduler (gs_scenario_free()). Either may be NULL when not wanted.
 * Return: 0; -EINVAL/-ENOENT/-EIO with @d (a YAML file with kinds other than Cluster among
 * them, a Node gpusched cannot read, no API server answer, no nodes, no GPU); -ENOMEM.
 */
int gsd_inventory_load(const char *path, const struct gsd_kube *k, struct gs_cluster **cluster,
                       struct gs_scenario **inv, struct gs_diag *d);

#endif
