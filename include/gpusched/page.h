/*
 * gpusched — the report's HTML page, shared by `gpusched report` (a page that carries a run's
 * data) and gpuschedd's /ui (the same page without data, which fetches it from the API).
 *
 * Invariants: one page is one string that needs nothing else to open — its style sheet, Chart.js
 * and its scripts are inside, in this order: Chart.js, the data (a <script type=
 * "application/json" id="gs-report-data">, only when given), the renderer (report.js), then the
 * extra script when given. Nothing read ends an element early: the data's '<' are written as
 * \u003c, and a script or style sheet that holds "</script", "</style" or "<!--" is refused.
 * Depends on libc only.
 */
#ifndef GPUSCHED_PAGE_H
#define GPUSCHED_PAGE_H

#include <stddef.h>
#include <stdint.h>

struct gs_diag;

/*
 * The wait histogram both pages draw (a run's, from gpusched report; the live one, from
 * gpuschedd's GET /v1/waits): a pod's wait from submission to start, seconds, counted in bin 0
 * when it is 0, in bin b when gs_wait_edges_s[b-1] < wait <= gs_wait_edges_s[b], in the last
 * when it is over the last edge. The edges: 1 min, 5 min, 15 min, 1 h, 3 h, 6 h, 12 h.
 */
#define GS_WAIT_BINS 9
extern const int64_t gs_wait_edges_s[GS_WAIT_BINS - 1];
/* gs_wait_bin() - the bin (0..GS_WAIT_BINS-1) of a wait of @wait_s seconds (< 0 counts as 0). */
int gs_wait_bin(int64_t wait_s);

/* Where Debian's libjs-chart.js puts Chart.js 3. */
#define GS_PAGE_CHART_JS "/usr/share/javascript/chart.js/chart.min.js"

struct gs_page_spec {
    const char *title;      /* the page's <title>, HTML-escaped here */
    const char *chart_js;   /* path of Chart.js 3 (its "Chart.js vN" banner is checked) */
    const char *assets_dir; /* holds report.css and report.js */
    const char *extra_js;   /* a script of assets_dir run after report.js, or NULL */
    const char *data_json;  /* JSON text embedded as #gs-report-data, or NULL for none */
};

/*
 * gs_page_html() - the page @spec describes, as one NUL-terminated string.
 * Each file read is at most 8 MiB.
 * Return: 0 with *@out (malloc'd, the caller frees) and *@len (bytes, without the NUL);
 * -ENOENT a file cannot be read, -EINVAL a file is not what it should be (no Chart.js banner, a
 * sequence that would end its element), -ENOMEM; each with @d naming the file and why.
 */
int gs_page_html(const struct gs_page_spec *spec, char **out, size_t *len, struct gs_diag *d);

#endif
