/*
 * gpusched on a real Kubernetes: kube-scheduler 1.20.2 with the shipped v1beta1 configuration
 * (deploy/kube-scheduler-extender-v1beta1.yaml) calls gpuschedd over mutual TLS, and pods made
 * through kube-apiserver land where gpusched's policy puts them (kcluster.h: the control plane).
 *
 *   test_e2e CASE     one case of the table at the bottom, on a control plane of its own
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/util.h"
#include "kcluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BIND_MS 30000 /* how long a pod that fits may take to bind (a sanitizer build is slow) */

static struct kcluster kc;

/* Three empty 8-card A100 boards. */
static const char three_boards[] = "sn,cpu_milli,memory_mib,gpu,model\n"
                                   "n-a100-0,96000,786432,8,A100-SXM4-80GB\n"
                                   "n-a100-1,96000,786432,8,A100-SXM4-80GB\n"
                                   "n-a100-2,96000,786432,8,A100-SXM4-80GB\n";

static void up(const char *nodes, const char *extra, const char *policy)
{
    if (kc_start(&kc, nodes, extra, policy)) {
        kc_stop(&kc);
        fail_msg("the control plane did not start (set GS_E2E_KEEP=1 to keep its logs)");
    }
    assert_int_equal(kc_namespace(&kc, "team-a"), 0);
    assert_int_equal(kc_namespace(&kc, "team-b"), 0);
}

static int down(void **state)
{
    (void)state;
    kc_stop(&kc);
    return 0;
}

/* Create @name asking @resources and wait until it is bound: its node into @node. */
static void bind_one(const char *ns, const char *name, const char *resources, const char *extra,
                     char *node, size_t cap)
{
    assert_int_equal(kc_pod(&kc, ns, name, resources, extra), 0);
    if (!*kc_wait_bound(&kc, ns, name, BIND_MS, node, cap))
        fail_msg("pod %s/%s was not bound within %d ms (logs in %s)", ns, name, BIND_MS, kc.dir);
}

/* Pod @ns/@name's annotation @key ("" when it has none) into @out. */
static const char *annotation(const char *ns, const char *name, const char *key, char *out,
                              size_t cap)
{
    json_t *p = kc_get_pod(&kc, ns, name);
    const char *v = json_string_value(
        json_object_get(json_object_get(json_object_get(p, "metadata"), "annotations"), key));
    snprintf(out, cap, "%s", v ? v : "");
    json_decref(p);
    return out;
}

/* A pod that stays unbound for @ms while kube-scheduler reports @reason_part. */
static void stays_pending(const char *ns, const char *name, const char *needle)
{
    char msg[2048], node[64];
    if (!kc_wait_event(&kc, ns, name, "FailedScheduling", needle, BIND_MS, msg, sizeof(msg)))
        fail_msg("no FailedScheduling event for %s/%s with \"%s\"", ns, name, needle);
    assert_string_equal(kc_wait_bound(&kc, ns, name, 0, node, sizeof(node)), "");
}

/* /extender/filter without a client certificate, or with one another CA signed: refused. */
static void extender_needs_client_cert(void)
{
    char other[128], cmd[256];
    struct kanswer a;
    const char *body = "{\"Pod\":{\"metadata\":{\"name\":\"x\"}},\"NodeNames\":[]}";
    assert_int_equal(kc_gsd(&kc, "POST", "/extender/filter", NULL, body, &a), 0);
    assert_int_equal(a.status, 401);
    kc_answer_free(&a);
    snprintf(other, sizeof(other), "%s/other-ca", kc.dir);
    snprintf(cmd, sizeof(cmd), "deploy/tls/make-certs '%s' IP:127.0.0.1", other);
    assert_int_equal(system(cmd), 0);
    strcat(other, "/kube-scheduler");
    /* refused with 401, or at the handshake already (GnuTLS may turn away a certificate whose
     * issuer is not among those it asked for) */
    int rc = kc_gsd_as(&kc, "POST", "/extender/filter", NULL, other, body, &a);
    assert_true(rc != 0 || a.status == 401);
    kc_answer_free(&a);
    snprintf(other, sizeof(other), "%s/kube-scheduler", kc.dir); /* the one kube-scheduler has */
    assert_int_equal(kc_gsd_as(&kc, "POST", "/extender/filter", NULL, other, body, &a), 0);
    assert_int_equal(a.status, 200);
    kc_answer_free(&a);
}

/*
 * Packing reaches kube-scheduler: eight 1-GPU pods on three empty 8-card boards all land on
 * one board (kube-scheduler's own scoring would spread them), and a 30 % share of a card fills
 * the card a 70 % share left partly used, as the policy (FGD) picks, rather than opening an
 * empty one.
 */
