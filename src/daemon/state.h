/*
 * The scheduler thread's state: the inventory, the scheduler, the pods held, the store and the
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
#include "sched.h"

#include "gpusched/sched.h"

#include <jansson.h>

struct gs_cluster;
struct gs_scenario;
struct gs_trace_node;
struct gsd_agents;
struct gsd_bind;
struct gsd_ext_memo;
struct gsd_ext_names;
struct gsd_ext_index;
struct gsd_extpod;
struct gsd_http_stats;
struct gsd_podview;
struct gsd_snaps;
struct gsd_node_health;
struct gsd_store;

#define GSD_REASON_MAX 512 /* a pending pod's reason (the core's GS_REASON_MAX), cut to fit */
/* labels + annotations as JSON text, bytes: past what the API server takes (256 KiB of
 * annotations, TotalAnnotationSizeLimitB, and labels of at most 63 bytes a value), so a pod it
 * accepted (a kubectl last-applied-configuration of 100 KB) is never refused for it */
#define GSD_META_MAX (1024 * 1024)

/* GSD_EVICTING: a pod bound through Kubernetes that the scheduler evicted, its Eviction sent to
 * the API server; it holds no cards in the scheduler and is forgotten when the API server says it
 * is gone, while its node takes no pod through the extender (extender.c). */
enum gsd_pod_state { GSD_PENDING = 0, GSD_RUNNING = 1, GSD_EVICTING = 2 };
enum gsd_source { GSD_SRC_API = 0, GSD_SRC_EXTENDER = 1 };

struct gsd_pod {
    int64_t id;  /* store row id */
    int64_t seq; /* arrival order; unique for the life of the store */
    int32_t sid; /* the scheduler's id for it, -1 before it was submitted */
    char tenant[GSD_NAME_MAX], uid[GSD_UID_MAX]; /* its namespace and name: spec.ns, spec.name */
    char *meta; /* JSON text {"labels":{..},"annotations":{..}}, owned */
    char *body; /* the Pod object as received, JSON text, owned: what a restart parses */
    struct gs_pod_spec spec; /* what the scheduler reads (borrowed by it while the pod lives) */
    /* What the scheduler made of it (gsd_sched_sync()), for the API, the store and metrics. */
    struct gs_pod_req req; /* num_gpu cards of gpu_milli each (a MIG pod: 0), cpu, memory */
    int32_t gpumem_mib, gpucores, priority;
    int64_t milli;            /* GPU share it holds or asks, milli-GPU (cards x share) */
    char models[160];         /* '|'-joined GPU models it may use, "" any */
    char queue[GSD_NAME_MAX]; /* the queue it runs in */
    struct gsd_group *grp;    /* its posted PodGroup, NULL = none */
    uint8_t state, source;
    uint8_t nominated;      /* extender: submitted by filter, not yet bound by kube-scheduler */
    uint8_t nudged;         /* nominated: kube-scheduler was told its cards are held (extender.c) */
    uint8_t bound;          /* extender: a bind of it was confirmed by the API server (this run) */
    int32_t binding;        /* extender: its binds whose API calls are still being made */
    uint32_t bytes;         /* of its body, held against its tenant's (an API pod) */
    int64_t seen_us;        /* nominated: wall clock of the last filter that asked for it */
    struct gs_placement pl; /* valid when running: node, cards, milli-GPU per card */
    char mig[GSD_MIG_MAX];  /* MIG profile asked, "" = none */
    int8_t mig_start;       /* running MIG pod: its instance's first memory slice */
    /* why it waits, at most GSD_REASON_MAX - 1 bytes (owned; NULL none, as for every running pod):
     * read by gsd_reason(), written by gsd_pod_reason(); not a room in each pod, which a large
     * store's memory would pay for every pod that runs */
    char *reason;
    const char *why; /* a pending pod's main reason, kube-scheduler words (static), or NULL */
    int64_t submit_us, start_us;
    int64_t evicted_us; /* GSD_EVICTING: when its Eviction was decided; 0 unknown (a restart) */
    /* Its history (gsd_sched_sync()), kept by the store across a restart: times evicted, when it
     * first started (-1 not yet), the part of its GPUQuota charged while it runs (1 dedicated,
     * 2 shared, 0 neither), what its checkpoints saved of its walltime before this run (us). */
    int32_t evictions;
    int64_t first_start_us;
    int8_t charged;
    int64_t saved_us;
    /* Its last eviction (preempted, reclaimed, its node lost), which the next pass's reason for
     * waiting replaces in @reason: what it said (owned, NULL never: most pods never are, and
     * the room of a reason in each would cost a large store's memory) and when (scheduler clock,
     * which a manual one may have at 0), stored. */
    char *last_eviction;
    int64_t last_eviction_us;
    struct gsd_pod *hnext;         /* hash chain by namespace/name */
    struct gsd_pod *prev, *next;   /* every pod, by seq */
    struct gsd_pod *pprev, *pnext; /* the pending pods (gsd_state.pending), in no order */
    /* reads (snapshot.h): the view last published, and 1 + its place among the touched */
    struct gsd_podview *view;
    size_t touched;
};

