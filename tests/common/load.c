/* Load against a real gpuschedd; see load.h. */
#include "load.h"

#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double l_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int l_write_nodes(const char *path, int n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "sn,cpu_milli,memory_mib,gpu,model\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "node-%04d,96000,786432,%d,%s\n", i, i % 5 == 4 ? 4 : 8,
                i % 5 == 4   ? "T4"
                : i % 5 == 3 ? "V100M32"
                             : "A100-SXM4-80GB");
    return fclose(f) ? -1 : 0;
}

char *l_extender_args(int n, int reversed, const char *pod, int gpus, int cores, const char *mig)
{
    json_t *names = json_array();
    for (int i = 0; i < n; i++) {
        char name[24];
        snprintf(name, sizeof(name), "node-%04d", reversed ? n - 1 - i : i);
        json_array_append_new(names, json_string(name));
    }
    char *text = h_pod("team-a", pod, mig ? 0 : gpus, mig ? 0 : cores);
    json_t *args =
        json_pack("{s:o, s:n, s:o}", "Pod", json_loads(text, 0, NULL), "Nodes", "NodeNames", names);
    json_t *spec = json_object_get(json_object_get(args, "Pod"), "spec");
    json_t *c = json_array_get(json_object_get(spec, "containers"), 0);
    if (mig)
        json_object_set_new(json_object_get(json_object_get(c, "resources"), "limits"), mig,
                            json_integer(1));
    char *body = json_dumps(args, JSON_COMPACT);
    json_decref(args);
    free(text);
    return body;
}

void l_lat_init(struct l_lat *l)
{
    memset(l, 0, sizeof(*l));
    pthread_mutex_init(&l->mu, NULL);
}

void l_lat_add(struct l_lat *l, double seconds, int ok)
{
    pthread_mutex_lock(&l->mu);
    if (ok && l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1024;
        double *m = realloc(l->v, cap * sizeof(*m));
        if (m) {
            l->v = m;
            l->cap = cap;
        }
    }
    if (!ok)
        l->failed++;
    else if (l->n < l->cap)
        l->v[l->n++] = seconds;
    pthread_mutex_unlock(&l->mu);
}

void l_lat_free(struct l_lat *l)
{
    free(l->v);
    pthread_mutex_destroy(&l->mu);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

long l_rss_kb(pid_t pid)
{
    char path[64], line[256];
    long kb = 0;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

double l_pct(double *v, size_t n, double p)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof(*v), cmp_double);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

double l_lat_pct(struct l_lat *l, double p)
{
    pthread_mutex_lock(&l->mu);
    double r = l_pct(l->v, l->n, p) * 1e3;
    pthread_mutex_unlock(&l->mu);
    return r;
}
