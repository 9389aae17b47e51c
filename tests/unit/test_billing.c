/*
 * Billing: exact money text, the meters and their rounding, the default rate rules, the RateCard
 * loader's errors, and `gpusched bill` as a user runs it ($GPUSCHED_BIN, from the source root).
 * Every total is checked against the sum of the lines it reports.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gpusched/billing.h"
#include "gpusched/catalog.h"
#include "gpusched/diag.h"

#include "common/util.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define RATES    "data/billing/rates.yaml"
#define FIXTURES "tests/data/billing/"
#define A100_80  "A100-SXM4-80GB"
#define HOUR     3600
#define DAY      86400

static char tmpdir[64]; /* made by main() for the files the tests write */

static void assert_has(const char *text, const char *needle)
{
    if (!text || !needle || !strstr(text, needle))
        fail_msg("expected \"%s\" in: %s", needle ? needle : "(null)", text ? text : "(null)");
}

static int model(const char *name)
{
    int m = gs_catalog_find(name, -1);
    assert_true(m >= 0);
    return m;
}

static struct gs_ratecard *default_card(void)
{
    struct gs_ratecard *rc = NULL;
    struct gs_diag d;
    gs_diag_init(&d);
    if (gs_ratecard_load(RATES, &rc, &d) != 0)
        fail_msg("%s", d.msg);
    return rc;
}

/* card_with() - a rate card pricing one model's exclusive use, and nothing else. */
static struct gs_ratecard *card_with(const char *name, int64_t exclusive)
{
    struct gs_ratecard *rc;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_ratecard_new(&rc), 0);
    if (gs_ratecard_set(rc, model(name), GS_BILL_EXCLUSIVE, NULL, exclusive, &d) != 0)
        fail_msg("%s", d.msg);
    return rc;
}

static int add(struct gs_bill *b, const char *tenant, enum gs_bill_mode mode, const char *name,
               const char *profile, int64_t cards, int64_t share, int64_t start, int64_t end)
{
    struct gs_bill_use u = {tenant, mode, model(name), profile, cards, share, start, end};
    return gs_bill_add_use(b, &u, NULL);
}

/* sum_lines() - the sum of every line's cost, checking the report order on the way. */
static int64_t sum_lines(struct gs_bill *b)
{
    size_t it = 0, n = 0;
    int64_t sum = 0;
    const struct gs_bill_line *prev = NULL;
    for (const struct gs_bill_line *l; (l = gs_bill_next(b, &it)) != NULL; n++) {
        if (prev) {
            int c = strcmp(prev->tenant, l->tenant);
            if (!c)
                c = strcmp(prev->resource, l->resource);
            assert_true(c < 0 || (c == 0 && prev->day < l->day));
        }
        sum += l->cost_udollars;
        prev = l;
    }
    assert_int_equal(n, gs_bill_count(b));
    return sum;
}

/* ---- Money ---- */

static void test_money_parse(void **state)
{
    static const struct {
        const char *s;
        int rc;
        int64_t v;
    } cases[] = {
        {"8", 0, 8000000},
        {"8.00", 0, 8000000},
        {"0.50", 0, 500000},
        {"0.000001", 0, 1},
        {"007.5", 0, 7500000},
        {"1000000000000", 0, GS_MONEY_MAX},
        {"1000000000000.000001", -ERANGE, 0},
        {"99999999999999999999999", -ERANGE, 0},
        {"-1", -EDOM, 0},
        {"-0.01", -EDOM, 0},
        {"1.0000001", -ENOTSUP, 0},
        {"0.0000000", -ENOTSUP, 0},
        {"", -EINVAL, 0},
        {".5", -EINVAL, 0},
        {"5.", -EINVAL, 0},
        {"+5", -EINVAL, 0},
        {" 5", -EINVAL, 0},
        {"5 ", -EINVAL, 0},
        {"1e3", -EINVAL, 0},
        {"$8", -EINVAL, 0},
        {"8,00", -EINVAL, 0},
        {"0x10", -EINVAL, 0},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t v = -42;
        struct gs_diag d;
        gs_diag_init(&d);
        int rc = gs_money_parse(cases[i].s, &v, &d);
        if (rc != cases[i].rc)
            fail_msg("\"%s\": rc %d, want %d (%s)", cases[i].s, rc, cases[i].rc, d.msg);
        assert_int_equal(v, cases[i].rc ? -42 : cases[i].v); /* written only on success */
        if (rc)
            assert_has(d.msg, cases[i].s);
    }
}

/* What people read: cents, rounded half away from zero, thousands separated, the sign first. */
static void test_money_format_human(void **state)
{
    static const struct {
        int64_t v;
        const char *currency, *s;
    } cases[] = {
        {0, NULL, "$0.00"},
        {4999, "USD", "$0.00"},
        {5000, "USD", "$0.01"},
        {27112950122, NULL, "$27,112.95"},
        {86659469900, NULL, "$86,659.47"},
        {999994999, NULL, "$999.99"},
        {999995000, NULL, "$1,000.00"},
        {123456789012345678, NULL, "$123,456,789,012.35"},
        {-1500000, NULL, "-$1.50"},
        {-4000, NULL, "$0.00"}, /* no "-$0.00" */
        {1234500000, "EUR", "EUR 1,234.50"},
        {INT64_MIN, "USD", "-$9,223,372,036,854.78"},
        {INT64_MAX, "CHF", "CHF 9,223,372,036,854.78"},
    };
    char buf[GS_MONEY_HUMAN_MAX];
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_string_equal(gs_money_format_human(cases[i].v, cases[i].currency, buf), cases[i].s);
    /* a rate keeps what it has below the cent: quantity x rate must give the cost */
    static const struct {
        int64_t v;
        const char *s;
    } rates[] = {
        {8000000, "$8.00"},
        {598125, "$0.598125"},
        {1234567890, "$1,234.56789"},
        {-4000, "-$0.004"},
        {INT64_MIN, "-$9,223,372,036,854.775808"},
        {0, "$0.00"},
        {10000, "$0.01"},
    };
    for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
        assert_string_equal(gs_money_format_rate(rates[i].v, NULL, buf), rates[i].s);
}

static void test_money_format(void **state)
{
    static const struct {
        int64_t v;
        const char *s;
    } cases[] = {
        {0, "0.00"},          {1, "0.000001"},
        {10000, "0.01"},      {1500000, "1.50"},
        {15500000, "15.50"},  {8000000, "8.00"},
        {764394, "0.764394"}, {2217500, "2.2175"},
        {1234560, "1.23456"}, {GS_MONEY_MAX, "1000000000000.00"},
        {-1500000, "-1.50"},  {INT64_MIN, "-9223372036854.775808"},
    };
    char buf[GS_MONEY_STR_MAX];
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_string_equal(gs_money_format(cases[i].v, buf), cases[i].s);
        int64_t back;
        if (cases[i].v >= 0) /* what is printed parses back to the same integer */
            assert_int_equal(gs_money_parse(buf, &back, NULL), 0);
        if (cases[i].v >= 0)
            assert_int_equal(back, cases[i].v);
    }
}

/* ---- Meters and bills ---- */

/* The judged example: A100-80GB exclusive, MIG 4g.40gb, MIG 2g.20gb and a 30 % share, 1 h each. */
static void test_seed_example(void **state)
{
    static const int64_t want[] = {8000000, 2000000, 4000000, 1500000}; /* report order */
    struct gs_ratecard *rc = default_card();
    struct gs_bill *b;
    (void)state;
    assert_int_equal(gs_bill_new(rc, &b), 0);
    assert_int_equal(add(b, "tenant-a", GS_BILL_EXCLUSIVE, A100_80, NULL, 1, 1000, 0, HOUR), 0);
    assert_int_equal(add(b, "tenant-a", GS_BILL_MIG, A100_80, "4g.40gb", 1, 1000, 0, HOUR), 0);
    assert_int_equal(add(b, "tenant-a", GS_BILL_MIG, A100_80, "2g.20gb", 1, 1000, 0, HOUR), 0);
    assert_int_equal(add(b, "tenant-a", GS_BILL_SHARED, A100_80, NULL, 1, 300, 0, HOUR), 0);
    size_t it = 0, k = 0;
    for (const struct gs_bill_line *l; (l = gs_bill_next(b, &it)) != NULL; k++) {
        assert_int_equal(l->cost_udollars, want[k]);
        assert_int_equal(l->day, 0);
    }
    assert_int_equal(k, 4);
    assert_int_equal(gs_bill_total_udollars(b, NULL), 15500000);
    assert_int_equal(gs_bill_total_udollars(b, "tenant-a"), 15500000);
    assert_int_equal(gs_bill_total_udollars(b, "tenant-b"), 0);
    assert_int_equal(sum_lines(b), 15500000);
    gs_bill_free(b);
    gs_ratecard_free(rc);
}

