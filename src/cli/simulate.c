/* gpusched simulate: trace replay with the FGD study's method, one or all policies. */
#include "cli.h"

#include "gpusched/datadir.h"
#include "gpusched/catalog.h"
#include "gpusched/config.h"
#include "gpusched/diag.h"
#include "gpusched/report.h"
#include "gpusched/sched.h"
#include "gpusched/sim.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SEEDS    100 /* every run's events stay in memory for the report */
#define MAX_PROFILES 16

struct opts {
    const char *nodes, *pods, *sequence, *policy, *config, *scheduler_name, *json, *curve;
    const char *tie_order; /* auto, seed, reference */
    uint64_t seed_lo, seed_hi;
    int tune_permille;
    int quiet;
};

struct inputs {
    struct gs_trace_node *nodes;
    size_t nnodes;
    struct gs_trace_pod *pods;
    size_t npods;
    struct gs_sequence seq;
    struct gs_profile *prof[MAX_PROFILES];
    size_t nprof;
    uint32_t *ref_prio; /* tie-break order recovered from the reference, or NULL */
    char note[512];     /* extra header lines of the report */
};

static void usage(FILE *f)
{
    fprintf(f, "usage: gpusched simulate [options]\n"
               "  --nodes CSV        node list (default: the bundled Alibaba GPU nodes)\n"
               "  --pods CSV         pod list (default: openb_pod_list_default.csv)\n"
               "  --sequence CSV     replay this exact arrival order (column `pod`) instead of "
               "sampling\n"
               "  --scenario FILE    run a scenario (Cluster, policy, Pods; once per file), with\n"
               "                     options of its own, among them:\n"
               "    --way WAY        exclusive | sharing | full | compare (all three)\n"
               "    --horizon DURATION  simulated time to run, as 8h (default: the\n"
               "                     Simulation's horizon, else until the last pod ends)\n"
               "                     (all of them: gpusched simulate --scenario x --help)\n"
               "  --policy NAME      gpusched (default), fgd, bestfit, gpupacking, gpuclustering,\n"
               "                     dotprod, random, or all (side by side)\n"
               "  --config YAML      take the profile from a KubeSchedulerConfiguration instead\n"
               "  --scheduler-name N the profile to take from --config (default: the first)\n"
               "  --seed N           seed of sampling and random choices (default 42)\n"
               "  --seeds A..B       run every seed from A to B and report means\n"
               "  --tune X           arrivals until their GPU request reaches X x capacity "
               "(default 1.3)\n"
               "  --tie-order MODE   ties between equal nodes: seed (a seeded random node order),\n"
               "                     reference (the order the sequence's peer_<Policy> placements\n"
               "                     imply), auto (reference when the sequence has them; default)\n"
               "  --json FILE        write pods and summary as JSON ('-': standard output, the\n"
               "                     table then on standard error)\n"
               "  --curve FILE       write allocation against arrived request as CSV ('-' as\n"
               "                     for --json)\n"
               "  --quiet            no progress bar (with --scenario: no text report either,\n"
               "                     only the --json file)\n");
}

static int bad(const char *fmt, const char *arg)
{
    gs__cli_say("simulate", fmt, arg);
    return EXIT_BAD_INPUT;
}

/* "1.3" -> 1300; up to three decimals, 0.001..100. */
static int parse_tune(const char *s, int *out)
{
    long whole = 0, frac = 0, scale = 1000;
    const char *p = s;
    if (!*p)
        return -1;
    for (; *p >= '0' && *p <= '9'; p++)
        if ((whole = whole * 10 + (*p - '0')) > 100)
            return -1;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++) {
            if (scale == 1 && *p != '0') /* finer than 0.001: only trailing zeros */
                return -1;
            if (scale == 1)
                continue;
            scale /= 10;
            frac += (*p - '0') * scale;
        }
    if (*p || whole * 1000 + frac < 1 || whole * 1000 + frac > 100000)
        return -1;
    *out = (int)(whole * 1000 + frac);
    return 0;
}

/* A seed: decimal digits only, at most 2^63 - 1 (it is written to JSON as an integer). */
static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > INT64_MAX)
        return -1;
    *out = v;
    return 0;
}

