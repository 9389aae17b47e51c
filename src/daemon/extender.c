/*
 * gpuschedd: the Kubernetes scheduler extender verbs (k8s.io/kube-scheduler/extender/v1).
 *
 * The Go types there carry no json tags, so the wire keys are the Go field names ("Pod",
 * "NodeNames", "FailedNodes", ...). Go decodes keys without regard to case; so does this file,
 * preferring an exact match. A verb always answers 200 with its result type: the protocol's own
 * Error field carries a failure, which kube-scheduler reports against the pod.
 *
 * filter and prioritize evaluate the pod on each named node with the engine without binding.
 * The pod's request is remembered (the last GSD_EXT_CACHE pods) because bind names only the pod:
 * bind then takes the cards on the chosen node and stores the pod as running, so the daemon's
 * own view of every card stays whole whichever path placed a pod.
 */
#include "gsd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Member @key of @obj: exact first, then any case (Go's encoding/json decodes that way). */
static json_t *jget(const json_t *obj, const char *key)
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

static void ext_remember(struct gsd_state *st, struct gsd_podspec *spec)
{
    char key[2 * GSD_NAME_MAX];
    snprintf(key, sizeof(key), "%s/%s", spec->ns, spec->name);
    size_t slot = st->ext_next;
    for (size_t i = 0; i < GSD_EXT_CACHE; i++)
        if (st->ext[i].used && !strcmp(st->ext[i].key, key)) {
            slot = i;
            break;
        }
    if (slot == st->ext_next)
        st->ext_next = (st->ext_next + 1) % GSD_EXT_CACHE;
    gsd_podspec_clear(&st->ext[slot].spec);
    memcpy(st->ext[slot].key, key, sizeof(key));
    st->ext[slot].spec = *spec; /* takes the labels and annotations */
    st->ext[slot].used = 1;
    memset(spec, 0, sizeof(*spec));
}

static struct gsd_extpod *ext_find(struct gsd_state *st, const char *ns, const char *name)
{
    char key[2 * GSD_NAME_MAX];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    for (size_t i = 0; i < GSD_EXT_CACHE; i++)
        if (st->ext[i].used && !strcmp(st->ext[i].key, key))
            return &st->ext[i];
    return NULL;
}

/* The pod's request from ExtenderArgs; "default" namespace when the Pod has none. */
static int args_pod(struct gsd_state *st, const json_t *args, struct gsd_podspec *spec, char *err,
                    size_t cap)
{
    struct gsd_ferr e;
    if (!json_is_object(args)) {
        snprintf(err, cap, "ExtenderArgs: expected an object");
        return -EINVAL;
    }
    if (gsd_podspec_parse(jget(args, "Pod"), st->min_card_mib, spec, &e)) {
        snprintf(err, cap, "Pod.%.100s: %.380s", e.field, e.msg);
        return -EINVAL;
    }
    if (!spec->ns[0])
        memcpy(spec->ns, "default", 8);
    return 0;
}

/* Node names of the request: NodeNames (nodeCacheCapable) or Nodes.items[].metadata.name. */
static const json_t *args_nodes(const json_t *args, int *cache_capable)
{
    const json_t *names = jget(args, "NodeNames");
    *cache_capable = json_is_array(names);
    if (*cache_capable)
        return names;
    return jget(jget(args, "Nodes"), "items");
}

static const char *node_name_of(const json_t *item, int cache_capable)
{
    return json_string_value(
        cache_capable ? item : json_object_get(json_object_get(item, "metadata"), "name"));
}

/* Score of the pod on node @name: >= 2 fits; GS_UNSCHEDULABLE with @why; -ENOENT unknown. */
static int64_t score_on(struct gsd_state *st, const struct gs_pod_req *req, const char *name,
                        struct gs_diag *why)
{
    int idx = name ? gs_cluster_find(st->cluster, name) : -ENOENT;
    if (idx < 0)
        return -ENOENT;
    gs_diag_init(why);
    return gs_sched_score_node(st->sched, req, (size_t)idx, why);
}

static void filter(struct gsd_state *st, struct gsd_req *r, const json_t *args)
{
    struct gsd_podspec spec;
    char err[GS_DIAG_MSG_MAX];
    int cc;
    json_t *pass = json_array(), *failed = json_object(), *unres = json_object();
    const json_t *nodes = args_nodes(args, &cc);
    if (args_pod(st, args, &spec, err, sizeof(err)) == 0) {
        err[0] = '\0';
        struct gs_diag why;
        size_t i;
        const json_t *item;
        json_array_foreach(nodes, i, item)
        {
            const char *name = node_name_of(item, cc);
            int64_t sc = score_on(st, &spec.req, name, &why);
            if (sc >= 2)
                json_array_append(pass, (json_t *)item);
            else if (sc == -ENOENT && name)
                json_object_set_new(unres, name,
                                    json_string("node is not in gpusched's "
                                                "inventory"));
            else if (sc == GS_UNSCHEDULABLE)
                json_object_set_new(failed, name, json_string(gs_sched_last_reason(st->sched)));
            else if (sc < 0 && !err[0])
                snprintf(err, sizeof(err), "%s", name ? why.msg : "a node has no name");
        }
        ext_remember(st, &spec);
    }
    json_t *res =
        json_pack("{s:o, s:o, s:s, s:n, s:n}", "FailedNodes", failed, "FailedAndUnresolvableNodes",
                  unres, "Error", err, "NodeNames", "Nodes");
    if (cc) {
        json_object_set_new(res, "NodeNames", pass);
    } else {
        json_object_set_new(res, "Nodes", json_pack("{s:{}, s:o}", "metadata", "items", pass));
    }
    gsd_reply_json(r, 200, res);
}

