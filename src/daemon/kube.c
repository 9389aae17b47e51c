/*
 * gpuschedd and the Kubernetes API server (libcurl): the extender's bind, and following the pods.
 *
 * Bind. kube-scheduler, given an extender with bindVerb, leaves the binding to it. Once the
 * scheduler thread has committed the cards, the HTTP connection's thread makes three calls:
 *   GET   /api/v1/namespaces/NS/pods/NAME: the pod must still be the one filtered (its UID) and
 *         unbound (or bound to this very node: a retry), else nothing is written;
 *   POST  .../NAME/binding, the v1 Binding kube-scheduler's DefaultBinder sends, carrying the
 *         annotations of gsd_pod_assignment(): the API server writes the node and the
 *         annotations in one update (BindingREST.setPodHostAndAnnotations), so the node side
 *         never sees the pod on its node without them;
 *   PATCH .../NAME (merge patch) adding the label gpusched.io/managed after the Binding: a label
 *         changed on a pod kube-scheduler is still binding makes kube-scheduler 1.20 queue the
 *         pod again and report a spurious FailedScheduling (annotations it ignores).
 * The API server refuses a Binding for a pod that has a node with 409 Conflict, "pod NAME is
 * already assigned to node "NODE"" (pkg/registry/core/pod/storage, BindingREST.assignPod), so a
 * Binding may be sent again: a 409 naming the same node means bound (when the message does not
 * name it, a GET of the pod decides by spec.nodeName and metadata.uid). That settles a Binding
 * whose answer was lost (the connection broke after it was sent, or a 504): it is sent once more.
 *
 * Following. gsd_kube_follow() lists the pods that have a node and then watches every pod from
 * the list's resourceVersion (with bookmarks), so a pod deleted or finished is reported at once,
 * one gpuschedd holds cards for that kube-scheduler has not bound yet too (a gang's member);
 * a watch that ends is made again from the last resourceVersion seen, "410 Gone" (too old)
 * lists afresh, and failures are retried with a backoff from 0.5 s doubling to 30 s. The Nodes
 * are followed the same way (kubenodes.c makes the inventory of them), and Volcano's PodGroups
 * (gang.c takes each in as POST /v1/podgroups would). A list keeps whole the pods that carry
 * gpuschedd's assignment annotations: one its store lacks is adopted on the cards they name
 * (gsd_extender_sync()).
 */
#include "kube.h"
#include "log.h"
#include "state.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOKEN_MAX     16384      /* bytes of a bearer token file (a service account JWT: ~1 KiB) */
#define ANSWER_MAX    (1 << 20)  /* bytes of an API server answer kept */
#define LIST_MAX      (64 << 20) /* bytes of one page of a pod list (500 pods of up to 128 KiB) */
#define LIST_PAGE     500
#define LIST_TIMEOUTS 20 /* a whole list may take this many timeoutSeconds, however many pages */

/* A job about pod @p for API server @k (a copy of its settings), of kind @evict (kube.h), no
 * bodies yet. Return: NULL out of memory. */
static struct gsd_bind *job_new(const struct gsd_kube *k, const struct gsd_pod *p, int evict)
{
    struct gsd_bind *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    memcpy(b->ns, p->spec.ns, sizeof(b->ns));
    memcpy(b->name, p->spec.name, sizeof(b->name));
    memcpy(b->uid, p->uid, sizeof(b->uid));
    b->seq = p->seq;
    b->evict = evict;
    b->kube.timeout_ms = k->timeout_ms;
    b->kube.api_server = strdup(k->api_server);
    b->kube.token_file = k->token_file ? strdup(k->token_file) : NULL;
    b->kube.ca_file = k->ca_file ? strdup(k->ca_file) : NULL;
    if (!b->kube.api_server || (k->token_file && !b->kube.token_file) ||
        (k->ca_file && !b->kube.ca_file)) {
        gsd_bind_free(b);
        return NULL;
    }
    return b;
}

struct gsd_bind *gsd_bind_new(const struct gsd_kube *k, const struct gsd_pod *p, const char *node,
                              const json_t *assignment)
{
    struct gsd_bind *b = job_new(k, p, 0);
    if (!b)
        return NULL;
    snprintf(b->node, sizeof(b->node), "%s", node);
    json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "labels", GSD_MANAGED_LABEL, "true");
    if (patch && p->uid[0]) /* the UID is immutable: a pod made again under the name is refused */
        json_object_set_new(json_object_get(patch, "metadata"), "uid", json_string(p->uid));
    json_t *meta = json_pack("{s:s, s:s, s:O}", "name", p->spec.name, "namespace", p->spec.ns,
                             "annotations", assignment);
    if (meta && p->uid[0])
        json_object_set_new(meta, "uid", json_string(p->uid));
    json_t *binding = meta ? json_pack("{s:s, s:s, s:O, s:{s:s, s:s, s:s}}", "apiVersion", "v1",
                                       "kind", "Binding", "metadata", meta, "target", "apiVersion",
                                       "v1", "kind", "Node", "name", node)
                           : NULL;
    b->patch = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
    b->binding = binding ? json_dumps(binding, JSON_COMPACT) : NULL;
    json_decref(patch);
    json_decref(meta);
    json_decref(binding);
    if (!b->patch || !b->binding) {
        gsd_bind_free(b);
        return NULL;
    }
    return b;
}

void gsd_bind_free(struct gsd_bind *b)
{
    if (!b)
        return;
    free(b->kube.api_server);
    free(b->kube.token_file);
    free(b->kube.ca_file);
    free(b->patch);
    free(b->binding);
    free(b->event);
    free(b);
}

/* The token in k->token_file, white space around it cut (as client-go reads a token file).
 * Return: 0; -1 with @why. */
static int read_token(const struct gsd_kube *k, char *tok, size_t cap, char *why, size_t why_cap)
{
    FILE *f = fopen(k->token_file, "rb");
    size_t n = f ? fread(tok, 1, cap - 1, f) : 0;
    int err = f ? ferror(f) || !feof(f) : 1;
    if (f)
        fclose(f);
    while (n && strchr(" \t\r\n", tok[n - 1]))
        n--;
    tok[n] = '\0';
    size_t lead = strspn(tok, " \t\r\n");
    memmove(tok, tok + lead, n - lead + 1);
    n -= lead;
    if (!err && n && !strpbrk(tok, "\r\n"))
        return 0;
    snprintf(why, why_cap, "tokenFile %.200s: cannot read a token (%s)", k->token_file,
             !f    ? strerror(errno)
             : err ? "larger than 16 KiB or unreadable"
                   : "empty or several lines");
    return -1;
}

struct answer {
    size_t max; /* bytes kept; 0: ANSWER_MAX (set before call()) */
    CURLcode rc;
    long status;
    long sent; /* bytes of the request sent */
    char *body;
    size_t len;
    char curl_err[CURL_ERROR_SIZE];
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    struct answer *a = ud;
    size_t take = a->len + sz * n > a->max ? 0 : sz * n; /* the rest is not needed */
    char *m = take ? realloc(a->body, a->len + take + 1) : a->body;
    if (!m)
        return 0;
    memcpy(m + a->len, p, take);
    a->body = m;
    a->len += take;
    a->body[a->len] = '\0';
    return sz * n;
}

