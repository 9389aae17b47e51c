/*
 * gpuschedd: the Kubernetes scheduler extender verbs (k8s.io/kube-scheduler/extender/v1).
 *
 * The Go types there carry no json tags, so the wire keys are the Go field names ("Pod",
 * "NodeNames", "FailedNodes", ...). Go decodes keys without regard to case; so does this file,
 * and refuses a field given under two spellings (refuse_case_twins()). filter, prioritize and bind
 * always answer 200 with their result type: the protocol's own Error field carries a failure, which
 * kube-scheduler reports against the pod. preempt's result has no such field: a bad request there
 * is a 400 naming the field, as is a body that is not JSON, or that names a node twice
 * (refuse_twice_named()).
 *
 * filter and prioritize ask the scheduler (gs_tenancy_probe_node()) what placement would say of
 * the pod on each named node, without binding: its quotas first, then the node's filter, and the
 * weighted score the scheduler's plugins give; preempt (preempt.c) checks kube-scheduler's victims
 * against the cards.
 * The pod's request is remembered (the last GSD_EXT_CACHE pods, at most
 * extender.maxRememberedBytes of them) because bind names only the pod:
 * bind then takes the cards on the chosen node and stores the pod as running, so the daemon's
 * own view of every card stays whole whichever path placed a pod. With `kubernetes:` in the
 * DaemonConfig, bind also writes the pod's annotations and its Binding to the API server (kube.c):
 * after the commit, on the HTTP thread (server.c), and a refusal gives the cards back.
 */
#include "extender.h"
#include "agents.h"
#include "api.h"
#include "kube.h"
#include "log.h"
#include "preempt.h"
#include "server.h"
#include "snapshot.h"
#include "state.h"
#include "store.h"

#include "gpusched/grow.h"
#include "gpusched/tenancy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Member @key of @obj: exact first, then any case (Go's encoding/json decodes that way). */
json_t *gsd_jget(const json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (v || !json_is_object(obj))
        return v;
    const char *k;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (!strcasecmp(k, key))
            return v;
    }
    return NULL;
}

/* Forget remembered pod @x (its slot free again). */
static void ext_forget(struct gsd_state *st, struct gsd_extpod *x)
{
    st->ext_bytes -= x->bytes;
    x->bytes = 0;
    gsd_podspec_clear(&x->spec);
    x->used = 0;
}

/*
 * Past extender.maxRememberedBytes, the oldest remembered pods are forgotten, @keep (the one just
 * remembered) never: 4,096 pods of the 256 KiB of annotations Kubernetes allows would otherwise
 * hold gigabytes. No remembered pod holds cards (bind and nominate take it out as they take them),
 * and kube-scheduler binds a pod just after filtering it; one forgotten before its bind is
 * refused as never filtered, and kube-scheduler schedules it again. O(GSD_EXT_CACHE) at most.
 */
static void ext_trim(struct gsd_state *st, const struct gsd_extpod *keep)
{
    size_t cap = (size_t)st->cfg->extender_remember_bytes;
    for (size_t i = 0; st->ext_bytes > cap && i < GSD_EXT_CACHE; i++) {
        struct gsd_extpod *x = &st->ext[(st->ext_next + i) % GSD_EXT_CACHE]; /* oldest first */
        if (x != keep && x->used) {
            gsd_log("warn",
                    "filtered pod forgotten: extender.maxRememberedBytes reached, a bind "
                    "of it is refused",
                    "pod", x->key, NULL);
            ext_forget(st, x);
        }
    }
}

static void ext_remember(struct gsd_state *st, struct gsd_podspec *spec)
{
    char key[GSD_KEY_MAX];
    snprintf(key, sizeof(key), "%.*s/%.*s", GSD_NAME_MAX - 1, spec->ns, GSD_OBJ_MAX - 1,
             spec->name);
    size_t slot = st->ext_next;
    for (size_t i = 0; i < GSD_EXT_CACHE; i++)
        if (st->ext[i].used && !strcmp(st->ext[i].key, key)) {
            slot = i;
            break;
        }
    if (slot == st->ext_next)
        st->ext_next = (st->ext_next + 1) % GSD_EXT_CACHE;
    ext_forget(st, &st->ext[slot]);
    memcpy(st->ext[slot].key, key, sizeof(key));
    st->ext[slot].spec = *spec; /* takes the labels and annotations */
    st->ext[slot].used = 1;
    st->ext[slot].bytes = spec->body ? strlen(spec->body) : 0;
    st->ext_bytes += st->ext[slot].bytes;
    memset(spec, 0, sizeof(*spec));
    ext_trim(st, &st->ext[slot]);
}

/* The pod remembered under @key ("NS/NAME"), or NULL. */
static struct gsd_extpod *ext_at(struct gsd_state *st, const char *key)
{
    for (size_t i = 0; i < GSD_EXT_CACHE; i++)
        if (st->ext[i].used && !strcmp(st->ext[i].key, key))
            return &st->ext[i];
    return NULL;
}

static struct gsd_extpod *ext_find(struct gsd_state *st, const char *ns, const char *name)
{
    char key[GSD_KEY_MAX];
    if (strlen(ns) >= GSD_NAME_MAX || strlen(name) >= GSD_OBJ_MAX) /* no pod's: never cut */
        return NULL;
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    return ext_at(st, key);
}

/*
 * A node named by ExtenderArgs: its name as a JSON string token (the answer's keys) and the item
 * to pass back (that token, or a v1.Node object as JSON text).
 */
struct ext_node {
    const char *key, *item; /* key NULL: the item has no name */
    size_t key_len, item_len;
};

/* ExtenderArgs as read: the Pod and the nodes, from NodeNames (cache_capable) or Nodes.items. */
struct ext_args {
    json_t *tree;    /* the whole body, when it was read that way */
    json_t *pod;     /* borrowed from tree, else owned; NULL when same_pod */
    const char *raw; /* the Pod's bytes in the body (read_fast()), raw_len of them */
    size_t raw_len;
    int same_pod;      /* the Pod's bytes are those the memo was made for: not read again */
    int is_object;     /* the body is a JSON object */
    int cache_capable; /* NodeNames is an array */
    int texts_owned;   /* key and item texts were malloc'd (else they point into the body) */
    int borrowed;      /* nodes and idx belong to the state's NodeNames cache */
    struct ext_node *nodes;
    int32_t *idx; /* per node: its index; -ENOENT not in the inventory; -EINVAL no name */
    size_t n, cap;
    char err[96]; /* first_error()'s words */
};

static void args_free(struct ext_args *a)
{
    for (size_t i = 0; a->texts_owned && i < a->n; i++) {
        if (a->nodes[i].item != a->nodes[i].key)
            free((char *)a->nodes[i].item);
        free((char *)a->nodes[i].key);
    }
    if (!a->tree)
        json_decref(a->pod);
    json_decref(a->tree);
    if (!a->borrowed) {
        free(a->nodes);
        free(a->idx);
    }
    memset(a, 0, sizeof(*a));
}

