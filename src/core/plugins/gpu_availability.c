/*
 * GPUAvailability (preFilter): rejects, once per pod, a request no node of this cluster could
 * ever host because it names only GPU models the cluster does not have. That is an input error,
 * not a wait: the pod would stay pending for ever.
 */
#include "../sched_impl.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"

#include <stdio.h>

static int pre_filter(const struct gs_sched *s, const struct gs_podclass *pc, struct gs_diag *d)
{
    uint32_t want = pc->req.model_mask;
    if (pc->req.num_gpu == 0 || want == 0 || (want & s->c->model_mask))
        return 0;
    char names[256] = "";
    size_t off = 0;
    for (int i = 0; i < GS_MODEL_MAX && off < sizeof(names); i++)
        if (want & (1u << i))
            off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", off ? "|" : "",
                                    gs_catalog_at(i)->name);
    return gs_diag_error(d, "GPU model %s: no node in the cluster has it", names);
}

const struct gs_plugin gs_plugin_gpu_availability = {
    .name = "GPUAvailability",
    .points = 1u << GS_EP_PRE_FILTER,
    .pre_filter = pre_filter,
};
