/*
 * Tests of the topology tree (gpusched/topo.h) and of reading `nvidia-smi topo -m` text
 * (gpusched/topotext.h): every real output in tests/data/topo parses to the tree written here,
 * each malformed matrix is one error naming line and column, and a Cluster's topologyFile:
 * simulates. Run from the source root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/util.h"
#include "gpusched/diag.h"
#include "gpusched/scenario.h"
#include "gpusched/topo.h"
#include "gpusched/topotext.h"
#include "gpusched/tsim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIR "tests/data/topo/"
#define N   GS_NO_GROUP

struct expect {
    const char *file;
    int ngpus, npcie, nnvlink, nedges, nnics;
    uint8_t pcie[GS_GPUS_MAX], nvlink[GS_GPUS_MAX];
    int numa[GS_GPUS_MAX]; /* -1: not printed */
    const char *nics[4];
    const char *cpus0; /* GPU0's CPU affinity */
};

static const struct expect fixtures[] = {
    {"dgx1_v100_sxm2_8gpu_hybrid_cube_mesh_mlx5_legend.txt",
     8,
     7,
     2,
     16,
     1,
     /* GPU2 and GPU3 are both PIX to mlx5_0: one switch */
     {0, 1, 2, 2, 3, 4, 5, 6},
     {0, 0, 0, 0, 1, 1, 1, 1},
     {-1, -1, -1, -1, -1, -1, -1, -1},
     {"mlx5_0"},
     "0-11,24-35"},
    {"h100_4gpu_nv6_4nic_pix_per_gpu.txt",
     4,
     4,
     1,
     6,
     4,
     {0, 1, 2, 3},
     {0, 0, 0, 0},
     {3, 1, 7, 5},
     {"NIC0", "NIC1", "NIC2", "NIC3"},
     "6,14,22,30"},
    {"h200_1gpu_vm_underlined_header.txt", 1, 1, 0, 0, 0, {0}, {N}, {0}, {NULL}, "0-15"},
    {"hgx_h100_8gpu_nv18_no_nic_legend.txt",
     8,
     8,
     1,
     28,
     0,
     {0, 1, 2, 3, 4, 5, 6, 7},
     {0, 0, 0, 0, 0, 0, 0, 0},
     {0, 0, 0, 0, 1, 1, 1, 1},
     {NULL},
     "0-47,96-143"},
    {"l40s_4gpu_2socket_node_sys_2nic_legend_nic_legend.txt",
     4,
     4,
     0,
     0,
     2,
     {0, 1, 2, 3},
     {N, N, N, N},
     {0, 0, 1, 1},
     {"mlx5_0", "mlx5_1"},
     "0-95,192-287"},
    {"pcie_8gpu_pix_pxb_sys_mlx5_old_legend_tabs.txt",
     8,
     2,
     0,
     0,
     1,
     {0, 0, 0, 0, 1, 1, 1, 1},
     {N, N, N, N, N, N, N, N},
     {-1, -1, -1, -1, -1, -1, -1, -1},
     {"mlx5_0"},
     "0-13"},
    {"rtx4090_8gpu_all_sys_2socket_2nic_tabs.txt",
     8,
     8,
     0,
     0,
     2,
     {0, 1, 2, 3, 4, 5, 6, 7},
     {N, N, N, N, N, N, N, N},
     {0, 0, 0, 0, 1, 1, 1, 1},
     {"NIC0", "NIC1"},
     "0-55,112-167"},
    {"workstation_4gpu_all_phb_rtx4090_a6000_legend.txt",
     4,
     4,
     0,
     0,
     0,
     {0, 1, 2, 3},
     {N, N, N, N},
     {0, 0, 0, 0},
     {NULL},
     "0-15"},
};

