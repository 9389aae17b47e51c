/*
 * Priority and preemption on the real daemon, with PriorityClass documents in a policy file: a
 * pod's priorityClassName gives its priority (globalDefault for a pod naming none; an unknown
 * class or a spec.priority its class does not give is a 400); a pod of higher priority that fits
 * nowhere sends back the fewest pods of lower priority it needs, of any queue as kube-scheduler's
 * preemption does, naming itself in the log; a pod run again after an eviction is spared a while;
 * a class with preemptionPolicy Never waits instead; pending pods are retried highest priority
 * first; the victims' count is in /metrics.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/api.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char classes[] = "apiVersion: scheduling.k8s.io/v1\n"
                              "kind: PriorityClass\n"
                              "metadata: {name: high}\n"
                              "value: 1000\n"
                              "---\n"
                              "apiVersion: scheduling.k8s.io/v1\n"
                              "kind: PriorityClass\n"
                              "metadata: {name: high-never}\n"
                              "value: 1000\n"
                              "preemptionPolicy: Never\n"
                              "---\n"
                              "apiVersion: scheduling.k8s.io/v1\n"
                              "kind: PriorityClass\n"
                              "metadata: {name: mid}\n"
                              "value: 100\n"
                              "---\n"
                              "apiVersion: scheduling.k8s.io/v1\n"
                              "kind: PriorityClass\n"
                              "metadata: {name: low}\n"
                              "value: 10\n"
                              "globalDefault: true\n";

static int in_own_queue; /* pods name the Queue of their namespace's name */

/* POST a pod of @ns with @gpus cards, class @pclass and spec.priority @prio (when >= 0). */
static long post(const struct daemon *d, const char *ns, const char *name, int gpus,
                 const char *pclass, int prio, struct answer *a)
{
    char *body = h_pod(ns, name, gpus, 0);
    json_t *pod = json_loads(body, 0, NULL);
    free(body);
    json_t *spec = json_object_get(pod, "spec");
    if (pclass)
        json_object_set_new(spec, "priorityClassName", json_string(pclass));
    if (prio >= 0)
        json_object_set_new(spec, "priority", json_integer(prio));
    if (in_own_queue)
        json_object_set_new(json_object_get(pod, "metadata"), "annotations",
                            json_pack("{s:s}", "scheduling.volcano.sh/queue-name", ns));
    body = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    assert_int_equal(h_call(d, "POST", "/v1/pods", h_token_of(ns), body, a), 0);
    free(body);
    return a->status;
}

/* Submit; the answer's state must be @state. */
static void submit_in_state(const struct daemon *d, const char *ns, const char *name, int gpus,
                            const char *pclass, const char *state)
{
    struct answer a;
    if (post(d, ns, name, gpus, pclass, -1, &a) != 201 ||
        strcmp(json_string_value(json_object_get(a.json, "state")), state))
        fail_msg("%s/%s: %ld %s, expected 201 %s", ns, name, a.status, a.body, state);
    h_answer_free(&a);
}

