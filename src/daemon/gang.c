/*
 * gpuschedd: PodGroups (Volcano's scheduling.volcano.sh/v1beta1 kind) through the API.
 *
 * A pod joins the PodGroup its annotation scheduling.k8s.io/group-name (or the coscheduling
 * plugin's label) names in its own namespace; it must exist first. How a gang is placed is the
 * scheduler's (src/core/tenancy/placement.c): minMember together or not at all, further members
 * one by one. PodGroups are stored; members and running counts are the scheduler thread's,
 * counted from the pods.
 */
#include "gang.h"
#include "../config/yamlutil.h"
#include "api.h"
#include "kube.h"
#include "log.h"
#include "preempt.h"
#include "queue.h"
#include "server.h"
#include "state.h"
#include "snapshot.h"
#include "store.h"

#include "gpusched/diag.h"
#include "gpusched/scenario.h"
#include "gpusched/tenancy.h"

#include "gpusched/grow.h"
#include "gpusched/quantity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the spec's names are read and written as the API's (opt_name(), a tenant's namespace) */
_Static_assert(GS_SCN_NAME_MAX == GSD_NAME_MAX && GS_SCN_OBJ_MAX == GSD_OBJ_MAX,
               "a PodGroup's names are the API's names");

struct gsd_group *gsd_group_find(const struct gsd_state *st, const char *ns, const char *name)
{
    for (size_t i = 0; i < st->ngroups; i++)
        if (!strcmp(st->groups[i]->spec.name, name) && !strcmp(st->groups[i]->spec.ns, ns))
            return st->groups[i];
    return NULL;
}

const struct gs_podgroup_spec *gsd_group_of_files(const struct gsd_config *cfg, const char *ns,
                                                  const char *name)
{
    const struct gs_policy *pol = cfg->quotas ? &cfg->quotas->policy : NULL;
    for (size_t i = 0; pol && i < pol->npodgroups; i++)
        if (!strcmp(pol->podgroups[i].name, name) && !strcmp(pol->podgroups[i].ns, ns))
            return &pol->podgroups[i];
    return NULL;
}

int gsd_groups_apart(const struct gsd_state *st, const struct gsd_config *cfg, struct gs_diag *d)
{
    for (size_t i = 0; i < st->ngroups; i++) {
        const struct gs_podgroup_spec *g = &st->groups[i]->spec;
        const struct gs_podgroup_spec *f = gsd_group_of_files(cfg, g->ns, g->name);
        if (f)
            return gs_diag_error(d,
                                 "%s:%u:%u: PodGroup %s/%s is one POST /v1/podgroups made: delete "
                                 "it there first, or name this one otherwise",
                                 f->src.file, f->src.line, f->src.col, g->ns, g->name);
    }
    return 0;
}

static int64_t group_bytes(const struct gsd_group *g);

/* How many PodGroups tenant @tenant holds, as maxPodGroupsPerTenant counts them. O(groups). */
static size_t groups_of(const struct gsd_state *st, const char *tenant)
{
    size_t n = 0;
    for (size_t i = 0; i < st->ngroups; i++)
        n += !strcmp(st->groups[i]->tenant, tenant);
    return n;
}

static struct gsd_group *keep(struct gsd_state *st, const struct gsd_group *g)
{
    struct gsd_group **t = gs_grow(st->groups, &st->capgroups, st->ngroups + 1, sizeof(*t), 64);
    if (!t)
        return NULL;
    st->groups = t;
    struct gsd_group *k = malloc(sizeof(*k));
    char *meta = strdup(g->meta ? g->meta : "{}");
    if (!k || !meta) {
        free(k);
        free(meta);
        return NULL;
    }
    *k = *g;
    k->meta = meta;
    k->bytes = g->bytes > 0 ? g->bytes : group_bytes(k);
    if (k->bytes < 0) {
        free(meta);
        free(k);
        return NULL;
    }
    int64_t *bytes = k->tenant[0] ? gsd_tenant_bytes(st, k->tenant, 1) : NULL;
    if (bytes) /* what a tenant's PodGroups hold counts with its pods (maxPodBytesPerTenant) */
        *bytes += k->bytes;
    k->members = k->running = k->allocated = 0;
    k->tried = 0;
    k->seq = g->seq > st->group_seq ? g->seq : st->group_seq; /* a restored one's, kept */
    st->group_seq = k->seq + 1;
    st->groups[st->ngroups++] = k;
    return k;
}

static int stored_ok(const struct gsd_group *g, struct gs_diag *d);

struct restoring {
    struct gsd_state *st;
    struct gs_diag *d;
};

static int restore_group(void *ud, const struct gsd_group *g)
{
    const struct restoring *r = ud;
    int rc = stored_ok(g, r->d);
    return rc ? rc : keep(r->st, g) ? 0 : -ENOMEM;
}

int gsd_groups_restore(struct gsd_state *st, struct gs_diag *d)
{
    struct restoring r = {st, d};
    return gsd_store_group_load(st->store, restore_group, &r);
}

void gsd_groups_recount(struct gsd_state *st)
{
    for (size_t i = 0; i < st->ngroups; i++)
        st->groups[i]->members = st->groups[i]->running = st->groups[i]->allocated = 0;
    for (const struct gsd_pod *p = st->head; p; p = p->next)
        if (p->grp) {
            p->grp->members++;
            p->grp->running += p->state == GSD_RUNNING;
            p->grp->allocated += gsd_pod_allocated(p);
        }
}

void gsd_groups_free(struct gsd_state *st)
{
    for (size_t i = 0; i < st->ngroups; i++) {
        free(st->groups[i]->meta);
        free(st->groups[i]);
    }
    free(st->groups);
    st->groups = NULL;
    st->ngroups = st->capgroups = 0;
    json_decref(st->kube_refused);
    st->kube_refused = NULL;
    json_decref(st->adopt_said);
    st->adopt_said = NULL;
}

/* ---- the API ---- */

