/*
 * gpuschedd: the scheduler thread's state — the pod table, pods coming and going, the restart
 * from the store and the reload of the configuration. Everything here runs on the scheduler
 * thread only. Where a pod goes, and when, is the scheduler's (sched.c): this file keeps the
 * daemon's records of the pods, kept two ways, a chained hash by namespace/name and a list of
 * every pod in arrival order (lists and restarts read it).
 */
#include "state.h"
#include "agents.h"
#include "extender.h"
#include "forecast.h"
#include "inventory.h"
#include "kube.h"
#include "log.h"
#include "nodes.h"
#include "preempt.h"
#include "queue.h"
#include "textbuf.h"
#include "snapshot.h"
#include "store.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/diag.h"
#include "gpusched/fleet.h"
#include "gpusched/grow.h"
#include "gpusched/quantity.h"
#include "gpusched/scenario.h"
#include "gpusched/tenancy.h"
#include "gpusched/trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define UID_POOL 256 /* random bytes drawn at once for pod UIDs: 16 of them */

int64_t gsd_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t gsd_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static uint64_t key_hash(const char *ns, const char *name)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *p = ns; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    h = (h ^ '/') * 1099511628211ULL;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return h;
}

struct gsd_pod *gsd_pod_find(struct gsd_state *st, const char *ns, const char *name)
{
    if (!st->tab_cap)
        return NULL;
    struct gsd_pod *p = st->tab[key_hash(ns, name) & (st->tab_cap - 1)];
    while (p && (strcmp(p->spec.ns, ns) || strcmp(p->spec.name, name)))
        p = p->hnext;
    return p;
}

static int tab_grow(struct gsd_state *st)
{
    size_t cap = st->tab_cap ? st->tab_cap * 2 : 1024;
    struct gsd_pod **t = calloc(cap, sizeof(*t));
    if (!t)
        return -ENOMEM;
    for (struct gsd_pod *p = st->head; p; p = p->next) {
        size_t h = key_hash(p->spec.ns, p->spec.name) & (cap - 1);
        p->hnext = t[h];
        t[h] = p;
    }
    free(st->tab);
    st->tab = t;
    st->tab_cap = cap;
    return 0;
}

/* @p into (@in 1) or out of the pending list. */
static void pending_link(struct gsd_state *st, struct gsd_pod *p, int in)
{
    if (in) {
        p->pprev = NULL;
        p->pnext = st->pending;
        if (st->pending)
            st->pending->pprev = p;
        st->pending = p;
        return;
    }
    *(p->pprev ? &p->pprev->pnext : &st->pending) = p->pnext;
    if (p->pnext)
        p->pnext->pprev = p->pprev;
    p->pprev = p->pnext = NULL;
}

/* The count of pods in @state. */
static size_t *state_count(struct gsd_state *st, int state)
{
    return state == GSD_RUNNING    ? &st->nrunning
           : state == GSD_EVICTING ? &st->nevicting
                                   : &st->npending;
}

void gsd_pod_set_state(struct gsd_state *st, struct gsd_pod *p, int state)
{
    if (p->state == state)
        return;
    (*state_count(st, p->state))--;
    (*state_count(st, state))++;
    if (p->grp) {
        int delta = (state == GSD_RUNNING) - (p->state == GSD_RUNNING);
        p->grp->running += delta;
        p->grp->allocated += p->nominated ? delta : 0;
    }
    if ((p->state == GSD_PENDING) != (state == GSD_PENDING))
        pending_link(st, p, state == GSD_PENDING);
    p->state = (uint8_t)state;
}

int64_t *gsd_tenant_bytes(struct gsd_state *st, const char *tenant, int make)
{
    for (size_t i = 0; i < st->ntbytes; i++)
        if (!strcmp(st->tbytes[i].tenant, tenant))
            return &st->tbytes[i].bytes;
    struct gsd_tbytes *g = make ? realloc(st->tbytes, (st->ntbytes + 1) * sizeof(*g)) : NULL;
    if (!g)
        return NULL;
    st->tbytes = g;
    g += st->ntbytes++;
    snprintf(g->tenant, sizeof(g->tenant), "%s", tenant);
    g->bytes = 0;
    return &g->bytes;
}

/* Link @p into the table and the arrival list (at the tail: @p is the newest). */
static int link_pod(struct gsd_state *st, struct gsd_pod *p)
{
    if (st->npods + 1 > st->tab_cap / 2 && tab_grow(st))
        return -ENOMEM;
    int64_t *held = NULL;
    if (p->source == GSD_SRC_API && p->tenant[0] && !(held = gsd_tenant_bytes(st, p->tenant, 1)))
        return -ENOMEM;
    p->bytes = held ? (uint32_t)strlen(p->body) : 0;
    if (held)
        *held += p->bytes;
    size_t h = key_hash(p->spec.ns, p->spec.name) & (st->tab_cap - 1);
    p->hnext = st->tab[h];
    st->tab[h] = p;
    p->prev = st->tail;
    p->next = NULL;
    *(st->tail ? &st->tail->next : &st->head) = p;
    st->tail = p;
    st->npods++;
    if (p->state == GSD_PENDING)
        pending_link(st, p, 1);
    st->npending += p->state == GSD_PENDING;
    st->nrunning += p->state == GSD_RUNNING;
    st->nevicting += p->state == GSD_EVICTING;
    st->nnominated += p->nominated;
    st->nudge_due |= p->nominated;
    if (p->grp) {
        p->grp->members++;
        p->grp->running += p->state == GSD_RUNNING;
        p->grp->allocated += gsd_pod_allocated(p);
    }
    gsd_snap_touch(st, p);
    return 0;
}

char *gsd_nodes_ok_text(const struct gsd_state *st, const struct gs_pod_spec *sp)
{
    if (!sp->nodes_ok)
        return NULL;
    struct gsd_text t = {.max = SIZE_MAX / 2};
    gsd_text_put(&t, "", 0); /* "" for a set of none */
    for (size_t i = 0; i < sp->nodes_ok_n && i < gs_cluster_node_count(st->cluster); i++)
        if (sp->nodes_ok[i / 64] >> (i % 64) & 1)
            gsd_text_printf(&t, t.len ? ",%s" : "%s", gs_cluster_node_name(st->cluster, i));
    if (t.full)
        free(t.s);
    return t.full ? NULL : t.s;
}

int gsd_nodes_ok_read(const struct gsd_state *st, const char *names, struct gs_pod_spec *sp)
{
    size_t n = gs_cluster_node_count(st->cluster);
    uint64_t *ok = calloc((n + 63) / 64 + 1, sizeof(*ok));
    if (!ok)
        return -ENOMEM;
    for (const char *c = names; *c;) {
        size_t k = strcspn(c, ",");
        char name[GS_NAME_MAX];
        snprintf(name, sizeof(name), "%.*s", (int)(k < sizeof(name) ? k : 0), c);
        int i = name[0] ? gs_cluster_find(st->cluster, name) : -1;
        if (i >= 0 && (size_t)i < n)
            ok[i / 64] |= 1ull << (i % 64);
        c += k + (c[k] == ',');
    }
    free((void *)sp->nodes_ok);
    sp->nodes_ok = ok;
    sp->nodes_ok_n = (uint32_t)n;
    return 0;
}

