/*
 * gpuschedd: who is asking, and whether the request may go on — decided on the HTTP thread from
 * the request line, the client's address and the headers alone. libmicrohttpd hands a request's
 * headers over before any of its body, so nothing of a refused request's body is read, let alone
 * kept. The checks, in order:
 *  1. an address whose bearer tokens failed http.authFailuresPerMinute times within the last
 *     minute gets 429 with Retry-After on every route that takes credentials, before its token
 *     is even looked at: guessing costs a minute per handful of tries;
 *  2. credentials: GET /healthz and GET /ui (a page that holds no data, ui.h) need none;
 *     GET /metrics takes the metrics or the admin token, or none (then it shows aggregates
 *     only, metrics.c); an extender call may come with the client certificate mutual TLS
 *     verified (--tls-client-ca; server.c then asks for it, and refuses the call without one);
 *     every other route needs a bearer token of the DaemonConfig or a node's own (401, counted
 *     against the address, when it is absent or unknown);
 *  3. the roles' routes: the node agents' bootstrap token and a node's own token (agents.h)
 *     reach only /v1/nodes/..., and POSTs there need one of them or the admin's; the metrics
 *     token reaches only GET /metrics; extender verbs, which bind pods to cards, only the admin
 *     token and kube-scheduler's client certificate, which reaches nothing else (403). Which node a
 * token may act for, and what a tenant may see and touch within /v1, are the handlers' (agents.c,
 * api.c);
 *  4. a tenant's token bucket (rateLimit), and for GET /metrics the client address's
 *     (metrics.scrapesPerSecond): a scrape sends megabytes, and Prometheus scrapes a target every
 *     few seconds, not hundreds of times a second (429 with Retry-After);
 *  5. the body's cap for the route (gsd_access_body_cap()): a declared Content-Length over it is
 *     a 413 at once; server.c stops reading a body that grows past it.
 */
#include "access.h"
#include "api.h"
#include "config.h"
#include "server.h"
#include "ui.h"

#include <errno.h>
#include <nettle/memops.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define FAIL_SLOTS     4096 /* addresses remembered; the oldest record gives way */
#define FAIL_PROBE     8
#define FAIL_WINDOW_US (60 * 1000000LL)
#define SMALL_BODY     (64u << 10) /* bind, heartbeats, card health, the clock: small objects */

/* What one address (an IPv4 address, or an IPv6 /64) did lately: failed tokens, scrapes. */
#define KEY_LEN 9 /* the family, then 4 or 8 bytes */
struct fail_slot {
    uint8_t key[KEY_LEN];
    uint8_t used;
    uint32_t n;                         /* failures since since_us */
    int64_t since_us;                   /* monotonic: the first failure of the window */
    int64_t scrape_milli, scrape_at_us; /* its scrapes' token bucket (metrics.scrapesPerSecond) */
};

struct gsd_access {
    pthread_mutex_t mu; /* everything below */
    struct gsd_config *cfg;
    struct fail_slot fails[FAIL_SLOTS];
    struct gsd_http_stats *stats;
    uint8_t (*agent_sha)[GSD_SHA256_LEN]; /* per node: its own token's hash, when agent_has */
    uint8_t *agent_has;
    size_t nagents;
};

int gsd_access_new(struct gsd_config *cfg, struct gsd_http_stats *stats, struct gsd_access **out)
{
    struct gsd_access *a = calloc(1, sizeof(*a));
    if (!a)
        return -ENOMEM;
    pthread_mutex_init(&a->mu, NULL);
    a->cfg = gsd_config_ref(cfg);
    a->stats = stats;
    *out = a;
    return 0;
}

