/*
 * gpuschedd: the HTTP side (libmicrohttpd) and the scheduler thread.
 *
 * libmicrohttpd runs in its epoll mode with a pool of http.threads event threads (no FD_SETSIZE
 * limit; connections bounded overall and per client address, closed when idle), and no handler
 * blocks one of them for long: a request that must wait suspends its connection and resumes it
 * when its answer is ready. Per request:
 *  - headers: gsd_access_check() (access.c) decides who asks and whether it may go on, and the
 *    route's body cap; a refusal is answered before a byte of the body is read. A declared
 *    Content-Length over the cap is a 413 at once, and one that would not fit under
 *    http.maxBytesInFlight with the bodies being read now is a 503 with Retry-After. A body's
 *    bytes count as they arrive, so a slow sender holds only what it has sent. Answers of over
 *    ANSWER_SMALL bytes count with them until sent: one past the cap is a 503, so that clients
 *    that ask and never read cannot pile up the daemon's memory.
 *  - body: kept up to its cap. One that grows past the cap or past the bytes in flight (chunked,
 *    its length undeclared) is no longer kept: what it held is freed, the rest is read and
 *    dropped, and the 413 (or 503) is answered when the body ends, as libmicrohttpd can answer
 *    only before or after a body. One that drops more than DISCARD_MAX bytes, or is not whole
 *    within http.bodyTimeoutSeconds of its headers, ends the connection.
 *  - then: GET /healthz is answered at once (the store's last probe, the scheduler thread's
 *    pulse); the extender's filter and prioritize are answered on the event thread under the
 *    state lock (they write nothing to the store, and kube-scheduler waits on them for every
 *    pod); the reads of reads.c (pods, status, /metrics) go to reader threads, which render them
 *    from the last snapshot (snapshot.h) at a lower CPU priority and never take the state lock;
 *    everything else is queued for the scheduler thread. Both suspend the connection.
 *
 * The scheduler thread takes up to GSD_BATCH_MAX queued requests, runs them in one store
 * transaction, publishes a snapshot for the reads, commits, and only then resumes their
 * connections. Reloads and the stop request
 * travel the same queue, so they take effect between batches, never inside one. Every PROBE_US it
 * commits a probe between batches (gsd_store_probe(), one row), so /healthz knows whether the
 * store can still commit before a pod's write finds out.
 *
 * The extender's bind commits its cards like any write; then a bind thread (never an event
 * thread: an API server may take seconds) writes the pod to the Kubernetes API server (kube.c),
 * so a slow API server delays that bind alone. Its outcome is queued back (GSD_REQ_UNBIND) and run
 * before the answer leaves, so kube-scheduler hears of a failed bind only once its cards are free
 * (unless another bind of the pod is under way or was confirmed: gsd_extender_unbind());
 * and nothing is written to the API server before the cards are committed, so no pod is bound
 * there that is not held here. A crash between the commit and the API calls leaves the pod held
 * and not bound: kube-scheduler, whose bind failed, schedules the pod again, filter offers it only
 * the node holding its cards, and bind there makes the calls again.
 */
#include "server.h"
#include "access.h"
#include "agents.h"
#include "api.h"
#include "extender.h"
#include "forecast.h"
#include "gang.h"
#include "kube.h"
#include "kubenodes.h"
#include "log.h"
#include "metrics.h"
#include "nodes.h"
#include "podspec.h"
#include "reads.h"
#include "snapshot.h"
#include "state.h"
#include "store.h"
#include "ui.h"

#include "gpusched/grow.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CONN_MEMORY  (16u << 10)      /* libmicrohttpd's buffer for one request's headers */
#define PROBE_US     (2 * 1000000LL)  /* commit a probe this often */
#define STALL_US     (30 * 1000000LL) /* requests waiting this long on the scheduler: unhealthy */
#define DRAIN_US     (60 * 1000000LL) /* the most a drain waits for suspended requests */
#define BIND_THREADS 4                /* API server calls of binds at once */
#define READ_THREADS 2                /* reads rendered at once */
#define READ_NICE    5                /* readers yield the CPU to scheduling and filter */
#define POOL_MAX     16
#define DISCARD_MAX  (64u << 20) /* bytes of a refused body read and dropped before closing */

const char *const gsd_reject_names[GSD_REJECT_N] = {
    "unauthenticated", "throttled", "forbidden", "rate_limited", "too_large", "busy", "too_slow",
};

struct gsd_server;

/* Threads that run requests handed to them, one at a time each (reads, binds' API calls). */
struct pool {
    struct gsd_server *s;
    void (*run)(struct gsd_server *s, struct gsd_req *r);
    pthread_t th[POOL_MAX];
    int n, stop, nice;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct gsd_req *head, *tail;
};

struct gsd_server {
    struct gsd_state *st;
    struct MHD_Daemon *mhd;
    struct gsd_access *access;
    struct gsd_http_stats stats;
    pthread_t thread;
    pthread_mutex_t mu; /* the queue, and the waits of requests from other threads */
    pthread_cond_t cv;
    pthread_mutex_t state_mu; /* the state in memory: the scheduler's batches, filter, prioritize */
    struct gsd_req *head, *tail;
    int publish_now; /* under mu: a reader waits for a snapshot (wake_publish()) */
    struct pool binders, readers;
    int binders_started, readers_started;
    struct gsd_reads *reads;
    uint64_t agents_version; /* of the nodes' own tokens the access layer has */
    int64_t max_conns;       /* http.maxConnections as the open-file limit allows (admit()) */
    atomic_int failed;
    atomic_int store_ok;      /* the last commit or probe succeeded */
    _Atomic int64_t pulse_us; /* monotonic: when the scheduler thread last took a batch */
    atomic_int queued;        /* HTTP requests handed over and not yet answered */
    atomic_int suspended;     /* connections suspended, not yet resumed and answered */
    _Atomic int64_t max_in_flight, body_timeout_us, header_timeout_us;
    struct gsd_http_limits started; /* the config's at the start: what a reload cannot change */
    int started_sync_full;
    int64_t idle_us; /* http.idleTimeoutSeconds, the listener's from its start */
    /* connections whose headers are being read, each with its deadline (reaper_main()) */
    pthread_mutex_t socks_mu;
    pthread_cond_t socks_cv;
    struct sock *socks;
    pthread_t reaper;
    int reaper_started, reaper_stop;
    int port;
    char *cert, *key, *client_ca;
    /* following the API server (sync_main): [0] the pods, [1] the Nodes (--nodes kubernetes),
     * [2] Volcano's PodGroups (kubernetes.podGroups) */
    struct follower {
        struct gsd_server *s;
        pthread_t thread;
        int nodes, started; /* nodes: the index above */
        uint64_t gen;       /* the configuration it follows by (cfg_gen when read) */
    } follow[3];
    _Atomic uint64_t cfg_gen; /* one more at each reload, under state_mu with it */
    pthread_cond_t sync_cv;
    int stopping;
    int serving;          /* the listener answers: kube-scheduler's filter reaches it */
    atomic_int sync_stop; /* stopping, for a list between its pages */
};

/* A connection libmicrohttpd holds, and by when its request's headers must be whole: it closes a
 * connection only when it is silent (idleTimeoutSeconds), so headers sent a byte at a time would
 * hold one for ever. Listed under socks_mu from its start to its close. */
struct sock {
    struct sock *prev, *next;
    MHD_socket fd;
    int64_t deadline_us; /* monotonic; INT64_MAX while a request is read and answered */
    int shut;            /* shut down past its deadline: libmicrohttpd closes it next */
};

/* Per request: the request being read, its body's cap and what it holds of the bytes in flight. */
struct conn {
    struct gsd_req *r;
    size_t cap, bufcap;
    int64_t reserved; /* bytes counted in stats.in_flight, given back when the request ends */
    int64_t answer;   /* bytes counted in stats.answers, given back when the request ends */
    int64_t begin_us; /* monotonic: when its headers were in */
    int answered;     /* a response is queued: whatever else arrives is not read */
    int refused;      /* a body past a cap: answered when it ends, what arrives is dropped */
    size_t dropped;   /* bytes of it dropped */
    int suspended;    /* counted in s->suspended until answered or gone */
    int body_due;     /* its deadline is its body's (http.bodyTimeoutSeconds) until the body ends */
};

static void req_free(struct gsd_req *r)
{
    if (!r)
        return;
    pthread_cond_destroy(&r->cv);
    gsd_bind_free(r->bind);
    gsd_podparse_free(r->pod);
    free(r->view);
    free(r->warning);
    json_decref(r->live);
    free(r->body);
    if (r->resp_release)
        r->resp_release(r->resp_cls);
    else
        free(r->resp);
    free(r);
}

static struct gsd_req *req_new(enum gsd_req_kind kind)
{
    struct gsd_req *r = calloc(1, sizeof(*r));
    if (r && pthread_cond_init(&r->cv, NULL)) {
        free(r);
        return NULL;
    }
    if (r)
        r->kind = kind;
    return r;
}

