/*
 * MIG instances in the real daemon: pods asking nvidia.com/mig-<profile> through POST /v1/pods
 * and through the extender's filter and bind, on a node CSV of A100-40GB, H100 and T4 nodes with
 * the GpuClusterPolicy and GPUQuota of tests/data/mig-daemon. NVIDIA's geometry decides what fits
 * a card (an A100-40GB has 8 memory slices: 3g.20gb + 3g.20gb or 4g.20gb + 3g.20gb fill it); a
 * card in MIG mode takes no whole-card pod and goes back to whole use with its last instance;
 * instances survive a restart; a store of the schema before MIG opens and keeps its pods.
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
#include <sys/stat.h>
#include <time.h>

#define FIXTURE "tests/data/mig-daemon"

static int setup_mig(struct daemon *d, int with_policy)
{
    if (h_setup(d, NULL))
        return -1;
    snprintf(d->nodes, sizeof(d->nodes), FIXTURE "/nodes.csv");
    if (with_policy)
        snprintf(d->policy, sizeof(d->policy), FIXTURE "/policy.yaml");
    return 0;
}

/* A pod asking one MIG instance of @profile (and 1 CPU, 1 GiB); @extra: more limits, or NULL. */
static char *mig_pod(const char *ns, const char *name, const char *profile, const char *model,
                     json_t *extra)
{
    char res[64];
    snprintf(res, sizeof(res), "nvidia.com/mig-%s", profile);
    json_t *lim = json_pack("{s:i, s:s, s:s}", res, 1, "cpu", "1", "memory", "1Gi");
    if (extra)
        json_object_update(lim, extra);
    json_decref(extra);
    json_t *ann = model ? json_pack("{s:s}", "gpusched.io/gpu-model", model) : json_object();
    json_t *pod = json_pack("{s:s, s:{s:s, s:s, s:o}, s:{s:[{s:s, s:{s:o}}]}}", "kind", "Pod",
                            "metadata", "name", name, "namespace", ns, "annotations", ann, "spec",
                            "containers", "name", "main", "resources", "limits", lim);
    char *s = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    return s;
}

/* POST @body (freed) as @token; the answer's status must be @status; returns the answer. */
static struct answer post(const struct daemon *d, const char *token, char *body, long status)
{
    struct answer a;
    h_expect(d, "POST", "/v1/pods", token, body, status, &a);
    free(body);
    return a;
}

