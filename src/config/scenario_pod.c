/*
 * The Pod kind (core v1), as SCENARIO.md describes it and as `kubectl get pod -o yaml` writes it.
 *
 * Resources, per container: cpu in milli-cores and memory in MiB, each rounded up as Kubernetes
 * rounds a quantity finer than its unit; the scheduler counts requests, so a request wins and a
 * limit stands in when the request is absent (Kubernetes defaults one to the other). Extended
 * resources (nvidia.com/...) must have requests == limits when both are given, as the API server
 * insists: the limit is taken, else the request. nvidia.com/gpu counts whole cards (or slices with
 * nvidia.com/gpumem in MiB and nvidia.com/gpucores in percent); nvidia.com/mig-<profile>: 1 asks
 * for one MIG instance; nvidia.com/gpu.shared counts time-slice replicas (NVIDIA's device plugin
 * name for them under renameByDefault), with nvidia.com/gpumem as the memory each declares. Init
 * containers are read too (restartPolicy: Always marks a sidecar): the scheduler counts the pod's
 * effective request as Kubernetes does (src/core/tenancy/admission.c). spec.nodeName and the
 * nodeSelector labels every node carries hold the pod to nodes; spec.tolerations let it onto
 * tainted nodes (gs_toleration_make()). Fields that decide placement but
 * are not modelled here (affinity, topologySpreadConstraints, pod-level resources)
 * are warned about, unless empty, as are those it does not honour (schedulingGates, resourceClaims,
 * host ports, the volumes kube-scheduler places by: placed_volume()); activeDeadlineSeconds,
 * preemptionPolicy and overhead are read (spec_keys says why the rest of the pod spec does not
 * change what the scheduler decides).
 */
#include "scenario_impl.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/grow.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define GPUS_PER_CONTAINER_MAX 1000000 /* far above any node; the simulator says "never fits" */

enum { P_API, P_KIND, P_META, P_SPEC, P_STATUS };
static const char *const pod_keys[] = {"apiVersion", "kind", "metadata", "spec", "status"};

enum {
    S_CONTAINERS,
    S_PRIORITY_CLASS,
    S_PRIORITY,
    S_NODE_NAME,
    S_NODE_SELECTOR,
    S_INIT_CONTAINERS,
    S_SCHEDULER,
    S_DEADLINE,
    S_PREEMPTION,
    S_OVERHEAD,
    S_HOST_NETWORK,
    S_VOLUMES,
    S_TOLERATIONS,
    S_WARN_FIRST, /* from here on: decides placement in Kubernetes, not modelled here */
    S_AFFINITY = S_WARN_FIRST,
    S_SPREAD,
    S_RESOURCES,
    S_GATES,  /* kube-scheduler keeps a gated pod out of its queue: nothing here lifts a gate */
    S_CLAIMS, /* Dynamic Resource Allocation: GPUs asked through a ResourceClaim are not read */
    S_SILENT_FIRST,
};
static const char *const spec_keys[] = {"containers",
                                        "priorityClassName",
                                        "priority",
                                        "nodeName",
                                        "nodeSelector",
                                        "initContainers",
                                        "schedulerName",
                                        "activeDeadlineSeconds",
                                        "preemptionPolicy",
                                        "overhead",
                                        "hostNetwork",
                                        "volumes",
                                        "tolerations",
                                        "affinity",
                                        "topologySpreadConstraints",
                                        "resources",
                                        "schedulingGates",
                                        "resourceClaims"};
_Static_assert(GS__YAML_NKEYS(spec_keys) == S_SILENT_FIRST, "spec_keys and S_* agree");
/* From S_SILENT_FIRST on, the fields of gs__kt_pod_spec (podtypes.c), typed there and accepted:
 * none changes where or when a pod is placed. How the kubelet runs it (dnsConfig, dnsPolicy,
 * hostAliases, hostname, hostnameOverride, subdomain, setHostnameAsFQDN, enableServiceLinks,
 * hostIPC, hostPID, hostUsers, shareProcessNamespace, securityContext, imagePullSecrets, service
 * accounts, readinessGates, restartPolicy: which containers restart, not when the pod ends);
 * ephemeralContainers, which Kubernetes lets ask no resources, and which a pod to create may not
 * have (kubectl debug adds them to a running pod); os, which kube-scheduler does not filter on
 * (nodeSelector does that), and whose windows no node here runs (podtypes.c); runtimeClassName,
 * whose nodeSelector, tolerations and overhead RuntimeClass admission writes into the pod, read
 * there; terminationGracePeriodSeconds, how long an evicted pod takes to stop: through Kubernetes
 * its cards are freed when the API server says it is gone, grace included, while an API or
 * simulated pod stops at once. */

enum { R_LIMITS, R_REQUESTS, R_CLAIMS };
static const char *const res_keys[] = {"limits", "requests", "claims"};

/* The resources of one list (requests or limits); GS_UNSET where absent. */
enum { Q_GPU, Q_GPUMEM, Q_GPUCORES, Q_MIG, Q_SHARED, Q_CPU, Q_MEMORY, Q_COUNT };
static const char *const res_names[Q_COUNT] = {"nvidia.com/gpu",
                                               "nvidia.com/gpumem",
                                               "nvidia.com/gpucores",
                                               "nvidia.com/mig-*",
                                               "nvidia.com/gpu.shared",
                                               "cpu",
                                               "memory"};

struct res {
    const char *list; /* "requests" or "limits" */
    int64_t v[Q_COUNT];
    yaml_node_t *at[Q_COUNT];
    char mig[16];
};

/* mig_profile() - the profile named by resource nvidia.com/mig-@p into @out (16 bytes):
 * "<g>g.<mem>gb" with an optional ".me" for NVIDIA's "+me" (media extensions), as the device plugin
 * spells it since a resource name cannot hold '+'; whether the model has that profile is the
 * scheduler's question. Return: false when @p is not that shape. */
static bool mig_profile(const char *p, char *out)
{
    if (strlen(p) >= 16 || p[0] < '1' || p[0] > '7' || strncmp(p + 1, "g.", 2) != 0)
        return false;
    const char *q = p + 3;
    if (*q < '1' || *q > '9')
        return false;
    while (*q >= '0' && *q <= '9')
        q++;
    if (strcmp(q, "gb") != 0 && strcmp(q, "gb.me") != 0)
        return false;
    snprintf(out, 16, "%.*sgb%s", (int)(q - p), p, q[2] ? "+me" : "");
    return true;
}

/* res_kind() - which Q_* resource @name is, or -1 (not modelled). */
static int res_kind(const char *name)
{
    for (int q = 0; q < Q_COUNT; q++)
        if (q != Q_MIG && strcmp(name, res_names[q]) == 0)
            return q;
    return strncmp(name, "nvidia.com/mig-", 15) == 0 ? Q_MIG : -1;
}

int gs__scn_gpumem(struct gs__yctx *c, yaml_node_t *v, const char *what, int64_t hi, int64_t *out)
{
    char buf[GS__YAML_SHOW_BUF];
    const char *s = gs__yaml_str(v), *why = "";
    int64_t mib;
    size_t len = s ? strlen(s) : 0;
    if (len > 2 && s[len - 1] == 'i' && !gs__qty_parse(s, 0, -20, GS__Q_CEIL, &mib, &why))
        return mib <= hi
                   ? gs__yaml_err(c, v, "%s: nvidia.com/gpumem is MiB as a plain number, e.g. %lld",
                                  gs__yaml_show(v, buf), (long long)mib)
                   : gs__yaml_err(c, v,
                                  "%s: nvidia.com/gpumem is MiB as a plain number (this is "
                                  "%lld MiB, more than %lld)",
                                  gs__yaml_show(v, buf), (long long)mib, (long long)hi);
    /* "20G" is 20,000,000,000 MiB as Kubernetes reads it: the writer thought of bytes */
    int rc = len > 1 && strchr("kMGTPE", s[len - 1])
                 ? gs__qty_parse(s, 0, 0, GS__Q_PLAIN | GS__Q_CEIL, &mib, &why)
                 : -EINVAL;
    if (rc == -ERANGE)
        mib = INT64_MAX;
    if (rc == -ERANGE || (!rc && mib > hi))
        return gs__yaml_err(c, v,
                            "%s: nvidia.com/gpumem is MiB as a plain number (this is %s%lld MiB "
                            "as Kubernetes reads it, more than %lld)",
                            gs__yaml_show(v, buf), rc ? "more than " : "", (long long)mib,
                            (long long)hi);
    return gs__scn_qty(c, v, what, 0, 0, GS__Q_PLAIN, "MiB", 0, hi, out);
}

static void catch_first(void *ud, const char *msg);

/* 1 when @name is in a GPU vendor's or sharer's namespace (NVIDIA's, Volcano's, HAMi's): a pod
 * read leniently (one kube-scheduler passed on, whose other extended resources its own filter
 * checks) that asks one of these gpusched does not read would be given cards without it, so it
 * is an error there, not a warning (a strict read refuses every such warning, catch_first()). */
static bool gpu_vendor(const char *name)
{
    static const char *const ns[] = {"nvidia.com/", "volcano.sh/", "hami.io/"};
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
        if (!strncmp(name, ns[i], strlen(ns[i])))
            return true;
    return false;
}

