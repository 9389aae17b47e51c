/*
 * KubeSchedulerConfiguration loader; the contract is in gpusched/config.h.
 *
 * Two passes over the bytes. The event pass checks syntax and nesting depth only: libyaml 0.2.5's
 * document loader has no depth limit of its own. The document pass then walks a tree, which makes
 * "disabled before enabled" and finding a profile's schedulerName before its plugins simple.
 * The walk descends only the interpreted levels (a fixed depth), so an aliased or even cyclic node
 * (libyaml registers an anchor before the collection's children) cannot recurse without end; a
 * visit budget bounds the work aliases can multiply.
 */
#include "gpusched/config.h"

#include "gpusched/diag.h"
#include "gpusched/sched.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define API_GROUP    "kubescheduler.config.k8s.io/"
#define KSC_KIND     "KubeSchedulerConfiguration"
#define DEFAULT_NAME "default-scheduler"
#define WHERE_MAX    160 /* "profiles[N].plugins.postFilter.disabled[N]" with room to spare */
#define SHOW_MAX     64  /* bytes of a user's scalar quoted back in a message */
#define SHOW_BUF     (SHOW_MAX + 8)
/* Visits the walk may make per document beyond 4 per node: far above what an alias-free file
 * needs, small enough that a file reusing one subtree a million times fails fast. */
#define WALK_BUDGET_MIN (1u << 20)

/* The interpreted keys come first so their index is the enum value. */
enum { TOP_API_VERSION, TOP_KIND, TOP_PROFILES };
static const char *const top_keys[] = {
    "apiVersion",
    "kind",
    "profiles",
    "parallelism",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "leaderElection",
    "clientConnection",
    "healthzBindAddress",
    "metricsBindAddress",
    "enableProfiling",
    "enableContentionProfiling",
    "extenders",
    "delayCacheUntilActive",
};

enum { PROFILE_NAME, PROFILE_PLUGINS };
static const char *const profile_keys[] = {
    "schedulerName",
    "plugins",
    "pluginConfig",
    "percentageOfNodesToScore",
};

/* Every extension point kube-scheduler has; gs_ext_point_find() tells which gpusched has. */
static const char *const point_keys[] = {
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",   "score",
    "reserve",    "permit",    "preBind",   "bind",   "postBind",   "multiPoint",
};

enum { LIST_ENABLED, LIST_DISABLED };
static const char *const list_keys[] = {"enabled", "disabled"};

enum { ENTRY_NAME, ENTRY_WEIGHT };
static const char *const entry_keys[] = {"name", "weight"};

#define NKEYS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* One document being walked. */
struct kctx {
    const char *path;
    struct gs_diag *d;
    yaml_document_t *doc;
    size_t budget; /* visits left; see WALK_BUDGET_MIN */
    bool quiet;    /* inside a profile that is not the one loaded: its warnings concern no one */
};

/* What the whole file has given so far. */
struct sel {
    const char *want;        /* schedulerName asked for, NULL = first */
    struct gs_profile *kept; /* the selected profile, once found */
    size_t kept_line;
    int nksc; /* KubeSchedulerConfiguration documents seen */
};

/* One extension point of one profile. */
struct point {
    const char *name; /* as the file spells it */
    int ep;           /* enum gs_ext_point, or negative when gpusched has no such point */
    const char *where;
    struct gs_profile *p;
};

/* A profile, or its plugins mapping, being walked. */
struct scope {
    const char *where;
    struct gs_profile *p;
};

struct top {
    yaml_node_t *api, *kind, *profiles;
};

struct lists {
    yaml_node_t *enabled, *disabled;
};

struct entry {
    yaml_node_t *name, *weight;
};

typedef int (*field_fn)(struct kctx *c, int field, yaml_node_t *val, void *arg);

