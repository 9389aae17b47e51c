/*
 * Tests of the node agent's parts that need no network: NVML discovery through the fake
 * libnvidia-ml.so.1 (tests/nvml/fake_nvml.c, its path in $FAKE_NVML_LIB), the fallbacks, MIG
 * calls, Xid filtering, and the plan that matches kubelet's Allocate to the pod gpuschedd bound.
 * Run from the source root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpusched/catalog.h"
#include "node/discover.h"
#include "node/isolate.h"
#include "node/plugin.h"
#include "node/fake_kubelet.h"
#include "deviceplugin.pb-c.h"
#include "node/grpcio.h"
#include "node/nvml.h"
#include "node/plan.h"

#include "common/util.h"
#include "gpusched/diag.h"
#include "gpusched/gpushare_env.h"
#include "gpusched/topo.h"
#include "gpusched/topotext.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TOPO "tests/data/topo/"
#define NODE "tests/data/node/"

static char tmp[64];

static const char *lib(void)
{
    const char *l = getenv("FAKE_NVML_LIB");
    assert_non_null(l);
    return l;
}

static struct gs_nvml *open_fake(const char *config)
{
    struct gs_nvml *n = NULL;
    struct gs_diag d;
    char state[128];
    gs_diag_init(&d);
    snprintf(state, sizeof(state), "%s/state", tmp);
    setenv("FAKE_NVML_CONFIG", config, 1);
    setenv("FAKE_NVML_STATE", state, 1);
    int rc = gs_nvml_open(lib(), &n, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    return n;
}

static struct gs_topo *discover(struct gs_nvml *n, const char *sysfs)
{
    struct gs_topo *t = malloc(sizeof(*t));
    struct gs_diag d;
    gs_diag_init(&d);
    assert_non_null(t);
    int rc = gs_nvml_discover(n, sysfs, t, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    return t;
}

static struct gs_topo *text(const char *path)
{
    struct gs_topo *t = malloc(sizeof(*t));
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_topo_load(path, t, &d), 0);
    return t;
}

static void same_tree(const struct gs_topo *a, const struct gs_topo *b)
{
    assert_int_equal(a->ngpus, b->ngpus);
    assert_memory_equal(a->pcie_domain, b->pcie_domain, (size_t)a->ngpus);
    assert_memory_equal(a->nvlink_group, b->nvlink_group, (size_t)a->ngpus);
    assert_int_equal(a->nedges, b->nedges);
    assert_memory_equal(a->edges, b->edges, (size_t)a->nedges * sizeof(a->edges[0]));
}

/* NVML of a DGX-1 and of an HGX H100 gives the tree their nvidia-smi text gives. */
static void test_nvml_same_tree_as_text(void **state)
{
    (void)state;
    struct gs_nvml *n = open_fake(NODE "dgx1.nvml");
    struct gs_topo *a = discover(n, "/nonexistent"), *b = text(TOPO "dgx1_v100_sxm2_8gpu_hybrid_"
                                                                    "cube_mesh_mlx5_legend.txt");
    same_tree(a, b);
    assert_string_equal(a->gpu[0].uuid, "GPU-d0d0d000-1111-2222-3333-000000000000");
    assert_string_equal(a->gpu[1].pci, "00000000:0E:00.0");
    assert_string_equal(a->gpu[0].name, "Tesla V100-SXM2-16GB");
    assert_int_equal(a->gpu[0].memory_mib, 16160);
    assert_int_equal(a->gpu[0].mig_mode, 0);
    assert_int_equal(a->link[0][1], GS_LINK_NODE); /* NVML tells the PCIe path text hides */
    assert_int_equal(a->link[2][3], GS_LINK_PIX);
    gs_nvml_close(n);
    free(a);
    free(b);

    n = open_fake(NODE "hgx.nvml");
    a = discover(n, "/nonexistent");
    b = text(TOPO "hgx_h100_8gpu_nv18_no_nic_legend.txt");
    same_tree(a, b);
    assert_int_equal(a->nvlinks[0][7], 18);
    assert_int_equal(a->gpu[7].mig_mode, 1);
    assert_int_equal(gs_catalog_find_product(a->gpu[0].name) >= 0, 1);
    gs_nvml_close(n);
    free(a);
    free(b);
}

static void write_file(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(s, f);
    fclose(f);
}

/* NUMA node and CPU list come from sysfs (a folder laid out like /sys). */
static void test_nvml_sysfs_locality(void **state)
{
    (void)state;
    char dir[256], f[300];
    snprintf(dir, sizeof(dir), "%s/sys/bus/pci/devices/0000:06:00.0", tmp);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "mkdir -p %s", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(f, sizeof(f), "%s/numa_node", dir);
    write_file(f, "1\n");
    snprintf(f, sizeof(f), "%s/local_cpulist", dir);
    write_file(f, "12-23,36-47\n");
    struct gs_nvml *n = open_fake(NODE "dgx1.nvml");
    snprintf(dir, sizeof(dir), "%s/sys", tmp);
    struct gs_topo *t = discover(n, dir);
    assert_int_equal(t->gpu[0].numa, 1);
    assert_string_equal(t->gpu[0].cpus, "12-23,36-47");
    assert_int_equal(t->gpu[1].numa, -1);
    gs_nvml_close(n);
    free(t);
}

static void test_nvml_missing(void **state)
{
    (void)state;
    struct gs_nvml *n = NULL;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_nvml_open("/nonexistent/libnvidia-ml.so.1", &n, &d), -ENOENT);
    assert_null(n);
    assert_non_null(strstr(d.msg, "cannot load"));
    setenv("FAKE_NVML_CONFIG", "/nonexistent", 1);
    gs_diag_init(&d);
    assert_int_equal(gs_nvml_open(lib(), &n, &d), -EIO);
    assert_non_null(strstr(d.msg, "nvmlInit_v2"));
}

/* NVML missing: nvidia-smi's text; both missing: hwloc (this machine has no NVIDIA GPU). */
static void test_discover_fallbacks(void **state)
{
    (void)state;
    char smi[256], body[512];
    snprintf(smi, sizeof(smi), "%s/nvidia-smi", tmp);
    snprintf(body, sizeof(body), "#!/bin/sh\n[ \"$1 $2\" = \"topo -m\" ] || exit 9\ncat %s\n",
             TOPO "pcie_8gpu_pix_pxb_sys_mlx5_old_legend_tabs.txt");
    write_file(smi, body);
    chmod(smi, 0755);
    struct gs_topo *t = malloc(sizeof(*t));
    struct gs_diag d;
    gs_diag_init(&d);
    struct gs_discover_opts o = {"/nonexistent/libnvidia-ml.so.1", smi, NULL, "/sys", NULL, 0};
    assert_int_equal(gs_discover(&o, t, NULL, &d), GS_FROM_SMI);
    assert_int_equal(t->ngpus, 8);
    assert_int_equal(t->npcie, 2);
    o.smi = "/nonexistent/nvidia-smi";
    gs_diag_init(&d);
    int rc = gs_discover(&o, t, NULL, &d);
    if (rc != -ENODEV) { /* a machine with NVIDIA cards: hwloc found them */
        assert_int_equal(rc, GS_FROM_HWLOC);
    } else {
        assert_non_null(strstr(d.msg, "cannot load"));
        assert_non_null(strstr(d.msg, "/nonexistent/nvidia-smi: not found"));
        assert_non_null(strstr(d.msg, "hwloc"));
    }
    /* one that fails says why, on its output as nvidia-smi does without a driver */
    snprintf(smi, sizeof(smi), "%s/nvidia-smi-no-driver", tmp);
    write_file(smi, "#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with "
                    "the NVIDIA driver.\"\necho second line\nexit 9\n");
    chmod(smi, 0755);
    o.smi = smi;
    gs_diag_init(&d);
    rc = gs_discover(&o, t, NULL, &d);
    if (rc == -ENODEV) {
        assert_non_null(strstr(d.msg, "nvidia-smi-no-driver topo -m exited with status 9: "
                                      "NVIDIA-SMI has failed because it couldn't communicate"));
        assert_null(strstr(d.msg, "second line"));
    }
    /* with NVML there, NVML wins */
    setenv("FAKE_NVML_CONFIG", NODE "dgx1.nvml", 1);
    o.nvml_lib = lib();
    struct gs_nvml *n = NULL;
    assert_int_equal(gs_discover(&o, t, &n, &d), GS_FROM_NVML);
    assert_non_null(n);
    assert_int_equal(t->nnvlink, 2);
    gs_nvml_close(n);
    free(t);
}