static struct gs_topo *load(const char *path)
{
    struct gs_topo *t = malloc(sizeof(*t));
    struct gs_diag d;
    gs_diag_init(&d);
    assert_non_null(t);
    int rc = gs_topo_load(path, t, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    return t;
}

static void test_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
        const struct expect *e = &fixtures[i];
        char path[256];
        snprintf(path, sizeof(path), DIR "%s", e->file);
        struct gs_topo *t = load(path);
        print_message("%s\n", e->file);
        assert_int_equal(t->ngpus, e->ngpus);
        assert_int_equal(t->npcie, e->npcie);
        assert_int_equal(t->nnvlink, e->nnvlink);
        assert_int_equal(t->nedges, e->nedges);
        assert_int_equal(t->nnics, e->nnics);
        assert_memory_equal(t->pcie_domain, e->pcie, (size_t)e->ngpus);
        assert_memory_equal(t->nvlink_group, e->nvlink, (size_t)e->ngpus);
        for (int g = 0; g < e->ngpus; g++)
            assert_int_equal(t->gpu[g].numa, e->numa[g]);
        for (int n = 0; n < e->nnics; n++)
            assert_string_equal(t->nic[n], e->nics[n]);
        assert_string_equal(t->gpu[0].cpus, e->cpus0);
        free(t);
    }
}

/* The DGX-1 hybrid cube-mesh: quads, and the cross links kept with their link counts. */
static void test_dgx1_cross_links(void **state)
{
    (void)state;
    struct gs_topo *t = load(DIR "dgx1_v100_sxm2_8gpu_hybrid_cube_mesh_mlx5_legend.txt");
    static const struct gs_topo_edge cross[] = {{0, 4, 2}, {1, 5, 2}, {2, 6, 1}, {3, 7, 1}};
    int found = 0;
    for (int e = 0; e < t->nedges; e++) {
        const struct gs_topo_edge *x = &t->edges[e];
        if (t->nvlink_group[x->a] == t->nvlink_group[x->b])
            continue;
        assert_true(found < 4);
        assert_int_equal(x->a, cross[found].a);
        assert_int_equal(x->b, cross[found].b);
        assert_int_equal(x->links, cross[found].links);
        found++;
    }
    assert_int_equal(found, 4);
    assert_int_equal(t->link[0][3], GS_LINK_NV);
    assert_int_equal(t->nvlinks[0][3], 2);
    assert_int_equal(t->link[0][5], GS_LINK_SYS);
    assert_int_equal(t->nic_link[0][2], GS_LINK_PIX);
    /* 0-1 NV1, 0-2 NV1, 0-3 NV2, 1-2 NV2, 1-3 NV1, 2-3 NV2 */
    assert_int_equal(gs_topo_nvlinks_of(t, 0x0f), 9);
    assert_int_equal(gs_topo_nvlinks_of(t, 0x11), 2);
    free(t);
}

static int parse(const char *text, struct gs_topo *t, struct gs_diag *d)
{
    gs_diag_init(d);
    return gs_topo_parse_text("m.txt", text, strlen(text), t, d);
}

