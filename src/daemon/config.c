/*
 * gpuschedd: the DaemonConfig file.
 *
 *   apiVersion: gpusched.io/v1alpha1
 *   kind: DaemonConfig
 *   policy: gpusched              # the placement policy: gpusched, the only one the daemon runs
 *   maxBodyBytes: 1048576         # cap of a /v1 request body
 *   maxPods: 1000000              # pods held, pending and running
 *   maxPodBytesPerTenant: 268435456  # the Pod objects a tenant's token posted, held together,
 *                                    # with its PodGroups (each as its object's JSON text)
 *   maxPodGroupsPerTenant: 10000  # PodGroups a tenant's namespaces hold (1..100000)
 *   adminToken: "..."             # or adminTokenSHA256: <64 hex digits>
 *   extender:
 *     maxBodyBytes: 4194304       # cap of filter, prioritize and preempt bodies
 *     maxRememberedBytes: 67108864  # the Pods filter remembers for bind, as JSON text
 *     shortGangHoldSeconds: 60    # a gang short of a member deleted before binding keeps its
 *                                 # mates' cards this long for a new one (0..86400)
 *   nodeToken: "..."              # or nodeTokenSHA256: what node agents send (heartbeat, health)
 *   nodeMonitorGracePeriodSeconds: 40  # a heartbeating node silent this long becomes NotReady
 *   rateCard: rates.yaml          # prices for GET /v1/bills (default: the bundled one)
 *   storeSync: normal             # normal: a 2xx survives the process killed (kill -9, OOM);
 *                                 # full: also a power cut (an fsync per commit); read at start
 *   kubernetes:                   # bind writes the Binding here; without it bind records only
 *     inCluster: true             # https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT and
 *                                 # the pod's service account token and CA (the three below)
 *     apiServer: https://10.0.0.1:6443   # http:// or https://, an optional path prefix
 *     tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token  # read at every bind
 *     caFile: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt    # default: system CAs
 *     timeoutSeconds: 4           # a bind's API calls together (1..300), one page of a list
 *     syncSeconds: 30             # pods with a node listed afresh this often and watched in
 *                                 # between: a deleted pod's cards are released at once
 *                                 # (0: neither; 1..86400)
 *     podGroups: true             # Volcano's PodGroups followed too, as if posted (false: a
 *                                 # cluster without the CRD, or gangs posted to gpuschedd)
 *   metrics:                      # GET /metrics: without a token, aggregates only
 *     token: "..."                # or tokenSHA256: Prometheus' token (the admin's works too)
 *     perPod: false               # true: a series per running pod and card (with a token)
 *     scrapesPerSecond: 5         # from one client address (a burst of twice as many)
 *     maxAgeMilliseconds: 1000    # a scrape's text is made again at most this often (0..60000;
 *                                 # 0: every change shows at once)
 *     forecastRefreshSeconds: 300 # the forecast gauges refitted at most this often (1..86400)
 *   http:                         # the listener's bounds (struct gsd_http_limits); a reload
 *     maxConnections: 4096        # changes bodyTimeoutSeconds, headerTimeoutSeconds,
 *     maxConnectionsPerClient: 64 # maxBytesInFlight and authFailuresPerMinute only
 *     idleTimeoutSeconds: 60
 *     headerTimeoutSeconds: 10
 *     bodyTimeoutSeconds: 30
 *     maxBytesInFlight: 67108864
 *     threads: 4
 *     authFailuresPerMinute: 10
 *   tenants:
 *     - name: team-a
 *       token: "..."              # or tokenSHA256: <64 hex digits>
 *       namespaces: [team-a, team-a-dev]
 *       rateLimit: {requestsPerSecond: 50, burst: 100}
 *       weight: 1                 # its pods' CPU weight on the node (1..10000; node-agent.md)
 *
 * Tokens are hashed (SHA-256, nettle) as soon as they are read and the text is wiped: only hashes
 * stay in memory. Keys are strict, as in the KubeSchedulerConfiguration loader: a misspelt
 * "rateLimt" would silently lift a tenant's limit. The walk descends a fixed depth and an event
 * pass bounds nesting first (libyaml's loader recurses without a limit of its own).
 */
#include "config.h"
#include "log.h"
#include "podspec.h"

#include "../config/yamlutil.h"

#include "gpusched/datadir.h"
#include "gpusched/billing.h"
#include "gpusched/config.h"
#include "gpusched/httpurl.h"
#include "gpusched/sched.h"
#include "gpusched/scenario.h"

#include <errno.h>
#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

struct walk {
    const char *path;
    yaml_document_t *doc;
    struct gs_diag *d;
};

void gsd_sha256(const void *data, size_t len, uint8_t out[GSD_SHA256_LEN])
{
    struct sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, len, data);
    sha256_digest(&c, GSD_SHA256_LEN, out);
}

#define CONFIG_NODES_MAX 100000 /* YAML nodes of a DaemonConfig: a tenant holds about 40 */

static int err_at(const struct walk *w, const yaml_node_t *n, const char *fmt, const char *a)
{
    char msg[2 * GS_DIAG_MSG_MAX]; /* a quoted message and the text: the message keeps what fits */
    snprintf(msg, sizeof(msg), fmt, a);
    return gs_diag_error(w->d, "%s:%zu:%zu: %s", w->path, n->start_mark.line + 1,
                         n->start_mark.column + 1, msg);
}

/* @n's text; NULL when not a scalar, or when a "\0" escape cut it (its rest would go unread). */
static const char *scalar(const yaml_node_t *n)
{
    const char *s = n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
    return s && strlen(s) == n->data.scalar.length ? s : NULL;
}

