/*
 * gpusched — where the files gpusched ships are read from: the default rate card
 * (billing/rates.yaml), the report's style sheet and scripts (report/), and the Alibaba trace the
 * simulator and gpuschedd fall back on (alibaba-gpu-v2023/).
 *
 * A program run from the build tree it was built in (build/gpusched as the README runs it, and
 * the tests) reads the source tree's data/; any other copy — one `meson install` put under its
 * prefix — reads $prefix/$datadir/gpusched (/usr/local/share/gpusched by default), where meson
 * install puts the same files, so an installed gpusched or gpuschedd needs no source tree.
 * Depends on libc only.
 */
#ifndef GPUSCHED_DATADIR_H
#define GPUSCHED_DATADIR_H

#include <stddef.h>

/* The shipped files, under data/ (gs_data_file()'s @rel). */
#define GS_DATA_RATES  "billing/rates.yaml"                             /* the default RateCard */
#define GS_DATA_REPORT "report"                                         /* report.css, report.js */
#define GS_DATA_NODES  "alibaba-gpu-v2023/openb_node_list_gpu_node.csv" /* the default nodes */
#define GS_DATA_PODS   "alibaba-gpu-v2023/openb_pod_list_default.csv"   /* the default pods */

/* Room for any path gs_data_file() writes (PATH_MAX on Linux). */
#define GS_DATA_PATH_MAX 4096

/*
 * gs_data_file() - the path of a file gpusched ships.
 * @rel:  its path under data/, e.g. "billing/rates.yaml"
 * @buf:  where the path is written, @size bytes (GS_DATA_PATH_MAX holds any); the caller owns it
 * Thread-safe: it keeps no state.
 * Return: @buf, the path (absolute); "" when @size cannot hold it.
 */
char *gs_data_file(const char *rel, char *buf, size_t size);

#endif