/* One call to @path (already escaped) with @body of type @ctype (both NULL: none), within
 * monotonic @deadline_us. */
static void call(const struct gsd_kube *k, const char *token, const char *method, const char *path,
                 const char *ctype, const char *body, int64_t deadline_us, struct answer *a)
{
    int64_t left_ms = (deadline_us - gsd_mono_us()) / 1000;
    char url[1024], auth[TOKEN_MAX + 32], ct[64];
    struct curl_slist *h = NULL;
    CURL *c = left_ms > 0 ? curl_easy_init() : NULL;
    size_t max = a->max ? a->max : ANSWER_MAX;
    memset(a, 0, sizeof(*a));
    a->max = max;
    a->rc = left_ms > 0 ? CURLE_FAILED_INIT : CURLE_OPERATION_TIMEDOUT;
    if (!c)
        return;
    snprintf(url, sizeof(url), "%s%s", k->api_server, path);
    snprintf(ct, sizeof(ct), "Content-Type: %s", ctype ? ctype : "");
    if (ctype)
        h = curl_slist_append(h, ct);
    h = curl_slist_append(h, "Accept: application/json");
    h = curl_slist_append(h, "Expect:");
    if (token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
        memset(auth, 0, sizeof(auth));
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM for timeouts */
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)left_ms);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, a->curl_err);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
    if (k->ca_file)
        curl_easy_setopt(c, CURLOPT_CAINFO, k->ca_file);
    a->rc = curl_easy_perform(c);
    if (a->rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a->status);
    curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &a->sent);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
}

/* The Status object's message of @a's answer (or its text), into @out. */
static void status_message(const struct answer *a, char *out, size_t cap)
{
    json_t *j = a->body ? json_loads(a->body, 0, NULL) : NULL;
    const char *msg = json_string_value(json_object_get(j, "message"));
    json_int_t code = json_integer_value(json_object_get(j, "code"));
    if (msg)
        snprintf(out, cap, "%s (code %lld)", msg, (long long)(code ? code : a->status));
    else
        snprintf(out, cap, "HTTP %ld%s%.200s", a->status, a->body ? ": " : "",
                 a->body ? a->body : "");
    json_decref(j);
}

/* What came back for @a: libcurl's error when no answer came, else the Status message. */
static void answer_text(const struct answer *a, char *msg, size_t cap)
{
    if (a->rc != CURLE_OK)
        snprintf(msg, cap, "%s", a->curl_err[0] ? a->curl_err : curl_easy_strerror(a->rc));
    else
        status_message(a, msg, cap);
}

/* b->err: what @what got from the API server. */
static void describe(struct gsd_bind *b, const char *what, const struct answer *a)
{
    char msg[GS_DIAG_MSG_MAX];
    answer_text(a, msg, sizeof(msg));
    snprintf(b->err, sizeof(b->err), "API server %.120s, %s pod %s/%s: %s", b->kube.api_server,
             what, b->ns, b->name, msg);
}

/*
 * Is @a, a 409, the API server saying the pod is already on b->node? Its message says so
 * ("pod NAME is already assigned to node \"NODE\""); should another version word it otherwise,
 * the pod itself (GET @pod_path: spec.nodeName, metadata.uid) does.
 */
static int bound_here(const struct gsd_bind *b, const struct answer *a, const char *token,
                      const char *pod_path, int64_t deadline_us)
{
    char want[GS_NAME_MAX + 32];
    struct answer g = {0};
    snprintf(want, sizeof(want), "is already assigned to node \"%s\"", b->node);
    json_t *j = a->status == 409 && a->body ? json_loads(a->body, 0, NULL) : NULL;
    const char *msg = json_string_value(json_object_get(j, "message"));
    int yes = msg && strstr(msg, want);
    json_decref(j);
    if (yes || a->status != 409)
        return yes;
    call(&b->kube, token, "GET", pod_path, NULL, NULL, deadline_us, &g);
    j = g.status == 200 && g.body ? json_loads(g.body, 0, NULL) : NULL;
    const char *node = json_string_value(json_object_get(json_object_get(j, "spec"), "nodeName"));
    const char *uid = json_string_value(json_object_get(json_object_get(j, "metadata"), "uid"));
    yes = node && !strcmp(node, b->node) && (!b->uid[0] || (uid && !strcmp(uid, b->uid)));
    json_decref(j);
    free(g.body);
    return yes;
}

/* POST the Binding, and once more when its answer was lost. */
static int post_binding(struct gsd_bind *b, const char *token, const char *pod_path,
                        int64_t deadline_us)
{
    char path[GSD_KEY_MAX * 3 + 64 + sizeof("/binding")];
    snprintf(path, sizeof(path), "%s/binding", pod_path);
    int maybe_sent = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        struct answer a = {0};
        call(&b->kube, token, "POST", path, "application/json", b->binding, deadline_us, &a);
        int bound =
            (a.status >= 200 && a.status < 300) || bound_here(b, &a, token, pod_path, deadline_us);
        /* sent but not answered, or the API server's own timeout: the write may still land */
        int lost = a.status == 504 || (a.rc != CURLE_OK && a.sent > 0);
        if (bound) {
            free(a.body);
            return GSD_KUBE_BOUND;
        }
        describe(b, "binding", &a);
        free(a.body);
        /* 404 or 409 (gone, another UID, another node) tell the pod is not bound here now */
        maybe_sent = (maybe_sent && a.status != 404 && a.status != 409) || lost;
        if (!lost)
            break;
    }
    if (!maybe_sent)
        return GSD_KUBE_REFUSED;
    size_t n = strlen(b->err);
    snprintf(b->err + n, sizeof(b->err) - n,
             "; the Binding may have been applied: the cards "
             "stay held until a bind to the same node settles it");
    return GSD_KUBE_UNKNOWN;
}

/*
 * Is the pod at @pod_path still the one filtered (b->uid, when known), not being deleted, and
 * unbound or already on b->node (a retry)? Return: 0 unbound; 1 on b->node; -1 with b->err.
 */
static int still_unbound(struct gsd_bind *b, const char *token, const char *pod_path,
                         int64_t deadline_us)
{
    struct answer a = {0};
    call(&b->kube, token, "GET", pod_path, NULL, NULL, deadline_us, &a);
    json_t *j = a.status == 200 && a.body ? json_loads(a.body, 0, NULL) : NULL;
    const json_t *md = json_object_get(j, "metadata");
    const char *uid = json_string_value(json_object_get(md, "uid"));
    const char *node = json_string_value(json_object_get(json_object_get(j, "spec"), "nodeName"));
    int rc = -1;
    if (!json_is_object(md))
        describe(b, "reading", &a);
    else if (b->uid[0] && (!uid || strcmp(uid, b->uid)))
        snprintf(b->err, sizeof(b->err),
                 "pod %s/%s was deleted and made again (UID %.64s, not %s): nothing written", b->ns,
                 b->name, uid ? uid : "none", b->uid);
    else if (json_object_get(md, "deletionTimestamp"))
        snprintf(b->err, sizeof(b->err), "pod %s/%s is being deleted: nothing written", b->ns,
                 b->name);
    else if (node && *node && strcmp(node, b->node))
        snprintf(b->err, sizeof(b->err),
                 "pod %s/%s is already assigned to node \"%.200s\": nothing written", b->ns,
                 b->name, node);
    else
        rc = node && *node ? 1 : 0;
    json_decref(j);
    free(a.body);
    return rc;
}

