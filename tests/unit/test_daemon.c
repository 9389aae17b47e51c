/*
 * gpuschedd's modules without the network: the DaemonConfig loader (strict keys, messages at
 * file:line:column, hashed tokens), token checks, the token bucket, Pod parsing into requests
 * with the bad field named, Kubernetes quantities, policy files (GPUQuota, ...) tied to the
 * DaemonConfig's tenants, and the deploy/ files loading as shipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/util.h"
#include "daemon/access.h"
#include "daemon/config.h"
#include "daemon/inventory.h"
#include "daemon/kube.h"
#include "daemon/podspec.h"
#include "daemon/quota.h"
#include "daemon/snapshot.h"
#include "daemon/store.h"
#include "gpusched/config.h"
#include "gpusched/scenario.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char path[64];

static int write_cfg(const char *text)
{
    snprintf(path, sizeof(path), "/tmp/gs_test_daemon.XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Load @text as a config file; return the loader's code, the message in @d. */
static int load_text(const char *text, struct gsd_config **out, struct gs_diag *d)
{
    gs_diag_init(d);
    assert_int_equal(write_cfg(text), 0);
    int rc = gsd_config_load(path, out, d);
    unlink(path);
    return rc;
}

#define HEAD "apiVersion: gpusched.io/v1alpha1\nkind: DaemonConfig\n"

static void test_config_good(void **state)
{
    (void)state;
    struct gsd_config *c;
    struct gs_diag d;
    assert_int_equal(load_text(HEAD "adminToken: admin-0123456789abcdef\n"
                                    "maxBodyBytes: 4096\n"
                                    "tenants:\n"
                                    "  - name: a\n"
                                    "    token: tenant-a-0123456789\n"
                                    "    namespaces: [a, a-dev]\n"
                                    "    rateLimit: {requestsPerSecond: 2.5, burst: 5}\n",
                               &c, &d),
                     0);
    assert_int_equal(c->ntenants, 1);
    assert_int_equal(c->max_body, 4096);
    assert_int_equal(c->tenants[0].rate_milli, 2500);
    assert_int_equal(c->tenants[0].burst, 5);
    uint8_t sha[GSD_SHA256_LEN];
    gsd_sha256("tenant-a-0123456789", 19, sha);
    assert_int_equal(gsd_config_auth(c, sha), 0);
    gsd_sha256("admin-0123456789abcdef", 22, sha);
    assert_int_equal(gsd_config_auth(c, sha), GSD_AUTH_ADMIN);
    gsd_sha256("tenant-a-012345678", 18, sha);
    assert_int_equal(gsd_config_auth(c, sha), GSD_AUTH_NONE);
    assert_ptr_equal(gsd_tenant_of_ns(c, "a-dev"), &c->tenants[0]);
    assert_null(gsd_tenant_of_ns(c, "b"));
    assert_int_equal(c->node_grace_us, GSD_NODE_GRACE_DEFAULT_US);
    assert_int_equal(c->short_gang_hold_us, 60000000);
    gsd_config_free(c);
    assert_int_equal(load_text(HEAD "extender: {shortGangHoldSeconds: 0}\n", &c, &d), 0);
    assert_int_equal(c->short_gang_hold_us, 0);
    gsd_config_free(c);
    assert_int_equal(load_text(HEAD "extender: {shortGangHoldSeconds: 86401}\n", &c, &d), -EINVAL);
    if (!strstr(d.msg, ":3:34: shortGangHoldSeconds: expected a whole number in 0..86400"))
        fail_msg("%s", d.msg);
    /* The node agents' token reaches the node verbs only; the grace period is in seconds. */
    assert_int_equal(load_text(HEAD "nodeToken: node-0123456789abcdef\n"
                                    "nodeMonitorGracePeriodSeconds: 5\n",
                               &c, &d),
                     0);
    gsd_sha256("node-0123456789abcdef", 21, sha);
    assert_int_equal(gsd_config_auth(c, sha), GSD_AUTH_NODE);
    assert_int_equal(c->node_grace_us, 5000000);
    gsd_config_free(c);
    /* The shipped example loads as it is (in a pod: test_config_kubernetes). */
    gs_diag_init(&d);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(gsd_config_load("deploy/gpuschedd-config.yaml", &c, &d), 0);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    assert_int_equal(c->ntenants, 2);
    gsd_config_free(c);
    assert_int_equal(gsd_config_load(NULL, &c, &d), 0); /* no file: defaults, nobody admitted */
    assert_int_equal(c->ntenants, 0);
    assert_int_equal(c->has_admin, 0);
    gsd_config_free(c);
}

