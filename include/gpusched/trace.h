/*
 * gpusched — readers of the Alibaba GPU-sharing trace (cluster-trace-gpu-v2023, the FGD study's
 * "openb" data) and of arrival sequences.
 *
 * Formats (comma-separated, first line a header naming the columns, columns found by name):
 *   nodes: sn, cpu_milli, memory_mib, gpu, model       (model empty when gpu is 0)
 *   pods:  name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, ... (other columns ignored)
 *          gpu_spec: '|'-separated catalog model names, empty or "nan" for any model
 *   sequence: a `pod` column naming rows of the pod list, in arrival order; optional columns
 *          `peer_<Policy>` hold the node a reference simulator chose (empty: it failed)
 * Every error names file:line:column and the column's name; nothing is skipped silently (blank
 * lines carry no record and are passed over). Limits: lines up to 4095 bytes, 10,000,000 rows.
 */
#ifndef GPUSCHED_TRACE_H
#define GPUSCHED_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "gpusched/cluster.h"
#include "gpusched/pod.h"

struct gs_diag;

struct gs_trace_pod {
    char name[GS_POD_NAME_MAX];
    struct gs_pod_req req;
    uint32_t line; /* line of the pod list it was read from, for messages */
};

/* One node row, kept so a fresh cluster can be built for every run. */
struct gs_trace_node {
    char name[GS_NAME_MAX];
    int model; /* catalog index, -1 when gpus == 0 */
    int gpus;
    int64_t cpu_milli, memory_mib;
    int32_t pods;     /* pods it runs at most (a Node's capacity.pods), 0 = not given */
    int32_t replicas; /* nvidia.com/gpu devices per card its device plugin offers (a Node's
                         capacity over its nvidia.com/gpu.count), 0 = one or not known */
};

#define GS_SEQ_PEERS_MAX 8

struct gs_sequence {
    uint32_t *pod; /* index into the pod list, per arrival */
    size_t n;
    int npeers;                             /* peer_<Policy> columns */
    char peer_policy[GS_SEQ_PEERS_MAX][32]; /* "<Policy>" part of the column name */
    int32_t *peer; /* n x npeers node indexes (into the node list), -1 = not placed */
};

/*
 * gs_trace_read_nodes() - read a node list.
 * Return: 0 and *@out (@n rows; free()); -EINVAL with @d at file:line:column (bad number,
 * negative, unknown model, wrong column count, missing column, duplicate node, no rows); -ENOENT
 * or -EIO with @d naming the file; -ENOMEM.
 */
int gs_trace_read_nodes(const char *path, struct gs_trace_node **out, size_t *n, struct gs_diag *d);

/*
 * gs_trace_read_pods() - read a pod list. Errors as gs_trace_read_nodes(), plus requests that
 * break gs_pod_req_check() and duplicate pod names.
 */
int gs_trace_read_pods(const char *path, struct gs_trace_pod **out, size_t *n, struct gs_diag *d);

/*
 * gs_trace_read_sequence() - read an arrival sequence against @pods and @nodes (for peers).
 * Return: 0 and *@seq filled (release with gs_sequence_free()); -EINVAL with @d at
 * file:line:column when a pod or peer node is not in the lists.
 */
int gs_trace_read_sequence(const char *path, const struct gs_trace_pod *pods, size_t npods,
                           const struct gs_trace_node *nodes, size_t nnodes,
                           struct gs_sequence *seq, struct gs_diag *d);

/* gs_sequence_free() - release what gs_trace_read_sequence() allocated; NULL allowed. */
void gs_sequence_free(struct gs_sequence *seq);

/*
 * gs_trace_build_cluster() - a new cluster holding @nodes with the default topology templates.
 * Return: 0 and *@out; -EINVAL with @d (no node has a GPU: an empty cluster); -ENOMEM.
 */
int gs_trace_build_cluster(const struct gs_trace_node *nodes, size_t n, struct gs_cluster **out,
                           struct gs_diag *d);

#endif
