/*
 * gpusched-agent end to end: the real gpuschedd on 127.0.0.1 (manual node clock), the agent on a
 * fake NVML (tests/nvml/fake_nvml.c, found by the dynamic loader through LD_LIBRARY_PATH as
 * libnvidia-ml.so.1) and a fake kubelet speaking the device plugin API over gRPC. The agent
 * registers and gets its own token, heartbeats, reports a bad Xid, creates the MIG instance a pod
 * was placed on (and destroys it only once it runs nothing), answers ListAndWatch and Allocate
 * with each pod's own cards, split among a pod's containers, gives a shared pod its own region
 * folder (made, mounted, removed with the pod) and the context cost of its card's model, scales
 * the tenants' CPU weights in kubelet's pod cgroups of a temporary tree, writes a CDI spec;
 * killed, its node turns NotReady after the grace period; restarted, it hands no device out
 * twice.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/harness.h"
#include "common/util.h"
#include "node/fake_kubelet.h"

#include "gpusched/gpushare_env.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BOOT "bootstrap-token-0123456789abcdef"
#define NODE "n-a100-0"

extern char **environ;

static struct {
    struct daemon d;
    char agent_dir[128], state[160], dp[160], cdi[160], cg[160], podres[200], pods[160], sys[160];
    char nvml_cfg[160], nvml_state[160], nvml_log[160], nvml_busy[160], nvml_xid[160], boot[160],
        alog[160];
    pid_t agent;
    struct fake_kubelet *k;
    char uuid[8][64];
    char b_ids[4][128]; /* the IDs kubelet gave pod whole-b */
    int nb_ids;
    char share_ids[4][128]; /* and share-e */
    int nshare;
} E;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void start_agent(void)
{
    const char *bin = getenv("GPUSCHED_AGENT_BIN"), *lib = getenv("FAKE_NVML_LIB");
    char server[64], libdir[256], ld[300], cfg[200], st[200], lg[200], busy[200], xid[200];
    assert_non_null(bin);
    assert_non_null(lib);
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", E.d.port);
    snprintf(libdir, sizeof(libdir), "%s", lib);
    *strrchr(libdir, '/') = '\0';
    snprintf(ld, sizeof(ld), "LD_LIBRARY_PATH=%s", libdir);
    snprintf(cfg, sizeof(cfg), "FAKE_NVML_CONFIG=%s", E.nvml_cfg);
    snprintf(st, sizeof(st), "FAKE_NVML_STATE=%s", E.nvml_state);
    snprintf(lg, sizeof(lg), "FAKE_NVML_LOG=%s", E.nvml_log);
    snprintf(busy, sizeof(busy), "FAKE_NVML_BUSY=%s", E.nvml_busy);
    snprintf(xid, sizeof(xid), "FAKE_NVML_XID=%s", E.nvml_xid);
    char *env[64];
    int n = 0;
    for (char **e = environ; *e && n < 56; e++)
        if (strncmp(*e, "LD_LIBRARY_PATH=", 16))
            env[n++] = *e;
    env[n++] = ld;
    env[n++] = cfg;
    env[n++] = st;
    env[n++] = lg;
    env[n++] = busy;
    env[n++] = xid;
    env[n] = NULL;
    char *argv[] = {(char *)bin,
                    "--server",
                    server,
                    "--node",
                    NODE,
                    "--bootstrap-token-file",
                    E.boot,
                    "--state-dir",
                    E.state,
                    "--device-plugin-dir",
                    E.dp,
                    "--pod-resources-socket",
                    E.podres,
                    "--cdi-dir",
                    E.cdi,
                    "--cgroup-root",
                    E.cg,
                    "--shim",
                    "/usr/lib/gpusched/libgpushare.so",
                    "--pod-dir",
                    E.pods,
                    "--context-mib",
                    "1000,A100-SXM4-80GB=700",
                    "--mps-pipe",
                    "/tmp/nvidia-mps",
                    "--replicas",
                    "4",
                    "--sync-ms",
                    "150",
                    "--heartbeat-seconds",
                    "1",
                    "--sysfs",
                    E.sys,
                    NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, E.alog, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    assert_int_equal(posix_spawn(&E.agent, bin, &fa, NULL, argv, env), 0);
    posix_spawn_file_actions_destroy(&fa);
}

static void kill_agent(void)
{
    kill(E.agent, SIGKILL);
    waitpid(E.agent, NULL, 0);
    E.agent = 0;
}

static int setup(void **state)
{
    (void)state;
    static const char nodes[] =
        "sn,cpu_milli,memory_mib,gpu,model\n" NODE ",96000,786432,8,A100-SXM4-80GB\n";
    /* team-a's queue weighs 4, team-b's 2: team-a's pods get twice kubelet's CPU weight */
    static const char config[] = "apiVersion: gpusched.io/v1alpha1\n"
                                 "kind: DaemonConfig\n"
                                 "adminToken: " TOKEN_ADMIN "\n"
                                 "nodeToken: " BOOT "\n"
                                 "tenants:\n"
                                 "  - {name: team-a, token: " TOKEN_A ", namespaces: [team-a], "
                                 "weight: 4}\n"
                                 "  - {name: team-b, token: " TOKEN_B ", namespaces: [team-b], "
                                 "weight: 2}\n";
    char text[4096];
    size_t off = 0;
    if (h_setup(&E.d, NULL) || h_write(E.d.nodes, nodes) || h_write(E.d.config, config))
        return -1;
    E.d.manual_clock = 1;
    snprintf(E.agent_dir, sizeof(E.agent_dir), "%s/agent", E.d.dir);
    snprintf(E.state, sizeof(E.state), "%s/state", E.agent_dir);
    snprintf(E.dp, sizeof(E.dp), "%s/device-plugins", E.agent_dir);
    snprintf(E.cdi, sizeof(E.cdi), "%s/cdi", E.agent_dir);
    snprintf(E.sys, sizeof(E.sys), "%s/sys", E.agent_dir); /* no PCI device: NUMA unknown */
    snprintf(E.cg, sizeof(E.cg), "%s/cgroup", E.agent_dir);
    snprintf(E.pods, sizeof(E.pods), "%s/pods", E.agent_dir);
    snprintf(E.nvml_cfg, sizeof(E.nvml_cfg), "%s/machine.nvml", E.agent_dir);
    snprintf(E.nvml_state, sizeof(E.nvml_state), "%s/nvml.state", E.agent_dir);
    snprintf(E.nvml_log, sizeof(E.nvml_log), "%s/nvml.log", E.agent_dir);
    snprintf(E.nvml_busy, sizeof(E.nvml_busy), "%s/nvml.busy", E.agent_dir);
    snprintf(E.nvml_xid, sizeof(E.nvml_xid), "%s/nvml.xid", E.agent_dir);
    snprintf(E.boot, sizeof(E.boot), "%s/bootstrap-token", E.agent_dir);
    snprintf(E.alog, sizeof(E.alog), "%s/agent.log", E.agent_dir);
    mkdir(E.agent_dir, 0755);
    mkdir(E.dp, 0755);
    mkdir(E.cdi, 0755);
    mkdir(E.cg, 0755);
    mkdir(E.sys, 0755);
    /* an HGX A100: 8 cards on NVSwitches (12 links each); Xid 13 (an application's) on card 5
     * and 79 (fallen off the bus) on card 6 */
    for (int g = 0; g < 8; g++) {
        snprintf(E.uuid[g], sizeof(E.uuid[g]), "GPU-a100a100-0000-4000-8000-%012d", g);
        off += (size_t)snprintf(text + off, sizeof(text) - off,
                                "gpu %s 00000000:%02X:00.0 81920 0 NVIDIA A100-SXM4-80GB\n"
                                "nvswitch %d 12\n",
                                E.uuid[g], 0x10 + g * 0x10, g);
    }
    snprintf(text + off, sizeof(text) - off, "xid 5 13\nxid 6 79\n");
    if (h_policy(&E.d, "apiVersion: nvidia.com/v1\nkind: GpuClusterPolicy\n"
                       "metadata: {name: gpu-cluster-policy}\n"
                       "spec:\n  mig: {strategy: mixed}\n  devices:\n"
                       "    - {name: A100-SXM4-80GB, migEnabled: true, migProfiles: [1g.10gb]}\n"))
        return -1;
    if (h_write(E.nvml_cfg, text) || h_write(E.nvml_busy, "") || h_write(E.boot, BOOT "\n") ||
        h_start(&E.d))
        return -1;
    E.k = fake_kubelet_start(E.dp);
    if (!E.k)
        return -1;
    snprintf(E.podres, sizeof(E.podres), "%s", fake_kubelet_podres(E.k));
    start_agent();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (E.agent)
        kill_agent();
    fake_kubelet_stop(E.k);
    h_stop(&E.d);
    h_cleanup(&E.d);
    return 0;
}

static json_t *get(const char *path, const char *token, long status)
{
    struct answer a;
    assert_int_equal(h_call(&E.d, "GET", path, token, NULL, &a), 0);
    if (a.status != status)
        print_error("GET %s: %ld %s\n", path, a.status, a.body);
    assert_int_equal(a.status, status);
    json_t *j = json_incref(a.json);
    h_answer_free(&a);
    return j;
}

static long post(const char *path, const char *token, const char *body)
{
    struct answer a;
    assert_int_equal(h_call(&E.d, "POST", path, token, body, &a), 0);
    long s = a.status;
    h_answer_free(&a);
    return s;
}

static int file_has(const char *path, const char *needle)
{
    char *s = t_slurp(path, NULL);
    int has = s && strstr(s, needle) != NULL;
    free(s);
    return has;
}

/* Waits up to @ms for the agent's node to have registered resource @res with the fake kubelet. */
static void wait_registered(const char *res, int ms)
{
    if (!fake_kubelet_endpoint(E.k, res, ms)) {
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "cat %s >&2", E.alog);
        if (system(cmd)) {
        }
        fail_msg("%s never registered", res);
    }
}