static int err_at(struct kctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void warn_at(struct kctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int err_at(struct kctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    char buf[GS_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return gs_diag_error(c->d, "%s:%zu:%zu: %s", c->path, n->start_mark.line + 1,
                         n->start_mark.column + 1, buf);
}

static void warn_at(struct kctx *c, const yaml_node_t *n, const char *fmt, ...)
{
    char buf[GS_DIAG_MSG_MAX];
    va_list ap;
    if (c->quiet)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    gs_diag_warn(c->d, "%s:%zu:%zu: %s", c->path, n->start_mark.line + 1, n->start_mark.column + 1,
                 buf);
}

/*
 * label() - format the dotted path of the node being walked ("profiles[0].plugins.score"), for
 * messages only: a label cut at WHERE_MAX loses nothing that matters. (Through vsnprintf so that
 * GCC does not warn about the cut at -O3.)
 */
static void label(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void label(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

static const char *kind_name(const yaml_node_t *n)
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

/*
 * show() - @n for a message: a scalar quoted, cut to SHOW_MAX bytes on a UTF-8 boundary, with
 * control bytes and quotes replaced so a hostile file cannot garble the terminal; otherwise its
 * kind. @buf: SHOW_BUF bytes.
 */
static const char *show(const yaml_node_t *n, char *buf)
{
    if (n->type != YAML_SCALAR_NODE)
        return kind_name(n);
    const unsigned char *v = n->data.scalar.value;
    size_t len = n->data.scalar.length, lim = len > SHOW_MAX ? SHOW_MAX : len, k = 0;
    while (lim < len && lim > 0 && (v[lim] & 0xC0) == 0x80)
        lim--;
    buf[k++] = '"';
    for (size_t i = 0; i < lim; i++)
        buf[k++] = v[i] < 0x20 || v[i] == 0x7f || v[i] == '"' ? '?' : (char)v[i];
    if (lim < len) {
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k++] = '"';
    buf[k] = '\0';
    return buf;
}

/* str_of() - a scalar's text, or NULL for a non-scalar or one with a NUL inside ("\0"). */
static const char *str_of(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE)
        return NULL;
    const char *s = (const char *)n->data.scalar.value;
    return strlen(s) == n->data.scalar.length ? s : NULL;
}

/* is_null() - a plain null scalar: kube-scheduler decodes `key:` with no value as absent. */
static bool is_null(const yaml_node_t *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    const char *s = str_of(n);
    if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    for (int i = 0; i < NKEYS(nulls); i++)
        if (strcmp(s, nulls[i]) == 0)
            return true;
    return false;
}

static int type_error(struct kctx *c, const yaml_node_t *n, const char *where, const char *want)
{
    char buf[SHOW_BUF];
    if (n->type == YAML_SCALAR_NODE)
        return err_at(c, n, "%s must be %s, not the scalar %s", where, want, show(n, buf));
    return err_at(c, n, "%s must be %s, not %s", where, want, kind_name(n));
}

static int spend(struct kctx *c, const yaml_node_t *n)
{
    if (c->budget == 0)
        return err_at(c, n, "document too large once its YAML aliases are expanded");
    c->budget--;
    return 0;
}

static yaml_node_t *child(struct kctx *c, int id)
{
    return yaml_document_get_node(c->doc, id);
}

/* near() - edit distance of @a (@la bytes) and @b when it is at most 2, else 3: all we need. */
static int near(const unsigned char *a, size_t la, const char *b)
{
    int row[40];
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

/* key_index() - index of key @k in @known; otherwise an error suggesting the nearest key. */
static int key_index(struct kctx *c, const yaml_node_t *k, const char *const *known, int n,
                     const char *where)
{
    char buf[SHOW_BUF];
    if (k->type != YAML_SCALAR_NODE)
        return err_at(c, k, "a key in %s must be a scalar, not %s", where, kind_name(k));
    const char *s = str_of(k);
    int best = -1, best_dist = 3;
    for (int i = 0; i < n; i++) {
        if (s && strcmp(s, known[i]) == 0)
            return i;
        int dist = near(k->data.scalar.value, k->data.scalar.length, known[i]);
        if (dist < best_dist) {
            best = i;
            best_dist = dist;
        }
    }
    if (best >= 0)
        return err_at(c, k, "unknown field %s in %s (did you mean \"%s\"?)", show(k, buf), where,
                      known[best]);
    return err_at(c, k, "unknown field %s in %s", show(k, buf), where);
}

/*
 * each_field() - check every key of mapping @map (a null scalar counts as empty) against @known,
 * each at most once, and pass each value to @fn with the key's index.
 */
static int each_field(struct kctx *c, yaml_node_t *map, const char *const *known, int n,
                      const char *where, field_fn fn, void *arg)
{
    char buf[SHOW_BUF];
    uint32_t seen = 0; /* every table above has fewer than 32 keys */
    if (is_null(map))
        return 0;
    if (map->type != YAML_MAPPING_NODE)
        return type_error(c, map, where, "a mapping");
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = child(c, pr->key), *v = child(c, pr->value);
        int rc = spend(c, map);
        if (rc)
            return rc;
        if (!k || !v)
            return err_at(c, map, "malformed mapping in %s", where);
        int i = key_index(c, k, known, n, where);
        if (i < 0)
            return i;
        if (seen & (1u << i))
            return err_at(c, k, "duplicate field %s in %s", show(k, buf), where);
        seen |= 1u << i;
        rc = fn(c, i, v, arg);
        if (rc)
            return rc;
    }
    return 0;
}

/* map_get() - the value of key @key in mapping @map into *@out (NULL when absent). */
static int map_get(struct kctx *c, yaml_node_t *map, const char *key, yaml_node_t **out)
{
    *out = NULL;
    if (map->type != YAML_MAPPING_NODE)
        return 0;
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = child(c, pr->key);
        int rc = spend(c, map);
        if (rc)
            return rc;
        const char *s = k ? str_of(k) : NULL;
        if (s && strcmp(s, key) == 0) {
            *out = child(c, pr->value);
            return 0;
        }
    }
    return 0;
}

/* parse_int() - a decimal integer, saturated to the long long range; false when not one. */
static bool parse_int(const char *s, long long *v)
{
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

/*
 * parse_weight() - an entry's weight. kube-scheduler decodes it as an integer everywhere but uses
 * it only at score, so only there is the range checked and the value kept (*@out = 1 elsewhere).
 */
static int parse_weight(struct kctx *c, const yaml_node_t *n, const char *where, bool at_score,
                        int *out)
{
    char buf[SHOW_BUF];
    const char *s = str_of(n);
    long long v = 0;
    bool is_int = s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && parse_int(s, &v);
    if (is_int && !at_score) {
        *out = 1;
        return 0;
    }
    if (is_int && v >= 1 && v <= GS_WEIGHT_MAX) {
        *out = (int)v;
        return 0;
    }
    if (at_score)
        return err_at(c, n, "%s.weight must be an integer 1..%d, not %s", where, GS_WEIGHT_MAX,
                      show(n, buf));
    return err_at(c, n, "%s.weight must be an integer, not %s", where, show(n, buf));
}

static int entry_field(struct kctx *c, int field, yaml_node_t *val, void *arg)
{
    (void)c; /* a field_fn; this level needs no context */
    struct entry *e = arg;
    if (field == ENTRY_NAME)
        e->name = val;
    else
        e->weight = val;
    return 0;
}

/* parse_entry() - a {name, weight} plugin entry; on success e->name is a non-empty string. */
static int parse_entry(struct kctx *c, yaml_node_t *n, const char *where, struct entry *e)
{
    e->name = e->weight = NULL;
    if (n->type != YAML_MAPPING_NODE)
        return type_error(c, n, where, "a mapping");
    int rc = each_field(c, n, entry_keys, NKEYS(entry_keys), where, entry_field, e);
    if (rc)
        return rc;
    if (!e->name)
        return err_at(c, n, "%s has no name", where);
    char buf[SHOW_BUF];
    const char *s = str_of(e->name);
    if (!s || !*s || is_null(e->name))
        return err_at(c, e->name, "%s.name must be a plugin name, not %s", where,
                      show(e->name, buf));
    return 0;
}

/* points_str() - the extension points in @mask, comma-separated, into @buf. */
static const char *points_str(unsigned mask, char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int ep = 0; ep < GS_EP_COUNT && k < size; ep++)
        if (mask & (1u << ep))
            k += (size_t)snprintf(buf + k, size - k, "%s%s", k ? ", " : "",
                                  gs_ext_point_name((enum gs_ext_point)ep));
    return buf;
}

static int enable_entry(struct kctx *c, const struct point *pt, const struct entry *e,
                        const char *where)
{
    char buf[SHOW_BUF], eps[128];
    int w = 1, rc = e->weight ? parse_weight(c, e->weight, where, pt->ep == GS_EP_SCORE, &w) : 0;
    if (rc)
        return rc;
    if (pt->ep < 0) {
        warn_at(c, e->name, "plugin %s (%s): gpusched has no %s extension point; ignored",
                show(e->name, buf), pt->name, pt->name);
        return 0;
    }
    int id = gs_plugin_find(str_of(e->name));
    if (id < 0) {
        warn_at(c, e->name, "plugin %s (%s) is not built in this version of gpusched; ignored",
                show(e->name, buf), pt->name);
        return 0;
    }
    unsigned mask = gs_plugin_points(id);
    if (!(mask & (1u << pt->ep)))
        return err_at(c, e->name, "plugin %s is listed at %s but implements only %s",
                      show(e->name, buf), pt->name, points_str(mask, eps, sizeof(eps)));
    struct gs_diag why;
    gs_diag_init(&why);
    rc = gs_profile_enable(pt->p, (enum gs_ext_point)pt->ep, id, w, &why);
    if (rc == -ENOMEM)
        return gs_diag_error_code(c->d, -ENOMEM, "%s: out of memory", c->path);
    /* -E2BIG (too many plugins at one point) is a property of the file: report it as bad input. */
    return rc ? err_at(c, e->name, "%s", why.msg) : 0;
}

static int disable_entry(struct kctx *c, const struct point *pt, const struct entry *e,
                         const char *where)
{
    int w, rc = e->weight ? parse_weight(c, e->weight, where, false, &w) : 0;
    if (rc || pt->ep < 0)
        return rc;
    const char *name = str_of(e->name);
    if (strcmp(name, "*") == 0) {
        gs_profile_disable(pt->p, (enum gs_ext_point)pt->ep, -1);
        return 0;
    }
    /* A name gpusched does not build cannot have been enabled, so there is nothing to remove and
     * nothing worth a warning. */
    int id = gs_plugin_find(name);
    if (id >= 0)
        gs_profile_disable(pt->p, (enum gs_ext_point)pt->ep, id);
    return 0;
}

static int walk_list(struct kctx *c, yaml_node_t *seq, const struct point *pt, int list)
{
    char where[WHERE_MAX];
    label(where, sizeof(where), "%s.%s", pt->where, list_keys[list]);
    if (!seq || is_null(seq))
        return 0;
    if (seq->type != YAML_SEQUENCE_NODE)
        return type_error(c, seq, where, "a sequence");
    int i = 0;
    const char *seen[64]; /* names listed so far: kube-scheduler rejects a plugin listed twice */
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++, i++) {
        char ew[WHERE_MAX], buf[SHOW_BUF];
        struct entry e;
        yaml_node_t *n = child(c, *it);
        int rc = spend(c, seq);
        if (rc)
            return rc;
        if (!n)
            return err_at(c, seq, "malformed sequence in %s", where);
        label(ew, sizeof(ew), "%s[%d]", where, i);
        rc = parse_entry(c, n, ew, &e);
        for (int k = 0; !rc && k < i && k < 64; k++)
            if (strcmp(seen[k], str_of(e.name)) == 0)
                rc = err_at(c, e.name, "plugin %s is listed twice in %s", show(e.name, buf), where);
        if (!rc && i < 64)
            seen[i] = str_of(e.name);
        if (!rc)
            rc = list == LIST_ENABLED ? enable_entry(c, pt, &e, ew) : disable_entry(c, pt, &e, ew);
        if (rc)
            return rc;
    }
    return 0;
}

static int lists_field(struct kctx *c, int field, yaml_node_t *val, void *arg)
{
    (void)c; /* a field_fn; this level needs no context */
    struct lists *l = arg;
    if (field == LIST_ENABLED)
        l->enabled = val;
    else
        l->disabled = val;
    return 0;
}

static int plugins_field(struct kctx *c, int field, yaml_node_t *val, void *arg)
{
    const struct scope *parent = arg;
    char where[WHERE_MAX];
    struct lists l = {NULL, NULL};
    label(where, sizeof(where), "%s.%s", parent->where, point_keys[field]);
    struct point pt = {point_keys[field], gs_ext_point_find(point_keys[field]), where, parent->p};
    int rc = each_field(c, val, list_keys, NKEYS(list_keys), where, lists_field, &l);
    /* Disabled first, as kube-scheduler merges them: "disable all, then enable these" works. */
    if (!rc)
        rc = walk_list(c, l.disabled, &pt, LIST_DISABLED);
    if (!rc)
        rc = walk_list(c, l.enabled, &pt, LIST_ENABLED);
    return rc;
}

static int profile_field(struct kctx *c, int field, yaml_node_t *val, void *arg)
{
    const struct scope *prof = arg;
    char where[WHERE_MAX];
    if (field != PROFILE_PLUGINS) /* schedulerName is read before; the rest is not interpreted */
        return 0;
    label(where, sizeof(where), "%s.plugins", prof->where);
    struct scope parent = {where, prof->p};
    return each_field(c, val, point_keys, NKEYS(point_keys), where, plugins_field, &parent);
}

/* profile_name() - the schedulerName of profile mapping @n, or DEFAULT_NAME when absent. */
static int profile_name(struct kctx *c, yaml_node_t *n, const char **name, yaml_node_t **at)
{
    int rc = map_get(c, n, profile_keys[PROFILE_NAME], at);
    if (rc)
        return rc;
    *name = *at ? str_of(*at) : DEFAULT_NAME;
    if (*at && (!*name || !**name || is_null(*at)))
        return type_error(c, *at, "schedulerName", "a non-empty string");
    /* a name goes into reports and CSV columns: letters, digits, '-', '_', '.' only */
    for (const char *p = *at ? *name : ""; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.'))
            return err_at(c, *at, "schedulerName may hold letters, digits, '-', '_' and '.' only");
    if (!*at) /* where to point at for a duplicate default name */
        *at = n;
    return 0;
}

static int load_profile(struct kctx *c, yaml_node_t *n, int idx, struct sel *s)
{
    char where[WHERE_MAX], buf[SHOW_BUF];
    const char *name;
    yaml_node_t *at;
    label(where, sizeof(where), "profiles[%d]", idx);
    if (n->type != YAML_MAPPING_NODE)
        return type_error(c, n, where, "a mapping");
    int rc = profile_name(c, n, &name, &at);
    if (rc)
        return rc;
    if (s->kept && strcmp(name, gs_profile_name(s->kept)) == 0)
        return err_at(c, at, "a second profile named %s (the first is at line %zu)",
                      at->type == YAML_SCALAR_NODE ? show(at, buf) : "\"" DEFAULT_NAME "\"",
                      s->kept_line);
    bool selected = !s->kept && (!s->want || strcmp(name, s->want) == 0);
    struct gs_profile *p;
    if (gs_profile_new_default(name, &p, c->d) < 0)
        return gs_diag_error_code(c->d, -ENOMEM, "%s: out of memory", c->path);
    if (strcmp(gs_profile_name(p), name) != 0) { /* the profile stores a bounded name */
        rc = err_at(c, at, "schedulerName %s is longer than %zu bytes", show(at, buf),
                    strlen(gs_profile_name(p)));
        gs_profile_free(p);
        return rc;
    }
    bool quiet = c->quiet;
    struct scope prof = {where, p};
    c->quiet = !selected;
    rc = each_field(c, n, profile_keys, NKEYS(profile_keys), where, profile_field, &prof);
    c->quiet = quiet;
    if (rc || !selected) {
        gs_profile_free(p);
        return rc;
    }
    s->kept = p;
    s->kept_line = n->start_mark.line + 1;
    return 0;
}

static int load_profiles(struct kctx *c, yaml_node_t *seq, struct sel *s)
{
    if (!seq || is_null(seq))
        return 0;
    if (seq->type != YAML_SEQUENCE_NODE)
        return type_error(c, seq, "profiles", "a sequence");
    int i = 0;
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++, i++) {
        yaml_node_t *n = child(c, *it);
        int rc = spend(c, seq);
        if (rc)
            return rc;
        if (!n)
            return err_at(c, seq, "malformed sequence in profiles");
        rc = load_profile(c, n, i, s);
        if (rc)
            return rc;
    }
    return 0;
}

static int top_field(struct kctx *c, int field, yaml_node_t *val, void *arg)
{
    (void)c; /* a field_fn; this level needs no context */
    struct top *t = arg;
    if (field == TOP_API_VERSION)
        t->api = val;
    else if (field == TOP_KIND)
        t->kind = val;
    else if (field == TOP_PROFILES)
        t->profiles = val;
    return 0;
}

/*
 * is_ksc() - whether document root @root is a KubeSchedulerConfiguration. Its kind decides; with
 * no kind at all, an apiVersion of the scheduler's group does, so a misspelt "kind" is reported
 * instead of the whole document being skipped as some other kind.
 */
static int is_ksc(struct kctx *c, yaml_node_t *root, bool *yes)
{
    yaml_node_t *kind = NULL, *api = NULL;
    int rc = map_get(c, root, top_keys[TOP_KIND], &kind);
    if (!rc)
        rc = map_get(c, root, top_keys[TOP_API_VERSION], &api);
    if (rc)
        return rc;
    const char *k = kind ? str_of(kind) : NULL, *a = api ? str_of(api) : NULL;
    if (k)
        *yes = strcmp(k, KSC_KIND) == 0;
    else
        *yes = a && strncmp(a, API_GROUP, strlen(API_GROUP)) == 0;
    return 0;
}

static int check_api(struct kctx *c, yaml_node_t *root, const struct top *t)
{
    char buf[SHOW_BUF];
    if (!t->kind)
        return err_at(c, root, "missing field \"kind\" (want \"" KSC_KIND "\")");
    const char *k = str_of(t->kind);
    if (!k || strcmp(k, KSC_KIND) != 0)
        return err_at(c, t->kind, "kind must be \"" KSC_KIND "\", not %s", show(t->kind, buf));
    if (!t->api)
        return err_at(c, root, "missing field \"apiVersion\" (want \"" API_GROUP "v1\")");
    const char *a = str_of(t->api);
    if (a && strcmp(a, API_GROUP "v1") == 0)
        return 0;
    if (a && (strcmp(a, API_GROUP "v1beta2") == 0 || strcmp(a, API_GROUP "v1beta3") == 0)) {
        warn_at(c, t->api, "apiVersion %s is deprecated; use " API_GROUP "v1", a);
        return 0;
    }
    return err_at(c, t->api,
                  "unsupported apiVersion %s (want " API_GROUP "v1; v1beta2 and v1beta3 are "
                  "accepted but deprecated)",
                  show(t->api, buf));
}

static int load_document(struct kctx *c, yaml_node_t *root, struct sel *s)
{
    struct top t = {NULL, NULL, NULL};
    bool yes = false;
    int rc = is_ksc(c, root, &yes);
    if (rc || !yes)
        return rc;
    s->nksc++;
    rc = each_field(c, root, top_keys, NKEYS(top_keys), KSC_KIND, top_field, &t);
    if (!rc)
        rc = check_api(c, root, &t);
    if (!rc)
        rc = load_profiles(c, t.profiles, s);
    return rc;
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

static int yaml_fail(const char *path, const yaml_parser_t *ps, const unsigned char *buf,
                     size_t len, struct gs_diag *d)
{
    const char *problem = ps->problem ? ps->problem : "malformed YAML";
    size_t line = ps->problem_mark.line + 1, col = ps->problem_mark.column + 1;
    if (ps->error == YAML_MEMORY_ERROR)
        return gs_diag_error_code(d, -ENOMEM, "%s: out of memory parsing YAML", path);
    if (ps->error == YAML_READER_ERROR) {
        line_col(buf, len, ps->problem_offset, &line, &col);
        return gs_diag_error(d, "%s:%zu:%zu: YAML error: %s", path, line, col, problem);
    }
    if (ps->context)
        return gs_diag_error(d, "%s:%zu:%zu: YAML error: %s (%s at line %zu, column %zu)", path,
                             line, col, problem, ps->context, ps->context_mark.line + 1,
                             ps->context_mark.column + 1);
    return gs_diag_error(d, "%s:%zu:%zu: YAML error: %s", path, line, col, problem);
}

/* check_syntax() - the event pass: syntax errors and nesting deeper than GS_CONFIG_MAX_DEPTH. */
static int check_syntax(const char *path, const unsigned char *buf, size_t len, struct gs_diag *d)
{
    yaml_parser_t ps;
    int depth = 0, rc = 0;
    if (!yaml_parser_initialize(&ps))
        return gs_diag_error_code(d, -ENOMEM, "%s: out of memory", path);
    yaml_parser_set_input_string(&ps, buf, len);
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&ps, &ev)) {
            rc = yaml_fail(path, &ps, buf, len, d);
            break;
        }
        if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT)
            depth++;
        else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT)
            depth--;
        if (depth > GS_CONFIG_MAX_DEPTH)
            rc = gs_diag_error(d, "%s:%zu:%zu: nested deeper than %d levels", path,
                               ev.start_mark.line + 1, ev.start_mark.column + 1,
                               GS_CONFIG_MAX_DEPTH);
        bool end = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
        if (rc || end)
            break;
    }
    yaml_parser_delete(&ps);
    return rc;
}

