/*
 * libgpushare — the compute limit: every kernel launch passes its device's token bucket, and a
 * watcher thread refills the buckets every GS_LIMITER_TICK_US from the utilisation NVML measured.
 * The launch path takes no lock and makes no system call unless the bucket is empty.
 */
#define _GNU_SOURCE
#include "shim.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

/* The device of the thread's current context, cached until the context changes or one dies.
 * Initial-exec TLS: a plain load on the launch path (the library is preloaded, so static TLS is
 * there for it). */
#define GS_TLS _Thread_local __attribute__((tls_model("initial-exec")))
static GS_TLS CUcontext tls_ctx;
static GS_TLS int tls_ordinal = -1;
static GS_TLS unsigned tls_gen;

static struct gs_shim_dev *launch_dev(void)
{
    struct gs_shim *s = &gs__shim;
    int ndev = atomic_load_explicit(&s->ndev, memory_order_relaxed);
    if (ndev == 0 && GS_CALL(cuDeviceGetCount, (&ndev)) == CUDA_SUCCESS)
        atomic_store_explicit(&s->ndev, ndev, memory_order_relaxed);
    if (ndev == 1)
        return gs__dev(0);
    CUcontext ctx = NULL;
    GS_CALL(cuCtxGetCurrent, (&ctx));
    unsigned gen = atomic_load_explicit(&s->ctx_gen, memory_order_relaxed);
    if (!ctx || ctx != tls_ctx || gen != tls_gen || tls_ordinal < 0) {
        int ordinal;
        if (gs__current_ordinal(&ordinal) != CUDA_SUCCESS)
            return NULL;
        tls_ctx = ctx;
        tls_gen = gen;
        tls_ordinal = ordinal;
    }
    return gs__dev(tls_ordinal);
}

static uint64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* How long the process's latest sample stands when NVML gives no newer one: past NVML's longest
 * sample period (1 s) and a watcher tick. NVML lists only processes busy in a period, so after
 * this the process is taken to be idle. */
#define GS_SAMPLE_HOLD_US 1500000

/* The utilisation NVML measured for @d into *@pct (*@card: the whole card's). Return: 1 when it
 * is news: a new sample, or 0 once none stands (idle, which then stands as a sample does); 0
 * while the latest stands (from the first pass, until one comes); -1 when NVML cannot measure. */
static int sampled(struct gs_shim_dev *d, uint64_t now, unsigned *pct, int *card)
{
    static _Atomic int unmeasured;
    int rc = gs__nvml_util(d->nvml, gs__shim.host_pid, &d->nvml_seen, pct, card);
    if (rc < 0) {
        if (!atomic_exchange(&unmeasured, 1))
            gs__say("NVML cannot measure a limited device's utilisation; its compute limit holds "
                    "the launch rate it had");
        return -1;
    }
    if (rc == 1 && d->own_us && now - d->own_us <= GS_SAMPLE_HOLD_US) {
        *pct = d->own_pct;
        return 0;
    }
    int first = rc == 1 && !d->own_us;
    d->own_pct = rc == 0 ? *pct : 0;
    d->own_us = now;
    *pct = d->own_pct;
    return !first;
}

/* The utilisation to hold @d to, into *@pct: the container's (its processes' own measurements,
 * summed in the region), or, where NVML does not measure this process, the whole card's as it
 * is (summing it over the container's processes would count the card once per process).
 * Return: sampled()'s. */
static int measure(struct gs_shim_dev *d, unsigned *pct)
{
    struct gs_shim *s = &gs__shim;
    static _Atomic int said;
    uint64_t now = now_us();
    int card, news = sampled(d, now, pct, &card);
    if (news < 0)
        return news;
    if (card) {
        if (!atomic_exchange(&said, 1))
            gs__say("%s; compute limits are held against the whole card's utilisation",
                    s->host_pid == 0 ? "NVML does not list this process"
                                     : "NVML keeps no per-process utilisation of this device");
        return news;
    }
    int slot = gs__slot();
    if (slot < 0 || d->regdev < 0)
        return news;
    gs_region_set_util(s->region, slot, d->regdev, *pct, now);
    *pct = gs_region_util(s->region, d->regdev, now, 10 * GS_LIMITER_TICK_US);
    return news;
}

