/*
 * The node agent's NVML: NVIDIA's management library loaded with dlopen("libnvidia-ml.so.1")
 * (never linked, so the agent runs, and falls back, where no driver is installed), and what the
 * agent asks of it: the machine's topology tree (gpusched/topo.h), whether a card runs work, MIG
 * instances created and destroyed, and Xid events.
 *
 * Invariants: a struct gs_nvml holds the library's handle and one resolved pointer per function
 * of GS_NVML_FUNCS (nvml_abi.h); it is opened once, initialised (nvmlInit_v2) once, and closed
 * once. GPU indexes are NVML's (the order nvidia-smi prints). Thread safety: NVML is thread-safe;
 * a struct gs_nvml is read-only after gs_nvml_open(), so its calls may run from any thread.
 * Mutating calls take a @dry FILE: when non-NULL the call is only printed there, one line each,
 * as the NVML call and its arguments, and nothing is changed.
 */
#ifndef GS_NODE_NVML_H
#define GS_NODE_NVML_H

#include <stdint.h>
#include <stdio.h>

struct gs_diag;
struct gs_topo;
struct gs_nvml;

#define GS_NVML_LIB "libnvidia-ml.so.1" /* the soname NVIDIA's driver installs */

/*
 * gs_nvml_open() - dlopen @lib (NULL: GS_NVML_LIB, found the way the dynamic loader finds it, so
 * LD_LIBRARY_PATH points it elsewhere), resolve every function, and nvmlInit_v2().
 * Return: 0 and *@out (close with gs_nvml_close()); -ENOENT when the library cannot be loaded;
 * -ENOSYS when it lacks a function (a driver older than R470); -EIO when nvmlInit fails (the
 * message carries NVML's code); -ENOMEM. @d says which.
 */
int gs_nvml_open(const char *lib, struct gs_nvml **out, struct gs_diag *d);

/* gs_nvml_close() - nvmlShutdown() and dlclose(); NULL allowed. */
void gs_nvml_close(struct gs_nvml *n);

/*
 * gs_nvml_discover() - the machine's tree: every GPU (name, UUID, PCI bus id, memory, MIG mode and
 * instances with their UUIDs), the PCIe class of each pair (nvmlDeviceGetTopologyCommonAncestor),
 * NVLinks per pair from each active link's remote PCI device (a link to an NVSwitch counts towards
 * every GPU on the switches, as nvidia-smi prints NV18 on an HGX H100), NUMA node and CPU list
 * from sysfs under @sysfs ("/sys" on a machine; a folder for tests), then gs_topo_derive().
 * Return: 0 and @t filled; -EIO with @d naming the NVML call and its error; -E2BIG past
 * GS_GPUS_MAX GPUs.
 */
int gs_nvml_discover(struct gs_nvml *n, const char *sysfs, struct gs_topo *t, struct gs_diag *d);

/*
 * gs_nvml_busy() - whether GPU @gpu runs compute processes (nvmlDeviceGetComputeRunningProcesses
 * on the card's handle; on a MIG card that counts every instance's processes only for a
 * privileged caller, which the agent is). Return: 1 busy, 0 idle; -EIO with @d (then treat the
 * card as busy).
 */
int gs_nvml_busy(struct gs_nvml *n, int gpu, struct gs_diag *d);

/* A GPU instance as NVML has it on one card. */
struct gs_nvml_gi {
    unsigned int profile_id;  /* -lgip profile ID */
    unsigned int start, size; /* placement, memory slices */
    unsigned int id;          /* GPU instance ID */
};

/*
 * gs_nvml_mig_list() - the GPU instances of GPU @gpu, sorted by start slice.
 * @out: room for @max. Return: the count (>= 0); -EIO with @d.
 */
int gs_nvml_mig_list(struct gs_nvml *n, int gpu, struct gs_nvml_gi *out, int max,
                     struct gs_diag *d);

/*
 * gs_nvml_mig_create() - a GPU instance of NVML profile @nvml_profile (NVML_GPU_INSTANCE_PROFILE_*)
 * at memory slices @start..@start+@size-1 of GPU @gpu, and one compute instance spanning it (what
 * `nvidia-smi mig -cgi P -C` makes), or with @dry only the calls printed. Return: 0; -EIO with @d
 * naming the call that failed (a GPU instance whose compute instance failed is destroyed again).
 */
int gs_nvml_mig_create(struct gs_nvml *n, int gpu, int nvml_profile, int start, int size, FILE *dry,
                       struct gs_diag *d);

/*
 * gs_nvml_mig_mode() - turn MIG mode of GPU @gpu on (@on 1) or off (nvmlDeviceSetMigMode), or
 * with @dry only print the call. The caller makes sure the card runs nothing; a card that needs a
 * reset to take the change (NVML's activation status) is an error.
 * Return: 0; -EIO with @d.
 */
int gs_nvml_mig_mode(struct gs_nvml *n, int gpu, int on, FILE *dry, struct gs_diag *d);

/*
 * gs_nvml_mig_destroy() - the GPU instance starting at slice @start of GPU @gpu and its compute
 * instances, or with @dry only the calls printed; never while the instance runs processes, each
 * of its MIG devices asked through its own handle (nvmlDeviceGetMigDeviceHandleByIndex,
 * nvmlDeviceGetComputeRunningProcesses; NVML also refuses, NVML_ERROR_IN_USE, to destroy an
 * instance in use). Other instances of the card may run meanwhile.
 * Return: 0; -EBUSY with @d when the instance runs processes; -ENOENT when there is none; -EIO
 * with @d when NVML fails (then nothing was destroyed if the check itself failed).
 */
int gs_nvml_mig_destroy(struct gs_nvml *n, int gpu, int start, FILE *dry, struct gs_diag *d);

/*
 * gs_nvml_xid_wait() - wait up to @timeout_ms for an Xid critical error on any GPU (the event set
 * is created on first use). Return: 1 and *@gpu, *@xid set; 0 on timeout; -EIO with @d.
 */
int gs_nvml_xid_wait(struct gs_nvml *n, unsigned timeout_ms, int *gpu, unsigned long long *xid,
                     struct gs_diag *d);

/*
 * gs_xid_is_application() - whether Xid @xid is an application error that leaves the card
 * healthy: 13 (graphics engine exception), 31 (GPU memory page fault), 43 (GPU stopped
 * processing), 45 (preemptive cleanup), 68 (video processor exception), 109 (context switch
 * timeout) - the list NVIDIA's k8s-device-plugin skips (internal/rm/health.go,
 * applicationErrorXids; NVIDIA's Xid catalogue: docs.nvidia.com/deploy/xid-errors).
 */
int gs_xid_is_application(unsigned long long xid);

/*
 * gs_nvml_profile_of() - the NVML GPU instance profile (NVML_GPU_INSTANCE_PROFILE_*) of a MIG
 * profile with @compute slices and @memory of the card's @card_memory slices, @me: media
 * extensions (+me). Return: the enum value; -EINVAL when NVML has none.
 */
int gs_nvml_profile_of(int compute, int memory, int card_memory, int me);

#endif
