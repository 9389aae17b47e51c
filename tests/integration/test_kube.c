/*
 * The extender's bind writing to a Kubernetes API server. No kube-apiserver runs here, so a fake
 * one (libmicrohttpd in this binary, on a real socket on 127.0.0.1) records every request and
 * answers as each test sets it; gpuschedd runs with `kubernetes:` pointing at it. Checked: the
 * GET of the pod (its UID, still unbound), the Binding carrying the annotations and the PATCH of
 * the label, exact, in that order, with the bearer token read from its file at each bind; a pod
 * made again under another UID or bound elsewhere meanwhile gets nothing written; refusals (409,
 * 500, 404), an API server that is down and an answer lost on the way each give an Error and free
 * the cards (another pod then fits), or bind when the Binding got through; a Binding whose outcome
 * stays unknown keeps the cards and filter then offers that pod its own node alone; a bind repeated
 * on the same node is made again and succeeds; an API server slow to answer holds up no other
 * request; a crash between the commit and the API calls is completed by the next bind; https with
 * caFile, put in force by SIGHUP; reclaim carried out with the Eviction API.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/api.h"
#include "gpusched/policy.h"
#include "common/util.h"

#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOKEN_K1 "sa-token-one-0123456789"
#define TOKEN_K2 "sa-token-two-9876543210"
#define RECS_MAX 128

struct rec {
    char method[8], url[256], auth[128], ctype[64];
    json_t *body;
};

/* The fake API server: what it got, and what it answers. */
static struct {
    struct MHD_Daemon *mhd;
    int port;
    pthread_mutex_t mu;
    struct rec recs[RECS_MAX];
    int n;
    int patch_status, binding_status;
    char binding_answer[512]; /* a Status object, or "" */
    char pod_node[64];        /* GET of a pod after a Binding: its spec.nodeName (uid "uid-NAME") */
    char pod_node_first[64];  /* the same before any Binding came ("" none) */
    char pod_uid[64];         /* GET of a pod: its uid, when not "uid-NAME" */
    int get_status;           /* what a GET answers */
    int bindings;             /* Bindings received */
    char watch[1024];         /* watch events sent before a watch ends at its timeoutSeconds */
    int watches;              /* watches answered */
    char watch_rv[64];        /* the resourceVersion the last watch asked from */
    int drop_bindings;        /* close this many Binding connections without an answer */
    int hold;                 /* 1: a PATCH, 2: a Binding waits for 0 before it is answered */
    int hold_one;             /* 1: the next Binding waits (2 meanwhile) for 0, then answers */
    int held_status;          /* that one's status (the others answer binding_status at once) */
    char list[8192];          /* the answer to a list of pods (not recorded) */
    char nodes[2048];         /* the answer to GET /api/v1/nodes (not recorded) */
    char node_watch[2048];    /* Node watch events, sent by every Node watch until changed (a
                                 watch of a daemon stopped before may be waiting still) */
    char list_selector[64];   /* its fieldSelector */
    char watch_selector[64];  /* the last pod watch's fieldSelector, "none" without one */
    int lists;                /* lists answered */
    int no_policy_v1;         /* GET /apis/policy/v1 answers 404, as 1.20 does (not recorded) */
    int evict_429;            /* Evictions answered 429 before they are answered 201 */
    char groups[4096];        /* the answer to a list of PodGroups; "": 404, no Volcano CRD */
    char group_watch[2048];   /* PodGroup watch events, sent once by the next PodGroup watch */
    int group_lists;          /* PodGroup lists answered (404s too) */
    char gone[64];            /* a PATCH of this pod answers 404, as for a pod deleted */
    pthread_cond_t cv;
} f = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static struct daemon d;
static char token_path[64];

struct upload {
    char *s;
    size_t len;
};

static void record(struct MHD_Connection *c, const char *method, const char *url,
                   const struct upload *u)
{
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    pthread_mutex_lock(&f.mu);
    if (f.n < RECS_MAX) {
        struct rec *r = &f.recs[f.n++];
        snprintf(r->method, sizeof(r->method), "%s", method);
        snprintf(r->url, sizeof(r->url), "%s", url);
        snprintf(r->auth, sizeof(r->auth), "%s", auth ? auth : "");
        snprintf(r->ctype, sizeof(r->ctype), "%s", ct ? ct : "");
        r->body = u->s ? json_loadb(u->s, u->len, 0, NULL) : NULL;
    }
    pthread_mutex_unlock(&f.mu);
}

static enum MHD_Result answer(struct MHD_Connection *c, int status, const char *body)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* A PodGroup list, or a watch: the events set meanwhile (sent once), or none for 2 s at most;
 * 404 for both while the fake has no PodGroups (f.groups ""), as without Volcano's CRD. */
static enum MHD_Result group_answer(struct MHD_Connection *c)
{
    int watch = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "watch") != NULL;
    char body[sizeof(f.groups)];
    pthread_mutex_lock(&f.mu);
    f.group_lists += !watch;
    snprintf(body, sizeof(body), "%s", f.groups);
    pthread_mutex_unlock(&f.mu);
    if (!body[0])
        return answer(c, 404, "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}");
    for (int i = 0; watch && i < 40; i++) {
        pthread_mutex_lock(&f.mu);
        snprintf(body, sizeof(body), "%s", f.group_watch);
        f.group_watch[0] = '\0';
        pthread_mutex_unlock(&f.mu);
        if (body[0])
            break;
        usleep(50000);
    }
    return answer(c, 200, body);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **con_cls)
{
    struct upload *u = *con_cls;
    (void)cls;
    (void)version;
    if (!u) {
        *con_cls = calloc(1, sizeof(*u));
        return *con_cls ? MHD_YES : MHD_NO;
    }
    if (*size) {
        u->s = realloc(u->s, u->len + *size + 1);
        memcpy(u->s + u->len, data, *size);
        u->len += *size;
        *size = 0;
        return MHD_YES;
    }
    if (!strcmp(url, "/version")) /* asked once as the pod sync starts (not recorded) */
        return answer(c, 200, "{\"major\":\"1\",\"minor\":\"20\",\"gitVersion\":\"v1.20.2\"}");
    if (!strcmp(url, "/apis/policy/v1")) /* the Eviction's version (not recorded) */
        return f.no_policy_v1 ? answer(c, 404, "{\"kind\":\"Status\",\"code\":404}")
                              : answer(c, 200, "{\"kind\":\"APIResourceList\"}");
    if (!strcmp(url, "/api/v1/nodes")) { /* --nodes kubernetes: the list, or a quiet watch */
        char body[sizeof(f.nodes)];
        const char *secs = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "timeoutSeconds");
        int watch = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "watch") != NULL;
        body[0] = '\0';
        for (int i = 0; watch && !body[0] && i < (secs && atoi(secs) < 2 ? atoi(secs) : 2) * 20;
             i++) {
            pthread_mutex_lock(&f.mu);
            snprintf(body, sizeof(body), "%s", f.node_watch);
            pthread_mutex_unlock(&f.mu);
            usleep(50000);
        }
        pthread_mutex_lock(&f.mu);
        if (!watch)
            snprintf(body, sizeof(body), "%s", f.nodes);
        pthread_mutex_unlock(&f.mu);
        return answer(c, 200, body);
    }
    if (!strcmp(url, "/apis/scheduling.volcano.sh/v1beta1/podgroups")) /* not recorded */
        return group_answer(c);
    if (!strcmp(url, "/api/v1/pods")) { /* the pod sync's list or watch */
        const char *sel = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fieldSelector");
        const char *watch = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "watch");
        const char *secs = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "timeoutSeconds");
        pthread_mutex_lock(&f.mu);
        if (watch)
            snprintf(f.watch_selector, sizeof(f.watch_selector), "%s", sel ? sel : "none");
        else
            snprintf(f.list_selector, sizeof(f.list_selector), "%s", sel ? sel : "");
        const char *rv = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "resourceVersion");
        f.lists += !watch;
        f.watches += !!watch;
        if (watch)
            snprintf(f.watch_rv, sizeof(f.watch_rv), "%s", rv ? rv : "");
        char body[sizeof(f.list)];
        snprintf(body, sizeof(body), "%s",
                 f.list[0] ? f.list : "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[]}");
        pthread_mutex_unlock(&f.mu);
        /* a watch: the events set meanwhile (sent once), or none until its timeoutSeconds, 2 s
         * at most (this thread cannot tell when gpuschedd gives up on it, and the fake waits for
         * its threads when it stops) */
        int wait = secs && atoi(secs) < 2 ? atoi(secs) : 2;
        for (int i = 0; watch && i < wait * 20; i++) {
            pthread_mutex_lock(&f.mu);
            snprintf(body, sizeof(body), "%s", f.watch);
            f.watch[0] = '\0';
            pthread_mutex_unlock(&f.mu);
            if (body[0])
                break;
            usleep(50000);
        }
        return answer(c, 200, body);
    }
    record(c, method, url, u);
    int binding = strstr(url, "/binding") != NULL;
    pthread_mutex_lock(&f.mu);
    f.bindings += binding;
    while (f.hold == (binding ? 2 : 1))
        pthread_cond_wait(&f.cv, &f.mu);
    int held = binding && f.hold_one == 1;
    for (f.hold_one = held ? 2 : f.hold_one; held && f.hold_one == 2;)
        pthread_cond_wait(&f.cv, &f.mu);
    int drop = binding && f.drop_bindings > 0, status = binding ? f.binding_status : f.patch_status;
    status = held ? f.held_status : status;
    f.drop_bindings -= drop;
    char body[512];
    snprintf(body, sizeof(body), "%s", binding && f.binding_answer[0] ? f.binding_answer : "{}");
    if (!strcmp(method, "GET") && f.pod_uid[0])
        snprintf(body, sizeof(body), "{\"metadata\":{\"uid\":\"%s\"},\"spec\":{}}", f.pod_uid);
    else if (!strcmp(method, "GET"))
        snprintf(body, sizeof(body),
                 "{\"metadata\":{\"uid\":\"uid-%s\"},\"spec\":{\"nodeName\":\"%s\"}}",
                 strrchr(url, '/') + 1, f.bindings ? f.pod_node : f.pod_node_first);
    status = strcmp(method, "GET") ? status : f.get_status;
    if (!strcmp(method, "PATCH") && f.gone[0] && !strcmp(strrchr(url, '/') + 1, f.gone))
        status = 404;
    if (strstr(url, "/eviction"))
        status = f.evict_429-- > 0 ? 429 : 201;
    pthread_mutex_unlock(&f.mu);
    return drop ? MHD_NO : answer(c, status, body); /* MHD_NO: the connection is closed */
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
    struct upload *u = *con_cls;
    (void)cls;
    (void)c;
    (void)toe;
    if (u)
        free(u->s);
    free(u);
    *con_cls = NULL;
}

/* Start the fake on @port (0: any), over TLS with @cert and @key (PEM text) when given; f.port
 * is the port it got. */
static int fake_start_tls(int port, const char *cert, const char *key)
{
    struct MHD_OptionItem tls[] = {
        {cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key},
        {MHD_OPTION_END, 0, NULL},
    };
    f.mhd = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | (cert ? MHD_USE_TLS : 0),
        (uint16_t)port, NULL, NULL, on_request, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL,
        MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
    if (!f.mhd)
        return -1;
    f.port = MHD_get_daemon_info(f.mhd, MHD_DAEMON_INFO_BIND_PORT)->port;
    return 0;
}

static int fake_start(int port)
{
    return fake_start_tls(port, NULL, NULL);
}

/* Forget what the fake got; it answers 200 to PATCH and 201 to Binding from now. */
static void fake_reset(void)
{
    pthread_mutex_lock(&f.mu);
    for (int i = 0; i < f.n; i++)
        json_decref(f.recs[i].body);
    f.n = 0;
    f.patch_status = 200;
    f.gone[0] = '\0';
    f.binding_status = 201;
    f.binding_answer[0] = '\0';
    f.pod_node[0] = f.pod_node_first[0] = f.pod_uid[0] = '\0';
    f.get_status = 200;
    f.bindings = 0;
    f.watch[0] = '\0';
    f.watches = 0;
    f.watch_rv[0] = '\0';
    f.nodes[0] = f.node_watch[0] = '\0';
    f.drop_bindings = 0;
    f.hold = f.hold_one = 0;
    f.held_status = 201;
    f.list[0] = f.list_selector[0] = f.watch_selector[0] = '\0';
    f.lists = 0;
    f.no_policy_v1 = f.evict_429 = 0;
    f.groups[0] = f.group_watch[0] = '\0';
    f.group_lists = 0;
    pthread_mutex_unlock(&f.mu);
}

/* @field of the fake (a string it writes) copied into @out (64 bytes) under its lock: an
 * assertion that fails must not leave the lock held. Return: @out. */
static const char *fake_copy(const char *field, char *out)
{
    pthread_mutex_lock(&f.mu);
    snprintf(out, 64, "%s", field);
    pthread_mutex_unlock(&f.mu);
    return out;
}

/* The body of the last @method @url the fake got (new reference; NULL: none). */
static json_t *fake_body(const char *method, const char *url)
{
    json_t *b = NULL;
    pthread_mutex_lock(&f.mu);
    for (int i = 0; i < f.n; i++)
        if (!strcmp(f.recs[i].method, method) && !strcmp(f.recs[i].url, url)) {
            json_decref(b);
            b = json_incref(f.recs[i].body);
        }
    pthread_mutex_unlock(&f.mu);
    return b;
}

static int own_queues; /* pods name the Queue of their namespace's name (setup_queues()) */
#define NO_GRACE INT_MIN
static int grace_s = NO_GRACE; /* else the pods made say terminationGracePeriodSeconds: grace_s */
static const char *group_of_pods; /* non-NULL: the pods made are members of this PodGroup */

static int setup(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN);
    snprintf(token_path, sizeof(token_path), "/tmp/gs_kube_token.XXXXXX");
    int fd = mkstemp(token_path);
    if (fd < 0 || close(fd) || h_write(token_path, TOKEN_K1 "\n") || fake_start(0))
        return -1;
    fake_reset();
    char extra[256];
    snprintf(extra, sizeof(extra),
             "kubernetes:\n  apiServer: http://127.0.0.1:%d/\n  tokenFile: %s\n"
             "  timeoutSeconds: 30\n  syncSeconds: 0\n",
             f.port, token_path);
    return h_setup(&d, extra) ||
                   (own_queues &&
                    h_policy(&d, "kind: Queue\nmetadata: {name: team-a}\nspec: {weight: 1}\n---\n"
                                 "kind: Queue\nmetadata: {name: team-b}\nspec: {weight: 1}\n")) ||
                   h_start(&d)
               ? -1
               : 0;
}

/* As setup(), with a Queue for each tenant that its pods name (reclaim is between queues). */
static int setup_queues(void **state)
{
    own_queues = 1;
    return setup(state);
}

/* The pod of @text (freed) with its uid, in its namespace's queue when own_queues, its grace
 * period grace_s. */
static json_t *kube_pod(char *text, const char *ns, const char *name)
{
    char uid[64];
    json_t *pod = json_loads(text, 0, NULL);
    free(text);
    snprintf(uid, sizeof(uid), "uid-%s", name);
    json_object_set_new(json_object_get(pod, "metadata"), "uid", json_string(uid));
    json_t *ann = json_object();
    if (own_queues)
        json_object_set_new(ann, "scheduling.volcano.sh/queue-name", json_string(ns));
    if (group_of_pods)
        json_object_set_new(ann, "scheduling.k8s.io/group-name", json_string(group_of_pods));
    if (json_object_size(ann))
        json_object_set(json_object_get(pod, "metadata"), "annotations", ann);
    json_decref(ann);
    if (grace_s != NO_GRACE)
        json_object_set_new(json_object_get(pod, "spec"), "terminationGracePeriodSeconds",
                            json_integer(grace_s));
    return pod;
}

static int teardown(void **state)
{
    (void)state;
    int rc = h_stop(&d);
    h_cleanup(&d);
    fake_reset();
    if (f.mhd)
        MHD_stop_daemon(f.mhd);
    unlink(token_path);
    return rc;
}

/* Filter pod team-a/@name (@gpus cards, uid "uid-@name") on @nodes (a JSON array, consumed). */
static json_t *filter(const char *name, int gpus, json_t *nodes)
{
    json_t *pod = kube_pod(h_pod("team-a", name, gpus, 0), "team-a", name);
    json_t *r =
        h_verb(&d, "filter", json_pack("{s:o, s:n, s:o}", "Pod", pod, "Nodes", "NodeNames", nodes));
    assert_non_null(r);
    return r;
}

/* Bind team-a/@name (uid "uid-@name") to @node, as kube-scheduler sends a bind again: no filter
 * before it. Return: the result's Error (caller frees). */