json_t *gsd_group_min_json(const struct gsd_group *g)
{
    json_t *o = json_object();
    char v[GS_QUANTITY_STR_MAX];
    if (o && g->spec.min_gpu_milli)
        json_object_set_new(
            o, "nvidia.com/gpu",
            json_string(gs_quantity_format_milli(g->spec.min_gpu_milli, v, sizeof(v))));
    if (o && g->spec.min_cpu_milli)
        json_object_set_new(
            o, "cpu", json_string(gs_quantity_format_milli(g->spec.min_cpu_milli, v, sizeof(v))));
    gs_quantity_format_mib(g->spec.min_memory_mib, v, sizeof(v));
    if (o && g->spec.min_memory_mib)
        json_object_set_new(o, "memory", json_string(v));
    snprintf(v, sizeof(v), "%lld", (long long)g->spec.min_pods);
    if (o && g->spec.min_pods)
        json_object_set_new(o, "pods", json_string(v));
    return o;
}

/* An optional name as JSON: null when the PodGroup names none, as a pod's unset fields are. */
static json_t *name_or_null(const char *name)
{
    return name[0] ? json_string(name) : json_null();
}

/* PodGroup @g as an object of the API, its labels and annotations those of @meta (parsed
 * g->meta; none where it is not an object): {"metadata": {name, namespace (where set), labels,
 * annotations}, "spec": {minMember, queue, priorityClassName, minResources, minTaskMember}}.
 * Return: a new reference; NULL out of memory. */
static json_t *group_object(const struct gsd_group *g, const json_t *meta)
{
    json_t *md = json_pack("{s:s}", "name", g->spec.name);
    json_t *spec = json_pack(
        "{s:i, s:o, s:o, s:o, s:o}", "minMember", (int)g->spec.min_member, "queue",
        name_or_null(g->spec.queue), "priorityClassName", name_or_null(g->spec.priority_class),
        "minResources", gsd_group_min_json(g), "minTaskMember", gsd_group_tasks_json(&g->spec));
    json_t *b = json_pack("{s:o, s:o}", "metadata", md, "spec", spec);
    int rc = b ? 0 : -ENOMEM;
    if (!rc && g->spec.ns[0])
        rc = json_object_set_new(md, "namespace", json_string(g->spec.ns)) ? -ENOMEM : 0;
    for (int i = 0; !rc && json_is_object(meta) && i < 2; i++) {
        json_t *v = json_object_get(meta, i ? "annotations" : "labels");
        if (v && json_object_set(md, i ? "annotations" : "labels", v))
            rc = -ENOMEM;
    }
    if (rc) {
        json_decref(b);
        return NULL;
    }
    return b;
}

/* What PodGroup @g counts against maxPodBytesPerTenant, as a pod counts its Pod object's JSON
 * text: the length of group_object() as compact JSON, so its name, labels, annotations and spec
 * all count. Return: bytes (> 0); -ENOMEM. */
static int64_t group_bytes(const struct gsd_group *g)
{
    json_t *meta = json_loads(g->meta ? g->meta : "{}", 0, NULL);
    json_t *b = group_object(g, meta);
    char *text = b ? json_dumps(b, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    int64_t n = text ? (int64_t)strlen(text) : -ENOMEM;
    free(text);
    json_decref(b);
    json_decref(meta);
    return n;
}

static json_t *group_json(const struct gsd_group *g)
{
    /* phase Running once minMember run or ran to completion, as Volcano counts them (a member
     * allocated, its cards held but not bound by kube-scheduler, does not run yet); the queue
     * its members run in, `default` where it names none, as Volcano's admission writes it in */
    int32_t running = g->running - g->allocated;
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:i, s:o, s:o, s:s, s:i, s:i, s:i, s:i, s:i, s:o}", "namespace",
        g->spec.ns, "name", g->spec.name, "tenant", g->tenant, "minMember", g->spec.min_member,
        "queue", json_string(gs_podgroup_queue(&g->spec)), "priorityClassName",
        name_or_null(g->spec.priority_class), "phase",
        running + g->succeeded < g->spec.min_member ? "Pending" : "Running", "members", g->members,
        "running", running, "allocated", g->allocated, "pending", g->members - g->running,
        "succeeded", g->succeeded, "creationTimestamp", gsd_time_json(g->created_us));
    json_t *m = json_loads(g->meta ? g->meta : "{}", 0, NULL), *mr = gsd_group_min_json(g);
    if (o && mr && json_object_size(mr))
        json_object_set(o, "minResources", mr);
    json_decref(mr);
    if (o && g->spec.ntasks > 0)
        json_object_set_new(o, "minTaskMember", gsd_group_tasks_json(&g->spec));
    for (int i = 0; o && i < 2; i++) {
        json_t *v = json_object_get(m, i ? "annotations" : "labels");
        json_object_set_new(o, i ? "annotations" : "labels", v ? json_incref(v) : json_object());
    }
    json_decref(m);
    return o;
}

static int bad(struct gsd_ferr *e, const char *field, const char *msg)
{
    e->status = 400;
    snprintf(e->field, sizeof(e->field), "%s", field);
    snprintf(e->msg, sizeof(e->msg), "%.100s: %.400s", field, msg); /* both fit GS_DIAG_MSG_MAX */
    return -EINVAL;
}

/* An optional DNS-subdomain field into @out of @size bytes (GSD_NAME_MAX or GSD_OBJ_MAX). */
static int opt_name(const json_t *o, const char *key, const char *field, char *out, size_t size,
                    struct gsd_ferr *e)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v) || !gsd_subdomain_ok(json_string_value(v)) ||
        json_string_length(v) >= size)
        return bad(e, field,
                   size == GSD_OBJ_MAX
                       ? "expected a DNS name of at most 253 bytes (a-z, 0-9, '-', '.')"
                       : "expected a DNS name of at most 63 bytes (a-z, 0-9, '-', '.')");
    memcpy(out, json_string_value(v), json_string_length(v) + 1);
    return 0;
}

/* The PodGroup spec's fields: the first five applied, the rest Volcano's, known but refused:
 * a PodGroup taken with a field gpuschedd does not apply would promise what it does not do. */
