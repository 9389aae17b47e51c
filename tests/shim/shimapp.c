/*
 * shimapp — a CUDA application for libgpushare's tests, driven by its arguments:
 *
 *     shimapp [--via direct|dlsym|proc] STEP...
 *
 * It finds the driver's entry points the way real applications do: linked directly (direct, the
 * binary built with SHIMAPP_DIRECT links libcuda.so.1), dlopen + dlsym (dlsym), or dlopen + dlsym
 * of cuGetProcAddress_v2 and then cuGetProcAddress for everything, as the CUDA runtime does
 * (proc, the default). Each STEP is OP[:ARG...][=RC]; a step whose driver call does not return RC
 * (default 0, CUDA_SUCCESS) stops the program with status 1 and a line naming the step. Sizes take
 * K, M and G (binary) suffixes. OPs:
 *
 *   init                      cuInit(0)
 *   ctx:D  ctx1:D  ctx4:D     cuCtxCreate_v2 / cuCtxCreate / cuCtxCreate_v4 on device D
 *   destroy                   cuCtxDestroy_v2 of the last context made
 *   bgdestroy  bgrelease:D    the same in a thread of its own, while the steps after it run;
 *   join                      join waits for those threads
 *   primary:D release:D reset:D   retain (and make current) / release / reset D's primary context
 *   use:D                     make the last context made on D current
 *   alloc:S alloc1:S managed:S async:S pool:S    an allocation of S bytes by that path (pool:
 *                             from pool handle 1, device 0's default pool as the fake numbers it)
 *   pool:S:D  newpool:S:D  rawpool:S:D    S bytes on the current context's stream from device
 *                             D's default pool (cuDeviceGetDefaultMemPool), from a pool made on D
 *                             (cuMemPoolCreate), or from the fake's handle of D's pool unasked
 *   limit:L:B                 cuCtxSetLimit(L, B)
 *   sparse:W:H:D              a float 3D array with CUDA_ARRAY3D_DEFERRED_MAPPING
 *   pitch:W:H                 cuMemAllocPitch_v2; prints "pitch P"
 *   vmm:S:D  vmmearly:S:D     cuMemCreate + cuMemAddressReserve + cuMemMap of S on D; vmmearly
 *                             releases the handle at once, as the memory stays mapped
 *   retain                    cuMemRetainAllocationHandle + cuMemRelease on the last vmm
 *   array:W:H  array3d:W:H:D  mipmap:W:H:L    float arrays
 *   free  freeall             free the last object (by the path that frees it) / all of them
 *   info:FREE:TOTAL           cuMemGetInfo_v2 must say FREE and TOTAL MiB ("-": any); prints it
 *   total:D:MIB               cuDeviceTotalMem_v2 of D must say MIB
 *   launch:N  launchkinds     N cuLaunchKernel / one launch by each launch entry point
 *   launchfor:MS              a thread per context launching for MS ms; prints the launches of
 *                             each half: "launched D FIRST SECOND"
 *   cycles:N:S                N allocations of S, each freed
 *   threads:T:N:S             T threads of N allocate/free cycles; out-of-memory answers allowed
 *   fork ... exit  wait       the child runs the steps up to exit; wait fails if a child failed
 *   hold                      print "holding", wait for the end of standard input
 *   exec                      become a shell that prints "holding" and waits for the end of
 *                             standard input: an image that does not use the GPU
 *   sleep:MS
 *   sync  streamsync  eventsync    cuCtxSynchronize / cuStreamSynchronize / cuEventSynchronize
 *   threshold:S:D             device D's default pool keeps S bytes at a synchronisation ("max":
 *                             all, as PyTorch's cudaMallocAsync backend sets it)
 *   torchlike:N:S             N rounds of stream-ordered allocations and frees as a framework's
 *                             caching allocator makes them: S, S/2, free the first, S/4, free
 *                             both, a stream synchronisation every 16 rounds
 *   graph                     a new graph; galloc:S:D an allocation node of S on D in it, gfree
 *                             a node freeing the last one; gchild: the graph becomes a child
 *                             node of a new one
 *   capture  endcapture       the stream records into a graph, which endcapture makes current
 *   gexec[:F]  gexec5  gexecp:F   instantiate the graph (cuGraphInstantiateWithFlags with F,
 *                             cuGraphInstantiate, cuGraphInstantiateWithParams with F)
 *   glaunch  gupload  gdestroy    cuGraphLaunch / cuGraphUpload / cuGraphExecDestroy of it
 *   gptrfree                  cuMemFreeAsync of the last allocation node's address
 *   getproc:NAME:VER:FLAGS    print where cuGetProcAddress_v2 points: "NAME -> FILE:SYMBOL status"
 *   lookup:NAME               print where dlsym(libcuda, NAME) points
 *   vlookup:NAME:VERSION      print where dlvsym(libcuda, NAME, VERSION) points
 *   dlookup:NAME              print where dlsym(RTLD_DEFAULT, NAME) points
 *   nogpu                     print whether libcuda.so.1 is loaded
 */