static char *bind_only(const char *name, const char *node)
{
    char uid[64];
    snprintf(uid, sizeof(uid), "uid-%s", name);
    json_t *r = h_verb(&d, "bind",
                       json_pack("{s:s, s:s, s:s, s:s}", "PodName", name, "PodNamespace", "team-a",
                                 "PodUID", uid, "Node", node));
    const char *err = json_string_value(json_object_get(r, "Error"));
    assert_non_null(err);
    char *out = strdup(err);
    json_decref(r);
    return out;
}

/* Filter pod team-a/@name on @node, then bind it there: the bind result's Error (caller frees). */
static char *seat(const char *name, int gpus, const char *node)
{
    json_decref(filter(name, gpus, json_pack("[s]", node)));
    return bind_only(name, node);
}

/* Bind, expecting success. */
static void seat_ok(const char *name, int gpus, const char *node)
{
    char *err = seat(name, gpus, node);
    assert_string_equal(err, "");
    free(err);
}

/* Bind, expecting an Error holding @want, and the pod not held afterwards. */
static void seat_refused(const char *name, int gpus, const char *node, const char *want)
{
    char *err = seat(name, gpus, node), path[320];
    if (!strstr(err, want))
        fail_msg("Error \"%s\" lacks \"%s\"", err, want);
    free(err);
    struct answer a;
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    assert_int_equal(h_call(&d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 404);
    h_answer_free(&a);
}

/* The annotations gpuschedd shows for team-a/@name (new reference). */
static json_t *shown_annotations(const char *name)
{
    char path[96];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    assert_int_equal(h_call(&d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    json_t *ann = json_object_get(a.json, "annotations"), *out = json_object();
    const char *keys[] = {"gpusched.io/node", "gpusched.io/gpu-index", "gpusched.io/gpu-milli"};
    for (int i = 0; i < 3; i++) {
        assert_non_null(json_object_get(ann, keys[i]));
        json_object_set(out, keys[i], json_object_get(ann, keys[i]));
    }
    h_answer_free(&a);
    return out;
}

static void expect_rec(int i, const char *method, const char *url, const char *ctype,
                       const char *token)
{
    char auth[96];
    snprintf(auth, sizeof(auth), "Bearer %s", token);
    assert_true(i < f.n);
    assert_string_equal(f.recs[i].method, method);
    assert_string_equal(f.recs[i].url, url);
    assert_string_equal(f.recs[i].ctype, ctype);
    assert_string_equal(f.recs[i].auth, auth);
}

static void test_bind_writes_annotations_then_binding(void **state)
{
    (void)state;
    fake_reset();
    seat_ok("kb-ok", 2, "n-a100-0");
    assert_int_equal(f.n, 3);
    expect_rec(0, "GET", "/api/v1/namespaces/team-a/pods/kb-ok", "", TOKEN_K1);
    expect_rec(1, "POST", "/api/v1/namespaces/team-a/pods/kb-ok/binding", "application/json",
               TOKEN_K1);
    json_t *ann = shown_annotations("kb-ok");
    assert_string_equal(json_string_value(json_object_get(ann, "gpusched.io/node")), "n-a100-0");
    assert_int_equal(strlen(json_string_value(json_object_get(ann, "gpusched.io/gpu-index"))), 3);
    assert_string_equal(json_string_value(json_object_get(ann, "gpusched.io/gpu-milli")), "1000");
    json_t *want = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:O}, s:{s:s, s:s, s:s}}", "apiVersion",
                             "v1", "kind", "Binding", "metadata", "name", "kb-ok", "namespace",
                             "team-a", "uid", "uid-kb-ok", "annotations", ann, "target",
                             "apiVersion", "v1", "kind", "Node", "name", "n-a100-0");
    assert_true(json_equal(f.recs[1].body, want));
    json_decref(want);
    json_decref(ann);
    expect_rec(2, "PATCH", "/api/v1/namespaces/team-a/pods/kb-ok", "application/merge-patch+json",
               TOKEN_K1);
    json_t *patch = json_pack("{s:{s:{s:s}, s:s}}", "metadata", "labels", "gpusched.io/managed",
                              "true", "uid", "uid-kb-ok");
    assert_true(json_equal(f.recs[2].body, patch));
    json_decref(patch);
}

/* The pod deleted and made again under its name since filter (another UID): nothing written. */
static void test_bind_checks_uid_first(void **state)
{
    (void)state;
    fake_reset();
    snprintf(f.pod_uid, sizeof(f.pod_uid), "uid-made-again");
    seat_refused("kb-again", 2, "n-a100-0", "was deleted and made again (UID uid-made-again");
    assert_int_equal(f.n, 1);
    expect_rec(0, "GET", "/api/v1/namespaces/team-a/pods/kb-again", "", TOKEN_K1);
}

/*
 * kube-scheduler binding again (its answer was lost, or gpuschedd restarted in between): the
 * calls are made again, the token read anew (it rotated), and the API server's 409 for a pod
 * already on that node is success.
 */
static void test_bind_again_same_node(void **state)
{
    (void)state;
    fake_reset();
    assert_int_equal(h_write(token_path, TOKEN_K2), 0);
    f.binding_status = 409;
    snprintf(f.binding_answer, sizeof(f.binding_answer), "%s",
             "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
             "\"Operation cannot be fulfilled on pods/binding \\\"kb-ok\\\": pod kb-ok is already "
             "assigned to node \\\"n-a100-0\\\"\",\"reason\":\"Conflict\",\"code\":409}");
    seat_ok("kb-ok", 2, "n-a100-0");
    assert_int_equal(f.n, 3);
    expect_rec(0, "GET", "/api/v1/namespaces/team-a/pods/kb-ok", "", TOKEN_K2);
    expect_rec(1, "POST", "/api/v1/namespaces/team-a/pods/kb-ok/binding", "application/json",
               TOKEN_K2);
    expect_rec(2, "PATCH", "/api/v1/namespaces/team-a/pods/kb-ok", "application/merge-patch+json",
               TOKEN_K2);
    json_decref(shown_annotations("kb-ok")); /* still held */
    /* white space around the token is not part of it, either side (as client-go reads it) */
    assert_int_equal(h_write(token_path, " \t" TOKEN_K1 " \n"), 0);
    /* A 409 worded otherwise: the pod itself (GET) shows it on that node, with that UID. */
    fake_reset();
    f.binding_status = 409;
    snprintf(f.binding_answer, sizeof(f.binding_answer), "%s",
             "{\"kind\":\"Status\",\"message\":\"conflict\",\"code\":409}");
    snprintf(f.pod_node, sizeof(f.pod_node), "n-a100-0");
    seat_ok("kb-ok", 2, "n-a100-0");
    assert_int_equal(f.n, 4); /* GET, Binding, GET, PATCH */
    expect_rec(2, "GET", "/api/v1/namespaces/team-a/pods/kb-ok", "", TOKEN_K1);
    /* Already on that node when bind begins: no Binding at all, the label only. */
    fake_reset();
    snprintf(f.pod_node_first, sizeof(f.pod_node_first), "n-a100-0");
    seat_ok("kb-ok", 2, "n-a100-0");
    assert_int_equal(f.n, 2);
    expect_rec(1, "PATCH", "/api/v1/namespaces/team-a/pods/kb-ok", "application/merge-patch+json",
               TOKEN_K1);
}

/*
 * Both sends of the Binding lost: it may have been applied, so the cards stay held. Filter then
 * passes that pod's node alone (another with room fails), and a bind there settles it.
 */
static void test_outcome_unknown_keeps_cards(void **state)
{
    (void)state;
    fake_reset();
    f.drop_bindings = 2;
    char *err = seat("kb-unknown", 2, "n-a100-0");
    assert_non_null(strstr(err, "the Binding may have been applied"));
    free(err);
    assert_int_equal(f.n, 3); /* GET, Binding, Binding */
    json_decref(shown_annotations("kb-unknown"));
    json_t *r = filter("kb-unknown", 2, json_pack("[s, s]", "n-a100-1", "n-a100-0"));
    const json_t *names = json_object_get(r, "NodeNames");
    assert_int_equal(json_array_size(names), 1);
    assert_string_equal(json_string_value(json_array_get(names, 0)), "n-a100-0");
    assert_non_null(
        strstr(json_string_value(json_object_get(json_object_get(r, "FailedNodes"), "n-a100-1")),
               "holds this pod's cards"));
    json_decref(r);
    fake_reset();
    seat_ok("kb-unknown", 2, "n-a100-0");
    assert_int_equal(f.n, 3);
}

/* Wait until the fake got @n requests (or 30 s passed): how many it got. */
static int fake_wait(int n)
{
    int got = 0;
    for (int i = 0; i < 3000 && got < n; i++) {
        usleep(10000);
        pthread_mutex_lock(&f.mu);
        got = f.n;
        pthread_mutex_unlock(&f.mu);
    }
    return got;
}

/* Let what the fake holds go. */
static void fake_release(void)
{
    pthread_mutex_lock(&f.mu);
    f.hold = f.hold_one = 0;
    pthread_cond_broadcast(&f.cv);
    pthread_mutex_unlock(&f.mu);
}

static void *seat_slow(void *arg)
{
    return seat(arg, 0, "n-cpu-0");
}

/*
 * An API server that has not answered a Binding yet holds up that bind alone: the scheduler
 * thread takes other requests meanwhile (a /v1 submit, another filter) and answers them.
 */
static void test_slow_api_server_stalls_nothing(void **state)
{
    (void)state;
    pthread_t t;
    fake_reset();
    f.hold = 2;
    assert_int_equal(pthread_create(&t, NULL, seat_slow, "kb-slow"), 0);
    assert_int_equal(fake_wait(2), 2); /* the Binding is in the fake's hands */
    char *pod = h_pod("team-a", "v1-meanwhile", 0, 0);
    struct answer a;
    assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_A, pod, &a), 0);
    assert_int_equal(a.status, 201);
    h_answer_free(&a);
    free(pod);
    json_decref(filter("kb-meanwhile", 0, json_pack("[s]", "n-cpu-0")));
    assert_int_equal(f.n, 2); /* the bind is still waiting */
    fake_release();
    char *err;
    assert_int_equal(pthread_join(t, (void **)&err), 0);
    assert_string_equal(err, "");
    free(err);
}

static void *seat_cpu(void *arg)
{
    return seat(arg, 0, "n-cpu-0");
}