/* The managed label, after the Binding; a failure binds the pod all the same (it is logged). */
static void add_label(struct gsd_bind *b, const char *token, const char *pod_path,
                      int64_t deadline_us)
{
    struct answer a = {0};
    char msg[GS_DIAG_MSG_MAX], key[GSD_KEY_MAX];
    call(&b->kube, token, "PATCH", pod_path, "application/merge-patch+json", b->patch, deadline_us,
         &a);
    if (a.status < 200 || a.status >= 300) {
        answer_text(&a, msg, sizeof(msg));
        snprintf(key, sizeof(key), "%s/%s", b->ns, b->name);
        gsd_log("warn", "pod bound, but its label " GSD_MANAGED_LABEL " was refused", "pod", key,
                "error", msg, NULL);
    }
    free(a.body);
}

int gsd_kube_bind(struct gsd_bind *b)
{
    char token[TOKEN_MAX], path[GSD_KEY_MAX * 3 + 64];
    int64_t deadline_us = gsd_mono_us() + b->kube.timeout_ms * 1000;
    if (b->kube.token_file && read_token(&b->kube, token, sizeof(token), b->err, sizeof(b->err)))
        return GSD_KUBE_REFUSED;
    const char *tok = b->kube.token_file ? token : NULL;
    char *ns = curl_easy_escape(NULL, b->ns, 0), *name = curl_easy_escape(NULL, b->name, 0);
    int rc = GSD_KUBE_REFUSED, was;
    if (!ns || !name) {
        snprintf(b->err, sizeof(b->err), "out of memory");
    } else {
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
        was = still_unbound(b, tok, path, deadline_us);
        rc = was < 0 ? GSD_KUBE_REFUSED
             : was   ? GSD_KUBE_BOUND
                     : post_binding(b, tok, path, deadline_us);
        if (rc == GSD_KUBE_BOUND)
            add_label(b, tok, path, deadline_us);
    }
    curl_free(ns);
    curl_free(name);
    memset(token, 0, sizeof(token));
    return rc;
}

/* RFC 3339 in seconds of wall clock @us into @out (24 bytes). */
static void rfc3339(int64_t us, char out[24])
{
    time_t secs = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(out, 24, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

struct gsd_bind *gsd_evict_new(const struct gsd_kube *k, const struct gsd_pod *p)
{
    struct gsd_bind *b = job_new(k, p, 1);
    const char *why = p->last_eviction && p->last_eviction[0] ? p->last_eviction : "evicted";
    int preempted = !strncmp(why, "preempted", 9) || !strncmp(why, "reclaimed", 9);
    char at[24], msg[GSD_REASON_MAX + 16], base[64];
    rfc3339(gsd_now_us(), at);
    snprintf(msg, sizeof(msg), "gpusched: %s", why);
    snprintf(base, sizeof(base), "%.57s.", p->spec.name); /* the API server adds 5 characters */
    json_t *ev =
        b ? json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s}, s:s, s:s, s:s, "
                      "s:{s:s}, s:s, s:s, s:i}",
                      "apiVersion", "v1", "kind", "Event", "metadata", "generateName", base,
                      "namespace", p->spec.ns, "involvedObject", "apiVersion", "v1", "kind", "Pod",
                      "namespace", p->spec.ns, "name", p->spec.name, "uid", p->uid, "reason",
                      preempted ? "Preempted" : "Evicted", "message", msg, "type", "Normal",
                      "source", "component", "gpuschedd", "firstTimestamp", at, "lastTimestamp", at,
                      "count", 1)
          : NULL;
    if (b)
        b->event = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
    json_decref(ev);
    return b; /* without its Event when out of memory: the eviction matters more */
}

/* Post b->event for the pod just evicted: its owners see why. One try; a refusal is logged. */
static void post_event(struct gsd_bind *b, const char *tok, const char *ns)
{
    char path[GSD_NAME_MAX * 3 + 64], msg[GS_DIAG_MSG_MAX], key[GSD_KEY_MAX];
    struct answer a = {0};
    if (!b->event)
        return;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", ns);
    call(&b->kube, tok, "POST", path, "application/json", b->event,
         gsd_mono_us() + b->kube.timeout_ms * 1000, &a);
    if (a.status < 200 || a.status >= 300) {
        answer_text(&a, msg, sizeof(msg));
        snprintf(key, sizeof(key), "%s/%s", b->ns, b->name);
        gsd_log("warn", "pod evicted, but its Event was refused (RBAC: events create?)", "pod", key,
                "error", msg, NULL);
    }
    free(a.body);
}

/* @us (the wall clock) in RFC 3339 to the microsecond, as a nudge writes it. */
static void micro_time(int64_t us, char at[40])
{
    char day[24];
    time_t secs = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(at, 40, "%s.%06dZ", day, (int)(us % 1000000));
}

struct gsd_bind *gsd_nudge_new(const struct gsd_kube *k, const struct gsd_pod *p, const char *node,
                               int64_t now_us)
{
    struct gsd_bind *b = job_new(k, p, 2);
    char at[40];
    micro_time(now_us, at);
    json_t *patch = b ? json_pack("{s:{s:{s:s, s:s}}}", "metadata", "annotations",
                                  GSD_NOMINATED_ANNOTATION, node, GSD_NUDGED_ANNOTATION, at)
                      : NULL;
    if (patch && p->uid[0])
        json_object_set_new(json_object_get(patch, "metadata"), "uid", json_string(p->uid));
    if (b) {
        snprintf(b->node, sizeof(b->node), "%s", node);
        b->patch = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
    }
    json_decref(patch);
    if (b && !b->patch) {
        gsd_bind_free(b);
        return NULL;
    }
    return b;
}

int gsd_kube_nudge(struct gsd_bind *b)
{
    char token[TOKEN_MAX], path[GSD_KEY_MAX * 3 + 64], msg[GS_DIAG_MSG_MAX];
    if (b->kube.token_file && read_token(&b->kube, token, sizeof(token), b->err, sizeof(b->err)))
        return -EIO;
    char *ns = curl_easy_escape(NULL, b->ns, 0), *name = curl_easy_escape(NULL, b->name, 0);
    struct answer a = {0};
    if (ns && name) {
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
        call(&b->kube, b->kube.token_file ? token : NULL, "PATCH", path,
             "application/merge-patch+json", b->patch, gsd_mono_us() + b->kube.timeout_ms * 1000,
             &a);
    }
    answer_text(&a, msg, sizeof(msg));
    snprintf(b->err, sizeof(b->err), "%s", ns && name ? msg : "out of memory");
    free(a.body);
    curl_free(ns);
    curl_free(name);
    memset(token, 0, sizeof(token));
    return a.status >= 200 && a.status < 300    ? 0
           : a.status == 404 || a.status == 409 ? -ENOENT
                                                : -EIO;
}

/* The Eviction's group version the API server takes: 0 not yet known, 1 policy/v1, 2 v1beta1. */
static atomic_int evict_version;

