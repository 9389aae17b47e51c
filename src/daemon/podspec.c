/*
 * gpuschedd: a Kubernetes Pod object to what the scheduler reads. The request itself (resources,
 * GPU models, PodGroup, queue, PriorityClass, topology, profile, vGPU class) is read by the one
 * Pod parser, the simulator's own, strictly (gs_pod_parse_json(): from the value jansson read, so
 * the body is parsed once): what it would only warn about in a scenario file is refused here.
 * What the API keeps besides (uid, labels, annotations, the body itself) is read with jansson.
 */
#include "podspec.h"
#include "api.h"

#include "../config/yamlutil.h"
#include "gpusched/scenario.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KV_MAX 256 /* labels, and annotations, per pod */

static int ferr(struct gsd_ferr *e, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int ferr(struct gsd_ferr *e, const char *field, const char *fmt, ...)
{
    va_list ap;
    e->status = 400;
    snprintf(e->field, sizeof(e->field), "%s", field);
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return -EINVAL;
}

int gsd_name_ok(const char *s)
{
    return gs_dns_label_ok(s, strlen(s));
}

/* A pod name: a DNS subdomain of at most 253 bytes (dots allowed between labels). */
int gsd_subdomain_ok(const char *s)
{
    size_t n = strlen(s);
    return n < GSD_OBJ_MAX && gs_dns_subdomain_ok(s, n);
}

/* A metadata key and value as an API server checks them: a label key and value; an annotation
 * key is a label key once lowercased (ValidateAnnotations), its value any text. */
static int meta_pair(const char *field, int labels, const char *k, const char *v,
                     struct gsd_ferr *e)
{
    char at[sizeof(e->field)];
    snprintf(at, sizeof(at), "%s.%.80s", field, k);
    if (labels ? !gs_label_key_ok(k) || strlen(k) >= 320 : !gs_annotation_key_ok(k))
        return ferr(e, at,
                    "%s: %s key %.80s: expected an optional DNS subdomain prefix and '/', then a "
                    "name of 1-63 bytes: alphanumerics at both ends, '-', '_', '.' between",
                    at, labels ? "label" : "annotation", k);
    if (labels && !gs_label_word_ok(v, strlen(v)))
        return ferr(e, at,
                    "%s: label %.80s: value %.80s: expected at most 63 bytes, empty or "
                    "alphanumerics at both ends, '-', '_', '.' between",
                    at, k, v);
    return 0;
}

int gsd_string_map(const json_t *v, const char *field, json_t **out, struct gsd_ferr *e)
{
    if (!v || json_is_null(v)) {
        *out = json_object();
        return *out ? 0 : -ENOMEM;
    }
    if (!json_is_object(v))
        return ferr(e, field, "%s: expected an object of strings", field);
    if (json_object_size(v) > KV_MAX)
        return ferr(e, field, "%s: more than %d entries", field, KV_MAX);
    const char *k;
    json_t *x;
    size_t bytes = 0;
    int labels = strcmp(field, "metadata.labels") == 0;
    json_object_foreach((json_t *)v, k, x)
    {
        if (!json_is_string(x)) {
            char at[sizeof(e->field)];
            snprintf(at, sizeof(at), "%s.%.80s", field, k);
            return ferr(e, at, "%s: expected a string", at);
        }
        int rc = meta_pair(field, labels, k, json_string_value(x), e);
        if (rc)
            return rc;
        bytes += strlen(k) + json_string_length(x);
        if (!labels && bytes > GS_ANNOTATIONS_MAX_BYTES && !e->stored)
            return ferr(e, field,
                        "%s: more than %d bytes of keys and values in all, as the API server "
                        "refuses them",
                        field, GS_ANNOTATIONS_MAX_BYTES);
        if (!labels && bytes > GS_ANNOTATIONS_MAX_BYTES && !e->warning[0])
            snprintf(e->warning, sizeof(e->warning),
                     "%s: more than %d bytes of keys and values in all: kept as stored, but a "
                     "POST of it now is refused",
                     field, GS_ANNOTATIONS_MAX_BYTES);
    }
    *out = json_deep_copy(v);
    return *out ? 0 : -ENOMEM;
}

/* The simulator's own annotations that only a simulated run can give a meaning to. */
static const char *const sim_only[] = {
    "sim.gpusched.io/arrival",     "sim.gpusched.io/gpu-util",  "sim.gpusched.io/node",
    "sim.gpusched.io/gpus",        "sim.gpusched.io/mig-start", "sim.gpusched.io/start",
    "sim.gpusched.io/saved",       "sim.gpusched.io/done",      "sim.gpusched.io/evictions",
    "sim.gpusched.io/first-start", "sim.gpusched.io/charged"};

int gsd_typed_string(const json_t *o, const char *key, const char *where, struct gsd_ferr *e)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v) && !json_is_boolean(v))
        return 0;
    char field[sizeof(e->field)];
    snprintf(field, sizeof(field), "%s%s", where, key);
    return ferr(e, field,
                "%s must be a string, not a %s (as Kubernetes refuses it): quote it for the text",
                field, json_is_number(v) ? "number" : "boolean");
}

