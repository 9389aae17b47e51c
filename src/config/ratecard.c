/*
 * RateCard loader; the contract is at gs_ratecard_load() in gpusched/billing.h.
 *
 * The card is read straight from libyaml's events by recursive descent, one function per level
 * (document, spec, models, model, mig). A card is five levels deep, so the descent is bounded by
 * construction, and the uninterpreted `metadata` subtree is skipped with a depth limit: no YAML
 * tree is built, so neither deep nesting nor aliases can make memory or work grow beyond the file.
 * Aliases are refused: a rate card has no use for them.
 */
#include "gpusched/billing.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"

#include "yamlutil.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define API_VERSION "gpusched.io/v1alpha1"
#define KIND        "RateCard"
#define SKIP_DEPTH  32  /* nesting allowed inside metadata */
#define WHERE_MAX   160 /* "spec.models.<model>.mig.<profile>" */
#define QUOTE_MAX   40  /* bytes of a user's scalar quoted back */
#define NKEYS(a)    ((int)(sizeof(a) / sizeof((a)[0])))

struct rctx {
    const char *path;
    struct gs_diag *d;
    yaml_parser_t ps;
    const unsigned char *buf;
    size_t len;
    struct gs_ratecard *rc;
    size_t model_line[GS_MODEL_MAX]; /* line each model was priced at; 0 = not yet */
};

/* A key of a mapping at a fixed level, with what the level has seen so far. */
struct level {
    const char *where;
    unsigned seen; /* bit per known key */
    int model;     /* the model being read (model and mig levels) */
};

typedef int (*key_fn)(struct rctx *c, const yaml_event_t *key, struct level *lv);