void gsd_pod_nominate(struct gsd_state *st, struct gsd_pod *p)
{
    if (p->nominated)
        return;
    p->nominated = 1;
    st->nnominated++;
    if (p->grp)
        p->grp->allocated += gsd_pod_allocated(p);
    gsd_snap_touch(st, p);
}

void gsd_pod_unnominate(struct gsd_state *st, struct gsd_pod *p)
{
    if (!p->nominated)
        return;
    if (p->grp)
        p->grp->allocated -= gsd_pod_allocated(p);
    st->nnominated--;
    p->nominated = 0;
}

static void unlink_pod(struct gsd_state *st, struct gsd_pod *p)
{
    gsd_snap_forget(st, p);
    struct gsd_pod **pp = &st->tab[key_hash(p->spec.ns, p->spec.name) & (st->tab_cap - 1)];
    while (*pp != p)
        pp = &(*pp)->hnext;
    *pp = p->hnext;
    int64_t *held = p->bytes ? gsd_tenant_bytes(st, p->tenant, 0) : NULL;
    if (held)
        *held -= p->bytes;
    *(p->prev ? &p->prev->next : &st->head) = p->next;
    *(p->next ? &p->next->prev : &st->tail) = p->prev;
    st->npods--;
    if (p->state == GSD_PENDING)
        pending_link(st, p, 0);
    st->npending -= p->state == GSD_PENDING;
    st->nrunning -= p->state == GSD_RUNNING;
    st->nevicting -= p->state == GSD_EVICTING;
    st->nudge_due |= p->state == GSD_EVICTING; /* its node may take a nominated pod now */
    gsd_pod_unnominate(st, p);
    if (p->grp) {
        p->grp->members--;
        p->grp->running -= p->state == GSD_RUNNING;
    }
}

void gsd_pod_strings_free(struct gsd_pod *p)
{
    free((void *)p->spec.nodes_ok);
    free(p->meta);
    free(p->body);
    free(p->reason);
    free(p->last_eviction);
}

static void free_pod(struct gsd_pod *p)
{
    if (p)
        gsd_pod_strings_free(p);
    free(p);
}

