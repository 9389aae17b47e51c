/*
 * The scenario loader's shared machinery: record arrays and their name indexes, and field parsers
 * whose messages name the place. The contract is in gpusched/scenario.h.
 */
#include "scenario_impl.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NO_NS ((size_t)-1)

/* Where each record array lives in struct gs_scenario, its key fields and its limit. */
static const struct kdesc {
    size_t elem, arr, cnt, ns, name, src, max;
    const char *what, *one;
} kinds[GS__K_COUNT] = {
#define K(T, A, N, NS, SRC, MAX, WHAT, ONE)                                                        \
    {                                                                                              \
        sizeof(struct T), offsetof(struct gs_scenario, A), offsetof(struct gs_scenario, N), NS,    \
            offsetof(struct T, name), SRC, MAX, WHAT, ONE                                          \
    }
#define SRC(T) offsetof(struct T, src)
    [GS__K_TENANT] = K(gs_tenant_spec, policy.tenants, policy.ntenants, NO_NS, SRC(gs_tenant_spec),
                       GS_SCN_RECORDS_MAX, "tenants", "tenant"),
    [GS__K_PROFILE] = K(gs_step_profile, policy.profiles, policy.nprofiles,
                        offsetof(struct gs_step_profile, tenant), SRC(gs_step_profile),
                        GS_SCN_RECORDS_MAX, "step profiles", "step profile"),
    [GS__K_QUEUE] = K(gs_queue_spec, policy.queues, policy.nqueues, NO_NS, SRC(gs_queue_spec),
                      GS_SCN_RECORDS_MAX, "queues", "Queue"),
    [GS__K_PODGROUP] = K(gs_podgroup_spec, policy.podgroups, policy.npodgroups,
                         offsetof(struct gs_podgroup_spec, ns), SRC(gs_podgroup_spec),
                         GS_SCN_PODS_MAX, "PodGroups", "PodGroup"),
    [GS__K_PRIORITY_CLASS] =
        K(gs_priority_class_spec, policy.priority_classes, policy.npriority_classes, NO_NS,
          SRC(gs_priority_class_spec), GS_SCN_RECORDS_MAX, "PriorityClasses", "PriorityClass"),
    [GS__K_RQUOTA] =
        K(gs_rquota_spec, policy.rquotas, policy.nrquotas, offsetof(struct gs_rquota_spec, ns),
          SRC(gs_rquota_spec), GS_SCN_RECORDS_MAX, "ResourceQuotas", "ResourceQuota"),
    [GS__K_LIMIT_RANGE] = K(gs_limit_range_spec, policy.limit_ranges, policy.nlimit_ranges,
                            offsetof(struct gs_limit_range_spec, ns), SRC(gs_limit_range_spec),
                            GS_SCN_RECORDS_MAX, "LimitRanges", "LimitRange"),
    [GS__K_TEMPLATE] =
        K(gs_node_template, policy.templates, policy.ntemplates, NO_NS, SRC(gs_node_template),
          GS_SCN_RECORDS_MAX, "node templates", "node template"),
    [GS__K_NODE] =
        K(gs_scn_node, policy.nodes, policy.nnodes, NO_NS, NO_NS, GS_NODES_MAX, "nodes", "node"),
    [GS__K_POD] = K(gs_pod_spec, pods, npods, offsetof(struct gs_pod_spec, ns), SRC(gs_pod_spec),
                    GS_SCN_PODS_MAX, "pods", "pod"),
    [GS__K_VGPU_CLASS] =
        K(gs_vgpu_class_spec, policy.vgpu_classes, policy.nvgpu_classes, NO_NS,
          SRC(gs_vgpu_class_spec), GS_SCN_RECORDS_MAX, "VirtualGPUClasses", "VirtualGPUClass"),
#undef SRC
#undef K
};

/* The array pointer and count of @kind, read and written through memcpy: the arrays have
 * different element types, and this keeps the generic code free of type punning. */
