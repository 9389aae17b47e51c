/* gpusched forecast: demand series from traces or gpuschedd's store, forecasts, backtests and
 * capacity advice (docs/forecast.md). */
#include "cli.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/elastic.h"
#include "gpusched/forecast.h"
#include "gpusched/scenario.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SOURCES_MAX 16
#define TARGETS_MAX 256

enum fmt { FMT_TABLE, FMT_CSV, FMT_JSON };

struct source {
    char kind; /* 'd' DLRM, 'g' GenAI, 'p' pods, 's' store, 'S' series CSV */
    const char *path;
};

struct opts {
    struct source src[SOURCES_MAX];
    size_t nsrc;
    enum gs_fc_key key;
    int by_model;
    size_t top;
    int64_t end_s;
    size_t horizon, holdout, step;
    enum gs_fc_method method;
    int backtest, advice, replay, right_size;
    int64_t overcommit; /* milli, 0: not given */
    const char *util, *policy;
    int64_t warmup_s;
    enum fmt fmt;
    const char *dump, *prom;
    char given[128]; /* the options given, by their getopt letter */
    struct gs_advice_params ap;
    struct gs_advice_target target[TARGETS_MAX];
    struct gs_advice_quota quota[TARGETS_MAX];
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpusched forecast SOURCE... [options]\n"
            "  Builds hourly GPU demand series (milli-GPU held, the hour's mean) and forecasts\n"
            "  them with exponential smoothing; --backtest scores it, --advice plans nodes.\n"
            "sources (one or more):\n"
            "  --dlrm FILE     Alibaba DLRM services (disaggregated_DLRM_trace*.csv)\n"
            "  --genai FILE    Alibaba GenAI requests (lora_request_trace*.csv)\n"
            "  --pods FILE     Alibaba GPU-sharing pod list (openb_pod_list_*.csv)\n"
            "  --store FILE    gpuschedd's store (DIR/gpusched.db), read-only\n"
            "  --series FILE   series as --dump-series writes them\n"
            "series:\n"
            "  --by KEY        total (default), service, tenant, queue or model\n"
            "  --by-model      split each group by GPU model too\n"
            "  --top N         keep the N largest groups, the rest summed as \"(other)\"\n"
            "                  (0, the default: every group)\n"
            "  --end SECONDS   end of the history (default: the last time the sources name;\n"
            "                  a store's: when its scheduler last wrote, running pods to now)\n"
            "  --dump-series FILE  write the series as CSV\n"
            "forecast:\n"
            "  --model M       auto (default: measured, see docs/forecast.md), aic, naive, ANN, "
            "ANA, ANM, ANW, AAdN, AAdA, AAdM,\n"
            "                  AAdW, snaive, snaive-week, ma\n"
            "  --horizon D     how far ahead, whole hours (default 24h; s, m, h, d, w)\n"
            "  --backtest      score the forecasts from rolling origins against snaive and ma\n"
            "  --holdout D     the backtest's window (default 7d)\n"
            "  --step D        the time between the backtest's origins (default 24h)\n"
            "  --format F      table (default), csv or json\n"
            "advice:\n"
            "  --advice        plan the nodes each model needs to meet the targets\n"
            "  --target T=wait:DURATION | T=util:LO..HI   tenant T's wait p95 or utilisation\n"
            "                  band in %% (T '*' for every other tenant; default *=wait:0s)\n"
            "  --lead D        how long a node takes to come up (default 10m)\n"
            "  --node-gpus M=N GPUs per node of model M (default 8 for every model)\n"
            "  --quota T:M=N   tenant T's quota of model M, GPUs\n"
            "  --prom FILE     also write the Prometheus gauges\n"
            "replay: the history as replicas on nodes the advice turns on and off, against\n"
            "  static clusters at the peak and at the same cost\n"
            "  --replay        run the replay\n"
            "  --utilisation FILE  replicas' GPU utilisation: the GenAI pod_gpu_duty_cycle file\n"
            "  --right-size    a one-card replica asks its pod's peak utilisation of a card\n"
            "                  (rounded up to a tenth), packed by the share scheduler\n"
            "  --overcommit R  right-sized: a card's compute overcommit, 1..4 (the seeds' node\n"
            "                  tier: 1.5); the replay measures the duty cycle past 100 %%\n"
            "  --warmup D      history before the measured window (default 7d)\n"
            "  --policy P      placement policy (default gpusched)\n"
            "  (--lead, --node-gpus any=N and the * wait --target apply)\n");
}

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gs__cli_vsay("forecast", fmt, ap);
    va_end(ap);
    return EXIT_BAD_INPUT;
}

/* Numbers start with a digit: strtol() and its kin alone take " +5" and " -5" (as a huge
 * unsigned). */
static int digit(char c)
{
    return c >= '0' && c <= '9';
}

int gs__cli_duration(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    int64_t mul = *end == 's'   ? 1
                  : *end == 'm' ? 60
                  : *end == 'h' ? 3600
                  : *end == 'd' ? 86400
                  : *end == 'w' ? 604800
                                : 0;
    if (!digit(*s) || errno || !mul || end[1] || v > INT64_MAX / 604800)
        return -EINVAL;
    *out = v * mul;
    return 0;
}

static int parse_hours(const char *opt, const char *s, size_t max, size_t *out)
{
    int64_t v;
    if (gs__cli_duration(s, &v) || v % GS_FC_STEP_S || v == 0 || v / GS_FC_STEP_S > (int64_t)max)
        return bad("--%s %s: want a whole number of hours, 1h..%zuh, with a unit (24h, 7d, 2w)",
                   opt, s, max);
    *out = (size_t)(v / GS_FC_STEP_S);
    return 0;
}

