/* gpuschedd: the node inventory. The only file that knows where the nodes come from. */
#include "inventory.h"
#include "kube.h"
#include "log.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/diag.h"
#include "gpusched/policy.h"
#include "gpusched/scenario.h"
#include "gpusched/trace.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int is_yaml(const char *path)
{
    size_t n = strlen(path);
    return (n > 5 && !strcasecmp(path + n - 5, ".yaml")) ||
           (n > 4 && !strcasecmp(path + n - 4, ".yml"));
}

/* The template of node @r's shape in @s, made (from @origin, with its model's default topology)
 * when none is yet. Return: its index; -E2BIG when @cap are held already. */
static int template_of(struct gs_scenario *s, const struct gs_trace_node *r, const char *origin,
                       size_t cap)
{
    struct gs_policy *p = &s->policy;
    size_t t = 0;
    while (t < p->ntemplates &&
           (p->templates[t].model != (r->gpus ? r->model : GS_UNSET) ||
            p->templates[t].gpus != r->gpus || p->templates[t].cpu_milli != r->cpu_milli ||
            p->templates[t].memory_mib != r->memory_mib || p->templates[t].max_pods != r->pods ||
            p->templates[t].gpu_replicas != r->replicas))
        t++;
    if (t == cap)
        return -E2BIG;
    if (t == p->ntemplates) {
        struct gs_node_template *tp = &p->templates[p->ntemplates++];
        snprintf(tp->name, sizeof(tp->name), "shape-%zu", t);
        tp->model = r->gpus ? r->model : GS_UNSET;
        tp->gpus = r->gpus;
        tp->cpu_milli = r->cpu_milli;
        tp->memory_mib = r->memory_mib;
        tp->max_pods = r->pods;
        tp->gpu_replicas = r->replicas;
        gs_topology_default(r->model, r->gpus, tp->pcie_domain, tp->nvlink_group);
        snprintf(tp->src.file, sizeof(tp->src.file), "%s", origin);
    }
    return (int)t;
}

/* Node @r (in zone @zone, "" none; with taints @tn[@ntn]) onto @s, on the template of its
 * shape: @s has room for one more node, and @cap templates. */
static int add_row(struct gs_scenario *s, const struct gs_trace_node *r, const char *zone,
                   const struct gs_taint *tn, int ntn, const char *origin, size_t cap)
{
    struct gs_policy *p = &s->policy;
    struct gs_taint *v = ntn ? realloc(p->taints, (p->ntaints + (size_t)ntn) * sizeof(*v)) : NULL;
    if (ntn && !v)
        return -ENOMEM;
    p->taints = ntn ? v : p->taints;
    int t = template_of(s, r, origin, cap);
    if (t < 0)
        return t;
    struct gs_scn_node *n = &p->nodes[p->nnodes++];
    memcpy(n->name, r->name, sizeof(n->name));
    snprintf(n->zone, sizeof(n->zone), "%s", zone);
    n->template_index = t;
    n->taint_first = (int32_t)p->ntaints;
    n->ntaints = ntn;
    for (int i = 0; i < ntn; i++)
        p->taints[p->ntaints++] = tn[i];
    return 0;
}

static int alloc_nodes(struct gs_scenario *s, size_t n)
{
    struct gs_policy *p = &s->policy;
    p->nodes = calloc(n ? n : 1, sizeof(*p->nodes));
    p->templates = calloc(n ? n : 1, sizeof(*p->templates));
    return p->nodes && p->templates ? 0 : -ENOMEM;
}

/* The node CSV (include/gpusched/trace.h) as templates and nodes. */
static int from_csv(const char *path, struct gs_scenario *s, struct gs_diag *d)
{
    struct gs_trace_node *rows;
    size_t n;
    int rc = gs_trace_read_nodes(path, &rows, &n, d);
    if (rc)
        return rc;
    rc = alloc_nodes(s, n);
    for (size_t i = 0; !rc && i < n; i++)
        rc = add_row(s, &rows[i], "", NULL, 0, path, n);
    free(rows);
    return rc;
}

static int from_yaml(const char *path, struct gs_scenario *s, struct gs_diag *d)
{
    int rc = gs_scenario_load(s, path, d);
    if (!rc)
        rc = gs_scenario_resolve(s, d);
    if (rc)
        return rc;
    const struct gs_policy *p = &s->policy;
    if (s->npods || p->ntenants || p->nqueues || p->npodgroups || p->nrquotas ||
        p->npriority_classes || p->nprofiles || p->nlimit_ranges || s->sim.defined)
        return gs_diag_error(d,
                             "%s: an inventory holds Cluster documents only (policy kinds go "
                             "in the DaemonConfig's policy files, pods through the API)",
                             path);
    return 0;
}

