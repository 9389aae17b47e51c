/*
 * Kubernetes Pod objects as gpuschedd reads them: names, resources, GPU models, PodGroup.
 */
#ifndef GSD_PODSPEC_H
#define GSD_PODSPEC_H

#include "config.h"

#include "gpusched/diag.h"
#include "gpusched/sched.h"

#include <jansson.h>

#define GSD_UID_MAX 64 /* metadata.uid, with the NUL */
#define GSD_MIG_MAX 16 /* a MIG profile name, "1g.10gb+me", with the NUL */

struct gsd_podspec {
    char ns[GSD_NAME_MAX], name[GSD_NAME_MAX], uid[GSD_UID_MAX];
    json_t *labels, *annotations; /* objects of strings, owned (never NULL after a parse) */
    struct gs_pod_req req;
    int32_t gpumem_mib, gpucores; /* as asked, 0 = not given */
    int32_t priority;
    int has_priority;          /* spec.priority was given */
    char models[160];          /* '|'-joined catalog names allowed, "" = any */
    char group[GSD_NAME_MAX];  /* its PodGroup (gang), "" = none; see gsd_pod_group() */
    char pclass[GSD_NAME_MAX]; /* spec.priorityClassName, "" = none */
    char queue[GSD_NAME_MAX];  /* annotation scheduling.volcano.sh/queue-name, "" = none */
    char mig[GSD_MIG_MAX];     /* the MIG profile of nvidia.com/mig-<profile>: 1, "" = none */
    char share_no_gpu[40];     /* the first container asking nvidia.com/gpumem or gpucores
                                * without nvidia.com/gpu ("spec.containers[1]"), "" = none */
};

/* A field error: an HTTP status, the message and the JSON path of the field. */
struct gsd_ferr {
    int status;
    char field[128];
    char msg[GS_DIAG_MSG_MAX];
};

/*
 * gsd_podspec_parse() - read a Kubernetes Pod object (@pod) into @out: metadata name, namespace
 * (may be absent: "" then), uid, labels, annotations (gpusched.io/gpu-model limits GPU models),
 * spec.priority, and per container and init container (restartPolicy Always: a sidecar)
 * resources.limits (requests where a limit is absent) nvidia.com/gpu, nvidia.com/gpumem (MiB),
 * nvidia.com/gpucores (%), cpu, memory, and one MIG instance, nvidia.com/mig-<profile>: 1
 * (NVIDIA's device plugin, strategy mixed), a profile some MIG model of gpusched/mig.h has; the
 * pod asks their effective request, as Kubernetes counts it (podspec.c). More than one instance,
 * two profiles, two different shares, or a MIG instance with nvidia.com/gpu, gpumem or gpucores
 * is a 400 naming the field.
 * @min_card_mib: the smallest card memory among the cluster's models, to turn a gpumem-only
 * share into milli-GPU.
 * Return: 0; -EINVAL with @e (status 400 and the field).
 */
int gsd_podspec_parse(const json_t *pod, uint32_t min_card_mib, struct gsd_podspec *out,
                      struct gsd_ferr *e);
void gsd_podspec_clear(struct gsd_podspec *p);

/*
 * gsd_pod_group() - the PodGroup a pod belongs to, from its annotations and labels: Volcano's
 * annotation scheduling.k8s.io/group-name, else the coscheduling plugin's label
 * scheduling.x-k8s.io/pod-group (or its older pod-group.scheduling.sigs.k8s.io). @out is "" when
 * none is given. Return: 0; -EINVAL when the name is not 1..63 bytes (@out then "").
 */
int gsd_pod_group(const json_t *labels, const json_t *annotations, char out[GSD_NAME_MAX]);

/* gsd_models_mask() - the catalog mask of '|'-joined model names (0 for ""); -1 unknown name. */
int64_t gsd_models_mask(const char *models);

/* gsd_parse_cpu() / gsd_parse_memory() - Kubernetes quantities to milli-cores / MiB (rounded
 * up). Return: 0; -EINVAL (syntax, negative, over 2^40). */
int gsd_parse_cpu(const char *s, int64_t *milli);
int gsd_parse_memory(const char *s, int64_t *mib);

/* gsd_name_ok() - a DNS-1123 label: 1..63 of [a-z0-9-], alphanumeric at both ends. */
int gsd_name_ok(const char *s);
/* gsd_subdomain_ok() - a DNS-1123 subdomain of at most 63 bytes: labels joined by dots. */
int gsd_subdomain_ok(const char *s);

#endif