static int res_pair(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct res *r = arg;
    const char *name = gs__yaml_str(k);
    char what[128];
    int q = res_kind(name);
    gs__yaml_label(what, sizeof(what), "%s.%s", r->list, name);
    if (q < 0 && strncmp(name, "hugepages-", 10) == 0)
        return gs__yaml_err(c, k,
                            "resource %s is not modelled: kube-scheduler places such a pod only on "
                            "a node with that many free hugepages, and a Cluster's nodes declare "
                            "none; refused rather than ignored",
                            name);
    if (q < 0) {
        char hint[96];
        /* HAMi's other way to ask memory, as its users write it: say which one is read */
        if (!strcmp(name, "nvidia.com/gpumem-percentage"))
            snprintf(hint, sizeof(hint), " (write nvidia.com/gpumem, the share's MiB)");
        else if (!strncmp(name, "volcano.sh/vgpu-", 16)) /* Volcano's vGPU device plugin's */
            snprintf(hint, sizeof(hint),
                     " (write nvidia.com/gpu, nvidia.com/gpumem in MiB and "
                     "nvidia.com/gpucores in %%)");
        else
            gs__yaml_hint(k, res_names, Q_COUNT, hint, sizeof(hint));
        int rc = gs__scn_qty_unread(c, v, what);
        /* a warning, as a Queue's capability gives: manifests as kubectl prints them ask it */
        if (!rc && !strcmp(name, "ephemeral-storage"))
            gs__yaml_note(c, k,
                          "%s: local ephemeral storage is taken without effect: gpusched neither "
                          "places nor limits by it",
                          what);
        else if (!rc && gpu_vendor(name) && !(c->d && c->d->warn == catch_first))
            rc = gs__yaml_err(c, k,
                              "resource %s is not one gpusched places%s: a GPU resource is "
                              "refused rather than ignored",
                              name, hint);
        else if (!rc)
            gs__yaml_warn(c, k, "resource %s is not interpreted by the scenario%s; ignored", name,
                          hint);
        return rc;
    }
    if (r->at[q] && q == Q_MIG)
        return gs__yaml_err(c, k,
                            "%s and %s in %s: gpusched places one MIG profile per container "
                            "(any count of it); give each profile a container of its own",
                            gs__yaml_str(r->at[q]), name, r->list);
    if (r->at[q])
        return gs__yaml_err(c, k, "%s is given twice in %s", name, r->list);
    r->at[q] = k;
    switch (q) {
    case Q_GPU:
    case Q_SHARED:
        return gs__scn_qty(c, v, what, 0, 0, 0, "GPUs", 0, GPUS_PER_CONTAINER_MAX, &r->v[q]);
    case Q_GPUMEM: /* HAMi's unit is MiB: "20Gi" would be read as 20 Gi-MiB */
        return gs__scn_gpumem(c, v, what, INT32_MAX, &r->v[q]);
    case Q_GPUCORES:
        return gs__scn_qty(c, v, what, 0, 0, GS__Q_PLAIN, "percent", 0, 100, &r->v[q]);
    case Q_MIG:
        if (!mig_profile(name + 15, r->mig))
            return gs__yaml_err(c, k,
                                "%s is not a MIG profile (as in nvidia.com/mig-2g.20gb, or "
                                "nvidia.com/mig-1g.10gb.me for 1g.10gb+me)",
                                name);
        return gs__scn_qty(c, v, what, 0, 0, 0, "instances (one per container)", 0, 1, &r->v[q]);
    case Q_CPU:
        return gs__scn_qty(c, v, what, 3, 0, GS__Q_CEIL, "milli-CPU", 0, INT64_MAX / 4, &r->v[q]);
    default:
        return gs__scn_qty(c, v, what, 0, -20, GS__Q_CEIL, "MiB", 0, INT64_MAX / 4, &r->v[q]);
    }
}

static int read_res(struct gs__yctx *c, yaml_node_t *n, const char *list, struct res *r)
{
    r->list = list;
    for (int q = 0; q < Q_COUNT; q++) {
        r->v[q] = GS_UNSET;
        r->at[q] = NULL;
    }
    r->mig[0] = '\0';
    return n ? gs__yaml_each_pair(c, n, list, res_pair, r) : 0;
}

/* combine() - one container's resources from its requests @rq and limits @lim. */
static int combine(struct gs__yctx *c, const struct res *rq, const struct res *lim,
                   struct gs_scn_container *out)
{
    int64_t v[Q_COUNT];
    for (int q = 0; q < Q_COUNT; q++) {
        bool ext = q <= Q_SHARED, both = rq->at[q] && lim->at[q];
        if (q == Q_MIG && both && strcmp(rq->mig, lim->mig) != 0)
            return gs__yaml_err(c, rq->at[q],
                                "requests.%s and limits.%s are two MIG profiles: Kubernetes "
                                "requires each extended resource's limit, equal to its request",
                                gs__yaml_str(rq->at[q]), gs__yaml_str(lim->at[q]));
        if (ext && both && rq->v[q] != lim->v[q])
            return gs__yaml_err(c, rq->at[q],
                                "requests.%s (%lld) must equal limits.%s (%lld): Kubernetes "
                                "requires it for extended resources",
                                gs__yaml_str(rq->at[q]), (long long)rq->v[q],
                                gs__yaml_str(lim->at[q]), (long long)lim->v[q]);
        if (ext && q != Q_GPU && rq->at[q] && !lim->at[q])
            return gs__yaml_err(c, rq->at[q],
                                "requests.%s without limits.%s: Kubernetes requires a limit for "
                                "an extended resource, equal to its request (write it under "
                                "limits)",
                                gs__yaml_str(rq->at[q]), gs__yaml_str(rq->at[q]));
        if (!ext && both && rq->v[q] > lim->v[q])
            return gs__yaml_err(c, rq->at[q], "requests.%s is above limits.%s", res_names[q],
                                res_names[q]);
        v[q] = ext ? (lim->at[q] ? lim->v[q] : rq->v[q]) : (rq->at[q] ? rq->v[q] : lim->v[q]);
    }
    const struct res *src = lim->at[Q_MIG] ? lim : rq;
    yaml_node_t *share = lim->at[Q_GPUMEM] ? lim->at[Q_GPUMEM] : rq->at[Q_GPUMEM];
    share = share ? share : (lim->at[Q_GPUCORES] ? lim->at[Q_GPUCORES] : rq->at[Q_GPUCORES]);
    if (share && v[Q_GPU] <= 0 && v[Q_SHARED] <= 0)
        return gs__yaml_err(c, share,
                            "%s needs nvidia.com/gpu, the number of shared GPUs: add "
                            "nvidia.com/gpu: 1 to the container (kubelet hands a container its "
                            "card only through nvidia.com/gpu's device plugin)",
                            gs__yaml_str(share));
    yaml_node_t *mem = lim->at[Q_GPUMEM] ? lim->at[Q_GPUMEM] : rq->at[Q_GPUMEM];
    yaml_node_t *cores = lim->at[Q_GPUCORES] ? lim->at[Q_GPUCORES] : rq->at[Q_GPUCORES];
    if (mem && v[Q_GPUMEM] == 0)
        return gs__yaml_err(c, mem, "nvidia.com/gpumem 0: a share of a card holds at least 1 MiB");
    if (cores && v[Q_GPUCORES] == 0 && !mem)
        return gs__yaml_err(c, cores,
                            "nvidia.com/gpucores 0 without nvidia.com/gpumem asks for nothing of "
                            "the card");
    if (cores && v[Q_GPUCORES] == 0)
        v[Q_GPUCORES] = GS_UNSET; /* HAMi's 0: no compute of its own, memory decides */
    yaml_node_t *ts = lim->at[Q_SHARED] ? lim->at[Q_SHARED] : rq->at[Q_SHARED];
    if (ts && v[Q_SHARED] > 0 && (v[Q_GPU] > 0 || v[Q_MIG] > 0))
        return gs__yaml_err(c, ts,
                            "nvidia.com/gpu.shared with nvidia.com/gpu or a MIG profile: a "
                            "container takes time-slice replicas, cards or an instance");
    out->gpu_shared = v[Q_SHARED];
    out->gpu = v[Q_GPU];
    out->gpumem_mib = v[Q_GPUMEM];
    out->gpucores = v[Q_GPUCORES];
    out->cpu_milli = v[Q_CPU];
    out->memory_mib = v[Q_MEMORY];
    out->cpu_limit_milli = lim->at[Q_CPU] ? lim->v[Q_CPU] : 0;
    out->memory_limit_mib = lim->at[Q_MEMORY] ? lim->v[Q_MEMORY] : 0;
    out->gpu_request_only = rq->at[Q_GPU] && !lim->at[Q_GPU];
    out->mig_profile[0] = '\0';
    if (v[Q_MIG] > 0)
        memcpy(out->mig_profile, src->mig, sizeof(out->mig_profile));
    return 0;
}

/* A container of spec.containers or spec.initContainers (@init), appended to the pod's. */
struct clist {
    struct gs_pod_spec *p;
    int init;
    int host_network;     /* spec.hostNetwork: true, where every container port is a host port */
    struct cnames *names; /* the pod's containers so far (init ones first) */
};

/* Per container of a pod: its name's node and where it is, as the messages name it. */
struct cnames {
    yaml_node_t *node[GS_SCN_CONTAINERS];
    char where[GS_SCN_CONTAINERS][64]; /* as read_container()'s where */
};

/* A container's name: a DNS label, unique among the pod's containers, init ones included (an API
 * server refuses the pod otherwise). */
static int container_name(struct gs__yctx *c, yaml_node_t *n, const char *where,
                          const struct clist *l, int at)
{
    const char *s = gs__yaml_str(n);
    if (!gs_dns_label_ok(s, strlen(s)))
        return gs__yaml_err(c, n,
                            "%s.name \"%.80s\": expected a DNS label: lowercase letters, digits "
                            "and '-', a letter or digit at both ends",
                            where, s);
    for (int i = 0; i < at; i++)
        if (strcmp(gs__yaml_str(l->names->node[i]), s) == 0)
            return gs__yaml_err(c, n, "%s.name %s: %s has that name too", where, s,
                                l->names->where[i]);
    l->names->node[at] = n;
    snprintf(l->names->where[at], sizeof(l->names->where[at]), "%s", where);
    return 0;
}

/* A container port bound on its node (hostPort, or any port under hostNetwork): kube-scheduler's
 * NodePorts keeps two pods that claim the same one off a node; ports are not modelled here. */
static int host_port(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    const struct clist *l = arg;
    yaml_node_t *hp = NULL;
    (void)idx;
    if (n->type == YAML_MAPPING_NODE && !gs__yaml_map_get(c, n, "hostPort", &hp) &&
        ((hp && !gs__yaml_is_null(hp) && strcmp(gs__yaml_str(hp) ? gs__yaml_str(hp) : "", "0")) ||
         l->host_network))
        gs__yaml_warn(c, hp ? hp : n,
                      "a host port (hostPort, or a port under spec.hostNetwork) is not "
                      "interpreted by the scenario: kube-scheduler keeps two pods claiming one "
                      "off a node; ignored");
    return 0;
}

