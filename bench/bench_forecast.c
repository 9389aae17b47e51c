/*
 * bench_forecast: what `gpusched forecast --pods FILE --by model` does on a long history: read a
 * pod list of N distinct pods (GPU-sharing trace format, written to a temporary file first),
 * build the hourly series per GPU model and forecast each a day ahead with the auto model
 * choice. Prints the seconds of each stage; figures in bench/README.md.
 *
 * usage: bench_forecast [PODS [DAYS]]   (default 100000 pods over 60 days)
 *
 * With --refit TENANTS MODELS DAYS: what one refit of gpuschedd's forecast gauges costs
 * (src/daemon/forecast.c): a ledger of every tenant running on every model every hour of DAYS
 * days (runs of 10 min to 4 h, 1-4 cards), split by tenant and model, each series fitted an hour
 * ahead with the auto model.
 */
#include "gpusched/diag.h"
#include "gpusched/forecast.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* N distinct pods: arrivals follow a daily cycle, lifetimes 10 min .. 2 days, shares and
 * models vary; each pod differs from every other in name, time and size. */
static int write_pods(const char *path, long n, long days)
{
    static const char *const models[] = {"V100M32", "T4", "A10", "P100", "G2"};
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
               "creation_time,deletion_time,scheduled_time\n");
    uint64_t s = 42;
    double span = (double)days * 86400.0;
    for (long i = 0; i < n; i++) {
        double t;
        do { /* thinning: arrivals twice as dense at the day's peak as at its trough */
            t = span * (double)rng(&s) / 2147483648.0;
        } while ((double)rng(&s) / 2147483648.0 >
                 0.5 + 0.5 * sin(2 * 3.14159265358979 * fmod(t, 86400.0) / 86400.0));
        long life = 600 + (long)(rng(&s) % 172800);
        int whole = rng(&s) % 3 == 0;
        long milli = whole ? 1000 : 50 + (long)(rng(&s) % 950);
        fprintf(f, "bench-pod-%06ld,%ld,%ld,%d,%ld,%s,%s,Running,%ld,%ld,%ld\n", i,
                1000 + (long)(rng(&s) % 8000), 1024 + (long)(rng(&s) % 30000),
                whole ? 1 + (int)(rng(&s) % 4) : 1, milli, models[rng(&s) % 5],
                rng(&s) % 4 ? "LS" : "BE", (long)t, (long)t + life, (long)t);
    }
    return fclose(f);
}

/* --refit: the ledger built in memory (gs_demand_add_run(), as the daemon reads its rows), the
 * series and the fits timed. */
static int refit(long tenants, long models, long days)
{
    static const char *const names[] = {
        "A100-SXM4-80GB", "H100-SXM5-80GB", "H100-NVL-94GB", "L40S", "A10", "T4"};
    struct gs_diag d;
    gs_diag_init(&d);
    struct gs_demand *dm;
    struct gs_series_set set;
    uint64_t s = 42;
    long runs = 0;
    double t0 = now_s();
    int rc = gs_demand_new(&dm);
    for (long t = 0; !rc && t < tenants; t++) {
        char tn[32];
        snprintf(tn, sizeof(tn), "tenant-%ld", t);
        for (long m = 0; !rc && m < models; m++)
            for (long h = 0; !rc && h < days * 24; h++, runs++) {
                int64_t start = h * 3600 + (int64_t)(rng(&s) % 3600);
                int64_t life = 600 + (int64_t)(rng(&s) % 14400);
                rc = gs_demand_add_run(dm, tn, names[m], 1 + (int64_t)(rng(&s) % 4), 1000,
                                       start * 1000000, (start + life) * 1000000, &d);
            }
    }
    double t1 = now_s();
    if (!rc)
        rc = gs_demand_series(dm, GS_FC_TENANT, 1, days * 86400 + 1, 0, &set, &d);
    double t2 = now_s();
    for (size_t i = 0; !rc && i < set.count; i++) {
        struct gs_forecast f;
        rc = gs_fc_fit(set.s[i].milli, set.n, 1, GS_FC_AUTO, &f, &d);
        if (!rc)
            gs_forecast_free(&f);
    }
    double t3 = now_s();
    if (rc) {
        fprintf(stderr, "bench_forecast: %s\n", d.msg);
        return 1;
    }
    printf("refit: %ld tenants x %ld models over %ld days, %ld runs: ledger %.3f s, %zu series "
           "%.3f s, fits %.3f s (%.4f s a series), total %.3f s\n",
           tenants, models, days, runs, t1 - t0, set.count, t2 - t1, t3 - t2,
           (t3 - t2) / (double)set.count, t3 - t0);
    gs_series_set_free(&set);
    gs_demand_free(dm);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--refit") == 0) {
        long t = atol(argv[2]), m = atol(argv[3]), days = atol(argv[4]);
        if (t < 1 || t > 1000 || m < 1 || m > 6 || days < 1 || days > 365) {
            fprintf(stderr, "usage: bench_forecast --refit TENANTS 1..1000 MODELS 1..6 DAYS "
                            "1..365\n");
            return 2;
        }
        return refit(t, m, days);
    }
    long n = argc > 1 ? atol(argv[1]) : 100000, days = argc > 2 ? atol(argv[2]) : 60;
    if (n < 1 || n > 2000000 || days < 1 || days > 1000) {
        fprintf(stderr, "usage: bench_forecast [PODS 1..2000000 [DAYS 1..1000]]\n");
        return 2;
    }
    char path[] = "/tmp/bench_forecast.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || close(fd) || write_pods(path, n, days)) {
        fprintf(stderr, "bench_forecast: cannot write %s\n", path);
        return 1;
    }
    struct gs_diag d;
    gs_diag_init(&d);
    struct gs_demand *dm;
    struct gs_series_set set;
    double t0 = now_s();
    int rc = gs_demand_new(&dm);
    if (!rc)
        rc = gs_demand_read_pods(dm, path, &d);
    double t1 = now_s();
    if (!rc)
        rc = gs_demand_series(dm, GS_FC_MODEL, 0, days * 86400, 0, &set, &d);
    double t2 = now_s();
    unlink(path);
    if (rc) {
        fprintf(stderr, "bench_forecast: %s\n", d.msg);
        return 1;
    }
    for (size_t i = 0; i < set.count; i++) {
        struct gs_forecast f;
        if (gs_fc_fit(set.s[i].milli, set.n, 24, GS_FC_AUTO, &f, &d)) {
            fprintf(stderr, "bench_forecast: %s\n", d.msg);
            return 1;
        }
        if (i == 0)
            printf("series %s: %s, next hour %lld milli-GPU\n", set.s[i].name,
                   gs_fc_method_name(f.method), (long long)f.point[0]);
        gs_forecast_free(&f);
    }
    double t3 = now_s();
    printf("%ld pods over %ld days: read %.3f s, %zu series of %zu hours %.3f s, forecast 24h "
           "(auto) %.3f s, total %.3f s\n",
           n, days, t1 - t0, set.count, set.n, t2 - t1, t3 - t2, t3 - t0);
    gs_series_set_free(&set);
    gs_demand_free(dm);
    return 0;
}