/* What machines also print: escapes, SOC, a NUMA range and list, a P2P matrix after. */
static void test_forms(void **state)
{
    (void)state;
    struct gs_topo t;
    struct gs_diag d;
    const char *text = "$ nvidia-smi topo -m\n"
                       "\t\x1b[4mGPU0\t\x1b[0m\x1b[4mGPU1\x1b[0m\tGPU2\t\x1b[4mCPU Affinity\x1b[0m"
                       "\tNUMA Affinity\tGPU NUMA ID\n"
                       "GPU0\t X \tNV4\tSOC\t0-7\t6-7\t\t8\n"
                       "GPU1\tNV4\t X \tSOC\t0-7\t0,2\tN/A\n"
                       "GPU2\tSOC\tSOC\t X \tN/A\tN/A\tN/A\n"
                       "\n"
                       "Legend:\n  X = Self\n\n"
                       " \tGPU0\tGPU1\tGPU2\n"
                       " GPU0\tX\tOK\tNS\n GPU1\tOK\tX\tNS\n GPU2\tNS\tNS\tX\n";
    int rc = parse(text, &t, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(t.ngpus, 3);
    assert_int_equal(t.nnvlink, 1);
    assert_int_equal(t.nvlink_group[2], GS_NO_GROUP);
    assert_int_equal(t.link[0][2], GS_LINK_SYS);
    assert_int_equal(t.gpu[0].numa, 6);
    assert_string_equal(t.gpu[0].numa_list, "6-7");
    assert_int_equal(t.gpu[0].gpu_numa, 8);
    assert_int_equal(t.gpu[1].numa, 0);
    assert_int_equal(t.gpu[2].numa, -1);
    assert_int_equal(t.gpu[2].gpu_numa, -1);
    assert_string_equal(t.gpu[2].cpus, "");
    /* a byte-order mark before the header (an editor's save) is not a word of it */
    text = "\xef\xbb\xbf\tGPU0\tGPU1\tCPU Affinity\n"
           "GPU0\t X \tNV4\t0-7\n"
           "GPU1\tNV4\t X \t0-7\n";
    rc = parse(text, &t, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(t.ngpus, 2);
    assert_int_equal(t.nnvlink, 1);
}

/* A path of NVLinks 0-1-2: one pair is a group, GPU2 keeps its link as an edge. */
static void test_path_nvlink(void **state)
{
    (void)state;
    struct gs_topo t;
    struct gs_diag d;
    assert_int_equal(
        parse("  GPU0 GPU1 GPU2\nGPU0 X NV1 PHB\nGPU1 NV1 X NV2\nGPU2 PHB NV2 X\n", &t, &d), 0);
    assert_int_equal(t.nnvlink, 1);
    assert_int_equal(t.nvlink_group[0], 0);
    assert_int_equal(t.nvlink_group[1], 0);
    assert_int_equal(t.nvlink_group[2], GS_NO_GROUP);
    assert_int_equal(t.nedges, 2);
}

/* CPUs numbered alternately across two sockets are listed one by one: 96 of them, 182 bytes, were
 * refused as too long a word (and NVML's and hwloc's lists were cut at 127 bytes). */
static void test_alternate_cpus(void **state)
{
    (void)state;
    static struct gs_topo t;
    struct gs_diag d;
    char cpus[512] = "", text[1200];
    for (int c = 0; c < 192; c += 2)
        snprintf(cpus + strlen(cpus), sizeof(cpus) - strlen(cpus), c ? ",%d" : "%d", c);
    snprintf(text, sizeof(text), "\tGPU0\tGPU1\tCPU Affinity\nGPU0\tX\tSYS\t%s\nGPU1\tSYS\tX\t%s\n",
             cpus, cpus);
    assert_int_equal(parse(text, &t, &d), 0);
    assert_string_equal(t.gpu[1].cpus, cpus);
}

static void bad(const char *text, const char *where, const char *what)
{
    struct gs_topo t;
    struct gs_diag d;
    assert_int_equal(parse(text, &t, &d), -EINVAL);
    if (!strstr(d.msg, where) || !strstr(d.msg, what))
        print_error("want \"%s\" and \"%s\" in: %s\n", where, what, d.msg);
    assert_non_null(strstr(d.msg, where));
    assert_non_null(strstr(d.msg, what));
}

static void test_malformed(void **state)
{
    (void)state;
    bad("", "m.txt:1:1:", "no `nvidia-smi topo -m` matrix");
    bad("\tGPU0\tGPU1\nGPU0\t X \tPIQ\nGPU1\tPIX\t X \n", "m.txt:2:10:", "\"PIQ\" is not a link");
    bad("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIX\n", "m.txt:3:9:", "row GPU1 has 1 fields");
    bad("\tGPU0\tGPU1\nGPU0\t X \tPIX\n\n", "m.txt:3:1:", "before the row of GPU1");
    bad("\tGPU0\tGPU1\nGPU1\tPIX\t X \nGPU0\t X \tPIX\n", "m.txt:2:1:", "out of order");
    bad("\tGPU0\tGPU1\nGPU0\t X \tX\nGPU1\tPIX\t X \n", "m.txt:2:10:", "X off the diagonal");
    bad("\tGPU0\tGPU1\nGPU0\tPIX\tPIX\nGPU1\tPIX\t X \n", "m.txt:2:6:", "must be X");
    bad("\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV1\t X \n", "m.txt:3:6:",
        "pair reads NV1, but the other end (line 2, column 10) reads NV2"); /* counts it lost */
    bad("\tGPU0\tGPU1\nGPU0\t X \tNV19\nGPU1\tNV19\t X \n",
        "m.txt:2:10:", "NV19: more NVLinks than the 18 a card has");
    bad("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIX\t X \nGPU7\tPIX\tPIX\n",
        "m.txt:4:1:", "names no device");
    bad("\tGPU0\tCPU Affinity\nGPU0\t X \t0-3x\n", "m.txt:2:10:", "CPU Affinity \"0-3x\"");
    bad("\tGPU0\tmlx5_0\nGPU0\t X \tNV2\nmlx5_0\tNV2\t X \n", "m.txt:2:10:", "NVLink to a NIC");
    bad("\tGPU1\tGPU0\n", "m.txt:1:2:", "out of order");
    bad("\tGPU0\tCPU Affinity\tGPU1\n", "m.txt:1:20:", "after the affinity columns");
    /* 17 GPUs */
    char big[512] = "";
    for (int g = 0; g <= GS_GPUS_MAX; g++)
        snprintf(big + strlen(big), sizeof(big) - strlen(big), " GPU%d", g);
    bad(big, "m.txt:1:", "more GPUs than the 16");
    /* a word past the cap is named as one, where it starts, not as a long line */
    char word[GS_TOPO_CPUS_MAX + 64] = "\tGPU0\tGPU";
    memset(word + strlen(word), '7', GS_TOPO_CPUS_MAX + 16);
    bad(word, "m.txt:1:7:", "a word longer than 1023 bytes");
    big[0] = '\0';
    for (int g = 0; g < 60; g++)
        snprintf(big + strlen(big), sizeof(big) - strlen(big), " X");
    bad(big, "m.txt:1:", "more than 56 words");
}

/* bad() with @len bytes of @text, which may hold a NUL. */
static void bad_bytes(const char *text, size_t len, const char *where, const char *what)
{
    struct gs_topo t;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_topo_parse_text("m.txt", text, len, &t, &d), -EINVAL);
    if (!strstr(d.msg, where) || !strstr(d.msg, what))
        print_error("want \"%s\" and \"%s\" in: %s\n", where, what, d.msg);
    assert_non_null(strstr(d.msg, where));
    assert_non_null(strstr(d.msg, what));
}

/* What would be silently lost or overwritten is refused where it is: repeats, NULs, no NUMA. */
static void test_refused_not_dropped(void **state)
{
    (void)state;
    /* five CPU Affinity columns: the second is refused, before anything past aff[] is written */
    bad("GPU0 GPU1 CPU Affinity CPU Affinity CPU Affinity CPU Affinity CPU Affinity\n"
        "GPU0 X NV6 0-3 0\nGPU1 NV6 X 4-7 0\n",
        "m.txt:1:24:", "a second \"CPU Affinity\" column");
    bad("\tGPU0\tCPU Affinity\tNUMA Affinity\tNUMA Affinity\n",
        "m.txt:1:34:", "a second \"NUMA Affinity\"");
    /* a NUL byte would end the line's C string: the words after it must not vanish */
    static const char nul[] = "GPU0\tGPU1\tCPU Affinity\nGPU0\tX\tNV4\t0-3\0junk\n"
                              "GPU1\tNV4\tX\t4-7\n";
    bad_bytes(nul, sizeof(nul) - 1, "m.txt:2:15:", "a NUL byte");
    /* one name, one NIC: in the header, through the legend, and one legend entry per column */
    bad("GPU0 GPU1 mlx5_0 mlx5_0\n", "m.txt:1:18:", "NIC mlx5_0 named twice");
    const char *m = "GPU0 GPU1 NIC0 NIC1\nGPU0 X PIX PIX SYS\nGPU1 PIX X SYS PIX\n"
                    "NIC0 PIX SYS X SYS\nNIC1 SYS PIX SYS X\n\nNIC Legend:\n\n";
    char text[512];
    snprintf(text, sizeof(text), "%s  NIC0: mlx5_0\n  NIC1: mlx5_0\n", m);
    bad(text, "m.txt:10:9:", "NIC Legend: mlx5_0 names two NICs");
    snprintf(text, sizeof(text), "%s  NIC0: mlx5_0\n  NIC0: mlx5_9\n", m);
    bad(text, "m.txt:10:3:", "a second entry for NIC0 (the first is on line 9)");
    snprintf(text, sizeof(text), "%s  NIC0: NIC1\n", m);
    bad(text, "m.txt:9:9:", "NIC1 names two NICs");
    snprintf(text, sizeof(text), "%s  NIC7: mlx5_7\n", m);
    bad(text, "m.txt:9:3:", "NIC7 is no NIC column");
    snprintf(text, sizeof(text), "%s  NIC0: mlx5_0\n  NIC1: \n", m);
    bad(text, "m.txt:10:8:", "NIC Legend: NIC1: names no device");
    /* NUMA nodes Linux cannot number (GS_TOPO_NUMA_MAX) */
    bad("GPU0 GPU1 CPU Affinity NUMA Affinity\nGPU0 X PIX 0-3 9999999\n",
        "m.txt:2:16:", "NUMA Affinity \"9999999\": a NUMA node past 1023");
    bad("GPU0 CPU Affinity NUMA Affinity\nGPU0 X 0-3 0,1024\n", "m.txt:2:12:", "past 1023");
    bad("GPU0 CPU Affinity GPU NUMA ID\nGPU0 X 0-3 4096\n",
        "m.txt:2:12:", "GPU NUMA ID \"4096\": a NUMA node past 1023");
    struct gs_topo t;
    struct gs_diag d;
    assert_int_equal(parse("GPU0 CPU Affinity NUMA Affinity GPU NUMA ID\nGPU0 X 0-3 1022-1023 "
                           "1023\n",
                           &t, &d),
                     0);
    assert_int_equal(t.gpu[0].numa, 1022);
    assert_int_equal(t.gpu[0].gpu_numa, 1023);
}

static void test_cli_file_error(void **state)
{
    (void)state;
    struct gs_topo t;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_true(gs_topo_load(DIR "no-such-file.txt", &t, &d) < 0);
    assert_non_null(strstr(d.msg, "no-such-file.txt"));
}

static struct gs_scenario *scenario(const char *path)
{
    struct gs_scenario *s;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_scenario_new(&s), 0);
    int rc = gs_scenario_load(s, path, &d);
    if (!rc)
        rc = gs_scenario_resolve(s, &d);
    if (rc)
        print_error("%s\n", d.msg);
    assert_int_equal(rc, 0);
    return s;
}

