/*
 * GpuClustering: pods with the same kind of GPU request (a share of one card, or k whole cards)
 * go to the same nodes. Base 75 when the node holds only that kind, 50 when it holds it among
 * others, 25 when it holds no GPU pod, 0 otherwise; plus up to 25 for how full the node is
 * (FGD study's simulator, gpu_clustering_score.go). CPU-only pods score 0.
 */
#include "../sched_impl.h"
#include "score_ref.h"

static int score(const struct gs_sched *s, const struct gs_nstate *st, const struct gs_podclass *pc,
                 int gpu)
{
    (void)s;
    (void)gpu;
    if (pc->tag == 0)
        return 0;
    int64_t used = REF_MAX_GPU_MILLI - st->gpu_left_sum;
    int64_t sc = 25 * (used < 0 ? 0 : used) / REF_MAX_GPU_MILLI;
    if (st->tags == pc->tag)
        sc += 75;
    else if (st->tags & pc->tag)
        sc += 50;
    else if (st->tags == 0)
        sc += 25;
    return (int)sc * REF_SCALE;
}

const struct gs_plugin gs_plugin_gpu_clustering = {
    .name = "GpuClustering",
    .points = 1u << GS_EP_SCORE,
    .score = score,
};
