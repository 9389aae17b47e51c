/*
 * The fake libnvidia-ml.so.1 of the tests: every NVML function the node agent and libgpushare
 * resolve (src/node/nvml_abi.h). It answers from one of two machines.
 *
 * The node agent's tests describe a machine in the file $FAKE_NVML_CONFIG:
 *
 *   gpu UUID BUSID MEMORY_MIB MIG(0|1) NAME...   one line per GPU, in index order
 *   pcie A B LEVEL                                 nvmlDeviceGetTopologyCommonAncestor (10..50)
 *   nvlink A B LINKS                               LINKS direct NVLinks between GPUs A and B
 *   nvswitch A LINKS                               LINKS NVLinks from GPU A to an NVSwitch
 *   busy A                                         GPU A runs a compute process
 *   xid A XID                                      an Xid event, delivered in file order
 *
 * $FAKE_NVML_XID, when set, names a file read again at every event wait once the config's Xids
 * are delivered: each line "A XID" not read before is an Xid event of GPU A, so a test can raise
 * one while the agent runs.
 *
 * $FAKE_NVML_BUSY, when set, names a file read again at every process query and destroy, so a
 * test can start and stop work: a line "A" is a process on GPU A, "A START" one on the MIG
 * device of GPU A's instance at slice START. The card's own handle does not count the latter,
 * as NVML answers a caller without the privilege to see every instance's processes.
 *
 * MIG: A100-80GB's GPU instance profiles (`nvidia-smi mig -lgip`); MIG modes and instances live
 * in $FAKE_NVML_STATE (kept across processes, as the driver keeps them across agent restarts), and
 * every call that changes them is appended to $FAKE_NVML_LOG, one line each, for the tests to read.
 *
 * libgpushare's tests give none, and $FAKECUDA_STATE instead: the fake card the fake libcuda.so.1
 * keeps (tests/shim/fake_state.h), whose devices NVML lists. Utilisation is sampled as NVML
 * samples it: once per sample period ($FAKENVML_SAMPLE_US, default 1/6 s, the shortest period
 * NVML documents for nvmlDeviceGetUtilizationRates; an H200 gave libgpushare a new sample at
 * about every other 100 ms tick). A process's sample is the kernel time its launches added since
 * this client's previous sample, over the wall time since then (capped at 100 %), stamped with
 * the period's end; nvmlDeviceGetProcessUtilization returns only samples stamped after the
 * caller's lastSeenTimeStamp, of processes busy in them, and NVML_ERROR_NOT_FOUND when there is
 * none. The card's utilisation is the sum of its processes' latest samples, also as one stamped
 * sample per period (nvmlDeviceGetSamples). Processes are listed by
 * pid + the card's pid_offset, as NVML lists host pids to a container that has its own pid
 * namespace. With FAKENVML_NO_PROCESS_UTIL set, per-process utilisation is not supported, as on
 * some boards.
 */
#define _GNU_SOURCE
#include "fake_state.h"
#include "node/nvml_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Prototypes of what this library defines: the lists the agent and libgpushare resolve. */
#define FAKE_DECL(name, args) nvmlReturn_t name args;
GS_NVML_FUNCS(FAKE_DECL)
GS_NVML_AGENT_OPTIONAL(FAKE_DECL)
GS_NVML_SHIM_FUNCS(FAKE_DECL)
#undef FAKE_DECL
gs_nvml_error_string_fn nvmlErrorString;

#define GPUS 16
#define GIS  64

struct fdev {
    int gpu, gi; /* gi: -1 for the card itself, else a GPU instance id (a MIG device) */
};

static struct {
    int ngpu;
    char uuid[GPUS][96], bus[GPUS][32], name[GPUS][96];
    long long mem[GPUS];
    int mig[GPUS], busy[GPUS], level[GPUS][GPUS], nv[GPUS][GPUS], sw[GPUS];
    int xid_gpu[32], xid[32], nxid, next_xid;
    struct fdev dev[GPUS], migdev[GIS];
    struct {
        int gpu, profile_id, start, size, id, ci; /* ci: compute instances on it */
    } gi[GIS];
    int ngi, next_id;
    struct fake_state *card; /* libgpushare's tests: the fake card, else NULL */
    int card_fd;
} F;

