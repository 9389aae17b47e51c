/*
 * gpuschedd: the HTTP side (libmicrohttpd, a thread per connection) and the scheduler thread.
 *
 * An HTTP thread reads one request (the body capped: Content-Length over the cap is refused
 * before a byte of it is read, a chunked body past the cap is dropped and refused at its end),
 * hashes its bearer token, queues it and sleeps on its own condition variable. The scheduler
 * thread takes up to GSD_BATCH_MAX queued requests, runs them in one store transaction, commits,
 * and only then wakes their threads. Reloads and the stop request travel the same queue, so they
 * take effect between batches, never inside one.
 *
 * The extender's filter and prioritize write nothing to the store, and kube-scheduler waits on
 * them for every pod: the HTTP thread answers them itself, holding the state lock the scheduler
 * thread holds while it runs a batch in memory (not while it commits). That saves two thread
 * hand-offs, each a wait for a CPU when the machine is busy. They may see a batch's changes
 * before its commit; a failed commit stops the daemon, and a read is not a promise.
 *
 * The extender's bind commits its cards like any write; then its connection thread, holding no
 * lock, writes the pod to the Kubernetes API server (kube.c), so a slow API server delays that
 * bind alone. A refusal is queued back (GSD_REQ_UNBIND) and run before the answer leaves, so
 * kube-scheduler hears of a failed bind only once its cards are free; and nothing is written to
 * the API server before the cards are committed, so no pod is bound there that is not held here.
 * (A drain lets the calls finish: the listener stops only after its connection threads.) A crash
 * between the commit and the API calls leaves the pod held and not bound: kube-scheduler, whose
 * bind failed, schedules the pod again, filter offers it only the node holding its cards, and
 * bind there makes the calls again.
 */
#include "server.h"
#include "api.h"
#include "extender.h"
#include "kube.h"
#include "log.h"
#include "nodes.h"
#include "store.h"

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
#include <sys/socket.h>
#include <time.h>

#define CONN_LIMIT   1024
#define CONN_TIMEOUT 60 /* seconds of silence before an idle connection is closed */

struct gsd_server {
    struct gsd_state *st;
    struct MHD_Daemon *mhd;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_mutex_t state_mu; /* the state in memory: the scheduler's batches, filter, prioritize */
    struct gsd_req *head, *tail;
    _Atomic size_t max_body, ext_max_body;
    atomic_int failed;
    int port;
    char *cert, *key, *client_ca;
    pthread_t sync_thread; /* the pod sync with the API server (sync_main) */
    pthread_cond_t sync_cv;
    int sync_started, stopping, sync_kick; /* sync_kick: a reload, to take up its period */
    atomic_int sync_stop;                  /* stopping, for a list between its pages */
};

/* Per connection: the request being read. */
struct conn {
    struct gsd_req *r;
    size_t cap, bufcap;
    int too_big;
};

