/*
 * gpuschedd's REST API end to end: the real daemon on 127.0.0.1 with a real store in a temporary
 * directory. Submit, get, list, cancel, restart and check the state came back; tenants kept
 * apart; every error status with its field; rate limits; SIGHUP reloads; the gpusched client.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/api.h"
#include "common/util.h"
#include "gpusched/diag.h"
#include "gpusched/scenario.h"

#include <arpa/inet.h>
#include <sqlite3.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *sget(const json_t *j, const char *k)
{
    return json_string_value(json_object_get(j, k));
}

/* Submit @body as @token; assert the status; return the answer's JSON (new reference). */
static json_t *get(struct daemon *d, const char *token, const char *path, long want)
{
    struct answer a;
    assert_int_equal(h_call(d, "GET", path, token, NULL, &a), 0);
    assert_int_equal(a.status, want);
    json_t *j = json_incref(a.json);
    h_answer_free(&a);
    return j;
}

/* Lists of one tenant among another's pods, over several chunks of the snapshot (256 pods
 * each), page by page, and again after a pod in the middle goes and more arrive. The pages'
 * tokens are opaque: team-a's tell nothing of how many of team-b's pods came between its own. */
static void test_list_across_chunks(void **state)
{
    (void)state;
    struct daemon d;
    char name[32], path[96];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    for (int i = 0; i < 600; i++) {
        snprintf(name, sizeof(name), "c-%d", i);
        json_decref(h_submit(&d, i % 2 ? TOKEN_B : TOKEN_A,
                             h_pod(i % 2 ? "team-b" : "team-a", name, 0, 0), 201));
    }
    for (int round = 0; round < 2; round++) {
        int seen = 0, want = round ? 300 - 1 + 10 : 300;
        char from[64] = "";
        do { /* team-a's pods, 70 a page, each once and in order */
            snprintf(path, sizeof(path), "/v1/pods?limit=70&continue=%s", from);
            json_t *l = get(&d, TOKEN_A, path, 200), *item;
            size_t i;
            json_array_foreach(json_object_get(l, "items"), i, item)
            {
                assert_string_equal(sget(item, "namespace"), "team-a");
                seen++;
            }
            snprintf(from, sizeof(from), "%s", sget(l, "continue"));
            json_decref(l);
            if (from[0] && (strlen(from) != 32 || strspn(from, "0123456789abcdef") != 32))
                fail_msg("continue \"%s\": not a token of 32 hex digits", from);
        } while (from[0]);
        assert_int_equal(seen, want);
        /* the tokens' key: random, the daemon's own, kept beside the store */
        char key[128];
        struct stat ks;
        snprintf(key, sizeof(key), "%s/data/page-tokens.key", d.dir);
        assert_int_equal(stat(key, &ks), 0);
        assert_int_equal(ks.st_size, 16);
        assert_int_equal(ks.st_mode & 0777, 0600);
        /* a token is for the list that gave it: PodGroups are another */
        json_t *one = get(&d, TOKEN_A, "/v1/pods?limit=1", 200);
        snprintf(path, sizeof(path), "/v1/podgroups?continue=%s", sget(one, "continue"));
        json_decref(one);
        json_decref(get(&d, TOKEN_A, path, 400));
        json_t *l = get(&d, TOKEN_ADMIN, "/v1/pods?tenant=team-b&limit=5000", 200);
        assert_int_equal(json_array_size(json_object_get(l, "items")), 300);
        json_decref(l);
        l = get(&d, TOKEN_B, "/v1/pods?limit=5000&state=running", 200);
        json_t *w = get(&d, TOKEN_B, "/v1/pods?limit=5000&state=pending", 200);
        assert_int_equal(json_array_size(json_object_get(l, "items")) +
                             json_array_size(json_object_get(w, "items")),
                         300);
        json_decref(l);
        json_decref(w);
        snprintf(path, sizeof(path), "/v1/pods/team-a/c-%d", 300 + 2 * round);
        h_request(&d, "DELETE", path, TOKEN_A, NULL, 200);
        for (int i = 0; i < 10; i++) {
            snprintf(name, sizeof(name), "late-%d-%d", round, i);
            json_decref(h_submit(&d, TOKEN_A, h_pod("team-a", name, 0, 0), 201));
        }
    }
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Without --config no token reaches /v1: the daemon starts and /healthz is 200, but every /v1
 * request is a 401, so it says so once at start; with a config that has tokens it says nothing. */
static void test_no_tokens_warned(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(h_stop(&d), 0);
    assert_false(h_log_has(&d, "no tokens configured"));
    d.config[0] = '\0';
    assert_int_equal(h_start(&d), 0);
    assert_true(h_log_has(&d, "level=warn msg=\"no tokens configured: every /v1 request is "
                              "refused (401); give --config a DaemonConfig"));
    assert_true(h_log_has(&d, "config=none"));
    assert_int_equal(h_call(&d, "GET", "/v1/pods", TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 401);
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* POST /v1/clock answers the next walltime end in microseconds, and null when no running pod
 * has one left (not INT64_MAX, which a client would take for a time). */
static void test_clock_next_end(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    assert_int_equal(h_setup(&d, NULL), 0);
    d.manual_clock = 1;
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(h_call(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 1}", &a),
                     0);
    assert_int_equal(a.status, 200);
    assert_true(json_is_null(json_object_get(a.json, "next_end_us")));
    h_answer_free(&a);
    json_t *p = h_submit(
        &d, TOKEN_A, h_pod_annotated("team-a", "w", 1, 0, "sim.gpusched.io/duration", "1h"), 201);
    assert_string_equal(sget(p, "state"), "running");
    json_decref(p);
    assert_int_equal(h_call(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 1}", &a),
                     0);
    assert_int_equal(a.status, 200);
    assert_int_equal(json_integer_value(json_object_get(a.json, "next_end_us")),
                     1000000 + 3600000000LL);
    h_answer_free(&a);
    assert_int_equal(
        h_call(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 7200}", &a), 0);
    assert_int_equal(a.status, 200);
    assert_true(json_is_null(json_object_get(a.json, "next_end_us")));
    h_answer_free(&a);
    /* a restart goes on from the store's last time (the last submission, at 7202 s), not 0 */
    json_decref(h_submit(&d, TOKEN_A, h_pod("team-a", "after", 1, 0), 201));
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(h_call(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_us\": 0}", &a), 0);
    assert_int_equal(a.status, 200);
    assert_int_equal(json_integer_value(json_object_get(a.json, "now_us")), 7202000000LL);
    h_answer_free(&a);
    /* ... and from the clock itself when it moved past every stored time: it never goes back */
    assert_int_equal(
        h_call(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 1000}", &a), 0);
    h_answer_free(&a);
    h_kill(&d);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(h_call(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_us\": 0}", &a), 0);
    assert_int_equal(json_integer_value(json_object_get(a.json, "now_us")), 8202000000LL);
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_lifecycle_and_restart(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    json_t *p1 = h_submit(&d, TOKEN_A, h_pod("team-a", "p1", 2, 0), 201);
    assert_string_equal(sget(p1, "state"), "running");
    assert_int_equal(json_array_size(json_object_get(p1, "gpus")), 2);
    json_t *p2 = h_submit(&d, TOKEN_A, h_pod("team-a", "p2", 1, 30), 201);
    assert_int_equal(json_integer_value(json_object_get(p2, "gpu_milli")), 300);
    /* Two boards of 8: of three 8-card pods at least one waits (two when p1 took a board). */
    json_t *p3 = h_submit(&d, TOKEN_A, h_pod("team-a", "p3", 8, 0), 201);
    assert_string_equal(sget(p3, "state"), "running");
    json_t *p4 = h_submit(&d, TOKEN_A, h_pod("team-a", "p4", 8, 0), 201);
    json_t *p5 = h_submit(&d, TOKEN_A, h_pod("team-a", "p5", 8, 0), 201);
    assert_string_equal(sget(p5, "state"), "pending");
    assert_non_null(strstr(sget(p5, "reason"), "Insufficient nvidia.com/gpu"));
    int p4_waits = !strcmp(sget(p4, "state"), "pending");
    const char *next = p4_waits ? "/v1/pods/team-a/p4" : "/v1/pods/team-a/p5";
    json_t *l = get(&d, TOKEN_A, "/v1/pods?state=pending", 200);
    assert_int_equal(json_array_size(json_object_get(l, "items")), 1 + p4_waits);
    json_decref(l);
    l = get(&d, TOKEN_A, "/v1/pods?limit=3", 200);
    assert_int_equal(json_array_size(json_object_get(l, "items")), 3);
    assert_true(strlen(sget(l, "continue")) > 0);
    json_decref(l);

    assert_int_equal(h_stop(&d), 0); /* SIGTERM drains and exits 0 */
    assert_true(h_log_has(&d, "msg=stopped"));
    /* every log line names a pod NS/NAME, the one grep finds all of a pod's lines by */
    assert_true(h_log_has(&d, "msg=\"pod submitted\" pod=team-a/p1 tenant=team-a\n"));
    assert_true(h_log_has(&d, "msg=\"pod placed\" pod=team-a/p1 tenant=team-a state=running"));
    assert_int_equal(h_start(&d), 0);
    json_t *g = get(&d, TOKEN_A, "/v1/pods/team-a/p1", 200);
    assert_string_equal(sget(g, "node"), sget(p1, "node"));
    assert_true(json_equal(json_object_get(g, "gpus"), json_object_get(p1, "gpus")));
    assert_string_equal(sget(json_object_get(g, "annotations"), "gpusched.io/gpu-index"),
                        sget(json_object_get(p1, "annotations"), "gpusched.io/gpu-index"));
    json_decref(g);
    g = get(&d, TOKEN_A, next, 200);
    assert_string_equal(sget(g, "state"), "pending");
    json_decref(g);

    struct answer a; /* cancelling p3 frees a board: the first waiting pod gets it */
    assert_int_equal(h_call(&d, "DELETE", "/v1/pods/team-a/p3", TOKEN_A, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    h_answer_free(&a);
    g = get(&d, TOKEN_A, next, 200);
    assert_string_equal(sget(g, "state"), "running");
    assert_string_equal(sget(g, "node"), sget(p3, "node"));
    json_decref(g);
    g = get(&d, TOKEN_A, "/v1/pods/team-a/p3", 404); /* cancelled: said to be forgotten */
    assert_non_null(strstr(sget(g, "error"), "pod team-a/p3 not found (pods are held while pending "
                                             "or running: one that ended or was cancelled is "
                                             "forgotten"));
    json_decref(g);

    h_kill(&d); /* a crash, not a drain: the state still comes back */
    assert_int_equal(h_start(&d), 0);
    g = get(&d, TOKEN_A, next, 200);
    assert_string_equal(sget(g, "state"), "running");
    json_decref(g);
    json_decref(get(&d, TOKEN_A, "/v1/pods/team-a/p3", 404));
    json_t *n = get(&d, TOKEN_A, "/v1/nodes/n-t4-0", 200);
    assert_int_equal(json_array_size(json_object_get(n, "gpu")), 4);
    /* a node without a zone: it showed "default", which a nodeSelector was refused to name */
    assert_true(json_is_null(json_object_get(n, "zone")));
    json_decref(n);
    n = get(&d, TOKEN_A, "/v1/nodes", 200);
    assert_int_equal(json_array_size(json_object_get(n, "items")), 4);
    json_decref(n);
    json_decref(p1);
    json_decref(p2);
    json_decref(p3);
    json_decref(p4);
    json_decref(p5);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static long status_of(struct daemon *d, const char *method, const char *path, const char *token,
                      const char *body, char *field, size_t cap)
{
    struct answer a;
    assert_int_equal(h_call(d, method, path, token, body, &a), 0);
    long st = a.status;
    if (field)
        snprintf(field, cap, "%s", sget(a.json, "field") ? sget(a.json, "field") : "(none)");
    if (st >= 400)
        assert_non_null(sget(a.json, "error")); /* every error is {"error", "field"} */
    h_answer_free(&a);
    return st;
}

/* @method @path is a 400 naming @field, its message saying @words. */
static void refused_as(struct daemon *d, const char *method, const char *path, const char *field,
                       const char *words)
{
    struct answer a;
    assert_int_equal(h_call(d, method, path, TOKEN_A, NULL, &a), 0);
    assert_int_equal(a.status, 400);
    assert_string_equal(sget(a.json, "field"), field);
    if (!strstr(sget(a.json, "error"), words))
        fail_msg("%s: \"%s\" does not say \"%s\"", path, sget(a.json, "error"), words);
    h_answer_free(&a);
}

static void test_tenants_apart(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, TOKEN_A, h_pod("team-a", "mine", 1, 0), 201));
    json_decref(h_submit(&d, TOKEN_B, h_pod("team-b-dev", "theirs", 1, 0), 201));
    assert_int_equal(status_of(&d, "GET", "/v1/pods/team-a/mine", NULL, NULL, NULL, 0), 401);
    assert_int_equal(status_of(&d, "GET", "/v1/pods", "wrong-token-0123456789", NULL, NULL, 0),
                     401);
    assert_int_equal(status_of(&d, "GET", "/v1/status", NULL, NULL, NULL, 0), 401);
    assert_int_equal(status_of(&d, "GET", "/v1/pods/team-a/mine", TOKEN_B, NULL, NULL, 0), 403);
    assert_int_equal(status_of(&d, "DELETE", "/v1/pods/team-a/mine", TOKEN_B, NULL, NULL, 0), 403);
    assert_int_equal(status_of(&d, "GET", "/v1/pods/team-a/mine", TOKEN_A, NULL, NULL, 0), 200);
    assert_int_equal(status_of(&d, "GET", "/v1/pods/team-a/nothere", TOKEN_A, NULL, NULL, 0), 404);
    assert_int_equal(status_of(&d, "GET", "/v1/pods/team-b-dev/theirs", TOKEN_A, NULL, NULL, 0),
                     403);
    assert_int_equal(status_of(&d, "GET", "/v1/pods?tenant=team-b", TOKEN_A, NULL, NULL, 0), 403);
    /* another tenant's namespace, or one nobody owns: refused alike, as kube's RBAC refuses */
    static const char *const not_mine[] = {"/v1/pods?namespace=team-b-dev",
                                           "/v1/pods?namespace=nosuch", "/v1/nodes/n-t4-0/pods",
                                           "/v1/nodes/n-t4-0/register"};
    for (size_t i = 0; i < sizeof(not_mine) / sizeof(not_mine[0]); i++)
        assert_int_equal(status_of(&d, "GET", not_mine[i], TOKEN_A, NULL, NULL, 0), 403);
    char *body = h_pod("team-b", "intruder", 1, 0);
    assert_int_equal(status_of(&d, "POST", "/v1/pods", TOKEN_A, body, NULL, 0), 403);
    free(body);
    /* not even the admin places a pod in a namespace no tenant owns: it could not be billed */
    char field[128];
    body = h_pod("nosuch", "orphan", 1, 0);
    assert_int_equal(status_of(&d, "POST", "/v1/pods", TOKEN_ADMIN, body, field, sizeof(field)),
                     400);
    assert_string_equal(field, "metadata.namespace");
    free(body);
    json_t *l = get(&d, TOKEN_A, "/v1/pods", 200); /* a tenant lists its own pods only */
    assert_int_equal(json_array_size(json_object_get(l, "items")), 1);
    json_decref(l);
    l = get(&d, TOKEN_ADMIN, "/v1/pods", 200); /* the admin sees all */
    assert_int_equal(json_array_size(json_object_get(l, "items")), 2);
    json_decref(l);
    l = get(&d, TOKEN_ADMIN, "/v1/pods?tenant=team-b", 200);
    assert_int_equal(json_array_size(json_object_get(l, "items")), 1);
    json_decref(l);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* POST @body as YAML (@ctype) with @token; assert the status; the answer's "error" contains
 * @msg (NULL: not checked) and its "field" is @field (NULL: not checked). */
static void yaml_post(struct daemon *d, const char *path, const char *ctype, const char *body,
                      long want, const char *msg, const char *field)
{
    struct answer a;
    assert_int_equal(h_call_as(d, "POST", path, TOKEN_A, ctype, body, &a), 0);
    if (a.status != want || (msg && !strstr(sget(a.json, "error"), msg)))
        fail_msg("%s: %ld %s, want %ld and \"%s\"", path, a.status, a.body ? a.body : "", want,
                 msg ? msg : "");
    if (field)
        assert_string_equal(sget(a.json, "field"), field);
    h_answer_free(&a);
}

/* A manifest pasted as it is (Content-Type: application/yaml) is taken as its JSON would be; a
 * YAML error names body:LINE:COL; one document only; keys once; aliases cannot blow it up. */
static void test_yaml_bodies(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    const char *Y = "application/yaml";
    yaml_post(&d, "/v1/podgroups", Y,
              "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
              "metadata: {name: g, namespace: team-a}\nspec:\n  minMember: 1\n",
              201, NULL, NULL);
    yaml_post(&d, "/v1/pods", "application/yaml; charset=utf-8",
              "# pasted from a file\napiVersion: v1\nkind: Pod\nmetadata:\n  name: y1\n"
              "  namespace: team-a\n  annotations:\n    scheduling.k8s.io/group-name: g\n"
              "spec:\n  containers:\n    - name: main\n      resources:\n        limits:\n"
              "          nvidia.com/gpu: 2\n          cpu: \"4\"\n          memory: 8Gi\n",
              201, NULL, NULL);
    json_t *p = get(&d, TOKEN_A, "/v1/pods/team-a/y1", 200);
    assert_string_equal(sget(p, "state"), "running");
    assert_int_equal(json_array_size(json_object_get(p, "gpus")), 2);
    json_decref(p);
    /* what JSON checks, YAML gets too: the field named */
    yaml_post(&d, "/v1/pods", Y,
              "metadata: {name: y2}\nspec:\n  containers:\n  - name: m\n    resources:\n"
              "      limits: {nvidia.com/gpu: two}\n",
              400, "is not a Kubernetes quantity",
              "spec.containers[0].resources.limits.nvidia.com/gpu");
    yaml_post(&d, "/v1/pods", Y, "metadata: {name: y3\nspec: {}\n", 400, "body:2:5: YAML error",
              NULL);
    yaml_post(&d, "/v1/pods", Y, "hello\n", 400,
              "body:1:1: expected an object (a YAML mapping, as a manifest is), not a scalar",
              NULL);
    /* a typo or a wrong type in a field of no effect on placement is refused, not dropped */
    yaml_post(&d, "/v1/pods", Y,
              "metadata: {name: y12}\nspec:\n  containers:\n  - name: m\n    env: [{name: A, "
              "vaule: b}]\n",
              400, "unknown field \"vaule\" in spec.containers[0].env[0] (did you mean",
              "spec.containers[0].env[0].vaule");
    yaml_post(&d, "/v1/pods", "application/json",
              "{\"metadata\": {\"name\": \"y13\"}, \"spec\": {\"containers\": [{\"name\": \"m\", "
              "\"ports\": [{\"containerPort\": \"8080\"}]}]}}",
              400, "spec.containers[0].ports[0].containerPort must be an integer",
              "spec.containers[0].ports[0].containerPort");
    /* the API server's rules beyond the types: a mount naming no volume */
    yaml_post(&d, "/v1/pods", Y,
              "metadata: {name: y27}\nspec:\n  containers:\n  - name: m\n    volumeMounts: [{name: "
              "nope, mountPath: /x}]\n",
              400, "Not found: \"nope\"", "spec.containers[0].volumeMounts[0].name");
    /* a file mode in octal, as the Kubernetes docs write it, is the number kubectl reads */
    yaml_post(&d, "/v1/pods", Y,
              "metadata: {name: y14}\nspec:\n  containers: [{name: m}]\n  volumes:\n  - name: s\n"
              "    secret: {secretName: s, defaultMode: 0400}\n",
              201, NULL, NULL);
    /* a real is no integer, as Go's decoder says (an int64 field refuses 30.0 and 1e3) */
    yaml_post(&d, "/v1/pods", "application/json",
              "{\"metadata\": {\"name\": \"y25\"}, \"spec\": {\"terminationGracePeriodSeconds\": "
              "30.0, \"containers\": [{\"name\": \"m\"}]}}",
              400, "spec.terminationGracePeriodSeconds must be an integer",
              "spec.terminationGracePeriodSeconds");
    /* where a quantity stands, a real is one; a string holding what YAML takes as a line break
     * (U+0085, U+2028) or refuses (DEL, U+0080) is written so the snapshot still loads */
    yaml_post(&d, "/v1/pods", "application/json",
              "{\"metadata\": {\"name\": \"y26\", \"annotations\": {\"a\": \"\\u2028---\"}}, "
              "\"spec\": {\"containers\": [{\"name\": \"m\", \"env\": [{\"name\": \"E\", "
              "\"value\": \"\\u0085---\\u0085x\\u007f\\u0080\"}], \"resources\": {\"limits\": "
              "{\"nvidia.com/gpu\": 1.0}}}]}}",
              201, NULL, NULL);
    struct answer snap;
    assert_int_equal(h_call(&d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, &snap), 0);
    assert_int_equal(snap.status, 200);
    if (!strstr(snap.body, "\"defaultMode\": 256"))
        fail_msg("no defaultMode 256 in the snapshot");
    if (!strstr(snap.body, "\"\\u0085---\\u0085x\\u007f\\u0080\""))
        fail_msg("the env value is not escaped in the snapshot");
    char file[] = "/tmp/gs_snapshot.XXXXXX";
    int fd = mkstemp(file);
    assert_true(fd >= 0 && write(fd, snap.body, strlen(snap.body)) == (ssize_t)strlen(snap.body));
    close(fd);
    struct gs_scenario *scn;
    struct gs_diag dg;
    gs_diag_init(&dg);
    assert_int_equal(gs_scenario_new(&scn), 0);
    if (gs_scenario_load(scn, file, &dg))
        fail_msg("the snapshot does not load: %s", dg.msg);
    gs_scenario_free(scn);
    unlink(file);
    h_answer_free(&snap);
    yaml_post(&d, "/v1/pods", Y, "metadata: {name: y4}\n---\nmetadata: {name: y5}\n", 400,
              "body:3:1: one object per request", NULL);
    yaml_post(&d, "/v1/pods", Y, "metadata: {name: y6}\nmetadata: {name: y7}\n", 400,
              "body:2:1: key \"metadata\" given twice", NULL);
    yaml_post(&d, "/v1/pods", Y, "", 400, "no YAML document", NULL);
    /* nine levels of ten aliases each: 10^9 nodes if expanded, refused instead */
    char laughs[1024] = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
    for (char k = 'b'; k <= 'j'; k++)
        snprintf(laughs + strlen(laughs), sizeof(laughs) - strlen(laughs),
                 "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", k, k, k - 1, k - 1,
                 k - 1, k - 1, k - 1, k - 1, k - 1, k - 1, k - 1, k - 1);
    yaml_post(&d, "/v1/pods", Y, laughs, 400, "aliases that repeat more than the document holds",
              NULL);
    /* a long key repeated through an aliased mapping counts too */
    char *keys = malloc(60000);
    assert_non_null(keys);
    strcpy(keys, "k: &k ");
    memset(keys + 6, 'x', 20000);
    strcpy(keys + 20006, "\nm: &m {*k : 1}\nl: [");
    for (int i = 0; i < 4000; i++)
        strcat(keys + 20000, "*m,");
    strcat(keys + 20000, "*m]\n");
    yaml_post(&d, "/v1/pods", Y, keys, 400, "aliases that repeat more than the document holds",
              NULL);
    free(keys);
    /* What kubectl's YAML 1.1 reads otherwise, a NUL inside a string, a tag that would be
     * dropped: refused naming the place, never taken changed (a label "x\0y" was "x"). */
    yaml_post(&d, "/v1/pods", Y, "metadata: {name: y9, labels: {a: yes}}\n", 400,
              "body:1:34: metadata.labels.a: \"yes\" is a boolean to kubectl", "metadata.labels.a");
    yaml_post(&d, "/v1/pods", Y, "metadata: {name: y10, labels: {a: \"x\\0y\"}}\n", 400,
              "a NUL character", NULL);
    yaml_post(&d, "/v1/pods", Y, "metadata: {name: y11}\nspec: {priority: 010}\n", 400,
              "body:2:18: spec.priority: \"010\" is an integer to kubectl (YAML 1.1 reads 010 as 8",
              "spec.priority");
    yaml_post(&d, "/v1/pods", Y, "metadata: {name: y12, labels: {a: !!binary eA==}}\n", 400,
              "body:1:35: YAML tag !!binary is not read", NULL);
    yaml_post(&d, "/v1/pods", Y,
              "metadata: {name: y13, namespace: team-a, labels: {a: !!str 5, b: True}}\n"
              "spec: {containers: [{name: m}]}\n",
              400, "metadata.labels.b: expected a string",
              "metadata.labels.b"); /* !!str 5 is the text */
    /* a plain float is a number, as kubectl reads it: no text for a string field, a quantity
     * as written (0.1 is 100m); one JSON cannot carry is refused */
    /* the simulator's own annotations: each refused saying why it has no meaning here */
    yaml_post(&d, "/v1/pods", Y,
              "metadata: {name: y15, annotations: {sim.gpusched.io/arrival: 5m}}\n"
              "spec: {containers: [{name: m}]}\n",
              400, "arrival: only a simulated run gives it a meaning; gpuschedd takes a pod when",
              "metadata.annotations.sim.gpusched.io/arrival");
    yaml_post(&d, "/v1/pods", Y,
              "metadata: {name: y16, annotations: {sim.gpusched.io/node: n1}}\n"
              "spec: {containers: [{name: m}]}\n",
              400, "a simulated run's snapshot writes it",
              "metadata.annotations.sim.gpusched.io/node");
    yaml_post(&d, "/v1/pods", Y, "metadata: {name: 1.5}\nspec: {containers: [{}]}\n", 400,
              "metadata.name must be a string, not a number", "metadata.name");
    yaml_post(&d, "/v1/pods", Y, "metadata: {name: y14}\nspec: {containers: [{name: 2.5}]}\n", 400,
              "spec.containers[0].name must be a string, not the float 2.5",
              "spec.containers[0].name");
    yaml_post(&d, "/v1/podgroups", Y, "metadata: {name: g2}\nspec: {minMember: 1, queue: 2.5}\n",
              400, "spec.queue must be a string, not a number", "spec.queue");
    yaml_post(&d, "/v1/pods", Y,
              "metadata: {name: y15}\nspec: {containers: [{name: m, resources: {requests: {cpu: "
              ".inf}}}]}\n",
              400,
              "body:2:59: spec.containers[0].resources.requests.cpu: \".inf\" is a float JSON "
              "cannot carry",
              "spec.containers[0].resources.requests.cpu");
    yaml_post(&d, "/v1/pods", Y,
              "metadata: {name: y16}\nspec: {containers: [{name: m, resources: {requests: {cpu: "
              "0.1}}}]}\n",
              201, NULL, NULL);
    p = get(&d, TOKEN_A, "/v1/pods/team-a/y16", 200);
    assert_int_equal(json_integer_value(json_object_get(p, "cpu_milli")), 100);
    json_decref(p);
    yaml_post(&d, "/v1/pods", NULL, "{\"metadata\": {\"name\": \"j\\u0000x\"}}", 400,
              "body: a NUL character (\\u0000) in a string at line 1 column", NULL);
    yaml_post(&d, "/v1/podgroups", NULL, "{\"spec\": {\"minMember\": 99999999999999999999}}", 400,
              "body: the number at line 1 column 43 is too large (an integer must fit in 64 bits",
              NULL);
    /* a JSON body is still JSON, whatever else comes */
    yaml_post(&d, "/v1/pods", "application/json", "metadata: {name: y8}\n", 400, "not JSON", NULL);
    /* A misspelt field is named, with the nearest known one, in YAML as in JSON, wherever it is
     * (Kubernetes' fieldValidation=Strict refuses an unknown field the same way). */
    static const struct {
        const char *body, *msg, *field;
    } typos[] = {
        {"metadata: {name: t1}\nspec:\n  contaners: [{name: m}]\n",
         "unknown field \"contaners\" in spec (did you mean \"containers\"?)", "spec.contaners"},
        {"metadata: {name: t2, namespce: team-a}\nspec: {containers: [{name: m}]}\n",
         "(did you mean \"namespace\"?)", "metadata.namespce"},
        {"metadata: {name: t3}\nspec: {containers: [{name: m, resorces: {}}]}\n",
         "(did you mean \"resources\"?)", "spec.containers[0].resorces"},
        {"metadata: {name: t4}\nspec: {containers: [{name: m, resources: {limit: {}}}]}\n",
         "(did you mean \"limits\"?)", "spec.containers[0].resources.limit"},
    };
    for (size_t i = 0; i < sizeof(typos) / sizeof(typos[0]); i++)
        yaml_post(&d, "/v1/pods", Y, typos[i].body, 400, typos[i].msg, typos[i].field);
    yaml_post(&d, "/v1/pods", NULL,
              "{\"metadata\":{\"name\":\"t5\"},\"spec\":{\"contaners\":[{}]}}", 400,
              "(did you mean \"containers\"?)", "spec.contaners");
    /* y26's DEL and U+0080 read back after a restart: the store's reader refused them, and a
     * running pod it cannot read keeps the daemon from starting */
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    struct answer a;
    assert_int_equal(h_call(&d, "GET", "/v1/pods/team-a/y26", TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    assert_string_equal(sget(a.json, "state"), "running");
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_errors_name_the_field(void **state)
{
    (void)state;
    struct daemon d;
    char field[128], big[70000];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(status_of(&d, "POST", "/v1/pods", TOKEN_A, "{not json", field, 128), 400);
    const char *bad_gpu =
        "{\"metadata\":{\"name\":\"x\",\"namespace\":\"team-a\"},\"spec\":"
        "{\"containers\":[{\"name\":\"m\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":"
        "\"two\"}}}]}}";
    assert_int_equal(status_of(&d, "POST", "/v1/pods", TOKEN_A, bad_gpu, field, 128), 400);
    assert_string_equal(field, "spec.containers[0].resources.limits.nvidia.com/gpu");
    const char *bad_mem = "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name"
                          "\":\"a\"},{\"name\":\"b\",\"resources\":{\"requests\":{\"memory\":"
                          "\"12Qi\"}}}]}}";
    assert_int_equal(status_of(&d, "POST", "/v1/pods", TOKEN_A, bad_mem, field, 128), 400);
    assert_string_equal(field, "spec.containers[1].resources.requests.memory");
    const char *no_name = "{\"metadata\":{},\"spec\":{\"containers\":[{\"name\":\"m\"}]}}";
    assert_int_equal(status_of(&d, "POST", "/v1/pods", TOKEN_A, no_name, field, 128), 400);
    assert_string_equal(field, "metadata.name");
    const char *share2 =
        "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"m\",\"resources"
        "\":{\"limits\":{\"nvidia.com/gpu\":2,\"nvidia.com/gpucores\":50}}}]}}";
    json_decref(h_submit(&d, TOKEN_A, strdup(share2), 201)); /* half of each of two cards */
    /* requests.nvidia.com/gpu and no limit: refused, as no LimitRange here gives a default; the
     * container at fault is named by its place in its own list, app containers checked before
     * init containers, as LimitRanger checks them */
#define REQ1 "\"resources\":{\"requests\":{\"nvidia.com/gpu\":1}}"
    static const struct {
        const char *body, *field;
    } req_only[] = {
        {"{\"metadata\":{\"name\":\"ro\"},\"spec\":{\"containers\":[{\"name\":\"m\"," REQ1 "}]}}",
         "spec.containers[0].resources.limits.nvidia.com/gpu"},
        {"{\"metadata\":{\"name\":\"ro2\"},\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":"
         "\"b\"," REQ1 "}]}}",
         "spec.containers[1].resources.limits.nvidia.com/gpu"},
        {"{\"metadata\":{\"name\":\"ro3\"},\"spec\":{\"initContainers\":[{\"name\":\"i\"," REQ1
         "}],\"containers\":[{\"name\":\"a\"}]}}",
         "spec.initContainers[0].resources.limits.nvidia.com/gpu"},
        {"{\"metadata\":{\"name\":\"ro4\"},\"spec\":{\"initContainers\":[{\"name\":\"i\"," REQ1
         "}],\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"," REQ1 "}]}}",
         "spec.containers[1].resources.limits.nvidia.com/gpu"},
    };
#undef REQ1
    for (size_t i = 0; i < sizeof(req_only) / sizeof(req_only[0]); i++) {
        assert_int_equal(status_of(&d, "POST", "/v1/pods", TOKEN_A, req_only[i].body, field, 128),
                         400);
        assert_string_equal(field, req_only[i].field);
    }
    /* more cards than a node has, asked by an init container: it named the app containers */
    const char *init_big =
        "{\"metadata\":{\"name\":\"ib\"},\"spec\":{\"initContainers\":[{\"name\":\"i\","
        "\"resources\":{\"limits\":{\"nvidia.com/gpu\":100}}}],\"containers\":[{\"name\":\"a\"},"
        "{\"name\":\"b\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}}]}}";
    assert_int_equal(status_of(&d, "POST", "/v1/pods", TOKEN_A, init_big, field, 128), 400);
    assert_string_equal(field, "spec.initContainers[0].resources.limits.nvidia.com/gpu");
    /* The same pod sent again (its first answer lost) is the pod held, 200; another spec under
     * that name is a 409. */
    json_t *first = h_submit(&d, TOKEN_A, h_pod("team-a", "dup", 1, 0), 201);
    json_t *again = h_submit(&d, TOKEN_A, h_pod("team-a", "dup", 1, 0), 200);
    assert_string_equal(json_string_value(json_object_get(first, "uid")),
                        json_string_value(json_object_get(again, "uid")));
    json_decref(first);
    json_decref(again);
    char *dup = h_pod("team-a", "dup", 2, 0);
    assert_int_equal(status_of(&d, "POST", "/v1/pods", TOKEN_A, dup, field, 128), 409);
    assert_string_equal(field, "metadata.name");
    free(dup);
    /* A workload pasted as it is (a Deployment, a Volcano Job) is refused saying what to send. */
    struct answer a;
    h_expect(&d, "POST", "/v1/pods", TOKEN_A,
             "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"x\"}}",
             400, &a);
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")),
                           "kind Deployment: expected Pod. POST /v1/pods places pods: a workload "
                           "(Deployment, Volcano Job, ...) as each pod it would create"));
    h_answer_free(&a);
    /* So is a Node or a Queue, which are no workloads: where they go instead is named. */
    h_expect(&d, "POST", "/v1/pods", TOKEN_A,
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}", 400, &a);
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")),
                           "a Queue or other policy goes in gpuschedd's --config files, nodes in "
                           "its --nodes"));
    h_answer_free(&a);
    /* A Pod of another apiVersion went into the store as given, and then into every snapshot,
     * which the simulator refuses whole. */
    const char *bad_api = "{\"apiVersion\":\"garbage/v9\",\"kind\":\"Pod\",\"metadata\":{\"name\""
                          ":\"x\"},\"spec\":{\"containers\":[{\"name\":\"m\"}]}}";
    assert_int_equal(status_of(&d, "POST", "/v1/pods", TOKEN_A, bad_api, field, 128), 400);
    assert_string_equal(field, "apiVersion");
    const char *num_api = "{\"apiVersion\":7,\"metadata\":{\"name\":\"x\"},\"spec\":{\"contain"
                          "ers\":[{}]}}";
    assert_int_equal(status_of(&d, "POST", "/v1/pods", TOKEN_A, num_api, field, 128), 400);
    assert_string_equal(field, "apiVersion");
    /* Bytes that are not UTF-8 and keys given twice are named as such. */
    h_expect(&d, "POST", "/v1/pods", TOKEN_A, "{\"metadata\":{\"name\":\"x\xff\"}}", 400, &a);
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")),
                           "body: not UTF-8 at byte offset 22 (line 1, column 23)"));
    h_answer_free(&a);
    h_expect(&d, "POST", "/v1/pods", TOKEN_A, "{\"metadata\":{\"name\":\"x\",\"name\":\"y\"}}", 400,
             &a);
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")),
                           "body: key \"name\" given twice in one object"));
    h_answer_free(&a);
    memset(big, ' ', sizeof(big) - 1); /* over maxBodyBytes (65536) */
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(status_of(&d, "POST", "/v1/pods", TOKEN_A, big, NULL, 0), 413);
    assert_int_equal(status_of(&d, "GET", "/v1/nope", TOKEN_A, NULL, NULL, 0), 404);
    assert_int_equal(status_of(&d, "PUT", "/v1/pods", TOKEN_A, "{}", NULL, 0), 405);
    assert_int_equal(status_of(&d, "GET", "/v1/pods?state=sleeping", TOKEN_A, NULL, field, 128),
                     400);
    assert_string_equal(field, "state");
    /* a misspelt filter is refused, not ignored (which would list every pod) */
    assert_int_equal(status_of(&d, "GET", "/v1/pods?tenat=team-a", TOKEN_A, NULL, field, 128), 400);
    assert_string_equal(field, "tenat");
    assert_int_equal(status_of(&d, "GET", "/v1/status?verbose=1", TOKEN_A, NULL, field, 128), 400);
    assert_string_equal(field, "verbose");
    /* the routes without a token too: a scrape's collect[] or a probe's ?verbose was ignored */
    static const char *const open_routes[][2] = {{"/metrics?collect%5B%5D=x", "collect[]"},
                                                 {"/healthz?verbose", "verbose"},
                                                 {"/ui?x=1", "x"}};
    for (size_t i = 0; i < sizeof(open_routes) / sizeof(open_routes[0]); i++) {
        assert_int_equal(status_of(&d, "GET", open_routes[i][0], NULL, NULL, field, 128), 400);
        assert_string_equal(field, open_routes[i][1]);
    }
    /* the scheduler thread's routes too: ?dryRun=All created the pod, ?tenat= billed everyone */
    char *pod = h_pod("team-a", "dry", 1, 0);
    assert_int_equal(status_of(&d, "POST", "/v1/pods?dryRun=All", TOKEN_A, pod, field, 128), 400);
    assert_string_equal(field, "dryRun");
    free(pod);
    assert_int_equal(status_of(&d, "GET", "/v1/pods/team-a/dry", TOKEN_A, NULL, NULL, 0), 404);
    assert_int_equal(status_of(&d, "GET", "/v1/bills?tenat=team-a", TOKEN_A, NULL, field, 128),
                     400);
    assert_string_equal(field, "tenat");
    assert_int_equal(status_of(&d, "GET", "/v1/bills?tenant=team-a", TOKEN_A, NULL, NULL, 0), 200);
    /* an argument given twice: only the first was read, the admin's list of team-b was team-a's */
    assert_int_equal(
        status_of(&d, "GET", "/v1/pods?tenant=team-a&tenant=team-b", TOKEN_ADMIN, NULL, field, 128),
        400);
    assert_string_equal(field, "tenant");
    assert_int_equal(
        status_of(&d, "GET", "/v1/bills?tenant=team-a&tenant=team-a", TOKEN_A, NULL, field, 128),
        400);
    assert_string_equal(field, "tenant");
    /* "%00" decoded ended the value or the path there: ?limit=1%00 was 1, and a DELETE of
     * dup%00x deleted dup; nor do blanks or a sign make a number */
    assert_int_equal(status_of(&d, "GET", "/v1/pods?limit=1%00", TOKEN_A, NULL, field, 128), 400);
    assert_string_equal(field, "limit");
    assert_int_equal(status_of(&d, "GET", "/v1/pods?limit=%201", TOKEN_A, NULL, field, 128), 400);
    assert_string_equal(field, "limit");
    assert_int_equal(status_of(&d, "GET", "/v1/pods?continue=+0", TOKEN_A, NULL, field, 128), 400);
    assert_string_equal(field, "continue");
    /* a position as a number is no token; one of a token's form this run did not make is gone,
     * as the API server answers an expired continue */
    assert_int_equal(status_of(&d, "GET", "/v1/pods?continue=3", TOKEN_A, NULL, field, 128), 400);
    assert_int_equal(status_of(&d, "GET", "/v1/pods?continue=0123456789abcdef0123456789abcdef",
                               TOKEN_A, NULL, field, 128),
                     410);
    assert_string_equal(field, "continue");
    /* past a cap: the argument named, and the cap, on both threads' routes */
    char path[256];
    snprintf(path, sizeof(path), "/v1/pods?tenant=%0128d", 0);
    refused_as(&d, "GET", path, "tenant", "tenant: longer than 127 bytes");
    snprintf(path, sizeof(path), "/v1/pods?dryRun=%0128d", 0);
    refused_as(&d, "POST", path, "dryRun", "dryRun: longer than 127 bytes");
    refused_as(&d, "GET", "/v1/status?a_name_of_forty_bytes_0123456789abcd=1",
               "a_name_of_forty_bytes_012345678", "name is longer than 31 bytes");
    refused_as(&d, "GET", "/v1/pods?a=1&b=1&c=1&d=1&e=1&f=1&g=1&h=1&i=1", "i",
               "i: more than 8 query arguments");
    assert_int_equal(status_of(&d, "DELETE", "/v1/pods/team-a/dup%00x", TOKEN_A, NULL, NULL, 0),
                     404);
    assert_int_equal(status_of(&d, "GET", "/v1/pods/team-a/dup", TOKEN_A, NULL, NULL, 0), 200);
    assert_int_equal(status_of(&d, "GET", "/v1/pods/team-a/d%75p", TOKEN_A, NULL, NULL, 0), 200);
    /* an encoded '/' is part of its segment, not a second one */
    assert_int_equal(status_of(&d, "GET", "/v1/pods/team-a%2Fdup", TOKEN_A, NULL, NULL, 0), 404);
    assert_int_equal(status_of(&d, "GET", "/v1/pods/team-a%2fdup", TOKEN_A, NULL, NULL, 0), 404);
    /* bytes that are no UTF-8, quoted back escaped: a JSON answer cannot hold them (it said 500,
     * "out of memory", even before the token was read) */
    refused_as(&d, "GET", "/healthz?%FF", "\\xff", "\\xff: no such query argument");
    assert_int_equal(status_of(&d, "GET", "/v1/pods?tenant=nobody", TOKEN_ADMIN, NULL, field, 128),
                     404); /* it listed no pod, as though the tenant had none */
    assert_string_equal(field, "tenant");
    assert_int_equal(status_of(&d, "GET", "/v1/pods?queue=nope", TOKEN_A, NULL, field, 128), 404);
    assert_string_equal(field, "queue");
    assert_int_equal(status_of(&d, "GET", "/v1/bills?tenant=a%C3", TOKEN_ADMIN, NULL, field, 128),
                     404);
    assert_string_equal(field, "tenant");
    assert_int_equal(status_of(&d, "GET", "/v1/tenants/%ED%A0%80/bill", TOKEN_ADMIN, NULL, NULL, 0),
                     404);
    /* what an API server sets on create is not taken from the request: a UID kept was another
     * pod's as readily as its own */
    static const char *const server_set[][2] = {
        {"\"uid\":\"u-1\"", "metadata.uid"},
        {"\"resourceVersion\":\"7\"", "metadata.resourceVersion"},
        {"\"finalizers\":[\"x\"]", "metadata.finalizers"},
    };
    for (size_t i = 0; i < sizeof(server_set) / sizeof(server_set[0]); i++) {
        char body[256];
        snprintf(
            body, sizeof(body),
            "{\"metadata\":{\"name\":\"made\",%s},\"spec\":{\"containers\":[{\"name\":\"m\"}]}}",
            server_set[i][0]);
        assert_int_equal(status_of(&d, "POST", "/v1/pods", TOKEN_A, body, field, 128), 400);
        assert_string_equal(field, server_set[i][1]);
        snprintf(body, sizeof(body),
                 "{\"metadata\":{\"name\":\"made\",%s},\"spec\":{\"minMember\":1}}",
                 server_set[i][0]);
        assert_int_equal(status_of(&d, "POST", "/v1/podgroups", TOKEN_A, body, field, 128), 400);
        assert_string_equal(field, server_set[i][1]);
    }
    /* a misspelt key said as such, with the key meant, not as the one it stands for missing */
    static const struct {
        const char *path, *body, *field, *meant;
    } misspelt[] = {
        {"/v1/pods", "{\"metdata\":{\"name\":\"m\"},\"spec\":{\"containers\":[{\"name\":\"m\"}]}}",
         "metdata", "(did you mean \"metadata\"?)"},
        {"/v1/pods", "{\"metadata\":{\"nme\":\"m\"},\"spec\":{\"containers\":[{\"name\":\"m\"}]}}",
         "metadata.nme", "(did you mean \"name\"?)"},
        {"/v1/pods", "{\"metadata\":{\"name\":\"m\"},\"spex\":{\"containers\":[{\"name\":\"m\"}]}}",
         "spex", "(did you mean \"spec\"?)"},
        {"/v1/podgroups", "{\"metdata\":{\"name\":\"g\"},\"spec\":{\"minMember\":2}}", "metdata",
         "(did you mean \"metadata\"?)"},
    };
    for (size_t i = 0; i < sizeof(misspelt) / sizeof(misspelt[0]); i++) {
        struct answer m;
        assert_int_equal(h_call(&d, "POST", misspelt[i].path, TOKEN_A, misspelt[i].body, &m), 0);
        assert_int_equal(m.status, 400);
        assert_string_equal(sget(m.json, "field"), misspelt[i].field);
        if (!strstr(sget(m.json, "error"), misspelt[i].meant))
            fail_msg("%s: %s", misspelt[i].body, sget(m.json, "error"));
        h_answer_free(&m);
    }
    /* a misspelt PodGroup field: the one meant is named */
    assert_int_equal(h_call(&d, "POST", "/v1/podgroups", TOKEN_A,
                            "{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMembr\":2}}", &a),
                     0);
    assert_int_equal(a.status, 400);
    assert_string_equal(sget(a.json, "field"), "spec.minMembr");
    assert_non_null(strstr(sget(a.json, "error"), "(did you mean \"minMember\"?)"));
    h_answer_free(&a);
    assert_int_equal(
        status_of(&d, "POST", "/v1/pods", TOKEN_A,
                  "{\"metadata\":{\"name\":\"made\"},\"spec\":{\"containers\":[{\"name\":\"m\"}]},"
                  "\"status\":{\"phase\":\"Running\"}}",
                  field, 128),
        400);
    assert_string_equal(field, "status");
    assert_int_equal(status_of(&d, "GET", "/v1/pods/team-a/made", TOKEN_A, NULL, NULL, 0), 404);
    /* a tenant the query names but no one has, or another's: the answer names the argument */
    assert_int_equal(status_of(&d, "GET", "/v1/bills?tenant=nobody", TOKEN_ADMIN, NULL, field, 128),
                     404);
    assert_string_equal(field, "tenant");
    assert_int_equal(status_of(&d, "GET", "/v1/bills?tenant=team-b", TOKEN_A, NULL, field, 128),
                     403);
    assert_string_equal(field, "tenant");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_rate_limit(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, "  - name: team-c\n"
                                 "    token: token-c-0123456789abcdef\n"
                                 "    namespaces: [team-c]\n"
                                 "    rateLimit: {requestsPerSecond: 0.01, burst: 2}\n"),
                     0);
    assert_int_equal(h_start(&d), 0);
    const char *tok = "token-c-0123456789abcdef";
    assert_int_equal(status_of(&d, "GET", "/v1/pods", tok, NULL, NULL, 0), 200);
    assert_int_equal(status_of(&d, "GET", "/v1/pods", tok, NULL, NULL, 0), 200);
    struct answer a;
    assert_int_equal(h_call(&d, "GET", "/v1/pods", tok, NULL, &a), 0);
    assert_int_equal(a.status, 429);
    assert_int_equal(atoi(a.retry_after), 100); /* one request at 0.01/s: 100 s */
    h_answer_free(&a);
    assert_int_equal(status_of(&d, "GET", "/v1/pods", TOKEN_A, NULL, NULL, 0), 200); /* others */
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_sighup_reload(void **state)
{
    (void)state;
    struct daemon d;
    char cfg[2048];
    const char *tok = "token-c-0123456789abcdef";
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(status_of(&d, "GET", "/v1/pods", tok, NULL, NULL, 0), 401);
    FILE *f = fopen(d.config, "r");
    size_t n = fread(cfg, 1, sizeof(cfg) - 1, f);
    fclose(f);
    cfg[n] = '\0';
    char good[4096];
    snprintf(good, sizeof(good), "%s  - name: team-c\n    token: %s\n    namespaces: [team-c]\n",
             cfg, tok);
    assert_int_equal(h_write(d.config, good), 0);
    kill(d.pid, SIGHUP);
    /* the log, not the token, is polled: each 401 counts against the address's failed-token
     * budget, and a reload slower than ten polls (a loaded machine) left it answered 429 */
    for (int i = 0; i < 3000 && !h_log_has(&d, "config reloaded"); i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    assert_int_equal(status_of(&d, "GET", "/v1/pods", tok, NULL, NULL, 0), 200);
    /* A file taking team-c's namespace from it while it holds a pod is refused: the pod stayed
     * billed to team-c, and no token could read or cancel it. */
    char *pod = h_pod("team-c", "held", 0, 0);
    assert_int_equal(status_of(&d, "POST", "/v1/pods", tok, pod, NULL, 0), 201);
    free(pod);
    assert_int_equal(h_write(d.config, cfg), 0);
    kill(d.pid, SIGHUP);
    for (int i = 0; i < 3000 && !h_log_has(&d, "config reload refused"); i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    assert_true(h_log_has(&d, "namespace team-c, which holds pod team-c/held of tenant team-c, "
                              "would belong to no tenant"));
    assert_int_equal(status_of(&d, "GET", "/v1/pods/team-c/held", tok, NULL, NULL, 0), 200);
    /* ... and so is a start with it: no token would read or cancel the pod */
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), -1);
    assert_true(h_log_has(&d, "namespace team-c, which holds pod team-c/held of tenant team-c, "
                              "would belong to no tenant"));
    assert_int_equal(h_write(d.config, good), 0);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(status_of(&d, "GET", "/v1/pods/team-c/held", tok, NULL, NULL, 0), 200);
    /* A bad file is refused with its reason logged; the one in force stays. */
    assert_int_equal(
        h_write(d.config, "kind: DaemonConfig\ntenants:\n  - name: x\n    rateLimt: 3\n"), 0);
    kill(d.pid, SIGHUP);
    for (int i = 0; i < 3000 && !h_log_has(&d, "unknown key"); i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    assert_true(h_log_has(&d, "config reload refused: the one in force stays"));
    assert_true(h_log_has(&d, "unknown key"));
    assert_int_equal(status_of(&d, "GET", "/v1/pods", tok, NULL, NULL, 0), 200);
    assert_int_equal(status_of(&d, "GET", "/v1/pods", TOKEN_A, NULL, NULL, 0), 200);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Run the gpusched client with up to three arguments (@a3 may be NULL); return its exit status,
 * its stdout in @out. */
static int client3(const struct daemon *d, char *out, size_t cap, const char *a1, const char *a2,
                   const char *a3)
{
    const char *bin = getenv("GPUSCHED_BIN");
    char server[64], path[128];
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", d->port);
    snprintf(path, sizeof(path), "%s/client.out", d->dir);
    char *argv[] = {(char *)bin, (char *)a1, "--server", server, "--token",
                    TOKEN_A,     (char *)a2, (char *)a3, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char err[128]; /* its standard error in dir/client.err */
    snprintf(err, sizeof(err), "%s/client.err", d->dir);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int st = -1;
    if (posix_spawn(&pid, bin, &fa, NULL, argv, environ) == 0)
        waitpid(pid, &st, 0);
    posix_spawn_file_actions_destroy(&fa);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(out, 1, cap - 1, f) : 0;
    out[n] = '\0';
    if (f)
        fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int client(const struct daemon *d, char *out, size_t cap, const char *a1, const char *a2)
{
    return client3(d, out, cap, a1, a2, NULL);
}

/* @s with each run of spaces made one, in place (table columns compared by content). */
static char *squeeze(char *s)
{
    char *w = s;
    for (const char *r = s; *r; r++)
        if (*r != ' ' || (w > s && w[-1] != ' ' && w[-1] != '\n'))
            *w++ = *r;
    *w = '\0';
    for (char *p = strstr(s, " \n"); p; p = strstr(p, " \n")) /* trailing spaces */
        memmove(p, p + 1, strlen(p));
    return s;
}

static void test_client(void **state)
{
    (void)state;
    struct daemon d;
    char out[65536], pod[128], field[128];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_policy(&d, "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                                  "metadata: {name: batch}\nspec: {weight: 1, capability: "
                                  "{nvidia.com/gpu: 2, cpu: 1500m, pods: 3}}\n"),
                     0);
    assert_int_equal(h_start(&d), 0);
    snprintf(pod, sizeof(pod), "%s/pod.yaml", d.dir);
    assert_int_equal(h_write(pod, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train-0\n"
                                  "  namespace: team-a\nspec:\n  containers:\n    - name: main\n"
                                  "      resources:\n        limits:\n"
                                  "          nvidia.com/gpu: 4\n          cpu: \"16\"\n"
                                  "          memory: 64Gi\n"),
                     0);
    assert_int_equal(client(&d, out, sizeof(out), "submit", pod), 0);
    assert_non_null(strstr(out, "\"state\": \"running\""));
    assert_int_equal(client(&d, out, sizeof(out), "submit", pod), 0); /* the same again: 200 */
    assert_non_null(strstr(out, "\"name\": \"train-0\""));
    /* get prints the pod's row as list does, as kubectl get does; -o json the whole answer */
    assert_int_equal(client(&d, out, sizeof(out), "get", "team-a/train-0"), 0);
    assert_string_equal(squeeze(out), "POD STATE NODE GPUS REASON\n"
                                      "team-a/train-0 running n-t4-0 0,1,2,3\n");
    assert_int_equal(client3(&d, out, sizeof(out), "get", "team-a/train-0", "-ojson"), 0);
    assert_non_null(strstr(out, "gpusched.io/gpu-index"));
    /* -o yaml: the same answer as YAML, a string that would read as a number quoted */
    out[0] = '\n'; /* each line found after a line break, the first one too */
    assert_int_equal(client3(&d, out + 1, sizeof(out) - 1, "get", "team-a/train-0", "-oyaml"), 0);
    assert_non_null(strstr(out, "\nname: train-0\n"));
    assert_non_null(strstr(out, "\nnamespace: team-a\n"));
    assert_non_null(strstr(out, "\n  gpusched.io/gpu-index: 0,1,2,3\n"));
    assert_non_null(strstr(out, "\n- 3\n")); /* gpus: [0, 1, 2, 3] */
    assert_int_equal(client(&d, out, sizeof(out), "list", NULL), 0);
    assert_non_null(strstr(out, "team-a/train-0"));
    assert_int_equal(client(&d, out, sizeof(out), "list", "--queue=default"), 0);
    assert_non_null(strstr(out, "team-a/train-0")); /* no Queue document: every pod here */
    /* -n NAMESPACE, as kubectl's: the pods of that namespace only */
    assert_int_equal(client3(&d, out, sizeof(out), "list", "-n", "team-a"), 0);
    assert_non_null(strstr(out, "team-a/train-0"));
    assert_int_not_equal(client(&d, out, sizeof(out), "list", "--namespace=team-b"), 0); /* 403 */
    /* a refused token: the message says where the token came from (the last --token wins) */
    assert_int_equal(client3(&d, out, sizeof(out), "list", "--token", "wrong-token-0123456789"), 2);
    char said401[512], errpath[160];
    snprintf(errpath, sizeof(errpath), "%s/client.err", d.dir);
    FILE *f401 = fopen(errpath, "r");
    assert_non_null(f401);
    said401[fread(said401, 1, sizeof(said401) - 1, f401)] = '\0';
    fclose(f401);
    assert_non_null(strstr(said401, "401: the bearer token is not valid (field Authorization): "
                                    "the token comes from --token or $GPUSCHED_TOKEN\n"));
    assert_int_equal(client(&d, out, sizeof(out), "status", "--namespace=team-a"), 2);
    assert_int_equal(status_of(&d, "GET", "/v1/pods?namespace=Team_A", TOKEN_A, NULL, field, 128),
                     400);
    assert_string_equal(field, "namespace");
    /* an empty filter is refused, not taken as none: it would list everything */
    static const char *const empty[][2] = {{"/v1/pods?namespace=", "namespace"},
                                           {"/v1/pods?state=", "state"},
                                           {"/v1/pods?queue=&limit=1", "queue"},
                                           {"/v1/pods?tenant=", "tenant"},
                                           {"/v1/bills?tenant=", "tenant"}};
    for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
        assert_int_equal(status_of(&d, "GET", empty[i][0], TOKEN_A, NULL, field, 128), 400);
        assert_string_equal(field, empty[i][1]);
    }
    /* status, tenants, queues and bills are tables, as list is (status: one row, kubectl get's
     * shape, an AGE in seconds as kubectl writes a young one); -o json the answer as it came */
    assert_int_equal(client(&d, out, sizeof(out), "status", "-ojson"), 0);
    json_t *st = json_loads(out, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(st, "pods_running")), 1);
    char row[128];
    snprintf(row, sizeof(row), "\n4 20 4.00 0.00 1 0 team-a %s ", sget(st, "version"));
    json_decref(st);
    assert_int_equal(client(&d, out, sizeof(out), "status", NULL), 0);
    assert_non_null(strstr(squeeze(out), "NODES GPUS ALLOCATED UNAVAILABLE RUNNING PENDING CALLER "
                                         "VERSION AGE\n"));
    assert_non_null(strstr(out, row));
    assert_true(strlen(out) > 2 && !strcmp(out + strlen(out) - 2, "s\n"));
    assert_int_equal(client(&d, out, sizeof(out), "queues", NULL), 0);
    assert_non_null(strstr(squeeze(out), "\ndefault 1 4.00 4.00 0.00 100% 1 0 -\n"));
    assert_non_null(strstr(out, "\nbatch 1 0.00 0.00 0.00 - 0 0 gpu=2.00,cpu=1500m,pods=3\n"));
    assert_int_equal(client(&d, out, sizeof(out), "queues", "-ojson"), 0);
    assert_non_null(strstr(out, "\"deserved_milli\": 4000"));
    assert_int_equal(client(&d, out, sizeof(out), "tenants", NULL), 0);
    assert_non_null(strstr(squeeze(out), "\nteam-a 1 1 0 4.00 0.00\n"));
    assert_int_equal(client(&d, out, sizeof(out), "tenants", "--output=json"), 0);
    assert_non_null(strstr(out, "\"gpus_allocated\": 4"));
    assert_int_equal(client(&d, out, sizeof(out), "tenants", "-oxml"), 2);
    assert_int_equal(client(&d, out, sizeof(out), "bills", "--tenant=team-b"), 2); /* 403 */
    /* its columns line up: the day (YYYY-MM-DD) under DAY, whatever the resource's width (a
     * line once a whole card-second has been used) */
    const char *line = "\n";
    for (int i = 0; i < 100 && *line == '\n'; i++) {
        usleep(i ? 50000 : 0);
        assert_int_equal(client(&d, out, sizeof(out), "bills", NULL), 0);
        line = strchr(out, '\n') + 1;
    }
    long day = strstr(out, "DAY") - out;
    assert_true(line[day - 1] == ' ' && line[day + 4] == '-' && line[day + 7] == '-');
    /* headed as `gpusched bill` heads the simulator's lines */
    assert_non_null(
        strstr(squeeze(out), "TENANT RESOURCE DAY QUANTITY UNIT MODEL RATE/HOUR COST\n"));
    assert_non_null(strstr(out, "\nTENANT TOTAL\n"));
    assert_non_null(strstr(out, "\nall $"));
    assert_int_equal(client(&d, out, sizeof(out), "bills", "-ojson"), 0);
    assert_non_null(strstr(out, "\"currency\": \"USD\""));
    assert_int_equal(client(&d, out, sizeof(out), "get", "team-b/x"), 2); /* 403 */
    assert_int_equal(client(&d, out, sizeof(out), "cancel", "team-a/train-0"), 0);
    assert_int_equal(client(&d, out, sizeof(out), "get", "team-a/train-0"), 2); /* 404 */
    /* Names of 253 bytes, alike to their last: the one named is the one cancelled (the path was
     * cut at 256 bytes, naming the other); one byte longer is refused, never cut. */
    char longs[2][254], arg[300], path[320];
    for (int i = 0; i < 2; i++) {
        memset(longs[i], 'v', 252);
        longs[i][252] = (char)('a' + i), longs[i][253] = '\0';
        json_decref(h_submit(&d, NULL, h_pod("team-a", longs[i], 0, 0), 201));
    }
    snprintf(arg, sizeof(arg), "team-a/%s", longs[1]);
    assert_int_equal(client(&d, out, sizeof(out), "cancel", arg), 0);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "/v1/pods/team-a/%s", longs[i]);
        h_request(&d, "GET", path, TOKEN_A, NULL, i ? 404 : 200);
    }
    strcat(arg, "x");
    assert_int_equal(client(&d, out, sizeof(out), "get", arg), 2);
    struct answer la;
    snprintf(path, sizeof(path), "/v1/pods/%s", arg);
    assert_int_equal(h_call(&d, "GET", path, TOKEN_A, NULL, &la), 0);
    assert_int_equal(la.status, 404);
    assert_non_null(strstr(la.body, "a namespace is at most 63 bytes, a pod's name 253"));
    h_answer_free(&la);
    /* A Volcano PodGroup in YAML goes to /v1/podgroups. */
    snprintf(pod, sizeof(pod), "%s/pg.yaml", d.dir);
    assert_int_equal(h_write(pod, "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                                  "metadata: {name: pg1, namespace: team-a}\n"
                                  "spec: {minMember: 2}\n"),
                     0);
    assert_int_equal(client(&d, out, sizeof(out), "submit", pod), 0);
    assert_non_null(strstr(out, "\"minMember\": 2"));
    /* Every document of a file, and the items of a v1 List, in order; one refused: exit 2. */
    snprintf(pod, sizeof(pod), "%s/many.yaml", d.dir);
    assert_int_equal(h_write(pod, "kind: Pod\nmetadata: {name: m1, namespace: team-a}\n"
                                  "spec: {containers: [{name: c}]}\n---\n"
                                  "apiVersion: v1\nkind: List\nitems:\n"
                                  "  - {kind: Pod, metadata: {name: m2, namespace: team-a},\n"
                                  "     spec: {containers: [{name: c}]}}\n"
                                  "  - {kind: Pod, metadata: {name: m3, namespace: team-a},\n"
                                  "     spec: {containers: [{name: c}]}}\n---\n"),
                     0);
    assert_int_equal(client(&d, out, sizeof(out), "submit", pod), 0);
    assert_int_equal(client(&d, out, sizeof(out), "list", NULL), 0);
    assert_non_null(strstr(out, "team-a/m1"));
    assert_non_null(strstr(out, "team-a/m2"));
    assert_non_null(strstr(out, "team-a/m3"));
    assert_int_equal(h_write(pod, "kind: Pod\nmetadata: {name: m4, namespace: team-a}\n"
                                  "spec: {containers: [{name: c}]}\n---\n"
                                  "kind: Pod\nmetadata: {name: m5, namespace: team-b}\n"
                                  "spec: {containers: [{name: c}]}\n"),
                     0);
    assert_int_equal(client(&d, out, sizeof(out), "submit", pod), 2); /* team-b's: 403 */
    assert_int_equal(client(&d, out, sizeof(out), "get", "team-a/m4"), 0);
    /* a file of one object refused names the file too */
    assert_int_equal(h_write(pod, "kind: Pod\nmetadata: {name: m8, namespace: team-b}\n"
                                  "spec: {containers: [{name: c}]}\n"),
                     0);
    assert_int_equal(client(&d, out, sizeof(out), "submit", pod), 2);
    char err1[160], *msg1;
    snprintf(err1, sizeof(err1), "%s/client.err", d.dir);
    msg1 = t_slurp(err1, NULL);
    char want[256];
    snprintf(want, sizeof(want), "%s: object 1 of 1 (team-b/m8) not accepted", pod);
    if (!msg1 || !strstr(msg1, want))
        fail_msg("%s", msg1 ? msg1 : "(nothing said)");
    free(msg1);
    assert_int_equal(h_write(pod, "kind: Pod\nmetadata: {name: m6}\n---\n- not an object\n"), 0);
    assert_int_equal(client(&d, out, sizeof(out), "submit", pod), 2); /* nothing sent */
    assert_int_equal(client(&d, out, sizeof(out), "get", "team-a/m6"), 2);
    /* a key given twice is refused, not the last taken; nor is a directory read as empty */
    assert_int_equal(h_write(pod, "kind: Pod\nmetadata: {name: m7, namespace: team-b,\n"
                                  "  namespace: team-a}\nspec: {containers: [{name: c}]}\n"),
                     0);
    assert_int_equal(client(&d, out, sizeof(out), "submit", pod), 2);
    assert_int_equal(client(&d, out, sizeof(out), "get", "team-a/m7"), 2);
    assert_int_equal(client(&d, out, sizeof(out), "submit", d.dir), 2);
    /* YAML in flow style starts with '{' as JSON does, and is YAML all the same; a PodList (as
     * the API server lists pods) is a list; a merge key (<<) is named, not dropped unread */
    assert_int_equal(h_write(pod, "{kind: Pod, metadata: {name: f1, namespace: team-a}, spec: "
                                  "{containers: [{name: c}]}}\n---\n{\"kind\": \"PodList\", "
                                  "\"items\": [{\"kind\": \"Pod\", \"metadata\": {\"name\": "
                                  "\"f2\", \"namespace\": \"team-a\"}, \"spec\": {\"containers\": "
                                  "[{\"name\": \"c\"}]}}]}\n"),
                     0);
    assert_int_equal(client(&d, out, sizeof(out), "submit", pod), 0);
    assert_int_equal(client(&d, out, sizeof(out), "get", "team-a/f1"), 0);
    assert_int_equal(client(&d, out, sizeof(out), "get", "team-a/f2"), 0);
    struct answer a;
    h_call_as(&d, "POST", "/v1/pods", TOKEN_A, "application/yaml",
              "m: &m {name: f3, namespace: team-a}\nkind: Pod\nmetadata: {<<: *m}\n", &a);
    assert_int_equal(a.status, 400);
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")),
                           "body:3:12: a YAML merge key (<<) is not read"));
    h_answer_free(&a);
    /* what a pod asks without effect is taken with a Warning header, which the client prints as
     * kubectl does; a pod without it gets none */
    char eph[128], said[1024];
    snprintf(eph, sizeof(eph), "%s/eph.yaml", d.dir);
    assert_int_equal(h_write(eph, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: eph\n"
                                  "  namespace: team-a\nspec:\n  containers:\n    - name: main\n"
                                  "      resources:\n        limits:\n"
                                  "          ephemeral-storage: 10Gi\n"),
                     0);
    assert_int_equal(client(&d, out, sizeof(out), "submit", eph), 0);
    snprintf(field, sizeof(field), "%s/client.err", d.dir);
    FILE *ef = fopen(field, "r");
    assert_non_null(ef);
    said[fread(said, 1, sizeof(said) - 1, ef)] = '\0';
    fclose(ef);
    assert_string_equal(said, "Warning: limits.ephemeral-storage: local ephemeral storage is "
                              "taken without effect: gpusched neither places nor limits by it\n");
    struct answer wa;
    h_expect(&d, "POST", "/v1/pods", TOKEN_A,
             "{\"metadata\":{\"name\":\"eph2\",\"namespace\":\"team-a\"},\"spec\":{"
             "\"containers\":[{\"name\":\"m\",\"resources\":{\"requests\":{"
             "\"ephemeral-storage\":\"1Gi\"}}}]}}",
             201, &wa);
    assert_string_equal(wa.warning, "299 - \"requests.ephemeral-storage: local ephemeral storage "
                                    "is taken without effect: gpusched neither places nor limits "
                                    "by it\"");
    h_answer_free(&wa);
    h_expect(&d, "POST", "/v1/pods", TOKEN_A,
             "{\"metadata\":{\"name\":\"plain\",\"namespace\":\"team-a\"},\"spec\":{"
             "\"containers\":[{\"name\":\"m\"}]}}",
             201, &wa);
    assert_string_equal(wa.warning, "");
    h_answer_free(&wa);
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(client(&d, out, sizeof(out), "status", NULL), 1); /* nobody there */
    h_cleanup(&d);
}

