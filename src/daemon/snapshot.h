/*
 * What GET requests and /metrics read: a consistent picture of the scheduler thread's state,
 * published by that thread after each batch (before its answers leave, so a client reads its own
 * writes), immutable once published and freed when the last reader lets it go. Readers never
 * take the state lock, so no read, however large, holds up scheduling.
 *
 * Invariants:
 *  - a published snapshot (struct gsd_snap) and everything it points to never change; readers on
 *    any thread use it between gsd_snap_get() and gsd_snap_put();
 *  - a pod's view (struct gsd_podview) is made again only when the pod changed: the scheduler's
 *    code calls gsd_snap_touch() wherever a pod's shown fields change and gsd_snap_forget() when
 *    it goes, and gsd_snap_node_touch() when a node's health changes; publishing costs the pods
 *    and nodes touched (the chunks holding them are copied, the others shared). Debug builds
 *    (GPUSCHEDD_VERIFY_SNAPSHOTS) check every untouched pod and node against its record at each
 *    publish and abort on a difference: a change without a touch fails the tests;
 *  - views leave memory only after every snapshot older than their retirement is released
 *    (snapshots are freed oldest first).
 * Depends on the state's modules for what a pod shows; nothing here reads the store.
 */
#ifndef GSD_SNAPSHOT_H
#define GSD_SNAPSHOT_H

#include "config.h"
#include "metrics.h"
#include "nodes.h"
#include "podspec.h"
#include "quota.h"
#include "state.h"

#include "gpusched/catalog.h"

#include "gpusched/cluster.h"

#include <jansson.h>
#include <stdint.h>

/* One pod as the API shows it. Strings are the view's own. */
struct gsd_podview {
    /* first, in one cache line with the start of the tenant's name: what a tenant's list reads
     * of each of its pods */
    int64_t seq; /* arrival order: the pods' order in a snapshot */
    /* its JSON text, made by the first reader that needs it (gsd_podview_text()) */
    _Atomic(char *) text;
    char tenant[GSD_NAME_MAX];
    char ns[GSD_NAME_MAX], name[GSD_OBJ_MAX], uid[GSD_UID_MAX];
    char queue[GSD_NAME_MAX]; /* the queue it runs in */
    char mig[GSD_MIG_MAX];
    uint8_t running, extender;
    uint8_t allocated;     /* running, its cards held, kube-scheduler has not bound it yet */
    int32_t node;          /* running: its node's index; -1 pending */
    const char *node_name; /* running: its name (the cluster's: the inventory stays), else NULL */
    uint32_t cards;        /* running: its cards, bit g for card g */
    uint32_t card_milli;   /* running: per card, 1000 whole (0 without a GPU) */
    int32_t mig_start;     /* running MIG pod: its instance's first memory slice */
    int64_t share_milli;   /* GPU share it holds or asks (cards x share), milli-GPU */
    struct gs_pod_req req;
    int32_t gpumem_mib, gpucores, priority;
    const char *why;    /* pending: kube-scheduler's words (static), or NULL */
    const char *reason; /* pending: the reason ("" none); allocated: what it waits for */
    const char *meta;   /* {"labels":{..},"annotations":{..}} */
    int64_t submit_us, start_us;
    int32_t evictions;
    const char *last_eviction; /* what its last eviction said ("" none) */
    int64_t last_eviction_us;  /* when */
    /* the scheduler thread's bookkeeping: readers never look */
    struct gsd_podview *retired_next;
    struct gsd_podview *replaced_by;
    int retired;
};

/* One node's state, as far as reads show it. */
struct gsd_nodeview {
    struct gsd_node_health health;
    uint16_t alloc_milli[GS_GPUS_MAX]; /* per card, allocated to pods */
    uint16_t down_milli[GS_GPUS_MAX];  /* per card, the rest while it or its node is down */
};

/* A config tenant's GPUQuota use per catalog model, milli-GPU. */
struct gsd_quota_use {
    int64_t dedicated[GS_MODEL_MAX], shared[GS_MODEL_MAX];
};

