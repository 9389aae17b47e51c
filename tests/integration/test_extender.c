/*
 * The scheduler extender verbs against the real daemon, with requests in kube-scheduler's wire
 * shapes (tests/data/extender): filter and prioritize with NodeNames (nodeCacheCapable) and with
 * a v1.NodeList, bind recording the cards and showing them as annotations (without `kubernetes:`
 * in the config: no API server; test_kube covers that), and the protocol's Error field for what
 * goes wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/api.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct daemon d;

static int setup(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN);
    return h_setup(&d, NULL) || h_start(&d) ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    int rc = h_stop(&d);
    h_cleanup(&d);
    return rc;
}

static json_t *load(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "tests/data/extender/%s", name);
    json_t *j = json_load_file(path, 0, NULL);
    assert_non_null(j);
    return j;
}

/* POST @args (consumed) to /extender/@v: the answer (200 expected). */
static json_t *verb(const char *v, json_t *args)
{
    json_t *j = h_verb(&d, v, args);
    assert_non_null(j);
    return j;
}

static int has_name(const json_t *arr, const char *name)
{
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (json_is_string(v) && !strcmp(json_string_value(v), name))
            return 1;
    }
    return 0;
}

static void test_filter_node_names(void **state)
{
    (void)state;
    json_t *r = verb("filter", load("filter_nodenames.json"));
    const json_t *names = json_object_get(r, "NodeNames");
    assert_true(json_is_array(names));
    assert_true(json_is_null(json_object_get(r, "Nodes")));
    assert_int_equal(json_array_size(names), 2);
    assert_true(has_name(names, "n-a100-0") && has_name(names, "n-a100-1"));
    const json_t *failed = json_object_get(r, "FailedNodes");
    /* the pod asks for the nvlink tier: a T4 box's cards have no NVLink between them */
    assert_non_null(strstr(json_string_value(json_object_get(failed, "n-t4-0")), "NVLink"));
    assert_non_null(json_string_value(json_object_get(failed, "n-cpu-0")));
    assert_non_null(json_string_value(
        json_object_get(json_object_get(r, "FailedAndUnresolvableNodes"), "n-unknown-9")));
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    json_decref(r);
}

/*
 * A pod with a PersistentVolumeClaim: kube-scheduler's VolumeBinding filtered the nodes for it
 * before asking, so the extender serves it as it serves the same pod without (the API refuses
 * it: nothing there has PersistentVolumes).
 */
static void test_claim_left_to_kube_scheduler(void **state)
{
    (void)state;
    json_t *args = load("filter_nodenames.json");
    json_object_set_new(json_object_get(json_object_get(args, "Pod"), "spec"), "volumes",
                        json_pack("[{s:s, s:{s:s}}]", "name", "data", "persistentVolumeClaim",
                                  "claimName", "data"));
    json_t *r = verb("filter", json_deep_copy(args));
    const json_t *names = json_object_get(r, "NodeNames");
    assert_int_equal(json_array_size(names), 2);
    assert_true(has_name(names, "n-a100-0") && has_name(names, "n-a100-1"));
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    json_decref(r);
    r = verb("prioritize", args);
    assert_true(json_is_array(r));
    assert_int_equal(json_array_size(r), 5);
    json_decref(r);
}

static void test_filter_node_list(void **state)
{
    (void)state;
    json_t *r = verb("filter", load("filter_nodelist.json"));
    const json_t *items = json_object_get(json_object_get(r, "Nodes"), "items");
    assert_true(json_is_null(json_object_get(r, "NodeNames")));
    assert_int_equal(json_array_size(items), 1);
    const json_t *first = json_array_get(items, 0);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(first, "metadata"), "name")), "n-a100-0");
    assert_non_null(json_object_get(first, "status")); /* the node object is passed back whole */
    assert_non_null(json_object_get(json_object_get(r, "FailedNodes"), "n-cpu-0"));
    assert_non_null(json_object_get(json_object_get(r, "FailedNodes"), "n-t4-0"));
    json_decref(r);
}

static void test_prioritize(void **state)
{
    (void)state;
    json_t *r = verb("prioritize", load("filter_nodenames.json"));
    assert_true(json_is_array(r));
    assert_int_equal(json_array_size(r), 5);
    size_t i;
    const json_t *hp;
    int top = 0;
    json_array_foreach(r, i, hp)
    {
        json_int_t s = json_integer_value(json_object_get(hp, "Score"));
        const char *host = json_string_value(json_object_get(hp, "Host"));
        assert_non_null(host);
        assert_true(s >= 0 && s <= 10);
        top += s == 10;
        if (!strcmp(host, "n-cpu-0") || !strcmp(host, "n-unknown-9"))
            assert_int_equal(s, 0);
    }
    assert_int_equal(top, 1); /* the engine's pick alone: kube-scheduler cannot pick another */
    json_decref(r);
    /* Go decodes keys without regard to case: so does the daemon. */
    json_t *args = load("filter_nodenames.json");
    json_t *lower = json_pack("{s:O, s:O}", "pod", json_object_get(args, "Pod"), "nodenames",
                              json_object_get(args, "NodeNames"));
    json_decref(args);
    r = verb("prioritize", lower);
    assert_int_equal(json_array_size(r), 5);
    json_decref(r);
}

/* The Score prioritize gave @host in @list, -1 when it is not there. */
static json_int_t score_of(const json_t *list, const char *host)
{
    size_t i;
    const json_t *hp;
    json_array_foreach(list, i, hp)
    {
        if (!strcmp(json_string_value(json_object_get(hp, "Host")), host))
            return json_integer_value(json_object_get(hp, "Score"));
    }
    return -1;
}

/* prioritize reuses what filter found about the same pod only while nothing changed: a pod placed
 * between the two takes its node out of prioritize's answer. */
static void test_prioritize_after_a_change(void **state)
{
    (void)state;
    const char *const boards[] = {"n-a100-0", "n-a100-1"};
    char *pod = h_pod("team-b", "whole-board", 8, 0);
    json_t *r = h_extender(&d, "filter", pod, boards, 2);
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 2);
    json_decref(r);
    json_decref(h_submit(&d, NULL, h_pod("team-b", "takes-a-board", 8, 0), 201));
    json_t *q = h_pod_get(&d, "team-b", "takes-a-board");
    const char *taken = json_string_value(json_object_get(q, "node"));
    assert_non_null(taken);
    r = h_extender(&d, "prioritize", pod, boards, 2);
    assert_int_equal(score_of(r, taken), 0);
    assert_int_equal(score_of(r, strcmp(taken, boards[0]) ? boards[0] : boards[1]), 10);
    json_decref(r);
    json_decref(q);
    h_request(&d, "DELETE", "/v1/pods/team-b/takes-a-board", TOKEN_ADMIN, NULL, 200);
    r = h_extender(&d, "prioritize", pod, boards, 2); /* and back once it is gone */
    assert_int_equal(score_of(r, boards[0]) + score_of(r, boards[1]), 19);
    json_decref(r);
    free(pod);
}