/* A whole number in [lo, hi], written as YAML writes one: plain, not quoted ("5" is a string). */
static int get_int(const struct walk *w, const yaml_node_t *n, const char *key, int64_t lo,
                   int64_t hi, int64_t *out)
{
    long long v = 0;
    if (!n || !gs__yaml_is_plain(n) || !gs__yaml_parse_int(scalar(n), &v) || v < lo || v > hi) {
        char what[96];
        snprintf(what, sizeof(what), "%s: expected a whole number in %lld..%lld", key,
                 (long long)lo, (long long)hi);
        return err_at(w, n, "%s", what);
    }
    *out = v;
    return 0;
}

static int get_bool(const struct walk *w, const yaml_node_t *n, const char *key, int *out)
{
    const char *s = n && gs__yaml_is_plain(n) ? scalar(n) : NULL;
    if (s && (!strcmp(s, "true") || !strcmp(s, "false"))) {
        *out = s[0] == 't';
        return 0;
    }
    return err_at(w, n, "%s: expected true or false", key);
}

#define HEADER_MAX                                                                                 \
    "the 4096 bytes gpuschedd takes of a bearer token (a request header could not carry it)"

/* 1 when scalar @n is all NUL bytes: a token get_token() read and wiped (a written token of NUL
 * escapes alone reads the same, and is refused all the same). */
static int wiped(const yaml_node_t *n)
{
    for (size_t i = 0; i < n->data.scalar.length; i++)
        if (n->data.scalar.value[i])
            return 0;
    return n->data.scalar.length > 0;
}

/* A token in plain text (hashed at once, then wiped in the YAML buffer) or as 64 hex digits; @k
 * its key, named in messages. */
static int get_token(const struct walk *w, const yaml_node_t *k, yaml_node_t *n, int hashed,
                     uint8_t out[32], size_t max, const char *why_max)
{
    char *s = (char *)scalar(n);
    if (!s && n && n->type == YAML_SCALAR_NODE) /* a NUL inside: written so, or wiped once read */
        return err_at(w, n, "%s",
                      wiped(n) ? "this token was read before (an alias of it is not taken): give "
                                 "each token in full where it is used"
                               : "a token cannot hold a NUL byte");
    if (!s)
        return err_at(w, n, "%s", "a token must be a string");
    size_t len = strlen(s);
    if (!hashed) {
        if (len < GSD_TOKEN_MIN)
            return err_at(w, n, "a token must be at least %s bytes long", "16");
        if (len > max)
            return err_at(w, n, "a token is longer than %s", why_max);
        if (!gs_bearer_token_ok(s, len)) /* it could never be sent: no request would match */
            return err_at(w, n, "%s",
                          "a token is letters, digits and -._~+/, then = only at its end, as "
                          "an Authorization header carries it (RFC 6750)");
        gsd_sha256(s, len, out);
        memset(s, 0, len);
        return 0;
    }
    if (len != 64)
        return err_at(w, n, "%s: expected 64 hex digits", scalar(k));
    for (int i = 0; i < 32; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1 || !strchr("0123456789abcdefABCDEF", s[2 * i]) ||
            !strchr("0123456789abcdefABCDEF", s[2 * i + 1]))
            return err_at(w, n, "%s: expected 64 hex digits", scalar(k));
        out[i] = (uint8_t)v;
    }
    uint8_t empty[32];
    gsd_sha256("", 0, empty);
    if (!memcmp(out, empty, sizeof(empty))) /* printf %s "$TOKEN" | sha256sum, $TOKEN unset */
        return err_at(w, n,
                      "%s: the SHA-256 of the empty string (was the token unset when it was "
                      "hashed?)",
                      scalar(k));
    return 0;
}

/* Look a key up in a mapping's known list; unknown keys are errors. */
static int key_index(const struct walk *w, const yaml_node_t *k, const char *const *keys, int n)
{
    const char *s = scalar(k);
    for (int i = 0; s && i < n; i++)
        if (strcmp(s, keys[i]) == 0)
            return i;
    char msg[160], near[96];
    snprintf(msg, sizeof(msg), "unknown key \"%.64s\"%s", s ? s : "(not a string)",
             s ? gs__hint(s, keys, n, near, sizeof(near)) : "");
    return err_at(w, k, "%s", msg);
}

/* key_index(), and an error when the key came before in the same mapping (@seen, one per key):
 * YAML says keys are unique, and libyaml keeps both, so the second would overwrite the first. */
static int key_once(const struct walk *w, const yaml_node_t *k, const char *const *keys, int n,
                    int *seen)
{
    int i = key_index(w, k, keys, n);
    if (i >= 0 && seen[i]++)
        return err_at(w, k, "key \"%s\" appears twice", keys[i]);
    return i;
}

#define FOR_PAIRS(w, map, pair)                                                                    \
    for (yaml_node_pair_t *pair = (map)->data.mapping.pairs.start;                                 \
         pair < (map)->data.mapping.pairs.top; pair++)

/* One key of a mapping: its index in the keys, its node and its value's. */
typedef int (*key_fn)(const struct walk *w, int i, yaml_node_t *k, yaml_node_t *v, void *ud);