int gsd_pod_reason(struct gsd_pod *p, const char *fmt, ...)
{
    char text[GSD_REASON_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (!strcmp(text, gsd_reason(p)))
        return 0;
    char *m = text[0] ? strdup(text) : NULL;
    if (text[0] && !m)
        return -ENOMEM;
    free(p->reason);
    p->reason = m;
    return 1;
}

/* A random RFC 4122 version 4 UUID, as Kubernetes gives pods. Its bytes come from a pool that
 * getrandom() fills UID_POOL bytes at a time: one system call for 16 pods, not one a pod. */
static void new_uid(char out[GSD_UID_MAX])
{
    static _Thread_local uint8_t pool[UID_POOL];
    static _Thread_local size_t left;
    static const char hex[] = "0123456789abcdef";
    uint8_t b[16] = {0};
    if (left < sizeof(b))
        left = getrandom(pool, sizeof(pool), 0) == (ssize_t)sizeof(pool) ? sizeof(pool) : 0;
    if (left >= sizeof(b)) {
        memcpy(b, pool + sizeof(pool) - left, sizeof(b));
        left -= sizeof(b);
    } else {
        uint64_t t = (uint64_t)gsd_mono_us();
        memcpy(b, &t, sizeof(t));
    }
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    for (int i = 0; i < 16; i++) { /* 8-4-4-4-12 hex digits */
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *out++ = '-';
        *out++ = hex[b[i] >> 4];
        *out++ = hex[b[i] & 15];
    }
    *out = '\0';
}

static void set_ferr(struct gsd_ferr *e, int status, const char *field, const char *msg)
{
    e->status = status;
    snprintf(e->field, sizeof(e->field), "%s", field);
    snprintf(e->msg, sizeof(e->msg), "%s", msg);
}

/* The names and labels the API shows, from @p's spec; and its PodGroup record. */
static void pod_names(struct gsd_state *st, struct gsd_pod *p)
{
    p->gpucores = 0;
    for (int i = 0; i < p->spec.ncontainers; i++)
        if (p->spec.containers[i].gpucores > p->gpucores)
            p->gpucores = (int32_t)p->spec.containers[i].gpucores;
    p->models[0] = '\0';
    for (int m = 0, off = 0; m < GS_MODEL_MAX && off < (int)sizeof(p->models); m++)
        if (p->spec.model_mask & (1u << m))
            off += snprintf(p->models + off, sizeof(p->models) - (size_t)off, off ? "|%s" : "%s",
                            gs_catalog_at(m)->name);
    p->grp = p->spec.group[0] ? gsd_group_find(st, p->spec.ns, p->spec.group) : NULL;
    /* until the scheduler says (gsd_sched_sync()), the queue it would take (the core's rule): a
     * pod the policy holds back never gets one from it, and is counted in this one's pending; a
     * member whose PodGroup is not made yet, in its annotation's, else `default` */
    const struct gs_podgroup_spec *g = p->grp ? &p->grp->spec
                                       : p->spec.group[0]
                                           ? gsd_group_of_files(st->cfg, p->spec.ns, p->spec.group)
                                           : NULL;
    snprintf(p->queue, sizeof(p->queue), "%s", gs_pod_queue(&p->spec, g));
}

/* @spec's labels, annotations and PriorityClass as a pod keeps them (p->meta): JSON text, keys
 * sorted (malloc'd; NULL out of memory). */
static char *spec_meta(const struct gsd_podspec *spec)
{
    json_t *m = json_pack("{sOsO}", "labels", spec->labels, "annotations", spec->annotations);
    if (m && spec->s.priority_class[0])
        json_object_set_new(m, "priorityClassName", json_string(spec->s.priority_class));
    char *meta = m ? json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(m);
    return meta;
}

int gsd_pod_same(const struct gsd_pod *p, const struct gsd_podspec *spec, const char *tenant)
{
    return p->source == GSD_SRC_API && p->body && spec->body && !strcmp(p->body, spec->body) &&
           !strcmp(p->tenant, tenant ? tenant : "");
}

/* A new pod record of @spec (its body, labels and annotations taken). */
static int new_pod(struct gsd_state *st, struct gsd_podspec *spec, const char *tenant, int source,
                   struct gsd_pod **out, struct gsd_ferr *e)
{
    char *meta = spec_meta(spec);
    struct gsd_pod *p = meta ? calloc(1, sizeof(*p)) : NULL;
    if (!p) {
        free(meta);
        set_ferr(e, 500, "", "out of memory");
        return -ENOMEM;
    }
    p->meta = meta;
    if (strlen(meta) > GSD_META_MAX) {
        free_pod(p);
        set_ferr(e, 400, "metadata.annotations",
                 "labels and annotations together exceed 1 MiB as JSON");
        return -EINVAL;
    }
    p->body = spec->body;
    spec->body = NULL;
    p->spec = spec->s;
    spec->s.nodes_ok = NULL; /* the pod's now */
    p->sid = -1;
    pod_names(st, p);
    snprintf(p->tenant, sizeof(p->tenant), "%s", tenant ? tenant : "");
    memcpy(p->uid, spec->uid, sizeof(p->uid));
    if (!spec->uid[0])
        new_uid(p->uid);
    p->source = (uint8_t)source;
    p->seq = st->next_seq++;
    p->submit_us = gsd_sched_now(st);
    p->pl.node = -1;
    p->state = GSD_PENDING;
    *out = p;
    return 0;
}

int gsd_tenant_bytes_over(struct gsd_state *st, const char *tenant, int64_t add, char *msg,
                          size_t size)
{
    const int64_t *held = gsd_tenant_bytes(st, tenant, 0), max = st->cfg->max_pod_bytes_per_tenant;
    int64_t now = held ? *held : 0;
    if (now + add <= max)
        return 0;
    snprintf(msg, size,
             "tenant %s holds %lld bytes of pods and PodGroups and this one is %lld more: past "
             "the daemon's maxPodBytesPerTenant of %lld; delete some first",
             tenant, (long long)now, (long long)add, (long long)max);
    return 1;
}

/* Would @spec take @tenant past maxPodBytesPerTenant? 1 after writing @e (403, as the API server
 * refuses a pod past its namespace's ResourceQuota); 0 no. */
static int over_held(struct gsd_state *st, const struct gsd_podspec *spec, const char *tenant,
                     struct gsd_ferr *e)
{
    char msg[GSD_REASON_MAX];
    if (!gsd_tenant_bytes_over(st, tenant, spec->body ? (int64_t)strlen(spec->body) : 0, msg,
                               sizeof(msg)))
        return 0;
    set_ferr(e, 403, "", msg);
    return 1;
}

struct gsd_pod *gsd_pod_add(struct gsd_state *st, struct gsd_podspec *spec, const char *tenant,
                            int source, int node, struct gsd_ferr *e)
{
    struct gsd_pod *p;
    if (gsd_pod_find(st, spec->ns, spec->name)) {
        set_ferr(e, 409, "metadata.name", "a pod of that name exists in the namespace");
        return NULL;
    }
    if (st->npods >= (size_t)st->cfg->max_pods) {
        char msg[200];
        snprintf(msg, sizeof(msg),
                 "the daemon holds maxPods (%lld) pods, of every tenant; cancel some first (a "
                 "ResourceQuota's pods in each namespace keeps one tenant from taking them all)",
                 (long long)st->cfg->max_pods);
        set_ferr(e, 507, "", msg);
        return NULL;
    }
    if (source == GSD_SRC_API && tenant && tenant[0] && over_held(st, spec, tenant, e))
        return NULL;
    if (new_pod(st, spec, tenant, source, &p, e))
        return NULL;
    int rc = gsd_sched_submit(st, p, e);
    if (rc == -EINVAL && node < 0 && st->nodes_from_kube &&
        gs_fleet_card_count(gs_tenancy_fleet(st->sched.tn)) == 0) {
        /* no GPU node has joined yet (gpuschedd installed first): what the pod asks is measured
         * against no card at all; it waits, held back as a reload holds one, and is submitted
         * again as each Node joins (rebuild()) */
        gsd_pod_reason(p, "0/%zu nodes are available: no GPU node has joined yet (%.200s)",
                       gs_cluster_node_count(st->cluster), e->msg);
        rc = 0;
    }
    if (rc) {
        free_pod(p);
        return NULL;
    }
    if (link_pod(st, p)) {
        gsd_sched_forget(st, p, 0);
        free_pod(p);
        set_ferr(e, 500, "", "out of memory");
        return NULL;
    }
    if (gsd_store_pod_insert(st->store, p, NULL, "")) {
        set_ferr(e, 503, "", "the store failed; the daemon restarts from its last commit");
        st->failed = 1;
        return NULL; /* memory is abandoned with the process: the store is the truth */
    }
    char key[GSD_KEY_MAX]; /* NS/NAME, as every log line names a pod */
    snprintf(key, sizeof(key), "%s/%s", p->spec.ns, p->spec.name);
    if (node < 0)
        gsd_log("info", "pod submitted", "pod", key, "tenant", p->tenant, NULL);
    st->nudge_due |= p->grp != NULL; /* its gang may be whole again: its held mates are told */
    if (node >= 0) {                 /* the extender's bind: there or nowhere */
        rc = gs_tenancy_bind_to(st->sched.tn, gsd_sched_now(st), p->sid, node);
        if (rc == 0)
            rc = gsd_sched_take(st);
        const char *on = gs_cluster_node_name(st->cluster, (size_t)node);
        if (rc == 1) {
            gsd_sched_sync(st, p);
            set_ferr(e, 409, "Node", p->reason ? p->reason : "does not fit");
            gsd_log("info", "bind refused: the pod does not fit the node", "pod", key, "tenant",
                    p->tenant, "node", on, "reason", e->msg, NULL);
            gsd_pod_cancel(st, p);
            return NULL;
        }
        if (rc == 0)
            gsd_log("info", "pod bound", "pod", key, "tenant", p->tenant, "node", on, NULL);
    } else if (!st->held) {
        rc = gsd_sched_run(st);
    }
    if (rc < 0) {
        set_ferr(e, rc == -EIO ? 503 : 500, "", rc == -EIO ? "the store failed" : "out of memory");
        return NULL;
    }
    gsd_sched_sync(st, p);
    return p;
}

/* A string annotation @key of @ann, or NULL. */
static const char *ann_str(const json_t *ann, const char *key)
{
    return json_string_value(json_object_get(ann, key));
}

/* Whether @s is a decimal number of 1 to 4 digits, no sign or space. */
static int small_decimal(const char *s)
{
    size_t n = s ? strspn(s, "0123456789") : 0;
    return n > 0 && n <= 4 && !s[n];
}

int gsd_pod_assigned(const struct gsd_state *st, const json_t *ann, struct gsd_assigned *out,
                     char *why, size_t cap)
{
    const char *node = ann_str(ann, GSD_NODE_ANNOTATION), *idx = ann_str(ann, GSD_CARDS_ANNOTATION);
    const char *milli = ann_str(ann, "gpusched.io/gpu-milli");
    const char *mig = ann_str(ann, "gpusched.io/mig-profile");
    const char *start = ann_str(ann, "gpusched.io/mig-placement");
    if (!json_object_get(ann, GSD_NODE_ANNOTATION))
        return -ENOENT;
    const char *bad = !node || !*node                              ? GSD_NODE_ANNOTATION
                      : gs_gpu_list_parse(idx, &out->gpu_mask) < 0 ? GSD_CARDS_ANNOTATION
                      : !small_decimal(milli)                      ? "gpusched.io/gpu-milli"
                      : mig && !small_decimal(start)               ? "gpusched.io/mig-placement"
                      : mig && strlen(mig) >= sizeof(out->mig)     ? "gpusched.io/mig-profile"
                                                                   : NULL;
    if (bad) {
        snprintf(why, cap, "annotation %s is missing or malformed", bad);
        return -EINVAL;
    }
    out->mig_start = mig ? atoi(start) : -1;
    out->gpu_milli = atoi(milli);
    snprintf(out->mig, sizeof(out->mig), "%s", mig ? mig : "");
    out->node = gs_cluster_find(st->cluster, node);
    if (out->node < 0) {
        snprintf(why, cap,
                 "annotation " GSD_NODE_ANNOTATION ": node %.200s is not in the inventory", node);
        return -EINVAL;
    }
    return 0;
}

/* Why the cards of @a cannot be held by the pod being adopted, into @why (@cap bytes). */
static void misfit(struct gsd_state *st, const struct gsd_assigned *a, char *why, size_t cap)
{
    struct gs_node_info ni;
    const char *node = gs_cluster_node_name(st->cluster, (size_t)a->node);
    if (!gs_cluster_node_info(st->cluster, (size_t)a->node, &ni) && ni.gpus < GS_GPUS_MAX &&
        a->gpu_mask >> ni.gpus) {
        snprintf(why, cap,
                 "annotation " GSD_CARDS_ANNOTATION ": node %s has no card %d (it has %d)", node,
                 31 - __builtin_clz(a->gpu_mask), ni.gpus);
        return;
    }
    for (const struct gsd_pod *p = st->head; p; p = p->next)
        if (p->state == GSD_RUNNING && p->pl.node == a->node && (p->pl.gpu_mask & a->gpu_mask)) {
            snprintf(why, cap,
                     "annotation " GSD_CARDS_ANNOTATION ": a card on %s is held by pod %s/%s", node,
                     p->spec.ns, p->spec.name);
            return;
        }
    snprintf(why, cap,
             "annotation " GSD_CARDS_ANNOTATION ": the cards on %s do not fit what the pod asks "
             "(their number, model, share or MIG mode)",
             node);
}

struct gsd_pod *gsd_pod_adopt(struct gsd_state *st, struct gsd_podspec *spec, const char *tenant,
                              const struct gsd_assigned *a, struct gsd_ferr *e)
{
    struct gsd_pod *p;
    if (gsd_pod_find(st, spec->ns, spec->name) || st->npods >= (size_t)st->cfg->max_pods) {
        set_ferr(e, 409, "", "a pod of that name is held, or the daemon holds maxPods pods");
        return NULL;
    }
    if (new_pod(st, spec, tenant, GSD_SRC_EXTENDER, &p, e))
        return NULL;
    int rc = gsd_sched_submit(st, p, e);
    if (rc) {
        free_pod(p);
        return NULL;
    }
    rc = gsd_sched_adopt(st, p, a->node, a->gpu_mask, a->mig_start);
    if (rc == 1)
        misfit(st, a, e->msg, sizeof(e->msg));
    else if (rc == 0 &&
             (strcmp(p->mig, a->mig) || (!p->mig[0] && (int)p->pl.gpu_milli != a->gpu_milli))) {
        rc = 1; /* the annotations say another share than the pod asks: not what gpuschedd bound */
        snprintf(e->msg, sizeof(e->msg),
                 "annotations gpusched.io/gpu-milli %d, gpusched.io/mig-profile %s: the pod asks "
                 "%u milli-GPU a card%s%s",
                 a->gpu_milli, a->mig[0] ? a->mig : "none", p->pl.gpu_milli,
                 p->mig[0] ? " as MIG " : "", p->mig);
    }
    if (rc == 0 && link_pod(st, p))
        rc = -ENOMEM;
    if (rc) {
        gsd_sched_forget(st, p, 0);
        free_pod(p);
        e->status = rc == 1 ? 409 : 500;
        if (rc != 1)
            snprintf(e->msg, sizeof(e->msg), "out of memory");
        return NULL;
    }
    p->bound = 1; /* Kubernetes runs it bound: only its going releases the cards */
    const char *node = gs_cluster_node_name(st->cluster, (size_t)a->node);
    if (gsd_store_pod_insert(st->store, p, node, gsd_node_model(st, a->node))) {
        set_ferr(e, 503, "", "the store failed; the daemon restarts from its last commit");
        st->failed = 1;
        return NULL; /* memory is abandoned with the process: the store is the truth */
    }
    st->adopted_total++;
    return p;
}

/* @p leaves the daemon at @now: cancelled (@done 0) or its walltime over (1). */
static int pod_leave(struct gsd_state *st, struct gsd_pod *p, int64_t now, int done)
{
    if (gsd_store_pod_delete(st->store, p, now)) {
        st->failed = 1;
        return -EIO;
    }
    gsd_sched_forget(st, p, done);
    st->gangs_check |= p->grp != NULL; /* its mates may be held short of it */
    char key[GSD_KEY_MAX];
    snprintf(key, sizeof(key), "%s/%s", p->spec.ns, p->spec.name);
    gsd_log("info", done ? "pod completed" : "pod cancelled", "pod", key, "tenant", p->tenant,
            NULL);
    unlink_pod(st, p);
    *(done ? &st->completed_total : &st->cancelled_total) += 1;
    free_pod(p);
    return 0;
}

int gsd_pod_cancel(struct gsd_state *st, struct gsd_pod *p)
{
    return pod_leave(st, p, gsd_sched_now(st), 0);
}

int gsd_pod_complete(struct gsd_state *st, struct gsd_pod *p, int64_t now, int succeeded)
{
    /* it counts towards minMember from now on, across a restart too */
    if (p->grp && succeeded && p->grp->succeeded < GSD_SUCCEEDED_MAX) {
        p->grp->succeeded++;
        if (gsd_store_group_succeeded(st->store, p->grp)) {
            st->failed = 1;
            return -EIO;
        }
    }
    return pod_leave(st, p, now, 1);
}

/*
 * A stored pod of a store written before pods kept their body (schema < 4): a Pod object made
 * from the columns it has, for the parser.
 */
static char *legacy_body(const struct gsd_pod *p)
{
    json_t *meta = json_loads(p->meta, 0, NULL);
    json_t *lim = json_pack("{s:I, s:I}", "cpu", (json_int_t)0, "memory", (json_int_t)0);
    char q[32];
    json_object_set_new(lim, "cpu",
                        json_string(gs_quantity_format_milli(p->req.cpu_milli, q, sizeof(q))));
    gs_quantity_format_mib(p->req.memory_mib, q, sizeof(q));
    json_object_set_new(lim, "memory", json_string(q));
    if (p->mig[0]) {
        snprintf(q, sizeof(q), "nvidia.com/mig-%s", p->mig);
        json_object_set_new(lim, q, json_integer(1));
    } else if (p->req.num_gpu) {
        json_object_set_new(lim, "nvidia.com/gpu", json_integer(p->req.num_gpu));
        if (p->gpumem_mib)
            json_object_set_new(lim, "nvidia.com/gpumem", json_integer(p->gpumem_mib));
        if (p->gpucores)
            json_object_set_new(lim, "nvidia.com/gpucores", json_integer(p->gpucores));
    }
    json_t *md = json_pack("{s:s, s:s, s:O, s:O}", "name", p->spec.name, "namespace", p->spec.ns,
                           "labels", json_object_get(meta, "labels"), "annotations",
                           json_object_get(meta, "annotations"));
    if (p->models[0])
        json_object_set_new(json_object_get(md, "annotations"), "gpusched.io/gpu-model",
                            json_string(p->models));
    json_t *spec =
        json_pack("{s:[{s:s, s:{s:o}}]}", "containers", "name", "main", "resources", "limits", lim);
    const char *pc = json_string_value(json_object_get(meta, "priorityClassName"));
    if (spec && pc)
        json_object_set_new(spec, "priorityClassName", json_string(pc));
    json_t *pod = json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "v1", "kind", "Pod", "metadata",
                            md, "spec", spec);
    char *s = pod ? json_dumps(pod, JSON_COMPACT) : NULL;
    json_decref(pod);
    json_decref(meta);
    return s;
}

