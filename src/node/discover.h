/*
 * Discovery of the machine's topology tree (gpusched/topo.h) by the best source present: NVML
 * (nvml.h), else the text of `nvidia-smi topo -m` (gpusched/topotext.h), else hwloc's PCI tree
 * (NVIDIA display and 3D controllers, PCI vendor 0x10de, with the bridges between them; no NVLink).
 * Each source fills the same tree; the first that finds at least one GPU wins.
 */
#ifndef GS_NODE_DISCOVER_H
#define GS_NODE_DISCOVER_H

#include <stdio.h>

struct gs_diag;
struct gs_nvml;
struct gs_topo;

enum gs_discover_source { GS_FROM_NVML, GS_FROM_SMI, GS_FROM_HWLOC };

struct gs_discover_opts {
    const char *nvml_lib; /* NULL: GS_NVML_LIB (nvml.h) through the dynamic loader */
    const char *smi;      /* the nvidia-smi command; NULL: GS_DISCOVER_SMI on PATH */
    const char
        *hwloc_xml;     /* an hwloc XML export to read instead of this machine; NULL: the machine */
    const char *sysfs;  /* NULL: GS_DISCOVER_SYSFS; else a folder laid out like it (tests) */
    FILE *log;          /* each source tried and why it was passed over; may be NULL */
    int smi_timeout_ms; /* the nvidia-smi command's time, ms; 0: GS_DISCOVER_SMI_TIMEOUT_MS */
};

#define GS_DISCOVER_SMI   "nvidia-smi" /* the command, found on PATH by /bin/sh */
#define GS_DISCOVER_SYSFS "/sys"       /* where sysfs is mounted */

/* nvidia-smi answers in a second or two; one that hangs (a wedged driver) must not hang the
 * agent: past this it is killed, with whatever it started, and discovery goes on. */
#define GS_DISCOVER_SMI_TIMEOUT_MS 30000

/*
 * gs_discover() - fill @t from the first source that works, in the order above.
 * @nvml: when non-NULL and NVML loaded, *@nvml is the open library (the caller closes it with
 *        gs_nvml_close()); NULL when another source was used.
 * The nvidia-smi command runs through /bin/sh in a process group of its own; past
 * @o->smi_timeout_ms, or past GS_TOPOTEXT_MAX_BYTES of output, it and the processes it started are
 * killed (SIGKILL) and the source fails with that reason.
 * Return: the source (>= 0); -ENODEV with @d listing why each source failed.
 */
int gs_discover(const struct gs_discover_opts *o, struct gs_topo *t, struct gs_nvml **nvml,
                struct gs_diag *d);

/* gs_discover_source_name() - "nvml", "nvidia-smi", "hwloc". */
const char *gs_discover_source_name(enum gs_discover_source s);

/*
 * gs_discover_hwloc() - the hwloc source alone (@xml: an XML export, or NULL for this machine).
 * Return: 0 with @t filled (0 GPUs when none); -EINVAL with @d when @xml holds no topology;
 * -EIO with @d when hwloc cannot read this machine.
 */
int gs_discover_hwloc(const char *xml, struct gs_topo *t, struct gs_diag *d);

#endif
