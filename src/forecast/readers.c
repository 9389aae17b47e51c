/*
 * Readers of demand histories: the Alibaba DLRM services, the GenAI requests, the GPU-sharing
 * pod list (CSV, src/trace/csv.h) and gpuschedd's SQLite store. Formats and rules:
 * gpusched/forecast.h.
 */
#define _DEFAULT_SOURCE /* timegm() */
#include "forecast_impl.h"

#include "gpusched/cluster.h"
#include "gpusched/diag.h"
#include "gpusched/elastic.h"
#include "gpusched/names.h"
#include "gpusched/pod.h"
#include "trace/csv.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#define SECONDS_MAX 4000000000000LL /* about 127,000 years: any trace clock fits */

enum { K_SERVICE = 1u << GS_FC_SERVICE, K_TENANT = 1u << GS_FC_TENANT };
enum { K_QUEUE = 1u << GS_FC_QUEUE, K_MODEL = 1u << GS_FC_MODEL };

static int is_nan(const char *s)
{
    return *s == '\0' || strcasecmp(s, "nan") == 0;
}

/* A time or duration in seconds, decimals allowed, >= 0: rounded (@up: up) to whole seconds.
 * @empty: the value of an empty or "nan" field, or -1 when one is an error. */
static int csv_seconds(struct csv *c, int col, int64_t empty, int up, int64_t *out,
                       struct gs_diag *d)
{
    const char *s = c->field[col];
    if (is_nan(s) && empty < 0 && *s)
        return csv_error(c, col, d, "\"%s\" is not a number, expected seconds", s);
    if (is_nan(s) && empty < 0)
        return csv_error(c, col, d, "empty, expected seconds");
    if (is_nan(s)) {
        *out = empty;
        return 0;
    }
    double v;
    int rc = csv_real(c, col, "a number of seconds", &v, d);
    if (rc)
        return rc;
    if (v < 0)
        return csv_error(c, col, d, "\"%s\" is negative", s);
    if (v > (double)SECONDS_MAX)
        return csv_error(c, col, d, "%s exceeds %lld", s, SECONDS_MAX);
    *out = up ? (int64_t)ceil(v) : llround(v);
    return 0;
}

static int csv_label(struct csv *c, int col, struct gs_diag *d)
{
    const char *s = c->field[col];
    if (strlen(s) >= GS_FC_NAME_MAX)
        return csv_error(c, col, d, "longer than %d bytes", GS_FC_NAME_MAX - 1);
    if (!gs_text_plain(s))
        return csv_error(c, col, d, "must be %s", GS_TEXT_PLAIN_IS);
    return 0;
}

typedef int (*row_fn)(struct gs_demand *dm, struct csv *c, const int *col, void *st,
                      struct gs_diag *d);

/* Read every row of @path with @row (the columns @names; @unread, NULL-terminated, the format's
 * columns not read, any other refused); on an error, @dm is as it was. */
static int read_csv(struct gs_demand *dm, const char *path, const char *const *names, int ncols,
                    const char *const *unread, row_fn row, void *st, unsigned keys,
                    struct gs_diag *d)
{
    struct csv c;
    int col[CSV_COLS_MAX];
    size_t n0 = dm->n;
    int64_t end0 = dm->end_s;
    int rc = csv_open(&c, path, d);
    if (rc)
        return rc;
    rc = csv_columns(&c, names, ncols, NULL, unread, col, d);
    while (!rc && (rc = csv_next(&c, d)) == 1)
        rc = row(dm, &c, col, st, d);
    if (!rc && c.rows == 0)
        rc = gs_diag_error(d, "%s: no rows", path);
    csv_close(&c);
    if (rc)
        fc_demand_truncate(dm, n0, end0);
    else
        fc_demand_source(dm, path, keys);
    return rc;
}

/* Add a record read at the current row; a range error names the row. */
static int add_row(struct gs_demand *dm, struct csv *c, int64_t s, int64_t e, int64_t milli,
                   const char *svc, const char *ten, const char *q, const char *m,
                   struct gs_diag *d)
{
    struct gs_diag local;
    gs_diag_init(&local);
    int rc = gs_demand_add(dm, s, e, milli, svc, ten, q, m, &local);
    if (rc)
        gs_diag_error_code(d, rc, "%s:%lu:1: %s", c->path, c->line, local.msg);
    return rc;
}

