/*
 * gpuschedd attacked on 127.0.0.1 (tests/common/attack.h): 5,000 nodes and 20,000 pods (a fifth
 * of both in a sanitizer build), 128 slow oversized uploads and 2,000 idle connections (closed
 * when their headers are not whole within http.headerTimeoutSeconds), 8
 * /metrics scrapers and a tenant listing 5,000 pods 20 times a second, every state-changing
 * route tried without credentials, and kill -9 at random moments.
 *
 * What must hold: the daemon's memory stays under 256 MB (RSS; not measured under the
 * sanitizers, whose shadow memory is most of it); /healthz, extender filter and prioritize and
 * POST /v1/pods answer throughout, each within a generous 10 s (how fast is measured and printed,
 * never asserted: bench_attack and bench/README.md have the figures); no request without valid
 * credentials changes anything, and reads without a token name nothing; after it all no
 * acknowledged pod is lost and no card is held past its capacity.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/attack.h"

#include <stdio.h>
#include <stdlib.h>

static void test_attack(void **state)
{
    (void)state;
    struct attack_opts o;
    struct attack_report r;
    const char *san = getenv("GS_SANITIZED");
    int sanitized = san && san[0] == '1';
    attack_opts_default(&o, sanitized);
    /* meson test sets MALLOC_PERTURB_, and glibc then fills every block it hands out or takes
     * back, touching pages a deployed daemon never does: its RSS here read ~60 MB high. */
    unsetenv("MALLOC_PERTURB_");
    assert_int_equal(attack_run(&o, &r), 0);
    attack_report_print(&r, &o);
    fflush(stdout);
    assert_int_equal(r.filled, o.pods);
    if (!sanitized)
        assert_true(r.rss_max_kb < 256 * 1024);
    assert_true(r.healthz.n > 0 && r.filter_under_conns.n > 0);
    assert_int_equal(r.healthz.failed, 0);
    assert_int_equal(r.filter_under_conns.failed, 0);
    assert_int_equal(r.slow_status[2], 0); /* no oversized upload was taken */
    assert_int_equal(r.idle_open_start, o.idle);
    assert_int_equal(r.idle_open_end, 0);    /* headers not whole within 5 s: closed */
    assert_int_equal(r.one_client_open, 64); /* maxConnectionsPerClient */
    assert_true(r.extender.n > 0 && r.post.n > 0 && r.scrape.n > 0 && r.list.n > 0);
    assert_int_equal(r.scrape.failed, 0); /* each scrape answered: 200, or 429 past the rate */
    assert_int_equal(r.extender_quiet.failed, 0);
    assert_int_equal(r.post_quiet.failed, 0);
    assert_int_equal(r.extender.failed, 0);
    assert_int_equal(r.post.failed, 0);
    assert_int_equal(r.strangers_let_in, 0);
    assert_int_equal(r.state_changed, 0);
    assert_int_equal(r.names_shown, 0);
    assert_int_equal(r.kills_done, o.kills);
    assert_true(r.acked > 0 && r.running_checked > 0);
    assert_int_equal(r.lost, 0);
    assert_int_equal(r.double_booked, 0);
    attack_report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_attack)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