static void test_packing(void **state)
{
    (void)state;
    up(three_boards, NULL, NULL);
    /* the minimum version gpusched supports, and the one this control plane runs */
    for (int i = 0; i < 100 && !kc_log_has(&kc.gsd, "version=v1.20.2 minimum=1.20"); i++)
        kc_sleep_ms(100);
    assert_true(kc_log_has(&kc.gsd, "msg=\"Kubernetes API server\" version=v1.20.2 minimum=1.20"));
    extender_needs_client_cert();
    char first[64] = "", node[64], name[16];
    for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        bind_one("team-a", name, "{\"nvidia.com/gpu\": 1}", NULL, node, sizeof(node));
        if (!i)
            snprintf(first, sizeof(first), "%s", node);
        if (strcmp(node, first))
            fail_msg("pod %s went to %s, its predecessors to %s", name, node, first);
    }
    char n1[64], n2[64], g1[32], g2[32];
    bind_one("team-a", "s1", "{\"nvidia.com/gpu\": 1, \"nvidia.com/gpucores\": 70}", NULL, n1,
             sizeof(n1));
    bind_one("team-a", "s2", "{\"nvidia.com/gpu\": 1, \"nvidia.com/gpucores\": 30}", NULL, n2,
             sizeof(n2));
    annotation("team-a", "s1", "gpusched.io/gpu-index", g1, sizeof(g1));
    annotation("team-a", "s2", "gpusched.io/gpu-index", g2, sizeof(g2));
    assert_string_not_equal(n1, first);
    assert_string_equal(n1, n2);
    assert_true(g1[0]);
    assert_string_equal(g1, g2);
}

/* A share asking nvidia.com/gpumem: 20000 reaches gpuschedd as the API server writes it, "20k"
 * (its canonical form), and binds. */
static void test_canonical_quantities(void **state)
{
    (void)state;
    up(three_boards, NULL, NULL);
    char node[64];
    bind_one("team-a", "mem", "{\"nvidia.com/gpu\": 1, \"nvidia.com/gpumem\": 20000}", NULL, node,
             sizeof(node));
    json_t *p = kc_get_pod(&kc, "team-a", "mem");
    const char *q = json_string_value(json_object_get(
        json_object_get(
            json_object_get(
                json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 0),
                "resources"),
            "limits"),
        "nvidia.com/gpumem"));
    assert_non_null(q);
    assert_string_equal(q, "20k");
    json_decref(p);
}

static const char quota_policy[] = "kind: GPUQuota\n"
                                   "metadata: {name: team-gpu-quota, namespace: team-a}\n"
                                   "spec:\n"
                                   "  tenant: team-a\n"
                                   "  quotas:\n"
                                   "    a100-80gb: {total: 2, dedicated: 2, shared: 0}\n"
                                   "---\n"
                                   "kind: ResourceQuota\n"
                                   "metadata: {name: gpus, namespace: team-b}\n"
                                   "spec:\n"
                                   "  hard: {requests.nvidia.com/gpu: \"1\"}\n";

/* GPUQuota and ResourceQuota refusals come back per node, so kube-scheduler reports them as it
 * reports any pod that fits nowhere: "0/3 nodes are available: 3 ...". */
static void test_quota_refusals(void **state)
{
    (void)state;
    up(three_boards, NULL, quota_policy);
    char node[64];
    bind_one("team-a", "a1", "{\"nvidia.com/gpu\": 2}", NULL, node, sizeof(node));
    assert_int_equal(kc_pod(&kc, "team-a", "a2", "{\"nvidia.com/gpu\": 1}", NULL), 0);
    stays_pending("team-a", "a2", "0/3 nodes are available: 3 ");
    char msg[2048];
    assert_true(
        kc_wait_event(&kc, "team-a", "a2", "FailedScheduling", "GPUQuota", 0, msg, sizeof(msg)));
    bind_one("team-b", "b1", "{\"nvidia.com/gpu\": 1}", NULL, node, sizeof(node));
    assert_int_equal(kc_pod(&kc, "team-b", "b2", "{\"nvidia.com/gpu\": 1}", NULL), 0);
    stays_pending("team-b", "b2", "0/3 nodes are available: 3 ");
    assert_true(kc_wait_event(&kc, "team-b", "b2", "FailedScheduling", "ResourceQuota", 0, msg,
                              sizeof(msg)));
}

/* PodGroup pg1 (minMember 4) posted to gpuschedd for team-a. */
static void post_podgroup(void)
{
    struct kanswer a;
    assert_int_equal(kc_gsd(&kc, "POST", "/v1/podgroups", KC_TOKEN_TEAM_A,
                            "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":"
                            "\"PodGroup\",\"metadata\":{\"name\":\"pg1\",\"namespace\":"
                            "\"team-a\"},\"spec\":{\"minMember\":4}}",
                            &a),
                     0);
    if (a.status != 201)
        fail_msg("POST /v1/podgroups: %ld %s", a.status, a.body ? a.body : "");
    kc_answer_free(&a);
}

/* Two of the three boards full and two cards of the third taken (team-b's pods big0, big1,
 * small): room for three 2-GPU members of a gang of four, not for the fourth. */
static void room_for_three(void)
{
    char node[64];
    bind_one("team-b", "big0", "{\"nvidia.com/gpu\": 8}", NULL, node, sizeof(node));
    bind_one("team-b", "big1", "{\"nvidia.com/gpu\": 8}", NULL, node, sizeof(node));
    bind_one("team-b", "small", "{\"nvidia.com/gpu\": 2}", NULL, node, sizeof(node));
}

