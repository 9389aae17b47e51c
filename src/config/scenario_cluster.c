/*
 * The Cluster kind (gpusched.io/v1alpha1, SCENARIO.md): node templates and nodes.
 *
 * A template's topology: pcieDomains and nvlinkGroups list GPU indexes per domain / group. With
 * neither, gs_topology_default() applies (an SXM board is one NVLink group); with pcieDomains
 * alone the node has no NVLink (SCENARIO.md: "omitted = no NVLink"); with nvlinkGroups alone the
 * PCIe domains are the default ones. Every GPU is in exactly one PCIe domain and at most one
 * NVLink group. nvlinks: [[a, b, links], ...] gives the bonded NVLinks of GPU pairs (TopologyScore
 * keeps a pod no NVLink group holds on the most linked cards). topologyFile: names the text of
 * `nvidia-smi topo -m` (relative to the scenario file), which gives gpus, the domains, the groups
 * and nvlinks (gpusched/topotext.h). A node name may hold one range, "a1-n[01-08]", expanded with
 * the width of its first bound ("a1-n01" .. "a1-n08"). A node may name a template defined later, in
 * any file: gs_scenario_resolve() then fills it in.
 */
#include "scenario_impl.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/grow.h"
#include "gpusched/topo.h"
#include "gpusched/topotext.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CL_API, CL_KIND, CL_META, CL_SPEC };
static const char *const cluster_keys[] = {"apiVersion", "kind", "metadata", "spec"};

enum { SP_TEMPLATES, SP_NODES };
static const char *const spec_keys[] = {"nodeTemplates", "nodes"};

enum {
    T_NAME,
    T_MODEL,
    T_GPUS,
    T_CPU,
    T_MEM,
    T_PCIE,
    T_NVLINK,
    T_TOPOFILE,
    T_SLICING,
    T_NVLINKS,
    T_MAXPODS,
    T_COUNT
};
static const char *const tpl_keys[] = {"name",        "gpuModel",    "gpus",         "cpuMilli",
                                       "memoryMiB",   "pcieDomains", "nvlinkGroups", "topologyFile",
                                       "timeSlicing", "nvlinks",     "maxPods"};

/*
 * timeSlicing: {replicas: N} - what NVIDIA's device plugin config says per node with
 * sharing.timeSlicing.resources: [{name: nvidia.com/gpu, replicas: N}]: each card of the template
 * may be offered as N replicas (pods ask with nvidia.com/gpu.shared, the name the plugin gives
 * them under renameByDefault).
 */
static int time_slicing(struct gs__yctx *c, yaml_node_t *n, struct gs_node_template *t)
{
    static const char *const keys[] = {"replicas"};
    yaml_node_t *f[1] = {NULL};
    int64_t v;
    int rc = gs__yaml_each_field(c, n, keys, 1, "timeSlicing", gs__scn_keep, f);
    if (!rc && !f[0])
        rc = gs__yaml_err(c, n, "timeSlicing has no replicas");
    if (!rc && !(rc = gs__scn_int(c, f[0], "timeSlicing.replicas", 1, GS_CARD_CLIENTS_MAX, &v)))
        t->timeslice_replicas = (int32_t)v;
    return rc;
}

enum { N_NAME, N_ZONE, N_TEMPLATE, N_TAINTS, N_COUNT };
static const char *const node_keys[] = {"name", "zone", "template", "taints"};

struct fields {
    yaml_node_t *f[T_COUNT];
};

struct cl {
    struct gs__scn_load *L;
    yaml_node_t *f[4];
};

/* One list of GPU index lists (pcieDomains or nvlinkGroups) being read into per-GPU indexes. */
struct groups {
    const char *what;
    int gpus;
    uint8_t *out;   /* per GPU: the list's index */
    uint8_t *taken; /* per GPU: 1 once placed */
    int group;      /* the inner list being read */
};

