/* gpuschedd attacked on 127.0.0.1; see attack.h. */
#include "attack.h"

#include "harness.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TOKEN_METRICS "metrics-token-0123456789"
#define TIMEOUT_S     10L /* an answer later than this counts as none: generous on purpose */
#define FILLERS       8
#define SLOW_KINDS    4

static struct daemon d;
static atomic_int port;     /* d.port, read by client threads while the main thread restarts */
static atomic_int stopping; /* the current phase's threads stop */
static atomic_int killing;  /* phase 5: calls fail while the daemon restarts, as they should */
/* a scraper's calls ask for gzip, as Prometheus' scrapes do, and count the bytes without
 * inflating them: Prometheus inflates on a machine of its own */
static _Thread_local int gzip_asked;

/* The load's threads (scrapers, the lister, the attackers) give the CPU to the timed ones
 * first: on a small machine shared with the daemon they stand for other machines. */
static void as_load(void)
{
    setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

struct sink {
    char *s;
    size_t len, cap;
    int keep; /* 0: count the bytes only (scrapes and lists: keeping them costs the client) */
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    struct sink *b = ud;
    size_t add = sz * n;
    if (b->keep && b->len + add + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + add + 1)
            cap *= 2;
        char *m = realloc(b->s, cap);
        if (!m)
            return 0;
        b->s = m;
        b->cap = cap;
    }
    if (b->keep) {
        memcpy(b->s + b->len, p, add);
        b->s[b->len + add] = '\0';
    }
    b->len += add;
    return add;
}

/* A keep-alive handle, its requests from address @iface (NULL: the system's choice). */
static CURL *handle(const char *iface)
{
    CURL *c = curl_easy_init();
    if (c && iface)
        curl_easy_setopt(c, CURLOPT_INTERFACE, iface);
    if (c)
        curl_easy_setopt(c, CURLOPT_TIMEOUT, TIMEOUT_S);
    return c;
}

/*
 * One request on @c with @auth (a whole Authorization header value, or NULL). Return: the
 * status (0: no answer), the body in *@out when asked (free it), the seconds it took in *@secs.
 */
static long call(CURL *c, const char *method, const char *path, const char *auth, const char *body,
                 char **out, double *secs)
{
    struct curl_slist *h = curl_slist_append(NULL, "Expect:");
    if (body) /* libcurl would say application/x-www-form-urlencoded */
        h = curl_slist_append(h, "Content-Type: application/json");
    if (gzip_asked)
        h = curl_slist_append(h, "Accept-Encoding: gzip");
    struct sink b = {.keep = out != NULL};
    char url[512], hdr[300];
    long status = 0;
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", atomic_load(&port), path);
    if (auth) {
        snprintf(hdr, sizeof(hdr), "Authorization: %s", auth);
        h = curl_slist_append(h, hdr);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    if (!body)
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    double t0 = l_now();
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if ((rc != CURLE_OK || status >= 500) && !atomic_load(&killing)) /* the report counts them */
        fprintf(stderr, "attack: %s %s: %s %ld%s%.200s\n", method, path,
                rc == CURLE_OK ? "HTTP" : curl_easy_strerror(rc), status, b.s ? " " : "",
                b.s ? b.s : "");
    if (secs)
        *secs = l_now() - t0;
    curl_slist_free_all(h);
    if (out)
        *out = b.s;
    else
        free(b.s);
    return status;
}

static const char *bearer(const char *token, char *buf, size_t cap)
{
    snprintf(buf, cap, "Bearer %s", token);
    return buf;
}

/* ---- 1: fill ---- */

struct filler {
    int from, to, acked;
};

/* Pod @i: tenant team-a or team-b by parity; a share of a card (every third), 2 cards (every
 * tenth of the rest) or 1. */
static char *fill_pod(int i, char *name, size_t cap)
{
    snprintf(name, cap, "f-%d", i);
    int share = i % 3 == 0;
    return h_pod(i % 2 ? "team-b" : "team-a", name, !share && i % 10 == 1 ? 2 : 1,
                 share ? 10 + i % 80 : 0);
}

static void *fill_main(void *arg)
{
    struct filler *f = arg;
    CURL *c = handle(NULL);
    char auth[2][96];
    bearer(TOKEN_A, auth[0], sizeof(auth[0]));
    bearer(TOKEN_B, auth[1], sizeof(auth[1]));
    for (int i = f->from; i < f->to; i++) {
        char name[32], *body = fill_pod(i, name, sizeof(name));
        long st = call(c, "POST", "/v1/pods", auth[i % 2], body, NULL, NULL);
        f->acked += st == 201 || st == 200;
        free(body);
    }
    curl_easy_cleanup(c);
    return NULL;
}

static void fill(const struct attack_opts *o, struct attack_report *r)
{
    pthread_t t[FILLERS];
    struct filler f[FILLERS];
    double t0 = l_now();
    for (int i = 0; i < FILLERS; i++) {
        f[i] = (struct filler){o->pods * i / FILLERS, o->pods * (i + 1) / FILLERS, 0};
        pthread_create(&t[i], NULL, fill_main, &f[i]);
    }
    for (int i = 0; i < FILLERS; i++) {
        pthread_join(t[i], NULL);
        r->filled += f[i].acked;
    }
    r->fill_s = l_now() - t0;
}

/* ---- 2: connections and uploads ---- */

/* A TCP connection to the daemon from 127.0.@net.@host; -1 when refused or not possible. */
static int connect_from(int net, int host)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in from = {.sin_family = AF_INET}, to = {.sin_family = AF_INET};
    from.sin_addr.s_addr = htonl((127u << 24) | ((unsigned)net << 8) | (unsigned)host);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons((uint16_t)atomic_load(&port));
    if (fd < 0 || bind(fd, (struct sockaddr *)&from, sizeof(from)) ||
        connect(fd, (struct sockaddr *)&to, sizeof(to))) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
}

