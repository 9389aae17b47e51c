/*
 * PodGroups on the real daemon: a gang of four 8-card pods with minMember 4 on a cluster with
 * room for three (four 8-card A100 boards, one taken by a blocker) places none, naming the gang
 * and holding no card, then all four at once when the blocker is cancelled; the PodGroup and its
 * gang's waiting survive a restart; a gang its GPUQuota cannot hold whole starts no member and
 * leaves no use counted; a PodGroup's minResources hold it back until they pass Volcano's
 * enqueue check, across a restart and into the snapshot; bad PodGroup bodies are refused naming the
 * field; labels and annotations are kept and shown.
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
#include <time.h>

/* Four 8-card A100 boards. */
static const char nodes[] = "sn,cpu_milli,memory_mib,gpu,model\n"
                            "n-a100-0,96000,786432,8,A100-SXM4-80GB\n"
                            "n-a100-1,96000,786432,8,A100-SXM4-80GB\n"
                            "n-a100-2,96000,786432,8,A100-SXM4-80GB\n"
                            "n-a100-3,96000,786432,8,A100-SXM4-80GB\n";

/* An 8-card pod of team-a, in PodGroup @group when not NULL. */
/* A member of PodGroup @group (none when NULL) asking for a whole board. */
static void submit_member(const struct daemon *d, const char *name, const char *group)
{
    json_decref(h_submit(
        d, TOKEN_A,
        h_pod_annotated("team-a", name, 8, 0, group ? "scheduling.k8s.io/group-name" : NULL, group),
        201));
}

static void pod_is(const struct daemon *d, const char *name, const char *state, const char *why)
{
    struct answer a;
    char path[96];
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    h_expect(d, "GET", path, TOKEN_A, NULL, 200, &a);
    const char *s = json_string_value(json_object_get(a.json, "state"));
    const char *r = json_string_value(json_object_get(a.json, "reason"));
    if (strcmp(s, state) || (why && (!r || !strstr(r, why))))
        fail_msg("%s: %s (%s), expected %s with \"%s\"", name, s, r ? r : "", state,
                 why ? why : "");
    h_answer_free(&a);
}

/* @o's string @key, "(none)" when it is not a string (null): to compare, not to crash on */
static const char *str_of(const json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : "(none)";
}

static void group_is(const struct daemon *d, const char *phase, int members, int running)
{
    struct answer a;
    h_expect(d, "GET", "/v1/podgroups/team-a/pg1", TOKEN_A, NULL, 200, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "phase")), phase);
    assert_int_equal(json_integer_value(json_object_get(a.json, "minMember")), 4);
    assert_int_equal(json_integer_value(json_object_get(a.json, "members")), members);
    assert_int_equal(json_integer_value(json_object_get(a.json, "running")), running);
    /* pg1 names neither: its queue is default, as Volcano's admission writes it in; no class is
     * null, not "", which a post would refuse */
    assert_string_equal(str_of(a.json, "queue"), "default");
    assert_true(json_is_null(json_object_get(a.json, "priorityClassName")));
    h_answer_free(&a);
}

static const char group[] =
    "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
    "\"metadata\":{\"name\":\"pg1\",\"namespace\":\"team-a\"},"
    "\"spec\":{\"minMember\":4}}";

static void test_gang_all_or_nothing(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_write(d.nodes, nodes), 0);
    assert_int_equal(h_start(&d), 0);
    submit_member(&d, "blocker", NULL); /* takes one board: room for three members is left */
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A,
              "{\"metadata\":{\"name\":\"pgx\"},\"spec\":{\"minMember\":1,"
              "\"priorityClassName\":\"high\"}}",
              400); /* no such PriorityClass: refused, not ignored */
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A, group, 201);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A, group, 200); /* the same: it is returned */
    h_podgroup(&d, "team-a", "pg1", 3, 409);                     /* another spec under its name */
    submit_member(&d, "w0", "pg1");
    /* the coscheduling plugin's label (and its older name) joins a PodGroup as the annotation */
    static const char *const label[] = {"scheduling.x-k8s.io/pod-group",
                                        "pod-group.scheduling.sigs.k8s.io"};
    for (int i = 0; i < 2; i++) {
        json_t *p = h_pod_json("team-a", i ? "w2" : "w1", 8, 0);
        json_object_set_new(json_object_get(p, "metadata"), "labels",
                            json_pack("{ss}", label[i], "pg1"));
        json_decref(h_submit(&d, TOKEN_A, json_dumps(p, JSON_COMPACT), 201));
        json_decref(p);
    }
    pod_is(&d, "w0", "pending", "PodGroup pg1: 3 of minMember 4 pods submitted");
    submit_member(&d, "w3", "pg1");
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof(name), "w%d", i);
        pod_is(&d, name, "pending",
               "gang pg1: member w3 cannot be placed: 0/4 nodes are available");
    }
    group_is(&d, "Pending", 4, 0);
    struct answer a;
    h_expect(&d, "GET", "/v1/status", TOKEN_A, NULL, 200, &a);
    assert_int_equal(json_integer_value(json_object_get(a.json, "gpu_milli_allocated")), 8000);
    h_answer_free(&a); /* the blocker's: no partial reservation is left behind */

    /* The gang and its waiting come back after a restart. */
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    group_is(&d, "Pending", 4, 0);
    pod_is(&d, "w3", "pending", "gang pg1: member w3 cannot be placed: 0/4 nodes are available");

    /* Room for the fourth: all four start in one go. */
    h_request(&d, "DELETE", "/v1/pods/team-a/blocker", TOKEN_A, NULL, 200);
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof(name), "w%d", i);
        pod_is(&d, name, "running", NULL);
    }
    group_is(&d, "Running", 4, 4);
    h_expect(&d, "GET", "/v1/podgroups", TOKEN_A, NULL, 200, &a);
    assert_int_equal(json_array_size(json_object_get(a.json, "items")), 1);
    h_answer_free(&a);
    h_request(&d, "DELETE", "/v1/podgroups/team-a/pg1", TOKEN_A, NULL, 409); /* it has pods */
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    group_is(&d, "Running", 4, 4);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A whole-board member of PodGroup @pg in task @task (volcano.sh/task-spec, as Volcano's job
 * controller annotates a Job's pods). */
static void submit_task(const struct daemon *d, const char *pg, const char *task, const char *name)
{
    json_t *p = h_pod_json("team-a", name, 8, 0);
    h_annotate(p, "scheduling.k8s.io/group-name", pg);
    h_annotate(p, "volcano.sh/task-spec", task);
    json_decref(h_submit(d, TOKEN_A, json_dumps(p, JSON_COMPACT), 201));
    json_decref(p);
}

#define TASK_GROUP(tasks)                                                                          \
    "{\"metadata\":{\"name\":\"pgt\",\"namespace\":\"team-a\"},"                                   \
    "\"spec\":{\"minMember\":3,\"minTaskMember\":{" tasks "}}}"

static void tasks_shown(const struct daemon *d)
{
    struct answer a;
    h_expect(d, "GET", "/v1/podgroups/team-a/pgt", TOKEN_A, NULL, 200, &a);
    json_t *tm = json_object_get(a.json, "minTaskMember");
    assert_int_equal(json_object_size(tm), 2);
    assert_int_equal(json_integer_value(json_object_get(tm, "ps")), 1);
    assert_int_equal(json_integer_value(json_object_get(tm, "worker")), 2);
    h_answer_free(&a);
}

/*
 * A Volcano Job's PodGroup (minMember 3, minTaskMember {ps: 1, worker: 2}) on three free boards:
 * three workers make minMember, but without the ps the gang waits whole, saying which task it
 * lacks; with the ps come, the three that start are the ps and two workers, not the first three
 * members (Volcano's gang plugin). The same spec posted again, its tasks in another order, is the
 * PodGroup held; another minimum is a 409. minTaskMember is stored: shown after a restart.
 */
static void test_gang_task_min(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_write(d.nodes, nodes), 0);
    assert_int_equal(h_start(&d), 0);
    submit_member(&d, "blocker", NULL); /* room for three members is left */
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A, TASK_GROUP("\"ps\":1,\"worker\":2"), 201);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A, TASK_GROUP("\"worker\":2,\"ps\":1"), 200);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A, TASK_GROUP("\"worker\":3,\"ps\":1"), 409);
    tasks_shown(&d);
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "w%d", i);
        submit_task(&d, "pgt", "worker", name);
    }
    pod_is(&d, "w0", "pending", "PodGroup pgt: task ps lacks 1 of minTaskMember 1");
    pod_is(&d, "w2", "pending", "task ps lacks 1");
    submit_task(&d, "pgt", "ps", "ps0");
    pod_is(&d, "ps0", "running", NULL);
    pod_is(&d, "w0", "running", NULL);
    pod_is(&d, "w1", "running", NULL);
    pod_is(&d, "w2", "pending", NULL);
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    tasks_shown(&d);
    pod_is(&d, "ps0", "running", NULL);
    pod_is(&d, "w2", "pending", NULL);
    /* the snapshot writes it back, and the simulator continues it */
    struct answer a;
    char path[128], json[128];
    h_expect(&d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, 200, &a);
    if (!strstr(a.body, "  minTaskMember: {\"ps\":1,\"worker\":2}\n"))
        fail_msg("snapshot: %s", a.body);
    snprintf(path, sizeof(path), "%s/snap.yaml", d.dir);
    snprintf(json, sizeof(json), "%s/snap.json", d.dir);
    assert_int_equal(h_write(path, a.body), 0);
    h_answer_free(&a);
    json_t *out = h_continued(path, json), *p;
    size_t i;
    int seen = 0;
    json_array_foreach(json_object_get(out, "pods"), i, p)
    {
        const char *n = json_string_value(json_object_get(p, "name"));
        seen += n && !strcmp(n, "team-a/w2") && !strcmp(str_of(p, "state"), "pending");
        seen += n && !strcmp(n, "team-a/ps0") && !strcmp(str_of(p, "state"), "running");
    }
    assert_int_equal(seen, 2);
    json_decref(out);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Member @name of PodGroup @pg, one card, running @secs seconds on the manual clock; ended by
 * its activeDeadlineSeconds @deadline before that when above 0. */
