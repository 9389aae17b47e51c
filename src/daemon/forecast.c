/*
 * gpuschedd: the forecast gauges (forecast.h). Fitting every tenant x model series takes seconds
 * on a long ledger (bench/README.md), so the scheduler thread only hands a fit to a thread of its
 * own and goes on serving the last gauges; a fit that lands wakes the scheduler thread to publish
 * a snapshot that has them. That thread reads the ledger through a connection of its own
 * (gs_demand_read_store(), as `gpusched forecast --store` does; the store's WAL lets it read while
 * the scheduler writes).
 */
#include "forecast.h"
#include "log.h"
#include "sched.h"
#include "state.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/diag.h"
#include "gpusched/forecast.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum fit_state { FIT_IDLE, FIT_ASKED, FIT_RUNNING };

struct gsd_forecaster {
    char path[4096]; /* the store's file */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    int started, stop;
    enum fit_state state;           /* under mu */
    struct gs_advice_params want_p; /* under mu: of the fit asked */
    int64_t want_end_s;
    char *text;             /* under mu: the last gauges (NULL: none yet, or that fit failed) */
    int64_t at_us;          /* under mu: when the last fit was asked (monotonic; 0 none) */
    void (*wake)(void *ud); /* under mu: called when a fit lands (gsd_forecaster_set_wake()) */
    void *wake_ud;
};

/* The GPUs of the largest node of each model in the inventory. */
static void node_sizes(const struct gsd_state *st, struct gs_advice_params *p)
{
    for (size_t i = 0; i < gs_cluster_node_count(st->cluster); i++) {
        struct gs_node_info ni;
        if (gs_cluster_node_info(st->cluster, i, &ni) || ni.model < 0 || !ni.gpus)
            continue;
        const char *name = gs_catalog_at(ni.model)->name;
        size_t m = 0;
        while (m < p->nmodels && strcmp(p->models[m], name) != 0)
            m++;
        if (m == p->nmodels) {
            if (m == GS_ADVICE_MODELS_MAX)
                continue;
            snprintf(p->models[m], sizeof(p->models[m]), "%s", name);
            p->node_gpus[m] = 0;
            p->nmodels++;
        }
        p->node_gpus[m] = ni.gpus > p->node_gpus[m] ? ni.gpus : p->node_gpus[m];
    }
}

/* The gauges of the ledger in @path up to @end_s (seconds of the daemon's clock), nodes as @p
 * says; *@out malloc'd ("" while the ledger holds no GPU run through a whole hour: the hour under
 * way is not history yet). Return: 0; < 0 with @d. */
static int fit(const char *path, int64_t end_s, const struct gs_advice_params *p, char **out,
               struct gs_diag *d)
{
    struct gs_demand *dm;
    struct gs_series_set set = {0};
    struct gs_forecast *fc = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = gs_demand_new(&dm);
    if (!rc)
        rc = gs_demand_read_store(dm, path, d);
    if (!rc)
        rc = gs_demand_series(dm, GS_FC_TENANT, 1, end_s, 0, &set, d);
    if (rc == -ENODATA) { /* not enough history yet: no gauges, and nothing to log */
        gs_demand_free(dm);
        *out = strdup("");
        return *out ? 0 : -ENOMEM;
    }
    fc = rc ? NULL : calloc(set.count + 1, sizeof(*fc));
    rc = rc ? rc : fc ? 0 : -ENOMEM;
    for (size_t i = 0; !rc && i < set.count; i++)
        rc = gs_fc_fit(set.s[i].milli, set.n, 1, GS_FC_AUTO, &fc[i], d);
    struct gs_advice a = {0};
    if (!rc)
        rc = gs_advice_compute(&set, fc, p, &a, d);
    FILE *f = rc ? NULL : open_memstream(&text, &len);
    if (!rc && (!f || gs_advice_write_prom(f, &set, fc, &a) || fclose(f)))
        rc = -ENOMEM;
    gs_advice_free(&a);
    for (size_t i = 0; fc && i < set.count; i++)
        gs_forecast_free(&fc[i]);
    free(fc);
    gs_series_set_free(&set);
    gs_demand_free(dm);
    if (rc) {
        free(text);
        return rc;
    }
    *out = text;
    return 0;
}

