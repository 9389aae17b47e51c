/*
 * What the node agent carries out of gpuschedd's decisions, without I/O: the pods bound to this
 * node, the device IDs it advertises to kubelet, which bound pod (and which of its cards) a
 * kubelet Allocate is for, and what that container then gets (environment, mounts, CDI devices).
 *
 * Device IDs. kubelet's device plugin API names devices, never pods, so every bound pod gets
 * device IDs of its own: resource nvidia.com/gpu offers, per card, `replicas` IDs "<uuid>::<k>"
 * (k = 0..replicas-1, as HAMi splits a card into deviceSplitCount devices), and a pod holds one
 * replica of each card gpuschedd bound it to, the lowest one no other live pod holds; a
 * nvidia.com/mig-<profile> resource offers one ID per MIG instance, its MIG UUID. An ID therefore
 * names one pod and one of its cards. IDs of a pod stay its own until it leaves the node (kubelet
 * keeps them in its checkpoint).
 *
 * Containers. kubelet calls Allocate once per container that asks for the resource, init
 * containers first, then the app containers, in the pod's order (kubelet's devicemanager,
 * pkg/kubelet/cm/devicemanager/manager.go, Allocate() and devicesToAllocate()). A pod's cards are
 * split among its containers as kubelet asks: each Allocate names how many devices the container
 * wants, and the container gets one card of the pod per device. The agent records the ID kubelet
 * handed each card under: kubelet hands an init container's devices to the containers that
 * follow (devicesToReuse: "Allocates from reusableDevices list first"), so an Allocate naming a
 * recorded ID means that card of that pod again, and an ID of a pod's own names its card only
 * while no container has it. gpuschedd binds a pod as many cards as kubelet then asks in all: the
 * app containers' (and restartable init containers') sum, or an init container's, whichever is
 * larger.
 *
 * Matching (gs_plan_kubelet(), gs_plan_prefer(), gs_plan_allocate()). kubelet admits one pod at
 * a time and asks GetPreferredAllocation before Allocate unless reused devices cover the
 * container. kubelet's pod resources API lists the pods kubelet has, the one it is admitting
 * among them (kubelet adds a pod to its pod manager before it admits it); given that list, only
 * bound pods on it are candidates, so a pod kubelet has not got yet is never matched, and a pod
 * gpuschedd did not bind gets nothing. Among the candidates, the preference names, in order:
 * with must-include IDs (devices reused from an init container), the pod holding them; else the
 * pod of the last Allocate while it still has cards no container got; else the earliest-bound
 * pod with exactly that many such cards, then one with more. Allocate then takes: (1) the one
 * candidate holding IDs among those asked (IDs of two pods are refused); (2) else the pod the
 * last preference or Allocate chose, if it still has that many cards no container got; (3) else
 * the only candidate that has (exactly that many, else more). Anything else is refused with a
 * message (kubelet fails the pod's admission, and retries): the agent never guesses between two
 * pods. What the container gets comes from the pod's binding: the cards of the IDs kubelet named
 * when they are the pod's, else cards of the pod no container got yet, lowest first. Without
 * kubelet's list every bound pod is a candidate, and two pods of the same shape bound at once are
 * told apart only by bind order.
 *
 * Invariants: pods are kept in bind order; a pod's IDs never collide with another live pod's;
 * a pod's `given` cards are its cards that its `got` records name.
 * Thread safety: none; the agent serialises calls. Limits: GS_PLAN_PODS_MAX pods per node.
 */
#ifndef GS_NODE_PLAN_H
#define GS_NODE_PLAN_H

#include <stdint.h>

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/policy.h"
#include "gpusched/topo.h"

struct gs_diag;