/* The node's token, as the agent keeps it in --state-dir/token, into @token (128 bytes). */
static void node_token(char *token)
{
    char tokpath[200];
    snprintf(tokpath, sizeof(tokpath), "%s/token", E.state);
    FILE *f = fopen(tokpath, "r");
    assert_non_null(f);
    assert_non_null(fgets(token, 128, f));
    fclose(f);
    token[strcspn(token, "\n")] = '\0';
}

static void test_registers(void **state)
{
    (void)state;
    wait_registered("nvidia.com/gpu", 20000);
    char token[128];
    node_token(token);
    assert_int_equal(strlen(token), 64);
    json_t *n = get("/v1/nodes/" NODE, TOKEN_ADMIN, 200);
    assert_true(json_is_true(json_object_get(n, "ready")));
    assert_true(json_is_true(json_object_get(n, "heartbeats")));
    json_t *agent = json_object_get(n, "agent");
    assert_int_equal(json_integer_value(json_object_get(agent, "gpus")), 8);
    assert_string_equal(json_string_value(json_object_get(agent, "gpuModel")), "A100-SXM4-80GB");
    json_t *groups = json_object_get(json_object_get(agent, "topology"), "nvlinkGroups");
    assert_int_equal(json_array_size(groups), 1); /* NVSwitch: one group of 8 */
    json_decref(n);
    /* the node's token reaches its own node only; the bootstrap token no longer changes it */
    assert_int_equal(post("/v1/nodes/" NODE "/heartbeat", token, "{}"), 200);
    assert_int_equal(post("/v1/nodes/" NODE "/heartbeat", BOOT, "{}"), 403);
    assert_int_equal(post("/v1/nodes/" NODE "/register", BOOT, "{\"gpus\": 8}"), 403);
    json_t *refused = get("/v1/pods", token, 403); /* says what it reaches, not this route */
    assert_non_null(strstr(json_string_value(json_object_get(refused, "error")),
                           "reaches only the node agent's routes, under /v1/nodes/NAME/, and not "
                           "this one"));
    json_decref(refused);
    json_decref(get("/v1/nodes/" NODE "/pods", BOOT, 403));
    json_decref(get("/v1/nodes/" NODE "/pods", token, 200));
    struct answer a; /* a count that contradicts the inventory, and no model named */
    assert_int_equal(
        h_call(&E.d, "POST", "/v1/nodes/" NODE "/register", token, "{\"gpus\": 4}", &a), 0);
    assert_int_equal(a.status, 409);
    assert_non_null(strstr(a.body, "its agent found 4 cards (no gpuModel given)\""));
    h_answer_free(&a);
    /* the CDI spec lists every card; the bad Xid marked card 6 and the application one did not */
    char cdi[200];
    snprintf(cdi, sizeof(cdi), "%s/gpusched.io-gpu.json", E.cdi);
    assert_true(file_has(cdi, E.uuid[7]));
    assert_true(file_has(cdi, "/dev/nvidia7"));
    for (int i = 0; i < 100; i++) {
        n = get("/v1/nodes/" NODE, TOKEN_ADMIN, 200);
        size_t bad = json_array_size(json_object_get(n, "unhealthy_gpus"));
        json_decref(n);
        if (bad)
            break;
        sleep_ms(100);
    }
    n = get("/v1/nodes/" NODE, TOKEN_ADMIN, 200);
    json_t *bad = json_object_get(n, "unhealthy_gpus");
    assert_int_equal(json_array_size(bad), 1);
    assert_int_equal(json_integer_value(json_array_get(bad, 0)), 6);
    json_decref(n);
    struct fk_device dev[64];
    int nd = fake_kubelet_list(E.k, "nvidia.com/gpu", dev, 64);
    assert_int_equal(nd, 32); /* 8 cards x 4 replicas */
    for (int i = 0; i < nd; i++)
        assert_int_equal(dev[i].healthy, i / 4 != 6);
}

static void submit(const char *name, int gpus, int cores)
{
    char *body = h_pod("team-a", name, gpus, cores);
    assert_int_equal(post("/v1/pods", TOKEN_A, body), 201);
    free(body);
}

/* The cards gpuschedd bound pod @name to, as NVIDIA_VISIBLE_DEVICES names them. */
static void visible_of(const char *name, char *out, size_t n)
{
    char path[128];
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    json_t *p = get(path, TOKEN_A, 200), *g;
    size_t i, off = 0;
    out[0] = '\0';
    json_array_foreach(json_object_get(p, "gpus"), i, g) off +=
        (size_t)snprintf(out + off, n - off, "%s%s", i ? "," : "", E.uuid[json_integer_value(g)]);
    json_decref(p);
}

/* The uid gpuschedd gave pod @name. */
static void uid_of(const char *name, char *out, size_t n)
{
    char path[128];
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    json_t *p = get(path, TOKEN_A, 200);
    snprintf(out, n, "%s", json_string_value(json_object_get(p, "uid")));
    json_decref(p);
}