static void test_config_errors(void **state)
{
    (void)state;
    struct gsd_config *c = NULL;
    struct gs_diag d;
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {HEAD "tenants:\n  - name: a\n    token: tenant-a-0123456789\n    namespaces: [a]\n"
              "    rateLimt: {requestsPerSecond: 1}\n",
         ":7:5: unknown key \"rateLimt\" (did you mean \"rateLimit\"?)"},
        {HEAD "tenants:\n  - name: a\n    token: short\n    namespaces: [a]\n",
         ":5:12: a token must be at least 16 bytes"},
        {HEAD "tenants:\n  - name: a\n    token: tenant-a-0123456789\n    namespaces: [x]\n"
              "  - name: b\n    token: tenant-b-0123456789\n    namespaces: [x]\n",
         ":7:5: namespace x belongs to two tenants"},
        {HEAD "tenants:\n  - name: a\n    token: tenant-a-0123456789\n    namespaces: [x]\n"
              "  - name: b\n    token: tenant-a-0123456789\n    namespaces: [y]\n",
         ":7:5: tenant b has the token of another tenant"},
        {HEAD "policy: fastest\n", ":3:9: policy: gpuschedd runs the gpusched policy only"},
        {HEAD "policy: fgd\n", ":3:9: policy: gpuschedd runs the gpusched policy only"},
        {HEAD "maxBodyBytes: lots\n", ":3:15: maxBodyBytes: expected a whole number"},
        /* a "\0" escape cut the value: 40 was read, the rest went unread */
        {HEAD "nodeMonitorGracePeriodSeconds: \"40\\0junk\"\n",
         ":3:32: nodeMonitorGracePeriodSeconds: expected a whole number"},
        {HEAD "adminToken: \"admin-0123456789abcdef\\0more\"\n",
         ":3:13: a token cannot hold a NUL byte"},
        /* a leading NUL is not taken for a token read before */
        {HEAD "adminToken: \"\\0admin-0123456789abcdef\"\n",
         ":3:13: a token cannot hold a NUL byte"},
        {HEAD "storeSync: off\n", ":3:12: storeSync: expected normal or full"},
        /* quoted, a string: as a Kubernetes object's integer field refuses one */
        {HEAD "maxPods: \"5\"\n", ":3:10: maxPods: expected a whole number in 1..10000000"},
        {HEAD "metrics: {perPod: \"true\"}\n", ":3:19: perPod: expected true or false"},
        {"kind: Pod\n", ":1:7: kind: expected DaemonConfig"},
        {HEAD "maxPods: *foo\n", ":3:10: YAML error: found undefined alias"},
        {"# only a comment\n", ":1:1: no document: expected a DaemonConfig mapping"},
        {HEAD "adminToken: &t admin-0123456789abcdef\nnodeToken: *t\n",
         ":3:13: this token was read before (an alias of it is not taken)"},
        /* a tag is honoured or refused, as in the policy files: "!!str 5" is text */
        {HEAD "maxPods: !!str 5\n", ":3:10: maxPods: expected a whole number"},
        {HEAD "maxPods: !!float 5\n", ":3:10: YAML tag !!float is not read"},
        {HEAD "nodeMonitorGracePeriodSeconds: 0\n",
         ":3:32: nodeMonitorGracePeriodSeconds: expected a whole number in 1..86400"},
        /* named at the token's value, not at the document */
        {HEAD "nodeToken: same-0123456789abcdef\nadminToken: same-0123456789abcdef\n",
         ":3:12: the node token is the admin token"},
        {HEAD "nodeToken: node-0123456789abcdef\n"
              "nodeTokenSHA256: 0000000000000000000000000000000000000000000000000000000000000000\n",
         ":4:18: give one of nodeToken and nodeTokenSHA256"},
        {HEAD "tenants:\n  - name: A_B\n", "name: expected a DNS label"},
        {HEAD "tenants:\n  - name: a\n    token: tenant-a-0123456789\n    namespaces: [n0, n1, n2, "
              "n3, n4, n5, n6, n7, n8, n9, n10, n11, n12, n13, n14, n15, n16]\n",
         ":6:17: namespaces: more than 16 entries"},
        {HEAD "tenants:\n  - name: a\n    tokenSHA256: abc\n    namespaces: [a]\n",
         "tokenSHA256: expected 64 hex digits"},
        {HEAD "tenants:\n  - name: a\n    tokenSHA256: "
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n",
         ":5:18: tokenSHA256: the SHA-256 of the empty string (was the token unset"},
        {HEAD "adminTokenSHA256: "
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n",
         ":3:19: adminTokenSHA256: the SHA-256 of the empty string"},
        {HEAD "tenants: [\n", ":4:1:"},
        {HEAD "---\nkind: GPUQuota\n", ":4:1: a second document"},
        {HEAD "kubernetes: [http://x]\n", ":3:13: kubernetes: expected a mapping"},
        {HEAD "kubernetes:\n  apiServr: http://x\n", ":4:3: unknown key \"apiServr\""},
        {HEAD "kubernetes:\n  apiServer: ftp://x\n",
         ":4:14: apiServer \"ftp://x\": expected http:// or https://"},
        {HEAD "kubernetes:\n  apiServer: https://x/api?watch=1\n",
         ":4:14: apiServer \"https://x/api?watch=1\": a query (\"?\"): paths are appended"},
        {HEAD "kubernetes:\n  apiServer: https://\n", ":4:14: apiServer \"https://\": no host"},
        {HEAD "kubernetes:\n  apiServer: https://u:p@x\n",
         ":4:14: apiServer \"https://***@x\": user information"},
        {HEAD "kubernetes:\n  apiServer: \"https://x:\"\n",
         ":4:14: apiServer \"https://x:\": a ':' without a port after it"},
        {HEAD "kubernetes:\n  apiServer: http://x\n  timeoutSeconds: 0\n",
         ":5:19: timeoutSeconds: expected a whole number in 1..300"},
        {HEAD "kubernetes:\n  apiServer: http://x\n  syncSeconds: -1\n",
         ":5:16: syncSeconds: expected a whole number in 0..86400"},
        {HEAD "kubernetes:\n  apiServer: http://x\n  podGroups: yes\n",
         ":5:14: podGroups: expected true or false"},
        {HEAD "kubernetes:\n  apiServer: http://x\n  tokenFile: /nonexistent/token\n",
         ":5:14: tokenFile: cannot read /nonexistent/token: No such file or directory"},
        {HEAD "kubernetes:\n  apiServer: http://x\n  caFile: \"\"\n",
         ":5:11: caFile: cannot read : expected a path"},
        {HEAD "kubernetes:\n  apiServer: http://x\n  tokenFile: /tmp\n",
         ":5:14: tokenFile: cannot read /tmp: not a regular file"},
        {HEAD "kubernetes:\n  apiServer: http://127.0.0.1:99999\n",
         ":4:14: apiServer \"http://127.0.0.1:99999\": libcurl cannot parse it: Port number"},
        {HEAD "kubernetes:\n  apiServer: http://x\n  apiServer: http://y\n",
         ":5:3: key \"apiServer\" appears twice"},
        {HEAD "kubernetes:\n  timeoutSeconds: 5\n",
         ":4:3: kubernetes: give apiServer, or inCluster: true"},
        {HEAD "kubernetes: {inCluster: yes}\n", ":3:25: inCluster: expected true or false"},
        {HEAD "kubernetes: {inCluster: true}\n",
         ":3:25: inCluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set"},
        {HEAD "kubernetes: {apiServer: http://x}\nkubernetes: {apiServer: http://y}\n",
         ":4:1: key \"kubernetes\" appears twice"},
        /* each mapping's keys once (a second namespaces list once leaked the first) */
        {HEAD "tenants:\n  - name: a\n    token: tenant-a-0123456789\n    namespaces: [a]\n"
              "    namespaces: [b]\n",
         ":7:5: key \"namespaces\" appears twice"},
        {HEAD "tenants:\n  - name: a\n    token: tenant-a-0123456789\n    namespaces: [a]\n"
              "    rateLimit: {burst: 2, burst: 3}\n",
         ":7:27: key \"burst\" appears twice"},
        {HEAD "tenants:\n  - name: a\n    token: tenant-a-0123456789\n    namespaces: [a]\n"
              "    rateLimit: {requestsPerSecond: \"5\"}\n",
         ":7:36: requestsPerSecond: expected a number"},
        {HEAD "extender: {requireToken: false}\n",
         ":3:12: extender.requireToken: no longer a setting"},
        {HEAD "extender: {maxBodyBytes: 10}\n", "maxBodyBytes: expected a whole number in 1024.."},
        {HEAD "metrics: {token: m-0123456789abcdef, tokenSHA256: "
              "0000000000000000000000000000000000000000000000000000000000000000}\n",
         "metrics: give one of token and tokenSHA256"},
        {HEAD "metrics: {perPod: sometimes}\n", ":3:19: perPod: expected true or false"},
        {HEAD "metrics: {forecastRefreshSeconds: 0}\n",
         "forecastRefreshSeconds: expected a whole number in 1..86400"},
        {HEAD "metrics: {scrapesPerSecond: 0}\n",
         "scrapesPerSecond: expected a whole number in 1..1000"},
        {HEAD "metrics: {maxAgeMilliseconds: 60001}\n",
         "maxAgeMilliseconds: expected a whole number in 0..60000"},
        {HEAD "adminToken: same-0123456789abcdef\nmetrics: {token: same-0123456789abcdef}\n",
         ":4:10: the metrics token is the admin or the node token"},
        {HEAD "http: {maxConections: 10}\n", ":3:8: unknown key \"maxConections\""},
        {HEAD "http: {threads: 0}\n", ":3:17: threads: expected a whole number in 1..64"},
        {HEAD "http: {maxBytesInFlight: 1000}\n",
         "maxBytesInFlight: expected a whole number in 1048576..68719476736"},
        {HEAD "http: [1]\n", ":3:7: http: expected a mapping"},
        /* every body of that size would be told to retry, forever */
        {HEAD "http: {maxBytesInFlight: 2097152}\n",
         ":3:7: http.maxBytesInFlight is below the largest body cap, extender.maxBodyBytes "
         "4194304"},
        {HEAD "maxBodyBytes: 8388608\nhttp: {maxBytesInFlight: 4194304}\n",
         ":4:7: http.maxBytesInFlight is below the largest body cap, maxBodyBytes 8388608"},
        /* a rate card's fault named at the key that names it too */
        {HEAD "rateCard: /nonexistent/rates.yaml\n",
         ":3:11: rateCard: /nonexistent/rates.yaml: cannot open"},
        /* tokens no Authorization header could carry: never matched */
        {HEAD "adminToken: '  admin-0123456789abcdef'\n", ":3:13: a token is letters, digits"},
        {HEAD "adminToken: \"admin-0123456789\\r\\nabcdef\"\n", ":3:13: a token is letters"},
        {HEAD "nodeToken: '                '\n", ":3:12: a token is letters, digits"},
    };
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = load_text(bad[i].text, &c, &d);
        if (rc != -EINVAL || !strstr(d.msg, bad[i].msg) || !strstr(d.msg, "/tmp/gs_test_daemon"))
            fail_msg("case %zu: rc %d, message \"%s\", expected \"%s\"", i, rc, d.msg, bad[i].msg);
    }
    /* a token no request could carry, or no agent could send: refused where it is written */
    static const struct {
        const char *key, *msg;
        size_t len;
    } longest[] = {
        {"nodeToken", "longer than the 160 bytes gpusched-agent's", GS_NODE_TOKEN_MAX},
        {"adminToken", "longer than the 4096 bytes gpuschedd takes", GS_BEARER_TOKEN_MAX}};
    for (size_t i = 0; i < 2; i++)
        for (size_t len = longest[i].len; len <= longest[i].len + 1; len++) {
            char text[GS_BEARER_TOKEN_MAX + 128];
            int at = snprintf(text, sizeof(text), HEAD "%s: ", longest[i].key);
            memset(text + at, 'n', len);
            strcpy(text + at + len, "\n");
            int rc = load_text(text, &c, &d);
            if (len == longest[i].len) {
                assert_int_equal(rc, 0);
                gsd_config_free(c);
            } else if (rc != -EINVAL || !strstr(d.msg, longest[i].msg) || !strstr(d.msg, ":3:")) {
                fail_msg("%s of %zu bytes: rc %d, %s", longest[i].key, len, rc, d.msg);
            }
        }
    gs_diag_init(&d);
    assert_int_equal(gsd_config_load("/nonexistent/gpuschedd.yaml", &c, &d), -ENOENT);
}