static int err_at(struct rctx *c, yaml_mark_t m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int err_at(struct rctx *c, yaml_mark_t m, const char *fmt, ...)
{
    char msg[GS_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return gs_diag_error(c->d, "%s:%zu:%zu: %s", c->path, m.line + 1, m.column + 1, msg);
}

/* text() - a scalar event's value, or NULL when it is not a scalar or holds a NUL byte. */
static const char *text(const yaml_event_t *ev)
{
    if (ev->type != YAML_SCALAR_EVENT)
        return NULL;
    const char *s = (const char *)ev->data.scalar.value;
    return strlen(s) == ev->data.scalar.length ? s : NULL;
}

/* quoted() - @ev for a message: a scalar in quotes, cut, its quotes as '?'. */
static const char *quoted(const yaml_event_t *ev, char buf[QUOTE_MAX + 8])
{
    static const char *const kinds[] = {
        [YAML_ALIAS_EVENT] = "an alias",
        [YAML_SEQUENCE_START_EVENT] = "a sequence",
        [YAML_MAPPING_START_EVENT] = "a mapping",
    };
    if (ev->type != YAML_SCALAR_EVENT)
        return (size_t)ev->type < sizeof(kinds) / sizeof(kinds[0]) && kinds[ev->type]
                   ? kinds[ev->type]
                   : "nothing";
    size_t n = ev->data.scalar.length < QUOTE_MAX ? ev->data.scalar.length : QUOTE_MAX, k = 0;
    buf[k++] = '"';
    for (const unsigned char *p = ev->data.scalar.value; p < ev->data.scalar.value + n; p++)
        buf[k++] = *p == '"' ? '?' : (char)*p; /* control bytes: gs_diag writes them \xNN */
    if (n < ev->data.scalar.length)
        k += (size_t)snprintf(buf + k, 4, "...");
    snprintf(buf + k, 2, "\"");
    return buf;
}

/* yaml_fail() - the parser's error at its place; a reader error has only a byte offset. */
static int yaml_fail(struct rctx *c)
{
    yaml_mark_t m = c->ps.problem_mark;
    const char *what = c->ps.problem ? c->ps.problem : "malformed YAML";
    if (c->ps.error == YAML_MEMORY_ERROR)
        return gs_diag_error_code(c->d, -ENOMEM, "%s: out of memory", c->path);
    if (c->ps.error == YAML_READER_ERROR) {
        size_t off = c->ps.problem_offset < c->len ? c->ps.problem_offset : c->len;
        const unsigned char *bol = c->buf, *nl;
        m.line = 0;
        while ((nl = memchr(bol, '\n', (size_t)(c->buf + off - bol))) != NULL) {
            m.line++;
            bol = nl + 1;
        }
        m.column = (size_t)(c->buf + off - bol);
    }
    if (c->ps.context)
        return err_at(c, m, "YAML error: %s %s", c->ps.context, what);
    return err_at(c, m, "YAML error: %s", what);
}

static int next(struct rctx *c, yaml_event_t *ev)
{
    return yaml_parser_parse(&c->ps, ev) ? 0 : yaml_fail(c);
}

/* not_a() - the error for a node at @where that is not @want; deletes @ev. */
static int not_a(struct rctx *c, yaml_event_t *ev, const char *where, const char *want)
{
    char q[QUOTE_MAX + 8];
    int rc = err_at(c, ev->start_mark, "%s must be %s, not %s", where, want, quoted(ev, q));
    yaml_event_delete(ev);
    return rc;
}

/* value() - the next event, which must be a scalar holding no NUL (the caller deletes it). */
static int value(struct rctx *c, yaml_event_t *ev, const char *where, const char *want)
{
    int rc = next(c, ev);
    if (!rc && !text(ev))
        rc = not_a(c, ev, where, want);
    return rc;
}

/* skip() - consume one node of any shape, nested at most SKIP_DEPTH deep. */
static int skip(struct rctx *c, const char *where)
{
    int depth = 0;
    do {
        yaml_event_t ev;
        int rc = next(c, &ev);
        if (rc)
            return rc;
        if (ev.type == YAML_ALIAS_EVENT)
            return not_a(c, &ev, where, "plain YAML (aliases are not supported)");
        depth += ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT;
        depth -= ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT;
        if (depth > SKIP_DEPTH)
            rc = err_at(c, ev.start_mark, "%s is nested deeper than %d levels", where, SKIP_DEPTH);
        yaml_event_delete(&ev);
        if (rc)
            return rc;
    } while (depth > 0);
    return 0;
}

/* each_key() - read a mapping at @lv->where, passing each key to @fn, which reads the value. */
static int each_key(struct rctx *c, struct level *lv, key_fn fn)
{
    yaml_event_t ev;
    int rc = next(c, &ev);
    if (rc)
        return rc;
    if (ev.type != YAML_MAPPING_START_EVENT)
        return not_a(c, &ev, lv->where, "a mapping");
    yaml_event_delete(&ev);
    for (;;) {
        if ((rc = next(c, &ev)) != 0)
            return rc;
        if (ev.type == YAML_MAPPING_END_EVENT)
            break;
        if (!text(&ev))
            return not_a(c, &ev, "a key", "a string");
        rc = fn(c, &ev, lv);
        yaml_event_delete(&ev);
        if (rc)
            return rc;
    }
    yaml_event_delete(&ev);
    return 0;
}

/* known_key() - the index of @key in @keys, once per mapping; else an error naming the keys. */
static int known_key(struct rctx *c, const yaml_event_t *key, struct level *lv,
                     const char *const *keys, int n)
{
    char q[QUOTE_MAX + 8], list[400] = "";
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(text(key), keys[i]) != 0) {
            if (off < sizeof(list))
                off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "",
                                        keys[i]);
            continue;
        }
        if (lv->seen & (1u << i))
            return err_at(c, key->start_mark, "%s: %s is given twice", lv->where, quoted(key, q));
        lv->seen |= 1u << i;
        return i;
    }
    return err_at(c, key->start_mark, "%s: unknown field %s (known: %s)", lv->where, quoted(key, q),
                  list);
}

/* join() - "@a.@b" (at most @blen bytes of @b) into @buf, WHERE_MAX bytes; a label cut short
 * loses nothing that matters, since messages also give line and column. */
static const char *join(char buf[WHERE_MAX], const char *a, const char *b, size_t blen)
{
    size_t la = strnlen(a, WHERE_MAX - 2), lb = strnlen(b, blen);
    if (lb > WHERE_MAX - 2 - la)
        lb = WHERE_MAX - 2 - la;
    memcpy(buf, a, la);
    buf[la] = '.';
    memcpy(buf + la + 1, b, lb);
    buf[la + 1 + lb] = '\0';
    return buf;
}

/* set_rate() - read an amount at @where and price (model, mode, profile) with it. */
static int set_rate(struct rctx *c, const char *where, int model, enum gs_bill_mode mode,
                    const char *profile, yaml_mark_t at)
{
    yaml_event_t ev;
    struct gs_diag why;
    int64_t rate;
    char cap[GS_MONEY_HUMAN_MAX];
    gs_diag_init(&why);
    int rc = value(c, &ev, where, "an amount such as \"8.00\"");
    if (rc)
        return rc;
    rc = gs_money_parse(text(&ev), &rate, &why);
    if (rc == -ERANGE || (!rc && rate > GS_RATE_MAX)) /* one cap, however far past it */
        rc = gs_diag_error(&why, "\"%s\" is above the largest rate, %s per hour", text(&ev),
                           gs_money_format_human(GS_RATE_MAX, gs_ratecard_currency(c->rc), cap));
    if (rc) {
        rc = err_at(c, ev.start_mark, "%s: %s", where, why.msg);
    } else if ((rc = gs_ratecard_set(c->rc, model, mode, profile, rate, &why)) != 0) {
        rc = err_at(c, at, "%s: %s", where, why.msg); /* at the key: the profile is wrong */
    }
    yaml_event_delete(&ev);
    return rc;
}

