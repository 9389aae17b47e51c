/*
 * bench_gpushare — what libgpushare adds to a driver call, in nanoseconds, against the fake driver
 * of tests/shim (so the figure is the library's own cost, with no GPU behind it):
 *
 *   cuLaunchKernel per call: without the library; preloaded with no limit; with a memory limit
 *   (the launch path then checks one flag); gs_limiter_try alone (what a compute limit adds on the
 *   launch path while the bucket has tokens).
 *   cuGraphLaunch per call of a graph that allocates nothing, likewise.
 *   cuMemAlloc_v2 + cuMemFree_v2 per pair, and cuMemAllocAsync + cuMemFreeAsync from the device's
 *   pool (its cache serving each allocation), without and with a memory limit.
 *
 * It runs itself once per configuration and round with LD_PRELOAD set or not; each figure is the
 * best of 5 repetitions in each of ROUNDS rounds (default 7), in parentheses its difference to the
 * run without the library. Asserts nothing. Usage: bench_gpushare [LAUNCHES [ROUNDS]]
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
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream);
CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags);
CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                             const CUgraphNode *dependencies, size_t numDependencies);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                     unsigned long long flags);
CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream);

/* CPU time of this thread: on a shared machine, time spent waiting for a CPU is not the
 * library's. */
static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
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

static double async_allocs(long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        CUdeviceptr p;
        if (cuMemAllocAsync(&p, 1 << 20, NULL) != CUDA_SUCCESS ||
            cuMemFreeAsync(p, NULL) != CUDA_SUCCESS) {
            fprintf(stderr, "bench_gpushare: a stream-ordered allocation failed\n");
            exit(1);
        }
    }
    return (now_ns() - t0) / (double)n;
}

static CUgraphExec graph_exec;

static double graph_launches(long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        cuGraphLaunch(graph_exec, NULL);
    return (now_ns() - t0) / (double)n;
}

static struct gs_limiter lim_state;

static double limiter(long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        if (!gs_limiter_try(&lim_state))
            atomic_store(&lim_state.tokens, GS_LIMITER_MAX);
    }
    return (now_ns() - t0) / (double)n;
}

static int child(long n)
{
    CUcontext ctx;
    CUgraph g;
    CUgraphNode node;
    if (cuInit(0) != CUDA_SUCCESS || cuCtxCreate_v2(&ctx, 0, 0) != CUDA_SUCCESS ||
        cuGraphCreate(&g, 0) != CUDA_SUCCESS || cuGraphAddEmptyNode(&node, g, NULL, 0) ||
        cuGraphInstantiateWithFlags(&graph_exec, g, 0) != CUDA_SUCCESS) {
        fprintf(stderr, "bench_gpushare: the fake driver did not start\n");
        return 1;
    }
    printf("%.2f %.1f %.2f %.1f\n", best_of(launches, n), best_of(allocs, n / 100),
           best_of(graph_launches, n), best_of(async_allocs, n / 100));
    return 0;
}

/* One run of configuration @extra; its four figures into @ns: cuLaunchKernel, cuMemAlloc pair,
 * cuGraphLaunch, cuMemAllocAsync pair. */
static int run(const char *self, const char *state, long n, char *const extra[], double *ns)
{
    char count[32], out[128];
    int fd[2];
    snprintf(count, sizeof(count), "%ld", n);
    char *env[16] = {"LD_LIBRARY_PATH=" FAKE_DIR, (char *)state, NULL};
    int k = 2;
    for (int i = 0; extra[i] && k < 15; i++)
        env[k++] = extra[i];
    env[k] = NULL;
    char *argv[] = {(char *)self, "--child", count, NULL};
    if (pipe(fd) < 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        execve(self, argv, env);
        _exit(127);
    }
    close(fd[1]);
    ssize_t len = read(fd[0], out, sizeof(out) - 1);
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    out[len > 0 ? len : 0] = '\0';
    return !(WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
             sscanf(out, "%lf %lf %lf %lf", &ns[0], &ns[1], &ns[2], &ns[3]) == 4);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--child") == 0)
        return child(atol(argv[2]));
    char *end = "";
    long n = argc > 1 ? strtol(argv[1], &end, 10) : 2000000;
    long rounds = argc > 2 && !*end ? strtol(argv[2], &end, 10) : 7;
    if (argc > 3 || *end || n < 100 || n > 1000000000 || rounds < 1 || rounds > 1000) {
        fprintf(stderr, "usage: bench_gpushare [LAUNCHES [ROUNDS]] (100..1e9 launches, default "
                        "2000000, a hundredth of them allocations; 1..1000 rounds, default 7)\n");
        return 2;
    }
    char path[64], state[96], region[64], regionenv[96];
    snprintf(path, sizeof(path), "/tmp/bench-gpushare-%d", (int)getpid());
    snprintf(state, sizeof(state), "FAKECUDA_STATE=%s", path);
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
    char *const *conf[] = {none, plain, mem};
    const char *label[] = {"without libgpushare", "libgpushare, no limit",
                           "libgpushare, memory limit"};
    double best[3][4], lim = 1e30;
    int rc = 0;
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 4; k++)
            best[c][k] = 1e30;
    /* Rounds interleave the configurations, and each figure is the best over all rounds: a busy
     * machine only ever adds time, so the minimum is the least disturbed measurement. */
    for (int r = 0; r < rounds && rc == 0; r++) {
        for (int c = 0; c < 3 && rc == 0; c++) {
            double ns[4];
            rc = run(argv[0], state, n, conf[c], ns);
            for (int k = 0; k < 4 && rc == 0; k++)
                best[c][k] = ns[k] < best[c][k] ? ns[k] : best[c][k];
        }
        gs_limiter_init(&lim_state, 50);
        double t = best_of(limiter, n);
        lim = t < lim ? t : lim;
    }
    for (int c = 0; c < 3 && rc == 0; c++)
        printf("%-28s cuLaunchKernel %6.2f ns/call (%+.2f)   cuMemAlloc+cuMemFree %7.0f ns/pair "
               "(%+.0f)\n%-28s cuGraphLaunch  %6.2f ns/call (%+.2f)   "
               "cuMemAllocAsync+cuMemFreeAsync %7.0f ns/pair (%+.0f)\n",
               label[c], best[c][0], best[c][0] - best[0][0], best[c][1], best[c][1] - best[0][1],
               "", best[c][2], best[c][2] - best[0][2], best[c][3], best[c][3] - best[0][3]);
    printf("%-28s gs_limiter_try %6.2f ns/call (what a compute limit adds while tokens last)\n",
           "limiter alone", lim);
    unlink(path);
    shm_unlink(region);
    if (rc)
        fprintf(stderr, "bench_gpushare: a run failed\n");
    return rc;
}
