/*
 * libyaml helpers shared by the configuration loaders; the contract is in yamlutil.h.
 *
 * Two passes over the bytes. The event pass checks syntax and nesting depth only: libyaml 0.2.5's
 * document loader has no depth limit of its own. The document pass then hands each document's
 * tree to the caller, whose walk descends only the levels it interprets (a fixed depth), so an
 * aliased or even cyclic node (libyaml registers an anchor before the collection's children)
 * cannot recurse without end; a visit budget bounds the work aliases can multiply.
 */
#include "yamlutil.h"

#include "gpusched/diag.h"
#include "gpusched/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const gs__yaml_meta_keys[GS__YAML_NMETA] = {
    "name",
    "namespace",
    "labels",
    "annotations",
    "generateName",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "ownerReferences",
    "finalizers",
    "selfLink",
};

/* Visits a walk may make per document beyond 4 per node: far above what an alias-free file
 * needs, small enough that a file reusing one subtree a million times fails fast. */
#define WALK_BUDGET_MIN (1u << 20)

void gs__yaml_pos(const struct gs__yctx *c, const yaml_node_t *n, size_t *line, size_t *col)
{
    if (c->inner) { /* only the data entry's own position is exact */
        *line = c->line0 + 1;
        *col = c->col0 + 1;
        return;
    }
    *line = c->line0 + n->start_mark.line + 1;
    *col = c->col0 + n->start_mark.column + 1;
}

/* where() - "path:LINE:COL: " plus, inside an inexact embedded document, its own position. */
static void where(const struct gs__yctx *c, const yaml_node_t *n, char *buf, size_t size)
{
    size_t line, col;
    gs__yaml_pos(c, n, &line, &col);
    if (c->inner)
        snprintf(buf, size, "%s:%zu:%zu: in %s at line %zu, column %zu: ", c->path, line, col,
                 c->inner, (size_t)n->start_mark.line + 1, (size_t)n->start_mark.column + 1);
    else
        snprintf(buf, size, "%s:%zu:%zu: ", c->path, line, col);
}

static int err_va(struct gs__yctx *c, const yaml_node_t *n, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

static int err_va(struct gs__yctx *c, const yaml_node_t *n, int code, const char *fmt, va_list ap)
{
    char buf[GS_DIAG_MSG_MAX], at[GS_DIAG_MSG_MAX];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    where(c, n, at, sizeof(at));
    c->err_at = n;
    return gs_diag_error_code(c->d, code, "%s%s", at, buf);
}

/* Path of node @want below node @id into @buf at @off; 1 when found. Depth-first, bounded by
 * the document's nesting (checked when it was parsed). */
static int path_to(const struct gs__yctx *c, int id, const yaml_node_t *want, char *buf,
                   size_t size, size_t off, int depth)
{
    yaml_node_t *n = yaml_document_get_node(c->doc, id);
    if (!n || depth > 64)
        return 0;
    if (n == want) {
        buf[off < size ? off : size - 1] = '\0';
        return 1;
    }
    if (n->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
            const char *ks = k ? gs__yaml_str(k) : NULL;
            int w = snprintf(buf + off, off < size ? size - off : 0, "%s%s", off ? "." : "",
                             ks ? ks : "?");
            size_t next = off + (w > 0 ? (size_t)w : 0);
            if (k == want) {
                buf[next < size ? next : size - 1] = '\0';
                return 1;
            }
            if (path_to(c, p->value, want, buf, size, next, depth + 1))
                return 1;
        }
    } else if (n->type == YAML_SEQUENCE_NODE) {
        int i = 0;
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++, i++) {
            int w = snprintf(buf + off, off < size ? size - off : 0, "[%d]", i);
            if (path_to(c, *it, want, buf, size, off + (w > 0 ? (size_t)w : 0), depth + 1))
                return 1;
        }
    }
    return 0;
}

void gs__yaml_path(const struct gs__yctx *c, const yaml_node_t *n, char *buf, size_t size)
{
    if (!size)
        return;
    buf[0] = '\0';
    yaml_node_t *root = c->doc ? yaml_document_get_root_node(c->doc) : NULL;
    if (!n || !root || !path_to(c, 1, n, buf, size, 0, 0))
        buf[0] = '\0';
}

int gs__yaml_err(struct gs__yctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = err_va(c, n, -EINVAL, fmt, ap);
    va_end(ap);
    return rc;
}

int gs__yaml_err_code(struct gs__yctx *c, const yaml_node_t *n, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = err_va(c, n, code, fmt, ap);
    va_end(ap);
    return rc;
}

void gs__yaml_warn(struct gs__yctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    char buf[GS_DIAG_MSG_MAX], at[GS_DIAG_MSG_MAX];
    va_list ap;
    if (c->quiet)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    where(c, n, at, sizeof(at));
    if (!c->warn_at)
        c->warn_at = n;
    gs_diag_warn(c->d, "%s%s", at, buf);
}

void gs__yaml_note(struct gs__yctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    char buf[GS_DIAG_MSG_MAX];
    const yaml_node_t *at = c->warn_at;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    c->noting = true;
    gs__yaml_warn(c, n, "%s", buf);
    c->noting = false;
    c->warn_at = at;
}

/* (Through vsnprintf so that GCC does not warn about the cut at -O3.) */
void gs__yaml_label(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

const char *gs__yaml_kind_name(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_SCALAR_NODE:
        return "a scalar";
    case YAML_SEQUENCE_NODE:
        return "a sequence";
    case YAML_MAPPING_NODE:
        return "a mapping";
    default:
        return "an empty node";
    }
}

const char *gs__yaml_show(const yaml_node_t *n, char *buf)
{
    if (n->type != YAML_SCALAR_NODE)
        return gs__yaml_kind_name(n);
    const unsigned char *v = n->data.scalar.value;
    size_t len = n->data.scalar.length, lim = len > GS__YAML_SHOW_MAX ? GS__YAML_SHOW_MAX : len;
    size_t k = 0;
    while (lim < len && lim > 0 && (v[lim] & 0xC0) == 0x80) /* cut on a UTF-8 boundary */
        lim--;
    buf[k++] = '"';
    for (size_t i = 0; i < lim; i++)
        buf[k++] = v[i] == '"' ? '?' : (char)v[i]; /* control bytes: gs_diag writes them \xNN */
    if (lim < len) {
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k++] = '"';
    buf[k] = '\0';
    return buf;
}