static const char *const spec_keys[] = {"minMember",    "queue",         "priorityClassName",
                                        "minResources", "minTaskMember", "networkTopology"};
#define SPEC_APPLIED 5
#define NKEYS(a)     (sizeof(a) / sizeof((a)[0]))

/* Every key of object @o (at @where: "", "metadata." or "spec.") is one of @keys (@n), and
 * those from @keys[@applied] on are null (absent): they are known, but not applied. Return: 0;
 * -EINVAL with @e naming the first that is not, rather than taking it and ignoring it. */
static int keys_known(const json_t *o, const char *where, const char *const *keys, size_t n,
                      size_t applied, struct gsd_ferr *e)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        size_t i = 0;
        while (i < n && strcmp(k, keys[i]))
            i++;
        char field[96];
        snprintf(field, sizeof(field), "%s%.80s", where, k);
        if (i == n) {
            char msg[160], near[96];
            snprintf(msg, sizeof(msg), "no such PodGroup field%s: refused rather than ignored",
                     gs__hint(k, keys, (int)n, near, sizeof(near)));
            return bad(e, field, msg);
        }
        if (i >= applied && !json_is_null(v))
            return bad(e, field,
                       "not applied by gpuschedd (minMember, queue, priorityClassName, "
                       "minResources and minTaskMember are): refused rather than ignored");
    }
    return 0;
}

/* @md's labels and annotations, checked as a pod's are, into @g->meta (malloc'd). */
static int group_meta(const json_t *md, struct gsd_group *g, struct gsd_ferr *e)
{
    json_t *l = NULL, *a = NULL;
    int rc = gsd_string_map(json_object_get(md, "labels"), "metadata.labels", &l, e);
    if (!rc)
        rc = gsd_string_map(json_object_get(md, "annotations"), "metadata.annotations", &a, e);
    json_t *m = rc ? NULL : json_pack("{s:o, s:o}", "labels", l, "annotations", a);
    if (rc) {
        json_decref(l);
        json_decref(a);
        return rc;
    }
    g->meta = m ? json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(m);
    if (!g->meta) {
        e->status = 500;
        snprintf(e->field, sizeof(e->field), "%s", "");
        snprintf(e->msg, sizeof(e->msg), "out of memory");
        return -ENOMEM;
    }
    if (strlen(g->meta) > GSD_META_MAX)
        return bad(e, "metadata.annotations",
                   "labels and annotations together exceed 1 MiB as JSON");
    return 0;
}

/* spec.minResources (absent or null: none), read by the scenario's PodGroup reader. */
static int min_resources(const json_t *v, struct gsd_group *g, struct gsd_ferr *e)
{
    struct gs_diag d;
    char at[64], field[96];
    if (!v || json_is_null(v))
        return 0;
    gs_diag_init(&d);
    d.warn = gsd_ferr_warning; /* ephemeral-storage: taken without effect, and said */
    d.warn_ud = e;
    int rc = gs_podgroup_min_resources_json(v, &g->spec, at, sizeof(at), &d);
    snprintf(field, sizeof(field), "spec.minResources%s%s", at[0] ? "." : "", at);
    if (rc == -ENOMEM) {
        e->status = 500;
        snprintf(e->field, sizeof(e->field), "%s", "");
        snprintf(e->msg, sizeof(e->msg), "out of memory");
        return rc;
    }
    if (rc) {
        e->status = 400;
        snprintf(e->field, sizeof(e->field), "%s", field);
        gsd_field_msg(e, d.msg);
        return -EINVAL;
    }
    return 0;
}

json_t *gsd_group_tasks_json(const struct gs_podgroup_spec *g)
{
    json_t *o = json_object();
    for (int32_t i = 0; o && i < g->ntasks; i++)
        if (json_object_set_new(o, g->tasks[i].name, json_integer(g->tasks[i].min))) {
            json_decref(o);
            return NULL;
        }
    return o;
}

int gsd_group_tasks_read(const json_t *v, struct gs_podgroup_spec *g, struct gsd_ferr *e)
{
    const char *k;
    const json_t *n;
    char field[128], why[160];
    g->ntasks = 0;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_object(v))
        return bad(e, "spec.minTaskMember", "expected an object of task name: members");
    json_object_foreach((json_t *)v, k, n)
    {
        snprintf(field, sizeof(field), "spec.minTaskMember.%.64s", k);
        if (!json_is_integer(n))
            return bad(e, field, "expected a whole number of members");
        if (gs_podgroup_task_add(g, k, json_integer_value(n), why, sizeof(why)))
            return bad(e, field, why);
    }
    return 0;
}

/* What a PodGroup object holds besides its spec (what an API server writes itself is refused
 * first, by gsd_create_fields_ok(), saying so). */
static const char *const top_keys[] = {"apiVersion", "kind", "metadata", "spec"};
static const char *const meta_keys[] = {"name", "namespace", "labels", "annotations"};

