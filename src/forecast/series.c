/* Hourly series as CSV: `time_s,series,milli[,model]` (gpusched/forecast.h). */
#include "forecast_impl.h"

#include "gpusched/diag.h"
#include "gpusched/grow.h"
#include "trace/csv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct reading {
    struct gs_series_set *set;
    struct fc_labels keys; /* "name\x1fmodel" -> series index + 1: rows find theirs in O(1) */
    int64_t *last;         /* per series: time of its last row */
    unsigned long *line;   /* per series: line of its last row */
    size_t *len, *cap;     /* per series: values read, room */
    struct gs_diag gap;    /* the first hours missing ("" none), told once the file is read */
    int order;             /* a row came out of order: that, not the gap it made, is the error */
};

static int find_or_add(struct reading *r, const char *name, const char *model, int64_t t,
                       struct csv *c, size_t *out, struct gs_diag *d)
{
    struct gs_series_set *set = r->set;
    char key[2 * GS_FC_NAME_MAX + 1]; /* a unit separator: names hold no control character */
    snprintf(key, sizeof(key), "%s\x1f%s", name, model);
    int32_t k = fc_intern(&r->keys, key);
    if (k < 0)
        return k;
    if ((size_t)k <= set->count) {
        *out = (size_t)k - 1;
        return 0;
    }
    if (set->count == GS_FC_SERIES_MAX)
        return gs_diag_error_code(d, -E2BIG, "%s:%lu:1: more than %d series", c->path, c->line,
                                  GS_FC_SERIES_MAX);
    if ((set->count & (set->count - 1)) == 0) { /* grow at powers of two */
        size_t cap = set->count ? set->count * 2 : 1;
        void *a = realloc(set->s, cap * sizeof(*set->s));
        if (a)
            set->s = a;
        void *b = realloc(r->last, cap * sizeof(*r->last));
        if (b)
            r->last = b;
        void *e = realloc(r->line, cap * sizeof(*r->line));
        if (e)
            r->line = e;
        void *f = realloc(r->len, cap * sizeof(*r->len));
        if (f)
            r->len = f;
        void *g = realloc(r->cap, cap * sizeof(*r->cap));
        if (g)
            r->cap = g;
        if (!a || !b || !e || !f || !g)
            return -ENOMEM;
    }
    size_t i = set->count++;
    memset(&set->s[i], 0, sizeof(set->s[i]));
    snprintf(set->s[i].name, sizeof(set->s[i].name), "%s", name);
    snprintf(set->s[i].model, sizeof(set->s[i].model), "%s", model);
    if (i == 0)
        set->start_s = t;
    else if (t != set->start_s)
        return gs_diag_error(d,
                             "%s:%lu:1: series \"%s\" starts at %lld s, \"%s\" at %lld s: every "
                             "series must cover the same hours",
                             c->path, c->line, name, (long long)t, set->s[0].name,
                             (long long)set->start_s);
    r->last[i] = t - GS_FC_STEP_S;
    r->line[i] = 0;
    r->len[i] = r->cap[i] = 0;
    *out = i;
    return 0;
}

