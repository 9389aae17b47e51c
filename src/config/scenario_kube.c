/*
 * The Kubernetes and Volcano kinds of a scenario: Volcano Queue and PodGroup (seed 004 §2.1),
 * PriorityClass, namespace ResourceQuota and LimitRange (seed 004 §3.1), VirtualGPUClass (seed 000
 * §2.3), and the Simulation document.
 *
 * ResourceQuota, as Kubernetes enforces it: for an extended resource only `requests.<name>` and
 * the bare name are quota items, and they are the same quota (both given: both are enforced, so
 * the tighter applies, with a warning); `limits.nvidia.com/gpu` is not enforced for extended
 * resources and is reported as ignored. cpu and memory work the same way for their requests.
 */
#include "scenario_impl.h"

#include "gpusched/diag.h"
#include "gpusched/fleet.h"
#include "gpusched/grow.h"
#include "gpusched/quantity.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define GPU_MILLI_MAX (INT64_C(1000000) * 1000)

enum { O_API, O_KIND, O_META, O_SPEC, O_STATUS };
static const char *const obj_keys[] = {"apiVersion", "kind", "metadata", "spec", "status"};

/* read_obj() - the common shape: check the top keys, read metadata, give spec (or NULL). */
static int read_obj(struct gs__yctx *c, yaml_node_t *root, const char *kind, bool need_name,
                    size_t name_size, struct gs__scn_meta *m, yaml_node_t **spec)
{
    yaml_node_t *f[5] = {NULL};
    int rc = gs__yaml_each_field(c, root, obj_keys, 5, kind, gs__scn_keep, f);
    if (!rc)
        rc = gs__scn_meta(c, root, f[O_META], need_name, name_size, m);
    *spec = f[O_SPEC];
    return rc;
}

/* dup_error() - "a second KIND NAME (the first is at ...)". */
static int dup_error(struct gs__yctx *c, yaml_node_t *at, const char *kind, const char *name,
                     const struct gs_scn_src *first)
{
    char where[160];
    return gs__yaml_err(c, at, "a second %s %s (the first is at %s)", kind, name,
                        gs__scn_where(first, where, sizeof(where)));
}

/* Resources of Queue capability, PodGroup minResources and LimitRange lists: GPU, CPU, memory
 * and (@pods_ok) a pod count; GS_UNSET = absent. */
struct gcm {
    int64_t gpu_milli, cpu_milli, memory_mib, pods;
    const char *where;
    int pods_ok;
};

static int gcm_pair(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct gcm *g = arg;
    const char *name = gs__yaml_str(k);
    char what[128];
    gs__yaml_label(what, sizeof(what), "%s.%s", g->where, name);
    if (strcmp(name, "nvidia.com/gpu") == 0)
        return gs__scn_qty(c, v, what, 3, 0, 0, "milli-GPU", 0, GPU_MILLI_MAX, &g->gpu_milli);
    if (strcmp(name, "cpu") == 0)
        return gs__scn_qty(c, v, what, 3, 0, GS__Q_CEIL, "milli-CPU", 0, INT64_MAX / 4,
                           &g->cpu_milli);
    if (strcmp(name, "memory") == 0)
        return gs__scn_qty(c, v, what, 0, -20, GS__Q_CEIL, "MiB", 0, INT64_MAX / 4, &g->memory_mib);
    /* Volcano counts each pod as pods: 1 of its request (GetPodResourceRequest), so a queue's
     * capability and a PodGroup's minResources bound a pod count */
    if (strcmp(name, "pods") == 0 && g->pods_ok)
        return gs__scn_qty(c, v, what, 0, 0, 0, "pods", 0, INT64_MAX / 4, &g->pods);
    /* ephemeral-storage bounds nothing the scenario places; any other resource would bound pods
     * by a quantity that is not simulated (a LimitRange takes no pod count: the API server
     * refuses one) */
    /* Volcano's job controller fills minResources from the quota's view of its pods
     * (util.GetPodQuotaUsage): count/pods, requests.* and limits.* beside the plain names, which
     * alone its scheduler reads (NewResource takes no requests.-prefixed or count/ name) */
    if (!strcmp(g->where, "minResources") &&
        (!strcmp(name, "count/pods") || !strncmp(name, "requests.", 9) ||
         !strncmp(name, "limits.", 7)))
        return gs__scn_qty_unread(c, v, what);
    static const char *const known[] = {"nvidia.com/gpu", "cpu", "memory", "ephemeral-storage",
                                        "pods"};
    char hint[96];
    if (strcmp(name, "ephemeral-storage") != 0)
        return gs__yaml_err(
            c, k, "resource %s in %s is not interpreted%s: refused rather than ignored", name,
            g->where, gs__yaml_hint(k, known, g->pods_ok ? 5 : 4, hint, sizeof(hint)));
    int rc = gs__scn_qty_unread(c, v, what);
    if (!rc)
        gs__yaml_warn(c, k,
                      "%s: local ephemeral storage is taken without effect: gpusched neither "
                      "places nor limits by it",
                      what);
    return rc;
}

static int read_gcm(struct gs__yctx *c, yaml_node_t *n, const char *where, struct gcm *g)
{
    g->gpu_milli = g->cpu_milli = g->memory_mib = g->pods = GS_UNSET;
    g->where = where;
    g->pods_ok = !strcmp(where, "capability") || !strcmp(where, "minResources");
    return n ? gs__yaml_each_pair(c, n, where, gcm_pair, g) : 0;
}

/* --- Queue --- */

/* guarantee..affinity change what Volcano admits or where; extendClusters sends the queue's jobs
 * to other clusters (Volcano's QueueSpec: "the jobs in this Queue will be dispatched to these
 * clusters"), which one simulated cluster cannot do; type ("the type of queue") comes with no
 * rule to apply. None is modelled: each is refused rather than ignored. */
enum { Q_WEIGHT, Q_CAPABILITY, Q_RECLAIMABLE, Q_OVERCOMMIT, Q_REFUSED_FIRST };
static const char *const queue_keys[] = {
    "weight", "capability", "reclaimable", "overcommitRatio", "guarantee", "deserved",
    "parent", "priority",   "affinity",    "extendClusters",  "type"};

static int ratio_value(struct gs__yctx *c, yaml_node_t *v, struct gs_queue_spec *q)
{
    int64_t x;
    int rc =
        gs__scn_qty(c, v, "overcommitRatio", 3, 0, GS__Q_PLAIN, "thousandths", 1000, 100000, &x);
    if (!rc)
        q->overcommit_milli = (int32_t)x;
    return rc;
}

/* Volcano's form: a ratio per resource; only the GPU's matters here. */
static int ratio_pair(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    if (strcmp(gs__yaml_str(k), "nvidia.com/gpu") != 0)
        return gs__yaml_err(c, k,
                            "overcommitRatio of %s is not interpreted (only nvidia.com/gpu): "
                            "refused rather than ignored",
                            gs__yaml_str(k));
    return ratio_value(c, v, arg);
}

