/*
 * gpuschedd: the REST API under /v1 and the routing of every request. Runs on the scheduler
 * thread, after access.c let the request in (token, role, rate limit, body cap). A tenant's token
 * reaches the namespaces it owns (others: 403), the admin token reaches all. Errors are
 * {"error": "...", "field": "..."}.
 */
#include "api.h"
#include "reads.h"
#include "accounts.h"
#include "agents.h"
#include "extender.h"
#include "log.h"
#include "nodes.h"
#include "podspec.h"
#include "preempt.h"
#include "queue.h"
#include "server.h"
#include "snapshot.h"
#include "state.h"
#include "whatif.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/tenancy.h"

#include <ctype.h>
#include <errno.h>
#include <nettle/aes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

/* Who is asking: a tenant, the admin or a node agent (tenant NULL for both): with the
 * bootstrap node token (node) or its node's own (self >= 0, agents.h). */
struct who {
    struct gsd_tenant *tenant;
    int admin, node, self;
};

/* Answer @r @status with JSON @text (malloc'd, taken; NULL out of memory: a 500). */
static void reply_text(struct gsd_req *r, int status, char *text)
{
    free(r->view); /* an answer set before (a failed commit's 503 replaces it) */
    r->view = NULL;
    r->status = status;
    r->ctype = "application/json";
    r->resp = text;
    if (!r->resp) {
        r->status = 500;
        r->resp = strdup("{\"error\":\"out of memory\",\"field\":\"\"}");
    }
    r->resp_len = r->resp ? strlen(r->resp) : 0;
}

void gsd_reply_json(struct gsd_req *r, int status, json_t *body)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    reply_text(r, status, text);
}

void gsd_reply_pod(struct gsd_state *st, struct gsd_req *r, int status, struct gsd_pod *p)
{
    if (p->state == GSD_PENDING)
        gsd_sched_sync(st, p);
    struct gsd_podview v;
    gsd_podview_fill(st, p, &v);
    struct gsd_podview *c = gsd_podview_dup(&v);
    if (!c) {
        reply_text(r, status, gsd_podview_dumps(&v));
        return;
    }
    free(r->view);
    r->view = c;
    r->status = status;
}

void gsd_reply_render(struct gsd_req *r)
{
    struct gsd_podview *v = r->view;
    if (!v)
        return;
    r->view = NULL;
    reply_text(r, r->status, gsd_podview_dumps(v));
    free(v);
}

void gsd_reply_warning(struct gsd_req *r, const char *text)
{
    if (!text[0] || r->warning)
        return;
    size_t n = strlen(text);
    char *v = malloc(n * 2 + 16), *o = v;
    if (!v)
        return; /* the answer goes without it */
    o += sprintf(o, "299 - \"");
    for (const char *c = text; *c; c++) { /* a quoted-string of printable ASCII (RFC 9110) */
        unsigned char b = (unsigned char)*c;
        if (b == '"' || b == '\\')
            *o++ = '\\';
        *o++ = b >= 0x20 && b < 0x7f ? (char)b : '?';
    }
    strcpy(o, "\"");
    r->warning = v;
    r->warning_hdr[0] = "Warning";
    r->warning_hdr[1] = v;
    r->warning_hdr[2] = NULL;
    r->headers = r->warning_hdr;
}

