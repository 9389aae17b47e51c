/*
 * gpuschedd: the extender's preempt verb, k8s.io/kube-scheduler/extender/v1
 * ExtenderPreemptionArgs {Pod, NodeNameToVictims | NodeNameToMetaVictims} answered with
 * ExtenderPreemptionResult {NodeNameToMetaVictims}.
 *
 * kube-scheduler proposes, per node, victims whose eviction lets the pod fit as it counts
 * (nvidia.com/gpu as a number, CPU, memory). The verb keeps the proposals that hold in gpusched's
 * card-level view: on each node the victims gpusched holds there that its own evictions would
 * take for the pod (gs_tenancy_probe_may_evict(): lower priority, the guarantee, reclaim, the
 * churn guard; a victim it holds on another node is dropped) are evicted lowest priority
 * first, then the latest started (the reverse of kube-scheduler's MoreImportantPod), until the
 * scheduler's filter lets the pod fit (gs_tenancy_probe_without(): whole cards, shares, MIG
 * instances, cards they all leave empty); then each of them, most important first, is spared when
 * the pod still fits without evicting it, so the set is minimal. A
 * node where evicting every proposed victim gpusched holds would not make room, or that the
 * inventory lacks, is dropped. A victim gpusched does not hold takes no card in its view; it stays
 * in the set as proposed, since kube-scheduler needed it for what it counts. NumPDBViolations comes
 * back as proposed, capped at the victims kept: which of them a budget protects is kube-scheduler's
 * knowledge.
 *
 * A pod gpusched's scheduler has placed already (nominated, its cards held) gets victims on
 * that node only: its own victims, if any, went there.
 *
 * Victims come as MetaPods (nodeCacheCapable) or whole Pods; the answer names them by UID either
 * way, as kube-scheduler expects (it looks each one up on the node and refuses an unknown UID;
 * the types: kubernetes staging/src/k8s.io/kube-scheduler/extender/v1/types.go). The result type
 * has no Error field: a malformed body is a 400 naming the field, and so is a pod of a namespace
 * no tenant owns (with the reason filter and bind give it): no victim is approved for a pod that
 * could never be bound.
 */
#include "preempt.h"
#include "api.h"
#include "extender.h"
#include "state.h"

#include "gpusched/cluster.h"
#include "gpusched/scenario.h"
#include "gpusched/tenancy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct victim {
    const char *uid;         /* as proposed, borrowed from the request */
    const struct gsd_pod *p; /* the pod gpusched holds on that node, or NULL */
    int elsewhere;           /* gpusched holds it running on another node */
    int keep;                /* in the answer */
};

/* One node's proposal, checked. */
struct proposal {
    const char *node;
    int idx; /* node index, -ENOENT when the inventory lacks it */
    struct victim *v;
    size_t n;
    int64_t pdb;
};

struct preempt {
    struct gsd_state *st;
    const char *map; /* the field the victims came in */
    int meta;        /* MetaPods (UIDs only) */
    struct proposal *nodes;
    size_t n;
    char field[GS_DIAG_MSG_MAX]; /* the bad field, when reading failed */
    char msg[GS_DIAG_MSG_MAX];
};

/* Record the bad field (printf-style @fmt) and @what is wrong with it. Return: -EINVAL. */
static int bad(struct preempt *pr, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(struct preempt *pr, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pr->field, sizeof(pr->field), fmt, ap);
    va_end(ap);
    snprintf(pr->msg, sizeof(pr->msg), "%.300s: %s", pr->field, what);
    return -EINVAL;
}

/* Victim @i of @node from @pod (a MetaPod or a Pod). */
static int read_victim(struct preempt *pr, const char *node, size_t i, const json_t *pod,
                       struct victim *v)
{
    const json_t *md = pr->meta ? NULL : gsd_jget(pod, "metadata");
    const json_t *uid = pr->meta ? gsd_jget(pod, "UID") : gsd_jget(md, "uid");
    if (!json_is_object(pod))
        return bad(pr, pr->meta ? "expected a MetaPod object" : "expected a Pod object",
                   "%s.%.128s.Pods[%zu]", pr->map, node, i);
    if (!json_is_string(uid) || !json_string_length(uid)) /* the API server gives every pod one */
        return bad(
            pr, json_is_string(uid) ? "expected the victim's UID, not \"\"" : "expected a string",
            "%s.%.128s.Pods[%zu].%s", pr->map, node, i, pr->meta ? "UID" : "metadata.uid");
    v->uid = json_string_value(uid);
    return 0;
}

