/*
 * gpusched — the topology tree of one machine, as discovery finds it: its GPUs, the PCIe and
 * NVLink links between every pair, and the PCIe domains and NVLink groups derived from them
 * (zone -> node -> PCIe domain -> NVLink group -> GPU, DESIGN.md "Topology tree").
 *
 * Sources: the text of `nvidia-smi topo -m` (gpusched/topotext.h), NVML and hwloc (the node
 * agent). Each fills the per-pair link matrix and the per-GPU facts, then calls gs_topo_derive(),
 * the one rule that turns links into domains and groups, so every source yields the same tree for
 * the same machine.
 *
 * The link classes are nvidia-smi's (its legend): X self; SYS across the SMP interconnect between
 * NUMA nodes; NODE across host bridges within a NUMA node; PHB through a host bridge; PXB through
 * several PCIe bridges; PIX through at most one PCIe bridge; NV# a bonded set of # NVLinks.
 *
 * Invariants after gs_topo_derive(): every GPU is in exactly one PCIe domain (domains numbered
 * 0.. in order of their lowest GPU) and in at most one NVLink group (GS_NO_GROUP when none, groups
 * numbered the same way); each NVLink group is a clique (every pair of its GPUs linked); edges[]
 * lists every NVLink-linked pair once (a < b, ascending), with its bonded link count, so links
 * between groups (a DGX-1's cross links) are kept for scoring. Plain values, no allocation; thread
 * safety: none needed (no shared state).
 */
#ifndef GPUSCHED_TOPO_H
#define GPUSCHED_TOPO_H

#include <stdint.h>

#include "gpusched/cluster.h"

/* A CPU affinity list as printed, bytes with the NUL: CPUs numbered alternately across sockets
 * are listed one by one ("0,2,4,...,254" is 700 bytes). */
#define GS_TOPO_CPUS_MAX   1024
#define GS_TOPO_NICS_MAX   32 /* NIC rows and columns of one matrix */
#define GS_TOPO_NAME_MAX   64 /* a NIC's or a GPU's name, bytes with the NUL */
#define GS_TOPO_UUID_MAX   96 /* "GPU-<uuid>" or "MIG-<uuid>", bytes with the NUL */
#define GS_TOPO_PCI_MAX    32 /* "00000000:07:00.0", bytes with the NUL */
#define GS_TOPO_EDGES_MAX  (GS_GPUS_MAX * (GS_GPUS_MAX - 1) / 2)
#define GS_TOPO_MIG_MAX    7  /* MIG instances of one card (seven on every MIG-capable model) */
#define GS_TOPO_NVLINK_MAX 18 /* NVLinks of one card (18 on H100 SXM) */
/* NUMA node numbers are below it: Linux's MAX_NUMNODES is 1 << NODES_SHIFT, at most 1 << 10 */
#define GS_TOPO_NUMA_MAX 1024

/* Link classes, ordered from farthest to nearest, so a larger value is a closer link. */
enum gs_link {
    GS_LINK_NONE = 0, /* not known */
    GS_LINK_SYS,
    GS_LINK_NODE,
    GS_LINK_PHB,
    GS_LINK_PXB,
    GS_LINK_PIX,
    GS_LINK_NV, /* NVLink; the link count is in nvlinks[][] */
    GS_LINK_SELF
};

/* gs_link_name() - "SYS", "NODE", "PHB", "PXB", "PIX", "NV", "X" or "?"; a static string. */
const char *gs_link_name(enum gs_link l);

/* One MIG instance found on a card (NVML discovery only). */
struct gs_topo_mig {
    char uuid[GS_TOPO_UUID_MAX];
    char profile[24];   /* NVIDIA's name ("2g.20gb"), "" when the card's model is not known */
    int gi_profile;     /* NVML GPU instance profile id (NVML_GPU_INSTANCE_PROFILE_*) */
    int start;          /* placement start slot */
    int size;           /* placement size in slots */
    int64_t memory_mib; /* memory of the instance */
};

