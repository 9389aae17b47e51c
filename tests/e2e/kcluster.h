/*
 * The end-to-end tests' control plane: a real etcd (Debian's etcd-server), kube-apiserver and
 * kube-scheduler (v1.20.2, scripts/build-kubernetes; $GS_KUBE_DIR names their folder) and the
 * real gpuschedd ($GPUSCHEDD_BIN) as kube-scheduler's extender, everything on 127.0.0.1 on free
 * ports, in one fresh folder under /tmp (etcd's data in /dev/shm where there is one).
 *
 * Certificates are made at start with openssl: deploy/tls/make-certs for the extender link (mutual
 * TLS: kube-scheduler presents its client certificate, gpuschedd checks it against the CA), and
 * tests/e2e/apiserver-certs for the API server's serving certificate and service account keys.
 * The API server authenticates static tokens (the test as system:masters, kube-scheduler as
 * system:kube-scheduler, gpuschedd as its service account) and authorizes with RBAC; gpuschedd's
 * rights are the ClusterRole of deploy/gpuschedd.yaml.
 *
 * There is no kubelet: Nodes are API objects the test creates, with the capacity and the labels a
 * node with NVIDIA's device plugin and GPU feature discovery has, and a pod deleted with a grace
 * period is finished by kc_finish_deletions(), which does what a kubelet does once the containers
 * stopped (a deletion with gracePeriodSeconds 0).
 */
#ifndef GS_KCLUSTER_H
#define GS_KCLUSTER_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#define KC_TOKEN_ADMIN  "e2e-admin-0123456789abcdef"
#define KC_TOKEN_TEAM_A "e2e-team-a-0123456789abcdef"

struct kproc {
    pid_t pid;
    char log[160];
};

struct kcluster {
    char dir[64];
    char kube_dir[512]; /* the kube-apiserver and kube-scheduler binaries */
    int etcd_port, api_port, gsd_port;
    struct kproc etcd, api, sched, gsd;
    char gsd_config[160]; /* its DaemonConfig */
    char gsd_policy[160]; /* a second --config for gpuschedd (GPUQuota, ...), "" for none */
    char sched_config[160];
    int plain; /* kc_start_plain(): no gpuschedd, no extender */
};

struct kanswer {
    long status;
    char *body;
    json_t *json;
};

/* Start etcd, kube-apiserver and gpuschedd (with @gsd_extra DaemonConfig lines and
 * @gsd_policy YAML, either NULL) and kube-scheduler with the shipped v1beta1 configuration. The
 * nodes of @nodes_csv (gpuschedd's CSV) are created as Node objects first. Return: 0; -1 (the
 * logs say why; everything started is stopped by kc_stop()). */
int kc_start(struct kcluster *c, const char *nodes_csv, const char *gsd_extra,
             const char *gsd_policy);
/* kc_start() without gpuschedd: kube-scheduler with the shipped configuration less its
 * extenders section, counting nvidia.com/gpu itself (the yardstick of bench/bench_kube.c). */
int kc_start_plain(struct kcluster *c, const char *nodes_csv);
/* kc_start() (no extra DaemonConfig, no policy) with the CustomResourceDefinition of YAML file
 * @crd (a path from the repository root) installed, Established and served before gpuschedd
 * starts, as in a cluster where its operator (Volcano) came first. Return: 0; -1. */
int kc_start_crd(struct kcluster *c, const char *nodes_csv, const char *crd);
/* Stop everything (SIGTERM, then SIGKILL after 10 s) and delete the folder. */
void kc_stop(struct kcluster *c);
/* Start gpuschedd again after kc_kill_gsd() (same folder, same port). Return: 0; -1. */
int kc_start_gsd(struct kcluster *c);
/* SIGKILL gpuschedd. */
void kc_kill_gsd(struct kcluster *c);

/* One API call as the test's admin (@body JSON text or NULL). Return: 0 (a->status set); -1. */
int kc_api(const struct kcluster *c, const char *method, const char *path, const char *body,
           struct kanswer *a);
void kc_answer_free(struct kanswer *a);
/* Create the CustomResourceDefinition of YAML file @file (its first document; a path from the
 * repository root) and wait up to 30 s until it is Established and its first version's
 * collection answers a list. Return: 0; -1 (said on stderr). */
int kc_crd(const struct kcluster *c, const char *file);
/* One call to gpuschedd's own API (HTTPS) with bearer @token (or NULL). Return: 0; -1. */
int kc_gsd(const struct kcluster *c, const char *method, const char *path, const char *token,
           const char *body, struct kanswer *a);
/* kc_gsd() presenting client certificate @cert (files @cert.crt and @cert.key), or none. */
int kc_gsd_as(const struct kcluster *c, const char *method, const char *path, const char *token,
              const char *cert, const char *body, struct kanswer *a);
/* kc_api() expecting @want: 0 when it came, else -1 with the answer printed. */
int kc_api_ok(const struct kcluster *c, const char *method, const char *path, const char *body,
              long want);

/* What a Node has; 0 or NULL: a default (96 CPUs, 768 GiB, 80 GiB cards, zone-a). */
struct knode {
    const char *name, *product; /* product: nvidia.com/gpu.product */
    int gpus, gpu_mem_mib;
    long long cpu_milli, memory_mib;
    const char *zone;
};
/* A Node with @n's cards, CPU and memory, as the device plugin and GPU feature discovery label
 * it (nvidia.com/gpu capacity; nvidia.com/gpu.product, .count, .memory;
 * topology.kubernetes.io/zone). Return: 0; -1. */
int kc_node(const struct kcluster *c, const struct knode *n);
/* A namespace. Return: 0 (also when it exists); -1. */
int kc_namespace(const struct kcluster *c, const char *ns);
/*
 * A pod in @ns asking, in its one container's limits, for @resources: a JSON object text such
 * as {"nvidia.com/gpu": 1} (cpu and memory are added). @extra: more JSON merged into the pod
 * (labels, annotations, priorityClassName), or NULL. Return: 0; -1.
 */
int kc_pod(const struct kcluster *c, const char *ns, const char *name, const char *resources,
           const char *extra);
/* Delete pod @ns/@name with @grace seconds (-1: the default). Return: 0 (also when gone); -1. */
int kc_delete_pod(const struct kcluster *c, const char *ns, const char *name, int grace);
/* The node pod @ns/@name is bound to, waiting up to @timeout_ms; "" when none came. */
const char *kc_wait_bound(const struct kcluster *c, const char *ns, const char *name,
                          int timeout_ms, char *node, size_t cap);
/* The pod object (new reference), or NULL. */
json_t *kc_get_pod(const struct kcluster *c, const char *ns, const char *name);
/* Does an event about pod @ns/@name have reason @reason and a message containing @needle? Waits
 * up to @timeout_ms. Return: 1 (its message into @msg); 0. */
int kc_wait_event(const struct kcluster *c, const char *ns, const char *name, const char *reason,
                  const char *needle, int timeout_ms, char *msg, size_t cap);
/* What a kubelet does when a deleted pod's containers stopped: delete every pod that has a
 * deletionTimestamp with grace 0. Return: how many; -1. */
int kc_finish_deletions(const struct kcluster *c);
/* Does @p's log contain @needle? */
int kc_log_has(const struct kproc *p, const char *needle);
/* kc_audit_count() - how many times @needle occurs in the API server's audit log, which records
 * each request to the pods/eviction subresource once, as it is answered (one JSON line each). */
int kc_audit_count(const struct kcluster *c, const char *needle);
/* Sleep @ms milliseconds. */
void kc_sleep_ms(int ms);

#endif
