/*
 * bench_gpushare — what libgpushare adds to a driver call, in nanoseconds, against the fake driver
 * of tests/shim (so the figure is the library's own cost, with no GPU behind it):
 *
 *   cuLaunchKernel per call: without the library; preloaded with no limit; with a memory limit
 *   (the launch path then checks one flag); gs_limiter_try alone (what a compute limit adds on the
 *   launch path while the bucket has tokens).
 *   cuMemAlloc_v2 + cuMemFree_v2 per pair, without and with a memory limit.
 *
 * It runs itself once per configuration with LD_PRELOAD set or not; the best of 5 repetitions.
 * Asserts nothing. Usage: bench_gpushare [LAUNCHES]
 */
#define _GNU_SOURCE
#include "fake_state.h"
#include "fns.h"
#include "limiter.h"

#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

CUresult cuInit(unsigned int Flags);
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void **kernelParams, void **extra);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemFree_v2(CUdeviceptr dptr);

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static double best_of(double (*f)(long), long n)
{
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t = f(n);
        if (t < best)
            best = t;
    }
    return best;
}

static double launches(long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    return (now_ns() - t0) / (double)n;
}

static double allocs(long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        CUdeviceptr p;
        if (cuMemAlloc_v2(&p, 1 << 20) != CUDA_SUCCESS || cuMemFree_v2(p) != CUDA_SUCCESS) {
            fprintf(stderr, "bench_gpushare: allocation failed\n");
            exit(1);
        }
    }
    return (now_ns() - t0) / (double)n;
}

static struct gs_limiter lim;

static double limiter(long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        if (!gs_limiter_try(&lim))
            atomic_store(&lim.tokens, GS_LIMITER_MAX);
    }
    return (now_ns() - t0) / (double)n;
}

static int child(const char *label, long n)
{
    CUcontext ctx;
    if (cuInit(0) != CUDA_SUCCESS || cuCtxCreate_v2(&ctx, 0, 0) != CUDA_SUCCESS) {
        fprintf(stderr, "bench_gpushare: the fake driver did not start\n");
        return 1;
    }
    printf("%-32s cuLaunchKernel %6.1f ns/call   cuMemAlloc+cuMemFree %7.0f ns/pair\n", label,
           best_of(launches, n), best_of(allocs, n / 100));
    return 0;
}

static int run(const char *self, const char *label, long n, char *const extra[])
{
    char count[32], state[160];
    snprintf(count, sizeof(count), "%ld", n);
    snprintf(state, sizeof(state), "FAKECUDA_STATE=/tmp/bench-gpushare-%d", (int)getpid());
    char *env[16] = {"LD_LIBRARY_PATH=" FAKE_DIR, state, NULL};
    int k = 2;
    for (int i = 0; extra[i] && k < 15; i++)
        env[k++] = extra[i];
    env[k] = NULL;
    char *argv[] = {(char *)self, "--child", (char *)label, count, NULL};
    pid_t pid = fork();
    if (pid == 0) {
        execve(self, argv, env);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--child") == 0)
        return child(argv[2], atol(argv[3]));
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    char path[64], region[64], regionenv[96];
    snprintf(path, sizeof(path), "/tmp/bench-gpushare-%d", (int)getpid());
    snprintf(region, sizeof(region), "/bench-gpushare-%d", (int)getpid());
    snprintf(regionenv, sizeof(regionenv), "GPUSHARE_REGION=%s", region);
    uint64_t total = UINT64_C(80) << 30;
    if (fake_state_create(path, 1, &total, 0, 0, 0) < 0) {
        fprintf(stderr, "bench_gpushare: cannot write %s\n", path);
        return 1;
    }
    char *none[] = {NULL};
    char *plain[] = {"LD_PRELOAD=" GPUSHARE_LIB, NULL};
    char *mem[] = {"LD_PRELOAD=" GPUSHARE_LIB, "GPUSHARE_MEMORY_LIMIT_MIB=40960", regionenv, NULL};
    int rc = run(argv[0], "without libgpushare", n, none) ||
             run(argv[0], "libgpushare, no limit", n, plain) ||
             run(argv[0], "libgpushare, memory limit", n, mem);
    gs_limiter_init(&lim, 50);
    printf("%-32s gs_limiter_try %6.1f ns/call (added by a compute limit)\n", "limiter alone",
           best_of(limiter, n));
    unlink(path);
    shm_unlink(region);
    return rc;
}