/* One node's Victims: {"Pods": [...], "NumPDBViolations": n}. */
static int read_node(struct preempt *pr, const char *node, const json_t *val, struct proposal *p)
{
    const json_t *pods = gsd_jget(val, "Pods"), *pdb = gsd_jget(val, "NumPDBViolations"), *pod;
    p->node = node;
    p->idx = gs_cluster_find(pr->st->cluster, node);
    if (!json_is_object(val))
        return bad(pr, "expected a Victims object", "%s.%.128s", pr->map, node);
    if (pods && !json_is_null(pods) && !json_is_array(pods))
        return bad(pr, "expected an array", "%s.%.128s.Pods", pr->map, node);
    if (pdb && !json_is_null(pdb) && (!json_is_integer(pdb) || json_integer_value(pdb) < 0))
        return bad(pr, "expected a whole number >= 0", "%s.%.128s.NumPDBViolations", pr->map, node);
    p->pdb = json_integer_value(pdb);
    p->v = calloc(json_array_size(pods) + 1, sizeof(*p->v));
    if (!p->v)
        return -ENOMEM;
    size_t i;
    json_array_foreach(pods, i, pod)
    {
        int rc = read_victim(pr, node, i, pod, &p->v[p->n]);
        if (rc)
            return rc;
        p->n++;
    }
    return 0;
}

/* The proposals of @args: NodeNameToMetaVictims when given, else NodeNameToVictims. */
static int read_args(struct preempt *pr, const json_t *args)
{
    const json_t *meta = gsd_jget(args, "NodeNameToMetaVictims");
    const json_t *full = gsd_jget(args, "NodeNameToVictims");
    pr->meta = meta && !json_is_null(meta);
    pr->map = pr->meta ? "NodeNameToMetaVictims" : "NodeNameToVictims";
    if (pr->meta && full && !json_is_null(full)) /* kube-scheduler sends one: the other unread */
        return bad(pr, "given with NodeNameToMetaVictims: give one of them", "NodeNameToVictims");
    const json_t *map = pr->meta ? meta : full, *val;
    if (map && !json_is_null(map) && !json_is_object(map))
        return bad(pr, "expected an object of node names", "%s", pr->map);
    pr->nodes = calloc(json_object_size(map) + 1, sizeof(*pr->nodes));
    if (!pr->nodes)
        return -ENOMEM;
    const char *node;
    json_object_foreach((json_t *)map, node, val)
    {
        int rc = read_node(pr, node, val, &pr->nodes[pr->n]);
        pr->n++; /* counted even when it failed: its victims are freed with the rest */
        if (rc)
            return rc;
    }
    return 0;
}

/*
 * Find the pods gpusched holds among the victims, by UID (bind records kube-scheduler's): one pass
 * over the pods, the proposed UIDs hashed. A victim counts only on the node it was proposed on;
 * one proposed twice, on one node or on two (a pod runs on one), is refused, naming the second:
 * kept for the first alone, it silently emptied the answer (filter refuses a node named twice).
 * Return: 0; -EINVAL with @pr's field; -ENOMEM.
 */
static int match(struct preempt *pr)
{
    json_t *by_uid = json_object();
    if (!by_uid)
        return -ENOMEM;
    for (size_t k = 0; k < pr->n; k++)
        for (size_t i = 0; i < pr->nodes[k].n; i++) {
            const json_t *was = json_object_get(by_uid, pr->nodes[k].v[i].uid);
            int rc = 0;
            if (was) {
                size_t at = (size_t)json_integer_value(was);
                char what[400];
                snprintf(what, sizeof(what), "the victim of %s.%.128s.Pods[%zu] again", pr->map,
                         pr->nodes[at >> 24].node, at & 0xffffff);
                rc = bad(pr, what, "%s.%.128s.Pods[%zu]", pr->map, pr->nodes[k].node, i);
            } else if (json_object_set_new(by_uid, pr->nodes[k].v[i].uid,
                                           json_integer((json_int_t)(k << 24 | i)))) {
                rc = -ENOMEM;
            }
            if (rc) {
                json_decref(by_uid);
                return rc;
            }
        }
    for (const struct gsd_pod *p = pr->st->head; p; p = p->next) {
        json_t *at = p->state == GSD_RUNNING ? json_object_get(by_uid, p->uid) : NULL;
        size_t k = at ? (size_t)json_integer_value(at) >> 24 : 0;
        struct victim *v = at ? &pr->nodes[k].v[(size_t)json_integer_value(at) & 0xffffff] : NULL;
        if (v && pr->nodes[k].idx == p->pl.node)
            v->p = p;
        else if (v)
            v->elsewhere = 1;
    }
    json_decref(by_uid);
    return 0;
}