static char *arr_get(const struct gs_scenario *s, int kind)
{
    void *p;
    memcpy(&p, (const char *)s + kinds[kind].arr, sizeof(p));
    return p;
}

static void arr_set(struct gs_scenario *s, int kind, void *p)
{
    memcpy((char *)s + kinds[kind].arr, &p, sizeof(p));
}

static size_t *count_of(struct gs_scenario *s, int kind)
{
    return (size_t *)(void *)((char *)s + kinds[kind].cnt);
}

struct keyctx {
    const struct gs_scenario *s;
    int kind;
};

static void rec_key(const void *ctx, uint32_t v, const char **ns, const char **name)
{
    const struct keyctx *k = ctx;
    const struct kdesc *kd = &kinds[k->kind];
    const char *rec = arr_get(k->s, k->kind) + (size_t)v * kd->elem;
    *ns = kd->ns == NO_NS ? "" : rec + kd->ns;
    *name = rec + kd->name;
}

uint32_t gs__nidx_hash(const char *ns, const char *name)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)ns; *p; p++)
        h = (h ^ *p) * 16777619u;
    h = (h ^ 0xffu) * 16777619u; /* a byte no name holds separates the two parts */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

long gs__nidx_find(const struct gs__nidx *x, uint32_t h, gs__nidx_key key, const void *ctx,
                   const char *ns, const char *name)
{
    if (!x->cap)
        return -1;
    for (size_t i = h & (x->cap - 1); x->slot[i].v; i = (i + 1) & (x->cap - 1)) {
        const char *kns, *kname;
        if (x->slot[i].h != h)
            continue;
        key(ctx, x->slot[i].v - 1, &kns, &kname);
        if (strcmp(kname, name) == 0 && strcmp(kns, ns) == 0)
            return (long)x->slot[i].v - 1;
    }
    return -1;
}

static void put(struct gs__nslot *slot, size_t cap, uint32_t h, uint32_t v1)
{
    size_t i = h & (cap - 1);
    while (slot[i].v)
        i = (i + 1) & (cap - 1);
    slot[i].v = v1;
    slot[i].h = h;
}

int gs__nidx_add(struct gs__nidx *x, uint32_t h, uint32_t v)
{
    if ((x->n + 1) * 2 > x->cap) { /* at most half full: probes stay short */
        size_t cap = x->cap ? x->cap * 2 : 64;
        struct gs__nslot *slot = calloc(cap, sizeof(*slot));
        if (!slot)
            return -ENOMEM;
        for (size_t i = 0; i < x->cap; i++)
            if (x->slot[i].v)
                put(slot, cap, x->slot[i].h, x->slot[i].v);
        free(x->slot);
        x->slot = slot;
        x->cap = cap;
    }
    put(x->slot, x->cap, h, v + 1);
    x->n++;
    return 0;
}

void gs__nidx_clear(struct gs__nidx *x)
{
    free(x->slot);
    x->slot = NULL;
    x->cap = x->n = 0;
}

struct gs_scn_priv *gs__scn_priv(struct gs_scenario *s)
{
    if (!s->priv) {
        s->priv = calloc(1, sizeof(*s->priv));
        if (s->priv)
            s->priv->ns_tenant_for = (size_t)-1;
    }
    return s->priv;
}

/* sync() - bring the index of @kind up to the array: rebuilt when records went away. */
static int sync(struct gs_scenario *s, int kind)
{
    struct gs_scn_priv *p = gs__scn_priv(s);
    size_t n = *count_of(s, kind);
    if (!p)
        return -ENOMEM;
    struct gs__nidx *x = &p->idx[kind];
    struct keyctx k = {s, kind};
    if (x->n > n)
        gs__nidx_clear(x);
    while (x->n < n) {
        const char *ns, *name;
        rec_key(&k, (uint32_t)x->n, &ns, &name);
        if (gs__nidx_add(x, gs__nidx_hash(ns, name), (uint32_t)x->n) < 0)
            return -ENOMEM;
    }
    return 0;
}

