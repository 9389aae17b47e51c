/*
 * gpusched — growing arrays by doubling.
 *
 * Invariants: an array grown here holds *cap elements of one size; its room only grows, by
 * doubling (from a first room the caller picks), so n appends cost O(n) copies in all. The array
 * and its room change together or not at all: on failure the caller still owns the old array,
 * whole, and *cap still says its room. Depends on nothing but libc.
 */
#ifndef GPUSCHED_GROW_H
#define GPUSCHED_GROW_H

#include <stddef.h>

/*
 * gs_grow_cap() - the room for at least @need elements: @cap doubled as often as it takes,
 * starting from @first (>= 1) when @cap is 0; @cap itself when it is already enough.
 * Return: the room; 0 when it would not fit in size_t.
 */
size_t gs_grow_cap(size_t cap, size_t need, size_t first);

/*
 * gs_grow() - make room for @need (>= 1) elements of @size bytes (>= 1) in @arr (NULL when *@cap is
 * 0), whose room is *@cap elements: nothing when it has it, else realloc() to gs_grow_cap().
 * Return: the array, moved or not, with *@cap its new room; NULL out of memory or when the bytes
 * would not fit in size_t (then @arr and *@cap are unchanged and @arr is still the caller's).
 */
void *gs_grow(void *arr, size_t *cap, size_t need, size_t size, size_t first);

#endif
