/* The end-to-end tests' control plane; see kcluster.h. */
#include "kcluster.h"
#include "../common/harness.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

extern char **environ;

#define TOKEN_SCHED "e2e-scheduler-0123456789abcdef"
#define TOKEN_GSD   "e2e-gpuschedd-0123456789abcdef"
/* What kube-scheduler's extender section of the shipped configuration names, and what the test
 * puts in its place. */
#define SHIPPED_URL       "https://gpuschedd.gpusched-system.svc:8443/extender"
#define SHIPPED_KUBECONF  "/etc/kubernetes/scheduler.conf"
#define SHIPPED_TLS_DIR   "/etc/kubernetes/gpusched-extender/"
#define SHIPPED_SCHEDULER "deploy/kube-scheduler-extender-v1beta1.yaml"

void kc_sleep_ms(int ms)
{
    nanosleep(&(struct timespec){ms / 1000, (long)(ms % 1000) * 1000000L}, NULL);
}

/* The whole file (malloc'd), or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long n = -1;
    if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
        (s = malloc((size_t)n + 1)) && fread(s, 1, (size_t)n, f) == (size_t)n)
        s[n] = '\0';
    else if (s) {
        free(s);
        s = NULL;
    }
    if (f)
        fclose(f);
    return s;
}

/* @s with every @from replaced by @to (malloc'd). */
static char *replace(const char *s, const char *from, const char *to)
{
    size_t n = 0, fl = strlen(from), tl = strlen(to);
    for (const char *p = s; (p = strstr(p, from)); p += fl)
        n++;
    char *out = malloc(strlen(s) + n * tl + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *p = s, *q; *p; p = q + fl) {
        q = strstr(p, from);
        size_t k = q ? (size_t)(q - p) : strlen(p);
        memcpy(o, p, k);
        o += k;
        if (!q)
            break;
        memcpy(o, to, tl);
        o += tl;
    }
    *o = '\0';
    return out;
}

static int spawn(struct kproc *p, char *const argv[])
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, p->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    int rc = posix_spawn(&p->pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) {
        fprintf(stderr, "kcluster: cannot start %s: %s\n", argv[0], strerror(rc));
        p->pid = 0;
        return -1;
    }
    h_track(p->pid, 1);
    return 0;
}

/* Is @p still running? Prints its log's tail when it is not. */
static int alive(struct kproc *p)
{
    int st;
    if (p->pid <= 0 || waitpid(p->pid, &st, WNOHANG) != p->pid)
        return p->pid > 0;
    h_track(p->pid, 0);
    p->pid = 0;
    fprintf(stderr, "kcluster: %s exited; its log:\n", p->log);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "tail -n 40 '%s' >&2", p->log);
    if (system(cmd) != 0)
        fprintf(stderr, "(no log)\n");
    return 0;
}

static void stop(struct kproc *p, int sig)
{
    if (p->pid <= 0)
        return;
    kill(p->pid, sig);
    for (int i = 0; i < 1000; i++) {
        if (waitpid(p->pid, NULL, WNOHANG) == p->pid)
            break;
        if (i == 999) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, NULL, 0);
        }
        kc_sleep_ms(10);
    }
    h_track(p->pid, 0);
    p->pid = 0;
}

/* One HTTP(S) call to @url; the CA of the cluster's folder checks the server; @cert (a file
 * prefix: @cert.crt, @cert.key) is the client certificate, or NULL. */
static int http_as(const struct kcluster *c, const char *method, const char *url, const char *token,
                   const char *cert, const char *ctype, const char *body, struct kanswer *a)
{
    CURL *h = curl_easy_init();
    struct curl_slist *hd = NULL;
    struct h_sink b = {0};
    char ca[128], line[256];
    memset(a, 0, sizeof(*a));
    if (!h)
        return -1;
    snprintf(ca, sizeof(ca), "%s/ca.crt", c->dir);
    if (token) {
        snprintf(line, sizeof(line), "Authorization: Bearer %s", token);
        hd = curl_slist_append(hd, line);
    }
    snprintf(line, sizeof(line), "Content-Type: %s", ctype ? ctype : "application/json");
    hd = curl_slist_append(hd, line);
    hd = curl_slist_append(hd, "Expect:");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_CAINFO, ca);
    char crt[256], key[256];
    if (cert) {
        snprintf(crt, sizeof(crt), "%s.crt", cert);
        snprintf(key, sizeof(key), "%s.key", cert);
        curl_easy_setopt(h, CURLOPT_SSLCERT, crt);
        curl_easy_setopt(h, CURLOPT_SSLKEY, key);
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, h_on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (body)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->status);
    a->body = b.s;
    a->json = b.s ? json_loads(b.s, 0, NULL) : NULL;
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
    return rc == CURLE_OK ? 0 : -1;
}

