/* The framework's internal layout, shared by the engine and its plugins. */
#ifndef GS_SCHED_IMPL_H
#define GS_SCHED_IMPL_H

#include "cluster_impl.h"
#include "gpusched/rng.h"
#include "gpusched/sched.h"

#define GS_PROFILE_SLOTS 16

enum gs_reason {
    GS_REASON_NONE = 0,
    GS_REASON_CPU,
    GS_REASON_MEMORY,
    GS_REASON_GPU_MODEL,
    GS_REASON_GPU_COUNT,
    GS_REASON_GPU_SHARE,
    GS_REASON_NO_GPU,
    GS_REASON_COUNT
};

/*
 * An interned node state: everything a filter or score may look at. Immutable once created, so a
 * (state, pod class) result can be cached until the id is freed (no node in it any more).
 */
struct gs_nstate {
    uint32_t *heap; /* member node indexes, min-heap by node priority; how many: gs_nlive */
    uint32_t heap_cap;
    uint32_t active_pos;
    /* the key */
    uint64_t hash;
    int64_t cpu_milli, memory_mib; /* capacity */
    int64_t cpu_left, memory_left; /* free */
    uint8_t model, ngpu;
    uint16_t gpu_left[GS_GPUS_MAX]; /* in GPU index order */
    uint32_t tags;                  /* GPU request kinds placed here (GpuClustering) */
    uint32_t topo;                  /* hash of the node's PCIe / NVLink template */
    /* derived */
    int64_t gpu_left_sum;
    int64_t frag;      /* weighted fragmentation (FGD), FRAG_UNKNOWN until computed */
    int64_t frag_pack; /* weighted stranded share (GpuSched), FRAG_UNKNOWN until computed */
    uint8_t freed;     /* no node in it: the id is free for another state (sweep()) */
};

/*
 * What the catch-ups and the class heaps read of a state, kept apart from the key (32 bytes, not
 * a hundred and twenty): they read it for every changed state, in no order, so on a large
 * cluster it must stay in the CPU caches that the states themselves outgrow.
 */
struct gs_nlive {
    uint32_t count; /* nodes now in this state */
    uint32_t epoch; /* bumped when the state becomes active or its best node improves */
    uint32_t top;   /* priority of its best node; UINT32_MAX when empty */
    uint32_t older; /* the fresh list (see gs_sched): neighbours, GS_NO_STATE at either end */
    uint32_t newer;
    uint64_t bumped; /* s->bumps when its epoch last moved */
};

#define GS_NO_STATE UINT32_MAX

/*
 * The membership log: every node joining (+1) or leaving (-1) a state. A pod class that counts
 * reasons (after a failure) replays what it has not seen yet into its heap and reason counts, so
 * a cycle costs what changed since that class last asked, not the size of the cluster; the
 * others need only the fresh list (gs_sched).
 */
struct gs_logent {
    uint32_t state;
    uint32_t epoch;  /* the state's epoch after the change */
    int32_t delta;   /* +1 join, -1 leave */
    uint32_t better; /* the join activated the state or gave it a better node */
};

/* What a replay gathers per state before it looks the state up (catch_up()). */
struct gs_netent {
    uint32_t stamp; /* the replay that wrote it */
    int32_t delta;  /* joins minus leaves in the replayed entries */
    uint32_t epoch; /* epoch after its last join that was better; 0 none */
};

/* A candidate in a class's heap: best score first, then the lowest node priority. */
struct gs_hent {
    int32_t score; /* the weighted sum: below 2^23 (see lookup()) */
    uint32_t prio;
    uint32_t state;
    uint32_t epoch;
};

struct gs_classq {
    struct gs_hent *v;
    size_t n, cap;
    size_t pos;      /* counting: log entries consumed (counting dropped ones); SIZE_MAX: start
                        over (and always while not counting) */
    uint64_t bumped; /* not counting: the heap holds every state bumped up to here */
    int32_t *val;    /* per state id: cached result, see lookup() */
    size_t val_cap;
    int64_t reasons[GS_REASON_COUNT]; /* nodes that fail the filter, by reason, when counting */
    uint8_t counting; /* keeps reasons (after a failure, or draws that kept missing); else the
                         heap only, or nothing for a uniform draw */
};

/* A pod request as the plugins see it. */
struct gs_podclass {
    struct gs_pod_req req;
    int64_t cpu_score; /* CPU used by scores: 100m when the request is 0 (kube-scheduler) */
    uint32_t tag;      /* GpuClustering kind: bit 0 share, bit k k whole GPUs, 0 CPU-only */
};

