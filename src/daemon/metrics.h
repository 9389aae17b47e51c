/*
 * gpuschedd's Prometheus metrics: GET /metrics, and latency histograms.
 */
#ifndef GSD_METRICS_H
#define GSD_METRICS_H

#include <stdint.h>

#include <stddef.h>

struct gsd_http_stats;
struct gsd_snap;

struct gsd_hist {
    const double *bounds; /* upper bounds in seconds, ascending */
    int n;
    uint64_t count[24]; /* per bucket (not cumulative), last one +Inf */
    uint64_t total;
    int64_t sum_us;
};

/* gsd_hist_observe() - count one duration of @us microseconds. */
void gsd_hist_observe(struct gsd_hist *h, int64_t us);

/* What a scrape shows (metrics.c): aggregates; with a token, names; with perPod, pods too. */
enum { GSD_METRICS_AGGREGATE = 0, GSD_METRICS_NAMED = 1, GSD_METRICS_PER_POD = 2 };

/*
 * gsd_metrics_render() - the scrape of snapshot @n at @level, with the listener's counters @h
 * (NULL: none), as Prometheus text (malloc'd, *@len bytes). Any thread. O(pods + cards).
 * Return: the text; NULL out of memory or past 512 MiB.
 */
char *gsd_metrics_render(const struct gsd_snap *n, int level, const struct gsd_http_stats *h,
                         size_t *len);

#endif
