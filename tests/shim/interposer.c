/*
 * An interposer of the driver preloaded before libgpushare (LD_PRELOAD="libinterposer.so
 * libgpushare.so"), as tracing tools are: it resolves the next cuInit and cuMemAlloc_v2 once, at
 * load, with dlsym(RTLD_NEXT) and forwards to them. Were it handed its own function it would
 * call itself: it says so and returns 999.
 */
#define _GNU_SOURCE
#include "fns.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

CUresult cuInit(unsigned int flags);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes);

static gs_pfn_cuInit next_init;
static gs_pfn_cuMemAlloc_v2 next_alloc;
static _Thread_local int depth;

static void bind(void *to, const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    memcpy(to, &p, sizeof(p));
}

__attribute__((constructor)) static void setup(void)
{
    bind(&next_init, "cuInit");
    bind(&next_alloc, "cuMemAlloc_v2");
}

static int enter(const char *name)
{
    if (++depth == 1)
        return 1;
    fprintf(stderr, "interposer: %s called itself\n", name);
    return 0;
}

__attribute__((visibility("default"))) CUresult cuInit(unsigned int flags)
{
    CUresult rc = enter("cuInit") && next_init ? next_init(flags) : 999;
    depth--;
    return rc;
}

__attribute__((visibility("default"))) CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
    CUresult rc = enter("cuMemAlloc_v2") && next_alloc ? next_alloc(p, bytes) : 999;
    depth--;
    return rc;
}
