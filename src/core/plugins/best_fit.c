/*
 * BestFit: the node left with the least free resources after the pod, CPU and GPU weighted half
 * and half, each divided by the trace's largest node (FGD study's simulator, best_fit_score.go):
 * 100 x (1 - 0.5 cpu_after / 128000 - 0.5 gpu_after / 8000). The simulator then min-max
 * normalises over the feasible nodes, an increasing map that keeps the best node best, so it is
 * left out here. Also registered as GPUBinPacking, the seed profile's bin-packing score (seed
 * 000 §3.2, weight 8 there): in the multi-tenant scheduler, how allocated the node's cards are
 * after the pod, so that pods fill cards and nodes already in use and whole ones stay free.
 */
#include "../sched_impl.h"
#include "gpusched/fleet.h"
#include "score_ref.h"

static int score(const struct gs_sched *s, const struct gs_nstate *st, const struct gs_podclass *pc,
                 int gpu)
{
    (void)s;
    (void)gpu;
    int64_t cpu_after = st->cpu_left - pc->cpu_score;
    int64_t gpu_after = st->gpu_left_sum - (int64_t)pc->req.num_gpu * pc->req.gpu_milli;
    if (cpu_after < 0 || gpu_after < 0)
        return 0;
    int64_t num = 100 * (int64_t)REF_MAX_CPU_MILLI - 50 * cpu_after -
                  50 * (REF_MAX_CPU_MILLI / REF_MAX_GPU_MILLI) * gpu_after;
    int64_t sc = num / REF_MAX_CPU_MILLI;
    return (int)(sc < 0 ? 0 : sc) * REF_SCALE;
}

const struct gs_plugin gs_plugin_best_fit = {
    .name = "BestFit",
    .points = 1u << GS_EP_SCORE,
    .score = score,
};

static int32_t place(const struct gs_place_view *v)
{
    return v->choice->packing;
}

static int32_t place_bound(const struct gs_place_view *v)
{
    return gs_fleet_packing_bound(v->fleet, v->node, v->pod);
}

const struct gs_plugin gs_plugin_gpu_bin_packing = {
    .name = "GPUBinPacking",
    .points = 1u << GS_EP_SCORE,
    .score = score,
    .place = place,
    .place_bound = place_bound,
    .place_bound_packing = 1,
};
