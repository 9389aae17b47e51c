/*
 * The tenant-day generator: its output is read back with libyaml, document by document, and
 * checked against the contract: the kinds in order, the node count the parameters ask for, quotas
 * that fit the cluster, exactly `pods` pods in non-decreasing arrival order, gangs whose members
 * follow their PodGroup and number its minMember, the daily shapes of the four workload kinds, and
 * the same bytes for the same parameters. The gpusched binary ($GPUSCHED_BIN) is run for the
 * command-line contract: exit 0 with the scenario, exit 2 with one line for bad options.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/scenario.h"
#include "gpusched/tenantday.h"
#include "gpusched/tsim.h"

#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

enum { K_SIM, K_CLUSTER, K_CONFIGMAP, K_QUOTA, K_QUEUE, K_PRIO, K_PODGROUP, K_POD, NKIND };
static const char *const kind_names[NKIND] = {
    "Simulation", "Cluster", "ConfigMap", "GPUQuota", "Queue", "PriorityClass", "PodGroup", "Pod"};
static const char *const workloads[GS_WORKLOAD_KINDS] = {"training", "interactive", "inference",
                                                         "hpo"};
static const char *const workload_ns[GS_WORKLOAD_KINDS] = {"tenant-a", "tenant-b", "tenant-c",
                                                           "tenant-a"};
static const long util_lo[GS_WORKLOAD_KINDS] = {80, 10, 20, 70};
static const long util_hi[GS_WORKLOAD_KINDS] = {95, 40, 40, 90};
static const long gpus_hi[GS_WORKLOAD_KINDS] = {8, 4, 2, 8};

/* What a pass over the output found. */
struct scan {
    int full; /* check every pod field, not only count */
    size_t docs, kind[NKIND], nodes, gpus, model_gpus[GS_MODEL_MAX];
    size_t by_workload[GS_WORKLOAD_KINDS], arrivals_by_hour[GS_WORKLOAD_KINDS][24];
    size_t saving_30m[GS_WORKLOAD_KINDS]; /* pods declaring checkpoint-interval "30m" */
    long last_arrival, horizon_s;
    char group[64]; /* the open gang: its PodGroup's name, minMember, members seen */
    long group_min, group_seen, group_gpus;
    int elastic; /* the day was written --elastic: gangs from the low end of their range */
    int group_workload;
    char prio[8][32]; /* PriorityClass names seen */
    int nprio;
    char **names; /* pod names (full scans), to prove them unique */
    size_t nnames;
};

/* ---- libyaml helpers ------------------------------------------------------------------------- */

static yaml_node_t *get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp((char *)k->data.scalar.value, key) == 0)
            return yaml_document_get_node(doc, p->value);
    }
    return NULL;
}

static const char *str(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    yaml_node_t *n = get(doc, map, key);
    if (!n || n->type != YAML_SCALAR_NODE)
        fail_msg("missing scalar \"%s\" (line %zu)", key, map ? map->start_mark.line + 1 : 0);
    return (const char *)n->data.scalar.value;
}

static long num(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    const char *s = str(doc, map, key);
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end)
        fail_msg("\"%s\": \"%s\" is not an integer", key, s);
    return v;
}

/* "90m" -> 5400; the suffix one of s, m, h. */
static long seconds(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || end[0] == '\0' || end[1] != '\0')
        fail_msg("\"%s\" is not an integer with a unit", s);
    switch (*end) {
    case 's':
        return v;
    case 'm':
        return v * 60;
    case 'h':
        return v * 3600;
    default:
        fail_msg("\"%s\": unit is not s, m or h", s);
    }
    return -1;
}