/* The first key of object @o (anything else has none) not among @keys (@n): NULL when none. */
static const char *unknown_key(const json_t *o, const char *const *keys, int n)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        int i = 0;
        while (i < n && strcmp(k, keys[i]))
            i++;
        if (i == n)
            return k;
    }
    return NULL;
}

/*
 * A key of the Pod or its metadata that is no field of theirs, said before what the others must
 * hold: "metdata", "spex" or "nme" is a misspelling, with the key meant, not a metadata, spec or
 * name missing. The loader (gs_pod_parse_json()) says the same of every other object. Return: 0;
 * -EINVAL with @e.
 */
static int misspelt(const json_t *pod, const json_t *md, struct gsd_ferr *e)
{
    static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", "status"};
    const char *k = unknown_key(pod, top, 5), *where = "Pod";
    const char *const *keys = top;
    int n = 5;
    if (!k) {
        k = unknown_key(md, gs__yaml_meta_keys, GS__YAML_NMETA);
        where = "metadata", keys = gs__yaml_meta_keys, n = GS__YAML_NMETA;
    }
    if (!k)
        return 0;
    char near[96], field[sizeof(e->field)];
    snprintf(field, sizeof(field), "%s%.100s", keys == top ? "" : "metadata.", k);
    return ferr(e, field, "unknown field \"%.100s\" in %s%s: refused rather than ignored", k, where,
                gs__hint(k, keys, n, near, sizeof(near)));
}

static int parse_metadata(const json_t *md, struct gsd_podspec *out, struct gsd_ferr *e)
{
    if (!json_is_object(md))
        return ferr(e, "metadata", "metadata: expected an object");
    static const char *const texts[] = {"name", "namespace", "uid"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        if (gsd_typed_string(md, texts[i], "metadata.", e))
            return -EINVAL;
    const json_t *name = json_object_get(md, "name"), *ns = json_object_get(md, "namespace");
    const json_t *uid = json_object_get(md, "uid");
    /* a name the API server would make up from generateName could not be asked for again */
    if ((!name || json_is_null(name)) && json_object_get(md, "generateName"))
        return ferr(e, "metadata.name",
                    "metadata.name: Required value: generateName is not supported (gpuschedd "
                    "makes up no names, and a pod is asked for by its name); give a name");
    if (!json_is_string(name) || !gsd_subdomain_ok(json_string_value(name)))
        return ferr(e, "metadata.name",
                    "metadata.name: expected a DNS name of at most 253 bytes (a-z, 0-9, '-', '.')");
    memcpy(out->name, json_string_value(name), strlen(json_string_value(name)) + 1);
    if (ns && !json_is_null(ns)) {
        if (!json_is_string(ns) || !gsd_name_ok(json_string_value(ns)))
            return ferr(e, "metadata.namespace",
                        "metadata.namespace: expected a DNS label (a-z, 0-9, '-', 1..63)");
        memcpy(out->ns, json_string_value(ns), strlen(json_string_value(ns)) + 1);
    }
    if (uid && !json_is_null(uid)) {
        const char *u = json_string_value(uid);
        if (!u || (u[0] && !gs_uid_ok(u)))
            return ferr(e, "metadata.uid",
                        "metadata.uid: expected at most 63 bytes of letters, digits, '.', '_' "
                        "and '-', not first '.' (the API server's are UUIDs)");
        memcpy(out->uid, json_string_value(uid), json_string_length(uid) + 1);
    }
    int rc = gsd_string_map(json_object_get(md, "labels"), "metadata.labels", &out->labels, e);
    if (!rc)
        rc = gsd_string_map(json_object_get(md, "annotations"), "metadata.annotations",
                            &out->annotations, e);
    for (size_t i = 0; !rc && i < sizeof(sim_only) / sizeof(sim_only[0]); i++)
        if (json_object_get(out->annotations, sim_only[i])) {
            char field[128];
            snprintf(field, sizeof(field), "metadata.annotations.%s", sim_only[i]);
            rc = ferr(e, field, "%s: only a simulated run gives it a meaning; %s", sim_only[i],
                      i == 0   ? "gpuschedd takes a pod when it is submitted"
                      : i == 1 ? "gpuschedd does not model how busy a pod keeps its GPUs"
                               : "a simulated run's snapshot writes it, and gpuschedd places a "
                                 "pod itself (spec.nodeName holds it to a node)");
        }
    return rc;
}

int gsd_create_fields_ok(const json_t *obj, struct gsd_ferr *e)
{
    /* Kubernetes' API server sets the first eight on create (BeforeCreate(): a new UID, the
     * time) and refuses a resourceVersion; a UID kept from a request could be another pod's,
     * and preemption and the node agents tell pods apart by it. The last two are read by
     * controllers gpuschedd does not run: the garbage collector, finalizers' owners. */
    static const struct {
        const char *key;
        int unacted;
    } meta[] = {{"uid", 0},
                {"resourceVersion", 0},
                {"generation", 0},
                {"creationTimestamp", 0},
                {"deletionTimestamp", 0},
                {"deletionGracePeriodSeconds", 0},
                {"managedFields", 0},
                {"selfLink", 0},
                {"ownerReferences", 1},
                {"finalizers", 1}};
    const json_t *md = json_object_get(obj, "metadata");
    char field[64];
    for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++)
        if (json_object_get(md, meta[i].key)) {
            snprintf(field, sizeof(field), "metadata.%s", meta[i].key);
            return ferr(e, field, "%s: %s", field,
                        meta[i].unacted ? "nothing in gpuschedd acts on it (no garbage collector, "
                                          "no finalizer's controller): refused rather than ignored"
                                        : "gpuschedd sets it when it creates the object, as "
                                          "Kubernetes' API server does; a request to create one "
                                          "does not give it");
        }
    if (json_object_get(obj, "status"))
        return ferr(e, "status",
                    "status: gpuschedd writes it; a request to create an object "
                    "does not give it (Kubernetes' API server drops it)");
    return 0;
}