static int group_gpu(struct gs__yctx *c, int idx, yaml_node_t *item, void *arg)
{
    struct groups *g = arg;
    char what[96];
    int64_t gpu;
    (void)idx; /* a gs__yaml_item_fn */
    gs__yaml_label(what, sizeof(what), "%s[%d]", g->what, g->group);
    int rc = gs__scn_int(c, item, what, 0, g->gpus - 1, &gpu);
    if (rc)
        return rc;
    if (g->taken[gpu])
        return gs__yaml_err(c, item, "%s: GPU %d is listed twice", g->what, (int)gpu);
    g->taken[gpu] = 1;
    g->out[gpu] = (uint8_t)g->group;
    return 0;
}

static int group_list(struct gs__yctx *c, int idx, yaml_node_t *item, void *arg)
{
    struct groups *g = arg;
    if (idx >= GS_GPUS_MAX)
        return gs__yaml_err(c, item, "%s: more than %d lists", g->what, GS_GPUS_MAX);
    g->group = idx;
    return gs__yaml_each_item(c, item, g->what, group_gpu, g);
}

/* read_groups() - @n (a list of GPU index lists) into @out; @all: every GPU must be listed. */
static int read_groups(struct gs__yctx *c, yaml_node_t *n, const char *what, int gpus, bool all,
                       uint8_t *out)
{
    uint8_t taken[GS_GPUS_MAX] = {0};
    struct groups g = {what, gpus, out, taken, 0};
    int rc = gs__yaml_each_item(c, n, what, group_list, &g);
    for (int i = 0; !rc && all && i < gpus; i++)
        if (!taken[i])
            rc = gs__yaml_err(c, n, "%s: GPU %d is in none of them", what, i);
    return rc;
}

/* gpus_and_model() - the template's gpus and gpuModel. */
static int gpus_and_model(struct gs__yctx *c, yaml_node_t *at, const struct fields *f,
                          struct gs_node_template *t)
{
    char buf[GS__YAML_SHOW_BUF];
    int64_t gpus = 0;
    int rc = f->f[T_GPUS] ? gs__scn_int(c, f->f[T_GPUS], "gpus", 0, GS_GPUS_MAX, &gpus) : 0;
    if (rc)
        return rc;
    t->gpus = (int)gpus;
    t->model = GS_UNSET;
    if (f->f[T_MODEL]) {
        const char *m = gs__yaml_str(f->f[T_MODEL]);
        t->model = m ? gs_catalog_find_product(m) : -ENOENT;
        char names[512];
        if (t->model < 0)
            return gs__yaml_err(c, f->f[T_MODEL], "gpuModel %s is not in the GPU catalog (%s)",
                                gs__yaml_show(f->f[T_MODEL], buf),
                                gs_catalog_names(names, sizeof(names)));
        if (f->f[T_GPUS] && gpus == 0) /* its model would be dropped unsaid */
            return gs__yaml_err(c, f->f[T_GPUS],
                                "gpus: 0 with gpuModel %s: a node without GPUs has no GPU model "
                                "(leave gpuModel out)",
                                gs__yaml_show(f->f[T_MODEL], buf));
    }
    if (gpus > 0 && !f->f[T_MODEL])
        return gs__yaml_err(c, at, "node template with %d GPUs needs gpuModel", t->gpus);
    if (f->f[T_MODEL] && !f->f[T_GPUS] && !f->f[T_TOPOFILE])
        return gs__yaml_err(c, at, "node template with a gpuModel needs gpus (or a topologyFile)");
    return 0;
}

/* One [a, b, links] item of nvlinks: GPUs a != b bonded by 1..GS_TOPO_NVLINK_MAX NVLinks. */
static int nvlink_pair(struct gs__yctx *c, int idx, yaml_node_t *item, void *arg)
{
    struct gs_node_template *t = arg;
    int64_t v[3];
    if (item->type != YAML_SEQUENCE_NODE ||
        item->data.sequence.items.top - item->data.sequence.items.start != 3)
        return gs__yaml_type_error(c, item, "nvlinks item", "[GPU a, GPU b, bonded links]");
    for (int k = 0; k < 3; k++) {
        yaml_node_t *n = yaml_document_get_node(c->doc, item->data.sequence.items.start[k]);
        int rc = gs__scn_int(c, n, k < 2 ? "nvlinks GPU" : "nvlinks links", k < 2 ? 0 : 1,
                             k < 2 ? t->gpus - 1 : GS_TOPO_NVLINK_MAX, &v[k]);
        if (rc)
            return rc;
    }
    if (v[0] == v[1] || t->nvlinks[v[0]][v[1]])
        return gs__yaml_err(c, item, "nvlinks[%d]: GPUs %d and %d %s", idx, (int)v[0], (int)v[1],
                            v[0] == v[1] ? "are one GPU" : "are listed twice");
    t->nvlinks[v[0]][v[1]] = t->nvlinks[v[1]][v[0]] = (uint8_t)v[2];
    return 0;
}