static int queue_fields(struct gs__yctx *c, yaml_node_t **f, struct gs_queue_spec *q)
{
    struct gcm g;
    int64_t w;
    int rc = 0;
    int first = -1; /* the one written first, as a reader of the file meets them */
    for (int i = Q_REFUSED_FIRST; i < GS__YAML_NKEYS(queue_keys); i++)
        if (f[i] && (first < 0 || f[i]->start_mark.index < f[first]->start_mark.index))
            first = i;
    if (first >= 0)
        return gs__yaml_err(c, f[first],
                            "Queue spec.%s is not interpreted: refused rather than ignored",
                            queue_keys[first]);
    if (f[Q_WEIGHT] && !(rc = gs__scn_int(c, f[Q_WEIGHT], "weight", 1, 1000000, &w)))
        q->weight = (int32_t)w;
    if (!rc)
        rc = read_gcm(c, f[Q_CAPABILITY], "capability", &g);
    q->cap_gpu_milli = g.gpu_milli;
    q->cap_cpu_milli = g.cpu_milli;
    q->cap_memory_mib = g.memory_mib;
    q->cap_pods = g.pods;
    if (!rc && f[Q_RECLAIMABLE])
        rc = gs__scn_bool(c, f[Q_RECLAIMABLE], "reclaimable", &q->reclaimable);
    if (!rc && f[Q_OVERCOMMIT] && f[Q_OVERCOMMIT]->type == YAML_MAPPING_NODE)
        rc = gs__yaml_each_pair(c, f[Q_OVERCOMMIT], "overcommitRatio", ratio_pair, q);
    else if (!rc && f[Q_OVERCOMMIT])
        rc = ratio_value(c, f[Q_OVERCOMMIT], q);
    return rc;
}

int gs__scn_queue(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root)
{
    struct gs__scn_meta m;
    yaml_node_t *spec, *f[GS__YAML_NKEYS(queue_keys)] = {NULL};
    struct gs_queue_spec q = {.weight = 1, .reclaimable = 1, .overcommit_milli = 1000};
    int rc = read_obj(c, root, "Queue", true, sizeof(q.name), &m, &spec);
    /* Volcano's Queue is cluster-scoped: kubectl applies it with its namespace dropped, so a
     * manifest giving one is taken as kubectl takes it, and said */
    if (!rc && m.ns && !gs__yaml_is_null(m.ns))
        gs__yaml_warn(c, m.ns,
                      "metadata.namespace: a Queue is cluster-scoped (no namespace holds it); "
                      "namespace \"%s\" is dropped, as kubectl drops it",
                      m.ns_s);
    if (!rc && spec)
        rc = gs__yaml_each_field(c, spec, queue_keys, GS__YAML_NKEYS(queue_keys), "Queue spec",
                                 gs__scn_keep, f);
    if (!rc)
        rc = queue_fields(c, f, &q);
    if (rc)
        return rc;
    /* Volcano refuses new PodGroups in a Queue not Open (vcctl queue operate --action close);
     * the scenario has no such state to keep, so it says what it runs instead */
    yaml_node_t *status = NULL, *state = NULL;
    if (!gs__yaml_map_get(c, root, "status", &status) && status &&
        !gs__yaml_map_get(c, status, "state", &state) && state && gs__yaml_str(state) &&
        strcmp(gs__yaml_str(state), "Open"))
        gs__yaml_warn(c, state,
                      "status.state %s: Volcano takes no new PodGroup in a Queue that is not "
                      "Open; the scenario runs Queue %s as Open (its state is not simulated)",
                      gs__yaml_str(state), m.name_s);
    memcpy(q.name, m.name_s, sizeof(q.name));
    return gs__scn_commit(c, L, root, m.name, GS__K_QUEUE, &q);
}

/* --- PodGroup --- */

enum { PG_MIN_MEMBER, PG_QUEUE, PG_PRIORITY_CLASS, PG_MIN_RESOURCES, PG_MIN_TASK_MEMBER };
static const char *const pg_keys[] = {"minMember",    "queue",         "priorityClassName",
                                      "minResources", "minTaskMember", "networkTopology"};

/* One entry of spec.minTaskMember, task name: members; checked as gpuschedd checks it. */
static int task_pair(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    char what[128], why[160];
    int64_t n;
    gs__yaml_label(what, sizeof(what), "minTaskMember.%s", gs__yaml_str(k));
    int rc = gs__scn_int(c, v, what, INT32_MIN, INT32_MAX, &n);
    if (!rc && gs_podgroup_task_add(arg, gs__yaml_str(k), n, why, sizeof(why)))
        rc = gs__yaml_err(c, n < 0 ? v : k, "PodGroup spec.minTaskMember: %s", why);
    return rc;
}

/* spec.minResources: the resource names and quantities of a Queue's capability. */
static int min_resources(struct gs__yctx *c, yaml_node_t *n, struct gs_podgroup_spec *g)
{
    struct gcm r;
    int rc = read_gcm(c, n, "minResources", &r);
    g->min_gpu_milli = r.gpu_milli == GS_UNSET ? 0 : r.gpu_milli;
    g->min_cpu_milli = r.cpu_milli == GS_UNSET ? 0 : r.cpu_milli;
    g->min_memory_mib = r.memory_mib == GS_UNSET ? 0 : r.memory_mib;
    g->min_pods = r.pods == GS_UNSET ? 0 : r.pods;
    return rc;
}

struct min_doc {
    struct gs_podgroup_spec *g;
    char *field;
    size_t fsize;
};

static int min_resources_doc(struct gs__yctx *c, yaml_node_t *root, void *arg)
{
    struct min_doc *m = arg;
    int rc = min_resources(c, root, m->g);
    if (rc && c->err_at)
        gs__yaml_path(c, c->err_at, m->field, m->fsize);
    return rc;
}

int gs_podgroup_min_resources_json(const struct json_t *v, struct gs_podgroup_spec *g, char *field,
                                   size_t fsize, struct gs_diag *d)
{
    struct gs__yctx proto = {.path = "body", .d = d};
    struct min_doc m = {g, field, fsize};
    field[0] = '\0';
    return gs__yaml_json_document(&proto, v, GS_SCN_MAX_DEPTH, GS_SCN_DOC_NODES_MAX,
                                  min_resources_doc, &m);
}

int gs__scn_podgroup(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root)
{
    struct gs__scn_meta m;
    yaml_node_t *spec, *f[GS__YAML_NKEYS(pg_keys)] = {NULL};
    struct gs_podgroup_spec g = {.min_member = 1};
    int64_t v;
    int rc = read_obj(c, root, "PodGroup", true, sizeof(g.name), &m, &spec);
    if (!rc && spec)
        rc = gs__yaml_each_field(c, spec, pg_keys, GS__YAML_NKEYS(pg_keys), "PodGroup spec",
                                 gs__scn_keep, f);
    for (size_t i = PG_MIN_TASK_MEMBER + 1; !rc && i < GS__YAML_NKEYS(pg_keys); i++)
        if (f[i]) /* Volcano's, applied by neither driver: gpuschedd refuses them too */
            rc = gs__yaml_err(c, f[i],
                              "PodGroup spec.%s is not applied: refused rather than ignored",
                              pg_keys[i]);
    if (!rc && f[PG_MIN_MEMBER] &&
        !(rc = gs__scn_int(c, f[PG_MIN_MEMBER], "minMember", 1, GS_SCN_PODS_MAX, &v)))
        g.min_member = (int32_t)v;
    if (!rc && f[PG_QUEUE])
        rc = gs__scn_name(c, f[PG_QUEUE], "queue", g.queue, sizeof(g.queue));
    if (!rc && f[PG_PRIORITY_CLASS])
        rc = gs__scn_name(c, f[PG_PRIORITY_CLASS], "priorityClassName", g.priority_class,
                          sizeof(g.priority_class));
    if (!rc && f[PG_MIN_RESOURCES])
        rc = min_resources(c, f[PG_MIN_RESOURCES], &g);
    if (!rc && f[PG_MIN_TASK_MEMBER])
        rc = gs__yaml_each_pair(c, f[PG_MIN_TASK_MEMBER], "minTaskMember", task_pair, &g);
    if (rc)
        return rc;
    memcpy(g.ns, m.ns_s, sizeof(g.ns));
    memcpy(g.name, m.name_s, sizeof(g.name));
    return gs__scn_commit(c, L, root, m.name, GS__K_PODGROUP, &g);
}

