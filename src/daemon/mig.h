/*
 * MIG instances on the daemon's cards.
 */
#ifndef GSD_MIG_H
#define GSD_MIG_H

#include "gpusched/cluster.h"
#include "gpusched/mig.h"
#include "gpusched/sched.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct gs_diag;
struct gsd_ferr;
struct gsd_pod;
struct gsd_podspec;
struct gsd_state;

#define GSD_MIG_MODELS_MEMO 16 /* MIG models whose empty-card placements are remembered */
struct gsd_mig_memo;

/*
 * One node's cards as MIG sees them. A card turns to MIG mode when the first instance is created
 * on it, which happens only to a card with nothing on it, and back to whole/shared use when its
 * last instance goes. While in MIG mode the whole card is held in the engine (bound as one
 * 1000-milli share that belongs to no pod), so no whole-card or shared pod can land on it by any
 * path; a MIG pod's own placement (struct gsd_pod pl) holds only its CPU and memory there.
 */
struct gsd_node_mig {
    int16_t model;                        /* gs_mig_model_find() of the node's model, < 0 none */
    struct gs_mig_card card[GS_GPUS_MAX]; /* mig_mode set while an instance lives on it */
};

/* Why a MIG pod does not fit a node (gsd_mig_reason() gives the words). */
enum gsd_mig_fit {
    GSD_MIG_OK = 0,
    GSD_MIG_MODEL,  /* the node's model has no such profile, or the pod's gpu-model excludes it */
    GSD_MIG_POLICY, /* the GpuClusterPolicy does not allow the profile on the node's model */
    GSD_MIG_CPU,    /* Insufficient cpu */
    GSD_MIG_MEMORY, /* Insufficient memory */
    GSD_MIG_ROOM,   /* no free or MIG card of the node has a free placement for it */
    GSD_MIG_QUOTA,  /* the pod may use the node's model, but its tenant's GPUQuota has no room */
    GSD_MIG_FITS
};

/* Where a MIG instance would go on one node. */
struct gsd_mig_choice {
    int gpu, start; /* card index on the node, first memory slice */
    int score;      /* gs_mig_card_score(): 500..999 a card in MIG mode, 0..499 one to convert */
};

/* gsd_mig_init() - every card of @st's cluster out of MIG mode. Return: 0; -ENOMEM. */
int gsd_mig_init(struct gsd_state *st);
/*
 * gsd_mig_admit() - may a pod asking MIG profile @spec->mig ever run here? Refused (400 naming
 * the resource, with the reason) when no GpuClusterPolicy is loaded, its strategy is not
 * "mixed", or it allows the profile on no GPU model of the inventory that the pod's
 * gpusched.io/gpu-model accepts. Return: 0; -EINVAL with @e.
 */
int gsd_mig_admit(const struct gsd_state *st, const struct gsd_podspec *spec, struct gsd_ferr *e);
/*
 * gsd_mig_fit() - can an instance of @profile, with @req's CPU and memory (its model_mask: the
 * catalog models allowed, 0 any), go on node @node now, and where: among the node's cards in MIG
 * mode and its empty healthy ones, the best gs_mig_card_score(), ties to the lowest card.
 * @asked: the model mask the pod itself asked (0 any); a model it asked that @req leaves out
 * (its tenant's GPUQuota narrowed @req, gsd_quota_check()) is GSD_MIG_QUOTA, not GSD_MIG_MODEL.
 * Read only. Return: GSD_MIG_OK with @out; another enum gsd_mig_fit (out untouched).
 */
int gsd_mig_fit(const struct gsd_state *st, const char *profile, const struct gs_pod_req *req,
                uint32_t asked, size_t node, struct gsd_mig_choice *out);
/*
 * gsd_mig_fits_without() - would an instance of @profile with @req's CPU and memory fit node
 * @node were the running pods @gone[0..@n) (on that node; the caller's) evicted: their CPU and
 * memory back, their instances destroyed (a card whose last one goes is empty again), their
 * whole or shared cards given back (a card they all leave is empty, and converts). Read only.
 * Return: 1 fits; 0 not.
 */
int gsd_mig_fits_without(const struct gsd_state *st, const char *profile,
                         const struct gs_pod_req *req, size_t node,
                         const struct gsd_pod *const *gone, size_t n);
/* gsd_mig_reason() - @r in kube-scheduler's manner, naming @profile: "no card can host
 * mig-3g.40gb". @buf: at least 128 bytes. Return: @buf. */
const char *gsd_mig_reason(int r, const char *profile, char *buf, size_t size);
/*
 * gsd_mig_take() - create @p's instance: on node @node when >= 0 (a bind), else on the node whose
 * best card scores highest (ties to the lowest node index). @eff: @p's CPU, memory and allowed
 * models (as quotas leave them). Sets p->pl (node; no card), mig_gpu, mig_start, mig_milli.
 * Return: 0; GS_UNSCHEDULABLE with @why ("0/4 nodes are available: ...") and @main (the reason
 * most nodes gave, a static string); -EINVAL with @why (the engine refused the node's CPU and
 * memory for a request it finds invalid); -ENOMEM. Nothing is held on failure.
 */
int gsd_mig_take(struct gsd_state *st, struct gsd_pod *p, const struct gs_pod_req *eff, int node,
                 struct gs_diag *why, const char **main);
/* gsd_mig_restore() - a stored running MIG pod back on its very instance (p->pl.node, mig_gpu,
 * mig_start). Return: 0; GS_UNSCHEDULABLE or -EINVAL with @why; -ENOMEM. */
int gsd_mig_restore(struct gsd_state *st, struct gsd_pod *p, struct gs_diag *why);
/* gsd_mig_release() - destroy @p's instance (nothing for a pod without one); its card leaves
 * MIG mode when it was the last. The engine's part (CPU, memory) is the caller's. */
void gsd_mig_release(struct gsd_state *st, struct gsd_pod *p);
/*
 * gsd_pod_share_milli() - the GPU share pod @p holds or asks, milli-GPU: cards x share per card;
 * a MIG instance's part of its card (gs_mig_profile_share_milli()) on its card's model while it
 * runs, else on the inventory's first model (catalog order) that has the profile, as the
 * simulator counts a MIG demand on its cluster's first such model (0 when none has it).
 * O(catalog models).
 */
int64_t gsd_pod_share_milli(const struct gsd_state *st, const struct gsd_pod *p);
/*
 * gsd_mig_holds_freed() - the cards of node @node in MIG mode whose every instance belongs to one
 * of @gone[0..@n) (running pods of that node): their whole-card holds in the engine, which those
 * pods' going would give back, as engine requests and placements into @req and @pl (room for
 * GS_GPUS_MAX each), so a whole-card or shared pod can be weighed against them.
 * Return: how many (0..GS_GPUS_MAX).
 */
int gsd_mig_holds_freed(const struct gsd_state *st, size_t node, const struct gsd_pod *const *gone,
                        size_t n, struct gs_pod_req *req, struct gs_placement *pl);
/* gsd_pod_cards() - the cards running pod @p holds on its node: the engine's, or its MIG card. */
uint32_t gsd_pod_cards(const struct gsd_pod *p);
/* gsd_mig_card_json() - {"mode": "whole"|"mig", "mig_instances": [{"profile", "start"}]}
 * of card @gpu of node @node, merged into @card. */
void gsd_mig_card_json(const struct gsd_state *st, size_t node, int gpu, json_t *card);

#endif
