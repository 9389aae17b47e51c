// Wall-clock seconds, for the bench programs.
#ifndef GPUSHARE_BENCH_NOW_H
#define GPUSHARE_BENCH_NOW_H

#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#endif
