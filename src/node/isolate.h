/*
 * What the node agent writes outside kubelet: the tenants' CPU weights on cgroup v2 (seed 004
 * §2.3), a CDI spec of the node's GPUs for runtimes that read CDI, and each shared pod's
 * libgpushare region file.
 *
 * CPU weight. The seed writes cpu.shares into a per-tenant group, which is cgroup v1, and a group
 * no process is in does nothing: kubelet puts every pod's processes in the pod's own cgroup. So
 * the weight goes there. kubelet sets a pod cgroup's cpu.weight from the pod's CPU requests
 * (shares = milli-CPU x 1024 / 1000, at least 2, kubelet's MilliCPUToShares; weight = 1 +
 * ((shares - 2) x 9999) / 262142, the cgroup v2 mapping of runc's
 * ConvertCPUSharesToCgroupV2Value that kubelet uses); the agent scales that weight by the pod's
 * tenant weight over the smallest tenant weight gpuschedd has:
 *
 *     cpu.weight = clamp(kubelet's weight x tenant_weight / tenant_weight_min, 1, 10000)
 *
 * (integer division; cgroup v2's cpu.weight range is 1..10000). The pod's cgroup is found in
 * either layout kubelet makes on cgroup v2 (pkg/kubelet/cm: the QoS classes and pod cgroup
 * names, systemd's escaping of '-' to '_'):
 *   systemd driver:  kubepods.slice/[kubepods-<qos>.slice/]kubepods[-<qos>]-pod<uid, - as _>.slice
 *   cgroupfs driver: kubepods/[<qos>/]pod<uid>
 * with <qos> burstable or besteffort; a Guaranteed pod sits directly under kubepods. A pod whose
 * cgroup is not there (yet) is left for the next call. kubelet, or systemd for its slices, may
 * write the weight again (a resize, a daemon-reload): a value that is not the one the agent wrote
 * is taken as kubelet's new weight and scaled again.
 */
#ifndef GS_NODE_ISOLATE_H
#define GS_NODE_ISOLATE_H

struct gs_diag;
struct gs_plan;
struct gs_topo;

/*
 * gs_cgroup_apply() - scale the cpu.weight of every pod of @p in its kubelet cgroup under @root
 * (the cgroup2 mount, "/sys/fs/cgroup", or a folder for tests), as above; each pod's cg_base and
 * cg_wrote record kubelet's weight and the agent's. Every pod is tried.
 * Return: 0; -errno with @d naming the file of the first pod that failed.
 */
int gs_cgroup_apply(struct gs_plan *p, const char *root, struct gs_diag *d);

/*
 * gs_cdi_write() - the CDI spec (CDI specification 0.6.0, kind gpusched.io/gpu) of @t's GPUs and
 * MIG instances to @dir/gpusched.io-gpu.json: one device per GPU UUID and MIG UUID, each with its
 * /dev/nvidia<minor> node and NVIDIA_VISIBLE_DEVICES, the control nodes for every device. Written
 * to a temporary file and renamed. Return: 0; -errno with @d.
 */
int gs_cdi_write(const struct gs_topo *t, const char *dir, struct gs_diag *d);

/*
 * gs_pod_regions_sync() - the region files of @p's shared pods (gs_plan_pod_shared()) under @root:
 * @root (a folder of mode 0700, made or set so: no one but root reaches the files through it), for
 * each such pod
 * @root/<uid>/ (0711) holding an empty @root/<uid>/region (0666), and nothing else. The folder is
 * mounted into every container of that pod and no other (plan.h), whatever user the container
 * runs as: so each of them may use the file, and nobody else can reach it. libgpushare sets the
 * file up at its first use. A folder under @root whose pod is no longer bound loses its region
 * file and goes. Every pod is tried.
 * Return: 0; -errno with @d naming the first path that failed.
 */
int gs_pod_regions_sync(const struct gs_plan *p, const char *root, struct gs_diag *d);

#endif
