/*
 * gpuschedd: the durable store, one SQLite file DIR/gpusched.db.
 *
 * WAL; the DaemonConfig's storeSync picks the synchronous setting. normal (the default,
 * synchronous=NORMAL): every commit is written to the WAL file before the daemon answers 2xx,
 * so an acknowledged pod survives the process dying at any moment (kill -9, an OOM kill, a
 * crash): the kernel holds the written pages. The WAL is fsync'd at each checkpoint only, so a
 * power cut or a kernel crash may lose the commits since the last one (SQLite: "WAL mode is
 * always consistent with synchronous=NORMAL, but WAL mode does lose durability"). full
 * (synchronous=FULL): the WAL is fsync'd at every commit, so an acknowledged pod survives a power
 * cut too; the cost is one fsync per batch of requests (milliseconds on a busy virtual disk), on
 * the scheduler thread, which every request of that batch and the next waits for.
 * Checkpoints (the WAL copied into the database, fsync'd in either setting) run on a thread of
 * their own with a second connection, PASSIVE, asked for each time commits have added CKPT_PAGES
 * pages to the WAL, so their fsyncs never hold up a commit. Not after every commit past that: a
 * thread asked again at once went on syncing the WAL and the database for the few pages each
 * commit added. The WAL starts over at the first commit after a checkpoint that copied all of
 * it; a steady stream of commits leaves it no such moment, so at CKPT_INLINE pages the writer
 * checkpoints itself (what the thread has not copied: about CKPT_PAGES pages at most), which
 * bounds the WAL.
 *
 * Tables: pods (one row per pod held, pending or running), assignments (one row per card a
 * running pod holds: node, GPU index, milli-GPU), ledger (one row per run of a pod: start and,
 * once it ends, end; rows are never deleted, they are the usage record), node_health (one row
 * per node watched by heartbeats: Ready or not, since when) and gpu_health (one row per card
 * reported unhealthy: the Xid, since when), podgroups (one row per PodGroup posted), node_creds
 * and node_regs (a node agent's token hash, and what it registered: the node's topology). The
 * health, podgroups and node tables came after schema 1 was first written; they are created when
 * missing, which an older gpuschedd would simply not read.
 *
 * Schema 2 adds MIG: pods.mig_profile (the profile asked, '' none) and assignments.mig_start
 * (the instance's first memory slice on that card; NULL for a whole or shared card). Schema 5
 * adds a pod's history, which the scheduler's churn guards and quotas read: pods.evictions
 * (times evicted), pods.first_start_us (when it first started; NULL not yet, or not known in a
 * store written before) and pods.charged (running: 1 on its tenant's dedicated GPUQuota, 2 on
 * its shared one, 0 neither or not known). Schema 6 adds podgroups.meta, a PodGroup's labels
 * and annotations (JSON text; '{}' in a store written before). Schema 7 adds a PodGroup's
 * spec.minResources: podgroups.min_gpu_milli, min_cpu_milli, min_memory_mib (0 when it names
 * none, as in a store written before). Schema 8 adds what a restart would lose of the scheduler's
 * own: pods.saved_us (what a pod's checkpoints saved of its walltime before its current run) and
 * podgroups.succeeded (its members that completed, which count towards minMember); 0 in a store
 * written before. Schema 9 adds podgroups.min_pods, the pod count of spec.minResources (0: none,
 * as in a store written before). Schema 10 adds a pod's last eviction: pods.last_eviction (what
 * it said, '' none) and pods.last_eviction_us (when, scheduler clock), and podgroups.seq, the
 * order they were made in (a list's continue token; numbered by creation in a store written
 * before). Schema 11 adds podgroups.min_task_member, a PodGroup's spec.minTaskMember as a JSON
 * object of task name: members ('{}' in a store written before, when none could be taken).
 * Schema 12 adds podgroups.kube, 1 for a PodGroup the API server holds (gsd_group.kube: one the
 * API server no longer lists once gpuschedd restarts is deleted; 0 in a store written before). A
 * store of an older schema is brought forward on open, one step per version, each in its own
 * transaction (migrate[]); a store of a newer schema is refused.
 */
#include "store.h"
#include "config.h"
#include "log.h"

#include "gpusched/cluster.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SCHEMA_VERSION 13