/* Queue @r for the scheduler thread; it does not wait. */
static void enqueue(struct gsd_server *s, struct gsd_req *r)
{
    r->arrive_us = gsd_mono_us();
    pthread_mutex_lock(&s->mu);
    r->next = NULL;
    *(s->tail ? &s->tail->next : &s->head) = r;
    s->tail = r;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* Queue @r (from a thread of our own, not an event thread) and wait for its answer. */
static void submit_wait(struct gsd_server *s, struct gsd_req *r)
{
    enqueue(s, r);
    pthread_mutex_lock(&s->mu);
    while (!r->done)
        pthread_cond_wait(&r->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

/* @r is answered: wake its connection (resumed: libmicrohttpd calls on_request again), or the
 * thread waiting in submit_wait(). @queued: it came through the scheduler's queue. */
static void finish(struct gsd_server *s, struct gsd_req *r, int queued)
{
    pthread_mutex_lock(&s->mu);
    r->done = 1;
    if (r->conn && queued)
        atomic_fetch_sub(&s->queued, 1);
    else
        pthread_cond_signal(&r->cv);
    struct MHD_Connection *c = r->conn;
    pthread_mutex_unlock(&s->mu);
    if (c)
        MHD_resume_connection(c);
}

static void *pool_main(void *arg)
{
    struct pool *p = arg;
    if (p->nice) /* Linux: a thread has a nice value of its own */
        setpriority(PRIO_PROCESS, (id_t)gettid(), p->nice);
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->head && !p->stop)
            pthread_cond_wait(&p->cv, &p->mu);
        struct gsd_req *r = p->head;
        if (r && !(p->head = r->next))
            p->tail = NULL;
        pthread_mutex_unlock(&p->mu);
        if (!r)
            return NULL;
        p->run(p->s, r);
    }
}

/* Start @n threads running @run. Return: threads started. */
static int pool_start(struct pool *p, struct gsd_server *s, int n, int nice,
                      void (*run)(struct gsd_server *, struct gsd_req *))
{
    p->s = s;
    p->run = run;
    p->nice = nice;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    for (p->n = 0; p->n < n && p->n < POOL_MAX; p->n++)
        if (pthread_create(&p->th[p->n], NULL, pool_main, p))
            break;
    return p->n;
}

static void pool_add(struct pool *p, struct gsd_req *r)
{
    pthread_mutex_lock(&p->mu);
    r->next = NULL;
    *(p->tail ? &p->tail->next : &p->head) = r;
    p->tail = r;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* Let the threads finish what is queued, then join them. */
static void pool_stop(struct pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n; i++)
        pthread_join(p->th[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}

/* One queued request, inside the batch's transaction. Return: 1 for the stop request. */
static int run_one(struct gsd_server *s, struct gsd_req *r)
{
    struct gsd_state *st = s->st;
    if (r->kind == GSD_REQ_STOP)
        return 1;
    if (r->kind == GSD_REQ_RELOAD) {
        struct gs_diag d;
        gs_diag_init(&d);
        if (gsd_state_reload(st, r->new_cfg, &d)) {
            gsd_log("error", "config reload refused: the one in force stays", "error",
                    d.msg[0] ? d.msg : "out of memory", NULL);
            gsd_config_free(r->new_cfg);
        }
        gsd_access_reload(s->access, st->cfg);
        gsd_kube_podgroups_forget(st);    /* a queue or tenant added may take one refused */
        atomic_fetch_add(&s->cfg_gen, 1); /* the syncs take it up: under state_mu, as they read */
        atomic_store(&s->max_in_flight, st->cfg->http.max_in_flight);
        atomic_store(&s->body_timeout_us, st->cfg->http.body_timeout_s * 1000000);
        atomic_store(&s->header_timeout_us, st->cfg->http.header_timeout_s * 1000000);
        r->new_cfg = NULL;
        return 0;
    }
    if (r->kind == GSD_REQ_UNBIND) {
        if (!atomic_load(&s->failed) && !st->failed)
            gsd_extender_unbind(st, r->bind);
        return 0;
    }
    if (r->kind == GSD_REQ_NODES || r->kind == GSD_REQ_PODGROUPS) {
        if (!atomic_load(&s->failed) && !st->failed && r->kind == GSD_REQ_NODES)
            gsd_kube_nodes(st, r->live, r->listed_us != 0, r->deleted);
        else if (!atomic_load(&s->failed) && !st->failed)
            gsd_kube_podgroups(st, r->live, r->listed_us != 0, r->deleted);
        return 0;
    }
    if (r->kind == GSD_REQ_NOMINATE) {
        if (!atomic_load(&s->failed) && !st->failed)
            gsd_extender_nominate(st, r->path);
        return 0;
    }
    if (r->kind == GSD_REQ_SYNC || r->kind == GSD_REQ_GONE) {
        if (!atomic_load(&s->failed) && !st->failed && r->kind == GSD_REQ_SYNC)
            gsd_extender_sync(st, r->live, r->listed_us);
        else if (!atomic_load(&s->failed) && !st->failed)
            gsd_extender_gone(st, r->live);
        return 0;
    }
    if (atomic_load(&s->failed) || st->failed)
        gsd_reply_error(r, 503, "", "the store failed; the daemon is stopping");
    else
        gsd_api_handle(st, r);
    return 0;
}

/* After a failed write or commit every answer of the batch becomes 503: nothing was stored. */
static void fail_batch(struct gsd_server *s, struct gsd_req **batch, int n)
{
    if (!atomic_exchange(&s->failed, 1)) {
        gsd_log("error", "store write failed: stopping; the next start restores the last commit",
                NULL);
        kill(getpid(), SIGTERM);
    }
    for (int i = 0; i < n; i++)
        if (batch[i]->kind == GSD_REQ_HTTP && batch[i]->status < 500) {
            free(batch[i]->resp);
            batch[i]->resp = NULL;
            gsd_reply_error(batch[i], 503, "", "the store failed; nothing was stored");
        }
}

/* Wait for requests, or until monotonic time @until_us. Return: requests taken (0: time came). */
static int take_batch(struct gsd_server *s, struct gsd_req **batch, int64_t until_us)
{
    int n = 0;
    struct timespec ts = {(time_t)(until_us / 1000000), (long)(until_us % 1000000) * 1000};
    pthread_mutex_lock(&s->mu);
    while (!s->head && !s->publish_now && (until_us == INT64_MAX || gsd_mono_us() < until_us))
        if (until_us == INT64_MAX)
            pthread_cond_wait(&s->cv, &s->mu);
        else
            pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    while (s->head && n < GSD_BATCH_MAX) {
        batch[n++] = s->head;
        s->head = s->head->next;
    }
    if (!s->head)
        s->tail = NULL;
    s->publish_now = 0;
    pthread_mutex_unlock(&s->mu);
    atomic_store(&s->pulse_us, gsd_mono_us());
    return n;
}

/* A reader asked for what the snapshot in place lacks (the bills): the scheduler thread
 * publishes one at once rather than after its wait (gsd_snap_set_wake()). */
static void wake_publish(void *ud)
{
    struct gsd_server *s = ud;
    pthread_mutex_lock(&s->mu);
    s->publish_now = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* The nodes' own tokens to the access layer, when a registration changed them (the scheduler
 * thread, or before it starts). */
static void sync_agents(struct gsd_server *s)
{
    struct gsd_state *st = s->st;
    uint64_t v = gsd_agents_version(st);
    size_t n = gs_cluster_node_count(st->cluster);
    if (v == s->agents_version)
        return;
    uint8_t(*sha)[32] = malloc((n ? n : 1) * sizeof(*sha));
    uint8_t *has = calloc(n ? n : 1, 1);
    if (sha && has) {
        gsd_agent_tokens(st, sha, has);
        if (!gsd_access_agents(s->access, (const uint8_t(*)[32])sha, has, n))
            s->agents_version = v;
    }
    if (s->agents_version != v)
        gsd_log("error", "out of memory: a node's new token is not taken yet", NULL);
    free(sha);
    free(has);
}

/* Whether the store can commit, from a commit's or probe's outcome; said once per change. */
static void store_health(struct gsd_server *s, int ok)
{
    if (atomic_exchange(&s->store_ok, ok) != ok)
        gsd_log(ok ? "info" : "error",
                ok ? "the store commits again" : "the store cannot commit: /healthz fails", NULL);
}

/* An Eviction the scheduler decided, committed: sent to the API server on a bind thread, once
 * (kube.c retries only what got no answer or a 429/5xx); or a nominated pod's nudge. */
static void send_eviction(struct gsd_server *s, struct gsd_bind *b)
{
    char key[GSD_KEY_MAX];
    snprintf(key, sizeof(key), "%s/%s", b->ns, b->name);
    int nudge = b->evict == 2 ? gsd_kube_nudge(b) : 0;
    struct gsd_req *u = nudge == -ENOENT ? req_new(GSD_REQ_UNBIND) : NULL;
    if (u) { /* deleted while it waited unbound (a watch of bound pods never says): let go now */
        u->bind = b;
        submit_wait(s, u);
        u->bind = NULL;
        req_free(u);
    } else if (nudge)
        gsd_log("warn", "nominated pod not nudged: kube-scheduler tries it again in its own time",
                "pod", key, "error", b->err, NULL);
    else if (b->evict == 2)
        gsd_log("info", "nominated pod nudged: its cards are held", "pod", key, "node", b->node,
                NULL);
    else
        switch (gsd_kube_evict(b)) {
        case 0:
            gsd_log("info", "pod evicted in Kubernetes", "pod", key, NULL);
            break;
        case 1:
            gsd_log("info", "pod already being evicted: no Eviction sent again", "pod", key, NULL);
            break;
        default:
            gsd_log("error", "eviction refused: the pod keeps its cards until Kubernetes ends it",
                    "pod", key, "error", b->err, NULL);
        }
}

/* The Evictions the committed batch decided (st->evictions), to the bind threads. */
static void send_evictions(struct gsd_server *s)
{
    struct gsd_state *st = s->st;
    for (size_t i = 0; i < st->nevictions; i++) {
        struct gsd_req *r = s->binders_started ? req_new(GSD_REQ_EVICT) : NULL;
        if (!r) {
            gsd_log("error", "no thread or memory to send an eviction", "pod",
                    st->evictions[i]->name, NULL);
            gsd_bind_free(st->evictions[i]);
            continue;
        }
        r->bind = st->evictions[i];
        pool_add(&s->binders, r);
    }
    st->nevictions = 0;
}

/*
 * An extender bind whose cards are committed: write it to the API server on a bind thread. A
 * refusal hands the cards back through the queue before the answer goes out, so kube-scheduler
 * never hears of a failed bind whose cards are still held; Error names why.
 */
static void finish_bind(struct gsd_server *s, struct gsd_req *r)
{
    struct gsd_bind *b = r->bind;
    if (r->kind == GSD_REQ_EVICT) {
        send_eviction(s, b);
        req_free(r);
        return;
    }
    r->bind = NULL;
    int rc = gsd_kube_bind(b);
    char key[GSD_KEY_MAX];
    snprintf(key, sizeof(key), "%s/%s", b->ns, b->name);
    if (rc == GSD_KUBE_BOUND)
        gsd_log("info", "pod bound in Kubernetes", "pod", key, "node", b->node, NULL);
    else if (rc == GSD_KUBE_UNKNOWN)
        gsd_log("warn", "bind outcome unknown: cards kept", "pod", key, "error", b->err, NULL);
    /* every outcome goes back: whether a refusal frees the cards depends on the pod's other
     * binds (gsd_extender_unbind()) */
    struct gsd_req *u = req_new(GSD_REQ_UNBIND);
    b->outcome = rc;
    if (u) {
        u->bind = b;
        submit_wait(s, u);
        u->bind = NULL;
        req_free(u);
    } else if (rc == GSD_KUBE_REFUSED) {
        gsd_log("error", "bind refused, and no memory to give the cards back", "pod", key, NULL);
    }
    if (rc != GSD_KUBE_BOUND) {
        free(r->resp);
        r->resp = NULL;
        gsd_reply_json(r, 200, json_pack("{s:s}", "Error", b->err));
    }
    gsd_bind_free(b);
    finish(s, r, 1);
}

/* A read, from the snapshot in place, on a reader thread. */
static void read_one(struct gsd_server *s, struct gsd_req *r)
{
    gsd_reads_handle(s->reads, r);
    finish(s, r, 0);
}

/* The batch's answers go out: binds to make in the API server first go to a bind thread. */
static void answer_batch(struct gsd_server *s, struct gsd_req **batch, int n)
{
    for (int i = 0; i < n; i++) {
        struct gsd_req *r = batch[i];
        if (r->kind == GSD_REQ_NOMINATE) { /* nobody waits for it */
            req_free(r);
            continue;
        }
        if (r->kind != GSD_REQ_HTTP) { /* an unbind's job is its sender's */
            finish(s, r, 1);
            continue;
        }
        if (r->bind && r->status == 200 && s->binders_started) {
            pool_add(&s->binders, r);
            continue;
        }
        if (r->bind && r->status == 200) {
            free(r->resp);
            gsd_reply_json(r, 200, json_pack("{s:s}", "Error", "no thread to bind it with"));
        }
        gsd_bind_free(r->bind); /* the commit failed: nothing is held, nothing to bind */
        r->bind = NULL;
        finish(s, r, 1);
    }
}

/* The API server to follow and how often to list it afresh, copied under the state lock (a
 * reload may change them); k->api_server NULL when there is none or syncSeconds is 0, or, for
 * the Nodes (@what 1), when the inventory is not theirs, or, for the PodGroups (@what 2), when
 * podGroups is false. */
static void sync_config(struct gsd_server *s, int what, struct gsd_kube *k, uint64_t *gen)
{
    pthread_mutex_lock(&s->state_mu);
    *gen = atomic_load(&s->cfg_gen); /* the very configuration read below */
    const struct gsd_kube *c = s->st->cfg->kube;
    *k = (struct gsd_kube){0};
    if (c && c->sync_us && (what != 1 || s->st->nodes_from_kube) && (what != 2 || c->podgroups)) {
        k->timeout_ms = c->timeout_ms;
        k->sync_us = c->sync_us;
        k->api_server = strdup(c->api_server);
        k->token_file = c->token_file ? strdup(c->token_file) : NULL;
        k->ca_file = c->ca_file ? strdup(c->ca_file) : NULL;
    }
    pthread_mutex_unlock(&s->state_mu);
}

/* Hand @r to the scheduler thread, wait for it and free it. */
static void submit_free(struct gsd_server *s, struct gsd_req *r)
{
    submit_wait(s, r);
    req_free(r);
}

/* gsd_kube_follow()'s stop: the daemon stops, or a reload changed `kubernetes:`. */
static int follow_stop(void *ud)
{
    struct follower *f = ud;
    pthread_mutex_lock(&f->s->mu);
    int stop = f->s->stopping || atomic_load(&f->s->cfg_gen) != f->gen;
    pthread_mutex_unlock(&f->s->mu);
    return stop;
}

/* A full list: the scheduler thread releases the pods bound here that are not in it. */
static void follow_listed(void *ud, json_t *live, int64_t listed_us)
{
    struct gsd_req *r = req_new(GSD_REQ_SYNC);
    if (!r) {
        json_decref(live);
        return;
    }
    r->live = live;
    r->listed_us = listed_us;
    submit_free(((struct follower *)ud)->s, r);
}

/* Nodes listed (@items, every one) or one changed (@listed 0: @items holds it, @deleted when
 * it was): the scheduler thread takes them into the inventory (kubenodes.c); PodGroups the
 * same way into the gangs (gang.c). */
static void follow_nodes_of(struct follower *f, json_t *items, int listed, int deleted)
{
    struct gsd_req *r = items ? req_new(f->nodes == 2 ? GSD_REQ_PODGROUPS : GSD_REQ_NODES) : NULL;
    if (!r) {
        json_decref(items);
        gsd_log("error",
                f->nodes == 2 ? "out of memory: a PodGroup change is not taken"
                              : "out of memory: a Node change is not taken",
                NULL);
        return;
    }
    r->live = items;
    r->listed_us = listed ? 1 : 0;
    r->deleted = deleted;
    submit_free(f->s, r);
}

static void follow_nodes(void *ud, json_t *items)
{
    follow_nodes_of(ud, items, 1, 0);
}

static void follow_node(void *ud, const json_t *node, int deleted)
{
    follow_nodes_of(ud, json_pack("[O]", node), 0, deleted);
}

/* A pod deleted or finished: released at once when bind took cards for it (looked up first
 * under the state lock, so the many pods gpuschedd never bound cost no store transaction). */
static void follow_gone(void *ud, const char *key, const char *uid, int succeeded)
{
    struct gsd_server *s = ((struct follower *)ud)->s;
    pthread_mutex_lock(&s->state_mu);
    int held = gsd_extender_holds(s->st, key, uid);
    pthread_mutex_unlock(&s->state_mu);
    struct gsd_req *r = held ? req_new(GSD_REQ_GONE) : NULL;
    if (r &&
        (r->live = succeeded ? json_pack("{s:{s:s, s:s}}", key, "uid", uid, "phase", "Succeeded")
                             : json_pack("{s:s}", key, uid)))
        submit_free(s, r);
    else
        req_free(r);
}

/* Once the listener answers: the pods kube-scheduler could not place while gpuschedd was away
 * (its filter unreachable) tried again now, not a minute later (gsd_kube_nudge_waiting()). */
static void nudge_waiting(struct gsd_server *s, const struct gsd_kube *k)
{
    char why[2 * GS_DIAG_MSG_MAX], n[24];
    int rc = gsd_kube_nudge_waiting(k, &s->sync_stop, gsd_now_us(), why, sizeof(why));
    snprintf(n, sizeof(n), "%d", rc);
    if (rc > 0)
        gsd_log("info", "pods kube-scheduler found no node for while gpuschedd was away: nudged",
                "pods", n, NULL);
    else if (rc < 0)
        gsd_log("warn",
                "pods waiting since gpuschedd was away not listed: kube-scheduler tries "
                "them again within a minute",
                "error", rc == -ENOMEM ? "out of memory" : why, NULL);
}

/* While `kubernetes:` is configured with a syncSeconds: gsd_kube_follow() of the pods or the
 * Nodes, taken up anew after each reload. */
static void *sync_main(void *arg)
{
    struct follower *f = arg;
    struct gsd_server *s = f->s;
    const struct gsd_kube_sink pods = {f, follow_stop, follow_listed, follow_gone, NULL, NULL, 0};
    const struct gsd_kube_sink nodes = {f,           follow_stop,  NULL, NULL, follow_nodes,
                                        follow_node, f->nodes == 2};
    int nudged = f->nodes != 0; /* the pods' follower nudges the waiting ones once */
    for (;;) {
        struct gsd_kube k;
        sync_config(s, f->nodes, &k, &f->gen);
        pthread_mutex_lock(&s->mu);
        while (!s->stopping && ((atomic_load(&s->cfg_gen) == f->gen && !k.api_server) ||
                                (!nudged && k.api_server && !s->serving)))
            pthread_cond_wait(&s->sync_cv, &s->mu);
        int stop = s->stopping;
        pthread_mutex_unlock(&s->mu);
        if (!stop && k.api_server && !nudged)
            nudge_waiting(s, &k);
        nudged |= k.api_server != NULL;
        if (!stop && k.api_server)
            gsd_kube_follow(&k, f->nodes ? &nodes : &pods);
        free(k.api_server);
        free(k.token_file);
        free(k.ca_file);
        if (stop)
            return NULL;
    }
}

/* Commit the batch's transaction (@ok 0: it must not be) and record what that says. */
static void commit_batch(struct gsd_server *s, struct gsd_req **batch, int n, int ok)
{
    struct gsd_state *st = s->st;
    int64_t t0 = gsd_mono_us();
    if (!ok || st->failed) {
        gsd_store_rollback(st->store);
        ok = 0;
    } else {
        ok = gsd_store_commit(st->store) == 0;
    }
    gsd_hist_observe(&st->commit_lat, gsd_mono_us() - t0);
    if (!ok)
        fail_batch(s, batch, n);
}

static void *scheduler_main(void *arg)
{
    struct gsd_server *s = arg;
    struct gsd_state *st = s->st;
    struct gsd_req *batch[GSD_BATCH_MAX];
    int64_t last_probe = gsd_mono_us();
    for (int stop = 0; !stop;) {
        int failed = atomic_load(&s->failed) || st->failed; /* stopping: no expiry to wait for */
        int64_t due = gsd_health_deadline(st);
        due = last_probe + PROBE_US < due ? last_probe + PROBE_US : due;
        due = st->manual_clock || st->short_due > due ? due : st->short_due;
        int n = take_batch(s, batch, failed ? INT64_MAX : due);
        if (!failed && gsd_mono_us() >= last_probe + PROBE_US) {
            /* a batch's commit may have written nothing: only a write says the store can */
            store_health(s, gsd_store_probe(st->store, gsd_sched_now(st)) == 0);
            last_probe = gsd_mono_us();
        }
        gsd_log_hold(); /* the batch's lines, written at once after its commit */
        pthread_mutex_lock(&s->state_mu);
        st->gen++;
        int ok = atomic_load(&s->failed) || gsd_store_begin(st->store) == 0;
        if (!ok)
            st->failed = 1; /* no transaction: nothing may be written, every answer is 503 */
        for (int i = 0; i < n; i++)
            stop |= run_one(s, batch[i]);
        if (!atomic_load(&s->failed) && ok && !st->failed) {
            gsd_health_expire(st);         /* after the batch: its heartbeats count */
            gsd_kube_podgroups_settle(st); /* the batch's pods gone may free some */
            /* -EIO set st->failed; out of memory, the next batch tries again */
            if (gsd_extender_short_gangs(st) == -ENOMEM)
                gsd_log("error", "out of memory: short gangs' held cards are kept", NULL);
        }
        if (!atomic_load(&s->failed) && ok && !st->failed && !st->held)
            gsd_sched_run(st);    /* what the batch freed or changed, for the pending */
        gsd_extender_nudge(st);   /* nominated pods whose cards are now theirs alone */
        if (gsd_snap_publish(st)) /* before the answers leave: a client reads its own writes */
            gsd_log("error", "reads show the state before this batch: out of memory", NULL);
        sync_agents(s);
        pthread_mutex_unlock(&s->state_mu);
        if (!atomic_load(&s->failed))
            commit_batch(s, batch, n, ok);
        gsd_log_flush();
        if (!atomic_load(&s->failed)) /* else nothing was stored: nothing is sent */
            send_evictions(s);
        answer_batch(s, batch, n);
    }
    return NULL;
}

static enum MHD_Result keep_qarg(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    struct gsd_req *r = cls;
    (void)kind;
    int cut = r->nqargs == GSD_QARGS_MAX               ? GSD_CUT_COUNT
              : strlen(key) >= sizeof(r->qargs[0].key) ? GSD_CUT_KEY
              : value && strlen(value) >= GSD_QARG_LEN ? GSD_CUT_VALUE
                                                       : 0;
    if (cut) {
        r->qarg_too_long = cut;
        snprintf(r->qarg_cut_key, sizeof(r->qarg_cut_key), "%s", key);
        return MHD_NO;
    }
    strcpy(r->qargs[r->nqargs].key, key);
    strcpy(r->qargs[r->nqargs].val, value ? value : "");
    r->nqargs++;
    return MHD_YES;
}

/*
 * libmicrohttpd's URI log callback, called with the raw request target before it splits the query:
 * the query is cut after the first argument past the kept ones (GSD_QARGS_MAX), which
 * keep_qarg() then refuses naming it. libmicrohttpd (0.9.75 to 0.9.77) stores every argument
 * in the connection's memory pool (CONN_MEMORY) and, with it full (about 230 arguments),
 * queues a 431 but reads on as if it had not: the client waited out the idle timeout. The
 * target lies in the connection's read buffer, which libmicrohttpd writes itself as it splits
 * the query, after this call. Return: no context (begin() makes it).
 */
static void *cut_query(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls;
    (void)c;
    char *amp = strchr(uri, '?'); /* NUL-terminated by libmicrohttpd */
    for (int n = 0; amp && (amp = strchr(amp + 1, '&')) != NULL;)
        if (++n == GSD_QARGS_MAX + 1) { /* the '&' that ends argument GSD_QARGS_MAX + 1 */
            *amp = '\0';
            break;
        }
    return NULL;
}

/* The first "%00" or "%2F" (any case) in @s, or NULL. */
static char *kept_escape(char *s)
{
    for (char *p = strchr(s, '%'); p; p = strchr(p + 1, '%'))
        if ((p[1] == '0' && p[2] == '0') || (p[1] == '2' && (p[2] == 'F' || p[2] == 'f')))
            return p;
    return NULL;
}

/* Percent-decoding as libmicrohttpd's own, but "%00" and "%2F" kept as written: decoded, a NUL
 * would end the path or a query argument there, so that "?limit=1%00x" read as 1 and
 * "/v1/pods/NS/P%00x" as pod P, and a '/' would split a path's segment in two, so that
 * "/v1/pods/NS%2FP" read as pod P; kept, they fail every name and number check. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    char *out = s;
    for (char *seg = s;;) {
        char *kept = kept_escape(seg), was[3];
        if (kept) {
            memcpy(was, kept, 3);
            *kept = '\0';
        }
        size_t n = MHD_http_unescape(seg);
        memmove(out, seg, n);
        out += n;
        if (!kept)
            break;
        memcpy(out, was, 3);
        out += 3;
        seg = kept + 3;
    }
    *out = '\0';
    return (size_t)(out - s);
}

/* Headers a request gives once: two Content-Lengths, or two Transfer-Encodings, frame its body
 * two ways (RFC 9112, 6.3: an error, which a proxy before this daemon may have read the other
 * way), two Authorizations are two credentials (RFC 9110, 11.6.2), two Hosts two targets (RFC
 * 9112, 3.2), two Content-Types two readings of the body; libmicrohttpd would take the first of
 * each. */
struct once {
    char twice[32];
    int length, auth, te, host, ctype, spaced;
};

static enum MHD_Result count_once(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    struct once *o = cls;
    (void)kind;
    (void)value;
    if (key[strcspn(key, " \t")]) { /* RFC 9112, 5.1: "Content-Length : 2" frames nothing here */
        snprintf(o->twice, sizeof(o->twice), "%s", key);
        o->spaced = 1;
        return MHD_NO;
    }
    int *n = !strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)      ? &o->length
             : !strcasecmp(key, MHD_HTTP_HEADER_AUTHORIZATION)     ? &o->auth
             : !strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) ? &o->te
             : !strcasecmp(key, MHD_HTTP_HEADER_HOST)              ? &o->host
             : !strcasecmp(key, MHD_HTTP_HEADER_CONTENT_TYPE)      ? &o->ctype
                                                                   : NULL;
    if (!n || ++*n < 2)
        return MHD_YES;
    snprintf(o->twice, sizeof(o->twice), "%s", key);
    return MHD_NO;
}

/*
 * A request whose framing or target is not HTTP/1.1's, refused in @r before its body is read,
 * the connection then closed (what follows could be read as a request of its own): a header
 * given twice (struct once), a Transfer-Encoding with a Content-Length (RFC 9112, 6.1: a request
 * smuggled past a proxy that reads the other), one other than chunked, the only coding
 * libmicrohttpd decodes (501, RFC 9112, 6.1), a space in a header's name (RFC 9112, 5.1). An
 * HTTP/1.1 request without Host libmicrohttpd refuses itself (MHD_OPTION_STRICT_FOR_CLIENT).
 * Return: 1 refused; 0.
 */
static int misframed(struct MHD_Connection *c, struct gsd_req *r)
{
    struct once once = {"", 0, 0, 0, 0, 0, 0};
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_once, &once);
    const char *te =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    if (once.spaced)
        gsd_reply_error(r, 400, once.twice, "header name \"%s\" holds a space (RFC 9112, 5.1)",
                        once.twice);
    else if (once.twice[0])
        gsd_reply_error(r, 400, once.twice, "header %s is given more than once", once.twice);
    else if (te && strcasecmp(te, "chunked"))
        gsd_reply_error(r, 501, MHD_HTTP_HEADER_TRANSFER_ENCODING,
                        "Transfer-Encoding %.64s: only chunked is understood", te);
    else if (te && once.length)
        gsd_reply_error(r, 400, MHD_HTTP_HEADER_TRANSFER_ENCODING,
                        "Transfer-Encoding with Content-Length: the body is framed two ways");
    else
        return 0;
    r->close = 1;
    return 1;
}