long gs__scn_find(struct gs_scenario *s, int kind, const char *ns, const char *name)
{
    struct keyctx k = {s, kind};
    size_t n = *count_of(s, kind);
    if (kinds[kind].ns == NO_NS)
        ns = "";
    if (sync(s, kind) == 0)
        return gs__nidx_find(&s->priv->idx[kind], gs__nidx_hash(ns, name), rec_key, &k, ns, name);
    for (size_t i = 0; i < n; i++) { /* out of memory for the index: still a right answer */
        const char *kns, *kname;
        rec_key(&k, (uint32_t)i, &kns, &kname);
        if (strcmp(kname, name) == 0 && strcmp(kns, ns) == 0)
            return (long)i;
    }
    return -1;
}

long gs__scn_add(struct gs_scenario *s, int kind, const void *rec)
{
    const struct kdesc *kd = &kinds[kind];
    struct gs_scn_priv *p = gs__scn_priv(s);
    size_t *n = count_of(s, kind);
    if (!p)
        return -ENOMEM;
    if (*n >= kd->max)
        return -E2BIG;
    if (p->cap[kind] < *n) /* filled by a caller: malloc'd and exactly full */
        p->cap[kind] = *n;
    if (*n == p->cap[kind]) {
        size_t cap = gs_grow_cap(p->cap[kind], *n + 1, 16);
        cap = !cap || cap > kd->max ? kd->max : cap;
        void *a = realloc(arr_get(s, kind), cap * kd->elem);
        if (!a)
            return -ENOMEM;
        arr_set(s, kind, a);
        p->cap[kind] = cap;
    }
    memcpy(arr_get(s, kind) + *n * kd->elem, rec, kd->elem);
    ++*n;
    /* out of memory for the index: the record stays, and look-ups fall back to a scan */
    return sync(s, kind) < 0 ? -ENOMEM : (long)*n - 1;
}

const char *gs__scn_kind_what(int kind)
{
    return kinds[kind].what;
}

size_t gs__scn_kind_max(int kind)
{
    return kinds[kind].max;
}

long gs__scn_push(struct gs__yctx *c, const yaml_node_t *at, struct gs_scenario *s, int kind,
                  const void *rec)
{
    long i = gs__scn_add(s, kind, rec);
    if (i == -E2BIG)
        return gs__yaml_err_code(c, at, -E2BIG, "more than %zu %s", kinds[kind].max,
                                 kinds[kind].what);
    if (i < 0)
        return gs_diag_error_code(c->d, -ENOMEM, "%s: out of memory", c->path);
    return i;
}

int gs__scn_commit(struct gs__yctx *c, struct gs__scn_load *L, const yaml_node_t *root,
                   const yaml_node_t *name_at, int kind, void *rec)
{
    const struct kdesc *kd = &kinds[kind];
    const char *ns = kd->ns == NO_NS ? "" : (const char *)rec + kd->ns;
    const char *name = (const char *)rec + kd->name;
    char at[160];
    long dup = gs__scn_find(L->s, kind, ns, name);
    if (dup >= 0) {
        struct gs_scn_src first;
        memcpy(&first, arr_get(L->s, kind) + (size_t)dup * kd->elem + kd->src, sizeof(first));
        return gs__yaml_err(c, name_at, "a second %s %s%s%s (the first is at %s)", kd->one, ns,
                            *ns ? "/" : "", name, gs__scn_where(&first, at, sizeof(at)));
    }
    struct gs_scn_src src;
    gs__scn_src(c, L, root, &src);
    memcpy((char *)rec + kd->src, &src, sizeof(src));
    long i = gs__scn_push(c, root, L->s, kind, rec);
    return i < 0 ? (int)i : 0;
}

void gs__scn_src(const struct gs__yctx *c, const struct gs__scn_load *L, const yaml_node_t *n,
                 struct gs_scn_src *src)
{
    size_t line, col;
    gs__yaml_pos(c, n, &line, &col);
    memcpy(src->file, L->file, sizeof(src->file));
    src->line = line > UINT32_MAX ? UINT32_MAX : (uint32_t)line;
    src->col = col > UINT32_MAX ? UINT32_MAX : (uint32_t)col;
}

