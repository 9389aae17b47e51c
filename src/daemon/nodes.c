/*
 * gpuschedd: nodes — their health as node agents report it, and the node endpoints.
 *
 * Heartbeats are opt-in per node, like a kubelet's: a node is watched from its first heartbeat on,
 * and a watched node silent for nodeMonitorGracePeriodSeconds (default 40 s, kube-controller-
 * manager's node-monitor-grace-period) becomes NotReady: its pods are requeued (a PodGroup whole)
 * and its cards leave placement until the next heartbeat. A Node object NotReady under Kubernetes
 * takes its cards out of placement too, but evicts only the pods Kubernetes does not run there
 * (evicts()). A node that never sent one stays Ready,
 * so an inventory without agents schedules as before.
 *
 * A card reported unhealthy leaves placement until it is reported healthy. Whether its pods go
 * back to pending depends on the Xid (gs_xid_loses_work()): after the Xids that end the running
 * contexts they are requeued; after others the card drains (its pods run on, nothing new comes).
 * The node agent decides what is unhealthy, as NVIDIA's k8s-device-plugin does (that one ignores
 * the application Xids 13, 31, 43, 45, 68 and 109 and marks the card unhealthy on the others).
 *
 * The scheduler is told (gs_tenancy_node_ready(), gs_tenancy_card_health()): a node not ready,
 * or a card unhealthy, takes no pod on any path, and the evictions it decides are carried out
 * like any other (sched.c). Only changes are stored, never each heartbeat: a watched
 * node's silence is counted again from the daemon's start.
 */
#include "nodes.h"
#include "agents.h"
#include "api.h"
#include "log.h"
#include "server.h"
#include "snapshot.h"
#include "store.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/fleet.h"
#include "gpusched/scenario.h"
#include "gpusched/mig.h"
#include "gpusched/tenancy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t gsd_clock_us(const struct gsd_state *st)
{
    return st->manual_clock ? st->manual_now_us : gsd_mono_us();
}

/* Tell the scheduler node @i is ready or not (@gpu < 0), or card @gpu is healthy or not, and
 * carry out what that decided: the pods it evicts wait again. Return: 0; -EIO; -ENOMEM. */
static int tell(struct gsd_state *st, size_t i, int gpu, int ok, int evict)
{
    int64_t now = gsd_sched_now(st);
    int rc = gpu < 0 ? gs_tenancy_node_ready(st->sched.tn, now, (int32_t)i, ok, evict)
                     : gs_tenancy_card_health(st->sched.tn, now, (int32_t)i, gpu, ok, evict);
    return rc ? rc : gsd_sched_take(st);
}

/* Whether node @i's going NotReady evicts its pods here: an agent's silence, or no Kubernetes.
 * A Node object NotReady (or deleted) under Kubernetes evicts none of the pods bound there:
 * Kubernetes' taint manager does, by each pod's tolerations (300 s by default, never for one
 * that tolerates not-ready for ever), and their cards go back once the API server says they are
 * gone. Pods not bound there (posted to gpuschedd, or held for kube-scheduler's bind) wait again:
 * nothing else would move them. */
static int evicts(const struct gsd_state *st, size_t i)
{
    return !st->cfg->kube || !st->health[i].api_down;
}

/* Node @i went NotReady without evicting (evicts()): its pods not bound by Kubernetes wait
 * again. Return: 0; -ENOMEM. */
static int requeue_unbound(struct gsd_state *st, size_t i)
{
    char why[GSD_REASON_MAX];
    snprintf(why, sizeof(why), "node %s is not ready: its pods not bound by Kubernetes wait again",
             gs_cluster_node_name(st->cluster, i));
    int rc = 0;
    for (struct gsd_pod *p = st->head; p && !rc; p = p->next)
        if (p->state == GSD_RUNNING && p->pl.node == (int32_t)i &&
            (p->source != GSD_SRC_EXTENDER || p->nominated))
            rc = gs_tenancy_requeue(st->sched.tn, gsd_sched_now(st), p->sid, why);
    return rc ? rc : gsd_sched_take(st);
}

