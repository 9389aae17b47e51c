/* gpuschedd: node agents' registration, tokens and bound pods. Contract: agents.h. */
#include "agents.h"
#include "api.h"
#include "config.h"
#include "log.h"
#include "nodes.h"
#include "podspec.h"
#include "server.h"
#include "state.h"
#include "store.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/diag.h"
#include "gpusched/fleet.h"
#include "gpusched/grow.h"
#include "gpusched/mig.h"
#include "gpusched/scenario.h"
#include "gpusched/tenancy.h"
#include "gpusched/topo.h"

#include <errno.h>
#include <nettle/memops.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* A node's cards as its agent found them: what placement reads in place of the inventory's. */
struct topo {
    uint8_t known, has_links;
    uint8_t pcie[GS_GPUS_MAX], nvlink[GS_GPUS_MAX];
    uint8_t links[GS_GPUS_MAX][GS_GPUS_MAX]; /* bonded NVLinks per pair */
};

struct agent {
    uint8_t has_token;
    uint8_t sha[GSD_SHA256_LEN];
    json_t *reg;      /* what the agent reported at its last registration, or NULL */
    struct topo topo; /* the topology of that registration (known 0: none given) */
};

struct gsd_agents {
    struct agent *a; /* per node */
    size_t n;
    uint64_t version; /* one more at every token made or loaded */
};

static int load_one(void *ud, const char *node, const uint8_t *sha)
{
    struct gsd_state *st = ud;
    int i = gs_cluster_find(st->cluster, node);
    if (i < 0) /* a node gone from the inventory keeps its row, unused */
        return 0;
    st->agents->a[i].has_token = 1;
    memcpy(st->agents->a[i].sha, sha, GSD_SHA256_LEN);
    st->agents->version++;
    return 0;
}

/* An integer index 0..GS_GPUS_MAX-1 into *@out. */
static int small_index(const json_t *v, uint8_t *out)
{
    json_int_t x = json_integer_value(v);
    *out = (uint8_t)x;
    return json_is_integer(v) && x >= 0 && x < GS_GPUS_MAX;
}

/*
 * The PCIe domains, NVLink groups and NVLink pairs of a registration's "topology" (the JSON form
 * of gs_topo_write(): gpus[].pcieDomain and .nvlinkGroup, nvlinks [[a, b, links], ...]) for a
 * node of @ngpus cards, into @t. Return: 0; 1 when it gives no "gpus" (nothing known); -1 with
 * @field and @msg.
 */
static int read_topology(const json_t *j, int ngpus, struct topo *t, char *field, size_t fcap,
                         char *msg, size_t mcap)
{
    const json_t *gpus = json_object_get(j, "gpus"), *edges = json_object_get(j, "nvlinks"), *g;
    size_t i;
    memset(t, 0, sizeof(*t));
    snprintf(field, fcap, "topology.gpus");
    snprintf(msg, mcap,
             "missing: nvlinks, links, pcieDomains and nvlinkGroups describe the cards "
             "it lists");
    if (!gpus && (edges || json_object_get(j, "links") || json_object_get(j, "pcieDomains") ||
                  json_object_get(j, "nvlinkGroups")))
        return -1;
    if (!gpus)
        return 1;
    snprintf(field, fcap, "topology.gpus");
    snprintf(msg, mcap, "expected an array of the node's %d cards", ngpus);
    if (!json_is_array(gpus) || json_array_size(gpus) != (size_t)ngpus)
        return -1;
    json_array_foreach(gpus, i, g)
    {
        const json_t *nv = json_object_get(g, "nvlinkGroup");
        uint8_t at;
        snprintf(field, fcap, "topology.gpus[%zu]", i);
        snprintf(msg, mcap,
                 "expected {\"index\": %zu, \"pcieDomain\": 0..%d, \"nvlinkGroup\": null or "
                 "0..%d}",
                 i, GS_GPUS_MAX - 1, GS_GPUS_MAX - 1);
        if (!small_index(json_object_get(g, "index"), &at) || at != i ||
            !small_index(json_object_get(g, "pcieDomain"), &t->pcie[i]) || !nv ||
            (!json_is_null(nv) && !small_index(nv, &t->nvlink[i])))
            return -1;
        if (json_is_null(nv))
            t->nvlink[i] = GS_NO_GROUP;
    }
    snprintf(field, fcap, "topology.nvlinks");
    snprintf(msg, mcap, "expected [[a, b, links], ...]");
    if (edges && !json_is_array(edges))
        return -1;
    json_array_foreach(edges, i, g)
    {
        uint8_t a, b;
        json_int_t n = json_integer_value(json_array_get(g, 2));
        snprintf(field, fcap, "topology.nvlinks[%zu]", i);
        snprintf(msg, mcap, "expected [a, b, links]: cards a < b below %d, 1..%d bonded links",
                 ngpus, GS_TOPO_NVLINK_MAX);
        if (json_array_size(g) != 3 || !small_index(json_array_get(g, 0), &a) ||
            !small_index(json_array_get(g, 1), &b) || a >= b || b >= ngpus ||
            !json_is_integer(json_array_get(g, 2)) || n < 1 || n > GS_TOPO_NVLINK_MAX)
            return -1;
        snprintf(msg, mcap, "cards %u and %u are paired twice", a, b); /* else the last won */
        if (t->links[a][b])
            return -1;
        t->links[a][b] = t->links[b][a] = (uint8_t)n;
        t->has_links = 1;
    }
    t->known = 1;
    return 0;
}

/* model_agrees() - topology @t (read_topology()) is one the cards of node @ni can have: NVLink
 * only where the model has it (gs_topology_check(), the rule a scenario's node template and a
 * snapshot of this daemon are read by). Return: 1; 0 with @field and @msg. */