/* A Volcano PodGroup object; metadata.namespace may be absent ("" then). */
static int parse_group(const json_t *b, struct gsd_group *g, struct gsd_ferr *e)
{
    const json_t *api = json_object_get(b, "apiVersion"), *kind = json_object_get(b, "kind");
    const json_t *md = json_object_get(b, "metadata"), *spec = json_object_get(b, "spec");
    if (!json_is_object(b))
        return bad(e, "", "the body must be a PodGroup object");
    if (api &&
        (!json_is_string(api) || strcmp(json_string_value(api), "scheduling.volcano.sh/v1beta1")))
        return bad(e, "apiVersion", "expected scheduling.volcano.sh/v1beta1");
    if (kind && (!json_is_string(kind) || strcmp(json_string_value(kind), "PodGroup")))
        return bad(e, "kind", "expected PodGroup");
    /* a misspelt key first ("metdata"): said as such, not as the one it stands for missing */
    if (gsd_create_fields_ok(b, e) ||
        keys_known(b, "", top_keys, NKEYS(top_keys), NKEYS(top_keys), e))
        return -EINVAL;
    if (!json_is_object(md))
        return bad(e, "metadata", "expected an object");
    if (keys_known(md, "metadata.", meta_keys, NKEYS(meta_keys), NKEYS(meta_keys), e))
        return -EINVAL;
    if (gsd_typed_string(md, "name", "metadata.", e) ||
        gsd_typed_string(md, "namespace", "metadata.", e))
        return -EINVAL;
    if (!json_is_string(json_object_get(md, "name")))
        return bad(e, "metadata.name", "required: a DNS name of at most 253 bytes");
    int rc = opt_name(md, "name", "metadata.name", g->spec.name, sizeof(g->spec.name), e);
    const json_t *ns = json_object_get(md, "namespace");
    if (!rc && ns && !json_is_null(ns) &&
        (!json_is_string(ns) || !gsd_name_ok(json_string_value(ns))))
        return bad(e, "metadata.namespace", "expected a DNS label (a-z, 0-9, '-', 1..63)");
    if (!rc && ns && !json_is_null(ns))
        memcpy(g->spec.ns, json_string_value(ns), json_string_length(ns) + 1);
    if (!rc && (rc = group_meta(md, g, e)))
        return rc;
    if (!rc && !json_is_object(spec))
        return bad(e, "spec", "expected an object");
    if (!rc && (rc = keys_known(spec, "spec.", spec_keys, NKEYS(spec_keys), SPEC_APPLIED, e)))
        return rc;
    if (!rc && (gsd_typed_string(spec, "queue", "spec.", e) ||
                gsd_typed_string(spec, "priorityClassName", "spec.", e)))
        return -EINVAL;
    const json_t *min = rc ? NULL : json_object_get(spec, "minMember");
    if (!rc && (!json_is_integer(min) || json_integer_value(min) < 1 ||
                json_integer_value(min) > GSD_GANG_MAX))
        return bad(e, "spec.minMember", "required: a whole number in 1..10000");
    if (!rc) {
        g->spec.min_member = (int32_t)json_integer_value(min);
        rc = opt_name(spec, "queue", "spec.queue", g->spec.queue, sizeof(g->spec.queue), e);
    }
    if (!rc)
        rc = opt_name(spec, "priorityClassName", "spec.priorityClassName", g->spec.priority_class,
                      sizeof(g->spec.priority_class), e);
    if (!rc)
        rc = gsd_group_tasks_read(json_object_get(spec, "minTaskMember"), &g->spec, e);
    return rc ? rc : min_resources(json_object_get(spec, "minResources"), g, e);
}

/* A stored PodGroup (@g), read again as a request is: a row the API would refuse (the store
 * damaged or edited by hand: a minMember of 0, minResources out of range, labels that are not
 * JSON) stops the restore, naming it, rather than reaching the scheduler. Return: 0; -EINVAL
 * or -ENOMEM with @d saying why. */
static int stored_ok(const struct gsd_group *g, struct gs_diag *d)
{
    struct gsd_group back = {0};
    struct gsd_ferr e = {.stored = 1};
    json_t *meta = json_loads(g->meta ? g->meta : "{}", JSON_REJECT_DUPLICATES, NULL);
    json_t *b = group_object(g, meta);
    int rc = b ? 0 : -ENOMEM;
    if (!rc && !json_is_object(meta))
        rc = bad(&e, "metadata", "its labels and annotations are not a JSON object");
    if (!rc && g->succeeded < 0) /* the store's reader's mark of a value out of range */
        rc = bad(&e, "status.succeeded", "not a count of members in 0..1000000000");
    if (!rc && g->kube > 1) /* the store's reader's mark of a value neither 0 nor 1 */
        rc = bad(&e, "kube", "not 0 or 1 (whether the API server holds it)");
    if (!rc && g->spec.ntasks < 0) /* the store's reader's mark of text it could not take */
        rc = bad(&e, "spec.minTaskMember", "not a JSON object of task name: members");
    if (!rc)
        rc = parse_group(b, &back, &e);
    free(back.meta);
    json_decref(meta);
    json_decref(b);
    if (rc == -ENOMEM)
        return gs_diag_error_code(d, rc, "gpusched.db: out of memory");
    if (!rc && e.warning[0]) {
        char key[GSD_KEY_MAX];
        snprintf(key, sizeof(key), "%s/%s", g->spec.ns, g->spec.name);
        gsd_log("warn", "stored podgroup", "podgroup", key, "warning", e.warning, NULL);
    }
    return rc ? gs_diag_error(d, "gpusched.db: the stored PodGroup %s/%s: %s", g->spec.ns,
                              g->spec.name, e.msg)
              : 0;
}

/* May @viewer (NULL: the admin) use namespace @ns? Writes 403 when not. */
static int may_use(const struct gsd_state *st, struct gsd_req *r, const struct gsd_tenant *viewer,
                   const char *ns)
{
    if (!viewer || gsd_tenant_of_ns(st->cfg, ns) == viewer)
        return 1;
    gsd_reply_error(r, 403, "metadata.namespace", "namespace %s does not belong to tenant %s", ns,
                    viewer->name);
    return 0;
}

/* Do @a and @b hold the same minTaskMember, whatever the order its entries came in? */
static int tasks_same(const struct gs_podgroup_spec *a, const struct gs_podgroup_spec *b)
{
    if (a->ntasks != b->ntasks)
        return 0;
    for (int32_t i = 0; i < a->ntasks; i++) {
        int32_t j = 0;
        while (j < b->ntasks && strcmp(a->tasks[i].name, b->tasks[j].name))
            j++;
        if (j == b->ntasks || a->tasks[i].min != b->tasks[j].min)
            return 0;
    }
    return 1;
}

/* The same spec. The same queue is the one its members run in (gs_podgroup_queue()): no
 * spec.queue and `queue: default`, which is how Volcano and GET show one posted without, are the
 * same. */
