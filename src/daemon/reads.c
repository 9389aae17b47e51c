/*
 * gpuschedd: the reads answered from a snapshot (snapshot.h) on a reader thread, never on the
 * scheduler thread: GET /v1/pods (a list), GET /v1/pods/NS/NAME, GET /v1/status, GET /v1/waits and
 * GET /metrics.
 * Access was settled on the headers (access.c); a tenant's token sees its own pods only.
 *
 * A scrape is made once per snapshot for each of its three levels (aggregates, names, pods), and
 * kept while the state moves for metrics.maxAgeMilliseconds: Prometheus replicas scraping the
 * same state cost one rendering, not one each, and a state moving 20 times a second costs at
 * most one rendering a level per bound (a scrape with names sorts every running pod).
 */
#include "reads.h"
#include "api.h"
#include "config.h"
#include "metrics.h"
#include "server.h"
#include "snapshot.h"
#include "state.h"
#include "textbuf.h"

#include "gpusched/page.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

/* A scrape's text, shared by the cache and the answers being sent. */
struct scrape {
    atomic_int refs;
    uint64_t gen;    /* of the snapshot it shows */
    int64_t made_us; /* when, monotonic */
    int extras;      /* what the snapshot held of what a scrape with names asks for (extras()) */
    char *gz;        /* the text gzipped, made for the first scraper that takes it; or NULL */
    size_t gzlen, len;
    char text[];
};

static void scrape_release(void *cls)
{
    struct scrape *sc = cls;
    if (sc && atomic_fetch_sub(&sc->refs, 1) == 1) {
        free(sc->gz);
        free(sc);
    }
}

/* @sc's text gzipped into sc->gz (left NULL out of memory). Level 1: a scrape's label sets
 * repeat line after line, so the fastest level already takes it to about a tenth, in a few
 * milliseconds per megabyte. */
static void scrape_gzip(struct scrape *sc)
{
    z_stream z = {0};
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) /* +16: gzip */
        return;
    uLong cap = deflateBound(&z, (uLong)sc->len);
    char *out = malloc(cap);
    z.next_in = (Bytef *)sc->text;
    z.avail_in = (uInt)sc->len;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)cap;
    if (out && deflate(&z, Z_FINISH) == Z_STREAM_END) {
        sc->gz = out;
        sc->gzlen = z.total_out;
    } else
        free(out);
    deflateEnd(&z);
}

/* How long a scrape waits for the bills it asked for: a batch the scheduler thread may be
 * running (its store commit among it) before it publishes them. */
#define BILLS_WAIT_US  (3 * 1000000LL)
#define LIST_MAX_BYTES (1u << 30) /* a list answer: 5,000 pods with 64 KiB of labels each */
#define OWNER_SLOTS                                                                                \
    1024 /* chunks whose owners are kept (2^10: the slot is a hash's top                           \
            10 bits): 256 K pods, 1.1 MB */

/*
 * The tenants of one published chunk of pods, as hashes (owner_hash()): a list for one tenant
 * skips the pods of others without reading their views, which lie all over memory. A published
 * chunk never changes, and its address and generation name it: a chunk made at the address of
 * a freed one is of a later publish.
 */
struct owners {
    const struct gsd_podchunk *chunk;
    uint64_t gen;
    uint32_t hash[GSD_POD_CHUNK];
};

struct gsd_reads {
    pthread_mutex_t mu;       /* the scrapes */
    struct scrape *scrape[3]; /* the last of each level */
    pthread_mutex_t owners_mu;
    struct owners *owners; /* OWNER_SLOTS, a chunk in the slot of its address's hash */
    struct gsd_snaps *snaps;
    const struct gsd_http_stats *http;
};

int gsd_reads_new(struct gsd_snaps *snaps, const struct gsd_http_stats *http,
                  struct gsd_reads **out)
{
    struct gsd_reads *rd = calloc(1, sizeof(*rd));
    if (!rd)
        return -ENOMEM;
    rd->owners = calloc(OWNER_SLOTS, sizeof(*rd->owners));
    if (!rd->owners) {
        free(rd);
        return -ENOMEM;
    }
    pthread_mutex_init(&rd->mu, NULL);
    pthread_mutex_init(&rd->owners_mu, NULL);
    rd->snaps = snaps;
    rd->http = http;
    *out = rd;
    return 0;
}