static const struct gs_tsim_pod *pod(const struct gs_tsim *t, const char *name)
{
    for (size_t i = 0; i < gs_tsim_pod_count(t); i++)
        if (strcmp(gs_tsim_pod(t, i)->name, name) == 0)
            return gs_tsim_pod(t, i);
    fail_msg("no pod %s", name);
    return NULL;
}

/* topologyFile: templates read from the fixtures; the NVLink tier gets the DGX-1 quads. */
static void test_topology_file_simulates(void **state)
{
    (void)state;
    struct gs_scenario *s = scenario(DIR "cluster.yaml");
    assert_int_equal(s->policy.ntemplates, 2);
    assert_int_equal(s->policy.templates[0].gpus, 8);
    assert_int_equal(s->policy.templates[0].nvlink_group[3], 0);
    assert_int_equal(s->policy.templates[0].nvlink_group[4], 1);
    assert_int_equal(s->policy.templates[0].nvlinks[0][4], 2);
    assert_int_equal(s->policy.templates[1].gpus, 4);
    assert_int_equal(s->policy.templates[1].nvlink_group[0], GS_NO_GROUP);
    struct gs_tsim *t;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_tsim_run(s, GS_WAY_FULL, &t, &d), 0);
    const struct gs_tsim_pod *a = pod(t, "quad-a"), *b = pod(t, "quad-b");
    assert_string_equal(gs_tsim_node_name(t, a->node), "dgx-1");
    assert_int_equal(a->gpu_mask, 0x0f);
    assert_int_equal(b->node, a->node);
    assert_int_equal(b->gpu_mask, 0xf0);
    gs_tsim_free(t);
    gs_scenario_free(s);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/*
 * A pod no NVLink quad holds, on a DGX-1 whose GPU0 is taken: TopologyScore's cross links pick
 * the five free cards with the most NVLink pairs ({1,2,3,5,6}: six pairs), not the lowest five
 * ({1,2,3,4,5}: five pairs).
 */
