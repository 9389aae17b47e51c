/*
 * A D-ary heap over a growable array of one element type, generated per type and order: the
 * scheduling engine's class heaps (4-ary: a node's children share a cache line or two, and the
 * tree is half as deep) and the simulator's completion events and queue heads (binary).
 *
 * GS_HEAP_ARY(name, T, before, D), and GS_HEAP(name, T, before) for D = 2, define, static in the
 * including file:
 *   int name_push(T **v, size_t *n, size_t *cap, T e) - add @e; the array grows (realloc) as
 *       needed and stays owned by the caller. Return: 0, or -ENOMEM with nothing changed.
 *   T name_pop(T *v, size_t *n) - take the first element out (*n >= 1 required).
 *   void name_retop(T *v, size_t n, T e) - replace the first element by @e (n >= 1 required):
 *       one pass down, where a pop and a push take two.
 * before(const T *a, const T *b) is nonzero when *a must come out before *b (a strict order).
 */
#ifndef GS_HEAP_H
#define GS_HEAP_H

#include "gpusched/grow.h"

#include <errno.h>
#include <stdlib.h>

#define GS_HEAP_ARY(name, T, before, D)                                                            \
    static int name##_push(T **v, size_t *n, size_t *cap, T e)                                     \
    {                                                                                              \
        T *p = gs_grow(*v, cap, *n + 1, sizeof(*p), 64);                                           \
        if (!p)                                                                                    \
            return -ENOMEM;                                                                        \
        *v = p;                                                                                    \
        size_t i = (*n)++;                                                                         \
        while (i > 0 && before(&e, &(*v)[(i - 1) / (D)])) {                                        \
            (*v)[i] = (*v)[(i - 1) / (D)];                                                         \
            i = (i - 1) / (D);                                                                     \
        }                                                                                          \
        (*v)[i] = e;                                                                               \
        return 0;                                                                                  \
    }                                                                                              \
    static void name##_retop(T *v, size_t n, T e)                                                  \
    {                                                                                              \
        size_t i = 0;                                                                              \
        for (;;) {                                                                                 \
            size_t c = (D)*i + 1, end = c + (D) < n ? c + (D) : n;                                 \
            if (c >= n)                                                                            \
                break;                                                                             \
            for (size_t k = c + 1; k < end; k++)                                                   \
                if (before(&v[k], &v[c]))                                                          \
                    c = k;                                                                         \
            if (!before(&v[c], &e))                                                                \
                break;                                                                             \
            v[i] = v[c];                                                                           \
            i = c;                                                                                 \
        }                                                                                          \
        v[i] = e;                                                                                  \
    }                                                                                              \
    static T name##_pop(T *v, size_t *n)                                                           \
    {                                                                                              \
        T top = v[0];                                                                              \
        if (--*n)                                                                                  \
            name##_retop(v, *n, v[*n]);                                                            \
        return top;                                                                                \
    }

/* The binary heap: the children of v[i] are v[2i + 1] and v[2i + 2] (callers may rely on it). */
#define GS_HEAP(name, T, before) GS_HEAP_ARY(name, T, before, 2)

#endif
