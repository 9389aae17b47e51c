/*
 * libgpushare — the accounting every allocation path shares: reserve in the container's region
 * before the driver is asked, give back when the driver fails or the object is freed, and keep a
 * ledger record in between saying how much to give back, on which device.
 */
#include "shim.h"

#include <errno.h>
#include <string.h>

uint64_t gs__mul_sat(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

uint64_t gs__ctx_bytes(void)
{
    return gs__shim.env.context_mib << 20;
}

/* Reserve @bytes on the device @ordinal. CUDA_SUCCESS when the call may go on (c->counted says
 * whether anything was reserved: nothing is when no memory limit is set, or when the driver cannot
 * name the device and will fail the call itself); CUDA_ERROR_OUT_OF_MEMORY when it may not. */
CUresult gs__charge(int ordinal, uint64_t bytes, struct gs_charge *c)
{
    struct gs_shim *s = &gs__shim;
    memset(c, 0, sizeof(*c));
    if (!gs__guarded())
        return CUDA_SUCCESS;
    struct gs_shim_dev *d = gs__dev(ordinal);
    if (!d)
        return CUDA_SUCCESS;
    if (d->refused)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (!s->counting)
        return CUDA_SUCCESS;
    int slot = gs__slot();
    if (slot < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    /* over the limit: what the process's pools and graphs cache on the device is given back first
     */
    if (gs_region_reserve(s->region, slot, d->regdev, bytes, d->limit_bytes) < 0 &&
        (!gs__cache_trim(ordinal) ||
         gs_region_reserve(s->region, slot, d->regdev, bytes, d->limit_bytes) < 0))
        return CUDA_ERROR_OUT_OF_MEMORY;
    *c = (struct gs_charge){1, d->regdev, slot, bytes, d->limit_bytes};
    return CUDA_SUCCESS;
}

CUresult gs__charge_current(uint64_t bytes, struct gs_charge *c)
{
    int ordinal;
    if (!gs__guarded() || gs__current_ordinal(&ordinal) != CUDA_SUCCESS) {
        memset(c, 0, sizeof(*c)); /* no context: the driver refuses the call */
        return CUDA_SUCCESS;
    }
    return gs__charge(ordinal, bytes, c);
}

void gs__uncharge(const struct gs_charge *c)
{
    if (c->counted)
        gs_region_release(gs__shim.region, c->slot, c->regdev, c->bytes);
}

/* Settle a reservation made on an estimate to the @actual size. Return: 0, or -1 (over the
 * limit; the reservation is unchanged). */
int gs__settle(struct gs_charge *c, uint64_t actual)
{
    struct gs_shim *s = &gs__shim;
    if (!c->counted || actual == c->bytes)
        return 0;
    if (actual < c->bytes) {
        gs_region_release(s->region, c->slot, c->regdev, c->bytes - actual);
    } else if (gs_region_reserve(s->region, c->slot, c->regdev, actual - c->bytes, c->limit) < 0) {
        return -1;
    }
    c->bytes = actual;
    return 0;
}

uint64_t gs__current_ctx(void)
{
    CUcontext ctx = NULL;
    if (GS_CALL(cuCtxGetCurrent, (&ctx)) != CUDA_SUCCESS)
        return 0;
    return (uint64_t)(uintptr_t)ctx;
}

/* Remember what @c reserved for the object (@kind, @key). A record already there is of an object
 * the driver has since freed by a path this library does not see (it hands out only addresses and
 * handles that are not in use): its bytes go back. Return: 0, or -ENOMEM. */
int gs__record(const struct gs_charge *c, int kind, uint64_t key, uint64_t ctx, uint64_t aux)
{
    if (!c->counted)
        return 0;
    struct gs_rec r = {key, c->bytes, ctx, aux, c->regdev, (uint8_t)kind}, stale;
    int found = 0;
    pthread_mutex_lock(&gs__shim.mu);
    int rc = gs_ledger_put(&gs__shim.ledger, &r);
    if (rc == -EEXIST) {
        found = gs_ledger_take(&gs__shim.ledger, kind, key, &stale);
        rc = gs_ledger_put(&gs__shim.ledger, &r);
    }
    pthread_mutex_unlock(&gs__shim.mu);
    if (found)
        gs__give_back(&stale);
    return rc;
}

void gs__give_back(const struct gs_rec *r)
{
    if (r->kind == GS_REC_ASYNC)
        gs__pool_freed(r->aux, r->bytes);
    else if (r->dev >= 0 && gs__shim.slot >= 0)
        gs_region_release(gs__shim.region, gs__shim.slot, r->dev, r->bytes);
}

int gs__claim(int kind, uint64_t key, struct gs_rec *r)
{
    if (!gs__shim.counting) /* nothing was recorded */
        return 0;
    pthread_mutex_lock(&gs__shim.mu);
    int found = gs_ledger_take(&gs__shim.ledger, kind, key, r);
    pthread_mutex_unlock(&gs__shim.mu);
    return found;
}

void gs__unclaim(const struct gs_rec *r)
{
    pthread_mutex_lock(&gs__shim.mu);
    int rc = gs_ledger_put(&gs__shim.ledger, r);
    pthread_mutex_unlock(&gs__shim.mu);
    if (rc == -ENOMEM) /* the object lives on uncounted rather than counted forever */
        gs__give_back(r);
}

/* The object (@kind, @key) was freed: give its bytes back. */
void gs__discharge(int kind, uint64_t key)
{
    struct gs_rec r;
    if (gs__claim(kind, key, &r))
        gs__give_back(&r);
}

static int in_ctx(void *ud, const struct gs_rec *r)
{
    return r->ctx == *(uint64_t *)ud && (r->kind == GS_REC_PTR || r->kind == GS_REC_ARRAY ||
                                         r->kind == GS_REC_MIPMAP || r->kind == GS_REC_LIMIT);
}

static void drained(void *ud, const struct gs_rec *r)
{
    (void)ud;
    gs__give_back(r);
}

/* The context @ctx is gone, and with it every allocation made in it. */
void gs__drain_ctx(uint64_t ctx)
{
    pthread_mutex_lock(&gs__shim.mu);
    gs_ledger_drain(&gs__shim.ledger, in_ctx, drained, &ctx);
    pthread_mutex_unlock(&gs__shim.mu);
    atomic_fetch_add(&gs__shim.ctx_gen, 1);
}

/* The device a stream allocates on: its context's. The legacy and per-thread default streams
 * (handles 0, 1 and 2) belong to the current context. */
CUresult gs__stream_ordinal(CUstream s, int *ordinal)
{
    CUcontext ctx, cur = NULL;
    if ((uintptr_t)s <= 2 || GS_CALL(cuStreamGetCtx, (s, &ctx)) != CUDA_SUCCESS)
        return gs__current_ordinal(ordinal);
    GS_CALL(cuCtxGetCurrent, (&cur));
    if (ctx == cur)
        return gs__current_ordinal(ordinal);
    CUresult rc = GS_CALL(cuCtxPushCurrent_v2, (ctx));
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = gs__current_ordinal(ordinal);
    GS_CALL(cuCtxPopCurrent_v2, (&cur));
    return rc;
}

CUresult gs__charge_stream(CUstream s, uint64_t bytes, struct gs_charge *c)
{
    int ordinal;
    if (!gs__guarded() || gs__stream_ordinal(s, &ordinal) != CUDA_SUCCESS) {
        memset(c, 0, sizeof(*c));
        return CUDA_SUCCESS;
    }
    return gs__charge(ordinal, bytes, c);
}
