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

#include "gpusched/cluster.h"
#include "gpusched/migpolicy.h"

struct gs_diag;
struct gs_scenario;
struct gs_scn_priv;

#define GS_SCN_NAME_MAX      64 /* names (Kubernetes allows 253; longer ones are refused) */
#define GS_UNSET             (-1)
#define GS_SCN_QUOTA_MODELS  16 /* GPU models per GPUQuota */
#define GS_SCN_NAMESPACES    16 /* namespaces mapped to one tenant */
#define GS_SCN_CONTAINERS    8  /* containers per pod */
#define GS_SCN_SCOPE_CLASSES 8  /* priority classes in a ResourceQuota scope */
#define GS_SCN_PODS_MAX      2000000
#define GS_SCN_TIME_MAX_US   (87600LL * 3600 * 1000000) /* arrival, duration, horizon: 10 years */
#define GS_SCN_RECORDS_MAX   100000                     /* of each policy kind */

/* Where a record came from, for messages: "file:line:col". */
struct gs_scn_src {
    char file[128];
    uint32_t line, col;
};

/* The four topology tiers of the topology-gpu-policy (seed 000 §1.1, §3.1), broadest last. */
enum gs_tier { GS_TIER_NONE = 0, GS_TIER_NVLINK, GS_TIER_PCIE, GS_TIER_NODE, GS_TIER_AZ };
enum gs_strategy { GS_STRATEGY_COLOCATE = 0, GS_STRATEGY_PREFER_COLOCATE, GS_STRATEGY_SPREAD };
enum gs_isolation { GS_ISOLATION_EXCLUSIVE = 0, GS_ISOLATION_SOFT, GS_ISOLATION_HARD };

/* gs_tier_name() - "nvlink", "pcie", "node", "az", or "none". gs_tier_find(): index or -ENOENT. */
const char *gs_tier_name(enum gs_tier t);
int gs_tier_find(const char *name);

/* One tier of the policy's `scheduling:` map. */
struct gs_tier_spec {
    int defined;                 /* 1 when the policy names this tier */
    enum gs_strategy strategy;   /* colocate | prefer-colocate | spread */
    int sharing;                 /* cards may be shared by several pods */
    int32_t overcommit_milli;    /* compute overcommit, 1000 = none; never applies to memory */
    enum gs_isolation isolation; /* exclusive | soft | hard (a node never shared across tenants) */
    int32_t max_skew;            /* GS_UNSET when not given */
    int timeslice; /* timeSlicing: true: its pods' nvidia.com/gpu (whole cards, no gpumem or
                      gpucores) are time-slice replicas, as on a node whose device plugin
                      shares cards by time without renaming them */
    struct gs_scn_src src;
};

/* A GPUQuota entry for one GPU model (the quota's key as written, e.g. "a100-80gb"). */
struct gs_model_quota {
    char key[GS_SCN_NAME_MAX];
    int model;               /* catalog index the key resolves to, GS_UNSET before resolve */
    int64_t total_milli;     /* cap of dedicated + shared use */
    int64_t dedicated_milli; /* whole cards guaranteed to the tenant */
    int64_t shared_milli;    /* GPU-equivalents of fractional use */
};

/* A tenant: the merge of its GPUQuota and its entry in the topology policy's `tenants:` map. */
struct gs_tenant_spec {
    char name[GS_SCN_NAME_MAX];
    char namespaces[GS_SCN_NAMESPACES][GS_SCN_NAME_MAX]; /* namespaces that belong to it */
    int nnamespaces;
    enum gs_tier tier;                    /* required tier of its pods, GS_TIER_NONE = none */
    int32_t priority;                     /* policy.yaml `priority`, GS_UNSET when not given */
    int64_t gpu_count_milli;              /* policy.yaml `gpuCount`, GS_UNSET when not given */
    char priority_class[GS_SCN_NAME_MAX]; /* GPUQuota spec.priorityClass, "" when not given */
    struct gs_model_quota quotas[GS_SCN_QUOTA_MODELS];
    int nquotas;
    int32_t max_gpus_per_pod;                             /* GS_UNSET = no limit */
    int32_t max_pods_per_user;                            /* GS_UNSET = no limit */
    int topology_awareness, gang_scheduling, bin_packing; /* GPUQuota schedulingPolicy */
    int has_quota;                                        /* a GPUQuota names it */
    int in_policy; /* the topology policy's `tenants:` map names it */
    struct gs_scn_src src;
};

