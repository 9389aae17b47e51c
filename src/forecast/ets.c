/*
 * Exponential smoothing in state-space form with additive errors (Hyndman, Koehler, Ord and
 * Snyder, "Forecasting with Exponential Smoothing", Springer 2008, tables 2.2 and 2.3), with the
 * daily plus weekly seasonality of Taylor's double seasonal Holt-Winters (J. Oper. Res. Soc. 54,
 * 2003). Parameters minimise the sum of squared one-step errors with GSL's Nelder-Mead simplex.
 *
 * States are indexed by the position in the series: s[t mod 24] is the daily state of the hours
 * t, t - 24, ..., w[t mod 168] the weekly one. Initial states come from the first days (or weeks)
 * by classical decomposition and are not optimised; the trend starts flat.
 */
#include "forecast_impl.h"

#include "gpusched/diag.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ITER_MAX    300  /* Nelder-Mead iterations per fit */
#define SIMPLEX_TOL 1e-3 /* stop when the simplex is this small (in the transformed space) */
#define CAL_HOURS   (7 * GS_FC_DAY) /* origins of the empirical intervals: the last week */
#define CAL_MIN     10              /* errors an horizon needs for its own quantiles */
#define INIT_DAYS   7    /* days (or weeks / 7 x 3) the initial seasonal states average */
#define PHI_LO      0.80 /* damping, as Hyndman et al. bound it */
#define PHI_HI      0.98

const int gs_fc_quantile_permille[GS_FC_QUANTILES] = {25, 100, 500, 900, 975};

struct spec {
    int trend;  /* 1: damped additive trend */
    int season; /* 0 none, 1 daily additive, 2 daily multiplicative, 3 daily + weekly additive */
};

static const struct spec specs[GS_FC_ETS_COUNT] = {
    [GS_FC_ANN] = {0, 0}, [GS_FC_ANA] = {0, 1}, [GS_FC_ANM] = {0, 2}, [GS_FC_ANW] = {0, 3},
    [GS_FC_AAN] = {1, 0}, [GS_FC_AAA] = {1, 1}, [GS_FC_AAM] = {1, 2}, [GS_FC_AAW] = {1, 3},
};

/* Each method's name and its short form, the one CSV and the --model option use. */
static const char *const names[GS_FC_METHODS][2] = {
    {"ETS(A,N,N)", "ANN"},
    {"ETS(A,N,A)", "ANA"},
    {"ETS(A,N,M)", "ANM"},
    {"DSHW(A,N,A+A)", "ANW"},
    {"ETS(A,Ad,N)", "AAdN"},
    {"ETS(A,Ad,A)", "AAdA"},
    {"ETS(A,Ad,M)", "AAdM"},
    {"DSHW(A,Ad,A+A)", "AAdW"},
    {"snaive", "snaive"},
    {"snaive-week", "snaive-week"},
    {"ma", "ma"},
    {"auto", "auto"},
    {"auto-aic", "aic"},
    {"naive", "naive"},
};

const char *gs_fc_method_name(enum gs_fc_method m)
{
    return (unsigned)m < GS_FC_METHODS ? names[m][0] : "?";
}

const char *gs_fc_method_short(enum gs_fc_method m)
{
    return (unsigned)m < GS_FC_METHODS ? names[m][1] : "?";
}

int gs_fc_method_find(const char *name)
{
    for (int m = 0; m < GS_FC_METHODS; m++)
        if (strcmp(name, names[m][0]) == 0 || strcmp(name, names[m][1]) == 0)
            return m;
    return -ENOENT;
}

size_t gs_fc_min_points(enum gs_fc_method m)
{
    if (m < GS_FC_ETS_COUNT)
        return specs[m].season == 3 ? 3 * GS_FC_WEEK : specs[m].season ? 2 * GS_FC_DAY : 4;
    return m == GS_FC_SNAIVE ? GS_FC_DAY : m == GS_FC_SNAIVE_WEEK ? GS_FC_WEEK : 1;
}

/* The state of a model at one time. */
struct state {
    double l, b;
    double s[GS_FC_DAY];
    double w[GS_FC_WEEK];
};