/* Mapping @m (named @what in messages) of the @n @keys, each at most once: @fn for each pair. */
static int walk_map(const struct walk *w, yaml_node_t *m, const char *what, const char *const *keys,
                    int n, key_fn fn, void *ud)
{
    int seen[16] = {0};
    if (m->type != YAML_MAPPING_NODE)
        return err_at(w, m, "%s: expected a mapping", what);
    FOR_PAIRS(w, m, p)
    {
        yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
        int i = key_once(w, k, keys, n, seen);
        int rc = i < 0 ? i : fn(w, i, k, yaml_document_get_node(w->doc, p->value), ud);
        if (rc)
            return rc;
    }
    return 0;
}

static int rate_key(const struct walk *w, int i, yaml_node_t *k, yaml_node_t *v, void *ud)
{
    struct gsd_tenant *t = ud;
    (void)k;
    if (i == 0 && (!scalar(v) || !gs__yaml_is_plain(v) || /* "5" is a string */
                   gs_quantity_parse(scalar(v), 3, 0, 0, &t->rate_milli) || t->rate_milli < 1 ||
                   t->rate_milli > 1000000000))
        return err_at(w, v, "%s", "requestsPerSecond: expected a number in 0.001..1000000");
    return i == 1 && get_int(w, v, "burst", 1, 1000000, &t->burst) ? -EINVAL : 0;
}

static int walk_rate(const struct walk *w, yaml_node_t *m, struct gsd_tenant *t)
{
    static const char *const keys[] = {"requestsPerSecond", "burst"};
    int rc = walk_map(w, m, "rateLimit", keys, 2, rate_key, t);
    if (rc)
        return rc;
    if (!t->rate_milli)
        return err_at(w, m, "%s", "rateLimit: requestsPerSecond is missing");
    if (!t->burst)
        t->burst = (t->rate_milli + 999) / 1000;
    return 0;
}

/* The length of list @s, at most @max; a negative error after a message naming @what. */
static int64_t list_len(const struct walk *w, const yaml_node_t *s, const char *what, size_t max)
{
    char msg[96];
    if (s->type != YAML_SEQUENCE_NODE) {
        snprintf(msg, sizeof(msg), "%s: expected a list", what);
        return err_at(w, s, "%s", msg);
    }
    size_t n = (size_t)(s->data.sequence.items.top - s->data.sequence.items.start);
    snprintf(msg, sizeof(msg), "%s: more than %zu entries", what, max);
    return n > max ? err_at(w, s, "%s", msg) : (int64_t)n;
}

static int walk_namespaces(const struct walk *w, yaml_node_t *s, struct gsd_tenant *t)
{
    int64_t len = list_len(w, s, "namespaces", GSD_NS_MAX);
    if (len < 0)
        return (int)len;
    size_t n = (size_t)len;
    t->ns = calloc(n ? n : 1, sizeof(*t->ns));
    if (!t->ns)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *v = yaml_document_get_node(w->doc, s->data.sequence.items.start[i]);
        if (!scalar(v) || !gsd_name_ok(scalar(v)))
            return err_at(w, v, "%s", "namespace: expected a DNS label (a-z, 0-9, '-', 1..63)");
        memcpy(t->ns[i], scalar(v), strlen(scalar(v)) + 1);
        t->nns++;
    }
    return 0;
}

static int walk_tenant(const struct walk *w, yaml_node_t *m, struct gsd_tenant *t)
{
    static const char *const keys[] = {"name",       "token",     "tokenSHA256",
                                       "namespaces", "rateLimit", "weight"};
    int has_token = 0, rc = 0, seen[6] = {0};
    if (m->type != YAML_MAPPING_NODE)
        return err_at(w, m, "%s", "tenants[]: expected a mapping");
    t->weight = 1;
    FOR_PAIRS(w, m, p)
    {
        yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
        int i = key_once(w, k, keys, 6, seen);
        int64_t x;
        if (i < 0)
            return i;
        if (i == 0) {
            if (!scalar(v) || !gsd_name_ok(scalar(v)))
                return err_at(w, v, "%s", "name: expected a DNS label (a-z, 0-9, '-', 1..63)");
            memcpy(t->name, scalar(v), strlen(scalar(v)) + 1);
        } else if (i == 1 || i == 2) {
            rc = get_token(w, k, v, i == 2, t->token_sha, GS_BEARER_TOKEN_MAX, HEADER_MAX);
            has_token++;
        } else if (i == 3) {
            rc = walk_namespaces(w, v, t);
        } else if (i == 4) {
            rc = walk_rate(w, v, t);
        } else {
            rc = get_int(w, v, "weight", 1, 10000, &x) ? -EINVAL : 0;
            t->weight = (int32_t)x;
        }
        if (rc)
            return rc;
    }
    if (!t->name[0])
        return err_at(w, m, "%s", "tenant: name is missing");
    if (has_token != 1)
        return err_at(w, m, "tenant %s: give exactly one of token and tokenSHA256", t->name);
    if (!t->nns)
        return err_at(w, m, "tenant %s: namespaces is missing or empty", t->name);
    return 0;
}

/* Names, namespaces and tokens must each be unique: a shared token would make two tenants one.
 * A tenant's fault is named at its entry of @tenants (the sequence read), the node token's at
 * its value @node_at, the metrics token's at the metrics mapping @metrics_at. */
