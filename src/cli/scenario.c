/* gpusched simulate --scenario: a multi-tenant scenario run in simulated time, one way or more. */
#include "cli.h"
#include "../config/scenario_impl.h"

#include "gpusched/datadir.h"
#include "gpusched/billing.h"
#include "gpusched/diag.h"
#include "gpusched/scenario.h"
#include "gpusched/tsim.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILES 64

struct sopts {
    const char *files[MAX_FILES];
    int nfiles;
    const char *way, *json, *rates;
    int64_t horizon_us; /* --horizon, GS_UNSET when not given */
    int quiet, from_now, rates_given;
};

static void usage(FILE *f)
{
    char rates[GS_DATA_PATH_MAX];
    fprintf(f,
            "usage: gpusched simulate --scenario FILE [--scenario FILE...] [options]\n"
            "  --scenario FILE   YAML documents: Cluster, Pods, GPUQuota, topology policy,\n"
            "                    Queue, PodGroup, PriorityClass, ResourceQuota, LimitRange,\n"
            "                    Simulation (\"-\" = standard input; repeat for several files)\n"
            "  --way WAY         exclusive | sharing | full | compare (all three side by side);\n"
            "                    default: the Simulation document's compare list, else full\n"
            "  --horizon DURATION simulated time to run (90m, 8h, 2d): overrides the Simulation\n"
            "                    document's horizon (default: until the last pod ends)\n"
            "  --json FILE       write pods and summary as JSON (\"-\" = standard output)\n"
            "  --rates FILE      the RateCard that prices each tenant's bill in the report\n"
            "                    (default: %s)\n"
            "  --quiet           no text report\n"
            "  --from-now        continue a snapshot (GET /v1/snapshot of gpuschedd) from its\n"
            "                    Simulation's now: running pods stay where they run\n"
            "                    (with --horizon, D after that now)\n",
            gs_data_file(GS_DATA_RATES, rates, sizeof(rates)));
}

static void print_warning(void *ud, const char *msg)
{
    (void)ud;
    gs__cli_say("simulate", "warning: %s", msg);
}

/* The trace replay's options, listed by gpusched simulate --help: one given here says whose it
 * is and what a scenario takes instead (NULL: it has no counterpart), not merely "unknown". */
static int replay_only(const char *arg)
{
    static const char *const replay[][2] = {
        {"--nodes", "a scenario's nodes are its Cluster document"},
        {"--pods", "a scenario's pods are its Pod documents"},
        {"--sequence", "a scenario's pods arrive at their sim.gpusched.io/arrival"},
        {"--tune", "a scenario's pods arrive at their sim.gpusched.io/arrival"},
        {"--policy", "a scenario's policy is its documents (a KubeSchedulerConfiguration "
                     "among them), and --way picks how it runs"},
        {"--config", "a scenario reads a KubeSchedulerConfiguration document among its files"},
        {"--scheduler-name", "a scenario takes its KubeSchedulerConfiguration's first profile"},
        {"--seed", "a scenario run draws nothing at random"},
        {"--seeds", "a scenario run draws nothing at random"},
        {"--tie-order", NULL},
        {"--curve", "a scenario's --json holds each way's timeline"},
    };
    for (size_t k = 0; k < sizeof(replay) / sizeof(*replay); k++) {
        size_t n = strlen(replay[k][0]);
        if (strncmp(arg, replay[k][0], n) == 0 && (arg[n] == '\0' || arg[n] == '=')) {
            gs__cli_say("simulate",
                        "%s is an option of the trace replay (simulate without "
                        "--scenario)%s%s",
                        replay[k][0], replay[k][1] ? ": " : "", replay[k][1] ? replay[k][1] : "");
            return 1;
        }
    }
    return 0;
}