/*
 * A step profile of the kubeflow-gpu-profiles ConfigMap (seed 004 §1.2), or one tenant's
 * override of it (its profiles.yaml `tenantOverrides: {TENANT: {PROFILE: {fields}}}`, seed 004
 * §2.2's tenant_overrides): an override has @tenant set and changes only the fields in @set.
 */
struct gs_step_profile {
    char name[GS_SCN_NAME_MAX];
    char tenant[GS_SCN_NAME_MAX]; /* "" for the profile itself, else the tenant it overrides for */
    unsigned set;                 /* bits (1 << GS_PROFILE_*) of the fields given */
    int gpu_share;                /* may share a card */
    int64_t max_memory_mib;       /* GPU memory cap per card, GS_UNSET when not given */
    int32_t overcommit_milli;     /* compute overcommit when shared */
    int32_t priority;
    int preemptible;
    struct gs_scn_src src;
};

enum {
    GS_PROFILE_SHARE = 0,
    GS_PROFILE_MAX_MEMORY,
    GS_PROFILE_OVERCOMMIT,
    GS_PROFILE_PRIORITY,
    GS_PROFILE_PREEMPTIBLE
};

/*
 * gs_step_profile_for() - the step profile @name as tenant @tenant gets it: the profile with
 * that tenant's override applied. Return: 0 and *@out; -ENOENT when no profile has that name.
 * Complexity: O(profiles).
 */
int gs_step_profile_for(const struct gs_scenario *s, const char *name, const char *tenant,
                        struct gs_step_profile *out);

/* A Volcano Queue (scheduling.volcano.sh/v1beta1). */
struct gs_queue_spec {
    char name[GS_SCN_NAME_MAX];
    int32_t weight;           /* >= 1; Volcano's default is 1 */
    int64_t cap_gpu_milli;    /* capability nvidia.com/gpu, GS_UNSET = none */
    int64_t cap_cpu_milli;    /* capability cpu, GS_UNSET = none */
    int64_t cap_memory_mib;   /* capability memory, GS_UNSET = none */
    int reclaimable;          /* default true, as in Volcano */
    int32_t overcommit_milli; /* overcommitRatio of nvidia.com/gpu, 1000 when not given */
    struct gs_scn_src src;
};

/* A Volcano PodGroup: a gang. */
struct gs_podgroup_spec {
    char ns[GS_SCN_NAME_MAX], name[GS_SCN_NAME_MAX];
    int32_t min_member;                   /* >= 1 */
    char queue[GS_SCN_NAME_MAX];          /* "" = the default queue */
    char priority_class[GS_SCN_NAME_MAX]; /* "" = none */
    struct gs_scn_src src;
};

/*
 * A VirtualGPUClass (seed 000 §2.3): a slice of one card that pods ask for by name (annotation
 * gpusched.io/vgpu-class). Memory is charged on the card and never overcommitted; @cores is the
 * percent of the card's compute the slice is entitled to (overcommitted only as far as the tier
 * or step profile allows); a card never holds more than @max_clients pods while one of this
 * class is on it. @shareable 0: the slice takes a card alone (@max_clients is then 1).
 */
struct gs_vgpu_class_spec {
    char name[GS_SCN_NAME_MAX];
    int64_t memory_mib;  /* >= 1; the seed's "2gb" is 2048 MiB (vGPU profile sizes are binary) */
    int32_t cores_pct;   /* 1..100 */
    int32_t max_clients; /* 1..GS_CARD_CLIENTS_MAX */
    int shareable;       /* isShareable, default true */
    struct gs_scn_src src;
};

#define GS_CARD_CLIENTS_MAX 1024 /* pods on one card, the largest maxClients or replicas taken */

/* A PriorityClass (scheduling.k8s.io/v1). */
struct gs_priority_class_spec {
    char name[GS_SCN_NAME_MAX];
    int32_t value;
    int never_preempt; /* preemptionPolicy: Never */
    int global_default;
    struct gs_scn_src src;
};

