/*
 * gpusched-agent: the node side of gpusched, one per GPU node. It discovers the machine
 * (discover.h), registers it with gpuschedd and heartbeats, reports cards that NVML's Xid events
 * say are bad, creates the MIG instances gpuschedd placed pods on, serves kubelet's device plugin
 * API (plugin.h) so each container gets exactly the cards, instance or share its pod was bound to,
 * writes a CDI spec and weighs pods' CPU by tenant in kubelet's pod cgroups (isolate.h).
 *
 * Exit status: 0 stopped by SIGTERM/SIGINT (or --discover printed the tree); 1 a failure at
 * start (no GPU found, gpuschedd refused the registration); 2 bad usage.
 */
#include "discover.h"
#include "isolate.h"
#include "nvml.h"
#include "plan.h"
#include "plugin.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/httpurl.h"
#include "gpusched/mig.h"
#include "gpusched/policy.h"
#include "gpusched/topo.h"
#include "gpusched/topotext.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RESP_MAX ((size_t)64 << 20) /* a node's pod list answer */
/* The integer flags' ranges. A heartbeat must come well within gpuschedd's grace before NotReady
 * (nodeMonitorGracePeriodSeconds, 40 by default: GSD_NODE_GRACE_DEFAULT_US): at half of it, one
 * late or lost beat (a request may take its 10 s timeout) still leaves the node Ready. */
#define AGENT_BEAT_MAX_S  20
#define AGENT_SYNC_MAX_MS 86400000

/* The defaults, which usage() shows and parse() sets. */
#define AGENT_SERVER      "http://127.0.0.1:8080"
#define AGENT_STATE_DIR   "/var/lib/gpusched-agent"
#define AGENT_PLUGIN_DIR  "/var/lib/kubelet/device-plugins"
#define AGENT_PODRES      "/var/lib/kubelet/pod-resources/kubelet.sock"
#define AGENT_CDI_DIR     "/var/run/cdi"
#define AGENT_CGROUP_ROOT "/sys/fs/cgroup"
#define AGENT_POD_DIR     "/var/lib/gpusched/pods"
#define AGENT_MPS_PIPE    "/tmp/nvidia-mps"
#define AGENT_REPLICAS    10
#define AGENT_BEAT_S      10
#define AGENT_SYNC_MS     2000

struct opts {
    const char *server, *node, *bootstrap_file, *state_dir, *plugin_dir, *cdi_dir;
    const char *cgroup_root, *shim, *mps_pipe, *ca_file, *podres, *pod_dir;
    struct gs_plan_ctx ctx; /* --context-mib, when has_ctx */
    int has_ctx;
    struct gs_discover_opts disc;
    int replicas, beat_s, sync_ms, dry_run, discover_only, no_plugin;
    enum gs_topo_format fmt;
    char boot[GS_NODE_TOKEN_MAX +
              1]; /* the bootstrap token file's line, checked at start; "" when not given */
};

/* A request the agent repeats (a heartbeat, the read of the bound pods): its last failure, said
 * once until it changes (report()). */
struct said {
    long code;       /* http()'s return for it; 0 while the request works */
    char text[1024]; /* the message said */
};

struct agent {
    struct opts o;
    char token[128]; /* written by the main thread only, under the lock */
    struct gs_topo *topo;
    struct gs_nvml *nvml;
    struct gs_plan *plan;
    pthread_mutex_t lock;
    uint32_t unhealthy;
    uint32_t unhealthy_sent; /* as ListAndWatch streams last sent it */
    struct gs_plugin *plugin;
    char plan_state[512];
    struct said beat_said, pods_said;
    /* gpuschedd answered 401 to the node's token: nothing is sent until a new one (the Xid
     * thread reads it too) */
    atomic_int refused;
    /* under the lock: cards whose Xid is not reported yet (the token was refused), and each
     * card's last Xid */
    uint32_t xid_unsent;
    unsigned long long xid_of[32];
    int64_t xid_retry_ms; /* under the lock: no resend before (gpuschedd was not reached) */
    int xid_quiet;        /* under the lock: the Xid thread waited once with none pending */
    int health_read;      /* health_start() ran */
};

static volatile sig_atomic_t stopping;
static volatile int stop_threads;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One message on stderr, escaped as every message is (gs_text_escape()): names, paths and
 * gpuschedd's answers are not the agent's, and must not drive the terminal or forge a line. */
static void say(const char *fmt, ...)
{
    char raw[4096], out[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    gs_text_escape(out, sizeof(out), raw);
    fprintf(stderr, "gpusched-agent: %s\n", out);
}

/* The log discovery and the device plugin write to: each of their lines is said as the agent's
 * own (say()), named and escaped. stdio's lock on the stream serialises the threads' lines. */
static ssize_t log_write(void *cookie, const char *buf, size_t n)
{
    static char line[4000];
    static size_t len;
    (void)cookie;
    for (size_t i = 0; i < n; i++) {
        if (buf[i] != '\n' && len < sizeof(line) - 1) {
            line[len++] = buf[i];
            continue;
        }
        line[len] = '\0';
        say("%s", line);
        len = 0;
        if (buf[i] != '\n')
            line[len++] = buf[i];
    }
    return (ssize_t)n;
}

static FILE *open_log(void)
{
    cookie_io_functions_t io = {.write = log_write};
    FILE *f = fopencookie(NULL, "w", io);
    if (!f)
        return stderr;
    setvbuf(f, NULL, _IOLBF, 0);
    return f;
}

/* ---- gpuschedd over HTTP ---- */

struct body {
    char *p;
    size_t n;
    int over;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct body *b = ud;
    size_t k = size * nmemb;
    if (b->n + k > RESP_MAX) {
        b->over = 1;
        return 0;
    }
    char *q = realloc(b->p, b->n + k + 1);
    if (!q)
        return 0;
    memcpy(q + b->n, ptr, k);
    b->p = q;
    b->n += k;
    b->p[b->n] = '\0';
    return k;
}

/* One request to gpuschedd: @method to @path (under --server) with bearer @token and the JSON
 * @json (NULL: no body). Return: the HTTP status; -(the CURLcode) when gpuschedd did not answer
 * (refused, TLS, timed out). *@out (NULL: not wanted): the body to free(), or curl's reason
 * where there is no answer; NULL when neither. */
static long http(const struct agent *a, const char *method, const char *path, const char *token,
                 const char *json, char **out)
{
    _Static_assert(GS_HTTP_URL_MAX + 300 < 1024, "a request's URL: --server and a path");
    char url[1024], auth[200], why[CURL_ERROR_SIZE] = "";
    struct body b = {NULL, 0, 0};
    long status = 0;
    CURL *c = curl_easy_init();
    struct curl_slist *h = NULL;
    snprintf(url, sizeof(url), "%s%s", a->o.server, path);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    h = curl_slist_append(h, auth);
    h = curl_slist_append(h, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    if (a->o.ca_file)
        curl_easy_setopt(c, CURLOPT_CAINFO, a->o.ca_file);
    if (json)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, json);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, why);
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    else
        status = -(long)rc;
    /* no answer: say why (refused, TLS, timed out) instead of a body */
    if (rc != CURLE_OK && out) {
        free(b.p);
        b.p = strdup(why[0] ? why : curl_easy_strerror(rc));
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (out)
        *out = b.p;
    else
        free(b.p);
    return status;
}

/* The first line of file @path, without its line break, into @buf (@n bytes). Return: 0; -EINVAL
 * when it is empty; -errno when it cannot be read (-ENOENT: no such file, -EISDIR: a folder). */
static int read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -errno;
    buf[0] = '\0';
    char *r = fgets(buf, (int)n, f);
    int err = !r && ferror(f) ? errno : 0; /* a folder opens, but its read fails (EISDIR) */
    fclose(f);
    if (err)
        return -err;
    buf[strcspn(buf, "\r\n")] = '\0';
    return r && buf[0] ? 0 : -EINVAL;
}

