/*
 * A fake libcuda.so.1 for the tests: every entry point libgpushare touches, with real bookkeeping
 * against the fake card of fake_state.h (FAKECUDA_STATE names its file; FAKECUDA_TENANT, the
 * tenant this process belongs to). It keeps what a driver keeps: contexts per thread, the primary
 * context's retain count, device pointers, arrays, VMM handles with their mappings and references;
 * it refuses what the card cannot hold with CUDA_ERROR_OUT_OF_MEMORY, a free of what it never
 * gave with CUDA_ERROR_INVALID_VALUE, and any call before cuInit with CUDA_ERROR_NOT_INITIALIZED.
 * Kernel launches add FAKE kernel time to the process's busy counter, which the fake NVML reads.
 * Like a real driver it hands a freed address out again, and each device has a default memory
 * pool (pools created with cuMemPoolCreate live on the device their properties name). A pool
 * keeps what is freed from it in its cache, takes memory from the card in 2 MiB steps, reuses its
 * cache for the next allocation (the fake has one stream per context), and gives the cache back
 * to the card at a synchronisation down to its release threshold (what was freed since the last
 * synchronisation only then), or when trimmed. CUDA graphs hold their allocation nodes' memory
 * from launch (or upload) in the device's graph memory, which only cuDeviceGraphMemTrim gives
 * back; a launch whose allocations the card cannot hold fails with CUDA_ERROR_OUT_OF_MEMORY and
 * does not run. Stream capture (one per thread, on any stream) records stream-ordered
 * allocations and frees as graph memory nodes. With
 * FAKECUDA_SLOW_MS set, every call that ends an object's life (a free, a context's destruction, a
 * primary context's retain or release) waits that long after doing its work, so that the tests
 * can widen the windows in which another thread acts.
 *
 * Built twice: as a CUDA 12 driver, and with FAKE_OLD_DRIVER as an older one that lacks the
 * stream-ordered allocator, cuCtxCreate_v4 and cuGetProcAddress_v2. Linked with
 * -Bsymbolic, as NVIDIA's is, so its own calls and addresses never reach an interposer.
 */
#define _GNU_SOURCE
#include "fake_state.h"
#include "fns.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* Every entry point is declared weak, so the old driver's table holds NULL for what it lacks. */
#define GS_FN(name, base, version, variant, params)                                                \
    EXPORT CUresult name params __attribute__((weak));
#define GS_LAUNCH(name, base, version, variant, params, args)                                      \
    GS_FN(name, base, version, variant, params)
#define GS_HELPER(name, base, version, params) GS_FN(name, base, version, p, params)
#include "fns.def"
EXPORT CUresult cuCtxSetCurrent(CUcontext ctx);
EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal);
EXPORT CUresult cuDriverGetVersion(int *version);
EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                    CUdeviceptr addr, unsigned long long flags);
EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size);
EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
    __attribute__((weak));
EXPORT CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags);
EXPORT CUresult cuGraphDestroy(CUgraph hGraph);
EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                    const CUgraphNode *dependencies, size_t numDependencies);
EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                         const CUgraphNode *dependencies, size_t numDependencies,
                                         CUgraph childGraph);
EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                       const CUgraphNode *dependencies, size_t numDependencies,
                                       CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
    __attribute__((weak));
EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                      const CUgraphNode *dependencies, size_t numDependencies,
                                      CUdeviceptr dptr) __attribute__((weak));
EXPORT CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode);
EXPORT CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph);

struct fake_ctx {
    int dev;
    int primary;
    uint64_t heap, fifo; /* cuCtxSetLimit's device-side sizes beyond the defaults, on the card */
};

/* The defaults a context's cost already includes (CUDA's documented defaults). */
#define FAKE_HEAP_DEFAULT (8u << 20)
#define FAKE_FIFO_DEFAULT (1u << 20)
#define FAKE_POOLS        16

enum { OBJ_PTR = 1, OBJ_ARRAY, OBJ_VMM, OBJ_MAP, OBJ_GRAPH };

struct fake_exec;

struct obj {
    int kind;
    int dev;
    uint64_t key; /* address or handle */
    uint64_t size;
    struct fake_ctx *ctx;   /* owner (OBJ_PTR, OBJ_ARRAY; NULL for a pool's allocation) */
    uint64_t handle;        /* OBJ_MAP: the VMM handle mapped */
    int refs;               /* OBJ_VMM: handle + mappings + retains */
    int pool;               /* OBJ_PTR: 1 + the pool it came from, 0 for none */
    struct fake_exec *exec; /* OBJ_GRAPH: the graph whose launch made it (NULL once destroyed) */
};

/* A memory pool: what its live allocations use, what it holds of the card, what was freed since
 * the last synchronisation (not given back by a trim before it), its release threshold. */
struct fake_pool {
    int dev, gone;
    uint64_t used, reserved, pending, threshold;
};
#define FAKE_CHUNK (2u << 20)

/* A graph: its nodes (a child graph node owns a copy of its graph). An executable graph keeps its
 * allocation nodes, child graphs' included: each one's device, size, address and whether the
 * graph frees it itself; and whether its last launch's other allocations are still live. */
#define FAKE_NODES 64
struct fake_graph {
    int n;
    struct fake_node {
        CUgraphNodeType type;
        int dev;
        uint64_t bytes;
        CUdeviceptr dptr;
        struct fake_graph *child;
    } node[FAKE_NODES];
};
struct fake_exec {
    unsigned long long flags;
    int nalloc, live;
    struct {
        int dev, freed;
        uint64_t bytes;
        CUdeviceptr dptr;
    } alloc[FAKE_NODES];
};

static _Thread_local struct fake_graph *capture; /* the graph this thread's stream records into */

static struct {
    pthread_mutex_t mu;
    struct fake_state *card;
    int fd;
    int me; /* this process's index in card->proc */
    int inited;
    struct obj *obj;
    size_t nobj, cap;
    uint64_t next64, next32, next_handle;
    struct fake_ctx primary[FAKE_DEVS];
    int primary_refs[FAKE_DEVS];
    struct freed {
        uint64_t addr, span;
        int narrow;
    } freed[256]; /* addresses handed out again, most recently freed first */
    int nfreed;
    struct fake_pool pool[FAKE_POOLS]; /* handle i + 1; 1 .. FAKE_DEVS: the devices' defaults */
    int npools;
    uint64_t graph_used[FAKE_DEVS], graph_reserved[FAKE_DEVS]; /* graphs' memory per device */
    unsigned slow_ms;
    struct fake_ctx *ctx_free; /* a destroyed context's memory, handed out again */
} drv = {.mu = PTHREAD_MUTEX_INITIALIZER, .me = -1};

static _Thread_local struct fake_ctx *cur;

static void forget(void)
{
    free(drv.obj);
    drv.obj = NULL;
    drv.nobj = drv.cap = 0;
    drv.me = -1;
    drv.inited = 0;
    memset(drv.primary_refs, 0, sizeof(drv.primary_refs));
    drv.nfreed = 0;
    memset(drv.graph_used, 0, sizeof(drv.graph_used));
    memset(drv.graph_reserved, 0, sizeof(drv.graph_reserved));
    cur = NULL;
}

