/* GPUQueueSort: higher priority first, then earlier arrival (gs_queue_less()). */
#include "../sched_impl.h"

const struct gs_plugin gs_plugin_queue_sort = {
    .name = "GPUQueueSort",
    .points = 1u << GS_EP_QUEUE_SORT,
};