static int parse_target(const char *s, struct opts *o)
{
    struct gs_advice_target *t = &o->target[o->ap.ntargets];
    const char *eq = strrchr(s, '=');
    if (o->ap.ntargets == TARGETS_MAX)
        return bad("more than %d --target options", TARGETS_MAX);
    if (!eq || eq == s || (size_t)(eq - s) >= sizeof(t->tenant))
        return bad("--target %s: want TENANT=wait:DURATION or TENANT=util:LO..HI", s);
    snprintf(t->tenant, sizeof(t->tenant), "%.*s", (int)(eq - s), s);
    if (strcmp(t->tenant, "*") == 0)
        t->tenant[0] = '\0';
    for (size_t i = 0; i < o->ap.ntargets; i++)
        if (strcmp(o->target[i].tenant, t->tenant) == 0)
            return bad("--target %s: a second target for %.*s", s, (int)(eq - s), s);
    int lo, hi, n = 0;
    if (strncmp(eq + 1, "wait:", 5) == 0) {
        if (gs__cli_duration(eq + 6, &t->wait_p95_s))
            return bad("--target %s: \"%s\" is not a duration (90s, 10m, 1h)", s, eq + 6);
    } else if (sscanf(eq + 1, "util:%d..%d%n", &lo, &hi, &n) == 2 && !eq[1 + n] && lo >= 1 &&
               lo <= hi && hi <= 100) {
        t->wait_p95_s = -1;
        t->util_lo = lo * 10;
        t->util_hi = hi * 10;
    } else {
        return bad("--target %s: want wait:DURATION or util:LO..HI with 1 <= LO <= HI <= 100", s);
    }
    o->ap.targets = o->target;
    o->ap.ntargets++;
    return 0;
}

static int parse_quota(const char *s, struct opts *o)
{
    struct gs_advice_quota *q = &o->quota[o->ap.nquotas];
    const char *colon = strchr(s, ':'), *eq = strrchr(s, '=');
    char *end;
    if (o->ap.nquotas == TARGETS_MAX)
        return bad("more than %d --quota options", TARGETS_MAX);
    if (!colon || !eq || eq < colon || colon == s || (size_t)(colon - s) >= sizeof(q->tenant) ||
        (size_t)(eq - colon - 1) >= sizeof(q->model))
        return bad("--quota %s: want TENANT:MODEL=GPUS", s);
    q->gpus = strtoll(eq + 1, &end, 10);
    if (!digit(eq[1]) || *end || q->gpus > 16000000)
        return bad("--quota %s: GPUS must be a whole number 0..16000000", s);
    snprintf(q->tenant, sizeof(q->tenant), "%.*s", (int)(colon - s), s);
    snprintf(q->model, sizeof(q->model), "%.*s", (int)(eq - colon - 1), colon + 1);
    for (size_t i = 0; i < o->ap.nquotas; i++)
        if (strcmp(o->quota[i].tenant, q->tenant) == 0 && strcmp(o->quota[i].model, q->model) == 0)
            return bad("--quota %s: a second quota for %.*s", s, (int)(eq - s), s);
    o->ap.quotas = o->quota;
    o->ap.nquotas++;
    return 0;
}

static int parse_node_gpus(const char *s, struct opts *o)
{
    const char *eq = strrchr(s, '=');
    char *end;
    struct gs_advice_params *p = &o->ap;
    if (!eq || eq == s || p->nmodels == GS_ADVICE_MODELS_MAX ||
        (size_t)(eq - s) >= sizeof(p->models[0]))
        return bad("--node-gpus %s: want MODEL=GPUS (at most %d models)", s, GS_ADVICE_MODELS_MAX);
    long v = strtol(eq + 1, &end, 10);
    if (!digit(eq[1]) || *end || v < 1 || v > 16)
        return bad("--node-gpus %s: GPUS must be 1..16", s);
    snprintf(p->models[p->nmodels], sizeof(p->models[0]), "%.*s", (int)(eq - s), s);
    for (size_t i = 0; i < p->nmodels; i++)
        if (strcmp(p->models[i], p->models[p->nmodels]) == 0)
            return bad("--node-gpus %s: model %s given twice", s, p->models[i]);
    p->node_gpus[p->nmodels++] = (int)v;
    return 0;
}

static int add_source(struct opts *o, char kind, const char *path)
{
    if (o->nsrc == SOURCES_MAX)
        return bad("more than %d sources", SOURCES_MAX);
    for (size_t i = 0; i < o->nsrc; i++) /* its records would count twice */
        if (strcmp(o->src[i].path, path) == 0 || gs__cli_same_file(path, o->src[i].path))
            return bad("%s: given twice as a source", path);
    o->src[o->nsrc++] = (struct source){kind, path};
    return 0;
}

enum { M_FORECAST = 1, M_BACKTEST = 2, M_ADVICE = 4, M_REPLAY = 8, M_SERIES = 7, M_ALL = 15 };

/* The modes each option is read in, and whether a --series source gives what it builds: an
 * option given where nothing reads it is refused, not ignored. */
static const struct {
    char c;
    const char *name;
    int modes, records; /* records: builds series from demand records, which --series holds not */
} mode_opts[] = {
    {'b', "--by", M_SERIES, 1},
    {'M', "--by-model", M_SERIES, 1},
    {'T', "--top", M_SERIES, 1},
    {'e', "--end", M_ALL, 1},
    {'H', "--horizon", M_SERIES, 0},
    {'D', "--dump-series", M_SERIES, 0},
    {'f', "--format", M_ALL, 0},
    {'o', "--holdout", M_BACKTEST, 0},
    {'x', "--step", M_BACKTEST, 0},
    {'t', "--target", M_ADVICE | M_REPLAY, 0},
    {'l', "--lead", M_ADVICE | M_REPLAY, 0},
    {'n', "--node-gpus", M_ADVICE | M_REPLAY, 0},
    {'q', "--quota", M_ADVICE, 0},
    {'P', "--prom", M_ADVICE, 0},
    {'U', "--utilisation", M_REPLAY, 0},
    {'Y', "--policy", M_REPLAY, 0},
    {'Z', "--right-size", M_REPLAY, 0},
    {'O', "--overcommit", M_REPLAY, 0},
    {'W', "--warmup", M_REPLAY, 0},
};

