/*
 * gpusched — the deterministic random source of every seeded choice.
 *
 * xoshiro256** (Blackman and Vigna, 2018) seeded through splitmix64, so a seed gives the same
 * sequence on every platform and build. Not for cryptography.
 * Invariants: the state is a caller-owned value; never all zero after gs_rng_seed().
 */
#ifndef GPUSCHED_RNG_H
#define GPUSCHED_RNG_H

#include <stddef.h>
#include <stdint.h>

struct gs_rng {
    uint64_t s[4];
};

/* gs_rng_seed() - initialise @r from @seed (any value). */
void gs_rng_seed(struct gs_rng *r, uint64_t seed);

/* gs_rng_next() - the next 64 random bits. */
uint64_t gs_rng_next(struct gs_rng *r);

/* gs_rng_below() - a uniform integer in [0, @n); @n must be > 0 (returns 0 when @n == 0). */
uint64_t gs_rng_below(struct gs_rng *r, uint64_t n);

/* gs_rng_shuffle() - permute @v[0..@n) uniformly in place (Fisher-Yates). */
void gs_rng_shuffle(struct gs_rng *r, uint32_t *v, size_t n);

#endif
