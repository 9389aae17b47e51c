/*
 * Fuzz target: a Pod object as POST /v1/pods and the extender read it (gsd_podspec_parse()),
 * after jansson's parse with duplicate keys refused, as the API parses a body.
 * Checked beyond not crashing: a parsed spec has names that fit their buffers and a request
 * that keeps the engine's invariants (gs_pod_req_check()); a refusal is a 4xx that says why.
 */
#include "fuzz.h"

#include "podspec.h"
#include "gpusched/pod.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t err;
    json_t *pod = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &err);
    if (!pod)
        return 0;
    struct gsd_podspec spec;
    struct gsd_ferr e;
    if (gsd_podspec_parse(pod, 15360, &spec, &e) == 0) {
        FUZZ_CHECK(strlen(spec.ns) < sizeof(spec.ns) && strlen(spec.name) < sizeof(spec.name));
        FUZZ_CHECK(gs_pod_req_check(&spec.req, "fuzz", NULL) == 0);
        FUZZ_CHECK(spec.labels && spec.annotations);
        gsd_podspec_clear(&spec);
    } else {
        FUZZ_CHECK(e.status >= 400 && e.status < 500 && e.msg[0]);
    }
    json_decref(pod);
    return 0;
}