/* A stored running pod back on its cards; when that is impossible it waits again. */
int gsd_pod_unstart(struct gsd_state *st, struct gsd_pod *p, int64_t now_us)
{
    int rc = p->id ? gsd_store_pod_unstart(st->store, p, now_us) : 0;
    p->start_us = 0; /* pending again: no start, as the store (and so a restart) has it */
    return rc;
}

static int restore_running(struct gsd_state *st, struct gsd_pod *p, const char *node,
                           struct gs_placement pl, int mig_start)
{
    int idx = gs_cluster_find(st->cluster, node);
    int rc = idx < 0 ? -ENOENT
                     : gs_tenancy_restore(st->sched.tn, p->sid, idx, pl.gpu_mask, mig_start,
                                          p->start_us);
    if (rc == 0) {
        gsd_sched_sync(st, p);
        return 0;
    }
    if (rc == -ENOMEM)
        return rc;
    gsd_pod_reason(p, "was running on %s, which %s", node,
                   idx < 0 ? "the inventory no longer lists" : "cannot hold it any more");
    char key[GSD_KEY_MAX];
    snprintf(key, sizeof(key), "%s/%s", p->spec.ns, p->spec.name);
    gsd_log("warn", "pod put back to pending", "pod", key, "reason", gsd_reason(p), NULL);
    gsd_pod_set_state(st, p, GSD_PENDING);
    p->pl = (struct gs_placement){.node = -1};
    return gsd_pod_unstart(st, p, gsd_sched_now(st));
}