static void req_free(struct gsd_req *r)
{
    if (!r)
        return;
    pthread_cond_destroy(&r->cv);
    gsd_bind_free(r->bind);
    json_decref(r->live);
    free(r->body);
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

/* Queue @r for the scheduler thread and wait for its answer. */
static void submit(struct gsd_server *s, struct gsd_req *r)
{
    r->arrive_us = gsd_mono_us();
    pthread_mutex_lock(&s->mu);
    r->next = NULL;
    *(s->tail ? &s->tail->next : &s->head) = r;
    s->tail = r;
    pthread_cond_signal(&s->cv);
    while (!r->done)
        pthread_cond_wait(&r->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
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
            gsd_log("error", "config reload refused: the old one stays in force", "error",
                    d.msg[0] ? d.msg : "out of memory", NULL);
            gsd_config_free(r->new_cfg);
        }
        atomic_store(&s->max_body, st->cfg->max_body);
        atomic_store(&s->ext_max_body, st->cfg->extender_max_body);
        r->new_cfg = NULL;
        return 0;
    }
    if (r->kind == GSD_REQ_UNBIND) {
        if (!atomic_load(&s->failed) && !st->failed)
            gsd_extender_unbind(st, r->bind);
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

/* Wait for requests, or until monotonic time @until_us when a node's grace period ends then.
 * Return: requests taken (0 when the time came first). */
static int take_batch(struct gsd_server *s, struct gsd_req **batch, int64_t until_us)
{
    int n = 0;
    struct timespec ts = {(time_t)(until_us / 1000000), (long)(until_us % 1000000) * 1000};
    pthread_mutex_lock(&s->mu);
    while (!s->head && (until_us == INT64_MAX || gsd_mono_us() < until_us))
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
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* Count @r's answer by status class (under state_mu: /metrics reads the counts). */
static void count(struct gsd_state *st, const struct gsd_req *r)
{
    if (r->status >= 100 && r->status < 600)
        st->http_requests[r->status / 100]++;
}

/* filter and prioritize, answered on this HTTP thread. Return: 0 when @r is not one of them. */
static int answer_here(struct gsd_server *s, struct gsd_req *r)
{
    if (strcmp(r->method, "POST") ||
        (strcmp(r->path, "/extender/filter") && strcmp(r->path, "/extender/prioritize")))
        return 0;
    pthread_mutex_lock(&s->state_mu);
    if (atomic_load(&s->failed) || s->st->failed)
        gsd_reply_error(r, 503, "", "the store failed; the daemon is stopping");
    else
        gsd_api_handle(s->st, r);
    count(s->st, r);
    pthread_mutex_unlock(&s->state_mu);
    return 1;
}

/*
 * An extender bind whose cards are committed: write it to the API server on this thread, not the
 * scheduler's. A refusal hands the cards back through the queue before the answer goes out, so
 * kube-scheduler never hears of a failed bind whose cards are still held; Error names why.
 */
static void finish_bind(struct gsd_server *s, struct gsd_req *r)
{
    struct gsd_bind *b = r->bind;
    r->bind = NULL;
    if (r->status != 200) { /* the commit failed: nothing is held, nothing to bind */
        gsd_bind_free(b);
        return;
    }
    int rc = gsd_kube_bind(b);
    char key[2 * GSD_NAME_MAX + 1];
    snprintf(key, sizeof(key), "%s/%s", b->ns, b->name);
    if (rc == GSD_KUBE_BOUND)
        gsd_log("info", "pod bound in Kubernetes", "pod", key, "node", b->node, NULL);
    else if (rc == GSD_KUBE_UNKNOWN)
        gsd_log("warn", "bind outcome unknown: cards kept", "pod", key, "error", b->err, NULL);
    struct gsd_req *u = rc == GSD_KUBE_REFUSED ? req_new(GSD_REQ_UNBIND) : NULL;
    if (u) {
        u->bind = b;
        submit(s, u);
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
}

/* The API server to follow and how often to list it afresh, copied under the state lock (a
 * reload may change them); k->api_server NULL when there is none or syncSeconds is 0. */
static void sync_config(struct gsd_server *s, struct gsd_kube *k)
{
    pthread_mutex_lock(&s->state_mu);
    const struct gsd_kube *c = s->st->cfg->kube;
    *k = (struct gsd_kube){0};
    if (c && c->sync_us) {
        k->timeout_ms = c->timeout_ms;
        k->sync_us = c->sync_us;
        k->api_server = strdup(c->api_server);
        k->token_file = c->token_file ? strdup(c->token_file) : NULL;
        k->ca_file = c->ca_file ? strdup(c->ca_file) : NULL;
    }
    pthread_mutex_unlock(&s->state_mu);
}

/* Hand @r to the scheduler thread and free it once done. */
static void submit_free(struct gsd_server *s, struct gsd_req *r)
{
    submit(s, r);
    req_free(r);
}

/* gsd_kube_follow()'s stop: the daemon stops, or a reload changed `kubernetes:`. */
static int follow_stop(void *ud)
{
    struct gsd_server *s = ud;
    pthread_mutex_lock(&s->mu);
    int stop = s->stopping || s->sync_kick;
    pthread_mutex_unlock(&s->mu);
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
    submit_free(ud, r);
}

/* A pod deleted or finished: released at once when bind took cards for it (looked up first
 * under the state lock, so the many pods gpuschedd never bound cost no store transaction). */
static void follow_gone(void *ud, const char *key, const char *uid)
{
    struct gsd_server *s = ud;
    pthread_mutex_lock(&s->state_mu);
    int held = gsd_extender_holds(s->st, key, uid);
    pthread_mutex_unlock(&s->state_mu);
    struct gsd_req *r = held ? req_new(GSD_REQ_GONE) : NULL;
    if (r && (r->live = json_pack("{s:s}", key, uid)))
        submit_free(s, r);
    else
        req_free(r);
}

/* While `kubernetes:` is configured with a syncSeconds: gsd_kube_follow(), taken up anew after
 * each reload. */
static void *sync_main(void *arg)
{
    struct gsd_server *s = arg;
    const struct gsd_kube_sink sink = {s, follow_stop, follow_listed, follow_gone};
    for (;;) {
        struct gsd_kube k;
        sync_config(s, &k);
        pthread_mutex_lock(&s->mu);
        while (!s->stopping && !s->sync_kick && !k.api_server)
            pthread_cond_wait(&s->sync_cv, &s->mu);
        int stop = s->stopping;
        s->sync_kick = 0;
        pthread_mutex_unlock(&s->mu);
        if (!stop && k.api_server)
            gsd_kube_follow(&k, &sink);
        free(k.api_server);
        free(k.token_file);
        free(k.ca_file);
        if (stop)
            return NULL;
    }
}

static void *scheduler_main(void *arg)
{
    struct gsd_server *s = arg;
    struct gsd_state *st = s->st;
    struct gsd_req *batch[GSD_BATCH_MAX];
    for (int stop = 0; !stop;) {
        int failed = atomic_load(&s->failed) || st->failed; /* stopping: no expiry to wait for */
        int n = take_batch(s, batch, failed ? INT64_MAX : gsd_health_deadline(st));
        pthread_mutex_lock(&s->state_mu);
        int ok = atomic_load(&s->failed) || gsd_store_begin(st->store) == 0;
        if (!ok)
            st->failed = 1; /* no transaction: nothing may be written, every answer is 503 */
        for (int i = 0; i < n; i++)
            stop |= run_one(s, batch[i]);
        if (!atomic_load(&s->failed) && ok && !st->failed)
            gsd_health_expire(st); /* after the batch: its heartbeats count */
        if (!atomic_load(&s->failed) && ok && !st->failed && !st->held)
            gsd_sched_run(st); /* what the batch freed or changed, for the pending */
        pthread_mutex_unlock(&s->state_mu);
        if (!atomic_load(&s->failed)) {
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
        pthread_mutex_lock(&s->state_mu);
        for (int i = 0; i < n; i++)
            if (batch[i]->kind == GSD_REQ_HTTP)
                count(st, batch[i]);
        pthread_mutex_unlock(&s->state_mu);
        pthread_mutex_lock(&s->mu);
        for (int i = 0; i < n; i++) {
            batch[i]->done = 1;
            pthread_cond_signal(&batch[i]->cv);
        }
        pthread_mutex_unlock(&s->mu);
    }
    return NULL;
}

static enum MHD_Result keep_qarg(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    struct gsd_req *r = cls;
    (void)kind;
    if (r->nqargs == GSD_QARGS_MAX || strlen(key) >= sizeof(r->qargs[0].key) ||
        (value && strlen(value) >= GSD_QARG_LEN)) {
        r->qarg_too_long = 1;
        return MHD_NO;
    }
    strcpy(r->qargs[r->nqargs].key, key);
    strcpy(r->qargs[r->nqargs].val, value ? value : "");
    r->nqargs++;
    return MHD_YES;
}

static void read_auth(struct MHD_Connection *c, struct gsd_req *r)
{
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h)
        return;
    r->auth = 2;
    if (strncasecmp(h, "Bearer ", 7) == 0) {
        const char *t = h + 7;
        while (*t == ' ')
            t++;
        r->auth = 1;
        gsd_sha256(t, strlen(t), r->token_sha);
    }
}

static enum MHD_Result send_reply(struct MHD_Connection *c, struct gsd_req *r)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(r->resp_len, r->resp, MHD_RESPMEM_MUST_FREE);
    if (!resp)
        return MHD_NO;
    r->resp = NULL; /* libmicrohttpd frees it now */
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->ctype ? r->ctype : "text/plain");
    if (r->retry_after > 0) {
        char ra[24];
        snprintf(ra, sizeof(ra), "%lld", (long long)r->retry_after);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    if (r->status == 401)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result too_big(struct MHD_Connection *c, struct conn *k)
{
    gsd_reply_error(k->r, 413, "", "the body is larger than %zu bytes", k->cap);
    return send_reply(c, k->r);
}

/*
 * Did the client present a certificate that the --tls-client-ca CA signed, valid now and for TLS
 * client authentication (extendedKeyUsage clientAuth, when the certificate restricts it)?
 * GnuTLS checks it against the trust list libmicrohttpd was given.
 */
static int client_verified(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    gnutls_session_t tls = i ? (gnutls_session_t)i->tls_session : NULL;
    gnutls_typed_vdata_st purpose = {GNUTLS_DT_KEY_PURPOSE_OID,
                                     (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT, 0};
    unsigned status = 1;
    return tls && gnutls_certificate_verify_peers(tls, &purpose, 1, &status) == 0 && status == 0;
}

/* First call of a request: set it up; refuse at once a declared body over the cap, and an
 * extender call without the client certificate mutual TLS asks for. */
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
    *con_cls = k;
    snprintf(r->method, sizeof(r->method), "%s", method);
    size_t n = strlen(url);
    r->qarg_too_long = n >= sizeof(r->path);
    n = n < sizeof(r->path) ? n : sizeof(r->path) - 1; /* cut: refused as too long */
    memcpy(r->path, url, n);
    r->path[n] = '\0';
    k->cap = atomic_load(strncmp(url, "/extender/", 10) ? &s->max_body : &s->ext_max_body);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, keep_qarg, r);
    read_auth(c, r);
    if (s->client_ca && !strncmp(url, "/extender/", 10) && !client_verified(c)) {
        k->too_big = 1; /* the body is not read */
        gsd_reply_error(r, 401, "",
                        "/extender/* needs a client certificate signed by the CA gpuschedd was "
                        "given (--tls-client-ca): kube-scheduler's extender tlsConfig");
        return send_reply(c, r);
    }
    const char *cl =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > k->cap) {
        k->too_big = 1;
        return too_big(c, k);
    }
    return MHD_YES;
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
        if (!k->too_big && r->len + *upload_size > k->cap) {
            k->too_big = 1;
            free(r->body);
            r->body = NULL;
        }
        if (!k->too_big && r->len + *upload_size + 1 > k->bufcap) {
            char *m = gs_grow(r->body, &k->bufcap, r->len + *upload_size + 1, 1, 4096);
            if (!m)
                return MHD_NO;
            r->body = m;
        }
        if (!k->too_big) {
            memcpy(r->body + r->len, upload, *upload_size);
            r->len += *upload_size;
            r->body[r->len] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (k->too_big)
        return r->status ? MHD_YES : too_big(c, k);
    if (!answer_here(s, r))
        submit(s, r);
    if (r->bind)
        finish_bind(s, r);
    return send_reply(c, r);
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
    struct conn *k = *con_cls;
    (void)cls;
    (void)c;
    (void)toe;
    if (k)
        req_free(k->r);
    free(k);
    *con_cls = NULL;
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

static void mhd_panic(void *cls, const char *file, unsigned line, const char *reason)
{
    char where[32];
    (void)cls;
    snprintf(where, sizeof(where), "%u", line);
    gsd_log("error", "libmicrohttpd failed", "file", file ? file : "", "line", where, "reason",
            reason ? reason : "", NULL);
    abort();
}

/* libmicrohttpd's own messages (a failed TLS handshake, ...) as logfmt lines too. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char buf[512];
    (void)cls;
    vsnprintf(buf, sizeof(buf), fmt, ap);
    buf[strcspn(buf, "\n")] = '\0';
    gsd_log("warn", "http", "error", buf, NULL);
}

static int start_mhd(struct gsd_server *s, const struct gsd_listen *l, struct gs_diag *d)
{
    struct sockaddr_storage ss = {0};
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_ERROR_LOG | MHD_USE_ITC;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
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
        flags |= MHD_USE_TLS;
    }
    if (l->client_ca && !(s->client_ca = slurp(l->client_ca, d)))
        return -EINVAL;
    MHD_set_panic_func(mhd_panic, NULL);
    struct MHD_OptionItem tls[] = {
        {s->cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, s->cert},
        {s->key ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, s->key},
        /* the trust list makes libmicrohttpd ask every client for a certificate; which paths
         * need one is decided per request (client_verified()) */
        {s->client_ca ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, s->client_ca},
        {MHD_OPTION_END, 0, NULL},
    };
    s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER,
                              mhd_log, NULL, MHD_OPTION_SOCK_ADDR, &ss, MHD_OPTION_CONNECTION_LIMIT,
                              (unsigned)CONN_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT,
                              (unsigned)CONN_TIMEOUT, MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL,
                              MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
    if (!s->mhd)
        return gs_diag_error_code(d, -EADDRINUSE,
                                  "cannot listen on %s:%d (address in use, not local, or a bad "
                                  "TLS certificate or key)",
                                  l->host, l->port);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : l->port;
    return 0;
}

int gsd_server_start(struct gsd_state *st, const struct gsd_listen *l, struct gsd_server **out,
                     struct gs_diag *d)
{
    struct gsd_server *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    s->st = st;
    atomic_init(&s->max_body, st->cfg->max_body);
    atomic_init(&s->ext_max_body, st->cfg->extender_max_body);
    atomic_init(&s->failed, 0);
    atomic_init(&s->sync_stop, 0);
    pthread_condattr_t ca; /* timed waits on the monotonic clock, as the grace periods are */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->state_mu, NULL);
    pthread_cond_init(&s->cv, &ca);
    pthread_cond_init(&s->sync_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&s->thread, NULL, scheduler_main, s)) {
        free(s);
        return gs_diag_error_code(d, -EAGAIN, "cannot start the scheduler thread");
    }
    s->sync_started = pthread_create(&s->sync_thread, NULL, sync_main, s) == 0;
    if (!s->sync_started)
        gsd_log("error",
                "cannot start the pod sync thread: pods deleted in Kubernetes keep "
                "their cards until DELETE /v1/pods",
                NULL);
    int rc = start_mhd(s, l, d);
    if (rc) {
        gsd_server_stop(s);
        return rc;
    }
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
    if (!r) {
        gsd_config_free(cfg);
        gsd_log("error", "config not reloaded: out of memory", NULL);
        return;
    }
    r->new_cfg = cfg;
    submit(s, r);
    req_free(r);
    pthread_mutex_lock(&s->mu); /* the pod sync takes up the new period at once */
    s->sync_kick = 1;
    pthread_cond_broadcast(&s->sync_cv);
    pthread_mutex_unlock(&s->mu);
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
    if (s->sync_started) /* before the scheduler stops: a sync may be waiting on it */
        pthread_join(s->sync_thread, NULL);
    if (s->mhd) /* waits for the connection threads, whose requests the scheduler still runs */
        MHD_stop_daemon(s->mhd);
    struct gsd_req *r = req_new(GSD_REQ_STOP);
    if (r) {
        submit(s, r);
        req_free(r);
    }
    pthread_join(s->thread, NULL);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->state_mu);
    pthread_cond_destroy(&s->cv);
    pthread_cond_destroy(&s->sync_cv);
    int failed = atomic_load(&s->failed);
    free(s->cert);
    free(s->key);
    free(s->client_ca);
    free(s);
    return failed;
}
