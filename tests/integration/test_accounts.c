/*
 * GET /v1/tenants, /v1/queues and /v1/bills on the real daemon: each tenant's use, its queue's
 * deserved share by water-filling, and bills priced from the store's ledger with the bundled rate
 * card, and the same totals in /metrics. A tenant's token sees its own only (403 for another's, 401
 * without a token), and the pods another tenant runs on a node are not named to it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/api.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *item(const struct answer *a, size_t i)
{
    return json_array_get(json_object_get(a->json, "items"), i);
}

static int64_t num(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static void test_tenants_and_queues(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a1", 8, 0), 201));
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a2", 1, 40), 201));
    json_decref(h_submit(&d, NULL, h_pod("team-b", "b1", 2, 0), 201));
    json_decref(h_submit(&d, NULL, h_pod("team-b", "b2", 8, 0), 201)); /* no board left: pending */

    h_expect(&d, "GET", "/v1/tenants", TOKEN_A, NULL, 200, &a);
    assert_int_equal(json_array_size(json_object_get(a.json, "items")), 1);
    assert_string_equal(json_string_value(json_object_get(item(&a, 0), "name")), "team-a");
    assert_int_equal(num(item(&a, 0), "pods_running"), 2);
    assert_int_equal(num(item(&a, 0), "gpus_allocated"), 8);
    assert_int_equal(num(item(&a, 0), "gpu_milli_allocated"), 8400);
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/tenants/team-b", TOKEN_ADMIN, NULL, 200, &a);
    assert_int_equal(num(a.json, "pods_pending"), 1);
    assert_int_equal(num(a.json, "gpu_milli_pending"), 8000);
    h_answer_free(&a);
    h_request(&d, "GET", "/v1/tenants/team-b", TOKEN_A, NULL, 403);
    h_request(&d, "GET", "/v1/tenants/nobody", TOKEN_ADMIN, NULL, 404);
    h_request(&d, "GET", "/v1/tenants", NULL, NULL, 401);

    /* No Queue document: every pod runs in `default`, as in Volcano, which any token sees and
     * which deserves what its pods ask (8.4 + 10 of 20 cards). */
    for (int k = 0; k < 2; k++) {
        h_expect(&d, "GET", "/v1/queues", k ? TOKEN_B : TOKEN_ADMIN, NULL, 200, &a);
        assert_int_equal(num(a.json, "capacity_milli"), 20000);
        assert_int_equal(json_array_size(json_object_get(a.json, "items")), 1);
        assert_string_equal(json_string_value(json_object_get(item(&a, 0), "name")), "default");
        assert_int_equal(num(item(&a, 0), "deserved_milli"), 18400);
        assert_int_equal(num(item(&a, 0), "allocated_milli"), 10400);
        assert_int_equal(num(item(&a, 0), "pending_milli"), 8000);
        h_answer_free(&a);
    }
    h_request(&d, "GET", "/v1/queues/team-a", TOKEN_B, NULL, 404);

    /* a node's cards name only the asking tenant's pods */
    h_expect(&d, "GET", "/v1/pods/team-b/b1", TOKEN_B, NULL, 200, &a);
    char path[96];
    snprintf(path, sizeof(path), "/v1/nodes/%s",
             json_string_value(json_object_get(a.json, "node")));
    h_answer_free(&a);
    h_expect(&d, "GET", path, TOKEN_A, NULL, 200, &a);
    assert_null(strstr(a.body, "team-b/b1"));
    assert_int_equal(num(a.json, "gpu_milli_allocated") >= 2000, 1);
    h_answer_free(&a);
    h_expect(&d, "GET", path, TOKEN_B, NULL, 200, &a);
    assert_non_null(strstr(a.body, "team-b/b1"));
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A pod of @ns that names Volcano queue @queue (none when NULL). */
static long post_queued(const struct daemon *d, const char *ns, const char *name, int gpus,
                        int cores, const char *queue, struct answer *a)
{
    char *body = h_pod_annotated(ns, name, gpus, cores,
                                 queue ? "scheduling.volcano.sh/queue-name" : NULL, queue);
    assert_int_equal(h_call(d, "POST", "/v1/pods", h_token_of(ns), body, a), 0);
    free(body);
    return a->status;
}

static void queued(const struct daemon *d, const char *ns, const char *name, int gpus, int cores,
                   const char *queue, const char *state)
{
    struct answer a;
    if (post_queued(d, ns, name, gpus, cores, queue, &a) != 201 ||
        strcmp(json_string_value(json_object_get(a.json, "state")), state))
        fail_msg("%s/%s: %ld %s, expected 201 %s", ns, name, a.status, a.body, state);
    h_answer_free(&a);
}