static int http(const struct kcluster *c, const char *method, const char *url, const char *token,
                const char *ctype, const char *body, struct kanswer *a)
{
    return http_as(c, method, url, token, NULL, ctype, body, a);
}

int kc_api(const struct kcluster *c, const char *method, const char *path, const char *body,
           struct kanswer *a)
{
    char url[1024];
    snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", c->api_port, path);
    return http(c, method, url, KC_TOKEN_ADMIN,
                !strcmp(method, "PATCH") ? "application/merge-patch+json" : NULL, body, a);
}

int kc_gsd(const struct kcluster *c, const char *method, const char *path, const char *token,
           const char *body, struct kanswer *a)
{
    return kc_gsd_as(c, method, path, token, NULL, body, a);
}

int kc_gsd_as(const struct kcluster *c, const char *method, const char *path, const char *token,
              const char *cert, const char *body, struct kanswer *a)
{
    char url[1024];
    snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", c->gsd_port, path);
    return http_as(c, method, url, token, cert, NULL, body, a);
}

void kc_answer_free(struct kanswer *a)
{
    free(a->body);
    json_decref(a->json);
    memset(a, 0, sizeof(*a));
}

int kc_api_ok(const struct kcluster *c, const char *method, const char *path, const char *body,
              long want)
{
    struct kanswer a;
    int rc = kc_api(c, method, path, body, &a);
    int ok = !rc && a.status == want;
    if (!ok)
        fprintf(stderr, "kcluster: %s %s: HTTP %ld, want %ld: %.600s\n", method, path, a.status,
                want, a.body ? a.body : "(no answer)");
    kc_answer_free(&a);
    return ok ? 0 : -1;
}

/* Wait up to @secs for GET @url to answer 200 while @p runs. */
static int wait_ready(const struct kcluster *c, struct kproc *p, const char *url, const char *token,
                      int secs)
{
    for (int i = 0; i < secs * 10; i++) {
        struct kanswer a;
        int ok = !http(c, "GET", url, token, NULL, NULL, &a) && a.status == 200;
        kc_answer_free(&a);
        if (ok)
            return 0;
        if (!alive(p))
            return -1;
        kc_sleep_ms(100);
    }
    fprintf(stderr, "kcluster: %s not ready after %d s (log %s)\n", url, secs, p->log);
    return -1;
}

/* A libyaml scalar @n as JSON: a plain (unquoted) true, false or whole number as that (a CRD's
 * schema has integer defaults and bounds, served: true), anything else as a string. */
static json_t *yaml_scalar(const yaml_node_t *n)
{
    const char *v = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    char *end = NULL;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || !len)
        return json_stringn(v, len);
    if (!strcmp(v, "true") || !strcmp(v, "false"))
        return json_boolean(v[0] == 't');
    errno = 0;
    long long i = strtoll(v, &end, 10);
    return end == v + len && !errno && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9'))
               ? json_integer(i)
               : json_stringn(v, len);
}

/* A libyaml node as JSON: mappings, sequences, and scalars (yaml_scalar()); enough for RBAC and
 * a CustomResourceDefinition. */
static json_t *yaml_json(yaml_document_t *doc, yaml_node_t *n)
{
    json_t *j = NULL;
    if (n->type == YAML_SCALAR_NODE)
        return yaml_scalar(n);
    if (n->type == YAML_SEQUENCE_NODE) {
        j = json_array();
        for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top;
             i++)
            json_array_append_new(j, yaml_json(doc, yaml_document_get_node(doc, *i)));
        return j;
    }
    j = json_object();
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k->type == YAML_SCALAR_NODE)
            json_object_set_new(j, (const char *)k->data.scalar.value,
                                yaml_json(doc, yaml_document_get_node(doc, p->value)));
    }
    return j;
}