void gsd_access_free(struct gsd_access *a)
{
    if (!a)
        return;
    gsd_config_free(a->cfg);
    free(a->agent_sha);
    free(a->agent_has);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

int gsd_access_agents(struct gsd_access *a, const uint8_t (*sha)[32], const uint8_t *has, size_t n)
{
    uint8_t(*s)[GSD_SHA256_LEN] = malloc((n ? n : 1) * sizeof(*s));
    uint8_t *h = malloc(n ? n : 1);
    if (!s || !h) {
        free(s);
        free(h);
        return -ENOMEM;
    }
    memcpy(s, sha, n * sizeof(*s));
    memcpy(h, has, n);
    pthread_mutex_lock(&a->mu);
    free(a->agent_sha);
    free(a->agent_has);
    a->agent_sha = s;
    a->agent_has = h;
    a->nagents = n;
    pthread_mutex_unlock(&a->mu);
    return 0;
}

/* The node whose own token hashes to @sha, or -1: every hash compared, whatever matched. */
static int agent_of(const struct gsd_access *a, const uint8_t *sha)
{
    int who = -1;
    for (size_t i = 0; i < a->nagents; i++)
        if (memeql_sec(a->agent_sha[i], sha, GSD_SHA256_LEN) & a->agent_has[i])
            who = (int)i;
    return who;
}

void gsd_access_reload(struct gsd_access *a, struct gsd_config *cfg)
{
    pthread_mutex_lock(&a->mu);
    for (size_t i = 0; i < cfg->ntenants; i++) {
        const struct gsd_tenant *old = gsd_tenant_named(a->cfg, cfg->tenants[i].name);
        if (old) {
            cfg->tenants[i].bucket_milli = old->bucket_milli;
            cfg->tenants[i].bucket_at_us = old->bucket_at_us;
        }
    }
    gsd_config_free(a->cfg);
    a->cfg = gsd_config_ref(cfg);
    pthread_mutex_unlock(&a->mu);
}

struct gsd_config *gsd_access_config(struct gsd_access *a)
{
    pthread_mutex_lock(&a->mu);
    struct gsd_config *c = gsd_config_ref(a->cfg);
    pthread_mutex_unlock(&a->mu);
    return c;
}

size_t gsd_access_body_cap(const struct gsd_config *c, const char *method, const char *path)
{
    if (!strcmp(method, "GET") || !strcmp(method, "HEAD") || !strcmp(method, "DELETE"))
        return 0;
    if (!strcmp(path, "/v1/pods") || !strcmp(path, "/v1/podgroups"))
        return c->max_body;
    if (!strcmp(path, "/extender/filter") || !strcmp(path, "/extender/prioritize") ||
        !strcmp(path, "/extender/preempt"))
        return c->extender_max_body;
    return SMALL_BODY;
}

/* The address's key: IPv4 whole (also when mapped into IPv6), IPv6 by its /64, which one host
 * commonly holds whole. */
static void addr_key(const struct sockaddr *sa, uint8_t key[KEY_LEN])
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    memset(key, 0, KEY_LEN);
    if (sa && sa->sa_family == AF_INET) {
        key[0] = 4;
        memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa && sa->sa_family == AF_INET6) {
        const uint8_t *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
        key[0] = memcmp(b, mapped, 12) ? 6 : 4;
        memcpy(key + 1, key[0] == 4 ? b + 12 : b, key[0] == 4 ? 4 : 8);
    }
}

/* The slot of @key: its own, else a free one, else the oldest among those probed. */
static struct fail_slot *fail_slot(struct gsd_access *a, const uint8_t key[KEY_LEN], int64_t now_us,
                                   int take)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < KEY_LEN; i++)
        h = (h ^ key[i]) * 1099511628211ULL;
    struct fail_slot *oldest = NULL;
    for (int p = 0; p < FAIL_PROBE; p++) {
        struct fail_slot *f = &a->fails[(h + (uint64_t)p) % FAIL_SLOTS];
        if (f->used && !memcmp(f->key, key, KEY_LEN))
            return f;
        if (!oldest || !f->used || (oldest->used && f->since_us < oldest->since_us))
            oldest = f;
    }
    if (!take)
        return NULL;
    memset(oldest, 0, sizeof(*oldest));
    memcpy(oldest->key, key, KEY_LEN);
    oldest->used = 1;
    oldest->since_us = now_us;
    return oldest;
}

/* Seconds until @key may try credentials again; 0 when it may now. */
static int64_t locked_out(struct gsd_access *a, const uint8_t key[KEY_LEN], int64_t now_us)
{
    struct fail_slot *f = fail_slot(a, key, now_us, 0);
    if (!f || now_us - f->since_us >= FAIL_WINDOW_US)
        return 0;
    if ((int64_t)f->n < a->cfg->http.auth_failures)
        return 0;
    return (f->since_us + FAIL_WINDOW_US - now_us + 999999) / 1000000;
}

static void count_failure(struct gsd_access *a, const uint8_t key[KEY_LEN], int64_t now_us)
{
    struct fail_slot *f = fail_slot(a, key, now_us, 1);
    if (now_us - f->since_us >= FAIL_WINDOW_US) {
        f->n = 0;
        f->since_us = now_us;
    }
    f->n++;
    atomic_fetch_add(&a->stats->rejected[GSD_REJECT_UNAUTHENTICATED], 1);
}

static int refuse(struct gsd_access *a, struct gsd_req *r, int status, int reason, int64_t retry,
                  const char *msg)
{
    if (reason >= 0)
        atomic_fetch_add(&a->stats->rejected[reason], 1);
    r->retry_after = retry;
    gsd_reply_error(r, status, status == 401 || status == 403 ? "Authorization" : "", "%s", msg);
    return -1;
}

