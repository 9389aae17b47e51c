/* gpusched generate: write a scenario (cluster, policy, pods) that `gpusched simulate` reads. */
#include "cli.h"

#include "gpusched/diag.h"
#include "gpusched/forecast.h"
#include "gpusched/tenantday.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct gen_opts {
    struct gs_tenantday_params p;
    const char *traffic; /* --inference-traffic FILE */
    const char *out;     /* NULL: stdout */
    int quiet;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpusched generate tenant-day [options]\n"
            "  --nodes N    cluster size in nodes, 1..%d (default 64: 480 GPUs)\n"
            "  --pods N     exact number of pods, 1..%d (default 2000)\n"
            "  --hours H    horizon in hours, 1..%d (default 24)\n"
            "  --seed S     seed of every random choice (default 42)\n"
            "  --sharing M  how fractional pods share a card: slices (nvidia.com/gpumem and\n"
            "               gpucores, the default), mig (nvidia.com/mig-<profile>) or timeslice\n"
            "               (nvidia.com/gpu.shared on cards offering 4 replicas); E/I sets the\n"
            "               experiments' and the inference replicas' apart (mig/slices)\n"
            "  --inference-traffic FILE\n"
            "               the inference replicas follow this forecast (the CSV of gpusched\n"
            "               forecast --format csv; its series summed hour by hour) instead of\n"
            "               a fixed count serving all day\n"
            "  --elastic    gangs run from the low end of their kind's GPU range (training 2,\n"
            "               HPO 4 GPUs), grow into free cards and save their state every\n"
            "               30 min; inference replicas follow the day's traffic\n"
            "  --checkpoint D\n"
            "               training and HPO pods save their state every D (30m, 1h) and\n"
            "               resume there when evicted (gpusched.io/checkpoint-interval;\n"
            "               default 30m, as Check-N-Run saves; none: they restart from zero)\n"
            "  -o FILE      write to FILE instead of stdout\n"
            "  --quiet      no summary on stderr\n"
            "The same options give the same output, byte for byte.\n",
            GS_TENANTDAY_NODES_MAX, GS_TENANTDAY_PODS_MAX, GS_TENANTDAY_HOURS_MAX);
}

static int bad(const char *fmt, const char *arg)
{
    gs__cli_say("generate", fmt, arg);
    return EXIT_BAD_INPUT;
}

/* A whole number option: decimal digits only, in @lo..@max. Return: 0; -1 otherwise. */
static int parse_num(const char *s, uint64_t lo, uint64_t max, uint64_t *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > max)
        return -1;
    *out = v;
    return 0;
}

/* --sharing M or I/F: one way for both kinds of fractional pod, or one each. */
static int parse_sharing(const char *arg, enum gs_tenantday_sharing out[2])
{
    const char *slash = strchr(arg, '/');
    for (int part = 0; part < 2; part++) {
        const char *w = part == 0 || !slash ? arg : slash + 1;
        size_t len = part == 0 && slash ? (size_t)(slash - arg) : strlen(w);
        int k = 0;
        while (k < GS_TENANTDAY_SHARINGS && (strlen(gs_tenantday_sharing_names[k]) != len ||
                                             strncmp(w, gs_tenantday_sharing_names[k], len)))
            k++;
        if (k == GS_TENANTDAY_SHARINGS) {
            gs__cli_say("generate",
                        "--sharing: \"%s\" is not slices, mig or timeslice, or "
                        "two of them as EXPERIMENTS/INFERENCE (mig/slices)",
                        arg);
            return EXIT_BAD_INPUT;
        }
        out[part] = (enum gs_tenantday_sharing)k;
    }
    return 0;
}