/* An nvidia-smi that hangs, or prints past the cap: killed and named for it, not waited on. */
static void test_discover_smi_limits(void **state)
{
    (void)state;
    char smi[256], pid_file[256], body[600];
    snprintf(smi, sizeof(smi), "%s/nvidia-smi-hangs", tmp);
    snprintf(pid_file, sizeof(pid_file), "%s/nvidia-smi-hangs.pid", tmp);
    /* a child that keeps standard output open, as a wedged driver call would */
    snprintf(body, sizeof(body), "#!/bin/sh\nsleep 60 &\necho $! > %s\nwait\n", pid_file);
    write_file(smi, body);
    chmod(smi, 0755);
    struct gs_topo *t = malloc(sizeof(*t));
    struct gs_diag d;
    struct gs_discover_opts o = {"/nonexistent/libnvidia-ml.so.1", smi, NULL, "/sys", NULL, 300};
    gs_diag_init(&d);
    int rc = gs_discover(&o, t, NULL, &d);
    if (rc == -ENODEV) { /* else hwloc found this machine's cards */
        assert_non_null(strstr(d.msg, "nvidia-smi-hangs topo -m timed out after 0.3 s: killed"));
    }
    char *pid = t_slurp(pid_file, NULL);
    assert_non_null(pid);
    /* the command's child went with it (once init has reaped it) */
    int alive = 1;
    for (int i = 0; i < 100 && alive; i++) {
        alive = kill((pid_t)atoi(pid), 0) == 0;
        struct timespec ts = {0, 20000000L};
        if (alive)
            nanosleep(&ts, NULL);
    }
    assert_false(alive);
    free(pid);
    snprintf(smi, sizeof(smi), "%s/nvidia-smi-floods", tmp);
    write_file(smi, "#!/bin/sh\nexec yes GPU0\n");
    chmod(smi, 0755);
    o.smi = smi;
    o.smi_timeout_ms = 0; /* the default: the cap, not the clock, stops it */
    gs_diag_init(&d);
    rc = gs_discover(&o, t, NULL, &d);
    if (rc == -ENODEV) {
        assert_non_null(strstr(d.msg, "nvidia-smi-floods topo -m printed more than 1048576 bytes, "
                                      "the cap: killed"));
        assert_null(strstr(d.msg, "status 141"));
    }
    free(t);
}

/* hwloc's PCI tree: a machine exported as XML, two GPUs behind one switch and one elsewhere. */
static void test_hwloc_xml(void **state)
{
    (void)state;
    struct gs_topo *t = malloc(sizeof(*t));
    struct gs_diag d;
    gs_diag_init(&d);
    int rc = gs_discover_hwloc(NODE "pcie3.hwloc.xml", t, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(t->ngpus, 3);
    assert_int_equal(t->link[0][1], GS_LINK_PIX);
    assert_int_equal(t->link[0][2], GS_LINK_PHB);
    assert_int_equal(t->npcie, 2);
    assert_int_equal(t->pcie_domain[1], 0);
    assert_int_equal(t->pcie_domain[2], 1);
    assert_string_equal(t->gpu[2].pci, "00000000:81:00.0");
    free(t);
}

static int lines_with(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof(line), f))
        n += strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return n;
}

/* MIG: an instance created (GPU and compute instance), listed, refused where it overlaps, and
 * destroyed; --dry-run prints the calls and makes none. */
static void test_mig_calls(void **state)
{
    (void)state;
    char log[128], dry[128];
    snprintf(log, sizeof(log), "%s/nvml.log", tmp);
    snprintf(dry, sizeof(dry), "%s/dry.txt", tmp);
    unlink(log);
    setenv("FAKE_NVML_LOG", log, 1);
    struct gs_nvml *n = open_fake(NODE "hgx.nvml");
    struct gs_diag d;
    gs_diag_init(&d);
    FILE *f = fopen(dry, "w");
    assert_int_equal(gs_nvml_mig_create(n, 7, gs_nvml_profile_of(3, 4, 8, 0), 4, 4, f, &d), 0);
    fclose(f);
    assert_int_equal(lines_with(dry, "nvmlDeviceCreateGpuInstanceWithPlacement(gpu=7, profileId=9, "
                                     "placement={start=4, size=4})"),
                     1);
    assert_int_equal(lines_with(log, "nvml"), 0);
    assert_int_equal(gs_nvml_mig_create(n, 7, gs_nvml_profile_of(3, 4, 8, 0), 4, 4, NULL, &d), 0);
    assert_int_equal(lines_with(log, "CreateGpuInstanceWithPlacement gpu=7 profile=9 start=4"), 1);
    assert_int_equal(lines_with(log, "CreateComputeInstance gpu=7 start=4 profile=2"), 1);
    assert_int_equal(gs_nvml_mig_create(n, 7, gs_nvml_profile_of(2, 2, 8, 0), 4, 2, NULL, &d),
                     -EIO);
    struct gs_nvml_gi gi[7];
    assert_int_equal(gs_nvml_mig_list(n, 7, gi, 7, &d), 1);
    assert_int_equal(gi[0].profile_id, 9);
    assert_int_equal(gi[0].start, 4);
    struct gs_topo *t = discover(n, "/nonexistent");
    assert_int_equal(t->gpu[7].nmig, 1);
    assert_string_equal(t->gpu[7].mig[0].profile, "3g.40gb");
    assert_memory_equal(t->gpu[7].mig[0].uuid, "MIG-", 4);
    free(t);
    assert_int_equal(gs_nvml_mig_destroy(n, 7, 0, NULL, &d), -ENOENT);
    /* a process on the instance, which the card's own handle does not show: never destroyed,
     * not even in a dry run; another instance may be created on the card meanwhile */
    char busy[128];
    snprintf(busy, sizeof(busy), "%s/busy", tmp);
    write_file(busy, "7 4\n");
    setenv("FAKE_NVML_BUSY", busy, 1);
    assert_int_equal(gs_nvml_busy(n, 7, &d), 0);
    f = fopen(dry, "w");
    assert_int_equal(gs_nvml_mig_destroy(n, 7, 4, f, &d), -EBUSY);
    fclose(f);
    assert_int_equal(lines_with(dry, "Destroy"), 0);
    assert_int_equal(gs_nvml_mig_destroy(n, 7, 4, NULL, &d), -EBUSY);
    assert_non_null(strstr(d.msg, "GPU 7: the MIG instance at slice 4 runs processes"));
    assert_int_equal(lines_with(log, "Destroy"), 0);
    assert_int_equal(gs_nvml_mig_create(n, 7, gs_nvml_profile_of(1, 1, 8, 0), 0, 1, NULL, &d), 0);
    assert_int_equal(gs_nvml_mig_destroy(n, 7, 0, NULL, &d), 0);
    write_file(busy, "");
    assert_int_equal(gs_nvml_mig_destroy(n, 7, 4, NULL, &d), 0);
    unsetenv("FAKE_NVML_BUSY");
    assert_int_equal(lines_with(log, "nvmlComputeInstanceDestroy gpu=7 start=4"), 1);
    assert_int_equal(lines_with(log, "nvmlComputeInstanceDestroy gpu=7 start=0"), 1);
    assert_int_equal(lines_with(log, "nvmlGpuInstanceDestroy gpu=7 start=4"), 1);
    assert_int_equal(gs_nvml_mig_list(n, 7, gi, 7, &d), 0);
    assert_int_equal(gs_nvml_busy(n, 1, &d), 1);
    assert_int_equal(gs_nvml_busy(n, 0, &d), 0);
    gs_nvml_close(n);
    unsetenv("FAKE_NVML_LOG");
}