static int parse_seeds(const char *s, struct opts *o)
{
    char lo[32];
    const char *dots = strstr(s, "..");
    if (!dots || (size_t)(dots - s) >= sizeof(lo))
        return -1;
    memcpy(lo, s, (size_t)(dots - s));
    lo[dots - s] = '\0';
    if (parse_u64(lo, &o->seed_lo) || parse_u64(dots + 2, &o->seed_hi))
        return -1;
    return o->seed_hi >= o->seed_lo && o->seed_hi - o->seed_lo < MAX_SEEDS ? 0 : -1;
}

int gs__cli_policy(const char *cmd, const char *name, const char *no_all)
{
    char known[160] = "";
    for (const char *const *p = gs_policy_names(); *p; p++) {
        if (strcmp(*p, name) == 0)
            return 0;
        snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s", *known ? ", " : "",
                 *p);
    }
    if (strcmp(name, "all") == 0 && !no_all)
        return 0;
    if (strcmp(name, "all") == 0)
        gs__cli_say(cmd, "--policy all: %s; give one of %s", no_all, known);
    else
        gs__cli_say(cmd, "--policy %s: unknown policy (known: %s%s)", name, known,
                    no_all ? "" : ", or all");
    return EXIT_BAD_INPUT;
}

/* Apply one option. Return: 0; an exit status (> 0) after a message; -1 unknown option. */
static int apply_opt(int c, const char *arg, struct opts *o)
{
    const char **str[] = {['n'] = &o->nodes,  ['p'] = &o->pods,   ['q'] = &o->sequence,
                          ['P'] = &o->policy, ['c'] = &o->config, ['N'] = &o->scheduler_name,
                          ['j'] = &o->json,   ['C'] = &o->curve,  ['T'] = &o->tie_order};
    if (c > 0 && (size_t)c < sizeof(str) / sizeof(str[0]) && str[c]) {
        if (c == 'T' && strcmp(arg, "auto") && strcmp(arg, "seed") && strcmp(arg, "reference"))
            return bad("--tie-order: \"%s\" is not auto, seed or reference", arg);
        if (c == 'P' && gs__cli_policy("simulate", arg, NULL))
            return EXIT_BAD_INPUT;
        *str[c] = arg;
        return 0;
    }
    switch (c) {
    case 'Q':
        o->quiet = 1;
        return 0;
    case 's':
        if (parse_u64(arg, &o->seed_lo))
            return bad("--seed: \"%s\" is not a whole number in 0..2^63-1", arg);
        o->seed_hi = o->seed_lo;
        return 0;
    case 'S':
        if (parse_seeds(arg, o))
            return bad("--seeds: \"%s\" is not A..B with A <= B (at most 100 seeds)", arg);
        return 0;
    case 't':
        if (parse_tune(arg, &o->tune_permille))
            return bad("--tune: \"%s\" is not a number in 0.001..100 with at most 3 decimals", arg);
        return 0;
    case 'h':
        usage(stdout);
        return 0;
    default:
        return -1;
    }
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        {"nodes", required_argument, 0, 'n'},
        {"pods", required_argument, 0, 'p'},
        {"sequence", required_argument, 0, 'q'},
        {"policy", required_argument, 0, 'P'},
        {"config", required_argument, 0, 'c'},
        {"scheduler-name", required_argument, 0, 'N'},
        {"seed", required_argument, 0, 's'},
        {"seeds", required_argument, 0, 'S'},
        {"tune", required_argument, 0, 't'},
        {"json", required_argument, 0, 'j'},
        {"curve", required_argument, 0, 'C'},
        {"quiet", no_argument, 0, 'Q'},
        {"help", no_argument, 0, 'h'},
        {"tie-order", required_argument, 0, 'T'},
        {0, 0, 0, 0},
    };
    static char nodes[GS_DATA_PATH_MAX], pods[GS_DATA_PATH_MAX];
    *o = (struct opts){.nodes = gs_data_file(GS_DATA_NODES, nodes, sizeof(nodes)),
                       .pods = gs_data_file(GS_DATA_PODS, pods, sizeof(pods)),
                       .policy = "gpusched",
                       .seed_lo = 42,
                       .seed_hi = 42,
                       .tune_permille = 1300,
                       .tie_order = "auto"};
    int c;
    optind = 1;
    opterr = 0;
    unsigned seen = 0; /* bit per option letter class, for conflicts */
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        int rc = apply_opt(c, optarg, o);
        if (rc > 0)
            return rc;
        static const char *const scenario_only[] = {"--way", "--horizon", "--rates", "--from-now"};
        for (size_t k = 0; rc < 0 && k < sizeof(scenario_only) / sizeof(*scenario_only); k++)
            if (strncmp(argv[optind - 1], scenario_only[k], strlen(scenario_only[k])) == 0)
                return bad("%s is an option of simulate --scenario FILE: a replay of a pod "
                           "list (--pods) takes the options of gpusched simulate --help",
                           argv[optind - 1]);
        if (rc < 0) {
            gs__cli_say("simulate", "%s \"%s\" (see gpusched simulate --help)",
                        gs_option_problem(c), argv[optind - 1]);
            return EXIT_BAD_INPUT;
        }
        seen |= c == 's' ? 1u : c == 'S' ? 2u : c == 'P' ? 4u : c == 'c' ? 8u : c == 't' ? 16u : 0u;
        if (c == 'h')
            return -1;
    }
    if (optind < argc)
        return bad("unexpected argument \"%s\"", argv[optind]);
    if ((seen & 3u) == 3u)
        return bad("%s", "--seed and --seeds: give one or the other");
    if ((seen & 12u) == 12u)
        return bad("%s", "--policy and --config: give one or the other");
    if (o->scheduler_name && !o->config)
        return bad("%s", "--scheduler-name picks a profile of --config; no --config given");
    if (o->sequence && (seen & 16u))
        return bad("%s", "--tune samples arrivals; --sequence gives them: give one or the other");
    if ((o->json && !*o->json) || (o->curve && !*o->curve))
        return bad("%s", "--json/--curve: an empty file name");
    if (o->json && o->curve && !strcmp(o->json, "-") && !strcmp(o->curve, "-"))
        return bad("%s", "--json - and --curve -: one of them may go to standard output");
    return 0;
}

