/*
 * The node inventory gpuschedd schedules on.
 */
#ifndef GSD_INVENTORY_H
#define GSD_INVENTORY_H

struct gs_cluster;
struct gs_diag;
struct gs_scenario;

/*
 * gsd_inventory_load() - the nodes the daemon schedules on, from @path: a Cluster document (YAML,
 * the simulator's own, node templates with their PCIe domains and NVLink groups) when the name
 * ends in .yaml or .yml, else the node CSV of include/gpusched/trace.h (each node on the default
 * template of its model, gs_topology_default()). The one place that knows the inventory formats.
 * *@cluster: names, zones and shapes, for lookups; *@inv: the same nodes as templates and nodes,
 * for the scheduler (gs_scenario_free()). Either may be NULL when not wanted.
 * Return: 0; -EINVAL/-ENOENT/-EIO with @d (a YAML file with kinds other than Cluster among
 * them, or no nodes); -ENOMEM.
 */
int gsd_inventory_load(const char *path, struct gs_cluster **cluster, struct gs_scenario **inv,
                       struct gs_diag *d);

#endif