/* The path of request target @url: an absolute-form target (RFC 9112, 3.2.2: a server MUST
 * accept it) without its scheme and authority, whose Host the request's own Host header is. */
static const char *origin_form(const char *url)
{
    size_t scheme = !strncasecmp(url, "http://", 7) ? 7 : !strncasecmp(url, "https://", 8) ? 8 : 0;
    const char *path = scheme ? url + scheme + strcspn(url + scheme, "/?") : url;
    return scheme && *path != '/' ? "/" : path;
}

static void read_auth(struct MHD_Connection *c, struct gsd_req *r)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h)
        return;
    r->auth = 2;
    if (strncasecmp(h, "Bearer ", 7) == 0) {
        const char *t = h + 7;
        size_t n;
        t += strspn(t, " \t");
        /* a field value's white space around it is not part of it (RFC 9110, 5.5) */
        for (n = strlen(t); n && (t[n - 1] == ' ' || t[n - 1] == '\t'); n--)
            ;
        /* shorter than any token gpuschedd takes: none matches, whatever hash was configured */
        r->auth = n >= GSD_TOKEN_MIN ? 1 : 2;
        gsd_sha256(t, n, r->token_sha);
    }
}

/* Whether Accept-Encoding value @v (NULL: none) takes gzip: a "gzip" or "*" coding without
 * q=0 (RFC 9110, 12.5.3). */