/* Apply one option. Return: 0; an exit status (> 0) after a message; -1 unknown option. */
static int apply_opt(int c, const char *arg, struct gen_opts *o)
{
    static const struct {
        int c;
        const char *name, *range;
        uint64_t lo, max;
    } nums[] = {
        {'n', "--nodes", "1..100000", 1, GS_TENANTDAY_NODES_MAX},
        {'p', "--pods", "1..1000000", 1, GS_TENANTDAY_PODS_MAX},
        {'H', "--hours", "1..168", 1, GS_TENANTDAY_HOURS_MAX},
        {'s', "--seed", "0..2^63-1", 0, INT64_MAX}, /* as simulate's --seed */
    };
    uint64_t v;
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        if (c != nums[i].c)
            continue;
        if (parse_num(arg, nums[i].lo, nums[i].max, &v)) {
            gs__cli_say("generate", "%s: \"%s\" is not a whole number in %s", nums[i].name, arg,
                        nums[i].range);
            return EXIT_BAD_INPUT;
        }
        uint32_t *field[] = {&o->p.nodes, &o->p.pods, &o->p.hours};
        if (c == 's')
            o->p.seed = v;
        else
            *field[i] = (uint32_t)v;
        return 0;
    }
    if (c == 'S')
        return parse_sharing(arg, o->p.sharing);
    if (c == 'T') {
        o->traffic = arg;
        return 0;
    }
    if (c == 'C') {
        int64_t d = 0;
        if (strcmp(arg, "none") != 0 && (gs__cli_duration(arg, &d) || d < 1 || d > UINT32_MAX))
            return bad("--checkpoint: \"%s\" is not none or a duration of at least 1s (30m, 1h)",
                       arg);
        o->p.checkpoint_s = (uint32_t)d;
        return 0;
    }
    if (c == 'o' && !*arg)
        return bad("-o: the file name is empty%s", "");
    if (c == 'o')
        o->out = arg;
    else if (c == 'q')
        o->quiet = 1;
    else if (c == 'E')
        o->p.elastic = 1;
    return c == 'o' || c == 'q' || c == 'E' ? 0 : -1;
}

/* Return: 0 to run; -1 after --help (exit 0); an exit status > 0 after a message. */
static int parse_args(int argc, char **argv, struct gen_opts *o)
{
    static const struct option longopts[] = {
        {"nodes", required_argument, 0, 'n'},
        {"pods", required_argument, 0, 'p'},
        {"hours", required_argument, 0, 'H'},
        {"seed", required_argument, 0, 's'},
        {"output", required_argument, 0, 'o'},
        {"quiet", no_argument, 0, 'q'},
        {"sharing", required_argument, 0, 'S'},
        {"inference-traffic", required_argument, 0, 'T'},
        {"checkpoint", required_argument, 0, 'C'},
        {"elastic", no_argument, 0, 'E'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    gs_tenantday_defaults(&o->p);
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return -1;
        }
        int rc = apply_opt(c, optarg, o);
        if (rc > 0)
            return rc;
        if (rc < 0) {
            gs__cli_say("generate", "%s \"%s\" (see gpusched generate --help)",
                        gs_option_problem(c), argv[optind - 1]);
            return EXIT_BAD_INPUT;
        }
    }
    if (optind < argc)
        return bad("unexpected argument \"%s\"", argv[optind]);
    return 0;
}

static void summary(const struct gs_tenantday_stats *st, uint32_t hours)
{
    uint32_t lo = UINT32_MAX, hi = 0;
    for (uint32_t h = 0; h < hours; h++) {
        lo = st->hourly_permille[h] < lo ? st->hourly_permille[h] : lo;
        hi = st->hourly_permille[h] > hi ? st->hourly_permille[h] : hi;
    }
    fprintf(stderr,
            "tenant-day: %" PRIu32 " nodes, %" PRIu32 " GPUs, %" PRIu32 " pods (training %" PRIu32
            ", interactive %" PRIu32 ", inference %" PRIu32 ", hpo %" PRIu32 "), %" PRIu32
            " gangs; GPU time asked %" PRIu32 ".%02" PRIu32 "x capacity, demand by hour %" PRIu32
            ".%02" PRIu32 "x..%" PRIu32 ".%02" PRIu32 "x\n",
            st->nodes, st->gpus, st->pods, st->pods_by_kind[0], st->pods_by_kind[1],
            st->pods_by_kind[2], st->pods_by_kind[3], st->podgroups, st->offered_permille / 1000,
            st->offered_permille % 1000 / 10, lo / 1000, lo % 1000 / 10, hi / 1000, hi % 1000 / 10);
}