/* Is @tok (NULL: none) a token the agent can send and keep: a bearer token that fits? */
static int token_ok(const char *tok)
{
    return tok && strlen(tok) < sizeof(((struct agent *)0)->token) &&
           gs_bearer_token_ok(tok, strlen(tok));
}

/* gpuschedd's reason for refusing a request: the "error" string of its JSON answer @resp (NULL:
 * none), into @buf (@n bytes). The body itself is never said, as an answer may carry a token (a
 * registration's does); nor is a reason that quotes the node's or the bootstrap token.
 * Return: @buf. */
static const char *server_reason(const struct agent *a, const char *resp, char *buf, size_t n)
{
    json_t *j = resp ? json_loads(resp, 0, NULL) : NULL;
    const char *e = json_string_value(json_object_get(j, "error"));
    if (!e)
        snprintf(buf, n, "no reason given (the answer holds no JSON \"error\")");
    else if ((a->token[0] && strstr(e, a->token)) || (a->o.boot[0] && strstr(e, a->o.boot)))
        snprintf(buf, n, "a reason that quotes a token, not shown");
    else
        snprintf(buf, n, "%s", e);
    json_decref(j);
    return buf;
}

/* The registration's body: the GPU count, the catalog model where discovery names one, and the
 * topology tree (gpusched topo --json's form). Return: a JSON text to free(); NULL without
 * memory. */
static char *reg_body(const struct agent *a)
{
    int model = a->topo->ngpus ? gs_catalog_find_product(a->topo->gpu[0].name) : -1;
    json_t *topo = NULL;
    char *tree = NULL;
    size_t tn = 0;
    FILE *mem = open_memstream(&tree, &tn);
    if (mem) {
        gs_topo_write(mem, a->topo, GS_TOPO_JSON, a->o.node, NULL, NULL);
        fclose(mem);
        topo = json_loads(tree ? tree : "{}", 0, NULL);
        free(tree);
    }
    json_t *reg =
        json_pack("{s:i, s:o}", "gpus", a->topo->ngpus, "topology", topo ? topo : json_object());
    if (reg && model >= 0)
        json_object_set_new(reg, "gpuModel", json_string(gs_catalog_at(model)->name));
    char *body = reg ? json_dumps(reg, JSON_COMPACT) : NULL;
    json_decref(reg);
    return body;
}

/* Keeps the node's token @tok in file @path (mode 0600), on disk before it returns: gpuschedd
 * issues it once. A file left half written is removed, since the next start would send it.
 * Return: 0; -errno. */
static int keep_token(const char *path, const char *tok)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return -e;
    }
    int e = fprintf(f, "%s\n", tok) < 0 || fflush(f) || fsync(fd) ? errno : 0;
    if (fclose(f) && !e)
        e = errno;
    if (e)
        unlink(path);
    return -e;
}

/* A registration of the node gpuschedd did not take: @st, http()'s return (< 0: no answer), and
 * @resp, its body (curl's reason without an answer; NULL: none), which is freed. Said with the
 * reason only, never the body. Return: -1. */
static int register_failed(const struct agent *a, long st, char *resp)
{
    char why[512];
    if (st < 0)
        say("cannot reach gpuschedd at %s to register node %s: %s", a->o.server, a->o.node,
            resp ? resp : "no answer");
    else
        say("gpuschedd refused to register node %s (HTTP %ld): %s", a->o.node, st,
            server_reason(a, resp, why, sizeof(why)));
    free(resp);
    return -1;
}

/* The first registration, with the bootstrap token, of the JSON @body at @url: gpuschedd answers
 * 201 Created with the node's token, which is kept in file @path. Return: 0; -1 after saying why
 * (never the token: a node registered but whose token is lost needs an admin). */
static int register_first(struct agent *a, const char *url, const char *body, const char *path)
{
    char *resp = NULL;
    long st = http(a, "POST", url, a->o.boot, body, &resp);
    if (st < 200 || st >= 300)
        return register_failed(a, st, resp);
    json_t *j = json_loads(resp, 0, NULL);
    free(resp);
    const char *tok = json_string_value(json_object_get(j, "token"));
    /* a registration by bootstrap token makes a node token (201 Created): any other success
     * without one would leave the agent sending nothing */
    if (st != 201 || !token_ok(tok)) {
        say("gpuschedd's answer to registering node %s (HTTP %ld) holds no valid \"token\" "
            "(a bearer token, 1..%zu letters, digits and -._~+/, with 201 Created)",
            a->o.node, st, sizeof(a->token) - 1);
        json_decref(j);
        return -1;
    }
    memcpy(a->token, tok, strlen(tok) + 1);
    json_decref(j);
    int rc = keep_token(path, a->token);
    if (rc)
        say("node %s registered, but the token could not be kept in %s: %s; an admin must "
            "register the node again and put its new token in %s",
            a->o.node, a->o.state_dir, strerror(-rc), path);
    return rc ? -1 : 0;
}

/*
 * The node's own token: from the state folder, else by registering with the bootstrap token (the
 * token is then kept there, mode 0600). With a token, the registration is sent again with it, so
 * gpuschedd sees the inventory of this start. A token file that is there but cannot be read is
 * said before anything is sent. Return: 0; -1 after saying why.
 */
static int register_node(struct agent *a)
{
    char path[600], url[300];
    snprintf(path, sizeof(path), "%s/token", a->o.state_dir);
    snprintf(url, sizeof(url), "/v1/nodes/%s/register", a->o.node);
    int rc = read_line(path, a->token, sizeof(a->token));
    if (rc && rc != -ENOENT && rc != -EINVAL) { /* empty (-EINVAL) or missing: none yet */
        say("%s: %s", path, strerror(-rc));
        return -1;
    }
    if (!rc && !token_ok(a->token)) {
        say("%s: not a node token (a bearer token, 1..%zu letters, digits and -._~+/); remove "
            "it to register again with the bootstrap token",
            path, sizeof(a->token) - 1);
        return -1;
    }
    if (rc && !a->o.boot[0]) {
        say("no token in %s and no bootstrap token (--bootstrap-token-file)", path);
        return -1;
    }
    if (rc)
        a->token[0] = '\0';
    char *body = reg_body(a), *resp = NULL;
    if (!body) {
        say("registering node %s: out of memory", a->o.node);
        return -1;
    }
    if (rc) {
        rc = register_first(a, url, body, path);
    } else {
        long st = http(a, "POST", url, a->token, body, &resp);
        rc = st == 200 || st == 201 ? 0 : register_failed(a, st, resp);
        if (!rc)
            free(resp);
    }
    free(body);
    if (!rc)
        say("node %s registered with %s: %d GPUs", a->o.node, a->o.server, a->topo->ngpus);
    return rc;
}