/* enum NVML_GPU_INSTANCE_PROFILE_* -> -lgip ID, compute slices, memory slices, MiB (A100 80GB) */
static const struct {
    int id, slices, mem_slices, mib;
} prof[NVML_GPU_INSTANCE_PROFILE_COUNT] = {
    [0] = {19, 1, 1, 9856}, [1] = {14, 2, 2, 19968}, [2] = {9, 3, 4, 40192}, [3] = {5, 4, 4, 40192},
    [4] = {0, 7, 8, 80896}, [5] = {-1, 0, 0, 0},     [6] = {-1, 0, 0, 0},    [7] = {20, 1, 1, 9856},
    [8] = {-1, 0, 0, 0},    [9] = {15, 1, 2, 19968},
};

/* Whether $FAKE_NVML_BUSY has a process on GPU @gpu (@start < 0) or on its instance at @start. */
static int busy_now(int gpu, int start)
{
    const char *p = getenv("FAKE_NVML_BUSY");
    FILE *f = p ? fopen(p, "r") : NULL;
    char line[64];
    int hit = 0;
    while (f && !hit && fgets(line, sizeof(line), f)) {
        int g, s, n = sscanf(line, "%d %d", &g, &s);
        hit = g == gpu && (start < 0 ? n == 1 : n == 2 && s == start);
    }
    if (f)
        fclose(f);
    return hit || (start < 0 && F.busy[gpu]);
}

static void logf_(const char *fmt, int a, int b, int c)
{
    const char *p = getenv("FAKE_NVML_LOG");
    FILE *f = p ? fopen(p, "a") : NULL;
    if (!f)
        return;
    fprintf(f, fmt, a, b, c);
    fputc('\n', f);
    fclose(f);
}

static void save(void)
{
    const char *p = getenv("FAKE_NVML_STATE");
    FILE *f = p ? fopen(p, "w") : NULL;
    if (!f)
        return;
    for (int g = 0; g < F.ngpu; g++)
        fprintf(f, "mode %d %d\n", g, F.mig[g]);
    for (int i = 0; i < F.ngi; i++)
        fprintf(f, "%d %d %d %d %d %d\n", F.gi[i].gpu, F.gi[i].profile_id, F.gi[i].start,
                F.gi[i].size, F.gi[i].id, F.gi[i].ci);
    fclose(f);
}

static void load_state(void)
{
    const char *p = getenv("FAKE_NVML_STATE");
    FILE *f = p ? fopen(p, "r") : NULL;
    int g, m;
    F.next_id = 1;
    while (f && fscanf(f, " mode %d %d", &g, &m) == 2)
        if (g >= 0 && g < F.ngpu)
            F.mig[g] = m;
    while (f && F.ngi < GIS &&
           fscanf(f, "%d %d %d %d %d %d", &F.gi[F.ngi].gpu, &F.gi[F.ngi].profile_id,
                  &F.gi[F.ngi].start, &F.gi[F.ngi].size, &F.gi[F.ngi].id, &F.gi[F.ngi].ci) == 6) {
        if (F.gi[F.ngi].id >= F.next_id)
            F.next_id = F.gi[F.ngi].id + 1;
        F.ngi++;
    }
    if (f)
        fclose(f);
}

