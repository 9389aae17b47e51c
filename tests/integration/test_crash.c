/*
 * SIGKILL at random moments while clients submit and cancel pods, then restart, round after
 * round, checking after every kill, in the store as left on disk and then through the API:
 *   - every pod whose submission was acknowledged (201) exists exactly once, unless its cancel
 *     was acknowledged (then it is gone); a pod whose answer never came exists at most once;
 *   - no card is double-allocated: the assignments of each card add up to at most 1000 milli;
 *   - the ledger agrees: each running pod has exactly one open ledger row, on its node, and
 *     holds num_gpu cards; no open row belongs to anything else; pending pods hold no card;
 *   - the restarted daemon's allocation equals the store's;
 *   - evictions are as safe: one submission in six is of a higher PriorityClass, so once the
 *     cards are taken pods are preempted (sent back to pending, their cards and ledger rows
 *     closed) while the kills come; the test fails unless some were;
 *   - a pod's history survives too: the restarted scheduler (GET /v1/snapshot) counts the
 *     evictions the store kept for each pod, its first start and, running, the part of the
 *     GPUQuota it is charged to (dedicated or shared); the test fails unless some pod was
 *     evicted and some started again.
 * GS_CRASH_ROUNDS (default 3) and GS_CRASH_SEED (default: the time) set the rounds and the
 * random moments; a failure prints the seed to rerun it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/harness.h"

#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS    4
#define PER_THREAD 400 /* submissions per thread per round, at most */
#define ROUNDS_MAX 200
#define NAMES_MAX  (ROUNDS_MAX * THREADS * PER_THREAD)

enum fate { SENT = 0, ACKED, REFUSED, CANCEL_SENT, CANCELLED };

struct rec {
    char name[32];
    enum fate fate;
};

/* Pods of class "low" (the default) and "high": the high ones preempt. */
static const char classes[] = "apiVersion: scheduling.k8s.io/v1\n"
                              "kind: PriorityClass\n"
                              "metadata: {name: low}\n"
                              "value: 10\n"
                              "globalDefault: true\n"
                              "---\n"
                              "apiVersion: scheduling.k8s.io/v1\n"
                              "kind: PriorityClass\n"
                              "metadata: {name: high}\n"
                              "value: 1000\n"
                              "---\n"
                              "kind: GPUQuota\n"
                              "metadata: {name: q, namespace: team-a}\n"
                              "spec:\n"
                              "  tenant: team-a\n"
                              "  quotas:\n"
                              "    A100-SXM4-80GB: {total: 160, dedicated: 96, shared: 64}\n"
                              "    V100M32: {total: 80, dedicated: 48, shared: 32}\n";

static struct rec *recs;
static size_t nrecs;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct daemon d;
static volatile int killed;

struct worker {
    unsigned seed;
    int round, id;
};

static size_t add_rec(const char *name)
{
    pthread_mutex_lock(&mu);
    size_t i = nrecs++;
    snprintf(recs[i].name, sizeof(recs[i].name), "%s", name);
    recs[i].fate = SENT;
    pthread_mutex_unlock(&mu);
    return i;
}

static void set_fate(size_t i, enum fate f)
{
    pthread_mutex_lock(&mu);
    recs[i].fate = f;
    pthread_mutex_unlock(&mu);
}

