/* Growing arrays by doubling (include/gpusched/grow.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpusched/grow.h"

#include <stdlib.h>

static void test_cap_doubles_from_first(void **state)
{
    (void)state;
    assert_int_equal(gs_grow_cap(0, 1, 16), 16);
    assert_int_equal(gs_grow_cap(0, 17, 16), 32);
    assert_int_equal(gs_grow_cap(16, 16, 64), 16); /* enough already */
    assert_int_equal(gs_grow_cap(16, 100, 64), 128);
    assert_int_equal(gs_grow_cap(0, 5, 0), 8); /* a first room of 0 counts as 1 */
    assert_int_equal(gs_grow_cap(SIZE_MAX / 2 + 1, SIZE_MAX, 1), 0);
}

static void test_grow_keeps_what_is_there(void **state)
{
    (void)state;
    int *v = NULL;
    size_t cap = 0;
    for (int i = 0; i < 1000; i++) {
        int *g = gs_grow(v, &cap, (size_t)i + 1, sizeof(*v), 4);
        assert_non_null(g);
        v = g;
        v[i] = i;
        assert_true(cap >= (size_t)i + 1);
    }
    assert_int_equal(cap, 1024);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(v[i], i);
    assert_ptr_equal(gs_grow(v, &cap, 10, sizeof(*v), 4), v); /* room enough: unchanged */
    free(v);
}

static void test_grow_overflow_leaves_array(void **state)
{
    (void)state;
    size_t cap = 4;
    char *v = malloc(4);
    assert_non_null(v);
    assert_null(gs_grow(v, &cap, SIZE_MAX / 2, 4, 4)); /* bytes past size_t */
    assert_int_equal(cap, 4);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cap_doubles_from_first),
        cmocka_unit_test(test_grow_keeps_what_is_there),
        cmocka_unit_test(test_grow_overflow_leaves_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
