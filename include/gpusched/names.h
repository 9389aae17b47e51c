/*
 * gpusched — interned names: each distinct string kept once and numbered in the order it was
 * first seen, found again by hash.
 *
 * Invariants: v[0..n) are the names, each a copy owned by the table, all different; a name's
 * number never changes. The table (open addressing, FNV-1a) is at most half full, so a look-up
 * costs O(1) on average. A table may be capped (max > 0): it then refuses a name past max.
 * Zero-initialised is an empty table. Not thread-safe. Depends on nothing but libc.
 */
#ifndef GPUSCHED_NAMES_H
#define GPUSCHED_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct gs_names {
    char **v;       /* the names, by number */
    size_t n, cap;  /* names, room in v */
    int32_t *table; /* numbers by hash, -1 empty; tsize slots, a power of two */
    size_t tsize;
    size_t max; /* the most names it takes, 0: no cap but INT32_MAX */
};

/*
 * gs_names_intern() - the number of @s (NUL-terminated), added as the next number when new.
 * Return: >= 0; -ENOMEM (the table is as it was); -E2BIG when new and the table holds max names.
 */
int32_t gs_names_intern(struct gs_names *t, const char *s);

/* gs_names_find() - the number of @s, or -ENOENT when it was never interned. */
int32_t gs_names_find(const struct gs_names *t, const char *s);

/* gs_names_free() - release every name and the table, leaving it empty; NULL is accepted. */
void gs_names_free(struct gs_names *t);

#endif