static int check_unique(const struct walk *w, const yaml_node_t *node_at,
                        const yaml_node_t *metrics_at, yaml_node_t *tenants,
                        const struct gsd_config *c)
{
    const yaml_node_t *at;
    if (c->has_admin && c->has_node && memeql_sec(c->node_sha, c->admin_sha, 32))
        return err_at(w, node_at, "%s", "the node token is the admin token");
    if (c->metrics.has_token &&
        ((c->has_admin && memeql_sec(c->metrics.token_sha, c->admin_sha, 32)) ||
         (c->has_node && memeql_sec(c->metrics.token_sha, c->node_sha, 32))))
        return err_at(w, metrics_at, "%s", "the metrics token is the admin or the node token");
    for (size_t i = 0; i < c->ntenants; i++) {
        const struct gsd_tenant *a = &c->tenants[i];
        at = yaml_document_get_node(w->doc, tenants->data.sequence.items.start[i]);
        if (c->has_admin && memeql_sec(a->token_sha, c->admin_sha, 32))
            return err_at(w, at, "tenant %s has the admin token", a->name);
        if (c->has_node && memeql_sec(a->token_sha, c->node_sha, 32))
            return err_at(w, at, "tenant %s has the node token", a->name);
        if (c->metrics.has_token && memeql_sec(a->token_sha, c->metrics.token_sha, 32))
            return err_at(w, at, "tenant %s has the metrics token", a->name);
        for (size_t j = 0; j < i; j++) {
            const struct gsd_tenant *b = &c->tenants[j];
            if (!strcmp(a->name, b->name))
                return err_at(w, at, "tenant %s is listed twice", a->name);
            if (memeql_sec(a->token_sha, b->token_sha, 32))
                return err_at(w, at, "tenant %s has the token of another tenant", a->name);
        }
        for (size_t k = 0; k < a->nns; k++) {
            const struct gsd_tenant *o = gsd_tenant_of_ns(c, a->ns[k]);
            for (size_t m = 0; o && m < k && o == a; m++)
                if (!strcmp(a->ns[m], a->ns[k]))
                    return err_at(w, at, "namespace %s is listed twice", a->ns[k]);
            if (o != a)
                return err_at(w, at, "namespace %s belongs to two tenants", a->ns[k]);
        }
    }
    return 0;
}

static int walk_tenants(const struct walk *w, yaml_node_t *s, struct gsd_config *c)
{
    int64_t len = list_len(w, s, "tenants", GSD_TENANTS_MAX);
    if (len < 0)
        return (int)len;
    size_t n = (size_t)len;
    c->tenants = calloc(n ? n : 1, sizeof(*c->tenants));
    if (!c->tenants)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        int rc = walk_tenant(w, yaml_document_get_node(w->doc, s->data.sequence.items.start[i]),
                             &c->tenants[c->ntenants++]);
        if (rc)
            return rc;
    }
    return 0;
}

static int extender_key(const struct walk *w, int i, yaml_node_t *k, yaml_node_t *v, void *ud)
{
    struct gsd_config *c = ud;
    int64_t x;
    if (i == 1) /* the key of a release that let anonymous callers bind pods */
        return err_at(w, k, "%s",
                      "extender.requireToken: no longer a setting: extender verbs always need "
                      "credentials (the admin token); remove the key");
    if (i == 2)
        return get_int(w, v, "maxRememberedBytes", 1 << 20, (int64_t)1 << 40,
                       &c->extender_remember_bytes)
                   ? -EINVAL
                   : 0;
    if (i == 3) {
        if (get_int(w, v, "shortGangHoldSeconds", 0, 86400, &x))
            return -EINVAL;
        c->short_gang_hold_us = x * 1000000;
        return 0;
    }
    if (get_int(w, v, "maxBodyBytes", 1024, 1 << 30, &x))
        return -EINVAL;
    c->extender_max_body = (size_t)x;
    return 0;
}

/* metrics: {token | tokenSHA256, perPod, scrapesPerSecond, maxAgeMilliseconds,
 * forecastRefreshSeconds}. */
static int metrics_key(const struct walk *w, int i, yaml_node_t *k, yaml_node_t *v, void *ud)
{
    struct gsd_metrics_cfg *m = ud;
    if (i == 2)
        return get_bool(w, v, "perPod", &m->per_pod) ? -EINVAL : 0;
    if (i == 3)
        return get_int(w, v, "scrapesPerSecond", 1, 1000, &m->scrapes_per_s) ? -EINVAL : 0;
    if (i == 4)
        return get_int(w, v, "maxAgeMilliseconds", 0, 60000, &m->max_age_ms) ? -EINVAL : 0;
    if (i == 5)
        return get_int(w, v, "forecastRefreshSeconds", 1, 86400, &m->forecast_refresh_s) ? -EINVAL
                                                                                         : 0;
    if (m->has_token++)
        return err_at(w, k, "%s", "metrics: give one of token and tokenSHA256");
    return get_token(w, k, v, i == 1, m->token_sha, GS_BEARER_TOKEN_MAX, HEADER_MAX) ? -EINVAL : 0;
}

/* http: the listener's bounds, each a whole number in its range. */
static int http_key(const struct walk *w, int i, yaml_node_t *k, yaml_node_t *v, void *ud)
{
    static const int64_t lo[] = {16, 1, 1, 1, 1 << 20, 1, 1, 1};
    static const int64_t hi[] = {1000000, 1000000, 3600, 3600, 1LL << 36, 64, 1000000, 3600};
    struct gsd_http_limits *h = ud;
    int64_t *dst[] = {&h->max_connections, &h->max_per_client,  &h->idle_timeout_s,
                      &h->body_timeout_s,  &h->max_in_flight,   &h->threads,
                      &h->auth_failures,   &h->header_timeout_s};
    return get_int(w, v, scalar(k), lo[i], hi[i], dst[i]) ? -EINVAL : 0;
}

