/*
 * gpusched — the device-level state of a cluster for multi-tenant scheduling: every card's mode,
 * memory and compute share, every node's host resources and the pods on it.
 *
 * A card is in exactly one mode: free, exclusive (one pod holds it whole), shared (fractions:
 * memory MiB, compute milli and a client count), MIG or time-sliced. A card leaves a mode only when
 * empty. GPU memory is never overcommitted; compute may be, up to the overcommit ratio of the tier
 * or profile: a shared card's cap is the smallest ratio of the pods on it, so admitting a pod never
 * breaks a promise made to a pod already there — and where that cap is above 1000, further, for
 * as long as the rates of the slices (what they keep the card busy) sum to 1000 at most: sharing
 * follows utilisation, and the card's state depends only on who is on it
 * (a release followed by the same commit restores it exactly). Clients work the same way: a shared
 * card holds at most the smallest max_clients of its pods (a VirtualGPUClass's maxClients), and
 * never more than GS_CARD_CLIENTS_MAX. A shared slice goes only to a free or shared card, a
 * time-slice replica to a free or time-sliced one, a whole card only to a free one, a MIG instance
 * only to a free or MIG card: a card is never offered in two modes at once.
 *
 * Time slicing: a card of a node whose template offers replicas (timeSlicing.replicas) turns to
 * time-sliced mode with its first replica and back to free with its last; it holds at most that
 * many replicas. Memory is charged as declared (a replica that declares none is charged the card's
 * memory / replicas) and never overcommitted; compute is not capped: the pods share the card's
 * time, so the card's compute sum may pass 1000 (gs_fleet_card_compute()).
 *
 * Conversion: an empty card keeps the mode it last had unless conversion is on and it has held
 * that mode for the hold time (gs_fleet_set_modes()); each change of mode counts.
 *
 * MIG: a card of a model with a MIG geometry (gpusched/mig.h) turns to MIG mode when its first
 * instance is created and back to free when its last one goes; a card with live instances is
 * never repartitioned. The card and slot are chosen to keep the most profiles placeable, a card
 * already in MIG mode before an empty one.
 *
 * Isolation (seed 000 §3.1): a pod with hard isolation goes only to a node whose pods are all of
 * its tenant, and a node holding a hard-isolation pod takes no other tenant's pods.
 *
 * Units: milli-GPU (1000 = one card), milli-CPU, MiB. Node and card indexes are those of the
 * policy's nodes. Thread safety: none. Determinism: every choice breaks ties by the lowest index.
 */
#ifndef GPUSCHED_FLEET_H
#define GPUSCHED_FLEET_H

#include <stddef.h>
#include <stdint.h>

#include "gpusched/policy.h"

struct gs_diag;
struct gs_mig_card;
struct gs_fleet;

enum gs_card_mode {
    GS_CARD_FREE = 0,
    GS_CARD_EXCLUSIVE,
    GS_CARD_SHARED,
    GS_CARD_MIG,
    GS_CARD_TIMESLICED
};

/* What one pod asks of one node. */
struct gs_fit {
    int ncards;               /* 0..GS_GPUS_MAX cards (exclusive) or slices on distinct cards */
    int whole;                /* 1: exclusive cards; 0: shared slices */
    int32_t compute;          /* shared: compute share per card, milli (1..1000) */
    int64_t mem_mib;          /* shared: GPU memory per card, MiB (>= 1) */
    int32_t overcommit;       /* shared: compute cap of a card this pod may join, milli (>= 1000) */
    int32_t rate;             /* shared: what it keeps a card busy at full speed, milli (its
                                 gpu-util x its share): above a cap of 1000 a card takes slices
                                 while their rates sum to 1000 at most */
    int32_t max_clients;      /* shared: pods a card may hold while this one is there, 0 = no cap */
    uint32_t model_mask;      /* allowed catalog models, 0 = any */
    int32_t node_only;        /* the one node it may use (spec.nodeName): its index + 1; 0 = any */
    int32_t zone_only;        /* the one zone it may use: gs_fleet_node_zone() + 1; 0 = any */
    const uint64_t *nodes_ok; /* the nodes it may use (gs_pod_spec's), NULL = any */
    uint32_t nodes_ok_n;
    uint64_t tolerated;   /* bit c - 1: it tolerates the taints of taint class c
                             (gs_fleet_node_taint_class()); an untainted node takes any pod */
    uint64_t prefer_not;  /* bit c - 1: class c has a PreferNoSchedule taint it does not
                             tolerate: the node scores less (gs_node_prefers_not()) */
    int64_t cpu_milli;    /* host CPU */
    int64_t memory_mib;   /* host memory */
    int32_t tenant;       /* owner, >= 0 */
    int32_t group;        /* gang (PodGroup) index, -1 none: spread counts replicas by it */
    int hard;             /* hard isolation */
    enum gs_tier tier;    /* nvlink: every card in one NVLink group; pcie: prefer one domain */
    int tier_soft;        /* nvlink as a preference (prefer-colocate): one NVLink group when a
                             node has one free, else the cards as a tier-less pod takes them */
    uint32_t nvlink_only; /* nvlink tier: bit g set = only NVLink group g (a gang kept together) */
    const char *mig;      /* a MIG instance of this profile ("2g.20gb") on one card, or NULL */
    int mig_start;        /* commit: the instance's first memory slice (a fit's choice) */
    int timeslice;        /* 1: time-slice replicas (not @whole) */
    int32_t units;        /* slices, replicas: clients it is on each card (0 or 1: one); a pod
                             asking N on one card is one slice of N x the share and N units */
};