/* ---- MIG: the instances gpuschedd placed pods on ---- */

struct want {
    int card, profile, start; /* profile: index in the card's MIG model */
};

/* The MIG model of card @g (gpusched/mig.h), or NULL when it has none. */
static const struct gs_mig_model *mig_model(const struct agent *a, int g)
{
    int cm = gs_catalog_find_product(a->topo->gpu[g].name);
    int mm = cm >= 0 ? gs_mig_model_find(gs_catalog_at(cm)->name) : -1;
    return mm >= 0 ? gs_mig_model_at(mm) : NULL;
}

/*
 * Card @g's MIG mode as its bound pods need it: on for a MIG pod, off for a whole or shared one
 * once no instance is left; changed only while the card runs nothing.
 */
static void mig_mode(struct agent *a, int g, int want_mig, int want_whole, int *changed)
{
    struct gs_diag d;
    FILE *dry = a->o.dry_run ? stdout : NULL;
    int on = a->topo->gpu[g].mig_mode == 1;
    if (a->topo->gpu[g].mig_mode < 0 ||
        (want_mig ? on : !on || !want_whole || a->topo->gpu[g].nmig > 0))
        return;
    gs_diag_init(&d);
    if (gs_nvml_busy(a->nvml, g, &d) != 0) {
        say("GPU %d runs work: its MIG mode changes once it is idle", g);
        return;
    }
    if (gs_nvml_mig_mode(a->nvml, g, want_mig, dry, &d))
        say("GPU %d: %s", g, d.msg);
    else if (!dry) {
        a->topo->gpu[g].mig_mode = want_mig;
        *changed = 1;
    }
}

/* Card @g's instances as its bound MIG pods need them: @w[@nw] wanted (card, profile, start). */
static void mig_instances(struct agent *a, int g, const int (*w)[3], int nw, int *changed)
{
    struct gs_nvml_gi have[GS_TOPO_MIG_MAX];
    struct gs_diag d;
    FILE *dry = a->o.dry_run ? stdout : NULL;
    const struct gs_mig_model *m = mig_model(a, g);
    gs_diag_init(&d);
    int nh = m && a->topo->gpu[g].mig_mode == 1 ? gs_nvml_mig_list(a->nvml, g, have, 7, &d) : 0;
    if (nh < 0)
        say("GPU %d: %s", g, d.msg);
    for (int k = 0; k < nh; k++) { /* gone: no bound pod holds it; only once it runs nothing */
        int kept = 0;
        for (int i = 0; i < nw && !kept; i++)
            kept = w[i][0] == g && w[i][2] == (int)have[k].start &&
                   m->profiles[w[i][1]].id == have[k].profile_id;
        if (kept)
            continue;
        int rc = gs_nvml_mig_destroy(a->nvml, g, (int)have[k].start, dry, &d);
        if (rc == -EBUSY)
            say("GPU %d: the MIG instance at slice %u runs work no bound pod holds; it is "
                "destroyed "
                "once idle",
                g, have[k].start);
        else if (rc)
            say("GPU %d: %s", g, d.msg);
        else
            *changed |= !dry;
    }
    for (int i = 0; m && nh >= 0 && i < nw; i++) { /* new: in free slices, disturbing no work */
        const struct gs_mig_profile *pr = &m->profiles[w[i][1]];
        int there = w[i][0] != g;
        for (int k = 0; k < nh && !there; k++)
            there = (int)have[k].start == w[i][2] && have[k].profile_id == pr->id;
        if (there)
            continue;
        int np = gs_nvml_profile_of(pr->compute_slices, pr->memory_slices, m->memory_slices,
                                    strstr(pr->name, "+me") != NULL);
        if (np < 0 || gs_nvml_mig_create(a->nvml, g, np, w[i][2], pr->memory_slices, dry, &d))
            say("GPU %d: MIG %s at slice %d: %s", g, pr->name, w[i][2],
                np < 0 ? "no NVML profile" : d.msg);
        else
            *changed |= !dry;
    }
}

/* Makes the cards' MIG modes and instances match the bound pods. Under the lock. */
static void mig_sync(struct agent *a, int *changed)
{
    int w[GS_PLAN_PODS_MAX][3], nw = 0;
    uint32_t want_mig = 0, want_whole = 0;
    *changed = 0;
    if (!a->nvml)
        return;
    for (int i = 0; i < a->plan->npods; i++) {
        const struct gs_plan_pod *p = &a->plan->pods[i];
        if (!p->mig[0]) {
            want_whole |= p->cards;
            continue;
        }
        int card = __builtin_ctz(p->cards);
        const struct gs_mig_model *m = mig_model(a, card);
        int prof = -1;
        for (int k = 0; m && k < m->nprofiles && prof < 0; k++)
            prof = strcmp(m->profiles[k].name, p->mig) ? -1 : k;
        if (prof < 0) {
            say("pod %s/%s: card %d has no MIG profile %s", p->ns, p->name, card, p->mig);
            continue;
        }
        want_mig |= 1u << card;
        w[nw][0] = card;
        w[nw][1] = prof;
        w[nw++][2] = p->mig_start;
    }
    for (int g = 0; g < a->topo->ngpus; g++) {
        if (want_mig >> g & 1u)
            mig_mode(a, g, 1, 0, changed);
        mig_instances(a, g, (const int(*)[3])w, nw, changed);
        if (!(want_mig >> g & 1u))
            mig_mode(a, g, 0, want_whole >> g & 1u, changed);
    }
}

/* ---- the loops ---- */

/* A failed request to gpuschedd, into @buf (@n bytes): @st, http()'s return, and @resp, its body
 * (curl's reason where there is no answer; NULL: none). A 401 says what to do: the node's token
 * is refused once an admin registers the node again (which issues a new one) or gpuschedd lost
 * it. Return: @buf. */
static const char *failure(const struct agent *a, long st, const char *resp, char *buf, size_t n)
{
    char why[400]; /* with the 401's advice and a --state-dir, within a struct said's text */
    if (st < 0) {
        snprintf(buf, n, "unreachable: %s", resp ? resp : "no answer");
        return buf;
    }
    server_reason(a, resp, why, sizeof(why));
    if (st != 401)
        snprintf(buf, n, "HTTP %ld: %s", st, why);
    else
        snprintf(buf, n,
                 "HTTP 401: %s: gpuschedd refuses the node's token (an admin registered the node "
                 "again, or gpuschedd lost it): put the node's new token in %s/token (the agent "
                 "sends nothing until then), or remove that file and restart the agent to "
                 "register with the bootstrap token",
                 why, a->o.state_dir);
    return buf;
}

/* May the agent send with its token? Not after a 401 (each refusal counts towards gpuschedd's
 * lockout of the node's address, http.authFailuresPerMinute) until --state-dir/token holds
 * another token: an admin who registered the node again puts the new one there, and the agent
 * goes on with it. Return: 1 it may; 0 it waits. */