/* migrate[v - 1]: schema v to v + 1. */
static const char *const migrate[SCHEMA_VERSION - 1] = {
    "ALTER TABLE pods ADD COLUMN mig_profile TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE assignments ADD COLUMN mig_start INTEGER;",
    /* what a run used, as it was: the node's model may change, and a MIG run is priced as one */
    "ALTER TABLE ledger ADD COLUMN model TEXT;"
    "ALTER TABLE ledger ADD COLUMN mig_profile TEXT NOT NULL DEFAULT '';",
    /* the Pod as submitted: a restart reads it with the one Pod parser ('' before: made again
     * from the columns, state.c's legacy_body()) */
    "ALTER TABLE pods ADD COLUMN spec TEXT NOT NULL DEFAULT '';",
    /* a pod's history across a restart: the churn guards count evictions, the quotas keep
     * which part holds it (0 and NULL before: not known, the pod starts its history anew) */
    "ALTER TABLE pods ADD COLUMN evictions INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE pods ADD COLUMN first_start_us INTEGER;"
    "ALTER TABLE pods ADD COLUMN charged INTEGER NOT NULL DEFAULT 0;",
    /* a PodGroup's labels and annotations, shown as posted ('{}' before: none were kept) */
    "ALTER TABLE podgroups ADD COLUMN meta TEXT NOT NULL DEFAULT '{}';",
    /* a PodGroup's minResources, which its admission reads (0 before: none were taken) */
    "ALTER TABLE podgroups ADD COLUMN min_gpu_milli INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE podgroups ADD COLUMN min_cpu_milli INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE podgroups ADD COLUMN min_memory_mib INTEGER NOT NULL DEFAULT 0;",
    /* the scheduler's own that a restart would lose (0 before: nothing saved, none counted) */
    "ALTER TABLE pods ADD COLUMN saved_us INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE podgroups ADD COLUMN succeeded INTEGER NOT NULL DEFAULT 0;",
    /* minResources' pod count (0 before: none was taken) */
    "ALTER TABLE podgroups ADD COLUMN min_pods INTEGER NOT NULL DEFAULT 0;",
    /* 9 -> 10 */
    "ALTER TABLE pods ADD COLUMN last_eviction TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE pods ADD COLUMN last_eviction_us INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE podgroups ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;"
    "UPDATE podgroups SET seq = (SELECT count(*) FROM podgroups p"
    " WHERE (p.created_us, p.namespace, p.name)"
    " < (podgroups.created_us, podgroups.namespace, podgroups.name));",
    /* minTaskMember ('{}' before: a PodGroup with one was refused) */
    "ALTER TABLE podgroups ADD COLUMN min_task_member TEXT NOT NULL DEFAULT '{}';",
    /* the API server's (0 before: not known, kept until deleted here as one posted is) */
    "ALTER TABLE podgroups ADD COLUMN kube INTEGER NOT NULL DEFAULT 0;",
    /* a nominated pod's nodes, those kube-scheduler's filters passed (NULL before: any) */
    "ALTER TABLE pods ADD COLUMN nodes_ok TEXT;",
};

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS pods("
    " id INTEGER PRIMARY KEY, seq INTEGER NOT NULL UNIQUE,"
    " namespace TEXT NOT NULL, name TEXT NOT NULL, tenant TEXT NOT NULL, uid TEXT NOT NULL,"
    " meta TEXT NOT NULL, cpu_milli INTEGER NOT NULL, memory_mib INTEGER NOT NULL,"
    " num_gpu INTEGER NOT NULL, gpu_milli INTEGER NOT NULL, models TEXT NOT NULL,"
    " gpumem_mib INTEGER NOT NULL, gpucores INTEGER NOT NULL, priority INTEGER NOT NULL,"
    " source INTEGER NOT NULL, state INTEGER NOT NULL, node TEXT, reason TEXT NOT NULL,"
    " submit_us INTEGER NOT NULL, start_us INTEGER NOT NULL, UNIQUE(namespace, name));"
    "CREATE TABLE IF NOT EXISTS assignments("
    " pod_id INTEGER NOT NULL REFERENCES pods(id) ON DELETE CASCADE,"
    " node TEXT NOT NULL, gpu INTEGER NOT NULL, milli INTEGER NOT NULL,"
    " PRIMARY KEY(pod_id, gpu)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS ledger("
    " id INTEGER PRIMARY KEY, pod_seq INTEGER NOT NULL, namespace TEXT NOT NULL,"
    " name TEXT NOT NULL, tenant TEXT NOT NULL, uid TEXT NOT NULL, node TEXT NOT NULL,"
    " gpus TEXT NOT NULL, gpu_milli INTEGER NOT NULL, start_us INTEGER NOT NULL, end_us INTEGER);"
    "CREATE INDEX IF NOT EXISTS ledger_open ON ledger(pod_seq) WHERE end_us IS NULL;"
    "CREATE TABLE IF NOT EXISTS node_health("
    " node TEXT PRIMARY KEY, ready INTEGER NOT NULL, since_us INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS gpu_health("
    " node TEXT NOT NULL, gpu INTEGER NOT NULL, xid INTEGER NOT NULL, since_us INTEGER NOT NULL,"
    " PRIMARY KEY(node, gpu)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS podgroups("
    " namespace TEXT NOT NULL, name TEXT NOT NULL, tenant TEXT NOT NULL,"
    " min_member INTEGER NOT NULL, queue TEXT NOT NULL, priority_class TEXT NOT NULL,"
    " created_us INTEGER NOT NULL, PRIMARY KEY(namespace, name)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS node_creds("
    " node TEXT PRIMARY KEY, token_sha BLOB NOT NULL, since_us INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS node_regs("
    " node TEXT PRIMARY KEY, body TEXT NOT NULL, since_us INTEGER NOT NULL) WITHOUT ROWID;"
    "INSERT OR IGNORE INTO meta(key, value) VALUES('schema', 1);";

/* The source column of a pod of the extender that filter nominated and kube-scheduler has not
 * bound yet (gsd_pod.nominated); else the pod's source. */
#define STORED_NOMINATED 2

enum {
    Q_BEGIN,
    Q_COMMIT,
    Q_ROLLBACK,
    Q_POD_INSERT,
    Q_POD_START,
    Q_POD_UNSTART,
    Q_POD_SOURCE,
    Q_POD_EVICTING,
    Q_POD_DELETE,
    Q_ASSIGN,
    Q_UNASSIGN,
    Q_LEDGER_OPEN,
    Q_LEDGER_CLOSE,
    Q_NODE_PUT,
    Q_GPU_BAD,
    Q_GPU_OK,
    Q_GROUP_PUT,
    Q_GROUP_DELETE,
    Q_GROUP_SUCCEEDED,
    Q_PROBE,
    Q_CLOCK,
    Q_COUNT
};

static const char *const sql[Q_COUNT] = {
    [Q_BEGIN] = "BEGIN IMMEDIATE",
    [Q_COMMIT] = "COMMIT",
    [Q_ROLLBACK] = "ROLLBACK",
    [Q_POD_INSERT] = "INSERT INTO pods(seq, namespace, name, tenant, uid, meta, cpu_milli,"
                     " memory_mib, num_gpu, gpu_milli, models, gpumem_mib, gpucores, priority,"
                     " source, state, node, reason, submit_us, start_us, mig_profile, spec,"
                     " evictions, first_start_us, charged, saved_us, last_eviction,"
                     " last_eviction_us)"
                     " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,"
                     "?20,?21,?22,?23,?24,?25,?26,?27,?28)",
    [Q_POD_START] = "UPDATE pods SET state = 1, node = ?2, reason = '', start_us = ?3,"
                    " evictions = ?4, first_start_us = ?5, charged = ?6, saved_us = ?7,"
                    " last_eviction = ?8, last_eviction_us = ?9 WHERE id = ?1",
    [Q_POD_UNSTART] = "UPDATE pods SET state = 0, node = NULL, reason = ?2, start_us = 0,"
                      " evictions = ?3, first_start_us = ?4, charged = ?5, saved_us = ?6,"
                      " last_eviction = ?7, last_eviction_us = ?8 WHERE id = ?1",
    [Q_POD_SOURCE] = "UPDATE pods SET source = ?2, nodes_ok = ?3 WHERE id = ?1",
    [Q_POD_EVICTING] = "UPDATE pods SET state = 2, node = ?2, reason = ?3 WHERE id = ?1",
    [Q_POD_DELETE] = "DELETE FROM pods WHERE id = ?1",
    [Q_ASSIGN] = "INSERT INTO assignments(pod_id, node, gpu, milli, mig_start)"
                 " VALUES(?1, ?2, ?3, ?4, ?5)",
    [Q_UNASSIGN] = "DELETE FROM assignments WHERE pod_id = ?1",
    [Q_LEDGER_OPEN] = "INSERT INTO ledger(pod_seq, namespace, name, tenant, uid, node, gpus,"
                      " gpu_milli, start_us, model, mig_profile)"
                      " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
    [Q_LEDGER_CLOSE] = "UPDATE ledger SET end_us = ?2 WHERE pod_seq = ?1 AND end_us IS NULL",
    [Q_NODE_PUT] = "INSERT OR REPLACE INTO node_health(node, ready, since_us) VALUES(?1, ?2, ?3)",
    [Q_GPU_BAD] = "INSERT OR REPLACE INTO gpu_health(node, gpu, xid, since_us) VALUES(?1,?2,?3,?4)",
    [Q_GPU_OK] = "DELETE FROM gpu_health WHERE node = ?1 AND gpu = ?2",
    [Q_GROUP_PUT] = "INSERT OR REPLACE INTO podgroups(namespace, name, tenant, min_member, queue,"
                    " priority_class, created_us, meta, min_gpu_milli, min_cpu_milli,"
                    " min_memory_mib, succeeded, min_pods, seq, min_task_member, kube)"
                    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
                    " ?16)",
    [Q_GROUP_DELETE] = "DELETE FROM podgroups WHERE namespace = ?1 AND name = ?2",
    [Q_GROUP_SUCCEEDED] = "UPDATE podgroups SET succeeded = ?3 WHERE namespace = ?1 AND name = ?2",
    [Q_PROBE] = "INSERT OR REPLACE INTO meta(key, value) VALUES('probe', ?1)",
    [Q_CLOCK] = "INSERT OR REPLACE INTO meta(key, value) VALUES('clock', ?1)",
};

/* WAL pages added between checkpoints of the thread (SQLite's own auto-checkpoint default), and
 * WAL pages past which the writer checkpoints itself (about 40 MB of 4 KiB pages). */
#define CKPT_PAGES  1000
#define CKPT_INLINE 10000

struct gsd_store {
    sqlite3 *db;
    sqlite3_stmt *q[Q_COUNT];
    int in_txn;
    /* The checkpoint thread, on a connection of its own: a checkpoint's fsyncs keep the
     * scheduler thread, which commits, waiting otherwise. */
    sqlite3 *ckdb;
    pthread_t ck;
    pthread_mutex_t ck_mu;
    pthread_cond_t ck_cv;
    int ck_on, ck_want, ck_stop;
    int ck_asked; /* the writer's: WAL pages when it last asked for a checkpoint */
};

static int fail(struct gsd_store *s, const char *what)
{
    gsd_log("error", "store failed", "op", what, "error", sqlite3_errmsg(s->db), NULL);
    return -EIO;
}

/* Run prepared statement @i to completion and reset it. */
static int step(struct gsd_store *s, int i)
{
    int rc = sqlite3_step(s->q[i]);
    sqlite3_reset(s->q[i]);
    sqlite3_clear_bindings(s->q[i]);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : fail(s, sql[i]);
}

static int64_t schema_version(struct gsd_store *s)
{
    sqlite3_stmt *v;
    int64_t ver = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = 'schema'", -1, &v, NULL) ==
        SQLITE_OK) {
        if (sqlite3_step(v) == SQLITE_ROW)
            ver = sqlite3_column_int64(v, 0);
        sqlite3_finalize(v);
    }
    return ver;
}