/* A stored pod's history, given to the scheduler as a snapshot's annotations give it
 * (sim.gpusched.io/evictions, first-start, charged, saved): gs_tenancy_submit() and
 * gs_tenancy_restore() carry it on. */
static void history(struct gsd_pod *p)
{
    p->spec.evictions = p->evictions;
    p->spec.charged = p->charged;
    p->spec.saved_us = p->saved_us;
    if (p->first_start_us >= 0) {
        p->spec.first_start_us = p->first_start_us;
        p->spec.placed_given |= GS_PLACED_FIRST;
    }
}

/* The files of config @c, as a message names them: the policy files alone (@policy: what only
 * they hold, such as Queues), or the DaemonConfig's and theirs (a rule either may give). */
static const char *config_files(const struct gsd_config *c, int policy, char *buf, size_t size)
{
    const char *cfg = c->path ? c->path : "the config";
    if (!c->policy_paths)
        return cfg;
    if (policy)
        return c->policy_paths;
    snprintf(buf, size, "%s, %s", cfg, c->policy_paths);
    return buf;
}

/* A running pod that the config now in force refuses (@why): it cannot be held back as a pending
 * one, which would give its cards to another pod while it still runs on them, so the start or
 * reload is refused. Return: -EINVAL with @d. */
static int running_refused(const struct gsd_state *st, const struct gsd_pod *p, const char *node,
                           const char *why, struct gs_diag *d)
{
    char files[1024];
    return gs_diag_error(d,
                         "%s: pod %s/%s runs on node %s, and this config would refuse it (%s): "
                         "give the config what the pod needs, or cancel the pod under the config "
                         "it was admitted under first",
                         config_files(st->cfg, 0, files, sizeof(files)), p->spec.ns, p->spec.name,
                         node, why);
}

struct restore_ctx {
    struct gsd_state *st;
    struct gs_diag *d; /* why the start is refused */
};