/* --- PriorityClass --- */

enum { PC_API, PC_KIND, PC_META, PC_VALUE, PC_DEFAULT, PC_PREEMPTION, PC_DESCRIPTION };
static const char *const pc_keys[] = {
    "apiVersion", "kind", "metadata", "value", "globalDefault", "preemptionPolicy", "description"};
static const char *const preemption[] = {"PreemptLowerPriority", "Never"};

/*
 * What Kubernetes' PriorityClass validation reserves (pkg/apis/scheduling: HighestUserDefinable
 * Priority 1000000000, SystemPriorityClassPrefix "system-"): a class of its own may not pass one
 * billion, and the "system-" names are the two built-in classes with their own values.
 */
static int pc_reserved(struct gs__yctx *c, yaml_node_t *root, yaml_node_t *val, const char *name,
                       int64_t v)
{
    const struct gs_priority_class_spec *b;
    for (size_t i = 0; (b = gs_priority_class_builtin(i)); i++)
        if (!strcmp(name, b->name))
            return v == b->value
                       ? 0
                       : gs__yaml_err(c, val, "PriorityClass %s is built in with value %lld", name,
                                      (long long)b->value);
    if (!strncmp(name, "system-", 7))
        return gs__yaml_err(c, root, "PriorityClass %s: names starting system- are reserved", name);
    if (v > GS_PRIORITY_USER_MAX)
        return gs__yaml_err(c, val,
                            "PriorityClass %s: value %lld is above %d, the highest a class of "
                            "one's own may have",
                            name, (long long)v, GS_PRIORITY_USER_MAX);
    return 0;
}

int gs__scn_priority_class(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root)
{
    struct gs__scn_meta m;
    yaml_node_t *f[GS__YAML_NKEYS(pc_keys)] = {NULL};
    struct gs_priority_class_spec p = {0};
    int64_t v;
    int pol = 0;
    int rc = gs__yaml_each_field(c, root, pc_keys, GS__YAML_NKEYS(pc_keys), "PriorityClass",
                                 gs__scn_keep, f);
    if (!rc)
        rc = gs__scn_meta(c, root, f[PC_META], true, sizeof(p.name), &m);
    if (!rc && !f[PC_VALUE])
        rc = gs__yaml_err(c, root, "PriorityClass %s has no value", m.name_s);
    if (!rc && !(rc = gs__scn_int(c, f[PC_VALUE], "value", INT32_MIN, INT32_MAX, &v)))
        p.value = (int32_t)v;
    if (!rc)
        rc = pc_reserved(c, root, f[PC_VALUE], m.name_s, v);
    if (!rc && f[PC_DEFAULT])
        rc = gs__scn_bool(c, f[PC_DEFAULT], "globalDefault", &p.global_default);
    if (!rc && f[PC_PREEMPTION] &&
        !(rc = gs__scn_enum(c, f[PC_PREEMPTION], "preemptionPolicy", preemption, 2, &pol)))
        p.never_preempt = pol == 1;
    if (!rc && f[PC_DESCRIPTION] && !gs__yaml_is_null(f[PC_DESCRIPTION]) &&
        !gs__yaml_text(f[PC_DESCRIPTION])) /* said to no one, but of the API server's type */
        rc = gs__yaml_text_error(c, f[PC_DESCRIPTION], "description");
    if (rc)
        return rc;
    memcpy(p.name, m.name_s, sizeof(p.name));
    for (size_t i = 0; p.global_default && i < L->s->policy.npriority_classes; i++)
        if (L->s->policy.priority_classes[i].global_default)
            return dup_error(c, f[PC_DEFAULT], "globalDefault PriorityClass", p.name,
                             &L->s->policy.priority_classes[i].src);
    return gs__scn_commit(c, L, root, m.name, GS__K_PRIORITY_CLASS, &p);
}

/* --- ResourceQuota --- */

enum { RQ_HARD, RQ_SCOPE_SELECTOR, RQ_SCOPES };
static const char *const rq_keys[] = {"hard", "scopeSelector", "scopes"};

/* Quota items Kubernetes has that bound no object a scenario holds: accepted silently. */
static const char *const rq_other[] = {"services",
                                       "secrets",
                                       "configmaps",
                                       "persistentvolumeclaims",
                                       "replicationcontrollers",
                                       "resourcequotas",
                                       "services.loadbalancers",
                                       "services.nodeports",
                                       "requests.storage"};
/* ...and those that bound what pods ask but is not simulated: accepted with a warning. */
static const char *const rq_unenforced[] = {"requests.ephemeral-storage",
                                            "limits.ephemeral-storage", "ephemeral-storage"};

struct rq {
    struct gs_rquota_spec *q;
    yaml_node_t *at[4][2]; /* gpu, cpu, memory, gpumem: [0] bare name, [1] requests.<name> */
    int64_t v[4][2];
};

static int rq_item(struct gs__yctx *c, struct rq *r, int res, int req, yaml_node_t *k,
                   yaml_node_t *v)
{
    /* GPUs in whole cards, as Kubernetes counts an extended resource; kept in milli-GPU */
    static const int e10[] = {0, 3, 0, 0}, e2[] = {0, 0, -20, 0};
    static const unsigned fl[] = {0, GS__Q_CEIL, GS__Q_CEIL, 0};
    static const char *const unit[] = {"GPUs", "milli-CPU", "MiB", "MiB"};
    static const int64_t hi[] = {GPU_MILLI_MAX / 1000, INT64_MAX / 4, INT64_MAX / 4, INT64_MAX / 4};
    char what[128];
    gs__yaml_label(what, sizeof(what), "hard.%s", gs__yaml_str(k));
    r->at[res][req] = k;
    int rc = res == 3 ? gs__scn_gpumem(c, v, what, hi[res], &r->v[res][req])
                      : gs__scn_qty(c, v, what, e10[res], e2[res], fl[res], unit[res], 0, hi[res],
                                    &r->v[res][req]);
    if (!rc && res == 0)
        r->v[res][req] *= 1000;
    return rc;
}

