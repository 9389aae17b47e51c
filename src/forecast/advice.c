/*
 * Elastic capacity advice: the GPUs each tenant's target asks of its forecast, summed per GPU
 * model into nodes, and each tenant's quota set against its need (gpusched/forecast.h).
 * Summing per-tenant quantiles assumes no two tenants' surprises cancel: it errs on the side of
 * more capacity.
 */
#include "forecast_impl.h"

#include "gpusched/diag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *model_of(const struct gs_series *s)
{
    return s->model[0] ? s->model : "any";
}

static const struct gs_advice_target *target_of(const struct gs_advice_params *p,
                                                const char *tenant)
{
    static const struct gs_advice_target none = {"", 0, 0, 0};
    const struct gs_advice_target *any = &none;
    for (size_t i = 0; i < p->ntargets; i++) {
        if (strcmp(p->targets[i].tenant, tenant) == 0)
            return &p->targets[i];
        if (!p->targets[i].tenant[0])
            any = &p->targets[i];
    }
    return any;
}

/* The capacity target @t asks at hour @k of @f, milli-GPU; the quantile it plans at in @q. */
static int64_t need(const struct gs_advice_target *t, int64_t lead_s, const struct gs_forecast *f,
                    size_t k, int32_t *q)
{
    if (t->wait_p95_s >= 0) {
        int at = t->wait_p95_s < lead_s ? 4 : 2; /* 97.5 % when only running nodes help */
        *q = gs_fc_quantile_permille[at];
        return f->q[at][k];
    }
    *q = 0;
    return (f->q[2][k] * 1000 + t->util_hi - 1) / t->util_hi;
}

static int check(const struct gs_advice_params *p, struct gs_diag *d)
{
    if (p->lead_s < 0 || p->default_gpus < 1 || p->default_gpus > 16 || p->fill_permille < 0 ||
        p->fill_permille > 1000)
        return gs_diag_error(d,
                             "advice: lead %lld s, %d GPUs a node, cards %d per mille full: "
                             "want >= 0, 1..16 and 0..1000",
                             (long long)p->lead_s, p->default_gpus, p->fill_permille);
    for (size_t i = 0; i < p->ntargets; i++) {
        const struct gs_advice_target *t = &p->targets[i];
        if (t->wait_p95_s < 0 && (t->util_lo < 1 || t->util_lo > t->util_hi || t->util_hi > 1000))
            return gs_diag_error(d,
                                 "target of \"%s\": utilisation band %d..%d per mille: want "
                                 "1 <= lo <= hi <= 1000",
                                 t->tenant, t->util_lo, t->util_hi);
    }
    for (size_t i = 0; i < p->nmodels; i++)
        if (p->node_gpus[i] < 1 || p->node_gpus[i] > 16)
            return gs_diag_error(d, "model %s: %d GPUs a node, want 1..16", p->models[i],
                                 p->node_gpus[i]);
    return 0;
}

static int model_index(struct gs_advice *a, const struct gs_advice_params *p, const char *m,
                       struct gs_diag *d)
{
    for (size_t i = 0; i < a->nmodels; i++)
        if (strcmp(a->model[i], m) == 0)
            return (int)i;
    if (a->nmodels == GS_ADVICE_MODELS_MAX)
        return gs_diag_error(d, "advice: more than %d GPU models", GS_ADVICE_MODELS_MAX);
    size_t i = a->nmodels++;
    snprintf(a->model[i], sizeof(a->model[i]), "%s", m);
    a->node_gpus[i] = p->default_gpus;
    for (size_t j = 0; j < p->nmodels; j++)
        if (strcmp(p->models[j], m) == 0)
            a->node_gpus[i] = p->node_gpus[j];
    return (int)i;
}

static int64_t quota_of(const struct gs_advice_params *p, const char *tenant, const char *model)
{
    for (size_t i = 0; i < p->nquotas; i++)
        if (strcmp(p->quotas[i].tenant, tenant) == 0 && strcmp(p->quotas[i].model, model) == 0)
            return p->quotas[i].gpus * 1000;
    return -1;
}