/* Shared and time-sliced use is metered in 10 % steps rounded up: 300 -> 3, 301 -> 4. */
static void test_share_steps(void **state)
{
    static const struct {
        int64_t share, steps;
    } cases[] = {{1, 1}, {100, 1}, {101, 2}, {300, 3}, {301, 4}, {999, 10}, {1000, 10}};
    struct gs_ratecard *rc = default_card();
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        for (int mode = GS_BILL_SHARED; mode <= GS_BILL_TIMESLICE; mode++) {
            struct gs_bill *b;
            size_t it = 0;
            assert_int_equal(gs_bill_new(rc, &b), 0);
            assert_int_equal(add(b, "t", mode, A100_80, NULL, 2, cases[i].share, 0, HOUR), 0);
            const struct gs_bill_line *l = gs_bill_next(b, &it);
            assert_non_null(l);
            assert_int_equal(l->quantity, 2 * HOUR * cases[i].steps);
            assert_int_equal(l->cost_udollars, 2 * 500000 * cases[i].steps);
            assert_string_equal(gs_bill_mode_unit(l->mode), "step-s");
            gs_bill_free(b);
        }
    }
    gs_ratecard_free(rc);
}

/* A line is rounded once, half-up, from its whole quantity: not use by use. */
static void test_rounding_once_per_line(void **state)
{
    struct gs_ratecard *rc = card_with("T4", 1);
    struct gs_bill *b;
    size_t it = 0;
    (void)state;
    assert_int_equal(gs_bill_new(rc, &b), 0);
    /* 900 s at 1 micro-dollar an hour is 0.25 each; two of them on one line are 0.5 -> 1 */
    assert_int_equal(add(b, "t", GS_BILL_EXCLUSIVE, "T4", NULL, 1, 1000, 0, 900), 0);
    assert_int_equal(gs_bill_total_udollars(b, NULL), 0);
    assert_int_equal(add(b, "t", GS_BILL_EXCLUSIVE, "T4", NULL, 1, 1000, 900, 1800), 0);
    assert_int_equal(gs_bill_total_udollars(b, NULL), 1);
    /* 5400 s: 1.5 -> 2 */
    assert_int_equal(add(b, "t", GS_BILL_EXCLUSIVE, "T4", NULL, 1, 1000, 1800, 5400), 0);
    const struct gs_bill_line *l = gs_bill_next(b, &it);
    assert_int_equal(l->quantity, 5400);
    assert_int_equal(l->cost_udollars, 2);
    assert_null(gs_bill_next(b, &it));
    gs_bill_free(b);
    gs_ratecard_free(rc);
}

static void test_day_split(void **state)
{
    static const int64_t want_qty[] = {400, 600};
    static const int64_t want_long[] = {2 * (DAY - 10), 2 * DAY, 2 * DAY, 2 * 5};
    struct gs_ratecard *rc = default_card();
    struct gs_bill *b;
    size_t it = 0, k = 0;
    (void)state;
    assert_int_equal(gs_bill_new(rc, &b), 0);
    assert_int_equal(add(b, "a", GS_BILL_EXCLUSIVE, A100_80, NULL, 1, 1000, 86000, 87000), 0);
    for (const struct gs_bill_line *l; (l = gs_bill_next(b, &it)) != NULL; k++) {
        assert_int_equal(l->day, (int64_t)k);
        assert_int_equal(l->quantity, want_qty[k]);
    }
    assert_int_equal(k, 2);
    /* two cards from 10 s into day 0 to 5 s into day 3 */
    assert_int_equal(add(b, "b", GS_BILL_EXCLUSIVE, A100_80, NULL, 2, 1000, 10, 3 * DAY + 5), 0);
    it = 2; /* tenant a's two lines come first */
    for (k = 0; k < 4; k++) {
        const struct gs_bill_line *l = gs_bill_next(b, &it);
        assert_string_equal(l->tenant, "b");
        assert_int_equal(l->day, (int64_t)k);
        assert_int_equal(l->quantity, want_long[k]);
    }
    assert_null(gs_bill_next(b, &it));
    /* a zero-length use adds nothing */
    assert_int_equal(add(b, "c", GS_BILL_EXCLUSIVE, A100_80, NULL, 1, 1000, 50, 50), 0);
    assert_int_equal(gs_bill_count(b), 6);
    gs_bill_free(b);
    gs_ratecard_free(rc);
}

static int64_t rate(const struct gs_ratecard *rc, const char *name, enum gs_bill_mode mode,
                    const char *profile, int want_derived)
{
    int64_t r = -1;
    int derived = -1;
    assert_int_equal(gs_ratecard_rate(rc, model(name), mode, profile, &r, &derived), 0);
    assert_int_equal(derived, want_derived);
    return r;
}

/* The default rules: MIG by memory slices, shared = exclusive / 16, time-sliced = shared. */
static void test_default_rules(void **state)
{
    struct gs_ratecard *rc = default_card();
    int64_t r;
    (void)state;
    assert_string_equal(gs_ratecard_currency(rc), "USD");
    /* the seed's rates, stated in the card */
    assert_int_equal(rate(rc, A100_80, GS_BILL_EXCLUSIVE, NULL, 0), 8000000);
    assert_int_equal(rate(rc, A100_80, GS_BILL_MIG, "4g.40gb", 0), 4000000);
    assert_int_equal(rate(rc, A100_80, GS_BILL_MIG, "2g.20gb", 0), 2000000);
    assert_int_equal(rate(rc, A100_80, GS_BILL_SHARED, NULL, 0), 500000);
    /* the rules reproduce them, and price what the seed leaves out */
    assert_int_equal(rate(rc, A100_80, GS_BILL_MIG, "3g.40gb", 1), 4000000);
    assert_int_equal(rate(rc, A100_80, GS_BILL_MIG, "1g.10gb", 1), 1000000);
    assert_int_equal(rate(rc, A100_80, GS_BILL_MIG, "1g.20gb", 1), 2000000);
    assert_int_equal(rate(rc, A100_80, GS_BILL_MIG, "7g.80gb", 1), 8000000);
    assert_int_equal(rate(rc, A100_80, GS_BILL_TIMESLICE, NULL, 1), 500000);
    assert_int_equal(rate(rc, "G3", GS_BILL_SHARED, NULL, 1), 500000);
    assert_int_equal(rate(rc, "H200", GS_BILL_SHARED, NULL, 1), 744375);   /* 11.91 / 16 */
    assert_int_equal(rate(rc, "A30", GS_BILL_MIG, "2g.12gb", 1), 1635000); /* 3.27 x 2/4 */
    assert_int_equal(rate(rc, "H100-NVL-94GB", GS_BILL_MIG, "1g.12gb", 1), 1196250);
    assert_int_equal(rate(rc, "T4", GS_BILL_SHARED, NULL, 1), 139375); /* 2.23 / 16 */
    /* no MIG on a T4; no such profile on an A100 */
    assert_int_equal(gs_ratecard_rate(rc, model("T4"), GS_BILL_MIG, "1g.5gb", &r, NULL), -ENOENT);
    assert_int_equal(gs_ratecard_rate(rc, model(A100_80), GS_BILL_MIG, "1g.5gb", &r, NULL),
                     -ENOENT);
    assert_int_equal(gs_ratecard_rate(rc, model(A100_80), GS_BILL_MIG, NULL, &r, NULL), -EINVAL);
    assert_int_equal(gs_ratecard_rate(rc, model("T4"), GS_BILL_SHARED, "x", &r, NULL), -EINVAL);
    gs_ratecard_free(rc);
}

/*
 * Every catalog model is priced, and its exclusive rate is the documented rule of rates.yaml:
 * $8.00 x (memory / 81920 MiB + SMs / 108) / 2, half-up to the cent. Integer arithmetic only.
 */
static void test_rates_follow_documented_rule(void **state)
{
    struct gs_ratecard *rc = default_card();
    (void)state;
    for (int i = 0; i < gs_catalog_count(); i++) {
        const struct gs_gpu_model *m = gs_catalog_at(i);
        int64_t r, num = 800 * ((int64_t)m->memory_mib * 108 + (int64_t)m->sm_count * 81920);
        int64_t den = 2 * 81920 * 108, cents = (2 * num + den) / (2 * den);
        if (gs_ratecard_rate(rc, i, GS_BILL_EXCLUSIVE, NULL, &r, NULL) != 0)
            fail_msg("%s has no rate in %s", m->name, RATES);
        if (r != cents * 10000)
            fail_msg("%s: %s says %lld, the rule %lld micro-dollars", m->name, RATES, (long long)r,
                     (long long)(cents * 10000));
    }
    gs_ratecard_free(rc);
}

