/*
 * gpuschedd: nodes — their health as node agents report it, and the node endpoints.
 *
 * Heartbeats are opt-in per node, like a kubelet's: a node is watched from its first heartbeat on,
 * and a watched node silent for nodeMonitorGracePeriodSeconds (default 40 s, kube-controller-
 * manager's node-monitor-grace-period) becomes NotReady: its pods are requeued (a PodGroup whole)
 * and its cards leave placement until the next heartbeat. A node that never sent one stays Ready,
 * so an inventory without agents schedules as before.
 *
 * A card reported unhealthy leaves placement until it is reported healthy. Whether its pods go
 * back to pending depends on the Xid (gsd_xid_kills()): after the Xids that end the running
 * contexts they are requeued; after others the card drains (its pods run on, nothing new comes).
 * The node agent decides what is unhealthy, as NVIDIA's k8s-device-plugin does (that one ignores
 * the application Xids 13, 31, 43, 45, 68 and 109 and marks the card unhealthy on the others).
 *
 * What is unavailable is held in the engine (gsd_node_health), so the engine's every placement
 * path skips it without knowing why. Only changes are stored, never each heartbeat: a watched
 * node's silence is counted again from the daemon's start.
 */
#include "nodes.h"
#include "api.h"
#include "log.h"
#include "mig.h"
#include "server.h"
#include "store.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t gsd_clock_us(const struct gsd_state *st)
{
    return st->manual_clock ? st->manual_now_us : gsd_mono_us();
}

void gsd_clock_manual(struct gsd_state *st)
{
    st->manual_clock = 1;
    st->manual_now_us = 0;
    for (size_t i = 0; i < gs_cluster_node_count(st->cluster); i++)
        st->health[i].last_beat_us = 0;
}

int gsd_xid_kills(int xid)
{
    static const int kills[] = {0, 48, 63, 64, 74, 79, 94, 95};
    for (size_t i = 0; i < sizeof(kills) / sizeof(kills[0]); i++)
        if (xid == kills[i])
            return 1;
    return 0;
}

static int needs_hold(const struct gsd_node_health *h)
{
    return !h->ready || h->bad_mask;
}

static void hold_release(struct gsd_state *st, size_t i)
{
    struct gsd_node_health *h = &st->health[i];
    for (int g = 0; g < GS_GPUS_MAX; g++)
        if (h->held_milli[g]) {
            struct gs_pod_req req = {.num_gpu = 1, .gpu_milli = h->held_milli[g]};
            struct gs_placement pl = {(int32_t)i, 1u << g, h->held_milli[g]};
            gs_sched_release(st->sched, &req, &pl);
            h->held_milli[g] = 0;
        }
    if (h->held_cpu_milli || h->held_memory_mib) {
        struct gs_pod_req req = {.cpu_milli = h->held_cpu_milli, .memory_mib = h->held_memory_mib};
        gs_sched_release(st->sched, &req, &(struct gs_placement){(int32_t)i, 0, 0});
        h->held_cpu_milli = h->held_memory_mib = 0;
    }
}

/* Hold node @i's free share of every unavailable card, and all of a NotReady node's free CPU and
 * memory. Binding what is free cannot fail but for memory. */
static void hold_refresh(struct gsd_state *st, size_t i)
{
    struct gsd_node_health *h = &st->health[i];
    struct gs_node_info ni;
    struct gs_diag why;
    gs_diag_init(&why);
    hold_release(st, i);
    gs_cluster_node_info(st->cluster, i, &ni);
    for (int g = 0; g < ni.gpus; g++) {
        if ((h->ready && !(h->bad_mask & (1u << g))) || !ni.gpu_left[g])
            continue;
        struct gs_pod_req req = {.num_gpu = 1, .gpu_milli = ni.gpu_left[g]};
        struct gs_placement pl = {(int32_t)i, 1u << g, ni.gpu_left[g]};
        if (!gs_sched_bind_placement(st->sched, &req, &pl, &why))
            h->held_milli[g] = ni.gpu_left[g];
    }
    if (!h->ready && (ni.cpu_left || ni.memory_left)) {
        struct gs_pod_req req = {.cpu_milli = ni.cpu_left, .memory_mib = ni.memory_left};
        if (!gs_sched_bind_placement(st->sched, &req, &(struct gs_placement){(int32_t)i, 0, 0},
                                     &why)) {
            h->held_cpu_milli = ni.cpu_left;
            h->held_memory_mib = ni.memory_left;
        }
    }
    if (why.msg[0])
        gsd_log("error", "cannot hold back an unavailable node's capacity", "node", ni.name,
                "error", why.msg, NULL);
}

