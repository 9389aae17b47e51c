/*
 * gpusched — GPU demand series, seasonal forecasts with prediction intervals, rolling-origin
 * backtests and elastic capacity advice (seed 000 §5: load prediction from history, elastic
 * scaling).
 *
 * Demand: a set of records, each a GPU amount (milli-GPU) held over [start_s, end_s) seconds,
 * labelled with a service, tenant, queue and GPU model (any may be ""). Readers fill it from the
 * Alibaba DLRM services (cluster-trace-gpu-v2025), the GenAI request trace (cluster-trace-v2026-
 * GenAI: a request holds one GPU for its execution seconds), the GPU-sharing pod list
 * (cluster-trace-gpu-v2023) and gpuschedd's store (its ledger of runs). A series is the hourly
 * mean of the milli-GPU held by one group (equivalently GPU-seconds per hour x 1000 / 3600),
 * an integer per hour; every group's series covers the same hours.
 *
 * Models: additive-error exponential smoothing in state-space form (Hyndman et al., "Forecasting
 * with Exponential Smoothing", Springer 2008): level, optionally a damped trend, and none, a
 * daily additive, a daily multiplicative, or a daily plus weekly additive seasonality (the double
 * seasonal Holt-Winters of Taylor, J. Oper. Res. Soc. 54, 2003). Smoothing parameters minimise
 * the sum of squared one-step errors with GSL's Nelder-Mead simplex (gsl_multimin nmsimplex2);
 * "auto" picks by measurement: each eligible model fitted on all but the last week is scored
 * there, and the best refitted on everything. Intervals are empirical: quantiles of the fitted
 * model's own h-step errors over the last week of the training data (Williams and Goodman 1971;
 * Hyndman and Athanasopoulos, "Forecasting: Principles and Practice", §5.5).
 *
 * Invariants: series values are integers (milli-GPU); forecasts are rounded to integers and
 * never negative; the quantiles of each hour never decrease with the level (the point, the
 * model's mean, may fall outside them when past errors lean one way). Same input, same output,
 * byte for byte.
 * Thread safety: none inside one object; distinct objects may be used on distinct threads.
 */
#ifndef GPUSCHED_FORECAST_H
#define GPUSCHED_FORECAST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct gs_diag;
struct gs_demand;

#define GS_FC_STEP_S      3600    /* one series point: an hour */
#define GS_FC_DAY         24      /* points of the daily season */
#define GS_FC_WEEK        168     /* points of the weekly season */
#define GS_FC_HOURS_MAX   100000  /* about 11 years of hours a series */
#define GS_FC_SERIES_MAX  100000  /* groups one build may produce */
#define GS_FC_RECORDS_MAX 2000000 /* demand records one set may hold */
#define GS_FC_HORIZON_MAX 2160    /* 90 days ahead */
#define GS_FC_NAME_MAX    128     /* bytes of a group name, NUL included */

/* What a series groups by. A source that does not name a key cannot be grouped by it. */
enum gs_fc_key {
    GS_FC_TOTAL = 0, /* one series, "total" */
    GS_FC_SERVICE,   /* DLRM app_name; GenAI base model (checkpoint_model_version_id) */
    GS_FC_TENANT,    /* GenAI groupId; the store's tenant */
    GS_FC_QUEUE,     /* GenAI predict_type; the pod list's qos */
    GS_FC_MODEL,     /* GPU model: the pod list's gpu_spec, the store's node model */
    GS_FC_KEYS
};

/* gs_fc_key_name() - "total", "service", ...; gs_fc_key_find(): the key, or -ENOENT. */
const char *gs_fc_key_name(enum gs_fc_key k);
int gs_fc_key_find(const char *name);

/* gs_demand_new() - an empty set. Return: 0 and *@out (gs_demand_free()); -ENOMEM. */
int gs_demand_new(struct gs_demand **out);
void gs_demand_free(struct gs_demand *dm); /* NULL allowed */

/*
 * gs_demand_add() - one record: @milli (1..16,000,000) held over [@start_s, @end_s) seconds
 * (0 <= start <= end; end INT64_MAX: still held, closed at the end of the series); labels may be
 * NULL or "" (copied; up to GS_FC_NAME_MAX - 1 bytes).
 * Return: 0; -EINVAL with @d (a bound broken); -E2BIG past GS_FC_RECORDS_MAX; -ENOMEM.
 */