static int parse(int argc, char **argv, struct sopts *o)
{
    static const struct option longs[] = {{"scenario", required_argument, NULL, 's'},
                                          {"way", required_argument, NULL, 'w'},
                                          {"horizon", required_argument, NULL, 'H'},
                                          {"json", required_argument, NULL, 'j'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"rates", required_argument, NULL, 'r'},
                                          {"help", no_argument, NULL, 'h'},
                                          {"from-now", no_argument, NULL, 'n'},
                                          {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof(*o));
    static char rates[GS_DATA_PATH_MAX];
    o->rates = gs_data_file(GS_DATA_RATES, rates, sizeof(rates));
    o->horizon_us = GS_UNSET;
    optind = 1;
    opterr = 0; /* its message would echo the option as typed */
    int c;
    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        switch (c) {
        case 's':
            if (o->nfiles == MAX_FILES) {
                gs__cli_say("simulate", "more than %d --scenario files", MAX_FILES);
                return EXIT_BAD_INPUT;
            }
            o->files[o->nfiles++] = optarg;
            break;
        case 'w':
            o->way = optarg;
            break;
        case 'j':
            o->json = optarg;
            break;
        case 'H': {
            const char *why = "";
            if (gs_duration_parse(optarg, &o->horizon_us, &why) || o->horizon_us <= 0) {
                why = *why ? why : "must be longer than 0 s";
                gs__cli_say("simulate", "--horizon \"%s\" %s", optarg, why);
                return EXIT_BAD_INPUT;
            }
            break;
        }
        case 'q':
            o->quiet = 1;
            break;
        case 'r':
            o->rates = optarg;
            o->rates_given = 1;
            break;
        case 'n':
            o->from_now = 1;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            if (replay_only(argv[optind - 1]))
                return EXIT_BAD_INPUT;
            gs__cli_say("simulate", "%s \"%s\" (see gpusched simulate --help)",
                        gs_option_problem(c), argv[optind - 1]);
            return EXIT_BAD_INPUT;
        }
    }
    if (optind < argc) {
        gs__cli_say("simulate", "unexpected argument \"%s\" (scenario files follow --scenario)",
                    argv[optind]);
        return EXIT_BAD_INPUT;
    }
    if (o->quiet && o->rates_given) { /* the bills are only in the text report */
        gs__cli_say(NULL,
                    "--rates prices the text report's bills, which --quiet leaves out: "
                    "refused rather than ignored (gpusched bill --rates prices a --json run)");
        return EXIT_BAD_INPUT;
    }
    return 0;
}

/* The ways to run: --way, else the Simulation document's compare list, else full. */
static int ways_of(const struct sopts *o, const struct gs_scenario *s, enum gs_way *w, size_t *n)
{
    *n = 0;
    if (o->way && strcmp(o->way, "compare") != 0) {
        int k = gs_way_find(o->way);
        if (k < 0) {
            gs__cli_say("simulate", "--way \"%s\": expected exclusive, sharing, full or compare",
                        o->way);
            return EXIT_BAD_INPUT;
        }
        w[(*n)++] = (enum gs_way)k;
        return 0;
    }
    if (o->way || !s->sim.defined || s->sim.ncompare == 0) {
        if (o->way)
            for (int k = 0; k < GS_WAY_COUNT; k++)
                w[(*n)++] = (enum gs_way)k;
        else
            w[(*n)++] = GS_WAY_FULL;
        return 0;
    }
    for (int i = 0; i < s->sim.ncompare && *n < GS_WAY_COUNT; i++) {
        int k = gs_way_find(s->sim.compare[i]);
        if (k < 0) {
            gs__cli_say("simulate", "Simulation spec.compare: unknown way \"%s\"",
                        s->sim.compare[i]);
            return EXIT_BAD_INPUT;
        }
        w[(*n)++] = (enum gs_way)k;
    }
    return 0;
}

static int write_json(const char *path, struct gs_tsim *const *runs, size_t n)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) {
        gs__cli_say("simulate", "%s: %s", path, strerror(errno));
        return 1;
    }
    int r = gs_tsim_write_json(f, runs, n);
    if (f != stdout && fclose(f) != 0)
        r = -EIO;
    if (r < 0) {
        gs__cli_say("simulate", "%s: cannot write the JSON report", path);
        return 1;
    }
    return 0;
}

/* --from-now needs a snapshot's now; its now, cards and placed pods need --from-now (else they
 * would be read and ignored); --horizon counts from the start. A run nothing ends
 * (no pod's duration, no horizon) is warned about. */
