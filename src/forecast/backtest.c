/*
 * Rolling-origin evaluation (Tashman, Int. J. Forecasting 16, 2000): fit on the past, forecast
 * the next hours, score them, move the origin on. sMAPE as in the M3/M4 competitions, MASE as
 * Hyndman and Koehler (Int. J. Forecasting 22, 2006) with the daily seasonal naive as the scale.
 */
#include "forecast_impl.h"

#include "gpusched/diag.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* Mean |y[t] - y[t - 24]| over y[0..n), or 0 when n <= 24. */
static double mase_scale(const int64_t *y, size_t n)
{
    double acc = 0;
    for (size_t t = GS_FC_DAY; t < n; t++)
        acc += fabs((double)(y[t] - y[t - GS_FC_DAY]));
    return n > GS_FC_DAY ? acc / (double)(n - GS_FC_DAY) : 0.0;
}

int gs_fc_backtest(const int64_t *y, size_t n, const struct gs_backtest_spec *spec,
                   enum gs_fc_method method, struct gs_fc_score *out, struct gs_diag *d)
{
    if (spec->h == 0 || spec->h > GS_FC_HORIZON_MAX || spec->step == 0 || spec->first == 0 ||
        spec->first + spec->h > n)
        return gs_diag_error(d,
                             "backtest: %zu hours of history and %zu ahead do not fit in %zu "
                             "hours",
                             spec->first, spec->h, n);
    double smape = 0, ase = 0;
    size_t hours = 0, mase_hours = 0, covered = 0, exact = 0;
    for (size_t o = spec->first; o + spec->h <= n; o += spec->step) {
        struct gs_forecast f;
        int rc = gs_fc_fit(y, o, spec->h, method, &f, d);
        if (rc)
            return rc;
        double scale = mase_scale(y, o);
        for (size_t k = 0; k < spec->h; k++) {
            double a = (double)y[o + k], p = (double)f.point[k];
            smape += a + p > 0 ? 200.0 * fabs(a - p) / (fabs(a) + fabs(p)) : 0.0;
            if (scale > 0) {
                ase += fabs(a - p) / scale;
                mase_hours++;
            }
            covered += f.q[1][k] <= y[o + k] && y[o + k] <= f.q[3][k];
            exact += f.point[k] == y[o + k];
            hours++;
        }
        gs_forecast_free(&f);
    }
    out->hours = hours;
    out->covered = covered;
    out->exact = exact;
    out->mase_hours = mase_hours;
    out->smape = smape / (double)hours;
    out->mase = mase_hours ? ase / (double)mase_hours : NAN;
    out->coverage = 100.0 * (double)covered / (double)hours;
    return 0;
}