int gs_demand_add(struct gs_demand *dm, int64_t start_s, int64_t end_s, int64_t milli,
                  const char *service, const char *tenant, const char *queue, const char *model,
                  struct gs_diag *d);

/*
 * gs_demand_add_run() - one run of gpuschedd's ledger as a record of tenant @tenant and GPU model
 * @model (NULL or "": "unknown"): @cards cards (0..16,000) of @gpu_milli (0..1000) milli-GPU each
 * from @start_us (>= 0) to @end_us (>= start; INT64_MAX: still running), microseconds of the
 * daemon's clock, as whole seconds: the start rounded down, the end up. A run that held no GPU
 * (cards or gpu_milli 0) adds nothing. The one rule both gpusched forecast --store and
 * gpuschedd's gauges read the ledger by.
 * Return: 0; -EINVAL with @d (a bound broken, named with its values); as gs_demand_add().
 */
int gs_demand_add_run(struct gs_demand *dm, const char *tenant, const char *model, int64_t cards,
                      int64_t gpu_milli, int64_t start_us, int64_t end_us, struct gs_diag *d);

/*
 * The readers. Each appends the file's records to @dm and marks which keys it names. Rows may
 * come in any order unless said; every bad field is an error naming file:line:column and its
 * column, and nothing is skipped. Return: 0; -ENOENT/-EIO with @d naming the file; -EINVAL with
 * @d; -E2BIG; -ENOMEM. On an error @dm keeps what it held before the call.
 *
 * gs_demand_read_dlrm(): the DLRM trace. Rows with gpu_request 0 (CPU instances) hold no GPU
 * and add nothing; a GPU row holds gpu_request x 1000 milli-GPU from creation_time (empty: from
 * the trace start, 0) to deletion_time (empty: past the end). Times are seconds, decimals
 * allowed, rounded to the nearest second; deletion before creation is an error.
 * gs_demand_read_genai(): the request trace; gmt_create ("YYYY-MM-DD HH:MM:SS", read as UTC,
 * a day the month has) must not decrease from row to row (an error names the line); each request
 * holds 1000 milli-GPU for exec_time_seconds (rounded up to a whole second), whatever its
 * predict_status. gs_demand_read_pods(): the GPU-sharing pod list; a pod holds num_gpu x gpu_milli
 * from creation_time to deletion_time (integer seconds); num_gpu and gpu_milli as
 * gs_pod_req_check() allows them (as gpusched simulate reads the file); pods asking no GPU add
 * nothing. gs_demand_read_store(): gpuschedd's SQLite store, opened read-only: every ledger row as
 * gs_demand_add_run() reads it (cards: the entries of gpus), end_us NULL still running; the
 * numbers must be SQLite integers, tenant and model text without commas or quotes.
 * Seconds given as decimals (DLRM, GenAI) are plain decimal numbers: no hex, "inf" or spaces.
 */
int gs_demand_read_dlrm(struct gs_demand *dm, const char *path, struct gs_diag *d);
int gs_demand_read_genai(struct gs_demand *dm, const char *path, struct gs_diag *d);
int gs_demand_read_pods(struct gs_demand *dm, const char *path, struct gs_diag *d);
int gs_demand_read_store(struct gs_demand *dm, const char *path, struct gs_diag *d);

/* gs_demand_record() - record @i (< gs_demand_count()): its start, end (INT64_MAX: open) and
 * milli-GPU. Return: 0; -ENOENT past the end. */
int gs_demand_record(const struct gs_demand *dm, size_t i, int64_t *start_s, int64_t *end_s,
                     int64_t *milli);

/* gs_demand_count() - records held. gs_demand_end_s() - the latest time any record names
 * (start, or end when closed), -1 when empty. */
size_t gs_demand_count(const struct gs_demand *dm);
int64_t gs_demand_end_s(const struct gs_demand *dm);

/* One hourly series. */
struct gs_series {
    char name[GS_FC_NAME_MAX];  /* the group: "app_0", "tenant-a", "total"; "" a record without */
    char model[GS_FC_NAME_MAX]; /* the GPU model when split by model (gs_demand_series()) */
    int64_t *milli;             /* n hourly means, milli-GPU, >= 0 */
    int64_t volume;             /* sum of milli over the hours: orders groups */
};

/* Hourly series over the same hours. */
struct gs_series_set {
    int64_t start_s; /* start of the first hour, seconds of the source's clock */
    int utc;         /* 1: that clock counts from the Unix epoch (the store, GenAI); 0: a trace's */
    size_t n;        /* hours per series */
    struct gs_series *s;
    size_t count;
    char unit[16]; /* "milli-GPU" */
};