/* Xid events: the application Xids are told apart from the ones that mean a bad card. */
static void test_xid(void **state)
{
    (void)state;
    struct gs_nvml *n = open_fake(NODE "hgx.nvml");
    struct gs_diag d;
    gs_diag_init(&d);
    int gpu, bad = 0, seen = 0;
    unsigned long long xid;
    while (gs_nvml_xid_wait(n, 1, &gpu, &xid, &d) == 1) {
        seen++;
        if (!gs_xid_is_application(xid))
            bad |= 1 << gpu;
    }
    assert_int_equal(seen, 5);
    assert_int_equal(bad, (1 << 3) | (1 << 4)); /* 79 on GPU3, 48 on GPU4; 13, 31, 109 pass */
    for (unsigned x = 0; x < 200; x++)
        assert_int_equal(gs_xid_is_application(x),
                         x == 13 || x == 31 || x == 43 || x == 45 || x == 68 || x == 109);
    gs_nvml_close(n);
}

/* A node of four cards: 0-2 whole or shared, 3 in MIG mode with one 2g.20gb instance at 4; 0, 1
 * and 3 A100s, 2 an H100 and a card of no model the catalog knows. */
static void plan_topo(struct gs_topo *t)
{
    gs_topo_init(t);
    t->ngpus = 4;
    for (int g = 0; g < 4; g++) {
        snprintf(t->gpu[g].uuid, sizeof(t->gpu[g].uuid),
                 "GPU-0000000%d-aaaa-bbbb-cccc-dddddddddddd", g);
        snprintf(t->gpu[g].name, sizeof(t->gpu[g].name), "%s",
                 g == 2 ? "NVIDIA H100 80GB HBM3" : "NVIDIA A100-SXM4-80GB");
        t->gpu[g].mig_mode = g == 3;
    }
    t->gpu[3].nmig = 1;
    snprintf(t->gpu[3].mig[0].uuid, sizeof(t->gpu[3].mig[0].uuid),
             "MIG-11111111-2222-3333-4444-555555555555");
    snprintf(t->gpu[3].mig[0].profile, sizeof(t->gpu[3].mig[0].profile), "2g.20gb");
    t->gpu[3].mig[0].start = 4;
}

static const char *pods_json =
    "[{\"namespace\":\"a\",\"name\":\"pa\",\"uid\":\"u-a\",\"tenant\":\"t1\",\"gpus\":[0],"
    "\"cpu_milli\":2000},"
    " {\"namespace\":\"b\",\"name\":\"pb\",\"uid\":\"u-b\",\"tenant\":\"t2\",\"gpus\":[1]},"
    " {\"namespace\":\"c\",\"name\":\"pc\",\"uid\":\"u-c\",\"tenant\":\"t1\",\"gpus\":[2],"
    "\"gpumem_mib\":10240,\"gpucores\":30},"
    " {\"namespace\":\"d\",\"name\":\"pd\",\"uid\":\"u-d\",\"tenant\":\"t2\",\"gpus\":[2],"
    "\"gpumem_mib\":20480,\"gpucores\":50},"
    " {\"namespace\":\"m\",\"name\":\"pm\",\"uid\":\"u-m\",\"tenant\":\"t1\",\"gpus\":[3],"
    "\"mig\":{\"profile\":\"2g.20gb\",\"start\":4}}]";

static struct gs_plan *new_plan(const struct gs_topo *t, const char *json)
{
    static struct gs_plan_pod pods[GS_PLAN_PODS_MAX];
    struct gs_plan *p = malloc(sizeof(*p));
    struct gs_diag d;
    gs_diag_init(&d);
    assert_non_null(p);
    assert_int_equal(gs_plan_init(p, t, 4, "/usr/lib/gpusched/libgpushare.so",
                                  "/var/lib/gpusched/pods", "/tmp/nvidia-mps"),
                     0);
    int n = gs_plan_pods_json(json, pods, GS_PLAN_PODS_MAX, &d);
    if (n < 0)
        print_error("%s\n", d.msg);
    assert_true(n >= 0);
    assert_int_equal(gs_plan_set_pods(p, pods, n, &d), 0);
    return p;
}

static const char *env_of(const struct gs_plan_alloc *a, const char *key)
{
    for (int i = 0; i < a->nenv; i++)
        if (!strcmp(a->env_key[i], key))
            return a->env_val[i];
    return NULL;
}

/* kubelet's Allocate for @n IDs, after asking its preference among every ID of @res. */
static int kubelet_admit(struct gs_plan *p, const char *res, int n, struct gs_plan_alloc *a)
{
    static char all[256][GS_PLAN_ID_MAX], pref[GS_GPUS_MAX][GS_PLAN_ID_MAX];
    const char *avail[256], *ids[GS_GPUS_MAX];
    int card[256], na = gs_plan_devices(p, res, all, card, 256);
    for (int i = 0; i < na; i++)
        avail[i] = all[i];
    int k = gs_plan_prefer(p, res, avail, na, NULL, 0, n, pref);
    assert_int_equal(k, n);
    for (int i = 0; i < k; i++)
        ids[i] = pref[i];
    struct gs_diag d;
    gs_diag_init(&d);
    return gs_plan_allocate(p, res, ids, k, a, &d);
}

/* Resources, device IDs: every bound pod holds IDs of its own. */
static void test_plan_devices(void **state)
{
    (void)state;
    struct gs_topo t;
    plan_topo(&t);
    struct gs_plan *p = new_plan(&t, pods_json);
    char res[8][GS_PLAN_RES_MAX], ids[64][GS_PLAN_ID_MAX];
    int card[64];
    assert_int_equal(gs_plan_resources(p, res, 8), 2);
    assert_string_equal(res[0], "nvidia.com/gpu");
    assert_string_equal(res[1], "nvidia.com/mig-2g.20gb");
    assert_int_equal(gs_plan_devices(p, "nvidia.com/gpu", ids, card, 64), 12); /* 3 cards x 4 */
    assert_string_equal(ids[5], "GPU-00000001-aaaa-bbbb-cccc-dddddddddddd::1");
    assert_int_equal(card[5], 1);
    assert_int_equal(gs_plan_devices(p, "nvidia.com/mig-2g.20gb", ids, card, 64), 1);
    assert_string_equal(ids[0], "MIG-11111111-2222-3333-4444-555555555555");
    assert_int_equal(p->pods[2].replica[2], 0); /* pc and pd share card 2, on replicas 0 and 1 */
    assert_int_equal(p->pods[3].replica[2], 1);
    free(p);
}

