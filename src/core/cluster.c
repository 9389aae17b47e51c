#include "cluster_impl.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

void gs_topology_default(int model, int gpus, uint8_t *pcie, uint8_t *nvlink)
{
    const struct gs_gpu_model *m = gs_catalog_at(model);
    int sxm = m && m->form == GS_FORM_SXM && gpus > 1;
    for (int i = 0; i < gpus; i++) {
        pcie[i] = (uint8_t)(sxm ? i / 2 : i / 4);
        nvlink[i] = sxm ? 0 : GS_NO_GROUP;
    }
}

int gs_topology_check(int model, int gpus, const uint8_t *group,
                      const uint8_t (*nvlinks)[GS_GPUS_MAX], char *why, size_t size)
{
    const struct gs_gpu_model *m = gs_catalog_at(model);
    int any = 0;
    for (int a = 0; a < gpus; a++)
        for (int b = 0; b < gpus; b++)
            any |= nvlinks[a][b];
    for (int a = 0; m && !m->nvlink && a < gpus; a++)
        if (group[a] != GS_NO_GROUP || any) {
            snprintf(why, size, "%s has no NVLink, so a node of it has no NVLink group or link",
                     m->name);
            return -EINVAL;
        }
    for (int a = 0; a < gpus; a++) {
        int linked = 0, peers = 0;
        for (int b = 0; b < gpus; b++) {
            if (nvlinks[a][b] && group[a] == GS_NO_GROUP) {
                snprintf(why, size, "GPU %d is NVLinked to GPU %d but in no NVLink group", a, b);
                return -EINVAL;
            }
            peers += b != a && group[a] != GS_NO_GROUP && group[b] == group[a];
            linked |= nvlinks[a][b];
        }
        if (any && peers && !linked) {
            snprintf(why, size, "GPU %d is in NVLink group %d but NVLinked to no GPU", a, group[a]);
            return -EINVAL;
        }
    }
    return 0;
}

size_t gs_gpu_list_text(uint32_t mask, char out[GS_GPU_LIST_MAX])
{
    size_t off = 0;
    for (int g = 0; g < GS_GPUS_MAX; g++) {
        if (!(mask & (1u << g)))
            continue;
        if (off)
            out[off++] = ',';
        if (g >= 10)
            out[off++] = (char)('0' + g / 10);
        out[off++] = (char)('0' + g % 10);
    }
    out[off] = '\0';
    return off;
}

int gs_gpu_list_parse(const char *s, uint32_t *mask)
{
    int n = 0, last = -1;
    *mask = 0;
    if (!s)
        return -EINVAL;
    for (const char *p = s; *p; p++) {
        if (n && *p++ != ',')
            return -EINVAL;
        if (*p < '0' || *p > '9' || (*p == '0' && p[1] >= '0' && p[1] <= '9'))
            return -EINVAL;
        int g = *p - '0';
        while (p[1] >= '0' && p[1] <= '9' && g < GS_GPUS_MAX)
            g = g * 10 + *++p - '0';
        if (g >= GS_GPUS_MAX || g <= last)
            return -EINVAL;
        *mask |= 1u << g;
        last = g;
        n++;
    }
    return n;
}

int gs_cluster_new(struct gs_cluster **out)
{
    struct gs_cluster *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    *out = c;
    return 0;
}

