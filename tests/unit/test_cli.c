/*
 * The gpusched command as a user runs it: the binary named by $GPUSCHED_BIN, started from the
 * source root with its stdout and stderr captured. A good run exits 0 and writes its reports; bad
 * input exits 2 with one line on stderr naming the place, no report on stdout and never a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>

#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EIGHTH_NODES    "data/fgd-reference/openb-eighth/nodes.csv"
#define EIGHTH_SEQUENCE "data/fgd-reference/openb-eighth/sequence.csv"
#define EIGHTH_ROWS     1366
#define NODES_HEADER    "sn,cpu_milli,memory_mib,gpu,model\n"
#define PODS_HEADER     "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"

static char tmpdir[64];
static const char *bin;

/* The buffers of the last run, freed by the next run or at the end (also after a failed check). */
static char *held_out, *held_err;

static void release_held(void)
{
    free(held_out);
    free(held_err);
    held_out = held_err = NULL;
}

static int setup(void **state)
{
    (void)state;
    bin = getenv("GPUSCHED_BIN");
    if (!bin || !*bin) {
        fprintf(stderr, "test_cli: GPUSCHED_BIN must name the gpusched executable\n");
        return -1;
    }
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/gs_test_cli.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    release_held();
    DIR *dir = opendir(tmpdir);
    if (!dir)
        return -1;
    struct dirent *e;
    char path[512];
    while ((e = readdir(dir)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", tmpdir, e->d_name);
        unlink(path);
    }
    closedir(dir);
    return rmdir(tmpdir);
}

/* @name inside the temporary directory, in a rotating static buffer (a few may be live). */
static const char *tmp_path(const char *name)
{
    static char buf[16][256];
    static int next;
    char *p = buf[next++ % 16];
    snprintf(p, sizeof(buf[0]), "%s/%s", tmpdir, name);
    return p;
}

static const char *write_tmp(const char *name, const char *text)
{
    const char *path = tmp_path(name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    return path;
}

/* Run gpusched with @args (NULL-terminated, without the program name). */
static void run(struct t_run *r, const char *const *args)
{
    const char *argv[64];
    size_t n = 0;
    argv[n++] = bin;
    while (*args && n < 63)
        argv[n++] = *args++;
    argv[n] = NULL;
    release_held();
    t_run(argv, r);
    held_out = r->out;
    held_err = r->err;
}

static void result_free(struct t_run *r)
{
    release_held();
    r->out = r->err = NULL;
}

static void show(const struct t_run *r)
{
    print_error("exit %d, signal %d\n--- stdout ---\n%s\n--- stderr ---\n%s\n", r->status,
                r->signal, r->out, r->err);
}

static void expect_exit(const struct t_run *r, int status)
{
    if (!r->exited || r->status != status) {
        show(r);
        fail_msg("expected exit status %d", status);
    }
}

static void expect_has(const char *text, const char *want)
{
    if (!strstr(text, want))
        fail_msg("expected \"%s\" in:\n%s", want, text);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* The simulate run on the reference eighth of the cluster with its recorded arrivals. */
static void run_eighth(struct t_run *r, const char *policy, const char *seed, const char *json,
                       const char *curve)
{
    const char *args[20];
    size_t n = 0;
    args[n++] = "simulate";
    args[n++] = "--nodes";
    args[n++] = EIGHTH_NODES;
    args[n++] = "--sequence";
    args[n++] = EIGHTH_SEQUENCE;
    args[n++] = "--policy";
    args[n++] = policy;
    if (seed) {
        args[n++] = "--seed";
        args[n++] = seed;
    }
    if (json) {
        args[n++] = "--json";
        args[n++] = json;
    }
    if (curve) {
        args[n++] = "--curve";
        args[n++] = curve;
    }
    args[n++] = "--quiet";
    args[n] = NULL;
    run(r, args);
}

static void test_simulate_fgd_reports(void **state)
{
    (void)state;
    struct t_run r;
    const char *json = tmp_path("fgd.json"), *curve = tmp_path("fgd_curve.csv");
    run_eighth(&r, "fgd", NULL, json, curve);
    expect_exit(&r, 0);
    assert_int_equal(r.signal, 0);
    expect_has(r.out, "fgd");
    expect_has(r.out, "152 nodes, 773 GPUs");
    expect_has(r.out, "1366 pods");
    if (r.err_len != 0) {
        show(&r);
        fail_msg("--quiet run wrote to stderr");
    }
    result_free(&r);

    json_error_t jerr;
    json_t *root = json_load_file(json, 0, &jerr);
    if (!root)
        fail_msg("%s: %d: %s", json, jerr.line, jerr.text);
    json_t *pods = json_object_get(root, "pods");
    assert_true(json_is_array(pods));
    assert_int_equal(json_array_size(pods), EIGHTH_ROWS);
    static const char *const keys[] = {"name", "state", "node", "gpus", "reason"};
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        assert_true(json_is_object(pod));
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
            if (!json_object_get(pod, keys[k]))
                fail_msg("pod %zu has no \"%s\"", i, keys[k]);
        assert_true(json_is_string(json_object_get(pod, "name")));
    }
    assert_string_equal(json_string_value(json_object_get(json_array_get(pods, 0), "name")),
                        "openb-pod-4463");
    json_t *summary = json_object_get(root, "summary");
    assert_true(json_is_object(summary));
    json_t *at = json_object_get(summary, "gpu_allocation_at_arrived_pct");
    assert_true(json_is_object(at));
    static const char *const points[] = {"80", "90", "95", "100", "110", "130"};
    for (size_t k = 0; k < 6; k++)
        if (!json_is_number(json_object_get(at, points[k])))
            fail_msg("gpu_allocation_at_arrived_pct has no number at \"%s\"", points[k]);
    double at100 = json_number_value(json_object_get(at, "100"));
    if (at100 < 93.0 || at100 > 96.0)
        fail_msg("fgd allocation at 100%% arrived: %.2f, expected 93..96", at100);
    json_decref(root);

    size_t len;
    char *csv = t_slurp(curve, &len);
    assert_non_null(csv);
    int ends = len > 0 && csv[len - 1] == '\n';
    int header = strncmp(csv, "policy,seed,seq,pod,", 20) == 0;
    size_t lines = count_lines(csv);
    int first_fgd = strchr(csv, '\n') && strncmp(strchr(csv, '\n') + 1, "fgd,", 4) == 0;
    free(csv);
    assert_true(ends);
    assert_true(header);
    assert_int_equal(lines, EIGHTH_ROWS + 1);
    assert_true(first_fgd);
}

/* Byte-compare two files. */
static int same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = t_slurp(a, &la), *y = t_slurp(b, &lb);
    int ok = x && y && la > 0;
    int same = ok && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    if (!ok)
        fail_msg("%s or %s is missing or empty", a, b);
    return same;
}

static void test_simulate_deterministic(void **state)
{
    (void)state;
    struct t_run r;
    const char *a = tmp_path("det_a.json"), *b = tmp_path("det_b.json");
    run_eighth(&r, "fgd", NULL, a, NULL);
    expect_exit(&r, 0);
    result_free(&r);
    run_eighth(&r, "fgd", NULL, b, NULL);
    expect_exit(&r, 0);
    result_free(&r);
    assert_true(same_file(a, b));

    const char *r7a = tmp_path("r7a.json"), *r7b = tmp_path("r7b.json"), *r8 = tmp_path("r8.json");
    run_eighth(&r, "random", "7", r7a, NULL);
    expect_exit(&r, 0);
    result_free(&r);
    run_eighth(&r, "random", "7", r7b, NULL);
    expect_exit(&r, 0);
    result_free(&r);
    run_eighth(&r, "random", "8", r8, NULL);
    expect_exit(&r, 0);
    result_free(&r);
    assert_true(same_file(r7a, r7b));
    assert_false(same_file(r7a, r8));
}

/*
 * Run @args and expect a refusal: exit @status (or 1 when @or_one), not a signal, nothing on
 * stdout, and on stderr one "gpusched simulate: " line holding every string of @want.
 * @usage: the usage text may come with it (option errors).
 */
static void refused(const char *const *args, int status, int or_one, int usage,
                    const char *const *want)
{
    struct t_run r;
    run(&r, args);
    if (r.signal) {
        show(&r);
        fail_msg("killed by signal %d", r.signal);
    }
    if (!r.exited || !(r.status == status || (or_one && r.status == 1))) {
        show(&r);
        fail_msg("expected exit status %d", status);
    }
    if (r.out_len != 0) {
        show(&r);
        fail_msg("a refused run printed on stdout");
    }
    /* the one error line */
    const char *line = NULL;
    size_t nerr = 0;
    for (const char *p = r.err; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, "gpusched simulate: ", 19) == 0) {
            line = p;
            nerr++;
        }
    if (nerr != 1 || (!usage && (count_lines(r.err) != 1 || r.err != line))) {
        show(&r);
        fail_msg("expected one error line on stderr");
    }
    char *end = strchr(line, '\n');
    assert_non_null(end);
    *end = '\0';
    for (; *want; want++)
        if (!strstr(line, *want)) {
            show(&r);
            fail_msg("expected \"%s\" in the error line", *want);
        }
    result_free(&r);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* --json or --curve naming an input is refused, and no output file is emptied before the run. */
static void test_outputs_spare_inputs(void **state)
{
    (void)state;
    const char *nodes = write_tmp("keep_nodes.csv", NODES_HEADER "n1,64000,262144,2,P100\n");
    refused(ARGS("simulate", "--nodes", nodes, "--json", nodes), 2, 0, 0,
            ARGS("--json", "is an input file"));
    refused(ARGS("simulate", "--nodes", nodes, "--curve", nodes), 2, 0, 0,
            ARGS("--curve", "is an input file"));
    size_t len;
    char *text = t_slurp(nodes, &len);
    assert_string_equal(text, NODES_HEADER "n1,64000,262144,2,P100\n");
    free(text);
    const char *old = write_tmp("old.json", "{}\n");
    refused(ARGS("simulate", "--nodes", tmp_path("missing_nodes.csv"), "--json", old), 2, 0, 0,
            ARGS("missing_nodes.csv"));
    text = t_slurp(old, &len);
    assert_string_equal(text, "{}\n");
    free(text);
    /* the other commands that write files: forecast --dump-series replaced a --store (the
     * daemon's database) with CSV, report -o its RUN.json with HTML, generate -o its
     * --inference-traffic, simulate --scenario --json its scenario */
    const char *series = write_tmp("keep_series.csv", "time_s,series,milli\n0,a,1\n3600,a,2\n"
                                                      "7200,a,3\n10800,a,4\n");
    const char *scen = write_tmp("keep_scenario.yaml",
                                 "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nmetadata: "
                                 "{name: x}\nspec:\n  nodeTemplates:\n    - {name: t, gpuModel: "
                                 "P100, gpus: 2, cpuMilli: 64000, memoryMiB: 262144}\n  nodes:\n"
                                 "    - {name: n1, template: t}\n");
    const char *const *cases[] = {
        ARGS("forecast", "--series", series, "--dump-series", series),
        ARGS("forecast", "--series", series, "--advice", "--prom", series),
        ARGS("report", series, "-o", series),
        ARGS("generate", "tenant-day", "--inference-traffic", series, "-o", series),
        ARGS("simulate", "--scenario", scen, "--json", scen),
    };
    const char *flags[] = {"--dump-series", "--prom", "-o", "-o", "--json"};
    const char *paths[] = {series, series, series, series, scen};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct t_run r;
        char want[256];
        run(&r, cases[i]);
        expect_exit(&r, 2);
        snprintf(want, sizeof(want), "%s %s: is an input file", flags[i], paths[i]);
        expect_has(r.err, want);
        assert_int_equal(r.out_len, 0);
        assert_int_equal(count_lines(r.err), 1);
        result_free(&r);
    }
    text = t_slurp(series, &len);
    assert_string_equal(text, "time_s,series,milli\n0,a,1\n3600,a,2\n7200,a,3\n10800,a,4\n");
    free(text);
    text = t_slurp(scen, &len);
    assert_non_null(strstr(text, "kind: Cluster"));
    free(text);
}

static void test_bad_node_files(void **state)
{
    (void)state;
    char want[320];
    const char *missing = tmp_path("missing_nodes.csv");
    refused(ARGS("simulate", "--nodes", missing, "--sequence", EIGHTH_SEQUENCE), 2, 0, 0,
            ARGS(missing));

    const char *p = write_tmp("cols.csv", NODES_HEADER "n1,64000,262144,2,P100\n"
                                                       "n2,64000,262144,2\n");
    snprintf(want, sizeof(want), "%s:3:1:", p);
    refused(ARGS("simulate", "--nodes", p, "--sequence", EIGHTH_SEQUENCE), 2, 0, 0, ARGS(want));

    p = write_tmp("num.csv", NODES_HEADER "n1,64000,256GB,2,P100\n");
    snprintf(want, sizeof(want), "%s:2:10: memory_mib:", p);
    refused(ARGS("simulate", "--nodes", p, "--sequence", EIGHTH_SEQUENCE), 2, 0, 0,
            ARGS(want, "256GB"));

    p = write_tmp("neg.csv", NODES_HEADER "n1,-64000,262144,2,P100\n");
    snprintf(want, sizeof(want), "%s:2:4: cpu_milli:", p);
    refused(ARGS("simulate", "--nodes", p, "--sequence", EIGHTH_SEQUENCE), 2, 0, 0,
            ARGS(want, "negative"));

    p = write_tmp("model.csv", NODES_HEADER "n1,64000,262144,2,P100\nn2,64000,262144,8,K80\n");
    snprintf(want, sizeof(want), "%s:3:19: model:", p);
    refused(ARGS("simulate", "--nodes", p, "--sequence", EIGHTH_SEQUENCE), 2, 0, 0,
            ARGS(want, "K80"));

    p = write_tmp("cpu_only.csv", NODES_HEADER "n1,64000,262144,0,\nn2,64000,262144,0,\n");
    refused(ARGS("simulate", "--nodes", p, "--pods",
                 write_tmp("any.csv", PODS_HEADER "p1,1000,1024,1,1000,\n")),
            2, 0, 0, ARGS(p, "GPU"));
}