/*
 * A volume kube-scheduler places by (kubernetes.io/docs/concepts/scheduling-eviction/
 * scheduling-framework): a PersistentVolumeClaim, or a generic ephemeral volume (a claim made for
 * the pod), which VolumeBinding holds to the nodes its PersistentVolume reaches (a zonal disk's
 * node affinity) and keeps pending while unbound; a disk of the node's cloud or SAN, counted
 * against the node's attach limit (NodeVolumeLimits) or kept from two pods writing it
 * (VolumeRestrictions). No inventory here has PersistentVolumes or disks. A container's
 * volumeDevices name a claim's volume, so that volume is the one named. Every other source
 * (emptyDir, configMap, secret, downwardAPI, projected, hostPath, csi, nfs, image, ...) is mounted
 * by the kubelet on whatever node the pod is given, and is accepted.
 */
static int placed_volume(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    static const char *const keys[] = {"persistentVolumeClaim",
                                       "ephemeral",
                                       "awsElasticBlockStore",
                                       "gcePersistentDisk",
                                       "azureDisk",
                                       "cinder",
                                       "iscsi",
                                       "rbd"};
    yaml_node_t *v = NULL;
    char where[48];
    gs__yaml_label(where, sizeof(where), "spec.volumes[%d]", idx);
    int rc = gs__scn_typed(c, gs__kt_volume, n, where);
    if (!rc && gs__yaml_earlier(c, arg, idx, "name") && !gs__yaml_map_get(c, n, "name", &v))
        rc = gs__yaml_err(c, v,
                          "%s.name: Duplicate value \"%s\": an earlier volume has that name, as "
                          "the API server refuses it",
                          where, gs__yaml_str(v));
    for (size_t k = 0; !rc && n->type == YAML_MAPPING_NODE && k < sizeof(keys) / sizeof(keys[0]);
         k++)
        if (!gs__yaml_map_get(c, n, keys[k], &v) && v && !gs__yaml_is_null(v)) {
            gs__yaml_warn(c, v,
                          "spec.volumes[%d].%s is not interpreted by the scenario: %s, and "
                          "nothing here has them; ignored",
                          idx, keys[k],
                          k < 2 ? "kube-scheduler's VolumeBinding holds a pod to the nodes its "
                                  "claim's PersistentVolume reaches, pending while it is unbound"
                                : "kube-scheduler counts a disk against its node's attach limit "
                                  "and keeps two pods writing one apart");
            return 0;
        }
    return rc;
}

/* restartPolicy: Kubernetes allows it on init containers only, and only Always (a sidecar). */
static int restart_policy(struct gs__yctx *c, const yaml_node_t *n, struct clist *l, int *init)
{
    const char *v = gs__yaml_str(n);
    if (!l->init || !v || strcmp(v, "Always") != 0)
        return gs__yaml_err(c, n,
                            "restartPolicy: only an init container may have one, and only "
                            "Always (a sidecar)");
    *init = 2;
    return 0;
}

/* The fields of container @n the scheduler reads (null when absent), once it is typed. */
enum { C_NAME, C_RESOURCES, C_PORTS, C_RESTART, C_READ };
static int container_fields(struct gs__yctx *c, yaml_node_t *n, const char *where, yaml_node_t **f)
{
    static const char *const read[C_READ] = {"name", "resources", "ports", "restartPolicy"};
    int rc = gs__scn_typed(c, gs__kt_container, n, where);
    for (int k = 0; !rc && n->type == YAML_MAPPING_NODE && k < C_READ; k++)
        rc = gs__yaml_map_get(c, n, read[k], &f[k]);
    return rc;
}

static int read_container(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    struct clist *l = arg;
    struct gs_pod_spec *p = l->p;
    yaml_node_t *f[C_READ] = {NULL}, *r[3] = {NULL};
    struct res rq, lim;
    char where[64];
    int at = p->ncontainers, init = l->init;
    gs__yaml_label(where, sizeof(where),
                   l->init ? "spec.initContainers[%d]" : "spec.containers[%d]", idx);
    if (at >= GS_SCN_CONTAINERS)
        return gs__yaml_err_code(c, n, -E2BIG,
                                 "more than %d containers in a pod, init containers counted",
                                 GS_SCN_CONTAINERS);
    int rc = container_fields(c, n, where, f);
    if (!rc && f[C_NAME] && !gs__yaml_is_null(f[C_NAME]) && !gs__yaml_text(f[C_NAME])) {
        char what[96]; /* read here, so never a lenient warning */
        gs__yaml_label(what, sizeof(what), "%s.name", where);
        rc = gs__yaml_text_error(c, f[C_NAME], what);
    }
    if (!rc && (!f[C_NAME] || gs__yaml_is_null(f[C_NAME])))
        rc = gs__yaml_err(c, f[C_NAME] ? f[C_NAME] : n,
                          "%s.name is required: an API server refuses a container without one",
                          where);
    if (!rc)
        rc = container_name(c, f[C_NAME], where, l, at);
    if (!rc && f[C_RESTART] && !gs__yaml_is_null(f[C_RESTART]))
        rc = restart_policy(c, f[C_RESTART], l, &init);
    if (!rc && f[C_PORTS] && f[C_PORTS]->type == YAML_SEQUENCE_NODE)
        rc = gs__yaml_each_item(c, f[C_PORTS], "ports", host_port, l);
    if (!rc && f[C_RESOURCES])
        rc = gs__yaml_each_field(c, f[C_RESOURCES], res_keys, GS__YAML_NKEYS(res_keys), "resources",
                                 gs__scn_keep, r);
    if (!rc && r[R_CLAIMS] && !gs__yaml_is_null(r[R_CLAIMS]) && !gs__yaml_is_empty(r[R_CLAIMS]))
        gs__yaml_warn(c, r[R_CLAIMS],
                      "resources.claims (Dynamic Resource Allocation) is not interpreted by the "
                      "scenario: ask GPUs as nvidia.com/gpu; ignored");
    if (!rc)
        rc = read_res(c, r[R_REQUESTS], "requests", &rq);
    if (!rc)
        rc = read_res(c, r[R_LIMITS], "limits", &lim);
    if (!rc)
        rc = combine(c, &rq, &lim, &p->containers[at]);
    if (!rc) {
        p->containers[at].init = init;
        p->ncontainers = at + 1;
    }
    return rc;
}

/* A node name the pod is held to (spec.nodeName, nodeSelector kubernetes.io/hostname), into
 * @p->node_name; both given, they must agree. */
static int node_name(struct gs__yctx *c, yaml_node_t *v, const char *what, struct gs_pod_spec *p)
{
    char name[GS_SCN_NAME_MAX];
    int rc = gs__scn_name(c, v, what, name, sizeof(name));
    if (!rc && p->node_name[0] && strcmp(p->node_name, name))
        return gs__yaml_err(c, v, "%s %s and spec.nodeName %s name different nodes", what, name,
                            p->node_name);
    if (!rc) {
        if (what[0] == 's') /* spec.nodeName */
            p->node_by_selector = 0;
        else if (!p->node_name[0])
            p->node_by_selector = 1;
        memcpy(p->node_name, name, sizeof(name));
    }
    return rc;
}

/* string_value() - value @v of key @k of @map (labels, annotations, nodeSelector: a Go
 * map[string]string in Kubernetes' types) is text or null; the API server refuses a number or a
 * boolean there, as kubectl's YAML reads `team: 1` or `on-call: true`. */
static int string_value(struct gs__yctx *c, const yaml_node_t *k, const yaml_node_t *v,
                        const char *map)
{
    char what[128];
    gs__yaml_label(what, sizeof(what), "%s %.80s", map, gs__yaml_str(k));
    if (v->type != YAML_SCALAR_NODE) /* a map of strings, as the API server reads it */
        return gs__yaml_type_error(c, v, what, "a string");
    return gs__yaml_not_typed(c, v, what);
}

/* nodeSelector: the labels every node carries (the inventory gives no others): its GPU model
 * (nvidia.com/gpu.product, as NVIDIA's GPU feature discovery writes it), its name
 * (kubernetes.io/hostname) and its zone (topology.kubernetes.io/zone), as the kubelet writes
 * them. */
static int selector_pair(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct gs_pod_spec *p = arg;
    char buf[GS__YAML_SHOW_BUF];
    int rc = string_value(c, k, v, "nodeSelector");
    if (rc)
        return rc;
    if (strcmp(gs__yaml_str(k), "kubernetes.io/hostname") == 0)
        return node_name(c, v, "nodeSelector kubernetes.io/hostname", p);
    if (strcmp(gs__yaml_str(k), "topology.kubernetes.io/zone") == 0)
        return gs__scn_name(c, v, "nodeSelector topology.kubernetes.io/zone", p->node_zone,
                            sizeof(p->node_zone));
    if (strcmp(gs__yaml_str(k), "nvidia.com/gpu.product") != 0) {
        gs__yaml_warn(c, k,
                      "nodeSelector %s is not interpreted (a node's labels are "
                      "nvidia.com/gpu.product, kubernetes.io/hostname and "
                      "topology.kubernetes.io/zone); ignored",
                      gs__yaml_show(k, buf));
        return 0;
    }
    const char *s = gs__yaml_str(v);
    int m = s ? gs_catalog_find_product(s) : -ENOENT;
    if (m < 0)
        return gs__yaml_err(c, v,
                            "nodeSelector nvidia.com/gpu.product: %s is not a GPU model in "
                            "the catalog",
                            gs__yaml_show(v, buf));
    /* with the gpusched.io/gpu-model annotation too, both hold */
    p->model_by_selector = !p->model_mask;
    p->model_mask = p->model_mask ? p->model_mask & 1u << m : 1u << m;
    return p->model_mask ? 0
                         : gs__yaml_err(c, v,
                                        "nodeSelector nvidia.com/gpu.product and "
                                        "gpusched.io/gpu-model name no model in common");
}