static int takes_gzip(const char *v)
{
    for (const char *p = v; p && *p;) {
        p += strspn(p, " \t,");
        size_t n = strcspn(p, ",;"), end = strcspn(p, ",");
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if ((n == 4 && !strncasecmp(p, "gzip", 4)) || (n == 1 && *p == '*')) {
            const char *q = memchr(p, '=', end);
            return !q || strtod(q + 1, NULL) > 0;
        }
        p += end;
    }
    return 0;
}

/* End a JSON answer with a line break, as the Kubernetes API server ends its JSON bodies: curl
 * then leaves the prompt on a line of its own; JSON readers (kube-scheduler's among them) skip it
 * as whitespace. Shared answers (resp_release) are left as they are: none is JSON. */
static void end_line(struct gsd_req *r)
{
    if (!r->resp || r->resp_release || !r->ctype || strcmp(r->ctype, "application/json") ||
        (r->resp_len && r->resp[r->resp_len - 1] == '\n'))
        return;
    char *m = realloc(r->resp, r->resp_len + 2);
    if (!m)
        return; /* out of memory: the answer, whole, without its line break */
    m[r->resp_len++] = '\n';
    m[r->resp_len] = '\0';
    r->resp = m;
}

#define ANSWER_SMALL 4096 /* bytes: an error or a pod; answered whatever is in flight */

