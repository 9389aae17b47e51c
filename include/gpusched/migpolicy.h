/*
 * gpusched — loading the MIG policy of a cluster: which strategy the device plugin uses, and per
 * GPU model whether MIG is on and which profiles may be created.
 *
 * The file is the GpuClusterPolicy of the design documents (one YAML document):
 *
 *   apiVersion: nvidia.com/v1
 *   kind: GpuClusterPolicy
 *   metadata: {name: gpu-cluster-policy}      # any content, not interpreted
 *   spec:
 *     mig:
 *       strategy: mixed                       # none | single | mixed; absent: single
 *     devices:
 *       - name: A100-SXM4-80GB                # a catalog model name or alias
 *         migEnabled: true                    # true | false; absent: false
 *         migProfiles: [1g.10gb, 2g.20gb]     # NVIDIA's names; absent: every profile
 *
 * The strategies are those of NVIDIA's k8s-device-plugin and GPU Operator (spec.mig.strategy of
 * the Operator's ClusterPolicy, whose default is "single"). The per-device list is this product's
 * own: NVIDIA's ClusterPolicy has no such field (geometries live in mig-parted configurations).
 *
 * Invariants:
 * - Strict: every key on the interpreted path must be one listed above, at most once; an unknown
 *   key, a wrong type, an unknown device, a profile the device's model does not have, a device or
 *   profile listed twice, migProfiles on a device whose migEnabled is not true, an empty
 *   migProfiles list, or under strategy "single" a device allowing more than one profile (that
 *   strategy advertises every MIG device as nvidia.com/gpu, so they must all be alike) is an error.
 * - Every error names the place: "path:LINE:COL: ..." (1-based), or "path: ..." for the file as a
 *   whole, and quotes the offending value.
 * - Bounded work: files over GS_CONFIG_MAX_BYTES, nesting deeper than GS_CONFIG_MAX_DEPTH, more
 *   than GS_MIGPOLICY_DEVICES_MAX devices, YAML aliases (*ref) and a second document are refused.
 * Thread safety: reentrant; no global state. The result is a plain value (no allocation).
 */
#ifndef GPUSCHED_MIGPOLICY_H
#define GPUSCHED_MIGPOLICY_H

#include <stdbool.h>
#include <stddef.h>

struct gs_diag;

#define GS_MIGPOLICY_DEVICES_MAX 32

enum gs_mig_strategy {
    GS_MIG_STRATEGY_NONE = 0, /* MIG devices not advertised */
    GS_MIG_STRATEGY_SINGLE,   /* every MIG device advertised as nvidia.com/gpu */
    GS_MIG_STRATEGY_MIXED,    /* one resource per profile: nvidia.com/mig-<profile> */
};

struct gs_mig_policy_device {
    int model;        /* gs_mig_model_find() index */
    bool mig_enabled; /* migEnabled */
    unsigned allowed; /* bit i: profile i of the model may be created; 0 when MIG is off */
    unsigned line;    /* 1-based line and column of the entry, for messages */
    unsigned column;
};

struct gs_mig_policy {
    enum gs_mig_strategy strategy;
    int ndevices;
    struct gs_mig_policy_device devices[GS_MIGPOLICY_DEVICES_MAX]; /* in file order */
};

/*
 * gs_migpolicy_load() - read a GpuClusterPolicy file.
 * @path: the YAML file.
 * @out: filled on success only.
 * @d: the error message on failure; may be NULL.
 * Return: 0; -EINVAL with @d for a file that is not a valid policy (see the invariants; also a
 * YAML syntax error, a wrong apiVersion or kind, a missing spec, a directory, NULL @path or
 * @out); -ENOENT when
 * @path does not exist; -EIO when it cannot be read; -ENOMEM.
 * Complexity: O(file size).
 */
int gs_migpolicy_load(const char *path, struct gs_mig_policy *out, struct gs_diag *d);

/*
 * gs_migpolicy_parse() - read the GpuClusterPolicy that starts @buf, one document of a longer
 * stream (a scenario file holding other kinds too); what follows its document is not read.
 * @name: the file's name for messages. @buf, @len: the text from the first line of the
 * policy's document (borrowed). @first_line: that line's 1-based number in @name, so messages
 * name the file's own lines. @out, @d: as gs_migpolicy_load().
 * Return: 0; -EINVAL with @d (as gs_migpolicy_load(), and for NULL arguments); -ENOMEM.
 */
int gs_migpolicy_parse(const char *name, const unsigned char *buf, size_t len, size_t first_line,
                       struct gs_mig_policy *out, struct gs_diag *d);

/*
 * gs_migpolicy_device() - the entry for MIG model @model (gs_mig_model_find()), or NULL when the
 * policy does not name it.
 */
const struct gs_mig_policy_device *gs_migpolicy_device(const struct gs_mig_policy *p, int model);

#endif