/* The client's tables of an answer missing fields or with numbers at int64's ends: "-" for what
 * is missing, never printf("%s", NULL); no overflow (the ASan+UBSan build stops on one). */
static void test_client_odd_answers(void **state)
{
    (void)state;
    const char *bin = getenv("GPUSCHED_BIN");
    char server[64];
    pid_t pid = t_odd_server(2, 200,
                             "{\"started_us\": -9223372036854775808, \"gpu_milli_allocated\": "
                             "-9223372036854775808, \"state\": 7}\n",
                             server);
    const char *status[] = {bin, "status", "--server", server, "--token", "t", NULL};
    const char *get[] = {bin, "get", "a/b", "--server", server, "--token", "t", NULL};
    struct t_run r;
    t_run(status, &r);
    if (r.status != 0 || !strstr(r.out, " -9223372036854775.80 ") || !strstr(r.out, "<invalid>"))
        fail_msg("status: exit %d, out: %s, err: %s", r.status, r.out, r.err);
    t_run_free(&r);
    t_run(get, &r);
    if (r.status != 0 || !strstr(r.out, "\n-/- ") || strstr(r.out, "(null)"))
        fail_msg("get: exit %d, out: %s, err: %s", r.status, r.out, r.err);
    t_run_free(&r);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    /* a 200 that is not a JSON object (another server, a proxy's page) printed an empty table
     * and exit 0: "no pods" where nothing was asked of gpuschedd */
    pid = t_odd_server(2, 200, "<html>sign in</html>\n", server);
    const char *list[] = {bin, "list", "--server", server, "--token", "t", NULL};
    for (int i = 0; i < 2; i++) {
        t_run(i ? list : status, &r);
        if (r.status != 1 || !strstr(r.err, "the answer (HTTP 200) is not a JSON object"))
            fail_msg("%s: exit %d, out: %s, err: %s", i ? "list" : "status", r.status, r.out,
                     r.err);
        t_run_free(&r);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    /* what the answer says goes into the table escaped, as every message is written: an escape
     * sequence, a line break or a right-to-left override in a name reaches no terminal */
    pid = t_odd_server(1, 200,
                       "{\"namespace\": \"a\\u001b[31m\", \"name\": \"b\\nc\", \"state\": "
                       "\"x\\u202ey\", \"reason\": \"\\u009b2J\"}\n",
                       server);
    t_run(get, &r);
    if (r.status != 0 || memchr(r.out, 0x1b, r.out_len) || strstr(r.out, "\xe2\x80\xae") ||
        strstr(r.out, "\xc2\x9b") || !strstr(r.out, "\na\\x1b[31m/b\\x0ac ") ||
        !strstr(r.out, " x\\u202ey ") || !strstr(r.out, "\\u009b2J"))
        fail_msg("get: exit %d, out: %s, err: %s", r.status, r.out, r.err);
    t_run_free(&r);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    /* no start in the answer: no age, rather than the time since 1970 */
    pid = t_odd_server(1, 200, "{}\n", server);
    t_run(status, &r);
    if (r.status != 0 || r.out_len < 3 || strcmp(r.out + r.out_len - 3, " -\n"))
        fail_msg("status: exit %d, out: %s, err: %s", r.status, r.out, r.err);
    t_run_free(&r);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* An answer of many chunks (a list of 20,000 pods, about 1 MiB) is read whole: its last pod is
 * in the table. */
static void test_client_large_answer(void **state)
{
    (void)state;
    enum { PODS = 20000 };
    const char *bin = getenv("GPUSCHED_BIN");
    size_t cap = 64 + (size_t)PODS * 48, at = 0;
    char *body = malloc(cap), server[64];
    assert_non_null(body);
    at += (size_t)snprintf(body + at, cap - at, "{\"items\": [");
    for (int i = 0; i < PODS; i++)
        at += (size_t)snprintf(body + at, cap - at, "%s{\"namespace\":\"a\",\"name\":\"p%d\"}",
                               i ? "," : "", i);
    snprintf(body + at, cap - at, "]}\n");
    pid_t pid = t_odd_server(1, 200, body, server);
    const char *list[] = {bin, "list", "--server", server, "--token", "t", NULL};
    struct t_run r;
    t_run(list, &r);
    if (r.status != 0 || !strstr(r.out, "\na/p0 ") || !strstr(r.out, "\na/p19999 "))
        fail_msg("list: exit %d, %zu bytes out, err: %s", r.status, r.out_len, r.err);
    t_run_free(&r);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    free(body);
}

static int listen_on(int fd) /* test_tls() has a local named listen */
{
    return listen(fd, 1);
}

/* maxPods bounds the pods of every tenant together: past it a POST is a 507 giving the count and
 * the way to keep tenants apart; a deleted pod makes room. */
static void test_max_pods(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    assert_int_equal(h_setup(&d, "maxPods: 3\n"), 0);
    assert_int_equal(h_start(&d), 0);
    static const char *const who[][2] = {
        {"team-a", "a0"}, {"team-a", "a1"}, {"team-b", "b0"}, {"team-b", "b1"}};
    for (size_t i = 0; i < 4; i++) {
        char *body = h_pod(who[i][0], who[i][1], 0, 0);
        h_expect(&d, "POST", "/v1/pods", i < 2 ? TOKEN_A : TOKEN_B, body, i < 3 ? 201 : 507, &a);
        if (i == 3 && (!strstr(a.body, "maxPods (3) pods, of every tenant") ||
                       !strstr(a.body, "ResourceQuota's pods")))
            fail_msg("%s", a.body);
        h_answer_free(&a);
        free(body);
    }
    h_request(&d, "DELETE", "/v1/pods/team-a/a0", TOKEN_A, NULL, 200);
    char *body = h_pod("team-b", "b1", 0, 0);
    h_request(&d, "POST", "/v1/pods", TOKEN_B, body, 201);
    free(body);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A tenant's pods hold at most maxPodBytesPerTenant together: past it a POST is a 403 naming
 * it, other tenants post on, a deleted pod makes room, and a restart counts what it reads back. */
static void test_pod_bytes_per_tenant(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, "maxPodBytesPerTenant: 1048576\n"), 0);
    assert_int_equal(h_start(&d), 0);
    char *big = malloc(60001), name[32];
    memset(big, 'x', 60000);
    big[60000] = '\0';
    int refused = -1;
    for (int i = 0; i < 40 && refused < 0; i++) {
        snprintf(name, sizeof(name), "big-%d", i);
        char *body = h_pod_annotated("team-a", name, 0, 0, "note", big);
        struct answer a;
        assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_A, body, &a), 0);
        if (a.status == 403) {
            refused = i;
            assert_non_null(strstr(sget(a.json, "error"), "maxPodBytesPerTenant of 1048576"));
        } else {
            assert_int_equal(a.status, 201);
        }
        h_answer_free(&a);
        free(body);
    }
    assert_true(refused >= 15 && refused <= 17); /* 1 MiB of 60 kB pods */
    char *other = h_pod_annotated("team-b", "theirs", 0, 0, "note", big);
    json_decref(h_submit(&d, TOKEN_B, other, 201));
    /* a PodGroup's metadata counts with the pods: no way round the cap */
    json_t *pg =
        json_pack("{s:{s:s, s:s, s:{s:s}}, s:{s:i}}", "metadata", "name", "pg", "namespace",
                  "team-a", "annotations", "note", big, "spec", "minMember", 1);
    char *pgbody = json_dumps(pg, JSON_COMPACT);
    json_decref(pg);
    struct answer ga;
    assert_int_equal(h_call(&d, "POST", "/v1/podgroups", TOKEN_A, pgbody, &ga), 0);
    assert_int_equal(ga.status, 403);
    assert_non_null(strstr(sget(ga.json, "error"), "maxPodBytesPerTenant"));
    h_answer_free(&ga);
    free(pgbody);
    h_request(&d, "DELETE", "/v1/pods/team-a/big-0", TOKEN_A, NULL, 200);
    json_decref(h_submit(&d, TOKEN_A, h_pod_annotated("team-a", name, 0, 0, "note", big), 201));
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, TOKEN_A, h_pod_annotated("team-a", "after", 0, 0, "note", big), 403));
    assert_int_equal(h_stop(&d), 0);
    free(big);
    h_cleanup(&d);
}

