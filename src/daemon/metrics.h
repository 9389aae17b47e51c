/*
 * gpuschedd's Prometheus metrics: GET /metrics, and latency histograms.
 */
#ifndef GSD_METRICS_H
#define GSD_METRICS_H

#include <stdint.h>

struct gsd_req;
struct gsd_state;

struct gsd_hist {
    const double *bounds; /* upper bounds in seconds, ascending */
    int n;
    uint64_t count[24]; /* per bucket (not cumulative), last one +Inf */
    uint64_t total;
    int64_t sum_us;
};

void gsd_hist_observe(struct gsd_hist *h, int64_t us);
void gsd_metrics_handle(struct gsd_state *st, struct gsd_req *r);

#endif