#define GS_PLAN_PODS_MAX     GS_NODE_PODS_MAX /* what gpuschedd binds to a node at most */
#define GS_PLAN_REPLICAS_MAX 64               /* nvidia.com/gpu IDs per card */
#define GS_PLAN_ID_MAX       112 /* a device ID: "<uuid>::<k>" or a MIG UUID; kubelet allows 63+ */
#define GS_PLAN_ENV_MAX      12
#define GS_PLAN_VAL_MAX      1024
#define GS_PLAN_MOUNTS_MAX   4
#define GS_PLAN_PATH_MAX     256
#define GS_PLAN_RES_MAX      48 /* a resource name, "nvidia.com/mig-1g.10gb.me" fits */

/*
 * A shared pod's libgpushare region is a file of its own: <pod_dir>/<uid>/region on the host,
 * the folder mounted read-write at GS_PLAN_REGION_DIR in every container of that pod and of no
 * other, GPUSHARE_REGION naming the file there (gs_pod_regions_sync(), isolate.h, makes them).
 */
#define GS_PLAN_REGION_DIR  "/run/gpushare"
#define GS_PLAN_REGION_FILE "region"

/*
 * What one CUDA context costs on the card, in MiB, charged by libgpushare at each context a shared
 * pod's processes create (GPUSHARE_CONTEXT_MIB; 0..GS_PLAN_CTX_MIB_MAX, the library's range).
 * --context-mib gives it per GPU model; gs_plan_ctx_default() is what applies otherwise.
 */
#define GS_PLAN_CTX_MIB_MAX 65536
struct gs_plan_ctx {
    int32_t dflt;              /* every model not named; -1: the built-in default */
    int32_t mib[GS_MODEL_MAX]; /* by catalog model index; -1: not named */
};

/* One pod gpuschedd bound to this node (GET /v1/nodes/NAME/pods, one item). */
struct gs_plan_pod {
    char ns[64], name[254], uid[64], tenant[64];
    uint32_t cards;            /* node-local GPU indexes */
    int64_t gpumem_mib;        /* per card, shared slices; 0 = whole cards or MIG */
    int32_t gpucores;          /* percent of a card per card, shared slices; 0 = none */
    char mig[24];              /* MIG profile ("2g.20gb"), "" = none */
    int mig_start;             /* its first memory slice */
    int32_t tenant_weight;     /* its tenant's DaemonConfig weight, 1..10000 (1 when not given) */
    int32_t tenant_weight_min; /* the smallest tenant weight gpuschedd has, 1..10000 */
    /* the agent's own */
    uint32_t given;              /* cards kubelet has handed to containers (persisted) */
    int ngot;                    /* the device IDs kubelet handed them under, and each */
    struct {                     /* one's card: an ID named again (an init container's */
        char id[GS_PLAN_ID_MAX]; /* device reused) means that card again (persisted) */
        int8_t card;
    } got[GS_GPUS_MAX];
    uint8_t replica[GS_GPUS_MAX]; /* per bound card: its nvidia.com/gpu replica */
    uint16_t cg_base, cg_wrote; /* pod cgroup cpu.weight: kubelet's, ours (persisted; isolate.h) */
    uint8_t known;              /* on kubelet's list of pods (gs_plan_kubelet()) */
    int seen;                   /* scratch of gs_plan_set_pods() */
};

struct gs_plan {
    const struct gs_topo *topo; /* the node's tree (borrowed); GPU UUIDs, MIG UUIDs */
    int replicas;               /* nvidia.com/gpu IDs per card, 1..GS_PLAN_REPLICAS_MAX */
    int npods;
    struct gs_plan_pod pods[GS_PLAN_PODS_MAX];
    char last_res[GS_PLAN_RES_MAX]; /* the resource of the last preference or Allocate, */
    char last_uid[64];              /* and the pod it chose (kubelet admits one at a time) */
    int kubelet_view;               /* the pods' known marks hold kubelet's list */
    /* what Allocate mounts and points libgpushare and MPS at */
    char shim_host[GS_PLAN_PATH_MAX], shim_ctr[GS_PLAN_PATH_MAX]; /* libgpushare.so */
    char mps_pipe[GS_PLAN_PATH_MAX];   /* CUDA_MPS_PIPE_DIRECTORY, host = container; "" = no MPS */
    char pod_dir[GS_PLAN_PATH_MAX];    /* host folder of the pods' region folders (with a shim) */
    uint32_t context_mib[GS_GPUS_MAX]; /* per card: GPUSHARE_CONTEXT_MIB (gs_plan_ctx_set()) */
};

