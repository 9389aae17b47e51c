/*
 * Demand records and the hourly series built from them (gpusched/forecast.h).
 *
 * Labels are interned per key, so a record is four small indexes; index 0 of every key is "".
 * Series are built with a difference array per group: a record adds its partial first and last
 * hours directly and its whole hours as one step up and one step down, so building costs
 * O(records + groups x hours) however long the records are.
 */
#include "forecast_impl.h"

#include "gpusched/diag.h"
#include "gpusched/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Groups x hours a build may hold, refused past: three int64 a cell while it builds (partial
 * hours, steps, values), 1.2 GB. At 200,000,000 a 78 KB pod list (2,000 queues over 11 years)
 * took 4.7 GB. */
#define CELLS_MAX 50000000

static const char *const key_names[GS_FC_KEYS] = {"total", "service", "tenant", "queue", "model"};

const char *gs_fc_key_name(enum gs_fc_key k)
{
    return (unsigned)k < GS_FC_KEYS ? key_names[k] : "?";
}

int gs_fc_key_find(const char *name)
{
    for (int k = 0; k < GS_FC_KEYS; k++)
        if (strcmp(name, key_names[k]) == 0)
            return k;
    return -ENOENT;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Index of @s in @t, added when absent. Return: >= 0; -ENOMEM. */
int32_t fc_intern(struct fc_labels *t, const char *s)
{
    if (!s || !*s)
        return 0;
    if (t->n * 2 + 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        int32_t *slot = malloc(cap * sizeof(*slot));
        char **name = realloc(t->name, cap / 2 * sizeof(*name));
        if (!slot || !name) {
            free(slot);
            if (name)
                t->name = name;
            return -ENOMEM;
        }
        t->name = name;
        memset(slot, 0xff, cap * sizeof(*slot));
        for (size_t i = 1; i < t->n; i++) {
            size_t h = hash_str(t->name[i]) & (cap - 1);
            while (slot[h] >= 0)
                h = (h + 1) & (cap - 1);
            slot[h] = (int32_t)i;
        }
        free(t->slot);
        t->slot = slot;
        t->cap = cap;
        if (t->n == 0) {
            t->name[0] = NULL; /* index 0 is "" */
            t->n = 1;
        }
    }
    size_t h = hash_str(s) & (t->cap - 1);
    while (t->slot[h] >= 0) {
        if (strcmp(t->name[t->slot[h]], s) == 0)
            return t->slot[h];
        h = (h + 1) & (t->cap - 1);
    }
    char *copy = strdup(s);
    if (!copy)
        return -ENOMEM;
    t->name[t->n] = copy;
    t->slot[h] = (int32_t)t->n;
    return (int32_t)t->n++;
}

void fc_labels_free(struct fc_labels *t)
{
    for (size_t i = 1; i < t->n; i++)
        free(t->name[i]);
    free(t->name);
    free(t->slot);
}

static const char *label(const struct fc_labels *t, int32_t i)
{
    return i > 0 ? t->name[i] : "";
}

int gs_demand_new(struct gs_demand **out)
{
    struct gs_demand *dm = calloc(1, sizeof(*dm));
    if (!dm)
        return -ENOMEM;
    dm->end_s = -1;
    *out = dm;
    return 0;
}

void gs_demand_free(struct gs_demand *dm)
{
    if (!dm)
        return;
    for (int k = 0; k < GS_FC_KEYS; k++)
        fc_labels_free(&dm->labels[k]);
    free(dm->rec);
    free(dm);
}

size_t gs_demand_count(const struct gs_demand *dm)
{
    return dm->n;
}

int gs_demand_record(const struct gs_demand *dm, size_t i, int64_t *start_s, int64_t *end_s,
                     int64_t *milli)
{
    if (i >= dm->n)
        return -ENOENT;
    *start_s = dm->rec[i].start;
    *end_s = dm->rec[i].end;
    *milli = dm->rec[i].milli;
    return 0;
}

int64_t gs_demand_end_s(const struct gs_demand *dm)
{
    return dm->end_s;
}

int gs_demand_add(struct gs_demand *dm, int64_t start_s, int64_t end_s, int64_t milli,
                  const char *service, const char *tenant, const char *queue, const char *model,
                  struct gs_diag *d)
{
    const char *lab[GS_FC_KEYS] = {NULL, service, tenant, queue, model};
    if (start_s < 0 || end_s < start_s || milli < 1 || milli > FC_MILLI_MAX)
        return gs_diag_error(d, "demand record [%lld, %lld) s of %lld milli-GPU: out of range",
                             (long long)start_s, (long long)end_s, (long long)milli);
    for (int k = 1; k < GS_FC_KEYS; k++)
        if (lab[k] && strlen(lab[k]) >= GS_FC_NAME_MAX)
            return gs_diag_error(d, "%s \"%.40s...\" longer than %d bytes", key_names[k], lab[k],
                                 GS_FC_NAME_MAX - 1);
    if (dm->n == GS_FC_RECORDS_MAX)
        return gs_diag_error_code(d, -E2BIG, "more than %d demand records", GS_FC_RECORDS_MAX);
    struct fc_rec *grown = gs_grow(dm->rec, &dm->cap, dm->n + 1, sizeof(*grown), 1024);
    if (!grown)
        return -ENOMEM;
    dm->rec = grown;
    struct fc_rec *r = &dm->rec[dm->n];
    r->start = start_s;
    r->end = end_s;
    r->milli = milli;
    r->lab[0] = 0;
    for (int k = 1; k < GS_FC_KEYS; k++) {
        int32_t i = fc_intern(&dm->labels[k], lab[k]);
        if (i < 0)
            return (int)i;
        r->lab[k] = i;
    }
    dm->n++;
    if (start_s > dm->end_s)
        dm->end_s = start_s;
    if (end_s != INT64_MAX && end_s > dm->end_s)
        dm->end_s = end_s;
    return 0;
}

int gs_demand_add_run(struct gs_demand *dm, const char *tenant, const char *model, int64_t cards,
                      int64_t gpu_milli, int64_t start_us, int64_t end_us, struct gs_diag *d)
{
    if (cards < 0 || cards > FC_MILLI_MAX / 1000 || gpu_milli < 0 || gpu_milli > 1000 ||
        start_us < 0 || end_us < start_us)
        return gs_diag_error(d,
                             "a run of %lld cards of %lld milli-GPU from %lld to %lld us: want "
                             "0..%d cards of 0..1000 and 0 <= start <= end",
                             (long long)cards, (long long)gpu_milli, (long long)start_us,
                             (long long)end_us, FC_MILLI_MAX / 1000);
    if (cards * gpu_milli == 0)
        return 0; /* a run that held no GPU */
    /* the end rounded up to a second, without end + 999999 passing INT64_MAX */
    int64_t end_s = end_us == INT64_MAX ? INT64_MAX : end_us / 1000000 + (end_us % 1000000 != 0);
    return gs_demand_add(dm, start_us / 1000000, end_s, cards * gpu_milli, NULL, tenant, NULL,
                         model && *model ? model : "unknown", d);
}

void fc_demand_source(struct gs_demand *dm, const char *path, unsigned keys)
{
    if (dm->nsources < FC_SOURCES_MAX) {
        snprintf(dm->source[dm->nsources], sizeof(dm->source[0]), "%s", path);
        dm->source_keys[dm->nsources++] = keys | 1u << GS_FC_TOTAL;
    }
}

void fc_demand_truncate(struct gs_demand *dm, size_t n, int64_t end_s)
{
    dm->n = n;
    dm->end_s = end_s;
}

/* Group index of every record and the group names; groups ordered later. */
struct grouping {
    int32_t *of;    /* record -> group */
    int32_t *label; /* group -> label index of the key */
    int32_t *model; /* group -> label index of the model, 0 when not split */
    size_t n;
};

static int group(const struct gs_demand *dm, enum gs_fc_key key, int by_model, struct grouping *g)
{
    size_t nl = key == GS_FC_TOTAL ? 1 : dm->labels[key].n ? dm->labels[key].n : 1;
    size_t nm = by_model && dm->labels[GS_FC_MODEL].n ? dm->labels[GS_FC_MODEL].n : 1;
    int32_t *map = malloc(nl * nm * sizeof(*map));
    g->of = malloc((dm->n ? dm->n : 1) * sizeof(*g->of));
    g->label = malloc(nl * nm * sizeof(*g->label));
    g->model = malloc(nl * nm * sizeof(*g->model));
    if (!map || !g->of || !g->label || !g->model) {
        free(map);
        return -ENOMEM;
    }
    memset(map, 0xff, nl * nm * sizeof(*map));
    g->n = 0;
    for (size_t i = 0; i < dm->n; i++) {
        int32_t l = key == GS_FC_TOTAL ? 0 : dm->rec[i].lab[key];
        int32_t m = by_model ? dm->rec[i].lab[GS_FC_MODEL] : 0;
        size_t cell = (size_t)l * nm + (size_t)m;
        if (map[cell] < 0) {
            map[cell] = (int32_t)g->n;
            g->label[g->n] = l;
            g->model[g->n] = m;
            g->n++;
        }
        g->of[i] = map[cell];
    }
    free(map);
    return 0;
}

static void grouping_free(struct grouping *g)
{
    free(g->of);
    free(g->label);
    free(g->model);
}

/* Spread @milli over [s, e) into hour cells: partials in @part (milli-seconds), whole hours as
 * steps in @step (milli per hour). Times relative to the first hour. */
static void spread(int64_t s, int64_t e, int64_t milli, int64_t *part, int64_t *step)
{
    int64_t hs = s / GS_FC_STEP_S, he = e / GS_FC_STEP_S;
    if (hs == he) {
        part[hs] += (e - s) * milli;
        return;
    }
    part[hs] += ((hs + 1) * GS_FC_STEP_S - s) * milli;
    part[he] += (e - he * GS_FC_STEP_S) * milli; /* he may be the extra cell past the end */
    step[hs + 1] += milli;
    step[he] -= milli;
}

static int by_volume(const void *a, const void *b)
{
    const struct gs_series *x = a, *y = b;
    if (x->volume != y->volume)
        return x->volume > y->volume ? -1 : 1;
    return strcmp(x->name, y->name) < 0 ? -1 : strcmp(x->name, y->name) > 0;
}

static int check_key(const struct gs_demand *dm, enum gs_fc_key key, int by_model,
                     struct gs_diag *d)
{
    for (size_t i = 0; i < dm->nsources; i++) {
        if (!(dm->source_keys[i] & 1u << key))
            return gs_diag_error(d, "%s names no %s: group by another key", dm->source[i],
                                 key_names[key]);
        if (by_model && !(dm->source_keys[i] & 1u << GS_FC_MODEL))
            return gs_diag_error(d, "%s names no GPU model: it cannot be split by model",
                                 dm->source[i]);
    }
    return 0;
}

/* Fold groups past @top into one "(other)" series (kept last). */
static void fold_top(struct gs_series_set *out, size_t top)
{
    if (!top || out->count <= top + 1)
        return;
    struct gs_series *o = &out->s[top];
    snprintf(o->name, sizeof(o->name), "(other)");
    o->model[0] = '\0';
    for (size_t i = top + 1; i < out->count; i++) {
        for (size_t h = 0; h < out->n; h++)
            o->milli[h] += out->s[i].milli[h];
        o->volume += out->s[i].volume;
        free(out->s[i].milli);
    }
    out->count = top + 1;
}

/* The files read, for a message: "a.csv, b.db", or "the sources" when none is named. */
static const char *source_names(const struct gs_demand *dm, char *names, size_t cap)
{
    names[0] = '\0';
    for (size_t i = 0, at = 0; i < dm->nsources && at < cap; i++)
        at += (size_t)snprintf(names + at, cap - at, "%s%s", i ? ", " : "", dm->source[i]);
    return names[0] ? names : "the sources";
}

/* Not enough history: name the sources, what they hold, and what a forecast needs. */
static int too_short(const struct gs_demand *dm, const char *what, struct gs_diag *d)
{
    char names[512];
    return gs_diag_error_code(d, -ENODATA,
                              "not enough history in %s: %s; a forecast needs at least one "
                              "hour of it (%zu hours for a level model, %zu for a daily season)",
                              source_names(dm, names, sizeof(names)), what,
                              gs_fc_min_points(GS_FC_ANN), gs_fc_min_points(GS_FC_ANA));
}

/* sources() - whether every source read (@all), or any (!@all), has the FC_SRC_* @bit. */
static int sources(const struct gs_demand *dm, unsigned bit, int all)
{
    size_t n = 0;
    for (size_t i = 0; i < dm->nsources; i++)
        n += (dm->source_keys[i] & bit) != 0;
    return all ? n > 0 && n == dm->nsources : n > 0;
}

const char *gs_fc_time_text(char buf[GS_FC_TIME_MAX], int64_t s, int utc)
{
    char t[GS_TIME_TEXT_MAX];
    if (utc && s >= 0 && s <= INT64_MAX / 1000000 && *gs_time_text(t, s * 1000000, 0) != '-')
        snprintf(buf, GS_FC_TIME_MAX, "%s (%lld s)", t, (long long)s);
    else
        snprintf(buf, GS_FC_TIME_MAX, "%lld s", (long long)s);
    return buf;
}

int gs_demand_series(const struct gs_demand *dm, enum gs_fc_key key, int by_model, int64_t end_s,
                     size_t top, struct gs_series_set *out, struct gs_diag *d)
{
    if ((unsigned)key >= GS_FC_KEYS)
        return gs_diag_error(d, "unknown grouping key %d", (int)key);
    if (!dm->n)
        return too_short(dm, "no GPU use yet", d);
    int rc = check_key(dm, key, by_model, d);
    if (rc)
        return rc;
    int64_t first = INT64_MAX;
    for (size_t i = 0; i < dm->n; i++)
        first = dm->rec[i].start < first ? dm->rec[i].start : first;
    int64_t t0 = first / GS_FC_STEP_S * GS_FC_STEP_S;
    int64_t end = end_s >= 0 ? end_s : dm->end_s, seen = end;
    int live = sources(dm, FC_SRC_LIVE, 0), utc = sources(dm, FC_SRC_UTC, 1);
    char t1[GS_FC_TIME_MAX], t2[GS_FC_TIME_MAX];
    if (live) /* the hour under way: its mean so far would pass for a whole hour's */
        end -= end % GS_FC_STEP_S;
    if (end <= first && (end_s < 0 || live)) {
        char what[160];
        snprintf(what, sizeof(what), "GPU use only from %s, %s", gs_fc_time_text(t1, first, utc),
                 seen > first ? "in an hour not over yet" : "nothing after it yet");
        return too_short(dm, what, d);
    }
    if (end <= first)
        return gs_diag_error(d, "series end %s is not after the first record at %s",
                             gs_fc_time_text(t1, end, utc), gs_fc_time_text(t2, first, utc));
    int64_t hours = (end - t0) / GS_FC_STEP_S + ((end - t0) % GS_FC_STEP_S != 0); /* no overflow */
    if (hours > GS_FC_HOURS_MAX) {
        char names[512];
        return gs_diag_error(d,
                             "%s: %lld hours from the first record (%s) to the end (%s): more "
                             "than %d",
                             source_names(dm, names, sizeof(names)), (long long)hours,
                             gs_fc_time_text(t1, first, utc), gs_fc_time_text(t2, end, utc),
                             GS_FC_HOURS_MAX);
    }
    int64_t tend = end; /* records end here; the last hour's mean is over what it covers */
    int64_t last_s = end - (t0 + (hours - 1) * GS_FC_STEP_S);
    struct grouping g;
    if ((rc = group(dm, key, by_model, &g)))
        return rc;
    if (g.n > GS_FC_SERIES_MAX || (int64_t)g.n * hours > CELLS_MAX) {
        char names[512];
        rc = gs_diag_error_code(d, -E2BIG,
                                "%s: %zu groups of %lld hours: more than %d groups or %d "
                                "values",
                                source_names(dm, names, sizeof(names)), g.n, (long long)hours,
                                GS_FC_SERIES_MAX, CELLS_MAX);
        grouping_free(&g);
        return rc;
    }
    size_t cells = (size_t)hours + 1;
    int64_t *part = calloc(g.n * cells, sizeof(*part));
    int64_t *step = calloc(g.n * cells, sizeof(*step));
    struct gs_series *s = calloc(g.n, sizeof(*s));
    rc = part && step && s ? 0 : -ENOMEM;
    for (size_t i = 0; !rc && i < dm->n; i++) {
        const struct fc_rec *r = &dm->rec[i];
        int64_t a = r->start, b = r->end < tend ? r->end : tend;
        if (a >= tend || b <= a)
            continue; /* starts after the end, or holds for no time */
        size_t at = (size_t)g.of[i] * cells;
        spread(a - t0, b - t0, r->milli, part + at, step + at);
    }
    for (size_t k = 0; !rc && k < g.n; k++) {
        int64_t *v = malloc((size_t)hours * sizeof(*v));
        if (!v) {
            rc = -ENOMEM;
            break;
        }
        int64_t run = 0, *pp = part + k * cells, *sp = step + k * cells;
        for (int64_t h = 0; h < hours; h++) {
            run += sp[h];
            int64_t ms = run * GS_FC_STEP_S + pp[h];
            int64_t span = h == hours - 1 ? last_s : GS_FC_STEP_S;
            v[h] = (ms + span / 2) / span;
            s[k].volume += v[h];
        }
        s[k].milli = v;
        snprintf(s[k].name, sizeof(s[k].name), "%s",
                 key == GS_FC_TOTAL ? "total" : label(&dm->labels[key], g.label[k]));
        snprintf(s[k].model, sizeof(s[k].model), "%s", label(&dm->labels[GS_FC_MODEL], g.model[k]));
    }
    free(part);
    free(step);
    size_t ng = g.n;
    grouping_free(&g);
    if (rc) {
        for (size_t k = 0; s && k < ng; k++)
            free(s[k].milli);
        free(s);
        return rc;
    }
    qsort(s, ng, sizeof(*s), by_volume);
    memset(out, 0, sizeof(*out));
    out->start_s = t0;
    out->utc = utc;
    out->n = (size_t)hours;
    out->s = s;
    out->count = ng;
    snprintf(out->unit, sizeof(out->unit), "milli-GPU");
    fold_top(out, top);
    return 0;
}

void gs_series_set_free(struct gs_series_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->count; i++)
        free(set->s[i].milli);
    free(set->s);
    memset(set, 0, sizeof(*set));
}