static int open_db(struct gsd_store *s, const char *path, int sync_full, struct gs_diag *d)
{
    int fresh = access(path, F_OK) != 0; /* made now: its schema steps are no news */
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK)
        return gs_diag_error_code(d, -EIO, "%s: cannot open: %s", path,
                                  s->db ? sqlite3_errmsg(s->db) : "out of memory");
    sqlite3_busy_timeout(s->db, 5000);
    char *err = NULL;
    int rc = sqlite3_exec(s->db,
                          sync_full ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                                      " PRAGMA foreign_keys=ON;"
                                    : "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                                      " PRAGMA foreign_keys=ON;",
                          NULL, NULL, &err);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(s->db, schema, NULL, NULL, &err);
    if (rc != SQLITE_OK) {
        int code = sqlite3_errcode(s->db) & 0xff; /* primary code */
        gs_diag_error_code(d, -EIO, "%s: %s: %s", path,
                           code == SQLITE_READONLY || code == SQLITE_CANTOPEN ||
                                   code == SQLITE_PERM || code == SQLITE_IOERR ||
                                   code == SQLITE_FULL || code == SQLITE_BUSY
                               ? "cannot write the store"
                               : "not a gpusched store",
                           err ? err : "?");
        sqlite3_free(err);
        return -EIO;
    }
    int64_t ver = schema_version(s);
    if (ver < 1 || ver > SCHEMA_VERSION)
        return gs_diag_error_code(d, -EIO, "%s: store schema %lld, this gpuschedd reads 1..%d",
                                  path, (long long)ver, SCHEMA_VERSION);
    for (; ver < SCHEMA_VERSION; ver++) {
        char step[512];
        snprintf(step, sizeof(step),
                 "BEGIN IMMEDIATE; %s UPDATE meta SET value = %lld WHERE key = 'schema'; COMMIT;",
                 migrate[ver - 1], (long long)ver + 1);
        if (sqlite3_exec(s->db, step, NULL, NULL, &err) != SQLITE_OK) {
            gs_diag_error_code(d, -EIO, "%s: cannot bring schema %lld forward: %s", path,
                               (long long)ver, err ? err : "?");
            sqlite3_free(err);
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
            return -EIO;
        }
        snprintf(step, sizeof(step), "%lld", (long long)ver + 1);
        if (!fresh)
            gsd_log("info", "store schema brought forward", "path", path, "schema", step, NULL);
    }
    return 0;
}

/* After each commit (the writer's thread): ask for a checkpoint once the WAL has grown. */
static int wal_grown(void *arg, sqlite3 *db, const char *name, int pages)
{
    struct gsd_store *s = arg;
    if (pages < s->ck_asked) /* the WAL started over */
        s->ck_asked = 0;
    if (pages >= CKPT_INLINE || (!s->ck_on && pages >= CKPT_PAGES)) {
        sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    } else if (pages >= s->ck_asked + CKPT_PAGES) {
        s->ck_asked = pages;
        pthread_mutex_lock(&s->ck_mu);
        s->ck_want = 1;
        pthread_cond_signal(&s->ck_cv);
        pthread_mutex_unlock(&s->ck_mu);
    }
    return SQLITE_OK;
}