/* metrics: and http: as given, and their defaults. */
static void test_config_http_metrics(void **state)
{
    (void)state;
    struct gsd_config *c;
    struct gs_diag d;
    assert_int_equal(load_text(HEAD "metrics: {token: metrics-0123456789ab, perPod: true,\n"
                                    "  scrapesPerSecond: 2, maxAgeMilliseconds: 0,\n"
                                    "  forecastRefreshSeconds: 60}\n"
                                    "http: {maxConnections: 100, maxConnectionsPerClient: 5,\n"
                                    "  idleTimeoutSeconds: 7, bodyTimeoutSeconds: 3,\n"
                                    "  maxBytesInFlight: 8388608, threads: 2,\n"
                                    "  authFailuresPerMinute: 4}\n",
                               &c, &d),
                     0);
    uint8_t sha[GSD_SHA256_LEN];
    gsd_sha256("metrics-0123456789ab", 20, sha);
    assert_int_equal(gsd_config_auth(c, sha), GSD_AUTH_METRICS);
    assert_true(c->metrics.per_pod);
    assert_int_equal(c->metrics.scrapes_per_s, 2);
    assert_int_equal(c->metrics.max_age_ms, 0);
    assert_int_equal(c->metrics.forecast_refresh_s, 60);
    assert_int_equal(c->http.max_connections, 100);
    assert_int_equal(c->http.max_per_client, 5);
    assert_int_equal(c->http.idle_timeout_s, 7);
    assert_int_equal(c->http.body_timeout_s, 3);
    assert_int_equal(c->http.max_in_flight, 8388608);
    assert_int_equal(c->http.threads, 2);
    assert_int_equal(c->http.auth_failures, 4);
    gsd_config_free(c);
    assert_int_equal(load_text(HEAD, &c, &d), 0);
    assert_false(c->metrics.has_token || c->metrics.per_pod);
    assert_int_equal(c->metrics.scrapes_per_s, 5);
    assert_int_equal(c->metrics.max_age_ms, 1000);
    assert_int_equal(c->http.max_connections, 4096);
    assert_int_equal(c->http.max_in_flight, 64 << 20);
    assert_int_equal(c->extender_max_body, 4u << 20);
    /* body caps by route: GET takes none; pods the DaemonConfig's; bind a small fixed one */
    assert_int_equal(gsd_access_body_cap(c, "GET", "/v1/pods"), 0);
    assert_int_equal(gsd_access_body_cap(c, "POST", "/v1/pods"), 1 << 20);
    assert_int_equal(gsd_access_body_cap(c, "POST", "/extender/filter"), 4u << 20);
    assert_int_equal(gsd_access_body_cap(c, "POST", "/extender/bind"), 64u << 10);
    gsd_config_free(c);
}

