/*
 * libgpushare — the compute limiter's controller. NVML reports utilisation a sample period late,
 * and a full correction against a late measurement oscillates, so corrections are partial and the
 * measurement is smoothed (tests/shim/test_shim_units.c simulates a card to show it settles).
 */
#include "limiter.h"

/* Corrections are a third of the relative error; the utilisation is averaged over about four
 * ticks. Chosen on the simulated card of the unit tests: with kernels of 10 us to 5 ms and the
 * measurement one to three ticks late, the utilisation settles within a point of the limit. */
#define GS_GAIN   3
#define GS_SMOOTH 4

/* NVML's longest sample period, in ticks: a measurement is never spread over more. */
#define GS_LIMITER_MAX_EVERY 10

void gs_limiter_init(struct gs_limiter *l, unsigned target_pct)
{
    atomic_store(&l->tokens, GS_LIMITER_INITIAL);
    atomic_store(&l->starved, 0);
    l->rate = GS_LIMITER_INITIAL;
    l->target = target_pct;
    l->smooth = target_pct * 16;
    l->held = 0;
    l->since = 0;
    l->every = GS_LIMITER_MAX_EVERY; /* until two measurements tell: the slowest NVML's */
}

static int64_t next_rate(int64_t r, unsigned util, unsigned target, int starved, int64_t every)
{
    if (util > target)
        r -= r * (int64_t)(util - target) / (GS_GAIN * every * (int64_t)util);
    else if (starved && util < target)
        r += r * (int64_t)(target - util) / (GS_GAIN * every * (int64_t)target) + 10;
    if (r < GS_LIMITER_MIN)
        r = GS_LIMITER_MIN;
    if (r > GS_LIMITER_MAX)
        r = GS_LIMITER_MAX;
    return r;
}

void gs_limiter_refill(struct gs_limiter *l)
{
    int64_t cap = l->rate > GS_LIMITER_LAUNCH ? l->rate : GS_LIMITER_LAUNCH;
    int64_t cur = atomic_load(&l->tokens);
    int64_t next;
    do {
        next = (cur > 0 ? cur : 0) + l->rate;
        if (next > cap)
            next = cap;
    } while (!atomic_compare_exchange_weak(&l->tokens, &cur, next));
}

static void adjust(struct gs_limiter *l)
{
    int starved = atomic_exchange(&l->starved, 0);
    l->smooth = (l->smooth * (GS_SMOOTH - 1) + l->held * 16) / GS_SMOOTH;
    l->rate = next_rate(l->rate, (l->smooth + 8) / 16, l->target, starved, l->every);
    gs_limiter_refill(l);
}

void gs_limiter_sample(struct gs_limiter *l, unsigned util_pct)
{
    if (l->since)
        l->every = l->since;
    l->since = 1;
    l->held = util_pct;
    adjust(l);
}

void gs_limiter_tick(struct gs_limiter *l)
{
    if (!l->since) {
        gs_limiter_refill(l);
        return;
    }
    if (l->since < GS_LIMITER_MAX_EVERY)
        l->since++;
    adjust(l);
}