/*
 * topologyFile: the text of `nvidia-smi topo -m` (gpusched/topotext.h), a path relative to the
 * scenario file's folder; it gives gpus, pcieDomains, nvlinkGroups and nvlinks.
 */
static int topology_file(struct gs__yctx *c, const struct fields *f, struct gs_node_template *t)
{
    yaml_node_t *n = f->f[T_TOPOFILE];
    const char *rel = gs__yaml_str(n);
    if (!rel || !*rel || gs__yaml_is_null(n))
        return gs__yaml_type_error(c, n, "topologyFile", "a file name");
    if (f->f[T_PCIE] || f->f[T_NVLINK] || f->f[T_NVLINKS])
        return gs__yaml_err(c, n,
                            "topologyFile gives pcieDomains, nvlinkGroups and nvlinks; "
                            "give either the file or those fields");
    const char *slash = strrchr(c->path, '/');
    int dir = rel[0] == '/' || !slash ? 0 : (int)(slash - c->path + 1);
    char path[4096];
    if (snprintf(path, sizeof(path), "%.*s%s", dir, c->path, rel) >= (int)sizeof(path))
        return gs__yaml_err(c, n, "topologyFile: path longer than %zu bytes", sizeof(path) - 1);
    struct gs_topo *topo = malloc(sizeof(*topo));
    struct gs_diag d;
    gs_diag_init(&d);
    int rc = topo ? gs_topo_load(path, topo, &d) : -ENOMEM;
    if (rc)
        rc = gs__yaml_err_code(c, n, rc == -ENOMEM ? -ENOMEM : -EINVAL, "topologyFile: %s",
                               topo ? d.msg : "out of memory");
    else if (f->f[T_GPUS] && t->gpus != topo->ngpus)
        rc = gs__yaml_err(c, f->f[T_GPUS], "gpus is %d, but topologyFile %s lists %d GPUs", t->gpus,
                          path, topo->ngpus);
    if (!rc) {
        t->gpus = topo->ngpus;
        memcpy(t->pcie_domain, topo->pcie_domain, sizeof(t->pcie_domain));
        memcpy(t->nvlink_group, topo->nvlink_group, sizeof(t->nvlink_group));
        memcpy(t->nvlinks, topo->nvlinks, sizeof(t->nvlinks));
    }
    free(topo);
    return rc;
}

/* nvlink_agree() - the template's NVLink groups, links and model agree (gs_topology_check()). */
static int nvlink_agree(struct gs__yctx *c, const struct fields *f,
                        const struct gs_node_template *t)
{
    char why[160];
    if (!gs_topology_check(t->model, t->gpus, t->nvlink_group, t->nvlinks, why, sizeof(why)))
        return 0;
    const yaml_node_t *at = f->f[T_TOPOFILE]  ? f->f[T_TOPOFILE]
                            : f->f[T_NVLINK]  ? f->f[T_NVLINK]
                            : f->f[T_NVLINKS] ? f->f[T_NVLINKS]
                                              : f->f[T_NAME];
    return gs__yaml_err(c, at, "node template %s: %s", t->name, why);
}