/* `kubernetes:`: the API server bind writes to, given or as a pod finds it (inCluster). */
static void test_config_kubernetes(void **state)
{
    (void)state;
    struct gsd_config *c;
    struct gs_diag d;
    char text[512], file[] = "/tmp/gs_test_token.XXXXXX";
    int fd = mkstemp(file);
    assert_true(fd >= 0);
    close(fd);
    snprintf(text, sizeof(text),
             HEAD "kubernetes:\n  apiServer: https://api.example:6443//\n  tokenFile: %s\n"
                  "  caFile: %s\n  timeoutSeconds: 7\n",
             file, file);
    assert_int_equal(load_text(text, &c, &d), 0);
    assert_string_equal(c->kube->api_server, "https://api.example:6443");
    assert_string_equal(c->kube->token_file, file);
    assert_string_equal(c->kube->ca_file, file);
    assert_int_equal(c->kube->timeout_ms, 7000);
    assert_int_equal(c->kube->podgroups, 1); /* Volcano's PodGroups followed unless told */
    gsd_config_free(c);
    assert_int_equal(
        load_text(HEAD "kubernetes: {apiServer: http://x, podGroups: false}\n", &c, &d), 0);
    assert_int_equal(c->kube->podgroups, 0);
    gsd_config_free(c);
    /* inCluster: the service's address from the environment, the pod's token and CA, and 4 s,
     * within the 5 s httpTimeout kube-scheduler's extender stanza in deploy/ gives bind */
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(load_text(HEAD "kubernetes: {inCluster: true}\n", &c, &d), 0);
    assert_string_equal(c->kube->api_server, "https://[fd00::1]:443");
    assert_string_equal(c->kube->token_file, "/var/run/secrets/kubernetes.io/serviceaccount/token");
    assert_string_equal(c->kube->ca_file, "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");
    assert_int_equal(c->kube->timeout_ms, 4000);
    gsd_config_free(c);
    /* A bad service port is blamed on the variables it came from, not on apiServer. */
    setenv("KUBERNETES_SERVICE_PORT", "99999", 1);
    assert_int_not_equal(load_text(HEAD "kubernetes: {inCluster: true}\n", &c, &d), 0);
    assert_non_null(strstr(d.msg, "inCluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
                                  "make \"https://[fd00::1]:99999\": libcurl cannot parse it"));
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    /* What is given wins over inCluster, whatever the order. */
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    snprintf(text, sizeof(text), HEAD "kubernetes: {inCluster: true, tokenFile: %s}\n", file);
    assert_int_equal(load_text(text, &c, &d), 0);
    assert_string_equal(c->kube->api_server, "https://10.96.0.1:443");
    assert_string_equal(c->kube->token_file, file);
    gsd_config_free(c);
    /* The shipped example asks for inCluster. */
    assert_int_equal(gsd_config_load("deploy/gpuschedd-config.yaml", &c, &d), 0);
    assert_string_equal(c->kube->api_server, "https://10.96.0.1:443");
    gsd_config_free(c);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    /* A long URL whose user information is shorter than its "***" mask ("http://@aaa...", 300
     * bytes and more) is shown masked and cut; the mask once wrote past the message's buffer. A
     * password past the first bytes shown is masked too, and the reason is whole. */
    char url[420];
    snprintf(url, sizeof(url), "http://@%0400d", 0);
    snprintf(text, sizeof(text), HEAD "kubernetes:\n  apiServer: %s\n", url);
    assert_int_not_equal(load_text(text, &c, &d), 0);
    assert_non_null(strstr(d.msg, ":4:14: apiServer \"http://***@0000"));
    assert_non_null(strstr(d.msg, "000...\": user information (\"user:password@\"): give the"));
    snprintf(url, sizeof(url), "http://u:S3CRET%0300d@h", 0);
    snprintf(text, sizeof(text), HEAD "kubernetes:\n  apiServer: %s\n", url);
    assert_int_not_equal(load_text(text, &c, &d), 0);
    assert_null(strstr(d.msg, "S3CRET"));
    assert_non_null(strstr(d.msg, "apiServer \"http://***@h\": user information"));
    memcpy(url, "http://h/", 9);
    memset(url + 9, 'x', 400);
    memcpy(url + 409, "?a", 3);
    snprintf(text, sizeof(text), HEAD "kubernetes:\n  apiServer: %s\n", url);
    assert_int_not_equal(load_text(text, &c, &d), 0);
    assert_non_null(strstr(d.msg, "xxx...\": a query (\"?\"): paths are appended to a base URL"));
    /* Without the section bind only records; rateCard is a key of its own. */
    assert_int_equal(load_text(HEAD "rateCard: data/billing/rates.yaml\n", &c, &d), 0);
    assert_null(c->kube);
    assert_string_equal(c->rate_card, "data/billing/rates.yaml");
    assert_int_equal(c->store_sync_full, 0); /* the default: normal */
    gsd_config_free(c);
    assert_int_equal(load_text(HEAD "storeSync: full\n", &c, &d), 0);
    assert_int_equal(c->store_sync_full, 1);
    gsd_config_free(c);
    unlink(file);
}

/* Policy files (GPUQuota, ...) on top of a DaemonConfig with tenant "a": the loader's code. */
static int load_policy(const char *text, struct gsd_config **c, struct gs_diag *d)
{
    assert_int_equal(load_text(HEAD "tenants:\n  - name: a\n    token: tenant-a-0123456789\n"
                                    "    namespaces: [a]\n",
                               c, d),
                     0);
    assert_int_equal(write_cfg(text), 0);
    const char *paths[] = {path};
    int rc = gsd_quota_load(*c, paths, 1, d);
    unlink(path);
    return rc;
}

#define QUOTA(tenant)                                                                              \
    "kind: GPUQuota\nmetadata: {name: q-" tenant "}\nspec:\n  tenant: " tenant "\n"                \
    "  quotas: {a100-80gb: {total: 8, dedicated: 4, shared: 4}}\n  limits: {maxGPUsPerPod: 2}\n"

static void test_quota_load(void **state)
{
    (void)state;
    struct gsd_config *c;
    struct gs_diag d;
    assert_int_equal(load_policy(QUOTA("a"), &c, &d), 0);
    const struct gs_tenant_spec *q = c->tenants[0].quota;
    assert_non_null(q);
    assert_int_equal(q->nquotas, 1);
    assert_int_equal(q->quotas[0].total_milli, 8000);
    assert_int_equal(q->quotas[0].dedicated_milli, 4000);
    assert_int_equal(q->max_gpus_per_pod, 2);
    gsd_config_free(c);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {QUOTA("b"), ":4:11: GPUQuota: spec.tenant is not a DaemonConfig tenant: b"},
        {QUOTA("a") "---\n" QUOTA("a"), ":11:11: a second GPUQuota for tenant a"},
        {"kind: Pod\nmetadata: {name: p, namespace: a}\nspec: {containers: [{name: c}]}\n",
         ":1:1: Pod in a config file"},
        /* said first, not that the Queue it names is undefined */
        {"kind: Pod\nmetadata: {name: p, namespace: a, annotations: "
         "{scheduling.volcano.sh/queue-name: research}}\nspec: {containers: [{name: c, image: "
         "i}]}\n",
         ":1:1: Pod in a config file"},
        {"kind: GPUQuota\nmetadata: {name: q}\nspec: {tenant: a, quotas: {a100-80gb: {total: "
         "x}}}\n",
         ":3:"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = load_policy(bad[i].text, &c, &d);
        if (rc != -EINVAL || !strstr(d.msg, bad[i].msg) || !strstr(d.msg, "/tmp/gs_test_daemon"))
            fail_msg("case %zu: rc %d, message \"%s\", expected \"%s\"", i, rc, d.msg, bad[i].msg);
        assert_null(c->quotas);
        assert_null(c->tenants[0].quota);
        gsd_config_free(c);
    }
}

/* Every file a reload reads, given as a FIFO, is refused at once, one a writer holds open too:
 * the reload runs on the thread that takes SIGTERM, which waited in open() for a writer, then in
 * read() for the writer's bytes, for ever. */
static void test_config_fifo(void **state)
{
    (void)state;
    struct gsd_config *c = NULL;
    struct gs_diag d;
    char fifo[64], text[160];
    snprintf(fifo, sizeof(fifo), "/tmp/gs_test_daemon_fifo.%ld", (long)getpid());
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int writer = open(fifo, O_RDWR | O_NONBLOCK); /* a writer that never writes */
    assert_true(writer >= 0);
    alarm(60); /* a wait for a writer ends the test, failed, instead of holding it */
    gs_diag_init(&d);
    assert_int_equal(gsd_config_load(fifo, &c, &d), -EINVAL);
    assert_non_null(strstr(d.msg, fifo));
    snprintf(text, sizeof(text), HEAD "rateCard: %s\n", fifo);
    assert_int_equal(load_text(text, &c, &d), -EINVAL);
    assert_non_null(strstr(d.msg, fifo));
    assert_int_equal(load_text(HEAD "tenants:\n  - name: a\n    token: tenant-a-0123456789\n"
                                    "    namespaces: [a]\n",
                               &c, &d),
                     0);
    const char *paths[] = {fifo};
    assert_int_equal(gsd_quota_load(c, paths, 1, &d), -EINVAL); /* a writer could hold it */
    assert_non_null(strstr(d.msg, "not a regular file"));
    assert_null(c->tenants[0].quota);
    alarm(0);
    gsd_config_free(c);
    close(writer);
    unlink(fifo);
}

