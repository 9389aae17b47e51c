/*
 * libgpushare — state shared by the library's modules: the real driver's entry points, the
 * process's limits per device, its ledger and its slot in the container's region.
 *
 * Invariants: gs__ready() is true once the environment was read and the driver resolved (the first
 * wrapped call does it); a device's struct gs_shim_dev is filled once, under `mu`, then read
 * without a lock (its `ready` flag is published with release order). `mu` guards the ledger and
 * the device table; it is never held across a call into the driver. `life` is held across every
 * call that makes or ends a context or sets its limits, and the books kept of it, so that a
 * context the driver makes at the address of one just destroyed is never confused with it; it is
 * taken before `mu`, never while holding it. `cache_mu` guards what the driver caches for the
 * process (pools, graph memory; pool.c) and is held across the driver calls that read and trim
 * it; it is taken after `life` and before `mu` (a device seen for the first time takes `mu`),
 * never while holding `mu`. None is taken on the kernel launch path, nor on a graph
 * launch unless the graph allocates memory. After fork() the child starts with an empty ledger,
 * no pools, no slot and no watcher thread: it holds nothing in the driver's sense.
 */
#ifndef GPUSHARE_SHIM_H
#define GPUSHARE_SHIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "env.h"
#include "fns.h"
#include "ledger.h"
#include "limiter.h"
#include "region.h"

#define GS_EXPORT __attribute__((visibility("default")))

/* The exported prototype of every wrapper. */
#define GS_FN(name, base, version, variant, params) GS_EXPORT CUresult name params;
#define GS_LAUNCH(name, base, version, variant, params, args)                                      \
    GS_FN(name, base, version, variant, params)
#include "fns.def"

