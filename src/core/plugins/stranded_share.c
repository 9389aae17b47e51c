/*
 * StrandedShare: prefer the placement after which the least GPU share is stranded for the
 * workload's typical pods — counting every pod of a class the node could still host, with its
 * CPU and host memory, not only whether one more fits (gs__frag_pack_raw(), frag.c). Mapped to
 * 0..900 with FGD's sigmoid scale cut to ten steps. With a small weight under FGD it settles the
 * ties of FGD's coarse scale by a finer, resource-aware measure: the `gpusched` policy.
 */
#include "../sched_impl.h"
#include "score_ref.h"

static int score(const struct gs_sched *s, const struct gs_nstate *st, const struct gs_podclass *pc,
                 int gpu)
{
    struct gs_nstate after = *st;
    gs__apply(&after, pc, gpu);
    int64_t d = gs__frag_pack(s, st) - gs__frag_pack_raw(s, &after);
    /* Ten steps, not a hundred: ties left over go to the node priority, which keeps filling the
     * same nodes and so keeps others empty for multi-GPU pods. A finer scale measured worse. */
    return gs__sigmoid_pct(d, s->typical_total ? s->typical_total : 1) / 10 * 10 * REF_SCALE;
}

const struct gs_plugin gs_plugin_stranded_share = {
    .name = "StrandedShare",
    .points = 1u << GS_EP_SCORE,
    .card_tie = GS_CARD_LOWEST_INDEX,
    .score = score,
};
