/*
 * gpuschedd — internal interfaces of the daemon's modules.
 *
 * Threads: one scheduler thread owns the cluster, the engine, the pod table, the store and the
 * configuration in force (struct gsd_state). HTTP threads (libmicrohttpd, one per connection)
 * read a request, hash its bearer token and hand it over as a struct gsd_req through the queue;
 * they wait for the scheduler thread to fill in the answer. The extender's filter and prioritize,
 * which write nothing to the store, are the exception: the HTTP thread answers them itself under
 * the state lock the scheduler thread holds for a batch's work in memory (server.c). The
 * extender's bind calls the Kubernetes API server from its HTTP thread after the commit, holding
 * nothing (kube.c). The main thread handles signals and parses a reloaded configuration before
 * handing it over the same way.
 *
 * Durability: the scheduler thread takes the queued requests in batches, runs them inside one
 * SQLite transaction and answers none of them before that transaction commits, so a 2xx always
 * means "in the store". Should a commit fail, memory and store disagree: the daemon answers 503
 * and exits, and the next start rebuilds memory from the store.
 *
 * Units as in the engine: milli-GPU, milli-cores, MiB; times are microseconds (wall clock since
 * the Unix epoch for what is stored and shown, monotonic for latencies and rate limits).
 */
#ifndef GSD_H
#define GSD_H

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/mig.h"
#include "gpusched/sched.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

struct gs_ratecard;
struct gs_scenario;
struct gs_tenant_spec;
struct MHD_Connection;
struct sockaddr;
#include <stddef.h>
#include <stdint.h>

#define GSD_NAME_MAX    64    /* namespace, pod and tenant names, with the NUL (63 bytes) */
#define GSD_UID_MAX     64    /* metadata.uid, with the NUL */
#define GSD_REASON_MAX  256   /* a pending pod's reason, cut to fit */
#define GSD_META_MAX    65536 /* labels + annotations as JSON text, bytes */
#define GSD_TENANTS_MAX 1024
#define GSD_NS_MAX      256  /* namespaces per tenant */
#define GSD_QARGS_MAX   8    /* query arguments kept per request */
#define GSD_QARG_LEN    128  /* bytes of one query argument value, with the NUL */
#define GSD_BATCH_MAX   512  /* requests run in one store transaction */
#define GSD_LIST_MAX    5000 /* pods in one list answer */
#define GSD_EXT_CACHE   4096 /* pods remembered from filter calls for bind */
#define GSD_SHA256_LEN  32
#define GSD_MIG_MAX     16 /* a MIG profile name, "1g.10gb+me", with the NUL */
/* kube-controller-manager's --node-monitor-grace-period default (40 s): a node whose agent has
 * been silent that long is NotReady. */
#define GSD_NODE_GRACE_DEFAULT_US (40 * 1000000LL)
#define GSD_DEFAULT_RATES         GS_DATA_DIR "/billing/rates.yaml"

/* ---- logging (log.c): one logfmt line per event on stderr ---- */

/*
 * gsd_log() - write "ts=... level=@level msg=@msg k1=v1 ..." with one write(2).
 * The variadic part is key, value pairs of strings ending with NULL; values are quoted when they
 * hold a space, '=', '"' or a control byte. Thread-safe.
 */
void gsd_log(const char *level, const char *msg, ...);

/* ---- configuration (config.c) ---- */

struct gsd_tenant {
    char name[GSD_NAME_MAX];
    uint8_t token_sha[GSD_SHA256_LEN]; /* SHA-256 of the bearer token; never the token */
    char (*ns)[GSD_NAME_MAX];          /* namespaces it owns */
    size_t nns;
    int32_t weight;     /* its queue's weight (each tenant is one queue), 1..10000 */
    int64_t rate_milli; /* requests per second x 1000; 0 = no limit */
    int64_t burst;      /* bucket size in requests */
    const struct gs_tenant_spec *quota; /* its GPUQuota in the config's policy, NULL = none */
    /* token bucket: HTTP threads take from it under the access lock (access.c), which carries
     * it over a reload by tenant name; nothing else reads it */
    int64_t bucket_milli;
    int64_t bucket_at_us;
};

/*
 * The Kubernetes API server that bind writes to (the DaemonConfig's `kubernetes:`). Strings are
 * owned; the token is read from @token_file at every bind, as service account tokens rotate.
 */
struct gsd_kube {
    char *api_server;   /* "https://host:port", no trailing '/' */
    char *token_file;   /* NULL: no Authorization header */
    char *ca_file;      /* PEM bundle for https; NULL: the system's */
    int64_t timeout_ms; /* the whole bind's API calls together */
    int64_t sync_us;    /* period of the pod sync (gsd_kube_live()); 0 = none */
};

/*
 * The listener's bounds (the DaemonConfig's `http:`), each with its default. Connections past
 * maxConnections, or past maxConnectionsPerClient from one client address, are closed as they
 * are accepted; a connection silent for idleTimeoutSeconds is closed; a body must arrive whole
 * within bodyTimeoutSeconds of its headers; the bodies being read, all connections together,
 * hold at most maxBytesInFlight bytes (503 past it); an address whose bearer tokens failed
 * authFailuresPerMinute times within a minute is answered 429 until that minute is over.
 * Connections, timeouts and threads are the listener's at start: a reload changes only the
 * last two.
 */
struct gsd_http_limits {
    int64_t max_connections; /* 4096 (also bounded by the open-file limit) */
    int64_t max_per_client;  /* 64 */
    int64_t idle_timeout_s;  /* 60 */
    int64_t body_timeout_s;  /* 30 */
    int64_t max_in_flight;   /* 64 MiB, bytes */
    int64_t threads;         /* 4: libmicrohttpd's event threads (epoll) */
    int64_t auth_failures;   /* 10 */
};

/* GET /metrics (metrics.c): who may see names, and whether a series per pod is shown. */
struct gsd_metrics_cfg {
    int has_token;
    uint8_t token_sha[GSD_SHA256_LEN]; /* Prometheus' bearer token: GET /metrics only */
    int per_pod;                       /* perPod: true */
};

/*
 * A configuration in force. Immutable once handed to the server, except the tenants' token
 * buckets (see struct gsd_tenant); shared by the scheduler thread and the HTTP threads, each
 * holding a reference (gsd_config_ref(); gsd_config_free() drops one, the last frees).
 */
struct gsd_config {
    atomic_int refs;
    char *path;            /* the file, for messages; NULL when none */
    struct gsd_kube *kube; /* NULL: bind records the cards only */
    struct gsd_tenant *tenants;
    size_t ntenants;
    int has_admin;
    uint8_t admin_sha[GSD_SHA256_LEN];
    int has_node;
    uint8_t node_sha[GSD_SHA256_LEN]; /* node agents' token: heartbeats and card health only */
    int64_t node_grace_us;            /* nodeMonitorGracePeriodSeconds, in microseconds */
    char *rate_card;                  /* rateCard: its path, NULL for the bundled one */
    struct gs_ratecard *rates;        /* prices for bills; NULL when none could be loaded */
    size_t max_body;                  /* bytes of a POST /v1/pods or /v1/podgroups body */
    size_t extender_max_body;         /* bytes of a filter, prioritize or preempt body */
    struct gsd_http_limits http;
    struct gsd_metrics_cfg metrics;
    int64_t max_pods;           /* pods held (pending + running) */
    char policy[32];            /* placement policy name */
    struct gs_scenario *quotas; /* GPUQuota, ResourceQuota, ... of the policy files; may be NULL */
};

/*
 * gsd_config_load() - read a DaemonConfig YAML file (kind: DaemonConfig). Plain tokens are
 * hashed at once and the text wiped; `tokenSHA256` gives the hash instead. Unknown keys are
 * errors naming path:line:column. @path NULL gives the defaults (no tenant, no admin).
 * Return: 0 and *@out (free with gsd_config_free()); -EINVAL with @d; -ENOENT/-EIO; -ENOMEM.
 */