/* A forked child holds none of its parent's GPU objects and must call cuInit again. */
static void child(void)
{
    pthread_mutex_init(&drv.mu, NULL);
    forget();
}

static int attach(void)
{
    const char *path = getenv("FAKECUDA_STATE");
    if (!drv.card && (!path || !(drv.card = fake_state_map(path, &drv.fd))))
        return -1;
    const char *tenant = getenv("FAKECUDA_TENANT");
    fake_lock(drv.fd);
    for (int i = 0; i < FAKE_PROCS && drv.me < 0; i++) {
        struct fake_proc *p = &drv.card->proc[i];
        int32_t pid = atomic_load(&p->pid);
        if (pid == 0 || !fake_alive(pid)) {
            memset(p->used, 0, sizeof(p->used));
            for (int d = 0; d < FAKE_DEVS; d++) {
                atomic_store(&p->ctxs[d], 0);
                atomic_store(&p->busy_us[d], 0);
                atomic_store(&p->launches[d], 0);
            }
            p->tenant = fake_tenant(drv.card, tenant ? tenant : "default");
            atomic_store(&p->pid, (int32_t)getpid());
            drv.me = i;
        }
    }
    fake_unlock(drv.fd);
    return drv.me >= 0 ? 0 : -1;
}

CUresult cuInit(unsigned int Flags)
{
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&drv.mu);
    if (!drv.inited && attach() == 0) {
        drv.inited = 1;
        drv.next64 = 0x7f0000000000ull;
        drv.next32 = 0x10000000u;
        drv.next_handle = 1;
        const char *slow = getenv("FAKECUDA_SLOW_MS");
        drv.slow_ms = slow ? (unsigned)atoi(slow) : 0;
        drv.npools = FAKE_DEVS;
        for (int d = 0; d < FAKE_DEVS; d++)
            drv.pool[d] = (struct fake_pool){d, 0, 0, 0, 0, 0};
    }
    int ok = drv.inited;
    pthread_mutex_unlock(&drv.mu);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

__attribute__((constructor)) static void fake_load(void)
{
    pthread_atfork(NULL, NULL, child);
}

/* An entry point that only forwards to the fake's implementation of it. */
#define SAME(name, params, call)                                                                   \
    CUresult name params                                                                           \
    {                                                                                              \
        return call;                                                                               \
    }

#define NEED_INIT()                                                                                \
    do {                                                                                           \
        if (!drv.inited)                                                                           \
            return CUDA_ERROR_NOT_INITIALIZED;                                                     \
    } while (0)

static int bad_dev(int dev)
{
    return !drv.inited || dev < 0 || dev >= drv.card->ndev;
}

/* The end of a call that ended an object's life: FAKECUDA_SLOW_MS widens what follows it. */
static CUresult slowly(CUresult rc)
{
    struct timespec t = {(time_t)(drv.slow_ms / 1000), (long)(drv.slow_ms % 1000) * 1000000};
    if (drv.slow_ms)
        nanosleep(&t, NULL);
    return rc;
}

/* Take @size on @dev for this process if the card has room. Caller holds drv.mu. */
static int card_take(int dev, uint64_t size)
{
    struct fake_state *c = drv.card;
    fake_lock(drv.fd);
    uint64_t used = fake_used(c, -1, dev);
    int ok = size <= c->total[dev] && used <= c->total[dev] - size;
    if (ok) {
        struct fake_proc *p = &c->proc[drv.me];
        p->used[dev] += size;
        uint64_t t = fake_used(c, p->tenant, dev);
        if (t > c->peak[p->tenant][dev])
            c->peak[p->tenant][dev] = t;
    }
    fake_unlock(drv.fd);
    return ok;
}

static void card_give(int dev, uint64_t size)
{
    fake_lock(drv.fd);
    drv.card->proc[drv.me].used[dev] -= size;
    fake_unlock(drv.fd);
}

static struct obj *find(int kind, uint64_t key)
{
    for (size_t i = 0; i < drv.nobj; i++)
        if (drv.obj[i].kind == kind && drv.obj[i].key == key)
            return &drv.obj[i];
    return NULL;
}

static void drop(struct obj *o)
{
    *o = drv.obj[--drv.nobj];
}

static struct obj *add(int kind, int dev, uint64_t key, uint64_t size)
{
    if (drv.nobj == drv.cap) {
        size_t cap = drv.cap ? 2 * drv.cap : 64;
        struct obj *n = realloc(drv.obj, cap * sizeof(*n));
        if (!n)
            return NULL;
        drv.obj = n;
        drv.cap = cap;
    }
    struct obj *o = &drv.obj[drv.nobj++];
    *o = (struct obj){kind, dev, key, size, cur, 0, 1, 0, NULL};
    return o;
}

static uint64_t span_of(uint64_t size, int narrow)
{
    uint64_t step = narrow ? 1u << 16 : 1u << 21;
    return (size + step - 1) / step * step + step;
}

/* An address for @size bytes: the most recently freed one of the same span, else a new one. */
static uint64_t new_addr(uint64_t size, int narrow)
{
    uint64_t span = span_of(size, narrow);
    for (int i = drv.nfreed - 1; i >= 0; i--) {
        if (drv.freed[i].span == span && drv.freed[i].narrow == narrow) {
            uint64_t a = drv.freed[i].addr;
            drv.freed[i] = drv.freed[--drv.nfreed];
            return a;
        }
    }
    uint64_t *next = narrow ? &drv.next32 : &drv.next64;
    uint64_t a = *next;
    *next += span;
    return a;
}

static void addr_freed(uint64_t addr, uint64_t size)
{
    int narrow = addr < 0x100000000ull;
    if (drv.nfreed < (int)(sizeof(drv.freed) / sizeof(drv.freed[0])))
        drv.freed[drv.nfreed++] = (struct freed){addr, span_of(size, narrow), narrow};
}

/* A device allocation on @dev (-1: the current context's): the card must hold it. */
static CUresult alloc_on(int dev, int kind, uint64_t size, int narrow, CUdeviceptr *out)
{
    NEED_INIT();
    if (size == 0 && kind != OBJ_ARRAY)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&drv.mu);
    CUresult rc = CUDA_SUCCESS;
    if (!cur)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else if (!card_take(dev < 0 ? cur->dev : dev, size))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else if (!add(kind, dev < 0 ? cur->dev : dev, *out = new_addr(size, narrow), size))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_unlock(&drv.mu);
    return rc;
}

static CUresult alloc(int kind, uint64_t size, int narrow, CUdeviceptr *out)
{
    return alloc_on(-1, kind, size, narrow, out);
}

static uint64_t chunks(uint64_t b)
{
    return (b + FAKE_CHUNK - 1) / FAKE_CHUNK * FAKE_CHUNK;
}

/* Pool @p's allocation of @size is freed (@async: by cuMemFreeAsync): back into its cache; a
 * destroyed pool's memory goes back to the card. Caller holds drv.mu. */
static void pool_unuse(struct fake_pool *p, uint64_t size, int async)
{
    p->used -= size;
    if (async && !p->gone)
        p->pending += size;
    if (p->gone) {
        card_give(p->dev, p->reserved - p->used);
        p->reserved = p->used;
    }
}

/* Give @p's card memory back down to @keep, never below what its allocations and the frees not
 * synchronised yet hold. Caller holds drv.mu. */