const char *gs__yaml_str(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE)
        return NULL;
    const char *s = (const char *)n->data.scalar.value;
    return strlen(s) == n->data.scalar.length ? s : NULL;
}

bool gs__yaml_is_plain(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

bool gs__yaml_is_empty(const yaml_node_t *n)
{
    if (n->type == YAML_SEQUENCE_NODE)
        return n->data.sequence.items.top == n->data.sequence.items.start;
    if (n->type == YAML_MAPPING_NODE)
        return n->data.mapping.pairs.top == n->data.mapping.pairs.start;
    return false;
}

bool gs__yaml_is_null(const yaml_node_t *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    const char *s = gs__yaml_str(n);
    if (!s || !gs__yaml_is_plain(n))
        return false;
    for (int i = 0; i < GS__YAML_NKEYS(nulls); i++)
        if (strcmp(s, nulls[i]) == 0)
            return true;
    return false;
}

/* core_float() - @s matches the core schema's float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)
 * ([eE][-+]?[0-9]+)?, or [-+]?.inf and .nan in their three spellings. */
static bool core_float(const char *s)
{
    static const char *const words[] = {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"};
    static const char digits[] = "0123456789";
    const char *p = s + (*s == '-' || *s == '+');
    for (int i = 0; i < GS__YAML_NKEYS(words); i++)
        if (strcmp(p, words[i]) == 0 && (i < 3 || p == s)) /* no sign on a NaN */
            return true;
    size_t whole = strspn(p, digits), frac = 0;
    p += whole;
    if (*p == '.') {
        frac = strspn(p + 1, digits);
        p += 1 + frac;
    }
    if (!whole && !frac)
        return false;
    if (*p == 'e' || *p == 'E') {
        p += 1 + (p[1] == '-' || p[1] == '+');
        size_t exp = strspn(p, digits);
        if (!exp)
            return false;
        p += exp;
    }
    return *p == '\0';
}

const char *gs__yaml_scalar_type(const yaml_node_t *n)
{
    static const char *const bools[] = {"true", "True", "TRUE", "false", "False", "FALSE"};
    const char *s = gs__yaml_str(n);
    if (!s || !gs__yaml_is_plain(n))
        return NULL;
    if (gs__yaml_is_null(n))
        return "null";
    for (int i = 0; i < GS__YAML_NKEYS(bools); i++)
        if (strcmp(s, bools[i]) == 0)
            return "boolean";
    const char *d = s + (*s == '-' || *s == '+');
    bool dec = *d && !d[strspn(d, "0123456789")];
    bool oct = s[0] == '0' && s[1] == 'o' && s[2] && !s[2 + strspn(s + 2, "01234567")];
    bool hex =
        s[0] == '0' && s[1] == 'x' && s[2] && !s[2 + strspn(s + 2, "0123456789abcdefABCDEF")];
    if (dec || oct || hex)
        return "integer";
    return core_float(s) ? "float" : NULL;
}

const char *gs__yaml_text(const yaml_node_t *n)
{
    return gs__yaml_scalar_type(n) ? NULL : gs__yaml_str(n);
}

int gs__yaml_text_error(struct gs__yctx *c, const yaml_node_t *n, const char *what)
{
    char buf[GS__YAML_SHOW_BUF];
    const char *type = n->type == YAML_SCALAR_NODE ? gs__yaml_scalar_type(n) : NULL;
    if (!type)
        return gs__yaml_type_error(c, n, what, "a string");
    if (strcmp(type, "null") == 0)
        return gs__yaml_err(c, n, "%s must be a string, not null", what);
    return gs__yaml_err(c, n,
                        "%s must be a string, not the %s %.64s (as Kubernetes refuses it): quote "
                        "it for the text, %s",
                        what, type, (const char *)n->data.scalar.value, gs__yaml_show(n, buf));
}

int gs__yaml_not_typed(struct gs__yctx *c, const yaml_node_t *n, const char *what)
{
    if (gs__yaml_is_null(n) || !gs__yaml_scalar_type(n))
        return 0;
    return gs__yaml_text_error(c, n, what);
}

int gs__yaml_type_error(struct gs__yctx *c, const yaml_node_t *n, const char *what,
                        const char *want)
{
    char buf[GS__YAML_SHOW_BUF];
    if (n->type == YAML_SCALAR_NODE)
        return gs__yaml_err(c, n, "%s must be %s, not the scalar %s", what, want,
                            gs__yaml_show(n, buf));
    return gs__yaml_err(c, n, "%s must be %s, not %s", what, want, gs__yaml_kind_name(n));
}

int gs__yaml_spend(struct gs__yctx *c, const yaml_node_t *n)
{
    if (c->budget == 0)
        return gs__yaml_err(c, n,
                            "document too large to read: it asks more work than its size allows "
                            "(YAML aliases that repeat a part, or a list of thousands of entries "
                            "each checked against the others for a repeated name)");
    c->budget--;
    return 0;
}

yaml_node_t *gs__yaml_child(struct gs__yctx *c, int id)
{
    return yaml_document_get_node(c->doc, id);
}

/* near() - edit distance of @a (@la bytes) and @b when it is at most 2, else 3: all we need. */
static int near(const unsigned char *a, size_t la, const char *b)
{
    int row[48];
    size_t lb = strlen(b);
    if (lb >= sizeof(row) / sizeof(row[0]) || la > lb + 2 || lb > la + 2)
        return 3;
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j], best = diag + (a[i - 1] != (unsigned char)b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] > 2 ? 3 : row[lb];
}

/* nearest() - gs__nearest() of the @len bytes at @s. */
static int nearest(const unsigned char *s, size_t len, const char *const *known, int n)
{
    int best = -1, best_dist = 3;
    for (int i = 0; i < n; i++) {
        int dist = near(s, len, known[i]);
        if (dist < best_dist) {
            best = i;
            best_dist = dist;
        }
    }
    return best;
}

int gs__nearest(const char *s, const char *const *known, int n)
{
    return nearest((const unsigned char *)s, strlen(s), known, n);
}

int gs__yaml_nearest(const yaml_node_t *k, const char *const *known, int n)
{
    if (k->type != YAML_SCALAR_NODE)
        return -1;
    return nearest(k->data.scalar.value, k->data.scalar.length, known, n);
}

/* hint() - the suggestion of @known[@best] (none when @best < 0) into @buf. */
static const char *hint(int best, const char *const *known, char *buf, size_t size)
{
    if (best >= 0)
        snprintf(buf, size, " (did you mean \"%s\"?)", known[best]);
    else if (size)
        buf[0] = '\0';
    return buf;
}

const char *gs__hint(const char *s, const char *const *known, int n, char *buf, size_t size)
{
    return hint(gs__nearest(s, known, n), known, buf, size);
}

const char *gs__yaml_hint(const yaml_node_t *k, const char *const *known, int n, char *buf,
                          size_t size)
{
    return hint(gs__yaml_nearest(k, known, n), known, buf, size);
}

/*
 * key_index() - index of key @k in @known; otherwise an error (or, lenient, a warning and
 * -ENOENT) suggesting the nearest key.
 */
static int key_index(struct gs__yctx *c, const yaml_node_t *k, const char *const *known, int n,
                     const char *what)
{
    char buf[GS__YAML_SHOW_BUF];
    if (k->type != YAML_SCALAR_NODE)
        return gs__yaml_err(c, k, "a key in %s must be a scalar, not %s", what,
                            gs__yaml_kind_name(k));
    const char *s = gs__yaml_str(k);
    for (int i = 0; s && i < n; i++)
        if (strcmp(s, known[i]) == 0)
            return i;
    char hint[96];
    gs__yaml_hint(k, known, n, hint, sizeof(hint));
    if (!c->lenient)
        return gs__yaml_err(c, k, "unknown field %s in %s%s", gs__yaml_show(k, buf), what, hint);
    gs__yaml_warn(c, k, "unknown field %s in %s%s; ignored", gs__yaml_show(k, buf), what, hint);
    return -ENOENT;
}

/*
 * walk() - each child of collection @n (@type; a null scalar counts as empty) to @fn: a mapping's
 * pairs as (key, value), a sequence's items as (NULL, item), with the child's index.
 */
typedef int (*child_fn)(struct gs__yctx *c, int idx, yaml_node_t *k, yaml_node_t *v, void *arg);

static int walk(struct gs__yctx *c, yaml_node_t *n, yaml_node_type_t type, const char *what,
                child_fn fn, void *arg)
{
    bool map = type == YAML_MAPPING_NODE;
    if (gs__yaml_is_null(n))
        return 0;
    if (n->type != type)
        return gs__yaml_type_error(c, n, what, map ? "a mapping" : "a sequence");
    size_t count = map ? (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start)
                       : (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    for (size_t i = 0; i < count && i < INT32_MAX; i++) {
        yaml_node_t *k = map ? gs__yaml_child(c, n->data.mapping.pairs.start[i].key) : NULL;
        yaml_node_t *v = gs__yaml_child(c, map ? n->data.mapping.pairs.start[i].value
                                               : n->data.sequence.items.start[i]);
        int rc = gs__yaml_spend(c, n);
        if (rc)
            return rc;
        if (!v || (map && !k))
            return gs__yaml_err(c, n, "malformed %s in %s", map ? "mapping" : "sequence", what);
        rc = fn(c, (int)i, k, v, arg);
        if (rc)
            return rc;
    }
    return 0;
}

struct fields {
    const char *const *known;
    int n;
    const char *what;
    gs__yaml_field_fn fn;
    void *arg;
    uint64_t seen;
};

static int field_child(struct gs__yctx *c, int idx, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    struct fields *f = arg;
    char buf[GS__YAML_SHOW_BUF];
    (void)idx; /* a child_fn */
    int i = key_index(c, k, f->known, f->n, f->what);
    if (i == -ENOENT)
        return 0;
    if (i < 0)
        return i;
    if (f->seen & ((uint64_t)1 << i))
        return gs__yaml_err(c, k, "duplicate field %s in %s", gs__yaml_show(k, buf), f->what);
    f->seen |= (uint64_t)1 << i;
    return f->fn(c, i, v, f->arg);
}

int gs__yaml_each_field(struct gs__yctx *c, yaml_node_t *map, const char *const *known, int n,
                        const char *what, gs__yaml_field_fn fn, void *arg)
{
    struct fields f = {known, n < GS__YAML_KEYS_MAX ? n : GS__YAML_KEYS_MAX, what, fn, arg, 0};
    return walk(c, map, YAML_MAPPING_NODE, what, field_child, &f);
}

struct pass {
    gs__yaml_pair_fn pair;
    gs__yaml_item_fn item;
    void *arg;
    json_t *seen; /* a mapping's keys so far: YAML 1.2 §3.2.1.1 says they are unique */
    const char *what;
};

static int pair_child(struct gs__yctx *c, int idx, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    const struct pass *p = arg;
    char buf[GS__YAML_SHOW_BUF];
    const char *s = gs__yaml_str(k);
    (void)idx; /* a child_fn */
    if (!s)
        return gs__yaml_type_error(c, k, "a key", "a string");
    if (json_object_get(p->seen, s)) /* else the last or the first wins, unsaid */
        return gs__yaml_err(c, k, "key %s given twice in %s", gs__yaml_show(k, buf), p->what);
    if (json_object_set_new(p->seen, s, json_null()))
        return gs_diag_error_code(c->d, -ENOMEM, "%s: out of memory", c->path);
    return p->pair(c, k, v, p->arg);
}

static int item_child(struct gs__yctx *c, int idx, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    const struct pass *p = arg;
    (void)k; /* a child_fn; items have no key */
    return p->item(c, idx, v, p->arg);
}

int gs__yaml_each_pair(struct gs__yctx *c, yaml_node_t *map, const char *what, gs__yaml_pair_fn fn,
                       void *arg)
{
    struct pass p = {fn, NULL, arg, json_object(), what};
    if (!p.seen)
        return gs_diag_error_code(c->d, -ENOMEM, "%s: out of memory", c->path);
    int rc = walk(c, map, YAML_MAPPING_NODE, what, pair_child, &p);
    json_decref(p.seen);
    return rc;
}

int gs__yaml_each_item(struct gs__yctx *c, yaml_node_t *seq, const char *what, gs__yaml_item_fn fn,
                       void *arg)
{
    struct pass p = {NULL, fn, arg, NULL, what};
    return walk(c, seq, YAML_SEQUENCE_NODE, what, item_child, &p);
}

/* The text of item @n of a sequence: itself, or with @key the scalar under @key; NULL none. */
static const char *item_text(struct gs__yctx *c, yaml_node_t *n, const char *key)
{
    yaml_node_t *v = n;
    if (key && (!n || n->type != YAML_MAPPING_NODE || gs__yaml_map_get(c, n, key, &v)))
        return NULL;
    return v ? gs__yaml_str(v) : NULL;
}

yaml_node_t *gs__yaml_earlier(struct gs__yctx *c, yaml_node_t *seq, int idx, const char *key)
{
    if (!seq || seq->type != YAML_SEQUENCE_NODE || idx < 0 ||
        idx >= seq->data.sequence.items.top - seq->data.sequence.items.start)
        return NULL;
    yaml_node_item_t *it = seq->data.sequence.items.start;
    const char *mine = item_text(c, yaml_document_get_node(c->doc, it[idx]), key);
    for (int i = 0; mine && i < idx; i++) {
        yaml_node_t *n = yaml_document_get_node(c->doc, it[i]);
        const char *t = item_text(c, n, key);
        if (t && !strcmp(t, mine))
            return n;
    }
    return NULL;
}

int gs__yaml_map_get(struct gs__yctx *c, yaml_node_t *map, const char *key, yaml_node_t **out)
{
    *out = NULL;
    if (map->type != YAML_MAPPING_NODE)
        return 0;
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = gs__yaml_child(c, pr->key);
        int rc = gs__yaml_spend(c, map);
        if (rc)
            return rc;
        const char *s = k ? gs__yaml_str(k) : NULL;
        if (s && strcmp(s, key) == 0) {
            *out = gs__yaml_child(c, pr->value);
            return 0;
        }
    }
    return 0;
}

bool gs__yaml_parse_int(const char *s, long long *v)
{
    if (!s) /* gs__yaml_str() of a mapping or a sequence */
        return false;
    const char *p = s + (*s == '+' || *s == '-');
    if (!*p)
        return false;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9')
            return false;
    errno = 0;
    long long x = strtoll(s, NULL, 10);
    if (errno == ERANGE)
        x = *s == '-' ? LLONG_MIN : LLONG_MAX;
    *v = x;
    return true;
}

/* line_col() - 1-based line and column of byte @off of @buf: reader errors carry only an offset. */
static void line_col(const unsigned char *buf, size_t len, size_t off, size_t *line, size_t *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (buf[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

/* fail_at() - the outer position of inner 1-based @line, @col. */
static void fail_at(const struct gs__yctx *c, size_t line, size_t col, char *buf, size_t size)
{
    if (c->inner)
        snprintf(buf, size, "%s:%zu:%zu: in %s at line %zu, column %zu", c->path, c->line0 + 1,
                 c->col0 + 1, c->inner, line, col);
    else
        snprintf(buf, size, "%s:%zu:%zu", c->path, c->line0 + line, c->col0 + col);
}

static int yaml_fail(const struct gs__yctx *c, const yaml_parser_t *ps, const unsigned char *buf,
                     size_t len)
{
    char at[GS_DIAG_MSG_MAX];
    const char *problem = ps->problem ? ps->problem : "malformed YAML";
    size_t line = ps->problem_mark.line + 1, col = ps->problem_mark.column + 1;
    if (ps->error == YAML_MEMORY_ERROR)
        return gs_diag_error_code(c->d, -ENOMEM, "%s: out of memory parsing YAML", c->path);
    if (ps->error == YAML_READER_ERROR)
        line_col(buf, len, ps->problem_offset, &line, &col);
    fail_at(c, line, col, at, sizeof(at));
    if (ps->context && ps->error != YAML_READER_ERROR)
        return gs_diag_error(c->d, "%s: YAML error: %s (%s at line %zu, column %zu)", at, problem,
                             ps->context, c->line0 + ps->context_mark.line + 1,
                             c->col0 + ps->context_mark.column + 1);
    return gs_diag_error(c->d, "%s: YAML error: %s", at, problem);
}

int gs__yaml_check_syntax(const struct gs__yctx *proto, const unsigned char *buf, size_t len,
                          int max_depth)
{
    yaml_parser_t ps;
    int depth = 0, rc = 0;
    char at[GS_DIAG_MSG_MAX];
    if (!yaml_parser_initialize(&ps))
        return gs_diag_error_code(proto->d, -ENOMEM, "%s: out of memory", proto->path);
    yaml_parser_set_input_string(&ps, buf, len);
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&ps, &ev)) {
            rc = yaml_fail(proto, &ps, buf, len);
            break;
        }
        if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT)
            depth++;
        else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT)
            depth--;
        if (depth > max_depth) {
            fail_at(proto, ev.start_mark.line + 1, ev.start_mark.column + 1, at, sizeof(at));
            rc = gs_diag_error(proto->d, "%s: nested deeper than %d levels", at, max_depth);
        }
        bool end = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
        if (rc || end)
            break;
    }
    yaml_parser_delete(&ps);
    return rc;
}

