/*
 * gpuschedd: MIG instances, nvidia.com/mig-<profile> (NVIDIA's device plugin, strategy mixed).
 *
 * Which cards may turn MIG is the GpuClusterPolicy's call (gpusched/migpolicy.h), loaded among
 * the policy files: the models it enables, the profiles it allows, under strategy mixed; without
 * one no card turns MIG. The geometry is the library's (gpusched/mig.h: NVIDIA's placements per
 * model), the same the scenario simulator uses: a card in MIG mode with room comes first, best
 * fit by gs_mig_card_score(), then an empty card is converted. A card in MIG mode is held whole
 * in the engine (see struct gsd_node_mig), so the engine never offers it to another pod; the
 * hold goes with its last instance, and nodes.c holds the card again if it is unhealthy.
 */
#include "mig.h"
#include "nodes.h"
#include "state.h"

#include "gpusched/cluster.h"
#include "gpusched/fleet.h"
#include "gpusched/scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * An empty card's best placement for a profile depends only on its model, the profile and what
 * the policy allows there, and a filter call asks it of thousands of nodes: kept per model.
 */
struct gsd_mig_empty {
    int valid, prof, rc; /* rc: 0 it fits, else not */
    unsigned mask;       /* the profiles the policy allowed when it was worked out */
    int score, start;
};

struct gsd_mig_memo {
    struct gsd_mig_empty empty[GSD_MIG_MODELS_MEMO];
};

int gsd_mig_init(struct gsd_state *st)
{
    size_t n = gs_cluster_node_count(st->cluster);
    st->mig = calloc(n ? n : 1, sizeof(*st->mig));
    st->mig_memo = calloc(1, sizeof(*st->mig_memo));
    if (!st->mig || !st->mig_memo)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        struct gs_node_info ni;
        gs_cluster_node_info(st->cluster, i, &ni);
        st->mig[i].model = (int16_t)(ni.model >= 0 && ni.gpus > 0
                                         ? gs_mig_model_find(gs_catalog_at(ni.model)->name)
                                         : -1);
    }
    return 0;
}

/* The profiles of MIG model @mm the policy allows (bit i: profile i); 0 without a policy. */
static unsigned policy_mask(const struct gsd_state *st, int mm)
{
    const struct gs_scenario *s = st->cfg->quotas;
    unsigned m = 0;
    if (!s || !s->has_mig_policy || mm < 0)
        return 0;
    for (int k = 0; k < gs_mig_model_at(mm)->nprofiles; k++)
        m |= gs_fleet_mig_allowed(s, mm, k) ? 1u << k : 0;
    return m;
}

/* "nvidia.com/mig-1g.10gb.me" for "1g.10gb+me": the name the pod asked by. */
static void resource_of(const char *profile, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s", GS_MIG_RESOURCE_PREFIX, profile);
    for (char *c = buf; *c; c++)
        *c = *c == '+' ? '.' : *c;
}

/* Why no node of the inventory could ever host @spec's profile; "" when one could. */
static void never_why(const struct gsd_state *st, const struct gsd_podspec *spec, char *why,
                      size_t size)
{
    const struct gs_scenario *s = st->cfg->quotas;
    int64_t models = gsd_models_mask(spec->models);
    uint32_t cand = gs_cluster_model_mask(st->cluster) & (models > 0 ? (uint32_t)models : ~0u);
    int has = 0;
    for (int m = 0; m < GS_MODEL_MAX; m++) {
        int mm = cand & (1u << m) ? gs_mig_model_find(gs_catalog_at(m)->name) : -1;
        int prof = mm >= 0 ? gs_mig_profile_find(mm, spec->mig, -1) : -1;
        if (prof < 0)
            continue;
        has = 1;
        if (policy_mask(st, mm) & (1u << prof)) {
            why[0] = '\0';
            return;
        }
    }
    if (!s || !s->has_mig_policy)
        snprintf(why, size, "no GpuClusterPolicy is loaded, so no card is turned to MIG");
    else if (s->mig_policy.strategy != GS_MIG_STRATEGY_MIXED)
        snprintf(why, size,
                 "the GpuClusterPolicy's strategy %s advertises no nvidia.com/mig-* resources "
                 "(mixed does)",
                 s->mig_policy.strategy == GS_MIG_STRATEGY_NONE ? "none" : "single");
    else if (has)
        snprintf(why, size, "the GpuClusterPolicy allows MIG profile %s on no GPU model %s",
                 spec->mig, spec->models[0] ? "gpusched.io/gpu-model names" : "of the inventory");
    else
        snprintf(why, size, "no GPU model %s has MIG profile %s",
                 spec->models[0] ? "gpusched.io/gpu-model names" : "of the inventory", spec->mig);
}