static int rq_pair(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    static const char *const res[] = {"nvidia.com/gpu", "cpu", "memory", "nvidia.com/gpumem"};
    struct rq *r = arg;
    const char *name = gs__yaml_str(k);
    for (int i = 0; i < 4; i++) {
        char requests[32]; /* "requests.<resource>", compared whole */
        snprintf(requests, sizeof(requests), "requests.%s", res[i]);
        if (strcmp(name, res[i]) == 0)
            return rq_item(c, r, i, 0, k, v);
        if (strcmp(name, requests) == 0)
            return rq_item(c, r, i, 1, k, v);
    }
    char what[128];
    gs__yaml_label(what, sizeof(what), "hard.%s", name);
    if (strcmp(name, "limits.nvidia.com/gpu") == 0) {
        int rc = gs__scn_qty_unread(c, v, what);
        if (!rc)
            gs__yaml_warn(c, k,
                          "limits.nvidia.com/gpu is not enforced by Kubernetes for extended "
                          "resources (only requests.nvidia.com/gpu or nvidia.com/gpu); ignored");
        return rc;
    }
    if (strcmp(name, "pods") == 0 || strcmp(name, "count/pods") == 0) {
        /* count/pods is Kubernetes' object count of the same pods: both given, the tighter */
        int64_t n;
        int rc = gs__scn_qty(c, v, what, 0, 0, 0, "pods", 0, INT64_MAX / 4, &n);
        if (!rc && (r->q->pods == GS_UNSET || n < r->q->pods))
            r->q->pods = n;
        return rc;
    }
    for (size_t i = 0; i < sizeof(rq_other) / sizeof(rq_other[0]); i++)
        if (strcmp(name, rq_other[i]) == 0)
            return gs__scn_qty_unread(c, v, what);
    for (size_t i = 0; i < sizeof(rq_unenforced) / sizeof(rq_unenforced[0]); i++)
        if (strcmp(name, rq_unenforced[i]) == 0) {
            int rc = gs__scn_qty_unread(c, v, what);
            if (!rc)
                gs__yaml_warn(c, k, "%s: local ephemeral storage is not simulated; not enforced",
                              name);
            return rc;
        }
    if (strncmp(name, "count/", 6) == 0 || strstr(name, ".storageclass.storage.k8s.io/"))
        return gs__scn_qty_unread(c, v, what);
    static const char *const known[] = {
        "nvidia.com/gpu", "requests.nvidia.com/gpu", "cpu",  "requests.cpu",
        "memory",         "requests.memory",         "pods", "limits.nvidia.com/gpu"};
    char hint[96];
    return gs__yaml_err(c, k, "quota item %s is not interpreted%s: refused rather than ignored",
                        name, gs__yaml_hint(k, known, 8, hint, sizeof(hint)));
}

/* rq_merge() - the bare name and requests.<name> are one quota: both given, the tighter. */
static int64_t rq_merge(struct gs__yctx *c, struct rq *r, int res)
{
    static const char *const unit[] = {"milli-GPU", "milli-CPU", "MiB", "MiB"};
    if (!r->at[res][0] || !r->at[res][1])
        return r->at[res][0] ? r->v[res][0] : r->at[res][1] ? r->v[res][1] : GS_UNSET;
    int lo = r->v[res][1] < r->v[res][0];
    if (r->v[res][0] != r->v[res][1])
        gs__yaml_warn(c, r->at[res][1],
                      "%s (%lld %s) and %s (%lld %s) are the same quota in Kubernetes, which "
                      "enforces both: the tighter, %s, applies",
                      gs__yaml_str(r->at[res][1]), (long long)r->v[res][1], unit[res],
                      gs__yaml_str(r->at[res][0]), (long long)r->v[res][0], unit[res],
                      gs__yaml_str(r->at[res][lo]));
    return r->v[res][lo];
}

enum { SE_SCOPE, SE_OPERATOR, SE_VALUES };
static const char *const se_keys[] = {"scopeName", "operator", "values"};

/* The PriorityClasses one expression names (its values). */
struct scope_vals {
    char name[GS_SCN_SCOPE_CLASSES][GS_SCN_NAME_MAX];
    int n;
};

static int scope_value(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    struct scope_vals *v = arg;
    (void)idx; /* a gs__yaml_item_fn */
    if (v->n >= GS_SCN_SCOPE_CLASSES)
        return gs__yaml_err_code(c, n, -E2BIG, "more than %d PriorityClasses in a quota scope",
                                 GS_SCN_SCOPE_CLASSES);
    int rc = gs__scn_name(c, n, "values[]", v->name[v->n], GS_SCN_NAME_MAX);
    v->n += !rc;
    return rc;
}

/* Expression @idx's classes @v, and every earlier one's in @q: a pod is in the scope when its
 * class is in every expression (the API server ANDs a selector's expressions). */
static int scope_and(struct gs__yctx *c, yaml_node_t *n, int idx, const struct scope_vals *v,
                     struct gs_rquota_spec *q)
{
    int kept = 0;
    for (int i = 0; i < (idx ? q->nscope_classes : v->n); i++) {
        const char *name = idx ? q->scope_classes[i] : v->name[i];
        int in = !idx;
        for (int k = 0; idx && k < v->n && !in; k++)
            in = !strcmp(name, v->name[k]);
        if (in)
            memmove(q->scope_classes[kept++], name, strlen(name) + 1);
    }
    q->nscope_classes = kept;
    return kept ? 0
                : gs__yaml_err(c, n,
                               "no PriorityClass is in every expression of the scopeSelector: "
                               "the quota would count no pod");
}

static int scope_expr(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    yaml_node_t *f[3] = {NULL};
    char where[64];
    gs__yaml_label(where, sizeof(where), "scopeSelector.matchExpressions[%d]", idx);
    int rc = gs__yaml_each_field(c, n, se_keys, 3, where, gs__scn_keep, f);
    if (rc)
        return rc;
    const char *scope = f[SE_SCOPE] ? gs__yaml_str(f[SE_SCOPE]) : NULL;
    const char *op = f[SE_OPERATOR] ? gs__yaml_str(f[SE_OPERATOR]) : NULL;
    if (!scope || !op || strcmp(scope, "PriorityClass") != 0 || strcmp(op, "In") != 0)
        /* Read as covering the whole namespace, a scoped quota would refuse pods it does not
         * count. */
        return gs__yaml_err(c, n,
                            "quota scope %s %s is not interpreted (only PriorityClass In): "
                            "refused rather than ignored",
                            scope ? scope : "?", op ? op : "?");
    struct scope_vals v = {.n = 0};
    rc = f[SE_VALUES] ? gs__yaml_each_item(c, f[SE_VALUES], "values", scope_value, &v) : 0;
    if (!rc && !v.n) /* the API server's rule for In and NotIn */
        return gs__yaml_err(c, f[SE_VALUES] ? f[SE_VALUES] : n,
                            "%s.values: at least one value when the operator is In, as the API "
                            "server requires",
                            where);
    return rc ? rc : scope_and(c, n, idx, &v, arg);
}

static const char *const sel_keys[] = {"matchExpressions"};

static int rq_fields(struct gs__yctx *c, yaml_node_t **f, struct gs_rquota_spec *q)
{
    struct rq r = {q, {{NULL}}, {{0}}};
    yaml_node_t *sel[1] = {NULL};
    int rc = f[RQ_HARD] ? gs__yaml_each_pair(c, f[RQ_HARD], "hard", rq_pair, &r) : 0;
    if (rc)
        return rc;
    q->gpu_milli = rq_merge(c, &r, 0);
    q->cpu_milli = rq_merge(c, &r, 1);
    q->memory_mib = rq_merge(c, &r, 2);
    q->gpumem_mib = rq_merge(c, &r, 3);
    if (f[RQ_SCOPES])
        return gs__yaml_err(c, f[RQ_SCOPES],
                            "quota scopes are not interpreted (only a scopeSelector of "
                            "PriorityClass In): refused rather than ignored");
    if (f[RQ_SCOPE_SELECTOR])
        rc = gs__yaml_each_field(c, f[RQ_SCOPE_SELECTOR], sel_keys, 1, "scopeSelector",
                                 gs__scn_keep, sel);
    if (!rc && sel[0])
        rc = gs__yaml_each_item(c, sel[0], "matchExpressions", scope_expr, q);
    return rc;
}

int gs__scn_rquota(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root)
{
    struct gs__scn_meta m;
    yaml_node_t *spec, *f[3] = {NULL};
    struct gs_rquota_spec q = {.pods = GS_UNSET};
    int rc = read_obj(c, root, "ResourceQuota", true, sizeof(q.name), &m, &spec);
    if (!rc && spec)
        rc = gs__yaml_each_field(c, spec, rq_keys, 3, "ResourceQuota spec", gs__scn_keep, f);
    if (!rc)
        rc = rq_fields(c, f, &q);
    if (rc)
        return rc;
    memcpy(q.ns, m.ns_s, sizeof(q.ns));
    memcpy(q.name, m.name_s, sizeof(q.name));
    return gs__scn_commit(c, L, root, m.name, GS__K_RQUOTA, &q);
}