struct par {
    double alpha, beta, phi, gamma, omega;
};

struct model {
    struct spec sp;
    const double *y;
    size_t n;
    struct state init;
};

static double sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

static double logit(double p)
{
    return log(p / (1.0 - p));
}

/* Free parameters of @sp, in the order of the optimiser's vector. */
static int npar(const struct spec *sp)
{
    return 1 + 2 * sp->trend + (sp->season != 0) + (sp->season == 3);
}

/* The optimiser's unbounded vector -> parameters inside the admissible region. */
static struct par decode(const struct spec *sp, const double *x)
{
    struct par p = {0};
    int i = 0;
    p.alpha = 1e-4 + (0.9999 - 1e-4) * sigmoid(x[i++]);
    p.phi = 1.0;
    if (sp->trend) {
        p.beta = p.alpha * 0.999 * sigmoid(x[i++]);
        p.phi = PHI_LO + (PHI_HI - PHI_LO) * sigmoid(x[i++]);
    }
    if (sp->season)
        p.gamma = (1.0 - p.alpha) * 0.999 * sigmoid(x[i++]);
    if (sp->season == 3)
        p.omega = (1.0 - p.alpha) * 0.999 * sigmoid(x[i++]);
    return p;
}

/* The starting point: alpha 0.3, beta 0.1 alpha, phi 0.95, gamma and omega 0.1 (1 - alpha). */
static void start_point(const struct spec *sp, double *x)
{
    int i = 0;
    x[i++] = logit((0.3 - 1e-4) / (0.9999 - 1e-4));
    if (sp->trend) {
        x[i++] = logit(0.1 / 0.999);
        x[i++] = logit((0.95 - PHI_LO) / (PHI_HI - PHI_LO));
    }
    if (sp->season)
        x[i++] = logit(0.1 / 0.999);
    if (sp->season == 3)
        x[i++] = logit(0.1 / 0.999);
}

/* One step: the forecast of the next value from @st, then the update by @y. Return: the
 * one-step error, or NAN when a multiplicative state left the admissible region. */
static double step(const struct spec *sp, const struct par *p, struct state *st, size_t t, double y)
{
    size_t i = t % GS_FC_DAY, j = t % GS_FC_WEEK;
    double lb = st->l + p->phi * st->b;
    if (sp->season == 2) {
        double s = st->s[i];
        if (s <= 1e-6 || lb <= 1e-6)
            return NAN;
        double e = y - lb * s;
        st->l = lb + p->alpha * e / s;
        st->b = p->phi * st->b + p->beta * e / s;
        st->s[i] = s + p->gamma * e / lb;
        return e;
    }
    double e = y - (lb + st->s[i] + st->w[j]);
    st->l = lb + p->alpha * e;
    st->b = p->phi * st->b + p->beta * e;
    st->s[i] += p->gamma * e;
    st->w[j] += p->omega * e;
    return e;
}

/* The forecast k >= 1 steps after time @t (the state after y[t - 1]). */
static double predict(const struct spec *sp, const struct par *p, const struct state *st, size_t t,
                      size_t k)
{
    double damp = 0, f = 1;
    for (size_t i = 0; i < k && sp->trend; i++) {
        f *= p->phi;
        damp += f;
    }
    size_t at = t + k - 1;
    double lb = st->l + damp * st->b;
    if (sp->season == 2)
        return lb * st->s[at % GS_FC_DAY];
    return lb + st->s[at % GS_FC_DAY] + st->w[at % GS_FC_WEEK];
}

