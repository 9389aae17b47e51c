/*
 * libgpushare — memory the driver keeps for the process beyond what the application holds: the
 * cache of each stream-ordered pool and the memory of CUDA graphs' allocation nodes.
 *
 * A pool frees a stream-ordered allocation into its cache when the stream reaches the free, and
 * gives the cache back to the card only down to its release threshold, at a synchronisation
 * (NVIDIA, cuMemPoolSetAttribute: CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) or a cuMemPoolTrimTo; the
 * graphs of a device keep their memory until cuDeviceGraphMemTrim. So a pool is charged what the
 * driver reports it holds (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), never less than its allocations
 * not yet freed, and a device's graphs CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, re-read at the
 * allocation calls and the synchronisation points. An allocation that would pass the limit first
 * has the process's pools and graph memory on that device trimmed, and is refused only if that is
 * not enough: an application whose pools merely cache near its limit is never refused.
 */
#include "shim.h"

#include <string.h>

static uint64_t pool_attr(uint64_t key, CUmemPool_attribute attr, uint64_t fallback)
{
    cuuint64_t v = 0;
    CUmemoryPool pool = (CUmemoryPool)(uintptr_t)key;
    return GS_CALL(cuMemPoolGetAttribute, (pool, attr, &v)) == CUDA_SUCCESS ? v : fallback;
}

/* What the graphs of device @ordinal hold; @fallback where the driver cannot say (a driver older
 * than graph memory nodes, CUDA 11.4, has none to hold). */
static uint64_t graph_attr(int ordinal, CUgraphMem_attribute attr, uint64_t fallback)
{
    cuuint64_t v = 0;
    if (!gs__shim.real[GS_I_cuDeviceGetGraphMemAttribute])
        return fallback;
    return GS_CALL(cuDeviceGetGraphMemAttribute, (ordinal, attr, &v)) == CUDA_SUCCESS ? v
                                                                                      : fallback;
}

/*
 * Make the region hold @target for a cache whose charge is *@charged, on device @ordinal: what is
 * above goes back, what is below is reserved within the device's limit, or unconditionally when
 * @force (the driver holds it already). Return: 0; -1 when over the limit (nothing changed).
 * Under cache_mu.
 */