int gs_advice_compute(const struct gs_series_set *set, const struct gs_forecast *fc,
                      const struct gs_advice_params *p, struct gs_advice *out, struct gs_diag *d)
{
    int rc = check(p, d);
    if (rc)
        return rc;
    struct gs_advice a;
    memset(&a, 0, sizeof(a));
    a.h = set->count ? fc[0].h : 0;
    for (size_t i = 0; i < set->count; i++) {
        if (fc[i].h != a.h)
            return gs_diag_error(d, "advice: forecasts of %zu and %zu hours", a.h, fc[i].h);
        if ((rc = model_index(&a, p, model_of(&set->s[i]), d)) < 0)
            return rc;
    }
    a.hour = calloc(a.nmodels * a.h + 1, sizeof(*a.hour));
    a.tenant = calloc(set->count + 1, sizeof(*a.tenant));
    if (!a.hour || !a.tenant) {
        gs_advice_free(&a);
        return -ENOMEM;
    }
    a.ntenants = set->count;
    for (size_t i = 0; i < set->count; i++) {
        const struct gs_series *s = &set->s[i];
        const struct gs_advice_target *t = target_of(p, s->name);
        struct gs_advice_tenant *row = &a.tenant[i];
        int m = model_index(&a, p, model_of(s), d);
        row->tenant = s->name;
        row->model = model_of(s);
        for (size_t k = 0; k < a.h; k++) {
            int64_t v = need(t, p->lead_s, &fc[i], k, &row->quantile_permille);
            a.hour[(size_t)m * a.h + k].gpus_milli += v;
            row->need_max_milli = v > row->need_max_milli ? v : row->need_max_milli;
        }
        row->quota_milli = quota_of(p, s->name, row->model);
        if (row->quota_milli >= 0) {
            int64_t diff = row->quota_milli - row->need_max_milli;
            row->lend_milli = diff > 0 ? diff : 0;
            row->borrow_milli = diff < 0 ? -diff : 0;
        }
    }
    for (size_t m = 0; m < a.nmodels; m++)
        for (size_t k = 0; k < a.h; k++) {
            struct gs_advice_hour *h = &a.hour[m * a.h + k];
            int64_t per = (int64_t)a.node_gpus[m] * (p->fill_permille ? p->fill_permille : 1000);
            h->nodes = (h->gpus_milli + per - 1) / per;
        }
    *out = a;
    return 0;
}

void gs_advice_free(struct gs_advice *a)
{
    if (!a)
        return;
    free(a->hour);
    free(a->tenant);
    memset(a, 0, sizeof(*a));
}

/* A label value as the exposition format escapes it: backslash, double quote, newline. */
static void label(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fputc('\\', f);
        if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

static void gpus(FILE *f, int64_t milli)
{
    fprintf(f, " %lld.%03lld\n", (long long)(milli / 1000), (long long)(milli % 1000));
}

int gs_advice_write_prom(FILE *f, const struct gs_series_set *set, const struct gs_forecast *fc,
                         const struct gs_advice *a)
{
    static const int quant[3] = {2, 3, 4}; /* 0.5, 0.9, 0.975 */
    fputs("# HELP gpusched_recommended_nodes Nodes of the GPU model to run in the next hour.\n"
          "# TYPE gpusched_recommended_nodes gauge\n",
          f);
    for (size_t m = 0; m < a->nmodels && a->h; m++) {
        fputs("gpusched_recommended_nodes{model=\"", f);
        label(f, a->model[m]);
        fprintf(f, "\"} %lld\n", (long long)a->hour[m * a->h].nodes);
    }
    fputs("# HELP gpusched_recommended_gpus GPUs the tenants' targets ask of the model in the next "
          "hour.\n# TYPE gpusched_recommended_gpus gauge\n",
          f);
    for (size_t m = 0; m < a->nmodels && a->h; m++) {
        fputs("gpusched_recommended_gpus{model=\"", f);
        label(f, a->model[m]);
        fputs("\"}", f);
        gpus(f, a->hour[m * a->h].gpus_milli);
    }
    /* typed summary: the exposition format keeps the quantile label to summaries; it has no
     * _sum or _count, as it counts no observations */
    fputs("# HELP gpusched_forecast_gpus Forecast GPUs held in the next hour, by quantile.\n"
          "# TYPE gpusched_forecast_gpus summary\n",
          f);
    for (size_t i = 0; i < set->count; i++)
        for (int q = 0; q < 3 && fc[i].h; q++) {
            fputs("gpusched_forecast_gpus{tenant=\"", f);
            label(f, set->s[i].name);
            fputs("\",model=\"", f);
            label(f, model_of(&set->s[i]));
            int pm = gs_fc_quantile_permille[quant[q]];
            fprintf(f, "\",quantile=\"%d.%0*d\"}", pm / 1000, pm % 100 ? 3 : 1,
                    pm % 100 ? pm % 1000 : pm % 1000 / 100);
            gpus(f, fc[i].q[quant[q]][0]);
        }
    return ferror(f) ? -EIO : 0;
}
