/*
 * Fuzz target: a Pod object as POST /v1/pods and the extender read it (gsd_podspec_parse(): the
 * body as JSON text, duplicate keys refused, then the one Pod parser), strictly as the API does
 * and leniently as the extender does.
 * Checked beyond not crashing: a parsed spec has names that fit their buffers, at least one
 * container, its labels, annotations and body; a refusal is a 4xx that says why.
 */
#include "fuzz.h"

#include "podspec.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int strict = 0; strict < 2; strict++) {
        struct gsd_podspec spec;
        struct gsd_ferr e;
        if (gsd_podspec_parse((const char *)data, size, strict, &spec, &e) == 0) {
            FUZZ_CHECK(strlen(spec.ns) < sizeof(spec.ns) && strlen(spec.name) < sizeof(spec.name));
            FUZZ_CHECK(spec.s.ncontainers >= 1 && spec.s.ncontainers <= GS_SCN_CONTAINERS);
            FUZZ_CHECK(spec.labels && spec.annotations && spec.body);
            gsd_podspec_clear(&spec);
        } else {
            FUZZ_CHECK(e.status >= 400 && e.status < 500 && e.msg[0]);
        }
    }
    return 0;
}