static void test_pod_model_not_in_cluster(void **state)
{
    (void)state;
    const char *nodes =
        write_tmp("t4_nodes.csv", NODES_HEADER "n1,64000,262144,4,T4\nn2,64000,262144,2,P100\n");
    const char *pods = write_tmp("a100_pods.csv", PODS_HEADER "p1,1000,1024,1,500,T4\n"
                                                              "p2,1000,1024,1,1000,T4|P100\n"
                                                              "p-a100,1000,1024,1,1000,A100-80GB\n"
                                                              "p4,1000,1024,0,0,\n");
    refused(ARGS("simulate", "--nodes", nodes, "--pods", pods), 2, 0, 0, ARGS("p-a100"));
}

/* Workloads that could never reach the sampling target, or not one pod of which fits in it. */
static void test_unsampleable_workloads(void **state)
{
    (void)state;
    const char *nodes = write_tmp("one_t4.csv", NODES_HEADER "n1,96000,393216,1,T4\n");
    const char *cpu = write_tmp("cpu_only.csv", PODS_HEADER "c1,1000,1024,0,0,\n");
    const char *big = write_tmp("too_big.csv", PODS_HEADER "b1,1000,1024,2,1000,\n");
    refused(ARGS("simulate", "--nodes", nodes, "--pods", cpu), 2, 0, 0,
            ARGS("no pod asks for a GPU"));
    refused(ARGS("simulate", "--nodes", nodes, "--pods", big), 2, 0, 0, ARGS("no pod arrives"));
    /* CPU-only pods arrive, the GPU pod is too big to draw: a report of "-" says why. */
    const char *mix = write_tmp("cpu_and_big.csv", PODS_HEADER "c1,1000,1024,0,0,\n"
                                                               "b1,1000,1024,2,1000,\n");
    struct t_run r;
    run(&r, ARGS("simulate", "--nodes", nodes, "--pods", mix, "--policy", "fgd", "--seed", "3"));
    expect_exit(&r, 0);
    assert_non_null(strstr(r.out, "stopped short of that point, at 0.00 % of capacity"));
    result_free(&r);
    /* Another seed drops the CPU-only pod and then draws the big one: nothing arrives, and the
     * message does not claim that every pod is too big. */
    refused(ARGS("simulate", "--nodes", nodes, "--pods", mix, "--policy", "fgd", "--seed", "1"), 2,
            0, 0, ARGS("no pod arrives with seed 1", "a pod asking more ended it"));
}

static void test_bad_options(void **state)
{
    (void)state;
    refused(ARGS("simulate", "--nodes", EIGHTH_NODES, "--sequence", EIGHTH_SEQUENCE, "--policy",
                 "nosuch"),
            2, 0, 0, ARGS("--policy nosuch: unknown policy (known: gpusched,", "random, or all)"));
    refused(ARGS("simulate", "--tune", "abc"), 2, 0, 0, ARGS("--tune", "abc"));
    refused(ARGS("simulate", "--tune", "0"), 2, 0, 0, ARGS("--tune", "\"0\""));
    refused(ARGS("simulate", "--tune", "-1"), 2, 0, 0, ARGS("--tune", "-1"));
    refused(ARGS("simulate", "--tune", "1.2999"), 2, 0, 0, ARGS("--tune", "at most 3 decimals"));
    refused(ARGS("simulate", "--seeds", "5..3"), 2, 0, 0, ARGS("--seeds", "5..3"));
    refused(ARGS("simulate", "--seed", "x7"), 2, 0, 0, ARGS("--seed", "x7"));
    refused(ARGS("simulate", "--bogus"), 2, 0, 1, ARGS("unknown option \"--bogus\""));
    refused(ARGS("simulate", "--nodes"), 2, 0, 1, ARGS("missing value for option \"--nodes\""));
    refused(ARGS("simulate", "--scenario", "x.yaml", "--way"), 2, 0, 1,
            ARGS("missing value for option \"--way\""));
    /* every command tells a missing value from an unknown option */
    const char *const *const other[] = {ARGS("generate", "tenant-day", "--seed"),
                                        ARGS("forecast", "--top"), ARGS("queues", "--server"),
                                        ARGS("topo", "--model"), ARGS("report", "-o")};
    for (size_t i = 0; i < sizeof(other) / sizeof(*other); i++) {
        struct t_run r;
        run(&r, other[i]);
        assert_true(r.exited && r.status == 2);
        assert_non_null(strstr(r.err, "missing value for option \""));
        assert_non_null(strstr(r.err, other[i][1 + (i == 0)]));
    }
    refused(ARGS("simulate", "--quiet", "stray"), 2, 0, 0, ARGS("stray"));
    /* a scenario's option on a replay says whose it is */
    refused(ARGS("simulate", "--way", "full"), 2, 0, 0,
            ARGS("--way is an option of simulate --scenario FILE"));
    /* and the replay's on a scenario, with what the scenario takes instead where it has one */
    refused(ARGS("simulate", "--scenario", "tests/data/scenario/full.yaml", "--policy", "fgd"), 2,
            0, 0,
            ARGS("--policy is an option of the trace replay (simulate without --scenario)",
                 "KubeSchedulerConfiguration"));
    refused(ARGS("simulate", "--scenario", "x.yaml", "--seeds=1..2"), 2, 0, 0,
            ARGS("--seeds is an option of the trace replay", "nothing at random"));
    refused(ARGS("simulate", "--scenario", "x.yaml", "--nodes", "n.csv"), 2, 0, 0,
            ARGS("--nodes is an option of the trace replay", "Cluster document"));
    refused(ARGS("simulate", "--scenario", "x.yaml", "--tie-order", "seed"), 2, 0, 0,
            ARGS("--tie-order is an option of the trace replay (simulate without --scenario)"));
}

/* What a usage error quotes of the command line is written escaped, as file contents are: an
 * escape sequence or a right-to-left override in an argument reaches the terminal as text. */
static void test_arguments_escaped(void **state)
{
    (void)state;
    static const char bad[] = "x\x1b[31m\xe2\x80\xaey";
    const char *const *cases[] = {
        ARGS(bad),
        ARGS("simulate", "--tune", bad),
        ARGS("simulate", "--scenario", "none.yaml", "--horizon", bad),
        ARGS("generate", bad),
        ARGS("forecast", "--by", bad),
        ARGS("topo", "--name", bad, "x"),
        ARGS("bill", "--format", bad, "x.json"),
        ARGS("get", bad),
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct t_run r;
        run(&r, cases[i]);
        expect_exit(&r, 2);
        if (memchr(r.err, 0x1b, r.err_len) || strstr(r.err, "\xe2\x80\xae") ||
            !strstr(r.err, "x\\x1b[31m\\u202ey"))
            fail_msg("%s %s: %s", cases[i][0], cases[i][1] ? cases[i][1] : "", r.err);
        result_free(&r);
    }
}

/* topo --json names the tree --name, as gpuschedd's registration wants its node named (it was
 * the file's path whatever was given); --model, which only --yaml writes, is refused elsewhere
 * rather than dropped. */
static void test_topo_name_and_model(void **state)
{
    (void)state;
    struct t_run r;
    static const char file[] = "tests/data/topo/hgx_h100_8gpu_nv18_no_nic_legend.txt";
    run(&r, ARGS("topo", "--json", "--name", "gpu-node-7", file));
    expect_exit(&r, 0);
    assert_non_null(strstr(r.out, "\"name\": \"gpu-node-7\""));
    result_free(&r);
    run(&r, ARGS("topo", "--json", file));
    expect_exit(&r, 0);
    assert_non_null(strstr(r.out, "hgx_h100_8gpu_nv18_no_nic_legend.txt\""));
    result_free(&r);
    run(&r, ARGS("topo", "--json", "--model", "L40S", file));
    expect_exit(&r, 2);
    assert_non_null(strstr(r.err, "--model is for --yaml"));
    result_free(&r);
    /* both forms: neither the last nor the first wins */
    run(&r, ARGS("topo", "--json", "--yaml", "--model", "L40S", file));
    expect_exit(&r, 2);
    assert_non_null(strstr(r.err, "--json and --yaml: give one of them"));
    assert_string_equal(r.out, "");
    result_free(&r);
    /* the names a node reports: GPU feature discovery's label, NVML's; an unknown one lists all */
    static const char *const as[] = {"NVIDIA-H100-SXM5-80GB", "NVIDIA H100-SXM5-80GB"};
    for (int i = 0; i < 2; i++) {
        run(&r, ARGS("topo", "--yaml", "--model", as[i], file));
        expect_exit(&r, 0);
        assert_non_null(strstr(r.out, "gpuModel: H100-SXM5-80GB"));
        result_free(&r);
    }
    run(&r, ARGS("topo", "--yaml", "--model", "Z100", file));
    expect_exit(&r, 2);
    assert_non_null(strstr(r.err, "--model Z100 is not in the GPU catalog (P100, T4, "));
    result_free(&r);
}

/* A token that is not RFC 6750's b64token is refused before any request: a line break in it
 * would have added a header of its own. */
static void test_client_token(void **state)
{
    (void)state;
    static const char *const bad[] = {"a\r\nX-Evil: 1", "a b", "=a", "a=b", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct t_run r;
        run(&r, ARGS("status", "--server", "http://127.0.0.1:1", "--token", bad[i]));
        expect_exit(&r, 2);
        expect_has(r.err, "gpusched status: the token (--token or $GPUSCHED_TOKEN): expected");
        result_free(&r);
    }
}

/* The server's URL is checked before any request, by the rule gpuschedd's apiServer and
 * gpusched-agent's --server follow: another scheme would carry the token elsewhere, a query or a
 * line break would bend every request's URL. */
