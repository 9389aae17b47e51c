/*
 * gpusched — the policy kinds: what both drivers of the scheduler read (the simulator from a
 * scenario, gpuschedd from its policy files and its API): the cluster's node templates and nodes,
 * the topology tiers, tenants and their GPUQuotas, step profiles, Volcano queues and PodGroups,
 * PriorityClasses, namespace ResourceQuotas and LimitRanges, VirtualGPUClasses, the
 * GpuClusterPolicy, and the pod as the scheduler reads it. Rules that several modules apply to
 * these records are declared here once (src/core/policy.c).
 *
 * A policy is a plain value tree: every record is data, filled by a loader (gs_scenario_load())
 * or by a caller building one in code; records refer to each other by name, as manifests do.
 *
 * Units: milli-GPU (1000 = one card), milli-CPU, MiB, microseconds, percent where Kubernetes users
 * write percent (nvidia.com/gpucores), milli-ratios for overcommit (1300 = 1.3).
 * Invariants: names are NUL-terminated and shorter than GS_SCN_NAME_MAX; counts never exceed the
 * array sizes; an unset optional quantity is GS_UNSET (-1).
 */
#ifndef GPUSCHED_POLICY_H
#define GPUSCHED_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "gpusched/cluster.h"
#include "gpusched/migpolicy.h"

struct gs_policy;

#define GS_SCN_NAME_MAX 64 /* names written by hand (namespaces, queues, classes...): 63 bytes */
/* Names controllers make (a Pod, a PodGroup: Volcano's job controller names a job's PodGroup
 * "<job>-<uid>"): a DNS-1123 subdomain of up to 253 bytes, as Kubernetes' ValidateObjectMeta
 * allows (k8s.io/apimachinery validation.DNS1123SubdomainMaxLength), with the NUL. */
#define GS_SCN_OBJ_MAX       254
#define GS_SCN_POD_KEY_MAX   (GS_SCN_NAME_MAX + GS_SCN_OBJ_MAX) /* "namespace/name", the NUL */
#define GS_UNSET             (-1)
#define GS_SCN_QUOTA_MODELS  16 /* GPU models per GPUQuota */
#define GS_SCN_NAMESPACES    16 /* namespaces mapped to one tenant */
#define GS_SCN_CONTAINERS    8  /* containers per pod */
#define GS_SCN_SCOPE_CLASSES 8  /* priority classes in a ResourceQuota scope */
#define GS_SCN_TIME_MAX_US   (87600LL * 3600 * 1000000) /* arrival, duration, horizon: 10 years */
/* Records of each policy kind; PodGroups may number GS_SCN_PODS_MAX (a gang of one each). */
#define GS_SCN_RECORDS_MAX 100000

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
    int32_t max_gpus_per_pod;  /* GS_UNSET = no limit */
    int32_t max_pods_per_user; /* GS_UNSET = no limit */
    /* GPUQuota spec.schedulingPolicy, each 1 unless given false: topologyAwareness 0, its
     * pods take no tier from the tenant (@tier); gangScheduling 0, its PodGroups start their
     * pods one by one (minMember 1); binPacking 0, the GPUBinPacking score is left out of its
     * pods' node scores */
    int topology_awareness, gang_scheduling, bin_packing;
    int has_quota; /* a GPUQuota names it */
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
int gs_step_profile_for(const struct gs_policy *pol, const char *name, const char *tenant,
                        struct gs_step_profile *out);

/* A Volcano Queue (scheduling.volcano.sh/v1beta1). */
struct gs_queue_spec {
    char name[GS_SCN_NAME_MAX];
    int32_t weight;           /* >= 1; Volcano's default is 1 */
    int64_t cap_gpu_milli;    /* capability nvidia.com/gpu, GS_UNSET = none */
    int64_t cap_cpu_milli;    /* capability cpu, GS_UNSET = none */
    int64_t cap_memory_mib;   /* capability memory, GS_UNSET = none */
    int64_t cap_pods;         /* capability pods: running pods at most, GS_UNSET = none */
    int reclaimable;          /* default true, as in Volcano */
    int32_t overcommit_milli; /* overcommitRatio of nvidia.com/gpu, 1000 when not given */
    struct gs_scn_src src;
};