/* Whether the API server serves policy/v1 at all (GET /apis/policy/v1; 1.20 does not). */
static int serves_policy_v1(const struct gsd_kube *k, const char *token)
{
    struct answer a = {0};
    call(k, token, "GET", "/apis/policy/v1", NULL, NULL, gsd_mono_us() + k->timeout_ms * 1000, &a);
    free(a.body);
    return a.rc != CURLE_OK || a.status != 404; /* in doubt: the current version */
}

/* One Eviction of @b in group version @v (1 policy/v1, 2 policy/v1beta1); the answer in @a. */
static void post_eviction(struct gsd_bind *b, const char *token, const char *path, int v,
                          struct answer *a)
{
    json_t *ev =
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}}}", "apiVersion",
                  v == 2 ? "policy/v1beta1" : "policy/v1", "kind", "Eviction", "metadata", "name",
                  b->name, "namespace", b->ns, "deleteOptions", "preconditions", "uid", b->uid);
    char *body = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
    json_decref(ev);
    memset(a, 0, sizeof(*a));
    if (body)
        call(&b->kube, token, "POST", path, "application/json", body,
             gsd_mono_us() + b->kube.timeout_ms * 1000, a);
    free(body);
}

/* Whether the pod of @b was evicted already (or is gone): GET @pod_path. */
static int evicted_already(struct gsd_bind *b, const char *token, const char *pod_path)
{
    struct answer a = {0};
    call(&b->kube, token, "GET", pod_path, NULL, NULL, gsd_mono_us() + b->kube.timeout_ms * 1000,
         &a);
    json_t *j = a.status == 200 && a.body ? json_loads(a.body, 0, NULL) : NULL;
    const json_t *md = json_object_get(j, "metadata");
    const char *uid = json_string_value(json_object_get(md, "uid"));
    int done = a.status == 404 || (uid && strcmp(uid, b->uid)) ||
               json_object_get(md, "deletionTimestamp") != NULL;
    json_decref(j);
    free(a.body);
    return done;
}

/* The Eviction of @b POSTed to @path until it is answered (kube.h). Return: 0; -EIO. */
static int post_until_answered(struct gsd_bind *b, const char *tok, const char *path)
{
    char msg[GS_DIAG_MSG_MAX];
    if (!atomic_load(&evict_version))
        atomic_store(&evict_version, serves_policy_v1(&b->kube, tok) ? 1 : 2);
    for (int i = 0, wait_ms = 500; i < GSD_EVICT_TRIES; i++, wait_ms *= 2) {
        struct answer a;
        int v = atomic_load(&evict_version);
        post_eviction(b, tok, path, v, &a);
        if (a.status == 400 && v == 1 && a.body && strstr(a.body, "policy/v1")) {
            atomic_store(&evict_version, 2); /* an API server before 1.22 */
            free(a.body);
            post_eviction(b, tok, path, 2, &a);
        }
        answer_text(&a, msg, sizeof(msg));
        free(a.body);
        snprintf(b->err, sizeof(b->err), "eviction: %s", msg);
        if ((a.status >= 200 && a.status < 300) || a.status == 404 || a.status == 409)
            return 0;
        if (a.rc == CURLE_OK && a.status != 429 && a.status < 500)
            return -EIO;
        struct timespec ts = {wait_ms / 1000, (wait_ms % 1000) * 1000000L};
        if (i + 1 < GSD_EVICT_TRIES)
            nanosleep(&ts, NULL);
    }
    return -EIO;
}

int gsd_kube_evict(struct gsd_bind *b)
{
    char token[TOKEN_MAX], path[GSD_KEY_MAX * 3 + 64];
    if (b->kube.token_file && read_token(&b->kube, token, sizeof(token), b->err, sizeof(b->err)))
        return -EIO;
    const char *tok = b->kube.token_file ? token : NULL;
    char *ns = curl_easy_escape(NULL, b->ns, 0), *name = curl_easy_escape(NULL, b->name, 0);
    int rc = -EIO;
    snprintf(b->err, sizeof(b->err), "out of memory");
    if (ns && name) {
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
        if (b->again && evicted_already(b, tok, path)) {
            snprintf(b->err, sizeof(b->err), "evicted before the restart");
            rc = 1;
        } else {
            strcat(path, "/eviction");
            rc = post_until_answered(b, tok, path);
            if (rc == 0)
                post_event(b, tok, ns);
        }
    }
    curl_free(ns);
    curl_free(name);
    memset(token, 0, sizeof(token));
    return rc;
}

/* A pod of a list or a watch event: its key "NS/NAME" into @key, whether it is finished (*@finished
 * 1 Failed, 2 Succeeded, 0 neither). Return: its UID; NULL when it lacks namespace, name or uid
 * (@missing names which), or when its names are longer than any pod gpuschedd holds (@missing
 * NULL: none of its pods, and a key cut short would name another). */
