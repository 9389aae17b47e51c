/*
 * Demand series, forecasts, backtests and capacity advice (src/forecast): seasonal series the
 * models must recover, the series builders on records and on real files (CSV and a real SQLite
 * store), and every kind of bad input named with its file and line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "diag_capture.h"
#include "gpusched/catalog.h"
#include "gpusched/elastic.h"
#include "gpusched/forecast.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/gs_test_forecast.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *write_tmp(const char *name, const char *text)
{
    static char path[8][256];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    return p;
}

/* A deterministic noise in [-1, 1). */
static double noise(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / (double)(1ULL << 52) - 1.0;
}

/* 3 weeks of a daily cycle around 20 GPUs (+-6) with a weekend dip and +-0.5 GPU of noise. */
static void seasonal(int64_t *y, size_t n, int weekly)
{
    uint64_t s = 42;
    for (size_t t = 0; t < n; t++) {
        double v =
            20000 + 6000 * sin(2 * 3.14159265358979 * (double)(t % 24) / 24.0) + 500 * noise(&s);
        if (weekly && (t / 24) % 7 >= 5)
            v -= 8000;
        y[t] = llround(v);
    }
}

static double mae(const int64_t *a, const int64_t *b, size_t n)
{
    double acc = 0;
    for (size_t i = 0; i < n; i++)
        acc += fabs((double)(a[i] - b[i]));
    return acc / (double)n;
}

/* A daily cycle is recovered: the forecast of the next day follows the truth to within the
 * noise, the seasonal smoothing parameter is used, and auto picks a seasonal model. */
static void test_recovers_daily_season(void **state)
{
    (void)state;
    int64_t y[21 * 24 + 24];
    seasonal(y, 22 * 24, 0);
    struct gs_forecast f;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_fc_fit(y, 21 * 24, 24, GS_FC_ANA, &f, &d), 0);
    assert_int_equal(f.method, GS_FC_ANA);
    assert_true(mae(f.point, y + 21 * 24, 24) < 600); /* the noise is 250 on average */
    assert_true(f.alpha > 0 && f.alpha < 1);
    assert_true(f.sigma > 200 && f.sigma < 700);
    size_t inside = 0;
    for (size_t k = 0; k < 24; k++) {
        assert_true(f.q[0][k] <= f.q[1][k] && f.q[1][k] <= f.q[2][k]);
        assert_true(f.q[2][k] <= f.q[3][k] && f.q[3][k] <= f.q[4][k]);
        inside += f.q[1][k] <= y[21 * 24 + k] && y[21 * 24 + k] <= f.q[3][k];
    }
    assert_true(inside >= 14); /* an 80 % interval: 19 of 24 expected */
    gs_forecast_free(&f);
    /* the flat model cannot follow the cycle: much worse */
    assert_int_equal(gs_fc_fit(y, 21 * 24, 24, GS_FC_ANN, &f, &d), 0);
    assert_true(mae(f.point, y + 21 * 24, 24) > 2000);
    gs_forecast_free(&f);
    assert_int_equal(gs_fc_fit(y, 21 * 24, 24, GS_FC_AUTO, &f, &d), 0);
    assert_true(f.method == GS_FC_ANA || f.method == GS_FC_AAA || f.method == GS_FC_ANM ||
                f.method == GS_FC_AAM || f.method == GS_FC_ANW || f.method == GS_FC_AAW);
    gs_forecast_free(&f);
    assert_int_equal(gs_fc_fit(y, 21 * 24, 24, GS_FC_AUTO_AIC, &f, &d), 0);
    assert_int_not_equal(f.method, GS_FC_ANN);
    gs_forecast_free(&f);
}

/* A weekday/weekend difference needs the double seasonal model (Taylor 2003). */
static void test_recovers_weekly_season(void **state)
{
    (void)state;
    int64_t y[28 * 24];
    seasonal(y, 28 * 24, 1);
    struct gs_forecast w, a;
    struct gs_diag d0;
    gs_diag_init(&d0);
    assert_int_equal(gs_fc_fit(y, 20 * 24, 48, GS_FC_ANW, &w, &d0), -EINVAL);
    assert_has(d0.msg, "needs 504 hours");
    struct gs_diag d;
    gs_diag_init(&d);
    /* train on 3 weeks and 5 days, ending on a Friday; forecast the weekend */
    size_t n = 26 * 24;
    assert_int_equal(gs_fc_fit(y, n, 48, GS_FC_ANW, &w, &d), 0);
    assert_int_equal(gs_fc_fit(y, n, 48, GS_FC_ANA, &a, &d), 0);
    print_message("weekly: MAE %.0f (ANW) %.0f (ANA) omega %.3f\n", mae(w.point, y + n, 48),
                  mae(a.point, y + n, 48), w.omega);
    assert_true(w.omega > 0);
    assert_true(mae(w.point, y + n, 48) < 1500);
    assert_true(mae(w.point, y + n, 48) < mae(a.point, y + n, 48) / 2);
    gs_forecast_free(&w);
    gs_forecast_free(&a);
}

/* A constant series is forecast as itself, with an interval of no width. */
static void test_constant_series(void **state)
{
    (void)state;
    int64_t y[100];
    for (size_t i = 0; i < 100; i++)
        y[i] = 3000;
    struct gs_forecast f;
    struct gs_diag d;
    gs_diag_init(&d);
    for (int m = 0; m < GS_FC_METHODS; m++) {
        if (m == GS_FC_ANW || m == GS_FC_AAW || m == GS_FC_SNAIVE_WEEK)
            continue; /* need two weeks */
        assert_int_equal(gs_fc_fit(y, 100, 6, (enum gs_fc_method)m, &f, &d), 0);
        for (size_t k = 0; k < 6; k++) {
            assert_int_equal(f.point[k], 3000);
            assert_int_equal(f.q[0][k], 3000);
            assert_int_equal(f.q[4][k], 3000);
        }
        gs_forecast_free(&f);
    }
}

/* Too little history for a season is an error naming the need; auto falls back to what fits. */
static void test_too_short(void **state)
{
    (void)state;
    int64_t y[30] = {0};
    for (size_t i = 0; i < 30; i++)
        y[i] = 1000 + (int64_t)(i % 5) * 100;
    struct gs_forecast f;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_fc_fit(y, 30, 24, GS_FC_ANA, &f, &d), -EINVAL);
    assert_has(d.msg, "ETS(A,N,A) needs 48 hours of history, has 30");
    assert_int_equal(gs_fc_fit(y, 30, 24, GS_FC_SNAIVE_WEEK, &f, &d), -EINVAL);
    assert_has(d.msg, "needs 168 hours");
    assert_int_equal(gs_fc_fit(y, 30, 24, GS_FC_AUTO, &f, &d), 0);
    assert_true(f.method == GS_FC_ANN || f.method == GS_FC_AAN || f.method == GS_FC_NAIVE);
    gs_forecast_free(&f);
    assert_int_equal(gs_fc_fit(y, 3, 24, GS_FC_AUTO, &f, &d), 0);
    assert_int_equal(f.method, GS_FC_MA); /* the documented fallback under 4 points */
    assert_int_equal(f.point[0], 1100);
    gs_forecast_free(&f);
    /* two hours give one error: its deviation was NaN, and every quantile 0 below the point */
    int64_t two[2] = {100, 200};
    for (int m = 0; m < 2; m++) {
        assert_int_equal(gs_fc_fit(two, 2, 2, m ? GS_FC_NAIVE : GS_FC_AUTO, &f, &d), 0);
        for (size_t k = 0; k < 2; k++) {
            assert_true(f.q[0][k] < f.point[k] && f.point[k] < f.q[4][k]);
            assert_true(f.q[1][k] <= f.q[2][k] && f.q[2][k] <= f.q[3][k]);
        }
        gs_forecast_free(&f);
    }
    int64_t z[60] = {0};
    assert_int_equal(gs_fc_fit(z, 60, 4, GS_FC_ANM, &f, &d), -EINVAL);
    assert_has(d.msg, "needs every hour above 0");
    assert_int_equal(gs_fc_fit(z, 60, 0, GS_FC_ANN, &f, &d), -EINVAL);
    assert_int_equal(gs_fc_fit(z, 60, GS_FC_HORIZON_MAX + 1, GS_FC_ANN, &f, &d), -EINVAL);
}