static void pool_shrink(struct fake_pool *p, uint64_t keep)
{
    uint64_t floor = p->used + p->pending, to = keep > floor ? keep : floor;
    if (to < p->reserved && chunks(to) < p->reserved) {
        card_give(p->dev, p->reserved - chunks(to));
        p->reserved = chunks(to);
    }
}

/* The object @o (@kind) is freed: its memory goes where it came from. Caller holds drv.mu. */
static void obj_freed(struct obj *o, int async)
{
    if (o->kind == OBJ_GRAPH)
        drv.graph_used[o->dev] -= o->size; /* back to the graphs' memory */
    else if (o->pool)
        pool_unuse(&drv.pool[o->pool - 1], o->size, async);
    else
        card_give(o->dev, o->size);
    if (o->kind == OBJ_PTR)
        addr_freed(o->key, o->size);
}

static CUresult release(int kind, uint64_t key)
{
    NEED_INIT();
    pthread_mutex_lock(&drv.mu);
    struct obj *o = find(kind, key);
    if (o) {
        obj_freed(o, 0);
        drop(o);
    }
    pthread_mutex_unlock(&drv.mu);
    return slowly(o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

/* A device pointer freed at once (@async 0) or in stream order: one of cuMemAlloc's, of a pool,
 * or of a graph's launch. During capture, a free of an allocation captured becomes a free node. */
static CUresult free_ptr(uint64_t key, int async)
{
    NEED_INIT();
    pthread_mutex_lock(&drv.mu);
    struct fake_graph *g = async ? capture : NULL;
    for (int i = 0; g && i < g->n; i++) {
        if (g->node[i].type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && g->node[i].dptr == key &&
            g->n < FAKE_NODES) {
            g->node[g->n++] = (struct fake_node){CU_GRAPH_NODE_TYPE_MEM_FREE, 0, 0, key, NULL};
            pthread_mutex_unlock(&drv.mu);
            return CUDA_SUCCESS;
        }
    }
    struct obj *o = find(OBJ_PTR, key);
    if (!o)
        o = find(OBJ_GRAPH, key);
    if (o) {
        obj_freed(o, async);
        if (o->kind == OBJ_GRAPH && o->exec)
            o->exec->live--;
        drop(o);
    }
    pthread_mutex_unlock(&drv.mu);
    return slowly(o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
    CUdeviceptr a;
    CUresult rc = alloc(OBJ_PTR, bytesize, 1, &a);
    if (rc == CUDA_SUCCESS)
        *dptr = (CUdeviceptr_v1)a;
    return rc;
}

SAME(cuMemAlloc_v2, (CUdeviceptr * dptr, size_t bytesize), alloc(OBJ_PTR, bytesize, 0, dptr))

SAME(cuMemAllocManaged, (CUdeviceptr * dptr, size_t bytesize, unsigned int flags),
     alloc(OBJ_PTR, bytesize, 0, dptr))

/* The fake chooses a pitch of the width rounded up to 256 bytes. */
CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                            unsigned int ElementSizeBytes)
{
    size_t pitch = (WidthInBytes + 255) / 256 * 256;
    CUresult rc = alloc(OBJ_PTR, (uint64_t)pitch * Height, 0, dptr);
    if (rc == CUDA_SUCCESS)
        *pPitch = pitch;
    return rc;
}

CUresult cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch, unsigned int WidthInBytes,
                         unsigned int Height, unsigned int ElementSizeBytes)
{
    CUdeviceptr a;
    unsigned pitch = (WidthInBytes + 255) / 256 * 256;
    CUresult rc = alloc(OBJ_PTR, (uint64_t)pitch * Height, 1, &a);
    if (rc == CUDA_SUCCESS) {
        *dptr = (CUdeviceptr_v1)a;
        *pPitch = pitch;
    }
    return rc;
}

SAME(cuMemFree, (CUdeviceptr_v1 dptr), free_ptr(dptr, 0))

SAME(cuMemFree_v2, (CUdeviceptr dptr), free_ptr(dptr, 0))

#ifndef FAKE_OLD_DRIVER
/* Streams: the fake has only the default streams of the current context. */

/* Handle i + 1 is drv.pool[i]; a destroyed pool's handle is no pool. */
static struct fake_pool *pool_of(CUmemoryPool pool)
{
    int i = (int)(uintptr_t)pool - 1;
    return drv.inited && i >= 0 && i < drv.npools && !drv.pool[i].gone ? &drv.pool[i] : NULL;
}

/* An allocation node of @size on @dev in the graph being captured. Caller holds drv.mu. */
static CUresult capture_alloc(int dev, uint64_t size, CUdeviceptr *out)
{
    if (capture->n == FAKE_NODES)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *out = new_addr(size, 0);
    capture->node[capture->n++] =
        (struct fake_node){CU_GRAPH_NODE_TYPE_MEM_ALLOC, dev, size, *out, NULL};
    return CUDA_SUCCESS;
}

/* @size from @pool (NULL: the current context's device's pool), its cache first; the card's
 * memory in FAKE_CHUNK steps for the rest. */
static CUresult pool_alloc(CUmemoryPool pool, uint64_t size, CUdeviceptr *out)
{
    NEED_INIT();
    if (size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&drv.mu);
    struct fake_pool *p = pool ? pool_of(pool) : cur ? &drv.pool[cur->dev] : NULL;
    CUresult rc = CUDA_SUCCESS;
    if (!cur || !p) {
        rc = cur ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_CONTEXT;
    } else if (capture) {
        rc = capture_alloc(p->dev, size, out);
    } else {
        uint64_t spare = p->reserved - p->used, grow = size > spare ? chunks(size - spare) : 0;
        struct obj *o = NULL;
        if (grow && !card_take(p->dev, grow))
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else if (!(o = add(OBJ_PTR, p->dev, *out = new_addr(size, 0), size)))
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        if (rc == CUDA_SUCCESS) {
            p->reserved += grow;
            p->used += size;
            o->ctx = NULL;
            o->pool = (int)(p - drv.pool) + 1;
        } else if (grow) {
            card_give(p->dev, grow);
        }
    }
    pthread_mutex_unlock(&drv.mu);
    return rc;
}

SAME(cuMemAllocAsync, (CUdeviceptr * dptr, size_t bytesize, CUstream hStream),
     pool_alloc(NULL, bytesize, dptr))

SAME(cuMemAllocAsync_ptsz, (CUdeviceptr * dptr, size_t bytesize, CUstream hStream),
     pool_alloc(NULL, bytesize, dptr))

SAME(cuMemAllocFromPoolAsync,
     (CUdeviceptr * dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream),
     pool ? pool_alloc(pool, bytesize, dptr) : CUDA_ERROR_INVALID_VALUE)

SAME(cuMemAllocFromPoolAsync_ptsz,
     (CUdeviceptr * dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream),
     pool ? pool_alloc(pool, bytesize, dptr) : CUDA_ERROR_INVALID_VALUE)

static CUresult device_pool(CUmemoryPool *pool, CUdevice dev)
{
    if (bad_dev(dev))
        return drv.inited ? CUDA_ERROR_INVALID_DEVICE : CUDA_ERROR_NOT_INITIALIZED;
    *pool = (CUmemoryPool)(uintptr_t)(dev + 1);
    return CUDA_SUCCESS;
}

SAME(cuDeviceGetDefaultMemPool, (CUmemoryPool * pool, CUdevice dev), device_pool(pool, dev))

SAME(cuDeviceGetMemPool, (CUmemoryPool * pool, CUdevice dev), device_pool(pool, dev))

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    NEED_INIT();
    if (!props || props->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        bad_dev(props->location.id))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&drv.mu);
    CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (drv.npools < FAKE_POOLS) {
        drv.pool[drv.npools++] = (struct fake_pool){props->location.id, 0, 0, 0, 0, 0};
        *pool = (CUmemoryPool)(uintptr_t)drv.npools;
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&drv.mu);
    return rc;
}