int gs__yaml_each_document(const struct gs__yctx *proto, const unsigned char *buf, size_t len,
                           gs__yaml_doc_fn fn, void *arg)
{
    yaml_parser_t ps;
    int rc = 0;
    if (!yaml_parser_initialize(&ps))
        return gs_diag_error_code(proto->d, -ENOMEM, "%s: out of memory", proto->path);
    yaml_parser_set_input_string(&ps, buf, len);
    for (;;) {
        yaml_document_t doc;
        if (!yaml_parser_load(&ps, &doc)) { /* libyaml frees @doc itself on failure */
            rc = yaml_fail(proto, &ps, buf, len);
            break;
        }
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        bool last = root == NULL; /* an empty document only at the end of the stream */
        if (root) {
            struct gs__yctx c = *proto;
            c.doc = &doc;
            c.budget = WALK_BUDGET_MIN + 4 * (size_t)(doc.nodes.top - doc.nodes.start);
            rc = fn(&c, root, arg);
        }
        yaml_document_delete(&doc);
        if (rc || last)
            break;
    }
    yaml_parser_delete(&ps);
    return rc;
}

static int io_error(const char *path, const char *what, int e, struct gs_diag *d)
{
    char why[128];
    if (e == ENOMEM)
        return gs_diag_error_code(d, -ENOMEM, "%s: out of memory", path);
    if (strerror_r(e, why, sizeof(why)) != 0)
        snprintf(why, sizeof(why), "error %d", e);
    return gs_diag_error_code(d, -EIO, "%s: %s: %s", path, what, why);
}