/* Submit pods (whole cards or shares) and now and then cancel one acknowledged earlier. */
static void *work(void *arg)
{
    struct worker *w = arg;
    size_t mine[PER_THREAD];
    int nmine = 0;
    for (int i = 0; i < PER_THREAD && !killed; i++) {
        char name[32];
        struct answer a;
        if (nmine > 4 && rand_r(&w->seed) % 5 == 0) {
            size_t k = mine[rand_r(&w->seed) % (unsigned)nmine];
            char path[96];
            snprintf(path, sizeof(path), "/v1/pods/team-a/%s", recs[k].name);
            if (recs[k].fate != ACKED)
                continue;
            set_fate(k, CANCEL_SENT);
            if (h_call(&d, "DELETE", path, TOKEN_A, NULL, &a) == 0 && a.status == 200)
                set_fate(k, CANCELLED);
            h_answer_free(&a);
            continue;
        }
        snprintf(name, sizeof(name), "c-%d-%d-%d", w->round, w->id, i);
        int share = rand_r(&w->seed) % 3 == 0;
        char *body = h_pod("team-a", name, share ? 1 : 1 + (int)(rand_r(&w->seed) % 2),
                           share ? 10 + (int)(rand_r(&w->seed) % 80) : 0);
        if (rand_r(&w->seed) % 6 == 0) { /* a preemptor */
            json_t *pod = json_loads(body, 0, NULL);
            json_object_set_new(json_object_get(pod, "spec"), "priorityClassName",
                                json_string("high"));
            free(body);
            body = json_dumps(pod, JSON_COMPACT);
            json_decref(pod);
        }
        size_t r = add_rec(name);
        int rc = h_call(&d, "POST", "/v1/pods", TOKEN_A, body, &a);
        free(body);
        if (rc == 0 && a.status == 201) {
            set_fate(r, ACKED);
            mine[nmine++] = r;
        } else if (rc == 0 && a.status > 0 && a.status < 500) {
            set_fate(r, REFUSED);
        }
        h_answer_free(&a);
    }
    return NULL;
}

/* The daemon's store file, opened with @flags. */
static sqlite3 *store_open(int flags)
{
    char path[128];
    sqlite3 *db;
    snprintf(path, sizeof(path), "%s/data/gpusched.db", d.dir);
    assert_int_equal(sqlite3_open_v2(path, &db, flags, NULL), SQLITE_OK);
    return db;
}

/* @sql prepared on @db. */
static sqlite3_stmt *prepare(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
    return q;
}

static int64_t one_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *q = prepare(db, sql);
    int64_t v = -1;
    if (sqlite3_step(q) == SQLITE_ROW)
        v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return v;
}

/* The store as the kill left it: every invariant in the header, and the fates brought up to
 * date (an unanswered submission either made it or never will). */
static void check_store(unsigned seed)
{
    sqlite3 *db = store_open(SQLITE_OPEN_READWRITE);
    sqlite3_stmt *q =
        prepare(db, "SELECT count(*) FROM pods WHERE namespace = 'team-a' AND name = ?1");
    for (size_t i = 0; i < nrecs; i++) {
        sqlite3_bind_text(q, 1, recs[i].name, -1, SQLITE_STATIC);
        assert_int_equal(sqlite3_step(q), SQLITE_ROW);
        int64_t n = sqlite3_column_int64(q, 0);
        sqlite3_reset(q);
        if ((recs[i].fate == ACKED && n != 1) || (recs[i].fate == CANCELLED && n != 0) ||
            (recs[i].fate == REFUSED && n != 0) || n > 1)
            fail_msg("seed %u: pod %s (fate %d) is stored %lld times", seed, recs[i].name,
                     (int)recs[i].fate, (long long)n);
        if (recs[i].fate == SENT || recs[i].fate == CANCEL_SENT)
            recs[i].fate = n ? ACKED : recs[i].fate == SENT ? REFUSED : CANCELLED;
    }
    sqlite3_finalize(q);
    static const char *const zero[] = {
        /* no card over a whole card */
        "SELECT count(*) FROM (SELECT node, gpu, sum(milli) AS s FROM assignments"
        " GROUP BY node, gpu HAVING s > 1000)",
        /* each running pod: exactly one open ledger row, on its node */
        "SELECT count(*) FROM pods p WHERE p.state = 1 AND (SELECT count(*) FROM ledger l"
        " WHERE l.pod_seq = p.seq AND l.end_us IS NULL AND l.node = p.node) != 1",
        /* no open ledger row without a running pod */
        "SELECT count(*) FROM ledger l WHERE l.end_us IS NULL AND NOT EXISTS (SELECT 1 FROM"
        " pods p WHERE p.seq = l.pod_seq AND p.state = 1)",
        /* a running pod holds num_gpu cards of its share on its node */
        "SELECT count(*) FROM pods p WHERE p.state = 1 AND (SELECT count(*) FROM assignments a"
        " WHERE a.pod_id = p.id AND a.node = p.node AND a.milli = p.gpu_milli) != p.num_gpu",
        /* a pending pod holds nothing */
        "SELECT count(*) FROM assignments a JOIN pods p ON p.id = a.pod_id WHERE p.state = 0",
        /* closed ledger rows end after they start */
        "SELECT count(*) FROM ledger WHERE end_us IS NOT NULL AND end_us < start_us",
    };
    for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++) {
        int64_t n = one_int(db, zero[i]);
        if (n != 0)
            fail_msg("seed %u: %lld rows break: %s", seed, (long long)n, zero[i]);
    }
    sqlite3_close(db);
}