/* Created pools may be destroyed, a device's default pool may not: the cache goes back at once,
 * the live allocations' memory as they are freed. */
CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    NEED_INIT();
    int i = (int)(uintptr_t)pool;
    pthread_mutex_lock(&drv.mu);
    struct fake_pool *p = i > FAKE_DEVS ? pool_of(pool) : NULL;
    if (p) {
        p->gone = 1;
        pool_unuse(p, 0, 0);
    }
    pthread_mutex_unlock(&drv.mu);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    NEED_INIT();
    pthread_mutex_lock(&drv.mu);
    struct fake_pool *p = pool_of(pool);
    if (p)
        pool_shrink(p, minBytesToKeep);
    pthread_mutex_unlock(&drv.mu);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    NEED_INIT();
    pthread_mutex_lock(&drv.mu);
    struct fake_pool *p = pool_of(pool);
    CUresult rc = p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (p && attr == CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
        *(cuuint64_t *)value = p->reserved;
    else if (p && attr == CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
        *(cuuint64_t *)value = p->used;
    else if (p && attr == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
        *(cuuint64_t *)value = p->threshold;
    else
        rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&drv.mu);
    return rc;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    NEED_INIT();
    pthread_mutex_lock(&drv.mu);
    struct fake_pool *p = pool_of(pool);
    CUresult rc =
        p && attr == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        p->threshold = *(cuuint64_t *)value;
    pthread_mutex_unlock(&drv.mu);
    return rc;
}

SAME(cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream), free_ptr(dptr, 1))

SAME(cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream hStream), free_ptr(dptr, 1))
#endif

/* A synchronisation: every free so far has happened, and each pool gives its cache back down to
 * its release threshold. */
static CUresult synchronize(void)
{
    NEED_INIT();
    pthread_mutex_lock(&drv.mu);
    for (int i = 0; i < drv.npools; i++) {
        drv.pool[i].pending = 0;
        if (!drv.pool[i].gone)
            pool_shrink(&drv.pool[i], drv.pool[i].threshold);
    }
    pthread_mutex_unlock(&drv.mu);
    return CUDA_SUCCESS;
}

SAME(cuCtxSynchronize, (void), synchronize())

SAME(cuStreamSynchronize, (CUstream hStream), synchronize())

SAME(cuStreamSynchronize_ptsz, (CUstream hStream), synchronize())

/* Events are complete at once: waiting for one synchronises like any other wait. */
SAME(cuEventSynchronize, (CUevent hEvent), synchronize())

/* ---- CUDA graphs ---- */

static CUresult launch(void);

static struct fake_graph *graph_copy(const struct fake_graph *g);

static void graph_free(struct fake_graph *g)
{
    for (int i = 0; g && i < g->n; i++)
        graph_free(g->node[i].child);
    free(g);
}

static struct fake_graph *graph_copy(const struct fake_graph *g)
{
    struct fake_graph *c = malloc(sizeof(*c));
    if (!c)
        return NULL;
    *c = *g;
    for (int i = 0; i < c->n; i++)
        if (g->node[i].child)
            c->node[i].child = graph_copy(g->node[i].child);
    return c;
}

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    NEED_INIT();
    struct fake_graph *g = calloc(1, sizeof(*g));
    *phGraph = (CUgraph)g;
    return g && flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

SAME(cuGraphDestroy, (CUgraph hGraph), (graph_free((struct fake_graph *)hGraph), CUDA_SUCCESS))

/* A node of @type in @hGraph (dependencies are not modelled: nodes run in the order added). */
static CUresult node_add(CUgraphNode *out, CUgraph hGraph, struct fake_node n)
{
    struct fake_graph *g = (struct fake_graph *)hGraph;
    if (!g || g->n == FAKE_NODES)
        return CUDA_ERROR_INVALID_VALUE;
    g->node[g->n] = n;
    *out = (CUgraphNode)&g->node[g->n++];
    return CUDA_SUCCESS;
}

CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                             const CUgraphNode *dependencies, size_t numDependencies)
{
    NEED_INIT();
    return node_add(phGraphNode, hGraph,
                    (struct fake_node){CU_GRAPH_NODE_TYPE_KERNEL, 0, 0, 0, NULL});
}

CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                  const CUgraphNode *dependencies, size_t numDependencies,
                                  CUgraph childGraph)
{
    NEED_INIT();
    struct fake_graph *c = childGraph ? graph_copy((struct fake_graph *)childGraph) : NULL;
    CUresult rc =
        c ? node_add(phGraphNode, hGraph, (struct fake_node){CU_GRAPH_NODE_TYPE_GRAPH, 0, 0, 0, c})
          : CUDA_ERROR_INVALID_VALUE;
    if (rc != CUDA_SUCCESS)
        graph_free(c);
    return rc;
}

CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    NEED_INIT();
    struct fake_graph *g = (struct fake_graph *)hGraph;
    if (!g || !numNodes)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; nodes && i < *numNodes && i < (size_t)g->n; i++)
        nodes[i] = (CUgraphNode)&g->node[i];
    if (!nodes || *numNodes > (size_t)g->n)
        *numNodes = (size_t)g->n;
    return CUDA_SUCCESS;
}

CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
    NEED_INIT();
    *type = ((struct fake_node *)hNode)->type;
    return CUDA_SUCCESS;
}

CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph)
{
    NEED_INIT();
    struct fake_node *n = (struct fake_node *)hNode;
    *phGraph = (CUgraph)n->child;
    return n->type == CU_GRAPH_NODE_TYPE_GRAPH ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The allocation nodes of @g and its children, flattened into @e; and which of them @g frees. */
static void exec_allocs(struct fake_exec *e, const struct fake_graph *g)
{
    for (int i = 0; i < g->n; i++) {
        const struct fake_node *n = &g->node[i];
        if (n->child)
            exec_allocs(e, n->child);
        if (n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && e->nalloc < FAKE_NODES) {
            e->alloc[e->nalloc].dev = n->dev;
            e->alloc[e->nalloc].bytes = n->bytes;
            e->alloc[e->nalloc].dptr = n->dptr;
            e->alloc[e->nalloc++].freed = 0;
        }
        for (int k = 0; n->type == CU_GRAPH_NODE_TYPE_MEM_FREE && k < e->nalloc; k++)
            e->alloc[k].freed |= e->alloc[k].dptr == n->dptr;
    }
}

static CUresult instantiate(CUgraphExec *out, CUgraph hGraph, unsigned long long flags)
{
    NEED_INIT();
    struct fake_exec *e = calloc(1, sizeof(*e));
    if (!e || !hGraph) {
        free(e);
        return e ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
    }
    e->flags = flags;
    exec_allocs(e, (struct fake_graph *)hGraph);
    *out = (CUgraphExec)e;
    return CUDA_SUCCESS;
}

SAME(cuGraphInstantiate,
     (CUgraphExec * phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer,
      size_t bufferSize),
     instantiate(phGraphExec, hGraph, 0))

SAME(cuGraphInstantiate_v2,
     (CUgraphExec * phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer,
      size_t bufferSize),
     instantiate(phGraphExec, hGraph, 0))

/* Allocations of @e's last launch that are still live outlive it, no longer its. */
CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    NEED_INIT();
    pthread_mutex_lock(&drv.mu);
    for (size_t i = 0; i < drv.nobj; i++)
        if (drv.obj[i].kind == OBJ_GRAPH && drv.obj[i].exec == (struct fake_exec *)hGraphExec)
            drv.obj[i].exec = NULL;
    pthread_mutex_unlock(&drv.mu);
    free(hGraphExec);
    return hGraphExec ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Make the graph memory of each device hold @e's allocations beside what graphs use; with @run,
 * make them: the ones @e frees itself come back at once, the others stay live as OBJ_GRAPH
 * objects. Nothing changes when the card cannot hold them. Caller holds drv.mu. */
static CUresult graph_map(struct fake_exec *e, int run)
{
    uint64_t need[FAKE_DEVS] = {0}, grow[FAKE_DEVS] = {0};
    for (int k = 0; k < e->nalloc; k++)
        need[e->alloc[k].dev] += e->alloc[k].bytes;
    int d;
    for (d = 0; d < FAKE_DEVS; d++) {
        uint64_t spare = drv.graph_reserved[d] - drv.graph_used[d];
        grow[d] = need[d] > spare ? chunks(need[d] - spare) : 0;
        if (grow[d] && !card_take(d, grow[d]))
            break;
    }
    if (d < FAKE_DEVS) {
        while (d-- > 0)
            if (grow[d])
                card_give(d, grow[d]);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (d = 0; d < FAKE_DEVS; d++)
        drv.graph_reserved[d] += grow[d];
    for (int k = 0; run && k < e->nalloc; k++) {
        struct obj *o = e->alloc[k].freed
                            ? NULL
                            : add(OBJ_GRAPH, e->alloc[k].dev, e->alloc[k].dptr, e->alloc[k].bytes);
        if (o) {
            o->ctx = NULL;
            o->exec = e;
            e->live++;
            drv.graph_used[o->dev] += o->size;
        }
    }
    return CUDA_SUCCESS;
}

/* A launch: the allocations of the last one must have been freed, or are now with
 * CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH (cuGraphLaunch's documentation); then the
 * graph's memory is made, and its run counts as one kernel. */
static CUresult graph_run(CUgraphExec hGraphExec, int run)
{
    NEED_INIT();
    struct fake_exec *e = (struct fake_exec *)hGraphExec;
    if (!e || !cur)
        return e ? CUDA_ERROR_INVALID_CONTEXT : CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&drv.mu);
    CUresult rc = CUDA_SUCCESS;
    if (run && e->live && !(e->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH))
        rc = CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; rc == CUDA_SUCCESS && run && e->live && i < drv.nobj;) {
        struct obj *o = &drv.obj[i];
        if (o->kind != OBJ_GRAPH || o->exec != e) {
            i++;
            continue;
        }
        obj_freed(o, 0);
        e->live--;
        drop(o);
    }
    if (rc == CUDA_SUCCESS)
        rc = graph_map(e, run);
    pthread_mutex_unlock(&drv.mu);
    return rc == CUDA_SUCCESS && run ? launch() : rc;
}

SAME(cuGraphLaunch, (CUgraphExec hGraphExec, CUstream hStream), graph_run(hGraphExec, 1))

SAME(cuGraphLaunch_ptsz, (CUgraphExec hGraphExec, CUstream hStream), graph_run(hGraphExec, 1))

#ifndef FAKE_OLD_DRIVER
CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                const CUgraphNode *dependencies, size_t numDependencies,
                                CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
    NEED_INIT();
    int dev = nodeParams->poolProps.location.id;
    if (nodeParams->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE || bad_dev(dev) ||
        nodeParams->bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&drv.mu);
    nodeParams->dptr = new_addr(nodeParams->bytesize, 0);
    pthread_mutex_unlock(&drv.mu);
    return node_add(phGraphNode, hGraph,
                    (struct fake_node){CU_GRAPH_NODE_TYPE_MEM_ALLOC, dev, nodeParams->bytesize,
                                       nodeParams->dptr, NULL});
}

CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                               const CUgraphNode *dependencies, size_t numDependencies,
                               CUdeviceptr dptr)
{
    NEED_INIT();
    return node_add(phGraphNode, hGraph,
                    (struct fake_node){CU_GRAPH_NODE_TYPE_MEM_FREE, 0, 0, dptr, NULL});
}

CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *params_out)
{
    NEED_INIT();
    struct fake_node *n = (struct fake_node *)hNode;
    if (n->type != CU_GRAPH_NODE_TYPE_MEM_ALLOC)
        return CUDA_ERROR_INVALID_VALUE;
    memset(params_out, 0, sizeof(*params_out));
    params_out->poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    params_out->poolProps.location.id = n->dev;
    params_out->bytesize = n->bytes;
    params_out->dptr = n->dptr;
    return CUDA_SUCCESS;
}

SAME(cuGraphInstantiateWithFlags,
     (CUgraphExec * phGraphExec, CUgraph hGraph, unsigned long long flags),
     instantiate(phGraphExec, hGraph, flags))

/* With CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD the graph's memory is mapped at once. */
static CUresult instantiate_params(CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    CUresult rc = instantiate(e, g, p ? p->flags : 0);
    if (rc == CUDA_SUCCESS && p && (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)) {
        pthread_mutex_lock(&drv.mu);
        rc = graph_map((struct fake_exec *)*e, 0);
        pthread_mutex_unlock(&drv.mu);
        if (rc != CUDA_SUCCESS)
            free(*e);
    }
    return rc;
}

SAME(cuGraphInstantiateWithParams,
     (CUgraphExec * phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *p),
     instantiate_params(phGraphExec, hGraph, p))

SAME(cuGraphInstantiateWithParams_ptsz,
     (CUgraphExec * phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *p),
     instantiate_params(phGraphExec, hGraph, p))

SAME(cuGraphUpload, (CUgraphExec hGraphExec, CUstream hStream), graph_run(hGraphExec, 0))

SAME(cuGraphUpload_ptsz, (CUgraphExec hGraphExec, CUstream hStream), graph_run(hGraphExec, 0))