struct gsd_state {
    struct gsd_agents *agents; /* node agents' tokens and registrations (agents.c) */
    struct gsd_config *cfg;
    struct gs_cluster *cluster; /* the inventory, for names and shapes (its free counts unused) */
    struct gs_scenario *inv;    /* the inventory as the scheduler reads it (inventory.c) */
    struct gsd_sched sched;     /* the scheduler (sched.c) */
    struct gsd_store *store;
    /* pods */
    struct gsd_pod **tab;
    size_t tab_cap, npods, nrunning, npending;
    struct gsd_pod *head, *tail;
    struct gsd_pod *pending; /* the pending pods, linked by pnext: what a pass may re-word */
    int64_t next_seq;
    /* the bytes of the API pods each tenant holds, by name (maxPodBytesPerTenant) */
    struct gsd_tbytes {
        char tenant[GSD_NAME_MAX];
        int64_t bytes;
    } * tbytes;
    size_t ntbytes;
    int failed; /* a store write failed: the batch is rolled back and the daemon exits */
    /* extender: Evictions to send once the batch that decided them commits (gsd_evict_new()) */
    struct gsd_bind **evictions;
    size_t nevictions, capevictions;
    size_t nevicting;  /* pods GSD_EVICTING now */
    size_t nnominated; /* pods nominated now */
    int nudge_due;     /* a nominated pod was placed, or an evicting one left: nudge (extender.c) */
    /* a gang member left or a held one was placed: look for short gangs (extender.c); the clock
     * (gsd_clock_us()) at which a short gang's held members give their cards back next */
    int gangs_check;
    int64_t short_due;
    /* extender: pods seen by filter, for bind */
    struct gsd_extpod *ext;
    size_t ext_next;
    size_t ext_bytes; /* their bytes (struct gsd_extpod) */
    /* extender: the last NodeNames array read and its node indexes (extender.c), since
     * kube-scheduler sends the same one call after call */
    struct gsd_ext_names *ext_names;
    /* extender: the last filter's answer node by node, for the prioritize after it (extender.c) */
    struct gsd_ext_memo *ext_memo;
    /* extender: the inventory's names packed for NodeNames' lookups (extender.c) */
    struct gsd_ext_index *ext_index;
    /* moved by every batch of the scheduler thread, the state's only writer (server.c): an
     * answer read from the state holds while it has not moved */
    uint64_t gen;
    /* metrics */
    struct gsd_hist sched_lat, commit_lat;
    uint64_t placed_total, cancelled_total, completed_total;
    /* pods found bound in Kubernetes by gpuschedd's annotations: taken in, and refused */
    uint64_t adopted_total, adopt_refused_total;
    uint64_t requeued_total, preempted_total, reclaimed_total;
    json_t *bill_cache; /* gsd_bill_accrued()'s last answer, and when (monotonic) */
    int64_t bill_cache_at_us, bill_cache_clock_us; /* and the scheduler's clock then */
    struct gsd_forecaster *fc;                     /* gsd_forecast_metrics()'s fits */
    int64_t started_us;
    struct gsd_http_stats *http; /* the listener's counters (server.c); NULL without one */
    struct gsd_snaps *snaps;     /* what reads see (snapshot.c); NULL: nothing published */
    /* node and card health, one per node of the cluster */
    struct gsd_node_health *health;
    size_t nhealth;
    size_t not_ready;      /* nodes NotReady now */
    int manual_clock;      /* --manual-clock: the clock moves only by POST /v1/clock */
    int way;               /* --way: the scheduler's way (enum gs_way), GS_WAY_FULL by default */
    int64_t manual_now_us; /* that clock */
    int held; /* manual clock: passes wait for the next POST /v1/clock that asks for one */
    int nodes_from_kube; /* --nodes kubernetes: the Nodes are followed (kubenodes.c) */
    /* PodGroups (gang.c), in creation order; each allocated alone so pods may point at it */
    struct gsd_group **groups; /* in order of seq */
    size_t ngroups, capgroups;
    int64_t group_seq; /* the next PodGroup's seq */
    /* PodGroups of the API server refused (gsd_kube_podgroups()): "NS/NAME" to "STATUS H R",
     * the refusal's status and the hashes of the body tried and of the answer, so a malformed
     * one is tried again only once it changes and each refusal is said once; emptied by a reload */
    json_t *kube_refused;
    int kube_gone; /* some PodGroup deleted in the API server is kept while pods name it */
    /* Bound pods not adopted (extender.c): "NS/NAME" to the hash of why, said once a reason */
    json_t *adopt_said;
};