const char *gs__scn_gpus(int64_t milli, char *buf, size_t size)
{
    if (milli % 1000)
        snprintf(buf, size, "%lld.%03lld", (long long)(milli / 1000), (long long)(milli % 1000));
    else
        snprintf(buf, size, "%lld", (long long)(milli / 1000));
    return buf;
}

const char *gs__scn_where(const struct gs_scn_src *src, char *buf, size_t size)
{
    snprintf(buf, size, "%.*s:%u:%u", (int)sizeof(src->file), src->file, src->line, src->col);
    return buf;
}

int gs__scn_keep(struct gs__yctx *c, int field, yaml_node_t *val, void *arg)
{
    (void)c; /* a gs__yaml_field_fn */
    ((yaml_node_t **)arg)[field] = val;
    return 0;
}

int gs__scn_name(struct gs__yctx *c, const yaml_node_t *n, const char *what, char *dst, size_t size)
{
    int rc = gs__yaml_not_typed(c, n, what);
    return rc ? rc : gs__scn_key_name(c, n, what, dst, size);
}

int gs__scn_key_name(struct gs__yctx *c, const yaml_node_t *n, const char *what, char *dst,
                     size_t size)
{
    const char *s = gs__yaml_str(n);
    if (!s || gs__yaml_is_null(n))
        return gs__yaml_type_error(c, n, what, "a name");
    size_t len = strlen(s);
    if (len == 0)
        return gs__yaml_err(c, n, "%s must not be empty", what);
    if (len >= size)
        return gs__yaml_err(c, n, "%s is %zu bytes long; names are at most %zu", what, len,
                            size - 1);
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.'))
            return gs__yaml_err(c, n, "%s may hold letters, digits, '-', '_' and '.' only", what);
    memcpy(dst, s, len + 1);
    return 0;
}

int gs__scn_bool(struct gs__yctx *c, const yaml_node_t *n, const char *what, int *out)
{
    static const char *const yes[] = {"true", "True", "TRUE"}, *const no[] = {"false", "False",
                                                                              "FALSE"};
    const char *s = gs__yaml_str(n);
    for (int i = 0; s && gs__yaml_is_plain(n) && i < 3; i++)
        if (strcmp(s, yes[i]) == 0 || strcmp(s, no[i]) == 0) {
            *out = strcmp(s, yes[i]) == 0;
            return 0;
        }
    return gs__yaml_type_error(c, n, what, "true or false");
}

int gs__scn_int(struct gs__yctx *c, const yaml_node_t *n, const char *what, int64_t lo, int64_t hi,
                int64_t *out)
{
    char buf[GS__YAML_SHOW_BUF];
    const char *s = gs__yaml_str(n);
    long long v;
    if (!s || !gs__yaml_is_plain(n) || !gs__yaml_parse_int(s, &v))
        return gs__yaml_type_error(c, n, what, "an integer");
    if (v < lo || v > hi)
        return gs__yaml_err(c, n, "%s must be in %lld..%lld, not %s", what, (long long)lo,
                            (long long)hi, gs__yaml_show(n, buf));
    *out = v;
    return 0;
}

