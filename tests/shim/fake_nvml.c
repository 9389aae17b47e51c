/*
 * A fake libnvidia-ml.so.1 for the tests: the NVML calls libgpushare makes, answered from the fake
 * card of fake_state.h. A process's SM utilisation is the kernel time its launches added since
 * this NVML client last asked, over the wall time since then (capped at 100 %); the card's is the
 * sum over its processes. Processes are listed by pid + the card's pid_offset, as NVML lists host
 * pids to a container that has its own pid namespace. With FAKENVML_NO_PROCESS_UTIL set,
 * per-process utilisation is not supported, as on some boards.
 */
#define _GNU_SOURCE
#include "fake_state.h"
#include "node/nvml_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT nvmlReturn_t nvmlInit_v2(void);
EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device);
EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *u);
EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                                    nvmlProcessUtilizationSample_t *samples,
                                                    unsigned int *count,
                                                    unsigned long long lastSeen);
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *count,
                                                         nvmlProcessInfo_v1_t *infos);

static struct fake_state *card;
static int card_fd;

/* Per card process: busy time and clock at this client's previous look. */
static struct {
    int32_t pid;
    uint64_t busy, at_us;
} last[FAKE_PROCS][FAKE_DEVS];

static uint64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

nvmlReturn_t nvmlInit_v2(void)
{
    const char *path = getenv("FAKECUDA_STATE");
    if (!card && (!path || !(card = fake_state_map(path, &card_fd))))
        return NVML_ERROR_UNINITIALIZED;
    return NVML_SUCCESS;
}

/* Devices are handed out as 1 + their index. */
static int dev_of(nvmlDevice_t d)
{
    int i = (int)(uintptr_t)d - 1;
    return card && i >= 0 && i < card->ndev ? i : -1;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    if (!card)
        return NVML_ERROR_UNINITIALIZED;
    for (int i = 0; i < card->ndev; i++) {
        unsigned char u[16];
        char name[48];
        fake_uuid(i, u);
        snprintf(name, sizeof(name),
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                 u[14], u[15]);
        if (strcmp(name, uuid) == 0) {
            *device = (nvmlDevice_t)(uintptr_t)(i + 1);
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

/* Process @i's utilisation of @dev since this client's last look, in percent. */
static unsigned util_of(int i, int dev, uint64_t now)
{
    struct fake_proc *p = &card->proc[i];
    int32_t pid = atomic_load(&p->pid);
    uint64_t busy = atomic_load(&p->busy_us[dev]);
    if (last[i][dev].pid != pid || last[i][dev].at_us == 0) {
        last[i][dev].pid = pid;
        last[i][dev].busy = busy;
        last[i][dev].at_us = now;
        return 0;
    }
    uint64_t dt = now - last[i][dev].at_us, db = busy - last[i][dev].busy;
    last[i][dev].busy = busy;
    last[i][dev].at_us = now;
    if (dt == 0)
        return 0;
    uint64_t pct = db * 100 / dt;
    return pct > 100 ? 100 : (unsigned)pct;
}

static int running(int i, int dev)
{
    struct fake_proc *p = &card->proc[i];
    return atomic_load(&p->pid) != 0 && atomic_load(&p->ctxs[dev]) > 0 &&
           fake_alive(atomic_load(&p->pid));
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *u)
{
    int dev = dev_of(device);
    if (dev < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    uint64_t now = now_us(), sum = 0;
    for (int i = 0; i < FAKE_PROCS; i++)
        if (running(i, dev))
            sum += util_of(i, dev, now);
    u->gpu = sum > 100 ? 100 : (unsigned)sum;
    u->memory = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t *samples,
                                             unsigned int *count, unsigned long long lastSeen)
{
    int dev = dev_of(device);
    if (dev < 0 || !count)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (getenv("FAKENVML_NO_PROCESS_UTIL"))
        return NVML_ERROR_NOT_SUPPORTED;
    unsigned n = 0, cap = samples ? *count : 0;
    uint64_t now = now_us();
    for (int i = 0; i < FAKE_PROCS; i++) {
        if (!running(i, dev))
            continue;
        if (n < cap) {
            int32_t pid = atomic_load(&card->proc[i].pid);
            samples[n] = (nvmlProcessUtilizationSample_t){
                (unsigned)pid + card->pid_offset, now, util_of(i, dev, now), 0, 0, 0};
        }
        n++;
    }
    if (n == 0)
        return NVML_ERROR_NOT_FOUND;
    if (n > cap) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *count,
                                                  nvmlProcessInfo_v1_t *infos)
{
    int dev = dev_of(device);
    if (dev < 0 || !count)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned n = 0;
    fake_lock(card_fd);
    for (int i = 0; i < FAKE_PROCS; i++) {
        if (!running(i, dev))
            continue;
        if (infos && n < *count)
            infos[n] =
                (nvmlProcessInfo_v1_t){(unsigned)atomic_load(&card->proc[i].pid) + card->pid_offset,
                                       card->proc[i].used[dev]};
        n++;
    }
    fake_unlock(card_fd);
    nvmlReturn_t rc = infos && n <= *count ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
    *count = n;
    return rc;
}
