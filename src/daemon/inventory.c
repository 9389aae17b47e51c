/* gpuschedd: the node inventory. The only file that knows where the nodes come from. */
#include "inventory.h"
#include "kube.h"

#include "../config/scenario_impl.h" /* gs__qty_parse(): Kubernetes quantities */
#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/diag.h"
#include "gpusched/trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* Node @name's quantity @key of status.capacity times 10^@e10 x 2^@e2 into *@v (0 when absent). */
static int capacity(const json_t *node, const char *name, const char *key, int e10, int e2,
                    int64_t *v, struct gs_diag *d)
{
    const char *q = json_string_value(
        json_object_get(json_object_get(json_object_get(node, "status"), "capacity"), key));
    const char *why = "";
    *v = 0;
    if (q && gs__qty_parse(q, e10, e2, 0, v, &why))
        return gs_diag_error(d, "Node %s: status.capacity.%s \"%.40s\" %s", name, key, q, why);
    return 0;
}

/* The catalog model GPU feature discovery names in nvidia.com/gpu.product ("NVIDIA-A100-SXM4-
 * 80GB", "Tesla-V100-SXM2-16GB"): the catalog name after the vendor prefix, or the whole label. */
static int product_model(const char *product)
{
    static const char *const vendor[] = {"NVIDIA-", "Tesla-"};
    for (size_t i = 0; i < sizeof(vendor) / sizeof(vendor[0]); i++)
        if (!strncmp(product, vendor[i], strlen(vendor[i])) &&
            gs_catalog_find(product + strlen(vendor[i]), -1) >= 0)
            return gs_catalog_find(product + strlen(vendor[i]), -1);
    return gs_catalog_find(product, -1);
}

/* One Node object into the cluster. */
static int add_node(struct gs_cluster *c, const json_t *node, struct gs_diag *d)
{
    const json_t *labels = json_object_get(json_object_get(node, "metadata"), "labels");
    const char *name =
        json_string_value(json_object_get(json_object_get(node, "metadata"), "name"));
    const char *product = json_string_value(json_object_get(labels, "nvidia.com/gpu.product"));
    const char *count = json_string_value(json_object_get(labels, "nvidia.com/gpu.count"));
    int64_t cpu, mem, gpus;
    if (!name)
        return gs_diag_error(d, "a Node without metadata.name");
    int rc = capacity(node, name, "cpu", 3, 0, &cpu, d);
    if (!rc)
        rc = capacity(node, name, "memory", 0, -20, &mem, d);
    if (!rc)
        rc = capacity(node, name, "nvidia.com/gpu", 0, 0, &gpus, d);
    if (rc)
        return rc;
    /* the cards on the board: with MIG's mixed strategy nvidia.com/gpu leaves MIG cards out */
    if (count && *count)
        gpus = atoll(count);
    int model = gpus > 0 && product ? product_model(product) : -1;
    if (gpus > 0 && model < 0)
        return gs_diag_error(d,
                             "Node %s: nvidia.com/gpu.product \"%.80s\" is no GPU model gpusched "
                             "knows (A100-SXM4-80GB, H100-SXM5-80GB, T4, ...) for its %lld GPUs",
                             name, product ? product : "(no label)", (long long)gpus);
    uint8_t pcie[GS_GPUS_MAX], nvlink[GS_GPUS_MAX];
    if (gpus > GS_GPUS_MAX)
        return gs_diag_error(d, "Node %s: %lld GPUs, more than %d", name, (long long)gpus,
                             GS_GPUS_MAX);
    if (gpus > 0)
        gs_topology_default(model, (int)gpus, pcie, nvlink);
    struct gs_node_spec spec = {
        .name = name,
        .zone = json_string_value(json_object_get(labels, "topology.kubernetes.io/zone")),
        .model = model,
        .gpus = (int)gpus,
        .cpu_milli = cpu,
        .memory_mib = mem,
        .pcie_domain = gpus > 0 ? pcie : NULL,
        .nvlink_group = gpus > 0 ? nvlink : NULL,
    };
    rc = gs_cluster_add_node(c, &spec, d);
    return rc < 0 ? rc : 0;
}

int gsd_inventory_from_kube(const struct gsd_kube *k, struct gs_cluster **out, struct gs_diag *d)
{
    char why[2 * GS_DIAG_MSG_MAX];
    json_t *list, *node;
    if (gsd_kube_get(k, "/api/v1/nodes", &list, why, sizeof(why)))
        return gs_diag_error_code(d, -EIO, "%s", why);
    struct gs_cluster *c = NULL;
    const json_t *items = json_object_get(list, "items");
    int rc = json_is_array(items) ? gs_cluster_new(&c)
                                  : gs_diag_error(d, "GET /api/v1/nodes: not a NodeList");
    size_t i;
    json_array_foreach(items, i, node)
    {
        if (!rc)
            rc = add_node(c, node, d);
    }
    if (!rc && gs_cluster_gpu_count(c) == 0)
        rc = gs_diag_error(d, "the API server lists no Node with nvidia.com/gpu capacity");
    json_decref(list);
    if (rc) {
        gs_cluster_free(c);
        return rc;
    }
    *out = c;
    return 0;
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