/* One queue as the scheduler held it at the publish (GET /v1/queues' figures), milli-GPU. */
struct gsd_queueview {
    char name[GSD_NAME_MAX];
    int32_t weight;
    int64_t deserved_milli, allocated_milli, pending_milli;
};

/* Snapshots share their pods and nodes in chunks: a publish copies only the chunks that changed
 * (and the arrays of chunk pointers), so its cost follows what changed, not the cluster's size. */
#define GSD_POD_CHUNK  256 /* pod views at most per chunk */
#define GSD_NODE_CHUNK 16  /* node records per chunk (4.5 KB) */

/* Pods in arrival order; a chunk published never changes, one replaced goes with the snapshot it
 * was last part of. */
struct gsd_podchunk {
    size_t n;
    uint64_t gen; /* the publish that made it: it may change until then */
    struct gsd_podchunk *retired_next;
    const struct gsd_podview *v[GSD_POD_CHUNK];
};

struct gsd_nodechunk {
    uint64_t gen;
    struct gsd_nodechunk *retired_next;
    struct gsd_nodeview v[GSD_NODE_CHUNK];
};

struct gsd_snap {
    uint64_t gen; /* 1, 2, ...: one per publish */
    struct gsd_config *cfg;
    int64_t started_us, taken_us; /* wall clock */
    struct gsd_podchunk **pchunk; /* read with gsd_snap_from() and gsd_snap_next() */
    size_t npchunks;
    size_t npods, nrunning, npending;
    size_t nnodes;
    const char *const *node_name; /* the cluster's names (the inventory stays), shared */
    const int *node_model;        /* catalog index, -1 none */
    const int *node_gpus;
    struct gsd_nodechunk **nchunk; /* read with gsd_snap_node() */
    struct gsd_hist sched_lat, commit_lat, publish_lat;
    uint64_t placed_total, cancelled_total, requeued_total, preempted_total, reclaimed_total;
    uint64_t adopted_total, adopt_refused_total; /* pods found bound in Kubernetes */
    struct gsd_quota_use *quse;                  /* per cfg tenant */
    int64_t (*rq_used)[GSD_RQ_RES];
    struct gsd_queueview *queues; /* the Queue documents', then `default` unless one defines it */
    size_t nqueues;
    json_t *bills;  /* gsd_bill_accrued() when a reader asked for names lately, else NULL */
    char *forecast; /* gsd_forecast_metrics() then too (the text), else NULL */
    /* the chain of live snapshots, for freeing in order */
    int refs;
    struct gsd_snap *newer;
    struct gsd_podview *garbage;   /* views retired as the next snapshot was made */
    struct gsd_podchunk *pgarbage; /* chunks too */
    struct gsd_nodechunk *ngarbage;
};

/* A place in a snapshot's pods. */
struct gsd_snap_it {
    size_t c, k; /* chunk, position in it */
};

/* gsd_snap_next() - the pod at @it, @it moved past it; NULL after the last. */
static inline const struct gsd_podview *gsd_snap_next(const struct gsd_snap *n,
                                                      struct gsd_snap_it *it)
{
    for (; it->c < n->npchunks; it->c++, it->k = 0)
        if (it->k < n->pchunk[it->c]->n)
            return n->pchunk[it->c]->v[it->k++];
    return NULL;
}

/* gsd_snap_from() - the place of the first pod of @n whose arrival seq is at least @seq. */
struct gsd_snap_it gsd_snap_from(const struct gsd_snap *n, int64_t seq);

/* gsd_snap_node() - node @i's record (@i < n->nnodes). */
static inline const struct gsd_nodeview *gsd_snap_node(const struct gsd_snap *n, size_t i)
{
    return &n->nchunk[i / GSD_NODE_CHUNK]->v[i % GSD_NODE_CHUNK];
}

struct gsd_snaps;

