/*
 * libgpushare — the compute limiter of one device: a token bucket on kernel launches whose refill
 * rate follows the measured SM utilisation toward the limit.
 *
 * Invariants: a launch costs GS_LIMITER_LAUNCH tokens; gs_limiter_try() is the only call on the
 * launch path and is one atomic read-modify-write (no lock, no system call). Once per period
 * (GS_LIMITER_TICK_US in the library) one thread calls gs_limiter_sample() with a new measurement
 * of the utilisation, gs_limiter_tick() when there is none, or gs_limiter_refill() when nothing
 * can be measured; none of them takes a clock, so tests drive them with simulated time and
 * simulated measurements. The rate is in tokens per tick; it falls when the utilisation is above
 * the limit and rises only when launches actually waited for tokens (an idle tenant does not bank
 * a burst). The bucket holds at most one tick's worth (never less than one launch).
 *
 * NVML samples utilisation once per sample period, 1/6 s to 1 s by product (NVML's
 * nvmlDeviceGetUtilizationRates documentation), so a measurement comes every one to ten ticks. It
 * stands until the next, and is corrected for once over the ticks it stands for (a share each
 * tick, by the spacing of the last two): corrected for in full every tick, it overshoots.
 */
#ifndef GPUSHARE_LIMITER_H
#define GPUSHARE_LIMITER_H

#include <stdatomic.h>
#include <stdint.h>

#define GS_LIMITER_LAUNCH  1000             /* tokens per launch */
#define GS_LIMITER_INITIAL (10 * 1000)      /* starting rate: 10 launches per tick */
#define GS_LIMITER_MIN     1                /* tokens per tick */
#define GS_LIMITER_MAX     (1000000 * 1000) /* a million launches per tick */
#define GS_LIMITER_TICK_US 100000

struct gs_limiter {
    _Atomic int64_t tokens;
    _Atomic int starved; /* a launch found the bucket empty since the last tick */
    int64_t rate;        /* tokens per tick */
    unsigned target;     /* percent, 1 .. 99 */
    unsigned smooth;     /* utilisation averaged over recent ticks, percent x 16 */
    unsigned held;       /* the latest measurement, percent */
    unsigned since;      /* ticks since it came; 0: none has come */
    unsigned every;      /* ticks between the last two measurements, >= 1 */
};

/* gs_limiter_init() - a full bucket at the starting rate, holding utilisation to @target_pct. */
void gs_limiter_init(struct gs_limiter *l, unsigned target_pct);

/* gs_limiter_try() - take one launch's tokens. Return: 1 (launch), or 0 (wait and try again). */
static inline int gs_limiter_try(struct gs_limiter *l)
{
    if (atomic_fetch_sub_explicit(&l->tokens, GS_LIMITER_LAUNCH, memory_order_relaxed) >=
        GS_LIMITER_LAUNCH)
        return 1;
    atomic_fetch_add_explicit(&l->tokens, GS_LIMITER_LAUNCH, memory_order_relaxed);
    atomic_store_explicit(&l->starved, 1, memory_order_relaxed);
    return 0;
}

/*
 * gs_limiter_sample() - end of a period with a new measurement: @util_pct, the utilisation the
 * container's processes achieved on the device, 0 .. 100 or more when summed. Adjusts the rate
 * toward the limit and refills.
 */
void gs_limiter_sample(struct gs_limiter *l, unsigned util_pct);

/*
 * gs_limiter_tick() - end of a period without one: adjusts by the standing measurement, or before
 * the first holds the starting rate; refills.
 */
void gs_limiter_tick(struct gs_limiter *l);

/* gs_limiter_refill() - end of a period when nothing can be measured: refills at the rate as it
 * is, without adjusting it. */
void gs_limiter_refill(struct gs_limiter *l);

#endif
