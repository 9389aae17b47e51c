/*
 * Tests of the KubeSchedulerConfiguration loader (gpusched/config.h). Run from the source root, so
 * the seed file is found at a fixed relative path; every other input is written to /tmp.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpusched/config.h"
#include "gpusched/diag.h"
#include "gpusched/sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEED "tests/data/kube-scheduler-config.yaml"
#define HDR  "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

#include "diag_capture.h"

/* write_tmp() - @len bytes of @text into a new file under /tmp; its name into @path. */
static void write_tmp(const char *text, size_t len, char path[32])
{
    snprintf(path, 32, "/tmp/gs_test_config_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
}

/* load_text() - load @text (NUL-terminated) through a temporary file, then remove the file. */
static int load_text(const char *text, const char *name, struct gs_profile **out, struct gs_diag *d)
{
    char path[32];
    write_tmp(text, strlen(text), path);
    int rc = gs_config_load_kubesched(path, name, out, d);
    unlink(path);
    return rc;
}

/* Any non-NULL pointer: a failed load must leave *out as it was. */
static char sentinel;
#define UNTOUCHED ((struct gs_profile *)(void *)&sentinel)

/* expect_einval() - @text fails with -EINVAL, *out untouched, message holding each of @needles. */
static void expect_einval(const char *text, const char *name, const char *const *needles)
{
    struct gs_diag d;
    struct warns w;
    struct gs_profile *p = UNTOUCHED;
    diag_with(&d, &w);
    int rc = load_text(text, name, &p, &d);
    if (rc != -EINVAL)
        print_error("rc %d, msg: %s\n", rc, d.msg);
    assert_int_equal(rc, -EINVAL);
    assert_ptr_equal(p, UNTOUCHED);
    assert_has(d.msg, "/tmp/gs_test_config_");
    for (int i = 0; needles[i]; i++)
        assert_has(d.msg, needles[i]);
}

#define EXPECT_EINVAL(text, name, ...)                                                             \
    expect_einval(text, name, (const char *const[]){__VA_ARGS__, NULL})

/* load_ok() - @text loads; the profile is returned and @w holds the warnings. */
static struct gs_profile *load_ok(const char *text, const char *name, struct warns *w)
{
    struct gs_diag d;
    struct gs_profile *p = NULL;
    diag_with(&d, w);
    int rc = load_text(text, name, &p, &d);
    if (rc)
        print_error("rc %d, msg: %s\n", rc, d.msg);
    assert_int_equal(rc, 0);
    assert_non_null(p);
    assert_int_equal(d.nwarn, (unsigned)w->n);
    return p;
}

/* plugin_at() - the name of the @i-th plugin at @ep, with its weight into @weight. */
static const char *plugin_at(const struct gs_profile *p, enum gs_ext_point ep, int i, int *weight)
{
    int id = gs_profile_at(p, ep, i, weight);
    assert_true(id >= 0);
    return gs_plugin_name(id);
}

static void test_seed_file_loads(void **state)
{
    static const struct {
        const char *name;
        const char *where; /* file:line: of the name in the seed file */
        const char *why;
    } expect[] = {
        {"TopologyFilter", "kube-scheduler-config.yaml:16:", "not built"},
        {"GangScheduling", "kube-scheduler-config.yaml:19:", "not built"},
        /* the multi-tenant scheduler's scores: not the trace replay's */
        {"TopologyScore", "kube-scheduler-config.yaml:24:", "not the trace replay's; ignored"},
        {"FairnessScore", "kube-scheduler-config.yaml:26:", "not the trace replay's; ignored"},
    };
    struct gs_diag d;
    struct warns w;
    struct gs_profile *p = NULL;
    int weight = 0;
    (void)state;
    diag_with(&d, &w);
    assert_int_equal(gs_config_load_kubesched(SEED, NULL, &p, &d), 0);
    assert_string_equal(gs_profile_name(p), "gpu-scheduler");
    assert_int_equal(gs_profile_count(p, GS_EP_QUEUE_SORT), 1);
    assert_string_equal(plugin_at(p, GS_EP_QUEUE_SORT, 0, NULL), "GPUQueueSort");
    assert_int_equal(gs_profile_count(p, GS_EP_PRE_FILTER), 1);
    assert_string_equal(plugin_at(p, GS_EP_PRE_FILTER, 0, NULL), "GPUAvailability");
    assert_int_equal(gs_profile_count(p, GS_EP_FILTER), 1);
    assert_string_equal(plugin_at(p, GS_EP_FILTER, 0, NULL), "NodeGPUFilter");
    assert_int_equal(gs_profile_count(p, GS_EP_POST_FILTER), 0);
    /* the defaults stay, as kube-scheduler merges them; the file's plugin is appended */
    assert_int_equal(gs_profile_count(p, GS_EP_SCORE), 4);
    assert_string_equal(plugin_at(p, GS_EP_SCORE, 0, &weight), "FGD");
    assert_int_equal(weight, 130);
    assert_string_equal(plugin_at(p, GS_EP_SCORE, 3, &weight), "GPUBinPacking");
    assert_int_equal(weight, 8);
    assert_int_equal(gs_profile_count(p, GS_EP_RESERVE), 1); /* the default NodeGPUReserve */
    assert_string_equal(plugin_at(p, GS_EP_RESERVE, 0, NULL), "NodeGPUReserve");
    assert_int_equal(d.nwarn, 4);
    assert_int_equal(w.n, 4);
    for (int i = 0; i < 4; i++) {
        assert_has(w.msg[i], expect[i].where);
        assert_has(w.msg[i], expect[i].name);
        assert_has(w.msg[i], expect[i].why);
    }
    gs_profile_free(p);

    /* By name, the same profile. */
    diag_with(&d, &w);
    assert_int_equal(gs_config_load_kubesched(SEED, "gpu-scheduler", &p, &d), 0);
    assert_string_equal(gs_profile_name(p), "gpu-scheduler");
    assert_int_equal(w.n, 4);
    gs_profile_free(p);
}

/* The v1 extender configuration docs/kubernetes.md gives kube-scheduler 1.25 and later
 * (deploy/kube-scheduler-extender.yaml; the end-to-end tests run its v1beta1 twin) loads without
 * a word: its profile is default-scheduler with gpusched's default plugins (its own changes are
 * to kube-scheduler's plugins, and its extender stanza is kube-scheduler's to follow). */
static void test_deploy_extender_v1(void **state)
{
    struct gs_profile *p = NULL, *def = NULL;
    struct gs_diag d;
    struct warns w;
    (void)state;
    diag_with(&d, &w);
    if (gs_config_load_kubesched("deploy/kube-scheduler-extender.yaml", NULL, &p, &d))
        fail_msg("%s", d.msg);
    assert_int_equal(w.n, 0);
    assert_string_equal(gs_profile_name(p), "default-scheduler");
    assert_int_equal(gs_profile_new_default("default-scheduler", &def, &d), 0);
    for (int ep = 0; ep < GS_EP_COUNT; ep++) {
        assert_int_equal(gs_profile_count(p, ep), gs_profile_count(def, ep));
        for (int i = 0; i < gs_profile_count(p, ep); i++) {
            int w0 = 0, w1 = 0;
            assert_int_equal(gs_profile_at(p, ep, i, &w0), gs_profile_at(def, ep, i, &w1));
            assert_int_equal(w0, w1);
        }
    }
    assert_int_equal(gs_profile_count(p, GS_EP_SCORE), 3); /* FGD, StrandedShare, ExpectedWaste */
    gs_profile_free(p);
    gs_profile_free(def);
}

static void test_misspelt_top_level_key(void **state)
{
    (void)state;
    EXPECT_EINVAL(HDR "profils:\n  - schedulerName: a\n", NULL, ":3:1:", "\"profils\"",
                  "KubeSchedulerConfiguration", "did you mean \"profiles\"");
    EXPECT_EINVAL(HDR "paralelism: 16\n", NULL, ":3:1:", "did you mean \"parallelism\"");
    /* Too far from every known key: no suggestion. */
    struct gs_diag d;
    struct gs_profile *p = UNTOUCHED;
    gs_diag_init(&d);
    assert_int_equal(load_text(HDR "frobnicate: 1\n", NULL, &p, &d), -EINVAL);
    assert_has(d.msg, ":3:1: unknown field \"frobnicate\"");
    assert_null(strstr(d.msg, "did you mean"));
}

static void test_misspelt_nested_keys(void **state)
{
    (void)state;
    EXPECT_EINVAL(HDR "profiles:\n"
                      "  - schedulerName: a\n"
                      "    plugins:\n"
                      "      scroe:\n"
                      "        enabled:\n"
                      "          - name: FGD\n",
                  NULL, ":6:7:", "\"scroe\"", "profiles[0].plugins", "did you mean \"score\"");
    EXPECT_EINVAL(HDR "profiles:\n"
                      "  - schedulerName: a\n"
                      "    plugin:\n"
                      "      score: {}\n",
                  NULL, ":5:5:", "did you mean \"plugins\"");
    EXPECT_EINVAL(HDR "profiles:\n"
                      "  - plugins:\n"
                      "      score:\n"
                      "        enable:\n"
                      "          - name: FGD\n",
                  NULL, ":6:9:", "did you mean \"enabled\"");
    EXPECT_EINVAL(HDR "profiles:\n"
                      "  - plugins:\n"
                      "      score:\n"
                      "        enabled:\n"
                      "          - nmae: FGD\n",
                  NULL, ":7:13:", "did you mean \"name\"");
}

static void test_bad_weights(void **state)
{
    (void)state;
    static const char *const bad[] = {"0", "abc", "-3", "501", "2.5", "\"8\"", "[8]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[512];
        snprintf(text, sizeof(text),
                 HDR "profiles:\n"
                     "  - plugins:\n"
                     "      score:\n"
                     "        enabled:\n"
                     "          - name: FGD\n"
                     "            weight: %s\n",
                 bad[i]);
        EXPECT_EINVAL(text, NULL, ":8:21:", "weight", "1..500");
    }
    /* The top of the range is accepted. */
    struct warns w;
    int weight = 0;
    struct gs_profile *p = load_ok(HDR "profiles:\n"
                                       "  - plugins:\n"
                                       "      score:\n"
                                       "        enabled:\n"
                                       "          - name: FGD\n"
                                       "            weight: 500\n",
                                   NULL, &w);
    assert_string_equal(plugin_at(p, GS_EP_SCORE, 0, &weight), "FGD");
    assert_int_equal(weight, GS_WEIGHT_MAX);
    gs_profile_free(p);
}

static void test_weight_outside_score(void **state)
{
    (void)state;
    /* kube-scheduler ignores the value away from score, but it must still be an integer. */
    struct warns w;
    int weight = 0;
    struct gs_profile *p = load_ok(HDR "profiles:\n"
                                       "  - plugins:\n"
                                       "      filter:\n"
                                       "        enabled:\n"
                                       "          - name: NodeGPUFilter\n"
                                       "            weight: 0\n",
                                   NULL, &w);
    assert_string_equal(plugin_at(p, GS_EP_FILTER, 0, &weight), "NodeGPUFilter");
    assert_int_equal(weight, 1);
    gs_profile_free(p);
    EXPECT_EINVAL(HDR "profiles:\n"
                      "  - plugins:\n"
                      "      filter:\n"
                      "        enabled:\n"
                      "          - name: NodeGPUFilter\n"
                      "            weight: abc\n",
                  NULL, ":8:21:", "must be an integer");
}

static void test_plugin_at_wrong_point(void **state)
{
    (void)state;
    EXPECT_EINVAL(HDR "profiles:\n"
                      "  - plugins:\n"
                      "      filter:\n"
                      "        enabled:\n"
                      "          - name: NodeGPUFilter\n"
                      "          - name: FGD\n",
                  NULL, ":8:19:", "\"FGD\"", "filter", "score");
    EXPECT_EINVAL(HDR "profiles:\n"
                      "  - plugins:\n"
                      "      postFilter:\n"
                      "        enabled:\n"
                      "          - name: NodeGPUReserve\n",
                  NULL, ":7:19:", "NodeGPUReserve", "postFilter");
    /* a misspelt plugin used to be warned about and dropped, the run going on without it */
    EXPECT_EINVAL(HDR "profiles:\n"
                      "  - plugins:\n"
                      "      score:\n"
                      "        enabled:\n"
                      "          - name: FGDD\n",
                  NULL, ":7:19:", "\"FGDD\"", "not built", "did you mean \"FGD\"?");
}

static void test_disabled_star_then_enabled(void **state)
{
    (void)state;
    struct warns w;
    int weight = 0;
    /* enabled is written first: disabled still applies first, so it removes nothing listed. */
    struct gs_profile *p = load_ok(HDR "profiles:\n"
                                       "  - plugins:\n"
                                       "      score:\n"
                                       "        enabled:\n"
                                       "          - name: FGD\n"
                                       "            weight: 3\n"
                                       "          - name: BestFit\n"
                                       "        disabled:\n"
                                       "          - name: \"*\"\n"
                                       "      filter:\n"
                                       "        disabled:\n"
                                       "          - name: NodeGPUFilter\n"
                                       "          - name: NotBuiltAnywhere\n"
                                       "        enabled:\n"
                                       "          - name: NodeGPUFilter\n",
                                   NULL, &w);
    assert_int_equal(gs_profile_count(p, GS_EP_SCORE), 2);
    assert_string_equal(plugin_at(p, GS_EP_SCORE, 0, &weight), "FGD");
    assert_int_equal(weight, 3);
    assert_string_equal(plugin_at(p, GS_EP_SCORE, 1, &weight), "BestFit");
    assert_int_equal(weight, 1);
    assert_int_equal(gs_profile_count(p, GS_EP_FILTER), 1);
    assert_int_equal(w.n, 0); /* disabling what is not built removes nothing: no warning */
    gs_profile_free(p);
}

/* percentageOfNodesToScore below 100 changes kube-scheduler's pick; it was taken without a word */
static void test_percentage_of_nodes_warned(void **state)
{
    (void)state;
    struct warns w;
    struct gs_profile *p = load_ok(HDR "percentageOfNodesToScore: 50\n"
                                       "profiles:\n"
                                       "  - percentageOfNodesToScore: 100\n",
                                   NULL, &w);
    assert_int_equal(w.n, 1); /* the profile's 100 is what gpusched does */
    assert_has(w.msg[0], ":3:27: percentageOfNodesToScore \"50\"");
    gs_profile_free(p);
    p = load_ok(HDR "profiles:\n"
                    "  - percentageOfNodesToScore: 10\n",
                NULL, &w);
    assert_int_equal(w.n, 1);
    assert_has(w.msg[0], ":4:31: percentageOfNodesToScore \"10\"");
    gs_profile_free(p);
    /* kube-scheduler validates it as an int32 in 0..100 */
    EXPECT_EINVAL(HDR "percentageOfNodesToScore: \"1e400\"\n", NULL,
                  ":3:27:", "percentageOfNodesToScore must be an integer in 0..100");
    EXPECT_EINVAL(HDR "profiles:\n  - percentageOfNodesToScore: 101\n", NULL,
                  ":4:31:", "percentageOfNodesToScore must be an integer in 0..100");
    /* a plugin listed twice, however far down the list */
    char text[4096] = HDR "profiles:\n  - plugins:\n      score:\n        disabled:\n";
    for (int i = 0; i < 70; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "          - name: P%d\n",
                 i == 69 ? 66 : i);
    EXPECT_EINVAL(text, NULL, "plugin \"P66\" is listed twice");
}

static void test_multi_document(void **state)
{
    (void)state;
    struct warns w;
    struct gs_profile *p = load_ok("apiVersion: v1\n"
                                   "kind: Pod\n"
                                   "metadata:\n"
                                   "  name: p\n"
                                   "spec:\n"
                                   "  containers: []\n"
                                   "---\n"
                                   "just a scalar document\n"
                                   "---\n" HDR "profiles:\n"
                                   "  - schedulerName: multi\n"
                                   "    plugins:\n"
                                   "      filter:\n"
                                   "        enabled:\n"
                                   "          - name: NodeGPUFilter\n"
                                   "---\n"
                                   "kind: ConfigMap\n",
                                   NULL, &w);
    assert_string_equal(gs_profile_name(p), "multi");
    assert_int_equal(gs_profile_count(p, GS_EP_FILTER), 1);
    assert_int_equal(w.n, 0);
    gs_profile_free(p);
}

static const char two_profiles[] = HDR "profiles:\n"
                                       "  - schedulerName: alpha\n"
                                       "    plugins:\n"
                                       "      score:\n"
                                       "        enabled:\n"
                                       "          - name: FGD\n"
                                       "          - name: TopologyScore\n"
                                       "  - schedulerName: beta\n"
                                       "    plugins:\n"
                                       "      score:\n"
                                       "        enabled:\n"
                                       "          - name: BestFit\n"
                                       "            weight: 2\n";

static void test_select_profile_by_name(void **state)
{
    (void)state;
    struct warns w;
    int weight = 0;
    struct gs_profile *p = load_ok(two_profiles, "beta", &w);
    assert_string_equal(gs_profile_name(p), "beta");
    /* FGD, StrandedShare, ExpectedWaste, BestFit */
    assert_int_equal(gs_profile_count(p, GS_EP_SCORE), 4);
    assert_string_equal(plugin_at(p, GS_EP_SCORE, 3, &weight), "BestFit");
    assert_int_equal(weight, 2);
    assert_int_equal(w.n, 0); /* alpha's TopologyScore does not concern beta */
    gs_profile_free(p);

    p = load_ok(two_profiles, NULL, &w);
    assert_string_equal(gs_profile_name(p), "alpha");
    assert_string_equal(plugin_at(p, GS_EP_SCORE, 0, NULL), "FGD");
    assert_int_equal(w.n, 1);
    assert_has(w.msg[0], ":9:19:");
    assert_has(w.msg[0], "TopologyScore");
    gs_profile_free(p);

    /* No schedulerName: kube-scheduler's default name. */
    p = load_ok(HDR "profiles:\n  - plugins: {}\n", "default-scheduler", &w);
    assert_string_equal(gs_profile_name(p), "default-scheduler");
    gs_profile_free(p);
}

static void test_unknown_or_duplicate_profile(void **state)
{
    (void)state;
    EXPECT_EINVAL(two_profiles, "gamma", "no profile", "\"gamma\"");
    EXPECT_EINVAL(HDR "profiles: []\n", NULL, "no profiles");
    EXPECT_EINVAL(HDR "profiles:\n"
                      "  - schedulerName: a\n"
                      "  - schedulerName: a\n",
                  "a", ":5:20:", "second profile", "line 4");
}

static void test_yaml_syntax_error(void **state)
{
    (void)state;
    EXPECT_EINVAL(HDR "profiles:\n"
                      "  - schedulerName: a\n"
                      "   plugins: {}\n",
                  NULL, ":5:4:", "YAML error", "did not find expected");
    EXPECT_EINVAL(HDR "  oops: here\n", NULL, ":3:7:", "mapping values are not allowed");
    EXPECT_EINVAL(HDR "profiles: *nowhere\n", NULL, ":3:11:", "undefined alias");
    EXPECT_EINVAL(HDR "profiles:\n- \xff\xfe\n", NULL, ":4:3:", "UTF-8");
}

static void test_missing_file(void **state)
{
    char path[32];
    struct gs_diag d;
    struct gs_profile *p = UNTOUCHED;
    (void)state;
    write_tmp("", 0, path);
    unlink(path); /* a name that surely does not exist */
    gs_diag_init(&d);
    assert_int_equal(gs_config_load_kubesched(path, NULL, &p, &d), -ENOENT);
    assert_ptr_equal(p, UNTOUCHED);
    assert_has(d.msg, path);
    /* A directory is bad input, not a failed read. */
    assert_int_equal(gs_config_load_kubesched("/tmp", NULL, &p, &d), -EINVAL);
    assert_has(d.msg, "/tmp: a directory");
    assert_ptr_equal(p, UNTOUCHED);
}

static void test_empty_file(void **state)
{
    (void)state;
    EXPECT_EINVAL("", NULL, "no KubeSchedulerConfiguration document");
    EXPECT_EINVAL("# only a comment\n", NULL, "no KubeSchedulerConfiguration document");
    EXPECT_EINVAL("apiVersion: v1\nkind: Pod\n", NULL, "no KubeSchedulerConfiguration document");
    /* a misspelt kind of the scheduler's group is not some other object to pass over */
    EXPECT_EINVAL(HDR "---\napiVersion: kubescheduler.config.k8s.io/v1\n"
                      "kind: KubeSchedulerConfiguraton\n",
                  NULL, ":5:7: kind \"KubeSchedulerConfiguraton\": the only document of");
}

static void test_api_versions(void **state)
{
    (void)state;
    struct warns w;
    struct gs_profile *p = load_ok("apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
                                   "kind: KubeSchedulerConfiguration\n"
                                   "profiles:\n"
                                   "  - schedulerName: old\n",
                                   NULL, &w);
    assert_string_equal(gs_profile_name(p), "old");
    assert_int_equal(w.n, 1);
    assert_has(w.msg[0], ":1:13:");
    assert_has(w.msg[0], "deprecated");
    gs_profile_free(p);
    p = load_ok("apiVersion: kubescheduler.config.k8s.io/v1beta2\n"
                "kind: KubeSchedulerConfiguration\n"
                "profiles: [{schedulerName: older}]\n",
                NULL, &w);
    assert_int_equal(w.n, 1);
    gs_profile_free(p);
    EXPECT_EINVAL("apiVersion: kubescheduler.config.k8s.io/v1alpha1\n"
                  "kind: KubeSchedulerConfiguration\n"
                  "profiles: [{}]\n",
                  NULL, ":1:13:", "unsupported apiVersion");
    EXPECT_EINVAL("kind: KubeSchedulerConfiguration\nprofiles: [{}]\n", NULL,
                  "missing field \"apiVersion\"");
    /* A misspelt kind is reported, not mistaken for some other kind of document. */
    EXPECT_EINVAL("apiVersion: kubescheduler.config.k8s.io/v1\nknd: KubeSchedulerConfiguration\n",
                  NULL, ":2:1:", "did you mean \"kind\"");
}

static void test_points_gpusched_lacks(void **state)
{
    (void)state;
    struct warns w;
    struct gs_profile *p = load_ok(HDR "profiles:\n"
                                       "  - plugins:\n"
                                       "      multiPoint:\n"
                                       "        enabled:\n"
                                       "          - name: FGD\n"
                                       "        disabled:\n"
                                       "          - name: \"*\"\n"
                                       "      permit:\n"
                                       "        enabled:\n"
                                       "          - name: Coscheduling\n"
                                       "          - name: Another\n"
                                       "      queueSort:\n"
                                       "        enabled:\n"
                                       "          - name: GPUQueueSort\n",
                                   NULL, &w);
    assert_int_equal(w.n, 4); /* disabled is walked first, and warned about as enabled is */
    assert_has(w.msg[0], ":9:19:");
    assert_has(w.msg[0], "\"*\" (multiPoint): gpusched has no multiPoint extension point");
    assert_has(w.msg[1], ":7:19:");
    assert_has(w.msg[1], "multiPoint");
    assert_has(w.msg[2], ":12:19:");
    assert_has(w.msg[2], "\"Coscheduling\" (permit)");
    assert_int_equal(gs_profile_count(p, GS_EP_SCORE), 3); /* the defaults, untouched */
    assert_int_equal(gs_profile_count(p, GS_EP_QUEUE_SORT), 1);
    gs_profile_free(p);
}

static void test_wrong_node_types(void **state)
{
    (void)state;
    EXPECT_EINVAL(HDR "profiles: gpu\n", NULL, ":3:11:", "profiles must be a sequence", "\"gpu\"");
    EXPECT_EINVAL(HDR "profiles:\n  - plugins: [a]\n", NULL,
                  ":4:14:", "profiles[0].plugins must be a mapping");
    EXPECT_EINVAL(HDR "profiles:\n  - plugins:\n      score:\n        enabled: {name: FGD}\n", NULL,
                  ":6:18:", "must be a sequence");
    EXPECT_EINVAL(HDR "profiles:\n  - plugins:\n      score:\n        enabled: [FGD]\n", NULL,
                  ":6:19:", "enabled[0] must be a mapping");
    EXPECT_EINVAL(HDR "profiles:\n  - plugins:\n      score:\n        enabled: [{weight: 2}]\n",
                  NULL, ":6:19:", "has no name");
    EXPECT_EINVAL(HDR "profiles:\n  - plugins:\n      score:\n        enabled: [{name: [x]}]\n",
                  NULL, ":6:26:", "name must be a plugin name");
    EXPECT_EINVAL(HDR "profiles:\n  - schedulerName: {a: b}\n", NULL,
                  ":4:20:", "schedulerName must be a non-empty string");
    EXPECT_EINVAL(HDR "? [a, b]\n: c\n", NULL, ":3:3:", "must be a scalar");
    EXPECT_EINVAL(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: [KubeSchedulerConfiguration]\n", NULL,
        ":2:7:", "kind must be");
}

/* Disabling a filter gpusched's placement always applies was taken without a word: the profile
 * seemed to say what placement did not do. "*" disables the filters gpusched builds, as the
 * shipped profile uses it. */
static void test_not_applied_warned(void **state)
{
    (void)state;
    struct warns w;
    struct gs_profile *p = load_ok(HDR "profiles:\n"
                                       "  - pluginConfig:\n"
                                       "      - name: GPUBinPacking\n"
                                       "        args: {}\n"
                                       "    plugins:\n"
                                       "      filter:\n"
                                       "        disabled:\n"
                                       "          - name: TaintToleration\n"
                                       "          - name: \"*\"\n",
                                   NULL, &w);
    assert_int_equal(w.n, 1); /* "*" is what gpusched builds (deploy/kube-scheduler-config.yaml) */
    assert_has(w.msg[0], ":10:19: plugin TaintToleration: gpusched's placement always applies");
    assert_int_equal(gs_profile_count(p, GS_EP_FILTER), 0);
    gs_profile_free(p);
}

/* pluginConfig and extenders were never read: a scoring strategy, an extender or a misspelt
 * plugin name was taken without a word though none of it ran. What a simulation does not model
 * is refused; kube-scheduler's process settings are typed as its strict decoding types them. */
static void test_unmodelled_refused(void **state)
{
    (void)state;
#define PC(x) HDR "profiles:\n  - schedulerName: a\n    pluginConfig: " x "\n"
    EXPECT_EINVAL(PC("[{name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated}}}]"),
                  NULL, ":5:51:", "pluginConfig[0]: args for kube-scheduler's NodeResourcesFit",
                  "refused rather than ignored");
    EXPECT_EINVAL(PC("abc"), NULL, ":5:19:", "profiles[0].pluginConfig must be a sequence");
    EXPECT_EINVAL(PC("[{bogus: 1}]"), NULL, ":5:21:", "unknown field \"bogus\"");
    EXPECT_EINVAL(PC("[{args: {}}]"), NULL, ":5:20:", "pluginConfig[0] has no name");
    EXPECT_EINVAL(PC("[{name: GPUBinPackng, args: {a: 1}}]"), NULL,
                  ":5:27:", "no plugin \"GPUBinPackng\"", "did you mean \"GPUBinPacking\"");
    EXPECT_EINVAL(PC("[{name: GPUBinPacking, args: {a: 1}}]"), NULL,
                  ":5:48:", "plugin \"GPUBinPacking\" takes no args");
    EXPECT_EINVAL(PC("[{name: FGD}, {name: FGD}]"), NULL,
                  ":5:40:", "a second config for plugin FGD");
    EXPECT_EINVAL(PC("[{name: NodeResourcesFit, args: 1}]"), NULL,
                  ":5:51:", "pluginConfig[0].args must be a mapping");
#undef PC
    EXPECT_EINVAL(HDR "extenders: [{urlPrefix: \"http://x\", filterVerb: filter}]\n", NULL,
                  ":3:25:", "extenders[0]: urlPrefix \"http://x\" is not gpuschedd's extender");
    EXPECT_EINVAL(HDR "extenders: 5\n", NULL, ":3:12:", "extenders must be a sequence");
    EXPECT_EINVAL(HDR "extenders: [{urlPrefix: \"https://g/extender\", weight: x}]\n", NULL,
                  ":3:55:", "extenders[0].weight must be an integer");
    EXPECT_EINVAL(HDR "parallelism: abc\n", NULL,
                  ":3:14:", "parallelism must be a positive integer");
    EXPECT_EINVAL(HDR "podMaxBackoffSeconds: 99\n", NULL,
                  ":3:23:", "does not model kube-scheduler's backoff", "default 10");
    EXPECT_EINVAL(HDR "enableProfiling: 1\n", NULL,
                  ":3:18:", "enableProfiling must be true or false");
    EXPECT_EINVAL(HDR "leaderElection: x\n", NULL, ":3:17:", "leaderElection must be a mapping");
    /* inside kube-scheduler's typed mappings too, as its strict decoding reads them */
    EXPECT_EINVAL(HDR "clientConnection: {kubeconfg: /x}\n", NULL,
                  ":3:20:", "unknown field \"kubeconfg\"");
    EXPECT_EINVAL(HDR "clientConnection: {qps: lots}\n", NULL,
                  ":3:25:", "clientConnection.qps must be a number");
    EXPECT_EINVAL(HDR "extenders: [{urlPrefix: \"https://g/extender\", tlsConfig: {certFle: x}}]\n",
                  NULL, ":3:59:", "unknown field \"certFle\"");
    EXPECT_EINVAL(HDR "extenders: [{urlPrefix: \"https://g/extender\", tlsConfig: {insecure: "
                      "maybe}}]\n",
                  NULL, ":3:69:", "extenders[0].tlsConfig.insecure must be true or false");
    EXPECT_EINVAL(HDR "extenders: [{urlPrefix: \"https://g/extender\", managedResources: [{name: "
                      "nvidia.com/gpu, ignoredByScheduller: true}]}]\n",
                  NULL, ":3:89:", "unknown field \"ignoredByScheduller\"");
    /* inert settings, kube-scheduler's defaults and gpuschedd as the extender load quietly */
    struct warns w;
    gs_profile_free(load_ok(HDR
                            "parallelism: 16\npodInitialBackoffSeconds: 1\n"
                            "podMaxBackoffSeconds: 10\nenableProfiling: false\n"
                            "healthzBindAddress: \"0.0.0.0:10259\"\n"
                            "extenders: [{urlPrefix: \"https://g:8443/extender\", weight: 1000}]\n"
                            "profiles:\n  - pluginConfig:\n"
                            "      - {name: NodeResourcesFit, args: {scoringStrategy: {}}}\n",
                            NULL, &w));
    assert_int_equal(w.n, 0);
}

static void test_nulls_count_as_empty(void **state)
{
    (void)state;
    struct warns w;
    struct gs_profile *p = load_ok(HDR "leaderElection:\n"
                                       "  leaderElect: false\n"
                                       "  resourceName: ~\n"
                                       "profiles:\n"
                                       "  - schedulerName: n\n"
                                       "    pluginConfig:\n"
                                       "      - name: NodeResourcesFit\n"
                                       "        args:\n"
                                       "    plugins:\n"
                                       "      score:\n"
                                       "      filter:\n"
                                       "        enabled: ~\n",
                                   NULL, &w);
    struct gs_profile *def;
    assert_int_equal(gs_profile_new_default("n", &def, NULL), 0);
    for (int ep = 0; ep < GS_EP_COUNT; ep++) /* null lists change nothing: the defaults */
        assert_int_equal(gs_profile_count(p, (enum gs_ext_point)ep),
                         gs_profile_count(def, (enum gs_ext_point)ep));
    gs_profile_free(def);
    gs_profile_free(p);
}

static void test_duplicate_key(void **state)
{
    (void)state;
    EXPECT_EINVAL(HDR "kind: KubeSchedulerConfiguration\n", NULL,
                  ":3:1:", "duplicate field \"kind\"");
    EXPECT_EINVAL(HDR "profiles:\n  - plugins:\n      score: {}\n      score: {}\n", NULL,
                  ":6:7:", "duplicate field");
}

static void test_hostile_key_is_sanitised(void **state)
{
    struct gs_diag d;
    struct gs_profile *p = UNTOUCHED;
    (void)state;
    gs_diag_init(&d);
    assert_int_equal(load_text(HDR "\"pro\\x1b[2Jfiles\\0\": 1\n", NULL, &p, &d), -EINVAL);
    for (const char *s = d.msg; *s; s++)
        assert_true((unsigned char)*s >= 0x20);
    assert_has(d.msg, "unknown field");
}

static void test_limits(void **state)
{
    char path[32];
    struct gs_diag d;
    struct gs_profile *p = UNTOUCHED;
    size_t big = GS_CONFIG_MAX_BYTES + 1;
    (void)state;

    /* Larger than the cap, even though it is only a comment. */
    char *text = malloc(big);
    assert_non_null(text);
    memset(text, ' ', big);
    text[0] = '#';
    text[big - 1] = '\n';
    write_tmp(text, big, path);
    gs_diag_init(&d);
    assert_int_equal(gs_config_load_kubesched(path, NULL, &p, &d), -EINVAL);
    assert_has(d.msg, "larger than");
    unlink(path);
    free(text);

    /* Nested deeper than the cap, in a document that would otherwise be skipped. */
    char deep[512];
    int n = 0;
    n += snprintf(deep + n, sizeof(deep) - (size_t)n, "a: ");
    for (int i = 0; i < GS_CONFIG_MAX_DEPTH + 5; i++)
        deep[n++] = '[';
    for (int i = 0; i < GS_CONFIG_MAX_DEPTH + 5; i++)
        deep[n++] = ']';
    deep[n++] = '\n';
    deep[n] = '\0';
    EXPECT_EINVAL(deep, NULL, "nested deeper than");
}

/* A profile list of aliases to one profile whose list is aliases to one entry: N x N visits. */
static void test_alias_blowup_is_bounded(void **state)
{
    enum { N = 3000 };
    size_t size = 4096 + 12 * (size_t)N;
    char *text = malloc(size), *t = text;
    (void)state;
    assert_non_null(text);
    static const char head[] = HDR "profiles:\n"
                                   "  - &p\n"
                                   "    schedulerName: p\n"
                                   "    plugins:\n"
                                   "      score:\n"
                                   "        enabled: [&e {name: NotBuilt}";
    /* appended piece by piece: GCC's format checks mistake a sprintf() chain for a null one */
    memcpy(t, head, sizeof(head) - 1);
    t += sizeof(head) - 1;
    for (int i = 0; i < N; i++, t += 3)
        memcpy(t, ",*e", 3);
    memcpy(t, "]\n", 2);
    t += 2;
    for (int i = 0; i < N; i++, t += 7)
        memcpy(t, "  - *p\n", 7);
    *t = '\0';
    EXPECT_EINVAL(text, "not-there", "listed twice"); /* stops at the first repeat */
    free(text);
}

static void test_aliases_within_reason(void **state)
{
    (void)state;
    struct warns w;
    struct gs_profile *p = load_ok(HDR "profiles:\n"
                                       "  - schedulerName: a\n"
                                       "    plugins: &common\n"
                                       "      filter:\n"
                                       "        enabled: [{name: NodeGPUFilter}]\n"
                                       "  - schedulerName: b\n"
                                       "    plugins: *common\n",
                                   "b", &w);
    assert_int_equal(gs_profile_count(p, GS_EP_FILTER), 1);
    gs_profile_free(p);
}

/*
 * Every prefix of the seed file and every one-byte change of it from a set of structural bytes:
 * the loader returns 0 or an error with a message, never crashes, never leaks (under ASan).
 */
static void test_never_crashes_on_mutations(void **state)
{
    static const char bytes[] = {'\0', ':',  '-', ' ', '\n', '[', '{', '&',  '*',
                                 '"',  '\t', 'x', '#', '|',  '!', '%', '\'', (char)0xff};
    char path[32];
    FILE *f = fopen(SEED, "rb");
    char seed[4096];
    (void)state;
    assert_non_null(f);
    size_t len = fread(seed, 1, sizeof(seed), f);
    fclose(f);
    assert_true(len > 0 && len < sizeof(seed));
    write_tmp("", 0, path);
    /* every position: truncated there, and replaced by 4 of the bytes (rotating through all) */
    for (size_t pos = 0; pos < len; pos++) {
        for (size_t k = 0; k <= 4; k++) {
            char text[4096];
            size_t b = (pos + k * 5) % sizeof(bytes);
            size_t n = k == 4 ? pos : len; /* the last round truncates */
            memcpy(text, seed, len);
            if (k < 4)
                text[pos] = bytes[b];
            FILE *out = fopen(path, "wb");
            assert_non_null(out);
            assert_int_equal(fwrite(text, 1, n, out), n);
            assert_int_equal(fclose(out), 0);
            struct gs_diag d;
            struct gs_profile *p = NULL;
            gs_diag_init(&d);
            int rc = gs_config_load_kubesched(path, NULL, &p, &d);
            if (rc == 0) {
                assert_non_null(p);
                gs_profile_free(p);
            } else {
                assert_int_equal(rc, -EINVAL);
                assert_null(p);
                assert_has(d.msg, path);
            }
        }
    }
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_file_loads),
        cmocka_unit_test(test_misspelt_top_level_key),
        cmocka_unit_test(test_misspelt_nested_keys),
        cmocka_unit_test(test_bad_weights),
        cmocka_unit_test(test_weight_outside_score),
        cmocka_unit_test(test_plugin_at_wrong_point),
        cmocka_unit_test(test_disabled_star_then_enabled),
        cmocka_unit_test(test_not_applied_warned),
        cmocka_unit_test(test_unmodelled_refused),
        cmocka_unit_test(test_percentage_of_nodes_warned),
        cmocka_unit_test(test_multi_document),
        cmocka_unit_test(test_select_profile_by_name),
        cmocka_unit_test(test_unknown_or_duplicate_profile),
        cmocka_unit_test(test_yaml_syntax_error),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_empty_file),
        cmocka_unit_test(test_api_versions),
        cmocka_unit_test(test_points_gpusched_lacks),
        cmocka_unit_test(test_wrong_node_types),
        cmocka_unit_test(test_nulls_count_as_empty),
        cmocka_unit_test(test_duplicate_key),
        cmocka_unit_test(test_hostile_key_is_sanitised),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_deploy_extender_v1),
        cmocka_unit_test(test_alias_blowup_is_bounded),
        cmocka_unit_test(test_aliases_within_reason),
        cmocka_unit_test(test_never_crashes_on_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