/* Why a pod does not fit a node, in kube-scheduler's words (gs_fit_reason_text()). */
enum gs_fit_reason {
    GS_FIT_OK = 0,
    GS_FIT_MODEL,      /* node's GPU model not allowed */
    GS_FIT_CPU,        /* Insufficient cpu */
    GS_FIT_MEMORY,     /* Insufficient memory */
    GS_FIT_GPU,        /* Insufficient nvidia.com/gpu */
    GS_FIT_GPUMEM,     /* Insufficient nvidia.com/gpumem */
    GS_FIT_GPUCORES,   /* Insufficient nvidia.com/gpucores */
    GS_FIT_NVLINK,     /* enough cards, but not inside one NVLink group */
    GS_FIT_ISOLATION,  /* hard isolation: another tenant's pods are on the node */
    GS_FIT_MIG,        /* no card here can take an instance of the MIG profile */
    GS_FIT_MIG_POLICY, /* the GpuClusterPolicy does not allow the profile on this model */
    GS_FIT_NOT_READY,  /* the node is not ready (gs_fleet_set_node_ready()) */
    GS_FIT_MIG_MODEL,  /* the node's GPU model has no MIG profile of that name */
    GS_FIT_NODE_NAME,  /* not the node spec.nodeName names */
    GS_FIT_TAINT,      /* a NoSchedule or NoExecute taint the pod does not tolerate */
    GS_FIT_PODS,       /* Too many pods: the node runs its maxPods (GS_NODE_PODS_DEFAULT) */
    GS_FIT_REASONS
};

/* gs_fit_reason_text() - "Insufficient nvidia.com/gpu", ...; a static string. */
const char *gs_fit_reason_text(enum gs_fit_reason r);

/* gs_fit_reason_words() - gs_fit_reason_text() for a pod that asks time-slice replicas (@replicas
 * 1: nvidia.com/gpu.shared, the resource it is then short of) or not; a static string. */
const char *gs_fit_reason_words(enum gs_fit_reason r, int replicas);

/* Where a pod fits on a node. */
struct gs_fit_choice {
    uint32_t mask;     /* node-local GPU indexes chosen */
    int32_t topology;  /* 0..1000: how well the cards keep together (one PCIe domain = 1000);
                          a soft-nvlink pod outside one NVLink group: below 800, at most 500 */
    int32_t packing;   /* 0..1000: how allocated the node's cards are after the placement */
    int32_t isolation; /* 0..1000: 1000 when the node holds no other tenant's pods */
    int32_t spread;    /* 0..1000: 1000 when no replica of the same gang is on the node */
    int mig_start;     /* MIG requests: the start slot chosen (NVIDIA's placement rules) */
};

/*
 * gs_fleet_new() - the fleet of @s's nodes (templates resolved, every card free).
 * Return: 0 and *@out (free with gs_fleet_free()); -EINVAL with @d when a node's template or model
 * is unknown; -E2BIG with @d past GS_TAINT_CLASSES sets of taints; -ENOMEM.
 */
int gs_fleet_new(const struct gs_policy *s, struct gs_fleet **out, struct gs_diag *d);