/* The baselines do what their names say. */
static void test_baselines(void **state)
{
    (void)state;
    int64_t y[48];
    for (size_t i = 0; i < 48; i++)
        y[i] = (int64_t)(i % 24) * 1000 + (i >= 24 ? 500 : 0);
    struct gs_forecast f;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_fc_fit(y, 48, 30, GS_FC_SNAIVE, &f, &d), 0);
    assert_int_equal(f.point[0], 500);
    assert_int_equal(f.point[23], 23500);
    assert_int_equal(f.point[24], 500);
    gs_forecast_free(&f);
    assert_int_equal(gs_fc_fit(y, 48, 2, GS_FC_MA, &f, &d), 0);
    assert_int_equal(f.point[1], 12000);
    gs_forecast_free(&f);
    assert_int_equal(gs_fc_fit(y, 48, 2, GS_FC_NAIVE, &f, &d), 0);
    assert_int_equal(f.point[1], 23500);
    assert_true(f.alpha == 1.0 && f.beta == 0.0); /* ETS(A,N,N) at alpha = 1 */
    gs_forecast_free(&f);
    assert_int_equal(gs_fc_method_find("AAdA"), GS_FC_AAA);
    assert_int_equal(gs_fc_method_find("ETS(A,Ad,A)"), GS_FC_AAA);
    assert_int_equal(gs_fc_method_find("nope"), -ENOENT);
}

/* Backtests: a pure cycle costs snaive nothing; the seasonal model beats snaive on a noisy one;
 * scores are pooled over origins. */
static void test_backtest(void **state)
{
    (void)state;
    int64_t y[28 * 24];
    for (size_t t = 0; t < 28 * 24; t++)
        y[t] = 1000 + (int64_t)(t % 24) * 100;
    struct gs_backtest_spec sp = {21 * 24, 24, 24};
    struct gs_fc_score sc;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_fc_backtest(y, 28 * 24, &sp, GS_FC_SNAIVE, &sc, &d), 0);
    assert_int_equal(sc.hours, 7 * 24);
    assert_true(sc.smape == 0.0 && isnan(sc.mase)); /* no in-sample error to scale by */
    assert_int_equal(sc.covered, sc.hours);
    assert_int_equal(sc.exact, sc.hours);
    seasonal(y, 28 * 24, 0);
    struct gs_fc_score ets;
    assert_int_equal(gs_fc_backtest(y, 28 * 24, &sp, GS_FC_SNAIVE, &sc, &d), 0);
    assert_int_equal(gs_fc_backtest(y, 28 * 24, &sp, GS_FC_ANA, &ets, &d), 0);
    print_message("noisy cycle: sMAPE %.3f (ANA) %.3f (snaive)\n", ets.smape, sc.smape);
    assert_true(ets.smape < sc.smape * 0.9);
    assert_true(ets.coverage > 60 && ets.coverage < 97);
    assert_true(isfinite(ets.mase) && ets.mase < 1.0);
    struct gs_backtest_spec no = {27 * 24, 48, 24};
    assert_int_equal(gs_fc_backtest(y, 28 * 24, &no, GS_FC_ANA, &sc, &d), -EINVAL);
    assert_has(d.msg, "do not fit");
}

static struct gs_demand *demand(void)
{
    struct gs_demand *dm;
    assert_int_equal(gs_demand_new(&dm), 0);
    return dm;
}

/* Records become hourly means: partial hours count in proportion, open records run to the end,
 * groups come largest first, and the tail folds into "(other)". */
static void test_series_from_records(void **state)
{
    (void)state;
    struct gs_demand *dm = demand();
    struct gs_diag d;
    gs_diag_init(&d);
    /* tenant a: 2 GPUs over [1800, 9000) s = half of hour 0, hour 1, half of hour 2 */
    assert_int_equal(gs_demand_add(dm, 1800, 9000, 2000, "svc", "a", "q", "A100", &d), 0);
    /* tenant b: 500 milli from 3600 on, never ending */
    assert_int_equal(gs_demand_add(dm, 3600, INT64_MAX, 500, "svc", "b", "q", "H100", &d), 0);
    /* tenant c: a short one, inside hour 3 */
    assert_int_equal(gs_demand_add(dm, 11000, 11360, 1000, "svc2", "c", "q", "A100", &d), 0);
    assert_int_equal(gs_demand_end_s(dm), 11360);
    struct gs_series_set s;
    assert_int_equal(gs_demand_series(dm, GS_FC_TENANT, 0, 4 * 3600, 0, &s, &d), 0);
    assert_int_equal(s.start_s, 0);
    assert_int_equal(s.n, 4);
    assert_int_equal(s.count, 3);
    assert_string_equal(s.s[0].name, "a");
    int64_t a[4] = {1000, 2000, 1000, 0}, b[4] = {0, 500, 500, 500}, c[4] = {0, 0, 0, 100};
    assert_memory_equal(s.s[0].milli, a, sizeof(a));
    assert_string_equal(s.s[1].name, "b");
    assert_memory_equal(s.s[1].milli, b, sizeof(b));
    assert_memory_equal(s.s[2].milli, c, sizeof(c));
    gs_series_set_free(&s);
    /* top 1: b and c fold into (other) */
    assert_int_equal(gs_demand_series(dm, GS_FC_TENANT, 0, 4 * 3600, 1, &s, &d), 0);
    assert_int_equal(s.count, 2);
    assert_string_equal(s.s[1].name, "(other)");
    assert_int_equal(s.s[1].milli[3], 600);
    gs_series_set_free(&s);
    /* by queue and model: q/A100 and q/H100 */
    assert_int_equal(gs_demand_series(dm, GS_FC_QUEUE, 1, -1, 0, &s, &d), 0);
    assert_int_equal(s.count, 2);
    assert_string_equal(s.s[0].model, "A100");
    assert_int_equal(s.n, 4); /* to the end of the hour of the last time named */
    gs_series_set_free(&s);
    assert_int_equal(gs_demand_series(dm, GS_FC_TOTAL, 0, -1, 0, &s, &d), 0);
    assert_string_equal(s.s[0].name, "total");
    assert_int_equal(s.s[0].milli[1], 2500);
    gs_series_set_free(&s);
    /* groups x hours are capped: 600 tenants over 11 years would build 1.4 GB (the cap was 4
     * times higher, 4.7 GB for a 78 KB file) */
    struct gs_demand *wide = demand();
    for (int i = 0; i < 600; i++) {
        char t[16];
        snprintf(t, sizeof(t), "t%d", i);
        assert_int_equal(gs_demand_add(wide, 0, 100000LL * 3600, 1000, NULL, t, NULL, NULL, &d), 0);
    }
    struct gs_series_set ws;
    assert_int_equal(gs_demand_series(wide, GS_FC_TENANT, 0, -1, 0, &ws, &d), -E2BIG);
    assert_has(d.msg, "600 groups of 100000 hours: more than 100000 groups or 50000000 values");
    gs_demand_free(wide);
    assert_int_equal(gs_demand_add(dm, 10, 5, 1000, NULL, NULL, NULL, NULL, &d), -EINVAL);
    assert_int_equal(gs_demand_add(dm, 0, 5, 0, NULL, NULL, NULL, NULL, &d), -EINVAL);
    assert_int_equal(gs_demand_series(dm, GS_FC_TOTAL, 0, 0, 0, &s, &d), -EINVAL);
    assert_has(d.msg, "is not after the first record");
    gs_demand_free(dm);
    dm = demand();
    assert_int_equal(gs_demand_series(dm, GS_FC_TOTAL, 0, -1, 0, &s, &d), -ENODATA);
    assert_has(d.msg, "not enough history in the sources: no GPU use yet");
    gs_demand_free(dm);
}