static void test_client_server(void **state)
{
    (void)state;
    static const char *const bad[] = {"ftp://127.0.0.1:1",
                                      "http://a\nb",
                                      "http://h:1/?x=",
                                      "http://h:1/#f",
                                      "",
                                      "http://",
                                      "http://h:99999",
                                      "http://h:0",
                                      "http://user:secret@h:1",
                                      "http://@h:1",
                                      "http://h:"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct t_run r;
        run(&r, ARGS("status", "--server", bad[i], "--token", "t"));
        expect_exit(&r, 2);
        expect_has(r.err, "gpusched status: the server (--server or $GPUSCHED_SERVER)");
        assert_non_null(strstr(r.err, "\": ")); /* the URL, then what is wrong with it */
        assert_null(strstr(r.err, "secret"));   /* a password is not repeated */
        result_free(&r);
    }
    char longer[600];
    memset(longer, 'a', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    memcpy(longer, "http://", 7);
    struct t_run r;
    run(&r, ARGS("status", "--server", longer, "--token", "t"));
    expect_exit(&r, 2);
    expect_has(r.err, "aaa...\": longer than 512 bytes");
    result_free(&r);
    /* a trailing '/' is the same server: the request goes to /v1/..., not //v1/... */
    run(&r, ARGS("status", "--server", "http://127.0.0.1:1//", "--token", "t"));
    expect_has(r.err, "http://127.0.0.1:1/v1/");
    expect_has(r.err, "is gpuschedd running there?"); /* port 1: nothing listens */
    result_free(&r);
    /* the URL asked for, without a stray '?'; a filter too long to send is refused, not dropped */
    run(&r, ARGS("list", "--server", "http://127.0.0.1:1", "--token", "t"));
    expect_has(r.err, "http://127.0.0.1:1/v1/pods: ");
    result_free(&r);
    char tenant[1100];
    memset(tenant, 'a', sizeof(tenant) - 1);
    tenant[sizeof(tenant) - 1] = '\0';
    run(&r, ARGS("list", "--server", "http://127.0.0.1:1", "--token", "t", "--queue", "q",
                 "--tenant", tenant));
    expect_exit(&r, 2);
    expect_has(r.err, "gpusched list: --tenant: too long for a query");
    result_free(&r);
}

static void test_unwritable_outputs(void **state)
{
    (void)state;
    const char *json = tmp_path("no_such_dir/out.json");
    refused(ARGS("simulate", "--nodes", EIGHTH_NODES, "--sequence", EIGHTH_SEQUENCE, "--policy",
                 "fgd", "--quiet", "--json", json),
            2, 1, 0, ARGS(json));
    const char *curve = tmp_path("no_such_dir/curve.csv");
    char want[320];
    snprintf(want, sizeof(want), "--curve %s: cannot write", curve);
    refused(ARGS("simulate", "--nodes", EIGHTH_NODES, "--sequence", EIGHTH_SEQUENCE, "--policy",
                 "fgd", "--quiet", "--curve", curve),
            2, 0, 0, ARGS(want));
    /* the files read, as those written, are named with their option */
    refused(ARGS("simulate", "--nodes", EIGHTH_NODES, "--sequence", EIGHTH_SEQUENCE, "--quiet",
                 "--config", "/nope.yaml"),
            2, 0, 0, ARGS("--config /nope.yaml: no such file"));
    refused(ARGS("simulate", "--scenario", "tests/data/scenario/seed-rates.yaml", "--rates",
                 "/nope.yaml"),
            2, 0, 0, ARGS("--rates /nope.yaml: cannot open: No such file or directory"));
    struct t_run r;
    const char *const *const named[] = {
        ARGS("bill", "tests/data/billing/comparison.json", "--rates", "/nope.yaml"),
        ARGS("forecast", "--dlrm", "data/alibaba-dlrm-v2025/disaggregated_DLRM_trace_first24d.csv",
             "--advice", "--prom", curve),
        ARGS("generate", "tenant-day", "-o", curve),
    };
    const char *named_want[] = {"--rates /nope.yaml: cannot open", "--prom ", "-o "};
    for (size_t i = 0; i < sizeof(named) / sizeof(*named); i++) {
        run(&r, named[i]);
        expect_exit(&r, 2);
        expect_has(r.err, named_want[i]);
        expect_has(r.err, i ? curve : "/nope.yaml");
        assert_int_equal(count_lines(r.err), 1);
    }
    /* "-" is standard output, as in simulate --scenario: the table goes to standard error */
    run(&r, ARGS("simulate", "--nodes", EIGHTH_NODES, "--sequence", EIGHTH_SEQUENCE, "--policy",
                 "fgd", "--quiet", "--curve", "-"));
    expect_exit(&r, 0);
    expect_has(r.out, "policy,seed,seq,pod,arrived_milli");
    expect_has(r.err, "fgd");
    assert_int_equal(access("-", F_OK), -1);
    refused(ARGS("simulate", "--nodes", EIGHTH_NODES, "--sequence", EIGHTH_SEQUENCE, "--quiet",
                 "--json", "-", "--curve", "-"),
            2, 0, 0, ARGS("one of them may go to standard output"));
}

/* Run `gpusched @cmd` through sh (its redirections in @cmd, the binary as $0): @r. */
static void run_sh(struct t_run *r, const char *cmd)
{
    char line[1024];
    snprintf(line, sizeof(line), "\"$0\" %s", cmd);
    const char *argv[] = {"/bin/sh", "-c", line, bin, NULL};
    release_held();
    t_run(argv, r);
    held_out = r->out;
    held_err = r->err;
}

/*
 * A write that fails is a failed run (1) whatever the command, standard output to a full disk
 * included, said on stderr; a page written to a FIFO or through a symbolic link goes through
 * it, the FIFO or link left as it was (a report is otherwise written beside its file and renamed
 * over it).
 */
static void test_failed_writes(void **state)
{
    (void)state;
    static const char *const cmds[] = {
        "validate tests/data/scenario/full.yaml",
        "simulate --scenario tests/data/scenario/seed-rates.yaml",
        "topo tests/data/topo/hgx_h100_8gpu_nv18_no_nic_legend.txt",
        "bill tests/data/billing/seed-example.json",
        "forecast --dlrm data/alibaba-dlrm-v2025/disaggregated_DLRM_trace_first24d.csv",
    };
    struct t_run r;
    char cmd[512];
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        snprintf(cmd, sizeof(cmd), "%s > /dev/full", cmds[i]);
        run_sh(&r, cmd);
        expect_exit(&r, 1);
        expect_has(r.err, "No space left on device");
    }
    const char *json = tmp_path("fifo-run.json"), *fifo = tmp_path("page.fifo");
    run(&r, ARGS("simulate", "--scenario", "tests/data/scenario/seed-rates.yaml", "--quiet",
                 "--json", json));
    expect_exit(&r, 0);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    snprintf(cmd, sizeof(cmd), "report %s -o %s & cat %s", json, fifo, fifo);
    run_sh(&r, cmd);
    expect_exit(&r, 0);
    expect_has(r.out, "</html>");
    struct stat st;
    assert_int_equal(stat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    /* a link, as /dev/stdout is, with stdout a file: written through, the link kept */
    const char *link = tmp_path("stdout.link");
    assert_int_equal(symlink("/proc/self/fd/1", link), 0);
    run(&r, ARGS("report", json, "-o", link));
    expect_exit(&r, 0);
    expect_has(r.out, "</html>");
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    run(&r, ARGS("report", json, "-o", tmpdir)); /* a directory: bad input, as a missing one */
    expect_exit(&r, 2);
    /* a file that is not there is bad input, for topo as for every command */
    run(&r, ARGS("topo", tmp_path("no-such-topo.txt")));
    expect_exit(&r, 2);
    expect_has(r.err, "No such file or directory");
    /* a tenant no pod of the file belongs to: an empty bill would look like no use */
    run(&r, ARGS("bill", "tests/data/billing/seed-example.json", "--tenant", "tenant-z"));
    expect_exit(&r, 2);
    expect_has(r.err, "its tenants: tenant-a");
}

/* The seed profile and the shipped one run through the CLI; conflicting options are refused. */
static void test_config_profiles(void **state)
{
    (void)state;
    struct t_run r;
    run(&r, ARGS("simulate", "--nodes", EIGHTH_NODES, "--sequence", EIGHTH_SEQUENCE, "--config",
                 "tests/data/kube-scheduler-config.yaml", "--quiet"));
    expect_exit(&r, 0);
    expect_has(r.out, "profile gpu-scheduler:");
    expect_has(r.out, "GPUBinPacking x8");
    expect_has(r.err, "kube-scheduler-config.yaml:16:19: plugin \"TopologyFilter\"");
    result_free(&r);

    run(&r, ARGS("simulate", "--nodes", EIGHTH_NODES, "--sequence", EIGHTH_SEQUENCE, "--config",
                 "deploy/kube-scheduler-config.yaml", "--quiet"));
    expect_exit(&r, 0);
    expect_has(r.out, "score FGD x130, StrandedShare x1, ExpectedWaste x50;");
    assert_int_equal(r.err_len, 0);
    result_free(&r);

    run(&r, ARGS("simulate", "--policy", "fgd", "--config", "deploy/kube-scheduler-config.yaml"));
    expect_exit(&r, 2);
    expect_has(r.err, "--policy and --config");
    result_free(&r);
    run(&r, ARGS("simulate", "--seed", "1", "--seeds", "1..2"));
    expect_exit(&r, 2);
    expect_has(r.err, "--seed and --seeds");
    result_free(&r);
}

static void test_top_level(void **state)
{
    (void)state;
    struct t_run r;
    run(&r, ARGS("simulate", "--help"));
    expect_exit(&r, 0);
    expect_has(r.out, "usage: gpusched simulate");
    expect_has(r.out, "--nodes");
    result_free(&r);

    run(&r, ARGS("version"));
    expect_exit(&r, 0);
    assert_true(strncmp(r.out, "gpusched ", 9) == 0);
    result_free(&r);

    /* an option or argument a command does not read is refused before any request, not
     * dropped */
    const char *const *const no[][2] = {
        {ARGS("get", "a/b", "--tenant", "x"),
         ARGS("gpusched get: --tenant is not an option of get")},
        {ARGS("bills", "--state", "pending"), ARGS("gpusched bills: --state is not an option")},
        {ARGS("status", "--tenant", "t"), ARGS("gpusched status: --tenant is not an option")},
        {ARGS("submit", "-", "-o", "table"), ARGS("gpusched submit: -o table is not an option")},
        {ARGS("version", "extra"), ARGS("gpusched version: unexpected argument \"extra\"")},
    };
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        run(&r, no[i][0]);
        expect_exit(&r, 2);
        expect_has(r.err, no[i][1][0]);
        assert_int_equal(r.out_len, 0);
        result_free(&r);
    }

    run(&r, (const char *const[]){NULL});
    expect_exit(&r, 2);
    expect_has(r.err, "usage: gpusched");
    assert_int_equal(r.out_len, 0);
    result_free(&r);

    run(&r, ARGS("frobnicate"));
    expect_exit(&r, 2);
    expect_has(r.err, "frobnicate");
    assert_int_equal(r.out_len, 0);
    result_free(&r);
}

/* validate prints the Simulation's failures as what each is: a card's failure with its card and
 * Xid, a card hold as a hold (no node fails), and --json gives the same under "simulation". */
static void test_validate_simulation(void **state)
{
    (void)state;
    struct t_run r;
    const char *scn = write_tmp(
        "failures.yaml",
        "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n"
        "  nodeTemplates:\n    - {name: a100, gpuModel: A100-SXM4-80GB, gpus: 8}\n"
        "  nodes:\n    - {name: \"n[1-2]\", zone: az-1, template: a100}\n---\n"
        "apiVersion: sim.gpusched.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec:\n"
        "  horizon: 6h\n"
        "  nodeFailures:\n    - {node: n1, at: 30m, restore: 1h}\n"
        "  cardFailures:\n    - {node: n2, gpu: 2, at: 2h, xid: 79}\n"
        "    - {node: n2, gpu: 5, at: 2h, restore: 3h, xid: 92}\n"
        "  cardHolds:\n    - {node: n2, gpu: 0, at: 2h, until: 2h30s}\n");
    run(&r, ARGS("validate", scn));
    expect_exit(&r, 0);
    expect_has(r.out, "  node n1 fails at 30m, ready again at 1h\n");
    expect_has(r.out, "  card 2 of node n2 fails at 2h, Xid 79 (its pods wait again)\n");
    expect_has(r.out,
               "  card 5 of node n2 fails at 2h, Xid 92 (its pods run on), healthy again at 3h\n");
    expect_has(r.out, "  card 0 of node n2 held from 2h until 2h30s (its pods run on)\n");
    assert_null(strstr(r.out, "\n  node n2 fails")); /* n2 itself never fails */
    result_free(&r);

    run(&r, ARGS("validate", "--json", scn));
    expect_exit(&r, 0);
    json_t *root = json_loads(r.out, 0, NULL);
    assert_non_null(root);
    json_t *sim = json_object_get(root, "simulation");
    assert_true(json_is_object(sim));
    assert_int_equal(json_integer_value(json_object_get(sim, "horizon_us")), 6 * 3600000000LL);
    json_t *nf = json_object_get(sim, "node_failures"), *cf = json_object_get(sim, "card_failures");
    json_t *ch = json_object_get(sim, "card_holds");
    assert_int_equal(json_array_size(nf), 1);
    assert_int_equal(json_array_size(cf), 2);
    assert_int_equal(json_array_size(ch), 1);
    json_t *c = json_array_get(cf, 0);
    assert_string_equal(json_string_value(json_object_get(c, "node")), "n2");
    assert_int_equal(json_integer_value(json_object_get(c, "gpu")), 2);
    assert_int_equal(json_integer_value(json_object_get(c, "xid")), 79);
    assert_true(json_is_true(json_object_get(c, "work_lost")));
    assert_true(json_is_null(json_object_get(c, "restore_us")));
    assert_true(json_is_false(json_object_get(json_array_get(cf, 1), "work_lost")));
    json_t *h = json_array_get(ch, 0);
    assert_int_equal(json_integer_value(json_object_get(h, "gpu")), 0);
    assert_int_equal(json_integer_value(json_object_get(h, "until_us")), 7230000000LL);
    json_decref(root);
    result_free(&r);

    /* a snapshot's cards load, and validate says that simulate takes them with --from-now only
     * (simulate from the start refuses them) */
    const char *snap = write_tmp(
        "cardmodes.yaml",
        "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n"
        "  nodeTemplates:\n    - {name: a100, gpuModel: A100-SXM4-80GB, gpus: 8}\n"
        "  nodes:\n    - {name: n1, zone: az-1, template: a100}\n---\n"
        "apiVersion: sim.gpusched.io/v1alpha1\nkind: Simulation\nmetadata: {name: s}\nspec:\n"
        "  cardModes: {cards: [{node: n1, gpu: 3, mode: shared, since: 10us}]}\n");
    run(&r, ARGS("validate", snap));
    expect_exit(&r, 0);
    expect_has(r.err, "cardmodes.yaml:14:23: cardModes.cards gives a snapshot's cards: simulate "
                      "takes it with --from-now only");
    expect_has(r.out, "  card 3 of n1: shared since 10us\n"); /* what was understood */
    result_free(&r);
    run(&r, ARGS("validate", "--json", snap));
    expect_exit(&r, 0);
    json_t *v = json_loads(r.out, 0, NULL);
    const json_t *card = json_array_get(
        json_object_get(json_object_get(json_object_get(v, "simulation"), "card_modes"), "cards"),
        0);
    assert_string_equal(json_string_value(json_object_get(card, "mode")), "shared");
    assert_int_equal(json_integer_value(json_object_get(card, "gpu")), 3);
    assert_int_equal(json_integer_value(json_object_get(card, "since_us")), 10);
    json_decref(v);
    result_free(&r);
    run(&r, ARGS("simulate", "--scenario", snap, "--quiet"));
    expect_exit(&r, 2);
    expect_has(r.err, "cardmodes.yaml:14:23: cardModes.cards gives a snapshot's cards");
    result_free(&r);

    /* so is a snapshot's now: a run from 0 would read it and ignore it */
    snap = write_tmp("now.yaml", "apiVersion: sim.gpusched.io/v1alpha1\nkind: Simulation\n"
                                 "metadata: {name: s}\nspec:\n  now: 1h\n");
    run(&r, ARGS("validate", snap));
    expect_exit(&r, 0);
    expect_has(r.err, "now.yaml:5:8: now gives a snapshot's clock: simulate takes it with "
                      "--from-now only");
    result_free(&r);
    run(&r, ARGS("simulate", "--scenario", snap, "--quiet"));
    expect_exit(&r, 2);
    expect_has(r.err, "now.yaml:5:8: now gives a snapshot's clock: a snapshot is continued with "
                      "--from-now");
    result_free(&r);

    /* without a Simulation document: null, not absent */
    run(&r, ARGS("validate", "--json", "tests/data/scenario/gang-minresources.yaml"));
    expect_exit(&r, 0);
    root = json_loads(r.out, 0, NULL);
    assert_non_null(root);
    assert_true(json_is_null(json_object_get(root, "simulation")));
    json_decref(root);
    result_free(&r);

    /* a ResourceQuota's requests.nvidia.com/gpumem is shown with the rest of what it bounds */
    const char *rq = write_tmp("rq.yaml", "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: "
                                          "mem, namespace: ns1}\nspec: {hard: "
                                          "{requests.nvidia.com/gpumem: \"600\"}}\n");
    run(&r, ARGS("validate", rq));
    expect_exit(&r, 0);
    expect_has(r.out, "ns1/mem  nvidia.com/gpu -, nvidia.com/gpumem 600 MiB, cpu -");
    result_free(&r);
    run(&r, ARGS("validate", "--json", rq));
    root = json_loads(r.out, 0, NULL);
    assert_non_null(root);
    json_t *q = json_array_get(json_object_get(root, "resource_quotas"), 0);
    assert_int_equal(json_integer_value(json_object_get(q, "gpumem_mib")), 600);
    json_decref(root);
    result_free(&r);
}