/* Four 2-GPU pods g0..g3 of team-a naming PodGroup pg1 (minMember 4), made after
 * room_for_three(): none binds (kube-scheduler hears "gang"); once small and big0 are deleted,
 * all four do. */
static void gang_all_or_nothing(void)
{
    char node[64], name[16];
    const char *group =
        "{\"metadata\":{\"annotations\":{\"scheduling.k8s.io/group-name\":\"pg1\"}}}";
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "g%d", i);
        assert_int_equal(kc_pod(&kc, "team-a", name, "{\"nvidia.com/gpu\": 2}", group), 0);
    }
    stays_pending("team-a", "g3", "gang");
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "g%d", i);
        assert_string_equal(kc_wait_bound(&kc, "team-a", name, 0, node, sizeof(node)), "");
    }
    assert_int_equal(kc_delete_pod(&kc, "team-b", "small", 0), 0);
    assert_int_equal(kc_delete_pod(&kc, "team-b", "big0", 0), 0);
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "g%d", i);
        if (!*kc_wait_bound(&kc, "team-a", name, 2 * BIND_MS, node, sizeof(node)))
            fail_msg("gang member %s not bound once there was room", name);
    }
}

/*
 * A gang of four 2-GPU pods under a PodGroup binds all or nothing: with room for three members
 * (two boards of three full) none binds; once room is made, all four do.
 */
static void test_gang(void **state)
{
    (void)state;
    up(three_boards, NULL, NULL);
    room_for_three();
    post_podgroup();
    gang_all_or_nothing();
}

/* Volcano's PodGroup CRD, as Volcano's installation creates it (the file names its source). */
#define VOLCANO_CRD "tests/e2e/volcano-podgroup-crd.yaml"
/* team-a's PodGroups in the API server, and pg1 there */
#define VOLCANO_PGS "/apis/scheduling.volcano.sh/v1beta1/namespaces/team-a/podgroups"
#define VOLCANO_PG1 VOLCANO_PGS "/pg1"

/* May gpuschedd's service account @verb ("list", "watch") Volcano's PodGroups, by the
 * ClusterRole of deploy/gpuschedd.yaml? Asks the API server's own authorizer. */
static int gsd_may(const char *verb)
{
    char body[512];
    struct kanswer a;
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\","
             "\"spec\":{\"user\":\"system:serviceaccount:gpusched-system:gpuschedd\","
             "\"groups\":[\"system:serviceaccounts\"],\"resourceAttributes\":{\"group\":"
             "\"scheduling.volcano.sh\",\"resource\":\"podgroups\",\"verb\":\"%s\"}}}",
             verb);
    assert_int_equal(
        kc_api(&kc, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body, &a), 0);
    int ok = a.status == 201 &&
             json_is_true(json_object_get(json_object_get(a.json, "status"), "allowed"));
    kc_answer_free(&a);
    return ok;
}

/* GET /v1/podgroups/team-a/@name of gpuschedd (as team-a), asked every 50 ms up to BIND_MS
 * until it answers @want (200, 404) and, for 200, its count @count ("members", "running"; NULL:
 * any) is @n. Return: the last answer's JSON (new reference; NULL for 404); fails when @want
 * never came. */
static json_t *gsd_podgroup(const char *name, long want, const char *count, int n)
{
    char path[128];
    snprintf(path, sizeof(path), "/v1/podgroups/team-a/%s", name);
    for (int waited = 0;; waited += 50) {
        struct kanswer a;
        assert_int_equal(kc_gsd(&kc, "GET", path, KC_TOKEN_TEAM_A, NULL, &a), 0);
        const json_t *m = count ? json_object_get(a.json, count) : NULL;
        if (a.status == want && (want != 200 || !count || json_integer_value(m) == n)) {
            json_t *j = want == 200 ? json_incref(a.json) : NULL;
            kc_answer_free(&a);
            return j;
        }
        if (waited >= BIND_MS)
            fail_msg("GET %s: %ld %s, want %ld (%s %d; logs in %s)", path, a.status,
                     a.body ? a.body : "", want, count ? count : "-", n, kc.dir);
        kc_answer_free(&a);
        kc_sleep_ms(50);
    }
}

/* The control plane with Volcano's PodGroup CRD installed before gpuschedd starts, and
 * namespaces team-a and team-b; gpuschedd's ClusterRole lets it list and watch PodGroups. */
static void up_volcano(void)
{
    if (kc_start_crd(&kc, three_boards, VOLCANO_CRD)) {
        kc_stop(&kc);
        fail_msg("the control plane did not start (set GS_E2E_KEEP=1 to keep its logs)");
    }
    assert_int_equal(kc_namespace(&kc, "team-a"), 0);
    assert_int_equal(kc_namespace(&kc, "team-b"), 0);
    assert_true(gsd_may("list"));
    assert_true(gsd_may("watch"));
}

/* PodGroup pg1 of team-a (minMember 4) created in the API server, as a Volcano user creates
 * it; it reaches gpuschedd with the queue the CRD defaults. */
