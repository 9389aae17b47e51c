/*
 * Scenario loader entry points; the contract is in gpusched/scenario.h.
 *
 * A file is read whole (at most GS_SCN_FILE_MAX_BYTES), checked by the event pass (syntax, depth),
 * then each document is loaded as a tree and handed to the reader of its kind (scenario_*.c). A
 * document's tree is freed before the next is loaded, so memory follows the largest document,
 * not the file. An unknown field, wrong type or bad value is an error: a manifest run with a field
 * dropped would mislead. Real fields that decide nothing here are accepted by each reader.
 */
#include "scenario_impl.h"
#include "kubesched_impl.h"

#include "gpusched/diag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Who reads each kind, and the apiVersions it is read under: group/version as the API serves it
 * ("v1" alone: the core group). */
static const struct kind_entry {
    const char *kind;
    const char *apis; /* '|'-separated */
    gs__scn_kind_fn fn;
} kinds_read[] = {
    {"Cluster", "gpusched.io/v1alpha1", gs__scn_cluster},
    {"Simulation", "sim.gpusched.io/v1alpha1|gpusched.io/v1alpha1", gs__scn_simulation},
    {"Pod", "v1", gs__scn_pod},
    {"GPUQuota", "gpu.example.com/v1|gpusched.io/v1alpha1", gs__scn_gpuquota},
    {"ConfigMap", "v1", gs__scn_configmap},
    {"Queue", "scheduling.volcano.sh/v1beta1", gs__scn_queue},
    {"PodGroup", "scheduling.volcano.sh/v1beta1", gs__scn_podgroup},
    {"PriorityClass", "scheduling.k8s.io/v1", gs__scn_priority_class},
    {"ResourceQuota", "v1", gs__scn_rquota},
    {"LimitRange", "v1", gs__scn_limit_range},
    {"VirtualGPUClass", "gpu.example.com/v1|gpusched.io/v1alpha1", gs__scn_vgpu_class},
    {"GpuClusterPolicy", "nvidia.com/v1", gs__scn_mig_policy},
};

/* Kinds other programs own (Prometheus; gpuschedd's config and rate card): accepted, and said to
 * be not interpreted by the scenario. */
static const char *const kinds_elsewhere[] = {"PrometheusRule", "ServiceMonitor", "DaemonConfig",
                                              "RateCard"};

/* Kinds with no bearing on what is scheduled where (a chart's objects beside its pods): skipped
 * with a note, so a manifest a user already has loads as it is. */
static const char *const kinds_inert[] = {"Namespace",
                                          "Service",
                                          "ServiceAccount",
                                          "Secret",
                                          "Role",
                                          "RoleBinding",
                                          "ClusterRole",
                                          "ClusterRoleBinding",
                                          "Ingress",
                                          "NetworkPolicy",
                                          "PersistentVolumeClaim",
                                          "CustomResourceDefinition",
                                          "HorizontalPodAutoscaler"};

/* Workload kinds: their pods are what would be scheduled, and gpusched does not expand them. */
static const char *const kinds_workload[] = {
    "Deployment", "StatefulSet", "DaemonSet",  "ReplicaSet", "ReplicationController",
    "Job",        "CronJob",     "PyTorchJob", "TFJob",      "MPIJob",
    "RayJob",     "RayCluster",  "JobSet",     "Notebook",   "InferenceService"};

/* A kind gpusched does not read, and what to write instead. */
struct kind_instead {
    const char *kind, *instead;
};

/* Kinds whose meaning another kind carries here. */
static const struct kind_instead kinds_instead[] = {
    {"Node", "the nodes as a Cluster's nodeTemplates (GPU model, cards, CPU, memory) and nodes "
             "(name, zone, taints), docs/scenario.md#cluster"},
    {"ClusterPolicy", "the GPU Operator's MIG choice per GPU model as a GpuClusterPolicy "
                      "(spec.mig.strategy and spec.devices), docs/mig.md"},
};

/* Kueue's kinds, each with what says the same here (docs/queues.md maps their fields). */
static const struct kind_instead kinds_kueue[] = {
    {"ClusterQueue", "a GPUQuota per tenant and GPU model (nominalQuota of nvidia.com/gpu as "
                     "dedicated, borrowingLimit as shared) or a Volcano Queue"},
    {"LocalQueue", "the namespace into its tenant (a GPUQuota's spec.namespaces) and the queue as "
                   "a PodGroup's spec.queue or the annotation scheduling.volcano.sh/queue-name"},
    {"ResourceFlavor", "the GPU model as a node template's gpuModel and a GPUQuota's quotas key"},
    {"Workload", "a PodGroup (minMember) and its Pods"},
    {"WorkloadPriorityClass", "a PriorityClass"},
    {"Cohort", "the tenants' GPUQuotas: what one leaves of its dedicated quota the others borrow "
               "as shared"},
};

