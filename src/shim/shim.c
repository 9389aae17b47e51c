/*
 * libgpushare — loading: the environment, the real driver, the two ways applications find driver
 * entry points (dlsym and cuGetProcAddress), the device table and fork.
 */
#define _GNU_SOURCE
#include "shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct gs_shim gs__shim = {.mu = PTHREAD_MUTEX_INITIALIZER,
                           .life = PTHREAD_MUTEX_INITIALIZER,
                           .cache_mu = PTHREAD_MUTEX_INITIALIZER,
                           .slot = -1};
_Atomic int gs__inited;

/* Set while this thread loads the driver: its dlsym calls pass straight through. */
static _Thread_local int in_init;

struct fn_info {
    const char *name;
    const char *base;
    int version;
    int ptsz;
    gs_fnptr wrapper; /* NULL for helpers */
};

static const struct fn_info fns[GS_NFN] = {
#define GS_FN(name, base, version, variant, params)                                                \
    {#name, #base, version, sizeof(#variant) > 2, (gs_fnptr)name},
#define GS_LAUNCH(name, base, version, variant, params, args)                                      \
    GS_FN(name, base, version, variant, params)
#define GS_HELPER(name, base, version, params) {#name, #base, version, 0, NULL},
#include "fns.def"
};

/* ISO C has no cast between object and function pointers; dlsym(3) needs one. */
static gs_fnptr to_fn(void *p)
{
    gs_fnptr f;
    memcpy(&f, &p, sizeof(f));
    return f;
}

static void *to_ptr(gs_fnptr f)
{
    void *p;
    memcpy(&p, &f, sizeof(p));
    return p;
}

void gs__say(const char *fmt, ...)
{
    char buf[512];
    int n = snprintf(buf, sizeof(buf), "libgpushare: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(buf) - 2)
        n = (int)sizeof(buf) - 2;
    buf[n++] = '\n';
    ssize_t w = write(2, buf, (size_t)n); /* one write: lines of threads do not interleave */
    (void)w;
}

CUresult gs__missing(int i)
{
    if (!atomic_exchange(&gs__shim.missing_said[i], 1))
        gs__say("the CUDA driver has no %s; calls to it return CUDA_ERROR_NOT_FOUND", fns[i].name);
    return CUDA_ERROR_NOT_FOUND;
}

typedef void *(*dlsym_fn)(void *, const char *);

/* glibc's own dlsym: the versions x86-64 and aarch64 glibc have exported it under. */
static dlsym_fn real_dlsym(void)
{
    static _Atomic(dlsym_fn) fn;
    dlsym_fn f = atomic_load_explicit(&fn, memory_order_relaxed);
    static const char *const ver[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
    for (size_t i = 0; !f && i < sizeof(ver) / sizeof(ver[0]); i++) {
        void *p = dlvsym(RTLD_NEXT, "dlsym", ver[i]);
        memcpy(&f, &p, sizeof(f));
    }
    atomic_store_explicit(&fn, f, memory_order_relaxed);
    return f;
}

/* What the dynamic loader gives: the driver's entry points, and NVML when a compute limit needs
 * it. Found before the library takes any lock of its own (gs__init_slow). */
struct loaded {
    void *cuda;
    gs_fnptr real[GS_NFN];
    char cuda_err[200];
    int nvml; /* 1: loaded, 0: not needed, -1: failed, why in nvml_err */
    char nvml_err[256];
};

static void load_driver(struct loaded *l)
{
    /* Already loaded when the application links it; dlopen then just takes a reference. */
    l->cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!l->cuda) {
        snprintf(l->cuda_err, sizeof(l->cuda_err), "%s", dlerror());
        return;
    }
    for (int i = 0; i < GS_NFN; i++)
        l->real[i] = to_fn(real_dlsym()(l->cuda, fns[i].name));
}

/* The limits cannot be applied: say why, and refuse rather than run unlimited. */
static void refuse_all(const char *why)
{
    gs__say("%s; cuInit fails with CUDA_ERROR_NOT_PERMITTED and every allocation is refused", why);
    gs__shim.broken = 1;
}

/* Whether @l holds a compute limit that binds (below 100 %). */
static int binds(const struct gs_shim_list *l)
{
    int any = l->has_default && l->dflt < 100;
    for (int i = 0; i < l->nentries; i++)
        any |= l->entry[i].value < 100;
    return any;
}

/* Whether the environment sets a compute limit that binds, which needs NVML. */
static int wants_nvml(void)
{
    struct gs_shim_env e;
    char err[GS_SHIM_ERR_MAX];
    return gs_shim_env_parse(NULL, getenv(GS_GPUSHARE_ENV_CORES_PERCENT), NULL, NULL, &e, err) ==
               0 &&
           binds(&e.cores_pct);
}

static void read_env(const struct loaded *l)
{
    struct gs_shim *s = &gs__shim;
    char err[GS_SHIM_ERR_MAX], mine[GS_SHIM_REGION_MAX + 1];
    const char *mem = getenv(GS_GPUSHARE_ENV_MEMORY_MIB);
    const char *cores = getenv(GS_GPUSHARE_ENV_CORES_PERCENT);
    const char *region = getenv(GS_GPUSHARE_ENV_REGION);
    if (!region) { /* one user's region is closed to the others: each user has one */
        snprintf(mine, sizeof(mine), "%s-%u", GS_GPUSHARE_DEFAULT_REGION, (unsigned)geteuid());
        region = mine;
    }
    if (gs_shim_env_parse(mem, cores, getenv(GS_GPUSHARE_ENV_CONTEXT_MIB), region, &s->env, err) <
        0) {
        refuse_all(err);
        return;
    }
    s->counting = s->env.memory_mib.present;
    s->limiting = binds(&s->env.cores_pct);
    if (!s->counting && !s->limiting)
        return;
    if (gs_region_open(s->env.region, &s->region, err) < 0) {
        refuse_all(err);
        return;
    }
    if (s->limiting && l->nvml < 0) {
        gs__say("%s", l->nvml_err); /* each limited device repeats it */
        s->limiting = 0;
    }
}

static void fork_prepare(void)
{
    pthread_mutex_lock(&gs__shim.life);
    pthread_mutex_lock(&gs__shim.cache_mu);
    pthread_mutex_lock(&gs__shim.mu);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&gs__shim.mu);
    pthread_mutex_unlock(&gs__shim.cache_mu);
    pthread_mutex_unlock(&gs__shim.life);
}

/* The child holds no allocation, context or slot of its parent's. */
static void fork_child(void)
{
    struct gs_shim *s = &gs__shim;
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_unlock(&s->cache_mu);
    pthread_mutex_unlock(&s->life);
    gs_ledger_clear(&s->ledger);
    gs__fork_child_pool();
    gs__fork_child_graph();
    if (s->region) /* the parent's slot stays the parent's while the parent lives */
        gs_region_forget(s->region);
    s->slot = -1;
    s->host_pid = 0;
    atomic_fetch_add(&s->ctx_gen, 1);
    gs__fork_child_launch();
}

static void install(const struct loaded *l)
{
    gs__shim.cuda = l->cuda;
    memcpy(gs__shim.real, l->real, sizeof(l->real));
    if (!l->cuda)
        gs__say("cannot load libcuda.so.1 (%s); every CUDA call returns CUDA_ERROR_NOT_FOUND",
                l->cuda_err);
    read_env(l);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Every call that takes the dynamic loader's lock (dlopen, dlsym, NVML's initialisation) is made
 * before init_mu is taken, never under it: a thread inside the loader (a library's constructor
 * calling cuInit while another thread of the process makes its first CUDA call) must never wait
 * for a thread that waits for the loader. Threads that race here each load (dlopen counts
 * references); the first to take init_mu installs what it found. */
void gs__init_slow(void)
{
    static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
    struct loaded l = {0};
    in_init = 1;
    load_driver(&l);
    if (wants_nvml())
        l.nvml = gs__nvml_load(l.nvml_err) < 0 ? -1 : 1;
    in_init = 0;
    pthread_mutex_lock(&init_mu);
    if (!atomic_load_explicit(&gs__inited, memory_order_relaxed)) {
        install(&l);
        atomic_store_explicit(&gs__inited, 1, memory_order_release);
    }
    pthread_mutex_unlock(&init_mu);
}

static int query_uuid(int ordinal, unsigned char uuid[16])
{
    CUuuid u;
    CUresult rc = gs__shim.real[GS_I_cuDeviceGetUuid_v2]
                      ? GS_CALL(cuDeviceGetUuid_v2, (&u, ordinal))
                      : GS_CALL(cuDeviceGetUuid, (&u, ordinal));
    if (rc != CUDA_SUCCESS)
        return -1;
    memcpy(uuid, u.bytes, 16);
    return 0;
}

static void refuse(struct gs_shim_dev *d, const char *uuid, const char *why)
{
    d->refused = 1;
    d->limit_bytes = 0;
    gs__say("%s: %s; allocations and contexts on it are refused", uuid, why);
}

/* The device's limits from the environment; NULL when it may be used, else why it is refused. */
static const char *set_limits(struct gs_shim_dev *d)
{
    struct gs_shim *s = &gs__shim;
    uint64_t v;
    d->limit_bytes = UINT64_MAX;
    d->cores = 100;
    d->regdev = -1;
    if (s->counting && !gs_shim_list_lookup(&s->env.memory_mib, d->uuid, &v))
        return "not named in " GS_GPUSHARE_ENV_MEMORY_MIB;
    if (s->counting)
        d->limit_bytes = v << 20;
    if (s->env.cores_pct.present && !gs_shim_list_lookup(&s->env.cores_pct, d->uuid, &v))
        return "not named in " GS_GPUSHARE_ENV_CORES_PERCENT;
    if (s->env.cores_pct.present)
        d->cores = (unsigned)v;
    if (s->region) {
        d->regdev = gs_region_device(s->region, d->uuid);
        if (d->regdev < 0)
            return "the region's device table is full";
    }
    return NULL;
}

static void set_limiter(struct gs_shim_dev *d, const char *name)
{
    if (d->cores >= 100)
        return;
    gs_limiter_init(&d->lim, d->cores);
    d->nvml = gs__shim.limiting ? gs__nvml_device(d->uuid) : NULL;
    if (d->nvml)
        atomic_store(&d->lim_on, 1);
    else
        gs__say("%s: the compute limit of %u %% is not enforced: NVML cannot measure it", name,
                d->cores);
}

struct gs_shim_dev *gs__dev(int ordinal)
{
    static struct gs_shim_dev beyond = {.ready = 1, .refused = 1, .regdev = -1, .cores = 100};
    struct gs_shim *s = &gs__shim;
    if (ordinal >= 0 && ordinal < GS_REGION_DEVICES &&
        atomic_load_explicit(&s->dev[ordinal].ready, memory_order_acquire))
        return &s->dev[ordinal];
    unsigned char uuid[16];
    if (ordinal < 0 || query_uuid(ordinal, uuid) < 0)
        return NULL;
    if (ordinal >= GS_REGION_DEVICES)
        return &beyond;
    pthread_mutex_lock(&s->mu);
    struct gs_shim_dev *d = &s->dev[ordinal];
    if (!atomic_load(&d->ready)) {
        char name[41];
        memcpy(d->uuid, uuid, 16);
        gs_shim_uuid_format(uuid, 0, name);
        const char *why = s->broken ? "the limits could not be read" : set_limits(d);
        if (why)
            refuse(d, name, why);
        else
            set_limiter(d, name);
        atomic_store_explicit(&d->ready, 1, memory_order_release);
    }
    pthread_mutex_unlock(&s->mu);
    return d;
}

CUresult gs__current_ordinal(int *ordinal)
{
    CUdevice d;
    CUresult rc = GS_CALL(cuCtxGetDevice, (&d));
    if (rc == CUDA_SUCCESS)
        *ordinal = d;
    return rc;
}

int gs__slot(void)
{
    struct gs_shim *s = &gs__shim;
    if (!s->region)
        return -1;
    pthread_mutex_lock(&s->mu);
    if (s->slot < 0) {
        s->slot = gs_region_attach(s->region);
        if (s->slot < 0)
            gs__say("region %s: no process slot (%s); allocations are refused", s->env.region,
                    s->slot == -ENOSPC ? "all taken" : strerror(-s->slot));
    }
    int slot = s->slot;
    pthread_mutex_unlock(&s->mu);
    return slot;
}

CUresult cuInit(unsigned int Flags)
{
    gs__init();
    if (gs__shim.broken)
        return CUDA_ERROR_NOT_PERMITTED;
    return GS_CALL(cuInit, (Flags));
}

static int wrapped(int i)
{
    return fns[i].wrapper != NULL;
}

/* cuGetProcAddress names whose newer versions are entry points of another name (fns.def). */
static const struct {
    const char *base;
    int version, index;
} aliases[] = {
#define GS_ALIAS(base, version, name) {#base, version, GS_I_##name},
#include "fns.def"
};

/* The wrapper for what cuGetProcAddress returned: the entry whose real address it is, else the
 * newest version of @symbol not newer than @version, in the stream variant @flags asks for. */
static gs_fnptr wrapper_for(const char *symbol, gs_fnptr got, int version, cuuint64_t flags)
{
    int best = -1;
    int ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    for (int i = 0; i < GS_NFN; i++)
        if (wrapped(i) && gs__shim.real[i] == got)
            return fns[i].wrapper;
    for (size_t a = 0; a < sizeof(aliases) / sizeof(aliases[0]); a++)
        if (strcmp(aliases[a].base, symbol) == 0 && version >= aliases[a].version)
            return gs__shim.real[aliases[a].index] ? fns[aliases[a].index].wrapper : NULL;
    for (int i = 0; i < GS_NFN; i++) {
        if (!wrapped(i))
            continue;
        if (strcmp(fns[i].base, symbol) != 0 || fns[i].version > version || !gs__shim.real[i])
            continue;
        if (best < 0 || (fns[i].ptsz == ptsz && fns[best].ptsz != ptsz) ||
            (fns[i].ptsz == fns[best].ptsz && fns[i].version > fns[best].version))
            best = i;
    }
    return best >= 0 ? fns[best].wrapper : NULL;
}

static CUresult proc_address(CUresult rc, const char *symbol, void **pfn, int version,
                             cuuint64_t flags)
{
    if (rc != CUDA_SUCCESS || !symbol || !pfn || !*pfn)
        return rc;
    gs_fnptr w = wrapper_for(symbol, to_fn(*pfn), version, flags);
    if (w)
        *pfn = to_ptr(w);
    return rc;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    gs__init();
    CUresult rc = GS_CALL(cuGetProcAddress, (symbol, pfn, cudaVersion, flags));
    return proc_address(rc, symbol, pfn, cudaVersion, flags);
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    gs__init();
    CUresult rc = GS_CALL(cuGetProcAddress_v2, (symbol, pfn, cudaVersion, flags, symbolStatus));
    return proc_address(rc, symbol, pfn, cudaVersion, flags);
}

/* Whether the process has loaded the driver (without this library loading it). */
static int driver_loaded(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (h)
        dlclose(h); /* the reference RTLD_NOLOAD took */
    return h != NULL;
}

/* A cu* name this library wraps, looked up in @handle: the wrapper when the lookup finds the
 * driver's function, NULL when it finds this library's wrapper of a function the driver lacks (a
 * program probing RTLD_DEFAULT for the driver, or for a feature of it, must not be told it is
 * there, nor told so by the library loading the driver: a lookup in a process that has not loaded
 * it finds nothing, and says nothing), the lookup's own answer otherwise. */
static void *lookup_cu(void *handle, const char *name, int *hit)
{
    int i = 0;
    while (i < GS_NFN && !(wrapped(i) && strcmp(fns[i].name, name) == 0))
        i++;
    if (i == GS_NFN)
        return NULL;
    *hit = 1;
    void *got = real_dlsym()(handle, name);
    if (got && to_fn(got) == fns[i].wrapper && !atomic_load(&gs__inited) && !driver_loaded())
        return NULL; /* only this library has it: without it the lookup finds nothing */
    gs__init();
    if (!gs__shim.real[i])
        gs__missing(i);
    if (got && !gs__shim.real[i] && to_fn(got) == fns[i].wrapper)
        return NULL;
    return got && to_fn(got) == gs__shim.real[i] ? to_ptr(fns[i].wrapper) : got;
}

GS_EXPORT void *dlsym(void *handle, const char *name)
{
    if (name[0] == 'c' && name[1] == 'u' && !in_init) {
        int hit = 0;
        void *p = lookup_cu(handle, name, &hit);
        if (hit)
            return p;
    }
    /* A tail call, so that glibc sees the caller's return address and RTLD_NEXT means the object
     * after the caller, not after this library (the library is built with optimisation for it;
     * a test checks it). */
    return real_dlsym()(handle, name);
}