static int series_row(struct reading *r, struct csv *c, const int *col, struct gs_diag *d)
{
    int64_t t, v;
    int rc = csv_uint(c, col[0], INT64_MAX / 4, &t, d);
    if (!rc)
        rc = csv_uint(c, col[2], (int64_t)FC_MILLI_MAX * 1000, &v, d);
    for (int k = 1; k < 4 && !rc; k += 2)
        if (col[k] >= 0 &&
            (strlen(c->field[col[k]]) >= GS_FC_NAME_MAX || !gs_text_plain(c->field[col[k]])))
            rc = csv_error(c, col[k], d, "a name must be %s, up to %d bytes", GS_TEXT_PLAIN_IS,
                           GS_FC_NAME_MAX - 1);
    size_t i = 0;
    if (!rc)
        rc = find_or_add(r, c->field[col[1]], col[3] >= 0 ? c->field[col[3]] : "", t, c, &i, d);
    if (rc)
        return rc;
    int64_t step = t - r->last[i];
    /* Hours missing are told once the file is read: a later row may show that this one only came
     * too early (hours 9, 11, 10), and that is what a person has to fix. */
    if (step > GS_FC_STEP_S && step % GS_FC_STEP_S == 0 && !r->gap.msg[0])
        csv_error(c, col[0], &r->gap,
                  "series \"%s\" jumps from %lld to %lld s: %lld %s missing (write %s, as 0 "
                  "when nothing was held)",
                  c->field[col[1]], (long long)r->last[i], (long long)t,
                  (long long)(step / GS_FC_STEP_S - 1), step == 2 * GS_FC_STEP_S ? "hour" : "hours",
                  step == 2 * GS_FC_STEP_S ? "it" : "them");
    r->order = step < 0;
    if (step < 0)
        return csv_error(c, col[0], d,
                         "out of order: %s of series \"%s\" comes after %lld on line %lu; rows "
                         "must be in time order, an hour apart",
                         c->field[col[0]], c->field[col[1]], (long long)r->last[i], r->line[i]);
    if (step % GS_FC_STEP_S != 0 || step == 0) /* "5, 3600" was "earlier than" 5 */
        return csv_error(c, col[0], d,
                         "%s of series \"%s\" %s line %lu: times must increase by "
                         "an hour (%d s)",
                         c->field[col[0]], c->field[col[1]],
                         step == 0 ? "repeats the time of" : "is not a whole number of hours after",
                         r->line[i], GS_FC_STEP_S);
    if (r->len[i] == GS_FC_HOURS_MAX)
        return csv_error(c, col[0], d, "more than %d hours", GS_FC_HOURS_MAX);
    int64_t *m = gs_grow(r->set->s[i].milli, &r->cap[i], r->len[i] + 1, sizeof(*m), 256);
    if (!m)
        return -ENOMEM;
    r->set->s[i].milli = m;
    r->set->s[i].milli[r->len[i]++] = v;
    r->set->s[i].volume += v;
    r->last[i] = t;
    r->line[i] = c->line;
    return 0;
}

int gs_series_read_csv(const char *path, struct gs_series_set *out, struct gs_diag *d)
{
    struct gs_series_set set = {0};
    struct reading r = {.set = &set};
    gs_diag_init(&r.gap);
    struct csv c;
    int col[4];
    int rc = csv_open(&c, path, d);
    if (rc)
        return rc;
    static const char *const names[] = {"time_s", "series", "milli"};
    static const char *const optional[] = {"model", NULL};
    /* gpusched forecast --format csv's own, beside its point forecast (milli) */
    static const char *const unread[] = {"method", "q025", "q100", "q500", "q900", "q975", NULL};
    rc = csv_columns(&c, names, 3, optional, unread, col, d);
    while (!rc && (rc = csv_next(&c, d)) == 1)
        rc = series_row(&r, &c, col, d);
    if (r.gap.msg[0] && rc != -ENOMEM && !r.order) /* the first error in the file */
        rc = gs_diag_error(d, "%s", r.gap.msg);
    if (!rc && set.count == 0)
        rc = gs_diag_error(d, "%s: no rows", path);
    for (size_t i = 1; !rc && i < set.count; i++)
        if (r.len[i] != r.len[0])
            rc = gs_diag_error(d,
                               "%s:%lu:1: series \"%s\" has %zu hours, \"%s\" %zu: every "
                               "series must cover the same hours",
                               path, r.line[i], set.s[i].name, r.len[i], set.s[0].name, r.len[0]);
    csv_close(&c);
    if (!rc) {
        set.n = r.len[0];
        snprintf(set.unit, sizeof(set.unit), "milli-GPU");
        *out = set;
    } else {
        gs_series_set_free(&set);
    }
    fc_labels_free(&r.keys);
    free(r.last);
    free(r.line);
    free(r.len);
    free(r.cap);
    return rc;
}

int gs_series_write_csv(FILE *f, const struct gs_series_set *set)
{
    fprintf(f, "time_s,series,model,milli\n");
    for (size_t i = 0; i < set->count; i++)
        for (size_t h = 0; h < set->n; h++)
            fprintf(f, "%lld,%s,%s,%lld\n", (long long)(set->start_s + (int64_t)h * GS_FC_STEP_S),
                    set->s[i].name, set->s[i].model, (long long)set->s[i].milli[h]);
    return ferror(f) ? -EIO : 0;
}
