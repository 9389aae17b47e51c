/*
 * Layout of the multi-tenant scheduler, shared by the files of src/core/tenancy. See
 * gpusched/tenancy.h.
 *
 * Modules: tenancy.c (events, decisions, queries), admission.c (what a pod asks and whose it
 * is), ledger.c (quotas and what they hold), order.c (the pending queue and the pass),
 * placement.c (binding, searches, gangs), eviction.c (preemption and reclaim), backfill.c (the
 * head of the queue's reservation), work.c (the work model: what pods keep their cards busy, how
 * fast they progress, what each holds of a shared card).
 */
#ifndef GS_TENANCY_IMPL_H
#define GS_TENANCY_IMPL_H

#include "../fit_rules.h"
#include "gpusched/catalog.h"
#include "gpusched/fleet.h"
#include "gpusched/policy.h"
#include "gpusched/quantity.h"
#include "gpusched/tenancy.h"

#include <stdint.h>
#include <string.h>

/* A pending pod's reason: room for a PodGroup's name of 253 bytes and why. */
#define GS_REASON_MAX 512

/* gs__reason_copy() - reason @src (NUL-terminated within GS_REASON_MAX) into @dst, its bytes
 * only: reasons are copied to every pending pod each pass, and most are a tenth of the room. */
static inline void gs__reason_copy(char *dst, const char *src)
{
    size_t n = strnlen(src, GS_REASON_MAX - 1);
    memmove(dst, src, n);
    dst[n] = '\0';
}
/* A pod run again after an eviction is kept 5 min; after GS_EVICTIONS_MAX it is kept for good. */
#define GS_READMIT_GRACE_US (300 * 1000000LL)
#define GS_EVICTIONS_MAX    3
#define GS_RESV_DEPTH       4096 /* completions looked at for the head's promise */
#define GS_NODE_CARDS_MAX   64
#define GS_EVICT_BACKOFF_US                                                                        \
    (10LL * 1000000)           /* between victim searches of one tenant, priority and size */
#define GS_RQ_PER_NS     64    /* ResourceQuotas in one namespace at most */
#define GS_MEMO_SLOTS    65536 /* shapes remembered for searches and back-off (a power of two) */
#define GS_VICTIM_ROUNDS 4     /* rounds of a pass while binds make victims (order.c) */

__extension__ typedef __int128 gs_i128;

struct gs_diag;
struct gs_plugin;

