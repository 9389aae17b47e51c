/*
 * NodeGPUReserve: picks the cards on the chosen node. A share goes to the card the score chose,
 * else to the best-fitting card (least free share that fits, lowest index), or to a uniformly
 * drawn card when the score asked for a draw. Whole cards are kept close: the smallest NVLink
 * group, else the smallest PCIe domain, that holds enough free cards; lowest indexes first.
 */
#include "../fit_rules.h"
#include "../sched_impl.h"

#include <errno.h>

static uint32_t pick_group(const struct gs_node *n, const uint8_t *group, uint32_t want)
{
    uint32_t best = 0;
    int best_free = 0;
    for (int g = 0; g < n->ngpu; g++) {
        uint32_t mask = 0;
        int nfree = 0;
        if (group[g] == GS_NO_GROUP)
            continue;
        for (int i = 0; i < n->ngpu; i++)
            if (group[i] == group[g] && n->gpu_left[i] == GS_MILLI_GPU)
                mask |= 1u << i, nfree++;
        if ((uint32_t)nfree >= want && (!best || nfree < best_free))
            best = mask, best_free = nfree;
    }
    return best;
}

static int whole_cards(const struct gs_node *n, uint32_t want, struct gs_placement *out)
{
    uint32_t mask = pick_group(n, n->nvlink, want);
    if (!mask)
        mask = pick_group(n, n->pcie, want);
    if (!mask)
        for (int i = 0; i < n->ngpu; i++)
            if (n->gpu_left[i] == GS_MILLI_GPU)
                mask |= 1u << i;
    out->gpu_mask = gs__cards_lowest(mask, (int)want);
    return __builtin_popcount(out->gpu_mask) == (int)want ? 0 : -EAGAIN;
}

static int reserve(struct gs_sched *s, const struct gs_node *n, const struct gs_podclass *pc,
                   int gpu, struct gs_placement *out)
{
    uint32_t milli = pc->req.gpu_milli;
    out->gpu_milli = milli;
    out->gpu_mask = 0;
    if (pc->req.num_gpu == 0)
        return 0;
    if (milli >= GS_MILLI_GPU)
        return whole_cards(n, pc->req.num_gpu, out);
    if (gpu == -2) {
        uint64_t seen = 0;
        for (int i = 0; i < n->ngpu; i++)
            if (n->gpu_left[i] >= milli && gs_rng_below(&s->rng, ++seen) == 0)
                gpu = i;
    } else if (gpu < 0 || gpu >= n->ngpu || n->gpu_left[gpu] < milli) {
        gpu = gs__best_fit_gpu(n->gpu_left, n->ngpu, milli);
    }
    if (gpu < 0)
        return -EAGAIN;
    out->gpu_mask = 1u << gpu;
    return 0;
}

const struct gs_plugin gs_plugin_node_gpu_reserve = {
    .name = "NodeGPUReserve",
    .points = 1u << GS_EP_RESERVE,
    .reserve = reserve,
};
