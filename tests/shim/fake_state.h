/*
 * The fake GPU card the tests share between the fake libcuda.so.1, the fake libnvidia-ml.so.1 and
 * the test itself: a file mapped by every process, holding each device's size and what each
 * process really holds on it (its allocations and contexts, as the fake driver counts them), the
 * busy time its kernels added, and the peak each tenant reached. The fake driver refuses what does
 * not fit the card, as a real one does, whatever libgpushare allows.
 *
 * A process's memory counts while the process lives (a dead or zombie process's memory is free
 * again, as the real driver frees it at exit). Updates take an flock(2) on the file.
 */
#ifndef FAKE_STATE_H
#define FAKE_STATE_H

#include <stdatomic.h>
#include <stdint.h>

#define FAKE_DEVS    4
#define FAKE_PROCS   256
#define FAKE_TENANTS 8
#define FAKE_NAME    32

struct fake_proc {
    _Atomic int32_t pid; /* 0: free */
    int tenant;
    uint64_t used[FAKE_DEVS];
    _Atomic int ctxs[FAKE_DEVS];
    _Atomic uint64_t busy_us[FAKE_DEVS];
    _Atomic uint64_t launches[FAKE_DEVS];
};

struct fake_state {
    uint32_t magic;
    int ndev;
    uint64_t total[FAKE_DEVS];
    uint64_t ctx_bytes;  /* what a context costs on the card */
    uint64_t kernel_us;  /* GPU time of one kernel launch */
    uint32_t pid_offset; /* NVML reports pid + pid_offset: a container's pid namespace */
    char tenant[FAKE_TENANTS][FAKE_NAME];
    uint64_t peak[FAKE_TENANTS][FAKE_DEVS]; /* the most a tenant held at once */
    struct fake_proc proc[FAKE_PROCS];
};

/* Write a fresh card to @path. Return: 0 or -errno. */
int fake_state_create(const char *path, int ndev, const uint64_t *total, uint64_t ctx_bytes,
                      uint64_t kernel_us, uint32_t pid_offset);

/* Map the card at @path; *@fd stays open for fake_lock(). Return: the card, or NULL. */
struct fake_state *fake_state_map(const char *path, int *fd);

void fake_lock(int fd);
void fake_unlock(int fd);

/* Whether @pid is a live process (not gone, not a zombie). */
int fake_alive(int32_t pid);

/* The UUID of device @dev: GPU-6a7e0000-0000-4000-8000-0000000000DD. */
void fake_uuid(int dev, unsigned char out[16]);

/* What the live processes of @tenant (-1: all) hold on @dev, in bytes. */
uint64_t fake_used(const struct fake_state *s, int tenant, int dev);

/* The index of the tenant named @name, adding it. Caller holds the lock. Return: -1 when full. */
int fake_tenant(struct fake_state *s, const char *name);

#endif
