/*
 * libgpushare — the memory limit on every allocation path: device pointers (plain, pitched,
 * managed, stream-ordered, from a pool), the VMM API and arrays, and their frees. At the limit the
 * call returns CUDA_ERROR_OUT_OF_MEMORY, the driver's own code, and nothing else changes.
 *
 * Where NVIDIA keeps two ABIs of one entry point (cuMemAlloc and cuMemAlloc_v2, a _ptsz twin),
 * one generator below writes both, so they cannot drift apart.
 */
#include "shim.h"

#include <errno.h>
#include <string.h>

static uint64_t key_of(const void *handle)
{
    return (uint64_t)(uintptr_t)handle;
}

/* The end of every call that allocated a device pointer: undo on failure, record on success. */
static CUresult ptr_done(CUresult rc, const struct gs_charge *c, uint64_t ptr)
{
    if (rc != CUDA_SUCCESS || !c->counted) {
        gs__uncharge(c);
        return rc;
    }
    if (gs__record(c, GS_REC_PTR, ptr, gs__current_ctx(), 0) == 0)
        return CUDA_SUCCESS;
    GS_CALL(cuMemFree_v2, (ptr));
    gs__uncharge(c);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

/* An allocation of `bytesize` into *dptr, charged by @how (on the current context's device, or
 * on the stream's). */
#define PTR_ALLOC(name, params, args, how)                                                         \
    CUresult name params                                                                           \
    {                                                                                              \
        struct gs_charge c;                                                                        \
        gs__init();                                                                                \
        CUresult rc = how;                                                                         \
        if (rc != CUDA_SUCCESS)                                                                    \
            return rc;                                                                             \
        rc = GS_CALL(name, args);                                                                  \
        return ptr_done(rc, &c, rc == CUDA_SUCCESS ? *dptr : 0);                                   \
    }

PTR_ALLOC(cuMemAlloc, (CUdeviceptr_v1 * dptr, unsigned int bytesize), (dptr, bytesize),
          gs__charge_current(bytesize, &c))
PTR_ALLOC(cuMemAlloc_v2, (CUdeviceptr * dptr, size_t bytesize), (dptr, bytesize),
          gs__charge_current(bytesize, &c))
PTR_ALLOC(cuMemAllocManaged, (CUdeviceptr * dptr, size_t bytesize, unsigned int flags),
          (dptr, bytesize, flags), gs__charge_current(bytesize, &c))
/* Stream-ordered allocations: their pools are charged what they hold (pool.c). */
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return gs__pool_alloc(GS_I_cuMemAllocAsync, dptr, bytesize, NULL, hStream, 0, 0);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return gs__pool_alloc(GS_I_cuMemAllocAsync_ptsz, dptr, bytesize, NULL, hStream, 0, 1);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                 CUstream hStream)
{
    return gs__pool_alloc(GS_I_cuMemAllocFromPoolAsync, dptr, bytesize, pool, hStream, 1, 0);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                      CUstream hStream)
{
    return gs__pool_alloc(GS_I_cuMemAllocFromPoolAsync_ptsz, dptr, bytesize, pool, hStream, 1, 1);
}

/* Pitched allocations reserve on an estimate (rows padded to 512 bytes, the texture pitch
 * alignment of current GPUs) and settle to pitch x height once the driver has chosen the pitch. */
static uint64_t pitch_estimate(uint64_t width, uint64_t height)
{
    return gs__mul_sat(width > UINT64_MAX - 511 ? width : (width + 511) & ~UINT64_C(511), height);
}