/* Node @i of @s (read from @path) into the lookup cluster @c. Return: its cards; -EINVAL for a
 * name no Kubernetes node has; as gs_cluster_add_node(). */
static int add_spec(struct gs_cluster *c, const struct gs_scenario *s, size_t i, const char *path,
                    struct gs_diag *d)
{
    const struct gs_scn_node *sn = &s->policy.nodes[i];
    const struct gs_node_template *t = &s->policy.templates[sn->template_index];
    struct gs_node_spec spec = {
        .name = sn->name,
        .zone = sn->zone,
        .model = t->gpus > 0 ? t->model : 0,
        .gpus = t->gpus,
        .cpu_milli = t->cpu_milli != GS_UNSET ? t->cpu_milli : (int64_t)1 << 40,
        .memory_mib = t->memory_mib != GS_UNSET ? t->memory_mib : (int64_t)1 << 40,
        .pcie_domain = t->pcie_domain,
        .nvlink_group = t->nvlink_group,
    };
    int rc = gs_cluster_add_node(c, &spec, d);
    return rc < 0 ? rc : t->gpus;
}

/* The lookup cluster of @s's nodes: names, zones, shapes and topology. @joining: more nodes
 * join later (the API server's Nodes), so none, or none with a GPU, is no error yet. */
static int cluster_of(const struct gs_scenario *s, const char *path, int joining,
                      struct gs_cluster **out, struct gs_diag *d)
{
    struct gs_cluster *c;
    if (gs_cluster_new(&c) < 0)
        return -ENOMEM;
    int64_t gpus = 0;
    for (size_t i = 0; i < s->policy.nnodes; i++) {
        int rc = add_spec(c, s, i, path, d);
        if (rc < 0) {
            gs_cluster_free(c);
            return rc;
        }
        gpus += rc;
    }
    if (gpus == 0 && !joining) {
        gs_cluster_free(c);
        return gs_diag_error(d, "the cluster has no GPU: nothing to schedule GPUs on");
    }
    if (gpus == 0) /* installed before the GPU nodes joined: they are taken in as they come */
        gsd_log("warn",
                s->policy.nnodes ? "kubernetes: no Node has a GPU yet: GPU pods wait until one "
                                   "joins"
                                 : "kubernetes: no nodes yet: pods wait until Nodes join",
                NULL);
    *out = c;
    return 0;
}

/* Node @node's status.capacity[@key]; NULL when not given. */
static const json_t *capacity_of(const json_t *node, const char *key)
{
    return json_object_get(json_object_get(json_object_get(node, "status"), "capacity"), key);
}

/* Node @name's quantity @key of status.capacity times 10^@e10 x 2^@e2 into *@v (0 when absent),
 * rounded down (a count of pods: up). A value that is not a string is refused. */
static int capacity(const json_t *node, const char *name, const char *key, int e10, int e2,
                    int64_t *v, struct gs_diag *d)
{
    const json_t *x = capacity_of(node, key);
    const char *q = json_string_value(x);
    *v = 0;
    if (x && !q && !json_is_null(x)) /* the API server writes a quantity as a string */
        return gs_diag_error(d, "Node %s: status.capacity.%s is not a quantity (a string)", name,
                             key);
    /* a count of pods rounds up, as Quantity.Value() does; what a node has, down */
    if (q && gs_quantity_parse(q, e10, e2, strcmp(key, "pods") ? -1 : 1, v))
        return gs_diag_error(d, "Node %s: status.capacity.%s \"%.40s\" is not a quantity", name,
                             key, q);
    return 0;
}

/* Node @name's capacity.pods (kubelet's maxPods) into *@pods, 0 when not given; more than a node
 * runs here (GS_NODE_PODS_MAX) is taken as that many, with a warning; *@none when it is 0 (the
 * node takes no pod: it is taken as not ready, with a warning). */
static int node_pods(const json_t *node, const char *name, int32_t *pods, int *none,
                     struct gs_diag *d)
{
    int64_t v;
    int rc = capacity(node, name, "pods", 0, 0, &v, d);
    *none = !rc && json_is_string(capacity_of(node, "pods")) && v == 0;
    if (*none)
        gs_diag_warn(d, "Node %s: status.capacity.pods 0: it runs no pod; taken as not ready",
                     name);
    if (!rc && v > GS_NODE_PODS_MAX)
        gs_diag_warn(d,
                     "Node %s: status.capacity.pods %lld: gpuschedd binds at most %d pods to a "
                     "node",
                     name, (long long)v, GS_NODE_PODS_MAX);
    *pods = (int32_t)(v > GS_NODE_PODS_MAX ? GS_NODE_PODS_MAX : v);
    return rc;
}

