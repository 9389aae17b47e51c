/* gpusched bill: price the simulator's JSON output with a rate card, per tenant, resource, day. */
#include "cli.h"

#include "gpusched/datadir.h"
#include "gpusched/billing.h"
#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/policy.h"
#include "gpusched/tenancy.h"

#include "../config/yamlutil.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_BYTES (256u * 1024u * 1024u) /* ~1M pods; jansson holds ~10x the file */
#define WAYS_MAX       64
#define WAY_NAME_MAX   64
/* JSON paths in messages: "ways[63]", "ways[63].pods[N]", "ways[63].pods[N].usage[N]" */
#define WAY_AT 32
#define POD_AT (WAY_AT + 40)
#define USE_AT (POD_AT + 40)
#define NCOL   7

enum format { FMT_TABLE, FMT_CSV, FMT_JSON };

struct opts {
    const char *file, *rates, *way, *tenant;
    enum format fmt;
};

struct way {
    const char *name; /* owned by the JSON document */
    struct gs_bill *bill;
};

struct input {
    json_t *root;
    struct gs_ratecard *rc;
    struct way way[WAYS_MAX];
    size_t nway;
};

static void usage(FILE *f)
{
    char rates[GS_DATA_PATH_MAX];
    fprintf(f,
            "usage: gpusched bill [options] FILE.json\n"
            "  Prices the pods of a `gpusched simulate --json` file (one run, or a comparison\n"
            "  of ways) per tenant, resource and day.\n"
            "  --format F     table (default), csv or json\n"
            "  --rates FILE   the RateCard YAML (default: %s)\n"
            "  --way NAME     only this way of a comparison file (default: every way; a\n"
            "                 single run without \"way\" is named \"run\")\n"
            "  --tenant NAME  only this tenant's lines\n"
            "The table prints amounts as people read them, to the cent ($27,112.95); lines\n"
            "are priced exactly and totals are the exact sums of the lines, each rounded\n"
            "once. CSV and JSON give the exact amounts: integer micro-dollars next to the\n"
            "decimal strings (0.000139).\n",
            gs_data_file(GS_DATA_RATES, rates, sizeof(rates)));
}

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* bad() - a usage error on stderr; returns the exit status for it. */
static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gs__cli_vsay("bill", fmt, ap);
    va_end(ap);
    return EXIT_BAD_INPUT;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        {"format", required_argument, 0, 'f'}, {"rates", required_argument, 0, 'r'},
        {"way", required_argument, 0, 'w'},    {"tenant", required_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0},
    };
    static const char *const formats[] = {"table", "csv", "json"};
    static char rates[GS_DATA_PATH_MAX];
    *o =
        (struct opts){.rates = gs_data_file(GS_DATA_RATES, rates, sizeof(rates)), .fmt = FMT_TABLE};
    int c, k;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return -1;
        }
        if (c == 'f') {
            for (k = 0; k < 3 && strcmp(optarg, formats[k]) != 0; k++)
                ;
            if (k == 3)
                return bad("--format: \"%s\" is not table, csv or json", optarg);
            o->fmt = (enum format)k;
        } else if (c == 'r' || c == 'w' || c == 't') {
            *(c == 'r' ? &o->rates : c == 'w' ? &o->way : &o->tenant) = optarg;
        } else {
            return bad("%s \"%s\" (see gpusched bill --help)", gs_option_problem(c),
                       argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return bad("%s", optind < argc ? "give one FILE.json, not more"
                                       : "no FILE.json given (see gpusched bill --help)");
    o->file = argv[optind];
    return 0;
}

/* ---- Reading the simulator's JSON ---- */

struct capped {
    FILE *f;
    size_t left;                /* bytes still allowed */
    bool over;                  /* the file is longer than JSON_MAX_BYTES */
    size_t chars, chars_before; /* characters of the line read last, of the line before it */
};

/* Count the characters (UTF-8 lead bytes, as jansson counts columns) of the lines in @p. */
static void count_chars(struct capped *c, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n') {
            c->chars_before = c->chars;
            c->chars = 0;
        } else if ((p[i] & 0xC0) != 0x80) {
            c->chars++;
        }
    }
}

static size_t read_capped(void *buf, size_t size, void *data)
{
    struct capped *c = data;
    size_t n = fread(buf, 1, size, c->f);
    c->over = n > c->left;
    if (c->over || (n == 0 && ferror(c->f)))
        return (size_t)-1; /* jansson stops with an error */
    c->left -= n;
    count_chars(c, buf, n);
    return n;
}

/* jansson places an error at the end of a file that ends with a line break at column 0 of a line
 * the file does not have (1:0 in an empty file). Given instead: the last character of the last
 * line (column 1 of an empty one), where jansson puts it when no line break ends the file. */
static void json_end(const struct capped *c, json_error_t *je)
{
    je->line -= je->line > 1;
    je->column = c->chars_before > 1 ? (int)c->chars_before : 1;
}

static int load_json(const char *path, json_t **out, struct gs_diag *d)
{
    struct capped c = {fopen(path, "rb"), JSON_MAX_BYTES, false, 0, 0};
    json_error_t je;
    if (!c.f)
        return gs_diag_error(d, "%s: cannot open: %s", path, strerror(errno));
    json_t *root = json_load_callback(read_capped, &c, JSON_REJECT_DUPLICATES, &je);
    int unreadable = ferror(c.f);
    fclose(c.f);
    if (!root && c.over)
        return gs_diag_error(d, "%s: larger than %u bytes", path, JSON_MAX_BYTES);
    if (!root && unreadable)
        return gs_diag_error(d, "%s: cannot read", path);
    if (!root && je.column == 0) /* see json_end() */
        json_end(&c, &je);
    if (!root)
        return gs_diag_error(d, "%s:%d:%d: JSON error: %s", path, je.line, je.column, je.text);
    *out = root;
    return 0;
}