#define _GNU_SOURCE
#include "fns.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef SHIMAPP_DIRECT
/* Weak: what an older driver lacks is NULL, as a program linked to a newer one finds it. */
#define GS_FN(name, base, version, variant, params) CUresult name params __attribute__((weak));
#define GS_LAUNCH(name, base, version, variant, params, args)                                      \
    GS_FN(name, base, version, variant, params)
#define GS_HELPER(name, base, version, params) GS_FN(name, base, version, p, params)
#include "fns.def"
#endif

static gs_fnptr fn[GS_NFN];
static void *cuda;
static CUresult (*set_current)(CUcontext);
static CUresult (*addr_reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
static CUresult (*addr_free)(CUdeviceptr, size_t);
static CUresult (*pool_set)(CUmemoryPool, CUmemPool_attribute, void *);
static CUresult (*graph_create)(CUgraph *, unsigned);
static CUresult (*graph_destroy)(CUgraph);
static CUresult (*add_empty)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t);
static CUresult (*add_child)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUgraph);
static CUresult (*add_alloc)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                             CUDA_MEM_ALLOC_NODE_PARAMS *);
static CUresult (*add_free)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUdeviceptr);
static CUresult (*capture_begin)(CUstream, CUstreamCaptureMode);
static CUresult (*capture_end)(CUstream, CUgraph *);

#define CALL(name, args)                                                                           \
    (fn[GS_I_##name] ? ((gs_pfn_##name)fn[GS_I_##name])args : CUDA_ERROR_NOT_FOUND)

static const struct {
    const char *name, *base;
    int version, ptsz;
} entry[GS_NFN] = {
#define GS_FN(name, base, version, variant, params) {#name, #base, version, sizeof(#variant) > 2},
#define GS_LAUNCH(name, base, version, variant, params, args)                                      \
    GS_FN(name, base, version, variant, params)
#define GS_HELPER(name, base, version, params) GS_FN(name, base, version, p, params)
#include "fns.def"
};

static void *sym(void *h, const char *name)
{
    return dlsym(h, name);
}

static void bind(void *slot, void *p)
{
    memcpy(slot, &p, sizeof(p));
}

static void resolve(const char *via)
{
    cuda = dlopen("libcuda.so.1", RTLD_NOW);
    if (!cuda) {
        fprintf(stderr, "shimapp: %s\n", dlerror());
        exit(2);
    }
    bind(&set_current, sym(cuda, "cuCtxSetCurrent"));
    bind(&addr_reserve, sym(cuda, "cuMemAddressReserve"));
    bind(&addr_free, sym(cuda, "cuMemAddressFree"));
    bind(&pool_set, sym(cuda, "cuMemPoolSetAttribute"));
    bind(&graph_create, sym(cuda, "cuGraphCreate"));
    bind(&graph_destroy, sym(cuda, "cuGraphDestroy"));
    bind(&add_empty, sym(cuda, "cuGraphAddEmptyNode"));
    bind(&add_child, sym(cuda, "cuGraphAddChildGraphNode"));
    bind(&add_alloc, sym(cuda, "cuGraphAddMemAllocNode"));
    bind(&add_free, sym(cuda, "cuGraphAddMemFreeNode"));
    bind(&capture_begin, sym(cuda, "cuStreamBeginCapture_v2"));
    bind(&capture_end, sym(cuda, "cuStreamEndCapture"));
    if (strcmp(via, "direct") == 0) {
#ifdef SHIMAPP_DIRECT
#define GS_FN(name, base, version, variant, params) fn[GS_I_##name] = (gs_fnptr)name;
#define GS_LAUNCH(name, base, version, variant, params, args)                                      \
    GS_FN(name, base, version, variant, params)
#define GS_HELPER(name, base, version, params) GS_FN(name, base, version, p, params)
#include "fns.def"
        return;
#else
        fprintf(stderr, "shimapp: this build does not link libcuda\n");
        exit(2);
#endif
    }
    gs_pfn_cuGetProcAddress_v2 get = NULL;
    if (strcmp(via, "proc") == 0)
        bind(&get, sym(cuda, "cuGetProcAddress_v2"));
    for (int i = 0; i < GS_NFN; i++) {
        void *p = NULL;
        if (get)
            get(entry[i].base, &p, entry[i].version,
                entry[i].ptsz ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0, NULL);
        else
            p = sym(cuda, entry[i].name);
        bind(&fn[i], p);
    }
}

static uint64_t size_arg(const char *s)
{
    char *end;
    uint64_t v = strtoull(s, &end, 10);
    switch (*end) {
    case 'K':
        return v << 10;
    case 'M':
        return v << 20;
    case 'G':
        return v << 30;
    default:
        return v;
    }
}

enum { O_PTR = 1, O_PTR1, O_ASYNC, O_VMM, O_ARRAY, O_MIPMAP };

struct obj {
    int kind;
    uint64_t ptr, size, handle;
    int handle_held;
};

static struct obj objs[4096];
static int nobj;
static CUcontext ctxs[64];
static int ctx_dev[64], nctx;

static CUresult push(int kind, uint64_t ptr, uint64_t size, uint64_t handle, int held)
{
    if (nobj == 4096)
        return CUDA_ERROR_OUT_OF_MEMORY;
    objs[nobj++] = (struct obj){kind, ptr, size, handle, held};
    return CUDA_SUCCESS;
}

static CUresult free_obj(struct obj *o)
{
    switch (o->kind) {
    case O_PTR:
        return CALL(cuMemFree_v2, (o->ptr));
    case O_PTR1:
        return CALL(cuMemFree, ((CUdeviceptr_v1)o->ptr));
    case O_ASYNC:
        return CALL(cuMemFreeAsync, (o->ptr, NULL));
    case O_ARRAY:
        return CALL(cuArrayDestroy, ((CUarray)(uintptr_t)o->ptr));
    case O_MIPMAP:
        return CALL(cuMipmappedArrayDestroy, ((CUmipmappedArray)(uintptr_t)o->ptr));
    default: {
        CUresult rc = CALL(cuMemUnmap, (o->ptr, o->size));
        if (rc == CUDA_SUCCESS && o->handle_held)
            rc = CALL(cuMemRelease, (o->handle));
        if (rc == CUDA_SUCCESS)
            rc = addr_free(o->ptr, o->size);
        return rc;
    }
    }
}

static CUresult vmm(uint64_t size, int dev, int early)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = 1; /* CU_MEM_ALLOCATION_TYPE_PINNED */
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    CUresult rc = CALL(cuMemCreate, (&h, size, &prop, 0));
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = addr_reserve(&va, size, 0, 0, 0)) != CUDA_SUCCESS ||
        (rc = CALL(cuMemMap, (va, size, 0, h, 0))) != CUDA_SUCCESS)
        return rc;
    if (early && (rc = CALL(cuMemRelease, (h))) != CUDA_SUCCESS)
        return rc;
    return push(O_VMM, va, size, h, !early);
}

