/*
 * Fuzz target: Kubernetes quantities and Go durations — the scenario loader's exact parser
 * (gs__qty_parse(), gs__duration_parse()) and its public face, gs_quantity_parse(), which the
 * daemon reads with.
 * Checked beyond not crashing: what parses exactly parses the same rounded up; a value rounded
 * up is never below the exact one; a refusal names its reason.
 */
#include "fuzz.h"

#include "scenario_impl.h"

#include "gpusched/scenario.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_str(data, size);
    if (!s)
        return 0;
    static const int units[][2] = {{0, 0}, {3, 0}, {0, -20}, {-3, 0}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        int64_t exact = 0, up = 0;
        const char *why = NULL, *why_up = NULL;
        int rc = gs__qty_parse(s, units[i][0], units[i][1], 0, &exact, &why);
        int rc_up = gs__qty_parse(s, units[i][0], units[i][1], GS__Q_CEIL, &up, &why_up);
        FUZZ_CHECK(rc == 0 || why);
        FUZZ_CHECK(rc_up == 0 || why_up);
        if (rc == 0)
            FUZZ_CHECK(rc_up == 0 && up == exact);
        int64_t plain = 0;
        const char *why_plain = NULL;
        if (gs__qty_parse(s, units[i][0], units[i][1], GS__Q_PLAIN, &plain, &why_plain) == 0)
            FUZZ_CHECK(rc == 0 && plain == exact);
    }
    int64_t us = 0, milli = 0, mib = 0;
    const char *why = NULL;
    FUZZ_CHECK(gs__duration_parse(s, &us, &why) == 0 || why);
    if (gs_quantity_parse(s, 3, 0, 1, &milli) == 0) /* milli-cores, rounded up */
        FUZZ_CHECK(milli >= 0);
    if (gs_quantity_parse(s, 0, -20, 1, &mib) == 0) /* MiB, rounded up */
        FUZZ_CHECK(mib >= 0);
    free(s);
    return 0;
}