/* slurp() - all of @f into *@out, NUL-terminated; more than @max bytes is -EINVAL. */
static int slurp(FILE *f, const char *path, size_t max, const char *what, unsigned char **out,
                 size_t *outlen, struct gs_diag *d)
{
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 1 >= cap) { /* cap never passes max + 2: one byte tells "too big", one the NUL */
            size_t ncap = gs_grow_cap(cap, len + 2, 16384);
            ncap = !ncap || ncap > max + 2 ? max + 2 : ncap;
            unsigned char *nbuf = realloc(buf, ncap);
            if (!nbuf) {
                free(buf);
                return gs_diag_error_code(d, -ENOMEM, "%s: out of memory", path);
            }
            buf = nbuf;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (len > max) {
            free(buf);
            return gs_diag_error(d, "%s: larger than %zu bytes; %s", path, max, what);
        }
        if (got == 0) {
            if (ferror(f)) {
                free(buf);
                return io_error(path, "cannot read", errno, d);
            }
            break;
        }
    }
    buf[len] = '\0';
    *out = buf;
    *outlen = len;
    return 0;
}

FILE *gs__fopen_read(const char *path)
{
    /* O_NONBLOCK for the open only: a FIFO no one writes then reads as empty where a plain open
     * waited for a writer for ever (gpuschedd's reload runs on the thread that takes SIGTERM) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) ? NULL : fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

int gs__yaml_read(const char *path, bool allow_stdin, size_t max, const char *what,
                  unsigned char **out, size_t *len, struct gs_diag *d)
{
    if (allow_stdin && strcmp(path, "-") == 0)
        return slurp(stdin, "<stdin>", max, what, out, len, d);
    FILE *f = gs__fopen_read(path);
    if (!f) {
        int e = errno;
        if (e == ENOENT)
            return gs_diag_error_code(d, -ENOENT, "%s: no such file", path);
        if (e == EACCES || e == EPERM) /* a file the user named that they may not read */
            return gs_diag_error_code(d, -EACCES, "%s: cannot open: %s", path, strerror(e));
        return io_error(path, "cannot open", e, d);
    }
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) { /* bad input, not an I/O failure */
        fclose(f);
        return gs_diag_error(d, "%s: a directory, not a file", path);
    }
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size > max) {
        fclose(f); /* refused before a byte of it is read (slurp() checks what streams give) */
        return gs_diag_error(d, "%s: larger than %zu bytes; %s", path, max, what);
    }
    int rc = slurp(f, path, max, what, out, len, d);
    fclose(f);
    return rc;
}