/* Whether the peer has closed @fd (a read finds the end, or an error). */
static int closed_by_peer(int fd)
{
    char c;
    ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

struct slow {
    int fd, kind, status; /* status: 0 none yet; -1 closed without one */
    size_t sent;
};

/* Headers of slow upload @kind: anonymous and admin over the cap, admin chunked, admin under it. */
static void slow_headers(int kind, char *buf, size_t cap)
{
    static const char *const framing[SLOW_KINDS] = {
        "Content-Length: 33554432", "Content-Length: 33554432", "Transfer-Encoding: chunked",
        "Content-Length: 4000000"};
    snprintf(buf, cap,
             "POST /extender/filter HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%s%s\r\n"
             "Content-Type: application/json\r\n\r\n",
             kind ? "Authorization: Bearer " TOKEN_ADMIN : "", kind ? "\r\n" : "", framing[kind]);
    buf[cap - 1] = '\0';
}

/* Send the next piece of @s (16 KiB, as a chunk when chunked) and read any answer. */
static void slow_step(struct slow *s)
{
    static char piece[16384 + 32];
    if (s->fd < 0)
        return;
    char head[16];
    size_t n = 16384, off = 0;
    if (s->kind == 2) {
        off = (size_t)snprintf(head, sizeof(head), "4000\r\n");
        memcpy(piece, head, off);
    }
    memset(piece + off, ' ', n);
    if (s->kind == 2)
        memcpy(piece + off + n, "\r\n", 2);
    ssize_t w = send(s->fd, piece, off + n + (s->kind == 2 ? 2 : 0), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0)
        s->sent += (size_t)w;
    char ans[64] = "";
    ssize_t got = recv(s->fd, ans, sizeof(ans) - 1, MSG_DONTWAIT);
    if (got > 12 && !s->status && !strncmp(ans, "HTTP/1.", 7))
        s->status = atoi(ans + 9);
    if (got == 0 || (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
        if (!s->status)
            s->status = -1;
        close(s->fd);
        s->fd = -1;
    }
}

struct probe {
    struct l_lat *healthz, *filter;
    char *filter_body;
};

/* /healthz and filter from 127.0.0.1, every 20 ms, until the phase ends. */
static void *probe_main(void *arg)
{
    struct probe *p = arg;
    CURL *c = handle(NULL);
    char auth[96];
    bearer(TOKEN_ADMIN, auth, sizeof(auth));
    while (!atomic_load(&stopping)) {
        double s;
        long st = call(c, "GET", "/healthz", NULL, NULL, NULL, &s);
        l_lat_add(p->healthz, s, st == 200);
        st = call(c, "POST", "/extender/filter", auth, p->filter_body, NULL, &s);
        l_lat_add(p->filter, s, st == 200);
        nap(0.02);
    }
    curl_easy_cleanup(c);
    return NULL;
}

static void resources(const struct attack_opts *o, struct attack_report *r)
{
    int *idle = calloc((size_t)o->idle, sizeof(int));
    struct slow *slow = calloc((size_t)o->slow, sizeof(*slow));
    struct probe p = {&r->healthz, &r->filter_under_conns,
                      l_extender_args(o->nodes, 0, "probe-0", 1, 0, NULL)};
    pthread_t t;
    r->rss_before_kb = l_rss_kb(d.pid);
    atomic_store(&stopping, 0);
    pthread_create(&t, NULL, probe_main, &p);
    /* 40 idle connections an address: under the daemon's 64 per client, so all are accepted
     * up to its total; every other one sends half a request line and stops. */
    static const char half[] = "GET /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Wait: ";
    for (int i = 0; i < o->idle; i++) {
        idle[i] = connect_from(1, 1 + i / 40);
        if (idle[i] >= 0 && i % 2)
            send(idle[i], half, sizeof(half) - 1, MSG_NOSIGNAL);
    }
    /* one more address opens 100: past maxConnectionsPerClient (64) they are closed at once */
    int one[100];
    for (int i = 0; i < 100; i++)
        one[i] = connect_from(5, 1);
    r->one_client_tried = 100;
    nap(0.5); /* the daemon has taken or closed them all */
    for (int i = 0; i < 100; i++)
        r->one_client_open += one[i] >= 0 && !closed_by_peer(one[i]);
    for (int i = 0; i < o->idle; i++)
        r->idle_open_start += idle[i] >= 0 && !closed_by_peer(idle[i]);
    for (int i = 0; i < o->slow; i++) {
        char h[256];
        slow[i].kind = i % SLOW_KINDS;
        slow[i].fd = connect_from(2, 1 + i / 32);
        slow_headers(slow[i].kind, h, sizeof(h));
        if (slow[i].fd >= 0)
            send(slow[i].fd, h, strlen(h), MSG_NOSIGNAL);
    }
    double end = l_now() + o->phase_s;
    while (l_now() < end) {
        for (int i = 0; i < o->slow; i++)
            slow_step(&slow[i]);
        long kb = l_rss_kb(d.pid);
        r->rss_max_kb = kb > r->rss_max_kb ? kb : r->rss_max_kb;
        nap(0.2);
    }
    for (int i = 0; i < 100; i++)
        if (one[i] >= 0)
            close(one[i]);
    for (int i = 0; i < o->idle; i++) {
        r->idle_open_end += idle[i] >= 0 && !closed_by_peer(idle[i]);
        if (idle[i] >= 0)
            close(idle[i]);
    }
    for (int i = 0; i < o->slow; i++) {
        int st = slow[i].status;
        r->slow_status[st > 0 && st < 600 ? st / 100 : 0]++;
        if (slow[i].fd >= 0)
            close(slow[i].fd);
    }
    atomic_store(&stopping, 1);
    pthread_join(t, NULL);
    free(p.filter_body);
    free(idle);
    free(slow);
}

/* ---- 3: reads against writes ---- */

struct reader {
    const struct attack_opts *o;
    struct attack_report *r;
    struct l_lat *extender, *post; /* where the timed calls go */
    int id;
};

/* A Prometheus replica from an address of its own (127.0.4.N), scraping back to back; told 429,
 * it waits the second Retry-After says, as Prometheus' next scrape would. */
static void *scraper_main(void *arg)
{
    struct reader *x = arg;
    char iface[32];
    snprintf(iface, sizeof(iface), "127.0.4.%d",
             1 + __atomic_fetch_add(&x->id, 1, __ATOMIC_RELAXED));
    CURL *c = handle(iface);
    char auth[96];
    as_load();
    gzip_asked = 1;
    bearer(TOKEN_METRICS, auth, sizeof(auth));
    while (!atomic_load(&stopping)) {
        double s;
        long st = call(c, "GET", "/metrics", auth, NULL, NULL, &s);
        if (st == 429) { /* metrics.scrapesPerSecond from this address: an answer too */
            __atomic_fetch_add(&x->r->scrapes_refused, 1, __ATOMIC_RELAXED);
            nap(1);
        } else
            l_lat_add(&x->r->scrape, s, st == 200);
    }
    curl_easy_cleanup(c);
    return NULL;
}

static void *lister_main(void *arg)
{
    struct reader *x = arg;
    CURL *c = handle(NULL);
    char auth[96];
    bearer(TOKEN_A, auth, sizeof(auth));
    as_load();
    double every = 1.0 / (x->o->list_per_s > 0 ? x->o->list_per_s : 1), next = l_now();
    while (!atomic_load(&stopping)) {
        double s;
        long st = call(c, "GET", "/v1/pods?limit=5000", auth, NULL, NULL, &s);
        l_lat_add(&x->r->list, s, st == 200);
        next += every;
        if (next > l_now())
            nap(next - l_now());
    }
    curl_easy_cleanup(c);
    return NULL;
}

/* kube-scheduler's part: filter then prioritize for one pod after another. */
static void *extender_main(void *arg)
{
    struct reader *x = arg;
    CURL *c = handle(NULL);
    char auth[96];
    bearer(TOKEN_ADMIN, auth, sizeof(auth));
    for (int k = 0; !atomic_load(&stopping); k++) {
        char pod[32];
        snprintf(pod, sizeof(pod), "x-%d", k);
        char *body = l_extender_args(x->o->nodes, k % 2, pod, 1 + k % 2, 0, NULL);
        double s1, s2;
        long a = call(c, "POST", "/extender/filter", auth, body, NULL, &s1);
        long b = call(c, "POST", "/extender/prioritize", auth, body, NULL, &s2);
        l_lat_add(x->extender, s1 + s2, a == 200 && b == 200);
        free(body);
        nap(0.01);
    }
    curl_easy_cleanup(c);
    return NULL;
}

/* Another tenant submits pods, 20 a second. */
static void *poster_main(void *arg)
{
    struct reader *x = arg;
    CURL *c = handle(NULL);
    char auth[96];
    bearer(TOKEN_B, auth, sizeof(auth));
    for (int k = 0; !atomic_load(&stopping); k++) {
        char name[32];
        snprintf(name, sizeof(name), "p%s-%d", x->post == &x->r->post ? "" : "q", k);
        char *body = h_pod("team-b", name, 0, 0); /* CPU only: it always starts */
        double s;
        long st = call(c, "POST", "/v1/pods", auth, body, NULL, &s);
        l_lat_add(x->post, s, st == 201);
        free(body);
        nap(0.05);
    }
    curl_easy_cleanup(c);
    return NULL;
}

/* Histogram @name of scrape @text: its count, mean and the bucket bound its 99th percentile is
 * under, in words appended to @out. */
static void hist_words(const char *text, const char *name, char *out, size_t cap)
{
    char key[128];
    double sum = 0, count = 0, p99 = 0, bound = 0;
    snprintf(key, sizeof(key), "\n%s_sum ", name);
    const char *p = strstr(text, key);
    sum = p ? atof(p + strlen(key)) : 0;
    snprintf(key, sizeof(key), "\n%s_count ", name);
    p = strstr(text, key);
    count = p ? atof(p + strlen(key)) : 0;
    snprintf(key, sizeof(key), "\n%s_bucket{le=\"", name);
    for (p = strstr(text, key); p && count > 0 && !p99; p = strstr(p + 1, key)) {
        const char *v = strchr(p + strlen(key), ' ');
        bound = atof(p + strlen(key));
        if (v && atof(v + 1) >= 0.99 * count)
            p99 = bound > 0 ? bound : 1e9;
    }
    size_t len = strlen(out);
    snprintf(out + len, cap - len, "%s%s: %.0f, mean %.2f ms, p99 <= %.3g ms", len ? "; " : "",
             name + 9, count, count ? sum / count * 1e3 : 0, p99 * 1e3);
}

/* The timed calls for @o->phase_s (@quiet: alone, a yardstick; else with the readers). */
static void timed(const struct attack_opts *o, struct attack_report *r, int quiet)
{
    int readers = quiet ? 0 : o->scrapers + 1, n = readers + 2;
    pthread_t *t = calloc((size_t)n, sizeof(*t));
    struct reader x = {o, r, quiet ? &r->extender_quiet : &r->extender,
                       quiet ? &r->post_quiet : &r->post, 0};
    atomic_store(&stopping, 0);
    for (int i = 0; i < readers - 1; i++)
        pthread_create(&t[i], NULL, scraper_main, &x);
    if (readers)
        pthread_create(&t[readers - 1], NULL, lister_main, &x);
    pthread_create(&t[readers], NULL, extender_main, &x);
    pthread_create(&t[readers + 1], NULL, poster_main, &x);
    nap(o->phase_s);
    atomic_store(&stopping, 1);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    free(t);
}

static void reads(const struct attack_opts *o, struct attack_report *r)
{
    timed(o, r, 1);
    timed(o, r, 0);
    CURL *c = handle(NULL);
    char *text = NULL;
    static const char *const hists[] = {"gpusched_store_commit_duration_seconds",
                                        "gpusched_snapshot_publish_duration_seconds",
                                        "gpusched_scheduling_duration_seconds"};
    if (call(c, "GET", "/metrics", NULL, NULL, &text, NULL) == 200)
        for (int i = 0; i < 3; i++)
            hist_words(text, hists[i], r->daemon_side, sizeof(r->daemon_side));
    free(text);
    curl_easy_cleanup(c);
}

/* ---- 4: strangers ---- */

/* What must not move: pods running and pending, and the GPU share allocated. */
static void state_of(CURL *c, char *out, size_t cap)
{
    char auth[96], *body = NULL;
    bearer(TOKEN_ADMIN, auth, sizeof(auth));
    call(c, "GET", "/v1/status", auth, NULL, &body, NULL);
    json_t *j = body ? json_loads(body, 0, NULL) : NULL;
    snprintf(out, cap, "%lld %lld %lld",
             (long long)json_integer_value(json_object_get(j, "pods_running")),
             (long long)json_integer_value(json_object_get(j, "pods_pending")),
             (long long)json_integer_value(json_object_get(j, "gpu_milli_allocated")));
    json_decref(j);
    free(body);
    body = NULL;
    call(c, "GET", "/v1/nodes/node-0001", auth, NULL, &body, NULL);
    size_t len = strlen(out);
    snprintf(out + len, cap - len, " %s",
             body && strstr(body, "\"healthy\":false") ? "sick" : "ok");
    free(body);
}

static void strangers(const struct attack_opts *o, struct attack_report *r)
{
    CURL *me = handle(NULL), *them = handle("127.0.3.1");
    char before[256], after[256], *args = l_extender_args(o->nodes, 0, "evil-1", 8, 0, NULL);
    char *pod = h_pod("team-a", "evil-0", 8, 0);
    static const char *const auths[] = {NULL, "Bearer not-a-token-0123456789", "Basic YTpi",
                                        "Bearer " TOKEN_A};
    const struct {
        const char *method, *path, *body;
    } routes[] = {
        {"POST", "/v1/pods", pod},
        {"DELETE", "/v1/pods/team-a/f-0", NULL},
        {"POST", "/v1/podgroups",
         "{\"metadata\":{\"name\":\"evil\",\"namespace\":\"team-a\"},\"spec\":{\"minMember\":1}}"},
        {"POST", "/extender/filter", args},
        {"POST", "/extender/prioritize", args},
        {"POST", "/extender/bind",
         "{\"PodName\":\"evil-1\",\"PodNamespace\":\"team-a\",\"Node\":\"node-0000\"}"},
        {"POST", "/extender/preempt", args},
        {"POST", "/v1/nodes/node-0001/heartbeat", "{}"},
        {"POST", "/v1/nodes/node-0001/gpus/0/health", "{\"healthy\":false,\"xid\":79}"},
        {"POST", "/v1/clock", "{\"advance_seconds\":3600}"},
    };
    state_of(me, before, sizeof(before));
    for (size_t a = 0; a < sizeof(auths) / sizeof(auths[0]); a++)
        for (size_t k = 0; k < sizeof(routes) / sizeof(routes[0]); k++) {
            /* a tenant's own token may write its own pods: only its other routes count here */
            if (auths[a] && !strcmp(auths[a], "Bearer " TOKEN_A) && k < 3)
                continue;
            long st =
                call(them, routes[k].method, routes[k].path, auths[a], routes[k].body, NULL, NULL);
            r->strangers_tried++;
            r->strangers_let_in += st != 401 && st != 403 && st != 429;
        }
    state_of(me, after, sizeof(after));
    r->state_changed = strcmp(before, after) != 0;
    char auth[96], *body = NULL;
    bearer(TOKEN_ADMIN, auth, sizeof(auth));
    r->state_changed += call(me, "GET", "/v1/pods/team-a/evil-0", auth, NULL, NULL, NULL) != 404;
    r->state_changed += call(me, "GET", "/v1/pods/team-a/evil-1", auth, NULL, NULL, NULL) != 404;
    r->state_changed += call(me, "GET", "/v1/pods/team-a/f-0", auth, NULL, NULL, NULL) != 200;
    /* reads without a token: aggregates, or nothing */
    static const char *const reads[] = {"/metrics",  "/v1/pods",    "/v1/status",
                                        "/v1/nodes", "/v1/tenants", "/v1/pods/team-a/f-0",
                                        "/healthz"};
    static const char *const names[] = {"team-a", "team-b", "node-0", "f-1", "p-1", "x-1"};
    for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
        body = NULL;
        call(them, "GET", reads[i], NULL, NULL, &body, NULL);
        for (size_t k = 0; body && k < sizeof(names) / sizeof(names[0]); k++)
            r->names_shown += strstr(body, names[k]) != NULL;
        free(body);
    }
    curl_easy_cleanup(me);
    curl_easy_cleanup(them);
    free(args);
    free(pod);
}

/* ---- 5: kill -9 ---- */

struct writer {
    char (*acked)[32];
    int n, cap;
};

/* Submit k-0, k-1, ... as team-a; what got no answer is sent again (the same pod: 200 or 201)
 * until it is answered. */
static void *writer_main(void *arg)
{
    struct writer *w = arg;
    CURL *c = handle(NULL);
    char auth[96];
    bearer(TOKEN_A, auth, sizeof(auth));
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
    for (int k = 0; !atomic_load(&stopping) && w->n < w->cap; k++) {
        char name[32];
        snprintf(name, sizeof(name), "k-%d", k);
        char *body = h_pod("team-a", name, 1, k % 3 ? 0 : 25);
        long st = 0;
        while (!atomic_load(&stopping) && st != 201 && st != 200) {
            st = call(c, "POST", "/v1/pods", auth, body, NULL, NULL);
            if (st != 201 && st != 200)
                nap(0.05);
        }
        if (st == 201 || st == 200)
            memcpy(w->acked[w->n++], name, sizeof(name));
        free(body);
    }
    curl_easy_cleanup(c);
    return NULL;
}

/* Every pod listed (admin, pages of 5,000): acked ones looked for, every card's share summed. */
static void check_pods(const struct attack_opts *o, struct attack_report *r, struct writer *w)
{
    CURL *c = handle(NULL);
    char auth[96], path[96], cont[40] = "";
    bearer(TOKEN_ADMIN, auth, sizeof(auth));
    json_t *seen = json_object();
    uint16_t(*card)[8] = calloc((size_t)o->nodes, sizeof(*card));
    for (;;) {
        char *body = NULL;
        snprintf(path, sizeof(path), "/v1/pods?limit=5000%s%s", cont[0] ? "&continue=" : "", cont);
        if (call(c, "GET", path, auth, NULL, &body, NULL) != 200) {
            free(body);
            r->lost = -1; /* unknown */
            break;
        }
        json_t *j = json_loads(body, 0, NULL), *p;
        size_t i;
        free(body);
        json_array_foreach(json_object_get(j, "items"), i, p)
        {
            const char *name = json_string_value(json_object_get(p, "name"));
            const char *node = json_string_value(json_object_get(p, "node"));
            const char *milli = json_string_value(
                json_object_get(json_object_get(p, "annotations"), "gpusched.io/gpu-milli"));
            json_object_set_new(seen, name ? name : "", json_true());
            int ni = node ? atoi(node + 5) : -1;
            size_t g;
            json_t *gpu;
            json_array_foreach(json_object_get(p, "gpus"), g, gpu)
            {
                int x = (int)json_integer_value(gpu);
                if (ni >= 0 && ni < o->nodes && x >= 0 && x < 8) {
                    card[ni][x] += (uint16_t)(milli ? atoi(milli) : 1000);
                    r->double_booked += card[ni][x] > 1000;
                }
            }
            r->running_checked += node != NULL;
        }
        snprintf(cont, sizeof(cont), "%s", json_string_value(json_object_get(j, "continue")));
        json_decref(j);
        if (!cont[0])
            break;
    }
    for (int i = 0; r->lost >= 0 && i < w->n; i++)
        r->lost += !json_object_get(seen, w->acked[i]);
    r->acked = w->n;
    json_decref(seen);
    free(card);
    curl_easy_cleanup(c);
}

static void kills(const struct attack_opts *o, struct attack_report *r)
{
    struct writer w = {calloc(100000, 32), 0, 100000};
    pthread_t t;
    unsigned seed = o->seed;
    atomic_store(&stopping, 0);
    atomic_store(&killing, 1);
    pthread_create(&t, NULL, writer_main, &w);
    for (int i = 0; i < o->kills; i++) {
        nap(0.2 + (double)(rand_r(&seed) % 1800) / 1000.0); /* a random moment */
        h_kill(&d);
        r->kills_done++;
        if (h_start(&d)) {
            fprintf(stderr, "attack: gpuschedd did not restart (log %s)\n", d.log);
            break;
        }
        atomic_store(&port, d.port);
    }
    nap(0.5);
    atomic_store(&stopping, 1);
    pthread_join(t, NULL);
    atomic_store(&killing, 0);
    check_pods(o, r, &w);
    free(w.acked);
}

/* ---- the run ---- */

void attack_opts_default(struct attack_opts *o, int sanitized)
{
    *o = (struct attack_opts){5000, 20000, 2000, 128, 8, 20, 5, 20.0, 42};
    if (sanitized) { /* the same attack on a fifth of the cluster: the sanitizers are slow */
        o->nodes /= 5;
        o->pods /= 5;
        o->kills = 3;
        o->phase_s = 10.0;
    }
}

/* The test process holds thousands of sockets: the open-file limit raised to its hard limit. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int attack_run(const struct attack_opts *o, struct attack_report *r)
{
    memset(r, 0, sizeof(*r));
    l_lat_init(&r->healthz);
    l_lat_init(&r->filter_under_conns);
    l_lat_init(&r->extender_quiet);
    l_lat_init(&r->post_quiet);
    l_lat_init(&r->extender);
    l_lat_init(&r->post);
    l_lat_init(&r->list);
    l_lat_init(&r->scrape);
    raise_fd_limit();
    signal(SIGPIPE, SIG_IGN);
    if (h_setup(&d, "metrics: {token: " TOKEN_METRICS "}\n"
                    "http: {bodyTimeoutSeconds: 10, headerTimeoutSeconds: 5}\n"))
        return -1;
    /* after h_setup(), which sets it: an O(pods) check under the state lock at each publish,
     * which every extender call and POST would wait for at this scale */
    unsetenv("GPUSCHEDD_VERIFY_SNAPSHOTS");
    if (l_write_nodes(d.nodes, o->nodes) || h_start(&d))
        return -1;
    atomic_store(&port, d.port);
    fprintf(stderr, "attack: gpuschedd pid %d on 127.0.0.1:%d, %d nodes\n", (int)d.pid, d.port,
            o->nodes);
    fill(o, r);
    fprintf(stderr, "attack: %d pods in %.1f s\n", r->filled, r->fill_s);
    resources(o, r);
    fprintf(stderr, "attack: connections and uploads done\n");
    reads(o, r);
    fprintf(stderr, "attack: reads done\n");
    strangers(o, r);
    fprintf(stderr, "attack: strangers done\n");
    kills(o, r);
    fprintf(stderr, "attack: kills done\n");
    int rc = h_stop(&d) == 0 ? 0 : -1;
    h_cleanup(&d);
    return rc;
}

