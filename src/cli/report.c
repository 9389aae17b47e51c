/* gpusched report: one self-contained HTML page of a simulation's JSON (docs/report.md). */
#include "cli.h"
#include "jstream.h"
#include "report.h"

#include "gpusched/datadir.h"
#include "gpusched/billing.h"
#include "gpusched/diag.h"
#include "gpusched/grow.h"
#include "gpusched/page.h"
#include "gpusched/tenancy.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_CHART_JS GS_PAGE_CHART_JS
#define VALUE_MAX        (64u << 20) /* bytes of one value read whole: a pod, a summary, a cluster */
#define AT_MAX           RP_AT_MAX

struct ropts {
    const char *file, *out, *rates, *chart_js, *title;
};

static void usage(FILE *f)
{
    char rates[GS_DATA_PATH_MAX];
    fprintf(f,
            "usage: gpusched report [options] RUN.json -o REPORT.html\n"
            "  One self-contained HTML page (charts and a cluster map; it opens offline) of a\n"
            "  `gpusched simulate --json` file: a replay of one policy or several, or a\n"
            "  scenario run of one way or a comparison of ways.\n"
            "  -o, --output FILE   the page to write\n"
            "  --rates FILE        the RateCard that prices the bills (default:\n"
            "                      %s)\n"
            "  --chart-js FILE     Chart.js 3, inlined into the page (default: Debian's\n"
            "                      libjs-chart.js, " DEFAULT_CHART_JS ")\n"
            "  --title TEXT        the page's heading (default: the input file's name)\n",
            gs_data_file(GS_DATA_RATES, rates, sizeof(rates)));
}

static int parse(int argc, char **argv, struct ropts *o)
{
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'},   {"rates", required_argument, NULL, 'r'},
        {"chart-js", required_argument, NULL, 'c'}, {"title", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    static char rates[GS_DATA_PATH_MAX];
    *o = (struct ropts){.rates = gs_data_file(GS_DATA_RATES, rates, sizeof(rates)),
                        .chart_js = DEFAULT_CHART_JS};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", longs, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return -1;
        }
        if (c == '?' || c == ':') {
            gs__cli_say("report", "%s \"%s\" (see gpusched report --help)", gs_option_problem(c),
                        argv[optind - 1]);
            return EXIT_BAD_INPUT;
        }
        *(c == 'o' ? &o->out : c == 'r' ? &o->rates : c == 'c' ? &o->chart_js : &o->title) = optarg;
    }
    if (optind != argc - 1 || !o->out) {
        gs__cli_say("report", "%s (see gpusched report --help)",
                    optind < argc - 1 ? "give one RUN.json, not more"
                    : optind == argc  ? "no RUN.json given"
                                      : "no -o REPORT.html given");
        return EXIT_BAD_INPUT;
    }
    if (o->title && !gs_text_plain(o->title)) { /* the page's title and heading, as it is */
        gs__cli_say("report", "--title: holds a control, bidirectional or zero-width "
                              "character");
        return EXIT_BAD_INPUT;
    }
    o->file = argv[optind];
    return 0;
}

/* ---- Reading ---- */

/* What a walk of one object is filling: the document, the run, and the object's path. */
struct ctx {
    struct gs_js *s;
    struct rp_doc *doc;
    struct rp_run *run;
    char at[AT_MAX];
    unsigned seen; /* keys met in this object, one bit each (see once()) */
    int replay;    /* in "runs": pods are skipped, the run is a replay's */
};

static int oom(struct ctx *c)
{
    return gs_diag_error_code(c->s->d, -ENOMEM, "%s: out of memory", c->doc->path);
}

/* pathf() - a path in the document into @out (AT_MAX bytes), cut when longer. */
static void pathf(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pathf(char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, AT_MAX, fmt, ap);
    va_end(ap);
}

/* join() - "@at.@key" (or "@key" at the top) into @out. */
static void join(char *out, const char *at, const char *key)
{
    pathf(out, "%s%s%s", at, *at ? "." : "", key);
}

/* once() - @key, bit @bit of this object, is met for the first time. */
static int once(struct ctx *c, int bit, const char *key)
{
    if (c->seen & (1u << bit))
        return gs_diag_error(c->s->d, "%s: %s%s%s: given twice", c->doc->path, c->at,
                             *c->at ? "." : "", key);
    c->seen |= 1u << bit;
    return 0;
}

/* key_of() - the index of @key among @keys[0..@n), -1 when it is none of them. */
static int key_of(const char *const *keys, int n, const char *key)
{
    for (int k = 0; k < n; k++)
        if (strcmp(key, keys[k]) == 0)
            return k;
    return -1;
}

static void warn_unknown(const struct ctx *c, const char *key)
{
    gs__cli_say("report", "warning: %s: %s%s%s is not read by this report", c->doc->path, c->at,
                *c->at ? "." : "", key);
}

/* unknown() - a key this report does not read: said once, stepped over. */
static int unknown(struct ctx *c, const char *key)
{
    warn_unknown(c, key);
    return gs_js_skip(c->s);
}