/* --- LimitRange --- */

enum { LR_TYPE, LR_MAX, LR_MIN, LR_DEFAULT, LR_DEFAULT_REQUEST, LR_RATIO };
static const char *const lr_keys[] = {
    "type", "max", "min", "default", "defaultRequest", "maxLimitRequestRatio"};
static const char *const lr_spec_keys[] = {"limits"};

struct lr {
    struct gs_limit_range_spec *r;
    yaml_node_t *container, *pod; /* the type: Container and type: Pod entries, once seen */
};

static void lr_set(struct gs_limit_range_spec *r, int which, const struct gcm *g)
{
    int64_t *gpu[] = {&r->max_gpu_milli, &r->min_gpu_milli, &r->default_gpu_milli,
                      &r->default_request_gpu_milli};
    int64_t *mem[] = {&r->max_memory_mib, &r->min_memory_mib, &r->default_memory_mib,
                      &r->default_request_memory_mib};
    int64_t *cpu[] = {&r->max_cpu_milli, &r->min_cpu_milli, &r->default_cpu_milli,
                      &r->default_request_cpu_milli};
    *gpu[which] = g->gpu_milli;
    *mem[which] = g->memory_mib;
    *cpu[which] = g->cpu_milli;
}

/* Where an entry's maxLimitRequestRatio goes: the Container's or the Pod's fields. */
struct lr_ratio {
    int64_t *gpu, *cpu, *memory;
};

/* maxLimitRequestRatio: a quantity of at least 1 per resource (LimitRange validation), kept in
 * thousandths; a resource the scheduler does not count is refused, as it could not be checked. */
static int lr_ratio_pair(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    const struct lr_ratio *r = arg;
    const char *name = gs__yaml_str(k);
    int64_t *at = strcmp(name, "nvidia.com/gpu") == 0 ? r->gpu
                  : strcmp(name, "cpu") == 0          ? r->cpu
                  : strcmp(name, "memory") == 0       ? r->memory
                                                      : NULL;
    char what[128];
    gs__yaml_label(what, sizeof(what), "maxLimitRequestRatio.%s", name);
    if (!at)
        return gs__yaml_err(c, k,
                            "%s: the scheduler checks the ratio of nvidia.com/gpu, cpu and memory "
                            "only",
                            what);
    return gs__scn_qty(c, v, what, 3, 0, GS__Q_PLAIN | GS__Q_CEIL,
                       "thousandths (a ratio of at least 1)", 1000, INT64_MAX / 4, at);
}

/*
 * The order Kubernetes' LimitRange validation requires of each resource (ValidateLimitRange,
 * pkg/apis/core/validation): min <= defaultRequest <= default <= max, each pair where both are
 * given; @v: per resource (nvidia.com/gpu milli, cpu milli, memory MiB) those four, GS_UNSET
 * where not given (a Pod entry gives only min and max). Return: 0; -EINVAL after naming the
 * pair in @n's item @where.
 */
static int lr_order(struct gs__yctx *c, yaml_node_t *n, const char *where, const int64_t v[3][4])
{
    static const char *const res[] = {"nvidia.com/gpu", "cpu", "memory"};
    static const char *const name[] = {"min", "defaultRequest", "default", "max"};
    for (int k = 0; k < 3; k++)
        for (int lo = 0; lo < 4; lo++)
            for (int hi = lo + 1; hi < 4; hi++) {
                if (v[k][lo] == GS_UNSET || v[k][hi] == GS_UNSET || v[k][lo] <= v[k][hi])
                    continue;
                char a[GS_QUANTITY_STR_MAX + 2], b[sizeof(a)]; /* memory in Mi */
                const int64_t x[2] = {v[k][lo], v[k][hi]};
                char *out[2] = {a, b};
                for (int i = 0; i < 2; i++)
                    if (k == 2)
                        gs_quantity_format_mib(x[i], out[i], sizeof(a));
                    else
                        gs_quantity_format_milli(x[i], out[i], sizeof(a));
                return gs__yaml_err(c, n,
                                    "%s: %s %s %s is more than %s %s; Kubernetes refuses such a "
                                    "LimitRange",
                                    where, name[lo], res[k], a, name[hi], b);
            }
    return 0;
}

/* A type: Pod entry: min, max and maxLimitRequestRatio on the pod's sums; default and
 * defaultRequest are refused, as Kubernetes' validation refuses them ("may not be specified when
 * `type` is 'Pod'"). */
static int lr_pod(struct gs__yctx *c, struct lr *l, yaml_node_t *n, yaml_node_t **f,
                  const char *where)
{
    struct gs_limit_range_spec *r = l->r;
    char what[96];
    if (l->pod)
        return gs__yaml_err(c, n, "a second type: Pod entry in one LimitRange");
    l->pod = n;
    for (int i = LR_DEFAULT; i <= LR_DEFAULT_REQUEST; i++)
        if (f[i])
            return gs__yaml_err(c, f[i], "%s.%s: may not be specified when type is Pod", where,
                                lr_keys[i]);
    struct lr_ratio ratio = {&r->pod_ratio_gpu_milli, &r->pod_ratio_cpu_milli,
                             &r->pod_ratio_memory_milli};
    int rc = f[LR_RATIO]
                 ? gs__yaml_each_pair(c, f[LR_RATIO], "maxLimitRequestRatio", lr_ratio_pair, &ratio)
                 : 0;
    struct gcm g[2];
    for (int i = 0; i < 2 && !rc; i++) {
        gs__yaml_label(what, sizeof(what), "%s.%s", where, lr_keys[LR_MAX + i]);
        rc = read_gcm(c, f[LR_MAX + i], what, &g[i]);
    }
    if (rc)
        return rc;
    r->pod_max_gpu_milli = g[0].gpu_milli;
    r->pod_max_memory_mib = g[0].memory_mib;
    r->pod_max_cpu_milli = g[0].cpu_milli;
    r->pod_min_gpu_milli = g[1].gpu_milli;
    r->pod_min_memory_mib = g[1].memory_mib;
    r->pod_min_cpu_milli = g[1].cpu_milli;
    const int64_t v[3][4] = {{g[1].gpu_milli, GS_UNSET, GS_UNSET, g[0].gpu_milli},
                             {g[1].cpu_milli, GS_UNSET, GS_UNSET, g[0].cpu_milli},
                             {g[1].memory_mib, GS_UNSET, GS_UNSET, g[0].memory_mib}};
    return lr_order(c, n, where, v);
}

