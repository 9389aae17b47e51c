/*
 * Node and card failures on the real daemon, its node-monitor time driven by POST /v1/clock
 * (--manual-clock), so no test waits for a grace period:
 *   - a heartbeating node silent for 40 s (the default grace) is NotReady; its pods are requeued,
 *     a PodGroup whole; its cards take nothing until the next heartbeat, which brings them back;
 *   - a card reported unhealthy takes nothing; after Xid 79 its pods are requeued, after Xid 92
 *     they run on; reported healthy, it takes pods again;
 *   - both survive a restart; who may report (node or admin token) and bad reports are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/api.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOKEN_NODE "node-token-0123456789abcdef"

/* A daemon with a node token, on the manual clock unless @grace_config sets a real grace. */
static void start(struct daemon *d, const char *grace_config)
{
    char cfg[256];
    snprintf(cfg, sizeof(cfg), "nodeToken: " TOKEN_NODE "\n%s", grace_config ? grace_config : "");
    assert_int_equal(h_setup(d, cfg), 0);
    d->manual_clock = !grace_config;
    assert_int_equal(h_start(d), 0);
}

/* Submit a team-a pod of @gpus cards of @model (NULL: any) in PodGroup @group (NULL: none). */
static void submit_on(const struct daemon *d, const char *name, int gpus, const char *model,
                      const char *group)
{
    json_t *ann = json_object();
    if (model)
        json_object_set_new(ann, "gpusched.io/gpu-model", json_string(model));
    if (group)
        json_object_set_new(ann, "scheduling.k8s.io/group-name", json_string(group));
    json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:o}, s:{s:[{s:s, s:{s:{s:i}}}]}}",
                            "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
                            "namespace", "team-a", "annotations", ann, "spec", "containers", "name",
                            "main", "resources", "limits", "nvidia.com/gpu", gpus);
    json_decref(h_submit(d, TOKEN_A, json_dumps(pod, JSON_COMPACT), 201));
    json_decref(pod);
}

/* A call expected to answer @status; the answer is kept in @a. */
/* The pod's node ("" when pending) into @node. */
static void pod_node(const struct daemon *d, const char *name, char *node, size_t cap)
{
    char path[96];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    h_expect(d, "GET", path, TOKEN_A, NULL, 200, &a);
    const char *n = json_string_value(json_object_get(a.json, "node"));
    snprintf(node, cap, "%s", n ? n : "");
    assert_string_equal(json_string_value(json_object_get(a.json, "state")),
                        n ? "running" : "pending");
    h_answer_free(&a);
}

static void assert_on(const struct daemon *d, const char *name, const char *want)
{
    char node[64];
    pod_node(d, name, node, sizeof(node));
    if (strcmp(node, want))
        fail_msg("pod %s is on \"%s\", expected \"%s\"", name, node, want);
}

static void advance(const struct daemon *d, int seconds)
{
    char body[48];
    struct answer a;
    snprintf(body, sizeof(body), "{\"advance_seconds\": %d}", seconds);
    h_expect(d, "POST", "/v1/clock", TOKEN_ADMIN, body, 200, &a);
    h_answer_free(&a);
}

/* GET /v1/nodes/@node; the caller frees @a. */
static void get_node(const struct daemon *d, const char *node, struct answer *a)
{
    char path[96];
    snprintf(path, sizeof(path), "/v1/nodes/%s", node);
    h_expect(d, "GET", path, TOKEN_A, NULL, 200, a);
}

static int node_ready(const struct daemon *d, const char *node)
{
    struct answer a;
    get_node(d, node, &a);
    int ready = json_is_true(json_object_get(a.json, "ready"));
    h_answer_free(&a);
    return ready;
}

static void beat(const struct daemon *d, const char *node, const char *token, long status)
{
    char path[96];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/nodes/%s/heartbeat", node);
    h_expect(d, "POST", path, token, NULL, status, &a);
    if (status == 200)
        assert_true(json_is_true(json_object_get(a.json, "ready")));
    h_answer_free(&a);
}

static void scrape_has(const struct daemon *d, const char *want)
{
    struct answer a;
    h_expect(d, "GET", "/metrics", TOKEN_ADMIN, NULL, 200, &a);
    if (!strstr(a.body, want))
        fail_msg("the scrape lacks: %s", want);
    h_answer_free(&a);
}