static void *checkpointer(void *arg)
{
    struct gsd_store *s = arg;
    pthread_mutex_lock(&s->ck_mu);
    while (!s->ck_stop) {
        if (!s->ck_want) {
            pthread_cond_wait(&s->ck_cv, &s->ck_mu);
            continue;
        }
        s->ck_want = 0;
        pthread_mutex_unlock(&s->ck_mu);
        /* PASSIVE: copies what no writer holds, never waits for one; the next ask goes on */
        sqlite3_wal_checkpoint_v2(s->ckdb, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        pthread_mutex_lock(&s->ck_mu);
    }
    pthread_mutex_unlock(&s->ck_mu);
    return NULL;
}

/* The checkpoint thread over @path; without it the writer checkpoints as SQLite would. */
static void checkpointer_start(struct gsd_store *s, const char *path, int sync_full)
{
    pthread_mutex_init(&s->ck_mu, NULL);
    pthread_cond_init(&s->ck_cv, NULL);
    sqlite3_wal_hook(s->db, wal_grown, s);
    if (sqlite3_open_v2(path, &s->ckdb, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
        sqlite3_exec(s->ckdb, sync_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
                     NULL, NULL, NULL) != SQLITE_OK ||
        pthread_create(&s->ck, NULL, checkpointer, s)) {
        gsd_log("warn", "no checkpoint thread: the scheduler thread checkpoints the store", NULL);
        sqlite3_close(s->ckdb);
        s->ckdb = NULL;
        return;
    }
    s->ck_on = 1;
}

int gsd_store_open(const char *dir, int sync_full, struct gsd_store **out, struct gs_diag *d)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof(path), "%s/gpusched.db", dir) >= sizeof(path))
        return gs_diag_error_code(d, -EIO, "%s: data directory path too long", dir);
    struct gsd_store *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    int rc = open_db(s, path, sync_full, d);
    for (int i = 0; !rc && i < Q_COUNT; i++)
        if (sqlite3_prepare_v3(s->db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->q[i], NULL) !=
            SQLITE_OK)
            rc = gs_diag_error_code(d, -EIO, "%s: %s", path, sqlite3_errmsg(s->db));
    if (rc) {
        gsd_store_close(s);
        return rc;
    }
    checkpointer_start(s, path, sync_full);
    *out = s;
    return 0;
}

void gsd_store_close(struct gsd_store *s)
{
    if (!s)
        return;
    if (s->ck_on) {
        pthread_mutex_lock(&s->ck_mu);
        s->ck_stop = 1;
        pthread_cond_signal(&s->ck_cv);
        pthread_mutex_unlock(&s->ck_mu);
        pthread_join(s->ck, NULL);
        sqlite3_close(s->ckdb);
        pthread_mutex_destroy(&s->ck_mu);
        pthread_cond_destroy(&s->ck_cv);
    }
    for (int i = 0; i < Q_COUNT; i++)
        sqlite3_finalize(s->q[i]);
    sqlite3_close(s->db);
    free(s);
}

int gsd_store_begin(struct gsd_store *s)
{
    int rc = step(s, Q_BEGIN);
    s->in_txn = !rc;
    return rc;
}

int gsd_store_commit(struct gsd_store *s)
{
    int rc = step(s, Q_COMMIT);
    if (rc && sqlite3_get_autocommit(s->db) == 0)
        step(s, Q_ROLLBACK);
    s->in_txn = 0;
    return rc;
}

int gsd_store_clock(struct gsd_store *s, int64_t now_us)
{
    sqlite3_bind_int64(s->q[Q_CLOCK], 1, now_us);
    return step(s, Q_CLOCK);
}

int gsd_store_probe(struct gsd_store *s, int64_t now_us)
{
    int rc = gsd_store_begin(s);
    if (!rc) {
        sqlite3_bind_int64(s->q[Q_PROBE], 1, now_us);
        rc = step(s, Q_PROBE);
    }
    if (!rc)
        return gsd_store_commit(s);
    gsd_store_rollback(s);
    return rc;
}

void gsd_store_rollback(struct gsd_store *s)
{
    if (s->in_txn)
        step(s, Q_ROLLBACK);
    s->in_txn = 0;
}

static void bind_text(sqlite3_stmt *q, int i, const char *v)
{
    sqlite3_bind_text(q, i, v, -1, SQLITE_STATIC);
}

/* Parameters 1..5 of the pod and ledger inserts: seq, namespace, name, tenant, uid. */
static void bind_identity(sqlite3_stmt *q, const struct gsd_pod *p)
{
    sqlite3_bind_int64(q, 1, p->seq);
    bind_text(q, 2, p->spec.ns);
    bind_text(q, 3, p->spec.name);
    bind_text(q, 4, p->tenant);
    bind_text(q, 5, p->uid);
}

/* Parameters @i..@i+5: the pod's history (evictions, first start or NULL, charged, saved, its
 * last eviction and when). */
static void bind_history(sqlite3_stmt *q, int i, const struct gsd_pod *p)
{
    bind_text(q, i + 4, p->last_eviction ? p->last_eviction : "");
    sqlite3_bind_int64(q, i + 5, p->last_eviction_us);
    sqlite3_bind_int64(q, i + 3, p->saved_us);
    sqlite3_bind_int(q, i, p->evictions);
    if (p->first_start_us >= 0)
        sqlite3_bind_int64(q, i + 1, p->first_start_us);
    else
        sqlite3_bind_null(q, i + 1);
    sqlite3_bind_int(q, i + 2, p->charged);
}

/* The cards of a running pod and its open ledger row (@model: its node's, "" unknown). */
static int record_run(struct gsd_store *s, const struct gsd_pod *p, const char *node,
                      const char *model)
{
    sqlite3_stmt *q = s->q[Q_ASSIGN];
    uint32_t cards = p->pl.gpu_mask;
    int milli = cards ? (int)p->pl.gpu_milli : 0;
    for (int g = 0; g < 32; g++) {
        if (!(cards & (1u << g)))
            continue;
        sqlite3_bind_int64(q, 1, p->id);
        bind_text(q, 2, node);
        sqlite3_bind_int(q, 3, g);
        sqlite3_bind_int(q, 4, milli);
        if (p->mig[0])
            sqlite3_bind_int(q, 5, p->mig_start);
        if (step(s, Q_ASSIGN))
            return -EIO;
    }
    char gpus[GS_GPU_LIST_MAX];
    gs_gpu_list_text(cards, gpus);
    q = s->q[Q_LEDGER_OPEN];
    bind_identity(q, p);
    bind_text(q, 6, node);
    bind_text(q, 7, gpus);
    sqlite3_bind_int(q, 8, milli);
    sqlite3_bind_int64(q, 9, p->start_us);
    bind_text(q, 10, model);
    bind_text(q, 11, p->mig);
    return step(s, Q_LEDGER_OPEN);
}

