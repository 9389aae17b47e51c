/*
 * gpusched — reading the text of `nvidia-smi topo -m` into a topology tree (gpusched/topo.h).
 *
 * What real machines print is read: columns separated by tabs or spaces (empty tab fields are
 * skipped); with or without the legend; NIC rows and columns (mlx5_0, NIC0 with a "NIC Legend"
 * naming them); the CPU Affinity, NUMA Affinity (one node, a list "0,1" or a range "6-7") and GPU
 * NUMA ID columns, any of them absent; cells X, SYS (SOC on old drivers), NODE, PHB, PXB, PIX and
 * NV# (# bonded NVLinks, 1..99); ANSI escapes (bold, underline) anywhere in a line. Lines before
 * the header row (a shell prompt, a comment) are not part of the output and are passed over; the
 * matrix ends at the first blank line; after it, only the "NIC Legend" entries are read, so a
 * legend and a second matrix (`nvidia-smi topo -p2p`) that follow are not data.
 *
 * A malformed matrix (an unknown cell, a row of the wrong length, a row out of order, X off the
 * diagonal, a pair that reads differently from its two ends, a missing GPU row) is one error
 * naming the file, line and column. So is what would otherwise be lost or overwritten: a NUL byte,
 * an affinity column given twice, two NICs of one name (in the header or through the legend), a
 * second legend entry for one NIC or one naming no column, a NUMA node (NUMA Affinity, GPU NUMA
 * ID) of GS_TOPO_NUMA_MAX or more. Input is capped at GS_TOPOTEXT_MAX_BYTES.
 */
#ifndef GPUSCHED_TOPOTEXT_H
#define GPUSCHED_TOPOTEXT_H

#include <stddef.h>
#include <stdio.h>

struct gs_diag;
struct gs_topo;

#define GS_TOPOTEXT_MAX_BYTES ((size_t)1 << 20) /* nvidia-smi prints a few KiB */

/*
 * gs_topo_parse_text() - read @len bytes of @buf (need not be NUL-terminated) into @out and
 * derive its domains and groups (gs_topo_derive()).
 * @path: the name messages give the text ("-" for standard input); not opened.
 * Return: 0 and @out filled; -EINVAL with @d set to "path:line:column: what" (@out is then
 * unspecified); -E2BIG past GS_TOPOTEXT_MAX_BYTES.
 */
int gs_topo_parse_text(const char *path, const char *buf, size_t len, struct gs_topo *out,
                       struct gs_diag *d);

/*
 * gs_topo_load() - read file @path ("-" = standard input) as gs_topo_parse_text() does.
 * Return: as gs_topo_parse_text(); -errno of open/read with @d naming the file; -ENOMEM.
 */
int gs_topo_load(const char *path, struct gs_topo *out, struct gs_diag *d);

/* Output forms of gs_topo_write(). */
enum gs_topo_format {
    GS_TOPO_HUMAN, /* the tree, one line per domain, group, GPU and NIC */
    GS_TOPO_JSON,  /* one JSON object: gpus, pcieDomains, nvlinkGroups, nvlinks, nics, links */
    GS_TOPO_YAML   /* a ready entry of a Cluster's spec.nodeTemplates (SCENARIO.md) */
};

/*
 * gs_topo_write() - write @t to @f in @fmt.
 * @name: the template's name (YAML) or the title (human, JSON); NUL-terminated.
 * @model: the catalog name of the GPU model (YAML's gpuModel), or NULL when not known: the YAML
 *         form then needs it and fails.
 * Return: 0; -EINVAL with @d set when YAML lacks @model or @name is not a valid template name;
 * -EIO when writing failed; -ENOMEM.
 */
int gs_topo_write(FILE *f, const struct gs_topo *t, enum gs_topo_format fmt, const char *name,
                  const char *model, struct gs_diag *d);

#endif