/* Call the real driver's @name, or report it missing and return CUDA_ERROR_NOT_FOUND. */
#define GS_CALL(name, args)                                                                        \
    (gs__shim.real[GS_I_##name] ? ((gs_pfn_##name)gs__shim.real[GS_I_##name])args                  \
                                : gs__missing(GS_I_##name))

struct gs_shim_dev {
    _Atomic int ready;
    int refused;          /* a limit variable is set and does not cover this device */
    int regdev;           /* index in the region, -1 when memory is not counted */
    uint64_t limit_bytes; /* UINT64_MAX: no memory limit */
    unsigned cores;       /* percent; 100: no compute limit */
    unsigned char uuid[16];
    struct gs_limiter lim;
    _Atomic int lim_on; /* launches on this device pass the limiter */
    void *nvml;         /* nvmlDevice_t, for the watcher */
    unsigned long long nvml_seen;
    unsigned own_pct; /* NVML's latest sample for the process on the device (watcher only) */
    uint64_t own_us;  /* when it came (or the first pass), CLOCK_MONOTONIC us; 0: not yet */
};

/* A stream-ordered memory pool the process allocates from (pool.c): charged in the region by what
 * the driver reports it holds (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), never less than its live
 * allocations. */
#define GS_POOLS_MAX 64
#define GS_POOL_HOST (-2) /* ordinal of a pool of host memory: not the card's, not counted */
struct gs_pool {
    uint64_t key;     /* the CUmemoryPool; 0: a free entry */
    int ordinal;      /* its device, GS_POOL_HOST */
    int gone;         /* destroyed: charged its live allocations until they are freed */
    uint64_t live;    /* bytes of its allocations not freed yet */
    uint64_t charged; /* what the region holds for it */
};

struct gs_shim {
    pthread_mutex_t mu;
    pthread_mutex_t life;
    pthread_mutex_t cache_mu;
    struct gs_shim_env env;
    int broken;   /* the environment is malformed: refuse, never run unlimited */
    int counting; /* a memory limit is set: count every allocation */
    int limiting; /* a compute limit below 100 % is set */
    void *cuda;
    gs_fnptr real[GS_NFN];
    _Atomic int missing_said[GS_NFN];
    struct gs_region *region;
    int slot;                 /* this process's slot in the region, -1 until the first charge */
    _Atomic int ndev;         /* devices the process sees, 0 until known */
    _Atomic unsigned ctx_gen; /* bumped when a context dies: launch-path caches drop */
    struct gs_ledger ledger;
    struct gs_shim_dev dev[GS_REGION_DEVICES];
    _Atomic int watcher;               /* the utilisation watcher thread runs */
    int32_t host_pid;                  /* this process as NVML numbers it; 0 while unknown */
    struct gs_pool pool[GS_POOLS_MAX]; /* under cache_mu */
    uint64_t graph_charged[GS_REGION_DEVICES]; /* graph memory in the region, cache_mu */
    _Atomic uint32_t cache_devs; /* ordinals with pools or graph memory charged (bit i) */
};

extern struct gs_shim gs__shim;

/* Read the environment and resolve the driver, once; every wrapper calls it first. */
void gs__init_slow(void);
extern _Atomic int gs__inited;
static inline void gs__init(void)
{
    if (!atomic_load_explicit(&gs__inited, memory_order_acquire))
        gs__init_slow();
}

/* Whether devices must be checked before use: a limit is set, or the limits could not be read. */
static inline int gs__guarded(void)
{
    return gs__shim.counting || gs__shim.broken || gs__shim.env.cores_pct.present;
}

/* Report (once per entry point) that the driver lacks @i. Return: CUDA_ERROR_NOT_FOUND. */
CUresult gs__missing(int i);

/* Print "libgpushare: ..." to stderr. */
void gs__say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The device @ordinal's state, resolved on first use; NULL when the driver cannot name it. */
struct gs_shim_dev *gs__dev(int ordinal);

/* The ordinal of the current context's device. Return: CUDA_SUCCESS or the driver's error. */
CUresult gs__current_ordinal(int *ordinal);

/* Attach to the region once. Return: the slot, or -1 (the reason was said). Takes `mu`. */
int gs__slot(void);

/*
 * Accounting (charge.c). A charge is what one call reserved: gs__charge*() reserve before the
 * driver is asked (CUDA_SUCCESS: go on, c->counted says whether anything was reserved, nothing is
 * when no memory limit is set or the driver cannot name the device and will fail the call itself;
 * CUDA_ERROR_OUT_OF_MEMORY: refuse, once trimming the process's caches on the device left too
 * little room), gs__uncharge() undoes, gs__settle() moves a reservation made
 * on an estimate to the @actual size (-1: over the limit, unchanged), gs__record() keeps it in the
 * ledger under (@kind, @key) (-ENOMEM when the ledger cannot grow; a record of the same object
 * already there is of one the driver freed unseen, and is given back), gs__discharge() gives a
 * freed object's bytes back, gs__drain_ctx() those of everything made in a context that died.
 * A free takes the object's record with gs__claim() (1: there was one, in *@r) before it asks the
 * driver, so that another thread that gets the same address from the driver meanwhile finds no
 * record of the old object; gs__unclaim() puts it back when the driver refuses the free.
 */
struct gs_charge {
    int counted;
    int regdev;
    int slot;
    uint64_t bytes;
    uint64_t limit;
};
CUresult gs__charge(int ordinal, uint64_t bytes, struct gs_charge *c);
CUresult gs__charge_current(uint64_t bytes, struct gs_charge *c);
CUresult gs__charge_stream(CUstream s, uint64_t bytes, struct gs_charge *c);
void gs__uncharge(const struct gs_charge *c);
int gs__settle(struct gs_charge *c, uint64_t actual);
int gs__record(const struct gs_charge *c, int kind, uint64_t key, uint64_t ctx, uint64_t aux);
void gs__give_back(const struct gs_rec *r);
void gs__discharge(int kind, uint64_t key);
int gs__claim(int kind, uint64_t key, struct gs_rec *r);
void gs__unclaim(const struct gs_rec *r);
void gs__drain_ctx(uint64_t ctx);
uint64_t gs__current_ctx(void);               /* the current context as a ledger key, 0 when none */
uint64_t gs__ctx_bytes(void);                 /* what a context costs, in bytes */
uint64_t gs__mul_sat(uint64_t a, uint64_t b); /* a * b, UINT64_MAX on overflow */

/* Compute side (launch.c): find this process's NVML pid around its first context's creation: a
 * pid NVML lists after the creation and not before (the pids of a container's pid namespace are
 * not NVML's). */
#define GS_PROBE_MAX 256
struct gs_probe {
    int n; /* -1: not probing */
    unsigned pid[GS_PROBE_MAX];
};
void gs__probe_before(int ordinal, struct gs_probe *p);
void gs__probe_after(int ordinal, const struct gs_probe *p);

/* NVML by dlopen (nvml.c). gs__nvml_load() loads and initialises it; it takes the dynamic loader's
 * lock, so never with a lock of the library held. Return: 0, or -1 with why in @why (256 bytes;
 * not said). */
int gs__nvml_load(char *why);
void *gs__nvml_device(const unsigned char uuid[16]);
int gs__nvml_pids(void *dev, unsigned *pids, int max);
/*
 * gs__nvml_util() - the SM utilisation of @dev in percent, from NVML's samples stamped after
 * *@seen, which advances: the process's own (NVML pid @host_pid), or, with @host_pid 0 or where
 * NVML keeps no per-process samples, the whole card's (*@card set to 1, else 0).
 * Return: 0 with *@pct; 1 when NVML has no new sample (it samples once per period, 1/6 s to 1 s
 * by product, and lists only processes busy in it): *@pct untouched; -1 when NVML cannot measure
 * the device.
 */
int gs__nvml_util(void *dev, int32_t host_pid, unsigned long long *seen, unsigned *pct, int *card);

/*
 * What the driver caches for the process (pool.c, graph.c). gs__pool_note() records the device of
 * a pool (GS_POOL_HOST for host memory); gs__pool_freed() takes @bytes off a pool's live
 * allocations; gs__cache_refresh() re-reads what the pools and graphs of device @ordinal (-1: all)
 * hold and charges exactly that (at synchronisation points, and before telling the tenant what is
 * free); gs__cache_trim() gives the unused memory of the device's pools and graphs back to the
 * driver first (cuMemPoolTrimTo, cuDeviceGraphMemTrim) and returns 1 when it may have freed any.
 * None is called with `mu` held.
 */
void gs__pool_note(CUmemoryPool pool, int ordinal);
CUresult gs__pool_alloc(int i, CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream st,
                        int from_pool, int ptsz);
void gs__pool_freed(uint64_t pool, uint64_t bytes);
void gs__cache_refresh(int ordinal);
int gs__cache_trim(int ordinal);
static inline int gs__cache_on(int ordinal)
{
    uint32_t devs = atomic_load_explicit(&gs__shim.cache_devs, memory_order_relaxed);
    return ordinal < 0 ? devs != 0 : ordinal < 32 && (devs >> ordinal & 1u);
}

/* The compute limit's token, taken by every launch (launch.c). */
void gs__throttle(void);

/* The device stream @s allocates on: its context's. Return: CUDA_SUCCESS or the driver's error. */
CUresult gs__stream_ordinal(CUstream s, int *ordinal);

/* The fork handlers (shim.c, launch.c, pool.c, graph.c). */
void gs__fork_child_launch(void);
void gs__fork_child_pool(void);
void gs__fork_child_graph(void);

#endif