static void delete_pod(const char *name)
{
    char path[128];
    struct answer a;
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    assert_int_equal(h_call(&E.d, "DELETE", path, TOKEN_A, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    h_answer_free(&a);
}

/* Submits Pod @pod (owned), expecting 201. */
static void submit_json(json_t *pod)
{
    char *body = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    struct answer ans;
    assert_int_equal(h_call(&E.d, "POST", "/v1/pods", TOKEN_A, body, &ans), 0);
    if (ans.status != 201)
        print_error("%s\n", ans.body);
    assert_int_equal(ans.status, 201);
    h_answer_free(&ans);
    free(body);
}

/* Waits up to 30 s for file @path to hold @text: the agent writes it at one of its syncs, each
 * an HTTP read and NVML calls, which take seconds on a loaded machine under a sanitizer. */
static int wait_file(const char *path, const char *text)
{
    for (int i = 0; i < 300; i++) {
        if (file_has(path, text))
            return 1;
        sleep_ms(100);
    }
    return 0;
}

/* kubelet admits pod team-a/@name, of one container of @n devices, once the agent has seen the
 * pod bound (or fails after 30 s: a sync of a loaded machine under a sanitizer takes seconds). */
static int admit(const char *name, const char *res, int n, int ignore, struct fk_alloc *a)
{
    char err[512], pod[128];
    int rc = -1;
    snprintf(pod, sizeof(pod), "team-a/%s", name);
    for (int i = 0; i < 300 && rc; i++) {
        rc = fake_kubelet_admit(E.k, pod, res, n, ignore, a, err, sizeof(err));
        if (rc)
            sleep_ms(100);
    }
    if (rc)
        print_error("admit: %s\n", err);
    return rc;
}

/*
 * Pods bound to the node at the same moment, admitted by kubelet in another order, with its
 * preference followed or not: each container gets its own pod's cards, and a pod gpuschedd did
 * not bind gets none.
 */
static void test_two_pods_same_moment(void **state)
{
    (void)state;
    struct fk_alloc a;
    char want[512], err[512];
    submit("whole-a", 2, 0);
    submit("whole-b", 1, 0);
    sleep_ms(500); /* the agent reads both bindings in one sync */
    /* kubelet happens to admit whole-b first */
    assert_int_equal(admit("whole-b", "nvidia.com/gpu", 1, 0, &a), 0);
    assert_string_equal(a.pod, "team-a/whole-b");
    visible_of("whole-b", want, sizeof(want));
    assert_string_equal(fk_env(&a, "NVIDIA_VISIBLE_DEVICES"), want);
    assert_null(fk_env(&a, "LD_PRELOAD")); /* a whole card has no share to enforce */
    for (int i = 0; i < a.nids; i++)
        snprintf(E.b_ids[E.nb_ids++], sizeof(E.b_ids[0]), "%s", a.ids[i]);
    assert_int_equal(admit("whole-a", "nvidia.com/gpu", 2, 0, &a), 0);
    assert_string_equal(a.pod, "team-a/whole-a");
    visible_of("whole-a", want, sizeof(want));
    assert_string_equal(fk_env(&a, "NVIDIA_VISIBLE_DEVICES"), want);

    /* two of the same shape: kubelet admits the later-bound one first, ignoring the preference
     * (it takes the first free device, one-c's by its name), then the other */
    submit("one-c", 1, 0);
    submit("one-d", 1, 0);
    sleep_ms(500);
    assert_int_equal(admit("one-d", "nvidia.com/gpu", 1, 1, &a), 0);
    assert_string_equal(a.pod, "team-a/one-d");
    visible_of("one-d", want, sizeof(want));
    assert_string_equal(fk_env(&a, "NVIDIA_VISIBLE_DEVICES"), want);
    assert_int_equal(admit("one-c", "nvidia.com/gpu", 1, 0, &a), 0);
    assert_string_equal(a.pod, "team-a/one-c");
    visible_of("one-c", want, sizeof(want));
    assert_string_equal(fk_env(&a, "NVIDIA_VISIBLE_DEVICES"), want);
    /* a pod kubelet runs that gpuschedd never bound asks for a card: refused */
    assert_int_equal(
        fake_kubelet_admit(E.k, "team-a/stranger", "nvidia.com/gpu", 1, 0, &a, err, sizeof(err)),
        9);
    assert_non_null(strstr(err, "no pod bound to this node that kubelet has waits"));
}

/*
 * A pod of an init container and two app containers, one card each: gpuschedd binds it two cards
 * (kubelet reuses the init container's for the first app container), and each container gets its
 * own card of the two, as kubelet asks for them one Allocate per container.
 */
static void test_pod_of_three_containers(void **state)
{
    (void)state;
    json_t *one = json_pack("{s:{s:i, s:s, s:s}}", "limits", "nvidia.com/gpu", 1, "cpu", "1",
                            "memory", "1Gi");
    submit_json(json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:O}], s:[{s:s, s:O}, {s:s, "
                          "s:O}]}}",
                          "apiVersion", "v1", "kind", "Pod", "metadata", "name", "trio-h",
                          "namespace", "team-a", "spec", "initContainers", "name", "fetch",
                          "resources", one, "containers", "name", "train", "resources", one, "name",
                          "eval", "resources", one));
    json_decref(one);
    char want[512], err[512];
    visible_of("trio-h", want, sizeof(want));
    assert_non_null(strchr(want, ',')); /* two cards */
    struct fk_container c[3] = {{1, 1}, {1, 0}, {1, 0}};
    struct fk_alloc a[3];
    int rc = -1;
    for (int i = 0; i < 300 && rc; i++) { /* as admit() */
        rc = fake_kubelet_admit_pod(E.k, "team-a/trio-h", "nvidia.com/gpu", c, 3, 0, a, err,
                                    sizeof(err));
        if (rc)
            sleep_ms(100);
    }
    if (rc)
        print_error("admit: %s\n", err);
    assert_int_equal(rc, 0);
    for (int i = 0; i < 3; i++)
        assert_string_equal(a[i].pod, "team-a/trio-h");
    const char *fetch = fk_env(&a[0], "NVIDIA_VISIBLE_DEVICES");
    const char *train = fk_env(&a[1], "NVIDIA_VISIBLE_DEVICES");
    const char *eval = fk_env(&a[2], "NVIDIA_VISIBLE_DEVICES");
    assert_string_equal(a[1].ids[0], a[0].ids[0]); /* kubelet reused the init container's */
    assert_string_equal(train, fetch);
    assert_string_not_equal(train, eval);
    char got[512];
    snprintf(got, sizeof(got), "%s,%s", train, eval);
    if (strcmp(got, want))
        snprintf(got, sizeof(got), "%s,%s", eval, train);
    assert_string_equal(got, want); /* together, exactly the pod's two cards */
    /* gone: its cards are free for the pods below */
    delete_pod("trio-h");
    fake_kubelet_release(E.k, "team-a/trio-h", a, 3);
}

/* A shared slice: MPS client limits, libgpushare's limits and its preload; CPU weights. */
static void test_share_and_cgroup(void **state)
{
    (void)state;
    struct fk_alloc a;
    char want[512], path[420], buf[420];
    submit("share-e", 1, 30);
    sleep_ms(500);
    assert_int_equal(admit("share-e", "nvidia.com/gpu", 1, 0, &a), 0);
    assert_string_equal(a.pod, "team-a/share-e");
    for (int i = 0; i < a.nids; i++)
        snprintf(E.share_ids[E.nshare++], sizeof(E.share_ids[0]), "%s", a.ids[i]);
    visible_of("share-e", want, sizeof(want));
    assert_string_equal(fk_env(&a, "NVIDIA_VISIBLE_DEVICES"), want);
    assert_string_equal(fk_env(&a, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "30");
    assert_string_equal(fk_env(&a, "CUDA_MPS_PIPE_DIRECTORY"), "/tmp/nvidia-mps");
    char cores[600];
    snprintf(cores, sizeof(cores), "%s=30", want);
    assert_string_equal(fk_env(&a, GS_GPUSHARE_ENV_CORES_PERCENT), cores);
    assert_string_equal(fk_env(&a, "LD_PRELOAD"), "/usr/lib/gpusched/libgpushare.so");
    assert_string_equal(fk_env(&a, GS_GPUSHARE_ENV_CONTEXT_MIB), "700"); /* --context-mib */
    assert_string_equal(fk_env(&a, GS_GPUSHARE_ENV_REGION), "/run/gpushare/region");
    char uid[64], region[300];
    uid_of("share-e", uid, sizeof(uid));
    snprintf(region, sizeof(region), "%s/%s", E.pods, uid);
    int shim = 0, folder = 0;
    for (int i = 0; i < a.nmount; i++) {
        shim |= !strcmp(a.host[i], "/usr/lib/gpusched/libgpushare.so") && a.ro[i];
        folder |= !strcmp(a.host[i], region) && !strcmp(a.ctr[i], "/run/gpushare") && !a.ro[i];
    }
    assert_true(shim);
    assert_true(folder); /* the pod's own region folder, read-write */
    struct stat st;
    assert_int_equal(stat(region, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0711);
    snprintf(region + strlen(region), sizeof(region) - strlen(region), "/region");
    assert_int_equal(stat(region, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0666); /* any user of the pod's containers */
    assert_int_equal(stat(E.pods, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700); /* and nobody else on the host */
    /* kubelet's pod cgroups, 1 CPU each (cpu.weight 39): share-e Burstable under the systemd
     * driver, whole-b Guaranteed under cgroupfs; team-a weighs 4 over the lightest tenant's 2 */
    char e_dir[400], b_dir[400], cmd[900];
    uid_of("share-e", uid, sizeof(uid));
    for (char *c = uid; *c; c++)
        *c = *c == '-' ? '_' : *c;
    snprintf(e_dir, sizeof(e_dir),
             "%s/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice", E.cg,
             uid);
    uid_of("whole-b", uid, sizeof(uid));
    snprintf(b_dir, sizeof(b_dir), "%s/kubepods/pod%s", E.cg, uid);
    snprintf(cmd, sizeof(cmd), "mkdir -p %s %s", e_dir, b_dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof(path), "%s/cpu.weight", e_dir);
    assert_int_equal(h_write(path, "39\n"), 0);
    assert_true(wait_file(path, "78"));
    snprintf(buf, sizeof(buf), "%s/cpu.weight", b_dir);
    assert_int_equal(h_write(buf, "39\n"), 0);
    assert_true(wait_file(buf, "78"));
    /* kubelet (or systemd) writes share-e's weight again: the agent scales it again */
    assert_int_equal(h_write(path, "40\n"), 0);
    assert_true(wait_file(path, "80"));
}

/* A MIG pod: the agent turns the card's MIG mode on, creates the instance, and offers it. */
/* A MIG pod of profile 1g.10gb named @name, submitted. */
static void submit_mig(const char *name)
{
    submit_json(json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:{s:{s:i, s:s, s:s}}}]}}",
                          "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
                          "team-a", "spec", "containers", "name", "main", "resources", "limits",
                          "nvidia.com/mig-1g.10gb", 1, "cpu", "1", "memory", "1Gi"));
}

/* The card and first slice of MIG pod @name's instance. */
static void mig_of(const char *name, int *card, int *start)
{
    char path[128];
    snprintf(path, sizeof(path), "/v1/pods/team-a/%s", name);
    json_t *p = get(path, TOKEN_A, 200);
    *card = (int)json_integer_value(json_array_get(json_object_get(p, "gpus"), 0));
    *start = (int)json_integer_value(json_object_get(json_object_get(p, "mig"), "start"));
    json_decref(p);
}

static void test_mig(void **state)
{
    (void)state;
    int card, start;
    submit_mig("mig-f");
    mig_of("mig-f", &card, &start);
    wait_registered("nvidia.com/mig-1g.10gb", 30000);
    char line[200];
    snprintf(line, sizeof(line), "nvmlDeviceSetMigMode gpu=%d mode=1", card);
    assert_true(file_has(E.nvml_log, line));
    snprintf(line, sizeof(line), "CreateGpuInstanceWithPlacement gpu=%d profile=19 start=%d", card,
             start);
    assert_true(file_has(E.nvml_log, line));
    snprintf(line, sizeof(line), "CreateComputeInstance gpu=%d start=%d", card, start);
    assert_true(file_has(E.nvml_log, line));
    struct fk_alloc a;
    assert_int_equal(admit("mig-f", "nvidia.com/mig-1g.10gb", 1, 0, &a), 0);
    assert_string_equal(a.pod, "team-a/mig-f");
    assert_memory_equal(fk_env(&a, "NVIDIA_VISIBLE_DEVICES"), "MIG-", 4);
}

/*
 * MIG beside running work: while mig-f's instance runs a process, a second pod's instance is
 * created in free slices of the same card; when that pod goes, its instance is destroyed only
 * once it runs nothing, and mig-f's is never touched.
 */
static void test_mig_beside_work(void **state)
{
    (void)state;
    int card, start, card2, start2;
    char busy[64], line[200], kept[200];
    mig_of("mig-f", &card, &start);
    snprintf(busy, sizeof(busy), "%d %d\n", card, start);
    assert_int_equal(h_write(E.nvml_busy, busy), 0);
    submit_mig("mig-i");
    mig_of("mig-i", &card2, &start2);
    assert_int_equal(card2, card); /* every other card is taken */
    snprintf(line, sizeof(line), "CreateGpuInstanceWithPlacement gpu=%d profile=19 start=%d", card,
             start2);
    assert_true(wait_file(E.nvml_log, line));
    snprintf(busy, sizeof(busy), "%d %d\n%d %d\n", card, start, card, start2);
    assert_int_equal(h_write(E.nvml_busy, busy), 0);
    delete_pod("mig-i");
    assert_true(wait_file(E.alog, "runs work no bound pod holds"));
    sleep_ms(500); /* a few more of the agent's syncs */
    snprintf(line, sizeof(line), "nvmlGpuInstanceDestroy gpu=%d start=%d", card, start2);
    assert_false(file_has(E.nvml_log, line));
    snprintf(line, sizeof(line), "nvmlComputeInstanceDestroy gpu=%d start=%d", card, start2);
    assert_false(file_has(E.nvml_log, line));
    snprintf(busy, sizeof(busy), "%d %d\n", card, start); /* its process ends */
    assert_int_equal(h_write(E.nvml_busy, busy), 0);
    snprintf(line, sizeof(line), "nvmlGpuInstanceDestroy gpu=%d start=%d", card, start2);
    assert_true(wait_file(E.nvml_log, line));
    snprintf(kept, sizeof(kept), "nvmlGpuInstanceDestroy gpu=%d start=%d", card, start);
    assert_false(file_has(E.nvml_log, kept));
    assert_int_equal(h_write(E.nvml_busy, ""), 0);
}