/* What Allocate answers for one container. */
struct gs_plan_alloc {
    char pod[64 + 254]; /* "ns/name" of the pod matched: gs_plan_pod's whole */
    int nenv;
    char env_key[GS_PLAN_ENV_MAX][48];
    char env_val[GS_PLAN_ENV_MAX][GS_PLAN_VAL_MAX];
    int nmount;
    struct {
        char host[GS_PLAN_PATH_MAX], ctr[GS_PLAN_PATH_MAX];
        int ro;
    } mount[GS_PLAN_MOUNTS_MAX];
    int ncdi;
    char cdi[GS_GPUS_MAX][GS_PLAN_ID_MAX + 24]; /* "gpusched.io/gpu=<uuid>" */
};

/*
 * gs_plan_init() - an empty plan for @topo with @replicas IDs per card (1..GS_PLAN_REPLICAS_MAX),
 * the libgpushare library at @shim_host (mounted read-only at the same path, or NULL: no shim),
 * the host folder @pod_dir of the shared pods' region folders (needed with a shim, else NULL) and
 * the MPS pipe folder @mps_pipe (NULL: no MPS variables). Each card's context cost is its model's
 * default (gs_plan_ctx_default()). Return: 0; -EINVAL (a path too long, a shim without @pod_dir).
 */
int gs_plan_init(struct gs_plan *p, const struct gs_topo *topo, int replicas, const char *shim_host,
                 const char *pod_dir, const char *mps_pipe);

/*
 * gs_plan_ctx_parse() - --context-mib's value: comma-separated entries, each MIB (every model no
 * entry names) or MODEL=MIB, MODEL a catalog name or alias (gpusched/catalog.h), MIB 0..65536;
 * a model once, a bare value once. Return: 0 and *@out; -EINVAL with @d naming the entry.
 */
int gs_plan_ctx_parse(const char *spec, struct gs_plan_ctx *out, struct gs_diag *d);

/*
 * gs_plan_ctx_default() - what a context of catalog model @model (-1: a model the catalog does
 * not know) is charged when --context-mib does not say, in MiB. NVIDIA publishes no figure; these
 * are estimates that err high, so that a tenant is not let past its limit: measure your card and
 * driver with bench/gpushare/run.sh ("a context ... cost the card N MiB") and pass that.
 */
uint32_t gs_plan_ctx_default(int model);

/* gs_plan_ctx_set() - each card's context cost from @c (NULL: the defaults). */
void gs_plan_ctx_set(struct gs_plan *p, const struct gs_plan_ctx *c);

/* gs_plan_pod_shared() - whether @q holds a share of a card (gpumem or gpucores, not MIG): the
 * pods libgpushare limits, and that have a region. */
int gs_plan_pod_shared(const struct gs_plan_pod *q);

/*
 * gs_plan_pods_json() - read @json (a JSON array of gpuschedd pod objects: namespace, name, uid,
 * tenant, gpus, gpumem_mib, gpucores, mig {profile, start}, tenant_weight, tenant_weight_min)
 * into @out, in array order; other members (gpuschedd's view of the pod) are not the agent's. A
 * uid is 1..63 of [A-Za-z0-9._-], not starting with '.' (it names a folder).
 * Return: the count; -EINVAL with @d naming the item and field; -E2BIG past @max.
 */
int gs_plan_pods_json(const char *json, struct gs_plan_pod *out, int max, struct gs_diag *d);