#define DLRM_HEADER                                                                                \
    "instance_sn,role,app_name,cpu_request,cpu_limit,gpu_request,gpu_limit,rdma_request,"          \
    "rdma_limit,memory_request,memory_limit,disk_request,disk_limit,max_instance_per_node,"        \
    "creation_time,scheduled_time,deletion_time\n"

static void test_read_dlrm(void **state)
{
    (void)state;
    const char *p = write_tmp("dlrm.csv", DLRM_HEADER
                              "i0,HN,app_0,12,12,1,1,25,25,120.0,120.0,640.0,800.0,8,,,\n"
                              "i1,HN,app_0,12,12,1,1,25,25,120.0,120.0,640.0,800.0,8,1800.4,,\n"
                              "i2,CN,app_1,64,64,0,0,1,1,320.0,320.0,255.0,300.0,-1,0.0,0.0,5.0\n"
                              "i3,HN,app_2,8,8,1,1,25,25,40.0,40.0,640.0,800.0,2,3600.0,,"
                              "7199.5000000001\n");
    struct gs_demand *dm = demand();
    struct gs_diag d;
    struct warns w;
    diag_with(&d, &w);
    assert_int_equal(gs_demand_read_dlrm(dm, p, &d), 0);
    assert_int_equal(w.n, 0);
    assert_int_equal(gs_demand_count(dm), 3); /* the CPU instance holds no GPU */
    struct gs_series_set s;
    assert_int_equal(gs_demand_series(dm, GS_FC_SERVICE, 0, 3 * 3600, 0, &s, &d), 0);
    assert_string_equal(s.s[0].name, "app_0");
    assert_false(s.utc); /* the trace's own clock, from its start */
    int64_t a0[3] = {1500, 2000, 2000}, a2[3] = {0, 1000, 0};
    assert_memory_equal(s.s[0].milli, a0, sizeof(a0));
    assert_memory_equal(s.s[1].milli, a2, sizeof(a2));
    gs_series_set_free(&s);
    assert_int_equal(gs_demand_series(dm, GS_FC_TENANT, 0, -1, 0, &s, &d), -EINVAL);
    assert_has(d.msg, "dlrm.csv names no tenant");
    /* bad rows: each names file:line:column and leaves the set as it was */
    const char *bad[][2] = {
        {"i0,HN,app_0,12,12,1,1,25,25,1,1,1,1,8,500,,100\n", "dlrm2.csv:2:"},
        {"i0,HN,app_0,12,12,x,1,25,25,1,1,1,1,8,,,\n", "gpu_request: \"x\" is not a whole"},
        {"i0,HN,app_0,12,12,1,1,25,25,1,1,1,1,8,-5,,\n", "creation_time: \"-5\" is negative"},
        {"i0,HN,app_0,12,12,1,1,25,25,1,1,1,1,8,1e400,,\n", "is not a number of seconds"},
        /* strtod() alone read these as 16 s, infinity and 5 s */
        {"i0,HN,app_0,12,12,1,1,25,25,1,1,1,1,8,0x10,,\n", "\"0x10\" is not a number of seconds"},
        {"i0,HN,app_0,12,12,1,1,25,25,1,1,1,1,8,,,infinity\n", "\"infinity\" is not a number"},
        {"i0,HN,app_0,12,12,1,1,25,25,1,1,1,1,8, 5,,\n", "\" 5\" is not a number of seconds"},
        {"i0,HN,app_0,12,12,1,1,25,25,1,1,1,1,8,+5,,\n", "\"+5\" is not a number of seconds"},
        {"i0,HN,app_0\n", "dlrm2.csv:2:1: 3 columns"},
        {"i0,HN,\"app,0\",12,12,1,1,25,25,1,1,1,1,8,,,\n", "dlrm2.csv:2:7: a quote: quoted fields"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[1024];
        snprintf(text, sizeof(text), DLRM_HEADER "%s", bad[i][0]);
        p = write_tmp("dlrm2.csv", text);
        assert_int_equal(gs_demand_read_dlrm(dm, p, &d), -EINVAL);
        assert_has(d.msg, bad[i][1]);
        assert_int_equal(gs_demand_count(dm), 3);
    }
    assert_has(d.msg, "dlrm2.csv");
    /* a column the trace does not have is refused, not carried unread */
    p = write_tmp("dlrm3.csv", "role,app_name,gpu_request,creation_time,deletion_time,gpu_type\n"
                               "HN,app_0,1,0,,A100\n");
    assert_int_equal(gs_demand_read_dlrm(dm, p, &d), -EINVAL);
    assert_has(d.msg, "dlrm3.csv:1:55: unknown column \"gpu_type\" (the format's columns: "
                      "app_name, gpu_request, creation_time, deletion_time, instance_sn, role,");
    assert_int_equal(gs_demand_count(dm), 3);
    assert_int_equal(gs_demand_read_dlrm(dm, "/nonexistent/x.csv", &d), -ENOENT);
    gs_demand_free(dm);
}

#define GENAI_HEADER                                                                               \
    "gmt_create,predict_type,predict_status,exec_time_seconds,groupId,prompt_length,"              \
    "negative_prompt_length,num_images_per_prompt,num_inference_steps,"                            \
    "checkpoint_model_version_id,num_lora\n"

static void test_read_genai(void **state)
{
    (void)state;
    const char *p = write_tmp("genai.csv", GENAI_HEADER
                              "2024-11-15 00:30:00,TXT_2_IMG,SUCCEED,1800.0,G1,63,,1,30,M0,0\n"
                              "2024-11-15 00:30:00,IMG_2_IMG,FAILED,3599.2,G2,63,,1,30,M0,0\n");
    struct gs_demand *dm = demand();
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_demand_read_genai(dm, p, &d), 0);
    struct gs_series_set s;
    assert_int_equal(gs_demand_series(dm, GS_FC_TENANT, 0, -1, 0, &s, &d), 0);
    assert_int_equal(s.start_s, 1731628800); /* 2024-11-15 00:00:00 UTC */
    assert_true(s.utc);                      /* so messages and the table write its times as such */
    char t[GS_FC_TIME_MAX];
    assert_string_equal(gs_fc_time_text(t, s.start_s, s.utc),
                        "2024-11-15T00:00:00Z (1731628800 s)");
    assert_string_equal(gs_fc_time_text(t, 1209600, 0), "1209600 s"); /* a trace's clock */
    assert_string_equal(gs_fc_time_text(t, INT64_MAX / 4, 1), "2305843009213693951 s");
    assert_string_equal(s.s[0].name, "G2");
    assert_int_equal(s.s[0].milli[0], 500);
    assert_int_equal(s.s[0].milli[1], 1000); /* the history ends at 01:30: all of what it saw */
    assert_int_equal(s.s[1].milli[0], 500);
    gs_series_set_free(&s);
    p = write_tmp("genai2.csv",
                  GENAI_HEADER "2024-11-15 00:30:00,TXT_2_IMG,SUCCEED,1.0,G1,63,,1,30,M0,0\n"
                               "2024-11-15 00:29:59,TXT_2_IMG,SUCCEED,1.0,G1,63,,1,30,M0,0\n");
    assert_int_equal(gs_demand_read_genai(dm, p, &d), -EINVAL);
    assert_has(d.msg, "genai2.csv:3:1: gmt_create: 2024-11-15 00:29:59 is earlier than the row "
                      "before");
    p = write_tmp("genai3.csv",
                  GENAI_HEADER "2024-13-15 00:30:00,TXT_2_IMG,SUCCEED,1.0,G1,63,,1,30,M0,0\n");
    assert_int_equal(gs_demand_read_genai(dm, p, &d), -EINVAL);
    assert_has(d.msg, "genai3.csv:2:1: gmt_create: \"2024-13-15 00:30:00\" is not a time");
    /* timegm() took a day the month has not, and sscanf() a negative hour or a space */
    const char *times[] = {"2024-02-30 00:30:00", "2023-02-29 00:30:00", "2024-11-15 -1:30:00",
                           "2024-11-15 0: 30:00", "2024-11-15 00:30:60", "2024-11-15T00:30:00"};
    for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
        char text[512], want[64];
        snprintf(text, sizeof(text), GENAI_HEADER "%s,TXT_2_IMG,SUCCEED,1.0,G1,63,,1,30,M0,0\n",
                 times[i]);
        p = write_tmp("genai4.csv", text);
        assert_int_equal(gs_demand_read_genai(dm, p, &d), -EINVAL);
        snprintf(want, sizeof(want), "genai4.csv:2:1: gmt_create: \"%s\" is not a time", times[i]);
        assert_has(d.msg, want);
    }
    /* a duration "nan" was called empty */
    p = write_tmp("genai6.csv",
                  GENAI_HEADER "2024-11-15 00:30:00,TXT_2_IMG,SUCCEED,nan,G1,63,,1,30,M0,0\n"
                               "2024-11-15 00:30:00,TXT_2_IMG,SUCCEED,,G1,63,,1,30,M0,0\n");
    assert_int_equal(gs_demand_read_genai(dm, p, &d), -EINVAL);
    assert_has(d.msg, "genai6.csv:2:39: exec_time_seconds: \"nan\" is not a number, expected "
                      "seconds");
    p = write_tmp("genai6.csv",
                  GENAI_HEADER "2024-11-15 00:30:00,TXT_2_IMG,SUCCEED,,G1,63,,1,30,M0,0\n");
    assert_int_equal(gs_demand_read_genai(dm, p, &d), -EINVAL);
    assert_has(d.msg, "genai6.csv:2:39: exec_time_seconds: empty, expected seconds");
    p = write_tmp("genai5.csv",
                  GENAI_HEADER "2024-02-29 23:59:59,TXT_2_IMG,SUCCEED,1.0,G1,63,,1,30,M0,0\n");
    assert_int_equal(gs_demand_read_genai(dm, p, &d), 0); /* a leap day */
    assert_int_equal(gs_demand_count(dm), 3);
    gs_demand_free(dm);
}

