/*
 * A fake libcuda.so.1 for the tests: every entry point libgpushare touches, with real bookkeeping
 * against the fake card of fake_state.h (FAKECUDA_STATE names its file; FAKECUDA_TENANT, the
 * tenant this process belongs to). It keeps what a driver keeps: contexts per thread, the primary
 * context's retain count, device pointers, arrays, VMM handles with their mappings and references;
 * it refuses what the card cannot hold with CUDA_ERROR_OUT_OF_MEMORY, a free of what it never
 * gave with CUDA_ERROR_INVALID_VALUE, and any call before cuInit with CUDA_ERROR_NOT_INITIALIZED.
 * Kernel launches add FAKE kernel time to the process's busy counter, which the fake NVML reads.
 * Like a real driver it hands a freed address out again, and each device has a default memory
 * pool (pools created with cuMemPoolCreate live on the device their properties name). With
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

struct fake_ctx {
    int dev;
    int primary;
    uint64_t heap, fifo; /* cuCtxSetLimit's device-side sizes beyond the defaults, on the card */
};

/* The defaults a context's cost already includes (CUDA's documented defaults). */
#define FAKE_HEAP_DEFAULT (8u << 20)
#define FAKE_FIFO_DEFAULT (1u << 20)
#define FAKE_POOLS        16

enum { OBJ_PTR = 1, OBJ_ARRAY, OBJ_VMM, OBJ_MAP };

struct obj {
    int kind;
    int dev;
    uint64_t key; /* address or handle */
    uint64_t size;
    struct fake_ctx *ctx; /* owner (OBJ_PTR, OBJ_ARRAY) */
    uint64_t handle;      /* OBJ_MAP: the VMM handle mapped */
    int refs;             /* OBJ_VMM: handle + mappings + retains */
};

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
    int pool_dev[FAKE_POOLS]; /* pool i + 1: its device; pools 1 .. FAKE_DEVS are the defaults */
    int npools;
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
            drv.pool_dev[d] = d;
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
    *o = (struct obj){kind, dev, key, size, cur, 0, 1};
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

static CUresult release(int kind, uint64_t key)
{
    NEED_INIT();
    pthread_mutex_lock(&drv.mu);
    struct obj *o = find(kind, key);
    if (o) {
        card_give(o->dev, o->size);
        if (kind == OBJ_PTR)
            addr_freed(o->key, o->size);
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

SAME(cuMemFree, (CUdeviceptr_v1 dptr), release(OBJ_PTR, dptr))

SAME(cuMemFree_v2, (CUdeviceptr dptr), release(OBJ_PTR, dptr))

#ifndef FAKE_OLD_DRIVER
/* Streams: the fake has only the default streams of the current context. */
SAME(cuMemAllocAsync, (CUdeviceptr * dptr, size_t bytesize, CUstream hStream),
     alloc(OBJ_PTR, bytesize, 0, dptr))

SAME(cuMemAllocAsync_ptsz, (CUdeviceptr * dptr, size_t bytesize, CUstream hStream),
     alloc(OBJ_PTR, bytesize, 0, dptr))

/* Pools: handle i + 1 lives on pool_dev[i]; the fake allocates from a pool on its device and
 * keeps no cache (a free gives the memory back to the card at once). */
static int pool_dev(CUmemoryPool pool)
{
    int i = (int)(uintptr_t)pool - 1;
    return i >= 0 && i < drv.npools ? drv.pool_dev[i] : -1;
}

static CUresult from_pool(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool)
{
    int dev = drv.inited ? pool_dev(pool) : -1;
    return dev < 0 ? CUDA_ERROR_INVALID_VALUE : alloc_on(dev, OBJ_PTR, bytesize, 0, dptr);
}

SAME(cuMemAllocFromPoolAsync,
     (CUdeviceptr * dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream),
     from_pool(dptr, bytesize, pool))

SAME(cuMemAllocFromPoolAsync_ptsz,
     (CUdeviceptr * dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream),
     from_pool(dptr, bytesize, pool))

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
        drv.pool_dev[drv.npools++] = props->location.id;
        *pool = (CUmemoryPool)(uintptr_t)drv.npools;
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&drv.mu);
    return rc;
}

/* Created pools may be destroyed, a device's default pool may not. */
CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    NEED_INIT();
    int i = (int)(uintptr_t)pool;
    return i > FAKE_DEVS && i <= drv.npools ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SAME(cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream), release(OBJ_PTR, dptr))

SAME(cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream hStream), release(OBJ_PTR, dptr))
#endif

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
};

static CUresult proc_address(const char *symbol, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    int best = -1, seen = 0, ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
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