/* One typical pod class of the workload (FGD). */
struct gs_typical {
    struct gs_podclass pc;
    int64_t count;      /* pods of this class: the frequency weight */
    int64_t memory_mib; /* mean host memory of its pods */
};

struct gs_sched;
struct gs_diag;
struct gs_fit;
struct gs_fit_choice;
struct gs_fleet;

/*
 * What the multi-tenant scheduler's placement (src/core/tenancy) shows a score plugin of one node
 * that fits the pod: the request, the cards gs_fleet_fit() chose there with its measures of them,
 * and what only the scheduler knows.
 */
struct gs_place_view {
    const struct gs_fleet *fleet;
    size_t node;
    const struct gs_fit *pod;
    const struct gs_fit_choice *choice; /* NULL for place_bound */
    int32_t zone_spread; /* az tier: 1000 when no member of the pod's gang runs in the node's
                            zone, 250 less for each that does (0 from four); else 1000 */
    int full;            /* the full way: tenants, tiers and gangs are in force */
};

/* Tie handling a score plugin asks for: among nodes, and among the cards of one node. */
enum gs_tie { GS_TIE_NODE_PRIORITY = 0, GS_TIE_UNIFORM = 1 };
enum gs_card_tie { GS_CARD_BEST_FIT = 0, GS_CARD_LOWEST_INDEX = 1, GS_CARD_RANDOM = 2 };

/*
 * A plugin. filter returns 0 when the pod fits the state, else a GS_REASON_*; score returns
 * 0..GS_SCORE_MAX for the pod on the state and, for a share of one card, on card @gpu (an index
 * with gpu_left >= the share; -1 for other pods). The engine tries every card a share fits and
 * keeps the best weighted sum; equal sums go by the first score plugin's card_tie. Scores must
 * depend only on (state, pod class, card, typical pods).
 */
struct gs_plugin {
    const char *name;
    unsigned points;
    enum gs_tie tie;
    enum gs_card_tie card_tie;
    int (*pre_filter)(const struct gs_sched *s, const struct gs_podclass *pc, struct gs_diag *d);
    int (*filter)(const struct gs_sched *s, const struct gs_nstate *st,
                  const struct gs_podclass *pc);
    int (*score)(const struct gs_sched *s, const struct gs_nstate *st, const struct gs_podclass *pc,
                 int gpu);
    /* reserve: pick the cards on node @n for @pc, given the preferred share card @gpu (-1 none) */
    int (*reserve)(struct gs_sched *s, const struct gs_node *n, const struct gs_podclass *pc,
                   int gpu, struct gs_placement *out);
    /* place: 0..GS_SCORE_MAX for a multi-tenant placement (a score plugin of that scheduler);
     * place_full_only: it scores only in the full way (0 elsewhere, and no part of the most a
     * node can score). A score plugin has score, place, or both. */
    int32_t (*place)(const struct gs_place_view *v);
    int place_full_only;
    /* place_bound: what place() could give on the node at most, before it is fitted (no
     * choice yet); NULL for GS_SCORE_MAX. A search passes over nodes that cannot win. */
    int32_t (*place_bound)(const struct gs_place_view *v);
    /* place_bound is gs_fleet_packing_bound(): a search may take the open nodes by the fleet's
     * packing levels (gs_fleet_open_level()), most packed first, and stop where none can win. */
    int place_bound_packing;
    /* place_demote: how many times (0, 1 or 2) the node's weighted sum of all the plugins is
     * divided by GS_PLACE_DEMOTE for missing what the plugin's pod prefers above every score
     * (TopologyScore: a preferred NVLink group, a zone none of its gang runs in), so that it
     * loses to the nodes that have it; NULL: never. */
    int (*place_demote)(const struct gs_place_view *v);
};

#define GS_PLACE_DEMOTE 8

struct gs_profile {
    char name[64];
    int n[GS_EP_COUNT];
    int id[GS_EP_COUNT][GS_PROFILE_SLOTS];
    int weight[GS_EP_COUNT][GS_PROFILE_SLOTS];
};

struct gs_sched {
    struct gs_cluster *c;
    struct gs_profile prof;
    struct gs_rng rng;
    enum gs_tie tie;
    enum gs_card_tie card_tie;
    uint32_t *prio;      /* per node: tie-break priority, a seeded permutation */
    uint32_t *state_of;  /* per node: its state id */
    uint32_t *state_pos; /* per node: its position in that state's member heap (apart from the
                            nodes, whose records a member heap's swaps would each miss) */