static size_t seq_len(yaml_node_t *n)
{
    assert_non_null(n);
    assert_int_equal(n->type, YAML_SEQUENCE_NODE);
    return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static yaml_node_t *seq_at(yaml_document_t *doc, yaml_node_t *n, size_t i)
{
    return yaml_document_get_node(doc, n->data.sequence.items.start[i]);
}

/* ---- the cluster ----------------------------------------------------------------------------- */

/* GPU lists of @groups: indexes below @gpus, none twice; return how many were listed. */
static unsigned check_groups(yaml_document_t *doc, yaml_node_t *groups, unsigned gpus)
{
    unsigned seen = 0, n = 0;
    for (size_t g = 0; g < seq_len(groups); g++) {
        yaml_node_t *grp = seq_at(doc, groups, g);
        for (size_t i = 0; i < seq_len(grp); i++) {
            long idx = atol((char *)seq_at(doc, grp, i)->data.scalar.value);
            assert_true(idx >= 0 && idx < (long)gpus);
            assert_false(seen & (1u << idx));
            seen |= 1u << idx;
            n++;
        }
    }
    return n;
}

/* "az1-a100-[01-16]" -> 16 names. */
static size_t range_count(const char *name)
{
    const char *lb = strchr(name, '[');
    assert_non_null(lb);
    char *dash, *rb;
    long a = strtol(lb + 1, &dash, 10);
    assert_true(*dash == '-');
    long b = strtol(dash + 1, &rb, 10);
    assert_true(*rb == ']' && rb[1] == '\0');
    assert_true(a >= 0 && b >= a);
    assert_int_equal(dash - (lb + 1), rb - (dash + 1)); /* equal widths: [01-16] */
    return (size_t)(b - a + 1);
}

static void scan_cluster(yaml_document_t *doc, yaml_node_t *root, struct scan *s)
{
    yaml_node_t *spec = get(doc, root, "spec"), *tmpl = get(doc, spec, "nodeTemplates");
    yaml_node_t *nodes = get(doc, spec, "nodes");
    for (size_t i = 0; i < seq_len(nodes); i++) {
        yaml_node_t *n = seq_at(doc, nodes, i), *t = NULL;
        const char *zone = str(doc, n, "zone");
        assert_true(strcmp(zone, "az-1") == 0 || strcmp(zone, "az-2") == 0);
        for (size_t j = 0; j < seq_len(tmpl) && !t; j++)
            if (strcmp(str(doc, seq_at(doc, tmpl, j), "name"), str(doc, n, "template")) == 0)
                t = seq_at(doc, tmpl, j);
        assert_non_null(t);
        unsigned gpus = (unsigned)num(doc, t, "gpus");
        int model = gs_catalog_find(str(doc, t, "gpuModel"), -1);
        assert_true(model >= 0);
        /* Every card sits in exactly one PCIe domain; NVLink groups, where given, are disjoint. */
        assert_int_equal(check_groups(doc, get(doc, t, "pcieDomains"), gpus), gpus);
        if (get(doc, t, "nvlinkGroups"))
            check_groups(doc, get(doc, t, "nvlinkGroups"), gpus);
        size_t count = range_count(str(doc, n, "name"));
        s->nodes += count;
        s->gpus += count * gpus;
        s->model_gpus[model] += count * gpus;
    }
}

/* Quota keys name catalog models; per model, dedicated + shared = total = the cluster's cards,
 * and the tenants' dedicated cards together fit in it. */
static void scan_quota(yaml_document_t *doc, yaml_node_t *root, struct scan *s, size_t *dedicated)
{
    yaml_node_t *q = get(doc, get(doc, root, "spec"), "quotas");
    assert_non_null(q);
    for (yaml_node_pair_t *p = q->data.mapping.pairs.start; p < q->data.mapping.pairs.top; p++) {
        int m = gs_catalog_find((char *)yaml_document_get_node(doc, p->key)->data.scalar.value, -1);
        assert_true(m >= 0);
        yaml_node_t *v = yaml_document_get_node(doc, p->value);
        long total = num(doc, v, "total"), ded = num(doc, v, "dedicated");
        assert_int_equal(ded + num(doc, v, "shared"), total);
        assert_int_equal(total, (long)s->model_gpus[m]);
        dedicated[m] += (size_t)ded;
        assert_true(dedicated[m] <= s->model_gpus[m]);
    }
    yaml_node_t *lim = get(doc, get(doc, root, "spec"), "limits");
    assert_true(num(doc, lim, "maxGPUsPerPod") >= 2 && num(doc, lim, "maxPodsPerUser") >= 1);
}

/* ---- gangs and pods -------------------------------------------------------------------------- */

/* A gang is closed by anything that is not its next member: it must then be complete. */
static void close_group(struct scan *s)
{
    if (!s->group[0])
        return;
    assert_true(s->group_seen >= s->group_min);
    if (s->full) { /* elastic from the low end of the kind's range in seed 004 §1.1 */
        long per = s->group_gpus / s->group_seen, lo = s->group_workload == GS_WORKLOAD_HPO ? 4 : 2;
        long want = (lo + per - 1) / per;
        assert_int_equal(s->group_min, !s->elastic || want > s->group_seen ? s->group_seen : want);
    }
    if (s->full && s->group_workload == GS_WORKLOAD_TRAINING)
        assert_true(s->group_gpus >= 2 && s->group_gpus <= 8);
    if (s->full && s->group_workload == GS_WORKLOAD_HPO)
        assert_true(s->group_gpus <= 16);
    s->group[0] = '\0';
}

static void scan_podgroup(yaml_document_t *doc, yaml_node_t *root, struct scan *s)
{
    close_group(s);
    yaml_node_t *spec = get(doc, root, "spec");
    snprintf(s->group, sizeof(s->group), "%s", str(doc, get(doc, root, "metadata"), "name"));
    s->group_min = num(doc, spec, "minMember");
    s->group_seen = s->group_gpus = 0;
    s->group_workload = -1;
    assert_true(s->group_min >= 1);
    str(doc, spec, "queue");
    str(doc, spec, "priorityClassName");
}

/* The index of @s in @names[0..n); a failure when it is not there. */
static int index_of(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    fail_msg("unexpected \"%s\"", s);
    return -1;
}

/* Whole cards within the kind's range, or one card's share: memory and compute. */
static long check_limits(yaml_document_t *doc, yaml_node_t *limits, int k)
{
    long gpus = num(doc, limits, "nvidia.com/gpu");
    str(doc, limits, "cpu");
    str(doc, limits, "memory");
    if (get(doc, limits, "nvidia.com/gpumem")) {
        long mem = num(doc, limits, "nvidia.com/gpumem"),
             cores = num(doc, limits, "nvidia.com/gpucores");
        assert_true(k == GS_WORKLOAD_INTERACTIVE || k == GS_WORKLOAD_INFERENCE);
        assert_int_equal(gpus, 1);
        assert_true(mem >= 1024 && mem <= 20480 && cores >= 10 && cores <= 50);
        return 0;
    }
    assert_true(gpus >= 1 && gpus <= gpus_hi[k]);
    return gpus;
}

static void check_pod_fields(yaml_document_t *doc, yaml_node_t *root, struct scan *s, int k)
{
    yaml_node_t *md = get(doc, root, "metadata"), *ann = get(doc, md, "annotations");
    yaml_node_t *spec = get(doc, root, "spec");
    assert_string_equal(str(doc, md, "namespace"), workload_ns[k]);
    assert_true(strncmp(str(doc, get(doc, md, "labels"), "user"), "user-", 5) == 0);
    long util = num(doc, ann, "sim.gpusched.io/gpu-util");
    assert_true(util >= util_lo[k] && util <= util_hi[k]);
    /* HPO trials spread over nodes, one card a member too (a 4 x 1 gang once carried no tier
     * and so took its tenant's nvlink). */
    if (k == GS_WORKLOAD_HPO)
        assert_string_equal(str(doc, ann, "gpusched.io/topology"), "node");
    assert_true(seconds(str(doc, ann, "sim.gpusched.io/duration")) >= 60);
    const char *pc = str(doc, spec, "priorityClassName");
    int known = 0;
    for (int i = 0; i < s->nprio; i++)
        known |= strcmp(pc, s->prio[i]) == 0;
    assert_true(known);
    assert_string_equal(pc, k == GS_WORKLOAD_HPO         ? "low"
                            : k == GS_WORKLOAD_INFERENCE ? "high"
                                                         : pc);
    yaml_node_t *ctr = get(doc, spec, "containers");
    assert_int_equal(seq_len(ctr), 1);
    long gpus =
        check_limits(doc, get(doc, get(doc, seq_at(doc, ctr, 0), "resources"), "limits"), k);
    if (s->group[0])
        s->group_gpus += gpus;
    s->names[s->nnames++] = strdup(str(doc, md, "name"));
}

static void scan_pod(yaml_document_t *doc, yaml_node_t *root, struct scan *s)
{
    yaml_node_t *md = get(doc, root, "metadata"), *ann = get(doc, md, "annotations");
    int k = index_of(workloads, GS_WORKLOAD_KINDS,
                     str(doc, get(doc, md, "labels"), "gpusched.io/workload"));
    long arrival = seconds(str(doc, ann, "sim.gpusched.io/arrival"));
    assert_true(arrival >= s->last_arrival && arrival < s->horizon_s);
    s->last_arrival = arrival;
    s->by_workload[k]++;
    s->arrivals_by_hour[k][arrival / 3600 % 24]++;
    yaml_node_t *every = get(doc, ann, "gpusched.io/checkpoint-interval");
    s->saving_30m[k] += every && strcmp((char *)every->data.scalar.value, "30m") == 0;
    yaml_node_t *grp = get(doc, ann, "scheduling.k8s.io/group-name");
    if (grp) {
        assert_string_equal((char *)grp->data.scalar.value, s->group);
        assert_true(s->group_workload < 0 || s->group_workload == k);
        assert_true(k == GS_WORKLOAD_TRAINING || k == GS_WORKLOAD_HPO);
        s->group_workload = k;
        s->group_seen++;
    } else {
        close_group(s);
    }
    if (s->full)
        check_pod_fields(doc, root, s, k);
}

/* ---- one pass over a stream ------------------------------------------------------------------ */

static void scan_doc(yaml_document_t *doc, yaml_node_t *root, struct scan *s, size_t *dedicated)
{
    int k = index_of(kind_names, NKIND, str(doc, root, "kind"));
    /* The order of SCENARIO.md's sections: simulation, cluster, policy, workloads. */
    static const int first_doc_of[] = {[K_SIM] = 0, [K_CLUSTER] = 1};
    if (k <= K_CLUSTER)
        assert_int_equal(s->docs, first_doc_of[k]);
    if (k >= K_CONFIGMAP && k <= K_PRIO)
        assert_int_equal(s->kind[K_POD] + s->kind[K_PODGROUP], 0);
    s->kind[k]++;
    s->docs++;
    if (k == K_SIM) {
        s->horizon_s = seconds(str(doc, get(doc, root, "spec"), "horizon"));
        assert_int_equal(seq_len(get(doc, get(doc, root, "spec"), "compare")), 3);
    } else if (k == K_CLUSTER) {
        scan_cluster(doc, root, s);
    } else if (k == K_QUOTA) {
        scan_quota(doc, root, s, dedicated);
    } else if (k == K_PRIO && s->nprio < 8) {
        snprintf(s->prio[s->nprio++], 32, "%s", str(doc, get(doc, root, "metadata"), "name"));
        num(doc, root, "value");
    } else if (k == K_PODGROUP) {
        scan_podgroup(doc, root, s);
    } else if (k == K_POD) {
        scan_pod(doc, root, s);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read every document of @f; @max_pods bounds the names kept for the uniqueness check. */
static void scan_file(FILE *f, struct scan *s, size_t max_pods)
{
    yaml_parser_t parser;
    size_t dedicated[GS_MODEL_MAX] = {0};
    assert_true(yaml_parser_initialize(&parser));
    yaml_parser_set_input_file(&parser, f);
    if (s->full)
        assert_non_null(s->names = calloc(max_pods + 1, sizeof(char *)));
    for (;;) {
        yaml_document_t doc;
        if (!yaml_parser_load(&parser, &doc))
            fail_msg("YAML error at line %zu: %s", parser.problem_mark.line + 1, parser.problem);
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        if (root)
            scan_doc(&doc, root, s, dedicated);
        yaml_document_delete(&doc);
        if (!root)
            break;
        if (s->full)
            assert_true(s->nnames <= max_pods);
    }
    close_group(s);
    yaml_parser_delete(&parser);
    if (!s->full)
        return;
    qsort(s->names, s->nnames, sizeof(char *), cmp_str);
    for (size_t i = 1; i < s->nnames; i++)
        if (strcmp(s->names[i - 1], s->names[i]) == 0)
            fail_msg("pod name %s twice", s->names[i]);
    for (size_t i = 0; i < s->nnames; i++)
        free(s->names[i]);
    free(s->names);
    s->names = NULL;
}

/* Generate @p into memory. Return: the bytes (free()), their count in *@len. */
static char *generate(const struct gs_tenantday_params *p, size_t *len,
                      struct gs_tenantday_stats *st)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    struct gs_diag d;
    gs_diag_init(&d);
    int rc = gs_tenantday_write(f, p, st, &d);
    if (rc != 0)
        fail_msg("gs_tenantday_write: %d %s", rc, d.msg);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void scan_params(const struct gs_tenantday_params *p, struct scan *s,
                        struct gs_tenantday_stats *st)
{
    size_t len;
    char *buf = generate(p, &len, st);
    FILE *f = fmemopen(buf, len, "r");
    assert_non_null(f);
    s->full = 1;
    s->elastic = p->elastic;
    scan_file(f, s, p->pods);
    fclose(f);
    free(buf);
}

/* ---- tests ----------------------------------------------------------------------------------- */

static size_t hours_sum(const size_t *by_hour, int from, int to)
{
    size_t n = 0;
    for (int h = from; h <= to; h++)
        n += by_hour[h];
    return n;
}

/* Training comes at night, experiments by day, inference all day; the day asks for about 1.5x
 * the GPU time and the busiest hours far more than the cluster has. */
static void check_shapes_and_load(const struct scan *s, const struct gs_tenantday_stats *st)
{
    const size_t *train = s->arrivals_by_hour[GS_WORKLOAD_TRAINING];
    const size_t *exp = s->arrivals_by_hour[GS_WORKLOAD_INTERACTIVE];
    const size_t *inf = s->arrivals_by_hour[GS_WORKLOAD_INFERENCE];
    assert_true(hours_sum(train, 0, 5) > 3 * hours_sum(train, 9, 14));
    assert_true(hours_sum(exp, 9, 14) > 5 * hours_sum(exp, 0, 5));
    assert_true(hours_sum(inf, 9, 14) > 0 && hours_sum(inf, 1, 6) > 0);
    assert_true(st->offered_permille >= 1400 && st->offered_permille <= 1600);
    uint32_t peak = 0;
    for (int h = 0; h < 24; h++)
        peak = st->hourly_permille[h] > peak ? st->hourly_permille[h] : peak;
    assert_true(peak >= 1500);
    assert_true(st->hourly_permille[0] >= 1000); /* the overnight queue fills the first hour */
}

static void test_defaults_read_back(void **state)
{
    (void)state;
    struct gs_tenantday_params p;
    struct gs_tenantday_stats st;
    struct scan s = {0};
    gs_tenantday_defaults(&p);
    scan_params(&p, &s, &st);
    assert_int_equal(s.kind[K_SIM], 1);
    assert_int_equal(s.kind[K_CLUSTER], 1);
    assert_int_equal(s.kind[K_CONFIGMAP], 2); /* topology-gpu-policy, kubeflow-gpu-profiles */
    assert_int_equal(s.kind[K_QUOTA], 3);
    assert_int_equal(s.kind[K_QUEUE], 4);
    assert_int_equal(s.kind[K_PRIO], 4);
    assert_int_equal(s.kind[K_POD], 2000);
    assert_int_equal(s.nodes, 64);
    assert_int_equal(s.gpus, 480);
    assert_int_equal(s.horizon_s, 24 * 3600);
    /* The stats describe what was written. */
    assert_int_equal(st.pods, 2000);
    assert_int_equal(st.nodes, 64);
    assert_int_equal(st.gpus, 480);
    assert_int_equal(st.podgroups, s.kind[K_PODGROUP]);
    assert_true(s.kind[K_PODGROUP] > 50);
    for (int k = 0; k < GS_WORKLOAD_KINDS; k++) {
        assert_int_equal(st.pods_by_kind[k], s.by_workload[k]);
        assert_true(s.by_workload[k] >= 300);
    }
    /* By default training and HPO save their state every 30 min (Check-N-Run's default); the
     * interactive experiments and inference replicas declare nothing. */
    assert_int_equal(s.saving_30m[GS_WORKLOAD_TRAINING], s.by_workload[GS_WORKLOAD_TRAINING]);
    assert_int_equal(s.saving_30m[GS_WORKLOAD_HPO], s.by_workload[GS_WORKLOAD_HPO]);
    assert_int_equal(s.saving_30m[GS_WORKLOAD_INTERACTIVE] + s.saving_30m[GS_WORKLOAD_INFERENCE],
                     0);
    check_shapes_and_load(&s, &st);
}

static void test_same_params_same_bytes(void **state)
{
    (void)state;
    struct gs_tenantday_params p;
    gs_tenantday_defaults(&p);
    size_t la, lb, lc;
    char *a = generate(&p, &la, NULL), *b = generate(&p, &lb, NULL);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    p.seed = 43;
    char *c = generate(&p, &lc, NULL);
    assert_false(la == lc && memcmp(a, c, la) == 0);
    free(a);
    free(b);
    free(c);
}

/* Run the scenario @p generates through the full way; *@n_mig, *@n_sliced: pods of tenant @ns
 * that got a MIG instance, and time-slice or vGPU slices (not whole, not MIG). */
static void run_sharing(const struct gs_tenantday_params *p, const char *ns, int *n_mig,
                        int *n_sliced)
{
    size_t len;
    char *text = generate(p, &len, NULL), path[] = "/tmp/gs_test_tenantday_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
    struct gs_scenario *s;
    struct gs_tsim *t;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_scenario_new(&s), 0);
    int rc = gs_scenario_load(s, path, &d);
    unlink(path);
    if (!rc)
        rc = gs_scenario_resolve(s, &d);
    if (!rc)
        rc = gs_tsim_run(s, GS_WAY_FULL, &t, &d);
    if (rc)
        fail_msg("%d %s", rc, d.msg);
    *n_mig = *n_sliced = 0;
    for (size_t i = 0; i < gs_tsim_pod_count(t); i++) {
        const struct gs_tsim_pod *q = gs_tsim_pod(t, i);
        assert_int_not_equal(q->state, GS_POD_REJECTED);
        if (strcmp(q->ns, ns) != 0 || q->start_us < 0)
            continue;
        *n_mig += q->mig != NULL;
        *n_sliced += !q->whole && !q->mig;
    }
    gs_tsim_free(t);
    gs_scenario_free(s);
    free(text);
}

/* --sharing E/I: experiments (tenant-b) and inference (tenant-c) share cards as each is told. */
static void test_sharing_ways(void **state)
{
    (void)state;
    struct gs_tenantday_params p;
    gs_tenantday_defaults(&p);
    p.nodes = 16;
    p.pods = 300;
    int mig, sliced;
    p.sharing[0] = GS_TENANTDAY_MIG;
    p.sharing[1] = GS_TENANTDAY_SLICES;
    run_sharing(&p, "tenant-b", &mig, &sliced);
    assert_true(mig > 0);
    assert_int_equal(sliced, 0);
    run_sharing(&p, "tenant-c", &mig, &sliced);
    assert_int_equal(mig, 0);
    assert_true(sliced > 0);
    p.sharing[0] = p.sharing[1] = GS_TENANTDAY_TIMESLICE;
    run_sharing(&p, "tenant-c", &mig, &sliced);
    assert_int_equal(mig, 0);
    assert_true(sliced > 0);
    /* The same jobs whatever the sharing: only the GPU limits of the fractional pods differ. */
    struct gs_tenantday_stats a, b;
    size_t la, lb;
    free(generate(&p, &la, &a));
    p.sharing[0] = p.sharing[1] = GS_TENANTDAY_SLICES;
    free(generate(&p, &lb, &b));
    assert_memory_equal(&a, &b, sizeof(a));
}

/* Small, odd and long runs: the exact pod and node counts, arrivals inside the horizon. */
static void test_edge_sizes(void **state)
{
    (void)state;
    static const struct gs_tenantday_params cases[] = {
        {.nodes = 1, .pods = 1, .hours = 24, .seed = 1},
        {.nodes = 3, .pods = 7, .hours = 1, .seed = 2},
        {.nodes = 17, .pods = 333, .hours = 5, .seed = 3},
        {.nodes = 64, .pods = 2000, .hours = GS_TENANTDAY_HOURS_MAX, .seed = 4},
        {.nodes = 2, .pods = 3000, .hours = 24, .seed = 5}, /* overloaded: a warning only */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct scan s = {0};
        struct gs_tenantday_stats st;
        scan_params(&cases[i], &s, &st);
        assert_int_equal(s.kind[K_POD], cases[i].pods);
        assert_int_equal(s.nodes, cases[i].nodes);
        assert_int_equal(s.horizon_s, cases[i].hours * 3600);
    }
}

static void keep_warning(void *ud, const char *msg)
{
    snprintf(ud, GS_DIAG_MSG_MAX, "%s", msg);
}

/* The day of @p: its load (per mille) and the pod count its warning suggests (0: none). */
static char warning[GS_DIAG_MSG_MAX];

static uint32_t load_of(const struct gs_tenantday_params *p, uint32_t *suggested)
{
    warning[0] = '\0';
    char *buf = NULL;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    struct gs_diag d;
    gs_diag_init(&d);
    d.warn = keep_warning;
    d.warn_ud = warning;
    struct gs_tenantday_stats st;
    assert_int_equal(gs_tenantday_write(f, p, &st, &d), 0);
    fclose(f);
    free(buf);
    const char *about = strstr(warning, "; about ");
    *suggested = about ? (uint32_t)strtoul(about + 8, NULL, 10) : 0;
    return st.offered_permille;
}

/* Too few pods for the cluster, or far too many: the warning's pod count loads it as intended
 * (about 1.5x, within 5 %) with no warning; the load is not proportional to the count. */
static void test_load_warning_count(void **state)
{
    (void)state;
    struct gs_tenantday_params p;
    gs_tenantday_defaults(&p);
    static const uint32_t nodes[] = {64, 64, 2}, pods[] = {10, 400, 3000};
    for (size_t i = 0; i < 3; i++) {
        p.nodes = nodes[i];
        p.pods = pods[i];
        uint32_t fit, again;
        uint32_t o = load_of(&p, &fit);
        assert_true(o < 1000 || o > 6000);
        assert_true(fit > 0);
        p.pods = fit;
        o = load_of(&p, &again);
        assert_int_equal(again, 0);
        assert_in_range(o, 1425, 1575);
    }
    /* tiny days, whose bisection once stalled between two odd counts: a count, in time */
    static const uint32_t tiny[][3] = {{2, 7, 24}, {1, 5, 1}, {2, 3, 1}, {3, 3, 24}, {3, 6, 24}};
    for (size_t i = 0; i < sizeof(tiny) / sizeof(tiny[0]); i++) {
        p.nodes = tiny[i][0];
        p.pods = tiny[i][1];
        p.hours = tiny[i][2];
        uint32_t fit;
        load_of(&p, &fit);
        assert_true(fit > tiny[i][1]);
    }
    p.hours = 24;
    p.nodes = GS_TENANTDAY_NODES_MAX; /* no count --pods takes loads it: said, not a count */
    p.pods = 1;
    uint32_t fit;
    load_of(&p, &fit);
    assert_int_equal(fit, 0);
    assert_non_null(strstr(warning, "even 1000000 pod(s), the most --pods takes, would not"));
}

static void test_bad_params(void **state)
{
    (void)state;
    static const struct {
        struct gs_tenantday_params p;
        const char *field;
    } bad[] = {
        {{.nodes = 0, .pods = 10, .hours = 24}, "nodes"},
        {{.nodes = GS_TENANTDAY_NODES_MAX + 1, .pods = 10, .hours = 24}, "nodes"},
        {{.nodes = 4, .pods = 0, .hours = 24}, "pods"},
        {{.nodes = 4, .pods = GS_TENANTDAY_PODS_MAX + 1, .hours = 24}, "pods"},
        {{.nodes = 4, .pods = 10, .hours = 0}, "hours"},
        {{.nodes = 4, .pods = 10, .hours = GS_TENANTDAY_HOURS_MAX + 1}, "hours"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct gs_diag d;
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        gs_diag_init(&d);
        assert_int_equal(gs_tenantday_write(f, &bad[i].p, NULL, &d), -EINVAL);
        fclose(f);
        assert_int_equal(len, 0); /* nothing written */
        assert_non_null(strstr(d.msg, bad[i].field));
        free(buf);
    }
    struct gs_tenantday_params p;
    struct gs_diag d;
    gs_tenantday_defaults(&p);
    FILE *full = fopen("/dev/full", "w");
    if (full) {
        gs_diag_init(&d);
        assert_int_equal(gs_tenantday_write(full, &p, NULL, &d), -EIO);
        assert_non_null(strstr(d.msg, "writing"));
        fclose(full);
    }
}

/* The benchmark's size: 5,000 nodes and 100,000 pods are written and read back (counts only). */
static void test_benchmark_size(void **state)
{
    (void)state;
    struct gs_tenantday_params p = {.nodes = 5000, .pods = 100000, .hours = 24, .seed = 42};
    struct gs_tenantday_stats st;
    struct gs_diag d;
    FILE *f = tmpfile();
    assert_non_null(f);
    gs_diag_init(&d);
    assert_int_equal(gs_tenantday_write(f, &p, &st, &d), 0);
    rewind(f);
    struct scan s = {0};
    scan_file(f, &s, 0);
    fclose(f);
    assert_int_equal(s.kind[K_POD], 100000);
    assert_int_equal(s.nodes, 5000);
    assert_int_equal(st.gpus, s.gpus);
    assert_int_equal(st.podgroups, s.kind[K_PODGROUP]);
}

/* ---- the command ----------------------------------------------------------------------------- */

/* run_cmd() - `gpusched generate ARGS` (@args NULL-terminated). */
static void run_cmd(const char *const *args, struct t_run *r)
{
    const char *bin = getenv("GPUSCHED_BIN");
    assert_non_null(bin);
    const char *argv[16] = {bin, "generate"};
    int n = 2;
    while (*args && n < 15)
        argv[n++] = *args++;
    argv[n] = NULL;
    t_run(argv, r);
}

static void test_cli(void **state)
{
    (void)state;
    struct t_run r;
    char path[] = "/tmp/gs_td_scenario.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    run_cmd((const char *const[]){"tenant-day", "--nodes", "8", "--pods", "50", "--seed", "7", "-o",
                                  path, NULL},
            &r);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "50 pods"));
    t_run_free(&r);
    /* The file holds what the library writes for the same parameters. */
    struct gs_tenantday_params p = {
        .nodes = 8, .pods = 50, .hours = 24, .seed = 7, .checkpoint_s = GS_TENANTDAY_CHECKPOINT_S};
    for (int none = 0; none < 2; none++) { /* and --checkpoint none: no pod saves its state */
        if (none) {
            run_cmd((const char *const[]){"tenant-day", "--nodes", "8", "--pods", "50", "--seed",
                                          "7", "--checkpoint", "none", "--quiet", "-o", path, NULL},
                    &r);
            assert_int_equal(r.status, 0);
            t_run_free(&r);
            p.checkpoint_s = 0;
        }
        size_t len, got_len;
        char *want = generate(&p, &len, NULL), *got = t_slurp(path, &got_len);
        assert_non_null(got);
        assert_int_equal(got_len, len);
        assert_memory_equal(got, want, len);
        assert_int_equal(strstr(got, "checkpoint-interval") == NULL, none);
        assert_int_equal(strstr(got, "#   --checkpoint none\n") != NULL, none);
        free(got);
        free(want);
    }
    unlink(path);
    static const char *const bad[][4] = {
        {"tenant-day", "--nodes", "0", NULL},       {"tenant-day", "--pods", "1e3", NULL},
        {"tenant-day", "--hours", "169", NULL},     {"tenant-day", "--seed", "-1", NULL},
        {"tenant-day", "--frobnicate", NULL},       {"tenant-day", "stray", NULL},
        {"tenant-day", "--checkpoint", "0s", NULL}, {"weekend", NULL},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        run_cmd(bad[i], &r);
        assert_int_equal(r.status, 2);
        assert_string_equal(r.out, "");
        assert_non_null(strstr(r.err, "gpusched generate: "));
        assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1); /* one line */
        t_run_free(&r);
    }
}