const char *gs__json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "real";
    case JSON_NULL:
        return "null";
    default:
        return "boolean";
    }
}

int gs__json_field(const json_t *obj, const char *key, const char *at, json_type type, json_t **out,
                   struct gs_diag *d)
{
    static const char *const want[] = {[JSON_OBJECT] = "object",
                                       [JSON_ARRAY] = "array",
                                       [JSON_STRING] = "string",
                                       [JSON_INTEGER] = "integer"};
    json_t *v = json_object_get(obj, key);
    if (!v)
        return gs_diag_error(d, "%s%s%s: expected %s, missing", at, *at ? "." : "", key,
                             want[type]);
    if (json_typeof(v) != type)
        return gs_diag_error(d, "%s%s%s: expected %s, got %s", at, *at ? "." : "", key, want[type],
                             gs__json_type_name(v));
    if (type == JSON_STRING && strlen(json_string_value(v)) != json_string_length(v))
        return gs_diag_error(d, "%s%s%s: a string with a NUL character", at, *at ? "." : "", key);
    *out = v;
    return 0;
}

int gs__json_field_int(const json_t *obj, const char *key, const char *at, int64_t *out,
                       struct gs_diag *d)
{
    json_t *v = NULL;
    int rc = gs__json_field(obj, key, at, JSON_INTEGER, &v, d);
    if (!rc)
        *out = json_integer_value(v);
    return rc;
}

/* key_list() - " (@what has A, B and C)" of the @n keys @known, into @buf (@size bytes). */
static const char *key_list(const char *what, const char *const *known, size_t n, char *buf,
                            size_t size)
{
    size_t off = (size_t)snprintf(buf, size, " (%s has ", what);
    for (size_t i = 0; i < n && off < size; i++)
        off += (size_t)snprintf(buf + off, size - off, "%s%s",
                                !i          ? ""
                                : i + 1 < n ? ", "
                                            : " and ",
                                known[i]);
    if (off < size)
        snprintf(buf + off, size - off, ")");
    return buf;
}

/* known_keys() - every key of @obj (at path @at, "" the document) is one of the @n keys @known,
 * those the simulator writes there (@what: "a pod", for the message). A key the bill does not
 * know could say what it does not price ("gpus" beside "cards") or be one misspelt, whose check
 * would then be skipped; so it is refused, with the key meant when one is near. */
static int known_keys(const json_t *obj, const char *at, const char *const *known, size_t n,
                      const char *what, struct gs_diag *d)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        size_t i = 0;
        while (i < n && strcmp(k, known[i]) != 0)
            i++;
        if (i < n)
            continue;
        char why[320];
        if (!*gs__hint(k, known, (int)n, why, sizeof(why)))
            key_list(what, known, n, why, sizeof(why));
        return gs_diag_error(d, "%s%s%.40s: unknown key%s", at, *at ? "." : "", k, why);
    }
    return 0;
}

/* use_of() - the USE object @u at @at as a gs_bill_use for @tenant. */
static int use_of(const json_t *u, const char *at, const char *tenant, struct gs_bill_use *out,
                  struct gs_diag *d)
{
    static const char *const keys[] = {"mode",        "model",   "profile", "cards",
                                       "share_milli", "start_s", "end_s"};
    json_t *mode, *model, *profile = json_object_get(u, "profile");
    *out = (struct gs_bill_use){.tenant = tenant};
    if (!json_is_object(u))
        return gs_diag_error(d, "%s: expected object, got %s", at, gs__json_type_name(u));
    int rc = known_keys(u, at, keys, sizeof(keys) / sizeof(keys[0]), "a use", d);
    if (!rc)
        rc = gs__json_field(u, "mode", at, JSON_STRING, &mode, d);
    if (rc)
        return rc;
    if ((rc = gs_bill_mode_find(json_string_value(mode))) < 0)
        return gs_diag_error(d, "%s.mode: \"%.40s\" is not exclusive, mig, shared or timeslice", at,
                             json_string_value(mode));
    out->mode = (enum gs_bill_mode)rc;
    if ((rc = gs__json_field(u, "model", at, JSON_STRING, &model, d)) != 0)
        return rc;
    if ((out->model = gs_catalog_find(json_string_value(model), -1)) < 0)
        return gs_diag_error(d, "%s.model: unknown GPU model \"%.40s\"", at,
                             json_string_value(model));
    if (out->mode == GS_BILL_MIG || (profile && !json_is_null(profile))) {
        if ((rc = gs__json_field(u, "profile", at, JSON_STRING, &profile, d)) != 0)
            return rc;
        out->profile = json_string_value(profile);
    }
    if ((rc = gs__json_field_int(u, "cards", at, &out->cards, d)) != 0 ||
        (rc = gs__json_field_int(u, "share_milli", at, &out->share_milli, d)) != 0 ||
        (rc = gs__json_field_int(u, "start_s", at, &out->start_s, d)) != 0)
        return rc;
    return gs__json_field_int(u, "end_s", at, &out->end_s, d);
}

/*
 * in_life() - @use lies inside the pod's life as the pod itself states it: not before its
 * submit_s, not after its end_s (when it has ended), not before the previous use ended (at
 * *@last_end), and a rejected pod has none. Billing a time the pod says it was not running
 * would charge a tenant for nothing.
 */