/* GET pod @ns/@name: its state, node, card and MIG start ("running n-a40-0 0 4"). */
static void pod_where(const struct daemon *d, const char *ns, const char *name, char *out,
                      size_t size)
{
    char path[160];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/pods/%s/%s", ns, name);
    assert_int_equal(h_call(d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    json_t *mig = json_object_get(a.json, "mig");
    snprintf(out, size, "%s %s %lld %lld", json_string_value(json_object_get(a.json, "state")),
             json_is_string(json_object_get(a.json, "node"))
                 ? json_string_value(json_object_get(a.json, "node"))
                 : "-",
             json_array_size(json_object_get(a.json, "gpus"))
                 ? (long long)json_integer_value(json_array_get(json_object_get(a.json, "gpus"), 0))
                 : -1LL,
             json_is_integer(json_object_get(mig, "start"))
                 ? (long long)json_integer_value(json_object_get(mig, "start"))
                 : -1LL);
    h_answer_free(&a);
}

/* A team-a pod asking one whole A100-SXM4-40GB card. */
static char *whole_a40(const char *name)
{
    char *w = h_pod("team-a", name, 1, 0);
    json_t *wj = json_loads(w, 0, NULL);
    free(w);
    json_object_set_new(json_object_get(wj, "metadata"), "annotations",
                        json_pack("{s:s}", "gpusched.io/gpu-model", "A100-SXM4-40GB"));
    w = json_dumps(wj, JSON_COMPACT);
    json_decref(wj);
    return w;
}

/* POST a pod that must be accepted (201). */
static void expect_at(const struct daemon *d, const char *ns, const char *name, const char *want)
{
    char got[160];
    pod_where(d, ns, name, got, sizeof(got));
    if (strcmp(got, want))
        fail_msg("%s/%s is \"%s\", expected \"%s\"", ns, name, got, want);
}

/* Card @gpu of node @node as GET /v1/nodes/NODE shows it, as "mode list": "mig
 * 3g.20gb@0,3g.20gb@4", "exclusive " or "free ". */
static void card_state(const struct daemon *d, const char *node, int gpu, char *out, size_t size)
{
    char path[160];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/nodes/%s", node);
    assert_int_equal(h_call(d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    json_t *card = json_array_get(json_object_get(a.json, "gpu"), (size_t)gpu);
    json_t *inst = json_object_get(card, "mig_instances");
    int off = snprintf(out, size, "%s ", json_string_value(json_object_get(card, "mode")));
    for (size_t k = 0; k < json_array_size(inst); k++)
        off += snprintf(
            out + off, size - (size_t)off, "%s%s@%lld", k ? "," : "",
            json_string_value(json_object_get(json_array_get(inst, k), "profile")),
            (long long)json_integer_value(json_object_get(json_array_get(inst, k), "start")));
    h_answer_free(&a);
}

static void expect_card(const struct daemon *d, const char *node, int gpu, const char *want)
{
    char got[256];
    card_state(d, node, gpu, got, sizeof(got));
    if (strcmp(got, want))
        fail_msg("%s card %d is \"%s\", expected \"%s\"", node, gpu, got, want);
}

static void cancel(const struct daemon *d, const char *ns, const char *name)
{
    char path[160];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/pods/%s/%s", ns, name);
    assert_int_equal(h_call(d, "DELETE", path, TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    h_answer_free(&a);
}

static void reason_has(const struct daemon *d, const char *ns, const char *name, const char *want)
{
    char path[160];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/pods/%s/%s", ns, name);
    assert_int_equal(h_call(d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
    const char *why = json_string_value(json_object_get(a.json, "reason"));
    if (!why || !strstr(why, want))
        fail_msg("%s/%s: reason \"%s\" lacks \"%s\"", ns, name, why ? why : "(none)", want);
    h_answer_free(&a);
}

/* Geometry on A100-40GB cards; whole-card pods kept off MIG cards; cancel gives the card back. */
static void test_api_geometry(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(setup_mig(&d, 1), 0);
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "a1", "3g.20gb", NULL, NULL), 201));
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "a2", "3g.20gb", NULL, NULL), 201));
    /* The second goes to the card already in MIG mode; the two fill its 8 memory slices. */
    char where[2][160];
    pod_where(&d, "team-a", "a1", where[0], sizeof(where[0]));
    pod_where(&d, "team-a", "a2", where[1], sizeof(where[1]));
    assert_true(!strncmp(where[0], "running n-a40-0 0 ", 18));
    assert_true(!strncmp(where[1], "running n-a40-0 0 ", 18));
    assert_string_not_equal(where[0], where[1]);
    expect_card(&d, "n-a40-0", 0, "mig 3g.20gb@0,3g.20gb@4");
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "a3", "7g.40gb", NULL, NULL), 201));
    expect_at(&d, "team-a", "a3", "running n-a40-1 0 0");
    /* Both A100-40GB cards are MIG now: a whole card of that model waits. */
    json_decref(h_submit(&d, TOKEN_A, whole_a40("w1"), 201));
    expect_at(&d, "team-a", "w1", "pending - -1 -1");
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "a4", "1g.5gb", NULL, NULL), 201));
    reason_has(&d, "team-a", "a4",
               "0/4 nodes are available: 2 no free MIG slot for profile 1g.5gb, 2 GPU model has "
               "no MIG profile 1g.5gb.");
    cancel(&d, "team-a", "a4");
    /* The 7g goes: its card is whole again and the waiting whole-card pod takes it. */
    cancel(&d, "team-a", "a3");
    expect_at(&d, "team-a", "w1", "running n-a40-1 0 -1");
    expect_card(&d, "n-a40-1", 0, "exclusive ");
    cancel(&d, "team-a", "a1");
    cancel(&d, "team-a", "a2");
    expect_card(&d, "n-a40-0", 0, "free ");
    /* 4g.20gb + 3g.20gb fill a card too; a 7g.40gb after them finds no card. */
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "b1", "4g.20gb", NULL, NULL), 201));
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "b2", "3g.20gb", NULL, NULL), 201));
    expect_card(&d, "n-a40-0", 0, "mig 4g.20gb@0,3g.20gb@4");
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "b3", "7g.40gb", NULL, NULL), 201));
    reason_has(&d, "team-a", "b3", "no free MIG slot for profile 7g.40gb");
    /* An H100 profile goes to the H100 node; a gpu-model that excludes it is refused. */
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "h1", "3g.40gb", NULL, NULL), 201));
    expect_at(&d, "team-a", "h1", "running n-h100-0 0 4");
    struct answer a =
        post(&d, TOKEN_A, mig_pod("team-a", "h2", "3g.40gb", "A100-SXM4-40GB", NULL), 400);
    assert_non_null(strstr(a.body, "gpusched.io/gpu-model"));
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* What the policy does not allow, more than one instance, and MIG with cards: 400 with why. */
static void test_refusals(void **state)
{
    (void)state;
    struct daemon d;
    static const struct {
        const char *profile, *field, *why;
        int gpus; /* nvidia.com/gpu with it, 0 none */
    } bad[] = {
        {"1g.20gb", "spec.containers[0].resources.limits",
         "allows that MIG profile on no GPU model of this cluster", 0},
        {"2g.10gb", "spec.containers[0].resources", "a MIG instance or cards, not both", 1},
    };
    assert_int_equal(setup_mig(&d, 1), 0);
    assert_int_equal(h_start(&d), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *extra = bad[i].gpus ? json_pack("{s:i}", "nvidia.com/gpu", bad[i].gpus) : NULL;
        struct answer a =
            post(&d, TOKEN_A, mig_pod("team-a", "x", bad[i].profile, NULL, extra), 400);
        const char *field = json_string_value(json_object_get(a.json, "field"));
        if (!field || !strstr(field, bad[i].field) || !strstr(a.body, bad[i].why))
            fail_msg("case %zu: %s", i, a.body);
        h_answer_free(&a);
    }
    char *two = mig_pod("team-a", "x", "1g.5gb", NULL, NULL);
    char *at = strstr(two, "\"nvidia.com/mig-1g.5gb\":1");
    at[strlen("\"nvidia.com/mig-1g.5gb\":")] = '2';
    struct answer a = post(&d, TOKEN_A, two, 400);
    assert_non_null(strstr(a.body, "one per container"));
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
    /* Without a GpuClusterPolicy, every card of a model with a MIG geometry may take any of
     * its profiles (a simulated run's rule too). */
    assert_int_equal(setup_mig(&d, 0), 0);
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "x", "3g.20gb", NULL, NULL), 201));
    expect_at(&d, "team-a", "x", "running n-a40-0 0 4");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* GPUQuota counts an instance as its compute slices' part of a card, shared (team-b: 1 GPU). */