/* The annotations and labels the scenario reads. */
enum {
    A_GROUP,
    A_PROFILE,
    A_VGPU,
    A_QUEUE,
    A_TOPOLOGY,
    A_ARRIVAL,
    A_DURATION,
    A_UTIL,
    A_SAME_CARD,
    A_GPU_MODEL,
    A_CHECKPOINT,
    A_NODE,
    A_GPUS,
    A_MIG_START,
    A_START,
    A_SAVED,
    A_DONE,
    A_EVICTIONS,
    A_FIRST_START,
    A_CHARGED,
    A_TASK,
    A_VOLCANO_GROUP,
    A_COUNT
};
static const char *const annot_keys[] = {"scheduling.k8s.io/group-name",
                                         "gpusched.io/profile",
                                         "gpusched.io/vgpu-class",
                                         "scheduling.volcano.sh/queue-name",
                                         "gpusched.io/topology",
                                         "sim.gpusched.io/arrival",
                                         "sim.gpusched.io/duration",
                                         "sim.gpusched.io/gpu-util",
                                         "gpusched.io/same-card",
                                         "gpusched.io/gpu-model",
                                         "gpusched.io/checkpoint-interval",
                                         "sim.gpusched.io/node",
                                         "sim.gpusched.io/gpus",
                                         "sim.gpusched.io/mig-start",
                                         "sim.gpusched.io/start",
                                         "sim.gpusched.io/saved",
                                         "sim.gpusched.io/done",
                                         "sim.gpusched.io/evictions",
                                         "sim.gpusched.io/first-start",
                                         "sim.gpusched.io/charged",
                                         "volcano.sh/task-spec",
                                         "scheduling.volcano.sh/group-name"};

/* gpusched.io/gpu-model: catalog models joined by '|' ("A100-SXM4-80GB|H100-SXM5-80GB"). */
static int gpu_models(struct gs__yctx *c, yaml_node_t *v, uint32_t *mask)
{
    char buf[GS__YAML_SHOW_BUF], one[GS_SCN_NAME_MAX];
    const char *s = gs__yaml_str(v);
    uint32_t m = 0;
    for (const char *p = s; p && *p;) {
        size_t len = strcspn(p, "|");
        if (len == 0 || len >= sizeof(one))
            return gs__yaml_err(c, v,
                                "gpusched.io/gpu-model: %s is not a list of GPU models "
                                "joined by '|'",
                                gs__yaml_show(v, buf));
        memcpy(one, p, len);
        one[len] = '\0';
        int k = gs_catalog_find_product(one);
        if (k < 0)
            return gs__yaml_err(c, v, "gpusched.io/gpu-model: %s is not a GPU model in the catalog",
                                one);
        m |= 1u << k;
        p += len + (p[len] == '|');
    }
    if (!m)
        return gs__yaml_err(c, v, "gpusched.io/gpu-model must name at least one GPU model");
    *mask = m;
    return 0;
}

/*
 * The PodGroup a pod joins, named by Volcano's annotation scheduling.k8s.io/group-name (or its
 * scheduling.volcano.sh/group-name, volcano-sh/apis scheduling/v1beta1 labels.go) or by the
 * coscheduling plugin's label scheduling.x-k8s.io/pod-group (kubernetes-sigs/scheduler-plugins;
 * pod-group.scheduling.sigs.k8s.io is its older name); @key: the field, as a 400 names it. Two of
 * them naming different PodGroups are an error: a pod joins one. A name no PodGroup could have
 * would wait for ever.
 */
static int group_name(struct gs__yctx *c, yaml_node_t *v, const char *key, struct gs_pod_spec *p)
{
    const char *what = strchr(key + strlen("metadata."), '.') + 1; /* the label or annotation */
    char g[sizeof(p->group)];
    int r = gs__scn_name(c, v, what, g, sizeof(g));
    if (!r && !gs_dns_subdomain_ok(g, strlen(g)))
        r = gs__yaml_err(c, v,
                         "%s \"%s\": expected a PodGroup's name, a DNS subdomain: lowercase "
                         "letters, digits, '-' and '.', a letter or digit at both ends",
                         what, g);
    if (!r && p->group_key && strcmp(p->group, g) != 0)
        r = gs__yaml_err(c, v, "%s \"%s\": %s names PodGroup %s: a pod joins one PodGroup", what, g,
                         p->group_key, p->group);
    if (!r) {
        memcpy(p->group, g, sizeof(g));
        p->group_key = key;
    }
    return r;
}

struct annot {
    struct gs_pod_spec *p;
    unsigned seen;
    size_t bytes;         /* of the keys and values so far */
    yaml_node_t *vgpu_at; /* the value of gpusched.io/vgpu-class, NULL none */
};

/* fraction_pct() - "0.4", ".45", "1.0": a fraction 0..1 of at most two decimals, in percent;
 * -1 otherwise. */
static long long fraction_pct(const char *s)
{
    long long whole = 0, pct = 0;
    int digits = 0, decimals = 0;
    for (; *s >= '0' && *s <= '9' && digits < 3; s++, digits++)
        whole = whole * 10 + (*s - '0');
    if (*s++ != '.')
        return -1;
    for (; *s >= '0' && *s <= '9' && decimals < 3; s++, decimals++)
        pct = pct * 10 + (*s - '0');
    if (*s || digits + decimals == 0 || decimals > 2)
        return -1;
    pct = whole * 100 + (decimals == 1 ? pct * 10 : pct);
    return pct <= 100 ? pct : -1;
}

/* sim.gpusched.io/gpu-util: a whole percentage ("40", "40%") or, with a decimal point, a
 * fraction ("0.4"); "1" is 1 %, "1.0" all of the time (docs/scenario.md). */
static int util_pct(struct gs__yctx *c, yaml_node_t *v, int32_t *out)
{
    char buf[GS__YAML_SHOW_BUF], num[8];
    const char *s = gs__yaml_str(v);
    long long x = -1;
    size_t len = s ? strlen(s) : 0;
    if (len && s[len - 1] == '%')
        len--;
    if (s && strchr(s, '.'))
        x = len == strlen(s) ? fraction_pct(s) : -1;
    else if (s && len < sizeof(num)) {
        memcpy(num, s, len);
        num[len] = '\0';
        if (!gs__yaml_parse_int(num, &x))
            x = -1;
    }
    if (x < 0 || x > 100)
        return gs__yaml_err(c, v,
                            "sim.gpusched.io/gpu-util must be a whole percentage 0..100 (\"40\" "
                            "or \"40%%\") or a fraction 0..1 with a decimal point and at most two "
                            "decimals (\"0.4\"), not %s",
                            gs__yaml_show(v, buf));
    *out = (int32_t)x;
    return 0;
}

/* sim.gpusched.io/gpus: node-local card indexes joined by ',' ("0,1,2,3"); "" for a pod that
 * asks no card (the snapshot writes it so; a pod that asks some is refused at its restore). */
static int card_list(struct gs__yctx *c, yaml_node_t *v, uint32_t *mask)
{
    char buf[GS__YAML_SHOW_BUF];
    const char *s = gs__yaml_str(v);
    uint32_t m = 0;
    for (const char *q = s; q && *q;) {
        char *end;
        long g = strtol(q, &end, 10);
        if (end == q || g < 0 || g >= GS_GPUS_MAX || (*end && *end != ',') || (m >> g & 1))
            return gs__yaml_err(c, v,
                                "sim.gpusched.io/gpus: %s is not a list of distinct card "
                                "indexes 0..%d joined by ','",
                                gs__yaml_show(v, buf), GS_GPUS_MAX - 1);
        m |= 1u << g;
        q = end + (*end == ',');
    }
    if (!m && (!s || *s))
        return gs__yaml_err(c, v, "sim.gpusched.io/gpus must name at least one card");
    *mask = m;
    return 0;
}

/* Where @n is, for a check made once every document is read. */
static void node_src(const struct gs__yctx *c, const yaml_node_t *n, struct gs_scn_src *src)
{
    size_t line, col;
    gs__yaml_pos(c, n, &line, &col);
    snprintf(src->file, sizeof(src->file), "%s", c->path ? c->path : "");
    src->line = (uint32_t)line;
    src->col = (uint32_t)col;
}

/* Where @v, a pod's cards, is in its file (placed_src's: a snapshot's pod is one document). */
static void cards_at(const struct gs__yctx *c, const yaml_node_t *v, struct gs_pod_spec *p)
{
    size_t line, col;
    gs__yaml_pos(c, v, &line, &col);
    p->cards_line = (uint32_t)line;
    p->cards_col = (uint32_t)col;
}

/* Where @v, time annotation @k (GS_AT_*) of pod @p, is in its file. */
static void time_at(const struct gs__yctx *c, const yaml_node_t *v, int k, struct gs_pod_spec *p)
{
    size_t line, col;
    gs__yaml_pos(c, v, &line, &col);
    p->times_line[k] = (uint32_t)line;
    p->times_col[k] = (uint32_t)col;
}