static int mig_key(struct rctx *c, const yaml_event_t *key, struct level *lv)
{
    char where[WHERE_MAX];
    return set_rate(c, join(where, lv->where, text(key), QUOTE_MAX), lv->model, GS_BILL_MIG,
                    text(key), key->start_mark);
}

enum { M_EXCLUSIVE, M_MIG, M_SHARED, M_TIMESLICE };
static const char *const model_keys[] = {"exclusive", "mig", "sharedPer10Percent",
                                         "timeslicePer10Percent"};

static int model_key(struct rctx *c, const yaml_event_t *key, struct level *lv)
{
    static const enum gs_bill_mode modes[] = {GS_BILL_EXCLUSIVE, GS_BILL_MIG, GS_BILL_SHARED,
                                              GS_BILL_TIMESLICE};
    char where[WHERE_MAX];
    int k = known_key(c, key, lv, model_keys, NKEYS(model_keys));
    if (k < 0)
        return k;
    join(where, lv->where, model_keys[k], WHERE_MAX);
    if (k == M_MIG) {
        struct level mig = {where, 0, lv->model};
        return each_key(c, &mig, mig_key);
    }
    return set_rate(c, where, lv->model, modes[k], NULL, key->start_mark);
}

static int models_key(struct rctx *c, const yaml_event_t *key, struct level *lv)
{
    char q[QUOTE_MAX + 8], names[300], where[WHERE_MAX];
    int model = gs_catalog_find(text(key), -1);
    if (model < 0)
        return err_at(c, key->start_mark, "%s: unknown GPU model %s (the catalog has: %s)",
                      lv->where, quoted(key, q), gs_catalog_names(names, sizeof(names)));
    const char *name = gs_catalog_at(model)->name;
    if (c->model_line[model])
        return err_at(c, key->start_mark, "%s: %s (%s) is priced twice; first at line %zu",
                      lv->where, quoted(key, q), name, c->model_line[model]);
    c->model_line[model] = key->start_mark.line + 1;
    join(where, lv->where, name, WHERE_MAX);
    struct level m = {where, 0, model};
    int rc = each_key(c, &m, model_key);
    if (!rc && !(m.seen & (1u << M_EXCLUSIVE)))
        rc = err_at(c, key->start_mark,
                    "%s: no exclusive rate (the card-hour rate the model's other rates derive "
                    "from)",
                    where);
    return rc;
}

enum { S_CURRENCY, S_MODELS };
static const char *const spec_keys[] = {"currency", "models"};

static int spec_key(struct rctx *c, const yaml_event_t *key, struct level *lv)
{
    char where[WHERE_MAX], q[QUOTE_MAX + 8];
    int k = known_key(c, key, lv, spec_keys, NKEYS(spec_keys));
    if (k < 0)
        return k;
    join(where, lv->where, spec_keys[k], WHERE_MAX);
    if (k == S_MODELS) {
        struct level m = {where, 0, -1};
        return each_key(c, &m, models_key);
    }
    yaml_event_t ev;
    int rc = value(c, &ev, where, "a currency code");
    if (rc)
        return rc;
    if (gs_ratecard_set_currency(c->rc, text(&ev)) != 0)
        rc = err_at(c, ev.start_mark, "%s: %s is not an ISO 4217 code such as \"USD\"", where,
                    quoted(&ev, q));
    yaml_event_delete(&ev);
    return rc;
}

enum { T_API, T_KIND, T_METADATA, T_SPEC };
static const char *const top_keys[] = {"apiVersion", "kind", "metadata", "spec"};

/* A metadata field: one Kubernetes writes, its value not read. */
static int meta_key(struct rctx *c, const yaml_event_t *key, struct level *lv)
{
    int k = known_key(c, key, lv, gs__yaml_meta_keys, GS__YAML_NMETA);
    return k < 0 ? k : skip(c, "metadata");
}