static int topology(struct gs__yctx *c, const struct fields *f, struct gs_node_template *t)
{
    memset(t->pcie_domain, 0, sizeof(t->pcie_domain));
    memset(t->nvlink_group, GS_NO_GROUP, sizeof(t->nvlink_group));
    memset(t->nvlinks, 0, sizeof(t->nvlinks));
    int rc = f->f[T_TOPOFILE] ? topology_file(c, f, t) : 0;
    if (f->f[T_TOPOFILE])
        return rc ? rc : nvlink_agree(c, f, t);
    if (t->gpus > 0 && !f->f[T_PCIE] && !f->f[T_NVLINK])
        gs_topology_default(t->model, t->gpus, t->pcie_domain, t->nvlink_group);
    if (t->gpus > 0 && !f->f[T_PCIE] && f->f[T_NVLINK]) {
        uint8_t nv[GS_GPUS_MAX];
        gs_topology_default(t->model, t->gpus, t->pcie_domain, nv);
    }
    rc = f->f[T_PCIE] ? read_groups(c, f->f[T_PCIE], "pcieDomains", t->gpus, true, t->pcie_domain)
                      : 0;
    if (!rc && f->f[T_NVLINK])
        rc = read_groups(c, f->f[T_NVLINK], "nvlinkGroups", t->gpus, false, t->nvlink_group);
    if (!rc && f->f[T_NVLINKS])
        rc = gs__yaml_each_item(c, f->f[T_NVLINKS], "nvlinks", nvlink_pair, t);
    return rc ? rc : nvlink_agree(c, f, t);
}

static int read_template(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    struct cl *cl = arg;
    struct fields f = {{NULL}};
    struct gs_node_template t;
    char where[64];
    int64_t v;
    memset(&t, 0, sizeof(t));
    gs__yaml_label(where, sizeof(where), "nodeTemplates[%d]", idx);
    int rc = gs__yaml_each_field(c, n, tpl_keys, T_COUNT, where, gs__scn_keep, f.f);
    if (rc)
        return rc;
    if (!f.f[T_NAME])
        return gs__yaml_err(c, n, "%s has no name", where);
    rc = gs__scn_name(c, f.f[T_NAME], "node template name", t.name, sizeof(t.name));
    if (!rc)
        rc = gpus_and_model(c, n, &f, &t);
    t.cpu_milli = t.memory_mib = GS_UNSET;
    if (!rc && f.f[T_CPU] && !(rc = gs__scn_int(c, f.f[T_CPU], "cpuMilli", 1, INT64_MAX / 2, &v)))
        t.cpu_milli = v;
    if (!rc && f.f[T_MEM] && !(rc = gs__scn_int(c, f.f[T_MEM], "memoryMiB", 1, INT64_MAX / 2, &v)))
        t.memory_mib = v;
    if (!rc && f.f[T_MAXPODS] &&
        !(rc = gs__scn_int(c, f.f[T_MAXPODS], "maxPods", 1, GS_NODE_PODS_MAX, &v)))
        t.max_pods = (int32_t)v;
    if (!rc)
        rc = topology(c, &f, &t);
    if (!rc && f.f[T_SLICING])
        rc = time_slicing(c, f.f[T_SLICING], &t);
    if (rc)
        return rc;
    return gs__scn_commit(c, cl->L, n, f.f[T_NAME], GS__K_TEMPLATE, &t);
}

/* A node name with its range taken apart: prefix[lo-hi]suffix, or a plain name (lo == hi). */
struct range {
    char prefix[GS_NAME_MAX], suffix[GS_NAME_MAX];
    long lo, hi;
    int width; /* 0 = no range */
};

static int bound(struct gs__yctx *c, yaml_node_t *n, const char *s, size_t len, long *out)
{
    if (len == 0 || len > GS_SCN_RANGE_DIGITS)
        return gs__yaml_err(c, n, "node name range bounds must be 1 to %d digits",
                            GS_SCN_RANGE_DIGITS);
    *out = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return gs__yaml_err(c, n, "node name range \"[lo-hi]\" takes digits only");
        *out = *out * 10 + (s[i] - '0');
    }
    return 0;
}