static int model_agrees(const struct gs_node_info *ni, const struct topo *t, char *field,
                        size_t fcap, char *msg, size_t mcap)
{
    if (!t->known)
        return 1;
    snprintf(field, fcap, "topology.nvlinks");
    return gs_topology_check(ni->model, ni->gpus, t->nvlink, t->links, msg, mcap) == 0;
}

/* Tell the scheduler node @i's topology: its agent's, else its template's. Return: 0; -ENOMEM. */
static int apply_topology(struct gsd_state *st, size_t i)
{
    const struct topo *t = &st->agents->a[i].topo;
    const struct gs_policy *p = &st->inv->policy;
    const struct gs_node_template *tp = &p->templates[p->nodes[i].template_index];
    static const uint8_t none[GS_GPUS_MAX][GS_GPUS_MAX];
    const uint8_t(*links)[GS_GPUS_MAX] = t->known ? t->links : tp->nvlinks;
    int has = t->known ? t->has_links : memcmp(tp->nvlinks, none, sizeof(none)) != 0;
    int rc = gs_tenancy_node_topology(st->sched.tn, gsd_sched_now(st), (int32_t)i,
                                      t->known ? t->pcie : tp->pcie_domain,
                                      t->known ? t->nvlink : tp->nvlink_group, has ? links : NULL);
    return rc == -ENOMEM ? rc : 0; /* -EINVAL: read_topology() let nothing out of range through */
}

/* Whether registration @b gives the cards the inventory's node @ni holds: as many, of its model. */
static int same_cards(const struct gs_node_info *ni, const json_t *b)
{
    const char *model = json_string_value(json_object_get(b, "gpuModel"));
    int m = model ? gs_catalog_find(model, -1) : ni->model;
    return json_integer_value(json_object_get(b, "gpus")) == ni->gpus &&
           (ni->gpus == 0 || m == ni->model);
}

/* A stored registration: shown again, and its topology in force; not used when the inventory's
 * node is no longer of its cards (as a registration then would be refused: 409). */
static int load_reg(void *ud, const char *node, const char *body)
{
    struct gsd_state *st = ud;
    char field[64], msg[160];
    int i = gs_cluster_find(st->cluster, node);
    json_t *j = i >= 0 ? json_loads(body, 0, NULL) : NULL;
    struct gs_node_info ni;
    if (i < 0 || !j || gs_cluster_node_info(st->cluster, (size_t)i, &ni) || !same_cards(&ni, j) ||
        read_topology(json_object_get(j, "topology"), ni.gpus, &st->agents->a[i].topo, field,
                      sizeof(field), msg, sizeof(msg)) < 0 ||
        !model_agrees(&ni, &st->agents->a[i].topo, field, sizeof(field), msg, sizeof(msg))) {
        gsd_log("warn", "stored registration of a node the inventory no longer holds so: not used",
                "node", node, NULL);
        json_decref(j);
        return 0;
    }
    st->agents->a[i].reg = j;
    return apply_topology(st, (size_t)i);
}

int gsd_agent_topology(const struct gsd_state *st, size_t i, struct gs_node_template *tp)
{
    const struct topo *t = st->agents && i < st->agents->n ? &st->agents->a[i].topo : NULL;
    if (!t || !t->known)
        return 0;
    memcpy(tp->pcie_domain, t->pcie, sizeof(tp->pcie_domain));
    memcpy(tp->nvlink_group, t->nvlink, sizeof(tp->nvlink_group));
    memcpy(tp->nvlinks, t->links, sizeof(tp->nvlinks)); /* all 0 when it reported no links */
    return 1;
}

int gsd_agent_cards_agree(const struct gsd_state *st, size_t i, const struct gs_node_info *ni)
{
    const json_t *reg = st->agents && i < st->agents->n ? st->agents->a[i].reg : NULL;
    return !reg || same_cards(ni, reg);
}

int gsd_agents_apply(struct gsd_state *st)
{
    int rc = 0;
    for (size_t i = 0; !rc && st->agents && i < gs_cluster_node_count(st->cluster); i++)
        if (st->agents->a[i].topo.known)
            rc = apply_topology(st, i);
    return rc;
}

int gsd_agents_init(struct gsd_state *st)
{
    size_t n = gs_cluster_node_count(st->cluster);
    st->agents = calloc(1, sizeof(*st->agents));
    if (!st->agents || !(st->agents->a = calloc(n ? n : 1, sizeof(struct agent))))
        return -ENOMEM;
    st->agents->n = n;
    int rc = st->store ? gsd_store_cred_load(st->store, load_one, st) : 0;
    return rc || !st->store ? rc : gsd_store_reg_load(st->store, load_reg, st);
}

int gsd_agents_grow(struct gsd_state *st)
{
    size_t n = gs_cluster_node_count(st->cluster);
    struct agent *a = st->agents ? realloc(st->agents->a, (n ? n : 1) * sizeof(*a)) : NULL;
    if (!a)
        return st->agents ? -ENOMEM : 0;
    memset(&a[st->agents->n], 0, (n - st->agents->n) * sizeof(*a));
    st->agents->a = a;
    st->agents->n = n;
    st->agents->version++; /* the access layer takes the token arrays again, of the new size */
    return 0;
}

void gsd_agents_free(struct gsd_state *st)
{
    if (!st->agents)
        return;
    for (size_t i = 0; st->agents->a && i < st->agents->n; i++)
        json_decref(st->agents->a[i].reg);
    free(st->agents->a);
    free(st->agents);
    st->agents = NULL;
}

int gsd_agent_auth(const struct gsd_state *st, const uint8_t *sha)
{
    int who = -1;
    /* every node's hash is compared, whatever matched before */
    for (size_t i = 0; st->agents && i < gs_cluster_node_count(st->cluster); i++)
        if (memeql_sec(st->agents->a[i].sha, sha, GSD_SHA256_LEN) & st->agents->a[i].has_token)
            who = (int)i;
    return who;
}

uint64_t gsd_agents_version(const struct gsd_state *st)
{
    return st->agents ? st->agents->version : 0;
}