static void submit_ended(const struct daemon *d, const char *pg, const char *name, const char *secs,
                         int deadline)
{
    json_t *p = h_pod_json("team-a", name, 1, 0);
    h_annotate(p, "scheduling.k8s.io/group-name", pg);
    h_annotate(p, "sim.gpusched.io/duration", secs);
    if (deadline > 0)
        json_object_set_new(json_object_get(p, "spec"), "activeDeadlineSeconds",
                            json_integer(deadline));
    json_decref(h_submit(d, TOKEN_A, json_dumps(p, JSON_COMPACT), 201));
    json_decref(p);
}

static void succeeded_is(const struct daemon *d, int n, const char *phase)
{
    struct answer a;
    h_expect(d, "GET", "/v1/podgroups/team-a/pg2", TOKEN_A, NULL, 200, &a);
    assert_int_equal(json_integer_value(json_object_get(a.json, "succeeded")), n);
    assert_string_equal(json_string_value(json_object_get(a.json, "phase")), phase);
    h_answer_free(&a);
}

/* A one-card member of PodGroup pgs in task @task, running @secs seconds on the manual clock. */
static void submit_task_ended(const struct daemon *d, const char *task, const char *name,
                              const char *secs)
{
    json_t *p = h_pod_json("team-a", name, 1, 0);
    h_annotate(p, "scheduling.k8s.io/group-name", "pgs");
    h_annotate(p, "volcano.sh/task-spec", task);
    h_annotate(p, "sim.gpusched.io/duration", secs);
    json_decref(h_submit(d, TOKEN_A, json_dumps(p, JSON_COMPACT), 201));
    json_decref(p);
}

/* A member that Succeeded counts for its task, as Volcano counts it; after a restart gpuschedd
 * knows how many completed but not their tasks, and counts them for the task that lacks: the ps
 * of a minMember 2, {ps: 1, worker: 1} group completed, a worker running, a new worker starts
 * alone, before the restart and after it (not held back for a ps, which would never come). */
static void test_gang_task_succeeded(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    d.manual_clock = 1;
    assert_int_equal(h_write(d.nodes, nodes), 0);
    assert_int_equal(h_start(&d), 0);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A,
              "{\"metadata\":{\"name\":\"pgs\",\"namespace\":\"team-a\"},"
              "\"spec\":{\"minMember\":2,\"minTaskMember\":{\"ps\":1,\"worker\":1}}}",
              201);
    submit_task_ended(&d, "ps", "ps0", "10s");
    submit_task_ended(&d, "worker", "w0", "1000s");
    pod_is(&d, "ps0", "running", NULL);
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 10}", 200);
    submit_task_ended(&d, "worker", "w1", "10s");
    pod_is(&d, "w1", "running", NULL);
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    submit_task_ended(&d, "worker", "w2", "10s");
    pod_is(&d, "w2", "running", NULL);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A gang's pending reason names its PodGroup whole, up to a 253-byte name (Kubernetes' longest
 * object name), and what holds it back after, the member it names cut short where its name is
 * long too: the daemon keeps the core's reason of up to 512 bytes, before and after a restart. */
static void test_gang_long_name(void **state)
{
    (void)state;
    struct daemon d;
    char pg[254], why[512], w4[254];
    memset(pg, 'g', 253);
    pg[253] = '\0';
    memset(w4, 'w', 252);
    w4[252] = '4';
    w4[253] = '\0';
    snprintf(why, sizeof(why),
             "gang %s: member %.64s... cannot be placed: 0/4 nodes are available: 4 Insufficient "
             "nvidia.com/gpu.",
             pg, w4);
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_write(d.nodes, nodes), 0);
    assert_int_equal(h_start(&d), 0);
    h_podgroup(&d, "team-a", pg, 5, 201); /* five boards asked, four exist */
    for (int i = 0; i < 5; i++) {
        char name[254];
        if (i < 4)
            snprintf(name, sizeof(name), "w%d", i);
        else
            memcpy(name, w4, sizeof(w4));
        submit_member(&d, name, pg);
    }
    for (int restart = 0; restart < 2; restart++) {
        pod_is(&d, "w0", "pending", why);
        assert_int_equal(h_stop(&d), 0);
        assert_int_equal(h_start(&d), 0);
    }
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Members that completed count towards minMember, as Volcano counts a PodGroup's Succeeded pods
 * (one its activeDeadlineSeconds ended, Failed, does not), and go on counting across a reload
 * (SIGHUP: a new scheduler of the pods held) and a restart: a later member of a minMember 2 group
 * whose first two completed starts alone each time. Not once the PodGroup is deleted: one made
 * again under its name starts from none. */
static void test_gang_succeeded_kept(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    d.manual_clock = 1;
    assert_int_equal(h_write(d.nodes, nodes), 0);
    assert_int_equal(h_start(&d), 0);
    h_podgroup(&d, "team-a", "pg2", 2, 201);
    submit_ended(&d, "pg2", "m0", "10s", 0);
    pod_is(&d, "m0", "pending", "PodGroup pg2: 1 of minMember 2 pods submitted");
    submit_ended(&d, "pg2", "m1", "10s", 0);
    pod_is(&d, "m0", "running", NULL);
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 10}", 200);
    h_request(&d, "GET", "/v1/pods/team-a/m0", TOKEN_A, NULL, 404); /* completed, gone */
    succeeded_is(&d, 2, "Running");
    submit_ended(&d, "pg2", "m2", "10s", 0);
    pod_is(&d, "m2", "running", NULL);
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 10}", 200);
    succeeded_is(&d, 3, "Running");
    submit_ended(&d, "pg2", "late", "100s", 5); /* Failed (DeadlineExceeded): it does not count */
    pod_is(&d, "late", "running", NULL);
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 5}", 200);
    h_request(&d, "GET", "/v1/pods/team-a/late", TOKEN_A, NULL, 404);
    succeeded_is(&d, 3, "Running");

    assert_int_equal(h_reload(&d), 0);
    submit_ended(&d, "pg2", "m3", "10s", 0);
    pod_is(&d, "m3", "running", NULL);

    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    succeeded_is(&d, 3, "Running"); /* m3 runs on */
    submit_ended(&d, "pg2", "m4", "10s", 0);
    pod_is(&d, "m4", "running", NULL);

    /* A PodGroup deleted and made again is a new one: none of its members has completed. */
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 60}", 200);
    h_request(&d, "DELETE", "/v1/podgroups/team-a/pg2", TOKEN_A, NULL, 200);
    h_podgroup(&d, "team-a", "pg2", 2, 201);
    succeeded_is(&d, 0, "Pending");
    submit_ended(&d, "pg2", "n0", "10s", 0);
    pod_is(&d, "n0", "pending", "PodGroup pg2: 1 of minMember 2 pods submitted");
    assert_int_equal(h_reload(&d), 0);
    pod_is(&d, "n0", "pending", "PodGroup pg2: 1 of minMember 2 pods submitted");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A PodGroup of a config file keeps its completed members across a reload as one posted does;
 * the API cannot take its name over (409), nor a config file one the API holds (the reload is
 * refused, saying which). */