static const char queues_policy[] = "apiVersion: scheduling.volcano.sh/v1beta1\n"
                                    "kind: Queue\n"
                                    "metadata: {name: research}\n"
                                    "spec:\n"
                                    "  weight: 3\n"
                                    "  capability: {nvidia.com/gpu: \"8\"}\n"
                                    "  overcommitRatio: {nvidia.com/gpu: 1.5}\n"
                                    "---\n"
                                    "apiVersion: scheduling.volcano.sh/v1beta1\n"
                                    "kind: Queue\n"
                                    "metadata: {name: prod}\n"
                                    "spec: {weight: 1}\n";

/* A Queue's capability of pods bounds its running pods, as Volcano counts each pod as pods: 1;
 * /v1/queues shows it. */
static void test_queue_capability_pods(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_policy(&d, "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                                  "metadata: {name: batch}\nspec: {capability: {pods: 1}}\n"),
                     0);
    assert_int_equal(h_start(&d), 0);
    queued(&d, "team-a", "b1", 1, 0, "batch", "running");
    queued(&d, "team-a", "b2", 1, 0, "batch", "pending");
    h_expect(&d, "GET", "/v1/pods/team-a/b2", TOKEN_A, NULL, 200, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "reason")),
                        "queue batch: pods 1+1 > capability 1");
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/queues/batch", TOKEN_A, NULL, 200, &a);
    assert_int_equal(num(json_object_get(a.json, "capability"), "pods"), 1);
    h_answer_free(&a);
    h_request(&d, "DELETE", "/v1/pods/team-a/b1", TOKEN_A, NULL, 200);
    h_expect(&d, "GET", "/v1/pods/team-a/b2", TOKEN_A, NULL, 200, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "state")), "running");
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Volcano Queue documents: pods join the queue they name (else `default`), a queue's capability
 * caps its running pods (shares up to overcommitRatio times it), and /v1/queues shows each
 * queue's deserved share by weight, capped at demand and capability. */