/* Create the RBAC objects (ClusterRole, ClusterRoleBinding) and the Namespace of @file. */
static int apply_rbac(const struct kcluster *c, const char *file)
{
    FILE *f = fopen(file, "rb");
    yaml_parser_t y;
    int rc = f ? 0 : -1;
    if (!f || !yaml_parser_initialize(&y)) {
        if (f)
            fclose(f);
        return -1;
    }
    yaml_parser_set_input_file(&y, f);
    for (;;) {
        yaml_document_t doc;
        if (!yaml_parser_load(&y, &doc)) {
            rc = -1;
            break;
        }
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        if (!root) {
            yaml_document_delete(&doc);
            break;
        }
        json_t *o = yaml_json(&doc, root);
        const char *kind = json_string_value(json_object_get(o, "kind"));
        const char *path = !kind                                 ? NULL
                           : !strcmp(kind, "ClusterRole")        ? "clusterroles"
                           : !strcmp(kind, "ClusterRoleBinding") ? "clusterrolebindings"
                                                                 : NULL;
        char url[128], *body = json_dumps(o, JSON_COMPACT);
        snprintf(url, sizeof(url), "/apis/rbac.authorization.k8s.io/v1/%s", path ? path : "");
        if (path && kc_api_ok(c, "POST", url, body, 201))
            rc = -1;
        free(body);
        json_decref(o);
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&y);
    fclose(f);
    return rc;
}

/* The first document of YAML @file as JSON (new reference), or NULL. */
static json_t *yaml_file_json(const char *file)
{
    FILE *f = fopen(file, "rb");
    yaml_parser_t y;
    yaml_document_t doc;
    json_t *o = NULL;
    if (!f || !yaml_parser_initialize(&y)) {
        if (f)
            fclose(f);
        return NULL;
    }
    yaml_parser_set_input_file(&y, f);
    if (yaml_parser_load(&y, &doc)) {
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        o = root ? yaml_json(&doc, root) : NULL;
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&y);
    fclose(f);
    return o;
}

/* Has CustomResourceDefinition @name the condition Established True yet? */
static int crd_established(const struct kcluster *c, const char *name)
{
    char path[256];
    struct kanswer a;
    int ok = 0;
    snprintf(path, sizeof(path), "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/%s",
             name);
    if (!kc_api(c, "GET", path, NULL, &a) && a.status == 200) {
        size_t i;
        json_t *cond;
        json_array_foreach(json_object_get(json_object_get(a.json, "status"), "conditions"), i,
                           cond)
        {
            const char *t = json_string_value(json_object_get(cond, "type"));
            const char *st = json_string_value(json_object_get(cond, "status"));
            ok |= t && st && !strcmp(t, "Established") && !strcmp(st, "True");
        }
    }
    kc_answer_free(&a);
    return ok;
}

/* Is CustomResourceDefinition @name Established and its collection @list ("/apis/G/V/PLURAL")
 * served? Established comes first: the API server installs the resource's handler just after. */
static int crd_served(const struct kcluster *c, const char *name, const char *list)
{
    struct kanswer a;
    if (!crd_established(c, name))
        return 0;
    int ok = !kc_api(c, "GET", list, NULL, &a) && a.status == 200;
    kc_answer_free(&a);
    return ok;
}

int kc_crd(const struct kcluster *c, const char *file)
{
    json_t *crd = yaml_file_json(file), *spec = json_object_get(crd, "spec");
    const char *name = json_string_value(json_object_get(json_object_get(crd, "metadata"), "name"));
    const char *group = json_string_value(json_object_get(spec, "group"));
    const char *plural =
        json_string_value(json_object_get(json_object_get(spec, "names"), "plural"));
    const char *version = json_string_value(
        json_object_get(json_array_get(json_object_get(spec, "versions"), 0), "name"));
    char *body = json_dumps(crd, JSON_COMPACT), list[256];
    int rc = !name || !group || !plural || !version || !body ? -1 : 0;
    if (rc)
        fprintf(stderr, "kcluster: %s is no CustomResourceDefinition\n", file);
    rc = rc ||
         kc_api_ok(c, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body, 201);
    snprintf(list, sizeof(list), "/apis/%s/%s/%s", group ? group : "", version ? version : "",
             plural ? plural : "");
    for (int i = 0; !rc && !crd_served(c, name, list); i++) {
        if (i == 300) {
            fprintf(stderr, "kcluster: %s not established and served after 30 s\n", name);
            rc = -1;
        }
        kc_sleep_ms(100);
    }
    free(body);
    json_decref(crd);
    return rc ? -1 : 0;
}