static const char *pod_key(const json_t *pod, char *key, size_t cap, int *finished,
                           const char **missing)
{
    const json_t *md = json_object_get(pod, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *uid = json_string_value(json_object_get(md, "uid"));
    const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    *missing = !ns ? "metadata.namespace" : !name ? "metadata.name" : "metadata.uid";
    if (!ns || !name || !uid)
        return NULL;
    *missing = NULL;
    if (strlen(ns) >= GSD_NAME_MAX || strlen(name) >= GSD_OBJ_MAX ||
        (size_t)snprintf(key, cap, "%s/%s", ns, name) >= cap)
        return NULL;
    /* finished: its cards are free though the object stays */
    *finished = !phase ? 0 : !strcmp(phase, "Succeeded") ? 2 : !strcmp(phase, "Failed");
    return uid;
}

/* Whether running pod @pod carries gpuschedd's assignment and is not being deleted: one
 * gpuschedd may have to take into its books (gsd_extender_sync()), so the list keeps it whole. */
static int adoptable(const json_t *pod)
{
    const json_t *md = json_object_get(pod, "metadata");
    return json_object_get(json_object_get(md, "annotations"), GSD_NODE_ANNOTATION) &&
           !json_object_get(md, "deletionTimestamp");
}

/* The items of list page @a (@what names the list in @why): its JSON into *@j, for
 * page_next(). Return: the items; NULL with @why when the page is no list of pods. */
static const json_t *page_items(const struct gsd_kube *k, const struct answer *a, const char *what,
                                json_t **j, char *why, size_t cap)
{
    *j = a->status == 200 && a->body ? json_loads(a->body, 0, NULL) : NULL;
    const json_t *items = json_object_get(*j, "items");
    if (json_is_array(items))
        return items;
    char msg[GS_DIAG_MSG_MAX];
    answer_text(a, msg, sizeof(msg));
    snprintf(why, cap, "API server %.120s, list of %s: %s", k->api_server, what,
             a->status == 200 ? "not a pod list" : msg);
    json_decref(*j);
    return NULL;
}

/* Page @j's continue token into *@cont (NULL: the last page, or @more 0: no more wanted) and its
 * resourceVersion into @rv; @j is freed. Return: 0; -ENOMEM. */
static int page_next(json_t *j, int more, char **cont, char rv[GSD_KUBE_RV_MAX])
{
    const json_t *lm = json_object_get(j, "metadata");
    const char *c = json_string_value(json_object_get(lm, "continue"));
    const char *v = json_string_value(json_object_get(lm, "resourceVersion"));
    snprintf(rv, GSD_KUBE_RV_MAX, "%s", v && strlen(v) < GSD_KUBE_RV_MAX ? v : "");
    more = more && c && *c;
    *cont = more ? strdup(c) : NULL;
    json_decref(j); /* c is gone with it */
    return more && !*cont ? -ENOMEM : 0;
}

/* The pods of one page of a list into @live; the continue token into *@cont (NULL: last page),
 * the list's resourceVersion into @rv. Return: 0; -EIO with @why. */
static int list_page(const struct gsd_kube *k, const struct answer *a, json_t *live, char **cont,
                     char rv[GSD_KUBE_RV_MAX], char *why, size_t cap)
{
    json_t *j, *item;
    const json_t *items = page_items(k, a, "pods", &j, why, cap);
    size_t i;
    *cont = NULL;
    if (!items)
        return -EIO;
    json_array_foreach(items, i, item)
    {
        char key[GSD_KEY_MAX];
        const char *missing;
        int finished;
        const char *uid = pod_key(item, key, sizeof(key), &finished, &missing);
        if (!uid && !missing)
            continue; /* not one of gpuschedd's */
        if (!uid) {   /* not a pod: the whole list is in doubt */
            snprintf(why, cap, "API server %.120s, list of pods: items[%zu] lacks %s",
                     k->api_server, i, missing);
            json_decref(j);
            return -EIO;
        }
        if (!finished && adoptable(item))
            json_object_set_new(live, key, json_pack("{s:s, s:O}", "uid", uid, "pod", item));
        else if (!finished)
            json_object_set_new(live, key, json_string(uid));
        else if (finished == 2) /* it counts towards its gang: gsd_kube_succeeded() */
            json_object_set_new(live, key,
                                json_pack("{s:s, s:s}", "uid", uid, "phase", "Succeeded"));
    }
    return page_next(j, 1, cont, rv);
}

const char *gsd_kube_succeeded(const json_t *v, int *succeeded)
{
    const char *phase = json_string_value(json_object_get(v, "phase"));
    *succeeded = phase && !strcmp(phase, "Succeeded");
    return json_string_value(json_is_object(v) ? json_object_get(v, "uid") : v);
}

/* One page of a list (@a) read into @out; the continue token into *@cont (NULL: the last page),
 * the list's resourceVersion into @rv. Return: 0; < 0 with @why. */
typedef int (*page_fn)(const struct gsd_kube *k, const struct answer *a, json_t *out, char **cont,
                       char rv[GSD_KUBE_RV_MAX], char *why, size_t cap);

/* Every page of the list at @query (a path ending in '?' or '&'), LIST_PAGE items each within
 * k->timeout_ms (LIST_MAX bytes at most), all within LIST_TIMEOUTS of it, read by @page into
 * @out (@what names the list in errors); the last page's resourceVersion into @rv (NULL: not
 * wanted). A continue token given twice, too long, or @stop set ends it. Return: 0; -EIO with
 * @why; @page's own error. */
static int list_pages(const struct gsd_kube *k, const atomic_int *stop, const char *query,
                      const char *what, page_fn page, json_t *out, char rv[GSD_KUBE_RV_MAX],
                      char *why, size_t cap)
{
    char token[TOKEN_MAX], path[4096], last[1024] = "", got_rv[GSD_KUBE_RV_MAX] = "";
    if (k->token_file && read_token(k, token, sizeof(token), why, cap))
        return -EIO;
    char *cont = NULL;
    int rc = 0;
    int64_t deadline_us = gsd_mono_us() + LIST_TIMEOUTS * k->timeout_ms * 1000;
    do {
        if (cont && (!strcmp(cont, last) || strlen(cont) >= sizeof(last) ||
                     gsd_mono_us() > deadline_us || atomic_load(stop))) {
            snprintf(why, cap, "API server %.120s, list of %s: %s", k->api_server, what,
                     atomic_load(stop)             ? "stopping"
                     : gsd_mono_us() > deadline_us ? "longer than its time limit"
                                                   : "a continue token given twice, or too long");
            rc = -EIO;
            break;
        }
        snprintf(last, sizeof(last), "%s", cont ? cont : "");
        char *esc = cont ? curl_easy_escape(NULL, cont, 0) : NULL;
        snprintf(path, sizeof(path), "%slimit=%d%s%s", query, LIST_PAGE, esc ? "&continue=" : "",
                 esc ? esc : "");
        curl_free(esc);
        free(cont);
        cont = NULL;
        struct answer a = {.max = LIST_MAX};
        call(k, k->token_file ? token : NULL, "GET", path, NULL, NULL,
             gsd_mono_us() + k->timeout_ms * 1000, &a);
        rc = page(k, &a, out, &cont, got_rv, why, cap);
        free(a.body);
    } while (!rc && cont);
    free(cont);
    memset(token, 0, sizeof(token));
    if (!rc && rv)
        memcpy(rv, got_rv, GSD_KUBE_RV_MAX);
    return rc;
}

/* Whether container @c names one of NVIDIA's resources (nvidia.com/...) in its limits or
 * requests: the resources kube-scheduler hands gpuschedd (its managedResources). */
static int names_gpus(const json_t *c)
{
    static const char *const kinds[] = {"limits", "requests"};
    for (int k = 0; k < 2; k++) {
        const char *name;
        const json_t *v;
        json_object_foreach(json_object_get(json_object_get(c, "resources"), kinds[k]), name, v)
        {
            if (!strncmp(name, "nvidia.com/", 11))
                return 1;
        }
    }
    return 0;
}

/* Whether @pod asks one of NVIDIA's resources in a container or an init container. */
static int asks_gpus(const json_t *pod)
{
    static const char *const lists[] = {"containers", "initContainers"};
    const json_t *c;
    size_t i;
    for (int l = 0; l < 2; l++) {
        json_array_foreach(json_object_get(json_object_get(pod, "spec"), lists[l]), i, c)
        {
            if (names_gpus(c))
                return 1;
        }
    }
    return 0;
}

/* Whether kube-scheduler last found no node for @pod (its PodScheduled condition False with
 * reason Unschedulable): it waits in the unschedulable queue for an event, or a minute. */
static int unschedulable(const json_t *pod)
{
    const json_t *c;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        const char *status = json_string_value(json_object_get(c, "status"));
        const char *reason = json_string_value(json_object_get(c, "reason"));
        if (type && !strcmp(type, "PodScheduled"))
            return status && !strcmp(status, "False") && reason && !strcmp(reason, "Unschedulable");
    }
    return 0;
}

/* One page of pending pods into @out ("NS/NAME" to UID): those kube-scheduler found no node for
 * that ask NVIDIA's resources and are not being deleted (list_pages()'s page_fn). */