CUresult cuDeviceGraphMemTrim(CUdevice device)
{
    if (bad_dev(device))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&drv.mu);
    uint64_t to = chunks(drv.graph_used[device]);
    if (to < drv.graph_reserved[device]) {
        card_give(device, drv.graph_reserved[device] - to);
        drv.graph_reserved[device] = to;
    }
    pthread_mutex_unlock(&drv.mu);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
    if (bad_dev(device))
        return CUDA_ERROR_INVALID_DEVICE;
    if (attr != CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT &&
        attr != CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&drv.mu);
    *(cuuint64_t *)value = attr == CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT ? drv.graph_used[device]
                                                                      : drv.graph_reserved[device];
    pthread_mutex_unlock(&drv.mu);
    return CUDA_SUCCESS;
}
#endif

/* Stream capture: one graph per thread records what the stream does. */
CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    NEED_INIT();
    if (capture)
        return CUDA_ERROR_INVALID_VALUE;
    capture = calloc(1, sizeof(*capture));
    return capture ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    NEED_INIT();
    *phGraph = (CUgraph)capture;
    capture = NULL;
    return *phGraph ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    NEED_INIT();
    *captureStatus = capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
    NEED_INIT();
    if ((uintptr_t)hStream > 2)
        return CUDA_ERROR_INVALID_HANDLE;
    *pctx = (CUcontext)cur;
    return cur ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* Arrays cost their elements, unpadded: bytes per channel of each format (4 for the others). */
static uint64_t elem(CUarray_format fmt, unsigned ch)
{
    static const struct {
        int fmt, bytes;
    } size[] = {{CU_AD_FORMAT_UNSIGNED_INT8, 1},  {CU_AD_FORMAT_SIGNED_INT8, 1},
                {CU_AD_FORMAT_UNSIGNED_INT16, 2}, {CU_AD_FORMAT_SIGNED_INT16, 2},
                {CU_AD_FORMAT_HALF, 2},           {CU_AD_FORMAT_UNSIGNED_INT32, 4},
                {CU_AD_FORMAT_SIGNED_INT32, 4},   {CU_AD_FORMAT_FLOAT, 4}};
    for (size_t i = 0; i < sizeof(size) / sizeof(size[0]); i++)
        if (size[i].fmt == fmt)
            return (uint64_t)size[i].bytes * ch;
    return 4;
}

static uint64_t nz(uint64_t x)
{
    return x ? x : 1;
}

static CUresult make_array(uint64_t bytes, void **out)
{
    CUdeviceptr a;
    CUresult rc = alloc(OBJ_ARRAY, bytes, 0, &a);
    if (rc == CUDA_SUCCESS)
        *out = (void *)(uintptr_t)a;
    return rc;
}

SAME(cuArrayCreate_v2, (CUarray * h, const CUDA_ARRAY_DESCRIPTOR *a),
     make_array(nz(a->Width) * nz(a->Height) * elem(a->Format, a->NumChannels), (void **)h))

SAME(cuArrayCreate, (CUarray * h, const CUDA_ARRAY_DESCRIPTOR_v1 *a),
     make_array(nz(a->Width) * nz(a->Height) * elem(a->Format, a->NumChannels), (void **)h))

/* Sparse and deferred-mapping arrays hold no memory until cuMemMapArrayAsync maps some in. */
static int unbacked(unsigned flags)
{
    return (flags & (CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING)) != 0;
}

SAME(cuArray3DCreate_v2, (CUarray * h, const CUDA_ARRAY3D_DESCRIPTOR *a),
     make_array(unbacked(a->Flags)
                    ? 0
                    : nz(a->Width) * nz(a->Height) * nz(a->Depth) * elem(a->Format, a->NumChannels),
                (void **)h))

SAME(cuArray3DCreate, (CUarray * h, const CUDA_ARRAY3D_DESCRIPTOR_v1 *a),
     make_array(nz(a->Width) * nz(a->Height) * nz(a->Depth) * elem(a->Format, a->NumChannels),
                (void **)h))

SAME(cuArrayDestroy, (CUarray hArray), release(OBJ_ARRAY, (uint64_t)(uintptr_t)hArray))

CUresult cuMipmappedArrayCreate(CUmipmappedArray *h, const CUDA_ARRAY3D_DESCRIPTOR *a,
                                unsigned int levels)
{
    uint64_t sum = 0;
    for (unsigned l = 0; l < levels && !unbacked(a->Flags); l++)
        sum += nz(a->Width >> l) * nz(a->Height >> l) * nz(a->Depth >> l) *
               elem(a->Format, a->NumChannels);
    return make_array(sum, (void **)h);
}

SAME(cuMipmappedArrayDestroy, (CUmipmappedArray h), release(OBJ_ARRAY, (uint64_t)(uintptr_t)h))

