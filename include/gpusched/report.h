/*
 * gpusched — reports of trace replays: a table for people, JSON for programs (the shape of
 * SCENARIO "Output": {"pods": [...], "summary": {...}}), and the allocation curve as CSV.
 *
 * Runs come as a matrix: @npol policies x @nseeds seeds, run [p * nseeds + k]. Figures over
 * several seeds are means. Percentages are computed in integer basis points and printed with
 * two decimals.
 */
#ifndef GPUSCHED_REPORT_H
#define GPUSCHED_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "gpusched/sim.h"

struct gs_diag;

/* The arrived-% points the reports show, as in the FGD study's figures. */
extern const int gs_report_points[6]; /* 80, 90, 95, 100, 110, 130 */

/* Context shared by the reports: what was run on what. */
struct gs_report_ctx {
    const struct gs_trace_node *nodes;
    size_t nnodes;
    const struct gs_trace_pod *pods;
    size_t npods;
    const char *nodes_path, *pods_path, *sequence_path; /* sequence may be NULL */
    int tune_permille;                                  /* 0 with a sequence */
    const char *note;                                   /* one more header line, or NULL */
};

/* gs_report_text() - the side-by-side table on @f. */
void gs_report_text(FILE *f, const struct gs_report_ctx *ctx, struct gs_sim_run *const *runs,
                    size_t npol, size_t nseeds);

/*
 * gs_report_json() - write @path ("-": standard output): one run gives {"pods", "summary",
 * "curve"}; several give
 * {"runs": [{"policy", "seed", "pods", "summary", "curve"}...], "mean": {policy: summary}}.
 * "curve" is {"arrived_pct": [0, 1, ...], "allocation_pct": [...]}: the allocation % at each whole
 * arrived % (gs_sim_alloc_at()), null where no arrival came near it.
 * Return: 0; -EIO with @d naming the file; -ENOMEM.
 */
int gs_report_json(const char *path, const struct gs_report_ctx *ctx,
                   struct gs_sim_run *const *runs, size_t npol, size_t nseeds, struct gs_diag *d);

/*
 * gs_report_curve() - write @path ("-": standard output) as CSV: policy, seed, seq, pod,
 * arrived_milli, allocated_milli, arrived_pct, allocation_pct; one row per arrival of every run.
 * Return: 0; -EIO with @d naming the file.
 */
int gs_report_curve(const char *path, const struct gs_report_ctx *ctx,
                    struct gs_sim_run *const *runs, size_t nruns, struct gs_diag *d);

#endif