static void kube_podgroup(void)
{
    assert_int_equal(kc_api_ok(&kc, "POST", VOLCANO_PGS,
                               "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":"
                               "\"PodGroup\",\"metadata\":{\"name\":\"pg1\"},\"spec\":{"
                               "\"minMember\":4}}",
                               201),
                     0);
    struct kanswer a;
    assert_int_equal(kc_api(&kc, "GET", VOLCANO_PG1, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    /* the API server wrote in the queue the CRD defaults: gpuschedd takes that field too */
    const char *q = json_string_value(json_object_get(json_object_get(a.json, "spec"), "queue"));
    assert_string_equal(q ? q : "(none)", "default");
    kc_answer_free(&a);
    json_t *g = gsd_podgroup("pg1", 200, NULL, 0);
    assert_int_equal(json_integer_value(json_object_get(g, "minMember")), 4);
    assert_string_equal(json_string_value(json_object_get(g, "queue")), "default");
    json_decref(g);
}

/*
 * The gang of test_gang made as a Volcano user makes it: Volcano's PodGroup CRD installed in the
 * API server (before gpuschedd starts, as where Volcano came first), PodGroup pg1 (minMember 4)
 * created there, never posted to gpuschedd, which follows it (deploy/gpuschedd.yaml's
 * ClusterRole lets it): GET /v1/podgroups shows it with the queue the CRD defaults, its four pods
 * bind all or nothing through kube-scheduler, and deleted in the API server once its pods are
 * gone, gpuschedd deletes it too.
 */
static void test_volcano_podgroup(void **state)
{
    (void)state;
    char name[16];
    up_volcano();
    room_for_three();
    kube_podgroup();
    gang_all_or_nothing();
    json_t *g = gsd_podgroup("pg1", 200, "running", 4); /* bound by gpuschedd: running there */
    assert_string_equal(json_string_value(json_object_get(g, "phase")), "Running");
    json_decref(g);
    /* its pods gone (gpuschedd heard so: no member left), then the PodGroup: one deleted while
     * pods name it would be kept until a later list */
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "g%d", i);
        assert_int_equal(kc_delete_pod(&kc, "team-a", name, 0), 0);
    }
    json_decref(gsd_podgroup("pg1", 200, "members", 0));
    assert_int_equal(kc_api_ok(&kc, "DELETE", VOLCANO_PG1, NULL, 200), 0);
    assert_null(gsd_podgroup("pg1", 404, NULL, 0));
    assert_true(kc_log_has(&kc.gsd, "podgroup deleted in the API server: deleted"));
    /* the CRD came first: gpuschedd never had to wait for it */
    assert_false(kc_log_has(&kc.gsd, "PodGroups not served"));
}

/* A deleted pod's cards are free at once: a pod needing them binds without waiting for a
 * periodic list. */
static void test_delete_frees(void **state)
{
    (void)state;
    up("sn,cpu_milli,memory_mib,gpu,model\nn-a100-0,96000,786432,8,A100-SXM4-80GB\n", NULL, NULL);
    char node[64];
    bind_one("team-a", "all", "{\"nvidia.com/gpu\": 8}", NULL, node, sizeof(node));
    assert_int_equal(kc_pod(&kc, "team-a", "next", "{\"nvidia.com/gpu\": 8}", NULL), 0);
    stays_pending("team-a", "next", "0/1 nodes are available");
    assert_int_equal(kc_delete_pod(&kc, "team-a", "all", 0), 0);
    /* kube-scheduler retries an unschedulable pod when a pod is deleted; gpuschedd must have
     * let go of the cards by then */
    if (!*kc_wait_bound(&kc, "team-a", "next", 5000, node, sizeof(node)))
        fail_msg("the deleted pod's cards were not free for the next pod");
}

/* Wait up to BIND_MS for gpuschedd's log to hold @needle; fail naming @what otherwise. Return:
 * the milliseconds it took. */
static int gsd_logs(const char *needle, const char *what)
{
    int ms = 0;
    for (; ms < BIND_MS && !kc_log_has(&kc.gsd, needle); ms += 20)
        kc_sleep_ms(20);
    if (!kc_log_has(&kc.gsd, needle))
        fail_msg("gpuschedd never logged %s (%s; logs in %s)", what, needle, kc.dir);
    return ms;
}

/* Node n-late's Ready condition set to @status ("True", "False"), as its kubelet would. */
static void late_ready(const char *status)
{
    char body[160];
    snprintf(body, sizeof(body),
             "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\","
             "\"reason\":\"KubeletReady\"}]}}",
             status);
    assert_int_equal(kc_api_ok(&kc, "PATCH", "/api/v1/nodes/n-late/status", body, 200), 0);
}

/*
 * gpuschedd follows the Node objects (--nodes kubernetes): a Node made after it started joins
 * the inventory without a restart and a pod binds there; a Node marked NotReady, or deleted,
 * takes nothing new (kube-scheduler hears why), and Ready again it takes pods again.
 */