/* The VMM API: physical memory lives while its handle or a mapping of it does. */
CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                     const CUmemAllocationProp *prop, unsigned long long flags)
{
    NEED_INIT();
    if (!prop || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || bad_dev(prop->location.id) ||
        size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&drv.mu);
    CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (card_take(prop->location.id, size)) {
        *handle = drv.next_handle++;
        rc = add(OBJ_VMM, prop->location.id, *handle, size) ? CUDA_SUCCESS
                                                            : CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_unlock(&drv.mu);
    return rc;
}

static void vmm_unref(struct obj *v)
{
    if (--v->refs == 0) {
        card_give(v->dev, v->size);
        drop(v);
    }
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    NEED_INIT();
    pthread_mutex_lock(&drv.mu);
    struct obj *v = find(OBJ_VMM, handle);
    if (v)
        vmm_unref(v);
    pthread_mutex_unlock(&drv.mu);
    return v ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags)
{
    NEED_INIT();
    pthread_mutex_lock(&drv.mu);
    *ptr = new_addr(size, 0);
    pthread_mutex_unlock(&drv.mu);
    return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    NEED_INIT();
    return CUDA_SUCCESS;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags)
{
    NEED_INIT();
    pthread_mutex_lock(&drv.mu);
    struct obj *v = find(OBJ_VMM, handle);
    CUresult rc = CUDA_ERROR_INVALID_HANDLE;
    if (v && size <= v->size) {
        v->refs++;
        struct obj *m = add(OBJ_MAP, v->dev, ptr, size);
        if (m)
            m->handle = handle;
        rc = m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_unlock(&drv.mu);
    return rc;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    NEED_INIT();
    pthread_mutex_lock(&drv.mu);
    int n = 0;
    for (size_t i = 0; i < drv.nobj;) {
        struct obj *m = &drv.obj[i];
        if (m->kind != OBJ_MAP || m->key < ptr || m->key >= ptr + size) {
            i++;
            continue;
        }
        uint64_t handle = m->handle;
        drop(m);
        struct obj *v = find(OBJ_VMM, handle);
        if (v)
            vmm_unref(v);
        n++;
        i = 0; /* vmm_unref may have moved records */
    }
    pthread_mutex_unlock(&drv.mu);
    return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    NEED_INIT();
    pthread_mutex_lock(&drv.mu);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < drv.nobj; i++) {
        struct obj *m = &drv.obj[i];
        uint64_t a = (uint64_t)(uintptr_t)addr;
        if (m->kind == OBJ_MAP && a >= m->key && a < m->key + m->size) {
            struct obj *v = find(OBJ_VMM, m->handle);
            if (v) {
                v->refs++;
                *handle = m->handle;
                rc = CUDA_SUCCESS;
            }
            break;
        }
    }
    pthread_mutex_unlock(&drv.mu);
    return rc;
}

/* Contexts cost card->ctx_bytes; destroying one frees its allocations. */
static void free_ctx_objects(struct fake_ctx *c)
{
    for (size_t i = 0; i < drv.nobj;) {
        struct obj *o = &drv.obj[i];
        if ((o->kind == OBJ_PTR || o->kind == OBJ_ARRAY) && o->ctx == c) {
            card_give(o->dev, o->size);
            drop(o);
        } else {
            i++;
        }
    }
}

static CUresult ctx_create(CUcontext *pctx, CUdevice dev)
{
    NEED_INIT();
    if (bad_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&drv.mu);
    CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
    struct fake_ctx *c = drv.ctx_free ? drv.ctx_free : malloc(sizeof(*c));
    drv.ctx_free = NULL;
    if (c && card_take(dev, drv.card->ctx_bytes)) {
        *c = (struct fake_ctx){dev, 0, 0, 0};
        atomic_fetch_add(&drv.card->proc[drv.me].ctxs[dev], 1);
        cur = c;
        *pctx = (CUcontext)c;
        rc = CUDA_SUCCESS;
    } else {
        free(c);
    }
    pthread_mutex_unlock(&drv.mu);
    return rc;
}

SAME(cuCtxCreate, (CUcontext * pctx, unsigned int flags, CUdevice dev), ctx_create(pctx, dev))

SAME(cuCtxCreate_v2, (CUcontext * pctx, unsigned int flags, CUdevice dev), ctx_create(pctx, dev))

SAME(cuCtxCreate_v3,
     (CUcontext * pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags,
      CUdevice dev),
     ctx_create(pctx, dev))

#ifndef FAKE_OLD_DRIVER
SAME(cuCtxCreate_v4,
     (CUcontext * pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev),
     ctx_create(pctx, dev))
#endif

static CUresult ctx_destroy(CUcontext ctx)
{
    NEED_INIT();
    struct fake_ctx *c = (struct fake_ctx *)ctx;
    if (!c || c->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&drv.mu);
    free_ctx_objects(c);
    card_give(c->dev, drv.card->ctx_bytes + c->heap + c->fifo);
    atomic_fetch_sub(&drv.card->proc[drv.me].ctxs[c->dev], 1);
    if (cur == c)
        cur = NULL;
    free(drv.ctx_free);
    drv.ctx_free = c; /* the next context gets this address, as malloc would often give it */
    pthread_mutex_unlock(&drv.mu);
    return slowly(CUDA_SUCCESS);
}

SAME(cuCtxDestroy, (CUcontext ctx), ctx_destroy(ctx))

SAME(cuCtxDestroy_v2, (CUcontext ctx), ctx_destroy(ctx))

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    NEED_INIT();
    if (bad_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&drv.mu);
    CUresult rc = CUDA_SUCCESS;
    if (drv.primary_refs[dev] == 0 && !card_take(dev, drv.card->ctx_bytes))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS) {
        if (drv.primary_refs[dev]++ == 0)
            atomic_fetch_add(&drv.card->proc[drv.me].ctxs[dev], 1);
        if (drv.primary_refs[dev] == 1)
            drv.primary[dev] = (struct fake_ctx){dev, 1, 0, 0};
        *pctx = (CUcontext)&drv.primary[dev];
    }
    pthread_mutex_unlock(&drv.mu);
    return slowly(rc);
}

static CUresult primary_release(CUdevice dev)
{
    NEED_INIT();
    if (bad_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&drv.mu);
    CUresult rc = drv.primary_refs[dev] > 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    if (rc == CUDA_SUCCESS && --drv.primary_refs[dev] == 0) {
        free_ctx_objects(&drv.primary[dev]);
        card_give(dev, drv.card->ctx_bytes + drv.primary[dev].heap + drv.primary[dev].fifo);
        atomic_fetch_sub(&drv.card->proc[drv.me].ctxs[dev], 1);
        if (cur == &drv.primary[dev])
            cur = NULL;
    }
    pthread_mutex_unlock(&drv.mu);
    return slowly(rc);
}

SAME(cuDevicePrimaryCtxRelease, (CUdevice dev), primary_release(dev))

SAME(cuDevicePrimaryCtxRelease_v2, (CUdevice dev), primary_release(dev))

static CUresult primary_reset(CUdevice dev)
{
    NEED_INIT();
    if (bad_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&drv.mu);
    free_ctx_objects(&drv.primary[dev]);
    pthread_mutex_unlock(&drv.mu);
    return CUDA_SUCCESS;
}

SAME(cuDevicePrimaryCtxReset, (CUdevice dev), primary_reset(dev))

SAME(cuDevicePrimaryCtxReset_v2, (CUdevice dev), primary_reset(dev))

/* Limits: the malloc heap and the printf FIFO take card memory beyond their defaults. */
static uint64_t *limit_of(struct fake_ctx *c, CUlimit limit)
{
    return limit == CU_LIMIT_MALLOC_HEAP_SIZE   ? &c->heap
           : limit == CU_LIMIT_PRINTF_FIFO_SIZE ? &c->fifo
                                                : NULL;
}

static uint64_t limit_default(CUlimit limit)
{
    return limit == CU_LIMIT_MALLOC_HEAP_SIZE ? FAKE_HEAP_DEFAULT : FAKE_FIFO_DEFAULT;
}

CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
    NEED_INIT();
    if (!cur)
        return CUDA_ERROR_INVALID_CONTEXT;
    uint64_t *extra = limit_of(cur, limit);
    if (!extra)
        return limit == CU_LIMIT_STACK_SIZE ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    uint64_t want = value > limit_default(limit) ? value - limit_default(limit) : 0;
    pthread_mutex_lock(&drv.mu);
    CUresult rc = CUDA_SUCCESS;
    if (want > *extra && !card_take(cur->dev, want - *extra))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else if (want < *extra)
        card_give(cur->dev, *extra - want);
    if (rc == CUDA_SUCCESS)
        *extra = want;
    pthread_mutex_unlock(&drv.mu);
    return rc;
}

CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
    NEED_INIT();
    if (!cur)
        return CUDA_ERROR_INVALID_CONTEXT;
    uint64_t *extra = limit_of(cur, limit);
    *pvalue = extra ? limit_default(limit) + *extra : 1024;
    return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    NEED_INIT();
    if (attribute != CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&drv.mu);
    struct obj *o = find(OBJ_PTR, ptr);
    if (o)
        *(int *)data = o->dev;
    pthread_mutex_unlock(&drv.mu);
    return o ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    NEED_INIT();
    cur = (struct fake_ctx *)ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    NEED_INIT();
    *pctx = (CUcontext)cur;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
    NEED_INIT();
    if (!cur)
        return CUDA_ERROR_INVALID_CONTEXT;
    *device = cur->dev;
    return CUDA_SUCCESS;
}

/* One context deep is all the tests need: push makes current, pop restores the one before. */
static _Thread_local struct fake_ctx *pushed;

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    NEED_INIT();
    pushed = cur;
    cur = (struct fake_ctx *)ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    NEED_INIT();
    if (pctx)
        *pctx = (CUcontext)cur;
    cur = pushed;
    return CUDA_SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    NEED_INIT();
    if (!cur)
        return CUDA_ERROR_INVALID_CONTEXT;
    fake_lock(drv.fd);
    uint64_t used = fake_used(drv.card, -1, cur->dev);
    fake_unlock(drv.fd);
    *total = drv.card->total[cur->dev];
    *free_bytes = *total - used;
    return CUDA_SUCCESS;
}