/* Whether gpuschedd holds team-a/@name: 1 yes, 0 no. */
static int held(const char *name)
{
    char path[320];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    assert_int_equal(h_call(&d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
    int status = (int)a.status;
    h_answer_free(&a);
    assert_true(status == 200 || status == 404);
    return status == 200;
}

/*
 * Two binds of one pod at once (kube-scheduler sent it again while the first waited for the API
 * server): the first's Binding is refused after the second's was taken. The refusal gives back
 * nothing the second confirmed; and when both are refused, the last to end gives the cards back,
 * never one while the other may still bind the pod.
 */
static void test_overlapping_binds(void **state)
{
    (void)state;
    pthread_t t;
    char *err;
    fake_reset();
    f.hold_one = 1;
    f.held_status = 500;
    assert_int_equal(pthread_create(&t, NULL, seat_cpu, "kb-twice"), 0);
    assert_int_equal(fake_wait(2), 2);      /* GET, and the first Binding in the fake's hands */
    err = bind_only("kb-twice", "n-cpu-0"); /* GET, Binding taken, PATCH */
    assert_string_equal(err, "");
    free(err);
    fake_release();
    assert_int_equal(pthread_join(t, (void **)&err), 0);
    assert_non_null(strstr(err, ": HTTP 500"));
    free(err);
    assert_true(held("kb-twice")); /* its cards stay: Kubernetes runs it on them */
    /* Both refused: the second while the first is still under way keeps the cards ... */
    fake_reset();
    f.hold_one = 1;
    f.held_status = 500;
    f.binding_status = 500;
    assert_int_equal(pthread_create(&t, NULL, seat_cpu, "kb-twice-refused"), 0);
    assert_int_equal(fake_wait(2), 2);
    err = bind_only("kb-twice-refused", "n-cpu-0");
    assert_non_null(strstr(err, ": HTTP 500"));
    free(err);
    assert_true(held("kb-twice-refused"));
    /* ... and the first, the last to end, gives them back */
    fake_release();
    assert_int_equal(pthread_join(t, (void **)&err), 0);
    assert_non_null(strstr(err, ": HTTP 500"));
    free(err);
    assert_false(held("kb-twice-refused"));
}

/* The bind of @arg on n-cpu-0 (filtered already), with no assertion: the daemon dies meanwhile. */
static void *bind_dying(void *arg)
{
    char uid[64];
    snprintf(uid, sizeof(uid), "uid-%s", (char *)arg); /* as filter() gave it */
    return h_verb(&d, "bind",
                  json_pack("{s:s, s:s, s:s, s:s}", "PodName", (char *)arg, "PodNamespace",
                            "team-a", "PodUID", uid, "Node", "n-cpu-0"));
}

/*
 * gpuschedd killed after the commit, before the Binding: restarted, it holds the pod (not bound
 * in Kubernetes); filter offers the pod its node alone, and the bind there makes the calls.
 */
static void test_crash_before_binding(void **state)
{
    (void)state;
    pthread_t t;
    fake_reset();
    json_decref(filter("kb-crash", 0, json_pack("[s]", "n-cpu-0")));
    f.hold = 1;
    assert_int_equal(pthread_create(&t, NULL, bind_dying, "kb-crash"), 0);
    assert_int_equal(fake_wait(1), 1); /* committed; the GET is in the fake's hands */
    h_kill(&d);
    fake_release();
    json_t *r;
    assert_int_equal(pthread_join(t, (void **)&r), 0);
    assert_null(r); /* no answer: kube-scheduler counts the bind as failed */
    assert_int_equal(h_start(&d), 0);
    json_decref(shown_annotations("kb-crash"));
    r = filter("kb-crash", 0, json_pack("[s, s]", "n-t4-0", "n-cpu-0"));
    const json_t *names = json_object_get(r, "NodeNames");
    assert_int_equal(json_array_size(names), 1);
    assert_string_equal(json_string_value(json_array_get(names, 0)), "n-cpu-0");
    json_decref(r);
    fake_reset();
    seat_ok("kb-crash", 0, "n-cpu-0");
    assert_int_equal(f.n, 3);
}

/* A 500 from the API server: Error with its message and code; the cards are free again. */
static void test_refused_500_frees_cards(void **state)
{
    (void)state;
    fake_reset();
    f.binding_status = 500;
    snprintf(f.binding_answer, sizeof(f.binding_answer), "%s",
             "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"etcdserver: leader "
             "changed\",\"code\":500}");
    seat_refused("kb-500", 4, "n-t4-0", "etcdserver: leader changed (code 500)");
    fake_reset();
    seat_ok("kb-t4-fill", 4, "n-t4-0"); /* the whole node: only if kb-500's cards came back */
}

/* A 409 for a pod on another node; a pod already elsewhere, or gone (404): nothing written. */
static void test_refused_409_and_404(void **state)
{
    (void)state;
    const char *conflict = "{\"kind\":\"Status\",\"message\":\"Operation cannot be fulfilled on "
                           "pods/binding \\\"kb-409\\\": pod kb-409 is already assigned to node "
                           "\\\"n-other\\\"\",\"reason\":\"Conflict\",\"code\":409}";
    fake_reset();
    f.binding_status = 409;
    snprintf(f.binding_answer, sizeof(f.binding_answer), "%s", conflict);
    snprintf(f.pod_node, sizeof(f.pod_node), "n-other");
    seat_refused("kb-409", 8, "n-a100-1", "already assigned to node \"n-other\" (code 409)");
    assert_int_equal(f.n, 3); /* GET, Binding, GET of the pod */
    assert_string_equal(f.recs[2].method, "GET");
    fake_reset();
    f.binding_status = 409;
    snprintf(f.binding_answer, sizeof(f.binding_answer), "%s", conflict);
    snprintf(f.pod_node, sizeof(f.pod_node), "n-other");
    f.drop_bindings = 1; /* a lost answer, then that 409: not bound here, whatever the first did */
    seat_refused("kb-409-lost", 8, "n-a100-1", "already assigned to node \"n-other\" (code 409)");
    assert_int_equal(f.n, 4); /* GET, Binding, Binding, GET */
    fake_reset();
    snprintf(f.pod_node_first, sizeof(f.pod_node_first), "n-other");
    seat_refused("kb-elsewhere", 8, "n-a100-1",
                 "already assigned to node \"n-other\": nothing written");
    assert_int_equal(f.n, 1); /* the GET alone */
    fake_reset();
    f.get_status = 404;
    seat_refused("kb-gone", 8, "n-a100-1", "reading pod team-a/kb-gone: HTTP 404");
    assert_int_equal(f.n, 1);
    fake_reset();
    seat_ok("kb-a100-fill", 8, "n-a100-1");
}

/* The connection breaks after the Binding was sent: it is sent again, and that settles it. */
static void test_lost_answer_sent_again(void **state)
{
    (void)state;
    fake_reset();
    f.drop_bindings = 1;
    seat_ok("kb-lost", 2, "n-a100-0");
    assert_int_equal(f.n, 4); /* GET, Binding (lost), Binding, PATCH */
    assert_string_equal(f.recs[1].url, "/api/v1/namespaces/team-a/pods/kb-lost/binding");
    assert_string_equal(f.recs[2].url, "/api/v1/namespaces/team-a/pods/kb-lost/binding");
    json_decref(shown_annotations("kb-lost"));
}

/* No API server: the bind fails with curl's reason and the cards are free again. */
static void test_api_server_down(void **state)
{
    (void)state;
    fake_reset();
    int port = f.port;
    MHD_stop_daemon(f.mhd);
    f.mhd = NULL;
    seat_refused("kb-down", 2, "n-a100-0", "reading pod team-a/kb-down: Failed to connect");
    assert_int_equal(fake_start(port), 0);
    seat_ok("kb-a100-0-fill", 2, "n-a100-0"); /* with kb-ok, kb-unknown, kb-lost: all eight */
}

/* Lines of the daemon's log holding @needle. */
static int log_count(const char *needle)
{
    FILE *fp = fopen(d.log, "r");
    char line[4096];
    int n = 0;
    while (fp && fgets(line, sizeof(line), fp))
        n += strstr(line, needle) != NULL;
    if (fp)
        fclose(fp);
    return n;
}

/* log_count() of @needle once it reaches @n, or after 30 s: the scheduler thread shows a batch's
 * changes to reads before its commit, and writes the batch's log lines only after that commit,
 * so a pod read as gone may not be in the log yet. */
static int log_count_reaches(const char *needle, int n)
{
    int got = log_count(needle);
    for (int i = 0; i < 300 && got < n; i++) {
        usleep(100000);
        got = log_count(needle);
    }
    return got;
}

/* Point `kubernetes:` at @section (the config's last key), SIGHUP, wait for the reload. */
static void reload_kubernetes(const char *section)
{
    char *text = calloc(1, 8192);
    FILE *fp = fopen(d.config, "r");
    assert_non_null(fp);
    size_t n = fread(text, 1, 8191, fp);
    fclose(fp);
    text[n] = '\0';
    char *k = strstr(text, "kubernetes:");
    assert_non_null(k);
    snprintf(k, 8192 - (size_t)(k - text), "%s", section);
    assert_int_equal(h_write(d.config, text), 0);
    free(text);
    int before = log_count("config reloaded");
    kill(d.pid, SIGHUP);
    for (int i = 0; i < 3000 && log_count("config reloaded") == before; i++)
        usleep(10000);
    assert_int_equal(log_count("config reloaded"), before + 1);
}

/* Follow the fake's pods: `kubernetes:` with @timeout and @sync seconds, written into @section
 * (for the caller to change back). */
static void follow_pods(char *section, size_t cap, int timeout, int sync)
{
    snprintf(section, cap,
             "kubernetes:\n  apiServer: http://127.0.0.1:%d/\n  tokenFile: %s\n"
             "  timeoutSeconds: %d\n  syncSeconds: %d\n",
             f.port, token_path, timeout, sync);
    reload_kubernetes(section);
}

/* Poll GET /v1/pods/team-a/@name until it answers @status (30 s at most): the last status. */
static long pod_status_becomes(const char *name, long status)
{
    char path[320];
    long got = 0;
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    for (int i = 0; i < 300 && got != status; i++) {
        struct answer a;
        if (i)
            usleep(100000);
        assert_int_equal(h_call(&d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
        got = a.status;
        h_answer_free(&a);
    }
    return got;
}

/* A member of PodGroup team-a/@group (made here, minMember 1) bound as @name on n-cpu-0. */
static void seat_member(const char *group, const char *name)
{
    char body[160];
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"team-a\"},"
             "\"spec\":{\"minMember\":1}}",
             group);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A, body, 201);
    group_of_pods = group;
    seat_ok(name, 0, "n-cpu-0");
    group_of_pods = NULL;
}

/* PodGroup team-a/@group counts @n members completed (Succeeded in Kubernetes). */
static void group_succeeded(const char *group, int n)
{
    char path[96];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/podgroups/team-a/%s", group);
    h_expect(&d, "GET", path, TOKEN_A, NULL, 200, &a);
    assert_int_equal(json_integer_value(json_object_get(a.json, "succeeded")), n);
    h_answer_free(&a);
}

/*
 * The pod sync: pods bound here that Kubernetes no longer runs — deleted, finished (Succeeded),
 * or made again under another UID — have their cards released; one it still runs keeps them.
 * The list asks for the label bind puts on its pods. One Succeeded completed, as Volcano counts
 * it: its PodGroup's succeeded goes up.
 */
static void test_sync_releases_gone_pods(void **state)
{
    (void)state;
    char section[512], longest[256], uid[64];
    fake_reset();
    /* a pod of the longest name Kubernetes allows (253 bytes), and one whose name starts so */
    snprintf(longest, sizeof(longest), "ks-long-%0245d", 0);
    snprintf(uid, sizeof(uid), "uid-%.59s", longest);
    pthread_mutex_lock(&f.mu);
    snprintf(f.list, sizeof(f.list),
             "{\"kind\":\"PodList\",\"metadata\":{},\"items\":["
             "{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"ks-keep\",\"uid\":"
             "\"uid-ks-keep\"},\"status\":{\"phase\":\"Running\"}},"
             "{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"ks-done\",\"uid\":"
             "\"uid-ks-done\"},\"status\":{\"phase\":\"Succeeded\"}},"
             "{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"%s\",\"uid\":"
             "\"%s\"},\"status\":{\"phase\":\"Running\"}},"
             "{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"%s-and-more\",\"uid\":"
             "\"uid-other\"},\"status\":{\"phase\":\"Running\"}},"
             "{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"ks-again\",\"uid\":"
             "\"uid-new\"},\"status\":{\"phase\":\"Pending\"}}]}",
             longest, uid, longest);
    pthread_mutex_unlock(&f.mu);
    pthread_mutex_lock(&f.mu);
    snprintf(f.pod_uid, sizeof(f.pod_uid), "%s", uid); /* what the API server's GET says */
    pthread_mutex_unlock(&f.mu);
    seat_ok(longest, 0, "n-cpu-0");
    pthread_mutex_lock(&f.mu);
    f.pod_uid[0] = '\0';
    pthread_mutex_unlock(&f.mu);
    const char *pods[] = {"ks-keep", "ks-again", "ks-gone"};
    for (int i = 0; i < 3; i++)
        seat_ok(pods[i], 0, "n-cpu-0");
    seat_member("pg-ks", "ks-done");
    follow_pods(section, sizeof(section), 1, 1);
    assert_int_equal(pod_status_becomes("ks-gone", 404), 404);
    assert_int_equal(pod_status_becomes("ks-done", 404), 404); /* the same pass released them */
    assert_int_equal(pod_status_becomes("ks-again", 404), 404);
    assert_int_equal(pod_status_becomes("ks-keep", 200), 200);
    assert_int_equal(pod_status_becomes(longest, 200), 200); /* not the longer name's */
    char got[64];
    assert_string_equal(fake_copy(f.list_selector, got), "spec.nodeName!=");
    assert_true(log_count_reaches("pod no longer run by Kubernetes: cards released", 3) >= 3);
    assert_true(log_count_reaches("msg=\"pod completed\" pod=team-a/ks-done", 1) == 1);
    group_succeeded("pg-ks", 1);
    /* A list that cannot be trusted changes nothing: a continue token given again and again
     * (it would never end), or an item that is no pod (everything would look gone). */
    const char *bad[] = {"{\"items\":[],\"metadata\":{\"continue\":\"abc\"}}",
                         "{\"items\":[{\"metadata\":{}}]}"};
    const char *said[] = {"a continue token given twice", "items[0] lacks metadata.namespace"};
    for (int i = 0; i < 2; i++) {
        pthread_mutex_lock(&f.mu);
        snprintf(f.list, sizeof(f.list), "%s", bad[i]);
        pthread_mutex_unlock(&f.mu);
        for (int t = 0; t < 300 && !log_count(said[i]); t++)
            usleep(100000);
        assert_true(log_count(said[i]) > 0);
        assert_int_equal(pod_status_becomes("ks-keep", 200), 200);
    }
    *strstr(section, "  syncSeconds: 1") = '\0';
    strcat(section, "  syncSeconds: 0\n");
    reload_kubernetes(section);
}

/* Hand @events (watch lines) to the next watch, or the one waiting. */
static void watch_sends(const char *events)
{
    pthread_mutex_lock(&f.mu);
    snprintf(f.watch, sizeof(f.watch), "%s", events);
    pthread_mutex_unlock(&f.mu);
}

/* Wait (30 s at most) until @counter (f.lists or f.watches) reaches @n. Return: its value. */
static int fake_count(const int *counter, int n)
{
    int got = 0;
    for (int i = 0; i < 3000 && got < n; i++) {
        pthread_mutex_lock(&f.mu);
        got = *counter;
        pthread_mutex_unlock(&f.mu);
        if (got < n)
            usleep(10000);
    }
    return got;
}

/* Wait (30 s at most) until the last watch asked from resourceVersion @rv. Return: the one it
 * asked from (@got, 64 bytes). */
static const char *watch_rv_becomes(const char *rv, char *got)
{
    for (int i = 0; i < 3000 && strcmp(fake_copy(f.watch_rv, got), rv); i++)
        usleep(10000);
    return got;
}

/*
 * The watch after the list: a pod DELETED is released at once (no list in between), a
 * BOOKMARK's resourceVersion is where the next watch starts, and "410 Gone" lists afresh; a
 * DELETE of a pod followed so is a 409.
 */
static void test_watch_releases_at_once(void **state)
{
    (void)state;
    char section[512];
    fake_reset();
    pthread_mutex_lock(&f.mu);
    snprintf(f.list, sizeof(f.list), "%s",
             "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"10\"},\"items\":["
             "{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"kw-keep\",\"uid\":"
             "\"uid-kw-keep\"},\"status\":{\"phase\":\"Running\"}},"
             "{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"kw-del\",\"uid\":"
             "\"uid-kw-del\"},\"status\":{\"phase\":\"Running\"}}]}");
    pthread_mutex_unlock(&f.mu);
    seat_ok("kw-keep", 0, "n-cpu-0");
    seat_ok("kw-del", 0, "n-cpu-0");
    seat_member("pg-kw", "kw-done");
    seat_member("pg-kw2", "kw-gone");
    follow_pods(section, sizeof(section), 2, 300);
    /* at least one: a watch without events ends after 2 s here (the fake's cap) and is made
     * again, so a slow reload may see a second one, from the same resourceVersion */
    assert_true(fake_count(&f.watches, 1) >= 1);
    char got[64];
    assert_string_equal(fake_copy(f.watch_rv, got), "10"); /* from the list */
    /* every pod watched, not only the bound ones the list has: a pod held for its gang is
     * deleted before kube-scheduler binds it too */
    assert_string_equal(fake_copy(f.watch_selector, got), "none");
    watch_sends("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":"
                "{\"resourceVersion\":\"42\"}}}\n"
                "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"namespace\":\"team-a\","
                "\"name\":\"kw-done\",\"uid\":\"uid-kw-done\",\"resourceVersion\":\"42\"},"
                "\"status\":{\"phase\":\"Succeeded\"}}}\n"
                "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"namespace\":\"team-a\","
                "\"name\":\"kw-gone\",\"uid\":\"uid-kw-gone\",\"resourceVersion\":\"42\"},"
                "\"status\":{\"phase\":\"Succeeded\"}}}\n"
                "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"namespace\":\"team-a\","
                "\"name\":\"kw-del\",\"uid\":\"uid-kw-del\",\"resourceVersion\":\"43\"}}}\n");
    assert_int_equal(pod_status_becomes("kw-del", 404), 404);
    assert_int_equal(pod_status_becomes("kw-done", 404), 404);
    group_succeeded("pg-kw", 1);  /* Succeeded: completed; deleted: cancelled */
    group_succeeded("pg-kw2", 1); /* deleted once Succeeded: completed */
    assert_int_equal(pod_status_becomes("kw-keep", 200), 200);
    /* followed, a bound pod leaves when the API server says so, not on a DELETE here */
    struct answer a;
    h_expect(&d, "DELETE", "/v1/pods/team-a/kw-keep", TOKEN_ADMIN, NULL, 409, &a);
    assert_non_null(
        strstr(json_string_value(json_object_get(a.json, "error")), "delete it in Kubernetes"));
    h_answer_free(&a);
    /* the stream ended: watched again, from its last event's resourceVersion (how many watches
     * is not asserted: each quiet one ends after the fake's 2 s and is made again) */
    assert_string_equal(watch_rv_becomes("43", got), "43");
    assert_true(fake_count(&f.watches, 2) >= 2);
    assert_int_equal(fake_count(&f.lists, 1), 1);
    assert_true(log_count_reaches("pod deleted or finished in Kubernetes: cards released", 1) >= 1);
    /* a resourceVersion is opaque: sent escaped, it was pasted in, "&x=y" adding a query */
    watch_sends("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":"
                "{\"resourceVersion\":\"44&labelSelector=x\"}}}\n");
    assert_string_equal(watch_rv_becomes("44&labelSelector=x", got), "44&labelSelector=x");
    /* an event whose pod names none ends the stream, said; the pods stay as they were */
    watch_sends("{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"namespace\":\"team-a\","
                "\"name\":\"kw-keep\",\"resourceVersion\":\"45\"}}}\n");
    assert_true(log_count_reaches("DELETED event's pod lacks metadata.uid", 1) >= 1);
    assert_int_equal(pod_status_becomes("kw-keep", 200), 200);
    assert_string_equal(fake_copy(f.watch_rv, got), "44&labelSelector=x");
    watch_sends("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
                "\"message\":\"too old resource version: 43 (50)\"}}\n");
    assert_int_equal(fake_count(&f.lists, 2), 2);
    assert_true(log_count("pod watch too old: listing again") >= 1);
    *strstr(section, "  syncSeconds: 300") = '\0';
    strcat(section, "  syncSeconds: 0\n");
    reload_kubernetes(section);
}

/*
 * An https API server, put in force by SIGHUP: its certificate is checked (refused without the
 * CA that signed it, bound with caFile naming it).
 */
static void test_https_after_reload(void **state)
{
    (void)state;
    char cert[128], key[128], cmd[512], section[512];
    snprintf(cert, sizeof(cert), "%s/api-cert.pem", d.dir);
    snprintf(key, sizeof(key), "%s/api-key.pem", d.dir);
    snprintf(cmd, sizeof(cmd),
             "openssl req -x509 -newkey rsa:2048 -nodes -keyout '%s' -out '%s' -days 2 "
             "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1",
             key, cert);
    if (system(cmd) != 0) {
        fprintf(stderr, "SKIP: openssl cannot make a test certificate\n");
        skip();
    }
    char *cert_pem = t_slurp(cert, NULL), *key_pem = t_slurp(key, NULL);
    assert_true(cert_pem && key_pem);
    MHD_stop_daemon(f.mhd);
    f.mhd = NULL;
    assert_int_equal(fake_start_tls(0, cert_pem, key_pem), 0);
    fake_reset();
    snprintf(section, sizeof(section),
             "kubernetes:\n  apiServer: https://127.0.0.1:%d\n"
             "  tokenFile: %s\n",
             f.port, token_path);
    reload_kubernetes(section);
    seat_refused("kb-tls-no-ca", 0, "n-cpu-0", "SSL certificate problem");
    assert_int_equal(f.n, 0);
    size_t len = strlen(section);
    snprintf(section + len, sizeof(section) - len, "  caFile: %s\n", cert);
    reload_kubernetes(section);
    seat_ok("kb-tls", 0, "n-cpu-0");
    assert_int_equal(f.n, 3);
    expect_rec(1, "POST", "/api/v1/namespaces/team-a/pods/kb-tls/binding", "application/json",
               TOKEN_K1);
    MHD_stop_daemon(f.mhd); /* its option array points at these */
    f.mhd = NULL;
    free(cert_pem);
    free(key_pem);
}

/* A Node as NVIDIA's device plugin and GPU feature discovery describe it. */
#define KNODE(name, product, count, zone)                                                          \
    "{\"metadata\":{\"name\":\"" name "\",\"labels\":{\"nvidia.com/gpu.product\":\"" product       \
    "\",\"nvidia.com/gpu.count\":\"" count "\",\"topology.kubernetes.io/zone\":\"" zone "\"}},"    \
    "\"status\":{\"capacity\":{\"cpu\":\"96\",\"memory\":\"768Gi\",\"nvidia.com/gpu\":\"" count    \
    "\"}}}"

/* KNODE with status.capacity.pods @pods. */
#define KNODE_PODS(name, pods)                                                                     \
    "{\"metadata\":{\"name\":\"" name "\",\"labels\":{\"nvidia.com/gpu.product\":\"Tesla-T4\","    \
    "\"nvidia.com/gpu.count\":\"4\"}},\"status\":{\"capacity\":{\"cpu\":\"96\",\"memory\":"        \
    "\"768Gi\",\"nvidia.com/gpu\":\"4\",\"pods\":\"" pods "\"}}}"

/* Node @name as kubelet registers it, before the device plugin and GPU feature discovery tell
 * its cards: no GPU label, no nvidia.com/gpu. */
#define KNODE_BARE(name)                                                                           \
    "{\"metadata\":{\"name\":\"" name "\",\"labels\":{\"topology.kubernetes.io/zone\":"            \
    "\"zone-1\"}},\"status\":{\"capacity\":{\"cpu\":\"96\",\"memory\":\"768Gi\"}}}"

/* KNODE of @count cards whose device plugin offers @devices nvidia.com/gpu in all. */
#define KNODE_SPLIT(name, count, devices)                                                          \
    "{\"metadata\":{\"name\":\"" name "\",\"labels\":{\"nvidia.com/gpu.product\":\"Tesla-T4\","    \
    "\"nvidia.com/gpu.count\":\"" count "\"}},\"status\":{\"capacity\":{\"cpu\":\"96\","           \
    "\"memory\":\"768Gi\",\"nvidia.com/gpu\":\"" devices "\"}}}"

/* KNODE with spec.taints @taints (a JSON array's text). */
#define KNODE_TAINTED(name, product, count, zone, taints)                                          \
    "{\"metadata\":{\"name\":\"" name "\",\"labels\":{\"nvidia.com/gpu.product\":\"" product       \
    "\",\"nvidia.com/gpu.count\":\"" count "\",\"topology.kubernetes.io/zone\":\"" zone "\"}},"    \
    "\"spec\":{\"taints\":" taints "},"                                                            \
    "\"status\":{\"capacity\":{\"cpu\":\"96\",\"memory\":\"768Gi\",\"nvidia.com/gpu\":\"" count    \
    "\"}}}"

/* A daemon @k of --nodes kubernetes on the fake, its `kubernetes:` section ending in @more. */
static void nodes_setup(struct daemon *k, const char *more)
{
    char extra[256];
    snprintf(extra, sizeof(extra),
             "kubernetes:\n  apiServer: http://127.0.0.1:%d/\n  tokenFile: %s\n%s", f.port,
             token_path, more);
    assert_int_equal(h_setup(k, extra), 0);
    snprintf(k->nodes, sizeof(k->nodes), "kubernetes");
}

/* The fake's NodeList: Nodes @a, @b and @c (NULL: none). */
static void set_nodes(const char *a, const char *b, const char *c)
{
    pthread_mutex_lock(&f.mu);
    snprintf(f.nodes, sizeof(f.nodes), "{\"kind\":\"NodeList\",\"items\":[%s,%s%s%s]}", a, b,
             c ? "," : "", c ? c : "");
    pthread_mutex_unlock(&f.mu);
}

/* Node @name of @d's GET /v1/nodes/NAME: its status, and whether it is ready. */
static long node_state(const struct daemon *k, const char *name, int *ready)
{
    char path[96];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/nodes/%s", name);
    assert_int_equal(h_call(k, "GET", path, TOKEN_A, NULL, &a), 0);
    long status = a.status;
    *ready = json_is_true(json_object_get(a.json, "ready"));
    h_answer_free(&a);
    return status;
}

/* A Node whose Ready condition is @status. */
#define KNODE_READY(name, product, count, zone, status)                                            \
    "{\"metadata\":{\"name\":\"" name "\",\"labels\":{\"nvidia.com/gpu.product\":\"" product       \
    "\",\"nvidia.com/gpu.count\":\"" count "\",\"topology.kubernetes.io/zone\":\"" zone "\"}},"    \
    "\"status\":{\"capacity\":{\"cpu\":\"96\",\"memory\":\"768Gi\",\"nvidia.com/gpu\":\"" count    \
    "\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"" status "\"}]}}"

/*
 * --nodes kubernetes: the inventory is the API server's Nodes (capacity, the feature-discovery
 * product and count, the zone, the taints); a GPU node of a product gpusched does not know is
 * said and left out, a Node it cannot read otherwise stops the start naming it.
 */
static void test_inventory_from_nodes(void **state)
{
    (void)state;
    struct daemon k;
    nodes_setup(&k, "  syncSeconds: 0\n");
    /* a product gpusched does not know, or a MIG strategy single one: said, left out */
    set_nodes(KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"),
              KNODE("gpu-b", "NVIDIA-Z9000", "4", "zone-2"),
              KNODE("gpu-m", "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb", "56", "zone-1"));
    assert_int_equal(h_start(&k), 0);
    assert_true(h_log_has(&k, "Node gpu-b: nvidia.com/gpu.product \\\"NVIDIA-Z9000\\\""));
    assert_true(h_log_has(&k, "Node gpu-m: nvidia.com/gpu.product "
                              "\\\"NVIDIA-A100-SXM4-80GB-MIG-1g.10gb\\\" is A100-SXM4-80GB "
                              "cards in MIG strategy single, whose 56 GPUs are 1g.10gb instances"));
    int up;
    assert_int_equal(node_state(&k, "gpu-a", &up), 200);
    assert_int_equal(node_state(&k, "gpu-b", &up), 404);
    assert_int_equal(node_state(&k, "gpu-m", &up), 404);
    assert_int_equal(h_stop(&k), 0);
    /* gpusched-agent's 10 replicas of each card, without the count label: said, not taken */
    set_nodes(KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"),
              "{\"metadata\":{\"name\":\"gpu-r\",\"labels\":{\"nvidia.com/gpu.product\":"
              "\"Tesla-T4\"}},\"status\":{\"capacity\":{\"cpu\":\"96\",\"memory\":\"768Gi\","
              "\"nvidia.com/gpu\":\"40\"}}}",
              NULL);
    assert_int_equal(h_start(&k), -1);
    assert_true(h_log_has(&k, "Node gpu-r: 40 GPUs, more than 16"));
    assert_true(h_log_has(&k, "run GPU feature discovery"));
    set_nodes(KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"),
              KNODE("gpu-b", "Tesla-T4", "4", "zone-2"), NULL);
    assert_int_equal(h_start(&k), 0);
    struct answer a;
    assert_int_equal(h_call(&k, "GET", "/v1/nodes/gpu-b", TOKEN_A, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    assert_int_equal(json_array_size(json_object_get(a.json, "gpu")), 4);
    assert_non_null(strstr(a.body, "T4"));
    assert_non_null(strstr(a.body, "zone-2"));
    h_answer_free(&a);
    assert_int_equal(h_stop(&k), 0);
    /* capacity.pods is kubelet's maxPods: the node runs that many at most; past what gpuschedd
     * binds to one node it is taken as that, said once */
    set_nodes(KNODE_PODS("gpu-p", "2"), KNODE_PODS("gpu-q", "1000"), NULL);
    assert_int_equal(h_start(&k), 0);
    assert_int_equal(h_call(&k, "GET", "/v1/nodes/gpu-p", TOKEN_A, NULL, &a), 0);
    assert_int_equal(json_integer_value(json_object_get(a.json, "max_pods")), 2);
    h_answer_free(&a);
    assert_int_equal(h_call(&k, "GET", "/v1/nodes/gpu-q", TOKEN_A, NULL, &a), 0);
    assert_int_equal(json_integer_value(json_object_get(a.json, "max_pods")), GS_NODE_PODS_MAX);
    h_answer_free(&a);
    assert_true(
        h_log_has(&k, "Node gpu-q: status.capacity.pods 1000: gpuschedd binds at most 512"));
    assert_int_equal(h_stop(&k), 0);
    /* a count rounds up, as Quantity.Value(); 0 pods is a node that runs none, said so and
     * not ready, as read at start with the Nodes' sync off (on: test_nodes_relisted) */
    set_nodes(KNODE_PODS("gpu-p", "1.5"), KNODE_PODS("gpu-q", "500m"), KNODE_PODS("gpu-z", "0"));
    assert_int_equal(h_start(&k), 0);
    const char *names[] = {"/v1/nodes/gpu-p", "/v1/nodes/gpu-q", "/v1/nodes/gpu-z"};
    const int want[] = {2, 1, GS_NODE_PODS_DEFAULT};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(h_call(&k, "GET", names[i], TOKEN_A, NULL, &a), 0);
        assert_int_equal(json_integer_value(json_object_get(a.json, "max_pods")), want[i]);
        assert_int_equal(json_is_true(json_object_get(a.json, "ready")), i < 2);
        h_answer_free(&a);
    }
    assert_true(h_log_has(&k, "Node gpu-z: status.capacity.pods 0: it runs no pod"));
    assert_int_equal(h_stop(&k), 0);
    /* a Node NotReady when read at start takes no pod, though nothing reads it again */
    set_nodes(KNODE_READY("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1", "True"),
              KNODE_READY("gpu-b", "Tesla-T4", "4", "zone-2", "False"), NULL);
    assert_int_equal(h_start(&k), 0);
    int ready;
    assert_int_equal(node_state(&k, "gpu-a", &ready), 200);
    assert_true(ready);
    assert_int_equal(node_state(&k, "gpu-b", &ready), 200);
    assert_false(ready);
    assert_true(h_log_has(&k, "msg=\"node not ready\" node=gpu-b by=\"Node object\""));
    assert_int_equal(h_stop(&k), 0);
    /* the cards' count label is a count, not a number's first digits */
    set_nodes(KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"),
              "{\"metadata\":{\"name\":\"gpu-c\",\"labels\":{\"nvidia.com/gpu.product\":"
              "\"NVIDIA-A100-SXM4-80GB\",\"nvidia.com/gpu.count\":\"8x\"}},\"status\":{"
              "\"capacity\":{\"cpu\":\"96\",\"memory\":\"768Gi\",\"nvidia.com/gpu\":\"8\"}}}",
              NULL);
    assert_int_equal(h_start(&k), -1);
    assert_true(h_log_has(&k, "Node gpu-c: label nvidia.com/gpu.count \\\"8x\\\" is not a count"));
    /* a quantity the API server would write as a string, given as a number, is not read as 0 */
    set_nodes(KNODE_PODS("gpu-p", "2"),
              "{\"metadata\":{\"name\":\"gpu-n\"},\"status\":{\"capacity\":{\"cpu\":\"96\","
              "\"memory\":\"768Gi\",\"pods\":3}}}",
              NULL);
    assert_int_equal(h_start(&k), -1);
    assert_true(h_log_has(&k, "Node gpu-n: status.capacity.pods is not a quantity (a string)"));
    /* spec.taints are read beside the labels, a PreferNoSchedule one too (a preference the
     * score weighs) */
    set_nodes(KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"),
              KNODE_TAINTED("gpu-t", "Tesla-T4", "4", "zone-2",
                            "[{\"key\":\"k\",\"effect\":\"PreferNoSchedule\"}]"),
              NULL);
    assert_int_equal(h_start(&k), 0);
    assert_int_equal(h_call(&k, "GET", "/v1/nodes/gpu-t", TOKEN_A, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(a.json, "taints"), 0), "effect")),
                        "PreferNoSchedule");
    h_answer_free(&a);
    assert_int_equal(h_stop(&k), 0);
    set_nodes(KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"),
              KNODE_TAINTED("gpu-t", "Tesla-T4", "4", "zone-2",
                            "[{\"key\":\"nvidia.com/gpu\",\"value\":\"present\","
                            "\"effect\":\"NoSchedule\"}]"),
              NULL);
    assert_int_equal(h_start(&k), 0);
    assert_int_equal(h_call(&k, "GET", "/v1/nodes/gpu-t", TOKEN_A, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    json_t *t = json_array_get(json_object_get(a.json, "taints"), 0);
    assert_string_equal(json_string_value(json_object_get(t, "key")), "nvidia.com/gpu");
    assert_string_equal(json_string_value(json_object_get(t, "value")), "present");
    assert_string_equal(json_string_value(json_object_get(t, "effect")), "NoSchedule");
    h_answer_free(&a);
    assert_int_equal(h_stop(&k), 0);
    h_cleanup(&k);
}

/* Lines of @k's log holding @needle. */
static int log_lines(const struct daemon *k, const char *needle)
{
    FILE *fp = fopen(k->log, "r");
    char line[4096];
    int n = 0;
    while (fp && fgets(line, sizeof(line), fp))
        n += strstr(line, needle) != NULL;
    if (fp)
        fclose(fp);
    return n;
}

/* Wait (30 s at most) until node @name is known and its readiness is @ready. */
static void node_becomes(const struct daemon *k, const char *name, int ready)
{
    int r = -1;
    long st = 0;
    for (int i = 0; i < 600 && (st != 200 || r != ready); i++) {
        st = node_state(k, name, &r);
        if (st != 200 || r != ready)
            usleep(50000);
    }
    if (st != 200 || r != ready)
        fail_msg("node %s: HTTP %ld, ready %d, not %d", name, st, r, ready);
}

/*
 * --nodes kubernetes follows the Nodes: each fresh list (syncSeconds) takes in a Node made since,
 * marks NotReady one the list no longer has (deleted while no watch saw it) or whose Ready
 * condition is not True, Ready again when it is, and logs a Node it cannot read.
 */
static int fake_got(const char *method, const char *url);

static void test_nodes_relisted(void **state)
{
    (void)state;
    struct daemon k;
    nodes_setup(&k, "  timeoutSeconds: 2\n  syncSeconds: 1\n");
    set_nodes(KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"),
              KNODE("gpu-b", "Tesla-T4", "4", "zone-2"), NULL);
    assert_int_equal(h_start(&k), 0);
    node_becomes(&k, "gpu-b", 1);
    set_nodes(KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"),
              KNODE("gpu-c", "Tesla-T4", "4", "zone-3"), KNODE("gpu-x", "NVIDIA-Z9000", "2", "z"));
    node_becomes(&k, "gpu-c", 1);
    node_becomes(&k, "gpu-b", 0);
    assert_true(h_log_has(&k, "msg=\"node added\" node=gpu-c zone=zone-3 nodes=3"));
    assert_true(h_log_has(&k, "Node gpu-x: nvidia.com/gpu.product \\\"NVIDIA-Z9000\\\""));
    set_nodes(KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"),
              KNODE_READY("gpu-b", "Tesla-T4", "4", "zone-2", "True"),
              KNODE_READY("gpu-c", "Tesla-T4", "4", "zone-3", "True"));
    node_becomes(&k, "gpu-b", 1);
    /* gpu-c goes NotReady with a pod kube-scheduler bound there, and one posted to gpuschedd:
     * the bound one stays (Kubernetes' taint manager evicts by its tolerations), the other
     * waits again */
    json_t *kb = kube_pod(h_pod("team-a", "kb", 2, 0), "team-a", "kb");
    json_decref(h_verb(&k, "filter",
                       json_pack("{s:o, s:n, s:[s]}", "Pod", kb, "Nodes", "NodeNames", "gpu-c")));
    json_t *r = h_verb(&k, "bind",
                       json_pack("{s:s, s:s, s:s, s:s}", "PodName", "kb", "PodNamespace", "team-a",
                                 "PodUID", "uid-kb", "Node", "gpu-c"));
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    json_decref(r);
    char *text = h_pod("team-a", "ap", 2, 0);
    json_t *ap = json_loads(text, 0, NULL);
    free(text);
    json_object_set_new(json_object_get(ap, "spec"), "nodeName", json_string("gpu-c"));
    json_decref(h_submit(&k, TOKEN_A, json_dumps(ap, 0), 201));
    json_decref(ap);
    set_nodes(KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"),
              KNODE_READY("gpu-b", "Tesla-T4", "4", "zone-2", "True"),
              KNODE_READY("gpu-c", "Tesla-T4", "4", "zone-3", "False"));
    node_becomes(&k, "gpu-c", 0);
    json_t *v = h_pod_get(&k, "team-a", "kb");
    assert_string_equal(json_string_value(json_object_get(v, "state")), "running");
    json_decref(v);
    assert_int_equal(fake_got("POST", "/api/v1/namespaces/team-a/pods/kb/eviction"), 0);
    v = h_pod_get(&k, "team-a", "ap");
    assert_string_equal(json_string_value(json_object_get(v, "state")), "pending");
    json_decref(v);
    /* readiness its Node object changed is dated, as an agent's is */
    struct answer a;
    assert_int_equal(h_call(&k, "GET", "/v1/nodes/gpu-c", TOKEN_A, NULL, &a), 0);
    if (!json_is_string(json_object_get(a.json, "ready_changed")))
        fail_msg("gpu-c: no ready_changed: %s", a.body);
    h_answer_free(&a);
    /* a Node whose capacity.pods is 0 runs no pod: not ready while it says so */
    set_nodes(KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"), KNODE_PODS("gpu-b", "0"),
              NULL);
    node_becomes(&k, "gpu-b", 0);
    assert_int_equal(h_stop(&k), 0);
    h_cleanup(&k);
}

/* A Node of a product gpusched does not know, there as gpuschedd starts, is left out as one made
 * while it runs is: the start goes on, and the lists after it do not say it again. */
static void test_unknown_product_said_once(void **state)
{
    (void)state;
    struct daemon k;
    nodes_setup(&k, "  timeoutSeconds: 2\n  syncSeconds: 1\n");
    set_nodes(KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"),
              KNODE("gpu-x", "NVIDIA-GeForce-RTX-4090", "2", "z"), NULL);
    assert_int_equal(h_start(&k), 0);
    /* two lists at least read gpu-x again: one takes gpu-c in, the next finds it NotReady */
    set_nodes(KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"),
              KNODE("gpu-x", "NVIDIA-GeForce-RTX-4090", "2", "z"),
              KNODE("gpu-c", "Tesla-T4", "4", "zone-3"));
    node_becomes(&k, "gpu-c", 1);
    set_nodes(KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"),
              KNODE("gpu-x", "NVIDIA-GeForce-RTX-4090", "2", "z"),
              KNODE_READY("gpu-c", "Tesla-T4", "4", "zone-3", "False"));
    node_becomes(&k, "gpu-c", 0);
    int up;
    assert_int_equal(node_state(&k, "gpu-x", &up), 404);
    assert_int_equal(log_lines(&k, "Node gpu-x: nvidia.com/gpu.product"), 1);
    assert_int_equal(h_stop(&k), 0);
    h_cleanup(&k);
}

/* Hand @events (Node watch lines) to every Node watch from now on (each says them again: the
 * same Nodes, the same inventory), until the next call. */
static void node_watch_sends(const char *events)
{
    pthread_mutex_lock(&f.mu);
    snprintf(f.node_watch, sizeof(f.node_watch), "%s", events);
    pthread_mutex_unlock(&f.mu);
}

/* A Node watch event line: @type of Node @node (a KNODE text). */
#define NODE_EVENT(type, node) "{\"type\":\"" type "\",\"object\":" node "}\n"

/* Node @name's taints as @k's GET /v1/nodes/NAME shows them; -1 when it is not known. */
static int node_taints(const struct daemon *k, const char *name)
{
    char path[96];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/nodes/%s", name);
    assert_int_equal(h_call(k, "GET", path, TOKEN_A, NULL, &a), 0);
    int n = a.status == 200 ? (int)json_array_size(json_object_get(a.json, "taints")) : -1;
    h_answer_free(&a);
    return n;
}

/* Node @name's cards as @k's GET /v1/nodes/NAME shows them; -1 when it is not known. */
static int node_gpus(const struct daemon *k, const char *name)
{
    char path[96];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/nodes/%s", name);
    assert_int_equal(h_call(k, "GET", path, TOKEN_A, NULL, &a), 0);
    int n = a.status == 200 ? (int)json_integer_value(json_object_get(a.json, "gpus")) : -1;
    h_answer_free(&a);
    return n;
}

/* Wait (30 s at most) until node @name shows @n taints. */
static void node_taints_become(const struct daemon *k, const char *name, int n)
{
    int got = -2;
    for (int i = 0; i < 600 && (got = node_taints(k, name)) != n; i++)
        usleep(50000);
    if (got != n) {
        char cmd[160];
        snprintf(cmd, sizeof(cmd), "tail -30 %s >&2", k->log);
        (void)!system(cmd);
        fail_msg("node %s: %d taints, not %d", name, got, n);
    }
}

/* @k's filter of pod team-a/@name (1 card) on node @node alone, the pod tolerating taint key
 * @tolerate (NULL: none). Return: "" offered; else why it is refused there (@why, 512 bytes). */
static const char *filter_on(const struct daemon *k, const char *name, const char *node,
                             const char *tolerate, char *why)
{
    json_t *pod = kube_pod(h_pod("team-a", name, 1, 0), "team-a", name);
    if (tolerate)
        json_object_set_new(json_object_get(pod, "spec"), "tolerations",
                            json_pack("[{s:s, s:s}]", "key", tolerate, "operator", "Exists"));
    json_t *r =
        h_verb(k, "filter", json_pack("{s:o, s:n, s:[s]}", "Pod", pod, "Nodes", "NodeNames", node));
    assert_non_null(r);
    json_t *names = json_object_get(r, "NodeNames");
    const char *failed =
        json_string_value(json_object_get(json_object_get(r, "FailedNodes"), node));
    int offered =
        json_array_size(names) == 1 && !strcmp(json_string_value(json_array_get(names, 0)), node);
    snprintf(why, 512, "%s", offered ? "" : failed ? failed : "(neither offered nor refused)");
    json_decref(r);
    return why;
}

/*
 * --nodes kubernetes follows each Node's spec.taints: the node.kubernetes.io/not-ready taint the
 * API server gives every new Node holds it only until the lifecycle controller lifts it, and a
 * taint added later keeps off the pods that do not tolerate it, as kube-scheduler does.
 */
static void test_node_taints_followed(void **state)
{
    (void)state;
    struct daemon k;
    char why[512];
    nodes_setup(&k, "  timeoutSeconds: 2\n  syncSeconds: 600\n");
    set_nodes(
        KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1"),
        KNODE_TAINTED("gpu-n", "Tesla-T4", "4", "zone-2",
                      "[{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoSchedule\"}]"),
        NULL);
    assert_int_equal(h_start(&k), 0);
    assert_non_null(strstr(filter_on(&k, "tf-1", "gpu-n", NULL, why), "untolerated taint"));
    /* kubelet reports Ready: the lifecycle controller lifts the taint (a watch MODIFIED) */
    node_watch_sends(NODE_EVENT("MODIFIED", KNODE("gpu-n", "Tesla-T4", "4", "zone-2")));
    node_taints_become(&k, "gpu-n", 0);
    assert_string_equal(filter_on(&k, "tf-2", "gpu-n", NULL, why), "");
    assert_true(h_log_has(&k, "msg=\"node taints changed\" node=gpu-n"));
    assert_false(h_log_has(&k, "placed as it was"));
    /* an operator taints the node: pods that do not tolerate it are kept off, those that do
     * are not */
    node_watch_sends(NODE_EVENT(
        "MODIFIED", KNODE_TAINTED("gpu-n", "Tesla-T4", "4", "zone-2",
                                  "[{\"key\":\"maintenance\",\"effect\":\"NoSchedule\"}]")));
    node_taints_become(&k, "gpu-n", 1);
    assert_non_null(strstr(filter_on(&k, "tf-3", "gpu-n", NULL, why), "untolerated taint"));
    assert_string_equal(filter_on(&k, "tf-4", "gpu-n", "maintenance", why), "");
    assert_string_equal(filter_on(&k, "tf-5", "gpu-a", NULL, why), "");
    node_watch_sends("");
    assert_int_equal(h_stop(&k), 0);
    h_cleanup(&k);
}

/* Wait (30 s at most) until @k's pod team-a/@name is in @state. */
static void pod_state_becomes(const struct daemon *k, const char *name, const char *state)
{
    char path[96], got[32] = "";
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    for (int i = 0; i < 600 && strcmp(got, state); i++) {
        struct answer a;
        assert_int_equal(h_call(k, "GET", path, TOKEN_A, NULL, &a), 0);
        const char *s = json_string_value(json_object_get(a.json, "state"));
        snprintf(got, sizeof(got), "%s", s ? s : "");
        h_answer_free(&a);
        if (strcmp(got, state))
            usleep(50000);
    }
    if (strcmp(got, state))
        fail_msg("pod %s: %s, not %s", name, got, state);
}

/*
 * --nodes kubernetes installed before any Node exists: gpuschedd starts (a warning says so),
 * answers every read, keeps posted pods waiting, and takes the Nodes in as they are made.
 */
static void test_nodes_none_yet(void **state)
{
    (void)state;
    struct daemon k;
    struct answer a;
    char why[512];
    nodes_setup(&k, "  timeoutSeconds: 2\n  syncSeconds: 600\n");
    pthread_mutex_lock(&f.mu);
    snprintf(f.nodes, sizeof(f.nodes), "{\"kind\":\"NodeList\",\"items\":[]}");
    pthread_mutex_unlock(&f.mu);
    assert_int_equal(h_start(&k), 0);
    assert_true(h_log_has(&k, "kubernetes: no nodes yet"));
    const char *reads[][2] = {{"/v1/nodes", TOKEN_A},
                              {"/metrics", NULL},
                              {"/v1/snapshot", TOKEN_ADMIN},
                              {"/v1/pods", TOKEN_A}};
    for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
        assert_int_equal(h_call(&k, "GET", reads[i][0], reads[i][1], NULL, &a), 0);
        if (a.status != 200)
            fail_msg("GET %s: %ld %s", reads[i][0], a.status, a.body);
        h_answer_free(&a);
    }
    json_t *p = h_submit(&k, TOKEN_A, h_pod("team-a", "ne-1", 1, 0), 201);
    assert_string_equal(json_string_value(json_object_get(p, "state")), "pending");
    assert_non_null(
        strstr(json_string_value(json_object_get(p, "reason")), "0/0 nodes are available"));
    json_decref(p);
    assert_string_not_equal(filter_on(&k, "ne-2", "gpu-a", NULL, why), "");
    node_watch_sends(NODE_EVENT("ADDED", KNODE("gpu-a", "NVIDIA-A100-SXM4-80GB", "8", "zone-1")));
    node_becomes(&k, "gpu-a", 1);
    pod_state_becomes(&k, "ne-1", "running");
    assert_string_equal(filter_on(&k, "ne-3", "gpu-a", NULL, why), "");
    assert_int_equal(h_call(&k, "GET", "/metrics", NULL, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    h_answer_free(&a);
    /* a Node joins before its cards are told (kubelet registers it, the device plugin and GPU
     * feature discovery come later): taken in without cards, then with them while it is empty */
    node_watch_sends(NODE_EVENT("ADDED", KNODE_BARE("gpu-late")));
    node_becomes(&k, "gpu-late", 1);
    assert_int_equal(node_gpus(&k, "gpu-late"), 0);
    node_watch_sends(NODE_EVENT("MODIFIED", KNODE("gpu-late", "Tesla-T4", "4", "zone-1")));
    for (int i = 0; i < 600 && node_gpus(&k, "gpu-late") != 4; i++)
        usleep(50000);
    assert_int_equal(node_gpus(&k, "gpu-late"), 4);
    assert_true(h_log_has(&k, "msg=\"node reshaped\" node=gpu-late gpus=4"));
    assert_string_equal(filter_on(&k, "ne-4", "gpu-late", NULL, why), "");
    json_decref(h_verb(&k, "bind",
                       json_pack("{s:s, s:s, s:s, s:s}", "PodName", "ne-4", "PodNamespace",
                                 "team-a", "PodUID", "uid-ne-4", "Node", "gpu-late")));
    pod_state_becomes(&k, "ne-4", "running");
    /* with a pod on it, a Node's new shape waits for gpuschedd's next start */
    node_watch_sends(NODE_EVENT("MODIFIED", KNODE("gpu-late", "Tesla-T4", "2", "zone-1")));
    for (int i = 0; i < 600 && !h_log_has(&k, "placed as it was until gpuschedd starts again"); i++)
        usleep(50000);
    assert_int_equal(node_gpus(&k, "gpu-late"), 4);
    node_watch_sends("");
    assert_int_equal(h_stop(&k), 0);
    h_cleanup(&k);
}

/*
 * A Node whose device plugin offers several nvidia.com/gpu devices per card (capacity over the
 * gpu.count label: gpusched-agent's --replicas, HAMi's deviceSplitCount) holds that many pods per
 * card at most, each needing a device of its own: the third shared pod goes to the other card.
 */
static void test_node_replicas_bound(void **state)
{
    (void)state;
    struct daemon k;
    nodes_setup(&k, "  timeoutSeconds: 2\n  syncSeconds: 600\n");
    set_nodes(KNODE_SPLIT("gpu-s", "2", "4"), KNODE_BARE("cpu-n"), NULL);
    assert_int_equal(h_start(&k), 0);
    struct answer a;
    assert_int_equal(h_call(&k, "GET", "/v1/nodes/gpu-s", TOKEN_A, NULL, &a), 0);
    assert_int_equal(json_integer_value(json_object_get(a.json, "gpu_replicas")), 2);
    h_answer_free(&a);
    int on[2] = {0, 0};
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof(name), "rb-%d", i);
        json_t *p = h_submit(&k, TOKEN_A, h_pod("team-a", name, 1, 10), 201);
        json_t *cards = json_object_get(p, "gpus");
        if (json_array_size(cards) != 1)
            fail_msg("%s: not on one card: %s", name, json_dumps(p, 0));
        on[json_integer_value(json_array_get(cards, 0)) & 1]++;
        json_decref(p);
    }
    assert_int_equal(on[0], 2);
    assert_int_equal(on[1], 2);
    json_t *p = h_submit(&k, TOKEN_A, h_pod("team-a", "rb-4", 1, 10), 201);
    assert_string_equal(json_string_value(json_object_get(p, "state")), "pending");
    json_decref(p);
    assert_int_equal(h_stop(&k), 0);
    h_cleanup(&k);
}

/* Requests the fake got for @method @url so far. */
static int fake_got(const char *method, const char *url)
{
    int n = 0;
    pthread_mutex_lock(&f.mu);
    for (int i = 0; i < f.n; i++)
        n += !strcmp(f.recs[i].method, method) && !strcmp(f.recs[i].url, url);
    pthread_mutex_unlock(&f.mu);
    return n;
}

/* Filter team-b's pod @name (@gpus cards, uid "uid-@name") on the three GPU nodes. */
static json_t *filter_b(const char *name, int gpus)
{
    json_t *pod = kube_pod(h_pod("team-b", name, gpus, 0), "team-b", name);
    json_t *r = h_verb(&d, "filter",
                       json_pack("{s:o, s:n, s:[s,s,s]}", "Pod", pod, "Nodes", "NodeNames",
                                 "n-a100-0", "n-a100-1", "n-t4-0"));
    assert_non_null(r);
    return r;
}

/* The pods GET /v1/status, /v1/queues and /v1/tenants count running and pending are the same
 * (@running of them running), an evicted pod still stopping in Kubernetes pending in each. */
static void counts_agree(int running)
{
    static const char *const path[3] = {"/v1/status", "/v1/queues", "/v1/tenants"};
    json_int_t n[3][2] = {{0}};
    for (int k = 0; k < 3; k++) {
        struct answer a;
        assert_int_equal(h_call(&d, "GET", path[k], TOKEN_ADMIN, NULL, &a), 0);
        assert_int_equal(a.status, 200);
        json_t *items = k ? json_object_get(a.json, "items") : json_pack("[O]", a.json), *o;
        size_t i;
        json_array_foreach(items, i, o)
        {
            n[k][0] += json_integer_value(json_object_get(o, "pods_running"));
            n[k][1] += json_integer_value(json_object_get(o, "pods_pending"));
        }
        if (!k)
            json_decref(items);
        h_answer_free(&a);
    }
    for (int k = 0; k < 3; k++)
        if (n[k][0] != running || n[k][1] != n[0][1])
            fail_msg("%s: %lld running, %lld pending; /v1/status %lld, %lld", path[k],
                     (long long)n[k][0], (long long)n[k][1], (long long)n[0][0],
                     (long long)n[0][1]);
}

/*
 * GET /v1/snapshot while a pod evicted from n-t4-0 (4 cards) through Kubernetes still stops
 * there, its grace period 600 s: the pod is not written, every card of the node is held from
 * now until 600 s after its Eviction, and `simulate --from-now` continues it, the pod it was
 * evicted for (@preemptor, placed there by gpuschedd's scheduler) running on on those cards.
 */
static void snapshot_holds_node(const char *preemptor)
{
    struct answer a;
    char path[300], json[300], want[96];
    assert_int_equal(h_call(&d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    assert_null(strstr(a.body, "\"name\": \"a3\""));
    assert_non_null(strstr(a.body, "\n  cardHolds:\n"));
    for (int g = 0; g < 4; g++) {
        snprintf(want, sizeof(want), "    - {node: \"n-t4-0\", gpu: %d, at: ", g);
        const char *at = strstr(a.body, want);
        if (!at)
            fail_msg("no \"%s\" in the snapshot: %s", want, a.body);
        char *end;
        long long from = strtoll(at + strlen(want), &end, 10);
        const char *until = strstr(end, ", until: ");
        assert_non_null(until);
        long long held = strtoll(until + 9, NULL, 10) - from;
        if (held <= 590000000LL || held > 600000000LL)
            fail_msg("card %d held %lld us, expected just under 600 s", g, held);
    }
    snprintf(path, sizeof(path), "%s/snap.yaml", d.dir);
    snprintf(json, sizeof(json), "%s/snap.json", d.dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(a.body, fp);
    assert_int_equal(fclose(fp), 0);
    h_answer_free(&a);
    json_t *out = h_continued(path, json), *p;
    size_t i;
    int seen = 0;
    json_array_foreach(json_object_get(out, "pods"), i, p)
    {
        const char *n = json_string_value(json_object_get(p, "name"));
        assert_false(n && !strcmp(n, "team-a/a3"));
        const char *node = json_string_value(json_object_get(p, "node"));
        if (n && !strcmp(n, preemptor)) {
            assert_true(node && !strcmp(node, "n-t4-0"));
            seen = 1;
        }
    }
    assert_true(seen);
    json_decref(out);
}

/*
 * Reclaim through kube-scheduler, against the fake API server as 1.20 answers (each tenant's pods
 * in its own Queue): team-a's pods
 * bound on every card, team-b's 4-card pod fits nowhere; filter hands it to the scheduler, which
 * takes team-a's 4-card pod back (team-a is above its deserved share, team-b below) and places
 * team-b's there. The victim is evicted with a policy/v1beta1 Eviction (the API server serves no
 * policy/v1) carrying its UID, sent again after a 429 and then never more; the node is offered
 * to nobody until the watch says the victim is gone, and a snapshot holds its cards until then
 * (snapshot_holds_node()); then the preemptor is nudged (its annotation) and binds there.
 */
static void test_reclaim_evicts_through_api(void **state)
{
    (void)state;
    char section[512];
    fake_reset();
    f.no_policy_v1 = 1;
    f.evict_429 = 1;
    seat_ok("a1", 8, "n-a100-0");
    seat_ok("a2", 8, "n-a100-1");
    grace_s = 600;
    seat_ok("a3", 4, "n-t4-0");
    grace_s = NO_GRACE;
    json_t *r = filter_b("b1", 4);
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    json_decref(r);
    const char *ev = "/api/v1/namespaces/team-a/pods/a3/eviction";
    for (int i = 0; i < 300 && fake_got("POST", ev) < 2; i++)
        usleep(50000);
    usleep(500000); /* and no third */
    assert_int_equal(fake_got("POST", ev), 2);
    assert_int_equal(fake_got("POST", "/api/v1/namespaces/team-a/pods/a1/eviction"), 0);
    assert_int_equal(fake_got("POST", "/api/v1/namespaces/team-a/pods/a2/eviction"), 0);
    json_t *b = fake_body("POST", ev);
    assert_string_equal(json_string_value(json_object_get(b, "apiVersion")), "policy/v1beta1");
    assert_string_equal(json_string_value(json_object_get(b, "kind")), "Eviction");
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(b, "deleteOptions"), "preconditions"), "uid")),
        "uid-a3");
    json_decref(b);
    /* and its owners are told why, as kube-scheduler's preemption tells them: an Event, in
     * their own tenant's words (b1 is team-b's) */
    const char *events = "/api/v1/namespaces/team-a/events";
    for (int i = 0; i < 100 && !fake_got("POST", events); i++)
        usleep(50000);
    b = fake_body("POST", events);
    assert_non_null(b);
    assert_string_equal(json_string_value(json_object_get(b, "reason")), "Preempted");
    const json_t *obj = json_object_get(b, "involvedObject");
    assert_string_equal(json_string_value(json_object_get(obj, "name")), "a3");
    assert_string_equal(json_string_value(json_object_get(obj, "uid")), "uid-a3");
    assert_string_equal(json_string_value(json_object_get(b, "message")),
                        "gpusched: reclaimed by a pod of another tenant");
    json_decref(b);
    /* the victim still runs: its node takes nothing, not even the pod it was evicted for */
    r = filter_b("b1", 4);
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    const char *why =
        json_string_value(json_object_get(json_object_get(r, "FailedNodes"), "n-t4-0"));
    assert_non_null(why);
    assert_non_null(strstr(why, "still terminating"));
    json_decref(r);
    struct answer a;
    assert_int_equal(h_call(&d, "GET", "/metrics", NULL, NULL, &a), 0);
    assert_non_null(strstr(a.body, "\ngpusched_pods_evicted_total{reason=\"reclaim\"} 1\n"));
    h_answer_free(&a);
    snapshot_holds_node("team-b/b1");
    counts_agree(3); /* a1, a2 running; a3, evicted, and b1 waiting: one count everywhere */
    /* the watch says it is gone: the preemptor is nudged, and binds there */
    pthread_mutex_lock(&f.mu);
    snprintf(f.list, sizeof(f.list), "%s",
             "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"10\"},\"items\":["
             "{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"a1\",\"uid\":\"uid-a1\"}},"
             "{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"a2\",\"uid\":\"uid-a2\"}},"
             "{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"a3\",\"uid\":\"uid-a3\"}}]}");
    pthread_mutex_unlock(&f.mu);
    follow_pods(section, sizeof(section), 2, 300);
    assert_true(fake_count(&f.watches, 1) >= 1); /* more when a quiet one ended after 2 s */
    watch_sends("{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"namespace\":\"team-a\","
                "\"name\":\"a3\",\"uid\":\"uid-a3\",\"resourceVersion\":\"11\"}}}\n");
    assert_int_equal(pod_status_becomes("a3", 404), 404);
    const char *b1 = "/api/v1/namespaces/team-b/pods/b1";
    for (int i = 0; i < 300 && !fake_got("PATCH", b1); i++)
        usleep(50000);
    assert_int_equal(fake_got("PATCH", b1), 1);
    b = fake_body("PATCH", b1);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(b, "metadata"), "annotations"),
                            "gpusched.io/nominated-node")),
                        "n-t4-0");
    json_decref(b);
    r = filter_b("b1", 4);
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 1);
    assert_string_equal(json_string_value(json_array_get(json_object_get(r, "NodeNames"), 0)),
                        "n-t4-0");
    json_decref(r);
    r = h_verb(&d, "bind",
               json_pack("{s:s, s:s, s:s, s:s}", "PodName", "b1", "PodNamespace", "team-b",
                         "PodUID", "uid-b1", "Node", "n-t4-0"));
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    json_decref(r);
    assert_int_equal(fake_got("POST", "/api/v1/namespaces/team-b/pods/b1/binding"), 1);
    assert_int_equal(fake_got("POST", ev), 2);
}