/* POST PodGroup @ns/@name (minMember 1) with @ns's tenant's token. Return: the answer's status;
 * @err, when not NULL and it is a 403, gets its error (@size bytes). */
static long post_group(const struct daemon *d, const char *ns, const char *name, char *err,
                       size_t size)
{
    json_t *pg = json_pack("{s:{s:s, s:s}, s:{s:i}}", "metadata", "name", name, "namespace", ns,
                           "spec", "minMember", 1);
    char *body = json_dumps(pg, JSON_COMPACT);
    json_decref(pg);
    struct answer a;
    assert_int_equal(h_call(d, "POST", "/v1/podgroups", h_token_of(ns), body, &a), 0);
    long status = a.status;
    if (err && status == 403)
        snprintf(err, size, "%s", sget(a.json, "error"));
    h_answer_free(&a);
    free(body);
    return status;
}

/* A PodGroup counts its whole object against maxPodBytesPerTenant, its name too, as a pod does:
 * once 60 kB pods fill team-a's 1 MiB, the room left takes a few hundred bytes of PodGroups of
 * 247-byte names, not the thousands it took when only their labels and annotations counted; a
 * deleted one makes room for itself, and a restart counts them as before. */
static void test_podgroup_bytes_per_tenant(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, "maxPodBytesPerTenant: 1048576\n"), 0);
    assert_int_equal(h_start(&d), 0);
    char *big = malloc(60001), name[256], err[512] = "";
    memset(big, 'x', 60000);
    big[60000] = '\0';
    long st = 201;
    for (int i = 0; i < 40 && st != 403; i++) {
        snprintf(name, sizeof(name), "big-%d", i);
        struct answer a;
        char *body = h_pod_annotated("team-a", name, 0, 0, "note", big);
        assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_A, body, &a), 0);
        st = a.status;
        h_answer_free(&a);
        free(body);
    }
    assert_int_equal(st, 403); /* less than a 60 kB pod is left */
    int refused = -1;
    for (int i = 0; i < 400 && refused < 0; i++) {
        snprintf(name, sizeof(name), "%.60s.%.60s.%.60s.%.60s-%03d", big, big, big, big, i);
        for (char *c = name; *c; c++)
            *c = *c == 'x' ? 'p' : *c;
        st = post_group(&d, "team-a", name, err, sizeof(err));
        if (st == 403)
            refused = i;
        else
            assert_int_equal(st, 201);
    }
    if (refused < 0) /* 400 of them would be over 100 kB */
        fail_msg("400 PodGroups of 247-byte names taken under a full maxPodBytesPerTenant");
    assert_non_null(strstr(err, "tenant team-a holds"));
    assert_non_null(strstr(err, "maxPodBytesPerTenant of 1048576"));
    assert_int_equal(post_group(&d, "team-b", name, NULL, 0), 201); /* others post on */
    char last[256]; /* the last taken: deleted, it makes room for itself */
    snprintf(last, sizeof(last), "%.*s%03d", (int)strlen(name) - 3, name, refused - 1);
    char path[320];
    snprintf(path, sizeof(path), "/v1/podgroups/team-a/%s", last);
    h_request(&d, "DELETE", path, TOKEN_A, NULL, 200);
    assert_int_equal(post_group(&d, "team-a", last, NULL, 0), 201);
    assert_int_equal(post_group(&d, "team-a", name, NULL, 0), 403);
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0); /* read back from the store, counted as posted */
    assert_int_equal(post_group(&d, "team-a", name, NULL, 0), 403);
    h_request(&d, "DELETE", path, TOKEN_A, NULL, 200);
    assert_int_equal(post_group(&d, "team-a", last, NULL, 0), 201);
    assert_int_equal(h_stop(&d), 0);
    free(big);
    h_cleanup(&d);
}

