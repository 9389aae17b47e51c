/*
 * KubeSchedulerConfiguration loader; the contract is in gpusched/config.h.
 *
 * The file is read and checked by the shared helpers of yamlutil.h (size cap, syntax and depth
 * pass, one tree per document); this file walks the tree, which makes "disabled before enabled"
 * and finding a profile's schedulerName before its plugins simple.
 */
#include "gpusched/config.h"

#include "gpusched/diag.h"
#include "gpusched/policy.h"
#include "gpusched/sched.h"
#include "kubesched_impl.h"
#include "yamlutil.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define API_GROUP    "kubescheduler.config.k8s.io/"
#define KSC_KIND     "KubeSchedulerConfiguration"
#define DEFAULT_NAME "default-scheduler"
#define WHERE_MAX    160 /* "profiles[N].plugins.postFilter.disabled[N]" with room to spare */

/* The interpreted keys come first so their index is the enum value; the rest are kube-scheduler's
 * process settings (check_inert()), and extenders (check_extender()). */
enum {
    TOP_API_VERSION,
    TOP_KIND,
    TOP_PROFILES,
    TOP_PERCENTAGE,
    TOP_EXTENDERS,
    TOP_PARALLELISM,
    TOP_INITIAL_BACKOFF,
    TOP_MAX_BACKOFF,
    TOP_LEADER,
    TOP_CLIENT,
    TOP_HEALTHZ,
    TOP_METRICS,
    TOP_PROFILING, /* and the booleans after it */
};
static const char *const top_keys[] = {
    "apiVersion",
    "kind",
    "profiles",
    "percentageOfNodesToScore",
    "extenders",
    "parallelism",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "leaderElection",
    "clientConnection",
    "healthzBindAddress",
    "metricsBindAddress",
    "enableProfiling",
    "enableContentionProfiling",
    "delayCacheUntilActive",
};

enum { PROFILE_NAME, PROFILE_PLUGINS, PROFILE_PLUGIN_CONFIG, PROFILE_PERCENTAGE };
static const char *const profile_keys[] = {
    "schedulerName",
    "plugins",
    "pluginConfig",
    "percentageOfNodesToScore",
};

/* Every extension point kube-scheduler has; gs_ext_point_find() tells which gpusched has. */
static const char *const point_keys[] = {
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",   "score",
    "reserve",    "permit",    "preBind",   "bind",   "postBind",   "multiPoint",
};

enum { LIST_ENABLED, LIST_DISABLED };
static const char *const list_keys[] = {"enabled", "disabled"};

enum { ENTRY_NAME, ENTRY_WEIGHT };
static const char *const entry_keys[] = {"name", "weight"};

/* What the whole file has given so far. */
struct sel {
    const char *want;        /* schedulerName asked for, NULL = first */
    struct gs_profile *kept; /* the selected profile, once found */
    size_t kept_line;
    int nksc;      /* KubeSchedulerConfiguration documents seen */
    int placement; /* for the multi-tenant scheduler (gs_profile_new_placement()) */
    int nprofiles; /* profiles seen */
    int gpuschedd; /* the document's extender is gpuschedd (check_extender()) */
};

/* One extension point of one profile. */
struct point {
    const char *name; /* as the file spells it */
    int ep;           /* enum gs_ext_point, or negative when gpusched has no such point */
    const char *where;
    struct gs_profile *p;
    int placement;
};

/* A profile, or its plugins mapping, being walked. */
struct scope {
    const char *where;
    struct gs_profile *p;
    int placement;
    struct sel *s;
};

struct top {
    yaml_node_t *api, *kind, *profiles;
    struct sel *s;
};

struct lists {
    yaml_node_t *enabled, *disabled;
};

struct entry {
    yaml_node_t *name, *weight;
};

/*
 * parse_weight() - an entry's weight. kube-scheduler decodes it as an integer everywhere but uses
 * it only at score, so only there is the range checked and the value kept (*@out = 1 elsewhere).
 */
static int parse_weight(struct gs__yctx *c, const yaml_node_t *n, const char *where, bool at_score,
                        int *out)
{
    char buf[GS__YAML_SHOW_BUF];
    const char *s = gs__yaml_str(n);
    long long v = 0;
    bool is_int = s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && gs__yaml_parse_int(s, &v);
    if (is_int && !at_score) {
        *out = 1;
        return 0;
    }
    if (is_int && v >= 1 && v <= GS_WEIGHT_MAX) {
        *out = (int)v;
        return 0;
    }
    if (at_score)
        return gs__yaml_err(c, n, "%s.weight must be an integer 1..%d, not %s", where,
                            GS_WEIGHT_MAX, gs__yaml_show(n, buf));
    return gs__yaml_err(c, n, "%s.weight must be an integer, not %s", where, gs__yaml_show(n, buf));
}

static int entry_field(struct gs__yctx *c, int field, yaml_node_t *val, void *arg)
{
    (void)c; /* a field_fn; this level needs no context */
    struct entry *e = arg;
    if (field == ENTRY_NAME)
        e->name = val;
    else
        e->weight = val;
    return 0;
}