static int waiting_page(const struct gsd_kube *k, const struct answer *a, json_t *out, char **cont,
                        char rv[GSD_KUBE_RV_MAX], char *why, size_t cap)
{
    json_t *j, *item;
    const json_t *items = page_items(k, a, "pending pods", &j, why, cap);
    size_t i;
    *cont = NULL;
    if (!items)
        return -EIO;
    json_array_foreach(items, i, item)
    {
        char key[GSD_KEY_MAX];
        const char *missing;
        int finished;
        const char *uid = pod_key(item, key, sizeof(key), &finished, &missing);
        if (uid && !finished && json_object_size(out) < GSD_NUDGE_WAITING_MAX &&
            !json_object_get(json_object_get(item, "metadata"), "deletionTimestamp") &&
            unschedulable(item) && asks_gpus(item))
            json_object_set_new(out, key, json_string(uid));
    }
    return page_next(j, json_object_size(out) < GSD_NUDGE_WAITING_MAX, cont, rv);
}

int gsd_kube_nudge_waiting(const struct gsd_kube *k, const atomic_int *stop, int64_t now_us,
                           char *why, size_t cap)
{
    json_t *out = json_object();
    int rc =
        out ? list_pages(k, stop,
                         "/api/v1/pods?fieldSelector=spec.nodeName%3D%2Cstatus.phase%3DPending&",
                         "pending pods", waiting_page, out, NULL, why, cap)
            : -ENOMEM;
    char token[TOKEN_MAX], at[40], path[GSD_KEY_MAX * 3 + 64], msg[GS_DIAG_MSG_MAX];
    if (!rc && k->token_file && read_token(k, token, sizeof(token), why, cap))
        rc = -EIO;
    micro_time(now_us, at);
    const char *key;
    json_t *uid;
    int n = 0;
    json_object_foreach(rc ? NULL : out, key, uid)
    {
        if (atomic_load(stop))
            break;
        const char *slash = strchr(key, '/');
        char *ns = curl_easy_escape(NULL, key, (int)(slash - key));
        char *name = curl_easy_escape(NULL, slash + 1, 0);
        json_t *patch = json_pack("{s:{s:O, s:{s:s}}}", "metadata", "uid", uid, "annotations",
                                  GSD_NUDGED_ANNOTATION, at);
        char *body = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
        struct answer a = {0};
        if (ns && name && body) {
            snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
            call(k, k->token_file ? token : NULL, "PATCH", path, "application/merge-patch+json",
                 body, gsd_mono_us() + k->timeout_ms * 1000, &a);
        }
        n += a.status >= 200 && a.status < 300;
        if ((a.status < 200 || a.status >= 300) && a.status != 404 && a.status != 409) {
            answer_text(&a, msg, sizeof(msg)); /* 404, 409: gone, or made again, meanwhile */
            gsd_log("warn",
                    "a pod waiting since gpuschedd was away not nudged: kube-scheduler "
                    "tries it again within a minute",
                    "pod", key, "error", msg, NULL);
        }
        free(a.body);
        free(body);
        json_decref(patch);
        curl_free(ns);
        curl_free(name);
    }
    memset(token, 0, sizeof(token));
    json_decref(out);
    return rc ? rc : n;
}

int gsd_kube_live(const struct gsd_kube *k, const atomic_int *stop, json_t **live,
                  char rv[GSD_KUBE_RV_MAX], char *why, size_t cap)
{
    json_t *out = json_object();
    int rc = out ? list_pages(k, stop, "/api/v1/pods?fieldSelector=" GSD_BOUND_PODS_QUERY "&",
                              "pods", list_page, out, rv, why, cap)
                 : -ENOMEM;
    if (rc)
        json_decref(out);
    else
        *live = out;
    return rc;
}

int gsd_kube_get(const struct gsd_kube *k, const char *path, json_t **out, char *why, size_t cap)
{
    char token[TOKEN_MAX], msg[GS_DIAG_MSG_MAX];
    struct answer a = {.max = LIST_MAX};
    if (k->token_file && read_token(k, token, sizeof(token), why, cap))
        return -EIO;
    call(k, k->token_file ? token : NULL, "GET", path, NULL, NULL,
         gsd_mono_us() + LIST_TIMEOUTS * k->timeout_ms * 1000, &a);
    memset(token, 0, sizeof(token));
    json_t *j = a.status == 200 && a.body ? json_loads(a.body, 0, NULL) : NULL;
    if (!j) {
        answer_text(&a, msg, sizeof(msg));
        snprintf(why, cap, "API server %.120s, GET %.200s: %s", k->api_server, path,
                 a.status == 200 ? "not JSON" : msg);
    }
    free(a.body);
    if (!j)
        return -EIO;
    *out = j;
    return 0;
}

/* ---- the watch ---- */

#define WATCH_LINE_MAX (4 << 20) /* bytes of one watch event (one pod, with its status) */
#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000
#define NOT_SERVED_MS  60000 /* PodGroups not served (404): asked again this often, quietly */

/* One watch stream as it comes: split into events, one JSON object a line. */
struct watch {
    const struct gsd_kube_sink *sink;
    const char *query; /* the collection and selector watched, "/api/v1/pods?fieldSelector=.." */
    /* Return: 0; -1 the object is none of its kind, with err */
    int (*on_object)(struct watch *w, const char *type, const json_t *obj);
    char *line;
    size_t len, cap;
    char rv[GSD_KUBE_RV_MAX]; /* the last resourceVersion seen (an event's or a bookmark's) */
    int gone;                 /* 410 Gone: the resourceVersion is too old, list again */
    char err[GS_DIAG_MSG_MAX];
    long events;
};

/* A pod ADDED, MODIFIED or DELETED: one deleted or finished is gone. Return: 0; -1 not a pod. */
static int pod_event(struct watch *w, const char *type, const json_t *obj)
{
    char key[GSD_KEY_MAX];
    const char *missing;
    int finished;
    const char *uid = pod_key(obj, key, sizeof(key), &finished, &missing);
    if (missing) {
        snprintf(w->err, sizeof(w->err), "watch: a %s event's pod lacks %s", type, missing);
        return -1;
    }
    if (uid && (finished || !strcmp(type, "DELETED"))) /* deleted once Succeeded: it counts */
        w->sink->gone(w->sink->ud, key, uid, finished == 2);
    return 0;
}

/* A Node ADDED, MODIFIED or DELETED, as it is (a PodGroup, following those). Return: 0. */
static int node_event(struct watch *w, const char *type, const json_t *obj)
{
    w->sink->node(w->sink->ud, obj, !strcmp(type, "DELETED"));
    return 0;
}

/* The field an object of the API server lacks of what names it: metadata.name, and
 * metadata.namespace when @namespaced (non-empty strings, as the API server writes them); NULL
 * none. */
static const char *unnamed(const json_t *obj, int namespaced)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    return namespaced && (!ns || !*ns) ? "metadata.namespace"
           : !name || !*name           ? "metadata.name"
                                       : NULL;
}

/* One event line: an object ADDED, MODIFIED or DELETED, a BOOKMARK, or an ERROR (a Status), the
 * watch event types of Kubernetes' API conventions. Return: 0; -1 to end the stream (410, or an
 * event that is not one: a type of no other name, or an object that names none). */