void gsd_field_msg(struct gsd_ferr *e, const char *msg)
{
    const char *rest = strstr(msg, ": ") ? strstr(msg, ": ") + 2 : msg;
    size_t n = 0;
    for (const char *tail = e->field; tail && *tail && !n; tail = strchr(tail, '.')) {
        tail += *tail == '.';
        n = strlen(tail);
        if (strncmp(rest, tail, n) || (rest[n] != ':' && rest[n] != ' '))
            n = 0;
    }
    /* "requests.cpu: ..." as "spec.containers[0].resources.requests.cpu: ...", "minResources must
     * be ..." as "spec.minResources must be ...", anything else after the field and ": " */
    snprintf(e->msg, sizeof(e->msg), "%.127s%s%.380s", e->field, n || !e->field[0] ? "" : ": ",
             rest + n);
}

static int reals_as_text(json_t *v);

/* @x: a real as a new string of its shortest digits; anything else NULL, its members walked. */
static json_t *as_text(json_t *x, int *rc)
{
    char num[32];
    if (!json_is_real(x)) {
        *rc = *rc ? *rc : reals_as_text(x);
        return NULL;
    }
    gs__json_real_text(json_real_value(x), num, sizeof(num));
    json_t *s = json_string(num);
    *rc = s ? *rc : -ENOMEM;
    return s;
}

/*
 * reals_as_text() - each JSON real under @v, a Pod the parser took (so a real stands only where a
 * quantity does), made the string of its shortest digits, as an API server keeps a Quantity as
 * its text: jansson would write 0.1 back as 0.10000000000000001, which the store's next reading
 * would take as it is read now, but a snapshot's reader, exact, as 101m. Return: 0; -ENOMEM.
 */
static int reals_as_text(json_t *v)
{
    const char *k;
    json_t *x, *s;
    size_t i;
    int rc = 0;
    json_object_foreach(v, k, x)
    {
        if ((s = as_text(x, &rc)) && json_object_set_new(v, k, s))
            rc = -ENOMEM;
    }
    json_array_foreach(v, i, x)
    {
        if ((s = as_text(x, &rc)) && json_array_set_new(v, i, s))
            rc = -ENOMEM;
    }
    return rc;
}

void gsd_ferr_warning(void *ud, const char *msg)
{
    struct gsd_ferr *e = ud;
    int at = 0; /* "body:L:C: ": a JSON body's reader has no lines; the message names the field */
    sscanf(msg, "body:%*u:%*u: %n", &at);
    if (!e->warning[0])
        snprintf(e->warning, sizeof(e->warning), "%s", msg + at);
}

