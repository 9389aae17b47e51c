/* NVML by dlopen: discovery, MIG actuation, Xid events. Invariants: nvml.h. */
#include "nvml.h"

#include "nvml_abi.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/mig.h"
#include "gpusched/topo.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct gs_nvml {
    void *lib;
#define GS_NVML_PTR(name, args) nvmlReturn_t(*name) args;
    GS_NVML_FUNCS(GS_NVML_PTR)
    GS_NVML_AGENT_OPTIONAL(GS_NVML_PTR) /* NULL where the driver lacks them */
#undef GS_NVML_PTR
    gs_nvml_error_string_fn *error_string;
    nvmlEventSet_t events;
    unsigned ndev;
    nvmlDevice_t dev[GS_GPUS_MAX];
};

static const char *nv_err(const struct gs_nvml *n, nvmlReturn_t r)
{
    const char *s = n->error_string ? n->error_string(r) : NULL;
    return s ? s : "NVML error";
}

static int fail(const struct gs_nvml *n, struct gs_diag *d, const char *call, nvmlReturn_t r)
{
    return gs_diag_error_code(d, -EIO, "NVML %s: %s (%d)", call, nv_err(n, r), r);
}

int gs_nvml_open(const char *lib, struct gs_nvml **out, struct gs_diag *d)
{
    struct gs_nvml *n = calloc(1, sizeof(*n));
    if (!n)
        return gs_diag_error_code(d, -ENOMEM, "out of memory");
    n->lib = dlopen(lib ? lib : GS_NVML_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        const char *why = dlerror();
        free(n);
        return gs_diag_error_code(d, -ENOENT, "cannot load %s: %s", lib ? lib : GS_NVML_LIB,
                                  why ? why : "not found");
    }
    /* dlsym() returns void *; POSIX guarantees it converts to a function pointer. */
#define GS_NVML_SYM(name, args)                                                                    \
    *(void **)(&n->name) = dlsym(n->lib, #name);                                                   \
    if (!n->name) {                                                                                \
        gs_nvml_close(n);                                                                          \
        return gs_diag_error_code(d, -ENOSYS, "%s lacks %s (NVIDIA driver R470 or later needed)",  \
                                  lib ? lib : GS_NVML_LIB, #name);                                 \
    }
    GS_NVML_FUNCS(GS_NVML_SYM)
#undef GS_NVML_SYM
#define GS_NVML_OPT(name, args) *(void **)(&n->name) = dlsym(n->lib, #name);
    GS_NVML_AGENT_OPTIONAL(GS_NVML_OPT)
#undef GS_NVML_OPT
    *(void **)(&n->error_string) = dlsym(n->lib, "nvmlErrorString");
    nvmlReturn_t r = n->nvmlInit_v2();
    if (r != NVML_SUCCESS) {
        int rc = fail(n, d, "nvmlInit_v2", r);
        n->nvmlShutdown = NULL; /* nothing to shut down */
        gs_nvml_close(n);
        return rc;
    }
    r = n->nvmlDeviceGetCount_v2(&n->ndev);
    if (r == NVML_SUCCESS && n->ndev > GS_GPUS_MAX)
        r = NVML_ERROR_INSUFFICIENT_SIZE;
    for (unsigned i = 0; r == NVML_SUCCESS && i < n->ndev; i++)
        r = n->nvmlDeviceGetHandleByIndex_v2(i, &n->dev[i]);
    if (r != NVML_SUCCESS) {
        int rc = fail(n, d, "nvmlDeviceGetHandleByIndex", r);
        gs_nvml_close(n);
        return rc;
    }
    *out = n;
    return 0;
}

void gs_nvml_close(struct gs_nvml *n)
{
    if (!n)
        return;
    if (n->events && n->nvmlEventSetFree)
        n->nvmlEventSetFree(n->events);
    if (n->nvmlShutdown)
        n->nvmlShutdown();
    dlclose(n->lib);
    free(n);
}

/* sysfs's text of @file of PCI device @bus ("00000000:07:00.0" -> 0000:07:00.0), trimmed. */
static int sysfs_read(const char *sysfs, const char *bus, const char *file, char *buf, size_t n)
{
    char path[512];
    const char *b = strlen(bus) == 16 ? bus + 4 : bus; /* NVML pads the domain to 8 digits */
    snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/%s", sysfs, b, file);
    for (char *p = path + strlen(sysfs); *p; p++)
        *p = (char)(*p >= 'A' && *p <= 'F' ? *p - 'A' + 'a' : *p);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t k = fread(buf, 1, n - 1, f);
    fclose(f);
    while (k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == ' '))
        k--;
    buf[k] = '\0';
    return k > 0 ? 0 : -1;
}

static void locality(const struct gs_nvml *n, const char *sysfs, int g, struct gs_topo_gpu *u)
{
    char buf[GS_TOPO_CPUS_MAX];
    unsigned node;
    if (n->nvmlDeviceGetNumaNodeId &&
        n->nvmlDeviceGetNumaNodeId(n->dev[g], &node) == NVML_SUCCESS && node < 4096) {
        u->numa = (int)node;
    } else if (sysfs_read(sysfs, u->pci, "numa_node", buf, sizeof(buf)) == 0) {
        int v = atoi(buf);
        u->numa = v >= 0 ? v : -1;
    }
    if (u->numa >= 0)
        snprintf(u->numa_list, sizeof(u->numa_list), "%d", u->numa);
    if (sysfs_read(sysfs, u->pci, "local_cpulist", buf, sizeof(buf)) == 0)
        snprintf(u->cpus, sizeof(u->cpus), "%s", buf);
}

/* NVIDIA's name of GPU instance profile ID @id on a card named @product, or "". */
static void profile_name(const char *product, unsigned id, char *out, size_t n)
{
    int model = gs_catalog_find_product(product);
    int mm = model >= 0 ? gs_mig_model_find(gs_catalog_at(model)->name) : -1;
    const struct gs_mig_model *m = mm >= 0 ? gs_mig_model_at(mm) : NULL;
    out[0] = '\0';
    for (int i = 0; m && i < m->nprofiles; i++)
        if (m->profiles[i].id == id)
            snprintf(out, n, "%s", m->profiles[i].name);
}

static int mig_instances(struct gs_nvml *n, int g, struct gs_topo_gpu *u, struct gs_diag *d)
{
    struct gs_nvml_gi gi[GS_TOPO_MIG_MAX];
    int count = gs_nvml_mig_list(n, g, gi, GS_TOPO_MIG_MAX, d);
    if (count < 0)
        return count;
    unsigned max = 0;
    if (n->nvmlDeviceGetMaxMigDeviceCount(n->dev[g], &max) != NVML_SUCCESS)
        max = 0;
    for (int i = 0; i < count; i++) {
        struct gs_topo_mig *m = &u->mig[u->nmig++];
        m->gi_profile = (int)gi[i].profile_id;
        profile_name(u->name, gi[i].profile_id, m->profile, sizeof(m->profile));
        m->start = (int)gi[i].start;
        m->size = (int)gi[i].size;
        for (unsigned k = 0; k < max && k < 64; k++) {
            nvmlDevice_t md;
            unsigned id;
            if (n->nvmlDeviceGetMigDeviceHandleByIndex(n->dev[g], k, &md) != NVML_SUCCESS ||
                n->nvmlDeviceGetGpuInstanceId(md, &id) != NVML_SUCCESS || id != gi[i].id)
                continue;
            nvmlMemory_t mem;
            n->nvmlDeviceGetUUID(md, m->uuid, sizeof(m->uuid));
            if (n->nvmlDeviceGetMemoryInfo(md, &mem) == NVML_SUCCESS)
                m->memory_mib = (int64_t)(mem.total >> 20);
        }
    }
    return 0;
}

static int gpu_facts(struct gs_nvml *n, const char *sysfs, int g, struct gs_topo_gpu *u,
                     struct gs_diag *d)
{
    nvmlPciInfo_t pci;
    nvmlMemory_t mem;
    unsigned cur, pend;
    nvmlReturn_t r;
    if ((r = n->nvmlDeviceGetUUID(n->dev[g], u->uuid, sizeof(u->uuid))) != NVML_SUCCESS)
        return fail(n, d, "nvmlDeviceGetUUID", r);
    if ((r = n->nvmlDeviceGetName(n->dev[g], u->name, sizeof(u->name))) != NVML_SUCCESS)
        return fail(n, d, "nvmlDeviceGetName", r);
    if ((r = n->nvmlDeviceGetPciInfo_v3(n->dev[g], &pci)) != NVML_SUCCESS)
        return fail(n, d, "nvmlDeviceGetPciInfo_v3", r);
    pci.busId[sizeof(pci.busId) - 1] = '\0';
    snprintf(u->pci, sizeof(u->pci), "%s", pci.busId);
    if ((r = n->nvmlDeviceGetMemoryInfo(n->dev[g], &mem)) != NVML_SUCCESS)
        return fail(n, d, "nvmlDeviceGetMemoryInfo", r);
    u->memory_mib = (int64_t)(mem.total >> 20);
    unsigned minor;
    if (n->nvmlDeviceGetMinorNumber(n->dev[g], &minor) == NVML_SUCCESS && minor < 4096)
        u->minor = (int)minor;
    r = n->nvmlDeviceGetMigMode(n->dev[g], &cur, &pend);
    u->mig_mode = r == NVML_SUCCESS ? cur == NVML_DEVICE_MIG_ENABLE : -1;
    locality(n, sysfs, g, u);
    return u->mig_mode == 1 ? mig_instances(n, g, u, d) : 0;
}

static enum gs_link pcie_class(nvmlGpuTopologyLevel_t l)
{
    return l <= NVML_TOPOLOGY_SINGLE       ? GS_LINK_PIX
           : l <= NVML_TOPOLOGY_MULTIPLE   ? GS_LINK_PXB
           : l <= NVML_TOPOLOGY_HOSTBRIDGE ? GS_LINK_PHB
           : l <= NVML_TOPOLOGY_NODE       ? GS_LINK_NODE
                                           : GS_LINK_SYS;
}

/* Active links of every GPU: to another GPU (by its bus id), or to a switch (anything else). */
static int nvlinks(struct gs_nvml *n, struct gs_topo *t, struct gs_diag *d)
{
    int to_switch[GS_GPUS_MAX] = {0};
    uint8_t direct[GS_GPUS_MAX][GS_GPUS_MAX] = {{0}};
    for (int g = 0; g < t->ngpus; g++)
        for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
            nvmlEnableState_t on = 0;
            nvmlPciInfo_t pci;
            nvmlReturn_t r = n->nvmlDeviceGetNvLinkState(n->dev[g], l, &on);
            if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_INVALID_ARGUMENT)
                break; /* no NVLink, or past the card's last link */
            if (r != NVML_SUCCESS)
                return fail(n, d, "nvmlDeviceGetNvLinkState", r);
            if (!on)
                continue;
            if ((r = n->nvmlDeviceGetNvLinkRemotePciInfo_v2(n->dev[g], l, &pci)) != NVML_SUCCESS)
                return fail(n, d, "nvmlDeviceGetNvLinkRemotePciInfo_v2", r);
            pci.busId[sizeof(pci.busId) - 1] = '\0';
            int peer = -1;
            for (int k = 0; k < t->ngpus && peer < 0; k++)
                if (k != g && strcasecmp(t->gpu[k].pci, pci.busId) == 0)
                    peer = k;
            if (peer >= 0)
                direct[g][peer]++;
            else
                to_switch[g]++;
        }
    for (int a = 0; a < t->ngpus; a++)
        for (int b = 0; b < t->ngpus; b++) {
            if (a == b)
                continue;
            int links = direct[a][b] < direct[b][a] ? direct[a][b] : direct[b][a];
            links += to_switch[a] < to_switch[b] ? to_switch[a] : to_switch[b];
            t->nvlinks[a][b] = (uint8_t)links; /* link[][] keeps the PCIe class NVML knows */
        }
    return 0;
}