static int lr_item(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    struct lr *l = arg;
    yaml_node_t *f[6] = {NULL};
    char where[64], what[96];
    gs__yaml_label(where, sizeof(where), "limits[%d]", idx);
    int rc = gs__yaml_each_field(c, n, lr_keys, 6, where, gs__scn_keep, f);
    if (rc)
        return rc;
    const char *type = f[LR_TYPE] ? gs__yaml_str(f[LR_TYPE]) : NULL;
    if (!type)
        return gs__yaml_err(c, f[LR_TYPE] ? f[LR_TYPE] : n, "%s needs a type", where);
    if (strcmp(type, "Pod") == 0)
        return lr_pod(c, l, n, f, where);
    if (strcmp(type, "PersistentVolumeClaim") == 0)
        return gs__yaml_err(c, f[LR_TYPE],
                            "%s: type PersistentVolumeClaim bounds the storage of volume claims, "
                            "and storage is not scheduled here (Container and Pod are)",
                            where);
    if (strcmp(type, "Container") != 0)
        return gs__yaml_err(c, f[LR_TYPE], "%s: type %s: expected Container or Pod", where, type);
    if (l->container)
        return gs__yaml_err(c, n, "a second type: Container entry in one LimitRange");
    l->container = n;
    struct lr_ratio ratio = {&l->r->ratio_gpu_milli, &l->r->ratio_cpu_milli,
                             &l->r->ratio_memory_milli};
    if (f[LR_RATIO])
        rc = gs__yaml_each_pair(c, f[LR_RATIO], "maxLimitRequestRatio", lr_ratio_pair, &ratio);
    if (rc)
        return rc;
    for (int i = 0; i < 4; i++) {
        struct gcm g;
        gs__yaml_label(what, sizeof(what), "%s.%s", where, lr_keys[LR_MAX + i]);
        rc = read_gcm(c, f[LR_MAX + i], what, &g);
        if (rc)
            return rc;
        lr_set(l->r, i, &g);
    }
    const struct gs_limit_range_spec *r = l->r;
    /* nvidia.com/gpu may not be overcommitted: its request is its limit (ValidateLimitRange, on
     * the item as defaulted: a default not given is the max) */
    int64_t def = r->default_gpu_milli != GS_UNSET ? r->default_gpu_milli : r->max_gpu_milli;
    if (def != GS_UNSET && r->default_request_gpu_milli != GS_UNSET &&
        def != r->default_request_gpu_milli) {
        char a[GS_QUANTITY_STR_MAX], b[GS_QUANTITY_STR_MAX];
        return gs__yaml_err(c, f[LR_DEFAULT_REQUEST],
                            "%s: default value %s%s must equal to defaultRequest value %s in "
                            "nvidia.com/gpu (Kubernetes: it may not be overcommitted)",
                            where, gs_quantity_format_milli(def, a, sizeof(a)),
                            r->default_gpu_milli == GS_UNSET ? " (the max, as no default is given)"
                                                             : "",
                            gs_quantity_format_milli(r->default_request_gpu_milli, b, sizeof(b)));
    }
    const int64_t v[3][4] = {
        {r->min_gpu_milli, r->default_request_gpu_milli, r->default_gpu_milli, r->max_gpu_milli},
        {r->min_cpu_milli, r->default_request_cpu_milli, r->default_cpu_milli, r->max_cpu_milli},
        {r->min_memory_mib, r->default_request_memory_mib, r->default_memory_mib,
         r->max_memory_mib}};
    return lr_order(c, n, where, v);
}

int gs__scn_limit_range(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root)
{
    struct gs__scn_meta m;
    yaml_node_t *spec, *f[1] = {NULL};
    struct gs_limit_range_spec r;
    struct lr l = {&r, NULL, NULL};
    memset(&r, 0, sizeof(r));
    struct gcm none = {GS_UNSET, GS_UNSET, GS_UNSET, GS_UNSET, "", 0};
    for (int i = 0; i < 4; i++)
        lr_set(&r, i, &none);
    r.ratio_gpu_milli = r.ratio_cpu_milli = r.ratio_memory_milli = GS_UNSET;
    r.pod_max_gpu_milli = r.pod_min_gpu_milli = r.pod_max_memory_mib = GS_UNSET;
    r.pod_min_memory_mib = r.pod_max_cpu_milli = r.pod_min_cpu_milli = GS_UNSET;
    r.pod_ratio_gpu_milli = r.pod_ratio_cpu_milli = r.pod_ratio_memory_milli = GS_UNSET;
    int rc = read_obj(c, root, "LimitRange", true, sizeof(r.name), &m, &spec);
    if (!rc && spec)
        rc = gs__yaml_each_field(c, spec, lr_spec_keys, 1, "LimitRange spec", gs__scn_keep, f);
    if (!rc && f[0])
        rc = gs__yaml_each_item(c, f[0], "limits", lr_item, &l);
    if (rc)
        return rc;
    memcpy(r.ns, m.ns_s, sizeof(r.ns));
    memcpy(r.name, m.name_s, sizeof(r.name));
    return gs__scn_commit(c, L, root, m.name, GS__K_LIMIT_RANGE, &r);
}

/* --- Simulation --- */

enum {
    SIM_COMPARE,
    SIM_HORIZON,
    SIM_MODES,
    SIM_FAILURES,
    SIM_NOW,
    SIM_CARD_FAILURES,
    SIM_TENANTS,
    SIM_CARD_HOLDS,
    SIM_NKEYS
};
static const char *const sim_keys[] = {"compare", "horizon",      "cardModes", "nodeFailures",
                                       "now",     "cardFailures", "tenants",   "cardHolds"};

/* tenants[]: {name: TENANT, namespaces: [NS, ...]}: the namespaces the tenant owns, in place of
 * those the documents before gave it (a tenant made when none has that name), as gpuschedd's
 * DaemonConfig tenants own theirs. An empty list is refused, as the DaemonConfig refuses it: it
 * would leave a tenant no namespace maps to, which the resolver would silently give the
 * namespace of its own name. */
struct tenants {
    struct gs__scn_load *L;
    yaml_node_t *seq;
};

static int tenant_item(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    static const char *const keys[] = {"name", "namespaces"};
    struct gs__scn_load *L = ((struct tenants *)arg)->L;
    yaml_node_t *f[2] = {NULL};
    char where[48], name[GS_SCN_NAME_MAX];
    long t;
    gs__yaml_label(where, sizeof(where), "tenants[%d]", idx);
    int rc = gs__yaml_each_field(c, n, keys, 2, where, gs__scn_keep, f);
    if (!rc && (!f[0] || !f[1]))
        return gs__yaml_err(c, n, "%s needs name and namespaces", where);
    if (!rc && f[1]->type == YAML_SEQUENCE_NODE &&
        f[1]->data.sequence.items.start == f[1]->data.sequence.items.top)
        return gs__yaml_err(c, f[1], "%s.namespaces: empty: a tenant owns at least one namespace",
                            where);
    if (!rc)
        rc = gs__scn_dns_name(c, f[0], 1, "tenants[].name", name, sizeof(name));
    yaml_node_t *before =
        rc ? NULL : gs__yaml_earlier(c, ((struct tenants *)arg)->seq, idx, "name");
    if (before) /* the last would have won, the first's namespaces going to tenants of their own */
        return gs__yaml_err(c, f[0], "tenant %s is listed twice (also at %zu:%zu)", name,
                            before->start_mark.line + 1, before->start_mark.column + 1);
    if (!rc)
        rc = gs__scn_tenant(c, L, f[0], name, &t);
    return rc ? rc : gs__scn_tenant_owns(c, L, t, f[1]);
}

struct failures {
    struct gs__scn_load *L;
    struct gs_sim_spec *sim;
    const char *list; /* "nodeFailures", "cardFailures", "cardHolds" or "cardModes.cards" */
    size_t cap;       /* the array's room: sim->cards' or sim->failures' */
};

/* nodeFailures[]: {node: NAME, at: DURATION, restore: DURATION (optional, after at)};
 * cardFailures[]: the same with gpu: INDEX and xid: XID (optional); cardHolds[]: {node: NAME,
 * gpu: INDEX, at: DURATION, until: DURATION (after at)}, a card a pod evicted through Kubernetes
 * still holds while it stops (GS_XID_HELD). */
