/*
 * gpuschedd: the extender's bind in the Kubernetes API server (libcurl).
 *
 * kube-scheduler, given an extender with bindVerb, leaves the binding to it. Once the scheduler
 * thread has committed the cards, the HTTP connection's thread makes two calls:
 *   PATCH /api/v1/namespaces/NS/pods/NAME (application/merge-patch+json) with the annotations of
 *         gsd_pod_assignment(), so they are on the pod before it reaches its node;
 *   POST  /api/v1/namespaces/NS/pods/NAME/binding, the v1 Binding kube-scheduler's DefaultBinder
 *         sends (its metadata.uid makes the pod's UID a precondition).
 * The API server refuses a Binding for a pod that has a node with 409 Conflict, "pod NAME is
 * already assigned to node "NODE"" (pkg/registry/core/pod/storage, BindingREST.assignPod), so a
 * Binding may be sent again: a 409 naming the same node means bound (when the message does not
 * name it, a GET of the pod decides by spec.nodeName and metadata.uid). That settles a Binding
 * whose answer was lost (the connection broke after it was sent, or a 504): it is sent once more.
 */
#include "kube.h"
#include "state.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_MAX     16384      /* bytes of a bearer token file (a service account JWT: ~1 KiB) */
#define ANSWER_MAX    (1 << 20)  /* bytes of an API server answer kept */
#define LIST_MAX      (64 << 20) /* bytes of one page of a pod list (500 pods of up to 128 KiB) */
#define LIST_PAGE     500
#define LIST_TIMEOUTS 20 /* a whole list may take this many timeoutSeconds, however many pages */