void gsd_reads_free(struct gsd_reads *rd)
{
    if (!rd)
        return;
    for (int i = 0; i < 3; i++)
        scrape_release(rd->scrape[i]);
    pthread_mutex_destroy(&rd->mu);
    pthread_mutex_destroy(&rd->owners_mu);
    free(rd->owners);
    free(rd);
}

int gsd_reads_route(const struct gsd_req *r)
{
    return !strcmp(r->method, "GET") &&
           (!strcmp(r->path, "/v1/pods") || !strncmp(r->path, "/v1/pods/", 9) ||
            !strcmp(r->path, "/v1/status") || !strcmp(r->path, "/v1/waits") ||
            !strcmp(r->path, "/metrics"));
}

int gsd_pod_path(const char *rest, char *ns, char *name)
{
    const char *slash = strchr(rest, '/');
    if (!slash)
        return -1;
    if ((size_t)(slash - rest) >= GSD_NAME_MAX || strlen(slash + 1) >= GSD_OBJ_MAX)
        return -E2BIG;
    memcpy(ns, rest, (size_t)(slash - rest));
    ns[slash - rest] = '\0';
    strcpy(name, slash + 1);
    return gsd_name_ok(ns) && name[0] && !strchr(name, '/') ? 0 : -1;
}

const char *gsd_pod_path_why(int rc)
{
    return rc == -E2BIG ? "no such pod: a namespace is at most 63 bytes, a pod's name 253"
                        : "no such pod: the path is /v1/pods/NAMESPACE/NAME";
}

int gsd_may_use_ns(const struct gsd_config *c, const struct gsd_tenant *viewer, const char *ns,
                   struct gsd_req *r)
{
    if (!viewer || gsd_tenant_of_ns(c, ns) == viewer)
        return 1;
    gsd_reply_error(r, 403, "metadata.namespace", "namespace %s does not belong to tenant %s", ns,
                    viewer->name);
    return 0;
}

/* Hand @t to @r as a 200 JSON answer (500 out of memory). */
static void reply_text(struct gsd_req *r, struct gsd_text *t)
{
    if (t->full || !t->s) {
        free(t->s);
        gsd_reply_error(r, 500, "", "out of memory");
        return;
    }
    r->status = 200;
    r->ctype = "application/json";
    r->resp = t->s;
    r->resp_len = t->len;
}

static uint32_t owner_hash(const char *tenant) /* FNV-1a */
{
    uint32_t h = 2166136261u;
    for (; *tenant; tenant++)
        h = (h ^ (unsigned char)*tenant) * 16777619u;
    return h;
}

/* The owners of chunk @c into @out (c->n of them), kept for the next list. */
static void owners_of(struct gsd_reads *rd, const struct gsd_podchunk *c, uint32_t *out)
{
    struct owners *o = &rd->owners[((uint64_t)(uintptr_t)c * 0x9E3779B97F4A7C15ull) >> 54];
    pthread_mutex_lock(&rd->owners_mu);
    if (o->chunk != c || o->gen != c->gen) {
        o->chunk = c;
        o->gen = c->gen;
        for (size_t k = 0; k < c->n; k++)
            o->hash[k] = owner_hash(c->v[k]->tenant);
    }
    memcpy(out, o->hash, c->n * sizeof(*out));
    pthread_mutex_unlock(&rd->owners_mu);
}

/* Whether snapshot @n knows queue @name (the pods of any other would list as none). */
static int queue_named(const struct gsd_snap *n, const char *name)
{
    for (size_t i = 0; i < n->nqueues; i++)
        if (!strcmp(n->queues[i].name, name))
            return 1;
    return 0;
}