static CUresult retain_last(void)
{
    CUmemGenericAllocationHandle h;
    if (nobj == 0 || objs[nobj - 1].kind != O_VMM)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CALL(cuMemRetainAllocationHandle, (&h, (void *)(uintptr_t)objs[nobj - 1].ptr));
    return rc == CUDA_SUCCESS ? CALL(cuMemRelease, (h)) : rc;
}

static CUresult arrays(const char *op, uint64_t a, uint64_t b, uint64_t c)
{
    CUDA_ARRAY3D_DESCRIPTOR d3 = {a, b,
                                  c, CU_AD_FORMAT_FLOAT,
                                  1, strcmp(op, "sparse") == 0 ? CUDA_ARRAY3D_DEFERRED_MAPPING : 0};
    CUDA_ARRAY_DESCRIPTOR d2 = {a, b, CU_AD_FORMAT_FLOAT, 1};
    CUresult rc;
    if (strcmp(op, "mipmap") == 0) {
        CUmipmappedArray m;
        d3.Depth = 0;
        rc = CALL(cuMipmappedArrayCreate, (&m, &d3, (unsigned)c));
        return rc == CUDA_SUCCESS ? push(O_MIPMAP, (uintptr_t)m, 0, 0, 0) : rc;
    }
    CUarray arr;
    rc = strcmp(op, "array") == 0 ? CALL(cuArrayCreate_v2, (&arr, &d2))
                                  : CALL(cuArray3DCreate_v2, (&arr, &d3));
    return rc == CUDA_SUCCESS ? push(O_ARRAY, (uintptr_t)arr, 0, 0, 0) : rc;
}