int gsd_store_pod_insert(struct gsd_store *s, struct gsd_pod *p, const char *node,
                         const char *model)
{
    sqlite3_stmt *q = s->q[Q_POD_INSERT];
    bind_identity(q, p);
    bind_text(q, 6, p->meta);
    sqlite3_bind_int64(q, 7, p->req.cpu_milli);
    sqlite3_bind_int64(q, 8, p->req.memory_mib);
    sqlite3_bind_int(q, 9, (int)p->req.num_gpu);
    sqlite3_bind_int(q, 10, (int)p->req.gpu_milli);
    bind_text(q, 11, p->models);
    sqlite3_bind_int(q, 12, p->gpumem_mib);
    sqlite3_bind_int(q, 13, p->gpucores);
    sqlite3_bind_int(q, 14, p->priority);
    sqlite3_bind_int(q, 15, p->nominated ? STORED_NOMINATED : p->source);
    sqlite3_bind_int(q, 16, p->state);
    if (p->state == GSD_RUNNING)
        bind_text(q, 17, node);
    else
        sqlite3_bind_null(q, 17);
    bind_text(q, 18, gsd_reason(p));
    sqlite3_bind_int64(q, 19, p->submit_us);
    sqlite3_bind_int64(q, 20, p->start_us);
    bind_text(q, 21, p->mig);
    bind_text(q, 22, p->body ? p->body : "");
    bind_history(q, 23, p);
    if (step(s, Q_POD_INSERT))
        return -EIO;
    p->id = sqlite3_last_insert_rowid(s->db);
    return p->state == GSD_RUNNING ? record_run(s, p, node, model) : 0;
}

int gsd_store_pod_start(struct gsd_store *s, const struct gsd_pod *p, const char *node,
                        const char *model)
{
    sqlite3_stmt *q = s->q[Q_POD_START];
    sqlite3_bind_int64(q, 1, p->id);
    bind_text(q, 2, node);
    sqlite3_bind_int64(q, 3, p->start_us);
    bind_history(q, 4, p);
    return step(s, Q_POD_START) ? -EIO : record_run(s, p, node, model);
}

static int ledger_close(struct gsd_store *s, const struct gsd_pod *p, int64_t end_us)
{
    sqlite3_stmt *q = s->q[Q_LEDGER_CLOSE];
    sqlite3_bind_int64(q, 1, p->seq);
    sqlite3_bind_int64(q, 2, end_us);
    return step(s, Q_LEDGER_CLOSE);
}

int gsd_store_pod_unstart(struct gsd_store *s, const struct gsd_pod *p, int64_t end_us)
{
    sqlite3_bind_int64(s->q[Q_UNASSIGN], 1, p->id);
    if (step(s, Q_UNASSIGN))
        return -EIO;
    sqlite3_stmt *q = s->q[Q_POD_UNSTART];
    sqlite3_bind_int64(q, 1, p->id);
    bind_text(q, 2, gsd_reason(p));
    bind_history(q, 3, p);
    return step(s, Q_POD_UNSTART) ? -EIO : ledger_close(s, p, end_us);
}

int gsd_store_pod_nominated(struct gsd_store *s, const struct gsd_pod *p, const char *nodes)
{
    sqlite3_stmt *q = s->q[Q_POD_SOURCE];
    sqlite3_bind_int64(q, 1, p->id);
    sqlite3_bind_int(q, 2, p->nominated ? STORED_NOMINATED : p->source);
    if (nodes)
        sqlite3_bind_text(q, 3, nodes, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(q, 3);
    return step(s, Q_POD_SOURCE) ? -EIO : 0;
}

int gsd_store_pod_evicting(struct gsd_store *s, const struct gsd_pod *p, const char *node,
                           int64_t end_us)
{
    sqlite3_bind_int64(s->q[Q_UNASSIGN], 1, p->id);
    if (step(s, Q_UNASSIGN))
        return -EIO;
    sqlite3_stmt *q = s->q[Q_POD_EVICTING];
    sqlite3_bind_int64(q, 1, p->id);
    bind_text(q, 2, node);
    bind_text(q, 3, gsd_reason(p));
    return step(s, Q_POD_EVICTING) ? -EIO : ledger_close(s, p, end_us);
}

int gsd_store_pod_delete(struct gsd_store *s, const struct gsd_pod *p, int64_t end_us)
{
    if (p->state == GSD_RUNNING && ledger_close(s, p, end_us))
        return -EIO;
    sqlite3_bind_int64(s->q[Q_POD_DELETE], 1, p->id); /* cards go by ON DELETE CASCADE */
    return step(s, Q_POD_DELETE);
}

int64_t gsd_store_next_seq(struct gsd_store *s)
{
    sqlite3_stmt *q;
    int64_t next = 1;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT max(coalesce((SELECT max(seq) FROM pods), 0),"
                           " coalesce((SELECT max(pod_seq) FROM ledger), 0))",
                           -1, &q, NULL) != SQLITE_OK)
        return next;
    if (sqlite3_step(q) == SQLITE_ROW)
        next = sqlite3_column_int64(q, 0) + 1;
    sqlite3_finalize(q);
    return next;
}