/* gpusched validate: the seed manifests load, and what was understood is printed. */
#define SEED_DIR "tests/data/seed-manifests/"
#define SEEDS_ARGS                                                                                 \
    SEED_DIR "dcgm-servicemonitor.yaml", SEED_DIR "gpuquota-team-a.yaml",                          \
        SEED_DIR "kube-scheduler-config.yaml", SEED_DIR "kubeflow-gpu-profiles.yaml",              \
        SEED_DIR "mig-cluster-policy.yaml", SEED_DIR "tenant-a-resourcequota-limitrange.yaml",     \
        SEED_DIR "tenant-gpu-prometheusrule.yaml", SEED_DIR "topology-gpu-policy.yaml",            \
        SEED_DIR "vgpu-class-shared-small.yaml", SEED_DIR "volcano-queue-podgroup.yaml"

static void test_validate_seeds(void **state)
{
    (void)state;
    struct t_run r;
    run(&r, ARGS("validate", SEEDS_ARGS));
    expect_exit(&r, 0);
    expect_has(r.out, "a100-80gb (A100-SXM4-80GB): total 16, dedicated 8, shared 8; per pod at "
                      "most 8");
    expect_has(r.out, "h100 (H100-SXM5-80GB): total 4, dedicated 4, shared 0");
    expect_has(r.out, "tenant-a  namespaces tenant-a; tier nvlink; priority 100; gpuCount 16");
    expect_has(r.out, "pcie   strategy prefer-colocate, sharing on, overcommit 1.3");
    expect_has(r.out, "kubeflow-queue  weight 2, capability gpu 32 cpu 320 memory 4194304 MiB "
                      "pods -, reclaimable yes, overcommit 1.5");
    expect_has(r.out, "kubeflow/pipeline-step-group  minMember 1, queue kubeflow-queue");
    expect_has(r.out, "data-loading  gpuShare on, maxMemory 8192 MiB, overcommit 2, priority 50");
    expect_has(r.out, "tenant-a/tenant-a-gpu-quota  nvidia.com/gpu 4");
    expect_has(r.out, "namespace tenant-a (tenant tenant-a): per container 2 by LimitRange "
                      "tenant-a-gpu-limits, per pod 2");
    /* the scores the scenario's pods are placed by, not the trace replay's reading of them */
    expect_has(r.out,
               "scheduler profile gpu-scheduler (" SEED_DIR "kube-scheduler-config.yaml:2:1): "
               "score GPUBinPacking x8, TopologyScore x6, FairnessScore x4\n");
    assert_null(strstr(r.out, "FGD"));
    assert_null(strstr(r.err, "not the trace replay's"));
    expect_has(r.out, "shared-gpu-small  memory 2048 MiB, cores 10 %, maxClients 8, shareable yes");
    expect_has(r.err, "warning: " SEED_DIR "tenant-a-resourcequota-limitrange.yaml:11:5: "
                      "limits.nvidia.com/gpu is not enforced");
    expect_has(r.err, "warning: " SEED_DIR "gpuquota-team-a.yaml:8:11: GPUQuota tenant team-a");
    result_free(&r);
}

/* A PodGroup's minResources (0 where it names none) are printed with it, text and JSON. */
static void test_validate_min_resources(void **state)
{
    (void)state;
    struct t_run r;
    run(&r, ARGS("validate", "tests/data/scenario/gang-minresources.yaml"));
    expect_exit(&r, 0);
    expect_has(r.out, "ml/a  minMember 2, queue train, priority class -, minResources gpu 8 cpu 8 "
                      "memory 65536 MiB");
    expect_has(r.out, "ml/c  minMember 1, queue default, priority class -, minResources gpu 32 "
                      "cpu 0 memory 0 MiB pods 0");
    result_free(&r);
    run(&r, ARGS("validate", "--json", "tests/data/scenario/gang-minresources.yaml"));
    expect_exit(&r, 0);
    json_t *root = json_loads(r.out, 0, NULL);
    json_t *mr =
        json_object_get(json_array_get(json_object_get(root, "podgroups"), 0), "min_resources");
    assert_int_equal(json_integer_value(json_object_get(mr, "gpu_milli")), 8000);
    assert_int_equal(json_integer_value(json_object_get(mr, "cpu_milli")), 8000);
    assert_int_equal(json_integer_value(json_object_get(mr, "memory_mib")), 65536);
    json_decref(root);
    result_free(&r);
    /* a file name holding a terminal's escape is printed escaped in every place column */
    char *text = t_slurp("tests/data/scenario/gang-minresources.yaml", NULL);
    const char *evil = write_tmp("e\x1b]0;x\x07.yaml", text);
    free(text);
    run(&r, ARGS("validate", evil));
    expect_exit(&r, 0);
    assert_null(strchr(r.out, '\x1b'));
    expect_has(r.out, "e\\x1b]0;x\\x07.yaml:");
    result_free(&r);
}

/* A GpuClusterPolicy that lists no devices lets no model turn MIG: validate says so. */
static void test_validate_mig_policy_no_devices(void **state)
{
    (void)state;
    struct t_run r;
    const char *pol =
        write_tmp("mig.yaml", "apiVersion: nvidia.com/v1\nkind: GpuClusterPolicy\n"
                              "metadata: {name: p}\nspec: {mig: {strategy: mixed}}\n");
    run(&r, ARGS("validate", pol));
    expect_exit(&r, 0);
    expect_has(r.out, "MIG policy: strategy mixed");
    expect_has(r.out, "  no spec.devices: no model turns MIG\n");
    result_free(&r);
    run(&r, ARGS("validate", SEED_DIR "mig-cluster-policy.yaml"));
    expect_exit(&r, 0);
    assert_null(strstr(r.out, "no spec.devices"));
    result_free(&r);
}

static void test_validate_json(void **state)
{
    (void)state;
    struct t_run r;
    run(&r, ARGS("validate", "--json", "tests/data/scenario/full.yaml"));
    expect_exit(&r, 0);
    assert_int_equal(r.err_len, 0);
    json_error_t jerr;
    json_t *root = json_loads(r.out, 0, &jerr);
    if (!root)
        fail_msg("not JSON: %d: %s", jerr.line, jerr.text);
    json_t *q = json_array_get(
        json_object_get(json_array_get(json_object_get(root, "tenants"), 0), "quotas"), 1);
    assert_string_equal(json_string_value(json_object_get(q, "model")), "L40S");
    assert_int_equal(json_integer_value(json_object_get(q, "total_milli")), 2500);
    assert_int_equal(json_integer_value(json_object_get(q, "per_pod_milli")), 2000);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(root, "pods"), "count")),
                     3);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(root, "cluster"), "nodes")),
                     12);
    assert_int_equal(json_array_size(json_object_get(root, "warnings")), 0);
    json_decref(root);
    result_free(&r);

    run(&r, ARGS("validate", "--json", SEED_DIR "tenant-a-resourcequota-limitrange.yaml"));
    expect_exit(&r, 0);
    expect_has(r.out, "\"warning_count\": 4");
    expect_has(r.out, "tenant-a-resourcequota-limitrange.yaml:11:5: limits.nvidia.com/gpu");
    assert_int_equal(r.err_len, 0);
    result_free(&r);
}

/* validate puts every pod through the scheduler's admission, in the ways a run would use: the
 * pods limits.yaml's run refuses (test_scenario_limits) are warnings naming their place, and a
 * GPU request without a limit, which the API server refuses, is one too. */
static void test_validate_refusals(void **state)
{
    (void)state;
    struct t_run r;
    run(&r, ARGS("validate", "tests/data/scenario/limits.yaml"));
    expect_exit(&r, 0);
    expect_has(r.err, "limits.yaml:137:215: pod tenant-a/big: a run would refuse it (full way): "
                      "LimitRange tenant-a/tenant-a-gpu-limits: nvidia.com/gpu 3 > max 2 per "
                      "Container\n");
    int n = 0;
    for (const char *p = r.err; (p = strstr(p, "a run would refuse it")) != NULL; p++)
        n++;
    assert_int_equal(n, 19); /* as many as the run rejects */
    expect_has(r.out, "19 warnings\n");
    result_free(&r);
    const char *pod = write_tmp("request-only.yaml",
                                "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\n"
                                "metadata: {name: c}\nspec:\n"
                                "  nodeTemplates: [{name: t, gpuModel: A100-SXM4-80GB, gpus: 8}]\n"
                                "  nodes: [{name: n1, template: t}]\n---\n"
                                "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\n"
                                "spec: {containers: [{name: m, resources: {requests: "
                                "{nvidia.com/gpu: 1}}}]}\n");
    run(&r, ARGS("validate", pod));
    expect_exit(&r, 0);
    expect_has(r.err, "request-only.yaml:11:70: pod a/p: a run would refuse it (full way): "
                      "requests.nvidia.com/gpu 1 without limits.nvidia.com/gpu");
    result_free(&r);
    /* each said at the field at fault: a MIG profile's name, a count, a sum of several
     * containers at the pod */
    static const struct {
        const char *res, *at, *msg;
    } at_field[] = {
        {"nvidia.com/mig-1g.11gb: 1", "b7.yaml:11:11: pod ns/p", "nvidia.com/mig-1g.11gb: no GPU"},
        {"nvidia.com/gpu: \"1e3\"", "b7.yaml:11:27: pod ns/p", "nvidia.com/gpu 1000: the largest"},
        {"nvidia.com/gpu: 5\n    - {name: s, resources: {limits: {nvidia.com/gpu: 4}}}",
         "b7.yaml:1:1: pod ns/p", "nvidia.com/gpu 9: the largest"},
        /* said once, by the admission a run applies */
        {"nvidia.com/mig-1g.10gb: 1\n          nvidia.com/gpu: 1", "b7.yaml:10:9: pod ns/p",
         "nvidia.com/mig-1g.10gb with nvidia.com/gpu"},
    };
    const char *cl = write_tmp("cl.yaml", "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\n"
                                          "metadata: {name: c}\nspec:\n"
                                          "  nodeTemplates: [{name: t, gpuModel: A100-SXM4-80GB, "
                                          "gpus: 8}]\n  nodes: [{name: n1, template: t}]\n");
    for (size_t i = 0; i < sizeof(at_field) / sizeof(at_field[0]); i++) {
        char doc[512], want[256];
        snprintf(doc, sizeof(doc),
                 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ns\nspec:\n"
                 "  containers:\n    - name: m\n      resources:\n        limits:\n"
                 "          %s\n",
                 at_field[i].res);
        snprintf(want, sizeof(want), "%s: a run would refuse it (full way): %s", at_field[i].at,
                 at_field[i].msg);
        run(&r, ARGS("validate", cl, write_tmp("b7.yaml", doc)));
        expect_exit(&r, 0);
        expect_has(r.err, want);
        assert_int_equal(count_lines(r.err), 1);
        result_free(&r);
    }
    run(&r,
        ARGS("validate", "tests/data/scenario/warnings.yaml")); /* no nodes: said, not skipped */
    expect_has(r.err, "not checked against admission: the scenario has no nodes");
    result_free(&r);
}

