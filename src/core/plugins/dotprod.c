/*
 * DotProd (Tetris, Grandl et al., SIGCOMM '14, as the FGD study's simulator implements it): the
 * dot product of the node's free [CPU, GPU] vector and the pod's request, each dimension divided
 * by the trace's largest node (128 cores, 8 GPUs). The simulator scores 100 x (1 - dot / 2), so
 * the *smallest* product wins; we keep its rule to compare like with like. Integer form:
 * dot = (cpu_left * cpu + 256 * gpu_left * gpu) / 128000^2, since (128000 / 8000)^2 = 256.
 */
#include "../sched_impl.h"
#include "score_ref.h"

static int score(const struct gs_sched *s, const struct gs_nstate *st, const struct gs_podclass *pc,
                 int gpu)
{
    (void)s;
    (void)gpu;
    if (st->cpu_left < pc->cpu_score)
        return 0;
    const int64_t den = (int64_t)REF_MAX_CPU_MILLI * REF_MAX_CPU_MILLI;
    int64_t want = (int64_t)pc->req.num_gpu * pc->req.gpu_milli;
    int64_t dot = st->cpu_left * pc->cpu_score + 256 * st->gpu_left_sum * want;
    int64_t sc = (100 * den - 50 * dot) / den;
    return (int)(sc < 0 ? 0 : sc) * REF_SCALE;
}

const struct gs_plugin gs_plugin_dotprod = {
    .name = "DotProd",
    .points = 1u << GS_EP_SCORE,
    .score = score,
};