static int parse_range(struct gs__yctx *c, yaml_node_t *n, struct range *r)
{
    const char *s = gs__yaml_str(n);
    int rc = gs__yaml_not_typed(c, n, "node name");
    if (rc)
        return rc;
    if (!s || gs__yaml_is_null(n) || !*s)
        return gs__yaml_type_error(c, n, "node name", "a name");
    const char *open = strchr(s, '['), *close = open ? strchr(open, ']') : NULL;
    const char *dash = open ? memchr(open, '-', close ? (size_t)(close - open) : 0) : NULL;
    memset(r, 0, sizeof(*r));
    if (!open) {
        if (strlen(s) >= GS_NAME_MAX)
            return gs__yaml_err(c, n, "node name is %zu bytes long; at most %d", strlen(s),
                                GS_NAME_MAX - 1);
        memcpy(r->prefix, s, strlen(s) + 1);
        return 0;
    }
    if (!close || !dash || strchr(close, '[') || strchr(close + 1, ']'))
        return gs__yaml_err(c, n, "node name may hold one range \"[lo-hi]\", as in a1-n[01-08]");
    if ((size_t)(open - s) >= GS_NAME_MAX || strlen(close + 1) >= GS_NAME_MAX)
        return gs__yaml_err(c, n, "node name is longer than %d bytes", GS_NAME_MAX - 1);
    rc = bound(c, n, open + 1, (size_t)(dash - open - 1), &r->lo);
    if (!rc)
        rc = bound(c, n, dash + 1, (size_t)(close - dash - 1), &r->hi);
    if (rc)
        return rc;
    if (r->lo > r->hi)
        return gs__yaml_err(c, n, "node name range [%.*s] runs backwards", (int)(close - open - 1),
                            open + 1);
    memcpy(r->prefix, s, (size_t)(open - s));
    memcpy(r->suffix, close + 1, strlen(close + 1) + 1);
    r->width = (int)(dash - open - 1);
    return 0;
}

struct node_ctx {
    struct cl *cl;
    int idx;
};

/* add_nodes() - push the nodes of range @r with zone and template already in @proto. */
static int add_nodes(struct gs__yctx *c, struct cl *cl, yaml_node_t *at, const struct range *r,
                     struct gs_scn_node *proto)
{
    for (long i = r->lo; i <= r->hi; i++) {
        int len = r->width ? snprintf(proto->name, sizeof(proto->name), "%s%0*ld%s", r->prefix,
                                      r->width, i, r->suffix)
                           : snprintf(proto->name, sizeof(proto->name), "%s", r->prefix);
        if (len < 0 || len >= GS_NAME_MAX)
            return gs__yaml_err(c, at, "node name %s%0*ld%s is longer than %d bytes", r->prefix,
                                r->width, i, r->suffix, GS_NAME_MAX - 1);
        if (!gs_dns_subdomain_ok(proto->name, (size_t)len)) /* as gpuschedd's --nodes takes it */
            return gs__yaml_err(c, at,
                                "node name %s is not a Kubernetes node name (a DNS-1123 subdomain: "
                                "a-z, 0-9, '-' and '.', each dot-separated part starting and "
                                "ending with a letter or digit), which gpusched-agent and the API "
                                "server name a node by",
                                proto->name);
        if (gs__scn_find(cl->L->s, GS__K_NODE, "", proto->name) >= 0)
            return gs__yaml_err(c, at, "duplicate node name \"%s\"", proto->name);
        long k = gs__scn_push(c, at, cl->L->s, GS__K_NODE, proto);
        if (k < 0)
            return (int)k;
    }
    return 0;
}

/* defer() - remember nodes first..first+count-1 wait for template @name. */
static int defer(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *at, size_t first,
                 size_t count, const char *name)
{
    struct gs_scn_priv *p = L->s->priv;
    void *a = gs_grow(p->pending, &p->cap_pending, p->npending + 1, sizeof(*p->pending), 16);
    if (!a)
        return gs_diag_error_code(c->d, -ENOMEM, "%s: out of memory", c->path);
    p->pending = a;
    struct gs__pending_tpl *pt = &p->pending[p->npending++];
    pt->first = first;
    pt->count = count;
    memcpy(pt->name, name, strlen(name) + 1);
    gs__scn_src(c, L, at, &pt->src);
    return 0;
}

struct taints {
    struct gs_taint v[GS_NODE_TAINTS];
    int n;
};