static int start_etcd(struct kcluster *c)
{
    char data[128], client[64], peer[64], initial[96];
    int peer_port = h_free_port();
    c->etcd_port = h_free_port();
    /* etcd syncs every write: in memory, the control plane starts in seconds, not minutes */
    struct stat st;
    snprintf(data, sizeof(data), "%s/etcd%s", stat("/dev/shm", &st) ? c->dir : "/dev/shm/gs",
             c->dir + 4);
    snprintf(client, sizeof(client), "http://127.0.0.1:%d", c->etcd_port);
    snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", peer_port);
    snprintf(initial, sizeof(initial), "default=%s", peer);
    snprintf(c->etcd.log, sizeof(c->etcd.log), "%s/etcd.log", c->dir);
    char *argv[] = {"/usr/bin/etcd",
                    "--name=default",
                    "--data-dir",
                    data,
                    "--listen-client-urls",
                    client,
                    "--advertise-client-urls",
                    client,
                    "--listen-peer-urls",
                    peer,
                    "--initial-advertise-peer-urls",
                    peer,
                    "--initial-cluster",
                    initial,
                    "--log-level=warn",
                    NULL};
    char url[96];
    snprintf(url, sizeof(url), "%s/health", client);
    return spawn(&c->etcd, argv) || wait_ready(c, &c->etcd, url, NULL, 60);
}

static int start_apiserver(struct kcluster *c)
{
    char bin[600], etcd[64], port[32], f[8][160], url[96];
    const char *names[8] = {"tokens.csv", "apiserver.crt", "apiserver.key", "ca.crt",
                            "sa.pub",     "sa.key",        "audit.log",     "audit-policy.yaml"};
    for (int i = 0; i < 8; i++)
        snprintf(f[i], sizeof(f[i]), "%s/%s", c->dir, names[i]);
    /* the API server's own record of every Eviction asked of it (kc_audit_count()) */
    if (h_write(f[7], "apiVersion: audit.k8s.io/v1\nkind: Policy\n"
                      "omitStages: [RequestReceived]\nrules:\n"
                      "  - level: Metadata\n"
                      "    resources: [{group: \"\", resources: [pods/eviction]}]\n"
                      "  - level: None\n"))
        return -1;
    char tokens[512];
    snprintf(tokens, sizeof(tokens),
             "%s,e2e-admin,1,system:masters\n"
             "%s,system:kube-scheduler,2\n"
             "%s,system:serviceaccount:gpusched-system:gpuschedd,3,system:serviceaccounts\n",
             KC_TOKEN_ADMIN, TOKEN_SCHED, TOKEN_GSD);
    if (h_write(f[0], tokens))
        return -1;
    c->api_port = h_free_port();
    snprintf(bin, sizeof(bin), "%s/kube-apiserver", c->kube_dir);
    snprintf(etcd, sizeof(etcd), "--etcd-servers=http://127.0.0.1:%d", c->etcd_port);
    snprintf(port, sizeof(port), "--secure-port=%d", c->api_port);
    snprintf(c->api.log, sizeof(c->api.log), "%s/kube-apiserver.log", c->dir);
    char *argv[] = {bin, etcd, port, "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
                    "--insecure-port=0", "--token-auth-file", f[0], "--tls-cert-file", f[1],
                    "--tls-private-key-file", f[2], "--client-ca-file", f[3],
                    "--service-account-key-file", f[4], "--service-account-signing-key-file", f[5],
                    "--service-account-issuer=https://kubernetes.default.svc",
                    "--service-cluster-ip-range=10.0.0.0/24", "--authorization-mode=RBAC",
                    /* no controller-manager makes the default ServiceAccounts or takes a
                     * Ready node's not-ready taint away */
                    "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
                    "--endpoint-reconciler-type=none", "--cert-dir", c->dir, "--v=1",
                    "--audit-policy-file", f[7], "--audit-log-path", f[6], NULL};
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/readyz", c->api_port);
    return spawn(&c->api, argv) || wait_ready(c, &c->api, url, KC_TOKEN_ADMIN, 120);
}

static int write_gsd_config(struct kcluster *c, const char *extra)
{
    char path[128], text[4096];
    snprintf(path, sizeof(path), "%s/gpuschedd.yaml", c->dir);
    snprintf(text, sizeof(text),
             "apiVersion: gpusched.io/v1alpha1\n"
             "kind: DaemonConfig\n"
             "adminToken: " KC_TOKEN_ADMIN "\n"
             "extender:\n"
             "  maxBodyBytes: 33554432\n"
             "tenants:\n"
             "  - name: team-a\n"
             "    token: " KC_TOKEN_TEAM_A "\n"
             "    namespaces: [team-a]\n"
             "  - name: team-b\n"
             "    token: e2e-team-b-0123456789abcdef\n"
             "    namespaces: [team-b]\n"
             "kubernetes:\n"
             "  apiServer: https://127.0.0.1:%d\n"
             "  tokenFile: %s/gpuschedd.token\n"
             "  caFile: %s/ca.crt\n"
             "  timeoutSeconds: 4\n"
             "%s",
             c->api_port, c->dir, c->dir, extra ? extra : "");
    snprintf(c->gsd_config, sizeof(c->gsd_config), "%s", path);
    char tok[128];
    snprintf(tok, sizeof(tok), "%s/gpuschedd.token", c->dir);
    return h_write(path, text) || h_write(tok, TOKEN_GSD "\n");
}