/*
 * A victim whose terminationGracePeriodSeconds is negative stops within 1 s, as the API server
 * has made such a period since Kubernetes 1.27 (kubernetes#115606): the snapshot holds its cards
 * no longer than that (not the 30 s of a pod that gives none), while the extender still offers
 * its node to nobody until the API server says it is gone.
 */
static void test_negative_grace_is_one_second(void **state)
{
    (void)state;
    fake_reset();
    seat_ok("a1", 8, "n-a100-0");
    seat_ok("a2", 8, "n-a100-1");
    grace_s = -5;
    seat_ok("a3", 4, "n-t4-0");
    grace_s = NO_GRACE;
    json_decref(filter_b("b1", 4));
    const char *ev = "/api/v1/namespaces/team-a/pods/a3/eviction";
    for (int i = 0; i < 300 && !fake_got("POST", ev); i++)
        usleep(50000);
    assert_int_equal(fake_got("POST", ev), 1);
    usleep(1500000);
    struct answer a;
    assert_int_equal(h_call(&d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    if (strstr(a.body, "cardHolds:"))
        fail_msg("cards still held 1.5 s after a -5 s grace period: %s", a.body);
    h_answer_free(&a);
    json_t *r = filter_b("b1", 4);
    const char *why =
        json_string_value(json_object_get(json_object_get(r, "FailedNodes"), "n-t4-0"));
    assert_true(why && strstr(why, "still terminating"));
    json_decref(r);
}

/* Pod team-a/@name asking @gpus cards, bound to @node and Running, as the API server lists it:
 * with gpuschedd's assignment annotations naming cards @cards, or none when @cards is NULL. */
static json_t *bound_pod(const char *name, int gpus, const char *node, const char *cards)
{
    json_t *pod = kube_pod(h_pod("team-a", name, gpus, 0), "team-a", name);
    json_object_set_new(json_object_get(pod, "spec"), "nodeName", json_string(node));
    json_object_set_new(pod, "status", json_pack("{s:s}", "phase", "Running"));
    if (cards)
        json_object_set_new(json_object_get(pod, "metadata"), "annotations",
                            json_pack("{s:s, s:s, s:s}", "gpusched.io/node", node,
                                      "gpusched.io/gpu-index", cards, "gpusched.io/gpu-milli",
                                      "1000"));
    return pod;
}

/* Pod team-a/@name asking @gpus cards (0: naming no nvidia.com/gpu), Pending with no node, its
 * PodScheduled condition False with @reason (NULL: no condition yet), as the API server lists one
 * kube-scheduler tried. */
static json_t *waiting_pod(const char *name, int gpus, const char *reason)
{
    json_t *pod = kube_pod(h_pod("team-a", name, gpus, 0), "team-a", name), *c;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(pod, "spec"), "containers"), i, c)
    {
        if (!gpus) /* no key: kube-scheduler asks the extender of a pod naming its resources */
            json_object_del(json_object_get(json_object_get(c, "resources"), "limits"),
                            "nvidia.com/gpu");
    }
    json_t *conds = json_array();
    if (reason)
        json_array_append_new(conds, json_pack("{s:s, s:s, s:s}", "type", "PodScheduled", "status",
                                               "False", "reason", reason));
    json_object_set_new(pod, "status",
                        json_pack("{s:s, s:o}", "phase", "Pending", "conditions", conds));
    return pod;
}