/* Elastic inference: with a traffic curve ten times higher by day, the replicas that served all
 * day come and go with it: the night's inference demand falls, the morning's rise starts many
 * replicas, the pod count stays exact, and the same curve gives the same bytes. */
static void test_elastic_inference(void **state)
{
    (void)state;
    int64_t traffic[24];
    for (int h = 0; h < 24; h++)
        traffic[h] = h >= 9 && h < 21 ? 1000 : 100;
    struct gs_tenantday_params p;
    struct gs_tenantday_stats fixed, el;
    struct scan s = {0}, f = {0};
    gs_tenantday_defaults(&p);
    scan_params(&p, &f, &fixed);
    p.traffic = traffic;
    p.ntraffic = 24;
    scan_params(&p, &s, &el);
    assert_int_equal(s.kind[K_POD], 2000);
    assert_int_equal(el.pods_by_kind[GS_WORKLOAD_INFERENCE], 400);
    const size_t *inf = s.arrivals_by_hour[GS_WORKLOAD_INFERENCE];
    assert_true(inf[9] > 100); /* the morning's rise starts the day's replicas */
    assert_true(inf[9] > 5 * f.arrivals_by_hour[GS_WORKLOAD_INFERENCE][9]);
    uint32_t night_el = 0, night_fixed = 0;
    for (int h = 2; h < 7; h++) { /* the nights hold fewer replicas than the fixed count */
        night_el += el.hourly_permille[h];
        night_fixed += fixed.hourly_permille[h];
    }
    assert_true(night_el < night_fixed);
    size_t n1, n2;
    char *a = generate(&p, &n1, NULL), *b = generate(&p, &n2, NULL);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1);
    free(a);
    free(b);
    struct gs_diag d;
    gs_diag_init(&d);
    memset(traffic, 0, sizeof(traffic));
    assert_int_equal(gs_tenantday_check(&p, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "none above 0"));
    traffic[3] = -1;
    assert_int_equal(gs_tenantday_check(&p, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "traffic: hour 3 is -1"));
    /* too long a day is said as such, not as "none above 0" (its hours were above 0) */
    int64_t week[GS_TENANTDAY_HOURS_MAX + 1];
    for (size_t h = 0; h < sizeof(week) / sizeof(week[0]); h++)
        week[h] = 5;
    p.traffic = week;
    p.ntraffic = GS_TENANTDAY_HOURS_MAX + 1;
    assert_int_equal(gs_tenantday_check(&p, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "traffic: 169 hours: want 1..168"));
}