static int annot_value(struct gs__yctx *c, int a, yaml_node_t *v, struct gs_pod_spec *p)
{
    static const int8_t time_of[A_COUNT] = {[A_ARRIVAL] = GS_AT_ARRIVAL + 1,
                                            [A_START] = GS_AT_START + 1,
                                            [A_DONE] = GS_AT_DONE + 1,
                                            [A_SAVED] = GS_AT_SAVED + 1,
                                            [A_FIRST_START] = GS_AT_FIRST + 1};
    int tier = 0, rc;
    if (time_of[a])
        time_at(c, v, time_of[a] - 1, p);
    switch (a) {
    case A_NODE:
        node_src(c, v, &p->placed_src);
        return gs__scn_name(c, v, annot_keys[a], p->placed_node, sizeof(p->placed_node));
    case A_GPUS:
        p->placed_given |= GS_PLACED_GPUS;
        cards_at(c, v, p);
        return card_list(c, v, &p->placed_mask);
    case A_MIG_START: { /* an annotation's value is a string: "4", as a snapshot writes it */
        char buf[GS__YAML_SHOW_BUF];
        long long n;
        p->placed_given |= GS_PLACED_MIG;
        cards_at(c, v, p);
        if (!gs__yaml_parse_int(gs__yaml_str(v), &n) || n < 0 || n > 7)
            return gs__yaml_err(c, v, "%s must be a first memory slice \"0\"..\"7\", not %s",
                                annot_keys[a], gs__yaml_show(v, buf));
        p->placed_mig_start = (int32_t)n;
        return 0;
    }
    case A_START:
        p->placed_given |= GS_PLACED_START;
        return gs__scn_dur(c, v, annot_keys[a], &p->placed_start_us);
    case A_SAVED:
        return gs__scn_dur(c, v, annot_keys[a], &p->saved_us);
    case A_DONE:
        p->placed_given |= GS_PLACED_DONE;
        return gs__scn_dur(c, v, annot_keys[a], &p->done_us);
    case A_EVICTIONS: { /* an annotation's value is a string: "3" */
        char buf[GS__YAML_SHOW_BUF];
        long long n;
        if (!gs__yaml_parse_int(gs__yaml_str(v), &n) || n < 0 || n > INT32_MAX)
            return gs__yaml_err(c, v, "%s must be a count of evictions (\"0\", \"3\"), not %s",
                                annot_keys[a], gs__yaml_show(v, buf));
        p->evictions = (int32_t)n;
        return 0;
    }
    case A_CHARGED: {
        const char *s = gs__yaml_str(v);
        p->charged = s && !strcmp(s, "dedicated") ? 1 : s && !strcmp(s, "shared") ? 2 : 0;
        if (p->charged)
            return 0;
        char buf[GS__YAML_SHOW_BUF];
        return gs__yaml_err(c, v, "%s must be dedicated or shared, not %s", annot_keys[a],
                            gs__yaml_show(v, buf));
    }
    case A_FIRST_START:
        p->placed_given |= GS_PLACED_FIRST;
        return gs__scn_dur(c, v, annot_keys[a], &p->first_start_us);
    case A_GROUP:
        return group_name(c, v, "metadata.annotations.scheduling.k8s.io/group-name", p);
    case A_VOLCANO_GROUP: /* Volcano's own key for it (VolcanoGroupNameAnnotationKey) */
        return group_name(c, v, "metadata.annotations.scheduling.volcano.sh/group-name", p);
    case A_PROFILE:
        return gs__scn_name(c, v, annot_keys[a], p->profile, sizeof(p->profile));
    case A_TASK: /* Volcano's job controller writes it on each pod of a Job: the task's name */
        if ((rc = gs__scn_name(c, v, annot_keys[a], p->task, sizeof(p->task))) != 0)
            return rc;
        return gs_dns_label_ok(p->task, strlen(p->task))
                   ? 0
                   : gs__yaml_err(c, v,
                                  "%s \"%s\": expected a Volcano task's name, a DNS label (a-z, "
                                  "0-9, '-', 1..63 bytes)",
                                  annot_keys[a], p->task);
    case A_VGPU:
        return gs__scn_name(c, v, annot_keys[a], p->vgpu_class, sizeof(p->vgpu_class));
    case A_QUEUE:
        return gs__scn_name(c, v, annot_keys[a], p->queue, sizeof(p->queue));
    case A_TOPOLOGY: {
        static const char *const tiers[] = {"none", "nvlink", "pcie", "node", "az"};
        rc = gs__scn_enum(c, v, annot_keys[a], tiers, 5, &tier);
        p->tier = (enum gs_tier)tier;
        p->tier_given = 1;
        return rc;
    }
    case A_ARRIVAL:
        return gs__scn_dur(c, v, annot_keys[a], &p->arrival_us);
    case A_DURATION:
        return gs__scn_dur(c, v, annot_keys[a], &p->duration_us);
    case A_CHECKPOINT:
        if ((rc = gs__scn_dur(c, v, annot_keys[a], &p->checkpoint_us)) != 0)
            return rc;
        return p->checkpoint_us > 0
                   ? 0
                   : gs__yaml_err(c, v, "%s must be longer than 0 s", annot_keys[a]);
    case A_SAME_CARD: {
        static const char *const no_yes[] = {"false", "true"};
        return gs__scn_enum(c, v, annot_keys[a], no_yes, 2, &p->same_card);
    }
    case A_GPU_MODEL: {
        uint32_t m = 0;
        if ((rc = gpu_models(c, v, &m)) != 0)
            return rc;
        /* with a nodeSelector on the model too, both hold */
        p->model_by_selector = 0;
        p->model_mask = p->model_mask ? p->model_mask & m : m;
        return p->model_mask ? 0
                             : gs__yaml_err(c, v,
                                            "gpusched.io/gpu-model and nodeSelector "
                                            "nvidia.com/gpu.product name no model in "
                                            "common");
    }
    default:
        return util_pct(c, v, &p->util_pct);
    }
}

/* An annotation of ours whose value is a duration (120s, 2h30m). */
static bool duration_key(const char *key)
{
    static const int durations[] = {A_ARRIVAL, A_DURATION, A_CHECKPOINT};
    for (size_t i = 0; key && i < sizeof(durations) / sizeof(durations[0]); i++)
        if (!strcmp(key, annot_keys[durations[i]]))
            return true;
    return false;
}

static int annot_pair(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct annot *an = arg;
    const char *key = gs__yaml_str(k);
    char buf[GS__YAML_SHOW_BUF];
    const char *type = gs__yaml_scalar_type(v);
    if (type && !strcmp(type, "integer") && duration_key(key)) /* "120" would not read either */
        return gs__yaml_err(c, v,
                            "annotation %s must be a string, not the integer %s: write a duration "
                            "with its unit, \"%.24ss\"",
                            key, gs__yaml_show(v, buf), gs__yaml_str(v));
    int rc = string_value(c, k, v, "annotation");
    if (rc)
        return rc;
    const char *val = gs__yaml_str(v);
    /* the simulator's own (a snapshot writes a few beside a pod's) are not the API server's:
     * a pod accepted at the cap is read back from a snapshot */
    if (strncmp(key, "sim.gpusched.io/", 16) != 0)
        an->bytes += strlen(key) + (val ? strlen(val) : 0);
    if (an->bytes > GS_ANNOTATIONS_MAX_BYTES)
        return gs__yaml_err(c, v,
                            "metadata.annotations: more than %d bytes of keys and values in all, "
                            "as the API server refuses them",
                            GS_ANNOTATIONS_MAX_BYTES);
    if (!gs_annotation_key_ok(key))
        return gs__yaml_err(c, k,
                            "annotation key %.80s: expected an optional DNS subdomain prefix and "
                            "'/', then a name of 1-63 bytes: alphanumerics at both ends, '-', "
                            "'_', '.' between (as Kubernetes refuses it)",
                            key);
    for (int a = 0; a < A_COUNT; a++) {
        if (strcmp(key, annot_keys[a]) != 0)
            continue;
        if (an->seen & (1u << a))
            return gs__yaml_err(c, k, "annotation %s is given twice", key);
        an->seen |= 1u << a;
        an->vgpu_at = a == A_VGPU ? v : an->vgpu_at;
        return annot_value(c, a, v, an->p);
    }
    /* a misspelt annotation of ours would silently do nothing: say so (gpuschedd writes some
     * of its own on the pods it binds) */
    int best = gs__yaml_nearest(k, annot_keys, A_COUNT);
    if (!strncasecmp(key, "gpusched.io/", 12) || !strncasecmp(key, "sim.gpusched.io/", 16))
        gs__yaml_warn(c, k, "unknown annotation %s%s%s%s; ignored", gs__yaml_show(k, buf),
                      best >= 0 ? " (did you mean \"" : "", best >= 0 ? annot_keys[best] : "",
                      best >= 0 ? "\"?)" : "");
    /* one of the schedulers' we read, misspelt or in capitals (theirs only when near one of
     * ours: they have many more we do not read): a gang member would run alone, whichever way
     * the pod came */
    char low[320]; /* gs_annotation_key_ok(): 319 bytes at most */
    size_t n = 0;
    for (; key[n] && n < sizeof(low) - 1; n++)
        low[n] = (char)tolower((unsigned char)key[n]);
    low[n] = '\0';
    int near = gs__nearest(low, annot_keys, A_COUNT);
    if (near >= 0 &&
        (!strncmp(low, "scheduling.k8s.io/", 18) || !strncmp(low, "scheduling.volcano.sh/", 22) ||
         !strncmp(low, "volcano.sh/", 11)))
        return gs__yaml_err(c, k, "unknown annotation %s (did you mean \"%s\"?)",
                            gs__yaml_show(k, buf), annot_keys[near]);
    return 0;
}

/* A label key and value as Kubernetes validates them: an API server refuses any other. */
static int label_syntax(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v)
{
    const char *key = gs__yaml_str(k), *val = gs__yaml_str(v);
    if (!gs_label_key_ok(key))
        return gs__yaml_err(c, k,
                            "label key %.80s: expected an optional DNS subdomain prefix and '/', "
                            "then a name of 1-63 bytes: alphanumerics at both ends, '-', '_', "
                            "'.' between",
                            key ? key : "(not text)");
    if (!val || !gs_label_word_ok(val, strlen(val)))
        return gs__yaml_err(c, v,
                            "label %.80s: value %.80s: expected at most 63 bytes, empty or "
                            "alphanumerics at both ends, '-', '_', '.' between",
                            key, val ? val : "(not text)");
    return 0;
}

static int label_pair(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct gs_pod_spec *p = arg;
    const char *key = gs__yaml_str(k);
    int rc = string_value(c, k, v, "label");
    if (!rc)
        rc = label_syntax(c, k, v);
    if (rc || !gs__yaml_str(v)[0]) /* an empty value, valid in Kubernetes, names nobody */
        return rc;
    if (strcmp(key, "user") == 0)
        return gs__scn_name(c, v, "label user", p->user, sizeof(p->user));
    if (strcmp(key, "gpusched.io/workload") == 0)
        return gs__scn_name(c, v, "label gpusched.io/workload", p->workload, sizeof(p->workload));
    if (strcmp(key, "scheduling.x-k8s.io/pod-group") == 0)
        return group_name(c, v, "metadata.labels.scheduling.x-k8s.io/pod-group", p);
    if (strcmp(key, "pod-group.scheduling.sigs.k8s.io") == 0)
        return group_name(c, v, "metadata.labels.pod-group.scheduling.sigs.k8s.io", p);
    return 0;
}