/* The fake lists @items (a JSON array of pods, consumed) from now on. */
static void fake_lists(json_t *items)
{
    json_t *list = json_pack("{s:s, s:{s:s}, s:o}", "kind", "PodList", "metadata",
                             "resourceVersion", "7", "items", items);
    char *text = json_dumps(list, JSON_COMPACT);
    json_decref(list);
    assert_non_null(text);
    assert_true(strlen(text) < sizeof(f.list));
    pthread_mutex_lock(&f.mu);
    snprintf(f.list, sizeof(f.list), "%s", text);
    pthread_mutex_unlock(&f.mu);
    free(text);
}

/* As setup(), the pods followed every second from the start; before it the fake lists ad-own,
 * bound by gpuschedd to cards 0 and 1 of n-a100-0 (the store that said so lost: this daemon's
 * is empty), and ad-other, on n-a100-1 with a card but none of gpuschedd's annotations; and
 * three pods waiting for a node: ad-wait (a card, found no node), ad-wait-cpu (no card) and
 * ad-new-pod (not tried yet). */
static int setup_adopt(void **state)
{
    (void)state;
    own_queues = 0; /* the groups before may have set them */
    grace_s = NO_GRACE;
    signal(SIGPIPE, SIG_IGN);
    snprintf(token_path, sizeof(token_path), "/tmp/gs_kube_token.XXXXXX");
    int fd = mkstemp(token_path);
    if (fd < 0 || close(fd) || h_write(token_path, TOKEN_K1 "\n") || fake_start(0))
        return -1;
    fake_reset();
    fake_lists(json_pack(
        "[o, o, o, o, o]", bound_pod("ad-own", 2, "n-a100-0", "0,1"),
        bound_pod("ad-other", 1, "n-a100-1", NULL), waiting_pod("ad-wait", 1, "Unschedulable"),
        waiting_pod("ad-wait-cpu", 0, "Unschedulable"), waiting_pod("ad-new-pod", 1, NULL)));
    char extra[256];
    snprintf(extra, sizeof(extra),
             "kubernetes:\n  apiServer: http://127.0.0.1:%d/\n  tokenFile: %s\n"
             "  timeoutSeconds: 30\n  syncSeconds: 1\n",
             f.port, token_path);
    return h_setup(&d, extra) || h_start(&d) ? -1 : 0;
}