static void test_bucket(void **state)
{
    (void)state;
    struct gsd_tenant t = {.rate_milli = 2000, .burst = 3}; /* 2 requests/s, bursts of 3 */
    int64_t now = 1000000;
    for (int i = 0; i < 3; i++)
        assert_int_equal(gsd_bucket_take(&t, now), 0);
    assert_int_equal(gsd_bucket_take(&t, now), 1); /* empty: half a second, said as 1 s */
    assert_int_equal(gsd_bucket_take(&t, now + 499999), 1);
    assert_int_equal(gsd_bucket_take(&t, now + 500000), 0); /* one token back after 0.5 s */
    /* Many requests 1 us apart still refill: fractions are not lost. */
    int allowed = 0;
    for (int64_t us = 0; us < 2000000; us += 1)
        allowed += gsd_bucket_take(&t, now + 600000 + us) == 0;
    assert_true(allowed >= 3 && allowed <= 5);
    struct gsd_tenant slow = {.rate_milli = 10, .burst = 1}; /* 0.01/s */
    assert_int_equal(gsd_bucket_take(&slow, now), 0);
    assert_int_equal(gsd_bucket_take(&slow, now), 100);
    struct gsd_tenant free_for_all = {0};
    assert_int_equal(gsd_bucket_take(&free_for_all, now), 0);
}

/* Quantities as the API server writes them, through the one parser the daemon reads them with. */
static void test_quantities(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int e10, e2;
        int64_t v; /* INT64_MIN: refused */
    } q[] = {
        {"16", 3, 0, 16000},
        {"500m", 3, 0, 500},
        {"0.25", 3, 0, 250},
        {"2e0", 3, 0, 2000},
        {"0.0001", 3, 0, 1},
        {"-1", 3, 0, INT64_MIN},
        {"1.5m", 3, 0, 2},
        {"64Gi", 0, -20, 65536},
        {"512Mi", 0, -20, 512},
        {"1G", 0, -20, 954},
        {"1", 0, -20, 1},
        {"1.5Gi", 0, -20, 1536},
        {"1Pi", 0, -20, 1LL << 30},
        {"1Ei", 0, -20, 1LL << 40},
        {"12Qi", 0, -20, INT64_MIN},
        {"20k", 0, 0, 20000},
        {"99999999999999999999", 0, -20, INT64_MIN},
    };
    for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
        int64_t v = 0;
        int rc = gs_quantity_parse(q[i].s, q[i].e10, q[i].e2, 1, &v);
        if (q[i].v == INT64_MIN ? rc == 0 : rc != 0 || v != q[i].v)
            fail_msg("%s: rc %d value %lld", q[i].s, rc, (long long)v);
    }
    assert_true(gsd_name_ok("team-a"));
    assert_false(gsd_name_ok("Team"));
    assert_false(gsd_name_ok("-a"));
    assert_false(gsd_name_ok(""));
}

/* Parse a Pod given as JSON text; return the code, the field in @field. */
static int parse(const char *text, struct gsd_podspec *p, char *field)
{
    struct gsd_ferr e = {0};
    int rc = gsd_podspec_parse(text, strlen(text), 1, p, &e);
    strcpy(field, rc ? e.field : "");
    return rc;
}

/* What the API server refuses in a pod to create is refused by POST /v1/pods too, naming the
 * field: a port out of range, an ephemeral container, generateName without a name; a Windows pod,
 * which no node runs. A running pod kube-scheduler passes on (not strict) keeps its ephemeral
 * containers, with a warning. */
static void test_podspec_create_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *text, *field, *msg;
    } bad[] = {
        {"{\"metadata\":{\"generateName\":\"job-\"},\"spec\":{\"containers\":[{\"name\":\"m\"}]}}",
         "metadata.name", "metadata.name: Required value: generateName is not supported"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"m\",\"ports\":[{"
         "\"containerPort\":0}]}]}}",
         "spec.containers[0].ports[0].containerPort",
         "spec.containers[0].ports[0].containerPort: Invalid value: 0: must be between 1 and "
         "65535"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"m\",\"ports\":[{"
         "\"containerPort\":80,\"hostPort\":65536}]}]}}",
         "spec.containers[0].ports[0].hostPort",
         "spec.containers[0].ports[0].hostPort: Invalid value: 65536: must be between 1 and 65535"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"os\":{\"name\":\"windows\"},\"containers\":[{"
         "\"name\":\"m\"}]}}",
         "spec.os.name", "spec.os.name: windows: every node gpusched models runs Linux"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"m\"}],"
         "\"ephemeralContainers\":[{\"name\":\"d\",\"image\":\"busybox\"}]}}",
         "spec.ephemeralContainers",
         "spec.ephemeralContainers: Forbidden: cannot be set on create"},
    };
    struct gsd_podspec p;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct gsd_ferr e = {0};
        int rc = gsd_podspec_parse(bad[i].text, strlen(bad[i].text), 1, &p, &e);
        if (rc != -EINVAL || strcmp(e.field, bad[i].field) || !strstr(e.msg, bad[i].msg))
            fail_msg("case %zu: rc %d field \"%s\" msg \"%s\"", i, rc, e.field, e.msg);
        assert_int_equal(e.status, 400);
    }
    struct gsd_ferr e = {0};
    const char *eph = bad[4].text;
    assert_int_equal(gsd_podspec_parse(eph, strlen(eph), 0, &p, &e), 0);
    assert_non_null(strstr(e.warning, "spec.ephemeralContainers: Forbidden"));
    gsd_podspec_clear(&p);
}