static void test_policy_gang_reloaded(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    d.manual_clock = 1;
    assert_int_equal(h_write(d.nodes, nodes), 0);
    assert_int_equal(h_policy(&d, "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                                  "metadata: {name: pgp, namespace: team-a}\n"
                                  "spec: {minMember: 2}\n"),
                     0);
    assert_int_equal(h_start(&d), 0);
    submit_ended(&d, "pgp", "q0", "10s", 0);
    submit_ended(&d, "pgp", "q1", "10s", 0);
    pod_is(&d, "q0", "running", NULL);
    struct answer a; /* not shown by the API, which says so rather than "not found" */
    assert_int_equal(h_call(&d, "GET", "/v1/podgroups/team-a/pgp", TOKEN_A, NULL, &a), 0);
    assert_int_equal(a.status, 404);
    assert_non_null(strstr(a.body, "defined by the daemon's config files"));
    h_answer_free(&a);
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 10}", 200);
    assert_int_equal(h_reload(&d), 0);
    submit_ended(&d, "pgp", "q2", "10s", 0);
    pod_is(&d, "q2", "running", NULL);
    h_podgroup(&d, "team-a", "pgp", 3, 409);
    h_podgroup(&d, "team-a", "pga", 1, 201);
    assert_int_equal(h_policy(&d, "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                                  "metadata: {name: pga, namespace: team-a}\n"
                                  "spec: {minMember: 2}\n"),
                     0);
    kill(d.pid, SIGHUP);
    for (int i = 0; i < 3000 && !h_log_has(&d, "config reload refused"); i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    assert_true(h_log_has(&d, "PodGroup team-a/pga is one POST /v1/podgroups made"));
    /* a PodGroup of the files naming a Queue that no file defines: refused, as Volcano does
     * (its members ran in default) */
    assert_int_equal(h_policy(&d, "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                                  "metadata: {name: pgq, namespace: team-a}\n"
                                  "spec: {minMember: 1, queue: nope}\n"),
                     0);
    kill(d.pid, SIGHUP);
    const char *why = "PodGroup team-a/pgq: spec.queue"; /* the log escapes the quotes */
    for (int i = 0; i < 3000 && !h_log_has(&d, why); i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    assert_true(h_log_has(&d, why));
    pod_is(&d, "q2", "running", NULL);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A gang the tenant's GPUQuota lets only three members of start: none runs, and none of the
 * members tried counts in the quota afterwards. */
static void test_gang_over_quota(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_write(d.nodes, nodes), 0);
    assert_int_equal(h_policy(&d, "kind: GPUQuota\n"
                                  "metadata: {name: q, namespace: team-a}\n"
                                  "spec:\n"
                                  "  tenant: team-a\n"
                                  "  quotas: {a100-80gb: {total: 24, dedicated: 24, shared: 0}}\n"),
                     0);
    assert_int_equal(h_start(&d), 0);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A, group, 201);
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof(name), "w%d", i);
        submit_member(&d, name, "pg1");
    }
    /* it says it can never start, not only that the last member found no quota left */
    pod_is(&d, "w0", "pending",
           "gang pg1: its 4 members waiting ask 32 GPUs together, more than tenant team-a's "
           "GPUQuota total of the models they may use (24): it cannot start while that quota "
           "stands");
    group_is(&d, "Pending", 4, 0);
    h_expect(&d, "GET", "/v1/tenants/team-a", TOKEN_A, NULL, 200, &a);
    json_t *m = json_array_get(json_object_get(json_object_get(a.json, "quota"), "models"), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "used"), "total")), 0);
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A gang whose members may use different models counts the quota of every model any of them may
 * use: 4 T4s and 8 A100s fit totals of 4 and 8 (it was told it could never start). */
static void test_gang_quota_of_each_model(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0); /* two 8-card A100 boards and a 4-card T4 box */
    assert_int_equal(h_policy(&d, "kind: GPUQuota\nmetadata: {name: q, namespace: team-a}\n"
                                  "spec:\n  tenant: team-a\n"
                                  "  quotas: {a100-80gb: {total: 8, shared: 8}, t4: {total: 4, "
                                  "shared: 4}}\n"),
                     0);
    assert_int_equal(h_start(&d), 0);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A,
              "{\"metadata\":{\"name\":\"mm\",\"namespace\":\"team-a\"},"
              "\"spec\":{\"minMember\":2}}",
              201);
    static const char *const member[][2] = {{"t", "T4"}, {"a", "A100-SXM4-80GB"}};
    for (int i = 0; i < 2; i++) {
        json_t *p = h_pod_json("team-a", member[i][0], i ? 8 : 4, 0);
        h_annotate(p, "scheduling.k8s.io/group-name", "mm");
        h_annotate(p, "gpusched.io/gpu-model", member[i][1]);
        json_decref(h_submit(&d, TOKEN_A, json_dumps(p, JSON_COMPACT), 201));
        json_decref(p);
    }
    pod_is(&d, "t", "running", NULL);
    pod_is(&d, "a", "running", NULL);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Member @name of PodGroup @pg (8 cards) through kube-scheduler's filter: the nodes it passes. */
static json_t *ext_filter(const struct daemon *d, const char *name, const char *pg)
{
    static const char *const all[] = {"n-a100-0", "n-a100-1", "n-a100-2", "n-a100-3"};
    char *pod = h_pod_annotated("team-a", name, 8, 0, "scheduling.k8s.io/group-name", pg);
    json_t *r = h_extender(d, "filter", pod, all, 4);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(r, "Error")), "");
    if (!json_array_size(json_object_get(r, "NodeNames"))) {
        free(pod);
        return r;
    }
    const char *node = json_string_value(json_array_get(json_object_get(r, "NodeNames"), 0));
    json_t *b = h_extender(d, "bind", pod, &node, 1);
    free(pod);
    assert_non_null(b);
    assert_string_equal(json_string_value(json_object_get(b, "Error")), "");
    json_decref(b);
    return r;
}

/* Through the extender, which sees one member at a time, filter passes no node to a gang member
 * while the whole gang cannot fit, saying why; once it can, each member is held (nominated)
 * until all are, the gang is placed whole, and filter passes each the node its cards are held
 * on, where it binds. */
static void test_gang_through_extender(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_write(d.nodes, nodes), 0);
    assert_int_equal(h_start(&d), 0);
    submit_member(&d, "blocker", NULL);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A, group, 201);
    json_t *r = ext_filter(&d, "w0", "pg1");
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    const char *why =
        json_string_value(json_object_get(json_object_get(r, "FailedNodes"), "n-a100-1"));
    if (!why || !strstr(why, "gang pg1: 4 members like this one are needed, 3 can be placed") ||
        why[strlen(why) - 1] == '.') /* kube-scheduler ends the sentence itself */
        fail_msg("FailedNodes reason: %s", why ? why : "(none)");
    json_decref(r);
    struct answer a;
    h_expect(&d, "GET", "/v1/status", TOKEN_A, NULL, 200, &a);
    assert_int_equal(json_integer_value(json_object_get(a.json, "gpu_milli_allocated")), 8000);
    h_answer_free(&a); /* the trial placements were given back */

    h_request(&d, "DELETE", "/v1/pods/team-a/blocker", TOKEN_A, NULL, 200);
    for (int i = 0; i < 8; i++) { /* held, then each binds to the one node filter passes */
        char name[8];
        snprintf(name, sizeof(name), "w%d", i % 4);
        size_t n = 0;
        for (int k = 0; k < 100 && !n; k++) { /* the nomination is taken after the answer */
            r = ext_filter(&d, name, "pg1");
            n = json_array_size(json_object_get(r, "NodeNames"));
            json_decref(r);
            if (i < 4 || n)
                break;
            usleep(50000);
        }
        assert_int_equal(n, i < 4 ? 0 : 1);
    }
    group_is(&d, "Running", 4, 4);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* PodGroup pgm: one member, minResources 32 GPUs (and some CPU, memory and pods), which Volcano's
 * enqueue check refuses (why_pgm) while 8 of the 32 cards are in use. Its minResources are as
 * Volcano's job controller writes them, the quota's names beside the plain ones. */
