/*
 * gpusched — the environment contract between the node agent and libgpushare.
 *
 * The node agent puts these variables into a container's environment (with LD_PRELOAD naming
 * libgpushare); libgpushare, loaded into every process of the container, reads them once, at the
 * process's first CUDA driver call. This header is the one place the names live;
 * docs/libgpushare.md is the contract in full (units, defaults, what happens when a value is absent
 * or malformed).
 *
 * Value syntax of the two limit variables: a comma-separated list of entries, no spaces:
 *
 *     ENTRY[,ENTRY...]      ENTRY = VALUE | UUID=VALUE
 *
 * UUID names one device as nvidia-smi and NVML print it ("GPU-" or "MIG-" followed by 8-4-4-4-12
 * hexadecimal digits); a bare VALUE applies to every device no entry names. Devices are named by
 * UUID, never by index, because CUDA_VISIBLE_DEVICES may reorder a container's devices. At most
 * GS_GPUSHARE_MAX_ENTRIES entries; a UUID may appear once and a bare VALUE once.
 *
 * This header depends on nothing and declares no functions: both sides only need the names.
 */
#ifndef GPUSCHED_GPUSHARE_ENV_H
#define GPUSCHED_GPUSHARE_ENV_H

/* Device memory limit per device, in MiB (nvidia.com/gpumem): an integer 0 .. 2^30. The memory a
 * CUDA context itself costs (GS_GPUSHARE_ENV_CONTEXT_MIB) counts against it. */
#define GS_GPUSHARE_ENV_MEMORY_MIB "GPUSHARE_MEMORY_LIMIT_MIB"

/* Compute limit per device, in percent of the card's SMs over time (nvidia.com/gpucores): an
 * integer 1 .. 100; 100 is no limit. */
#define GS_GPUSHARE_ENV_CORES_PERCENT "GPUSHARE_CORES_LIMIT_PERCENT"

/* What one CUDA context costs on the card, in MiB, charged at each context creation: an integer
 * 0 .. 65536. Absent: GS_GPUSHARE_DEFAULT_CONTEXT_MIB, the most the node agent charges any model
 * (an H200 measured 527 MiB: bench/README.md). One value for every device; the node agent sets it
 * from the card's model (docs/node-agent.md, "What a CUDA context costs"). */
#define GS_GPUSHARE_ENV_CONTEXT_MIB     "GPUSHARE_CONTEXT_MIB"
#define GS_GPUSHARE_DEFAULT_CONTEXT_MIB 768

/* Where the processes of a pod count their usage: an existing file's absolute path ("/dir/file",
 * components of [A-Za-z0-9._-], 200 characters at most), which the node agent makes per pod and
 * mounts into that pod's containers only; or, without the agent, the name of a POSIX shared-memory
 * object (shm_open(3)): "/" then 1 .. 200 characters of [A-Za-z0-9._-]. Processes sharing a region
 * share their limits. Absent: GS_GPUSHARE_DEFAULT_REGION, '-' and the process's effective uid in
 * decimal (a shared-memory region is closed to other users, so each user has its own). */
#define GS_GPUSHARE_ENV_REGION     "GPUSHARE_REGION"
#define GS_GPUSHARE_DEFAULT_REGION "/gpushare"

/* The library's file name, for the LD_PRELOAD entry the agent writes. */
#define GS_GPUSHARE_LIBRARY "libgpushare.so"

/* Caps on a limit variable's value. */
#define GS_GPUSHARE_MAX_ENTRIES   64
#define GS_GPUSHARE_MAX_VALUE_LEN 4096

#endif
