/*
 * GpuClusterPolicy loader; the contract is in gpusched/migpolicy.h.
 *
 * One pass over libyaml's event stream, descending only the fixed levels the schema has, so memory
 * stays constant whatever the file holds: no document tree is built, aliases are refused (the
 * schema has no use for them and they are how YAML multiplies work), and a subtree that is not
 * interpreted (metadata) is skipped by counting its events, bounded by GS_CONFIG_MAX_DEPTH.
 */
#include "gpusched/migpolicy.h"

#include "gpusched/config.h"
#include "gpusched/diag.h"
#include "gpusched/mig.h"
#include "yamlutil.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define API_VERSION "nvidia.com/v1"
#define KIND        "GpuClusterPolicy"
#define TEXT_MAX    64 /* longest scalar kept: names and profile names are far shorter */
#define LIST_MAX    16 /* migProfiles entries of one device (a model has at most 8 profiles) */

struct rd {
    yaml_parser_t ps;
    yaml_event_t ev; /* the current event once `have` */
    int have;
    int depth;          /* collections open */
    yaml_mark_t key_at; /* the key whose value is being read */
    const unsigned char *buf;
    size_t len;
    size_t line0; /* lines of the file before buf[0]: a policy inside a scenario stream */
    const char *path;
    struct gs_diag *d;
};

/* A scalar kept past its event, with where it was. */
struct text {
    char s[TEXT_MAX + 1];
    yaml_mark_t at;
};

struct device {
    struct text name, profiles[LIST_MAX];
    int nprofiles, listed, enabled; /* listed: migProfiles given */
    yaml_mark_t at, list_at;
};

typedef int (*field_fn)(struct rd *r, int field, void *arg);

static int fail(struct rd *r, const yaml_mark_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct rd *r, const yaml_mark_t *at, const char *fmt, ...)
{
    char msg[GS_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return gs_diag_error(r->d, "%s:%zu:%zu: %s", r->path, r->line0 + at->line + 1, at->column + 1,
                         msg);
}

/* shown() - a scalar's text for a message: at most TEXT_MAX bytes, quotes as '?'. */
static const char *shown(const yaml_event_t *ev, char *buf)
{
    size_t n = ev->data.scalar.length < TEXT_MAX ? ev->data.scalar.length : TEXT_MAX;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = ev->data.scalar.value[i];
        buf[i] = ch == '"' ? '?' : (char)ch; /* control bytes: gs_diag writes them \xNN */
    }
    buf[n] = '\0';
    return buf;
}

/* syntax() - libyaml's complaint at the place it names; reader errors carry a byte offset only. */
static int syntax(struct rd *r)
{
    const yaml_parser_t *p = &r->ps;
    yaml_mark_t at = p->problem_mark;
    if (p->error == YAML_MEMORY_ERROR)
        return gs_diag_error_code(r->d, -ENOMEM, "%s: out of memory", r->path);
    if (p->error == YAML_READER_ERROR) {
        at.line = at.column = 0;
        for (size_t i = 0; i < p->problem_offset && i < r->len; i++) {
            at.line += r->buf[i] == '\n';
            at.column = r->buf[i] == '\n' ? 0 : at.column + 1;
        }
    }
    return fail(r, &at, "YAML error: %s", p->problem ? p->problem : "malformed YAML");
}

/* next() - advance to the next event, keeping the depth and refusing aliases. */
static int next(struct rd *r)
{
    if (r->have)
        yaml_event_delete(&r->ev);
    r->have = 0;
    if (!yaml_parser_parse(&r->ps, &r->ev))
        return syntax(r);
    r->have = 1;
    yaml_event_type_t t = r->ev.type;
    if (t == YAML_ALIAS_EVENT)
        return fail(r, &r->ev.start_mark, "YAML aliases are not accepted in a " KIND);
    r->depth += t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT;
    r->depth -= t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT;
    if (r->depth > GS_CONFIG_MAX_DEPTH)
        return fail(r, &r->ev.start_mark, "nested deeper than %d levels", GS_CONFIG_MAX_DEPTH);
    return 0;
}

/* skip() - pass over the value the current event starts. */
static int skip(struct rd *r)
{
    int outer = r->depth - 1, rc = 0;
    if (r->ev.type != YAML_MAPPING_START_EVENT && r->ev.type != YAML_SEQUENCE_START_EVENT)
        return 0;
    while (!rc && r->depth > outer)
        rc = next(r);
    return rc;
}