/* DLRM: app_name, gpu_request, creation_time, deletion_time */
static int dlrm_row(struct gs_demand *dm, struct csv *c, const int *col, void *st,
                    struct gs_diag *d)
{
    int64_t gpus, s, e;
    int rc = csv_label(c, col[0], d);
    if (!rc)
        rc = csv_uint(c, col[1], 16000, &gpus, d);
    if (!rc)
        rc = csv_seconds(c, col[2], 0, 0, &s, d);
    if (!rc)
        rc = csv_seconds(c, col[3], INT64_MAX, 0, &e, d);
    if (rc || gpus == 0)
        return rc;
    if (e < s)
        return csv_error(c, col[3], d, "deleted (%s) before created (%s)", c->field[col[3]],
                         c->field[col[2]]);
    return add_row(dm, c, s, e, gpus * 1000, c->field[col[0]], NULL, NULL, NULL, d);
}

int gs_demand_read_dlrm(struct gs_demand *dm, const char *path, struct gs_diag *d)
{
    static const char *const names[] = {"app_name", "gpu_request", "creation_time",
                                        "deletion_time"};
    static const char *const unread[] = {"instance_sn",    "role",
                                         "cpu_request",    "cpu_limit",
                                         "gpu_limit",      "rdma_request",
                                         "rdma_limit",     "memory_request",
                                         "memory_limit",   "disk_request",
                                         "disk_limit",     "max_instance_per_node",
                                         "scheduled_time", NULL};
    return read_csv(dm, path, names, 4, unread, dlrm_row, NULL, K_SERVICE, d);
}

/* "YYYY-MM-DD HH:MM:SS" as UTC seconds: digits where the pattern has them, and a day the month
 * has (timegm() would take 2024-02-31 as March 2). */