/* HostPriorityList: each fitting node scaled to 0..10 between the lowest and highest score. */
static void prioritize(struct gsd_state *st, struct gsd_req *r, const json_t *args)
{
    struct gsd_podspec spec;
    char err[GS_DIAG_MSG_MAX];
    int cc;
    const json_t *nodes = args_nodes(args, &cc);
    json_t *list = json_array();
    if (args_pod(st, args, &spec, err, sizeof(err))) {
        gsd_reply_json(r, 200, list); /* the list type has no error field: score nothing */
        gsd_log("warn", "prioritize: bad pod", "error", err, NULL);
        return;
    }
    size_t n = json_array_size(nodes), i;
    int64_t lo = INT64_MAX, hi = INT64_MIN, *sc = calloc(n ? n : 1, sizeof(*sc));
    struct gs_diag why;
    const json_t *item;
    if (!sc) {
        gsd_podspec_clear(&spec);
        json_decref(list);
        gsd_reply_error(r, 500, "", "out of memory");
        return;
    }
    json_array_foreach(nodes, i, item)
    {
        sc[i] = score_on(st, &spec.req, node_name_of(item, cc), &why);
        if (sc[i] >= 2) {
            lo = sc[i] < lo ? sc[i] : lo;
            hi = sc[i] > hi ? sc[i] : hi;
        }
    }
    json_array_foreach(nodes, i, item)
    {
        const char *name = node_name_of(item, cc);
        int64_t s = sc[i] < 2 ? 0 : hi == lo ? 10 : (sc[i] - lo) * 10 / (hi - lo);
        if (name)
            json_array_append_new(list,
                                  json_pack("{s:s, s:I}", "Host", name, "Score", (json_int_t)s));
    }
    free(sc);
    ext_remember(st, &spec);
    gsd_reply_json(r, 200, list);
}

static void bind_verb(struct gsd_state *st, struct gsd_req *r, const json_t *args)
{
    const char *name = json_string_value(jget(args, "PodName"));
    const char *ns = json_string_value(jget(args, "PodNamespace"));
    const char *uid = json_string_value(jget(args, "PodUID"));
    const char *node = json_string_value(jget(args, "Node"));
    char err[GS_DIAG_MSG_MAX] = "";
    struct gsd_extpod *x = name && ns ? ext_find(st, ns, name) : NULL;
    int idx = node ? gs_cluster_find(st->cluster, node) : -1;
    if (!name || !ns || !node)
        snprintf(err, sizeof(err),
                 "ExtenderBindingArgs: PodName, PodNamespace and Node are "
                 "required strings");
    else if (gsd_pod_find(st, ns, name))
        snprintf(err, sizeof(err), "pod %s/%s is already held by gpusched", ns, name);
    else if (!x)
        snprintf(err, sizeof(err), "pod %s/%s was not seen by filter or prioritize", ns, name);
    else if (idx < 0)
        snprintf(err, sizeof(err), "node %s is not in gpusched's inventory", node);
    if (!err[0]) {
        struct gsd_ferr e;
        const struct gsd_tenant *owner = gsd_tenant_of_ns(st->cfg, ns);
        if (uid && *uid && strlen(uid) < GSD_UID_MAX)
            memcpy(x->spec.uid, uid, strlen(uid) + 1);
        if (!gsd_pod_add(st, &x->spec, owner ? owner->name : "", GSD_SRC_EXTENDER, idx, &e))
            snprintf(err, sizeof(err), "%s", e.msg);
        gsd_podspec_clear(&x->spec);
        x->used = 0;
    }
    gsd_reply_json(r, 200, json_pack("{s:s}", "Error", err));
}

void gsd_extender_handle(struct gsd_state *st, struct gsd_req *r, const char *verb)
{
    json_error_t jerr;
    json_t *args = json_loadb(r->body ? r->body : "", r->len, 0, &jerr);
    if (!args) {
        gsd_reply_error(r, 400, "", "body: not JSON at line %d column %d: %s", jerr.line,
                        jerr.column, jerr.text);
        return;
    }
    if (!strcmp(verb, "filter"))
        filter(st, r, args);
    else if (!strcmp(verb, "prioritize"))
        prioritize(st, r, args);
    else if (!strcmp(verb, "bind"))
        bind_verb(st, r, args);
    else
        gsd_reply_error(r, 404, "", "no extender verb %.32s (filter, prioritize, bind)", verb);
    json_decref(args);
}