static int top_key(struct rctx *c, const yaml_event_t *key, struct level *lv)
{
    char q[QUOTE_MAX + 8];
    int k = known_key(c, key, lv, top_keys, NKEYS(top_keys));
    if (k < 0)
        return k;
    if (k == T_METADATA) {
        struct level meta = {"metadata", 0, -1};
        return each_key(c, &meta, meta_key);
    }
    if (k == T_SPEC) {
        struct level spec = {"spec", 0, -1};
        int rc = each_key(c, &spec, spec_key);
        if (!rc && !(spec.seen & (1u << S_MODELS)))
            rc = err_at(c, key->start_mark, "spec: missing field \"models\"");
        return rc;
    }
    yaml_event_t ev;
    const char *want = k == T_API ? API_VERSION : KIND;
    int rc = value(c, &ev, top_keys[k], "a string");
    if (rc)
        return rc;
    if (strcmp(text(&ev), want) != 0)
        rc = err_at(c, ev.start_mark, "%s must be \"%s\", not %s", top_keys[k], want,
                    quoted(&ev, q));
    yaml_event_delete(&ev);
    return rc;
}

/* expect() - the next event must be of @type (the stream's frame around the one document). */
static int expect(struct rctx *c, yaml_event_type_t type, const char *problem)
{
    yaml_event_t ev;
    int rc = next(c, &ev);
    if (rc)
        return rc;
    if (ev.type != type)
        rc = err_at(c, ev.start_mark, "%s", problem);
    yaml_event_delete(&ev);
    return rc;
}

static int load_stream(struct rctx *c)
{
    static const char *const need[] = {"\"apiVersion\" (want \"" API_VERSION "\")",
                                       "\"kind\" (want \"" KIND "\")", NULL, "\"spec\""};
    yaml_event_t ev;
    int rc = expect(c, YAML_STREAM_START_EVENT, "not a YAML stream");
    if (!rc)
        rc = next(c, &ev);
    if (rc)
        return rc;
    yaml_mark_t at = ev.start_mark;
    bool empty = ev.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&ev);
    if (empty)
        return gs_diag_error(c->d, "%s: the file is empty; want a " KIND " document", c->path);
    struct level top = {"top level", 0, -1};
    rc = each_key(c, &top, top_key);
    for (int k = 0; !rc && k < NKEYS(need); k++)
        if (need[k] && !(top.seen & (1u << k)))
            rc = err_at(c, at, "missing field %s", need[k]);
    if (!rc)
        rc = expect(c, YAML_DOCUMENT_END_EVENT, "malformed document end");
    if (!rc)
        rc = expect(c, YAML_STREAM_END_EVENT, "a second YAML document: a rate card file holds one");
    return rc;
}

/* read_all() - the whole file, refusing more than GS_RATECARD_MAX_BYTES. */
static int read_all(const char *path, unsigned char **out, size_t *len, struct gs_diag *d)
{
    FILE *f = gs__fopen_read(path);
    if (!f) {
        int e = errno;
        return gs_diag_error_code(d, e == ENOENT ? -ENOENT : -EIO, "%s: cannot open: %s", path,
                                  strerror(e));
    }
    unsigned char *buf = malloc(GS_RATECARD_MAX_BYTES + 1u);
    size_t n = buf ? fread(buf, 1, GS_RATECARD_MAX_BYTES + 1u, f) : 0;
    int e = ferror(f) ? errno : 0;
    fclose(f);
    int rc = !buf ? gs_diag_error_code(d, -ENOMEM, "%s: out of memory", path)
             : e  ? gs_diag_error_code(d, -EIO, "%s: cannot read: %s", path, strerror(e))
             : n > GS_RATECARD_MAX_BYTES
                 ? gs_diag_error(d, "%s: larger than %u bytes; not a rate card", path,
                                 GS_RATECARD_MAX_BYTES)
                 : 0;
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return 0;
}

int gs_ratecard_load(const char *path, struct gs_ratecard **out, struct gs_diag *d)
{
    unsigned char *buf = NULL;
    struct rctx c = {.path = path, .d = d};
    if (!path || !out)
        return gs_diag_error(d, "gs_ratecard_load: path and out must not be NULL");
    int rc = read_all(path, &buf, &c.len, d);
    if (rc)
        return rc;
    c.buf = buf;
    if (gs_ratecard_new(&c.rc) != 0 || !yaml_parser_initialize(&c.ps)) {
        gs_ratecard_free(c.rc);
        free(buf);
        return gs_diag_error_code(d, -ENOMEM, "%s: out of memory", path);
    }
    yaml_parser_set_input_string(&c.ps, buf, c.len);
    rc = load_stream(&c);
    yaml_parser_delete(&c.ps);
    free(buf);
    if (rc) {
        gs_ratecard_free(c.rc);
        return rc;
    }
    *out = c.rc;
    return 0;
}