/* Count @r's answer (its own copy, over ANSWER_SMALL bytes) in flight with the bodies being read,
 * under http.maxBytesInFlight; past it the answer becomes a 503 with Retry-After. */
static void count_answer(struct gsd_server *s, struct conn *k, struct gsd_req *r)
{
    int64_t n = (int64_t)r->resp_len;
    if (!r->resp || r->resp_release || n <= ANSWER_SMALL) /* a shared buffer is held once */
        return;
    if (atomic_fetch_add(&s->stats.answers, n) + n + atomic_load(&s->stats.in_flight) <=
        atomic_load(&s->max_in_flight)) {
        k->answer = n;
        return;
    }
    atomic_fetch_sub(&s->stats.answers, n);
    atomic_fetch_add(&s->stats.rejected[GSD_REJECT_BUSY], 1);
    free(r->resp);
    r->resp = NULL;
    int64_t cap = atomic_load(&s->max_in_flight);
    r->retry_after = n <= cap; /* one larger than the cap would never go: retrying cannot help */
    if (n > cap)
        gsd_reply_error(r, 503, r->paged ? "limit" : "",
                        "the answer is %lld bytes, more than http.maxBytesInFlight (%lld) "
                        "allows in flight: %sraise http.maxBytesInFlight",
                        (long long)n, (long long)cap,
                        r->paged ? "ask for fewer at a time (?limit=), or " : "");
    else
        gsd_reply_error(r, 503, "", "too many answers in flight; retry shortly");
    end_line(r);
}

static enum MHD_Result send_reply(struct gsd_server *s, struct MHD_Connection *c, struct conn *k)
{
    struct gsd_req *r = k->r;
    gsd_reply_render(r);
    end_line(r);
    count_answer(s, k, r);
    struct MHD_Response *resp =
        r->resp_release
            ? MHD_create_response_from_buffer_with_free_callback_cls(r->resp_len, r->resp,
                                                                     r->resp_release, r->resp_cls)
            : MHD_create_response_from_buffer(r->resp_len, r->resp, MHD_RESPMEM_MUST_FREE);
    if (!resp)
        return MHD_NO;
    k->answered = 1;
    r->resp = NULL; /* libmicrohttpd frees or releases it now */
    r->resp_release = NULL;
    if (r->status >= 100 && r->status < 600)
        atomic_fetch_add(&s->stats.answered[r->status / 100], 1);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->ctype ? r->ctype : "text/plain");
    if (r->retry_after > 0) {
        char ra[24];
        snprintf(ra, sizeof(ra), "%lld", (long long)r->retry_after);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    if (r->status == 401)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (r->status == 405 && r->allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
    if (r->close) /* libmicrohttpd then closes the connection after this answer */
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    for (const char *const *h = r->headers; h && h[0] && h[1]; h += 2)
        MHD_add_response_header(resp, h[0], h[1]);
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* Count @n more body bytes in flight. Return: 0; -1 past http.maxBytesInFlight (not counted). */
static int reserve(struct gsd_server *s, struct conn *k, int64_t n)
{
    int64_t cap = atomic_load(&s->max_in_flight);
    if (atomic_fetch_add(&s->stats.in_flight, n) + n > cap) {
        atomic_fetch_sub(&s->stats.in_flight, n);
        return -1;
    }
    k->reserved += n;
    return 0;
}

/* GET /healthz, answered at once: the store can commit, the scheduler thread takes requests. */
static void healthz(struct gsd_server *s, struct gsd_req *r)
{
    int64_t stalled = gsd_mono_us() - atomic_load(&s->pulse_us);
    if (strcmp(r->method, "GET"))
        gsd_reply_405(r, "GET", NULL);
    else if (atomic_load(&s->failed))
        gsd_reply_error(r, 503, "", "the store failed; the daemon is stopping");
    else if (!atomic_load(&s->store_ok))
        gsd_reply_error(r, 503, "", "the store cannot commit (see the log); writes would fail");
    else if (atomic_load(&s->queued) > 0 && stalled > STALL_US)
        gsd_reply_error(r, 503, "", "the scheduler thread has taken no request for %lld s",
                        (long long)(stalled / 1000000));
    else
        gsd_reply_json(r, 200, json_pack("{s:s}", "status", "ok"));
}

/*
 * Did the client present a certificate that the --tls-client-ca CA signed, valid now and for TLS
 * client authentication (extendedKeyUsage clientAuth, when the certificate restricts it)?
 * GnuTLS checks it against the trust list libmicrohttpd was given.
 */
static int client_verified(struct MHD_Connection *c, const char **why)
{
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    gnutls_session_t tls = i ? (gnutls_session_t)i->tls_session : NULL;
    gnutls_typed_vdata_st purpose = {GNUTLS_DT_KEY_PURPOSE_OID,
                                     (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT, 0};
    unsigned status = 1;
    int ok = tls && gnutls_certificate_verify_peers(tls, &purpose, 1, &status) == 0 && status == 0;
    *why = ok                                      ? ""
           : status & GNUTLS_CERT_EXPIRED          ? " (the one presented has expired)"
           : status & GNUTLS_CERT_NOT_ACTIVATED    ? " (the one presented is not valid yet)"
           : status & GNUTLS_CERT_PURPOSE_MISMATCH ? " (the one presented is not for clientAuth)"
           : status & GNUTLS_CERT_SIGNER_NOT_FOUND ? " (the one presented is not the CA's)"
                                                   : "";
    return ok;
}

/* @c's headers must be whole by @deadline_us (monotonic; INT64_MAX: none). */
static void set_deadline(struct gsd_server *s, struct MHD_Connection *c, int64_t deadline_us)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct sock *k = ci ? ci->socket_context : NULL;
    pthread_mutex_lock(&s->socks_mu);
    if (k)
        k->deadline_us = deadline_us;
    pthread_mutex_unlock(&s->socks_mu);
}

/* The headers are in: set the request up, and refuse it now when it may not go on. With
 * --tls-client-ca an extender call needs the client certificate mutual TLS asks for. */
static enum MHD_Result begin(struct gsd_server *s, struct MHD_Connection *c, const char *url,
                             const char *method, void **con_cls)
{
    struct conn *k = calloc(1, sizeof(*k));
    struct gsd_req *r = k ? req_new(GSD_REQ_HTTP) : NULL;
    if (!r) {
        free(k);
        return MHD_NO;
    }
    k->r = r;
    k->begin_us = gsd_mono_us();
    *con_cls = k;
    /* its headers are whole: now its body, whether bytes come or not */
    set_deadline(s, c, k->begin_us + atomic_load(&s->body_timeout_us));
    k->body_due = 1;
    /* HEAD is GET without the body (RFC 9110, 9.3.2), which libmicrohttpd leaves out itself */
    snprintf(r->method, sizeof(r->method), "%s", strcmp(method, "HEAD") ? method : "GET");
    url = origin_form(url);
    size_t n = strlen(url);
    r->qarg_too_long = n >= sizeof(r->path) ? GSD_CUT_PATH : 0;
    n = n < sizeof(r->path) ? n : sizeof(r->path) - 1; /* cut: refused as too long */
    memcpy(r->path, url, n);
    r->path[n] = '\0';
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, keep_qarg, r);
    if (misframed(c, r))
        return send_reply(s, c, k);
    read_auth(c, r);
    r->gzip = takes_gzip(
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING));
    int extender = !strncmp(r->path, "/extender/", 10);
    const char *cert_why = "";
    r->client_cert = s->client_ca && extender && client_verified(c, &cert_why);
    if (s->client_ca && extender && !r->client_cert) {
        atomic_fetch_add(&s->stats.rejected[GSD_REJECT_UNAUTHENTICATED], 1);
        gsd_reply_error(r, 401, "",
                        "/extender/* needs a client certificate signed by the CA gpuschedd was "
                        "given (--tls-client-ca)%s: kube-scheduler's extender tlsConfig",
                        cert_why);
        return send_reply(s, c, k);
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (gsd_access_check(s->access, r, ci ? ci->client_addr : NULL, k->begin_us, &k->cap))
        return send_reply(s, c, k);
    /* after who asks: a body's type is nothing to tell one who may not send it */
    const char *ctype =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    const char *header,
        *cenc = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_ENCODING);
    char why[160];
    if (strcmp(method, "GET") && strcmp(method, "HEAD") &&
        gsd_body_type_refused(ctype, cenc, &header, why, sizeof(why))) {
        gsd_reply_error(r, 415, header, "%s", why);
        return send_reply(s, c, k);
    }
    r->yaml = !strcmp(method, "POST") && gsd_body_is_yaml(ctype);
    const char *cl =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    unsigned long long declared = cl ? strtoull(cl, NULL, 10) : 0;
    if (declared > k->cap) {
        atomic_fetch_add(&s->stats.rejected[GSD_REJECT_TOO_LARGE], 1);
        gsd_reply_error(r, 413, "", "%s %.64s takes a body of at most %zu bytes", r->method,
                        r->path, k->cap);
        return send_reply(s, c, k);
    }
    /* Bytes are counted as they arrive, not as declared: a slow sender holds only what it sent;
     * a body that could not fit now is refused before it starts. */
    if (declared &&
        atomic_load(&s->stats.in_flight) + (int64_t)declared > atomic_load(&s->max_in_flight)) {
        atomic_fetch_add(&s->stats.rejected[GSD_REJECT_BUSY], 1);
        r->retry_after = 1;
        gsd_reply_error(r, 503, "", "too many request bodies in flight; retry shortly");
        return send_reply(s, c, k);
    }
    return MHD_YES;
}

