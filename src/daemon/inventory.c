/* gpuschedd: the node inventory. The only file that knows where the nodes come from. */
#include "inventory.h"

#include "gpusched/trace.h"

#include <errno.h>
#include <stdlib.h>

int gsd_inventory_load(const char *path, struct gs_cluster **out, struct gs_diag *d)
{
    struct gs_trace_node *nodes;
    size_t n;
    int rc = gs_trace_read_nodes(path, &nodes, &n, d);
    if (rc)
        return rc;
    rc = gs_trace_build_cluster(nodes, n, out, d);
    free(nodes);
    return rc;
}

int gsd_inventory_workload(const char *path, struct gs_pod_req **out, size_t *n, struct gs_diag *d)
{
    struct gs_trace_pod *pods;
    int rc = gs_trace_read_pods(path, &pods, n, d);
    struct gs_pod_req *w = rc ? NULL : malloc((*n ? *n : 1) * sizeof(*w));
    for (size_t i = 0; w && i < *n; i++)
        w[i] = pods[i].req;
    if (!rc)
        free(pods);
    if (!rc && !w)
        return -ENOMEM;
    if (!rc)
        *out = w;
    return rc;
}