static int same_spec(const struct gsd_group *old, const struct gsd_group *g)
{
    return old->spec.min_member == g->spec.min_member &&
           old->spec.min_gpu_milli == g->spec.min_gpu_milli &&
           old->spec.min_cpu_milli == g->spec.min_cpu_milli &&
           old->spec.min_memory_mib == g->spec.min_memory_mib &&
           old->spec.min_pods == g->spec.min_pods && tasks_same(&old->spec, &g->spec) &&
           !strcmp(gs_podgroup_queue(&old->spec), gs_podgroup_queue(&g->spec)) &&
           !strcmp(old->spec.priority_class, g->spec.priority_class);
}

/* The same spec, labels and annotations. */
static int same_group(const struct gsd_group *old, const struct gsd_group *g)
{
    return same_spec(old, g) && !strcmp(old->meta, g->meta ? g->meta : "{}");
}

/* A PodGroup of that name is held: the same spec sent again (a manifest applied twice, an answer
 * lost on the way) gets it back, 200, as a pod does; another spec is a 409. */
static void post_group_again(struct gsd_req *r, const struct gsd_group *old,
                             const struct gsd_group *g)
{
    int spec = same_spec(old, g);
    if (spec && !strcmp(old->meta, g->meta))
        gsd_reply_json(r, 200, group_json(old));
    else
        gsd_reply_error(r, 409, "metadata.name",
                        "a PodGroup %s/%s with %s is held (the same sent again returns it; change "
                        "the name, or delete it first)",
                        g->spec.ns, g->spec.name,
                        spec ? "the same spec but other labels or annotations" : "another spec");
}

/* Its queue or PriorityClass, changed: the field that says so into @field, 1; 0 the same. */
static int admission_changed(const struct gs_podgroup_spec *a, const struct gs_podgroup_spec *b,
                             const char **field, const char **was, const char **now)
{
    int q = strcmp(gs_podgroup_queue(a), gs_podgroup_queue(b)) != 0;
    if (!q && !strcmp(a->priority_class, b->priority_class))
        return 0;
    *field = q ? "spec.queue" : "spec.priorityClassName";
    *was = q ? gs_podgroup_queue(a) : a->priority_class;
    *now = q ? gs_podgroup_queue(b) : b->priority_class;
    return 1;
}

/*
 * PodGroup @old, which the API server holds, as it now holds it (@g, PUT: kube_take()): its
 * minMember, minResources, minTaskMember, labels and annotations in place, as Volcano reads a
 * PodGroup edited (a Job scaled changes its minMember); the scheduler takes the spec as a
 * PodGroup made again (gs_tenancy_podgroup(): its members and those completed stay its own). Its
 * queue and PriorityClass are not changed: its members were admitted to them as each came, and
 * one gang in two queues is none; a 409 names the field.
 */
static void change_group(struct gsd_state *st, struct gsd_req *r, struct gsd_group *old,
                         const struct gsd_group *g)
{
    const char *field, *was, *now;
    if (admission_changed(&old->spec, &g->spec, &field, &was, &now)) {
        gsd_reply_error(r, 409, field,
                        "PodGroup %s/%s: %s changed from \"%s\" to \"%s\"; gpuschedd keeps \"%s\", "
                        "which its members were admitted to (delete the PodGroup and make it "
                        "again to change it)",
                        g->spec.ns, g->spec.name, field, was, now, was);
        return;
    }
    int64_t bytes = group_bytes(g);
    char over[GS_DIAG_MSG_MAX], *meta = strdup(g->meta ? g->meta : "{}");
    if (bytes < 0 || !meta) {
        free(meta);
        gsd_reply_error(r, 500, "", "out of memory");
        return;
    }
    if (old->tenant[0] &&
        gsd_tenant_bytes_over(st, old->tenant, bytes - old->bytes, over, sizeof(over))) {
        free(meta);
        gsd_reply_error(r, 403, "", "%s", over);
        return;
    }
    int64_t *held = old->tenant[0] ? gsd_tenant_bytes(st, old->tenant, 0) : NULL;
    if (held)
        *held += bytes - old->bytes;
    old->bytes = bytes;
    free(old->meta);
    old->meta = meta;
    old->spec = g->spec;
    if (gsd_store_group_put(st->store, old)) {
        st->failed = 1;
        gsd_reply_error(r, 503, "", "the store failed; the daemon restarts from its last commit");
        return;
    }
    if (gs_tenancy_podgroup(st->sched.tn, &old->spec) < 0) {
        st->failed = 1; /* out of memory: the store has it, the next start will */
        gsd_reply_error(r, 500, "", "out of memory");
        return;
    }
    for (struct gsd_pod *p = st->head; p; p = p->next)
        if (p->grp == old)
            gsd_sched_sync(st, p);
    /* a lower minMember may make a short gang whole: its held members are told at once, and its
     * hold ends */
    st->nudge_due = st->gangs_check = 1;
    gsd_snap_touch_all(st);
    char key[GSD_KEY_MAX], min[16];
    snprintf(key, sizeof(key), "%s/%s", old->spec.ns, old->spec.name);
    snprintf(min, sizeof(min), "%d", old->spec.min_member);
    gsd_log("info", "podgroup changed in the API server: applied", "podgroup", key, "minMember",
            min, NULL);
    gsd_reply_json(r, 200, group_json(old));
}