/* What each kind of pod's container gets. */
static void test_plan_allocate_env(void **state)
{
    (void)state;
    struct gs_topo t;
    struct gs_plan_alloc a;
    plan_topo(&t);
    struct gs_plan *p = new_plan(&t, pods_json);
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0);
    assert_string_equal(a.pod, "a/pa");
    assert_string_equal(env_of(&a, "NVIDIA_VISIBLE_DEVICES"), t.gpu[0].uuid);
    assert_null(env_of(&a, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")); /* a whole card: no limits */
    assert_null(env_of(&a, "LD_PRELOAD"));
    assert_int_equal(a.ncdi, 1);
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0);
    assert_string_equal(a.pod, "b/pb");
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0);
    assert_string_equal(a.pod, "c/pc");
    assert_string_equal(env_of(&a, "NVIDIA_VISIBLE_DEVICES"), t.gpu[2].uuid);
    assert_string_equal(env_of(&a, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "30");
    assert_string_equal(env_of(&a, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=10240M");
    assert_string_equal(env_of(&a, "CUDA_MPS_PIPE_DIRECTORY"), "/tmp/nvidia-mps");
    assert_string_equal(env_of(&a, GS_GPUSHARE_ENV_MEMORY_MIB),
                        "GPU-00000002-aaaa-bbbb-cccc-dddddddddddd=10240");
    assert_string_equal(env_of(&a, GS_GPUSHARE_ENV_CORES_PERCENT),
                        "GPU-00000002-aaaa-bbbb-cccc-dddddddddddd=30");
    assert_string_equal(env_of(&a, GS_GPUSHARE_ENV_REGION), "/run/gpushare/region");
    assert_string_equal(env_of(&a, GS_GPUSHARE_ENV_CONTEXT_MIB), "768"); /* an H100's default */
    assert_string_equal(env_of(&a, "LD_PRELOAD"), "/usr/lib/gpusched/libgpushare.so");
    assert_int_equal(a.nmount, 3);
    assert_string_equal(a.mount[1].host, "/usr/lib/gpusched/libgpushare.so");
    assert_int_equal(a.mount[1].ro, 1);
    /* the pod's own region folder, read-write: every container of pc and no other pod's */
    assert_string_equal(a.mount[2].host, "/var/lib/gpusched/pods/u-c");
    assert_string_equal(a.mount[2].ctr, "/run/gpushare");
    assert_int_equal(a.mount[2].ro, 0);
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0);
    assert_string_equal(a.pod, "d/pd");
    assert_string_equal(env_of(&a, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=20480M");
    assert_string_equal(a.mount[2].host, "/var/lib/gpusched/pods/u-d");
    assert_int_equal(kubelet_admit(p, "nvidia.com/mig-2g.20gb", 1, &a), 0);
    assert_string_equal(a.pod, "m/pm");
    assert_string_equal(env_of(&a, "NVIDIA_VISIBLE_DEVICES"),
                        "MIG-11111111-2222-3333-4444-555555555555");
    /* every pod is allocated: a further Allocate finds nobody */
    const char *one[] = {"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd::3"};
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_plan_allocate(p, "nvidia.com/gpu", one, 1, &a, &d), -ENOENT);
    assert_non_null(strstr(d.msg, "no pod bound to this node waits"));
    free(p);
}

/*
 * Two pods bound to one node at the same moment, admitted in either order, with kubelet's
 * preference followed or not: each gets its own card, and an Allocate naming IDs of neither is
 * refused rather than guessed.
 */
static void test_plan_two_pods_never_swap(void **state)
{
    (void)state;
    static const char *two = "[{\"namespace\":\"a\",\"name\":\"pa\",\"uid\":\"u-a\","
                             "\"tenant\":\"t1\",\"gpus\":[0]},"
                             " {\"namespace\":\"b\",\"name\":\"pb\",\"uid\":\"u-b\","
                             "\"tenant\":\"t2\",\"gpus\":[1]}]";
    struct gs_topo t;
    struct gs_plan_alloc a;
    struct gs_diag d;
    plan_topo(&t);
    for (int order = 0; order < 2; order++) {
        struct gs_plan *p = new_plan(&t, two);
        /* kubelet ignores the preference and names pb's ID first (order 1) or pa's (order 0) */
        char idb[GS_PLAN_ID_MAX], ida[GS_PLAN_ID_MAX];
        snprintf(ida, sizeof(ida), "%s::0", t.gpu[0].uuid);
        snprintf(idb, sizeof(idb), "%s::0", t.gpu[1].uuid);
        const char *first[] = {order ? idb : ida}, *second[] = {order ? ida : idb};
        gs_diag_init(&d);
        assert_int_equal(gs_plan_allocate(p, "nvidia.com/gpu", first, 1, &a, &d), 0);
        assert_string_equal(a.pod, order ? "b/pb" : "a/pa");
        assert_string_equal(env_of(&a, "NVIDIA_VISIBLE_DEVICES"), t.gpu[order ? 1 : 0].uuid);
        assert_int_equal(gs_plan_allocate(p, "nvidia.com/gpu", second, 1, &a, &d), 0);
        assert_string_equal(a.pod, order ? "a/pa" : "b/pb");
        assert_string_equal(env_of(&a, "NVIDIA_VISIBLE_DEVICES"), t.gpu[order ? 0 : 1].uuid);
        free(p);
    }
    /* IDs of neither pod, no preference asked: refused */
    struct gs_plan *p = new_plan(&t, two);
    char other[GS_PLAN_ID_MAX];
    snprintf(other, sizeof(other), "%s::2", t.gpu[2].uuid);
    const char *ids[] = {other};
    gs_diag_init(&d);
    assert_int_equal(gs_plan_allocate(p, "nvidia.com/gpu", ids, 1, &a, &d), -ENOENT);
    assert_non_null(strstr(d.msg, "refused rather than guessed"));
    /* after a preference (kubelet then chose other IDs), they go to the pod it chose */
    char all[16][GS_PLAN_ID_MAX], pref[1][GS_PLAN_ID_MAX];
    const char *avail[16];
    int card[16], na = gs_plan_devices(p, "nvidia.com/gpu", all, card, 16);
    for (int i = 0; i < na; i++)
        avail[i] = all[i];
    assert_int_equal(gs_plan_prefer(p, "nvidia.com/gpu", avail, na, NULL, 0, 1, pref), 1);
    assert_string_equal(pref[0], "GPU-00000000-aaaa-bbbb-cccc-dddddddddddd::0");
    assert_int_equal(gs_plan_allocate(p, "nvidia.com/gpu", ids, 1, &a, &d), 0);
    assert_string_equal(a.pod, "a/pa");
    assert_string_equal(env_of(&a, "NVIDIA_VISIBLE_DEVICES"), t.gpu[0].uuid);
    free(p);
}

/* Allocate of the one ID @id of nvidia.com/gpu, as kubelet sends devices reused from an init
 * container without asking a preference. */
static int allocate_one(struct gs_plan *p, const char *id, struct gs_plan_alloc *a)
{
    const char *ids[] = {id};
    struct gs_diag d;
    gs_diag_init(&d);
    int rc = gs_plan_allocate(p, "nvidia.com/gpu", ids, 1, a, &d);
    if (rc)
        print_error("%s\n", d.msg);
    return rc;
}

/*
 * A pod of two cards and three containers, as kubelet admits it: an init container of one card,
 * an app container reusing it, a second app container taking the other card; then with an app
 * container of two cards, one of them reused (a must-include of the preference).
 */
static void test_plan_containers(void **state)
{
    (void)state;
    static const char *duo = "[{\"namespace\":\"a\",\"name\":\"duo\",\"uid\":\"u-duo\",\"tenant\":"
                             "\"t1\",\"gpus\":[0,1]}";
    static const char *more = ", {\"namespace\":\"a\",\"name\":\"one\",\"uid\":\"u-one\","
                              "\"tenant\":\"t1\",\"gpus\":[2]}]";
    static struct gs_plan_pod pods[4];
    char both[400];
    struct gs_topo t;
    struct gs_plan_alloc a;
    struct gs_diag d;
    char id0[GS_PLAN_ID_MAX], two[GS_PLAN_ID_MAX * 2 + 2];
    plan_topo(&t);
    snprintf(both, sizeof(both), "%s]", duo);
    struct gs_plan *p = new_plan(&t, both);
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0); /* the init container */
    assert_string_equal(a.pod, "a/duo");
    assert_string_equal(env_of(&a, "NVIDIA_VISIBLE_DEVICES"), t.gpu[0].uuid);
    snprintf(id0, sizeof(id0), "%s::0", t.gpu[0].uuid);
    assert_int_equal(allocate_one(p, id0, &a), 0); /* app 1: the init container's card again */
    assert_string_equal(a.pod, "a/duo");
    assert_string_equal(env_of(&a, "NVIDIA_VISIBLE_DEVICES"), t.gpu[0].uuid);
    /* another pod of one card is bound meanwhile: app 2 still follows its pod */
    snprintf(both, sizeof(both), "%s%s", duo, more);
    gs_diag_init(&d);
    assert_int_equal(gs_plan_pods_json(both, pods, 4, &d), 2);
    assert_int_equal(gs_plan_set_pods(p, pods, 2, &d), 0);
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0); /* app 2: the other card */
    assert_string_equal(a.pod, "a/duo");
    assert_string_equal(env_of(&a, "NVIDIA_VISIBLE_DEVICES"), t.gpu[1].uuid);
    assert_int_equal(p->pods[0].given, 3);
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0); /* the next pod */
    assert_string_equal(a.pod, "a/one");
    assert_string_equal(env_of(&a, "NVIDIA_VISIBLE_DEVICES"), t.gpu[2].uuid);
    free(p);

    /* init container of one card, app container of two: the reused ID must be included */
    snprintf(both, sizeof(both), "%s%s", duo, more);
    p = new_plan(&t, both);
    assert_int_equal(allocate_one(p, id0, &a), 0); /* the init container, kubelet's choice */
    char all[16][GS_PLAN_ID_MAX], pref[2][GS_PLAN_ID_MAX];
    const char *avail[16], *must[] = {id0};
    int card[16], na = gs_plan_devices(p, "nvidia.com/gpu", all, card, 16);
    for (int i = 0; i < na; i++)
        avail[i] = all[i];
    assert_int_equal(gs_plan_prefer(p, "nvidia.com/gpu", avail, na, must, 1, 2, pref), 2);
    assert_string_equal(pref[0], id0);
    snprintf(two, sizeof(two), "%s::0", t.gpu[1].uuid);
    assert_string_equal(pref[1], two);
    const char *ids[] = {pref[0], pref[1]};
    assert_int_equal(gs_plan_allocate(p, "nvidia.com/gpu", ids, 2, &a, &d), 0);
    snprintf(two, sizeof(two), "%s,%s", t.gpu[0].uuid, t.gpu[1].uuid);
    assert_string_equal(env_of(&a, "NVIDIA_VISIBLE_DEVICES"), two);
    assert_int_equal(a.ncdi, 2);
    /* IDs of two pods in one Allocate, and more cards than a pod has left: refused */
    char id2[GS_PLAN_ID_MAX];
    snprintf(id2, sizeof(id2), "%s::0", t.gpu[2].uuid);
    const char *mixed[] = {id0, id2};
    assert_int_equal(gs_plan_allocate(p, "nvidia.com/gpu", mixed, 2, &a, &d), -ENOENT);
    assert_non_null(strstr(d.msg, "belong to two bound pods"));
    char other[GS_PLAN_ID_MAX];
    snprintf(other, sizeof(other), "%s::3", t.gpu[2].uuid);
    const char *one_more[] = {id2, other};
    assert_int_equal(gs_plan_allocate(p, "nvidia.com/gpu", one_more, 2, &a, &d), -ENOENT);
    assert_non_null(strstr(d.msg, "it has 1 card no container got yet"));
    free(p);

    /* kubelet's list of pods says which one it admits: duo, though one asks exactly one card */
    p = new_plan(&t, both);
    const char *kubelet[] = {"a/duo", "a/one"};
    gs_plan_kubelet(p, kubelet, 1);
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0);
    assert_string_equal(a.pod, "a/duo");
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0);
    assert_string_equal(a.pod, "a/duo");
    const char *stray[] = {other}; /* a free device, and duo has no card left */
    assert_int_equal(gs_plan_allocate(p, "nvidia.com/gpu", stray, 1, &a, &d), -ENOENT);
    assert_non_null(strstr(d.msg, "no pod bound to this node that kubelet has waits"));
    gs_plan_kubelet(p, kubelet, 2);
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0);
    assert_string_equal(a.pod, "a/one");
    assert_string_equal(env_of(&a, "NVIDIA_VISIBLE_DEVICES"), t.gpu[2].uuid);
    free(p);
}