int64_t gsd_store_last_us(struct gsd_store *s)
{
    sqlite3_stmt *q;
    int64_t last = 0;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT max(coalesce((SELECT max(value) FROM meta"
                           " WHERE key IN ('probe', 'clock')), 0),"
                           " coalesce((SELECT max(max(submit_us, start_us, last_eviction_us))"
                           " FROM pods), 0),"
                           " coalesce((SELECT max(max(start_us, coalesce(end_us, 0))) FROM ledger),"
                           " 0))",
                           -1, &q, NULL) != SQLITE_OK)
        return last;
    if (sqlite3_step(q) == SQLITE_ROW)
        last = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return last;
}

int gsd_store_node_put(struct gsd_store *s, const char *node, int ready, int64_t since_us)
{
    sqlite3_stmt *q = s->q[Q_NODE_PUT];
    bind_text(q, 1, node);
    sqlite3_bind_int(q, 2, ready);
    sqlite3_bind_int64(q, 3, since_us);
    return step(s, Q_NODE_PUT);
}

int gsd_store_gpu_put(struct gsd_store *s, const char *node, int gpu, int healthy, int xid,
                      int64_t since_us)
{
    int i = healthy ? Q_GPU_OK : Q_GPU_BAD;
    bind_text(s->q[i], 1, node);
    sqlite3_bind_int(s->q[i], 2, gpu);
    if (!healthy) {
        sqlite3_bind_int(s->q[i], 3, xid);
        sqlite3_bind_int64(s->q[i], 4, since_us);
    }
    return step(s, i);
}

int gsd_store_health_load(
    struct gsd_store *s, int (*node_fn)(void *ud, const char *node, int ready, int64_t since_us),
    int (*gpu_fn)(void *ud, const char *node, int gpu, int xid, int64_t since_us), void *ud)
{
    static const char *const q_text[2] = {
        "SELECT node, ready, since_us FROM node_health ORDER BY node",
        "SELECT node, gpu, xid, since_us FROM gpu_health ORDER BY node, gpu"};
    int rc = 0;
    for (int t = 0; t < 2 && !rc; t++) {
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(s->db, q_text[t], -1, &q, NULL) != SQLITE_OK)
            return fail(s, q_text[t]);
        int r = SQLITE_DONE;
        while (!rc && (r = sqlite3_step(q)) == SQLITE_ROW) {
            const char *node = (const char *)sqlite3_column_text(q, 0);
            rc = t == 0 ? node_fn(ud, node ? node : "", sqlite3_column_int(q, 1),
                                  sqlite3_column_int64(q, 2))
                        : gpu_fn(ud, node ? node : "", sqlite3_column_int(q, 1),
                                 sqlite3_column_int(q, 2), sqlite3_column_int64(q, 3));
        }
        if (!rc && r != SQLITE_DONE)
            rc = fail(s, q_text[t]);
        sqlite3_finalize(q);
    }
    return rc;
}

static void col_text(sqlite3_stmt *q, int i, char *dst, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(q, i);
    snprintf(dst, cap, "%s", t ? (const char *)t : "");
}

/* Run query @text, with @arg bound to ?1 (NULL binds NULL), and hand each row to @row while it
 * returns 0. Return: 0; @row's negative return; -EIO. */
static int each_row(struct gsd_store *s, const char *text, const char *arg,
                    int (*row)(sqlite3_stmt *q, void *ud), void *ud)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db, text, -1, &q, NULL) != SQLITE_OK)
        return fail(s, text);
    if (arg)
        bind_text(q, 1, arg);
    int r = SQLITE_DONE, rc = 0;
    while (!rc && (r = sqlite3_step(q)) == SQLITE_ROW)
        rc = row(q, ud);
    if (!rc && r != SQLITE_DONE)
        rc = fail(s, text);
    sqlite3_finalize(q);
    return rc;
}

struct ledger_read {
    int (*fn)(void *ud, const struct gsd_run *run);
    void *ud;
};

static int ledger_row(sqlite3_stmt *q, void *ud)
{
    const struct ledger_read *lr = ud;
    struct gsd_run run;
    col_text(q, 0, run.tenant, sizeof(run.tenant));
    col_text(q, 1, run.ns, sizeof(run.ns));
    col_text(q, 2, run.name, sizeof(run.name));
    col_text(q, 3, run.node, sizeof(run.node));
    col_text(q, 8, run.model, sizeof(run.model));
    col_text(q, 9, run.mig, sizeof(run.mig));
    uint32_t mask;
    const char *gpus = (const char *)sqlite3_column_text(q, 4);
    run.cards = gs_gpu_list_parse(gpus, &mask);
    if (run.cards < 0) { /* not as record_run() writes it: the store was changed by hand */
        char key[sizeof(run.ns) + sizeof(run.name)];
        snprintf(key, sizeof(key), "%s/%s", run.ns, run.name);
        gsd_log("error", "store: a ledger row's gpus is not a card list", "pod", key, "gpus",
                gpus ? gpus : "(null)", NULL);
        return -EIO;
    }
    run.gpu_milli = sqlite3_column_int(q, 5);
    run.start_us = sqlite3_column_int64(q, 6);
    run.end_us = sqlite3_column_int64(q, 7);
    return lr->fn(lr->ud, &run);
}

int gsd_store_ledger(struct gsd_store *s, const char *tenant,
                     int (*fn)(void *ud, const struct gsd_run *run), void *ud)
{
    struct ledger_read lr = {fn, ud};
    return each_row(
        s,
        "SELECT tenant, namespace, name, node, gpus, gpu_milli, start_us, coalesce(end_us, -1),"
        " coalesce(model, ''), mig_profile FROM ledger WHERE ?1 IS NULL OR tenant = ?1 ORDER BY id",
        tenant, ledger_row, &lr);
}

struct card {
    int64_t pod_id;
    int gpu, milli, mig_start; /* mig_start -1: a whole or shared card */
};

/* Every card row, sorted by pod id (the query's order), into one array. */
static int load_cards(struct gsd_store *s, struct card **out, size_t *n)
{
    sqlite3_stmt *q;
    size_t cap = 1024;
    *n = 0;
    *out = malloc(cap * sizeof(**out));
    if (!*out)
        return -ENOMEM;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT pod_id, gpu, milli, coalesce(mig_start, -1) FROM assignments"
                           " ORDER BY pod_id",
                           -1, &q, NULL) != SQLITE_OK)
        return fail(s, "load assignments");
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (*n == cap) {
            struct card *m = realloc(*out, 2 * cap * sizeof(**out));
            if (!m) {
                sqlite3_finalize(q);
                return -ENOMEM;
            }
            *out = m;
            cap *= 2;
        }
        (*out)[(*n)++] = (struct card){sqlite3_column_int64(q, 0), sqlite3_column_int(q, 1),
                                       sqlite3_column_int(q, 2), sqlite3_column_int(q, 3)};
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? 0 : fail(s, "load assignments");
}