/* bad() - "FILE: PATH: what", -EINVAL. */
static int bad(struct ctx *c, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(struct ctx *c, const char *at, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return gs_diag_error(c->s->d, "%s: %s: %s", c->doc->path, at, what);
}

/* field() - gs__json_field() with the file named in its message. */
static int field(struct ctx *c, const json_t *obj, const char *key, const char *at, json_type type,
                 json_t **out)
{
    int rc = gs__json_field(obj, key, at, type, out, c->s->d);
    if (rc) {
        char msg[GS_DIAG_MSG_MAX];
        memcpy(msg, c->s->d->msg, sizeof(msg));
        gs_diag_error(c->s->d, "%s: %s", c->doc->path, msg);
    }
    return rc;
}

static int field_int(struct ctx *c, const json_t *obj, const char *key, const char *at,
                     int64_t *out)
{
    json_t *v;
    int rc = field(c, obj, key, at, JSON_INTEGER, &v);
    if (!rc)
        *out = json_integer_value(v);
    return rc;
}

/* value() - the value next, which must be of @type (JSON_NULL: any). */
static int value(struct ctx *c, const char *key, json_type type, json_t **out)
{
    static const char *const want[] = {[JSON_OBJECT] = "an object",
                                       [JSON_ARRAY] = "an array",
                                       [JSON_STRING] = "a string",
                                       [JSON_INTEGER] = "an integer"};
    char at[AT_MAX];
    int rc = gs_js_value(c->s, out);
    if (rc)
        return rc;
    if (type != JSON_NULL && json_typeof(*out) != type) {
        join(at, c->at, key);
        rc = bad(c, at, "expected %s, got %s", want[type], gs__json_type_name(*out));
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

static int take_name(struct ctx *c, const char *key, char **name)
{
    json_t *v = NULL;
    int rc = value(c, key, JSON_STRING, &v);
    if (!rc && !(*name = strdup(json_string_value(v))))
        rc = oom(c);
    json_decref(v);
    return rc;
}

static struct rp_run *run_new(void)
{
    struct rp_run *r = calloc(1, sizeof(struct rp_run));
    if (r)
        r->last.end_s = INT64_MIN;
    return r;
}

static void run_free(struct rp_run *r)
{
    if (!r)
        return;
    free(r->name);
    json_decref(r->summary);
    json_decref(r->curve);
    json_decref(r->tl_tenants);
    json_decref(r->tl_queues);
    json_decref(r->map);
    free(r->ev);
    for (size_t i = 0; i < r->nkinds; i++)
        free(r->kinds[i].name);
    free(r->kinds);
    gs_bill_free(r->bill);
    for (size_t i = 0; i < r->nnames; i++)
        free((char *)r->names[i]);
    free(r->names);
    free(r->spans);
    free(r);
}

/* wait_into() - count @wait_s (null: refused at admission or never submitted within the run, not
 * counted) for @kind. */
static int wait_into(struct ctx *c, const char *kind, const json_t *wait)
{
    struct rp_run *r = c->run;
    size_t k = 0;
    while (k < r->nkinds && strcmp(r->kinds[k].name, kind) != 0)
        k++;
    if (k == r->nkinds) {
        struct rp_kind *v = realloc(r->kinds, (k + 1) * sizeof(*v));
        if (!v)
            return oom(c);
        r->kinds = v;
        memset(&v[k], 0, sizeof(v[k]));
        if (!(v[k].name = strdup(kind)))
            return oom(c);
        r->nkinds++;
    }
    r->kinds[k].pods++;
    if (json_is_null(wait))
        return 0;
    r->kinds[k].counts[gs_wait_bin(json_integer_value(wait))]++;
    return 0;
}

static int mode_of(const char *m)
{
    static const char *const names[] = {"exclusive", "shared", "mig", "timeslice"};
    for (int i = 0; i < 4; i++)
        if (strcmp(m, names[i]) == 0)
            return RP_WHOLE + i;
    return -1;
}

/* placement() - the spans of use @u of a pod of @tenant, placed as @pl says (at @at). */
static int placement(struct ctx *c, const json_t *pl, const json_t *u, int32_t tenant,
                     const char *at)
{
    json_t *node, *gpus, *g, *mig = json_object_get(pl, "mig");
    int64_t start, end;
    int rc = field(c, pl, "node", at, JSON_STRING, &node);
    if (!rc)
        rc = field(c, pl, "gpus", at, JSON_ARRAY, &gpus);
    if (!rc && mig && !json_is_null(mig) && !json_is_string(mig))
        rc = bad(c, at, "mig: expected a string (\"1g.10gb@6\") or null");
    if (!rc && (json_array_size(gpus) == 0 || json_array_size(gpus) > 64))
        rc = bad(c, at, "gpus: expected 1..64 card indexes");
    if (rc)
        return rc;
    gs__json_field_int(u, "start_s", "", &start, NULL);
    gs__json_field_int(u, "end_s", "", &end, NULL);
    struct rp_span sp = {.start_s = start,
                         .end_s = end,
                         .tenant = tenant,
                         .profile = -1,
                         .mode = (uint8_t)mode_of(json_string_value(json_object_get(u, "mode")))};
    if ((sp.node = gs_names_intern(&c->doc->nodes, json_string_value(node))) < 0)
        return sp.node == -ENOMEM ? oom(c) : bad(c, at, "more than %u node names", RP_NAMES_MAX);
    if (json_is_string(mig)) {
        char prof[32];
        int slot, n = 0;
        if (sscanf(json_string_value(mig), "%31[^@]@%d%n", prof, &slot, &n) != 2 ||
            json_string_value(mig)[n] || slot < 0 || slot > 7)
            return bad(c, at, "mig: \"%.40s\" is not PROFILE@SLOT", json_string_value(mig));
        if ((sp.profile = gs_names_intern(&c->doc->profiles, prof)) < 0)
            return oom(c);
        sp.mig_start = (int8_t)slot;
    }
    size_t i;
    uint64_t seen = 0; /* as many indexes as the usage's cards: gs__bill_pod() checked */
    json_array_foreach(gpus, i, g)
    {
        if (!json_is_integer(g) || json_integer_value(g) < 0 || json_integer_value(g) > 63)
            return bad(c, at, "gpus[%zu]: expected a card index 0..63", i);
        if (seen & (1ull << json_integer_value(g)))
            return bad(c, at, "gpus[%zu]: card %lld is listed twice", i,
                       (long long)json_integer_value(g));
        seen |= 1ull << json_integer_value(g);
        if (c->doc->nspans == RP_SPANS_MAX)
            return bad(c, at, "more than %u card spans in the file", RP_SPANS_MAX);
        struct rp_span *v =
            gs_grow(c->run->spans, &c->run->capspans, c->run->nspans + 1, sizeof(*v), 1024);
        if (!v)
            return oom(c);
        c->run->spans = v;
        sp.gpu = (int16_t)json_integer_value(g);
        c->run->spans[c->run->nspans++] = sp;
        c->doc->nspans++;
    }
    return 0;
}

/* scenario_pod() - bill, wait and spans of pod @p (at @at). */
static int scenario_pod(struct ctx *c, const json_t *p, const char *at)
{
    struct rp_run *r = c->run;
    int rc = r->bill ? 0 : gs_bill_new(c->doc->rc, &r->bill);
    if (rc)
        return oom(c);
    if ((rc = gs__bill_pod(p, at, r->bill, &r->last, c->s->d)) != 0) {
        char msg[GS_DIAG_MSG_MAX];
        memcpy(msg, c->s->d->msg, sizeof(msg));
        return gs_diag_error_code(c->s->d, rc, "%s: %s", c->doc->path, msg);
    }
    json_t *name = json_object_get(p, "name"), *kind = json_object_get(p, "workload");
    json_t *wait = json_object_get(p, "wait_s"), *pls = json_object_get(p, "placements");
    json_t *usage = json_object_get(p, "usage");
    if (!wait) /* its type was checked with the pod's other figures (gs__bill_pod()) */
        return bad(c, at, "wait_s: expected seconds (an integer >= 0) or null, missing");
    /* no gpusched.io/workload label: the simulator writes "", gpuschedd null */
    const char *k =
        json_is_string(kind) && *json_string_value(kind) ? json_string_value(kind) : "(none)";
    if ((rc = wait_into(c, k, wait)) != 0)
        return rc;
    if (json_is_string(name)) {
        const char **v = gs_grow(r->names, &r->capnames, r->nnames + 1, sizeof(*v), 1024);
        if (!v)
            return oom(c);
        r->names = v;
        if (!(v[r->nnames] = strdup(json_string_value(name))))
            return oom(c);
        r->nnames++;
    }
    if (!pls) {
        r->placements_missing = 1;
        return 0;
    }
    if (!json_is_array(pls) || json_array_size(pls) != json_array_size(usage))
        return bad(c, at, "placements: expected an array as long as usage");
    int32_t tenant =
        gs_names_intern(&c->doc->tenants, json_string_value(json_object_get(p, "tenant")));
    if (tenant < 0)
        return oom(c);
    char pat[AT_MAX];
    for (size_t i = 0; i < json_array_size(pls) && !rc; i++) {
        pathf(pat, "%s.placements[%zu]", at, i);
        if (!json_is_object(json_array_get(pls, i)))
            return bad(c, pat, "expected an object");
        rc = placement(c, json_array_get(pls, i), json_array_get(usage, i), tenant, pat);
    }
    return rc;
}

/* fold() - @v, as compact JSON with sorted keys and its NUL, folded into the FNV-1a hash *@h
 * (0: none yet), so a comparison's top level can be held to its last way (ways_whole()) as
 * gpusched bill holds it, key order aside. */
static int fold(struct ctx *c, const json_t *v, uint64_t *h)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!text)
        return oom(c);
    uint64_t x = *h ? *h : 14695981039346656037ull;
    for (const unsigned char *t = (const unsigned char *)text;; t++) {
        x = (x ^ *t) * 1099511628211ull; /* the NUL too: it ends one value and begins the next */
        if (!*t)
            break;
    }
    *h = x;
    free(text);
    return 0;
}

static int pod_element(struct gs_js *s, size_t i, void *ud)
{
    struct ctx *c = ud;
    struct rp_run *r = c->run;
    if (r->npods == RP_PODS_MAX)
        return bad(c, c->at, "more than %d pods", RP_PODS_MAX);
    r->npods++;
    if (c->replay)
        return gs_js_skip(s); /* a replay's figures are in its summary and curve */
    char at[AT_MAX];
    json_t *p;
    pathf(at, "%s%spods[%zu]", c->at, *c->at ? "." : "", i);
    int rc = gs_js_value(s, &p);
    if (rc)
        return rc;
    if (!json_is_object(p))
        rc = bad(c, at, "expected an object, got %s", gs__json_type_name(p));
    else if ((rc = fold(c, p, &c->run->pods_hash)) != 0) {
        /* out of memory, said */
    } else if (json_object_get(p, "usage")) {
        r->scenario_pods++;
        rc = scenario_pod(c, p, at);
    } else if (r->plain_pods++ == 0) {
        pathf(r->first_plain, "%s", at);
    }
    json_decref(p);
    return rc;
}

static const char *const eviction_kinds[RP_EVICTION_KINDS] = {"preemption", "reclaim", "node"};

static int eviction_element(struct gs_js *s, size_t i, void *ud)
{
    struct ctx *c = ud;
    struct rp_run *r = c->run;
    char at[AT_MAX];
    json_t *e, *tenant, *kind;
    int64_t t;
    pathf(at, "%s.evictions[%zu]", c->at, i);
    int rc = gs_js_value(s, &e);
    if (rc)
        return rc;
    if (!json_is_object(e))
        rc = bad(c, at, "expected an object");
    if (!rc)
        rc = field_int(c, e, "t_s", at, &t);
    if (!rc)
        rc = field(c, e, "tenant", at, JSON_STRING, &tenant);
    if (!rc)
        rc = field(c, e, "kind", at, JSON_STRING, &kind);
    int k = rc ? 0 : key_of(eviction_kinds, RP_EVICTION_KINDS, json_string_value(kind));
    if (!rc && k < 0)
        rc = bad(c, at, "kind: expected \"preemption\", \"reclaim\" or \"node\"");
    if (!rc && c->doc->nevictions == RP_EVICTIONS_MAX)
        rc = bad(c, at, "more than %u evictions in the file", RP_EVICTIONS_MAX);
    int32_t tn = rc ? 0 : gs_names_intern(&c->doc->tenants, json_string_value(tenant));
    struct rp_eviction *v = rc ? NULL : gs_grow(r->ev, &r->capev, r->nev + 1, sizeof(*v), 256);
    if (!rc && (tn < 0 || !v))
        rc = oom(c);
    else if (!rc)
        r->ev = v;
    if (!rc) {
        r->ev[r->nev++] = (struct rp_eviction){t, tn, k};
        c->doc->nevictions++;
        rc = fold(c, e, &r->tl_hash);
    }
    json_decref(e);
    return rc;
}

/* series() - @a is an array of @n integers (at @at). */
static int series(struct ctx *c, const json_t *a, int64_t n, const char *at)
{
    if (!json_is_array(a) || (int64_t)json_array_size(a) != n)
        return bad(c, at, "expected an array of %lld integers (timeline.steps)", (long long)n);
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) > INT64_MAX / 4)
            return bad(c, at, "[%zu]: expected an integer in 0..2^61 (milli-GPU)", i);
    }
    return 0;
}