static int token_usable(struct agent *a)
{
    char path[600], tok[sizeof(a->token)];
    if (!a->refused)
        return 1;
    snprintf(path, sizeof(path), "%s/token", a->o.state_dir);
    if (read_line(path, tok, sizeof(tok)) || !token_ok(tok) || !strcmp(tok, a->token))
        return 0;
    pthread_mutex_lock(&a->lock); /* the Xid thread copies it under the lock */
    memcpy(a->token, tok, sizeof(tok));
    pthread_mutex_unlock(&a->lock);
    a->refused = 0;
    say("took the node's new token from %s", path);
    return 1;
}

/*
 * The outcome of a request the agent repeats, @what (a heartbeat, the read of the bound pods):
 * @msg, why it failed (NULL: it worked), with @code, http()'s return. Said once until it changes,
 * as every sync would say it again: an unreachable gpuschedd is one failure whatever curl's words
 * (they carry elapsed times), an answer one per status and reason; the first success after a
 * failure is said once too. After a 401 the agent waits for a new token (token_usable()).
 */
static void report(struct agent *a, struct said *s, const char *what, long code, const char *msg)
{
    a->refused |= code == 401;
    if (!msg) {
        if (s->code)
            say("%s: works again", what);
        s->code = 0;
        return;
    }
    if (s->code == code && (code < 0 || !strcmp(s->text, msg)))
        return;
    say("%s: %s", what, msg);
    s->code = code;
    snprintf(s->text, sizeof(s->text), "%s", msg);
}

/*
 * The device plugin, registered with kubelet once its socket is there. Tried at every sync: what
 * stands in the way (the socket missing, kubelet not answering) is said once, and again only when
 * it changes, so a node without kubelet does not fill the log.
 */
static void plugin_start(struct agent *a)
{
    static char said[GS_DIAG_MSG_MAX + 400];
    char now[sizeof(said)], sock[300];
    struct gs_diag d;
    struct stat st;
    gs_diag_init(&d);
    snprintf(sock, sizeof(sock), "%s/" GS_PLUGIN_KUBELET, a->o.plugin_dir);
    if (stat(sock, &st) != 0)
        snprintf(now, sizeof(now),
                 "device plugin: kubelet's socket %s is missing (%s): is kubelet running, with "
                 "this --device-plugin-dir? Registering once it is there",
                 sock, strerror(errno));
    else if (gs_plugin_start(a->plan, &a->lock, &a->unhealthy, a->o.plugin_dir, a->plan_state,
                             a->o.podres, 2000, a->o.disc.log, &a->plugin, &d))
        snprintf(now, sizeof(now), "device plugin: kubelet at %s: %s (trying again)", sock, d.msg);
    else
        now[0] = '\0'; /* registered, as the plugin says */
    if (now[0] && strcmp(now, said) != 0)
        say("%s", now);
    memcpy(said, now, strlen(now) + 1);
}

/* Pods bound to this node now, once its token is usable; the plan, MIG, cgroups and the device
 * plugin follow. A failed read is said as report() says it. */
static void sync_pods(struct agent *a)
{
    static struct gs_plan_pod pods[GS_PLAN_PODS_MAX];
    char url[300], *resp = NULL;
    struct gs_diag d;
    gs_diag_init(&d);
    if (!token_usable(a))
        return;
    snprintf(url, sizeof(url), "/v1/nodes/%s/pods", a->o.node);
    long st = http(a, "GET", url, a->token, NULL, &resp);
    int n = st == 200 && resp ? gs_plan_pods_json(resp, pods, GS_PLAN_PODS_MAX, &d) : -1;
    char what[400], why[sizeof(a->pods_said.text)];
    snprintf(what, sizeof(what), "reading the pods bound to %s", a->o.node);
    if (n < 0 && st == 200)
        snprintf(why, sizeof(why), "%s", d.msg[0] ? d.msg : "no answer");
    else if (n < 0)
        failure(a, st, resp, why, sizeof(why));
    free(resp);
    report(a, &a->pods_said, what, st, n < 0 ? why : NULL);
    if (n < 0)
        return;
    int changed = 0;
    pthread_mutex_lock(&a->lock);
    static char plan_said[GS_DIAG_MSG_MAX]; /* a pod left out is said once, not at each sync */
    const char *left_out = gs_plan_set_pods(a->plan, pods, n, &d) ? d.msg : "";
    if (left_out[0] && strcmp(left_out, plan_said))
        say("%s", left_out);
    snprintf(plan_said, sizeof(plan_said), "%s", left_out);
    mig_sync(a, &changed);
    if (changed) { /* the instances' UUIDs, for the device plugin and CDI */
        struct gs_topo *t = malloc(sizeof(*t));
        if (t && gs_nvml_discover(a->nvml, a->o.disc.sysfs, t, &d) == 0)
            memcpy(a->topo, t, sizeof(*t));
        free(t);
        if (a->o.cdi_dir && gs_cdi_write(a->topo, a->o.cdi_dir, &d))
            say("%s", d.msg);
    }
    if (a->o.cgroup_root && gs_cgroup_apply(a->plan, a->o.cgroup_root, &d))
        say("%s", d.msg);
    if (a->o.shim && gs_pod_regions_sync(a->plan, a->o.pod_dir, &d))
        say("%s", d.msg);
    if (a->plan_state[0] && gs_plan_save(a->plan, a->plan_state, &d))
        say("%s", d.msg);
    int stale = a->plugin && gs_plugin_stale(a->plugin);
    /* the device lists change only with a card's health or its MIG instances */
    int resend = changed || a->unhealthy != a->unhealthy_sent;
    a->unhealthy_sent = a->unhealthy;
    pthread_mutex_unlock(&a->lock);
    if (!a->o.no_plugin && (stale || !a->plugin)) {
        gs_plugin_stop(a->plugin);
        a->plugin = NULL;
        plugin_start(a);
    } else if (resend) {
        gs_plugin_changed(a->plugin);
    }
}

/* A heartbeat, once the node's token is usable; its failure said as report() says it. */
static void beat(struct agent *a)
{
    char url[300], *resp = NULL, why[sizeof(a->beat_said.text)];
    if (!token_usable(a))
        return;
    snprintf(url, sizeof(url), "/v1/nodes/%s/heartbeat", a->o.node);
    long st = http(a, "POST", url, a->token, "{}", &resp);
    if (st != 200)
        failure(a, st, resp, why, sizeof(why));
    free(resp);
    report(a, &a->beat_said, "heartbeat", st, st == 200 ? NULL : why);
}

/*
 * At start, as NVIDIA's k8s-device-plugin starts with every device healthy: each card gpuschedd
 * holds unhealthy (GET /v1/nodes/NAME, its unhealthy_gpus) that has had no Xid since this start
 * is reported healthy, once, so that a card that recovered or was replaced takes pods again. Run
 * once the Xid thread has taken the events pending at start (xid_quiet), and only then: not
 * where the agent watches no Xid events. The lock is held from the check to the report, so that
 * an Xid the thread takes meanwhile is sent after it. A failure is said once; the agent goes on.
 */