/* Fit (@f's lock not held) and keep the outcome in @f: the gauges, or none and the log saying
 * why; then wake whoever publishes them. Returns with @f's lock held. */
static void fit_and_keep(struct gsd_forecaster *f, int64_t end_s, const struct gs_advice_params *p)
{
    struct gs_diag d;
    gs_diag_init(&d);
    char *text = NULL;
    int rc = fit(f->path, end_s, p, &text, &d);
    if (rc) /* tried again at the next refit, not at every snapshot: each reads the whole ledger */
        gsd_log("error", "cannot forecast the demand from the ledger", "error",
                d.msg[0] ? d.msg : strerror(-rc), NULL);
    pthread_mutex_lock(&f->mu);
    free(f->text);
    f->text = rc ? NULL : text;
    if (f->wake) /* under mu: gsd_forecaster_set_wake(NULL) returns only after this */
        f->wake(f->wake_ud);
}

static void *refit_main(void *arg)
{
    struct gsd_forecaster *f = arg;
    pthread_mutex_lock(&f->mu);
    for (;;) {
        while (f->state != FIT_ASKED && !f->stop)
            pthread_cond_wait(&f->cv, &f->mu);
        if (f->stop)
            break;
        struct gs_advice_params p = f->want_p;
        int64_t end_s = f->want_end_s;
        f->state = FIT_RUNNING;
        pthread_mutex_unlock(&f->mu);
        fit_and_keep(f, end_s, &p);
        f->state = FIT_IDLE;
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

void gsd_forecaster_set_wake(struct gsd_forecaster *f, void (*fn)(void *ud), void *ud)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->mu);
    f->wake = fn;
    f->wake_ud = ud;
    pthread_mutex_unlock(&f->mu);
}

int gsd_forecaster_new(const char *data_dir, struct gsd_forecaster **out)
{
    struct gsd_forecaster *f = calloc(1, sizeof(*f));
    if (!f)
        return -ENOMEM;
    if ((size_t)snprintf(f->path, sizeof(f->path), "%s/gpusched.db", data_dir) >= sizeof(f->path)) {
        free(f);
        return -ENAMETOOLONG;
    }
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    *out = f;
    return 0;
}

void gsd_forecaster_free(struct gsd_forecaster *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->mu);
    f->stop = 1;
    pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
    if (f->started) /* a fit under way ends first: it cannot be cut short */
        pthread_join(f->th, NULL);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    free(f->text);
    free(f);
}

char *gsd_forecast_metrics(struct gsd_state *st)
{
    struct gsd_forecaster *f = st->fc;
    int64_t now = gsd_mono_us();
    struct gs_advice_params p = {.lead_s = 600, .default_gpus = 8};
    int64_t end_s = gsd_sched_now(st) / 1000000 + 1;
    pthread_mutex_lock(&f->mu);
    int64_t every_us = st->cfg->metrics.forecast_refresh_s * 1000000;
    if (f->state == FIT_IDLE && (!f->at_us || now - f->at_us >= every_us)) {
        f->at_us = now;
        node_sizes(st, &p);
        f->want_p = p;
        f->want_end_s = end_s;
        f->state = FIT_ASKED;
        if (!f->started && pthread_create(&f->th, NULL, refit_main, f) == 0)
            f->started = 1;
        if (f->started)
            pthread_cond_signal(&f->cv);
        else /* no thread: the last gauges stay, and the next refit tries again */
            f->state = FIT_IDLE;
    }
    char *copy = f->text && *f->text ? strdup(f->text) : NULL;
    pthread_mutex_unlock(&f->mu);
    return copy;
}