static const char *kind_of(yaml_event_type_t t)
{
    return t == YAML_MAPPING_START_EVENT    ? "a mapping"
           : t == YAML_SEQUENCE_START_EVENT ? "a sequence"
                                            : "a scalar";
}

static int want(struct rd *r, yaml_event_type_t t, const char *where)
{
    if (r->ev.type == t)
        return 0;
    return fail(r, &r->ev.start_mark, "%s must be %s, not %s", where, kind_of(t),
                kind_of(r->ev.type));
}

/* keep() - the current scalar into @t; an error when it is longer than TEXT_MAX or holds a NUL. */
static int keep(struct rd *r, struct text *t, const char *where)
{
    char buf[TEXT_MAX + 1];
    int rc = want(r, YAML_SCALAR_EVENT, where);
    size_t n = r->ev.data.scalar.length;
    if (rc)
        return rc;
    if (n > TEXT_MAX || strlen((const char *)r->ev.data.scalar.value) != n)
        return fail(r, &r->ev.start_mark, "%s: \"%s...\" is not a name", where, shown(&r->ev, buf));
    memcpy(t->s, r->ev.data.scalar.value, n + 1);
    t->at = r->ev.start_mark;
    return 0;
}

/*
 * fields() - walk the mapping the current event starts: each key must be one of @keys, once; @fn
 * gets its index with the value's first event current and must consume the whole value.
 */
static int fields(struct rd *r, const char *where, const char *const *keys, int nkeys, field_fn fn,
                  void *arg)
{
    char buf[TEXT_MAX + 1];
    unsigned seen = 0;
    int rc = want(r, YAML_MAPPING_START_EVENT, where);
    while (!rc && !(rc = next(r)) && r->ev.type != YAML_MAPPING_END_EVENT) {
        int i = 0;
        if (r->ev.type != YAML_SCALAR_EVENT)
            return fail(r, &r->ev.start_mark, "a key in %s must be a scalar", where);
        while (i < nkeys && strcmp((const char *)r->ev.data.scalar.value, keys[i]) != 0)
            i++;
        if (i == nkeys || (seen & (1u << i)))
            return fail(r, &r->ev.start_mark, "%s field \"%s\" in %s",
                        i == nkeys ? "unknown" : "duplicate", shown(&r->ev, buf), where);
        seen |= 1u << i;
        r->key_at = r->ev.start_mark;
        rc = next(r);
        if (!rc)
            rc = fn(r, i, arg);
    }
    return rc;
}

static int device_field(struct rd *r, int field, void *arg)
{
    struct device *dev = arg;
    char buf[TEXT_MAX + 1];
    if (field == 0)
        return keep(r, &dev->name, "devices[].name");
    if (field == 1) {
        const char *v = (const char *)r->ev.data.scalar.value;
        int rc = want(r, YAML_SCALAR_EVENT, "migEnabled");
        if (!rc && r->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
            (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "TRUE")))
            dev->enabled = 1;
        else if (!rc && !(r->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                          (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "FALSE"))))
            rc = fail(r, &r->ev.start_mark, "migEnabled must be true or false, not \"%s\"",
                      shown(&r->ev, buf));
        return rc;
    }
    int rc = want(r, YAML_SEQUENCE_START_EVENT, "migProfiles");
    dev->listed = 1;
    dev->list_at = r->key_at; /* "migProfiles:", not its first item */
    while (!rc && !(rc = next(r)) && r->ev.type != YAML_SEQUENCE_END_EVENT) {
        if (dev->nprofiles == LIST_MAX)
            return fail(r, &r->ev.start_mark, "more than %d migProfiles", LIST_MAX);
        rc = keep(r, &dev->profiles[dev->nprofiles++], "a migProfiles entry");
    }
    return rc;
}

/* allow() - the bitmask of the profiles @dev lists, checking each against model @model. */
static int allow(struct rd *r, const struct device *dev, int model, unsigned *allowed)
{
    char have[160];
    const char *m = gs_mig_model_at(model)->name;
    *allowed = 0;
    for (int i = 0; i < dev->nprofiles; i++) {
        const struct text *t = &dev->profiles[i];
        int p = gs_mig_profile_find(model, t->s, -1);
        if (p < 0) {
            gs_mig_profile_names(model, have, sizeof(have));
            return fail(r, &t->at, "%s has no MIG profile \"%s\" (it has %s)", m, t->s, have);
        }
        if (*allowed & (1u << p))
            return fail(r, &t->at, "MIG profile \"%s\" is listed twice for %s", t->s, m);
        *allowed |= 1u << p;
    }
    return 0;
}