int gs_scenario_new(struct gs_scenario **out)
{
    struct gs_scenario *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    for (int t = 0; t < 5; t++) {
        s->policy.tiers[t].overcommit_milli = 1000;
        s->policy.tiers[t].max_skew = GS_UNSET;
    }
    s->sim.horizon_us = GS_UNSET;
    s->sim.now_us = GS_UNSET;
    s->sim.convert = 1;
    *out = s;
    return 0;
}

void gs_scenario_free(struct gs_scenario *s)
{
    if (!s)
        return;
    if (s->priv) {
        for (int k = 0; k < GS__K_COUNT; k++)
            gs__nidx_clear(&s->priv->idx[k]);
        gs__nidx_clear(&s->priv->ns_tenant);
        free(s->priv->pending);
        free(s->priv->pod_at);
        free(s->priv);
    }
    free(s->policy.tenants);
    free(s->policy.profiles);
    free(s->policy.queues);
    free(s->policy.podgroups);
    free(s->policy.priority_classes);
    free(s->policy.rquotas);
    free(s->policy.limit_ranges);
    free(s->policy.vgpu_classes);
    free(s->policy.templates);
    free(s->policy.nodes);
    free(s->policy.taints);
    free(s->pods);
    free(s->sim.cards);
    free(s->sim.failures);
    free(s);
}

/* group_ok() - whether apiVersion @api ("group/version", or "version" for the core group) is of
 * one of @groups. */
static bool api_ok(const char *api, const char *apis)
{
    for (const char *g = apis;;) {
        const char *bar = strchr(g, '|');
        size_t n = bar ? (size_t)(bar - g) : strlen(g);
        if (n == strlen(api) && strncmp(g, api, n) == 0)
            return true;
        if (!bar)
            return false;
        g = bar + 1;
    }
}

static int read_list(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root);

#define NKINDS(a) ((int)(sizeof(a) / sizeof(a[0])))

/* other_kind() - a kind no reader takes: skipped when inert, otherwise an error saying what to
 * write (a workload's pods) or which kind was meant. */
static int other_kind(struct gs__yctx *c, yaml_node_t *kind, const char *k)
{
    char buf[GS__YAML_SHOW_BUF];
    const char *names[NKINDS(kinds_read)];
    for (int i = 0; i < NKINDS(kinds_inert); i++)
        if (strcmp(k, kinds_inert[i]) == 0) {
            gs__yaml_warn(c, kind, "kind %s has no bearing on scheduling; skipped", k);
            return 0;
        }
    for (int i = 0; i < NKINDS(kinds_workload); i++)
        if (strcmp(k, kinds_workload[i]) == 0)
            return gs__yaml_err(
                c, kind,
                "kind %s is not expanded into pods by gpusched: write each pod it "
                "would create as a Pod document (a gang as a PodGroup and its Pods)",
                k);
    for (int i = 0; i < NKINDS(kinds_instead); i++)
        if (strcmp(k, kinds_instead[i].kind) == 0)
            return gs__yaml_err(c, kind, "kind %s is not read: write %s", k,
                                kinds_instead[i].instead);
    for (int i = 0; i < NKINDS(kinds_kueue); i++)
        if (strcmp(k, kinds_kueue[i].kind) == 0)
            return gs__yaml_err(c, kind,
                                "kind %s (Kueue) is not read: write %s (docs/queues.md, "
                                "\"Coming from Kueue\")",
                                k, kinds_kueue[i].instead);
    for (int i = 0; i < NKINDS(kinds_read); i++)
        names[i] = kinds_read[i].kind;
    int best = gs__yaml_nearest(kind, names, NKINDS(kinds_read));
    return gs__yaml_err(c, kind, "kind %s is not a kind gpusched reads%s%s%s",
                        gs__yaml_show(kind, buf), best >= 0 ? " (did you mean \"" : "",
                        best >= 0 ? names[best] : "", best >= 0 ? "\"?)" : "");
}

static int dispatch_item(struct gs__yctx *c, int idx, yaml_node_t *item, void *arg);