/* parse_entry() - a {name, weight} plugin entry; on success e->name is a non-empty string. */
static int parse_entry(struct gs__yctx *c, yaml_node_t *n, const char *where, struct entry *e)
{
    e->name = e->weight = NULL;
    if (n->type != YAML_MAPPING_NODE)
        return gs__yaml_type_error(c, n, where, "a mapping");
    int rc =
        gs__yaml_each_field(c, n, entry_keys, GS__YAML_NKEYS(entry_keys), where, entry_field, e);
    if (rc)
        return rc;
    if (!e->name)
        return gs__yaml_err(c, n, "%s has no name", where);
    char buf[GS__YAML_SHOW_BUF];
    const char *s = gs__yaml_str(e->name);
    if (!s || !*s || gs__yaml_is_null(e->name))
        return gs__yaml_err(c, e->name, "%s.name must be a plugin name, not %s", where,
                            gs__yaml_show(e->name, buf));
    return 0;
}

/* points_str() - the extension points in @mask, comma-separated, into @buf. */
static const char *points_str(unsigned mask, char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int ep = 0; ep < GS_EP_COUNT && k < size; ep++)
        if (mask & (1u << ep))
            k += (size_t)snprintf(buf + k, size - k, "%s%s", k ? ", " : "",
                                  gs_ext_point_name((enum gs_ext_point)ep));
    return buf;
}

/* A plugin gpusched does not build: kube-scheduler's own (VolumeBinding, ImageLocality...) or an
 * out-of-tree one, taken without effect, as the profile places by what gpusched has; a name within
 * two edits of one it builds is a misspelling, refused so a typo cannot change the run unseen.
 * Return: 0 (warned); -EINVAL. */
static int unknown_plugin(struct gs__yctx *c, const struct point *pt, yaml_node_t *name)
{
    const char *known[64];
    int n = 0;
    for (int i = 0; i < gs_plugin_count() && n < 64; i++)
        known[n++] = gs_plugin_name(i);
    char buf[GS__YAML_SHOW_BUF], hint[96];
    if (*gs__yaml_hint(name, known, n, hint, sizeof(hint)))
        return gs__yaml_err(c, name, "plugin %s (%s) is not built in this version of gpusched%s",
                            gs__yaml_show(name, buf), pt->name, hint);
    gs__yaml_warn(c, name, "plugin %s (%s) is not built in this version of gpusched; ignored",
                  gs__yaml_show(name, buf), pt->name);
    return 0;
}

static int enable_entry(struct gs__yctx *c, const struct point *pt, const struct entry *e,
                        const char *where)
{
    char buf[GS__YAML_SHOW_BUF], eps[128];
    int w = 1, rc = e->weight ? parse_weight(c, e->weight, where, pt->ep == GS_EP_SCORE, &w) : 0;
    if (rc)
        return rc;
    if (pt->ep < 0) {
        gs__yaml_warn(c, e->name, "plugin %s (%s): gpusched has no %s extension point; ignored",
                      gs__yaml_show(e->name, buf), pt->name, pt->name);
        return 0;
    }
    int id = gs_plugin_find(gs__yaml_str(e->name));
    if (pt->placement && pt->ep == GS_EP_SCORE && id < 0)
        return gs__yaml_err(c, e->name,
                            "plugin %s is not a score plugin of the multi-tenant scheduler "
                            "(GPUBinPacking, TopologyScore, FairnessScore)",
                            gs__yaml_show(e->name, buf));
    if (pt->placement && pt->ep == GS_EP_SCORE && !gs_plugin_places(id)) {
        gs__yaml_warn(c, e->name,
                      "plugin %s scores the trace replay's node states (gpusched simulate "
                      "--config), not the multi-tenant scheduler's placements; ignored",
                      gs__yaml_show(e->name, buf));
        return 0;
    }
    if (!pt->placement && pt->ep == GS_EP_SCORE && id >= 0 && !gs_plugin_scores_states(id)) {
        gs__yaml_warn(c, e->name,
                      "plugin %s scores the multi-tenant scheduler's placements (gpusched "
                      "simulate --scenario, gpuschedd), not the trace replay's; ignored",
                      gs__yaml_show(e->name, buf));
        return 0;
    }
    if (id < 0)
        return unknown_plugin(c, pt, e->name);
    unsigned mask = gs_plugin_points(id);
    if (!(mask & (1u << pt->ep)))
        return gs__yaml_err(c, e->name, "plugin %s is listed at %s but implements only %s",
                            gs__yaml_show(e->name, buf), pt->name,
                            points_str(mask, eps, sizeof(eps)));
    struct gs_diag why;
    gs_diag_init(&why);
    rc = gs_profile_enable(pt->p, (enum gs_ext_point)pt->ep, id, w, &why);
    if (rc == -ENOMEM)
        return gs_diag_error_code(c->d, -ENOMEM, "%s: out of memory", c->path);
    /* -E2BIG (too many plugins at one point) is a property of the file: report it as bad input. */
    return rc ? gs__yaml_err(c, e->name, "%s", why.msg) : 0;
}