static int fail(const struct gs_diag *d, int rc)
{
    gs__cli_say("simulate", "%s", d->msg[0] ? d->msg : strerror(-rc));
    return rc == -ENOMEM || rc == -EIO ? 1 : EXIT_BAD_INPUT; /* inputs map -EIO to -EINVAL */
}

static void print_warning(void *ud, const char *msg)
{
    (void)ud;
    gs__cli_say("simulate", "warning: %s", msg);
}

/* Every pod must be hostable by some GPU model of the cluster: else it is an input error. */
static int check_models(const struct opts *o, const struct inputs *in, struct gs_diag *d)
{
    uint32_t have = 0;
    for (size_t i = 0; i < in->nnodes; i++)
        if (in->nodes[i].gpus > 0)
            have |= 1u << in->nodes[i].model;
    for (size_t i = 0; i < in->npods; i++) {
        const struct gs_pod_req *r = &in->pods[i].req;
        if (r->num_gpu && r->model_mask && !(r->model_mask & have))
            return gs_diag_error(d, "%s:%u: pod %s asks for a GPU model no node of %s has", o->pods,
                                 in->pods[i].line, in->pods[i].name, o->nodes);
    }
    return 0;
}

/* "profile NAME: filter A; score B x100, C x1; reserve D" */
static void describe_profile(const struct gs_profile *p, char *buf, size_t cap)
{
    size_t off = (size_t)snprintf(buf, cap, "profile %s:", gs_profile_name(p));
    for (int ep = 0; ep < GS_EP_COUNT && off < cap; ep++) {
        int n = gs_profile_count(p, (enum gs_ext_point)ep);
        for (int i = 0; i < n && off < cap; i++) {
            int w, id = gs_profile_at(p, (enum gs_ext_point)ep, i, &w);
            off +=
                (size_t)snprintf(buf + off, cap - off, "%s%s%s", i ? ", " : " ",
                                 i ? "" : gs_ext_point_name((enum gs_ext_point)ep), i ? "" : " ");
            if (off < cap)
                off += (size_t)snprintf(buf + off, cap - off, ep == GS_EP_SCORE ? "%s x%d" : "%s",
                                        gs_plugin_name(id), w);
        }
        if (n && off < cap)
            off += (size_t)snprintf(buf + off, cap - off, ";");
    }
}