int gsd_config_load(const char *path, struct gsd_config **out, struct gs_diag *d);
/* gsd_config_ref() - one more reference to @c (any thread). Return: @c. */
struct gsd_config *gsd_config_ref(struct gsd_config *c);
/*
 * gsd_config_parse() - gsd_config_load() of the @len bytes at @buf, named @path in messages,
 * without the rate card (c->rates NULL). Plain tokens are wiped in the parser's copies; @buf is
 * the caller's to wipe. Return: as gsd_config_load() (no -ENOENT or -EIO).
 */
int gsd_config_parse(const char *path, const unsigned char *buf, size_t len,
                     struct gsd_config **out, struct gs_diag *d);
/* gsd_config_free() - drop one reference to @c (NULL allowed); the last frees it. */
void gsd_config_free(struct gsd_config *c);

/* gsd_sha256() - @out = SHA-256(@data). */
void gsd_sha256(const void *data, size_t len, uint8_t out[GSD_SHA256_LEN]);

/* gsd_tenant_named() - the tenant called @name, or NULL ("" names none). O(tenants). */
const struct gsd_tenant *gsd_tenant_named(const struct gsd_config *c, const char *name);

/* gsd_tenant_of_ns() - the tenant owning namespace @ns, or NULL. O(tenants x namespaces). */
const struct gsd_tenant *gsd_tenant_of_ns(const struct gsd_config *c, const char *ns);

/*
 * gsd_config_auth() - who holds the token hashed to @sha: the tenant (its index), GSD_AUTH_ADMIN,
 * GSD_AUTH_NODE (the node agents' token), GSD_AUTH_METRICS or GSD_AUTH_NONE. Every configured hash
 * is compared in constant time, all of them always, so the time taken does not tell which one
 * matched or how much of one did.
 */
#define GSD_AUTH_ADMIN   (-1)
#define GSD_AUTH_NONE    (-2)
#define GSD_AUTH_NODE    (-3)
#define GSD_AUTH_METRICS (-4) /* metrics.token: GET /metrics only */
int gsd_config_auth(const struct gsd_config *c, const uint8_t sha[GSD_SHA256_LEN]);

/*
 * gsd_bucket_take() - take one request from @t's token bucket at monotonic time @now_us.
 * Return: 0 allowed; else the whole seconds (>= 1) to wait, for Retry-After.
 */
int64_t gsd_bucket_take(struct gsd_tenant *t, int64_t now_us);

