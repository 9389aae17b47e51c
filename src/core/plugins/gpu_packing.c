/*
 * GpuPacking: first a card already shared, then a free card on a node already in use, then an
 * empty node (FGD study's simulator, gpu_packing_score.go, tiers and bounds as there):
 *   tier 1 (only partly used cards needed): max(100 - r / 10, 50), r = sum of the taken cards'
 *          free share in percent;
 *   tier 2 (U fully free cards needed on a node in use): max(50 - U, 33);
 *   tier 3 (every card of the node free, F of them): max(33 - F, F).
 * Cards are taken smallest free share first. CPU-only pods score 0.
 */
#include "../sched_impl.h"
#include "score_ref.h"

static int score(const struct gs_sched *s, const struct gs_nstate *st, const struct gs_podclass *pc,
                 int gpu)
{
    (void)s;
    (void)gpu;
    if (pc->req.num_gpu == 0 || pc->req.gpu_milli == 0)
        return 0;
    int free_cards = 0;
    for (int i = 0; i < st->ngpu; i++)
        free_cards += st->gpu_left[i] == GS_MILLI_GPU;
    if (free_cards == st->ngpu) {
        int t = 33 - free_cards;
        return (t > free_cards ? t : free_cards) * REF_SCALE;
    }
    struct gs_nstate tmp = *st;
    int64_t r = 0;
    int unused = 0;
    for (uint32_t k = 0; k < pc->req.num_gpu; k++) {
        int g = gs__best_fit_gpu(tmp.gpu_left, tmp.ngpu, pc->req.gpu_milli);
        if (g < 0)
            return 0;
        unused += tmp.gpu_left[g] == GS_MILLI_GPU;
        r += tmp.gpu_left[g] * 100 / GS_MILLI_GPU;
        tmp.gpu_left[g] = 0; /* taken: not offered again */
    }
    if (unused > 0)
        return (50 - unused > 33 ? 50 - unused : 33) * REF_SCALE;
    int64_t t = 100 - r / 10;
    return (int)(t > 50 ? t : 50) * REF_SCALE;
}

const struct gs_plugin gs_plugin_gpu_packing = {
    .name = "GpuPacking",
    .points = 1u << GS_EP_SCORE,
    .score = score,
};