static int row_to_pod(sqlite3_stmt *q, struct gsd_stored *sp)
{
    struct gsd_pod *p = &sp->pod;
    memset(sp, 0, sizeof(*sp));
    p->id = sqlite3_column_int64(q, 0);
    p->seq = sqlite3_column_int64(q, 1);
    col_text(q, 2, p->spec.ns, sizeof(p->spec.ns));
    col_text(q, 3, p->spec.name, sizeof(p->spec.name));
    col_text(q, 4, p->tenant, sizeof(p->tenant));
    col_text(q, 5, p->uid, sizeof(p->uid));
    const unsigned char *meta = sqlite3_column_text(q, 6);
    p->meta = strdup(meta ? (const char *)meta : "{}");
    p->req.cpu_milli = sqlite3_column_int64(q, 7);
    p->req.memory_mib = sqlite3_column_int64(q, 8);
    p->req.num_gpu = (uint32_t)sqlite3_column_int(q, 9);
    p->req.gpu_milli = (uint32_t)sqlite3_column_int(q, 10);
    col_text(q, 11, p->models, sizeof(p->models));
    p->gpumem_mib = sqlite3_column_int(q, 12);
    p->gpucores = sqlite3_column_int(q, 13);
    p->priority = sqlite3_column_int(q, 14);
    int source = sqlite3_column_int(q, 15);
    p->nominated = source == STORED_NOMINATED;
    p->source = (uint8_t)(p->nominated ? GSD_SRC_EXTENDER : source);
    p->state = (uint8_t)sqlite3_column_int(q, 16);
    col_text(q, 17, sp->node, sizeof(sp->node));
    const unsigned char *reason = sqlite3_column_text(q, 18);
    p->reason = reason && reason[0] ? strdup((const char *)reason) : NULL;
    p->submit_us = sqlite3_column_int64(q, 19);
    p->start_us = sqlite3_column_int64(q, 20);
    col_text(q, 21, p->mig, sizeof(p->mig));
    const unsigned char *body = sqlite3_column_text(q, 22);
    p->body = body && body[0] ? strdup((const char *)body) : NULL;
    p->evictions = sqlite3_column_int(q, 23);
    p->first_start_us =
        sqlite3_column_type(q, 24) == SQLITE_NULL ? -1 : sqlite3_column_int64(q, 24);
    p->charged = (int8_t)sqlite3_column_int(q, 25);
    p->saved_us = sqlite3_column_int64(q, 26);
    const unsigned char *last = sqlite3_column_text(q, 27);
    p->last_eviction = last && last[0] ? strdup((const char *)last) : NULL;
    p->last_eviction_us = sqlite3_column_int64(q, 28);
    const unsigned char *ok = sqlite3_column_text(q, 29);
    sp->nodes_ok = ok && p->nominated ? strdup((const char *)ok) : NULL;
    p->pl.node = -1;
    p->mig_start = -1;
    return p->meta && (p->body || !body || !body[0]) && (p->last_eviction || !last || !last[0]) &&
                   (p->reason || !reason || !reason[0]) && (sp->nodes_ok || !ok || !p->nominated)
               ? 0
               : -ENOMEM;
}

/* Cards of pod @id from the sorted array: binary search, then the run of equal ids. */
static void cards_of(const struct card *c, size_t n, struct gsd_pod *p)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid].pod_id < p->id)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n && c[lo].pod_id == p->id; lo++)
        if (c[lo].gpu >= 0 && c[lo].gpu < GS_GPUS_MAX) {
            p->pl.gpu_mask |= 1u << c[lo].gpu;
            p->pl.gpu_milli = (uint32_t)c[lo].milli;
            if (c[lo].mig_start >= 0)
                p->mig_start = (int8_t)c[lo].mig_start;
        }
}

int gsd_store_load(struct gsd_store *s, int (*fn)(void *ud, struct gsd_stored *sp), void *ud)
{
    struct card *cards;
    size_t ncards;
    int rc = load_cards(s, &cards, &ncards);
    sqlite3_stmt *q = NULL;
    if (!rc && sqlite3_prepare_v2(s->db,
                                  "SELECT id, seq, namespace, name, tenant, uid, meta, cpu_milli,"
                                  " memory_mib, num_gpu, gpu_milli, models, gpumem_mib, gpucores,"
                                  " priority, source, state, node, reason, submit_us, start_us,"
                                  " mig_profile, spec, evictions, first_start_us, charged,"
                                  " saved_us, last_eviction, last_eviction_us, nodes_ok"
                                  " FROM pods"
                                  " ORDER BY seq",
                                  -1, &q, NULL) != SQLITE_OK)
        rc = fail(s, "load pods");
    struct gsd_stored sp;
    while (!rc) {
        int st = sqlite3_step(q);
        if (st == SQLITE_DONE)
            break;
        if (st != SQLITE_ROW) {
            rc = fail(s, "load pods");
            break;
        }
        rc = row_to_pod(q, &sp);
        if (!rc) {
            cards_of(cards, ncards, &sp.pod);
            rc = fn(ud, &sp);
        } else {
            gsd_pod_strings_free(&sp.pod);
        }
        free(sp.nodes_ok);
    }
    sqlite3_finalize(q);
    free(cards);
    return rc;
}

int gsd_store_group_put(struct gsd_store *s, const struct gsd_group *g)
{
    sqlite3_stmt *q = s->q[Q_GROUP_PUT];
    bind_text(q, 1, g->spec.ns);
    bind_text(q, 2, g->spec.name);
    bind_text(q, 3, g->tenant);
    sqlite3_bind_int(q, 4, g->spec.min_member);
    bind_text(q, 5, g->spec.queue);
    bind_text(q, 6, g->spec.priority_class);
    sqlite3_bind_int64(q, 7, g->created_us);
    bind_text(q, 8, g->meta ? g->meta : "{}");
    sqlite3_bind_int64(q, 9, g->spec.min_gpu_milli);
    sqlite3_bind_int64(q, 10, g->spec.min_cpu_milli);
    sqlite3_bind_int64(q, 11, g->spec.min_memory_mib);
    sqlite3_bind_int(q, 12, g->succeeded);
    sqlite3_bind_int64(q, 13, g->spec.min_pods);
    sqlite3_bind_int64(q, 14, g->seq);
    json_t *tasks = gsd_group_tasks_json(&g->spec);
    char *text = tasks ? json_dumps(tasks, JSON_COMPACT) : NULL;
    json_decref(tasks);
    if (!text) {
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);
        return -ENOMEM;
    }
    bind_text(q, 15, text);
    sqlite3_bind_int(q, 16, g->kube);
    int rc = step(s, Q_GROUP_PUT);
    free(text);
    return rc;
}

int gsd_store_group_succeeded(struct gsd_store *s, const struct gsd_group *g)
{
    sqlite3_stmt *q = s->q[Q_GROUP_SUCCEEDED];
    bind_text(q, 1, g->spec.ns);
    bind_text(q, 2, g->spec.name);
    sqlite3_bind_int(q, 3, g->succeeded);
    return step(s, Q_GROUP_SUCCEEDED);
}

