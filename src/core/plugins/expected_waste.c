/*
 * ExpectedWaste: put a share of one card where the expected final leftover of that card grows
 * least (gs__waste_table(), frag.c). FGD asks only whether each typical pod still fits a card; it
 * happily turns a 0.68 remainder, which a 0.65 or two 0.32 pods would fill, into a 0.21 one that
 * only the rare pods of 0.2 GPU or less can. This measure looks further: it knows which
 * remainders the workload's mix is likely to fill. One point per 2 milli-GPU of expected leftover,
 * around 500; pods that take no share of one card score 500 everywhere.
 */
#include "../sched_impl.h"

static int score(const struct gs_sched *s, const struct gs_nstate *st, const struct gs_podclass *pc,
                 int gpu)
{
    if (gpu < 0 || !s->waste)
        return 500;
    int r = st->gpu_left[gpu];
    int64_t d = (int64_t)s->waste[r - (int)pc->req.gpu_milli] - s->waste[r]; /* milli x 1000 */
    int64_t v = 500 - d / 2000;
    return (int)(v < 0 ? 0 : v > 1000 ? 1000 : v);
}

const struct gs_plugin gs_plugin_expected_waste = {
    .name = "ExpectedWaste",
    .points = 1u << GS_EP_SCORE,
    .card_tie = GS_CARD_LOWEST_INDEX,
    .score = score,
};