/*
 * gs_fleet_mig_allowed() - whether @s's GpuClusterPolicy lets cards of MIG model @mig_model
 * (gs_mig_model_find()) create instances of its profile number @profile: always without a
 * policy; never under strategy none or single (they advertise no nvidia.com/mig-<profile>
 * resources), on a model the policy does not list or lists with
 * migEnabled false, or for a profile left out of the device's migProfiles.
 * Return: 1 allowed, 0 not (also for @profile out of 0..GS_MIG_PROFILES_MAX-1).
 */
int gs_fleet_mig_allowed(const struct gs_policy *s, int mig_model, int profile);

/* gs_fleet_free() - NULL allowed. */
void gs_fleet_free(struct gs_fleet *f);

/* gs_fleet_node_count(), gs_fleet_card_count() - sizes. */
size_t gs_fleet_node_count(const struct gs_fleet *f);
int64_t gs_fleet_card_count(const struct gs_fleet *f);

/* Read-only views of one node, for reports and tests. */
int gs_fleet_node_model(const struct gs_fleet *f, size_t node);
int gs_fleet_node_zone(const struct gs_fleet *f, size_t node);
int gs_fleet_node_gpus(const struct gs_fleet *f, size_t node);

#define GS_TAINT_CLASSES 64 /* different sets of taints among a fleet's nodes */
/* gs_fleet_node_taint_class() - @node's taint class: 0 when it has no taints, else c >= 1, the
 * same for nodes of the same taints in the same order (numbered as they first appear).
 * gs_fleet_taint_classes() - how many classes >= 1 there are; @first (may be NULL; room for
 * GS_TAINT_CLASSES): at c - 1, the first node of class c. */
int gs_fleet_node_taint_class(const struct gs_fleet *f, size_t node);
int gs_fleet_taint_classes(const struct gs_fleet *f, size_t *first);
int gs_fleet_node_free_cards(const struct gs_fleet *f, size_t node);
/* gs_fleet_model_free_cards() - the whole cards of GPU model @model (catalog index) that a pod
 * of whole cards could take now: free, healthy, on ready nodes. A card that holds a shared
 * slice, a time-slice replica or a MIG instance is not free. Kept as cards change: O(1).
 * Return: the count; 0 for a model out of range or absent. */
int32_t gs_fleet_model_free_cards(const struct gs_fleet *f, int model);
/* gs_fleet_node_sound_free_cards() - the cards of @node that a pod of whole cards could take
 * now: free and healthy, 0 while it is not ready (gs_fleet_model_free_cards()'s, per node). O(1).
 */
int gs_fleet_node_sound_free_cards(const struct gs_fleet *f, size_t node);
enum gs_card_mode gs_fleet_card_mode(const struct gs_fleet *f, size_t node, int gpu);
int32_t gs_fleet_card_compute(const struct gs_fleet *f, size_t node, int gpu);
int64_t gs_fleet_card_mem_used(const struct gs_fleet *f, size_t node, int gpu);
int64_t gs_fleet_card_mem(const struct gs_fleet *f, size_t node, int gpu);
/* gs_fleet_card_mig() - card @gpu's MIG instances while it is in MIG mode, else NULL (owned by @f,
 * valid until the next commit or release). gs_fleet_node_left() - CPU (milli-cores) and memory
 * (MiB) of @node not taken by pods. gs_card_mode_name() - "free", "exclusive", "shared", "mig",
 * "timesliced". */
const struct gs_mig_card *gs_fleet_card_mig(const struct gs_fleet *f, size_t node, int gpu);
void gs_fleet_node_left(const struct gs_fleet *f, size_t node, int64_t *cpu_milli,
                        int64_t *memory_mib);
const char *gs_card_mode_name(enum gs_card_mode m);

/*
 * gs_fleet_packing_bound() - a bound the packing gs_fleet_fit() would give @r on @node cannot
 * pass (0..1000: the node's cards' compute held, each card's up to 1000, with @r's share added
 * on as many cards as it asks, over the node's cards), from a packed per-node sum, without
 * reading the node: a search may pass over a node whose best score cannot win. O(1).
 */
int32_t gs_fleet_packing_bound(const struct gs_fleet *f, size_t node, const struct gs_fit *r);

/*
 * gs_fleet_slice_room() - the most compute (milli, 0..1000) one card of @node leaves a shared
 * slice whose cap is 1000 at most: 1000 for a free card, 1000 less its compute for a shared one,
 * 0 for others and unhealthy cards. A slice asking more fits no card there (gs_fleet_fit() says
 * why); from a packed per-node value. O(1).
 */