void gsd_agent_tokens(const struct gsd_state *st, uint8_t (*sha)[GSD_SHA256_LEN], uint8_t *has)
{
    for (size_t i = 0; st->agents && i < gs_cluster_node_count(st->cluster); i++) {
        has[i] = st->agents->a[i].has_token;
        memcpy(sha[i], st->agents->a[i].sha, GSD_SHA256_LEN);
    }
}

json_t *gsd_agent_json(const struct gsd_state *st, int i)
{
    const struct agent *a = st->agents ? &st->agents->a[i] : NULL;
    return a && a->reg ? json_incref(a->reg) : NULL;
}

/* Card @g of node @i holds MIG instance (GPU instance profile @id, first memory slice @start) in
 * the scheduler's fleet: gpuschedd placed it. */
static int mig_planned(const struct gsd_state *st, size_t i, int g, json_int_t id, json_int_t start)
{
    const struct gs_mig_card *c = gs_fleet_card_mig(gs_tenancy_fleet(st->sched.tn), i, g);
    const struct gs_mig_model *m = c ? gs_mig_model_at(c->model) : NULL;
    for (int k = 0; m && k < c->ninst; k++)
        if (m->profiles[c->inst[k].profile].id == id && c->inst[k].start == start)
            return 1;
    return 0;
}

json_t *gsd_agent_warnings(const struct gsd_state *st, size_t i)
{
    const struct agent *a = st->agents && i < st->agents->n ? &st->agents->a[i] : NULL;
    const json_t *gpus = a && a->reg ? json_object_get(json_object_get(a->reg, "topology"), "gpus")
                                     : NULL,
                 *g, *x;
    struct gs_node_info ni;
    size_t c, k;
    json_t *out = NULL;
    if (!gpus || gs_cluster_node_info(st->cluster, i, &ni))
        return NULL;
    const struct gs_mig_model *mm =
        ni.model >= 0 ? gs_mig_model_at(gs_mig_model_find(gs_catalog_at(ni.model)->name)) : NULL;
    json_array_foreach(gpus, c, g)
    {
        char list[256];
        size_t off = 0;
        list[0] = '\0';
        json_array_foreach(json_object_get(g, "migInstances"), k, x)
        {
            json_int_t id = json_integer_value(json_object_get(x, "giProfile")),
                       start = json_integer_value(json_object_get(x, "start"));
            if (mig_planned(st, i, (int)c, id, start))
                continue;
            const char *name = NULL;
            for (int p = 0; mm && p < mm->nprofiles && !name; p++)
                name = mm->profiles[p].id == id ? mm->profiles[p].name : NULL;
            char prof[32];
            if (name)
                snprintf(prof, sizeof(prof), "%s", name);
            else
                snprintf(prof, sizeof(prof), "profile ID %lld", (long long)id);
            if (off < sizeof(list)) /* at most 7 instances of some 40 bytes: they fit */
                off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s at slice %lld",
                                        off ? ", " : "", prof, (long long)start);
        }
        if (!off)
            continue;
        if (!out)
            out = json_array();
        json_array_append_new(
            out, json_sprintf("GPU %zu: its agent reported MIG instances gpuschedd did not place "
                              "(%s): gpuschedd places pods on the card as if they were not there, "
                              "and the agent destroys them once they run nothing",
                              c, list));
    }
    return out;
}

/* The keys of `gpusched topo --json`'s tree (topoprint.c), per level; what placement does not
 * read is kept and shown, and any other key is refused: it would be shown as if it counted. */
static const char *const topo_keys[] = {"name",    "gpus", "pcieDomains", "nvlinkGroups",
                                        "nvlinks", "nics", "links",       NULL};
static const char *const gpu_keys[] = {
    "index", "pcieDomain", "nvlinkGroup", "numa",      "numaAffinity", "cpuAffinity",  "gpuNumaId",
    "uuid",  "name",       "pciBusId",    "memoryMiB", "migMode",      "migInstances", NULL};
static const char *const mig_keys[] = {"uuid", "giProfile", "start", "size", "memoryMiB", NULL};
static const char *const nic_keys[] = {"name", "links", NULL};

/* The first key of object @o not in @known, its path (@at, then the key) into @field; 1 when
 * there is none (or @o is no object: read_topology() checks the shapes). */
static int keys_known(const json_t *o, const char *at, const char *const *known, char *field,
                      size_t fcap)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        const char *const *w = known;
        while (*w && strcmp(*w, k))
            w++;
        if (!*w) {
            snprintf(field, fcap, "%s.%.64s", at, k);
            return 0;
        }
    }
    return 1;
}

/* Every key of a registration's "topology" @t is one of its form's. Return: 1; 0 with @field. */
static int topology_keys_known(const json_t *t, char *field, size_t fcap)
{
    char at[80];
    size_t i, m;
    const json_t *g, *x;
    if (!keys_known(t, "topology", topo_keys, field, fcap))
        return 0;
    json_array_foreach(json_object_get(t, "gpus"), i, g)
    {
        snprintf(at, sizeof(at), "topology.gpus[%zu]", i);
        if (!keys_known(g, at, gpu_keys, field, fcap))
            return 0;
        json_array_foreach(json_object_get(g, "migInstances"), m, x)
        {
            snprintf(at, sizeof(at), "topology.gpus[%zu].migInstances[%zu]", i, m);
            if (!keys_known(x, at, mig_keys, field, fcap))
                return 0;
        }
    }
    json_array_foreach(json_object_get(t, "nics"), i, x)
    {
        snprintf(at, sizeof(at), "topology.nics[%zu]", i);
        if (!keys_known(x, at, nic_keys, field, fcap))
            return 0;
    }
    return 1;
}

/* A value kept and shown, of the tree's form: @kind 's' text of 1..@hi - 1 bytes that
 * gs_text_plain() passes ("" too when @lo is 0), 'i' an integer @lo..@hi, 'n' the same or null,
 * 'b' a boolean or null. */