static void list_pods(struct gsd_reads *rd, const struct gsd_snap *n, struct gsd_req *r,
                      const struct gsd_tenant *viewer)
{
    const char *tenant = gsd_qarg(r, "tenant"), *state = gsd_qarg(r, "state");
    const char *queue = gsd_qarg(r, "queue"), *ns = gsd_qarg(r, "namespace");
    int64_t limit, from;
    int want = -1;
    static const char *const filters[] = {"tenant", "state", "queue", "namespace", NULL};
    if (!gsd_args_given(r, filters))
        return;
    if (viewer && tenant && strcmp(tenant, viewer->name)) {
        gsd_reply_error(r, 403, "tenant", "tenant %.64s: a tenant token lists its own pods only",
                        tenant);
        return;
    }
    if (viewer)
        tenant = viewer->name;
    else if (tenant && !gsd_tenant_named(n->cfg, tenant)) { /* as /v1/bills?tenant= answers */
        gsd_reply_error(r, 404, "tenant", "tenant %.64s not found", tenant);
        return;
    }
    if (queue && !queue_named(n, queue)) {
        gsd_reply_error(r, 404, "queue", "queue %.64s not found", queue);
        return;
    }
    if (ns && !gsd_name_ok(ns)) { /* a list of none would read as no pods there */
        gsd_reply_error(r, 400, "namespace", "namespace: expected a DNS label (a-z, 0-9, '-')");
        return;
    }
    if (ns && viewer && gsd_tenant_of_ns(n->cfg, ns) != viewer) { /* as GET /v1/pods/NS/NAME */
        gsd_reply_error(r, 403, "namespace",
                        "namespace %s: a tenant token lists its own namespaces' pods only", ns);
        return;
    }
    if (state) {
        want = !strcmp(state, "pending")     ? 0
               : !strcmp(state, "running")   ? 1
               : !strcmp(state, "allocated") ? 2
                                             : -2;
        if (want == -2) {
            gsd_reply_error(r, 400, "state", "state: expected pending, allocated or running");
            return;
        }
    }
    if (gsd_page_args(r, GSD_PAGE_PODS, &limit, &from))
        return;
    /* {"items":[...],"continue":"TOKEN"} as jansson writes it, of each view's text made once */
    struct gsd_text t = {.max = LIST_MAX_BYTES};
    struct gsd_snap_it it = gsd_snap_from(n, from);
    const struct gsd_podview *v;
    int64_t count = 0;
    uint32_t owner = tenant ? owner_hash(tenant) : 0, owners[GSD_POD_CHUNK];
    size_t owners_c = SIZE_MAX; /* the chunk @owners are of */
    gsd_text_put(&t, "{\"items\":[", 10);
    while ((v = gsd_snap_next(n, &it)) != NULL) {
        if (tenant && owners_c != it.c)
            owners_of(rd, n->pchunk[owners_c = it.c], owners);
        if ((tenant && owners[it.k - 1] != owner) || (tenant && strcmp(v->tenant, tenant)) ||
            (want >= 0 && v->running + v->allocated != want) ||
            (queue && strcmp(v->queue, queue)) || (ns && strcmp(v->ns, ns)))
            continue;
        if (count++ == limit)
            break;
        const char *pod = gsd_podview_text(v);
        t.full |= !pod;
        gsd_text_put(&t, ",", count > 1);
        gsd_text_put(&t, pod ? pod : "", pod ? strlen(pod) : 0);
    }
    char tail[64], next[GSD_PAGE_TOKEN_MAX] = "";
    if (v)
        gsd_page_token(v->seq, GSD_PAGE_PODS, next);
    int len = snprintf(tail, sizeof(tail), "],\"continue\":\"%s\"}", next);
    gsd_text_put(&t, tail, (size_t)len);
    reply_text(r, &t);
}

static void one_pod(const struct gsd_snap *n, struct gsd_req *r, const struct gsd_tenant *viewer)
{
    char ns[GSD_NAME_MAX], name[GSD_OBJ_MAX];
    int bad = gsd_pod_path(r->path + 9, ns, name);
    if (bad) {
        gsd_reply_error(r, 404, "", "%s", gsd_pod_path_why(bad));
        return;
    }
    if (!gsd_may_use_ns(n->cfg, viewer, ns, r))
        return;
    struct gsd_snap_it it = {0, 0};
    for (const struct gsd_podview *v; (v = gsd_snap_next(n, &it)) != NULL;)
        if (!strcmp(v->name, name) && !strcmp(v->ns, ns)) {
            const char *pod = gsd_podview_text(v);
            struct gsd_text t = {.max = LIST_MAX_BYTES};
            t.full = !pod;
            gsd_text_put(&t, pod ? pod : "", pod ? strlen(pod) : 0);
            reply_text(r, &t);
            return;
        }
    gsd_reply_error(r, 404, "", "pod %s/%s " GSD_POD_GONE, ns, name);
}