static void test_read_pods(void **state)
{
    (void)state;
    const char *p =
        write_tmp("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                              "creation_time,deletion_time,scheduled_time\n"
                              "p0,1000,1024,2,1000,V100M32,LS,Running,0,7200,0\n"
                              "p1,1000,1024,1,250,,BE,Running,3600,7200,3600\n"
                              "p2,1000,1024,0,0,,BE,Running,0,7200,0\n");
    struct gs_demand *dm = demand();
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_demand_read_pods(dm, p, &d), 0);
    struct gs_series_set s;
    assert_int_equal(gs_demand_series(dm, GS_FC_MODEL, 0, -1, 0, &s, &d), 0);
    assert_int_equal(s.count, 2);
    assert_string_equal(s.s[0].name, "V100M32");
    assert_string_equal(s.s[1].name, "any");
    assert_int_equal(s.s[1].milli[1], 250);
    gs_series_set_free(&s);
    assert_int_equal(gs_demand_series(dm, GS_FC_SERVICE, 0, -1, 0, &s, &d), -EINVAL);
    assert_has(d.msg, "pods.csv names no service");
    /* what gpusched simulate refuses in the same file: GPU shares without a GPU were skipped,
     * a share of several GPUs counted */
    const char *bad[][2] = {
        {"p3,1000,1024,0,500,,BE,Running,0,7200,0\n", "pods2.csv:2:16: gpu_milli: pod: gpu_milli "
                                                      "500 without num_gpu"},
        {"p3,1000,1024,2,500,,BE,Running,0,7200,0\n", "pods2.csv:2:16: gpu_milli: pod: a share"},
        {"p3,1000,1024,1,0,,BE,Running,0,7200,0\n", "pods2.csv:2:16: gpu_milli: pod: gpu_milli 0 "
                                                    "outside 1..1000"},
        /* gpu_spec names catalog models, as the replay reads it: not any label */
        {"p3,1000,1024,1,500,NOTAMODEL,BE,Running,0,7200,0\n",
         "pods2.csv:2:20: gpu_spec: unknown GPU model \"NOTAMODEL\""},
        {"p3,1000,1024,1,500,V100M16|,BE,Running,0,7200,0\n",
         "pods2.csv:2:20: gpu_spec: an empty model name"},
        /* a pod listed twice would count twice, as gpusched simulate refuses it */
        {"p3,1000,1024,1,500,,BE,Running,0,7200,0\np3,1000,1024,0,0,,BE,Running,0,7200,0\n",
         "pods2.csv:3:1: name: duplicate pod \"p3\""},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char text[512];
        snprintf(text, sizeof(text),
                 "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                 "creation_time,deletion_time,scheduled_time\n%s",
                 bad[i][0]);
        p = write_tmp("pods2.csv", text);
        assert_int_equal(gs_demand_read_pods(dm, p, &d), -EINVAL);
        assert_has(d.msg, bad[i][1]);
        assert_int_equal(gs_demand_count(dm), 2);
    }
    gs_demand_free(dm);
}