struct kept {
    const char *key;
    char kind;
    long long lo, hi;
};

#define NUMA_MAX (GS_TOPO_NUMA_MAX - 1) /* as gpusched topo reads them */
static const struct kept gpu_kept[] = {{"numa", 'n', 0, NUMA_MAX},
                                       {"numaAffinity", 's', 0, GS_TOPO_CPUS_MAX},
                                       {"cpuAffinity", 's', 0, GS_TOPO_CPUS_MAX},
                                       {"gpuNumaId", 'n', 0, NUMA_MAX},
                                       {"uuid", 's', 1, GS_TOPO_UUID_MAX},
                                       {"name", 's', 0, GS_TOPO_NAME_MAX},
                                       {"pciBusId", 's', 0, GS_TOPO_PCI_MAX},
                                       {"memoryMiB", 'i', 0, 1ll << 30},
                                       {"migMode", 'b', 0, 0},
                                       {NULL, 0, 0, 0}};
static const struct kept mig_kept[] = {
    {"uuid", 's', 0, GS_TOPO_UUID_MAX}, /* "": no compute one */
    {"giProfile", 'i', 0, 255},         {"start", 'i', 0, 7}, {"size", 'i', 1, 8},
    {"memoryMiB", 'i', 0, 1ll << 30},   {NULL, 0, 0, 0}};

/* Each of @k's keys in object @o (where given) of its kind; @at names @o. Return: 1; 0 with
 * @field and @msg. */
static int kept_ok(const json_t *o, const char *at, const struct kept *k, char *field, size_t fcap,
                   char *msg, size_t mcap)
{
    for (; k->key; k++) {
        const json_t *v = json_object_get(o, k->key);
        const char *s = json_string_value(v);
        json_int_t x = json_integer_value(v);
        int ok = !v || (k->kind == 's' ? s && strlen(s) >= (size_t)k->lo &&
                                             strlen(s) < (size_t)k->hi && gs_text_plain(s)
                        : k->kind == 'b' ? json_is_boolean(v) || json_is_null(v)
                                         : (k->kind == 'n' && json_is_null(v)) ||
                                               (json_is_integer(v) && x >= k->lo && x <= k->hi));
        if (ok)
            continue;
        snprintf(field, fcap, "%s.%s", at, k->key);
        if (k->kind == 's')
            snprintf(msg, mcap, "expected text of %lld..%lld bytes without control characters",
                     k->lo, k->hi - 1);
        else if (k->kind == 'b')
            snprintf(msg, mcap, "expected true, false or null");
        else
            snprintf(msg, mcap, "expected %s%lld..%lld", k->kind == 'n' ? "null or " : "", k->lo,
                     k->hi);
        return 0;
    }
    return 1;
}

/* The link class named @s in a `links` row or a NIC's (nvidia-smi's legend, "?" unknown), or
 * "NV<n>" with n into *@nv. Return: the enum gs_link; -1 for none of them. */
static int link_named(const char *s, int *nv)
{
    *nv = 0;
    if (s && !strncmp(s, "NV", 2) && s[2] >= '1' && s[2] <= '9') {
        char *end;
        long n = strtol(s + 2, &end, 10);
        *nv = (int)n;
        return !*end && n <= GS_TOPO_NVLINK_MAX ? GS_LINK_NV : -1;
    }
    for (int l = GS_LINK_NONE; s && l <= GS_LINK_SELF; l++)
        if (l != GS_LINK_NV && !strcmp(s, gs_link_name(l)))
            return l;
    return -1;
}

/* `links`, the pair matrix @m, into @g: "X" on the diagonal, a PCIe class for every other pair
 * or, for a pair `nvlinks` (@g's) pairs with n links, "NV<n>" where the source hid its PCIe path
 * (nvidia-smi's text; NVML gives the class), symmetric: what the agent's gs_topo_derive() read.
 * Return: 1; 0 with @field and @msg. */
static int read_links(const json_t *m, struct gs_topo *g, char *field, size_t fcap, char *msg,
                      size_t mcap)
{
    snprintf(field, fcap, "topology.links");
    snprintf(msg, mcap, "expected %d rows of %d link classes", g->ngpus, g->ngpus);
    if (!json_is_array(m) || json_array_size(m) != (size_t)g->ngpus)
        return 0;
    for (int a = 0; a < g->ngpus; a++) {
        const json_t *row = json_array_get(m, (size_t)a);
        snprintf(field, fcap, "topology.links[%d]", a);
        snprintf(msg, mcap, "expected %d link classes, one for each card", g->ngpus);
        if (!json_is_array(row) || json_array_size(row) != (size_t)g->ngpus)
            return 0;
        for (int b = 0; b < g->ngpus; b++) {
            int nv, l = link_named(json_string_value(json_array_get(row, (size_t)b)), &nv);
            int pcie = l >= GS_LINK_SYS && l <= GS_LINK_PIX;
            snprintf(field, fcap, "topology.links[%d][%d]", a, b);
            if (a == b)
                snprintf(msg, mcap, "expected \"X\"");
            else if (g->nvlinks[a][b])
                snprintf(msg, mcap,
                         "expected SYS, NODE, PHB, PXB, PIX or \"NV%d\", as nvlinks pairs cards "
                         "%d and %d",
                         g->nvlinks[a][b], a, b);
            else
                snprintf(msg, mcap, "expected SYS, NODE, PHB, PXB or PIX (nvlinks pairs them not)");
            if (a == b ? l != GS_LINK_SELF
                       : !pcie && (l != GS_LINK_NV || !g->nvlinks[a][b] || nv != g->nvlinks[a][b]))
                return 0;
            snprintf(msg, mcap, "expected \"%s\", as links[%d][%d]: a pair's link is one",
                     gs_link_name(g->link[b][a]), b, a);
            if (b < a && l != g->link[b][a])
                return 0;
            g->link[a][b] = (uint8_t)l;
        }
    }
    return 1;
}