/* The restarted daemon holds what the store holds. */
static void check_api(unsigned seed)
{
    sqlite3 *db = store_open(SQLITE_OPEN_READONLY);
    struct answer a;
    int64_t milli = one_int(db, "SELECT coalesce(sum(milli), 0) FROM assignments");
    int64_t pods = one_int(db, "SELECT count(*) FROM pods");
    sqlite3_close(db);
    assert_int_equal(h_call(&d, "GET", "/v1/status", TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    json_int_t got = json_integer_value(json_object_get(a.json, "gpu_milli_allocated"));
    json_int_t held = json_integer_value(json_object_get(a.json, "pods_running")) +
                      json_integer_value(json_object_get(a.json, "pods_pending"));
    h_answer_free(&a);
    if (got != milli || held != pods)
        fail_msg("seed %u: daemon holds %lld milli and %lld pods, the store %lld and %lld", seed,
                 (long long)got, (long long)held, (long long)milli, (long long)pods);
}

/* "1234us" as microseconds; -1 for NULL. */
static int64_t us_of(const json_t *v)
{
    const char *s = json_string_value(v);
    return s ? strtoll(s, NULL, 10) : -1;
}

/* A pod of the snapshot, its history as the restarted scheduler holds it, and the store's. */
struct seen {
    int64_t evictions, since_arrival, charged; /* first start - arrival; -1 never started */
};

static struct seen snapshot_history(const json_t *pod)
{
    const json_t *an = json_object_get(json_object_get(pod, "metadata"), "annotations");
    const char *ev = json_string_value(json_object_get(an, "sim.gpusched.io/evictions"));
    const char *ch = json_string_value(json_object_get(an, "sim.gpusched.io/charged"));
    int64_t first = us_of(json_object_get(an, "sim.gpusched.io/first-start"));
    return (struct seen){ev ? strtoll(ev, NULL, 10) : 0,
                         first < 0 ? -1
                                   : first - us_of(json_object_get(an, "sim.gpusched.io/arrival")),
                         !ch                       ? 0
                         : strcmp(ch, "dedicated") ? 2
                                                   : 1};
}

/*
 * The restarted daemon's scheduler holds each pod's history as the store kept it: evictions,
 * first start (relative to its arrival: the snapshot's times count from its own origin) and,
 * running, the part of the GPUQuota charged. Return: pods evicted before and started again.
 */
static size_t shared_seen; /* running pods charged to the shared GPUQuota, last check */

static size_t check_history(unsigned seed)
{
    struct answer a;
    assert_int_equal(h_call(&d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    sqlite3 *db = store_open(SQLITE_OPEN_READONLY);
    sqlite3_stmt *q = prepare(db, "SELECT evictions, first_start_us - submit_us, charged, state"
                                  " FROM pods WHERE namespace = 'team-a' AND name = ?1");
    size_t pods = 0, again = 0;
    shared_seen = 0;
    for (char *doc = strstr(a.body, "\n---\n"); doc; doc = strstr(doc + 1, "\n---\n")) {
        json_t *pod = doc[5] == '{' ? json_loads(doc + 5, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
        const char *kind = json_string_value(json_object_get(pod, "kind"));
        if (!kind || strcmp(kind, "Pod")) {
            json_decref(pod);
            continue;
        }
        const char *name =
            json_string_value(json_object_get(json_object_get(pod, "metadata"), "name"));
        struct seen got = snapshot_history(pod);
        sqlite3_bind_text(q, 1, name, -1, SQLITE_TRANSIENT);
        assert_int_equal(sqlite3_step(q), SQLITE_ROW);
        struct seen kept = {sqlite3_column_int64(q, 0),
                            sqlite3_column_type(q, 1) == SQLITE_NULL ? -1
                                                                     : sqlite3_column_int64(q, 1),
                            sqlite3_column_int64(q, 3) == 1 ? sqlite3_column_int64(q, 2) : 0};
        sqlite3_reset(q);
        if (got.evictions != kept.evictions || got.since_arrival != kept.since_arrival ||
            got.charged != kept.charged)
            fail_msg("seed %u: pod %s: the scheduler holds %lld evictions, first start %lld us "
                     "after arrival, charged %lld; the store %lld, %lld, %lld",
                     seed, name, (long long)got.evictions, (long long)got.since_arrival,
                     (long long)got.charged, (long long)kept.evictions,
                     (long long)kept.since_arrival, (long long)kept.charged);
        pods++;
        again += got.evictions > 0 && got.since_arrival >= 0;
        shared_seen += got.charged == 2;
        json_decref(pod);
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
    h_answer_free(&a);
    assert_true(pods > 0);
    return again;
}

static void test_kill_during_submissions(void **state)
{
    (void)state;
    const char *env_rounds = getenv("GS_CRASH_ROUNDS"), *env_seed = getenv("GS_CRASH_SEED");
    int rounds = env_rounds ? atoi(env_rounds) : 3;
    unsigned seed = env_seed ? (unsigned)strtoul(env_seed, NULL, 10) : (unsigned)time(NULL);
    if (rounds < 1 || rounds > ROUNDS_MAX)
        rounds = 3;
    fprintf(stderr, "crash test: %d rounds, GS_CRASH_SEED=%u\n", rounds, seed);
    recs = calloc(NAMES_MAX, sizeof(*recs));
    assert_non_null(recs);
    assert_int_equal(h_setup(&d, NULL), 0);
    assert_int_equal(h_policy(&d, classes), 0);
    /* 24 nodes of 8 cards: room for a few hundred pods, so cancels let pending ones in. */
    FILE *f = fopen(d.nodes, "w");
    fprintf(f, "sn,cpu_milli,memory_mib,gpu,model\n");
    for (int i = 0; i < 24; i++)
        fprintf(f, "n%02d,96000,786432,8,%s\n", i, i % 3 ? "A100-SXM4-80GB" : "V100M32");
    fclose(f);
    size_t acked_total = 0;
    for (int round = 0; round < rounds; round++) {
        assert_int_equal(h_start(&d), 0);
        if (round) {
            check_api(seed);
            check_history(seed);
        }
        for (int i = 0; !round && i < 24; i++) { /* every card taken: "high" pods preempt */
            char name[32], *body;
            struct answer a;
            snprintf(name, sizeof(name), "fill-%d", i);
            body = h_pod("team-a", name, 8, 0);
            size_t r = add_rec(name);
            assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_A, body, &a), 0);
            assert_int_equal(a.status, 201);
            set_fate(r, ACKED);
            h_answer_free(&a);
            free(body);
        }
        pthread_t t[THREADS];
        struct worker w[THREADS];
        killed = 0;
        for (int i = 0; i < THREADS; i++) {
            w[i] = (struct worker){seed * 7919u + (unsigned)(round * THREADS + i), round, i};
            pthread_create(&t[i], NULL, work, &w[i]);
        }
        unsigned r = seed + (unsigned)round;
        long ms = 30 + (long)(rand_r(&r) % 400);
        nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000}, NULL);
        killed = 1;
        h_kill(&d);
        for (int i = 0; i < THREADS; i++)
            pthread_join(t[i], NULL);
        check_store(seed);
    }
    for (size_t i = 0; i < nrecs; i++)
        acked_total += recs[i].fate == ACKED || recs[i].fate == CANCELLED;
    assert_int_equal(h_start(&d), 0);
    check_api(seed);
    size_t again = check_history(seed);
    assert_int_equal(h_stop(&d), 0);
    if (!h_log_has(&d, "\"pod preempted\""))
        fail_msg("seed %u: no pod was preempted: the kills came before any eviction", seed);
    if (!again || !shared_seen)
        fail_msg("seed %u: after the restarts, %zu pods evicted before and %zu running on the "
                 "shared GPUQuota: the history was not put to the test",
                 seed, again, shared_seen);
    fprintf(stderr,
            "crash test: %zu submissions, %zu acknowledged, all accounted for; %zu pods evicted "
            "before and %zu on the shared GPUQuota kept their history\n",
            nrecs, acked_total, again, shared_seen);
    h_cleanup(&d);
    free(recs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_kill_during_submissions)};
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