/* gpuschedd's store: a real SQLite file with the ledger as the daemon writes it. */
static void test_read_store(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof(path), "%s/gpusched.db", tmpdir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    const char *sql =
        "CREATE TABLE ledger(id INTEGER PRIMARY KEY, pod_seq INTEGER NOT NULL, namespace TEXT"
        " NOT NULL, name TEXT NOT NULL, tenant TEXT NOT NULL, uid TEXT NOT NULL, node TEXT NOT "
        "NULL, gpus TEXT NOT NULL, gpu_milli INTEGER NOT NULL, start_us INTEGER NOT NULL, end_us"
        " INTEGER, model TEXT, mig_profile TEXT NOT NULL DEFAULT '');"
        "INSERT INTO ledger VALUES(1,1,'ns','a','team-a','u1','n1','0,1',1000,0,7200000000,"
        "'A100-SXM4-80GB','');"
        "INSERT INTO ledger VALUES(2,2,'ns','b','team-b','u2','n1','2',500,3600000000,NULL,"
        "NULL,'');"
        "INSERT INTO ledger VALUES(3,3,'ns','c','team-b','u3','n1','',0,0,10,NULL,'');";
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    struct gs_demand *dm = demand();
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_demand_read_store(dm, path, &d), 0);
    assert_int_equal(gs_demand_count(dm), 2); /* a run on no GPU adds nothing */
    struct gs_series_set s;
    assert_int_equal(gs_demand_series(dm, GS_FC_TENANT, 1, 3 * 3600, 0, &s, &d), 0);
    assert_string_equal(s.s[0].name, "team-a");
    assert_string_equal(s.s[0].model, "A100-SXM4-80GB");
    int64_t a[3] = {2000, 2000, 0}, b[3] = {0, 500, 500};
    assert_memory_equal(s.s[0].milli, a, sizeof(a));
    assert_string_equal(s.s[1].model, "unknown");
    assert_memory_equal(s.s[1].milli, b, sizeof(b));
    gs_series_set_free(&s);
    gs_demand_free(dm);
    /* a fresh store: one run still going, then none at all */
    snprintf(path, sizeof(path), "%s/fresh.db", tmpdir);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "DELETE FROM ledger WHERE id <> 2", NULL, NULL, NULL),
                     SQLITE_OK);
    dm = demand();
    assert_int_equal(gs_demand_read_store(dm, path, &d), 0);
    assert_int_equal(gs_demand_series(dm, GS_FC_TENANT, 0, -1, 0, &s, &d), -ENODATA);
    assert_has(d.msg, "not enough history in ");
    assert_has(d.msg, "fresh.db: GPU use only from 1970-01-01T01:00:00Z (3600 s), nothing after "
                      "it yet");
    assert_has(d.msg, "needs at least one hour of it (4 hours for a level model, 48 for");
    gs_demand_free(dm);
    /* gpuschedd's probe (meta 'probe', its clock every 2 s) says how far that run has gone: at
     * 6:30 it has held its card 5 whole hours, which are history */
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT "
                                  "NULL); INSERT INTO meta VALUES('probe', 23400000000);",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    dm = demand();
    assert_int_equal(gs_demand_read_store(dm, path, &d), 0);
    assert_int_equal(gs_demand_series(dm, GS_FC_TENANT, 0, -1, 0, &s, &d), 0);
    assert_int_equal(s.start_s, 3600);
    assert_int_equal(s.n, 5);
    assert_int_equal(s.s[0].milli[4], 500);
    gs_series_set_free(&s);
    gs_demand_free(dm);
    assert_int_equal(sqlite3_exec(db, "DROP TABLE meta", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "DELETE FROM ledger", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    dm = demand();
    assert_int_equal(gs_demand_read_store(dm, path, &d), 0);
    assert_int_equal(gs_demand_series(dm, GS_FC_TENANT, 0, -1, 0, &s, &d), -ENODATA);
    assert_has(d.msg, "fresh.db: no GPU use yet");
    gs_demand_free(dm);
    /* Its first hour not over: 3 cards held since 21:44:57 and a run of 21 s that has ended.
     * That hour's mean so far, over the 45 minutes before the ledger's last time, was taken for
     * an hour of history (0.031 GPU where 3 were held); it is not history yet. */
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO ledger VALUES(1,1,'ns','a','team-a','u1','n1',"
                                  "'0,1,2',1000,1796420697000000,NULL,'A100','');"
                                  "INSERT INTO ledger VALUES(2,2,'ns','b','team-a','u2','n1',"
                                  "'3',1000,1796420697000000,1796420718000000,'A100','');",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    dm = demand();
    assert_int_equal(gs_demand_read_store(dm, path, &d), 0);
    assert_int_equal(gs_demand_series(dm, GS_FC_TENANT, 0, -1, 0, &s, &d), -ENODATA);
    assert_has(d.msg, "not enough history in ");
    assert_has(d.msg, "fresh.db: GPU use only from 2026-12-04T21:44:57Z (1796420697 s), in an "
                      "hour not over yet");
    /* gpuschedd asks up to now: at 22:30 the hour of 21:00 is history, 22:00 not yet */
    assert_int_equal(gs_demand_series(dm, GS_FC_TENANT, 0, 1796423400, 0, &s, &d), 0);
    assert_int_equal(s.start_s, 1796418000);
    assert_true(s.utc);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.s[0].milli[0], (3 * (3600 - 2697) * 1000 + 21 * 1000 + 1800) / 3600);
    gs_series_set_free(&s);
    assert_int_equal(gs_demand_series(dm, GS_FC_TENANT, 0, 1796421600, 0, &s, &d), 0);
    assert_int_equal(s.n, 1); /* at 22:00 sharp too */
    gs_series_set_free(&s);
    gs_demand_free(dm);
    assert_int_equal(sqlite3_exec(db, "DELETE FROM ledger", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    /* a tenant or model a table would print raw is refused, as in a CSV */
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO ledger VALUES(9,9,'ns','x','team-a','u9','n1','0',"
                                  "1000,0,NULL,'A100' || char(10) || 'x','');",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    dm = demand();
    assert_int_equal(gs_demand_read_store(dm, path, &d), -EINVAL);
    assert_has(d.msg, "fresh.db: ledger row id 9: tenant or model is not plain text");
    gs_demand_free(dm);
    /* an end of 2^63-1 us is read as the second it falls in, not as end + 999999 (past
     * INT64_MAX: undefined behaviour) */
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "DELETE FROM ledger; INSERT INTO ledger VALUES(10,10,'ns','y',"
                                  "'team-a','u10','n1','0',1000,0,9223372036854775807,'A100','');",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    dm = demand();
    assert_int_equal(gs_demand_read_store(dm, path, &d), 0);
    assert_int_equal(gs_demand_count(dm), 1);
    gs_demand_free(dm);
    /* rows SQLite would coerce (1000.7 to 1000, 'abc' and a blob to 0) and labels a CSV output
     * would split were read as if gpuschedd had written them */
    const char *rows[][2] = {
        {"1000.7,0,NULL,'A100'", "ledger row id 11: gpu_milli, start_us and end_us (or NULL) must "
                                 "be integers"},
        {"1000,'abc',NULL,'A100'", "must be integers"},
        {"1000,0,x'00ff','A100'", "must be integers"},
        {"1000,0,NULL,'A100,x'", "ledger row id 11: tenant or model is not plain text (UTF-8 "
                                 "without control, bidirectional or zero-width characters), "
                                 "without commas and quotes"},
        {"1000,0,NULL,'A\"100'", "commas and quotes"},
        {"1000,0,NULL,'A100' || char(55296)", "commas and quotes"}, /* a surrogate */
        {"-1,0,NULL,'A100'", "ledger row id 11: a run of 1 cards of -1 milli-GPU"},
        {"1000,0,-5,'A100'", "from 0 to -5 us"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char row[512];
        snprintf(row, sizeof(row),
                 "DELETE FROM ledger; INSERT INTO ledger VALUES(11,11,'ns','z','team-a','u11',"
                 "'n1','0',%s,'');",
                 rows[i][0]);
        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, row, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        dm = demand();
        assert_int_equal(gs_demand_read_store(dm, path, &d), -EINVAL);
        assert_has(d.msg, rows[i][1]);
        assert_int_equal(gs_demand_count(dm), 0);
        gs_demand_free(dm);
    }
    /* card lists gpuschedd never writes: counted by their commas, "zz,,-1" was three cards */
    const char *lists[] = {"zz,,-1", "0,0", "1,0", "16", " 1", "01", "0,", ",0", "-1"};
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        char row[512];
        snprintf(row, sizeof(row),
                 "DELETE FROM ledger; INSERT INTO ledger VALUES(12,12,'ns','z','team-a','u12',"
                 "'n1','%s',1000,0,NULL,'A100','');",
                 lists[i]);
        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, row, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        dm = demand();
        assert_int_equal(gs_demand_read_store(dm, path, &d), -EINVAL);
        assert_has(d.msg, "ledger row id 12: gpus \"");
        assert_has(d.msg, "is not a card list as gpuschedd writes it");
        gs_demand_free(dm);
    }
    dm = demand();
    const char *notdb = write_tmp("not.db", "hello\n");
    assert_int_equal(gs_demand_read_store(dm, notdb, &d), -EINVAL);
    assert_has(d.msg, "not.db: not a gpuschedd store");
    assert_int_equal(gs_demand_read_store(dm, "/nonexistent/g.db", &d), -ENOENT);
    assert_int_equal(gs_demand_read_store(dm, tmpdir, &d), -EINVAL); /* was "disk I/O error" */
    assert_has(d.msg, ": not a regular file; a gpuschedd store is DIR/gpusched.db");
    gs_demand_free(dm);
}

/* Series CSV: what the writer writes the reader reads; out of order, repeated and missing
 * hours are errors at their line. */
static void test_series_csv(void **state)
{
    (void)state;
    struct gs_series_set s;
    struct gs_diag d;
    gs_diag_init(&d);
    const char *p = write_tmp("s.csv", "time_s,series,milli\n7200,a,5\n10800,a,6\n"
                                       "7200,b,1\n10800,b,2\n");
    assert_int_equal(gs_series_read_csv(p, &s, &d), 0);
    assert_int_equal(s.start_s, 7200);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.count, 2);
    assert_int_equal(s.s[1].milli[1], 2);
    char out[256];
    snprintf(out, sizeof(out), "%s/out.csv", tmpdir);
    FILE *f = fopen(out, "w");
    assert_int_equal(gs_series_write_csv(f, &s), 0);
    fclose(f);
    gs_series_set_free(&s);
    assert_int_equal(gs_series_read_csv(out, &s, &d), 0);
    assert_int_equal(s.s[0].milli[0], 5);
    gs_series_set_free(&s);
    const char *bad[][2] = {
        {"time_s,series,milli\n7200,a,5\n3600,a,6\n", "u.csv:3:1: time_s: out of order: 3600 of "
                                                      "series \"a\" comes after 7200 on line 2"},
        /* a row too early was called hours missing: the row after it is out of order */
        {"time_s,series,milli\n0,a,5\n7200,a,6\n3600,a,6\n",
         "u.csv:4:1: time_s: out of order: 3600 of series \"a\" comes after 7200 on line 3"},
        {"time_s,series,milli\n0,a,5\n7200,a,6\n10800,a,x\n", "u.csv:3:1: time_s: series \"a\" "
                                                              "jumps from 0 to 7200 s: 1 hour "
                                                              "missing (write it,"},
        {"time_s,series,milli\n7200,a,5\n7200,a,6\n", "u.csv:3:1: time_s: 7200 of series \"a\" "
                                                      "repeats the time of line 2"},
        {"time_s,series,milli\n0,a,5\n10800,a,6\n", "u.csv:3:1: time_s: series \"a\" jumps "
                                                    "from 0 to 10800 s: 2 hours missing"},
        {"time_s,series,milli\n0,a,5\n3600,a,6\n0,b,5\n", "series \"b\" has 1 hours, \"a\" 2"},
        {"time_s,series,milli\n0,a,5\n3600,b,6\n", "u.csv:3:1: series \"b\" starts at 3600"},
        {"time_s,series,milli\n0,a,-5\n", "u.csv:2:5: milli: \"-5\" is negative"},
        {"time_s,series\n0,a\n", "u.csv:1:1: missing column \"milli\""},
        {"time_s,series,milli,zone\n0,a,5,z\n",
         "u.csv:1:21: unknown column \"zone\" (the format's columns: time_s, series, milli, "
         "model, method, q025, q100, q500, q900, q975)"},
        {"time_s,series,milli\n5,a,5\n3600,a,6\n", "u.csv:3:1: time_s: 3600 of series \"a\" is "
                                                   "not a whole number of hours after line 2"},
        {"time_s,series,milli\n0,a,5\n3601,a,6\n", "is not a whole number of hours after line 2"},
        /* JSON writers (jansson) dropped a name it refuses: an overlong form, a surrogate, a
         * code point past U+10FFFF */
        {"time_s,series,milli\n0,a\xc0\xaf,5\n",
         "u.csv:2:3: series: a name must be plain text (UTF-8"},
        {"time_s,series,milli\n0,a\xe0\x80\xaf,5\n",
         "u.csv:2:3: series: a name must be plain text (UTF-8"},
        {"time_s,series,milli\n0,a\xed\xa0\x80,5\n",
         "u.csv:2:3: series: a name must be plain text (UTF-8"},
        {"time_s,series,milli\n0,a\xf4\x90\x80\x80,5\n", "u.csv:2:3: series: a name must be"},
        {"time_s,series,milli\n0,a\xf5\x80\x80\x80,5\n", "u.csv:2:3: series: a name must be"},
        {"time_s,series,milli\n0,a\xe2\x82,5\n",
         "u.csv:2:3: series: a name must be plain text (UTF-8"},
        /* a right-to-left override would print the rest of a table's row reversed */
        {"time_s,series,milli\n0,a\xe2\x80\xae,5\n",
         "u.csv:2:3: series: a name must be plain text"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        p = write_tmp("u.csv", bad[i][0]);
        assert_int_equal(gs_series_read_csv(p, &s, &d), -EINVAL);
        assert_has(d.msg, bad[i][1]);
    }
    /* a series is its name and model: rows of one find it among many (hashed: a linear
     * search made 400,000 rows of 100,000 series take a minute) */
    p = write_tmp("u.csv", "time_s,series,model,milli\n0,a,x,1\n0,a,,2\n0,ax,,3\n3600,a,,4\n"
                           "3600,ax,,5\n3600,a,x,6\n");
    assert_int_equal(gs_series_read_csv(p, &s, &d), 0);
    assert_int_equal(s.count, 3);
    assert_int_equal(s.n, 2);
    int64_t ax[2] = {1, 6}, a[2] = {2, 4}, x[2] = {3, 5};
    assert_memory_equal(s.s[0].milli, ax, sizeof(ax));
    assert_memory_equal(s.s[1].milli, a, sizeof(a));
    assert_memory_equal(s.s[2].milli, x, sizeof(x));
    gs_series_set_free(&s);
    /* the largest of each length passes: U+07FF, U+FFFD, U+10FFFF */
    p = write_tmp("u.csv", "time_s,series,milli\n0,\xdf\xbf\xef\xbf\xbd\xf4\x8f\xbf\xbf,5\n");
    assert_int_equal(gs_series_read_csv(p, &s, &d), 0);
    gs_series_set_free(&s);
}

/* Advice: a wait target shorter than the lead plans at the 97.5 % quantile, a longer one at the
 * median, a band at median / hi; nodes round up; quotas give what may be lent or borrowed. */
static void test_advice(void **state)
{
    (void)state;
    struct gs_demand *dm = demand();
    struct gs_diag d;
    gs_diag_init(&d);
    uint64_t sd = 7;
    for (int64_t t = 0; t < 10 * 86400; t += 3600) {
        int64_t v = 8000 + llround(1000 * noise(&sd));
        assert_int_equal(gs_demand_add(dm, t, t + 3600, v, NULL, "a", NULL, "A100", &d), 0);
        assert_int_equal(gs_demand_add(dm, t, t + 3600, 3000, NULL, "b", NULL, "A100", &d), 0);
        assert_int_equal(gs_demand_add(dm, t, t + 3600, 4000, NULL, "c", NULL, "L40S", &d), 0);
    }
    struct gs_series_set s;
    assert_int_equal(gs_demand_series(dm, GS_FC_TENANT, 1, -1, 0, &s, &d), 0);
    struct gs_forecast fc[3];
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(gs_fc_fit(s.s[i].milli, s.n, 4, GS_FC_AUTO, &fc[i], &d), 0);
    struct gs_advice_target tg[3] = {{"a", 60, 0, 0}, {"b", 3600, 0, 0}, {"c", -1, 500, 800}};
    struct gs_advice_quota q[2] = {{"a", "A100", 6}, {"b", "A100", 5}};
    struct gs_advice_params p = {
        .lead_s = 600, .default_gpus = 8, .targets = tg, .ntargets = 3, .quotas = q, .nquotas = 2};
    snprintf(p.models[0], sizeof(p.models[0]), "L40S");
    p.node_gpus[0] = 4;
    p.nmodels = 1;
    struct gs_advice a;
    assert_int_equal(gs_advice_compute(&s, fc, &p, &a, &d), 0);
    assert_int_equal(a.nmodels, 2);
    assert_string_equal(a.model[0], "A100");
    assert_int_equal(a.node_gpus[1], 4);
    for (size_t k = 0; k < 4; k++) {
        int64_t want = fc[0].q[4][k] + fc[2].q[2][k]; /* series by volume: a, c, b */
        assert_int_equal(a.hour[k].gpus_milli, want);
        assert_int_equal(a.hour[k].nodes, (want + 7999) / 8000);
        assert_int_equal(a.hour[4 + k].gpus_milli, 5000); /* 4000 / 0.8 */
        assert_int_equal(a.hour[4 + k].nodes, 2);
    }
    assert_string_equal(a.tenant[0].tenant, "a");
    assert_int_equal(a.tenant[0].quantile_permille, 975);
    assert_true(a.tenant[0].borrow_milli > 0 && a.tenant[0].lend_milli == 0);
    assert_string_equal(a.tenant[2].tenant, "b");
    assert_int_equal(a.tenant[2].quantile_permille, 500);
    assert_int_equal(a.tenant[2].lend_milli, 2000);
    assert_int_equal(a.tenant[1].quantile_permille, 0); /* c: a band */
    assert_int_equal(a.tenant[1].quota_milli, -1);      /* c: no quota given */
    char path[256];
    snprintf(path, sizeof(path), "%s/m.prom", tmpdir);
    FILE *f = fopen(path, "w");
    assert_int_equal(gs_advice_write_prom(f, &s, fc, &a), 0);
    fclose(f);
    f = fopen(path, "r");
    char text[4096];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
    assert_has(text, "gpusched_recommended_nodes{model=\"L40S\"} 2\n");
    assert_has(text, "gpusched_forecast_gpus{tenant=\"b\",model=\"A100\",quantile=\"0.975\"} "
                     "3.000\n");
    assert_has(text, "# TYPE gpusched_forecast_gpus summary");
    gs_advice_free(&a);
    p.fill_permille = 500; /* cards half full: a node holds half its GPUs */
    assert_int_equal(gs_advice_compute(&s, fc, &p, &a, &d), 0);
    assert_int_equal(a.hour[4].nodes, 3); /* 5000 / (4 x 0.5 GPUs) */
    gs_advice_free(&a);
    p.fill_permille = 1001;
    assert_int_equal(gs_advice_compute(&s, fc, &p, &a, &d), -EINVAL);
    assert_has(d.msg, "cards 1001 per mille full");
    p.fill_permille = 0;
    tg[2].util_lo = 900;
    assert_int_equal(gs_advice_compute(&s, fc, &p, &a, &d), -EINVAL);
    assert_has(d.msg, "utilisation band 900..800");
    for (size_t i = 0; i < 3; i++)
        gs_forecast_free(&fc[i]);
    gs_series_set_free(&s);
    gs_demand_free(dm);
}

/* Two weeks of one-card replicas an hour long: 36 by day (8:00-20:00), 6 by night. */
static struct gs_demand *day_night(void)
{
    struct gs_demand *dm = demand();
    struct gs_diag d;
    gs_diag_init(&d);
    for (int64_t h = 0; h < 14 * 24; h++) {
        int n = h % 24 >= 8 && h % 24 < 20 ? 36 : 6;
        for (int i = 0; i < n; i++) /* arrivals spread over the hour, distinct */
            assert_int_equal(gs_demand_add(dm, h * 3600 + i * 60, h * 3600 + i * 60 + 3600, 1000,
                                           NULL, NULL, NULL, NULL, &d),
                             0);
    }
    return dm;
}

/* The elastic replay on a day-night demand of one-card replicas (36 by day, 6 by night, each an
 * hour long): static at peak never makes a replica wait; the elastic way runs far fewer
 * node-hours and keeps the waits within the nodes' lead time; a static cluster of the same cost
 * leaves replicas waiting for hours. */
static void test_elastic_replay(void **state)
{
    (void)state;
    struct gs_demand *dm = day_night();
    struct gs_diag d;
    gs_diag_init(&d);
    int32_t util[2] = {100, 300};
    struct gs_elastic_params p = {.node_gpus = 8,
                                  .model = gs_catalog_find("A100-SXM4-80GB", -1),
                                  .lead_s = 600,
                                  .wait_target_s = 0,
                                  .warmup_s = 7 * 86400,
                                  .method = GS_FC_AUTO,
                                  .util_permille = util,
                                  .nutil = 2};
    int64_t end = 14 * 86400;
    int64_t peak = gs_elastic_peak_nodes(dm, end, &p, &d);
    assert_int_equal(peak, 5); /* 36 replicas at once by day: 5 nodes of 8 */
    struct gs_elastic_result st, el, same;
    assert_int_equal(gs_elastic_run(dm, end, &p, peak, &st, &d), 0);
    assert_int_equal(st.node_s, 5 * 7 * 86400);
    assert_int_equal(st.wait_max_s, 0);
    assert_int_equal(st.hours, 7 * 24);
    assert_int_equal(st.util_permille, st.alloc_permille / 5); /* utilisation 0.2 on average */
    assert_int_equal(gs_elastic_run(dm, end, &p, 0, &el, &d), 0);
    print_message("elastic: %lld node-h (static %lld), waited %lld, p95 %lld s, max %lld s\n",
                  (long long)el.node_s / 3600, (long long)st.node_s / 3600, (long long)el.waited,
                  (long long)el.wait_p95_s, (long long)el.wait_max_s);
    assert_true(el.node_s < st.node_s * 3 / 4);
    assert_int_equal(el.replicas, st.replicas);
    assert_true(el.wait_p95_s <= 600);
    int64_t n = (el.node_s + 7 * 86400 - 1) / (7 * 86400);
    assert_int_equal(gs_elastic_run(dm, end, &p, n, &same, &d), 0);
    assert_true(same.wait_p95_s > el.wait_p95_s);
    assert_true(same.unserved_milli_s > 0);
    /* right-sized: a replica of a pod that peaks at 23 % of a card asks 300 milli, so three
     * share a card: static at peak fits in fewer nodes, elastic in fewer than with whole cards */
    assert_int_equal(gs_elastic_share(0, 1000), 100);
    assert_int_equal(gs_elastic_share(230, 0), 300);
    assert_int_equal(gs_elastic_share(1000, 1000), 1000);
    assert_int_equal(gs_elastic_share(630, 1500), 467); /* 700 / 1.5, rounded up */
    assert_int_equal(gs_elastic_share(0, 4000), 25);
    int32_t peak_util[2] = {230, 230};
    p.peak_permille = peak_util;
    p.right_size = 1;
    struct gs_elastic_result sized;
    int64_t lo = gs_elastic_peak_nodes(dm, end, &p, &d);
    assert_int_equal(lo, 2); /* 36 x 300 milli: 10.8 GPUs */
    int64_t fit = gs_elastic_static_fit(dm, end, &p, lo, peak, &sized, &d);
    assert_true(fit >= lo && fit < peak);
    assert_int_equal(sized.waited, 0);
    assert_int_equal(sized.node_s, fit * 7 * 86400);
    assert_int_equal(sized.util_permille * 10 / sized.alloc_permille, 6); /* busy: 0.2 of 1000 */
    int64_t whole = el.node_s;
    assert_int_equal(gs_elastic_run(dm, end, &p, 0, &el, &d), 0);
    print_message("right-sized: static %lld nodes, %lld node-h; elastic %lld node-h, p95 %lld s\n",
                  (long long)fit, (long long)sized.node_s / 3600, (long long)el.node_s / 3600,
                  (long long)el.wait_p95_s);
    assert_true(el.node_s < whole);
    assert_int_equal(el.wait_p95_s, 0);
    p.right_size = 0;
    p.peak_permille = NULL;
    p.warmup_s = 3600;
    assert_int_equal(gs_elastic_run(dm, end, &p, 0, &el, &d), -EINVAL);
    assert_has(d.msg, "warm-up");
    gs_demand_free(dm);
}

/* The GenAI pods' utilisation: one mean, peak and series per pod, per mille, on the grid of
 * the file's sample times; bad values and a pod sampled twice at a time named. */
static void test_read_duty(void **state)
{
    (void)state;
    const char *p = write_tmp("duty.csv", "value,timestamp_anon,container_ip\n20.0,2.0,a\n"
                                          "10.0,1,a\n5.5,1,b\n");
    struct gs_duty u;
    struct gs_diag d;
    gs_diag_init(&d);
    assert_int_equal(gs_util_read_duty(p, &u, &d), 0);
    assert_int_equal(u.pods, 2);
    assert_int_equal(u.slots, 2);
    assert_int_equal(u.mean[0], 150);
    assert_int_equal(u.mean[1], 55);
    assert_int_equal(u.peak[0], 200);
    assert_int_equal(u.peak[1], 55);
    static const int16_t series[4] = {100, 200, 55, 0}; /* b has no sample at 2 s */
    assert_memory_equal(u.series, series, sizeof(series));
    gs_duty_free(&u);
    p = write_tmp("duty2.csv", "value,timestamp_anon,container_ip\n101,1,a\n");
    assert_int_equal(gs_util_read_duty(p, &u, &d), -EINVAL);
    assert_has(d.msg, "duty2.csv:2:1: value: \"101\" is not a utilisation");
    p = write_tmp("duty3.csv", "value,timestamp_anon,container_ip\n1,1,a\n2,x,a\n");
    assert_int_equal(gs_util_read_duty(p, &u, &d), -EINVAL);
    assert_has(d.msg, "duty3.csv:3:3: timestamp_anon");
    p = write_tmp("duty4.csv", "value,timestamp_anon,container_ip\n1,7,a\n2,1,b\n3,7,a\n");
    assert_int_equal(gs_util_read_duty(p, &u, &d), -EINVAL);
    assert_has(d.msg, "duty4.csv:4: container_ip \"a\" sampled twice at 7 s (line 2)");
    p = write_tmp("duty5.csv", "value,timestamp_anon,container_ip\n1,7,\n3,7,\n"); /* no name */
    assert_int_equal(gs_util_read_duty(p, &u, &d), -EINVAL);
    assert_has(d.msg, "duty5.csv:3: container_ip \"\" sampled twice at 7 s (line 2)");
    p = write_tmp("duty6.csv", "value,timestamp_anon,container_ip\n0x10,1,a\n"); /* was 16 % */
    assert_int_equal(gs_util_read_duty(p, &u, &d), -EINVAL);
    assert_has(d.msg, "duty6.csv:2:1: value: \"0x10\" is not a utilisation 0..100 %");
}

/* Overcommitted right-sized replicas: pods busy 90 % from 8:00 to 20:00 and idle otherwise.
 * Alone on their cards (no overcommit) no card is ever asked past 100 %; packed two to a card at
 * overcommit 2, the cards that hold two are asked 180 % by day, and the replay says so. */
static void test_elastic_overcommit(void **state)
{
    (void)state;
    struct gs_demand *dm = day_night();
    struct gs_diag d;
    gs_diag_init(&d);
    int32_t mean[1] = {450}, peak[1] = {900};
    int16_t series[24] = {0};
    for (int h = 8; h < 20; h++)
        series[h] = 900;
    struct gs_elastic_params p = {.node_gpus = 8,
                                  .model = gs_catalog_find("A100-SXM4-80GB", -1),
                                  .lead_s = 600,
                                  .warmup_s = 7 * 86400,
                                  .method = GS_FC_AUTO,
                                  .util_permille = mean,
                                  .peak_permille = peak,
                                  .series = series,
                                  .nutil = 1,
                                  .slots = 24,
                                  .right_size = 1};
    int64_t end = 14 * 86400;
    struct gs_elastic_result alone, packed;
    assert_int_equal(gs_elastic_run(dm, end, &p, 5, &alone, &d), 0);
    assert_true(alone.duty_milli_s > 0);
    assert_int_equal(alone.over_milli_s, 0);
    p.overcommit_milli = 2000;
    assert_int_equal(gs_elastic_peak_nodes(dm, end, &p, &d), 3); /* 36 x 450 milli: 16.2 GPUs */
    assert_int_equal(gs_elastic_run(dm, end, &p, 3, &packed, &d), 0);
    assert_int_equal(packed.waited, 0);
    assert_int_equal(packed.duty_milli_s, alone.duty_milli_s); /* the same work asked */
    print_message("overcommit 2: %lld of %lld milli-GPU-s past the card\n",
                  (long long)packed.over_milli_s, (long long)packed.duty_milli_s);
    assert_true(packed.over_milli_s > 0);
    assert_true(packed.over_milli_s * 9 <= packed.duty_milli_s * 4); /* at most 80 of 180 */
    /* the same work, less what waited past a card: busy never counts a card twice */
    int64_t gpu_alone = alone.node_s * 8, gpu_packed = packed.node_s * 8;
    int64_t want = alone.util_permille * gpu_alone - packed.over_milli_s;
    assert_true(llabs(packed.util_permille * gpu_packed - want) <= gpu_alone + gpu_packed);
    p.right_size = 0;
    assert_int_equal(gs_elastic_run(dm, end, &p, 5, &packed, &d), -EINVAL);
    assert_has(d.msg, "right-sized only");
    gs_demand_free(dm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recovers_daily_season),
        cmocka_unit_test(test_recovers_weekly_season),
        cmocka_unit_test(test_constant_series),
        cmocka_unit_test(test_too_short),
        cmocka_unit_test(test_baselines),
        cmocka_unit_test(test_backtest),
        cmocka_unit_test(test_series_from_records),
        cmocka_unit_test(test_read_dlrm),
        cmocka_unit_test(test_read_genai),
        cmocka_unit_test(test_read_pods),
        cmocka_unit_test(test_read_store),
        cmocka_unit_test(test_series_csv),
        cmocka_unit_test(test_advice),
        cmocka_unit_test(test_elastic_replay),
        cmocka_unit_test(test_read_duty),
        cmocka_unit_test(test_elastic_overcommit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