/* ---- pod specs (podspec.c) ---- */

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
 * spec.priority, and per container resources.limits (requests where a limit is absent)
 * nvidia.com/gpu, nvidia.com/gpumem (MiB), nvidia.com/gpucores (%), cpu, memory, and one MIG
 * instance, nvidia.com/mig-<profile>: 1 (NVIDIA's device plugin, strategy mixed), a profile some
 * MIG model of gpusched/mig.h has; more than one instance, two profiles, or a MIG instance with
 * nvidia.com/gpu, gpumem or gpucores is a 400 naming the field.
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

/*
 * A PodGroup (Volcano's scheduling.volcano.sh/v1beta1), a gang: the pods of its namespace whose
 * gsd_pod_group() names it are placed all or nothing until minMember of them run.
 */
struct gsd_group {
    char ns[GSD_NAME_MAX], name[GSD_NAME_MAX], tenant[GSD_NAME_MAX];
    char queue[GSD_NAME_MAX], pclass[GSD_NAME_MAX]; /* as posted, "" when not given */
    int32_t min_member;                             /* 1..GSD_GANG_MAX */
    int64_t created_us;                             /* wall clock */
    /* the scheduler thread's, not stored */
    int32_t members, running; /* pods held that name it; of them, running */
    uint64_t tried;           /* the retry pass that last tried it */
};
#define GSD_GANG_MAX   10000 /* minMember at most */
#define GSD_GROUPS_MAX 100000

/* ---- pods held by the scheduler thread ---- */

enum gsd_pod_state { GSD_PENDING = 0, GSD_RUNNING = 1 };
enum gsd_source { GSD_SRC_API = 0, GSD_SRC_EXTENDER = 1 };

struct gsd_pod {
    int64_t id;  /* store row id */
    int64_t seq; /* arrival order; unique for the life of the store */
    char ns[GSD_NAME_MAX], name[GSD_NAME_MAX], tenant[GSD_NAME_MAX], uid[GSD_UID_MAX];
    char *meta; /* JSON text {"labels":{..},"annotations":{..}}, owned */
    struct gs_pod_req req;
    int32_t gpumem_mib, gpucores, priority;
    char models[160];
    char group[GSD_NAME_MAX]; /* PodGroup within the namespace, "" = none (not stored: from meta) */
    char user[GSD_NAME_MAX];  /* label `user`, for maxPodsPerUser (from meta) */
    char pclass[GSD_NAME_MAX]; /* spec.priorityClassName, for ResourceQuota scopes (from meta) */
    char queue[GSD_NAME_MAX];  /* the queue it names, "" = none (from meta); see gsd_pod_queue() */
    struct gsd_group *grp;     /* its posted PodGroup, NULL = none (then placed alone) */
    uint8_t state, source;
    int8_t charged; /* GPUQuota bucket its running share counts in: 1 dedicated, 2 shared, 0 none */
    int32_t qcharged;       /* 1 + the Volcano queue its running share counts in, 0 = none */
    int64_t qmilli;         /* the GPU share it counts there */
    struct gs_placement pl; /* valid when running; a MIG pod's names no card (the engine's part) */
    char mig[GSD_MIG_MAX];  /* MIG profile asked, "" = none (then the two below are unused) */
    int8_t mig_gpu;         /* running MIG pod: its card on pl.node (-1 none) */
    int8_t mig_start;       /* running MIG pod: its instance's first memory slice */
    int16_t mig_milli;      /* running MIG pod: its GPUQuota share (gs_mig_profile_share_milli) */
    char reason[GSD_REASON_MAX];
    const char *why; /* a pending pod's main reason, kube-scheduler words (static), or NULL */
    int64_t submit_us, start_us;
    struct gsd_pod *hnext;         /* hash chain by namespace/name */
    struct gsd_pod *prev, *next;   /* every pod, by seq */
    struct gsd_pod *pprev, *pnext; /* pending pods, by seq */
};

/* ---- the durable store (store.c) ---- */

struct gsd_store;
struct gsd_ext_names;
struct gsd_bind;

/*
 * gsd_store_open() - open or create DIR/gpusched.db (WAL, synchronous=FULL, foreign keys).
 * A store of an older schema is brought forward first (store.c says what each step adds).
 * Return: 0 and *@out; -EIO with @d (cannot open, not a gpusched store, newer schema, a step
 * failed).
 */
int gsd_store_open(const char *dir, struct gsd_store **out, struct gs_diag *d);
void gsd_store_close(struct gsd_store *s);
int gsd_store_begin(struct gsd_store *s);
/* gsd_store_commit() - commit the open transaction. Return: 0; -EIO (then it was rolled back). */
int gsd_store_commit(struct gsd_store *s);
void gsd_store_rollback(struct gsd_store *s);
/*
 * gsd_store_probe() - commit a transaction of its own that writes one row (meta 'probe' = @now_us,
 * wall clock), to learn whether the store can commit now (a full disk, a file size limit, an I/O
 * error say it cannot). Call outside a transaction. Return: 0; -EIO (rolled back; logged).
 */
int gsd_store_probe(struct gsd_store *s, int64_t now_us);
/* gsd_store_pod_insert() - insert @p (sets p->id), its cards and, when running, its ledger row.
 * @node, @model: the node's name and GPU model (catalog name, "" none) when running; the ledger
 * keeps the model (and the MIG profile) so bills price a run as it was. Return: 0; -EIO. */
int gsd_store_pod_insert(struct gsd_store *s, struct gsd_pod *p, const char *node,
                         const char *model);
/* gsd_store_pod_start() - a pending pod got @p->pl on @node (GPU @model): state, cards, ledger. */
int gsd_store_pod_start(struct gsd_store *s, const struct gsd_pod *p, const char *node,
                        const char *model);
/* gsd_store_pod_unstart() - a running pod goes back to pending (its node vanished). */
int gsd_store_pod_unstart(struct gsd_store *s, const struct gsd_pod *p, int64_t end_us);
/* gsd_store_pod_delete() - remove @p and its cards; close its ledger row at @end_us. */
int gsd_store_pod_delete(struct gsd_store *s, const struct gsd_pod *p, int64_t end_us);
/* gsd_store_next_seq() - one past the largest seq ever stored (pods and ledger). */
int64_t gsd_store_next_seq(struct gsd_store *s);

/*
 * Node and card health, stored only when it changes (not every heartbeat): a node row says the
 * node is watched by heartbeats and whether it is Ready; a card row exists while it is unhealthy.
 * gsd_store_node_put() / gsd_store_gpu_put() replace the row (@healthy 1 deletes the card's).
 * Return: 0; -EIO.
 */
int gsd_store_node_put(struct gsd_store *s, const char *node, int ready, int64_t since_us);
int gsd_store_gpu_put(struct gsd_store *s, const char *node, int gpu, int healthy, int xid,
                      int64_t since_us);
/*
 * gsd_store_health_load() - call @node_fn for every stored node row and @gpu_fn for every
 * unhealthy card, in name order. Return: 0; a callback's negative return; -EIO.
 */
int gsd_store_health_load(
    struct gsd_store *s, int (*node_fn)(void *ud, const char *node, int ready, int64_t since_us),
    int (*gpu_fn)(void *ud, const char *node, int gpu, int xid, int64_t since_us), void *ud);

/* One run of a pod on its cards, as the ledger records it. */
struct gsd_run {
    char tenant[GSD_NAME_MAX], ns[GSD_NAME_MAX], name[GSD_NAME_MAX];
    char node[GS_NAME_MAX];
    char model[GS_NAME_MAX]; /* the node's GPU model when it ran, "" when not recorded */
    char mig[GSD_MIG_MAX];   /* its MIG profile, "" none */
    int cards;               /* cards held */
    int gpu_milli; /* per card: 1000 whole, 1..999 a share or a MIG instance's part, 0 no GPU */
    int64_t start_us, end_us; /* wall clock; end 0 while it runs */
};
/*
 * gsd_store_ledger() - call @fn for every ledger row of @tenant (NULL: every tenant), oldest
 * first. Return: 0; the callback's negative return; -EIO.
 */
int gsd_store_ledger(struct gsd_store *s, const char *tenant,
                     int (*fn)(void *ud, const struct gsd_run *run), void *ud);

/* One stored pod handed to gsd_store_load()'s callback; node is "" when pending. */
struct gsd_stored {
    struct gsd_pod pod; /* meta is owned by the callback once called */
    char node[GS_NAME_MAX];
};
/*
 * gsd_store_load() - call @fn for every stored pod in seq order, with its cards in pod.pl
 * (gpu_mask, gpu_milli; node left -1 for the caller to resolve), a MIG pod's card and instance
 * start in pod.mig_gpu and pod.mig_start (-1 and 0 when it has none stored).
 * Return: 0; the callback's negative return; -EIO; -ENOMEM.
 */
int gsd_store_load(struct gsd_store *s, int (*fn)(void *ud, struct gsd_stored *sp), void *ud);

/*
 * PodGroups: gsd_store_group_put() inserts @g's row, gsd_store_group_delete() removes it;
 * gsd_store_group_load() calls @fn for every stored one, oldest first.
 * Return: 0; the callback's negative return; -EIO.
 */
int gsd_store_group_put(struct gsd_store *s, const struct gsd_group *g);
int gsd_store_group_delete(struct gsd_store *s, const struct gsd_group *g);
int gsd_store_group_load(struct gsd_store *s, int (*fn)(void *ud, const struct gsd_group *g),
                         void *ud);

/* ---- the Kubernetes API server (kube.c) ---- */

/*
 * What an extender bind leaves to the API server once its cards are committed. It is done on the
 * HTTP connection's thread, never on the scheduler thread, where a slow API server would stall
 * every request; a refusal is handed back to the scheduler thread (GSD_REQ_UNBIND).
 */
struct gsd_bind {
    char ns[GSD_NAME_MAX], name[GSD_NAME_MAX], uid[GSD_UID_MAX], node[GS_NAME_MAX];
    int64_t seq;                   /* the pod held: a release touches no later pod of that name */
    char *patch, *binding;         /* the request bodies, JSON text */
    struct gsd_kube kube;          /* a copy: a reload meanwhile changes nothing */
    char err[2 * GS_DIAG_MSG_MAX]; /* why it failed: our words, then the API server's */
};

/*
 * gsd_bind_new() - the API calls that bind running pod @p to node @node in the API server @k:
 * a merge patch of @assignment (gsd_pod_assignment()) into the pod's annotations and a v1
 * Binding (metadata name, namespace and, when known, uid; target the Node), as kube-scheduler's
 * DefaultBinder sends it. Return: the job (free with gsd_bind_free()); NULL out of memory.
 */
struct gsd_bind *gsd_bind_new(const struct gsd_kube *k, const struct gsd_pod *p, const char *node,
                              const json_t *assignment);
void gsd_bind_free(struct gsd_bind *b);

enum { GSD_KUBE_BOUND = 0, GSD_KUBE_REFUSED = 1, GSD_KUBE_UNKNOWN = 2 };
/*
 * gsd_kube_bind() - PATCH /api/v1/namespaces/NS/pods/NAME (the annotations), then POST
 * .../binding (and GET the pod after a 409 whose message does not settle it), within
 * b->kube.timeout_ms in all, with the bearer token read from b->kube.token_file now. Blocks; call
 * it on no thread that holds the state. Return: GSD_KUBE_BOUND, also for a 409 when the pod is
 * already assigned to that very node (a Binding sent again; its message says so, or GET of the pod
 * shows it); GSD_KUBE_REFUSED: the pod is not bound (an answer other than 2xx, no connection, an
 * unreadable token), b->err names the API server's answer (its Status message and code) or the
 * failure; GSD_KUBE_UNKNOWN: the Binding went unanswered (the connection broke after it was sent,
 * or a 504) and so did its second send, so it may have been applied (b->err says so).
 */
int gsd_kube_bind(struct gsd_bind *b);

/* The label bind puts on every pod it binds, so the pod sync lists only those. */
#define GSD_MANAGED_LABEL       "gpusched.io/managed"
#define GSD_MANAGED_LABEL_QUERY "gpusched.io%2Fmanaged"
/*
 * gsd_kube_live() - the pods bind labelled that Kubernetes still runs or is about to:
 * GET /api/v1/pods?labelSelector=gpusched.io/managed in pages of 500, each within
 * k->timeout_ms and all of them within 20 of it, less those whose status.phase is Succeeded or
 * Failed (their cards are free though the objects stay). Blocks; call it on no thread that holds
 * the state; it gives up between pages once *@stop is set. Return: 0 and *@live, an object of
 * "NS/NAME" to metadata.uid (new reference); -EIO with @why (no connection, a refusal, not a pod
 * list, an item without namespace, name or uid, a continue token given twice, too slow, the
 * token, @stop); -ENOMEM.
 */
int gsd_kube_live(const struct gsd_kube *k, const atomic_int *stop, json_t **live, char *why,
                  size_t cap);

/* ---- the node inventory (inventory.c) ---- */

/*
 * gsd_inventory_load() - build the cluster the daemon schedules on from @path. The one place
 * that knows the inventory format (today the node CSV of include/gpusched/trace.h), so another
 * loader can take its place. Return: 0 and *@out; -EINVAL/-ENOENT/-EIO with @d; -ENOMEM.
 */
int gsd_inventory_load(const char *path, struct gs_cluster **out, struct gs_diag *d);

/* ---- requests between the threads (queue.c) ---- */

enum gsd_req_kind { GSD_REQ_HTTP = 0, GSD_REQ_RELOAD, GSD_REQ_STOP, GSD_REQ_UNBIND, GSD_REQ_SYNC };

struct gsd_qarg {
    char key[32];
    char val[GSD_QARG_LEN];
};

struct gsd_req {
    enum gsd_req_kind kind;
    char method[8];
    char path[512];
    struct gsd_qarg qargs[GSD_QARGS_MAX];
    int nqargs;
    int qarg_too_long; /* a query argument was cut: the request is refused */
    char *body;
    size_t len;
    int auth; /* 0 no Authorization header, 1 a bearer token (token_sha), 2 another scheme */
    uint8_t token_sha[GSD_SHA256_LEN];
    int who;                     /* gsd_access_check(): GSD_AUTH_*, or a tenant's index */
    char tenant[GSD_NAME_MAX];   /* ... and then the tenant's name */
    struct MHD_Connection *conn; /* suspended while the request waits; NULL: not from HTTP */
    struct gsd_config *new_cfg;  /* GSD_REQ_RELOAD: handed over, owned by the scheduler after */
    struct gsd_bind *bind;       /* an extender bind's API calls, made after the answer (owned) */
    json_t *live;                /* GSD_REQ_SYNC: gsd_kube_live()'s pods (owned) */
    int64_t listed_us;           /* GSD_REQ_SYNC: wall clock when that list was asked for */
    int64_t arrive_us;           /* monotonic */
    /* the answer */
    int status;
    char *resp; /* malloc'd, handed to libmicrohttpd */
    size_t resp_len;
    const char *ctype;
    int64_t retry_after; /* seconds; 0 = no header */
    int done;
    pthread_cond_t cv;
    struct gsd_req *next;
};

/* ---- the scheduler thread's state and handlers ---- */

/* One priority among the pending pods: its last pod in the pending list and how many it has. */
struct gsd_plevel {
    int32_t prio;
    struct gsd_pod *tail;
    size_t n;
};

struct gsd_hist {
    const double *bounds; /* upper bounds in seconds, ascending */
    int n;
    uint64_t count[24]; /* per bucket (not cumulative), last one +Inf */
    uint64_t total;
    int64_t sum_us;
};

struct gsd_extpod {
    char key[2 * GSD_NAME_MAX];
    struct gsd_podspec spec;
    int used;
};

/*
 * One node's health as its agent reports it (health.c). Cards of a NotReady node, and unhealthy
 * cards, are kept from placement by holding their free share (and a NotReady node's free CPU and
 * memory) in the engine, so every placement path (API, retries, extender) skips them alike; the
 * held amounts are never shown as allocated.
 */
struct gsd_node_health {
    uint8_t watched; /* a heartbeat came once: the grace period applies from then on */
    uint8_t ready;
    uint32_t bad_mask;        /* unhealthy cards */
    int32_t xid[GS_GPUS_MAX]; /* per unhealthy card: the Xid reported, 0 = none given */
    int64_t last_beat_us;     /* node-monitor clock (gsd_clock_us()) of the last heartbeat */
    int64_t since_us;         /* wall clock of the last Ready change */
    uint16_t held_milli[GS_GPUS_MAX]; /* per card, share held back from placement */
    int64_t held_cpu_milli, held_memory_mib;
};

/* GPUQuota use of one tenant per catalog model, in milli-GPU. */
struct gsd_quota_use {
    int64_t dedicated[GS_MODEL_MAX], shared[GS_MODEL_MAX];
};
struct gsd_user_use {
    char tenant[GSD_NAME_MAX], user[GSD_NAME_MAX];
    int32_t running;
};
/* What the running pods of one Volcano queue hold. */
struct gsd_queue_use {
    int64_t gpu_milli, cpu_milli, memory_mib;
};
/* ResourceQuota resources counted: requests.nvidia.com/gpu (milli-GPU), requests.nvidia.com/gpumem
 * (MiB, cards x per card), requests.cpu (milli-cores), requests.memory (MiB), pods. */
#define GSD_RQ_RES 5
extern const char *const gsd_rq_res[GSD_RQ_RES];

struct gsd_state {
    struct gsd_config *cfg;
    struct gs_cluster *cluster;
    struct gs_profile *prof;
    struct gs_sched *sched;
    struct gsd_store *store;
    uint32_t min_card_mib;
    /* pods */
    struct gsd_pod **tab;
    size_t tab_cap, npods, nrunning, npending;
    struct gsd_pod *head, *tail, *phead, *ptail;
    struct gsd_plevel *plevels; /* the priorities pending pods have, highest first (state.c) */
    size_t nplevels, capplevels;
    int64_t next_seq;
    int retry;  /* capacity was released: retry pending pods */
    int failed; /* a store write failed: the batch is rolled back and the daemon exits */
    /* extender: pods seen by filter, for bind */
    struct gsd_extpod *ext;
    size_t ext_next;
    /* extender: the last NodeNames array read and its node indexes (extender.c), since
     * kube-scheduler sends the same one call after call */
    struct gsd_ext_names *ext_names;
    /* metrics */
    struct gsd_hist sched_lat, commit_lat;
    uint64_t placed_total, cancelled_total, http_requests[6]; /* by status class 1xx..5xx */
    uint64_t requeued_total, preempted_total;
    json_t *bill_cache; /* gsd_bill_accrued()'s last answer, and when (monotonic) */
    int64_t bill_cache_at_us;
    int32_t prio_floor; /* no running pod was ever of lower priority (a bound kept as pods run) */
    int64_t started_us;
    struct gsd_http_stats *http; /* the listener's counters (server.c); NULL without one */
    /* node and card health, one per node of the cluster */
    struct gsd_node_health *health;
    size_t not_ready;              /* nodes NotReady now */
    struct gsd_node_mig *mig;      /* MIG state, one per node of the cluster (mig.c) */
    struct gsd_mig_memo *mig_memo; /* empty cards' best placements per MIG model (mig.c) */
    int manual_clock;      /* --manual-clock: the node-monitor clock moves only by POST /v1/clock */
    int64_t manual_now_us; /* that clock */
    /* quota use (quota.c), recounted from the running pods at start and at every reload */
    struct gsd_quota_use *quse;     /* per config tenant */
    int64_t (*rq_used)[GSD_RQ_RES]; /* per ResourceQuota of cfg->quotas, as gsd_rq_res names */
    struct gsd_queue_use *qused;    /* per Queue document, then the implicit default (queue.c) */
    struct gsd_user_use *users;     /* running pods per tenant and user, for maxPodsPerUser */
    size_t nusers, capusers;
    /* PodGroups (gang.c), in creation order; each allocated alone so pods may point at it */
    struct gsd_group **groups;
    size_t ngroups, capgroups;
    uint64_t pass; /* retry passes run, to try each gang once per pass */
};

/*
 * gsd_state_init() - take @cfg and @cluster (owned from now on), open the store in @data_dir,
 * restore every stored pod (running pods re-bound to their very cards) and retry the pending.
 * Return: 0; negative errno with @d.
 */
int gsd_state_init(struct gsd_state *st, struct gsd_config *cfg, struct gs_cluster *cluster,
                   const char *data_dir, struct gs_diag *d);
void gsd_state_free(struct gsd_state *st);

/* gsd_state_retry() - place pending pods, highest priority first, then in arrival order, when
 * capacity came back; a pod that still does not fit may preempt (gsd_preempt_for()). */
int gsd_state_retry(struct gsd_state *st);

/* gsd_state_reload() - put @cfg in force (bucket levels carried over by tenant name). */
void gsd_state_reload(struct gsd_state *st, struct gsd_config *cfg);

/* Pod table (state.c), used by the API and extender handlers. */
struct gsd_pod *gsd_pod_find(struct gsd_state *st, const char *ns, const char *name);
/* gsd_pod_add() - register @spec as a new pod, place it (or bind it to @node when >= 0) and
 * store it; a member of a PodGroup not yet running is tried with its gang (gsd_gang_try()).
 * Return: the pod; NULL with @e (409 duplicate, 507 full, 400 over maxGPUsPerPod or never
 * placeable, 409 a bind that does not fit or is over quota, 500, 503 the store failed). */
struct gsd_pod *gsd_pod_add(struct gsd_state *st, struct gsd_podspec *spec, const char *tenant,
                            int source, int node, struct gsd_ferr *e);
/* gsd_node_model() - the catalog name of node @node's GPU model, "" when it has none. */
const char *gsd_node_model(const struct gsd_state *st, int node);
/*
 * gsd_pod_probe() - fill @p's request, names and group from @spec, @tenant ("" or NULL: none), as
 * gsd_pod_add() would, without registering anything: what quota checks read. The labels and
 * annotations stay @spec's (p->meta is not set).
 */
void gsd_pod_probe(const struct gsd_state *st, const struct gsd_podspec *spec, const char *tenant,
                   struct gsd_pod *p);
/* gsd_pod_cancel() - release and forget @p. Return: 0; -EIO. */
int gsd_pod_cancel(struct gsd_state *st, struct gsd_pod *p);
/* gsd_time_json() - @us (wall clock) in RFC 3339 UTC with microseconds, as Kubernetes' MicroTime;
 * null for 0. New reference. */
json_t *gsd_time_json(int64_t us);
/* gsd_pod_json() - the pod as the API shows it (new reference). */
json_t *gsd_pod_json(const struct gsd_state *st, const struct gsd_pod *p);
/*
 * gsd_pod_assignment() - the annotations that tell the node side what @p got, an object of
 * strings (new reference; NULL out of memory): gpusched.io/node, gpusched.io/gpu-index (cards,
 * "0,3") and gpusched.io/gpu-milli (per card, 1000 a whole one, "0" without a GPU); empty while
 * @p is pending. GET /v1/pods shows them and bind writes them to the pod in Kubernetes: the one
 * place they are made.
 */
json_t *gsd_pod_assignment(const struct gsd_state *st, const struct gsd_pod *p);

/*
 * gsd_pod_requeue() - a running pod lost its node or card: release it, put it back to pending
 * (in arrival order) with @why as its reason, and do the same to every running member of its
 * PodGroup, so a gang goes back whole. Pending pods and pods already requeued are left alone.
 * Return: pods requeued (>= 0); -EIO (the store failed: st->failed is set).
 */
int gsd_pod_requeue(struct gsd_state *st, struct gsd_pod *p, const char *why);

/* ---- quotas (quota.c) ---- */

/*
 * gsd_quota_load() - read the policy files @paths[0..@n) — the simulator's YAML kinds, loaded and
 * checked by gs_scenario_load() and gs_scenario_resolve() (include/gpusched/scenario.h) — into
 * @c->quotas, and tie each GPUQuota to the DaemonConfig tenant its spec.tenant names. Enforced:
 * GPUQuota quotas (per model: total, dedicated, shared), limits.maxGPUsPerPod and
 * limits.maxPodsPerUser (pods running per value of the pod label `user`); ResourceQuota
 * requests.nvidia.com/gpu, requests.nvidia.com/gpumem, requests.cpu, requests.memory and pods,
 * with its PriorityClass scope. Other kinds are logged as not applied by the daemon; Pods, a
 * Cluster or a Simulation are errors (pods come through the API, nodes from --nodes).
 * Warnings of the loader are logged. Return: 0; -EINVAL with @d naming file:line:column (a
 * GPUQuota of a tenant the DaemonConfig does not list among them); -ENOENT; -EIO; -ENOMEM.
 */
int gsd_quota_load(struct gsd_config *c, const char *const *paths, size_t n, struct gs_diag *d);

/*
 * gsd_quota_check() - may pod @p start now as far as quotas go? @eff gets its request with the
 * GPU models narrowed to those where its tenant's GPUQuota has room. Return: 0; GS_UNSCHEDULABLE
 * with @why (a ResourceQuota, maxPodsPerUser or GPUQuota it is over, with use, hard and ask).
 */
int gsd_quota_check(const struct gsd_state *st, const struct gsd_pod *p, struct gs_pod_req *eff,
                    char *why, size_t size);
/*
 * gsd_quota_limit() - is @spec refused outright by its tenant's maxGPUsPerPod? Return: 0; -EINVAL
 * with @e (400 naming the field).
 */
int gsd_quota_limit(const struct gsd_config *c, const char *tenant, const struct gsd_podspec *spec,
                    struct gsd_ferr *e);
/* gsd_quota_charge() - count running pod @p in (@sign 1) or out of (@sign -1) every quota it
 * falls under. Return: 0; -ENOMEM (a new user entry). */
int gsd_quota_charge(struct gsd_state *st, struct gsd_pod *p, int sign);
/* gsd_quota_recount() - forget all use and count every running pod again, in arrival order (at
 * start, after a reload). Return: 0; -ENOMEM. */
int gsd_quota_recount(struct gsd_state *st);
void gsd_quota_free(struct gsd_state *st);
/* gsd_quota_json() - tenant @t's GPUQuota hard and used per model, and its namespaces'
 * ResourceQuotas (new reference; null when it has neither). */
json_t *gsd_quota_json(const struct gsd_state *st, const struct gsd_tenant *t);

/*
 * Placement steps for gangs (state.c). gsd_pod_place() runs quotas and the engine for pending
 * pod @p: on 0 it holds cards and counts in its quotas but is still on the pending list, until
 * gsd_pod_started() (unlist, store, log; 0 or -EIO) or gsd_pod_unplace() (give all back).
 * gsd_pod_place() returns 0, GS_UNSCHEDULABLE or -EINVAL with p->reason, or -ENOMEM.
 */
int gsd_pod_place(struct gsd_state *st, struct gsd_pod *p);
int gsd_pod_started(struct gsd_state *st, struct gsd_pod *p);
void gsd_pod_unplace(struct gsd_state *st, struct gsd_pod *p);

/* ---- Volcano queues (queue.c) ---- */

/*
 * With Queue documents (scheduling.volcano.sh/v1beta1) among the policy files, a pod belongs to
 * the queue its PodGroup's spec.queue names, else the one its annotation
 * scheduling.volcano.sh/queue-name names, else the queue named after its tenant when there is
 * one, else `default` — Volcano's default queue, implicit (weight 1, no capability) unless a Queue
 * document defines it: the simulator's rule. Each queue's capability caps
 * what its running pods hold (nvidia.com/gpu with overcommitRatio for shares, cpu, memory); its
 * deserved share is the cluster's GPU capacity water-filled by weight, capped at its demand and
 * capability. Without Queue documents each tenant is one queue weighted by its DaemonConfig
 * `weight` (accounts.c), and queue names in pods are only shown.
 */

/* gsd_queues_volcano() - whether the configuration has Queue documents. */
int gsd_queues_volcano(const struct gsd_config *c);
/* gsd_pod_queue() - the name of @p's queue (the tenant's name without Queue documents). */
const char *gsd_pod_queue(const struct gsd_state *st, const struct gsd_pod *p);
/*
 * gsd_queue_find() - the index of queue @name among the Queue documents; their count for the
 * implicit `default`; -1 when no such queue exists.
 */
int gsd_queue_find(const struct gsd_config *c, const char *name);
/*
 * gsd_queue_check() - may @p start as far as its queue goes? Return: 0; GS_UNSCHEDULABLE with
 * @why (the queue does not exist, or the capability it would pass, with use, cap and ask).
 */
int gsd_queue_check(const struct gsd_state *st, const struct gsd_pod *p, char *why, size_t size);
/*
 * gsd_queue_known() - whether queue @name ("" = none named) may be named: always without Queue
 * documents; otherwise answers @r 400 on @field when no such queue exists, as Volcano's
 * admission refuses a job or PodGroup of an unknown queue. Return: 1 known, 0 answered.
 */
int gsd_queue_known(const struct gsd_state *st, const char *name, const char *field,
                    struct gsd_req *r);
/* gsd_queue_charge() - count running pod @p in (@sign 1) or out of (-1) its queue's use. */
void gsd_queue_charge(struct gsd_state *st, struct gsd_pod *p, int sign);
/*
 * gsd_queues_list() - GET /v1/queues (or /v1/queues/@name: 404 when unknown) with Queue
 * documents: weight, capability, reclaimable, deserved, allocated and pending GPU share, pods.
 */
void gsd_queues_list(struct gsd_state *st, struct gsd_req *r, const char *name);
/* ---- MIG instances (mig.c) ---- */

#define GSD_MIG_MODELS_MEMO 16 /* MIG models whose empty-card placements are remembered */
struct gsd_mig_memo;

/*
 * One node's cards as MIG sees them. A card turns to MIG mode when the first instance is created
 * on it, which happens only to a card with nothing on it, and back to whole/shared use when its
 * last instance goes. While in MIG mode the whole card is held in the engine (bound as one
 * 1000-milli share that belongs to no pod), so no whole-card or shared pod can land on it by any
 * path; a MIG pod's own placement (struct gsd_pod pl) holds only its CPU and memory there.
 */
struct gsd_node_mig {
    int16_t model;                        /* gs_mig_model_find() of the node's model, < 0 none */
    struct gs_mig_card card[GS_GPUS_MAX]; /* mig_mode set while an instance lives on it */
};

/* Why a MIG pod does not fit a node (gsd_mig_reason() gives the words). */
enum gsd_mig_fit {
    GSD_MIG_OK = 0,
    GSD_MIG_MODEL,  /* the node's model has no such profile, or the pod's gpu-model excludes it */
    GSD_MIG_POLICY, /* the GpuClusterPolicy does not allow the profile on the node's model */
    GSD_MIG_CPU,    /* Insufficient cpu */
    GSD_MIG_MEMORY, /* Insufficient memory */
    GSD_MIG_ROOM,   /* no free or MIG card of the node has a free placement for it */
    GSD_MIG_QUOTA,  /* the pod may use the node's model, but its tenant's GPUQuota has no room */
    GSD_MIG_FITS
};

/* Where a MIG instance would go on one node. */
struct gsd_mig_choice {
    int gpu, start; /* card index on the node, first memory slice */
    int score;      /* gs_mig_card_score(): 500..999 a card in MIG mode, 0..499 one to convert */
};

/* gsd_mig_init() - every card of @st's cluster out of MIG mode. Return: 0; -ENOMEM. */
int gsd_mig_init(struct gsd_state *st);
/*
 * gsd_mig_admit() - may a pod asking MIG profile @spec->mig ever run here? Refused (400 naming
 * the resource, with the reason) when no GpuClusterPolicy is loaded, its strategy is not
 * "mixed", or it allows the profile on no GPU model of the inventory that the pod's
 * gpusched.io/gpu-model accepts. Return: 0; -EINVAL with @e.
 */
int gsd_mig_admit(const struct gsd_state *st, const struct gsd_podspec *spec, struct gsd_ferr *e);
/*
 * gsd_mig_fit() - can an instance of @profile, with @req's CPU and memory (its model_mask: the
 * catalog models allowed, 0 any), go on node @node now, and where: among the node's cards in MIG
 * mode and its empty healthy ones, the best gs_mig_card_score(), ties to the lowest card.
 * @asked: the model mask the pod itself asked (0 any); a model it asked that @req leaves out
 * (its tenant's GPUQuota narrowed @req, gsd_quota_check()) is GSD_MIG_QUOTA, not GSD_MIG_MODEL.
 * Read only. Return: GSD_MIG_OK with @out; another enum gsd_mig_fit (out untouched).
 */
int gsd_mig_fit(const struct gsd_state *st, const char *profile, const struct gs_pod_req *req,
                uint32_t asked, size_t node, struct gsd_mig_choice *out);
/*
 * gsd_mig_fits_without() - would an instance of @profile with @req's CPU and memory fit node
 * @node were the running pods @gone[0..@n) (on that node; the caller's) evicted: their CPU and
 * memory back, their instances destroyed (a card whose last one goes is empty again), their
 * whole or shared cards given back (a card they all leave is empty, and converts). Read only.
 * Return: 1 fits; 0 not.
 */
int gsd_mig_fits_without(const struct gsd_state *st, const char *profile,
                         const struct gs_pod_req *req, size_t node,
                         const struct gsd_pod *const *gone, size_t n);
/* gsd_mig_reason() - @r in kube-scheduler's manner, naming @profile: "no card can host
 * mig-3g.40gb". @buf: at least 128 bytes. Return: @buf. */
const char *gsd_mig_reason(int r, const char *profile, char *buf, size_t size);
/*
 * gsd_mig_take() - create @p's instance: on node @node when >= 0 (a bind), else on the node whose
 * best card scores highest (ties to the lowest node index). @eff: @p's CPU, memory and allowed
 * models (as quotas leave them). Sets p->pl (node; no card), mig_gpu, mig_start, mig_milli.
 * Return: 0; GS_UNSCHEDULABLE with @why ("0/4 nodes are available: ...") and @main (the reason
 * most nodes gave, a static string); -EINVAL with @why (the engine refused the node's CPU and
 * memory for a request it finds invalid); -ENOMEM. Nothing is held on failure.
 */
int gsd_mig_take(struct gsd_state *st, struct gsd_pod *p, const struct gs_pod_req *eff, int node,
                 struct gs_diag *why, const char **main);
/* gsd_mig_restore() - a stored running MIG pod back on its very instance (p->pl.node, mig_gpu,
 * mig_start). Return: 0; GS_UNSCHEDULABLE or -EINVAL with @why; -ENOMEM. */
int gsd_mig_restore(struct gsd_state *st, struct gsd_pod *p, struct gs_diag *why);
/* gsd_mig_release() - destroy @p's instance (nothing for a pod without one); its card leaves
 * MIG mode when it was the last. The engine's part (CPU, memory) is the caller's. */
void gsd_mig_release(struct gsd_state *st, struct gsd_pod *p);
/*
 * gsd_pod_share_milli() - the GPU share pod @p holds or asks, milli-GPU: cards x share per card;
 * a MIG instance's part of its card (gs_mig_profile_share_milli()) on its card's model while it
 * runs, else on the inventory's first model (catalog order) that has the profile, as the
 * simulator counts a MIG demand on its cluster's first such model (0 when none has it).
 * O(catalog models).
 */
int64_t gsd_pod_share_milli(const struct gsd_state *st, const struct gsd_pod *p);
/*
 * gsd_mig_holds_freed() - the cards of node @node in MIG mode whose every instance belongs to one
 * of @gone[0..@n) (running pods of that node): their whole-card holds in the engine, which those
 * pods' going would give back, as engine requests and placements into @req and @pl (room for
 * GS_GPUS_MAX each), so a whole-card or shared pod can be weighed against them.
 * Return: how many (0..GS_GPUS_MAX).
 */
int gsd_mig_holds_freed(const struct gsd_state *st, size_t node, const struct gsd_pod *const *gone,
                        size_t n, struct gs_pod_req *req, struct gs_placement *pl);
/* gsd_pod_cards() - the cards running pod @p holds on its node: the engine's, or its MIG card. */
uint32_t gsd_pod_cards(const struct gsd_pod *p);
/* gsd_mig_card_json() - {"mode": "whole"|"mig", "mig_instances": [{"profile", "start"}]}
 * of card @gpu of node @node, merged into @card. */
void gsd_mig_card_json(const struct gsd_state *st, size_t node, int gpu, json_t *card);

/* ---- PodGroups (gang.c) ---- */

/* gsd_group_find() - the PodGroup @ns/@name, or NULL. O(groups). */
struct gsd_group *gsd_group_find(const struct gsd_state *st, const char *ns, const char *name);
/* gsd_gang_waiting() - @g is a gang not yet running: fewer than minMember members run. */
int gsd_gang_waiting(const struct gsd_group *g);
/*
 * gsd_gang_try() - place @g's pending members in one go: when, with those already running, at
 * least minMember members then run they all start; otherwise every card taken is given back and
 * each pending member waits with a reason naming the gang ("gang NS/NAME: 3 of 4 members
 * placeable"). Return: 0; -ENOMEM; -EIO (the store failed: st->failed is set).
 */
int gsd_gang_try(struct gsd_state *st, struct gsd_group *g);
/*
 * gsd_gang_fits() - for the extender, which sees one member at a time: could @g's missing members
 * (minMember less those running) all be placed now, each asking @req? Every trial placement is
 * given back before it returns. Return: 0; GS_UNSCHEDULABLE with @why ("gang NS/NAME: 2 of 4
 * members placeable; ..."); -ENOMEM.
 */
int gsd_gang_fits(struct gsd_state *st, const struct gsd_group *g, const struct gs_pod_req *req,
                  char *why, size_t size);
/* gsd_groups_restore() - load the stored PodGroups (before the pods). Return: 0; -EIO; -ENOMEM. */
int gsd_groups_restore(struct gsd_state *st);
/* gsd_groups_recount() - each PodGroup's members and running members, from the pods. */
void gsd_groups_recount(struct gsd_state *st);
void gsd_groups_free(struct gsd_state *st);
/*
 * gsd_podgroups_handle() - POST /v1/podgroups (a Volcano PodGroup: metadata.name, namespace,
 * spec.minMember, spec.queue, spec.priorityClassName; 400 naming the field, 409 when it exists),
 * GET /v1/podgroups, GET|DELETE /v1/podgroups/NS/NAME (DELETE: 409 while pods name it).
 * @rest: what follows "/v1/podgroups" ("" or "/NS/NAME"); @viewer: the tenant, NULL for admin.
 */
void gsd_podgroups_handle(struct gsd_state *st, struct gsd_req *r, const struct gsd_tenant *viewer,
                          const char *rest);

/* ---- node and card health (health.c) ---- */

/* gsd_clock_us() - the node-monitor clock: monotonic, or the manual one with --manual-clock. */
int64_t gsd_clock_us(const struct gsd_state *st);
/* gsd_clock_manual() - switch to the manual clock (at 0); every watched node beats at 0. */
void gsd_clock_manual(struct gsd_state *st);
/*
 * gsd_health_init() - read the stored node and card health and hold back what is unavailable;
 * watched Ready nodes count their grace period from now. Call after the pods are restored.
 * Return: 0; -ENOMEM; -EIO.
 */
int gsd_health_init(struct gsd_state *st);
/* gsd_health_beat() - a heartbeat from node @node: watched from now on, Ready again when it was
 * not (its cards come back). Return: 0; -EIO. */
int gsd_health_beat(struct gsd_state *st, size_t node);
/*
 * gsd_health_gpu() - node @node's agent reports card @gpu healthy or not, with the Xid it saw
 * (0 = none given). An unhealthy card takes no new pods; gsd_xid_kills() says whether the pods
 * on it are requeued too. Return: 0; -EIO.
 */
int gsd_health_gpu(struct gsd_state *st, size_t node, int gpu, int healthy, int xid);
/*
 * gsd_xid_kills() - whether Xid @xid means the work on the card died: the ones NVIDIA's Xid
 * catalogue (docs.nvidia.com/deploy/xid-errors) has end or lose the running contexts — 48
 * (double-bit ECC), 63/64 (row remapping), 74 (NVLink), 79 (fallen off the bus), 94/95
 * (contained/uncontained ECC) — and 0, a report without an Xid, taken at its worst.
 */
int gsd_xid_kills(int xid);
/* gsd_health_expire() - mark NotReady every watched node silent for the grace period and
 * requeue its pods. Return: 0; -EIO. */
int gsd_health_expire(struct gsd_state *st);
/* gsd_health_deadline() - monotonic time of the next possible expiry; INT64_MAX for none. */
int64_t gsd_health_deadline(const struct gsd_state *st);
/* gsd_health_released() - capacity was released on node @node: hold it back too when that node
 * or one of its cards is unavailable. */
void gsd_health_released(struct gsd_state *st, int node);

/* Answers (api.c). */
void gsd_reply_json(struct gsd_req *r, int status, json_t *body);
void gsd_reply_error(struct gsd_req *r, int status, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/*
 * gsd_ns_owned() - whether namespace @ns belongs to a tenant of the config (always, when the config
 * names no tenant); otherwise answers @r 400 on metadata.namespace. Return: 1 owned, 0 answered.
 */
int gsd_ns_owned(struct gsd_state *st, const char *ns, struct gsd_req *r);
/* gsd_api_handle() - route and answer one HTTP request (inside the batch's transaction). */
void gsd_api_handle(struct gsd_state *st, struct gsd_req *r);
const char *gsd_qarg(const struct gsd_req *r, const char *key);
int64_t gsd_now_us(void);  /* wall clock, Unix epoch */
int64_t gsd_mono_us(void); /* monotonic */

/* Extender verbs (extender.c): @verb is "filter", "prioritize", "preempt" or "bind". A bind
 * that took cards with `kubernetes:` configured leaves r->bind for the HTTP thread (server.c). */
void gsd_extender_handle(struct gsd_state *st, struct gsd_req *r, const char *verb);
/*
 * gsd_extender_unbind() - the API server refused bind @b: release the pod it took the cards for,
 * when it is still held (same seq). Run on the scheduler thread, inside a batch.
 */
void gsd_extender_unbind(struct gsd_state *st, const struct gsd_bind *b);
/*
 * gsd_extender_sync() - release every pod bind took cards for that Kubernetes no longer runs:
 * absent from @live (gsd_kube_live()), or there under another UID (deleted and made again), as
 * long as it was bound timeoutSeconds and a second before @listed_us (wall clock: when the list
 * was asked for): a bind's API calls, which label the pod, end within timeoutSeconds of its
 * commit, so a pod still being bound is never taken for gone. Return: pods released; -EIO.
 */
int gsd_extender_sync(struct gsd_state *st, const json_t *live, int64_t listed_us);
/* gsd_extender_free() - free what the extender keeps in @st between calls. */
void gsd_extender_free(struct gsd_state *st);
/* gsd_jget() - member @key of object @obj: exact first, then any case, as Go's encoding/json
 * decodes; NULL when absent or @obj is not an object. Borrowed. */
json_t *gsd_jget(const json_t *obj, const char *key);
/* gsd_extender_preempt() - the preempt verb (preempt.c) on ExtenderPreemptionArgs @args:
 * 200 with ExtenderPreemptionResult, 400 naming the bad field, 500 out of memory. */
void gsd_extender_preempt(struct gsd_state *st, struct gsd_req *r, const json_t *args);

/*
 * gsd_priority_resolve() - what Kubernetes' Priority admission does to a pod, with the
 * PriorityClass documents among the policy files: spec.priorityClassName gives spec.priority its
 * class's value (a class not found among them is a 400 naming the field); a pod naming none gets
 * the globalDefault class's value, else 0. A spec.priority other than that value is a 400 naming
 * spec.priority: a pod cannot rank itself above others. Return: 0; -EINVAL with @e.
 */
int gsd_priority_resolve(const struct gsd_state *st, struct gsd_podspec *spec, struct gsd_ferr *e);
/*
 * gsd_priority_class_known() - whether PriorityClass @name ("" = none named) may be named: always
 * without PriorityClass documents; otherwise answers @r 400 on @field when none has that name.
 * Return: 1 known, 0 answered.
 */
int gsd_priority_class_known(const struct gsd_state *st, const char *name, const char *field,
                             struct gsd_req *r);
/*
 * gsd_preempt_for() - pending pod @p fits nowhere: make room by requeueing running pods of lower
 * priority, as kube-scheduler's DefaultPreemption chooses them — on each node the fewest victims
 * in eviction order (lowest priority, then the latest started) that let it fit, on the node whose
 * most important victim is least important, then with the fewest victims. Victims are API pods
 * (kube-scheduler preempts those it bound, through the preempt verb) of @p's own queue, as
 * Volcano's preempt action (across queues it would be reclaim, which the daemon does not do); a
 * victim's PodGroup goes back whole. Not tried for a member of a gang not yet running, a pod over a
 * quota, or one whose PriorityClass says preemptionPolicy Never. Return: 0 @p placed (as
 * gsd_pod_place() leaves it); GS_UNSCHEDULABLE; -ENOMEM; -EIO (the store failed).
 */
int gsd_preempt_for(struct gsd_state *st, struct gsd_pod *p);

/* Node endpoints (health.c): POST /v1/nodes/NAME/heartbeat, POST .../gpus/INDEX/health and
 * POST /v1/clock; @rest is what follows "/v1/nodes/" (or NULL for /v1/clock). */
void gsd_node_post(struct gsd_state *st, struct gsd_req *r, const char *rest);
/* gsd_node_json() - node @i as GET /v1/nodes shows it (new reference); @cards adds its cards
 * and the pods on each, only @tenant's when not NULL (others count as allocated, unnamed). */
json_t *gsd_node_json(const struct gsd_state *st, size_t i, int cards, const char *tenant);

/* Tenants, queues and bills (accounts.c). @viewer: the tenant asking, NULL for the admin. */
/* gsd_accounts_list() - GET /v1/tenants (@queues 0) or /v1/queues (1), or the one named @name. */
void gsd_accounts_list(struct gsd_state *st, struct gsd_req *r, const struct gsd_tenant *viewer,
                       int queues, const char *name);
/* gsd_bill_handle() - GET /v1/bills: the bill of tenant @name (NULL: the viewer's, or all). */
void gsd_bill_handle(struct gsd_state *st, struct gsd_req *r, const struct gsd_tenant *viewer,
                     const char *name);

/* gsd_capacity_milli() - the GPU share placement may use: every card, less those of NotReady
 * nodes and unhealthy cards (accounts.c). O(nodes x cards). */
int64_t gsd_capacity_milli(const struct gsd_state *st);

/*
 * gsd_bill_accrued() - every tenant's bill so far, runs still going priced up to now, as
 * GET /v1/bills totals it: a JSON object of tenant name to micro-dollars, borrowed (valid until
 * the next call). Read from the ledger at most once per GSD_BILL_CACHE_US, so frequent scrapes
 * cost no more than that. Return: NULL without a rate card, or when the ledger cannot be read.
 */
#define GSD_BILL_CACHE_US (60 * 1000000LL)
json_t *gsd_bill_accrued(struct gsd_state *st);

/* Metrics (metrics.c). */
void gsd_hist_observe(struct gsd_hist *h, int64_t us);
void gsd_metrics_handle(struct gsd_state *st, struct gsd_req *r);

/* ---- who may do what, before a body is read (access.c) ---- */

/* Why the listener refused a request, as /metrics counts them (gsd_reject_names[]). */
enum gsd_reject {
    GSD_REJECT_UNAUTHENTICATED, /* 401: no token, or an unknown one */
    GSD_REJECT_THROTTLED,       /* 429: too many failed authentications from the address */
    GSD_REJECT_FORBIDDEN,       /* 403: the token's role does not reach the route */
    GSD_REJECT_RATE_LIMITED,    /* 429: a tenant's token bucket is empty */
    GSD_REJECT_TOO_LARGE,       /* 413: a body over its route's cap */
    GSD_REJECT_BUSY,            /* 503: bodies in flight at http.maxBytesInFlight */
    GSD_REJECT_TOO_SLOW,        /* a body not whole within http.bodyTimeoutSeconds: closed */
    GSD_REJECT_N
};
extern const char *const gsd_reject_names[GSD_REJECT_N];

/* The listener's counters, written by any HTTP thread, read by /metrics. */
struct gsd_http_stats {
    _Atomic uint64_t rejected[GSD_REJECT_N];
    _Atomic int64_t in_flight;   /* bytes of bodies being read now */
    _Atomic int64_t connections; /* open now */
};

struct gsd_access;
/* gsd_access_new() - the access layer over @cfg (it takes a reference), counting in @stats.
 * Return: 0; -ENOMEM. */
int gsd_access_new(struct gsd_config *cfg, struct gsd_http_stats *stats, struct gsd_access **out);
void gsd_access_free(struct gsd_access *a);
/* gsd_access_reload() - put @cfg in force (a new reference), its tenants' token buckets carried
 * over from the old config by tenant name. Any thread. */
void gsd_access_reload(struct gsd_access *a, struct gsd_config *cfg);
/* gsd_access_config() - a new reference to the config in force (drop it with gsd_config_free()). */
struct gsd_config *gsd_access_config(struct gsd_access *a);
/*
 * gsd_access_body_cap() - the most bytes a body of @method @path may have: maxBodyBytes for
 * POST /v1/pods and /v1/podgroups, extender.maxBodyBytes for filter, prioritize and preempt,
 * 0 for GET, HEAD and DELETE, 64 KiB for the rest (bind, heartbeats, card health, the clock).
 */
size_t gsd_access_body_cap(const struct gsd_config *c, const char *method, const char *path);
/*
 * gsd_access_check() - steps 1 to 4 of access.c's header, on @r's method, path and Authorization
 * (r->auth, r->token_sha) from client address @addr at monotonic time @now_us. Sets r->who
 * (GSD_AUTH_*, or the tenant's index, with its name in r->tenant) and *@cap (the body's cap).
 * Any thread; O(tenants). Return: 0 go on; -1 refused, with the answer in @r (401, 403, 429).
 */
int gsd_access_check(struct gsd_access *a, struct gsd_req *r, const struct sockaddr *addr,
                     int64_t now_us, size_t *cap);

/* ---- the queue and the HTTP side (server.c) ---- */

struct gsd_server;

struct gsd_listen {
    const char *host; /* numeric IPv4 or IPv6 address */
    int port;
    const char *tls_cert, *tls_key; /* PEM files, both or neither */
};

/*
 * gsd_server_start() - start the scheduler thread over @st and the HTTP listener.
 * Return: 0 and *@out; negative errno with @d (address in use, bad certificate, ...).
 */
int gsd_server_start(struct gsd_state *st, const struct gsd_listen *l, struct gsd_server **out,
                     struct gs_diag *d);
/* gsd_server_port() - the port actually bound (useful with port 0). */
int gsd_server_port(const struct gsd_server *s);
/* gsd_server_reload() - hand @cfg to the scheduler thread and wait until it is in force. */
void gsd_server_reload(struct gsd_server *s, struct gsd_config *cfg);
/*
 * gsd_server_stop() - stop listening, finish the requests in flight, stop the scheduler, free @s.
 * Return: 1 when a store write failed while it ran, else 0.
 */
int gsd_server_stop(struct gsd_server *s);

#endif
