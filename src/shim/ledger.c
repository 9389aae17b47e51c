/*
 * libgpushare — the process's record of GPU objects: an open-addressing hash table with linear
 * probing and backward-shift deletion (no tombstones, so a long-running process that allocates
 * and frees millions of times keeps short probes).
 */
#include "ledger.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash(int kind, uint64_t key)
{
    uint64_t h = (key ^ ((uint64_t)kind << 59)) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32);
}

static uint32_t find(const struct gs_ledger *l, int kind, uint64_t key)
{
    uint32_t mask = l->cap - 1;
    for (uint32_t i = hash(kind, key) & mask;; i = (i + 1) & mask) {
        const struct gs_rec *s = &l->slot[i];
        if (s->kind == 0 || (s->kind == kind && s->key == key))
            return i;
    }
}

static int grow(struct gs_ledger *l)
{
    uint32_t cap = l->cap ? l->cap * 2 : 64;
    if (cap > 2 * GS_LEDGER_MAX)
        return -ENOMEM;
    struct gs_rec *slot = calloc(cap, sizeof(*slot));
    if (!slot)
        return -ENOMEM;
    struct gs_ledger next = {slot, cap, 0};
    for (uint32_t i = 0; i < l->cap; i++)
        if (l->slot[i].kind != 0)
            next.slot[find(&next, l->slot[i].kind, l->slot[i].key)] = l->slot[i];
    next.n = l->n;
    free(l->slot);
    *l = next;
    return 0;
}

int gs_ledger_put(struct gs_ledger *l, const struct gs_rec *r)
{
    if (l->n >= GS_LEDGER_MAX)
        return -ENOMEM;
    if (2 * (l->n + 1) > l->cap && grow(l) < 0)
        return -ENOMEM;
    uint32_t i = find(l, r->kind, r->key);
    if (l->slot[i].kind != 0)
        return -EEXIST;
    l->slot[i] = *r;
    l->n++;
    return 0;
}

struct gs_rec *gs_ledger_get(struct gs_ledger *l, int kind, uint64_t key)
{
    if (l->cap == 0)
        return NULL;
    uint32_t i = find(l, kind, key);
    return l->slot[i].kind != 0 ? &l->slot[i] : NULL;
}

/* Remove slot @i, moving later members of its probe run back so lookups stay correct. */
static void remove_at(struct gs_ledger *l, uint32_t i)
{
    uint32_t mask = l->cap - 1;
    for (uint32_t j = (i + 1) & mask; l->slot[j].kind != 0; j = (j + 1) & mask) {
        uint32_t home = hash(l->slot[j].kind, l->slot[j].key) & mask;
        /* Move j into the hole at i unless its home lies cyclically in (i, j]. */
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            l->slot[i] = l->slot[j];
            i = j;
        }
    }
    memset(&l->slot[i], 0, sizeof(l->slot[i]));
    l->n--;
}

int gs_ledger_take(struct gs_ledger *l, int kind, uint64_t key, struct gs_rec *out)
{
    struct gs_rec *r = gs_ledger_get(l, kind, key);
    if (!r)
        return 0;
    *out = *r;
    remove_at(l, (uint32_t)(r - l->slot));
    return 1;
}

int gs_ledger_drain(struct gs_ledger *l, int (*match)(void *ud, const struct gs_rec *r),
                    void (*done)(void *ud, const struct gs_rec *r), void *ud)
{
    int n = 0;
    for (uint32_t i = 0; i < l->cap;) {
        if (l->slot[i].kind == 0 || !match(ud, &l->slot[i])) {
            i++;
            continue;
        }
        struct gs_rec r = l->slot[i];
        remove_at(l, i); /* a later record may now sit at i: look at i again */
        done(ud, &r);
        n++;
    }
    return n;
}

void gs_ledger_clear(struct gs_ledger *l)
{
    free(l->slot);
    memset(l, 0, sizeof(*l));
}