static int load_profiles(const struct opts *o, struct inputs *in, struct gs_diag *d)
{
    int rc;
    if (o->config) {
        rc = gs__cli_of_option(
            "--config", gs_config_load_kubesched(o->config, o->scheduler_name, &in->prof[0], d), d);
        if (rc == -EIO)
            rc = -EINVAL; /* an unreadable input is bad input (exit 2), not an internal error */
        in->nprof = rc ? 0 : 1;
        if (!rc)
            describe_profile(in->prof[0], in->note, sizeof(in->note));
        return rc;
    }
    if (strcmp(o->policy, "all") != 0) {
        rc = gs_profile_for_policy(o->policy, &in->prof[0], d);
        in->nprof = rc ? 0 : 1;
        return rc;
    }
    for (const char *const *p = gs_policy_names(); *p && in->nprof < MAX_PROFILES; p++) {
        rc = gs_profile_for_policy(*p, &in->prof[in->nprof], d);
        if (rc)
            return rc;
        in->nprof++;
    }
    return 0;
}

/* Recovering the reference order costs rows x nodes x policies evaluations: keep "auto" cheap. */
#define REF_ORDER_BUDGET 400000000ULL

static int load_tie_order(const struct opts *o, struct inputs *in, struct gs_diag *d)
{
    int want = strcmp(o->tie_order, "reference") == 0;
    if (!want && o->sequence &&
        (unsigned long long)in->seq.n * in->nnodes * (unsigned)in->seq.npeers > REF_ORDER_BUDGET) {
        gs_diag_warn(d,
                     "%s: %zu rows x %zu nodes: too large to recover the reference node order "
                     "(use --tie-order reference to insist); ties use the seeded order",
                     o->sequence, in->seq.n, in->nnodes);
        return 0;
    }
    if (!strcmp(o->tie_order, "seed") || (!want && (!o->sequence || in->seq.npeers == 0)))
        return 0;
    if (want && !o->sequence)
        return gs_diag_error(d, "--tie-order reference needs a --sequence with peer_<Policy> "
                                "columns");
    size_t pairs;
    int used;
    struct gs_diag why;
    gs_diag_init(&why);
    int rc = gs_sim_reference_order(in->nodes, in->nnodes, in->pods, in->npods, &in->seq,
                                    &in->ref_prio, &pairs, &used, &why);
    if (rc == -ENOMEM)
        return rc;
    if (rc && want)
        return gs_diag_error(d, "%s: cannot recover the reference node order: %s", o->sequence,
                             why.msg);
    if (rc) {
        gs_diag_warn(d, "%s: ties use the seeded node order: %s", o->sequence, why.msg);
        return 0;
    }
    size_t off = strlen(in->note);
    snprintf(in->note + off, sizeof(in->note) - off,
             "%sties: the reference run's node order, recovered from %d of its policies' "
             "placements (%zu pairs)",
             off ? "\n" : "", used, pairs);
    return 0;
}

int gs__cli_same_file(const char *out, const char *in)
{
    struct stat a, b;
    return in && stat(out, &a) == 0 && stat(in, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

int gs__cli_check_outputs(const char *const *outs, const char *const *flags, size_t nout,
                          const char *const *ins, size_t nin, struct gs_diag *d)
{
    for (size_t i = 0; i < nout; i++) {
        if (!outs[i])
            continue;
        for (size_t k = 0; k < nin; k++)
            if (gs__cli_same_file(outs[i], ins[k]))
                return gs_diag_error(d, "%s %s: is an input file; name another file", flags[i],
                                     outs[i]);
        struct stat st;
        int existed = stat(outs[i], &st) == 0;
        if (existed && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode)))
            continue; /* opened to probe, a FIFO's reader would see its end */
        FILE *f = fopen(outs[i], "a");
        if (!f)
            return gs_diag_error(d, "%s %s: cannot write: %s", flags[i], outs[i], strerror(errno));
        fclose(f);
        if (!existed)
            unlink(outs[i]);
    }
    return 0;
}