/* POST @body to /extender/@v; 200 expected; the answer's text (caller frees). */
static char *verb_text(const char *v, const char *body)
{
    char path[64];
    struct answer a;
    snprintf(path, sizeof(path), "/extender/%s", v);
    assert_int_equal(h_call(&d, "POST", path, TOKEN_ADMIN, body, &a), 0);
    assert_int_equal(a.status, 200);
    char *text = strdup(a.body);
    h_answer_free(&a);
    return text;
}

/*
 * The names kube-scheduler sends are read without a JSON tree; any other spelling of the same
 * request (escapes, spacing, a second read of the same names) must get the very same bytes.
 */
static void test_every_spelling_same_answer(void **state)
{
    (void)state;
    json_t *args = load("filter_nodenames.json");
    char *compact = json_dumps(args, JSON_COMPACT), *pretty = json_dumps(args, JSON_INDENT(3));
    char *escaped = json_dumps(args, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH);
    escaped = realloc(escaped, strlen(escaped) + 8);
    assert_non_null(escaped);
    char *e = strstr(escaped, "\"n-a100-0\"");
    assert_non_null(e);
    memmove(e + 12, e + 7, strlen(e + 7) + 1); /* "n-a100-0" -> "n-a10\u0030-0" */
    memcpy(e + 6, "\\u0030", 6);
    const char *verbs[] = {"filter", "prioritize"};
    for (int v = 0; v < 2; v++) {
        char *want = verb_text(verbs[v], compact);
        const char *bodies[] = {compact, pretty, escaped};
        for (int b = 0; b < 3; b++) {
            char *got = verb_text(verbs[v], bodies[b]);
            assert_string_equal(got, want);
            free(got);
        }
        free(want);
    }
    free(compact);
    free(pretty);
    free(escaped);
    json_decref(args);
}

static void test_bind_records_cards(void **state)
{
    (void)state;
    json_decref(verb("filter", load("filter_nodenames.json")));
    json_t *r = verb("bind", load("bind.json"));
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    json_decref(r);
    struct answer a;
    assert_int_equal(h_call(&d, "GET", "/v1/pods/team-a/train-0", TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    assert_string_equal(json_string_value(json_object_get(a.json, "node")), "n-a100-1");
    assert_string_equal(json_string_value(json_object_get(a.json, "source")), "extender");
    const json_t *ann = json_object_get(a.json, "annotations");
    const char *idx = json_string_value(json_object_get(ann, "gpusched.io/gpu-index"));
    assert_non_null(idx);
    assert_int_equal(strlen(idx), 7); /* four cards: "a,b,c,d" */
    assert_string_equal(json_string_value(json_object_get(a.json, "uid")),
                        "5b0d1c4e-8f0a-4a53-9d1e-2f8e6c1b7a10");
    h_answer_free(&a);
    r = verb("bind", load("bind.json")); /* again (a retry): bound, the cards not taken twice */
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    json_decref(r);
    json_t *elsewhere = load("bind.json"); /* but not on another node */
    json_object_set_new(elsewhere, "Node", json_string("n-a100-0"));
    r = verb("bind", elsewhere);
    assert_non_null(strstr(json_string_value(json_object_get(r, "Error")),
                           "already held by gpusched on node n-a100-1"));
    json_decref(r);
    /* The bound cards count: an 8-card pod no longer fits on n-a100-1. */
    json_t *args = load("filter_nodenames.json");
    json_t *pod = json_object_get(args, "Pod");
    json_object_set_new(json_object_get(pod, "metadata"), "name", json_string("big"));
    json_t *res = json_object_get(
        json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0),
        "resources");
    json_object_set_new(json_object_get(res, "limits"), "nvidia.com/gpu", json_string("8"));
    json_object_set_new(json_object_get(res, "requests"), "nvidia.com/gpu", json_string("8"));
    r = verb("filter", args);
    assert_false(has_name(json_object_get(r, "NodeNames"), "n-a100-1"));
    assert_true(has_name(json_object_get(r, "NodeNames"), "n-a100-0"));
    json_decref(r);
}

/* A pod of that name already submitted to the API: filter passes no node, saying why. */
static void test_api_pod_name_taken(void **state)
{
    (void)state;
    static const char *const nodes[] = {"n-a100-0", "n-a100-1"};
    struct answer a;
    char *pod = h_pod("team-a", "via-api", 1, 0);
    assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_A, pod, &a), 0);
    assert_int_equal(a.status, 201);
    h_answer_free(&a);
    json_t *r = h_extender(&d, "filter", pod, nodes, 2);
    free(pod);
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    assert_non_null(
        strstr(json_string_value(json_object_get(json_object_get(r, "FailedNodes"), "n-a100-0")),
               "submitted to gpusched's API"));
    json_decref(r);
    assert_int_equal(h_call(&d, "DELETE", "/v1/pods/team-a/via-api", TOKEN_A, NULL, &a), 0);
    h_answer_free(&a);
}

/*
 * A share without nvidia.com/gpu: kubelet would never call the device plugin for it, so the one
 * Pod parser refuses it on every path, naming the container and the fix.
 */