/* `nics` @n into @g: at most GS_TOPO_NICS_MAX, each a name of its own and a PCIe class (or "?")
 * to every card. Return: 1; 0 with @field and @msg. */
static int read_nics(const json_t *n, struct gs_topo *g, char *field, size_t fcap, char *msg,
                     size_t mcap)
{
    const json_t *x;
    size_t i;
    snprintf(field, fcap, "topology.nics");
    snprintf(msg, mcap, "expected an array of at most %d NICs", GS_TOPO_NICS_MAX);
    if (!json_is_array(n) || json_array_size(n) > GS_TOPO_NICS_MAX)
        return 0;
    json_array_foreach(n, i, x)
    {
        const char *name = json_string_value(json_object_get(x, "name"));
        const json_t *row = json_object_get(x, "links");
        snprintf(field, fcap, "topology.nics[%zu].name", i);
        snprintf(msg, mcap,
                 "expected a name of 1..%d bytes without control characters, not "
                 "another NIC's",
                 GS_TOPO_NAME_MAX - 1);
        if (!name || !*name || strlen(name) >= GS_TOPO_NAME_MAX || !gs_text_plain(name))
            return 0;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(g->nic[k], name))
                return 0;
        snprintf(g->nic[i], sizeof(g->nic[i]), "%s", name);
        snprintf(field, fcap, "topology.nics[%zu].links", i);
        snprintf(msg, mcap, "expected %d of SYS, NODE, PHB, PXB, PIX or ?, one per card", g->ngpus);
        if (!json_is_array(row) || json_array_size(row) != (size_t)g->ngpus)
            return 0;
        for (int c = 0; c < g->ngpus; c++) {
            int nv, l = link_named(json_string_value(json_array_get(row, (size_t)c)), &nv);
            if (l < GS_LINK_NONE || l > GS_LINK_PIX)
                return 0;
            g->nic_link[i][c] = (uint8_t)l;
        }
        g->nnics = (int)i + 1;
    }
    return 1;
}

/* @given (NULL: not given) lists the cards of each of @of's numbers 0.. in turn, as
 * `pcieDomains` and `nvlinkGroups` do. */
static int listed(const json_t *given, const uint8_t *of, int ngpus)
{
    json_t *want = json_array();
    for (int k = 0; given && want && k < GS_GPUS_MAX; k++) {
        json_t *m = json_array();
        for (int c = 0; m && c < ngpus; c++)
            if (of[c] == k)
                json_array_append_new(m, json_integer(c));
        if (json_array_size(m))
            json_array_append(want, m);
        json_decref(m);
    }
    int ok = !given || json_equal(given, want);
    json_decref(want);
    return ok;
}

/* Card @g's migInstances (the card's path @at): at most GS_TOPO_MIG_MAX objects of their kind,
 * each within the card's 8 slices and none on another's, on a card in MIG mode. Return: 1; 0 with
 * @field and @msg. */
static int mig_ok(const json_t *g, const char *at, char *field, size_t fcap, char *msg, size_t mcap)
{
    const json_t *mig = json_object_get(g, "migInstances"), *x;
    size_t k;
    unsigned used = 0; /* the card's memory slices the instances read so far hold */
    snprintf(field, fcap, "%s.migInstances", at);
    snprintf(msg, mcap,
             "expected an array of at most %d instances, on a card whose migMode is true",
             GS_TOPO_MIG_MAX);
    if (mig && (!json_is_array(mig) || json_array_size(mig) > GS_TOPO_MIG_MAX ||
                (json_array_size(mig) && !json_is_true(json_object_get(g, "migMode")))))
        return 0;
    json_array_foreach(mig, k, x)
    {
        char in[128];
        snprintf(in, sizeof(in), "%s.migInstances[%zu]", at, k);
        snprintf(field, fcap, "%s", in);
        snprintf(msg, mcap, "expected an object with uuid, giProfile, start, size, memoryMiB");
        if (!json_is_object(x) || !kept_ok(x, in, mig_kept, field, fcap, msg, mcap))
            return 0;
        json_int_t start = json_integer_value(json_object_get(x, "start")),
                   size = json_integer_value(json_object_get(x, "size"));
        snprintf(field, fcap, "%s.size", in);
        snprintf(msg, mcap, "start + size past the card's 8 slices");
        if (start + size > 8)
            return 0;
        unsigned span = ((1u << size) - 1) << start; /* the memory slices it holds */
        snprintf(field, fcap, "%s.start", in);
        snprintf(msg, mcap, "slices %d..%d overlap another instance's: a slice is one instance's",
                 (int)start, (int)(start + size - 1));
        if (used & span)
            return 0;
        used |= span;
    }
    return 1;
}

/*
 * Card @g (at @at) is one model @model (catalog index, -1 unknown) can be: its memory at most the
 * model's, MIG only on a model that has it, each instance a GPU instance profile of the model
 * (gpusched/mig.h: the -lgip ID NVML gives as the instance's profileId) of its size, at a start
 * the profile may take. Return: 1; 0 with @field and @msg.
 */