/* dispatch() - hand document (or List item) @root to the reader of its kind. */
static int dispatch(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root, bool in_list)
{
    char buf[GS__YAML_SHOW_BUF];
    yaml_node_t *kind = NULL, *api = NULL;
    /* An empty document ("---" at the end, as helm template writes) is skipped, as kubectl does. */
    if (!in_list && gs__yaml_is_null(root))
        return 0;
    if (root->type != YAML_MAPPING_NODE)
        return gs__yaml_type_error(c, root, "a document", "a mapping with a kind");
    int rc = gs__yaml_map_get(c, root, "kind", &kind);
    if (!rc)
        rc = gs__yaml_map_get(c, root, "apiVersion", &api);
    if (rc)
        return rc;
    const char *k = kind ? gs__yaml_str(kind) : NULL, *a = api ? gs__yaml_str(api) : NULL;
    if (!kind)
        return gs__yaml_err(c, root, "missing field \"kind\"");
    if (!k || !*k)
        return gs__yaml_type_error(c, kind, "kind", "a kind name");
    if (api && !a)
        return gs__yaml_type_error(c, api, "apiVersion", "a string");
    if (!in_list &&
        (strcmp(k, "List") == 0 || (strlen(k) > 4 && !strcmp(k + strlen(k) - 4, "List"))))
        return read_list(c, L, root);
    for (size_t i = 0; i < sizeof(kinds_read) / sizeof(kinds_read[0]); i++) {
        if (strcmp(k, kinds_read[i].kind) != 0)
            continue;
        if (!a)
            gs__yaml_warn(c, root, "kind %s without apiVersion; read as %s", k, k);
        else if (!api_ok(a, kinds_read[i].apis)) {
            return gs__yaml_err(c, api,
                                "kind %s of apiVersion %s is not the %s gpusched reads (%s)", k,
                                gs__yaml_show(api, buf), k, kinds_read[i].apis);
        }
        /* an object kubectl applies, as kubectl would read it: a plain 010 is 8 there, yes a
         * boolean (Cluster and Simulation are gpusched's own, read by no one else) */
        size_t left = 2 * L->len + 4096; /* aliases followed: bounded as a pasted body is */
        if (kinds_read[i].fn != gs__scn_cluster && kinds_read[i].fn != gs__scn_simulation &&
            (rc = gs__yaml_manifest_check(c, root, &left)))
            return rc;
        /* a pod's reader turns what it would skip into an error of its own, "refused rather
         * than ignored" (scenario_pod.c); every other reader refuses an unknown key itself */
        c->lenient = kinds_read[i].fn == gs__scn_pod;
        rc = kinds_read[i].fn(c, L, root);
        c->lenient = false;
        return rc;
    }
    if (strcmp(k, "KubeSchedulerConfiguration") == 0) {
        struct gs_policy *pol = &L->s->policy;
        char at[sizeof(pol->scores_src.file) + 32];
        if (pol->has_scores)
            return gs__yaml_err(c, root,
                                "a second KubeSchedulerConfiguration (the first at %s): one "
                                "profile schedules the scenario's pods",
                                gs__scn_where(&pol->scores_src, at, sizeof(at)));
        rc = gs__kubesched_policy(c, root, pol);
        if (!rc)
            gs__scn_src(c, L, root, &pol->scores_src);
        return rc;
    }
    for (size_t i = 0; i < sizeof(kinds_elsewhere) / sizeof(kinds_elsewhere[0]); i++)
        if (strcmp(k, kinds_elsewhere[i]) == 0) {
            gs__yaml_warn(c, kind, "kind %s is accepted but not interpreted by the scenario", k);
            if (!L->s->foreign_kind[0] && (!strcmp(k, "DaemonConfig") || !strcmp(k, "RateCard"))) {
                snprintf(L->s->foreign_kind, sizeof(L->s->foreign_kind), "%s", k);
                gs__scn_src(c, L, root, &L->s->foreign_src);
            }
            return 0;
        }
    return other_kind(c, kind, k);
}

static int dispatch_item(struct gs__yctx *c, int idx, yaml_node_t *item, void *arg)
{
    (void)idx; /* a gs__yaml_item_fn */
    return dispatch(c, arg, item, true);
}

static int list_field(struct gs__yctx *c, int field, yaml_node_t *val, void *arg)
{
    /* apiVersion and kind were read; metadata (resourceVersion) decides nothing */
    return field == 3 ? gs__yaml_each_item(c, val, "items", dispatch_item, arg) : 0;
}

/* A List (kubectl get pods -o yaml) or PodList: each item is read as a document of its own. Its
 * keys are checked as any kind's: a misspelt or repeated one is an error, not skipped. */
static int read_list(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root)
{
    static const char *const keys[] = {"apiVersion", "kind", "metadata", "items"};
    return gs__yaml_each_field(c, root, keys, 4, "List", list_field, L);
}

static int read_document(struct gs__yctx *c, yaml_node_t *root, void *arg)
{
    ((struct gs__scn_load *)arg)->ndocs += root && !gs__yaml_is_null(root); /* "---" alone: none */
    return dispatch(c, arg, root, false);
}