static void test_span_uses_cross_links(void **state)
{
    (void)state;
    char cwd[512], text[2048];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    snprintf(text, sizeof(text),
             "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n"
             "  nodeTemplates:\n  - {name: dgx1, gpuModel: V100M16, topologyFile: "
             "%s/" DIR "dgx1_v100_sxm2_8gpu_hybrid_cube_mesh_mlx5_legend.txt}\n"
             "  nodes:\n  - {name: n1, template: dgx1}\n"
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: one, namespace: a, annotations: "
             "{sim.gpusched.io/duration: 2h}}\nspec: {containers: [{name: m, resources: "
             "{limits: {nvidia.com/gpu: 1}}}]}\n"
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: five, namespace: a, annotations: "
             "{sim.gpusched.io/arrival: 10s, sim.gpusched.io/duration: 1h}}\nspec: {containers: "
             "[{name: m, resources: {limits: {nvidia.com/gpu: 5}}}]}\n",
             cwd);
    write_file("/tmp/gpusched-test-topo-span.yaml", text);
    struct gs_scenario *s = scenario("/tmp/gpusched-test-topo-span.yaml");
    struct gs_tsim *t;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_tsim_run(s, GS_WAY_FULL, &t, &d), 0);
    assert_int_equal(pod(t, "one")->gpu_mask, 0x01);
    assert_int_equal(pod(t, "five")->gpu_mask, 0x6e);
    gs_tsim_free(t);
    gs_scenario_free(s);
    unlink("/tmp/gpusched-test-topo-span.yaml");
}