/* --- one-pass document building --- */

/* The anchors of one document: open addressing over names, each mapped to its node. */
struct anchor {
    char *name;
    int id;
};

struct builder {
    const struct gs__yctx *proto;
    yaml_document_t doc;
    bool open;        /* doc is initialised */
    int *stack, *key; /* open collections and, for a mapping, its pending key (0 = none) */
    size_t depth, cap;
    struct anchor *anc; /* table of acap slots, name NULL = empty */
    size_t nanc, acap;
    size_t nodes, max_nodes;
    int max_depth;
};

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static struct anchor *anchor_slot(struct anchor *tab, size_t cap, const char *name)
{
    size_t i = hash_name(name) & (cap - 1);
    while (tab[i].name && strcmp(tab[i].name, name) != 0)
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

static void anchors_clear(struct builder *b)
{
    for (size_t i = 0; i < b->acap; i++)
        free(b->anc[i].name);
    free(b->anc);
    b->anc = NULL;
    b->nanc = b->acap = 0;
}

/* anchor_set() - @name now names node @id (YAML lets a later anchor reuse a name). */
static int anchor_set(struct builder *b, const yaml_char_t *name, int id)
{
    if (!name)
        return 0;
    if ((b->nanc + 1) * 2 > b->acap) {
        size_t cap = b->acap ? 2 * b->acap : 16;
        struct anchor *tab = calloc(cap, sizeof(*tab));
        if (!tab)
            return -ENOMEM;
        for (size_t i = 0; i < b->acap; i++)
            if (b->anc[i].name)
                *anchor_slot(tab, cap, b->anc[i].name) = b->anc[i];
        free(b->anc);
        b->anc = tab;
        b->acap = cap;
    }
    struct anchor *a = anchor_slot(b->anc, b->acap, (const char *)name);
    if (!a->name) {
        if (!(a->name = strdup((const char *)name)))
            return -ENOMEM;
        b->nanc++;
    }
    a->id = id;
    return 0;
}

static int anchor_get(const struct builder *b, const yaml_char_t *name)
{
    if (!b->acap || !name)
        return 0;
    const struct anchor *a = anchor_slot(b->anc, b->acap, (const char *)name);
    return a->name ? a->id : 0;
}

static int build_fail(struct builder *b, const yaml_event_t *ev, const char *msg)
{
    char at[GS_DIAG_MSG_MAX];
    fail_at(b->proto, ev->start_mark.line + 1, ev->start_mark.column + 1, at, sizeof(at));
    return gs_diag_error(b->proto->d, "%s: %s", at, msg);
}

static int oom(const struct builder *b)
{
    return gs_diag_error_code(b->proto->d, -ENOMEM, "%s: out of memory", b->proto->path);
}

/* attach() - node @id into the open collection, or as the root. */
static int attach(struct builder *b, int id)
{
    if (!b->depth)
        return 0; /* the first node added is the document's root */
    int top = b->stack[b->depth - 1];
    yaml_node_t *n = yaml_document_get_node(&b->doc, top);
    if (n->type == YAML_SEQUENCE_NODE)
        return yaml_document_append_sequence_item(&b->doc, top, id) ? 0 : oom(b);
    if (!b->key[b->depth - 1]) {
        b->key[b->depth - 1] = id;
        return 0;
    }
    int key = b->key[b->depth - 1];
    b->key[b->depth - 1] = 0;
    return yaml_document_append_mapping_pair(&b->doc, top, key, id) ? 0 : oom(b);
}

/* tag_refused() - whether @ev's explicit tag cannot be honoured (why, into @msg): a string's
 * (!!str, or the non-specific "!") and a collection's own kind (!!map, !!seq) are; any other
 * (!!binary, !!int, a local !thing) would be dropped, so it is refused rather than silently
 * ignored. */
static int tag_refused(const yaml_event_t *ev, char *msg, size_t size)
{
    const char *tag =
        (const char *)(ev->type == YAML_SCALAR_EVENT           ? ev->data.scalar.tag
                       : ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.tag
                                                               : ev->data.mapping_start.tag);
    const char *own = ev->type == YAML_SCALAR_EVENT           ? YAML_STR_TAG
                      : ev->type == YAML_SEQUENCE_START_EVENT ? YAML_SEQ_TAG
                                                              : YAML_MAP_TAG;
    if (!tag || !strcmp(tag, own) || (ev->type == YAML_SCALAR_EVENT && !strcmp(tag, "!")))
        return 0;
    int core = !strncmp(tag, "tag:yaml.org,2002:", 18);
    snprintf(msg, size,
             "YAML tag %s%.64s is not read (only !!str, !!seq and !!map are): write the value "
             "without it",
             core ? "!!" : "", core ? tag + 18 : tag);
    return 1;
}

/* add_node() - a scalar, or the start of a collection, from @ev; into *@id. */
static int add_node(struct builder *b, const yaml_event_t *ev, int *id)
{
    const yaml_char_t *anchor = NULL;
    char msg[96];
    if (++b->nodes > b->max_nodes) {
        snprintf(msg, sizeof(msg), "document has more than %zu YAML nodes", b->max_nodes);
        return build_fail(b, ev, msg);
    }
    char why[160];
    if (tag_refused(ev, why, sizeof(why)))
        return build_fail(b, ev, why);
    if (ev->type == YAML_SCALAR_EVENT) {
        /* "!!str 5" and "! 5" are the text "5": read as if quoted */
        yaml_scalar_style_t style =
            ev->data.scalar.tag ? YAML_SINGLE_QUOTED_SCALAR_STYLE : ev->data.scalar.style;
        *id = yaml_document_add_scalar(&b->doc, NULL, ev->data.scalar.value,
                                       (int)ev->data.scalar.length, style);
        anchor = ev->data.scalar.anchor;
    } else if (ev->type == YAML_SEQUENCE_START_EVENT) {
        *id = yaml_document_add_sequence(&b->doc, NULL, ev->data.sequence_start.style);
        anchor = ev->data.sequence_start.anchor;
    } else {
        *id = yaml_document_add_mapping(&b->doc, NULL, ev->data.mapping_start.style);
        anchor = ev->data.mapping_start.anchor;
    }
    if (!*id)
        return oom(b);
    yaml_node_t *n = yaml_document_get_node(&b->doc, *id);
    n->start_mark = ev->start_mark; /* the document API leaves marks zero */
    n->end_mark = ev->end_mark;
    if (anchor_set(b, anchor, *id))
        return oom(b);
    return attach(b, *id);
}

static int push(struct builder *b, const yaml_event_t *ev, int id)
{
    char msg[64];
    if (b->depth >= (size_t)b->max_depth) {
        snprintf(msg, sizeof(msg), "nested deeper than %d levels", b->max_depth);
        return build_fail(b, ev, msg);
    }
    if (b->depth == b->cap) {
        size_t cs = b->cap, ck = b->cap;
        int *st = gs_grow(b->stack, &cs, b->depth + 1, sizeof(*st), 16), *k;
        if (st)
            b->stack = st;
        k = st ? gs_grow(b->key, &ck, b->depth + 1, sizeof(*k), 16) : NULL;
        if (!k)
            return oom(b);
        b->key = k;
        b->cap = cs;
    }
    b->stack[b->depth] = id;
    b->key[b->depth++] = 0;
    return 0;
}

/* on_event() - one event into the document being built; a finished document goes to @fn. */
static int on_event(struct builder *b, const yaml_event_t *ev, gs__yaml_doc_fn fn, void *arg)
{
    int id = 0, rc = 0;
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (!yaml_document_initialize(&b->doc, NULL, NULL, NULL, 1, 1))
            return oom(b);
        b->open = true;
        b->nodes = b->depth = 0;
        return 0;
    case YAML_SCALAR_EVENT:
        return add_node(b, ev, &id);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        rc = add_node(b, ev, &id);
        return rc ? rc : push(b, ev, id);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        yaml_document_get_node(&b->doc, b->stack[--b->depth])->end_mark = ev->end_mark;
        return 0;
    case YAML_ALIAS_EVENT:
        if (!(id = anchor_get(b, ev->data.alias.anchor)))
            return build_fail(b, ev, "YAML error: found undefined alias");
        return attach(b, id);
    case YAML_DOCUMENT_END_EVENT: {
        yaml_node_t *root = yaml_document_get_root_node(&b->doc);
        if (root) {
            struct gs__yctx c = *b->proto;
            c.doc = &b->doc;
            c.budget = WALK_BUDGET_MIN + 4 * b->nodes;
            rc = fn(&c, root, arg);
        }
        yaml_document_delete(&b->doc);
        b->open = false;
        anchors_clear(b);
        return rc;
    }
    default:
        return 0;
    }
}