static void test_validate_bad_input(void **state)
{
    (void)state;
    struct t_run r;
    const char *bad = write_tmp("bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                                            "spec: {containers: [{name: m, resources: {limits: "
                                            "{nvidia.com/gpu: 8Gx}}}]}\n");
    run(&r, ARGS("validate", "tests/data/scenario/full.yaml", bad));
    expect_exit(&r, 2);
    assert_int_equal(r.out_len, 0);
    expect_has(r.err, "bad.yaml:4:68: limits.nvidia.com/gpu: \"8Gx\" is not a Kubernetes quantity");
    result_free(&r);

    run(&r, ARGS("validate", "no-such-file.yaml"));
    expect_exit(&r, 2);
    expect_has(r.err, "no-such-file.yaml: no such file");
    result_free(&r);
    run(&r, ARGS("validate"));
    expect_exit(&r, 2);
    expect_has(r.err, "usage: gpusched validate");
    result_free(&r);
    run(&r, ARGS("validate", "--frobnicate", "x.yaml"));
    expect_exit(&r, 2);
    expect_has(r.err, "--frobnicate");
    result_free(&r);
    run(&r, ARGS("validate", "--help"));
    expect_exit(&r, 0);
    expect_has(r.out, "usage: gpusched validate");
    result_free(&r);
    /* a file past the size cap (here sparse, 2 GiB) is refused from its size, before a read */
    const char *huge = tmp_path("huge.yaml");
    int fd = open(huge, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)2 << 30), 0);
    close(fd);
    run(&r, ARGS("validate", huge));
    expect_exit(&r, 2);
    expect_has(r.err, "huge.yaml: larger than 1073741824 bytes");
    result_free(&r);
    unlink(huge);
}

/* A percentage is written by one rule in every table: the run's 71.875 % allocation of its one
 * GPU model was 71.8 % in the summary and 71.9 % in the model table. */
static void test_scenario_percentages_agree(void **state)
{
    (void)state;
    struct t_run r;
    run(&r, ARGS("simulate", "--scenario", "tests/data/scenario/seed-rates.yaml"));
    expect_exit(&r, 0);
    expect_has(r.out, "\nGPU allocation (time avg)           71.8 %\n");
    expect_has(r.out,
               "\n  A100-SXM4-80GB        3        2.2       2.2       2.2       0.0     71.8"
               "     71.8\n");
    result_free(&r);
}

/*
 * The seeds' tenants' day, small: generated, run the three ways, reported as JSON that
 * `gpusched bill` reads, and the same bytes on a second run.
 */
static void test_scenario_tenant_day(void **state)
{
    (void)state;
    struct t_run r;
    char day[128], j1[128], j2[128];
    snprintf(day, sizeof(day), "%s", tmp_path("day.yaml"));
    snprintf(j1, sizeof(j1), "%s", tmp_path("day1.json"));
    snprintf(j2, sizeof(j2), "%s", tmp_path("day2.json"));
    run(&r, ARGS("generate", "tenant-day", "--nodes", "16", "--pods", "400", "--quiet", "-o", day));
    expect_exit(&r, 0);
    result_free(&r);
    run(&r, ARGS("simulate", "--scenario", day, "--json", j1));
    expect_exit(&r, 0);
    expect_has(r.out, "GPU allocation (time avg)");
    expect_has(r.out, "exclusive");
    expect_has(r.out, "wait p99 inference");
    /* the ceiling is of the pods of the span run (a day here, 8 hours after --from-now) */
    expect_has(r.out, "GPU busy ceiling (run's mix)");
    assert_null(strstr(r.out, "day's mix"));
    result_free(&r);
    run(&r, ARGS("simulate", "--scenario", day, "--json", j2, "--quiet"));
    expect_exit(&r, 0);
    assert_int_equal(r.out_len, 0);
    result_free(&r);
    assert_true(same_file(j1, j2));
    json_error_t e;
    json_t *root = json_load_file(j1, 0, &e);
    assert_non_null(root);
    json_t *ways = json_object_get(root, "ways");
    assert_int_equal(json_array_size(ways), 3);
    assert_string_equal(json_string_value(json_object_get(root, "way")), "full");
    json_t *pods = json_object_get(root, "pods");
    assert_int_equal(json_array_size(pods), 400);
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        const char *st = json_string_value(json_object_get(pod, "state"));
        assert_non_null(st);
        int placed = json_object_get(pod, "node") != json_null();
        assert_true(placed == (strcmp(st, "running") == 0 || strcmp(st, "completed") == 0));
        if (!placed)
            assert_non_null(json_string_value(json_object_get(pod, "reason")));
    }
    double alloc =
        json_real_value(json_object_get(json_object_get(root, "summary"), "gpu_allocation_ratio"));
    assert_true(alloc > 0.5 && alloc <= 1.0);
    json_decref(root);
    run(&r, ARGS("bill", "--format", "csv", j1));
    expect_exit(&r, 0);
    expect_has(r.out, "tenant-a");
    result_free(&r);
}

/*
 * Time slicing and card modes end to end: the report shows each tenant's time-sliced GPU time and
 * the conversions, the JSON the same, and `gpusched bill` meters the replicas.
 */
/* --horizon overrides the Simulation document's horizon (6h in node-failure.yaml), in the
 * scenario's duration syntax; validate prints a horizon as a duration, not in microseconds. */
static void test_scenario_horizon(void **state)
{
    (void)state;
    struct t_run r;
    const char *js = tmp_path("horizon.json");
    run(&r, ARGS("validate", "tests/data/scenario/node-failure.yaml"));
    expect_exit(&r, 0);
    expect_has(r.out, "; horizon 6h\n");
    result_free(&r);
    for (int i = 0; i < 2; i++) {
        run(&r, ARGS("simulate", "--scenario", "tests/data/scenario/node-failure.yaml", "--quiet",
                     "--json", js, i ? "--horizon" : "--quiet", i ? "1h30m" : "--quiet"));
        expect_exit(&r, 0);
        result_free(&r);
        json_t *root = json_load_file(js, 0, NULL);
        assert_non_null(root);
        json_t *sum = json_object_get(root, "summary"); /* the last way's */
        assert_int_equal(json_integer_value(json_object_get(sum, "horizon_s")), i ? 5400 : 21600);
        json_decref(root);
    }
    /* Pods as kubectl writes them, with no duration: the run would end at once, said so. */
    const char *untimed =
        write_tmp("untimed.yaml", "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\n"
                                  "metadata: {name: c}\nspec:\n"
                                  "  nodeTemplates: [{name: t, gpuModel: L40S, gpus: 4}]\n"
                                  "  nodes: [{name: n1, zone: az-1, template: t}]\n---\n"
                                  "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: "
                                  "{containers: [{name: m, resources: {limits: "
                                  "{nvidia.com/gpu: 1}}}]}}\n");
    for (int i = 0; i < 2; i++) {
        run(&r, ARGS("simulate", "--scenario", untimed, "--quiet", i ? "--horizon" : "--quiet",
                     i ? "1h" : "--quiet"));
        expect_exit(&r, 0);
        assert_int_equal(strstr(r.err, "warning: no pod has the annotation "
                                       "sim.gpusched.io/duration and no horizon is set") != NULL,
                         !i);
        result_free(&r);
    }
    /* A Cluster and no pod: figures of nothing, said so. */
    const char *podless =
        write_tmp("podless.yaml", "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\n"
                                  "metadata: {name: c}\nspec:\n"
                                  "  nodeTemplates: [{name: t, gpuModel: L40S, gpus: 4}]\n"
                                  "  nodes: [{name: n1, zone: az-1, template: t}]\n");
    run(&r, ARGS("simulate", "--scenario", podless, "--quiet"));
    expect_exit(&r, 0);
    expect_has(r.err, "warning: the scenario holds no Pod: every figure is 0");
    result_free(&r);
    run(&r, ARGS("simulate", "--scenario", "tests/data/scenario/node-failure.yaml", "--horizon",
                 "8 hours"));
    expect_exit(&r, 2);
    expect_has(r.err, "--horizon \"8 hours\" is not a duration");
    result_free(&r);
    run(&r, ARGS("simulate", "--scenario", "tests/data/scenario/node-failure.yaml", "--horizon",
                 "0s")); /* said "is too large" */
    expect_exit(&r, 2);
    expect_has(r.err, "--horizon \"0s\" must be longer than 0 s");
    result_free(&r);
    /* the second read of standard input found it empty, and loaded nothing without a word */
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "'%s' simulate --scenario - --scenario - < '%s'", bin,
             write_tmp("one-pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
                                       "spec: {containers: [{name: m}]}\n"));
    t_run((const char *const[]){"/bin/sh", "-c", cmd, NULL}, &r);
    expect_exit(&r, 2);
    expect_has(r.err, "-: standard input is given twice: it is read once");
    t_run_free(&r); /* run() did not hold these */
    /* --quiet leaves out the bills --rates prices: a file that does not exist went unread */
    run(&r, ARGS("simulate", "--scenario", "tests/data/scenario/node-failure.yaml", "--quiet",
                 "--rates", "no-such-rates.yaml"));
    expect_exit(&r, 2);
    expect_has(r.err, "--rates prices the text report's bills, which --quiet leaves out");
    result_free(&r);
    run(&r, ARGS("simulate", "--help"));
    expect_exit(&r, 0);
    expect_has(r.out, "--way WAY");
    expect_has(r.out, "--horizon DURATION");
    result_free(&r);
}

static void test_scenario_timeslice(void **state)
{
    (void)state;
    struct t_run r;
    char js[128];
    snprintf(js, sizeof(js), "%s", tmp_path("ts.json"));
    run(&r, ARGS("simulate", "--scenario", "tests/data/scenario/timeslice.yaml", "--json", js));
    expect_exit(&r, 0);
    expect_has(r.out, "card mode conversions");
    expect_has(r.out, "time-sliced         asked-h entitled-h received-h\n"
                      "  team-a                 1.33       1.00       1.00\n"
                      "  team-b                 2.00       1.00       1.00\n");
    result_free(&r);
    json_error_t e;
    json_t *root = json_load_file(js, 0, &e);
    assert_non_null(root);
    json_t *sum = json_object_get(root, "summary");
    assert_int_equal(json_integer_value(json_object_get(sum, "card_mode_conversions")), 0);
    json_t *ts = json_object_get(json_array_get(json_object_get(sum, "tenants"), 0), "timeslice");
    assert_true(json_real_value(json_object_get(ts, "received_gpu_hours")) == 1.0);
    /* the card's time went 3:1 by the queues' weights, and so does what each tenant held of it:
     * split by the replicas' shares, team-a held 0.7 GPU-hours and kept 1.0 busy */
    size_t k;
    json_t *tn;
    json_array_foreach(json_object_get(sum, "tenants"), k, tn)
    {
        double held = json_real_value(json_object_get(tn, "gpu_hours"));
        double busy = json_real_value(json_object_get(tn, "busy_gpu_hours"));
        assert_true(held > 0);
        if (busy > held + 1e-9)
            fail_msg("tenant %zu: busy %.3f GPU-hours of %.3f held", k, busy, held);
    }
    json_decref(root);
    run(&r, ARGS("bill", js));
    expect_exit(&r, 0);
    expect_has(r.out, "team-a  A30 timeslice            0     38400  step-s");
    result_free(&r);
}

/* `gpusched simulate --scenario @path --json`: its exit must be 0; the JSON's pods (caller
 * decrefs the root in *@root). */
static json_t *simulated_pods(const char *path, json_t **root)
{
    struct t_run r;
    const char *js = tmp_path("pods.json");
    run(&r, ARGS("simulate", "--scenario", path, "--json", js));
    expect_exit(&r, 0);
    result_free(&r);
    json_error_t e;
    *root = json_load_file(js, 0, &e);
    assert_non_null(*root);
    return json_object_get(*root, "pods");
}

/* Pod @name of @pods: its state, reason, first node and start/end of each run must be as given
 * (@reason: a part of it, NULL none; @node NULL: never placed; @runs "start-end;..." in s). */
static void pod_was(const json_t *pods, const char *name, const char *state, const char *reason,
                    const char *node, const char *runs)
{
    const json_t *p = NULL, *q;
    size_t k;
    json_array_foreach(pods, k, q) if (!strcmp(json_string_value(json_object_get(q, "name")), name))
        p = q;
    if (!p)
        fail_msg("no pod %s", name);
    const char *st = json_string_value(json_object_get(p, "state"));
    const char *why = json_string_value(json_object_get(p, "reason"));
    const char *at = json_string_value(
        json_object_get(json_array_get(json_object_get(p, "placements"), 0), "node"));
    char got[256] = "";
    size_t off = 0, i;
    const json_t *u;
    json_array_foreach(json_object_get(p, "usage"), i, u) off +=
        (size_t)snprintf(got + off, sizeof(got) - off, "%lld-%lld;",
                         (long long)json_integer_value(json_object_get(u, "start_s")),
                         (long long)json_integer_value(json_object_get(u, "end_s")));
    if (strcmp(st ? st : "", state) || (reason && (!why || !strstr(why, reason))) ||
        (!reason && why) || (node ? !at || strcmp(at, node) : at != NULL) || strcmp(got, runs))
        fail_msg("%s: %s (%s) on %s, runs %s; expected %s (%s) on %s, runs %s", name, st,
                 why ? why : "", at ? at : "-", got, state, reason ? reason : "", node ? node : "-",
                 runs);
    /* a pod refused at admission never waited (it was counted waiting until the run ended) */
    if (!strcmp(state, "rejected") && !json_is_null(json_object_get(p, "wait_s")))
        fail_msg("%s: rejected, yet wait_s %lld", name,
                 (long long)json_integer_value(json_object_get(p, "wait_s")));
}