/* kube-scheduler's filters every placement here applies, whatever the profile says: a node's
 * taints (docs/scenario.md), spec.nodeName and nodeSelector (core/fleet.c), CPU and memory. */
static const char *const always_filters[] = {"TaintToleration", "NodeName", "NodeAffinity",
                                             "NodeResourcesFit"};

static int disable_entry(struct gs__yctx *c, const struct point *pt, const struct entry *e,
                         const char *where)
{
    char buf[GS__YAML_SHOW_BUF];
    int w, rc = e->weight ? parse_weight(c, e->weight, where, false, &w) : 0;
    if (rc)
        return rc;
    if (pt->ep < 0) {
        gs__yaml_warn(c, e->name, "plugin %s (%s): gpusched has no %s extension point; ignored",
                      gs__yaml_show(e->name, buf), pt->name, pt->name);
        return 0;
    }
    const char *name = gs__yaml_str(e->name);
    if (!name) /* parse_entry() refused it already */
        return gs__yaml_err(c, e->name, "a plugin without a name");
    for (size_t i = 0; pt->ep == GS_EP_FILTER && i < GS__YAML_NKEYS(always_filters); i++)
        if (strcmp(name, always_filters[i]) == 0)
            gs__yaml_warn(c, e->name,
                          "plugin %s: gpusched's placement always applies it (TaintToleration, "
                          "NodeName, NodeAffinity and NodeResourcesFit); disabling it changes "
                          "kube-scheduler's own filter only",
                          name);
    if (strcmp(name, "*") == 0) {
        gs_profile_disable(pt->p, (enum gs_ext_point)pt->ep, -1);
        return 0;
    }
    /* A name gpusched does not build cannot have been enabled, so there is nothing to remove and
     * nothing worth a warning. */
    int id = gs_plugin_find(name);
    if (id >= 0)
        gs_profile_disable(pt->p, (enum gs_ext_point)pt->ep, id);
    return 0;
}

/* One enabled or disabled list being walked. */
struct list_walk {
    const struct point *pt;
    int list;
    const char *where;
    yaml_node_t *seq; /* the list: kube-scheduler rejects a plugin listed twice in it */
};

static int list_entry(struct gs__yctx *c, int i, yaml_node_t *n, void *arg)
{
    struct list_walk *lw = arg;
    char ew[WHERE_MAX], buf[GS__YAML_SHOW_BUF];
    struct entry e;
    gs__yaml_label(ew, sizeof(ew), "%s[%d]", lw->where, i);
    int rc = parse_entry(c, n, ew, &e);
    if (!rc && gs__yaml_earlier(c, lw->seq, i, "name"))
        rc = gs__yaml_err(c, e.name, "plugin %s is listed twice in %s", gs__yaml_show(e.name, buf),
                          lw->where);
    if (rc)
        return rc;
    return lw->list == LIST_ENABLED ? enable_entry(c, lw->pt, &e, ew)
                                    : disable_entry(c, lw->pt, &e, ew);
}

static int walk_list(struct gs__yctx *c, yaml_node_t *seq, const struct point *pt, int list)
{
    char where[WHERE_MAX];
    struct list_walk lw = {pt, list, where, seq};
    gs__yaml_label(where, sizeof(where), "%s.%s", pt->where, list_keys[list]);
    return seq ? gs__yaml_each_item(c, seq, where, list_entry, &lw) : 0;
}

static int lists_field(struct gs__yctx *c, int field, yaml_node_t *val, void *arg)
{
    (void)c; /* a field_fn; this level needs no context */
    struct lists *l = arg;
    if (field == LIST_ENABLED)
        l->enabled = val;
    else
        l->disabled = val;
    return 0;
}

static int plugins_field(struct gs__yctx *c, int field, yaml_node_t *val, void *arg)
{
    const struct scope *parent = arg;
    char where[WHERE_MAX];
    struct lists l = {NULL, NULL};
    gs__yaml_label(where, sizeof(where), "%s.%s", parent->where, point_keys[field]);
    struct point pt = {point_keys[field], gs_ext_point_find(point_keys[field]), where, parent->p,
                       parent->placement};
    int rc =
        gs__yaml_each_field(c, val, list_keys, GS__YAML_NKEYS(list_keys), where, lists_field, &l);
    /* Disabled first, as kube-scheduler merges them: "disable all, then enable these" works. */
    if (!rc)
        rc = walk_list(c, l.disabled, &pt, LIST_DISABLED);
    if (!rc)
        rc = walk_list(c, l.enabled, &pt, LIST_ENABLED);
    return rc;
}

/* percentageOfNodesToScore below 100 stops kube-scheduler's search early; a simulated pass
 * weighs every feasible node, so a run would not show what such a scheduler picks. */
/* percentageOfNodesToScore: an int32 in 0..100 as kube-scheduler validates it, else refused;
 * any but 100 (every node) warned of, as gpusched weighs every feasible node. */