int gs__yaml_stream_documents(const struct gs__yctx *proto, const unsigned char *buf, size_t len,
                              int max_depth, size_t max_nodes, gs__yaml_doc_fn fn, void *arg)
{
    yaml_parser_t ps;
    struct builder b = {.proto = proto, .max_nodes = max_nodes, .max_depth = max_depth};
    int rc = 0;
    if (!yaml_parser_initialize(&ps))
        return gs_diag_error_code(proto->d, -ENOMEM, "%s: out of memory", proto->path);
    yaml_parser_set_input_string(&ps, buf, len);
    for (bool end = false; !rc && !end;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&ps, &ev)) {
            rc = yaml_fail(proto, &ps, buf, len);
            break;
        }
        end = ev.type == YAML_STREAM_END_EVENT;
        rc = on_event(&b, &ev, fn, arg);
        yaml_event_delete(&ev);
    }
    if (b.open)
        yaml_document_delete(&b.doc);
    anchors_clear(&b);
    free(b.stack);
    free(b.key);
    yaml_parser_delete(&ps);
    return rc;
}

void gs__json_real_text(double v, char *buf, size_t size)
{
    char e[32];
    int p = 1; /* significant digits: the fewest that read back as @v */
    while (p < 17 && (snprintf(e, sizeof(e), "%.*e", p - 1, v), strtod(e, NULL) != v))
        p++;
    snprintf(e, sizeof(e), "%.*e", p - 1, v);
    int x = atoi(strchr(e, 'e') + 1), decimals = p - 1 - x;
    double a = v < 0 ? -v : v;
    if (a != 0 && (a < 1e-6 || a >= 1e21)) /* Go's encoding/json switches to an exponent there */
        snprintf(buf, size, "%s", e);
    else
        snprintf(buf, size, "%.*f", decimals > 0 ? decimals : 0, v);
}

/* The scalar libyaml reads from jansson's compact text of @v: a string double-quoted, a number,
 * true, false or null plain. Return: its node id; 0 out of memory. */