/* Tell the scheduler node @i is not ready, evicting as evicts() says. Return: 0; -ENOMEM. */
static int went_not_ready(struct gsd_state *st, size_t i)
{
    int evict = evicts(st, i), rc = tell(st, i, -1, 0, evict);
    return rc || evict ? rc : requeue_unbound(st, i);
}

static int store_node(struct gsd_state *st, size_t i)
{
    if (!gsd_store_node_put(st->store, gs_cluster_node_name(st->cluster, i), st->health[i].ready,
                            st->health[i].since_us))
        return 0;
    st->failed = 1;
    return -EIO;
}

struct loader {
    struct gsd_state *st;
    int64_t now;
};

static int find_stored(struct gsd_state *st, const char *node)
{
    int i = gs_cluster_find(st->cluster, node);
    if (i < 0)
        gsd_log("warn", "stored health of a node the inventory no longer lists: not used", "node",
                node, NULL);
    return i;
}

static int load_node(void *ud, const char *node, int ready, int64_t since_us)
{
    struct loader *l = ud;
    int i = find_stored(l->st, node);
    if (i >= 0)
        l->st->health[i] = (struct gsd_node_health){
            .watched = 1, .ready = ready != 0, .last_beat_us = l->now, .since_us = since_us};
    return 0;
}

static int load_gpu(void *ud, const char *node, int gpu, int xid, int64_t since_us)
{
    struct loader *l = ud;
    int i = find_stored(l->st, node);
    (void)since_us;
    if (i >= 0 && gpu >= 0 && gpu < GS_GPUS_MAX) {
        l->st->health[i].bad_mask |= 1u << gpu;
        l->st->health[i].xid[gpu] = xid;
    }
    return 0;
}

int gsd_health_init(struct gsd_state *st, const uint8_t *api_down)
{
    size_t n = gs_cluster_node_count(st->cluster);
    st->health = calloc(n ? n : 1, sizeof(*st->health));
    if (!st->health)
        return -ENOMEM;
    st->nhealth = n;
    for (size_t i = 0; i < n; i++)
        st->health[i].ready = 1;
    struct loader l = {st, gsd_clock_us(st)};
    int rc = gsd_store_health_load(st->store, load_node, load_gpu, &l);
    for (size_t i = 0; !rc && i < n; i++) {
        st->health[i].api_down = api_down ? api_down[i] : 0;
        if (st->health[i].api_down)
            gsd_log("warn", "node not ready", "node", gs_cluster_node_name(st->cluster, i), "by",
                    "Node object", NULL);
        st->not_ready += !gsd_node_ready(&st->health[i]);
        if (!gsd_node_ready(&st->health[i])) /* a pod stored running there waits too */
            rc = went_not_ready(st, i);
        for (int g = 0; !rc && g < GS_GPUS_MAX; g++)
            if (st->health[i].bad_mask & (1u << g))
                rc = tell(st, i, g, 0, 0);
    }
    return rc;
}

/* Node @i's agent (@agent) or Node object (@api) says Ready or not (-1: unchanged): the count,
 * the log and the scheduler follow when the two together change. Return: 0; -ENOMEM. */
static int set_ready(struct gsd_state *st, size_t i, int agent, int api)
{
    struct gsd_node_health *h = &st->health[i];
    int was = gsd_node_ready(h);
    gsd_snap_node_touch(st, i);
    h->ready = agent >= 0 ? (uint8_t)agent : h->ready;
    h->api_down = api >= 0 ? (uint8_t)!api : h->api_down;
    int now = gsd_node_ready(h);
    if (now == was)
        return 0;
    h->since_us = gsd_sched_now(st); /* ready_changed, for a node without an agent too */
    if (api >= 0)                    /* an agent's change is logged where its cause is known */
        gsd_log(now ? "info" : "warn", now ? "node ready" : "node not ready", "node",
                gs_cluster_node_name(st->cluster, i), "by", "Node object", NULL);
    st->not_ready += now ? (size_t)-1 : 1;
    return (now ? tell(st, i, -1, 1, 1) : went_not_ready(st, i)) ? -ENOMEM : 0;
}

int gsd_health_api(struct gsd_state *st, size_t i, int ready)
{
    return set_ready(st, i, -1, ready);
}