static int percentage_warn(struct gs__yctx *c, yaml_node_t *val)
{
    char buf[GS__YAML_SHOW_BUF];
    const char *type = gs__yaml_scalar_type(val);
    long long v = 0;
    if (gs__yaml_is_null(val))
        return 0;
    if (!type || strcmp(type, "integer") || !gs__yaml_parse_int(gs__yaml_str(val), &v) || v < 0 ||
        v > 100)
        return gs__yaml_err(c, val, "percentageOfNodesToScore must be an integer in 0..100, not %s",
                            gs__yaml_show(val, buf));
    if (v != 100)
        gs__yaml_warn(c, val,
                      "percentageOfNodesToScore %s: gpusched weighs every feasible node, as "
                      "kube-scheduler does only at 100; ignored",
                      gs__yaml_show(val, buf));
    return 0;
}

/* kube-scheduler's in-tree plugins that take args. */
static const char *const kube_plugins[] = {
    "DefaultPreemption",
    "DynamicResources",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "PodTopologySpread",
    "VolumeBinding",
};

enum { CONFIG_NAME, CONFIG_ARGS };
static const char *const config_keys[] = {"name", "args"};

struct config_walk {
    const struct scope *prof;
    yaml_node_t *seq, *name, *args;
};

static int config_field(struct gs__yctx *c, int field, yaml_node_t *val, void *arg)
{
    (void)c; /* a field_fn; this level needs no context */
    struct config_walk *cw = arg;
    *(field == CONFIG_NAME ? &cw->name : &cw->args) = val;
    return 0;
}

/* config_name() - refuse a pluginConfig name no plugin has, suggesting the nearest. */
static int config_name(struct gs__yctx *c, yaml_node_t *name, const char *where)
{
    const char *known[64];
    char buf[GS__YAML_SHOW_BUF], hint[96];
    int n = 0;
    for (size_t i = 0; i < GS__YAML_NKEYS(kube_plugins); i++)
        known[n++] = kube_plugins[i];
    for (int id = 0; id < gs_plugin_count() && n < GS__YAML_NKEYS(known); id++)
        known[n++] = gs_plugin_name(id);
    return gs__yaml_err(c, name, "%s.name: no plugin %s takes args in gpusched or kube-scheduler%s",
                        where, gs__yaml_show(name, buf),
                        gs__yaml_hint(name, known, n, hint, sizeof(hint)));
}

/*
 * A pluginConfig entry, as kube-scheduler decodes it: {name, args}, one per plugin. gpusched's
 * plugins take no args, and a simulation places pods by gpusched's plugins only, so args for
 * kube-scheduler's own are refused rather than ignored, unless gpuschedd is the extender
 * (deploy/kube-scheduler-extender.yaml): then they are kube-scheduler's, tuned around it.
 */
static int config_item(struct gs__yctx *c, int idx, yaml_node_t *item, void *arg)
{
    struct config_walk *cw = arg;
    char where[WHERE_MAX], what[WHERE_MAX], buf[GS__YAML_SHOW_BUF];
    gs__yaml_label(where, sizeof(where), "%s.pluginConfig[%d]", cw->prof->where, idx);
    cw->name = cw->args = NULL;
    if (item->type != YAML_MAPPING_NODE)
        return gs__yaml_type_error(c, item, where, "a mapping");
    int rc = gs__yaml_each_field(c, item, config_keys, GS__YAML_NKEYS(config_keys), where,
                                 config_field, cw);
    if (rc)
        return rc;
    const char *s = cw->name ? gs__yaml_text(cw->name) : NULL;
    if (!s || !*s)
        return cw->name ? gs__yaml_type_error(c, cw->name, where, "a plugin name")
                        : gs__yaml_err(c, item, "%s has no name", where);
    yaml_node_t *first = gs__yaml_earlier(c, cw->seq, idx, "name");
    if (first)
        return gs__yaml_err(c, cw->name,
                            "%s: a second config for plugin %s (the first is at line %zu)", where,
                            s, (size_t)first->start_mark.line + 1);
    gs__yaml_label(what, sizeof(what), "%s.args", where);
    if (cw->args && !gs__yaml_is_null(cw->args) && cw->args->type != YAML_MAPPING_NODE)
        return gs__yaml_type_error(c, cw->args, what, "a mapping");
    int kube = -1;
    for (int i = 0; i < GS__YAML_NKEYS(kube_plugins); i++)
        if (strcmp(s, kube_plugins[i]) == 0)
            kube = i;
    if (kube < 0 && gs_plugin_find(s) < 0)
        return config_name(c, cw->name, where);
    if (!cw->args || gs__yaml_is_null(cw->args) || gs__yaml_is_empty(cw->args))
        return 0;
    if (kube < 0)
        return gs__yaml_err(c, cw->args,
                            "%s: plugin %s takes no args in gpusched; refused rather than ignored",
                            where, gs__yaml_show(cw->name, buf));
    if (cw->prof->s->gpuschedd)
        return 0;
    return gs__yaml_err(c, cw->args,
                        "%s: args for kube-scheduler's %s are not modelled: a simulation places "
                        "pods by gpusched's plugins (or by gpuschedd as kube-scheduler's "
                        "extender); refused rather than ignored",
                        where, s);
}

