/*
 * Fuzz target: the trace CSV readers (node list, pod list, arrival sequence against a fixed
 * pod and node list), chosen by the input's first byte, read from a memfd as from a path.
 * Checked beyond not crashing: every refusal says why; rows read are within the readers' caps.
 */
#include "fuzz.h"

#include "gpusched/diag.h"
#include "gpusched/trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct gs_trace_node nodes[2] = {{"n0", 0, 8, 96000, 786432, 0, 0},
                                              {"n1", -1, 0, 32000, 131072, 0, 0}};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *path = fuzz_file(data + 1, size - 1);
    struct gs_diag d;
    int rc = 0;
    gs_diag_init(&d);
    if (!path)
        return 0;
    if (data[0] % 3 == 0) {
        struct gs_trace_node *n = NULL;
        size_t k = 0;
        rc = gs_trace_read_nodes(path, &n, &k, &d);
        FUZZ_CHECK(rc || k > 0);
        free(n);
    } else if (data[0] % 3 == 1) {
        struct gs_trace_pod *p = NULL;
        size_t k = 0;
        rc = gs_trace_read_pods(path, &p, &k, &d);
        FUZZ_CHECK(rc || k > 0);
        free(p);
    } else {
        struct gs_trace_pod pods[2] = {{.name = "p0"}, {.name = "p1"}};
        struct gs_sequence seq;
        memset(&seq, 0, sizeof(seq));
        rc = gs_trace_read_sequence(path, pods, 2, nodes, 2, &seq, &d);
        for (size_t i = 0; rc == 0 && i < seq.n; i++)
            FUZZ_CHECK(seq.pod[i] < 2);
        gs_sequence_free(&seq);
    }
    FUZZ_CHECK(rc == 0 || rc == -ENOMEM || d.msg[0]);
    return 0;
}
