/*
 * libgpushare — contexts, which cost memory on the card (GPUSHARE_CONTEXT_MIB each, and what their
 * malloc heap and printf FIFO are set to beyond that) and take their allocations with them when
 * they die, and what the tenant is told of a device's memory. Every entry point here that makes or
 * ends a context holds `life` across the driver's call and its books (shim.h says why).
 */
#include "shim.h"

static uint64_t key_of(const void *handle)
{
    return (uint64_t)(uintptr_t)handle;
}

static CUresult ctx_begin(int dev, struct gs_charge *c, struct gs_probe *p)
{
    gs__init();
    CUresult rc = gs__charge(dev, gs__ctx_bytes(), c);
    if (rc == CUDA_SUCCESS)
        gs__probe_before(dev, p);
    return rc;
}

static CUresult ctx_end(CUresult rc, int dev, const struct gs_charge *c, const struct gs_probe *p,
                        CUcontext *pctx)
{
    gs__probe_after(dev, p);
    if (rc != CUDA_SUCCESS) {
        gs__uncharge(c);
        return rc;
    }
    uint64_t ctx = key_of(*pctx);
    if (gs__record(c, GS_REC_CTX, ctx, ctx, 0) == 0)
        return CUDA_SUCCESS;
    GS_CALL(cuCtxDestroy_v2, (*pctx));
    gs__uncharge(c);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

#define CTX_CREATE(name, params, args)                                                             \
    CUresult name params                                                                           \
    {                                                                                              \
        struct gs_charge c;                                                                        \
        struct gs_probe p;                                                                         \
        pthread_mutex_lock(&gs__shim.life);                                                        \
        CUresult rc = ctx_begin(dev, &c, &p);                                                      \
        if (rc == CUDA_SUCCESS)                                                                    \
            rc = ctx_end(GS_CALL(name, args), dev, &c, &p, pctx);                                  \
        pthread_mutex_unlock(&gs__shim.life);                                                      \
        return rc;                                                                                 \
    }

CTX_CREATE(cuCtxCreate, (CUcontext * pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev))
CTX_CREATE(cuCtxCreate_v2, (CUcontext * pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev))
CTX_CREATE(cuCtxCreate_v3,
           (CUcontext * pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags,
            CUdevice dev),
           (pctx, paramsArray, numParams, flags, dev))
CTX_CREATE(cuCtxCreate_v4,
           (CUcontext * pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev),
           (pctx, ctxCreateParams, flags, dev))

static CUresult ctx_destroyed(CUresult rc, CUcontext ctx)
{
    if (rc == CUDA_SUCCESS) {
        gs__discharge(GS_REC_CTX, key_of(ctx));
        gs__drain_ctx(key_of(ctx));
    }
    return rc;
}

/*
 * The primary context is charged at its first retain and given back at its last release (the
 * driver destroys it then, with its allocations); a reset frees its allocations.
 */
static CUresult primary_released(CUresult rc, CUdevice dev)
{
    if (rc != CUDA_SUCCESS)
        return rc;
    struct gs_rec r;
    int last = 0;
    pthread_mutex_lock(&gs__shim.mu);
    struct gs_rec *p = gs_ledger_get(&gs__shim.ledger, GS_REC_PRIMARY, (uint64_t)dev);
    if (p && --p->aux == 0)
        last = gs_ledger_take(&gs__shim.ledger, GS_REC_PRIMARY, (uint64_t)dev, &r);
    pthread_mutex_unlock(&gs__shim.mu);
    if (last) {
        gs__give_back(&r);
        gs__drain_ctx(r.ctx);
    }
    return rc;
}

static CUresult primary_reset(CUresult rc, CUdevice dev)
{
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&gs__shim.mu);
    struct gs_rec *p = gs_ledger_get(&gs__shim.ledger, GS_REC_PRIMARY, (uint64_t)dev);
    uint64_t ctx = p ? p->ctx : 0;
    pthread_mutex_unlock(&gs__shim.mu);
    if (ctx)
        gs__drain_ctx(ctx);
    return rc;
}

/* An entry point that ends a context (or its allocations): @after does the books. */
#define CTX_END(name, type, arg, after)                                                            \
    CUresult name(type arg)                                                                        \
    {                                                                                              \
        gs__init();                                                                                \
        pthread_mutex_lock(&gs__shim.life);                                                        \
        CUresult rc = after(GS_CALL(name, (arg)), arg);                                            \
        pthread_mutex_unlock(&gs__shim.life);                                                      \
        return rc;                                                                                 \
    }

CTX_END(cuCtxDestroy, CUcontext, ctx, ctx_destroyed)
CTX_END(cuCtxDestroy_v2, CUcontext, ctx, ctx_destroyed)
CTX_END(cuDevicePrimaryCtxRelease, CUdevice, dev, primary_released)
CTX_END(cuDevicePrimaryCtxRelease_v2, CUdevice, dev, primary_released)
CTX_END(cuDevicePrimaryCtxReset, CUdevice, dev, primary_reset)
CTX_END(cuDevicePrimaryCtxReset_v2, CUdevice, dev, primary_reset)

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    struct gs_charge c = {0};
    struct gs_probe p = {-1, {0}};
    gs__init();
    pthread_mutex_lock(&gs__shim.life);
    pthread_mutex_lock(&gs__shim.mu);
    int held = gs_ledger_get(&gs__shim.ledger, GS_REC_PRIMARY, (uint64_t)dev) != NULL;
    pthread_mutex_unlock(&gs__shim.mu);
    CUresult rc = held ? CUDA_SUCCESS : ctx_begin(dev, &c, &p);
    if (rc == CUDA_SUCCESS) {
        rc = GS_CALL(cuDevicePrimaryCtxRetain, (pctx, dev));
        gs__probe_after(dev, &p);
    }
    if (rc != CUDA_SUCCESS) {
        gs__uncharge(&c);
    } else if (held) {
        pthread_mutex_lock(&gs__shim.mu);
        gs_ledger_get(&gs__shim.ledger, GS_REC_PRIMARY, (uint64_t)dev)->aux++;
        pthread_mutex_unlock(&gs__shim.mu);
    } else if (gs__record(&c, GS_REC_PRIMARY, (uint64_t)dev, key_of(*pctx), 1) < 0) {
        gs__uncharge(&c); /* no memory for the record: the context stays, uncounted */
    }
    pthread_mutex_unlock(&gs__shim.life);
    return rc;
}