/* The pool pool:S:D, newpool:S:D and rawpool:S:D allocate from. */
static CUresult pool_of(const char *op, int dev, CUmemoryPool *pool)
{
    if (strcmp(op, "rawpool") == 0) {
        *pool = (CUmemoryPool)(uintptr_t)(dev + 1);
        return CUDA_SUCCESS;
    }
    if (strcmp(op, "pool") == 0)
        return CALL(cuDeviceGetDefaultMemPool, (pool, dev));
    CUmemPoolProps props;
    memset(&props, 0, sizeof(props));
    props.allocType = 1; /* CU_MEM_ALLOCATION_TYPE_PINNED */
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = dev;
    return CALL(cuMemPoolCreate, (pool, &props));
}

static CUresult pool_alloc(const char *op, uint64_t s, int dev)
{
    CUdeviceptr p = 0;
    CUmemoryPool pool;
    CUresult rc = pool_of(op, dev, &pool);
    if (rc == CUDA_SUCCESS)
        rc = CALL(cuMemAllocFromPoolAsync, (&p, s, pool, NULL));
    return rc == CUDA_SUCCESS ? push(O_ASYNC, p, s, 0, 0) : rc;
}

static CUresult alloc(const char *op, uint64_t s)
{
    CUdeviceptr p = 0;
    CUresult rc;
    if (strcmp(op, "alloc1") == 0) {
        CUdeviceptr_v1 p1 = 0;
        rc = CALL(cuMemAlloc, (&p1, (unsigned)s));
        return rc == CUDA_SUCCESS ? push(O_PTR1, p1, s, 0, 0) : rc;
    }
    int kind = O_PTR;
    if (strcmp(op, "alloc") == 0) {
        rc = CALL(cuMemAlloc_v2, (&p, s));
    } else if (strcmp(op, "managed") == 0) {
        rc = CALL(cuMemAllocManaged, (&p, s, 1));
    } else if (strcmp(op, "async") == 0) {
        rc = CALL(cuMemAllocAsync, (&p, s, NULL));
        kind = O_ASYNC;
    } else {
        rc = CALL(cuMemAllocFromPoolAsync, (&p, s, (CUmemoryPool)(uintptr_t)1, NULL));
        kind = O_ASYNC;
    }
    return rc == CUDA_SUCCESS ? push(kind, p, s, 0, 0) : rc;
}

static CUresult pitch(uint64_t w, uint64_t h)
{
    CUdeviceptr p;
    size_t pitch;
    CUresult rc = CALL(cuMemAllocPitch_v2, (&p, &pitch, w, h, 4));
    if (rc != CUDA_SUCCESS)
        return rc;
    printf("pitch %zu\n", pitch);
    return push(O_PTR, p, pitch * h, 0, 0);
}

static CUresult make_ctx(const char *op, int dev)
{
    CUcontext c;
    CUresult rc = strcmp(op, "ctx1") == 0   ? CALL(cuCtxCreate, (&c, 0, dev))
                  : strcmp(op, "ctx4") == 0 ? CALL(cuCtxCreate_v4, (&c, NULL, 0, dev))
                                            : CALL(cuCtxCreate_v2, (&c, 0, dev));
    if (rc == CUDA_SUCCESS && nctx < 64) {
        ctx_dev[nctx] = dev;
        ctxs[nctx++] = c;
    }
    return rc;
}

static CUresult primary(int dev)
{
    CUcontext c;
    CUresult rc = CALL(cuDevicePrimaryCtxRetain, (&c, dev));
    return rc == CUDA_SUCCESS ? set_current(c) : rc;
}

static CUresult use(int dev)
{
    for (int i = nctx - 1; i >= 0; i--)
        if (ctx_dev[i] == dev)
            return set_current(ctxs[i]);
    return CUDA_ERROR_INVALID_CONTEXT;
}

/* bgdestroy / bgrelease:D: one call in a thread of its own; join waits for them all. */
struct bg {
    pthread_t t;
    CUcontext ctx; /* bgdestroy */
    int dev;       /* bgrelease */
    CUresult rc;
};

static struct bg bgs[8];
static int nbg;

static void *bg_run(void *arg)
{
    struct bg *b = arg;
    b->rc = b->ctx ? CALL(cuCtxDestroy_v2, (b->ctx)) : CALL(cuDevicePrimaryCtxRelease_v2, (b->dev));
    return NULL;
}

static CUresult bg_start(CUcontext ctx, int dev)
{
    if (nbg == 8 || (!ctx && dev < 0))
        return CUDA_ERROR_INVALID_VALUE;
    bgs[nbg] = (struct bg){0, ctx, dev, 0};
    return pthread_create(&bgs[nbg].t, NULL, bg_run, &bgs[nbg]) == 0 ? (nbg++, CUDA_SUCCESS)
                                                                     : CUDA_ERROR_INVALID_VALUE;
}