/* One of a node's taints (Node spec.taints[]: key, value, effect; gs_taint_make()). */
static int taint(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    static const char *const keys[] = {"key", "value", "effect"};
    struct taints *t = arg;
    yaml_node_t *f[3] = {NULL};
    const char *s[3] = {NULL}, *bad = NULL;
    char why[256];
    int rc = gs__yaml_each_field(c, n, keys, 3, "taints[]", gs__scn_keep, f);
    if (!rc && idx >= GS_NODE_TAINTS)
        return gs__yaml_err(c, n, "more than %d taints on a node", GS_NODE_TAINTS);
    for (int i = 0; !rc && i < 3; i++)
        if (f[i] && !gs__yaml_is_null(f[i]) && !(s[i] = gs__yaml_text(f[i]))) {
            char what[32];
            gs__yaml_label(what, sizeof(what), "taints[%d].%s", idx, keys[i]);
            rc = gs__yaml_text_error(c, f[i], what);
        }
    if (!rc && gs_taint_make(s[0], s[1], s[2], &t->v[idx], &bad, why, sizeof(why))) {
        int k = bad[0] == 'k' ? 0 : bad[0] == 'v' ? 1 : 2;
        return gs__yaml_err(c, f[k] ? f[k] : n, "taints[%d].%s: %s", idx, bad, why);
    }
    for (int i = 0; !rc && i < idx; i++) /* Kubernetes: unique by key and effect */
        if (!strcmp(t->v[i].key, t->v[idx].key) && t->v[i].effect == t->v[idx].effect)
            rc = gs__yaml_err(c, n, "taints[%d]: taint %s:%s is given twice", idx, t->v[idx].key,
                              gs_effect_name(t->v[idx].effect));
    t->n = rc ? t->n : idx + 1;
    return rc;
}

/* A node entry's taints onto the policy's list: its nodes share them. */
static int read_taints(struct gs__yctx *c, struct gs_policy *pol, yaml_node_t *n,
                       struct gs_scn_node *node)
{
    struct taints t = {.n = 0};
    int rc = gs__yaml_each_item(c, n, "taints", taint, &t);
    if (rc || !t.n)
        return rc;
    struct gs_taint *v = realloc(pol->taints, (pol->ntaints + (size_t)t.n) * sizeof(*v));
    if (!v)
        return gs_diag_error_code(c->d, -ENOMEM, "%s: out of memory", c->path);
    memcpy(v + pol->ntaints, t.v, (size_t)t.n * sizeof(*v));
    pol->taints = v;
    node->taint_first = (int32_t)pol->ntaints;
    node->ntaints = t.n;
    pol->ntaints += (size_t)t.n;
    return 0;
}

static int read_node(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    struct cl *cl = arg;
    struct fields f = {{NULL}};
    struct gs_scn_node node;
    struct range r;
    char where[64], tpl[GS_SCN_NAME_MAX];
    memset(&node, 0, sizeof(node));
    gs__yaml_label(where, sizeof(where), "nodes[%d]", idx);
    int rc = gs__yaml_each_field(c, n, node_keys, N_COUNT, where, gs__scn_keep, f.f);
    if (rc)
        return rc;
    if (!f.f[N_NAME] || !f.f[N_TEMPLATE])
        return gs__yaml_err(c, n, "%s needs a name and a template", where);
    rc = parse_range(c, f.f[N_NAME], &r);
    if (!rc)
        rc = gs__scn_name(c, f.f[N_TEMPLATE], "template", tpl, sizeof(tpl));
    memcpy(node.zone, "default", sizeof("default"));
    if (!rc && f.f[N_ZONE])
        rc = gs__scn_name(c, f.f[N_ZONE], "zone", node.zone, sizeof(node.zone));
    if (!rc && f.f[N_TAINTS])
        rc = read_taints(c, &cl->L->s->policy, f.f[N_TAINTS], &node);
    if (rc)
        return rc;
    long t = gs__scn_find(cl->L->s, GS__K_TEMPLATE, "", tpl);
    node.template_index = t >= 0 ? (int)t : GS_UNSET;
    size_t first = cl->L->s->policy.nnodes;
    rc = add_nodes(c, cl, f.f[N_NAME], &r, &node);
    if (!rc && t < 0)
        rc = defer(c, cl->L, f.f[N_TEMPLATE], first, cl->L->s->policy.nnodes - first, tpl);
    return rc;
}