/* A scrape from address @key: its bucket's, a burst of twice the rate. Return: 0; -1 refused. */
static int scrape_take(struct gsd_access *a, struct gsd_req *r, const uint8_t key[KEY_LEN],
                       int64_t now_us)
{
    struct fail_slot *f = fail_slot(a, key, now_us, 1);
    int64_t per_s = a->cfg->metrics.scrapes_per_s;
    int64_t wait =
        gsd_bucket_take_at(&f->scrape_milli, &f->scrape_at_us, per_s * 1000, 2 * per_s, now_us);
    return wait ? refuse(a, r, 429, GSD_REJECT_RATE_LIMITED, wait,
                         "more scrapes from this address than metrics.scrapesPerSecond allows")
                : 0;
}

/* Step 3: may role @who use this route at all? Return: NULL yes; else why not. */
static const char *route_denied(int who, const struct gsd_req *r)
{
    int node_path = !strncmp(r->path, "/v1/nodes/", 10), node = who == GSD_AUTH_NODE;
    if (!strncmp(r->path, "/extender/", 10) && who != GSD_AUTH_ADMIN && who != GSD_AUTH_EXTENDER)
        return "extender verbs need the admin token or kube-scheduler's client certificate";
    if ((node || who == GSD_AUTH_AGENT) && !node_path)
        return "a node's token reaches only the node agent's routes, under /v1/nodes/NAME/, and "
               "not this one";
    if (node_path && !strcmp(r->method, "POST") && !node && who != GSD_AUTH_AGENT &&
        who != GSD_AUTH_ADMIN)
        return "POST /v1/nodes/... needs a node's or the admin token";
    if (who == GSD_AUTH_METRICS && strcmp(r->path, "/metrics"))
        return "the metrics token reaches only GET /metrics";
    if (!strcmp(r->path, "/metrics") && who >= 0)
        return "GET /metrics takes the metrics or the admin token (or none: aggregates only)";
    return NULL;
}

int gsd_access_check(struct gsd_access *a, struct gsd_req *r, const struct sockaddr *addr,
                     int64_t now_us, size_t *cap)
{
    uint8_t key[KEY_LEN];
    int open = !strcmp(r->path, "/healthz") || gsd_ui_path(r->path) || /* no data: ui.h */
               (!strcmp(r->path, "/metrics") && !r->auth);
    r->who = GSD_AUTH_NONE;
    addr_key(addr, key);
    pthread_mutex_lock(&a->mu);
    const struct gsd_config *c = a->cfg;
    *cap = gsd_access_body_cap(c, r->method, r->path);
    int64_t wait = open ? 0 : locked_out(a, key, now_us);
    int rc = 0, scrape = !strcmp(r->path, "/metrics") && !strcmp(r->method, "GET");
    if (open && scrape) {
        rc = scrape_take(a, r, key, now_us);
    } else if (wait) {
        rc = refuse(a, r, 429, GSD_REJECT_THROTTLED, wait,
                    "too many failed authentications from this address; retry later");
    } else if (!open) {
        int id = r->auth == 1 ? gsd_config_auth(c, r->token_sha) : GSD_AUTH_NONE;
        r->agent = id == GSD_AUTH_NONE && r->auth == 1 ? agent_of(a, r->token_sha) : -1;
        id = r->agent >= 0 ? GSD_AUTH_AGENT : id;
        id = r->client_cert ? GSD_AUTH_EXTENDER : id; /* server.c verified it, extender only */
        const char *denied = id == GSD_AUTH_NONE ? NULL : route_denied(id, r);
        struct gsd_tenant *t = id >= 0 ? &c->tenants[id] : NULL;
        int64_t slow = t && !denied && r->path[1] == 'v' ? gsd_bucket_take(t, now_us) : 0;
        if (id == GSD_AUTH_NONE)
            count_failure(a, key, now_us);
        if (id == GSD_AUTH_NONE)
            rc = refuse(a, r, 401, -1, 0,
                        r->auth ? "the bearer token is not valid"
                                : "an Authorization: Bearer token is required");
        else if (denied)
            rc = refuse(a, r, 403, GSD_REJECT_FORBIDDEN, 0, denied);
        else if (slow)
            rc = refuse(a, r, 429, GSD_REJECT_RATE_LIMITED, slow,
                        "this tenant is over its rate limit (rateLimit); retry later");
        if (!rc && scrape)
            rc = scrape_take(a, r, key, now_us);
        r->who = id;
        if (t)
            memcpy(r->tenant, t->name, sizeof(r->tenant));
    }
    pthread_mutex_unlock(&a->mu);
    return rc;
}