int gs_nvml_discover(struct gs_nvml *n, const char *sysfs, struct gs_topo *t, struct gs_diag *d)
{
    gs_topo_init(t);
    t->ngpus = (int)n->ndev;
    for (int g = 0; g < t->ngpus; g++) {
        int rc = gpu_facts(n, sysfs, g, &t->gpu[g], d);
        if (rc)
            return rc;
    }
    for (int a = 0; a < t->ngpus; a++)
        for (int b = 0; b < t->ngpus; b++) {
            nvmlGpuTopologyLevel_t l = NVML_TOPOLOGY_SYSTEM;
            if (a == b) {
                t->link[a][b] = GS_LINK_SELF;
                continue;
            }
            nvmlReturn_t r = n->nvmlDeviceGetTopologyCommonAncestor(n->dev[a], n->dev[b], &l);
            if (r != NVML_SUCCESS)
                return fail(n, d, "nvmlDeviceGetTopologyCommonAncestor", r);
            t->link[a][b] = (uint8_t)pcie_class(l);
        }
    int rc = nvlinks(n, t, d);
    if (!rc)
        gs_topo_derive(t);
    return rc;
}

int gs_nvml_busy(struct gs_nvml *n, int gpu, struct gs_diag *d)
{
    unsigned count = 0;
    if (gpu < 0 || (unsigned)gpu >= n->ndev)
        return gs_diag_error_code(d, -EIO, "no GPU %d", gpu);
    nvmlReturn_t r = n->nvmlDeviceGetComputeRunningProcesses_v3(n->dev[gpu], &count, NULL);
    if (r == NVML_ERROR_INSUFFICIENT_SIZE)
        return 1;
    if (r != NVML_SUCCESS)
        return fail(n, d, "nvmlDeviceGetComputeRunningProcesses_v3", r);
    return count > 0;
}