/*
 * gs_plan_set_pods() - the pods now bound to the node, in bind order: pods no longer there leave
 * (their IDs are free again), pods already known keep their IDs, given cards and cgroup weights,
 * new pods get the lowest free replicas. A pod whose cards are out of range or one of whose
 * cards has no replica left (more pods share it than --replicas) is left out, the others
 * planned: kubelet can give it no card of its own. Return: 0; the count left out (> 0), @d
 * naming the first; -EINVAL with @d past GS_PLAN_PODS_MAX (the plan keeps the pods it had).
 */
int gs_plan_set_pods(struct gs_plan *p, const struct gs_plan_pod *pods, int n, struct gs_diag *d);

/*
 * gs_plan_devices() - the IDs resource @res offers (nvidia.com/gpu or nvidia.com/mig-<profile>),
 * written to @ids (room for @max), with @card set to each ID's card.
 * Return: the count (0 for a resource the node does not have).
 */
int gs_plan_devices(const struct gs_plan *p, const char *res, char (*ids)[GS_PLAN_ID_MAX],
                    int *card, int max);

/*
 * gs_plan_resources() - the resources this node offers: nvidia.com/gpu when it has cards, and
 * nvidia.com/mig-<profile> for each profile with an instance, each once, sorted.
 * Return: the count written to @res (room for @max).
 */
int gs_plan_resources(const struct gs_plan *p, char (*res)[GS_PLAN_RES_MAX], int max);

/*
 * gs_plan_kubelet() - the pods kubelet has, "namespace/name" each (@names, @n; kubelet's pod
 * resources List), for the next gs_plan_prefer() or gs_plan_allocate(); @n < 0: kubelet's list
 * could not be read, every bound pod is a candidate.
 */
void gs_plan_kubelet(struct gs_plan *p, const char *const *names, int n);

/*
 * gs_plan_prefer() - kubelet's GetPreferredAllocation for @res: @size IDs out of @avail (@navail),
 * holding every ID of @must (@nmust). Writes the IDs to @out (room for @size) and remembers the
 * pod chosen. Return: the count written (@size when a bound pod fits, else the first @size
 * available ones, must-includes first); 0 when fewer than @size are available.
 */
int gs_plan_prefer(struct gs_plan *p, const char *res, const char *const *avail, int navail,
                   const char *const *must, int nmust, int size, char (*out)[GS_PLAN_ID_MAX]);

/*
 * gs_plan_allocate() - kubelet's Allocate of @ids (@n) of @res for one container: the pod and its
 * cards by the rules above (the cards marked given), and what the container gets in @out.
 * Return: 0; -ENOENT with @d when no bound pod matches (or IDs of two pods are asked, or the pod
 * has fewer cards left than asked); -EINVAL with @d for a count outside 1..GS_GPUS_MAX.
 */
int gs_plan_allocate(struct gs_plan *p, const char *res, const char *const *ids, int n,
                     struct gs_plan_alloc *out, struct gs_diag *d);

/*
 * gs_plan_save() - the pods' IDs, given cards and cgroup weights, as JSON, to @path (written to a
 * temporary file and renamed, so a crash leaves the old or the new state). gs_plan_load() reads
 * them back into an empty plan, before the first gs_plan_set_pods(), so an agent that restarts
 * keeps every ID kubelet holds and hands no card out twice.
 * Return: 0; -errno with @d; gs_plan_load(): 0 also when @path does not exist (a first start),
 * -EINVAL with @d for a damaged file.
 */
int gs_plan_save(const struct gs_plan *p, const char *path, struct gs_diag *d);
int gs_plan_load(struct gs_plan *p, const char *path, struct gs_diag *d);

/*
 * gs_plan_mig_uuid() - the UUID of the MIG instance at slice @start of card @gpu, or NULL.
 */
const char *gs_plan_mig_uuid(const struct gs_topo *t, int gpu, int start);

#endif
