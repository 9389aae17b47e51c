/*
 * What the node agent writes outside kubelet: a CPU weight per tenant on cgroup v2 (seed 004
 * §2.3), and a CDI spec of the node's GPUs for runtimes that read CDI.
 *
 * CPU weight. The seed writes cpu.shares, which is cgroup v1; on cgroup v2 the file is cpu.weight
 * (1..10000, default 100). A tenant's shares are what Kubernetes gives its CPU requests on this
 * node, 1024 per core (kubelet's MilliCPUToShares: milli x 1024 / 1000, at least 2), and are
 * mapped to a weight by the formula runc, crun and the kubelet use for cgroup v2
 * (runc libcontainer/cgroups ConvertCPUSharesToCgroupV2Value; Kubernetes
 * pkg/kubelet/cm CpuSharesToCpuWeight): weight = 1 + ((shares - 2) x 9999) / 262142, so 2 shares
 * map to 1, 1024 to 39 and 262144 to 10000.
 *
 * Each tenant has the group <root>/<parent>/tenant-<name>; the parent gets "+cpu" in its
 * cgroup.subtree_control. Groups of tenants with no pod left are removed when empty.
 */
#ifndef GS_NODE_ISOLATE_H
#define GS_NODE_ISOLATE_H

#include <stdint.h>

struct gs_diag;
struct gs_plan;
struct gs_topo;

/* gs_cpu_shares() - cgroup v1 shares of @milli CPU (kubelet's MilliCPUToShares), 2..262144. */
uint64_t gs_cpu_shares(int64_t milli);

/* gs_cpu_weight() - cgroup v2 cpu.weight of @shares (the formula above), 1..10000. */
uint64_t gs_cpu_weight(uint64_t shares);

/*
 * gs_cgroup_apply() - write every tenant's cpu.weight for the pods of @p under @root/@parent
 * (@root: the cgroup2 mount, "/sys/fs/cgroup", or a folder for tests), and remove the groups of
 * tenants no longer on the node.
 * Return: 0; -errno with @d naming the file.
 */
int gs_cgroup_apply(const struct gs_plan *p, const char *root, const char *parent,
                    struct gs_diag *d);

/*
 * gs_cdi_write() - the CDI spec (CDI specification 0.6.0, kind gpusched.io/gpu) of @t's GPUs and
 * MIG instances to @dir/gpusched.io-gpu.json: one device per GPU UUID and MIG UUID, each with its
 * /dev/nvidia<minor> node and NVIDIA_VISIBLE_DEVICES, the control nodes for every device. Written
 * to a temporary file and renamed. Return: 0; -errno with @d.
 */
int gs_cdi_write(const struct gs_topo *t, const char *dir, struct gs_diag *d);

#endif