static const char pgm[] = "{\"metadata\":{\"name\":\"pgm\",\"namespace\":\"team-a\"},"
                          "\"spec\":{\"minMember\":1,\"minResources\":{\"nvidia.com/gpu\":"
                          "\"32\",\"cpu\":\"500m\",\"memory\":\"1Gi\",\"pods\":\"1\","
                          "\"count/pods\":\"1\",\"requests.nvidia.com/gpu\":\"32\","
                          "\"requests.cpu\":\"500m\",\"limits.memory\":\"1Gi\"}}}";
static const char why_pgm[] =
    "PodGroup team-a/pgm minResources nvidia.com/gpu 32 exceed what the cluster may admit: "
    "8 in use and 0 held by PodGroups admitted, of 32 x overcommit-factor 1.2";

/* A daemon over the four boards, an 8-card blocker running and PodGroup pgm posted. */
static void start_blocked(struct daemon *d)
{
    assert_int_equal(h_setup(d, NULL), 0);
    assert_int_equal(h_write(d->nodes, nodes), 0);
    assert_int_equal(h_start(d), 0);
    submit_member(d, "blocker", NULL);
    h_request(d, "POST", "/v1/podgroups", TOKEN_A, pgm, 201);
}

/* spec.minResources: Volcano's enqueue check holds the member back while 32 GPUs do not pass the
 * cluster's 32 x 1.2 less the blocker's 8 in use; it survives a restart and the snapshot, and
 * the member starts once the blocker is gone. */
static void test_gang_min_resources(void **state)
{
    (void)state;
    struct daemon d;
    start_blocked(&d);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A, pgm, 200);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A,
              "{\"metadata\":{\"name\":\"pgm\",\"namespace\":\"team-a\"},"
              "\"spec\":{\"minMember\":1,\"minResources\":{\"nvidia.com/gpu\":16}}}",
              409);  /* another minResources under its name */
    struct answer a; /* ephemeral-storage is taken without effect, and said, as for a pod */
    h_expect(&d, "POST", "/v1/podgroups", TOKEN_A,
             "{\"metadata\":{\"name\":\"pge\",\"namespace\":\"team-a\"},\"spec\":{"
             "\"minMember\":1,\"minResources\":{\"cpu\":\"1\",\"ephemeral-storage\":\"1Gi\"}}}",
             201, &a);
    assert_non_null(strstr(a.warning, "ephemeral-storage: local ephemeral storage is taken without "
                                      "effect"));
    h_answer_free(&a);
    submit_member(&d, "m0", "pgm");
    pod_is(&d, "m0", "pending", why_pgm);
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    pod_is(&d, "m0", "pending", why_pgm);
    h_expect(&d, "GET", "/v1/podgroups/team-a/pgm", TOKEN_A, NULL, 200, &a);
    char *mr = json_dumps(json_object_get(a.json, "minResources"), JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(mr, "{\"cpu\":\"500m\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"32\","
                            "\"pods\":\"1\"}");
    free(mr);
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, 200, &a);
    if (!a.body || !strstr(a.body, "  minResources: {\"cpu\":\"500m\",\"memory\":\"1Gi\","
                                   "\"nvidia.com/gpu\":\"32\",\"pods\":\"1\"}\n"))
        fail_msg("snapshot: %s", a.body ? a.body : "(none)");
    h_answer_free(&a);
    h_request(&d, "DELETE", "/v1/pods/team-a/blocker", TOKEN_A, NULL, 200);
    pod_is(&d, "m0", "running", NULL);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Pod @ns/@name is @state, its reason holding @why (when not NULL). */
static void pod_of_is(const struct daemon *d, const char *ns, const char *name, const char *state,
                      const char *why)
{
    json_t *p = h_pod_get(d, ns, name);
    const char *s = str_of(p, "state"), *r = str_of(p, "reason");
    if (strcmp(s, state) || (why && !strstr(r, why)))
        fail_msg("%s/%s: %s (%s), expected %s with \"%s\"", ns, name, s, r, state, why ? why : "");
    json_decref(p);
}

/* A PodGroup with minResources @gpus GPUs and minMember @min, in @ns, with @min 1-card members
 * (@ns-0, ...; @cards each) posted by @ns's tenant. */
static void post_min_gang(const struct daemon *d, const char *ns, const char *name, int min,
                          const char *gpus, int cards)
{
    char body[256];
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"},\"spec\":{\"minMember\":%d,"
             "\"minResources\":{\"nvidia.com/gpu\":\"%s\"}}}",
             name, ns, min, gpus);
    h_request(d, "POST", "/v1/podgroups", h_token_of(ns), body, 201);
    for (int i = 0; i < min; i++) {
        char pod[64];
        snprintf(pod, sizeof(pod), "%s-%d", name, i);
        json_decref(h_submit(
            d, NULL, h_pod_annotated(ns, pod, cards, 0, "scheduling.k8s.io/group-name", name),
            201));
    }
}

/* A PodGroup's minResources are bounded by what its tenant may ever hold under its GPUQuota (the
 * sum of its totals), as a queue's capability bounds them: team-a, capped at 8 cards, posts a
 * gang of two 1-card members holding 20 cards of admission; it waits naming the quota and both
 * figures, rather than running on two cards and holding 18 that team-b's gang of 24 is then
 * refused against (20 + 24 > 32 x 1.2). A quota reloaded larger lets it through that bound. */
static void test_gang_min_resources_over_quota(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_write(d.nodes, nodes), 0);
    assert_int_equal(h_policy(&d, "kind: GPUQuota\n"
                                  "metadata: {name: q, namespace: team-a}\n"
                                  "spec:\n"
                                  "  tenant: team-a\n"
                                  "  quotas: {a100-80gb: {total: 8, dedicated: 0, shared: 8}}\n"),
                     0);
    assert_int_equal(h_start(&d), 0);
    post_min_gang(&d, "team-a", "hog", 2, "20", 1);
    static const char why[] = "PodGroup team-a/hog minResources nvidia.com/gpu 20 exceed what "
                              "tenant team-a may ever hold: its GPUQuota's total over its GPU "
                              "models is 8";
    pod_of_is(&d, "team-a", "hog-0", "pending", why);
    pod_of_is(&d, "team-a", "hog-1", "pending", why);
    post_min_gang(&d, "team-b", "fair", 1, "24", 8);
    pod_of_is(&d, "team-b", "fair-0", "running", NULL);
    post_min_gang(&d, "team-a", "within", 1, "8", 1); /* at the bound: admitted */
    pod_of_is(&d, "team-a", "within-0", "running", NULL);
    assert_int_equal(h_policy(&d, "kind: GPUQuota\n"
                                  "metadata: {name: q, namespace: team-a}\n"
                                  "spec:\n"
                                  "  tenant: team-a\n"
                                  "  quotas: {a100-80gb: {total: 24, dedicated: 0, shared: 24}}\n"),
                     0);
    assert_int_equal(h_reload(&d), 0); /* now only the cluster holds it back: 16 + 7 held */
    pod_of_is(&d, "team-a", "hog-0", "pending",
              "PodGroup team-a/hog minResources nvidia.com/gpu 20 exceed what the cluster may "
              "admit: 9 in use and 23 held by PodGroups admitted, of 32 x overcommit-factor 1.2");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A PodGroup admitted and running before its tenant's GPUQuota was lowered under its minResources
 * (or before that bound was applied: a daemon upgraded under it) holds no more of the cluster's
 * admission than its tenant may ever hold: hog, 20 cards of minResources on two running 1-card
 * members, holds 6 once team-a's quota is 8, not 18, and team-b's gang of 24 is admitted
 * (24 + 6 <= 32 x 1.2 - 2). */