/* GET /v1/pods/team-a/@name (200 expected): its node and cards ("0,1") into @node, @cards. */
static void pod_cards(const char *name, char node[64], char cards[64])
{
    char path[320];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    h_expect(&d, "GET", path, TOKEN_ADMIN, NULL, 200, &a);
    snprintf(node, 64, "%s", json_string_value(json_object_get(a.json, "node")));
    json_t *ann = json_object_get(a.json, "annotations");
    snprintf(cards, 64, "%s", json_string_value(json_object_get(ann, "gpusched.io/gpu-index")));
    h_answer_free(&a);
}

/* The daemon's /metrics holds @want. */
static void scrape_has(const char *want)
{
    struct answer a;
    h_expect(&d, "GET", "/metrics", TOKEN_ADMIN, NULL, 200, &a);
    if (!strstr(a.body, want))
        fail_msg("the scrape lacks: %s", want);
    h_answer_free(&a);
}

/*
 * Started on an empty store while Kubernetes runs a pod gpuschedd bound (its annotations name
 * the cards): the pod is adopted, running on those very cards, and a pod filtered afterwards is
 * not given them. A pod with a card but none of gpuschedd's annotations (another scheduler's)
 * is left alone.
 */
static void test_adopts_bound_pods(void **state)
{
    (void)state;
    char node[64], cards[64];
    assert_int_equal(
        log_count_reaches("msg=\"pod adopted from the API server\" pod=team-a/ad-own", 1), 1);
    assert_int_equal(pod_status_becomes("ad-own", 200), 200);
    pod_cards("ad-own", node, cards);
    assert_string_equal(node, "n-a100-0");
    assert_string_equal(cards, "0,1");
    /* 6 cards are left there: 7 do not fit, 6 do, and not on cards 0 or 1 */
    json_t *r = filter("ad-seven", 7, json_pack("[s]", "n-a100-0"));
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    json_decref(r);
    seat_ok("ad-new", 6, "n-a100-0");
    pod_cards("ad-new", node, cards);
    assert_string_equal(cards, "2,3,4,5,6,7");
    scrape_has("gpusched_pods_adopted_total 1");
    /* the other scheduler's pod: not taken in, nothing said of it */
    assert_int_equal(held("ad-other"), 0);
    assert_int_equal(log_count("ad-other"), 0);
    scrape_has("gpusched_pods_adoption_refused_total 0\n");
    /* the GPU pod kube-scheduler found no node for while gpuschedd was away is tried again now,
     * not a minute later; the others are left alone */
    assert_int_equal(fake_got("PATCH", "/api/v1/namespaces/team-a/pods/ad-wait"), 1);
    assert_int_equal(fake_got("PATCH", "/api/v1/namespaces/team-a/pods/ad-wait-cpu"), 0);
    assert_int_equal(fake_got("PATCH", "/api/v1/namespaces/team-a/pods/ad-new-pod"), 0);
    assert_true(h_log_has(&d, "nudged\" pods=1"));
}

/* Wait for the warning that pod team-a/@name is not adopted, saying @why. */
static void refused_saying(const char *name, const char *why)
{
    char want[128];
    snprintf(want, sizeof(want),
             "msg=\"bound pod not adopted: its cards stay free for gpusched\" "
             "pod=team-a/%s",
             name);
    for (int i = 0; i < 300 && !log_count(why); i++)
        usleep(100000);
    assert_true(log_count(want) > 0);
    if (!log_count(why))
        fail_msg("no log line says: %s", why);
    assert_int_equal(held(name), 0);
}

/*
 * Pods whose annotations name cards that are not free for them — a card another pod holds, a
 * card the node lacks — or that are malformed are not adopted: each is named in the log with the
 * annotation and why, and counted; what gpuschedd holds stays as it was.
 */