static int failure_item(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    static const char *const failure_keys[] = {"node", "at", "restore", "gpu", "xid"};
    static const char *const hold_keys[] = {"node", "at", "until", "gpu"};
    struct failures *fl = arg;
    int card = fl->list[0] == 'c', hold = !strcmp(fl->list, "cardHolds");
    const char *const *keys = hold ? hold_keys : failure_keys;
    yaml_node_t *f[5] = {NULL};
    char where[64], what[48];
    struct gs_node_failure *v =
        gs_grow(fl->sim->failures, &fl->cap, fl->sim->nfailures + 1, sizeof(*v), 16);
    if (!v)
        return gs__yaml_err(c, n, "out of memory");
    fl->sim->failures = v;
    struct gs_node_failure *e = &v[fl->sim->nfailures];
    *e = (struct gs_node_failure){.index = -1, .gpu = -1, .restore_us = GS_UNSET};
    gs__yaml_label(where, sizeof(where), "%s[%d]", fl->list, idx);
    int rc = gs__yaml_each_field(c, n, keys, hold ? 4 : card ? 5 : 3, where, gs__scn_keep, f);
    const char *node = f[0] ? gs__yaml_str(f[0]) : NULL;
    gs__yaml_label(what, sizeof(what), "%s.node", where);
    if (!rc && f[0])
        rc = gs__yaml_not_typed(c, f[0], what);
    if (!rc && (!node || !*node || strlen(node) >= sizeof(e->node)))
        return gs__yaml_err(c, f[0] ? f[0] : n, "%s.node: expected the name of a node", where);
    if (!rc && !f[1])
        return gs__yaml_err(c, n, "%s needs at (when the %s fails)", where, card ? "card" : "node");
    if (!rc && card && !f[3])
        return gs__yaml_err(c, n, "%s needs gpu (the card's index on its node)", where);
    if (!rc && hold && !f[2])
        return gs__yaml_err(c, n, "%s needs until (when the card is free)", where);
    snprintf(what, sizeof(what), "%s[].at", fl->list);
    if (!rc)
        rc = gs__scn_dur(c, f[1], what, &e->at_us);
    snprintf(what, sizeof(what), "%s[].%s", fl->list, keys[2]);
    if (!rc && f[2])
        rc = gs__scn_dur(c, f[2], what, &e->restore_us);
    if (!rc && f[2] && e->restore_us <= e->at_us)
        return gs__yaml_err(c, f[2], "%s.%s: must come after at", where, keys[2]);
    int64_t gpu = -1, xid = hold ? GS_XID_HELD : 0;
    snprintf(what, sizeof(what), "%s[].gpu", fl->list);
    if (!rc && card)
        rc = gs__scn_int(c, f[3], what, 0, GS_GPUS_MAX - 1, &gpu);
    if (!rc && f[4])
        rc = gs__scn_int(c, f[4], "cardFailures[].xid", 1, 65535, &xid);
    if (rc)
        return rc;
    e->gpu = (int32_t)gpu;
    e->xid = (int32_t)xid;
    snprintf(e->node, sizeof(e->node), "%s", node);
    gs__scn_src(c, fl->L, n, &e->src);
    fl->sim->nfailures++;
    return 0;
}

/* cardModes.cards[]: {node: NAME, gpu: INDEX, mode: MODE, since: DURATION}. */
static int card_item(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    static const char *const keys[] = {"node", "gpu", "mode", "since"};
    static const char *const modes[] = {"exclusive", "shared", "mig", "timesliced"};
    struct failures *fl = arg;
    struct gs_sim_spec *sim = fl->sim;
    yaml_node_t *f[4] = {NULL};
    char where[64];
    gs__yaml_label(where, sizeof(where), "cardModes.cards[%d]", idx);
    int rc = gs__yaml_each_field(c, n, keys, 4, where, gs__scn_keep, f);
    for (int k = 0; !rc && k < 4; k++)
        if (!f[k])
            return gs__yaml_err(c, n, "%s needs %s", where, keys[k]);
    struct gs_card_history e = {.index = -1};
    int64_t gpu = 0;
    int mode = 0;
    if (!rc)
        rc = gs__scn_name(c, f[0], "cardModes.cards[].node", e.node, sizeof(e.node));
    if (!rc)
        rc = gs__scn_int(c, f[1], "cardModes.cards[].gpu", 0, GS_GPUS_MAX - 1, &gpu);
    if (!rc)
        rc = gs__scn_enum(c, f[2], "cardModes.cards[].mode", modes, 4, &mode);
    if (!rc)
        rc = gs__scn_dur(c, f[3], "cardModes.cards[].since", &e.since_us);
    if (rc)
        return rc;
    e.gpu = (int32_t)gpu;
    e.mode = GS_CARD_EXCLUSIVE + mode;
    gs__scn_src(c, fl->L, n, &e.src);
    struct gs_card_history *v = gs_grow(sim->cards, &fl->cap, sim->ncards + 1, sizeof(*v), 16);
    if (!v)
        return gs__yaml_err(c, n, "out of memory");
    sim->cards = v;
    sim->cards[sim->ncards++] = e;
    return 0;
}

static int card_modes(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *n,
                      struct gs_sim_spec *sim)
{
    static const char *const keys[] = {"convert", "minHold", "cards"};
    yaml_node_t *f[3] = {NULL};
    int rc = gs__yaml_each_field(c, n, keys, 3, "cardModes", gs__scn_keep, f);
    if (!rc && f[0])
        rc = gs__scn_bool(c, f[0], "cardModes.convert", &sim->convert);
    if (!rc && f[1])
        rc = gs__scn_dur(c, f[1], "cardModes.minHold", &sim->min_hold_us);
    if (!rc && f[1] && !sim->convert && sim->min_hold_us > 0)
        gs__yaml_warn(c, f[1],
                      "cardModes.minHold has no effect: with convert false a card keeps "
                      "its first mode");
    if (!rc && f[2])
        rc = gs__yaml_each_item(c, f[2], "cardModes.cards", card_item,
                                &(struct failures){L, sim, "cardModes.cards", 0});
    sim->modes_defined = 1;
    return rc;
}
static const char *const compare_ways[] = {"exclusive", "sharing", "full"};

static int compare_item(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    struct gs_sim_spec *sim = arg;
    int way = 0;
    if (idx >= 3)
        return gs__yaml_err(c, n, "compare lists at most 3 ways");
    int rc = gs__scn_enum(c, n, "compare[]", compare_ways, 3, &way);
    for (int i = 0; !rc && i < sim->ncompare; i++)
        if (strcmp(sim->compare[i], compare_ways[way]) == 0)
            rc = gs__yaml_err(c, n, "compare lists %s twice", compare_ways[way]);
    if (!rc)
        snprintf(sim->compare[sim->ncompare++], sizeof(sim->compare[0]), "%s", compare_ways[way]);
    return rc;
}