/* spec.overhead: what RuntimeClass admission adds to the pod's cpu and memory requests. */
static int overhead(struct gs__yctx *c, yaml_node_t *n, struct gs_pod_spec *p)
{
    struct res o;
    int rc = read_res(c, n, "spec.overhead", &o);
    for (int q = 0; !rc && q < Q_CPU; q++)
        if (o.at[q])
            rc = gs__yaml_err(c, o.at[q], "spec.overhead: %s is not a pod overhead (cpu, memory)",
                              gs__yaml_str(o.at[q]));
    p->overhead_cpu_milli = rc || o.v[Q_CPU] == GS_UNSET ? 0 : o.v[Q_CPU];
    p->overhead_memory_mib = rc || o.v[Q_MEMORY] == GS_UNSET ? 0 : o.v[Q_MEMORY];
    return rc;
}

/* The fields read before the containers: the run's deadline, preemption, overhead, host network,
 * volumes. */
static int read_run(struct gs__yctx *c, yaml_node_t **f, struct gs_pod_spec *p, int *host_net)
{
    static const char *const policies[] = {"PreemptLowerPriority", "Never"};
    int64_t v;
    int rc = 0;
    if (f[S_DEADLINE] && !gs__yaml_is_null(f[S_DEADLINE])) { /* Kubernetes' range */
        rc = gs__scn_int(c, f[S_DEADLINE], "spec.activeDeadlineSeconds", 1, UINT32_MAX, &v);
        p->deadline_us = rc ? 0 : v * 1000000;
    }
    if (!rc && f[S_PREEMPTION] && !gs__yaml_is_null(f[S_PREEMPTION]) &&
        !(rc = gs__scn_enum(c, f[S_PREEMPTION], "spec.preemptionPolicy", policies, 2,
                            &p->preemption)))
        p->preemption++; /* 1 PreemptLowerPriority, 2 Never */
    if (!rc && f[S_OVERHEAD] && !gs__yaml_is_null(f[S_OVERHEAD]))
        rc = overhead(c, f[S_OVERHEAD], p);
    if (!rc && f[S_HOST_NETWORK] && !gs__yaml_is_null(f[S_HOST_NETWORK]))
        rc = gs__scn_bool(c, f[S_HOST_NETWORK], "spec.hostNetwork", host_net);
    if (!rc && f[S_VOLUMES])
        rc = gs__yaml_each_item(c, f[S_VOLUMES], "spec.volumes", placed_volume, f[S_VOLUMES]);
    return rc;
}

/* One of spec.tolerations (gs_toleration_make() reads it as Kubernetes does). */
static int toleration(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    static const char *const keys[] = {"key", "operator", "value", "effect", "tolerationSeconds"};
    struct gs_pod_spec *p = arg;
    yaml_node_t *f[5] = {NULL};
    char where[48], why[256];
    const char *s[4] = {NULL}, *bad = NULL;
    int64_t secs = GS_UNSET;
    gs__yaml_label(where, sizeof(where), "spec.tolerations[%d]", idx);
    int rc = gs__yaml_each_field(c, n, keys, 5, where, gs__scn_keep, f);
    if (!rc && idx >= GS_SCN_TOLERATIONS)
        return gs__yaml_err(c, n, "more than %d tolerations", GS_SCN_TOLERATIONS);
    for (int i = 0; !rc && i < 4; i++)
        if (f[i] && !gs__yaml_is_null(f[i]) && !(s[i] = gs__yaml_text(f[i]))) {
            char what[64];
            gs__yaml_label(what, sizeof(what), "%s.%s", where, keys[i]);
            rc = gs__yaml_text_error(c, f[i], what);
        }
    if (!rc && f[4] && !gs__yaml_is_null(f[4]))
        rc = gs__scn_int(c, f[4], "tolerationSeconds", INT32_MIN, INT32_MAX, &secs);
    if (!rc && gs_toleration_make(s[0], s[1], s[2], s[3], secs, &p->tolerations[idx], &bad, why,
                                  sizeof(why))) {
        int k = 0;
        while (k < 4 && strcmp(keys[k], bad))
            k++;
        rc = gs__yaml_err(c, f[k] ? f[k] : n, "%s.%s: %s", where, bad, why);
    }
    p->ntolerations = rc ? p->ntolerations : idx + 1;
    return rc;
}

/* An ephemeral container (kubectl debug) runs beside the pod and asks nothing of the node. */
static int ephemeral(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    char where[64];
    (void)arg;
    gs__yaml_label(where, sizeof(where), "spec.ephemeralContainers[%d]", idx);
    if (n->type != YAML_MAPPING_NODE)
        return gs__yaml_type_error(c, n, where, "a mapping");
    return gs__scn_typed(c, gs__kt_ephemeral, n, where);
}

/* The API server refuses ephemeral containers in a pod created (kubectl debug adds them to a
 * running pod through their own subresource): a warning, so that a running pod kube-scheduler
 * passes on is still read, and an error where the pod is one to create. */
static int ephemerals(struct gs__yctx *c, yaml_node_t *list)
{
    int rc = gs__yaml_each_item(c, list, "spec.ephemeralContainers", ephemeral, NULL);
    if (!rc && !gs__yaml_is_null(list) && !gs__yaml_is_empty(list))
        gs__yaml_warn(c, list,
                      "spec.ephemeralContainers: Forbidden: cannot be set on create, as the API "
                      "server says (kubectl debug adds them to a running pod)");
    return rc;
}

/* A string field absent, null or "": Kubernetes defaults each of priorityClassName,
 * schedulerName and nodeName given "" as if it were left out (SetDefaults_PodSpec). */
static bool unset(const yaml_node_t *n)
{
    return !n || gs__yaml_is_null(n) || (gs__yaml_text(n) && !*gs__yaml_text(n));
}

/* Whether sequence @volumes (NULL: none) holds a volume named @name. */
static int has_volume(struct gs__yctx *c, yaml_node_t *volumes, const char *name)
{
    yaml_node_t *v;
    for (yaml_node_item_t *it = volumes && volumes->type == YAML_SEQUENCE_NODE
                                    ? volumes->data.sequence.items.start
                                    : NULL;
         it && it < volumes->data.sequence.items.top; it++) {
        yaml_node_t *vol = gs__yaml_child(c, *it);
        if (vol && !gs__yaml_map_get(c, vol, "name", &v) && v && gs__yaml_str(v) &&
            !strcmp(gs__yaml_str(v), name))
            return 1;
    }
    return 0;
}

/* Each volumeMounts and volumeDevices entry of the containers of spec field @key names a volume
 * of @volumes, as the API server requires ("Not found"). */
static int mounts_known(struct gs__yctx *c, yaml_node_t *spec, const char *key,
                        yaml_node_t *volumes)
{
    static const char *const lists[] = {"volumeMounts", "volumeDevices"};
    yaml_node_t *cs, *l, *name;
    if (gs__yaml_map_get(c, spec, key, &cs) || !cs || cs->type != YAML_SEQUENCE_NODE)
        return 0;
    int i = 0;
    for (yaml_node_item_t *it = cs->data.sequence.items.start; it < cs->data.sequence.items.top;
         it++, i++) {
        yaml_node_t *ctr = gs__yaml_child(c, *it);
        for (int k = 0; ctr && ctr->type == YAML_MAPPING_NODE && k < 2; k++) {
            if (gs__yaml_map_get(c, ctr, lists[k], &l) || !l || l->type != YAML_SEQUENCE_NODE)
                continue;
            int j = 0;
            for (yaml_node_item_t *m = l->data.sequence.items.start; m < l->data.sequence.items.top;
                 m++, j++) {
                yaml_node_t *mount = gs__yaml_child(c, *m);
                if (!mount || gs__yaml_map_get(c, mount, "name", &name) || !name ||
                    !gs__yaml_str(name) || has_volume(c, volumes, gs__yaml_str(name)))
                    continue;
                return gs__yaml_err(c, name,
                                    "spec.%s[%d].%s[%d].name: Not found: \"%.80s\" (no volume of "
                                    "spec.volumes has that name), as the API server refuses it",
                                    key, i, lists[k], j, gs__yaml_str(name));
            }
        }
    }
    return 0;
}

/* dnsPolicy None leaves the pod's DNS to its dnsConfig, which must then be given. */
static int dns_none(struct gs__yctx *c, yaml_node_t *spec)
{
    yaml_node_t *policy, *config;
    if (gs__yaml_map_get(c, spec, "dnsPolicy", &policy) || !policy || !gs__yaml_text(policy) ||
        strcmp(gs__yaml_text(policy), "None") ||
        (!gs__yaml_map_get(c, spec, "dnsConfig", &config) && config && !gs__yaml_is_null(config)))
        return 0;
    return gs__yaml_err(c, policy,
                        "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` "
                        "is None, as the API server says");
}