/* How the daemon runs its scheduler: gpuschedd's --manual-clock and --way, and how it finds
 * its nodes at start. */
struct gsd_runopts {
    int manual_clock; /* 1: the clock starts at 0 and moves only by POST /v1/clock (sched.h) */
    int way;          /* enum gs_way: exclusive, sharing or full (gpusched/tenancy.h) */
    /* per inventory node, 1: its Node object not Ready as the inventory read it
     * (gsd_inventory_load()'s @down; borrowed for the call); NULL: none known */
    const uint8_t *api_down;
    int nodes_from_kube; /* 1: --nodes kubernetes (gsd_state's; the inventory may start empty) */
};

/*
 * gsd_state_init() - take @cfg, @cluster and @inv (owned from now on; see inventory.c), open the
 * store in @data_dir, restore every stored pod (running pods put back on their very cards) and
 * run a pass for the pending. @run: the clock and the way (borrowed; NULL: the system clock,
 * the full way). Return: 0; negative errno with @d.
 */
int gsd_state_init(struct gsd_state *st, struct gsd_config *cfg, struct gs_cluster *cluster,
                   struct gs_scenario *inv, const char *data_dir, const struct gsd_runopts *run,
                   struct gs_diag *d);
void gsd_state_free(struct gsd_state *st);

/* gsd_state_reload() - put @cfg in force (bucket levels carried over by tenant name): a new
 * scheduler of the new policy, every pod held submitted to it again in arrival order and the
 * running ones put back where they are. Return: 0; -EINVAL with @d (the new policy refuses the
 * inventory: the old one stays in force); -ENOMEM. */
int gsd_state_reload(struct gsd_state *st, struct gsd_config *cfg, struct gs_diag *d);

/*
 * gsd_state_add_node() - node @r (in @zone, "" none; with taints @taints[@ntaints], copied) joins
 * the inventory (the Node objects of the
 * API server, kubenodes.c): a new scheduler over it (as gsd_state_reload() makes one), Ready,
 * schedulable at the next pass. Return: 0; -EINVAL with @d (refused: nothing changed); -ENOMEM
 * with @d (st->failed is set: the daemon stops).
 */
int gsd_state_add_node(struct gsd_state *st, const struct gs_trace_node *r, const char *zone,
                       const struct gs_taint *taints, int ntaints, struct gs_diag *d);

/*
 * gsd_state_reshape_node() - inventory node @i is Node @r in @zone from now on: its cards, model,
 * CPU, memory, pods and zone as the Node now says (a Node taken in before its device plugin and
 * GPU feature discovery told its cards), a new scheduler over it (as gsd_state_add_node() makes
 * one). Only while no pod is on it, and its agent registered no other cards.
 * Return: 0; -EBUSY (a pod is on it, or its agent registered other cards: nothing changed);
 * -EINVAL or -ENOENT with @d (refused: nothing changed); -ENOMEM with @d (st->failed is set).
 */
int gsd_state_reshape_node(struct gsd_state *st, size_t i, const struct gs_trace_node *r,
                           const char *zone, struct gs_diag *d);

/*
 * gsd_state_set_taints() - inventory node @i has taints @taints[@ntaints] (copied) from now on
 * (its Node object's spec.taints changed, kubenodes.c): a new scheduler over them (as
 * gsd_state_add_node() makes one). Pods running there stay, whatever they tolerate
 * (gs_tenancy_restore()); pending ones go where their tolerations allow now. Nothing about a
 * node's taints is stored: a restart reads them from the Node objects again. Return: 0;
 * -EINVAL (@i out of range, too many taints: nothing changed); -ENOMEM with @d (st->failed is set:
 * the daemon stops).
 */
int gsd_state_set_taints(struct gsd_state *st, size_t i, const struct gs_taint *taints, int ntaints,
                         struct gs_diag *d);