/* Killed and restarted at once: what kubelet holds is not handed out again. */
static void test_restart_no_double(void **state)
{
    (void)state;
    char path[300], err[512];
    kill_agent();
    /* the killed agent's socket file stays behind; the new agent's is a new file */
    snprintf(path, sizeof(path), "%s/gpusched-nvidia.com_gpu.sock", E.dp);
    unlink(path);
    start_agent();
    for (int i = 0; i < 200 && access(path, F_OK); i++)
        sleep_ms(100);
    assert_int_equal(access(path, F_OK), 0);
    /* it registered the MIG instance of mig-f, which gpuschedd placed: nothing to warn of */
    int card, start;
    mig_of("mig-f", &card, &start);
    json_t *n = get("/v1/nodes/" NODE, TOKEN_ADMIN, 200);
    json_t *g = json_array_get(
        json_object_get(json_object_get(json_object_get(n, "agent"), "topology"), "gpus"),
        (size_t)card);
    assert_true(json_array_size(json_object_get(g, "migInstances")) >= 1);
    assert_null(json_object_get(n, "agent_warnings"));
    json_decref(n);
    assert_false(h_log_has(&E.d, "MIG instances gpuschedd did not place"));
    /* the restarted agent knows every bound pod has its cards: nobody waits */
    struct fk_alloc a;
    int rc = fake_kubelet_admit(E.k, "team-a/nobody", "nvidia.com/gpu", 1, 0, &a, err, sizeof(err));
    assert_int_equal(rc, 9); /* FAILED_PRECONDITION: nobody waits */
    /* every card is taken or bad now: a slice joins share-e's card, on a replica of its own */
    submit("late-g", 1, 20);
    json_t *p = get("/v1/pods/team-a/late-g", TOKEN_A, 200);
    assert_string_equal(json_string_value(json_object_get(p, "state")), "running");
    json_decref(p);
    assert_int_equal(admit("late-g", "nvidia.com/gpu", 1, 0, &a), 0);
    assert_string_equal(a.pod, "team-a/late-g");
    char want[512];
    visible_of("late-g", want, sizeof(want));
    assert_string_equal(fk_env(&a, "NVIDIA_VISIBLE_DEVICES"), want);
    assert_string_equal(fk_env(&a, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "20");
    for (int i = 0; i < E.nb_ids; i++)
        assert_string_not_equal(a.ids[0], E.b_ids[i]);
    for (int i = 0; i < E.nshare; i++) /* not share-e's replica of the same card */
        assert_string_not_equal(a.ids[0], E.share_ids[i]);
    /* late-g goes: its region folder goes with it, share-e's stays */
    char uid[64], gone[300], kept[300];
    uid_of("late-g", uid, sizeof(uid));
    snprintf(gone, sizeof(gone), "%s/%s", E.pods, uid);
    assert_int_equal(access(gone, F_OK), 0);
    uid_of("share-e", uid, sizeof(uid));
    snprintf(kept, sizeof(kept), "%s/%s/region", E.pods, uid);
    delete_pod("late-g");
    fake_kubelet_release(E.k, "team-a/late-g", &a, 1);
    for (int i = 0; i < 300 && access(gone, F_OK) == 0; i++) /* at a sync, as wait_file() */
        sleep_ms(100);
    assert_int_equal(access(gone, F_OK), -1);
    assert_int_equal(access(kept, F_OK), 0);
}

/* Killed: NotReady once the grace period passes; restarted: Ready again. */
static void test_not_ready_and_back(void **state)
{
    (void)state;
    kill_agent();
    assert_int_equal(post("/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 41}"), 200);
    json_t *n = get("/v1/nodes/" NODE, TOKEN_ADMIN, 200);
    assert_true(json_is_false(json_object_get(n, "ready")));
    /* on the manual clock, as every other time gpuschedd shows */
    assert_true(!strncmp(json_string_value(json_object_get(n, "ready_changed")), "1970-", 5));
    json_decref(n);
    start_agent();
    int ready = 0;
    for (int i = 0; i < 100 && !ready; i++) {
        sleep_ms(100);
        n = get("/v1/nodes/" NODE, TOKEN_ADMIN, 200);
        ready = json_is_true(json_object_get(n, "ready"));
        json_decref(n);
    }
    assert_true(ready);
}

/* gpuschedd's unhealthy cards of the node as a bit mask. */
static unsigned unhealthy_mask(void)
{
    json_t *n = get("/v1/nodes/" NODE, TOKEN_ADMIN, 200), *v;
    size_t k;
    unsigned m = 0;
    json_array_foreach(json_object_get(n, "unhealthy_gpus"), k, v) m |= 1u << json_integer_value(v);
    json_decref(n);
    return m;
}

/* Restarted, the agent reports healthy each card gpuschedd holds unhealthy that has had no Xid
 * since (card 2, marked with its token before), and not card 6, whose Xid comes again. */
static void test_restart_clears_health(void **state)
{
    (void)state;
    char token[128];
    node_token(token);
    /* the node's own token reads its node, and no other's */
    json_t *n = get("/v1/nodes/" NODE, token, 200);
    assert_true(json_is_array(json_object_get(n, "unhealthy_gpus")));
    assert_null(json_object_get(n, "agent"));
    json_decref(n);
    n = get("/v1/nodes/" NODE, BOOT, 403); /* the bootstrap token registers, reads nothing */
    assert_non_null(strstr(json_string_value(json_object_get(n, "error")),
                           "the DaemonConfig's nodeToken registers nodes"));
    json_decref(n);
    /* Xid 62 drains the card: its pods run on */
    assert_int_equal(
        post("/v1/nodes/" NODE "/gpus/2/health", token, "{\"healthy\": false, \"xid\": 62}"), 200);
    assert_int_equal(unhealthy_mask(), (1u << 2) | (1u << 6));
    kill_agent();
    start_agent();
    unsigned m = 0;
    for (int i = 0; i < 150 && (m = unhealthy_mask()) != 1u << 6; i++)
        sleep_ms(100);
    if (m != 1u << 6) {
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "cat %s >&2", E.alog);
        if (system(cmd)) {
        }
    }
    assert_int_equal(m, 1u << 6);
    assert_true(file_has(E.alog, "GPU 2: no Xid since the agent started: reported healthy"));
    assert_false(file_has(E.alog, "GPU 6: no Xid since the agent started"));
    sleep_ms(500); /* and it stays so */
    assert_int_equal(unhealthy_mask(), 1u << 6);
}

/* Runs the agent with @args (NULL-terminated, at most 28) and no gpuschedd to talk to (unless
 * @args give --server); its exit status must be @status and its standard error hold @want. */