int32_t gs_fleet_slice_room(const struct gs_fleet *f, size_t node);

/*
 * gs_fleet_isolation() - the isolation gs_fleet_fit() gives @r on @node: 1000 when no other
 * tenant's pod runs there, else 0; from a packed per-node value, without reading the node. O(1).
 */
int32_t gs_fleet_isolation(const struct gs_fleet *f, size_t node, const struct gs_fit *r);

/*
 * gs_fleet_fit() - can @r go on node @node now, and on which cards.
 * Return: GS_FIT_OK with *@out filled, or the first reason it cannot (out untouched).
 * Complexity: O(cards of the node + pods on it).
 */
enum gs_fit_reason gs_fleet_fit(const struct gs_fleet *f, size_t node, const struct gs_fit *r,
                                struct gs_fit_choice *out);

/*
 * What a node offers shared slices (not whole cards, MIG or time-slice replicas) of one kind
 * whatever their size: gs_fleet_fit() of such a pod is gs_fleet_share_view() then
 * gs_fleet_share_pick(), and a view holds for every pod whose gs_fit differs only in compute,
 * mem_mib and rate, while gs_fleet_node_version() stays the same. So pods asking shares of
 * sizes not asked before cost a pick from the view per node, not the node's cards read again.
 */
struct gs_share_card {
    int64_t mem_left;  /* GPU memory (MiB) not held on it */
    int32_t head;      /* compute (milli) it takes up to its cap */
    int32_t busy_left; /* a cap above 1000: the rate (milli) it takes; else -1 */
    int32_t used;      /* compute (milli) held on it now */
    uint8_t gpu, pcie; /* its index on the node, its PCIe domain */
    uint8_t shared;    /* in shared mode (else free) */
    uint8_t room;      /* room for the slice's clients under every cap there */
};
struct gs_share_view {
    uint8_t why;  /* GS_FIT_OK, or why no size fits (the host's reason: node, CPU, memory...) */
    uint8_t n;    /* cards a slice may join (free, or shared), in the order a fit takes them */
    uint8_t ngpu; /* the node's cards */
    int32_t isolation, spread; /* as gs_fleet_fit() gives them */
    int64_t packed;            /* the node's cards' compute held, each up to 1000 */
    struct gs_share_card card[GS_GPUS_MAX];
};

/*
 * gs_fleet_share_view() - node @node's offer to shared slices of @r's kind into *@v (caller's).
 * @r: a shared request (!whole, no mig, not timeslice, ncards > 0); its compute, mem_mib and
 * rate are not read. Return: 0; -EINVAL for any other request (*@v untouched).
 * Complexity: O(cards of the node + pods on it).
 * gs_fleet_share_pick() - gs_fleet_fit() of @r (a request of the view's kind) on the view's node:
 * GS_FIT_OK with *@out filled, or the first reason it cannot. O(cards of the node).
 */
int gs_fleet_share_view(const struct gs_fleet *f, size_t node, const struct gs_fit *r,
                        struct gs_share_view *v);
enum gs_fit_reason gs_fleet_share_pick(const struct gs_share_view *v, const struct gs_fit *r,
                                       struct gs_fit_choice *out);

/*
 * gs_fleet_commit() - bind pod @pod (the caller's id) with request @r to @mask on @node, as a
 * gs_fleet_fit() answer allows. Return: 0; -EINVAL when it does not fit there (nothing changed);
 * -ENOMEM.
 */
int gs_fleet_commit(struct gs_fleet *f, size_t node, const struct gs_fit *r, uint32_t mask,
                    int32_t pod);

/*
 * gs_fleet_release() - give back what pod @pod holds on @node (@r and @mask as committed).
 * Return: 0; -ENOENT when @pod is not on @node.
 */
int gs_fleet_release(struct gs_fleet *f, size_t node, const struct gs_fit *r, uint32_t mask,
                     int32_t pod);

/*
 * gs_fleet_cycle() - @node as releasing its pods @pods[0..@n) in that order (ids as committed)
 * and committing them back in reverse order would leave it, without the work: its pods in the
 * order those calls leave them, and the mode history of each card they alone held as its last
 * pod leaving and coming back leaves it; what the node holds does not change. For a caller that
 * would do those calls only to read nothing of @node in between. Return: 0; -ENOENT when a pod
 * is not on @node (@node is then left as releasing those before it and committing them back
 * would leave it).
 */
int gs_fleet_cycle(struct gs_fleet *f, size_t node, const int32_t *pods, size_t n);