/* A body grown past a cap (@reason, GSD_REJECT_TOO_LARGE or _BUSY): free what it holds and
 * answer it when it ends; the rest of it is dropped as it arrives. */
static void refuse_body(struct gsd_server *s, struct conn *k, int reason)
{
    struct gsd_req *r = k->r;
    atomic_fetch_add(&s->stats.rejected[reason], 1);
    atomic_fetch_sub(&s->stats.in_flight, k->reserved);
    k->reserved = 0;
    k->refused = 1;
    free(r->body);
    r->body = NULL;
    r->len = k->bufcap = 0;
    r->retry_after = reason == GSD_REJECT_BUSY;
    if (reason == GSD_REJECT_BUSY)
        gsd_reply_error(r, 503, "", "too many request bodies in flight; retry shortly");
    else
        gsd_reply_error(r, 413, "", "%s %.64s takes a body of at most %zu bytes", r->method,
                        r->path, k->cap);
}

/* A piece of the body. Return: MHD_NO ends the connection (too slow, or too much dropped). */
static enum MHD_Result take_body(struct gsd_server *s, struct conn *k, const char *data,
                                 size_t size)
{
    struct gsd_req *r = k->r;
    if (gsd_mono_us() - k->begin_us > atomic_load(&s->body_timeout_us)) {
        if (!k->refused) /* counted once: a refused body was counted as such */
            atomic_fetch_add(&s->stats.rejected[GSD_REJECT_TOO_SLOW], 1);
        return MHD_NO;
    }
    if (!k->refused && r->len + size > k->cap)
        refuse_body(s, k, GSD_REJECT_TOO_LARGE);
    else if (!k->refused && r->len + size > (size_t)k->reserved &&
             reserve(s, k, (int64_t)(r->len + size) - k->reserved))
        refuse_body(s, k, GSD_REJECT_BUSY);
    if (k->refused) {
        k->dropped += size;
        return k->dropped > DISCARD_MAX ? MHD_NO : MHD_YES;
    }
    if (r->len + size + 1 > k->bufcap) {
        char *m = gs_grow(r->body, &k->bufcap, r->len + size + 1, 1, 4096);
        if (!m)
            return MHD_NO;
        r->body = m;
    }
    memcpy(r->body + r->len, data, size);
    r->len += size;
    r->body[r->len] = '\0';
    return MHD_YES;
}

/* A NUL byte in a body: neither JSON nor YAML text holds one, and readers of C strings would
 * stop there and take the rest as never sent. Return: 1 when refused (a 400 naming it). */
static int body_nul(struct gsd_req *r)
{
    const char *z = r->len ? memchr(r->body, '\0', r->len) : NULL;
    size_t line = 1, col = 1;
    if (!z)
        return 0;
    for (const char *p = r->body; p < z; p++) {
        line += *p == '\n';
        col = *p == '\n' ? 1 : col + 1;
    }
    gsd_reply_error(r, 400, "",
                    "body: a NUL byte at byte offset %zu (line %zu, column %zu); JSON and YAML "
                    "text hold none",
                    (size_t)(z - r->body), line, col);
    return 1;
}

/* filter and prioritize, answered on this thread. Return: 0 when @r is not one of them. */
static int answer_here(struct gsd_server *s, struct gsd_req *r)
{
    static const char *const no_args[] = {NULL};
    int plain = !strcmp(r->path, "/healthz") || gsd_ui_path(r->path);
    if (plain && !gsd_args_known(r, no_args)) /* ?verbose would be taken and not honoured */
        return 1;
    if (!strcmp(r->path, "/healthz")) {
        healthz(s, r);
        return 1;
    }
    if (gsd_ui_answer(r)) /* the page, which holds no data: ui.h */
        return 1;
    if (strcmp(r->method, "POST") ||
        (strcmp(r->path, "/extender/filter") && strcmp(r->path, "/extender/prioritize")))
        return 0;
    pthread_mutex_lock(&s->state_mu);
    if (atomic_load(&s->failed) || s->st->failed)
        gsd_reply_error(r, 503, "", "the store failed; the daemon is stopping");
    else
        gsd_api_handle(s->st, r);
    pthread_mutex_unlock(&s->state_mu);
    struct gsd_req *n = r->nominate[0] ? req_new(GSD_REQ_NOMINATE) : NULL;
    if (n) { /* the scheduler thread takes it up; filter's answer does not wait */
        snprintf(n->path, sizeof(n->path), "%s", r->nominate);
        enqueue(s, n);
    }
    return 1;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    struct gsd_server *s = cls;
    struct conn *k = *con_cls;
    (void)version;
    if (!k)
        return begin(s, c, url, method, con_cls);
    struct gsd_req *r = k->r;
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        return k->answered ? MHD_YES : take_body(s, k, upload, n);
    }
    if (k->body_due) { /* the body is whole (or there was none) */
        k->body_due = 0;
        set_deadline(s, c, INT64_MAX);
    }
    if (k->answered)
        return MHD_YES;
    if (r->done) { /* resumed: the scheduler thread or a bind thread answered it */
        k->suspended = 0;
        atomic_fetch_sub(&s->suspended, 1);
        return send_reply(s, c, k);
    }
    if (k->refused || body_nul(r) || (r->yaml && gsd_body_from_yaml(r)) || answer_here(s, r))
        return send_reply(s, c, k);
    r->conn = c;
    MHD_suspend_connection(c); /* before the hand-over: the answer may come back at once */
    k->suspended = 1;
    atomic_fetch_add(&s->suspended, 1);
    if (gsd_reads_route(r)) {
        pool_add(&s->readers, r);
    } else {
        gsd_api_prepare(r); /* here, not on the one scheduler thread: see api.h */
        atomic_fetch_add(&s->queued, 1);
        enqueue(s, r);
    }
    return MHD_YES;
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
    struct gsd_server *s = cls;
    struct conn *k = *con_cls;
    (void)toe;
    /* a next request on this connection: its headers whole within the idle timeout, all told */
    set_deadline(s, c, gsd_mono_us() + s->idle_us);
    if (k) {
        atomic_fetch_sub(&s->stats.in_flight, k->reserved);
        atomic_fetch_sub(&s->stats.answers, k->answer);
        if (k->suspended) /* its connection went without the answer being sent */
            atomic_fetch_sub(&s->suspended, 1);
        req_free(k->r);
    }
    free(k);
    *con_cls = NULL;
}

