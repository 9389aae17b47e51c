/*
 * gpusched — the cluster: its topology tree and what is free on every node.
 *
 * Topology: zone -> node -> PCIe domain -> NVLink group -> GPU. Every GPU of a node has a PCIe
 * domain index and an NVLink group index (GS_NO_GROUP when it has no NVLink peer). A node template
 * is the pair of per-GPU index arrays; gs_topology_default() gives the documented default.
 *
 * Invariants: every quantity is an integer in its unit — CPU in milli-cores, host memory in MiB,
 * GPU share in milli-GPU (1000 = one whole card). For every node 0 <= free <= capacity on every
 * resource; a GPU's free share is in 0..1000. Nodes are numbered 0..n-1 in insertion order and
 * never removed; names are unique. The cluster is changed only through the scheduler
 * (gs_sched_bind(), gs_sched_release()), which keeps its node-state index in step. Thread safety:
 * none; one owner at a time.
 */
#ifndef GPUSCHED_CLUSTER_H
#define GPUSCHED_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

struct gs_diag;
struct gs_cluster;

#define GS_GPUS_MAX  16   /* GPUs per node */
#define GS_NO_GROUP  0xff /* "no NVLink group" */
#define GS_NAME_MAX  64   /* node and zone names, bytes with the NUL */
#define GS_NODES_MAX 1000000
#define GS_MILLI_GPU 1000

/* What a caller states about one node. Strings are copied; the struct may be reused. */
struct gs_node_spec {
    const char *name;   /* unique, 1..GS_NAME_MAX-1 bytes */
    const char *zone;   /* availability zone; NULL or "" = "default" */
    int model;          /* catalog index (gs_catalog_find()); ignored when gpus == 0 */
    int gpus;           /* 0..GS_GPUS_MAX */
    int64_t cpu_milli;  /* > 0 */
    int64_t memory_mib; /* > 0 */
    /* Per-GPU PCIe domain and NVLink group indexes (GPU i at [i]); NULL = the default template. */
    const uint8_t *pcie_domain;
    const uint8_t *nvlink_group;
};

/* Bytes of a card list's text, with the NUL: GS_GPUS_MAX indexes of at most 2 digits, commas. */
#define GS_GPU_LIST_MAX (GS_GPUS_MAX * 3)

/*
 * gs_gpu_list_text() - the cards of @mask (bit i: card i; bits at or past GS_GPUS_MAX are not
 * cards) as gpuschedd writes them in its store, its answers and a pod's gpusched.io/gpu-index
 * annotation: ascending indexes, comma-separated, no space ("0,1,5"; "" for none).
 * @out: GS_GPU_LIST_MAX bytes, the caller's. Return: the bytes written, without the NUL.
 */
size_t gs_gpu_list_text(uint32_t mask, char out[GS_GPU_LIST_MAX]);

/*
 * gs_gpu_list_parse() - the cards of text @s written so (NUL-terminated, may be NULL: refused)
 * into *@mask. Return: the number of cards (0 for ""); -EINVAL for any other text: a sign, a space,
 * a leading zero, an index of GS_GPUS_MAX or more, an empty item, an index not above the last.
 */
int gs_gpu_list_parse(const char *s, uint32_t *mask);

/*
 * gs_topology_default() - the default template of a node with @gpus cards of catalog model @model.
 * SXM boards (V100 SXM2, A100/H100/H200 SXM, HGX): all GPUs in one NVLink group (NVSwitch or
 * hybrid cube mesh treated as one group), two GPUs per PCIe switch. PCIe cards: no NVLink, four
 * GPUs per PCIe switch. Both as on the reference HGX/DGX and 4-GPU-per-switch PCIe boards.
 * @pcie, @nvlink: arrays of at least @gpus entries, written.
 */
void gs_topology_default(int model, int gpus, uint8_t *pcie, uint8_t *nvlink);

/*
 * gs_topology_check() - whether a node's NVLink groups @group and bonded links @nvlinks (a
 * symmetric matrix, 0 no link) agree with each other and with catalog model @model: a card
 * without NVLink has neither; an NVLinked GPU is in a group (a DGX-1's cross links join two
 * groups, so not necessarily its peer's); with links given, a GPU in a group of two or more is
 * linked to some GPU. Return: 0, or -EINVAL with the reason in @why.
 */