static int card_on_model(const json_t *g, const char *at, int model, char *field, size_t fcap,
                         char *msg, size_t mcap)
{
    const struct gs_gpu_model *cm = gs_catalog_at(model);
    if (!cm)
        return 1;
    snprintf(field, fcap, "%s.memoryMiB", at);
    snprintf(msg, mcap, "more than a %s has (%u MiB)", cm->name, cm->memory_mib);
    if (json_integer_value(json_object_get(g, "memoryMiB")) > (json_int_t)cm->memory_mib)
        return 0;
    const struct gs_mig_model *mm = gs_mig_model_at(gs_mig_model_find(cm->name));
    snprintf(field, fcap, "%s.migMode", at);
    snprintf(msg, mcap, "a %s has no MIG", cm->name);
    if (!mm && json_is_true(json_object_get(g, "migMode")))
        return 0;
    const json_t *x;
    size_t k;
    json_array_foreach(json_object_get(g, "migInstances"), k, x)
    {
        json_int_t id = json_integer_value(json_object_get(x, "giProfile")),
                   start = json_integer_value(json_object_get(x, "start")),
                   size = json_integer_value(json_object_get(x, "size"));
        const struct gs_mig_profile *pf = NULL;
        for (int i = 0; i < mm->nprofiles && !pf; i++)
            pf = mm->profiles[i].id == id ? &mm->profiles[i] : NULL;
        snprintf(field, fcap, "%s.migInstances[%zu].giProfile", at, k);
        snprintf(msg, mcap, "no GPU instance profile of a %s has ID %lld", cm->name, (long long)id);
        if (!pf)
            return 0;
        snprintf(field, fcap, "%s.migInstances[%zu].size", at, k);
        snprintf(msg, mcap, "%s takes %u memory slices", pf->name, pf->memory_slices);
        if (size != pf->memory_slices)
            return 0;
        snprintf(field, fcap, "%s.migInstances[%zu].start", at, k);
        snprintf(msg, mcap, "%s does not start at memory slice %lld", pf->name, (long long)start);
        if (!(pf->starts >> start & 1u))
            return 0;
    }
    return 1;
}

/* No two cards or MIG instances of @gpus share a UUID (NVML's are unique). Return: 1; 0 with
 * @field and @msg. */
static int uuids_unique(const json_t *gpus, char *field, size_t fcap, char *msg, size_t mcap)
{
    const char *seen[GS_GPUS_MAX * (GS_TOPO_MIG_MAX + 1)];
    size_t n = 0, i, k;
    const json_t *g, *x;
    json_array_foreach(gpus, i, g)
    {
        const char *u[GS_TOPO_MIG_MAX + 1] = {json_string_value(json_object_get(g, "uuid"))};
        size_t nu = 1;
        json_array_foreach(json_object_get(g, "migInstances"), k, x) u[nu++] =
            json_string_value(json_object_get(x, "uuid"));
        for (size_t a = 0; a < nu; a++) {
            for (size_t b = 0; u[a] && *u[a] && b < n; b++)
                if (!strcmp(u[a], seen[b])) {
                    snprintf(field, fcap, "topology.gpus[%zu]%s", i, a ? ".migInstances" : ".uuid");
                    snprintf(msg, mcap, "UUID %.96s given twice: a UUID names one device", u[a]);
                    return 0;
                }
            if (u[a] && *u[a] && n < sizeof(seen) / sizeof(seen[0]))
                seen[n++] = u[a];
        }
    }
    return 1;
}

/*
 * Registration topology @j of node @name, read by read_topology() into @t, says one thing once:
 * its `name` is the node's, the values kept and shown are of their kind, and the NVLink groups
 * (and, with `links`, the PCIe domains) are what gs_topo_derive(), the rule the agent's tree
 * comes from, makes of its `nvlinks` (and `links` and `nics`); `pcieDomains` and `nvlinkGroups`
 * list what gpus[] says; each card is one its model @model can be (card_on_model()). Return: 1; 0
 * with @field and @msg.
 */
static int topology_agrees(const json_t *j, const char *name, int ngpus, int model,
                           const struct topo *t, char *field, size_t fcap, char *msg, size_t mcap)
{
    struct gs_topo g;
    const json_t *nm = json_object_get(j, "name"), *x;
    size_t i;
    gs_topo_init(&g);
    g.ngpus = ngpus;
    memcpy(g.nvlinks, t->links, sizeof(g.nvlinks));
    snprintf(field, fcap, "topology.name");
    snprintf(msg, mcap, "expected \"%s\", the node registering", name);
    if (nm && (!json_is_string(nm) || strcmp(json_string_value(nm), name)))
        return 0;
    json_array_foreach(json_object_get(j, "gpus"), i, x)
    {
        char at[64];
        snprintf(at, sizeof(at), "topology.gpus[%zu]", i);
        if (!kept_ok(x, at, gpu_kept, field, fcap, msg, mcap))
            return 0;
        if (!mig_ok(x, at, field, fcap, msg, mcap) ||
            !card_on_model(x, at, model, field, fcap, msg, mcap))
            return 0;
    }
    if (!uuids_unique(json_object_get(j, "gpus"), field, fcap, msg, mcap))
        return 0;
    if ((x = json_object_get(j, "nics")) && !read_nics(x, &g, field, fcap, msg, mcap))
        return 0;
    int links = (x = json_object_get(j, "links")) != NULL;
    if (links && !read_links(x, &g, field, fcap, msg, mcap))
        return 0;
    if (!t->known) /* no gpus[]: the template's cards, nothing to agree with */
        return 1;
    gs_topo_derive(&g);
    for (int c = 0; c < ngpus; c++) {
        int nv = g.nvlink_group[c] != t->nvlink[c], pcie = links && g.pcie_domain[c] != t->pcie[c];
        snprintf(field, fcap, "topology.gpus[%d].%s", c, nv ? "nvlinkGroup" : "pcieDomain");
        if (nv && g.nvlink_group[c] == GS_NO_GROUP)
            snprintf(msg, mcap, "expected null: nvlinks puts card %d in no NVLink clique", c);
        else
            snprintf(msg, mcap, "expected %d: the %s its %s make",
                     nv ? g.nvlink_group[c] : g.pcie_domain[c],
                     nv ? "NVLink group (largest clique)" : "PCIe domain",
                     nv ? "nvlinks" : "links and nics");
        if (nv || pcie)
            return 0;
    }
    snprintf(msg, mcap, "expected the cards of each number in gpus[] in turn, as they are there");
    snprintf(field, fcap, "topology.pcieDomains");
    if (!listed(json_object_get(j, "pcieDomains"), t->pcie, ngpus))
        return 0;
    snprintf(field, fcap, "topology.nvlinkGroups");
    return listed(json_object_get(j, "nvlinkGroups"), t->nvlink, ngpus);
}