static void test_quota(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(setup_mig(&d, 1), 0);
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, TOKEN_B, mig_pod("team-b", "q1", "4g.20gb", NULL, NULL), 201));
    json_decref(h_submit(&d, TOKEN_B, mig_pod("team-b", "q2", "3g.20gb", NULL, NULL), 201));
    json_decref(h_submit(&d, TOKEN_B, mig_pod("team-b", "q3", "1g.5gb", NULL, NULL), 201));
    expect_at(&d, "team-b", "q1", "running n-a40-0 0 0");
    expect_at(&d, "team-b", "q2", "running n-a40-0 0 4");
    /* 571 + 428 of 1000 milli-GPU: 142 more does not fit */
    reason_has(&d, "team-b", "q3",
               "tenant team-b: GPUQuota a100-40gb total 0.999/1 GPUs, the pod asks 0.142");
    /* the tenant's use (and its queue's fair share) counts the instances the same way */
    struct answer a;
    assert_int_equal(h_call(&d, "GET", "/v1/tenants/team-b", TOKEN_B, NULL, &a), 0);
    assert_int_equal(json_integer_value(json_object_get(a.json, "gpu_milli_allocated")), 999);
    assert_int_equal(json_integer_value(json_object_get(a.json, "gpu_milli_pending")), 142);
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* Instances come back exactly after a restart, and their cards stay taken. */
static void test_restart(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(setup_mig(&d, 1), 0);
    assert_int_equal(h_start(&d), 0);
    const char *const profiles[3] = {"3g.20gb", "2g.10gb", "7g.80gb"};
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "r%d", i);
        json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", name, profiles[i], NULL, NULL), 201));
    }
    char before[3][160], after[160], card[256];
    for (int i = 0; i < 3; i++)
        pod_where(&d, "team-a", (const char *[]){"r0", "r1", "r2"}[i], before[i], 160);
    card_state(&d, "n-a40-0", 0, card, sizeof(card));
    assert_string_equal(card, "mig 2g.10gb@0,3g.20gb@4");
    h_kill(&d); /* as a crash: only what was committed counts */
    assert_int_equal(h_start(&d), 0);
    for (int i = 0; i < 3; i++) {
        pod_where(&d, "team-a", (const char *[]){"r0", "r1", "r2"}[i], after, sizeof(after));
        assert_string_equal(after, before[i]);
    }
    expect_card(&d, "n-a40-0", 0, card);
    /* The restored instances hold their slices: a 4g.20gb no longer fits that card. */
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "r3", "4g.20gb", NULL, NULL), 201));
    expect_at(&d, "team-a", "r3", "running n-a40-1 0 0");
    struct answer a;
    assert_int_equal(h_call(&d, "GET", "/v1/pods/team-a/r0", TOKEN_A, NULL, &a), 0);
    json_t *ann = json_object_get(a.json, "annotations");
    assert_string_equal(json_string_value(json_object_get(ann, "gpusched.io/mig-profile")),
                        "3g.20gb");
    assert_string_equal(json_string_value(json_object_get(ann, "gpusched.io/mig-placement")), "4");
    assert_string_equal(json_string_value(json_object_get(ann, "gpusched.io/gpu-index")), "0");
    h_answer_free(&a);
    assert_int_equal(h_call(&d, "GET", "/metrics", TOKEN_ADMIN, NULL, &a), 0);
    assert_non_null(strstr(a.body,
                           "gpusched_mig_instances_allocated{tenant=\"team-a\",queue=\"default\","
                           "namespace=\"team-a\",profile=\"3g.20gb\"} 1\n"));
    h_answer_free(&a);
    /* a snapshot of running MIG instances is continued: its mig-start is a string, "4", as an
     * annotation's value is (it was refused as "not an integer") */
    char path[160], json[160];
    snprintf(path, sizeof(path), "%s/snap.yaml", d.dir);
    snprintf(json, sizeof(json), "%s/snap.json", d.dir);
    h_expect(&d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, 200, &a);
    assert_non_null(strstr(a.body, "\"sim.gpusched.io/mig-start\": \"4\""));
    assert_int_equal(h_write(path, a.body), 0);
    h_answer_free(&a);
    json_t *out = h_continued(path, json);
    assert_non_null(out);
    json_decref(out);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* The store as schema 1 wrote it (before MIG): one whole-card pod running on n-a40-0. A frozen
 * copy of that schema on purpose: store.c's own text moves on, an old file on disk does not. */
