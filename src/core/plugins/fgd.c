/*
 * FGD, fragmentation gradient descent (Weng et al., USENIX ATC '23): put the pod where the
 * frequency-weighted fragmentation of the node grows least. For a share of one card every card
 * it fits is tried (by the engine) and the best kept; equal cards go to the lowest index. The
 * study's simulator maps the decrease D (milli-GPU, weighted) to int(100 x sigmoid(D / 1000)); that
 * coarse scale makes ties, which its tie-break then settles. We reproduce the scale exactly without
 * floating point: score k holds when D >= logit(k / 100) x 1000, with logit thresholds tabled in
 * micro-units.
 */
#include "../sched_impl.h"
#include "score_ref.h"

/* round(1e6 x ln(p / (1 - p))) for p = k / 100, k = 1..99. */
static const int32_t logit_micro[99] = {
    -4595120, -3891820, -3476099, -3178054, -2944439, -2751535, -2586689, -2442347, -2313635,
    -2197225, -2090741, -1992430, -1900959, -1815290, -1734601, -1658228, -1585627, -1516347,
    -1450010, -1386294, -1324925, -1265666, -1208311, -1152680, -1098612, -1045969, -994623,
    -944462,  -895384,  -847298,  -800119,  -753772,  -708185,  -663294,  -619039,  -575364,
    -532217,  -489548,  -447312,  -405465,  -363965,  -322773,  -281851,  -241162,  -200671,
    -160343,  -120144,  -80043,   -40005,   0,        40005,    80043,    120144,   160343,
    200671,   241162,   281851,   322773,   363965,   405465,   447312,   489548,   532217,
    575364,   619039,   663294,   708185,   753772,   800119,   847298,   895384,   944462,
    994623,   1045969,  1098612,  1152680,  1208311,  1265666,  1324925,  1386294,  1450010,
    1516347,  1585627,  1658228,  1734601,  1815290,  1900959,  1992430,  2090741,  2197225,
    2313635,  2442347,  2586689,  2751535,  2944439,  3178054,  3476099,  3891820,  4595120,
};

/* Largest k in 0..99 with d / total >= logit(k / 100) x 1000 (d weighted by counts). */
int gs__sigmoid_pct(int64_t d, int64_t total)
{
    int lo = 0, hi = 99; /* invariant: the answer is in [lo, hi] */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (d * 1000 >= (int64_t)logit_micro[mid - 1] * total)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static int score(const struct gs_sched *s, const struct gs_nstate *st, const struct gs_podclass *pc,
                 int gpu)
{
    if (pc->req.cpu_milli == 0 && pc->req.memory_mib == 0 && pc->req.num_gpu == 0)
        return 100 * REF_SCALE;
    struct gs_nstate after = *st;
    gs__apply(&after, pc, gpu);
    int64_t d = gs__frag(s, st) - gs__frag_raw(s, &after);
    return gs__sigmoid_pct(d, s->typical_total ? s->typical_total : 1) * REF_SCALE;
}

const struct gs_plugin gs_plugin_fgd = {
    .name = "FGD",
    .points = 1u << GS_EP_SCORE,
    .card_tie = GS_CARD_LOWEST_INDEX,
    .score = score,
};