/* Explicit rates override the rules; a time-sliced rate follows an explicit shared one. */
static void test_explicit_rates(void **state)
{
    struct gs_ratecard *rc = card_with("H200", 16000000);
    struct gs_diag d;
    int h200 = model("H200");
    (void)state;
    gs_diag_init(&d);
    assert_int_equal(gs_ratecard_rate(rc, model("T4"), GS_BILL_SHARED, NULL, &(int64_t){0}, NULL),
                     -ENOENT); /* no exclusive rate: nothing derives */
    assert_int_equal(gs_ratecard_set(rc, h200, GS_BILL_SHARED, NULL, 700000, &d), 0);
    assert_int_equal(gs_ratecard_set(rc, h200, GS_BILL_MIG, "3g.71gb", 5000000, &d), 0);
    assert_int_equal(rate(rc, "H200", GS_BILL_TIMESLICE, NULL, 1), 700000);
    assert_int_equal(rate(rc, "H200", GS_BILL_MIG, "3g.71gb", 0), 5000000);
    assert_int_equal(rate(rc, "H200", GS_BILL_MIG, "4g.71gb", 1), 8000000);
    assert_int_equal(gs_ratecard_set(rc, h200, GS_BILL_TIMESLICE, NULL, 600000, &d), 0);
    assert_int_equal(rate(rc, "H200", GS_BILL_TIMESLICE, NULL, 0), 600000);
    assert_int_equal(gs_ratecard_set(rc, h200, GS_BILL_SHARED, NULL, 1, &d), -EEXIST);
    assert_int_equal(gs_ratecard_set(rc, h200, GS_BILL_MIG, "9g.99gb", 1, &d), -ENOENT);
    assert_has(d.msg, "its profiles: 1g.18gb");
    assert_int_equal(gs_ratecard_set(rc, h200, GS_BILL_EXCLUSIVE, NULL, -1, &d), -EINVAL);
    assert_int_equal(gs_ratecard_set(rc, model("T4"), GS_BILL_EXCLUSIVE, NULL, GS_RATE_MAX + 1, &d),
                     -EINVAL);
    assert_int_equal(gs_ratecard_set(rc, 99, GS_BILL_EXCLUSIVE, NULL, 1, &d), -EINVAL);
    assert_int_equal(gs_ratecard_set_currency(rc, "EUR"), 0);
    assert_int_equal(gs_ratecard_set_currency(rc, "eur"), -EINVAL);
    assert_int_equal(gs_ratecard_set_currency(rc, "EURO"), -EINVAL);
    assert_string_equal(gs_ratecard_currency(rc), "EUR");
    gs_ratecard_free(rc);
}

/* A rejected use names its field and leaves the bill as it was. */
static void test_bad_uses_change_nothing(void **state)
{
    static const struct {
        struct gs_bill_use u;
        const char *model, *needle;
        int rc;
    } cases[] = {
        {{"", GS_BILL_EXCLUSIVE, 0, NULL, 1, 1000, 0, 10}, A100_80, "tenant is empty", -EINVAL},
        {{"a\nb", GS_BILL_EXCLUSIVE, 0, NULL, 1, 1000, 0, 10}, A100_80, "control", -EINVAL},
        {{"t", GS_BILL_EXCLUSIVE, 0, NULL, 0, 1000, 0, 10}, A100_80, "cards 0", -EINVAL},
        {{"t", GS_BILL_EXCLUSIVE, 0, NULL, GS_BILL_CARDS_MAX + 1, 1000, 0, 10},
         A100_80,
         "cards",
         -EINVAL},
        {{"t", GS_BILL_EXCLUSIVE, 0, NULL, 1, 500, 0, 10}, A100_80, "share_milli 500", -EINVAL},
        {{"t", GS_BILL_SHARED, 0, NULL, 1, 0, 0, 10}, A100_80, "share_milli 0", -EINVAL},
        {{"t", GS_BILL_SHARED, 0, NULL, 1, 1001, 0, 10}, A100_80, "share_milli 1001", -EINVAL},
        {{"t", GS_BILL_EXCLUSIVE, 0, NULL, 1, 1000, -1, 10}, A100_80, "start_s -1", -EINVAL},
        {{"t", GS_BILL_EXCLUSIVE, 0, NULL, 1, 1000, 10, 9}, A100_80, "end_s 9", -EINVAL},
        {{"t", GS_BILL_EXCLUSIVE, 0, NULL, 1, 1000, 0, GS_BILL_TIME_MAX_S + 1},
         A100_80,
         "end_s",
         -EINVAL},
        {{"t", GS_BILL_MIG, 0, NULL, 1, 1000, 0, 10}, A100_80, "profile is missing", -EINVAL},
        {{"t", GS_BILL_SHARED, 0, "2g.20gb", 1, 300, 0, 10}, A100_80, "only to a mig", -EINVAL},
        {{"t", GS_BILL_MIG, 0, "5g.50gb", 1, 1000, 0, 10}, A100_80, "not a MIG profile", -ENOENT},
        {{"t", GS_BILL_MIG, 0, "1g.5gb", 1, 1000, 0, 10}, "T4", "T4 has no MIG", -ENOENT},
        {{"t", (enum gs_bill_mode)7, 0, NULL, 1, 1000, 0, 10}, A100_80, "mode 7", -EINVAL},
    };
    struct gs_ratecard *rc = default_card();
    struct gs_bill *b;
    (void)state;
    assert_int_equal(gs_bill_new(rc, &b), 0);
    assert_int_equal(add(b, "t", GS_BILL_EXCLUSIVE, A100_80, NULL, 1, 1000, 0, 1800), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct gs_bill_use u = cases[i].u;
        struct gs_diag d;
        gs_diag_init(&d);
        u.model = model(cases[i].model);
        assert_int_equal(gs_bill_add_use(b, &u, &d), cases[i].rc);
        assert_has(d.msg, cases[i].needle);
        assert_int_equal(gs_bill_count(b), 1);
        assert_int_equal(gs_bill_total_udollars(b, NULL), 4000000);
    }
    gs_bill_free(b);
    gs_ratecard_free(rc);
}

/* A use the card cannot price is an error naming the resource, never a free ride. */
static void test_unpriced_model(void **state)
{
    struct gs_ratecard *rc;
    struct gs_bill *b;
    struct gs_diag d;
    (void)state;
    gs_diag_init(&d);
    assert_int_equal(gs_ratecard_new(&rc), 0);
    assert_int_equal(gs_bill_new(rc, &b), 0);
    struct gs_bill_use u = {"t", GS_BILL_SHARED, model("L40S"), NULL, 1, 200, 0, 60};
    assert_int_equal(gs_bill_add_use(b, &u, &d), -ENOENT);
    assert_has(d.msg, "no rate for L40S shared");
    assert_int_equal(gs_bill_count(b), 0);
    gs_bill_free(b);
    gs_ratecard_free(rc);
}

/* A line's cost, and the bill's total, stop at GS_MONEY_MAX with -ERANGE and no change. */
static void test_money_overflow(void **state)
{
    struct gs_ratecard *rc = card_with("T4", GS_RATE_MAX);
    struct gs_bill *b;
    struct gs_diag d;
    int t4 = model("T4");
    (void)state;
    gs_diag_init(&d);
    assert_int_equal(gs_bill_new(rc, &b), 0);
    /* 2^20 cards for a day at $10^6 an hour: 2.5e19 micro-dollars on one line */
    struct gs_bill_use u = {"t", GS_BILL_EXCLUSIVE, t4, NULL, GS_BILL_CARDS_MAX, 1000, 0, DAY};
    assert_int_equal(gs_bill_add_use(b, &u, &d), -ERANGE);
    assert_has(d.msg, "T4 exclusive on day 0 passes $1,000,000,000,000.00"); /* as amounts print */
    assert_int_equal(gs_bill_count(b), 0);
    /* 500000 card-hours: 5e17 each; two fit exactly, a third passes the total */
    u.cards = 500000;
    u.end_s = HOUR;
    assert_int_equal(gs_bill_add_use(b, &u, &d), 0);
    u.start_s = DAY;
    u.end_s = DAY + HOUR;
    assert_int_equal(gs_bill_add_use(b, &u, &d), 0);
    assert_int_equal(gs_bill_total_udollars(b, NULL), GS_MONEY_MAX);
    u.start_s = 2 * DAY;
    u.end_s = 2 * DAY + 1;
    assert_int_equal(gs_bill_add_use(b, &u, &d), -ERANGE);
    assert_has(d.msg, "the bill's total passes $1,000,000,000,000.00");
    assert_int_equal(gs_bill_count(b), 2);
    assert_int_equal(gs_bill_total_udollars(b, NULL), GS_MONEY_MAX);
    assert_int_equal(sum_lines(b), GS_MONEY_MAX);
    gs_bill_free(b);
    gs_ratecard_free(rc);
}