static void test_podspec(void **state)
{
    (void)state;
    struct gsd_podspec p;
    char f[128];
    assert_int_equal(
        parse("{\"metadata\":{\"name\":\"t-0\",\"namespace\":\"a\",\"labels\":"
              "{\"user\":\"u\"},\"annotations\":{\"gpusched.io/gpu-model\":\"T4\"}},"
              "\"spec\":{\"priority\":7,\"containers\":[{\"name\":\"m\",\"resources\":{\"limits\":"
              "{\"nvidia.com/gpu\":\"4\",\"cpu\":\"16\",\"memory\":\"64Gi\"}}},"
              "{\"name\":\"c1\",\"resources\":{\"requests\":{\"cpu\":\"500m\"}}}]}}",
              &p, f),
        0);
    assert_string_equal(p.name, "t-0");
    assert_int_equal(p.s.ncontainers, 2);
    assert_int_equal(p.s.containers[0].gpu, 4);
    assert_int_equal(p.s.containers[0].cpu_milli, 16000);
    assert_int_equal(p.s.containers[1].cpu_milli, 500);
    assert_int_equal(p.s.containers[0].memory_mib, 65536);
    assert_int_equal(p.s.priority, 7);
    assert_true(p.s.model_mask != 0);
    gsd_podspec_clear(&p);
    /* A share: gpucores in percent, gpumem in MiB; quantities as an API server writes them
     * back (20000 is "20k", 1 may be "1e0"). */
    assert_int_equal(parse("{\"metadata\":{\"name\":\"s\"},\"spec\":{\"containers\":[{"
                           "\"name\":\"c2\",\"resources\":{\"limits\":{\"nvidia.com/"
                           "gpucores\":30,\"nvidia.com/gpu\":\"1e0\","
                           "\"nvidia.com/gpumem\":\"20k\"}}}]}}",
                           &p, f),
                     0);
    assert_int_equal(p.s.containers[0].gpucores, 30);
    assert_int_equal(p.s.containers[0].gpumem_mib, 20000);
    assert_int_equal(p.s.containers[0].gpu, 1);
    gsd_podspec_clear(&p);
    /* A MIG instance: NVIDIA's profile name ("+me" spelled ".me" in the resource), no cards. */
    assert_int_equal(
        parse("{\"metadata\":{\"name\":\"g\"},\"spec\":{\"containers\":[{"
              "\"name\":\"c3\",\"resources\":{\"limits\":{\"nvidia.com/mig-1g.10gb.me\":\"1\","
              "\"nvidia.com/gpu\":0}}}]}}",
              &p, f),
        0);
    assert_string_equal(p.s.containers[0].mig_profile, "1g.10gb+me");
    assert_int_equal(p.s.containers[0].gpu, 0);
    gsd_podspec_clear(&p);
    /* Init containers are read, in order, before the app containers; a sidecar is marked (the
     * scheduler counts the effective request: test_scheduler.c). */
    assert_int_equal(
        parse(
            "{\"metadata\":{\"name\":\"k\"},\"spec\":{\"initContainers\":["
            "{\"name\":\"side\",\"restartPolicy\":\"Always\",\"resources\":"
            "{\"limits\":{\"nvidia.com/gpu\":1,\"cpu\":\"1\"}}},"
            "{\"name\":\"warm\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":4,"
            "\"cpu\":\"8\"}}}],\"containers\":["
            "{\"name\":\"c4\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":2,\"cpu\":\"2\"}}}]}}",
            &p, f),
        0);
    assert_int_equal(p.s.ncontainers, 3);
    assert_int_equal(p.s.containers[0].init, 2);
    assert_int_equal(p.s.containers[1].init, 1);
    assert_int_equal(p.s.containers[2].init, 0);
    assert_int_equal(p.s.containers[1].gpu, 4);
    gsd_podspec_clear(&p);
    static const struct {
        const char *text, *field;
    } bad[] = {
        {"[]", ""},
        {"{\"kind\":\"Service\"}", "kind"},
        {"{\"metadata\":{\"name\":\"UPPER\"},\"spec\":{}}", "metadata.name"},
        {"{\"metadata\":{\"name\":\"x\",\"namespace\":\"a.b\"}}", "metadata.namespace"},
        {"{\"metadata\":{\"name\":\"x\",\"labels\":{\"k\":1}}}", "metadata.labels.k"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[]}}", "spec.containers"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"m\",\"resources\":{"
         "\"limits\":"
         "{\"nvidia.com/gpucores\":101}}}]}}",
         "spec.containers[0].resources.limits.nvidia.com/gpucores"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"m\",\"resources\":{"
         "\"limits\":"
         "{\"nvidia.com/gpu\":\"1500m\"}}}]}}",
         "spec.containers[0].resources.limits.nvidia.com/gpu"},
        /* sidecars only among init containers, and init containers a list */
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"c5\","
         "\"restartPolicy\":"
         "\"Always\"}]}}",
         "spec.containers[0].restartPolicy"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"initContainers\":[{\"name\":\"c6\","
         "\"restartPolicy\":"
         "\"Never\"}],\"containers\":[{\"name\":\"m\"}]}}",
         "spec.initContainers[0].restartPolicy"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"initContainers\":{},\"containers\":[{\"name\":"
         "\"m\"}]}}",
         "spec.initContainers"},
        {"{\"metadata\":{\"name\":\"x\",\"annotations\":{\"gpusched.io/gpu-model\":\"Z9\"}},"
         "\"spec\":{\"containers\":[{\"name\":\"m\"}]}}",
         "metadata.annotations.gpusched.io/gpu-model"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"priority\":\"high\",\"containers\":[{\"name\":"
         "\"m\"}]}}",
         "spec.priority"},
        /* a string field takes no JSON number or boolean, as Kubernetes' API server refuses them
         * ("cannot unmarshal number into Go struct field ... of type string") */
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"priorityClassName\":7,\"containers\":[{"
         "\"name\":\"m\"}]}}",
         "spec.priorityClassName"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"schedulerName\":true,\"containers\":[{"
         "\"name\":\"m\"}]}}",
         "spec.schedulerName"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"nodeName\":1.5,\"containers\":[{\"name\":"
         "\"m\"}]}}",
         "spec.nodeName"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"nodeSelector\":{\"topology.kubernetes.io/"
         "zone\":1},\"containers\":[{\"name\":\"m\"}]}}",
         "spec.nodeSelector.topology.kubernetes.io/zone"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"tolerations\":[{\"key\":\"k\",\"value\":"
         "false}],\"containers\":[{\"name\":\"m\"}]}}",
         "spec.tolerations[0].value"},
        /* an extended resource's request differs from its limit */
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"m\",\"resources\":{"
         "\"limits\":"
         "{\"nvidia.com/gpu\":1},\"requests\":{\"nvidia.com/gpu\":2}}}]}}",
         "spec.containers[0].resources.requests.nvidia.com/gpu"},
        /* MIG: one instance of a profile some model has, and no cards with it */
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"m\",\"resources\":{"
         "\"limits\":"
         "{\"nvidia.com/mig-1g.10gb\":2}}}]}}",
         "spec.containers[0].resources.limits.nvidia.com/mig-1g.10gb"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"m\",\"resources\":{"
         "\"limits\":"
         "{\"nvidia.com/mig-9g.99gb\":1}}}]}}",
         "spec.containers[0].resources.limits.nvidia.com/mig-9g.99gb"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"m\",\"resources\":{"
         "\"limits\":"
         "{\"nvidia.com/mig-1g.10gb\":1},\"requests\":{\"nvidia.com/mig-2g.20gb\":1}}}]}}",
         "spec.containers[0].resources.requests.nvidia.com/mig-2g.20gb"},
        /* a resource gpuschedd does not place is refused, not dropped */
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"m\",\"resources\":{"
         "\"limits\":"
         "{\"example.com/fpga\":1}}}]}}",
         "spec.containers[0].resources.limits.example.com/fpga"},
        {"{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"m\",\"resources\":{"
         "\"requests\":"
         "{\"cpus\":\"1\"}}}]}}",
         "spec.containers[0].resources.requests.cpus"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = parse(bad[i].text, &p, f);
        if (rc != -EINVAL || strcmp(f, bad[i].field))
            fail_msg("case %zu: rc %d field \"%s\", expected \"%s\"", i, rc, f, bad[i].field);
    }
    struct gsd_ferr e = {0};
    const char *num = "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"priorityClassName\":7,"
                      "\"containers\":[{\"name\":\"m\"}]}}";
    assert_int_equal(gsd_podspec_parse(num, strlen(num), 1, &p, &e), -EINVAL);
    assert_int_equal(e.status, 400);
    assert_string_equal(e.msg, "spec.priorityClassName must be a string, not the integer 7 (as "
                               "Kubernetes refuses it): quote it for the text, \"7\"");
    /* metadata read beside the parser is typed the same way: a name of 1.5 is no text */
    const char *real = "{\"metadata\":{\"name\":1.5},\"spec\":{\"containers\":[{\"name\":\"m\"}]}}";
    assert_int_equal(gsd_podspec_parse(real, strlen(real), 1, &p, &e), -EINVAL);
    assert_string_equal(e.field, "metadata.name");
    assert_string_equal(e.msg, "metadata.name must be a string, not a number (as Kubernetes "
                               "refuses it): quote it for the text");
    /* the parser's message names the field once, whole, where it named its tail */
    const char *q =
        "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"m\",\"resources\":"
        "{\"requests\":{\"cpu\":\"abc\"}}}]}}";
    assert_int_equal(gsd_podspec_parse(q, strlen(q), 1, &p, &e), -EINVAL);
    assert_string_equal(e.msg, "spec.containers[0].resources.requests.cpu: \"abc\" is not a "
                               "Kubernetes quantity (a number with an optional unit: 500m, 2, "
                               "64Gi, 1e3)");
    /* a JSON number is a quantity as its text is: 0.1 is 100m (jansson's 0.10000000000000001
     * would be 101m) */
    assert_int_equal(
        parse("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{"
              "\"name\":\"c7\",\"resources\":{\"requests\":{\"cpu\":0.1,\"memory\":1.5e9}}}]}}",
              &p, f),
        0);
    assert_int_equal(p.s.containers[0].cpu_milli, 100);
    assert_int_equal(p.s.containers[0].memory_mib, 1431); /* 1.5e9 bytes, rounded up */
    /* kept as an API server keeps a Quantity, as text: what the store and a snapshot read */
    assert_non_null(strstr(p.body, "{\"cpu\":\"0.1\",\"memory\":\"1500000000\"}"));
    gsd_podspec_clear(&p);
}

