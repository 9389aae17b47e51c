/* Interned names (include/gpusched/names.h). */
#include "gpusched/names.h"

#include "gpusched/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int rehash(struct gs_names *t)
{
    size_t size = t->tsize ? 2 * t->tsize : 64;
    int32_t *tab = malloc(size * sizeof(*tab));
    if (!tab)
        return -ENOMEM;
    memset(tab, 0xff, size * sizeof(*tab));
    for (size_t i = 0; i < t->n; i++) {
        size_t k = (size_t)hash_str(t->v[i]) & (size - 1);
        while (tab[k] >= 0)
            k = (k + 1) & (size - 1);
        tab[k] = (int32_t)i;
    }
    free(t->table);
    t->table = tab;
    t->tsize = size;
    return 0;
}

/* slot() - where @s is in the table, or the empty slot where it would go. */
static size_t slot(const struct gs_names *t, const char *s)
{
    size_t k = (size_t)hash_str(s) & (t->tsize - 1);
    while (t->table[k] >= 0 && strcmp(t->v[t->table[k]], s) != 0)
        k = (k + 1) & (t->tsize - 1);
    return k;
}

int32_t gs_names_find(const struct gs_names *t, const char *s)
{
    return t->tsize && t->table[slot(t, s)] >= 0 ? t->table[slot(t, s)] : -ENOENT;
}

int32_t gs_names_intern(struct gs_names *t, const char *s)
{
    int32_t found = gs_names_find(t, s);
    if (found >= 0)
        return found;
    if (t->n == (t->max ? t->max : INT32_MAX))
        return -E2BIG;
    if (2 * (t->n + 1) > t->tsize && rehash(t) < 0)
        return -ENOMEM;
    char **v = gs_grow(t->v, &t->cap, t->n + 1, sizeof(*v), 64);
    if (!v)
        return -ENOMEM;
    t->v = v;
    if (!(t->v[t->n] = strdup(s)))
        return -ENOMEM;
    t->table[slot(t, s)] = (int32_t)t->n;
    return (int32_t)t->n++;
}

void gs_names_free(struct gs_names *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
    free(t->table);
    size_t max = t->max;
    memset(t, 0, sizeof(*t));
    t->max = max;
}