/* The head of a Cluster whose first node template, a, is an 8-card A100 board; more follow. */
#define CLUSTER_A100                                                                               \
    "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n"                \
    "  nodeTemplates:\n  - {name: a, gpuModel: A100-SXM4-80GB, gpus: 8}\n"

/* Pod @name of gang v/g, 4 H100 cards in one NVLink group. */
#define GANGPOD(name)                                                                              \
    "{apiVersion: v1, kind: Pod, metadata: {name: " name ", namespace: v, annotations: "           \
    "{sim.gpusched.io/duration: 1h, gpusched.io/topology: nvlink, scheduling.k8s.io/group-name: "  \
    "g, gpusched.io/gpu-model: H100-SXM5-80GB}}, spec: {containers: [{name: m, resources: "        \
    "{limits: {nvidia.com/gpu: 4}}}]}}\n"

/* Pod @name asking @gpus cards on node n2, all in one NVLink group. */
#define NVPOD(name, gpus)                                                                          \
    "{apiVersion: v1, kind: Pod, metadata: {name: " name ", namespace: v, annotations: "           \
    "{sim.gpusched.io/duration: 1h, gpusched.io/topology: nvlink}}, spec: {nodeName: n2, "         \
    "containers: [{name: m, resources: {limits: {nvidia.com/gpu: " #gpus "}}}]}}\n"

/* Pods that could never run are refused, not left waiting to the end: one pinned by
 * spec.nodeName past what its node holds (kubelet refuses it), a MIG instance of a profile no
 * GPU model of its tenant's GPUQuota has, and, under a ResourceQuota on requests.cpu, a container
 * that asks no CPU (the API server's "must specify requests.cpu"), and cards that must share one
 * NVLink group where its nodes have none that large. */
static void test_scenario_never_runs(void **state)
{
    (void)state;
    const char *yaml = write_tmp(
        "never.yaml", CLUSTER_A100
        "  - {name: l, gpuModel: L40S, gpus: 4}\n"
        "  - {name: q, gpuModel: A100-SXM4-80GB, gpus: 8, nvlinkGroups: [[0,1,2,3],[4,5,6,7]]}\n"
        "  nodes: [{name: n1, template: a}, {name: m1, template: l, zone: z2}, {name: n2, "
        "template: q}]\n"
        "---\n"
        "{apiVersion: gpu.example.com/v1, kind: GPUQuota, metadata: {name: q, namespace: t}, "
        "spec: {quotas: {l40s: {total: 4, dedicated: 4, shared: 0}}}}\n---\n"
        "{apiVersion: v1, kind: ResourceQuota, metadata: {name: rq, namespace: r}, spec: {hard: "
        "{requests.cpu: \"8\"}}}\n---\n"
        "{apiVersion: v1, kind: Pod, metadata: {name: mig, namespace: t, annotations: "
        "{sim.gpusched.io/duration: 1h}}, spec: {containers: [{name: m, resources: {limits: "
        "{nvidia.com/mig-1g.10gb: 1}}}]}}\n---\n"
        "{apiVersion: v1, kind: Pod, metadata: {name: pin, namespace: u, annotations: "
        "{sim.gpusched.io/duration: 1h}}, spec: {nodeName: m1, containers: [{name: m, "
        "resources: {limits: {nvidia.com/gpu: 6}}}]}}\n---\n"
        "{apiVersion: v1, kind: Pod, metadata: {name: big, namespace: u, annotations: "
        "{sim.gpusched.io/duration: 1h}}, spec: {nodeName: m1, containers: [{name: m, "
        "resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 60000}}}]}}\n---\n"
        "{apiVersion: v1, kind: Pod, metadata: {name: nocpu, namespace: r, annotations: "
        "{sim.gpusched.io/duration: 1h}}, spec: {containers: [{name: m, resources: {limits: "
        "{nvidia.com/gpu: 1}}}]}}\n---\n"
        "{apiVersion: v1, kind: Pod, metadata: {name: cpu, namespace: r, annotations: "
        "{sim.gpusched.io/duration: 1h}}, spec: {containers: [{name: m, resources: {limits: "
        "{nvidia.com/gpu: 1, cpu: 1}}}]}}\n---\n"
        "{apiVersion: v1, kind: Pod, metadata: {name: nvl, namespace: v, annotations: "
        "{sim.gpusched.io/duration: 1h, gpusched.io/topology: nvlink}}, spec: {nodeName: m1, "
        "containers: [{name: m, resources: {limits: {nvidia.com/gpu: 2}}}]}}\n---\n"
        "{apiVersion: v1, kind: Pod, metadata: {name: l40s, namespace: v, annotations: "
        "{sim.gpusched.io/duration: 1h, gpusched.io/topology: nvlink, gpusched.io/gpu-model: "
        "L40S}}, spec: {containers: [{name: m, resources: {limits: {nvidia.com/gpu: 1}}}]}}\n"
        "---\n"
        "{apiVersion: v1, kind: Pod, metadata: {name: five, namespace: v, annotations: "
        "{sim.gpusched.io/duration: 1h, gpusched.io/topology: nvlink}}, spec: {nodeName: n2, "
        "containers: [{name: m, resources: {limits: {nvidia.com/gpu: 5}}}]}}\n"
        "---\n"
        "{apiVersion: v1, kind: Pod, metadata: {name: zoned, namespace: v, annotations: "
        "{sim.gpusched.io/duration: 1h, gpusched.io/topology: nvlink}}, spec: {nodeSelector: "
        "{topology.kubernetes.io/zone: z2}, containers: [{name: m, resources: {limits: "
        "{nvidia.com/gpu: 2}}}]}}\n"
        "---\n" NVPOD("w1", 3) "---\n" NVPOD("w2", 3) "---\n" NVPOD("w3", 2));
    json_t *root, *pods = simulated_pods(yaml, &root);
    pod_was(pods, "v/nvl", "rejected",
            "tier nvlink: its 2 GPUs must be in one NVLink group; its node has no NVLink", NULL,
            "");
    pod_was(pods, "v/l40s", "rejected",
            "tier nvlink: its 1 GPU must be in one NVLink group; the nodes it may use have no "
            "NVLink",
            NULL, "");
    pod_was(pods, "v/five", "rejected",
            "tier nvlink: its 5 GPUs must be in one NVLink group; the largest on its node holds 4",
            NULL, "");
    pod_was(pods, "v/zoned", "rejected",
            "tier nvlink: its 2 GPUs must be in one NVLink group; the nodes it may use have no "
            "NVLink",
            NULL, "");
    /* one that fits an NVLink group of its node waits while none has room, rather than split */
    pod_was(pods, "v/w1", "completed", NULL, "n2", "0-3600;");
    pod_was(pods, "v/w2", "completed", NULL, "n2", "0-3600;");
    pod_was(pods, "v/w3", "completed", NULL, "n2", "3600-7200;");
    pod_was(pods, "t/mig", "rejected",
            "tenant t: its GPUQuota gives none of the GPU models with MIG profile 1g.10gb", NULL,
            "");
    pod_was(pods, "u/pin", "rejected", "nvidia.com/gpu 6: the largest node this pod may use has 4",
            NULL, "");
    pod_was(pods, "u/big", "rejected", "nvidia.com/gpumem 60000 MiB: more than the largest card",
            NULL, "");
    pod_was(pods, "r/nocpu", "rejected",
            "namespace r: ResourceQuota rq tracks requests.cpu: a container that asks none must "
            "specify requests.cpu",
            NULL, "");
    pod_was(pods, "r/cpu", "completed", NULL, "n1", "0-3600;"); /* a limit gives the request */
    json_decref(root);
}

/* A gang of 2 x 4 H100 cards under the nvlink tier, larger than any H100 NVLink group (the
 * A100's group of 8 it may not use): each member in a group of its own, at once, rather than
 * waiting for a group of 8 no H100 has. A pod's own tier, none too, is its tenant's no more. The
 * models its tenant's GPUQuota gives bound the NVLink groups a pod may have. */
static void test_scenario_gang_nvlink_models(void **state)
{
    (void)state;
    const char *yaml = write_tmp(
        "gang.yaml", CLUSTER_A100
        "  - {name: h, gpuModel: H100-SXM5-80GB, gpus: 8, nvlinkGroups: [[0,1,2,3],[4,5,6,7]]}\n"
        "  nodes: [{name: n1, template: a}, {name: n3, template: h}]\n"
        "---\n{apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: g, "
        "namespace: v}, spec: {minMember: 2}}\n"
        "---\n" GANGPOD("g1") "---\n" GANGPOD(
            "g2") "---\n"
                  "{apiVersion: v1, kind: ConfigMap, metadata: {name: topology-gpu-policy, "
                  "namespace: "
                  "kube-system}, data: {policy.yaml: \"tenants: {v: {topology: nvlink}}\"}}\n---\n"
                  "{apiVersion: v1, kind: Pod, metadata: {name: six, namespace: v, annotations: "
                  "{sim.gpusched.io/duration: 1h, gpusched.io/topology: none, "
                  "gpusched.io/gpu-model: "
                  "H100-SXM5-80GB}}, spec: {containers: [{name: m, resources: {limits: "
                  "{nvidia.com/gpu: "
                  "6}}}]}}\n---\n"
                  "{apiVersion: v1, kind: Pod, metadata: {name: six-t, namespace: v, annotations: "
                  "{sim.gpusched.io/duration: 1h, gpusched.io/gpu-model: H100-SXM5-80GB}}, spec: "
                  "{containers: [{name: m, resources: {limits: {nvidia.com/gpu: 6}}}]}}\n---\n"
                  "{apiVersion: gpu.example.com/v1, kind: GPUQuota, metadata: {name: q, namespace: "
                  "w}, "
                  "spec: {quotas: {h100: {total: 8, dedicated: 8, shared: 0}}}}\n---\n"
                  "{apiVersion: v1, kind: Pod, metadata: {name: eight, namespace: w, annotations: "
                  "{sim.gpusched.io/duration: 1h, gpusched.io/topology: nvlink}}, spec: "
                  "{containers: "
                  "[{name: m, resources: {limits: {nvidia.com/gpu: 8}}}]}}\n");
    json_t *root, *pods = simulated_pods(yaml, &root);
    pod_was(pods, "v/g1", "completed", NULL, "n3", "0-3600;");
    pod_was(pods, "v/g2", "completed", NULL, "n3", "0-3600;");
    /* topology none, written on the pod, is the pod's tier over its tenant's nvlink */
    pod_was(pods, "v/six", "completed", NULL, "n3", "3600-7200;");
    pod_was(pods, "v/six-t", "rejected",
            "tier nvlink (its tenant's): its 6 GPUs must be in one NVLink group; the largest on "
            "the nodes it may use holds 4",
            NULL, "");
    /* its GPUQuota gives H100s only: the A100's group of 8 is not one it may use */
    pod_was(pods, "w/eight", "rejected",
            "tier nvlink: its 8 GPUs must be in one NVLink group; the largest on the nodes it may "
            "use holds 4",
            NULL, "");
    json_decref(root);
}

/* Admission limits in the simulator (tests/data/scenario/limits.yaml): a LimitRange's
 * defaultRequest fills the memory a pod omits (five 4Gi pods on a 20Gi node, the sixth waits),
 * its max, min and maxLimitRequestRatio refuse pods (every LimitRange of a namespace), GPUQuota
 * maxGPUsPerPod refuses one, each reported as rejected and counted; a LimitRange of type Pod
 * bounds the sums of a pod's containers; a Queue's overcommitRatio lets shares, not whole cards,
 * past its capability. */