/* maxPodGroupsPerTenant bounds the PodGroups of one tenant's namespaces, so that no tenant fills
 * the daemon's own cap for the others: past it a POST is a 403 naming it, the same PodGroup sent
 * again is still returned, other tenants post on, and a deleted one makes room. */
static void test_podgroups_per_tenant(void **state)
{
    (void)state;
    struct daemon d;
    char err[512] = "";
    assert_int_equal(h_setup(&d, "maxPodGroupsPerTenant: 2\n"), 0);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(post_group(&d, "team-a", "pg0", NULL, 0), 201);
    assert_int_equal(post_group(&d, "team-a", "pg1", NULL, 0), 201);
    assert_int_equal(post_group(&d, "team-a", "pg2", err, sizeof(err)), 403);
    assert_non_null(strstr(err, "tenant team-a holds 2 PodGroups and this one is one more: past "
                                "the daemon's maxPodGroupsPerTenant of 2; delete some first"));
    assert_int_equal(post_group(&d, "team-a", "pg1", NULL, 0), 200);
    assert_int_equal(post_group(&d, "team-b", "pg0", NULL, 0), 201);
    h_request(&d, "DELETE", "/v1/podgroups/team-a/pg0", TOKEN_A, NULL, 200);
    assert_int_equal(post_group(&d, "team-a", "pg2", NULL, 0), 201);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* gpuschedd started with @argv (its standard error appended to d's log) exits non-zero within
 * 30 s and its log has @a and @b. */
static void refused_start(struct daemon *d, char **argv, const char *a, const char *b)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    assert_int_equal(truncate(d->log, 0), 0);
    posix_spawn_file_actions_addopen(&fa, 2, d->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    pid_t pid;
    int st = 0, done = 0;
    assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    for (int i = 0; i < 3000 && !(done = waitpid(pid, &st, WNOHANG) == pid); i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    if (!done) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("gpuschedd started (%s %s expected)", a, b);
    }
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);
    if (!h_log_has(d, a) || !h_log_has(d, b))
        fail_msg("the log does not say %s ... %s", a, b);
}

/* HTTPS with --tls-cert/--tls-key: the API answers over TLS, plain HTTP gets nothing. */
static void test_tls(void **state)
{
    (void)state;
    struct daemon d;
    char cmd[1024];
    assert_int_equal(h_setup(&d, NULL), 0);
    snprintf(d.tls_cert, sizeof(d.tls_cert), "%s/cert.pem", d.dir);
    snprintf(d.tls_key, sizeof(d.tls_key), "%s/key.pem", d.dir);
    snprintf(cmd, sizeof(cmd),
             "openssl req -x509 -newkey rsa:2048 -nodes -keyout '%s' -out '%s' -days 2 "
             "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1",
             d.tls_key, d.tls_cert);
    if (system(cmd) != 0) {
        h_cleanup(&d);
        fprintf(stderr, "SKIP: openssl cannot make a test certificate\n");
        skip();
    }
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, TOKEN_A, h_pod("team-a", "secure", 1, 0), 201));
    json_t *g = get(&d, TOKEN_A, "/v1/pods/team-a/secure", 200);
    assert_string_equal(sget(g, "state"), "running");
    json_decref(g);
    char keep[96];
    memcpy(keep, d.tls_cert, sizeof(keep));
    d.tls_cert[0] = '\0'; /* plain HTTP to the TLS port: no answer */
    struct answer a;
    int plain_ok = h_call(&d, "GET", "/healthz", NULL, NULL, &a) == 0 && a.status == 200;
    h_answer_free(&a);
    assert_false(plain_ok);
    memcpy(d.tls_cert, keep, sizeof(keep));
    assert_int_equal(h_stop(&d), 0);
    /* an expired certificate still serves (a client may not verify it), with a warning */
    snprintf(cmd, sizeof(cmd),
             "openssl req -new -key '%s' -subj /CN=127.0.0.1 -out '%s.csr' >/dev/null 2>&1 && "
             "openssl x509 -req -in '%s.csr' -signkey '%s' -days -1 -out '%s' >/dev/null 2>&1",
             d.tls_key, d.dir, d.dir, d.tls_key, d.tls_cert);
    assert_int_equal(system(cmd), 0);
    char data[128], listen[32];
    snprintf(data, sizeof(data), "%s/data", d.dir);
    snprintf(listen, sizeof(listen), "127.0.0.1:%d", h_free_port());
    char *argv[] = {getenv("GPUSCHEDD_BIN"),
                    "--data-dir",
                    data,
                    "--listen",
                    listen,
                    "--nodes",
                    d.nodes,
                    "--config",
                    d.config,
                    "--tls-cert",
                    d.tls_cert,
                    "--tls-key",
                    d.tls_key,
                    NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, d.log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    assert_int_equal(posix_spawn(&d.pid, argv[0], &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    for (int i = 0; i < 3000 && !h_log_has(&d, "the TLS certificate has expired"); i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    assert_true(h_log_has(&d, "the TLS certificate has expired"));
    kill(d.pid, SIGKILL);
    waitpid(d.pid, NULL, 0);
    /* a CA file with no certificate, a key not the certificate's, a port taken: no start, why */
    char other[128];
    snprintf(other, sizeof(other), "%s/other.pem", d.dir);
    snprintf(cmd, sizeof(cmd),
             "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 "
             "-out '%s' >/dev/null 2>&1",
             other);
    assert_int_equal(system(cmd), 0);
    argv[12] = other;
    refused_start(&d, argv, "--tls-cert", "the key unencrypted and the certificate's own");
    /* an encrypted key: said what the key must be, not only GnuTLS's "Decryption has failed" */
    snprintf(cmd, sizeof(cmd),
             "openssl pkey -in '%s' -aes256 -passout pass:secret -out '%s' >/dev/null 2>&1",
             d.tls_key, other);
    assert_int_equal(system(cmd), 0);
    refused_start(&d, argv, "--tls-cert", "the key unencrypted");
    argv[12] = d.tls_key;
    char *with_ca[16] = {0};
    memcpy(with_ca, argv, 13 * sizeof(*argv));
    with_ca[13] = "--tls-client-ca";
    with_ca[14] = d.tls_key;
    refused_start(&d, with_ca, "--tls-client-ca", "no PEM certificate in it");
    /* a leaf certificate as the CA: it starts (a client presenting that very one is taken), and
     * says so */
    char leaf[128], leaf_key[128];
    snprintf(leaf, sizeof(leaf), "%s/leaf.pem", d.dir);
    snprintf(leaf_key, sizeof(leaf_key), "%s/leaf.key", d.dir);
    snprintf(cmd, sizeof(cmd),
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
             "-subj /CN=kube-scheduler -addext basicConstraints=critical,CA:FALSE -keyout '%s' "
             "-out '%s' >/dev/null 2>&1",
             leaf_key, leaf);
    assert_int_equal(system(cmd), 0);
    with_ca[14] = leaf;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, d.log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    assert_int_equal(posix_spawn(&d.pid, with_ca[0], &fa, NULL, with_ca, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    int warned = 0;
    for (int i = 0; i < 3000 && !warned; i++) {
        warned = h_log_has(&d, "--tls-client-ca holds no CA certificate");
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    kill(d.pid, SIGKILL); /* before the check: a daemon left would hold the test's output */
    waitpid(d.pid, NULL, 0);
    assert_true(warned);
    int taken = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in at = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(at);
    assert_int_equal(bind(taken, (struct sockaddr *)&at, sizeof(at)), 0);
    assert_int_equal(listen_on(taken), 0);
    assert_int_equal(getsockname(taken, (struct sockaddr *)&at, &len), 0);
    snprintf(listen, sizeof(listen), "127.0.0.1:%d", ntohs(at.sin_port));
    refused_start(&d, argv, listen, "Address already in use");
    snprintf(listen, sizeof(listen), "[2001:db8::1]:%d", ntohs(at.sin_port)); /* not local */
    refused_start(&d, argv, "cannot listen on [2001:db8::1]:", "cannot start");
    close(taken);
    h_cleanup(&d);
}

/* Ten unknown tokens from an address within a minute: the eleventh request with a token gets
 * 429 with Retry-After, whatever its token (a guess that happens to be right too), until the
 * minute is over; what needs no token still answers. */
static void test_failed_tokens_throttled(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    for (int i = 0; i < 10; i++) {
        char bad[64];
        snprintf(bad, sizeof(bad), "guess-%02d-0123456789abcdef", i);
        h_request(&d, "GET", "/v1/pods", bad, NULL, 401);
    }
    h_expect(&d, "GET", "/v1/pods", "guess-10-0123456789abcdef", NULL, 429, &a);
    assert_true(atoi(a.retry_after) >= 1 && atoi(a.retry_after) <= 60);
    h_answer_free(&a);
    h_request(&d, "GET", "/v1/pods", TOKEN_A, NULL, 429);
    h_request(&d, "GET", "/healthz", NULL, NULL, 200);
    h_request(&d, "GET", "/metrics", NULL, NULL, 200);
    h_expect(&d, "GET", "/metrics", NULL, NULL, 200, &a);
    assert_non_null(strstr(a.body, "gpusched_http_rejected_total{reason=\"throttled\"} 2\n"));
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A socket of its own to daemon @d, with 30 s send and receive timeouts. */
static int dial(const struct daemon *d)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)d->port)};
    struct timeval tv = {30, 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_true(fd >= 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

/* The answer on @fd until the daemon closes it, into @ans (@cap bytes); @fd closed. Return: the
 * HTTP status; 0 when the daemon closed without one. */
static int read_answer(int fd, char *ans, size_t cap)
{
    size_t got = 0;
    for (ssize_t r = 1; r > 0 && got + 1 < cap;) {
        r = recv(fd, ans + got, cap - got - 1, 0);
        got += r > 0 ? (size_t)r : 0;
    }
    ans[got] = '\0';
    close(fd);
    return !strncmp(ans, "HTTP/1.1 ", 9) ? atoi(ans + 9) : 0;
}

/* POST @path with @token, its body @total bytes (a pod's JSON text @text, then spaces) sent
 * chunked in 16 KiB chunks, on a socket of its own with Connection: close; then read the answer
 * into @ans (@cap bytes). Return: the HTTP status; 0 when the daemon closed without one. */
static int post_chunked(const struct daemon *d, const char *path, const char *token,
                        const char *text, size_t total, char *ans, size_t cap)
{
    int fd = dial(d);
    static char piece[16384 + 16];
    int n = snprintf(piece, sizeof(piece),
                     "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                     "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                     "Connection: close\r\n\r\n",
                     path, token);
    int ok = send(fd, piece, (size_t)n, MSG_NOSIGNAL) == n;
    for (size_t sent = 0; ok && sent < total;) {
        size_t len = total - sent < 16384 ? total - sent : 16384;
        int head = snprintf(piece, sizeof(piece), "%zx\r\n", len);
        for (size_t i = 0; i < len; i++) /* the text first, then blanks: still one JSON value */
            piece[head + i] = sent + i < strlen(text) ? text[sent + i] : ' ';
        memcpy(piece + head + len, "\r\n", 2);
        ok = send(fd, piece, (size_t)head + len + 2, MSG_NOSIGNAL) == (ssize_t)(head + len + 2);
        sent += len;
    }
    if (ok)
        send(fd, "0\r\n\r\n", 5, MSG_NOSIGNAL);
    return read_answer(fd, ans, cap);
}

/* Request text @req sent as it is on a socket of its own; the answer read into @ans (@cap
 * bytes). Return: the HTTP status; 0 when the daemon closed without one. */
static int send_bytes(const struct daemon *d, const char *req, size_t len, char *ans, size_t cap)
{
    int fd = dial(d);
    assert_int_equal(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len);
    return read_answer(fd, ans, cap);
}

static int send_raw(const struct daemon *d, const char *req, char *ans, size_t cap)
{
    return send_bytes(d, req, strlen(req), ans, cap);
}

/* A plain GET /v1/pods by tenant A on a connection of its own. Return: the HTTP status. */
static int pods_status(const struct daemon *d)
{
    char ans[4096];
    return send_raw(d,
                    "GET /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    "Authorization: Bearer " TOKEN_A "\r\nConnection: close\r\n\r\n",
                    ans, sizeof(ans));
}

/* White space around the Authorization header's value is not part of it (RFC 9110, 5.5): a
 * token followed by a blank was a 401, and counted against the address's failed-token budget. */
static void test_token_white_space(void **state)
{
    (void)state;
    struct daemon d;
    static char ans[4096];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(
            send_raw(&d,
                     i == 0   ? "GET /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                "Authorization: Bearer " TOKEN_A " \r\nConnection: close\r\n\r\n"
                     : i == 1 ? "GET /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                "Authorization: Bearer \t" TOKEN_A
                                "\t \r\nConnection: close\r\n\r\n"
                              : "GET /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                "Authorization: Bearer " TOKEN_A "x \r\nConnection: close\r\n\r\n",
                     ans, sizeof(ans)),
            i < 2 ? 200 : 401);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A bearer token shorter than any gpuschedd takes (16 bytes) matches nothing, though a tenant's
 * tokenSHA256 was made from it: a hash cannot say how long its token was, and an empty one (a
 * variable unset when it was hashed) would have let "Bearer " in. */
static void test_token_too_short(void **state)
{
    (void)state;
    struct daemon d;
    static char ans[4096];
    assert_int_equal(
        h_setup(
            &d,
            "  - name: team-c\n"
            "    tokenSHA256: f9b0078b5df596d2ea19010c001bbd009e651de2c57e8fb7e355f31eb9d3f739\n"
            "    namespaces: [team-c]\n"),
        0);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(send_raw(&d,
                              "GET /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              "Authorization: Bearer short\r\nConnection: close\r\n\r\n",
                              ans, sizeof(ans)),
                     401);
    assert_non_null(strstr(ans, "the bearer token is not valid"));
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Content-Length or Authorization given twice is a 400 naming the header, answered at once: not
 * the first of each taken (a body framed two ways, a request waiting for bytes never sent). */
static void test_headers_given_twice(void **state)
{
    (void)state;
    struct daemon d;
    static char ans[4096];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(send_raw(&d,
                              "POST /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              "Authorization: Bearer " TOKEN_A "\r\nContent-Length: 2\r\n"
                              "Content-Length: 900\r\nConnection: close\r\n\r\n{}",
                              ans, sizeof(ans)),
                     400);
    assert_non_null(strstr(ans, "header Content-Length is given more than once"));
    assert_int_equal(send_raw(&d,
                              "GET /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              "Authorization: Bearer " TOKEN_A "\r\n"
                              "authorization: Bearer " TOKEN_B "\r\nConnection: close\r\n\r\n",
                              ans, sizeof(ans)),
                     400);
    assert_non_null(strstr(ans, "\"field\":\"authorization\""));
    /* a body framed two ways, or by a coding not read, or a header name with a space: refused
     * before the body, and the connection closed, so the request smuggled after it is not read */
    static const char *const misframed[][2] = {
        {"Content-Length: 40\r\nTransfer-Encoding: chunked",
         "Transfer-Encoding with Content-Length: the body is framed two ways"},
        {"Transfer-Encoding: gzip", "Transfer-Encoding gzip: only chunked is understood"},
        {"Content-Length: 2\r\nContent-Length : 50", "header name \\\"Content-Length \\\" holds"},
        {"Host: b", "header Host is given more than once"},
        {"Content-Type: text/html", "header Content-Type is given more than once"},
    };
    for (size_t i = 0; i < sizeof(misframed) / sizeof(misframed[0]); i++) {
        char req[512];
        snprintf(req, sizeof(req),
                 "POST /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " TOKEN_A
                 "\r\nContent-Type: application/json\r\n%s\r\n\r\n0\r\n\r\n"
                 "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                 misframed[i][0]);
        assert_int_not_equal(send_raw(&d, req, ans, sizeof(ans)), 200);
        if (!strstr(ans, misframed[i][1]))
            fail_msg("%s: \"%s\" does not say \"%s\"", misframed[i][0], ans, misframed[i][1]);
        assert_non_null(strstr(ans, "Connection: close"));
        assert_null(strstr(ans, "\"status\":\"ok\"")); /* the smuggled GET /healthz */
    }
    /* a 405 names the methods its route takes (RFC 9110, 15.5.6) */
    assert_int_equal(send_raw(&d,
                              "PUT /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              "Authorization: Bearer " TOKEN_A "\r\nContent-Length: 0\r\n"
                              "Connection: close\r\n\r\n",
                              ans, sizeof(ans)),
                     405);
    assert_non_null(strstr(ans, "\r\nAllow: GET, POST\r\n"));
    assert_non_null(strstr(ans, "PUT: use GET or POST"));
    assert_int_equal(send_raw(&d,
                              "DELETE /v1/nodes/n-t4-0/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              "Authorization: Bearer " TOKEN_ADMIN "\r\nConnection: close\r\n\r\n",
                              ans, sizeof(ans)),
                     405);
    assert_non_null(strstr(ans, "\r\nAllow: GET\r\n"));
    assert_non_null(strstr(ans, "DELETE: use GET: a node agent POSTs register"));
    /* HEAD is GET's headers (it was a 405), and an absolute-form target is its path */
    assert_int_equal(
        send_raw(&d, "HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", ans,
                 sizeof(ans)),
        200);
    assert_null(strstr(ans, "\"status\""));
    assert_int_equal(
        send_raw(
            &d,
            "GET http://127.0.0.1/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
            ans, sizeof(ans)),
        200);
    assert_int_equal(pods_status(&d), 200);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Answers count in flight with the request bodies under http.maxBytesInFlight: each client that
 * asked for a long list and never read it held its whole answer (3 GB from one address). One
 * answer larger than the cap is refused naming ?limit= where the route pages, without
 * Retry-After. */
static void test_answer_cap(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    assert_int_equal(h_setup(&d, "http: {maxBytesInFlight: 4194304}\n"), 0);
    assert_int_equal(h_start(&d), 0);
    char *big = malloc(60001), path[64];
    memset(big, 'x', 60000);
    big[60000] = '\0';
    for (int i = 0; i < 80; i++) { /* 80 pods of 60 KB: a list of 4.8 MB */
        char name[16], *pod;
        snprintf(name, sizeof(name), "p%d", i);
        pod = h_pod_annotated("team-a", name, 0, 0, "note", big);
        h_request(&d, "POST", "/v1/pods", TOKEN_A, pod, 201);
        free(pod);
    }
    free(big);
    h_expect(&d, "GET", "/v1/pods?limit=80", TOKEN_A, NULL, 503, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "limit");
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")),
                           "more than http.maxBytesInFlight (4194304) allows in flight"));
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")),
                           "or raise http.maxBytesInFlight")); /* a snapshot has no ?limit= */
    assert_string_equal(a.retry_after, "");
    h_answer_free(&a);
    /* a snapshot does not page: its refusal named ?limit=, which the route then refused */
    h_expect(&d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, 503, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "");
    assert_null(strstr(json_string_value(json_object_get(a.json, "error")), "limit"));
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")),
                           "allows in flight: raise http.maxBytesInFlight"));
    h_answer_free(&a);
    for (int limit = 40; limit <= 60; limit += 20) { /* 2.4 and 3.6 MB go */
        snprintf(path, sizeof(path), "/v1/pods?limit=%d", limit);
        h_expect(&d, "GET", path, TOKEN_A, NULL, 200, &a);
        assert_int_equal(json_array_size(json_object_get(a.json, "items")), (size_t)limit);
        h_answer_free(&a);
    }
    h_expect(&d, "GET", "/metrics", TOKEN_ADMIN, NULL, 200, &a);
    assert_non_null(strstr(a.body, "\ngpusched_http_response_bytes_in_flight 0\n"));
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A body that stops coming ends its connection http.bodyTimeoutSeconds after the headers (2 s
 * here), silent or not: it was ended only when a byte came, so a silent sender held it for the
 * idle timeout (60 s). */
static void test_body_stalled(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, "http: {bodyTimeoutSeconds: 2, idleTimeoutSeconds: 60}\n"), 0);
    assert_int_equal(h_start(&d), 0);
    static const char req[] = "POST /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: "
                              "Bearer " TOKEN_A "\r\nContent-Type: application/json\r\n"
                              "Content-Length: 100\r\n\r\n{";
    int fd = dial(&d), closed = 0;
    assert_int_equal(send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(req) - 1);
    for (int i = 0; i < 40 && !closed; i++) { /* 20 s at most; the idle timeout is 60 */
        nanosleep(&(struct timespec){0, 500000000}, NULL);
        char c;
        closed = recv(fd, &c, 1, MSG_DONTWAIT) == 0;
    }
    close(fd);
    assert_true(closed);
    assert_int_equal(pods_status(&d), 200);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/*
 * Headers sent a byte at a time keep a connection from ever being silent, so the idle timeout
 * never closes it: gpuschedd closes one whose headers are not whole within
 * http.headerTimeoutSeconds of its start (2 s here) and answers others meanwhile; a request
 * sent at once on another connection is answered as before.
 */
static void test_headers_trickled(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, "http: {headerTimeoutSeconds: 2, idleTimeoutSeconds: 60}\n"), 0);
    assert_int_equal(h_start(&d), 0);
    static const char req[] = "GET /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaa";
    int fd = dial(&d), closed = 0;
    for (size_t i = 0; i < sizeof(req) - 1 && !closed; i++) { /* a byte each 0.25 s: 13 s */
        closed = send(fd, req + i, 1, MSG_NOSIGNAL) != 1;
        nanosleep(&(struct timespec){0, 250000000}, NULL);
        char c;
        closed = closed || recv(fd, &c, 1, MSG_DONTWAIT) == 0;
    }
    close(fd);
    assert_true(closed); /* before its 52 bytes were sent (how soon is not asserted) */
    assert_int_equal(pods_status(&d), 200);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/*
 * Past http.maxConnections a connection is closed as it is accepted, not left unanswered in the
 * listen queue (where a liveness probe would wait for its timeout): of 24 idle connections
 * with a cap of 16, eight at least are closed by the daemon; once they go, a request is
 * answered.
 */
static void test_connection_cap_closes(void **state)
{
    (void)state;
    struct daemon d;
    int fd[24], closed = 0;
    assert_int_equal(
        h_setup(&d,
                /* one thread accepts: the count is exact (each thread may admit one more at
                 * the same instant) */
                "http: {maxConnections: 16, idleTimeoutSeconds: 60, headerTimeoutSeconds: 60,\n"
                "  threads: 1}\n"),
        0);
    assert_int_equal(h_start(&d), 0);
    for (int i = 0; i < 24; i++)
        fd[i] = dial(&d);
    int gone[24] = {0};
    for (int k = 0; k < 100 && closed < 8; k++) { /* until the daemon took or closed them */
        nanosleep(&(struct timespec){0, 100000000}, NULL);
        for (int i = 0; i < 24; i++) {
            char c;
            ssize_t n = gone[i] ? -1 : recv(fd[i], &c, 1, MSG_DONTWAIT);
            if (!gone[i] && (n == 0 || (n < 0 && errno == ECONNRESET)))
                closed += gone[i] = 1;
        }
    }
    for (int i = 0; i < 24; i++)
        close(fd[i]);
    assert_true(closed >= 8);
    int status = 0; /* closed here, each is counted gone once the daemon has seen it close */
    for (int k = 0; k < 100 && (status = pods_status(&d)) != 200; k++)
        nanosleep(&(struct timespec){0, 100000000}, NULL);
    assert_int_equal(status, 200);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A body declared as what gpuschedd does not read (XML, a form, UTF-16, gzip) is a 415 naming
 * the header, as the API server answers: it was read as JSON whatever the headers said. */
static void test_unsupported_media(void **state)
{
    (void)state;
    struct daemon d;
    static char ans[4096];
    const char *pod =
        "{\"metadata\":{\"name\":\"m\"},\"spec\":{\"containers\":[{\"name\":\"m\"}]}}";
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    static const char *const refused[][2] = {
        {"application/xml", "Content-Type application/xml: a body is application/json or"},
        {"application/x-www-form-urlencoded", "Content-Type application/x-www-form-urlencoded"},
        {"multipart/form-data; boundary=x", "Content-Type multipart/form-data"},
        {"application/json; charset=utf-16", "Content-Type charset utf-16: a body is UTF-8"},
        {"application/yaml; charset=\"latin1\"", "Content-Type charset latin1"}};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        struct answer a;
        assert_int_equal(h_call_as(&d, "POST", "/v1/pods", TOKEN_A, refused[i][0], pod, &a), 0);
        assert_int_equal(a.status, 415);
        assert_string_equal(sget(a.json, "field"), "Content-Type");
        assert_non_null(strstr(sget(a.json, "error"), refused[i][1]));
        h_answer_free(&a);
    }
    assert_int_equal(send_raw(&d,
                              "POST /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              "Authorization: Bearer " TOKEN_A "\r\nContent-Encoding: gzip\r\n"
                              "Content-Length: 2\r\nConnection: close\r\n\r\n{}",
                              ans, sizeof(ans)),
                     415);
    assert_non_null(strstr(ans, "\"field\":\"Content-Encoding\""));
    /* a NUL byte ends no body early: what follows it was sent, and is refused with it */
    static const char *const types[] = {"application/json", "application/yaml"};
    for (size_t i = 0; i < 2; i++) {
        char req[512];
        size_t len = strlen(pod) + 9; /* the pod, a newline, a NUL, then more */
        int head = snprintf(req, sizeof(req),
                            "POST /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                            "%s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: "
                            "close\r\n\r\n%s\n",
                            TOKEN_A, types[i], len, pod);
        memcpy(req + head, "\0garbage", 8);
        assert_int_equal(send_bytes(&d, req, (size_t)head + 8, ans, sizeof(ans)), 400);
        assert_non_null(strstr(ans, "body: a NUL byte at byte offset 63 (line 2, column 1)"));
    }
    /* who asks comes first: without a token, the body's type is not judged */
    struct answer na;
    assert_int_equal(h_call_as(&d, "POST", "/v1/pods", NULL, "application/xml", pod, &na), 0);
    assert_int_equal(na.status, 401);
    h_answer_free(&na);
    /* JSON as declared, with its charset, and a body with no type at all are read */
    struct answer a;
    assert_int_equal(
        h_call_as(&d, "POST", "/v1/pods", TOKEN_A, "application/json; charset=UTF-8", pod, &a), 0);
    assert_int_equal(a.status, 201);
    h_answer_free(&a);
    assert_int_equal(send_raw(&d,
                              "GET /v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              "Authorization: Bearer " TOKEN_A "\r\nContent-Type: text/html\r\n"
                              "Connection: close\r\n\r\n",
                              ans, sizeof(ans)),
                     200);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A request of many query arguments, past what libmicrohttpd's per-connection memory holds
 * (about 230), is answered at once as one of nine is, naming the first past the cap: not left
 * waiting for the idle timeout (the socket's 30 s receive timeout reads as no answer). */
static void test_many_query_arguments(void **state)
{
    (void)state;
    struct daemon d;
    static char req[16384], ans[4096];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    static const int counts[] = {9, 231, 1000};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        int n = snprintf(req, sizeof(req), "GET /v1/pods?");
        for (int i = 0; i < counts[c]; i++)
            n += snprintf(req + n, sizeof(req) - (size_t)n, "%sa%d=1", i ? "&" : "", i);
        snprintf(req + n, sizeof(req) - (size_t)n,
                 " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " TOKEN_A
                 "\r\nConnection: close\r\n\r\n");
        assert_int_equal(send_raw(&d, req, ans, sizeof(ans)), 400);
        if (!strstr(ans, "\"field\":\"a8\"") || !strstr(ans, "a8: more than 8 query arguments"))
            fail_msg("%d arguments: %s", counts[c], ans);
    }
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A chunked body (its length not declared) past its route's cap is dropped as it arrives and
 * answered 413 with the usual JSON error when it ends; one under the cap is taken; one that goes
 * on past the discard limit (64 MiB) is cut off. */
static void test_chunked_past_the_cap(void **state)
{
    (void)state;
    struct daemon d;
    static char ans[4096];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    char *pod = h_pod("team-a", "chunked", 1, 0);
    assert_int_equal(post_chunked(&d, "/v1/pods", TOKEN_A, pod, 70000, ans, sizeof(ans)), 413);
    const char *json = strstr(ans, "\r\n\r\n");
    json_t *j = json ? json_loads(json + 4, 0, NULL) : NULL;
    assert_non_null(strstr(json_string_value(json_object_get(j, "error")),
                           "POST /v1/pods takes a body of at most 65536 bytes"));
    json_decref(j);
    assert_int_equal(post_chunked(&d, "/v1/pods", TOKEN_A, pod, 40000, ans, sizeof(ans)), 201);
    assert_int_equal(post_chunked(&d, "/v1/pods", TOKEN_A, pod, (65u << 20), ans, sizeof(ans)), 0);
    free(pod);
    struct answer a;
    h_expect(&d, "GET", "/metrics", NULL, NULL, 200, &a);
    assert_non_null(strstr(a.body, "gpusched_http_rejected_total{reason=\"too_large\"} 2\n"));
    h_answer_free(&a);
    h_request(&d, "GET", "/v1/pods/team-a/chunked", TOKEN_A, NULL, 200);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A second gpuschedd on a store in use exits 1 (it cannot start) naming the first one's pid: two
 * daemons on one store would each place pods on cards the other holds. Once the first stops, it
 * starts. */
static void test_one_daemon_per_store(void **state)
{
    (void)state;
    struct daemon d, again;
    char pid[32];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    again = d;
    assert_int_equal(h_start(&again), -1);
    snprintf(pid, sizeof(pid), "pid=%d", (int)d.pid);
    assert_true(h_log_has(&d, "its store is in use by another gpuschedd"));
    assert_true(h_log_has(&d, pid));
    h_request(&d, "GET", "/healthz", NULL, NULL, 200);
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* How many pods of snapshot @body have a first start equal to their start (never evicted, they
 * started once: both come from the scheduler's clock, not two reads of the wall clock). */
static int starts_agree(const char *body)
{
    int n = 0;
    const char *f = "\"sim.gpusched.io/first-start\": \"", *s = "\"sim.gpusched.io/start\": \"";
    for (const char *p = strstr(body, f); p; p = strstr(p + 1, f)) {
        const char *q = strstr(p, s);
        if (!q)
            return -1;
        size_t a = strcspn(p + strlen(f), "\""), b = strcspn(q + strlen(s), "\"");
        n += a == b && !memcmp(p + strlen(f), q + strlen(s), a);
    }
    return n;
}

/* A pod that asks no card, running: GET /v1/snapshot writes its cards as "", and simulate
 * --from-now continues that snapshot (it once refused its own daemon's snapshot there). */
static void test_snapshot_of_a_pod_without_cards(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    char path[128], json[128];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, TOKEN_A, h_pod("team-a", "with-cards", 1, 0), 201));
    json_decref(h_submit(&d, TOKEN_A,
                         strdup("{\"metadata\":{\"name\":\"no-cards\",\"namespace\":\"team-a\"},"
                                "\"spec\":{\"containers\":[{\"name\":\"m\"}]}}"),
                         201));
    h_expect(&d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, 200, &a);
    assert_non_null(strstr(a.body, "\"sim.gpusched.io/gpus\": \"\""));
    assert_int_equal(starts_agree(a.body), 2);
    snprintf(path, sizeof(path), "%s/snap.yaml", d.dir);
    snprintf(json, sizeof(json), "%s/out.json", d.dir);
    assert_int_equal(h_write(path, a.body), 0);
    h_answer_free(&a);
    const char *bin = getenv("GPUSCHED_BIN");
    char *argv[] = {(char *)bin, "simulate", "--scenario", path,      "--from-now", "--horizon",
                    "1h",        "--json",   json,         "--quiet", NULL};
    pid_t pid;
    int st = -1;
    assert_int_equal(posix_spawn(&pid, bin, NULL, NULL, argv, environ), 0);
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(h_stop(&d), 0);
    /* a stored pending pod that cannot be read again (the store edited by hand) waits, saying
     * so; the snapshot leaves it out, saying which, and holds the rest */
    assert_int_equal(h_start(&d), 0);
    for (int i = 0; i < 4; i++) { /* eight cards each: the last ones wait */
        char name[16];
        snprintf(name, sizeof(name), "eight-%d", i);
        json_decref(h_submit(&d, TOKEN_A, h_pod("team-a", name, 8, 0), 201));
    }
    for (int i = 2; i < 4; i++) {
        char p[64];
        snprintf(p, sizeof(p), "/v1/pods/team-a/eight-%d", i);
        h_expect(&d, "GET", p, TOKEN_A, NULL, 200, &a);
        assert_string_equal(json_string_value(json_object_get(a.json, "state")), "pending");
        h_answer_free(&a);
    }
    assert_int_equal(h_stop(&d), 0);
    sqlite3 *db;
    snprintf(path, sizeof(path), "%s/data/gpusched.db", d.dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "UPDATE pods SET spec = '{not json' WHERE name = 'eight-3';"
                                  "UPDATE pods SET spec = json_set(spec, '$.metadata.name',"
                                  " 'renamed') WHERE name = 'eight-2'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(h_start(&d), 0);
    h_expect(&d, "GET", "/v1/pods/team-a/eight-3", TOKEN_A, NULL, 200, &a);
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "reason")),
                           "cannot read the stored pod again"));
    h_answer_free(&a);
    /* a body that names another pod: the row's names stay, the pod waits saying so */
    h_expect(&d, "GET", "/v1/pods/team-a/eight-2", TOKEN_A, NULL, 200, &a);
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "reason")),
                           "the stored pod's body names another pod, team-a/renamed"));
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/pods/team-a/renamed", TOKEN_A, NULL, 404, &a);
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, 200, &a);
    assert_non_null(
        strstr(a.body, "# pod team-a/eight-3 left out: its stored Pod cannot be read again\n"));
    assert_non_null(strstr(a.body, "with-cards"));
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    /* a running one: the start stops, blaming the row, not the config */
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db, "UPDATE pods SET spec = '[]' WHERE name = 'with-cards'", NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(h_start(&d), -1);
    assert_true(h_log_has(&d, "gpusched.db: pod team-a/with-cards runs on node "));
    assert_true(h_log_has(&d, "the store was damaged or edited; restore it from a copy"));
    h_cleanup(&d);
}