/* One stored pod: parsed again from its body and handed to the scheduler as it was. */
static int restore_one(void *ud, struct gsd_stored *sp)
{
    struct restore_ctx *ctx = ud;
    struct gsd_state *st = ctx->st;
    struct gsd_pod *p = malloc(sizeof(*p));
    if (!p) {
        gsd_pod_strings_free(&sp->pod);
        return -ENOMEM;
    }
    *p = sp->pod;
    p->sid = -1;
    if (!p->body && !(p->body = legacy_body(p))) {
        free_pod(p);
        return -ENOMEM;
    }
    if (!gs_uid_ok(p->uid)) { /* bound through the extender before UIDs were checked */
        char key[GSD_KEY_MAX];
        snprintf(key, sizeof(key), "%s/%s", p->spec.ns, p->spec.name);
        gsd_log("warn",
                "pod's UID cannot name its folder on the node: its node's agent is not "
                "given it (delete it, or let kube-scheduler bind it again)",
                "pod", key, "uid", p->uid, NULL);
    }
    struct gs_diag d;
    struct gsd_ferr e = {0};
    char field[128];
    gs_diag_init(&d);
    if (p->state == GSD_EVICTING) { /* the scheduler has forgotten it: the API server has not */
        if (!st->cfg->kube) {       /* no API server to ask any more: nothing to wait for */
            int rc = gsd_store_pod_delete(st->store, p, gsd_sched_now(st));
            free_pod(p);
            return rc;
        }
        p->pl.node = gs_cluster_find(st->cluster, sp->node);
        int rc = link_pod(st, p);
        if (rc)
            free_pod(p);
        else
            gsd_sched_evict(st, p, 1); /* unless sent already: the crash may have come first */
        return rc;
    }
    /* read as POST read it (jansson, then the parser): YAML's reader refuses characters a JSON
     * string may hold (DEL, the C1 controls), and the pod would not read back */
    json_t *body = json_loads(p->body, 0, NULL);
    struct gs_pod_spec spec; /* not read into p->spec: a pod not read keeps the stored names */
    int rc = body ? gs_pod_parse_json("store", body, 0, &spec, field, sizeof(field), &d)
                  : gs_diag_error(&d, "store: the stored pod is not JSON");
    json_decref(body);
    if (rc == 0 && (strcmp(spec.ns, p->spec.ns) || strcmp(spec.name, p->spec.name)))
        rc = gs_diag_error(&d, "store: the stored pod's body names another pod, %.63s/%.200s",
                           spec.ns, spec.name); /* a store edited by hand: its row's names stay */
    if (rc == 0) {
        p->spec = spec;
        history(p);
        pod_names(st, p);
        if (sp->nodes_ok) /* nominated: still only where kube-scheduler's filters let it */
            rc = gsd_nodes_ok_read(st, sp->nodes_ok, &p->spec);
    }
    if (rc == 0) {
        rc = gsd_sched_submit(st, p, &e);
        if (rc == -EINVAL) { /* the policy now refuses it: it stays, held back, saying why */
            gsd_pod_reason(p, "%s", e.msg);
            rc = 0;
        }
    } else if (rc != -ENOMEM) {
        gsd_pod_reason(p, "cannot read the stored pod again: %.200s", d.msg);
        rc = p->state == GSD_RUNNING /* no config could take it: the row is at fault */
                 ? gs_diag_error(ctx->d,
                                 "gpusched.db: pod %s/%s runs on node %s, and its stored Pod "
                                 "cannot be read again (%s): the store was damaged or edited; "
                                 "restore it from a copy",
                                 p->spec.ns, p->spec.name, sp->node, d.msg)
                 : 0;
    }
    if (!rc && p->state == GSD_RUNNING && p->sid < 0)
        rc = running_refused(st, p, sp->node, gsd_reason(p), ctx->d);
    struct gs_placement pl = p->pl;
    p->seen_us = p->nominated ? gsd_now_us() : 0; /* kube-scheduler has a while to ask again */
    int linked = !rc && !(rc = link_pod(st, p));
    if (!rc && p->state == GSD_RUNNING)
        rc = restore_running(st, p, sp->node, pl, p->mig_start);
    if (rc && (rc != -EIO || !linked)) { /* -EIO once linked: the store failed, the pod stays */
        if (linked)
            unlink_pod(st, p);
        free_pod(p);
    }
    return rc;
}

/* What running pod @p did of its walltime in this run, by the clock of @old, the scheduler it
 * ran under: the new one resumes it there (a snapshot's sim.gpusched.io/done), rather than
 * counting its run from its start at the speed it has now. */
static void progress(struct gsd_pod *p, struct gs_tenancy *old)
{
    struct gs_tenancy_pod v;
    p->spec.placed_given &= ~GS_PLACED_DONE;
    if (p->state != GSD_RUNNING || p->sid < 0 || gs_tenancy_pod(old, p->sid, &v) < 0 ||
        v.state != GS_POD_RUNNING)
        return;
    p->spec.done_us = v.done_us;
    p->spec.placed_given |= GS_PLACED_DONE;
}

/* Every pod held, from scheduler @old to the new one (a reload): running ones back where they
 * are, as far through their runs as they were. */
static int resubmit(struct gsd_state *st, struct gs_tenancy *old, struct gs_diag *d)
{
    struct gsd_ferr e = {0};
    gs_tenancy_advance(old, gsd_sched_now(st)); /* their progress by now, not by its last pass */
    for (struct gsd_pod *p = st->head; p; p = p->next) {
        progress(p, old);
        p->sid = -1;
        if (p->state == GSD_EVICTING)
            continue;
        history(p);
        int rc = gsd_sched_submit(st, p, &e);
        if (rc == -EINVAL && p->state == GSD_RUNNING)
            return running_refused(st, p, gs_cluster_node_name(st->cluster, (size_t)p->pl.node),
                                   e.msg, d);
        if (rc == -EINVAL) { /* a pending pod stays, held back, saying why */
            gsd_pod_reason(p, "%s", e.msg);
            continue;
        }
        if (rc)
            return rc;
        if (p->state == GSD_RUNNING &&
            (rc = gs_tenancy_restore(st->sched.tn, p->sid, p->pl.node, p->pl.gpu_mask, p->mig_start,
                                     p->start_us)) != 0)
            return rc;
    }
    return 0;
}

const char *gsd_node_model(const struct gsd_state *st, int node)
{
    struct gs_node_info ni;
    if (node < 0 || gs_cluster_node_info(st->cluster, (size_t)node, &ni) || ni.model < 0)
        return "";
    return gs_catalog_at(ni.model)->name;
}

/* Whether config @cfg leaves every pod held with the tenant it was admitted under: a namespace
 * moved to another tenant, or a tenant removed, would leave its pods billed and listed under one
 * tenant while another's token (or none) reads and cancels them. Return: 0; -EINVAL with @d. */
static int owners_kept(const struct gsd_state *st, const struct gsd_config *cfg, struct gs_diag *d)
{
    for (const struct gsd_pod *p = st->head; p; p = p->next) {
        const struct gsd_tenant *t = gsd_tenant_of_ns(cfg, p->spec.ns);
        if (!strcmp(t ? t->name : "", p->tenant))
            continue;
        return gs_diag_error(d,
                             "%s: namespace %s, which holds pod %s/%s of tenant %s, would belong "
                             "to %s%s: cancel its pods first, or leave the namespace with its "
                             "tenant",
                             cfg->path ? cfg->path : "the config", p->spec.ns, p->spec.ns,
                             p->spec.name, p->tenant[0] ? p->tenant : "(none)",
                             t ? "tenant " : "no tenant", t ? t->name : "");
    }
    return 0;
}

/* Whether the queues now in force (the scheduler's policy) still hold every queue a pod or
 * PodGroup of POST names, as POST checks it: Volcano deletes no Queue that holds pods or
 * PodGroups, and a pod whose queue went would run in `default` while its annotation names
 * another, which neither a snapshot nor a retried POST would take. A pod kube-scheduler brought
 * (the extender) was never held to the Queue documents: one naming a queue they lack runs in
 * `default`, as before. Return: 0; -EINVAL with @d. */