/* check_lines() - each of @list's objects has a string "name" no other has and the series
 * @keys, and where @count is not NULL an integer >= 0 of that key (a queue's "weight", written
 * beside its series and not drawn); a key besides them is named in a warning. */
static int check_lines(struct ctx *c, const json_t *list, const char *what, const char *const *keys,
                       const char *count)
{
    char at[AT_MAX], kat[AT_MAX];
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *o = json_array_get(list, i), *name;
        pathf(at, "%s.%s[%zu]", c->at, what, i);
        int rc = json_is_object(o) ? field(c, o, "name", at, JSON_STRING, &name)
                                   : bad(c, at, "expected an object");
        for (size_t j = 0; !rc && j < i; j++)
            if (json_equal(name, json_object_get(json_array_get(list, j), "name")))
                rc = bad(c, at, "name %.64s: %s[%zu] has that name too", json_string_value(name),
                         what, j);
        for (const char *const *k = keys; !rc && *k; k++) {
            join(kat, at, *k);
            rc = series(c, json_object_get(o, *k), c->run->steps, kat);
        }
        const json_t *n = count ? json_object_get(o, count) : NULL;
        if (!rc && count && (!json_is_integer(n) || json_integer_value(n) < 0)) {
            join(kat, at, count);
            rc = bad(c, kat, "expected an integer >= 0");
        }
        if (rc)
            return rc;
        const char *key;
        json_t *v;
        json_object_foreach(o, key, v)
        {
            const char *const *k = keys;
            while (*k && strcmp(*k, key))
                k++;
            if (!*k && strcmp(key, "name") && (!count || strcmp(key, count)))
                gs__cli_say("report", "warning: %s: %s.%s is not read by this report", c->doc->path,
                            at, key);
        }
    }
    return 0;
}