CUresult cuMemGetInfo(unsigned int *free_bytes, unsigned int *total)
{
    size_t fr, t;
    CUresult rc = cuMemGetInfo_v2(&fr, &t);
    if (rc == CUDA_SUCCESS) {
        *free_bytes = fr > 0xffffffffu ? 0xffffffffu : (unsigned)fr;
        *total = t > 0xffffffffu ? 0xffffffffu : (unsigned)t;
    }
    return rc;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    if (bad_dev(dev))
        return drv.inited ? CUDA_ERROR_INVALID_DEVICE : CUDA_ERROR_NOT_INITIALIZED;
    *bytes = drv.card->total[dev];
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
    size_t b;
    CUresult rc = cuDeviceTotalMem_v2(&b, dev);
    if (rc == CUDA_SUCCESS)
        *bytes = b > 0xffffffffu ? 0xffffffffu : (unsigned)b;
    return rc;
}

CUresult cuDeviceGetCount(int *count)
{
    NEED_INIT();
    *count = drv.card->ndev;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    if (bad_dev(ordinal))
        return drv.inited ? CUDA_ERROR_INVALID_DEVICE : CUDA_ERROR_NOT_INITIALIZED;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    if (bad_dev(dev))
        return drv.inited ? CUDA_ERROR_INVALID_DEVICE : CUDA_ERROR_NOT_INITIALIZED;
    fake_uuid(dev, (unsigned char *)uuid->bytes);
    return CUDA_SUCCESS;
}

SAME(cuDeviceGetUuid_v2, (CUuuid * uuid, CUdevice dev), cuDeviceGetUuid(uuid, dev))

CUresult cuDriverGetVersion(int *version)
{
#ifdef FAKE_OLD_DRIVER
    *version = 11010;
#else
    *version = 12080;
#endif
    return CUDA_SUCCESS;
}

/* Launches need a context and add the kernel's time to the process's busy counter. */
static CUresult launch(void)
{
    NEED_INIT();
    struct fake_ctx *c = cur;
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct fake_proc *p = &drv.card->proc[drv.me];
    atomic_fetch_add_explicit(&p->busy_us[c->dev], drv.card->kernel_us, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->launches[c->dev], 1, memory_order_relaxed);
    return CUDA_SUCCESS;
}

#define GS_LAUNCH(name, base, version, variant, params, args)                                      \
    CUresult name params                                                                           \
    {                                                                                              \
        return launch();                                                                           \
    }
#include "fns.def"

/* cuGetProcAddress: the newest version of @symbol not newer than @version, per-thread-stream
 * variant first when the flags ask for it. */
static const struct {
    const char *name, *base;
    int version, ptsz;
    gs_fnptr fn;
} table[] = {
#define GS_FN(name, base, version, variant, params)                                                \
    {#name, #base, version, sizeof(#variant) > 2, (gs_fnptr)name},
#define GS_LAUNCH(name, base, version, variant, params, args)                                      \
    GS_FN(name, base, version, variant, params)
#define GS_HELPER(name, base, version, params) GS_FN(name, base, version, p, params)
#include "fns.def"
    {"cuCtxSetCurrent", "cuCtxSetCurrent", 4000, 0, (gs_fnptr)cuCtxSetCurrent},
    {"cuDeviceGet", "cuDeviceGet", 2000, 0, (gs_fnptr)cuDeviceGet},
    {"cuDriverGetVersion", "cuDriverGetVersion", 2020, 0, (gs_fnptr)cuDriverGetVersion},
    {"cuMemAddressReserve", "cuMemAddressReserve", 10020, 0, (gs_fnptr)cuMemAddressReserve},
    {"cuMemAddressFree", "cuMemAddressFree", 10020, 0, (gs_fnptr)cuMemAddressFree},
    {"cuMemPoolSetAttribute", "cuMemPoolSetAttribute", 11020, 0, (gs_fnptr)cuMemPoolSetAttribute},
    {"cuGraphCreate", "cuGraphCreate", 10000, 0, (gs_fnptr)cuGraphCreate},
    {"cuGraphDestroy", "cuGraphDestroy", 10000, 0, (gs_fnptr)cuGraphDestroy},
    {"cuGraphAddEmptyNode", "cuGraphAddEmptyNode", 10000, 0, (gs_fnptr)cuGraphAddEmptyNode},
    {"cuGraphAddChildGraphNode", "cuGraphAddChildGraphNode", 10000, 0,
     (gs_fnptr)cuGraphAddChildGraphNode},
    {"cuGraphAddMemAllocNode", "cuGraphAddMemAllocNode", 11040, 0,
     (gs_fnptr)cuGraphAddMemAllocNode},
    {"cuGraphAddMemFreeNode", "cuGraphAddMemFreeNode", 11040, 0, (gs_fnptr)cuGraphAddMemFreeNode},
    {"cuStreamBeginCapture_v2", "cuStreamBeginCapture", 10010, 0,
     (gs_fnptr)cuStreamBeginCapture_v2},
    {"cuStreamEndCapture", "cuStreamEndCapture", 10000, 0, (gs_fnptr)cuStreamEndCapture},
};

/* cuGetProcAddress names whose newer versions are entry points of another name (fns.def). */
static const struct {
    const char *base;
    int version;
    gs_fnptr fn;
} aliases[] = {
#define GS_ALIAS(base, version, name) {#base, version, (gs_fnptr)name},
#include "fns.def"
};

static CUresult proc_address(const char *symbol, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    int best = -1, seen = 0, ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t a = 0; a < sizeof(aliases) / sizeof(aliases[0]); a++) {
        if (aliases[a].fn && !strcmp(aliases[a].base, symbol) && version >= aliases[a].version) {
            memcpy(pfn, &aliases[a].fn, sizeof(aliases[a].fn));
            if (status)
                *status = CU_GET_PROC_ADDRESS_SUCCESS;
            return CUDA_SUCCESS;
        }
    }
    for (int i = 0; i < (int)(sizeof(table) / sizeof(table[0])); i++) {
        if (!table[i].fn || strcmp(table[i].base, symbol) != 0)
            continue;
        seen = 1;
        if (table[i].version > version)
            continue;
        if (best < 0 || (table[i].ptsz == ptsz && table[best].ptsz != ptsz) ||
            (table[i].ptsz == table[best].ptsz && table[i].version > table[best].version))
            best = i;
    }
    gs_fnptr fn = best >= 0 ? table[best].fn : NULL;
    memcpy(pfn, &fn, sizeof(fn));
    if (status)
        *status = best >= 0 ? CU_GET_PROC_ADDRESS_SUCCESS
                            : (seen ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                                    : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    return CUDA_SUCCESS;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return proc_address(symbol, pfn, cudaVersion, flags, NULL);
}

#ifndef FAKE_OLD_DRIVER
SAME(cuGetProcAddress_v2,
     (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
      CUdriverProcAddressQueryResult *symbolStatus),
     proc_address(symbol, pfn, cudaVersion, flags, symbolStatus))
#endif