/* kube-scheduler's eviction order: lower priority first, then the later started. */
static int evict_before(const struct gsd_pod *a, const struct gsd_pod *b)
{
    if (a->priority != b->priority)
        return a->priority < b->priority;
    if (a->start_us != b->start_us)
        return a->start_us > b->start_us;
    return a->seq > b->seq;
}

/* Does the probed pod fit node @idx were the pods @set[0..n) (skipping @skip) gone? 1, 0 or
 * -ENOMEM. @sids: room for @n. */
static int fits_without(struct gsd_state *st, struct gs_tenancy_probe *pr, int idx,
                        const struct gsd_pod *const *set, size_t n, size_t skip, int32_t *sids)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (i != skip && set[i]->sid >= 0)
            sids[m++] = set[i]->sid;
    return gs_tenancy_probe_without(st->sched.tn, pr, idx, sids, m);
}

/*
 * Of @set[0..@n) (pods on node @idx, in eviction order), the fewest whose going lets the probed
 * pod fit there: the shortest prefix of the order, then each of it spared, most important first,
 * when the pod fits without evicting it. @set is compacted to those chosen. Return: how many
 * (>= 0); -1 when even all of them do not make room; -ENOMEM.
 */
static int minimal_set(struct gsd_state *st, struct gs_tenancy_probe *pr, int idx,
                       const struct gsd_pod **set, size_t n)
{
    int32_t *sids = calloc(n + 1, sizeof(*sids));
    int rc = sids ? 0 : -ENOMEM;
    size_t need = 0; /* the shortest prefix of the order that makes room */
    while (!rc && (rc = fits_without(st, pr, idx, set, need, SIZE_MAX, sids)) == 0 && need < n)
        need++;
    /* Spare what is not needed, most important first; the last of the prefix always is. */
    for (size_t j = need > 0 ? need - 1 : 0; rc == 1 && j-- > 0;) {
        int fit = fits_without(st, pr, idx, set, need, j, sids);
        if (fit < 0)
            rc = fit;
        if (fit == 1) {
            memmove(&set[j], &set[j + 1], (need - j - 1) * sizeof(*set));
            need--;
        }
    }
    free(sids);
    return rc == 1 ? (int)need : rc < 0 ? rc : -1;
}

/*
 * Decide one node: mark the victims to keep. Return: 1 the node stays; 0 it is dropped;
 * -ENOMEM.
 */
static int decide(struct gsd_state *st, struct gs_tenancy_probe *pr, struct proposal *p)
{
    if (p->idx < 0)
        return 0;
    size_t n = 0;
    const struct gsd_pod **set = calloc(p->n + 1, sizeof(*set));
    if (!set)
        return -ENOMEM;
    for (size_t i = 0; i < p->n; i++) {
        /* not held by gpusched: kept as proposed; held on another node: evicting it frees
         * nothing here; one the scheduler's own evictions would not take for this pod (a
         * priority not below its own, the churn guard, ...): never approved */
        p->v[i].keep = !p->v[i].p && !p->v[i].elsewhere;
        if (!p->v[i].p || !gs_tenancy_probe_may_evict(st->sched.tn, pr, p->v[i].p->sid))
            continue;
        size_t at = n++; /* insertion into eviction order: a node has few victims */
        for (; at > 0 && evict_before(p->v[i].p, set[at - 1]); at--)
            set[at] = set[at - 1];
        set[at] = p->v[i].p;
    }
    int need = minimal_set(st, pr, p->idx, set, n);
    for (size_t i = 0; need > 0 && i < p->n; i++)
        for (int k = 0; p->v[i].p && k < need; k++)
            p->v[i].keep |= set[k] == p->v[i].p;
    free(set);
    return need == -ENOMEM ? need : need >= 0;
}

/* ExtenderPreemptionResult: the nodes kept, each with the UIDs of its victims kept. */
static json_t *result(const struct preempt *pr, const int *kept)
{
    json_t *map = json_object();
    for (size_t k = 0; map && k < pr->n; k++) {
        const struct proposal *p = &pr->nodes[k];
        json_t *pods = json_array();
        for (size_t i = 0; pods && kept[k] && i < p->n; i++)
            if (p->v[i].keep)
                json_array_append_new(pods, json_pack("{s:s}", "UID", p->v[i].uid));
        size_t nk = json_array_size(pods);
        if (kept[k])
            json_object_set_new(
                map, p->node,
                json_pack("{s:o, s:I}", "Pods", pods, "NumPDBViolations",
                          (json_int_t)(p->pdb < (int64_t)nk ? p->pdb : (int64_t)nk)));
        else
            json_decref(pods);
    }
    return json_pack("{s:o}", "NodeNameToMetaVictims", map);
}