static int watch_event(struct watch *w, const char *text, size_t len)
{
    json_error_t e;
    json_t *ev = json_loadb(text, len, 0, &e);
    const char *type = json_string_value(json_object_get(ev, "type"));
    const json_t *obj = json_object_get(ev, "object");
    const char *rv =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
    int object =
        type && (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED") || !strcmp(type, "DELETED"));
    /* a pod is read whole by pod_event() */
    const char *lacks = object && w->sink->node ? unnamed(obj, w->sink->podgroups) : NULL;
    int rc = 0;
    if (!type || !json_is_object(obj)) {
        snprintf(w->err, sizeof(w->err), "watch: not an event: %.200s", ev ? "" : e.text);
        rc = -1;
    } else if (!object && strcmp(type, "BOOKMARK") && strcmp(type, "ERROR")) {
        snprintf(w->err, sizeof(w->err), "watch: an event of type \"%.40s\", none Kubernetes has",
                 type);
        rc = -1;
    } else if (lacks) {
        snprintf(w->err, sizeof(w->err), "watch: a %s event's object lacks %s", type, lacks);
        rc = -1;
    } else if (!strcmp(type, "ERROR")) {
        json_int_t code = json_integer_value(json_object_get(obj, "code"));
        const char *msg = json_string_value(json_object_get(obj, "message"));
        w->gone = code == 410;
        snprintf(w->err, sizeof(w->err), "watch: %.300s (code %lld)", msg ? msg : "error",
                 (long long)code);
        rc = -1;
    } else if (strcmp(type, "BOOKMARK")) {
        w->events++;
        rc = w->on_object(w, type, obj);
    }
    if (!rc && rv && strlen(rv) < sizeof(w->rv))
        memcpy(w->rv, rv, strlen(rv) + 1);
    json_decref(ev);
    return rc;
}

/* libcurl's write callback for the watch: events as each line completes. */
static size_t on_watch(char *p, size_t sz, size_t n, void *ud)
{
    struct watch *w = ud;
    size_t total = sz * n;
    for (size_t i = 0; i < total; i++) {
        if (p[i] == '\n') {
            if (w->len && watch_event(w, w->line, w->len))
                return 0; /* ends the transfer */
            w->len = 0;
            continue;
        }
        if (w->len + 1 > w->cap) {
            size_t cap = w->cap ? w->cap * 2 : 65536;
            char *m = cap <= WATCH_LINE_MAX ? realloc(w->line, cap) : NULL;
            if (!m) {
                snprintf(w->err, sizeof(w->err), "watch: an event longer than %d bytes",
                         WATCH_LINE_MAX);
                return 0;
            }
            w->line = m;
            w->cap = cap;
        }
        w->line[w->len++] = p[i];
    }
    return total;
}

/* libcurl's progress callback: a nonzero return ends the transfer (we are told to stop). */
static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    const struct watch *w = ud;
    return w->sink->stop(w->sink->ud);
}

/* One watch from @w->rv, for up to @secs seconds. Return: 0 ended as asked (the API server's
 * timeoutSeconds, or stop); -1 with w->err (w->gone set for 410). */
static int watch_once(const struct gsd_kube *k, const char *token, struct watch *w, long secs)
{
    char url[2048], auth[TOKEN_MAX + 32], curl_err[CURL_ERROR_SIZE] = "";
    struct curl_slist *h = NULL;
    CURL *c = curl_easy_init();
    /* the API server's opaque token: escaped, as a continue token is, or "8&x=y" adds a query */
    char *rv = c ? curl_easy_escape(c, w->rv, 0) : NULL;
    if (!rv) {
        curl_easy_cleanup(c);
        return -1;
    }
    int n = snprintf(url, sizeof(url),
                     "%s%swatch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%ld",
                     k->api_server, w->query, rv, secs);
    curl_free(rv);
    if (n < 0 || (size_t)n >= sizeof(url)) {
        snprintf(w->err, sizeof(w->err), "watch URL longer than %zu bytes", sizeof(url));
        curl_easy_cleanup(c);
        return -1;
    }
    h = curl_slist_append(h, "Accept: application/json");
    if (token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
        memset(auth, 0, sizeof(auth));
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)k->timeout_ms);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, secs + 30); /* the API server ends it at secs */
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_watch);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, w);
    curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L); /* a 4xx/5xx is no event stream */
    if (k->ca_file)
        curl_easy_setopt(c, CURLOPT_CAINFO, k->ca_file);
    w->len = 0;
    w->err[0] = '\0';
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (rc == CURLE_OK || w->sink->stop(w->sink->ud))
        return 0;
    w->gone |= status == 410 || status == 404; /* 404: a CRD removed; the list tells */
    if (!w->err[0])
        snprintf(w->err, sizeof(w->err), "watch: %s",
                 curl_err[0] ? curl_err : curl_easy_strerror(rc));
    return -1;
}