struct gsd_bind *gsd_bind_new(const struct gsd_kube *k, const struct gsd_pod *p, const char *node,
                              const json_t *assignment)
{
    struct gsd_bind *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    memcpy(b->ns, p->ns, sizeof(b->ns));
    memcpy(b->name, p->name, sizeof(b->name));
    memcpy(b->uid, p->uid, sizeof(b->uid));
    snprintf(b->node, sizeof(b->node), "%s", node);
    b->seq = p->seq;
    b->kube.timeout_ms = k->timeout_ms;
    b->kube.api_server = strdup(k->api_server);
    b->kube.token_file = k->token_file ? strdup(k->token_file) : NULL;
    b->kube.ca_file = k->ca_file ? strdup(k->ca_file) : NULL;
    json_t *patch = json_pack("{s:{s:O, s:{s:s}}}", "metadata", "annotations", assignment, "labels",
                              GSD_MANAGED_LABEL, "true");
    json_t *meta = json_pack("{s:s, s:s}", "name", p->name, "namespace", p->ns);
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
    if (!b->kube.api_server || (k->token_file && !b->kube.token_file) ||
        (k->ca_file && !b->kube.ca_file) || !b->patch || !b->binding) {
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
    free(b);
}

/* The token in k->token_file, trailing white space cut. Return: 0; -1 with @why. */
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
    char path[GSD_NAME_MAX * 3 * 2 + 64 + sizeof("/binding")];
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

int gsd_kube_bind(struct gsd_bind *b)
{
    char token[TOKEN_MAX], path[GSD_NAME_MAX * 3 * 2 + 64];
    int64_t deadline_us = gsd_mono_us() + b->kube.timeout_ms * 1000;
    if (b->kube.token_file && read_token(&b->kube, token, sizeof(token), b->err, sizeof(b->err)))
        return GSD_KUBE_REFUSED;
    char *ns = curl_easy_escape(NULL, b->ns, 0), *name = curl_easy_escape(NULL, b->name, 0);
    int rc = GSD_KUBE_REFUSED;
    if (!ns || !name) {
        snprintf(b->err, sizeof(b->err), "out of memory");
    } else {
        struct answer a = {0};
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
        call(&b->kube, b->kube.token_file ? token : NULL, "PATCH", path,
             "application/merge-patch+json", b->patch, deadline_us, &a);
        if (a.status < 200 || a.status >= 300)
            describe(b, "annotations of", &a);
        else
            rc = post_binding(b, b->kube.token_file ? token : NULL, path, deadline_us);
        free(a.body);
    }
    curl_free(ns);
    curl_free(name);
    memset(token, 0, sizeof(token));
    return rc;
}

/* The pods of one page of a list into @live; the continue token into *@cont (NULL: last page).
 * Return: 0; -EIO with @why. */
static int list_page(const struct gsd_kube *k, const struct answer *a, json_t *live, char **cont,
                     char *why, size_t cap)
{
    json_t *j = a->status == 200 && a->body ? json_loads(a->body, 0, NULL) : NULL, *item;
    const json_t *items = json_object_get(j, "items");
    size_t i;
    *cont = NULL;
    if (!json_is_array(items)) {
        char msg[GS_DIAG_MSG_MAX];
        answer_text(a, msg, sizeof(msg));
        snprintf(why, cap, "API server %.120s, list of pods: %s", k->api_server,
                 a->status == 200 ? "not a pod list" : msg);
        json_decref(j);
        return -EIO;
    }
    json_array_foreach(items, i, item)
    {
        const json_t *md = json_object_get(item, "metadata");
        const char *ns = json_string_value(json_object_get(md, "namespace"));
        const char *name = json_string_value(json_object_get(md, "name"));
        const char *uid = json_string_value(json_object_get(md, "uid"));
        const char *phase =
            json_string_value(json_object_get(json_object_get(item, "status"), "phase"));
        char key[2 * GSD_NAME_MAX + 2];
        if (!ns || !name || !uid) { /* not a pod: the whole list is in doubt */
            snprintf(why, cap, "API server %.120s, list of pods: items[%zu] lacks %s",
                     k->api_server, i,
                     !ns     ? "metadata.namespace"
                     : !name ? "metadata.name"
                             : "metadata.uid");
            json_decref(j);
            return -EIO;
        }
        if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
            continue; /* finished: its cards are free though the object stays */
        snprintf(key, sizeof(key), "%.63s/%.63s", ns, name);
        json_object_set_new(live, key, json_string(uid));
    }
    const char *c = json_string_value(json_object_get(json_object_get(j, "metadata"), "continue"));
    int more = c && *c;
    *cont = more ? strdup(c) : NULL;
    json_decref(j); /* c is gone with it */
    return more && !*cont ? -ENOMEM : 0;
}

int gsd_kube_live(const struct gsd_kube *k, const atomic_int *stop, json_t **live, char *why,
                  size_t cap)
{
    char token[TOKEN_MAX], path[4096], last[1024] = "";
    if (k->token_file && read_token(k, token, sizeof(token), why, cap))
        return -EIO;
    json_t *out = json_object();
    char *cont = NULL;
    int rc = out ? 0 : -ENOMEM;
    int64_t deadline_us = gsd_mono_us() + LIST_TIMEOUTS * k->timeout_ms * 1000;
    do {
        if (cont && (!strcmp(cont, last) || strlen(cont) >= sizeof(last) ||
                     gsd_mono_us() > deadline_us || atomic_load(stop))) {
            snprintf(why, cap, "API server %.120s, list of pods: %s", k->api_server,
                     atomic_load(stop)             ? "stopping"
                     : gsd_mono_us() > deadline_us ? "longer than its time limit"
                                                   : "a continue token given twice, or too long");
            rc = -EIO;
            break;
        }
        snprintf(last, sizeof(last), "%s", cont ? cont : "");
        char *esc = cont ? curl_easy_escape(NULL, cont, 0) : NULL;
        snprintf(path, sizeof(path), "/api/v1/pods?labelSelector=%s&limit=%d%s%s",
                 GSD_MANAGED_LABEL_QUERY, LIST_PAGE, esc ? "&continue=" : "", esc ? esc : "");
        curl_free(esc);
        free(cont);
        cont = NULL;
        struct answer a = {.max = LIST_MAX};
        call(k, k->token_file ? token : NULL, "GET", path, NULL, NULL,
             gsd_mono_us() + k->timeout_ms * 1000, &a);
        rc = list_page(k, &a, out, &cont, why, cap);
        free(a.body);
    } while (!rc && cont);
    free(cont);
    memset(token, 0, sizeof(token));
    if (rc) {
        json_decref(out);
        return rc;
    }
    *live = out;
    return 0;
}