/* An agent that restarts keeps every ID kubelet holds and allocates no pod twice. */
static void test_plan_restart(void **state)
{
    (void)state;
    struct gs_topo t;
    struct gs_plan_alloc a;
    struct gs_diag d;
    char path[128];
    snprintf(path, sizeof(path), "%s/plan.json", tmp);
    plan_topo(&t);
    struct gs_plan *p = new_plan(&t, pods_json);
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0); /* pa */
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0); /* pb */
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0); /* pc */
    gs_diag_init(&d);
    assert_int_equal(gs_plan_save(p, path, &d), 0);
    free(p);
    /* restarted: pc left, a new shared pod pe came on card 2 */
    static const char *after =
        "[{\"namespace\":\"a\",\"name\":\"pa\",\"uid\":\"u-a\",\"tenant\":\"t1\",\"gpus\":[0]},"
        " {\"namespace\":\"b\",\"name\":\"pb\",\"uid\":\"u-b\",\"tenant\":\"t2\",\"gpus\":[1]},"
        " {\"namespace\":\"d\",\"name\":\"pd\",\"uid\":\"u-d\",\"tenant\":\"t2\",\"gpus\":[2],"
        "\"gpumem_mib\":20480},"
        " {\"namespace\":\"e\",\"name\":\"pe\",\"uid\":\"u-e\",\"tenant\":\"t1\",\"gpus\":[2],"
        "\"gpumem_mib\":1024}]";
    static struct gs_plan_pod pods[8];
    p = malloc(sizeof(*p));
    assert_int_equal(gs_plan_init(p, &t, 4, NULL, NULL, NULL), 0);
    assert_int_equal(gs_plan_load(p, path, &d), 0);
    int n = gs_plan_pods_json(after, pods, 8, &d);
    assert_int_equal(n, 4);
    assert_int_equal(gs_plan_set_pods(p, pods, n, &d), 0);
    assert_int_equal(p->pods[0].given, 1u << 0);
    assert_int_equal(p->pods[1].given, 1u << 1);
    assert_int_equal(p->pods[2].given, 0);
    assert_int_equal(p->pods[2].replica[2], 1); /* pd kept its replica */
    assert_int_equal(p->pods[3].replica[2], 0); /* pe takes the one pc left */
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0);
    assert_string_equal(a.pod, "d/pd");
    assert_int_equal(kubelet_admit(p, "nvidia.com/gpu", 1, &a), 0);
    assert_string_equal(a.pod, "e/pe");
    assert_null(env_of(&a, "LD_PRELOAD")); /* this plan has no shim */
    free(p);
    /* a damaged state file is an error, not a fresh start */
    write_file(path, "{\"pods\": 1}");
    p = malloc(sizeof(*p));
    assert_int_equal(gs_plan_init(p, &t, 4, NULL, NULL, NULL), 0);
    assert_int_equal(gs_plan_load(p, path, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "not the agent's state"));
    /* more devices handed out than a pod has cards: refused before any is read */
    char big[4096];
    int off = snprintf(big, sizeof(big),
                       "[{\"uid\":\"u-a\",\"replicas\":[[0,0]],\"mig\":\"\","
                       "\"migStart\":0,\"cgBase\":0,\"cgWrote\":0,\"got\":[");
    for (int i = 0; i < 40; i++)
        off +=
            snprintf(big + off, sizeof(big) - (size_t)off, "%s[\"GPU-x::%d\",0]", i ? "," : "", i);
    snprintf(big + off, sizeof(big) - (size_t)off, "]}]");
    write_file(path, big);
    assert_int_equal(gs_plan_init(p, &t, 4, NULL, NULL, NULL), 0);
    assert_int_equal(gs_plan_load(p, path, &d), -EINVAL);
    assert_int_equal(p->npods, 0);
    assert_non_null(strstr(d.msg, "not the agent's state"));
    free(p);
}