/* Sleep @ms in steps, returning early (1) when told to stop. */
static int nap(const struct gsd_kube_sink *s, int64_t ms)
{
    for (int64_t until = gsd_mono_us() + ms * 1000; gsd_mono_us() < until;) {
        if (s->stop(s->ud))
            return 1;
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return s->stop(s->ud);
}

/* The API server's version (GET /version), logged; one older than GSD_KUBE_MIN_MINOR is an
 * error in the log: kube-scheduler's extender protocol as gpuschedd speaks it is 1.20's. */
static void check_version(const struct gsd_kube *k)
{
    char token[TOKEN_MAX], why[GS_DIAG_MSG_MAX], want[16];
    struct answer a = {0};
    if (k->token_file && read_token(k, token, sizeof(token), why, sizeof(why)))
        return;
    call(k, k->token_file ? token : NULL, "GET", "/version", NULL, NULL,
         gsd_mono_us() + k->timeout_ms * 1000, &a);
    memset(token, 0, sizeof(token));
    json_t *j = a.status == 200 && a.body ? json_loads(a.body, 0, NULL) : NULL;
    const char *git = json_string_value(json_object_get(j, "gitVersion"));
    const char *major = json_string_value(json_object_get(j, "major"));
    const char *minor = json_string_value(json_object_get(j, "minor"));
    snprintf(want, sizeof(want), "1.%d", GSD_KUBE_MIN_MINOR);
    if (git && major && minor) {
        int old = atoi(major) < 1 || (atoi(major) == 1 && atoi(minor) < GSD_KUBE_MIN_MINOR);
        gsd_log(old ? "error" : "info",
                old ? "Kubernetes too old: gpusched needs this version or later"
                    : "Kubernetes API server",
                "version", git, "minimum", want, NULL);
    }
    json_decref(j);
    free(a.body);
}

/* The Nodes, all of them (a cluster has thousands at most: one page), and the list's
 * resourceVersion into @rv. Return: 0 and *@items (new reference); -EIO with @why. */
static int list_nodes(const struct gsd_kube *k, json_t **items, char rv[GSD_KUBE_RV_MAX], char *why,
                      size_t cap)
{
    json_t *list;
    if (gsd_kube_get(k, "/api/v1/nodes", &list, why, cap))
        return -EIO;
    json_t *it = json_object_get(list, "items");
    const char *v =
        json_string_value(json_object_get(json_object_get(list, "metadata"), "resourceVersion"));
    int ok = json_is_array(it) && (!v || strlen(v) < GSD_KUBE_RV_MAX);
    if (ok) { /* without a resourceVersion the watch starts from the API server's latest */
        *items = json_incref(it);
        snprintf(rv, GSD_KUBE_RV_MAX, "%s", v ? v : "");
    } else {
        snprintf(why, cap, "API server %.120s, list of nodes: not a NodeList", k->api_server);
    }
    json_decref(list);
    return ok ? 0 : -EIO;
}

/* One page of PodGroups (@a) appended to @items; the continue token into *@cont (NULL: the last
 * page), the list's resourceVersion into @rv. Return: 0; -ENOENT a 404 (the resource is not
 * served: no Volcano CRD); -EIO with @why (a refusal, not a list, more than GSD_KUBE_GROUPS_MAX
 * items in all); -ENOMEM. */
static int group_page(const struct gsd_kube *k, const struct answer *a, json_t *items, char **cont,
                      char rv[GSD_KUBE_RV_MAX], char *why, size_t cap)
{
    json_t *j = a->status == 200 && a->body ? json_loads(a->body, 0, NULL) : NULL;
    const json_t *page = json_object_get(j, "items"), *lm = json_object_get(j, "metadata");
    const char *c = json_string_value(json_object_get(lm, "continue"));
    const char *v = json_string_value(json_object_get(lm, "resourceVersion"));
    char msg[GS_DIAG_MSG_MAX];
    int rc = 0;
    *cont = NULL;
    answer_text(a, msg, sizeof(msg));
    const json_t *item;
    const char *lacks = NULL;
    size_t i;
    json_array_foreach(page, i, item) if ((lacks = unnamed(item, 1))) break;
    if (lacks) { /* not a PodGroup: the whole list is in doubt, as a pod list's would be */
        rc = -EIO;
        snprintf(why, cap, "API server %.120s, list of PodGroups: items[%zu] lacks %s",
                 k->api_server, i, lacks);
    } else if (!json_is_array(page) ||
               json_array_size(items) + json_array_size(page) > GSD_KUBE_GROUPS_MAX) {
        rc = a->status == 404 ? -ENOENT : -EIO;
        if (a->status == 200 && json_is_array(page)) /* gpuschedd would hold no more */
            snprintf(msg, sizeof(msg), "more than %d PodGroups", GSD_KUBE_GROUPS_MAX);
        snprintf(why, cap, "API server %.120s, list of PodGroups: %s", k->api_server,
                 a->status == 200 && !json_is_array(page) ? "not a PodGroupList" : msg);
    } else if (json_array_extend(items, (json_t *)page) || (c && *c && !(*cont = strdup(c)))) {
        rc = -ENOMEM;
        snprintf(why, cap, "out of memory");
    }
    snprintf(rv, GSD_KUBE_RV_MAX, "%s", v && strlen(v) < GSD_KUBE_RV_MAX ? v : "");
    json_decref(j);
    return rc;
}

/* Every PodGroup, listed as the pods are (list_pages()); the resourceVersion into @rv. Return:
 * 0 and *@items (new reference); -ENOENT not served (404); -EIO with @why; -ENOMEM. */
static int list_groups(const struct gsd_kube *k, json_t **items, char rv[GSD_KUBE_RV_MAX],
                       char *why, size_t cap)
{
    atomic_int never = 0;
    json_t *out = json_array();
    int rc = out ? list_pages(k, &never, GSD_PODGROUPS_PATH "?", "PodGroups", group_page, out, rv,
                              why, cap)
                 : -ENOMEM;
    if (rc)
        json_decref(out);
    else
        *items = out;
    return rc;
}

/* A full list, pods, Nodes or PodGroups, handed to the sink. Return: 0; -EIO with @why;
 * -ENOENT: PodGroups not served. */
static int list_all(const struct gsd_kube *k, const struct gsd_kube_sink *s, struct watch *w,
                    char *why, size_t cap)
{
    atomic_int never = 0;
    json_t *got;
    int64_t listed_us = gsd_now_us();
    int rc = s->podgroups ? list_groups(k, &got, w->rv, why, cap)
             : s->node    ? list_nodes(k, &got, w->rv, why, cap)
                          : gsd_kube_live(k, &never, &got, w->rv, why, cap);
    if (!rc && s->node)
        s->nodes(s->ud, got);
    else if (!rc)
        s->listed(s->ud, got, listed_us);
    return rc;
}

void gsd_kube_follow(const struct gsd_kube *k, const struct gsd_kube_sink *s)
{
    struct watch w = {.sink = s,
                      .query = s->podgroups ? GSD_PODGROUPS_PATH "?"
                               : s->node    ? "/api/v1/nodes?"
                                            : "/api/v1/pods?",
                      .on_object = s->node ? node_event : pod_event};
    const char *what = s->podgroups ? "PodGroup" : s->node ? "node" : "pod";
    char why[2 * GS_DIAG_MSG_MAX], token[TOKEN_MAX], msg[96];
    int64_t backoff_ms = BACKOFF_MIN_MS, next_list_us = 0;
    int listed = 0, missing = 0;
    if (!s->node)
        check_version(k);
    while (!s->stop(s->ud)) {
        int64_t now = gsd_mono_us();
        if (!listed || now >= next_list_us) {
            int rc = list_all(k, s, &w, why, sizeof(why));
            if (rc == -ENOENT) { /* no Volcano CRD: said once, asked again now and then */
                if (!missing++)
                    gsd_log("warn",
                            "PodGroups not served by the API server (no Volcano CRD?): gangs "
                            "need POST /v1/podgroups; asked again every minute",
                            "error", why, NULL);
                if (nap(s, NOT_SERVED_MS))
                    break;
                continue;
            }
            if (rc) {
                snprintf(msg, sizeof(msg), "%s list from the API server failed; %s", what,
                         s->podgroups ? "PodGroups stay as they were"
                         : s->node    ? "nodes stay as they were"
                                      : "cards stay held");
                gsd_log("warn", msg, "error", why, NULL);
                if (nap(s, backoff_ms))
                    break;
                backoff_ms = backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff_ms * 2;
                continue;
            }
            if (missing)
                gsd_log("info", "PodGroups served by the API server now: followed", NULL);
            missing = 0;
            listed = 1;
            next_list_us = gsd_mono_us() + k->sync_us;
            w.gone = 0;
        }
        if (k->token_file && read_token(k, token, sizeof(token), why, sizeof(why))) {
            snprintf(msg, sizeof(msg), "%s watch: no token", what);
            gsd_log("warn", msg, "error", why, NULL);
            if (nap(s, backoff_ms))
                break;
            continue;
        }
        long secs = (long)((next_list_us - gsd_mono_us()) / 1000000);
        int rc = watch_once(k, k->token_file ? token : NULL, &w, secs < 1 ? 1 : secs);
        memset(token, 0, sizeof(token));
        if (!rc) {
            backoff_ms = BACKOFF_MIN_MS;
            continue;
        }
        snprintf(msg, sizeof(msg), "%s watch %s", what,
                 w.gone ? "too old: listing again" : "failed; watching again");
        gsd_log(w.gone ? "info" : "warn", msg, "error", w.err, NULL);
        /* too old, or (PodGroups) no longer served: a fresh list, after the backoff as any
         * failure; the list says a CRD removed once */
        listed = !w.gone;
        if (nap(s, backoff_ms))
            break;
        backoff_ms = backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff_ms * 2;
    }
    free(w.line);
}
