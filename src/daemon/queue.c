/*
 * gpuschedd: Volcano queues (scheduling.volcano.sh/v1beta1 Queue, seed 004 section 2.1) as the
 * API shows them and names them. Which queue a pod runs in, what a queue's capability lets its
 * pods hold and what it deserves are the scheduler's (src/core/tenancy: admission's queue_of(),
 * the ledger); the queues are the Queue documents, a queue of their own for tenants that give a
 * weight (sched.h), and Volcano's implicit `default`.
 */
#include "queue.h"
#include "accounts.h"
#include "api.h"
#include "sched.h"
#include "state.h"

#include "gpusched/scenario.h"
#include "gpusched/tenancy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gsd_queue_find(const struct gsd_state *st, const char *name)
{
    const struct gs_policy *pol = &st->sched.pol;
    for (size_t i = 0; i < pol->nqueues; i++)
        if (!strcmp(pol->queues[i].name, name))
            return (int)i;
    return strcmp(name, "default") ? -1 : (int)pol->nqueues;
}

int gsd_queue_known(const struct gsd_state *st, const char *name, const char *field,
                    struct gsd_req *r)
{
    if (!name[0] || gsd_queue_find(st, name) >= 0)
        return 1;
    const struct gs_policy *pol = &st->sched.pol;
    char known[400] = "default"; /* the names GET /v1/queues shows every tenant */
    size_t at = strlen(known), i = 0;
    for (; i < pol->nqueues && at + strlen(pol->queues[i].name) + 2 < sizeof(known) - 24; i++)
        at += (size_t)snprintf(known + at, sizeof(known) - at, ", %s", pol->queues[i].name);
    if (i < pol->nqueues)
        snprintf(known + at, sizeof(known) - at, " and %zu more", pol->nqueues - i);
    gsd_reply_error(r, 400, field, "%s: queue %s does not exist (queues: %s)", field, name, known);
    return 0;
}

/* One queue as GET /v1/queues shows it; @q NULL for the implicit default. */
static json_t *queue_json(const struct gsd_state *st, size_t i, const struct gs_queue_spec *q,
                          const int32_t pods[2])
{
    const struct gs_tenancy *tn = st->sched.tn;
    int64_t used = gs_tenancy_queue_milli(tn, i), deserved = gs_tenancy_queue_deserved(tn, i);
    int64_t pending = gs_tenancy_queue_demand(tn, i) - used;
    json_t *cap = json_object();
    const int64_t c[4] = {q ? q->cap_gpu_milli : GS_UNSET, q ? q->cap_cpu_milli : GS_UNSET,
                          q ? q->cap_memory_mib : GS_UNSET, q ? q->cap_pods : GS_UNSET};
    static const char *const key[4] = {"nvidia.com/gpu", "cpu", "memory", "pods"};
    for (int k = 0; k < 4; k++)
        if (c[k] != GS_UNSET)
            json_object_set_new(cap, key[k], json_integer(c[k]));
    return json_pack("{s:s, s:i, s:b, s:o, s:i, s:I, s:I, s:I, s:o, s:i, s:i}", "name",
                     q ? q->name : "default", "weight", q ? q->weight : 1, "reclaimable",
                     q ? q->reclaimable : 1, "capability", cap, "overcommit_milli",
                     q ? q->overcommit_milli : 1000, "deserved_milli", (json_int_t)deserved,
                     "allocated_milli", (json_int_t)used, "pending_milli",
                     (json_int_t)(pending > 0 ? pending : 0), "share_milli",
                     deserved ? json_integer(used * 1000 / deserved) : json_null(), "pods_running",
                     pods[0], "pods_pending", pods[1]);
}

void gsd_queues_list(struct gsd_state *st, struct gsd_req *r, const char *name)
{
    const struct gs_policy *pol = &st->sched.pol;
    size_t nq = pol->nqueues;
    int want = name ? gsd_queue_find(st, name) : -1;
    if (name && want < 0) {
        gsd_reply_error(r, 404, "", "queue %.64s not found", name);
        return;
    }
    int32_t(*pods)[2] = calloc(nq + 1, sizeof(*pods));
    if (!pods) {
        gsd_reply_error(r, 500, "", "out of memory");
        return;
    }
    for (const struct gsd_pod *p = st->head; p; p = p->next) {
        int i = gsd_queue_find(st, p->queue);
        if (i >= 0)
            pods[i][p->state != GSD_RUNNING]++; /* evicting: waiting again, as it shows */
    }
    int shadowed = gsd_queue_find(st, "default") < (int)nq; /* a document defines it */
    json_t *items = json_array();
    for (size_t i = 0; i <= nq; i++)
        if ((want < 0 || (size_t)want == i) && (i < nq || !shadowed))
            json_array_append_new(items,
                                  queue_json(st, i, i < nq ? &pol->queues[i] : NULL, pods[i]));
    if (name)
        gsd_reply_json(r, 200, json_incref(json_array_get(items, 0)));
    else
        gsd_reply_json(r, 200,
                       json_pack("{s:o, s:I}", "items", json_incref(items), "capacity_milli",
                                 (json_int_t)gsd_capacity_milli(st)));
    json_decref(items);
    free(pods);
}