int kc_start_gsd(struct kcluster *c)
{
    const char *bin = getenv("GPUSCHEDD_BIN");
    char data[96], listen[32], cert[96], key[96], url[96], ca[96];
    if (!bin || !*bin) {
        fprintf(stderr, "kcluster: GPUSCHEDD_BIN must name gpuschedd\n");
        return -1;
    }
    snprintf(data, sizeof(data), "%s/gsd-data", c->dir);
    snprintf(listen, sizeof(listen), "127.0.0.1:%d", c->gsd_port);
    snprintf(cert, sizeof(cert), "%s/gpuschedd.crt", c->dir);
    snprintf(key, sizeof(key), "%s/gpuschedd.key", c->dir);
    snprintf(ca, sizeof(ca), "%s/ca.crt", c->dir);
    snprintf(c->gsd.log, sizeof(c->gsd.log), "%s/gpuschedd.log", c->dir);
    char *argv[20] = {(char *)bin, "--data-dir", data,       "--listen",        listen,
                      "--nodes",   "kubernetes", "--config", c->gsd_config,     "--tls-cert",
                      cert,        "--tls-key",  key,        "--tls-client-ca", ca};
    if (c->gsd_policy[0]) {
        argv[15] = "--config";
        argv[16] = c->gsd_policy;
    }
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/healthz", c->gsd_port);
    return spawn(&c->gsd, argv) || wait_ready(c, &c->gsd, url, NULL, 60);
}

void kc_kill_gsd(struct kcluster *c)
{
    stop(&c->gsd, SIGKILL);
}

/* kube-scheduler's kubeconfig and the shipped configuration pointed at this folder. */
static int write_sched_config(struct kcluster *c)
{
    char path[128], text[1024], url[96], tls[80];
    snprintf(path, sizeof(path), "%s/scheduler.conf", c->dir);
    snprintf(text, sizeof(text),
             "apiVersion: v1\nkind: Config\n"
             "clusters: [{name: e2e, cluster: {server: \"https://127.0.0.1:%d\", "
             "certificate-authority: \"%s/ca.crt\"}}]\n"
             "users: [{name: scheduler, user: {token: " TOKEN_SCHED "}}]\n"
             "contexts: [{name: e2e, context: {cluster: e2e, user: scheduler}}]\n"
             "current-context: e2e\n",
             c->api_port, c->dir);
    if (h_write(path, text))
        return -1;
    char *shipped = slurp(SHIPPED_SCHEDULER);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/extender", c->gsd_port);
    snprintf(tls, sizeof(tls), "%s/", c->dir);
    char *a = shipped ? replace(shipped, SHIPPED_URL, url) : NULL;
    char *b = a ? replace(a, SHIPPED_KUBECONF, path) : NULL;
    char *d = b ? replace(b, SHIPPED_TLS_DIR, tls) : NULL;
    char *cut = d && c->plain ? strstr(d, "\nextenders:") : NULL;
    if (cut) /* the same configuration without the extender */
        cut[1] = '\0';
    snprintf(c->sched_config, sizeof(c->sched_config), "%s/kube-scheduler.yaml", c->dir);
    /* its health and metrics ports (10251 by default, whatever --port says) on free ones */
    char ports[128];
    snprintf(ports, sizeof(ports),
             "healthzBindAddress: 127.0.0.1:%d\nmetricsBindAddress: 127.0.0.1:%d\n", h_free_port(),
             h_free_port());
    int rc = !d || !strstr(shipped, SHIPPED_URL) || h_write(c->sched_config, d) ? -1 : 0;
    FILE *f = rc ? NULL : fopen(c->sched_config, "a");
    rc = rc || !f || fputs(ports, f) < 0 ? -1 : 0;
    if (f && fclose(f))
        rc = -1;
    if (rc)
        fprintf(stderr, "kcluster: cannot adapt %s (does it still name %s?)\n", SHIPPED_SCHEDULER,
                SHIPPED_URL);
    free(shipped);
    free(a);
    free(b);
    free(d);
    return rc;
}