static void agent_says(int status, const char *want, const char *const *args)
{
    const char *argv[32] = {getenv("GPUSCHED_AGENT_BIN"), "--server", "http://127.0.0.1:1"};
    int n = 3;
    for (const char *const *a = args; *a; a++) /* a flag given twice is refused; --discover */
        n = strcmp(*a, "--server") && strcmp(*a, "--discover") ? n : 1; /* reads no --server */
    for (; *args && n < 31; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    struct t_run r;
    t_run(argv, &r);
    if (r.status != status || !strstr(r.err, want))
        print_error("want status %d and \"%s\", got %d: %s\n", status, want, r.status, r.err);
    assert_int_equal(r.status, status);
    assert_non_null(strstr(r.err, want));
    assert_null(strchr(r.err, '\x1b')); /* escaped, as every message is */
    t_run_free(&r);
}

/* Bad usage is one message naming what is wrong, exit status 2, before anything is sent. */
static void test_bad_usage(void **state)
{
    (void)state;
    char longname[401], smi[200], text[300];
    memset(longname, 'a', 400);
    longname[400] = '\0';
    const char *not_k8s = "is not a Kubernetes node name";
    agent_says(2, not_k8s, (const char *[]){"--node", "a b", NULL});
    agent_says(2, "\"h-1/../a-1\" (from --node) is not",
               (const char *[]){"--node", "h-1/../a-1", NULL});
    agent_says(2, not_k8s, (const char *[]){"--node", longname, NULL});
    agent_says(2, "\"\" (from --node)", (const char *[]){"--node", "", NULL});
    agent_says(2, "node name \"a\\x1b[31mb\"", (const char *[]){"--node", "a\x1b[31mb", NULL});
    agent_says(2, "unexpected argument \"stray\"", (const char *[]){"--node", NODE, "stray", NULL});
    agent_says(2, "--json is the form of --discover's tree: give --discover too",
               (const char *[]){"--json", NULL});
    agent_says(2, "--yaml is the form", (const char *[]){"--yaml", NULL});
    agent_says(2, "--json and --yaml: give one of them",
               (const char *[]){"--discover", "--json", "--yaml", NULL});
    agent_says(2, "unknown option \"--bogus\\x07\"", (const char *[]){"--bogus\a", NULL});
    agent_says(2, "missing value for option \"--node\"", (const char *[]){"--node", NULL});
    /* a flag given twice: the last one won, unsaid */
    agent_says(2, "--node given twice: give it once",
               (const char *[]){"--node", "a", "--node", "b", NULL});
    agent_says(2, "--replicas given twice",
               (const char *[]){"--replicas", "4", "--replicas", "5", NULL});
    agent_says(2, "--dry-run given twice", (const char *[]){"--dry-run", "--dry-run", NULL});
    agent_says(2, "run gpusched-agent --help", (const char *[]){"--json", "--json", NULL});
    /* a server that is no URL was found out only after discovery, as "no answer" */
    agent_says(2, "--server \"\": expected http:// or https:// (gpuschedd's base URL)",
               (const char *[]){"--node", NODE, "--server", "", NULL});
    /* integers: a word is not a number; a heartbeat past half gpuschedd's grace is refused */
    agent_says(2, "--replicas abc: not a number", (const char *[]){"--replicas", "abc", NULL});
    agent_says(2, "--sync-ms 5x: not a number", (const char *[]){"--sync-ms", "5x", NULL});
    /* a blank or a sign before the digits is refused as one after them is */
    agent_says(2, "--replicas  5: not a number", (const char *[]){"--replicas", " 5", NULL});
    agent_says(2, "--replicas 5 : not a number", (const char *[]){"--replicas", "5 ", NULL});
    agent_says(2, "--sync-ms +5: not a number", (const char *[]){"--sync-ms", "+5", NULL});
    agent_says(2, "--heartbeat-seconds : not a number",
               (const char *[]){"--heartbeat-seconds", "", NULL});
    agent_says(2, "--replicas 0: out of range", (const char *[]){"--replicas", "0", NULL});
    agent_says(2, "--heartbeat-seconds 3600: out of range (expected 1..20",
               (const char *[]){"--heartbeat-seconds", "3600", NULL});
    agent_says(2, "--heartbeat-seconds 21: out of range",
               (const char *[]){"--heartbeat-seconds", "21", NULL});
    agent_says(2, "--sysfs /nonexistent: No such file or directory",
               (const char *[]){"--discover", "--sysfs", "/nonexistent", NULL});
    agent_says(2, "--sysfs tests/meson.build: not a folder",
               (const char *[]){"--discover", "--sysfs", "tests/meson.build", NULL});
    agent_says(2, "--hwloc-xml /nonexistent: No such file or directory",
               (const char *[]){"--discover", "--hwloc-xml", "/nonexistent", NULL});
    agent_says(2, "--hwloc-xml tests: not a file",
               (const char *[]){"--discover", "--hwloc-xml", "tests", NULL});
    /* what --discover does not read is not taken and ignored */
    agent_says(2, "--server is not read by --discover, which prints the GPUs found and exits",
               (const char *[]){"--discover", "--server", "ftp://x", NULL});
    agent_says(2, "--replicas is not read by --discover",
               (const char *[]){"--discover", "--replicas", "2", NULL});
    agent_says(2, "--server \"ftp://127.0.0.1:1\": expected http",
               (const char *[]){"--node", NODE, "--server", "ftp://127.0.0.1:1", NULL});
    /* nvidia-smi's text names no model, and the agent has no --model to give one */
    snprintf(smi, sizeof(smi), "%s/nvidia-smi", E.agent_dir);
    snprintf(text, sizeof(text),
             "#!/bin/sh\ncat tests/data/topo/h100_4gpu_nv6_4nic_pix_per_gpu.txt\n");
    t_write(smi, text);
    chmod(smi, 0755);
    agent_says(1, "--yaml needs the GPU model, which nvidia-smi does not give; print --json",
               (const char *[]){"--discover", "--yaml", "--nvml-lib", "/nonexistent",
                                "--nvidia-smi", smi, "--node", NODE, NULL});
    /* paths go into fixed buffers with the names the agent adds: a longer one is refused */
    memset(longname, 'd', 201);
    longname[201] = '\0';
    agent_says(2, "--state-dir: at most 200 bytes",
               (const char *[]){"--node", NODE, "--state-dir", longname, NULL});
    /* the files registration needs are read at the start, each named with its option */
    agent_says(2, "--ca-file /nonexistent/ca.pem: No such file or directory",
               (const char *[]){"--node", NODE, "--ca-file", "/nonexistent/ca.pem", NULL});
    agent_says(2, "--bootstrap-token-file /nonexistent/t: No such file or directory",
               (const char *[]){"--node", NODE, "--bootstrap-token-file", "/nonexistent/t", NULL});
    char boot[200];
    snprintf(boot, sizeof(boot), "%s/bad-bootstrap", E.agent_dir);
    t_write(boot, "");
    agent_says(2, "bad-bootstrap: empty: expected a bearer token",
               (const char *[]){"--node", NODE, "--bootstrap-token-file", boot, NULL});
    /* a folder is no empty file */
    snprintf(text, sizeof(text), "--bootstrap-token-file %s: Is a directory", E.agent_dir);
    agent_says(2, text,
               (const char *[]){"--node", NODE, "--bootstrap-token-file", E.agent_dir, NULL});
    t_write(boot, "bad token with spaces\n");
    agent_says(2, "bad-bootstrap: not a token: expected a bearer token",
               (const char *[]){"--node", NODE, "--bootstrap-token-file", boot, NULL});
}

/* The arguments that make --discover read tests/data/node/pcie3.hwloc.xml on any machine. */
#define HWLOC_ONLY                                                                                 \
    "--nvml-lib", "/nonexistent", "--nvidia-smi", "false", "--hwloc-xml",                          \
        "tests/data/node/pcie3.hwloc.xml"

/* --server takes a base URL of up to 512 bytes, which it sends to whole; past that it is
 * refused, naming the cap. */
static void test_server_length(void **state)
{
    (void)state;
    char url[600], st[200], boot[200], want[700];
    snprintf(st, sizeof(st), "%s/state-long-url", E.agent_dir);
    snprintf(boot, sizeof(boot), "%s/bootstrap-token", E.agent_dir);
    int n = snprintf(url, sizeof(url), "http://127.0.0.1:1/");
    memset(url + n, 'p', 512 - (size_t)n);
    url[512] = '\0';
    snprintf(want, sizeof(want), "cannot reach gpuschedd at %s to register node", url);
    agent_says(1, want,
               (const char *[]){"--node", NODE, "--server", url, "--state-dir", st,
                                "--bootstrap-token-file", boot, "--no-device-plugin", HWLOC_ONLY,
                                NULL});
    memcpy(url + 512, "p", 2);
    agent_says(2, "longer than 512 bytes (gpuschedd's base URL)",
               (const char *[]){"--node", NODE, "--server", url, NULL});
}

/* --help gives each discovery input's default, as the other lines do. */
static void test_help_defaults(void **state)
{
    (void)state;
    struct t_run r;
    t_run((const char *[]){getenv("GPUSCHED_AGENT_BIN"), "--help", NULL}, &r);
    assert_int_equal(r.status, 0);
    if (!strstr(r.out, "(libnvidia-ml.so.1)") || !strstr(r.out, "(nvidia-smi)") ||
        !strstr(r.out, "(/sys)"))
        print_error("%s", r.out);
    assert_non_null(strstr(r.out, "(libnvidia-ml.so.1)"));
    assert_non_null(strstr(r.out, "(nvidia-smi)"));
    assert_non_null(strstr(r.out, "(/sys)"));
    t_run_free(&r);
}

/* Each integer flag's range, at both ends: its highest value taken, one more refused, with the
 * range in the message. */
static void test_int_ranges(void **state)
{
    (void)state;
    static const struct {
        const char *flag, *max, *over, *range;
    } f[] = {{"--replicas", "64", "65", "(expected 1..64)"},
             {"--heartbeat-seconds", "20", "21", "(expected 1..20: gpuschedd marks"},
             {"--sync-ms", "86400000", "86400001", "(expected 1..86400000)"}};
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        char want[200];
        /* taken: the first thing refused is the --server checked after them */
        for (int k = 0; k < 2; k++)
            agent_says(2, "--server \"ftp://127.0.0.1:1\": expected http",
                       (const char *[]){"--node", NODE, f[i].flag, k ? "1" : f[i].max, "--server",
                                        "ftp://127.0.0.1:1", NULL});
        snprintf(want, sizeof(want), "%s %s: out of range %s", f[i].flag, f[i].over, f[i].range);
        agent_says(2, want, (const char *[]){"--discover", f[i].flag, f[i].over, NULL});
        snprintf(want, sizeof(want), "%s 0: out of range %s", f[i].flag, f[i].range);
        agent_says(2, want, (const char *[]){"--discover", f[i].flag, "0", NULL});
    }
}

/* Bad usage ends with where the options are; a value refused (a file missing) does not. */
static void test_usage_hint(void **state)
{
    (void)state;
    const char *hint = "gpusched-agent: run gpusched-agent --help for its options\n";
    agent_says(2, "--replicas abc: not a number (expected 1..64)\n",
               (const char *[]){"--replicas", "abc", NULL});
    agent_says(2, hint, (const char *[]){"--replicas", "abc", NULL});
    agent_says(2, hint, (const char *[]){"--bogus", NULL});
    agent_says(2, hint, (const char *[]){"--node", NODE, "stray", NULL});
    agent_says(2, hint, (const char *[]){"--json", NULL});
    struct t_run r;
    t_run((const char *[]){getenv("GPUSCHED_AGENT_BIN"), "--bogus", NULL}, &r);
    assert_int_equal(r.status, 2); /* the message, then the hint: two lines */
    assert_non_null(strstr(r.err, "unknown option \"--bogus\""));
    assert_non_null(strstr(r.err, hint));
    assert_true(strstr(r.err, hint) > strstr(r.err, "unknown option"));
    assert_int_equal(strchr(r.err, '\n') - r.err + 1 + strlen(hint), strlen(r.err));
    t_run_free(&r);
    t_run((const char *[]){getenv("GPUSCHED_AGENT_BIN"), "--node", NODE, "--ca-file",
                           "/nonexistent/ca.pem", NULL},
          &r);
    assert_int_equal(r.status, 2);
    assert_null(strstr(r.err, "--help"));
    t_run_free(&r);
}

/* The environment without $NODE_NAME, and with @extra (NULL: none) added, into @env (64). */
static void env_without_node(char **env, char *extra)
{
    int n = 0;
    for (char **e = environ; *e && n < 62; e++)
        if (strncmp(*e, "NODE_NAME=", 10))
            env[n++] = *e;
    if (extra)
        env[n++] = extra;
    env[n] = NULL;
}