/* Whether Node @node is Ready: its Ready condition is "True", or it has none yet (a Node just
 * made; kube-scheduler places on it too). */
static int node_ready(const json_t *node)
{
    const json_t *c;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(node, "status"), "conditions"), i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        const char *status = json_string_value(json_object_get(c, "status"));
        if (type && !strcmp(type, "Ready"))
            return status && !strcmp(status, "True");
    }
    return 1;
}

/* Node @name's spec.taints (gs_taint_make()) into @tn, *@ntn of them. */
static int node_taints(const json_t *node, const char *name, struct gs_taint *tn, int *ntn,
                       struct gs_diag *d)
{
    const json_t *list = json_object_get(json_object_get(node, "spec"), "taints"), *x;
    size_t i;
    *ntn = 0;
    if (list && !json_is_array(list) && !json_is_null(list))
        return gs_diag_error(d, "Node %s: spec.taints is not a list", name);
    json_array_foreach(list, i, x)
    {
        const char *field = "", *s[3];
        const char *const keys[] = {"key", "value", "effect"};
        char why[256];
        for (int k = 0; k < 3; k++)
            s[k] = json_string_value(json_object_get(x, keys[k]));
        if (*ntn >= GS_NODE_TAINTS)
            return gs_diag_error(d, "Node %s: more than %d taints", name, GS_NODE_TAINTS);
        if (gs_taint_make(s[0], s[1], s[2], &tn[*ntn], &field, why, sizeof(why)))
            return gs_diag_error(d, "Node %s: spec.taints[%zu].%s: %s", name, i, field, why);
        ++*ntn;
    }
    return 0;
}

int gsd_inventory_node(const json_t *node, struct gs_trace_node *row, char zone[GS_NAME_MAX],
                       struct gs_taint *taints, int *ntaints, int *ready, struct gs_diag *d)
{
    const json_t *md = json_object_get(node, "metadata");
    const json_t *labels = json_object_get(md, "labels");
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *product = json_string_value(json_object_get(labels, "nvidia.com/gpu.product"));
    const char *count = json_string_value(json_object_get(labels, "nvidia.com/gpu.count"));
    const char *z = json_string_value(json_object_get(labels, "topology.kubernetes.io/zone"));
    struct gs_trace_node r = {.model = -1};
    int64_t gpus;
    if (!name || !*name || strlen(name) >= sizeof(r.name))
        return gs_diag_error(d, "a Node without metadata.name, or with one past %zu bytes",
                             sizeof(r.name) - 1);
    memcpy(r.name, name, strlen(name) + 1);
    int rc = capacity(node, name, "cpu", 3, 0, &r.cpu_milli, d);
    if (!rc)
        rc = capacity(node, name, "memory", 0, -20, &r.memory_mib, d);
    if (!rc && (r.cpu_milli <= 0 || r.memory_mib <= 0))
        rc = gs_diag_error(d, "Node %s: status.capacity gives no %s", name,
                           r.cpu_milli <= 0 ? "cpu" : "memory");
    int no_pods = 0;
    if (!rc)
        rc = node_pods(node, name, &r.pods, &no_pods, d);
    if (!rc)
        rc = capacity(node, name, "nvidia.com/gpu", 0, 0, &gpus, d);
    if (!rc)
        rc = node_taints(node, name, taints, ntaints, d);
    if (rc)
        return rc;
    /* the cards on the board: with MIG's mixed strategy nvidia.com/gpu leaves MIG cards out */
    if (count && *count && (strspn(count, "0123456789") != strlen(count) || strlen(count) > 3))
        return gs_diag_error(d,
                             "Node %s: label nvidia.com/gpu.count \"%.20s\" is not a count of "
                             "GPUs",
                             name, count);
    if (count && *count) { /* a device plugin offering N devices per card counts them all */
        int64_t devices = gpus;
        gpus = atoll(count);
        if (gpus > 0 && devices > gpus)
            r.replicas = (int32_t)(devices / gpus > GS_CARD_CLIENTS_MAX ? GS_CARD_CLIENTS_MAX
                                                                        : devices / gpus);
    }
    char prof[32];
    int card = gpus > 0 && product && gs_catalog_find_product(product) < 0
                   ? gs_catalog_product_mig(product, prof, sizeof(prof))
                   : -ENOENT;
    if (card >= 0) /* MIG strategy single: nvidia.com/gpu and its count label are instances */
        return gs_diag_error_code(d, -ENOENT,
                                  "Node %s: nvidia.com/gpu.product \"%.80s\" is %s cards in MIG "
                                  "strategy single, whose %lld GPUs are %s instances, not cards: "
                                  "gpusched places MIG instances under strategy mixed only",
                                  name, product, gs_catalog_at(card)->name, (long long)gpus, prof);
    if (gpus > GS_GPUS_MAX || gpus < 0)
        return gs_diag_error(d, "Node %s: %lld GPUs, more than %d%s", name, (long long)gpus,
                             GS_GPUS_MAX,
                             count && *count ? ""
                                             : " (capacity nvidia.com/gpu without the label "
                                               "nvidia.com/gpu.count: a device plugin that "
                                               "advertises replicas of each card, as "
                                               "gpusched-agent and NVIDIA's time slicing do, "
                                               "counts them; run GPU feature discovery)");
    r.gpus = (int)gpus;
    r.model = gpus > 0 && product ? gs_catalog_find_product(product) : -1;
    if (gpus > 0 && r.model < 0)
        return gs_diag_error_code(
            d, -ENOENT,
            "Node %s: nvidia.com/gpu.product \"%.80s\" is no GPU model gpusched "
            "knows (A100-SXM4-80GB, H100-SXM5-80GB, T4, ...) for its %lld GPUs",
            name, product ? product : "(no label)", (long long)gpus);
    *row = r;
    snprintf(zone, GS_NAME_MAX, "%s", z && strlen(z) < GS_NAME_MAX ? z : "");
    *ready = node_ready(node) && !no_pods;
    return 0;
}