/* say() - snprintf into a reason buffer; a long message is cut, never overrun. */
int gs__say(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* gs__amount() - @v of a resource counted in @unit as a reason writes it, the way Kubernetes
 * writes a quantity: a count (GPUs, pods, gpumem's MiB) as a number, MiB of memory as "512Mi",
 * thousandths (milli-cores) through gs_quantity_format_milli(): 3 cores "3", not "3000m".
 * Return: @buf (GS_QUANTITY_STR_MAX bytes). */
enum gs__unit { GS_UNIT_COUNT, GS_UNIT_MIB, GS_UNIT_MILLI };
const char *gs__amount(enum gs__unit unit, int64_t v, char *buf);
void *gs__zalloc(size_t n, size_t size);

struct rpod {
    /* What victim searches read of every pod they pass, together in the first cache line. */
    uint8_t state, preemptible, in_pending, arrived, reclaimed;
    uint8_t never_preempt; /* its PriorityClass says preemptionPolicy: Never */
    uint8_t first_in_txn;  /* its first start is the open attempt's: a rollback undoes it */
    int8_t charged;        /* 1 dedicated, 2 shared */
    int32_t tenant, queue, group, level, prio;
    int32_t preemptions;
    int32_t node;
    uint32_t mask;
    int64_t milli; /* GPU share charged to quotas and queues: cards x share */
    int64_t submit, start;
    int64_t seq; /* the driver's arrival order: every tie between pods goes by it */
    const struct gs_pod_spec *sp;
    struct gs_fit fit;
    int32_t user;
    int32_t rq_ns;      /* its namespace's ResourceQuotas (t->rq_groups), -1 none */
    uint64_t rq_mask;   /* those that count this pod: bit k, the k-th of its namespace's */
    int64_t gpus;       /* nvidia.com/gpu as ResourceQuota counts it */
    int64_t gpumem_mib; /* cards x per-card GPU memory */
    int32_t model;      /* model charged while running, -1 none */
    uint32_t usable;    /* the models it could run on, fixed at its arrival */
    int64_t first_start;
    uint32_t gen;
    uint64_t tried_epoch; /* release epoch at its last failed try, 0 never */
    uint64_t tried_resv;  /* the reservation that held a node against it then, 0 none */
    uint64_t said;        /* t->said when its reason was last written by the scheduler */
    uint64_t shape;       /* hash of what makes pods alike (admission.c, static_shape()) */
    int32_t bucket;       /* its bucket of pending pods (order.c), -1 before the first */
    int32_t stale;        /* its entries left in other buckets (a gang member moved on) */
    char mig[16];      /* MIG profile asked for (full scheme), "" for none (fit.mig: the spec's) */
    const char *field; /* rejected: the Pod field at fault (static), NULL for the pod as a whole */
    int16_t field_at;  /* the container @field names (index in sp->containers), -1 none */
    uint8_t released;  /* the driver is done with it (gs_tenancy_release()) */
    uint8_t succeeded; /* completed Succeeded: its task's minTaskMember counts it (placement.c) */
    uint32_t task;     /* gs__tn_task_hash() of its volcano.sh/task-spec, 0 none: read once its
                        * spec may be gone (a released member still counts for its task) */
    char reason[GS_REASON_MAX];
    int32_t wgroup; /* its PodGroup in every way (work.c: a gang below minMember does no work) */
    /* The work model (work.c). @rate: busy milli-GPU per card at full speed (gpu-util x the
     * compute share it asks); @left: microseconds of its nominal run still to do, x PPM; @speed
     * (PPM of full speed), @busy and @alloc (milli-GPU over its cards, a card's allocation split
     * among its pods) since @since; @run_busy: milli-GPU x us its kernels did in this run; @got:
     * milli-GPU x us per card received in this run (what time-sliced billing meters). */
    int32_t rate, work_share;
    gs_i128 left, left0, got, run_busy; /* @left0: @left when the run started */
    int64_t saved_us; /* of its nominal run, what its checkpoints saved before its last eviction
                       * (gpusched.io/checkpoint-interval): it resumes there */
    int64_t speed, since, end;
    int64_t every_us; /* its spec's checkpoint interval, kept here for victim searches */
    int64_t busy, alloc;
    int64_t ts_entitled; /* time-sliced: its part of its queue's entitlement on its cards */
};

/* The part of each of its cards @p asks, in milli-GPU: 1000 for a whole card (or MIG instance),
 * else its compute share (time-slice replicas: all of them together). */
static inline int32_t gs__tn_card_share(const struct rpod *p)
{
    return p->fit.whole ? 1000 : p->fit.compute;
}

struct vec {
    int32_t *v;
    size_t n, cap;
};

/* A log of nodes (freed, or whose pods changed), in order. Positions count from its first entry
 * for good (gs__tn_log_end()); past GS_NODE_LOG_MAX entries its older half is dropped, so that a
 * service running for months keeps 1 MiB of it at most, and a search from a position dropped
 * visits every node instead (gs__tn_logged_since()). */
#define GS_NODE_LOG_MAX (1 << 18)
struct nodelog {
    struct vec v;
    size_t base; /* the position of v.v[0] */
};
static inline size_t gs__tn_log_end(const struct nodelog *l)
{
    return l->base + l->v.n;
}
/* gs__tn_log() - @node goes at the end of @l. Return: 0; -ENOMEM. */
int gs__tn_log(struct nodelog *l, int32_t node);

struct bucket;
struct qheap;
struct vslot;
struct vsum;
struct vnode;
struct evi;
struct vmemo;
struct gunit;
struct card_shares;
struct namemap;

/*
 * Nodes freed since: completions and evictions append their node to a log. A shape that failed
 * everywhere for want of room (no quota or reservation in the way) can fit later only where room
 * was freed, so its next search visits the log's tail instead of every node.
 */
struct clean {
    uint64_t key;
    size_t since;    /* log position after its last failed search */
    uint32_t models; /* the models whose quotas the pod passed then: the record holds while
                      * they are the same (quota is freed by releases, but on any node) */
    uint64_t resv;   /* the reservation that held a node against it, 0 none: the record holds
                      * while that one stands */
    uint32_t health; /* t->health_gen then: a node or card lost or back since makes its counts
                      * wrong */
    char reason[GS_REASON_MAX];
};

struct gang {
    int32_t min, running;
    int32_t working;      /* members running in any way (work.c), with their ids in @workers */
    int32_t done;         /* members that completed: they count towards minMember, as Volcano
                           * counts Succeeded pods */
    int32_t left;         /* of @members, those gone (completed, failed or deleted) */
    int8_t el;            /* elastic as t->elastic_running counts it (eviction.c) */
    int8_t tasked;        /* its PodGroup's minTaskMember applies: it has some, and gangs are on */
    struct vec workers;   /* pods that named it, in every way */
    uint64_t key;         /* the members' shapes and minMember: gangs alike share a bucket */
    struct vec members;   /* pod ids, in arrival order */
    int64_t cards;        /* cards of all members (whole-card gangs), for NVLink colocation */
    int32_t level_low;    /* the lowest priority level of a member */
    int32_t milli_low;    /* the least milli-GPU of a member: its units' least (eviction.c) */
    int preemptible;      /* some member is preemptible */
    int dirty;            /* a member arrived since its pending members were put in buckets */
    int inqueue;          /* its minResources passed the enqueue check (ledger.c) and fewer than
                           * minMember members have run since: Volcano's phase Inqueue */
    uint32_t gen;         /* PodGroups that had its place before (gs__tn_podgroup_forget()) */
    int32_t capped;       /* the user whose maxPodsPerUser held it at its last try, -1 none */
    int32_t capped_at;    /* that user's running pods then: the words are made again if it moved */
    uint64_t capped_said; /* t->said then: a member's reason written since is not those words */
};

/* A node as the head's promise is worked out (backfill.c): while the cards of the pods taken off
 * there could not make room for the head, they are taken off in name only (put_off()). */
struct resv_node {
    uint64_t stamp;
    int lazy;            /* its pods are put off, not yet taken off the fleet */
    int32_t free;        /* its free cards and those of the pods put off */
    int32_t first, last; /* the completions put off there, in order, chained by resv_next */
};

struct event {
    int64_t t;
    int64_t seq;
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

struct gs_tenancy {
    const struct gs_policy *pol;
    struct gs_tenancy_opts opt;
    enum gs_way way;
    /* the profile's score plugins that score in this way, their weights, and the most a node
     * can score (placement.c, gs__tn_scores_init()) */
    const struct gs_plugin *score_plugin[GS_SCN_SCORES];
    int32_t score_weight[GS_SCN_SCORES];
    int nscore;
    int binpack; /* GPUBinPacking's place among them, -1 none (a tenant may opt out) */
    int64_t score_max;
    struct gs_fleet *fleet;
    uint32_t models; /* catalog models some node has */
    /* Victim index (eviction.c): per node and tenant slot, who could be evicted there. */
    struct vslot *vindex;
    struct vsum *vsum;   /* per node, the slots of vindex summed up */
    uint8_t *vlevel;     /* per tenant slot and node, then again: what may_hold() needs for a
                          * preemption search without the guarantee, then with it (eviction.c),
                          * packed */
    uint64_t *vqueues;   /* per node, the queues with pods there (all slots' q_open | q_ded):
                          * what a reclaim search's may_hold() can rule out, packed */
    struct vnode *vpods; /* per node, what victim searches read of its pods */
    size_t nvpods;       /* its nodes: the policy may be another by the time it is freed */
    size_t vslots;
    struct vmemo *vmemo; /* fruitless preemption searches, by pod kind */
    struct nodelog clog; /* nodes whose pods changed */
    int clog_lost;
    int64_t *readmit; /* start times of pods run again after an eviction, in order */
    size_t nreadmit, capreadmit, readmit_head;
    int32_t *node_cards;
    struct rpod *pods;
    size_t npods, cappods;
    /* Records released by the driver (gs_tenancy_release()): [0, ready) may serve a new pod
     * now; the rest wait until nothing reads them (tenancy.c, sweep()). @kept: those left
     * waiting by the last sweep. */
    struct vec retired;
    size_t ready, kept;
    struct namemap *groups;     /* PodGroup (namespace, name) -> index */
    struct namemap *users;      /* (tenant, user) -> user id */
    struct namemap *namespaces; /* namespace -> tenant */
    struct namemap *node_names; /* node name -> its index in pol->nodes (spec.nodeName) */
    struct namemap *rq_nsmap;   /* namespace -> its ResourceQuotas, a group of rq_groups */
    struct rq_group {
        size_t start, n; /* rq_idx[start..start + n): indexes into the policy's rquotas */
    } * rq_groups;
    int32_t *rq_idx;
    struct gang *gangs;            /* one per PodGroup, parallel to pgs */
    struct gs_podgroup_spec **pgs; /* the PodGroups: the policy's, then those added */
    size_t npgs, cappgs;
    struct vec free_gangs;  /* places of PodGroups dropped, for the next made */
    struct vec dirty_gangs; /* gangs a member joined since the last pass */
    /* Tenants: per model [tenant * GS_MODEL_MAX + model], milli. */
    int64_t *ded_used, *sh_used; /* per tenant x GPU model, milli-GPU charged to each */
    int64_t *shw_used;           /* of sh_used, pods of whole cards */
    /* While @model_limit is not 0, searches use only its models (bit per catalog index):
     * gs__tn_place_one()'s first passes. */
    uint32_t model_limit;
    int8_t restore_charged; /* gs_tenancy_restore(): the part a pod put back was held in, 0 none */
    int8_t restoring; /* gs_tenancy_restore() is putting a pod back: it counts, over quota too */
    size_t ntenants;
    /* Queues: the policy's, plus an implicit "default" queue last. */
    size_t nqueues;
    int64_t *q_used, *q_demand, *q_deserved;
    int64_t (*q_res)[3]; /* what a queue's running pods use: milli-CPU, MiB of memory, pods */
    int64_t *q_over;     /* a reclaimable queue's use past its deserved share at the last look */
    int32_t *q_weight;
    /* ResourceQuota usage per quota: gpus, gpumem, cpu, memory, pods. */
    int64_t (*rq_used)[5];
    /* Users: counts of running pods per user id, and of the pods not released that name it; a
     * user none names leaves the name map and its id serves the next user (free_users). */
    int32_t *user_running, *user_pods;
    size_t nusers, capusers, cap_user_pods;
    struct vec free_users;
    struct user_said {
        int32_t running; /* user_running + 1 when @reason was made (order.c), 0 never */
        char reason[GS_REASON_MAX];
    } * user_said;
    size_t cap_user_said;
    /* Priority levels, highest first: every priority the policy can give a pod. */
    int32_t *levels;
    size_t nlevels;
    /* Pending pods, in buckets (order.c): lists [level * nqueues + queue] of buckets, found by
     * key through an open-addressing table; per queue, the pass's heap. */
    struct bucket *buckets;
    size_t nbuckets, capbuckets;
    int32_t *btable;
    size_t btable_size;
    struct vec *blists;
    struct qheap *qheaps;
    uint64_t resv_gen, held_hits, said;
    uint32_t health_gen; /* changes of nodes' readiness and cards' health so far (struct clean) */
    int full_searches;   /* every search a full one, no struct clean used: the tests' reference */
    /* Expected ends of running pods (min-heap by time, then seq): their walltimes. */
    struct event *heap;
    size_t nheap, capheap;
    /* Time. */
    int64_t now;
    int64_t wake; /* an empty card's hold ends then: pending pods are tried again; INT64_MAX none */
    uint64_t epoch, pass_epoch;
    int arrivals_since_pass;
    /* Backfill: the head of the queue and the nodes it is promised. */
    int32_t head;
    uint32_t stamp;
    uint32_t *seen; /* [template x nzones + zone] == stamp: an empty node of it was tried */
    int8_t *seen_reason;
    size_t nzones;
    int32_t *node_key; /* per node: its template x nzones + zone, the index of those two */
    int64_t *running_by_level;
    int64_t elastic_running;          /* running members of elastic gangs (eviction.c) */
    uint64_t extras_gen, extras_seen; /* binds that put an elastic gang's members past minMember;
                                       * that count at the last look (order.c) */
    int64_t retry_at;  /* a pod skipped while its victim search backs off tries then (placement.c,
                        * backing_off()); INT64_MAX none due */
    int64_t *borrowed; /* [tenant x nlevels + level]: running pods not on dedicated quota */
    /* Victim-search backoff per shape (see backing_off()). */
    uint64_t *bo_key;
    /* Nodes freed, in order, and shapes that found no room (placement.c, clean_of()). */
    struct nodelog rlog;
    struct clean *clean;
    int32_t *scratch;
    uint64_t *logbits; /* a bit per node, all clear between calls (gs__tn_logged_since()) */
    int64_t *bo_until;
    int64_t shadow_t;
    int32_t resv_node; /* the node promised to the head, -1 none */
    int resv_stale;    /* a pod the promise may not hold off took room there: make it again */
    struct evi *aux;   /* reserve_for(): completions read in order from the heap */
    size_t naux, capaux;
    struct event *resv_ev; /* reserve_for(): the completions taken off, GS_RESV_DEPTH */
    size_t evict_next;     /* where the next victim search starts (eviction.c) */
    struct gunit *gunits;  /* eviction.c: per gang, its unit as the current search sees it */
    size_t capgunits;
    uint64_t vsearch; /* victim searches begun: a gunits[] entry stamped so is current */
    uint64_t vdonors; /* the current reclaim search's queues to take from (eviction.c) */
    int vgang_stale;  /* a gang's milli_low fell after its first member: the victim index's may
                       * be above it */
    /* Attempts' scratch, kept from one to the next: a single pod's and a gang's transaction, a
     * gang's waiting members, and a copy of the open-node list. */
    struct txn txn_pod, txn_gang;
    int32_t *gang_members, *gang_open;
    size_t gang_members_cap;
    /* Time slicing: per tenant, milli-GPU x microseconds asked, entitled and received. */
    gs_i128 *ts_asked, *ts_entitled, *ts_received;
    int ts_used;                   /* some pod ran time-sliced */
    struct card_shares *ts_shares; /* scratch of work.c, one per card of a node */
    /* The work ledger (work.c): what is held and kept busy now, milli-GPU, and its integrals up
     * to @acc_t (milli-GPU x us): [0] allocation, [1] busy, [2] busy discarded (lost by
     * evictions, failures and deletions), [3] tenants only: short of the dedicated quota while
     * asking for it. Per tenant (ntenants), queue (nqueues), catalog model (GS_MODEL_MAX), and
     * the fleet; gs_tenancy_usage() reads them. */
    struct usage {
        int64_t alloc, busy;
        gs_i128 sum[4];
    } * use_tenant, *use_queue, use_model[GS_MODEL_MAX], use_fleet;
    /* [tenant * GS_MODEL_MAX + model], milli: its arrived pods that could run on the model
     * (gs__tn_usable_models()); of them, those running. Their difference is the demand for the
     * model's dedicated quota its pods waiting leave (work.c). */
    int64_t *usable_asked, *usable_held;
    int64_t acc_t;
    int64_t *slot_alloc; /* work.c's scratch: per pod of a node, its allocation being summed */
    size_t cap_slot_alloc;
    /* reserve_for(): per completion taken off, the next on its node put off (-1 none); the pods
     * of one node, gathered; per node, what that call knows of it (stamped resv_stamp). */
    int32_t *resv_next, *resv_ids;
    struct resv_node *resv_nodes;
    uint64_t resv_stamp;
    /* Decisions made since the driver last took them. */
    struct gs_decision *dec;
    size_t ndec, capdec;
    int dec_taken; /* gs_tenancy_schedule() handed them out: the next decision starts afresh */
    struct gs_tenancy_work work;
    char refused_field[128];   /* of the last submission refused (gs_tenancy_refused_field()) */
    struct gs__shapes *shapes; /* the probe's answers by pod shape (shapes.c), NULL until asked */
};

/* admission.c */
int gs__tn_admission_init(struct gs_tenancy *t);

/* gs__tn_field_path() - @field, its "containers[]" naming container @at of @sp (-1: the pod's
 * sum, its one container's when it has one) as an API server names it ("spec.containers[1]",
 * "spec.initContainers[0]"), into @buf. */
void gs__tn_field_path(const struct gs_pod_spec *sp, const char *field, int at, char *buf,
                       size_t size);
/* Is tier @ts (NULL or undefined: the tier as the README defines it) a requirement: strategy
 * colocate with maxSkew 0 or unset? prefer-colocate, or colocate with a skew, only prefers. */
int gs__tn_tier_required(const struct gs_tier_spec *ts);

/* gs__tn_gang_in_group() - must a gang whose member @p (of its first) starts with @cards whole
 * cards go into one NVLink group? Where a node of a model @p may use has a group that large;
 * else (a gang larger than any such group) its members are placed each on its own. */
int gs__tn_gang_in_group(const struct gs_tenancy *t, const struct rpod *p, int64_t cards);

/* gs__tn_usable_models() - the GPU models (bit per catalog index) with a node that could hold
 * admitted @p: of a model its GPU-model constraint allows, with as many GPUs as it asks whole, in
 * one NVLink group where its tier requires one — as many as its gang must start with in one
 * group, where that fits one (gs_fleet_models_with(), the nodes' topologies as they are now). */
uint32_t gs__tn_usable_models(const struct gs_tenancy *t, const struct rpod *p);
/* gs__tn_usable_refresh() - after a member of gang @group arrived: the usable models of its
 * pending members, which the gang's cards decide, counted anew in usable_asked. O(members). */
void gs__tn_usable_refresh(struct gs_tenancy *t, int32_t group);
/* gs__tn_usable_charge() - count @p (its @usable) in @t's usable_asked (@running 0: it arrived,
 * @sign +1, or left, -1) or usable_held (@running 1: it started or stopped). */
void gs__tn_usable_charge(struct gs_tenancy *t, const struct rpod *p, int running, int sign);
void gs__tn_admission_free(struct gs_tenancy *t);
/* Admit @p (its sp, seq and submit set): 0 admitted, 1 rejected with p->reason; -ENOMEM. */
int gs__tn_admit(const struct gs_tenancy *t, struct rpod *p);
/* Register an admitted pod: its user, its gang membership. 0 or -ENOMEM. */
int gs__tn_enroll(struct gs_tenancy *t, int32_t pod);
/* gs__tn_user_release() - released pod @p no longer names its user: the user leaves once no pod
 * does. O(1). */
void gs__tn_user_release(struct gs_tenancy *t, struct rpod *p);
/* The index of PodGroup @ns/@name, or -1. */
int32_t gs__tn_group_find(const struct gs_tenancy *t, const char *ns, const char *name);
/* PodGroup @g (copied) made or made again: its index, or -ENOMEM. A new one may take the place
 * of one forgotten. */
int gs__tn_podgroup(struct gs_tenancy *t, const struct gs_podgroup_spec *g);
/* gs__tn_podgroup_forget() - PodGroup @group, dropped and without members, leaves the name map:
 * a pod that names it later finds none (and waits for it, as for any PodGroup not made yet), and
 * its place serves the next PodGroup made. */
void gs__tn_podgroup_forget(struct gs_tenancy *t, int32_t group);
/* The @k-th ResourceQuota of @p's namespace (an index into the policy's). */
static inline int32_t gs__tn_rquota_at(const struct gs_tenancy *t, const struct rpod *p, int k)
{
    return t->rq_idx[t->rq_groups[p->rq_ns].start + (size_t)k];
}
/* Pods of @p's user running now (0 for a user no pod of which was submitted). */
int32_t gs__tn_user_running(const struct gs_tenancy *t, const struct rpod *p);
/* @p's user id when a pod of that user was submitted, else -1. */
int32_t gs__tn_user_of(const struct gs_tenancy *t, const struct rpod *p);
/* The bucket key of gang @g: minMember and its members' shapes, in member order. */
uint64_t gs__tn_gang_key(const struct gs_tenancy *t, const struct gang *g);

/* ledger.c */
int gs__quota_check(struct gs_tenancy *t, struct rpod *p, int model, char *why, size_t size);
/* Does @p fit in what its tenant's whole-card pods leave of its dedicated GPUQuota of GPU model
 * @model (only whole cards are charged there, gs_quota_bucket(); a slice is its tenant's room
 * all the same)? Would it, started on @model beyond that, leave fewer free whole cards of @model
 * (gs_fleet_model_free_cards(); a slice counted as its share of one) than the other tenants'
 * dedicated quotas of it that they do not use? */
int gs__tn_in_dedicated(const struct gs_tenancy *t, const struct rpod *p, int model);
int gs__tn_takes_dedicated(const struct gs_tenancy *t, const struct rpod *p, int model);
/* Charge (+1) or give back (-1) a pod's quotas; @restore re-charges the bucket it had, so an
 * eviction undone leaves every tenant's dedicated and shared use exactly as it was. */
void gs__quota_charge(struct gs_tenancy *t, struct rpod *p, int model, int sign, int restore);
/* Deserved shares of the queues over the cluster's cards (Volcano proportion). */
void gs__tn_deserve(struct gs_tenancy *t);
/* May queue @q's pods be reclaimed by other queues (the implicit default queue may)? */
int gs__tn_reclaimable(const struct gs_tenancy *t, int32_t q);
/* Volcano's enqueue check of gang @group's spec.minResources (see ledger.c), and its tenant's
 * GPUQuota totals as a bound on them: 1 admitted (or it names none, or was admitted before), the
 * gang marked Inqueue; 0 it waits, with why in @why (@size bytes). O(pods + PodGroups + tenants'
 * namespaces) when it names some, else O(1). */
int gs__tn_enqueue(struct gs_tenancy *t, int32_t group, char *why, size_t size);

/* placement.c */
/* Is @g elastic: fewer members must run together (minMember) than it has, its members not gone
 * and those that completed (which is what a new scheduler of the pods held knows of it)? */
/* Pod group @group's PodGroup when it is made; NULL for none (@group < 0), or the placeholder of
 * one its pods named before it was made (minMember 0: its queue is not known yet). */
static inline const struct gs_podgroup_spec *gs__tn_made_group(const struct gs_tenancy *t,
                                                               int32_t group)
{
    return group >= 0 && t->pgs[group]->min_member > 0 ? t->pgs[group] : NULL;
}

/* Pod group @group is the placeholder of a PodGroup not made yet (gs__tn_made_group()). */
static inline int gs__tn_group_parked(const struct gs_tenancy *t, int32_t group)
{
    return group >= 0 && !gs__tn_made_group(t, group);
}

static inline int gs__tn_gang_elastic(const struct gang *g)
{
    return g->min > 0 && (int32_t)g->members.n - g->left + g->done > g->min;
}
int gs__tn_place_one(struct gs_tenancy *t, int32_t pod, struct txn *x, int only_node,
                     int *capacity);
int gs__tn_place_gang(struct gs_tenancy *t, int32_t group, int *capacity);
/*
 * gs__tn_gang_lacking() - the members gang @group lacks to be ready, by Volcano's gang plugin
 * (pkg/scheduler/api job_info.go: IsReady and CheckTaskReady): its ready members (running, or
 * completed Succeeded) must reach minMember and, for each task of its PodGroup's minTaskMember,
 * that task's ready members (volcano.sh/task-spec naming it) its minimum. Return: the greater of
 * what minMember lacks and the sum of what each task lacks; <= 0 when it is ready. O(1) for a
 * PodGroup without minTaskMember (or whose tenant turns gangs off), else O(members x tasks).
 */
int32_t gs__tn_gang_lacking(const struct gs_tenancy *t, int32_t group);
/* The running or Succeeded members of @p's task in gang @group beyond that task's minTaskMember
 * (task_needs() counts them): how many of them may go with the task still ready. INT32_MAX when
 * no minimum binds @p (no minTaskMember, or none names its task); 0 when its task is at or below
 * its minimum. O(members x tasks). */
int32_t gs__tn_task_spare(const struct gs_tenancy *t, int32_t group, const struct rpod *p);
/* gs__tn_ns_tenant() - the tenant whose namespaces hold @ns (index in the policy's tenants), -1
 * none; the first tenant naming it when two do. O(1). */
int32_t gs__tn_ns_tenant(const struct gs_tenancy *t, const char *ns);
/* gs__tn_task_hash() - a task name (volcano.sh/task-spec) as a member keeps it: FNV-1a, never 0;
 * 0 for "" (no task). */
uint32_t gs__tn_task_hash(const char *name);
int gs__tn_bind(struct gs_tenancy *t, int32_t pod, size_t node, uint32_t mask, struct txn *x);
int gs__tn_evict(struct gs_tenancy *t, int32_t pod, struct txn *x);
int gs__tn_unplace(struct gs_tenancy *t, int32_t pod);
int gs__tn_rollback(struct gs_tenancy *t, struct txn *x, size_t bound_to, size_t evicted_to);
int gs__tn_commit(struct gs_tenancy *t, struct txn *x, int32_t by);
int gs__vec_push(struct vec *v, int32_t x);
/* The nodes in @log from position @since, once each, in search order from node @n0 (0: ascending),
 * into t->scratch; their count, or SIZE_MAX when more than @cap (a full search is then as cheap).
 */
size_t gs__tn_logged_since(struct gs_tenancy *t, const struct nodelog *log, size_t since,
                           size_t cap, size_t n0);
/* Best node for @pod now: 0 with @node and @mask set, or 1 with the pod's reason set. @x is the
 * attempt under way (NULL none): while it has bound or evicted pods the fleet is not in a state
 * the run will keep, so the search neither uses nor leaves a "nodes freed since" record. */
int gs__tn_scores_init(struct gs_tenancy *t, struct gs_diag *d);
int gs__tn_find(struct gs_tenancy *t, int32_t pod, int only_node, const struct txn *x, size_t *node,
                uint32_t *mask, int *capacity);
/* Is pod @a before pod @b in arrival order (submit time, then seq)? */
int gs__tn_before(const struct rpod *a, const struct rpod *b);

/* backfill.c */
int gs__tn_reserve_for(struct gs_tenancy *t, int32_t head);
/* Does @p end after the reservation of the blocked head, so that the node promised to the head is
 * held against it? Never for the head itself or a pod of higher priority. */
int gs__tn_late(const struct gs_tenancy *t, const struct rpod *p);
/* Is @node held against @p, placed on @c, for the head of the queue? */
int gs__tn_held(struct gs_tenancy *t, const struct rpod *p, int32_t pod, size_t node,
                const struct gs_fit_choice *c);
/* gs__tn_held() for the extender's probed pod @p (no id of its own): 1 with why the node is held
 * in @why (@size bytes), else 0. The learning of a pass (held_hits) is left alone. */
int gs__tn_probe_held(struct gs_tenancy *t, const struct rpod *p, size_t node,
                      const struct gs_fit_choice *c, char *why, size_t size);
/* Expected ends: push @pod's at @end (its current gen); 0 or -ENOMEM. A pod's entry is live
 * while its gen and running state are those it was pushed with. */
int gs__tn_schedule_end(struct gs_tenancy *t, int32_t pod, int64_t end);
int gs__tn_end_live(const struct gs_tenancy *t, const struct event *e);
struct event gs__tn_end_pop(struct gs_tenancy *t);

/* gs__tn_hungrier() - is queue @a further below its deserved share than queue @b (used /
 * deserved, lower first; Volcano's proportion plugin's order), a tie going to the lower index
 * when @ties? GPUQueueSort's second key, after priority. */
int gs__tn_hungrier(const struct gs_tenancy *t, size_t a, size_t b, int ties);

/* work.c */
/* @pod's busy rate per card at full speed: gpu-util x its asked share (admission). */
int32_t gs__tn_work_rate(const struct rpod *p);
/* @pod starts a run on its cards (bound; gs__tn_work_retime() follows): its work ahead. */
void gs__tn_work_start(struct gs_tenancy *t, int32_t pod);
/* @pod's progress and busy time up to now, before its speed changes or it leaves. */
void gs__tn_work_settle(struct gs_tenancy *t, int32_t pod);
/* @pod left its cards (settled): what it held and kept busy is no longer counted. */
void gs__tn_work_stop(struct gs_tenancy *t, int32_t pod);
/* The pods of @node share its cards anew: allocations, speeds and expected ends. 0 or -ENOMEM. */
int gs__tn_work_retime(struct gs_tenancy *t, size_t node);
/* The work @pod did in the run it left since its last checkpoint is discarded (an eviction
 * committed, a failure); it will resume from that checkpoint. */
void gs__tn_work_lost(struct gs_tenancy *t, int32_t pod);
/* Restored running @pod has done @done_us of its nominal run in this run by now: the rest is left
 * from now on. */
void gs__tn_work_resume(struct gs_tenancy *t, int32_t pod, int64_t done_us);
/* When running @pod ends (p->end, pushed as its expected end): its work done at its speed
 * (sim.gpusched.io/duration), or its deadline (activeDeadlineSeconds) from its start, the earlier;
 * INT64_MAX when neither is known. 0 or -ENOMEM. */
int gs__tn_work_end(struct gs_tenancy *t, int32_t pod);
/* The run a pod declares before it starts, us: the shorter of its duration and its deadline;
 * GS_UNSET when it declares neither. What backfill reads as its walltime. */
int64_t gs__tn_walltime(const struct gs_pod_spec *sp);
/* Of @p's nominal run, the microseconds its current run has done by now. */
int64_t gs__tn_work_done(const struct gs_tenancy *t, const struct rpod *p);
/* What evicting running @p, on @cards cards (those of its mask: a victim search passes the count
 * it keeps, saving a read of the pod's first cache line), would discard now: milli-GPU x us of
 * work since its checkpoint. */
int64_t gs__tn_work_at_risk(const struct gs_tenancy *t, const struct rpod *p, int32_t cards);
/* The ledger's integrals up to @now (before anything changes at @now). */
void gs__tn_work_accrue(struct gs_tenancy *t, int64_t now);
/* Gang @g's running members crossed minMember: their cards are shared anew. 0 or -ENOMEM. */
int gs__tn_work_gang(struct gs_tenancy *t, int32_t g);
/* What @pod received per card and unit on average since it started (what billing meters). */
int32_t gs__tn_slice_share(const struct gs_tenancy *t, int32_t pod);

/* ledger.c */
/* GPUs from milli-GPU @m into @buf (@size bytes), in as few decimals as are exact: "2", "12.3",
 * "2.83", "0.999" (never rounded). */
void gs__milli_str(char *buf, size_t size, int64_t m);

/* order.c */
/* Queue @pod (pending, arrived) for the pass; a pod already queued stays where it is. */
int gs__tn_pending_add(struct gs_tenancy *t, int32_t pod);
/* @pod left the pending state (it was bound): its bucket drops it in time. */
void gs__tn_pending_left(struct gs_tenancy *t, int32_t pod);
/* Try every pending pod that might now run: 0, or -ENOMEM. */
int gs__tn_pass(struct gs_tenancy *t);
/* Bind into @x the single pods waiting at a priority level above @level (a smaller index) that
 * fit on @node as @x leaves it, what a preemption freed there. Return: the pods bound; -ENOMEM. */
int gs__tn_serve_higher(struct gs_tenancy *t, int32_t level, size_t node, struct txn *x);
/* Is a retry of pods skipped while their victim search backed off due by now (order.c)? Then the
 * epoch moves on. Return: 1 due, 0 not. */
int gs__tn_retry_due(struct gs_tenancy *t);
/* Pending pod @pod takes the reason its bucket last failed for, where it is newer than its own. */
void gs__tn_settle_reason(struct gs_tenancy *t, int32_t pod);
/* Pod @p's reason counts the free cards of the cluster again ("; N free nvidia.com/gpu in the
 * cluster, at most M on one node"): a remembered reason counted them when a search failed, and
 * they move with every pod that starts or ends. O(nodes with free cards); words of another shape
 * are left as they are. */
void gs__tn_recount_thin(const struct gs_tenancy *t, struct rpod *p);
void gs__tn_queue_free(struct gs_tenancy *t);

/* eviction.c */
enum evict_mode { EVICT_PREEMPT, EVICT_RECLAIM };
int gs__tn_evict_for(struct gs_tenancy *t, int32_t pod, enum evict_mode mode, struct txn *x);
/* The victim index: allocated once the levels are known; updated whenever @node's pods change. */
int gs__tn_victims_alloc(struct gs_tenancy *t);
void gs__tn_victims_update(struct gs_tenancy *t, size_t node);
/* Running @pod's start time was set anew (gs_tenancy_restore()): the index keeps it too. */
void gs__tn_victims_started(struct gs_tenancy *t, int32_t pod);
/* A gang's members started, stopped, came or went, or its minMember changed: victim searches work
 * its unit out anew, and t->elastic_running counts its running members while it is elastic. */
void gs__tn_gang_changed(struct gs_tenancy *t, int32_t group);
void gs__tn_victims_free(struct gs_tenancy *t);
/* A pod evicted before was bound at @start: its readmission grace runs from then. */
int gs__tn_readmitted(struct gs_tenancy *t, int64_t start);
/* A pod put back where it ran (gs_tenancy_restore()) at @start, earlier than now: the entry its
 * bind just added moves to @start, keeping the grace times in order. */
void gs__tn_readmit_at(struct gs_tenancy *t, int64_t start);
int gs__cmp_i32(const void *a, const void *b);

/* placement.c: the extender's probe */
struct gs_tenancy_probe {
    struct rpod p;
    int8_t model_ok[GS_MODEL_MAX];         /* quotas let it use the model: 1, 0, -1 not asked yet */
    char why[GS_MODEL_MAX][GS_REASON_MAX]; /* per model: the quota it is over */
    int8_t gang_ok;                        /* its gang could run: 1, 0, -1 not asked yet */
    char gang_why[GS_REASON_MAX];
    char held_why[GS_REASON_MAX]; /* the node is held for the head of the queue (backfill.c) */
    char mig_why[2][64]; /* the MIG reasons, naming the profile: no free slot, no such profile */
    uint64_t shape;      /* its answers kept by shape (gs__tn_shape_of()); 0 none */
    uint64_t share;      /* a shared slice: the nodes' views of its kind (gs__tn_share_of()) */
};

/* shapes.c: the probe's per-node answers by pod shape */
/* The shape of @fit, found or made (the least recently used one goes): its id, or 0 when such
 * a pod's answers are not kept (az tier) or memory ran out. */
uint64_t gs__tn_shape_of(struct gs_tenancy *t, const struct gs_fit *fit);
/* Node @node's answer for shape @id kept at its present version: 1 and *@ans (the score 0..1000,
 * or -1 - the gs_fit_reason); 0 none. O(1). */
int gs__tn_shape_get(const struct gs_tenancy *t, uint64_t id, size_t node, int32_t *ans);
/* The answers kept for shape @id, per node, and *@ver the node versions they hold at (see
 * gs__tn_shape_get()); NULL when the slot has taken another shape since. */
const int32_t *gs__tn_shape_kept(const struct gs_tenancy *t, uint64_t id, const uint64_t **ver);
/* Keep @ans for node @node and shape @id at the node's present version (nothing when the slot
 * has taken another shape since). O(1). */
void gs__tn_shape_put(struct gs_tenancy *t, uint64_t id, size_t node, int32_t ans);
void gs__tn_shapes_free(struct gs_tenancy *t);
/* The kind of shared slice @fit is (gs_fleet_share_view()), found or made (the least recently
 * used one goes): its id; 0 when @fit is no shared slice or memory ran out. */
uint64_t gs__tn_share_of(struct gs_tenancy *t, const struct gs_fit *fit);
/* gs_fleet_fit() of @fit, a pod of share kind @id, on @node, from the node's view of that kind
 * kept at its present version (made now if need be). O(cards of the node). */
enum gs_fit_reason gs__tn_share_fit(struct gs_tenancy *t, uint64_t id, size_t node,
                                    const struct gs_fit *fit, struct gs_fit_choice *c);

/* tenancy.c */
/* Record decision @d for the driver. 0 or -ENOMEM. */
int gs__tn_decide(struct gs_tenancy *t, const struct gs_decision *d);
/* Make room for one more pod: 0 or -ENOMEM. */
int gs__tn_pods_room(struct gs_tenancy *t);

#endif