int gsd_mig_admit(const struct gsd_state *st, const struct gsd_podspec *spec, struct gsd_ferr *e)
{
    char why[GS_DIAG_MSG_MAX - 160], res[GS_MIG_RESOURCE_MAX + 8];
    if (!spec->mig[0])
        return 0;
    never_why(st, spec, why, sizeof(why));
    if (!why[0])
        return 0;
    resource_of(spec->mig, res, sizeof(res));
    e->status = 400;
    snprintf(e->field, sizeof(e->field), "spec.containers[].resources.limits.%s", res);
    snprintf(e->msg, sizeof(e->msg), "%s: %s", res, why);
    return -EINVAL;
}

/*
 * Card @c allows profile @prof too: a card turned MIG under an older policy (a reload, a
 * restart) is rebuilt with the profile allowed, its instances at their starts.
 */
static int card_widen(struct gs_mig_card *c, int model, unsigned allowed, int prof)
{
    struct gs_mig_card w;
    if (gs_mig_card_init(&w, model, allowed | c->allowed | 1u << prof))
        return -EINVAL;
    for (int k = 0; k < c->ninst; k++)
        if (gs_mig_card_create(&w, c->inst[k].profile, c->inst[k].start, NULL))
            return -EINVAL;
    *c = w;
    return 0;
}

static int card_healthy(const struct gsd_state *st, size_t i, int g)
{
    const struct gsd_node_health *h = st->health ? &st->health[i] : NULL;
    return !h || (h->ready && !(h->bad_mask & (1u << g)));
}

/* Where @prof goes on an empty card of MIG model @mm under the policy's @mask: worked out once
 * per model and remembered (the same for every node). Return: 0 with @out's score and start; -1
 * it cannot go there. */
static int empty_fit(const struct gsd_state *st, int mm, int prof, unsigned mask,
                     struct gsd_mig_choice *out)
{
    struct gsd_mig_empty tmp = {0},
                         *e = mm >= 0 && mm < GSD_MIG_MODELS_MEMO ? &st->mig_memo->empty[mm] : &tmp;
    if (!e->valid || e->prof != prof || e->mask != mask) {
        struct gs_mig_card c;
        int score = 0, start = 0;
        int rc = gs_mig_card_init(&c, mm, mask) || gs_mig_card_score(&c, prof, &score) ||
                 gs_mig_card_best_start(&c, prof, &start);
        *e = (struct gsd_mig_empty){1, prof, rc, mask, score, start};
    }
    out->score = e->score;
    out->start = e->start;
    return e->rc ? -1 : 0;
}

/*
 * Where on card @g of node @i, in state @card (MIG mode, or empty: @free_milli 1000) @prof would
 * go, @mask being what the policy allows on the node's model; -1 nowhere. A card with something
 * else on it, or unhealthy, takes nothing.
 */
static int card_fit(const struct gsd_state *st, size_t i, const struct gs_mig_card *card, int g,
                    int free_milli, int prof, unsigned mask, struct gsd_mig_choice *out)
{
    const struct gsd_node_mig *nm = &st->mig[i];
    if (!card_healthy(st, i, g))
        return -1;
    out->gpu = g;
    if (!card->mig_mode) /* only a card with nothing on it converts */
        return free_milli == 1000 ? empty_fit(st, nm->model, prof, mask, out) : -1;
    struct gs_mig_card c = *card;
    if (!(c.allowed & (1u << prof)) && card_widen(&c, nm->model, mask, prof))
        return -1;
    if (gs_mig_card_score(&c, prof, &out->score) || gs_mig_card_best_start(&c, prof, &out->start))
        return -1;
    return 0;
}