static void test_gang_min_resources_quota_lowered(void **state)
{
    (void)state;
    struct daemon d;
    static const char quota[] = "kind: GPUQuota\n"
                                "metadata: {name: q, namespace: team-a}\n"
                                "spec:\n"
                                "  tenant: team-a\n"
                                "  quotas: {a100-80gb: {total: %d, dedicated: 0, shared: %d}}\n";
    char text[256];
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_write(d.nodes, nodes), 0);
    snprintf(text, sizeof(text), quota, 24, 24);
    assert_int_equal(h_policy(&d, text), 0);
    assert_int_equal(h_start(&d), 0);
    post_min_gang(&d, "team-a", "hog", 2, "20", 1);
    pod_of_is(&d, "team-a", "hog-1", "running", NULL);
    snprintf(text, sizeof(text), quota, 8, 8);
    assert_int_equal(h_policy(&d, text), 0);
    assert_int_equal(h_reload(&d), 0);
    pod_of_is(&d, "team-a", "hog-1", "running", NULL); /* a lowered quota stops no running pod */
    post_min_gang(&d, "team-b", "fair", 1, "24", 8);
    pod_of_is(&d, "team-b", "fair-0", "running", NULL);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Through the extender too, a member whose PodGroup's minResources do not pass Volcano's enqueue
 * check (gs__tn_enqueue(), as in test_gang_min_resources) fails filter on every node, naming the
 * figures; once the blocker is gone, filter passes every node and bind runs it. */
static void test_gang_min_resources_through_extender(void **state)
{
    (void)state;
    struct daemon d;
    start_blocked(&d);
    json_t *r = ext_filter(&d, "m0", "pgm");
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 0);
    const char *node;
    json_t *reason;
    json_object_foreach(json_object_get(r, "FailedNodes"), node, reason)
    {
        if (!strstr(json_string_value(reason), why_pgm))
            fail_msg("FailedNodes %s: %s", node, json_string_value(reason));
    }
    assert_int_equal(json_object_size(json_object_get(r, "FailedNodes")), 4);
    json_decref(r);
    h_request(&d, "DELETE", "/v1/pods/team-a/blocker", TOKEN_A, NULL, 200);
    r = ext_filter(&d, "m0", "pgm"); /* binds to the first node filter passes */
    assert_int_equal(json_array_size(json_object_get(r, "NodeNames")), 4);
    json_decref(r);
    pod_is(&d, "m0", "running", NULL);
    struct answer a;
    h_expect(&d, "GET", "/v1/podgroups/team-a/pgm", TOKEN_A, NULL, 200, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "phase")), "Running");
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* An sqlite3_exec() callback: the first cell of the row into @buf (64 bytes). */
static int first_cell(void *buf, int n, char **cells, char **names)
{
    (void)names;
    snprintf(buf, 64, "%s", n > 0 && cells[0] ? cells[0] : "");
    return 0;
}

/* A daemon started, PodGroup team-a/@name (minMember 1) posted, and stopped; its store's path
 * into @path. */
static void stored_group(struct daemon *d, const char *name, char *path, size_t size)
{
    char body[128];
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"team-a\"},"
             "\"spec\":{\"minMember\":1}}",
             name);
    assert_int_equal(h_setup(d, NULL), 0);
    assert_int_equal(h_write(d->nodes, nodes), 0);
    assert_int_equal(h_start(d), 0);
    h_request(d, "POST", "/v1/podgroups", TOKEN_A, body, 201);
    assert_int_equal(h_stop(d), 0);
    snprintf(path, size, "%s/data/gpusched.db", d->dir);
}

/* Store schema 7 adds a PodGroup's minResources, schema 8 its members completed, schema 9 the pod
 * count of its minResources, schema 10 a pod's last eviction, schema 11 its minTaskMember, schema
 * 12 whether the API server holds it, schema 13 a nominated pod's nodes: a schema 6 store (the
 * tables as schema 6 made them) is brought forward, its PodGroup read as naming none, with none
 * completed and not the API server's, and its member placed at once. */
static void test_store_schema6(void **state)
{
    (void)state;
    struct daemon d;
    char path[160];
    sqlite3 *db;
    stored_group(&d, "pg6", path, sizeof(path));
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "ALTER TABLE podgroups DROP COLUMN min_gpu_milli;"
                                  "ALTER TABLE podgroups DROP COLUMN min_cpu_milli;"
                                  "ALTER TABLE podgroups DROP COLUMN min_memory_mib;"
                                  "ALTER TABLE podgroups DROP COLUMN succeeded;"
                                  "ALTER TABLE podgroups DROP COLUMN min_pods;"
                                  "ALTER TABLE pods DROP COLUMN saved_us;"
                                  "ALTER TABLE pods DROP COLUMN last_eviction;"
                                  "ALTER TABLE pods DROP COLUMN last_eviction_us;"
                                  "ALTER TABLE podgroups DROP COLUMN seq;"
                                  "ALTER TABLE podgroups DROP COLUMN min_task_member;"
                                  "ALTER TABLE podgroups DROP COLUMN kube;"
                                  "ALTER TABLE pods DROP COLUMN nodes_ok;"
                                  "UPDATE meta SET value = 6 WHERE key = 'schema';",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(h_start(&d), 0);
    assert_true(h_log_has(&d, "store schema brought forward"));
    struct answer a;
    h_expect(&d, "GET", "/v1/podgroups/team-a/pg6", TOKEN_A, NULL, 200, &a);
    assert_null(json_object_get(a.json, "minResources"));
    h_answer_free(&a);
    submit_member(&d, "s0", "pg6");
    pod_is(&d, "s0", "running", NULL);
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char row[64] = "";
    assert_int_equal(sqlite3_exec(db,
                                  "SELECT (SELECT value FROM meta WHERE key = 'schema')"
                                  " || ' ' || (min_gpu_milli + min_cpu_milli + min_memory_mib"
                                  " + min_pods)"
                                  " || ' ' || succeeded || ' ' || min_task_member || ' ' || kube"
                                  " FROM podgroups WHERE name = 'pg6'",
                                  first_cell, row, NULL),
                     SQLITE_OK);
    /* the last schema; no minResources, none completed, no minTaskMember, not the API server's */
    assert_string_equal(row, "13 0 0 {} 0");
    sqlite3_close(db);
    h_cleanup(&d);
}

/* A stored PodGroup is checked as a posted one: a row the API would refuse (here minResources
 * out of range, then a minMember of 0) reached the scheduler, to admit it by a negative or
 * overflowing sum. gpuschedd refuses to start, naming the PodGroup and the field. */