/* --discover's name only labels the tree: a $NODE_NAME or host name that is not a Kubernetes
 * node name is lower-cased as kubelet does and labels it, with a note where it is still not
 * one; a --node given is checked as ever. */
static void test_discover_label(void **state)
{
    (void)state;
    const char *bin = getenv("GPUSCHED_AGENT_BIN");
    char *env[64];
    struct t_run r;
    env_without_node(env, "NODE_NAME=GPU_Box-1");
    t_run_env((const char *[]){bin, "--discover", HWLOC_ONLY, NULL}, env, &r);
    if (r.status != 0 || !strstr(r.out, "\ngpu_box-1: 3 GPUs"))
        print_error("got %d: %s%s\n", r.status, r.out, r.err);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\ngpu_box-1: 3 GPUs"));
    assert_non_null(strstr(r.err, "$NODE_NAME \"GPU_Box-1\" is not a Kubernetes node name"));
    t_run_free(&r);
    /* capitals alone: lower-cased, it is a node name, and nothing is said */
    env_without_node(env, "NODE_NAME=GPU-Box-1");
    t_run_env((const char *[]){bin, "--discover", "--json", HWLOC_ONLY, NULL}, env, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"name\": \"gpu-box-1\""));
    assert_null(strstr(r.err, "node name")); /* only the sources passed over are said */
    t_run_free(&r);
    /* control characters are escaped in the label as in every message */
    env_without_node(env, "NODE_NAME=a\x1b[31mb");
    t_run_env((const char *[]){bin, "--discover", HWLOC_ONLY, NULL}, env, &r);
    assert_int_equal(r.status, 0);
    assert_null(strchr(r.out, '\x1b'));
    assert_non_null(strstr(r.out, "\na\\x1b[31mb: 3 GPUs"));
    t_run_free(&r);
    /* past 253 bytes: cut to label the tree, and said (the cut name was a node name) */
    char long_name[320] = "NODE_NAME=";
    memset(long_name + strlen(long_name), 'x', 300);
    env_without_node(env, long_name);
    t_run_env((const char *[]){bin, "--discover", HWLOC_ONLY, NULL}, env, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "is not a Kubernetes node name"));
    t_run_free(&r);
    /* the host name, in a UTS namespace of its own where the machine allows one */
    if (access("/usr/bin/unshare", X_OK) == 0) {
        env_without_node(env, NULL);
        t_run_env((const char *[]){"/usr/bin/unshare", "-Ur", "--uts", "true", NULL}, env, &r);
        int can = r.status == 0;
        t_run_free(&r);
        if (can) {
            t_run_env((const char *[]){"/usr/bin/unshare", "-Ur", "--uts", "/bin/sh", "-c",
                                       "hostname GPU-Node-1 && exec \"$0\" \"$@\"", bin,
                                       "--discover", HWLOC_ONLY, NULL},
                      env, &r);
            if (r.status != 0)
                print_error("got %d: %s%s\n", r.status, r.out, r.err);
            assert_int_equal(r.status, 0);
            assert_non_null(strstr(r.out, "\ngpu-node-1: 3 GPUs"));
            t_run_free(&r);
        } else {
            print_message("no user namespace here: the host name's case is left to $NODE_NAME\n");
        }
    }
    /* --node is what the user asked for: checked, --discover or not */
    agent_says(2, "\"GPU_Box-1\" (from --node) is not a Kubernetes node name",
               (const char *[]){"--discover", "--node", "GPU_Box-1", HWLOC_ONLY, NULL});
}

/* gpuschedd's answer to a registration without a token the agent can send in a header (none,
 * or one with a line break that would add headers of its own), or a success other than 201
 * Created, is refused, and no token kept; no answer at all is said to be that. */
static void test_odd_registration(void **state)
{
    (void)state;
    char server[64], smi[200], text[300], sd[200], tok[240];
    snprintf(smi, sizeof(smi), "%s/nvidia-smi", E.agent_dir);
    snprintf(text, sizeof(text),
             "#!/bin/sh\ncat tests/data/topo/h100_4gpu_nv6_4nic_pix_per_gpu.txt\n");
    t_write(smi, text);
    chmod(smi, 0755);
    snprintf(sd, sizeof(sd), "%s/odd-state", E.agent_dir);
    snprintf(tok, sizeof(tok), "%s/token", sd);
    const char *answers[] = {"{\"token\": \"abc\\r\\nX-Evil: 1\"}", "{}", "hello",
                             "{\"token\": 5, \"x\":", "{\"token\": \"good-token\"}"};
    const char *argv[] = {getenv("GPUSCHED_AGENT_BIN"),
                          "--server",
                          server,
                          "--node",
                          NODE,
                          "--bootstrap-token-file",
                          E.boot,
                          "--state-dir",
                          sd,
                          "--nvml-lib",
                          "/nonexistent",
                          "--nvidia-smi",
                          smi,
                          "--no-device-plugin",
                          NULL};
    for (int i = 0; i < 5; i++) {
        pid_t pid = t_odd_server(1, i < 3 ? 201 : 200, answers[i], server);
        struct t_run r;
        t_run(argv, &r);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        if (r.status != 1 || !strstr(r.err, "holds no valid \"token\""))
            print_error("answer %s: status %d: %s\n", answers[i], r.status, r.err);
        assert_int_equal(r.status, 1);
        assert_non_null(strstr(r.err, "holds no valid \"token\""));
        assert_int_equal(access(tok, F_OK), -1);
        t_run_free(&r);
    }
    /* a refusal is said with gpuschedd's reason (its body's "error", which ends the line), not
     * its body, which may carry a token */
    pid_t pid = t_odd_server(1, 409, "{\"error\": \"gpus: 4, the inventory says 8\"}\n", server);
    struct t_run r;
    t_run(argv, &r);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    if (!strstr(r.err, "the inventory says 8\n") || strstr(r.err, "\\x0a"))
        print_error("status %d: %s\n", r.status, r.err);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "(HTTP 409): gpus: 4, the inventory says 8\n"));
    assert_null(strstr(r.err, "\\x0a"));
    assert_non_null(strstr(r.err, "gpusched-agent: discovery: "));
    t_run_free(&r);
    agent_says(1, "cannot reach gpuschedd at http://127.0.0.1:1 to register node",
               (const char *[]){"--node", NODE, "--bootstrap-token-file", E.boot, "--state-dir", sd,
                                "--nvml-lib", "/nonexistent", "--nvidia-smi", smi,
                                "--no-device-plugin", NULL});
    /* with curl's reason, as docs/node-agent.md quotes it (it quoted words curl does not say) */
    agent_says(1, "to register node " NODE ": Failed to connect to 127.0.0.1 port 1",
               (const char *[]){"--node", NODE, "--bootstrap-token-file", E.boot, "--state-dir", sd,
                                "--nvml-lib", "/nonexistent", "--nvidia-smi", smi,
                                "--no-device-plugin", NULL});
    char *page = t_slurp("docs/node-agent.md", NULL);
    assert_non_null(page);
    for (char *c = page; *c; c++) /* the page wraps its lines */
        *c = *c == '\n' ? ' ' : *c;
    if (!strstr(page, "to register node gpu-1: Failed to connect to 127.0.0.1 port 8080 after"))
        fail_msg("docs/node-agent.md does not quote the unreachable message as the agent says it");
    free(page);
    /* a token file that is no bearer token is not sent either */
    t_write(tok, "abc def\n");
    agent_says(1, "not a node token",
               (const char *[]){"--node", NODE, "--state-dir", sd, "--nvml-lib", "/nonexistent",
                                "--nvidia-smi", smi, NULL});
}

/* Runs the agent with @argv against a server that answers its one request with HTTP @status and
 * @body; its exit status must be @code, its standard error hold @want and never "node-secret",
 * the token the answers carry. */
static void agent_answered(const char **argv, char *server, int status, const char *body, int code,
                           const char *want)
{
    pid_t pid = t_odd_server(1, status, body, server);
    struct t_run r;
    t_run(argv, &r);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    if (r.status != code || !strstr(r.err, want) || strstr(r.err, "node-secret"))
        print_error("want %d and \"%s\", got %d: %s\n", code, want, r.status, r.err);
    assert_int_equal(r.status, code);
    assert_non_null(strstr(r.err, want));
    assert_null(strstr(r.err, "node-secret"));
    t_run_free(&r);
}

/* --state-dir is checked before anything is sent (a file is refused, exit status 2, naming the
 * flag): a registration whose token cannot be kept leaves the node registered, and the bootstrap
 * token refused for it. Where keeping the token fails all the same, the agent says exactly that;
 * no token, nor an answer or reason holding one, is ever said. */
static void test_state_dir_checked(void **state)
{
    (void)state;
    char server[64], file[200], sd[200], tok[240], want[600];
    const char *ok = "{\"node\": \"" NODE "\", \"token\": \"node-secret-0123456789abcdef\"}";
    snprintf(file, sizeof(file), "%s/state-is-a-file", E.agent_dir);
    t_write(file, "");
    const char *argv[] = {getenv("GPUSCHED_AGENT_BIN"),
                          "--server",
                          server,
                          "--node",
                          NODE,
                          "--bootstrap-token-file",
                          E.boot,
                          "--state-dir",
                          file,
                          "--no-device-plugin",
                          HWLOC_ONLY,
                          NULL};
    snprintf(want, sizeof(want), "--state-dir %s: not a folder", file);
    agent_answered(argv, server, 201, ok, 2, want);
    /* its token file a link into a folder that is not there: registered, then not kept */
    snprintf(sd, sizeof(sd), "%s/state-lost-token", E.agent_dir);
    snprintf(tok, sizeof(tok), "%s/token", sd);
    mkdir(sd, 0700);
    assert_int_equal(symlink("gone/token", tok), 0);
    argv[8] = sd;
    snprintf(want, sizeof(want),
             "node " NODE " registered, but the token could not be kept in %s: No such file or "
             "directory; an admin must register the node again",
             sd);
    agent_answered(argv, server, 201, ok, 1, want);
    /* a token file that takes no write (/dev/full) is not left behind for the next start to send */
    assert_int_equal(unlink(tok), 0);
    assert_int_equal(symlink("/dev/full", tok), 0);
    snprintf(want, sizeof(want), "could not be kept in %s: No space left on device", sd);
    agent_answered(argv, server, 201, ok, 1, want);
    assert_int_equal(access(tok, F_OK), -1);
    /* a refusal is said with its reason, not its body, and a reason quoting a token not at all */
    agent_answered(argv, server, 403,
                   "{\"error\": \"node " NODE " is registered\", \"token\": \"node-secret-1\"}", 1,
                   "(HTTP 403): node " NODE " is registered\n");
    agent_answered(argv, server, 403, "{\"error\": \"" BOOT " is not node-secret-2\"}", 1,
                   "(HTTP 403): a reason that quotes a token, not shown\n");
}