/* Every JSON body ends with a line break, as the Kubernetes API server's do: an answer built from
 * a JSON value, a list, a pod, an extender's answer and the errors; one line break, not two. */
static void test_json_bodies_end_their_line(void **state)
{
    (void)state;
    struct daemon d;
    json_error_t je;
    json_t *args = json_load_file("tests/data/extender/filter_nodenames.json", 0, &je);
    assert_non_null(args);
    char *filter = json_dumps(args, JSON_COMPACT);
    json_decref(args);
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, TOKEN_A, h_pod("team-a", "p", 1, 0), 201));
    static const struct {
        const char *method, *path, *token;
        long status;
    } calls[] = {
        {"GET", "/v1/status", TOKEN_A, 200},
        {"GET", "/v1/pods", TOKEN_A, 200},
        {"GET", "/v1/pods/team-a/p", TOKEN_A, 200},
        {"GET", "/v1/queues", TOKEN_A, 200},
        {"POST", "/extender/filter", TOKEN_ADMIN, 200},
        {"GET", "/v1/pods/team-a/none", TOKEN_A, 404},
        {"GET", "/v1/status", NULL, 401},
        {"GET", "/v1/status?verbose=1", TOKEN_A, 400},
    };
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        struct answer a;
        const char *body = calls[i].method[0] == 'P' ? filter : NULL;
        assert_int_equal(h_call(&d, calls[i].method, calls[i].path, calls[i].token, body, &a), 0);
        size_t n = strlen(a.body);
        if (a.status != calls[i].status || !a.json || n < 2 || a.body[n - 1] != '\n' ||
            a.body[n - 2] == '\n')
            fail_msg("%s %s: %ld, body \"%s\"", calls[i].method, calls[i].path, a.status, a.body);
        h_answer_free(&a);
    }
    free(filter);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Poll /healthz until it answers @status (20 s at most). Return: the last status. */
