/*
 * libgpushare — NVML through dlopen: never a link-time dependency, so the library loads on
 * machines without it (then compute limits are reported as not enforced).
 */
#include "shim.h"
#include "node/nvml_abi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

struct nvml_fns {
#define GS_NVML_PTR(name, args) nvmlReturn_t(*name) args;
    GS_NVML_SHIM_FUNCS(GS_NVML_PTR)
#undef GS_NVML_PTR
};
static struct nvml_fns nv;

static void *sym(void *lib, const char *name)
{
    return dlsym(lib, name);
}

/* Bind NVML's functions into @f and initialise NVML. Return: 0, or -1 with @why (256 bytes). */
static int load(void *lib, struct nvml_fns *f, char *why)
{
    nvmlReturn_t (*init)(void);
    void *p = sym(lib, "nvmlInit_v2");
    memcpy(&init, &p, sizeof(init));
#define GS_NVML_BIND(name, args) memcpy(&f->name, &(void *){sym(lib, #name)}, sizeof(f->name));
    GS_NVML_SHIM_FUNCS(GS_NVML_BIND)
#undef GS_NVML_BIND
    if (!init || !f->nvmlDeviceGetHandleByUUID || !f->nvmlDeviceGetUtilizationRates) {
        snprintf(why, 256,
                 "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlDeviceGetHandleByUUID or "
                 "nvmlDeviceGetUtilizationRates; compute limits are not enforced");
        return -1;
    }
    nvmlReturn_t rc = init();
    if (rc != NVML_SUCCESS) {
        snprintf(why, 256, "nvmlInit_v2 failed (NVML error %d); compute limits are not enforced",
                 rc);
        return -1;
    }
    return 0;
}

int gs__nvml_load(char *why)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static int loaded;
    struct nvml_fns f = {0};
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, 256, "cannot load libnvidia-ml.so.1 (%s); compute limits are not enforced",
                 dlerror());
        return -1;
    }
    if (load(lib, &f, why) < 0)
        return -1;
    pthread_mutex_lock(&mu); /* threads racing to initialise: the first one's functions */
    if (!loaded)
        nv = f;
    loaded = 1;
    pthread_mutex_unlock(&mu);
    return 0;
}

void *gs__nvml_device(const unsigned char uuid[16])
{
    char name[41];
    nvmlDevice_t d = NULL;
    for (int mig = 0; mig < 2 && !d; mig++) {
        gs_shim_uuid_format(uuid, mig, name);
        if (nv.nvmlDeviceGetHandleByUUID(name, &d) != NVML_SUCCESS)
            d = NULL;
    }
    return d;
}

int gs__nvml_pids(void *dev, unsigned *pids, int max)
{
    nvmlProcessInfo_v1_t info[GS_PROBE_MAX];
    unsigned n = GS_PROBE_MAX;
    if (!nv.nvmlDeviceGetComputeRunningProcesses || max > GS_PROBE_MAX ||
        nv.nvmlDeviceGetComputeRunningProcesses(dev, &n, info) != NVML_SUCCESS)
        return -1;
    for (unsigned i = 0; i < n; i++)
        pids[i] = info[i].pid;
    return (int)n;
}

/* Samples of one watcher pass; only the watcher thread reads utilisation. */
#define MAX_SAMPLES 1024
static nvmlProcessUtilizationSample_t samples[MAX_SAMPLES];
static nvmlSample_t card_samples[MAX_SAMPLES];

/* A pass with no new sample says nothing: NVML samples less often than the watcher asks, so
 * counting such a pass as idle measured an H200 busy half the time it was. */
static int process_util(void *dev, int32_t host_pid, unsigned long long *seen, unsigned *pct)
{
    unsigned n = MAX_SAMPLES;
    nvmlReturn_t rc = nv.nvmlDeviceGetProcessUtilization(dev, samples, &n, *seen);
    if (rc == NVML_ERROR_NOT_FOUND) /* no sample of any process since the last pass */
        return 1;
    if (rc != NVML_SUCCESS)
        return -1;
    unsigned sum = 0, k = 0;
    for (unsigned i = 0; i < n && i < MAX_SAMPLES; i++) {
        if (samples[i].timeStamp > *seen)
            *seen = samples[i].timeStamp;
        if (samples[i].pid == (unsigned)host_pid) {
            sum += samples[i].smUtil;
            k++;
        }
    }
    if (k == 0)
        return 1;
    *pct = sum / k;
    return 0;
}

/* The whole card's, from the driver's stamped samples where NVML keeps them, so that a pass
 * between two is told apart; else the latest period's figure, taken as new at every pass. */
static int card_util(void *dev, unsigned long long *seen, unsigned *pct)
{
    unsigned n = MAX_SAMPLES;
    nvmlValueType_t type;
    nvmlReturn_t rc = nv.nvmlDeviceGetSamples
                          ? nv.nvmlDeviceGetSamples(dev, NVML_GPU_UTILIZATION_SAMPLES, *seen, &type,
                                                    &n, card_samples)
                          : NVML_ERROR_FUNCTION_NOT_FOUND;
    if (rc == NVML_ERROR_NOT_FOUND)
        return 1;
    if (rc == NVML_SUCCESS && n > 0) {
        unsigned long long sum = 0;
        for (unsigned i = 0; i < n && i < MAX_SAMPLES; i++) {
            if (card_samples[i].timeStamp > *seen)
                *seen = card_samples[i].timeStamp;
            sum += card_samples[i].sampleValue.uiVal;
        }
        *pct = (unsigned)(sum / (n < MAX_SAMPLES ? n : MAX_SAMPLES));
        return 0;
    }
    nvmlUtilization_t u;
    if (nv.nvmlDeviceGetUtilizationRates(dev, &u) != NVML_SUCCESS)
        return -1;
    *pct = u.gpu;
    return 0;
}

/* The process's own utilisation when NVML gives it, else the whole card's (which is never less):
 * per-process samples are not supported everywhere (vGPU, some boards). */
int gs__nvml_util(void *dev, int32_t host_pid, unsigned long long *seen, unsigned *pct, int *card)
{
    int rc;
    *card = 0;
    if (host_pid != 0 && nv.nvmlDeviceGetProcessUtilization &&
        (rc = process_util(dev, host_pid, seen, pct)) >= 0)
        return rc;
    *card = 1;
    return card_util(dev, seen, pct);
}