/* @s, a regular file gpuschedd can read (given at @n), into *@out (replacing what was there). */
static int get_file(const struct walk *w, const yaml_node_t *n, const char *key, const char *s,
                    char **out)
{
    char msg[GS_DIAG_MSG_MAX];
    struct stat sb;
    if (!s || !*s || access(s, R_OK) || stat(s, &sb) || !S_ISREG(sb.st_mode)) {
        snprintf(msg, sizeof(msg), "%s: cannot read %.200s: %s", key, s ? s : "(not a string)",
                 !s || !*s                         ? "expected a path"
                 : access(s, R_OK) || stat(s, &sb) ? strerror(errno)
                                                   : "not a regular file");
        return err_at(w, n, "%s", msg);
    }
    free(*out);
    *out = strdup(s);
    return *out ? 0 : -ENOMEM;
}

/* The API server's base URL (gpusched/httpurl.h), trailing '/' cut. */
static int set_url(const struct walk *w, const yaml_node_t *n, const char *s, char **out)
{
    char url[GS_HTTP_URL_MAX + 1], why[512];
    if (gs_http_url(s, url, why, sizeof(why)))
        return err_at(w, n, "apiServer %s", why);
    free(*out);
    *out = strdup(url);
    return *out ? 0 : -ENOMEM;
}

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount/"

/* inCluster: what a pod is given (client-go's rest.InClusterConfig), where not given itself. */
static int in_cluster(const struct walk *w, yaml_node_t *at, struct gsd_kube *k)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    char url[GS_HTTP_URL_MAX + 2]; /* one byte past a URL's cap: what is cut short is refused */
    if (!k->api_server && (!host || !*host || !port || !*port))
        return err_at(w, at, "%s",
                      "inCluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set "
                      "(not in a pod?); give apiServer");
    if (!k->api_server) {
        char why[512], api[GS_HTTP_URL_MAX + 1];
        snprintf(url, sizeof(url), strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host,
                 port);
        if (gs_http_url(url, api, why, sizeof(why)))
            return err_at(w, at,
                          "inCluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT make %s",
                          why);
        k->api_server = strdup(api);
        if (!k->api_server)
            return -ENOMEM;
    }
    /* Not checked here, unlike tokenFile and caFile given: a pod is given both, and each bind
     * says so should the token not be there (automountServiceAccountToken: false). */
    k->token_file = k->token_file ? k->token_file : strdup(SA_DIR "token");
    k->ca_file = k->ca_file ? k->ca_file : strdup(SA_DIR "ca.crt");
    return k->token_file && k->ca_file ? 0 : -ENOMEM;
}

static int walk_kubernetes(const struct walk *w, yaml_node_t *m, struct gsd_config *c)
{
    static const char *const keys[] = {"apiServer", "tokenFile",   "caFile",   "timeoutSeconds",
                                       "inCluster", "syncSeconds", "podGroups"};
    yaml_node_t *ic = NULL;
    int cluster = 0, rc = 0, seen[7] = {0};
    if (m->type != YAML_MAPPING_NODE)
        return err_at(w, m, "%s", "kubernetes: expected a mapping");
    struct gsd_kube *k = c->kube = calloc(1, sizeof(*k));
    if (!k)
        return -ENOMEM;
    k->timeout_ms =
        4000; /* under the 5 s httpTimeout of kube-scheduler's extender stanza in deploy/ */
    k->sync_us = 30 * 1000000LL;
    k->podgroups = 1;
    FOR_PAIRS(w, m, p)
    {
        yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
        yaml_node_t *key = yaml_document_get_node(w->doc, p->key);
        int i = key_once(w, key, keys, 7, seen);
        int64_t x = 0;
        if (i < 0)
            return i;
        if (i == 0)
            rc = set_url(w, v, scalar(v), &k->api_server);
        else if (i == 1 || i == 2)
            rc = get_file(w, v, keys[i], scalar(v), i == 1 ? &k->token_file : &k->ca_file);
        else if (i == 3 || i == 5)
            rc = get_int(w, v, keys[i], i == 3 ? 1 : 0, i == 3 ? 300 : 86400, &x) ? -EINVAL : 0;
        else if (i == 6)
            rc = get_bool(w, v, "podGroups", &k->podgroups);
        else
            rc = get_bool(w, v, "inCluster", &cluster);
        k->timeout_ms = i == 3 && !rc ? x * 1000 : k->timeout_ms;
        k->sync_us = i == 5 && !rc ? x * 1000000 : k->sync_us;
        ic = i == 4 ? v : ic;
        if (rc)
            return rc;
    }
    if (cluster)
        return in_cluster(w, ic, k);
    return k->api_server ? 0 : err_at(w, m, "%s", "kubernetes: give apiServer, or inCluster: true");
}

/* rateCard: the RateCard file @v names, read here so its fault is named at @v too. */
static int get_rates(const struct walk *w, yaml_node_t *v, struct gsd_config *c)
{
    struct gs_diag why;
    const char *path = scalar(v);
    if (!path || !*path || strlen(path) > 1024)
        return err_at(w, v, "%s",
                      "rateCard: expected the path of a RateCard YAML file, at most 1024 bytes");
    gs_diag_init(&why);
    int rc = gsd_file_regular(path, &why);
    rc = rc ? rc : gs_ratecard_load(path, &c->rates, &why);
    if (rc == -ENOMEM)
        return rc;
    c->rate_card = rc ? NULL : strdup(path);
    if (!rc && !c->rate_card)
        return -ENOMEM;
    return rc ? err_at(w, v, "rateCard: %s", why.msg) : 0;
}

