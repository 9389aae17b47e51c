/* Layout of the cluster, shared by the core modules only. Invariants: see gpusched/cluster.h. */
#ifndef GS_CLUSTER_IMPL_H
#define GS_CLUSTER_IMPL_H

#include "gpusched/cluster.h"

struct gs_node {
    char name[GS_NAME_MAX];
    uint16_t zone;
    uint8_t model;
    uint8_t ngpu;
    int64_t cpu_milli, memory_mib;  /* capacity */
    int64_t cpu_left, memory_left;  /* free */
    uint16_t gpu_left[GS_GPUS_MAX]; /* free milli-GPU per card */
    uint8_t pcie[GS_GPUS_MAX];
    uint8_t nvlink[GS_GPUS_MAX];
    uint32_t npods;
    uint16_t tag_pods[GS_GPUS_MAX + 1]; /* pods per GPU request kind (GpuClustering) */
    uint32_t topo;                      /* hash of pcie[] and nvlink[] */
};

struct gs_cluster {
    struct gs_node *nodes;
    size_t n, cap;
    char (*zones)[GS_NAME_MAX];
    size_t nzones;
    int64_t gpus;
    uint32_t model_mask;
    int32_t *index; /* open addressing over node indexes by name; -1 empty */
    size_t index_cap;
};

#endif