static int parse_datetime(struct csv *c, int col, int64_t *out, struct gs_diag *d)
{
    static const char pat[] = "dddd-dd-dd dd:dd:dd";
    const char *s = c->field[col];
    int ok = strlen(s) == sizeof(pat) - 1;
    for (size_t i = 0; ok && i < sizeof(pat) - 1; i++)
        ok = pat[i] == 'd' ? s[i] >= '0' && s[i] <= '9' : s[i] == pat[i];
    struct tm tm = {0}, back;
    if (ok)
        ok = sscanf(s, "%4d-%2d-%2d %2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                    &tm.tm_min, &tm.tm_sec) == 6 &&
             tm.tm_year >= 1970;
    int mday = tm.tm_mday, mon = tm.tm_mon, hour = tm.tm_hour, min = tm.tm_min, sec = tm.tm_sec;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = ok ? timegm(&tm) : 0;
    if (!ok || !gmtime_r(&t, &back) || back.tm_mday != mday || back.tm_mon != mon - 1 ||
        back.tm_hour != hour || back.tm_min != min || back.tm_sec != sec)
        return csv_error(c, col, d, "\"%s\" is not a time YYYY-MM-DD HH:MM:SS", s);
    *out = (int64_t)t;
    return 0;
}

/* GenAI: gmt_create, exec_time_seconds, groupId, checkpoint_model_version_id, predict_type */
static int genai_row(struct gs_demand *dm, struct csv *c, const int *col, void *st,
                     struct gs_diag *d)
{
    int64_t *last = st, t = 0, x = 0;
    int rc = parse_datetime(c, col[0], &t, d);
    if (!rc)
        rc = csv_seconds(c, col[1], -1, 1, &x, d);
    for (int i = 2; i < 5 && !rc; i++)
        rc = csv_label(c, col[i], d);
    if (rc)
        return rc;
    if (t < *last)
        return csv_error(c, col[0], d,
                         "%s is earlier than the row before: rows must be in time "
                         "order",
                         c->field[col[0]]);
    *last = t;
    return add_row(dm, c, t, t + x, 1000, c->field[col[3]], c->field[col[2]], c->field[col[4]],
                   NULL, d);
}

int gs_demand_read_genai(struct gs_demand *dm, const char *path, struct gs_diag *d)
{
    static const char *const names[] = {"gmt_create", "exec_time_seconds", "groupId",
                                        "checkpoint_model_version_id", "predict_type"};
    static const char *const unread[] = {"predict_status",
                                         "prompt_length",
                                         "negative_prompt_length",
                                         "num_images_per_prompt",
                                         "num_inference_steps",
                                         "num_lora",
                                         NULL};
    int64_t last = INT64_MIN;
    return read_csv(dm, path, names, 5, unread, genai_row, &last,
                    K_SERVICE | K_TENANT | K_QUEUE | FC_SRC_UTC, d);
}

/* Pods: num_gpu, gpu_milli, gpu_spec, qos, creation_time, deletion_time, name; @st the names
 * seen (a pod listed twice would count twice: gpusched simulate refuses the same file) */
static int pod_row(struct gs_demand *dm, struct csv *c, const int *col, void *st, struct gs_diag *d)
{
    int64_t num, milli, s, e;
    struct gs_names *seen = st;
    size_t before = seen->n;
    int32_t id = gs_names_intern(seen, c->field[col[6]]);
    if (id < 0)
        return gs_diag_error_code(d, id, "out of memory for the pods' names");
    if (seen->n == before)
        return csv_error(c, col[6], d, "duplicate pod \"%s\"", c->field[col[6]]);
    int rc = csv_uint(c, col[0], 16, &num, d);
    if (!rc)
        rc = csv_uint(c, col[1], 1000, &milli, d);
    uint32_t models;
    if (!rc) /* the models as gpusched simulate reads the same column */
        rc = csv_gpu_spec(c, col[2], &models, d);
    if (!rc)
        rc = csv_label(c, col[2], d);
    if (!rc)
        rc = csv_label(c, col[3], d);
    if (!rc)
        rc = csv_uint(c, col[4], SECONDS_MAX, &s, d);
    if (!rc)
        rc = csv_uint(c, col[5], SECONDS_MAX, &e, d);
    if (rc)
        return rc;
    /* the scheduler's rule, as gpusched simulate reads the same file */
    struct gs_pod_req req = {.num_gpu = (uint32_t)num, .gpu_milli = (uint32_t)milli};
    struct gs_diag local;
    gs_diag_init(&local);
    if (gs_pod_req_check(&req, "pod", &local))
        return csv_error(c, col[1], d, "%s", local.msg);
    if (num == 0)
        return 0; /* a pod asking no GPU holds none */
    if (e < s)
        return csv_error(c, col[5], d, "deleted (%s) before created (%s)", c->field[col[5]],
                         c->field[col[4]]);
    const char *spec = is_nan(c->field[col[2]]) ? "any" : c->field[col[2]];
    return add_row(dm, c, s, e, num * milli, NULL, NULL, c->field[col[3]], spec, d);
}

int gs_demand_read_pods(struct gs_demand *dm, const char *path, struct gs_diag *d)
{
    static const char *const names[] = {"num_gpu",       "gpu_milli",     "gpu_spec", "qos",
                                        "creation_time", "deletion_time", "name"};
    static const char *const unread[] = {"cpu_milli", "memory_mib", "pod_phase", "scheduled_time",
                                         NULL};
    struct gs_names seen = {0};
    int rc = read_csv(dm, path, names, 7, unread, pod_row, &seen, K_QUEUE | K_MODEL, d);
    gs_names_free(&seen);
    return rc;
}

/* One ledger row of the store: id, tenant, gpus, gpu_milli, start_us, end_us, model. */
static int store_row(struct gs_demand *dm, const char *path, sqlite3_stmt *q, struct gs_diag *d)
{
    long long id = sqlite3_column_int64(q, 0);
    const char *tenant = (const char *)sqlite3_column_text(q, 1);
    const char *gpus = (const char *)sqlite3_column_text(q, 2);
    const char *model = (const char *)sqlite3_column_text(q, 6);
    int open = sqlite3_column_type(q, 5) == SQLITE_NULL;
    /* integers, as gpuschedd writes them: SQLite would read 1000.7 as 1000 and 'abc' as 0 */
    int ints = sqlite3_column_type(q, 3) == SQLITE_INTEGER &&
               sqlite3_column_type(q, 4) == SQLITE_INTEGER &&
               (open || sqlite3_column_type(q, 5) == SQLITE_INTEGER);
    uint32_t mask;
    int cards = gs_gpu_list_parse(gpus, &mask);
    if (cards < 0)
        return gs_diag_error(d,
                             "%s: ledger row id %lld: gpus \"%.64s\" is not a card list as "
                             "gpuschedd writes it (ascending indexes below %d: \"0,1,5\")",
                             path, id, gpus ? gpus : "", GS_GPUS_MAX);
    if (!tenant || !model || !ints)
        return gs_diag_error(d,
                             "%s: ledger row id %lld: gpu_milli, start_us and end_us (or NULL) "
                             "must be integers, tenant and model text",
                             path, id);
    /* as a CSV's labels: tables and CSV print them, where a comma or a quote splits a field */
    if (!gs_text_plain(tenant) || !gs_text_plain(model) || strpbrk(tenant, ",\"") ||
        strpbrk(model, ",\""))
        return gs_diag_error(d,
                             "%s: ledger row id %lld: tenant or model is not %s, without commas "
                             "and quotes",
                             path, id, GS_TEXT_PLAIN_IS);
    struct gs_diag local;
    gs_diag_init(&local);
    int rc = gs_demand_add_run(dm, tenant, model, cards, sqlite3_column_int64(q, 3),
                               sqlite3_column_int64(q, 4),
                               open ? INT64_MAX : sqlite3_column_int64(q, 5), &local);
    if (rc)
        gs_diag_error_code(d, rc, "%s: ledger row id %lld: %s", path, id, local.msg);
    return rc;
}

/* Runs still open have reached the time gpuschedd last wrote its probe (meta 'probe', the
 * scheduler's clock, every 2 s): the history goes on to it, not only to the last start or end
 * the ledger names (a store of long-running pods would otherwise end where the last began).
 * A store without the probe (no meta table, or never probed) ends at the ledger's last time.
 * Return: 0. */
static int store_now(struct gs_demand *dm, sqlite3 *db)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'probe'", -1, &q, NULL) ==
            SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) == SQLITE_INTEGER) {
        int64_t now_s = sqlite3_column_int64(q, 0) / 1000000;
        if (dm->n && now_s > dm->end_s)
            dm->end_s = now_s;
    }
    sqlite3_finalize(q);
    return 0;
}