int gsd_health_grow(struct gsd_state *st)
{
    size_t n = gs_cluster_node_count(st->cluster);
    struct gsd_node_health *h = realloc(st->health, (n ? n : 1) * sizeof(*h));
    if (!h)
        return -ENOMEM;
    for (size_t i = st->nhealth; i < n; i++)
        h[i] = (struct gsd_node_health){.ready = 1};
    st->health = h;
    st->nhealth = n;
    return 0;
}

int gsd_health_apply(struct gsd_state *st)
{
    int rc = 0;
    int64_t now = gsd_sched_now(st);
    for (size_t i = 0; !rc && i < st->nhealth; i++) {
        if (!gsd_node_ready(&st->health[i]))
            rc = gs_tenancy_node_ready(st->sched.tn, now, (int32_t)i, 0, evicts(st, i));
        for (int g = 0; !rc && g < GS_GPUS_MAX; g++)
            if (st->health[i].bad_mask & (1u << g))
                rc = gs_tenancy_card_health(st->sched.tn, now, (int32_t)i, g, 0, 0);
    }
    return rc ? rc : gsd_agents_apply(st);
}

int gsd_health_beat(struct gsd_state *st, size_t i)
{
    struct gsd_node_health *h = &st->health[i];
    h->last_beat_us = gsd_clock_us(st);
    gsd_snap_node_touch(st, i);
    if (h->watched && h->ready)
        return 0;
    if (!h->ready)
        gsd_log("info", "node ready", "node", gs_cluster_node_name(st->cluster, i), NULL);
    if (!h->ready && set_ready(st, i, 1, -1))
        return -ENOMEM;
    h->watched = 1;
    h->since_us = gsd_sched_now(st); /* on the clock of every time shown */
    return store_node(st, i);
}

int gsd_health_gpu(struct gsd_state *st, size_t i, int gpu, int healthy, int xid)
{
    struct gsd_node_health *h = &st->health[i];
    const char *name = gs_cluster_node_name(st->cluster, i);
    char g[8], x[16];
    gsd_snap_node_touch(st, i);
    snprintf(g, sizeof(g), "%d", gpu);
    snprintf(x, sizeof(x), "%d", xid);
    if (healthy) {
        if (!(h->bad_mask & (1u << gpu)))
            return 0;
        h->bad_mask &= ~(1u << gpu);
        h->xid[gpu] = 0;
        gsd_log("info", "gpu healthy", "node", name, "gpu", g, NULL);
    } else {
        h->bad_mask |= 1u << gpu;
        h->xid[gpu] = xid;
        gsd_log("warn", "gpu unhealthy", "node", name, "gpu", g, xid ? "xid" : NULL, x,
                NULL); /* none given: none logged, not xid=0 */
    }
    int rc = tell(st, i, gpu, healthy, !healthy && gs_xid_loses_work(xid));
    if (rc)
        return rc;
    if (!gsd_store_gpu_put(st->store, name, gpu, healthy, xid, gsd_now_us()))
        return 0;
    st->failed = 1;
    return -EIO;
}

int gsd_health_expire(struct gsd_state *st)
{
    int64_t now = gsd_clock_us(st);
    for (size_t i = 0; i < gs_cluster_node_count(st->cluster); i++) {
        struct gsd_node_health *h = &st->health[i];
        if (!h->watched || !h->ready || now - h->last_beat_us < st->cfg->node_grace_us)
            continue;
        const char *name = gs_cluster_node_name(st->cluster, i);
        char secs[24];
        snprintf(secs, sizeof(secs), "%lld", (long long)(st->cfg->node_grace_us / 1000000));
        gsd_log("warn", "node not ready", "node", name, "silent_s", secs, NULL);
        h->since_us = gsd_sched_now(st); /* on the clock of every time shown */
        gsd_snap_node_touch(st, i);
        int rc = set_ready(st, i, 0, -1);
        if (rc || store_node(st, i))
            return rc ? rc : -EIO;
    }
    return 0;
}

