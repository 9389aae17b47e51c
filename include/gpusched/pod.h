/*
 * gpusched — what a pod asks for.
 *
 * Invariants: integers in their units. A GPU request is `num_gpu` cards each with `gpu_milli`
 * milli-GPU: gpu_milli == 1000 asks for whole cards; 0 < gpu_milli < 1000 asks for a share of one
 * card and then num_gpu == 1 (the Alibaba trace and HAMi-style `nvidia.com/gpucores` requests).
 * num_gpu == 0 is a CPU-only pod and then gpu_milli == 0.
 */
#ifndef GPUSCHED_POD_H
#define GPUSCHED_POD_H

#include <stdint.h>

struct gs_diag;

#define GS_POD_NAME_MAX 64

struct gs_pod_req {
    int64_t cpu_milli;   /* >= 0 */
    int64_t memory_mib;  /* >= 0 */
    uint32_t num_gpu;    /* 0..GS_GPUS_MAX */
    uint32_t gpu_milli;  /* per GPU: 0 (no GPU), 1..999 (share), 1000 (whole) */
    uint32_t model_mask; /* allowed catalog models (bit i = model i); 0 = any model */
};

/*
 * gs_pod_req_check() - validate @p's invariants.
 * @what: names the pod in the message (e.g. "pods.csv:17").
 * Return: 0, or -EINVAL with @d naming the field.
 */
int gs_pod_req_check(const struct gs_pod_req *p, const char *what, struct gs_diag *d);

/* gs_pod_req_gpu_milli() - total milli-GPU asked: num_gpu x gpu_milli. */
int64_t gs_pod_req_gpu_milli(const struct gs_pod_req *p);

#endif
