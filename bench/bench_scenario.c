/*
 * bench_scenario: time the scenario loader on a generated workload of flow-style Pod documents
 * (one per line, as a generator or `yq -o=json` would write them), then resolve it.
 *
 * usage: bench_scenario [PODS] [FILE]   (defaults: 100000 pods, /tmp/gs_bench_pods.yaml)
 * Prints the file size, the seconds each step took and the pods per second. Timing is wall-clock
 * on whatever machine runs it; tests never assert on it.
 */
#include "gpusched/diag.h"
#include "gpusched/scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* write_pods() - @n pods in 50 namespaces, 200 users, 1-4 GPUs each, one document per line. */
static int write_pods(const char *path, long n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    for (long i = 0; i < n; i++)
        fprintf(f,
                "--- {apiVersion: v1, kind: Pod, metadata: {name: p-%07ld, namespace: ns-%ld, "
                "labels: {user: u-%ld}, annotations: {sim.gpusched.io/arrival: \"%lds\", "
                "sim.gpusched.io/duration: 1h}}, spec: {containers: [{name: main, resources: "
                "{limits: {nvidia.com/gpu: %ld, cpu: \"4\", memory: 16Gi}}}]}}\n",
                i, i % 50, i % 200, i, 1 + i % 4);
    return fclose(f);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
    const char *path = argc > 2 ? argv[2] : "/tmp/gs_bench_pods.yaml";
    struct gs_scenario *s;
    struct gs_diag d;
    if (n <= 0 || write_pods(path, n) != 0 || gs_scenario_new(&s) != 0) {
        fprintf(stderr, "bench_scenario: cannot prepare %s\n", path);
        return 1;
    }
    gs_diag_init(&d);
    FILE *f = fopen(path, "rb");
    long size = 0;
    if (f && fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (f)
        fclose(f);
    double t0 = now();
    int rc = gs_scenario_load(s, path, &d);
    double t1 = now();
    if (!rc)
        rc = gs_scenario_resolve(s, &d);
    double t2 = now();
    if (rc) {
        fprintf(stderr, "bench_scenario: %s\n", d.msg);
        gs_scenario_free(s);
        return 1;
    }
    printf("%ld pods, %.1f MB: load %.3f s (%.0f pods/s), resolve %.3f s, %zu tenants\n", n,
           (double)size / 1e6, t1 - t0, (double)n / (t1 - t0), t2 - t1, s->policy.ntenants);
    gs_scenario_free(s);
    return 0;
}