/* load_documents() - the document pass: walk each document in turn, stopping at an error. */
static int load_documents(const char *path, const unsigned char *buf, size_t len, struct sel *s,
                          struct gs_diag *d)
{
    yaml_parser_t ps;
    int rc = 0;
    if (!yaml_parser_initialize(&ps))
        return gs_diag_error_code(d, -ENOMEM, "%s: out of memory", path);
    yaml_parser_set_input_string(&ps, buf, len);
    for (;;) {
        yaml_document_t doc;
        if (!yaml_parser_load(&ps, &doc)) { /* libyaml frees @doc itself on failure */
            rc = yaml_fail(path, &ps, buf, len, d);
            break;
        }
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        bool last = root == NULL; /* an empty document only at the end of the stream */
        if (root) {
            size_t nodes = (size_t)(doc.nodes.top - doc.nodes.start);
            struct kctx c = {path, d, &doc, WALK_BUDGET_MIN + 4 * nodes, false};
            rc = load_document(&c, root, s);
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

/* read_file() - all of @path into a malloc'd *@out, refusing more than GS_CONFIG_MAX_BYTES. */
static int read_file(const char *path, unsigned char **out, size_t *outlen, struct gs_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        if (e == ENOENT)
            return gs_diag_error_code(d, -ENOENT, "%s: no such file", path);
        return io_error(path, "cannot open", e, d);
    }
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (len == cap) { /* cap never passes GS_CONFIG_MAX_BYTES + 1: one byte tells "too big" */
            size_t ncap = cap ? 2 * cap : 16384;
            ncap = ncap > GS_CONFIG_MAX_BYTES + 1u ? GS_CONFIG_MAX_BYTES + 1u : ncap;
            unsigned char *nbuf = realloc(buf, ncap);
            if (!nbuf) {
                rc = gs_diag_error_code(d, -ENOMEM, "%s: out of memory", path);
                break;
            }
            buf = nbuf;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (len > GS_CONFIG_MAX_BYTES) {
            rc = gs_diag_error(d, "%s: larger than %u bytes; not a scheduler configuration", path,
                               GS_CONFIG_MAX_BYTES);
            break;
        }
        if (got == 0) {
            if (ferror(f))
                rc = io_error(path, "cannot read", errno, d);
            break;
        }
    }
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *outlen = len;
    return 0;
}

int gs_config_load_kubesched(const char *path, const char *scheduler_name, struct gs_profile **out,
                             struct gs_diag *d)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    struct sel s = {scheduler_name, NULL, 0, 0};
    if (!path || !out)
        return gs_diag_error(d, "gs_config_load_kubesched: path and out must not be NULL");
    int rc = read_file(path, &buf, &len, d);
    if (rc)
        return rc;
    rc = check_syntax(path, buf, len, d);
    if (!rc)
        rc = load_documents(path, buf, len, &s, d);
    free(buf);
    if (!rc && !s.kept) {
        if (!s.nksc)
            rc = gs_diag_error(d, "%s: no " KSC_KIND " document", path);
        else if (scheduler_name)
            rc = gs_diag_error(d, "%s: no profile with schedulerName \"%.100s\"", path,
                               scheduler_name);
        else
            rc = gs_diag_error(d, "%s: no profiles in " KSC_KIND, path);
    }
    if (rc) {
        gs_profile_free(s.kept);
        return rc;
    }
    *out = s.kept;
    return 0;
}