static int timeline_member(struct gs_js *s, const char *key, void *ud)
{
    static const char *const keys[] = {"step_s",  "steps",  "capacity_milli",
                                       "tenants", "queues", "evictions"};
    struct ctx *c = ud;
    struct rp_run *r = c->run;
    int k = key_of(keys, 6, key);
    json_t *v = NULL;
    if (k < 0) { /* read, as bill does, to hold a top level's to its last way's */
        int rc = gs_js_value(s, &v);
        json_t *kv = rc ? NULL : json_pack("{s:O}", key, v);
        rc = rc ? rc : !kv ? oom(c) : fold(c, kv, &r->tl_hash);
        json_decref(kv);
        json_decref(v);
        return rc ? rc : (warn_unknown(c, key), 0);
    }
    int rc = once(c, k, key);
    if (!rc && k == 5)
        return gs_js_array(s, eviction_element, c);
    if (!rc)
        rc = value(c, key, k < 3 ? JSON_INTEGER : JSON_ARRAY, &v);
    if (rc)
        return rc;
    if (k < 3) {
        int64_t x = json_integer_value(v);
        json_decref(v);
        if (x < (k == 0) || x > (k == 1 ? 100000 : INT64_MAX / 4)) {
            char at[AT_MAX];
            join(at, c->at, key);
            return bad(c, at, "%lld is out of range", (long long)x);
        }
        *(k == 0 ? &r->step_s : k == 1 ? &r->steps : &r->capacity_milli) = x;
    } else {
        *(k == 3 ? &r->tl_tenants : &r->tl_queues) = v;
    }
    return 0;
}

static int timeline(struct ctx *c)
{
    static const char *const tkeys[] = {"allocated_milli", "busy_milli", NULL};
    static const char *const qkeys[] = {"deserved_milli", "allocated_milli", "demand_milli", NULL};
    struct ctx t = *c;
    join(t.at, c->at, "timeline");
    t.seen = 0;
    int rc = gs_js_object(c->s, timeline_member, &t);
    if (!rc && (t.seen & 0x3f) != 0x3f)
        rc = bad(c, t.at, "expected step_s, steps, capacity_milli, tenants, queues and evictions");
    if (!rc)
        rc = check_lines(&t, c->run->tl_tenants, "tenants", tkeys, NULL);
    if (!rc)
        rc = check_lines(&t, c->run->tl_queues, "queues", qkeys, "weight");
    c->run->has_timeline = !rc;
    return rc;
}

/* The summary figures the page draws, where a file gives them (an older one may not), as the
 * simulator writes them: a fraction of 0..1, a count, an amount of 0 or more, or an object of
 * percentages (null: no arrival near that point) or of counts. */
