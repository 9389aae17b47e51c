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

#include "gpusched/grow.h"

#include <errno.h>
#include <nettle/memops.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

struct agent {
    uint8_t has_token;
    uint8_t sha[GSD_SHA256_LEN];
    json_t *reg; /* what the agent reported at its last registration, or NULL */
};

struct gsd_agents {
    struct agent *a;  /* per node */
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

int gsd_agents_init(struct gsd_state *st)
{
    size_t n = gs_cluster_node_count(st->cluster);
    st->agents = calloc(1, sizeof(*st->agents));
    if (!st->agents || !(st->agents->a = calloc(n ? n : 1, sizeof(struct agent))))
        return -ENOMEM;
    return st->store ? gsd_store_cred_load(st->store, load_one, st) : 0;
}

void gsd_agents_free(struct gsd_state *st)
{
    if (!st->agents)
        return;
    for (size_t i = 0; st->agents->a && i < gs_cluster_node_count(st->cluster); i++)
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

/* The body of a registration: {"gpus": N, "gpuModel": "...", "topology": {...}}. */
static int check_body(struct gsd_req *r, const struct gs_node_info *ni, json_t **out)
{
    json_t *b = json_loadb(r->body ? r->body : "", r->len, JSON_REJECT_DUPLICATES, NULL);
    const char *k;
    json_t *v;
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
    json_t *gpus = json_object_get(b, "gpus");
    const char *model = json_string_value(json_object_get(b, "gpuModel"));
    int m = model ? gs_catalog_find(model, -1) : ni->model;
    if (!gpus || json_integer_value(gpus) != ni->gpus || (ni->gpus > 0 && m != ni->model)) {
        gsd_reply_error(r, 409, gpus ? "gpuModel" : "gpus",
                        "node %s holds %d x %s in the inventory; its agent found %lld x %.64s",
                        ni->name, ni->gpus, ni->model >= 0 ? gs_catalog_at(ni->model)->name : "-",
                        (long long)json_integer_value(gpus), model ? model : "?");
        json_decref(b);
        return -1;
    }
    *out = b;
    return 0;
}

/* POST /v1/nodes/NAME/register: check the agent's inventory; a new token unless @self is i. */
static void do_register(struct gsd_state *st, struct gsd_req *r, int i, int self)
{
    struct gs_node_info ni;
    json_t *b;
    gs_cluster_node_info(st->cluster, (size_t)i, &ni);
    if (check_body(r, &ni, &b))
        return;
    struct agent *a = &st->agents->a[i];
    json_decref(a->reg);
    a->reg = b;
    if (gsd_health_beat(st, (size_t)i)) {
        gsd_reply_error(r, 500, "", "cannot store the node's health");
        return;
    }
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
    if (nl == 0 || nl >= sizeof(name) || rest[nl] != '/') {
        gsd_reply_error(r, 403, "", "a node token reaches only /v1/nodes/NAME/...");
        return;
    }
    memcpy(name, rest, nl);
    name[nl] = '\0';
    const char *tail = rest + nl + 1;
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
    if (!strcmp(tail, "register") && post)
        do_register(st, r, i, self);
    else if (!strcmp(tail, "pods") && get && self == -1)
        gsd_reply_error(r, 403, "Authorization",
                        "a node's pods are for its own token: register the node first");
    else if (!strcmp(tail, "pods") && get)
        bound_pods(st, r, i);
    else if (post)
        gsd_node_post(st, r, rest);
    else
        gsd_reply_error(r, 405, "",
                        "%s /v1/nodes/%s/%.32s: a node agent POSTs register, "
                        "heartbeat, gpus/INDEX/health and GETs pods",
                        r->method, name, tail);
}