static void test_volcano_queues(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_policy(&d, queues_policy), 0);
    assert_int_equal(h_start(&d), 0);
    queued(&d, "team-a", "r1", 8, 0, "research", "running");
    queued(&d, "team-a", "r2", 1, 0, "research", "pending");
    queued(&d, "team-a", "r3", 1, 40, "research", "running"); /* 8.4 of 8 x 1.5 for shares */
    queued(&d, "team-b", "p1", 2, 0, "prod", "running");
    queued(&d, "team-b", "d1", 1, 0, NULL, "running");
    h_expect(&d, "GET", "/v1/pods/team-a/r2", TOKEN_A, NULL, 200, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "reason")),
                        "queue research: nvidia.com/gpu 8+1 > capability 8");
    assert_string_equal(json_string_value(json_object_get(a.json, "queue")), "research");
    h_answer_free(&a);
    assert_int_equal(post_queued(&d, "team-b", "x", 1, 0, "nope", &a), 400);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")),
                        "metadata.annotations.scheduling.volcano.sh/queue-name");
    h_answer_free(&a);
    assert_int_equal(h_call(&d, "POST", "/v1/podgroups", TOKEN_A,
                            "{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,"
                            "\"queue\":\"nope\"}}",
                            &a),
                     0);
    assert_int_equal(a.status, 400);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "spec.queue");
    h_answer_free(&a);

    /* 20 cards by weight 3:1:1, each capped: research at its capability, the others at demand */
    for (int round = 0; round < 2; round++) { /* and the same after a restart */
        h_expect(&d, "GET", "/v1/queues", TOKEN_B, NULL, 200,
                 &a); /* queues are cluster-wide: any tenant sees them */
        assert_int_equal(json_array_size(json_object_get(a.json, "items")), 3);
        const json_t *r = item(&a, 0), *p = item(&a, 1), *def = item(&a, 2);
        assert_string_equal(json_string_value(json_object_get(def, "name")), "default");
        assert_int_equal(num(r, "deserved_milli"), 8000);
        assert_int_equal(num(r, "allocated_milli"), 8400);
        assert_int_equal(num(r, "pending_milli"), 1000);
        assert_int_equal(num(r, "pods_pending"), 1);
        assert_int_equal(num(json_object_get(r, "capability"), "nvidia.com/gpu"), 8000);
        assert_int_equal(num(p, "deserved_milli"), 2000);
        assert_int_equal(num(def, "allocated_milli"), 1000);
        h_answer_free(&a);
        if (!round) {
            assert_int_equal(h_stop(&d), 0);
            assert_int_equal(h_start(&d), 0);
        }
    }
    h_expect(&d, "GET", "/v1/queues/prod", TOKEN_A, NULL, 200, &a);
    assert_int_equal(num(a.json, "weight"), 1);
    h_answer_free(&a);
    h_request(&d, "GET", "/v1/queues/nope", TOKEN_A, NULL, 404);
    h_expect(&d, "GET", "/v1/pods?queue=research", TOKEN_ADMIN, NULL, 200, &a);
    assert_int_equal(json_array_size(json_object_get(a.json, "items")), 3);
    h_answer_free(&a);

    /* The capability frees up: the waiting pod starts. */
    assert_int_equal(h_call(&d, "DELETE", "/v1/pods/team-a/r1", TOKEN_A, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/pods/team-a/r2", TOKEN_A, NULL, 200, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "state")), "running");
    h_answer_free(&a);

    /* A pod may name its PodGroup before it is posted: it waits for it, then runs in the
     * PodGroup's queue. */
    char *pod = h_pod_annotated("team-b", "g2m1", 1, 0, "scheduling.k8s.io/group-name", "g2");
    assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_B, pod, &a), 0);
    assert_int_equal(a.status, 201);
    assert_string_equal(json_string_value(json_object_get(a.json, "state")), "pending");
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "reason")),
                           "PodGroup team-b/g2 does not exist yet"));
    h_answer_free(&a);
    free(pod);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_B,
              "{\"metadata\":{\"name\":\"g2\"},\"spec\":{\"minMember\":1,\"queue\":\"prod\"}}",
              201);
    h_expect(&d, "GET", "/v1/pods/team-b/g2m1", TOKEN_B, NULL, 200, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "state")), "running");
    assert_string_equal(json_string_value(json_object_get(a.json, "queue")), "prod");
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Finished runs written into the ledger as the daemon writes them, from 2026-01-01T00:00:00Z. */
static void add_runs(const struct daemon *d)
{
    char path[128];
    sqlite3 *db;
    snprintf(path, sizeof(path), "%s/data/gpusched.db", d->dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "INSERT INTO ledger(pod_seq, namespace, name, tenant, uid, node, gpus,"
                     " gpu_milli, start_us, end_us) VALUES"
                     " (900001, 'team-a', 'r1', 'team-a', 'u1', 'n-a100-0', '0,1', 1000,"
                     "  1767225600000000, 1767229200000000),"
                     " (900002, 'team-a', 'r2', 'team-a', 'u2', 'n-t4-0', '3', 400,"
                     "  1767225600000000, 1767227400000000),"
                     " (900003, 'team-b', 'r3', 'team-b', 'u3', 'n-a100-1', '5', 1000,"
                     "  1767225600000000, 1767227400000000),"
                     " (900004, 'team-b', 'r4', 'team-b', 'u4', 'gone-node', '0', 1000,"
                     "  1767225600000000, 1767227400000000)",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
}

static void test_bills(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(h_stop(&d), 0);
    add_runs(&d);
    assert_int_equal(h_start(&d), 0);

    /* team-a: 2 A100 cards for an hour at $8 (seed 000 4.2); 40 % of a T4 for half an hour,
     * 4 steps of 10 % at $2.23 / 16 each */
    h_expect(&d, "GET", "/v1/bills", TOKEN_A, NULL, 200, &a);
    json_t *lines = json_object_get(a.json, "lines");
    assert_int_equal(json_array_size(lines), 2);
    json_t *l0 = json_array_get(lines, 0), *l1 = json_array_get(lines, 1);
    assert_string_equal(json_string_value(json_object_get(l0, "resource")),
                        "A100-SXM4-80GB exclusive");
    assert_string_equal(json_string_value(json_object_get(l0, "date")), "2026-01-01");
    assert_int_equal(num(l0, "quantity"), 7200);
    assert_string_equal(json_string_value(json_object_get(l0, "cost")), "16.00");
    assert_string_equal(json_string_value(json_object_get(l1, "resource")), "T4 shared");
    assert_int_equal(num(l1, "quantity"), 7200);
    assert_int_equal(num(l1, "cost_udollars"), 278750);
    assert_int_equal(num(a.json, "total_udollars"), 16278750);
    assert_int_equal(json_array_size(json_object_get(a.json, "unpriced")), 0);
    h_answer_free(&a);

    /* the admin sees both; a run on a node the inventory lost is listed, not priced */
    h_expect(&d, "GET", "/v1/bills", TOKEN_ADMIN, NULL, 200, &a);
    assert_int_equal(json_array_size(json_object_get(a.json, "tenants")), 2);
    assert_int_equal(num(a.json, "total_udollars"), 16278750 + 4000000);
    assert_int_equal(json_array_size(json_object_get(a.json, "unpriced")), 1);
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/tenants/team-b/bill", TOKEN_B, NULL, 200, &a);
    assert_int_equal(num(a.json, "total_udollars"), 4000000);
    h_answer_free(&a);
    const char *other[][2] = {{"/v1/bills?tenant=team-b", "tenant"},
                              {"/v1/tenants/team-b/bill", "Authorization"},
                              {"/v1/tenants/team-b", "Authorization"}};
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
        h_expect(&d, "GET", other[i][0], TOKEN_A, NULL, 403, &a); /* naming what is at fault */
        assert_string_equal(json_string_value(json_object_get(a.json, "field")), other[i][1]);
        h_answer_free(&a);
    }
    h_request(&d, "GET", "/v1/bills", NULL, NULL, 401);
    h_request(&d, "GET", "/v1/tenants/team-a/bills", TOKEN_A, NULL, 404);

    /* /metrics carries the same totals, from the first scrape that names tenants (it was the
     * next snapshot's: the series started late, as if the tenants had run up the bill then) */
    h_expect(&d, "GET", "/metrics", TOKEN_ADMIN, NULL, 200, &a);
    const char *bill = strstr(a.body, "\ngpusched_bill_accrued_total{");
    if (!bill ||
        !strstr(bill,
                "\ngpusched_bill_accrued_total{tenant=\"team-a\",currency=\"USD\"} 16.278750\n"
                "gpusched_bill_accrued_total{tenant=\"team-b\",currency=\"USD\"} 4.000000\n"))
        fail_msg("not the bills: %.300s", bill ? bill : "(none)");
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A run is priced as it ran: by the model the ledger recorded (the node has another now) and, for
 * a MIG instance, at its profile's rate. */
static void test_bills_as_run(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    char path[128];
    sqlite3 *db;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    assert_int_equal(h_stop(&d), 0);
    snprintf(path, sizeof(path), "%s/data/gpusched.db", d.dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "INSERT INTO ledger(pod_seq, namespace, name, tenant, uid, node, gpus,"
                     " gpu_milli, start_us, end_us, model, mig_profile) VALUES"
                     " (900101, 'team-a', 'm1', 'team-a', 'u1', 'n-a100-0', '0', 1000,"
                     "  1767225600000000, 1767229200000000, 'T4', ''),"
                     " (900102, 'team-a', 'm2', 'team-a', 'u2', 'n-a100-1', '3', 571,"
                     "  1767225600000000, 1767227400000000, 'A100-SXM4-80GB', '3g.40gb')",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(h_start(&d), 0);
    h_expect(&d, "GET", "/v1/bills", TOKEN_A, NULL, 200, &a);
    const json_t *lines = json_object_get(a.json, "lines");
    assert_int_equal(json_array_size(lines), 2);
    const json_t *mig = json_array_get(lines, 0), *t4 = json_array_get(lines, 1);
    assert_string_equal(json_string_value(json_object_get(mig, "resource")),
                        "A100-SXM4-80GB mig 3g.40gb");
    assert_string_equal(json_string_value(json_object_get(mig, "cost")), "2.00"); /* $4/h */
    assert_string_equal(json_string_value(json_object_get(t4, "resource")), "T4 exclusive");
    assert_string_equal(json_string_value(json_object_get(t4, "cost")), "2.23");
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* On the manual clock, which starts at 0, a run that ended at 0 ended: it was billed up to now,
 * as if it still ran (a ledger end of 0 read as none). */
static void test_bills_from_zero(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    assert_int_equal(h_setup(&d, NULL), 0);
    d.manual_clock = 1;
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, TOKEN_A, h_pod("team-a", "short", 8, 0), 201));
    json_decref(h_submit(&d, TOKEN_A, h_pod("team-a", "long", 1, 0), 201));
    h_request(&d, "DELETE", "/v1/pods/team-a/short", TOKEN_A, NULL, 200);
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 3600}", 200);
    h_expect(&d, "GET", "/v1/bills", TOKEN_A, NULL, 200, &a);
    const json_t *lines = json_object_get(a.json, "lines");
    assert_int_equal(json_array_size(lines), 1);
    assert_int_equal(num(json_array_get(lines, 0), "quantity"), 3600); /* long's hour alone */
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tenants_and_queues),    cmocka_unit_test(test_volcano_queues),
        cmocka_unit_test(test_queue_capability_pods), cmocka_unit_test(test_bills),
        cmocka_unit_test(test_bills_as_run),          cmocka_unit_test(test_bills_from_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