static void test_store_bad_group(void **state)
{
    (void)state;
    struct daemon d;
    char path[160];
    sqlite3 *db;
    static const char *const edits[][2] = {
        {"UPDATE podgroups SET min_gpu_milli = 9223372036854775807",
         "the stored PodGroup team-a/pgb: spec.minResources.nvidia.com/gpu"},
        {"UPDATE podgroups SET min_gpu_milli = 0, min_cpu_milli = -5",
         "the stored PodGroup team-a/pgb: spec.minResources.cpu"},
        {"UPDATE podgroups SET min_cpu_milli = 0, min_member = 0",
         "the stored PodGroup team-a/pgb: spec.minMember"},
        {"UPDATE podgroups SET min_member = 1, meta = 'x'",
         "the stored PodGroup team-a/pgb: metadata: its labels and annotations are not a JSON"},
        {"UPDATE podgroups SET meta = '{}', succeeded = -1",
         "the stored PodGroup team-a/pgb: status.succeeded: not a count of members in "
         "0..1000000000"},
        {"UPDATE podgroups SET succeeded = 4294967298",
         "the stored PodGroup team-a/pgb: status.succeeded: not a count"},
        {"UPDATE podgroups SET succeeded = 'abc'",
         "the stored PodGroup team-a/pgb: status.succeeded: not a count"},
        {"UPDATE podgroups SET succeeded = 0, kube = 2",
         "the stored PodGroup team-a/pgb: kube: not 0 or 1"},
        {"UPDATE podgroups SET kube = 'x'", "the stored PodGroup team-a/pgb: kube: not 0 or 1"},
        {"UPDATE podgroups SET kube = 1.5", "the stored PodGroup team-a/pgb: kube: not 0 or 1"},
    };
    stored_group(&d, "pgb", path, sizeof(path));
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, edits[i][0], NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        assert_int_equal(h_start(&d), -1);
        if (!h_log_has(&d, edits[i][1]))
            fail_msg("case %zu: the log does not say \"%s\"", i, edits[i][1]);
    }
    /* 300 kB of annotations, accepted before they were capped at 256 KiB: kept, and said */
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "UPDATE podgroups SET kube = 0, meta = "
                                  "'{\"labels\":{},\"annotations\":{\"x\":\"' || "
                                  "replace(hex(zeroblob(150000)), '0', 'a') || '\"}}'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(h_start(&d), 0);
    assert_true(h_log_has(&d, "metadata.annotations: more than 262144 bytes of keys and values in "
                              "all: kept as stored"));
    struct answer a;
    h_expect(&d, "GET", "/v1/podgroups/team-a/pgb", TOKEN_A, NULL, 200, &a);
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_bad_podgroups(void **state)
{
    (void)state;
    struct daemon d;
    static const struct {
        const char *body, *field;
    } bad[] = {
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{}}", "spec.minMember"},
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":0}}", "spec.minMember"},
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":\"4\"}}", "spec.minMember"},
        {"{\"metadata\":{},\"spec\":{\"minMember\":1}}", "metadata.name"},
        {"{\"metadata\":{\"name\":\"Bad_Name\"},\"spec\":{\"minMember\":1}}", "metadata.name"},
        {"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1}}", "kind"},
        {"{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1}}",
         "apiVersion"},
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"queue\":7}}", "spec.queue"},
        /* a number for a string field, refused as Kubernetes' API server refuses it */
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"queue\":2.5}}", "spec.queue"},
        {"{\"metadata\":{\"name\":1.5},\"spec\":{\"minMember\":1}}", "metadata.name"},
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"priorityClassName\":\"\"}}",
         "spec.priorityClassName"},
        {"{\"metadata\":{\"name\":\"g\"}}", "spec"},
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"minMembers\":2}}",
         "spec.minMembers"},
        /* minResources: the names and quantities of a Queue's capability */
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"minResources\":"
         "{\"nvidia.com/gpus\":4}}}",
         "spec.minResources.nvidia.com/gpus"},
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"minResources\":"
         "{\"cpu\":\"-1\"}}}",
         "spec.minResources.cpu"},
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"minResources\":4}}",
         "spec.minResources"},
        /* the pod count is a quantity */
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"minResources\":"
         "{\"pods\":\"xyz\"}}}",
         "spec.minResources.pods"},
        /* Volcano's, but not applied here: refused, not taken and ignored */
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"networkTopology\":"
         "{\"mode\":\"hard\"}}}",
         "spec.networkTopology"},
        /* minTaskMember: Volcano's task names, counts of 0 or more */
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"minTaskMember\":"
         "{\"w\":-1}}}",
         "spec.minTaskMember.w"},
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"minTaskMember\":"
         "{\"Worker_1\":1}}}",
         "spec.minTaskMember.Worker_1"},
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"minTaskMember\":"
         "{\"w\":\"1\"}}}",
         "spec.minTaskMember.w"},
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"minTaskMember\":[]}}",
         "spec.minTaskMember"},
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"minTaskMember\":{"
         "\"t0\":1,\"t1\":1,\"t2\":1,\"t3\":1,\"t4\":1,\"t5\":1,\"t6\":1,\"t7\":1,\"t8\":1,"
         "\"t9\":1,\"t10\":1,\"t11\":1,\"t12\":1,\"t13\":1,\"t14\":1,\"t15\":1,\"t16\":1}}}",
         "spec.minTaskMember.t16"},
        {"[]", ""},
        /* outside the spec too: a field was dropped without a word */
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1},\"extra\":1}", "extra"},
        {"{\"metadata\":{\"name\":\"g\",\"labl\":{}},\"spec\":{\"minMember\":1}}", "metadata.labl"},
    };
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct answer a;
        assert_int_equal(h_call(&d, "POST", "/v1/podgroups", TOKEN_A, bad[i].body, &a), 0);
        const char *field = json_string_value(json_object_get(a.json, "field"));
        if (a.status != 400 || !field || strcmp(field, bad[i].field))
            fail_msg("case %zu: %ld %s, expected 400 naming \"%s\"", i, a.status,
                     a.body ? a.body : "", bad[i].field);
        h_answer_free(&a);
    }
    /* a pod naming what no PodGroup could be called would wait for ever: refused */
    struct answer refused;
    char *pod = h_pod_annotated("team-a", "p", 1, 0, "scheduling.k8s.io/group-name", "Bad_Name");
    assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_A, pod, &refused), 0);
    free(pod);
    assert_int_equal(refused.status, 400);
    assert_string_equal(json_string_value(json_object_get(refused.json, "field")),
                        "metadata.annotations.scheduling.k8s.io/group-name");
    h_answer_free(&refused);
    /* ... and one whose label and annotation name two PodGroups, which would be one ignored */
    json_t *two = h_pod_json("team-a", "p", 1, 0);
    h_annotate(two, "scheduling.k8s.io/group-name", "pg1");
    json_object_set_new(json_object_get(two, "metadata"), "labels",
                        json_pack("{ss}", "scheduling.x-k8s.io/pod-group", "pg2"));
    pod = json_dumps(two, JSON_COMPACT);
    json_decref(two);
    assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_A, pod, &refused), 0);
    free(pod);
    assert_int_equal(refused.status, 400);
    assert_non_null(strstr(json_string_value(json_object_get(refused.json, "error")),
                           "names PodGroup pg2: a pod joins one PodGroup"));
    h_answer_free(&refused);
    /* each message names its field once, whole, as a pod's do */
    static const char *const said[][2] = {
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"minResources\":"
         "{\"cpu\":\"-1\"}}}",
         "spec.minResources.cpu: \"-1\" must not be negative"},
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"minResources\":4}}",
         "spec.minResources must be a mapping, not the scalar \"4\""},
        {"{\"metadata\":{\"name\":\"g\"},\"spec\":{\"minMember\":1,\"queue\":2.5}}",
         "spec.queue must be a string, not a number (as Kubernetes refuses it): quote it for the "
         "text"},
    };
    for (size_t i = 0; i < sizeof(said) / sizeof(said[0]); i++) {
        struct answer a;
        assert_int_equal(h_call(&d, "POST", "/v1/podgroups", TOKEN_A, said[i][0], &a), 0);
        assert_int_equal(a.status, 400);
        assert_string_equal(json_string_value(json_object_get(a.json, "error")), said[i][1]);
        h_answer_free(&a);
    }
    /* Another tenant's namespace, and an unknown group. */
    struct answer a;
    assert_int_equal(h_call(&d, "POST", "/v1/podgroups", TOKEN_B, group, &a), 0);
    assert_int_equal(a.status, 403);
    h_answer_free(&a);
    h_request(&d, "GET", "/v1/podgroups/team-a/nope", TOKEN_A, NULL, 404);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* The label app and annotation note of the PodGroup @a answered. */
static void meta_is(const struct answer *a, const char *app, const char *note)
{
    const json_t *l = json_object_get(a->json, "labels"),
                 *n = json_object_get(a->json, "annotations");
    assert_string_equal(json_string_value(json_object_get(l, "app")), app);
    assert_string_equal(json_string_value(json_object_get(n, "note")), note);
    assert_int_equal(json_object_size(l) + json_object_size(n), 2);
}

/* A PodGroup's labels and annotations are kept as posted: shown, stored across a restart, part
 * of what "the same PodGroup again" means, and written in the snapshot simulate continues. */