int gsd_podspec_parse(const char *text, size_t len, int strict, struct gsd_podspec *out,
                      struct gsd_ferr *e)
{
    json_error_t jerr;
    memset(out, 0, sizeof(*out));
    e->warning[0] = '\0';
    json_t *pod = json_loadb(text ? text : "", len, JSON_REJECT_DUPLICATES, &jerr);
    char msg[GS_DIAG_MSG_MAX];
    if (!pod)
        return ferr(e, "", "%s", gsd_json_error(&jerr, "body", msg, sizeof(msg)));
    int rc = 0;
    const json_t *kind = json_object_get(pod, "kind"), *api = json_object_get(pod, "apiVersion");
    if (!json_is_object(pod))
        rc = ferr(e, "", "the body must be a Pod object");
    else if (kind && !json_is_null(kind) && !json_is_string(kind))
        rc = ferr(e, "kind", "kind: expected Pod");
    else if (kind && json_is_string(kind) && strcmp(json_string_value(kind), "Pod"))
        /* a Deployment, a Volcano Job, a Queue or a Node pasted as it is: say what to send */
        rc = ferr(e, "kind",
                  "kind %.63s: expected Pod. POST /v1/pods places pods: a workload (Deployment, "
                  "Volcano Job, ...) as each pod it would create, a gang as a PodGroup (POST "
                  "/v1/podgroups) and its Pods; a Queue or other policy goes in gpuschedd's "
                  "--config files, nodes in its --nodes",
                  json_string_value(kind));
    if (!rc && api && !json_is_null(api) &&
        (!json_is_string(api) || strcmp(json_string_value(api), "v1")))
        rc = ferr(e, "apiVersion", "apiVersion: expected v1 (a Pod is core/v1)");
    if (!rc && strict)
        rc = gsd_create_fields_ok(pod, e);
    if (!rc)
        rc = misspelt(pod, json_object_get(pod, "metadata"), e);
    if (!rc)
        rc = parse_metadata(json_object_get(pod, "metadata"), out, e);
    if (!rc && !json_is_object(json_object_get(pod, "spec")))
        rc = ferr(e, "spec", "spec: expected an object");
    if (!rc) {
        struct gs_diag d;
        gs_diag_init(&d);
        d.warn = gsd_ferr_warning;
        d.warn_ud = e;
        rc = gs_pod_parse_json("body", pod, strict, &out->s, e->field, sizeof(e->field), &d);
        if (rc == -ENOMEM)
            snprintf(e->msg, sizeof(e->msg), "out of memory");
        else if (rc)
            gsd_field_msg(e, d.msg);
        e->status = rc == -ENOMEM ? 500 : 400;
    }
    if (!rc && (reals_as_text(pod) || !(out->body = json_dumps(pod, JSON_COMPACT)))) {
        rc = -ENOMEM;
        snprintf(e->msg, sizeof(e->msg), "out of memory");
    }
    json_decref(pod);
    if (rc == -ENOMEM && !e->msg[0]) {
        e->status = 500;
        snprintf(e->msg, sizeof(e->msg), "out of memory");
    }
    if (!rc && !out->ns[0])
        out->s.ns[0] = '\0'; /* the parser's "default": the API picks the namespace itself */
    if (rc)
        gsd_podspec_clear(out);
    return rc < 0 ? rc : 0;
}

struct gsd_podparse *gsd_podparse_new(const char *text, size_t len)
{
    struct gsd_podparse *pp = malloc(sizeof(*pp));
    if (pp)
        pp->rc = gsd_podspec_parse(text, len, 1, &pp->spec, &pp->e);
    return pp;
}

void gsd_podparse_free(struct gsd_podparse *pp)
{
    if (pp && !pp->rc)
        gsd_podspec_clear(&pp->spec);
    free(pp);
}

int gsd_podspec_set_ns(struct gsd_podspec *p, const char *ns)
{
    json_t *pod = json_loads(p->body, 0, NULL), *md = json_object_get(pod, "metadata");
    int rc = md && !json_object_set_new(md, "namespace", json_string(ns)) ? 0 : -ENOMEM;
    char *body = rc ? NULL : json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    if (!body)
        return -ENOMEM;
    free(p->body);
    p->body = body;
    snprintf(p->ns, sizeof(p->ns), "%s", ns);
    snprintf(p->s.ns, sizeof(p->s.ns), "%s", ns);
    return 0;
}

void gsd_podspec_clear(struct gsd_podspec *p)
{
    json_decref(p->labels);
    json_decref(p->annotations);
    free(p->body);
    free((void *)p->s.nodes_ok);
    p->labels = p->annotations = NULL;
    p->body = NULL;
    p->s.nodes_ok = NULL;
}