static void test_scenario_limits(void **state)
{
    (void)state;
    struct t_run r; /* the text report names the first rejected pods with why */
    run(&r, ARGS("simulate", "--scenario", "tests/data/scenario/limits.yaml"));
    expect_exit(&r, 0);
    expect_has(r.out, "  rejected tenant-a/big: LimitRange tenant-a/tenant-a-gpu-limits: "
                      "nvidia.com/gpu 3 > max 2 per Container\n");
    expect_has(r.out, "  rejected: 14 more (--json lists every pod with its reason)\n");
    result_free(&r);
    json_t *root, *pods = simulated_pods("tests/data/scenario/limits.yaml", &root);
    for (int i = 1; i <= 5; i++) {
        char name[32], runs[32];
        snprintf(name, sizeof(name), "tenant-a/d%d", i);
        snprintf(runs, sizeof(runs), "%d-%d;", i, 3600 + i);
        pod_was(pods, name, "completed", NULL, "n1", runs);
    }
    pod_was(pods, "tenant-a/d6", "completed", NULL, "n1", "3601-7201;");
    pod_was(pods, "tenant-a/big", "rejected",
            "LimitRange tenant-a/tenant-a-gpu-limits: nvidia.com/gpu 3 > max 2 per Container", NULL,
            "");
    pod_was(pods, "tenant-a/fat", "rejected",
            "LimitRange tenant-a/tenant-a-gpu-limits: memory 64Gi > max 32Gi per Container", NULL,
            "");
    pod_was(pods, "tenant-a/loose", "rejected",
            "LimitRange tenant-a/tenant-a-gpu-limits: memory 64Gi > max 32Gi per Container", NULL,
            "");
    pod_was(pods, "tenant-a/tiny", "rejected",
            "LimitRange tenant-a/tenant-a-gpu-limits: memory 512Mi < min 1Gi per Container", NULL,
            "");
    pod_was(pods, "team-a/over", "rejected", "tenant team-a: maxGPUsPerPod 4 < nvidia.com/gpu 5",
            NULL, "");
    pod_was(pods, "team-r/r-ok", "completed", NULL, "n1", "11000-14600;");
    pod_was(pods, "team-r/r-cpu", "rejected",
            "LimitRange team-r/ratios: cpu max limit to request ratio per Container is 2, but "
            "provided ratio is 4.000000",
            NULL, "");
    pod_was(pods, "team-r/r-nolimit", "rejected",
            "LimitRange team-r/ratios: cpu max limit to request ratio per Container is 2, but "
            "provided ratio is 2.500000",
            NULL, "");
    pod_was(pods, "team-r/r-big", "rejected",
            "LimitRange team-r/team-r-max: memory 8Gi > max 6Gi per Container", NULL, "");
    pod_was(pods, "team-r/r-cores", "rejected",
            "LimitRange team-r/team-r-max: cpu 3 > max 2500m per Container", NULL, "");
    pod_was(pods, "team-p/p-ok", "completed", NULL, "n1", "15000-18600;");
    static const char *const pod_sums[][2] = {
        {"team-p/p-gpus", "nvidia.com/gpu 3 > max 2 per Pod"},
        {"team-p/p-init", "nvidia.com/gpu 3 > max 2 per Pod"},
        {"team-p/p-mem", "memory 12Gi > max 8Gi per Pod"},
        {"team-p/p-nolimit", "maximum memory usage per Pod is 8Gi.  No limit is specified"},
        {"team-p/p-ratio",
         "cpu max limit to request ratio per Pod is 2, but provided ratio is 3.000000"}};
    for (size_t i = 0; i < sizeof(pod_sums) / sizeof(pod_sums[0]); i++) {
        char why[160];
        snprintf(why, sizeof(why), "LimitRange team-p/pod-sums: %s", pod_sums[i][1]);
        pod_was(pods, pod_sums[i][0], "rejected", why, NULL, "");
    }
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(root, "summary"), "rejected")), 19);
    /* requests.nvidia.com/gpu alone: the limit a LimitRange's default gives, else refused */
    pod_was(pods, "team-g/g-ok", "completed", NULL, "n1", "40000-43600;");
    pod_was(pods, "team-g/g-two", "rejected",
            "requests.nvidia.com/gpu 2 must equal limits.nvidia.com/gpu 1 (from LimitRange "
            "team-g/g-default)",
            NULL, "");
    pod_was(pods, "team-m/m-req", "rejected",
            "requests.nvidia.com/gpu 1 without limits.nvidia.com/gpu: Kubernetes requires a "
            "limit for an extended resource, and no LimitRange in namespace team-m gives one",
            NULL, "");
    pod_was(
        pods, "team-n/n-none", "rejected",
        "requests.nvidia.com/gpu 1 (from LimitRange team-n/n-min) without limits.nvidia.com/gpu: "
        "Kubernetes requires a limit for an extended resource, and no LimitRange in namespace "
        "team-n gives one",
        NULL, "");
    pod_was(pods, "team-f/f-none", "rejected",
            "nvidia.com/gpu 1500m (from LimitRange team-f/f-frac): must be a whole number of GPUs",
            NULL, "");
    pod_was(pods, "team-d/dd", "rejected",
            "LimitRange team-d/b-max: memory 8Gi > max 6Gi per Container", NULL, "");
    pod_was(pods, "team-m/m1", "completed", NULL, "n1", "30001-33601;");
    pod_was(pods, "team-m/m2", "completed", NULL, "n1", "30002-33602;");
    pod_was(pods, "team-m/m3", "completed", NULL, "n1", "30003-33603;");
    pod_was(pods, "team-m/m4", "completed", NULL, "n1", "33601-37201;"); /* 3 x 6Gi of 20Gi */
    pod_was(pods, "team-c/hog", "pending", "; no node has 96 of cpu, the most is 64.", NULL, "");
    pod_was(pods, "team-b/w1", "completed", NULL, "n1", "20-7220;");
    pod_was(pods, "team-b/s1", "completed", NULL, "n1", "21-7221;");
    pod_was(pods, "team-b/s2", "completed", NULL, "n1", "22-7222;");    /* 3.0 of 2 x 1.5 */
    pod_was(pods, "team-b/w2", "completed", NULL, "n1", "7220-10820;"); /* whole: 2 of 2 */
    pod_was(pods, "team-b/s3", "completed", NULL, "n1", "7220-10820;");
    json_decref(root);
}

/*
 * Tiers and backfill in the simulator, pod by pod: the az tier (az.yaml) puts a gang's members in
 * different zones and shares no node between an az tenant and another (batch-0 keeps off n1,
 * dr-2 off n2, batch-1 waits for n2); backfill (backfill.yaml) runs `short` beside the waiting
 * head and `long`, which would delay it, after it; two tenants without a Queue document share
 * `default` (default-queue.yaml), so team-b's pod waits rather than reclaim a card.
 */
static void test_scenario_tiers_queues(void **state)
{
    (void)state;
    static const struct {
        const char *file, *pod, *node, *runs;
    } want[] = {
        {"az", "dr/dr-0", "n1", "0-10800;"},
        {"az", "dr/dr-1", "n3", "0-10800;"},
        {"az", "batch/batch-0", "n2", "2-3602;"},
        {"az", "dr/dr-2", "n1", "3-10803;"},
        {"az", "batch/batch-1", "n2", "3602-7202;"},
        {"backfill", "ns/running", "n1", "0-100;"},
        {"backfill", "ns/short", "n1", "2-52;"},
        {"backfill", "ns/head", "n1", "100-200;"},
        {"backfill", "ns/long", "n1", "200-700;"},
        {"default-queue", "team-a/a0", "n1", "0-7200;"},
        {"default-queue", "team-b/b0", "n1", "7200-10800;"}, /* in `default` too: no reclaim */
    };
    json_t *root = NULL, *pods = NULL;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        if (!i || strcmp(want[i].file, want[i - 1].file)) {
            char path[96];
            json_decref(root);
            snprintf(path, sizeof(path), "tests/data/scenario/%s.yaml", want[i].file);
            pods = simulated_pods(path, &root);
        }
        pod_was(pods, want[i].pod, "completed", NULL, want[i].node, want[i].runs);
    }
    json_decref(root);
    /* an nvlink pod's cards: in its NVLink group, the smallest PCIe domain that holds them */
    pods = simulated_pods("tests/data/scenario/nvlink-pcie.yaml", &root);
    size_t k;
    json_t *q;
    int seen = 0;
    json_array_foreach(pods, k,
                       q) if (!strcmp(json_string_value(json_object_get(q, "name")), "t/two"))
    {
        char *g = json_dumps(json_object_get(q, "gpus"), JSON_COMPACT);
        assert_string_equal(g, "[2,3]");
        free(g);
        seen = 1;
    }
    assert_true(seen);
    json_decref(root);
}

/* Two 8-card nodes; team-a's pod takes a card of n1, then team-b's pod comes: FairnessScore
 * keeps it off n1 (team-a is there), GPUBinPacking would rather fill n1. */
#define WEIGHTS_DAY                                                                                \
    "apiVersion: sim.gpusched.io/v1alpha1\nkind: Simulation\nmetadata: {name: w}\n"                \
    "spec: {compare: [full]}\n---\n"                                                               \
    "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nmetadata: {name: w}\nspec:\n"                \
    "  nodeTemplates:\n"                                                                           \
    "    - {name: t, gpuModel: A100-SXM4-80GB, gpus: 8, cpuMilli: 64000, memoryMiB: 524288}\n"     \
    "  nodes:\n    - {name: n1, zone: az-1, template: t}\n"                                        \
    "    - {name: n2, zone: az-1, template: t}\n---\n"                                             \
    "{apiVersion: v1, kind: Pod, metadata: {name: a, namespace: team-a, annotations: "             \
    "{sim.gpusched.io/arrival: 0s, sim.gpusched.io/duration: 1h}}, spec: {containers: [{name: "    \
    "m, resources: {limits: {nvidia.com/gpu: 1}}}]}}\n---\n"                                       \
    "{apiVersion: v1, kind: Pod, metadata: {name: b, namespace: team-b, annotations: "             \
    "{sim.gpusched.io/arrival: 10s, sim.gpusched.io/duration: 1h}}, spec: {containers: [{name: "   \
    "m, resources: {limits: {nvidia.com/gpu: 1}}}]}}\n"
#define KSC_HEAD                                                                                   \
    "---\napiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"          \
    "profiles:\n  - schedulerName: gpu-scheduler\n    plugins:\n      score:\n        enabled:\n"

/* The node team-b/b ran on in the scenario @text, run through `gpusched simulate --scenario`. */
static char *node_of_b(const char *name, const char *text)
{
    struct t_run r;
    char js[128];
    snprintf(js, sizeof(js), "%s", tmp_path("weights.json"));
    run(&r, ARGS("simulate", "--scenario", write_tmp(name, text), "--json", js, "--quiet"));
    expect_exit(&r, 0);
    result_free(&r);
    json_error_t e;
    json_t *root = json_load_file(js, 0, &e), *pod;
    assert_non_null(root);
    size_t i;
    char *node = NULL;
    json_array_foreach(json_object_get(root, "pods"), i, pod)
    {
        if (!strcmp(json_string_value(json_object_get(pod, "name")), "team-b/b"))
            node = strdup(json_string_value(json_object_get(pod, "node")));
    }
    json_decref(root);
    assert_non_null(node);
    return node;
}

/*
 * A KubeSchedulerConfiguration in the scenario sets the score plugins' weights: the seed's
 * (GPUBinPacking 8, TopologyScore 6, FairnessScore 4) put team-b's pod on the empty node; with
 * GPUBinPacking 50 it joins team-a's node. A weight for a plugin gpusched does not build is
 * refused with its file, line and column.
 */
static void test_scenario_score_weights(void **state)
{
    (void)state;
    char *seed = node_of_b("w0.yaml", WEIGHTS_DAY);
    char *same = node_of_b("w1.yaml", WEIGHTS_DAY KSC_HEAD "          - {name: GPUBinPacking, "
                                                           "weight: 8}\n");
    char *packed = node_of_b("w2.yaml", WEIGHTS_DAY KSC_HEAD "          - {name: GPUBinPacking, "
                                                             "weight: 50}\n");
    assert_string_equal(seed, "n2");
    assert_string_equal(same, "n2");
    assert_string_equal(packed, "n1");
    free(seed);
    free(same);
    free(packed);
    struct t_run r;
    const char *bad =
        write_tmp("w3.yaml", WEIGHTS_DAY KSC_HEAD "          - {name: GPUBinPacking, weight: 8}\n"
                                                  "          - {name: GPUBinPackng, weight: 3}\n");
    run(&r, ARGS("simulate", "--scenario", bad));
    expect_exit(&r, 2);
    assert_int_equal(r.out_len, 0);
    expect_has(r.err, "w3.yaml:28:20:");
    expect_has(r.err, "GPUBinPackng");
    result_free(&r);
}

/* A scenario that cannot be run is refused with the place named, and nothing is written. */
static void test_scenario_bad_input(void **state)
{
    (void)state;
    struct t_run r;
    const char *bad = write_tmp("bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: [x\n");
    run(&r, ARGS("simulate", "--scenario", bad));
    expect_exit(&r, 2);
    assert_int_equal(r.out_len, 0);
    expect_has(r.err, "bad.yaml:");
    result_free(&r);
    const char *nonodes = write_tmp("nonodes.yaml", "apiVersion: v1\nkind: Pod\n"
                                                    "metadata: {name: p, namespace: a}\n"
                                                    "spec: {containers: [{name: c}]}\n");
    run(&r, ARGS("simulate", "--scenario", nonodes));
    expect_exit(&r, 2);
    expect_has(r.err, "no nodes");
    result_free(&r);
    run(&r, ARGS("simulate", "--scenario", nonodes, "--way", "bogus"));
    expect_exit(&r, 2);
    expect_has(r.err, "--way");
    result_free(&r);
    run(&r, ARGS("simulate", "--scenario", "no-such-scenario.yaml"));
    expect_exit(&r, 2);
    expect_has(r.err, "no-such-scenario.yaml");
    result_free(&r);
    /* A failed write removes a half-written regular file, never a device. */
    struct stat sb;
    if (stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode)) {
        run(&r, ARGS("generate", "tenant-day", "--quiet", "-o", "/dev/full"));
        expect_exit(&r, 1);
        result_free(&r);
        assert_int_equal(stat("/dev/full", &sb), 0);
        assert_true(S_ISCHR(sb.st_mode));
    }
}

#define DLRM_TRACE "data/alibaba-dlrm-v2025/disaggregated_DLRM_trace_first24d.csv"

/* forecast --help lists each option the man page lists, on a line of its own: --holdout, --step,
 * --advice and --replay were only named inside other options' text or headings. */