enum fig { FIG_FRACTION, FIG_COUNT, FIG_AMOUNT, FIG_PCTS, FIG_COUNTS };

static int figure_ok(const json_t *v, enum fig k)
{
    double x = json_number_value(v);
    if (k == FIG_COUNT)
        return json_is_integer(v) && json_integer_value(v) >= 0;
    if (k == FIG_FRACTION || k == FIG_AMOUNT)
        return json_is_number(v) && x >= 0 && (k == FIG_AMOUNT || x <= 1);
    const char *key;
    json_t *e;
    if (!json_is_object(v))
        return 0;
    json_object_foreach((json_t *)v, key, e)
    {
        if (k == FIG_PCTS ? !json_is_null(e) && !(json_is_number(e) && json_number_value(e) >= 0 &&
                                                  json_number_value(e) <= 100)
                          : !figure_ok(e, FIG_COUNT))
            return 0;
    }
    return 1;
}

static int summary_figures(struct ctx *c, const json_t *summary)
{
    static const struct {
        const char *key;
        enum fig kind;
        const char *want;
    } figs[] = {
        {"gpu_allocation_ratio", FIG_FRACTION, "a fraction 0..1"},
        {"gpu_utilization", FIG_FRACTION, "a fraction 0..1"},
        {"jain_fairness", FIG_FRACTION, "a fraction 0..1"},
        {"preemptions", FIG_COUNT, "an integer >= 0"},
        {"reclaims", FIG_COUNT, "an integer >= 0"},
        {"pods_placed", FIG_COUNT, "an integer >= 0"},
        {"pods_failed", FIG_COUNT, "an integer >= 0"},
        {"unallocated_gpus", FIG_AMOUNT, "a number >= 0"},
        {"fragmented_gpus", FIG_AMOUNT, "a number >= 0"},
        {"gpu_allocation_at_arrived_pct", FIG_PCTS, "an object of percentages 0..100 or null"},
        {"failed_by_reason", FIG_COUNTS, "an object of integers >= 0"},
    };
    char at[AT_MAX];
    for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++) {
        const json_t *v = json_object_get(summary, figs[i].key);
        if (v && !figure_ok(v, figs[i].kind)) {
            pathf(at, "%s%ssummary.%s", c->at, *c->at ? "." : "", figs[i].key);
            return bad(c, at, "expected %s", figs[i].want);
        }
    }
    return 0;
}

/* run_member() - a member of a run object (the document itself, a way, a replay's run). */
static int run_member(struct gs_js *s, const char *key, void *ud)
{
    static const char *const keys[] = {"way",     "policy",   "seed", "pods",
                                       "summary", "timeline", "curve"};
    struct ctx *c = ud;
    int k = key_of(keys, 7, key);
    if (k < 0)
        return unknown(c, key);
    int rc = once(c, k, key);
    json_t *v = NULL;
    if (rc)
        return rc;
    switch (k) {
    case 0:
    case 1:
        return c->run->name ? bad(c, c->at, "both way and policy")
                            : take_name(c, key, &c->run->name);
    case 2:
        if ((rc = value(c, key, JSON_INTEGER, &v)) == 0)
            c->run->seed = json_integer_value(v);
        json_decref(v);
        return rc;
    case 3: {
        struct ctx p = *c;
        c->run->has_pods = 1;
        return gs_js_array(s, pod_element, &p);
    }
    case 4:
        rc = value(c, key, JSON_OBJECT, &c->run->summary);
        return rc ? rc : summary_figures(c, c->run->summary);
    case 5:
        return timeline(c);
    default:
        return value(c, key, JSON_OBJECT, &c->run->curve);
    }
}

/* run_element() - one run of "ways" or "runs". */
static int run_element(struct gs_js *s, size_t i, void *ud)
{
    struct ctx *c = ud;
    struct rp_run ***list = c->replay ? &c->doc->runs : &c->doc->ways;
    size_t *n = c->replay ? &c->doc->nruns : &c->doc->nways;
    if (*n == RP_RUNS_MAX)
        return bad(c, c->at, "more than %d runs", RP_RUNS_MAX);
    struct rp_run **v = realloc(*list, (*n + 1) * sizeof(*v));
    if (!v)
        return oom(c);
    *list = v;
    if (!(v[*n] = run_new()))
        return oom(c);
    struct ctx r = *c;
    r.run = v[(*n)++];
    r.seen = 0;
    pathf(r.at, "%s[%zu]", c->at, i);
    return gs_js_object(s, run_member, &r);
}

static int doc_member(struct gs_js *s, const char *key, void *ud)
{
    struct ctx *c = ud;
    if (strcmp(key, "ways") == 0 || strcmp(key, "runs") == 0) {
        struct ctx r = *c;
        int rc = once(c, key[0] == 'w' ? 8 : 9, key);
        r.replay = key[0] == 'r';
        c->doc->has_ways |= key[0] == 'w';
        pathf(r.at, "%s", key);
        return rc ? rc : gs_js_array(s, run_element, &r);
    }
    if (strcmp(key, "cluster") == 0 || strcmp(key, "mean") == 0) {
        int rc = once(c, key[0] == 'c' ? 10 : 11, key);
        return rc ? rc
                  : value(c, key, JSON_OBJECT, key[0] == 'c' ? &c->doc->cluster : &c->doc->mean);
    }
    return run_member(s, key, ud); /* the document is a run itself (its last way) */
}

static int read_doc(struct gs_js *s, struct rp_doc *doc)
{
    struct ctx c = {.s = s, .doc = doc, .run = doc->top};
    int rc = gs_js_object(s, doc_member, &c);
    return rc ? rc : gs_js_end(s);
}

/* ---- What the page shows ---- */

