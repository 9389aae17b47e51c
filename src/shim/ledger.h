/*
 * libgpushare — what this process holds on the GPU, object by object: a device pointer, an array,
 * a VMM handle and its mappings, a context. The free paths name only the object (cuMemFree gets a
 * pointer), so the ledger says how many bytes to give back and on which device.
 *
 * Invariants: one record per (kind, key); a record's bytes are what was reserved in the region for
 * it. Not thread-safe: the caller serialises. Capped at GS_LEDGER_MAX records (a put beyond it
 * fails with -ENOMEM, which the caller turns into CUDA_ERROR_OUT_OF_MEMORY).
 */
#ifndef GPUSHARE_LEDGER_H
#define GPUSHARE_LEDGER_H

#include <stdint.h>

#define GS_LEDGER_MAX (1u << 24)

enum gs_rec_kind {
    GS_REC_PTR = 1, /* cuMemAlloc*, keyed by the device pointer */
    GS_REC_ARRAY,   /* cuArrayCreate / cuArray3DCreate, keyed by the CUarray */
    GS_REC_MIPMAP,  /* cuMipmappedArrayCreate, keyed by the CUmipmappedArray */
    GS_REC_VMM,     /* cuMemCreate, keyed by the handle; aux: references (handle + mappings) */
    GS_REC_MAP,     /* cuMemMap, keyed by the address; aux: the handle; bytes: mapped size */
    GS_REC_CTX,     /* a context the process created, keyed by the CUcontext */
    GS_REC_PRIMARY, /* a device's primary context, keyed by the ordinal; aux: retain count */
    GS_REC_LIMIT,   /* a context's malloc heap or printf FIFO, keyed by the CUcontext | the
                       CUlimit; aux: its size when first seen */
    GS_REC_ASYNC,   /* a stream-ordered allocation, keyed by the device pointer; aux: its pool;
                       bytes: its size, counted in the pool's live allocations (not the region) */
};

struct gs_rec {
    uint64_t key;
    uint64_t bytes; /* reserved in the region (GS_REC_MAP: the size of the mapping) */
    uint64_t ctx;   /* the context current when the object was made (0: none) */
    uint64_t aux;
    int32_t dev; /* region device index, -1 when not counted */
    uint8_t kind;
};

struct gs_ledger {
    struct gs_rec *slot; /* open addressing; kind 0 marks a free slot */
    uint32_t cap;        /* a power of two, or 0 */
    uint32_t n;
};

/* gs_ledger_put() - add @r. Return: 0, -EEXIST (same kind and key present), -ENOMEM. */
int gs_ledger_put(struct gs_ledger *l, const struct gs_rec *r);

/* gs_ledger_get() - the record (@kind, @key), or NULL. Valid until the next put or take. */
struct gs_rec *gs_ledger_get(struct gs_ledger *l, int kind, uint64_t key);

/* gs_ledger_take() - remove (@kind, @key), copying it to *@out. Return: 1, or 0 when absent. */
int gs_ledger_take(struct gs_ledger *l, int kind, uint64_t key, struct gs_rec *out);

/*
 * gs_ledger_drain() - remove every record for which @match(@ud, rec) is true, handing each to
 * @done(@ud, rec) after its removal (@done must not touch the ledger). Return: how many. One pass,
 * O(capacity).
 */
int gs_ledger_drain(struct gs_ledger *l, int (*match)(void *ud, const struct gs_rec *r),
                    void (*done)(void *ud, const struct gs_rec *r), void *ud);

/* gs_ledger_clear() - forget every record and free the table. */
void gs_ledger_clear(struct gs_ledger *l);

#endif
