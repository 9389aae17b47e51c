/*
 * gpuschedd's configuration (a DaemonConfig file): tenants and their tokens, the admin and
 * node tokens, limits, the Kubernetes API server bind writes to, the policy files in force.
 */
#ifndef GSD_CONFIG_H
#define GSD_CONFIG_H

#include "gpusched/diag.h"
#include "gpusched/policy.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct gs_ratecard;
struct gs_scenario;
struct gs_tenant_spec;

#define GSD_NAME_MAX    64 /* namespace, tenant and queue names, with the NUL (63 bytes) */
#define GSD_OBJ_MAX     GS_SCN_OBJ_MAX     /* pod and PodGroup names, with the NUL (253 bytes) */
#define GSD_KEY_MAX     GS_SCN_POD_KEY_MAX /* a pod's or PodGroup's "NAMESPACE/NAME", the NUL */
#define GSD_TENANTS_MAX 1024
#define GSD_NS_MAX      GS_SCN_NAMESPACES /* namespaces per tenant: what the core's tenant holds */
#define GSD_SHA256_LEN  32
#define GSD_TOKEN_MIN   16 /* bytes of a bearer token at least: shorter ones are guessable */
/* kube-controller-manager's --node-monitor-grace-period default (40 s): a node whose agent has
 * been silent that long is NotReady. */
#define GSD_NODE_GRACE_DEFAULT_US (40 * 1000000LL)
/* How long the held members of a gang that lost a member before binding keep their cards for a
 * new one: 60 s, as long as the coscheduling plugin of kubernetes-sigs/scheduler-plugins lets a
 * gang's members wait at Permit by default (its permitWaitingTimeSeconds). */
#define GSD_SHORT_GANG_HOLD_DEFAULT_US (60 * 1000000LL)

struct gsd_tenant {
    char name[GSD_NAME_MAX];
    uint8_t token_sha[GSD_SHA256_LEN]; /* SHA-256 of the bearer token; never the token */
    char (*ns)[GSD_NAME_MAX];          /* namespaces it owns */
    size_t nns;
    int32_t weight;                     /* its pods' CPU weight on the node, 1..10000 */
    int64_t rate_milli;                 /* requests per second x 1000; 0 = no limit */
    int64_t burst;                      /* bucket size in requests */
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
    int podgroups;      /* 1 (default): Volcano's PodGroups are followed as well (gang.h) */
};

/*
 * The listener's bounds (the DaemonConfig's `http:`), each with its default. Connections past
 * maxConnections, or past maxConnectionsPerClient from one client address, are closed as they
 * are accepted; a connection silent for idleTimeoutSeconds is closed; a body must arrive whole
 * within bodyTimeoutSeconds of its headers, and a connection's first headers within
 * headerTimeoutSeconds of its start (a later request's within idleTimeoutSeconds of the answer
 * before); the bodies being read, all connections together,
 * hold at most maxBytesInFlight bytes (503 past it); an address whose bearer tokens failed
 * authFailuresPerMinute times within a minute is answered 429 until that minute is over.
 * Connections, the idle timeout and threads are the listener's at start: a reload changes
 * the others.
 */
struct gsd_http_limits {
    int64_t max_connections;  /* 4096 (also bounded by the open-file limit) */
    int64_t max_per_client;   /* 64 */
    int64_t idle_timeout_s;   /* 60 */
    int64_t body_timeout_s;   /* 30 */
    int64_t max_in_flight;    /* 64 MiB, bytes */
    int64_t threads;          /* 4: libmicrohttpd's event threads (epoll) */
    int64_t auth_failures;    /* 10 */
    int64_t header_timeout_s; /* 10: a request's headers whole this long after its connection */
};

/* GET /metrics (metrics.c): who may see names, and whether a series per pod is shown. */
struct gsd_metrics_cfg {
    int has_token;
    uint8_t token_sha[GSD_SHA256_LEN]; /* Prometheus' bearer token: GET /metrics only */
    int per_pod;                       /* perPod: true */
    int64_t scrapes_per_s;             /* scrapesPerSecond: from one client address (5) */
    int64_t max_age_ms;                /* maxAgeMilliseconds: a scrape kept while it moves (1000) */
    int64_t forecast_refresh_s;        /* forecastRefreshSeconds: the forecast's refits (300) */
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
    int64_t extender_remember_bytes;  /* bytes of the Pod objects filter remembers for bind */
    int64_t short_gang_hold_us;       /* extender.shortGangHoldSeconds, in microseconds */
    struct gsd_http_limits http;
    struct gsd_metrics_cfg metrics;
    int64_t max_pods;                 /* pods held (pending + running) */
    int64_t max_pod_bytes_per_tenant; /* bytes of the pods POST /v1/pods holds for one tenant */
    int64_t max_podgroups_per_tenant; /* PodGroups one tenant's namespaces hold (1..100000) */
    int store_sync_full;        /* storeSync: 1 full (fsync each commit), 0 normal (store.h) */
    char policy[32];            /* placement policy name */
    struct gs_scenario *quotas; /* GPUQuota, ResourceQuota, ... of the policy files; may be NULL */
    char *policy_text;          /* those files' text as they were read, each after a "---" line (GET
                                   /v1/snapshot writes it out); NULL with no policy file */
    char *policy_paths;         /* those files' paths, ", " between (for the log); NULL: none */
};

/*
 * gsd_file_regular() - @path names a regular file (symlinks followed, as a ConfigMap mounts
 * them): what gpuschedd reads its config, policies and rate card from. A FIFO or a device a
 * writer holds open would block a read, and a reload runs on the thread that takes SIGTERM.
 * Return: 0; -ENOENT/-EIO (cannot stat) or -EINVAL (not a regular file), each with @d naming
 * @path.
 */
int gsd_file_regular(const char *path, struct gs_diag *d);

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
#define GSD_AUTH_ADMIN    (-1)
#define GSD_AUTH_NONE     (-2)
#define GSD_AUTH_NODE     (-3)
#define GSD_AUTH_METRICS  (-4) /* metrics.token: GET /metrics only */
#define GSD_AUTH_AGENT    (-5) /* a node's own token (agents.h), not the config's: access.c */
#define GSD_AUTH_EXTENDER (-6) /* kube-scheduler by its client certificate: the extender only */
int gsd_config_auth(const struct gsd_config *c, const uint8_t sha[GSD_SHA256_LEN]);

/*
 * gsd_bucket_take() - take one request from @t's token bucket at monotonic time @now_us.
 * Return: 0 allowed; else the whole seconds (>= 1) to wait, for Retry-After.
 */
int64_t gsd_bucket_take(struct gsd_tenant *t, int64_t now_us);
/* gsd_bucket_take_at() - the same on a bucket of its own (*@milli, *@at_us; both 0 at first),
 * refilled at @rate_milli requests per second x 1000, holding @burst at most. */
int64_t gsd_bucket_take_at(int64_t *milli, int64_t *at_us, int64_t rate_milli, int64_t burst,
                           int64_t now_us);

#endif