int gsd_store_group_delete(struct gsd_store *s, const struct gsd_group *g)
{
    bind_text(s->q[Q_GROUP_DELETE], 1, g->spec.ns);
    bind_text(s->q[Q_GROUP_DELETE], 2, g->spec.name);
    return step(s, Q_GROUP_DELETE);
}

struct group_read {
    int (*fn)(void *ud, const struct gsd_group *g);
    void *ud;
};

static int group_row(sqlite3_stmt *q, void *ud)
{
    const struct group_read *gr = ud;
    struct gsd_group g = {0};
    col_text(q, 0, g.spec.ns, sizeof(g.spec.ns));
    col_text(q, 1, g.spec.name, sizeof(g.spec.name));
    col_text(q, 2, g.tenant, sizeof(g.tenant));
    g.spec.min_member = sqlite3_column_int(q, 3);
    col_text(q, 4, g.spec.queue, sizeof(g.spec.queue));
    col_text(q, 5, g.spec.priority_class, sizeof(g.spec.priority_class));
    g.created_us = sqlite3_column_int64(q, 6);
    g.meta = (char *)sqlite3_column_text(q, 7); /* the row's, copied by @fn if kept */
    g.spec.min_gpu_milli = sqlite3_column_int64(q, 8);
    g.spec.min_cpu_milli = sqlite3_column_int64(q, 9);
    g.spec.min_memory_mib = sqlite3_column_int64(q, 10);
    sqlite3_int64 done = sqlite3_column_int64(q, 11);
    /* -1 (refused by the caller's check) unless a count in range: not cut to 32 bits */
    g.succeeded =
        sqlite3_column_type(q, 11) == SQLITE_INTEGER && done >= 0 && done <= GSD_SUCCEEDED_MAX
            ? (int32_t)done
            : -1;
    g.spec.min_pods = sqlite3_column_int64(q, 12);
    g.seq = sqlite3_column_int64(q, 13);
    sqlite3_int64 kube = sqlite3_column_int64(q, 15);
    /* 2 (refused by the caller's check) unless 0 or 1 */
    g.kube = sqlite3_column_type(q, 15) == SQLITE_INTEGER && (kube == 0 || kube == 1)
                 ? (uint8_t)kube
                 : 2;
    json_t *tasks = json_loads((const char *)sqlite3_column_text(q, 14), 0, NULL);
    struct gsd_ferr e = {.stored = 1};
    if (!tasks || gsd_group_tasks_read(tasks, &g.spec, &e))
        g.spec.ntasks = -1; /* refused by the caller's check, naming the field */
    json_decref(tasks);
    return gr->fn(gr->ud, &g);
}

int gsd_store_group_load(struct gsd_store *s, int (*fn)(void *ud, const struct gsd_group *g),
                         void *ud)
{
    struct group_read gr = {fn, ud};
    return each_row(s,
                    "SELECT namespace, name, tenant, min_member, queue, priority_class,"
                    " created_us, meta, min_gpu_milli, min_cpu_milli, min_memory_mib,"
                    " succeeded, min_pods, seq, min_task_member, kube FROM podgroups"
                    " ORDER BY seq, created_us, namespace, name",
                    NULL, group_row, &gr);
}

int gsd_store_cred_put(struct gsd_store *s, const char *node, const uint8_t *sha, int64_t since_us)
{
    sqlite3_stmt *q;
    const char *text =
        "INSERT OR REPLACE INTO node_creds(node, token_sha, since_us) VALUES(?1,?2,?3)";
    if (sqlite3_prepare_v2(s->db, text, -1, &q, NULL) != SQLITE_OK)
        return fail(s, text);
    bind_text(q, 1, node);
    sqlite3_bind_blob(q, 2, sha, GSD_SHA256_LEN, SQLITE_TRANSIENT);
    sqlite3_bind_int64(q, 3, since_us);
    int r = sqlite3_step(q);
    sqlite3_finalize(q);
    return r == SQLITE_DONE ? 0 : fail(s, text);
}

int gsd_store_cred_load(struct gsd_store *s,
                        int (*fn)(void *ud, const char *node, const uint8_t *sha), void *ud)
{
    sqlite3_stmt *q;
    const char *text = "SELECT node, token_sha FROM node_creds ORDER BY node";
    if (sqlite3_prepare_v2(s->db, text, -1, &q, NULL) != SQLITE_OK)
        return fail(s, text);
    int rc = 0, r;
    while (!rc && (r = sqlite3_step(q)) == SQLITE_ROW) {
        const char *node = (const char *)sqlite3_column_text(q, 0);
        if (sqlite3_column_bytes(q, 1) == GSD_SHA256_LEN)
            rc = fn(ud, node ? node : "", sqlite3_column_blob(q, 1));
    }
    if (!rc && r != SQLITE_DONE)
        rc = fail(s, text);
    sqlite3_finalize(q);
    return rc;
}

int gsd_store_reg_put(struct gsd_store *s, const char *node, const char *body, int64_t since_us)
{
    sqlite3_stmt *q;
    const char *text = "INSERT OR REPLACE INTO node_regs(node, body, since_us) VALUES(?1,?2,?3)";
    if (sqlite3_prepare_v2(s->db, text, -1, &q, NULL) != SQLITE_OK)
        return fail(s, text);
    bind_text(q, 1, node);
    bind_text(q, 2, body);
    sqlite3_bind_int64(q, 3, since_us);
    int r = sqlite3_step(q);
    sqlite3_finalize(q);
    return r == SQLITE_DONE ? 0 : fail(s, text);
}

int gsd_store_reg_load(struct gsd_store *s, int (*fn)(void *ud, const char *node, const char *body),
                       void *ud)
{
    sqlite3_stmt *q;
    const char *text = "SELECT node, body FROM node_regs ORDER BY node";
    if (sqlite3_prepare_v2(s->db, text, -1, &q, NULL) != SQLITE_OK)
        return fail(s, text);
    int rc = 0, r;
    while (!rc && (r = sqlite3_step(q)) == SQLITE_ROW) {
        const char *node = (const char *)sqlite3_column_text(q, 0);
        const char *body = (const char *)sqlite3_column_text(q, 1);
        rc = fn(ud, node ? node : "", body ? body : "");
    }
    if (!rc && r != SQLITE_DONE)
        rc = fail(s, text);
    sqlite3_finalize(q);
    return rc;
}