static void post_parsed(struct gsd_state *st, struct gsd_req *r, const struct gsd_tenant *viewer,
                        struct gsd_group *g)
{
    if (!g->spec.ns[0] && !viewer) {
        gsd_reply_error(r, 400, "metadata.namespace",
                        "metadata.namespace: required with the admin token");
        return;
    }
    if (!g->spec.ns[0])
        memcpy(g->spec.ns, viewer->ns[0], sizeof(g->spec.ns));
    if (!may_use(st, r, viewer, g->spec.ns))
        return;
    struct gsd_group *old = gsd_group_find(st, g->spec.ns, g->spec.name);
    if (old && !strcmp(r->method, "PUT") && old->kube && !same_group(old, g))
        change_group(st, r, old, g);
    else if (old)
        post_group_again(r, old, g);
    if (old)
        return;
    /* taking a config file's over would reset its gang, its completed members too */
    if (gsd_group_of_files(st->cfg, g->spec.ns, g->spec.name)) {
        gsd_reply_error(r, 409, "metadata.name",
                        "PodGroup %s/%s is defined by the daemon's config files", g->spec.ns,
                        g->spec.name);
        return;
    }
    if (!gsd_ns_owned(st, g->spec.ns, r) || !gsd_queue_known(st, g->spec.queue, "spec.queue", r) ||
        !gsd_priority_class_known(st, g->spec.priority_class, "spec.priorityClassName", !viewer, r))
        return;
    if (st->ngroups >= GSD_GROUPS_MAX) {
        gsd_reply_error(r, 507, "", "the daemon holds %d PodGroups; delete some first",
                        GSD_GROUPS_MAX);
        return;
    }
    const struct gsd_tenant *owner = gsd_tenant_of_ns(st->cfg, g->spec.ns);
    snprintf(g->tenant, sizeof(g->tenant), "%s", owner ? owner->name : "");
    size_t held = owner ? groups_of(st, owner->name) : 0;
    if (owner && held >= (size_t)st->cfg->max_podgroups_per_tenant) {
        gsd_reply_error(r, 403, "",
                        "tenant %s holds %zu PodGroups and this one is one more: past the "
                        "daemon's maxPodGroupsPerTenant of %lld; delete some first",
                        owner->name, held, (long long)st->cfg->max_podgroups_per_tenant);
        return;
    }
    char over[GS_DIAG_MSG_MAX];
    if ((g->bytes = group_bytes(g)) < 0) {
        gsd_reply_error(r, 500, "", "out of memory");
        return;
    }
    if (owner && gsd_tenant_bytes_over(st, owner->name, g->bytes, over, sizeof(over))) {
        gsd_reply_error(r, 403, "", "%s", over);
        return;
    }
    g->created_us = gsd_now_us();
    struct gsd_group *k = keep(st, g);
    if (!k) {
        gsd_reply_error(r, 500, "", "out of memory");
        return;
    }
    if (gsd_store_group_put(st->store, k)) {
        st->failed = 1;
        gsd_reply_error(r, 503, "", "the store failed; the daemon restarts from its last commit");
        return;
    }
    /* made anew: none of its members has completed, whatever one of that name did before */
    if (gs_tenancy_podgroup(st->sched.tn, &k->spec) < 0 ||
        gs_tenancy_podgroup_succeeded(st->sched.tn, k->spec.ns, k->spec.name, 0) < 0) {
        st->failed = 1; /* out of memory: the store has it, the next start will */
        gsd_reply_error(r, 500, "", "out of memory");
        return;
    }
    for (struct gsd_pod *p = st->head; p; p = p->next) /* pods that named it before */
        if (!p->grp && !strcmp(p->spec.ns, k->spec.ns) && !strcmp(p->spec.group, k->spec.name)) {
            p->grp = k;
            k->members++;
            k->running += p->state == GSD_RUNNING;
            k->allocated += gsd_pod_allocated(p);
            gsd_sched_sync(st, p);
        }
    gsd_snap_touch_all(st); /* its queue may be theirs now */
    char key[GSD_KEY_MAX], min[16];
    snprintf(key, sizeof(key), "%s/%s", k->spec.ns, k->spec.name);
    snprintf(min, sizeof(min), "%d", k->spec.min_member);
    gsd_log("info", "podgroup created", "podgroup", key, "tenant", k->tenant, "minMember", min,
            NULL);
    gsd_reply_json(r, 201, group_json(k));
}

static void post_group(struct gsd_state *st, struct gsd_req *r, const struct gsd_tenant *viewer)
{
    struct gsd_group g = {0};
    struct gsd_ferr e = {0};
    json_t *body;
    if (gsd_body_json(r, &body))
        return;
    e.warning[0] = '\0';
    int rc = parse_group(body, &g, &e);
    json_decref(body);
    if (rc) {
        gsd_reply_error(r, e.status, e.field, "%s", e.msg);
    } else {
        gsd_reply_warning(r, e.warning); /* an error answer drops it */
        post_parsed(st, r, viewer, &g);
    }
    free(g.meta); /* kept by a copy */
}

static void drop_group(struct gsd_state *st, struct gsd_req *r, struct gsd_group *g)
{
    if (g->members) {
        gsd_reply_error(r, 409, "", "PodGroup %s/%s has %d pod%s; cancel them first", g->spec.ns,
                        g->spec.name, g->members, g->members == 1 ? "" : "s");
        return;
    }
    if (gs_tenancy_podgroup_drop(st->sched.tn, g->spec.ns, g->spec.name) < 0) {
        gsd_reply_error(r, 409, "", "PodGroup %s/%s still has pods in the scheduler", g->spec.ns,
                        g->spec.name);
        return;
    }
    if (gsd_store_group_delete(st->store, g)) {
        st->failed = 1;
        gsd_reply_error(r, 503, "", "the store failed");
        return;
    }
    size_t i = 0;
    while (st->groups[i] != g)
        i++;
    memmove(&st->groups[i], &st->groups[i + 1], (st->ngroups - i - 1) * sizeof(*st->groups));
    st->ngroups--;
    int64_t *bytes = gsd_tenant_bytes(st, g->tenant, 0);
    if (bytes)
        *bytes -= g->bytes;
    gsd_reply_json(r, 200,
                   json_pack("{s:s, s:s, s:s}", "namespace", g->spec.ns, "name", g->spec.name,
                             "state", "deleted"));
    free(g->meta);
    free(g);
}