static int in_life(const json_t *pod, const struct gs_bill_use *use, const char *at,
                   int64_t *last_end, struct gs_diag *d)
{
    const json_t *sub = json_object_get(pod, "submit_s"), *end = json_object_get(pod, "end_s");
    const json_t *start = json_object_get(pod, "start_s");
    const char *state = json_string_value(json_object_get(pod, "state"));
    if (state && strcmp(state, "rejected") == 0)
        return gs_diag_error(d, "%s: a rejected pod never ran, so it has no usage", at);
    if (json_is_null(start))
        return gs_diag_error(d,
                             "%s: the pod's start_s is null: a pod that never started has no "
                             "usage",
                             at);
    if (json_is_integer(start) && use->start_s < json_integer_value(start))
        return gs_diag_error(d, "%s.start_s: %lld is before the pod's start_s %lld", at,
                             (long long)use->start_s, (long long)json_integer_value(start));
    if (json_is_integer(sub) && use->start_s < json_integer_value(sub))
        return gs_diag_error(d, "%s.start_s: %lld is before the pod's submit_s %lld", at,
                             (long long)use->start_s, (long long)json_integer_value(sub));
    if (json_is_integer(end) && use->end_s > json_integer_value(end))
        return gs_diag_error(d, "%s.end_s: %lld is after the pod's end_s %lld", at,
                             (long long)use->end_s, (long long)json_integer_value(end));
    if (use->start_s < *last_end)
        return gs_diag_error(d, "%s.start_s: %lld is before the previous use ended (%lld)", at,
                             (long long)use->start_s, (long long)*last_end);
    *last_end = use->end_s;
    return 0;
}

/* life() - the pod's own times, which the simulator always writes: submit_s an integer, start_s
 * and end_s an integer or null (not started, not ended), in that order; a completed pod has
 * ended, a running one started and not ended, a pending or rejected one not ended. A time missing
 * or of another type would let every use through in_life(). */
static int life(const json_t *pod, const char *at, struct gs_diag *d)
{
    static const char *const key[] = {"submit_s", "start_s", "end_s"};
    int64_t last = INT64_MIN;
    const char *last_key = "";
    for (int i = 0; i < 3; i++) {
        const json_t *v = json_object_get(pod, key[i]);
        if (!v || (!json_is_integer(v) && !(i > 0 && json_is_null(v))))
            return gs_diag_error(d, "%s.%s: expected %s, %s%s", at, key[i],
                                 i ? "integer or null" : "integer", v ? "got " : "missing",
                                 v ? gs__json_type_name(v) : "");
        if (!json_is_integer(v))
            continue;
        if (json_integer_value(v) < last)
            return gs_diag_error(d, "%s.%s: %lld is before the pod's %s %lld", at, key[i],
                                 (long long)json_integer_value(v), last_key, (long long)last);
        last = json_integer_value(v);
        last_key = key[i];
    }
    const char *state = json_string_value(json_object_get(pod, "state"));
    int ended = json_is_integer(json_object_get(pod, "end_s"));
    if (!state)
        return 0; /* known_state() names it */
    if (!strcmp(state, "completed") && !ended)
        return gs_diag_error(d, "%s.end_s: expected integer: a completed pod has ended", at);
    if (!strcmp(state, "running") && !json_is_integer(json_object_get(pod, "start_s")))
        return gs_diag_error(d, "%s.start_s: expected integer: a running pod has started", at);
    if (ended && strcmp(state, "completed") && strcmp(state, "preempted"))
        return gs_diag_error(d, "%s.end_s: expected null: a %s pod has not ended", at, state);
    return 0;
}

/* known_state() - a pod's "state" is given and is one gs_pod_state_name() writes: a bill reads
 * "rejected" as never run, so a state it cannot read, or none, is refused, not taken as run. */
static int known_state(const json_t *state, const char *at, struct gs__pods_seen *seen,
                       struct gs_diag *d)
{
    if (!state)
        return gs_diag_error(d, "%s.state: expected string, missing", at);
    for (int s = GS_POD_PENDING; json_is_string(state) && s <= GS_POD_REJECTED; s++)
        if (strcmp(json_string_value(state), gs_pod_state_name((enum gs_pod_state)s)) == 0) {
            seen->pods++;
            seen->in_state[s]++;
            return 0;
        }
    if (!json_is_string(state))
        return gs_diag_error(d, "%s.state: expected string, got %s", at, gs__json_type_name(state));
    return gs_diag_error(d,
                         "%s.state: \"%.40s\" is not pending, running, completed, preempted or "
                         "rejected",
                         at, json_string_value(state));
}

/* pod_name() - the pod's "name" as the simulator writes it, NAMESPACE/NAME (a DNS label and a
 * DNS subdomain, as a scenario takes them), and its "namespace", where given, the first part.
 * The name tells two pods apart (unique_names()): a pod without one, or with one written another
 * way ("a/p " beside "a/p"), would be billed once per copy. */
static int pod_name(const json_t *pod, const char *at, struct gs_diag *d)
{
    json_t *name, *ns = json_object_get(pod, "namespace");
    int rc = gs__json_field(pod, "name", at, JSON_STRING, &name, d);
    if (rc)
        return rc;
    const char *s = json_string_value(name), *slash = strchr(s, '/');
    size_t nsl = slash ? (size_t)(slash - s) : 0;
    if (!slash || !gs_dns_label_ok(s, nsl) || !gs_dns_subdomain_ok(slash + 1, strlen(slash + 1)))
        return gs_diag_error(d,
                             "%s.name: \"%.80s\" is not NAMESPACE/NAME as the simulator writes it "
                             "(a DNS label, '/', a DNS subdomain)",
                             at, s);
    if (ns && !json_is_string(ns))
        return gs_diag_error(d, "%s.namespace: expected string, got %s", at,
                             gs__json_type_name(ns));
    if (ns && (json_string_length(ns) != nsl || memcmp(json_string_value(ns), s, nsl) != 0))
        return gs_diag_error(d, "%s.namespace: \"%.80s\" contradicts %s.name \"%.80s\"", at,
                             json_string_value(ns), at, s);
    return 0;
}

/*
 * where_agrees() - what @pod says of where it ran agrees with its @usage (@n uses, each read by
 * use_of()): one placement per use; as many cards as its placement lists (slices or replicas of
 * a shared or time-sliced use as many on each card, gpusched.io/same-card); the last use's model
 * the pod's gpu_model, the last placement the pod's node and gpus. A file that
 * says otherwise contradicts itself and is refused (docs/billing.md): a use of a million cards
 * on a pod placed on one, or a use priced as an H100 on a pod that ran on an A100.
 */