static int start_and_horizon(const struct sopts *o, struct gs_scenario *s, struct gs_diag *d)
{
    const struct gs_pod_spec *placed = gs__cli_placed(s);
    if (o->from_now && s->sim.now_us == GS_UNSET)
        return gs_diag_error(d, "--from-now: the scenario has no Simulation spec.now (a snapshot "
                                "from GET /v1/snapshot has one)");
    if (!o->from_now && s->sim.now_us != GS_UNSET)
        return gs_diag_error(d,
                             "%s:%u:%u: now gives a snapshot's clock: a snapshot is continued "
                             "with --from-now",
                             s->sim.now_src.file, s->sim.now_src.line, s->sim.now_src.col);
    if (!o->from_now && s->sim.ncards)
        return gs_diag_error(d,
                             "%s:%u:%u: cardModes.cards gives a snapshot's cards: a snapshot is "
                             "continued with --from-now",
                             s->sim.cards[0].src.file, s->sim.cards[0].src.line,
                             s->sim.cards[0].src.col);
    if (!o->from_now && placed)
        return gs_diag_error(d,
                             "%s:%u:%u: pod %s/%s is placed (sim.gpusched.io/node): a snapshot "
                             "is continued with --from-now",
                             placed->placed_src.file, placed->placed_src.line,
                             placed->placed_src.col, placed->ns, placed->name);
    s->sim.from_now = o->from_now;
    if (o->horizon_us != GS_UNSET)
        s->sim.horizon_us = o->horizon_us + (o->from_now ? s->sim.now_us : 0);
    /* A pod without a duration runs until the run ends, and without a horizon the run ends at
     * the last arrival: pods pasted from `kubectl get pods` alone make a run of 0 s. */
    if (!s->npods && !o->from_now)
        gs_diag_warn(d, "the scenario holds no Pod: every figure is 0; pods are YAML documents "
                        "of kind Pod (`gpusched generate tenant-day` makes a day of them)");
    size_t timed = 0;
    for (size_t i = 0; i < s->npods; i++)
        timed += s->pods[i].duration_us != GS_UNSET;
    if (s->npods && !timed && s->sim.horizon_us == GS_UNSET && !o->from_now)
        gs_diag_warn(d, "no pod has the annotation sim.gpusched.io/duration and no horizon is "
                        "set: every pod runs until the run ends, at the last arrival; give pods "
                        "a duration, or the run one (--horizon, or a Simulation's spec.horizon)");
    return 0;
}

static int load_all(const struct sopts *o, struct gs_scenario *s, struct gs_diag *d)
{
    for (int i = 0; i < o->nfiles; i++) {
        int r = gs_scenario_load(s, o->files[i], d);
        if (r < 0)
            return r;
    }
    int r = gs_scenario_resolve(s, d);
    return r ? r : start_and_horizon(o, s, d);
}

/*
 * Each tenant's bill in each way, side by side, priced by @rc as `gpusched bill` prices the JSON
 * of the same runs. A way whose uses the rate card cannot price says why instead of a figure.
 */
static void print_bills(FILE *f, struct gs_tsim *const *runs, size_t n,
                        const struct gs_ratecard *rc, const char *rates)
{
    struct gs_bill *bills[GS_WAY_COUNT] = {0};
    char why[GS_WAY_COUNT][GS_DIAG_MSG_MAX], money[GS_MONEY_HUMAN_MAX];
    for (size_t w = 0; w < n; w++) {
        struct gs_diag d;
        gs_diag_init(&d);
        if (gs_bill_new(rc, &bills[w]) || gs_tsim_bill(runs[w], bills[w], &d)) {
            snprintf(why[w], sizeof(why[w]), "%s", d.msg[0] ? d.msg : "out of memory");
            gs_bill_free(bills[w]);
            bills[w] = NULL;
        }
    }
    fprintf(f, "\nbill, %s (rates: %s)\n%-28s", gs_ratecard_currency(rc), rates, "tenant");
    for (size_t w = 0; w < n; w++)
        fprintf(f, " %14s", gs_way_name(gs_tsim_summary(runs[w])->way));
    for (size_t i = 0; i <= gs_tsim_tenant_count(runs[0]); i++) {
        const struct gs_tsim_tenant *tn =
            i < gs_tsim_tenant_count(runs[0]) ? gs_tsim_tenant(runs[0], i) : NULL;
        if (tn && tn->pods == 0)
            continue; /* the bucket of pods without a tenant, when there are none */
        fprintf(f, "\n%-28s", tn ? tn->name : "all tenants");
        for (size_t w = 0; w < n; w++) {
            if (bills[w])
                gs_money_format_human(gs_bill_total_udollars(bills[w], tn ? tn->name : NULL),
                                      gs_ratecard_currency(rc), money);
            fprintf(f, " %14s", bills[w] ? money : "-");
        }
    }
    fprintf(f, "\n");
    for (size_t w = 0; w < n; w++) {
        if (!bills[w])
            fprintf(f, "(%s: no bill: %s)\n", gs_way_name(gs_tsim_summary(runs[w])->way), why[w]);
        gs_bill_free(bills[w]);
    }
}