static int queues_kept(const struct gsd_state *st, struct gs_diag *d)
{
    char files[1024];
    const char *path = config_files(st->cfg, 1, files, sizeof(files)), *q = NULL, *what = "pod";
    const char *ns = "", *name = "";
    for (const struct gsd_pod *p = st->head; p && !q; p = p->next)
        if (p->source == GSD_SRC_API && p->state != GSD_EVICTING && p->spec.queue[0] &&
            gsd_queue_find(st, p->spec.queue) < 0)
            q = p->spec.queue, ns = p->spec.ns, name = p->spec.name;
    for (size_t i = 0; i < st->ngroups && !q; i++) {
        const struct gs_podgroup_spec *g = &st->groups[i]->spec;
        if (g->queue[0] && gsd_queue_find(st, g->queue) < 0)
            q = g->queue, ns = g->ns, name = g->name, what = "PodGroup";
    }
    if (!q)
        return 0;
    return gs_diag_error(d,
                         "%s: Queue %s, which %s %s/%s names, would be gone: let its pods and "
                         "PodGroups finish or cancel them first, or keep the Queue",
                         path, q, what, ns, name);
}

static const double lat_bounds[] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                    0.01,    0.025,  0.05,    0.1,    0.25,  0.5,    1.0};

int gsd_state_init(struct gsd_state *st, struct gsd_config *cfg, struct gs_cluster *cluster,
                   struct gs_scenario *inv, const char *data_dir, const struct gsd_runopts *run,
                   struct gs_diag *d)
{
    memset(st, 0, sizeof(*st));
    st->manual_clock = run ? run->manual_clock : 0;
    st->way = run ? run->way : GS_WAY_FULL;
    st->nodes_from_kube = run ? run->nodes_from_kube : 0;
    st->cfg = cfg;
    st->cluster = cluster;
    st->inv = inv;
    st->started_us = gsd_now_us();
    st->gangs_check = 1; /* the clocks of gangs short at a restart start now */
    st->short_due = INT64_MAX;
    st->sched_lat = st->commit_lat = (struct gsd_hist){lat_bounds, 14, {0}, 0, 0};
    st->ext = calloc(GSD_EXT_CACHE, sizeof(*st->ext));
    if (!st->ext)
        return -ENOMEM;
    int rc = gsd_forecaster_new(data_dir, &st->fc);
    if (rc)
        return gs_diag_error_code(d, rc, "%s: cannot make the forecast's refits: %s", data_dir,
                                  strerror(-rc));
    rc = gsd_store_open(data_dir, cfg->store_sync_full, &st->store, d);
    if (rc)
        return rc;
    st->next_seq = gsd_store_next_seq(st->store);
    if (st->manual_clock) /* on from where it was: no stored time in its future */
        st->manual_now_us = gsd_store_last_us(st->store);
    int64_t t0 = gsd_mono_us();
    rc = gsd_store_begin(st->store);
    if (!rc)
        rc = gsd_groups_restore(st, d);
    if (!rc)
        rc = gsd_groups_apart(st, cfg, d);
    if (!rc)
        rc = gsd_sched_open(st, d);
    struct restore_ctx ctx = {st, d};
    if (!rc)
        rc = gsd_store_load(st->store, restore_one, &ctx);
    if (!rc && (owners_kept(st, cfg, d) || queues_kept(st, d)))
        rc = -EINVAL; /* what a reload refuses, a start does too */
    if (!rc)
        gsd_groups_recount(st);
    if (!rc)
        rc = gsd_health_init(st, run ? run->api_down : NULL);
    if (!rc)
        rc = gsd_agents_init(st);
    if (!rc)
        rc = gsd_sched_run(st);
    if (!rc)
        rc = gsd_store_commit(st->store);
    else
        gsd_store_rollback(st->store);
    if (rc)
        return d->msg[0] ? rc
                         : gs_diag_error_code(d, rc, "%s/gpusched.db: cannot restore the pods (%s)",
                                              data_dir, strerror(-rc));
    char n[3][24];
    snprintf(n[0], sizeof(n[0]), "%zu", st->nrunning);
    snprintf(n[1], sizeof(n[1]), "%zu", st->npending);
    snprintf(n[2], sizeof(n[2]), "%lld", (long long)(gsd_mono_us() - t0) / 1000);
    gsd_log("info", "store restored", "running", n[0], "pending", n[1], "ms", n[2], NULL);
    return 0;
}

void gsd_state_free(struct gsd_state *st)
{
    gsd_forecaster_free(st->fc); /* first: its thread reads the store's file */
    gsd_agents_free(st);
    for (struct gsd_pod *p = st->head, *next; p; p = next) {
        next = p->next;
        free_pod(p);
    }
    for (size_t i = 0; st->ext && i < GSD_EXT_CACHE; i++)
        gsd_podspec_clear(&st->ext[i].spec);
    free(st->ext);
    for (size_t i = 0; i < st->nevictions; i++)
        gsd_bind_free(st->evictions[i]);
    free(st->evictions);
    gsd_extender_free(st);
    free(st->tab);
    free(st->tbytes);
    json_decref(st->bill_cache);
    free(st->health);
    gsd_sched_close(st);
    gsd_groups_free(st);
    gsd_store_close(st->store);
    gs_cluster_free(st->cluster);
    gs_scenario_free(st->inv);
    gsd_config_free(st->cfg);
    memset(st, 0, sizeof(*st));
}

/* The completed members of the config files' PodGroups, from scheduler @old (its policy @pol) to
 * the new one, where it has them still (the API's come with their stored count). */
static int carry_done(struct gsd_state *st, const struct gs_tenancy *old,
                      const struct gs_policy *pol)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < pol->npodgroups; i++) {
        const struct gs_podgroup_spec *g = &pol->podgroups[i];
        int32_t n = gs_tenancy_podgroup_done(old, g->ns, g->name);
        if (n > 0)
            rc = gs_tenancy_podgroup_succeeded(st->sched.tn, g->ns, g->name, n);
        rc = rc == -ENOENT ? 0 : rc;
    }
    return rc;
}

/* Each card's mode history, from scheduler @old to the new one, after the pods: the mode it last
 * took and since when, which /v1/snapshot writes and cardModes' hold reads. A mode the new
 * policy does not let the card have (-EINVAL) is not carried: its history starts anew. */
static int carry_modes(struct gsd_state *st, const struct gs_tenancy *old)
{
    const struct gs_fleet *f = gs_tenancy_fleet(old);
    int rc = gs_tenancy_advance(st->sched.tn, gsd_sched_now(st));
    for (size_t i = 0; !rc && i < gs_fleet_node_count(f); i++)
        for (int g = 0; !rc && g < gs_fleet_node_gpus(f, i); g++) {
            int64_t since;
            enum gs_card_mode m = gs_fleet_card_history(f, i, g, &since);
            if (m != GS_CARD_FREE)
                rc = gs_tenancy_card_mode(st->sched.tn, (int32_t)i, g, (int)m, since);
            rc = rc == -EINVAL ? 0 : rc;
        }
    return rc;
}