static const char schema1[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "CREATE TABLE pods(id INTEGER PRIMARY KEY, seq INTEGER NOT NULL UNIQUE,"
    " namespace TEXT NOT NULL, name TEXT NOT NULL, tenant TEXT NOT NULL, uid TEXT NOT NULL,"
    " meta TEXT NOT NULL, cpu_milli INTEGER NOT NULL, memory_mib INTEGER NOT NULL,"
    " num_gpu INTEGER NOT NULL, gpu_milli INTEGER NOT NULL, models TEXT NOT NULL,"
    " gpumem_mib INTEGER NOT NULL, gpucores INTEGER NOT NULL, priority INTEGER NOT NULL,"
    " source INTEGER NOT NULL, state INTEGER NOT NULL, node TEXT, reason TEXT NOT NULL,"
    " submit_us INTEGER NOT NULL, start_us INTEGER NOT NULL, UNIQUE(namespace, name));"
    "CREATE TABLE assignments(pod_id INTEGER NOT NULL REFERENCES pods(id) ON DELETE CASCADE,"
    " node TEXT NOT NULL, gpu INTEGER NOT NULL, milli INTEGER NOT NULL,"
    " PRIMARY KEY(pod_id, gpu)) WITHOUT ROWID;"
    "CREATE TABLE ledger(id INTEGER PRIMARY KEY, pod_seq INTEGER NOT NULL,"
    " namespace TEXT NOT NULL, name TEXT NOT NULL, tenant TEXT NOT NULL, uid TEXT NOT NULL,"
    " node TEXT NOT NULL, gpus TEXT NOT NULL, gpu_milli INTEGER NOT NULL,"
    " start_us INTEGER NOT NULL, end_us INTEGER);"
    "INSERT INTO meta VALUES('schema', 1);"
    "INSERT INTO pods VALUES(1, 1, 'team-a', 'old', 'team-a', 'u-1',"
    " '{\"annotations\":{},\"labels\":{}}', 1000, 1024, 1, 1000, '', 0, 0, 0, 0, 1,"
    " 'n-a40-0', '', 1700000000000000, 1700000000000000);"
    "INSERT INTO assignments VALUES(1, 'n-a40-0', 0, 1000);"
    "INSERT INTO ledger VALUES(1, 1, 'team-a', 'old', 'team-a', 'u-1', 'n-a40-0', '0', 1000,"
    " 1700000000000000, NULL);";

/* A schema 1 store opens: brought forward to the last schema, its pod on its card, MIG placed
 * around it. */
static void test_old_store(void **state)
{
    (void)state;
    struct daemon d;
    char path[128];
    sqlite3 *db;
    assert_int_equal(setup_mig(&d, 1), 0);
    snprintf(path, sizeof(path), "%s/data", d.dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/data/gpusched.db", d.dir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, schema1, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(h_start(&d), 0);
    assert_true(h_log_has(&d, "store schema brought forward"));
    expect_at(&d, "team-a", "old", "running n-a40-0 0 -1");
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "m1", "7g.40gb", NULL, NULL), 201));
    expect_at(&d, "team-a", "m1", "running n-a40-1 0 0");
    h_kill(&d);
    /* brought to the last schema: the pod's history (schema 5, 8, 10) not known, so none */
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT (SELECT value FROM meta WHERE key = 'schema'),"
                                        " evictions, first_start_us IS NULL, charged, saved_us,"
                                        " last_eviction || last_eviction_us, nodes_ok IS NULL"
                                        " FROM pods WHERE name = 'old'",
                                        -1, &q, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(q, 0), 13);
    assert_int_equal(sqlite3_column_int(q, 1), 0);
    assert_int_equal(sqlite3_column_int(q, 2), 1);
    assert_int_equal(sqlite3_column_int(q, 3), 0);
    assert_int_equal(sqlite3_column_int(q, 4), 0); /* nothing saved by checkpoints (schema 8) */
    assert_string_equal((const char *)sqlite3_column_text(q, 5), "0"); /* no eviction (10) */
    assert_int_equal(sqlite3_column_int(q, 6), 1);                     /* any node (13) */
    sqlite3_finalize(q);
    sqlite3_close(db);
    assert_int_equal(h_start(&d), 0); /* the last schema now: opens as it is */
    expect_at(&d, "team-a", "m1", "running n-a40-1 0 0");
    expect_at(&d, "team-a", "old", "running n-a40-0 0 -1");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* POST @args (consumed) to /extender/@verb; the JSON answer. */