static int start_scheduler(struct kcluster *c)
{
    char bin[600], cfg[200];
    snprintf(bin, sizeof(bin), "%s/kube-scheduler", c->kube_dir);
    snprintf(cfg, sizeof(cfg), "--config=%s", c->sched_config);
    snprintf(c->sched.log, sizeof(c->sched.log), "%s/kube-scheduler.log", c->dir);
    char *argv[] = {bin, cfg, "--port=0", "--secure-port=0", "--v=2", NULL};
    if (spawn(&c->sched, argv))
        return -1;
    /* ready once it leads: its Lease names it */
    for (int i = 0; i < 600; i++) {
        struct kanswer a;
        kc_api(c, "GET",
               "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler", NULL,
               &a);
        int ok = a.status == 200;
        kc_answer_free(&a);
        if (ok)
            return 0;
        if (!alive(&c->sched))
            return -1;
        kc_sleep_ms(100);
    }
    fprintf(stderr, "kcluster: kube-scheduler took no lease in 60 s\n");
    return -1;
}

int kc_namespace(const struct kcluster *c, const char *ns)
{
    char body[256];
    struct kanswer a;
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", ns);
    int rc = kc_api(c, "POST", "/api/v1/namespaces", body, &a);
    rc = !rc && (a.status == 201 || a.status == 409) ? 0 : -1;
    kc_answer_free(&a);
    return rc;
}

int kc_node(const struct kcluster *c, const struct knode *n)
{
    char count[16], mem[16], cpu[32], host[32];
    const char *name = n->name, *product = n->product, *zone = n->zone ? n->zone : "zone-a";
    int gpus = n->gpus;
    snprintf(count, sizeof(count), "%d", gpus);
    snprintf(mem, sizeof(mem), "%d", n->gpu_mem_mib ? n->gpu_mem_mib : 81920);
    snprintf(cpu, sizeof(cpu), "%lldm", (long long)(n->cpu_milli ? n->cpu_milli : 96000));
    snprintf(host, sizeof(host), "%lldMi", (long long)(n->memory_mib ? n->memory_mib : 786432));
    json_t *res = json_pack("{s:s, s:s, s:s, s:s}", "cpu", cpu, "memory", host, "pods", "250",
                            "nvidia.com/gpu", count);
    json_t *labels = json_pack("{s:s, s:s}", "kubernetes.io/hostname", name,
                               "topology.kubernetes.io/zone", zone);
    if (gpus > 0) {
        json_object_set_new(labels, "nvidia.com/gpu.product", json_string(product));
        json_object_set_new(labels, "nvidia.com/gpu.count", json_string(count));
        json_object_set_new(labels, "nvidia.com/gpu.memory", json_string(mem));
        json_object_set_new(labels, "nvidia.com/gpu.present", json_string("true"));
    }
    json_t *node = json_pack("{s:s, s:s, s:{s:s, s:o}, s:{s:O, s:O, s:[{s:s, s:s, s:s}]}}",
                             "apiVersion", "v1", "kind", "Node", "metadata", "name", name, "labels",
                             labels, "status", "capacity", res, "allocatable", res, "conditions",
                             "type", "Ready", "status", "True", "reason", "KubeletReady");
    json_decref(res);
    char *body = json_dumps(node, JSON_COMPACT);
    json_decref(node);
    int rc = body ? kc_api_ok(c, "POST", "/api/v1/nodes", body, 201) : -1;
    free(body);
    return rc;
}