int gs_demand_read_store(struct gs_demand *dm, const char *path, struct gs_diag *d)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return gs_diag_error_code(d, errno == ENOENT ? -ENOENT : -EIO, "%s: cannot open: %s", path,
                                  strerror(errno));
    if (!S_ISREG(sb.st_mode)) /* SQLite says "disk I/O error" of a folder, waits on a FIFO */
        return gs_diag_error(d, "%s: not a regular file; a gpuschedd store is DIR/gpusched.db",
                             path);
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    size_t n0 = dm->n;
    int64_t end0 = dm->end_s;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db,
                                "SELECT id, tenant, gpus, gpu_milli, start_us, end_us,"
                                " coalesce(model, '') FROM ledger ORDER BY id",
                                -1, &q, NULL);
    if (rc != SQLITE_OK) {
        rc = gs_diag_error(d, "%s: not a gpuschedd store of schema 3 or later: %s", path,
                           db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return rc;
    }
    sqlite3_busy_timeout(db, 5000);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        if ((rc = store_row(dm, path, q, d)) != 0)
            break;
    if (rc == SQLITE_DONE)
        rc = store_now(dm, db);
    else if (rc > 0)
        rc = gs_diag_error_code(d, -EIO, "%s: reading the ledger: %s", path, sqlite3_errmsg(db));
    sqlite3_finalize(q);
    sqlite3_close(db);
    if (rc)
        fc_demand_truncate(dm, n0, end0);
    else
        fc_demand_source(dm, path, K_TENANT | K_MODEL | FC_SRC_UTC | FC_SRC_LIVE);
    return rc;
}

struct sample {
    int64_t t;
    int32_t pod;
    int16_t v; /* per mille */
    uint32_t line;
};

struct duty {
    struct fc_labels pods;
    struct sample *row;
    size_t n, cap;
};

/* pod_gpu_duty_cycle_anon.csv: value (%), container_ip, timestamp_anon (seconds) */
static int duty_row(struct csv *c, const int *col, struct duty *u, struct gs_diag *d)
{
    double v;
    if (csv_real(c, col[0], "a utilisation 0..100 %", &v, d) || v < 0 || v > 100)
        return csv_error(c, col[0], d, "\"%s\" is not a utilisation 0..100 %%", c->field[col[0]]);
    int64_t t;
    int rc = csv_label(c, col[1], d);
    if (!rc)
        rc = csv_seconds(c, col[2], -1, 0, &t, d);
    int32_t i = rc ? rc : fc_intern(&u->pods, c->field[col[1]]);
    if (i < 0)
        return (int)i;
    if (u->n == u->cap) {
        size_t cap = u->cap ? u->cap * 2 : 1024;
        struct sample *r = cap <= SIZE_MAX / sizeof(*r) ? realloc(u->row, cap * sizeof(*r)) : NULL;
        if (!r)
            return -ENOMEM;
        u->row = r;
        u->cap = cap;
    }
    u->row[u->n++] = (struct sample){t, i, (int16_t)llround(v * 10.0), (uint32_t)c->line};
    return 0;
}