static int profile_field(struct gs__yctx *c, int field, yaml_node_t *val, void *arg)
{
    const struct scope *prof = arg;
    char where[WHERE_MAX];
    if (field == PROFILE_PERCENTAGE)
        return percentage_warn(c, val);
    if (field == PROFILE_PLUGIN_CONFIG) {
        struct config_walk cw = {prof, val, NULL, NULL};
        gs__yaml_label(where, sizeof(where), "%s.pluginConfig", prof->where);
        return gs__yaml_each_item(c, val, where, config_item, &cw);
    }
    if (field != PROFILE_PLUGINS) /* schedulerName is read before; the rest is not interpreted */
        return 0;
    gs__yaml_label(where, sizeof(where), "%s.plugins", prof->where);
    struct scope parent = {where, prof->p, prof->placement, prof->s};
    return gs__yaml_each_field(c, val, point_keys, GS__YAML_NKEYS(point_keys), where, plugins_field,
                               &parent);
}

/* profile_name() - the schedulerName of profile mapping @n, or DEFAULT_NAME when absent. */
static int profile_name(struct gs__yctx *c, yaml_node_t *n, const char **name, yaml_node_t **at)
{
    int rc = gs__yaml_map_get(c, n, profile_keys[PROFILE_NAME], at);
    if (rc)
        return rc;
    *name = *at ? gs__yaml_str(*at) : DEFAULT_NAME;
    if (*at && (rc = gs__yaml_not_typed(c, *at, "schedulerName")) != 0)
        return rc;
    if (*at && (!*name || !**name || gs__yaml_is_null(*at)))
        return gs__yaml_type_error(c, *at, "schedulerName", "a non-empty string");
    /* a name goes into reports and CSV columns: letters, digits, '-', '_', '.' only */
    for (const char *p = *at ? *name : ""; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.'))
            return gs__yaml_err(c, *at,
                                "schedulerName may hold letters, digits, '-', '_' and '.' only");
    if (!*at) /* where to point at for a duplicate default name */
        *at = n;
    return 0;
}

static int load_profile(struct gs__yctx *c, yaml_node_t *n, int idx, struct sel *s)
{
    char where[WHERE_MAX], buf[GS__YAML_SHOW_BUF];
    const char *name;
    yaml_node_t *at;
    gs__yaml_label(where, sizeof(where), "profiles[%d]", idx);
    if (n->type != YAML_MAPPING_NODE)
        return gs__yaml_type_error(c, n, where, "a mapping");
    int rc = profile_name(c, n, &name, &at);
    if (rc)
        return rc;
    if (s->kept && strcmp(name, gs_profile_name(s->kept)) == 0)
        return gs__yaml_err(c, at, "a second profile named %s (the first is at line %zu)",
                            at->type == YAML_SCALAR_NODE ? gs__yaml_show(at, buf)
                                                         : "\"" DEFAULT_NAME "\"",
                            s->kept_line);
    bool selected = !s->kept && (!s->want || strcmp(name, s->want) == 0);
    struct gs_profile *p;
    s->nprofiles++;
    if ((s->placement ? gs_profile_new_placement(name, &p, c->d)
                      : gs_profile_new_default(name, &p, c->d)) < 0)
        return gs_diag_error_code(c->d, -ENOMEM, "%s: out of memory", c->path);
    if (strcmp(gs_profile_name(p), name) != 0) { /* the profile stores a bounded name */
        rc = gs__yaml_err(c, at, "schedulerName %s is longer than %zu bytes",
                          gs__yaml_show(at, buf), strlen(gs_profile_name(p)));
        gs_profile_free(p);
        return rc;
    }
    bool quiet = c->quiet;
    struct scope prof = {where, p, s->placement, s};
    c->quiet = !selected;
    rc = gs__yaml_each_field(c, n, profile_keys, GS__YAML_NKEYS(profile_keys), where, profile_field,
                             &prof);
    c->quiet = quiet;
    if (rc || !selected) {
        gs_profile_free(p);
        return rc;
    }
    s->kept = p;
    s->kept_line = n->start_mark.line + 1;
    return 0;
}

static int profile_item(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    return load_profile(c, n, idx, arg);
}

static int load_profiles(struct gs__yctx *c, yaml_node_t *seq, struct sel *s)
{
    if (!seq)
        return 0;
    return gs__yaml_each_item(c, seq, "profiles", profile_item, s);
}

/*
 * check_setting() - one of kube-scheduler's process settings, typed as its strict decoding
 * types it. None moves a pod but the backoff of unschedulable pods, which a simulation does not
 * model: only kube-scheduler's defaults are accepted there.
 */
static int typed_map(struct gs__yctx *c, yaml_node_t *val, const char *where,
                     const char *const *keys, int n, const char *types, yaml_node_t **seen);

static int check_setting(struct gs__yctx *c, int field, yaml_node_t *val)
{
    static const long long backoff_default[] = {1, 10}; /* podInitial.., podMaxBackoffSeconds */
    const char *key = top_keys[field], *type = gs__yaml_scalar_type(val);
    char buf[GS__YAML_SHOW_BUF];
    long long v = 0;
    if (gs__yaml_is_null(val))
        return 0;
    if (field == TOP_HEALTHZ || field == TOP_METRICS)
        return gs__yaml_text(val) ? 0 : gs__yaml_text_error(c, val, key);
    static const char *const client_keys[] = {"kubeconfig", "acceptContentTypes", "contentType",
                                              "qps", "burst"};
    static const char *const leader_keys[] = {"leaderElect",      "leaseDuration", "renewDeadline",
                                              "retryPeriod",      "resourceLock",  "resourceName",
                                              "resourceNamespace"};
    if (field == TOP_CLIENT)
        return typed_map(c, val, key, client_keys, GS__YAML_NKEYS(client_keys), "sssfi", NULL);
    if (field == TOP_LEADER)
        return typed_map(c, val, key, leader_keys, GS__YAML_NKEYS(leader_keys), "bssssss", NULL);
    if (field >= TOP_PROFILING)
        return type && !strcmp(type, "boolean") ? 0
                                                : gs__yaml_type_error(c, val, key, "true or false");
    if (!type || strcmp(type, "integer") || !gs__yaml_parse_int(gs__yaml_str(val), &v) || v < 1 ||
        v > INT32_MAX)
        return gs__yaml_err(c, val, "%s must be a positive integer, not %s", key,
                            gs__yaml_show(val, buf));
    if (field == TOP_PARALLELISM || v == backoff_default[field - TOP_INITIAL_BACKOFF])
        return 0;
    return gs__yaml_err(c, val,
                        "%s %lld: a simulation does not model kube-scheduler's backoff of "
                        "unschedulable pods; only its default %lld is accepted, refused rather "
                        "than ignored",
                        key, v, backoff_default[field - TOP_INITIAL_BACKOFF]);
}

/*
 * kube-scheduler's typed mappings, checked as its strict decoding checks them: each field of
 * @keys typed by the same place in @types: 's' a string, 'i' an integer, 'f' a number, 'b' a
 * boolean, 'm' a mapping (contents not read), 'q' a sequence (contents not read), 'T' a
 * tlsConfig, 'R' a managedResources list (their fields typed in turn). KubeSchedulerConfiguration
 * v1's Extender, ExtenderTLSConfig, ExtenderManagedResource, ClientConnectionConfiguration and
 * LeaderElectionConfiguration (k8s.io/kube-scheduler/config/v1, k8s.io/component-base/config/v1).
 */
struct typed {
    const char *where;
    const char *const *keys;
    const char *types;
    yaml_node_t **seen; /* each field's value, by place (NULL: not wanted) */
};

static const char *const tls_keys[] = {"insecure", "serverName", "certFile", "keyFile",
                                       "caFile",   "certData",   "keyData",  "caData"};
static const char *const res_keys[] = {"name", "ignoredByScheduler"};

static int resource_item(struct gs__yctx *c, int idx, yaml_node_t *item, void *arg)
{
    char where[WHERE_MAX];
    gs__yaml_label(where, sizeof(where), "%s[%d]", (const char *)arg, idx);
    return typed_map(c, item, where, res_keys, 2, "sb", NULL);
}

static int typed_field(struct gs__yctx *c, int field, yaml_node_t *val, void *arg)
{
    struct typed *tw = arg;
    char what[WHERE_MAX];
    const char *type = gs__yaml_scalar_type(val);
    gs__yaml_label(what, sizeof(what), "%s.%s", tw->where, tw->keys[field]);
    if (tw->seen)
        tw->seen[field] = val;
    switch (gs__yaml_is_null(val) ? 'n' : tw->types[field]) {
    case 's':
        return gs__yaml_text(val) ? 0 : gs__yaml_text_error(c, val, what);
    case 'i':
        return type && !strcmp(type, "integer") ? 0
                                                : gs__yaml_type_error(c, val, what, "an integer");
    case 'f':
        return type && (!strcmp(type, "integer") || !strcmp(type, "float"))
                   ? 0
                   : gs__yaml_type_error(c, val, what, "a number");
    case 'b':
        return type && !strcmp(type, "boolean")
                   ? 0
                   : gs__yaml_type_error(c, val, what, "true or false");
    case 'm':
        return val->type == YAML_MAPPING_NODE ? 0 : gs__yaml_type_error(c, val, what, "a mapping");
    case 'q':
        return val->type == YAML_SEQUENCE_NODE ? 0
                                               : gs__yaml_type_error(c, val, what, "a sequence");
    case 'T':
        return typed_map(c, val, what, tls_keys, GS__YAML_NKEYS(tls_keys), "bsssssss", NULL);
    case 'R':
        return gs__yaml_each_item(c, val, what, resource_item, what);
    }
    return 0;
}

static int typed_map(struct gs__yctx *c, yaml_node_t *val, const char *where,
                     const char *const *keys, int n, const char *types, yaml_node_t **seen)
{
    struct typed tw = {where, keys, types, seen};
    if (val->type != YAML_MAPPING_NODE)
        return gs__yaml_type_error(c, val, where, "a mapping");
    return gs__yaml_each_field(c, val, keys, n, where, typed_field, &tw);
}

static const char *const ext_keys[] = {
    "urlPrefix",   "filterVerb", "preemptVerb", "prioritizeVerb",   "bindVerb",         "weight",
    "enableHTTPS", "tlsConfig",  "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable",
};

/*
 * An extender decides placement with kube-scheduler, and a simulation calls none: only gpuschedd's
 * own extender API (a urlPrefix ending in /extender, docs/kubernetes.md) is what a simulation
 * runs, as gpusched's placement. Any other is refused rather than ignored.
 */
static int ext_item(struct gs__yctx *c, int idx, yaml_node_t *item, void *arg)
{
    struct sel *s = arg;
    char where[WHERE_MAX], buf[GS__YAML_SHOW_BUF];
    yaml_node_t *seen[GS__YAML_NKEYS(ext_keys)] = {NULL};
    gs__yaml_label(where, sizeof(where), "extenders[%d]", idx);
    int rc = typed_map(c, item, where, ext_keys, GS__YAML_NKEYS(ext_keys), "sssssibTsbRb", seen);
    if (rc)
        return rc;
    yaml_node_t *url_at = seen[0];
    const char *url = url_at ? gs__yaml_text(url_at) : NULL;
    size_t n = url ? strlen(url) : 0;
    while (n && url[n - 1] == '/')
        n--;
    if (n >= 9 && strncmp(url + n - 9, "/extender", 9) == 0) {
        s->gpuschedd = 1;
        return 0;
    }
    return gs__yaml_err(
        c, url_at ? url_at : item,
        "%s: urlPrefix %s is not gpuschedd's extender (https://HOST:PORT/extender); "
        "a simulation calls no other extender, refused rather than ignored",
        where, url_at ? gs__yaml_show(url_at, buf) : "(none)");
}

static int top_field(struct gs__yctx *c, int field, yaml_node_t *val, void *arg)
{
    struct top *t = arg;
    if (field == TOP_EXTENDERS)
        return gs__yaml_each_item(c, val, "extenders", ext_item, t->s);
    if (field > TOP_EXTENDERS)
        return check_setting(c, field, val);
    if (field == TOP_PERCENTAGE)
        return percentage_warn(c, val);
    if (field == TOP_API_VERSION)
        t->api = val;
    else if (field == TOP_KIND)
        t->kind = val;
    else if (field == TOP_PROFILES)
        t->profiles = val;
    return 0;
}

/*
 * is_ksc() - whether document root @root is a KubeSchedulerConfiguration. Its kind decides; with
 * no kind at all, an apiVersion of the scheduler's group does, so a misspelt "kind" is reported
 * instead of the whole document being skipped as some other kind.
 */
static int is_ksc(struct gs__yctx *c, yaml_node_t *root, bool *yes)
{
    yaml_node_t *kind = NULL, *api = NULL;
    int rc = gs__yaml_map_get(c, root, top_keys[TOP_KIND], &kind);
    if (!rc)
        rc = gs__yaml_map_get(c, root, top_keys[TOP_API_VERSION], &api);
    if (rc)
        return rc;
    const char *k = kind ? gs__yaml_str(kind) : NULL, *a = api ? gs__yaml_str(api) : NULL;
    int group = a && strncmp(a, API_GROUP, strlen(API_GROUP)) == 0;
    char buf[GS__YAML_SHOW_BUF];
    if (k && group && strcmp(k, KSC_KIND) != 0) /* a misspelt kind, not another object */
        return gs__yaml_err(c, kind,
                            "kind %s: the only document of %s* is a " KSC_KIND
                            " (its plugins' args go in pluginConfig)",
                            gs__yaml_show(kind, buf), API_GROUP);
    *yes = k ? strcmp(k, KSC_KIND) == 0 : group;
    return 0;
}

static int check_api(struct gs__yctx *c, yaml_node_t *root, const struct top *t)
{
    char buf[GS__YAML_SHOW_BUF];
    if (!t->kind)
        return gs__yaml_err(c, root, "missing field \"kind\" (want \"" KSC_KIND "\")");
    const char *k = gs__yaml_str(t->kind);
    if (!k || strcmp(k, KSC_KIND) != 0)
        return gs__yaml_err(c, t->kind, "kind must be \"" KSC_KIND "\", not %s",
                            gs__yaml_show(t->kind, buf));
    if (!t->api)
        return gs__yaml_err(c, root, "missing field \"apiVersion\" (want \"" API_GROUP "v1\")");
    const char *a = gs__yaml_str(t->api);
    if (a && strcmp(a, API_GROUP "v1") == 0)
        return 0;
    if (a && (strcmp(a, API_GROUP "v1beta2") == 0 || strcmp(a, API_GROUP "v1beta3") == 0)) {
        gs__yaml_warn(c, t->api, "apiVersion %s is deprecated; use " API_GROUP "v1", a);
        return 0;
    }
    return gs__yaml_err(c, t->api,
                        "unsupported apiVersion %s (want " API_GROUP "v1; v1beta2 and v1beta3 are "
                        "accepted but deprecated)",
                        gs__yaml_show(t->api, buf));
}

static int load_document(struct gs__yctx *c, yaml_node_t *root, void *arg)
{
    struct sel *s = arg;
    struct top t = {NULL, NULL, NULL, s};
    bool yes = false;
    int rc = is_ksc(c, root, &yes);
    if (rc || !yes)
        return rc;
    s->nksc++;
    rc = gs__yaml_each_field(c, root, top_keys, GS__YAML_NKEYS(top_keys), KSC_KIND, top_field, &t);
    if (!rc)
        rc = check_api(c, root, &t);
    if (!rc)
        rc = load_profiles(c, t.profiles, s);
    return rc;
}

int gs_config_load_kubesched(const char *path, const char *scheduler_name, struct gs_profile **out,
                             struct gs_diag *d)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    struct sel s = {scheduler_name, NULL, 0, 0, 0, 0, 0};
    if (!path || !out)
        return gs_diag_error(d, "gs_config_load_kubesched: path and out must not be NULL");
    int rc = gs__yaml_read(path, false, GS_CONFIG_MAX_BYTES, "not a scheduler configuration", &buf,
                           &len, d);
    if (rc)
        return rc;
    struct gs__yctx proto = {.path = path, .d = d};
    rc = gs__yaml_check_syntax(&proto, buf, len, GS_CONFIG_MAX_DEPTH);
    if (!rc)
        rc = gs__yaml_each_document(&proto, buf, len, load_document, &s);
    free(buf);
    if (!rc && !s.kept) {
        if (!s.nksc)
            rc = gs_diag_error(d, "%s: no " KSC_KIND " document", path);
        else if (scheduler_name)
            rc = gs_diag_error(d, "%s: no profile with schedulerName \"%.100s\"", path,
                               scheduler_name);
        else
            rc = gs_diag_error(d, "%s: no profiles in " KSC_KIND, path);
    }
    if (rc) {
        gs_profile_free(s.kept);
        return rc;
    }
    *out = s.kept;
    return 0;
}