int gsd_mig_fit(const struct gsd_state *st, const char *profile, const struct gs_pod_req *req,
                uint32_t asked, size_t node, struct gsd_mig_choice *out)
{
    const struct gsd_node_mig *nm = &st->mig[node];
    struct gs_node_info ni;
    gs_cluster_node_info(st->cluster, node, &ni);
    int prof = nm->model >= 0 ? gs_mig_profile_find(nm->model, profile, -1) : -1;
    if (prof < 0 || (asked && !(asked & (1u << ni.model))))
        return GSD_MIG_MODEL;
    if (req->model_mask && !(req->model_mask & (1u << ni.model)))
        return GSD_MIG_QUOTA;
    unsigned mask = policy_mask(st, nm->model);
    if (!(mask & (1u << prof)))
        return GSD_MIG_POLICY;
    if (ni.cpu_left < req->cpu_milli)
        return GSD_MIG_CPU;
    if (ni.memory_left < req->memory_mib)
        return GSD_MIG_MEMORY;
    struct gsd_mig_choice best = {-1, -1, -1}, c;
    int empty_seen = 0; /* every empty card scores alike: the first one stands for them all */
    for (int g = 0; g < ni.gpus; g++) {
        int empty = !nm->card[g].mig_mode && ni.gpu_left[g] == 1000;
        if ((!empty || !empty_seen) &&
            !card_fit(st, node, &nm->card[g], g, ni.gpu_left[g], prof, mask, &c) &&
            c.score > best.score)
            best = c;
        empty_seen |= empty;
    }
    if (best.gpu < 0)
        return GSD_MIG_ROOM;
    *out = best;
    return GSD_MIG_OK;
}

/* Would card @g of node @i take @prof were the pods @gone[0..@n) gone? Read only. */
static int card_fits_without(const struct gsd_state *st, size_t i, const struct gs_node_info *ni,
                             int g, int prof, const struct gsd_pod *const *gone, size_t n)
{
    struct gs_mig_card c = st->mig[i].card[g];
    int free_milli = ni->gpu_left[g];
    for (size_t k = 0; k < n; k++) {
        const struct gsd_pod *v = gone[k];
        if (v->mig[0] && v->mig_gpu == g && c.mig_mode)
            gs_mig_card_destroy(&c, v->mig_start, NULL);
        else if (!v->mig[0] && (v->pl.gpu_mask & (1u << g)))
            free_milli += (int)v->pl.gpu_milli;
    }
    if (c.mig_mode && c.ninst == 0) { /* its last instance goes: the card is empty, not held */
        gs_mig_card_set_mode(&c, false);
        free_milli = 1000;
    }
    struct gsd_mig_choice out;
    return !card_fit(st, i, &c, g, free_milli, prof, policy_mask(st, st->mig[i].model), &out);
}

int gsd_mig_fits_without(const struct gsd_state *st, const char *profile,
                         const struct gs_pod_req *req, size_t node,
                         const struct gsd_pod *const *gone, size_t n)
{
    struct gs_pod_req room = *req;
    for (size_t k = 0; k < n; k++) { /* CPU and memory the victims give back */
        room.cpu_milli -= gone[k]->req.cpu_milli;
        room.memory_mib -= gone[k]->req.memory_mib;
    }
    struct gsd_mig_choice c;
    int r = gsd_mig_fit(st, profile, &room, req->model_mask, node, &c);
    if (r != GSD_MIG_ROOM)
        return r == GSD_MIG_OK;
    struct gs_node_info ni;
    gs_cluster_node_info(st->cluster, node, &ni);
    int prof = gs_mig_profile_find(st->mig[node].model, profile, -1);
    for (int g = 0; g < ni.gpus; g++)
        if (card_fits_without(st, node, &ni, g, prof, gone, n))
            return 1;
    return 0;
}

const char *gsd_mig_reason(int r, const char *profile, char *buf, size_t size)
{
    switch (r) {
    case GSD_MIG_MODEL:
        snprintf(buf, size, "GPU model has no mig-%s (or gpusched.io/gpu-model excludes it)",
                 profile);
        break;
    case GSD_MIG_POLICY:
        snprintf(buf, size, "GpuClusterPolicy does not allow mig-%s on this GPU model", profile);
        break;
    case GSD_MIG_QUOTA:
        snprintf(buf, size, "over the tenant's GPUQuota on this GPU model");
        break;
    case GSD_MIG_CPU:
        snprintf(buf, size, "Insufficient cpu");
        break;
    case GSD_MIG_MEMORY:
        snprintf(buf, size, "Insufficient memory");
        break;
    default:
        snprintf(buf, size, "no card can host mig-%s", profile);
    }
    return buf;
}