static int sample_less(const void *a, const void *b)
{
    const struct sample *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->pod != y->pod)
        return x->pod < y->pod ? -1 : 1;
    return x->line < y->line ? -1 : 1;
}

/* Each pod's mean, peak and series on the grid of the distinct sample times (@u sorted). */
static int duty_table(const char *path, struct duty *u, struct gs_duty *out, struct gs_diag *d)
{
    size_t np = u->pods.n ? u->pods.n : 1, slots = 0; /* label 0: a pod without a name */
    for (size_t i = 0; i < u->n; i++) {
        slots += i == 0 || u->row[i].t != u->row[i - 1].t;
        if (i > 0 && u->row[i].t == u->row[i - 1].t && u->row[i].pod == u->row[i - 1].pod)
            return gs_diag_error(d, "%s:%u: container_ip \"%s\" sampled twice at %lld s (line %u)",
                                 path, u->row[i].line,
                                 u->row[i].pod > 0 ? u->pods.name[u->row[i].pod] : "",
                                 (long long)u->row[i].t, u->row[i - 1].line);
    }
    if (slots && np > GS_DUTY_SAMPLES_MAX / slots)
        return gs_diag_error(d, "%s: %zu pods x %zu sample times: more than %d samples", path, np,
                             slots, GS_DUTY_SAMPLES_MAX);
    double *sum = calloc(np, sizeof(*sum));
    size_t *cnt = calloc(np, sizeof(*cnt));
    int32_t *peak = calloc(np, sizeof(*peak));
    int16_t *ser = calloc(np * slots + 1, sizeof(*ser));
    int rc = sum && cnt && peak && ser ? 0 : -ENOMEM;
    for (size_t i = 0, k = 0; !rc && i < u->n; i++) {
        const struct sample *r = &u->row[i];
        k += i > 0 && r->t != u->row[i - 1].t;
        sum[r->pod] += r->v;
        cnt[r->pod]++;
        peak[r->pod] = r->v > peak[r->pod] ? r->v : peak[r->pod];
        ser[(size_t)r->pod * slots + k] = r->v;
    }
    size_t k = 0; /* pods with samples, in the order they first appear */
    for (size_t i = 0; !rc && i < np; i++)
        if (cnt[i]) {
            peak[k] = peak[i];
            sum[k] = sum[i] / (double)cnt[i];
            memmove(ser + k * slots, ser + i * slots, slots * sizeof(*ser));
            k++;
        }
    int32_t *mean = rc || !k ? NULL : malloc(k * sizeof(*mean));
    if (!rc && k == 0)
        rc = gs_diag_error(d, "%s: no rows", path);
    else if (!rc && !mean)
        rc = -ENOMEM;
    for (size_t i = 0; !rc && i < k; i++)
        mean[i] = (int32_t)llround(sum[i]);
    free(sum);
    free(cnt);
    if (rc) {
        free(peak);
        free(ser);
        free(mean);
        return rc;
    }
    *out = (struct gs_duty){k, slots, mean, peak, ser};
    return 0;
}

int gs_util_read_duty(const char *path, struct gs_duty *out, struct gs_diag *d)
{
    struct csv c;
    struct duty u = {0};
    int col[3];
    int rc = csv_open(&c, path, d);
    if (rc)
        return rc;
    static const char *const names[] = {"value", "container_ip", "timestamp_anon"};
    rc = csv_columns(&c, names, 3, NULL, NULL, col, d);
    while (!rc && (rc = csv_next(&c, d)) == 1)
        rc = duty_row(&c, col, &u, d);
    csv_close(&c);
    if (!rc) {
        qsort(u.row, u.n, sizeof(*u.row), sample_less);
        rc = duty_table(path, &u, out, d);
    }
    fc_labels_free(&u.pods);
    free(u.row);
    return rc;
}

void gs_duty_free(struct gs_duty *u)
{
    free(u->mean);
    free(u->peak);
    free(u->series);
    memset(u, 0, sizeof(*u));
}