void gsd_reply_error(struct gsd_req *r, int status, const char *field, const char *fmt, ...)
{
    if (r->headers == r->warning_hdr) /* a warning of what was taken: nothing is now */
        r->headers = NULL;
    char raw[GS_DIAG_MSG_MAX], msg[GS_DIAG_MSG_MAX], at[GS_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    /* Either may quote the request's bytes, which need not be UTF-8: a JSON string must be. */
    gs_text_escape(msg, sizeof(msg), raw);
    gs_text_escape(at, sizeof(at), field);
    gsd_reply_json(r, status, json_pack("{s:s, s:s}", "error", msg, "field", at));
}

void gsd_reply_405(struct gsd_req *r, const char *allow, const char *more)
{
    char words[64]; /* "GET, DELETE" said "GET or DELETE" */
    const char *comma = strchr(allow, ',');
    snprintf(words, sizeof(words), "%.*s%s%s", comma ? (int)(comma - allow) : (int)strlen(allow),
             allow, comma ? " or" : "", comma ? comma + 1 : "");
    gsd_reply_error(r, 405, "", "%s: use %s%s", r->method, words, more ? more : "");
    r->allow = allow;
}

const char *gsd_qarg(const struct gsd_req *r, const char *key)
{
    for (int i = 0; i < r->nqargs; i++)
        if (strcmp(r->qargs[i].key, key) == 0)
            return r->qargs[i].val;
    return NULL;
}

int gsd_args_known(struct gsd_req *r, const char *const *known)
{
    for (int i = 0; i < r->nqargs; i++) {
        const char *const *k = known;
        while (*k && strcmp(*k, r->qargs[i].key))
            k++;
        if (!*k) {
            gsd_reply_error(r, 400, r->qargs[i].key, "%.31s: no such query argument of %s",
                            r->qargs[i].key, r->path);
            return 0;
        }
        if (gsd_qarg(r, r->qargs[i].key) != r->qargs[i].val) { /* only the first would count */
            gsd_reply_error(r, 400, r->qargs[i].key, "%.31s: given twice", r->qargs[i].key);
            return 0;
        }
    }
    return 1;
}

int gsd_args_fit(struct gsd_req *r)
{
    const char *k = r->qarg_cut_key;
    switch (r->qarg_too_long) {
    case 0:
        return 1;
    case GSD_CUT_VALUE:
        gsd_reply_error(r, 400, k, "%s: longer than %d bytes", k, GSD_QARG_LEN - 1);
        break;
    case GSD_CUT_KEY:
        gsd_reply_error(r, 400, k, "%s...: a query argument's name is longer than %zu bytes", k,
                        sizeof(r->qargs[0].key) - 1);
        break;
    case GSD_CUT_COUNT:
        gsd_reply_error(r, 400, k, "%s: more than %d query arguments", k, GSD_QARGS_MAX);
        break;
    default:
        gsd_reply_error(r, 400, "", "the path is longer than %zu bytes", sizeof(r->path) - 1);
    }
    return 0;
}

/* May @w act in namespace @ns? Writes 403 when not. */
static int may_use_ns(const struct gsd_state *st, const struct who *w, const char *ns,
                      struct gsd_req *r)
{
    return gsd_may_use_ns(st->cfg, w->admin ? NULL : w->tenant, ns, r);
}

int gsd_args_given(struct gsd_req *r, const char *const *keys)
{
    for (; *keys; keys++) {
        const char *v = gsd_qarg(r, *keys);
        if (v && !*v) {
            gsd_reply_error(r, 400, *keys, "%s: empty; leave the argument out for no filter",
                            *keys);
            return 0;
        }
    }
    return 1;
}

static int parse_count(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    /* digits only: strtoll() also takes leading blanks and a sign ("?limit=%201") */
    long long v = s && isdigit((unsigned char)*s) ? strtoll(s, &end, 10) : -1;
    if (!end || *end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* The page tokens' AES-128 key (a token made under another, or made up, decrypts to junk):
 * gsd_page_key()'s, else one drawn from getrandom() at first use. */
static struct aes128_ctx page_key, page_unkey; /* nettle's schedules, one each way */
static int page_key_ok, page_key_given;
static pthread_once_t page_key_once = PTHREAD_ONCE_INIT;

static void page_key_set(const uint8_t k[AES128_KEY_SIZE])
{
    aes128_set_encrypt_key(&page_key, k);
    aes128_set_decrypt_key(&page_unkey, k);
}

static void page_key_init(void)
{
    uint8_t k[AES128_KEY_SIZE];
    if (page_key_given)
        return;
    page_key_ok = getrandom(k, sizeof(k), 0) == (ssize_t)sizeof(k);
    page_key_set(k);
}

/* The key kept at @path: read, else drawn and written (0600, never through a link). Return: 0;
 * -errno. */
static int page_key_file(const char *path, uint8_t k[AES128_KEY_SIZE])
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, k, AES128_KEY_SIZE);
        close(fd);
        return n == AES128_KEY_SIZE ? 0 : -EINVAL;
    }
    if (errno != ENOENT)
        return -errno;
    if (getrandom(k, AES128_KEY_SIZE, 0) != AES128_KEY_SIZE)
        return -EIO;
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int ok = write(fd, k, AES128_KEY_SIZE) == AES128_KEY_SIZE && fsync(fd) == 0;
    close(fd);
    return ok ? 0 : -EIO;
}

