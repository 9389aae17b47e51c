/* gpuschedd: the node inventory. The only file that knows where the nodes come from. */
#include "inventory.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/diag.h"
#include "gpusched/scenario.h"
#include "gpusched/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_yaml(const char *path)
{
    size_t n = strlen(path);
    return (n > 5 && !strcmp(path + n - 5, ".yaml")) || (n > 4 && !strcmp(path + n - 4, ".yml"));
}

/* The node CSV as templates (one per node shape, on its model's default topology) and nodes. */
static int from_csv(const char *path, struct gs_scenario *s, struct gs_diag *d)
{
    struct gs_trace_node *rows;
    size_t n;
    int rc = gs_trace_read_nodes(path, &rows, &n, d);
    if (rc)
        return rc;
    struct gs_policy *p = &s->policy;
    p->nodes = calloc(n, sizeof(*p->nodes));
    p->templates = calloc(n, sizeof(*p->templates));
    rc = p->nodes && p->templates ? 0 : -ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        const struct gs_trace_node *r = &rows[i];
        size_t t = 0;
        while (t < p->ntemplates &&
               (p->templates[t].model != (r->gpus ? r->model : GS_UNSET) ||
                p->templates[t].gpus != r->gpus || p->templates[t].cpu_milli != r->cpu_milli ||
                p->templates[t].memory_mib != r->memory_mib))
            t++;
        if (t == p->ntemplates) {
            struct gs_node_template *tp = &p->templates[p->ntemplates++];
            snprintf(tp->name, sizeof(tp->name), "csv-%zu", t);
            tp->model = r->gpus ? r->model : GS_UNSET;
            tp->gpus = r->gpus;
            tp->cpu_milli = r->cpu_milli;
            tp->memory_mib = r->memory_mib;
            gs_topology_default(r->model, r->gpus, tp->pcie_domain, tp->nvlink_group);
            snprintf(tp->src.file, sizeof(tp->src.file), "%s", path);
        }
        memcpy(p->nodes[i].name, r->name, sizeof(p->nodes[i].name));
        p->nodes[i].template_index = (int)t;
        p->nnodes++;
    }
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

/* The lookup cluster of @s's nodes: names, zones, shapes and topology. */
static int cluster_of(const struct gs_scenario *s, struct gs_cluster **out, struct gs_diag *d)
{
    struct gs_cluster *c;
    if (gs_cluster_new(&c) < 0)
        return -ENOMEM;
    int64_t gpus = 0;
    for (size_t i = 0; i < s->policy.nnodes; i++) {
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
        if (rc < 0) {
            gs_cluster_free(c);
            return rc;
        }
        gpus += t->gpus;
    }
    if (gpus == 0) {
        gs_cluster_free(c);
        return gs_diag_error(d, "the cluster has no GPU: nothing to schedule GPUs on");
    }
    *out = c;
    return 0;
}

int gsd_inventory_load(const char *path, struct gs_cluster **cluster, struct gs_scenario **inv,
                       struct gs_diag *d)
{
    struct gs_scenario *s;
    struct gs_cluster *c = NULL;
    int rc = gs_scenario_new(&s);
    if (rc)
        return rc;
    rc = is_yaml(path) ? from_yaml(path, s, d) : from_csv(path, s, d);
    if (!rc && s->policy.nnodes == 0)
        rc = gs_diag_error(d, "%s: no nodes", path);
    if (!rc)
        rc = cluster_of(s, &c, d);
    if (rc || !inv)
        gs_scenario_free(s);
    if (rc)
        return rc;
    if (cluster)
        *cluster = c;
    else
        gs_cluster_free(c);
    if (inv)
        *inv = s;
    return 0;
}