/* A namespace ResourceQuota, reduced to what it means for GPUs and what Kubernetes enforces. */
struct gs_rquota_spec {
    char ns[GS_SCN_NAME_MAX], name[GS_SCN_NAME_MAX];
    int64_t gpu_milli;  /* requests.nvidia.com/gpu (or bare nvidia.com/gpu); GS_UNSET */
    int64_t gpumem_mib; /* requests.nvidia.com/gpumem: cards x MiB per card; GS_UNSET */
    int64_t cpu_milli;  /* requests.cpu / cpu; GS_UNSET */
    int64_t memory_mib; /* requests.memory / memory; GS_UNSET */
    int64_t pods;       /* pods; GS_UNSET */
    char scope_classes[GS_SCN_SCOPE_CLASSES][GS_SCN_NAME_MAX]; /* PriorityClass scope (In) */
    int nscope_classes;
    struct gs_scn_src src;
};

/* A namespace LimitRange, type Container, for the resources that matter here; GS_UNSET = none. */
struct gs_limit_range_spec {
    char ns[GS_SCN_NAME_MAX], name[GS_SCN_NAME_MAX];
    int64_t max_gpu_milli, min_gpu_milli, default_gpu_milli, default_request_gpu_milli;
    int64_t max_memory_mib, min_memory_mib, default_memory_mib, default_request_memory_mib;
    int64_t max_cpu_milli, min_cpu_milli, default_cpu_milli, default_request_cpu_milli;
    struct gs_scn_src src;
};

/* A node template of a Cluster document (SCENARIO.md). */
struct gs_node_template {
    char name[GS_SCN_NAME_MAX];
    int model; /* catalog index; GS_UNSET for a node without GPUs and without gpuModel */
    int gpus;
    int64_t cpu_milli, memory_mib;     /* GS_UNSET when omitted: host resources do not constrain */
    uint8_t pcie_domain[GS_GPUS_MAX];  /* per GPU */
    uint8_t nvlink_group[GS_GPUS_MAX]; /* per GPU, GS_NO_GROUP = none */
    uint8_t nvlinks[GS_GPUS_MAX][GS_GPUS_MAX]; /* bonded NVLinks per GPU pair (nvlinks:, or a
                                                  topologyFile's NV# cells), 0 = none given */
    int32_t timeslice_replicas; /* timeSlicing.replicas: time-slice replicas a card of it
                                   offers (NVIDIA device plugin), 0 = none */
    struct gs_scn_src src;
};

/* One node of the Cluster, after name ranges are expanded. */
struct gs_scn_node {
    char name[GS_NAME_MAX];
    char zone[GS_NAME_MAX];
    int template_index;
};

/* One container's resources as written; GS_UNSET where a field is absent. */
struct gs_scn_container {
    int64_t gpu;        /* nvidia.com/gpu: cards, or slices when gpumem/gpucores are set */
    int64_t gpumem_mib; /* nvidia.com/gpumem, MiB per card */
    int64_t gpucores;   /* nvidia.com/gpucores, percent of one card per card */
    int64_t cpu_milli;
    int64_t memory_mib;
    char mig_profile[16]; /* from nvidia.com/mig-<profile>: 1, "" when none */
    int64_t gpu_shared;   /* nvidia.com/gpu.shared: time-slice replicas, on as many cards; 0 none */
};

/* A pod of the workload. */
struct gs_scn_pod {
    char ns[GS_SCN_NAME_MAX], name[GS_SCN_NAME_MAX];
    char user[GS_SCN_NAME_MAX];           /* label `user` */
    char workload[GS_SCN_NAME_MAX];       /* label `gpusched.io/workload`, "" when none */
    char group[GS_SCN_NAME_MAX];          /* annotation scheduling.k8s.io/group-name */
    char profile[GS_SCN_NAME_MAX];        /* annotation gpusched.io/profile */
    char vgpu_class[GS_SCN_NAME_MAX];     /* annotation gpusched.io/vgpu-class */
    char priority_class[GS_SCN_NAME_MAX]; /* spec.priorityClassName */
    char queue[GS_SCN_NAME_MAX];          /* annotation scheduling.volcano.sh/queue-name */
    enum gs_tier tier;                    /* annotation gpusched.io/topology */
    int64_t arrival_us;                   /* sim.gpusched.io/arrival, 0 when absent */
    int64_t duration_us;                  /* sim.gpusched.io/duration, GS_UNSET = runs forever */
    int32_t util_pct;                     /* sim.gpusched.io/gpu-util, GS_UNSET = 100 */
    int same_card; /* annotation gpusched.io/same-card: "true": its N slices or replicas on one
                      card (default: N different cards) */
    uint32_t model_mask; /* allowed GPU models (node selector), 0 = any */
    struct gs_scn_container containers[GS_SCN_CONTAINERS];
    int ncontainers;
    struct gs_scn_src src;
};

