/*
 * Fuzz target: a DaemonConfig file's text (gsd_config_parse(): gsd_config_load() less reading
 * the file and the rate card, which has a loader of its own).
 * Checked beyond not crashing: a refused file says why, an accepted one keeps its caps in range.
 */
#include "fuzz.h"

#include "config.h"

#include <errno.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gsd_config *c = NULL;
    struct gs_diag d;
    gs_diag_init(&d);
    int rc = gsd_config_parse("fuzz.yaml", data, size, &c, &d);
    if (rc == 0) {
        FUZZ_CHECK(c && c->max_body >= 1024 && c->extender_max_body >= 1024);
        gsd_config_free(c);
    } else {
        FUZZ_CHECK(!c && (rc == -ENOMEM || d.msg[0]));
    }
    return 0;
}
