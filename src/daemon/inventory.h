/*
 * The node inventory gpuschedd schedules on.
 */
#ifndef GSD_INVENTORY_H
#define GSD_INVENTORY_H

#include <stddef.h>

struct gs_cluster;
struct gs_diag;

/*
 * gsd_inventory_load() - build the cluster the daemon schedules on from @path. The one place
 * that knows the inventory format (today the node CSV of include/gpusched/trace.h), so another
 * loader can take its place. Return: 0 and *@out; -EINVAL/-ENOENT/-EIO with @d; -ENOMEM.
 */
int gsd_inventory_load(const char *path, struct gs_cluster **out, struct gs_diag *d);

struct gsd_kube;
/*
 * gsd_inventory_from_kube() - the cluster from the Node objects of the API server @k (GET
 * /api/v1/nodes), in the order it lists them (by name): CPU and memory from status.capacity,
 * the cards from the nvidia.com/gpu.count label (else capacity nvidia.com/gpu), their model from
 * nvidia.com/gpu.product (NVIDIA's GPU feature discovery: "NVIDIA-A100-SXM4-80GB"; the catalog
 * name after the vendor prefix), the zone from topology.kubernetes.io/zone. Blocks.
 * Return: 0 and *@out; -EIO (no answer) or -EINVAL (a Node gpusched cannot read: its name and
 * field) with @d; -ENOMEM.
 */
int gsd_inventory_from_kube(const struct gsd_kube *k, struct gs_cluster **out, struct gs_diag *d);

struct gs_pod_req;
/*
 * gsd_inventory_workload() - the workload the cluster serves, from the pod list CSV @path (the
 * simulator's --pods format): what the fragmentation-aware plugins (FGD and those built on its
 * "typical pods") measure fragmentation against, as `gpusched simulate` does with its pod list,
 * so a policy scores nodes in the daemon as it does in the simulator.
 * Return: 0, *@out (malloc'd, @n entries); -EINVAL/-ENOENT/-EIO with @d; -ENOMEM.
 */
int gsd_inventory_workload(const char *path, struct gs_pod_req **out, size_t *n, struct gs_diag *d);

#endif