/* The task entries a PodGroup's spec.minTaskMember may hold. A Volcano Job has one per task
 * (its job controller writes each task's minAvailable); more than this is refused. */
#define GS_PG_TASKS_MAX 16

/* One entry of spec.minTaskMember: the members of task @name (pods annotated
 * volcano.sh/task-spec: @name) that must run, or have succeeded, for the gang to start. */
struct gs_pg_task_min {
    char name[GS_SCN_NAME_MAX]; /* a DNS-1123 label, as Volcano's job webhook checks task names */
    int32_t min;                /* >= 0 */
};

/* A Volcano PodGroup: a gang. spec.minResources, what its first minMember members need
 * together: it is admitted (Volcano's Pending to Inqueue) only when that fits (the tenancy
 * ledger's enqueue check); 0 in a resource it does not name, all four 0 without it.
 * spec.minTaskMember: @ntasks entries, in the order written (none: the gang counts minMember
 * alone); see gs__tn_gang_lacking() for the rule. */
struct gs_podgroup_spec {
    char ns[GS_SCN_NAME_MAX], name[GS_SCN_OBJ_MAX];
    int32_t min_member;                                   /* >= 1 */
    char queue[GS_SCN_NAME_MAX];                          /* "" = `default` (gs_podgroup_queue()) */
    char priority_class[GS_SCN_NAME_MAX];                 /* "" = none */
    int64_t min_gpu_milli, min_cpu_milli, min_memory_mib; /* minResources nvidia.com/gpu, cpu,
                                                             memory: milli-GPU, milli-CPU, MiB */
    int64_t min_pods;                                     /* minResources pods: a pod count */
    struct gs_pg_task_min tasks[GS_PG_TASKS_MAX];         /* spec.minTaskMember */
    int32_t ntasks;
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

/* The highest value a PriorityClass of one's own may have; the built-in system- classes lie above
 * (Kubernetes pkg/apis/scheduling: HighestUserDefinablePriority). */
#define GS_PRIORITY_USER_MAX 1000000000

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

/* A namespace LimitRange, its type Container and type Pod entries, for the resources that matter
 * here; GS_UNSET = none. */
struct gs_limit_range_spec {
    char ns[GS_SCN_NAME_MAX], name[GS_SCN_NAME_MAX];
    int64_t max_gpu_milli, min_gpu_milli, default_gpu_milli, default_request_gpu_milli;
    int64_t max_memory_mib, min_memory_mib, default_memory_mib, default_request_memory_mib;
    int64_t max_cpu_milli, min_cpu_milli, default_cpu_milli, default_request_cpu_milli;
    /* maxLimitRequestRatio per resource, thousandths (>= 1000), GS_UNSET = none */
    int64_t ratio_gpu_milli, ratio_memory_milli, ratio_cpu_milli;
    /* type: Pod: bounds and ratios on the sums of the pod's containers (LimitRanger; Kubernetes
     * refuses default and defaultRequest on it), in the units above */
    int64_t pod_max_gpu_milli, pod_min_gpu_milli, pod_max_memory_mib, pod_min_memory_mib;
    int64_t pod_max_cpu_milli, pod_min_cpu_milli;
    int64_t pod_ratio_gpu_milli, pod_ratio_memory_milli, pod_ratio_cpu_milli;
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
    int32_t gpu_replicas;       /* nvidia.com/gpu devices its device plugin offers per card (HAMi's
                                   deviceSplitCount, gpusched-agent's --replicas): the most pods one
                                   card holds, each taking one; 0 = no such bound */
    int32_t max_pods; /* maxPods: pods a node of it runs at most (kubelet's maxPods, a Node's
                         allocatable pods), 1..GS_NODE_PODS_MAX; 0 = GS_NODE_PODS_DEFAULT */
    struct gs_scn_src src;
};

/* Pods one node runs at most: kubelet's maxPods default (KubeletConfiguration reference,
 * "maxPods ... Default: 110"), and the most a template or a Node may give, the node agent's list
 * of a node's pods (GS_PLAN_PODS_MAX) being that long. */
#define GS_NODE_PODS_DEFAULT 110
#define GS_NODE_PODS_MAX     512

/* gs_node_max_pods() - the pods a node of template @t runs at most: its maxPods, else the
 * default. The one reading of max_pods's 0. */
static inline int32_t gs_node_max_pods(const struct gs_node_template *t)
{
    return t->max_pods > 0 ? t->max_pods : GS_NODE_PODS_DEFAULT;
}

/* A taint's effect, and a toleration's (GS_EFFECT_ANY: a toleration without one matches all):
 * Kubernetes' TaintEffect (k8s.io/api core/v1). */
enum gs_effect {
    GS_EFFECT_ANY = 0,
    GS_EFFECT_NO_SCHEDULE,
    GS_EFFECT_PREFER_NO_SCHEDULE,
    GS_EFFECT_NO_EXECUTE
};

#define GS_NODE_TAINTS     16 /* taints per node */
#define GS_SCN_TOLERATIONS 8  /* tolerations per pod */

/* A Node's spec.taints[] entry: @key (a label key, non-empty), @value ("" none), @effect. */
struct gs_taint {
    char key[GS_SCN_NAME_MAX], value[GS_SCN_NAME_MAX];
    enum gs_effect effect; /* never GS_EFFECT_ANY */
};

/* A pod's spec.tolerations[] entry: @key ("" with @exists: every key), @exists (operator Exists,
 * else Equal: the taint's value is @value), @effect (GS_EFFECT_ANY: every effect), @seconds
 * (tolerationSeconds, NoExecute only; GS_UNSET none). */
struct gs_toleration {
    char key[GS_SCN_NAME_MAX], value[GS_SCN_NAME_MAX];
    int exists;
    enum gs_effect effect;
    int64_t seconds;
};

/* One node of the Cluster, after name ranges are expanded. */
struct gs_scn_node {
    char name[GS_NAME_MAX];
    char zone[GS_NAME_MAX];
    int template_index;
    int32_t taint_first, ntaints; /* its spec.taints: policy.taints[taint_first ..], 0 none */
};

#define GS_PLACED_GPUS  1u  /* sim.gpusched.io/gpus */
#define GS_PLACED_MIG   2u  /* sim.gpusched.io/mig-start */
#define GS_PLACED_START 4u  /* sim.gpusched.io/start */
#define GS_PLACED_DONE  8u  /* sim.gpusched.io/done */
#define GS_PLACED_FIRST 16u /* sim.gpusched.io/first-start (history: not a placement) */

/* A snapshot pod's time annotations, sim.gpusched.io/arrival, start, done, saved, first-start:
 * the index of where each value is (gs_pod_spec's times_line, times_col). */
enum gs_pod_time { GS_AT_ARRIVAL, GS_AT_START, GS_AT_DONE, GS_AT_SAVED, GS_AT_FIRST, GS_AT_TIMES };

/* One container's resources as written; GS_UNSET where a field is absent. */
struct gs_scn_container {
    int64_t gpu;        /* nvidia.com/gpu: cards, or slices when gpumem/gpucores are set */
    int64_t gpumem_mib; /* nvidia.com/gpumem, MiB per card */
    int64_t gpucores;   /* nvidia.com/gpucores, percent of one card per card */
    int64_t cpu_milli;
    int64_t memory_mib;
    char mig_profile[16]; /* from nvidia.com/mig-<profile>: 1, "" when none */
    int64_t gpu_shared;   /* nvidia.com/gpu.shared: time-slice replicas, on as many cards; 0 none */
    int init; /* 0 an app container; 1 an init container, 2 one that keeps running beside the app
                 containers (restartPolicy: Always, a sidecar) */
    int64_t
        cpu_limit_milli; /* limits.cpu, 0 when none given (a LimitRange's default may fill it) */
    int64_t memory_limit_mib; /* limits.memory, MiB, 0 when none given */
    int gpu_request_only;     /* requests.nvidia.com/gpu given, limits.nvidia.com/gpu not: a
                                 LimitRange's default must give the limit (admission) */
};

/* A pod of the workload. */
struct gs_pod_spec {
    char ns[GS_SCN_NAME_MAX], name[GS_SCN_OBJ_MAX];
    char user[GS_SCN_NAME_MAX];     /* label `user` */
    char workload[GS_SCN_NAME_MAX]; /* label `gpusched.io/workload`, "" when none */
    char group[GS_SCN_OBJ_MAX];     /* its PodGroup, "" none: named by @group_key */
    char task[GS_SCN_NAME_MAX];     /* annotation volcano.sh/task-spec: its task in a Volcano
                                       Job, which a PodGroup's minTaskMember counts; "" none */
    const char *group_key; /* the annotation or label that names @group (static text), NULL none */
    char profile[GS_SCN_NAME_MAX];        /* annotation gpusched.io/profile */
    char vgpu_class[GS_SCN_NAME_MAX];     /* annotation gpusched.io/vgpu-class */
    char priority_class[GS_SCN_NAME_MAX]; /* spec.priorityClassName */
    char scheduler[GS_SCN_NAME_MAX];      /* spec.schedulerName, "" when absent */
    struct gs_scn_src scheduler_src;      /* where spec.schedulerName is given */
    int32_t priority;                     /* spec.priority, when @has_priority: the value an API
                                             server's Priority admission gave it */
    int has_priority;
    char queue[GS_SCN_NAME_MAX]; /* annotation scheduling.volcano.sh/queue-name */
    enum gs_tier tier;           /* annotation gpusched.io/topology */
    int tier_given;              /* that annotation is there, "none" too: the tenant's tier does
                                    not apply (a tier other than none never needs it) */
    int64_t arrival_us;          /* sim.gpusched.io/arrival, 0 when absent */
    int64_t duration_us;         /* sim.gpusched.io/duration, GS_UNSET = runs forever */
    int64_t deadline_us;         /* spec.activeDeadlineSeconds in us, 0 = none: each run ends that
                                    long after it starts at the latest (the kubelet's DeadlineExceeded) */
    int preemption; /* spec.preemptionPolicy: 0 not given, 1 PreemptLowerPriority, 2 Never */
    int64_t overhead_cpu_milli, overhead_memory_mib; /* spec.overhead (RuntimeClass), 0 none */
    int32_t util_pct;                                /* sim.gpusched.io/gpu-util, GS_UNSET = 100 */
    int64_t checkpoint_us; /* gpusched.io/checkpoint-interval: it saves its state every
                              so much of its run and resumes there when evicted;
                              GS_UNSET = it restarts from zero */
    int same_card; /* annotation gpusched.io/same-card: "true": its N slices or replicas on one
                      card (default: N different cards) */
    uint32_t model_mask;   /* allowed GPU models (node selector), 0 = any */
    int model_by_selector; /* model_mask came from nodeSelector nvidia.com/gpu.product alone */
    char node_name[GS_SCN_NAME_MAX]; /* spec.nodeName or nodeSelector kubernetes.io/hostname:
                                        the one node it may run on; "" any */
    int node_by_selector;            /* node_name came from the nodeSelector alone */
    char node_zone[GS_SCN_NAME_MAX]; /* nodeSelector topology.kubernetes.io/zone; "" any */
    /* the nodes it may use at all, bit n (word n / 64) for node index n, @nodes_ok_n nodes
     * covered (a later node is not among them); NULL any: a driver's (gpuschedd: the nodes
     * kube-scheduler's own filters passed, its affinities and the rest), owned by the driver and
     * kept while the pod is */
    const uint64_t *nodes_ok;
    uint32_t nodes_ok_n;
    struct gs_toleration tolerations[GS_SCN_TOLERATIONS]; /* spec.tolerations, in order */
    int ntolerations;
    struct gs_scn_container containers[GS_SCN_CONTAINERS]; /* init containers first */
    int ncontainers;
    struct gs_scn_src src;
    /* Where in src.file it writes the fields admission may name: @nfields entries from
     * @fields_first of the table of the scenario that loaded it (gs_scenario_pod_field()); 0 when
     * it was not loaded by gs_scenario_load(). */
    uint32_t fields_first, nfields;
    /* A snapshot's pod (GET /v1/snapshot; read by `simulate --from-now` only; all zero in a pod
     * that is not one): running, placed_node names its node ("" none; placed_node_index is its
     * Cluster index, set by gs_scenario_resolve()), placed_mask its node-local cards (bit g for
     * card g), placed_mig_start its MIG instance's first memory slice, placed_start_us when it
     * started (us, the scenario's clock), done_us how much of its nominal run this run has done by
     * the snapshot's now; saved_us, what its checkpoints saved before (it resumes there). Which of
     * them the annotations gave: placed_given (GS_PLACED_*). placed_src: where the node is named;
     * cards_line, cards_col: where its cards (sim.gpusched.io/gpus, or mig-start) are in it;
     * times_line, times_col: where its time annotations' values are in src.file (GS_AT_*; line
     * 0: not given), for checks made once every document is read.
     * Its history, running or pending: evictions, how often it was evicted before (the churn
     * guards count them); first_start_us, when it first started (GS_PLACED_FIRST says it is given);
     * running, charged: which part of its tenant's GPUQuota holds it (the order pods are put
     * back in would otherwise decide).
     */
    char placed_node[GS_SCN_NAME_MAX];
    int32_t placed_node_index;
    uint32_t placed_mask;
    int32_t placed_mig_start;
    int64_t placed_start_us, done_us, saved_us;
    int32_t evictions;
    int64_t first_start_us;
    int32_t charged; /* sim.gpusched.io/charged: 1 "dedicated", 2 "shared", 0 not given */
    unsigned placed_given;
    struct gs_scn_src placed_src;
    uint32_t cards_line, cards_col;
    uint32_t times_line[GS_AT_TIMES], times_col[GS_AT_TIMES];
};

/*
 * The policy documents in force and the cluster they apply to. Arrays are owned by whoever built
 * the policy (a struct gs_scenario owns its own, gs_scenario_free() releases them).
 */
/* One score plugin of the multi-tenant scheduler's profile and its weight. */
struct gs_score_spec {
    int plugin;     /* gs_plugin_find() id of a plugin that places (gs_plugin_places()) */
    int32_t weight; /* 1..GS_WEIGHT_MAX */
};

#define GS_SCN_SCORES 16 /* score plugins of one profile (as a profile holds) */

struct gs_policy {
    struct gs_tier_spec tiers[5]; /* indexed by enum gs_tier; [0] unused */
    /* The score point of a KubeSchedulerConfiguration's profile, as the multi-tenant scheduler
     * runs it (has_scores 1); else the seed's GPUBinPacking 8, TopologyScore 6, FairnessScore 4
     * (gs_profile_new_placement()). A profile may disable every score (has_scores 1, nscores 0):
     * then the first node that fits, in node order, is taken. */
    int has_scores;
    int nscores;
    struct gs_score_spec scores[GS_SCN_SCORES];
    struct gs_scn_src scores_src; /* where its document starts */
    /* The schedulerName of that profile: the pods this scheduler takes name it, or none;
     * "" without a KubeSchedulerConfiguration, when Kubernetes' "default-scheduler" is it. */
    char scheduler_name[GS_SCN_NAME_MAX];
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
    struct gs_taint *taints; /* the nodes' taints (gs_scn_node's taint_first, ntaints) */
    size_t ntaints;
    int has_mig_policy;               /* a GpuClusterPolicy document was read into mig_policy */
    struct gs_mig_policy mig_policy;  /* which models may turn MIG, with which profiles */
    struct gs_scn_src mig_policy_src; /* where its document starts */
};

/*
 * gs_policy_scheduler_takes() - whether this scheduler takes a pod of spec.schedulerName @name
 * ("" when the pod names none): a pod is scheduled by the scheduler it names, and this one's name
 * is its KubeSchedulerConfiguration profile's, else kube-scheduler's "default-scheduler"
 * (kubernetes.io/docs/tasks/extend-kubernetes/configure-multiple-schedulers). When it does not,
 * @why (caller's, @size bytes, NULL for none) gets the refusal and what to write instead, from
 * "schedulerName" on. Return: 1 or 0.
 */
int gs_policy_scheduler_takes(const struct gs_policy *pol, const char *name, char *why,
                              size_t size);

/* gs_policy_scheduler_name() - that name (borrowed: the policy's, or static). */
const char *gs_policy_scheduler_name(const struct gs_policy *pol);

/* gs_priority_class_builtin() - Kubernetes' built-in PriorityClass @i: 0 system-cluster-critical
 * (2000000000), 1 system-node-critical (2000001000) ("Pod Priority and Preemption",
 * kubernetes.io); NULL for @i past them. Static. */
const struct gs_priority_class_spec *gs_priority_class_builtin(size_t i);

/*
 * gs_priority_class_find() - PriorityClass @name: the policy's, else one of Kubernetes' built-in
 * system-cluster-critical (2000000000) and system-node-critical (2000001000); NULL when there is
 * none of that name. Borrowed (the policy's, or static). O(classes).
 */
const struct gs_priority_class_spec *gs_priority_class_find(const struct gs_policy *pol,
                                                            const char *name);

/* gs_tenant_spec_init() - @ts as a tenant named @name with nothing given: no namespace, tier,
 * priority, gpuCount, quota or limit; its scheduling policy all on. */
void gs_tenant_spec_init(struct gs_tenant_spec *ts, const char *name);

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
 * gs_podgroup_queue() - the Volcano Queue PodGroup @g's members run in: its spec.queue, else
 * `default`. Volcano's PodGroup admission webhook writes a queue into a PodGroup made without one
 * (pkg/webhooks/admission/podgroups/mutate: its namespace's annotation
 * scheduling.volcano.sh/queue-name, else `default`); gpusched reads no Namespace objects, so a
 * PodGroup that names no queue is in `default`, and so are its members, whatever their own
 * annotations say. Borrowed (@g's, or static).
 */
const char *gs_podgroup_queue(const struct gs_podgroup_spec *g);

/*
 * gs_podgroup_task_add() - add the spec.minTaskMember entry @name: @min to PodGroup @g, as both
 * readers take it (a scenario's PodGroup, gpuschedd's POST /v1/podgroups). @name: the task, a
 * DNS-1123 label of at most 63 bytes (Volcano's job webhook checks task names so, and its job
 * controller writes each task's minAvailable under it); @min: members, 0 allowed (Volcano writes
 * 0 for a task that need not run), negative or above GS_SCN_PODS_MAX (minMember's bound)
 * refused. Return: 0 added; -EINVAL with the reason in
 * @why (@size bytes; it names the entry, not the field) for a bad name or value, a name given
 * twice, or more than GS_PG_TASKS_MAX entries.
 */
int gs_podgroup_task_add(struct gs_podgroup_spec *g, const char *name, long long min, char *why,
                         size_t size);

/*
 * gs_pod_queue() - the Volcano Queue pod @sp runs in: its PodGroup's (@g, gs_podgroup_queue()),
 * else its annotation scheduling.volcano.sh/queue-name, else `default`. @g NULL: the pod is in no
 * PodGroup, or its PodGroup is not made yet (then this is the queue it is counted in meanwhile).
 * Borrowed (@sp's, @g's, or static).
 */
const char *gs_pod_queue(const struct gs_pod_spec *sp, const struct gs_podgroup_spec *g);

/*
 * gs_quota_borrowed() - what a tenant borrows of GPUQuota entry @q's `shared` with @ded milli-GPU
 * charged to `dedicated` and @sh to `shared`, @sh_whole of it pods of whole cards: the shared
 * charge, less the whole cards that fit in what is left of `dedicated` (a pod of 8 cards with 4
 * dedicated ones left borrows 4, as a Kueue ClusterQueue borrows what its usage passes its
 * nominalQuota by; a share always borrows). Return: milli-GPU.
 */
int64_t gs_quota_borrowed(const struct gs_model_quota *q, int64_t ded, int64_t sh,
                          int64_t sh_whole);

/*
 * gs_quota_bucket() - where a pod's @milli on a model goes under GPUQuota entry @q, given what the
 * tenant already uses there (@ded dedicated, @sh shared of which @sh_whole whole cards,
 * milli-GPU): whole cards (@whole) count against `dedicated` when they all fit in what is left of
 * it; anything else is charged to `shared`, and may start while what the tenant then borrows
 * (gs_quota_borrowed()) stays within `shared` and the two together within `total` (seed 000
 * section 1.2). Return: 1 dedicated, 2 shared, 0 no room.
 */
int gs_quota_bucket(const struct gs_model_quota *q, int64_t ded, int64_t sh, int64_t sh_whole,
                    int whole, int64_t milli);

/*
 * Taints and tolerations, as Kubernetes reads them (k8s.io/api core/v1 Taint, Toleration;
 * validation as k8s.io/kubernetes pkg/apis/core/validation's validateTaints and
 * ValidateTolerations). A pod goes only to nodes whose NoSchedule and NoExecute taints it all
 * tolerates (kube-scheduler's TaintToleration filter); a node with a PreferNoSchedule taint it
 * does not tolerate it takes only when no other node scores as well (TaintToleration's score
 * prefers the nodes with fewer of them; here such a node's score is demoted, placement.c).
 *
 * gs_effect_find() - "NoSchedule", "PreferNoSchedule", "NoExecute" to enum gs_effect; "" to
 * GS_EFFECT_ANY when @any_ok; else -EINVAL. gs_effect_name() - the name; "" for GS_EFFECT_ANY.
 *
 * gs_taint_make() - *@out from a taint's strings (@value may be NULL or ""). Return: 0; -EINVAL
 * with @why (@wsize bytes) saying what is wrong and @field the field at fault ("key", "value",
 * "effect"): a key that is no label key (kubernetes.io/docs/concepts/overview/working-with-
 * objects/labels/#syntax-and-character-set) or of GS_SCN_NAME_MAX bytes or more, a value that is
 * no label value, an unknown effect.
 *
 * gs_toleration_make() - *@out from a toleration's strings (each may be NULL: absent) and
 * @seconds (GS_UNSET: none). Return: 0; -EINVAL with @why and @field ("key", "operator", "value",
 * "effect", "tolerationSeconds"): an unknown operator (Equal, Exists) or effect, an empty key
 * with an operator other than Exists, Exists with a value, tolerationSeconds with an effect
 * other than NoExecute, a key or value as gs_taint_make() refuses them.
 *
 * gs_tolerates() - whether @tl tolerates @tn (Toleration.ToleratesTaint: the effect, unless the
 * toleration gives none; the key, unless it gives none; the value under Equal). Return: 1 or 0.
 *
 * gs_node_untolerated() - the first of node @node's NoSchedule and NoExecute taints (in
 * @pol->taints order) that none of @sp's tolerations tolerates, borrowed from @pol; NULL when
 * it tolerates them all. gs_node_prefers_not() - the same of its PreferNoSchedule taints.
 * O(taints x tolerations).
 */
int gs_effect_find(const char *name, int any_ok);
/* gs_label_key_ok() - whether @key (NULL: no) is a label key as Kubernetes validates one: an
 * optional DNS subdomain prefix of at most 253 bytes and '/', then a name (gs_label_word_ok()).
 * gs_label_word_ok() - whether @s (@n bytes) is a label name or value: at most 63 bytes, empty
 * or alphanumerics at both ends, '-', '_', '.' between. Return: 1 or 0. */
int gs_label_key_ok(const char *key);
/* gs_dns_subdomain_ok() - whether @s (@n bytes) is a DNS subdomain as Kubernetes validates most
 * object names (RFC 1123, apimachinery IsDNS1123Subdomain): 1-253 bytes of lowercase letters,
 * digits, '-' and '.', each dot-separated label non-empty with an alphanumeric at both ends (the
 * API server's regular expression bounds no label's length: a 100-byte pod name is valid).
 * gs_dns_label_ok() - one label of at most 63 bytes (IsDNS1123Label: namespaces, container
 * names). Return: 1 or 0. */
int gs_dns_subdomain_ok(const char *s, size_t n);
int gs_dns_label_ok(const char *s, size_t n);
int gs_label_word_ok(const char *s, size_t n);
/* gs_uid_ok() - whether @s (NUL-terminated) is a metadata.uid the node agent can name a pod's
 * folder by: 1..63 letters, digits, '.', '_' and '-', not first '.' (so never "..", and no '/').
 * The API server's UIDs are UUIDs; gpuschedd refuses any other on create and the agent refuses
 * any other in its node's list. Return: 1 or 0. */
int gs_uid_ok(const char *s);
/* gs_annotation_key_ok() - whether @key (NULL: no) is an annotation key as Kubernetes validates
 * one: a label key once lowercased (apimachinery ValidateAnnotations), at most 319 bytes here.
 * Return: 1 or 0. */
int gs_annotation_key_ok(const char *key);
/* The API server's cap on an object's annotations, keys and values together, bytes
 * (k8s.io/apimachinery/pkg/api/validation, TotalAnnotationSizeLimitB). */
#define GS_ANNOTATIONS_MAX_BYTES (256 * 1024)
const char *gs_effect_name(enum gs_effect e);
int gs_taint_make(const char *key, const char *value, const char *effect, struct gs_taint *out,
                  const char **field, char *why, size_t wsize);
int gs_toleration_make(const char *key, const char *op, const char *value, const char *effect,
                       int64_t seconds, struct gs_toleration *out, const char **field, char *why,
                       size_t wsize);
int gs_tolerates(const struct gs_toleration *tl, const struct gs_taint *tn);
const struct gs_taint *gs_node_untolerated(const struct gs_policy *pol, size_t node,
                                           const struct gs_pod_spec *sp);
const struct gs_taint *gs_node_prefers_not(const struct gs_policy *pol, size_t node,
                                           const struct gs_pod_spec *sp);

/*
 * gs_node_set_taints() - node @node of @pol has taints @tn[@n] (copied; n 0: none) from now on, in
 * place of those it had: a Node's spec.taints change while the cluster runs (the node lifecycle
 * controller lifts node.kubernetes.io/not-ready once kubelet reports Ready; an operator taints or
 * cordons a node). @pol->taints is made anew (the other nodes' taints kept, in node order: the
 * same policy, whatever the order of the changes that led to it) and the old list freed: a
 * scheduler made over @pol must be made again to place by them (gs_tenancy_new()), and a pod it
 * restores where it ran stays there whatever the node's taints now (gs_tenancy_restore()).
 * Return: 0; -EINVAL (@node past @pol->nnodes, @n past GS_NODE_TAINTS); -ENOMEM. @pol is
 * unchanged on error.
 */
int gs_node_set_taints(struct gs_policy *pol, size_t node, const struct gs_taint *tn, int n);

#endif