static CUresult pitch_done(CUresult rc, struct gs_charge *c, uint64_t ptr, uint64_t pitch,
                           uint64_t height)
{
    if (rc == CUDA_SUCCESS && gs__settle(c, gs__mul_sat(pitch, height)) < 0) {
        GS_CALL(cuMemFree_v2, (ptr));
        gs__uncharge(c);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return ptr_done(rc, c, ptr);
}

#define PITCH_ALLOC(name, ptr_t, size_t_)                                                          \
    CUresult name(ptr_t *dptr, size_t_ *pPitch, size_t_ WidthInBytes, size_t_ Height,              \
                  unsigned int ElementSizeBytes)                                                   \
    {                                                                                              \
        struct gs_charge c;                                                                        \
        gs__init();                                                                                \
        CUresult rc = gs__charge_current(pitch_estimate(WidthInBytes, Height), &c);                \
        if (rc != CUDA_SUCCESS)                                                                    \
            return rc;                                                                             \
        rc = GS_CALL(name, (dptr, pPitch, WidthInBytes, Height, ElementSizeBytes));                \
        return pitch_done(rc, &c, rc == CUDA_SUCCESS ? *dptr : 0,                                  \
                          rc == CUDA_SUCCESS ? *pPitch : 0, Height);                               \
    }

PITCH_ALLOC(cuMemAllocPitch, CUdeviceptr_v1, unsigned int)
PITCH_ALLOC(cuMemAllocPitch_v2, CUdeviceptr, size_t)

/* A free by @name of the object (@kind, @key): its record is taken first (gs__claim says why),
 * its bytes go back once the driver has freed it. A device pointer is one of cuMemAlloc's or a
 * stream-ordered one, whose bytes go back to its pool's live allocations (its pool keeps the
 * memory, charged, until it gives it back to the driver). */
#define FREE(name, params, args, kind, key)                                                        \
    CUresult name params                                                                           \
    {                                                                                              \
        struct gs_rec r;                                                                           \
        gs__init();                                                                                \
        int held =                                                                                 \
            gs__claim(kind, key, &r) || (kind == GS_REC_PTR && gs__claim(GS_REC_ASYNC, key, &r));  \
        CUresult rc = GS_CALL(name, args);                                                         \
        if (held && rc == CUDA_SUCCESS)                                                            \
            gs__give_back(&r);                                                                     \
        else if (held)                                                                             \
            gs__unclaim(&r);                                                                       \
        return rc;                                                                                 \
    }

FREE(cuMemFree, (CUdeviceptr_v1 dptr), (dptr), GS_REC_PTR, dptr)
FREE(cuMemFree_v2, (CUdeviceptr dptr), (dptr), GS_REC_PTR, dptr)
FREE(cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream), (dptr, hStream), GS_REC_PTR, dptr)
FREE(cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream hStream), (dptr, hStream), GS_REC_PTR, dptr)
FREE(cuArrayDestroy, (CUarray hArray), (hArray), GS_REC_ARRAY, key_of(hArray))
FREE(cuMipmappedArrayDestroy, (CUmipmappedArray hMipmappedArray), (hMipmappedArray), GS_REC_MIPMAP,
     key_of(hMipmappedArray))

/*
 * The virtual memory management API. Physical memory made by cuMemCreate lives until its handle is
 * released and every mapping of it is unmapped (cuMemRetainAllocationHandle adds a reference), so
 * the VMM record counts references and gives the bytes back at the last one: releasing a handle
 * early while its memory stays mapped does not free the tenant's budget. Memory made on the host
 * (a location other than a device) is not the card's and is not counted.
 */
CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                     const CUmemAllocationProp *prop, unsigned long long flags)
{
    struct gs_charge c = {0};
    gs__init();
    if (prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
        CUresult rc = gs__charge(prop->location.id, size, &c);
        if (rc != CUDA_SUCCESS)
            return rc;
    }
    CUresult rc = GS_CALL(cuMemCreate, (handle, size, prop, flags));
    if (rc != CUDA_SUCCESS) {
        gs__uncharge(&c);
        return rc;
    }
    if (gs__record(&c, GS_REC_VMM, *handle, 0, 1) == 0)
        return CUDA_SUCCESS;
    GS_CALL(cuMemRelease, (*handle));
    gs__uncharge(&c);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

/* Drop one reference of @handle; at the last, take its record into *@out. Return: 1 when the
 * bytes are to be given back. Caller holds mu. */
static int vmm_unref(uint64_t handle, struct gs_rec *out)
{
    struct gs_rec *v = gs_ledger_get(&gs__shim.ledger, GS_REC_VMM, handle);
    if (!v || --v->aux > 0)
        return 0;
    return gs_ledger_take(&gs__shim.ledger, GS_REC_VMM, handle, out);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    gs__init();
    CUresult rc = GS_CALL(cuMemRelease, (handle));
    if (rc != CUDA_SUCCESS)
        return rc;
    struct gs_rec r;
    pthread_mutex_lock(&gs__shim.mu);
    int last = vmm_unref(handle, &r);
    pthread_mutex_unlock(&gs__shim.mu);
    if (last)
        gs__give_back(&r);
    return rc;
}

/* Add a reference to @handle's record, and when @map_ptr is not 0 remember the mapping there.
 * Were the mapping's record lost (no memory), the handle keeps the extra reference: the bytes stay
 * counted, never freed early. */
static void vmm_ref(uint64_t handle, uint64_t map_ptr, uint64_t map_size)
{
    pthread_mutex_lock(&gs__shim.mu);
    struct gs_rec *v = gs_ledger_get(&gs__shim.ledger, GS_REC_VMM, handle);
    if (v) {
        v->aux++;
        struct gs_rec m = {map_ptr, map_size, 0, handle, -1, GS_REC_MAP};
        if (map_ptr)
            gs_ledger_put(&gs__shim.ledger, &m);
    }
    pthread_mutex_unlock(&gs__shim.mu);
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    gs__init();
    CUresult rc = GS_CALL(cuMemRetainAllocationHandle, (handle, addr));
    if (rc == CUDA_SUCCESS && handle)
        vmm_ref(*handle, 0, 0);
    return rc;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags)
{
    gs__init();
    CUresult rc = GS_CALL(cuMemMap, (ptr, size, offset, handle, flags));
    if (rc == CUDA_SUCCESS)
        vmm_ref(handle, ptr, size);
    return rc;
}

struct unmap {
    uint64_t lo, hi;
    int taken; /* take one mapping per pass: its handle is looked up before the next */
    struct gs_rec map;
};

static int in_range(void *ud, const struct gs_rec *r)
{
    struct unmap *u = ud;
    if (u->taken || r->kind != GS_REC_MAP || r->key < u->lo || r->key >= u->hi)
        return 0;
    u->taken = 1;
    return 1;
}

static void keep_map(void *ud, const struct gs_rec *r)
{
    ((struct unmap *)ud)->map = *r;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    gs__init();
    CUresult rc = GS_CALL(cuMemUnmap, (ptr, size));
    struct unmap u = {ptr, ptr + size, 0, {0}};
    for (int n = rc == CUDA_SUCCESS; n > 0;) {
        struct gs_rec r;
        int last = 0;
        u.taken = 0;
        pthread_mutex_lock(&gs__shim.mu);
        n = gs_ledger_drain(&gs__shim.ledger, in_range, keep_map, &u);
        if (n > 0)
            last = vmm_unref(u.map.aux, &r);
        pthread_mutex_unlock(&gs__shim.mu);
        if (last)
            gs__give_back(&r);
    }
    return rc;
}

/* Arrays: bytes per element of the formats whose size is exact; every other format (the packed,
 * normalised, block-compressed and YUV ones) is charged 8 bytes per element, the largest any of
 * them takes, so an array is never charged less than its elements (the driver's padding is not
 * counted). */
static uint64_t elem_bytes(CUarray_format f, unsigned channels)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        return channels;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        return 2ull * channels;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
        return 4ull * channels;
    default:
        return 8;
    }
}

static uint64_t one(uint64_t x)
{
    return x ? x : 1;
}