static CUresult bg_join(void)
{
    CUresult rc = CUDA_SUCCESS;
    for (; nbg > 0; nbg--) {
        pthread_join(bgs[nbg - 1].t, NULL);
        if (bgs[nbg - 1].rc != CUDA_SUCCESS)
            rc = bgs[nbg - 1].rc;
    }
    return rc;
}

static int mib_is(const char *want, uint64_t bytes)
{
    return strcmp(want, "-") == 0 || size_arg(want) << 20 == bytes;
}

static CUresult info(const char *want_free, const char *want_total, int *bad)
{
    size_t fr, t;
    CUresult rc = CALL(cuMemGetInfo_v2, (&fr, &t));
    if (rc != CUDA_SUCCESS)
        return rc;
    printf("info free=%zu total=%zu\n", fr, t);
    *bad = !mib_is(want_free, fr) || !mib_is(want_total, t);
    return rc;
}

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

struct launcher {
    CUcontext ctx;
    int dev;
    uint64_t ms, first, second;
    CUresult rc;
};

static CUresult launch_one(void)
{
    return CALL(cuLaunchKernel, (NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
}

static void *launch_loop(void *arg)
{
    struct launcher *l = arg;
    l->rc = set_current(l->ctx);
    uint64_t start = now_ms(), half = start + l->ms / 2, end = start + l->ms, t;
    while (l->rc == CUDA_SUCCESS && (t = now_ms()) < end) {
        l->rc = launch_one();
        if (t < half)
            l->first++;
        else
            l->second++;
    }
    return NULL;
}

static CUresult launch_for(uint64_t ms)
{
    struct launcher l[64];
    pthread_t t[64];
    for (int i = 0; i < nctx; i++) {
        l[i] = (struct launcher){ctxs[i], ctx_dev[i], ms, 0, 0, 0};
        pthread_create(&t[i], NULL, launch_loop, &l[i]);
    }
    CUresult rc = CUDA_SUCCESS;
    for (int i = 0; i < nctx; i++) {
        pthread_join(t[i], NULL);
        printf("launched %d %llu %llu\n", l[i].dev, (unsigned long long)l[i].first,
               (unsigned long long)l[i].second);
        if (l[i].rc != CUDA_SUCCESS)
            rc = l[i].rc;
    }
    return rc;
}

/* An executable graph of one empty node, for the launch kinds. */
static CUgraphExec empty_exec(void)
{
    CUgraph g;
    CUgraphNode n;
    CUgraphExec e = NULL;
    if (graph_create(&g, 0) != CUDA_SUCCESS)
        return NULL;
    if (add_empty(&n, g, NULL, 0) == CUDA_SUCCESS)
        CALL(cuGraphInstantiate, (&e, g, NULL, NULL, 0));
    graph_destroy(g);
    return e;
}

static CUresult launch_kinds(void)
{
    CUgraphExec e = empty_exec();
    CUresult rc[11] = {
        CALL(cuLaunchKernel, (NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL)),
        CALL(cuLaunchKernel_ptsz, (NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL)),
        CALL(cuLaunchKernelEx, (NULL, NULL, NULL, NULL)),
        CALL(cuLaunchKernelEx_ptsz, (NULL, NULL, NULL, NULL)),
        CALL(cuLaunchCooperativeKernel, (NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL)),
        CALL(cuLaunchCooperativeKernel_ptsz, (NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL)),
        CALL(cuGraphLaunch, (e, NULL)),
        CALL(cuGraphLaunch_ptsz, (e, NULL)),
        CALL(cuLaunch, (NULL)),
        CALL(cuLaunchGrid, (NULL, 1, 1)),
        CALL(cuLaunchGridAsync, (NULL, 1, 1, NULL)),
    };
    if (e)
        CALL(cuGraphExecDestroy, (e));
    for (int i = 0; i < 11; i++)
        if (rc[i] != CUDA_SUCCESS)
            return rc[i];
    return CUDA_SUCCESS;
}

struct cycler {
    uint64_t n, size, ok, oom;
    CUcontext ctx;
    CUresult rc;
};

static void *cycle_loop(void *arg)
{
    struct cycler *c = arg;
    c->rc = c->ctx ? set_current(c->ctx) : CUDA_SUCCESS;
    for (uint64_t i = 0; i < c->n && c->rc == CUDA_SUCCESS; i++) {
        CUdeviceptr p;
        CUresult rc = CALL(cuMemAlloc_v2, (&p, c->size));
        if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
            c->oom++;
            continue;
        }
        c->rc = rc == CUDA_SUCCESS ? CALL(cuMemFree_v2, (p)) : rc;
        c->ok++;
    }
    return NULL;
}

static CUresult threads(uint64_t nt, uint64_t n, uint64_t size)
{
    struct cycler c[64];
    pthread_t t[64];
    CUcontext ctx = NULL;
    CALL(cuCtxGetCurrent, (&ctx));
    if (nt > 64)
        nt = 64;
    for (uint64_t i = 0; i < nt; i++) {
        c[i] = (struct cycler){n, size, 0, 0, ctx, 0};
        pthread_create(&t[i], NULL, cycle_loop, &c[i]);
    }
    uint64_t ok = 0, oom = 0;
    CUresult rc = CUDA_SUCCESS;
    for (uint64_t i = 0; i < nt; i++) {
        pthread_join(t[i], NULL);
        ok += c[i].ok;
        oom += c[i].oom;
        if (c[i].rc != CUDA_SUCCESS)
            rc = c[i].rc;
    }
    printf("threads ok=%llu oom=%llu\n", (unsigned long long)ok, (unsigned long long)oom);
    return rc;
}

static const char *where(void *p)
{
    static char buf[256];
    Dl_info di;
    if (!p)
        return "null";
    if (!dladdr(p, &di) || !di.dli_fname) {
        snprintf(buf, sizeof(buf), "%p", p);
        return buf;
    }
    const char *file = strrchr(di.dli_fname, '/');
    snprintf(buf, sizeof(buf), "%s:%s", file ? file + 1 : di.dli_fname,
             di.dli_sname ? di.dli_sname : "?");
    return buf;
}

static CUresult getproc(const char *name, int version, int flags)
{
    gs_pfn_cuGetProcAddress_v2 get;
    bind(&get, sym(cuda, "cuGetProcAddress_v2"));
    void *p = NULL;
    CUdriverProcAddressQueryResult st = -1;
    CUresult rc = get ? get(name, &p, version, (cuuint64_t)flags, &st) : CUDA_ERROR_NOT_FOUND;
    printf("getproc %s -> %s status=%d\n", name, where(p), st);
    return rc;
}

static void hold(void)
{
    char buf[64];
    printf("holding\n");
    fflush(stdout);
    while (fread(buf, 1, sizeof(buf), stdin) > 0)
        ;
}

static int children[64], nchildren;

static int wait_children(void)
{
    int bad = 0;
    for (int i = 0; i < nchildren; i++) {
        int st;
        if (waitpid(children[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            bad = 1;
    }
    nchildren = 0;
    return bad;
}

/* The index after the `exit` that closes the `fork` at @i. */
static int skip_child(int argc, char **argv, int i)
{
    for (int depth = 1; ++i < argc;) {
        if (strcmp(argv[i], "fork") == 0)
            depth++;
        else if (strcmp(argv[i], "exit") == 0 && --depth == 0)
            break;
    }
    return i;
}

static CUresult threshold(const char *s, int dev)
{
    CUmemoryPool pool;
    cuuint64_t v = strcmp(s, "max") == 0 ? UINT64_MAX : size_arg(s);
    CUresult rc = CALL(cuDeviceGetDefaultMemPool, (&pool, dev));
    return rc == CUDA_SUCCESS ? pool_set(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v) : rc;
}

static CUresult torch_like(uint64_t rounds, uint64_t size)
{
    for (uint64_t i = 0; i < rounds; i++) {
        CUdeviceptr a, b, c;
        CUresult rc = CALL(cuMemAllocAsync, (&a, size, NULL));
        if (rc == CUDA_SUCCESS)
            rc = CALL(cuMemAllocAsync, (&b, size / 2, NULL));
        if (rc == CUDA_SUCCESS)
            rc = CALL(cuMemFreeAsync, (a, NULL));
        if (rc == CUDA_SUCCESS)
            rc = CALL(cuMemAllocAsync, (&c, size / 4, NULL));
        if (rc == CUDA_SUCCESS)
            rc = CALL(cuMemFreeAsync, (b, NULL));
        if (rc == CUDA_SUCCESS)
            rc = CALL(cuMemFreeAsync, (c, NULL));
        if (rc == CUDA_SUCCESS && i % 16 == 15)
            rc = CALL(cuStreamSynchronize, (NULL));
        if (rc != CUDA_SUCCESS) {
            printf("torchlike: round %llu: %d\n", (unsigned long long)i, rc);
            return rc;
        }
    }
    return CUDA_SUCCESS;
}

/* The graph being built, its executable graph, and the last allocation node's address. */
static CUgraph graph;
static CUgraphExec exec;
static CUdeviceptr gptr;

static CUresult graph_step(const char *op, const char *a0, const char *a1)
{
    CUgraphNode n;
    if (strcmp(op, "graph") == 0) {
        if (graph)
            graph_destroy(graph);
        return graph_create(&graph, 0);
    }
    if (strcmp(op, "galloc") == 0) {
        CUDA_MEM_ALLOC_NODE_PARAMS p;
        memset(&p, 0, sizeof(p));
        p.poolProps.allocType = 1;
        p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        p.poolProps.location.id = (int)size_arg(a1);
        p.bytesize = size_arg(a0);
        CUresult rc = add_alloc(&n, graph, NULL, 0, &p);
        gptr = p.dptr;
        return rc;
    }
    if (strcmp(op, "gfree") == 0)
        return add_free(&n, graph, NULL, 0, gptr);
    if (strcmp(op, "gchild") == 0) {
        CUgraph parent;
        CUresult rc = graph_create(&parent, 0);
        if (rc == CUDA_SUCCESS)
            rc = add_child(&n, parent, NULL, 0, graph);
        graph_destroy(graph);
        graph = parent;
        return rc;
    }
    if (strcmp(op, "capture") == 0)
        return capture_begin(NULL, 0);
    if (strcmp(op, "endcapture") == 0) {
        if (graph)
            graph_destroy(graph);
        return capture_end(NULL, &graph);
    }
    if (strcmp(op, "gexec") == 0)
        return CALL(cuGraphInstantiateWithFlags, (&exec, graph, size_arg(a0)));
    if (strcmp(op, "gexec5") == 0)
        return CALL(cuGraphInstantiate, (&exec, graph, NULL, NULL, 0));
    if (strcmp(op, "gexecp") == 0) {
        CUDA_GRAPH_INSTANTIATE_PARAMS p = {size_arg(a0), NULL, NULL, 0};
        return CALL(cuGraphInstantiateWithParams, (&exec, graph, &p));
    }
    if (strcmp(op, "glaunch") == 0)
        return CALL(cuGraphLaunch, (exec, NULL));
    if (strcmp(op, "gupload") == 0)
        return CALL(cuGraphUpload, (exec, NULL));
    if (strcmp(op, "gdestroy") == 0) { /* the executable graph and the graph */
        CUresult rc = CALL(cuGraphExecDestroy, (exec));
        graph_destroy(graph);
        graph = NULL;
        return rc;
    }
    if (strcmp(op, "gptrfree") == 0)
        return CALL(cuMemFreeAsync, (gptr, NULL));
    return -1;
}

/* Run one step; *@checked is set when the step compared results itself. */
static CUresult step(char *op, char **a, int na, int *bad)
{
#define A(i)  (na > (i) ? a[i] : "0")
#define N(i)  size_arg(A(i))
#define D(i)  ((int)N(i))
#define IS(s) (strcmp(op, s) == 0)
    if (IS("init"))
        return CALL(cuInit, (0));
    if (IS("ctx") || IS("ctx1") || IS("ctx4"))
        return make_ctx(op, D(0));
    if (IS("destroy"))
        return nctx ? CALL(cuCtxDestroy_v2, (ctxs[--nctx])) : CUDA_ERROR_INVALID_CONTEXT;
    if (IS("bgdestroy"))
        return nctx ? bg_start(ctxs[--nctx], -1) : CUDA_ERROR_INVALID_CONTEXT;
    if (IS("bgrelease"))
        return bg_start(NULL, D(0));
    if (IS("join"))
        return bg_join();
    if (IS("limit"))
        return CALL(cuCtxSetLimit, ((CUlimit)N(0), N(1)));
    if (IS("primary"))
        return primary(D(0));
    if (IS("release"))
        return CALL(cuDevicePrimaryCtxRelease_v2, (D(0)));
    if (IS("reset"))
        return CALL(cuDevicePrimaryCtxReset_v2, (D(0)));
    if (IS("use"))
        return use(D(0));
    if ((IS("pool") && na > 1) || IS("newpool") || IS("rawpool"))
        return pool_alloc(op, N(0), D(1));
    if (IS("alloc") || IS("alloc1") || IS("managed") || IS("async") || IS("pool"))
        return alloc(op, N(0));
    if (IS("pitch"))
        return pitch(N(0), N(1));
    if (IS("vmm") || IS("vmmearly"))
        return vmm(N(0), D(1), IS("vmmearly"));
    if (IS("retain"))
        return retain_last();
    if (IS("array") || IS("array3d") || IS("mipmap") || IS("sparse"))
        return arrays(op, N(0), N(1), N(2));
    if (IS("free"))
        return nobj ? free_obj(&objs[--nobj]) : CUDA_ERROR_INVALID_VALUE;
    if (IS("freeall")) {
        CUresult rc = CUDA_SUCCESS;
        while (nobj && rc == CUDA_SUCCESS)
            rc = free_obj(&objs[--nobj]);
        return rc;
    }
    if (IS("info"))
        return info(A(0), A(1), bad);
    if (IS("total")) {
        size_t t;
        CUresult rc = CALL(cuDeviceTotalMem_v2, (&t, D(0)));
        *bad = rc == CUDA_SUCCESS && !mib_is(A(1), t);
        return rc;
    }
    if (IS("launch")) {
        CUresult rc = CUDA_SUCCESS;
        for (uint64_t i = 0; i < N(0) && rc == CUDA_SUCCESS; i++)
            rc = launch_one();
        return rc;
    }
    if (IS("launchkinds"))
        return launch_kinds();
    if (IS("launchfor"))
        return launch_for(N(0));
    if (IS("cycles")) {
        struct cycler c = {N(0), N(1), 0, 0, NULL, 0};
        cycle_loop(&c);
        return c.oom ? CUDA_ERROR_OUT_OF_MEMORY : c.rc;
    }
    if (IS("threads"))
        return threads(N(0), N(1), N(2));
    if (IS("sleep")) {
        struct timespec ts = {(time_t)(N(0) / 1000), (long)(N(0) % 1000) * 1000000};
        nanosleep(&ts, NULL);
        return CUDA_SUCCESS;
    }
    if (IS("sync"))
        return CALL(cuCtxSynchronize, ());
    if (IS("streamsync"))
        return CALL(cuStreamSynchronize, (NULL));
    if (IS("eventsync"))
        return CALL(cuEventSynchronize, (NULL));
    if (IS("threshold"))
        return threshold(A(0), D(1));
    if (IS("torchlike"))
        return torch_like(N(0), N(1));
    CUresult g = graph_step(op, A(0), A(1));
    if (g != (CUresult)-1)
        return g;
    if (IS("getproc"))
        return getproc(A(0), D(1), D(2));
    if (IS("lookup")) {
        printf("lookup %s -> %s\n", A(0), where(sym(cuda, A(0))));
        return CUDA_SUCCESS;
    }
    if (IS("dlookup")) {
        printf("dlookup %s -> %s\n", A(0), where(dlsym(RTLD_DEFAULT, A(0))));
        return CUDA_SUCCESS;
    }
    if (IS("vlookup")) {
        printf("vlookup %s -> %s\n", A(0), where(dlvsym(cuda, A(0), A(1))));
        return CUDA_SUCCESS;
    }
    if (IS("nogpu")) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        printf("libcuda loaded=%d\n", h != NULL);
        return CUDA_SUCCESS;
    }
    if (IS("hold")) {
        hold();
        return CUDA_SUCCESS;
    }
    if (IS("exec")) {
        execl("/bin/sh", "sh", "-c", "echo holding; exec cat >/dev/null", (char *)NULL);
        return CUDA_ERROR_NOT_FOUND; /* no shell */
    }
    fprintf(stderr, "shimapp: unknown step %s\n", op);
    exit(2);
#undef A
#undef N
#undef D
#undef IS
}

static int run(int argc, char **argv, int i)
{
    for (; i < argc; i++) {
        if (strcmp(argv[i], "fork") == 0) {
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) {
                nchildren = 0;
                continue;
            }
            if (pid > 0 && nchildren < 64)
                children[nchildren++] = pid;
            i = skip_child(argc, argv, i);
            continue;
        }
        if (strcmp(argv[i], "exit") == 0)
            exit(wait_children());
        if (strcmp(argv[i], "wait") == 0) {
            if (wait_children())
                return 1;
            continue;
        }
        char buf[512], *a[8];
        snprintf(buf, sizeof(buf), "%s", argv[i]);
        char *eq = strchr(buf, '=');
        int want = eq ? atoi(eq + 1) : 0, na = 0, bad = 0;
        if (eq)
            *eq = '\0';
        char *op = strtok(buf, ":");
        while (na < 8 && (a[na] = strtok(NULL, ":")))
            na++;
        CUresult rc = step(op, a, na, &bad);
        if (rc != want || bad) {
            fprintf(stderr, "shimapp: step %d (%s): returned %d, expected %d%s\n", i, argv[i], rc,
                    want, bad ? ", with other values" : "");
            return 1;
        }
    }
    return wait_children();
}

int main(int argc, char **argv)
{
    int i = 1;
    const char *via = "proc";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 2 && strcmp(argv[1], "--via") == 0) {
        via = argv[2];
        i = 3;
    }
    int nogpu = 0;
    for (int j = i; j < argc; j++)
        nogpu |= strcmp(argv[j], "nogpu") == 0;
    if (!nogpu)
        resolve(via);
    return run(argc, argv, i);
}