/* One top-level key. */
static int walk_top_key(const struct walk *w, int i, const yaml_node_t *k, yaml_node_t *v,
                        struct gsd_config *c)
{
    int64_t x;
    switch (i) {
    case 0: /* apiVersion */
        if (!scalar(v) || strcmp(scalar(v), "gpusched.io/v1alpha1"))
            return err_at(w, v, "%s", "apiVersion: expected gpusched.io/v1alpha1");
        return 0;
    case 1: /* kind */
        if (!scalar(v) || strcmp(scalar(v), "DaemonConfig"))
            return err_at(w, v, "%s", "kind: expected DaemonConfig");
        return 0;
    case 2: /* the multi-tenant scheduler scores with the seed's profile; the others are the
               trace replay's (gpusched simulate --policy), which a daemon does not run */
        if (!scalar(v) || strcmp(scalar(v), "gpusched"))
            return err_at(w, v, "%s",
                          "policy: gpuschedd runs the gpusched policy only (GPUBinPacking 8, "
                          "TopologyScore 6, FairnessScore 4 with quotas, queues and gangs); fgd, "
                          "bestfit and the others are compared by gpusched simulate --policy");
        memcpy(c->policy, "gpusched", sizeof("gpusched"));
        return 0;
    case 3:
        if (get_int(w, v, "maxBodyBytes", 1024, 1 << 30, &x))
            return -EINVAL;
        c->max_body = (size_t)x;
        return 0;
    case 4:
        return get_int(w, v, "maxPods", 1, 10000000, &c->max_pods) ? -EINVAL : 0;
    case 5:
    case 6:
        c->has_admin++;
        return get_token(w, k, v, i == 6, c->admin_sha, GS_BEARER_TOKEN_MAX, HEADER_MAX);
    case 7: {
        static const char *const keys[] = {"maxBodyBytes", "requireToken", "maxRememberedBytes",
                                           "shortGangHoldSeconds"};
        return walk_map(w, v, "extender", keys, 4, extender_key, c);
    }
    case 8:
        return walk_tenants(w, v, c);
    case 9:
    case 10:
        c->has_node++;
        return get_token(w, k, v, i == 10, c->node_sha, GS_NODE_TOKEN_MAX,
                         "the 160 bytes gpusched-agent's --bootstrap-token-file holds");
    case 11:
        if (get_int(w, v, "nodeMonitorGracePeriodSeconds", 1, 86400, &x))
            return -EINVAL;
        c->node_grace_us = x * 1000000;
        return 0;
    case 12:
        return walk_kubernetes(w, v, c);
    case 14: {
        static const char *const keys[] = {"token",
                                           "tokenSHA256",
                                           "perPod",
                                           "scrapesPerSecond",
                                           "maxAgeMilliseconds",
                                           "forecastRefreshSeconds"};
        return walk_map(w, v, "metrics", keys, 6, metrics_key, &c->metrics);
    }
    case 15: {
        static const char *const keys[] = {"maxConnections",        "maxConnectionsPerClient",
                                           "idleTimeoutSeconds",    "bodyTimeoutSeconds",
                                           "maxBytesInFlight",      "threads",
                                           "authFailuresPerMinute", "headerTimeoutSeconds"};
        return walk_map(w, v, "http", keys, 8, http_key, &c->http);
    }
    case 16:
        if (!scalar(v) || (strcmp(scalar(v), "normal") && strcmp(scalar(v), "full")))
            return err_at(w, v, "%s", "storeSync: expected normal or full");
        c->store_sync_full = !strcmp(scalar(v), "full");
        return 0;
    case 17:
        return get_int(w, v, "maxPodBytesPerTenant", 1 << 20, (int64_t)1 << 40,
                       &c->max_pod_bytes_per_tenant)
                   ? -EINVAL
                   : 0;
    case 18: /* at most the daemon's PodGroups of every tenant, GSD_GROUPS_MAX */
        return get_int(w, v, "maxPodGroupsPerTenant", 1, 100000, &c->max_podgroups_per_tenant)
                   ? -EINVAL
                   : 0;
    default:
        return get_rates(w, v, c);
    }
}

static int walk_top(const struct walk *w, yaml_node_t *root, struct gsd_config *c)
{
    static const char *const keys[] = {"apiVersion",
                                       "kind",
                                       "policy",
                                       "maxBodyBytes",
                                       "maxPods",
                                       "adminToken",
                                       "adminTokenSHA256",
                                       "extender",
                                       "tenants",
                                       "nodeToken",
                                       "nodeTokenSHA256",
                                       "nodeMonitorGracePeriodSeconds",
                                       "kubernetes",
                                       "rateCard",
                                       "metrics",
                                       "http",
                                       "storeSync",
                                       "maxPodBytesPerTenant",
                                       "maxPodGroupsPerTenant"};
    enum { NKEYS = sizeof(keys) / sizeof(keys[0]) };
    int seen[NKEYS] = {0};
    yaml_node_t *tenants = NULL, *admin_at = root, *node_at = root, *metrics_at = root,
                *http_at = root;
    if (!root || root->type != YAML_MAPPING_NODE)
        return gs_diag_error(w->d, "%s: expected a DaemonConfig mapping", w->path);
    FOR_PAIRS(w, root, p)
    {
        yaml_node_t *k = yaml_document_get_node(w->doc, p->key);
        int i = key_once(w, k, keys, NKEYS, seen);
        if (i < 0)
            return i;
        yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
        int rc = walk_top_key(w, i, k, v, c);
        if (rc)
            return rc;
        tenants = i == 8 ? v : tenants;
        admin_at = i == 5 || i == 6 ? v : admin_at; /* the second one, when both are given */
        node_at = i == 9 || i == 10 ? v : node_at;
        metrics_at = i == 14 ? v : metrics_at;
        http_at = i == 15 ? v : http_at;
    }
    size_t body = c->max_body > c->extender_max_body ? c->max_body : c->extender_max_body;
    char cap[96];
    snprintf(cap, sizeof(cap), "%s %zu",
             c->max_body >= c->extender_max_body ? "maxBodyBytes" : "extender.maxBodyBytes", body);
    if (c->http.max_in_flight < (int64_t)body) /* such a body would be told to retry forever */
        return err_at(w, http_at,
                      "http.maxBytesInFlight is below the largest body cap, %s: a body that "
                      "size could never be read",
                      cap);
    if (!seen[1])
        return err_at(w, root, "%s", "kind: DaemonConfig is missing");
    if (c->has_admin > 1)
        return err_at(w, admin_at, "%s", "give one of adminToken and adminTokenSHA256");
    if (c->has_node > 1)
        return err_at(w, node_at, "%s", "give one of nodeToken and nodeTokenSHA256");
    return check_unique(w, node_at, metrics_at, tenants, c);
}