/* The extender stanza for kube-scheduler is a KubeSchedulerConfiguration the loader accepts. */
/* Every annotation and label gpuschedd writes on a pod is named in docs/kubernetes.md, where
 * the others are listed, and the nudge's in docs/preemption.md too. */
static void test_pod_annotations_documented(void **state)
{
    (void)state;
    static const char *const keys[] = {
        "`gpusched.io/node`",          "`gpusched.io/gpu-index`",
        "`gpusched.io/gpu-milli`",     "`gpusched.io/mig-profile`",
        "`gpusched.io/mig-placement`", "`" GSD_MANAGED_LABEL ": \"true\"`",
        "`" GSD_NOMINATED_ANNOTATION,
    };
    char *doc = t_slurp("docs/kubernetes.md", NULL), *pre = t_slurp("docs/preemption.md", NULL);
    assert_non_null(doc);
    assert_non_null(pre);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strstr(doc, keys[i]))
            fail_msg("docs/kubernetes.md does not name %s", keys[i]);
    assert_non_null(strstr(pre, "`" GSD_NOMINATED_ANNOTATION "`"));
    free(doc);
    free(pre);
}

static void test_deploy_files(void **state)
{
    (void)state;
    struct gs_profile *p;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_config_load_kubesched("deploy/kube-scheduler-extender.yaml", NULL, &p, &d),
                     0);
    gs_profile_free(p);
    /* v1 (1.25+), v1beta3 (1.23-1.24) and v1beta1 (1.20-1.22, the one the e2e tests run): one
     * extender stanza */
    char *v1 = t_slurp("deploy/kube-scheduler-extender.yaml", NULL);
    char *v1beta3 = t_slurp("deploy/kube-scheduler-extender-v1beta3.yaml", NULL);
    char *v1beta1 = t_slurp("deploy/kube-scheduler-extender-v1beta1.yaml", NULL);
    assert_non_null(v1);
    assert_non_null(v1beta3);
    assert_non_null(v1beta1);
    assert_non_null(strstr(v1, "\nextenders:"));
    assert_string_equal(strstr(v1, "\nextenders:"), strstr(v1beta3, "\nextenders:"));
    assert_string_equal(strstr(v1, "\nextenders:"), strstr(v1beta1, "\nextenders:"));
    free(v1);
    free(v1beta3);
    free(v1beta1);
    /* the agent's DaemonSet reaches gpuschedd where it listens, with a CA and a node token it
     * has */
    char *daemon = t_slurp("deploy/gpuschedd.yaml", NULL),
         *agent = t_slurp("deploy/gpusched-agent.yaml", NULL);
    assert_non_null(strstr(daemon, "- --listen=0.0.0.0:8443\n"));
    assert_non_null(strstr(daemon, "\n    nodeTokenSHA256: "));
    assert_non_null(strstr(daemon, "matchLabels: {app.kubernetes.io/name: gpusched-agent}"));
    assert_non_null(strstr(agent, "- --server=https://gpuschedd.gpusched-system.svc:8443\n"));
    assert_non_null(strstr(agent, "- --ca-file=/etc/gpusched-agent/tls/ca.crt\n"));
    assert_non_null(strstr(agent, "secretName: gpuschedd-tls, items: [{key: ca.crt"));
    free(daemon);
    free(agent);
    struct gs_cluster *c;
    struct gs_scenario *inv;
    assert_int_equal(gsd_inventory_load("data/alibaba-gpu-v2023/openb_node_list_gpu_node.csv", NULL,
                                        &c, &inv, NULL, &d),
                     0);
    assert_int_equal(gs_cluster_node_count(c), 1213);
    assert_int_equal(inv->policy.nnodes, 1213);
    gs_cluster_free(c);
    gs_scenario_free(inv);
    assert_int_equal(gsd_inventory_load("/nonexistent.csv", NULL, &c, &inv, NULL, &d), -ENOENT);
    /* names no Kubernetes node has: no agent could register or heartbeat them */
    static const char *const names[] = {"NODE-1", "node_1", "../x", "-a", "a..b"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char text[256];
        snprintf(text, sizeof(text),
                 "sn,cpu_milli,memory_mib,gpu,model\n%s,96000,786432,8,V100M16\n", names[i]);
        assert_int_equal(write_cfg(text), 0);
        gs_diag_init(&d);
        assert_int_equal(gsd_inventory_load(path, NULL, &c, &inv, NULL, &d), -EINVAL);
        unlink(path);
        assert_non_null(strstr(d.msg, "not a Kubernetes node name"));
        char at[320];
        snprintf(at, sizeof(at), "%s:2:1: sn: \"%s\" is", path, names[i]); /* where it is */
        if (!strstr(d.msg, at))
            fail_msg("%s", d.msg);
    }
}

struct loaded {
    struct gsd_pod pods[4];
    char nodes[4][GS_NAME_MAX];
    int n;
};

static int keep(void *ud, struct gsd_stored *sp)
{
    struct loaded *l = ud;
    if (l->n == 4)
        return -E2BIG;
    free(sp->pod.meta);
    sp->pod.meta = NULL;
    l->pods[l->n] = sp->pod;
    memcpy(l->nodes[l->n++], sp->node, GS_NAME_MAX);
    return 0;
}

static struct gsd_pod mkpod(int64_t seq, const char *name, int running)
{
    struct gsd_pod p = {
        .seq = seq,
        .meta = "{}",
        .req = {.cpu_milli = 1000, .memory_mib = 512, .num_gpu = 2, .gpu_milli = 1000},
        .state = (uint8_t)running,
        .pl = {.node = 0, .gpu_mask = 5u, .gpu_milli = 1000},
        .submit_us = 10,
        .start_us = running ? 20 : 0};
    strcpy(p.spec.ns, "a");
    strcpy(p.spec.name, name);
    strcpy(p.tenant, "ta");
    strcpy(p.uid, "u-1");
    return p;
}