/* The cards of registration @b against the inventory's node @ni: 400 for what no node could
 * hold (no count, a count out of 0..GS_GPUS_MAX, a model the catalog lacks), 409 for a
 * contradiction. Return: 0; -1, answered. */
static int check_inventory(struct gsd_req *r, const struct gs_node_info *ni, const json_t *b)
{
    char names[512];
    const json_t *gpus = json_object_get(b, "gpus");
    json_int_t n = json_integer_value(gpus);
    const char *model = json_string_value(json_object_get(b, "gpuModel"));
    int m = model ? gs_catalog_find(model, -1) : ni->model;
    if (!gpus || n < 0 || n > GS_GPUS_MAX) {
        gsd_reply_error(r, 400, "gpus", "gpus: expected the node's card count, 0..%d", GS_GPUS_MAX);
        return -1;
    }
    if (m < 0 && model) {
        gsd_reply_error(r, 400, "gpuModel", "gpuModel: %.64s is no model of the catalog (%s)",
                        model, gs_catalog_names(names, sizeof(names)));
        return -1;
    }
    if (same_cards(ni, b))
        return 0;
    gsd_reply_error(r, 409, n != ni->gpus ? "gpus" : "gpuModel",
                    "node %s holds %d x %s in the inventory; its agent found %lld %s%.64s",
                    ni->name, ni->gpus, ni->model >= 0 ? gs_catalog_at(ni->model)->name : "-",
                    (long long)n, model ? "x " : "cards (no gpuModel given)", model ? model : "");
    return -1;
}

/* The body of a registration: {"gpus": N, "gpuModel": "...", "topology": {...}}; its topology
 * into @t. */
static int check_body(struct gsd_req *r, const struct gs_node_info *ni, json_t **out,
                      struct topo *t)
{
    char field[160], msg[160];
    json_t *b;
    const char *k;
    json_t *v;
    if (gsd_body_json(r, &b)) /* names a duplicate key, a bad byte, where the JSON breaks */
        return -1;
    if (!json_is_object(b)) {
        json_decref(b);
        gsd_reply_error(r, 400, "",
                        "body: expected {\"gpus\": 8, \"gpuModel\": \"...\", "
                        "\"topology\": {...}}");
        return -1;
    }
    json_object_foreach(b, k, v)
    {
        int ok = !strcmp(k, "gpus")       ? json_is_integer(v)
                 : !strcmp(k, "gpuModel") ? json_is_string(v)
                 : !strcmp(k, "topology") ? json_is_object(v)
                                          : -1;
        if (ok <= 0) {
            gsd_reply_error(r, 400, k,
                            ok < 0 ? "%.64s: not a registration field (gpus, gpuModel, "
                                     "topology)"
                                   : "%.64s: wrong type",
                            k);
            json_decref(b);
            return -1;
        }
    }
    if (check_inventory(r, ni, b)) {
        json_decref(b);
        return -1;
    }
    if (!topology_keys_known(json_object_get(b, "topology"), field, sizeof(field))) {
        gsd_reply_error(r, 400, field,
                        "%s: not a key of `gpusched topo --json`'s tree (docs/node-agent.md): "
                        "refused rather than ignored",
                        field);
        json_decref(b);
        return -1;
    }
    const json_t *tj = json_object_get(b, "topology");
    int known = read_topology(tj, ni->gpus, t, field, sizeof(field), msg, sizeof(msg));
    if (known < 0 ||
        (tj && !topology_agrees(tj, ni->name, ni->gpus, ni->model, t, field, sizeof(field), msg,
                                sizeof(msg))) ||
        !model_agrees(ni, t, field, sizeof(field), msg, sizeof(msg))) {
        gsd_reply_error(r, 400, field, "%s: %s", field, msg); /* as every field's error */
        json_decref(b);
        return -1;
    }
    *out = b;
    return 0;
}

/* Log what node @i (@name)'s registration reports that the scheduler's plan lacks. */
static void log_warnings(const struct gsd_state *st, size_t i, const char *name)
{
    json_t *warn = gsd_agent_warnings(st, i), *w;
    size_t k;
    json_array_foreach(warn, k, w)
    {
        gsd_log("warn", "node agent reports MIG instances gpuschedd did not place", "node", name,
                "detail", json_string_value(w), NULL);
    }
    json_decref(warn);
}

/* POST /v1/nodes/NAME/register: check the agent's inventory; a new token unless @self is i. */
static void do_register(struct gsd_state *st, struct gsd_req *r, int i, int self)
{
    struct gs_node_info ni;
    struct topo t;
    json_t *b;
    gs_cluster_node_info(st->cluster, (size_t)i, &ni);
    if (check_body(r, &ni, &b, &t))
        return;
    struct agent *a = &st->agents->a[i];
    json_decref(a->reg);
    a->reg = b;
    a->topo = t;
    char *text = json_dumps(b, JSON_COMPACT);
    int rc = text ? apply_topology(st, (size_t)i) : -ENOMEM;
    if (!rc && st->store && gsd_store_reg_put(st->store, ni.name, text, gsd_now_us())) {
        st->failed = 1;
        rc = -EIO;
    }
    free(text);
    if (rc) {
        gsd_reply_error(r, 500, "", "cannot keep the node's topology");
        return;
    }
    if (gsd_health_beat(st, (size_t)i)) {
        gsd_reply_error(r, 500, "", "cannot store the node's health");
        return;
    }
    log_warnings(st, (size_t)i, ni.name);
    if (self == i) {
        gsd_reply_json(r, 200, json_pack("{s:s}", "node", ni.name));
        return;
    }
    uint8_t raw[32];
    char hex[65];
    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
        gsd_reply_error(r, 500, "", "no randomness for a token");
        return;
    }
    for (int k = 0; k < 32; k++)
        snprintf(hex + 2 * k, 3, "%02x", raw[k]);
    uint8_t sha[GSD_SHA256_LEN];
    gsd_sha256(hex, 64, sha);
    if (st->store && gsd_store_cred_put(st->store, ni.name, sha, gsd_now_us())) {
        st->failed = 1;
        gsd_reply_error(r, 500, "", "cannot store the node's token");
        return;
    }
    a->has_token = 1;
    memcpy(a->sha, sha, sizeof(sha));
    st->agents->version++;
    gsd_log("info", "node agent registered", "node", ni.name, NULL);
    gsd_reply_json(r, 201, json_pack("{s:s, s:s}", "node", ni.name, "token", hex));
}

