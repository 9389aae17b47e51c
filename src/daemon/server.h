/*
 * gpuschedd's HTTP side and the queue of requests to the scheduler thread.
 *
 * Threads: one scheduler thread owns the cluster, the engine, the pod table, the store and the
 * configuration in force (struct gsd_state). HTTP event threads (libmicrohttpd, epoll) read a
 * request, decide who asks before its body is read (access.h) and hand it over as a struct
 * gsd_req through the queue, its connection suspended until the scheduler thread fills in the
 * answer. The extender's filter and prioritize, which write nothing to the store, are the
 * exception: the event thread answers them itself under the state lock the scheduler thread holds
 * for a batch's work in memory (server.c). The extender's bind calls the Kubernetes API server
 * from a bind thread after the commit, holding nothing (kube.c). The main thread handles signals
 * and parses a reloaded configuration before handing it over the same way.
 *
 * Durability: the scheduler thread takes the queued requests in batches, runs them inside one
 * SQLite transaction and answers none of them before that transaction commits, so a 2xx always
 * means "in the store". Should a commit fail, memory and store disagree: the daemon answers 503
 * and exits, and the next start rebuilds memory from the store.
 */
#ifndef GSD_SERVER_H
#define GSD_SERVER_H

#include "config.h"

#include "gpusched/diag.h"

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct MHD_Connection;
struct gsd_bind;
struct gsd_podparse;
struct gsd_podview;
struct gsd_state;

#define GSD_QARGS_MAX 8   /* query arguments kept per request */
#define GSD_QARG_LEN  128 /* bytes of one query argument value, with the NUL */
#define GSD_BATCH_MAX 512 /* requests run in one store transaction */

/* ---- requests between the threads ---- */

enum gsd_req_kind {
    GSD_REQ_HTTP = 0,
    GSD_REQ_RELOAD,
    GSD_REQ_STOP,
    GSD_REQ_UNBIND,
    GSD_REQ_SYNC,
    GSD_REQ_GONE,
    GSD_REQ_NODES,
    GSD_REQ_PODGROUPS, /* PodGroups from the API server, as GSD_REQ_NODES (live, listed_us) */
    GSD_REQ_NOMINATE,  /* filter found no node for a pod: nominate it (path: "NS/NAME") */
    GSD_REQ_EVICT      /* an Eviction to send (bind: the job), on a bind thread */
};

enum gsd_qarg_cut { GSD_CUT_VALUE = 1, GSD_CUT_KEY, GSD_CUT_COUNT, GSD_CUT_PATH };

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
    /* what was too long to keep, and the request is refused for (gsd_args_fit()): 0 nothing,
     * else an enum gsd_qarg_cut; qarg_cut_key: the query argument's name (cut to 31 bytes) */
    int qarg_too_long;
    char qarg_cut_key[32];
    char *body;
    size_t len;
    int auth; /* 0 no Authorization header, 1 a bearer token (token_sha), 2 another scheme */
    int yaml; /* the body is YAML (Content-Type), turned into JSON once it is all here */
    int gzip; /* the client takes a gzip body (Accept-Encoding) */
    uint8_t token_sha[GSD_SHA256_LEN];
    int who;                     /* gsd_access_check(): GSD_AUTH_*, or a tenant's index */
    int agent;                   /* GSD_AUTH_AGENT: the node whose own token it is */
    int client_cert;             /* an extender call with a verified client certificate (mTLS) */
    char tenant[GSD_NAME_MAX];   /* ... and then the tenant's name */
    struct MHD_Connection *conn; /* suspended while the request waits; NULL: not from HTTP */
    struct gsd_config *new_cfg;  /* GSD_REQ_RELOAD: handed over, owned by the scheduler after */
    struct gsd_bind *bind;       /* an extender bind's API calls, made after the answer (owned) */
    struct gsd_podparse *pod;    /* POST /v1/pods: its body parsed by the event thread (owned) */
    char nominate[GSD_KEY_MAX];  /* filter: "NS/NAME" of a pod to nominate, "" none */
    json_t *live;      /* GSD_REQ_SYNC: gsd_kube_live()'s pods; GSD_REQ_GONE: pods gone (owned) */
    int64_t listed_us; /* GSD_REQ_SYNC: wall clock when that list was asked for; GSD_REQ_NODES:
                          nonzero when live is a full list of Nodes, else one Node changed */
    int deleted;       /* GSD_REQ_NODES: that one Node was deleted */
    int64_t arrive_us; /* monotonic */
    /* the answer */
    int status;
    struct gsd_podview *view; /* not NULL: the answer is this pod as JSON, rendered by the event
                                 thread (gsd_reply_render()); owned, one allocation */
    char *resp;               /* malloc'd, handed to libmicrohttpd; or shared, see resp_release */
    void (*resp_release)(void *cls); /* not NULL: resp is not freed but released with this */
    void *resp_cls;
    size_t resp_len;
    const char *ctype;
    const char *const *headers; /* NULL, or more answer headers: name, value, ..., NULL */
    char *warning;              /* gsd_reply_warning()'s header value (owned), or NULL */
    const char *warning_hdr[3]; /* what headers then names: Warning, it, NULL */
    int64_t retry_after;        /* seconds; 0 = no header */
    int paged;                  /* the route read ?limit= (gsd_page_args()) */
    const char *allow;          /* a 405's Allow header (static), or NULL */
    int close;                  /* answered with Connection: close (its framing is in doubt) */
    int done;
    pthread_cond_t cv;
    struct gsd_req *next;
};

struct gsd_server;

struct gsd_listen {
    const char *host; /* numeric IPv4 or IPv6 address */
    int port;
    const char *tls_cert, *tls_key; /* PEM files, both or neither */
    const char *client_ca; /* PEM file: the extender verbs need a client certificate it signed */
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
