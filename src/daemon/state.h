/*
 * The scheduler thread's state: the cluster, the engine, the pods held, the store and the
 * configuration in force, and the pod table's operations.
 *
 * Units as in the engine: milli-GPU, milli-cores, MiB; times are microseconds (wall clock since
 * the Unix epoch for what is stored and shown, monotonic for latencies and rate limits).
 */
#ifndef GSD_STATE_H
#define GSD_STATE_H

#include "config.h"
#include "gang.h"
#include "metrics.h"
#include "podspec.h"
#include "quota.h"

#include "gpusched/sched.h"

#include <jansson.h>

struct gs_cluster;
struct gs_profile;
struct gs_sched;
struct gsd_agents;
struct gsd_ext_names;
struct gsd_extpod;
struct gsd_http_stats;
struct gsd_podview;
struct gsd_snaps;
struct gsd_mig_memo;
struct gsd_node_health;
struct gsd_node_mig;
struct gsd_queue_use;
struct gsd_quota_use;
struct gsd_store;
struct gsd_user_use;

#define GSD_REASON_MAX 256   /* a pending pod's reason, cut to fit */
#define GSD_META_MAX   65536 /* labels + annotations as JSON text, bytes */

enum gsd_pod_state { GSD_PENDING = 0, GSD_RUNNING = 1 };
enum gsd_source { GSD_SRC_API = 0, GSD_SRC_EXTENDER = 1 };

struct gsd_pod {
    int64_t id;  /* store row id */
    int64_t seq; /* arrival order; unique for the life of the store */
    char ns[GSD_NAME_MAX], name[GSD_NAME_MAX], tenant[GSD_NAME_MAX], uid[GSD_UID_MAX];
    char *meta; /* JSON text {"labels":{..},"annotations":{..}}, owned */
    struct gs_pod_req req;
    int32_t gpumem_mib, gpucores, priority;
    char models[160];
    char group[GSD_NAME_MAX]; /* PodGroup within the namespace, "" = none (not stored: from meta) */
    char user[GSD_NAME_MAX];  /* label `user`, for maxPodsPerUser (from meta) */
    char pclass[GSD_NAME_MAX]; /* spec.priorityClassName, for ResourceQuota scopes (from meta) */
    char queue[GSD_NAME_MAX];  /* the queue it names, "" = none (from meta); see gsd_pod_queue() */
    struct gsd_group *grp;     /* its posted PodGroup, NULL = none (then placed alone) */
    uint8_t state, source;
    int8_t charged; /* GPUQuota bucket its running share counts in: 1 dedicated, 2 shared, 0 none */
    int32_t qcharged;       /* 1 + the Volcano queue its running share counts in, 0 = none */
    int64_t qmilli;         /* the GPU share it counts there */
    struct gs_placement pl; /* valid when running; a MIG pod's names no card (the engine's part) */
    char mig[GSD_MIG_MAX];  /* MIG profile asked, "" = none (then the two below are unused) */
    int8_t mig_gpu;         /* running MIG pod: its card on pl.node (-1 none) */
    int8_t mig_start;       /* running MIG pod: its instance's first memory slice */
    int16_t mig_milli;      /* running MIG pod: its GPUQuota share (gs_mig_profile_share_milli) */
    char reason[GSD_REASON_MAX];
    const char *why; /* a pending pod's main reason, kube-scheduler words (static), or NULL */
    int64_t submit_us, start_us;
    struct gsd_pod *hnext;         /* hash chain by namespace/name */
    struct gsd_pod *prev, *next;   /* every pod, by seq */
    struct gsd_pod *pprev, *pnext; /* pending pods, by seq */
    /* reads (snapshot.h): the view last published, and 1 + its place among the touched */
    struct gsd_podview *view;
    size_t touched;
};

/* One priority among the pending pods: its last pod in the pending list and how many it has. */
struct gsd_plevel {
    int32_t prio;
    struct gsd_pod *tail;
    size_t n;
};

