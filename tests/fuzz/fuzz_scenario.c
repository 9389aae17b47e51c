/*
 * Fuzz target: a scenario YAML file (gs_scenario_load(), then gs_scenario_resolve() when it
 * loads), read from a memfd as from a path. Checked beyond not crashing: every refusal says why.
 */
#include "fuzz.h"

#include "gpusched/diag.h"
#include "gpusched/scenario.h"

#include <errno.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    struct gs_scenario *s = NULL;
    struct gs_diag d;
    gs_diag_init(&d);
    if (!path || gs_scenario_new(&s))
        return 0;
    int rc = gs_scenario_load(s, path, &d);
    if (rc == 0)
        rc = gs_scenario_resolve(s, &d);
    FUZZ_CHECK(rc == 0 || rc == -ENOMEM || d.msg[0]);
    gs_scenario_free(s);
    return 0;
}