/* gsd_snap_init() - begin publishing @st (attaches st->snaps). Return: 0; -ENOMEM. */
int gsd_snap_init(struct gsd_state *st);
/* gsd_snap_nodes() - the nodes added to the inventory since, and those whose model or cards
 * changed (gsd_state_reshape_node()), into the next snapshot (the scheduler thread). Return: 0;
 * -ENOMEM (those not taken are tried at the next call). */
int gsd_snap_nodes(struct gsd_state *st);
/* gsd_snap_free() - free every snapshot (none may be held) and detach. */
void gsd_snap_free(struct gsd_state *st);

/* gsd_snap_touch() - pod @p's shown fields changed (or it is new): make its view again at the
 * next publish. Nothing without st->snaps. O(1). */
void gsd_snap_touch(struct gsd_state *st, struct gsd_pod *p);
/* gsd_snap_touch_all() - every pod (a reload, a PodGroup made or gone: queues may change). */
void gsd_snap_touch_all(struct gsd_state *st);
/* gsd_snap_node_touch() - node @i's health changed: make its record again at the next publish.
 * O(1). */
void gsd_snap_node_touch(struct gsd_state *st, size_t i);
/* gsd_snap_forget() - pod @p leaves the state (before it is freed). O(1). */
void gsd_snap_forget(struct gsd_state *st, struct gsd_pod *p);
/* gsd_snap_want_bills() - a reader wants the bills in the snapshots of the next minutes (any
 * thread); gsd_snap_want_names() the bills and the forecast (a scrape with names). */
void gsd_snap_want_bills(struct gsd_snaps *s);
void gsd_snap_want_names(struct gsd_snaps *s);
/* gsd_snap_set_wake() - @fn(@ud) is called (on the reader's thread) when the bills are wanted
 * and were not, so that the scheduler thread publishes a snapshot with them at once. Set before
 * any reader runs. */
void gsd_snap_set_wake(struct gsd_snaps *s, void (*fn)(void *ud), void *ud);

/*
 * gsd_snap_publish() - make the snapshot of @st now and put it in place of the last (the
 * scheduler thread, holding the state). Return: 0; -ENOMEM (the last one stays in place, and the
 * pods touched stay touched).
 */
int gsd_snap_publish(struct gsd_state *st);

/* gsd_snap_get() - the snapshot in place, held until gsd_snap_put() (any thread); NULL before
 * the first publish. */
const struct gsd_snap *gsd_snap_get(struct gsd_snaps *s);
void gsd_snap_put(struct gsd_snaps *s, const struct gsd_snap *snap);

/* gsd_podview_fill() - @p as a view into @v, its strings borrowed from @p (valid while @p is
 * unchanged): what a fresh view of @p holds. */
void gsd_podview_fill(const struct gsd_state *st, const struct gsd_pod *p, struct gsd_podview *v);
/* gsd_podview_dup() - @v as a view of its own: its reason, last eviction and labels copied with
 * it, in one allocation that free() releases (its node name stays borrowed: the cluster lives as
 * long as the daemon). NULL out of memory. */
struct gsd_podview *gsd_podview_dup(const struct gsd_podview *v);
/* gsd_podview_text() - gsd_podview_json() of published view @v as compact JSON text, made once
 * and kept with the view (any thread). Return: the text (the view's); NULL out of memory. */
const char *gsd_podview_text(const struct gsd_podview *v);
/* gsd_podview_json() - the pod as the API shows it (new reference; NULL out of memory). */
json_t *gsd_podview_json(const struct gsd_podview *v);
/* gsd_podview_dumps() - json_dumps(gsd_podview_json(@v), JSON_COMPACT), the same bytes, most
 * often written without the tree. Return: the text (malloc'd, the caller's); NULL out of memory
 * or where jansson refuses a string (not UTF-8). */
char *gsd_podview_dumps(const struct gsd_podview *v);
/* gsd_podview_assignment() - gsd_pod_assignment() of the view (new reference; NULL no memory). */
json_t *gsd_podview_assignment(const struct gsd_podview *v);

#endif
