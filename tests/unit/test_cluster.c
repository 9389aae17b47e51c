/* Cluster: node validation, default topology templates, name index, totals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cluster_impl.h"
#include "gpusched/catalog.h"
#include "gpusched/diag.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static struct gs_node_spec spec(const char *name, const char *model, int gpus)
{
    return (struct gs_node_spec){.name = name,
                                 .model = gs_catalog_find(model, -1),
                                 .gpus = gpus,
                                 .cpu_milli = 96000,
                                 .memory_mib = 393216};
}

static void test_default_templates(void **state)
{
    (void)state;
    uint8_t pcie[8], nvl[8];
    gs_topology_default(gs_catalog_find("A100-SXM4-80GB", -1), 8, pcie, nvl);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(nvl[i], 0); /* one NVLink group of eight */
        assert_int_equal(pcie[i], i / 2);
    }
    gs_topology_default(gs_catalog_find("T4", -1), 8, pcie, nvl);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(nvl[i], GS_NO_GROUP);
        assert_int_equal(pcie[i], i / 4);
    }
}

static void test_add_and_find(void **state)
{
    (void)state;
    struct gs_cluster *c;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_cluster_new(&c), 0);
    char name[32];
    for (int i = 0; i < 300; i++) { /* past several index growths */
        snprintf(name, sizeof(name), "n%03d", i);
        struct gs_node_spec s = spec(name, "G2", 8);
        assert_int_equal(gs_cluster_add_node(c, &s, &d), i);
    }
    assert_int_equal(gs_cluster_node_count(c), 300);
    assert_int_equal(gs_cluster_gpu_count(c), 2400);
    assert_int_equal(gs_cluster_find(c, "n123"), 123);
    assert_int_equal(gs_cluster_find(c, "nope"), -ENOENT);
    assert_string_equal(gs_cluster_node_name(c, 7), "n007");
    assert_null(gs_cluster_node_name(c, 300));
    assert_int_equal(gs_cluster_model_mask(c), 1u << gs_catalog_find("G2", -1));
    struct gs_cluster_totals t;
    gs_cluster_totals(c, &t);
    assert_int_equal(t.gpu_milli, 2400000);
    assert_int_equal(t.gpu_milli_used, 0);
    assert_int_equal(t.gpus_idle, 2400);
    assert_int_equal(t.cpu_milli, 300 * 96000);
    gs_cluster_free(c);
}

static void test_rejects_bad_nodes(void **state)
{
    (void)state;
    struct gs_cluster *c;
    struct gs_diag d;
    gs_diag_init(&d);
    gs_cluster_new(&c);
    struct gs_node_spec s = spec("a", "G2", 8);
    assert_int_equal(gs_cluster_add_node(c, &s, &d), 0);
    assert_int_equal(gs_cluster_add_node(c, &s, &d), -EINVAL);
    assert_non_null(strstr(d.msg, "duplicate"));
    s = spec("b", "G2", GS_GPUS_MAX + 1);
    assert_int_equal(gs_cluster_add_node(c, &s, &d), -EINVAL);
    s = spec("c", "G2", 8);
    s.cpu_milli = 0;
    assert_int_equal(gs_cluster_add_node(c, &s, &d), -EINVAL);
    s = spec("", "G2", 8);
    assert_int_equal(gs_cluster_add_node(c, &s, &d), -EINVAL);
    s = spec("d", "G2", 2);
    s.model = 99;
    assert_int_equal(gs_cluster_add_node(c, &s, &d), -EINVAL);
    uint8_t bad[2] = {0, 40};
    s = spec("e", "G2", 2);
    s.pcie_domain = bad;
    assert_int_equal(gs_cluster_add_node(c, &s, &d), -EINVAL);
    assert_int_equal(gs_cluster_node_count(c), 1); /* nothing half-added */
    gs_cluster_free(c);
    gs_cluster_free(NULL);
}

static void test_custom_topology_kept(void **state)
{
    (void)state;
    struct gs_cluster *c;
    struct gs_diag d;
    gs_diag_init(&d);
    gs_cluster_new(&c);
    uint8_t pcie[4] = {0, 0, 1, 1}, nvl[4] = {0, 0, 1, 1};
    struct gs_node_spec s = spec("x", "A100-SXM4-80GB", 4);
    s.pcie_domain = pcie;
    s.nvlink_group = nvl;
    s.zone = "az-2";
    assert_int_equal(gs_cluster_add_node(c, &s, &d), 0);
    assert_int_equal(c->nodes[0].nvlink[3], 1);
    assert_int_equal(c->nodes[0].pcie[1], 0);
    assert_string_equal(c->zones[c->nodes[0].zone], "az-2");
    gs_cluster_free(c);
}

/* A card list written and read back; any other text refused, not counted by its commas. */
static void test_gpu_list(void **state)
{
    (void)state;
    char text[GS_GPU_LIST_MAX];
    uint32_t mask;
    const uint32_t masks[] = {0, 1, 0x23, 0x8000, 0xffff, 0x12345};
    const char *want[] = {"",
                          "0",
                          "0,1,5",
                          "15",
                          "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15",
                          "0,2,6,8,9,13"}; /* bit 16, no card, left out */
    for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
        size_t n = gs_gpu_list_text(masks[i], text);
        assert_string_equal(text, want[i]);
        assert_int_equal(n, strlen(want[i]));
        assert_int_equal(gs_gpu_list_parse(text, &mask), __builtin_popcount(masks[i] & 0xffff));
        assert_int_equal(mask, masks[i] & 0xffff);
    }
    const char *bad[] = {"zz,,-1",
                         "0,0",
                         "1,0",
                         "16",
                         " 1",
                         "1 ",
                         "01",
                         "0,",
                         ",0",
                         "-1",
                         "+1",
                         "0;1",
                         "99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(gs_gpu_list_parse(bad[i], &mask), -EINVAL);
    assert_int_equal(gs_gpu_list_parse(NULL, &mask), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_templates), cmocka_unit_test(test_add_and_find),
        cmocka_unit_test(test_rejects_bad_nodes), cmocka_unit_test(test_custom_topology_kept),
        cmocka_unit_test(test_gpu_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
