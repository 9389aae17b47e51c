/*
 * bench_kube: pods bound per second through a real control plane (tests/e2e/kcluster.h: etcd,
 * kube-apiserver and kube-scheduler 1.20.2), with gpuschedd as kube-scheduler's extender over
 * mutual TLS and without it (the shipped configuration less its extenders section), on the same
 * nodes and pods: what the extender costs.
 *
 *   bench_kube [--nodes N] [--pods P] [--mode extender|plain|both]
 *
 * N nodes of 16 V100 32 GB cards each (a DGX-2 board; default 100) and P distinct pods of one
 * card each (default 1000, at most 16 N), created through the API server by 4 threads as fast as
 * it answers (so creating them is not what limits the rate); the clock runs from the first
 * create to the last pod bound (a list of the pods that have no node, every 100 ms). Needs
 * GPUSCHEDD_BIN and the binaries of scripts/build-kubernetes (found as the e2e tests find them).
 * Prints one line per mode; with the extender, then one more: a Node made with every pod bound,
 * and how long until gpuschedd has it in its inventory (its log says so; polled every 5 ms).
 */
#include "../tests/e2e/kcluster.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Pods in team-a that have no node yet; -1 on error. */
static long unbound(const struct kcluster *c)
{
    struct kanswer a;
    long n = -1;
    if (!kc_api(c, "GET", "/api/v1/namespaces/team-a/pods?fieldSelector=spec.nodeName%3D", NULL,
                &a) &&
        a.status == 200)
        n = (long)json_array_size(json_object_get(a.json, "items"));
    kc_answer_free(&a);
    return n;
}

#define CREATORS 4

struct creator {
    const struct kcluster *c;
    int from, to, failed;
};

static void *create(void *arg)
{
    struct creator *w = arg;
    char name[32];
    for (int i = w->from; i < w->to && !w->failed; i++) {
        snprintf(name, sizeof(name), "bench-%05d", i);
        w->failed = kc_pod(w->c, "team-a", name, "{\"nvidia.com/gpu\": 1, \"cpu\": \"1\"}", NULL);
    }
    return NULL;
}

/* With every pod bound: one more Node, timed until gpuschedd logs it added. */
static void node_added(const struct kcluster *c, int pods)
{
    struct knode late = {"n-late", "Tesla-V100-SXM2-32GB", 16, 0, 0, 0, NULL};
    double t0 = now_s();
    if (kc_node(c, &late))
        return;
    while (!kc_log_has(&c->gsd, "msg=\"node added\" node=n-late") && now_s() - t0 < 60)
        kc_sleep_ms(5);
    if (kc_log_has(&c->gsd, "msg=\"node added\" node=n-late"))
        printf("extender a Node made with %5d pods bound: in gpuschedd's inventory after %.0f ms\n",
               pods, (now_s() - t0) * 1000);
}

static int run(int plain, int nodes, int pods)
{
    struct kcluster c;
    size_t cap = 64 + (size_t)nodes * 64;
    char *csv = malloc(cap);
    if (!csv)
        return 1;
    size_t len = (size_t)snprintf(csv, cap, "sn,cpu_milli,memory_mib,gpu,model\n");
    for (int i = 0; i < nodes; i++)
        len +=
            (size_t)snprintf(csv + len, cap - len, "n-%04d,96000,1572864,16,V100-SXM2-32GB\n", i);
    int rc = plain ? kc_start_plain(&c, csv) : kc_start(&c, csv, NULL, NULL);
    free(csv);
    if (rc || kc_namespace(&c, "team-a")) {
        fprintf(stderr, "bench_kube: the control plane did not start\n");
        kc_stop(&c);
        return 1;
    }
    double t0 = now_s(), created = 0;
    struct creator w[CREATORS];
    pthread_t th[CREATORS];
    int started[CREATORS];
    for (int i = 0; i < CREATORS; i++) {
        w[i] = (struct creator){&c, pods * i / CREATORS, pods * (i + 1) / CREATORS, 0};
        started[i] = pthread_create(&th[i], NULL, create, &w[i]) == 0;
        if (!started[i])
            create(&w[i]);
    }
    for (int i = 0; i < CREATORS; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        rc |= w[i].failed;
    }
    created = now_s();
    long left = rc ? -1 : pods;
    while (left > 0 && now_s() - t0 < 1800) {
        kc_sleep_ms(100);
        left = unbound(&c);
    }
    double t = now_s() - t0;
    if (left == 0)
        printf("%-8s %4d nodes %5d pods: all bound in %6.2f s (created in %5.2f s): %7.1f pods "
               "bound/s\n",
               plain ? "plain" : "extender", nodes, pods, t, created - t0, (double)pods / t);
    if (left == 0 && !plain)
        node_added(&c, pods);
    else if (left != 0)
        fprintf(stderr, "bench_kube: %ld pods still unbound after %.0f s (logs: GS_E2E_KEEP=1)\n",
                left, t);
    kc_stop(&c);
    return left == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    int nodes = 100, pods = 1000, status = 0;
    const char *mode = "both";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--nodes"))
            nodes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--pods"))
            pods = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--mode"))
            mode = argv[i + 1];
        else
            nodes = -1;
    }
    if (argc % 2 == 0 || nodes < 1 || nodes > 5000 || pods < 1 || pods > 16 * nodes ||
        (strcmp(mode, "both") && strcmp(mode, "plain") && strcmp(mode, "extender"))) {
        fprintf(stderr, "usage: bench_kube [--nodes 1..5000] [--pods 1..16xNODES] "
                        "[--mode extender|plain|both]\n");
        return 2;
    }
    if (strcmp(mode, "plain"))
        status |= run(0, nodes, pods);
    if (strcmp(mode, "extender"))
        status |= run(1, nodes, pods);
    return status;
}