static void *watch(void *arg)
{
    (void)arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        next.tv_nsec += GS_LIMITER_TICK_US * 1000;
        if (next.tv_nsec >= 1000000000) {
            next.tv_sec++;
            next.tv_nsec -= 1000000000;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        for (int i = 0; i < GS_REGION_DEVICES; i++) {
            struct gs_shim_dev *d = &gs__shim.dev[i];
            unsigned pct;
            if (!atomic_load(&d->ready) || !atomic_load(&d->lim_on))
                continue;
            int news = measure(d, &pct);
            if (news > 0)
                gs_limiter_sample(&d->lim, pct);
            else if (news == 0) /* nothing new: the standing measurement goes on */
                gs_limiter_tick(&d->lim);
            else /* nothing measurable: hold the rate */
                gs_limiter_refill(&d->lim);
        }
    }
    return NULL;
}

static void start_watcher(void)
{
    struct gs_shim *s = &gs__shim;
    pthread_mutex_lock(&s->mu);
    if (!atomic_load(&s->watcher)) {
        sigset_t all, old;
        pthread_attr_t a;
        pthread_t t;
        sigfillset(&all); /* the application's signals are not for this thread */
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &a, watch, NULL);
        pthread_attr_destroy(&a);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc == 0) {
            atomic_store(&s->watcher, 1);
        } else {
            gs__say("cannot start the utilisation watcher; compute limits are not enforced");
            for (int i = 0; i < GS_REGION_DEVICES; i++)
                atomic_store(&s->dev[i].lim_on, 0);
        }
    }
    pthread_mutex_unlock(&s->mu);
}

void gs__throttle(void)
{
    struct gs_shim_dev *d = launch_dev();
    if (!d || !atomic_load_explicit(&d->lim_on, memory_order_relaxed))
        return;
    if (!atomic_load_explicit(&gs__shim.watcher, memory_order_relaxed))
        start_watcher();
    struct timespec wait = {0, 200000};
    while (!gs_limiter_try(&d->lim) && atomic_load_explicit(&d->lim_on, memory_order_relaxed))
        nanosleep(&wait, NULL);
}

#define GS_LAUNCH(name, base, version, variant, params, args)                                      \
    CUresult name params                                                                           \
    {                                                                                              \
        gs__init();                                                                                \
        if (gs__shim.limiting)                                                                     \
            gs__throttle();                                                                        \
        return GS_CALL(name, args);                                                                \
    }
#include "fns.def"

void gs__fork_child_launch(void)
{
    struct gs_shim *s = &gs__shim;
    atomic_store(&s->watcher, 0);
    for (int i = 0; i < GS_REGION_DEVICES; i++) {
        struct gs_shim_dev *d = &s->dev[i];
        if (atomic_load(&d->lim_on))
            gs_limiter_init(&d->lim, d->cores);
        d->nvml_seen = 0;
        d->own_us = 0; /* the child is a process of its own to NVML */
    }
}

void gs__probe_before(int ordinal, struct gs_probe *p)
{
    p->n = -1;
    if (!gs__shim.limiting || gs__shim.host_pid != 0)
        return;
    struct gs_shim_dev *d = gs__dev(ordinal);
    if (d && d->nvml)
        p->n = gs__nvml_pids(d->nvml, p->pid, GS_PROBE_MAX);
}

void gs__probe_after(int ordinal, const struct gs_probe *p)
{
    if (p->n < 0 || gs__shim.host_pid != 0)
        return;
    struct gs_shim_dev *d = gs__dev(ordinal);
    unsigned now[GS_PROBE_MAX];
    int n = d && d->nvml ? gs__nvml_pids(d->nvml, now, GS_PROBE_MAX) : -1;
    unsigned self = (unsigned)getpid(), fresh = 0;
    int nfresh = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        if (now[i] == self) { /* NVML and this process share a pid namespace */
            nfresh = 1;
            fresh = self;
            break;
        }
        for (int j = 0; j < p->n && !seen; j++)
            seen = p->pid[j] == now[i];
        if (!seen) {
            nfresh++;
            fresh = now[i];
        }
    }
    if (nfresh == 1) /* another process starting at the same moment makes it ambiguous */
        gs__shim.host_pid = (int32_t)fresh;
}