int gsd_inventory_told(const char *msg)
{
    /* FNV-1a of the lines said; past the table's room a line is said again, never lost */
    static uint64_t said[256];
    static size_t nsaid;
    uint64_t h = 1469598103934665603ULL;
    for (const char *c = msg; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    for (size_t i = 0; i < nsaid; i++)
        if (said[i] == h)
            return 1;
    if (nsaid < sizeof(said) / sizeof(said[0]))
        said[nsaid++] = h;
    return 0;
}

/* One Node object onto @s; *@ready whether it is Ready. */
static int add_node(struct gs_scenario *s, const json_t *node, size_t cap, int *ready,
                    struct gs_diag *d)
{
    struct gs_trace_node r;
    struct gs_taint tn[GS_NODE_TAINTS];
    char zone[GS_NAME_MAX];
    int ntn;
    int rc = gsd_inventory_node(node, &r, zone, tn, &ntn, ready, d);
    if (!rc)
        rc = add_row(s, &r, zone, tn, ntn, "kubernetes", cap);
    return rc == -E2BIG ? gs_diag_error(d, "Node %s: too many nodes", r.name) : rc;
}

/* Node @r in @zone as the lookup cluster takes it: its model's default topology in @pcie and
 * @nvlink (the caller's). */
static struct gs_node_spec spec_of(const struct gs_trace_node *r, const char *zone,
                                   uint8_t pcie[GS_GPUS_MAX], uint8_t nvlink[GS_GPUS_MAX])
{
    gs_topology_default(r->model, r->gpus, pcie, nvlink);
    return (struct gs_node_spec){
        r->name, zone, r->gpus ? r->model : 0, r->gpus, r->cpu_milli, r->memory_mib, pcie, nvlink};
}

/* Room in @p for @more templates, the new ones zeroed. Return: 0; -ENOMEM (nothing changed). */
static int templates_room(struct gs_policy *p, size_t more)
{
    struct gs_node_template *t = realloc(p->templates, (p->ntemplates + more) * sizeof(*t));
    if (!t)
        return -ENOMEM;
    p->templates = t;
    memset(&p->templates[p->ntemplates], 0, more * sizeof(*t));
    return 0;
}

int gsd_inventory_append(struct gs_scenario *inv, struct gs_cluster *c,
                         const struct gs_trace_node *r, const char *zone,
                         const struct gs_taint *taints, int ntaints, struct gs_diag *d)
{
    struct gs_policy *p = &inv->policy;
    uint8_t pcie[GS_GPUS_MAX], nvlink[GS_GPUS_MAX];
    struct gs_node_spec spec = spec_of(r, zone, pcie, nvlink);
    int rc = gs_cluster_add_node(c, &spec, d);
    if (rc < 0) /* nothing changed */
        return rc;
    struct gs_scn_node *nodes = realloc(p->nodes, (p->nnodes + 1) * sizeof(*nodes));
    p->nodes = nodes ? nodes : p->nodes;
    if (!nodes || templates_room(p, 1))
        return -ENOMEM;
    return add_row(inv, r, zone, taints, ntaints, "kubernetes", p->ntemplates + 1);
}

int gsd_inventory_reshape(struct gs_scenario *inv, struct gs_cluster *c, size_t i,
                          const struct gs_trace_node *r, const char *zone, struct gs_diag *d)
{
    struct gs_policy *p = &inv->policy;
    uint8_t pcie[GS_GPUS_MAX], nvlink[GS_GPUS_MAX];
    struct gs_node_spec spec = spec_of(r, zone, pcie, nvlink);
    int rc = i < p->nnodes ? gs_cluster_reshape_node(c, i, &spec, d) : -ENOENT;
    if (rc) /* nothing changed */
        return rc;
    if (templates_room(p, 1))
        return -ENOMEM;
    p->nodes[i].template_index = template_of(inv, r, "kubernetes", p->ntemplates + 1);
    snprintf(p->nodes[i].zone, sizeof(p->nodes[i].zone), "%s", zone);
    return 0;
}

/* The Nodes of @k onto @s; *@down (free()) 1 for each not Ready. */
static int from_kube(const struct gsd_kube *k, struct gs_scenario *s, uint8_t **down,
                     struct gs_diag *d)
{
    char why[2 * GS_DIAG_MSG_MAX];
    json_t *list, *node;
    if (gsd_kube_get(k, "/api/v1/nodes", &list, why, sizeof(why)))
        return gs_diag_error_code(d, -EIO, "%s", why);
    void (*warn)(void *, const char *) = d ? d->warn : NULL;
    void *ud = d ? d->warn_ud : NULL;
    if (d && !warn) { /* a warning is logged, and the start goes on */
        d->warn = gsd_log_warning;
        d->warn_ud = "Node taken with a warning";
    }
    const json_t *items = json_object_get(list, "items");
    size_t n = json_array_size(items), i;
    int rc = json_is_array(items) ? alloc_nodes(s, n)
                                  : gs_diag_error(d, "GET /api/v1/nodes: not a NodeList");
    *down = rc ? NULL : calloc(n ? n : 1, 1);
    rc = rc ? rc : *down ? 0 : -ENOMEM;
    json_array_foreach(items, i, node)
    {
        int ready = 1;
        if (rc)
            continue;
        rc = add_node(s, node, n, &ready, d);
        if (rc == -ENOENT) { /* a product gpusched does not know: left out, as while it runs */
            if (d && !gsd_inventory_told(d->msg))
                gsd_log("error", "Node not taken into the inventory", "error", d->msg, NULL);
            if (d)
                d->msg[0] = '\0';
            rc = 0;
        } else if (!rc)
            (*down)[s->policy.nnodes - 1] = (uint8_t)!ready;
    }
    json_decref(list);
    if (d) {
        d->warn = warn;
        d->warn_ud = ud;
    }
    return rc;
}

int gsd_inventory_load(const char *path, const struct gsd_kube *k, struct gs_cluster **cluster,
                       struct gs_scenario **inv, uint8_t **down, struct gs_diag *d)
{
    struct gs_scenario *s;
    struct gs_cluster *c = NULL;
    uint8_t *nr = NULL;
    int rc = gs_scenario_new(&s);
    if (rc)
        return rc;
    if (!strcmp(path, "kubernetes"))
        rc = k ? from_kube(k, s, &nr, d)
               : gs_diag_error(d, "--nodes kubernetes needs `kubernetes:` in the DaemonConfig");
    else
        rc = is_yaml(path) ? from_yaml(path, s, d) : from_csv(path, s, d);
    int joining = !strcmp(path, "kubernetes"); /* Nodes made later join the inventory */
    if (!rc && s->policy.nnodes == 0 && !joining)
        rc = gs_diag_error(d, "%s: no nodes", path);
    if (!rc)
        rc = cluster_of(s, path, joining, &c, d);
    if (rc || !inv)
        gs_scenario_free(s);
    if (rc || !down)
        free(nr);
    if (rc)
        return rc;
    if (down)
        *down = nr;
    if (cluster)
        *cluster = c;
    else
        gs_cluster_free(c);
    if (inv)
        *inv = s;
    return 0;
}