static uint64_t array_bytes(uint64_t w, uint64_t h, uint64_t d, CUarray_format f, unsigned ch)
{
    return gs__mul_sat(gs__mul_sat(gs__mul_sat(one(w), one(h)), one(d)), elem_bytes(f, ch));
}

/* A mipmapped array: every level, each half the one before in each dimension (layered and cubemap
 * arrays keep their layer count). */
static uint64_t mipmap_bytes(const CUDA_ARRAY3D_DESCRIPTOR *a, unsigned levels)
{
    uint64_t sum = 0;
    int layered = (a->Flags & 0x05) != 0; /* CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP */
    for (unsigned l = 0; l < levels && l < 64; l++) {
        uint64_t b = array_bytes(a->Width >> l, a->Height >> l, layered ? a->Depth : a->Depth >> l,
                                 a->Format, a->NumChannels);
        sum = sum > UINT64_MAX - b ? UINT64_MAX : sum + b;
    }
    return sum;
}

static CUresult handle_done(CUresult rc, const struct gs_charge *c, int kind, uint64_t key)
{
    if (rc != CUDA_SUCCESS || !c->counted) {
        gs__uncharge(c);
        return rc;
    }
    if (gs__record(c, kind, key, gs__current_ctx(), 0) == 0)
        return CUDA_SUCCESS;
    if (kind == GS_REC_MIPMAP)
        GS_CALL(cuMipmappedArrayDestroy, ((CUmipmappedArray)(uintptr_t)key));
    else
        GS_CALL(cuArrayDestroy, ((CUarray)(uintptr_t)key));
    gs__uncharge(c);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

/* An array of @bytes made by @name into *pHandle, recorded as @kind. */
#define ARRAY_CREATE(name, params, args, kind, bytes)                                              \
    CUresult name params                                                                           \
    {                                                                                              \
        struct gs_charge c;                                                                        \
        gs__init();                                                                                \
        CUresult rc = gs__charge_current(a ? bytes : 0, &c);                                       \
        if (rc != CUDA_SUCCESS)                                                                    \
            return rc;                                                                             \
        rc = GS_CALL(name, args);                                                                  \
        return handle_done(rc, &c, kind, rc == CUDA_SUCCESS ? key_of(*pHandle) : 0);               \
    }

/* Sparse and deferred-mapping arrays hold no memory of their own: what is mapped into them comes
 * from cuMemCreate, charged there. */
#define UNBACKED(a) ((a->Flags & (CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING)) != 0)
#define FLAT(a)     array_bytes(a->Width, a->Height, 1, a->Format, a->NumChannels)
#define DEEP(a)                                                                                    \
    (UNBACKED(a) ? 0 : array_bytes(a->Width, a->Height, a->Depth, a->Format, a->NumChannels))

ARRAY_CREATE(cuArrayCreate, (CUarray * pHandle, const CUDA_ARRAY_DESCRIPTOR_v1 *a), (pHandle, a),
             GS_REC_ARRAY, FLAT(a))
ARRAY_CREATE(cuArrayCreate_v2, (CUarray * pHandle, const CUDA_ARRAY_DESCRIPTOR *a), (pHandle, a),
             GS_REC_ARRAY, FLAT(a))
ARRAY_CREATE(cuArray3DCreate, (CUarray * pHandle, const CUDA_ARRAY3D_DESCRIPTOR_v1 *a),
             (pHandle, a), GS_REC_ARRAY, DEEP(a))
ARRAY_CREATE(cuArray3DCreate_v2, (CUarray * pHandle, const CUDA_ARRAY3D_DESCRIPTOR *a),
             (pHandle, a), GS_REC_ARRAY, DEEP(a))
ARRAY_CREATE(cuMipmappedArrayCreate,
             (CUmipmappedArray * pHandle, const CUDA_ARRAY3D_DESCRIPTOR *a,
              unsigned int numMipmapLevels),
             (pHandle, a, numMipmapLevels), GS_REC_MIPMAP,
             UNBACKED(a) ? 0 : mipmap_bytes(a, numMipmapLevels))
