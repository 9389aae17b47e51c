/* The integration tests' harness; see harness.h. */
#include "harness.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* A test's extra config follows: more tenants, or keys of its own. */
static const char base_config[] = "apiVersion: gpusched.io/v1alpha1\n"
                                  "kind: DaemonConfig\n"
                                  "adminToken: " TOKEN_ADMIN "\n"
                                  "%s" /* maxBodyBytes */
                                  "tenants:\n"
                                  "  - name: team-a\n"
                                  "    token: " TOKEN_A "\n"
                                  "    namespaces: [team-a]\n"
                                  "  - name: team-b\n"
                                  "    token: " TOKEN_B "\n"
                                  "    namespaces: [team-b, team-b-dev]\n";

/* Four nodes: two 8-card A100 boards, a 4-card T4 box and a CPU-only node. */
static const char nodes_csv[] = "sn,cpu_milli,memory_mib,gpu,model\n"
                                "n-a100-0,96000,786432,8,A100-SXM4-80GB\n"
                                "n-a100-1,96000,786432,8,A100-SXM4-80GB\n"
                                "n-t4-0,64000,262144,4,T4\n"
                                "n-cpu-0,32000,131072,0,\n";

int h_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f) ? -1 : 0;
}

int h_free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) ||
        getsockname(s, (struct sockaddr *)&a, &len)) {
        if (s >= 0)
            close(s);
        return -1;
    }
    close(s);
    return ntohs(a.sin_port);
}

int h_setup(struct daemon *d, const char *extra_config)
{
    memset(d, 0, sizeof(*d));
    snprintf(d->dir, sizeof(d->dir), "/tmp/gs_itest.XXXXXX");
    if (!mkdtemp(d->dir))
        return -1;
    snprintf(d->log, sizeof(d->log), "%s/daemon.log", d->dir);
    snprintf(d->nodes, sizeof(d->nodes), "%s/nodes.csv", d->dir);
    snprintf(d->config, sizeof(d->config), "%s/config.yaml", d->dir);
    char cfg[4096];
    const char *extra = extra_config ? extra_config : "";
    /* bodies of 64 KiB unless the test says otherwise */
    int n = snprintf(cfg, sizeof(cfg), base_config,
                     strstr(extra, "\nmaxBodyBytes:") || !strncmp(extra, "maxBodyBytes:", 13)
                         ? ""
                         : "maxBodyBytes: 65536\n");
    snprintf(cfg + n, sizeof(cfg) - (size_t)n, "%s", extra);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    /* every untouched pod checked against its published view at each publish (snapshot.h) */
    setenv("GPUSCHEDD_VERIFY_SNAPSHOTS", "1", 0);
    return h_write(d->nodes, nodes_csv) || h_write(d->config, cfg) ? -1 : 0;
}

int h_policy(struct daemon *d, const char *text)
{
    snprintf(d->policy, sizeof(d->policy), "%s/policy.yaml", d->dir);
    return h_write(d->policy, text);
}

/* Daemons started and not yet stopped: a test that fails midway (cmocka jumps out of it) leaves
 * its daemon running, so whatever is left is killed when the test binary exits. */
#define LIVE_MAX 64
static pid_t live[LIVE_MAX];

static void kill_live(void)
{
    for (int i = 0; i < LIVE_MAX; i++)
        if (live[i] > 0) {
            kill(live[i], SIGKILL);
            waitpid(live[i], NULL, 0);
        }
}

void h_track(pid_t pid, int on)
{
    static int registered;
    if (!registered)
        registered = atexit(kill_live) == 0;
    for (int i = 0; i < LIVE_MAX; i++)
        if (on ? live[i] <= 0 : live[i] == pid) {
            live[i] = on ? pid : 0;
            return;
        }
}

