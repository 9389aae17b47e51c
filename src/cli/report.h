/*
 * gpusched report: what it reads of a simulation's JSON, shared by its three parts.
 *
 * report.c reads the document a value at a time (jstream.h) and keeps, per run, only what the
 * page draws: summaries, the timeline's series, evictions, a wait histogram per workload kind, the
 * bill, and each card's spans of use; report_map.c turns the spans into each card's state at the
 * times of the cluster map's slider; report_html.c writes the page.
 * Bounds: RP_RUNS_MAX runs, RP_PODS_MAX pods a run, RP_SPANS_MAX card spans and RP_EVICTIONS_MAX
 * evictions in all, RP_NAMES_MAX distinct names; a file that passes one is refused, named.
 */
#ifndef GS_CLI_REPORT_H
#define GS_CLI_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "gpusched/names.h"
#include "gpusched/page.h"

struct gs_bill;
struct gs_diag;

#define RP_RUNS_MAX      1024
#define RP_PODS_MAX      4000000
#define RP_SPANS_MAX     (32u << 20)
#define RP_EVICTIONS_MAX (16u << 20)
#define RP_NAMES_MAX     (4u << 20)
#define RP_AT_MAX        160 /* bytes of a path in the document, in messages */

/* How a card was held during a span, as the usage "mode" says: enum gs_card_mode's order, so its
 * gs_card_mode_name() names the map's states as gpuschedd names its cards. */
enum rp_mode { RP_FREE = 0, RP_WHOLE, RP_SHARED, RP_MIG, RP_TIMESLICE };

/* One card of one use of a pod. */
struct rp_span {
    int64_t start_s, end_s;
    int32_t node;    /* doc->nodes index of the node's name */
    int32_t tenant;  /* doc->tenants index */
    int32_t profile; /* doc->profiles index of the MIG profile, -1 none */
    int16_t gpu;
    int8_t mig_start; /* the instance's first memory slice */
    uint8_t mode;     /* enum rp_mode */
};

/* The causes of an eviction the simulator writes (timeline.evictions[].kind), in this order. */
#define RP_EVICTION_KINDS 3 /* "preemption", "reclaim", "node" (its node or card failed) */

struct rp_eviction {
    int64_t t_s;
    int32_t tenant;
    int kind; /* index into RP_EVICTION_KINDS' names */
};

struct rp_kind {
    char *name;
    int64_t pods, counts[GS_WAIT_BINS];
};

struct rp_run {
    char *name; /* the way, or the replay's policy */
    int64_t seed;
    json_t *summary, *curve;
    /* The timeline (scenario runs). */
    int has_timeline;
    int64_t step_s, steps, capacity_milli;
    json_t *tl_tenants, *tl_queues;
    struct rp_eviction *ev;
    size_t nev, capev;
    /* Pods. */
    int64_t npods, scenario_pods, plain_pods;
    int has_pods;       /* "pods" given (a way of a comparison must give it) */
    uint64_t pods_hash; /* FNV-1a of its pods, each as compact JSON with sorted keys, in order */
    uint64_t tl_hash;   /* the same of its timeline's evictions and keys the report does not read */
    char first_plain[RP_AT_MAX]; /* the path of the first pod without usage, for messages */
    int placements_missing;
    struct rp_kind *kinds;
    size_t nkinds;
    struct gs_bill *bill;
    struct gs__pods_seen last; /* what its pods say: the use that ends latest, states */
    const char **names;
    size_t nnames, capnames;
    struct rp_span *spans;
    size_t nspans, capspans;
    json_t *map; /* report_map.c's output */
};

struct rp_doc {
    const char *path;
    const struct gs_ratecard *rc;
    struct rp_run *top;   /* the document's own run, when it has one */
    struct rp_run **ways; /* scenario comparisons: "ways" */
    size_t nways;
    int has_ways;         /* "ways" given, even empty */
    struct rp_run **runs; /* replays of several policies or seeds: "runs" */
    size_t nruns;
    json_t *mean, *cluster;
    struct gs_names nodes, tenants, profiles;
    size_t nspans, nevictions; /* over all runs, against the caps */
};

/*
 * rp_map() - for every run of @runs (@n), the state of each card of @doc->cluster at the times
 * of the cluster map's slider, into run->map ({"times_s", "width", "cells"}); the states into
 * *@states ([{"mode", "tenants", "mig", "slices"}], state 0 is a free card).
 * Return: 0; -EINVAL naming a placement on a node or card the cluster has not; -ENOMEM.
 */
int rp_map(struct rp_doc *doc, struct rp_run **runs, size_t n, json_t **states, struct gs_diag *d);

/*
 * rp_write_html() - the page at @out: @title, the report's @data (embedded as JSON), Chart.js read
 * from @chart_js, the page's own script and style from @assets_dir.
 * Return: 0; -ENOENT/-EIO with @d naming the file that could not be read or written.
 */
int rp_write_html(const char *out, const char *title, const json_t *data, const char *chart_js,
                  const char *assets_dir, struct gs_diag *d);

#endif