/* Classical decomposition of the first days (weeks for season 3) into the initial states. */
static void initial_state(const struct spec *sp, const double *y, size_t n, struct state *st)
{
    memset(st, 0, sizeof(*st));
    size_t days = n / GS_FC_DAY;
    if (sp->season == 3)
        days = (n / GS_FC_WEEK < 3 ? n / GS_FC_WEEK : 3) * 7;
    else if (days > INIT_DAYS)
        days = INIT_DAYS;
    if (!sp->season || days == 0) {
        size_t k = n < GS_FC_DAY ? n : GS_FC_DAY;
        st->l = gsl_stats_mean(y, 1, k);
        return;
    }
    double mean[7 * 3];
    for (size_t d = 0; d < days; d++)
        mean[d] = gsl_stats_mean(y + d * GS_FC_DAY, 1, GS_FC_DAY);
    st->l = gsl_stats_mean(mean, 1, days);
    double norm = 0;
    for (size_t i = 0; i < GS_FC_DAY; i++) {
        double acc = 0;
        for (size_t d = 0; d < days; d++) {
            double v = y[d * GS_FC_DAY + i];
            acc += sp->season == 2 ? (mean[d] > 0 ? v / mean[d] : 1.0) : v - mean[d];
        }
        st->s[i] = acc / (double)days;
        norm += st->s[i];
    }
    for (size_t i = 0; i < GS_FC_DAY; i++) /* additive: sum 0; multiplicative: mean 1 */
        st->s[i] = sp->season == 2 ? st->s[i] * GS_FC_DAY / norm : st->s[i] - norm / GS_FC_DAY;
    if (sp->season != 3)
        return;
    size_t weeks = days / 7;
    double wnorm = 0, wmean[3];
    for (size_t q = 0; q < weeks; q++)
        wmean[q] = gsl_stats_mean(mean + 7 * q, 1, 7);
    for (size_t j = 0; j < GS_FC_WEEK; j++) {
        double acc = 0; /* what is left of the week's mean and the daily profile */
        for (size_t q = 0; q < weeks; q++)
            acc += y[q * GS_FC_WEEK + j] - wmean[q] - st->s[j % GS_FC_DAY];
        st->w[j] = acc / (double)weeks;
        wnorm += st->w[j];
    }
    for (size_t j = 0; j < GS_FC_WEEK; j++)
        st->w[j] -= wnorm / GS_FC_WEEK;
}

/* Sum of squared one-step errors over the whole series, from the initial state. */
static double sse(const struct model *m, const struct par *p, struct state *out)
{
    struct state st = m->init;
    double acc = 0;
    for (size_t t = 0; t < m->n; t++) {
        double e = step(&m->sp, p, &st, t, m->y[t]);
        if (isnan(e))
            return HUGE_VAL;
        acc += e * e;
    }
    if (out)
        *out = st;
    return acc;
}

static double objective(const gsl_vector *v, void *ud)
{
    const struct model *m = ud;
    struct par p = decode(&m->sp, v->data);
    double s = sse(m, &p, NULL);
    return isfinite(s) ? s / (double)m->n : HUGE_VAL;
}

/* Fit @m's parameters. Return: 0 and *@p, *@sse_out; -ENOMEM. */
static int optimise(struct model *m, struct par *p, double *sse_out)
{
    int k = npar(&m->sp);
    double x0[5];
    start_point(&m->sp, x0);
    gsl_multimin_function fn = {.f = objective, .n = (size_t)k, .params = m};
    gsl_vector *x = gsl_vector_alloc((size_t)k), *ss = gsl_vector_alloc((size_t)k);
    gsl_multimin_fminimizer *s =
        gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, (size_t)k);
    if (!x || !ss || !s) {
        gsl_vector_free(x);
        gsl_vector_free(ss);
        gsl_multimin_fminimizer_free(s);
        return -ENOMEM;
    }
    for (int i = 0; i < k; i++)
        gsl_vector_set(x, (size_t)i, x0[i]);
    gsl_vector_set_all(ss, 1.0);
    gsl_multimin_fminimizer_set(s, &fn, x, ss);
    for (int it = 0; it < ITER_MAX; it++) {
        if (gsl_multimin_fminimizer_iterate(s))
            break;
        if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(s), SIMPLEX_TOL) == GSL_SUCCESS)
            break;
    }
    *p = decode(&m->sp, s->x->data);
    *sse_out = s->fval * (double)m->n;
    gsl_vector_free(x);
    gsl_vector_free(ss);
    gsl_multimin_fminimizer_free(s);
    return 0;
}