static void scenario_error(const char *tpl, const char *what)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n"
             "  nodeTemplates:\n  - %s\n  nodes:\n  - {name: n1, template: t}\n",
             tpl);
    write_file("/tmp/gpusched-test-topo-bad.yaml", text);
    struct gs_scenario *s;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_scenario_new(&s), 0);
    int rc = gs_scenario_load(s, "/tmp/gpusched-test-topo-bad.yaml", &d);
    if (!rc)
        rc = gs_scenario_resolve(s, &d);
    if (!strstr(d.msg, what))
        print_error("want \"%s\" in: %s\n", what, d.msg);
    assert_true(rc < 0);
    assert_non_null(strstr(d.msg, what));
    gs_scenario_free(s);
    unlink("/tmp/gpusched-test-topo-bad.yaml");
}

static void test_topology_file_errors(void **state)
{
    (void)state;
    char cwd[512], tpl[900];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    scenario_error("{name: t, gpuModel: L40S, topologyFile: nope.txt}",
                   "gpusched-test-topo-bad.yaml:6:45: topologyFile: /tmp/nope.txt");
    snprintf(tpl, sizeof(tpl),
             "{name: t, gpuModel: L40S, gpus: 2, topologyFile: %s/" DIR
             "l40s_4gpu_2socket_node_sys_2nic_legend_nic_legend.txt}",
             cwd);
    scenario_error(tpl, "gpus is 2, but topologyFile");
    snprintf(tpl, sizeof(tpl),
             "{name: t, gpuModel: L40S, pcieDomains: [[0]], topologyFile: %s/" DIR
             "l40s_4gpu_2socket_node_sys_2nic_legend_nic_legend.txt}",
             cwd);
    scenario_error(tpl, "give either the file or those fields");
    /* the file's own error, with its line and column, inside the scenario's */
    write_file("/tmp/gpusched-test-topo-m.txt", "\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIY\t X \n");
    scenario_error("{name: t, gpuModel: L40S, topologyFile: gpusched-test-topo-m.txt}",
                   "/tmp/gpusched-test-topo-m.txt:3:6: \"PIY\" is not a link");
    unlink("/tmp/gpusched-test-topo-m.txt");
    scenario_error("{name: t, gpuModel: L40S, gpus: 2, nvlinks: [[0, 0, 1]]}", "are one GPU");
    scenario_error("{name: t, gpuModel: L40S, gpus: 2, nvlinks: [[0, 1]]}",
                   "[GPU a, GPU b, bonded links]");
    scenario_error("{name: t, gpuModel: L40S, gpus: 2, nvlinks: [[0, 2, 1]]}", "nvlinks GPU");
    /* more than a card has: gpuschedd refused such a node's registration, the simulator took it */
    scenario_error("{name: t, gpuModel: L40S, gpus: 2, nvlinks: [[0, 1, 19]]}", "nvlinks links");
}