int64_t gsd_health_deadline(const struct gsd_state *st)
{
    int64_t t = INT64_MAX;
    for (size_t i = 0; !st->manual_clock && i < gs_cluster_node_count(st->cluster); i++)
        if (st->health[i].watched && st->health[i].ready &&
            st->health[i].last_beat_us + st->cfg->node_grace_us < t)
            t = st->health[i].last_beat_us + st->cfg->node_grace_us;
    return t;
}

/* ---- what GET /v1/nodes shows ---- */

void gsd_card_use(const struct gsd_state *st, size_t i, int g, int32_t *alloc, int32_t *down)
{
    const struct gs_fleet *f = gs_tenancy_fleet(st->sched.tn);
    int32_t c = gs_fleet_card_compute(f, i, g);
    *alloc = c < 1000 ? c : 1000;
    *down = gs_fleet_node_ready(f, i) && gs_fleet_card_healthy(f, i, g) ? 0 : 1000 - *alloc;
}

/* A MIG card's instances: profile, first memory slice and memory slices (NVIDIA's -lgipp size,
 * the MIG table's), out of the card's "mig_slices". */
static json_t *mig_json(const struct gs_mig_card *c)
{
    json_t *inst = json_array();
    for (int k = 0; c && k < c->ninst; k++) {
        const struct gs_mig_profile *p = &gs_mig_model_at(c->model)->profiles[c->inst[k].profile];
        json_array_append_new(inst, json_pack("{s:s, s:i, s:i}", "profile", p->name, "start",
                                              c->inst[k].start, "size", p->memory_slices));
    }
    return inst;
}

static json_t *cards_json(const struct gsd_state *st, size_t i, const struct gs_node_info *ni,
                          const char *tenant)
{
    const struct gsd_node_health *h = &st->health[i];
    const struct gs_fleet *f = gs_tenancy_fleet(st->sched.tn);
    json_t *cards = json_array(), *pods[GS_GPUS_MAX];
    for (int g = 0; g < ni->gpus; g++)
        pods[g] = json_array();
    for (const struct gsd_pod *p = st->head; p; p = p->next)
        for (int g = 0; p->state == GSD_RUNNING && p->pl.node == (int32_t)i && g < ni->gpus; g++)
            if ((p->pl.gpu_mask & (1u << g)) && (!tenant || !strcmp(tenant, p->tenant))) {
                char key[GSD_KEY_MAX];
                snprintf(key, sizeof(key), "%s/%s", p->spec.ns, p->spec.name);
                json_array_append_new(pods[g], json_string(key));
            }
    for (int g = 0; g < ni->gpus; g++) {
        int bad = (h->bad_mask >> g) & 1;
        int32_t alloc, down;
        gsd_card_use(st, i, g, &alloc, &down);
        const struct gs_mig_card *mig = gs_fleet_card_mig(f, i, g);
        /* memory as nvidia.com/gpumem counts it: a share's declared MiB, a whole card all */
        json_t *c = json_pack(
            "{s:i, s:s, s:i, s:i, s:I, s:I, s:b, s:o, s:o, s:o}", "index", g, "mode",
            gs_card_mode_name(gs_fleet_card_mode(f, i, g)), "allocated_milli", alloc, "free_milli",
            1000 - alloc - down, "gpumem_mib", (json_int_t)gs_fleet_card_mem(f, i, g),
            "gpumem_allocated_mib", (json_int_t)gs_fleet_card_mem_used(f, i, g), "healthy", !bad,
            "xid", bad && h->xid[g] ? json_integer(h->xid[g]) : json_null(), "pods", pods[g],
            "mig_instances", mig_json(mig));
        if (c && mig && mig->ninst)
            json_object_set_new(c, "mig_slices",
                                json_integer(gs_mig_model_at(mig->model)->memory_slices));
        json_array_append_new(cards, c);
    }
    return cards;
}

/* Node @i's taints as its Node object writes them: [{"key", "value", "effect"}]. */
static json_t *taints_json(const struct gs_policy *pol, size_t i)
{
    json_t *a = json_array();
    for (int32_t k = 0; i < pol->nnodes && k < pol->nodes[i].ntaints; k++) {
        const struct gs_taint *tn = &pol->taints[pol->nodes[i].taint_first + k];
        json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "key", tn->key, "value", tn->value,
                                           "effect", gs_effect_name(tn->effect)));
    }
    return a;
}