static int settle(uint64_t *charged, int ordinal, uint64_t target, int force)
{
    struct gs_shim *s = &gs__shim;
    struct gs_shim_dev *d = gs__dev(ordinal);
    if (!d || d->regdev < 0 || s->slot < 0 || target == *charged)
        return 0;
    if (target < *charged)
        gs_region_release(s->region, s->slot, d->regdev, *charged - target);
    else if (gs_region_reserve(s->region, s->slot, d->regdev, target - *charged,
                               force ? UINT64_MAX : d->limit_bytes) < 0)
        return -1;
    *charged = target;
    return 0;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* The entry of pool @key; with @add, a new one on @ordinal when there is none. Under cache_mu. */
static struct gs_pool *pool_find(uint64_t key, int add, int ordinal)
{
    struct gs_pool *free_entry = NULL;
    for (int i = 0; i < GS_POOLS_MAX; i++) {
        if (gs__shim.pool[i].key == key)
            return &gs__shim.pool[i];
        if (!gs__shim.pool[i].key && !free_entry)
            free_entry = &gs__shim.pool[i];
    }
    if (!add || !free_entry)
        return NULL;
    *free_entry = (struct gs_pool){key, ordinal, 0, 0, 0};
    if (ordinal >= 0 && ordinal < 32)
        atomic_fetch_or(&gs__shim.cache_devs, 1u << ordinal);
    return free_entry;
}

static void pool_drop(struct gs_pool *p)
{
    memset(p, 0, sizeof(*p));
}

/* What pool @p holds now: its reserve as the driver reports it, at least its live allocations. */
static uint64_t pool_holds(const struct gs_pool *p)
{
    return p->gone ? p->live
                   : max64(p->live, pool_attr(p->key, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, 0));
}

static void refresh_locked(int ordinal)
{
    struct gs_shim *s = &gs__shim;
    for (int i = 0; i < GS_POOLS_MAX; i++) {
        struct gs_pool *p = &s->pool[i];
        if (p->key && p->ordinal >= 0 && (ordinal < 0 || p->ordinal == ordinal))
            settle(&p->charged, p->ordinal, pool_holds(p), 1);
        if (p->key && p->gone && p->live == 0)
            pool_drop(p);
    }
    for (int o = 0; o < GS_REGION_DEVICES; o++) /* graphs may hold memory on every device used */
        if ((ordinal < 0 || o == ordinal) && gs__cache_on(o))
            settle(&s->graph_charged[o], o,
                   graph_attr(o, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, s->graph_charged[o]), 1);
}

void gs__cache_refresh(int ordinal)
{
    if (!gs__shim.counting || !gs__cache_on(ordinal))
        return;
    pthread_mutex_lock(&gs__shim.cache_mu);
    refresh_locked(ordinal);
    pthread_mutex_unlock(&gs__shim.cache_mu);
}

int gs__cache_trim(int ordinal)
{
    struct gs_shim *s = &gs__shim;
    if (!s->counting || !gs__cache_on(ordinal))
        return 0;
    pthread_mutex_lock(&s->cache_mu);
    for (int i = 0; i < GS_POOLS_MAX; i++)
        if (s->pool[i].key && !s->pool[i].gone && s->pool[i].ordinal == ordinal)
            GS_CALL(cuMemPoolTrimTo, ((CUmemoryPool)(uintptr_t)s->pool[i].key, 0));
    if (s->real[GS_I_cuDeviceGraphMemTrim])
        GS_CALL(cuDeviceGraphMemTrim, (ordinal));
    refresh_locked(ordinal);
    pthread_mutex_unlock(&s->cache_mu);
    return 1;
}

void gs__pool_note(CUmemoryPool pool, int ordinal)
{
    if (!gs__shim.counting || !pool)
        return;
    pthread_mutex_lock(&gs__shim.cache_mu);
    struct gs_pool *p = pool_find((uintptr_t)pool, 1, ordinal);
    if (p) { /* a handle the driver hands out again names a live pool again */
        p->gone = 0;
        if (!p->live && !p->charged)
            p->ordinal = ordinal;
        if (p->ordinal >= 0 && p->ordinal < 32)
            atomic_fetch_or(&gs__shim.cache_devs, 1u << p->ordinal);
    }
    pthread_mutex_unlock(&gs__shim.cache_mu);
}

void gs__pool_freed(uint64_t pool, uint64_t bytes)
{
    pthread_mutex_lock(&gs__shim.cache_mu);
    struct gs_pool *p = pool_find(pool, 0, 0);
    if (p) {
        p->live -= bytes < p->live ? bytes : p->live;
        if (p->gone) /* its memory goes as its allocations do */
            settle(&p->charged, p->ordinal, p->live, 1);
        if (p->gone && !p->live)
            pool_drop(p);
    }
    pthread_mutex_unlock(&gs__shim.cache_mu);
}

/* A destroyed pool keeps what its live allocations hold; its cache is gone. */
static void pool_gone(uint64_t key)
{
    pthread_mutex_lock(&gs__shim.cache_mu);
    struct gs_pool *p = pool_find(key, 0, 0);
    if (p && p->ordinal >= 0) {
        p->gone = 1;
        settle(&p->charged, p->ordinal, p->live, 1);
    }
    if (p && !p->live)
        pool_drop(p);
    pthread_mutex_unlock(&gs__shim.cache_mu);
}

/*
 * Charge @bytes more of pool @key's live allocations, on @ordinal: the pool's charge must cover
 * them (trimming the device's caches first when the limit is in the way). Return: CUDA_SUCCESS,
 * CUDA_ERROR_OUT_OF_MEMORY.
 */
static CUresult pool_take(uint64_t key, int ordinal, uint64_t bytes)
{
    struct gs_shim *s = &gs__shim;
    for (int tries = 0; tries < 2; tries++) {
        pthread_mutex_lock(&s->cache_mu);
        struct gs_pool *p = pool_find(key, 1, ordinal);
        int ok = p && p->live <= UINT64_MAX - bytes &&
                 settle(&p->charged, ordinal, max64(p->charged, p->live + bytes), 0) == 0;
        if (ok)
            p->live += bytes;
        pthread_mutex_unlock(&s->cache_mu);
        if (!p) {
            static _Atomic int said;
            if (!atomic_exchange(&said, 1))
                gs__say("more than %d memory pools in one process: allocations from another are "
                        "refused",
                        GS_POOLS_MAX);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        if (ok)
            return CUDA_SUCCESS;
        if (tries == 0)
            gs__cache_trim(ordinal);
    }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

/* After the driver grew pool @key: charge what it holds now, trimming first if that passes the
 * limit (the trim charges what is left, whatever it is). Return: 0; -1 (the device is over its
 * limit still: the caller frees the allocation). */
static int pool_grown(uint64_t key, int ordinal)
{
    struct gs_shim_dev *d = gs__dev(ordinal);
    pthread_mutex_lock(&gs__shim.cache_mu);
    struct gs_pool *p = pool_find(key, 0, 0);
    int rc = p ? settle(&p->charged, ordinal, max64(p->charged, pool_holds(p)), 0) : 0;
    pthread_mutex_unlock(&gs__shim.cache_mu);
    if (rc == 0)
        return 0;
    gs__cache_trim(ordinal);
    return d && d->regdev >= 0 && gs_region_used(gs__shim.region, d->regdev) > d->limit_bytes ? -1
                                                                                              : 0;
}

/* The device a pool's memory is on: as noted, else unknown (-1). */
static int pool_ordinal(uint64_t key)
{
    pthread_mutex_lock(&gs__shim.cache_mu);
    struct gs_pool *p = pool_find(key, 0, 0);
    int ordinal = p ? p->ordinal : -1;
    pthread_mutex_unlock(&gs__shim.cache_mu);
    return ordinal;
}

/* Whether stream @s records into a graph: its allocations are then the graph's (charged when the
 * graph runs), not the pool's. @ptsz: the per-thread default stream is the one meant by 0. */
static int capturing(CUstream s, int ptsz)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    if (ptsz && !s)
        s = CU_STREAM_PER_THREAD;
    return GS_CALL(cuStreamIsCapturing, (s, &st)) == CUDA_SUCCESS &&
           st == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

/*
 * The end of a stream-ordered allocation of @bytes from pool @key: on success, the pool's growth
 * is charged and the pointer recorded; when that passes the limit even after trimming, the
 * allocation is freed again and refused.
 */
static CUresult pool_done(CUresult rc, uint64_t key, int ordinal, uint64_t bytes, CUdeviceptr ptr,
                          CUstream st)
{
    if (rc != CUDA_SUCCESS) {
        gs__pool_freed(key, bytes);
        gs__cache_refresh(ordinal);
        return rc;
    }
    struct gs_shim_dev *d = gs__dev(ordinal);
    struct gs_charge c = {1, d ? d->regdev : -1, gs__shim.slot, bytes, 0};
    if (pool_grown(key, ordinal) == 0 &&
        gs__record(&c, GS_REC_ASYNC, ptr, gs__current_ctx(), key) == 0)
        return CUDA_SUCCESS;
    GS_CALL(cuMemFreeAsync, (ptr, st));
    gs__pool_freed(key, bytes);
    gs__cache_refresh(ordinal);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

/* Call the driver's stream-ordered allocation @i (cuMemAllocAsync or cuMemAllocFromPoolAsync, or
 * their _ptsz twins). */
static CUresult alloc_call(int i, CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream st,
                           int from_pool)
{
    if (!gs__shim.real[i])
        return gs__missing(i);
    if (from_pool)
        return ((gs_pfn_cuMemAllocFromPoolAsync)gs__shim.real[i])(dptr, bytes, pool, st);
    return ((gs_pfn_cuMemAllocAsync)gs__shim.real[i])(dptr, bytes, st);
}

/* Where the memory of an allocation from @pool (NULL: the current pool of the stream's device)
 * goes: *@key and the device's ordinal, -1 when the pool's device is not known yet (a pool got
 * some way the library did not see), GS_POOL_HOST for host memory. Return: CUDA_SUCCESS, or
 * CUDA_ERROR_NOT_FOUND when the stream has no device or the device no pool (the driver refuses
 * the allocation itself). */
static CUresult pool_where(CUmemoryPool pool, CUstream st, uint64_t *key, int *ordinal)
{
    *key = (uintptr_t)pool;
    *ordinal = pool ? pool_ordinal(*key) : -1;
    if (*ordinal != -1 || pool)
        return CUDA_SUCCESS;
    if (gs__stream_ordinal(st, ordinal) != CUDA_SUCCESS ||
        GS_CALL(cuDeviceGetMemPool, (&pool, *ordinal)) != CUDA_SUCCESS) {
        *ordinal = GS_POOL_HOST;
        return CUDA_ERROR_NOT_FOUND;
    }
    *key = (uintptr_t)pool;
    return CUDA_SUCCESS;
}

/*
 * A stream-ordered allocation of @bytes by the entry point @i from pool @pool (@from_pool) or the
 * current pool of the stream's device, on stream @st (@ptsz: 0 means the per-thread stream).
 */
CUresult gs__pool_alloc(int i, CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool, CUstream st,
                        int from_pool, int ptsz)
{
    uint64_t key = 0;
    int ordinal = GS_POOL_HOST;
    gs__init();
    if (!gs__shim.real[i])
        return gs__missing(i);
    if (gs__guarded() && !capturing(st, ptsz) &&
        pool_where(from_pool ? pool : NULL, st, &key, &ordinal) == CUDA_SUCCESS && ordinal >= 0) {
        struct gs_shim_dev *d = gs__dev(ordinal);
        if (d && d->refused)
            return CUDA_ERROR_OUT_OF_MEMORY;
        if (!d || !gs__shim.counting)
            ordinal = GS_POOL_HOST; /* nothing to count, or the driver refuses the call itself */
        else if (gs__slot() < 0 || pool_take(key, ordinal, bytes) != CUDA_SUCCESS)
            return CUDA_ERROR_OUT_OF_MEMORY;
    }
    CUresult rc = alloc_call(i, dptr, bytes, pool, st, from_pool);
    if (ordinal == -1 && rc == CUDA_SUCCESS && gs__shim.counting) {
        /* a pool the library did not see given out: its first pointer says where it is */
        if (GS_CALL(cuPointerGetAttribute,
                    (&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, *dptr)) != CUDA_SUCCESS &&
            gs__stream_ordinal(st, &ordinal) != CUDA_SUCCESS)
            return rc;
        struct gs_shim_dev *d = gs__dev(ordinal);
        gs__pool_note(pool, ordinal);
        if (!d || d->refused || gs__slot() < 0 || pool_take(key, ordinal, bytes) != CUDA_SUCCESS) {
            GS_CALL(cuMemFreeAsync, (*dptr, st));
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    if (ordinal < 0)
        return rc;
    return pool_done(rc, key, ordinal, bytes, rc == CUDA_SUCCESS ? *dptr : 0, st);
}

/* Pools are noted where the application gets them: cuMemPoolCreate knows the location, the
 * device's default and current pools are the device's ("the specified memory pool may be from a
 * device different than that of the specified stream", NVIDIA on cuMemAllocFromPoolAsync). */
CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    gs__init();
    CUresult rc = GS_CALL(cuMemPoolCreate, (pool, poolProps));
    if (rc == CUDA_SUCCESS && poolProps)
        gs__pool_note(*pool, poolProps->location.type == CU_MEM_LOCATION_TYPE_DEVICE
                                 ? poolProps->location.id
                                 : GS_POOL_HOST);
    return rc;
}

#define DEVICE_POOL(name)                                                                          \
    CUresult name(CUmemoryPool *pool, CUdevice dev)                                                \
    {                                                                                              \
        gs__init();                                                                                \
        CUresult rc = GS_CALL(name, (pool, dev));                                                  \
        if (rc == CUDA_SUCCESS)                                                                    \
            gs__pool_note(*pool, dev);                                                             \
        return rc;                                                                                 \
    }

DEVICE_POOL(cuDeviceGetDefaultMemPool)
DEVICE_POOL(cuDeviceGetMemPool)

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    gs__init();
    CUresult rc = GS_CALL(cuMemPoolDestroy, (pool));
    if (rc == CUDA_SUCCESS && gs__shim.counting)
        pool_gone((uintptr_t)pool);
    return rc;
}

/* Synchronisation points: a pool gives its cache back down to its release threshold here. */
static CUresult synced(CUresult rc)
{
    if (rc == CUDA_SUCCESS)
        gs__cache_refresh(-1);
    return rc;
}

CUresult cuCtxSynchronize(void)
{
    gs__init();
    return synced(GS_CALL(cuCtxSynchronize, ()));
}

CUresult cuStreamSynchronize(CUstream hStream)
{
    gs__init();
    return synced(GS_CALL(cuStreamSynchronize, (hStream)));
}

CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
    gs__init();
    return synced(GS_CALL(cuStreamSynchronize_ptsz, (hStream)));
}

CUresult cuEventSynchronize(CUevent hEvent)
{
    gs__init();
    return synced(GS_CALL(cuEventSynchronize, (hEvent)));
}

void gs__fork_child_pool(void)
{
    memset(gs__shim.pool, 0, sizeof(gs__shim.pool));
    memset(gs__shim.graph_charged, 0, sizeof(gs__shim.graph_charged));
    atomic_store(&gs__shim.cache_devs, 0);
}