void gsd_page_key(const char *data_dir)
{
    char path[4096];
    uint8_t k[AES128_KEY_SIZE];
    snprintf(path, sizeof(path), "%s/%s", data_dir, GSD_PAGE_KEY_FILE);
    int rc = page_key_file(path, k);
    if (rc) { /* a key drawn at first use: tokens do not outlive the run */
        gsd_log("warn", "page token key not kept: list tokens are valid until gpuschedd stops",
                "path", path, "error", strerror(-rc), NULL);
        return;
    }
    page_key_set(k);
    page_key_ok = page_key_given = 1;
}

/* A token's block: the list position, little-endian, then this tag, its last byte the list. */
static const uint8_t page_tag[7] = {'g', 's', 'd', 'p', 'a', 'g', 'e'};

void gsd_page_token(int64_t seq, enum gsd_page_list list, char out[GSD_PAGE_TOKEN_MAX])
{
    uint8_t b[AES_BLOCK_SIZE];
    pthread_once(&page_key_once, page_key_init);
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)((uint64_t)seq >> (8 * i));
    memcpy(b + 8, page_tag, sizeof(page_tag));
    b[15] = (uint8_t)list;
    aes128_encrypt(&page_key, sizeof(b), b, b);
    for (int i = 0; i < AES_BLOCK_SIZE; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* The position token @s gives in @list: 0 and *@seq; 400 (not a token's form, or another
 * list's) or 410 (not made under this key: another data dir's, or made up), as the API server
 * answers a malformed or an expired one. */
static int page_seq(const char *s, enum gsd_page_list list, int64_t *seq)
{
    uint8_t b[AES_BLOCK_SIZE];
    if (strlen(s) != 2 * AES_BLOCK_SIZE || strspn(s, "0123456789abcdef") != 2 * AES_BLOCK_SIZE)
        return 400;
    for (int i = 0; i < AES_BLOCK_SIZE; i++) {
        unsigned v;
        sscanf(s + 2 * i, "%2x", &v);
        b[i] = (uint8_t)v;
    }
    pthread_once(&page_key_once, page_key_init);
    aes128_decrypt(&page_unkey, sizeof(b), b, b);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)b[i] << (8 * i);
    if (!page_key_ok || memcmp(b + 8, page_tag, sizeof(page_tag)) || v > INT64_MAX ||
        (b[15] != GSD_PAGE_PODS && b[15] != GSD_PAGE_PODGROUPS))
        return 410;
    if (b[15] != list)
        return 400;
    *seq = (int64_t)v;
    return 0;
}

int gsd_page_args(struct gsd_req *r, enum gsd_page_list list, int64_t *limit, int64_t *from)
{
    *limit = 500;
    *from = 0;
    r->paged = 1;
    /* empty is not given, as the API server reads ?continue= of a last page's "" */
    if (gsd_qarg(r, "limit") && *gsd_qarg(r, "limit") &&
        parse_count(gsd_qarg(r, "limit"), 1, GSD_LIST_MAX, limit)) {
        gsd_reply_error(r, 400, "limit", "limit: expected a whole number in 1..%d", GSD_LIST_MAX);
        return -1;
    }
    const char *c = gsd_qarg(r, "continue");
    int bad = c && *c ? page_seq(c, list, from) : 0;
    if (bad) {
        gsd_reply_error(r, bad, "continue",
                        bad == 400
                            ? "continue: expected the value a previous page of this list "
                              "gave"
                            : "continue: not a value this gpuschedd gave (another's, or made up): "
                              "list again from the start");
        return -1;
    }
    return 0;
}

const char *gsd_ns_unowned(const struct gsd_state *st, const char *ns, char *buf, size_t cap)
{
    if (st->cfg->ntenants == 0 || gsd_tenant_of_ns(st->cfg, ns))
        return NULL;
    snprintf(buf, cap,
             "metadata.namespace: %.*s belongs to no tenant of the config, so its use could be "
             "neither counted against a quota nor billed",
             GSD_NAME_MAX, ns);
    return buf;
}