static void test_adoption_refused(void **state)
{
    (void)state;
    char node[64], cards[64];
    /* whole cards said to be half ones: not what gpuschedd bound (it was adopted as whole) */
    json_t *half = bound_pod("ad-half", 1, "n-t4-0", "0");
    json_object_set_new(json_object_get(json_object_get(half, "metadata"), "annotations"),
                        "gpusched.io/gpu-milli", json_string("500"));
    fake_lists(json_pack("[o, o, o, o, o, o]", bound_pod("ad-own", 2, "n-a100-0", "0,1"),
                         bound_pod("ad-new", 6, "n-a100-0", "2,3,4,5,6,7"),
                         bound_pod("ad-clash", 1, "n-a100-0", "1"),
                         bound_pod("ad-nocard", 1, "n-t4-0", "7"),
                         bound_pod("ad-bad", 1, "n-t4-0", "x"), half));
    refused_saying("ad-clash", "gpusched.io/gpu-index: a card on n-a100-0 is held by pod team-a/");
    refused_saying("ad-nocard", "gpusched.io/gpu-index: node n-t4-0 has no card 7 (it has 4)");
    refused_saying("ad-bad", "annotation gpusched.io/gpu-index is missing or malformed");
    refused_saying("ad-half", "annotations gpusched.io/gpu-milli 500, gpusched.io/mig-profile "
                              "none: the pod asks 1000 milli-GPU a card");
    pod_cards("ad-own", node, cards);
    assert_string_equal(cards, "0,1");
    pod_cards("ad-new", node, cards);
    assert_string_equal(cards, "2,3,4,5,6,7");
    scrape_has("gpusched_pods_adopted_total 1\n");
    /* lists every second: each refusal said and counted once, not at every list */
    sleep(3);
    assert_int_equal(log_count("pod=team-a/ad-clash"), 1);
    scrape_has("gpusched_pods_adoption_refused_total 4\n");
    /* the T4 box's cards stay free: a pod of all four fits there */
    seat_ok("ad-t4", 4, "n-t4-0");
}

/* A Volcano PodGroup object as the API server gives one: @ns/@name, minMember @min, @more
 * (further spec fields, "" none), with what the API server and Volcano's controller write. */
#define KGROUP(ns, name, min, more)                                                                \
    "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\",\"metadata\":{"       \
    "\"namespace\":\"" ns "\",\"name\":\"" name "\",\"uid\":\"uid-" name "\","                     \
    "\"resourceVersion\":\"5\",\"generation\":1,\"creationTimestamp\":\"2026-01-01T00:00:00Z\","   \
    "\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\","            \
    "\"name\":\"" name "\",\"uid\":\"j-" name "\",\"controller\":true}]},"                         \
    "\"spec\":{\"minMember\":" #min more "},\"status\":{\"phase\":\"Pending\"}}"

/* The fake's PodGroup list from now on: resourceVersion 7, its items @fmt (printf, the text
 * between the brackets). */
static void groups_listed(const char *fmt, ...)
{
    char items[sizeof(f.groups) - 80]; /* room for the list around them */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(items, sizeof(items), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&f.mu);
    snprintf(f.groups, sizeof(f.groups),
             "{\"kind\":\"PodGroupList\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[%s]}",
             items);
    pthread_mutex_unlock(&f.mu);
}

/* Hand @events (PodGroup watch lines) to the next PodGroup watch. */
static void group_watch_sends(const char *events)
{
    pthread_mutex_lock(&f.mu);
    snprintf(f.group_watch, sizeof(f.group_watch), "%s", events);
    pthread_mutex_unlock(&f.mu);
}