static int json_scalar(yaml_document_t *doc, const json_t *v)
{
    char num[32];
    const char *s = num;
    int len = -1;
    yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;
    if (json_is_string(v)) {
        s = json_string_value(v);
        len = (int)json_string_length(v);
        style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    } else if (json_is_integer(v)) {
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    } else if (json_is_real(v)) {
        /* a real stays one: 30.0 or 1e3 is no integer to Go's decoder (an int64 field refuses
         * it), though its shortest digits, "30", would read as one */
        gs__json_real_text(json_real_value(v), num, sizeof(num));
        size_t n = strlen(num);
        if (!strpbrk(num, ".eE") && n + 2 < sizeof(num))
            memcpy(num + n, ".0", 3);
    } else {
        s = json_is_true(v) ? "true" : json_is_false(v) ? "false" : "null";
    }
    return yaml_document_add_scalar(doc, NULL, (const yaml_char_t *)s, len, style);
}

/* A limit of @b passed: what the event builder says, without a position. */
static int json_fail(const struct builder *b, const char *what, long long limit, const char *unit)
{
    return gs_diag_error(b->proto->d, "%s: %s %lld %s", b->proto->path, what, limit, unit);
}

/* from_json() - @v into @b's document, inside @depth collections; into *@id. */
static int from_json(struct builder *b, const json_t *v, size_t depth, int *id)
{
    if (++b->nodes > b->max_nodes)
        return json_fail(b, "document has more than", (long long)b->max_nodes, "YAML nodes");
    if (!json_is_object(v) && !json_is_array(v))
        return (*id = json_scalar(&b->doc, v)) ? 0 : oom(b);
    if (depth >= (size_t)b->max_depth)
        return json_fail(b, "nested deeper than", b->max_depth, "levels");
    *id = json_is_object(v) ? yaml_document_add_mapping(&b->doc, NULL, YAML_FLOW_MAPPING_STYLE)
                            : yaml_document_add_sequence(&b->doc, NULL, YAML_FLOW_SEQUENCE_STYLE);
    int rc = *id ? 0 : oom(b), k, item;
    size_t i;
    const char *key;
    const json_t *x;
    json_array_foreach(v, i, x)
    {
        if (!rc && !(rc = from_json(b, x, depth + 1, &item)) &&
            !yaml_document_append_sequence_item(&b->doc, *id, item))
            rc = oom(b);
    }
    json_object_foreach((json_t *)v, key, x)
    {
        if (rc)
            break;
        if (++b->nodes > b->max_nodes)
            rc = json_fail(b, "document has more than", (long long)b->max_nodes, "YAML nodes");
        else if (!(k = yaml_document_add_scalar(&b->doc, NULL, (const yaml_char_t *)key, -1,
                                                YAML_DOUBLE_QUOTED_SCALAR_STYLE)))
            rc = oom(b);
        else if (!(rc = from_json(b, x, depth + 1, &item)) &&
                 !yaml_document_append_mapping_pair(&b->doc, *id, k, item))
            rc = oom(b);
    }
    return rc;
}

int gs__yaml_json_document(const struct gs__yctx *proto, const json_t *v, int max_depth,
                           size_t max_nodes, gs__yaml_doc_fn fn, void *arg)
{
    struct builder b = {.proto = proto, .max_nodes = max_nodes, .max_depth = max_depth};
    int id = 0;
    if (!yaml_document_initialize(&b.doc, NULL, NULL, NULL, 1, 1))
        return oom(&b);
    int rc = from_json(&b, v, 0, &id);
    if (!rc) {
        struct gs__yctx c = *proto;
        c.doc = &b.doc;
        c.budget = WALK_BUDGET_MIN + 4 * b.nodes;
        rc = fn(&c, yaml_document_get_root_node(&b.doc), arg);
    }
    yaml_document_delete(&b.doc);
    return rc;
}

/* A plain scalar @n that the core schema types a float and JSON can carry (not .inf, .nan or
 * 1e999) into *@x. */
static bool json_float(const yaml_node_t *n, double *x)
{
    const char *type = gs__yaml_scalar_type(n);
    char *end = NULL;
    *x = type && !strcmp(type, "float") ? strtod(gs__yaml_str(n), &end) : NAN;
    return end && !*end && isfinite(*x);
}

/* A plain YAML scalar as JSON: numbers, booleans and null typed (YAML 1.2's core schema, where
 * kubectl's YAML 1.1 agrees), the rest strings; a float JSON cannot carry (.inf, .nan, 1e999)
 * stays text here, gs__yaml_manifest() refuses it. */
static json_t *yaml_scalar(const yaml_node_t *n)
{
    static const char *const yes[] = {"true", "True", "TRUE"}, *const no[] = {"false", "False",
                                                                              "FALSE"};
    const char *s = (const char *)n->data.scalar.value;
    if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (*s && !*end && !errno)
            return json_integer(v);
        for (int i = 0; i < 3; i++)
            if (!strcmp(s, yes[i]) || !strcmp(s, no[i]))
                return json_boolean(!strcmp(s, yes[i]));
        if (gs__yaml_is_null(n))
            return json_null();
        double x;
        if (json_float(n, &x))
            return json_real(x);
    }
    return json_string(s);
}

/*
 * A file mode (a volume's defaultMode, an item's mode) written in octal as the Kubernetes docs
 * write it (`defaultMode: 0400`): kubectl's YAML 1.1 reads it as the octal number (256), and so
 * it is read here, under that key alone. Return: the mode, or -1 when @n is not one.
 */
static long long octal_mode(const char *key, const yaml_node_t *n)
{
    const char *s =
        n && n->type == YAML_SCALAR_NODE && gs__yaml_is_plain(n) ? gs__yaml_str(n) : NULL;
    if (!key || !s || (strcmp(key, "mode") && strcmp(key, "defaultMode")) || s[0] != '0' || !s[1] ||
        strspn(s, "01234567") != strlen(s) || strlen(s) > 12)
        return -1;
    return strtoll(s, NULL, 8);
}