/* Pod @ns/@name's state, and its reason into @reason; its priority must be @prio. */
static const char *state_of(const struct daemon *d, const char *ns, const char *name, int prio,
                            char *reason, size_t cap)
{
    static char state[16];
    struct answer a;
    char path[96];
    snprintf(path, sizeof(path), "/v1/pods/%s/%s", ns, name);
    assert_int_equal(h_call(d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    snprintf(state, sizeof(state), "%s", json_string_value(json_object_get(a.json, "state")));
    const char *r = json_string_value(json_object_get(a.json, "reason"));
    snprintf(reason, cap, "%s", r ? r : "");
    assert_int_equal(json_integer_value(json_object_get(a.json, "priority")), prio);
    h_answer_free(&a);
    return state;
}

/* Pod @ns/@name's start_time: NULL when null. */
static const char *start_of(const struct daemon *d, const char *ns, const char *name)
{
    static char start[64];
    struct answer a;
    char path[96];
    snprintf(path, sizeof(path), "/v1/pods/%s/%s", ns, name);
    assert_int_equal(h_call(d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
    const char *s = json_string_value(json_object_get(a.json, "start_time"));
    snprintf(start, sizeof(start), "%s", s ? s : "");
    int null = s == NULL;
    h_answer_free(&a);
    return null ? NULL : start;
}

/* Pod @ns/@name was evicted @n times, the last saying @why (a pass since has said why it waits
 * now in its reason). */
static void evicted(const struct daemon *d, const char *ns, const char *name, int n,
                    const char *why)
{
    struct answer a;
    char path[96];
    snprintf(path, sizeof(path), "/v1/pods/%s/%s", ns, name);
    assert_int_equal(h_call(d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(json_integer_value(json_object_get(a.json, "evictions")), n);
    json_t *last = json_object_get(a.json, "last_eviction");
    assert_string_equal(json_string_value(json_object_get(last, "reason")), why);
    assert_true(json_is_string(json_object_get(last, "time")));
    h_answer_free(&a);
}

static void field_refused(const struct daemon *d, const char *pclass, int prio, const char *field)
{
    struct answer a;
    assert_int_equal(post(d, "team-a", "bad", 1, pclass, prio, &a), 400);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), field);
    h_answer_free(&a);
}

static void cancel(const struct daemon *d, const char *ns, const char *name)
{
    struct answer a;
    char path[96];
    snprintf(path, sizeof(path), "/v1/pods/%s/%s", ns, name);
    assert_int_equal(h_call(d, "DELETE", path, TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    h_answer_free(&a);
}

static void test_preemption(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    char reason[512], path[16] = "";
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_policy(&d, classes), 0);
    assert_int_equal(h_start(&d), 0);
    submit_in_state(&d, "team-a", "lo1", 8, NULL, "running"); /* globalDefault: low, 10 */
    submit_in_state(&d, "team-a", "lo2", 8, "low", "running");
    submit_in_state(&d, "team-a", "lo3", 4, NULL, "running"); /* the T4 box: every card is taken */
    field_refused(&d, "nope", -1, "spec.priorityClassName");
    field_refused(&d, "high", 5, "spec.priority");
    field_refused(&d, NULL, 2000000000, "spec.priority"); /* no pod ranks itself */

    /* Priority preemption is cluster-wide, as kube-scheduler's: team-b's pod takes a board from
     * one of team-a's low pods, which waits again; when it leaves, that pod runs again. */
    submit_in_state(&d, "team-b", "hb", 8, "high", "running");
    /* team-a reads that another tenant's pod took it, not which (the admin's log names it) */
    assert_true(h_log_has(&d, "reason=\"preempted by a pod of another tenant\" by=team-b/hb"));
    assert_false(h_log_has(&d, "reason=\"preempted by team-b/hb\""));
    int seen = 0;
    for (int i = 1; i <= 2; i++) {
        char p[32];
        snprintf(p, sizeof(p), "/v1/pods/team-a/lo%d", i);
        assert_int_equal(h_call(&d, "GET", p, TOKEN_A, NULL, &a), 0);
        const char *why =
            json_string_value(json_object_get(json_object_get(a.json, "last_eviction"), "reason"));
        assert_null(strstr(a.body, "hb"));
        seen += why && !strcmp(why, "preempted by a pod of another tenant");
        h_answer_free(&a);
    }
    assert_int_equal(seen, 1);
    cancel(&d, "team-b", "hb");
    assert_string_equal(state_of(&d, "team-a", "lo1", 10, reason, sizeof(reason)), "running");
    assert_string_equal(state_of(&d, "team-a", "lo2", 10, reason, sizeof(reason)), "running");

    /* One 8-card board is needed: one victim, on one board (the pod run again after its
     * eviction is spared for a while, so the other goes). */
    submit_in_state(&d, "team-a", "hi1", 8, "high", "running");
    int pending = 0;
    for (int i = 1; i <= 2; i++) {
        char name[8];
        snprintf(name, sizeof(name), "lo%d", i);
        if (!strcmp(state_of(&d, "team-a", name, 10, reason, sizeof(reason)), "pending")) {
            pending++;
            assert_non_null(strstr(reason, "Insufficient nvidia.com/gpu")); /* tried again */
            evicted(&d, "team-a", name, 1, "preempted by team-a/hi1");      /* ... and why it was */
            assert_null(start_of(&d, "team-a", name)); /* no start: as after a restart */
            snprintf(path, sizeof(path), "%s", name);
        }
    }
    assert_int_equal(pending, 1);
    assert_true(h_log_has(&d, "reason=\"preempted by team-a/hi1\""));
    assert_string_equal(state_of(&d, "team-a", "lo3", 10, reason, sizeof(reason)), "running");

    /* preemptionPolicy Never: it waits, and so does an equal priority. */
    submit_in_state(&d, "team-a", "nv1", 8, "high-never", "pending");
    assert_int_equal(h_call(&d, "GET", "/metrics", NULL, NULL, &a), 0);
    assert_non_null(strstr(a.body, "\ngpusched_preemption_victims_total 2\n"));
    h_answer_free(&a);

    /* After a restart nothing moves; then hi1 leaves and the 1000 pod goes before the 10 one. */
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    evicted(&d, "team-a", path, 1, "preempted by team-a/hi1"); /* stored */
    assert_string_equal(state_of(&d, "team-a", "hi1", 1000, reason, sizeof(reason)), "running");
    assert_string_equal(state_of(&d, "team-a", "nv1", 1000, reason, sizeof(reason)), "pending");
    cancel(&d, "team-a", "hi1");
    assert_string_equal(state_of(&d, "team-a", "nv1", 1000, reason, sizeof(reason)), "running");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* What a preemption frees goes first to a waiting pod of higher priority that may not preempt
 * (preemptionPolicy: Never), as kube-scheduler's queue hands it out; the preemptor preempts again
 * for itself (preemption.md). */
static void test_freed_goes_higher_first(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    char reason[512];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_policy(&d, classes), 0);
    assert_int_equal(h_start(&d), 0);
    submit_in_state(&d, "team-a", "lo1", 8, NULL, "running");
    submit_in_state(&d, "team-a", "lo2", 8, NULL, "running");
    submit_in_state(&d, "team-a", "nv", 8, "high-never", "pending");
    submit_in_state(&d, "team-a", "md", 8, "mid", "running");
    assert_string_equal(state_of(&d, "team-a", "nv", 1000, reason, sizeof(reason)), "running");
    assert_string_equal(state_of(&d, "team-a", "lo1", 10, reason, sizeof(reason)), "pending");
    assert_string_equal(state_of(&d, "team-a", "lo2", 10, reason, sizeof(reason)), "pending");
    evicted(&d, "team-a", "lo1", 1, "preempted by team-a/md");
    evicted(&d, "team-a", "lo2", 1, "preempted by team-a/md");
    assert_int_equal(h_call(&d, "GET", "/metrics", NULL, NULL, &a), 0);
    assert_non_null(strstr(a.body, "\ngpusched_preemption_victims_total 2\n"));
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* POST /v1/clock with the admin token, @body; its next_end_us (-1 null). */
static long long clock_next(const struct daemon *d, const char *body)
{
    struct answer a;
    assert_int_equal(h_call(d, "POST", "/v1/clock", TOKEN_ADMIN, body, &a), 0);
    assert_int_equal(a.status, 200);
    json_t *e = json_object_get(a.json, "next_end_us");
    long long v = json_is_null(e) ? -1 : (long long)json_integer_value(e);
    h_answer_free(&a);
    return v;
}

/* A preempted pod resumes where its last checkpoint left it (gpusched.io/checkpoint-interval),
 * across a restart (store schema 8's pods.saved_us) and a reload (SIGHUP: a new scheduler of
 * the pods held): 45 s into a 100 s run with checkpoints every 30 s, it has 70 s left. */
static void test_checkpoint_kept(void **state)
{
    (void)state;
    struct daemon d;
    char reason[512], path[160];
    in_own_queue = 0;
    assert_int_equal(h_setup(&d, NULL), 0);
    d.manual_clock = 1;
    assert_int_equal(h_policy(&d, classes), 0);
    assert_int_equal(h_start(&d), 0);
    json_t *p = h_pod_json("team-a", "ck", 8, 0);
    h_annotate(p, "sim.gpusched.io/duration", "100s");
    h_annotate(p, "gpusched.io/checkpoint-interval", "30s");
    json_decref(h_submit(&d, TOKEN_A, json_dumps(p, JSON_COMPACT), 201));
    json_decref(p);
    submit_in_state(&d, "team-a", "h0", 8, "high", "running"); /* the other board */
    submit_in_state(&d, "team-a", "t4", 4, NULL, "running");   /* the T4 box */
    /* started at the manual clock's 0: a time, not null as for a pod not started */
    assert_string_equal(start_of(&d, "team-a", "h0"), "1970-01-01T00:00:00.000000Z");
    assert_int_equal(clock_next(&d, "{\"advance_seconds\": 45}"), 100000000);
    submit_in_state(&d, "team-b", "hb", 8, "high", "running");
    assert_string_equal(state_of(&d, "team-a", "ck", 10, reason, sizeof(reason)), "pending");
    assert_int_equal(h_stop(&d), 0);
    sqlite3 *db;
    snprintf(path, sizeof(path), "%s/data/gpusched.db", d.dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *q;
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT saved_us FROM pods WHERE name = 'ck'", -1, &q, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(q, 0), 30000000);
    sqlite3_finalize(q);
    sqlite3_close(db);

    assert_int_equal(h_start(&d), 0); /* the manual clock goes on from 45 s */
    assert_int_equal(h_reload(&d), 0);
    cancel(&d, "team-b", "hb");
    assert_string_equal(state_of(&d, "team-a", "ck", 10, reason, sizeof(reason)), "running");
    assert_int_equal(clock_next(&d, "{\"advance_seconds\": 1}"), 45000000 + 70000000);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Reclaim between queues through POST /v1/pods: each tenant's pods name a Queue of weight 1.
 * team-a fills every card (20), beyond its deserved share once team-b asks; team-b's
 * 4-card pod is within its own (4 of 20) and takes them back from team-a, whose queue is not
 * taken below its deserved 16: the 4-card pod on the T4 box goes, not a board. Priorities are
 * equal, so this is reclaim, not preemption; /metrics counts it by reason. */
static void test_reclaim(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    char reason[512];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_policy(&d, "kind: Queue\nmetadata: {name: team-a}\nspec: {weight: 1}\n---\n"
                                  "kind: Queue\nmetadata: {name: team-b}\nspec: {weight: 1}\n"),
                     0);
    assert_int_equal(h_start(&d), 0);
    in_own_queue = 1;
    submit_in_state(&d, "team-a", "a1", 8, NULL, "running");
    submit_in_state(&d, "team-a", "a2", 8, NULL, "running");
    submit_in_state(&d, "team-a", "a3", 4, NULL, "running");
    submit_in_state(&d, "team-b", "b1", 4, NULL, "running");
    assert_string_equal(state_of(&d, "team-a", "a3", 0, reason, sizeof(reason)), "pending");
    assert_string_equal(state_of(&d, "team-a", "a1", 0, reason, sizeof(reason)), "running");
    assert_string_equal(state_of(&d, "team-a", "a2", 0, reason, sizeof(reason)), "running");
    assert_true(h_log_has(&d, "reason=\"reclaimed by a pod of another tenant\" by=team-b/b1"));
    assert_int_equal(h_call(&d, "GET", "/metrics", NULL, NULL, &a), 0);
    assert_non_null(strstr(a.body, "\ngpusched_pods_evicted_total{reason=\"reclaim\"} 1\n"));
    assert_non_null(strstr(a.body, "\ngpusched_pods_evicted_total{reason=\"preemption\"} 0\n"));
    h_answer_free(&a);
    /* the eviction is in the store: after a restart it is as it was */
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    assert_string_equal(state_of(&d, "team-a", "a3", 0, reason, sizeof(reason)), "pending");
    assert_string_equal(state_of(&d, "team-b", "b1", 0, reason, sizeof(reason)), "running");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preemption),
        cmocka_unit_test(test_freed_goes_higher_first),
        cmocka_unit_test(test_reclaim),
        cmocka_unit_test(test_checkpoint_kept),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
