/*
 * gpuschedd: the forecast gauges (forecast.h). The ledger is read through the store's own
 * connection, under the state lock the metrics handler holds, like the bills.
 */
#include "forecast.h"
#include "log.h"
#include "sched.h"
#include "state.h"
#include "store.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/diag.h"
#include "gpusched/forecast.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_run(void *ud, const struct gsd_run *run)
{
    struct gs_diag d;
    gs_diag_init(&d);
    int rc = gs_demand_add_run(ud, run->tenant, run->model, run->cards, run->gpu_milli,
                               run->start_us, run->end_us ? run->end_us : INT64_MAX, &d);
    if (rc) /* a ledger row no run can have written: the gauges wait until it is mended */
        gsd_log("error", "a ledger row cannot be forecast", "namespace", run->ns, "pod", run->name,
                "error", d.msg[0] ? d.msg : strerror(-rc), NULL);
    return rc;
}

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

/* Fit and render; *@out malloc'd. */
static int render(struct gsd_state *st, char **out, struct gs_diag *d)
{
    struct gs_demand *dm;
    struct gs_series_set set = {0};
    struct gs_forecast *fc = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = gs_demand_new(&dm);
    if (!rc)
        rc = gsd_store_ledger(st->store, NULL, add_run, dm);
    if (!rc && gs_demand_count(dm) == 0) { /* nothing ran on a GPU yet */
        gs_demand_free(dm);
        *out = strdup("");
        return *out ? 0 : -ENOMEM;
    }
    if (!rc)
        rc = gs_demand_series(dm, GS_FC_TENANT, 1, gsd_sched_now(st) / 1000000 + 1, 0, &set, d);
    fc = rc ? NULL : calloc(set.count + 1, sizeof(*fc));
    rc = rc ? rc : fc ? 0 : -ENOMEM;
    for (size_t i = 0; !rc && i < set.count; i++)
        rc = gs_fc_fit(set.s[i].milli, set.n, 1, GS_FC_AUTO, &fc[i], d);
    struct gs_advice_params p = {.lead_s = 600, .default_gpus = 8};
    struct gs_advice a = {0};
    node_sizes(st, &p);
    if (!rc)
        rc = gs_advice_compute(&set, fc, &p, &a, d);
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

const char *gsd_forecast_metrics(struct gsd_state *st)
{
    int64_t now = gsd_mono_us();
    if (st->fc_at_us && now - st->fc_at_us < GSD_FORECAST_REFRESH_US)
        return st->fc_text;
    struct gs_diag d;
    gs_diag_init(&d);
    char *text;
    int rc = render(st, &text, &d);
    if (rc) /* tried again at the next refit, not at every snapshot: each reads the whole ledger */
        gsd_log("error", "cannot forecast the demand from the ledger", "error",
                d.msg[0] ? d.msg : strerror(-rc), NULL);
    free(st->fc_text);
    st->fc_text = rc ? NULL : text;
    st->fc_at_us = now;
    return st->fc_text;
}