static void test_share_needs_gpu_resource(void **state)
{
    (void)state;
    static const char *const nodes[] = {"n-a100-0", "n-a100-1"};
    static const char pod[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"mem-only\","
        "\"namespace\":\"team-a\"},\"spec\":{\"containers\":[{\"name\":\"log\"},{\"name\":"
        "\"main\",\"resources\":{\"limits\":{\"nvidia.com/gpumem\":4096}}}]}}";
    json_t *r = h_extender(&d, "filter", pod, nodes, 2);
    const char *err = json_string_value(json_object_get(r, "Error"));
    assert_non_null(err);
    assert_non_null(strstr(err, "Pod.spec.containers[1].resources.limits"));
    assert_non_null(strstr(err, "add nvidia.com/gpu: 1"));
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    json_decref(r);
    json_t *bind = verb("bind", json_pack("{s:s, s:s, s:s}", "PodName", "mem-only", "PodNamespace",
                                          "team-a", "Node", "n-a100-0"));
    assert_non_null(json_string_value(json_object_get(bind, "Error"))); /* never seen */
    json_decref(bind);
    struct answer a;
    assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_A, pod, &a), 0);
    assert_int_equal(a.status, 400);
    assert_non_null(strstr(a.body, "add nvidia.com/gpu: 1"));
    h_answer_free(&a);
    /* A GPU resource gpusched does not read is an Error, as POST /v1/pods refuses it: the pod
     * was given a whole card without it. Another vendor's resource is kube-scheduler's to check. */
    static const char *const res[] = {"nvidia.com/gpumem-percentage", "nvidia.com/gpus",
                                      "volcano.sh/vgpu-number", "example.com/nic"};
    for (int i = 0; i < 4; i++) {
        char other[512];
        snprintf(other, sizeof(other),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"res-%d\","
                 "\"namespace\":\"team-a\"},\"spec\":{\"containers\":[{\"name\":\"main\","
                 "\"resources\":{\"limits\":{\"nvidia.com/gpu\":1,\"%s\":50}}}]}}",
                 i, res[i]);
        r = h_extender(&d, "filter", other, nodes, 2);
        err = json_string_value(json_object_get(r, "Error"));
        if (i < 3) {
            assert_non_null(strstr(err, res[i]));
            assert_non_null(strstr(err, "refused rather than ignored"));
            assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
        } else {
            assert_string_equal(err, "");
            assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 2);
        }
        json_decref(r);
    }
}

/* POST @args (consumed) to /extender/@v: a 400 whose field is @field and whose error names
 * @name is expected. */
static void expect_refused(const char *v, json_t *args, const char *field, const char *w1,
                           const char *w2)
{
    char path[64], *body = json_dumps(args, JSON_COMPACT);
    struct answer a;
    snprintf(path, sizeof(path), "/extender/%s", v);
    assert_int_equal(h_call(&d, "POST", path, TOKEN_ADMIN, body, &a), 0);
    assert_int_equal(a.status, 400);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), field);
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")), w1));
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")), w2));
    h_answer_free(&a);
    free(body);
    json_decref(args);
}

static void expect_named_twice(const char *v, json_t *args, const char *field, const char *name)
{
    expect_refused(v, args, field, name, "twice");
}

/* A node named twice would be scored twice, and kube-scheduler adds up the scores of a name:
 * filter and prioritize refuse it, with NodeNames (the fast reader and the tree) and a NodeList,
 * for a node of the inventory and one that is not. */
static void test_node_named_twice(void **state)
{
    (void)state;
    static const char *const verbs[] = {"filter", "prioritize"};
    char field[64];
    for (int k = 0; k < 2; k++) {
        json_t *args = load("filter_nodenames.json");
        json_t *names = json_object_get(args, "NodeNames");
        size_t n = json_array_size(names);
        json_array_append_new(names, json_string("n-a100-1"));
        snprintf(field, sizeof(field), "NodeNames[%zu]", n);
        expect_named_twice(verbs[k], json_deep_copy(args), field, "\"n-a100-1\"");
        json_object_set_new(args, "Nodes", json_object()); /* both: Nodes would go unread */
        expect_refused(verbs[k], json_deep_copy(args), "Nodes", "given with NodeNames", "unread");
        json_object_del(args, "Nodes");
        json_object_set(args, "nodeNames", names); /* Go's spelling too: not the fast reader's */
        json_object_del(args, "NodeNames");
        json_array_set_new(names, n, json_string("not-a-node"));
        json_array_append_new(names, json_string("not-a-node"));
        snprintf(field, sizeof(field), "NodeNames[%zu]", n + 1);
        expect_named_twice(verbs[k], args, field, "\"not-a-node\"");
        args = load("filter_nodelist.json");
        json_t *items = json_object_get(json_object_get(args, "Nodes"), "items");
        n = json_array_size(items);
        json_array_append(items, json_array_get(items, 0));
        snprintf(field, sizeof(field), "Nodes.items[%zu]", n);
        expect_named_twice(verbs[k], args, field, "twice");
    }
    /* one field under two spellings: Go keeps the last, gpuschedd took the first */
    json_t *args = load("filter_nodenames.json");
    json_object_set(args, "pod", json_object_get(args, "Pod"));
    char *body = json_dumps(args, JSON_COMPACT);
    struct answer a;
    assert_int_equal(h_call(&d, "POST", "/extender/filter", TOKEN_ADMIN, body, &a), 0);
    assert_int_equal(a.status, 400);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "Pod");
    h_answer_free(&a);
    free(body);
    json_decref(args);
    assert_int_equal(h_call(&d, "POST", "/extender/bind", TOKEN_ADMIN,
                            "{\"PodName\":\"a\",\"podname\":\"b\",\"PodNamespace\":\"team-a\","
                            "\"Node\":\"n-a100-0\"}",
                            &a),
                     0);
    assert_int_equal(a.status, 400);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "PodName");
    h_answer_free(&a);
}

/* filter of pod @name (in @ns, with UID @uid) with NodeNames or Nodes set to @nodes (consumed):
 * the answer, which must be @status; the pod is not nominated (nothing holds cards for it). */
static json_t *offer(const char *ns, const char *name, const char *uid, const char *key,
                     json_t *nodes, int status)
{
    json_t *args = load("filter_nodenames.json"), *meta;
    meta = json_object_get(json_object_get(args, "Pod"), "metadata");
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "namespace", json_string(ns));
    json_object_set_new(meta, "uid", json_string(uid));
    json_object_del(args, "NodeNames");
    if (key)
        json_object_set_new(args, key, nodes);
    char *body = json_dumps(args, JSON_COMPACT), path[160];
    struct answer a;
    assert_int_equal(h_call(&d, "POST", "/extender/filter", TOKEN_ADMIN, body, &a), 0);
    assert_int_equal(a.status, status);
    json_t *j = json_incref(a.json);
    h_answer_free(&a);
    free(body);
    json_decref(args);
    snprintf(path, sizeof(path), "/v1/pods/%s/%s", ns, name);
    h_request(&d, "GET", path, TOKEN_ADMIN, NULL, 404);
    return j;
}

/* What kube-scheduler never sends takes no card: nodes in another shape (once read as no node,
 * then nominated for want of one), no node or only nodes gpusched does not hold (its own filters
 * kept the pod off every GPU node), a namespace no tenant owns (its use could not be billed). */