json_t *gsd_node_json(const struct gsd_state *st, size_t i, int cards, const char *tenant)
{
    const struct gsd_node_health *h = &st->health[i];
    struct gs_node_info ni;
    gs_cluster_node_info(st->cluster, i, &ni);
    int64_t alloc = 0, down = 0, cpu_left, mem_left;
    gs_fleet_node_left(gs_tenancy_fleet(st->sched.tn), i, &cpu_left, &mem_left);
    json_t *bad = json_array();
    for (int g = 0; g < ni.gpus; g++) {
        int32_t a, d;
        gsd_card_use(st, i, g, &a, &d);
        alloc += a;
        down += d;
        if (h->bad_mask & (1u << g))
            json_array_append_new(bad, json_integer(g));
    }
    json_t *n = json_pack(
        "{s:s, s:s?, s:o, s:s?, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:b, s:o, s:o}",
        "name", ni.name, "zone", st->inv->policy.nodes[i].zone[0] ? ni.zone : NULL, "taints",
        taints_json(&st->inv->policy, i), "gpu_model",
        ni.model >= 0 ? gs_catalog_at(ni.model)->name : NULL, "gpus", ni.gpus,
        "gpu_milli_allocated", (json_int_t)alloc, "gpu_milli_free",
        (json_int_t)(ni.gpus * 1000 - alloc - down), "gpu_milli_unavailable", (json_int_t)down,
        "cpu_milli", (json_int_t)ni.cpu_milli, "cpu_milli_free", (json_int_t)cpu_left, "memory_mib",
        (json_int_t)ni.memory_mib, "memory_mib_free", (json_int_t)mem_left, "ready",
        gsd_node_ready(h), "heartbeats", h->watched, "ready_changed",
        h->watched || h->since_us ? gsd_time_json(h->since_us) : json_null(), "unhealthy_gpus",
        bad);
    const struct gs_policy *pol = &st->inv->policy;
    const struct gs_node_template *nt = &pol->templates[pol->nodes[i].template_index];
    json_object_set_new(n, "max_pods", json_integer(gs_node_max_pods(nt)));
    json_object_set_new(n, "gpu_replicas",
                        nt->gpu_replicas ? json_integer(nt->gpu_replicas) : json_null());
    if (nt->cpu_milli == GS_UNSET) { /* a template without cpuMilli: CPU bounds no pod */
        json_object_set_new(n, "cpu_milli", json_null());
        json_object_set_new(n, "cpu_milli_free", json_null());
    }
    if (nt->memory_mib == GS_UNSET) {
        json_object_set_new(n, "memory_mib", json_null());
        json_object_set_new(n, "memory_mib_free", json_null());
    }
    struct gs_node_template tp; /* what the node's agent registered is what placement reads */
    if (gsd_agent_topology(st, i, &tp)) {
        memcpy(ni.pcie_domain, tp.pcie_domain, sizeof(ni.pcie_domain));
        memcpy(ni.nvlink_group, tp.nvlink_group, sizeof(ni.nvlink_group));
    }
    json_t *pcie = json_array(), *nvl = json_array();
    for (int g = 0; g < ni.gpus; g++) {
        json_array_append_new(pcie, json_integer(ni.pcie_domain[g]));
        json_array_append_new(nvl, ni.nvlink_group[g] == GS_NO_GROUP
                                       ? json_null()
                                       : json_integer(ni.nvlink_group[g]));
    }
    if (n && (json_object_set_new(n, "pcie_domain", pcie) ||
              json_object_set_new(n, "nvlink_group", nvl))) {
        json_decref(n);
        return NULL;
    }
    if (n && cards)
        json_object_set_new(n, "gpu", cards_json(st, i, &ni, tenant));
    return n;
}

/* ---- POST /v1/nodes/NAME/heartbeat, POST /v1/nodes/NAME/gpus/INDEX/health, POST /v1/clock ---- */

/* gpu_index() - INDEX of "/gpus/INDEX/health": plain decimal digits, at most 3, no sign, space or
 * leading zero, one spelling per card (sscanf's %d took "+1", " 1" and wrapped 4294967299 round
 * to card 3); -1 when not that shape. */