/*
 * A new scheduler over the inventory and configuration now in force, every pod held submitted
 * again and the running ones put back as far through their runs as they were, the completed
 * members of each gang counted and each card's mode history carried, the nodes' health and topology
 * told again. Return: 0 (the old scheduler freed); else the old one is back in force, as it was.
 */
static int rebuild(struct gsd_state *st, struct gs_diag *d)
{
    struct gsd_sched keep = st->sched;
    memset(&st->sched, 0, sizeof(st->sched));
    int rc = gsd_sched_open(st, d);
    if (!rc)
        rc = carry_done(st, keep.tn, &keep.pol);
    if (!rc)
        rc = queues_kept(st, d);
    if (!rc)
        rc = resubmit(st, keep.tn, d);
    if (!rc)
        rc = carry_modes(st, keep.tn);
    if (!rc)
        rc = gsd_health_apply(st);
    if (rc) {
        gsd_sched_close(st);
        st->sched = keep;
        for (size_t i = 0; i < keep.nsid; i++)
            if (keep.by_sid[i])
                keep.by_sid[i]->sid = (int32_t)i;
        return rc;
    }
    for (size_t i = 0; i < keep.nsid; i++)
        if (keep.by_sid[i])
            keep.by_sid[i]->sid = -1;
    for (size_t i = 0; i < st->sched.nsid; i++)
        if (st->sched.by_sid[i])
            st->sched.by_sid[i]->sid = (int32_t)i;
    gs_tenancy_free(keep.tn);
    free(keep.tenants);
    free(keep.by_sid);
    gsd_snap_touch_all(st); /* queues, priorities and reasons may be others */
    for (struct gsd_pod *p = st->head; p; p = p->next)
        gsd_sched_sync(st, p);
    return gsd_sched_take(st);
}

int gsd_state_add_node(struct gsd_state *st, const struct gs_trace_node *r, const char *zone,
                       const struct gs_taint *taints, int ntaints, struct gs_diag *d)
{
    int rc = gsd_inventory_append(st->inv, st->cluster, r, zone, taints, ntaints, d);
    if (rc == -EINVAL)
        return rc; /* refused: nothing changed */
    if (!rc)
        rc = gsd_health_grow(st);
    if (!rc)
        rc = gsd_agents_grow(st);
    if (!rc)
        rc = gsd_snap_nodes(st);
    gsd_extender_free(st); /* the NodeNames last read may name it: resolved again */
    if (!rc)
        rc = rebuild(st, d);
    if (rc) { /* the old scheduler reads arrays that moved: the daemon cannot go on */
        st->failed = 1;
        return gs_diag_error_code(d, rc, "node %s: cannot take it in (%s)", r->name, strerror(-rc));
    }
    char n[24];
    snprintf(n, sizeof(n), "%zu", gs_cluster_node_count(st->cluster));
    gsd_log("info", "node added", "node", r->name, "zone", zone, "nodes", n, NULL);
    return 0;
}

int gsd_state_reshape_node(struct gsd_state *st, size_t i, const struct gs_trace_node *r,
                           const char *zone, struct gs_diag *d)
{
    struct gs_node_info ni = {.gpus = r->gpus, .model = r->gpus ? r->model : -1};
    if (gs_fleet_pod_count(gs_tenancy_fleet(st->sched.tn), i) || !gsd_agent_cards_agree(st, i, &ni))
        return -EBUSY; /* the pods there hold cards of the old shape, the agent reported them */
    int rc = gsd_inventory_reshape(st->inv, st->cluster, i, r, zone, d);
    if (rc == -EINVAL || rc == -ENOENT)
        return rc; /* refused: nothing changed */
    if (!rc)
        rc = gsd_snap_nodes(st);
    gsd_extender_free(st); /* what it resolved of the node's cards */
    if (!rc)
        rc = rebuild(st, d);
    if (rc) { /* the old scheduler reads arrays that moved: the daemon cannot go on */
        st->failed = 1;
        return gs_diag_error_code(d, rc, "node %s: cannot take its new shape in (%s)", r->name,
                                  strerror(-rc));
    }
    char g[16];
    snprintf(g, sizeof(g), "%d", r->gpus);
    gsd_log("info", "node reshaped", "node", r->name, "gpus", g, NULL);
    return 0;
}

int gsd_state_set_taints(struct gsd_state *st, size_t i, const struct gs_taint *taints, int ntaints,
                         struct gs_diag *d)
{
    int rc = gs_node_set_taints(&st->inv->policy, i, taints, ntaints);
    if (rc) /* nothing changed */
        return gs_diag_error_code(d, rc, "node %zu: cannot take its taints in (%s)", i,
                                  strerror(-rc));
    rc = rebuild(st, d);
    if (rc) { /* the old scheduler reads the taints that moved: the daemon cannot go on */
        st->failed = 1;
        return gs_diag_error_code(d, rc, "node %s: cannot take its taints in (%s)",
                                  gs_cluster_node_name(st->cluster, i), strerror(-rc));
    }
    gsd_snap_node_touch(st, i);
    gsd_log("info", "node taints changed", "node", gs_cluster_node_name(st->cluster, i), NULL);
    return 0;
}

int gsd_state_reload(struct gsd_state *st, struct gsd_config *cfg, struct gs_diag *d)
{
    struct gsd_config *old = st->cfg;
    if (owners_kept(st, cfg, d) || gsd_groups_apart(st, cfg, d))
        return -EINVAL;
    st->cfg = cfg;
    int rc = rebuild(st, d);
    if (rc) { /* the old policy stays in force, as it was */
        st->cfg = old;
        return rc;
    }
    gsd_config_free(old);
    json_decref(st->bill_cache); /* the rate card may have changed */
    st->bill_cache = NULL;
    st->gangs_check = 1; /* so may extender.shortGangHoldSeconds */
    char n[24];
    snprintf(n, sizeof(n), "%zu", cfg->ntenants);
    gsd_log("info", "config reloaded", "path", cfg->path ? cfg->path : "", "policy_files",
            cfg->policy_paths ? cfg->policy_paths : "", "tenants", n, NULL);
    return 0;
}

json_t *gsd_time_json(int64_t us)
{
    char buf[GS_TIME_TEXT_MAX];
    return json_string(gs_time_text(buf, us, 1));
}

json_t *gsd_pod_assignment(const struct gsd_state *st, const struct gsd_pod *p)
{
    struct gsd_podview v;
    gsd_podview_fill(st, p, &v);
    return gsd_podview_assignment(&v);
}

json_t *gsd_pod_json(struct gsd_state *st, struct gsd_pod *p)
{
    if (p->state == GSD_PENDING)
        gsd_sched_sync(st, p);
    struct gsd_podview v;
    gsd_podview_fill(st, p, &v);
    return gsd_podview_json(&v);
}