struct gsd_state {
    struct gsd_agents *agents; /* node agents' tokens and registrations (agents.c) */
    struct gsd_config *cfg;
    struct gs_cluster *cluster;
    struct gs_profile *prof;
    struct gs_sched *sched;
    struct gsd_store *store;
    uint32_t min_card_mib;
    /* pods */
    struct gsd_pod **tab;
    size_t tab_cap, npods, nrunning, npending;
    struct gsd_pod *head, *tail, *phead, *ptail;
    struct gsd_plevel *plevels; /* the priorities pending pods have, highest first (state.c) */
    size_t nplevels, capplevels;
    int64_t next_seq;
    int retry;  /* capacity was released: retry pending pods */
    int failed; /* a store write failed: the batch is rolled back and the daemon exits */
    /* extender: pods seen by filter, for bind */
    struct gsd_extpod *ext;
    size_t ext_next;
    /* extender: the last NodeNames array read and its node indexes (extender.c), since
     * kube-scheduler sends the same one call after call */
    struct gsd_ext_names *ext_names;
    /* metrics */
    struct gsd_hist sched_lat, commit_lat;
    uint64_t placed_total, cancelled_total;
    uint64_t requeued_total, preempted_total;
    json_t *bill_cache; /* gsd_bill_accrued()'s last answer, and when (monotonic) */
    int64_t bill_cache_at_us;
    char *fc_text; /* gsd_forecast_metrics()'s last gauges, and when (monotonic) */
    int64_t fc_at_us;
    int32_t prio_floor; /* no running pod was ever of lower priority (a bound kept as pods run) */
    int64_t started_us;
    struct gsd_http_stats *http; /* the listener's counters (server.c); NULL without one */
    struct gsd_snaps *snaps;     /* what reads see (snapshot.c); NULL: nothing published */
    /* node and card health, one per node of the cluster */
    struct gsd_node_health *health;
    size_t not_ready;              /* nodes NotReady now */
    struct gsd_node_mig *mig;      /* MIG state, one per node of the cluster (mig.c) */
    struct gsd_mig_memo *mig_memo; /* empty cards' best placements per MIG model (mig.c) */
    int manual_clock;      /* --manual-clock: the node-monitor clock moves only by POST /v1/clock */
    int64_t manual_now_us; /* that clock */
    /* quota use (quota.c), recounted from the running pods at start and at every reload */
    struct gsd_quota_use *quse;     /* per config tenant */
    int64_t (*rq_used)[GSD_RQ_RES]; /* per ResourceQuota of cfg->quotas, as gsd_rq_res names */
    struct gsd_queue_use *qused;    /* per Queue document, then the implicit default (queue.c) */
    struct gsd_user_use *users;     /* running pods per tenant and user, for maxPodsPerUser */
    size_t nusers, capusers;
    /* PodGroups (gang.c), in creation order; each allocated alone so pods may point at it */
    struct gsd_group **groups;
    size_t ngroups, capgroups;
    uint64_t pass; /* retry passes run, to try each gang once per pass */
};

/*
 * gsd_state_init() - take @cfg and @cluster (owned from now on), describe the workload to the
 * scheduler (@workload[0..@nworkload), read only; none when 0: gs_sched_set_workload()), open
 * the store in @data_dir, restore every stored pod (running pods re-bound to their very cards)
 * and retry the pending. Return: 0; negative errno with @d.
 */
int gsd_state_init(struct gsd_state *st, struct gsd_config *cfg, struct gs_cluster *cluster,
                   const struct gs_pod_req *workload, size_t nworkload, const char *data_dir,
                   struct gs_diag *d);
void gsd_state_free(struct gsd_state *st);

/* gsd_state_retry() - place pending pods, highest priority first, then in arrival order, when
 * capacity came back; a pod that still does not fit may preempt (gsd_preempt_for()). */
int gsd_state_retry(struct gsd_state *st);

/* gsd_state_reload() - put @cfg in force (bucket levels carried over by tenant name). */
void gsd_state_reload(struct gsd_state *st, struct gsd_config *cfg);