/* The multi-tenant scheduler runs its own queue order, filters and reserve: a profile that
 * changes them is warned about, at its document, once per point. */
static int fixed_points(struct gs__yctx *c, yaml_node_t *root, const struct gs_profile *p)
{
    struct gs_profile *def;
    if (gs_profile_new_placement(NULL, &def, c->d) < 0)
        return gs_diag_error_code(c->d, -ENOMEM, "%s: out of memory", c->path);
    for (int ep = 0; ep < GS_EP_COUNT; ep++) {
        int n = gs_profile_count(p, (enum gs_ext_point)ep);
        int same = n == gs_profile_count(def, (enum gs_ext_point)ep);
        for (int i = 0; same && i < n; i++)
            same = gs_profile_at(p, (enum gs_ext_point)ep, i, NULL) ==
                   gs_profile_at(def, (enum gs_ext_point)ep, i, NULL);
        if (!same && ep != GS_EP_SCORE)
            gs__yaml_warn(c, root,
                          "profile %s: the multi-tenant scheduler runs its own %s plugins; only "
                          "its score plugins and weights are interpreted",
                          gs_profile_name(p), gs_ext_point_name((enum gs_ext_point)ep));
    }
    gs_profile_free(def);
    return 0;
}

int gs__kubesched_policy(struct gs__yctx *c, yaml_node_t *root, struct gs_policy *pol)
{
    struct sel s = {NULL, NULL, 0, 0, 1, 0, 0};
    int rc = load_document(c, root, &s);
    if (!rc && !s.kept)
        rc = gs__yaml_err(c, root, KSC_KIND " without profiles");
    if (!rc && s.nprofiles > 1)
        gs__yaml_warn(c, root,
                      "%d profiles: the first, %s, schedules the scenario's pods; the others "
                      "are checked and not run",
                      s.nprofiles, gs_profile_name(s.kept));
    if (!rc)
        rc = fixed_points(c, root, s.kept);
    int n = rc ? 0 : gs_profile_count(s.kept, GS_EP_SCORE);
    for (int i = 0; i < n && i < GS_SCN_SCORES; i++) {
        int w = 0;
        pol->scores[i].plugin = gs_profile_at(s.kept, GS_EP_SCORE, i, &w);
        pol->scores[i].weight = w;
    }
    if (!rc) {
        pol->has_scores = 1;
        pol->nscores = n;
        snprintf(pol->scheduler_name, sizeof(pol->scheduler_name), "%s", gs_profile_name(s.kept));
    }
    gs_profile_free(s.kept);
    return rc;
}