/* --elastic: gangs from the low end of their kind's GPU range (every PodGroup's minMember is
 * checked by close_group()), their pods saving state every 30 min, and the replicas following
 * the day's traffic: fewer at night than the fixed count, the pod count exact. */
static void test_elastic_day(void **state)
{
    (void)state;
    struct gs_tenantday_params p;
    struct gs_tenantday_stats fixed, el;
    struct scan s = {0}, f = {0};
    gs_tenantday_defaults(&p);
    scan_params(&p, &f, &fixed);
    p.elastic = 1;
    scan_params(&p, &s, &el);
    assert_int_equal(s.kind[K_POD], 2000);
    assert_true(s.kind[K_PODGROUP] > 50);
    uint32_t night_el = 0, night_fixed = 0;
    for (int h = 2; h < 6; h++) {
        night_el += el.hourly_permille[h];
        night_fixed += fixed.hourly_permille[h];
    }
    assert_true(night_el < night_fixed);
    size_t n;
    char *text = generate(&p, &n, NULL);
    assert_non_null(strstr(text, "#   --elastic\n"));
    assert_non_null(strstr(text, "gpusched.io/checkpoint-interval: \"30m\""));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_read_back),
        cmocka_unit_test(test_elastic_inference),
        cmocka_unit_test(test_elastic_day),

        cmocka_unit_test(test_same_params_same_bytes),
        cmocka_unit_test(test_sharing_ways),
        cmocka_unit_test(test_edge_sizes),
        cmocka_unit_test(test_load_warning_count),
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_benchmark_size),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