static void one_group(struct gsd_state *st, struct gsd_req *r, const struct gsd_tenant *viewer,
                      const char *rest)
{
    char ns[GSD_NAME_MAX] = "", name[GSD_OBJ_MAX] = "";
    const char *slash = strchr(rest, '/');
    size_t nl = slash ? (size_t)(slash - rest) : 0;
    if (!slash || nl >= sizeof(ns) || strlen(slash + 1) >= sizeof(name) || strchr(slash + 1, '/')) {
        gsd_reply_error(r, 404, "", "no such PodGroup: the path is /v1/podgroups/NAMESPACE/NAME");
        return;
    }
    memcpy(ns, rest, nl);
    strcpy(name, slash + 1);
    if (!may_use(st, r, viewer, ns))
        return;
    struct gsd_group *g = gsd_group_find(st, ns, name);
    if (!g && gsd_group_of_files(st->cfg, ns, name)) /* not shown here: say so, not "not found" */
        gsd_reply_error(r, 404, "",
                        "PodGroup %s/%s is defined by the daemon's config files, which the API "
                        "does not show; GET /v1/pods/NAMESPACE/NAME of a member says how it stands",
                        ns, name);
    else if (!g)
        gsd_reply_error(r, 404, "", "PodGroup %s/%s not found", ns, name);
    else if (!strcmp(r->method, "GET"))
        gsd_reply_json(r, 200, group_json(g));
    else if (!strcmp(r->method, "DELETE"))
        drop_group(st, r, g);
    else
        gsd_reply_405(r, "GET, DELETE", NULL);
}

/* The viewer's PodGroups in pages, as GET /v1/pods gives pods: ?limit (500 unless given, at most
 * GSD_LIST_MAX) from ?continue, the seq of the first not yet given; built on the scheduler
 * thread, so each answer is bounded whatever a tenant holds. */
#define GROUPS_PAGE_BYTES (4 << 20) /* of labels and annotations in one page, past its first */

static void list_groups(struct gsd_state *st, struct gsd_req *r, const struct gsd_tenant *viewer)
{
    int64_t limit, from, count = 0;
    if (gsd_page_args(r, GSD_PAGE_PODGROUPS, &limit, &from))
        return;
    size_t lo = 0, hi = st->ngroups; /* the first of seq >= from */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->groups[mid]->seq < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* a page also ends past GROUPS_PAGE_BYTES of labels and annotations, as an API server may
     * answer fewer than limit items with a continue: the list is made on the scheduler thread */
    json_t *items = json_array();
    size_t bytes = 0;
    for (; lo < st->ngroups; lo++) {
        if (viewer && strcmp(st->groups[lo]->tenant, viewer->name))
            continue;
        if (count++ == limit || bytes > GROUPS_PAGE_BYTES)
            break;
        bytes += st->groups[lo]->meta ? strlen(st->groups[lo]->meta) : 0;
        json_array_append_new(items, group_json(st->groups[lo]));
    }
    char next[GSD_PAGE_TOKEN_MAX] = "";
    if (lo < st->ngroups)
        gsd_page_token(st->groups[lo]->seq, GSD_PAGE_PODGROUPS, next);
    gsd_reply_json(r, 200, json_pack("{s:o, s:s}", "items", items, "continue", next));
}

void gsd_podgroups_handle(struct gsd_state *st, struct gsd_req *r, const struct gsd_tenant *viewer,
                          const char *rest)
{
    if (rest[0] == '/') {
        one_group(st, r, viewer, rest + 1);
    } else if (rest[0]) {
        gsd_reply_error(r, 404, "", "no such endpoint: /v1/podgroups%.64s", rest);
    } else if (!strcmp(r->method, "POST")) {
        post_group(st, r, viewer);
    } else if (!strcmp(r->method, "GET")) {
        list_groups(st, r, viewer);
    } else {
        gsd_reply_405(r, "GET, POST", NULL);
    }
}

/* ---- PodGroups of the API server (gsd_kube_podgroups()) ---- */

/* a list of more than gpuschedd could hold is refused whole, not taken in part */
_Static_assert(GSD_KUBE_GROUPS_MAX == GSD_GROUPS_MAX, "a PodGroup list is bounded by the cap");

/* @obj as a request to create it: what the API server and Volcano's controller write themselves
 * set aside (gang.h), so that gsd_create_fields_ok(), which refuses them in a request, passes
 * what Kubernetes gave; every other field stays, to be read, or refused, as a POST's. Return:
 * its JSON text, keys sorted (malloc'd), NULL out of memory. */