static void test_forecast_help_lists_man_options(void **state)
{
    (void)state;
    struct t_run r;
    run(&r, ARGS("forecast", "--help"));
    expect_exit(&r, 0);
    char *man = t_slurp("docs/man/gpusched.1.scd", NULL);
    char *at = strstr(man, "\n## forecast\n"), *end = at ? strstr(at + 1, "\n## ") : NULL;
    assert_non_null(end);
    *end = '\0';
    int n = 0;
    for (char *p = strstr(at, "\n*--"); p; p = strstr(p + 1, "\n*--"), n++) {
        char want[64];
        size_t len = strcspn(p + 2, "*");
        snprintf(want, sizeof(want), "\n  %.*s", (int)len, p + 2);
        const char *hit = strstr(r.out, want);
        if (!hit || (hit[strlen(want)] != ' ' && hit[strlen(want)] != '\n'))
            fail_msg("forecast --help lists no line for %s", want + 3);
    }
    assert_true(n > 20);
    free(man);
    result_free(&r);
}

/* gpusched forecast on the bundled DLRM services: a forecast per service, JSON that parses, a
 * backtest that names its baselines, advice with Prometheus gauges. */
static void test_forecast_dlrm(void **state)
{
    (void)state;
    struct t_run r;
    run(&r, (const char *const[]){"forecast", "--dlrm", DLRM_TRACE, "--by", "service", "--top", "3",
                                  "--horizon", "6h", NULL});
    expect_exit(&r, 0);
    expect_has(r.out, "4 series, 576 hours of history");
    expect_has(r.out, "app_0: ");
    expect_has(r.out, "(other): ");
    /* the parameters a model has, and none for a baseline */
    run(&r, (const char *const[]){"forecast", "--dlrm", DLRM_TRACE, "--model", "ANW", "--horizon",
                                  "2h", NULL});
    expect_exit(&r, 0);
    expect_has(r.out, "total: DSHW(A,N,A+A) (alpha ");
    assert_null(strstr(r.out, "beta"));
    run(&r, (const char *const[]){"forecast", "--dlrm", DLRM_TRACE, "--model", "snaive",
                                  "--horizon", "2h", NULL});
    expect_exit(&r, 0);
    expect_has(r.out, "total: snaive\n");
    run(&r, (const char *const[]){"forecast", "--dlrm", DLRM_TRACE, "--horizon", "2h", "--format",
                                  "json", NULL});
    expect_exit(&r, 0);
    json_error_t jerr;
    json_t *root = json_loads(r.out, 0, &jerr);
    assert_non_null(root);
    json_t *hours = json_object_get(json_array_get(json_object_get(root, "forecasts"), 0), "hours");
    assert_int_equal(json_array_size(hours), 2);
    assert_true(json_integer_value(json_object_get(json_array_get(hours, 0), "q900")) >=
                json_integer_value(json_object_get(json_array_get(hours, 0), "q100")));
    json_decref(root);
    run(&r, (const char *const[]){"forecast", "--dlrm", DLRM_TRACE, "--backtest", NULL});
    expect_exit(&r, 0);
    expect_has(r.out, "against snaive");
    expect_has(r.out, "overall (mean)");
    const char *prom = tmp_path("advice.prom");
    run(&r, (const char *const[]){"forecast", "--dlrm", DLRM_TRACE, "--by", "service", "--top", "2",
                                  "--advice", "--target", "app_0=util:60..80", "--quota",
                                  "app_0:any=700", "--prom", prom, NULL});
    expect_exit(&r, 0);
    expect_has(r.out, "nodes to run");
    expect_has(r.out, "app_0");
    char *text = t_slurp(prom, NULL);
    assert_non_null(text);
    expect_has(text, "gpusched_recommended_nodes{model=\"any\"} ");
    expect_has(text, "gpusched_forecast_gpus{tenant=\"app_0\",model=\"any\",quantile=\"0.9\"} ");
    free(text);
    /* the forecast's CSV drives the tenants' day's inference replicas */
    run(&r, (const char *const[]){"forecast", "--dlrm", DLRM_TRACE, "--horizon", "24h", "--format",
                                  "csv", NULL});
    expect_exit(&r, 0);
    const char *traffic = write_tmp("traffic.csv", r.out);
    const char *day = tmp_path("elastic-day.yaml");
    run(&r, (const char *const[]){"generate", "tenant-day", "--inference-traffic", traffic, "-o",
                                  day, "--quiet", NULL});
    expect_exit(&r, 0);
    text = t_slurp(day, NULL);
    assert_non_null(text);
    expect_has(text, "gpusched.io/workload: inference");
    free(text);
    result_free(&r);
}

/* Bad input: one line on stderr naming the place, exit 2, nothing on stdout. */
static void test_forecast_bad_input(void **state)
{
    (void)state;
    struct t_run r;
    const char *dlrm = write_tmp(
        "bad_dlrm.csv", "instance_sn,role,app_name,gpu_request,creation_time,deletion_time\n"
                        "i0,HN,app_0,1,100,50\n");
    const char *gap = write_tmp("gap.csv", "time_s,series,milli\n0,a,1\n7200,a,2\n");
    const char *dup = write_tmp("dup.csv", "time_s,series,milli\n0,a,1\n0,a,2\n");
    const char *shrt = write_tmp("short.csv", "time_s,series,milli\n0,a,1\n3600,a,2\n");
    const char *one = write_tmp("one_dlrm.csv", "role,app_name,gpu_request,creation_time,"
                                                "deletion_time\nHN,a,1,0,100\n");
    const char *late = write_tmp("late_dlrm.csv", "role,app_name,gpu_request,creation_time,"
                                                  "deletion_time\nHN,a,1,7200,7300\n");
    char weektext[8192] = "time_s,series,milli\n";
    for (int h = 0; h < 169; h++)
        snprintf(weektext + strlen(weektext), sizeof(weektext) - strlen(weektext), "%d,a,5\n",
                 h * 3600);
    const char *week = write_tmp("week.csv", weektext);
    static char widetext[200000] = "time_s,series,milli\n";
    for (size_t i = 0, at = strlen(widetext); i < 10000; i++)
        at += (size_t)snprintf(widetext + at, sizeof(widetext) - at, "0,s%zu,1\n", i);
    const char *wide = write_tmp("wide.csv", widetext);
    const char *const cases[][10] = {
        {"forecast", "--dlrm", dlrm, NULL},
        {"forecast", "--series", gap, NULL},
        {"forecast", "--series", dup, NULL},
        {"forecast", "--series", shrt, "--model", "ANA", NULL},
        {"forecast", "--series", shrt, "--backtest", NULL},
        {"forecast", "--dlrm", DLRM_TRACE, "--by", "tenant", NULL},
        {"forecast", "--dlrm", DLRM_TRACE, "--horizon", "90m", NULL},
        {"forecast", NULL},
        {"forecast", "--dlrm", DLRM_TRACE, "--replay", "--right-size", NULL},
        {"generate", "tenant-day", "--inference-traffic", gap, NULL},
        /* options no mode reads were ignored: --prom wrote no file, --by grouped nothing */
        {"forecast", "--series", shrt, "--prom", "never.prom", NULL},
        {"forecast", "--series", shrt, "--by", "service", NULL},
        {"forecast", "--dlrm", one, "--backtest", "--advice", NULL},
        {"forecast", "--dlrm", one, "--advice", "--format", "csv", NULL},
        {"forecast", "--dlrm", one, "--replay", "--target", "a=wait:0s", NULL},
        /* an --end past int64 was read as its largest value; near it, the hours overflowed */
        {"forecast", "--dlrm", one, "--end", "99999999999999999999", NULL},
        {"forecast", "--dlrm", one, "--end", "9223372036854775000", NULL},
        /* the replay allocated an hour's advice for each of them */
        {"forecast", "--dlrm", one, "--replay", "--end", "4000000000000", NULL},
        {"forecast", "--dlrm", one, "--replay", "--overcommit", "0.5", NULL},
        /* the span of the records was written as the end's time: "10800 s of history" */
        {"forecast", "--dlrm", late, "--replay", NULL},
        {"forecast", "--dlrm", one, "--replay", "--overcommit", "1.5", NULL},
        {"forecast", "--dlrm", one, "--overcommit", "1.5", NULL},
        /* the day's limits on the traffic named the output file ("...: stdout") and said "none
         * above 0" of a week and an hour of traffic */
        {"generate", "tenant-day", "--inference-traffic", week, NULL},
        /* 10,000 series 90 days ahead held 1 GB of forecasts (100,000 of them 10 GB) */
        {"forecast", "--series", wide, "--horizon", "90d", NULL},
        /* strtoll() took a sign and spaces before a duration */
        {"forecast", "--dlrm", one, "--horizon", " +2h", NULL},
        /* a source given twice counted every record twice */
        {"forecast", "--dlrm", one, "--pods", one, NULL},
        /* a second --target (or --quota, --node-gpus) of the same name was ignored, as was one
         * naming no series */
        {"forecast", "--dlrm", one, "--advice", "--target", "total=wait:0s", "--target",
         "total=wait:1h", NULL},
        {"forecast", "--dlrm", one, "--advice", "--node-gpus", "any=4", "--node-gpus", "any=8",
         NULL},
        {"forecast", "--dlrm", one, "--advice", "--target", "totl=wait:0s", NULL},
        {"forecast", "--dlrm", one, "--advice", "--quota", "total:A100=8", NULL},
        /* "all" was listed as a known policy, and a bad one did not name the option */
        {"forecast", "--dlrm", one, "--replay", "--policy", "all", NULL},
        {"forecast", "--dlrm", one, "--replay", "--policy", "foo", NULL},
    };
    const char *want[] = {
        "bad_dlrm.csv:2:19: deletion_time: deleted (50) before created (100)",
        "gap.csv:3:1: time_s: series \"a\" jumps from 0 to 7200 s: 1 hour missing",
        "dup.csv:3:1: time_s: 0 of series \"a\" repeats the time of line 2",
        "series a: ETS(A,N,A) needs 48 hours of history, has 2",
        "--holdout of 168 hours leaves no history",
        "names no tenant",
        "--horizon 90m: want a whole number of hours",
        "no source",
        "--right-size needs the measured utilisation: --utilisation FILE",
        "--inference-traffic: ",
        "--prom is not read by a forecast: refused rather than ignored",
        "--by builds series from demand records: --series gives them as written",
        "give one of --backtest, --advice and --replay",
        "--format csv: --advice writes a table or json",
        "--replay reads the '*' wait --target only",
        "--end 99999999999999999999: want seconds",
        "one_dlrm.csv: 2562047788015216 hours from the first record (0 s) to the end "
        "(9223372036854775000 s): more than 100000",
        "elastic replay: 1111111111 hours of history: more than 100000",
        "--overcommit 0.5: want a ratio 1..4 (1.5)",
        "elastic replay: the demand records span 3600 s: want more than the warm-up (604800 s, "
        "--warmup) and a day",
        "--overcommit packs right-sized shares: give --right-size",
        "--overcommit is not read by a forecast",
        "week.csv: traffic: 169 hours: want 1..168",
        "10000 series x 2160 hours ahead: more than 20000000 forecast hours at once",
        "--horizon  +2h: want a whole number of hours",
        "one_dlrm.csv: given twice as a source",
        "--target total=wait:1h: a second target for total",
        "--node-gpus any=8: model any given twice",
        "--target totl=...: no series is named \"totl\"",
        "--quota total:A100=...: no series of \"total\" on model \"A100\"",
        "--policy all: the replay weighs elastic against static clusters under one policy",
        "--policy foo: unknown policy (known: gpusched, fgd, bestfit, gpupacking, gpuclustering, "
        "dotprod, random)\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        run(&r, cases[i]);
        expect_exit(&r, 2);
        expect_has(r.err, want[i]);
        assert_int_equal(r.out_len, 0);
        assert_int_equal(count_lines(r.err), 1);
    }
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simulate_fgd_reports),
        cmocka_unit_test(test_simulate_deterministic),
        cmocka_unit_test(test_outputs_spare_inputs),
        cmocka_unit_test(test_bad_node_files),
        cmocka_unit_test(test_pod_model_not_in_cluster),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_unwritable_outputs),
        cmocka_unit_test(test_failed_writes),
        cmocka_unit_test(test_config_profiles),
        cmocka_unit_test(test_unsampleable_workloads),
        cmocka_unit_test(test_top_level),
        cmocka_unit_test(test_forecast_help_lists_man_options),
        cmocka_unit_test(test_validate_seeds),
        cmocka_unit_test(test_validate_mig_policy_no_devices),
        cmocka_unit_test(test_validate_json),
        cmocka_unit_test(test_validate_simulation),
        cmocka_unit_test(test_validate_min_resources),
        cmocka_unit_test(test_validate_refusals),
        cmocka_unit_test(test_scenario_never_runs),
        cmocka_unit_test(test_arguments_escaped),
        cmocka_unit_test(test_topo_name_and_model),
        cmocka_unit_test(test_client_token),
        cmocka_unit_test(test_client_server),
        cmocka_unit_test(test_scenario_gang_nvlink_models),
        cmocka_unit_test(test_validate_bad_input),
        cmocka_unit_test(test_scenario_percentages_agree),
        cmocka_unit_test(test_scenario_tenant_day),
        cmocka_unit_test(test_scenario_bad_input),
        cmocka_unit_test(test_scenario_score_weights),
        cmocka_unit_test(test_scenario_timeslice),
        cmocka_unit_test(test_scenario_horizon),
        cmocka_unit_test(test_scenario_limits),
        cmocka_unit_test(test_scenario_tiers_queues),
        cmocka_unit_test(test_forecast_dlrm),
        cmocka_unit_test(test_forecast_bad_input),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