    struct gs_nstate *states;
    struct gs_nlive *live;      /* parallel to states */
    size_t nstates, states_cap; /* ids in use or free */
    uint32_t *free_ids;         /* ids sweep() freed, the lowest last */
    size_t nfree;
    size_t sweep_min;      /* empty states kept before sweep() frees them */
    struct gs_netent *net; /* per state id: a replay's scratch */
    uint32_t *touched;     /* the ids a replay met, once each */
    uint32_t net_stamp;
    uint64_t *seen; /* hashes of every state ever created, open addressing, 0 empty */
    size_t seen_cap, nseen;
    uint32_t *intern; /* open addressing over state ids (+1), 0 empty */
    size_t intern_cap;
    uint32_t *active; /* ids of states with count > 0 */
    size_t nactive;
    /* The fresh list: the active states in the order their epoch last moved, walked from the
     * newest. A class that is not counting reasons needs only the states bumped since it last
     * asked. */
    uint32_t newest;
    uint64_t bumps; /* epoch moves so far */

    struct gs_podclass *classes;
    struct gs_classq *queues; /* parallel to classes */
    size_t nclasses, classes_cap;
    struct gs_logent *log;
    size_t nlog, log_cap, log_base; /* log_base: entries dropped from the front */
    size_t ncounting;               /* classes counting reasons: the log's readers */
    size_t log_check;               /* log position at which log_compact() next looks */
    uint32_t *class_index;          /* open addressing over class ids (+1) */
    size_t class_index_cap;

    struct gs_typical *typical;
    size_t ntypical;
    int64_t typical_total;        /* sum of typical counts: FGD's normaliser */
    struct gs_waste *waste;       /* ExpectedWaste's tables (frag.c) */
    struct gs_fragmemo *fragmemo; /* results of the fragmentation sums by key (frag.c) */

    int last_reason; /* GS_REASON_* most nodes gave in the last failed cycle */
    struct gs_sched_stats stats;
};

#define FRAG_UNKNOWN INT64_MIN

/* Free shares are tabled by 10 milli-GPU (the trace's shares are multiples of it), CPU by core up
 * to 128, the largest node of the trace: more CPU than that fits every pod. */
#define WASTE_STEP  10
#define WASTE_CORES 128

/* ExpectedWaste's tables, from the workload's mix (gs__waste_table()). */
struct gs_waste {
    int32_t left[GS_MILLI_GPU + 1]; /* per free share r (milli): expected final leftover, x 1000 */
    /* per r / WASTE_STEP: of the pods that fit r, the share (per mille) whose CPU fits in c cores
     * (c = 0..WASTE_CORES), and the mean CPU (milli) of the one-card pods among them */
    int16_t cpu_fit[GS_MILLI_GPU / WASTE_STEP + 1][WASTE_CORES + 1];
    int32_t cpu_mean[GS_MILLI_GPU / WASTE_STEP + 1];
};

int gs__waste_table(struct gs_sched *s, const struct gs_typical *t, size_t nt);

/* Plugin registry, generated from plugins.def. */
extern const struct gs_plugin *const gs__plugins[];

/*
 * Best fit of a share on one card (the trace replay's rule: filter, scores and reserve): of the
 * @n cards whose free shares are @left (milli-GPU, in card order; not kept), the one with the
 * least free that still holds @milli, the lowest index among equals. Return: its index, or -1
 * when none holds @milli. (frag.c)
 */
int gs__best_fit_gpu(const uint16_t *left, int n, uint32_t milli);

/* Node-state helpers for plugins (engine.c). */
int64_t gs__frag(const struct gs_sched *s, const struct gs_nstate *st);
int64_t gs__frag_raw(const struct gs_sched *s, const struct gs_nstate *st);
int64_t gs__frag_pack(const struct gs_sched *s, const struct gs_nstate *st);
int64_t gs__frag_pack_raw(const struct gs_sched *s, const struct gs_nstate *st);
int gs__sigmoid_pct(int64_t d, int64_t total);
int gs__share_fits(const struct gs_nstate *st, const struct gs_podclass *pc);
void gs__apply(struct gs_nstate *st, const struct gs_podclass *pc, int gpu);
void gs__podclass_init(struct gs_podclass *pc, const struct gs_pod_req *r);

#endif
