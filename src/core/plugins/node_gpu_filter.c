/*
 * NodeGPUFilter: the pod's CPU, host memory and GPUs fit what the node has free, on a GPU model
 * the pod allows. A share of one card needs one card with that much free; whole cards need that
 * many fully free cards (kube-scheduler NodeResourcesFit plus the GPU-share device check).
 */
#include "../fit_rules.h"
#include "../sched_impl.h"

static int filter(const struct gs_sched *s, const struct gs_nstate *st,
                  const struct gs_podclass *pc)
{
    (void)s;
    if (st->cpu_left < pc->req.cpu_milli)
        return GS_REASON_CPU;
    if (st->memory_left < pc->req.memory_mib)
        return GS_REASON_MEMORY;
    if (pc->req.num_gpu == 0)
        return 0;
    if (st->ngpu == 0)
        return GS_REASON_NO_GPU;
    if (!gs__model_allowed(pc->req.model_mask, st->model))
        return GS_REASON_GPU_MODEL;
    if (!gs__share_fits(st, pc))
        return pc->req.gpu_milli >= GS_MILLI_GPU ? GS_REASON_GPU_COUNT : GS_REASON_GPU_SHARE;
    return 0;
}

const struct gs_plugin gs_plugin_node_gpu_filter = {
    .name = "NodeGPUFilter",
    .points = 1u << GS_EP_FILTER,
    .filter = filter,
};
