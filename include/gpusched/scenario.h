/*
 * gpusched — a scenario: the cluster, the tenancy policy and the workload a user hands the
 * simulator (or the daemon, as its configuration), loaded from Kubernetes-style YAML.
 *
 * A scenario is a plain value tree: every record below is data, filled by the loader
 * (gs_scenario_load()) or by a caller building one in code, and owned by the struct gs_scenario
 * that holds it (gs_scenario_free() releases all of it). Records refer to each other by name, as
 * manifests do; gs_scenario_resolve() checks the references and fills the derived indexes.
 *
 * Units: milli-GPU (1000 = one card), milli-CPU, MiB, microseconds, percent where Kubernetes users
 * write percent (nvidia.com/gpucores), milli-ratios for overcommit (1300 = 1.3).
 * Invariants: names are NUL-terminated and shorter than GS_SCN_NAME_MAX; counts never exceed the
 * array sizes; an unset optional quantity is GS_UNSET (-1).
 * Thread safety: a scenario is not shared between threads while it is written.
 */
#ifndef GPUSCHED_SCENARIO_H
#define GPUSCHED_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "gpusched/policy.h"

struct gs_diag;
struct gs_scenario;
struct gs_scn_priv;

#define GS_SCN_PODS_MAX 2000000

/* A node failing at @at_us (NotReady: its pods and their gangs wait again), or with @gpu >= 0
 * one card of it (unhealthy: it takes no new pod; its pods and their gangs wait again when Xid
 * @xid is one after which the work is lost, gs_xid_loses_work()); when @restore_us is not
 * GS_UNSET, ready or healthy again then (microseconds from the start). A card held (cardHolds:
 * @xid GS_XID_HELD) takes no new pod from @at_us to @restore_us, its pods running on: a pod
 * evicted through Kubernetes still stops there. */
struct gs_node_failure {
    char node[GS_NAME_MAX];
    int32_t index;       /* into policy.nodes, once gs_scenario_resolve() found it */
    int32_t gpu;         /* cardFailures: the card's index on its node; -1 for nodeFailures */
    int32_t xid;         /* cardFailures: the Xid NVIDIA's driver reported, 0 none given */
#define GS_XID_HELD (-1) /* cardHolds: no fault, the card is held; no work lost */
    int64_t at_us, restore_us;
    struct gs_scn_src src;
};

/* cardModes.cards[]: a card's mode history, as a snapshot gives it: card @gpu of @node last took
 * @mode (enum gs_card_mode, not free) at @since_us, and keeps it when empty. */
struct gs_card_history {
    char node[GS_NAME_MAX];
    int32_t index; /* into policy.nodes, once gs_scenario_resolve() found it */
    int32_t gpu, mode;
    int64_t since_us;
    struct gs_scn_src src;
};

/* The Simulation document (sim.gpusched.io/v1alpha1): how to run the scenario. */
struct gs_sim_spec {
    int defined;
    char compare[4][16]; /* ways to compare: "exclusive", "sharing", "full" */
    int ncompare;
    int64_t horizon_us;        /* GS_UNSET = until the last pod ends */
    int64_t now_us;            /* now: a snapshot's clock (GET /v1/snapshot), where `simulate
                                  --from-now` starts; GS_UNSET = none */
    struct gs_scn_src now_src; /* where now is, when given */
    int from_now; /* set by the caller (`simulate --from-now`): start at now_us with the
                     pods that arrived by then submitted, those placed (gs_pod_spec's
                     placed_*) restored where they run, instead of from 0 */
    /* cardModes: {convert: BOOL, minHold: DURATION}: whether an empty card may change mode to
     * follow demand, and how long it keeps a mode first (gs_fleet_set_modes()). */
    int modes_defined;             /* cardModes given: reports then count conversions */
    int convert;                   /* default 1 */
    int64_t min_hold_us;           /* default 0 */
    struct gs_card_history *cards; /* cardModes.cards, in file order (owned; read with
                                      --from-now only) */
    size_t ncards;
    struct gs_node_failure *failures; /* nodeFailures, then cardFailures, each in file order
                                         (owned; as many as the file gives: a snapshot of a
                                         large cluster may hold thousands of unhealthy cards) */
    size_t nfailures;
    struct gs_scn_src src; /* where the document is, when defined */
};

struct gs_scenario {
    struct gs_policy policy;  /* the cluster and the policy documents */
    struct gs_pod_spec *pods; /* the workload */
    size_t npods;
    struct gs_sim_spec sim;
    /* The first DaemonConfig or RateCard document (gpuschedd's config and rate card: accepted,
     * not interpreted here), "" none; and where: gpuschedd refuses it in a policy file. */
    char foreign_kind[32];
    struct gs_scn_src foreign_src;
    struct gs_scn_priv *priv; /* the loader's array capacities and name indexes; NULL at first */
};

/*
 * gs_scenario_new() - an empty scenario. Return: 0 and *@out; -ENOMEM.
 * gs_scenario_free() - free @s and everything it holds; NULL allowed.
 */