int h_start(struct daemon *d)
{
    const char *bin = getenv("GPUSCHEDD_BIN");
    char data[96], listen[32];
    if (!bin || !*bin) {
        fprintf(stderr, "GPUSCHEDD_BIN must name the gpuschedd executable\n");
        return -1;
    }
    d->port = h_free_port();
    snprintf(data, sizeof(data), "%s/data", d->dir);
    snprintf(listen, sizeof(listen), "127.0.0.1:%d", d->port);
    char *argv[16] = {(char *)bin, "--data-dir", data, "--listen", listen, "--nodes", d->nodes};
    int argc = 7;
    if (d->config[0]) { /* an empty config: gpuschedd without --config */
        argv[argc++] = "--config";
        argv[argc++] = d->config;
    }
    if (d->policy[0]) {
        argv[argc++] = "--config";
        argv[argc++] = d->policy;
    }
    if (d->tls_cert[0]) {
        argv[argc++] = "--tls-cert";
        argv[argc++] = d->tls_cert;
        argv[argc++] = "--tls-key";
        argv[argc++] = d->tls_key;
    }
    if (d->manual_clock)
        argv[argc++] = "--manual-clock";
    if (d->way[0]) {
        argv[argc++] = "--way";
        argv[argc++] = d->way;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawn(&d->pid, bin, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc)
        return -1;
    h_track(d->pid, 1);
    for (int i = 0; i < 3000; i++) { /* up to 30 s: a sanitizer build restores slowly */
        struct answer a;
        if (h_call(d, "GET", "/healthz", NULL, NULL, &a) == 0 && a.status == 200) {
            h_answer_free(&a);
            return 0;
        }
        h_answer_free(&a);
        int st;
        if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
            h_track(d->pid, 0);
            d->pid = 0;
            return -1;
        }
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    return -1;
}

int h_stop(struct daemon *d)
{
    int st;
    if (d->pid <= 0)
        return -1;
    kill(d->pid, SIGTERM);
    waitpid(d->pid, &st, 0);
    h_track(d->pid, 0);
    d->pid = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void h_kill(struct daemon *d)
{
    if (d->pid <= 0)
        return;
    kill(d->pid, SIGKILL);
    waitpid(d->pid, NULL, 0);
    h_track(d->pid, 0);
    d->pid = 0;
}

void h_cleanup(struct daemon *d)
{
    h_kill(d);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->dir);
    if (getenv("GS_ITEST_KEEP")) /* to read the daemon's log after a failure */
        fprintf(stderr, "kept %s\n", d->dir);
    else if (strncmp(d->dir, "/tmp/gs_itest.", 14) == 0 && system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", d->dir);
    curl_global_cleanup();
}

size_t h_on_body(char *p, size_t sz, size_t n, void *ud)
{
    struct h_sink *b = ud;
    char *m = realloc(b->s, b->len + sz * n + 1);
    if (!m)
        return 0;
    memcpy(m + b->len, p, sz * n);
    b->s = m;
    b->len += sz * n;
    b->s[b->len] = '\0';
    return sz * n;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    struct answer *a = ud;
    if (sz * n > 13 && strncasecmp(p, "Retry-After: ", 13) == 0)
        snprintf(a->retry_after, sizeof(a->retry_after), "%.*s", (int)strcspn(p + 13, "\r\n"),
                 p + 13);
    if (sz * n > 9 && strncasecmp(p, "Warning: ", 9) == 0)
        snprintf(a->warning, sizeof(a->warning), "%.*s", (int)strcspn(p + 9, "\r\n"), p + 9);
    return sz * n;
}

int h_call(const struct daemon *d, const char *method, const char *path, const char *token,
           const char *body, struct answer *a)
{
    return h_call_as(d, method, path, token, NULL, body, a);
}

int h_call_as(const struct daemon *d, const char *method, const char *path, const char *token,
              const char *ctype, const char *body, struct answer *a)
{
    CURL *c = curl_easy_init();
    struct curl_slist *h = NULL;
    struct h_sink b = {0};
    char url[512], auth[256], type[128];
    memset(a, 0, sizeof(*a));
    snprintf(url, sizeof(url), "%s://127.0.0.1:%d%s", d->tls_cert[0] ? "https" : "http", d->port,
             path);
    if (d->tls_cert[0])
        curl_easy_setopt(c, CURLOPT_CAINFO, d->tls_cert);
    if (token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
    }
    if (ctype || body) { /* libcurl would say application/x-www-form-urlencoded */
        snprintf(type, sizeof(type), "Content-Type: %s", ctype ? ctype : "application/json");
        h = curl_slist_append(h, type);
    }
    h = curl_slist_append(h, "Expect:"); /* no 100-continue round trip */
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, h_on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a->status);
    a->body = b.s;
    a->json = b.s ? json_loads(b.s, 0, NULL) : NULL;
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return rc == CURLE_OK ? 0 : -1;
}

void h_answer_free(struct answer *a)
{
    free(a->body);
    json_decref(a->json);
    memset(a, 0, sizeof(*a));
}

json_t *h_verb(const struct daemon *d, const char *verb, json_t *args)
{
    char path[64], *body = json_dumps(args, JSON_COMPACT);
    struct answer a;
    json_decref(args);
    snprintf(path, sizeof(path), "/extender/%s", verb);
    int ok = body && h_call(d, "POST", path, TOKEN_ADMIN, body, &a) == 0 && a.status == 200;
    json_t *j = ok ? json_incref(a.json) : NULL;
    free(body);
    if (body)
        h_answer_free(&a);
    return j;
}

char *h_pod(const char *ns, const char *name, int gpus, int cores)
{
    json_t *lim = json_pack("{s:i, s:s, s:s}", "nvidia.com/gpu", gpus, "cpu", "1", "memory", "1Gi");
    if (cores > 0 && cores < 100)
        json_object_set_new(lim, "nvidia.com/gpucores", json_integer(cores));
    json_t *pod =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:[{s:s, s:{s:o}}]}}", "apiVersion", "v1",
                  "kind", "Pod", "metadata", "name", name, "namespace", ns, "labels", "user", "u1",
                  "spec", "containers", "name", "main", "resources", "limits", lim);
    char *s = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    return s;
}