static int read_spec(struct gs__yctx *c, yaml_node_t *spec, struct gs_pod_spec *p)
{
    yaml_node_t *f[GS__YAML_KEYS_MAX] = {NULL};
    const char *known[GS__YAML_KEYS_MAX];
    int host_net = 0, nk = GS__YAML_NKEYS(spec_keys);
    memcpy(known, spec_keys, sizeof(spec_keys));
    nk += gs__scn_typed_names(gs__kt_pod_spec, known + nk, GS__YAML_KEYS_MAX - nk);
    int rc = gs__yaml_each_field(c, spec, known, nk, "spec", gs__scn_keep, f);
    for (int i = S_WARN_FIRST; !rc && i < S_SILENT_FIRST; i++)
        if (f[i] && !gs__yaml_is_null(f[i]) && !gs__yaml_is_empty(f[i]))
            gs__yaml_warn(c, f[i], "spec.%s is not interpreted by the scenario%s; ignored",
                          spec_keys[i],
                          i == S_GATES    ? ": a gated pod waits until its gates are removed, and "
                                            "nothing here removes them (submit it without them)"
                          : i == S_CLAIMS ? " (Dynamic Resource Allocation): ask GPUs as "
                                            "nvidia.com/gpu"
                                          : "");
    for (int i = S_SILENT_FIRST; !rc && i < nk; i++)
        if (f[i])
            rc = gs__scn_typed_field(c, gs__kt_pod_spec, known[i], f[i], "spec");
    for (int i = S_SILENT_FIRST; !rc && i < nk; i++)
        if (f[i] && !strcmp(known[i], "ephemeralContainers"))
            rc = ephemerals(c, f[i]);
    if (!rc)
        rc = read_run(c, f, p, &host_net);
    if (!rc && !unset(f[S_PRIORITY_CLASS]))
        rc = gs__scn_name(c, f[S_PRIORITY_CLASS], "spec.priorityClassName", p->priority_class,
                          sizeof(p->priority_class));
    if (!rc && f[S_PRIORITY] && !gs__yaml_is_null(f[S_PRIORITY])) {
        int64_t v;
        rc = gs__scn_int(c, f[S_PRIORITY], "spec.priority", INT32_MIN, INT32_MAX, &v);
        p->priority = (int32_t)v;
        p->has_priority = 1;
    }
    if (!rc && !unset(f[S_NODE_NAME]))
        rc = node_name(c, f[S_NODE_NAME], "spec.nodeName", p);
    if (!rc && f[S_NODE_SELECTOR])
        rc = gs__yaml_each_pair(c, f[S_NODE_SELECTOR], "spec.nodeSelector", selector_pair, p);
    if (!rc && f[S_TOLERATIONS])
        rc = gs__yaml_each_item(c, f[S_TOLERATIONS], "spec.tolerations", toleration, p);
    if (!rc && !unset(f[S_SCHEDULER])) {
        rc = gs__scn_name(c, f[S_SCHEDULER], "spec.schedulerName", p->scheduler,
                          sizeof(p->scheduler));
        node_src(c, f[S_SCHEDULER], &p->scheduler_src);
    }
    struct cnames names;
    struct clist init = {p, 1, host_net, &names}, app = {p, 0, host_net, &names};
    if (!rc && f[S_INIT_CONTAINERS] && !gs__yaml_is_null(f[S_INIT_CONTAINERS]))
        rc = gs__yaml_each_item(c, f[S_INIT_CONTAINERS], "spec.initContainers", read_container,
                                &init);
    int ninit = p->ncontainers;
    if (!rc && f[S_CONTAINERS])
        rc = gs__yaml_each_item(c, f[S_CONTAINERS], "spec.containers", read_container, &app);
    if (!rc && p->ncontainers == ninit)
        rc = gs__yaml_err(c, f[S_CONTAINERS] ? f[S_CONTAINERS] : spec,
                          "a pod needs at least one container");
    static const char *const with_mounts[] = {"initContainers", "containers",
                                              "ephemeralContainers"};
    for (int i = 0; !rc && i < 3; i++)
        rc = mounts_known(c, spec, with_mounts[i], f[S_VOLUMES]);
    return rc ? rc : dns_none(c, spec);
}

static void pod_defaults(struct gs_pod_spec *p)
{
    memset(p, 0, sizeof(*p));
    p->duration_us = GS_UNSET;
    p->util_pct = GS_UNSET;
    p->checkpoint_us = GS_UNSET;
    p->placed_node_index = -1;
}

/* Whether a container of @p asks nvidia.com/gpu (cards, slices or time-slice replicas). */
static int asks_cards(const struct gs_pod_spec *p)
{
    for (int i = 0; i < p->ncontainers; i++)
        if (p->containers[i].gpu > 0 || p->containers[i].gpu_shared > 0)
            return 1;
    return 0;
}

/* Read Pod document @root into @p (its names from @m, read here too). */
static int pod_read(struct gs__yctx *c, yaml_node_t *root, struct gs_pod_spec *p,
                    struct gs__scn_meta *m, yaml_node_t **spec)
{
    yaml_node_t *f[GS__YAML_NKEYS(pod_keys)] = {NULL};
    struct annot an = {p, 0, 0, NULL};
    pod_defaults(p);
    int rc =
        gs__yaml_each_field(c, root, pod_keys, GS__YAML_NKEYS(pod_keys), "Pod", gs__scn_keep, f);
    if (!rc)
        rc = gs__scn_meta(c, root, f[P_META], true, sizeof(p->name), m);
    if (!rc && m->labels)
        rc = gs__yaml_each_pair(c, m->labels, "metadata.labels", label_pair, p);
    if (!rc && m->annotations)
        rc = gs__yaml_each_pair(c, m->annotations, "metadata.annotations", annot_pair, &an);
    if (!rc && !f[P_SPEC])
        rc = gs__yaml_err(c, root, "Pod %s/%s has no spec", m->ns_s, m->name_s);
    if (!rc)
        rc = read_spec(c, f[P_SPEC], p);
    if (!rc && an.vgpu_at && !asks_cards(p))
        rc = gs__yaml_err(c, an.vgpu_at,
                          "annotation gpusched.io/vgpu-class needs nvidia.com/gpu, the number of "
                          "slices: add nvidia.com/gpu: 1 to the container (kubelet hands a "
                          "container its card only through nvidia.com/gpu's device plugin)");
    if (rc)
        return rc;
    memcpy(p->ns, m->ns_s, sizeof(p->ns));
    memcpy(p->name, m->name_s, sizeof(p->name));
    *spec = f[P_SPEC];
    return 0;
}

/* The first warning reported while a pod is read, caught (the callback it replaced kept): what a
 * pod asks that would be ignored is refused instead, since a pod run without it would mislead. */
struct caught {
    char msg[GS_DIAG_MSG_MAX];
    void (*warn)(void *, const char *);
    void *warn_ud;
    const struct gs__yctx *c;
};

static void catch_first(void *ud, const char *msg)
{
    struct caught *k = ud;
    if (k->c->noting && k->warn) /* gs__yaml_note(): passed on */
        k->warn(k->warn_ud, msg);
    else if (!k->c->noting && !k->msg[0])
        snprintf(k->msg, sizeof(k->msg), "%s", msg);
}

static void catch_begin(struct gs__yctx *c, struct caught *k)
{
    k->msg[0] = '\0';
    k->c = c;
    c->warn_at = NULL;
    if (c->d) {
        k->warn = c->d->warn;
        k->warn_ud = c->d->warn_ud;
        c->d->warn = catch_first;
        c->d->warn_ud = k;
    }
}

/* catch_end() - the callback back; the caught warning, if any, as the error at its place. */
static int catch_end(struct gs__yctx *c, struct caught *k, int rc)
{
    if (c->d) {
        c->d->warn = k->warn;
        c->d->warn_ud = k->warn_ud;
    }
    /* a field misspelt ("contaners") is the cause of what the read stumbled on after it ("no
     * container"), so it is the one named */
    if ((rc && rc != -EINVAL) || !k->msg[0])
        return rc;
    char *cut = strstr(k->msg, " by the scenario");
    if (cut)
        memmove(cut, cut + 16, strlen(cut + 16) + 1);
    c->err_at = c->warn_at;
    /* what a lenient read takes as the API server's own rule (a port out of range) is said as
     * it is; only what it would drop is said to be refused rather than ignored */
    if ((cut = strstr(k->msg, "; ignored")) == NULL)
        return gs_diag_error(c->d, "%s", k->msg);
    *cut = '\0';
    return gs_diag_error(c->d, "%s: refused rather than ignored", k->msg);
}

/*
 * The fields admission may name (gs_tenancy_pod's field), whose places a loaded pod keeps so that
 * what a run would refuse is said at the field, not at the pod: per container (init ones counted
 * first, as in gs_pod_spec), its resources, its limits and requests, and each resource Q_* of each
 * (the MIG one as res_names spells it); then the pod's own, as admission spells them.
 */
enum { F_RES, F_LIMITS, F_REQUESTS, F_LIST0, F_POD0 = F_LIST0 + 2 * Q_COUNT };
static const char *const pod_fields[] = {
    "metadata.annotations.gpusched.io/gpu-model",
    "metadata.annotations.gpusched.io/same-card",
    "metadata.annotations.gpusched.io/vgpu-class",
    "metadata.annotations.gpusched.io/profile",
    "metadata.annotations.gpusched.io/topology",
    "metadata.annotations.scheduling.volcano.sh/queue-name",
    "metadata.annotations.scheduling.k8s.io/group-name",
    "metadata.annotations.scheduling.volcano.sh/group-name",
    "metadata.labels.scheduling.x-k8s.io/pod-group",
    "metadata.labels.pod-group.scheduling.sigs.k8s.io",
    "spec.nodeSelector.nvidia.com/gpu.product",
    "spec.nodeSelector.kubernetes.io/hostname",
    "spec.nodeSelector.topology.kubernetes.io/zone",
    "spec.nodeName",
    "spec.priorityClassName",
    "spec.priority",
    "spec.preemptionPolicy",
    "spec.schedulerName",
};
_Static_assert(F_POD0 + GS__YAML_NKEYS(pod_fields) <= UINT8_MAX, "a field id fits gs__pod_at");
static const char res_path[] = "spec.containers[].resources";

/* The value of @key in mapping @map, NULL when absent: a read, not a check (the pod is read). */
static yaml_node_t *value_of(struct gs__yctx *c, const yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        const char *s = gs__yaml_str(gs__yaml_child(c, pr->key));
        if (s && strcmp(s, key) == 0)
            return gs__yaml_child(c, pr->value);
    }
    return NULL;
}