/* The fake card's devices, as NVML would list them (libgpushare's tests). */
static nvmlReturn_t init_card(const char *path)
{
    if (!F.card && !(F.card = fake_state_map(path, &F.card_fd)))
        return NVML_ERROR_UNINITIALIZED;
    for (int n = 0; n < F.card->ndev && n < GPUS; n++) {
        unsigned char u[16];
        fake_uuid(n, u);
        snprintf(F.uuid[n], sizeof(F.uuid[n]),
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                 u[14], u[15]);
        F.mem[n] = (long long)(F.card->total[n] >> 20);
        F.dev[n] = (struct fdev){n, -1};
        F.ngpu++;
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void)
{
    const char *p = getenv("FAKE_NVML_CONFIG"), *card = getenv("FAKECUDA_STATE");
    FILE *f = p ? fopen(p, "r") : NULL;
    char line[512];
    struct fake_state *keep = F.card;
    int keep_fd = F.card_fd;
    memset(&F, 0, sizeof(F));
    F.card = keep;
    F.card_fd = keep_fd;
    if (!p && card)
        return init_card(card);
    if (!f)
        return NVML_ERROR_UNKNOWN;
    while (fgets(line, sizeof(line), f)) {
        int a, b, c, n = F.ngpu, mig;
        long long mem;
        if (sscanf(line, "gpu %95s %31s %lld %d %n", F.uuid[n], F.bus[n], &mem, &mig, &a) == 4 &&
            n < GPUS) {
            snprintf(F.name[n], sizeof(F.name[n]), "%s", line + a);
            F.name[n][strcspn(F.name[n], "\n")] = '\0';
            F.mem[n] = mem;
            F.mig[n] = mig;
            F.dev[n] = (struct fdev){n, -1};
            F.ngpu++;
        } else if (sscanf(line, "pcie %d %d %d", &a, &b, &c) == 3) {
            F.level[a][b] = F.level[b][a] = c;
        } else if (sscanf(line, "nvlink %d %d %d", &a, &b, &c) == 3) {
            F.nv[a][b] = F.nv[b][a] = c;
        } else if (sscanf(line, "nvswitch %d %d", &a, &b) == 2) {
            F.sw[a] = b;
        } else if (sscanf(line, "busy %d", &a) == 1) {
            F.busy[a] = 1;
        } else if (sscanf(line, "xid %d %d", &a, &b) == 2 && F.nxid < 32) {
            F.xid_gpu[F.nxid] = a;
            F.xid[F.nxid++] = b;
        }
    }
    fclose(f);
    load_state();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
    return r == NVML_ERROR_NOT_FOUND ? "Not Found" : r == NVML_ERROR_IN_USE ? "In use" : "Error";
}

static struct fdev *D(nvmlDevice_t d)
{
    return (struct fdev *)d;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    *count = (unsigned)F.ngpu;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *dev)
{
    if ((int)i >= F.ngpu)
        return NVML_ERROR_INVALID_ARGUMENT;
    *dev = (nvmlDevice_t)&F.dev[i];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char *uuid, unsigned int len)
{
    if (D(dev)->gi < 0)
        snprintf(uuid, len, "%s", F.uuid[D(dev)->gpu]);
    else /* a MIG device: "MIG-" and a name made of its card and instance */
        snprintf(uuid, len, "MIG-%.8s-0000-4000-8000-%012d", F.uuid[D(dev)->gpu] + 4, D(dev)->gi);
    return NVML_SUCCESS;
}

/* The NUMA node comes from sysfs, as on machines whose driver predates nvmlDeviceGetNumaNodeId. */
nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t dev, unsigned int *node)
{
    (void)dev;
    (void)node;
    return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char *name, unsigned int len)
{
    snprintf(name, len, "%s", F.name[D(dev)->gpu]);
    return NVML_SUCCESS;
}

static int gi_index(int gpu, int id)
{
    for (int i = 0; i < F.ngi; i++)
        if (F.gi[i].gpu == gpu && F.gi[i].id == id)
            return i;
    return -1;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *mem)
{
    long long mib = F.mem[D(dev)->gpu];
    if (D(dev)->gi >= 0) {
        int k = gi_index(D(dev)->gpu, D(dev)->gi);
        for (int p = 0; k >= 0 && p < NVML_GPU_INSTANCE_PROFILE_COUNT; p++)
            if (prof[p].id == F.gi[k].profile_id)
                mib = prof[p].mib;
    }
    mem->total = (unsigned long long)mib << 20;
    mem->used = 0;
    mem->free = mem->total;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t dev, unsigned int *minor)
{
    *minor = (unsigned)D(dev)->gpu;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t dev, nvmlPciInfo_t *pci)
{
    memset(pci, 0, sizeof(*pci));
    snprintf(pci->busId, sizeof(pci->busId), "%s", F.bus[D(dev)->gpu]);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
                                                 nvmlGpuTopologyLevel_t *level)
{
    int l = F.level[D(a)->gpu][D(b)->gpu];
    *level = l ? l : NVML_TOPOLOGY_SYSTEM;
    return NVML_SUCCESS;
}