/* A connection starts (listed, its first headers due within http.headerTimeoutSeconds) or
 * closes (unlisted before libmicrohttpd closes its socket, so the reaper never shuts another). */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct gsd_server *s = cls;
    struct sock *k = *socket_context;
    atomic_fetch_add(&s->stats.connections, code == MHD_CONNECTION_NOTIFY_STARTED ? 1 : -1);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!ci || !(k = calloc(1, sizeof(*k)))) {
            if (ci) /* no room to watch it: not kept unwatched */
                shutdown(ci->connect_fd, SHUT_RDWR);
            return;
        }
        k->fd = ci->connect_fd;
        k->deadline_us = gsd_mono_us() + atomic_load(&s->header_timeout_us);
    }
    pthread_mutex_lock(&s->socks_mu);
    if (k && code == MHD_CONNECTION_NOTIFY_STARTED) {
        k->next = s->socks;
        if (s->socks)
            s->socks->prev = k;
        s->socks = k;
    } else if (k) {
        *(k->prev ? &k->prev->next : &s->socks) = k->next;
        if (k->next)
            k->next->prev = k->prev;
    }
    pthread_mutex_unlock(&s->socks_mu);
    if (code != MHD_CONNECTION_NOTIFY_STARTED)
        free(k);
    *socket_context = code == MHD_CONNECTION_NOTIFY_STARTED ? k : NULL;
}

/* Each second, shuts down the connections past their headers' deadline; libmicrohttpd then
 * reads their end and closes them. */
static void *reaper_main(void *arg)
{
    struct gsd_server *s = arg;
    pthread_mutex_lock(&s->socks_mu);
    while (!s->reaper_stop) {
        int64_t now = gsd_mono_us();
        for (struct sock *k = s->socks; k; k = k->next)
            if (!k->shut && k->deadline_us < now) {
                shutdown(k->fd, SHUT_RDWR);
                k->shut = 1;
                atomic_fetch_add(&s->stats.rejected[GSD_REJECT_TOO_SLOW], 1);
            }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&s->socks_cv, &s->socks_mu, &ts);
    }
    pthread_mutex_unlock(&s->socks_mu);
    return NULL;
}

static char *slurp(const char *path, struct gs_diag *d)
{
    FILE *f = fopen(path, "rb");
    char *buf = f ? malloc(1 << 20) : NULL;
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    if (f)
        fclose(f);
    if (!buf || n == 0 || n >= (1 << 20) - 1) {
        free(buf);
        gs_diag_error(d, "%s: cannot read a PEM file (missing, empty or over 1 MiB)", path);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

/* A warning when the serving certificate (@pem, from @path) is not valid now: the daemon serves
 * with it, and every client that verifies it refuses the connection. */
static void warn_cert_dates(const char *pem, const char *path)
{
    gnutls_x509_crt_t crt;
    gnutls_datum_t data = {(unsigned char *)pem, (unsigned)strlen(pem)};
    if (gnutls_x509_crt_init(&crt) < 0)
        return;
    if (gnutls_x509_crt_import(crt, &data, GNUTLS_X509_FMT_PEM) == 0) {
        time_t now = time(NULL), from = gnutls_x509_crt_get_activation_time(crt),
               until = gnutls_x509_crt_get_expiration_time(crt);
        char when[GS_TIME_TEXT_MAX];
        if (until != (time_t)-1 && until < now)
            gsd_log("warn", "the TLS certificate has expired: clients that verify it refuse it",
                    "path", path, "notAfter", gs_time_text(when, (int64_t)until * 1000000, 0),
                    NULL);
        else if (from != (time_t)-1 && from > now)
            gsd_log(
                "warn", "the TLS certificate is not valid yet: clients that verify it refuse it",
                "path", path, "notBefore", gs_time_text(when, (int64_t)from * 1000000, 0), NULL);
    }
    gnutls_x509_crt_deinit(crt);
}

/* Does PEM text @ca hold a CA certificate (basicConstraints CA:TRUE, RFC 5280 §4.2.1.9)? A leaf
 * alone signs no client's certificate: only a client presenting that very one is taken. */
static int holds_ca(const gnutls_datum_t *ca)
{
    gnutls_x509_crt_t *list = NULL;
    unsigned n = 0, any = 0, flag;
    if (gnutls_x509_crt_list_import2(&list, &n, ca, GNUTLS_X509_FMT_PEM, 0) < 0)
        return 1; /* not read here: GnuTLS's trust list said what it took */
    for (unsigned i = 0; i < n; i++) {
        any |= gnutls_x509_crt_get_basic_constraints(list[i], NULL, &flag, NULL) >= 0 && flag;
        gnutls_x509_crt_deinit(list[i]);
    }
    gnutls_free(list);
    return any != 0;
}

/* The PEM files read as GnuTLS will use them, so that a wrong one stops the start with its
 * reason (a key that is not the certificate's; a --tls-client-ca with no certificate in it, with
 * which every extender call would be refused). Return: 0; -EINVAL after writing @d. */
static int tls_check(const struct gsd_server *s, const struct gsd_listen *l, struct gs_diag *d)
{
    gnutls_certificate_credentials_t cred;
    if (gnutls_certificate_allocate_credentials(&cred) < 0)
        return gs_diag_error_code(d, -ENOMEM, "out of memory");
    gnutls_datum_t cert = {(unsigned char *)s->cert, (unsigned)strlen(s->cert)},
                   key = {(unsigned char *)s->key, (unsigned)strlen(s->key)};
    int rc = gnutls_certificate_set_x509_key_mem(cred, &cert, &key, GNUTLS_X509_FMT_PEM), err = 0;
    if (rc < 0)
        err = gs_diag_error(d,
                            "--tls-cert %s with --tls-key %s: %s (both PEM, the certificate first "
                            "in its file, the key unencrypted and the certificate's own)",
                            l->tls_cert, l->tls_key, gnutls_strerror(rc));
    if (!err && s->client_ca) {
        gnutls_datum_t ca = {(unsigned char *)s->client_ca, (unsigned)strlen(s->client_ca)};
        rc = gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
        if (rc <= 0)
            err = gs_diag_error(d, "--tls-client-ca %s: %s", l->client_ca,
                                rc < 0 ? gnutls_strerror(rc) : "no PEM certificate in it");
        else if (!holds_ca(&ca))
            gsd_log("warn",
                    "--tls-client-ca holds no CA certificate (basicConstraints CA:TRUE): only a "
                    "client presenting one of its certificates itself is taken, none it signed",
                    "file", l->client_ca, NULL);
    }
    gnutls_certificate_free_credentials(cred);
    return err;
}

/* Why @ss cannot be listened on, as bind(2) says (libmicrohttpd's failure gives no errno). */
static const char *bind_why(const struct sockaddr_storage *ss)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, e = 0;
    socklen_t len =
        ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (fd < 0)
        return strerror(errno);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)); /* as libmicrohttpd does */
    if (bind(fd, (const struct sockaddr *)ss, len) || listen(fd, 1))
        e = errno;
    close(fd);
    return e ? strerror(e) : "libmicrohttpd could not start (see its log line above)";
}

static void mhd_panic(void *cls, const char *file, unsigned line, const char *reason)
{
    char where[32];
    (void)cls;
    snprintf(where, sizeof(where), "%u", line);
    gsd_log("error", "libmicrohttpd failed", "file", file ? file : "", "line", where, "reason",
            reason ? reason : "", NULL);
    abort();
}

/* libmicrohttpd's own messages (a failed TLS handshake, a connection refused at a limit, ...) as
 * logfmt lines too, at most one a second: a flood of refused connections must not flood the log. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    static _Atomic int64_t last_us;
    static atomic_int dropped;
    char buf[512];
    (void)cls;
    int64_t now = gsd_mono_us(), last = atomic_load(&last_us);
    if (now - last < 1000000 || !atomic_compare_exchange_strong(&last_us, &last, now)) {
        atomic_fetch_add(&dropped, 1);
        return;
    }
    vsnprintf(buf, sizeof(buf), fmt, ap);
    buf[strcspn(buf, "\n")] = '\0';
    char more[24];
    snprintf(more, sizeof(more), "%d", atomic_exchange(&dropped, 0));
    gsd_log("warn", "http", "error", buf, "suppressed", more, NULL);
}

/* The connection limit the open-file limit allows: each connection is a descriptor, and the
 * store, the log and libmicrohttpd's own keep some. */
static unsigned conn_limit(int64_t want)
{
    long fds = sysconf(_SC_OPEN_MAX);
    int64_t room = fds > 256 ? fds - 128 : 128;
    if (want > room) {
        char w[24], r[24];
        snprintf(w, sizeof(w), "%lld", (long long)want);
        snprintf(r, sizeof(r), "%lld", (long long)room);
        gsd_log("warn", "http.maxConnections lowered to what the open-file limit allows", "want", w,
                "limit", r, NULL);
        want = room;
    }
    return (unsigned)want;
}

/* libmicrohttpd's accept policy: a connection past s->max_conns is refused, which closes it as
 * accepted. At its own connection limit libmicrohttpd stops accepting instead, and new clients
 * (a liveness probe among them) wait unanswered in the listen queue; that limit is set above
 * this one by the connections its threads may accept at once. */
static enum MHD_Result admit(void *cls, const struct sockaddr *addr, socklen_t len)
{
    const struct gsd_server *s = cls;
    (void)addr;
    (void)len;
    return atomic_load(&s->stats.connections) < s->max_conns ? MHD_YES : MHD_NO;
}