/* Outputs are created before the runs, so a bad path fails in a second, not after the work. */
static int check_outputs(const struct opts *o, struct gs_diag *d)
{
    const char *paths[2] = {o->json, o->curve}, *flag[2] = {"--json", "--curve"};
    for (int i = 0; i < 2; i++)
        paths[i] = paths[i] && strcmp(paths[i], "-") != 0 ? paths[i] : NULL; /* stdout */
    const char *inputs[4] = {o->nodes, o->pods, o->sequence, o->config};
    return gs__cli_check_outputs(paths, flag, 2, inputs, 4, d);
}

static int load(const struct opts *o, struct inputs *in, struct gs_diag *d)
{
    int rc = check_outputs(o, d);
    if (!rc)
        rc = gs_trace_read_nodes(o->nodes, &in->nodes, &in->nnodes, d);
    if (!rc)
        rc = gs_trace_read_pods(o->pods, &in->pods, &in->npods, d);
    if (!rc && o->sequence)
        rc = gs_trace_read_sequence(o->sequence, in->pods, in->npods, in->nodes, in->nnodes,
                                    &in->seq, d);
    if (!rc) {
        int64_t gpus = 0;
        for (size_t i = 0; i < in->nnodes; i++)
            gpus += in->nodes[i].gpus;
        if (gpus == 0)
            rc = gs_diag_error(d, "%s: no node has a GPU: the cluster is empty", o->nodes);
    }
    if (!rc)
        rc = check_models(o, in, d);
    if (!rc)
        rc = load_profiles(o, in, d);
    if (!rc)
        rc = load_tie_order(o, in, d);
    return rc;
}

static void inputs_free(struct inputs *in)
{
    free(in->nodes);
    free(in->pods);
    gs_sequence_free(&in->seq);
    free(in->ref_prio);
    for (size_t i = 0; i < in->nprof; i++)
        gs_profile_free(in->prof[i]);
}

struct progress {
    const char *policy;
    uint64_t seed;
    int last;
};

static void show_progress(void *ud, size_t done, size_t total)
{
    struct progress *p = ud;
    int pct = total ? (int)(done * 100 / total) : 100;
    if (pct == p->last)
        return;
    p->last = pct;
    char bar[41];
    memset(bar, '#', (size_t)(pct * 40 / 100));
    memset(bar + pct * 40 / 100, '.', (size_t)(40 - pct * 40 / 100));
    bar[40] = '\0';
    fprintf(stderr, "\r%-14s seed %-6llu [%s] %3d%%", p->policy, (unsigned long long)p->seed, bar,
            pct);
    if (done == total)
        fprintf(stderr, "\r%*s\r", 80, "");
}

static int peer_column(const struct gs_sequence *seq, const char *policy)
{
    for (int k = 0; k < seq->npeers; k++)
        if (strcasecmp(seq->peer_policy[k], policy) == 0)
            return k;
    return -1;
}

/*
 * Why a sample came out empty (gs_sim_sample() -ERANGE): every pod asks for more than the target
 * (@target_milli, milli-GPU), or, with this seed, the pods that fit were all dropped or drawn
 * after one that does not. Return: -EINVAL with @d.
 */
static int no_arrival(const struct opts *o, const struct inputs *in, int64_t target_milli,
                      uint64_t seed, struct gs_diag *d)
{
    long long gpus = (long long)(target_milli / 1000);
    for (size_t i = 0; i < in->npods; i++)
        if (gs_pod_req_gpu_milli(&in->pods[i].req) <= target_milli)
            return gs_diag_error(d,
                                 "%s: no pod arrives with seed %llu: the sampling keeps pods "
                                 "while the GPU request fits --tune x capacity (%lld GPUs), and "
                                 "a pod asking more ended it before any arrived",
                                 o->pods, (unsigned long long)seed, gpus);
    return gs_diag_error(d,
                         "%s: no pod arrives: every pod asks for more GPUs than --tune x "
                         "capacity (%lld GPUs)",
                         o->pods, gpus);
}