static void preempt_free(struct preempt *pr)
{
    for (size_t k = 0; pr->nodes && k < pr->n; k++)
        free(pr->nodes[k].v);
    free(pr->nodes);
}

void gsd_extender_preempt(struct gsd_state *st, struct gsd_req *r, const json_t *args)
{
    struct preempt pr = {.st = st, .map = "NodeNameToMetaVictims"};
    struct gsd_podspec spec;
    struct gsd_ferr e = {0};
    int *kept = NULL, rc = 0;
    if (!json_is_object(args)) {
        gsd_reply_error(r, 400, "", "ExtenderPreemptionArgs: expected an object");
        return;
    }
    if (!json_is_object(gsd_jget(args, "Pod"))) { /* as filter says it */
        gsd_reply_error(r, 400, "Pod", "Pod: required, a Pod object");
        return;
    }
    char *text = json_dumps(gsd_jget(args, "Pod"), JSON_COMPACT | JSON_ENCODE_ANY);
    rc = gsd_podspec_parse(text ? text : "", text ? strlen(text) : 0, 0, &spec, &e);
    free(text);
    if (rc) {
        char field[160];
        snprintf(field, sizeof(field), e.field[0] ? "Pod.%s" : "Pod", e.field);
        gsd_reply_error(r, e.status, field, "Pod%s%.400s", e.field[0] ? "." : ": ", e.msg);
        return;
    }
    char why[GSD_REASON_MAX];
    struct gs_tenancy_probe *probe = NULL;
    if (!spec.ns[0])
        snprintf(spec.s.ns, sizeof(spec.s.ns), "default");
    if (gsd_ns_unowned(st, spec.s.ns, why, sizeof(why))) { /* as filter and bind refuse it */
        gsd_reply_error(r, 400, "Pod.metadata.namespace", "Pod.%s", why);
        gsd_podspec_clear(&spec);
        return;
    }
    rc = gs_tenancy_probe_new(st->sched.tn, &spec.s, &probe, why, sizeof(why));
    if (rc == 1) {
        gsd_reply_error(r, 400, "Pod", "Pod: %s", why);
        gsd_podspec_clear(&spec);
        return;
    }
    if (!rc)
        rc = read_args(&pr, args);
    if (!rc)
        rc = match(&pr);
    if (!rc && !(kept = calloc(pr.n + 1, sizeof(*kept))))
        rc = -ENOMEM;
    /* placed by gpuschedd's scheduler already (nominated, its cards held): its victims, if
     * any, were evicted there; kube-scheduler's own on another node would be a second set */
    const struct gsd_pod *held = gsd_pod_find(st, spec.s.ns, spec.s.name);
    int only = held && gsd_pod_allocated(held) && (!spec.uid[0] || !strcmp(spec.uid, held->uid))
                   ? held->pl.node
                   : -1;
    for (size_t k = 0; !rc && k < pr.n; k++) {
        kept[k] = only >= 0 && pr.nodes[k].idx != only ? 0 : decide(st, probe, &pr.nodes[k]);
        rc = kept[k] < 0 ? kept[k] : 0;
    }
    if (rc == -EINVAL)
        gsd_reply_error(r, 400, pr.field, "%s", pr.msg);
    else if (rc)
        gsd_reply_error(r, 500, "", "out of memory");
    else
        gsd_reply_json(r, 200, result(&pr, kept));
    free(kept);
    preempt_free(&pr);
    gs_tenancy_probe_free(probe);
    gsd_podspec_clear(&spec);
}

/* ---- PriorityClasses, as Kubernetes' Priority admission reads them ---- */

int gsd_priority_class_known(const struct gsd_state *st, const char *name, const char *field,
                             int admin, struct gsd_req *r)
{
    const struct gs_priority_class_spec *c =
        name[0] ? gs_priority_class_find(&st->sched.pol, name) : NULL;
    if (c && !admin && c->value > GS_PRIORITY_USER_MAX) {
        gsd_reply_error(r, 403, field,
                        "%s: PriorityClass %s is the cluster's own (value %lld, above any a "
                        "policy may define): only the admin token may name it",
                        field, name, (long long)c->value);
        return 0;
    }
    if (!name[0] || c)
        return 1;
    gsd_reply_error(r, 400, field, "%s: no PriorityClass with name %s was found", field, name);
    return 0;
}