/* Occurrences of @needle in file @path. */
static int count_in(const char *path, const char *needle)
{
    char *s = t_slurp(path, NULL);
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, needle)) != NULL; p++)
        n++;
    free(s);
    return n;
}

/* Occurrences of @needle in the agent's log. */
static int log_count(const char *needle)
{
    return count_in(E.alog, needle);
}

/* kubelet gone: the agent names the socket it misses once, not at every sync, and registers
 * again when kubelet is back; its device plugin's lines carry its name as its others do. */
static void test_kubelet_gone(void **state)
{
    (void)state;
    char sock[200], want[300];
    assert_true(log_count("gpusched-agent: registered nvidia.com/gpu at ") > 0);
    snprintf(sock, sizeof(sock), "%s/kubelet.sock", E.dp);
    snprintf(want, sizeof(want), "device plugin: kubelet's socket %s is missing", sock);
    int before = log_count("gpusched-agent: registered nvidia.com/gpu at ");
    fake_kubelet_stop(E.k);
    unlink(sock);
    for (int i = 0; i < 100 && log_count(want) == 0; i++)
        sleep_ms(100);
    sleep_ms(1500); /* ten more syncs */
    if (log_count(want) != 1)
        print_error("%d times \"%s\"\n", log_count(want), want);
    assert_int_equal(log_count(want), 1);
    E.k = fake_kubelet_start(E.dp);
    assert_non_null(E.k);
    wait_registered("nvidia.com/gpu", 30000); /* at a sync, as wait_file() */
    /* kubelet holds the registration before the agent has its answer and writes its line */
    for (int i = 0; i < 50 && log_count("gpusched-agent: registered nvidia.com/gpu at ") <= before;
         i++)
        sleep_ms(100);
    assert_true(log_count("gpusched-agent: registered nvidia.com/gpu at ") > before);
}

/* gpuschedd gone once the node registered: each repeated request (the heartbeat, the read of the
 * bound pods) says its failure once, with curl's reason, however many syncs fail after it (a
 * sync every millisecond). */
static void test_unreachable_said_once(void **state)
{
    (void)state;
    const char *bin = getenv("GPUSCHED_AGENT_BIN");
    char server[64], sd[200], log[200], pods[200];
    snprintf(sd, sizeof(sd), "%s/state-gone", E.agent_dir);
    snprintf(pods, sizeof(pods), "%s/pods-gone", E.agent_dir);
    snprintf(log, sizeof(log), "%s/agent-gone.log", E.agent_dir);
    pid_t srv = t_odd_server(1, 201, "{\"token\": \"node-token-of-gone-0123456789\"}", server);
    char *argv[] = {(char *)bin,
                    "--server",
                    server,
                    "--node",
                    NODE,
                    "--bootstrap-token-file",
                    E.boot,
                    "--state-dir",
                    sd,
                    "--pod-dir",
                    pods,
                    "--no-device-plugin",
                    "--cdi-dir",
                    "",
                    "--cgroup-root",
                    "",
                    "--sync-ms",
                    "1",
                    "--heartbeat-seconds",
                    "1",
                    HWLOC_ONLY,
                    NULL};
    posix_spawn_file_actions_t fa;
    pid_t pid;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    assert_int_equal(posix_spawn(&pid, bin, &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    waitpid(srv, NULL, 0); /* it answered the registration and is gone */
    const char *beat = "heartbeat: unreachable: ", *read = "bound to " NODE ": unreachable: ";
    for (int i = 0; i < 100 && !(count_in(log, beat) && count_in(log, read)); i++)
        sleep_ms(100);
    /* a connection reset as the server's socket closes is another failure than a refused one,
     * and said too: the counts start after a heartbeat (each second) has met the refusal */
    sleep_ms(1200);
    int beats = count_in(log, beat), reads = count_in(log, read);
    sleep_ms(1500); /* a thousand syncs, a heartbeat or two */
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    if (!beats || !reads || count_in(log, beat) != beats || count_in(log, read) != reads ||
        count_in(log, "HTTP 0") || count_in(log, " \n"))
        fail_msg("said %d, %d then %d, %d times:\n%s", beats, reads, count_in(log, beat),
                 count_in(log, read), t_slurp(log, NULL));
}

/* The node's token revoked (an admin registered the node again): the agent says once that
 * gpuschedd refuses it, with gpuschedd's reason and what to do, sends nothing more (each refusal
 * counts towards the lockout of its address), and goes on once the new token is in its file. */
static void test_token_refused(void **state)
{
    (void)state;
    struct answer a;
    char tokpath[200], token[128];
    assert_int_equal(
        h_call(&E.d, "POST", "/v1/nodes/" NODE "/register", TOKEN_ADMIN, "{\"gpus\": 8}", &a), 0);
    assert_int_equal(a.status, 201);
    snprintf(token, sizeof(token), "%s\n", json_string_value(json_object_get(a.json, "token")));
    h_answer_free(&a);
    const char *refused = "HTTP 401: the bearer token is not valid: gpuschedd refuses the node's "
                          "token (an admin registered the node again";
    for (int i = 0; i < 50 && !log_count(refused); i++)
        sleep_ms(100);
    /* an Xid meanwhile is not sent with the refused token: it waits for the next one */
    t_write(E.nvml_xid, "3 79\n");
    const char *held = "GPU 3: Xid 79: not reported to gpuschedd until the node has a new token";
    for (int i = 0; i < 50 && !log_count(held); i++)
        sleep_ms(100);
    assert_int_equal(log_count(held), 1);
    sleep_ms(1500); /* ten syncs, a heartbeat */
    if (log_count(refused) != 1 || log_count("HTTP 401") != 1)
        fail_msg("said %d times: %s", log_count(refused), t_slurp(E.alog, NULL));
    assert_int_equal(unhealthy_mask() & (1u << 3), 0);
    snprintf(tokpath, sizeof(tokpath), "%s/token", E.state);
    t_write(tokpath, token);
    /* the heartbeat or the read of the pods met the 401, the other sent nothing since: one is
     * said to work again */
    for (int i = 0; i < 50 && !log_count(": works again"); i++)
        sleep_ms(100);
    assert_int_equal(log_count("took the node's new token from "), 1);
    assert_int_equal(log_count(": works again"), 1);
    for (int i = 0; i < 50 && !(unhealthy_mask() & (1u << 3)); i++)
        sleep_ms(100);
    assert_int_equal(unhealthy_mask() & (1u << 3), 1u << 3);
    assert_int_equal(log_count("GPU 3: Xid 79: reported unhealthy (held until then)"), 1);
    json_t *n = get("/v1/nodes/" NODE, TOKEN_ADMIN, 200);
    assert_true(json_is_true(json_object_get(n, "ready")));
    json_decref(n);
}

/* gpuschedd not answering when an Xid comes: the report is kept and sent again a heartbeat
 * later, once gpuschedd answers (a failed card left unsaid would still take pods). */
static void test_xid_sent_again(void **state)
{
    (void)state;
    assert_int_equal(unhealthy_mask() & (1u << 5), 0);
    kill(E.d.pid, SIGSTOP);              /* its socket takes the request; no answer comes (10 s) */
    t_write(E.nvml_xid, "3 79\n5 48\n"); /* line 1 was test_token_refused's */
    const char *kept = "GPU 5: gpuschedd did not take the health report: ";
    for (int i = 0; i < 150 && !log_count(kept); i++)
        sleep_ms(100);
    kill(E.d.pid, SIGCONT);
    assert_int_equal(log_count(kept), 1);
    assert_int_equal(log_count("(sent again later)"), 1);
    for (int i = 0; i < 100 && !(unhealthy_mask() & (1u << 5)); i++)
        sleep_ms(100);
    assert_int_equal(unhealthy_mask() & (1u << 5), 1u << 5);
    for (int i = 0; i < 50 && !log_count("GPU 5: Xid 48: reported unhealthy (held until then)");
         i++)
        sleep_ms(100);
    assert_int_equal(log_count("GPU 5: Xid 48: reported unhealthy (held until then)"), 1);
}

/* An event NVML gives with a value no Xid has (past 65535): the card is reported failed all the
 * same, without an Xid (gpuschedd takes it at its worst), not refused for the number. */
static void test_xid_out_of_range(void **state)
{
    (void)state;
    assert_int_equal(unhealthy_mask() & (1u << 7), 0);
    t_write(E.nvml_xid, "3 79\n5 48\n7 70000\n"); /* lines 1-2 were the tests' before */
    for (int i = 0; i < 100 && !(unhealthy_mask() & (1u << 7)); i++)
        sleep_ms(100);
    assert_int_equal(unhealthy_mask() & (1u << 7), 1u << 7);
    assert_int_equal(log_count("GPU 7: Xid 70000: reported unhealthy"), 1);
}

/* Runs the agent on the fake NVML machine @machine (tests/data/node/) as node @node of gpuschedd
 * @d until it says it registered or was refused, or exits; its standard error into @err. */
static void agent_registers(const struct daemon *d, const char *machine, const char *node,
                            char *err, size_t errcap)
{
    const char *bin = getenv("GPUSCHED_AGENT_BIN"), *lib = getenv("FAKE_NVML_LIB");
    char server[64], sd[200], pods[200], log[200], cfg[200];
    assert_non_null(bin);
    assert_non_null(lib);
    snprintf(server, sizeof(server), "http://127.0.0.1:%d", d->port);
    snprintf(sd, sizeof(sd), "%s/state-%s", d->dir, node);
    snprintf(pods, sizeof(pods), "%s/pods-%s", d->dir, node);
    snprintf(log, sizeof(log), "%s/agent-%s.log", d->dir, node);
    snprintf(cfg, sizeof(cfg), "FAKE_NVML_CONFIG=tests/data/node/%s", machine);
    char *env[64];
    int n = 0;
    for (char **e = environ; *e && n < 62; e++)
        if (strncmp(*e, "FAKE_NVML_", 10))
            env[n++] = *e;
    env[n++] = cfg;
    env[n] = NULL;
    char *argv[] = {(char *)bin,
                    "--server",
                    server,
                    "--node",
                    (char *)node,
                    "--bootstrap-token-file",
                    E.boot,
                    "--state-dir",
                    sd,
                    "--no-device-plugin",
                    "--cgroup-root",
                    "",
                    "--cdi-dir",
                    "",
                    "--pod-dir",
                    pods,
                    "--dry-run",
                    "--nvml-lib",
                    (char *)lib,
                    "--sysfs",
                    E.sys,
                    NULL};
    posix_spawn_file_actions_t fa;
    pid_t pid;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    assert_int_equal(posix_spawn(&pid, bin, &fa, NULL, argv, env), 0);
    posix_spawn_file_actions_destroy(&fa);
    int done = 0;
    for (int i = 0; i < 600 && !done; i++) { /* 60 s: NVML discovery is slow under sanitizers */
        done = file_has(log, "registered with") || file_has(log, "refused") ||
               waitpid(pid, NULL, WNOHANG) == pid;
        if (!done)
            sleep_ms(100);
    }
    if (kill(pid, SIGKILL) == 0)
        waitpid(pid, NULL, 0);
    char *s = t_slurp(log, NULL);
    snprintf(err, errcap, "%s", s ? s : "");
    free(s);
}

/* --discover names each source that failed before the one it used, with the reason, one line
 * each on standard error: an nvidia-smi that failed (or timed out) is not passed over in silence
 * when hwloc then finds the cards. */
static void test_discover_says_fallbacks(void **state)
{
    (void)state;
    char smi[200];
    struct t_run r;
    snprintf(smi, sizeof(smi), "%s/nvidia-smi-fails", E.agent_dir);
    t_write(smi, "#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n");
    chmod(smi, 0755);
    t_run((const char *[]){getenv("GPUSCHED_AGENT_BIN"), "--discover", "--node", NODE, "--nvml-lib",
                           "/nonexistent/libnvidia-ml.so.1", "--nvidia-smi", smi, "--hwloc-xml",
                           "tests/data/node/pcie3.hwloc.xml", NULL},
          &r);
    const char *nvml = strstr(r.err, "gpusched-agent: discovery: "),
               *second = nvml ? strstr(nvml + 1, "gpusched-agent: discovery: ") : NULL;
    if (r.status != 0 || !second || !strstr(r.err, "/nonexistent/libnvidia-ml.so.1") ||
        !strstr(second, "nvidia-smi-fails topo -m") || !strstr(second, "9"))
        print_error("got %d: %s%s\n", r.status, r.out, r.err);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, NODE ": 3 GPUs"));
    assert_non_null(second);
    assert_non_null(strstr(nvml, "discovery: NVML: cannot load /nonexistent/libnvidia-ml.so.1"));
    assert_true(strchr(nvml, '\n') < second); /* one line each */
    assert_non_null(strstr(second, "nvidia-smi-fails topo -m"));
    /* what it said on standard error, why it failed */
    assert_non_null(strstr(second, "exited with status 9: NVIDIA-SMI has failed"));
    assert_non_null(strstr(second, "trying hwloc\n"));
    assert_null(strstr(second + 1, "gpusched-agent: discovery: "));
    t_run_free(&r);
}