static void put(json_t *o, const char *key, json_t *v, int *failed)
{
    if (json_object_set_new(o, key, v) != 0)
        *failed = 1;
}

static json_t *int_list(const int64_t *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_integer((json_int_t)v[i]));
    return a;
}

/* Evictions per timeline step, one series per victim tenant and cause. */
static json_t *evictions_out(const struct rp_doc *doc, const struct rp_run *r, int *failed)
{
    json_t *list = json_array();
    size_t nt = doc->tenants.n, steps = (size_t)r->steps;
    const size_t nk = RP_EVICTION_KINDS;
    int64_t *counts = calloc(nk * nt * (steps ? steps : 1), sizeof(*counts));
    if (!counts || !list) {
        *failed = 1;
        free(counts);
        return list;
    }
    for (size_t i = 0; i < r->nev; i++) {
        int64_t k = r->ev[i].t_s / r->step_s;
        k = k < 0 ? 0 : k >= (int64_t)steps ? (int64_t)steps - 1 : k;
        if (steps)
            counts[((size_t)r->ev[i].tenant * nk + (size_t)r->ev[i].kind) * steps + (size_t)k]++;
    }
    for (size_t t = 0; t < nt; t++)
        for (size_t kind = 0; kind < nk; kind++) {
            const int64_t *row = counts + (t * nk + kind) * steps;
            int64_t sum = 0;
            for (size_t k = 0; k < steps; k++)
                sum += row[k];
            if (sum && json_array_append_new(
                           list, json_pack("{s:s,s:s,s:I,s:o}", "tenant", doc->tenants.v[t], "kind",
                                           eviction_kinds[kind], "total", (json_int_t)sum, "counts",
                                           int_list(row, steps))) != 0)
                *failed = 1;
        }
    free(counts);
    return json_pack("{s:I,s:I,s:o}", "step_s", (json_int_t)r->step_s, "total", (json_int_t)r->nev,
                     "series", list);
}

static json_t *waits_out(const struct rp_run *r)
{
    json_t *kinds = json_array();
    for (size_t k = 0; kinds && k < r->nkinds; k++)
        json_array_append_new(kinds, json_pack("{s:s,s:I,s:o}", "name", r->kinds[k].name, "pods",
                                               (json_int_t)r->kinds[k].pods, "counts",
                                               int_list(r->kinds[k].counts, GS_WAIT_BINS)));
    return json_pack("{s:o,s:o}", "edges_s", int_list(gs_wait_edges_s, GS_WAIT_BINS - 1), "kinds",
                     kinds);
}

static json_t *money(int64_t udollars, const char *currency)
{
    char human[GS_MONEY_HUMAN_MAX];
    return json_string(gs_money_format_human(udollars, currency, human));
}

/* Each tenant's bill: the total and its part per mode, as `gpusched bill` lines sum them. */
static json_t *bill_out(const struct rp_doc *doc, struct rp_run *r)
{
    const char *cur = gs_ratecard_currency(doc->rc);
    json_t *tenants = json_array(), *t = NULL;
    size_t it = 0;
    const char *last = NULL;
    for (const struct gs_bill_line *l; r->bill && (l = gs_bill_next(r->bill, &it)) != NULL;) {
        if (!last || strcmp(last, l->tenant) != 0) {
            int64_t total = gs_bill_total_udollars(r->bill, l->tenant);
            t = json_pack("{s:s,s:I,s:o,s:{}}", "name", l->tenant, "total_udollars",
                          (json_int_t)total, "total", money(total, cur), "by_mode_udollars");
            if (!t || json_array_append_new(tenants, t) != 0) {
                json_decref(tenants);
                return NULL;
            }
            last = l->tenant;
        }
        json_t *by = json_object_get(t, "by_mode_udollars");
        const char *mode = gs_bill_mode_name(l->mode);
        json_int_t was = json_integer_value(json_object_get(by, mode));
        json_object_set_new(by, mode, json_integer(was + l->cost_udollars));
    }
    int64_t all = r->bill ? gs_bill_total_udollars(r->bill, NULL) : 0;
    return json_pack("{s:s,s:I,s:o,s:o}", "currency", cur, "total_udollars", (json_int_t)all,
                     "total", money(all, cur), "tenants", tenants);
}

