/*
 * Two small libraries for the RTLD_NEXT test, built from this file: libprobe_a (PROBE_VALUE 1,
 * with probe_next) and libprobe_b (PROBE_VALUE 2). Both define probe_value; from inside
 * libprobe_a, dlsym(RTLD_NEXT, "probe_value") must find libprobe_b's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

int probe_value(void);
int probe_value(void)
{
    return PROBE_VALUE;
}

#ifndef PROBE_NEXT
/* Referenced by rtldnext so that the linker keeps libprobe_b among its libraries. */
int probe_b_marker(void);
int probe_b_marker(void)
{
    return 0;
}
#else
int probe_next(void);
int probe_next(void)
{
    int (*f)(void);
    void *p = dlsym(RTLD_NEXT, "probe_value");
    if (!p)
        return -1;
    memcpy(&f, &p, sizeof(f));
    return f();
}
#endif