static int args_push(struct ext_args *a, struct ext_node x, int32_t idx)
{
    if (a->n == a->cap) {
        size_t cn = a->cap, ci = a->cap;
        struct ext_node *n = gs_grow(a->nodes, &cn, a->n + 1, sizeof(*n), 1024);
        if (n)
            a->nodes = n;
        int32_t *i = n ? gs_grow(a->idx, &ci, a->n + 1, sizeof(*i), 1024) : NULL;
        if (!i)
            return -ENOMEM;
        a->idx = i;
        a->cap = cn;
    }
    a->nodes[a->n] = x;
    a->idx[a->n++] = idx;
    return 0;
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* A JSON string of printable ASCII and no escapes at @p: the byte past it; else NULL. */
static const char *plain_string(const char *p, const char *end)
{
    if (p == end || *p != '"')
        return NULL;
    for (p++; p < end && *p != '"'; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e || *p == '\\')
            return NULL;
    return p < end ? p + 1 : NULL;
}

/*
 * The inventory's names packed for the 5,000 lookups of a NodeNames array that changed (the
 * cluster's own index reads a 250-byte node record per name, seldom in the cache): made on the
 * first such call, dropped with the extender's state when a node is added (gsd_extender_free()).
 */
struct gsd_ext_index {
    uint32_t *slot; /* open addressing by the name's hash: node index + 1; 0 empty */
    size_t mask;
    uint32_t *off; /* per node: where its name starts in text */
    uint8_t *len;  /* per node: its name's bytes (below GS_NAME_MAX) */
    char *text;
};

static uint64_t name_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static void index_free(struct gsd_ext_index *x)
{
    if (x) {
        free(x->slot);
        free(x->off);
        free(x->len);
        free(x->text);
    }
    free(x);
}

/* The index of @st's nodes' names, made now if need be; NULL out of memory. O(nodes) once. */
static const struct gsd_ext_index *index_of(struct gsd_state *st)
{
    if (st->ext_index)
        return st->ext_index;
    size_t nn = gs_cluster_node_count(st->cluster), cap = 16, used = 0;
    while (cap < 2 * nn)
        cap *= 2;
    struct gsd_ext_index *x = calloc(1, sizeof(*x));
    if (!x)
        return NULL;
    x->slot = calloc(cap, sizeof(*x->slot));
    x->off = malloc((nn + 1) * sizeof(*x->off));
    x->len = malloc(nn + 1);
    x->text = malloc(nn * GS_NAME_MAX + 1);
    x->mask = cap - 1;
    for (size_t i = 0; x->slot && x->off && x->len && x->text && i < nn; i++) {
        const char *name = gs_cluster_node_name(st->cluster, i);
        size_t n = strlen(name), h = name_hash(name, n) & x->mask;
        memcpy(x->text + used, name, n);
        x->off[i] = (uint32_t)used;
        x->len[i] = (uint8_t)n;
        used += n;
        while (x->slot[h]) /* names are unique: no need to compare */
            h = (h + 1) & x->mask;
        x->slot[h] = (uint32_t)i + 1;
    }
    if (!x->slot || !x->off || !x->len || !x->text) {
        index_free(x);
        return NULL;
    }
    return st->ext_index = x;
}

/* The index of the node named by the @len bytes at @name; -ENOENT when there is none. */
static int32_t find_node(struct gsd_state *st, const char *name, size_t len)
{
    const struct gsd_ext_index *x = index_of(st);
    if (!x) { /* out of memory: the cluster's own index */
        char buf[GS_NAME_MAX];
        if (len >= sizeof(buf))
            return -ENOENT; /* longer than any name the cluster holds */
        memcpy(buf, name, len);
        buf[len] = '\0';
        return gs_cluster_find(st->cluster, buf);
    }
    for (size_t h = name_hash(name, len) & x->mask; x->slot[h]; h = (h + 1) & x->mask) {
        uint32_t i = x->slot[h] - 1;
        if (x->len[i] == len && !memcmp(x->text + x->off[i], name, len))
            return (int32_t)i;
    }
    return -ENOENT;
}

/* The NodeNames array last read: its text, its items (pointing into that text) and indexes. */
struct gsd_ext_names {
    char *text;
    size_t len, n;
    struct ext_node *nodes;
    int32_t *idx;
};

/*
 * What the last filter found on each node, for the prioritize kube-scheduler sends next about the
 * same pod: its answer is the same as long as the Pod's text and the state (st->gen) are, so
 * prioritize probes only the nodes filter was not asked about.
 */
struct gsd_ext_memo {
    char *pod; /* the Pod object as compact JSON, NUL-terminated, malloc'd */
    char *raw; /* the Pod's bytes as the filter's body had them, malloc'd (NULL: not known) */
    char key[GSD_KEY_MAX]; /* the pod's "NS/NAME", under which ext_remember() keeps it */
    size_t pod_len, raw_len, nn;
    uint64_t gen;
    int32_t *sc; /* per node index: the probe's answer (>= 2 fits, GS_UNSCHEDULABLE), 0 not asked */
};

static void names_free(struct gsd_state *st)
{
    if (st->ext_names) {
        free(st->ext_names->text);
        free(st->ext_names->nodes);
        free(st->ext_names->idx);
    }
    free(st->ext_names);
    st->ext_names = NULL;
}

void gsd_extender_free(struct gsd_state *st)
{
    names_free(st);
    index_free(st->ext_index);
    st->ext_index = NULL;
    if (st->ext_memo) {
        free(st->ext_memo->pod);
        free(st->ext_memo->raw);
        free(st->ext_memo->sc);
    }
    free(st->ext_memo);
    st->ext_memo = NULL;
}

/* The memo to read for the pod of text @pod (@len bytes): the last filter's, when it was about
 * this pod at this state; else NULL. */
static struct gsd_ext_memo *memo_of(struct gsd_state *st, const char *pod, size_t len)
{
    struct gsd_ext_memo *m = st->ext_memo;
    return m && m->pod && m->gen == st->gen && m->pod_len == len && !memcmp(m->pod, pod, len) &&
                   m->nn == gs_cluster_node_count(st->cluster)
               ? m
               : NULL;
}

/* @dst (*@len bytes and a NUL, malloc'd) made a copy of the @n bytes at @src, unless it is one
 * already. Return: 0; -ENOMEM (then *@dst is NULL). */
static int keep_bytes(char **dst, size_t *len, const char *src, size_t n)
{
    if (*dst && *len == n && !memcmp(*dst, src, n))
        return 0;
    free(*dst);
    *len = n;
    *dst = malloc(n + 1);
    if (*dst) {
        memcpy(*dst, src, n);
        (*dst)[n] = '\0';
    }
    return *dst ? 0 : -ENOMEM;
}

/* A fresh memo for filter's answers about pod @key ("NS/NAME") of text @pod, read from the
 * bytes of @a: NULL out of memory (then prioritize probes every node itself). */
static struct gsd_ext_memo *memo_start(struct gsd_state *st, const char *pod, size_t len,
                                       const struct ext_args *a, const char *key)
{
    struct gsd_ext_memo *m = st->ext_memo;
    size_t nn = gs_cluster_node_count(st->cluster);
    if (!m && !(m = st->ext_memo = calloc(1, sizeof(*m))))
        return NULL;
    if (m->nn != nn) {
        free(m->sc);
        m->sc = malloc((nn ? nn : 1) * sizeof(*m->sc));
        m->nn = m->sc ? nn : 0;
    }
    if (!a->same_pod && !a->raw) { /* read whole: its bytes are not known */
        free(m->raw);
        m->raw = NULL;
    }
    if (!m->sc || keep_bytes(&m->pod, &m->pod_len, pod, len) ||
        (a->raw && keep_bytes(&m->raw, &m->raw_len, a->raw, a->raw_len))) {
        free(m->pod);
        free(m->raw);
        m->pod = m->raw = NULL;
        return NULL;
    }
    snprintf(m->key, sizeof(m->key), "%s", key);
    m->gen = st->gen;
    memset(m->sc, 0, nn * sizeof(*m->sc));
    return m;
}

/* Keep the array [@p, @end) just read into @a for the next call; without memory, keep none. */
static void names_keep(struct gsd_state *st, const char *p, const char *end,
                       const struct ext_args *a)
{
    struct gsd_ext_names *c = calloc(1, sizeof(*c));
    names_free(st);
    if (!c)
        return;
    c->len = (size_t)(end - p);
    c->n = a->n;
    c->text = malloc(c->len);
    c->nodes = malloc((a->n + 1) * sizeof(*c->nodes));
    c->idx = malloc((a->n + 1) * sizeof(*c->idx));
    st->ext_names = c;
    if (!c->text || !c->nodes || !c->idx) {
        names_free(st);
        return;
    }
    memcpy(c->text, p, c->len);
    if (a->n) /* an empty NodeNames has no index array at all */
        memcpy(c->idx, a->idx, a->n * sizeof(*c->idx));
    for (size_t i = 0; i < a->n; i++) {
        c->nodes[i] = a->nodes[i];
        c->nodes[i].key = c->nodes[i].item = c->text + (a->nodes[i].key - p);
    }
}

/*
 * A NodeNames array of plain strings at @p: the byte past it; NULL for any other shape. The
 * same array as the last call's (byte for byte) is not read again: its items and node indexes
 * are borrowed from then (the inventory does not change while the daemon runs).
 */
static const char *read_names(struct gsd_state *st, const char *p, const char *end,
                              struct ext_args *a)
{
    const struct gsd_ext_names *c = st->ext_names;
    if (c && (size_t)(end - p) >= c->len && !memcmp(p, c->text, c->len)) {
        a->nodes = c->nodes;
        a->idx = c->idx;
        a->n = c->n;
        a->borrowed = 1;
        return p + c->len;
    }
    const char *start = p;
    p = skip_ws(p + 1, end);
    for (int more = p < end && *p != ']'; more;) {
        const char *q = plain_string(p, end);
        struct ext_node x = {p, p, (size_t)(q - p), (size_t)(q - p)};
        if (!q || args_push(a, x, find_node(st, p + 1, x.key_len - 2)))
            return NULL;
        p = skip_ws(q, end);
        more = p < end && *p == ',';
        p = more ? skip_ws(p + 1, end) : p;
    }
    if (p == end || *p != ']')
        return NULL;
    names_keep(st, start, p + 1, a);
    return p + 1;
}

/* Is the JSON key token [k, q) exactly "@name"? */
static int key_is(const char *k, const char *q, const char *name)
{
    size_t n = strlen(name);
    return (size_t)(q - k) == n + 2 && !memcmp(k + 1, name, n);
}

/*
 * ExtenderArgs in the shape kube-scheduler sends with nodeCacheCapable (a Pod object, NodeNames
 * of plain strings, Nodes null), read without building a tree of the names: 5,000 names cost
 * far more as JSON values than the engine's answer for them. Return: 0; -1 for any other shape,
 * which the caller then reads whole (the same answers, and the messages for bad JSON).
 */
static int read_fast(struct gsd_state *st, const char *body, size_t len, struct ext_args *a)
{
    const char *end = body + len, *p = skip_ws(body, end);
    int seen = 0; /* 1 Pod, 2 NodeNames, 4 Nodes */
    if (p == end || *p != '{')
        return -1;
    for (p = skip_ws(p + 1, end);; p = skip_ws(p + 1, end)) {
        const char *k = p, *q = plain_string(p, end);
        int bit = !q                          ? 0
                  : key_is(k, q, "Pod")       ? 1
                  : key_is(k, q, "NodeNames") ? 2
                  : key_is(k, q, "Nodes")     ? 4
                                              : 0;
        if (!bit || (seen & bit))
            return -1;
        seen |= bit;
        p = skip_ws(q, end);
        if (p == end || *p != ':')
            return -1;
        p = skip_ws(p + 1, end);
        json_error_t e;
        const struct gsd_ext_memo *m = st->ext_memo;
        if (bit == 1 && m && m->pod && m->raw && (size_t)(end - p) >= m->raw_len &&
            !memcmp(p, m->raw, m->raw_len)) { /* the bytes of a whole JSON value: it ends there */
            a->same_pod = 1;
            p += m->raw_len;
        } else if (bit == 1 && p < end && *p == '{') {
            a->pod = json_loadb(p, (size_t)(end - p),
                                JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &e);
            a->raw = p;
            a->raw_len = a->pod ? e.position : 0;
            p = a->pod ? p + e.position : NULL;
        } else if (bit == 2 && p < end && *p == '[') {
            p = read_names(st, p, end, a);
        } else if (bit == 4 && end - p >= 4 && !memcmp(p, "null", 4)) {
            p += 4;
        } else {
            return -1;
        }
        p = p ? skip_ws(p, end) : end;
        if (p == end || *p != ',')
            break;
    }
    if (p == end || *p != '}' || skip_ws(p + 1, end) != end || (seen & 3) != 3)
        return -1;
    a->is_object = a->cache_capable = 1;
    return 0;
}

/* @v as compact JSON text (malloc'd), or NULL. */
static char *dump_any(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/*
 * The nodes of ExtenderArgs as kube-scheduler sends them: NodeNames an array (nodeCacheCapable),
 * else Nodes a NodeList with items, never both (one would go unread). Any other shape, read as
 * no node, would have filter nominate the pod for want of one. Return: 0; -1 after answering 400.
 */
static int refuse_shape(struct gsd_req *r, const json_t *names, const json_t *nodes)
{
    const json_t *items = gsd_jget(nodes, "items");
    if (names && !json_is_null(names) && !json_is_array(names)) {
        gsd_reply_error(r, 400, "NodeNames", "NodeNames: expected an array of node names, or null");
        return -1;
    }
    if (json_is_array(names) && nodes && !json_is_null(nodes)) {
        gsd_reply_error(r, 400, "Nodes",
                        "Nodes: given with NodeNames; kube-scheduler sends one of them (NodeNames "
                        "with nodeCacheCapable), so the other would go unread");
        return -1;
    }
    if (json_is_array(names) || (json_is_object(nodes) && json_is_array(items)))
        return 0;
    const char *field = nodes && !json_is_null(nodes) ? "Nodes.items" : "NodeNames";
    gsd_reply_error(r, 400, field,
                    "%s: expected the nodes to judge: NodeNames (an array of node names) or "
                    "Nodes.items (a NodeList's items)",
                    field);
    return -1;
}

/*
 * A field of the verbs' arguments given twice under keys that differ in case only ("Pod" and
 * "pod"): Go's encoding/json reads both into the one field and keeps the last, gsd_jget() the
 * exact or first; the request is refused rather than read otherwise than kube-scheduler meant.
 * O(keys). Return: 0; -1 after answering 400.
 */
static int refuse_case_twins(struct gsd_req *r, const json_t *args)
{
    static const char *const fields[] = {"Pod",     "NodeNames",         "Nodes",
                                         "PodName", "PodNamespace",      "PodUID",
                                         "Node",    "NodeNameToVictims", "NodeNameToMetaVictims"};
    enum { NF = sizeof(fields) / sizeof(fields[0]) };
    const char *seen[NF] = {0}, *k;
    const json_t *v;
    json_object_foreach((json_t *)args, k, v)
    {
        for (size_t f = 0; f < NF; f++) {
            if (strcasecmp(k, fields[f]))
                continue;
            if (seen[f]) {
                gsd_reply_error(r, 400, fields[f],
                                "%s: given as \"%.64s\" and \"%.64s\": Go reads keys without "
                                "regard to case, so both name it",
                                fields[f], seen[f], k);
                return -1;
            }
            seen[f] = k;
        }
    }
    return 0;
}

/* ExtenderArgs read whole with jansson. Return: 0; -1 after answering (bad JSON, no memory). */
static int read_tree(const struct gsd_state *st, struct gsd_req *r, struct ext_args *a)
{
    if (gsd_body_json(r, &a->tree) || refuse_case_twins(r, a->tree))
        return -1;
    a->is_object = json_is_object(a->tree);
    a->pod = gsd_jget(a->tree, "Pod");
    a->texts_owned = 1;
    const json_t *names = gsd_jget(a->tree, "NodeNames"), *item;
    if (a->is_object && refuse_shape(r, names, gsd_jget(a->tree, "Nodes")))
        return -1;
    a->cache_capable = json_is_array(names);
    size_t i;
    json_array_foreach(a->cache_capable ? names : gsd_jget(gsd_jget(a->tree, "Nodes"), "items"), i,
                       item)
    {
        const char *name = json_string_value(
            a->cache_capable ? item : json_object_get(json_object_get(item, "metadata"), "name"));
        json_t *str = name ? json_string(name) : NULL;
        struct ext_node x = {str ? dump_any(str) : NULL, NULL, 0, 0};
        json_decref(str);
        x.item = a->cache_capable ? x.key : dump_any(item);
        x.key_len = x.key ? strlen(x.key) : 0;
        x.item_len = x.item ? strlen(x.item) : 0;
        int32_t idx = name ? gs_cluster_find(st->cluster, name) : -EINVAL;
        if ((name && (!x.key || !x.item)) || args_push(a, x, idx)) {
            if (x.item != x.key)
                free((char *)x.item);
            free((char *)x.key);
            gsd_reply_error(r, 500, "", "out of memory");
            return -1;
        }
    }
    return 0;
}

/* Pod text @text read into @spec; "default" namespace when the Pod has none. Return: 0; -EINVAL,
 * -ENOMEM with @err. */
static int pod_of_text(const char *text, struct gsd_podspec *spec, char *err, size_t cap)
{
    struct gsd_ferr e = {0};
    int rc = gsd_podspec_parse(text, strlen(text), 0, spec, &e);
    if (rc == -ENOMEM) {
        snprintf(err, cap, "out of memory");
        return rc;
    }
    if (rc) {
        snprintf(err, cap, "Pod%s%.400s", e.field[0] ? "." : ": ", e.msg); /* msg names field */
        return -EINVAL;
    }
    if (!spec->ns[0] && gsd_podspec_set_ns(spec, "default")) {
        gsd_podspec_clear(spec);
        snprintf(err, cap, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

/* The Pod of ExtenderArgs @a: *@text, the Pod as compact JSON (*@owned, when malloc'd: the
 * caller frees it whatever the return), and *@spec, read into @own or, for the Pod the memo was
 * made for whose request is still remembered, that request (not to be remembered again).
 * Return: 0; -EINVAL, -ENOMEM with @err. */
static int args_pod(struct gsd_state *st, const struct ext_args *a, struct gsd_podspec *own,
                    struct gsd_podspec **spec, const char **text, char **owned, char *err,
                    size_t cap)
{
    *spec = own;
    if (a->same_pod) { /* read_fast() checked the memo */
        struct gsd_extpod *kept = ext_at(st, st->ext_memo->key);
        *text = st->ext_memo->pod;
        if (kept && kept->spec.body && !strcmp(kept->spec.body, *text)) {
            *spec = &kept->spec;
            return 0;
        }
        return pod_of_text(*text, own, err, cap);
    }
    if (!a->is_object) {
        snprintf(err, cap, "ExtenderArgs: expected an object");
        return -EINVAL;
    }
    if (!json_is_object(a->pod)) { /* absent or null: nothing to dump, no memory shortage */
        snprintf(err, cap, "Pod: required, a Pod object");
        return -EINVAL;
    }
    *text = *owned = json_dumps(a->pod, JSON_COMPACT | JSON_ENCODE_ANY);
    if (*text)
        return pod_of_text(*text, own, err, cap);
    snprintf(err, cap, "out of memory");
    return -ENOMEM;
}

/* The answer being written: JSON text, byte for byte what jansson writes with JSON_COMPACT. */
struct out {
    char *s;
    size_t len, cap;
    int oom;
};

/* Room for @n more bytes and a NUL. Return: 0; -1 out of memory (then nothing more is put). */
static int room(struct out *o, size_t n)
{
    char *m = o->oom ? NULL : gs_grow(o->s, &o->cap, o->len + n + 1, 1, 65536);
    o->oom = !m;
    o->s = m ? m : o->s;
    return m ? 0 : -1;
}

static inline void put(struct out *o, const char *s, size_t n)
{
    if (o->len + n >= o->cap && room(o, n))
        return;
    memcpy(o->s + o->len, s, n);
    o->len += n;
}

static void put_str(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

/* @s as a JSON string, escaped as jansson escapes (UTF-8 passes as it is). */
static void put_json_string(struct out *o, const char *s)
{
    put(o, "\"", 1);
    for (const char *run = s;; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(o, run, (size_t)(s - run));
        if (!c)
            break;
        char esc[8];
        const char *named = c == '"'    ? "\\\""
                            : c == '\\' ? "\\\\"
                            : c == '\b' ? "\\b"
                            : c == '\f' ? "\\f"
                            : c == '\n' ? "\\n"
                            : c == '\r' ? "\\r"
                            : c == '\t' ? "\\t"
                                        : NULL;
        if (!named)
            snprintf(esc, sizeof(esc), "\\u%04X", c);
        put_str(o, named ? named : esc);
        run = s + 1;
    }
    put(o, "\"", 1);
}

/* Hand @o to @r as a 200 JSON answer (500 when it ran out of memory). */
static void reply_out(struct gsd_req *r, struct out *o)
{
    if (o->oom || !o->s) {
        free(o->s);
        gsd_reply_error(r, 500, "", "out of memory");
        return;
    }
    o->s[o->len] = '\0'; /* put() always leaves room for it */
    r->status = 200;
    r->ctype = "application/json";
    r->resp = o->s;
    r->resp_len = o->len;
}

/* Held pod @p was placed with its mates, one of which was deleted before it bound: its gang lacks
 * members to be ready again. */
static int gang_short(const struct gsd_state *st, const struct gsd_pod *p)
{
    return p->nominated && !p->bound && p->grp &&
           gs_tenancy_podgroup_lacking(st->sched.tn, p->spec.ns, p->spec.group) > 0;
}

/*
 * A pod gpuschedd already holds through bind, perhaps not yet bound in Kubernetes (a restart came
 * between the commit and the API server, or the Binding's outcome was unknown): its own node
 * alone fits, so kube-scheduler binds it there again and that bind completes it. A pod of that
 * name submitted to the API fits nowhere: a bind could never take it.
 */
static void held_node_only(struct gsd_state *st, const struct gsd_podspec *spec,
                           const struct ext_args *a, int64_t *sc, const char **why)
{
    struct gsd_pod *p = gsd_pod_find(st, spec->ns, spec->name);
    if (p && p->source == GSD_SRC_API) { /* its name is taken: bind would be refused */
        for (size_t i = 0; i < a->n; i++)
            if (a->idx[i] >= 0) {
                sc[i] = GS_UNSCHEDULABLE;
                why[i] = "a pod of this namespace and name was submitted to gpusched's API";
            }
        return;
    }
    if (p && p->nominated && (!spec->uid[0] || !strcmp(spec->uid, p->uid)))
        p->seen_us = gsd_now_us(); /* kube-scheduler still tries it: kept (gsd_extender_sync) */
    if (!p || p->state != GSD_RUNNING || (spec->uid[0] && p->uid[0] && strcmp(spec->uid, p->uid)))
        return;
    /* placed with its mates, one of which was deleted before it bound: binding the rest would
     * run the gang short, so each keeps its place until another member comes (for a while:
     * gsd_extender_short_gangs()), and is nudged again then (kube-scheduler, refused now, would
     * try it again only in its own time) */
    int short_gang = gang_short(st, p);
    if (short_gang)
        p->nudged = 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->idx[i] >= 0) {
            sc[i] = a->idx[i] == p->pl.node && !short_gang ? 2 : GS_UNSCHEDULABLE; /* >= 2: fits */
            why[i] = short_gang ? "its gang lost a member that was deleted before it bound: this "
                                  "one keeps its place until another member comes, for "
                                  "extender.shortGangHoldSeconds at most"
                                : "gpusched holds this pod's cards on another node";
        }
}

/* Nodes where a pod evicted in Kubernetes still runs (a bitmap by node index, malloc'd; NULL out
 * of memory), and whether node @node is one. O(pods). */
static uint8_t *closed_nodes(const struct gsd_state *st)
{
    size_t nn = gs_cluster_node_count(st->cluster);
    uint8_t *closed = calloc(nn / 8 + 1, 1);
    for (const struct gsd_pod *p = closed ? st->head : NULL; p; p = p->next)
        if (p->state == GSD_EVICTING && p->pl.node >= 0 && (size_t)p->pl.node < nn)
            closed[p->pl.node / 8] |= (uint8_t)(1u << (p->pl.node % 8));
    return closed;
}

static int is_closed(const uint8_t *closed, int32_t node)
{
    return (closed[node / 8] & (1u << (node % 8))) != 0;
}

/*
 * Nodes where a pod evicted in Kubernetes still runs (GSD_EVICTING: its Eviction sent, the API
 * server not yet saying it is gone) take no pod: its containers may still use its cards, which
 * the scheduler already gave to whom it was evicted for; that pod binds once they are free. As
 * kube-scheduler keeps a victim's resources counted until it is gone. O(pods) while any is
 * evicting, else O(1).
 */
static int close_evicting(struct gsd_state *st, const struct ext_args *a, int64_t *sc,
                          const char **why)
{
    if (!st->nevicting)
        return 0;
    uint8_t *closed = closed_nodes(st);
    if (!closed)
        return -ENOMEM;
    for (size_t i = 0; i < a->n; i++) {
        int32_t x = a->idx[i];
        if (x >= 0 && is_closed(closed, x) && sc[i] != GS_UNSCHEDULABLE) {
            sc[i] = GS_UNSCHEDULABLE;
            why[i] = "a pod evicted from this node is still terminating";
        }
    }
    free(closed);
    return 0;
}

/*
 * The pod's score on every node of @a into @sc (>= 2: it fits; the scheduler's weighted score,
 * 0..1000, plus 2), @why the reason for a node that fails: what placement would say there
 * (gs_tenancy_probe_node(): its quotas, then the node's filter). A pod admission refuses fails
 * on every node with that reason (@held). *@probe: the probe whose words some reasons are (free
 * it after the answer is written), or NULL. @memo (or NULL) keeps each node's answer; with
 * @reuse, a node it already has is not probed again (its reason is then not given: prioritize
 * needs none). Return: 0; -ENOMEM.
 */
static int score_all(struct gsd_state *st, const struct gsd_podspec *spec, const struct ext_args *a,
                     struct gsd_ext_memo *memo, int reuse, int64_t *sc, const char **why,
                     char *held, size_t cap, struct gs_tenancy_probe **probe)
{
    struct gs_tenancy_probe *pr = NULL;
    int rc = gs_tenancy_probe_new(st->sched.tn, &spec->s, &pr, held, cap);
    int32_t *ask = rc == 0 ? malloc((a->n ? a->n : 1) * 2 * sizeof(*ask)) : NULL, *got;
    if (rc < 0 || (rc == 0 && !ask)) {
        gs_tenancy_probe_free(pr);
        return rc < 0 ? rc : -ENOMEM;
    }
    got = ask ? ask + a->n : NULL;
    for (size_t i = 0; rc == 0 && i < a->n; i++) { /* the nodes the memo does not answer */
        int32_t x = a->idx[i];
        ask[i] = x >= 0 && !(memo && memo->sc[x] && reuse) ? x : -1;
    }
    if (rc == 0)
        gs_tenancy_probe_nodes(st->sched.tn, pr, ask, a->n, got, why);
    for (size_t i = 0; i < a->n; i++) {
        int32_t x = a->idx[i];
        if (x < 0) {
            sc[i] = -ENOENT;
        } else if (rc == 1) { /* refused whole: every node says why */
            sc[i] = GS_UNSCHEDULABLE;
            why[i] = held;
        } else if (ask[i] < 0) {
            sc[i] = memo->sc[x];
        } else {
            sc[i] = got[i] < 0 ? GS_UNSCHEDULABLE : got[i] + 2;
            if (memo)
                memo->sc[x] = (int32_t)sc[i];
        }
    }
    free(ask);
    *probe = rc == 0 ? pr : NULL; /* its words are some nodes' reasons: the caller frees it */
    if (rc == 0)                  /* a pod refused whole says why on every node, held or not */
        held_node_only(st, spec, a, sc, why);
    return close_evicting(st, a, sc, why);
}

/* The reasons of one filter as its pod's tenant may read them (tenant_words()). */
#define WORDED_MAX 8
struct worded {
    const char *from[WORDED_MAX], *to[WORDED_MAX]; /* to: from itself, or text[k] */
    char text[WORDED_MAX][GSD_REASON_MAX];
    int n;
};

/* Might reason @why name a pod (gsd_own_words()'s phrases)? */
static int names_pod(const char *why)
{
    return strstr(why, "held for ") || strstr(why, "preempted by ") || strstr(why, "reclaimed by ");
}

/*
 * FailedNodes as kube-scheduler writes them into the pod's events, which its namespace reads: a
 * reason that names another tenant's pod (backfill's "held for NS/NAME, which waits ahead in the
 * queue") says "a pod of another tenant" instead, as the pod's own views do (gsd_own_words()).
 * Nodes share their reasons' text (a few distinct ones for thousands of nodes): each distinct one
 * is read once, into @w; past WORDED_MAX of them, one that names a pod says only that the node
 * is reserved for a pod ahead.
 */
static void tenant_words(const struct gsd_state *st, const char *ns, const struct ext_args *a,
                         const int64_t *sc, const char **why, struct worded *w)
{
    const struct gsd_tenant *t = gsd_tenant_of_ns(st->cfg, ns);
    const char *last = NULL, *last_to = NULL;
    for (size_t i = 0; i < a->n; i++) {
        if (a->idx[i] < 0 || sc[i] != GS_UNSCHEDULABLE || !why[i]) /* a failing node's alone */
            continue;
        if (why[i] == last) {
            why[i] = last_to;
            continue;
        }
        int k = 0;
        while (k < w->n && w->from[k] != why[i])
            k++;
        if (k == w->n && k < WORDED_MAX) {
            w->from[k] = w->to[k] = why[i];
            if (names_pod(why[i])) {
                snprintf(w->text[k], sizeof(w->text[k]), "%s", why[i]);
                gsd_own_words(st, t ? t->name : "", w->text[k]);
                w->to[k] = w->text[k];
            }
            w->n++;
        }
        last = why[i];
        last_to = k < WORDED_MAX      ? w->to[k]
                  : names_pod(why[i]) ? "reserved for a pod ahead in the queue"
                                      : why[i];
        why[i] = last_to;
    }
}

/* Every node of @a fails with @reason (@sc, @why as score_all() fills them). */
static void fail_all(const struct ext_args *a, const char *reason, int64_t *sc, const char **why)
{
    for (size_t i = 0; i < a->n; i++) {
        sc[i] = a->idx[i] >= 0 ? GS_UNSCHEDULABLE : -ENOENT;
        why[i] = reason;
    }
}

/* Whether a mate of gang member @spec is held (placed by gpuschedd's scheduler, not yet bound).
 * O(pods), for the last member a gang lacks only. */
static int mates_held(const struct gsd_state *st, const struct gsd_podspec *spec)
{
    const struct gsd_group *g = gsd_group_find(st, spec->ns, spec->s.group);
    for (const struct gsd_pod *p = st->head; g && g->running && p; p = p->next)
        if (p->grp == g && p->nominated && !p->bound && p->state == GSD_RUNNING &&
            strcmp(p->spec.name, spec->name))
            return 1;
    return 0;
}

/*
 * Whether member @spec of a gang must bind with its mates (@pr: its probe): its gang lacks more
 * members than this one to be ready, and gpuschedd does not hold it placed already. Bound one by
 * one as kube-scheduler binds, the room the later members need could go to another pod between
 * two binds, and the gang would hold half its cards waiting; so the scheduler places all of
 * them at once, as it places a gang of POST /v1/pods, and filter offers each its node then.
 */
static int binds_together(struct gsd_state *st, const struct gsd_podspec *spec,
                          const struct gs_tenancy_probe *pr)
{
    if (!pr || !spec->s.group[0] || gs_tenancy_probe_gang_lacking(st->sched.tn, pr) < 2)
        return 0;
    const struct gsd_pod *p = gsd_pod_find(st, spec->ns, spec->name);
    return !p || p->state != GSD_RUNNING;
}

/* Whether member @spec (@pr: its probe) is the last its gang lacks while gpuschedd holds mates
 * of it: it binds alone where it fits, and is held (nominated) where it fits nowhere, to be
 * placed as soon as room comes, not when kube-scheduler next tries it. */
static int completes_held(struct gsd_state *st, const struct gsd_podspec *spec,
                          const struct gs_tenancy_probe *pr)
{
    return pr && spec->s.group[0] && gs_tenancy_probe_gang_lacking(st->sched.tn, pr) == 1 &&
           !gsd_pod_find(st, spec->ns, spec->name) && mates_held(st, spec);
}

/*
 * Whether pod @spec names a PodGroup gpuschedd holds none of while it follows the API server's
 * (kubernetes.podGroups, syncSeconds > 0): the pod is held then (nominated), parked in the
 * scheduler until the PodGroup comes, as POST /v1/pods parks one, and nudged once placed, so it
 * need not wait for kube-scheduler to try it again. @why (@cap bytes): what every node fails
 * with instead of "is not defined", saying when the API server's PodGroup was refused.
 */
static int awaits_group(struct gsd_state *st, const struct gsd_podspec *spec, char *why, size_t cap)
{
    const struct gsd_kube *k = st->cfg->kube;
    char key[GSD_KEY_MAX];
    if (!spec->s.group[0] || !k || !k->podgroups || !k->sync_us ||
        gsd_group_find(st, spec->ns, spec->s.group) ||
        gsd_group_of_files(st->cfg, spec->ns, spec->s.group))
        return 0;
    snprintf(key, sizeof(key), "%s/%s", spec->ns, spec->s.group);
    snprintf(why, cap,
             json_object_get(st->kube_refused, key)
                 ? "PodGroup %s was refused by gpuschedd (its log says why: \"PodGroup of the API "
                   "server refused\"); gpusched's scheduler holds this pod (nominated) until it "
                   "is taken"
                 : "PodGroup %s does not exist yet: gpusched's scheduler holds this pod "
                   "(nominated) until it is made",
             key);
    return 1;
}

/* Every node @a passes fails instead, with @why (@cap bytes) saying gang member @spec waits for
 * its mates in gpuschedd's scheduler (nominated); the others keep their reasons. */
static void hold_for_mates(const struct gsd_podspec *spec, const struct ext_args *a, int64_t *sc,
                           const char **why, char *reason, size_t cap)
{
    snprintf(reason, cap,
             "gang %.253s: its members bind together; gpusched's scheduler holds this one "
             "(nominated) and places it with the others once all can run",
             spec->s.group);
    for (size_t i = 0; i < a->n; i++)
        if (sc[i] >= 2) {
            sc[i] = GS_UNSCHEDULABLE;
            why[i] = reason;
        }
}

/*
 * Whether filter should hand pod @spec to the scheduler (nominate it): admission takes it
 * (@admitted), at least one node of @a is in the inventory, and it fits none of them, or it is
 * a gang member that binds with its mates (@together, binds_together()), which every node failed
 * (a PodGroup's member that binds alone is placed by kube-scheduler); and the daemon holds no
 * pod of its name, or only an earlier one nominated under another UID (deleted and made again).
 */
static int to_nominate(struct gsd_state *st, const struct gsd_podspec *spec,
                       const struct ext_args *a, const int64_t *sc, int admitted, int together)
{
    int known = 0; /* kube-scheduler's filters left no node gpusched holds: not ours to place */
    if (!admitted || (spec->s.group[0] && !together))
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        if (sc[i] >= 2)
            return 0;
        known |= a->idx[i] >= 0;
    }
    if (!known)
        return 0;
    const struct gsd_pod *p = gsd_pod_find(st, spec->ns, spec->name);
    return !p || (p->nominated && spec->uid[0] && strcmp(spec->uid, p->uid));
}

/* FailedNodes: each node once, as jansson keeps a key once. */
static int write_failed(const struct gsd_state *st, const struct ext_args *a, const int64_t *sc,
                        const char **why, struct out *o)
{
    size_t nn = gs_cluster_node_count(st->cluster);
    uint8_t *seen = calloc(nn / 8 + 1, 1);
    if (!seen)
        return -ENOMEM;
    const char *last = NULL; /* the reason last written, and where: most nodes share a few */
    size_t at = 0, len = 0;
    put_str(o, "{");
    for (size_t i = 0, first = 1; i < a->n; i++) {
        int32_t x = a->idx[i];
        if (sc[i] != GS_UNSCHEDULABLE || (seen[x / 8] & (1u << (x % 8))))
            continue;
        seen[x / 8] |= (uint8_t)(1u << (x % 8));
        put(o, ",", !first);
        first = 0;
        put(o, a->nodes[i].key, a->nodes[i].key_len);
        put(o, ":", 1);
        if (why[i] == last && !o->oom && (o->len + len < o->cap || !room(o, len))) {
            memcpy(o->s + o->len, o->s + at, len); /* the same words, already escaped */
            o->len += len;
            continue;
        }
        last = why[i];
        at = o->len;
        put_json_string(o, why[i]);
        len = o->len - at;
    }
    put_str(o, "}");
    free(seen);
    return 0;
}

/* FailedAndUnresolvableNodes: names not in the inventory, each once. */
static int write_unresolvable(const struct ext_args *a, struct out *o)
{
    json_t *seen = NULL;
    put_str(o, "{");
    for (size_t i = 0; i < a->n; i++) {
        const struct ext_node *x = &a->nodes[i];
        if (a->idx[i] != -ENOENT || json_object_getn(seen, x->key, x->key_len))
            continue;
        if (!seen && !(seen = json_object()))
            return -ENOMEM;
        put(o, ",", json_object_size(seen) > 0);
        json_object_setn_new(seen, x->key, x->key_len, json_true());
        put(o, x->key, x->key_len);
        put_str(o, ":\"node is not in gpusched's inventory\"");
    }
    put_str(o, "}");
    json_decref(seen);
    return 0;
}

/* Error for a node list with a nameless entry, naming the first; "" when every one has a name. */
static const char *first_error(struct ext_args *a)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->idx[i] == -EINVAL) {
            snprintf(a->err, sizeof(a->err), "%s[%zu]%s: expected a node's name, a string",
                     a->cache_capable ? "NodeNames" : "Nodes.items", i,
                     a->cache_capable ? "" : ".metadata.name");
            return a->err;
        }
    return "";
}

/* ExtenderFilterResult: the nodes that fit, passed back as they came. */
static void write_filter(const struct gsd_state *st, const struct ext_args *a, const int64_t *sc,
                         const char **why, const char *err, struct out *o)
{
    put_str(o, "{\"FailedNodes\":");
    if (write_failed(st, a, sc, why, o))
        o->oom = 1;
    put_str(o, ",\"FailedAndUnresolvableNodes\":");
    if (write_unresolvable(a, o))
        o->oom = 1;
    put_str(o, ",\"Error\":");
    put_json_string(o, err);
    put_str(o, a->cache_capable ? ",\"NodeNames\":["
                                : ",\"NodeNames\":null,\"Nodes\":"
                                  "{\"metadata\":{},\"items\":[");
    for (size_t i = 0, first = 1; i < a->n; i++)
        if (sc[i] >= 2) {
            put(o, ",", !first);
            first = 0;
            put(o, a->nodes[i].item, a->nodes[i].item_len);
        }
    put_str(o, a->cache_capable ? "],\"Nodes\":null}" : "]}}");
}

static const char *const score_text[11] = {",\"Score\":0}", ",\"Score\":1}", ",\"Score\":2}",
                                           ",\"Score\":3}", ",\"Score\":4}", ",\"Score\":5}",
                                           ",\"Score\":6}", ",\"Score\":7}", ",\"Score\":8}",
                                           ",\"Score\":9}", ",\"Score\":10}"};

/* The answers a fitting node can have (sc): the scheduler's score 0..1000, plus 2. */
#define SC_TOP 1002

/*
 * HostPriorityList: the scheduler's ranking on kube-scheduler's 0..10 scale. The node the
 * scheduler would pick (best score, then the lower index; of a node named twice, the first) alone
 * gets 10; each lower score one step less, down to 1, nodes of one score sharing it (the others
 * of the best score 9, the next score one below the best's); a node that does not fit 0. With the
 * extender's weight above the sum of kube-scheduler's own scores, kube-scheduler's pick is the
 * scheduler's. O(n) for n nodes: the scores are counted by value.
 */
static void write_priorities(const struct ext_args *a, const int64_t *sc, struct out *o)
{
    uint32_t count[SC_TOP + 1] = {0};
    uint8_t level[SC_TOP + 1];
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < a->n; i++)
        if (sc[i] >= 2 && sc[i] <= SC_TOP) {
            count[sc[i]]++;
            if (best == SIZE_MAX || sc[i] > sc[best] ||
                (sc[i] == sc[best] && a->idx[i] < a->idx[best]))
                best = i;
        }
    int step = best != SIZE_MAX && count[sc[best]] > 1 ? 9 : 10;
    for (int v = SC_TOP; v >= 2; v--)
        if (count[v]) {
            step = v == (best != SIZE_MAX ? sc[best] : -1) ? step : step > 1 ? step - 1 : 1;
            level[v] = (uint8_t)step;
        }
    put_str(o, "[");
    for (size_t i = 0, first = 1; i < a->n; i++) {
        if (!a->nodes[i].key)
            continue;
        put_str(o, first ? "{\"Host\":" : ",{\"Host\":");
        first = 0;
        put(o, a->nodes[i].key, a->nodes[i].key_len);
        int lv = i == best ? 10 : sc[i] >= 2 && sc[i] <= SC_TOP ? level[sc[i]] : 0;
        put_str(o, score_text[lv]);
    }
    put_str(o, "]");
}

/*
 * Refuse, with a 400 naming the field, ExtenderArgs that name a node twice: kube-scheduler sends
 * each node once (from its snapshot, keyed by name) and adds up every score its extender answers
 * for a name (schedule_one.go, prioritizeNodes: TotalScore += score), so a name answered twice
 * would count twice. Return: 0; -1 after answering. O(n) for n names (a bitmap by node index;
 * names not in the inventory, rare, in a jansson object).
 */
static int refuse_twice_named(const struct gsd_state *st, const struct ext_args *a,
                              struct gsd_req *r)
{
    size_t nn = gs_cluster_node_count(st->cluster), i = 0;
    uint8_t *seen = calloc(nn / 8 + 1, 1);
    json_t *other = NULL;
    int twice = 0;
    if (!seen) {
        gsd_reply_error(r, 500, "", "out of memory");
        return -1;
    }
    for (; i < a->n && !twice; i++) {
        const struct ext_node *x = &a->nodes[i];
        int32_t k = a->idx[i];
        if (k >= 0) {
            twice = seen[k / 8] & (1u << (k % 8));
            seen[k / 8] |= (uint8_t)(1u << (k % 8));
        } else if (x->key && (other || (other = json_object()))) {
            twice = json_object_getn(other, x->key, x->key_len) != NULL;
            json_object_setn_new(other, x->key, x->key_len, json_true());
        }
    }
    free(seen);
    json_decref(other);
    if (!twice)
        return 0;
    char field[64];
    const struct ext_node *x = &a->nodes[i - 1];
    snprintf(field, sizeof(field), a->cache_capable ? "NodeNames[%zu]" : "Nodes.items[%zu]", i - 1);
    gsd_reply_error(r, 400, field, "node %.*s is named twice: kube-scheduler sends each node once",
                    (int)(x->key_len < 256 ? x->key_len : 256), x->key);
    return -1;
}

/*
 * The pod remembered under @key, about to be nominated, may use only the nodes filter was
 * offered (@a): those kube-scheduler's own filters passed (its node affinity and selector, taints,
 * ports, volumes). gpusched's scheduler then places it, and evicts for it, on none other: a node
 * it could never bind to. Out of memory, it goes unrestricted, as before kube-scheduler said.
 */
static void ext_offered(struct gsd_state *st, const char *key, const struct ext_args *a)
{
    struct gsd_extpod *x = ext_at(st, key);
    size_t n = gs_cluster_node_count(st->cluster);
    uint64_t *ok = x ? calloc((n + 63) / 64 + 1, sizeof(*ok)) : NULL;
    for (size_t i = 0; ok && i < a->n; i++)
        if (a->idx[i] >= 0 && (size_t)a->idx[i] < n)
            ok[a->idx[i] / 64] |= 1ull << (a->idx[i] % 64);
    if (!ok)
        return;
    free((void *)x->spec.s.nodes_ok);
    x->spec.s.nodes_ok = ok;
    x->spec.s.nodes_ok_n = (uint32_t)n;
}

/*
 * filter and prioritize: read the args, score the pod on every node once, write the answer.
 * A bad Pod is reported in filter's Error field; prioritize's list type has none, so it scores
 * nothing and logs why.
 */
static void filter_or_prioritize(struct gsd_state *st, struct gsd_req *r, int is_filter)
{
    struct ext_args a = {0};
    struct gsd_podspec own, *spec;
    struct out o = {0};
    char err[GS_DIAG_MSG_MAX];
    if (read_fast(st, r->body ? r->body : "", r->len, &a)) {
        args_free(&a);
        if (read_tree(st, r, &a)) {
            args_free(&a);
            return;
        }
    }
    if (refuse_twice_named(st, &a, r)) {
        args_free(&a);
        return;
    }
    int64_t *sc = NULL;
    const char **why = NULL;
    const char *text = NULL;
    char *owned = NULL;
    o.cap = r->len + a.n * 48 + 256; /* room for every name failing with a reason */
    o.s = malloc(o.cap);
    o.cap = o.s ? o.cap : 0;
    if (!a.same_pod && !a.is_object) { /* as a body of null is: no verb reads anything else */
        gsd_reply_error(r, 400, "", "ExtenderArgs: expected an object");
        args_free(&a);
        free(o.s);
        return;
    }
    if (args_pod(st, &a, &own, &spec, &text, &owned, err, sizeof(err))) {
        if (is_filter) {
            struct ext_args none = {.cache_capable = a.cache_capable};
            write_filter(st, &none, NULL, NULL, err, &o);
        } else {
            put_str(&o, "[]");
            gsd_log("warn", "prioritize: bad pod", "error", err, NULL);
        }
    } else {
        char held[GSD_REASON_MAX], key[GSD_KEY_MAX], mates[GSD_REASON_MAX];
        int together = 0;
        struct gs_tenancy_probe *pr = NULL;
        sc = malloc((a.n ? a.n : 1) * sizeof(*sc));
        why = malloc((a.n ? a.n : 1) * sizeof(*why));
        err[0] = '\0';
        size_t len = strlen(text);
        snprintf(key, sizeof(key), "%s/%s", spec->ns, spec->name);
        struct gsd_ext_memo *memo =
            is_filter ? memo_start(st, text, len, &a, key) : memo_of(st, text, len);
        const char *alien = gsd_ns_unowned(st, spec->ns, held, sizeof(held));
        if (!sc || !why)
            o.oom = 1;
        else if (alien) /* as POST /v1/pods refuses it; not admitted, so not nominated */
            fail_all(&a, alien, sc, why);
        else if (score_all(st, spec, &a, memo, !is_filter, sc, why, held, sizeof(held), &pr))
            o.oom = 1;
        if (!o.oom && is_filter && (together = binds_together(st, spec, pr)))
            hold_for_mates(spec, &a, sc, why, mates, sizeof(mates));
        else if (!o.oom && is_filter && completes_held(st, spec, pr))
            together = 1; /* nominated where it fits nowhere */
        else if (!o.oom && is_filter && !pr && !alien &&
                 (together = awaits_group(st, spec, held, sizeof(held))))
            fail_all(&a, held, sc, why);
        struct worded *words = is_filter && !o.oom ? calloc(1, sizeof(*words)) : NULL;
        if (words)
            tenant_words(st, spec->ns, &a, sc, why, words);
        else if (is_filter)
            o.oom = 1;
        if (!o.oom && is_filter)
            write_filter(st, &a, sc, why, first_error(&a), &o);
        else if (!o.oom)
            write_priorities(&a, sc, &o);
        /* an answer in Error changes nothing: kube-scheduler drops it */
        if (is_filter && !o.oom && !first_error(&a)[0] &&
            to_nominate(st, spec, &a, sc, pr || together, together))
            snprintf(r->nominate, sizeof(r->nominate), "%s/%s", spec->ns, spec->name);
        gs_tenancy_probe_free(pr);
        free(words);
        if (spec == &own)
            ext_remember(st, spec);
        if (r->nominate[0])
            ext_offered(st, key, &a);
    }
    reply_out(r, &o);
    free(owned);
    free(sc);
    free(why);
    args_free(&a);
}

/* Nominated pod @p is bound by kube-scheduler: no longer nominated. Return: 0; -EIO. */
static int bound_now(struct gsd_state *st, struct gsd_pod *p)
{
    if (!p->nominated)
        return 0;
    gsd_pod_unnominate(st, p);
    gsd_snap_touch(st, p); /* running now, no longer allocated */
    if (!gsd_store_pod_nominated(st->store, p, NULL))
        return 0;
    st->failed = 1;
    return -EIO;
}

/*
 * A bind of pod @p, already held: the same pod (UID) on the same node is a retry, after an answer
 * lost on the way or a restart between the commit and the API server, and succeeds again (with
 * the API calls made again); anything else is refused in @err.
 */
static void bind_again(struct gsd_state *st, struct gsd_pod *p, const char *uid, int node,
                       char *err, size_t cap)
{
    int same =
        p->source == GSD_SRC_EXTENDER && (!uid || !*uid || !p->uid[0] || !strcmp(uid, p->uid));
    if (same && p->nominated && p->state == GSD_PENDING && node >= 0) {
        /* nominated by filter, still pending: there or nowhere, as a first bind */
        int rc = gs_tenancy_bind_to(st->sched.tn, gsd_sched_now(st), p->sid, node);
        if (rc == 0)
            rc = gsd_sched_take(st);
        if (rc == 0)
            rc = bound_now(st, p);
        if (rc == 0)
            return;
        gsd_sched_sync(st, p);
        gsd_snap_touch(st, p); /* its reason now names the node it was refused */
        snprintf(err, cap, "%s", rc == 1 && p->reason ? p->reason : "does not fit");
        return;
    }
    if (same && p->state == GSD_RUNNING && p->pl.node == node) {
        if (bound_now(st, p)) /* placed by the scheduler after filter nominated it */
            snprintf(err, cap, "the store failed");
        return;
    }
    snprintf(err, cap, "pod %s/%s is already held by gpusched%s%s", p->spec.ns, p->spec.name,
             p->state == GSD_RUNNING ? " on node " : "",
             p->state == GSD_RUNNING ? gs_cluster_node_name(st->cluster, (size_t)p->pl.node) : "");
}

/* The API calls binding @p in Kubernetes, for the HTTP thread to make after the commit. */
static struct gsd_bind *bind_job(struct gsd_state *st, const struct gsd_pod *p)
{
    json_t *assigned = gsd_pod_assignment(st, p);
    struct gsd_bind *b =
        assigned ? gsd_bind_new(st->cfg->kube, p,
                                gs_cluster_node_name(st->cluster, (size_t)p->pl.node), assigned)
                 : NULL;
    json_decref(assigned);
    return b;
}

/* Whether a pod evicted from node @node still runs there (close_evicting()); O(pods) while any
 * pod is evicting, else O(1). */
static int node_closed(const struct gsd_state *st, int node)
{
    for (const struct gsd_pod *p = st->nevicting && node >= 0 ? st->head : NULL; p; p = p->next)
        if (p->state == GSD_EVICTING && p->pl.node == node)
            return 1;
    return 0;
}

/* bind takes the cards and commits; with `kubernetes:` configured, r->bind carries the rest. */
static void bind_verb(struct gsd_state *st, struct gsd_req *r, const json_t *args)
{
    const char *name = json_string_value(gsd_jget(args, "PodName"));
    const char *ns = json_string_value(gsd_jget(args, "PodNamespace"));
    const char *uid = json_string_value(gsd_jget(args, "PodUID"));
    const char *node = json_string_value(gsd_jget(args, "Node"));
    char err[GS_DIAG_MSG_MAX] = "";
    struct gsd_extpod *x = name && ns ? ext_find(st, ns, name) : NULL;
    struct gsd_pod *p = name && ns ? gsd_pod_find(st, ns, name) : NULL;
    int idx = node ? gs_cluster_find(st->cluster, node) : -1, fresh = 0;
    if (!name || !ns || !node)
        snprintf(err, sizeof(err),
                 "ExtenderBindingArgs: PodName, PodNamespace and Node are "
                 "required strings");
    else if (strlen(ns) >= GSD_NAME_MAX || strlen(name) >= GSD_OBJ_MAX)
        snprintf(err, sizeof(err),
                 "ExtenderBindingArgs: PodNamespace is at most %d bytes, PodName %d (Kubernetes' "
                 "limits)",
                 GSD_NAME_MAX - 1, GSD_OBJ_MAX - 1);
    else if (!(p && p->state == GSD_RUNNING && p->pl.node == idx) && node_closed(st, idx))
        snprintf(err, sizeof(err), /* evicted since filter offered it: as filter now says */
                 "node %s: a pod evicted from this node is still terminating", node);
    else if (p)
        bind_again(st, p, uid, idx, err, sizeof(err));
    else if (!x)
        snprintf(err, sizeof(err), /* a bind, refused or not, takes what they saw */
                 "pod %s/%s was not seen by filter or prioritize since its last bind (or was "
                 "forgotten since: filter remembers at most extender.maxRememberedBytes of pods)",
                 ns, name);
    else if (idx < 0)
        snprintf(err, sizeof(err), "node %s is not in gpusched's inventory", node);
    else if (strcmp(uid ? uid : "", x->spec.uid)) /* another pod of the name, or none said */
        snprintf(err, sizeof(err), "pod %s/%s: PodUID %.*s is not the UID filter saw (%s)", ns,
                 name, GSD_UID_MAX, uid ? uid : "", x->spec.uid[0] ? x->spec.uid : "none");
    else
        gsd_ns_unowned(st, ns, err, sizeof(err));
    if (!err[0] && !p) {
        struct gsd_ferr e = {0};
        const struct gsd_tenant *owner = gsd_tenant_of_ns(st->cfg, ns);
        p = gsd_pod_add(st, &x->spec, owner ? owner->name : "", GSD_SRC_EXTENDER, idx, &e);
        if (!p)
            snprintf(err, sizeof(err), "%s", e.msg);
        fresh = 1;
        ext_forget(st, x);
    }
    if (!err[0] && st->cfg->kube && !(r->bind = bind_job(st, p))) {
        snprintf(err, sizeof(err), "out of memory");
        if (fresh)
            gsd_pod_cancel(st, p); /* nothing to bind it with: hold nothing */
    } else if (r->bind) {
        p->binding++; /* until its outcome comes back (gsd_extender_unbind()) */
    }
    gsd_reply_json(r, 200, json_pack("{s:s}", "Error", err));
}

/*
 * One pod may have several binds whose API calls are under way at once: kube-scheduler sends the
 * bind again when the first got no answer within its httpTimeout (or a new leader binds the pod
 * again), and bind_again() makes the calls again for a pod held on that node. Their outcomes
 * come back in any order, and a refusal of one says nothing of the others: the API server may
 * refuse the first (a 500, a token unreadable, a 409 worded otherwise) and take the retry's
 * Binding. So the rule: the cards go back only on a refusal that is the last of the pod's binds
 * to end, when none of them was confirmed. A pod the API server once bound keeps its cards until
 * it says the pod is gone (gsd_extender_gone(), gsd_extender_sync()); an outcome unknown keeps
 * them, as ever, until a later bind settles it.
 */
void gsd_extender_unbind(struct gsd_state *st, const struct gsd_bind *b)
{
    struct gsd_pod *p = gsd_pod_find(st, b->ns, b->name);
    char key[GSD_KEY_MAX];
    if (p && p->seq != b->seq)
        p = NULL; /* a later pod of the name: none of this bind's business */
    if (b->evict != 2 && p && p->binding > 0)
        p->binding--;
    if (b->evict != 2 && p && b->outcome == GSD_KUBE_BOUND)
        p->bound = 1;
    if (b->evict != 2 && b->outcome != GSD_KUBE_REFUSED)
        return;
    int keep = b->evict != 2 && p && (p->binding > 0 || p->bound);
    snprintf(key, sizeof(key), "%s/%s", b->ns, b->name);
    gsd_log("warn",
            b->evict == 2 ? "nominated pod gone from the API server: cards given back"
            : keep        ? "bind refused by the API server: cards kept, another bind of the pod "
                            "is under way or was confirmed"
                          : "bind refused by the API server: cards given back",
            "pod", key, "error", b->err, NULL);
    if (p && !keep)
        gsd_pod_cancel(st, p);
}

/* Pod @p ran to phase Succeeded in Kubernetes: completed there, as a walltime's end completes
 * one (its gang counts it towards minMember, the scheduler's count set to the daemon's, which
 * holds Kubernetes' word); one the scheduler does not run is cancelled.
 * Return: 0; -EIO (the store failed). */
static int succeeded(struct gsd_state *st, struct gsd_pod *p)
{
    int64_t now = gsd_sched_now(st);
    struct gsd_group *g = p->grp;
    if (p->state != GSD_RUNNING || p->sid < 0 ||
        gs_tenancy_complete(st->sched.tn, now, p->sid, NULL) < 0)
        return gsd_pod_cancel(st, p);
    int rc = gsd_pod_complete(st, p, now, 1);
    if (!rc && g &&
        gs_tenancy_podgroup_succeeded(st->sched.tn, g->spec.ns, g->spec.name, g->succeeded) ==
            -ENOMEM) {
        st->failed = 1; /* the store has it: the next start counts it */
        rc = -EIO;
    }
    return rc;
}

/* Pod @key ("NS/NAME") is not adopted, for @why: said and counted once for each reason, not at
 * every list (2,000 pods clashing on one card said 1,999 lines a list). */
static void adopt_refused(struct gsd_state *st, const char *key, const char *why)
{
    char h[24];
    snprintf(h, sizeof(h), "%llx", gsd_log_hash(why));
    const char *was = json_string_value(json_object_get(st->adopt_said, key));
    if (was && !strcmp(was, h))
        return;
    if (!st->adopt_said)
        st->adopt_said = json_object();
    json_object_set_new(st->adopt_said, key, json_string(h));
    st->adopt_refused_total++;
    gsd_log("warn", "bound pod not adopted: its cards stay free for gpusched", "pod", key, "error",
            why, NULL);
}

/*
 * What Kubernetes pod @pod, bound by gpuschedd's annotations, holds (*@a) and asks (@spec, read
 * as filter reads a pod), both checked: the annotations well formed, naming the node it is bound
 * to, its namespace a tenant's. Return: 0; -ENOENT not gpuschedd's (nothing to say); -EINVAL
 * with @why (@spec cleared).
 */
static int adopt_read(struct gsd_state *st, const json_t *pod, struct gsd_assigned *a,
                      struct gsd_podspec *spec, char *why, size_t cap)
{
    const json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
    const char *node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    int rc = gsd_pod_assigned(st, ann, a, why, cap);
    if (rc)
        return rc;
    const char *named = gs_cluster_node_name(st->cluster, (size_t)a->node);
    if (!node || strcmp(node, named)) {
        snprintf(why, cap, "annotation " GSD_NODE_ANNOTATION " names %s, spec.nodeName %s", named,
                 node ? node : "none");
        return -EINVAL;
    }
    char *text = json_dumps(pod, JSON_COMPACT);
    rc = text ? pod_of_text(text, spec, why, cap) : -ENOMEM;
    free(text);
    if (rc == -ENOMEM)
        snprintf(why, cap, "out of memory");
    if (!rc && gsd_ns_unowned(st, spec->ns, why, cap)) {
        gsd_podspec_clear(spec);
        rc = -EINVAL;
    }
    return rc ? -EINVAL : 0;
}

/*
 * Kubernetes pod @pod (@key "NS/NAME"), bound by gpuschedd's annotations, which gpuschedd does
 * not hold (its store lost or older): taken in on the cards they name, its tenant that of its
 * namespace. Return: 1 adopted; 0 refused (logged) or not gpuschedd's; -EIO the store failed.
 */
static int adopt(struct gsd_state *st, const char *key, const json_t *pod)
{
    char why[GS_DIAG_MSG_MAX] = "", gpus[GS_GPU_LIST_MAX];
    struct gsd_assigned a;
    struct gsd_podspec spec = {0};
    struct gsd_ferr e = {0};
    struct gsd_pod *p = NULL;
    int rc = adopt_read(st, pod, &a, &spec, why, sizeof(why));
    if (rc == -ENOENT)
        return 0; /* gsd_kube_live() keeps none such: another scheduler's pod, left alone */
    if (!rc) {
        const struct gsd_tenant *owner = gsd_tenant_of_ns(st->cfg, spec.ns);
        p = gsd_pod_adopt(st, &spec, owner ? owner->name : "", &a, &e);
        snprintf(why, sizeof(why), "%s", p ? "" : e.msg);
    }
    gsd_podspec_clear(&spec); /* what a refusal left of it */
    if (st->failed)
        return -EIO;
    if (!p) {
        adopt_refused(st, key, why);
        return 0;
    }
    gs_gpu_list_text(p->pl.gpu_mask, gpus);
    gsd_log("info", "pod adopted from the API server", "pod", key, "tenant", p->tenant, "node",
            gs_cluster_node_name(st->cluster, (size_t)p->pl.node), "gpus", gpus, NULL);
    return 1;
}

/* Every pod of @live (gsd_kube_live()) bound by gpuschedd's annotations that it does not hold,
 * adopted where its cards are free for it. Return: pods adopted; -EIO. */
static int adopt_all(struct gsd_state *st, const json_t *live)
{
    const char *key;
    json_t *v;
    int n = 0;
    json_object_foreach((json_t *)live, key, v)
    {
        const json_t *pod = json_object_get(v, "pod");
        const char *slash = strchr(key, '/');
        if (!pod || !slash || (size_t)(slash - key) >= GSD_NAME_MAX)
            continue;
        char ns[GSD_NAME_MAX];
        memcpy(ns, key, (size_t)(slash - key));
        ns[slash - key] = '\0';
        if (gsd_pod_find(st, ns, slash + 1))
            continue; /* held: placed here, or adopted by an earlier list */
        int rc = adopt(st, key, pod);
        if (rc < 0)
            return rc;
        n += rc;
    }
    json_t *tmp;
    json_object_foreach_safe(st->adopt_said, tmp, key, v) /* gone, or adopted since */
    {
        char ns[GSD_NAME_MAX];
        const char *slash = strchr(key, '/');
        snprintf(ns, sizeof(ns), "%.*s", slash ? (int)(slash - key) : 0, key);
        if (!json_object_get(live, key) || (slash && gsd_pod_find(st, ns, slash + 1)))
            json_object_del(st->adopt_said, key);
    }
    return n;
}

int gsd_extender_sync(struct gsd_state *st, const json_t *live, int64_t listed_us)
{
    int n = 0;
    /* A bind's API calls end within timeoutSeconds of its commit; only then is its pod labelled
     * (or refused), so younger pods are not judged by this list. */
    int64_t settled_us =
        listed_us - (st->cfg->kube ? st->cfg->kube->timeout_ms * 1000 : 0) - 1000000;
    for (struct gsd_pod *p = st->head, *next; p; p = next) {
        next = p->next;
        if (p->source != GSD_SRC_EXTENDER || p->submit_us >= settled_us ||
            (p->nominated && p->seen_us >= listed_us - GSD_NOMINATED_KEEP_US))
            continue;
        char key[GSD_KEY_MAX];
        int done;
        snprintf(key, sizeof(key), "%s/%s", p->spec.ns, p->spec.name);
        const char *uid = gsd_kube_succeeded(json_object_get(live, key), &done);
        int same = uid && (!p->uid[0] || !strcmp(uid, p->uid));
        if (same && !done)
            continue;
        gsd_log("info", "pod no longer run by Kubernetes: cards released", "pod", key, NULL);
        if (same ? succeeded(st, p) : gsd_pod_cancel(st, p))
            return -EIO;
        n++;
    }
    return adopt_all(st, live) < 0 ? -EIO : n;
}

/* The pod bind took cards for under @key ("NS/NAME") with UID @uid (or one bound with none). */
static struct gsd_pod *bound_pod(struct gsd_state *st, const char *key, const char *uid)
{
    char ns[GSD_NAME_MAX];
    const char *slash = strchr(key, '/');
    if (!slash || (size_t)(slash - key) >= sizeof(ns))
        return NULL;
    memcpy(ns, key, (size_t)(slash - key));
    ns[slash - key] = '\0';
    struct gsd_pod *p = gsd_pod_find(st, ns, slash + 1);
    return p && p->source == GSD_SRC_EXTENDER && (!p->uid[0] || !strcmp(p->uid, uid)) ? p : NULL;
}

int gsd_extender_holds(struct gsd_state *st, const char *key, const char *uid)
{
    return bound_pod(st, key, uid) != NULL;
}

int gsd_extender_gone(struct gsd_state *st, const json_t *gone)
{
    const char *key;
    json_t *v;
    int n = 0;
    json_object_foreach((json_t *)gone, key, v)
    {
        int done;
        const char *uid = gsd_kube_succeeded(v, &done);
        struct gsd_pod *p = uid ? bound_pod(st, key, uid) : NULL;
        if (!p)
            continue;
        gsd_log("info",
                p->state == GSD_PENDING
                    ? "pod deleted or finished in Kubernetes: forgotten (it held no cards)"
                    : "pod deleted or finished in Kubernetes: cards released",
                "pod", key, NULL);
        if (done ? succeeded(st, p) : gsd_pod_cancel(st, p))
            return -EIO;
        n++;
    }
    return n;
}

int gsd_extender_nominate(struct gsd_state *st, const char *key)
{
    char ns[GSD_NAME_MAX];
    const char *slash = strchr(key, '/');
    struct gsd_extpod *x = NULL;
    if (slash && (size_t)(slash - key) < sizeof(ns)) {
        memcpy(ns, key, (size_t)(slash - key));
        ns[slash - key] = '\0';
        x = ext_find(st, ns, slash + 1);
    }
    if (!x) /* bound, or forgotten, since */
        return 0;
    struct gsd_pod *p = gsd_pod_find(st, x->spec.ns, x->spec.name);
    if (p && !(p->nominated && x->spec.uid[0] && strcmp(x->spec.uid, p->uid)))
        return 0;
    if (p && gsd_pod_cancel(st, p)) /* an earlier pod of the name, deleted in Kubernetes */
        return -EIO;
    struct gsd_ferr e = {0};
    const struct gsd_tenant *owner = gsd_tenant_of_ns(st->cfg, x->spec.ns);
    p = gsd_pod_add(st, &x->spec, owner ? owner->name : "", GSD_SRC_EXTENDER, -1, &e);
    ext_forget(st, x);
    if (!p)
        return e.status == 503 ? -EIO : 0;
    gsd_pod_nominate(st, p);
    st->nudge_due |= p->state == GSD_RUNNING; /* the pass just run placed it */
    p->seen_us = gsd_now_us();
    char *names = gsd_nodes_ok_text(st, &p->spec);
    int rc = p->spec.nodes_ok && !names ? -ENOMEM : gsd_store_pod_nominated(st->store, p, names);
    free(names);
    if (rc) { /* out of memory too: a restart would place it on any node */
        st->failed = 1;
        return -EIO;
    }
    gsd_log("info",
            p->spec.group[0] ? "pod nominated: gpusched's scheduler holds this gang member, to "
                               "bind with its mates"
                             : "pod nominated: kube-scheduler found no node, gpusched's scheduler "
                               "takes it",
            "pod", key, "state",
            gsd_pod_allocated(p)      ? "allocated"
            : p->state == GSD_RUNNING ? "running"
                                      : "pending",
            NULL);
    return 0;
}

/* Held member @p of a gang short for longer than extender.shortGangHoldSeconds gives its cards
 * back. */
static int let_go(struct gsd_state *st, struct gsd_pod *p)
{
    char why[GSD_REASON_MAX];
    snprintf(why, sizeof(why),
             "its gang %.253s lost a member that was deleted before it bound, and was not whole "
             "again within %lld s (extender.shortGangHoldSeconds): its cards went back; it waits "
             "to be placed with its mates again",
             p->spec.group, (long long)(st->cfg->short_gang_hold_us / 1000000));
    return gs_tenancy_requeue(st->sched.tn, gsd_sched_now(st), p->sid, why);
}

int gsd_extender_short_gangs(struct gsd_state *st)
{
    int64_t now = gsd_clock_us(st), hold = st->cfg->short_gang_hold_us;
    if (!st->gangs_check && now < st->short_due)
        return 0;
    st->gangs_check = 0;
    st->short_due = INT64_MAX;
    int rc = 0, gone = 0, changed = 0;
    for (struct gsd_pod *p = st->head; p && rc == 0; p = p->next) {
        struct gsd_group *g = p->grp;
        if (!g || !p->nominated || p->bound || p->state != GSD_RUNNING)
            continue;
        if (!gang_short(st, p)) {
            changed |= g->short_us != 0;
            g->short_us = 0;
            continue;
        }
        changed |= !g->short_us;
        g->short_us = g->short_us ? g->short_us : now;
        if (now - g->short_us < hold) {
            st->short_due = g->short_us + hold < st->short_due ? g->short_us + hold : st->short_due;
            continue;
        }
        rc = let_go(st, p);
        gone = 1;
    }
    /* every held member of the gangs whose hold ended went back: their clocks stop */
    for (size_t i = 0; gone && i < st->ngroups; i++)
        if (st->groups[i]->short_us && now - st->groups[i]->short_us >= hold)
            st->groups[i]->short_us = 0;
    for (struct gsd_pod *p = st->head; changed && p; p = p->next)
        if (p->grp && gsd_pod_allocated(p)) /* their reason says whether the gang is short */
            gsd_snap_touch(st, p);
    return rc ? rc : gone ? gsd_sched_take(st) : 0;
}

void gsd_extender_nudge(struct gsd_state *st)
{
    if (!st->nudge_due || !st->nnominated || !st->cfg->kube)
        return;
    uint8_t *closed = st->nevicting ? closed_nodes(st) : NULL;
    if (st->nevicting && !closed)
        return; /* out of memory: the next batch tries again */
    st->nudge_due = 0;
    for (struct gsd_pod *p = st->head; p; p = p->next)
        if (p->nominated && !p->nudged && p->state == GSD_RUNNING &&
            !(closed && is_closed(closed, p->pl.node)) && !gang_short(st, p)) {
            const char *node = gs_cluster_node_name(st->cluster, (size_t)p->pl.node);
            gsd_sched_api_call(st, gsd_nudge_new(st->cfg->kube, p, node, gsd_now_us()), p);
            p->nudged = 1;
        }
    free(closed);
}

void gsd_extender_handle(struct gsd_state *st, struct gsd_req *r, const char *verb)
{
    if (!strcmp(verb, "filter") || !strcmp(verb, "prioritize")) {
        filter_or_prioritize(st, r, verb[0] == 'f');
        return;
    }
    if (strcmp(verb, "bind") && strcmp(verb, "preempt")) {
        gsd_reply_error(r, 404, "", "no extender verb %.32s (filter, prioritize, preempt, bind)",
                        verb);
        return;
    }
    json_t *args;
    if (gsd_body_json(r, &args))
        return;
    if (refuse_case_twins(r, args)) {
        json_decref(args);
        return;
    }
    if (verb[0] == 'b')
        bind_verb(st, r, args);
    else
        gsd_extender_preempt(st, r, args);
    json_decref(args);
}