char *h_pod_annotated(const char *ns, const char *name, int gpus, int cores, const char *key,
                      const char *value)
{
    char *body = h_pod(ns, name, gpus, cores);
    json_t *pod = key ? json_loads(body, 0, NULL) : NULL;
    if (!pod)
        return body;
    free(body);
    json_object_set_new(json_object_get(pod, "metadata"), "annotations",
                        json_pack("{s:s}", key, value));
    body = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    return body;
}

json_t *h_extender(const struct daemon *d, const char *verb, const char *pod,
                   const char *const *nodes, size_t n)
{
    json_t *p = json_loads(pod, 0, NULL), *args;
    if (!strcmp(verb, "bind")) {
        const json_t *m = json_object_get(p, "metadata");
        args = json_pack("{s:O, s:O, s:s}", "PodName", json_object_get(m, "name"), "PodNamespace",
                         json_object_get(m, "namespace"), "Node", n ? nodes[0] : "");
    } else {
        json_t *names = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(names, json_string(nodes[i]));
        args = json_pack("{s:O, s:o}", "Pod", p, "NodeNames", names);
    }
    json_decref(p);
    char *body = args ? json_dumps(args, JSON_COMPACT) : NULL, path[64];
    json_decref(args);
    struct answer a = {0};
    snprintf(path, sizeof(path), "/extender/%s", verb);
    int rc = body ? h_call(d, "POST", path, TOKEN_ADMIN, body, &a) : -1;
    free(body);
    json_t *j = !rc && a.status == 200 ? json_incref(a.json) : NULL;
    h_answer_free(&a);
    return j;
}

/* Lines of the daemon's log containing @needle, up to @most. */
static int log_count(const struct daemon *d, const char *needle, int most)
{
    FILE *f = fopen(d->log, "r");
    char line[4096];
    int found = 0;
    while (f && found < most && fgets(line, sizeof(line), f))
        found += strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return found;
}

int h_log_has(const struct daemon *d, const char *needle)
{
    return log_count(d, needle, 1);
}

int h_reload(const struct daemon *d)
{
    int before = log_count(d, "config reloaded", INT_MAX);
    kill(d->pid, SIGHUP);
    for (int i = 0; i < 1000 && log_count(d, "config reloaded", INT_MAX) == before; i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    return log_count(d, "config reloaded", INT_MAX) > before ? 0 : -1;
}