/* kc_start(), kc_start_plain() (@plain) and kc_start_crd() (@crd: a CRD file, or NULL). */
static int start(struct kcluster *c, const char *nodes_csv, const char *gsd_extra,
                 const char *gsd_policy, int plain, const char *crd)
{
    char cmd[512], path[128];
    memset(c, 0, sizeof(*c));
    c->plain = plain;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const char *kd = getenv("GS_KUBE_DIR");
    FILE *f = kd && *kd ? NULL : popen("scripts/build-kubernetes --path", "r");
    if (f) { /* meson test run by hand: the binaries already built, if they are */
        if (!fgets(c->kube_dir, sizeof(c->kube_dir), f))
            c->kube_dir[0] = '\0';
        c->kube_dir[strcspn(c->kube_dir, "\n")] = '\0';
        pclose(f);
    } else if (kd) {
        snprintf(c->kube_dir, sizeof(c->kube_dir), "%s", kd);
    }
    if (!c->kube_dir[0]) {
        fprintf(stderr,
                "kcluster: no kube-apiserver and kube-scheduler: run scripts/build-kubernetes "
                "(make test does) or name their folder in GS_KUBE_DIR\n");
        return -1;
    }
    snprintf(c->dir, sizeof(c->dir), "/tmp/gs_e2e.XXXXXX");
    if (!mkdtemp(c->dir))
        return -1;
    snprintf(cmd, sizeof(cmd),
             "deploy/tls/make-certs '%s' IP:127.0.0.1 >/dev/null && tests/e2e/apiserver-certs '%s'",
             c->dir, c->dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "kcluster: making certificates failed\n");
        return -1;
    }
    snprintf(path, sizeof(path), "%s/nodes.csv", c->dir);
    if (h_write(path, nodes_csv) || start_etcd(c) || start_apiserver(c) ||
        apply_rbac(c, "deploy/gpuschedd.yaml"))
        return -1;
    /* the Nodes gpuschedd reads (--nodes kubernetes), from CSV rows
     * sn,cpu_milli,memory_mib,gpu,model */
    char line[256];
    const char *p = strchr(nodes_csv, '\n');
    while (p && *++p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(line, sizeof(line), "%.*s", (int)n, p);
        char name[64] = "", model[64] = "";
        struct knode kn = {name, model, 0, 0, 0, 0, NULL};
        if (sscanf(line, "%63[^,],%lld,%lld,%d,%63s", name, &kn.cpu_milli, &kn.memory_mib, &kn.gpus,
                   model) < 4 ||
            kc_node(c, &kn))
            return -1;
        p = e;
    }
    if (gsd_policy) {
        snprintf(c->gsd_policy, sizeof(c->gsd_policy), "%s/policy.yaml", c->dir);
        if (h_write(c->gsd_policy, gsd_policy))
            return -1;
    }
    /* before gpuschedd: it lists the resource at once, not at its next try a minute later */
    if (crd && kc_crd(c, crd))
        return -1;
    c->gsd_port = h_free_port();
    if (plain)
        return write_sched_config(c) || start_scheduler(c) ? -1 : 0;
    return write_gsd_config(c, gsd_extra) || kc_start_gsd(c) || write_sched_config(c) ||
                   start_scheduler(c)
               ? -1
               : 0;
}

int kc_start(struct kcluster *c, const char *nodes_csv, const char *gsd_extra,
             const char *gsd_policy)
{
    return start(c, nodes_csv, gsd_extra, gsd_policy, 0, NULL);
}

int kc_start_crd(struct kcluster *c, const char *nodes_csv, const char *crd)
{
    return start(c, nodes_csv, NULL, NULL, 0, crd);
}

int kc_start_plain(struct kcluster *c, const char *nodes_csv)
{
    return start(c, nodes_csv, NULL, NULL, 1, NULL);
}

void kc_stop(struct kcluster *c)
{
    stop(&c->sched, SIGTERM);
    stop(&c->gsd, SIGTERM);
    stop(&c->api, SIGTERM);
    stop(&c->etcd, SIGTERM);
    char cmd[256];
    if (getenv("GS_E2E_KEEP")) {
        fprintf(stderr, "kcluster: kept %s\n", c->dir);
    } else if (!strncmp(c->dir, "/tmp/gs_e2e.", 12)) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' '/dev/shm/gs/etcd%s'", c->dir, c->dir + 4);
        if (system(cmd) != 0)
            fprintf(stderr, "kcluster: cannot remove %s\n", c->dir);
    }
    curl_global_cleanup();
}