/* add_device() - check a device entry read in full and append it to @pol. */
static int add_device(struct rd *r, const struct device *dev, struct gs_mig_policy *pol)
{
    struct gs_mig_policy_device *out = &pol->devices[pol->ndevices];
    if (!dev->name.s[0])
        return fail(r, &dev->at, "a device has no name");
    int model = gs_mig_model_find(dev->name.s);
    if (model == -EOPNOTSUPP)
        return fail(r, &dev->name.at, "GPU model \"%s\" has no MIG", dev->name.s);
    if (model < 0)
        return fail(r, &dev->name.at, "unknown GPU model \"%s\"", dev->name.s);
    if (gs_migpolicy_device(pol, model))
        return fail(r, &dev->name.at, "device %s is listed twice (first at line %u)",
                    gs_mig_model_at(model)->name, gs_migpolicy_device(pol, model)->line);
    if (dev->listed && !dev->enabled)
        return fail(r, &dev->list_at, "migProfiles given for %s but migEnabled is not true",
                    dev->name.s);
    if (dev->listed && dev->nprofiles == 0)
        return fail(r, &dev->list_at,
                    "migProfiles of %s is empty; allow a profile or set "
                    "migEnabled: false",
                    dev->name.s);
    unsigned allowed = (1u << gs_mig_model_at(model)->nprofiles) - 1u;
    int rc = dev->listed ? allow(r, dev, model, &allowed) : 0;
    if (rc)
        return rc;
    out->model = model;
    out->mig_enabled = dev->enabled != 0;
    out->allowed = dev->enabled ? allowed : 0;
    out->line = (unsigned)(r->line0 + dev->at.line + 1); /* the file's own line */
    out->column = (unsigned)dev->at.column + 1;
    pol->ndevices++;
    return 0;
}

static int devices(struct rd *r, struct gs_mig_policy *pol)
{
    static const char *const keys[] = {"name", "migEnabled", "migProfiles"};
    int rc = want(r, YAML_SEQUENCE_START_EVENT, "spec.devices");
    while (!rc && !(rc = next(r)) && r->ev.type != YAML_SEQUENCE_END_EVENT) {
        struct device dev;
        memset(&dev, 0, sizeof(dev));
        dev.at = r->ev.start_mark;
        if (pol->ndevices == GS_MIGPOLICY_DEVICES_MAX)
            return fail(r, &dev.at, "more than %d devices", GS_MIGPOLICY_DEVICES_MAX);
        rc = fields(r, "a device", keys, 3, device_field, &dev);
        if (!rc)
            rc = add_device(r, &dev, pol);
    }
    return rc;
}

static int mig_field(struct rd *r, int field, void *arg)
{
    static const char *const names[] = {"none", "single", "mixed"};
    struct gs_mig_policy *pol = arg;
    char buf[TEXT_MAX + 1];
    int rc = want(r, YAML_SCALAR_EVENT, "spec.mig.strategy");
    (void)field; /* the only field */
    for (int i = 0; !rc && i < 3; i++)
        if (strcmp((const char *)r->ev.data.scalar.value, names[i]) == 0) {
            pol->strategy = (enum gs_mig_strategy)i;
            return 0;
        }
    return rc ? rc
              : fail(r, &r->ev.start_mark,
                     "spec.mig.strategy must be none, single or mixed, "
                     "not \"%s\"",
                     shown(&r->ev, buf));
}

static int spec_field(struct rd *r, int field, void *arg)
{
    static const char *const keys[] = {"strategy"};
    if (field == 0)
        return fields(r, "spec.mig", keys, 1, mig_field, arg);
    return devices(r, arg);
}

/* single_ok() - under strategy single every MIG device of a card is alike: one profile each. */
static int single_ok(struct rd *r, const struct gs_mig_policy *pol)
{
    for (int i = 0; pol->strategy == GS_MIG_STRATEGY_SINGLE && i < pol->ndevices; i++) {
        const struct gs_mig_policy_device *dev = &pol->devices[i];
        if (__builtin_popcount(dev->allowed) > 1) {
            yaml_mark_t at = {0, dev->line - 1 - r->line0, dev->column - 1};
            return fail(r, &at,
                        "strategy single advertises every MIG device as nvidia.com/gpu, "
                        "so %s may allow one profile only",
                        gs_mig_model_at(dev->model)->name);
        }
    }
    return 0;
}

struct top {
    struct gs_mig_policy *pol;
    int api, kind, spec; /* seen */
};

/* A metadata field: one Kubernetes writes, its value not read. */
static int meta_field(struct rd *r, int field, void *arg)
{
    (void)field;
    (void)arg;
    return skip(r);
}