int gsd_ns_owned(struct gsd_state *st, const char *ns, struct gsd_req *r)
{
    char why[GS_DIAG_MSG_MAX];
    if (!gsd_ns_unowned(st, ns, why, sizeof(why)))
        return 1;
    gsd_reply_error(r, 400, "metadata.namespace", "%s", why);
    return 0;
}

const char *gsd_json_error(const json_error_t *e, const char *what, char *buf, size_t size)
{
    const char *near = strstr(e->text, "near '\""), *q = near ? strstr(near + 7, "\"'") : NULL;
    switch (json_error_code(e)) {
    case json_error_invalid_utf8:
        /* jansson stops before the bad byte: its position is the byte's offset */
        snprintf(buf, size,
                 "%s: not UTF-8 at byte offset %d (line %d, column %d); JSON text is UTF-8 "
                 "(RFC 8259 section 8.1)",
                 what, e->position, e->line, e->column + 1);
        break;
    case json_error_duplicate_key:
        snprintf(buf, size, "%s: key \"%.*s\" given twice in one object (line %d, column %d)", what,
                 q ? (int)(q - near - 7) : 0, q ? near + 7 : "", e->line, e->column);
        break;
    case json_error_numeric_overflow: /* valid JSON: "not JSON" would mislead */
        snprintf(buf, size,
                 "%s: the number at line %d column %d is too large (an integer must fit in 64 "
                 "bits, one with a fraction or an exponent in a double)",
                 what, e->line, e->column);
        break;
    case json_error_null_character: /* jansson's words name its own flag */
        snprintf(buf, size,
                 "%s: a NUL character (\\u0000) in a string at line %d column %d: Kubernetes "
                 "refuses it",
                 what, e->line, e->column);
        break;
    default:
        snprintf(buf, size, "%s: not JSON at line %d column %d: %s", what, e->line, e->column,
                 e->text);
    }
    return buf;
}

int gsd_body_json(struct gsd_req *r, json_t **out)
{
    json_error_t e;
    char msg[GS_DIAG_MSG_MAX];
    *out = json_loadb(r->body ? r->body : "", r->len, JSON_REJECT_DUPLICATES, &e);
    if (*out)
        return 0;
    gsd_reply_error(r, 400, "", "%s", gsd_json_error(&e, "body", msg, sizeof(msg)));
    return -1;
}

/* A pod of that name is held: the same spec resubmitted (an answer lost on the way) gets it
 * back, 200; anything else is a 409. */
static void post_again(struct gsd_state *st, struct gsd_req *r, struct gsd_pod *p,
                       const struct gsd_podspec *spec, const char *tenant)
{
    if (gsd_pod_same(p, spec, tenant))
        gsd_reply_json(r, 200, gsd_pod_json(st, p));
    else
        gsd_reply_error(r, 409, "metadata.name",
                        "a pod %s/%s with another spec is held (the same spec sent again returns "
                        "it; change the name, or cancel it first)",
                        p->spec.ns, p->spec.name);
}

void gsd_api_prepare(struct gsd_req *r)
{
    if (r->kind == GSD_REQ_HTTP && !r->pod && !strcmp(r->method, "POST") &&
        !strcmp(r->path, "/v1/pods"))
        r->pod = gsd_podparse_new(r->body, r->len);
}

/* @r's Pod, parsed by the event thread (its record then taken from @r) or here. */
static int pod_of(struct gsd_req *r, struct gsd_podspec *spec, struct gsd_ferr *e)
{
    struct gsd_podparse *pp = r->pod;
    if (!pp)
        return gsd_podspec_parse(r->body, r->len, 1, spec, e);
    int rc = pp->rc;
    *spec = pp->spec;
    *e = pp->e;
    free(pp);
    r->pod = NULL;
    return rc;
}