static void test_no_nomination_without_offer(void **state)
{
    (void)state;
    static const char *const bad[][2] = {{"NodeNames", "\"n-a100-0\""},
                                         {"NodeNames", "{}"},
                                         {"NodeNames", "5"},
                                         {"Nodes", "\"x\""},
                                         {"Nodes", "{}"},
                                         {"Nodes", "{\"items\": {}}"},
                                         {"Nodes", "null"},
                                         {NULL, NULL}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *nodes = bad[i][0] ? json_loads(bad[i][1], JSON_DECODE_ANY, NULL) : NULL;
        json_t *j = offer("team-a", "malformed", "u-m", bad[i][0], nodes, 400);
        const char *want = bad[i][0] && !strcmp(bad[i][0], "Nodes") && strcmp(bad[i][1], "null")
                               ? "Nodes.items"
                               : "NodeNames";
        assert_string_equal(json_string_value(json_object_get(j, "field")), want);
        json_decref(j);
    }
    json_decref(offer("team-a", "none-offered", "u-n", "NodeNames", json_array(), 200));
    json_decref(offer("team-a", "unknown-only", "u-u", "NodeNames",
                      json_pack("[s, s]", "n-unknown-9", "n-unknown-8"), 200));
    json_t *j =
        offer("kube-system", "no-tenant", "u-k", "NodeNames", json_pack("[s]", "n-a100-0"), 200);
    const char *why =
        json_string_value(json_object_get(json_object_get(j, "FailedNodes"), "n-a100-0"));
    assert_non_null(why);
    assert_non_null(strstr(why, "kube-system belongs to no tenant"));
    json_decref(j);
    j = verb("bind", json_pack("{s:s, s:s, s:s, s:s}", "PodName", "no-tenant", "PodNamespace",
                               "kube-system", "PodUID", "u-k", "Node", "n-a100-0"));
    assert_non_null(strstr(json_string_value(json_object_get(j, "Error")), "belongs to no tenant"));
    json_decref(j);
    h_request(&d, "GET", "/v1/pods/kube-system/no-tenant", TOKEN_ADMIN, NULL, 404);
}

/* bind takes only the pod filter saw: another UID (a pod deleted and made again) is refused; a
 * bind that states none (kube-scheduler always does) is not checked, as a retry is not. */
static void test_bind_same_uid(void **state)
{
    (void)state;
    json_t *f = offer("team-a", "uid-check", "u-1", "NodeNames", json_pack("[s]", "n-a100-0"), 200);
    assert_true(has_name(json_object_get(f, "NodeNames"), "n-a100-0"));
    json_decref(f);
    static const char *const other[] = {"other", "u-10", ""}; /* "": none said */
    for (int k = 0; k < 3; k++) {
        json_t *r =
            verb("bind", json_pack("{s:s, s:s, s:s, s:s}", "PodName", "uid-check", "PodNamespace",
                                   "team-a", "PodUID", other[k], "Node", "n-a100-0"));
        assert_non_null(strstr(json_string_value(json_object_get(r, "Error")),
                               "is not the UID filter saw (u-1)"));
        json_decref(r);
        h_request(&d, "GET", "/v1/pods/team-a/uid-check", TOKEN_ADMIN, NULL, 404);
    }
    json_t *r =
        verb("bind", json_pack("{s:s, s:s, s:s, s:s}", "PodName", "uid-check", "PodNamespace",
                               "team-a", "PodUID", "u-1", "Node", "n-a100-0"));
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    json_decref(r);
    h_request(&d, "GET", "/v1/pods/team-a/uid-check", TOKEN_ADMIN, NULL, 200);
    h_request(&d, "DELETE", "/v1/pods/team-a/uid-check", TOKEN_ADMIN, NULL,
              200); /* its card back */
    /* a UID the node agent could not name a folder by: refused where it enters */
    f = offer("team-a", "odd-uid", "../../x", "NodeNames", json_pack("[s]", "n-a100-0"), 200);
    assert_non_null(strstr(json_string_value(json_object_get(f, "Error")), "metadata.uid"));
    json_decref(f);
    /* a PodName longer than any pod's is refused, not cut to the name of one filter saw */
    char name[254], longer[300], path[300];
    memset(name, 'k', 253);
    name[253] = '\0';
    snprintf(longer, sizeof(longer), "%s-and-more", name);
    json_decref(offer("team-a", name, "u-2", "NodeNames", json_pack("[s]", "n-a100-0"), 200));
    r = verb("bind", json_pack("{s:s, s:s, s:s, s:s}", "PodName", longer, "PodNamespace", "team-a",
                               "PodUID", "u-2", "Node", "n-a100-0"));
    assert_non_null(strstr(json_string_value(json_object_get(r, "Error")),
                           "PodNamespace is at most 63 bytes, PodName 253"));
    json_decref(r);
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    h_request(&d, "GET", path, TOKEN_ADMIN, NULL, 404);
    /* a bind to a node the pod does not fit (the T4 box has no NVLink for its nvlink tier) is
     * refused, and logged so: never as bound */
    json_decref(offer("team-a", "no-room", "u-3", "NodeNames", json_pack("[s]", "n-a100-0"), 200));
    r = verb("bind", json_pack("{s:s, s:s, s:s, s:s}", "PodName", "no-room", "PodNamespace",
                               "team-a", "PodUID", "u-3", "Node", "n-t4-0"));
    assert_true(json_string_length(json_object_get(r, "Error")) > 0);
    json_decref(r);
    assert_true(
        h_log_has(&d, "msg=\"bind refused: the pod does not fit the node\" pod=team-a/no-room"));
    assert_false(h_log_has(&d, "msg=\"pod bound\" pod=team-a/no-room"));
}