static json_t *verb(const struct daemon *d, const char *v, json_t *args)
{
    char path[64], *body = json_dumps(args, JSON_COMPACT);
    struct answer a;
    json_decref(args);
    snprintf(path, sizeof(path), "/extender/%s", v);
    assert_int_equal(h_call(d, "POST", path, TOKEN_ADMIN, body, &a), 0);
    free(body);
    assert_int_equal(a.status, 200);
    json_t *j = json_incref(a.json);
    h_answer_free(&a);
    return j;
}

static json_t *ext_args(const char *name, const char *profile)
{
    char *pod = mig_pod("team-a", name, profile, NULL, NULL);
    json_t *args = json_pack("{s:o, s:[s, s, s, s]}", "Pod", json_loads(pod, 0, NULL), "NodeNames",
                             "n-a40-0", "n-a40-1", "n-h100-0", "n-t4-0");
    json_object_set_new(json_object_get(json_object_get(args, "Pod"), "metadata"), "uid",
                        json_string(name)); /* the pod's name as its UID */
    free(pod);
    return args;
}

/* filter passes the nodes that can host the profile, naming it for the others; bind places. */
static void test_extender(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(setup_mig(&d, 1), 0);
    assert_int_equal(h_start(&d), 0);
    json_t *pr = verb(&d, "prioritize", ext_args("e1", "7g.80gb"));
    assert_int_equal(json_array_size(pr), 4);
    assert_string_equal(json_string_value(json_object_get(json_array_get(pr, 2), "Host")),
                        "n-h100-0");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(pr, 2), "Score")), 10);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(pr, 0), "Score")), 0);
    json_decref(pr);
    for (int i = 1; i <= 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "e%d", i);
        json_t *f = verb(&d, "filter", ext_args(name, "7g.80gb"));
        json_t *ok = json_object_get(f, "NodeNames"), *failed = json_object_get(f, "FailedNodes");
        assert_string_equal(json_string_value(json_object_get(failed, "n-a40-0")),
                            "GPU model has no MIG profile 7g.80gb");
        if (i == 3) { /* both H100 cards hold a 7g.80gb */
            assert_int_equal(json_array_size(ok), 0);
            assert_string_equal(json_string_value(json_object_get(failed, "n-h100-0")),
                                "no free MIG slot for profile 7g.80gb");
            json_decref(f);
            break;
        }
        assert_int_equal(json_array_size(ok), 1);
        assert_string_equal(json_string_value(json_array_get(ok, 0)), "n-h100-0");
        json_decref(f);
        json_t *b = verb(&d, "bind",
                         json_pack("{s:s, s:s, s:s, s:s}", "PodName", name, "PodNamespace",
                                   "team-a", "PodUID", name, "Node", "n-h100-0"));
        assert_string_equal(json_string_value(json_object_get(b, "Error")), "");
        json_decref(b);
    }
    expect_at(&d, "team-a", "e1", "running n-h100-0 0 0");
    expect_at(&d, "team-a", "e2", "running n-h100-0 1 0");
    expect_card(&d, "n-h100-0", 1, "mig 7g.80gb@0");
    /* bind on a node that cannot host it: the protocol's Error field says why */
    json_t *f = verb(&d, "filter", ext_args("e4", "3g.20gb"));
    json_decref(f);
    json_t *b = verb(&d, "bind",
                     json_pack("{s:s, s:s, s:s, s:s}", "PodName", "e4", "PodNamespace", "team-a",
                               "PodUID", "e4", "Node", "n-h100-0"));
    assert_non_null(strstr(json_string_value(json_object_get(b, "Error")),
                           "node n-h100-0: GPU model has no MIG profile 3g.20gb"));
    json_decref(b);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void gpu_health(const struct daemon *d, const char *node, const char *body)
{
    char path[160];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/nodes/%s/gpus/0/health", node);
    assert_int_equal(h_call(d, "POST", path, TOKEN_ADMIN, body, &a), 0);
    assert_int_equal(a.status, 200);
    h_answer_free(&a);
}