void gsd_health_released(struct gsd_state *st, int node)
{
    if (node >= 0 && needs_hold(&st->health[node]))
        hold_refresh(st, (size_t)node);
}

/* Requeue the running pods on node @i (on card @gpu only when >= 0). Return: 0; -EIO. */
static int requeue_on(struct gsd_state *st, size_t i, int gpu, const char *why)
{
    for (struct gsd_pod *p = st->head; p; p = p->next)
        if (p->state == GSD_RUNNING && p->pl.node == (int32_t)i &&
            (gpu < 0 || (gsd_pod_cards(p) & (1u << gpu))) && gsd_pod_requeue(st, p, why) < 0)
            return -EIO;
    return 0;
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

int gsd_health_init(struct gsd_state *st)
{
    size_t n = gs_cluster_node_count(st->cluster);
    st->health = calloc(n ? n : 1, sizeof(*st->health));
    if (!st->health)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        st->health[i].ready = 1;
    struct loader l = {st, gsd_clock_us(st)};
    int rc = gsd_store_health_load(st->store, load_node, load_gpu, &l);
    for (size_t i = 0; !rc && i < n; i++) {
        st->not_ready += !st->health[i].ready;
        if (!st->health[i].ready) /* a pod stored running there (an older store) waits too */
            rc = requeue_on(st, i, -1, "its node is NotReady");
        if (!rc && needs_hold(&st->health[i]))
            hold_refresh(st, i);
    }
    return rc;
}

int gsd_health_beat(struct gsd_state *st, size_t i)
{
    struct gsd_node_health *h = &st->health[i];
    h->last_beat_us = gsd_clock_us(st);
    if (h->watched && h->ready)
        return 0;
    if (!h->ready) {
        gsd_log("info", "node ready", "node", gs_cluster_node_name(st->cluster, i), NULL);
        h->ready = 1;
        st->not_ready--;
        hold_refresh(st, i);
        st->retry = 1;
    }
    h->watched = 1;
    h->since_us = gsd_now_us();
    return store_node(st, i);
}

int gsd_health_gpu(struct gsd_state *st, size_t i, int gpu, int healthy, int xid)
{
    struct gsd_node_health *h = &st->health[i];
    const char *name = gs_cluster_node_name(st->cluster, i);
    char g[8], x[16], why[GSD_REASON_MAX];
    snprintf(g, sizeof(g), "%d", gpu);
    snprintf(x, sizeof(x), "%d", xid);
    if (healthy) {
        if (!(h->bad_mask & (1u << gpu)))
            return 0;
        h->bad_mask &= ~(1u << gpu);
        h->xid[gpu] = 0;
        gsd_log("info", "gpu healthy", "node", name, "gpu", g, NULL);
        hold_refresh(st, i);
        st->retry = 1;
    } else {
        h->bad_mask |= 1u << gpu;
        h->xid[gpu] = xid;
        gsd_log("warn", "gpu unhealthy", "node", name, "gpu", g, "xid", x, NULL);
        snprintf(why, sizeof(why), "GPU %d of node %s failed (Xid %d)", gpu, name, xid);
        if (gsd_xid_kills(xid) && requeue_on(st, i, gpu, why))
            return -EIO;
        hold_refresh(st, i);
    }
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
        char why[GSD_REASON_MAX], secs[24];
        snprintf(secs, sizeof(secs), "%lld", (long long)(st->cfg->node_grace_us / 1000000));
        snprintf(why, sizeof(why), "node %s is NotReady: no heartbeat for %s s", name, secs);
        gsd_log("warn", "node not ready", "node", name, "silent_s", secs, NULL);
        h->ready = 0;
        st->not_ready++;
        h->since_us = gsd_now_us();
        if (requeue_on(st, i, -1, why) || store_node(st, i))
            return -EIO;
        hold_refresh(st, i);
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

static json_t *cards_json(const struct gsd_state *st, size_t i, const struct gs_node_info *ni,
                          const char *tenant)
{
    const struct gsd_node_health *h = &st->health[i];
    json_t *cards = json_array(), *pods[GS_GPUS_MAX];
    for (int g = 0; g < ni->gpus; g++)
        pods[g] = json_array();
    for (const struct gsd_pod *p = st->head; p; p = p->next)
        for (int g = 0; p->state == GSD_RUNNING && p->pl.node == (int32_t)i && g < ni->gpus; g++)
            if ((gsd_pod_cards(p) & (1u << g)) && (!tenant || !strcmp(tenant, p->tenant))) {
                char key[2 * GSD_NAME_MAX + 1];
                snprintf(key, sizeof(key), "%s/%s", p->ns, p->name);
                json_array_append_new(pods[g], json_string(key));
            }
    for (int g = 0; g < ni->gpus; g++) {
        int bad = (h->bad_mask >> g) & 1;
        json_t *card = json_pack(
            "{s:i, s:i, s:i, s:b, s:o, s:o}", "index", g, "allocated_milli",
            1000 - ni->gpu_left[g] - h->held_milli[g], "free_milli", ni->gpu_left[g], "healthy",
            !bad, "xid", bad && h->xid[g] ? json_integer(h->xid[g]) : json_null(), "pods", pods[g]);
        if (card)
            gsd_mig_card_json(st, i, g, card);
        json_array_append_new(cards, card);
    }
    return cards;
}

json_t *gsd_node_json(const struct gsd_state *st, size_t i, int cards, const char *tenant)
{
    const struct gsd_node_health *h = &st->health[i];
    struct gs_node_info ni;
    gs_cluster_node_info(st->cluster, i, &ni);
    int64_t free_milli = 0, held = 0;
    json_t *bad = json_array();
    for (int g = 0; g < ni.gpus; g++) {
        free_milli += ni.gpu_left[g];
        held += h->held_milli[g];
        if (h->bad_mask & (1u << g))
            json_array_append_new(bad, json_integer(g));
    }
    json_t *n = json_pack(
        "{s:s, s:s, s:s?, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:b, s:o, s:o}", "name",
        ni.name, "zone", ni.zone, "gpu_model", ni.model >= 0 ? gs_catalog_at(ni.model)->name : NULL,
        "gpus", ni.gpus, "gpu_milli_allocated", (json_int_t)(ni.gpus * 1000 - free_milli - held),
        "gpu_milli_free", (json_int_t)free_milli, "gpu_milli_unavailable", (json_int_t)held,
        "cpu_milli", (json_int_t)ni.cpu_milli, "cpu_milli_free", (json_int_t)ni.cpu_left,
        "memory_mib", (json_int_t)ni.memory_mib, "memory_mib_free", (json_int_t)ni.memory_left,
        "ready", h->ready, "heartbeats", h->watched, "ready_changed",
        gsd_time_json(h->watched ? h->since_us : 0), "unhealthy_gpus", bad);
    if (n && cards)
        json_object_set_new(n, "gpu", cards_json(st, i, &ni, tenant));
    return n;
}

/* ---- POST /v1/nodes/NAME/heartbeat, POST /v1/nodes/NAME/gpus/INDEX/health, POST /v1/clock ---- */

/* gpu_index() - INDEX of "/gpus/INDEX/health": plain decimal digits, at most 3, no sign or space
 * (sscanf's %d took "+1", " 1" and wrapped 4294967299 round to card 3); -1 when not that shape. */
static int gpu_index(const char *tail)
{
    if (strncmp(tail, "/gpus/", 6) != 0)
        return -1;
    const char *d = tail + 6;
    size_t n = strspn(d, "0123456789");
    if (n == 0 || n > 3 || strcmp(d + n, "/health") != 0)
        return -1;
    int v = 0;
    for (size_t k = 0; k < n; k++)
        v = v * 10 + (d[k] - '0');
    return v;
}

/* The body of a health report: {"healthy": bool, "xid": 1..65535 (only when unhealthy)}. */
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

static void clock_post(struct gsd_state *st, struct gsd_req *r)
{
    json_t *b;
    if (gsd_body_json(r, &b))
        return;
    json_t *adv = json_object_get(b, "advance_seconds");
    if (!st->manual_clock) {
        gsd_reply_error(r, 404, "",
                        "no such endpoint: the daemon runs on the system clock "
                        "(start it with --manual-clock)");
    } else if (!json_is_integer(adv) || json_object_size(b) != 1 || json_integer_value(adv) < 0 ||
               json_integer_value(adv) > 86400 * 365) {
        gsd_reply_error(r, 400, "advance_seconds",
                        "advance_seconds: expected {\"advance_seconds\": 0..31536000}");
    } else {
        st->manual_now_us += json_integer_value(adv) * 1000000;
        gsd_reply_json(r, 200, json_pack("{s:I}", "now_us", (json_int_t)st->manual_now_us));
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
    if (gpu < 0 && r->len && strspn(r->body, " \t\r\n{}") != r->len) {
        gsd_reply_error(r, 400, "", "a heartbeat takes no body (or {})");
        return;
    }
    if (gpu >= 0 && read_health(r, &healthy, &xid))
        return;
    int rc =
        gpu < 0 ? gsd_health_beat(st, (size_t)i) : gsd_health_gpu(st, (size_t)i, gpu, healthy, xid);
    if (rc)
        gsd_reply_error(r, 503, "", "the store failed");
    else
        gsd_reply_json(r, 200, gsd_node_json(st, (size_t)i, gpu >= 0, NULL));
}