/* A malformed request (a bad Pod, a pod never filtered) in Error; a refusal per node. */
static void test_errors_in_error_field(void **state)
{
    (void)state;
    json_t *r =
        verb("bind", json_pack("{s:s, s:s, s:s, s:s}", "PodName", "never-seen", "PodNamespace",
                               "team-a", "PodUID", "x", "Node", "n-a100-0"));
    assert_non_null(strstr(json_string_value(json_object_get(r, "Error")), "not seen"));
    json_decref(r);
    json_t *args = load("filter_nodenames.json");
    json_object_set_new(json_object_get(json_object_get(args, "Pod"), "metadata"), "name",
                        json_integer(7));
    r = verb("filter", args);
    const char *said = json_string_value(json_object_get(r, "Error"));
    assert_int_equal(strncmp(said, "Pod.metadata.name", 17), 0);
    assert_null(strstr(said + 17, "metadata.name")); /* the field named once */
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    json_decref(r);
    /* No Pod, or a null one: Error names the field (it once said "out of memory"). */
    for (int k = 0; k < 2; k++) {
        args = load("filter_nodenames.json");
        if (k)
            json_object_set_new(args, "Pod", json_null());
        else
            json_object_del(args, "Pod");
        r = verb("filter", args);
        assert_string_equal(json_string_value(json_object_get(r, "Error")),
                            "Pod: required, a Pod object");
        json_decref(r);
    }
    /* A nameless node is an Error, and a request in error changes nothing: it nominated the
     * pod (as if kube-scheduler had found no node), which then held a card. */
    args = load("filter_nodenames.json");
    json_object_set_new(json_object_get(json_object_get(args, "Pod"), "metadata"), "name",
                        json_string("nameless-nodes"));
    json_object_set_new(args, "NodeNames", json_pack("[i]", 7));
    r = verb("filter", args);
    assert_string_equal(json_string_value(json_object_get(r, "Error")),
                        "NodeNames[0]: expected a node's name, a string");
    json_decref(r);
    h_request(&d, "GET", "/v1/pods/team-a/nameless-nodes", TOKEN_ADMIN, NULL, 404);
    /* a body that is no object (an array) is refused as null is, echoing nothing made up */
    h_request(&d, "POST", "/extender/filter", TOKEN_ADMIN, "[]", 400);
    h_request(&d, "POST", "/extender/prioritize", TOKEN_ADMIN, "[1]", 400);
    /* No node names at all: nothing fits, nothing fails (and nothing read out of bounds). */
    args = load("filter_nodenames.json");
    json_object_set_new(args, "NodeNames", json_array());
    r = verb("filter", args);
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    assert_int_equal(json_object_size(json_object_get(r, "FailedNodes")), 0);
    json_decref(r);
    /* A pod the engine refuses whole (a GPU model no node has) fails per node, not in Error:
     * kube-scheduler then says "0/N nodes are available" and retries when nodes change. */
    args = load("filter_nodenames.json");
    json_object_set_new(json_object_get(json_object_get(args, "Pod"), "metadata"), "annotations",
                        json_pack("{s:s}", "gpusched.io/gpu-model", "H100-SXM5-80GB"));
    r = verb("filter", args);
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    const char *why =
        json_string_value(json_object_get(json_object_get(r, "FailedNodes"), "n-a100-0"));
    assert_non_null(why);
    assert_non_null(strstr(why, "no node has GPUs of the models this pod allows"));
    json_decref(r);
    struct answer a;
    assert_int_equal(h_call(&d, "POST", "/extender/nosuch", TOKEN_ADMIN, "{}", &a), 0);
    assert_int_equal(a.status, 404);
    h_answer_free(&a);
}

/* Seat @name (uid @uid, @gpus cards or a @cores % share, priority @prio as an API server resolved
 * it from the pod's class) on @node through filter and bind. */
static void bind_share(const char *name, const char *uid, int gpus, int cores, int prio,
                       const char *node)
{
    char *text = h_pod("team-a", name, gpus, cores);
    json_t *pod = json_loads(text, 0, NULL);
    free(text);
    char cls[32]; /* a class of the API server's that gpusched's files do not hold */
    snprintf(cls, sizeof(cls), "prio-%d", prio);
    json_object_set_new(json_object_get(pod, "spec"), "priority", json_integer(prio));
    json_object_set_new(json_object_get(pod, "spec"), "priorityClassName", json_string(cls));
    json_object_set_new(json_object_get(pod, "metadata"), "uid", json_string(uid));
    json_decref(
        verb("filter", json_pack("{s:o, s:n, s:[s]}", "Pod", pod, "Nodes", "NodeNames", node)));
    json_t *r = verb("bind", json_pack("{s:s, s:s, s:s, s:s}", "PodName", name, "PodNamespace",
                                       "team-a", "PodUID", uid, "Node", node));
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    json_decref(r);
}

static void bind_pod(const char *name, const char *uid, int gpus, int prio, const char *node)
{
    bind_share(name, uid, gpus, 0, prio, node);
}

/* The UIDs of @node's victims in an ExtenderPreemptionResult, comma-joined; NULL: no node. */
static char *victims_of(const json_t *res, const char *node)
{
    const json_t *v = json_object_get(json_object_get(res, "NodeNameToMetaVictims"), node), *p;
    if (!v)
        return NULL;
    char *out = calloc(1, 1024);
    size_t i;
    json_array_foreach(json_object_get(v, "Pods"), i, p)
    {
        strcat(out, i ? "," : "");
        strncat(out, json_string_value(json_object_get(p, "UID")), 64);
    }
    return out;
}

#define UID_LOW2  "3b1e7f0a-6c2d-4e8f-9a1b-000000000002"
#define UID_LOW4  "3b1e7f0a-6c2d-4e8f-9a1b-000000000004"
#define UID_MID2  "3b1e7f0a-6c2d-4e8f-9a1b-000000000102"
#define UID_T4A   "3b1e7f0a-6c2d-4e8f-9a1b-00000000000a"
#define UID_T4B   "3b1e7f0a-6c2d-4e8f-9a1b-00000000000b"
#define UID_OTHER "7e2c9b41-0d5a-4f63-b8e2-5a9c0d1f3e88"

/*
 * preempt with kube-scheduler's proposals (tests/data/extender/preempt_*.json) on n-a100-0
 * (eight cards: 2 at priority 5, 4 at 10, 2 at 100) and n-t4-0 (two pods of 2 cards). The pod
 * wants 4 cards: on n-a100-0 evicting the 4-card pod alone makes room, so the 2-card pod of
 * priority 5, evicted first, is spared; a victim gpusched does not hold stays as proposed. On
 * n-t4-0 one pod frees too little (dropped), both free enough (kept, both needed).
 */