int gs__scn_cluster(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root)
{
    struct cl cl = {L, {NULL}};
    struct gs__scn_meta m;
    int rc = gs__yaml_each_field(c, root, cluster_keys, GS__YAML_NKEYS(cluster_keys), "Cluster",
                                 gs__scn_keep, cl.f);
    if (!rc)
        rc = gs__scn_meta(c, root, cl.f[CL_META], false, GS_SCN_NAME_MAX, &m);
    if (rc || !cl.f[CL_SPEC])
        return rc;
    yaml_node_t *spec = cl.f[CL_SPEC];
    memset(cl.f, 0, sizeof(cl.f));
    rc = gs__yaml_each_field(c, spec, spec_keys, GS__YAML_NKEYS(spec_keys), "Cluster spec",
                             gs__scn_keep, cl.f);
    yaml_node_t *tpls = cl.f[SP_TEMPLATES], *nodes = cl.f[SP_NODES];
    /* templates first: a node may name a template listed after it in the same document */
    if (!rc && tpls)
        rc = gs__yaml_each_item(c, tpls, "nodeTemplates", read_template, &cl);
    if (!rc && nodes)
        rc = gs__yaml_each_item(c, nodes, "nodes", read_node, &cl);
    return rc;
}

int gs__scn_resolve_templates(struct gs_scenario *s, struct gs_diag *d)
{
    struct gs_scn_priv *p = s->priv;
    char at[160];
    for (size_t i = 0; p && i < p->npending; i++) {
        struct gs__pending_tpl *pt = &p->pending[i];
        long t = gs__scn_find(s, GS__K_TEMPLATE, "", pt->name);
        if (t < 0)
            return gs_diag_error(d, "%s: node template \"%s\" is not defined",
                                 gs__scn_where(&pt->src, at, sizeof(at)), pt->name);
        for (size_t k = pt->first; k < pt->first + pt->count && k < s->policy.nnodes; k++)
            s->policy.nodes[k].template_index = (int)t;
    }
    if (p)
        p->npending = 0;
    return 0;
}

/*
 * A GpuClusterPolicy document: read by the policy's own loader (gpusched/migpolicy.h) from the
 * stream's text, starting at the line where the document's root begins, so its messages name the
 * scenario file's lines. Only a document of its own is read that way: inside a List the root's
 * line holds the List's "- " too.
 */
int gs__scn_mig_policy(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root)
{
    size_t at = root->start_mark.index, start = at;
    while (start > 0 && L->buf[start - 1] != '\n')
        start--;
    size_t lead = start;
    if (at - start >= 3 && memcmp(L->buf + start, "---", 3) == 0)
        lead += 3;
    while (lead < at && (L->buf[lead] == ' ' || L->buf[lead] == '\t'))
        lead++;
    if (lead != at)
        return gs__yaml_err(c, root,
                            "a GpuClusterPolicy is read as a YAML document of its own, not as "
                            "an item of a List");
    if (L->s->policy.has_mig_policy)
        return gs__yaml_err(c, root, "a second GpuClusterPolicy; a cluster has one");
    int rc = gs_migpolicy_parse(c->path, L->buf + start, L->len - start, root->start_mark.line + 1,
                                &L->s->policy.mig_policy, c->d);
    if (rc)
        return rc;
    L->s->policy.has_mig_policy = 1;
    gs__scn_src(c, L, root, &L->s->policy.mig_policy_src);
    for (int i = 0; L->s->policy.mig_policy.strategy == GS_MIG_STRATEGY_NONE &&
                    i < L->s->policy.mig_policy.ndevices;
         i++)
        if (L->s->policy.mig_policy.devices[i].mig_enabled) {
            gs__yaml_warn(c, root,
                          "GpuClusterPolicy strategy none advertises no MIG device: migEnabled "
                          "on its devices has no effect");
            break;
        }
    if (L->s->policy.mig_policy.strategy == GS_MIG_STRATEGY_SINGLE)
        gs__yaml_warn(
            c, root,
            "GpuClusterPolicy strategy single: pods asking nvidia.com/mig-<profile> are "
            "refused and nvidia.com/gpu gets whole cards; the instances a single-"
            "strategy cluster advertises as nvidia.com/gpu are not simulated (use mixed)");
    return 0;
}