static void test_store(void **state)
{
    (void)state;
    char dir[64] = "/tmp/gs_test_store.XXXXXX", cmd[128];
    struct gsd_store *s;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_non_null(mkdtemp(dir));
    assert_int_equal(gsd_store_open(dir, 0, &s, &d), 0);
    assert_int_equal(gsd_store_next_seq(s), 1);
    struct gsd_pod w = mkpod(1, "waits", 0), r = mkpod(2, "runs", 1);
    assert_int_equal(gsd_store_begin(s), 0);
    assert_int_equal(gsd_store_pod_insert(s, &w, NULL, ""), 0);
    assert_int_equal(gsd_store_pod_insert(s, &r, "n1", "A100-SXM4-80GB"), 0);
    assert_int_equal(gsd_store_commit(s), 0);
    struct gsd_pod dup = mkpod(3, "runs", 0); /* same namespace/name: the store refuses it */
    assert_int_equal(gsd_store_begin(s), 0);
    assert_int_equal(gsd_store_pod_insert(s, &dup, NULL, ""), -EIO);
    gsd_store_rollback(s);
    /* The waiting pod starts; the running one ends: ledger rows open and close. */
    w.state = GSD_RUNNING;
    w.pl = (struct gs_placement){.node = 0, .gpu_mask = 2u, .gpu_milli = 1000};
    w.req.num_gpu = 1;
    w.start_us = 30;
    assert_int_equal(gsd_store_begin(s), 0);
    assert_int_equal(gsd_store_pod_start(s, &w, "n2", "T4"), 0);
    assert_int_equal(gsd_store_pod_delete(s, &r, 40), 0);
    assert_int_equal(gsd_store_commit(s), 0);
    assert_int_equal(gsd_store_next_seq(s), 3); /* the ledger remembers seq 2 */
    gsd_store_close(s);
    assert_int_equal(gsd_store_open(dir, 1, &s, &d), 0);
    struct loaded l = {0};
    assert_int_equal(gsd_store_load(s, keep, &l), 0);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.pods[0].spec.name, "waits");
    assert_int_equal(l.pods[0].state, GSD_RUNNING);
    assert_string_equal(l.nodes[0], "n2");
    assert_int_equal(l.pods[0].pl.gpu_mask, 2u);
    assert_int_equal(l.pods[0].pl.gpu_milli, 1000);
    assert_int_equal(l.pods[0].req.cpu_milli, 1000);
    gsd_store_close(s);
    /* A store of another schema is refused, not misread. */
    snprintf(cmd, sizeof(cmd), "sqlite3 %s/gpusched.db \"UPDATE meta SET value = 99\"", dir);
    if (system(cmd) == 0) {
        assert_int_equal(gsd_store_open(dir, 1, &s, &d), -EIO);
        assert_non_null(strstr(d.msg, "schema 99"));
    }
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* A pod's JSON text written directly (gsd_podview_dumps()) is byte for byte jansson's dump of
 * gsd_podview_json(): pending and running, MIG, shares, cards, every kind of string (escapes,
 * control bytes, UTF-8, bytes that are not UTF-8) and labels and annotations as the store keeps
 * them, as another writer might have kept them, and not JSON at all. */
static void test_podview_text(void **state)
{
    (void)state;
    const char *strs[] = {"",
                          "plain text",
                          "a \"quoted\" \\ back/slash",
                          "tab\tnew\nline\r\b\f",
                          "ctl \x01\x1f\x7f end",
                          "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac",
                          "not utf-8 \xff\xfe"};
    static char big[6000];
    int n = snprintf(big, sizeof(big), "{\"annotations\":{},\"labels\":{\"long\":\"");
    memset(big + n, 'x', sizeof(big) - (size_t)n - 4);
    memcpy(big + sizeof(big) - 4, "\"}}", 4);
    const char *metas[] = {
        NULL,
        "{}",
        "{\"annotations\":{},\"labels\":{}}",
        "{\"annotations\":{},\"labels\":{\"user\":\"u1\"}}",
        "{\"annotations\":{\"a\":\"1\",\"gpusched.io/gpu-milli\":\"7\",\"gpusched.io/node\":\"x\","
        "\"z\":\"2\"},\"labels\":{\"app\":\"train\",\"user\":\"u1\"},\"priorityClassName\":\"hi\"}",
        "{\"annotations\":{\"gpusched.io/mig-placement\":\"9\",\"gpusched.io/workload\":\"w\"},"
        "\"labels\":{}}",
        "{\"labels\":{\"z\":\"1\",\"a\":\"2\"}}",
        "{\"annotations\":{\"note\":\"say \\\"hi\\\"\\n\"},\"labels\":{\"k\":\"caf\xc3\xa9\"}}",
        "{\"annotations\":{\"u\":\"\\u00e9\\/\"},\"labels\":{\"k\":\"\\u0001\"}}",
        "{\"labels\":\"not an object\",\"annotations\":{\"a\":1}}",
        "{\"labels\":{\"a\":\"1\"},\"labels\":{\"b\":\"2\"}}",
        "{\"labels\":{\"bad\":\"\xff\"}}",
        "{\"labels\":{",
        "{\"labels\":{}} trailing",
        "{ \"labels\" : { \"spaced\" : \"1\" } }",
        big, /* past the room of an answer written on the stack */
    };
    for (int kind = 0; kind < 6; kind++)
        for (size_t m = 0; m < sizeof(metas) / sizeof(metas[0]); m++)
            for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
                struct gsd_podview v = {0};
                snprintf(v.ns, sizeof(v.ns), "team-a");
                snprintf(v.name, sizeof(v.name), "p-%zu-%zu", m, i);
                snprintf(v.uid, sizeof(v.uid), "%s", kind == 5 ? strs[i] : "u-1");
                snprintf(v.tenant, sizeof(v.tenant), "tenant-a");
                snprintf(v.queue, sizeof(v.queue), "%s", kind == 4 ? strs[i] : "default");
                v.running = kind == 1 || kind == 2 || kind == 4;
                v.extender = kind == 2;
                v.node = v.running ? 3 : -1;
                v.node_name = v.running ? (kind == 4 ? strs[i] : "node-0003") : NULL;
                v.cards = v.running ? (kind == 2 ? 0x8005u : 0x2u) : 0;
                v.card_milli = kind == 1 ? 250 : 1000;
                v.req = (struct gs_pod_req){.cpu_milli = 1500,
                                            .memory_mib = 4096,
                                            .num_gpu = kind == 1 ? 1 : 3,
                                            .gpu_milli = kind == 1 ? 250 : 1000};
                v.gpumem_mib = kind == 1 ? 8192 : 0;
                v.gpucores = kind == 1 ? 25 : 0;
                v.priority = kind == 3 ? -7 : 1000000;
                if (kind == 2 || kind == 3) {
                    snprintf(v.mig, sizeof(v.mig), "3g.40gb");
                    v.mig_start = 4;
                }
                v.reason = kind == 4 ? "" : strs[i];
                v.meta = metas[m];
                v.submit_us = 1767225600123456LL + (int64_t)i;
                v.start_us = v.running ? 1767225601000001LL : 0;
                v.evictions = kind == 3 ? 2 : 0; /* evicted twice, the last time saying strs[i] */
                v.last_eviction = kind == 3 ? strs[i] : "";
                v.last_eviction_us = kind == 3 && i % 2 ? 1767225602000003LL : 0; /* 0 s too */
                json_t *j = gsd_podview_json(&v);
                char *want = j ? json_dumps(j, JSON_COMPACT) : NULL, *got = gsd_podview_dumps(&v);
                json_decref(j);
                if (want)
                    assert_string_equal(got, want);
                else
                    assert_null(got);
                free(want);
                free(got);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_good),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_config_kubernetes),
        cmocka_unit_test(test_quota_load),
        cmocka_unit_test(test_config_fifo),
        cmocka_unit_test(test_bucket),
        cmocka_unit_test(test_config_http_metrics),
        cmocka_unit_test(test_quantities),
        cmocka_unit_test(test_podspec),
        cmocka_unit_test(test_podspec_create_refusals),
        cmocka_unit_test(test_deploy_files),
        cmocka_unit_test(test_pod_annotations_documented),
        cmocka_unit_test(test_store),
        cmocka_unit_test(test_podview_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