int gs__scn_enum(struct gs__yctx *c, const yaml_node_t *n, const char *what,
                 const char *const *names, int count, int *out)
{
    char buf[GS__YAML_SHOW_BUF], list[256];
    const char *s = gs__yaml_str(n);
    size_t k = 0;
    int rc = gs__yaml_not_typed(c, n, what);
    if (rc)
        return rc;
    for (int i = 0; s && i < count; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    list[0] = '\0';
    for (int i = 0; i < count && k < sizeof(list); i++)
        k += (size_t)snprintf(list + k, sizeof(list) - k, "%s%s", i ? ", " : "", names[i]);
    int best = gs__yaml_nearest(n, names, count);
    if (best >= 0)
        return gs__yaml_err(c, n, "%s must be one of %s, not %s (did you mean \"%s\"?)", what, list,
                            gs__yaml_show(n, buf), names[best]);
    return gs__yaml_err(c, n, "%s must be one of %s, not %s", what, list, gs__yaml_show(n, buf));
}

/* as_written() - @v, an integer in units of 10^-@e10 of what the user writes, as they write it
 * ("1", "100", "0.5"), into @buf (32 bytes). */
static const char *as_written(int64_t v, int e10, char *buf)
{
    int64_t p = 1;
    for (int i = 0; i < e10; i++)
        p *= 10;
    int n = snprintf(buf, 32, "%lld", (long long)(v / p));
    int64_t f = v % p;
    if (f && n < 32 - e10 - 1)
        buf[n++] = '.';
    for (int64_t q = p / 10; f && q && n < 31; q /= 10) { /* trailing zeros dropped */
        buf[n++] = (char)('0' + f / q);
        f %= q;
    }
    buf[n] = '\0';
    return buf;
}

int gs__scn_qty(struct gs__yctx *c, const yaml_node_t *n, const char *what, int e10, int e2,
                unsigned flags, const char *unit, int64_t lo, int64_t hi, int64_t *out)
{
    char buf[GS__YAML_SHOW_BUF];
    const char *s = gs__yaml_str(n), *why = "";
    int64_t v;
    if (!s || gs__yaml_is_null(n))
        return gs__yaml_type_error(c, n, what, "a quantity");
    int rc = gs__qty_parse(s, e10, e2, flags, &v, &why);
    if (rc == -EDOM && strcmp(why, "is not a whole number of") == 0)
        return gs__yaml_err(c, n, "%s: %s is not a whole number of %s", what, gs__yaml_show(n, buf),
                            unit);
    if (rc)
        return gs__yaml_err(c, n, "%s: %s %s", what, gs__yaml_show(n, buf), why);
    char a[32], b[32];
    if ((v < lo || v > hi) && e10 > 0 && e2 == 0) /* the range as the user writes it */
        return gs__yaml_err(c, n, "%s: %s is out of range (%s..%s)", what, gs__yaml_show(n, buf),
                            as_written(lo, e10, a), as_written(hi, e10, b));
    if (v < lo || v > hi)
        return gs__yaml_err(c, n, "%s: %s is out of range (%lld..%lld %s)", what,
                            gs__yaml_show(n, buf), (long long)lo, (long long)hi, unit);
    *out = v;
    return 0;
}

int gs__scn_bytes(struct gs__yctx *c, yaml_node_t *n, const char *what, unsigned flags, int64_t hi,
                  int64_t *out)
{
    const char *s = gs__yaml_str(n);
    size_t len = s ? strlen(s) : 0;
    /* a plain number is bytes to Kubernetes and MiB to HAMi: which one was meant is asked, the
     * guess made from its size (a count of MiB is small, of bytes large); 0 is out of range */
    if (len && len < 19 && strspn(s, "0123456789") == len && strspn(s, "0") < len) {
        long long b = strtoll(s, NULL, 10);
        if (b >> 20 == 0)
            return gs__yaml_err(c, n,
                                "%s: %s is bytes; did you mean %sMi? (a Kubernetes quantity, as "
                                "2Gi or 2048Mi)",
                                what, s, s);
        return gs__yaml_err(c, n,
                            "%s: %s is bytes, %s%lldMi; write the unit (a Kubernetes quantity, as "
                            "2Gi or 2048Mi)",
                            what, s, b & ((1 << 20) - 1) ? "not a whole MiB: about " : "",
                            (b + (1 << 19)) >> 20);
    }
    return gs__scn_qty(c, n, what, 0, -20, flags, "MiB", 1, hi, out);
}

int gs__scn_qty_unread(struct gs__yctx *c, const yaml_node_t *n, const char *what)
{
    int64_t v;
    return gs__scn_qty(c, n, what, 0, 0, GS__Q_CEIL, "units", 0, INT64_MAX, &v);
}

int gs__scn_dur(struct gs__yctx *c, const yaml_node_t *n, const char *what, int64_t *out)
{
    char buf[GS__YAML_SHOW_BUF];
    const char *s = gs__yaml_str(n), *why = "";
    if (!s || gs__yaml_is_null(n))
        return gs__yaml_type_error(c, n, what, "a duration");
    int rc = gs__duration_parse(s, out, &why);
    if (rc == -EDOM && strcmp(why, "is not a whole number of") == 0)
        return gs__yaml_err(c, n, "%s: %s is not a whole number of microseconds", what,
                            gs__yaml_show(n, buf));
    if (rc)
        return gs__yaml_err(c, n, "%s: %s %s", what, gs__yaml_show(n, buf), why);
    /* Simulated time spans at most GS_SCN_TIME_MAX_US (10 years), so every time a run reports
     * stays within what meters and bills accept. */
    if (*out > GS_SCN_TIME_MAX_US)
        return gs__yaml_err(c, n, "%s: %s is more than 10 years (87600h)", what,
                            gs__yaml_show(n, buf));
    return 0;
}

/* gs__yaml_meta_keys' first; the others Kubernetes writes mean nothing to a scenario. */
enum { META_NAME, META_NAMESPACE, META_LABELS, META_ANNOTATIONS, META_GENERATE_NAME };

int gs__scn_dns_name(struct gs__yctx *c, const yaml_node_t *n, int label, const char *what,
                     char *dst, size_t size)
{
    int rc = gs__yaml_not_typed(c, n, what);
    if (rc)
        return rc;
    const char *s = gs__yaml_is_null(n) ? NULL : gs__yaml_str(n);
    size_t len = s ? strlen(s) : 0;
    if (len && len < size && !(label ? gs_dns_label_ok(s, len) : gs_dns_subdomain_ok(s, len)))
        return gs__yaml_err(c, n,
                            label ? "%s \"%.80s\": expected a DNS label: lowercase letters, "
                                    "digits and '-', a letter or digit at both ends"
                                  : "%s \"%.80s\": expected a DNS subdomain: lowercase letters, "
                                    "digits, '-' and '.', a letter or digit at both ends",
                            what, s);
    return gs__scn_key_name(c, n, what, dst, size); /* its type is checked above */
}

static int meta_field(struct gs__yctx *c, int field, yaml_node_t *val, void *arg)
{
    struct gs__scn_meta *m = arg;
    int rc = 0;
    if (field == META_NAME) {
        rc = gs__scn_dns_name(c, val, 0, "metadata.name", m->name_s, m->name_size);
        m->name = val;
    } else if (field == META_NAMESPACE) {
        rc = gs__scn_dns_name(c, val, 1, "metadata.namespace", m->ns_s, sizeof(m->ns_s));
        m->ns = val;
    } else if (field == META_LABELS) {
        m->labels = val;
    } else if (field == META_ANNOTATIONS) {
        m->annotations = val;
    } else { /* set aside, but of the API server's types */
        rc = gs__scn_typed_field(c, gs__kt_meta, gs__yaml_meta_keys[field], val, "metadata");
    }
    return rc;
}

int gs__scn_meta(struct gs__yctx *c, yaml_node_t *root, yaml_node_t *n, bool need_name,
                 size_t name_size, struct gs__scn_meta *m)
{
    memset(m, 0, sizeof(*m));
    m->name_size = name_size < sizeof(m->name_s) ? name_size : sizeof(m->name_s);
    int rc =
        n ? gs__yaml_each_field(c, n, gs__yaml_meta_keys, GS__YAML_NMETA, "metadata", meta_field, m)
          : 0;
    if (rc)
        return rc;
    if (!m->ns)
        memcpy(m->ns_s, "default", sizeof("default"));
    if (need_name && !m->name)
        return gs__yaml_err(c, n ? n : root,
                            "metadata.name is required (generateName is not supported: a "
                            "scenario's objects need stable names)");
    return 0;
}