int gsd_file_regular(const char *path, struct gs_diag *d)
{
    struct stat sb;
    if (stat(path, &sb))
        return gs_diag_error_code(d, errno == ENOENT ? -ENOENT : -EIO, "%s: cannot open: %s", path,
                                  strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return gs_diag_error(d,
                             "%s: not a regular file (a FIFO or a device could hold gpuschedd "
                             "reading it for ever)",
                             path);
    return 0;
}

static int read_file(const char *path, unsigned char **buf, size_t *len, struct gs_diag *d)
{
    int rc = gsd_file_regular(path, d);
    if (rc)
        return rc;
    FILE *f = gs__fopen_read(path);
    if (!f)
        return gs_diag_error_code(d, errno == ENOENT ? -ENOENT : -EIO, "%s: cannot open: %s", path,
                                  strerror(errno));
    *buf = malloc(GS_CONFIG_MAX_BYTES + 1);
    if (!*buf) {
        fclose(f);
        return -ENOMEM;
    }
    *len = fread(*buf, 1, GS_CONFIG_MAX_BYTES + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || *len > GS_CONFIG_MAX_BYTES) {
        free(*buf);
        return bad ? gs_diag_error_code(d, -EIO, "%s: cannot read", path)
                   : gs_diag_error(d, "%s: larger than %u bytes", path, GS_CONFIG_MAX_BYTES);
    }
    return 0;
}

/* Event pass: syntax and nesting depth, before the loader (which recurses) sees the bytes. */
/* The documents of a DaemonConfig file: the first read, a second refused. */
struct docs {
    struct gsd_config *c;
    int n;
};

static int one_doc(struct gs__yctx *y, yaml_node_t *root, void *arg)
{
    struct docs *x = arg;
    int rc;
    if (x->n++) { /* the file is read whole: nothing is skipped */
        rc = gs_diag_error(y->d,
                           "%s:%zu:%zu: a second document: give GPUQuota, ResourceQuota and "
                           "the other policy kinds in another --config file",
                           y->path, root->start_mark.line + 1, root->start_mark.column + 1);
    } else {
        struct walk w = {y->path, y->doc, y->d};
        rc = walk_top(&w, root, x->c);
    }
    /* Wipe every scalar: plain tokens must not linger in freed memory. */
    for (yaml_node_t *n = y->doc->nodes.start; n < y->doc->nodes.top; n++)
        if (n->type == YAML_SCALAR_NODE)
            memset(n->data.scalar.value, 0, n->data.scalar.length);
    return rc;
}

/* The file read as the policy files are (yamlutil.h): nesting bounded, an explicit tag honoured
 * (!!str 5 is the text "5") or refused, aliases resolved, each error at its line and column. */
static int parse_doc(const char *path, const unsigned char *buf, size_t len, struct gsd_config *c,
                     struct gs_diag *d)
{
    struct gs__yctx proto = {.path = path, .d = d};
    struct docs x = {c, 0};
    int rc = gs__yaml_stream_documents(&proto, buf, len, GS_CONFIG_MAX_DEPTH, CONFIG_NODES_MAX,
                                       one_doc, &x);
    if (!rc && !x.n)
        rc = gs_diag_error(d, "%s:1:1: no document: expected a DaemonConfig mapping", path);
    return rc;
}

/* The rate card named by rateCard, else the bundled one; without either, bills are refused. */
static int load_rates(struct gsd_config *c, struct gs_diag *d)
{
    struct gs_diag why;
    gs_diag_init(&why);
    if (c->rate_card) /* read where the config names it */
        return 0;
    char path[GS_DATA_PATH_MAX];
    if (gs_ratecard_load(gs_data_file(GS_DATA_RATES, path, sizeof(path)), &c->rates, &why))
        gsd_log("warn", "no rate card: GET /v1/bills is refused until rateCard names one", "error",
                why.msg, NULL);
    return 0;
}

/* The defaults of every key. Return: a new config; NULL out of memory. */
static struct gsd_config *config_new(void)
{
    struct gsd_config *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    atomic_init(&c->refs, 1);
    c->max_body = 1 << 20;
    c->extender_max_body = 4u << 20;
    c->extender_remember_bytes = (int64_t)64 << 20;
    c->short_gang_hold_us = GSD_SHORT_GANG_HOLD_DEFAULT_US;
    c->max_pods = 1000000;
    c->max_pod_bytes_per_tenant = (int64_t)256 << 20;
    c->max_podgroups_per_tenant = 10000;
    c->metrics.scrapes_per_s = 5;
    c->metrics.max_age_ms = 1000;
    c->metrics.forecast_refresh_s = 300;
    c->http = (struct gsd_http_limits){.max_connections = 4096,
                                       .max_per_client = 64,
                                       .idle_timeout_s = 60,
                                       .body_timeout_s = 30,
                                       .max_in_flight = 64 << 20,
                                       .threads = 4,
                                       .auth_failures = 10,
                                       .header_timeout_s = 10};
    c->node_grace_us = GSD_NODE_GRACE_DEFAULT_US;
    memcpy(c->policy, "gpusched", 9);
    return c;
}

int gsd_config_parse(const char *path, const unsigned char *buf, size_t len,
                     struct gsd_config **out, struct gs_diag *d)
{
    struct gsd_config *c = config_new();
    if (!c)
        return -ENOMEM;
    c->path = strdup(path);
    int rc = c->path ? parse_doc(path, buf, len, c, d) : -ENOMEM;
    if (rc) {
        gsd_config_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int gsd_config_load(const char *path, struct gsd_config **out, struct gs_diag *d)
{
    struct gsd_config *c = NULL;
    int rc = 0;
    if (path) {
        unsigned char *buf = NULL;
        size_t len = 0;
        rc = read_file(path, &buf, &len, d);
        if (!rc) {
            rc = gsd_config_parse(path, buf, len, &c, d);
            memset(buf, 0, len);
            free(buf);
        }
    } else {
        c = config_new();
        rc = c ? 0 : -ENOMEM;
    }
    if (!rc)
        rc = load_rates(c, d);
    if (rc) {
        gsd_config_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

struct gsd_config *gsd_config_ref(struct gsd_config *c)
{
    atomic_fetch_add(&c->refs, 1);
    return c;
}

void gsd_config_free(struct gsd_config *c)
{
    if (!c || atomic_fetch_sub(&c->refs, 1) > 1)
        return;
    for (size_t i = 0; i < c->ntenants; i++)
        free(c->tenants[i].ns);
    free(c->tenants);
    free(c->path);
    free(c->rate_card);
    if (c->kube) {
        free(c->kube->api_server);
        free(c->kube->token_file);
        free(c->kube->ca_file);
        free(c->kube);
    }
    gs_ratecard_free(c->rates);
    gs_scenario_free(c->quotas);
    free(c->policy_text);
    free(c->policy_paths);
    free(c);
}

const struct gsd_tenant *gsd_tenant_named(const struct gsd_config *c, const char *name)
{
    for (size_t i = 0; name[0] && i < c->ntenants; i++)
        if (!strcmp(c->tenants[i].name, name))
            return &c->tenants[i];
    return NULL;
}

const struct gsd_tenant *gsd_tenant_of_ns(const struct gsd_config *c, const char *ns)
{
    for (size_t i = 0; i < c->ntenants; i++)
        for (size_t k = 0; k < c->tenants[i].nns; k++)
            if (strcmp(c->tenants[i].ns[k], ns) == 0)
                return &c->tenants[i];
    return NULL;
}

int gsd_config_auth(const struct gsd_config *c, const uint8_t sha[GSD_SHA256_LEN])
{
    int who = GSD_AUTH_NONE;
    /* No early exit: every hash is compared whatever matched before. */
    for (size_t i = 0; i < c->ntenants; i++)
        if (memeql_sec(c->tenants[i].token_sha, sha, GSD_SHA256_LEN))
            who = (int)i;
    if (c->has_admin && memeql_sec(c->admin_sha, sha, GSD_SHA256_LEN))
        who = GSD_AUTH_ADMIN;
    if (c->has_node && memeql_sec(c->node_sha, sha, GSD_SHA256_LEN))
        who = GSD_AUTH_NODE;
    if (c->metrics.has_token && memeql_sec(c->metrics.token_sha, sha, GSD_SHA256_LEN))
        who = GSD_AUTH_METRICS;
    return who;
}

int64_t gsd_bucket_take_at(int64_t *milli, int64_t *at_us, int64_t rate_milli, int64_t burst,
                           int64_t now_us)
{
    if (!rate_milli)
        return 0;
    int64_t cap = burst * 1000;
    int64_t full_us = cap * 1000000 / rate_milli; /* time to fill from empty */
    if (*at_us == 0 || now_us - *at_us >= full_us) {
        *milli = cap;
        *at_us = now_us;
    } else if (now_us > *at_us) {
        /* elapsed x rate < cap x 10^6: no overflow. Only the time turned into tokens is spent,
         * so frequent requests do not lose the fractions. */
        int64_t add = (now_us - *at_us) * rate_milli / 1000000;
        *milli += add;
        *at_us += add * 1000000 / rate_milli;
        if (*milli >= cap) {
            *milli = cap;
            *at_us = now_us;
        }
    }
    if (*milli >= 1000) {
        *milli -= 1000;
        return 0;
    }
    int64_t wait_us = (1000 - *milli) * 1000000 / rate_milli;
    return wait_us < 1000000 ? 1 : (wait_us + 999999) / 1000000; /* whole seconds, rounded up */
}

int64_t gsd_bucket_take(struct gsd_tenant *t, int64_t now_us)
{
    return gsd_bucket_take_at(&t->bucket_milli, &t->bucket_at_us, t->rate_milli, t->burst, now_us);
}