static void test_plan_bad_pods(void **state)
{
    (void)state;
    struct gs_plan_pod pods[2];
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_plan_pods_json("{}", pods, 2, &d), -EINVAL);
    assert_int_equal(gs_plan_pods_json("[{\"namespace\":\"a\",\"name\":\"p\",\"uid\":\"u\","
                                       "\"tenant\":\"t\",\"gpus\":[16]}]",
                                       pods, 2, &d),
                     -EINVAL);
    assert_non_null(strstr(d.msg, "pods[0].gpus[0]"));
    assert_int_equal(
        gs_plan_pods_json("[{\"namespace\":\"a\",\"name\":\"p\",\"uid\":\"u\"}]", pods, 2, &d),
        -EINVAL);
    assert_non_null(strstr(d.msg, "pods[0].tenant"));
    /* a uid names a folder on the host: nothing that leaves it, and not none (the folder of
     * every pod's folders) */
    static const char *const bad_uid[] = {"../x", "", ".hidden"};
    for (size_t i = 0; i < sizeof(bad_uid) / sizeof(bad_uid[0]); i++) {
        char json[160];
        snprintf(json, sizeof(json),
                 "[{\"namespace\":\"a\",\"name\":\"p\",\"uid\":\"%s\",\"tenant\":\"t\","
                 "\"gpus\":[0]}]",
                 bad_uid[i]);
        assert_int_equal(gs_plan_pods_json(json, pods, 2, &d), -EINVAL);
        assert_non_null(strstr(d.msg, "pods[0].uid"));
    }
    assert_int_equal(gs_plan_pods_json("[1,2,3]", pods, 2, &d), -E2BIG);
    assert_non_null(strstr(d.msg, "3 bound pods; at most 2"));
    struct gs_topo t;
    plan_topo(&t);
    struct gs_plan *p = malloc(sizeof(*p));
    assert_int_equal(gs_plan_init(p, &t, 1, NULL, NULL, NULL), 0);
    /* more pods on card 0 than its replicas: the one without is left out, said, and the pods
     * after it (on card 1) are planned all the same */
    static struct gs_plan_pod three[3];
    assert_int_equal(gs_plan_pods_json("[{\"namespace\":\"a\",\"name\":\"p\",\"uid\":\"u\","
                                       "\"tenant\":\"t\",\"gpus\":[0]},"
                                       "{\"namespace\":\"a\",\"name\":\"q\",\"uid\":\"v\","
                                       "\"tenant\":\"t\",\"gpus\":[0]},"
                                       "{\"namespace\":\"a\",\"name\":\"r\",\"uid\":\"w\","
                                       "\"tenant\":\"t\",\"gpus\":[1]}]",
                                       three, 3, &d),
                     3);
    assert_int_equal(gs_plan_set_pods(p, three, 3, &d), 1);
    assert_non_null(
        strstr(d.msg, "pod a/q: card 0 has no free nvidia.com/gpu replica (1 per card"));
    assert_int_equal(p->npods, 2);
    assert_string_equal(p->pods[0].uid, "u");
    assert_string_equal(p->pods[1].uid, "w");
    free(p);
}

/* The whole of file @path into @buf (cut to @n - 1 bytes). */
static void read_file(const char *path, char *buf, size_t n)
{
    char *s = t_slurp(path, NULL);
    assert_non_null(s);
    snprintf(buf, n, "%s", s);
    free(s);
}

/* Makes @dir (and its parents) with a cpu.weight of @weight, as kubelet leaves a pod cgroup. */
static void kubelet_cgroup(const char *dir, const char *weight)
{
    char cmd[600], f[600];
    snprintf(cmd, sizeof(cmd), "mkdir -p %s", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(f, sizeof(f), "%s/cpu.weight", dir);
    write_file(f, weight);
}

static void weight_is(const char *dir, const char *want)
{
    char f[600], buf[32];
    snprintf(f, sizeof(f), "%s/cpu.weight", dir);
    read_file(f, buf, sizeof(buf));
    buf[strcspn(buf, "\n")] = '\0';
    assert_string_equal(buf, want);
}

/*
 * Tenant CPU weights on kubelet's pod cgroups in a temporary tree, both drivers' layouts: kubelet's
 * weight times the tenant's over the lightest, clamped; written again when kubelet resets it;
 * pods whose cgroup is not there are left alone.
 */
static void test_cgroup_tree(void **state)
{
    (void)state;
    static const char *pods =
        "[{\"namespace\":\"a\",\"name\":\"g\",\"uid\":\"0a1b-2c\",\"tenant\":\"t1\",\"gpus\":[0],"
        "\"tenant_weight\":4,\"tenant_weight_min\":2},"
        " {\"namespace\":\"a\",\"name\":\"b\",\"uid\":\"3d4e-5f\",\"tenant\":\"t1\",\"gpus\":[1],"
        "\"tenant_weight\":4,\"tenant_weight_min\":2},"
        " {\"namespace\":\"b\",\"name\":\"e\",\"uid\":\"6a7b-8c\",\"tenant\":\"t2\",\"gpus\":[2],"
        "\"tenant_weight\":2,\"tenant_weight_min\":2},"
        " {\"namespace\":\"a\",\"name\":\"x\",\"uid\":\"9d0e-1f\",\"tenant\":\"t1\",\"gpus\":[2],"
        "\"gpumem_mib\":1024,\"tenant_weight\":4,\"tenant_weight_min\":2},"
        " {\"namespace\":\"a\",\"name\":\"n\",\"uid\":\"aaaa-bb\",\"tenant\":\"t1\",\"gpus\":[0],"
        "\"gpumem_mib\":1024,\"tenant_weight\":4,\"tenant_weight_min\":2}]";
    struct gs_topo t;
    struct gs_diag d;
    char root[128], g[300], b[300], e[300], x[300];
    plan_topo(&t);
    snprintf(root, sizeof(root), "%s/cgroup", tmp);
    /* systemd driver: Guaranteed g, Burstable b; cgroupfs driver: BestEffort e, Burstable x */
    snprintf(g, sizeof(g), "%s/kubepods.slice/kubepods-pod0a1b_2c.slice", root);
    snprintf(b, sizeof(b),
             "%s/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3d4e_5f.slice",
             root);
    snprintf(e, sizeof(e), "%s/kubepods/besteffort/pod6a7b-8c", root);
    snprintf(x, sizeof(x), "%s/kubepods/burstable/pod9d0e-1f", root);
    kubelet_cgroup(g, "39\n"); /* 1 CPU: 1024 shares */
    kubelet_cgroup(b, "3000"); /* clamps */
    kubelet_cgroup(e, "1\n");  /* BestEffort: 2 shares */
    kubelet_cgroup(x, "79\n"); /* 2 CPUs */
    struct gs_plan *p = new_plan(&t, pods);
    gs_diag_init(&d);
    assert_int_equal(gs_cgroup_apply(p, root, &d), 0);
    weight_is(g, "78"); /* 39 x 4 / 2 */
    weight_is(b, "6000");
    weight_is(e, "1"); /* t2 is the lightest: kubelet's own */
    weight_is(x, "158");
    assert_int_equal(p->pods[0].cg_base, 39);
    assert_int_equal(p->pods[0].cg_wrote, 78);
    assert_int_equal(p->pods[4].cg_wrote, 0); /* pod n has no cgroup yet */
    /* kubelet writes g's weight again (a resize): scaled again; b clamps at 10000 */
    kubelet_cgroup(g, "40\n");
    kubelet_cgroup(b, "9000");
    assert_int_equal(gs_cgroup_apply(p, root, &d), 0);
    weight_is(g, "80");
    weight_is(b, "10000");
    assert_int_equal(gs_cgroup_apply(p, root, &d), 0); /* and left as it is */
    weight_is(g, "80");
    /* a restarted agent reads its weights back and does not scale its own value twice */
    char path[128];
    snprintf(path, sizeof(path), "%s/plan-cg.json", tmp);
    assert_int_equal(gs_plan_save(p, path, &d), 0);
    free(p);
    p = malloc(sizeof(*p));
    assert_int_equal(gs_plan_init(p, &t, 4, NULL, NULL, NULL), 0);
    assert_int_equal(gs_plan_load(p, path, &d), 0);
    static struct gs_plan_pod again[8];
    int n = gs_plan_pods_json(pods, again, 8, &d);
    assert_int_equal(gs_plan_set_pods(p, again, n, &d), 0);
    assert_int_equal(gs_cgroup_apply(p, root, &d), 0);
    weight_is(g, "80");
    weight_is(x, "158");
    /* a file that is no cpu.weight is reported, naming it; the other pods are still done */
    kubelet_cgroup(g, "lots");
    kubelet_cgroup(x, "79");
    assert_int_equal(gs_cgroup_apply(p, root, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "kubepods-pod0a1b_2c.slice/cpu.weight"));
    weight_is(x, "158");
    free(p);
}

/* --context-mib: per model, a value for the others, the defaults; malformed values refused. */
static void test_plan_context_mib(void **state)
{
    (void)state;
    struct gs_topo t;
    struct gs_plan_ctx c;
    struct gs_diag d;
    plan_topo(&t);
    struct gs_plan *p = new_plan(&t, pods_json);
    assert_int_equal(p->context_mib[0], 512); /* A100: the defaults */
    assert_int_equal(p->context_mib[2], 768); /* H100 */
    assert_int_equal(gs_plan_ctx_default(-1), 768);
    gs_diag_init(&d);
    assert_int_equal(gs_plan_ctx_parse("H100-SXM5-80GB=900", &c, &d), 0);
    gs_plan_ctx_set(p, &c);
    assert_int_equal(p->context_mib[0], 512);
    assert_int_equal(p->context_mib[2], 900);
    assert_int_equal(gs_plan_ctx_parse("600,h100-80gb=0", &c, &d), 0); /* an alias, any case */
    gs_plan_ctx_set(p, &c);
    assert_int_equal(p->context_mib[0], 600);
    assert_int_equal(p->context_mib[2], 0);
    static const char *const bad[] = {"",         "x",       "600,",          "65537", "-1",
                                      "B300=900", "600,700", "H200=1,H200=2", "H200="};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(gs_plan_ctx_parse(bad[i], &c, &d), -EINVAL);
        assert_non_null(strstr(d.msg, "--context-mib"));
    }
    assert_non_null(strstr(d.msg, "H200=: MiB 0..65536 expected"));
    assert_int_equal(gs_plan_ctx_parse("B300=900", &c, &d), -EINVAL); /* names what there is */
    assert_non_null(strstr(d.msg, "B300: no GPU model of that name (the catalog has: "));
    assert_non_null(strstr(d.msg, "H100-SXM5-80GB"));
    free(p);
}