/* A failed MIG card: its instances go (Xid 79) and it takes none; a draining one keeps its own. */
static void test_card_failure(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(setup_mig(&d, 1), 0);
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "f1", "3g.20gb", NULL, NULL), 201));
    expect_at(&d, "team-a", "f1", "running n-a40-0 0 4");
    gpu_health(&d, "n-a40-0", "{\"healthy\": false, \"xid\": 79}");
    expect_at(&d, "team-a", "f1", "running n-a40-1 0 4"); /* requeued, placed again */
    expect_card(&d, "n-a40-0", 0, "free ");
    gpu_health(&d, "n-a40-1", "{\"healthy\": false, \"xid\": 31}"); /* drains */
    expect_at(&d, "team-a", "f1", "running n-a40-1 0 4");
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "f2", "3g.20gb", NULL, NULL), 201));
    reason_has(&d, "team-a", "f2", "no free MIG slot for profile 3g.20gb");
    gpu_health(&d, "n-a40-1", "{\"healthy\": true}");
    expect_at(&d, "team-a", "f2", "running n-a40-1 0 0");
    cancel(&d, "team-a", "f1");
    cancel(&d, "team-a", "f2");
    /* Its card left MIG while unhealthy: it stays held from whole-card pods too. */
    json_decref(h_submit(&d, TOKEN_A, whole_a40("w"), 201));
    expect_at(&d, "team-a", "w", "running n-a40-1 0 -1");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static const char narrow_policy[] = "apiVersion: nvidia.com/v1\n"
                                    "kind: GpuClusterPolicy\n"
                                    "spec:\n"
                                    "  mig: {strategy: mixed}\n"
                                    "  devices:\n"
                                    "    - name: A100-SXM4-40GB\n"
                                    "      migEnabled: true\n"
                                    "      migProfiles: [3g.20gb%s]\n";