static int top_field(struct rd *r, int field, void *arg)
{
    static const char *const keys[] = {"mig", "devices"};
    static const char *const name[] = {"apiVersion", "kind"}, *const value[] = {API_VERSION, KIND};
    struct top *t = arg;
    char buf[TEXT_MAX + 1];
    if (field == 2)
        return fields(r, "metadata", gs__yaml_meta_keys, GS__YAML_NMETA, meta_field, NULL);
    if (field == 3) {
        t->spec = 1;
        return fields(r, "spec", keys, 2, spec_field, t->pol);
    }
    int rc = want(r, YAML_SCALAR_EVENT, name[field]);
    if (!rc && strcmp((const char *)r->ev.data.scalar.value, value[field]) != 0)
        rc = fail(r, &r->ev.start_mark, "%s must be \"%s\", not \"%s\"", name[field], value[field],
                  shown(&r->ev, buf));
    *(field == 0 ? &t->api : &t->kind) = 1;
    return rc;
}

/* document() - the first document of the stream, a GpuClusterPolicy; when @alone, the only one. */
static int document(struct rd *r, struct gs_mig_policy *pol, bool alone)
{
    static const char *const keys[] = {"apiVersion", "kind", "metadata", "spec"};
    struct top t = {pol, 0, 0, 0};
    int rc = next(r); /* stream start */
    if (!rc)
        rc = next(r);
    if (!rc && r->ev.type == YAML_STREAM_END_EVENT)
        return gs_diag_error(r->d, "%s: empty file; want a " KIND, r->path);
    if (!rc)
        rc = next(r); /* the root node */
    if (rc)
        return rc;
    yaml_mark_t root = r->ev.start_mark;
    rc = fields(r, KIND, keys, 4, top_field, &t);
    if (!rc && (!t.api || !t.kind || !t.spec))
        rc = fail(r, &root, "missing field \"%s\"",
                  !t.api    ? "apiVersion"
                  : !t.kind ? "kind"
                            : "spec");
    if (!rc)
        rc = single_ok(r, pol);
    if (!rc)
        rc = next(r); /* document end */
    if (!rc && alone)
        rc = next(r);
    if (!rc && alone && r->ev.type != YAML_STREAM_END_EVENT)
        rc = fail(r, &r->ev.start_mark, "a second YAML document; a policy file holds one " KIND);
    return rc;
}

static int parse(struct rd *r, bool alone, struct gs_mig_policy *out)
{
    struct gs_mig_policy pol;
    if (!yaml_parser_initialize(&r->ps))
        return gs_diag_error_code(r->d, -ENOMEM, "%s: out of memory", r->path);
    memset(&pol, 0, sizeof(pol));
    pol.strategy = GS_MIG_STRATEGY_SINGLE; /* the GPU Operator's default */
    yaml_parser_set_input_string(&r->ps, r->buf, r->len);
    int rc = document(r, &pol, alone);
    if (r->have)
        yaml_event_delete(&r->ev);
    yaml_parser_delete(&r->ps);
    if (!rc)
        *out = pol;
    return rc;
}

int gs_migpolicy_load(const char *path, struct gs_mig_policy *out, struct gs_diag *d)
{
    struct rd r;
    unsigned char *buf;
    if (!path || !out)
        return gs_diag_error(d, "gs_migpolicy_load: path and out must not be NULL");
    memset(&r, 0, sizeof(r));
    int rc = gs__yaml_read(path, false, GS_CONFIG_MAX_BYTES, "not a " KIND, &buf, &r.len, d);
    if (rc)
        return rc;
    r.buf = buf;
    r.path = path;
    r.d = d;
    rc = parse(&r, true, out);
    free(buf);
    return rc;
}

int gs_migpolicy_parse(const char *name, const unsigned char *buf, size_t len, size_t first_line,
                       struct gs_mig_policy *out, struct gs_diag *d)
{
    struct rd r;
    if (!name || !buf || !out)
        return gs_diag_error(d, "gs_migpolicy_parse: name, buf and out must not be NULL");
    memset(&r, 0, sizeof(r));
    r.buf = buf;
    r.len = len;
    r.line0 = first_line ? first_line - 1 : 0;
    r.path = name;
    r.d = d;
    return parse(&r, false, out);
}

const struct gs_mig_policy_device *gs_migpolicy_device(const struct gs_mig_policy *p, int model)
{
    for (int i = 0; p && i < p->ndevices; i++)
        if (p->devices[i].model == model)
            return &p->devices[i];
    return NULL;
}