static void test_preempt(void **state)
{
    (void)state;
    bind_pod("pre-low-2", UID_LOW2, 2, 5, "n-a100-0");
    bind_pod("pre-low-4", UID_LOW4, 4, 10, "n-a100-0");
    bind_pod("pre-mid-2", UID_MID2, 2, 100, "n-a100-0");
    bind_pod("pre-t4-a", UID_T4A, 2, 5, "n-t4-0");
    bind_pod("pre-t4-b", UID_T4B, 2, 5, "n-t4-0");
    json_t *r = verb("preempt", load("preempt_meta.json"));
    char *v = victims_of(r, "n-a100-0");
    assert_non_null(v);
    assert_string_equal(v, UID_LOW4 "," UID_OTHER);
    free(v);
    const json_t *a100 = json_object_get(json_object_get(r, "NodeNameToMetaVictims"), "n-a100-0");
    assert_int_equal(json_integer_value(json_object_get(a100, "NumPDBViolations")), 1);
    assert_null(victims_of(r, "n-t4-0"));      /* 2 of 4 cards freed: no use */
    assert_null(victims_of(r, "n-unknown-9")); /* not in the inventory */
    assert_int_equal(json_object_size(json_object_get(r, "NodeNameToMetaVictims")), 1);
    json_decref(r);
    /* The same pod at priority 10: of the victims only pre-low-2 (5) is below it, and its 2 cards
     * are too few: no node, whatever was proposed. A victim proposed on a node it does not run
     * on frees nothing there: never approved there. */
    json_t *args = load("preempt_meta.json");
    json_t *spec = json_object_get(json_object_get(args, "Pod"), "spec");
    json_object_set_new(spec, "priority", json_integer(10));
    json_object_set_new(spec, "priorityClassName", json_string("prio-10"));
    r = verb("preempt", args);
    assert_null(victims_of(r, "n-a100-0"));
    json_decref(r);
    args = load("preempt_meta.json");
    json_t *map = json_object_get(args, "NodeNameToMetaVictims");
    json_object_set(map, "n-a100-1", json_object_get(map, "n-a100-0"));
    json_object_del(map, "n-a100-0");
    r = verb("preempt", args);
    v = victims_of(r, "n-a100-1");
    if (v && strstr(v, UID_LOW4))
        fail_msg("n-a100-1: %s approved, a victim that runs on n-a100-0", v);
    free(v);
    json_decref(r);
    /* Whole Pods (nodeCacheCapable false): the same answer, by UID. */
    r = verb("preempt", load("preempt_pods.json"));
    v = victims_of(r, "n-a100-0");
    assert_string_equal(v, UID_LOW4 "," UID_OTHER);
    free(v);
    v = victims_of(r, "n-t4-0");
    assert_string_equal(v, UID_T4A "," UID_T4B);
    free(v);
    json_decref(r);
    /* Nothing was evicted: the victims still hold their cards. */
    struct answer a;
    assert_int_equal(h_call(&d, "GET", "/v1/pods/team-a/pre-low-4", TOKEN_ADMIN, NULL, &a), 0);
    assert_string_equal(json_string_value(json_object_get(a.json, "state")), "running");
    h_answer_free(&a);
}

/* The card a one-card pod team-a/@name holds. */
static int card_of(const char *name)
{
    char path[160];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    assert_int_equal(h_call(&d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
    const char *idx = json_string_value(
        json_object_get(json_object_get(a.json, "annotations"), "gpusched.io/gpu-index"));
    assert_non_null(idx);
    int card = atoi(idx);
    h_answer_free(&a);
    return card;
}

/*
 * Shares are freed per card: n-a100-1's four free cards get eight pods of 50 %; a pod asking 60 %
 * of one card needs both pods of one card gone. Two pods on different cards free 1,000 milli-GPU
 * in all (what a count of nvidia.com/gpu sees) but no card of 600: that node is dropped.
 */
static void test_preempt_shares(void **state)
{
    (void)state;
    char name[8][16], uid[8][16];
    int card[8], a = -1, b = -1, c = -1;
    for (int i = 0; i < 8; i++) {
        snprintf(name[i], sizeof(name[i]), "share-%d", i);
        snprintf(uid[i], sizeof(uid[i]), "uid-share-%d", i);
        bind_share(name[i], uid[i], 1, 50, 1 + i, "n-a100-1");
        card[i] = card_of(name[i]);
    }
    for (int i = 0; i < 8 && b < 0; i++)
        for (int j = i + 1; j < 8 && b < 0; j++)
            if (card[i] == card[j]) {
                a = i;
                b = j;
            }
    for (int i = 0; i < 8 && c < 0; i++)
        c = card[i] != card[a] ? i : -1;
    assert_true(a >= 0 && b >= 0 && c >= 0);
    char *text = h_pod("team-a", "wants-60", 1, 60);
    json_t *pod = json_loads(text, 0, NULL);
    free(text);
    json_object_set_new(json_object_get(pod, "spec"), "priority", json_integer(1000));
    json_object_set_new(json_object_get(pod, "spec"), "priorityClassName", json_string("high"));
    json_t *r = verb("preempt", json_pack("{s:O, s:n, s:{s:{s:[{s:s},{s:s}]}}}", "Pod", pod,
                                          "NodeNameToVictims", "NodeNameToMetaVictims", "n-a100-1",
                                          "Pods", "UID", uid[a], "UID", uid[c]));
    assert_null(victims_of(r, "n-a100-1"));
    json_decref(r);
    r = verb("preempt", json_pack("{s:o, s:n, s:{s:{s:[{s:s},{s:s},{s:s}]}}}", "Pod", pod,
                                  "NodeNameToVictims", "NodeNameToMetaVictims", "n-a100-1", "Pods",
                                  "UID", uid[c], "UID", uid[a], "UID", uid[b]));
    char *v = victims_of(r, "n-a100-1"), want[40];
    snprintf(want, sizeof(want), "%s,%s", uid[a], uid[b]);
    assert_string_equal(v, want);
    free(v);
    json_decref(r);
}

/* POST @args (consumed) to /extender/preempt: a 400 naming @field is expected, its error
 * saying @text where that is not NULL. */
static void preempt_refused_saying(json_t *args, const char *field, const char *text)
{
    char *body = json_dumps(args, JSON_COMPACT);
    struct answer a;
    json_decref(args);
    assert_int_equal(h_call(&d, "POST", "/extender/preempt", TOKEN_ADMIN, body, &a), 0);
    assert_int_equal(a.status, 400);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), field);
    if (text)
        assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")), text));
    h_answer_free(&a);
    free(body);
}

static void preempt_refused(json_t *args, const char *field)
{
    preempt_refused_saying(args, field,
                           !strcmp(field, "Pod.metadata.namespace") /* as filter and bind say */
                               ? "Pod.metadata.namespace: kube-system belongs to no tenant of the "
                                 "config"
                               : NULL);
}