/* The bill stops at GS_BILL_LINES_MAX lines: a century of days per tenant reaches it. */
static void test_line_limit(void **state)
{
    struct gs_ratecard *rc = default_card();
    struct gs_bill *b;
    struct gs_diag d;
    int64_t days = (GS_BILL_TIME_MAX_S + DAY - 1) / DAY;
    int fits = (int)(GS_BILL_LINES_MAX / days), rc_last = 0;
    (void)state;
    gs_diag_init(&d);
    assert_int_equal(gs_bill_new(rc, &b), 0);
    for (int t = 0; t <= fits && !rc_last; t++) {
        char tenant[16];
        snprintf(tenant, sizeof(tenant), "t%03d", t);
        struct gs_bill_use u = {tenant, GS_BILL_EXCLUSIVE, model("T4"), NULL, 1, 1000,
                                0,      GS_BILL_TIME_MAX_S};
        rc_last = gs_bill_add_use(b, &u, &d);
        assert_int_equal(rc_last, t < fits ? 0 : -E2BIG);
    }
    assert_int_equal(rc_last, -E2BIG);
    assert_has(d.msg, "lines");
    assert_int_equal(gs_bill_count(b), (size_t)(fits * days));
    assert_int_equal(sum_lines(b), gs_bill_total_udollars(b, NULL));
    gs_bill_free(b);
    gs_ratecard_free(rc);
}

/* A fixed pseudo-random run: order, totals and every line's rounding checked independently. */
static void test_many_uses_add_up(void **state)
{
    static const char *const tenants[] = {"tenant-c", "tenant-a", "tenant-b", "x"};
    static const char *const models[] = {A100_80, "T4", "H200", "A30", "L40S"};
    static const char *const a100_profiles[] = {"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb"};
    struct gs_ratecard *rc = default_card();
    struct gs_bill *b;
    uint64_t x = 42;
    (void)state;
    assert_int_equal(gs_bill_new(rc, &b), 0);
    for (int i = 0; i < 3000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        unsigned r = (unsigned)(x >> 33);
        int mode = (int)(r % 4), mi = mode == GS_BILL_MIG ? 0 : (int)(r / 4 % 5);
        int64_t start = (int64_t)(r / 20 % (5 * DAY)), len = (int64_t)(r / 7 % (DAY + 999));
        add(b, tenants[r / 3 % 4], mode, models[mi],
            mode == GS_BILL_MIG ? a100_profiles[r / 11 % 4] : NULL, 1 + (r / 13 % 8),
            mode >= GS_BILL_SHARED ? 1 + r / 17 % 1000 : 1000, start, start + len);
    }
    assert_true(gs_bill_count(b) > 100);
    int64_t per_tenant = 0;
    for (int t = 0; t < 4; t++)
        per_tenant += gs_bill_total_udollars(b, tenants[t]);
    assert_int_equal(sum_lines(b), gs_bill_total_udollars(b, NULL));
    assert_int_equal(per_tenant, gs_bill_total_udollars(b, NULL));
    size_t it = 0;
    for (const struct gs_bill_line *l; (l = gs_bill_next(b, &it)) != NULL;)
        assert_int_equal(l->cost_udollars,
                         (2 * l->rate_udollars_per_hour * l->quantity + HOUR) / (2 * HOUR));
    gs_bill_free(b);
    gs_ratecard_free(rc);
}

/* ---- RateCard loader ---- */

static const char *write_tmp(const char *name, const char *text)
{
    static char path[128];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
    return path;
}

#define CARD_HEAD "apiVersion: gpusched.io/v1alpha1\nkind: RateCard\n"

static void test_card_loads_variants(void **state)
{
    const char *path = write_tmp("ok.yaml", CARD_HEAD "metadata:\n"
                                                      "  name: eu\n"
                                                      "  labels: {a: [1, {b: c}]}\n"
                                                      "spec:\n"
                                                      "  currency: EUR\n"
                                                      "  models:\n"
                                                      "    A100-80GB:\n"       /* an alias */
                                                      "      exclusive: 7.5\n" /* plain */
                                                      "      timeslicePer10Percent: '0.4'\n"
                                                      "      mig: {}\n"
                                                      "    H200-141GB: {exclusive: \"12\"}\n");
    struct gs_ratecard *rc = NULL;
    struct gs_diag d;
    (void)state;
    gs_diag_init(&d);
    if (gs_ratecard_load(path, &rc, &d) != 0)
        fail_msg("%s", d.msg);
    assert_string_equal(gs_ratecard_currency(rc), "EUR");
    assert_int_equal(rate(rc, A100_80, GS_BILL_EXCLUSIVE, NULL, 0), 7500000);
    assert_int_equal(rate(rc, A100_80, GS_BILL_TIMESLICE, NULL, 0), 400000);
    assert_int_equal(rate(rc, A100_80, GS_BILL_SHARED, NULL, 1), 468750);
    assert_int_equal(rate(rc, "H200", GS_BILL_EXCLUSIVE, NULL, 0), 12000000);
    int64_t r;
    assert_int_equal(gs_ratecard_rate(rc, model("T4"), GS_BILL_EXCLUSIVE, NULL, &r, NULL), -ENOENT);
    gs_ratecard_free(rc);
}

static void expect_card_error(const char *text, const char *where, const char *needle)
{
    const char *path = write_tmp("bad.yaml", text);
    struct gs_ratecard *rc = (struct gs_ratecard *)&rc; /* must stay untouched */
    struct gs_diag d;
    char at[160];
    gs_diag_init(&d);
    int err = gs_ratecard_load(path, &rc, &d);
    if (err != -EINVAL)
        fail_msg("rc %d for:\n%s\n%s", err, text, d.msg);
    assert_ptr_equal(rc, (struct gs_ratecard *)&rc);
    snprintf(at, sizeof(at), "%s:%s", path, where);
    assert_has(d.msg, at);
    assert_has(d.msg, needle);
}