/*
 * gs_demand_series() - group @dm's records by @key (and by GPU model too when @by_model) into
 * hourly series from the hour of the earliest start to @end_s (exclusive; -1: the latest time
 * any record names, gs_demand_end_s()). Open records end at @end_s, later ones are cut there;
 * when @end_s falls inside an hour, that last hour's value is the mean over the part of it the
 * history covers, except when a source is gpuschedd's store (gs_demand_read_store()): that hour
 * is still under way there, not history yet, and the series end at the hour before it. Groups
 * come by volume, largest first (ties by name).
 * @top: keep the @top largest groups and sum the rest into one named "(other)"; 0 keeps all.
 * Return: 0 and *@out (gs_series_set_free()); -ENODATA with @d ("not enough history in FILE":
 * no records, or, with @end_s -1 or from the store, none before the end of the first hour);
 * -EINVAL with @d (a key the sources do not name, saying which source lacks it; more than
 * GS_FC_HOURS_MAX hours; @end_s before the first record); -E2BIG past GS_FC_SERIES_MAX groups;
 * -ENOMEM.
 * Complexity: O(records + groups x hours).
 */
int gs_demand_series(const struct gs_demand *dm, enum gs_fc_key key, int by_model, int64_t end_s,
                     size_t top, struct gs_series_set *out, struct gs_diag *d);

/*
 * gs_series_read_csv() - series written by gs_series_write_csv(): columns `time_s,series,milli`
 * (an optional `model` column), one row per series and hour, hours a multiple of 3600 s apart;
 * or `gpusched forecast --format csv`, its method and quantile columns not read (any other
 * column is refused).
 * Each series' times must increase by exactly one hour from row to row: a time out of order, a
 * repeated time or a missing hour is an error naming file:line:column. All series must cover
 * the same hours. Return: as the readers above.
 */
int gs_series_read_csv(const char *path, struct gs_series_set *out, struct gs_diag *d);

/* gs_series_write_csv() - the CSV gs_series_read_csv() reads. Return: 0; -EIO. */
int gs_series_write_csv(FILE *f, const struct gs_series_set *set);

#define GS_FC_TIME_MAX 80 /* gs_fc_time_text()'s room, with the NUL */

/* gs_fc_time_text() - @s seconds of a source's clock as messages and tables give them: RFC 3339
 * UTC beside the seconds when @utc (the clock counts from the Unix epoch), "2026-12-04T21:00:00Z
 * (1796418000 s)", else the seconds alone, "1209600 s" (a trace's own clock, or one past what a
 * calendar takes). Into @buf (caller's). Return: @buf. */
const char *gs_fc_time_text(char buf[GS_FC_TIME_MAX], int64_t s, int utc);

/* gs_series_set_free() - release what a set holds and zero it; NULL allowed. */
void gs_series_set_free(struct gs_series_set *set);

/* The forecasting methods: the exponential smoothing models and the baselines. */
enum gs_fc_method {
    GS_FC_ANN = 0, /* level */
    GS_FC_ANA,     /* level, daily additive season */
    GS_FC_ANM,     /* level, daily multiplicative season (series > 0 only) */
    GS_FC_ANW,     /* level, daily + weekly additive seasons (Taylor 2003) */
    GS_FC_AAN,     /* level, damped trend */
    GS_FC_AAA,     /* damped trend, daily additive season */
    GS_FC_AAM,     /* damped trend, daily multiplicative season */
    GS_FC_AAW,     /* damped trend, daily + weekly additive seasons */
    GS_FC_ETS_COUNT,
    GS_FC_SNAIVE = GS_FC_ETS_COUNT, /* seasonal naive: the last day again */
    GS_FC_SNAIVE_WEEK,              /* the last week again */
    GS_FC_MA,                       /* the mean of the last day, flat */
    GS_FC_AUTO,                     /* the eligible ETS model of least in-sample sMAPE */
    GS_FC_AUTO_AIC,                 /* the eligible ETS model of least AIC */
    GS_FC_NAIVE,                    /* the last hour again: ETS(A,N,N) at alpha = 1 */
    GS_FC_METHODS
};

/* gs_fc_method_name() - "ETS(A,N,N)", ..., "snaive", "snaive-week", "ma", "auto";
 * gs_fc_method_find(): by that name or its short form ("ANN", "AAdA", ...), or -ENOENT. */