static json_t *way_out(const struct rp_doc *doc, struct rp_run *r)
{
    int failed = 0;
    json_t *o = json_pack("{s:s,s:O}", "way", r->name ? r->name : "run", "summary", r->summary);
    if (!o)
        return NULL;
    if (r->has_timeline) {
        put(o, "timeline",
            json_pack("{s:I,s:I,s:I,s:O,s:O}", "step_s", (json_int_t)r->step_s, "steps",
                      (json_int_t)r->steps, "capacity_milli", (json_int_t)r->capacity_milli,
                      "tenants", r->tl_tenants, "queues", r->tl_queues),
            &failed);
        put(o, "evictions", evictions_out(doc, r, &failed), &failed);
    }
    put(o, "waits", waits_out(r), &failed);
    put(o, "bill", bill_out(doc, r), &failed);
    if (r->map)
        put(o, "map", json_incref(r->map), &failed);
    if (failed) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* bp() - a percentage (number) as integer basis points; -1 for null or anything else. */
static int64_t bp(const json_t *v)
{
    if (!json_is_number(v))
        return -1;
    double x = json_number_value(v) * 100.0;
    return x < 0 ? -1 : (int64_t)(x + 0.5);
}

/* A policy's curve: the mean over its seeds at each arrived % every seed reached; its runs'
 * curves, else (a file written before curves) their summaries' six points. */
static json_t *policy_curve(struct rp_run **runs, size_t n)
{
    json_t *arrived = json_array(), *alloc = json_array();
    int from_points = 0;
    for (int pct = 0; pct <= 1000; pct++) {
        int64_t sum = 0, got = 0;
        char key[8];
        snprintf(key, sizeof(key), "%d", pct);
        for (size_t i = 0; i < n; i++) {
            const json_t *c = runs[i]->curve;
            int64_t v =
                c ? bp(json_array_get(json_object_get(c, "allocation_pct"), (size_t)pct))
                  : bp(json_object_get(
                        json_object_get(runs[i]->summary, "gpu_allocation_at_arrived_pct"), key));
            from_points |= !c;
            if (v >= 0) {
                sum += v;
                got++;
            }
        }
        if (got == (int64_t)n && n > 0) {
            json_array_append_new(arrived, json_integer(pct));
            json_array_append_new(alloc, json_real((double)((2 * sum + got) / (2 * got)) / 100.0));
        }
    }
    return json_pack("{s:o,s:o,s:b}", "arrived_pct", arrived, "allocation_pct", alloc,
                     "from_summary_points", from_points);
}

/* A replay run's policy: its own "policy", else its summary's (a file of one run). */
static const char *policy_name(const struct rp_run *r)
{
    const char *s = json_string_value(json_object_get(r->summary, "policy"));
    return r->name ? r->name : s ? s : "run";
}

static json_t *replay_out(struct rp_doc *doc, struct rp_run **runs, size_t n)
{
    json_t *pols = json_array();
    for (size_t i = 0; pols && i < n; i++) {
        const char *name = policy_name(runs[i]);
        size_t k = 0;
        for (; k < json_array_size(pols); k++)
            if (strcmp(json_string_value(json_object_get(json_array_get(pols, k), "name")), name) ==
                0)
                break;
        if (k < json_array_size(pols))
            continue; /* done with its first run */
        struct rp_run **mine = malloc(n * sizeof(*mine));
        json_t *seeds = json_array();
        size_t m = 0;
        for (size_t j = i; mine && j < n; j++)
            if (strcmp(policy_name(runs[j]), name) == 0) {
                mine[m++] = runs[j];
                json_array_append_new(seeds, json_integer(runs[j]->seed));
            }
        json_t *mean = json_object_get(doc->mean, name);
        json_t *p = mine ? json_pack("{s:s,s:o,s:O,s:o}", "name", name, "seeds", seeds, "summary",
                                     mean ? mean : runs[i]->summary, "curve", policy_curve(mine, m))
                         : NULL;
        free(mine);
        if (!p || json_array_append_new(pols, p) != 0) {
            json_decref(pols);
            return NULL;
        }
    }
    return json_pack("{s:s,s:o}", "kind", "replay", "policies", pols);
}

/* ---- The command ---- */

/* same_timeline() - @a's timeline, where it has one, is @b's. */
static int same_timeline(const struct rp_run *a, const struct rp_run *b)
{
    if (!a->has_timeline)
        return 1;
    return b->has_timeline && a->step_s == b->step_s && a->steps == b->steps &&
           a->capacity_milli == b->capacity_milli && json_equal(a->tl_tenants, b->tl_tenants) &&
           json_equal(a->tl_queues, b->tl_queues) && a->nev == b->nev && a->tl_hash == b->tl_hash;
}

/* ways_whole() - every way of a comparison names itself once and lists its pods (as gpusched
 * bill asks of them), and the top level, where it has its own, repeats its last way (as
 * gs__json_top_is_last_way() asks): its way, summary, pods and timeline, key order aside. */
static int ways_whole(struct gs_js *s, const struct rp_doc *doc)
{
    if (!doc->has_ways)
        return 0;
    if (!doc->nways)
        return gs_diag_error(s->d, "%s: ways: empty; a simulation writes at least one way",
                             doc->path);
    for (size_t i = 0; i < doc->nways; i++) {
        const struct rp_run *w = doc->ways[i];
        if (!w->name || !w->has_pods)
            return gs_diag_error(s->d, "%s: ways[%zu].%s: missing", doc->path, i,
                                 w->name ? "pods" : "way");
        for (size_t k = 0; k < i; k++)
            if (!strcmp(doc->ways[k]->name, w->name))
                return gs_diag_error(s->d, "%s: ways[%zu].way: \"%.40s\" is also ways[%zu]",
                                     doc->path, i, w->name, k);
    }
    const struct rp_run *t = doc->top, *w = doc->ways[doc->nways - 1];
    const char *key = t->name && strcmp(t->name, w->name)                 ? "way"
                      : t->summary && !json_equal(t->summary, w->summary) ? "summary"
                      : t->has_pods && (t->npods != w->npods || t->pods_hash != w->pods_hash)
                          ? "pods"
                      : !same_timeline(t, w) ? "timeline"
                                             : NULL;
    if (key)
        return gs_diag_error(s->d,
                             "%s: %s: not ways[%zu].%s: a comparison's top level repeats its "
                             "last way",
                             doc->path, key, doc->nways - 1, key);
    return 0;
}

/* classify() - is the document a replay (1) or a scenario run (0); errors for a mix. */
static int classify(struct gs_js *s, struct rp_doc *doc, int *replay)
{
    struct rp_run *t = doc->top;
    int scenario = doc->nways > 0 || doc->cluster || t->has_timeline || t->scenario_pods > 0 ||
                   (t->name && !t->curve);
    *replay = doc->nruns > 0 || t->curve ||
              json_object_get(t->summary, "gpu_allocation_at_arrived_pct") != NULL;
    if (scenario == *replay)
        return gs_diag_error(s->d, "%s: %s", doc->path,
                             scenario ? "has both a replay's runs and a scenario's ways"
                                      : "is neither a replay nor a scenario run of gpusched "
                                        "simulate --json (no summary, runs or ways)");
    int rc = *replay ? 0 : ways_whole(s, doc);
    if (rc)
        return rc;
    struct rp_run **list = doc->nways ? doc->ways : &doc->top;
    for (size_t i = 0; !*replay && i < (doc->nways ? doc->nways : 1); i++) {
        if (list[i]->plain_pods)
            return gs_diag_error(s->d, "%s: %s: a scenario pod without \"usage\"", doc->path,
                                 list[i]->first_plain);
        char at[AT_MAX];
        if (doc->nways)
            pathf(at, "ways[%zu]", i);
        else
            at[0] = '\0';
        if (!list[i]->summary)
            return gs_diag_error(s->d, "%s: %s%ssummary: missing", doc->path, at, *at ? "." : "");
        if (list[i]->name && gs_way_find(list[i]->name) < 0)
            return gs_diag_error(s->d,
                                 "%s: %s%sway: \"%.40s\" is not a way the simulator runs "
                                 "(exclusive, sharing, full)",
                                 doc->path, at, *at ? "." : "", list[i]->name);
        rc = gs__names_unique(list[i]->names, list[i]->nnames, at, s->d);
        if (!rc)
            rc = gs__summary_agrees(list[i]->summary, &list[i]->last, at, s->d);
        if (rc) { /* named in the file, as every other message of the document */
            char msg[GS_DIAG_MSG_MAX];
            memcpy(msg, s->d->msg, sizeof(msg));
            return gs_diag_error_code(s->d, rc, "%s: %s", doc->path, msg);
        }
    }
    if (*replay && t->scenario_pods)
        return gs_diag_error(s->d, "%s: a replay whose pods have usage", doc->path);
    return 0;
}

static json_t *scenario_out(struct rp_doc *doc, struct gs_diag *d, int *rc)
{
    struct rp_run **list = doc->nways ? doc->ways : &doc->top;
    size_t n = doc->nways ? doc->nways : 1;
    json_t *states = NULL, *ways = json_array(), *tenants = json_array();
    int placed = doc->cluster != NULL;
    for (size_t i = 0; i < n; i++)
        placed &= !list[i]->placements_missing;
    if (placed && (*rc = rp_map(doc, list, n, &states, d)) != 0) {
        json_decref(ways);
        json_decref(tenants);
        return NULL;
    }
    for (size_t i = 0; ways && i < n; i++)
        json_array_append_new(ways, way_out(doc, list[i]));
    for (size_t i = 0; tenants && i < doc->tenants.n; i++)
        json_array_append_new(tenants, json_string(doc->tenants.v[i]));
    return json_pack("{s:s,s:o,s:o,s:O?,s:o?,s:s?}", "kind", "scenario", "ways", ways, "tenants",
                     tenants, "cluster", placed ? doc->cluster : NULL, "states", states, "map_note",
                     placed ? NULL
                            : "no cluster map: the file has no cluster or placements (written by "
                              "an older gpusched simulate)");
}

static void doc_free(struct rp_doc *doc)
{
    run_free(doc->top);
    for (size_t i = 0; i < doc->nways; i++)
        run_free(doc->ways[i]);
    for (size_t i = 0; i < doc->nruns; i++)
        run_free(doc->runs[i]);
    free(doc->ways);
    free(doc->runs);
    json_decref(doc->mean);
    json_decref(doc->cluster);
    gs_names_free(&doc->nodes);
    gs_names_free(&doc->tenants);
    gs_names_free(&doc->profiles);
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

int cmd_report(int argc, char **argv)
{
    struct ropts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct gs_diag d;
    struct gs_ratecard *rc_card = NULL;
    struct rp_doc doc = {.path = o.file,
                         .nodes.max = RP_NAMES_MAX,
                         .tenants.max = RP_NAMES_MAX,
                         .profiles.max = RP_NAMES_MAX};
    struct gs_js s;
    json_t *data = NULL;
    int replay = 0;
    gs_diag_init(&d);
    rc = gs__cli_check_outputs((const char *[]){o.out}, (const char *[]){"-o"}, 1,
                               (const char *[]){o.file, o.rates, o.chart_js}, 3, &d);
    if (!rc)
        rc = gs__cli_of_option("--rates", gs_ratecard_load(o.rates, &rc_card, &d), &d);
    doc.rc = rc_card;
    if (!rc && !(doc.top = run_new()))
        rc = gs_diag_error_code(&d, -ENOMEM, "out of memory");
    if (!rc && (rc = gs_js_open(&s, o.file, VALUE_MAX, &d)) == 0) {
        rc = read_doc(&s, &doc);
        if (!rc)
            rc = classify(&s, &doc, &replay);
        gs_js_close(&s);
    }
    if (!rc)
        data = replay ? replay_out(&doc, doc.nruns ? doc.runs : &doc.top, doc.nruns ? doc.nruns : 1)
                      : scenario_out(&doc, &d, &rc);
    if (!rc && !data)
        rc = gs_diag_error_code(&d, -ENOMEM, "out of memory");
    if (!rc) {
        const char *title = o.title ? o.title : base_name(o.file);
        json_object_set_new(data, "title", json_string(title));
        json_object_set_new(data, "source", json_string(base_name(o.file)));
        json_object_set_new(data, "generator", json_string("gpusched " GS_VERSION));
        char assets[GS_DATA_PATH_MAX];
        rc = rp_write_html(o.out, title, data, o.chart_js,
                           gs_data_file(GS_DATA_REPORT, assets, sizeof(assets)), &d);
    }
    json_decref(data);
    doc_free(&doc);
    gs_ratecard_free(rc_card);
    if (!rc)
        return 0;
    gs__cli_say("report", "%s", d.msg[0] ? d.msg : strerror(-rc));
    return rc == -ENOMEM || rc == -EIO ? 1 : EXIT_BAD_INPUT;
}