static int run_one(const struct opts *o, const struct inputs *in, const struct gs_profile *prof,
                   uint64_t seed, struct gs_sim_run **out, struct gs_diag *d)
{
    uint32_t *order = in->seq.pod;
    size_t n = in->seq.n;
    int rc = 0;
    if (!o->sequence) {
        int64_t gpus = 0;
        for (size_t i = 0; i < in->nnodes; i++)
            gpus += in->nodes[i].gpus;
        rc = gs_sim_sample(in->pods, in->npods, gpus * 1000, o->tune_permille, seed, &order, &n);
        if (rc == -EDOM)
            return gs_diag_error(d,
                                 "%s: no pod asks for a GPU, so arrivals never reach --tune x "
                                 "GPU capacity",
                                 o->pods);
        if (rc == -ERANGE)
            return no_arrival(o, in, gpus * o->tune_permille, seed, d);
        if (rc == -E2BIG)
            return gs_diag_error(d, "more than %d arrivals: lower --tune", GS_SIM_ARRIVALS_MAX);
        if (rc)
            return gs_diag_error_code(d, rc, "cannot sample arrivals");
    }
    struct progress pr = {gs_profile_name(prof), seed, -1};
    int tty = !o->quiet && isatty(STDERR_FILENO);
    rc = gs_sim_replay(in->nodes, in->nnodes, prof, in->pods, in->npods, order, n, seed,
                       in->ref_prio, o->sequence ? &in->seq : NULL,
                       o->sequence ? peer_column(&in->seq, gs_profile_name(prof)) : -1,
                       tty ? show_progress : NULL, &pr, out, d);
    if (!o->sequence)
        free(order);
    return rc;
}

static int report(const struct opts *o, const struct inputs *in, struct gs_sim_run **runs,
                  size_t nseeds, struct gs_diag *d)
{
    struct gs_report_ctx ctx = {
        .nodes = in->nodes,
        .nnodes = in->nnodes,
        .pods = in->pods,
        .npods = in->npods,
        .nodes_path = o->nodes,
        .pods_path = o->pods,
        .sequence_path = o->sequence,
        .tune_permille = o->sequence ? 0 : o->tune_permille,
        .note = in->note[0] ? in->note : NULL,
    };
    int rc = 0;
    if (o->json)
        rc = gs_report_json(o->json, &ctx, runs, in->nprof, nseeds, d);
    if (!rc && o->curve)
        rc = gs_report_curve(o->curve, &ctx, runs, in->nprof * nseeds, d);
    int piped = (o->json && !strcmp(o->json, "-")) || (o->curve && !strcmp(o->curve, "-"));
    if (!rc) /* the table last: a failed file write leaves no half-reported run */
        gs_report_text(piped ? stderr : stdout, &ctx, runs, in->nprof, nseeds);
    return rc;
}

int cmd_simulate(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--scenario") == 0 || strncmp(argv[i], "--scenario=", 11) == 0)
            return cmd_simulate_scenario(argc, argv);
    struct opts o;
    struct inputs in = {0};
    struct gs_diag d;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    gs_diag_init(&d);
    d.warn = print_warning;
    if ((rc = load(&o, &in, &d)) != 0) {
        inputs_free(&in);
        return fail(&d, rc);
    }
    size_t nseeds = (size_t)(o.seed_hi - o.seed_lo + 1);
    struct gs_sim_run **runs = calloc(in.nprof * nseeds, sizeof(*runs));
    rc = runs ? 0 : -ENOMEM;
    for (size_t p = 0; !rc && p < in.nprof; p++)
        for (size_t k = 0; !rc && k < nseeds; k++)
            rc = run_one(&o, &in, in.prof[p], o.seed_lo + k, &runs[p * nseeds + k], &d);
    if (!rc)
        rc = report(&o, &in, runs, nseeds, &d);
    for (size_t i = 0; runs && i < in.nprof * nseeds; i++)
        gs_sim_run_free(runs[i]);
    free(runs);
    inputs_free(&in);
    return rc ? fail(&d, rc) : 0; /* a failed write to stdout: main() */
}
