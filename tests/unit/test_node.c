/*
 * Tests of the node agent's parts that need no network: NVML discovery through the fake
 * libnvidia-ml.so.1 (tests/node/fake_nvml.c, its path in $FAKE_NVML_LIB), the fallbacks, MIG
 * calls, Xid filtering, and the plan that matches kubelet's Allocate to the pod gpuschedd bound.
 * Run from the source root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "node/discover.h"
#include "node/nvml.h"
#include "node/plan.h"

#include "gpusched/diag.h"
#include "gpusched/gpushare_env.h"
#include "gpusched/topo.h"
#include "gpusched/topotext.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    assert_int_equal(gs_nvml_catalog_model(a->gpu[0].name) >= 0, 1);
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
    struct gs_discover_opts o = {"/nonexistent/libnvidia-ml.so.1", smi, NULL, "/sys", NULL};
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
        assert_non_null(strstr(d.msg, "hwloc"));
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
    assert_int_equal(gs_nvml_mig_destroy(n, 7, 4, NULL, &d), 0);
    assert_int_equal(lines_with(log, "nvmlComputeInstanceDestroy gpu=7 start=4"), 1);
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
        cmocka_unit_test(test_hwloc_xml),
        cmocka_unit_test(test_mig_calls),
        cmocka_unit_test(test_xid),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