/* Poll GET /v1/podgroups/team-a/@name until it answers @status (30 s at most): the last one. */
static long group_status_becomes(const char *name, long status)
{
    char path[320];
    long got = 0;
    snprintf(path, sizeof(path), "/v1/podgroups/team-a/%s", name);
    for (int i = 0; i < 300 && got != status; i++) {
        struct answer a;
        if (i)
            usleep(100000);
        assert_int_equal(h_call(&d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
        got = a.status;
        h_answer_free(&a);
    }
    return got;
}

/* Filter gang member team-a/@name of PodGroup @group (8 cards) on both A100 boards: the nodes
 * passed; @why, the reason n-a100-1 failed ("" none), 256 bytes. */
static size_t member_filter(const char *group, const char *name, char *why)
{
    group_of_pods = group;
    json_t *r = filter(name, 8, json_pack("[s, s]", "n-a100-0", "n-a100-1"));
    group_of_pods = NULL;
    const char *err = json_string_value(json_object_get(r, "Error"));
    const char *fn =
        json_string_value(json_object_get(json_object_get(r, "FailedNodes"), "n-a100-1"));
    snprintf(why, 256, "%s%s", err ? err : "", fn ? fn : "");
    size_t n = json_array_size(json_object_get(r, "NodeNames"));
    json_decref(r);
    return n;
}

/* Bind team-a/@name to @node, expecting success. */
static void bind_ok(const char *name, const char *node)
{
    char *err = bind_only(name, node);
    assert_string_equal(err, "");
    free(err);
}

/* Pod team-a/@name, placed by gpuschedd's scheduler: the node its nudge (the PATCH of
 * gpusched.io/nominated-node) names into @node (64 bytes), once it came. */
static void nudged_to(const char *name, char *node)
{
    char path[96];
    snprintf(path, sizeof(path), "/api/v1/namespaces/team-a/pods/%s", name);
    for (int k = 0; k < 300 && !fake_got("PATCH", path); k++)
        usleep(50000);
    if (fake_got("PATCH", path) != 1)
        fail_msg("%s nudged %d times", name, fake_got("PATCH", path));
    json_t *b = fake_body("PATCH", path);
    const char *n = json_string_value(
        json_object_get(json_object_get(json_object_get(b, "metadata"), "annotations"),
                        "gpusched.io/nominated-node"));
    assert_non_null(n);
    snprintf(node, 64, "%s", n);
    json_decref(b);
}

/* Member team-a/@name of @group, held by gpuschedd's scheduler (nominated): once the PATCH
 * nudging it comes, filter passes its node alone, where it binds; that node into @node (64
 * bytes). */
static void nudged_then_bound(const char *group, const char *name, char *node)
{
    char why[256];
    nudged_to(name, node);
    assert_int_equal(member_filter(group, name, why), 1);
    bind_ok(name, node);
}

/*
 * PodGroups of the API server (Volcano's CRD) are gangs with no POST /v1/podgroups: one listed
 * is known to filter and placed all or nothing; one refused (a field gpuschedd does not apply)
 * is logged once, naming it and the field, and the others are taken; a watch adds, fixes and
 * deletes them; one deleted while its members run stays until they are gone.
 */
static long group_min(const char *name);

static void test_podgroups_followed(void **state)
{
    (void)state;
    char section[512], why[256];
    fake_reset();
    groups_listed("%s,%s,%s,%s", KGROUP("team-a", "kg3", 3, ""), KGROUP("team-a", "kg2", 2, ""),
                  KGROUP("team-a", "kt", 1, ",\"minTaskMember\":{\"worker\":3}"),
                  KGROUP("team-a", "kbad", 1, ",\"networkTopology\":{\"mode\":\"hard\"}"));
    follow_pods(section, sizeof(section), 5, 300);
    assert_int_equal(group_status_becomes("kg3", 200), 200);
    assert_int_equal(group_status_becomes("kg2", 200), 200);
    assert_int_equal(group_status_becomes("kbad", 404), 404);
    assert_int_equal(log_count_reaches("PodGroup of the API server refused", 1), 1);
    assert_int_equal(log_count("spec.networkTopology"), 1);
    assert_int_equal(log_count("team-a/kbad"), 1);
    /* three members of 8 cards cannot all fit two boards: none is passed a node */
    assert_int_equal(member_filter("kg3", "kg3-0", why), 0);
    if (!strstr(why, "gang kg3"))
        fail_msg("filter of a member of kg3: %s", why);
    /* minMember 1, but its task's minimum is three of them: filter probed for one */
    assert_int_equal(member_filter("kt", "kt-0", why), 0);
    if (!strstr(why, "gang kt: 3 members"))
        fail_msg("filter of a member of kt: %s", why);
    /* two can, but bound one by one another pod could take the second's room between the two
     * binds: each is held (nominated) until both are, then placed at once and nudged, and
     * filter passes each its own node alone */
    assert_int_equal(member_filter("kg2", "kg2-0", why), 0);
    if (!strstr(why, "gang kg2: its members bind together"))
        fail_msg("filter of a member of kg2: %s", why);
    assert_int_equal(member_filter("kg2", "kg2-1", why), 0);
    char node[2][64];
    nudged_then_bound("kg2", "kg2-0", node[0]);
    nudged_then_bound("kg2", "kg2-1", node[1]);
    assert_string_not_equal(node[0], node[1]);
    /* edited in the API server (a Job scaled): its minMember changes in place; its queue is not
     * moved under its members, refused naming the field */
    group_watch_sends("{\"type\":\"MODIFIED\",\"object\":" KGROUP("team-a", "kg3", 2, "") "}\n");
    assert_int_equal(log_count_reaches("podgroup changed in the API server: applied", 1), 1);
    assert_int_equal(group_min("kg3"), 2);
    group_watch_sends("{\"type\":\"MODIFIED\",\"object\":" KGROUP("team-a", "kg3", 4,
                                                                  ",\"queue\":\"q-other\"") "}\n");
    assert_int_equal(log_count_reaches("spec.queue changed from", 1), 1);
    assert_int_equal(group_min("kg3"), 2);
    /* a watch: one added, the refused one fixed, a status change of it alone not tried again */
    group_watch_sends("{\"type\":\"MODIFIED\",\"object\":" KGROUP(
        "team-a", "kbad", 1,
        ",\"networkTopology\":{\"mode\":\"hard\"}") "}\n"
                                                    "{\"type\":\"ADDED\",\"object\":" KGROUP(
                                                        "team-a", "kw", 1, "") "}\n");
    assert_int_equal(group_status_becomes("kw", 200), 200);
    assert_int_equal(log_count("PodGroup of the API server refused"), 2); /* kbad's, kg3's queue */
    group_watch_sends("{\"type\":\"MODIFIED\",\"object\":" KGROUP(
        "team-a", "kbad", 1, "") "}\n"
                                 "{\"type\":\"DELETED\",\"object\":" KGROUP(
                                     "team-a", "kw", 1,
                                     "") "}\n"
                                         "{\"type\":\"DELETED\",\"object\":" KGROUP("team-a", "kg2",
                                                                                    2, "") "}\n");
    assert_int_equal(group_status_becomes("kbad", 200), 200);
    assert_int_equal(group_status_becomes("kw", 404), 404);
    assert_true(log_count_reaches("kept while pods name it", 1) >= 1);
    assert_int_equal(group_status_becomes("kg2", 200), 200); /* its two members run */
    /* its members gone in Kubernetes, it goes with them: no PodGroup event comes */
    watch_sends("{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"namespace\":\"team-a\","
                "\"name\":\"kg2-0\",\"uid\":\"uid-kg2-0\",\"resourceVersion\":\"50\"}}}\n"
                "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"namespace\":\"team-a\","
                "\"name\":\"kg2-1\",\"uid\":\"uid-kg2-1\",\"resourceVersion\":\"51\"}}}\n");
    assert_int_equal(group_status_becomes("kg2", 404), 404);
    /* deleted in the API server while gpuschedd was down: the store says the API server held
     * it, and the first list after the restart, which lacks it, deletes it */
    h_kill(&d);
    groups_listed("%s", KGROUP("team-a", "kg3", 2, ""));
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(group_status_becomes("kbad", 404), 404);
    assert_int_equal(group_status_becomes("kg3", 200), 200);
    *strstr(section, "  syncSeconds: 300") = '\0';
    strcat(section, "  syncSeconds: 0\n");
    reload_kubernetes(section);
}

/* GET /v1/podgroups/team-a/@name's minMember. */
static long group_min(const char *name)
{
    char path[320];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/podgroups/team-a/%s", name);
    h_expect(&d, "GET", path, TOKEN_ADMIN, NULL, 200, &a);
    long n = (long)json_integer_value(json_object_get(a.json, "minMember"));
    h_answer_free(&a);
    return n;
}

/*
 * A name both posted and in the API server is one PodGroup: the same spec is that one, followed
 * from then on (deleted there, deleted here); another spec leaves the posted one in force, the
 * API server's refused as a second POST is (409 on metadata.name, logged), and deleting the API
 * server's does not delete the posted one.
 */
static void test_podgroups_posted_first(void **state)
{
    (void)state;
    char section[512];
    fake_reset();
    h_request(
        &d, "POST", "/v1/podgroups", TOKEN_A,
        "{\"metadata\":{\"name\":\"kp\",\"namespace\":\"team-a\"},\"spec\":{\"minMember\":1}}",
        201);
    h_request(
        &d, "POST", "/v1/podgroups", TOKEN_A,
        "{\"metadata\":{\"name\":\"ks\",\"namespace\":\"team-a\"},\"spec\":{\"minMember\":1}}",
        201);
    int before = log_count("PodGroup of the API server refused");
    groups_listed("%s,%s", KGROUP("team-a", "kp", 2, ""), KGROUP("team-a", "ks", 1, ""));
    follow_pods(section, sizeof(section), 5, 300);
    assert_int_equal(log_count_reaches("PodGroup of the API server refused", before + 1),
                     before + 1);
    assert_true(log_count("a PodGroup team-a/kp with another spec is held") >= 1);
    assert_int_equal(group_min("kp"), 1);
    sleep(3); /* the last test's PodGroup watch, 2 s at most here, must not take the events */
    /* the one posted deleted: the API server's is taken at its next event (a refusal for the
     * state it met was remembered as final, and it never came) */
    h_request(&d, "DELETE", "/v1/podgroups/team-a/kp", TOKEN_A, NULL, 200);
    group_watch_sends("{\"type\":\"MODIFIED\",\"object\":" KGROUP("team-a", "kp", 2, "") "}\n");
    assert_int_equal(group_status_becomes("kp", 200), 200);
    assert_int_equal(group_min("kp"), 2);
    assert_int_equal(log_count("PodGroup of the API server refused"), before + 1);
    group_watch_sends("{\"type\":\"DELETED\",\"object\":" KGROUP(
        "team-a", "ks", 1, "") "}\n"
                               "{\"type\":\"DELETED\",\"object\":" KGROUP("team-a", "kp", 2,
                                                                          "") "}\n");
    assert_int_equal(group_status_becomes("ks", 404), 404);
    assert_int_equal(group_status_becomes("kp", 404), 404);
    *strstr(section, "  syncSeconds: 300") = '\0';
    strcat(section, "  syncSeconds: 0\n");
    reload_kubernetes(section);
}

/*
 * What is no PodGroup list or event is refused whole and said, never skipped: a list with an
 * item that names none leaves the PodGroups as they were until a good one comes; a watch event
 * of a type Kubernetes has not, or whose object names none, ends the stream, and the next is
 * taken.
 */
static void test_podgroups_junk(void **state)
{
    (void)state;
    char section[512];
    fake_reset();
    int before = log_count("list of PodGroups: items[1] lacks metadata.namespace");
    groups_listed("%s,{\"metadata\":{\"name\":\"kj0\"},\"spec\":{\"minMember\":1}}",
                  KGROUP("team-a", "kj1", 1, ""));
    follow_pods(section, sizeof(section), 5, 300);
    assert_int_equal(
        log_count_reaches("list of PodGroups: items[1] lacks metadata.namespace", before + 1),
        before + 1);
    assert_int_equal(group_status_becomes("kj1", 404), 404);
    groups_listed("%s", KGROUP("team-a", "kj1", 1, ""));
    assert_int_equal(group_status_becomes("kj1", 200), 200);
    group_watch_sends("{\"type\":\"UPSERTED\",\"object\":" KGROUP("team-a", "kj2", 1, "") "}\n");
    assert_true(log_count_reaches("UPSERTED\\\", none Kubernetes has", 1) >= 1);
    group_watch_sends("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"namespace\":"
                      "\"team-a\"},\"spec\":{\"minMember\":1}}}\n");
    assert_true(log_count_reaches("ADDED event's object lacks metadata.name", 1) >= 1);
    group_watch_sends("{\"type\":\"ADDED\",\"object\":" KGROUP("team-a", "kj3", 1, "") "}\n");
    assert_int_equal(group_status_becomes("kj3", 200), 200);
    assert_int_equal(group_status_becomes("kj2", 404), 404);
    *strstr(section, "  syncSeconds: 300") = '\0';
    strcat(section, "  syncSeconds: 0\n");
    reload_kubernetes(section);
}

/* The watch says pod team-a/@name (uid "uid-@name") was deleted, at resourceVersion @rv; the
 * daemon has let it go. */
static void deleted_in_kube(const char *name, int rv)
{
    char ev[320];
    snprintf(ev, sizeof(ev),
             "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"namespace\":\"team-a\","
             "\"name\":\"%s\",\"uid\":\"uid-%s\",\"resourceVersion\":\"%d\"}}}\n",
             name, name, rv);
    watch_sends(ev);
    assert_int_equal(pod_status_becomes(name, 404), 404);
}

/* Pod team-a/@name is nudged a second time (its first nudge came before): 15 s at most. */
static void nudged_again(const char *name)
{
    char path[96];
    snprintf(path, sizeof(path), "/api/v1/namespaces/team-a/pods/%s", name);
    for (int k = 0; k < 300 && fake_got("PATCH", path) < 2; k++)
        usleep(50000);
    assert_int_equal(fake_got("PATCH", path), 2);
}

/* PodGroup team-a/@group (minMember 2) made in the API server, its members @group-0 and -1
 * placed and nudged (their nodes into @node, two of 64 bytes), then @group-1 deleted before it
 * bound (resourceVersion @rv): @group-0 is held short of its gang, and says so. */
/* @pod of gang @group is allocated (its cards held, not bound), its reason holding @why; its
 * PodGroup counts it allocated, not running, and so stays Pending. */
static void allocated(const char *group, const char *pod, const char *why)
{
    json_t *p = h_pod_get(&d, "team-a", pod), *g;
    const char *reason = json_string_value(json_object_get(p, "reason"));
    assert_string_equal(json_string_value(json_object_get(p, "state")), "allocated");
    if (!reason || !strstr(reason, why))
        fail_msg("%s: reason %s", pod, reason ? reason : "null");
    assert_non_null(json_string_value(json_object_get(p, "node")));
    json_decref(p);
    char path[128];
    snprintf(path, sizeof(path), "/v1/podgroups/team-a/%s", group);
    struct answer a;
    assert_int_equal(h_call(&d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    g = json_loads(a.body, 0, NULL);
    h_answer_free(&a);
    assert_string_equal(json_string_value(json_object_get(g, "phase")), "Pending");
    assert_int_equal(json_integer_value(json_object_get(g, "running")), 0);
    assert_true(json_integer_value(json_object_get(g, "allocated")) >= 1);
    json_decref(g);
}

static void gang_left_short(const char *group, char node[][64], int rv, char *why)
{
    char ev[512], m0[16], m1[16];
    snprintf(ev, sizeof(ev), "{\"type\":\"ADDED\",\"object\":" KGROUP("team-a", "%s", 2, "") "}\n",
             group, group, group, group);
    group_watch_sends(ev);
    assert_int_equal(group_status_becomes(group, 200), 200);
    snprintf(m0, sizeof(m0), "%s-0", group);
    snprintf(m1, sizeof(m1), "%s-1", group);
    assert_int_equal(member_filter(group, m0, why), 0);
    assert_int_equal(member_filter(group, m1, why), 0);
    nudged_to(m0, node[0]);
    nudged_to(m1, node[1]);
    allocated(group, m0, "its cards are held until kube-scheduler binds it");
    deleted_in_kube(m1, rv);
    assert_int_equal(member_filter(group, m0, why), 0);
    if (!strstr(why, "its gang lost a member that was deleted before it bound"))
        fail_msg("filter of %s: %s", m0, why);
    allocated(group, m0, "its gang waits for a member to replace one deleted");
}

/* A pod whose gang key is misspelt fails filter on every node, naming the key meant: taken,
 * it would run alone, outside its gang. */
static void test_misspelt_gang_key(void **state)
{
    (void)state;
    json_t *pod = kube_pod(h_pod("team-a", "typo", 1, 0), "team-a", "typo");
    h_annotate(pod, "scheduling.k8s.io/group-nam", "g1");
    json_t *r = h_verb(
        &d, "filter", json_pack("{s:o, s:n, s:[s]}", "Pod", pod, "Nodes", "NodeNames", "n-a100-0"));
    assert_non_null(r);
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    char *text = json_dumps(r, 0);
    if (!strstr(text, "did you mean \\\"scheduling.k8s.io/group-name\\\"?"))
        fail_msg("no hint of the key meant: %s", text);
    free(text);
    json_decref(r);
}

/*
 * A member filtered before its PodGroup is made (pods and PodGroup come in any order) is held
 * in gpuschedd's scheduler, not failed as undefined: once the PodGroup comes, it is placed and
 * nudged, with no wait for kube-scheduler to try it again. A member of a PodGroup gpuschedd
 * refused says so. A gang placed whole binds whole: one member deleted before it bound, the others
 * wait for another.
 */
static void test_podgroups_member_first(void **state)
{
    (void)state;
    char section[512], why[256];
    fake_reset();
    groups_listed("%s", "");
    follow_pods(section, sizeof(section), 5, 300);
    assert_true(fake_count(&f.group_lists, 1) >= 1);
    sleep(3); /* the last test's PodGroup watch, 2 s at most here, must not take the events */
    group_watch_sends("{\"type\":\"ADDED\",\"object\":" KGROUP(
        "team-a", "kr", 1, ",\"networkTopology\":{\"mode\":\"hard\"}") "}\n");
    assert_true(log_count_reaches("team-a/kr", 1) >= 1);
    assert_int_equal(member_filter("kr", "kr-0", why), 0);
    if (!strstr(why, "PodGroup team-a/kr was refused by gpuschedd"))
        fail_msg("filter of kr-0: %s", why);
    /* two members before their PodGroup: neither passes (the first made its name known to the
     * scheduler, the second is no member of a PodGroup made) */
    for (int i = 0; i < 2; i++) {
        char name[8];
        snprintf(name, sizeof(name), "kf-%d", i);
        assert_int_equal(member_filter("kf", name, why), 0);
        if (!strstr(why, "PodGroup team-a/kf does not exist yet"))
            fail_msg("filter of %s: %s", name, why);
    }
    usleep(500000);
    assert_int_equal(fake_got("PATCH", "/api/v1/namespaces/team-a/pods/kf-0"), 0); /* held */
    assert_true(log_count("pod nominated: gpusched's scheduler holds this gang member") >= 2);
    group_watch_sends("{\"type\":\"ADDED\",\"object\":" KGROUP("team-a", "kf", 2, "") "}\n");
    char node[3][64];
    nudged_then_bound("kf", "kf-0", node[0]);
    nudged_then_bound("kf", "kf-1", node[1]);
    watch_sends("{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"namespace\":\"team-a\","
                "\"name\":\"kf-0\",\"uid\":\"uid-kf-0\",\"resourceVersion\":\"60\"}}}\n"
                "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"namespace\":\"team-a\","
                "\"name\":\"kf-1\",\"uid\":\"uid-kf-1\",\"resourceVersion\":\"61\"}}}\n");
    assert_int_equal(pod_status_becomes("kf-1", 404), 404);
    /* a held member deleted before it bound (its nudge finds it gone): its mate keeps its place
     * but does not bind short of minMember; a new member completes the gang */
    pthread_mutex_lock(&f.mu);
    snprintf(f.gone, sizeof(f.gone), "kd-1");
    pthread_mutex_unlock(&f.mu);
    int before = log_count("nominated pod gone from the API server");
    group_watch_sends("{\"type\":\"ADDED\",\"object\":" KGROUP("team-a", "kd", 2, "") "}\n");
    assert_int_equal(group_status_becomes("kd", 200), 200);
    assert_int_equal(member_filter("kd", "kd-0", why), 0);
    assert_int_equal(member_filter("kd", "kd-1", why), 0);
    nudged_to("kd-0", node[0]);
    json_t *first = fake_body("PATCH", "/api/v1/namespaces/team-a/pods/kd-0");
    assert_int_equal(log_count_reaches("nominated pod gone from the API server", before + 1),
                     before + 1);
    assert_int_equal(member_filter("kd", "kd-0", why), 0);
    if (!strstr(why, "its gang lost a member that was deleted before it bound"))
        fail_msg("filter of kd-0: %s", why);
    snprintf(node[2], sizeof(node[2]), "%s", strcmp(node[0], "n-a100-0") ? "n-a100-0" : "n-a100-1");
    assert_int_equal(member_filter("kd", "kd-2", why), 1);
    bind_ok("kd-2", node[2]);
    /* whole again: kd-0, refused meanwhile, is nudged again at once */
    const char *kd0 = "/api/v1/namespaces/team-a/pods/kd-0";
    nudged_again("kd-0");
    /* the same node named again: the time makes it a change, which kube-scheduler hears of (a
     * patch that changes nothing writes nothing) */
    json_t *again = fake_body("PATCH", kd0);
    const char *at[2];
    for (int i = 0; i < 2; i++) {
        const json_t *ann =
            json_object_get(json_object_get(i ? again : first, "metadata"), "annotations");
        assert_string_equal(json_string_value(json_object_get(ann, "gpusched.io/nominated-node")),
                            node[0]);
        at[i] = json_string_value(json_object_get(ann, "gpusched.io/nudged-at"));
        assert_non_null(at[i]);
        assert_int_equal(strlen(at[i]), strlen("2026-12-07T15:50:00.123456Z"));
    }
    assert_string_not_equal(at[0], at[1]);
    json_decref(first);
    json_decref(again);
    assert_int_equal(member_filter("kd", "kd-0", why), 1);
    bind_ok("kd-0", node[0]);
    /* a held member deleted in the API server before kube-scheduler bound it: the watch (of
     * every pod, not only the bound ones) says so at once, with no nudge to find it gone */
    watch_sends("{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"namespace\":\"team-a\","
                "\"name\":\"kd-0\",\"uid\":\"uid-kd-0\",\"resourceVersion\":\"62\"}}}\n"
                "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"namespace\":\"team-a\","
                "\"name\":\"kd-2\",\"uid\":\"uid-kd-2\",\"resourceVersion\":\"63\"}}}\n");
    assert_int_equal(pod_status_becomes("kd-2", 404), 404);
    before = log_count("pod deleted or finished in Kubernetes: cards released");
    gang_left_short("kh", node, 64, why);
    assert_true(log_count("pod deleted or finished in Kubernetes: cards released") > before);
    /* a new member while its mate is held, with no room now (another pod took the cards the
     * deleted one left): held by gpuschedd (nominated), and placed with its mate, both nudged,
     * as soon as room comes, not when kube-scheduler next tries it */
    json_decref(h_submit(&d, TOKEN_A, h_pod("team-a", "blocker", 8, 0), 201));
    int held = log_count("pod nominated: gpusched's scheduler holds this gang member");
    assert_int_equal(member_filter("kh", "kh-2", why), 0);
    assert_int_equal(
        log_count_reaches("pod nominated: gpusched's scheduler holds this gang member", held + 1),
        held + 1);
    struct answer a;
    h_expect(&d, "DELETE", "/v1/pods/team-a/blocker", TOKEN_A, NULL, 200, &a);
    h_answer_free(&a);
    nudged_again("kh-0");
    nudged_then_bound("kh", "kh-2", node[2]);
    assert_int_equal(member_filter("kh", "kh-0", why), 1);
    bind_ok("kh-0", node[0]);
    deleted_in_kube("kh-0", 65);
    deleted_in_kube("kh-2", 66);
    /* its PodGroup lowered to the members it has: whole, its held member is nudged again at
     * once, not when kube-scheduler next tries it */
    gang_left_short("km", node, 68, why);
    group_watch_sends("{\"type\":\"MODIFIED\",\"object\":" KGROUP("team-a", "km", 1, "") "}\n");
    nudged_again("km-0");
    assert_int_equal(member_filter("km", "km-0", why), 1);
    bind_ok("km-0", node[0]);
    json_t *km0 = h_pod_get(&d, "team-a", "km-0"); /* bound: running, no reason */
    assert_string_equal(json_string_value(json_object_get(km0, "state")), "running");
    assert_true(json_is_null(json_object_get(km0, "reason")));
    json_decref(km0);
    deleted_in_kube("km-0", 69);
    /* no new member comes within extender.shortGangHoldSeconds: the held mate's cards go back,
     * and it waits to be placed with the member that completes its gang */
    gang_left_short("kq", node, 67, why);
    before = log_count("pod requeued");
    char *end = section + strlen(section);
    snprintf(end, sizeof(section) - (size_t)(end - section), "%s",
             "extender:\n  shortGangHoldSeconds: 1\n");
    reload_kubernetes(section);
    assert_int_equal(log_count_reaches("pod requeued", before + 1), before + 1);
    assert_true(log_count("was not whole again within 1 s (extender.shortGangHoldSeconds)") >= 1);
    assert_int_equal(h_call(&d, "GET", "/v1/pods/team-a/kq-0", TOKEN_ADMIN, NULL, &a), 0);
    json_t *kq0 = json_loads(a.body, 0, NULL);
    h_answer_free(&a);
    assert_string_equal(json_string_value(json_object_get(kq0, "state")), "pending");
    json_decref(kq0);
    assert_int_equal(member_filter("kq", "kq-0", why), 0);
    if (!strstr(why, "gang kq: its members bind together"))
        fail_msg("filter of kq-0 let go: %s", why);
    assert_int_equal(member_filter("kq", "kq-2", why), 0); /* its gang is whole: both placed */
    nudged_again("kq-0");
    nudged_to("kq-2", node[2]);
    *strstr(section, "  syncSeconds: 300") = '\0';
    strcat(section, "  syncSeconds: 0\n");
    reload_kubernetes(section);
}

/* An API server without Volcano's CRD (404 on PodGroups): said once, the pods followed still,
 * nothing else; podGroups: false asks nothing. */
static void test_podgroups_not_served(void **state)
{
    (void)state;
    char section[512];
    fake_reset();
    int before = log_count("PodGroups not served by the API server");
    follow_pods(section, sizeof(section), 5, 300);
    assert_true(fake_count(&f.group_lists, 1) >= 1);
    assert_true(fake_count(&f.lists, 1) >= 1); /* the pods' */
    sleep(3);
    assert_int_equal(log_count("PodGroups not served by the API server"), before + 1);
    assert_int_equal(fake_count(&f.group_lists, 1), 1); /* not asked again at once */
    struct answer a;
    h_expect(&d, "GET", "/v1/status", TOKEN_ADMIN, NULL, 200, &a);
    h_answer_free(&a);
    *strstr(section, "  syncSeconds: 300") = '\0';
    strcat(section, "  syncSeconds: 300\n  podGroups: false\n");
    reload_kubernetes(section);
    pthread_mutex_lock(&f.mu);
    f.group_lists = 0;
    pthread_mutex_unlock(&f.mu);
    sleep(2);
    assert_int_equal(fake_count(&f.group_lists, 0), 0);
    *strstr(section, "  syncSeconds: 300") = '\0';
    strcat(section, "  syncSeconds: 0\n");
    reload_kubernetes(section);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bind_writes_annotations_then_binding),
        cmocka_unit_test(test_bind_checks_uid_first),
        cmocka_unit_test(test_bind_again_same_node),
        cmocka_unit_test(test_outcome_unknown_keeps_cards),
        cmocka_unit_test(test_slow_api_server_stalls_nothing),
        cmocka_unit_test(test_crash_before_binding),
        cmocka_unit_test(test_overlapping_binds),
        cmocka_unit_test(test_refused_500_frees_cards),
        cmocka_unit_test(test_refused_409_and_404),
        cmocka_unit_test(test_lost_answer_sent_again),
        cmocka_unit_test(test_api_server_down),
        cmocka_unit_test(test_sync_releases_gone_pods),
        cmocka_unit_test(test_watch_releases_at_once),
        cmocka_unit_test(test_inventory_from_nodes),
        cmocka_unit_test(test_nodes_relisted),
        cmocka_unit_test(test_unknown_product_said_once),
        cmocka_unit_test(test_node_taints_followed),
        cmocka_unit_test(test_node_replicas_bound),
        cmocka_unit_test(test_nodes_none_yet),
        cmocka_unit_test(test_https_after_reload),
    };
    /* a daemon of its own: every card free at the start */
    const struct CMUnitTest evictions[] = {
        cmocka_unit_test(test_reclaim_evicts_through_api),
    };
    const struct CMUnitTest grace[] = {
        cmocka_unit_test(test_negative_grace_is_one_second),
    };
    /* a daemon of its own, started on an empty store with pods already bound */
    const struct CMUnitTest adoption[] = {
        cmocka_unit_test(test_adopts_bound_pods),
        cmocka_unit_test(test_adoption_refused),
    };
    /* a daemon of its own: the gangs need both A100 boards free */
    const struct CMUnitTest podgroups[] = {
        cmocka_unit_test(test_podgroups_followed),
        cmocka_unit_test(test_podgroups_posted_first),
        cmocka_unit_test(test_podgroups_not_served),
        cmocka_unit_test(test_podgroups_junk),
        cmocka_unit_test(test_podgroups_member_first),
        cmocka_unit_test(test_misspelt_gang_key),
    };
    return cmocka_run_group_tests(tests, setup, teardown) +
           cmocka_run_group_tests(podgroups, setup, teardown) +
           cmocka_run_group_tests(evictions, setup_queues, teardown) +
           cmocka_run_group_tests(grace, setup_queues, teardown) +
           cmocka_run_group_tests(adoption, setup_adopt, teardown);
}