static void test_podgroup_metadata(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    char path[128], json[128];
    static const char labelled[] =
        "{\"metadata\":{\"name\":\"pg1\",\"namespace\":\"team-a\",\"labels\":{\"app\":"
        "\"train\"},\"annotations\":{\"note\":\"a \\\"quoted\\\" word\"}},"
        "\"spec\":{\"minMember\":4}}";
    assert_int_equal(h_setup(&d, "maxBodyBytes: 1048576\n"), 0);
    assert_int_equal(h_start(&d), 0);
    h_expect(&d, "POST", "/v1/podgroups", TOKEN_A, labelled, 201, &a);
    meta_is(&a, "train", "a \"quoted\" word");
    h_answer_free(&a);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A, labelled, 200); /* the same */
    h_expect(&d, "POST", "/v1/podgroups", TOKEN_A, group, 409, &a); /* without them: another */
    assert_non_null(strstr(json_string_value(json_object_get(a.json, "error")),
                           "with the same spec but other labels or annotations is held"));
    h_answer_free(&a);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A,
              "{\"metadata\":{\"name\":\"pg2\",\"labels\":{\"app\":7}},"
              "\"spec\":{\"minMember\":1}}",
              400); /* a label is a string */
    /* keys and label values as an API server checks them, a Pod's and a PodGroup's alike */
    static const char group_spec[] = "{\"minMember\":1}",
                      pod_spec[] = "{\"containers\":[{\"name\":\"m\"}]}";
    static const char *const refused[][4] = {
        {"/v1/podgroups", "\"labels\":{\"-app\":\"x\"}", group_spec, "metadata.labels.-app"},
        {"/v1/podgroups", "\"labels\":{\"app\":\"a b\"}", group_spec, "metadata.labels.app"},
        {"/v1/podgroups", "\"annotations\":{\"a b\":\"x\"}", group_spec,
         "metadata.annotations.a b"},
        {"/v1/pods", "\"annotations\":{\"-note\":\"x\"}", pod_spec, "metadata.annotations.-note"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        char body[512];
        snprintf(body, sizeof(body),
                 "{\"metadata\":{\"name\":\"pg3\",\"namespace\":\"team-a\",%s},\"spec\":%s}",
                 refused[i][1], refused[i][2]);
        h_expect(&d, "POST", refused[i][0], TOKEN_A, body, 400, &a);
        if (strcmp(json_string_value(json_object_get(a.json, "field")), refused[i][3]))
            fail_msg("%s: %s", body, a.body);
        h_answer_free(&a);
    }
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A,
              "{\"metadata\":{\"name\":\"pg4\",\"namespace\":\"team-a\",\"annotations\":"
              "{\"Example.com/Note\":\"x\"}},\"spec\":{\"minMember\":1}}",
              201); /* an annotation key is checked lowercased, as Kubernetes does */
    /* annotations are at most 256 KiB of keys and values, a PodGroup's as a Pod's (the API
     * server's TotalAnnotationSizeLimitB): the body cap of 1 MiB let 1 MiB through */
    for (int over = 0; over < 2; over++) {
        size_t n = 256 * 1024 - 1 + (size_t)over,
               at = 0; /* "x" and n bytes: 256 KiB, then one more */
        char *big = malloc(n + 200);
        assert_non_null(big);
        at += (size_t)sprintf(big,
                              "{\"metadata\":{\"name\":\"big%d\",\"namespace\":\"team-a\","
                              "\"annotations\":{\"x\":\"",
                              over);
        memset(big + at, 'a', n);
        strcpy(big + at + n, "\"}},\"spec\":{\"minMember\":1}}");
        h_expect(&d, "POST", "/v1/podgroups", TOKEN_A, big, over ? 400 : 201, &a);
        if (over && !strstr(a.body, "more than 262144 bytes of keys and values"))
            fail_msg("%s", a.body);
        h_answer_free(&a);
        free(big);
    }
    assert_int_equal(h_stop(&d), 0);
    assert_int_equal(h_start(&d), 0);
    h_expect(&d, "GET", "/v1/podgroups/team-a/pg1", TOKEN_A, NULL, 200, &a);
    meta_is(&a, "train", "a \"quoted\" word");
    h_answer_free(&a);
    json_t *w = h_pod_json("team-a", "w0", 1, 0); /* its PodGroup not made yet */
    h_annotate(w, "scheduling.k8s.io/group-name", "later");
    json_decref(h_submit(&d, TOKEN_A, json_dumps(w, JSON_COMPACT), 201));
    json_decref(w);
    h_expect(&d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, 200, &a);
    if (!strstr(a.body, "metadata: {name: \"pg1\", namespace: \"team-a\", annotations: "
                        "{\"note\":\"a \\\"quoted\\\" word\"}, labels: {\"app\":\"train\"}}\n"))
        fail_msg("the PodGroup's labels are not in the snapshot: %s", a.body);
    if (!strstr(a.body, "metadata: {name: \"later\", namespace: \"team-a\", annotations: "
                        "{gpusched.io/snapshot: \"not made in gpuschedd: its 1 pods wait for "
                        "it\"}}\nspec:\n  minMember: 2\n"))
        fail_msg("no PodGroup w0 waits for in the snapshot: %s", a.body);
    snprintf(path, sizeof(path), "%s/snap.yaml", d.dir);
    snprintf(json, sizeof(json), "%s/snap.json", d.dir);
    assert_int_equal(h_write(path, a.body), 0);
    h_answer_free(&a);
    json_t *out = h_continued(path, json); /* the scenario reader takes them */
    assert_non_null(out);
    json_decref(out);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A pod of team-a asking one card, with the annotations given (pairs, NULL-ended), posted:
 * the answer's JSON when @status is 201, else NULL (checked). */
static json_t *post_queued(const struct daemon *d, const char *name, long status, ...)
{
    json_t *p = h_pod_json("team-a", name, 1, 0);
    va_list ap;
    va_start(ap, status);
    for (const char *k; (k = va_arg(ap, const char *));)
        h_annotate(p, k, va_arg(ap, const char *));
    va_end(ap);
    struct answer a;
    char *body = json_dumps(p, JSON_COMPACT);
    json_decref(p);
    h_expect(d, "POST", "/v1/pods", TOKEN_A, body, status, &a);
    free(body);
    json_t *j = status == 201 ? json_incref(a.json) : NULL;
    if (status != 201 &&
        (strcmp(str_of(a.json, "field"), "metadata.annotations.scheduling.volcano.sh/queue-name") ||
         !strstr(str_of(a.json, "error"),
                 "but its PodGroup team-a/pgn names no queue and so runs in default")))
        fail_msg("%s: %s", name, a.body);
    h_answer_free(&a);
    return j;
}

static void queue_is(const struct daemon *d, const char *name, const char *queue)
{
    json_t *p = h_pod_get(d, "team-a", name);
    if (strcmp(str_of(p, "queue"), queue))
        fail_msg("%s: in queue %s, expected %s", name, str_of(p, "queue"), queue);
    json_decref(p);
}

/*
 * A PodGroup posted without spec.queue is in `default`, as Volcano's admission writes it in: GET
 * shows `queue: default`, and posting it again with that written out is the same PodGroup (200),
 * not another (409). Its members run in default whatever their annotations say: one naming
 * another queue is refused, saying so, when posted after it, and waits saying so when posted
 * before it (in its annotation's queue meanwhile, as the snapshot writes it).
 */
static void test_podgroup_without_queue(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    static const char *const grp = "scheduling.k8s.io/group-name",
                             *const qn = "scheduling.volcano.sh/queue-name";
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_policy(&d, "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                                  "metadata: {name: research}\nspec: {weight: 1}\n"),
                     0);
    assert_int_equal(h_start(&d), 0);
    h_expect(&d, "POST", "/v1/podgroups", TOKEN_A,
             "{\"metadata\":{\"name\":\"pgn\",\"namespace\":\"team-a\"},"
             "\"spec\":{\"minMember\":1}}",
             201, &a);
    assert_string_equal(str_of(a.json, "queue"), "default");
    h_answer_free(&a);
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A,
              "{\"metadata\":{\"name\":\"pgn\",\"namespace\":\"team-a\"},"
              "\"spec\":{\"minMember\":1,\"queue\":\"default\"}}",
              200); /* as Volcano shows it: the same */
    h_request(&d, "POST", "/v1/podgroups", TOKEN_A,
              "{\"metadata\":{\"name\":\"pgn\",\"namespace\":\"team-a\"},"
              "\"spec\":{\"minMember\":1,\"queue\":\"research\"}}",
              409); /* another queue is another spec */
    post_queued(&d, "m0", 400, grp, "pgn", qn, "research", NULL);
    json_decref(post_queued(&d, "m1", 201, grp, "pgn", qn, "default", NULL));
    json_decref(post_queued(&d, "m2", 201, grp, "pgn", NULL));
    queue_is(&d, "m1", "default");
    queue_is(&d, "m2", "default");
    /* before its PodGroup: it waits in its annotation's queue; the snapshot's stand-in PodGroup
     * names that queue, so the continuation takes the pod */
    json_decref(post_queued(&d, "w0", 201, grp, "later", qn, "research", NULL));
    queue_is(&d, "w0", "research");
    char path[128], json[128];
    h_expect(&d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, 200, &a);
    if (!strstr(a.body, "spec:\n  minMember: 2\n  queue: \"research\"\n"))
        fail_msg("the PodGroup w0 waits for is not in its queue: %s", a.body);
    if (!strstr(a.body, "metadata: {name: \"pgn\", namespace: \"team-a\"}\nspec:\n  minMember: "
                        "1\n  queue: \"default\"\n"))
        fail_msg("pgn is not in default in the snapshot: %s", a.body);
    snprintf(path, sizeof(path), "%s/snap.yaml", d.dir);
    snprintf(json, sizeof(json), "%s/snap.json", d.dir);
    assert_int_equal(h_write(path, a.body), 0);
    h_answer_free(&a);
    json_t *out = h_continued(path, json), *p;
    size_t i;
    int seen = 0;
    json_array_foreach(json_object_get(out, "pods"), i, p)
    {
        const char *n = json_string_value(json_object_get(p, "name"));
        if (n && !strcmp(n, "team-a/w0")) {
            assert_string_equal(str_of(p, "state"), "pending");
            seen = 1;
        }
    }
    assert_true(seen);
    json_decref(out);
    h_podgroup(&d, "team-a", "later", 1, 201);
    pod_is(&d, "w0", "pending",
           "its queue-name annotation names queue research but its PodGroup team-a/later names no "
           "queue and so runs in default");
    queue_is(&d, "w0", "default");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A member of an elastic gang beyond minMember (its mates completed, counting towards it) is the
 * first to go for a pod of higher priority, and still is after a reload, which knows of the
 * completed members only their count: x, of no gang, stays. */