static void test_nodes_follow(void **state)
{
    (void)state;
    up("sn,cpu_milli,memory_mib,gpu,model\nn-a100-0,96000,786432,8,A100-SXM4-80GB\n", NULL, NULL);
    char node[64];
    bind_one("team-a", "full", "{\"nvidia.com/gpu\": 8}", NULL, node, sizeof(node));
    struct knode late = {"n-late", "NVIDIA-A100-SXM4-80GB", 8, 0, 0, 0, "zone-b"};
    assert_int_equal(kc_node(&kc, &late), 0);
    int ms = gsd_logs("msg=\"node added\" node=n-late zone=zone-b nodes=2", "the Node made");
    printf("nodes-follow: n-late in gpuschedd's inventory %d ms after it was made\n", ms);
    bind_one("team-a", "on-late", "{\"nvidia.com/gpu\": 8}", NULL, node, sizeof(node));
    assert_string_equal(node, "n-late");
    assert_int_equal(kc_delete_pod(&kc, "team-a", "on-late", 0), 0);
    late_ready("False");
    gsd_logs("msg=\"node not ready\" node=n-late by=\"Node object\"", "n-late NotReady");
    assert_int_equal(kc_pod(&kc, "team-a", "not-there", "{\"nvidia.com/gpu\": 1}", NULL), 0);
    stays_pending("team-a", "not-there", "node.kubernetes.io/not-ready");
    assert_int_equal(kc_delete_pod(&kc, "team-a", "not-there", 0), 0);
    late_ready("True");
    gsd_logs("msg=\"node ready\" node=n-late by=\"Node object\"", "n-late Ready again");
    bind_one("team-a", "back", "{\"nvidia.com/gpu\": 8}", NULL, node, sizeof(node));
    assert_string_equal(node, "n-late");
    assert_int_equal(kc_delete_pod(&kc, "team-a", "back", 0), 0);
    /* deleted: kube-scheduler no longer offers it; gpuschedd's own API places nothing there */
    assert_int_equal(kc_api_ok(&kc, "DELETE", "/api/v1/nodes/n-late", NULL, 200), 0);
    struct kanswer a;
    int ready = 1;
    for (int i = 0; i < BIND_MS / 20 && ready; i++) {
        assert_int_equal(kc_gsd(&kc, "GET", "/v1/nodes/n-late", KC_TOKEN_TEAM_A, NULL, &a), 0);
        assert_int_equal(a.status, 200);
        ready = json_is_true(json_object_get(a.json, "ready"));
        kc_answer_free(&a);
        kc_sleep_ms(20);
    }
    assert_false(ready);
    const char *pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"api-pod\","
                      "\"namespace\":\"team-a\"},\"spec\":{\"containers\":[{\"name\":\"m\","
                      "\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}}]}}";
    assert_int_equal(kc_gsd(&kc, "POST", "/v1/pods", KC_TOKEN_TEAM_A, pod, &a), 0);
    assert_int_equal(a.status, 201);
    assert_string_equal(json_string_value(json_object_get(a.json, "state")), "pending");
    kc_answer_free(&a);
}

/* A pod deleted and made again under the same name (a new UID) binds at once. */
static void test_same_name_new_uid(void **state)
{
    (void)state;
    up(three_boards, NULL, NULL);
    char node[64], again[64];
    bind_one("team-a", "r", "{\"nvidia.com/gpu\": 8}", NULL, node, sizeof(node));
    json_t *p = kc_get_pod(&kc, "team-a", "r");
    char uid[64];
    snprintf(uid, sizeof(uid), "%s",
             json_string_value(json_object_get(json_object_get(p, "metadata"), "uid")));
    json_decref(p);
    assert_int_equal(kc_delete_pod(&kc, "team-a", "r", 0), 0);
    bind_one("team-a", "r", "{\"nvidia.com/gpu\": 8}", NULL, again, sizeof(again));
    p = kc_get_pod(&kc, "team-a", "r");
    assert_string_not_equal(
        json_string_value(json_object_get(json_object_get(p, "metadata"), "uid")), uid);
    json_decref(p);
}

/*
 * gpuschedd killed with SIGKILL in the middle of a run and started again: every pod binds, and
 * no card is given to two pods.
 */
static void test_kill_restart(void **state)
{
    (void)state;
    up(three_boards, NULL, NULL);
    char name[16], node[64];
    for (int i = 0; i < 12; i++) {
        snprintf(name, sizeof(name), "k%d", i);
        assert_int_equal(kc_pod(&kc, "team-a", name, "{\"nvidia.com/gpu\": 2}", NULL), 0);
        if (i == 5) {
            kc_kill_gsd(&kc);
            assert_int_equal(kc_start_gsd(&kc), 0);
        }
    }
    char seen[3][8] = {{0}};
    for (int i = 0; i < 12; i++) {
        char idx[64];
        snprintf(name, sizeof(name), "k%d", i);
        /* a pod whose bind broke off is retried when kube-scheduler flushes its unschedulable
         * queue: after 60 s there, checked every 30 s (kube-scheduler 1.20) */
        if (!*kc_wait_bound(&kc, "team-a", name, 150000 + BIND_MS, node, sizeof(node)))
            fail_msg("pod %s not bound after the restart", name);
        annotation("team-a", name, "gpusched.io/gpu-index", idx, sizeof(idx));
        int n = node[strlen(node) - 1] - '0';
        for (char *t = strtok(idx, ","); t; t = strtok(NULL, ",")) {
            int g = atoi(t);
            assert_true(n >= 0 && n < 3 && g >= 0 && g < 8);
            if (seen[n][g])
                fail_msg("card %d of %s given to two pods", g, node);
            seen[n][g] = 1;
        }
    }
}