static void health_start(struct agent *a)
{
    char url[300], *resp = NULL, why[sizeof(a->beat_said.text)];
    snprintf(url, sizeof(url), "/v1/nodes/%s", a->o.node);
    long st = http(a, "GET", url, a->token, NULL, &resp);
    json_t *j = st == 200 && resp ? json_loads(resp, 0, NULL) : NULL;
    json_t *bad = json_object_get(j, "unhealthy_gpus");
    if (!json_is_array(bad)) {
        if (st == 200)
            snprintf(why, sizeof(why), "the answer holds no unhealthy_gpus list");
        else
            failure(a, st, resp, why, sizeof(why));
        say("reading the cards' health from gpuschedd: %s; the cards it holds unhealthy stay so",
            why);
        a->refused |= st == 401;
        json_decref(j);
        free(resp);
        return;
    }
    free(resp);
    size_t k;
    json_t *v;
    json_array_foreach(bad, k, v)
    {
        json_int_t g = json_integer_value(v);
        if (!json_is_integer(v) || g < 0 || g >= a->topo->ngpus || g >= 32)
            continue;
        snprintf(url, sizeof(url), "/v1/nodes/%s/gpus/%d/health", a->o.node, (int)g);
        pthread_mutex_lock(&a->lock);
        if (a->unhealthy & (1u << g)) { /* an Xid since this start: it stays unhealthy */
            pthread_mutex_unlock(&a->lock);
            continue;
        }
        resp = NULL;
        st = http(a, "POST", url, a->token, "{\"healthy\": true}", &resp);
        if (st == 200)
            say("GPU %d: no Xid since the agent started: reported healthy (gpuschedd held it "
                "unhealthy)",
                (int)g);
        else
            say("GPU %d: gpuschedd did not take the health report: %s", (int)g,
                failure(a, st, resp, why, sizeof(why)));
        a->refused |= st == 401;
        pthread_mutex_unlock(&a->lock);
        free(resp);
    }
    json_decref(j);
}

static int64_t now_ms(void);

/* Report card @gpu unhealthy for Xid @xid with @token. Return: 1 taken; 0 not (said why); -1 the
 * token was refused (401): the card is kept to report with the next token (xid_resend()); -2
 * gpuschedd was not reached or could not take it now (no answer, 429, 5xx): the card is kept
 * to report again a heartbeat interval later, since a failed card left unsaid takes pods. */
static int xid_report(struct agent *a, int gpu, unsigned long long xid, const char *token)
{
    char url[300], body[80], *resp = NULL, why[sizeof(a->beat_said.text)];
    snprintf(url, sizeof(url), "/v1/nodes/%s/gpus/%d/health", a->o.node, gpu);
    if (xid >= 1 && xid <= 65535) /* NVIDIA's Xids; any other value NVML gives is no Xid: the
                                   * card is reported failed without one, taken at its worst */
        snprintf(body, sizeof(body), "{\"healthy\": false, \"xid\": %llu}", xid);
    else
        snprintf(body, sizeof(body), "{\"healthy\": false}");
    long st = http(a, "POST", url, token, body, &resp);
    int again = st <= 0 || st == 429 || st >= 500;
    if (st != 200) {
        pthread_mutex_lock(&a->lock);
        failure(a, st, resp, why, sizeof(why));
        if (st == 401 || again)
            a->xid_unsent |= 1u << gpu;
        if (again)
            a->xid_retry_ms = now_ms() + a->o.beat_s * 1000;
        pthread_mutex_unlock(&a->lock);
        say("GPU %d: gpuschedd did not take the health report: %s%s", gpu, why,
            again ? " (sent again later)" : "");
    }
    free(resp);
    if (st == 401)
        atomic_store(&a->refused, 1);
    return st == 200 ? 1 : st == 401 ? -1 : again ? -2 : 0;
}

/* The main thread, with a token usable: the Xids a refused token, or a gpuschedd not reached,
 * could not report, once their retry time has come. */
static void xid_resend(struct agent *a)
{
    pthread_mutex_lock(&a->lock);
    uint32_t unsent = now_ms() >= a->xid_retry_ms ? a->xid_unsent : 0;
    a->xid_unsent &= ~unsent;
    pthread_mutex_unlock(&a->lock);
    for (int g = 0; g < 32 && unsent; g++) {
        if (!(unsent & (1u << g)))
            continue;
        unsent &= ~(1u << g);
        pthread_mutex_lock(&a->lock);
        unsigned long long xid = a->xid_of[g];
        pthread_mutex_unlock(&a->lock);
        int rc = xid_report(a, g, xid, a->token);
        if (rc > 0)
            say("GPU %d: Xid %llu: reported unhealthy (held until then)", g, xid);
        else if (rc < 0) { /* refused again, or not reached: kept, with the rest */
            pthread_mutex_lock(&a->lock);
            a->xid_unsent |= unsent;
            pthread_mutex_unlock(&a->lock);
            return;
        }
    }
}