static void test_heartbeats(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    char x[64], y[64], want[160];
    start(&d, NULL);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A,
              "{\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"g\",\"namespace\":\"team-a\"},"
              "\"spec\":{\"minMember\":2}}",
              201);
    submit_on(&d, "g-0", 8, "A100-SXM4-80GB", "g");
    submit_on(&d, "g-1", 8, "A100-SXM4-80GB", "g");
    submit_on(&d, "solo", 1, "T4", NULL);
    pod_node(&d, "g-0", x, sizeof(x));
    pod_node(&d, "g-1", y, sizeof(y));
    assert_string_not_equal(x, y);

    /* who may beat */
    beat(&d, x, NULL, 401);
    beat(&d, x, TOKEN_A, 403);
    beat(&d, "no-such-node", TOKEN_NODE, 404);
    /* a heartbeat or a card's health is POSTed: a GET says so (405), another path is none */
    static const char *const posted[] = {"/v1/nodes/n-t4-0/heartbeat",
                                         "/v1/nodes/n-t4-0/gpus/0/health"};
    for (int i = 0; i < 2; i++) {
        h_expect(&d, "GET", posted[i], TOKEN_ADMIN, NULL, 405, &a);
        assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")), "POST"));
        h_answer_free(&a);
    }
    h_expect(&d, "GET", "/v1/nodes/n-t4-0/nothing", TOKEN_ADMIN, NULL, 404, &a);
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/pods", TOKEN_NODE, NULL, 403, &a);
    h_answer_free(&a);
    h_expect(&d, "POST", "/v1/clock", TOKEN_A, "{\"advance_seconds\": 1}", 403, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "Authorization");
    h_answer_free(&a);
    /* a heartbeat's body is none or {} (as beat() sends none): what is not JSON was taken */
    static const char *const beats[] = {"{\"x\": 1}", "}}{{", "{", "[]"};
    for (size_t i = 0; i < sizeof(beats) / sizeof(beats[0]); i++) {
        h_expect(&d, "POST", "/v1/nodes/n-t4-0/heartbeat", TOKEN_NODE, beats[i], 400, &a);
        h_answer_free(&a);
    }
    /* a clock body's error names its field; it named the body whatever was wrong */
    static const char *const bad_clock[][2] = {
        {"{\"advance_seconds\": -1}", "advance_seconds"},
        {"{\"advance_us\": 1.5}", "advance_us"},
        {"{\"to_us\": \"5\"}", "to_us"},
        {"{\"advance_seconds\": 1, \"pass\": \"yes\"}", "pass"},
        {"{\"advance_seconds\": 1, \"passes\": true}", "passes"},
        {"{\"advance_seconds\": 1, \"to_us\": 5}", ""},
        /* past 10 years, which bills, the forecast and a snapshot's scenario refused after */
        {"{\"to_us\": 315360000000001}", "to_us"},
        {"[]", ""},
    };
    for (size_t i = 0; i < sizeof(bad_clock) / sizeof(bad_clock[0]); i++) {
        h_expect(&d, "POST", "/v1/clock", TOKEN_ADMIN, bad_clock[i][0], 400, &a);
        assert_string_equal(json_string_value(json_object_get(a.json, "field")), bad_clock[i][1]);
        h_answer_free(&a);
    }

    /* x beats once and is watched; y never beats and stays Ready whatever the clock says */
    beat(&d, x, TOKEN_NODE, 200);
    advance(&d, 39);
    assert_true(node_ready(&d, x));
    advance(&d, 1);
    assert_false(node_ready(&d, x));
    assert_true(node_ready(&d, y));
    get_node(&d, x, &a);
    assert_int_equal(json_integer_value(json_object_get(a.json, "gpu_milli_unavailable")), 8000);
    assert_int_equal(json_integer_value(json_object_get(a.json, "gpu_milli_allocated")), 0);
    h_answer_free(&a);

    /* the gang went back whole: g-1 left y too, and with one board left neither may run */
    assert_on(&d, "g-0", "");
    assert_on(&d, "g-1", "");
    h_expect(&d, "GET", "/v1/pods/team-a/g-1", TOKEN_A, NULL, 200, &a);
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "reason")),
                           "1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }"));
    h_answer_free(&a);
    snprintf(want, sizeof(want),
             "pod=team-a/g-1 tenant=team-a state=pending reason=\"node %s is not", x);
    assert_true(h_log_has(&d, want));
    snprintf(want, sizeof(want), "gpusched_node_ready{hostname=\"%s\"} 0", x);
    scrape_has(&d, want);
    scrape_has(&d, "gpusched_pods_requeued_total 2");

    /* back: the gang runs again */
    beat(&d, x, TOKEN_NODE, 200);
    pod_node(&d, "g-0", x, sizeof(x));
    pod_node(&d, "g-1", y, sizeof(y));
    assert_true(x[0] && y[0] && strcmp(x, y));

    /* NotReady survives a restart; the restarted daemon keeps it until x beats */
    advance(&d, 40);
    assert_false(node_ready(&d, x));
    assert_on(&d, "g-1", "");
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    assert_false(node_ready(&d, x));
    assert_on(&d, "g-0", "");
    assert_on(&d, "g-1", "");
    assert_on(&d, "solo", "n-t4-0");
    beat(&d, x, TOKEN_ADMIN, 200); /* the admin token may act for a node */
    pod_node(&d, "g-1", y, sizeof(y));
    assert_true(y[0]);
    /* the clock goes to 10 years and no further, by to_us or by an advance */
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"to_us\": 315360000000000}", 200);
    h_expect(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_us\": 1}", 400, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "advance_us");
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Report card @gpu of n-t4-0; the caller frees @a. */
static void report(const struct daemon *d, int gpu, const char *body, long status, struct answer *a)
{
    char path[96];
    snprintf(path, sizeof(path), "/v1/nodes/n-t4-0/gpus/%d/health", gpu);
    h_expect(d, "POST", path, TOKEN_NODE, body, status, a);
}

/* The index of the first card pod @name holds. */
static int pod_card(const struct daemon *d, const char *name)
{
    char path[96];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    h_expect(d, "GET", path, TOKEN_A, NULL, 200, &a);
    int g = (int)json_integer_value(json_array_get(json_object_get(a.json, "gpus"), 0));
    h_answer_free(&a);
    return g;
}

