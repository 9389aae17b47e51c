/*
 * gpuschedd's demand forecast and capacity advice on /metrics (docs/forecast.md): the gauges of
 * `gpusched forecast --store DIR/gpusched.db --by tenant --by-model --advice`, computed from the
 * store's ledger in the daemon.
 */
#ifndef GSD_FORECAST_H
#define GSD_FORECAST_H

#include <stdint.h>

struct gsd_state;
struct gsd_forecaster;

/*
 * gsd_forecast_metrics() - gpusched_recommended_nodes{model}, gpusched_recommended_gpus{model}
 * and gpusched_forecast_gpus{tenant,model,quantile} for the hour under way, in the Prometheus
 * text format: every tenant's hourly GPUs (the ledger's runs through the last whole hour, per
 * tenant and GPU model) forecast with the auto model, planned at the 97.5 % quantile (a wait
 * target of 0 s; nodes take 10 minutes to come up), nodes of each model as large as its largest
 * node in the inventory.
 * A call hands a fit to st->fc's thread, at most every metrics.forecastRefreshSeconds (300 by
 * default), and returns the last gauges meanwhile, so the scheduler thread never waits on a fit
 * (seconds on a long ledger of many tenants: bench/README.md); the first fit's gauges come in a
 * snapshot published when it lands (gsd_forecaster_set_wake()).
 * Return: the text, malloc'd (the caller frees it); NULL before the first fit landed, while the
 * ledger holds no GPU run through a whole hour (the hour under way is not history yet: the
 * gauges are for it), when the ledger cannot be read, or when memory ran out (the scrapes
 * until the next refit go without these gauges, and the log says why once).
 */
char *gsd_forecast_metrics(struct gsd_state *st);

/* gsd_forecaster_set_wake() - @fn(@ud) is called, from the fitting thread, each time a fit lands
 * (the server: publish a snapshot now); NULL stops that, and once it returns no call is under
 * way. @f NULL: nothing. */
void gsd_forecaster_set_wake(struct gsd_forecaster *f, void (*fn)(void *ud), void *ud);

/* gsd_forecaster_new() - the refits of the store in @data_dir (DIR/gpusched.db), its thread
 * started at the first refit. Return: 0 and *@out; -ENOMEM; -ENAMETOOLONG.
 * gsd_forecaster_free() - stop it, after the fit under way if one is; NULL is nothing. */
int gsd_forecaster_new(const char *data_dir, struct gsd_forecaster **out);
void gsd_forecaster_free(struct gsd_forecaster *f);

#endif