/* `gpusched topo ARGS... FILE`: its exit status, its output (stdout then stderr) in @out. */
static int topo_cli(const char *a1, const char *a2, const char *a3, const char *a4,
                    const char *file, char *out, size_t n)
{
    const char *bin = getenv("GPUSCHED_BIN");
    const char *argv[8] = {bin, "topo"};
    int k = 2;
    assert_non_null(bin);
    if (a1)
        argv[k++] = a1;
    if (a2)
        argv[k++] = a2;
    if (a3)
        argv[k++] = a3;
    if (a4)
        argv[k++] = a4;
    argv[k++] = file;
    argv[k] = NULL;
    struct t_run r;
    t_run(argv, &r);
    snprintf(out, n, "%s%s", r.out ? r.out : "", r.err ? r.err : "");
    int st = r.exited ? r.status : -1;
    t_run_free(&r);
    return st;
}

/* A directory read as a read error (exit 1), and a GPU column past GPU15 as a NIC. */
static void test_bad_files(void **state)
{
    (void)state;
    struct gs_topo t;
    struct gs_diag d;
    gs_diag_init(&d);
    /* a directory is bad input (exit 2), not a read error */
    assert_int_equal(gs_topo_load(DIR, &t, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "a directory, not a file"));
    char out[1024];
    assert_int_equal(topo_cli(NULL, NULL, NULL, NULL, DIR, out, sizeof(out)), 2);
    /* a GPU column past GPU15 was taken for a NIC */
    write_file("/tmp/gpusched-test-topo-gpu.txt",
               "\tGPU0\tGPU99999999999999999999\nGPU0\t X \tSYS\n");
    assert_int_equal(gs_topo_load("/tmp/gpusched-test-topo-gpu.txt", &t, &d), -EINVAL);
    assert_non_null(strstr(d.msg, ":1:7: header: GPU99999999999999999999: more GPUs than the 16"));
    unlink("/tmp/gpusched-test-topo-gpu.txt");
}