static int gpu_index(const char *tail)
{
    if (strncmp(tail, "/gpus/", 6) != 0)
        return -1;
    const char *d = tail + 6;
    size_t n = strspn(d, "0123456789");
    if (n == 0 || n > 3 || (n > 1 && d[0] == '0') || strcmp(d + n, "/health") != 0)
        return -1;
    int v = 0;
    for (size_t k = 0; k < n; k++)
        v = v * 10 + (d[k] - '0');
    return v;
}

/* The body of a health report: {"healthy": bool, "xid": 1..65535 (only when unhealthy)}. */
/* A heartbeat's body: none, or {} (whitespace around it). Return: 1; 0, answered 400. */
static int empty_object(struct gsd_req *r)
{
    json_t *b;
    if (gsd_body_json(r, &b))
        return 0;
    int ok = json_is_object(b) && json_object_size(b) == 0;
    json_decref(b);
    if (!ok)
        gsd_reply_error(r, 400, "", "body: a heartbeat takes no body, or {}");
    return ok;
}

static int read_health(struct gsd_req *r, int *healthy, int *xid)
{
    json_t *b;
    const char *k;
    json_t *v;
    int rc = -1;
    *healthy = -1;
    *xid = 0;
    if (gsd_body_json(r, &b))
        return -1;
    if (!json_is_object(b)) {
        gsd_reply_error(r, 400, "", "body: expected {\"healthy\": false, \"xid\": 79}");
        goto out;
    }
    json_object_foreach(b, k, v)
    {
        if (!strcmp(k, "healthy") && json_is_boolean(v)) {
            *healthy = json_is_true(v);
        } else if (!strcmp(k, "xid") && json_is_integer(v) && json_integer_value(v) >= 1 &&
                   json_integer_value(v) <= 65535) {
            *xid = (int)json_integer_value(v);
        } else {
            gsd_reply_error(r, 400, k,
                            "%.64s: expected \"healthy\" (true or false) and \"xid\" "
                            "(1..65535)",
                            k);
            goto out;
        }
    }
    if (*healthy < 0)
        gsd_reply_error(r, 400, "healthy", "healthy: required, true or false");
    else if (*healthy && *xid)
        gsd_reply_error(r, 400, "xid", "xid: only with \"healthy\": false");
    else
        rc = 0;
out:
    json_decref(b);
    return rc;
}

/* A whole number field of @b in 0..@max, or -1 when absent; -2 when malformed. */
static int64_t clock_field(const json_t *b, const char *k, int64_t max)
{
    const json_t *v = json_object_get(b, k);
    if (!v)
        return -1;
    return json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= max
               ? json_integer_value(v)
               : -2;
}

/* The field of a /v1/clock body at fault ("" for the body: not an object, or not one of the
 * three), else NULL. @v: advance_seconds, advance_us and to_us as clock_field() read them. */
static const char *clock_fault(const json_t *b, const int64_t v[3])
{
    static const char *const keys[] = {"advance_seconds", "advance_us", "to_us", "pass"};
    const char *k;
    const json_t *x;
    json_object_foreach((json_t *)b, k, x)
    {
        size_t i = 0;
        while (i < 4 && strcmp(k, keys[i]))
            i++;
        if (i == 4 || (i < 3 && v[i] == -2) || (i == 3 && !json_is_boolean(x)))
            return i < 4 ? keys[i] : k;
    }
    return !json_is_object(b) || (v[0] != -1) + (v[1] != -1) + (v[2] != -1) != 1 ? "" : NULL;
}

/*
 * POST /v1/clock {"advance_seconds": N | "advance_us": N | "to_us": T, "pass": true}: move the
 * manual clock (gsd_sched_clock()); answers the clock, the next walltime end and whether passes
 * are held.
 */