static char *kube_body(const json_t *obj)
{
    static const char *const set_aside[] = {
        "uid",        "resourceVersion",   "generation",    "creationTimestamp",
        "selfLink",   "deletionTimestamp", "managedFields", "deletionGracePeriodSeconds",
        "finalizers", "ownerReferences",   "generateName"};
    json_t *b = json_deep_copy(obj);
    json_t *md = json_object_get(b, "metadata");
    for (size_t i = 0; md && i < NKEYS(set_aside); i++)
        json_object_del(md, set_aside[i]);
    json_object_del(b, "status");
    char *text = b ? json_dumps(b, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(b);
    return text;
}

/* One answer of the API path for PodGroup @key logged: @what, its field and message. */
static void kube_log(const char *level, const char *what, const char *key, const char *resp)
{
    json_t *j = resp ? json_loads(resp, 0, NULL) : NULL;
    const char *field = json_string_value(json_object_get(j, "field"));
    const char *msg = json_string_value(json_object_get(j, "error"));
    gsd_log(level, what, "podgroup", key, "field", field ? field : "", "error",
            msg ? msg : "out of memory", NULL);
    json_decref(j);
}

/* PodGroup @obj (@key "NS/NAME") taken as POST /v1/podgroups takes it. One refused as malformed
 * (400) is not tried again until it changes: as it is, it always will be. One refused for the
 * state it met (403 past a tenant's cap, 409 another spec held under its name) is tried at every
 * list and event, as a client retries a POST once room is made; each refusal is logged once,
 * until the PodGroup or the refusal's words change. */
static void kube_take(struct gsd_state *st, const json_t *obj, const char *key)
{
    char *text = kube_body(obj), mark[64];
    unsigned long long h = gsd_log_hash(text), was_h = 0, was_r = 0;
    int was_status = 0;
    const char *was = json_string_value(json_object_get(st->kube_refused, key));
    if (was && sscanf(was, "%d %llx %llx", &was_status, &was_h, &was_r) != 3)
        was_status = 0;
    if (!text || (was_status == 400 && was_h == h)) {
        if (!text)
            gsd_log("error", "out of memory: a PodGroup change is not taken", "podgroup", key,
                    NULL);
        free(text);
        return;
    }
    /* PUT: one held already takes what the API server now says (change_group()) */
    struct gsd_req r = {.kind = GSD_REQ_HTTP, .method = "PUT", .path = "/v1/podgroups"};
    r.body = text;
    r.len = strlen(text);
    post_group(st, &r, NULL); /* the admin's: the API server's RBAC let it be written */
    const char *slash = strchr(key, '/');
    char ns[GSD_NAME_MAX];
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
    struct gsd_group *g = gsd_group_find(st, ns, slash + 1);
    if ((r.status == 200 || r.status == 201) && g) {
        if (!g->kube && (g->kube = 1) && gsd_store_group_put(st->store, g))
            st->failed = 1; /* stored: a restart's first list deletes it if it went meanwhile */
        g->kube_gone = 0;
        json_object_del(st->kube_refused, key);
        if (r.warning && r.status == 201)
            gsd_log("warn", "PodGroup of the API server taken with a warning", "podgroup", key,
                    "warning", r.warning, NULL);
    } else if (r.status >= 400 && r.status < 500) {
        unsigned long long hr = gsd_log_hash(r.resp);
        if (was_status != r.status || was_h != h || was_r != hr)
            kube_log("warn",
                     r.status == 400 ? "PodGroup of the API server refused: tried again once it "
                                       "changes"
                                     : "PodGroup of the API server refused: tried again at each "
                                       "list",
                     key, r.resp);
        if (!st->kube_refused)
            st->kube_refused = json_object();
        snprintf(mark, sizeof(mark), "%d %llx %llx", r.status, h, hr);
        json_object_set_new(st->kube_refused, key, json_string(mark));
    } else if (r.status != 200 && r.status != 201) {
        kube_log("error", "PodGroup of the API server not taken", key, r.resp);
    }
    free(r.resp);
    free(r.warning);
    free(text);
}

/* @g, which the API server no longer holds, deleted as DELETE /v1/podgroups/NS/NAME does: kept,
 * said once, while pods name it (gsd_kube_podgroups_settle() tries it again). */
static void kube_drop(struct gsd_state *st, struct gsd_group *g)
{
    char key[GSD_KEY_MAX];
    struct gsd_req r = {.kind = GSD_REQ_HTTP, .method = "DELETE"};
    snprintf(key, sizeof(key), "%s/%s", g->spec.ns, g->spec.name);
    int said = g->kube_gone;
    drop_group(st, &r, g); /* frees g when deleted */
    if (r.status == 200)
        gsd_log("info", "podgroup deleted in the API server: deleted", "podgroup", key, NULL);
    else if (r.status == 409 && !said)
        kube_log("info", "podgroup deleted in the API server: kept while pods name it", key,
                 r.resp);
    if (r.status == 409)
        g->kube_gone = st->kube_gone = 1;
    free(r.resp);
}

/* The key "NS/NAME" of PodGroup object @obj into @key. Return: 0; -1 it names none that fits. */
static int kube_key(const json_t *obj, char key[GSD_KEY_MAX])
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    return ns && name && *ns && *name && !strchr(ns, '/') &&
                   (size_t)snprintf(key, GSD_KEY_MAX, "%s/%s", ns, name) < GSD_KEY_MAX
               ? 0
               : -1;
}

/* After a list (@seen: the keys it held): the API server's PodGroups it lacks deleted, and what
 * was refused of those forgotten. */
static void kube_unlisted(struct gsd_state *st, const json_t *seen)
{
    char key[GSD_KEY_MAX];
    for (size_t i = st->ngroups; i-- > 0;) {
        struct gsd_group *g = st->groups[i];
        snprintf(key, sizeof(key), "%s/%s", g->spec.ns, g->spec.name);
        if (g->kube && !json_object_get(seen, key))
            kube_drop(st, g);
    }
    const char *k;
    json_t *v, *tmp;
    json_object_foreach_safe(st->kube_refused, tmp, k, v)
    {
        if (!json_object_get(seen, k))
            json_object_del(st->kube_refused, k);
    }
}

void gsd_kube_podgroups(struct gsd_state *st, const json_t *items, int listed, int deleted)
{
    json_t *seen = listed ? json_object() : NULL, *obj;
    char key[GSD_KEY_MAX];
    size_t i;
    json_array_foreach(items, i, obj)
    {
        if (kube_key(obj, key)) { /* kube.c took only PodGroups with a namespace and a name */
            gsd_log("error",
                    "PodGroup of the API server not taken: its namespace or name is none "
                    "Kubernetes allows",
                    NULL);
            continue;
        }
        if (seen)
            json_object_set_new(seen, key, json_true());
        if (!deleted) {
            kube_take(st, obj, key);
            continue;
        }
        json_object_del(st->kube_refused, key);
        char *slash = strchr(key, '/');
        *slash = '\0';
        struct gsd_group *g = gsd_group_find(st, key, slash + 1);
        if (g && g->kube) /* one posted under that name with another spec is not this one */
            kube_drop(st, g);
    }
    if (listed && seen)
        kube_unlisted(st, seen);
    else if (listed)
        gsd_log("error", "out of memory: PodGroups a list lacks are not deleted", NULL);
    json_decref(seen);
    gsd_kube_podgroups_settle(st);
}

void gsd_kube_podgroups_settle(struct gsd_state *st)
{
    if (!st->kube_gone)
        return;
    st->kube_gone = 0; /* set again by each kube_drop() that keeps one */
    for (size_t i = st->ngroups; i-- > 0;) {
        struct gsd_group *g = st->groups[i];
        if (g->kube_gone && !g->members)
            kube_drop(st, g);
        else if (g->kube_gone)
            st->kube_gone = 1;
    }
}

void gsd_kube_podgroups_forget(struct gsd_state *st)
{
    json_object_clear(st->kube_refused);
}