/* AIC of a Gaussian additive-error fit: n ln(SSE / n) + 2 (parameters + initial states). */
static double aic(const struct spec *sp, size_t n, double sse_v)
{
    double floor = 1e-6 * (double)n; /* an exact fit: equal, so the simplest model wins */
    int states =
        1 + sp->trend + (sp->season ? GS_FC_DAY - 1 : 0) + (sp->season == 3 ? GS_FC_WEEK - 1 : 0);
    return (double)n * log((sse_v > floor ? sse_v : floor) / (double)n) +
           2.0 * (npar(sp) + 1 + states);
}

/* Point forecasts of a baseline from @y[0..n). */
static void baseline(enum gs_fc_method m, const double *y, size_t n, size_t h, double *out)
{
    size_t span = m == GS_FC_SNAIVE_WEEK ? GS_FC_WEEK : GS_FC_DAY;
    if (m == GS_FC_NAIVE) {
        for (size_t i = 0; i < h; i++)
            out[i] = y[n - 1];
        return;
    }
    if (m == GS_FC_MA) {
        size_t k = n < GS_FC_DAY ? n : GS_FC_DAY;
        double mean = gsl_stats_mean(y + n - k, 1, k);
        for (size_t i = 0; i < h; i++)
            out[i] = mean;
        return;
    }
    for (size_t i = 0; i < h; i++)
        out[i] = y[n - span + i % span];
}

/* The h-step errors of the method over the last CAL_HOURS origins of the training data:
 * err[k * cap + i] for horizon k + 1, cnt[k] of them. */
struct errs {
    double *e;
    size_t *cnt, cap, h;
};

/* The first origin of the calibration: the last CAL_HOURS, or past the first third of a
 * shorter series (its first hours carry the initial states' error). */
static size_t cal_first(size_t n)
{
    return n > CAL_HOURS + n / 3 ? n - CAL_HOURS : n / 3;
}

static void errs_add(struct errs *E, size_t k, double e)
{
    if (E->cnt[k] < E->cap)
        E->e[k * E->cap + E->cnt[k]++] = e;
}

static void collect_ets(const struct model *m, const struct par *p, struct errs *E)
{
    struct state st = m->init;
    size_t first = cal_first(m->n);
    for (size_t t = 0; t < m->n; t++) {
        if (t >= first)
            for (size_t k = 1; k <= E->h && t + k - 1 < m->n; k++)
                errs_add(E, k - 1, m->y[t + k - 1] - predict(&m->sp, p, &st, t, k));
        step(&m->sp, p, &st, t, m->y[t]);
    }
}

static void collect_baseline(enum gs_fc_method meth, const double *y, size_t n, struct errs *E,
                             double *buf)
{
    size_t need = gs_fc_min_points(meth);
    size_t first = cal_first(n);
    for (size_t t = first > need ? first : need; t < n; t++) {
        size_t k = n - t < E->h ? n - t : E->h;
        baseline(meth, y, t, k, buf);
        for (size_t i = 0; i < k; i++)
            errs_add(E, i, y[t + i] - buf[i]);
    }
}

/* Quantiles of the errors at each horizon: its own with CAL_MIN errors or more, else the last
 * horizon that has them widened by sqrt(k / k'), else Gaussian with @sigma sqrt(k). */
static void quantiles(struct errs *E, double sigma, const double *point, struct gs_forecast *f)
{
    size_t ref = 0;
    for (size_t k = 0; k < E->h; k++) {
        double *e = E->e + k * E->cap;
        if (E->cnt[k] >= CAL_MIN) {
            gsl_sort(e, 1, E->cnt[k]);
            ref = k + 1;
        }
        for (int q = 0; q < GS_FC_QUANTILES; q++) {
            double pr = gs_fc_quantile_permille[q] / 1000.0, off;
            if (E->cnt[k] >= CAL_MIN)
                off = gsl_stats_quantile_from_sorted_data(e, 1, E->cnt[k], pr);
            else if (ref)
                off = gsl_stats_quantile_from_sorted_data(E->e + (ref - 1) * E->cap, 1,
                                                          E->cnt[ref - 1], pr) *
                      sqrt((double)(k + 1) / (double)ref);
            else
                off = gsl_cdf_ugaussian_Pinv(pr) * sigma * sqrt((double)(k + 1));
            double v = point[k] + off;
            f->q[q][k] = v > 0 ? llround(v) : 0;
            if (q && f->q[q][k] < f->q[q - 1][k])
                f->q[q][k] = f->q[q - 1][k];
        }
        f->point[k] = point[k] > 0 ? llround(point[k]) : 0;
    }
}

