/* Doubling growth of arrays (include/gpusched/grow.h). */
#include "gpusched/grow.h"

#include <stdint.h>
#include <stdlib.h>

size_t gs_grow_cap(size_t cap, size_t need, size_t first)
{
    if (!cap)
        cap = first ? first : 1;
    while (cap < need) {
        if (cap > SIZE_MAX / 2)
            return 0;
        cap *= 2;
    }
    return cap;
}

void *gs_grow(void *arr, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return arr;
    size_t c = gs_grow_cap(*cap, need, first);
    if (!c || c > SIZE_MAX / size)
        return NULL;
    void *a = realloc(arr, c * size);
    if (a)
        *cap = c;
    return a;
}