/* Pod table (state.c), used by the API and extender handlers. */
struct gsd_pod *gsd_pod_find(struct gsd_state *st, const char *ns, const char *name);
/* gsd_pod_add() - register @spec as a new pod, place it (or bind it to @node when >= 0) and
 * store it; a member of a PodGroup not yet running is tried with its gang (gsd_gang_try()).
 * Return: the pod; NULL with @e (409 duplicate, 507 full, 400 over maxGPUsPerPod or never
 * placeable, 409 a bind that does not fit or is over quota, 500, 503 the store failed). */
struct gsd_pod *gsd_pod_add(struct gsd_state *st, struct gsd_podspec *spec, const char *tenant,
                            int source, int node, struct gsd_ferr *e);
/* gsd_node_model() - the catalog name of node @node's GPU model, "" when it has none. */
const char *gsd_node_model(const struct gsd_state *st, int node);
/*
 * gsd_pod_probe() - fill @p's request, names and group from @spec, @tenant ("" or NULL: none), as
 * gsd_pod_add() would, without registering anything: what quota checks read. The labels and
 * annotations stay @spec's (p->meta is not set).
 */
void gsd_pod_probe(const struct gsd_state *st, const struct gsd_podspec *spec, const char *tenant,
                   struct gsd_pod *p);
/*
 * gsd_pod_same() - whether @spec (its priority resolved), submitted through the API for @tenant,
 * is the very pod @p: a pod submitted through the API with the same request, labels, annotations,
 * priority, PodGroup, queue and MIG profile (and UID, when @spec gives one). What makes a POST
 * sent again after a lost answer get the pod back instead of a 409.
 */
int gsd_pod_same(const struct gsd_state *st, const struct gsd_pod *p,
                 const struct gsd_podspec *spec, const char *tenant);
/* gsd_pod_cancel() - release and forget @p. Return: 0; -EIO. */
int gsd_pod_cancel(struct gsd_state *st, struct gsd_pod *p);
/* gsd_time_json() - @us (wall clock) in RFC 3339 UTC with microseconds, as Kubernetes' MicroTime;
 * null for 0. New reference. */
json_t *gsd_time_json(int64_t us);
/* gsd_pod_json() - the pod as the API shows it (new reference). */
json_t *gsd_pod_json(const struct gsd_state *st, const struct gsd_pod *p);
/*
 * gsd_pod_assignment() - the annotations that tell the node side what @p got, an object of
 * strings (new reference; NULL out of memory): gpusched.io/node, gpusched.io/gpu-index (cards,
 * "0,3") and gpusched.io/gpu-milli (per card, 1000 a whole one, "0" without a GPU); empty while
 * @p is pending. GET /v1/pods shows them and bind writes them to the pod in Kubernetes: the one
 * place they are made.
 */
json_t *gsd_pod_assignment(const struct gsd_state *st, const struct gsd_pod *p);

/*
 * gsd_pod_requeue() - a running pod lost its node or card: release it, put it back to pending
 * (in arrival order) with @why as its reason, and do the same to every running member of its
 * PodGroup, so a gang goes back whole. Pending pods and pods already requeued are left alone.
 * Return: pods requeued (>= 0); -EIO (the store failed: st->failed is set).
 */
int gsd_pod_requeue(struct gsd_state *st, struct gsd_pod *p, const char *why);

/*
 * Placement steps for gangs (state.c). gsd_pod_place() runs quotas and the engine for pending
 * pod @p: on 0 it holds cards and counts in its quotas but is still on the pending list, until
 * gsd_pod_started() (unlist, store, log; 0 or -EIO) or gsd_pod_unplace() (give all back).
 * gsd_pod_place() returns 0, GS_UNSCHEDULABLE or -EINVAL with p->reason, or -ENOMEM.
 */
int gsd_pod_place(struct gsd_state *st, struct gsd_pod *p);
int gsd_pod_started(struct gsd_state *st, struct gsd_pod *p);
void gsd_pod_unplace(struct gsd_state *st, struct gsd_pod *p);

int64_t gsd_now_us(void);  /* wall clock, Unix epoch */
int64_t gsd_mono_us(void); /* monotonic */

#endif