static void test_elastic_extra_after_reload(void **state)
{
    (void)state;
    for (int reload = 0; reload < 2; reload++) {
        struct daemon d;
        assert_int_equal(h_setup(&d, NULL), 0);
        d.manual_clock = 1;
        assert_int_equal(
            h_write(d.nodes,
                    "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,A100-SXM4-80GB\n"),
            0);
        assert_int_equal(h_policy(&d, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                                      "metadata: {name: high}\nvalue: 1000\n"),
                         0);
        assert_int_equal(h_start(&d), 0);
        h_podgroup(&d, "team-a", "pg3", 1, 201);
        submit_ended(&d, "pg3", "e1", "5s", 0);
        h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 5}", 200);
        json_decref(h_submit(
            &d, TOKEN_A,
            h_pod_annotated("team-a", "e2", 1, 0, "scheduling.k8s.io/group-name", "pg3"), 201));
        /* x starts later: of two victims alike, the one that loses less work would go */
        h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 1}", 200);
        json_decref(h_submit(&d, TOKEN_A, h_pod_annotated("team-a", "x", 1, 0, NULL, NULL), 201));
        pod_is(&d, "e2", "running", NULL);
        pod_is(&d, "x", "running", NULL);
        if (reload)
            assert_int_equal(h_reload(&d), 0);
        json_t *z = h_pod_json("team-a", "z", 1, 0);
        json_object_set_new(json_object_get(z, "spec"), "priorityClassName", json_string("high"));
        json_decref(h_submit(&d, TOKEN_A, json_dumps(z, JSON_COMPACT), 201));
        json_decref(z);
        pod_is(&d, "z", "running", NULL);
        pod_is(&d, "x", "running", NULL);
        pod_is(&d, "e2", "pending", NULL);
        assert_int_equal(h_stop(&d), 0);
        h_cleanup(&d);
    }
}

/* GET /v1/podgroups in pages, as /v1/pods: ?limit from ?continue, each tenant its own, in the
 * order they were made, none repeated or missed when one is deleted between pages. */
/* A page of PodGroups ends past 4 MiB of their labels and annotations, with a continue, though
 * limit is not reached: the list is made on the scheduler thread, and 70 of 1 MiB held it 6 s. */
static void test_podgroups_paged_by_bytes(void **state)
{
    (void)state;
    struct daemon d;
    enum { N = 20, BIG = 250 * 1024 };
    char *body = malloc(BIG + 256), path[96];
    assert_non_null(body);
    assert_int_equal(h_setup(&d, "maxBodyBytes: 1048576\n"), 0);
    assert_int_equal(h_start(&d), 0);
    for (int i = 0; i < N; i++) {
        int at = sprintf(body,
                         "{\"metadata\":{\"name\":\"big%d\",\"namespace\":\"team-a\","
                         "\"annotations\":{\"x\":\"",
                         i);
        memset(body + at, 'a', BIG);
        strcpy(body + at + BIG, "\"}},\"spec\":{\"minMember\":1}}");
        h_request(&d, "POST", "/v1/podgroups", TOKEN_A, body, 201);
    }
    free(body);
    size_t seen = 0, pages = 0;
    char next[40] = "";
    do {
        struct answer a;
        snprintf(path, sizeof(path), "/v1/podgroups%s%s", *next ? "?continue=" : "", next);
        h_expect(&d, "GET", path, TOKEN_A, NULL, 200, &a);
        size_t n = json_array_size(json_object_get(a.json, "items"));
        assert_true(n >= 1 && n <= (4 << 20) / BIG + 1);
        seen += n;
        pages++;
        snprintf(next, sizeof(next), "%s", json_string_value(json_object_get(a.json, "continue")));
        h_answer_free(&a);
    } while (*next && pages < N);
    assert_int_equal(seen, N);
    assert_int_equal(pages, 2);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_podgroups_paged(void **state)
{
    (void)state;
    struct daemon d;
    char name[16], path[96], seen[256] = "";
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_start(&d), 0);
    for (int i = 0; i < 7; i++) {
        snprintf(name, sizeof(name), "g%d", i);
        h_podgroup(&d, i % 3 == 2 ? "team-b" : "team-a", name, 1, 201);
    }
    const char *next = "";
    for (int page = 0; page == 0 || *next; page++) {
        struct answer a;
        snprintf(path, sizeof(path), "/v1/podgroups?limit=2%s%s", *next ? "&continue=" : "", next);
        h_expect(&d, "GET", path, TOKEN_A, NULL, 200, &a);
        json_t *items = json_object_get(a.json, "items");
        assert_true(json_array_size(items) <= 2);
        for (size_t i = 0; i < json_array_size(items); i++) {
            strcat(seen, json_string_value(json_object_get(json_array_get(items, i), "name")));
            strcat(seen, " ");
        }
        static char keep[40];
        snprintf(keep, sizeof(keep), "%s", json_string_value(json_object_get(a.json, "continue")));
        next = keep;
        h_answer_free(&a);
        if (page == 0) { /* one not yet listed goes and the daemon restarts: the next page
                          * starts after the last one given all the same */
            h_request(&d, "DELETE", "/v1/podgroups/team-a/g3", TOKEN_A, NULL, 200);
            h_request(&d, "DELETE", "/v1/podgroups/team-a/g0", TOKEN_A, NULL, 200);
            assert_int_equal(h_stop(&d), 0);
            assert_int_equal(h_start(&d), 0);
        }
    }
    assert_string_equal(seen, "g0 g1 g4 g6 ");
    struct answer a;
    h_expect(&d, "GET", "/v1/podgroups", TOKEN_B, NULL, 200, &a);
    assert_int_equal(json_array_size(json_object_get(a.json, "items")), 2);
    assert_string_equal(json_string_value(json_object_get(a.json, "continue")), "");
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/podgroups?limit=0", TOKEN_A, NULL, 400, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "limit");
    h_answer_free(&a);
    /* an empty continue or limit is not given, as the API server reads a last page's "" */
    h_expect(&d, "GET", "/v1/podgroups?continue=&limit=", TOKEN_A, NULL, 200, &a);
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/podgroups?continue=x", TOKEN_A, NULL, 400, &a);
    assert_string_equal(json_string_value(json_object_get(a.json, "field")), "continue");
    h_answer_free(&a);
    h_expect(&d, "GET", "/v1/podgroups/team-a/g0?limit=1", TOKEN_A, NULL, 400, &a);
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gang_all_or_nothing),
        cmocka_unit_test(test_gang_task_min),
        cmocka_unit_test(test_gang_task_succeeded),
        cmocka_unit_test(test_podgroups_paged),
        cmocka_unit_test(test_podgroups_paged_by_bytes),
        cmocka_unit_test(test_gang_long_name),
        cmocka_unit_test(test_gang_over_quota),
        cmocka_unit_test(test_gang_quota_of_each_model),
        cmocka_unit_test(test_gang_succeeded_kept),
        cmocka_unit_test(test_policy_gang_reloaded),
        cmocka_unit_test(test_elastic_extra_after_reload),
        cmocka_unit_test(test_gang_through_extender),
        cmocka_unit_test(test_bad_podgroups),
        cmocka_unit_test(test_podgroup_metadata),
        cmocka_unit_test(test_podgroup_without_queue),
        cmocka_unit_test(test_gang_min_resources),
        cmocka_unit_test(test_gang_min_resources_over_quota),
        cmocka_unit_test(test_gang_min_resources_quota_lowered),
        cmocka_unit_test(test_gang_min_resources_through_extender),
        cmocka_unit_test(test_store_schema6),
        cmocka_unit_test(test_store_bad_group),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
