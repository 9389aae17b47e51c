/* GPU model catalog: names, aliases, figures the trace and the MIG tables rely on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpusched/catalog.h"

#include <errno.h>
#include <string.h>

static void test_trace_models_present(void **state)
{
    (void)state;
    const char *names[] = {"P100", "T4", "V100M16", "V100M32", "A10", "G1", "G2", "G3"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        assert_true(gs_catalog_find(names[i], -1) >= 0);
}

static void test_datacenter_models(void **state)
{
    (void)state;
    int a80 = gs_catalog_find("A100-SXM4-80GB", -1);
    int a40 = gs_catalog_find("A100-SXM4-40GB", -1);
    int h100 = gs_catalog_find("H100-SXM5-80GB", -1);
    int h200 = gs_catalog_find("H200", -1);
    assert_true(a80 >= 0 && a40 >= 0 && h100 >= 0 && h200 >= 0);
    assert_int_equal(gs_catalog_at(a80)->memory_mib, 81920);
    assert_int_equal(gs_catalog_at(a80)->sm_count, 108);
    assert_int_equal(gs_catalog_at(h100)->sm_count, 132);
    assert_true(gs_catalog_at(h200)->memory_mib > gs_catalog_at(h100)->memory_mib);
    assert_int_equal(gs_catalog_at(a80)->form, GS_FORM_SXM);
    assert_int_equal(gs_catalog_at(gs_catalog_find("T4", -1))->form, GS_FORM_PCIE);
}

static void test_aliases_and_case(void **state)
{
    (void)state;
    int a80 = gs_catalog_find("A100-SXM4-80GB", -1);
    assert_int_equal(gs_catalog_find("a100-80gb", -1), a80);
    assert_int_equal(gs_catalog_find("V100-SXM2-32GB", -1), gs_catalog_find("V100M32", -1));
    /* a length-limited look-up matches a prefix of a longer string */
    assert_int_equal(gs_catalog_find("T4|P100", 2), gs_catalog_find("T4", -1));
}

static void test_unknown(void **state)
{
    (void)state;
    assert_int_equal(gs_catalog_find("K80", -1), -ENOENT);
    assert_int_equal(gs_catalog_find("", -1), -ENOENT);
    assert_int_equal(gs_catalog_find("T", -1), -ENOENT);
    assert_null(gs_catalog_at(-1));
    assert_null(gs_catalog_at(gs_catalog_count()));
}

/* GPU feature discovery's nvidia.com/gpu.product values: those of cards the catalog holds map to
 * them; cards it lacks (no figures are made up for them) and MIG instances map to none, the
 * instance's card told by gs_catalog_product_mig(). */
static void test_feature_discovery_products(void **state)
{
    (void)state;
    static const char *const known[][2] = {
        {"NVIDIA-H100-80GB-HBM3", "H100-SXM5-80GB"},
        {"Tesla-T4", "T4"},
        {"Tesla-V100-SXM2-16GB", "V100M16"},
        {"NVIDIA-A100-SXM4-80GB", "A100-SXM4-80GB"},
        {"NVIDIA-A100-SXM4-40GB", "A100-SXM4-40GB"},
        {"NVIDIA-L40S", "L40S"},
        {"NVIDIA-H200", "H200"},
        {"Tesla-T4-SHARED", "T4"},
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        int m = gs_catalog_find_product(known[i][0]);
        if (m < 0 || strcmp(gs_catalog_at(m)->name, known[i][1]))
            fail_msg("%s: %s, not %s", known[i][0], m < 0 ? "unknown" : gs_catalog_at(m)->name,
                     known[i][1]);
    }
    static const char *const lacking[] = {
        "NVIDIA-A100-80GB-PCIe",
        "NVIDIA-A100-PCIE-40GB",
        "NVIDIA-H100-PCIe",
        "NVIDIA-L4",
        "NVIDIA-GeForce-RTX-4090",
        "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb",
        "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb-SHARED",
    };
    for (size_t i = 0; i < sizeof(lacking) / sizeof(lacking[0]); i++)
        if (gs_catalog_find_product(lacking[i]) >= 0)
            fail_msg("%s: taken for %s", lacking[i],
                     gs_catalog_at(gs_catalog_find_product(lacking[i]))->name);
    char prof[32] = "";
    assert_int_equal(
        gs_catalog_product_mig("NVIDIA-A100-SXM4-80GB-MIG-1g.10gb", prof, sizeof(prof)),
        gs_catalog_find("A100-SXM4-80GB", -1));
    assert_string_equal(prof, "1g.10gb");
    assert_int_equal(
        gs_catalog_product_mig("A100-SXM4-40GB-MIG-3g.20gb-SHARED", prof, sizeof(prof)),
        gs_catalog_find("A100-SXM4-40GB", -1));
    assert_string_equal(prof, "3g.20gb");
    assert_int_equal(gs_catalog_product_mig("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", NULL, 0),
                     gs_catalog_find("H100-SXM5-80GB", -1));
    assert_int_equal(gs_catalog_product_mig("NVIDIA-A100-PCIE-40GB-MIG-1g.5gb", NULL, 0), -ENOENT);
    assert_int_equal(gs_catalog_product_mig("NVIDIA-A100-SXM4-80GB", NULL, 0), -ENOENT);
    assert_int_equal(gs_catalog_product_mig("NVIDIA-A100-SXM4-80GB-MIG-", NULL, 0), -ENOENT);
}

static void test_undisclosed_documented(void **state)
{
    (void)state;
    for (int i = 0; i < gs_catalog_count(); i++) {
        const struct gs_gpu_model *m = gs_catalog_at(i);
        assert_true(m->memory_mib > 0 && m->sm_count > 0);
        assert_non_null(m->note);
    }
    const struct gs_gpu_model *g2 = gs_catalog_at(gs_catalog_find("G2", -1));
    assert_non_null(strstr(g2->note, "assumed"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_models_present),
        cmocka_unit_test(test_datacenter_models),
        cmocka_unit_test(test_aliases_and_case),
        cmocka_unit_test(test_unknown),
        cmocka_unit_test(test_undisclosed_documented),
        cmocka_unit_test(test_feature_discovery_products),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