static void status(const struct gsd_snap *n, struct gsd_req *r, const struct gsd_tenant *viewer)
{
    int64_t gpus = 0, alloc = 0, held = 0;
    for (size_t i = 0; i < n->nnodes; i++)
        for (int g = 0; g < n->node_gpus[i]; g++) {
            gpus++;
            alloc += gsd_snap_node(n, i)->alloc_milli[g];
            held += gsd_snap_node(n, i)->down_milli[g];
        }
    gsd_reply_json(r, 200,
                   json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "version",
                             GS_VERSION, "caller", viewer ? viewer->name : "admin", "nodes",
                             (json_int_t)n->nnodes, "gpus", (json_int_t)gpus, "gpu_milli",
                             (json_int_t)(gpus * 1000), "gpu_milli_allocated", (json_int_t)alloc,
                             "gpu_milli_unavailable", (json_int_t)held, "pods_running",
                             (json_int_t)n->nrunning, "pods_pending", (json_int_t)n->npending,
                             "started_us", (json_int_t)n->started_us));
}

/* The gpusched.io/workload label of @v ("(none)" without one) into @out. */
static void workload_of(const struct gsd_podview *v, char *out, size_t cap)
{
    snprintf(out, cap, "(none)");
    if (!v->meta || !strstr(v->meta, "gpusched.io/workload"))
        return; /* most pods: no parse */
    json_t *m = json_loads(v->meta, 0, NULL);
    const char *w =
        json_string_value(json_object_get(json_object_get(m, "labels"), "gpusched.io/workload"));
    if (w && *w)
        snprintf(out, cap, "%s", w);
    json_decref(m);
}

/* GET /v1/waits: the pods the caller may see, per workload kind, by their wait from submission
 * to start (whole seconds) in the bins of the report's histogram (gs_wait_bin()); waiting pods
 * count in "pods" only. */
static void waits(const struct gsd_snap *n, struct gsd_req *r, const struct gsd_tenant *viewer)
{
    json_t *kinds = json_object(), *order = json_array(), *edges = json_array();
    for (int b = 0; edges && b < GS_WAIT_BINS - 1; b++)
        json_array_append_new(edges, json_integer(gs_wait_edges_s[b]));
    struct gsd_snap_it it = {0, 0};
    for (const struct gsd_podview *v; kinds && order && (v = gsd_snap_next(n, &it)) != NULL;) {
        if (viewer && strcmp(v->tenant, viewer->name))
            continue;
        char name[GSD_NAME_MAX];
        workload_of(v, name, sizeof(name));
        json_t *k = json_object_get(kinds, name);
        if (!k) {
            json_t *counts = json_array();
            for (int b = 0; counts && b < GS_WAIT_BINS; b++)
                json_array_append_new(counts, json_integer(0));
            k = json_pack("{s:s,s:I,s:o}", "name", name, "pods", (json_int_t)0, "counts", counts);
            if (!k || json_object_set_new(kinds, name, k) || json_array_append(order, k))
                break;
        }
        json_t *pods = json_object_get(k, "pods");
        json_integer_set(pods, json_integer_value(pods) + 1);
        if (!v->running)
            continue;
        json_t *c = json_array_get(json_object_get(k, "counts"),
                                   (size_t)gs_wait_bin((v->start_us - v->submit_us) / 1000000));
        json_integer_set(c, json_integer_value(c) + 1);
    }
    json_decref(kinds);
    gsd_reply_json(r, 200, json_pack("{s:o,s:o}", "edges_s", edges, "kinds", order));
}

/* The bills and the forecast in @n: made for the snapshots after a scrape with names asked. */
static int extras(const struct gsd_snap *n)
{
    return (n->bills != NULL) + (n->forecast != NULL);
}

/* A scrape that names tenants has each one's bill from the first (a counter that appears late
 * reads as one that started then): when snapshot @n (held) was published before a reader asked
 * for the bills, wait for a later one, which has them (asking for them wakes the scheduler
 * thread to publish one), BILLS_WAIT_US at most. Return: the snapshot to answer from, held. */
static const struct gsd_snap *with_bills(struct gsd_reads *rd, const struct gsd_snap *n,
                                         const struct gsd_req *r)
{
    if (r->who == GSD_AUTH_NONE)
        return n;
    gsd_snap_want_names(rd->snaps);
    for (int64_t until = gsd_mono_us() + BILLS_WAIT_US;
         n->cfg->rates && !n->bills && gsd_mono_us() < until;) {
        nanosleep(&(struct timespec){0, 10000000}, NULL);
        const struct gsd_snap *m = gsd_snap_get(rd->snaps);
        gsd_snap_put(rd->snaps, n);
        n = m;
    }
    return n;
}