static long health_becomes(const struct daemon *d, long status)
{
    long got = -1;
    for (int i = 0; i < 200 && got != status; i++) {
        struct answer a;
        got = h_call(d, "GET", "/healthz", NULL, NULL, &a) == 0 ? a.status : -1;
        h_answer_free(&a);
        if (got != status)
            nanosleep(&(struct timespec){0, 100000000}, NULL);
    }
    return got;
}

/* /healthz fails while the store cannot commit (here: a file size limit of 0 bytes on the daemon,
 * so every write of the store fails, as on a full disk), and recovers with the store. */
static void test_healthz_follows_the_store(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(health_becomes(&d, 200), 200);
    struct rlimit none = {0, RLIM_INFINITY}, all = {RLIM_INFINITY, RLIM_INFINITY};
    assert_int_equal(prlimit(d.pid, RLIMIT_FSIZE, &none, NULL), 0);
    struct answer a;
    assert_int_equal(health_becomes(&d, 503), 503);
    h_expect(&d, "GET", "/healthz", NULL, NULL, 503, &a);
    assert_non_null(
        strstr(json_string_value(json_object_get(a.json, "error")), "the store cannot commit"));
    h_answer_free(&a);
    assert_int_equal(prlimit(d.pid, RLIMIT_FSIZE, &all, NULL), 0);
    assert_int_equal(health_becomes(&d, 200), 200);
    json_decref(h_submit(&d, TOKEN_A, h_pod("team-a", "after", 1, 0), 201));
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* GET /ui: the page, without a token and without data (no pod, tenant or node named in it),
 * the same for a bad token; only GET (and HEAD). What it shows once given a token is the browser
 * test's (tests/browser/report.test.js). */
static void test_ui_page(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, TOKEN_A, h_pod("team-a", "ui-secret-pod", 1, 0), 201));
    const char *tokens[] = {NULL, "not-a-token-0123456789", TOKEN_A};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(h_call(&d, "GET", "/ui", tokens[i], NULL, &a), 0);
        assert_int_equal(a.status, 200);
        assert_non_null(strstr(a.body, "<main id=\"report\"></main>"));
        assert_non_null(strstr(a.body, "gsReport"));
        assert_null(strstr(a.body, "id=\"gs-report-data\""));
        assert_null(strstr(a.body, "ui-secret-pod"));
        assert_null(strstr(a.body, "team-a"));
        h_answer_free(&a);
    }
    h_expect(&d, "GET", "/ui/", NULL, NULL, 200, &a);
    h_answer_free(&a);
    h_expect(&d, "POST", "/ui", TOKEN_ADMIN, "{}", 405, &a);
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/pods", NULL, NULL, 401, &a);
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lifecycle_and_restart),
        cmocka_unit_test(test_no_tokens_warned),
        cmocka_unit_test(test_clock_next_end),
        cmocka_unit_test(test_list_across_chunks),
        cmocka_unit_test(test_tenants_apart),
        cmocka_unit_test(test_errors_name_the_field),
        cmocka_unit_test(test_yaml_bodies),
        cmocka_unit_test(test_rate_limit),
        cmocka_unit_test(test_sighup_reload),
        cmocka_unit_test(test_client),
        cmocka_unit_test(test_client_odd_answers),
        cmocka_unit_test(test_client_large_answer),
        cmocka_unit_test(test_tls),
        cmocka_unit_test(test_pod_bytes_per_tenant),
        cmocka_unit_test(test_podgroup_bytes_per_tenant),
        cmocka_unit_test(test_podgroups_per_tenant),
        cmocka_unit_test(test_max_pods),
        cmocka_unit_test(test_healthz_follows_the_store),
        cmocka_unit_test(test_failed_tokens_throttled),
        cmocka_unit_test(test_chunked_past_the_cap),
        cmocka_unit_test(test_headers_given_twice),
        cmocka_unit_test(test_token_white_space),
        cmocka_unit_test(test_token_too_short),
        cmocka_unit_test(test_headers_trickled),
        cmocka_unit_test(test_connection_cap_closes),
        cmocka_unit_test(test_body_stalled),
        cmocka_unit_test(test_answer_cap),
        cmocka_unit_test(test_unsupported_media),
        cmocka_unit_test(test_many_query_arguments),
        cmocka_unit_test(test_one_daemon_per_store),
        cmocka_unit_test(test_snapshot_of_a_pod_without_cards),
        cmocka_unit_test(test_json_bodies_end_their_line),
        cmocka_unit_test(test_ui_page),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