/* YAML node to JSON; depth-bounded, so an aliased cycle stops. NULL on a bad shape. */
json_t *gs__yaml_json(yaml_document_t *doc, yaml_node_t *n, int depth)
{
    if (!n || depth > 32)
        return NULL;
    if (n->type == YAML_SCALAR_NODE)
        return yaml_scalar(n);
    json_t *out = n->type == YAML_MAPPING_NODE ? json_object() : json_array();
    if (n->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top;
             i++)
            if (json_array_append_new(
                    out, gs__yaml_json(doc, yaml_document_get_node(doc, *i), depth + 1)))
                goto bad;
        return out;
    }
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key),
                    *v = yaml_document_get_node(doc, p->value);
        long long mode = k ? octal_mode(gs__yaml_str(k), v) : -1;
        if (!k || k->type != YAML_SCALAR_NODE ||
            json_object_set_new(out, (const char *)k->data.scalar.value,
                                mode >= 0 ? json_integer(mode) : gs__yaml_json(doc, v, depth + 1)))
            goto bad;
    }
    return out;
bad:
    json_decref(out);
    return NULL;
}

/*
 * A plain scalar kubectl (YAML 1.1, as sigs.k8s.io/yaml reads it) types otherwise than JSON's
 * reading would: a boolean word (yes, no, on, off, y, n) or an integer in another base or with
 * '_' (010 is octal 8 there, 0x10 16, 1_000 1000). Return: what to say, or NULL when none.
 */
static const char *yaml11_only(const char *s)
{
    static const char *const words[] = {"y",  "Y",  "yes", "Yes", "YES", "n",   "N",   "no",
                                        "No", "NO", "on",  "On",  "ON",  "off", "Off", "OFF"};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (!strcmp(s, words[i]))
            return "is a boolean to kubectl (YAML 1.1), not the text: quote it to mean the text";
    const char *d = s + (*s == '-' || *s == '+');
    size_t digits = strspn(d, "0123456789_"), alnum = strspn(d, "0123456789_abcdefABCDEFxXoO");
    int num = d[0] >= '0' && d[0] <= '9' && !d[alnum];
    if (num && d[0] == '0' && d[1] && !d[digits] && strpbrk(d, "89"))
        return "is text to kubectl (YAML 1.1 reads a leading 0 as octal, which has no 8 or 9): "
               "quote it for the text, or write the number without the leading 0";
    if (num && ((d[0] == '0' && d[1] && (!d[digits] || strchr("xXbBoO", d[1]))) ||
                (!d[digits] && strchr(d, '_'))))
        return "is an integer to kubectl (YAML 1.1 reads 010 as 8, 0x10 as 16, 1_000 as "
               "1000): quote it for the text, or write the number in decimal";
    return NULL;
}

/* Walk @n's tree against *@left (each node costs 2 plus its scalar's bytes, each key its bytes;
 * aliases followed, so the budget bounds the JSON made), refusing what gs__yaml_manifest() says;
 * @key: the mapping key @n is the value of (of its list, for a list's item), NULL at the root. */
static int manifest_walk(struct gs__yctx *c, yaml_node_t *n, const char *key, int depth,
                         size_t *left, int dups)
{
    size_t cost = 2 + (n && n->type == YAML_SCALAR_NODE ? n->data.scalar.length : 0);
    if (!n || depth > GS__YAML_MANIFEST_DEPTH || *left < cost)
        return gs__yaml_err(c, n,
                            "more than %d levels deep, or aliases that repeat more than the "
                            "document holds",
                            GS__YAML_MANIFEST_DEPTH);
    *left -= cost;
    const char *why = NULL;
    char buf[GS__YAML_SHOW_BUF];
    if (n->type == YAML_SCALAR_NODE && !gs__yaml_str(n))
        return gs__yaml_err(c, n, "a NUL character (\\0) in a string: Kubernetes refuses it");
    char at[192]; /* the field, named as the API server names it ("metadata.labels.a") */
    const char *type = n->type == YAML_SCALAR_NODE ? gs__yaml_scalar_type(n) : NULL;
    double x;
    if (n->type == YAML_SCALAR_NODE && gs__yaml_is_plain(n) && octal_mode(key, n) < 0 &&
        (why = yaml11_only(gs__yaml_str(n)))) {
        gs__yaml_path(c, n, at, sizeof(at));
        return gs__yaml_err(c, n, "%s%s%s %s", at, *at ? ": " : "", gs__yaml_show(n, buf), why);
    }
    if (type && !strcmp(type, "float") && !json_float(n, &x)) {
        gs__yaml_path(c, n, at, sizeof(at));
        return gs__yaml_err(c, n,
                            "%s%s%s is a float JSON cannot carry (kubectl refuses it too): quote "
                            "it for the text",
                            at, *at ? ": " : "", gs__yaml_show(n, buf));
    }
    int rc = 0;
    if (n->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *i = n->data.sequence.items.start;
             !rc && i < n->data.sequence.items.top; i++)
            rc = manifest_walk(c, yaml_document_get_node(c->doc, *i), key, depth + 1, left, dups);
    } else if (n->type == YAML_MAPPING_NODE) {
        json_t *seen = dups ? json_object() : NULL; /* keys given twice: its reader's to say */
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
             !rc && p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *kn = yaml_document_get_node(c->doc, p->key);
            const char *k = gs__yaml_str(kn);
            if (dups && !seen)
                rc = -ENOMEM;
            else if (!k)
                rc = gs__yaml_err(c, kn, "a mapping key must be a scalar without a NUL inside");
            else if (gs__yaml_is_plain(kn) && !strcmp(k, "<<")) /* else a key named "<<" */
                rc = gs__yaml_err(c, kn,
                                  "a YAML merge key (<<) is not read: write its keys out here");
            else if (dups && json_object_get(seen, k))
                rc = gs__yaml_err(c, kn, "key \"%.64s\" given twice in one mapping", k);
            else if (*left < kn->data.scalar.length)
                rc = gs__yaml_err(c, kn, "aliases that repeat more than the document holds");
            else if (dups && json_object_set_new(seen, k, json_null()))
                rc = -ENOMEM;
            else {
                *left -= kn->data.scalar.length;
                rc = manifest_walk(c, yaml_document_get_node(c->doc, p->value), k, depth + 1, left,
                                   dups);
            }
        }
        json_decref(seen);
    }
    return rc;
}

int gs__yaml_manifest_check(struct gs__yctx *c, yaml_node_t *root, size_t *left)
{
    return manifest_walk(c, root, NULL, 0, left, 0);
}

int gs__yaml_manifest(struct gs__yctx *c, yaml_node_t *root, size_t *left, json_t **out)
{
    *out = NULL;
    int rc = manifest_walk(c, root, NULL, 0, left, 1);
    if (!rc && !(*out = gs__yaml_json(c->doc, root, 0)))
        rc = gs_diag_error_code(c->d, -ENOMEM, "%s: out of memory", c->path);
    return rc;
}