/* Xid events: a card whose Xid is no application error is reported unhealthy. */
static void *xid_loop(void *arg)
{
    struct agent *a = arg;
    struct gs_diag d;
    while (!stop_threads) {
        int gpu;
        unsigned long long xid;
        gs_diag_init(&d);
        int rc = gs_nvml_xid_wait(a->nvml, 1000, &gpu, &xid, &d);
        if (rc < 0) {
            say("Xid events: %s; health checks stop", d.msg);
            return NULL;
        }
        if (rc == 0 && !a->xid_quiet) {
            pthread_mutex_lock(&a->lock);
            a->xid_quiet = 1;
            pthread_mutex_unlock(&a->lock);
        }
        if (rc == 0 || gpu < 0 || gpu >= 32 || gs_xid_is_application(xid))
            continue;
        char token[sizeof(a->token)];
        pthread_mutex_lock(&a->lock);
        a->unhealthy |= 1u << gpu; /* the next sync sends ListAndWatch its devices again */
        a->xid_of[gpu] = xid;
        memcpy(token, a->token, sizeof(token)); /* the main thread may take a new one */
        /* a refused token is not sent again (each refusal counts towards the node address's
         * lockout): the report waits for the next token */
        int refused = atomic_load(&a->refused);
        if (refused)
            a->xid_unsent |= 1u << gpu;
        pthread_mutex_unlock(&a->lock);
        if (refused)
            say("GPU %d: Xid %llu: not reported to gpuschedd until the node has a new token (its "
                "token was refused)",
                gpu, xid);
        else if (xid_report(a, gpu, xid, token) > 0)
            say("GPU %d: Xid %llu: reported unhealthy", gpu, xid);
    }
    return NULL;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int run(struct agent *a)
{
    struct gs_diag d;
    gs_diag_init(&d);
    if (register_node(a))
        return 1;
    snprintf(a->plan_state, sizeof(a->plan_state), "%s/plan.json", a->o.state_dir);
    if (gs_plan_init(a->plan, a->topo, a->o.replicas, a->o.shim, a->o.pod_dir, a->o.mps_pipe) ||
        gs_plan_load(a->plan, a->plan_state, &d)) {
        say("%s", d.msg[0] ? d.msg : "bad --replicas or paths");
        return 1;
    }
    gs_plan_ctx_set(a->plan, a->o.has_ctx ? &a->o.ctx : NULL);
    if (a->o.cdi_dir && gs_cdi_write(a->topo, a->o.cdi_dir, &d))
        say("%s", d.msg);
    pthread_t xt;
    int xid = a->nvml && pthread_create(&xt, NULL, xid_loop, a) == 0;
    int64_t next_beat = 0, next_sync = 0;
    while (!stopping) { /* a long --sync-ms must not space the heartbeats out past the grace */
        if (now_ms() >= next_beat) {
            beat(a);
            next_beat = now_ms() + a->o.beat_s * 1000;
        }
        pthread_mutex_lock(&a->lock);
        int quiet = a->xid_quiet;
        pthread_mutex_unlock(&a->lock);
        if (quiet && !a->health_read && token_usable(a)) {
            a->health_read = 1;
            health_start(a);
        }
        if (token_usable(a))
            xid_resend(a);
        if (now_ms() >= next_sync) {
            sync_pods(a);
            next_sync = now_ms() + a->o.sync_ms;
        }
        int64_t wait = (next_beat < next_sync ? next_beat : next_sync) - now_ms();
        struct timespec ts = {wait > 0 ? wait / 1000 : 0,
                              wait > 0 ? (long)(wait % 1000) * 1000000L : 0};
        nanosleep(&ts, NULL);
    }
    stop_threads = 1;
    if (xid)
        pthread_join(xt, NULL);
    gs_plugin_stop(a->plugin);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: gpusched-agent [options]\n"
        "  --server URL             gpuschedd (" AGENT_SERVER ")\n"
        "  --node NAME              this node's name in gpuschedd (default: $NODE_NAME, or "
        "the host name)\n"
        "  --bootstrap-token-file F the bootstrap node token, for the first registration\n"
        "  --state-dir DIR          the node's token and device state (" AGENT_STATE_DIR ")\n"
        "  --device-plugin-dir DIR  kubelet's device plugin folder (" AGENT_PLUGIN_DIR ")\n"
        "  --no-device-plugin       no kubelet (bare machines)\n"
        "  --pod-resources-socket F kubelet's pod resources API, to know the pod it admits\n"
        "                           (" AGENT_PODRES "; '' = none)\n"
        "  --cdi-dir DIR            where the CDI spec goes (" AGENT_CDI_DIR "; '' = none)\n"
        "  --cgroup-root DIR        cgroup v2 mount holding kubelet's pod cgroups\n"
        "                           (" AGENT_CGROUP_ROOT "; '' = no tenant CPU weights)\n"
        "  --shim PATH              libgpushare.so on the host, mounted into shared pods\n"
        "                           (" GS_SHIM_PATH "; '' = none)\n"
        "  --pod-dir DIR            host folder of the shared pods' libgpushare regions, one\n"
        "                           folder per pod (" AGENT_POD_DIR ")\n"
        "  --context-mib SPEC       MiB a CUDA context is charged: MIB and/or MODEL=MIB, comma-\n"
        "                           separated (default: per model, docs/node-agent.md)\n"
        "  --mps-pipe DIR           the MPS control daemon's pipe folder (" AGENT_MPS_PIPE ";\n"
        "                           '' = no MPS client limits)\n"
        "  --replicas N             nvidia.com/gpu devices per card, 1..%d (%d)\n"
        "  --heartbeat-seconds N    1..%d (%d): gpuschedd's default grace is 40 s\n"
        "  --sync-ms N              bound pods read every N ms, 1..%d (%d)\n"
        "  --dry-run                print the NVML MIG calls, make none\n"
        "  --nvml-lib PATH          the NVML library to load (" GS_NVML_LIB ")\n"
        "  --nvidia-smi CMD         run as CMD topo -m where NVML finds no GPU (" GS_DISCOVER_SMI
        ")\n"
        "  --hwloc-xml FILE         hwloc's tree from this XML file, not this machine's\n"
        "  --sysfs DIR              where NVML discovery reads cards' NUMA nodes "
        "(" GS_DISCOVER_SYSFS ")\n"
        "  --ca-file FILE           CA of gpuschedd's TLS certificate\n"
        "  --discover [--json|--yaml]  print this machine's topology tree and exit\n"
        "  --version                print the version and exit\n",
        GS_PLAN_REPLICAS_MAX, AGENT_REPLICAS, AGENT_BEAT_MAX_S, AGENT_BEAT_S, AGENT_SYNC_MAX_MS,
        AGENT_SYNC_MS);
}

/*
 * --node NAME as gpuschedd and Kubernetes name a node (a DNS-1123 subdomain): it goes into URL
 * paths, so it is checked before anything is sent. @from says where the name came from.
 * Return: 0; -1 after saying why.
 */
static int check_node(const char *node, const char *from)
{
    if (gs_dns_subdomain_ok(node, strlen(node)))
        return 0;
    say("node name \"%.300s\"%s (from %s) is not a Kubernetes node name: 1-253 bytes of a-z, 0-9, "
        "'-' and '.', each dot-separated part starting and ending with a letter or digit; give "
        "--node",
        node, strlen(node) > 300 ? "..." : "", from);
    return -1;
}

/*
 * --discover's label for the tree where no --node is given: from $NODE_NAME or the host name
 * (@from says which), it only labels what is printed, so one that is no node name does not stop
 * discovery. It is lower-cased, as kubelet lower-cases the host name (or its override) to name
 * its node: the label is then the name Kubernetes gives this machine (a host GPU-Node-1 is the
 * node gpu-node-1), and --yaml's entry is one gpusched loads. One that is still no node name (a
 * '_', say) labels the tree all the same, and a note says so and how to choose another; its
 * control characters are escaped, as in every message. Return: the label (a static buffer).
 */
static const char *discover_label(const char *name, const char *from)
{
    static char label[4 * 253 + 1];
    char lower[254];
    int cut = snprintf(lower, sizeof(lower), "%s", name) >= (int)sizeof(lower);
    for (char *p = lower; *p; p++)
        *p = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
    gs_text_escape(label, sizeof(label), lower);
    if (cut || !gs_dns_subdomain_ok(lower, strlen(lower)))
        say("%s \"%s\" is not a Kubernetes node name, even lower-cased: the tree is labelled "
            "\"%s\"; give --node to name it",
            from, name, lower);
    return label;
}

/* --server: gpuschedd's base URL (gpusched/httpurl.h), kept without trailing '/'; at most
 * GS_HTTP_URL_MAX (512) bytes, so every request's URL is whole (http() adds at most 300 of
 * path). Return: 0; -1 after saying why. */
static int check_server(struct opts *o)
{
    static char url[GS_HTTP_URL_MAX + 1];
    char why[512];
    if (gs_http_url(o->server, url, why, sizeof(why)) == 0) {
        o->server = url;
        return 0;
    }
    say("--server %s (gpuschedd's base URL)", why);
    return -1;
}

/* The files the agent will need, read before anything is sent: --ca-file readable, and the
 * --bootstrap-token-file's line a bearer token of at most 160 bytes (sent whole) into @o->boot.
 * Return: 0; -1 after saying why. */