static int by_start(const void *a, const void *b)
{
    const struct gs_nvml_gi *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

int gs_nvml_mig_list(struct gs_nvml *n, int gpu, struct gs_nvml_gi *out, int max, struct gs_diag *d)
{
    int count = 0;
    if (gpu < 0 || (unsigned)gpu >= n->ndev)
        return gs_diag_error_code(d, -EIO, "no GPU %d", gpu);
    for (unsigned p = 0; p < NVML_GPU_INSTANCE_PROFILE_COUNT; p++) {
        nvmlGpuInstanceProfileInfo_t info;
        nvmlGpuInstance_t gis[GS_TOPO_MIG_MAX];
        unsigned k = GS_TOPO_MIG_MAX;
        if (n->nvmlDeviceGetGpuInstanceProfileInfo(n->dev[gpu], p, &info) != NVML_SUCCESS)
            continue; /* a profile this card does not have */
        nvmlReturn_t r = n->nvmlDeviceGetGpuInstances(n->dev[gpu], info.id, gis, &k);
        if (r != NVML_SUCCESS)
            return fail(n, d, "nvmlDeviceGetGpuInstances", r);
        for (unsigned i = 0; i < k; i++) {
            nvmlGpuInstanceInfo_t gi;
            if ((r = n->nvmlGpuInstanceGetInfo(gis[i], &gi)) != NVML_SUCCESS)
                return fail(n, d, "nvmlGpuInstanceGetInfo", r);
            if (count == max)
                return gs_diag_error_code(d, -EIO, "GPU %d: more than %d GPU instances", gpu, max);
            out[count++] =
                (struct gs_nvml_gi){info.id, gi.placement.start, gi.placement.size, gi.id};
        }
    }
    qsort(out, (size_t)count, sizeof(*out), by_start);
    return count;
}

/* The NVML compute instance profile spanning a GPU instance of @slices compute slices. */
static unsigned ci_profile(unsigned slices)
{
    static const unsigned by_slices[9] = {0, 0, 1, 2, 3, 3, 6, 4, 5};
    return slices < 9 ? by_slices[slices] : 0;
}

int gs_nvml_mig_create(struct gs_nvml *n, int gpu, int nvml_profile, int start, int size, FILE *dry,
                       struct gs_diag *d)
{
    nvmlGpuInstanceProfileInfo_t info;
    nvmlComputeInstanceProfileInfo_t ci;
    nvmlGpuInstance_t gi;
    nvmlComputeInstance_t cih;
    if (gpu < 0 || (unsigned)gpu >= n->ndev)
        return gs_diag_error_code(d, -EIO, "no GPU %d", gpu);
    nvmlReturn_t r =
        n->nvmlDeviceGetGpuInstanceProfileInfo(n->dev[gpu], (unsigned)nvml_profile, &info);
    if (r != NVML_SUCCESS)
        return fail(n, d, "nvmlDeviceGetGpuInstanceProfileInfo", r);
    nvmlGpuInstancePlacement_t pl = {(unsigned)start, (unsigned)size};
    if (dry) {
        fprintf(dry,
                "nvmlDeviceCreateGpuInstanceWithPlacement(gpu=%d, profileId=%u, "
                "placement={start=%u, size=%u})\n",
                gpu, info.id, pl.start, pl.size);
        fprintf(dry, "nvmlGpuInstanceCreateComputeInstance(gpu=%d, gi@%u, ciProfile=%u)\n", gpu,
                pl.start, ci_profile(info.sliceCount));
        return 0;
    }
    r = n->nvmlDeviceCreateGpuInstanceWithPlacement(n->dev[gpu], info.id, &pl, &gi);
    if (r != NVML_SUCCESS)
        return fail(n, d, "nvmlDeviceCreateGpuInstanceWithPlacement", r);
    r = n->nvmlGpuInstanceGetComputeInstanceProfileInfo(
        gi, ci_profile(info.sliceCount), NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &ci);
    if (r == NVML_SUCCESS)
        r = n->nvmlGpuInstanceCreateComputeInstance(gi, ci.id, &cih);
    if (r != NVML_SUCCESS) {
        int rc = fail(n, d, "nvmlGpuInstanceCreateComputeInstance", r);
        n->nvmlGpuInstanceDestroy(gi);
        return rc;
    }
    return 0;
}

/* The handle of the GPU instance at slice @start of @gpu, or NULL. */
static nvmlGpuInstance_t gi_at(struct gs_nvml *n, int gpu, int start, unsigned *profile_id)
{
    for (unsigned p = 0; p < NVML_GPU_INSTANCE_PROFILE_COUNT; p++) {
        nvmlGpuInstanceProfileInfo_t info;
        nvmlGpuInstance_t gis[GS_TOPO_MIG_MAX];
        unsigned k = GS_TOPO_MIG_MAX;
        if (n->nvmlDeviceGetGpuInstanceProfileInfo(n->dev[gpu], p, &info) != NVML_SUCCESS ||
            n->nvmlDeviceGetGpuInstances(n->dev[gpu], info.id, gis, &k) != NVML_SUCCESS)
            continue;
        for (unsigned i = 0; i < k; i++) {
            nvmlGpuInstanceInfo_t gi;
            if (n->nvmlGpuInstanceGetInfo(gis[i], &gi) == NVML_SUCCESS &&
                gi.placement.start == (unsigned)start) {
                *profile_id = info.id;
                return gis[i];
            }
        }
    }
    return NULL;
}

int gs_nvml_mig_mode(struct gs_nvml *n, int gpu, int on, FILE *dry, struct gs_diag *d)
{
    nvmlReturn_t act = NVML_SUCCESS;
    if (gpu < 0 || (unsigned)gpu >= n->ndev)
        return gs_diag_error_code(d, -EIO, "no GPU %d", gpu);
    if (dry) {
        fprintf(dry, "nvmlDeviceSetMigMode(gpu=%d, mode=%s)\n", gpu,
                on ? "NVML_DEVICE_MIG_ENABLE" : "NVML_DEVICE_MIG_DISABLE");
        return 0;
    }
    nvmlReturn_t r = n->nvmlDeviceSetMigMode(
        n->dev[gpu], on ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE, &act);
    if (r == NVML_SUCCESS && act != NVML_SUCCESS)
        r = act; /* e.g. a reset is needed before the mode takes */
    return r == NVML_SUCCESS ? 0 : fail(n, d, "nvmlDeviceSetMigMode", r);
}

/*
 * Whether the MIG devices (compute instances) of GPU instance @gi_id of @gpu run processes, each
 * asked through its own MIG device handle: NVML aggregates MIG processes on the card's handle only
 * for a privileged caller (nvml.h, nvmlDeviceGetComputeRunningProcesses). A GPU instance with no
 * compute instance has no MIG device and runs nothing. Return: 1 busy, 0 idle; -EIO with @d.
 */
static int gi_busy(struct gs_nvml *n, int gpu, unsigned gi_id, struct gs_diag *d)
{
    unsigned max = 0, id, count;
    nvmlReturn_t r = n->nvmlDeviceGetMaxMigDeviceCount(n->dev[gpu], &max);
    if (r != NVML_SUCCESS)
        return fail(n, d, "nvmlDeviceGetMaxMigDeviceCount", r);
    for (unsigned i = 0; i < max; i++) {
        nvmlDevice_t mig;
        if (n->nvmlDeviceGetMigDeviceHandleByIndex(n->dev[gpu], i, &mig) != NVML_SUCCESS ||
            n->nvmlDeviceGetGpuInstanceId(mig, &id) != NVML_SUCCESS || id != gi_id)
            continue;
        count = 0;
        r = n->nvmlDeviceGetComputeRunningProcesses_v3(mig, &count, NULL);
        if (r == NVML_ERROR_INSUFFICIENT_SIZE || (r == NVML_SUCCESS && count > 0))
            return 1;
        if (r != NVML_SUCCESS)
            return fail(n, d, "nvmlDeviceGetComputeRunningProcesses_v3 (MIG device)", r);
    }
    return 0;
}

int gs_nvml_mig_destroy(struct gs_nvml *n, int gpu, int start, FILE *dry, struct gs_diag *d)
{
    unsigned pid = 0;
    nvmlGpuInstanceInfo_t info;
    if (gpu < 0 || (unsigned)gpu >= n->ndev)
        return gs_diag_error_code(d, -EIO, "no GPU %d", gpu);
    nvmlGpuInstance_t gi = gi_at(n, gpu, start, &pid);
    if (!gi)
        return gs_diag_error_code(d, -ENOENT, "GPU %d: no GPU instance at slice %d", gpu, start);
    nvmlReturn_t r = n->nvmlGpuInstanceGetInfo(gi, &info);
    if (r != NVML_SUCCESS)
        return fail(n, d, "nvmlGpuInstanceGetInfo", r);
    int busy = gi_busy(n, gpu, info.id, d);
    if (busy)
        return busy < 0 ? busy
                        : gs_diag_error_code(d, -EBUSY,
                                             "GPU %d: the MIG instance at slice %d runs processes",
                                             gpu, start);
    if (dry) {
        fprintf(dry, "nvmlComputeInstanceDestroy(gpu=%d, gi@%d, every compute instance)\n", gpu,
                start);
        fprintf(dry, "nvmlGpuInstanceDestroy(gpu=%d, gi@%d, profileId=%u)\n", gpu, start, pid);
        return 0;
    }
    for (unsigned p = 0; p < 8; p++) {
        nvmlComputeInstanceProfileInfo_t ci;
        nvmlComputeInstance_t cis[GS_TOPO_MIG_MAX];
        unsigned k = GS_TOPO_MIG_MAX;
        if (n->nvmlGpuInstanceGetComputeInstanceProfileInfo(
                gi, p, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &ci) != NVML_SUCCESS ||
            n->nvmlGpuInstanceGetComputeInstances(gi, ci.id, cis, &k) != NVML_SUCCESS)
            continue;
        for (unsigned i = 0; i < k; i++) {
            r = n->nvmlComputeInstanceDestroy(cis[i]);
            if (r != NVML_SUCCESS)
                return fail(n, d, "nvmlComputeInstanceDestroy", r);
        }
    }
    r = n->nvmlGpuInstanceDestroy(gi);
    return r == NVML_SUCCESS ? 0 : fail(n, d, "nvmlGpuInstanceDestroy", r);
}

int gs_nvml_xid_wait(struct gs_nvml *n, unsigned timeout_ms, int *gpu, unsigned long long *xid,
                     struct gs_diag *d)
{
    nvmlReturn_t r;
    if (!n->events) {
        if ((r = n->nvmlEventSetCreate(&n->events)) != NVML_SUCCESS)
            return fail(n, d, "nvmlEventSetCreate", r);
        for (unsigned g = 0; g < n->ndev; g++) {
            r = n->nvmlDeviceRegisterEvents(n->dev[g], nvmlEventTypeXidCriticalError, n->events);
            if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_SUPPORTED)
                return fail(n, d, "nvmlDeviceRegisterEvents", r);
        }
    }
    nvmlEventData_t ev;
    r = n->nvmlEventSetWait_v2(n->events, &ev, timeout_ms);
    if (r == NVML_ERROR_TIMEOUT)
        return 0;
    if (r != NVML_SUCCESS)
        return fail(n, d, "nvmlEventSetWait_v2", r);
    *gpu = -1;
    for (unsigned g = 0; g < n->ndev; g++)
        if (n->dev[g] == ev.device)
            *gpu = (int)g;
    *xid = ev.eventData;
    return 1;
}

int gs_xid_is_application(unsigned long long xid)
{
    return xid == 13 || xid == 31 || xid == 43 || xid == 45 || xid == 68 || xid == 109;
}

int gs_nvml_profile_of(int compute, int memory, int card_memory, int me)
{
    switch (compute) {
    case 1:
        return me ? NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1
               : memory * 4 == card_memory && card_memory == 8
                   ? NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2
                   : NVML_GPU_INSTANCE_PROFILE_1_SLICE;
    case 2:
        return me ? NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1 : NVML_GPU_INSTANCE_PROFILE_2_SLICE;
    case 3:
        return NVML_GPU_INSTANCE_PROFILE_3_SLICE;
    case 4:
        return NVML_GPU_INSTANCE_PROFILE_4_SLICE;
    case 6:
        return NVML_GPU_INSTANCE_PROFILE_6_SLICE;
    case 7:
        return NVML_GPU_INSTANCE_PROFILE_7_SLICE;
    case 8:
        return NVML_GPU_INSTANCE_PROFILE_8_SLICE;
    default:
        return -EINVAL;
    }
}