/* Pod table (state.c), used by the API and extender handlers. */
struct gsd_pod *gsd_pod_find(struct gsd_state *st, const char *ns, const char *name);
/*
 * gsd_tenant_bytes() - the bytes of the API objects tenant @tenant holds (pods' bodies, posted
 * PodGroups' metadata), counted against maxPodBytesPerTenant: its counter, made at 0 when @make;
 * NULL when none (or out of memory). A tenant keeps its counter for the daemon's life.
 */
int64_t *gsd_tenant_bytes(struct gsd_state *st, const char *tenant, int make);
/* gsd_tenant_bytes_over() - whether @add more bytes take @tenant past maxPodBytesPerTenant: 1
 * with why in @msg (@size bytes), 0 no. */
int gsd_tenant_bytes_over(struct gsd_state *st, const char *tenant, int64_t add, char *msg,
                          size_t size);
/* gsd_pod_add() - register @spec (its namespace set) as a new pod of @tenant ("" none) from
 * @source, hand it to the scheduler, run a pass (or, @node >= 0, bind it there: the extender's
 * bind) and store it. Return: the pod (pending or running, as the pass left it); NULL with @e
 * (409 duplicate, 507 full, 400 admission refuses it, 409 a bind that does not fit, 500, 503 the
 * store failed). @spec's body and maps are taken. */
struct gsd_pod *gsd_pod_add(struct gsd_state *st, struct gsd_podspec *spec, const char *tenant,
                            int source, int node, struct gsd_ferr *e);
/* gsd_node_model() - the catalog name of node @node's GPU model, "" when it has none. */
const char *gsd_node_model(const struct gsd_state *st, int node);
/*
 * gsd_pod_same() - whether @spec, submitted through the API for @tenant, is the very pod @p: a
 * pod submitted through the API as the same Pod object (the body as received, its namespace
 * set) for the same tenant. What makes a POST sent again after a lost answer get the pod back
 * instead of a 409.
 */
int gsd_pod_same(const struct gsd_pod *p, const struct gsd_podspec *spec, const char *tenant);
/*
 * gsd_pod_reason() - @p's reason becomes printf(@fmt, ...), cut to GSD_REASON_MAX - 1 bytes; ""
 * clears it. The same text again allocates nothing (a pass words every pending pod again).
 * Return: 1 when the text changed; 0 when it did not; -ENOMEM (the reason it had stays).
 */