/* MIG through the extender: a pod asking nvidia.com/mig-3g.40gb, which no node advertises yet,
 * binds on an H100 whose instance gpuschedd creates on demand. */
static const char mig_policy[] = "apiVersion: nvidia.com/v1\n"
                                 "kind: GpuClusterPolicy\n"
                                 "metadata: {name: gpu-cluster-policy}\n"
                                 "spec:\n"
                                 "  mig: {strategy: mixed}\n"
                                 "  devices:\n"
                                 "    - name: H100-SXM5-80GB\n"
                                 "      migEnabled: true\n"
                                 "      migProfiles: [1g.10gb, 3g.40gb, 7g.80gb]\n";

static void test_mig_on_demand(void **state)
{
    (void)state;
    up("sn,cpu_milli,memory_mib,gpu,model\nn-h100-0,64000,262144,2,H100-SXM5-80GB\n", NULL,
       mig_policy);
    char node[64], prof[64];
    bind_one("team-a", "m1", "{\"nvidia.com/mig-3g.40gb\": 1}", NULL, node, sizeof(node));
    assert_string_equal(node, "n-h100-0");
    annotation("team-a", "m1", "gpusched.io/mig-profile", prof, sizeof(prof));
    assert_string_equal(prof, "3g.40gb");
}

/*
 * Preemption evicts exactly the victims needed, once: one board full of four 2-GPU pods of low
 * priority; a high priority pod asking 4 GPUs evicts two of them, and no more. Expected to fail
 * (tests/meson.build) until gpuschedd evicts the victims itself: kube-scheduler 1.20 proposes
 * victims from its own filters only, which leave GPUs to the extender and so see no shortage.
 */
/* The PriorityClasses, in the API server and in gpuschedd's policy: its scheduler's priority
 * levels are the classes it is given. */
static const char priority_classes[] = "apiVersion: scheduling.k8s.io/v1\n"
                                       "kind: PriorityClass\n"
                                       "metadata: {name: low}\n"
                                       "value: 10\n"
                                       "---\n"
                                       "apiVersion: scheduling.k8s.io/v1\n"
                                       "kind: PriorityClass\n"
                                       "metadata: {name: high}\n"
                                       "value: 1000\n";

/*
 * Preemption through kube-scheduler: gpuschedd's scheduler chooses the victims of a pod
 * kube-scheduler found no node for, evicts each once with the Eviction API (once across a
 * kill -9 and restart too), and the pod binds once they are gone (not before: their cards are
 * theirs until then).
 */
static void test_preemption(void **state)
{
    (void)state;
    up("sn,cpu_milli,memory_mib,gpu,model\nn-a100-0,96000,786432,8,A100-SXM4-80GB\n", NULL,
       priority_classes);
    assert_int_equal(kc_api_ok(&kc, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                               "{\"metadata\":{\"name\":\"low\"},\"value\":10}", 201),
                     0);
    assert_int_equal(kc_api_ok(&kc, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                               "{\"metadata\":{\"name\":\"high\"},\"value\":1000}", 201),
                     0);
    char node[64], name[16], needle[64];
    const char *low = "{\"spec\":{\"priorityClassName\":\"low\"}}";
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "low%d", i);
        bind_one("team-a", name, "{\"nvidia.com/gpu\": 2}", low, node, sizeof(node));
    }
    assert_int_equal(kc_pod(&kc, "team-a", "vip", "{\"nvidia.com/gpu\": 4}",
                            "{\"spec\":{\"priorityClassName\":\"high\"}}"),
                     0);
    /* gpuschedd's scheduler picks two victims and evicts them through the Eviction API */
    const char *evictions = "\"subresource\":\"eviction\"";
    for (int i = 0; i < BIND_MS / 100 && kc_audit_count(&kc, evictions) < 2; i++)
        kc_sleep_ms(100);
    assert_int_equal(kc_audit_count(&kc, evictions), 2);
    /* gpuschedd killed and started again meanwhile: it evicts nothing twice, and still holds
     * the victims' node closed until they are gone */
    kc_kill_gsd(&kc);
    assert_int_equal(kc_start_gsd(&kc), 0);
    /* their cards are not free while they still run: the preemptor waits */
    kc_sleep_ms(1500);
    assert_string_equal(kc_wait_bound(&kc, "team-a", "vip", 0, node, sizeof(node)), "");
    int bound = 0;
    for (int i = 0; i < BIND_MS / 100 && !bound; i++) {
        kc_finish_deletions(&kc); /* the kubelet's part: the victims' containers stop */
        bound = *kc_wait_bound(&kc, "team-a", "vip", 100, node, sizeof(node)) != '\0';
    }
    assert_true(bound);
    assert_string_equal(node, "n-a100-0");
    /* exactly the victims evicted are gone, two of them, each evicted once */
    int left = 0, gone = 0;
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "low%d", i);
        snprintf(needle, sizeof(needle), "\"name\":\"%s\"", name);
        json_t *p = kc_get_pod(&kc, "team-a", name);
        int evicted = kc_audit_count(&kc, needle);
        if (p ? evicted != 0 : evicted != 1)
            fail_msg("%s: %s, evicted %d times", name, p ? "still there" : "gone", evicted);
        left += p != NULL;
        gone += p == NULL;
        json_decref(p);
    }
    assert_int_equal(left, 2);
    assert_int_equal(gone, 2);
    kc_sleep_ms(1000); /* and nothing more is evicted */
    assert_int_equal(kc_audit_count(&kc, evictions), 2);
    assert_true(kc_log_has(&kc.gsd, "pod evicted in Kubernetes"));
}