int cmd_simulate_scenario(int argc, char **argv)
{
    struct sopts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    struct gs_scenario *s = NULL;
    struct gs_diag d;
    gs_diag_init(&d);
    d.warn = print_warning;
    if (gs_scenario_new(&s) < 0) {
        gs__cli_say("simulate", "out of memory");
        return 1;
    }
    const char *json = o.json && strcmp(o.json, "-") != 0 ? o.json : NULL, *in[MAX_FILES + 1];
    for (int i = 0; i < o.nfiles; i++)
        in[i] = strcmp(o.files[i], "-") != 0 ? o.files[i] : NULL;
    in[o.nfiles] = o.rates;
    if (gs__cli_check_outputs(&json, (const char *[]){"--json"}, 1, in, (size_t)o.nfiles + 1, &d)) {
        gs__cli_say("simulate", "%s", d.msg);
        gs_scenario_free(s);
        return EXIT_BAD_INPUT;
    }
    struct gs_ratecard *rates = NULL;
    int r = o.quiet ? 0 : gs__cli_of_option("--rates", gs_ratecard_load(o.rates, &rates, &d), &d);
    if (r < 0) {
        gs__cli_say("simulate", "%s", d.msg[0] ? d.msg : strerror(-r));
        gs_scenario_free(s);
        return r == -ENOMEM ? 1 : EXIT_BAD_INPUT;
    }
    r = load_all(&o, s, &d);
    if (r < 0) {
        gs__cli_say("simulate", "%s", d.msg[0] ? d.msg : strerror(-r));
        gs_scenario_free(s);
        gs_ratecard_free(rates);
        return r == -ENOMEM || r == -EIO ? 1 : EXIT_BAD_INPUT;
    }
    enum gs_way ways[GS_WAY_COUNT];
    size_t nways;
    struct gs_tsim *runs[GS_WAY_COUNT] = {0};
    rc = ways_of(&o, s, ways, &nways);
    if (rc == 0 && s->policy.nnodes == 0) {
        gs__cli_say("simulate", "%s%s: no nodes; a Cluster document lists them", o.files[0],
                    o.nfiles > 1 ? " and the other files" : "");
        rc = EXIT_BAD_INPUT;
    }
    for (size_t i = 0; rc == 0 && i < nways; i++) {
        r = gs_tsim_run(s, ways[i], &runs[i], &d);
        if (r < 0) {
            gs__cli_say("simulate", "%s", d.msg[0] ? d.msg : strerror(-r));
            rc = r == -ENOMEM ? 1 : EXIT_BAD_INPUT;
        }
    }
    if (rc == 0 && !o.quiet) {
        FILE *out = o.json && strcmp(o.json, "-") == 0 ? stderr : stdout;
        gs_tsim_write_text(out, runs, nways);
        print_bills(out, runs, nways, rates, o.rates);
    }
    if (rc == 0 && o.json)
        rc = write_json(o.json, runs, nways);
    for (size_t i = 0; i < nways; i++)
        gs_tsim_free(runs[i]);
    gs_scenario_free(s);
    gs_ratecard_free(rates);
    return rc;
}