static void print_warning(void *ud, const char *msg)
{
    (void)ud;
    gs__cli_say("generate", "warning: %s", msg);
}

/* The traffic of --inference-traffic: every series of the forecast summed hour by hour. */
static int read_traffic(struct gen_opts *o, int64_t **out)
{
    struct gs_series_set set;
    struct gs_diag d;
    gs_diag_init(&d);
    if (gs_series_read_csv(o->traffic, &set, &d) < 0) {
        gs__cli_say("generate", "--inference-traffic: %s", d.msg);
        return EXIT_BAD_INPUT;
    }
    int64_t *t = calloc(set.n, sizeof(*t));
    if (!t) {
        gs_series_set_free(&set);
        return 1;
    }
    for (size_t i = 0; i < set.count; i++)
        for (size_t h = 0; h < set.n; h++)
            t[h] += set.s[i].milli[h];
    o->p.traffic = t;
    o->p.ntraffic = set.n > GS_TENANTDAY_HOURS_MAX ? GS_TENANTDAY_HOURS_MAX + 1 : (uint32_t)set.n;
    gs_series_set_free(&set);
    if (gs_tenantday_check(&o->p, &d) < 0) { /* the options are checked: the file's fault */
        gs__cli_say("generate", "--inference-traffic %s: %s", o->traffic, d.msg);
        free(t);
        return EXIT_BAD_INPUT;
    }
    *out = t;
    return 0;
}

static int run_tenantday(const struct gen_opts *o)
{
    FILE *f = o->out ? fopen(o->out, "w") : stdout;
    if (!f) {
        gs__cli_say("generate", "cannot write %s: %s", o->out, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    struct gs_diag d;
    struct gs_tenantday_stats st;
    gs_diag_init(&d);
    d.warn = print_warning;
    int rc = gs_tenantday_write(f, &o->p, &st, &d);
    if (o->out && fclose(f) != 0 && rc == 0)
        rc = gs_diag_error_code(&d, -EIO, "tenant-day: writing the scenario failed");
    if (rc < 0) {
        gs__cli_say("generate", "%s: %s", d.msg, o->out ? o->out : "stdout");
        struct stat sb;
        /* No half-written scenario left behind, but only a regular file is ever removed: -o
         * may name a device or a pipe, and root must not unlink /dev/full. */
        if (o->out && stat(o->out, &sb) == 0 && S_ISREG(sb.st_mode))
            unlink(o->out);
        return rc == -EINVAL ? EXIT_BAD_INPUT : 1;
    }
    if (!o->quiet)
        summary(&st, o->p.hours);
    return 0;
}

int cmd_generate(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_BAD_INPUT : 0;
    }
    if (strcmp(argv[1], "tenant-day") != 0)
        return bad("unknown generator \"%s\" (there is one: tenant-day)", argv[1]);
    struct gen_opts o = {0};
    int64_t *traffic = NULL;
    int rc = parse_args(argc - 1, argv + 1, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    struct gs_diag d;
    gs_diag_init(&d);
    if (gs__cli_check_outputs((const char *[]){o.out}, (const char *[]){"-o"}, 1,
                              (const char *[]){o.traffic}, 1, &d))
        return bad("%s", d.msg);
    if (o.traffic && (rc = read_traffic(&o, &traffic)) != 0)
        return rc;
    rc = run_tenantday(&o);
    free(traffic);
    return rc;
}