int gs__scn_simulation(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root)
{
    struct gs__scn_meta m;
    yaml_node_t *spec, *f[SIM_NKEYS] = {NULL};
    struct gs_sim_spec sim = {
        .defined = 1, .horizon_us = GS_UNSET, .now_us = GS_UNSET, .convert = 1};
    int rc = read_obj(c, root, "Simulation", false, GS_SCN_NAME_MAX, &m, &spec);
    if (!rc && L->s->sim.defined)
        rc = gs__yaml_err(c, root, "a second Simulation document; give one");
    if (!rc && spec)
        rc = gs__yaml_each_field(c, spec, sim_keys, SIM_NKEYS, "Simulation spec", gs__scn_keep, f);
    if (!rc && f[SIM_TENANTS])
        rc = gs__yaml_each_item(c, f[SIM_TENANTS], "tenants", tenant_item,
                                &(struct tenants){L, f[SIM_TENANTS]});
    if (!rc && f[SIM_COMPARE])
        rc = gs__yaml_each_item(c, f[SIM_COMPARE], "compare", compare_item, &sim);
    if (!rc && f[SIM_COMPARE] && sim.ncompare == 0) /* else taken as full, without a word */
        rc = gs__yaml_err(c, f[SIM_COMPARE],
                          "compare: empty; list the ways to run (exclusive, sharing, full), or "
                          "leave it out to run full");
    if (!rc && f[SIM_HORIZON])
        rc = gs__scn_dur(c, f[SIM_HORIZON], "horizon", &sim.horizon_us);
    if (!rc && f[SIM_NOW] && !(rc = gs__scn_dur(c, f[SIM_NOW], "now", &sim.now_us)))
        gs__scn_src(c, L, f[SIM_NOW], &sim.now_src);
    if (!rc && f[SIM_MODES])
        rc = card_modes(c, L, f[SIM_MODES], &sim);
    struct failures fl = {L, &sim, "nodeFailures", 0}; /* one array for both lists */
    if (!rc && f[SIM_FAILURES])
        rc = gs__yaml_each_item(c, f[SIM_FAILURES], "nodeFailures", failure_item, &fl);
    fl.list = "cardFailures";
    if (!rc && f[SIM_CARD_FAILURES])
        rc = gs__yaml_each_item(c, f[SIM_CARD_FAILURES], "cardFailures", failure_item, &fl);
    fl.list = "cardHolds";
    if (!rc && f[SIM_CARD_HOLDS])
        rc = gs__yaml_each_item(c, f[SIM_CARD_HOLDS], "cardHolds", failure_item, &fl);
    if (!rc) {
        L->s->sim = sim;
        gs__scn_src(c, L, root, &L->s->sim.src);
    } else {
        free(sim.cards);
        free(sim.failures);
    }
    return rc;
}

/* --- VirtualGPUClass --- */

enum { VG_MEMORY, VG_CORES, VG_MAX_CLIENTS, VG_SHAREABLE, VG_SILENT_FIRST };
static const char *const vg_keys[] = {"memory",     "cores",  "maxClients", "isShareable",
                                      "computeCap", "driver", "profile"};

/* The smallest frame buffer of NVIDIA's vGPU profiles (the 0B/0Q profiles, 512 MB; NVIDIA
 * Virtual GPU Software User Guide, "Virtual GPU Types"): a class below it is a unit mistake. */
#define VG_MEMORY_MIN_MIB 512

/*
 * The class's memory in MiB: a Kubernetes quantity in bytes ("2Gi", "2048Mi"), a whole number of
 * MiB, or a vGPU profile size as the seed writes it ("2gb", "512mb"), which NVIDIA's vGPU profiles
 * mean in binary units (the quadro-v100-2q profile has a 2048 MiB frame buffer). A bare number is
 * bytes, as Kubernetes reads it, so "2048" is refused naming the likely "2048Mi".
 */
static int vg_memory(struct gs__yctx *c, yaml_node_t *n, int64_t *out)
{
    char buf[GS__YAML_SHOW_BUF], num[32];
    const char *s = gs__yaml_str(n), *why = "";
    size_t len = s ? strlen(s) : 0;
    int e2 = len > 2 && strcasecmp(s + len - 2, "gb") == 0   ? 10
             : len > 2 && strcasecmp(s + len - 2, "mb") == 0 ? 0
                                                             : -1;
    int rc;
    if (e2 < 0 || len - 2 >= sizeof(num)) {
        rc = gs__scn_bytes(c, n, "spec.memory", 0, INT64_MAX / 4, out);
    } else {
        memcpy(num, s, len - 2);
        num[len - 2] = 0;
        rc = gs__qty_parse(num, 0, e2, GS__Q_PLAIN, out, &why);
        if (rc)
            return gs__yaml_err(c, n, "spec.memory: %s %s%s", gs__yaml_show(n, buf), why,
                                rc == -EDOM && strstr(why, "whole") ? " MiB" : "");
    }
    if (!rc && *out < VG_MEMORY_MIN_MIB)
        return gs__yaml_err(c, n,
                            "spec.memory: %s is below %d MiB, the smallest vGPU frame buffer "
                            "(a quantity is bytes: 2Gi, 2048Mi)",
                            gs__yaml_show(n, buf), VG_MEMORY_MIN_MIB);
    return rc;
}

/* computeCap, driver and profile describe the class (the seed's vGPU profile) and place nothing:
 * taken as what they are, a CUDA compute capability ("7.0") and names, and refused otherwise. */
static int vg_descriptive(struct gs__yctx *c, yaml_node_t *n, const char *key)
{
    char what[32], buf[GS__YAML_SHOW_BUF];
    snprintf(what, sizeof(what), "spec.%s", key);
    if (!n || gs__yaml_is_null(n))
        return 0;
    if (strcmp(key, "computeCap")) /* a name */
        return gs__yaml_text(n) ? 0 : gs__yaml_text_error(c, n, what);
    const char *s = gs__yaml_str(n);
    size_t major = s ? strspn(s, "0123456789") : 0;
    if (major && major < 3 && s[major] == '.' && strspn(s + major + 1, "0123456789") == 1 &&
        !s[major + 2])
        return 0;
    return gs__yaml_err(c, n, "%s: %s is not a CUDA compute capability (major.minor, as 7.0)", what,
                        gs__yaml_show(n, buf));
}

int gs__scn_vgpu_class(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root)
{
    struct gs__scn_meta m;
    yaml_node_t *spec, *f[GS__YAML_NKEYS(vg_keys)] = {NULL};
    struct gs_vgpu_class_spec v = {.shareable = 1};
    int64_t x;
    int rc = read_obj(c, root, "VirtualGPUClass", true, sizeof(v.name), &m, &spec);
    if (!rc && !spec)
        rc = gs__yaml_err(c, root, "VirtualGPUClass %s has no spec", m.name_s);
    if (!rc)
        rc = gs__yaml_each_field(c, spec, vg_keys, GS__YAML_NKEYS(vg_keys), "VirtualGPUClass spec",
                                 gs__scn_keep, f);
    for (int i = VG_MEMORY; !rc && i < VG_SILENT_FIRST; i++)
        if (i != VG_SHAREABLE && !f[i])
            rc = gs__yaml_err(c, spec, "VirtualGPUClass %s has no spec.%s", m.name_s, vg_keys[i]);
    if (!rc)
        rc = vg_memory(c, f[VG_MEMORY], &v.memory_mib);
    if (!rc && !(rc = gs__scn_int(c, f[VG_CORES], "spec.cores", 1, 100, &x)))
        v.cores_pct = (int32_t)x;
    if (!rc &&
        !(rc = gs__scn_int(c, f[VG_MAX_CLIENTS], "spec.maxClients", 1, GS_CARD_CLIENTS_MAX, &x)))
        v.max_clients = (int32_t)x;
    if (!rc && f[VG_SHAREABLE])
        rc = gs__scn_bool(c, f[VG_SHAREABLE], "spec.isShareable", &v.shareable);
    for (int i = VG_SILENT_FIRST; !rc && i < GS__YAML_NKEYS(vg_keys); i++)
        rc = vg_descriptive(c, f[i], vg_keys[i]);
    if (rc)
        return rc;
    memcpy(v.name, m.name_s, sizeof(v.name));
    return gs__scn_commit(c, L, root, m.name, GS__K_VGPU_CLASS, &v);
}
