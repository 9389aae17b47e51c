/*
 * gpuschedd: Volcano queues (scheduling.volcano.sh/v1beta1 Queue, seed 004 section 2.1) — which
 * queue a pod is in, the capability a queue's running pods may hold, and each queue's deserved
 * share. The rules are the simulator's: the same loader reads the Queue documents and the same
 * function turns capability and overcommitRatio into a GPU cap (gs_queue_gpu_cap_milli()).
 */
#include "queue.h"
#include "accounts.h"
#include "api.h"
#include "mig.h"
#include "state.h"

#include "gpusched/fairshare.h"
#include "gpusched/scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t nqueues(const struct gsd_config *c)
{
    return c->quotas ? c->quotas->nqueues : 0;
}

int gsd_queues_volcano(const struct gsd_config *c)
{
    return nqueues(c) > 0;
}

const char *gsd_pod_queue(const struct gsd_state *st, const struct gsd_pod *p)
{
    if (!gsd_queues_volcano(st->cfg))
        return p->tenant;
    if (p->grp && p->grp->queue[0])
        return p->grp->queue;
    if (p->queue[0])
        return p->queue;
    return p->tenant[0] && gsd_queue_find(st->cfg, p->tenant) >= 0 ? p->tenant : "default";
}

int gsd_queue_find(const struct gsd_config *c, const char *name)
{
    size_t n = nqueues(c);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(c->quotas->queues[i].name, name))
            return (int)i;
    return strcmp(name, "default") ? -1 : (int)n;
}

int64_t gsd_queue_limit(const struct gsd_config *c, int i, int64_t demand)
{
    if (i < 0 || (size_t)i >= nqueues(c))
        return demand;
    int64_t cap = c->quotas->queues[i].cap_gpu_milli;
    return cap != GS_UNSET && demand > cap ? cap : demand;
}

int gsd_queue_check(const struct gsd_state *st, const struct gsd_pod *p, char *why, size_t size)
{
    if (!gsd_queues_volcano(st->cfg))
        return 0;
    const char *name = gsd_pod_queue(st, p);
    int i = gsd_queue_find(st->cfg, name);
    if (i < 0) {
        snprintf(why, size, "queue %s does not exist", name);
        return GS_UNSCHEDULABLE;
    }
    if ((size_t)i == nqueues(st->cfg))
        return 0; /* the implicit default queue caps nothing */
    const struct gs_queue_spec *q = &st->cfg->quotas->queues[i];
    const struct gsd_queue_use *u = &st->qused[i];
    const struct {
        const char *res;
        int64_t used, cap, ask;
    } lim[3] = {
        {"nvidia.com/gpu (milli-GPU)", u->gpu_milli,
         gs_queue_gpu_cap_milli(q, p->req.gpu_milli == 1000), gsd_pod_share_milli(st, p)},
        {"cpu (milli-cores)", u->cpu_milli, q->cap_cpu_milli, p->req.cpu_milli},
        {"memory (MiB)", u->memory_mib, q->cap_memory_mib, p->req.memory_mib},
    };
    for (int k = 0; k < 3; k++)
        if (lim[k].cap != GS_UNSET && lim[k].ask > 0 && lim[k].used + lim[k].ask > lim[k].cap) {
            snprintf(why, size, "over Queue %s capability: %s %lld of %lld in use, pod asks %lld",
                     q->name, lim[k].res, (long long)lim[k].used, (long long)lim[k].cap,
                     (long long)lim[k].ask);
            return GS_UNSCHEDULABLE;
        }
    return 0;
}

int gsd_queue_known(const struct gsd_state *st, const char *name, const char *field,
                    struct gsd_req *r)
{
    if (!name[0] || !gsd_queues_volcano(st->cfg) || gsd_queue_find(st->cfg, name) >= 0)
        return 1;
    gsd_reply_error(r, 400, field, "%s: queue %s does not exist", field, name);
    return 0;
}

void gsd_queue_charge(struct gsd_state *st, struct gsd_pod *p, int sign)
{
    if (sign > 0) {
        int i = gsd_queues_volcano(st->cfg) ? gsd_queue_find(st->cfg, gsd_pod_queue(st, p)) : -1;
        p->qcharged = (int32_t)(i + 1); /* its PodGroup may name another queue later */
    }
    if (!p->qcharged || !st->qused)
        return;
    struct gsd_queue_use *u = &st->qused[p->qcharged - 1];
    if (sign > 0) /* what it counted in with counts out, whatever its MIG instance did since */
        p->qmilli = gsd_pod_share_milli(st, p);
    u->gpu_milli += sign * p->qmilli;
    u->cpu_milli += sign * (int64_t)p->req.cpu_milli;
    u->memory_mib += sign * (int64_t)p->req.memory_mib;
    if (sign < 0)
        p->qcharged = 0;
}