/* GET /metrics at the level the caller's token allows, made once per snapshot and kept up to
 * metrics.maxAgeMilliseconds after the state moved on, unless it lacks the bills or the forecast
 * that the scrape which made it asked for and the state now has. */
static void metrics(struct gsd_reads *rd, const struct gsd_snap *n, struct gsd_req *r)
{
    int level = r->who == GSD_AUTH_NONE   ? GSD_METRICS_AGGREGATE
                : n->cfg->metrics.per_pod ? GSD_METRICS_PER_POD
                                          : GSD_METRICS_NAMED;
    int64_t now = gsd_mono_us();
    pthread_mutex_lock(&rd->mu);
    struct scrape *sc = rd->scrape[level];
    if (!sc || (sc->gen < n->gen && (now - sc->made_us >= n->cfg->metrics.max_age_ms * 1000 ||
                                     (level > GSD_METRICS_AGGREGATE && sc->extras < extras(n))))) {
        size_t len;
        char *text = gsd_metrics_render(n, level, rd->http, &len);
        struct scrape *fresh = text ? malloc(sizeof(*fresh) + len + 1) : NULL;
        if (fresh) {
            atomic_init(&fresh->refs, 1);
            fresh->gen = n->gen;
            fresh->made_us = now;
            fresh->extras = extras(n);
            fresh->gz = NULL;
            fresh->gzlen = 0;
            fresh->len = len;
            memcpy(fresh->text, text, len + 1);
            scrape_release(sc);
            rd->scrape[level] = sc = fresh;
        }
        free(text);
        if (!fresh)
            sc = NULL;
    }
    if (sc && r->gzip && !sc->gz && sc->len <= UINT32_MAX)
        scrape_gzip(sc);
    char *gz = sc && r->gzip ? sc->gz : NULL; /* read under the lock: another may be setting it */
    if (sc)
        atomic_fetch_add(&sc->refs, 1); /* the answer's, until libmicrohttpd has sent it */
    pthread_mutex_unlock(&rd->mu);
    if (!sc) {
        gsd_reply_error(r, 500, "", "the scrape is too large or memory ran out");
        return;
    }
    static const char *const gzipped[] = {"Content-Encoding", "gzip", "Vary", "Accept-Encoding",
                                          NULL};
    r->status = 200;
    r->ctype = "text/plain; version=0.0.4; charset=utf-8";
    r->headers = gz ? gzipped : gzipped + 2;
    r->resp = gz ? gz : sc->text;
    r->resp_len = gz ? sc->gzlen : sc->len;
    r->resp_release = scrape_release;
    r->resp_cls = sc;
}

void gsd_reads_handle(struct gsd_reads *rd, struct gsd_req *r)
{
    static const char *const list_args[] = {"tenant", "state",    "queue", "namespace",
                                            "limit",  "continue", NULL};
    static const char *const no_args[] = {NULL};
    const struct gsd_snap *n = gsd_snap_get(rd->snaps);
    const struct gsd_tenant *viewer = n && r->who >= 0 ? gsd_tenant_named(n->cfg, r->tenant) : NULL;
    if (!n)
        gsd_reply_error(r, 503, "", "starting: nothing to read yet");
    else if (!gsd_args_fit(r))
        ;                            /* answered */
    else if (r->who >= 0 && !viewer) /* a reload since removed the tenant */
        gsd_reply_error(r, 401, "Authorization", "the bearer token is not valid");
    else if (!gsd_args_known(r, strcmp(r->path, "/v1/pods") ? no_args : list_args))
        ; /* answered: a scrape's params (collect[]=...) would otherwise be taken and not honoured
           */
    else if (!strcmp(r->path, "/metrics"))
        metrics(rd, (n = with_bills(rd, n, r)), r);
    else if (!strcmp(r->path, "/v1/status"))
        status(n, r, viewer);
    else if (!strcmp(r->path, "/v1/waits"))
        waits(n, r, viewer);
    else if (!strcmp(r->path, "/v1/pods"))
        list_pods(rd, n, r, viewer);
    else
        one_pod(n, r, viewer);
    gsd_snap_put(rd->snaps, n);
}