/* The engine's part of a card in MIG mode: one whole card no pod owns. */
static void hold_of(size_t i, int g, struct gs_pod_req *r, struct gs_placement *pl)
{
    *r = (struct gs_pod_req){.num_gpu = 1, .gpu_milli = 1000};
    *pl = (struct gs_placement){(int32_t)i, 1u << g, 1000};
}

int gsd_mig_holds_freed(const struct gsd_state *st, size_t node, const struct gsd_pod *const *gone,
                        size_t n, struct gs_pod_req *req, struct gs_placement *pl)
{
    int m = 0;
    for (int g = 0; st->mig && g < GS_GPUS_MAX; g++) {
        const struct gs_mig_card *c = &st->mig[node].card[g];
        size_t leaving = 0;
        for (size_t k = 0; c->mig_mode && k < n; k++)
            leaving += gone[k]->mig[0] && gone[k]->mig_gpu == g;
        if (c->mig_mode && leaving == c->ninst) {
            hold_of(node, g, &req[m], &pl[m]);
            m++;
        }
    }
    return m;
}

/* Hold (@take 1) or give back card @g of node @i whole in the engine. */
static int hold(struct gsd_state *st, size_t i, int g, int take, struct gs_diag *why)
{
    struct gs_pod_req r;
    struct gs_placement pl;
    hold_of(i, g, &r, &pl);
    return take ? gs_sched_bind_placement(st->sched, &r, &pl, why)
                : gs_sched_release(st->sched, &r, &pl);
}

/* Create @p's instance at card @g, slice @start of node @i and bind its CPU and memory. */
static int commit(struct gsd_state *st, struct gsd_pod *p, size_t i, int g, int start,
                  struct gs_diag *why)
{
    struct gsd_node_mig *nm = &st->mig[i];
    struct gs_placement pl = {(int32_t)i, 0, 0};
    int prof = nm->model >= 0 ? gs_mig_profile_find(nm->model, p->mig, -1) : -1;
    if (prof < 0 || g < 0 || g >= GS_GPUS_MAX)
        return gs_diag_error_code(why, -EINVAL, "node %s has no card %d with MIG profile %s",
                                  gs_cluster_node_name(st->cluster, i), g, p->mig);
    struct gs_mig_card c = nm->card[g];
    unsigned allowed = policy_mask(st, nm->model);
    if (!c.mig_mode && gs_mig_card_init(&c, nm->model, allowed | 1u << prof))
        return gs_diag_error_code(why, -EINVAL, "MIG model %d", nm->model);
    if (!(c.allowed & (1u << prof)) && card_widen(&c, nm->model, allowed, prof))
        return gs_diag_error_code(why, -EINVAL, "card %d: cannot rebuild its instances", g);
    int rc = gs_mig_card_create(&c, prof, start, why);
    if (rc)
        return rc == -EINVAL ? rc : GS_UNSCHEDULABLE;
    if ((rc = gs_sched_bind_placement(st->sched, &p->req, &pl, why)) != 0)
        return rc;
    if (!nm->card[g].mig_mode && (rc = hold(st, i, g, 1, why)) != 0) {
        gs_sched_release(st->sched, &p->req, &pl);
        return rc;
    }
    nm->card[g] = c;
    p->pl = pl;
    p->mig_gpu = (int8_t)g;
    p->mig_start = (int8_t)start;
    p->mig_milli = (int16_t)gs_mig_profile_share_milli(nm->model, prof);
    return 0;
}

