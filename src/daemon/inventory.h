/*
 * The node inventory gpuschedd schedules on.
 */
#ifndef GSD_INVENTORY_H
#define GSD_INVENTORY_H

struct gs_cluster;
struct gs_diag;

/*
 * gsd_inventory_load() - build the cluster the daemon schedules on from @path. The one place
 * that knows the inventory format (today the node CSV of include/gpusched/trace.h), so another
 * loader can take its place. Return: 0 and *@out; -EINVAL/-ENOENT/-EIO with @d; -ENOMEM.
 */
int gsd_inventory_load(const char *path, struct gs_cluster **out, struct gs_diag *d);

#endif