/* Field @f of container @at (-1 the pod's) is at @n: one entry more for the pod being read. */
static int field_at(struct gs__yctx *c, struct gs_scn_priv *pv, struct gs_pod_spec *p, int f,
                    int at, const yaml_node_t *n)
{
    size_t line, col;
    if (!n)
        return 0;
    gs__yaml_pos(c, n, &line, &col);
    if (line > UINT32_MAX || col > UINT16_MAX) /* the pod's own place is named instead */
        return 0;
    struct gs__pod_at *a = gs_grow(pv->pod_at, &pv->cap_pod_at, pv->npod_at + 1, sizeof(*a), 1024);
    if (!a)
        return -ENOMEM;
    pv->pod_at = a;
    a[pv->npod_at++] = (struct gs__pod_at){(uint32_t)line, (uint16_t)col, (uint8_t)f, (int8_t)at};
    p->nfields++;
    return 0;
}

/* The places of container @n's resources (@at its index in @p). */
static int container_at(struct gs__yctx *c, struct gs_scn_priv *pv, struct gs_pod_spec *p, int at,
                        const yaml_node_t *n)
{
    const yaml_node_t *res = value_of(c, n, "resources");
    int rc = field_at(c, pv, p, F_RES, at, res && !gs__yaml_is_null(res) ? res : n);
    for (int l = 0; !rc && l < 2; l++) {
        const yaml_node_t *list = value_of(c, res, l ? "requests" : "limits");
        rc = field_at(c, pv, p, F_LIMITS + l, at, list);
        for (yaml_node_pair_t *pr =
                 list && list->type == YAML_MAPPING_NODE ? list->data.mapping.pairs.start : NULL;
             !rc && pr && pr < list->data.mapping.pairs.top; pr++) {
            yaml_node_t *k = gs__yaml_child(c, pr->key);
            int q = res_kind(gs__yaml_str(k) ? gs__yaml_str(k) : "");
            if (q >= 0) /* a MIG resource's name is its ask */
                rc = field_at(c, pv, p, F_LIST0 + l * Q_COUNT + q, at,
                              q == Q_MIG ? k : gs__yaml_child(c, pr->value));
        }
    }
    return rc;
}

/* pod_at() - the places of pod @p's fields admission may name, @root its document (read). */
static int pod_at(struct gs__yctx *c, struct gs_scenario *s, const yaml_node_t *root,
                  struct gs_pod_spec *p)
{
    struct gs_scn_priv *pv = gs__scn_priv(s);
    if (!pv)
        return -ENOMEM;
    if (pv->npod_at > UINT32_MAX - GS__YAML_NKEYS(pod_fields) - 64 * GS_SCN_CONTAINERS)
        return 0; /* past what an index holds: the pods that follow are named at their start */
    p->fields_first = (uint32_t)pv->npod_at;
    p->nfields = 0;
    const yaml_node_t *meta = value_of(c, root, "metadata"), *spec = value_of(c, root, "spec");
    const yaml_node_t *maps[] = {value_of(c, meta, "annotations"), value_of(c, meta, "labels"),
                                 value_of(c, spec, "nodeSelector"), spec};
    static const char *const prefix[] = {"metadata.annotations.", "metadata.labels.",
                                         "spec.nodeSelector.", "spec."};
    int rc = 0, at = 0;
    for (int i = 0; !rc && i < GS__YAML_NKEYS(pod_fields); i++)
        for (int m = 0; m < 4; m++)
            if (!strncmp(pod_fields[i], prefix[m], strlen(prefix[m]))) {
                rc = field_at(c, pv, p, F_POD0 + i, -1,
                              value_of(c, maps[m], pod_fields[i] + strlen(prefix[m])));
                break;
            }
    for (int l = 0; !rc && l < 2; l++) { /* init containers first, as read_spec() reads them */
        const yaml_node_t *seq = value_of(c, spec, l ? "containers" : "initContainers");
        for (yaml_node_item_t *it =
                 seq && seq->type == YAML_SEQUENCE_NODE ? seq->data.sequence.items.start : NULL;
             !rc && it && it < seq->data.sequence.items.top && at < p->ncontainers; it++)
            rc = container_at(c, pv, p, at++, gs__yaml_child(c, *it));
    }
    return rc;
}

/* Field @f's id among F_*, or -1: a container's field as admission writes it (res_path...). */
static int field_id(const char *field)
{
    static const char *const lists[] = {".limits", ".requests"};
    size_t n = strlen(res_path);
    for (int i = 0; i < GS__YAML_NKEYS(pod_fields); i++)
        if (strcmp(field, pod_fields[i]) == 0)
            return F_POD0 + i;
    if (strncmp(field, res_path, n) != 0)
        return -1;
    if (!field[n])
        return F_RES;
    for (int l = 0; l < 2; l++) {
        size_t k = strlen(lists[l]);
        if (strncmp(field + n, lists[l], k) != 0)
            continue;
        if (!field[n + k])
            return F_LIMITS + l;
        for (int q = 0; field[n + k] == '.' && q < Q_COUNT; q++)
            if (strcmp(field + n + k + 1, res_names[q]) == 0)
                return F_LIST0 + l * Q_COUNT + q;
    }
    return -1;
}

/* The one entry of field @f among @e (@n of them) of container @at (-1: whichever writes it, when
 * one does); NULL when none does or, @at -1, several do. */
static const struct gs__pod_at *one_at(const struct gs__pod_at *e, size_t n, int f, int at)
{
    const struct gs__pod_at *found = NULL;
    for (size_t i = 0; i < n; i++)
        if (e[i].field == f && (at < 0 || e[i].at == at)) {
            if (found)
                return NULL;
            found = &e[i];
        }
    return found;
}

int gs_scenario_pod_field(const struct gs_scenario *s, const struct gs_pod_spec *sp,
                          const char *field, int at, struct gs_scn_src *out)
{
    const struct gs_scn_priv *pv = s ? s->priv : NULL;
    int f = field ? field_id(field) : -1;
    if (!pv || f < 0 || !sp->nfields || (size_t)sp->fields_first + sp->nfields > pv->npod_at)
        return 0;
    const struct gs__pod_at *e = pv->pod_at + sp->fields_first, *hit = NULL;
    size_t n = sp->nfields;
    if (f < F_POD0 && at < 0 && sp->ncontainers == 1)
        at = 0;
    if (f == F_LIMITS) /* a MIG instance is all a container's limits ask of a card */
        hit = one_at(e, n, F_LIST0 + Q_MIG, at);
    if (!hit)
        hit = one_at(e, n, f, f >= F_POD0 ? -1 : at);
    if (!hit && f >= F_LIST0 && f < F_POD0) /* the other list's, which stands for it */
        hit = one_at(e, n, F_LIST0 + ((f - F_LIST0) + Q_COUNT) % (2 * Q_COUNT), at);
    if (!hit && f != F_RES && f < F_POD0 && at >= 0)
        hit = one_at(e, n, F_RES, at);
    if (!hit)
        return 0;
    memcpy(out->file, sp->src.file, sizeof(out->file));
    out->line = hit->line;
    out->col = hit->col;
    return 1;
}

int gs__scn_pod(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root)
{
    struct gs__scn_meta m;
    struct gs_pod_spec p;
    struct caught k;
    yaml_node_t *spec = NULL;
    catch_begin(c, &k);
    int rc = catch_end(c, &k, pod_read(c, root, &p, &m, &spec));
    if (rc)
        return rc;
    size_t kept = L->s->priv ? L->s->priv->npod_at : 0;
    rc = pod_at(c, L->s, root, &p);
    if (!rc)
        rc = gs__scn_commit(c, L, root, m.name, GS__K_POD, &p);
    if (rc && L->s->priv) /* the pod is not kept, nor its places */
        L->s->priv->npod_at = kept;
    return rc;
}

struct one_pod {
    struct gs_pod_spec *out;
    char *field;
    size_t fsize;
    int seen, strict;
};

static int parse_one(struct gs__yctx *c, yaml_node_t *root, void *arg)
{
    struct one_pod *o = arg;
    struct gs__scn_meta m;
    struct caught k;
    yaml_node_t *spec = NULL;
    if (o->seen++)
        return gs__yaml_err(c, root, "one Pod object, not several documents");
    if (o->strict)
        catch_begin(c, &k);
    int rc = pod_read(c, root, o->out, &m, &spec);
    if (o->strict)
        rc = catch_end(c, &k, rc);
    if (rc && o->field)
        gs__yaml_path(c, c->err_at, o->field, o->fsize);
    return rc;
}

/* What gs_pod_parse() and gs_pod_parse_json() share: the start and, around @rc, the end. */
static struct gs__yctx one_begin(const char *origin, struct gs_diag *d, char *field, size_t fsize)
{
    if (field && fsize)
        field[0] = '\0';
    return (struct gs__yctx){.path = origin, .d = d, .lenient = true};
}

static int one_end(const char *origin, const struct one_pod *o, int rc, struct gs_diag *d)
{
    if (!rc && !o->seen)
        rc = gs_diag_error(d, "%s: no Pod object", origin);
    if (!rc && !o->strict)
        o->out->scheduler[0] = '\0';
    return rc;
}

int gs_pod_parse(const char *origin, const char *text, size_t len, int strict,
                 struct gs_pod_spec *out, char *field, size_t fsize, struct gs_diag *d)
{
    struct gs__yctx proto = one_begin(origin, d, field, fsize);
    struct one_pod o = {.out = out, .field = field, .fsize = fsize, .strict = strict};
    /* One pass over the bytes: the tree is built from the parser's events, depth-bounded. */
    int rc = gs__yaml_stream_documents(&proto, (const unsigned char *)text, len, GS_SCN_MAX_DEPTH,
                                       GS_SCN_DOC_NODES_MAX, parse_one, &o);
    return one_end(origin, &o, rc, d);
}

int gs_pod_parse_json(const char *origin, const struct json_t *pod, int strict,
                      struct gs_pod_spec *out, char *field, size_t fsize, struct gs_diag *d)
{
    struct gs__yctx proto = one_begin(origin, d, field, fsize);
    struct one_pod o = {.out = out, .field = field, .fsize = fsize, .strict = strict};
    /* the tree the text's parse would build, made from the value: no text written or scanned */
    int rc =
        gs__yaml_json_document(&proto, pod, GS_SCN_MAX_DEPTH, GS_SCN_DOC_NODES_MAX, parse_one, &o);
    return one_end(origin, &o, rc, d);
}
