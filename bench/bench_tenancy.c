/*
 * The tenant-day through the multi-tenant simulator at growing sizes: generate the scenario,
 * load it, and time each way of running it, the best of BENCH_REPEAT runs (default 3: a shared
 * machine's timings vary by up to 2x; the work counts do not). Prints figures; asserts nothing.
 *
 * Usage: bench_tenancy [NODES PODS]...   (default: 64 2000, 500 10000, 5000 100000)
 */
#include "gpusched/diag.h"
#include "gpusched/scenario.h"
#include "gpusched/tenantday.h"
#include "gpusched/tsim.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int one(uint32_t nodes, uint32_t pods)
{
    struct gs_tenantday_params p;
    struct gs_diag d;
    gs_diag_init(&d);
    gs_tenantday_defaults(&p);
    p.nodes = nodes;
    p.pods = pods;
    char path[] = "/tmp/bench-tenancy-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f || gs_tenantday_write(f, &p, NULL, &d) < 0 || fclose(f) != 0) {
        fprintf(stderr, "bench_tenancy: cannot write the scenario: %s\n", d.msg);
        return 1;
    }
    struct gs_scenario *s = NULL;
    double t0 = now_s();
    int r = gs_scenario_new(&s);
    if (r == 0)
        r = gs_scenario_load(s, path, &d);
    if (r == 0)
        r = gs_scenario_resolve(s, &d);
    double load = now_s() - t0;
    unlink(path);
    if (r < 0) {
        fprintf(stderr, "bench_tenancy: %s\n", d.msg);
        gs_scenario_free(s);
        return 1;
    }
    printf("%u nodes, %u pods: load %.2f s\n", nodes, pods, load);
    const char *rep = getenv("BENCH_REPEAT");
    int repeat = rep && atoi(rep) > 0 ? atoi(rep) : 3;
    for (int w = 0; w < GS_WAY_COUNT; w++) {
        struct gs_tsim *t = NULL;
        double secs = 0;
        for (int k = 0; k < repeat; k++) {
            gs_tsim_free(t);
            t0 = now_s();
            if (gs_tsim_run(s, (enum gs_way)w, &t, &d) < 0) {
                fprintf(stderr, "\nbench_tenancy: %s\n", d.msg);
                gs_scenario_free(s);
                return 1;
            }
            double one_run = now_s() - t0;
            secs = k == 0 || one_run < secs ? one_run : secs;
        }
        const struct gs_tsim_summary *sum = gs_tsim_summary(t);
        const struct gs_tsim_work *wk = gs_tsim_work(t);
        printf("  %-9s %6.2f s  alloc %d.%d %%  %lld events  %lld evictions | %lld passes, %lld "
               "tries, %lld node fits, %lld victim searches over %lld nodes, %lld with trials\n",
               gs_way_name(w), secs, sum->allocation_milli / 10, sum->allocation_milli % 10,
               (long long)sum->events, (long long)(sum->preemptions + sum->reclaims),
               (long long)wk->passes, (long long)wk->tries, (long long)wk->node_fits,
               (long long)wk->victim_searches, (long long)wk->victim_nodes,
               (long long)wk->victim_trials);
        gs_tsim_free(t);
    }
    fflush(stdout);
    gs_scenario_free(s);
    return 0;
}

int main(int argc, char **argv)
{
    static const uint32_t dflt[][2] = {{64, 2000}, {500, 10000}, {5000, 100000}};
    if (argc > 1) {
        for (int i = 1; i + 1 < argc; i += 2)
            if (one((uint32_t)atol(argv[i]), (uint32_t)atol(argv[i + 1])))
                return 1;
        return 0;
    }
    for (size_t i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++)
        if (one(dflt[i][0], dflt[i][1]))
            return 1;
    return 0;
}