static void test_card_errors(void **state)
{
    static const struct {
        const char *text, *where, *needle;
    } cases[] = {
        {CARD_HEAD "spec:\n  models:\n    B200: {exclusive: \"1\"}\n",
         "5:5:", "unknown GPU model \"B200\""},
        {CARD_HEAD "spec:\n  models:\n    T4: {exclusive: \"1\"}\n    Tesla-T4: {exclusive: 2}\n",
         "6:5:", "priced twice; first at line 5"},
        {CARD_HEAD "spec:\n  models:\n    T4: {exclusive: \"1.1234567\"}\n",
         "5:21:", "spec.models.T4.exclusive: \"1.1234567\" has more than 6 decimals"},
        {CARD_HEAD "spec:\n  models:\n    T4: {exclusive: \"-1\"}\n", "5:21:", "is negative"},
        {CARD_HEAD "spec:\n  models:\n    T4: {exclusive: 1e3}\n", "5:21:", "not an amount"},
        /* one cap for a rate, in one wording, however far past it the rate is */
        {CARD_HEAD "spec:\n  models:\n    T4: {exclusive: \"1000001\"}\n",
         "5:21:", "\"1000001\" is above the largest rate, $1,000,000.00 per hour"},
        {CARD_HEAD "spec:\n  models:\n    T4: {exclusive: \"99999999999999999999\"}\n",
         "5:21:", "\"99999999999999999999\" is above the largest rate, $1,000,000.00 per hour"},
        /* in the card's currency where it is given first, as a bill's amounts are */
        {CARD_HEAD "spec:\n  currency: EUR\n  models:\n    T4: {exclusive: \"1000001\"}\n",
         "6:21:", "\"1000001\" is above the largest rate, EUR 1,000,000.00 per hour"},
        {CARD_HEAD "spec:\n  models:\n    T4: {exclusive: \"1\", shard: \"1\"}\n",
         "5:26:", "unknown field \"shard\" (known: exclusive, mig, sharedPer10Percent"},
        {CARD_HEAD "spec:\n  models:\n    T4: {exclusive: \"1\", exclusive: \"2\"}\n",
         "5:26:", "\"exclusive\" is given twice"},
        {CARD_HEAD "spec:\n  models:\n    T4: {sharedPer10Percent: \"1\"}\n",
         "5:5:", "spec.models.T4: no exclusive rate"},
        {CARD_HEAD "spec:\n  models:\n    T4: {exclusive: \"1\", mig: {1g.5gb: \"1\"}}\n",
         "5:32:", "T4 has no MIG profiles"},
        {CARD_HEAD "spec:\n  models:\n    A100-SXM4-80GB:\n      exclusive: \"8\"\n"
                   "      mig: {4g.40gb: \"4\", 4g.40gb: \"4\"}\n",
         "7:27:", "A100-SXM4-80GB mig 4g.40gb is priced twice"},
        {CARD_HEAD "spec:\n  models:\n    A100-SXM4-80GB: {exclusive: \"8\", mig: {5g: \"1\"}}\n",
         "5:44:", "\"5g\" is not a MIG profile of A100-SXM4-80GB (its profiles: 1g.10gb"},
        {CARD_HEAD "spec:\n  models:\n    T4: {exclusive: \"1\", mig: \"1\"}\n",
         "5:31:", "spec.models.T4.mig must be a mapping, not \"1\""},
        {CARD_HEAD "spec:\n  models: [T4]\n", "4:11:", "spec.models must be a mapping"},
        {CARD_HEAD "spec:\n  currency: usd\n  models: {T4: {exclusive: \"1\"}}\n",
         "4:13:", "not an ISO 4217 code"},
        {CARD_HEAD "spec:\n  currency: USD\n", "3:1:", "spec: missing field \"models\""},
        {CARD_HEAD "spec:\n  modles: {}\n", "4:3:", "unknown field \"modles\""},
        {CARD_HEAD "metadata: {name: x}\n", "1:1:", "missing field \"spec\""},
        {"apiVersion: gpusched.io/v1alpha1\nspec: {models: {T4: {exclusive: \"1\"}}}\n",
         "1:1:", "missing field \"kind\" (want \"RateCard\")"},
        {"kind: RateCard\nspec: {models: {T4: {exclusive: \"1\"}}}\n",
         "1:1:", "missing field \"apiVersion\""},
        {"apiVersion: gpusched.io/v1\nkind: RateCard\n",
         "1:13:", "apiVersion must be \"gpusched.io/v1alpha1\""},
        {"apiVersion: gpusched.io/v1alpha1\nkind: Pod\n",
         "2:7:", "kind must be \"RateCard\", not \"Pod\""},
        {"- 1\n", "1:1:", "top level must be a mapping, not a sequence"},
        {CARD_HEAD "spec: {models: {T4: {exclusive: \"1\"}}}\n---\nkind: RateCard\n",
         "4:1:", "a second YAML document"},
        {CARD_HEAD "spec: {models: {T4: {exclusive: &r \"1\"}, T4-x: *r}}\n",
         "3:42:", "unknown GPU model \"T4-x\""},
        {CARD_HEAD "spec: {models: {T4: {exclusive: &r \"1\"}, P100: {exclusive: *r}}}\n",
         "3:60:", "spec.models.P100.exclusive must be an amount such as \"8.00\", not an alias"},
        {CARD_HEAD
         "metadata: {labels: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
         "[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}\n",
         "3:52:", "metadata is nested deeper than 32 levels"},
        /* metadata holds what Kubernetes' ObjectMeta does, nothing else */
        {CARD_HEAD "metadata: {name: x, bogus: 1}\n",
         "3:21:", "metadata: unknown field \"bogus\" (known: name, namespace,"},
        {CARD_HEAD "metadata: 5\n", "3:11:", "metadata must be a mapping"},
        {CARD_HEAD "spec: {models: {T4: {exclusive: \"1\"}}\n", "4:1:", "YAML error"},
        {CARD_HEAD "spec:\n  models:\n    T4: {exclusive: \"\xff\"}\n",
         "5:22:", "YAML error: invalid leading UTF-8 octet"},
        {"", "", "the file is empty"},
        {CARD_HEAD "spec:\n  models:\n    \"T4\\0x\": {exclusive: \"1\"}\n",
         "5:5:", "a key must be a string"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_card_error(cases[i].text, cases[i].where, cases[i].needle);
}

static void test_card_file_errors(void **state)
{
    struct gs_ratecard *rc = NULL;
    struct gs_diag d;
    char path[128];
    (void)state;
    gs_diag_init(&d);
    snprintf(path, sizeof(path), "%s/none.yaml", tmpdir);
    assert_int_equal(gs_ratecard_load(path, &rc, &d), -ENOENT);
    assert_has(d.msg, path);
    assert_int_equal(gs_ratecard_load(tmpdir, &rc, &d), -EIO); /* a directory */
    /* larger than the limit: refused before parsing */
    size_t n = GS_RATECARD_MAX_BYTES + 2;
    char *big = malloc(n);
    assert_non_null(big);
    memset(big, '#', n - 1);
    big[n - 1] = '\0';
    assert_int_equal(gs_ratecard_load(write_tmp("big.yaml", big), &rc, &d), -EINVAL);
    assert_has(d.msg, "larger than");
    free(big);
    assert_null(rc);
    assert_int_equal(gs_ratecard_load(NULL, &rc, &d), -EINVAL);
}

/* Mutated rate cards load or fail with a message naming the file; never a crash or a leak. */
static void test_card_mutations(void **state)
{
    FILE *f = fopen(RATES, "rb");
    char text[8192], copy[8192 + 16], path[128];
    uint64_t x = 7;
    (void)state;
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    assert_true(n > 100 && n < sizeof(text) - 1);
    snprintf(path, sizeof(path), "%s/mutant.yaml", tmpdir);
    for (int i = 0; i < 1500; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t at = (size_t)(x >> 33) % n, len = n;
        static const char bytes[] = "\0\n\t :-{}[]\"'&*!|>#.,%@`0123456789aZ\xc3\xff";
        memcpy(copy, text, n);
        if (i % 4 == 3)
            len = at; /* cut short */
        else
            copy[at] = bytes[(x >> 20) % (sizeof(bytes) - 1)];
        f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(copy, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
        struct gs_ratecard *rc = NULL;
        struct gs_diag d;
        gs_diag_init(&d);
        int err = gs_ratecard_load(path, &rc, &d);
        if (err)
            assert_int_equal(strncmp(d.msg, path, strlen(path)), 0);
        assert_true(err == 0 || err == -EINVAL);
        gs_ratecard_free(rc);
    }
}

/* ---- gpusched bill ---- */

/* bill() - run `gpusched bill ARGS` (words without quotes or spaces) from the source root. */
static struct t_run bill(const char *args)
{
    const char *bin = getenv("GPUSCHED_BIN");
    char words[1024];
    const char *argv[32] = {bin, "bill"};
    size_t n = 2;
    if (!bin || !*bin)
        fail_msg("GPUSCHED_BIN must name the gpusched executable");
    snprintf(words, sizeof(words), "%s", args);
    for (char *save, *w = strtok_r(words, " ", &save); w && n < 31; w = strtok_r(NULL, " ", &save))
        argv[n++] = w;
    argv[n] = NULL;
    struct t_run r;
    t_run(argv, &r);
    return r;
}

/* The seed's rate card example, billed: one line per resource, $8.00, $4.00, $2.00, $1.50. */
static void expect_seed_lines(const char *out)
{
    /* headed as `gpusched bills` heads the daemon's lines */
    assert_has(out, "TENANT    RESOURCE                    DAY  QUANTITY  UNIT        RATE/HOUR    "
                    "COST\n");
    assert_has(out, "A100-SXM4-80GB exclusive      0      3600  card-s          $8.00   $8.00\n");
    assert_has(out, "A100-SXM4-80GB mig 4g.40gb    0      3600  instance-s      $4.00   $4.00\n");
    assert_has(out, "A100-SXM4-80GB mig 2g.20gb    0      3600  instance-s      $2.00   $2.00\n");
    assert_has(out, "A100-SXM4-80GB shared         0     10800  step-s          $0.50   $1.50\n");
}

static void test_cli_seed_example_table(void **state)
{
    (void)state;
    struct t_run r = bill(FIXTURES "seed-example.json");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    expect_seed_lines(r.out);
    assert_has(r.out, "tenant-a  total                                                             "
                      "$15.50\n");
    assert_has(r.out, "TOTAL                                                                       "
                      "$15.50\n");
    t_run_free(&r);
}

/* The same example as a simulation: the scenario's four pods run for an hour, then are billed. */
static void test_cli_seed_example_simulated(void **state)
{
    (void)state;
    char cmd[1024], json[160];
    snprintf(json, sizeof(json), "%s/seed-rates.json", tmpdir);
    snprintf(cmd, sizeof(cmd),
             "'%s' simulate --scenario tests/data/scenario/seed-rates.yaml --way full --json '%s' "
             ">'%s.txt'",
             getenv("GPUSCHED_BIN"), json, json);
    assert_int_equal(system(cmd), 0);
    /* The simulator's own report prices the run the same way. */
    char txt[200];
    snprintf(txt, sizeof(txt), "%s.txt", json);
    char *report = t_slurp(txt, NULL);
    assert_non_null(report);
    assert_has(report, "tenant-a                             $15.50\n");
    assert_has(report, "all tenants                          $15.50\n");
    free(report);
    struct t_run r = bill(json);
    assert_int_equal(r.status, 0);
    expect_seed_lines(r.out);
    assert_has(r.out, "TOTAL                                                                       "
                      "$15.50\n");
    t_run_free(&r);
}

/* The JSON report: every way's lines sum to its tenants' totals and to its total. */
static json_t *bill_json(const char *args, struct t_run *r)
{
    json_error_t je;
    *r = bill(args);
    assert_int_equal(r->status, 0);
    json_t *doc = json_loads(r->out, 0, &je);
    if (!doc)
        fail_msg("not JSON (%s): %s", je.text, r->out);
    return doc;
}

static int64_t check_way_sums(const json_t *way)
{
    int64_t lines = 0, tenants = 0;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(way, "lines"), i, v)
    {
        int64_t c = json_integer_value(json_object_get(v, "cost_udollars"));
        char buf[GS_MONEY_STR_MAX];
        assert_string_equal(json_string_value(json_object_get(v, "cost")), gs_money_format(c, buf));
        lines += c;
    }
    json_array_foreach(json_object_get(way, "tenants"), i, v) tenants +=
        json_integer_value(json_object_get(v, "total_udollars"));
    int64_t total = json_integer_value(json_object_get(way, "total_udollars"));
    assert_int_equal(lines, total);
    assert_int_equal(tenants, total);
    return total;
}

static void test_cli_json(void **state)
{
    static const int64_t want[] = {96764394, 73305268, 265818590}; /* worked out by hand */
    struct t_run r;
    (void)state;
    json_t *doc = bill_json("--format json " FIXTURES "seed-example.json", &r);
    json_t *way = json_array_get(json_object_get(doc, "ways"), 0);
    assert_int_equal(check_way_sums(way), 15500000);
    assert_string_equal(json_string_value(json_object_get(way, "total")), "15.50");
    assert_string_equal(json_string_value(json_object_get(doc, "currency")), "USD");
    json_decref(doc);
    t_run_free(&r);
    doc = bill_json("--format json " FIXTURES "comparison.json", &r);
    assert_int_equal(json_array_size(json_object_get(doc, "ways")), 3);
    for (size_t k = 0; k < 3; k++)
        assert_int_equal(check_way_sums(json_array_get(json_object_get(doc, "ways"), k)), want[k]);
    json_decref(doc);
    t_run_free(&r);
}

/* CSV: one row per line, micro-dollars and decimal side by side; rows sum to the JSON totals. */
static void test_cli_csv(void **state)
{
    static const int64_t want[] = {96764394, 73305268, 265818590};
    static const char *const ways[] = {"exclusive", "sharing", "full"};
    int64_t sum[3] = {0};
    (void)state;
    struct t_run r = bill("--format csv " FIXTURES "comparison.json");
    assert_int_equal(r.status, 0);
    assert_has(r.out, "way,tenant,resource,model,mode,profile,day,quantity,unit,"
                      "rate_per_hour_udollars,rate_per_hour,cost_udollars,cost\n");
    assert_has(r.out, "full,tenant-a,A100-SXM4-80GB mig 3g.40gb,A100-SXM4-80GB,mig,3g.40gb,2,60,"
                      "instance-s,4000000,4.00,66667,0.066667\n");
    for (const char *line = strchr(r.out, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        char row[512], way[32];
        assert_int_equal(sscanf(line, "%511[^\n]", row), 1);
        *strrchr(row, ',') = '\0'; /* cost_udollars is the last but one column */
        int64_t c = strtoll(strrchr(row, ',') + 1, NULL, 10);
        assert_int_equal(sscanf(row, "%31[^,]", way), 1);
        for (int k = 0; k < 3; k++)
            sum[k] += strcmp(way, ways[k]) == 0 ? c : 0;
    }
    for (int k = 0; k < 3; k++)
        assert_int_equal(sum[k], want[k]);
    t_run_free(&r);
}

static void test_cli_way_and_tenant(void **state)
{
    (void)state;
    struct t_run r = bill("--way sharing " FIXTURES "comparison.json");
    assert_int_equal(r.status, 0);
    assert_has(r.out, "way sharing (");
    assert_null(strstr(r.out, "way full"));
    /* Amounts to the cent as people read them (the exact ones are in CSV and JSON, below); a
     * rate exact, so that quantity x rate gives the cost: 3702 s x $0.139375/h = $0.1433. */
    assert_has(r.out, "tenant-b  T4 timeslice                0      3702  step-s  $0.139375   "
                      "$0.14\n");
    assert_has(r.out, "$73.31\n");
    t_run_free(&r);
    r = bill("--way full --tenant tenant-b " FIXTURES "comparison.json");
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.out, "tenant-a"));
    assert_has(r.out, "tenant-b  total");
    assert_has(r.out, "  $4.17\nTOTAL    "); /* the tenant's total, then the way's */
    assert_string_equal(r.out + strlen(r.out) - 6, "$4.17\n");
    t_run_free(&r);
    r = bill("--tenant nobody " FIXTURES "comparison.json"); /* misspelt: no empty bill */
    assert_int_equal(r.status, 2);
    assert_has(r.err, "belongs to tenant \"nobody\" (its tenants: tenant-");
    assert_string_equal(r.out, "");
    t_run_free(&r);
    r = bill("--way nope " FIXTURES "comparison.json");
    assert_int_equal(r.status, 2);
    assert_has(r.err, "has no way \"nope\" (it has: exclusive, sharing, full)");
    assert_string_equal(r.out, "");
    t_run_free(&r);
}

/* Bad input: exit 2, one line on stderr naming the place, nothing on stdout. */
static void test_cli_bad_input(void **state)
{
    static const struct {
        const char *args, *needle;
    } cases[] = {
        {FIXTURES "bad-cards.json", "bad-cards.json: pods[3].usage[0].cards: expected integer"},
        {FIXTURES "missing-tenant.json", "missing-tenant.json: pods[1].tenant: expected string"},
        {FIXTURES "bad-syntax.json", "bad-syntax.json:24:3: JSON error"}, /* its last line: "  ]" */
        {FIXTURES "unknown-model.json",
         "ways[1].pods[1].usage[0].model: unknown GPU model \"Z100\""},
        {"--rates " FIXTURES "rates-unknown-model.yaml " FIXTURES "seed-example.json",
         "rates-unknown-model.yaml:8:5: spec.models: unknown GPU model \"B200\""},
        {"--rates " FIXTURES "none.yaml " FIXTURES "seed-example.json", "none.yaml: cannot open"},
        {FIXTURES "none.json", "none.json: cannot open"},
        {"--format xml " FIXTURES "seed-example.json", "--format: \"xml\" is not table"},
        {"--frobnicate " FIXTURES "seed-example.json", "unknown option \"--frobnicate\""},
        {FIXTURES "seed-example.json --rates", "missing value for option \"--rates\""},
        {"", "no FILE.json given"},
        {"a.json b.json", "give one FILE.json"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct t_run r = bill(cases[i].args);
        assert_int_equal(r.status, 2);
        assert_string_equal(r.out, "");
        assert_has(r.err, cases[i].needle);
        assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);
        t_run_free(&r);
    }
}

/* JSON shapes the contract rules out, each named by its path. */
/* A valid use: 30 % of a T4 from 1 s to 4 s. */
#define SHARE_USE                                                                                  \
    "{\"mode\": \"shared\", \"model\": \"T4\", \"cards\": 1, \"share_milli\": 300, \"start_s\": "  \
    "1, "                                                                                          \
    "\"end_s\": 4}"
/* A pod's name and tenant; then a pod submitted and started at 0, running, or one pending. */
#define POD     "{\"name\": \"a/p\", \"tenant\": \"t\", "
#define RUNNING POD "\"state\": \"running\", \"submit_s\": 0, \"start_s\": 0, \"end_s\": null, "
#define NAMELESS                                                                                   \
    "{\"tenant\": \"t\", \"state\": \"running\", \"submit_s\": 0, \"start_s\": 0, \"end_s\": "     \
    "null, "                                                                                       \
    "\"usage\": [" SHARE_USE "]}"
#define PENDING                                                                                    \
    POD "\"state\": \"pending\", \"submit_s\": 0, \"start_s\": null, \"end_s\": null, \"usage\": " \
        "[]}"

static void test_cli_bad_shapes(void **state)
{
    static const struct {
        const char *json, *needle;
    } cases[] = {
        {"[]", "the document: expected object, got array"},
        {"{}", "pods: expected array, missing"},
        {"{\"ways\": {}}", "ways: expected array, got object"},
        {"{\"ways\": []}", "ways: empty; a simulation writes at least one way"},
        {"{\"ways\": [{\"pods\": []}]}", "ways[0].way: expected string, missing"},
        {"{\"ways\": [{\"way\": \"full\", \"pods\": [], \"summary\": {}}, {\"way\": \"full\", "
         "\"pods\": []}]}",
         "ways[1].way: \"full\" is also ways[0]"},
        {"{\"ways\": [{\"way\": \"a\", \"pods\": [], \"summary\": {}}]}",
         "ways[0].way: \"a\" is not a way the simulator runs (exclusive, sharing, full)"},
        {"{\"ways\": [{\"way\": \"full\", \"pods\": []}]}",
         "ways[0].summary: expected object, missing"},
        {"{\"pods\": [], \"summary\": []}", "summary: expected object, got array"},
        {"{\"runs\": []}",
         "a trace replay (simulate --nodes/--sequence): its pods have no tenants"},
        {"{\"pods\": [], \"summary\": {\"gpu_allocation_at_arrived_pct\": 1}}", "a trace replay"},
        {"{\"pods\": [" PENDING "], \"summary\": {\"pods\": 2}}",
         "summary.pods: 2, but pods lists 1 pods"},
        {"{\"ways\": [{\"way\": \"full\", \"pods\": [" PENDING "], \"summary\": {\"pods\": 1, "
         "\"pending\": 0}}]}",
         "ways[0].summary.pending: 0, but ways[0].pods lists 1 pending"},
        {"{\"pods\": [], \"summary\": {\"rejected\": \"0\"}}",
         "summary.rejected: expected integer, got string"},
        {"{\"ways\": [{\"way\": \"a\\tb\", \"pods\": []}]}",
         "ways[0].way: expected 1..64 printable characters"},
        {"{\"ways\": [{\"way\": \"a\", \"pods\": []}], \"way\": \"b\"}",
         "way: not ways[0].way: a comparison's top level repeats its last way"},
        {"{\"ways\": [{\"way\": \"a\", \"pods\": []}], \"pods\": [7]}", "pods: not ways[0].pods"},
        {"{\"ways\": [{\"way\": \"full\", \"pods\": [], \"timeline\": {}}], \"timeline\": "
         "{\"steps\": 1}}",
         "timeline: not ways[0].timeline"},
        {"{\"pods\": [7]}", "pods[0]: expected object, got integer"},
        {"{\"pods\": [" POD "\"state\": \"exploded\", \"usage\": []}]}",
         "pods[0].state: \"exploded\" is not pending, running, completed, preempted or rejected"},
        {"{\"pods\": [" POD "\"state\": 3, \"usage\": []}]}",
         "pods[0].state: expected string, got integer"},
        {"{\"pods\": [" POD "\"usage\": []}]}", "pods[0].state: expected string, missing"},
        {"{\"pods\": [" RUNNING "\"queue\": \"q\"}]}", "pods[0].usage: expected array, missing"},
        {"{\"pods\": [" RUNNING "\"usage\": [{\"mode\": \"whole\"}]}]}",
         "pods[0].usage[0].mode: \"whole\" is not exclusive, mig, shared or timeslice"},
        {"{\"pods\": [" RUNNING "\"usage\": [{\"mode\": \"mig\", \"model\": \"A30\", "
         "\"profile\": null}]}]}",
         "pods[0].usage[0].profile: expected string, got null"},
        {"{\"pods\": [" RUNNING "\"usage\": [{\"mode\": \"shared\", \"model\": \"T4\", "
         "\"cards\": 1, \"share_milli\": 30.5}]}]}",
         "pods[0].usage[0].share_milli: expected integer, got real"},
        {"{\"pods\": [" RUNNING "\"usage\": [{\"mode\": \"shared\", \"model\": \"T4\", "
         "\"cards\": 1, \"share_milli\": 300, \"start_s\": 5, \"end_s\": 4}]}]}",
         "pods[0].usage[0]: end_s 4 is not in start_s"},
        {"{\"pods\": [{\"tenant\": \"t\", \"state\": \"running\", \"tenant\": \"u\", \"usage\": "
         "[]}]}",
         "duplicate"},
        {"{\"pods\": [{\"tenant\": \"t\\u0000u\", \"usage\": []}]}", "NUL"},
        {"{\"pods\": [" RUNNING "\"usage\": [{\"mode\": \"shared\", \"gpus\": 2}]}]}",
         "pods[0].usage[0].gpus: unknown key (a use has mode, model"},
        {"{\"pods\": [" RUNNING "\"usage\": [{\"mode\": null}]}]}",
         "pods[0].usage[0].mode: expected string, got null"},
        {"{\"pods\": [" RUNNING "\"usage\": []}, " RUNNING "\"usage\": []}]}",
         "pods: pod \"a/p\" is listed twice"},
        /* a pod without a name, or with one the simulator does not write, escaped that check:
         * this one was billed three times */
        {"{\"pods\": [" NAMELESS ", " NAMELESS ", " NAMELESS "], \"summary\": {}}",
         "pods[0].name: expected string, missing"},
        {"{\"pods\": [{\"name\": null, \"tenant\": \"t\", \"usage\": []}]}",
         "pods[0].name: expected string, got null"},
        {"{\"pods\": [" RUNNING
         "\"usage\": []}, {\"name\": \"a/p \", \"tenant\": \"t\", \"usage\": "
         "[]}]}",
         "pods[1].name: \"a/p \" is not NAMESPACE/NAME as the simulator writes it"},
        {"{\"pods\": [{\"name\": \"p\", \"tenant\": \"t\", \"usage\": []}]}",
         "pods[0].name: \"p\" is not NAMESPACE/NAME"},
        {"{\"pods\": [" POD "\"namespace\": \"b\", \"usage\": []}]}",
         "pods[0].namespace: \"b\" contradicts pods[0].name \"a/p\""},
        {"{\"pods\": [" POD "\"namespace\": 1, \"usage\": []}]}",
         "pods[0].namespace: expected string, got integer"},
        /* a time missing skipped its check: these were billed (a use at 1 s) */
        {"{\"pods\": [" POD "\"state\": \"running\", \"start_s\": 0, \"end_s\": null, \"usage\": "
         "[" SHARE_USE "]}], \"summary\": {}}",
         "pods[0].submit_s: expected integer, missing"},
        {"{\"pods\": [" POD "\"state\": \"running\", \"submit_s\": 0, \"end_s\": null, \"usage\": "
         "[" SHARE_USE "]}], \"summary\": {}}",
         "pods[0].start_s: expected integer or null, missing"},
        {"{\"pods\": [" POD "\"state\": \"running\", \"submit_s\": 0, \"start_s\": 0, \"usage\": "
         "[" SHARE_USE "]}], \"summary\": {}}",
         "pods[0].end_s: expected integer or null, missing"},
        /* a key the simulator does not write, named with the one meant when one is near */
        {"{\"pods\": [" RUNNING "\"usage\": [], \"bogus\": 1}]}",
         "pods[0].bogus: unknown key (a pod has name, tenant, namespace, queue"},
        {"{\"pods\": [{\"name\": \"a/p\", \"tenat\": \"t\", \"usage\": []}]}",
         "pods[0].tenat: unknown key (did you mean \"tenant\"?)"},
        {"{\"pods\": [], \"sumary\": {}}",
         "shape.json: sumary: unknown key (did you mean \"summary\"?)"},
        {"{\"pods\": [], \"summary\": {}, \"bogus\": 1}",
         "shape.json: bogus: unknown key (the document has way, pods, summary, timeline, cluster "
         "and "
         "ways)"},
        {"{\"ways\": [{\"way\": \"full\", \"pods\": [], \"summary\": {}, \"cluster\": {}}]}",
         "ways[0].cluster: unknown key (a way has way, pods, summary and timeline)"},
        {"{\"pods\": [{\"name\": \"a/p\", \"tenant\": \"t\", \"state\": \"rejected\", "
         "\"submit_s\": "
         "0, \"start_s\": null, \"end_s\": null, \"usage\": [" SHARE_USE "]}]}",
         "pods[0].usage[0]: a rejected pod never ran"},
        /* printed as it is in the table: a right-to-left override or a C1 control reorders it */
        {"{\"pods\": [{\"name\": \"a/p\", \"tenant\": \"t\\u202ex\", \"state\": \"running\", "
         "\"submit_s\": 0, \"start_s\": 0, \"end_s\": null, \"usage\": [" SHARE_USE "]}]}",
         "pods[0].tenant: \"t\\u202ex\" is not a tenant's name"},
        {"{\"pods\": [{\"name\": \"a/p\", \"tenant\": \"t\\u0085x\", \"state\": \"running\", "
         "\"submit_s\": 0, \"start_s\": 0, \"end_s\": null, \"usage\": [" SHARE_USE "]}]}",
         "pods[0].tenant: \"t\\u0085x\" is not a tenant's name"},
        {"{\"pods\": [" POD
         "\"state\": \"completed\", \"submit_s\": 0, \"start_s\": 0, \"end_s\": 3, "
         "\"usage\": [" SHARE_USE "]}]}",
         "pods[0].usage[0].end_s: 4 is after the pod's end_s 3"},
        /* a state the times contradict was billed as the times said */
        {"{\"pods\": [" POD
         "\"state\": \"running\", \"submit_s\": 0, \"start_s\": 0, \"end_s\": 9, "
         "\"usage\": [" SHARE_USE "]}]}",
         "pods[0].end_s: expected null: a running pod has not ended"},
        {"{\"pods\": [" POD
         "\"state\": \"pending\", \"submit_s\": 0, \"start_s\": null, \"end_s\": 9, "
         "\"usage\": []}]}",
         "pods[0].end_s: expected null: a pending pod has not ended"},
        {"{\"pods\": [" RUNNING "\"usage\": [" SHARE_USE ", " SHARE_USE "]}]}",
         "pods[0].usage[1].start_s: 1 is before the previous use ended (4)"},
        /* a time of another type, or none where the state says there is one, let every use
         * through; so did a start after the use and a run's end before it */
        {"{\"pods\": [" POD "\"state\": \"running\", \"submit_s\": 0, \"start_s\": 0, \"end_s\": "
         "\"3\", \"usage\": [" SHARE_USE "]}]}",
         "pods[0].end_s: expected integer or null, got string"},
        {"{\"pods\": [" POD "\"state\": \"completed\", \"submit_s\": 0, \"start_s\": 0, \"end_s\": "
         "null, \"usage\": []}]}",
         "pods[0].end_s: expected integer: a completed pod has ended"},
        {"{\"pods\": [" POD
         "\"state\": \"pending\", \"submit_s\": 0, \"start_s\": null, \"end_s\": "
         "null, \"usage\": [" SHARE_USE "]}]}",
         "pods[0].usage[0]: the pod's start_s is null: a pod that never started has no usage"},
        {"{\"pods\": [" POD
         "\"state\": \"running\", \"submit_s\": 0, \"start_s\": null, \"end_s\": "
         "null, \"usage\": []}]}",
         "pods[0].start_s: expected integer: a running pod has started"},
        {"{\"pods\": [" POD "\"state\": \"running\", \"submit_s\": 0, \"start_s\": 2, \"end_s\": "
         "null, \"usage\": [" SHARE_USE "]}]}",
         "pods[0].usage[0].start_s: 1 is before the pod's start_s 2"},
        {"{\"pods\": [" POD "\"state\": \"running\", \"submit_s\": 5, \"start_s\": 2, \"end_s\": "
         "null, \"usage\": []}]}",
         "pods[0].start_s: 2 is before the pod's submit_s 5"},
        {"{\"pods\": [" POD
         "\"state\": \"completed\", \"submit_s\": 0, \"start_s\": 5, \"end_s\": 2, "
         "\"usage\": []}]}",
         "pods[0].end_s: 2 is before the pod's start_s 5"},
        /* a tenant no scenario or config could name: "=..." would be a spreadsheet formula in
         * the CSV; the figures a bill does not price are still the simulator's */
        {"{\"pods\": [{\"name\": \"a/p\", \"tenant\": \"=HYPERLINK(1)\", \"state\": \"pending\", "
         "\"submit_s\": 0, \"start_s\": null, \"end_s\": null, \"usage\": []}]}",
         "pods[0].tenant: \"=HYPERLINK(1)\" is not a tenant's name"},
        {"{\"pods\": [" RUNNING "\"wait_s\": -1, \"usage\": []}]}",
         "pods[0].wait_s: -1 is below 0"},
        /* where the pod says it ran agrees with what its usage bills */
        {"{\"pods\": [" RUNNING "\"gpu_model\": \"A100-SXM4-80GB\", \"usage\": [" SHARE_USE "]}]}",
         "pods[0].gpu_model: A100-SXM4-80GB, but its last use (usage[0]) is on T4"},
        {"{\"pods\": [" RUNNING "\"placements\": [], \"usage\": [" SHARE_USE "]}]}",
         "pods[0].placements: 0, but 1 uses: a placement per run"},
        {"{\"pods\": [" RUNNING "\"node\": \"n1\", \"placements\": [{\"node\": \"n2\", \"gpus\": "
         "[0], \"mig\": null}], \"usage\": [" SHARE_USE "]}]}",
         "pods[0].node: not what its last placement (placements[0]) says"},
        {"{\"pods\": [" RUNNING "\"placements\": [{\"node\": \"n2\", \"gpus\": [0], \"mig\": "
         "null}], \"usage\": [{\"mode\": \"exclusive\", \"model\": \"T4\", \"cards\": 1000000, "
         "\"share_milli\": 1000, \"start_s\": 1, \"end_s\": 4}]}]}",
         "pods[0].placements[0].gpus: 1 card indexes where usage[0] says 1000000 cards"},
        {"{\"summary\": {\"horizon_s\": 3}, \"pods\": [" RUNNING "\"usage\": [" SHARE_USE "]}]}",
         "pods[0].usage[0]: ends at 4 s, after the run's summary.horizon_s 3"},
        {"{\"summary\": {\"horizon_s\": -1}, \"pods\": []}",
         "summary.horizon_s: -1 is not in 0..3155760000"},
        /* A JSON error at the end of the file is placed at the last character of its last line,
         * whether a line break ends the file or not (columns count characters, as jansson's do),
         * never at column 0 of a line after the last. */
        {"", "shape.json:1:1: JSON error"},
        {"\n", "shape.json:1:1: JSON error"},
        {"{\"pods\": [\n", "shape.json:1:10: JSON error"},
        {"{\"pods\": [", "shape.json:1:10: JSON error"},
        {"{\"pods\": [\n  {\"tenant\": \"\xc3\xa9\",\n", "shape.json:2:17: JSON error"},
        {"{\"pods\": [\n  {\"tenant\": \"\xc3\xa9\",", "shape.json:2:17: JSON error"},
        {"{\"pods\": [\n  {\"tenant\": \"\xc3\xa9\",\n\n", "shape.json:3:1: JSON error"},
        {"{\"pods\": [1,]}\n", "shape.json:1:13: JSON error"}, /* not at the end: as jansson says */
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char args[160];
        snprintf(args, sizeof(args), "%s", write_tmp("shape.json", cases[i].json));
        struct t_run r = bill(args);
        if (r.status != 2 || !strstr(r.err, cases[i].needle))
            fail_msg("%s: status %d, stderr: %s", cases[i].json, r.status, r.err);
        t_run_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_money_parse),
        cmocka_unit_test(test_money_format),
        cmocka_unit_test(test_money_format_human),
        cmocka_unit_test(test_seed_example),
        cmocka_unit_test(test_share_steps),
        cmocka_unit_test(test_rounding_once_per_line),
        cmocka_unit_test(test_day_split),
        cmocka_unit_test(test_default_rules),
        cmocka_unit_test(test_rates_follow_documented_rule),
        cmocka_unit_test(test_explicit_rates),
        cmocka_unit_test(test_bad_uses_change_nothing),
        cmocka_unit_test(test_unpriced_model),
        cmocka_unit_test(test_money_overflow),
        cmocka_unit_test(test_line_limit),
        cmocka_unit_test(test_many_uses_add_up),
        cmocka_unit_test(test_card_loads_variants),
        cmocka_unit_test(test_card_errors),
        cmocka_unit_test(test_card_file_errors),
        cmocka_unit_test(test_card_mutations),
        cmocka_unit_test(test_cli_seed_example_table),
        cmocka_unit_test(test_cli_seed_example_simulated),
        cmocka_unit_test(test_cli_json),
        cmocka_unit_test(test_cli_csv),
        cmocka_unit_test(test_cli_way_and_tenant),
        cmocka_unit_test(test_cli_bad_input),
        cmocka_unit_test(test_cli_bad_shapes),
    };
    char rm[128];
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/gs_test_billing.XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    snprintf(rm, sizeof(rm), "rm -rf '%s'", tmpdir);
    return system(rm) == 0 ? failed : 1;
}