static int by_start(const void *x, const void *y)
{
    const struct gsd_pod *a = *(const struct gsd_pod *const *)x;
    const struct gsd_pod *b = *(const struct gsd_pod *const *)y;
    return a->start_us != b->start_us ? (a->start_us > b->start_us) - (a->start_us < b->start_us)
                                      : (a->seq > b->seq) - (a->seq < b->seq);
}

/* The DaemonConfig weight of tenant @name (1 for a pod no tenant owns), and the smallest one. */
static int32_t tenant_weight(const struct gsd_config *c, const char *name, int32_t *min)
{
    int32_t w = 0;
    *min = 0;
    for (size_t i = 0; i < c->ntenants; i++) {
        if (!strcmp(c->tenants[i].name, name))
            w = c->tenants[i].weight;
        if (!*min || c->tenants[i].weight < *min)
            *min = c->tenants[i].weight;
    }
    *min = *min ? *min : 1;
    return w ? w : *min; /* unowned: as the lightest tenant, so its weight is kubelet's */
}

/* GET /v1/nodes/NAME/pods: the pods running there, in the order they were bound. */
static void bound_pods(struct gsd_state *st, struct gsd_req *r, int i)
{
    size_t n = 0, cap = 0;
    struct gsd_pod **v = NULL;
    int oom = 0;
    for (struct gsd_pod *p = st->head; !oom && p; p = p->next) {
        if (p->state != GSD_RUNNING || p->pl.node != i)
            continue;
        if (!gs_uid_ok(p->uid)) /* stored before UIDs were checked (restore said so): the */
            continue;           /* agent would refuse the whole list */
        struct gsd_pod **w = gs_grow(v, &cap, n + 1, sizeof(*v), 64);
        if (w)
            (v = w)[n++] = p;
        oom = !w;
    }
    if (oom)
        free(v);
    if (oom) {
        gsd_reply_error(r, 500, "", "out of memory");
        return;
    }
    if (n)
        qsort(v, n, sizeof(*v), by_start);
    json_t *a = json_array();
    for (size_t k = 0; a && k < n; k++) {
        json_t *o = gsd_pod_json(st, v[k]);
        int32_t min, w = tenant_weight(st->cfg, v[k]->tenant, &min);
        json_object_set_new(o, "tenant_weight", json_integer(w));
        json_object_set_new(o, "tenant_weight_min", json_integer(min));
        json_array_append_new(a, o);
    }
    free(v);
    gsd_reply_json(r, 200, a);
}

void gsd_agent_handle(struct gsd_state *st, struct gsd_req *r, const char *rest, int self)
{
    char name[GS_NAME_MAX];
    size_t nl = strcspn(rest, "/");
    /* "NAME" alone: the node itself, which its own token may read (its agent's health check) */
    int whole = rest[nl] == '\0' && self >= 0;
    if (nl == 0 || nl >= sizeof(name) || (rest[nl] != '/' && !whole)) {
        gsd_reply_error(r, 403, "Authorization", "%s",
                        nl && rest[nl] == '\0' && self < 0
                            ? "the DaemonConfig's nodeToken registers nodes and sends their "
                              "heartbeats and card health; reading a node takes its own token, "
                              "which its registration answered, or the admin token"
                            : "a node's token reaches only the node agent's routes, under "
                              "/v1/nodes/NAME/, and not this one");
        return;
    }
    memcpy(name, rest, nl);
    name[nl] = '\0';
    const char *tail = whole ? "" : rest + nl + 1;
    int i = gs_cluster_find(st->cluster, name);
    if (i < 0) {
        gsd_reply_error(r, 404, "", "node %.64s not found", name);
        return;
    }
    int has = st->agents->a[i].has_token;
    if (self >= 0 && self != i) {
        gsd_reply_error(r, 403, "Authorization", "this token is node %s's; it cannot act for %s",
                        gs_cluster_node_name(st->cluster, (size_t)self), name);
        return;
    }
    if (self == -1 && has) {
        gsd_reply_error(r, 403, "Authorization",
                        "node %s has registered: its own token is needed (or the admin token to "
                        "register it again)",
                        name);
        return;
    }
    int post = !strcmp(r->method, "POST"), get = !strcmp(r->method, "GET");
    if (whole && get)
        gsd_reply_json(r, 200, gsd_node_json(st, (size_t)i, 0, NULL));
    else if (whole)
        gsd_reply_405(r, "GET", ": a node's own token reads its node");
    else if (!strcmp(tail, "register") && post)
        do_register(st, r, i, self);
    else if (!strcmp(tail, "pods") && get && self == -1)
        gsd_reply_error(r, 403, "Authorization",
                        "a node's pods are for its own token: register the node first");
    else if (!strcmp(tail, "pods") && get)
        bound_pods(st, r, i);
    else if (post)
        gsd_node_post(st, r, rest);
    else
        gsd_reply_405(r, !strcmp(tail, "pods") ? "GET" : "POST",
                      ": a node agent POSTs register, heartbeat, gpus/INDEX/health and GETs pods");
}
