/*
 * gpusched — loading a scheduler profile from a KubeSchedulerConfiguration file.
 *
 * The file is the one kube-scheduler reads (--config), so a profile tried in gpusched can be
 * deployed unchanged and the other way round. Only what decides placement is interpreted:
 * apiVersion, kind, and per profile schedulerName and plugins (enabled/disabled lists with name and
 * weight). Every other documented field (parallelism, leaderElection, pluginConfig, ...) is
 * accepted with any value and not interpreted.
 *
 * Invariants:
 * - Strict keys: every mapping key on the interpreted path (top level, profile, plugins, extension
 *   point, plugin entry) must be a field kube-scheduler knows at that level, once. A misspelt key
 *   is an error, never silently dropped, because a dropped "scroe:" would quietly run a profile
 *   without its score plugins. The message suggests the nearest known key.
 * - Defaults merged as kube-scheduler merges them: a profile starts from the default plugins
 *   (gs_profile_new_default(): GPUQueueSort, GPUAvailability, NodeGPUFilter, FGD weight 130,
 *   StrandedShare weight 1 and ExpectedWaste weight 50, NodeGPUReserve); per extension point
 * `disabled` is applied first
 *   ("*" removes every default there), then `enabled` appends, or sets the weight of a plugin
 *   already there. A key with no value (null) counts as absent, as when kube-scheduler decodes it.
 * - Portability over rejection: a plugin that gpusched does not build, or an extension point it
 *   does not have (preEnqueue, preScore, permit, preBind, bind, postBind, multiPoint), is ignored
 *   with a warning, so a production kube-scheduler file loads as is. A plugin gpusched does build
 *   but listed at a point it does not implement is an error: that is a mistake, not a portability
 *   gap.
 * - Every error and warning names the place: "path:LINE:COL: ..." (1-based), or "path: ..." when
 *   the problem is the file as a whole.
 * - Bounded work on any input: files over GS_CONFIG_MAX_BYTES or nested deeper than
 *   GS_CONFIG_MAX_DEPTH are rejected, and YAML aliases cannot make the walk blow up.
 * Thread safety: reentrant; no global state.
 */
#ifndef GPUSCHED_CONFIG_H
#define GPUSCHED_CONFIG_H

struct gs_diag;
struct gs_profile;

/* Largest configuration file accepted, in bytes. */
#define GS_CONFIG_MAX_BYTES (4u * 1024u * 1024u)

/* Deepest nesting of YAML collections accepted (kube-scheduler files need fewer than 10). */
#define GS_CONFIG_MAX_DEPTH 64

/*
 * gs_config_load_kubesched() - load one profile from a KubeSchedulerConfiguration file.
 * @path: the YAML file. It may hold several documents ("---"); documents of other kinds (a Pod, a
 *        ConfigMap) are skipped without a warning. Every KubeSchedulerConfiguration document in
 *        it is checked, not only the one the profile comes from.
 * @scheduler_name: the schedulerName of the profile to load, or NULL for the first profile in the
 *        file. A profile without schedulerName is named "default-scheduler", as in
 *        kube-scheduler. A second profile with the selected name is an error (the choice would
 *        be ambiguous).
 * @out: on success, the profile (free with gs_profile_free()); untouched on failure.
 * @d: error text on failure; one warning per enabled plugin the selected profile ignores (not
 *     built, or at a point gpusched lacks) and one per document using a deprecated apiVersion
 *     (v1beta2, v1beta3; v1 is current). Disabling a plugin that is not built is silent: it
 *     cannot have been enabled. Warnings may precede an error. May be NULL.
 * Return: 0; -EINVAL with @d->msg for a file that is not a valid configuration (syntax error,
 * unknown or duplicate key, wrong node type, unsupported apiVersion, a weight that is not an
 * integer or, at score, outside 1..GS_WEIGHT_MAX, plugin at a point it does not implement, more
 * plugins at one point than a profile holds, no KubeSchedulerConfiguration document, no profile of
 * that name, file too large or too deep, a directory; NULL @path or @out); -ENOENT when @path
 * does not exist; -EIO when it cannot be read; -ENOMEM.
 * Complexity: O(file size).
 */
int gs_config_load_kubesched(const char *path, const char *scheduler_name, struct gs_profile **out,
                             struct gs_diag *d);

#endif