static int forecast_alloc(struct gs_forecast *f, size_t h)
{
    memset(f, 0, sizeof(*f));
    f->h = h;
    f->point = calloc(h, sizeof(int64_t));
    int ok = f->point != NULL;
    for (int q = 0; q < GS_FC_QUANTILES; q++)
        ok &= (f->q[q] = calloc(h, sizeof(int64_t))) != NULL;
    if (!ok) {
        gs_forecast_free(f);
        return -ENOMEM;
    }
    return 0;
}

void gs_forecast_free(struct gs_forecast *f)
{
    if (!f)
        return;
    free(f->point);
    for (int q = 0; q < GS_FC_QUANTILES; q++)
        free(f->q[q]);
    memset(f, 0, sizeof(*f));
}

/* Fit ETS method @m to @y; the fit's parameters, SSE and end state in the outputs. */
static int fit_one(enum gs_fc_method meth, const double *y, size_t n, struct model *m,
                   struct par *p, double *sse_v)
{
    m->sp = specs[meth];
    m->y = y;
    m->n = n;
    initial_state(&m->sp, y, n, &m->init);
    return optimise(m, p, sse_v);
}

static int positive(const int64_t *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (y[i] <= 0)
            return 0;
    return 1;
}

/* Check @method can run on @y. */
static int eligible(enum gs_fc_method m, const int64_t *y, size_t n, struct gs_diag *d)
{
    if (n < gs_fc_min_points(m))
        return gs_diag_error(d, "%s needs %zu hours of history, has %zu", gs_fc_method_name(m),
                             gs_fc_min_points(m), n);
    if (m < GS_FC_ETS_COUNT && specs[m].season == 2 && !positive(y, n))
        return gs_diag_error(d, "%s (multiplicative season) needs every hour above 0",
                             gs_fc_method_name(m));
    return 0;
}

/* The validation window of auto: the last week, or the last quarter of a shorter history. */
static size_t valid_hours(size_t n)
{
    return n / 4 < 7 * GS_FC_DAY ? n / 4 : 7 * GS_FC_DAY;
}

static double smape1(double a, double f)
{
    return a + f > 0 ? 200.0 * fabs(a - f) / (a + f) : 0.0;
}

/* Mean sMAPE, %, of the model's 1..@h-step forecasts (rounded as they are reported) from every
 * origin from @first on, its parameters @p fitted before @first: each forecast uses only the
 * values before its origin. */
static double valid_smape(const struct model *m, const struct par *p, const double *y, size_t n,
                          size_t first, size_t h)
{
    struct state st = m->init;
    size_t cnt = 0;
    double acc = 0;
    for (size_t t = 0; t < n; t++) {
        for (size_t k = 1; t >= first && k <= h && t + k - 1 < n; k++, cnt++) {
            double f = predict(&m->sp, p, &st, t, k);
            acc += smape1(y[t + k - 1], f > 0 ? (double)llround(f) : 0.0);
        }
        step(&m->sp, p, &st, t, y[t]);
    }
    return cnt ? acc / (double)cnt : HUGE_VAL;
}

/* valid_smape() for a baseline. */
static double baseline_smape(enum gs_fc_method meth, const double *y, size_t n, size_t first,
                             size_t h)
{
    size_t cnt = 0;
    double acc = 0, f[GS_FC_WEEK];
    for (size_t t = first > 0 ? first : 1; t < n; t++) {
        size_t k = n - t < h ? n - t : h;
        baseline(meth, y, t, k, f);
        for (size_t i = 0; i < k; i++, cnt++)
            acc += smape1(y[t + i], f[i]);
    }
    return cnt ? acc / (double)cnt : HUGE_VAL;
}

/* The model auto picks. By measurement: each eligible ETS model (and the naive one) fitted on
 * all but the validation window, scored there by valid_smape(); or (@by_aic) the ETS model of
 * least AIC fitted on everything. Ties go to the lower enum. */