struct gs_topo_gpu {
    char name[GS_TOPO_NAME_MAX]; /* product name ("NVIDIA H100 80GB HBM3"); "" from text */
    char uuid[GS_TOPO_UUID_MAX]; /* "GPU-..."; "" from text */
    char pci[GS_TOPO_PCI_MAX];   /* PCI bus id; "" from text */
    char cpus[GS_TOPO_CPUS_MAX]; /* CPU affinity as the kernel lists CPUs ("0-11,24-35"), "" */
    int numa;                    /* NUMA affinity: the lowest NUMA node it is near, -1 unknown */
    char numa_list[GS_TOPO_CPUS_MAX]; /* NUMA affinity as printed ("0", "6-7", "0,1"), "" */
    int gpu_numa;                     /* GPU NUMA ID (a GPU with its own NUMA node), -1 = N/A */
    int64_t memory_mib;               /* total memory, 0 when not known */
    int mig_mode;                     /* 1 MIG enabled, 0 disabled, -1 not supported / unknown */
    int minor;                        /* /dev/nvidia<minor>, -1 unknown */
    int nmig;
    struct gs_topo_mig mig[GS_TOPO_MIG_MAX];
};

/* An NVLink-linked pair of GPUs: a < b, links >= 1 bonded links. */
struct gs_topo_edge {
    uint8_t a, b, links;
};

struct gs_topo {
    int ngpus; /* 0..GS_GPUS_MAX */
    struct gs_topo_gpu gpu[GS_GPUS_MAX];
    /* enum gs_link of each pair, symmetric: its PCIe class, or GS_LINK_NV where the source
     * hides the PCIe path of an NVLinked pair (nvidia-smi prints NV#; NVML tells both) */
    uint8_t link[GS_GPUS_MAX][GS_GPUS_MAX];
    uint8_t nvlinks[GS_GPUS_MAX][GS_GPUS_MAX]; /* bonded NVLinks of each pair, symmetric */
    int nnics;
    char nic[GS_TOPO_NICS_MAX][GS_TOPO_NAME_MAX];    /* NIC names (mlx5_0), legend applied */
    uint8_t nic_link[GS_TOPO_NICS_MAX][GS_GPUS_MAX]; /* enum gs_link of each NIC to each GPU */
    /* Derived by gs_topo_derive(). */
    uint8_t pcie_domain[GS_GPUS_MAX];
    uint8_t nvlink_group[GS_GPUS_MAX];
    int npcie, nnvlink; /* domains and groups */
    int nedges;
    struct gs_topo_edge edges[GS_TOPO_EDGES_MAX];
};

/*
 * gs_topo_init() - @t empty: no GPU, no NIC, every NUMA field -1, every MIG mode -1.
 */
void gs_topo_init(struct gs_topo *t);

/*
 * gs_topo_derive() - fill @t's PCIe domains, NVLink groups and edges from its link matrix.
 *
 * PCIe domains: GPUs joined by PIX or PXB (behind one PCIe switch tree, never through a host
 * bridge), directly or both to one NIC (nvidia-smi prints NV# for an NVLinked pair and hides its
 * PCIe path; a NIC both sit beside shows it), are one domain, transitively; every other GPU is a
 * domain of its own. NVLink groups:
 * the GPUs linked by NVLink are split into cliques, each the largest clique that holds the lowest
 * GPU not yet placed (ties: the lowest GPU indexes), so an all-to-all NVSwitch board is one group
 * and a DGX-1 hybrid cube-mesh gives the quads {0,1,2,3} and {4,5,6,7}; a GPU whose clique would
 * be itself alone has no group. NVLink pairs count as PCIe-near only if their PCIe class says so.
 * Complexity: O(GPUs x 2^GPUs) at worst (16 GPUs: about a million steps), deterministic.
 */
void gs_topo_derive(struct gs_topo *t);

/*
 * gs_topo_nvlinks_of() - bonded NVLinks among the GPUs of @mask (bit i = GPU i), summed over
 * pairs; what a placement spanning NVLink groups keeps of NVLink. O(edges).
 */
int gs_topo_nvlinks_of(const struct gs_topo *t, uint32_t mask);

#endif