/* Cards found through NVML register as the same machine's nvidia-smi text does: a DGX-1 whose
 * GPU2 and GPU3 share a PCIe switch (NVML's common ancestor says so; they are NVLinked, so
 * nvidia-smi would print NV2 for them) is one PCIe domain to gpuschedd too, and an HGX H100 on
 * NVSwitches registers as ever. */
static void test_nvml_machines_register(void **state)
{
    (void)state;
    struct daemon d;
    char err[4096];
    assert_int_equal(h_setup(&d, "nodeToken: " BOOT "\n"), 0);
    assert_int_equal(h_write(d.nodes, "sn,cpu_milli,memory_mib,gpu,model\n"
                                      "dgx1,80000,524288,8,V100M16\n"
                                      "hgx,96000,786432,8,H100-SXM5-80GB\n"
                                      "a100,96000,786432,8,A100-SXM4-80GB\n"),
                     0);
    assert_int_equal(h_start(&d), 0);
    agent_registers(&d, "dgx1.nvml", "dgx1", err, sizeof(err));
    if (!strstr(err, "node dgx1 registered with"))
        print_error("%s", err);
    assert_non_null(strstr(err, "node dgx1 registered with"));
    struct answer a;
    assert_int_equal(h_call(&d, "GET", "/v1/nodes/dgx1", TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    json_t *topo = json_object_get(json_object_get(a.json, "agent"), "topology");
    json_t *want = json_loads("[[0], [1], [2, 3], [4], [5], [6], [7]]", 0, NULL);
    assert_true(json_equal(json_object_get(topo, "pcieDomains"), want));
    json_decref(want);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(a.json, "pcie_domain"), 3)),
                     2); /* placement reads it */
    h_answer_free(&a);
    agent_registers(&d, "hgx.nvml", "hgx", err, sizeof(err));
    if (!strstr(err, "node hgx registered with"))
        print_error("%s", err);
    assert_non_null(strstr(err, "node hgx registered with"));
    /* no MIG instance reported, none planned: nothing to warn of */
    assert_false(h_log_has(&d, "MIG instances gpuschedd did not place"));
    assert_int_equal(h_call(&d, "GET", "/v1/nodes/dgx1", TOKEN_ADMIN, NULL, &a), 0);
    assert_null(json_object_get(a.json, "agent_warnings"));
    h_answer_free(&a);
    /* a card holding a MIG instance gpuschedd did not place (left by another tool, or by
     * gpuschedd before its store was lost): gpuschedd places whole pods there, so it says so */
    char body[4096];
    size_t off = (size_t)snprintf(body, sizeof(body),
                                  "{\"gpus\": 8, \"gpuModel\": \"A100-SXM4-80GB\", "
                                  "\"topology\": {\"gpus\": [");
    for (int g = 0; g < 8; g++)
        off += (size_t)snprintf(body + off, sizeof(body) - off,
                                "%s{\"index\": %d, \"pcieDomain\": %d, \"nvlinkGroup\": null%s}",
                                g ? ", " : "", g, g,
                                g == 3 ? ", \"migMode\": true, \"migInstances\": [{\"uuid\": "
                                         "\"MIG-x\", \"giProfile\": 19, \"start\": 6, "
                                         "\"size\": 1, \"memoryMiB\": 9856}]"
                                       : "");
    snprintf(body + off, sizeof(body) - off, "]}}");
    assert_int_equal(h_call(&d, "POST", "/v1/nodes/a100/register", BOOT, body, &a), 0);
    if (a.status != 201)
        print_error("%ld %s\n", a.status, a.body);
    assert_int_equal(a.status, 201);
    h_answer_free(&a);
    assert_true(h_log_has(&d, "MIG instances gpuschedd did not place"));
    assert_int_equal(h_call(&d, "GET", "/v1/nodes/a100", TOKEN_ADMIN, NULL, &a), 0);
    json_t *w = json_object_get(a.json, "agent_warnings");
    assert_int_equal(json_array_size(w), 1);
    const char *text = json_string_value(json_array_get(w, 0));
    if (!text || !strstr(text, "GPU 3: its agent reported MIG instances gpuschedd did not place "
                               "(1g.10gb at slice 6)"))
        print_error("%s\n", a.body);
    assert_non_null(strstr(text, "GPU 3: its agent reported MIG instances gpuschedd did not place "
                                 "(1g.10gb at slice 6)"));
    h_answer_free(&a);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registers),
        cmocka_unit_test(test_two_pods_same_moment),
        cmocka_unit_test(test_pod_of_three_containers),
        cmocka_unit_test(test_share_and_cgroup),
        cmocka_unit_test(test_mig),
        cmocka_unit_test(test_mig_beside_work),
        cmocka_unit_test(test_restart_no_double),
        cmocka_unit_test(test_not_ready_and_back),
        cmocka_unit_test(test_restart_clears_health),
        cmocka_unit_test(test_bad_usage),
        cmocka_unit_test(test_server_length),
        cmocka_unit_test(test_help_defaults),
        cmocka_unit_test(test_int_ranges),
        cmocka_unit_test(test_usage_hint),
        cmocka_unit_test(test_discover_label),
        cmocka_unit_test(test_odd_registration),
        cmocka_unit_test(test_state_dir_checked),
        cmocka_unit_test(test_kubelet_gone),
        cmocka_unit_test(test_nvml_machines_register),
        cmocka_unit_test(test_discover_says_fallbacks),
        cmocka_unit_test(test_unreachable_said_once),
        cmocka_unit_test(test_token_refused),
        cmocka_unit_test(test_xid_sent_again),
        cmocka_unit_test(test_xid_out_of_range),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