static int pick(const double *y, const int64_t *yi, size_t n, size_t h, int by_aic,
                enum gs_fc_method *out)
{
    double best = HUGE_VAL;
    size_t v = by_aic ? 0 : valid_hours(n), fit_n = n - v;
    h = h < GS_FC_WEEK ? h : GS_FC_WEEK;
    *out = GS_FC_ANN;
    for (int m = 0; m < GS_FC_ETS_COUNT; m++) {
        if (eligible((enum gs_fc_method)m, yi, fit_n, NULL))
            continue;
        struct model mod;
        struct par p;
        double s;
        if (fit_one((enum gs_fc_method)m, y, fit_n, &mod, &p, &s))
            return -ENOMEM;
        double a = by_aic ? aic(&mod.sp, n, s) : valid_smape(&mod, &p, y, n, fit_n, h);
        if (a < best) {
            best = a;
            *out = (enum gs_fc_method)m;
        }
    }
    if (!by_aic && baseline_smape(GS_FC_NAIVE, y, n, fit_n, h) < best)
        *out = GS_FC_NAIVE;
    return 0;
}

int gs_fc_fit(const int64_t *yi, size_t n, size_t h, enum gs_fc_method method,
              struct gs_forecast *out, struct gs_diag *d)
{
    if (n == 0 || h == 0 || h > GS_FC_HORIZON_MAX || (unsigned)method >= GS_FC_METHODS)
        return gs_diag_error(d, "forecast of %zu hours from %zu: out of range (1..%d ahead)", h, n,
                             GS_FC_HORIZON_MAX);
    gsl_set_error_handler_off();
    double *y = malloc(n * sizeof(*y)), *pt = malloc(h * sizeof(*pt));
    struct errs E = {.h = h, .cap = CAL_HOURS};
    E.e = malloc(h * E.cap * sizeof(*E.e));
    E.cnt = calloc(h, sizeof(*E.cnt));
    struct gs_forecast f;
    int rc = y && pt && E.e && E.cnt ? forecast_alloc(&f, h) : -ENOMEM;
    if (!rc) {
        for (size_t i = 0; i < n; i++)
            y[i] = (double)yi[i];
        if (method == GS_FC_AUTO || method == GS_FC_AUTO_AIC)
            rc = n < 4 ? (method = GS_FC_MA, 0)
                       : pick(y, yi, n, h, method == GS_FC_AUTO_AIC, &method);
        else
            rc = eligible(method, yi, n, d);
        if (rc)
            gs_forecast_free(&f);
    }
    if (!rc) {
        f.method = method;
        f.aic = NAN;
        if (method < GS_FC_ETS_COUNT) {
            struct model m;
            struct par p;
            struct state end;
            double s;
            rc = fit_one(method, y, n, &m, &p, &s);
            sse(&m, &p, &end);
            for (size_t k = 1; k <= h; k++)
                pt[k - 1] = predict(&m.sp, &p, &end, n, k);
            f.alpha = p.alpha;
            f.beta = p.beta;
            f.phi = m.sp.trend ? p.phi : 0;
            f.gamma = p.gamma;
            f.omega = p.omega;
            f.aic = aic(&m.sp, n, s);
            f.sigma = sqrt(s / (double)n);
            collect_ets(&m, &p, &E);
        } else {
            baseline(method, y, n, h, pt);
            f.alpha = method == GS_FC_NAIVE; /* ETS(A,N,N) at alpha = 1: the last hour again */
            double *buf = malloc(h * sizeof(*buf));
            if (!buf)
                rc = -ENOMEM;
            else
                collect_baseline(method, y, n, &E, buf);
            free(buf);
            /* one error has no sample deviation (GSL divides by n - 1): its size stands in */
            f.sigma = E.cnt[0] > 1 ? gsl_stats_sd_m(E.e, 1, E.cnt[0], 0.0)
                      : E.cnt[0]   ? fabs(E.e[0])
                                   : 0.0;
        }
        if (!rc) {
            quantiles(&E, f.sigma, pt, &f);
            *out = f;
        } else {
            gs_forecast_free(&f);
        }
    }
    free(y);
    free(pt);
    free(E.e);
    free(E.cnt);
    return rc;
}