static void post_pod(struct gsd_state *st, struct gsd_req *r, const struct who *w)
{
    struct gsd_podspec spec;
    struct gsd_ferr e = {0};
    if (pod_of(r, &spec, &e)) {
        gsd_reply_error(r, e.status, e.field, "%s", e.msg);
        return;
    }
    if (!spec.ns[0] && w->admin) {
        gsd_reply_error(r, 400, "metadata.namespace",
                        "metadata.namespace: required with the admin token");
    } else if (!spec.ns[0] && gsd_podspec_set_ns(&spec, w->tenant->ns[0])) {
        gsd_reply_error(r, 500, "", "out of memory");
    } else if (may_use_ns(st, w, spec.ns, r) && gsd_ns_owned(st, spec.ns, r) &&
               gsd_queue_known(st, spec.s.queue,
                               "metadata.annotations.scheduling.volcano.sh/queue-name", r) &&
               gsd_priority_class_known(st, spec.s.priority_class, "spec.priorityClassName",
                                        w->admin, r)) {
        const struct gsd_tenant *owner = gsd_tenant_of_ns(st->cfg, spec.ns);
        const char *tenant = owner ? owner->name : "";
        struct gsd_pod *held = gsd_pod_find(st, spec.ns, spec.name);
        char warning[sizeof(e.warning)];
        memcpy(warning, e.warning, sizeof(warning));
        struct gsd_pod *p = held ? NULL : gsd_pod_add(st, &spec, tenant, GSD_SRC_API, -1, &e);
        if (held)
            post_again(st, r, held, &spec, tenant);
        else if (p)
            gsd_reply_pod(st, r, 201, p);
        else
            gsd_reply_error(r, e.status, e.field, "%s", e.msg);
        if (held || p) /* taken: what it asks without effect is said, as the API server does */
            gsd_reply_warning(r, warning);
    }
    gsd_podspec_clear(&spec);
}

/*
 * A pod kube-scheduler bound runs in Kubernetes, whatever gpuschedd's record says: freeing its
 * cards here would give them to another pod while it still runs on them (and stop its bill).
 * Where gpuschedd follows the API server, they are freed when it reports the pod gone: a DELETE
 * is a 409. Without following, only the admin (the operator, or a controller with its token)
 * may say the pod is gone: a tenant's DELETE is a 403. Return: 1 refused (answered), 0 not.
 */
static int bound_in_kube(const struct gsd_state *st, const struct who *w, const struct gsd_pod *p,
                         struct gsd_req *r)
{
    if (p->source != GSD_SRC_EXTENDER || p->nominated)
        return 0;
    if (st->cfg->kube && st->cfg->kube->sync_us > 0) {
        gsd_reply_error(r, 409, "",
                        "pod %s/%s was bound by kube-scheduler: delete it in Kubernetes; its "
                        "cards are freed when the API server reports it gone",
                        p->spec.ns, p->spec.name);
        return 1;
    }
    if (!w->admin) {
        gsd_reply_error(r, 403, "",
                        "pod %s/%s was bound by kube-scheduler and runs in Kubernetes: only the "
                        "admin may free its cards, once the pod is gone there",
                        p->spec.ns, p->spec.name);
        return 1;
    }
    return 0;
}

static void one_pod(struct gsd_state *st, struct gsd_req *r, const struct who *w, const char *rest)
{
    char ns[GSD_NAME_MAX], name[GSD_OBJ_MAX];
    int bad = gsd_pod_path(rest, ns, name);
    if (bad) {
        gsd_reply_error(r, 404, "", "%s", gsd_pod_path_why(bad));
        return;
    }
    if (!may_use_ns(st, w, ns, r))
        return;
    struct gsd_pod *p = gsd_pod_find(st, ns, name);
    if (!p) {
        gsd_reply_error(r, 404, "", "pod %s/%s " GSD_POD_GONE, ns, name);
        return;
    }
    if (strcmp(r->method, "DELETE")) { /* GET is a read (reads.c) */
        gsd_reply_405(r, "GET, DELETE", NULL);
        return;
    }
    if (bound_in_kube(st, w, p, r))
        return;
    if (gsd_pod_cancel(st, p)) {
        gsd_reply_error(r, 503, "", "the store failed");
        return;
    }
    gsd_reply_json(
        r, 200, json_pack("{s:s, s:s, s:s}", "namespace", ns, "name", name, "state", "cancelled"));
}