void attack_report_print(struct attack_report *r, const struct attack_opts *o)
{
    printf("fill: %d of %d pods acknowledged in %.1f s (%d nodes)\n", r->filled, o->pods, r->fill_s,
           o->nodes);
    printf("%d idle connections (%d taken, %d still open at the end), %d slow uploads (answered "
           "4xx %d, 5xx %d, cut off %d): RSS %ld MB before, %ld MB at most\n",
           o->idle, r->idle_open_start, r->idle_open_end, o->slow, r->slow_status[4],
           r->slow_status[5], r->slow_status[0], r->rss_before_kb / 1024, r->rss_max_kb / 1024);
    printf("  %d connections from one address: %d kept open\n", r->one_client_tried,
           r->one_client_open);
    printf("  /healthz: %zu answered, %zu not; p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
           r->healthz.n, r->healthz.failed, l_lat_pct(&r->healthz, 0.5),
           l_lat_pct(&r->healthz, 0.99), l_lat_pct(&r->healthz, 1));
    printf("  extender filter (%d nodes): %zu answered, %zu not; p50 %.2f ms, p99 %.2f ms, max "
           "%.2f ms\n",
           o->nodes, r->filter_under_conns.n, r->filter_under_conns.failed,
           l_lat_pct(&r->filter_under_conns, 0.5), l_lat_pct(&r->filter_under_conns, 0.99),
           l_lat_pct(&r->filter_under_conns, 1));
    printf("nothing else running (the yardstick):\n");
    printf("  extender filter + prioritize: %zu answered, %zu not; p50 %.2f ms, p99 %.2f ms, max "
           "%.2f ms\n",
           r->extender_quiet.n, r->extender_quiet.failed, l_lat_pct(&r->extender_quiet, 0.5),
           l_lat_pct(&r->extender_quiet, 0.99), l_lat_pct(&r->extender_quiet, 1));
    printf("  POST /v1/pods: %zu answered 201, %zu not; p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
           r->post_quiet.n, r->post_quiet.failed, l_lat_pct(&r->post_quiet, 0.5),
           l_lat_pct(&r->post_quiet, 0.99), l_lat_pct(&r->post_quiet, 1));
    printf("%d /metrics scrapers (%zu scrapes, p50 %.1f ms; %zu more answered 429) and a tenant "
           "listing 5,000 pods at %d/s (%zu lists, p50 %.1f ms):\n",
           o->scrapers, r->scrape.n, l_lat_pct(&r->scrape, 0.5), r->scrapes_refused, o->list_per_s,
           r->list.n, l_lat_pct(&r->list, 0.5));
    printf("  extender filter + prioritize: %zu answered, %zu not; p50 %.2f ms, p99 %.2f ms, max "
           "%.2f ms\n",
           r->extender.n, r->extender.failed, l_lat_pct(&r->extender, 0.5),
           l_lat_pct(&r->extender, 0.99), l_lat_pct(&r->extender, 1));
    printf("  POST /v1/pods: %zu answered 201, %zu not; p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
           r->post.n, r->post.failed, l_lat_pct(&r->post, 0.5), l_lat_pct(&r->post, 0.99),
           l_lat_pct(&r->post, 1));
    printf("  inside the daemon: %s\n", r->daemon_side);
    printf("strangers: %d requests, %d let in; state changed: %d; names shown without a token: "
           "%d\n",
           r->strangers_tried, r->strangers_let_in, r->state_changed, r->names_shown);
    printf("kill -9: %d times; %d pods acknowledged, %d lost; %d running pods checked, %d cards "
           "double-booked\n",
           r->kills_done, r->acked, r->lost, r->running_checked, r->double_booked);
}

void attack_report_free(struct attack_report *r)
{
    l_lat_free(&r->healthz);
    l_lat_free(&r->filter_under_conns);
    l_lat_free(&r->extender_quiet);
    l_lat_free(&r->post_quiet);
    l_lat_free(&r->extender);
    l_lat_free(&r->post);
    l_lat_free(&r->list);
    l_lat_free(&r->scrape);
}