/* gs_fleet_pod_count(), gs_fleet_pod_at() - the pods on @node (ids as committed, in no fixed
 * order; -1 past the end). */
size_t gs_fleet_pod_count(const struct gs_fleet *f, size_t node);
int32_t gs_fleet_pod_at(const struct gs_fleet *f, size_t node, size_t i);

/*
 * gs_fleet_allocated() - milli-GPU allocated over the fleet, each card counted at most 1000
 * (an overcommitted card is fully allocated, not more). O(1).
 */
int64_t gs_fleet_allocated(const struct gs_fleet *f);

/*
 * gs_fleet_open() - the nodes that have a free or a shared card, ascending; *@n their count.
 * Only these can take a GPU pod. Owned by @f, valid until the next commit or release.
 */
const int32_t *gs_fleet_open(const struct gs_fleet *f, size_t *n);

/* Packing levels of gs_fleet_open_level(): a node of level L holds L/GS_FLEET_LEVELS to
 * (L+1)/GS_FLEET_LEVELS of its cards' compute (GS_FLEET_LEVELS: all of it). */
#define GS_FLEET_LEVELS 64

/*
 * gs_fleet_open_level() - the open nodes (gs_fleet_open()) of @ngpu cards (1..GS_GPUS_MAX) whose
 * packing level is @level (0..GS_FLEET_LEVELS), ascending; *@n their count, *@bound the most
 * gs_fleet_packing_bound() gives @r on any of them (it does not fall as the level falls). So a
 * search may visit the most packed nodes first and stop at a level whose bound cannot win. NULL
 * with *@n 0 for a card count or level the fleet has no node of. Owned by @f, valid until the
 * next commit or release. O(1), but for the nodes whose cards changed since the lists were last
 * read: each is put right then, in O(open nodes) (a release undone before the next read moves
 * nothing).
 */
const int32_t *gs_fleet_open_level(const struct gs_fleet *f, int ngpu, int level,
                                   const struct gs_fit *r, size_t *n, int32_t *bound);

/*
 * gs_fleet_open_next_level() - the highest packing level at or below @level (-1..GS_FLEET_LEVELS)
 * that holds an open node of @ngpu cards, so a search passes the empty ones at once; -1 when none
 * does (or the fleet has no node of @ngpu cards). O(levels).
 */
int gs_fleet_open_next_level(const struct gs_fleet *f, int ngpu, int level);

/*
 * gs_fleet_fits_without() - would the whole-card request @r fit on @node were the pods
 * @gone[0..@ngone) (pod ids on @node; others are ignored) released? The same answer as releasing
 * them, gs_fleet_fit() and committing them back, without touching the fleet: victim searches try
 * many sets per node.
 * Return: 1 fits, 0 does not, -EINVAL when @r is not a whole-card request (shared or MIG).
 */
int gs_fleet_fits_without(const struct gs_fleet *f, size_t node, const struct gs_fit *r,
                          const int32_t *gone, size_t ngone);

/*
 * gs_fleet_prefetch() - start fetching into the cache what gs_fleet_fits_without() reads of
 * @node: its record and cards (@pods 0; nothing of it need be cached), or its pods' slots (@pods
 * 1; best once the record has come). A hint: changes nothing, answers nothing. O(cards or pods).
 */
void gs_fleet_prefetch(const struct gs_fleet *f, size_t node, int pods);

/*
 * gs_fleet_nvlink_free() - free cards of @node per NVLink group: @free_in[g] for group g (an
 * array of GS_GPUS_MAX, filled). Return: the largest count.
 */
int gs_fleet_nvlink_free(const struct gs_fleet *f, size_t node, int free_in[GS_GPUS_MAX]);

/*
 * gs_fleet_set_modes() - whether an empty card may change mode (@convert 1) and after how long in
 * its mode (@hold_us >= 0, microseconds since it took it). With @convert 0 a card keeps the first
 * mode it takes. Default: 1 and 0, any empty card takes any mode.
 * gs_fleet_set_now() - the clock those hold times are read against, microseconds.
 * gs_fleet_conversions() - empty cards that took a mode other than their last one so far; a mode
 * taken and left again in the same instant by the same pod (an attempt undone) does not count.
 */
void gs_fleet_set_modes(struct gs_fleet *f, int convert, int64_t hold_us);
void gs_fleet_set_now(struct gs_fleet *f, int64_t now_us);