/* A pod's declared walltime, sim.gpusched.io/duration (@walltime, "600s"), as kc_pod()'s extra. */
static const char *walltime(const char *walltime, char *buf, size_t cap)
{
    snprintf(buf, cap, "{\"metadata\":{\"annotations\":{\"sim.gpusched.io/duration\":\"%s\"}}}",
             walltime);
    return buf;
}

/*
 * Backfill through kube-scheduler (EASY, the simulator's rule, backfill.c): on one 4-card board,
 * `running` (2 cards, walltime 10 min) is bound; `head` (4 cards) fits nowhere, waits in
 * gpuschedd's queue and is promised the board when `running` ends. `short` (1 card, 1 min)
 * binds beside them at once: it ends before the head can start. `long` (1 card, 1 h) would
 * delay the head: filter fails the board saying so, and it is not bound; nor is the head, until
 * the board is free: then the head binds, not the long pod.
 */
static void test_backfill(void **state)
{
    (void)state;
    up("sn,cpu_milli,memory_mib,gpu,model\nn-a100-0,96000,786432,4,A100-SXM4-80GB\n", NULL, NULL);
    char node[64], w[128];
    bind_one("team-a", "running", "{\"nvidia.com/gpu\": 2}", walltime("600s", w, sizeof(w)), node,
             sizeof(node));
    assert_int_equal(kc_pod(&kc, "team-a", "head", "{\"nvidia.com/gpu\": 4}", w), 0);
    gsd_logs("pod=team-a/head state=pending", "the head nominated to its queue");
    bind_one("team-a", "short", "{\"nvidia.com/gpu\": 1}", walltime("60s", w, sizeof(w)), node,
             sizeof(node));
    assert_string_equal(node, "n-a100-0");
    assert_int_equal(
        kc_pod(&kc, "team-a", "long", "{\"nvidia.com/gpu\": 1}", walltime("3600s", w, sizeof(w))),
        0);
    stays_pending("team-a", "long", "held for team-a/head");
    char msg[2048];
    assert_true(kc_wait_event(&kc, "team-a", "long", "FailedScheduling",
                              "run time (sim.gpusched.io/duration) of 3600 s would delay it", 0,
                              msg, sizeof(msg)));
    printf("backfill: long: %s\n", msg);
    assert_string_equal(kc_wait_bound(&kc, "team-a", "head", 0, node, sizeof(node)), "");
    /* the board free again (the two pods gone, as they would have ended): the head takes it,
     * not the long pod queued behind it */
    assert_int_equal(kc_delete_pod(&kc, "team-a", "running", 0), 0);
    assert_int_equal(kc_delete_pod(&kc, "team-a", "short", 0), 0);
    if (!*kc_wait_bound(&kc, "team-a", "head", 2 * BIND_MS, node, sizeof(node)))
        fail_msg("the head was not bound once the board was free (logs in %s)", kc.dir);
    assert_string_equal(node, "n-a100-0");
    assert_string_equal(kc_wait_bound(&kc, "team-a", "long", 0, node, sizeof(node)), "");
}

/* Bound (its node into @node) or refused (a FailedScheduling event: @node ""), waiting up to
 * BIND_MS. Return: 0; -1 when neither came. */
static int settle(const char *ns, const char *name, char *node, size_t cap)
{
    char msg[512];
    for (int waited = 0; waited < BIND_MS; waited += 50) {
        if (*kc_wait_bound(&kc, ns, name, 0, node, cap))
            return 0;
        if (kc_wait_event(&kc, ns, name, "FailedScheduling", NULL, 0, msg, sizeof(msg))) {
            kc_wait_bound(&kc, ns, name, 0, node, cap); /* bound meanwhile after all? */
            return 0;
        }
        kc_sleep_ms(50);
    }
    return -1;
}

/*
 * One scheduler, two clocks: 200 GPU pods of the Alibaba trace (openb_pod_list_default.csv, in
 * its order) arrive one at a time through the real control plane on 16 of its nodes (the first
 * of each model: 6 G2, 2 G3 and 2 V100M32 boards of 8, 4 T4 and 2 P100 boxes of 2; in name
 * order, the order the API server lists the Nodes gpuschedd reads), and each lands on the node
 * `gpusched simulate --scenario` picks for it when the same pods arrive a second apart on the
 * same nodes (or stays pending where the simulator leaves it pending) for at least 99 % of the
 * pods. Prints the figure.
 */