int gs_scenario_new(struct gs_scenario **out);
void gs_scenario_free(struct gs_scenario *s);

/*
 * gs_scenario_load() - add the documents of YAML file @path ("-" = standard input) to @s.
 * Kinds understood: Cluster, Simulation, Pod, GPUQuota, ConfigMap (topology-gpu-policy's
 * policy.yaml, kubeflow-gpu-profiles' profiles.yaml; other ConfigMaps are reported and kept out),
 * Queue, PodGroup, PriorityClass, ResourceQuota, LimitRange, VirtualGPUClass,
 * KubeSchedulerConfiguration (noted; load it with gs_config_load_kubesched()), and the kinds later
 * modules own (GpuClusterPolicy, PrometheusRule, ServiceMonitor: accepted, reported as not
 * interpreted here).
 * A List (`kubectl get pods -o yaml`) is read item by item. Unknown fields, kinds and ConfigMaps
 * are warned about with file:line:col; wrong types and bad values are errors.
 * Values: Kubernetes quantities are parsed exactly (no floats): cpu to milli-CPU and memory to
 * MiB rounded up as Kubernetes rounds, GPUs (nvidia.com/gpu, quotas, ratios) exactly or refused;
 * durations ("90s", "1.5h", "1h30m", "2d", also "ms", "us") exactly in microseconds. Extended
 * resources must have requests == limits when both are given; cpu and memory take the request,
 * else the limit. nvidia.com/gpu.shared counts time-slice replicas (node templates offer them with
 * timeSlicing: {replicas: N}); a container gives it or nvidia.com/gpu, not both. In a
 * ResourceQuota `requests.nvidia.com/gpu` and `nvidia.com/gpu` are one quota (both given and
 * different: the tighter, with a warning); `limits.nvidia.com/gpu` is ignored with a warning, as
 * Kubernetes does not enforce it.
 * Limits: a file of at most 1 GiB; a document of at most 8 Mi YAML nodes, nested at most 64
 * deep; the counts of scenario.h (GS_SCN_PODS_MAX, GS_SCN_RECORDS_MAX, GS_NODES_MAX, ...).
 * @d: error text, and each warning through @d->warn. May be NULL.
 * Return: 0; -EINVAL with @d naming file:line:column; -ENOENT; -EIO; -E2BIG past a limit;
 * -ENOMEM. On error, @s keeps what earlier calls added, and may hold part of @path's documents.
 * Complexity: O(file size) expected; the file is parsed once, a document at a time.
 */
int gs_scenario_load(struct gs_scenario *s, const char *path, struct gs_diag *d);

/*
 * gs_scenario_pod_field() - where pod @sp of @s, as gs_scenario_load() read it, writes @field, a
 * Pod field as admission names it (gs_tenancy_pod's field: "spec.priorityClassName",
 * "spec.containers[].resources.limits.nvidia.com/gpu"), of container @at (an index in its
 * containers, init ones first; -1: the one container that writes it, or the pod's only one).
 * *@out is the value's place (a MIG resource's: its key, the profile's name; a container's limits:
 * its MIG resource, when it asks one). A resource not written there is looked for in the other
 * list (an extended resource's request is its limit; a request left out is the limit), then the
 * container's resources (else the container) stand for it.
 * Return: 1 and *@out; 0 when no one place writes it (then the pod's own src is the place to name).
 * Complexity: O(the pod's fields kept) - a dozen for most pods.
 */
int gs_scenario_pod_field(const struct gs_scenario *s, const struct gs_pod_spec *sp,
                          const char *field, int at, struct gs_scn_src *out);

/*
 * gs_scenario_resolve() - check cross-references after every file is loaded: namespaces to
 * tenants (a GPUQuota's namespace and tenant; otherwise a namespace is its own tenant), GPUQuota
 * model keys to catalog models, pods' groups, profiles, priority classes and queues.
 * Tenants: one that names no namespace owns the namespace of its own name unless another tenant
 * claims it; a namespace of a pod or PodGroup that no tenant owns becomes a tenant (appended to
 * @s->tenants). Nodes whose template was defined later get its index. Warnings (through @d):
 * a GPUQuota tenant missing from the topology policy's tenants: map or the other way round; a
 * PodGroup, GPUQuota or ResourceQuota scope naming an undefined Queue or PriorityClass; a
 * LimitRange whose per-container GPU cap is below its tenant's maxGPUsPerPod. Calling it again
 * changes nothing more (warnings are given again).
 * Return: 0; -EINVAL with @d naming the record (file:line:col) and the missing name (a namespace
 * of two tenants, an undefined node template, a pod's undefined PodGroup, step profile,
 * VirtualGPUClass, PriorityClass other than system-*-critical, or Queue other than "default"; a
 * pod that names a VirtualGPUClass and also gives nvidia.com/gpumem or nvidia.com/gpucores; a
 * pod whose spec.schedulerName names another scheduler, gs_policy_scheduler_takes());
 * -E2BIG; -ENOMEM.
 * Complexity: O(records) expected.
 */