/* "0/4 nodes are available: 2 no card can host mig-3g.40gb, 2 Insufficient cpu." */
static const char *summary(const size_t cnt[GSD_MIG_FITS], size_t total, const char *profile,
                           struct gs_diag *why)
{
    static const char *const main_why[GSD_MIG_FITS] = {"",
                                                       "node(s) didn't match the MIG profile",
                                                       "MIG profile not allowed by the policy",
                                                       "Insufficient cpu",
                                                       "Insufficient memory",
                                                       "no card can host the MIG profile",
                                                       "over quota"};
    char text[GS_DIAG_MSG_MAX], one[128];
    int off = snprintf(text, sizeof(text), "0/%zu nodes are available", total);
    int top = GSD_MIG_ROOM;
    for (int r = GSD_MIG_FITS - 1, sep = 0; r > GSD_MIG_OK; r--) {
        if (!cnt[r])
            continue;
        top = cnt[r] > cnt[top] ? r : top;
        off += snprintf(text + off, sizeof(text) - (size_t)off, "%s %zu %s", sep++ ? "," : ":",
                        cnt[r], gsd_mig_reason(r, profile, one, sizeof(one)));
        if (off >= (int)sizeof(text) - 2)
            break;
    }
    gs_diag_error(why, "%s.", text);
    return main_why[top];
}

int gsd_mig_take(struct gsd_state *st, struct gsd_pod *p, const struct gs_pod_req *eff, int node,
                 struct gs_diag *why, const char **main)
{
    size_t n = gs_cluster_node_count(st->cluster), cnt[GSD_MIG_FITS] = {0}, total = 0;
    size_t at = 0;
    struct gsd_mig_choice best = {-1, -1, -1}, c;
    for (size_t i = node >= 0 ? (size_t)node : 0; i < n; i++) {
        int r = gsd_mig_fit(st, p->mig, eff, p->req.model_mask, i, &c);
        total++;
        cnt[r]++;
        if (r == GSD_MIG_OK && c.score > best.score) {
            best = c;
            at = i;
        }
        if (node >= 0)
            break;
    }
    if (best.gpu < 0) {
        *main = summary(cnt, total, p->mig, why);
        return GS_UNSCHEDULABLE;
    }
    int rc = commit(st, p, at, best.gpu, best.start, why);
    if (rc > 0)
        *main = "no card can host the MIG profile";
    return rc;
}

int gsd_mig_restore(struct gsd_state *st, struct gsd_pod *p, struct gs_diag *why)
{
    return commit(st, p, (size_t)p->pl.node, p->mig_gpu, p->mig_start, why);
}

void gsd_mig_release(struct gsd_state *st, struct gsd_pod *p)
{
    if (!p->mig[0] || p->mig_gpu < 0 || p->pl.node < 0)
        return;
    size_t i = (size_t)p->pl.node;
    struct gs_mig_card *c = &st->mig[i].card[p->mig_gpu];
    if (!gs_mig_card_destroy(c, p->mig_start, NULL) && c->ninst == 0) {
        gs_mig_card_set_mode(c, false);
        hold(st, i, p->mig_gpu, 0, NULL);
    }
    p->mig_gpu = -1;
    p->mig_milli = 0;
}

int64_t gsd_pod_share_milli(const struct gsd_state *st, const struct gsd_pod *p)
{
    if (!p->mig[0])
        return gs_pod_req_gpu_milli(&p->req);
    if (p->state == GSD_RUNNING)
        return p->mig_milli;
    uint32_t models = gs_cluster_model_mask(st->cluster);
    for (int m = 0; m < GS_MODEL_MAX; m++) {
        int mm = models & (1u << m) ? gs_mig_model_find(gs_catalog_at(m)->name) : -1;
        int k = mm >= 0 ? gs_mig_profile_find(mm, p->mig, -1) : -1;
        if (k >= 0)
            return gs_mig_profile_share_milli(mm, k);
    }
    return 0;
}

uint32_t gsd_pod_cards(const struct gsd_pod *p)
{
    if (p->state != GSD_RUNNING)
        return 0;
    return p->mig[0] && p->mig_gpu >= 0 ? 1u << p->mig_gpu : p->pl.gpu_mask;
}

void gsd_mig_card_json(const struct gsd_state *st, size_t node, int gpu, json_t *card)
{
    const struct gs_mig_card *c = &st->mig[node].card[gpu];
    json_t *inst = json_array();
    for (int k = 0; c->mig_mode && k < c->ninst; k++) {
        const struct gs_mig_model *m = gs_mig_model_at(c->model);
        json_array_append_new(inst, json_pack("{s:s, s:i}", "profile",
                                              m->profiles[c->inst[k].profile].name, "start",
                                              c->inst[k].start));
    }
    json_object_set_new(card, "mode", json_string(c->mig_mode ? "mig" : "whole"));
    json_object_set_new(card, "mig_instances", inst);
}