/*
 * gs_fleet_node_version() - a number that changes whenever anything gs_fleet_fit() reads for
 * @node changes (its pods, readiness, cards' health, topology; the fleet's modes, and its clock
 * while hold times count), never 0: an answer kept with it holds while it is the same. O(1).
 */
uint64_t gs_fleet_node_version(const struct gs_fleet *f, size_t node);
int64_t gs_fleet_conversions(const struct gs_fleet *f);
/*
 * gs_fleet_card_history() - the mode card @gpu of @node last took (GS_CARD_FREE: none yet; it
 * keeps it when empty) and since when, microseconds, into *@since_us.
 * gs_fleet_set_card_history() - put that history back (a snapshot continued): the card last took
 * @mode (not GS_CARD_FREE) at @since_us. Return: 0; -EINVAL when the card holds pods in another
 * mode, or its node cannot give @mode (MIG without a MIG geometry, time slicing without
 * replicas).
 */
enum gs_card_mode gs_fleet_card_history(const struct gs_fleet *f, size_t node, int gpu,
                                        int64_t *since_us);
int gs_fleet_set_card_history(struct gs_fleet *f, size_t node, int gpu, enum gs_card_mode mode,
                              int64_t since_us);
/* gs_fleet_next_convertible() - the earliest time after now the hold of an empty card of @node
 * ends, or INT64_MAX (none, or no hold). O(cards of the node). */
int64_t gs_fleet_next_convertible(const struct gs_fleet *f, size_t node);

/*
 * Health, as node agents report it. A node not ready, or a card unhealthy, takes no new pod (a
 * fit there fails, GS_FIT_NOT_READY for the node); what runs there stays until its owner takes it
 * off. gs_fleet_set_node_ready() / gs_fleet_set_card_healthy() change it (@gpu within the node's
 * cards); gs_fleet_node_ready() / gs_fleet_card_healthy() read it. Every node and card starts
 * ready and healthy. O(1).
 */
void gs_fleet_set_node_ready(struct gs_fleet *f, size_t node, int ready);
int gs_fleet_node_ready(const struct gs_fleet *f, size_t node);
void gs_fleet_set_card_healthy(struct gs_fleet *f, size_t node, int gpu, int healthy);
int gs_fleet_card_healthy(const struct gs_fleet *f, size_t node, int gpu);
/* gs_fleet_node_sound() - @node is ready and every card of it healthy: empty, it is the same as
 * every empty node of its template. */
int gs_fleet_node_sound(const struct gs_fleet *f, size_t node);
/* gs_fleet_node_bare() - @node holds no pod and is sound (gs_fleet_pod_count() 0 and
 * gs_fleet_node_sound()), read from a packed array: what a search asks of every node. */
int gs_fleet_node_bare(const struct gs_fleet *f, size_t node);

/*
 * gs_fleet_set_topology() - node @node's cards as discovered on the machine, in place of its
 * template's: card g in PCIe domain @pcie[g] (0..GS_GPUS_MAX-1) and NVLink group @nvlink[g]
 * (0..GS_GPUS_MAX-1, or GS_NO_GROUP), g below the node's card count; @links[a][b] the bonded
 * NVLinks of each pair (symmetric), or NULL when none are known. The pods already there keep their
 * cards. Return: 0; -EINVAL (no such node, an index out of range; nothing changed); -ENOMEM.
 * O(nodes) (the fleet's largest NVLink group is counted again).
 */
int gs_fleet_set_topology(struct gs_fleet *f, size_t node, const uint8_t *pcie,
                          const uint8_t *nvlink, const uint8_t (*links)[GS_GPUS_MAX]);

/* gs_fleet_node_replicas() - time-slice replicas per card of @node, 0 when it offers none. */
int32_t gs_fleet_node_replicas(const struct gs_fleet *f, size_t node);

/* gs_fleet_node_nvlink_max() - the largest NVLink group of @node, in cards (0 when none). */
int gs_fleet_node_nvlink_max(const struct gs_fleet *f, size_t node);

/* gs_fleet_nvlink_max() - the largest NVLink group over all nodes, in cards (0 when none). */
int gs_fleet_nvlink_max(const struct gs_fleet *f);

/* gs_fleet_models_with() - the GPU models (bit per catalog index) with a node of at least @cards
 * GPUs (@nvlink: in one NVLink group), as nodes' topologies are now. Return: 0 when @cards < 1. */
uint32_t gs_fleet_models_with(const struct gs_fleet *f, int cards, int nvlink);

#endif