static int where_agrees(const json_t *pod, const json_t *usage, size_t n, const char *at,
                        struct gs_diag *d)
{
    const json_t *pl = json_object_get(pod, "placements"),
                 *model = json_object_get(pod, "gpu_model");
    const json_t *last = json_array_get(usage, n - 1);
    const char *lm = json_string_value(json_object_get(last, "model"));
    if (model && !json_is_null(model) &&
        (!json_is_string(model) ||
         gs_catalog_find(json_string_value(model), -1) != gs_catalog_find(lm ? lm : "", -1)))
        return gs_diag_error(d, "%s.gpu_model: %s, but its last use (usage[%zu]) is on %.40s", at,
                             json_is_string(model) ? json_string_value(model) : "not a string",
                             n - 1, lm ? lm : "?");
    if (!pl || json_is_null(pl))
        return 0;
    if (!json_is_array(pl) || json_array_size(pl) != n)
        return gs_diag_error(d, "%s.placements: %zu, but %zu uses: a placement per run", at,
                             json_array_size(pl), n);
    for (size_t i = 0; i < n; i++) {
        const json_t *u = json_array_get(usage, i);
        const json_t *g = json_object_get(json_array_get(pl, i), "gpus");
        const char *mode = json_string_value(json_object_get(u, "mode"));
        json_int_t cards = json_integer_value(json_object_get(u, "cards"));
        json_int_t ng = (json_int_t)json_array_size(g);
        int units = mode && (!strcmp(mode, "shared") || !strcmp(mode, "timeslice"));
        if (ng && (units ? cards % ng != 0 : ng != cards))
            return gs_diag_error(d,
                                 "%s.placements[%zu].gpus: %lld card indexes where usage[%zu] "
                                 "says %lld %s",
                                 at, i, (long long)ng, i, (long long)cards,
                                 units ? "slices (as many on each card)" : "cards");
    }
    const json_t *lp = json_array_get(pl, n - 1);
    static const char *const same[] = {"node", "gpus"};
    for (int k = 0; k < 2; k++) {
        const json_t *v = json_object_get(pod, same[k]);
        if (v && !json_is_null(v) && !json_equal(v, json_object_get(lp, same[k])))
            return gs_diag_error(d, "%s.%s: not what its last placement (placements[%zu]) says", at,
                                 same[k], n - 1);
    }
    return 0;
}

/* figures() - the pod's figures that are not priced are still what the simulator writes, so a
 * file the bill and the report accept is one they read alike: counts and waits integers >= 0
 * (the wait null when the pod never started), the priority a 32-bit integer, the labels text or
 * null. */
static int figures(const json_t *pod, const char *at, struct gs_diag *d)
{
    static const char *const counts[] = {"wait_s", "preemptions", "share_milli"};
    static const char *const texts[] = {"queue", "workload", "reason"};
    for (int i = 0; i < 3; i++) {
        const json_t *v = json_object_get(pod, counts[i]);
        if (v && json_is_integer(v) && json_integer_value(v) < 0)
            return gs_diag_error(d, "%s.%s: %lld is below 0", at, counts[i],
                                 (long long)json_integer_value(v));
        if (v && !json_is_integer(v) && !(i == 0 && json_is_null(v)))
            return gs_diag_error(d, "%s.%s: expected an integer >= 0%s, got %s", at, counts[i],
                                 i == 0 ? " (seconds) or null" : "", gs__json_type_name(v));
        v = json_object_get(pod, texts[i]);
        if (v && !json_is_string(v) && !json_is_null(v))
            return gs_diag_error(d, "%s.%s: expected string or null, got %s", at, texts[i],
                                 gs__json_type_name(v));
    }
    const json_t *pr = json_object_get(pod, "priority");
    if (pr && !(json_is_integer(pr) && json_integer_value(pr) >= INT32_MIN &&
                json_integer_value(pr) <= INT32_MAX))
        return gs_diag_error(d, "%s.priority: expected a 32-bit integer, got %s", at,
                             gs__json_type_name(pr));
    return 0;
}

int gs__bill_pod(const json_t *pod, const char *at, struct gs_bill *b, struct gs__pods_seen *seen,
                 struct gs_diag *d)
{
    /* what the simulator writes of a pod (docs/scenario.md#output); the bill prices usage */
    static const char *const pod_keys[] = {
        "name",        "tenant", "namespace", "queue",       "workload", "state",     "node",
        "gpus",        "mig",    "gpu_model", "share_milli", "priority", "submit_s",  "wait_s",
        "preemptions", "reason", "start_s",   "end_s",       "usage",    "placements"};
    json_t *tenant, *usage = NULL, *u;
    size_t j;
    int64_t last_end = INT64_MIN;
    char uat[USE_AT];
    if (!json_is_object(pod))
        return gs_diag_error(d, "%s: expected object, got %s", at, gs__json_type_name(pod));
    int rc = known_keys(pod, at, pod_keys, sizeof(pod_keys) / sizeof(pod_keys[0]), "a pod", d);
    if (!rc)
        rc = gs__json_field(pod, "tenant", at, JSON_STRING, &tenant, d);
    /* a tenant is a DNS label wherever one is made (a scenario's tenants[], gpuschedd's config):
     * no other text reaches a bill's table or CSV, where "=..." would be a spreadsheet formula */
    if (!rc && !gs_dns_label_ok(json_string_value(tenant), json_string_length(tenant)))
        rc = gs_diag_error(d,
                           "%s.tenant: \"%.64s\" is not a tenant's name (a DNS label: a-z, 0-9, "
                           "'-', 1..63)",
                           at, json_string_value(tenant));
    if (!rc)
        rc = pod_name(pod, at, d);
    if (!rc)
        rc = known_state(json_object_get(pod, "state"), at, seen, d);
    if (!rc)
        rc = life(pod, at, d);
    if (!rc)
        rc = figures(pod, at, d);
    if (!rc)
        rc = gs__json_field(pod, "usage", at, JSON_ARRAY, &usage, d);
    json_array_foreach(usage, j, u)
    {
        struct gs_bill_use use;
        struct gs_diag why;
        if (rc)
            break;
        gs_diag_init(&why);
        snprintf(uat, sizeof(uat), "%s.usage[%zu]", at, j);
        rc = use_of(u, uat, json_string_value(tenant), &use, d);
        if (!rc)
            rc = in_life(pod, &use, uat, &last_end, d);
        if (!rc && use.end_s > seen->end_s) {
            seen->end_s = use.end_s;
            snprintf(seen->at, sizeof(seen->at), "%s", uat);
        }
        if (!rc && (rc = gs_bill_add_use(b, &use, &why)) != 0)
            rc = gs_diag_error_code(d, rc, "%s: %s", uat, why.msg);
    }
    if (!rc && json_array_size(usage))
        rc = where_agrees(pod, usage, json_array_size(usage), at, d);
    return rc;
}