int gs_scenario_resolve(struct gs_scenario *s, struct gs_diag *d);

/*
 * gs_pod_parse() - one Pod object, YAML or JSON text @text of @len bytes, read as
 * gs_scenario_load() reads a Pod document (the one Pod parser of gpusched: gpuschedd's API and
 * extender take pods through it too), into *@out. Besides the loader's fields, the annotation
 * gpusched.io/gpu-model (catalog models joined by '|') narrows the GPU models a pod may use.
 * @origin names the text in messages ("body"); when @strict (a pod submitted to gpuschedd's API,
 * as a scenario's pod), the first warning is the error (what would be ignored is refused: an
 * unknown field, resource or annotation of ours); else (a pod kube-scheduler hands the extender,
 * or one accepted before) warnings go to @d->warn and spec.schedulerName is left out, the pod
 * being this scheduler's already. @field (may be NULL,
 * @fsize bytes): on error, the JSON path of the field at fault ("spec.containers[0].resources.
 * limits.cpu"), "" when the text as a whole is.
 * Return: 0; -EINVAL with @d ("ORIGIN:LINE:COL: ...") and @field; -E2BIG (more containers than
 * GS_SCN_CONTAINERS); -ENOMEM.
 */
int gs_pod_parse(const char *origin, const char *text, size_t len, int strict,
                 struct gs_pod_spec *out, char *field, size_t fsize, struct gs_diag *d);

struct json_t; /* jansson's value */

/*
 * gs_pod_parse_json() - gs_pod_parse() of a Pod object already read as JSON (@pod, borrowed; a
 * jansson value, as gpuschedd reads a request body): the same reading, fields, refusals and
 * @field as gs_pod_parse() of its compact JSON text, without that text being written and parsed
 * again. Its nodes have no position: messages name line 1, column 1 of @origin.
 * Return: as gs_pod_parse().
 */
int gs_pod_parse_json(const char *origin, const struct json_t *pod, int strict,
                      struct gs_pod_spec *out, char *field, size_t fsize, struct gs_diag *d);

/*
 * gs_podgroup_min_resources_json() - a Volcano PodGroup's spec.minResources, @v (borrowed: the
 * JSON value gpuschedd read), into @g's min_gpu_milli, min_cpu_milli, min_memory_mib and
 * min_pods as a scenario's PodGroup reads it: an object of Kubernetes quantities, the resource
 * names a Queue's capability takes (nvidia.com/gpu, cpu, memory, pods: a pod count, as Volcano
 * counts each pod as pods: 1; ephemeral-storage bounds nothing placed), any other refused. @field
 * (@fsize bytes, >= 1): on error, the key at fault below spec.minResources ("cpu"), "" for the
 * value as a whole. Return: 0; -EINVAL with @d ("body:1:1: ...") and @field; -ENOMEM.
 */
int gs_podgroup_min_resources_json(const struct json_t *v, struct gs_podgroup_spec *g, char *field,
                                   size_t fsize, struct gs_diag *d);

/*
 * gs_quantity_parse() - Kubernetes quantity @s exactly as Kubernetes reads one ("500m", "2",
 * "1.5", "64Gi", "2e3", "20k"; no floating point) times 10^@e10 x 2^@e2, a whole number: @round
 * 1 rounds a remainder up (as Kubernetes rounds a request to milli-cores or MiB), -1 down (a
 * capacity: what can be relied on), 0 makes it -EINVAL. Milli-cores are (s, 3, 0), MiB (s, 0,
 * -20). The one quantity parser of gpusched.
 * Return: 0 and *@out; -EINVAL (not a quantity, negative, not whole); -ERANGE (past 2^63).
 */
int gs_quantity_parse(const char *s, int e10, int e2, int round, int64_t *out);

/*
 * gs_duration_parse() - a duration as a scenario writes one (Go's units us, ms, s, m, h, and d,
 * combined: "90s", "1.5h", "1h30m", "2d"; "0") in microseconds, at most 10 years. @why (may be
 * NULL): on error, what is wrong, to follow the text in a message.
 * Return: 0 and *@out; -EINVAL (not a duration, negative, not whole, over 10 years).
 */
int gs_duration_parse(const char *s, int64_t *out, const char **why);

/*
 * gs_duration_format() - @us microseconds (>= 0) as gs_duration_parse() reads them back, largest
 * units first and none that is 0 ("8h", "1h30m", "2d", "1500ms"; "0" for 0) into @buf (@size
 * bytes; 48 always hold one). Return: @buf.
 */
char *gs_duration_format(int64_t us, char *buf, size_t size);

/*
 * gs_scenario_tenant_of() - index of the tenant namespace @ns belongs to, or -ENOENT.
 * O(1) expected after gs_scenario_resolve(); O(tenants) when tenants were added since.
 */
int gs_scenario_tenant_of(const struct gs_scenario *s, const char *ns);

#endif