void gs_cluster_free(struct gs_cluster *c)
{
    if (!c)
        return;
    free(c->nodes);
    free(c->zones);
    free(c->index);
    free(c);
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int index_grow(struct gs_cluster *c)
{
    size_t cap = c->index_cap ? c->index_cap * 2 : 64;
    int32_t *idx = malloc(cap * sizeof(*idx));
    if (!idx)
        return -ENOMEM;
    memset(idx, 0xff, cap * sizeof(*idx));
    for (size_t i = 0; i < c->n; i++) {
        size_t h = hash_str(c->nodes[i].name) & (cap - 1);
        while (idx[h] >= 0)
            h = (h + 1) & (cap - 1);
        idx[h] = (int32_t)i;
    }
    free(c->index);
    c->index = idx;
    c->index_cap = cap;
    return 0;
}

int gs_cluster_find(const struct gs_cluster *c, const char *name)
{
    if (!c->index_cap)
        return -ENOENT;
    size_t h = hash_str(name) & (c->index_cap - 1);
    while (c->index[h] >= 0) {
        if (strcmp(c->nodes[c->index[h]].name, name) == 0)
            return c->index[h];
        h = (h + 1) & (c->index_cap - 1);
    }
    return -ENOENT;
}

static int zone_id(struct gs_cluster *c, const char *zone)
{
    if (!zone || !*zone)
        zone = "default";
    for (size_t i = 0; i < c->nzones; i++)
        if (strcmp(c->zones[i], zone) == 0)
            return (int)i;
    if (c->nzones >= UINT16_MAX)
        return -E2BIG;
    void *z = realloc(c->zones, (c->nzones + 1) * sizeof(*c->zones));
    if (!z)
        return -ENOMEM;
    c->zones = z;
    snprintf(c->zones[c->nzones], GS_NAME_MAX, "%s", zone);
    return (int)c->nzones++;
}

/* Is @s a node @c may hold: as node @self (its name kept), or, @self < 0, as a new one. */
static int check_spec(const struct gs_cluster *c, const struct gs_node_spec *s, int self,
                      struct gs_diag *d)
{
    const char *nm = s->name ? s->name : "";
    size_t len = strlen(nm);
    if (len == 0 || len >= GS_NAME_MAX)
        return gs_diag_error(d, "node name must be 1..%d bytes", GS_NAME_MAX - 1);
    if (gs_cluster_find(c, nm) != (self < 0 ? -ENOENT : self))
        return gs_diag_error(d, "node %s: %s", nm, self < 0 ? "duplicate name" : "not that node");
    if (s->zone && strlen(s->zone) >= GS_NAME_MAX)
        return gs_diag_error(d, "node %s: zone name longer than %d bytes", nm, GS_NAME_MAX - 1);
    if (s->cpu_milli <= 0 || s->memory_mib <= 0)
        return gs_diag_error(d, "node %s: cpu_milli and memory_mib must be > 0", nm);
    if (s->gpus < 0 || s->gpus > GS_GPUS_MAX)
        return gs_diag_error(d, "node %s: %d GPUs (allowed 0..%d)", nm, s->gpus, GS_GPUS_MAX);
    if (s->gpus > 0 && !gs_catalog_at(s->model))
        return gs_diag_error(d, "node %s: unknown GPU model index %d", nm, s->model);
    for (int i = 0; i < s->gpus; i++) {
        if (s->pcie_domain && s->pcie_domain[i] >= GS_GPUS_MAX)
            return gs_diag_error(d, "node %s: GPU %d: PCIe domain index out of range", nm, i);
        if (s->nvlink_group && s->nvlink_group[i] >= GS_GPUS_MAX &&
            s->nvlink_group[i] != GS_NO_GROUP)
            return gs_diag_error(d, "node %s: GPU %d: NVLink group index out of range", nm, i);
    }
    if (self < 0 && c->n >= GS_NODES_MAX)
        return gs_diag_error_code(d, -E2BIG, "more than %d nodes", GS_NODES_MAX);
    return 0;
}

/* Node @n as @s gives it, in zone @zone, all of it free; @c's card count and models follow. */
static void fill_node(struct gs_cluster *c, struct gs_node *n, const struct gs_node_spec *s,
                      int zone)
{
    c->gpus -= n->ngpu;
    memset(n, 0, sizeof(*n));
    snprintf(n->name, sizeof(n->name), "%s", s->name);
    n->zone = (uint16_t)zone;
    n->ngpu = (uint8_t)s->gpus;
    n->model = (uint8_t)(s->gpus > 0 ? s->model : 0);
    n->cpu_milli = n->cpu_left = s->cpu_milli;
    n->memory_mib = n->memory_left = s->memory_mib;
    gs_topology_default(n->model, n->ngpu, n->pcie, n->nvlink);
    for (int i = 0; i < n->ngpu; i++) {
        n->gpu_left[i] = GS_MILLI_GPU;
        if (s->pcie_domain)
            n->pcie[i] = s->pcie_domain[i];
        if (s->nvlink_group)
            n->nvlink[i] = s->nvlink_group[i];
    }
    uint32_t t = 2166136261u;
    for (int i = 0; i < n->ngpu; i++)
        t = ((t ^ n->pcie[i]) * 16777619u ^ n->nvlink[i]) * 16777619u;
    n->topo = t;
    c->gpus += n->ngpu;
    c->model_mask = 0;
    for (size_t i = 0; i < c->n; i++)
        c->model_mask |= c->nodes[i].ngpu ? 1u << c->nodes[i].model : 0;
    if (n->ngpu) /* a node being added is not counted in c->n yet */
        c->model_mask |= 1u << n->model;
}

int gs_cluster_add_node(struct gs_cluster *c, const struct gs_node_spec *s, struct gs_diag *d)
{
    int rc = check_spec(c, s, -1, d);
    if (rc < 0)
        return rc;
    int zone = zone_id(c, s->zone);
    if (zone < 0)
        return gs_diag_error_code(d, zone, "node %s: cannot add zone", s->name);
    struct gs_node *grown = gs_grow(c->nodes, &c->cap, c->n + 1, sizeof(*grown), 64);
    if (!grown)
        return -ENOMEM;
    c->nodes = grown;
    if ((c->n + 1) * 2 > c->index_cap && index_grow(c) < 0)
        return -ENOMEM;
    struct gs_node *n = &c->nodes[c->n];
    n->ngpu = 0; /* nothing to take off the card count */
    fill_node(c, n, s, zone);
    size_t h = hash_str(n->name) & (c->index_cap - 1);
    while (c->index[h] >= 0)
        h = (h + 1) & (c->index_cap - 1);
    c->index[h] = (int32_t)c->n;
    return (int)c->n++;
}

int gs_cluster_reshape_node(struct gs_cluster *c, size_t i, const struct gs_node_spec *s,
                            struct gs_diag *d)
{
    if (i >= c->n)
        return gs_diag_error_code(d, -ENOENT, "node %zu: no such node", i);
    int rc = check_spec(c, s, (int)i, d);
    if (rc < 0)
        return rc;
    int zone = zone_id(c, s->zone);
    if (zone < 0)
        return gs_diag_error_code(d, zone, "node %s: cannot add zone", s->name);
    fill_node(c, &c->nodes[i], s, zone);
    return 0;
}

size_t gs_cluster_node_count(const struct gs_cluster *c)
{
    return c->n;
}

int64_t gs_cluster_gpu_count(const struct gs_cluster *c)
{
    return c->gpus;
}

uint32_t gs_cluster_model_mask(const struct gs_cluster *c)
{
    return c->model_mask;
}

const char *gs_cluster_node_name(const struct gs_cluster *c, size_t i)
{
    return i < c->n ? c->nodes[i].name : NULL;
}

void gs_cluster_totals(const struct gs_cluster *c, struct gs_cluster_totals *t)
{
    memset(t, 0, sizeof(*t));
    for (size_t i = 0; i < c->n; i++) {
        const struct gs_node *n = &c->nodes[i];
        t->cpu_milli += n->cpu_milli;
        t->cpu_milli_used += n->cpu_milli - n->cpu_left;
        t->memory_mib += n->memory_mib;
        t->memory_mib_used += n->memory_mib - n->memory_left;
        for (int g = 0; g < n->ngpu; g++) {
            t->gpus++;
            t->gpu_milli += GS_MILLI_GPU;
            t->gpu_milli_used += GS_MILLI_GPU - n->gpu_left[g];
            if (n->gpu_left[g] == GS_MILLI_GPU)
                t->gpus_idle++;
            else if (n->gpu_left[g] > 0)
                t->gpus_partial++;
        }
    }
}

int gs_cluster_node_info(const struct gs_cluster *c, size_t i, struct gs_node_info *out)
{
    if (i >= c->n)
        return -ENOENT;
    const struct gs_node *n = &c->nodes[i];
    memset(out, 0, sizeof(*out));
    out->name = n->name;
    out->zone = c->zones[n->zone];
    out->model = n->ngpu ? n->model : -1;
    out->gpus = n->ngpu;
    out->cpu_milli = n->cpu_milli;
    out->cpu_left = n->cpu_left;
    out->memory_mib = n->memory_mib;
    out->memory_left = n->memory_left;
    memcpy(out->gpu_left, n->gpu_left, sizeof(out->gpu_left));
    memcpy(out->pcie_domain, n->pcie, sizeof(out->pcie_domain));
    memcpy(out->nvlink_group, n->nvlink, sizeof(out->nvlink_group));
    return 0;
}
