/*
 * Random: every feasible node is equally good and the pipeline draws one uniformly with the
 * scheduler's seed; the card of a share is drawn uniformly among those it fits (reservoir).
 */
#include "../sched_impl.h"

static int score(const struct gs_sched *s, const struct gs_nstate *st, const struct gs_podclass *pc,
                 int gpu)
{
    (void)s;
    (void)st;
    (void)pc;
    (void)gpu;
    return 0;
}

const struct gs_plugin gs_plugin_random = {
    .name = "Random",
    .points = 1u << GS_EP_SCORE,
    .tie = GS_TIE_UNIFORM,
    .card_tie = GS_CARD_RANDOM,
    .score = score,
};