static int check_files(struct opts *o)
{
    FILE *f = o->ca_file ? fopen(o->ca_file, "r") : NULL;
    if (o->ca_file && !f) {
        say("--ca-file %s: %s", o->ca_file, strerror(errno));
        return -1;
    }
    if (f)
        fclose(f);
    if (!o->bootstrap_file)
        return 0;
    char line[256];
    int rc = read_line(o->bootstrap_file, line, sizeof(line));
    if (rc == -EINVAL ||
        (!rc && (!gs_bearer_token_ok(line, strlen(line)) || strlen(line) > GS_NODE_TOKEN_MAX))) {
        say("--bootstrap-token-file %s: %s: expected a bearer token, 1..%d letters, digits and "
            "-._~+/ (RFC 6750) on its first line",
            o->bootstrap_file, rc ? "empty" : "not a token", GS_NODE_TOKEN_MAX);
        return -1;
    } else if (rc) {
        say("--bootstrap-token-file %s: %s", o->bootstrap_file, strerror(-rc));
        return -1;
    }
    memcpy(o->boot, line, strlen(line) + 1);
    return 0;
}

/* A folder (@dir) or a readable file given by @flag: --sysfs, where NVML discovery reads each
 * card's NUMA node and CPU list, and would go on without them were the folder not there;
 * --hwloc-xml, read by discovery. Return: 0; -1 after saying why. */
static int check_path(const char *flag, const char *path, int dir)
{
    struct stat st;
    if (stat(path, &st) != 0 || (!dir && access(path, R_OK) != 0)) {
        say("%s %s: %s", flag, path, strerror(errno));
        return -1;
    }
    if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
        say("%s %s: not a %s", flag, path, dir ? "folder" : "file");
        return -1;
    }
    return 0;
}

/* --state-dir @dir, where the node's token and device state are kept: made (mode 0700) where it
 * is missing, else a folder the agent can write. Checked before anything is sent: a registration
 * whose token cannot be kept leaves the node registered, and the bootstrap token refused for it.
 * Return: 0; -1 after saying why. */