const char *gs_fc_method_name(enum gs_fc_method m);
int gs_fc_method_find(const char *name);
/* gs_fc_method_short() - the short form ("AAdA"), without commas: what CSV writes. */
const char *gs_fc_method_short(enum gs_fc_method m);

/*
 * gs_fc_min_points() - the history @m needs: 2 days for a daily season; 3 weeks for a weekly
 * one (its 168 states are first estimated from the weeks seen, and two give each hour of the
 * week only two samples, which a one-off change in the first weeks turns into a false weekly
 * pattern); a day for the daily baselines, a week for the weekly one, 4 hours for the others.
 */
size_t gs_fc_min_points(enum gs_fc_method m);

#define GS_FC_QUANTILES 5
/* The quantiles every forecast gives, per mille: the 95 % and 80 % intervals and the median. */
extern const int gs_fc_quantile_permille[GS_FC_QUANTILES]; /* 25, 100, 500, 900, 975 */

/* A forecast of one series. */
struct gs_forecast {
    enum gs_fc_method method;              /* the one used (auto resolved) */
    double alpha, beta, phi, gamma, omega; /* smoothing parameters (0 where unused) */
    double aic;                            /* of the fit, NAN for a baseline */
    double sigma; /* root mean squared one-step error over the training data, milli-GPU */
    /* Baselines get intervals the same way as the models: from their own past errors. */
    size_t h;                    /* points ahead */
    int64_t *point;              /* h values, milli-GPU */
    int64_t *q[GS_FC_QUANTILES]; /* h values each, per gs_fc_quantile_permille */
};

/*
 * gs_fc_fit() - forecast @h (1..GS_FC_HORIZON_MAX) hours after the @n (>= 1) hourly values @y
 * (milli-GPU, >= 0) with @method.
 * GS_FC_AUTO considers the ETS models @y is long enough for (gs_fc_min_points()), the
 * multiplicative ones only when every value is positive, and the naive one: each is fitted on
 * all but the validation window (the last week, or the last quarter of a shorter @y) and scored
 * there by the sMAPE of its 1..@h-hour forecasts (@h up to a week) from every hour; the best is
 * refitted on all of @y. GS_FC_AUTO_AIC keeps the ETS model of least AIC instead. With fewer
 * than 4 points both fall back to the mean of the last day (GS_FC_MA), which *@out names.
 * Return: 0 and *@out (gs_forecast_free()); -EINVAL with @d when @method needs more history
 * than @y has ("needs 48 hours, has 30"), or values <= 0 for a multiplicative season; -ENOMEM.
 * Complexity: O(n x optimiser iterations) per model considered, plus O(n x h) for intervals.
 */
int gs_fc_fit(const int64_t *y, size_t n, size_t h, enum gs_fc_method method,
              struct gs_forecast *out, struct gs_diag *d);

/* gs_forecast_free() - release and zero @f; NULL allowed. */
void gs_forecast_free(struct gs_forecast *f);

/* Accuracy of forecasts against what happened. */
struct gs_fc_score {
    double smape;      /* symmetric MAPE, %, 0..200 (an hour with both 0 scores 0) */
    double mase;       /* mean absolute error over the in-sample MAE of the daily seasonal
                          naive; NAN when that scale is 0 at every origin */
    double coverage;   /* share of hours inside the 80 % interval (q 0.1 .. 0.9), % */
    size_t hours;      /* hours scored */
    size_t covered;    /* of them inside the 80 % interval */
    size_t exact;      /* of them forecast exactly: an interval that holds the point covers
                          at least these, whatever its level */
    size_t mase_hours; /* hours whose origin had a scale (MASE is their mean) */
};

/* The rolling-origin plan: origins every @step hours from @first to @n - @h (hours). */
struct gs_backtest_spec {
    size_t first; /* first origin: hours of history of the first fit */
    size_t h;     /* hours forecast from each origin, 1..GS_FC_HORIZON_MAX */
    size_t step;  /* hours between origins, >= 1 */
};

/*
 * gs_fc_backtest() - for each origin o of @spec: fit @method on @y[0..o), forecast @spec->h
 * hours, score them against @y[o..o+h). The scores of all origins are pooled: sMAPE and
 * coverage over every hour scored, MASE over every hour with the scale of each origin's history.
 * Return: 0 and *@out; -EINVAL with @d when no origin fits (first + h > n) or the first
 * history is too short for @method; -ENOMEM.
 */
int gs_fc_backtest(const int64_t *y, size_t n, const struct gs_backtest_spec *spec,
                   enum gs_fc_method method, struct gs_fc_score *out, struct gs_diag *d);