/* GET /v1/tenants[/NAME[/bill]], /v1/queues[/NAME], /v1/bills?tenant=NAME. */
static void accounts(struct gsd_state *st, struct gsd_req *r, const struct who *w, const char *rest)
{
    char name[GSD_NAME_MAX] = "";
    int queues = rest[0] == 'q', bill = rest[0] == 'b';
    const char *sub = strchr(rest, '/'), *tail = sub ? strchr(sub + 1, '/') : NULL;
    size_t len = sub ? (tail ? (size_t)(tail - sub - 1) : strlen(sub + 1)) : 0;
    if (strcmp(r->method, "GET")) {
        gsd_reply_405(r, "GET", NULL);
        return;
    }
    if ((sub && (!len || len >= sizeof(name))) || (tail && (queues || strcmp(tail, "/bill")))) {
        gsd_reply_error(r, 404, "", "no such endpoint: /v1/%.64s", rest);
        return;
    }
    if (sub) {
        memcpy(name, sub + 1, len);
        name[len] = '\0';
    }
    const char *of = gsd_qarg(r, "tenant");
    static const char *const filters[] = {"tenant", NULL};
    if (bill && !gsd_args_given(r, filters)) /* ?tenant= empty: answered */
        return;
    if (bill)
        gsd_bill_handle(st, r, w->tenant, of);
    else if (tail)
        gsd_bill_handle(st, r, w->tenant, name);
    else
        gsd_accounts_list(st, r, w->tenant, queues, sub ? name : NULL);
}

static void nodes(struct gsd_state *st, struct gsd_req *r, const struct who *w, const char *rest)
{
    const char *tail = rest ? strrchr(rest, '/') : NULL;
    if (w->admin && tail && (!strcmp(tail, "/register") || !strcmp(tail, "/pods"))) {
        gsd_agent_handle(st, r, rest, -2);
        return;
    }
    if (tail && (!strcmp(tail, "/register") || !strcmp(tail, "/pods"))) {
        gsd_reply_error(r, 403, "Authorization",
                        "%s /v1/nodes/NAME%s is for the node's own token or the admin's", r->method,
                        tail);
        return;
    }
    if (!strcmp(r->method, "POST") && rest) {
        gsd_node_post(st, r, rest);
        return;
    }
    int sub = rest && strchr(rest, '/'); /* heartbeat, gpus/I/health: POST; a node: GET */
    if (sub && !strcmp(r->method, "GET") && strcmp(tail, "/heartbeat") &&
        (strcmp(tail, "/health") || !strstr(rest, "/gpus/"))) {
        gsd_reply_error(r, 404, "", "no such endpoint: /v1/nodes/%.300s", rest);
        return;
    }
    if (strcmp(r->method, "GET") || sub) {
        gsd_reply_405(r, sub ? "POST" : "GET",
                      sub ? ": a node's heartbeat and card health are POSTed" : NULL);
        return;
    }
    int i = rest ? gs_cluster_find(st->cluster, rest) : -1;
    if (rest && i < 0) {
        gsd_reply_error(r, 404, "", "node %.64s not found", rest);
        return;
    }
    if (rest) {
        json_t *n = gsd_node_json(st, (size_t)i, 1, w->tenant ? w->tenant->name : 0);
        json_t *reg = w->admin ? gsd_agent_json(st, i) : NULL;
        json_t *warn = reg ? gsd_agent_warnings(st, (size_t)i) : NULL;
        if (n && reg) /* what its agent reported: the admin's to see */
            json_object_set_new(n, "agent", reg);
        else
            json_decref(reg);
        if (n && warn) /* and what of it the scheduler does not hold */
            json_object_set_new(n, "agent_warnings", warn);
        else
            json_decref(warn);
        gsd_reply_json(r, 200, n);
        return;
    }
    json_t *items = json_array();
    for (size_t k = 0; k < gs_cluster_node_count(st->cluster); k++)
        json_array_append_new(items, gsd_node_json(st, k, 0, NULL));
    gsd_reply_json(r, 200, json_pack("{s:o}", "items", items));
}

/*
 * Who is asking, as gsd_access_check() found before the body was read (it authenticated the
 * token, rate-limited tenants and kept each role to its routes), mapped onto the configuration in
 * force here. Return: 0 and *@w; -1 after writing 401 (a reload since removed the tenant).
 */