/* count_agrees() - @summary's count @key, where given, is @n (pods seen), at path @at. */
static int count_agrees(const json_t *summary, const char *key, int64_t n, const char *what,
                        const char *at, struct gs_diag *d)
{
    const json_t *v = json_object_get(summary, key);
    if (v && !json_is_integer(v))
        return gs_diag_error(d, "%s%ssummary.%s: expected integer, got %s", at, *at ? "." : "", key,
                             gs__json_type_name(v));
    if (v && json_integer_value(v) != n)
        return gs_diag_error(d, "%s%ssummary.%s: %lld, but %s%spods lists %lld %s", at,
                             *at ? "." : "", key, (long long)json_integer_value(v), at,
                             *at ? "." : "", (long long)n, what);
    return 0;
}

int gs__summary_agrees(const json_t *summary, const struct gs__pods_seen *seen, const char *at,
                       struct gs_diag *d)
{
    static const char *const key[] = {"pending", "running", "completed", NULL, "rejected"};
    int rc = count_agrees(summary, "pods", seen->pods, "pods", at, d);
    for (int s = GS_POD_PENDING; !rc && s <= GS_POD_REJECTED; s++)
        if (key[s])
            rc = count_agrees(summary, key[s], seen->in_state[s], key[s], at, d);
    if (rc)
        return rc;
    const json_t *h = json_object_get(summary, "horizon_s");
    if (h && !json_is_integer(h))
        return gs_diag_error(d, "%s%ssummary.horizon_s: expected integer, got %s", at,
                             *at ? "." : "", gs__json_type_name(h));
    if (h && (json_integer_value(h) < 0 || json_integer_value(h) > GS_BILL_TIME_MAX_S))
        return gs_diag_error(d, "%s%ssummary.horizon_s: %lld is not in 0..%lld", at, *at ? "." : "",
                             (long long)json_integer_value(h), (long long)GS_BILL_TIME_MAX_S);
    if (h && seen->end_s > json_integer_value(h))
        return gs_diag_error(d,
                             "%s: ends at %lld s, after the run's summary.horizon_s %lld: nothing "
                             "ran past the run's end",
                             seen->at, (long long)seen->end_s, (long long)json_integer_value(h));
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int gs__names_unique(const char **names, size_t n, const char *at, struct gs_diag *d)
{
    if (n > 1)
        qsort(names, n, sizeof(*names), by_name);
    for (size_t i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            return gs_diag_error(d, "%s%spods: pod \"%.80s\" is listed twice", at, *at ? "." : "",
                                 names[i]);
    return 0;
}

/* unique_names() - no pod of @pods (each named, gs__bill_pod()) is listed twice: it would be
 * billed twice. */
static int unique_names(const json_t *pods, const char *at, struct gs_diag *d)
{
    size_t all = json_array_size(pods);
    const char **v = all ? malloc(all * sizeof(*v)) : NULL;
    if (all && !v)
        return gs_diag_error_code(d, -ENOMEM, "%s: out of memory", at);
    for (size_t i = 0; i < all; i++)
        v[i] = json_string_value(json_object_get(json_array_get(pods, i), "name"));
    int rc = gs__names_unique(v, all, at, d);
    free(v);
    return rc;
}

/* printable() - @s is 1..@max bytes of gs_text_plain() text: safe in a table or a CSV row. */
static bool printable(const char *s, size_t max)
{
    size_t n = strnlen(s, max + 1);
    return n >= 1 && n <= max && gs_text_plain(s);
}

/* What the simulator writes of a run (docs/scenario.md#output): a way of a comparison has the
 * first four keys, the document also the cluster and, when it compares ways, the ways. */
static const char *const run_keys[] = {"way", "pods", "summary", "timeline", "cluster", "ways"};

/* bill_way() - the pods of one run (object @run at @at, "" at the top) into a new bill. */
static int bill_way(const json_t *run, const char *at, struct input *in, struct gs_diag *d)
{
    json_t *pods = NULL, *pod, *name = json_object_get(run, "way");
    size_t i;
    char pat[POD_AT];
    struct way *w = &in->way[in->nway];
    if (!json_is_object(run))
        return gs_diag_error(d, "%s: expected object, got %s", at, gs__json_type_name(run));
    int rc = *at ? known_keys(run, at, run_keys, 4, "a way", d) : 0;
    if (!rc && (*at || name))
        rc = gs__json_field(run, "way", at, JSON_STRING, &name, d);
    if (!rc)
        rc = gs__json_field(run, "pods", at, JSON_ARRAY, &pods, d);
    w->name = name ? json_string_value(name) : "run";
    if (!rc && !printable(w->name, WAY_NAME_MAX))
        rc = gs_diag_error(d, "%s%sway: expected 1..%d printable characters", at, *at ? "." : "",
                           WAY_NAME_MAX);
    if (!rc && name && gs_way_find(w->name) < 0)
        rc = gs_diag_error(d,
                           "%s%sway: \"%.40s\" is not a way the simulator runs (exclusive, "
                           "sharing, full)",
                           at, *at ? "." : "", w->name);
    for (size_t k = 0; !rc && k < in->nway; k++)
        if (strcmp(in->way[k].name, w->name) == 0)
            rc = gs_diag_error(d, "%s%sway: \"%.40s\" is also ways[%zu]", at, *at ? "." : "",
                               w->name, k);
    if (!rc && (rc = gs_bill_new(in->rc, &w->bill)) == 0)
        in->nway++;
    struct gs__pods_seen last = {.end_s = INT64_MIN};
    json_array_foreach(pods, i, pod)
    {
        if (rc)
            break;
        snprintf(pat, sizeof(pat), "%s%spods[%zu]", at, *at ? "." : "", i);
        rc = gs__bill_pod(pod, pat, w->bill, &last, d);
    }
    json_t *summary = NULL; /* as report asks: a run the simulator wrote has its figures */
    if (!rc)
        rc = unique_names(pods, at, d);
    if (!rc)
        rc = gs__json_field(run, "summary", at, JSON_OBJECT, &summary, d);
    return rc ? rc : gs__summary_agrees(summary, &last, at, d);
}

int gs__json_top_is_last_way(const json_t *root, struct gs_diag *d)
{
    static const char *const key[] = {"way", "pods", "summary", "timeline"};
    const json_t *ways = json_object_get(root, "ways");
    const json_t *last = json_array_get(ways, json_array_size(ways) - 1);
    for (int i = 0; last && i < 4; i++) {
        const json_t *top = json_object_get(root, key[i]);
        if (top && !json_equal(top, json_object_get(last, key[i])))
            return gs_diag_error(d,
                                 "%s: not ways[%zu].%s: a comparison's top level repeats its last "
                                 "way",
                                 key[i], json_array_size(ways) - 1, key[i]);
    }
    return 0;
}

/* bill_file() - every way of the document: {"ways": [RUN...]} or a single RUN. */
static int bill_file(struct input *in, struct gs_diag *d)
{
    json_t *ways = json_object_get(in->root, "ways"), *run;
    size_t i;
    char at[WAY_AT];
    if (!json_is_object(in->root))
        return gs_diag_error(d, "the document: expected object, got %s",
                             gs__json_type_name(in->root));
    if (json_object_get(in->root, "runs") || json_object_get(in->root, "curve") ||
        json_object_get(json_object_get(in->root, "summary"), "gpu_allocation_at_arrived_pct"))
        return gs_diag_error(d, "a trace replay (simulate --nodes/--sequence): its pods have no "
                                "tenants to bill; bill reads a scenario run (simulate --scenario "
                                "FILE --json)");
    int rc = known_keys(in->root, "", run_keys, sizeof(run_keys) / sizeof(run_keys[0]),
                        "the document", d);
    if (rc)
        return rc;
    if (!ways)
        return bill_way(in->root, "", in, d);
    if (!json_is_array(ways))
        return gs_diag_error(d, "ways: expected array, got %s", gs__json_type_name(ways));
    if (json_array_size(ways) > WAYS_MAX)
        return gs_diag_error(d, "ways: more than %d ways", WAYS_MAX);
    if (json_array_size(ways) == 0) /* else a bill of nothing, no line printed, exit status 0 */
        return gs_diag_error(d, "ways: empty; a simulation writes at least one way");
    rc = gs__json_top_is_last_way(in->root, d);
    if (rc)
        return rc;
    json_array_foreach(ways, i, run)
    {
        snprintf(at, sizeof(at), "ways[%zu]", i);
        rc = bill_way(run, at, in, d);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- Reports: one walk over a bill, three sinks ---- */

struct sink {
    void (*line)(struct sink *s, const struct gs_bill_line *l);
    void (*total)(struct sink *s, const char *tenant, int64_t udollars); /* NULL: the way's */
    const char *way;
};

/*
 * walk() - pass @b's lines of @tenant (NULL: every tenant) in report order to @s, each tenant's
 * total after its lines and the way's total last. Totals are the sums of the lines passed, so a
 * report always adds up. Return: the number of lines passed.
 */
static size_t walk(struct gs_bill *b, const char *tenant, struct sink *s)
{
    size_t it = 0, n = 0;
    int64_t sum = 0, all = 0;
    const char *cur = NULL;
    for (const struct gs_bill_line *l; (l = gs_bill_next(b, &it)) != NULL;) {
        if (tenant && strcmp(l->tenant, tenant) != 0)
            continue;
        if (cur && strcmp(cur, l->tenant) != 0) {
            s->total(s, cur, sum);
            sum = 0;
        }
        cur = l->tenant;
        s->line(s, l);
        sum += l->cost_udollars;
        all += l->cost_udollars;
        n++;
    }
    if (cur)
        s->total(s, cur, sum);
    s->total(s, NULL, all);
    return n;
}

/* Table: a measuring walk sets the column widths, a second walk prints. */
struct table {
    struct sink s;
    FILE *out;            /* NULL while measuring */
    const char *currency; /* the rate card's: amounts print as people read them */
    int width[NCOL];
};

static void table_row(struct table *t, const char *const cell[NCOL])
{
    static const bool right[NCOL] = {false, false, true, true, false, true, true};
    for (int k = 0; k < NCOL; k++) {
        int w = (int)strlen(cell[k]);
        if (!t->out && w > t->width[k])
            t->width[k] = w;
        if (t->out)
            fprintf(t->out, "%s%*s%s", k ? "  " : "", right[k] ? t->width[k] - w : 0, "", cell[k]);
        if (t->out && !right[k] && k < NCOL - 1)
            fprintf(t->out, "%*s", t->width[k] - w, "");
    }
    if (t->out)
        fputc('\n', t->out);
}

static void table_line(struct sink *s, const struct gs_bill_line *l)
{
    struct table *t = (struct table *)s;
    char day[24], qty[24], rate[GS_MONEY_HUMAN_MAX], cost[GS_MONEY_HUMAN_MAX];
    snprintf(day, sizeof(day), "%lld", (long long)l->day);
    snprintf(qty, sizeof(qty), "%lld", (long long)l->quantity);
    const char *cell[NCOL] = {l->tenant,
                              l->resource,
                              day,
                              qty,
                              gs_bill_mode_unit(l->mode),
                              gs_money_format_rate(l->rate_udollars_per_hour, t->currency, rate),
                              gs_money_format_human(l->cost_udollars, t->currency, cost)};
    table_row(t, cell);
}

static void table_total(struct sink *s, const char *tenant, int64_t udollars)
{
    struct table *t = (struct table *)s;
    char cost[GS_MONEY_HUMAN_MAX];
    const char *cell[NCOL] = {tenant ? tenant : "TOTAL",
                              tenant ? "total" : "",
                              "",
                              "",
                              "",
                              "",
                              gs_money_format_human(udollars, t->currency, cost)};
    table_row(t, cell);
}

static size_t report_table(struct gs_bill *b, const struct opts *o, const struct input *in,
                           const char *way)
{
    static const char *const head[NCOL] = {
        "TENANT", "RESOURCE", GS__BILL_HEAD_DAY, "QUANTITY", "UNIT", GS__BILL_HEAD_RATE, "COST"};
    struct table t = {{table_line, table_total, way}, NULL, gs_ratecard_currency(in->rc), {0}};
    table_row(&t, head);
    walk(b, o->tenant, &t.s);
    t.out = stdout;
    printf("way %s (rates: %s, %s)\n", way, o->rates, gs_ratecard_currency(in->rc));
    table_row(&t, head);
    return walk(b, o->tenant, &t.s);
}

/* CSV (RFC 4180): one row per line; free text (way, tenant) quoted when it needs to be. */
static void csv_text(const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

static void csv_line(struct sink *s, const struct gs_bill_line *l)
{
    char rate[GS_MONEY_STR_MAX], cost[GS_MONEY_STR_MAX];
    csv_text(s->way);
    putchar(',');
    csv_text(l->tenant);
    printf(",%s,%s,%s,%s,%lld,%lld,%s,%lld,%s,%lld,%s\n", l->resource,
           gs_catalog_at(l->model)->name, gs_bill_mode_name(l->mode), l->profile ? l->profile : "",
           (long long)l->day, (long long)l->quantity, gs_bill_mode_unit(l->mode),
           (long long)l->rate_udollars_per_hour, gs_money_format(l->rate_udollars_per_hour, rate),
           (long long)l->cost_udollars, gs_money_format(l->cost_udollars, cost));
}

static void csv_total(struct sink *s, const char *tenant, int64_t udollars)
{
    (void)s; /* totals are the sums of the rows; CSV leaves them to the reader */
    (void)tenant;
    (void)udollars;
}

/* JSON: {"currency", "rates", "ways": [{"way", "lines", "tenants", "total_udollars", "total"}]} */
struct jsink {
    struct sink s;
    json_t *way, *lines, *tenants;
    bool oom;
};

static void put(json_t *obj, const char *key, json_t *v, bool *oom)
{
    if (json_object_set_new(obj, key, v) != 0)
        *oom = true;
}

static void put_money(json_t *obj, const char *key, int64_t udollars, bool *oom)
{
    char k[40], buf[GS_MONEY_STR_MAX];
    snprintf(k, sizeof(k), "%s_udollars", key);
    put(obj, k, json_integer(udollars), oom);
    put(obj, key, json_string(gs_money_format(udollars, buf)), oom);
}

static void json_line(struct sink *s, const struct gs_bill_line *l)
{
    struct jsink *j = (struct jsink *)s;
    json_t *o = json_object();
    put(o, "tenant", json_string(l->tenant), &j->oom);
    put(o, "resource", json_string(l->resource), &j->oom);
    put(o, "model", json_string(gs_catalog_at(l->model)->name), &j->oom);
    put(o, "mode", json_string(gs_bill_mode_name(l->mode)), &j->oom);
    put(o, "profile", l->profile ? json_string(l->profile) : json_null(), &j->oom);
    put(o, "day", json_integer(l->day), &j->oom);
    put(o, "quantity", json_integer(l->quantity), &j->oom);
    put(o, "unit", json_string(gs_bill_mode_unit(l->mode)), &j->oom);
    put_money(o, "rate_per_hour", l->rate_udollars_per_hour, &j->oom);
    put_money(o, "cost", l->cost_udollars, &j->oom);
    if (json_array_append_new(j->lines, o) != 0)
        j->oom = true;
}

static void json_total(struct sink *s, const char *tenant, int64_t udollars)
{
    struct jsink *j = (struct jsink *)s;
    json_t *o = tenant ? json_object() : j->way;
    if (tenant)
        put(o, "tenant", json_string(tenant), &j->oom);
    put_money(o, "total", udollars, &j->oom);
    if (tenant && json_array_append_new(j->tenants, o) != 0)
        j->oom = true;
}

static size_t report_json(struct gs_bill *b, const struct opts *o, json_t *ways, const char *way,
                          bool *oom)
{
    struct jsink j = {
        {json_line, json_total, way}, json_object(), json_array(), json_array(), false};
    put(j.way, "way", json_string(way), &j.oom);
    put(j.way, "lines", j.lines, &j.oom);
    put(j.way, "tenants", j.tenants, &j.oom);
    size_t n = walk(b, o->tenant, &j.s);
    if (json_array_append_new(ways, j.way) != 0 || j.oom)
        *oom = true;
    return n;
}

/* select_way() - the index of --way among the file's ways, or -1 for all of them. */
static int select_way(const struct opts *o, const struct input *in, int *sel, struct gs_diag *d)
{
    char names[256] = "";
    size_t off = 0;
    *sel = -1;
    for (size_t k = 0; o->way && k < in->nway; k++) {
        if (strcmp(in->way[k].name, o->way) == 0) {
            *sel = (int)k;
            return 0;
        }
        if (off < sizeof(names))
            off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", k ? ", " : "",
                                    in->way[k].name);
    }
    if (o->way)
        return gs_diag_error(d, "--way: %s has no way \"%.40s\" (it has: %s)", o->file, o->way,
                             names);
    return 0;
}

/* Whether @t is one of the comma-separated @names. */
static int listed(const char *names, const char *t)
{
    size_t n = strlen(t);
    for (const char *p = names; (p = strstr(p, t)) != NULL; p += n)
        if ((p == names || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* Whether a pod of @run belongs to @tenant; the tenants seen are added to @names (@cap bytes,
 * comma-separated, each once). */
static int run_has_tenant(const json_t *run, const char *tenant, char *names, size_t cap)
{
    const json_t *pod;
    size_t k, off = strlen(names);
    json_array_foreach(json_object_get(run, "pods"), k, pod)
    {
        const char *t = json_string_value(json_object_get(pod, "tenant"));
        if (t && !strcmp(t, tenant))
            return 1;
        if (t && *t && off < cap && !listed(names, t))
            off += (size_t)snprintf(names + off, cap - off, "%s%s", off ? ", " : "", t);
    }
    return 0;
}

/*
 * --tenant must name a tenant some pod of the file belongs to: a name misspelt would print an
 * empty bill and succeed. (A tenant whose pods used nothing is a warning in report().) O(pods).
 * Return: 0; -EINVAL with @d naming the tenants the file has.
 */
static int tenant_known(const struct opts *o, const struct input *in, struct gs_diag *d)
{
    const json_t *ways = json_object_get(in->root, "ways"), *run;
    char names[256] = "";
    size_t i;
    if (!o->tenant || (!ways && run_has_tenant(in->root, o->tenant, names, sizeof(names))))
        return 0;
    json_array_foreach(ways, i, run)
    {
        if (run_has_tenant(run, o->tenant, names, sizeof(names)))
            return 0;
    }
    return gs_diag_error(d, "--tenant: no pod of %s belongs to tenant \"%.64s\" (its tenants: %s)",
                         o->file, o->tenant, *names ? names : "none");
}

/* report() - the selected ways in @o's format on stdout. Return: 0, or -ENOMEM. */
static int report(const struct opts *o, struct input *in, int sel)
{
    size_t lines = 0;
    bool oom = false;
    json_t *doc = o->fmt == FMT_JSON ? json_object() : NULL, *ways = json_array();
    if (o->fmt == FMT_CSV)
        printf("way,tenant,resource,model,mode,profile,day,quantity,unit,"
               "rate_per_hour_udollars,rate_per_hour,cost_udollars,cost\n");
    for (size_t k = 0; k < in->nway; k++) {
        struct way *w = &in->way[k];
        struct sink csv = {csv_line, csv_total, w->name};
        if (sel >= 0 && (size_t)sel != k)
            continue;
        if (o->fmt == FMT_TABLE && sel < 0 && k > 0)
            putchar('\n');
        lines += o->fmt == FMT_TABLE ? report_table(w->bill, o, in, w->name)
                 : o->fmt == FMT_CSV ? walk(w->bill, o->tenant, &csv)
                                     : report_json(w->bill, o, ways, w->name, &oom);
    }
    if (doc) {
        put(doc, "currency", json_string(gs_ratecard_currency(in->rc)), &oom);
        put(doc, "rates", json_string(o->rates), &oom);
        put(doc, "ways", json_incref(ways), &oom);
        if (!oom && json_dumpf(doc, stdout, JSON_INDENT(2)) == 0)
            putchar('\n');
    }
    json_decref(doc);
    json_decref(ways);
    if (o->tenant && !lines && !oom)
        gs__cli_say("bill", "warning: tenant \"%s\" has no usage in %s", o->tenant, o->file);
    return oom ? -ENOMEM : 0;
}

static void input_free(struct input *in)
{
    for (size_t k = 0; k < in->nway; k++)
        gs_bill_free(in->way[k].bill);
    gs_ratecard_free(in->rc);
    json_decref(in->root);
}

int cmd_bill(int argc, char **argv)
{
    struct opts o;
    struct input in = {0};
    struct gs_diag d;
    int sel, rc = parse_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    gs_diag_init(&d);
    rc = gs__cli_of_option("--rates", gs_ratecard_load(o.rates, &in.rc, &d), &d);
    if (!rc)
        rc = load_json(o.file, &in.root, &d);
    if (!rc && (rc = bill_file(&in, &d)) != 0) {
        char msg[GS_DIAG_MSG_MAX];
        memcpy(msg, d.msg, sizeof(msg));
        gs_diag_error_code(&d, rc, "%s: %s", o.file, rc == -ENOMEM ? "out of memory" : msg);
    }
    if (!rc)
        rc = select_way(&o, &in, &sel, &d);
    if (!rc)
        rc = tenant_known(&o, &in, &d);
    if (!rc && (rc = report(&o, &in, sel)) != 0)
        gs_diag_error_code(&d, rc, "out of memory writing the report");
    input_free(&in);
    if (!rc)
        return 0; /* a failed write to stdout: main() */
    gs__cli_say("bill", "%s", d.msg[0] ? d.msg : strerror(-rc));
    /* Out of memory is a failure of this run; all else is the input's. */
    return rc == -ENOMEM ? 1 : EXIT_BAD_INPUT;
}