int gs_topology_check(int model, int gpus, const uint8_t *group,
                      const uint8_t (*nvlinks)[GS_GPUS_MAX], char *why, size_t size);

/*
 * gs_cluster_new() - an empty cluster.
 * Return: 0 and *@out set (free with gs_cluster_free()), or -ENOMEM.
 */
int gs_cluster_new(struct gs_cluster **out);

/* gs_cluster_free() - free @c and its nodes; NULL is allowed. */
void gs_cluster_free(struct gs_cluster *c);

/*
 * gs_cluster_add_node() - add a node, all of it free.
 * Return: the new node's index (>= 0); -EINVAL with @d set (bad name, duplicate name, resource out
 * of range, unknown model, bad topology index); -ENOMEM; -E2BIG past GS_NODES_MAX nodes.
 * Complexity: amortised O(1).
 */
int gs_cluster_add_node(struct gs_cluster *c, const struct gs_node_spec *spec, struct gs_diag *d);

/*
 * gs_cluster_reshape_node() - node @i (0..count-1) made again as @spec says, under its name,
 * all of it free: the caller has taken every pod off it first (a node taken in before its cards
 * were known, a Kubernetes Node whose device plugin registers after kubelet).
 * Return: 0; -ENOENT when @i is out of range; -EINVAL with @d set (@spec names another node, or
 * as gs_cluster_add_node()); -ENOMEM or -E2BIG for a zone not held before. Nothing changes
 * unless it returns 0. Complexity: O(nodes).
 */
int gs_cluster_reshape_node(struct gs_cluster *c, size_t i, const struct gs_node_spec *spec,
                            struct gs_diag *d);

/* gs_cluster_node_count() - number of nodes. */
size_t gs_cluster_node_count(const struct gs_cluster *c);

/* gs_cluster_gpu_count() - number of GPUs over all nodes. */
int64_t gs_cluster_gpu_count(const struct gs_cluster *c);

/* gs_cluster_model_mask() - bit i set when some node has GPUs of catalog model i. */
uint32_t gs_cluster_model_mask(const struct gs_cluster *c);

/*
 * gs_cluster_find() - index of the node named @name, or -ENOENT. Complexity: O(1) expected.
 */
int gs_cluster_find(const struct gs_cluster *c, const char *name);

/* gs_cluster_node_name() - the name of node @i (owned by @c), or NULL when out of range. */
const char *gs_cluster_node_name(const struct gs_cluster *c, size_t i);

/* Totals over the cluster, capacity and allocated, in their units. */
struct gs_cluster_totals {
    int64_t gpus;                        /* cards */
    int64_t gpu_milli, gpu_milli_used;   /* milli-GPU */
    int64_t cpu_milli, cpu_milli_used;   /* milli-cores */
    int64_t memory_mib, memory_mib_used; /* MiB */
    int64_t gpus_idle;                   /* cards with nothing allocated */
    int64_t gpus_partial;                /* cards partly allocated */
};

/* gs_cluster_totals() - fill @t; O(nodes x GPUs). */
void gs_cluster_totals(const struct gs_cluster *c, struct gs_cluster_totals *t);

/* One node as a caller reads it back: its shape and what is free now. */
struct gs_node_info {
    const char *name; /* owned by the cluster */
    const char *zone; /* owned by the cluster */
    int model;        /* catalog index; -1 when the node has no GPU */
    int gpus;
    int64_t cpu_milli, cpu_left;       /* milli-cores */
    int64_t memory_mib, memory_left;   /* MiB */
    uint16_t gpu_left[GS_GPUS_MAX];    /* free milli-GPU per card, [0..gpus) */
    uint8_t pcie_domain[GS_GPUS_MAX];  /* per card, [0..gpus): its PCIe domain index */
    uint8_t nvlink_group[GS_GPUS_MAX]; /* per card: its NVLink group index, GS_NO_GROUP none */
};

/*
 * gs_cluster_node_info() - fill @out with node @i's shape, topology and free resources.
 * Return: 0; -ENOENT when @i is out of range. O(GPUs of the node).
 */
int gs_cluster_node_info(const struct gs_cluster *c, size_t i, struct gs_node_info *out);

#endif
