/* Layout of a multi-tenant simulation run, shared by src/sim/tenancy*.c. See gpusched/tsim.h. */
#ifndef GS_TENANCY_IMPL_H
#define GS_TENANCY_IMPL_H

#include "gpusched/catalog.h"
#include "gpusched/fleet.h"
#include "gpusched/scenario.h"
#include "gpusched/tsim.h"

#include <stdint.h>

#define GS_REASON_MAX 200
/* A pod run again after an eviction is kept 5 min; after GS_EVICTIONS_MAX it is kept for good. */
#define GS_READMIT_GRACE_US (300 * 1000000LL)
#define GS_EVICTIONS_MAX    3
#define GS_RESV_DEPTH       4096 /* completions looked at for the head's promise */
#define GS_NODE_CARDS_MAX   64
#define GS_EVICT_BACKOFF_US                                                                        \
    (10LL * 1000000)        /* between victim searches of one tenant, priority and size */
#define GS_MEMO_SLOTS 65536 /* shapes remembered for searches and back-off (a power of two) */

__extension__ typedef __int128 gs_i128;

/* say() - snprintf into a reason buffer; a long message is cut, never overrun. */
int gs__say(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void *gs__zalloc(size_t n, size_t size);

struct rpod {
    /* What victim searches read of every pod they pass, together in the first cache line. */
    uint8_t state, preemptible, in_pending, arrived, reclaimed;
    uint8_t never_preempt; /* its PriorityClass says preemptionPolicy: Never */
    int8_t charged;        /* 1 dedicated, 2 shared */
    int32_t tenant, queue, group, level, prio;
    int32_t preemptions;
    int32_t node;
    uint32_t mask;
    int64_t milli; /* GPU share charged to quotas and queues: cards x share */
    int64_t submit, start;
    const struct gs_scn_pod *sp;
    struct gs_fit fit;
    int32_t kind, user;
    int32_t rq[2];      /* ResourceQuotas that count this pod, -1 none */
    int64_t gpus;       /* nvidia.com/gpu as ResourceQuota counts it */
    int64_t gpumem_mib; /* cards x per-card GPU memory */
    int32_t util_pct;
    int32_t model; /* model charged while running, -1 none */
    int64_t first_start, end;
    uint32_t gen;
    int32_t use;          /* open use record, -1 none */
    uint64_t tried_epoch; /* release epoch at its last failed try, 0 never */
    uint64_t tried_resv;  /* the reservation that held a node against it then, 0 none */
    uint64_t said;        /* t->said when its reason was last written by the scheduler */
    uint64_t shape;       /* hash of what makes pods alike (tenancy_admit.c, static_shape()) */
    int32_t bucket;       /* its bucket of pending pods (tenancy_queue.c), -1 before the first */
    char mig[16]; /* MIG profile asked for (full scheme), "" for none; fit.mig points here */
    char reason[GS_REASON_MAX];
    /* Time-sliced pods (tenancy_slice.c): work left in microseconds x PPM of full speed, the
     * speed (PPM) and entitlement (milli-GPU) since @ts_since. */
    gs_i128 ts_work, ts_got; /* ts_got: milli-GPU x us per card received in its current use */
    int64_t ts_speed, ts_entitled, ts_since;
};

struct vec {
    int32_t *v;
    size_t n, cap;
};

struct bucket;
struct qheap;
struct vslot;
struct evi;
struct vmemo;
struct card_shares;

struct gang {
    int32_t min, running;
    uint64_t key;       /* the members' shapes and minMember: gangs alike share a bucket */
    struct vec members; /* pod indexes, in scenario order */
    int64_t cards;      /* cards of all members (whole-card gangs), for NVLink colocation */
    int32_t level_low;  /* the lowest priority level of a member */
    int preemptible;    /* some member is preemptible */
};

struct event {
    int64_t t;
    int32_t pod;
    uint32_t gen;
};

/*
 * A transaction: pods bound and evicted while trying to place a pod or a gang, undone together
 * when the attempt fails, so a gang is placed whole or not at all.
 */
struct txn {
    struct vec bound, evicted;
};

struct gs__timeline;
struct json_t;

struct gs_tsim {
    const struct gs_scenario *s;
    struct gs__timeline *tl; /* the run over time, for reports (tenancy_timeline.c) */
    enum gs_way way;
    struct gs_fleet *fleet;
    uint32_t models; /* catalog models some node has */
    /* Victim index (tenancy_evict.c): per node and tenant slot, who could be evicted there. */
    struct vslot *vindex;
    size_t vslots;
    struct vmemo *vmemo; /* fruitless preemption searches, by pod kind */
    struct vec clog;     /* nodes whose pods changed, in order */
    int clog_lost;
    int64_t *readmit; /* start times of pods run again after an eviction, in order */
    size_t nreadmit, capreadmit, readmit_head;
    int32_t *node_cards;
    struct rpod *pods;
    size_t npods;
    int32_t *arrival_order;
    size_t next_arrival;
    struct gang *gangs; /* one per PodGroup */
    /* Tenants: per model [tenant * GS_MODEL_MAX + model], milli. */
    int64_t *ded_used, *sh_used;
    int64_t *tenant_alloc, *tenant_busy;
    gs_i128 *tenant_alloc_int, *tenant_busy_int, *q_alloc_int;
    size_t ntenants;
    /* Queues: the scenario's, plus an implicit "default" queue last. */
    size_t nqueues;
    int64_t *q_used, *q_demand, *q_deserved;
    int32_t *q_weight;
    /* ResourceQuota usage per quota: gpus, gpumem, cpu, memory, pods. */
    int64_t (*rq_used)[5];
    /* Users: counts of running pods per user id. */
    int32_t *user_running;
    size_t nusers;
    /* Priority levels, highest first. */
    int32_t *levels;
    size_t nlevels;
    /* Pending pods, in buckets (tenancy_queue.c): lists [level * nqueues + queue] of buckets,
     * found by key through an open-addressing table; per queue, the pass's heap. */
    struct bucket *buckets;
    size_t nbuckets, capbuckets;
    int32_t *btable;
    size_t btable_size;
    struct vec *blists;
    struct qheap *qheaps;
    uint64_t resv_gen, held_hits, said;
    /* Completion events (min-heap by time, then pod). */
    struct event *heap;
    size_t nheap, capheap;
    /* Use records. */
    struct gs_tsim_use *uses;
    size_t nuses, capuses;
    /* Busy milli per card [node * GS_GPUS_MAX + gpu], for the utilisation integral. */
    int32_t *card_busy;
    int64_t busy_now;
    /* Time. */
    int64_t now, last_t, horizon;
    int64_t wake; /* an empty card's hold ends then: pending pods are tried again; INT64_MAX none */
    gs_i128 alloc_int, busy_int;
    uint64_t epoch, pass_epoch;
    int arrivals_since_pass;
    /* Backfill: the head of the queue and the nodes it is promised. */
    int32_t head;
    uint32_t stamp;
    uint32_t *seen; /* [template x nzones + zone] == stamp: an empty node of it was tried */
    int8_t *seen_reason;
    size_t nzones;
    int64_t *running_by_level;
    int64_t *borrowed; /* [tenant x nlevels + level]: running pods not on dedicated quota */
    /* Victim-search backoff per shape (see backing_off()). */
    uint64_t *bo_key;
    /* Nodes freed, in order, and shapes that found no room (tenancy.c, clean_of()). */
    struct vec rlog;
    struct clean *clean;
    int32_t *scratch;
    int64_t *bo_until;
    int64_t shadow_t;
    int32_t resv_node; /* the node promised to the head, -1 none */
    int resv_stale;    /* a pod the promise may not hold off took room there: make it again */
    struct evi *aux;   /* reserve_for(): completions read in order from the heap */
    size_t naux, capaux;
    struct event *resv_ev; /* reserve_for(): the completions taken off, GS_RESV_DEPTH */
    size_t evict_next;     /* where the next victim search starts (tenancy_evict.c) */
    /* Attempts' scratch, kept from one to the next: a single pod's and a gang's transaction, a
     * gang's waiting members, and a copy of the open-node list. */
    struct txn txn_pod, txn_gang;
    int32_t *gang_members, *gang_open;
    /* Time slicing: per tenant, milli-GPU x microseconds asked, entitled and received. */
    gs_i128 *ts_asked, *ts_entitled, *ts_received;
    int ts_used;                   /* some pod ran time-sliced */
    struct card_shares *ts_shares; /* scratch of tenancy_slice.c, one per card of a node */
    struct gs_tsim_summary sum;
    struct gs_tsim_work work;
    struct gs_tsim_pod *out;
    struct gs_tsim_tenant *tout;
    struct gs_tsim_queue *qout;
    struct gs_tsim_kind *kout;
    size_t nkinds;
    const char **kind_names;
    char (*reasons)[GS_REASON_MAX];
};

/* tenancy_admit.c */
int gs__tsim_admit(struct gs_tsim *t, struct gs_diag *d);
int gs__quota_check(struct gs_tsim *t, struct rpod *p, int model, char *why, size_t size);
/* Charge (+1) or give back (-1) a pod's quotas; @restore re-charges the bucket it had, so an
 * eviction undone leaves every tenant's dedicated and shared use exactly as it was. */
void gs__quota_charge(struct gs_tsim *t, struct rpod *p, int model, int sign, int restore);
int gs__tenant_is_hard(const struct gs_tsim *t, int32_t tenant);

/* tenancy.c */
int gs__tsim_place_one(struct gs_tsim *t, int32_t pod, struct txn *x, int only_node, int *capacity);
int gs__tsim_place_gang(struct gs_tsim *t, int32_t group, int *capacity);
int gs__tsim_reserve_for(struct gs_tsim *t, int32_t head);
int gs__tsim_bind(struct gs_tsim *t, int32_t pod, size_t node, uint32_t mask, struct txn *x);
int gs__tsim_evict(struct gs_tsim *t, int32_t pod, struct txn *x);
int gs__tsim_rollback(struct gs_tsim *t, struct txn *x, size_t bound_to, size_t evicted_to);
int gs__tsim_commit(struct gs_tsim *t, struct txn *x, int32_t by);
int gs__vec_push(struct vec *v, int32_t x);
/* Does @p end after the reservation of the blocked head, so that the node promised to the head is
 * held against it? Never for the head itself or a pod of higher priority. */
int gs__tsim_late(const struct gs_tsim *t, const struct rpod *p);
/* The nodes in @log from position @since, once each, in search order from node @n0 (0: ascending),
 * into t->scratch; their count, or SIZE_MAX when more than @cap (a full search is then as cheap).
 */
size_t gs__tsim_logged_since(struct gs_tsim *t, const struct vec *log, size_t since, size_t cap,
                             size_t n0);
/* Best node for @pod now: 0 with @node and @mask set, or 1 with the pod's reason set. @x is the
 * attempt under way (NULL none): while it has bound or evicted pods the fleet is not in a state
 * the run will keep, so the search neither uses nor leaves a "nodes freed since" record. */
int gs__tsim_find(struct gs_tsim *t, int32_t pod, int only_node, const struct txn *x, size_t *node,
                  uint32_t *mask, int *capacity);

/* Push the completion of @pod at @end (the pod's current gen): 0 or -ENOMEM. */
int gs__tsim_schedule(struct gs_tsim *t, int32_t pod, int64_t end);

/* tenancy_slice.c */
/* @pod starts time-sliced: all its work ahead, at full speed until retimed. */
void gs__tsim_slice_start(struct gs_tsim *t, int32_t pod);
/* @pod's progress and its tenant's time up to now, before its speed changes or it leaves. */
void gs__tsim_slice_settle(struct gs_tsim *t, int32_t pod);
/* The pods on the cards of @mask of @node share their time anew: speeds and completions. */
int gs__tsim_slice_retime(struct gs_tsim *t, size_t node, uint32_t mask);
/* @pod's use ends now: its share is what it received on average (what billing meters). */
void gs__tsim_slice_close(struct gs_tsim *t, int32_t pod);

/* tenancy_timeline.c */
int gs__tsim_timeline_new(struct gs_tsim *t);
void gs__tsim_timeline_free(struct gs_tsim *t);
/* Take the grid points before @upto (microseconds), as the last pass left the run: 0, -ENOMEM. */
int gs__tsim_timeline_sample(struct gs_tsim *t, int64_t upto);
/* The run has ended at t->last_t: the integrals there close the last step. */
void gs__tsim_timeline_end(struct gs_tsim *t);
/* @pod was evicted now for @by, by queue reclaim or priority preemption: 0, -ENOMEM. */
int gs__tsim_timeline_evicted(struct gs_tsim *t, int32_t pod, int32_t by, int reclaim);
/* {"step_s", "steps", "capacity_milli", "tenants", "queues", "evictions"} after the run's
 * reports are made (gs__tsim_finish()); NULL when out of memory. */
struct json_t *gs__tsim_timeline_json(const struct gs_tsim *t);

/* tenancy_queue.c */
/* Queue @pod (pending, arrived) for the pass; a pod already queued stays where it is. */
int gs__tsim_pending_add(struct gs_tsim *t, int32_t pod);
/* @pod left the pending state (it was bound): its bucket drops it in time. */
void gs__tsim_pending_left(struct gs_tsim *t, int32_t pod);
/* Try every pending pod that might now run: 0, or -ENOMEM. */
int gs__tsim_pass(struct gs_tsim *t);
/* Pending pods take the reason their bucket last failed for, where it is newer than theirs. */
void gs__tsim_settle_reasons(struct gs_tsim *t);
void gs__tsim_queue_free(struct gs_tsim *t);

/* tenancy_evict.c */
enum evict_mode { EVICT_PREEMPT, EVICT_RECLAIM };
int gs__tsim_evict_for(struct gs_tsim *t, int32_t pod, enum evict_mode mode, struct txn *x);
/* The victim index: allocated once the levels are known; updated whenever @node's pods change. */
int gs__tsim_victims_alloc(struct gs_tsim *t);
void gs__tsim_victims_update(struct gs_tsim *t, size_t node);
/* A pod evicted before was bound at @start: its readmission grace runs from then. */
int gs__tsim_readmitted(struct gs_tsim *t, int64_t start);
int gs__cmp_i32(const void *a, const void *b);

/* tenancy_report.c */
int gs__tsim_finish(struct gs_tsim *t);

#endif