/* A reload that allows another profile: a card already in MIG mode takes it too. */
static void test_reload(void **state)
{
    (void)state;
    struct daemon d;
    char text[512];
    assert_int_equal(setup_mig(&d, 0), 0);
    snprintf(text, sizeof(text), narrow_policy, "");
    assert_int_equal(h_policy(&d, text), 0);
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "p1", "3g.20gb", NULL, NULL), 201));
    struct answer a = post(&d, TOKEN_A, mig_pod("team-a", "p2", "2g.10gb", NULL, NULL), 400);
    h_answer_free(&a);
    snprintf(text, sizeof(text), narrow_policy, ", 2g.10gb");
    assert_int_equal(h_policy(&d, text), 0);
    kill(d.pid, SIGHUP);
    for (int i = 0; i < 3000 && !h_log_has(&d, "config reloaded"); i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    assert_true(h_log_has(&d, "config reloaded"));
    char said[600]; /* the log names every file read again, the policy file too */
    snprintf(said, sizeof(said), "policy_files=%s ", d.policy);
    assert_true(h_log_has(&d, said));
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "p2", "2g.10gb", NULL, NULL), 201));
    /* with 3g.20gb alone allowed, its two starts keep as much placeable: the lower wins */
    expect_at(&d, "team-a", "p1", "running n-a40-0 0 0");
    expect_card(&d, "n-a40-0", 0, "mig 3g.20gb@0,2g.10gb@4");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* @pod (freed) with spec.@key set to @v (consumed). */
static char *with_spec(char *pod, const char *key, json_t *v)
{
    json_t *j = json_loads(pod, 0, NULL);
    free(pod);
    json_object_set_new(json_object_get(j, "spec"), key, v);
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return s;
}

static json_t *uid_of(const struct daemon *d, const char *name)
{
    char path[160];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    assert_int_equal(h_call(d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
    json_t *uid = json_pack("{s:O}", "UID", json_object_get(a.json, "uid"));
    h_answer_free(&a);
    return uid;
}

/* preempt for a MIG pod keeps the victims whose slices it needs, and cards they would empty. */
static void test_preempt(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(setup_mig(&d, 1), 0);
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "low", "3g.20gb", NULL, NULL), 201));
    json_decref(h_submit(&d, TOKEN_A,
                         with_spec(mig_pod("team-a", "mid", "3g.20gb", NULL, NULL),
                                   "priorityClassName", json_string("p10")),
                         201));
    json_decref(h_submit(&d, TOKEN_A, whole_a40("w"), 201));
    expect_at(&d, "team-a", "low", "running n-a40-0 0 4");
    expect_at(&d, "team-a", "mid", "running n-a40-0 0 0");
    /* A 4g.20gb starts only at slice 0 (NVIDIA's placement {0}:4): evicting "low" first, as
     * the lower priority, frees slices 4-7, not enough; "mid" must go and "low" is spared. */
    char *pod = with_spec(with_spec(mig_pod("team-a", "urgent", "4g.20gb", NULL, NULL),
                                    "priorityClassName", json_string("urgent")),
                          "priority", json_integer(100)); /* a class of the API server's */
    json_t *args = json_pack("{s:o, s:{s:{s:[o, o], s:i}, s:{s:[o], s:i}, s:{s:[], s:i}}}", "Pod",
                             json_loads(pod, 0, NULL), "NodeNameToMetaVictims", "n-a40-0", "Pods",
                             uid_of(&d, "low"), uid_of(&d, "mid"), "NumPDBViolations", 0, "n-a40-1",
                             "Pods", uid_of(&d, "w"), "NumPDBViolations", 0, "n-h100-0", "Pods",
                             "NumPDBViolations", 0);
    free(pod);
    json_t *mid = uid_of(&d, "mid"), *w = uid_of(&d, "w");
    json_t *ans = verb(&d, "preempt", args), *r = json_object_get(ans, "NodeNameToMetaVictims");
    json_t *want = json_pack("{s:{s:[O], s:i}, s:{s:[O], s:i}}", "n-a40-0", "Pods", mid,
                             "NumPDBViolations", 0, "n-a40-1", "Pods", w, "NumPDBViolations", 0);
    if (!json_equal(r, want)) {
        char *got = json_dumps(r, JSON_COMPACT);
        fail_msg("preempt kept %s", got);
        free(got);
    }
    json_decref(want);
    json_decref(mid);
    json_decref(w);
    json_decref(ans);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A whole-card pod of higher priority preempts MIG pods: the card their instances all leave is
 * free again, and the node where the least work is lost is chosen: two 3g.20gb (3/7 of a card
 * each) started after one 7g.40gb have done less, and hold less of their card, so they go. */