int kc_pod(const struct kcluster *c, const char *ns, const char *name, const char *resources,
           const char *extra)
{
    json_t *lim = json_loads(resources, 0, NULL);
    if (!lim)
        return -1;
    if (!json_object_get(lim, "cpu"))
        json_object_set_new(lim, "cpu", json_string("1"));
    if (!json_object_get(lim, "memory"))
        json_object_set_new(lim, "memory", json_string("1Gi"));
    json_t *pod =
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:s, s:{s:o}}]}}", "apiVersion", "v1",
                  "kind", "Pod", "metadata", "name", name, "namespace", ns, "spec", "containers",
                  "name", "main", "image", "registry.invalid/train:1", "resources", "limits", lim);
    json_t *more = extra ? json_loads(extra, 0, NULL) : NULL;
    if (more) {
        json_object_update_recursive(pod, more);
        json_decref(more);
    }
    char *body = json_dumps(pod, JSON_COMPACT), path[128];
    json_decref(pod);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
    /* a busy machine may time a create out: sent again, 409 (it got there the first time) is
     * as good as 201 */
    struct kanswer a = {0};
    int lost = body ? kc_api(c, "POST", path, body, &a) : 0, rc = !body || a.status != 201;
    for (int again = 0; lost && again < 2; again++) {
        kc_answer_free(&a);
        lost = kc_api(c, "POST", path, body, &a);
        rc = lost || (a.status != 201 && a.status != 409);
    }
    if (rc)
        fprintf(stderr, "kcluster: POST %s: HTTP %ld: %.400s\n", path, a.status,
                a.body ? a.body : "(no answer)");
    kc_answer_free(&a);
    free(body);
    return rc ? -1 : 0;
}

int kc_delete_pod(const struct kcluster *c, const char *ns, const char *name, int grace)
{
    char path[256];
    struct kanswer a;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
    if (grace >= 0)
        snprintf(path + strlen(path), sizeof(path) - strlen(path), "?gracePeriodSeconds=%d", grace);
    int rc = kc_api(c, "DELETE", path, NULL, &a);
    rc = !rc && (a.status == 200 || a.status == 202 || a.status == 404) ? 0 : -1;
    kc_answer_free(&a);
    return rc;
}

json_t *kc_get_pod(const struct kcluster *c, const char *ns, const char *name)
{
    char path[256];
    struct kanswer a;
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
    json_t *j = !kc_api(c, "GET", path, NULL, &a) && a.status == 200 ? json_incref(a.json) : NULL;
    kc_answer_free(&a);
    return j;
}

const char *kc_wait_bound(const struct kcluster *c, const char *ns, const char *name,
                          int timeout_ms, char *node, size_t cap)
{
    node[0] = '\0';
    for (int waited = 0; waited <= timeout_ms; waited += 50) {
        json_t *p = kc_get_pod(c, ns, name);
        const char *n = json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
        if (n)
            snprintf(node, cap, "%s", n);
        json_decref(p);
        if (node[0])
            break;
        kc_sleep_ms(50);
    }
    return node;
}

int kc_wait_event(const struct kcluster *c, const char *ns, const char *name, const char *reason,
                  const char *needle, int timeout_ms, char *msg, size_t cap)
{
    char path[512];
    snprintf(path, sizeof(path),
             "/api/v1/namespaces/%s/events?fieldSelector=involvedObject.name%%3D%s", ns, name);
    for (int waited = 0; waited <= timeout_ms; waited += 100) {
        struct kanswer a;
        int found = 0;
        if (!kc_api(c, "GET", path, NULL, &a) && a.status == 200) {
            size_t i;
            json_t *e;
            json_array_foreach(json_object_get(a.json, "items"), i, e)
            {
                const char *r = json_string_value(json_object_get(e, "reason"));
                const char *m = json_string_value(json_object_get(e, "message"));
                if (r && m && !strcmp(r, reason) && (!needle || strstr(m, needle))) {
                    snprintf(msg, cap, "%s", m);
                    found = 1;
                    break;
                }
            }
        }
        kc_answer_free(&a);
        if (found)
            return 1;
        kc_sleep_ms(100);
    }
    return 0;
}

int kc_finish_deletions(const struct kcluster *c)
{
    struct kanswer a;
    int n = 0;
    if (kc_api(c, "GET", "/api/v1/pods", NULL, &a) || a.status != 200) {
        kc_answer_free(&a);
        return -1;
    }
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(a.json, "items"), i, p)
    {
        const json_t *md = json_object_get(p, "metadata");
        if (!json_object_get(md, "deletionTimestamp"))
            continue;
        const char *ns = json_string_value(json_object_get(md, "namespace"));
        const char *name = json_string_value(json_object_get(md, "name"));
        if (ns && name && !kc_delete_pod(c, ns, name, 0))
            n++;
    }
    kc_answer_free(&a);
    return n;
}

int kc_audit_count(const struct kcluster *c, const char *needle)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/audit.log", c->dir);
    char *s = slurp(path);
    int n = 0;
    for (const char *at = s; at && (at = strstr(at, needle)); at += strlen(needle))
        n++;
    free(s);
    return n;
}

int kc_log_has(const struct kproc *p, const char *needle)
{
    char *s = slurp(p->log);
    int found = s && strstr(s, needle);
    free(s);
    return found;
}