static int check_state_dir(const char *dir)
{
    if (mkdir(dir, 0700) && errno != EEXIST) {
        say("--state-dir %s: %s", dir, strerror(errno));
        return -1;
    }
    if (check_path("--state-dir", dir, 1))
        return -1;
    if (access(dir, W_OK | X_OK)) {
        say("--state-dir %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* --json and --yaml choose --discover's form: one of them, and only with it. @flags: bit 0
 * --json given, bit 1 --yaml. Return: 0; -1 after saying why. */
static int check_forms(const struct opts *o, int flags)
{
    if (flags == 3) {
        say("--json and --yaml: give one of them");
        return -1;
    }
    if (flags && !o->discover_only) {
        say("%s is the form of --discover's tree: give --discover too",
            flags == 1 ? "--json" : "--yaml");
        return -1;
    }
    return 0;
}

/* The integer flags, each with its range (1..max) and the field of struct opts it sets: the one
 * place their limits are kept. */
static const struct int_flag {
    const char *name; /* the long option, without "--" */
    long max;
    size_t field;    /* offsetof(struct opts, ...), an int */
    const char *why; /* added to its out-of-range message */
} int_flags[] = {
    {"replicas", GS_PLAN_REPLICAS_MAX, offsetof(struct opts, replicas), ""},
    {"heartbeat-seconds", AGENT_BEAT_MAX_S, offsetof(struct opts, beat_s),
     ": gpuschedd marks a node NotReady after 40 s of silence by default"},
    {"sync-ms", AGENT_SYNC_MAX_MS, offsetof(struct opts, sync_ms), ""},
};

/* --@name's value @arg, an integer in the range int_flags[] gives that flag, into its field of
 * @o: decimal digits alone, no blank or sign. Return: 0; -1 after saying why. */
static int int_arg(const char *name, const char *arg, struct opts *o)
{
    const struct int_flag *f = NULL;
    for (size_t i = 0; i < sizeof(int_flags) / sizeof(int_flags[0]) && !f; i++)
        f = strcmp(int_flags[i].name, name) ? NULL : &int_flags[i];
    if (!f) { /* a flag parse() sends here without its line in int_flags[] */
        say("--%s: no range known", name);
        return -1;
    }
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    /* digits only: strtol() takes leading blanks and a sign, which "5 " would not get */
    if (end == arg || *end || !(*arg >= '0' && *arg <= '9')) {
        say("--%s %s: not a number (expected 1..%ld)", name, arg, f->max);
        return -1;
    }
    if (errno || v < 1 || v > f->max) {
        say("--%s %s: out of range (expected 1..%ld%s)", name, arg, f->max, f->why);
        return -1;
    }
    *(int *)((char *)o + f->field) = (int)v;
    return 0;
}

#define AGENT_ARG_MAX 200 /* bytes of an option's value */

/* Return: 0; -1 bad usage, after saying why (main() then points to --help); -2 a value refused,
 * after saying why. */
static int parse(int argc, char **argv, struct opts *o)
{
    static char host[256];
    static const struct option lo[] = {{"server", 1, 0, 's'},
                                       {"node", 1, 0, 'n'},
                                       {"bootstrap-token-file", 1, 0, 'b'},
                                       {"state-dir", 1, 0, 'S'},
                                       {"device-plugin-dir", 1, 0, 'p'},
                                       {"no-device-plugin", 0, 0, 'P'},
                                       {"pod-resources-socket", 1, 0, 'R'},
                                       {"cdi-dir", 1, 0, 'c'},
                                       {"cgroup-root", 1, 0, 'g'},
                                       {"shim", 1, 0, 'L'},
                                       {"pod-dir", 1, 0, 'O'},
                                       {"context-mib", 1, 0, 'x'},
                                       {"mps-pipe", 1, 0, 'm'},
                                       {"replicas", 1, 0, 'r'},
                                       {"heartbeat-seconds", 1, 0, 'H'},
                                       {"sync-ms", 1, 0, 'y'},
                                       {"dry-run", 0, 0, 'D'},
                                       {"nvml-lib", 1, 0, 'N'},
                                       {"nvidia-smi", 1, 0, 'M'},
                                       {"hwloc-xml", 1, 0, 'X'},
                                       {"sysfs", 1, 0, 'Y'},
                                       {"ca-file", 1, 0, 'C'},
                                       {"discover", 0, 0, 'd'},
                                       {"json", 0, 0, 'j'},
                                       {"yaml", 0, 0, 'k'},
                                       {"help", 0, 0, 'h'},
                                       {"version", 0, 0, 'V'},
                                       {0, 0, 0, 0}};
    memset(o, 0, sizeof(*o));
    o->server = AGENT_SERVER;
    o->node = getenv("NODE_NAME");
    o->state_dir = AGENT_STATE_DIR;
    o->plugin_dir = AGENT_PLUGIN_DIR;
    o->podres = AGENT_PODRES;
    o->cdi_dir = AGENT_CDI_DIR;
    o->cgroup_root = AGENT_CGROUP_ROOT;
    o->shim = GS_SHIM_PATH; /* where meson install put it (meson.build) */
    o->pod_dir = AGENT_POD_DIR;
    o->mps_pipe = AGENT_MPS_PIPE;
    o->replicas = AGENT_REPLICAS;
    o->beat_s = AGENT_BEAT_S;
    o->sync_ms = AGENT_SYNC_MS;
    o->disc.sysfs = GS_DISCOVER_SYSFS;
    o->fmt = GS_TOPO_HUMAN;
    int c, li = 0, node_given = 0, fmt_flags = 0;
    unsigned char given[128] = {0}; /* by option letter: none of the agent's options repeats */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", lo, &li)) != -1) {
        if (c != '?' && c != ':' && c > 0 && c < 128 && given[c]++) {
            say("--%s given twice: give it once", lo[li].name); /* the last would win unsaid */
            return -1;
        }
        /* Paths go into fixed buffers with what the agent adds to them (a node name and
         * --server have their own rules: check_node(), check_server()). */
        if (optarg && c != 'n' && c != 's' && strlen(optarg) > AGENT_ARG_MAX) {
            say("--%s: at most %d bytes", lo[li].name, AGENT_ARG_MAX);
            return -2;
        }
        switch (c) {
        case 's':
            o->server = optarg;
            break;
        case 'n':
            o->node = optarg;
            node_given = 1;
            break;
        case 'b':
            o->bootstrap_file = optarg;
            break;
        case 'S':
            o->state_dir = optarg;
            break;
        case 'p':
            o->plugin_dir = optarg;
            break;
        case 'P':
            o->no_plugin = 1;
            break;
        case 'R':
            o->podres = *optarg ? optarg : NULL;
            break;
        case 'c':
            o->cdi_dir = *optarg ? optarg : NULL;
            break;
        case 'g':
            o->cgroup_root = *optarg ? optarg : NULL;
            break;
        case 'L':
            o->shim = *optarg ? optarg : NULL;
            break;
        case 'm':
            o->mps_pipe = *optarg ? optarg : NULL;
            break;
        case 'O':
            if (!*optarg) {
                say("--pod-dir: a folder is needed");
                return -1;
            }
            o->pod_dir = optarg;
            break;
        case 'x': {
            struct gs_diag d;
            gs_diag_init(&d);
            if (gs_plan_ctx_parse(optarg, &o->ctx, &d)) {
                say("%s", d.msg);
                return -1;
            }
            o->has_ctx = 1;
            break;
        }
        case 'r':
        case 'H':
        case 'y':
            if (int_arg(lo[li].name, optarg, o))
                return -1;
            break;
        case 'D':
            o->dry_run = 1;
            break;
        case 'N':
            o->disc.nvml_lib = optarg;
            break;
        case 'M':
            o->disc.smi = optarg;
            break;
        case 'X':
            if (check_path("--hwloc-xml", optarg, 0))
                return -2;
            o->disc.hwloc_xml = optarg;
            break;
        case 'Y':
            if (check_path("--sysfs", optarg, 1))
                return -2;
            o->disc.sysfs = optarg;
            break;
        case 'C':
            o->ca_file = optarg;
            break;
        case 'd':
            o->discover_only = 1;
            break;
        case 'j':
            o->fmt = GS_TOPO_JSON;
            fmt_flags |= 1;
            break;
        case 'k':
            o->fmt = GS_TOPO_YAML;
            fmt_flags |= 2;
            break;
        case 'h':
            usage(stdout);
            exit(fflush(stdout) || ferror(stdout) ? 1 : 0);
        case 'V':
            printf("gpusched-agent %s\n", GS_VERSION);
            exit(fflush(stdout) || ferror(stdout) ? 1 : 0);
        default: /* getopt's own message would write the argument unescaped */
            say("%s \"%s\"", gs_option_problem(c), argv[optind - 1]);
            return -1;
        }
    }
    if (optind != argc) {
        say("unexpected argument \"%s\": the agent takes options only", argv[optind]);
        return -1;
    }
    for (int i = 0; o->discover_only && lo[i].name; i++) /* taken and unread is refused */
        if (given[lo[i].val] && !strchr("nNMXYdjk", lo[i].val)) {
            say("--%s is not read by --discover, which prints the GPUs found and exits: leave it "
                "out",
                lo[i].name);
            return -2;
        }
    const char *from = node_given ? "--node" : "$NODE_NAME";
    if (!node_given && (!o->node || !*o->node)) {
        if (gethostname(host, sizeof(host) - 1)) {
            say("cannot read the host name (%s): give --node", strerror(errno));
            return -2;
        }
        o->node = host;
        from = "the host name";
    }
    if (check_forms(o, fmt_flags))
        return -1;
    if (o->discover_only && !node_given)
        o->node = discover_label(o->node, from);
    else if (check_node(o->node, from))
        return -2;
    if (!o->discover_only && (check_server(o) || check_files(o) || check_state_dir(o->state_dir)))
        return -2;
    o->disc.log = open_log(); /* each source passed over, and why: --discover's too */
    return 0;
}

/* --discover --yaml without a catalog model for GPU0 (named @name by source @src). */
static void no_model(const char *name, int src)
{
    const char *how = "print --json or the tree, or run `gpusched topo --yaml --model MODEL` on "
                      "`nvidia-smi topo -m`'s text";
    if (!*name)
        say("--yaml needs the GPU model, which %s does not give; %s", gs_discover_source_name(src),
            how);
    else
        say("--yaml: GPU0's model \"%s\" is not in gpusched's catalog; %s", name, how);
}

int main(int argc, char **argv)
{
    static struct agent a;
    static struct gs_topo topo;
    static struct gs_plan plan;
    struct gs_diag d;
    int bad = parse(argc, argv, &a.o);
    if (bad == -1) /* its message said what is wrong; the options are in --help */
        say("run gpusched-agent --help for its options");
    if (bad)
        return 2;
    gs_diag_init(&d);
    a.topo = &topo;
    a.plan = &plan;
    pthread_mutex_init(&a.lock, NULL);
    int src = gs_discover(&a.o.disc, a.topo, &a.nvml, &d);
    if (src < 0) {
        say("%s", d.msg);
        return 1;
    }
    if (a.o.discover_only) {
        int m = a.topo->ngpus ? gs_catalog_find_product(a.topo->gpu[0].name) : -1;
        if (a.o.fmt == GS_TOPO_YAML && m < 0) { /* the agent has no flag to name the model */
            no_model(a.topo->gpu[0].name, src);
            gs_nvml_close(a.nvml);
            return 1;
        }
        printf(a.o.fmt == GS_TOPO_HUMAN ? "# from %s\n" : "", gs_discover_source_name(src));
        int rc = gs_topo_write(stdout, a.topo, a.o.fmt, a.o.node,
                               m >= 0 ? gs_catalog_at(m)->name : NULL, &d);
        if (rc)
            say("%s", d.msg);
        gs_nvml_close(a.nvml);
        return rc ? 1 : 0;
    }
    say("found %d GPUs through %s", a.topo->ngpus, gs_discover_source_name(src));
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = run(&a);
    gs_nvml_close(a.nvml);
    curl_global_cleanup();
    return rc;
}