static int start_mhd(struct gsd_server *s, const struct gsd_listen *l, struct gs_diag *d)
{
    struct sockaddr_storage ss = {0};
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    const struct gsd_http_limits *h = &s->st->cfg->http;
    if (inet_pton(AF_INET, l->host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)l->port);
    } else if (inet_pton(AF_INET6, l->host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)l->port);
        flags |= MHD_USE_IPv6;
    } else {
        return gs_diag_error(d, "--listen: \"%s\" is not a numeric IPv4 or IPv6 address", l->host);
    }
    if (l->tls_cert) {
        s->cert = slurp(l->tls_cert, d);
        s->key = s->cert ? slurp(l->tls_key, d) : NULL;
        if (!s->key)
            return -EINVAL;
        warn_cert_dates(s->cert, l->tls_cert);
        flags |= MHD_USE_TLS;
    }
    if (l->client_ca && !(s->client_ca = slurp(l->client_ca, d)))
        return -EINVAL;
    if (s->cert && tls_check(s, l, d))
        return -EINVAL;
    MHD_set_panic_func(mhd_panic, NULL);
    s->max_conns = conn_limit(h->max_connections);
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, NULL},
        {MHD_OPTION_SOCK_ADDR, 0, &ss},
        {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)h->threads, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)(s->max_conns + 2 * h->threads + 2), NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)h->max_per_client, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)h->idle_timeout_s, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)CONN_MEMORY, NULL},
        /* an HTTP/1.1 request without Host, or with a space in its target, is a 400 */
        {MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_done, s},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s},
        {MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape, NULL},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)cut_query, NULL},
        {s->cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, s->cert},
        {s->key ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, s->key},
        /* the trust list makes libmicrohttpd ask every client for a certificate; which paths
         * need one is decided per request (client_verified()) */
        {s->client_ca ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, s->client_ca},
        {MHD_OPTION_END, 0, NULL},
    };
    /* the address is MHD_OPTION_SOCK_ADDR's; the port given here is only what libmicrohttpd's
     * own bind error names ("Failed to bind to port 0" otherwise) */
    s->mhd = MHD_start_daemon(flags, (uint16_t)l->port, admit, s, on_request, s, MHD_OPTION_ARRAY,
                              opts, MHD_OPTION_END);
    int six = ss.ss_family == AF_INET6; /* [::1]:8080, as a URL writes it */
    if (!s->mhd)
        return gs_diag_error_code(d, -EADDRINUSE, "cannot listen on %s%s%s:%d: %s", six ? "[" : "",
                                  l->host, six ? "]" : "", l->port, bind_why(&ss));
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : l->port;
    return 0;
}

int gsd_server_start(struct gsd_state *st, const struct gsd_listen *l, struct gsd_server **out,
                     struct gs_diag *d)
{
    struct gsd_server *s = calloc(1, sizeof(*s));
    if (!s || gsd_access_new(st->cfg, &s->stats, &s->access)) {
        free(s);
        return -ENOMEM;
    }
    s->st = st;
    s->started = st->cfg->http;
    s->started_sync_full = st->cfg->store_sync_full;
    st->http = &s->stats;
    atomic_init(&s->max_in_flight, st->cfg->http.max_in_flight);
    atomic_init(&s->body_timeout_us, st->cfg->http.body_timeout_s * 1000000);
    atomic_init(&s->header_timeout_us, st->cfg->http.header_timeout_s * 1000000);
    s->idle_us = st->cfg->http.idle_timeout_s * 1000000;
    atomic_init(&s->failed, 0);
    atomic_init(&s->store_ok, 1);
    atomic_init(&s->pulse_us, gsd_mono_us());
    atomic_init(&s->sync_stop, 0);
    pthread_condattr_t ca; /* timed waits on the monotonic clock, as the grace periods are */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->state_mu, NULL);
    pthread_cond_init(&s->cv, &ca);
    pthread_cond_init(&s->sync_cv, &ca);
    pthread_mutex_init(&s->socks_mu, NULL);
    pthread_cond_init(&s->socks_cv, &ca);
    pthread_condattr_destroy(&ca);
    sync_agents(s);
    if (gsd_snap_init(st) || gsd_snap_publish(st) ||
        gsd_reads_new(st->snaps, &s->stats, &s->reads)) {
        gsd_snap_free(st);
        gsd_access_free(s->access);
        free(s);
        return gs_diag_error_code(d, -ENOMEM, "out of memory for the first snapshot");
    }
    gsd_snap_set_wake(st->snaps, wake_publish, s);
    gsd_forecaster_set_wake(st->fc, wake_publish, s);
    if (pthread_create(&s->thread, NULL, scheduler_main, s)) {
        gsd_forecaster_set_wake(st->fc, NULL, NULL);
        gsd_reads_free(s->reads);
        gsd_snap_free(st);
        gsd_access_free(s->access);
        free(s);
        return gs_diag_error_code(d, -EAGAIN, "cannot start the scheduler thread");
    }
    s->binders_started = pool_start(&s->binders, s, BIND_THREADS, 0, finish_bind) > 0;
    s->readers_started = pool_start(&s->readers, s, READ_THREADS, READ_NICE, read_one) > 0;
    if (!s->readers_started) {
        gsd_server_stop(s);
        return gs_diag_error_code(d, -EAGAIN, "cannot start the reader threads");
    }
    for (int i = 0; i < 3; i++) { /* the PodGroups' waits for a config that asks for them */
        struct follower *f = &s->follow[i];
        *f = (struct follower){.s = s, .nodes = i};
        f->started =
            (i != 1 || st->nodes_from_kube) && pthread_create(&f->thread, NULL, sync_main, f) == 0;
        if (!f->started && (i != 1 || st->nodes_from_kube))
            gsd_log("error",
                    i == 2 ? "cannot start the PodGroup sync thread: PodGroups need POST "
                             "/v1/podgroups"
                    : i    ? "cannot start the Node sync thread: Nodes added in Kubernetes wait "
                             "for a restart"
                           : "cannot start the pod sync thread: pods deleted in Kubernetes keep "
                             "their cards until DELETE /v1/pods",
                    NULL);
    }
    s->reaper_started = pthread_create(&s->reaper, NULL, reaper_main, s) == 0;
    int rc = s->reaper_started ? start_mhd(s, l, d)
                               : gs_diag_error_code(d, -EAGAIN, "cannot start the reaper thread");
    if (rc) {
        gsd_server_stop(s);
        return rc;
    }
    pthread_mutex_lock(&s->mu);
    s->serving = 1;
    pthread_cond_broadcast(&s->sync_cv);
    pthread_mutex_unlock(&s->mu);
    *out = s;
    return 0;
}

int gsd_server_port(const struct gsd_server *s)
{
    return s->port;
}

void gsd_server_reload(struct gsd_server *s, struct gsd_config *cfg)
{
    struct gsd_req *r = req_new(GSD_REQ_RELOAD);
    const struct gsd_http_limits *was = &s->started; /* what the listener runs with */
    if (!r) {
        gsd_config_free(cfg);
        gsd_log("error", "config not reloaded: out of memory", NULL);
        return;
    }
    if (was->max_connections != cfg->http.max_connections ||
        was->max_per_client != cfg->http.max_per_client ||
        was->idle_timeout_s != cfg->http.idle_timeout_s || was->threads != cfg->http.threads)
        gsd_log("warn", "http connection limits, idle timeout and threads change at the next start",
                NULL);
    if (s->started_sync_full != cfg->store_sync_full)
        gsd_log("warn", "storeSync changes at the next start", NULL);
    r->new_cfg = cfg; /* the timeouts change when the scheduler thread takes it, if it does */
    submit_wait(s, r);
    req_free(r);
    pthread_mutex_lock(&s->mu); /* the syncs take up the new period at once (cfg_gen moved) */
    pthread_cond_broadcast(&s->sync_cv);
    pthread_mutex_unlock(&s->mu);
}

/* Stop taking connections, then wait (at most DRAIN_US) until every suspended one is answered. */
static void drain(struct gsd_server *s)
{
    MHD_socket fd = MHD_quiesce_daemon(s->mhd);
    int64_t until = gsd_mono_us() + DRAIN_US;
    while (atomic_load(&s->suspended) > 0 && gsd_mono_us() < until)
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    if (atomic_load(&s->suspended) > 0)
        gsd_log("error", "drain: requests still unanswered; stopping anyway", NULL);
    MHD_stop_daemon(s->mhd);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
}

int gsd_server_stop(struct gsd_server *s)
{
    if (!s)
        return 0;
    atomic_store(&s->sync_stop, 1);
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_cond_broadcast(&s->sync_cv);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < 3; i++) /* before the scheduler stops: a sync may be waiting on it */
        if (s->follow[i].started)
            pthread_join(s->follow[i].thread, NULL);
    if (s->mhd) /* the scheduler and the bind threads still answer what is in flight */
        drain(s);
    if (s->reaper_started) { /* after libmicrohttpd: every connection is closed and unlisted */
        pthread_mutex_lock(&s->socks_mu);
        s->reaper_stop = 1;
        pthread_cond_signal(&s->socks_cv);
        pthread_mutex_unlock(&s->socks_mu);
        pthread_join(s->reaper, NULL);
    }
    if (s->binders_started)
        pool_stop(&s->binders);
    if (s->readers_started)
        pool_stop(&s->readers);
    struct gsd_req *r = req_new(GSD_REQ_STOP);
    if (r) {
        submit_wait(s, r);
        req_free(r);
    }
    pthread_join(s->thread, NULL);
    gsd_forecaster_set_wake(s->st->fc, NULL, NULL); /* it outlives the server */
    gsd_reads_free(s->reads);
    gsd_snap_free(s->st);
    s->st->http = NULL;
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->state_mu);
    pthread_cond_destroy(&s->cv);
    pthread_cond_destroy(&s->sync_cv);
    int failed = atomic_load(&s->failed);
    gsd_access_free(s->access);
    free(s->cert);
    free(s->key);
    free(s->client_ca);
    free(s);
    return failed;
}