/* The Simulation document (sim.gpusched.io/v1alpha1): how to run the scenario. */
struct gs_sim_spec {
    int defined;
    char compare[4][16]; /* ways to compare: "exclusive", "sharing", "full" */
    int ncompare;
    int64_t horizon_us; /* GS_UNSET = until the last pod ends */
    /* cardModes: {convert: BOOL, minHold: DURATION}: whether an empty card may change mode to
     * follow demand, and how long it keeps a mode first (gs_fleet_set_modes()). */
    int modes_defined;   /* cardModes given: reports then count conversions */
    int convert;         /* default 1 */
    int64_t min_hold_us; /* default 0 */
};

struct gs_scenario {
    struct gs_tier_spec tiers[5]; /* indexed by enum gs_tier; [0] unused */
    struct gs_tenant_spec *tenants;
    size_t ntenants;
    struct gs_step_profile *profiles;
    size_t nprofiles;
    struct gs_queue_spec *queues;
    size_t nqueues;
    struct gs_podgroup_spec *podgroups;
    size_t npodgroups;
    struct gs_priority_class_spec *priority_classes;
    size_t npriority_classes;
    struct gs_rquota_spec *rquotas;
    size_t nrquotas;
    struct gs_limit_range_spec *limit_ranges;
    size_t nlimit_ranges;
    struct gs_vgpu_class_spec *vgpu_classes;
    size_t nvgpu_classes;
    struct gs_node_template *templates;
    size_t ntemplates;
    struct gs_scn_node *nodes;
    size_t nnodes;
    struct gs_scn_pod *pods;
    size_t npods;
    struct gs_sim_spec sim;
    int has_kubesched;                /* a KubeSchedulerConfiguration document was seen */
    int has_mig_policy;               /* a GpuClusterPolicy document was read into mig_policy */
    struct gs_mig_policy mig_policy;  /* which models may turn MIG, with which profiles */
    struct gs_scn_src mig_policy_src; /* where its document starts */
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
 * pod that names a VirtualGPUClass and also gives nvidia.com/gpumem or nvidia.com/gpucores);
 * -E2BIG; -ENOMEM.
 * Complexity: O(records) expected.
 */
int gs_scenario_resolve(struct gs_scenario *s, struct gs_diag *d);

/*
 * gs_tenant_model_quota() - @ts's GPUQuota entry for catalog model @model, or NULL when it has
 * none (also when no GPUQuota names the tenant). O(quota entries).
 */
const struct gs_model_quota *gs_tenant_model_quota(const struct gs_tenant_spec *ts, int model);

/*
 * gs_queue_gpu_cap_milli() - the nvidia.com/gpu a Volcano Queue @q lets its pods hold, in
 * milli-GPU, for a pod of whole cards (@whole 1) or of shares: a share counts against the
 * capability times the queue's overcommitRatio, whole cards against the capability itself (seed
 * 004 section 2.1). Return: the cap; GS_UNSET when the queue has no GPU capability.
 */
int64_t gs_queue_gpu_cap_milli(const struct gs_queue_spec *q, int whole);

/*
 * gs_quota_bucket() - where a pod's @milli on a model goes under GPUQuota entry @q, given what the
 * tenant already uses there (@ded dedicated, @sh shared, milli-GPU): whole cards (@whole) count
 * against `dedicated` when they all fit in what is left of it, anything else against `shared`,
 * and the two together never pass `total` (seed 000 section 1.2).
 * Return: 1 dedicated, 2 shared, 0 no room.
 */
int gs_quota_bucket(const struct gs_model_quota *q, int64_t ded, int64_t sh, int whole,
                    int64_t milli);

/*
 * gs_scenario_tenant_of() - index of the tenant namespace @ns belongs to, or -ENOENT.
 * O(1) expected after gs_scenario_resolve(); O(tenants) when tenants were added since.
 */
int gs_scenario_tenant_of(const struct gs_scenario *s, const char *ns);

#endif