/* One queue as GET /v1/queues shows it; @q NULL for the implicit default. */
static json_t *queue_json(const struct gs_queue_spec *q, const struct gsd_queue_use *u,
                          int64_t deserved, int64_t pending, const int32_t pods[2])
{
    json_t *cap = json_object();
    const int64_t c[3] = {q ? q->cap_gpu_milli : GS_UNSET, q ? q->cap_cpu_milli : GS_UNSET,
                          q ? q->cap_memory_mib : GS_UNSET};
    static const char *const key[3] = {"nvidia.com/gpu", "cpu", "memory"};
    for (int k = 0; k < 3; k++)
        if (c[k] != GS_UNSET)
            json_object_set_new(cap, key[k], json_integer(c[k]));
    return json_pack(
        "{s:s, s:i, s:b, s:o, s:i, s:I, s:I, s:I, s:o, s:i, s:i}", "name", q ? q->name : "default",
        "weight", q ? q->weight : 1, "reclaimable", q ? q->reclaimable : 1, "capability", cap,
        "overcommit_milli", q ? q->overcommit_milli : 1000, "deserved_milli", (json_int_t)deserved,
        "allocated_milli", (json_int_t)u->gpu_milli, "pending_milli", (json_int_t)pending,
        "share_milli", deserved ? json_integer(u->gpu_milli * 1000 / deserved) : json_null(),
        "pods_running", pods[0], "pods_pending", pods[1]);
}

/* Per queue (the implicit default last): pending GPU share and pods; deserved by weight. */
static int queue_shares(const struct gsd_state *st, int64_t *pending, int32_t (*pods)[2],
                        int64_t *deserved)
{
    size_t n = nqueues(st->cfg) + 1;
    int32_t *weight = calloc(n, sizeof(*weight));
    int64_t *limit = calloc(n, sizeof(*limit));
    if (!weight || !limit) {
        free(weight);
        free(limit);
        return -ENOMEM;
    }
    for (const struct gsd_pod *p = st->head; p; p = p->next) {
        int i = p->state == GSD_RUNNING ? p->qcharged - 1
                                        : gsd_queue_find(st->cfg, gsd_pod_queue(st, p));
        if (i < 0)
            continue; /* a queue no longer configured: it waits, counted nowhere */
        pods[i][p->state == GSD_PENDING]++;
        pending[i] += p->state == GSD_PENDING ? gsd_pod_share_milli(st, p) : 0;
    }
    for (size_t i = 0; i < n; i++) {
        const struct gs_queue_spec *q = i + 1 < n ? &st->cfg->quotas->queues[i] : NULL;
        weight[i] = q ? q->weight : 1;
        limit[i] = gsd_queue_limit(st->cfg, (int)i, st->qused[i].gpu_milli + pending[i]);
    }
    gs_fairshare_waterfill(gsd_capacity_milli(st), weight, limit, n, deserved);
    free(weight);
    free(limit);
    return 0;
}

void gsd_queues_list(struct gsd_state *st, struct gsd_req *r, const char *name)
{
    size_t nq = nqueues(st->cfg);
    int want = name ? gsd_queue_find(st->cfg, name) : -1;
    if (name && want < 0) {
        gsd_reply_error(r, 404, "", "queue %.64s not found", name);
        return;
    }
    int64_t *pending = calloc(nq + 1, sizeof(*pending)),
            *deserved = calloc(nq + 1, sizeof(int64_t));
    int32_t(*pods)[2] = calloc(nq + 1, sizeof(*pods));
    if (!pending || !deserved || !pods || queue_shares(st, pending, pods, deserved)) {
        gsd_reply_error(r, 500, "", "out of memory");
    } else {
        int shadowed = gsd_queue_find(st->cfg, "default") < (int)nq; /* a document defines it */
        json_t *items = json_array();
        for (size_t i = 0; i <= nq; i++)
            if ((want < 0 || (size_t)want == i) && (i < nq || !shadowed))
                json_array_append_new(items,
                                      queue_json(i < nq ? &st->cfg->quotas->queues[i] : NULL,
                                                 &st->qused[i], deserved[i], pending[i], pods[i]));
        if (name)
            gsd_reply_json(r, 200, json_incref(json_array_get(items, 0)));
        else
            gsd_reply_json(r, 200,
                           json_pack("{s:o, s:I}", "items", json_incref(items), "capacity_milli",
                                     (json_int_t)gsd_capacity_milli(st)));
        json_decref(items);
    }
    free(pending);
    free(deserved);
    free(pods);
}