static void clock_post(struct gsd_state *st, struct gsd_req *r)
{
    json_t *b;
    if (gsd_body_json(r, &b))
        return;
    const int64_t year = 86400LL * 366 * 1000000;
    const int64_t v[3] = {clock_field(b, "advance_seconds", year / 1000000),
                          clock_field(b, "advance_us", year),
                          clock_field(b, "to_us", GS_SCN_TIME_MAX_US)};
    const int64_t secs = v[0], us = v[1], to = v[2];
    const json_t *pass = json_object_get(b, "pass");
    const char *fault = clock_fault(b, v);
    if (!st->manual_clock) {
        gsd_reply_error(r, 404, "",
                        "no such endpoint: the daemon runs on the system clock "
                        "(start it with --manual-clock)");
    } else if (fault) { /* the field named: "advance_seconds": -1 was answered "body: ..." */
        gsd_reply_error(r, 400, fault,
                        "%s: expected one of advance_seconds (0..%lld), advance_us (0..%lld) or "
                        "to_us (0..%lld microseconds), and optionally pass (true or false)",
                        *fault ? fault : "body", (long long)(year / 1000000), (long long)year,
                        (long long)GS_SCN_TIME_MAX_US);
    } else if (to >= 0 && to < st->manual_now_us) {
        gsd_reply_error(r, 400, "to_us", "to_us: the clock is at %lld and never goes back",
                        (long long)st->manual_now_us);
    } else if (to < 0 &&
               st->manual_now_us + (secs >= 0 ? secs * 1000000 : us) > GS_SCN_TIME_MAX_US) {
        /* a snapshot continued from the clock holds times of at most 10 years, as a scenario */
        gsd_reply_error(r, 400, secs >= 0 ? "advance_seconds" : "advance_us",
                        "%s: the clock, at %lld, would pass %lld microseconds (10 years), the "
                        "latest a scenario or snapshot holds",
                        secs >= 0 ? "advance_seconds" : "advance_us", (long long)st->manual_now_us,
                        (long long)GS_SCN_TIME_MAX_US);
    } else {
        int64_t target = to >= 0 ? to : st->manual_now_us + (secs >= 0 ? secs * 1000000 : us);
        if (gsd_sched_clock(st, target, !pass || json_is_true(pass)))
            gsd_reply_error(r, 503, "", "the store failed");
        else { /* no end due is null, not INT64_MAX: a client would read that as a time */
            int64_t end = gs_tenancy_next_end(st->sched.tn);
            gsd_reply_json(
                r, 200,
                json_pack("{s:I, s:o, s:b}", "now_us", (json_int_t)st->manual_now_us, "next_end_us",
                          end == INT64_MAX ? json_null() : json_integer(end), "held", st->held));
        }
    }
    json_decref(b);
}

void gsd_node_post(struct gsd_state *st, struct gsd_req *r, const char *rest)
{
    char name[GS_NAME_MAX], tail[32];
    int gpu = -1, healthy, xid;
    if (!rest) {
        clock_post(st, r);
        return;
    }
    size_t nl = strcspn(rest, "/");
    snprintf(tail, sizeof(tail), "%.31s", rest + nl);
    if (nl >= sizeof(name) || (strcmp(tail, "/heartbeat") && (gpu = gpu_index(tail)) < 0)) {
        gsd_reply_error(r, 404, "",
                        "no such endpoint: POST /v1/nodes/NAME/heartbeat or "
                        "/v1/nodes/NAME/gpus/INDEX/health");
        return;
    }
    memcpy(name, rest, nl);
    name[nl] = '\0';
    int i = gs_cluster_find(st->cluster, name);
    struct gs_node_info ni;
    if (i < 0 || gs_cluster_node_info(st->cluster, (size_t)i, &ni)) {
        gsd_reply_error(r, 404, "", "node %.64s not found", name);
        return;
    }
    if (gpu >= ni.gpus) {
        gsd_reply_error(r, 404, "", "node %.64s has %d GPUs: no GPU %d", name, ni.gpus, gpu);
        return;
    }
    if (gpu < 0 && r->len && !empty_object(r))
        return;
    if (gpu >= 0 && read_health(r, &healthy, &xid))
        return;
    int rc =
        gpu < 0 ? gsd_health_beat(st, (size_t)i) : gsd_health_gpu(st, (size_t)i, gpu, healthy, xid);
    if (rc)
        gsd_reply_error(r, 503, "", "the store failed");
    else
        gsd_reply_json(r, 200, gsd_node_json(st, (size_t)i, gpu >= 0, NULL));
}