static int admit(struct gsd_state *st, struct gsd_req *r, struct who *w)
{
    w->admin = r->who == GSD_AUTH_ADMIN;
    w->node = r->who == GSD_AUTH_NODE;
    w->tenant = r->who >= 0 ? (struct gsd_tenant *)gsd_tenant_named(st->cfg, r->tenant) : NULL;
    /* a node's own token, still that node's (it may have registered again meanwhile) */
    w->self =
        r->who == GSD_AUTH_AGENT && gsd_agent_auth(st, r->token_sha) == r->agent ? r->agent : -1;
    if (w->admin || w->node || w->tenant || w->self >= 0)
        return 0;
    gsd_reply_error(r, 401, "Authorization", "the bearer token is not valid");
    return -1;
}

static void v1(struct gsd_state *st, struct gsd_req *r, const char *rest)
{
    struct who w;
    if (admit(st, r, &w))
        return;
    /* access.c kept node tokens to /v1/nodes/ and POSTs there to node, agent and admin tokens */
    if ((w.node || w.self >= 0) && !strncmp(rest, "nodes/", 6)) {
        gsd_agent_handle(st, r, rest + 6, w.self >= 0 ? w.self : -1);
        return;
    }
    if (!strcmp(rest, "clock")) {
        if (!w.admin)
            gsd_reply_error(r, 403, "Authorization", "POST /v1/clock needs the admin token");
        else if (strcmp(r->method, "POST"))
            gsd_reply_405(r, "POST", NULL);
        else
            gsd_node_post(st, r, NULL);
    } else if (!strcmp(rest, "pods")) {
        if (!strcmp(r->method, "POST")) /* GET is a read (reads.c) */
            post_pod(st, r, &w);
        else
            gsd_reply_405(r, "GET, POST", NULL);
    } else if (!strncmp(rest, "pods/", 5)) {
        one_pod(st, r, &w, rest + 5);
    } else if (!strcmp(rest, "snapshot")) {
        if (strcmp(r->method, "GET"))
            gsd_reply_405(r, "GET", NULL);
        else if (!w.admin)
            gsd_reply_error(r, 403, "Authorization", "GET /v1/snapshot needs the admin token");
        else
            gsd_whatif_snapshot(st, r);
    } else if (!strcmp(rest, "status")) {
        gsd_reply_405(r, "GET", NULL); /* GET is a read (reads.c) */
    } else if (!strcmp(rest, "nodes")) {
        nodes(st, r, &w, NULL);
    } else if (!strncmp(rest, "nodes/", 6)) {
        nodes(st, r, &w, rest + 6);
    } else if (!strncmp(rest, "podgroups", 9)) {
        gsd_podgroups_handle(st, r, w.tenant, rest + 9);
    } else if (!strcmp(rest, "tenants") || !strncmp(rest, "tenants/", 8) ||
               !strcmp(rest, "queues") || !strncmp(rest, "queues/", 7) || !strcmp(rest, "bills")) {
        accounts(st, r, &w, rest);
    } else {
        gsd_reply_error(r, 404, "", "no such endpoint: /v1/%.64s", rest);
    }
}

void gsd_api_handle(struct gsd_state *st, struct gsd_req *r)
{
    if (!gsd_args_fit(r))
        return;
    static const char *const bill_args[] = {"tenant", NULL}, *const no_args[] = {NULL},
                             *const page_args[] = {"limit", "continue", NULL};
    int groups = !strcmp(r->path, "/v1/podgroups") && !strcmp(r->method, "GET");
    if (!gsd_args_known(r, groups ? page_args : strcmp(r->path, "/v1/bills") ? no_args : bill_args))
        return; /* ?dryRun=All on a POST would otherwise create the pod, as if honoured */
    if (!strncmp(r->path, "/v1/", 4)) {
        v1(st, r, r->path + 4);
    } else if (!strcmp(r->path, "/metrics")) {
        gsd_reply_405(r, "GET", NULL); /* GET is a read (reads.c) */
    } else if (!strncmp(r->path, "/extender/", 10)) {
        if (strcmp(r->method, "POST"))
            gsd_reply_405(r, "POST", ": extender verbs take POST");
        else
            gsd_extender_handle(st, r, r->path + 10);
    } else {
        gsd_reply_error(r, 404, "", "no such endpoint: %.64s", r->path);
    }
}