/* A malformed ExtenderPreemptionArgs is a 400 naming the field (the result has no Error). */
static void test_preempt_bad_fields(void **state)
{
    (void)state;
    json_t *args = load("preempt_meta.json");
    json_t *pods = json_object_get(
        json_object_get(json_object_get(args, "NodeNameToMetaVictims"), "n-t4-0"), "Pods");
    json_object_set_new(json_array_get(pods, 0), "UID", json_integer(7));
    preempt_refused(args, "NodeNameToMetaVictims.n-t4-0.Pods[0].UID");
    args = load("preempt_meta.json"); /* an empty UID dropped the node without a word */
    pods = json_object_get(
        json_object_get(json_object_get(args, "NodeNameToMetaVictims"), "n-t4-0"), "Pods");
    json_object_set_new(json_array_get(pods, 0), "UID", json_string(""));
    preempt_refused(args, "NodeNameToMetaVictims.n-t4-0.Pods[0].UID");
    args = load("preempt_meta.json");
    json_object_set_new(json_object_get(json_object_get(args, "Pod"), "metadata"), "name",
                        json_integer(7));
    preempt_refused(args, "Pod.metadata.name");
    preempt_refused(json_object(), "Pod"); /* it said "body: not JSON" */
    args = load("preempt_meta.json");
    json_object_set_new(args, "NodeNameToMetaVictims", json_string("n-a100-0"));
    preempt_refused(args, "NodeNameToMetaVictims");
    args = load("preempt_pods.json");
    pods = json_object_get(json_object_get(json_object_get(args, "NodeNameToVictims"), "n-a100-0"),
                           "Pods");
    json_object_del(json_object_get(json_array_get(pods, 1), "metadata"), "uid");
    preempt_refused(args, "NodeNameToVictims.n-a100-0.Pods[1].metadata.uid");
    args = load("preempt_meta.json"); /* a victim twice would be kept for the first */
    pods = json_object_get(
        json_object_get(json_object_get(args, "NodeNameToMetaVictims"), "n-t4-0"), "Pods");
    json_array_append(pods, json_array_get(pods, 0));
    char field[96];
    snprintf(field, sizeof(field), "NodeNameToMetaVictims.n-t4-0.Pods[%zu]",
             json_array_size(pods) - 1);
    preempt_refused_saying(args, field, "the victim of NodeNameToMetaVictims.n-t4-0.Pods[0] again");
    /* one victim on two nodes (a pod runs on one): the answer was silently empty */
    json_t *meta = load("preempt_meta.json");
    args = json_pack("{s:O, s:{s:{s:[{s:s}]}, s:{s:[{s:s}, {s:s}]}}}", "Pod",
                     json_object_get(meta, "Pod"), "NodeNameToMetaVictims", "n-a100-0", "Pods",
                     "UID", UID_LOW4, "n-a100-1", "Pods", "UID", UID_OTHER, "UID", UID_LOW4);
    json_decref(meta);
    preempt_refused(args, "NodeNameToMetaVictims.n-a100-1.Pods[1]");
    args = load("preempt_meta.json"); /* a namespace no tenant owns: no victim, as no bind */
    json_object_set_new(json_object_get(json_object_get(args, "Pod"), "metadata"), "namespace",
                        json_string("kube-system"));
    preempt_refused(args, "Pod.metadata.namespace");
    args = load("preempt_meta.json"); /* both maps: one would go unread */
    json_object_set_new(args, "NodeNameToVictims", json_object());
    preempt_refused(args, "NodeNameToVictims");
    struct answer a;
    assert_int_equal(h_call(&d, "POST", "/extender/preempt", TOKEN_ADMIN, "{\"Pod\":", &a), 0);
    assert_int_equal(a.status, 400);
    h_answer_free(&a);
}

/* filter_nodenames.json's pod as @name (UID "uid-@name"), asking one card. */
static json_t *one_card(const char *name)
{
    json_t *args = load("filter_nodenames.json");
    json_t *pod = json_object_get(args, "Pod");
    json_t *meta = json_object_get(pod, "metadata");
    char uid[64];
    snprintf(uid, sizeof(uid), "uid-%s", name);
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "uid", json_string(uid));
    json_t *res = json_object_get(
        json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0),
        "resources");
    json_object_set_new(json_object_get(res, "limits"), "nvidia.com/gpu", json_string("1"));
    json_object_set_new(json_object_get(res, "requests"), "nvidia.com/gpu", json_string("1"));
    return args;
}

/*
 * A pod kube-scheduler bound runs in Kubernetes, where gpuschedd cannot move or stop it (no
 * `kubernetes:` here): its tenant's DELETE is refused (only the admin may say it is gone), and a
 * failed card evicts it — it leaves the scheduler, its reason says what it waits for, and its
 * node takes no extender pod (filter nor bind) until the admin says it is gone — instead of being
 * placed again on cards it does not hold.
 */
static void test_bound_pod_stays_bound(void **state)
{
    (void)state;
    struct daemon e; /* its own: the group's cards are taken by the tests before */
    assert_int_equal(h_setup(&e, NULL), 0);
    assert_int_equal(h_start(&e), 0);
    json_t *r = h_verb(&e, "filter", one_card("bound-1"));
    char node[64];
    snprintf(node, sizeof(node), "%s",
             json_string_value(json_array_get(json_object_get(r, "NodeNames"), 0)));
    json_decref(r);
    r = h_verb(&e, "bind",
               json_pack("{s:s, s:s, s:s, s:s}", "PodName", "bound-1", "PodNamespace", "team-a",
                         "PodUID", "uid-bound-1", "Node", node));
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    json_decref(r);
    r = h_verb(&e, "filter", one_card("early-1")); /* offered before the eviction below */
    assert_true(has_name(json_object_get(r, "NodeNames"), node));
    json_decref(r);
    struct answer a;
    h_expect(&e, "DELETE", "/v1/pods/team-a/bound-1", TOKEN_A, NULL, 403, &a);
    assert_non_null(
        strstr(json_string_value(json_object_get(a.json, "error")), "bound by kube-scheduler"));
    h_answer_free(&a);
    h_expect(&e, "GET", "/v1/pods/team-a/bound-1", TOKEN_A, NULL, 200, &a);
    int gpu = (int)json_integer_value(json_array_get(json_object_get(a.json, "gpus"), 0));
    h_answer_free(&a);
    char path[96];
    snprintf(path, sizeof(path), "/v1/nodes/%s/gpus/%d/health", node, gpu);
    h_expect(&e, "POST", path, TOKEN_ADMIN, "{\"healthy\": false, \"xid\": 79}", 200, &a);
    h_answer_free(&a);
    h_expect(&e, "GET", "/v1/pods/team-a/bound-1", TOKEN_A, NULL, 200, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "state")), "pending");
    assert_true(json_is_null(json_object_get(a.json, "node"))); /* holding nothing */
    char want[128];
    snprintf(want, sizeof(want), "runs on node %s until the admin deletes it", node);
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "reason")), want));
    h_answer_free(&a);
    r = h_verb(&e, "bind", /* the node filter offered is closed now: bind says so */
               json_pack("{s:s, s:s, s:s, s:s}", "PodName", "early-1", "PodNamespace", "team-a",
                         "PodUID", "uid-early-1", "Node", node));
    assert_non_null(strstr(json_string_value(json_object_get(r, "Error")), "still terminating"));
    json_decref(r);
    r = h_verb(&e, "filter", one_card("bound-2"));
    const char *why = json_string_value(json_object_get(json_object_get(r, "FailedNodes"), node));
    assert_non_null(why);
    assert_non_null(strstr(why, "still terminating"));
    json_decref(r);
    h_expect(&e, "DELETE", "/v1/pods/team-a/bound-1", TOKEN_ADMIN, NULL, 200, &a);
    h_answer_free(&a);
    snprintf(path, sizeof(path), "/v1/nodes/%s/gpus/%d/health", node, gpu);
    h_expect(&e, "POST", path, TOKEN_ADMIN, "{\"healthy\": true}", 200, &a);
    h_answer_free(&a);
    assert_int_equal(h_stop(&e), 0);
    h_cleanup(&e);
}

