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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_templates),
        cmocka_unit_test(test_add_and_find),
        cmocka_unit_test(test_rejects_bad_nodes),
        cmocka_unit_test(test_custom_topology_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