/*
 * GET /v1/snapshot, checked to hold each of @want (NULL-terminated), continued by simulate
 * --from-now for an hour with a 2-card T4 pod "later" of team-a arriving 1 s after the snapshot's
 * now: the run's JSON (new reference).
 */
static json_t *continued(const struct daemon *d, const char *const *want)
{
    struct answer a;
    char path[128], json[128], at[32];
    h_expect(d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, 200, &a);
    const char *now = strstr(a.body, "\n  now: ");
    for (; *want; want++)
        if (!now || !strstr(a.body, *want))
            fail_msg("no \"%s\" in the snapshot: %s", *want, a.body);
    snprintf(path, sizeof(path), "%s/snap.yaml", d->dir);
    snprintf(json, sizeof(json), "%s/snap.json", d->dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(a.body, f);
    json_t *pj = h_pod_json("team-a", "later", 2, 0);
    h_annotate(pj, "gpusched.io/gpu-model", "T4");
    snprintf(at, sizeof(at), "%lldus", strtoll(now + 8, NULL, 10) + 1000000);
    h_annotate(pj, "sim.gpusched.io/arrival", at);
    char *text = json_dumps(pj, JSON_COMPACT);
    fprintf(f, "---\n%s\n", text);
    free(text);
    json_decref(pj);
    assert_int_equal(fclose(f), 0);
    h_answer_free(&a);
    json_t *out = h_continued(path, json);
    assert_non_null(out);
    return out;
}

/* Pod @name ("ns/name") of a simulate --json run. */
static json_t *run_pod(json_t *out, const char *name)
{
    json_t *p;
    size_t i;
    json_array_foreach(json_object_get(out, "pods"), i, p)
    {
        const char *n = json_string_value(json_object_get(p, "name"));
        if (n && !strcmp(n, name))
            return p;
    }
    fail_msg("no pod %s in the continuation", name);
    return NULL;
}

/*
 * GET /v1/snapshot carries an unhealthy card as a cardFailures entry with its Xid, and its mode
 * history (empty now, it last ran a whole-card pod) in cardModes.cards; the continuation keeps
 * the failure: simulate --from-now leaves pod @waiting, which needs every card of
 * the node, pending as gpuschedd does.
 */
static void snapshot_keeps_card(const struct daemon *d, int c, const char *waiting)
{
    char failed[96], mode[96];
    snprintf(failed, sizeof(failed), "{node: \"n-t4-0\", gpu: %d, at: ", c);
    snprintf(mode, sizeof(mode), "{node: \"n-t4-0\", gpu: %d, mode: exclusive, since: ", c);
    const char *want[] = {failed, ", xid: 92}", "  cardModes:\n    cards:\n", mode, NULL};
    json_t *out = continued(d, want);
    assert_string_equal(json_string_value(json_object_get(run_pod(out, waiting), "state")),
                        "pending");
    json_decref(out);
}

/* A card's mode history (the mode it last took, and since when) outlives its pod and a reload
 * (SIGHUP: a new scheduler of the pods held): GET /v1/snapshot still writes it. */
static void test_modes_kept(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    char mode[96];
    start(&d, NULL);
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 5}", 200);
    submit_on(&d, "p1", 1, "T4", NULL);
    int c = pod_card(&d, "p1");
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 5}", 200);
    h_request(&d, "DELETE", "/v1/pods/team-a/p1", TOKEN_A, NULL, 200);
    assert_int_equal(h_reload(&d), 0);
    snprintf(mode, sizeof(mode), "{node: \"n-t4-0\", gpu: %d, mode: exclusive, since: ", c);
    h_expect(&d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, 200, &a);
    if (!strstr(a.body, mode))
        fail_msg("no \"%s\" in the snapshot: %s", mode, a.body);
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_xid(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    char want[160];
    start(&d, NULL);
    submit_on(&d, "p1", 1, "T4", NULL);
    int c = pod_card(&d, "p1");

    /* bad reports */
    report(&d, 4, "{\"healthy\": false}", 404, &a);
    h_answer_free(&a);
    /* an index past 32 bits must not wrap round onto a real card, nor a sign pass */
    h_expect(&d, "POST", "/v1/nodes/n-t4-0/gpus/4294967296/health", TOKEN_NODE,
             "{\"healthy\": false}", 404, &a);
    h_answer_free(&a);
    h_expect(&d, "POST", "/v1/nodes/n-t4-0/gpus/+1/health", TOKEN_NODE, "{\"healthy\": false}", 404,
             &a);
    h_answer_free(&a);
    h_expect(&d, "POST", "/v1/nodes/n-t4-0/gpus/01/health", TOKEN_NODE, "{\"healthy\": false}", 404,
             &a);
    h_answer_free(&a);
    report(&d, c, "{\"healthy\": \"no\"}", 400, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "healthy");
    h_answer_free(&a);
    report(&d, c, "{\"healthy\": false, \"why\": 1}", 400, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "why");
    h_answer_free(&a);
    report(&d, c, "{\"healthy\": true, \"xid\": 79}", 400, &a);
    h_answer_free(&a);
    report(&d, c, "not json", 400, &a);
    h_answer_free(&a);

    /* Xid 79: the card fell off the bus, p1 died and runs again on another card */
    report(&d, c, "{\"healthy\": false, \"xid\": 79}", 200, &a);
    json_t *card = json_array_get(json_object_get(a.json, "gpu"), (size_t)c);
    assert_false(json_is_true(json_object_get(card, "healthy")));
    assert_int_equal(json_integer_value(json_object_get(card, "xid")), 79);
    assert_int_equal(json_array_size(json_object_get(card, "pods")), 0);
    h_answer_free(&a);
    assert_on(&d, "p1", "n-t4-0");
    assert_int_not_equal(pod_card(&d, "p1"), c);
    scrape_has(&d, "\ngpusched_gpus_unhealthy 1\n");
    snprintf(want, sizeof(want),
             "gpusched_gpu_xid{hostname=\"n-t4-0\",gpu=\"%d\",model_name=\"T4\"} 79", c);
    scrape_has(&d, want);

    /* three healthy cards: four do not fit until the card is healthy again */
    h_expect(&d, "DELETE", "/v1/pods/team-a/p1", TOKEN_A, NULL, 200, &a);
    h_answer_free(&a);
    submit_on(&d, "p2", 4, "T4", NULL);
    assert_on(&d, "p2", "");
    report(&d, c, "{\"healthy\": true}", 200, &a);
    h_answer_free(&a);
    assert_on(&d, "p2", "n-t4-0");

    /* Xid 92 (high single-bit ECC rate): p2 runs on, the card drains; 10 s later it leaves the
     * card with its mode (a pod leaving in the instant it came leaves none) */
    advance(&d, 10);
    report(&d, c, "{\"healthy\": false, \"xid\": 92}", 200, &a);
    h_answer_free(&a);
    assert_on(&d, "p2", "n-t4-0");
    h_expect(&d, "DELETE", "/v1/pods/team-a/p2", TOKEN_A, NULL, 200, &a);
    h_answer_free(&a);
    submit_on(&d, "p3", 4, "T4", NULL);
    assert_on(&d, "p3", "");
    snapshot_keeps_card(&d, c, "team-a/p3");

    /* the unhealthy card survives a restart, then comes back */
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    get_node(&d, "n-t4-0", &a);
    card = json_array_get(json_object_get(a.json, "gpu"), (size_t)c);
    assert_false(json_is_true(json_object_get(card, "healthy")));
    assert_int_equal(json_integer_value(json_object_get(card, "xid")), 92);
    assert_int_equal(json_integer_value(json_object_get(card, "free_milli")), 0);
    assert_int_equal(json_integer_value(json_object_get(card, "allocated_milli")), 0);
    assert_int_equal(json_integer_value(json_object_get(card, "gpumem_mib")), 15360); /* a T4 */
    assert_int_equal(json_integer_value(json_object_get(card, "gpumem_allocated_mib")), 0);
    h_answer_free(&a);
    assert_on(&d, "p3", "");
    report(&d, c, "{\"healthy\": true}", 200, &a);
    h_answer_free(&a);
    assert_on(&d, "p3", "n-t4-0");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* On the system clock a silent node turns NotReady by itself; this waits for that (a second),
 * asserting only the outcome, never how long it took. */
/* team-a's pod @name: its pending reason, as gpuschedd says it. */
static void reason_is(const struct daemon *d, const char *name, const char *want)
{
    char path[96];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    h_expect(d, "GET", path, TOKEN_A, NULL, 200, &a);
    const char *why = json_string_value(json_object_get(a.json, "reason"));
    if (!why || strcmp(why, want))
        fail_msg("pod %s: reason \"%s\", expected \"%s\"", name, why ? why : "(none)", want);
    h_answer_free(&a);
}

/* A pending pod's reason counts the nodes as they are once a node that was lost is back, and
 * counts no failed card as free: the last search's record is not read past such a change. */
static void test_reasons_after_failures(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    start(&d, NULL);
    beat(&d, "n-a100-0", TOKEN_NODE, 200);
    submit_on(&d, "r0", 4, "T4", NULL);
    submit_on(&d, "r1", 4, "A100-SXM4-80GB", NULL);
    submit_on(&d, "big", 8, NULL, NULL);
    assert_on(&d, "r1", "n-a100-0");
    assert_on(&d, "big", "n-a100-1");
    advance(&d, 41); /* n-a100-0 misses its heartbeats: r1 waits again */
    assert_false(node_ready(&d, "n-a100-0"));
    h_expect(&d, "POST", "/v1/nodes/n-a100-1/gpus/0/health", TOKEN_NODE,
             "{\"healthy\": false, \"xid\": 79}", 200, &a);
    h_answer_free(&a);
    assert_on(&d, "r1", "n-a100-1");
    reason_is(&d, "big",
              "0/4 nodes are available: 3 Insufficient nvidia.com/gpu, 1 node(s) had untolerated "
              "taint {node.kubernetes.io/not-ready: }.");
    beat(&d, "n-a100-0", TOKEN_NODE, 200);
    assert_on(&d, "big", "n-a100-0");
    submit_on(&d, "new8", 8, NULL, NULL);
    reason_is(&d, "new8", "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A pod its node's loss or its card's failure sends back says so in last_eviction, even beside
 * alike pods that waited already (their last failure's words are not its). */
static void test_requeue_says_why(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    char node[64], want[160];
    start(&d, NULL);
    submit_on(&d, "q0", 8, "A100-SXM4-80GB", NULL);
    submit_on(&d, "q1", 8, "A100-SXM4-80GB", NULL);
    submit_on(&d, "q2", 8, "A100-SXM4-80GB", NULL); /* waits: no room */
    pod_node(&d, "q0", node, sizeof(node));
    beat(&d, node, TOKEN_NODE, 200);
    advance(&d, 41);
    h_expect(&d, "GET", "/v1/pods/team-a/q0", TOKEN_A, NULL, 200, &a);
    const char *said =
        json_string_value(json_object_get(json_object_get(a.json, "last_eviction"), "reason"));
    snprintf(want, sizeof(want), "node %s is not ready: its pods wait again", node);
    if (!said || strcmp(said, want))
        fail_msg("q0's last eviction: \"%s\", expected \"%s\"", said ? said : "(none)", want);
    h_answer_free(&a);
    snprintf(want, sizeof(want),
             "pod=team-a/q0 tenant=team-a state=pending reason=\"node %s is not", node);
    assert_true(h_log_has(&d, want));
    /* a card's failure, the same */
    char path[128];
    pod_node(&d, "q1", node, sizeof(node));
    snprintf(path, sizeof(path), "/v1/nodes/%s/gpus/0/health", node);
    h_expect(&d, "POST", path, TOKEN_NODE, "{\"healthy\": false, \"xid\": 79}", 200, &a);
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/pods/team-a/q1", TOKEN_A, NULL, 200, &a);
    said = json_string_value(json_object_get(json_object_get(a.json, "last_eviction"), "reason"));
    snprintf(want, sizeof(want), "GPU 0 of node %s failed: its pods wait again", node);
    if (!said || strcmp(said, want))
        fail_msg("q1's last eviction: \"%s\", expected \"%s\"", said ? said : "(none)", want);
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_system_clock(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    start(&d, "nodeMonitorGracePeriodSeconds: 1\n");
    h_expect(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 1}", 404, &a);
    h_answer_free(&a);
    beat(&d, "n-t4-0", TOKEN_NODE, 200);
    int ready = 1;
    for (int i = 0; i < 3000 && ready; i++) { /* up to 30 s on a loaded machine */
        nanosleep(&(struct timespec){0, 10000000}, NULL);
        ready = node_ready(&d, "n-t4-0");
    }
    assert_false(ready);
    assert_true(h_log_has(&d, "msg=\"node not ready\" node=n-t4-0"));
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* The cards pod @name holds, "0,2". */
static void pod_cards(const struct daemon *d, const char *name, char *out, size_t cap)
{
    char path[96];
    struct answer a;
    json_t *g;
    size_t i, off = 0;
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    h_expect(d, "GET", path, TOKEN_A, NULL, 200, &a);
    out[0] = '\0';
    json_array_foreach(json_object_get(a.json, "gpus"), i, g) off += (size_t)snprintf(
        out + off, cap - off, i ? ",%lld" : "%lld", (long long)json_integer_value(g));
    h_answer_free(&a);
}

/* A 2-card T4 pod made, its cards into @cards, and deleted. */
static void cards_of_a_pair(const struct daemon *d, const char *name, char *cards, size_t cap)
{
    char path[96];
    struct answer a;
    submit_on(d, name, 2, "T4", NULL);
    pod_cards(d, name, cards, cap);
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    h_expect(d, "DELETE", path, TOKEN_A, NULL, 200, &a);
    h_answer_free(&a);
}

/* The cards the continuation gives pod "later", "0,2" into @cards. */
static void continued_pair(const struct daemon *d, const char *want, char *cards, size_t cap)
{
    const char *wants[] = {want, NULL};
    json_t *out = continued(d, wants), *g;
    size_t k, off = 0;
    cards[0] = '\0';
    json_array_foreach(json_object_get(run_pod(out, "team-a/later"), "gpus"), k, g) off +=
        (size_t)snprintf(cards + off, cap - off, k ? ",%lld" : "%lld",
                         (long long)json_integer_value(g));
    json_decref(out);
}

/*
 * The DaemonConfig's tenants reach the snapshot with the namespaces each owns: a pod of
 * team-b-dev, which the DaemonConfig gives team-b, is team-b's in the continuation as in the
 * daemon (no policy document says so: the simulator would make team-b-dev a tenant of its own).
 */
static void test_snapshot_tenants(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    d.manual_clock = 1;
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, NULL, h_pod("team-b-dev", "dev", 1, 0), 201));
    const char *want[] = {"    - {name: \"team-b\", namespaces: [\"team-b\", \"team-b-dev\"]}\n",
                          NULL};
    json_t *out = continued(&d, want);
    assert_string_equal(
        json_string_value(json_object_get(run_pod(out, "team-b-dev/dev"), "tenant")), "team-b");
    json_decref(out);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Registration bodies for the 4-card T4 box: its cards bridged in pairs (0,2) and (1,3). */
#define T4_GPU(i, pair) "{\"index\": " #i ", \"pcieDomain\": " #pair ", \"nvlinkGroup\": " #pair "}"
#define T4_REG(gpu1, edge)                                                                         \
    "{\"gpus\": 4, \"gpuModel\": \"T4\", \"topology\": {\"gpus\": [" T4_GPU(                       \
        0, 0) ", " gpu1 ", " T4_GPU(2, 0) ", " T4_GPU(3, 1) "], \"nvlinks\": [" edge               \
                                                            ", [1, 3, 4]]}}"

/* The T4 box as it is (T4s have no NVLink): its cards in two PCIe domains, (0,2) and (1,3). */
#define T4_PCI(i, d) "{\"index\": " #i ", \"pcieDomain\": " #d ", \"nvlinkGroup\": null}"
#define T4_PAIRED                                                                                  \
    "{\"gpus\": 4, \"gpuModel\": \"T4\", \"topology\": {\"gpus\": [" T4_PCI(0, 0) ", " T4_PCI(     \
        1, 1) ", " T4_PCI(2, 0) ", " T4_PCI(3, 1) "]}}"

/* The T4 box with no NVLink: every card alone, each in a PCIe domain of its own. */
#define T4_ALONE(i) "{\"index\": " #i ", \"pcieDomain\": " #i ", \"nvlinkGroup\": null}"
#define T4_NONE                                                                                    \
    "{\"gpus\": 4, \"gpuModel\": \"T4\", \"topology\": {\"gpus\": [" T4_ALONE(0) ", " T4_ALONE(    \
        1) ", " T4_ALONE(2) ", " T4_ALONE(3) "]}}"
#define T4_WITH(more) /* the bridged T4 box with more keys in its tree */                          \
    "{\"gpus\": 4, \"gpuModel\": \"T4\", \"topology\": {\"gpus\": [" T4_GPU(0, 0) ", " T4_GPU(     \
        1, 1) ", " T4_GPU(2, 0) ", " T4_GPU(3, 1) "], \"nvlinks\": [[0, 2, 4], [1, 3, 4]], " more  \
                                                  "}}"

static const char *const contradict[][2] = {
    /* groups the nvlinks do not make, or nvlinks the groups leave out */
    {"{\"gpus\": 4, \"gpuModel\": \"T4\", \"topology\": {\"gpus\": [" T4_GPU(0, 0) ", " T4_GPU(
         1, 1) ", " T4_GPU(2, 0) ", " T4_GPU(3, 1) "]}}",
     "topology.gpus[0].nvlinkGroup"},
    {"{\"gpus\": 4, \"gpuModel\": \"T4\", \"topology\": {\"gpus\": [" T4_ALONE(0) ", " T4_ALONE(
         1) ", " T4_ALONE(2) ", " T4_ALONE(3) "], \"nvlinks\": [[0, 1, 4]]}}",
     "topology.gpus[0].nvlinkGroup"},
    {T4_WITH("\"name\": \"n-t4-1\""), "topology.name"},
    {T4_WITH("\"nvlinkGroups\": []"), "topology.nvlinkGroups"},
    {T4_WITH("\"pcieDomains\": [[0, 1, 2, 3]]"), "topology.pcieDomains"},
    {T4_WITH("\"nics\": [{\"name\": \"mlx5_0\", \"links\": [1, 2, 3]}]"), "topology.nics[0].links"},
    {T4_WITH("\"nics\": [{\"name\": \"a\", \"links\": [\"PIX\", \"SYS\", \"SYS\", \"SYS\"]}, "
             "{\"name\": \"a\", \"links\": [\"PIX\", \"SYS\", \"SYS\", \"SYS\"]}]"),
     "topology.nics[1].name"},
    /* a link matrix whose NVLinks are not nvlinks', and one whose PCIe classes make another
     * domain than gpus[] says (PIX joins 0 and 1) */
    {T4_WITH("\"links\": [[\"X\", \"NV4\", \"NV4\", \"SYS\"], [\"NV4\", \"X\", \"SYS\", \"NV4\"], "
             "[\"NV4\", \"SYS\", \"X\", \"SYS\"], [\"SYS\", \"NV4\", \"SYS\", \"X\"]]"),
     "topology.links[0][1]"},
    {T4_WITH("\"links\": [[\"X\", \"PIX\", \"NV4\", \"SYS\"], [\"PIX\", \"X\", \"SYS\", \"NV4\"], "
             "[\"NV4\", \"SYS\", \"X\", \"SYS\"], [\"SYS\", \"NV4\", \"SYS\", \"X\"]]"),
     "topology.gpus[1].pcieDomain"},
    /* a row short of a class: named as the row, not as the cell before it */
    {T4_WITH("\"links\": [[\"X\", \"SYS\", \"NV4\", \"SYS\"], [\"SYS\", \"X\", \"SYS\", \"NV4\"], "
             "[\"NV4\", \"SYS\", \"X\"], [\"SYS\", \"NV4\", \"SYS\", \"X\"]]"),
     "topology.links[2]"},
    {T4_REG("{\"index\": 1, \"pcieDomain\": 1, \"nvlinkGroup\": 1, \"memoryMiB\": -5}",
            "[0, 2, 4]"),
     "topology.gpus[1].memoryMiB"},
    {T4_REG("{\"index\": 1, \"pcieDomain\": 1, \"nvlinkGroup\": 1, \"uuid\": \"GPU-\\u001b[31m\"}",
            "[0, 2, 4]"),
     "topology.gpus[1].uuid"},
    {T4_REG(
         "{\"index\": 1, \"pcieDomain\": 1, \"nvlinkGroup\": 1, \"migInstances\": [{\"size\": 9}]}",
         "[0, 2, 4]"),
     "topology.gpus[1].migInstances"},
    {T4_REG("{\"index\": 1, \"pcieDomain\": 1, \"nvlinkGroup\": 1, \"migMode\": true, "
            "\"migInstances\": [{\"uuid\": \"MIG-1\", \"giProfile\": 0, \"start\": 7, \"size\": 2, "
            "\"memoryMiB\": 0}]}",
            "[0, 2, 4]"),
     "topology.gpus[1].migInstances[0].size"},
    {T4_REG("{\"index\": 1, \"pcieDomain\": 1, \"nvlinkGroup\": 1, \"migMode\": true, "
            "\"migInstances\": [{\"start\": 0, \"size\": 4}, {\"start\": 3, \"size\": 1}]}",
            "[0, 2, 4]"),
     "topology.gpus[1].migInstances[1].start"}, /* an instance on another's slices */
    /* cards no T4 can be: MIG on, more memory than it has */
    {T4_REG("{\"index\": 1, \"pcieDomain\": 1, \"nvlinkGroup\": 1, \"migMode\": true}",
            "[0, 2, 4]"),
     "topology.gpus[1].migMode"},
    {T4_REG("{\"index\": 1, \"pcieDomain\": 1, \"nvlinkGroup\": 1, \"memoryMiB\": 1073741824}",
            "[0, 2, 4]"),
     "topology.gpus[1].memoryMiB"},
    {T4_REG("{\"index\": 1, \"pcieDomain\": 1, \"nvlinkGroup\": 1, \"migMode\": true, "
            "\"migInstances\": [1]}",
            "[0, 2, 4]"),
     "topology.gpus[1].migInstances[0]"},
    {"{\"gpus\": 4, \"gpuModel\": \"T4\", \"topology\": {\"gpus\": [{\"index\": 0, \"pcieDomain\": "
     "0, "
     "\"nvlinkGroup\": 0, \"uuid\": \"GPU-a\"}, " T4_GPU(
         1, 1) ", {\"index\": 2, \"pcieDomain\": 0, "
               "\"nvlinkGroup\": 0, \"uuid\": \"GPU-a\"}, " T4_GPU(
                   3, 1) "], \"nvlinks\": [[0, 2, 4], [1, 3, 4]]}}",
     "topology.gpus[2].uuid"},
    /* pairs with no cards to pair: they were kept and shown, and placement read the template */
    {"{\"gpus\": 4, \"gpuModel\": \"T4\", \"topology\": {\"nvlinks\": [[0, 1, 99]]}}",
     "topology.gpus"},
};

/*
 * The topology a node's agent registers replaces the inventory's for placement, and stays
 * across a restart: the T4 box's default (one PCIe switch, no NVLink) gives a 2-card pod cards
 * 0,1; registered with cards bridged (0,2) and (1,3), the pod gets a bridged pair. A topology
 * that does not fit the node is refused naming the field, and changes nothing.
 */
static void test_registered_topology(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    char cards[32];
    start(&d, NULL);
    cards_of_a_pair(&d, "before", cards, sizeof(cards));
    assert_string_equal(cards, "0,1");
    continued_pair(&d, "{name: \"n-t4-0\", template: \"", cards, sizeof(cards));
    assert_string_equal(cards, "0,1");
    const char *path = "/v1/nodes/n-t4-0/register";
    h_expect(&d, "POST", path, TOKEN_NODE, T4_REG(T4_GPU(1, 99), "[0, 2, 4]"), 400, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "topology.gpus[1]");
    h_answer_free(&a);
    h_expect(&d, "POST", path, TOKEN_NODE, T4_REG(T4_GPU(1, 1), "[2, 0, 4]"), 400, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "topology.nvlinks[0]");
    h_answer_free(&a);
    h_expect(&d, "POST", path, TOKEN_NODE, T4_REG(T4_GPU(1, 1), "[0, 2, 4], [0, 2, 1]"), 400, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "topology.nvlinks[1]");
    assert_string_equal(json_string_value(json_object_get(a.json, "error")),
                        "topology.nvlinks[1]: cards 0 and 2 are paired twice");
    h_answer_free(&a);
    /* a key not of the tree's form would be kept and shown, as if placement read it */
    h_expect(&d, "POST", path, TOKEN_NODE,
             "{\"gpus\": 4, \"gpuModel\": \"T4\", \"topology\": {\"numa\": 0}}", 400, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "topology.numa");
    h_answer_free(&a);
    h_expect(&d, "POST", path, TOKEN_NODE,
             T4_REG("{\"index\": 1, \"pcieDomain\": 1, \"nvlinkGroup\": 1, \"nvswitch\": 0}",
                    "[0, 2, 4]"),
             400, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")),
                        "topology.gpus[1].nvswitch");
    h_answer_free(&a);
    /* what no node could hold is a bad body (400); cards unlike the inventory's contradict it */
    static const struct {
        const char *body, *field;
        long status;
    } bad[] = {
        {"{\"gpuModel\": \"T4\"}", "gpus", 400},
        {"{\"gpus\": 17, \"gpuModel\": \"T4\"}", "gpus", 400},
        {"{\"gpus\": 4, \"gpuModel\": \"no-such-card\"}", "gpuModel", 400},
        {"{\"gpus\": 8, \"gpuModel\": \"T4\"}", "gpus", 409},
        {"{\"gpus\": 4, \"gpuModel\": \"A100-SXM4-80GB\"}", "gpuModel", 409},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        h_expect(&d, "POST", path, TOKEN_NODE, bad[i].body, bad[i].status, &a);
        assert_string_equal(json_string_value(json_object_get(a.json, "field")), bad[i].field);
        h_answer_free(&a);
    }
    /* a tree that contradicts itself, or values kept and shown that no card has */
    for (size_t i = 0; i < sizeof(contradict) / sizeof(contradict[0]); i++) {
        h_expect(&d, "POST", path, TOKEN_NODE, contradict[i][0], 400, &a);
        assert_string_equal(json_string_value(json_object_get(a.json, "field")), contradict[i][1]);
        /* the text starts with the field, as the other registration errors' do */
        const char *e = json_string_value(json_object_get(a.json, "error"));
        size_t fl = strlen(contradict[i][1]);
        if (strncmp(e, contradict[i][1], fl) || strncmp(e + fl, ": ", 2))
            print_error("%s\n", e);
        assert_int_equal(strncmp(e, contradict[i][1], fl), 0);
        assert_int_equal(strncmp(e + fl, ": ", 2), 0);
        h_answer_free(&a);
    }
    /* as docs/node-agent.md quotes it */
    h_expect(&d, "POST", path, TOKEN_NODE, contradict[0][0], 400, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "error")),
                        "topology.gpus[0].nvlinkGroup: expected null: nvlinks puts card 0 in no "
                        "NVLink clique");
    h_answer_free(&a);
    h_expect(&d, "POST", path, TOKEN_NODE, "{\"gpus\": 4, \"gpus\": 4}", 400, &a);
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")), "given twice"));
    h_answer_free(&a);
    cards_of_a_pair(&d, "refused", cards, sizeof(cards));
    assert_string_equal(cards, "0,1");
    /* well formed, but no T4 has NVLink: a snapshot of it would not load (it did) */
    h_expect(&d, "POST", path, TOKEN_NODE, T4_REG(T4_GPU(1, 1), "[0, 2, 4]"), 400, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "topology.nvlinks");
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")),
                           "T4 has no NVLink, so a node of it has no NVLink group or link"));
    h_answer_free(&a);
    h_expect(&d, "POST", path, TOKEN_NODE, T4_PAIRED, 201, &a);
    h_answer_free(&a);
    cards_of_a_pair(&d, "paired", cards, sizeof(cards));
    assert_string_equal(cards, "0,2");
    /* domains, none, domains again: the node's own entry of pair counts is kept between (the
     * third wrote before the fleet's table) */
    for (int k = 0; k < 3; k++) {
        h_expect(&d, "POST", path, TOKEN_ADMIN, k == 1 ? T4_NONE : T4_PAIRED, 201, &a);
        h_answer_free(&a);
    }
    cards_of_a_pair(&d, "again", cards, sizeof(cards));
    assert_string_equal(cards, "0,2");
    assert_int_equal(h_stop(&d), 0);
    d.manual_clock = 1;
    assert_int_equal(h_start(&d), 0);
    cards_of_a_pair(&d, "restarted", cards, sizeof(cards));
    assert_string_equal(cards, "0,2");
    /* the snapshot carries it as the node's own template: a continuation places as the daemon */
    continued_pair(&d, "{name: \"n-t4-0\", template: \"reported-2\"}", cards, sizeof(cards));
    assert_string_equal(cards, "0,2");
    h_expect(&d, "GET", "/v1/nodes/n-t4-0", TOKEN_ADMIN, NULL, 200, &a); /* what it registered */
    for (size_t g = 0; g < 4; g++) { /* the cards as placed: the template's were shown */
        assert_int_equal(
            json_integer_value(json_array_get(json_object_get(a.json, "pcie_domain"), g)), g % 2);
        assert_true(json_is_null(json_array_get(json_object_get(a.json, "nvlink_group"), g)));
    }
    json_t *gpus =
        json_object_get(json_object_get(json_object_get(a.json, "agent"), "topology"), "gpus");
    assert_int_equal(json_array_size(gpus), 4);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(gpus, 1), "pcieDomain")), 1);
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    /* the node's cards are another model after a restart: its registration, of T4s, is not
     * used (it was, silently), as it would now be refused */
    char *csv = t_slurp(d.nodes, NULL), *at = strstr(csv, "n-t4-0,64000,262144,4,T4");
    assert_non_null(at);
    memcpy(at + strlen("n-t4-0,64000,262144,4,"), "G2", 2);
    assert_int_equal(h_write(d.nodes, csv), 0);
    free(csv);
    assert_int_equal(h_start(&d), 0);
    assert_true(h_log_has(&d, "stored registration of a node the inventory no longer holds so"));
    h_expect(&d, "GET", "/v1/nodes/n-t4-0", TOKEN_ADMIN, NULL, 200, &a);
    assert_true(json_is_null(json_object_get(a.json, "agent")) ||
                !json_object_get(a.json, "agent"));
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heartbeats),
        cmocka_unit_test(test_system_clock),
        cmocka_unit_test(test_xid),
        cmocka_unit_test(test_reasons_after_failures),
        cmocka_unit_test(test_requeue_says_why),
        cmocka_unit_test(test_modes_kept),
        cmocka_unit_test(test_registered_topology),
        cmocka_unit_test(test_snapshot_tenants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