/* gpusched topo: --yaml is a template the Cluster kind loads as it is; --json; bad input exits 2.
 */
static void test_cli(void **state)
{
    (void)state;
    char out[16384];
    assert_int_equal(topo_cli("--yaml", "--model", "V100M16", "--name=dgx1",
                              DIR "dgx1_v100_sxm2_8gpu_hybrid_cube_mesh_mlx5_legend.txt", out,
                              sizeof(out)),
                     0);
    char text[20000];
    snprintf(text, sizeof(text),
             "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n"
             "  nodeTemplates:\n%s  nodes:\n  - {name: n1, template: dgx1}\n",
             out);
    write_file("/tmp/gpusched-test-topo-yaml.yaml", text);
    struct gs_scenario *s = scenario("/tmp/gpusched-test-topo-yaml.yaml");
    struct gs_topo *t = load(DIR "dgx1_v100_sxm2_8gpu_hybrid_cube_mesh_mlx5_legend.txt");
    assert_int_equal(s->policy.templates[0].gpus, 8);
    assert_memory_equal(s->policy.templates[0].pcie_domain, t->pcie_domain, 8);
    assert_memory_equal(s->policy.templates[0].nvlink_group, t->nvlink_group, 8);
    assert_memory_equal(s->policy.templates[0].nvlinks, t->nvlinks, sizeof(t->nvlinks));
    gs_scenario_free(s);
    free(t);
    unlink("/tmp/gpusched-test-topo-yaml.yaml");

    assert_int_equal(topo_cli("--json", NULL, NULL, NULL, DIR "h100_4gpu_nv6_4nic_pix_per_gpu.txt",
                              out, sizeof(out)),
                     0);
    assert_non_null(strstr(out, "\"nvlinkGroups\": [\n    [\n      0,"));
    assert_non_null(strstr(out, "\"numaAffinity\": \"7\""));
    assert_non_null(strstr(out, "\"NV6\""));

    assert_int_equal(topo_cli(NULL, NULL, NULL, NULL,
                              DIR "pcie_8gpu_pix_pxb_sys_mlx5_old_legend_tabs.txt", out,
                              sizeof(out)),
                     0);
    assert_non_null(strstr(out, "PCIe domain 1: GPU4 GPU5 GPU6 GPU7"));
    assert_non_null(strstr(out, "NIC mlx5_0: nearest PHB to GPU4 GPU5 GPU6 GPU7"));

    assert_int_equal(topo_cli("--yaml", NULL, NULL, NULL, DIR "h100_4gpu_nv6_4nic_pix_per_gpu.txt",
                              out, sizeof(out)),
                     2);
    assert_non_null(strstr(out, "give --model"));
    /* a model without NVLink was written the matrix's NVLink groups */
    assert_int_equal(topo_cli("--yaml", "--model", "T4", NULL,
                              DIR "h100_4gpu_nv6_4nic_pix_per_gpu.txt", out, sizeof(out)),
                     2);
    assert_non_null(strstr(out, "--model T4: "));
    assert_non_null(strstr(out, "T4 has no NVLink"));
    write_file("/tmp/gpusched-test-topo-bad.txt", "\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPXX\t X \n");
    assert_int_equal(
        topo_cli(NULL, NULL, NULL, NULL, "/tmp/gpusched-test-topo-bad.txt", out, sizeof(out)), 2);
    assert_non_null(strstr(out, "/tmp/gpusched-test-topo-bad.txt:3:6: \"PXX\" is not a link"));
    unlink("/tmp/gpusched-test-topo-bad.txt");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_dgx1_cross_links),
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_path_nvlink),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_alternate_cpus),
        cmocka_unit_test(test_refused_not_dropped),
        cmocka_unit_test(test_cli_file_error),
        cmocka_unit_test(test_topology_file_simulates),
        cmocka_unit_test(test_span_uses_cross_links),
        cmocka_unit_test(test_topology_file_errors),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
