/* gpuschedd: the node inventory. The only file that knows where the nodes come from. */
#include "inventory.h"

#include "gpusched/trace.h"

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