static int check_modes(const struct opts *o)
{
    static const char *const names[] = {"a forecast", "--backtest", "--advice", "--replay"};
    if (o->backtest + o->advice + o->replay > 1)
        return bad("give one of --backtest, --advice and --replay");
    int mode = o->replay ? M_REPLAY : o->backtest ? M_BACKTEST : o->advice ? M_ADVICE : M_FORECAST;
    int m = mode == M_FORECAST ? 0 : mode == M_BACKTEST ? 1 : mode == M_ADVICE ? 2 : 3;
    int series = o->nsrc && o->src[0].kind == 'S';
    for (size_t i = 0; i < sizeof(mode_opts) / sizeof(mode_opts[0]); i++) {
        if (!o->given[(int)mode_opts[i].c])
            continue;
        if (!(mode_opts[i].modes & mode))
            return bad("%s is not read by %s: refused rather than ignored", mode_opts[i].name,
                       names[m]);
        if (series && mode_opts[i].records)
            return bad("%s builds series from demand records: --series gives them as written",
                       mode_opts[i].name);
    }
    if ((o->fmt == FMT_CSV && mode != M_FORECAST) || (o->fmt == FMT_JSON && mode == M_REPLAY))
        return bad("--format %s: %s writes %s", o->fmt == FMT_CSV ? "csv" : "json", names[m],
                   mode == M_REPLAY ? "a table only" : "a table or json");
    for (size_t i = 0; mode == M_REPLAY && i < o->ap.ntargets; i++)
        if (o->ap.targets[i].tenant[0] || o->ap.targets[i].wait_p95_s < 0)
            return bad("--replay reads the '*' wait --target only: its replicas have no tenant");
    for (size_t i = 0; mode == M_REPLAY && i < o->ap.nmodels; i++)
        if (strcmp(o->ap.models[i], "any") != 0)
            return bad("--replay reads --node-gpus any=N only: its nodes are of one model");
    return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    static const struct option lo[] = {
        {"dlrm", required_argument, 0, 'd'},
        {"genai", required_argument, 0, 'g'},
        {"pods", required_argument, 0, 'p'},
        {"store", required_argument, 0, 's'},
        {"series", required_argument, 0, 'S'},
        {"by", required_argument, 0, 'b'},
        {"by-model", no_argument, 0, 'M'},
        {"top", required_argument, 0, 'T'},
        {"end", required_argument, 0, 'e'},
        {"model", required_argument, 0, 'm'},
        {"horizon", required_argument, 0, 'H'},
        {"backtest", no_argument, 0, 'B'},
        {"holdout", required_argument, 0, 'o'},
        {"step", required_argument, 0, 'x'},
        {"format", required_argument, 0, 'f'},
        {"dump-series", required_argument, 0, 'D'},
        {"advice", no_argument, 0, 'A'},
        {"target", required_argument, 0, 't'},
        {"lead", required_argument, 0, 'l'},
        {"node-gpus", required_argument, 0, 'n'},
        {"quota", required_argument, 0, 'q'},
        {"prom", required_argument, 0, 'P'},
        {"replay", no_argument, 0, 'R'},
        {"utilisation", required_argument, 0, 'U'},
        {"warmup", required_argument, 0, 'W'},
        {"policy", required_argument, 0, 'Y'},
        {"overcommit", required_argument, 0, 'O'},
        {"right-size", no_argument, 0, 'Z'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int c, rc = 0, k;
    char *end;
    opterr = 0; /* its message would echo the option as typed */
    while (!rc && (c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        o->given[c & 127] = 1;
        switch (c) {
        case 'd':
        case 'g':
        case 'p':
        case 's':
        case 'S':
            rc = add_source(o, (char)c, optarg);
            break;
        case 'b':
            if ((k = gs_fc_key_find(optarg)) < 0)
                rc = bad("--by %s: want total, service, tenant, queue or model", optarg);
            o->key = (enum gs_fc_key)k;
            break;
        case 'M':
            o->by_model = 1;
            break;
        case 'T':
            o->top = (size_t)strtoul(optarg, &end, 10);
            if (!digit(optarg[0]) || *end || o->top > GS_FC_SERIES_MAX)
                rc = bad("--top %s: want 0..%d", optarg, GS_FC_SERIES_MAX);
            break;
        case 'e':
            errno = 0;
            o->end_s = strtoll(optarg, &end, 10);
            if (!digit(optarg[0]) || *end || errno)
                rc = bad("--end %s: want seconds of the sources' clock, >= 0", optarg);
            break;
        case 'm':
            if ((k = gs_fc_method_find(optarg)) < 0)
                rc = bad("--model %s: unknown; see gpusched forecast --help", optarg);
            o->method = (enum gs_fc_method)k;
            break;
        case 'H':
            rc = parse_hours("horizon", optarg, GS_FC_HORIZON_MAX, &o->horizon);
            break;
        case 'o':
            rc = parse_hours("holdout", optarg, GS_FC_HOURS_MAX, &o->holdout);
            break;
        case 'x':
            rc = parse_hours("step", optarg, GS_FC_HOURS_MAX, &o->step);
            break;
        case 'B':
            o->backtest = 1;
            break;
        case 'A':
            o->advice = 1;
            break;
        case 'f':
            o->fmt = strcmp(optarg, "table") == 0  ? FMT_TABLE
                     : strcmp(optarg, "csv") == 0  ? FMT_CSV
                     : strcmp(optarg, "json") == 0 ? FMT_JSON
                                                   : (enum fmt) - 1;
            if ((int)o->fmt < 0)
                rc = bad("--format %s: want table, csv or json", optarg);
            break;
        case 'D':
            o->dump = optarg;
            break;
        case 't':
            rc = parse_target(optarg, o);
            break;
        case 'l':
            if (gs__cli_duration(optarg, &o->ap.lead_s))
                rc = bad("--lead %s: want a duration (90s, 10m, 1h)", optarg);
            break;
        case 'n':
            rc = parse_node_gpus(optarg, o);
            break;
        case 'q':
            rc = parse_quota(optarg, o);
            break;
        case 'P':
            o->prom = optarg;
            break;
        case 'R':
            o->replay = 1;
            break;
        case 'U':
            o->util = optarg;
            break;
        case 'Y':
            o->policy = optarg;
            rc = gs__cli_policy("forecast", optarg,
                                "the replay weighs elastic against static clusters under one "
                                "policy (gpusched simulate --policy all compares policies)");
            break;
        case 'Z':
            o->right_size = 1;
            break;
        case 'O':
            if (gs_quantity_parse(optarg, 3, 0, 0, &o->overcommit) || o->overcommit < 1000 ||
                o->overcommit > 4000)
                rc = bad("--overcommit %s: want a ratio 1..4 (1.5)", optarg);
            break;
        case 'W':
            if (gs__cli_duration(optarg, &o->warmup_s))
                rc = bad("--warmup %s: want a duration (7d)", optarg);
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            return bad("%s \"%s\" (see gpusched forecast --help)", gs_option_problem(c),
                       argv[optind - 1]);
        }
    }
    if (!rc && optind < argc)
        rc = bad("unexpected argument \"%s\" (sources are given with --dlrm, --genai, ...)",
                 argv[optind]);
    if (!rc && !o->nsrc)
        rc = bad("no source: give --dlrm, --genai, --pods, --store or --series");
    return rc ? rc : check_modes(o);
}

/* The files written are none of those read: a --dump-series onto the --store replaced
 * gpuschedd's database with CSV. */
static int check_outputs(const struct opts *o, struct gs_diag *d)
{
    const char *in[SOURCES_MAX + 1], *out[2] = {o->dump, o->prom};
    const char *flag[2] = {"--dump-series", "--prom"};
    for (size_t i = 0; i < o->nsrc; i++)
        in[i] = o->src[i].path;
    in[o->nsrc] = o->util;
    return gs__cli_check_outputs(out, flag, 2, in, o->nsrc + 1, d);
}

/* Read every demand source of @o (not --series, which is a series already) into @dm. */
static int read_demand(const struct opts *o, struct gs_demand *dm, struct gs_diag *d)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < o->nsrc; i++) {
        const char *p = o->src[i].path;
        switch (o->src[i].kind) {
        case 'd':
            rc = gs_demand_read_dlrm(dm, p, d);
            break;
        case 'g':
            rc = gs_demand_read_genai(dm, p, d);
            break;
        case 'p':
            rc = gs_demand_read_pods(dm, p, d);
            break;
        case 's':
            rc = gs_demand_read_store(dm, p, d);
            break;
        default:
            rc = gs_diag_error(d, "%s: --series holds series, not demand records", p);
            break;
        }
    }
    return rc;
}

/* Read every source and build the series. */
static int load(const struct opts *o, struct gs_series_set *set, struct gs_diag *d)
{
    int series = 0, rc = 0;
    struct gs_demand *dm;
    for (size_t i = 0; i < o->nsrc; i++)
        series += o->src[i].kind == 'S';
    if (series && o->nsrc > 1)
        return gs_diag_error(d, "--series cannot be combined with other sources");
    if (series)
        return gs_series_read_csv(o->src[0].path, set, d);
    if ((rc = gs_demand_new(&dm)))
        return rc;
    rc = read_demand(o, dm, d);
    if (!rc)
        rc = gs_demand_series(dm, o->key, o->by_model, o->end_s, o->top, set, d);
    gs_demand_free(dm);
    return rc;
}

static const char *series_label(const struct gs_series *s, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s%s", s->name[0] ? s->name : "(none)", s->model[0] ? "/" : "", s->model);
    return buf;
}

/* Forecasts held at once, series x hours ahead: 6 values of 8 bytes each, about 1 GB. Past it a
 * 10 MB series file (100,000 series) asked for 90 days ahead would need 10 GB. */
#define FORECAST_CELLS_MAX 20000000

/* Forecast every series. */
static int forecast_all(const struct opts *o, const struct gs_series_set *set,
                        struct gs_forecast *fc, struct gs_diag *d)
{
    if ((uint64_t)set->count * o->horizon > FORECAST_CELLS_MAX)
        return gs_diag_error(d,
                             "%zu series x %zu hours ahead: more than %d forecast hours at once "
                             "(fewer with --top or --horizon)",
                             set->count, o->horizon, FORECAST_CELLS_MAX);
    for (size_t i = 0; i < set->count; i++) {
        char lab[2 * GS_FC_NAME_MAX + 2];
        struct gs_diag local;
        gs_diag_init(&local);
        int rc = gs_fc_fit(set->s[i].milli, set->n, o->horizon, o->method, &fc[i], &local);
        if (rc)
            return gs_diag_error_code(d, rc, "series %s: %s",
                                      series_label(&set->s[i], lab, sizeof(lab)),
                                      local.msg[0] ? local.msg : strerror(-rc));
    }
    return 0;
}

static void print_milli(FILE *f, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld.%03lld", (long long)(v / 1000), (long long)(v % 1000));
    fprintf(f, "%10s", buf);
}

/* " (alpha A beta B ...)": the smoothing parameters @fc's model has (its trend's beta and phi,
 * its daily season's gamma, its weekly one's omega), "" for a baseline, which has none. */
static const char *params_text(const struct gs_forecast *fc, char *buf, size_t size)
{
    enum gs_fc_method m = fc->method;
    int trend = m >= GS_FC_AAN && m <= GS_FC_AAW,
        season = m != GS_FC_ANN && m != GS_FC_AAN && m < GS_FC_ETS_COUNT,
        week = m == GS_FC_ANW || m == GS_FC_AAW;
    if (m >= GS_FC_ETS_COUNT) {
        buf[0] = '\0';
        return buf;
    }
    int n = snprintf(buf, size, " (alpha %.3f", fc->alpha);
    if (trend)
        n += snprintf(buf + n, size - (size_t)n, " beta %.3f phi %.3f", fc->beta, fc->phi);
    if (season)
        n += snprintf(buf + n, size - (size_t)n, " gamma %.3f", fc->gamma);
    if (week)
        n += snprintf(buf + n, size - (size_t)n, " omega %.3f", fc->omega);
    snprintf(buf + n, size - (size_t)n, ")");
    return buf;
}

static void write_forecasts(FILE *f, const struct opts *o, const struct gs_series_set *set,
                            const struct gs_forecast *fc)
{
    char lab[2 * GS_FC_NAME_MAX + 2];
    if (o->fmt == FMT_JSON) {
        json_t *root = json_object(), *arr = json_array();
        json_object_set_new(root, "start_s", json_integer(set->start_s));
        json_object_set_new(root, "history_hours", json_integer((json_int_t)set->n));
        json_object_set_new(root, "unit", json_string("milli-GPU"));
        for (size_t i = 0; i < set->count; i++) {
            json_t *s = json_object(), *hrs = json_array();
            json_object_set_new(s, "series", json_string(set->s[i].name));
            json_object_set_new(s, "model", json_string(set->s[i].model));
            json_object_set_new(s, "method", json_string(gs_fc_method_name(fc[i].method)));
            json_object_set_new(s, "alpha", json_real(fc[i].alpha));
            json_object_set_new(s, "beta", json_real(fc[i].beta));
            json_object_set_new(s, "phi", json_real(fc[i].phi));
            json_object_set_new(s, "gamma", json_real(fc[i].gamma));
            json_object_set_new(s, "omega", json_real(fc[i].omega));
            if (isfinite(fc[i].aic))
                json_object_set_new(s, "aic", json_real(fc[i].aic));
            for (size_t k = 0; k < fc[i].h; k++) {
                json_t *h =
                    json_pack("{s:I,s:I}", "time_s",
                              (json_int_t)(set->start_s + (int64_t)(set->n + k) * GS_FC_STEP_S),
                              "point", (json_int_t)fc[i].point[k]);
                for (int q = 0; q < GS_FC_QUANTILES; q++) {
                    char key[8];
                    snprintf(key, sizeof(key), "q%03d", gs_fc_quantile_permille[q]);
                    json_object_set_new(h, key, json_integer(fc[i].q[q][k]));
                }
                json_array_append_new(hrs, h);
            }
            json_object_set_new(s, "hours", hrs);
            json_array_append_new(arr, s);
        }
        json_object_set_new(root, "forecasts", arr);
        json_dumpf(root, f, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
        fputc('\n', f);
        json_decref(root);
        return;
    }
    if (o->fmt == FMT_CSV) {
        fprintf(f, "time_s,series,model,method,milli,q025,q100,q500,q900,q975\n");
        for (size_t i = 0; i < set->count; i++)
            for (size_t k = 0; k < fc[i].h; k++) {
                fprintf(f, "%lld,%s,%s,%s,%lld",
                        (long long)(set->start_s + (int64_t)(set->n + k) * GS_FC_STEP_S),
                        set->s[i].name, set->s[i].model, gs_fc_method_short(fc[i].method),
                        (long long)fc[i].point[k]);
                for (int q = 0; q < GS_FC_QUANTILES; q++)
                    fprintf(f, ",%lld", (long long)fc[i].q[q][k]);
                fputc('\n', f);
            }
        return;
    }
    char from[GS_FC_TIME_MAX];
    fprintf(f, "%zu series, %zu hours of history from %s; GPUs held, hourly mean\n", set->count,
            set->n, gs_fc_time_text(from, set->start_s, set->utc));
    for (size_t i = 0; i < set->count; i++) {
        char par[128];
        fprintf(f, "\n%s: %s%s\n", series_label(&set->s[i], lab, sizeof(lab)),
                gs_fc_method_name(fc[i].method), params_text(&fc[i], par, sizeof(par)));
        fprintf(f, "  %6s %12s %12s %12s %12s\n", "hour", "point", "80% lo", "80% hi", "95% hi");
        for (size_t k = 0; k < fc[i].h; k++) {
            fprintf(f, "  %6zu ", k + 1);
            int64_t v[4] = {fc[i].point[k], fc[i].q[1][k], fc[i].q[3][k], fc[i].q[4][k]};
            for (int j = 0; j < 4; j++) {
                fprintf(f, "%*s", j ? 1 : 0, "");
                char buf[32];
                snprintf(buf, sizeof(buf), "%lld.%03lld", (long long)(v[j] / 1000),
                         (long long)(v[j] % 1000));
                fprintf(f, "%12s", buf);
            }
            fputc('\n', f);
        }
    }
}

/* The three methods a backtest compares. */
#define BT_METHODS 3

struct bt_row {
    struct gs_fc_score sc[BT_METHODS];
};

static double gain(double model, double base)
{
    return base > 0 ? 100.0 * (base - model) / base : 0.0;
}

static int run_backtest(const struct opts *o, const struct gs_series_set *set, FILE *f,
                        struct gs_diag *d)
{
    const enum gs_fc_method m[BT_METHODS] = {o->method, GS_FC_SNAIVE, GS_FC_MA};
    size_t holdout = o->holdout ? o->holdout : 7 * GS_FC_DAY;
    size_t step = o->step ? o->step : GS_FC_DAY;
    if (holdout >= set->n)
        return gs_diag_error(d, "--holdout of %zu hours leaves no history (%zu hours)", holdout,
                             set->n);
    struct gs_backtest_spec spec = {set->n - holdout, o->horizon, step};
    struct bt_row *row = calloc(set->count, sizeof(*row));
    if (!row)
        return -ENOMEM;
    char lab[2 * GS_FC_NAME_MAX + 2];
    int rc = 0;
    for (size_t i = 0; !rc && i < set->count; i++)
        for (int j = 0; !rc && j < BT_METHODS; j++) {
            struct gs_diag local;
            gs_diag_init(&local);
            rc = gs_fc_backtest(set->s[i].milli, set->n, &spec, m[j], &row[i].sc[j], &local);
            if (rc)
                gs_diag_error_code(d, rc, "series %s: %s",
                                   series_label(&set->s[i], lab, sizeof(lab)), local.msg);
        }
    if (rc) {
        free(row);
        return rc;
    }
    /* overall: the mean over series of sMAPE and MASE, coverage pooled over every hour */
    double smape[BT_METHODS] = {0}, mase[BT_METHODS] = {0};
    size_t nmase[BT_METHODS] = {0}, cov[BT_METHODS] = {0}, hours = 0, exact = 0;
    for (size_t i = 0; i < set->count; i++)
        for (int j = 0; j < BT_METHODS; j++) {
            smape[j] += row[i].sc[j].smape / (double)set->count;
            if (isfinite(row[i].sc[j].mase)) {
                mase[j] += row[i].sc[j].mase;
                nmase[j]++;
            }
            cov[j] += row[i].sc[j].covered;
            hours += j == 0 ? row[i].sc[j].hours : 0;
            exact += j == 0 ? row[i].sc[j].exact : 0;
        }
    for (int j = 0; j < BT_METHODS; j++)
        mase[j] = nmase[j] ? mase[j] / (double)nmase[j] : NAN;
    if (o->fmt == FMT_JSON) {
        json_t *root = json_object(), *arr = json_array(), *all = json_object();
        json_object_set_new(root, "holdout_hours", json_integer((json_int_t)holdout));
        json_object_set_new(root, "horizon_hours", json_integer((json_int_t)o->horizon));
        json_object_set_new(root, "step_hours", json_integer((json_int_t)step));
        for (size_t i = 0; i < set->count; i++) {
            json_t *s = json_pack("{s:s,s:s}", "series", set->s[i].name, "model", set->s[i].model);
            for (int j = 0; j < BT_METHODS; j++) {
                const struct gs_fc_score *c = &row[i].sc[j];
                json_object_set_new(s, gs_fc_method_name(m[j]),
                                    json_pack("{s:f,s:o,s:f,s:I,s:I}", "smape", c->smape, "mase",
                                              isfinite(c->mase) ? json_real(c->mase) : json_null(),
                                              "coverage80", c->coverage, "hours",
                                              (json_int_t)c->hours, "exact_hours",
                                              (json_int_t)c->exact));
            }
            json_array_append_new(arr, s);
        }
        for (int j = 0; j < BT_METHODS; j++)
            json_object_set_new(all, gs_fc_method_name(m[j]),
                                json_pack("{s:f,s:o,s:f}", "smape_mean", smape[j], "mase_mean",
                                          isfinite(mase[j]) ? json_real(mase[j]) : json_null(),
                                          "coverage80", 100.0 * (double)cov[j] / (double)hours));
        json_object_set_new(all, "smape_gain_vs_snaive_pct", json_real(gain(smape[0], smape[1])));
        json_object_set_new(all, "exact_pct", json_real(100.0 * (double)exact / (double)hours));
        json_object_set_new(root, "series", arr);
        json_object_set_new(root, "overall", all);
        json_dumpf(root, f, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
        fputc('\n', f);
        json_decref(root);
        free(row);
        return 0;
    }
    fprintf(f,
            "rolling origin: %zu series, origins every %zuh over the last %zuh, %zuh ahead; "
            "%s against snaive (the last day again) and ma (the last day's mean)\n",
            set->count, step, holdout, o->horizon, gs_fc_method_name(o->method));
    fprintf(f, "%-28s %9s %9s %9s %7s %8s %8s %8s %6s %6s\n", "series", "sMAPE", "snaive", "ma",
            "gain%", "MASE", "snaive", "ma", "cov80", "exact");
    for (size_t i = 0; i < set->count; i++) {
        const struct gs_fc_score *c = row[i].sc;
        fprintf(f, "%-28s %9.3f %9.3f %9.3f %7.1f %8.3f %8.3f %8.3f %6.1f %6.1f\n",
                series_label(&set->s[i], lab, sizeof(lab)), c[0].smape, c[1].smape, c[2].smape,
                gain(c[0].smape, c[1].smape), c[0].mase, c[1].mase, c[2].mase, c[0].coverage,
                100.0 * (double)c[0].exact / (double)c[0].hours);
    }
    fprintf(f, "%-28s %9.3f %9.3f %9.3f %7.1f %8.3f %8.3f %8.3f %6.1f %6.1f\n", "overall (mean)",
            smape[0], smape[1], smape[2], gain(smape[0], smape[1]), mase[0], mase[1], mase[2],
            100.0 * (double)cov[0] / (double)hours, 100.0 * (double)exact / (double)hours);
    free(row);
    return 0;
}

static int run_advice(const struct opts *o, const struct gs_series_set *set,
                      const struct gs_forecast *fc, FILE *f, struct gs_diag *d);

static void replay_row(FILE *f, const char *way, const struct gs_elastic_result *r,
                       const struct gs_elastic_result *peak)
{
    char over[16] = "-";
    if (r->duty_milli_s)
        snprintf(over, sizeof(over), "%.2f%%",
                 100.0 * (double)r->over_milli_s / (double)r->duty_milli_s);
    fprintf(f, "%-23s %6lld %10.1f %6.1f%% %7lld %7lld %7lld %7lld %9.1f %6.1f%% %6.1f%% %7s\n",
            way, (long long)r->nodes, (double)r->node_s / 3600.0,
            peak->node_s ? 100.0 * (double)(peak->node_s - r->node_s) / (double)peak->node_s : 0,
            (long long)r->waited, (long long)r->wait_p50_s, (long long)r->wait_p95_s,
            (long long)r->wait_max_s, (double)r->unserved_milli_s / 3.6e6, r->alloc_permille / 10.0,
            r->util_permille / 10.0, over);
}

/* The elastic replay: static at peak, elastic, static at the elastic way's cost. */
static int run_replay(const struct opts *o, FILE *f, struct gs_diag *d)
{
    struct gs_demand *dm;
    int rc = gs_demand_new(&dm);
    if (!rc)
        rc = read_demand(o, dm, d);
    struct gs_elastic_params ep = {
        .node_gpus = o->ap.nmodels ? o->ap.node_gpus[0] : o->ap.default_gpus,
        .model = gs_catalog_find("A100-SXM4-80GB", -1),
        .policy = o->policy,
        .lead_s = o->ap.lead_s,
        .warmup_s = o->warmup_s ? o->warmup_s : 7 * 86400,
        .method = o->method,
    };
    for (size_t i = 0; i < o->ap.ntargets; i++)
        if (!o->ap.targets[i].tenant[0] && o->ap.targets[i].wait_p95_s >= 0)
            ep.wait_target_s = o->ap.targets[i].wait_p95_s;
    struct gs_duty duty = {0};
    if (!rc && o->right_size && !o->util)
        rc = gs_diag_error(d, "--right-size needs the measured utilisation: --utilisation FILE");
    if (!rc && o->overcommit && !o->right_size)
        rc = gs_diag_error(d, "--overcommit packs right-sized shares: give --right-size");
    if (!rc && o->util && !(rc = gs_util_read_duty(o->util, &duty, d))) {
        ep.util_permille = duty.mean;
        ep.peak_permille = o->right_size ? duty.peak : NULL;
        ep.series = duty.series;
        ep.nutil = duty.pods;
        ep.slots = duty.slots;
    }
    int64_t end = o->end_s >= 0 ? o->end_s : (gs_demand_end_s(dm) + 3599) / 3600 * 3600;
    struct gs_elastic_result peak, el, same, sized;
    int64_t np = rc ? 0 : gs_elastic_peak_nodes(dm, end, &ep, d);
    rc = rc ? rc : np < 0 ? (int)np : 0;
    if (!rc)
        rc = gs_elastic_run(dm, end, &ep, np, &peak, d);
    ep.right_size = o->right_size;
    ep.overcommit_milli = (int32_t)o->overcommit;
    int64_t ns = rc || !ep.right_size ? 0 : gs_elastic_peak_nodes(dm, end, &ep, d);
    if (ns > 0)
        ns = gs_elastic_static_fit(dm, end, &ep, ns, np, &sized, d);
    rc = rc ? rc : ns < 0 ? (int)ns : 0;
    if (!rc)
        rc = gs_elastic_run(dm, end, &ep, 0, &el, d);
    int64_t win = el.hours * 3600;
    if (!rc)
        rc = gs_elastic_run(dm, end, &ep, (el.node_s + win - 1) / win, &same, d);
    if (!rc) {
        fprintf(f,
                "replay of %lld replicas over %lld hours after a %lld h warm-up; nodes of %d "
                "GPUs up %lld s after they are asked for; wait target %lld s; utilisation %s\n",
                (long long)el.replicas, (long long)el.hours, (long long)(ep.warmup_s / 3600),
                ep.node_gpus, (long long)ep.lead_s, (long long)ep.wait_target_s,
                o->util ? o->util : "100 %");
        if (ep.right_size)
            fprintf(f,
                    "right-sized: a one-card replica asks its pod's peak utilisation, rounded "
                    "up to a tenth of a card%s; over: duty cycle asked past 100 %% of a shared "
                    "card\n",
                    o->overcommit ? ", over the overcommit" : "");
        if (o->overcommit)
            fprintf(f, "overcommit: a card's compute x %.3g\n", (double)o->overcommit / 1000.0);
        fprintf(f, "%-23s %6s %10s %7s %7s %7s %7s %7s %9s %7s %7s %7s\n", "provisioning", "nodes",
                "node-h", "saved", "waited", "p50 s", "p95 s", "max s", "unserved", "alloc", "util",
                "over");
        replay_row(f, ep.right_size ? "static at peak, cards" : "static at peak", &peak, &peak);
        if (ep.right_size)
            replay_row(f, "static at peak, sized", &sized, &peak);
        replay_row(f, ep.right_size ? "elastic, sized" : "elastic (forecast)", &el, &peak);
        replay_row(f, ep.right_size ? "static same cost, sized" : "static at same cost", &same,
                   &peak);
    }
    gs_duty_free(&duty);
    gs_demand_free(dm);
    return rc;
}

int cmd_forecast(int argc, char **argv)
{
    struct opts *o = calloc(1, sizeof(*o));
    if (!o)
        return 1;
    o->end_s = -1;
    o->method = GS_FC_AUTO;
    o->horizon = GS_FC_DAY;
    o->ap.lead_s = 600;
    o->ap.default_gpus = 8;
    int rc = parse_args(argc, argv, o);
    if (rc) {
        free(o);
        return rc < 0 ? 0 : rc;
    }
    struct gs_diag d;
    gs_diag_init(&d);
    struct gs_series_set set = {0};
    struct gs_forecast *fc = NULL;
    if (o->replay) {
        rc = run_replay(o, stdout, &d);
        free(o);
        if (rc)
            gs__cli_say("forecast", "%s", d.msg[0] ? d.msg : strerror(-rc));
        return !rc ? 0 : rc == -ENOMEM ? 1 : EXIT_BAD_INPUT;
    }
    rc = check_outputs(o, &d);
    if (!rc)
        rc = load(o, &set, &d);
    if (!rc && o->dump) {
        FILE *df = fopen(o->dump, "w");
        if (!df || gs_series_write_csv(df, &set) || fclose(df))
            rc = gs_diag_error_code(&d, -EIO, "%s: cannot write: %s", o->dump, strerror(errno));
    }
    if (!rc && o->backtest) {
        rc = run_backtest(o, &set, stdout, &d);
    } else if (!rc) {
        fc = calloc(set.count, sizeof(*fc));
        rc = fc ? forecast_all(o, &set, fc, &d) : -ENOMEM;
        if (!rc && o->advice)
            rc = run_advice(o, &set, fc, stdout, &d);
        else if (!rc)
            write_forecasts(stdout, o, &set, fc);
    }
    for (size_t i = 0; fc && i < set.count; i++)
        gs_forecast_free(&fc[i]);
    free(fc);
    gs_series_set_free(&set);
    free(o);
    if (rc) {
        gs__cli_say("forecast", "%s", d.msg[0] ? d.msg : strerror(-rc));
        return rc == -ENOMEM || rc == -EIO ? 1 : EXIT_BAD_INPUT;
    }
    return 0;
}

static void advice_json(FILE *f, const struct gs_series_set *set, const struct gs_advice *a)
{
    json_t *root = json_object(), *models = json_array(), *tenants = json_array();
    json_object_set_new(root, "start_s",
                        json_integer(set->start_s + (int64_t)set->n * GS_FC_STEP_S));
    for (size_t m = 0; m < a->nmodels; m++) {
        json_t *nodes = json_array(), *g = json_array();
        for (size_t k = 0; k < a->h; k++) {
            json_array_append_new(nodes, json_integer(a->hour[m * a->h + k].nodes));
            json_array_append_new(g, json_integer(a->hour[m * a->h + k].gpus_milli));
        }
        json_array_append_new(models,
                              json_pack("{s:s,s:i,s:o,s:o}", "model", a->model[m], "gpus_per_node",
                                        a->node_gpus[m], "nodes", nodes, "gpu_milli", g));
    }
    for (size_t i = 0; i < a->ntenants; i++) {
        const struct gs_advice_tenant *t = &a->tenant[i];
        json_t *row =
            json_pack("{s:s,s:s,s:I,s:i}", "tenant", t->tenant, "model", t->model, "need_max_milli",
                      (json_int_t)t->need_max_milli, "quantile_permille", t->quantile_permille);
        if (t->quota_milli >= 0) {
            json_object_set_new(row, "quota_milli", json_integer(t->quota_milli));
            json_object_set_new(row, "lend_milli", json_integer(t->lend_milli));
            json_object_set_new(row, "borrow_milli", json_integer(t->borrow_milli));
        }
        json_array_append_new(tenants, row);
    }
    json_object_set_new(root, "models", models);
    json_object_set_new(root, "tenants", tenants);
    json_dumpf(root, f, JSON_INDENT(1));
    fputc('\n', f);
    json_decref(root);
}

static void advice_table(FILE *f, const struct gs_advice *a)
{
    fprintf(f, "nodes to run, by hour ahead (GPUs the targets ask in brackets)\n%-6s", "hour");
    for (size_t m = 0; m < a->nmodels; m++)
        fprintf(f, " %22.22s", a->model[m]);
    fputc('\n', f);
    for (size_t k = 0; k < a->h; k++) {
        fprintf(f, "%6zu", k + 1);
        for (size_t m = 0; m < a->nmodels; m++) {
            char buf[48];
            const struct gs_advice_hour *h = &a->hour[m * a->h + k];
            snprintf(buf, sizeof(buf), "%lld (%lld.%03lld)", (long long)h->nodes,
                     (long long)(h->gpus_milli / 1000), (long long)(h->gpus_milli % 1000));
            fprintf(f, " %22s", buf);
        }
        fputc('\n', f);
    }
    fprintf(f, "\n%-24s %-12s %8s %10s %10s %10s %10s\n", "tenant", "model", "plan-at", "need max",
            "quota", "may lend", "borrow");
    for (size_t i = 0; i < a->ntenants; i++) {
        const struct gs_advice_tenant *t = &a->tenant[i];
        char q[16] = "band";
        if (t->quantile_permille)
            snprintf(q, sizeof(q), "q%d.%d", t->quantile_permille / 10, t->quantile_permille % 10);
        fprintf(f, "%-24.24s %-12.12s %8s ", t->tenant[0] ? t->tenant : "(none)", t->model, q);
        print_milli(f, t->need_max_milli);
        if (t->quota_milli < 0) {
            fprintf(f, " %10s %10s %10s\n", "-", "-", "-");
            continue;
        }
        fputc(' ', f);
        print_milli(f, t->quota_milli);
        fputc(' ', f);
        print_milli(f, t->lend_milli);
        fputc(' ', f);
        print_milli(f, t->borrow_milli);
        fputc('\n', f);
    }
}

/* Is there a series of group @name (NULL: any) and model @model (NULL: any; "any": none)? */
static int has_series(const struct gs_series_set *set, const char *name, const char *model)
{
    for (size_t i = 0; i < set->count; i++) {
        const struct gs_series *s = &set->s[i];
        if ((!name || strcmp(s->name, name) == 0) &&
            (!model || strcmp(s->model[0] ? s->model : "any", model) == 0))
            return 1;
    }
    return 0;
}

/* A --target, --quota or --node-gpus naming no series would be ignored: refused instead. */
static int advice_names(const struct opts *o, const struct gs_series_set *set, struct gs_diag *d)
{
    for (size_t i = 0; i < o->ap.ntargets; i++)
        if (o->target[i].tenant[0] && !has_series(set, o->target[i].tenant, NULL))
            return gs_diag_error(d, "--target %s=...: no series is named \"%s\"",
                                 o->target[i].tenant, o->target[i].tenant);
    for (size_t i = 0; i < o->ap.nquotas; i++)
        if (!has_series(set, o->quota[i].tenant, o->quota[i].model))
            return gs_diag_error(d, "--quota %s:%s=...: no series of \"%s\" on model \"%s\"",
                                 o->quota[i].tenant, o->quota[i].model, o->quota[i].tenant,
                                 o->quota[i].model);
    for (size_t i = 0; i < o->ap.nmodels; i++)
        if (!has_series(set, NULL, o->ap.models[i]))
            return gs_diag_error(d, "--node-gpus %s=...: no series is of model \"%s\"",
                                 o->ap.models[i], o->ap.models[i]);
    return 0;
}

static int run_advice(const struct opts *o, const struct gs_series_set *set,
                      const struct gs_forecast *fc, FILE *f, struct gs_diag *d)
{
    struct gs_advice a;
    int rc = advice_names(o, set, d);
    if (rc)
        return rc;
    rc = gs_advice_compute(set, fc, &o->ap, &a, d);
    if (rc)
        return rc;
    if (o->fmt == FMT_JSON)
        advice_json(f, set, &a);
    else
        advice_table(f, &a);
    if (o->prom) {
        FILE *pf = fopen(o->prom, "w");
        if (!pf || gs_advice_write_prom(pf, set, fc, &a) || fclose(pf))
            rc = gs_diag_error_code(d, -EIO, "%s: cannot write: %s", o->prom, strerror(errno));
    }
    gs_advice_free(&a);
    return rc;
}