int gsd_pod_reason(struct gsd_pod *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* gsd_reason() - @p's reason ("" none), borrowed until the next gsd_pod_reason() of it. */
static inline const char *gsd_reason(const struct gsd_pod *p)
{
    return p->reason ? p->reason : "";
}
/* gsd_pod_strings_free() - free the text @p owns (meta, body, reason, last eviction), not @p. */
void gsd_pod_strings_free(struct gsd_pod *p);
/* gsd_pod_cancel() - release and forget @p. Return: 0; -EIO. */
int gsd_pod_cancel(struct gsd_state *st, struct gsd_pod *p);
/* gsd_pod_unstart() - @p, put back to pending at @now_us (scheduler clock), loses its start in the
 * store (when stored: its open ledger run ends there) and in memory. Return: 0; the store's
 * error (gsd_store_pod_unstart()'s; the caller fails the daemon). */
int gsd_pod_unstart(struct gsd_state *st, struct gsd_pod *p, int64_t now_us);
/* gsd_pod_set_state() - @p (linked) becomes GSD_PENDING, GSD_RUNNING or GSD_EVICTING: the counts,
 * its gang's running members and the pending list follow. */
void gsd_pod_set_state(struct gsd_state *st, struct gsd_pod *p, int state);
/* gsd_pod_complete() - running pod @p ended at @now (the manual clock ran out its walltime, or
 * Kubernetes says it Succeeded), gs_tenancy_complete() told already: released and forgotten; when
 * @succeeded (not Failed by its deadline) its PodGroup counts it. Return: 0; -EIO. */
int gsd_pod_complete(struct gsd_state *st, struct gsd_pod *p, int64_t now, int succeeded);
/* gsd_time_json() - @us (wall clock) as gs_time_text() writes it with microseconds, as
 * Kubernetes' MicroTime, a JSON string, 0 too (a manual clock's start). New reference. */
json_t *gsd_time_json(int64_t us);
/* gsd_pod_json() - the pod as the API shows it, a pending pod's reason as the scheduler has it
 * now (new reference). */
json_t *gsd_pod_json(struct gsd_state *st, struct gsd_pod *p);
/*
 * gsd_pod_assignment() - the annotations that tell the node side what @p got, an object of
 * strings (new reference; NULL out of memory): gpusched.io/node, gpusched.io/gpu-index (cards,
 * "0,3") and gpusched.io/gpu-milli (per card, 1000 a whole one, "0" without a GPU); empty while
 * @p is pending. GET /v1/pods shows them and bind writes them to the pod in Kubernetes: the one
 * place they are made.
 */
json_t *gsd_pod_assignment(const struct gsd_state *st, const struct gsd_pod *p);

/* The assignment annotations gsd_pod_assignment() writes that name the node and the cards. */
#define GSD_NODE_ANNOTATION  "gpusched.io/node"
#define GSD_CARDS_ANNOTATION "gpusched.io/gpu-index"

/* What a pod's assignment annotations say it holds (gsd_pod_assigned()). */
struct gsd_assigned {
    int node;              /* inventory index */
    uint32_t gpu_mask;     /* bit i: card i */
    int mig_start;         /* its MIG instance's first memory slice; -1 none */
    int gpu_milli;         /* milli-GPU on each card, as gpusched.io/gpu-milli says */
    char mig[GSD_MIG_MAX]; /* gpusched.io/mig-profile, "" none */
};

/*
 * gsd_pod_assigned() - read back what gsd_pod_assignment() wrote: annotations @ann (a pod's
 * metadata.annotations, an object of strings; NULL or not an object: none) into *@out.
 * gpusched.io/node must name a node of the inventory, gpusched.io/gpu-index be a card list as
 * gs_gpu_list_text() writes it ("" none), gpusched.io/gpu-milli a number and, with
 * gpusched.io/mig-profile, gpusched.io/mig-placement a number too. Whether those cards suit the
 * pod is the scheduler's to say (gsd_pod_adopt()). Return: 0; -ENOENT without
 * gpusched.io/node (gpuschedd did not bind it); -EINVAL with @why (@cap bytes, the caller's)
 * naming the annotation and what is wrong.
 */
int gsd_pod_assigned(const struct gsd_state *st, const json_t *ann, struct gsd_assigned *out,
                     char *why, size_t cap);

/*
 * gsd_pod_adopt() - take in @spec (its namespace set), a pod Kubernetes runs bound by gpuschedd's
 * annotations that gpuschedd does not hold (its store was lost, or is an older copy), as a pod of
 * the extender of @tenant ("" none) running on exactly the cards @a names, from now on (quotas,
 * metrics, bills), over quota too; stored, no pass run. @spec's body and maps are taken.
 * Return: the pod; NULL with @e: 409 a pod of that name is held already or maxPods are, 409 the
 * cards are not free for it (e->msg names the annotation and why: no such card, a card held by
 * another pod, not what the pod asks), 400 admission refuses the pod, 500 out of memory, 503 the
 * store failed (st->failed is set).
 */
struct gsd_pod *gsd_pod_adopt(struct gsd_state *st, struct gsd_podspec *spec, const char *tenant,
                              const struct gsd_assigned *a, struct gsd_ferr *e);

/* gsd_pod_nominate() - @p, of the extender, is nominated: filter took it, kube-scheduler has not
 * bound it; once placed it is "allocated" (its cards held, not bound: Volcano's word). */
void gsd_pod_nominate(struct gsd_state *st, struct gsd_pod *p);

/* gsd_pod_unnominate() - @p is no longer a nominated pod (bound, evicted or gone); its view is
 * the caller's to touch. */
void gsd_pod_unnominate(struct gsd_state *st, struct gsd_pod *p);

/*
 * gsd_nodes_ok_text() - the names of the nodes @sp may use (sp->nodes_ok), comma-separated, as
 * the store keeps them (malloc'd, caller frees); NULL when it has no set or out of memory.
 * gsd_nodes_ok_read() - @names back into sp->nodes_ok, by the inventory now (a name it no longer
 * lists is left out; the set covers the nodes it lists now). Return: 0; -ENOMEM.
 */
char *gsd_nodes_ok_text(const struct gsd_state *st, const struct gs_pod_spec *sp);
int gsd_nodes_ok_read(const struct gsd_state *st, const char *names, struct gs_pod_spec *sp);

/* gsd_pod_allocated() - @p holds its cards but kube-scheduler has not bound it yet. */
static inline int gsd_pod_allocated(const struct gsd_pod *p)
{
    return p->state == GSD_RUNNING && p->nominated;
}

int64_t gsd_now_us(void);  /* wall clock, Unix epoch */
int64_t gsd_mono_us(void); /* monotonic */

#endif