static void test_replay(void **state)
{
    (void)state;
    char dir[64] = "/tmp/gs_replay.XXXXXX", cmd[2048], path[128], src[1024];
    const char *sim = getenv("GPUSCHED_BIN");
    assert_non_null(sim);
    assert_non_null(getcwd(src, sizeof(src))); /* meson's workdir; $PWD is the caller's shell's */
    assert_non_null(mkdtemp(dir));
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && S='%s' && T=$S/data/alibaba-gpu-v2023 && "
             "N=$T/openb_node_list_gpu_node.csv && "
             "{ head -1 $N; { grep ',8,G2$' $N | head -6; grep ',8,G3$' $N | head -2; "
             "grep ',2,T4$' $N | head -4; grep ',2,P100$' $N | head -2; "
             "grep ',8,V100M32$' $N | head -2; } | sort; } >nodes.csv && "
             "awk -F, 'NR == 1 || $4 >= 1' $T/openb_pod_list_default.csv | head -201 >pods.csv && "
             "awk -F, -f $S/tests/e2e/trace-scenario.awk nodes.csv pods.csv >replay.yaml && "
             "'%s' simulate --scenario replay.yaml --json sim.json --quiet >sim.txt",
             dir, src, sim);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof(path), "%s/nodes.csv", dir);
    char *nodes = t_slurp(path, NULL);
    snprintf(path, sizeof(path), "%s/sim.json", dir);
    json_t *out = json_load_file(path, 0, NULL), *p;
    snprintf(path, sizeof(path), "%s/pods.csv", dir);
    char *pods = t_slurp(path, NULL);
    assert_non_null(nodes);
    assert_non_null(out);
    assert_non_null(pods);
    up(nodes, NULL, NULL);
    size_t i, same = 0, total = 0;
    const char *line = strchr(pods, '\n') + 1;
    json_array_foreach(json_object_get(out, "pods"), i, p)
    {
        char name[64], res[160], node[64];
        long long cpu, mem, gpus, milli;
        assert_int_equal(
            sscanf(line, "%63[^,],%lld,%lld,%lld,%lld", name, &cpu, &mem, &gpus, &milli), 5);
        line = strchr(line, '\n') + 1;
        char key[80];
        snprintf(key, sizeof(key), "team-a/%s", name);
        assert_string_equal(key, json_string_value(json_object_get(p, "name")));
        snprintf(res, sizeof(res),
                 "{\"cpu\": \"%lldm\", \"memory\": \"%lldMi\", \"nvidia.com/gpu\": %lld", cpu, mem,
                 gpus);
        if (milli < 1000)
            snprintf(res + strlen(res), sizeof(res) - strlen(res),
                     ", \"nvidia.com/gpucores\": %lld", milli / 10);
        strcat(res, "}");
        assert_int_equal(kc_pod(&kc, "team-a", name, res, NULL), 0);
        if (settle("team-a", name, node, sizeof(node)))
            fail_msg("pod %s neither bound nor refused", name);
        const char *want = json_string_value(json_object_get(p, "node"));
        int match = !strcmp(node, want ? want : "");
        same += match;
        total++;
        if (!match)
            fprintf(stderr, "replay: %s on \"%s\", the simulator put it on \"%s\"\n", name, node,
                    want ? want : "");
    }
    printf("replay: %zu of %zu pods on the node gpusched simulate picked (%.1f %%)\n", same, total,
           100.0 * (double)same / (double)total);
    json_decref(out);
    free(nodes);
    free(pods);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(total, 200);
    assert_true(same * 100 >= total * 99);
}

struct e2e_case {
    const char *name;
    void (*fn)(void **);
};

static const struct e2e_case cases[] = {
    {"packing", test_packing},
    {"canonical-quantities", test_canonical_quantities},
    {"quota-refusals", test_quota_refusals},
    {"gang", test_gang},
    {"volcano-podgroup", test_volcano_podgroup},
    {"delete-frees", test_delete_frees},
    {"nodes-follow", test_nodes_follow},
    {"same-name-new-uid", test_same_name_new_uid},
    {"kill-restart", test_kill_restart},
    {"mig-on-demand", test_mig_on_demand},
    {"preemption", test_preemption},
    {"backfill", test_backfill},
    {"replay", test_replay},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc == 2 && i < sizeof(cases) / sizeof(cases[0]); i++)
        if (!strcmp(argv[1], cases[i].name)) {
            const struct CMUnitTest t[] = {
                {cases[i].name, cases[i].fn, NULL, down, NULL},
            };
            return cmocka_run_group_tests_name(cases[i].name, t, NULL, NULL);
        }
    fprintf(stderr, "usage: test_e2e CASE\ncases:");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        fprintf(stderr, " %s", cases[i].name);
    fprintf(stderr, "\n");
    return 2;
}
