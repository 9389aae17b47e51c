#include "gpusched/pod.h"

#include "gpusched/cluster.h"
#include "gpusched/diag.h"

int gs_pod_req_check(const struct gs_pod_req *p, const char *what, struct gs_diag *d)
{
    if (p->cpu_milli < 0)
        return gs_diag_error(d, "%s: cpu_milli %lld is negative", what, (long long)p->cpu_milli);
    if (p->memory_mib < 0)
        return gs_diag_error(d, "%s: memory_mib %lld is negative", what, (long long)p->memory_mib);
    if (p->num_gpu > GS_GPUS_MAX)
        return gs_diag_error(d, "%s: num_gpu %u exceeds %d", what, p->num_gpu, GS_GPUS_MAX);
    if (p->num_gpu == 0 && p->gpu_milli != 0)
        return gs_diag_error(d, "%s: gpu_milli %u without num_gpu", what, p->gpu_milli);
    if (p->num_gpu > 0 && (p->gpu_milli == 0 || p->gpu_milli > GS_MILLI_GPU))
        return gs_diag_error(d, "%s: gpu_milli %u outside 1..%d", what, p->gpu_milli, GS_MILLI_GPU);
    if (p->num_gpu > 1 && p->gpu_milli < GS_MILLI_GPU)
        return gs_diag_error(d, "%s: a share (gpu_milli %u) of more than one GPU (num_gpu %u)",
                             what, p->gpu_milli, p->num_gpu);
    return 0;
}

int64_t gs_pod_req_gpu_milli(const struct gs_pod_req *p)
{
    return (int64_t)p->num_gpu * p->gpu_milli;
}