/*
 * What filter remembers for bind is held to extender.maxRememberedBytes: pods with annotations
 * of 200 KiB each, six of them past 1 MiB, the oldest is forgotten (a bind of it is refused as
 * never filtered) and the newest bound; a pod filtered again is remembered again.
 */
static void test_remembered_bytes_capped(void **state)
{
    (void)state;
    struct daemon e;
    char name[16], *big = malloc(200 * 1024 + 1);
    assert_non_null(big);
    memset(big, 'x', 200 * 1024);
    big[200 * 1024] = '\0';
    assert_int_equal(h_setup(&e, "extender:\n  maxRememberedBytes: 1048576\n"), 0);
    assert_int_equal(h_start(&e), 0);
    const char *node[] = {"n-cpu-0"};
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof(name), "fat-%d", i);
        char *pod = h_pod_annotated("team-a", name, 0, 0, "example.com/blob", big);
        json_decref(h_extender(&e, "filter", pod, node, 1));
        free(pod);
    }
    char *pod = h_pod("team-a", "fat-0", 0, 0);
    json_t *r = h_extender(&e, "bind", pod, node, 1);
    assert_non_null(r);
    const char *err = json_string_value(json_object_get(r, "Error"));
    assert_non_null(err);
    assert_non_null(strstr(err, "was not seen by filter or prioritize"));
    assert_non_null(strstr(err, "extender.maxRememberedBytes")); /* the hint to raise it */
    /* the filter that forgot it said so before it answered */
    assert_true(h_log_has(&e, "filtered pod forgotten: extender.maxRememberedBytes reached"));
    assert_true(h_log_has(&e, "pod=team-a/fat-0"));
    json_decref(r);
    free(pod);
    pod = h_pod("team-a", "fat-5", 0, 0);
    r = h_extender(&e, "bind", pod, node, 1);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    json_decref(r);
    free(pod);
    pod = h_pod_annotated("team-a", "fat-0", 0, 0, "example.com/blob", big);
    json_decref(h_extender(&e, "filter", pod, node, 1));
    r = h_extender(&e, "bind", pod, node, 1);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    json_decref(r);
    free(pod);
    free(big);
    assert_int_equal(h_stop(&e), 0);
    h_cleanup(&e);
}

/* A team-b pod of @gpus A100 cards, running for at most @deadline s (0: no run time declared). */
static char *b_pod(const char *name, int gpus, int deadline)
{
    char *text =
        h_pod_annotated("team-b", name, gpus, 0, "gpusched.io/gpu-model", "A100-SXM4-80GB");
    json_t *p = json_loads(text, 0, NULL);
    free(text);
    if (deadline > 0)
        json_object_set_new(json_object_get(p, "spec"), "activeDeadlineSeconds",
                            json_integer(deadline));
    char *s = json_dumps(p, JSON_COMPACT);
    json_decref(p);
    return s;
}

/*
 * Filter's FailedNodes become events on the pod in its namespace: a node backfill holds for
 * another tenant's pod says "a pod of another tenant", as the pod's own views do, never that
 * pod's namespace and name; a pod of the same tenant is named.
 */
static void test_failed_nodes_name_no_other_tenant(void **state)
{
    (void)state;
    struct daemon o;
    assert_int_equal(h_setup(&o, NULL), 0);
    assert_int_equal(h_start(&o), 0);
    /* team-b: four cards of one board until 600 s, the other board until 1200 s; its head of
     * eight cards waits for the first board, which backfill holds for it */
    json_decref(h_submit(&o, TOKEN_B, b_pod("b-run0", 4, 600), 201));
    json_decref(h_submit(&o, TOKEN_B, b_pod("b-run1", 8, 1200), 201));
    json_decref(h_submit(&o, TOKEN_B, b_pod("b-head", 8, 0), 201));
    struct answer a;
    char path[64];
    h_expect(&o, "GET", "/v1/pods/team-b/b-run0", TOKEN_B, NULL, 200, &a);
    const char *board = json_string_value(json_object_get(a.json, "node"));
    assert_non_null(board);
    snprintf(path, sizeof(path), "%s", board);
    h_answer_free(&a);
    const char *nodes[] = {path};
    for (int k = 0; k < 2; k++) {
        const char *ns = k ? "team-b" : "team-a";
        char *pod = h_pod(ns, "late", 1, 0); /* no run time: it could delay the head */
        json_t *r = h_extender(&o, "filter", pod, nodes, 1);
        free(pod);
        assert_non_null(r);
        const char *why =
            json_string_value(json_object_get(json_object_get(r, "FailedNodes"), path));
        if (!why ||
            !strstr(why, k ? "held for team-b/b-head, which waits ahead"
                           : "held for a pod of another tenant, which waits ahead") ||
            (!k && strstr(why, "b-head")))
            fail_msg("filter of %s/late on %s: %s", ns, path, why ? why : "(fits)");
        json_decref(r);
    }
    assert_int_equal(h_stop(&o), 0);
    h_cleanup(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_node_names),
        cmocka_unit_test(test_failed_nodes_name_no_other_tenant),
        cmocka_unit_test(test_claim_left_to_kube_scheduler),
        cmocka_unit_test(test_share_needs_gpu_resource),
        cmocka_unit_test(test_filter_node_list),
        cmocka_unit_test(test_prioritize),
        cmocka_unit_test(test_prioritize_after_a_change),
        cmocka_unit_test(test_every_spelling_same_answer),
        cmocka_unit_test(test_bind_records_cards),
        cmocka_unit_test(test_errors_in_error_field),
        cmocka_unit_test(test_node_named_twice),
        cmocka_unit_test(test_no_nomination_without_offer),
        cmocka_unit_test(test_bind_same_uid),
        cmocka_unit_test(test_api_pod_name_taken),
        cmocka_unit_test(test_preempt),
        cmocka_unit_test(test_preempt_shares),
        cmocka_unit_test(test_preempt_bad_fields),
        cmocka_unit_test(test_bound_pod_stays_bound),
        cmocka_unit_test(test_remembered_bytes_capped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
