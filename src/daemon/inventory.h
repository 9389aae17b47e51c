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