/* Links of GPU g in order: direct ones to each peer, then those to the switch. */
static int link_peer(int g, unsigned link)
{
    unsigned k = 0;
    for (int p = 0; p < F.ngpu; p++)
        for (int i = 0; i < F.nv[g][p]; i++)
            if (k++ == link)
                return p;
    return k + (unsigned)F.sw[g] > link ? GPUS : -1;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t dev, unsigned int link, nvmlEnableState_t *on)
{
    if (link >= NVML_NVLINK_MAX_LINKS)
        return NVML_ERROR_INVALID_ARGUMENT;
    *on = link_peer(D(dev)->gpu, link) >= 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t dev, unsigned int link,
                                                 nvmlPciInfo_t *pci)
{
    int p = link_peer(D(dev)->gpu, link);
    if (p < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof(*pci));
    snprintf(pci->busId, sizeof(pci->busId), "%s", p < GPUS ? F.bus[p] : "00000000:C1:00.0");
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int *cur, unsigned int *pend)
{
    *cur = *pend = (unsigned)F.mig[D(dev)->gpu];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetMigMode(nvmlDevice_t dev, unsigned int mode, nvmlReturn_t *activation)
{
    int g = D(dev)->gpu;
    if (busy_now(g, -1))
        return NVML_ERROR_IN_USE;
    for (int i = 0; i < F.ngi && !mode; i++)
        if (F.gi[i].gpu == g)
            return NVML_ERROR_IN_USE;
    F.mig[g] = (int)mode;
    *activation = NVML_SUCCESS;
    logf_("nvmlDeviceSetMigMode gpu=%d mode=%d%.0d", g, (int)mode, 0);
    save();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t dev, unsigned int *count)
{
    *count = F.mig[D(dev)->gpu] ? 7 : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t dev, unsigned int index,
                                                 nvmlDevice_t *mig)
{
    unsigned k = 0;
    for (int i = 0; i < F.ngi; i++)
        if (F.gi[i].gpu == D(dev)->gpu && k++ == index) {
            F.migdev[i] = (struct fdev){D(dev)->gpu, F.gi[i].id};
            *mig = (nvmlDevice_t)&F.migdev[i];
            return NVML_SUCCESS;
        }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t mig, unsigned int *id)
{
    if (D(mig)->gi < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    *id = (unsigned)D(mig)->gi;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t dev, unsigned int p,
                                                 nvmlGpuInstanceProfileInfo_t *info)
{
    if (!F.mig[D(dev)->gpu])
        return NVML_ERROR_NOT_SUPPORTED;
    if (p >= NVML_GPU_INSTANCE_PROFILE_COUNT || prof[p].id < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(info, 0, sizeof(*info));
    info->id = (unsigned)prof[p].id;
    info->sliceCount = (unsigned)prof[p].slices;
    info->memorySizeMB = (unsigned long long)prof[p].mib;
    return NVML_SUCCESS;
}

/* A GPU instance handle is its index in F.gi plus one, as a pointer. */
nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t dev, unsigned int profile_id,
                                       nvmlGpuInstance_t *gis, unsigned int *count)
{
    unsigned k = 0;
    for (int i = 0; i < F.ngi; i++)
        if (F.gi[i].gpu == D(dev)->gpu && F.gi[i].profile_id == (int)profile_id) {
            if (k == *count)
                return NVML_ERROR_INSUFFICIENT_SIZE;
            gis[k++] = (nvmlGpuInstance_t)(size_t)(i + 1);
        }
    *count = k;
    return NVML_SUCCESS;
}

static int GI(nvmlGpuInstance_t gi)
{
    return (int)(size_t)gi - 1;
}

nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t dev, unsigned int profile_id,
                                                      const nvmlGpuInstancePlacement_t *pl,
                                                      nvmlGpuInstance_t *gi)
{
    int g = D(dev)->gpu; /* other instances may run work meanwhile */
    for (int i = 0; i < F.ngi; i++)
        if (F.gi[i].gpu == g && (int)pl->start < F.gi[i].start + F.gi[i].size &&
            F.gi[i].start < (int)(pl->start + pl->size))
            return NVML_ERROR_INSUFFICIENT_RESOURCES;
    if (F.ngi == GIS)
        return NVML_ERROR_INSUFFICIENT_RESOURCES;
    F.gi[F.ngi].gpu = g;
    F.gi[F.ngi].profile_id = (int)profile_id;
    F.gi[F.ngi].start = (int)pl->start;
    F.gi[F.ngi].size = (int)pl->size;
    F.gi[F.ngi].id = F.next_id++;
    F.gi[F.ngi].ci = 0;
    *gi = (nvmlGpuInstance_t)(size_t)(++F.ngi);
    logf_("nvmlDeviceCreateGpuInstanceWithPlacement gpu=%d profile=%d start=%d", g, (int)profile_id,
          (int)pl->start);
    save();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t *info)
{
    int i = GI(gi);
    memset(info, 0, sizeof(*info));
    info->device = (nvmlDevice_t)&F.dev[F.gi[i].gpu];
    info->id = (unsigned)F.gi[i].id;
    info->profileId = (unsigned)F.gi[i].profile_id;
    info->placement.start = (unsigned)F.gi[i].start;
    info->placement.size = (unsigned)F.gi[i].size;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gi)
{
    int i = GI(gi);
    if (F.gi[i].ci > 0 || busy_now(F.gi[i].gpu, F.gi[i].start))
        return NVML_ERROR_IN_USE;
    logf_("nvmlGpuInstanceDestroy gpu=%d start=%d%.0d", F.gi[i].gpu, F.gi[i].start, 0);
    F.gi[i] = F.gi[--F.ngi];
    save();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gi, unsigned int p,
                                                          unsigned int eng,
                                                          nvmlComputeInstanceProfileInfo_t *info)
{
    (void)gi;
    (void)eng;
    if (p > 7)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(info, 0, sizeof(*info));
    info->id = p;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gi, unsigned int profile_id,
                                                  nvmlComputeInstance_t *ci)
{
    int i = GI(gi);
    F.gi[i].ci++;
    *ci = (nvmlComputeInstance_t)(size_t)(i + 1);
    logf_("nvmlGpuInstanceCreateComputeInstance gpu=%d start=%d profile=%d", F.gi[i].gpu,
          F.gi[i].start, (int)profile_id);
    save();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gi, unsigned int profile_id,
                                                nvmlComputeInstance_t *cis, unsigned int *count)
{
    int i = GI(gi);
    unsigned k = 0;
    (void)profile_id; /* every compute instance is listed under profile 0 */
    for (int c = 0; profile_id == 0 && c < F.gi[i].ci && k < *count; c++)
        cis[k++] = (nvmlComputeInstance_t)(size_t)(i + 1);
    *count = k;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t ci)
{
    int i = (int)(size_t)ci - 1;
    if (busy_now(F.gi[i].gpu, F.gi[i].start))
        return NVML_ERROR_IN_USE;
    if (F.gi[i].ci > 0)
        F.gi[i].ci--;
    logf_("nvmlComputeInstanceDestroy gpu=%d start=%d%.0d", F.gi[i].gpu, F.gi[i].start, 0);
    save();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t dev, unsigned int *count,
                                                     void *infos)
{
    (void)infos;
    int k = D(dev)->gi < 0 ? -1 : gi_index(D(dev)->gpu, D(dev)->gi);
    if (busy_now(D(dev)->gpu, k < 0 ? -1 : F.gi[k].start) && *count == 0) {
        *count = 1;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
    *set = (nvmlEventSet_t)&F;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t dev, unsigned long long types,
                                      nvmlEventSet_t set)
{
    (void)dev;
    (void)types;
    (void)set;
    return NVML_SUCCESS;
}

/* The next line of $FAKE_NVML_XID not delivered yet into @gpu, @xid. Return: 1 one; 0 none. */
static int xid_file(int *gpu, int *xid)
{
    static int seen; /* lines delivered */
    const char *p = getenv("FAKE_NVML_XID");
    FILE *f = p ? fopen(p, "r") : NULL;
    char line[64];
    int n = 0, got = 0;
    while (f && !got && fgets(line, sizeof(line), f))
        if (sscanf(line, "%d %d", gpu, xid) == 2 && n++ == seen && *gpu >= 0 && *gpu < F.ngpu)
            got = 1;
    if (f)
        fclose(f);
    seen += got;
    return got;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int ms)
{
    (void)set;
    int gpu, xid;
    if (F.next_xid >= F.nxid && xid_file(&gpu, &xid)) {
        memset(data, 0, sizeof(*data));
        data->device = (nvmlDevice_t)&F.dev[gpu];
        data->eventType = nvmlEventTypeXidCriticalError;
        data->eventData = (unsigned long long)xid;
        return NVML_SUCCESS;
    }
    if (F.next_xid >= F.nxid) {
        struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        return NVML_ERROR_TIMEOUT;
    }
    memset(data, 0, sizeof(*data));
    data->device = (nvmlDevice_t)&F.dev[F.xid_gpu[F.next_xid]];
    data->eventType = nvmlEventTypeXidCriticalError;
    data->eventData = (unsigned long long)F.xid[F.next_xid++];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
    (void)set;
    return NVML_SUCCESS;
}

/* ---- utilisation, for libgpushare's compute limit, from the fake card ---- */

/* Per card process and device: its latest sample (stamp: the end of its period; pct) and the busy
 * time and clock it was taken at, by this client. */
static struct {
    int32_t pid;
    uint64_t busy, at_us, stamp;
    unsigned pct;
} last[FAKE_PROCS][FAKE_DEVS];

static uint64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* The card's device behind @d, or -1 (no card, or a MIG device). */
static int card_dev(nvmlDevice_t d)
{
    return F.card && d && D(d)->gi < 0 && D(d)->gpu < F.card->ndev ? D(d)->gpu : -1;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    for (int i = 0; i < F.ngpu; i++) {
        if (strcmp(F.uuid[i], uuid) == 0) {
            *device = (nvmlDevice_t)&F.dev[i];
            return NVML_SUCCESS;
        }
    }
    return F.ngpu ? NVML_ERROR_NOT_FOUND : NVML_ERROR_UNINITIALIZED;
}

static uint64_t sample_period_us(void)
{
    const char *v = getenv("FAKENVML_SAMPLE_US");
    long long us = v ? atoll(v) : 0;
    return us > 0 ? (uint64_t)us : 166667;
}

/* Process @i's latest sample on @dev at @now: a new one once a sample period ended since the
 * previous one, else the previous one (stamp 0: none yet). */
static void sample_of(int i, int dev, uint64_t now, uint64_t *stamp, unsigned *pct)
{
    struct fake_proc *p = &F.card->proc[i];
    int32_t pid = atomic_load(&p->pid);
    uint64_t busy = atomic_load(&p->busy_us[dev]), period = sample_period_us();
    uint64_t edge = now / period * period;
    if (last[i][dev].pid != pid || last[i][dev].at_us == 0) {
        last[i][dev].pid = pid;
        last[i][dev].busy = busy;
        last[i][dev].at_us = now;
        last[i][dev].stamp = 0;
        last[i][dev].pct = 0;
    } else if (edge > last[i][dev].at_us) {
        uint64_t dt = now - last[i][dev].at_us, db = busy - last[i][dev].busy;
        uint64_t v = db * 100 / dt;
        last[i][dev].pct = v > 100 ? 100 : (unsigned)v;
        last[i][dev].busy = busy;
        last[i][dev].at_us = now;
        last[i][dev].stamp = edge;
    }
    *stamp = last[i][dev].stamp;
    *pct = last[i][dev].pct;
}

static int running(int i, int dev)
{
    struct fake_proc *p = &F.card->proc[i];
    return atomic_load(&p->pid) != 0 && atomic_load(&p->ctxs[dev]) > 0 &&
           fake_alive(atomic_load(&p->pid));
}

/* The card's utilisation at @now: the sum of its processes' latest samples, capped at 100 %. */
static unsigned card_pct(int dev, uint64_t now)
{
    uint64_t sum = 0, stamp;
    for (int i = 0; i < FAKE_PROCS; i++) {
        unsigned pct;
        if (running(i, dev)) {
            sample_of(i, dev, now, &stamp, &pct);
            sum += pct;
        }
    }
    return sum > 100 ? 100 : (unsigned)sum;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *u)
{
    int dev = card_dev(device);
    if (dev < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    u->gpu = card_pct(dev, now_us());
    u->memory = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t *samples,
                                             unsigned int *count, unsigned long long lastSeen)
{
    int dev = card_dev(device);
    if (dev < 0 || !count)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (getenv("FAKENVML_NO_PROCESS_UTIL"))
        return NVML_ERROR_NOT_SUPPORTED;
    unsigned n = 0, cap = samples ? *count : 0;
    uint64_t now = now_us(), stamp;
    for (int i = 0; i < FAKE_PROCS; i++) {
        unsigned pct;
        if (!running(i, dev))
            continue;
        sample_of(i, dev, now, &stamp, &pct);
        if (stamp <= lastSeen || pct == 0)
            continue;
        if (n < cap) {
            int32_t pid = atomic_load(&F.card->proc[i].pid);
            samples[n] = (nvmlProcessUtilizationSample_t){
                (unsigned)pid + F.card->pid_offset, stamp, pct, 0, 0, 0};
        }
        n++;
    }
    *count = n;
    if (n == 0)
        return NVML_ERROR_NOT_FOUND;
    return n > cap ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

/* The card's utilisation samples: one per period, stamped with its end, the sum of its processes'
 * samples then. FAKENVML_NO_DEVICE_SAMPLES: not kept, as by NVML before Kepler. */
nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type,
                                  unsigned long long lastSeen, nvmlValueType_t *valType,
                                  unsigned int *count, nvmlSample_t *samples)
{
    int dev = card_dev(device);
    if (dev < 0 || !count || !valType)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (type != NVML_GPU_UTILIZATION_SAMPLES || getenv("FAKENVML_NO_DEVICE_SAMPLES"))
        return NVML_ERROR_NOT_SUPPORTED;
    uint64_t now = now_us(), period = sample_period_us(), edge = now / period * period;
    unsigned pct = card_pct(dev, now);
    *valType = 1; /* NVML_VALUE_TYPE_UNSIGNED_INT */
    if (edge <= lastSeen) {
        *count = 0;
        return NVML_ERROR_NOT_FOUND;
    }
    if (samples && *count < 1)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    if (samples)
        samples[0] = (nvmlSample_t){edge, {.uiVal = pct}};
    *count = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *count,
                                                  nvmlProcessInfo_v1_t *infos)
{
    int dev = card_dev(device);
    if (dev < 0 || !count)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned n = 0;
    fake_lock(F.card_fd);
    for (int i = 0; i < FAKE_PROCS; i++) {
        if (!running(i, dev))
            continue;
        if (infos && n < *count)
            infos[n] = (nvmlProcessInfo_v1_t){(unsigned)atomic_load(&F.card->proc[i].pid) +
                                                  F.card->pid_offset,
                                              F.card->proc[i].used[dev]};
        n++;
    }
    fake_unlock(F.card_fd);
    nvmlReturn_t rc = infos && n <= *count ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
    *count = n;
    return rc;
}