/* Capacity advice ------------------------------------------------------------------------- */

#define GS_ADVICE_MODELS_MAX 32

/*
 * A tenant's target. Wait: its pods should start within @wait_p95_s at the 95th percentile;
 * when nodes take longer than that to come up (@lead_s of the advice), only capacity already
 * running helps, so it is planned at the forecast's 97.5 % quantile; otherwise nodes added on
 * demand arrive in time and the median suffices. Band: plan capacity so the median demand uses
 * between @util_lo and @util_hi per mille of it (capacity = median x 1000 / util_hi).
 */
struct gs_advice_target {
    char tenant[GS_FC_NAME_MAX]; /* "" = every tenant without a target of its own */
    int64_t wait_p95_s;          /* >= 0, or -1 when the band is used */
    int32_t util_lo, util_hi;    /* per mille, 1 <= lo <= hi <= 1000 (band only) */
};

/* One tenant's quota of a model, GPUs. */
struct gs_advice_quota {
    char tenant[GS_FC_NAME_MAX];
    char model[GS_FC_NAME_MAX];
    int64_t gpus;
};

struct gs_advice_params {
    int64_t lead_s; /* how long a node takes to come up, seconds, >= 0 */
    /* GPUs per node of each model (@models[i], @node_gpus[i]); a model not listed: @default_gpus */
    char models[GS_ADVICE_MODELS_MAX][GS_FC_NAME_MAX];
    int node_gpus[GS_ADVICE_MODELS_MAX];
    size_t nmodels;
    int default_gpus; /* 1..16 */
    /* How full, per mille, the cards that hold shares are (shares leave gaps no pod fits):
     * a node holds GPUs x fill; 0 means 1000, whole cards. */
    int32_t fill_permille;
    const struct gs_advice_target *targets;
    size_t ntargets;
    const struct gs_advice_quota *quotas;
    size_t nquotas;
};

/* The advice for one model and hour. */
struct gs_advice_hour {
    int64_t gpus_milli; /* the capacity the targets ask, summed over tenants */
    int64_t nodes;      /* ceil(gpus / GPUs per node) */
};

struct gs_advice {
    size_t h;       /* hours */
    size_t nmodels; /* models found in the series */
    char model[GS_ADVICE_MODELS_MAX][GS_FC_NAME_MAX];
    int node_gpus[GS_ADVICE_MODELS_MAX];
    struct gs_advice_hour *hour; /* nmodels x h, model-major */
    size_t ntenants;             /* one row per (tenant, model) series */
    struct gs_advice_tenant {
        const char *tenant, *model; /* borrowed from the series set */
        int64_t need_max_milli;     /* the most capacity its target asks over the horizon */
        int64_t quota_milli;        /* its quota of the model, -1 when none is given */
        int64_t lend_milli;         /* quota - need_max, when positive, else 0 */
        int64_t borrow_milli;       /* need_max - quota, when positive, else 0 */
        int32_t quantile_permille;  /* the quantile its target plans at (0: band) */
    } * tenant;
};

/*
 * gs_advice_compute() - from forecasts @fc[i] of the series @set->s[i] (all of the same horizon),
 * the nodes of each model to run each hour and what each tenant may lend or needs to borrow.
 * Return: 0 and *@out (gs_advice_free()); -EINVAL with @d (a bad target or node size, more than
 * GS_ADVICE_MODELS_MAX models, horizons that differ); -ENOMEM.
 */
int gs_advice_compute(const struct gs_series_set *set, const struct gs_forecast *fc,
                      const struct gs_advice_params *p, struct gs_advice *out, struct gs_diag *d);

/* gs_advice_free() - NULL allowed. */
void gs_advice_free(struct gs_advice *a);

/*
 * gs_advice_write_prom() - Prometheus text exposition of the first hour of the advice and the
 * forecasts: gpusched_recommended_nodes{model}, gpusched_recommended_gpus{model} and
 * gpusched_forecast_gpus{tenant,model,quantile} (GPUs, three decimals; quantiles 0.5, 0.9,
 * 0.975 of the next hour; typed summary, as the format keeps the quantile label to summaries),
 * each with its HELP and TYPE lines. Label values are escaped as the
 * exposition format asks. Return: 0; -EIO.
 */
int gs_advice_write_prom(FILE *f, const struct gs_series_set *set, const struct gs_forecast *fc,
                         const struct gs_advice *a);

#endif
