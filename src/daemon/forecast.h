/*
 * gpuschedd's demand forecast and capacity advice on /metrics (docs/forecast.md): the gauges of
 * `gpusched forecast --store DIR/gpusched.db --by tenant --by-model --advice`, computed from the
 * store's ledger in the daemon.
 */
#ifndef GSD_FORECAST_H
#define GSD_FORECAST_H

#include <stdint.h>

struct gsd_state;

/* How often the forecast is refitted from the ledger (a scrape in between gets the last one). */
#define GSD_FORECAST_REFRESH_US (300 * 1000000LL)

/*
 * gsd_forecast_metrics() - gpusched_recommended_nodes{model}, gpusched_recommended_gpus{model}
 * and gpusched_forecast_gpus{tenant,model,quantile} for the next hour, in the Prometheus text
 * format: every tenant's hourly GPUs (the ledger's runs up to now, per tenant and GPU model)
 * forecast with the auto model, planned at the 97.5 % quantile (a wait target of 0 s; nodes take
 * 10 minutes to come up), nodes of each model as large as its largest node in the inventory.
 * Refitted at most every GSD_FORECAST_REFRESH_US; "" while the ledger holds no GPU run.
 * Return: the text, owned by @st (valid until the next call); NULL when the ledger cannot be read
 * or memory ran out (the scrapes until the next refit go without these gauges, and the log says
 * why once).
 */
const char *gsd_forecast_metrics(struct gsd_state *st);

#endif
