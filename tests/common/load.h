/*
 * Load against a real gpuschedd, for the benchmarks and the attack test: a large inventory,
 * kube-scheduler's extender arguments for it, and latency records read as percentiles.
 */
#ifndef GS_TEST_LOAD_H
#define GS_TEST_LOAD_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

/* l_now() - seconds on the monotonic clock. */
double l_now(void);

/* l_write_nodes() - @n nodes "node-%04d" at @path: A100 and V100 boards of 8, T4 boxes of 4
 * (every fifth), the CPU and memory of the trace. Return: 0; -1. */
int l_write_nodes(const char *path, int n);

/* l_extender_args() - ExtenderArgs for pod team-a/@pod asking @gpus cards (@cores percent of
 * each when 1..99, else whole; or one MIG instance @mig) with the @n names of l_write_nodes(), in
 * order or @reversed (malloc'd JSON text). */
char *l_extender_args(int n, int reversed, const char *pod, int gpus, int cores, const char *mig);

/* l_rss_kb() - the resident set of process @pid, KiB (/proc/PID/status VmRSS); 0 unknown. */
long l_rss_kb(pid_t pid);

/* l_pct() - the @p quantile (0..1) of @v[0..@n), sorting it; 0 when @n is 0. */
double l_pct(double *v, size_t n, double p);

/* Latencies in seconds, from any thread, with the calls that got no answer. */
struct l_lat {
    pthread_mutex_t mu;
    double *v;
    size_t n, cap;
    size_t failed;
};
void l_lat_init(struct l_lat *l);
void l_lat_add(struct l_lat *l, double seconds, int ok);
void l_lat_free(struct l_lat *l);
/* l_lat_pct() - the @p quantile (0..1) in milliseconds; 0 when there is none. Sorts @l. */
double l_lat_pct(struct l_lat *l, double p);

#endif