static void test_whole_card_preempts_mig(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(setup_mig(&d, 1), 0);
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "a3", "7g.40gb", NULL, NULL), 201));
    expect_at(&d, "team-a", "a3", "running n-a40-0 0 0");
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "a1", "3g.20gb", NULL, NULL), 201));
    json_decref(h_submit(&d, TOKEN_A, mig_pod("team-a", "a2", "3g.20gb", NULL, NULL), 201));
    json_decref(h_submit(&d, TOKEN_A,
                         with_spec(whole_a40("w1"), "priorityClassName", json_string("p10")), 201));
    expect_at(&d, "team-a", "w1", "running n-a40-1 0 -1");
    expect_at(&d, "team-a", "a1", "pending - -1 -1");
    expect_at(&d, "team-a", "a2", "pending - -1 -1");
    expect_card(&d, "n-a40-1", 0, "exclusive ");
    expect_at(&d, "team-a", "a3", "running n-a40-0 0 0");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/*
 * A GPUQuota that leaves out a model the pod could use: the node of that model is reported as
 * over the quota, not as a model without the profile; the extender's filter says the same.
 */
static void test_quota_narrows_models(void **state)
{
    (void)state;
    struct daemon d;
    assert_int_equal(h_setup(&d, NULL), 0);
    snprintf(d.nodes, sizeof(d.nodes), "tests/data/mig-quota/nodes.csv");
    snprintf(d.policy, sizeof(d.policy), "tests/data/mig-quota/policy.yaml");
    assert_int_equal(h_start(&d), 0);
    json_decref(
        h_submit(&d, TOKEN_A, mig_pod("team-a", "full", "7g.80gb", "A100-SXM4-80GB", NULL), 201));
    expect_at(&d, "team-a", "full", "running n-a80-0 0 0");
    json_decref(h_submit(&d, TOKEN_B, mig_pod("team-b", "b1", "3g.40gb", NULL, NULL), 201));
    reason_has(&d, "team-b", "b1",
               "0/2 nodes are available: 1 no free MIG slot for profile 3g.40gb, 1 tenant team-b: "
               "no GPUQuota for H100-SXM5-80GB.");
    char *pod = mig_pod("team-b", "b2", "3g.40gb", NULL, NULL);
    json_t *f = verb(&d, "filter",
                     json_pack("{s:o, s:[s, s]}", "Pod", json_loads(pod, 0, NULL), "NodeNames",
                               "n-a80-0", "n-h100-0"));
    free(pod);
    json_t *failed = json_object_get(f, "FailedNodes");
    assert_string_equal(json_string_value(json_object_get(failed, "n-h100-0")),
                        "tenant team-b: no GPUQuota for H100-SXM5-80GB");
    json_decref(f);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_geometry),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_quota),
        cmocka_unit_test(test_quota_narrows_models),
        cmocka_unit_test(test_restart),
        cmocka_unit_test(test_old_store),
        cmocka_unit_test(test_extender),
        cmocka_unit_test(test_card_failure),
        cmocka_unit_test(test_reload),
        cmocka_unit_test(test_preempt),
        cmocka_unit_test(test_whole_card_preempts_mig),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