/* Each shared pod's region: a folder only root reaches on the host, the pod's own folder that its
 * containers mount, a file every user of them may use; gone with the pod. */
static void test_pod_regions(void **state)
{
    (void)state;
    struct gs_topo t;
    struct gs_diag d;
    struct stat st;
    char root[128], path[300];
    plan_topo(&t);
    snprintf(root, sizeof(root), "%s/pods", tmp);
    struct gs_plan *p = new_plan(&t, pods_json);
    gs_diag_init(&d);
    umask(022);
    assert_int_equal(gs_pod_regions_sync(p, root, &d), 0);
    assert_int_equal(stat(root, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    snprintf(path, sizeof(path), "%s/u-c", root);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0711);
    snprintf(path, sizeof(path), "%s/u-c/region", root);
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0666);
    snprintf(path, sizeof(path), "%s/u-d/region", root);
    assert_int_equal(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/u-a", root); /* a whole card: no region */
    assert_int_equal(access(path, F_OK), -1);
    /* kubelet makes a hostPath folder 0755: the agent closes it again */
    assert_int_equal(chmod(root, 0755), 0);
    assert_int_equal(gs_pod_regions_sync(p, root, &d), 0);
    assert_int_equal(stat(root, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    /* pd leaves the node: its folder goes, pc's stays (with what libgpushare wrote in it) */
    snprintf(path, sizeof(path), "%s/u-c/region", root);
    write_file(path, "counts");
    static struct gs_plan_pod pods[8];
    int n = gs_plan_pods_json(pods_json, pods, 8, &d);
    pods[3] = pods[4];
    assert_int_equal(gs_plan_set_pods(p, pods, n - 1, &d), 0);
    assert_int_equal(gs_pod_regions_sync(p, root, &d), 0);
    snprintf(path, sizeof(path), "%s/u-d", root);
    assert_int_equal(access(path, F_OK), -1);
    snprintf(path, sizeof(path), "%s/u-c/region", root);
    char buf[16];
    read_file(path, buf, sizeof(buf));
    assert_string_equal(buf, "counts");
    /* a link there is removed, never what it names (a folder and its region outside) */
    char outside[200], link[200];
    snprintf(outside, sizeof(outside), "%s/outside", tmp);
    assert_int_equal(mkdir(outside, 0700), 0);
    snprintf(path, sizeof(path), "%s/region", outside);
    write_file(path, "keep");
    snprintf(link, sizeof(link), "%s/u-link", root);
    assert_int_equal(symlink(outside, link), 0);
    assert_int_equal(gs_pod_regions_sync(p, root, &d), 0);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(access(link, F_OK), -1);
    assert_int_equal(access(outside, F_OK), 0);
    /* a root that is a file is reported */
    snprintf(path, sizeof(path), "%s/u-c/region", root);
    assert_int_equal(gs_pod_regions_sync(p, path, &d), -ENOTDIR);
    assert_non_null(strstr(d.msg, "not a folder"));
    free(p);
}

static void test_cdi_spec(void **state)
{
    (void)state;
    struct gs_topo t;
    struct gs_diag d;
    char f[256], buf[8192];
    plan_topo(&t);
    t.gpu[0].minor = 0;
    t.gpu[3].minor = 3;
    gs_diag_init(&d);
    assert_int_equal(gs_cdi_write(&t, tmp, &d), 0);
    snprintf(f, sizeof(f), "%s/gpusched.io-gpu.json", tmp);
    read_file(f, buf, sizeof(buf));
    assert_non_null(strstr(buf, "\"kind\": \"gpusched.io/gpu\""));
    assert_non_null(strstr(buf, "\"cdiVersion\": \"0.6.0\""));
    assert_non_null(strstr(buf, "\"name\": \"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\""));
    assert_non_null(strstr(buf, "\"name\": \"MIG-11111111-2222-3333-4444-555555555555\""));
    assert_non_null(strstr(buf, "/dev/nvidia3"));
    assert_non_null(strstr(buf, "/dev/nvidiactl"));
    /* a missing spec folder is made, as by whoever writes the first spec; a failure says why */
    snprintf(f, sizeof(f), "%s/cdi-new", tmp);
    assert_int_equal(gs_cdi_write(&t, f, &d), 0);
    snprintf(f, sizeof(f), "%s/cdi-new/gpusched.io-gpu.json", tmp);
    read_file(f, buf, sizeof(buf));
    snprintf(f, sizeof(f), "%s/cdi-new/gpusched.io-gpu.json/cdi", tmp);
    gs_diag_init(&d);
    assert_true(gs_cdi_write(&t, f, &d) < 0);
    assert_non_null(strstr(d.msg, "cannot write the CDI spec: Not a directory"));
    /* every missing level is made (mode 0755), as mkdir -p does: /var/run/cdi on a host
     * without /var/run/cdi's parent, or a --cdi-dir deeper down */
    struct stat st;
    mode_t old = umask(077); /* 0755 all the same */
    snprintf(f, sizeof(f), "%s/cdi-deep/a/b/", tmp);
    gs_diag_init(&d);
    int rc = gs_cdi_write(&t, f, &d);
    umask(old);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    snprintf(f, sizeof(f), "%s/cdi-deep/a/b/gpusched.io-gpu.json", tmp);
    read_file(f, buf, sizeof(buf));
    snprintf(f, sizeof(f), "%s/cdi-deep/a", tmp);
    assert_int_equal(stat(f, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0755);
    /* a level that is a file is said, naming the spec */
    snprintf(f, sizeof(f), "%s/cdi-new/gpusched.io-gpu.json/x/cdi", tmp);
    gs_diag_init(&d);
    assert_true(gs_cdi_write(&t, f, &d) < 0);
    assert_non_null(strstr(d.msg, "cannot write the CDI spec: Not a directory"));
}

/*
 * The device plugin over real gRPC sockets, with the fake kubelet: registration of each resource,
 * ListAndWatch (and its update when a card turns unhealthy), kubelet's preference and Allocate for
 * every bound pod in turn, the state kept for a restart.
 */
static void test_plugin_grpc(void **state)
{
    (void)state;
    struct gs_topo t;
    struct gs_diag d;
    struct fk_alloc a;
    char dir[128], st[160], err[512];
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    uint32_t bad = 0;
    plan_topo(&t);
    t.gpu[0].numa = 1;
    snprintf(dir, sizeof(dir), "%s/dp", tmp);
    snprintf(st, sizeof(st), "%s/agent-state.json", tmp);
    mkdir(dir, 0755);
    struct fake_kubelet *k = fake_kubelet_start(dir);
    assert_non_null(k);
    struct gs_plan *p = new_plan(&t, pods_json);
    struct gs_plugin *pl = NULL;
    gs_diag_init(&d);
    int rc = gs_plugin_start(p, &lock, &bad, dir, st, fake_kubelet_podres(k), 5000, NULL, &pl, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    assert_string_equal(fake_kubelet_endpoint(k, "nvidia.com/gpu", 1000),
                        "gpusched-nvidia.com_gpu.sock");
    assert_non_null(fake_kubelet_endpoint(k, "nvidia.com/mig-2g.20gb", 1000));
    struct fk_device dev[64];
    assert_int_equal(fake_kubelet_list(k, "nvidia.com/gpu", dev, 64), 12);
    assert_string_equal(dev[0].id, "GPU-00000000-aaaa-bbbb-cccc-dddddddddddd::0");
    assert_int_equal(dev[0].healthy, 1);
    assert_int_equal(dev[0].numa, 1);
    assert_int_equal(dev[4].numa, -1);

    /* kubelet admits the pods out of bind order, pd (bound after pc, of the same shape) first,
     * and some ignoring the preference: its pod resources API says which pod it admits */
    static const char *const order[] = {"d/pd", "b/pb", "a/pa", "c/pc"};
    for (int i = 0; i < 4; i++) {
        rc = fake_kubelet_admit(k, order[i], "nvidia.com/gpu", 1, i % 2, &a, err, sizeof(err));
        if (rc)
            print_error("%s\n", err);
        assert_int_equal(rc, 0);
        assert_string_equal(a.pod, order[i]);
        if (i == 0)
            assert_string_equal(fk_env(&a, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "50");
    }
    assert_string_equal(fk_env(&a, "NVIDIA_VISIBLE_DEVICES"), t.gpu[2].uuid);
    assert_string_equal(fk_env(&a, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "30");
    assert_string_equal(fk_env(&a, GS_GPUSHARE_ENV_MEMORY_MIB),
                        "GPU-00000002-aaaa-bbbb-cccc-dddddddddddd=10240");
    assert_string_equal(a.host[1], "/usr/lib/gpusched/libgpushare.so");
    assert_string_equal(a.cdi[0], "gpusched.io/gpu=GPU-00000002-aaaa-bbbb-cccc-dddddddddddd");
    assert_int_equal(
        fake_kubelet_admit(k, "m/pm", "nvidia.com/mig-2g.20gb", 1, 0, &a, err, sizeof(err)), 0);
    assert_string_equal(fk_env(&a, "NVIDIA_VISIBLE_DEVICES"),
                        "MIG-11111111-2222-3333-4444-555555555555");
    /* a pod gpuschedd did not bind gets nothing, refused with the reason */
    rc = fake_kubelet_admit(k, "x/stranger", "nvidia.com/gpu", 1, 0, &a, err, sizeof(err));
    assert_int_equal(rc, 9); /* FAILED_PRECONDITION */
    assert_non_null(strstr(err, "no pod bound to this node that kubelet has waits"));
    assert_int_equal(access(st, F_OK), 0);

    /* a card turns unhealthy: the open ListAndWatch stream sends the list again */
    char path[300];
    struct gs_grpc_stream *s;
    ProtobufCMessage *m;
    V1beta1__Empty e = V1BETA1__EMPTY__INIT;
    snprintf(path, sizeof(path), "%s/gpusched-nvidia.com_gpu.sock", dir);
    assert_int_equal(
        gs_grpc_stream_open(path, "/v1beta1.DevicePlugin/ListAndWatch", &e.base, &s, 5000, &d), 0);
    assert_int_equal(
        gs_grpc_stream_next(s, &v1beta1__list_and_watch_response__descriptor, &m, 5000, &d), 0);
    protobuf_c_message_free_unpacked(m, NULL);
    pthread_mutex_lock(&lock);
    bad = 1u << 1;
    pthread_mutex_unlock(&lock);
    gs_plugin_changed(pl);
    assert_int_equal(
        gs_grpc_stream_next(s, &v1beta1__list_and_watch_response__descriptor, &m, 5000, &d), 0);
    const V1beta1__ListAndWatchResponse *r = (const void *)m;
    assert_int_equal(r->n_devices, 12);
    assert_string_equal(r->devices[4]->health, "Unhealthy");
    assert_string_equal(r->devices[0]->health, "Healthy");
    protobuf_c_message_free_unpacked(m, NULL);
    gs_grpc_stream_close(s);

    /* kubelet restarts (its socket is a new file): the plugin knows it must register again */
    pthread_mutex_lock(&lock);
    assert_int_equal(gs_plugin_stale(pl), 0);
    pthread_mutex_unlock(&lock);
    fake_kubelet_stop(k);
    k = fake_kubelet_start(dir);
    pthread_mutex_lock(&lock);
    assert_int_equal(gs_plugin_stale(pl), 1);
    pthread_mutex_unlock(&lock);
    gs_plugin_stop(pl);
    fake_kubelet_stop(k);
    free(p);
}

int main(void)
{
    snprintf(tmp, sizeof(tmp), "/tmp/gpusched-test-node-XXXXXX");
    if (!mkdtemp(tmp))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvml_same_tree_as_text),
        cmocka_unit_test(test_nvml_sysfs_locality),
        cmocka_unit_test(test_nvml_missing),
        cmocka_unit_test(test_discover_fallbacks),
        cmocka_unit_test(test_discover_smi_limits),
        cmocka_unit_test(test_hwloc_xml),
        cmocka_unit_test(test_mig_calls),
        cmocka_unit_test(test_xid),
        cmocka_unit_test(test_plan_devices),
        cmocka_unit_test(test_plan_allocate_env),
        cmocka_unit_test(test_plan_two_pods_never_swap),
        cmocka_unit_test(test_plan_containers),
        cmocka_unit_test(test_plan_restart),
        cmocka_unit_test(test_plan_bad_pods),
        cmocka_unit_test(test_cgroup_tree),
        cmocka_unit_test(test_plan_context_mib),
        cmocka_unit_test(test_pod_regions),
        cmocka_unit_test(test_cdi_spec),
        cmocka_unit_test(test_plugin_grpc),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