/*
 * cuCtxSetLimit: the malloc heap and the printf FIFO are the context's device memory. Their size
 * when the library first sees them (the driver's default, part of GPUSHARE_CONTEXT_MIB) is free;
 * what they are set to beyond it is charged to the current context, settled to the size the
 * driver reports having set, and given back when the context dies. The other limits pass through
 * (the stack the driver grows at launch as kernels need it, and cannot be counted here).
 */
static CUresult set_limit(uint64_t ctx, CUlimit limit, size_t value, size_t first)
{
    uint64_t key = ctx | (uint64_t)limit; /* contexts are aligned: the low bits are free */
    struct gs_rec r = {key, 0, ctx, first, -1, GS_REC_LIMIT};
    struct gs_charge c;
    CUresult rc = gs__charge_current(0, &c);
    if (rc != CUDA_SUCCESS || !c.counted)
        return rc == CUDA_SUCCESS ? GS_CALL(cuCtxSetLimit, (limit, value)) : rc;
    gs__claim(GS_REC_LIMIT, key, &r);
    c.bytes = r.bytes; /* what the record holds, on this context's device */
    uint64_t held = r.bytes, base = r.aux;
    size_t now = value;
    if (gs__settle(&c, value > base ? value - base : 0) < 0) {
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else if ((rc = GS_CALL(cuCtxSetLimit, (limit, value))) != CUDA_SUCCESS) {
        gs__settle(&c, held);
    } else if (GS_CALL(cuCtxGetLimit, (&now, limit)) == CUDA_SUCCESS) {
        gs__settle(&c, now > base ? now - base : 0); /* the driver rounds: count what it set */
    }
    if (gs__record(&c, GS_REC_LIMIT, key, ctx, base) < 0)
        gs__uncharge(&c);
    return rc;
}

CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
    size_t first;
    gs__init();
    uint64_t ctx = gs__current_ctx();
    if ((limit != CU_LIMIT_MALLOC_HEAP_SIZE && limit != CU_LIMIT_PRINTF_FIFO_SIZE) || !ctx ||
        !gs__shim.counting || GS_CALL(cuCtxGetLimit, (&first, limit)) != CUDA_SUCCESS)
        return GS_CALL(cuCtxSetLimit, (limit, value));
    pthread_mutex_lock(&gs__shim.life);
    CUresult rc = set_limit(ctx, limit, value, first);
    pthread_mutex_unlock(&gs__shim.life);
    return rc;
}

/* What the tenant sees of a device: its limit as the total, what the container has left of it as
 * free (never more than the card really has free). @free may be NULL. */
static void view(const struct gs_shim_dev *d, uint64_t *free, uint64_t *total)
{
    struct gs_shim *s = &gs__shim;
    if (!d || (!s->counting && !d->refused))
        return; /* nothing counted, nothing to tell */
    if (d->limit_bytes < *total)
        *total = d->limit_bytes;
    if (!free)
        return;
    uint64_t avail = 0;
    if (d->regdev >= 0) {
        gs__cache_refresh(-1);     /* what the pools and graphs hold now */
        gs_region_reap(s->region); /* a crashed process's memory is free again */
        uint64_t used = gs_region_used(s->region, d->regdev);
        avail = d->limit_bytes > used ? d->limit_bytes - used : 0;
    }
    if (avail < *free)
        *free = avail;
}

static const struct gs_shim_dev *current_dev(void)
{
    int ordinal;
    return gs__current_ordinal(&ordinal) == CUDA_SUCCESS ? gs__dev(ordinal) : NULL;
}

#define MEM_INFO(name, type)                                                                       \
    CUresult name(type *free, type *total)                                                         \
    {                                                                                              \
        gs__init();                                                                                \
        CUresult rc = GS_CALL(name, (free, total));                                                \
        if (rc == CUDA_SUCCESS && free && total) {                                                 \
            uint64_t f = *free, t = *total;                                                        \
            view(current_dev(), &f, &t);                                                           \
            *free = (type)f;                                                                       \
            *total = (type)t;                                                                      \
        }                                                                                          \
        return rc;                                                                                 \
    }

#define TOTAL_MEM(name, type)                                                                      \
    CUresult name(type *bytes, CUdevice dev)                                                       \
    {                                                                                              \
        gs__init();                                                                                \
        CUresult rc = GS_CALL(name, (bytes, dev));                                                 \
        if (rc == CUDA_SUCCESS && bytes) {                                                         \
            uint64_t t = *bytes;                                                                   \
            view(gs__dev(dev), NULL, &t);                                                          \
            *bytes = (type)t;                                                                      \
        }                                                                                          \
        return rc;                                                                                 \
    }

MEM_INFO(cuMemGetInfo, unsigned int)
MEM_INFO(cuMemGetInfo_v2, size_t)
TOTAL_MEM(cuDeviceTotalMem, unsigned int)
TOTAL_MEM(cuDeviceTotalMem_v2, size_t)