/* short_file() - @path as records keep it: its tail, marked, when it does not fit. */
static void short_file(const char *path, char *dst, size_t size)
{
    size_t len = strlen(path);
    if (len < size)
        memcpy(dst, path, len + 1);
    else
        snprintf(dst, size, "...%s", path + len - (size - 4));
}

/* has_range() - whether line @p (up to a newline) holds "{" and then a "[digits-digits]". */
static bool has_range(const char *p, const char *end)
{
    const char *brace = NULL;
    for (; p < end && *p != '\n'; p++) {
        brace = brace ? brace : (*p == '{' ? p : NULL);
        if (!brace || *p != '[' || p[1] < '0' || p[1] > '9')
            continue;
        const char *q = p + 1;
        while (q < end && *q >= '0' && *q <= '9')
            q++;
        if (q < end && *q == '-' && q + 1 < end && q[1] >= '0' && q[1] <= '9')
            return true;
    }
    return false;
}

/*
 * range_hint() - after a syntax error: a node name range in a flow mapping, {name: a1-n[01-08]},
 * is not valid YAML ('[' starts a flow sequence there), an easy slip worth naming.
 */
static void range_hint(const char *name, const unsigned char *buf, size_t len, struct gs_diag *d)
{
    size_t n = strlen(name), line = 0, used = strlen(d->msg);
    if (strncmp(d->msg, name, n) != 0 || d->msg[n] != ':' || !strstr(d->msg, "YAML error"))
        return;
    for (const char *p = d->msg + n + 1; *p >= '0' && *p <= '9'; p++)
        line = line * 10 + (size_t)(*p - '0');
    const char *p = (const char *)buf, *end = p + len;
    for (size_t l = 1; l < line && p < end; p++)
        l += *p == '\n';
    if (line && has_range(p, end))
        snprintf(d->msg + used, sizeof(d->msg) - used,
                 "; a node name range inside {...} must be quoted: name: \"a1-n[01-08]\"");
}

int gs_scenario_load(struct gs_scenario *s, const char *path, struct gs_diag *d)
{
    struct gs__scn_load L = {.s = s};
    if (!s || !path)
        return gs_diag_error(d, "gs_scenario_load: scenario and path must not be NULL");
    if (!gs__scn_priv(s))
        return gs_diag_error_code(d, -ENOMEM, "%s: out of memory", path);
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    if (name != path && gs__scn_priv(s)->stdin_read)
        return gs_diag_error(d, "-: standard input is given twice: it is read once");
    gs__scn_priv(s)->stdin_read |= name != path;
    unsigned char *buf;
    int rc = gs__yaml_read(path, true, GS_SCN_FILE_MAX_BYTES, "too large for a scenario file", &buf,
                           &L.len, d);
    if (rc == -EINVAL)
        rc = -E2BIG;
    if (rc)
        return rc;
    L.buf = buf;
    short_file(name, L.file, sizeof(L.file));
    struct gs__yctx proto = {.path = name, .d = d};
    rc = gs__yaml_stream_documents(&proto, buf, L.len, GS_SCN_MAX_DEPTH, GS_SCN_DOC_NODES_MAX,
                                   read_document, &L);
    if (rc == -EINVAL && d)
        range_hint(name, buf, L.len, d);
    free(buf);
    if (!rc && L.ndocs == 0) /* a file given that says nothing is more likely a mistake */
        rc = gs_diag_error(
            d, "%s: no YAML document in it (empty, comments only, or empty documents)", name);
    return rc;
}

/* The key of an ns_tenant value: tenant * GS_SCN_NAMESPACES + the namespace's place. */
void gs__scn_ns_key(const void *ctx, uint32_t v, const char **ns, const char **name)
{
    const struct gs_scenario *s = ctx;
    *ns = "";
    *name = s->policy.tenants[v / GS_SCN_NAMESPACES].namespaces[v % GS_SCN_NAMESPACES];
}

int gs_scenario_tenant_of(const struct gs_scenario *s, const char *ns)
{
    const struct gs_scn_priv *p = s->priv;
    if (p && p->ns_tenant_for == s->policy.ntenants) {
        long v = gs__nidx_find(&p->ns_tenant, gs__nidx_hash("", ns), gs__scn_ns_key, s, "", ns);
        return v < 0 ? -ENOENT : (int)(v / GS_SCN_NAMESPACES);
    }
    for (size_t i = 0; i < s->policy.ntenants; i++) /* not resolved since the tenants changed */
        for (int k = 0; k < s->policy.tenants[i].nnamespaces && k < GS_SCN_NAMESPACES; k++)
            if (strcmp(s->policy.tenants[i].namespaces[k], ns) == 0)
                return (int)i;
    return -ENOENT;
}
