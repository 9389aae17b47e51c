/* Profiles, the plugin registry and the named placement policies. */
#include "sched_impl.h"

#include "gpusched/diag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ep_names[GS_EP_COUNT] = {
    "queueSort", "preFilter", "filter", "postFilter", "score", "reserve",
};

const char *gs_ext_point_name(enum gs_ext_point ep)
{
    return (unsigned)ep < GS_EP_COUNT ? ep_names[ep] : NULL;
}

int gs_ext_point_find(const char *name)
{
    for (int i = 0; i < GS_EP_COUNT; i++)
        if (strcmp(ep_names[i], name) == 0)
            return i;
    return -ENOENT;
}

int gs_plugin_count(void)
{
    int n = 0;
    while (gs__plugins[n])
        n++;
    return n;
}

int gs_plugin_find(const char *name)
{
    for (int i = 0; gs__plugins[i]; i++)
        if (strcmp(gs__plugins[i]->name, name) == 0)
            return i;
    return -ENOENT;
}

const char *gs_plugin_name(int id)
{
    return id >= 0 && id < gs_plugin_count() ? gs__plugins[id]->name : NULL;
}

unsigned gs_plugin_points(int id)
{
    return id >= 0 && id < gs_plugin_count() ? gs__plugins[id]->points : 0;
}

int gs_plugin_scores_states(int id)
{
    return id >= 0 && id < gs_plugin_count() && gs__plugins[id]->score != NULL;
}

int gs_plugin_places(int id)
{
    return id >= 0 && id < gs_plugin_count() && gs__plugins[id]->place != NULL;
}

int gs_profile_new(const char *scheduler_name, struct gs_profile **out)
{
    struct gs_profile *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    snprintf(p->name, sizeof(p->name), "%s", scheduler_name ? scheduler_name : "gpusched");
    *out = p;
    return 0;
}

void gs_profile_free(struct gs_profile *p)
{
    free(p);
}

const char *gs_profile_name(const struct gs_profile *p)
{
    return p->name;
}

int gs_profile_enable(struct gs_profile *p, enum gs_ext_point ep, int id, int weight,
                      struct gs_diag *d)
{
    if ((unsigned)ep >= GS_EP_COUNT)
        return gs_diag_error(d, "unknown extension point %d", (int)ep);
    if (!(gs_plugin_points(id) & (1u << ep)))
        return gs_diag_error(d, "plugin %s does not implement %s",
                             gs_plugin_name(id) ? gs_plugin_name(id) : "?", ep_names[ep]);
    if (weight < 1 || weight > GS_WEIGHT_MAX)
        return gs_diag_error(d, "plugin %s: weight %d outside 1..%d", gs_plugin_name(id), weight,
                             GS_WEIGHT_MAX);
    for (int i = 0; i < p->n[ep]; i++)
        if (p->id[ep][i] == id) {
            p->weight[ep][i] = weight;
            return 0;
        }
    if (p->n[ep] >= GS_PROFILE_SLOTS)
        return gs_diag_error_code(d, -E2BIG, "more than %d plugins at %s", GS_PROFILE_SLOTS,
                                  ep_names[ep]);
    p->id[ep][p->n[ep]] = id;
    p->weight[ep][p->n[ep]] = weight;
    p->n[ep]++;
    return 0;
}

void gs_profile_disable(struct gs_profile *p, enum gs_ext_point ep, int id)
{
    if ((unsigned)ep >= GS_EP_COUNT)
        return;
    int k = 0;
    for (int i = 0; i < p->n[ep]; i++) {
        if (id >= 0 && p->id[ep][i] != id) {
            p->id[ep][k] = p->id[ep][i];
            p->weight[ep][k] = p->weight[ep][i];
            k++;
        }
    }
    p->n[ep] = k;
}

int gs_profile_count(const struct gs_profile *p, enum gs_ext_point ep)
{
    return (unsigned)ep < GS_EP_COUNT ? p->n[ep] : 0;
}

int gs_profile_at(const struct gs_profile *p, enum gs_ext_point ep, int i, int *weight)
{
    if ((unsigned)ep >= GS_EP_COUNT || i < 0 || i >= p->n[ep])
        return -ENOENT;
    if (weight)
        *weight = p->weight[ep][i];
    return p->id[ep][i];
}

/* policy name -> score plugins and weights; the rest of the profile is common. */
static const struct {
    const char *policy;
    const char *score[3];
    int weight[3];
} policies[] = {
    {"gpusched", {"FGD", "StrandedShare", "ExpectedWaste"}, {130, 1, 50}},
    {"fgd", {"FGD", NULL}, {1, 0}},
    {"bestfit", {"BestFit", NULL}, {1, 0}},
    {"gpupacking", {"GpuPacking", NULL}, {1, 0}},
    {"gpuclustering", {"GpuClustering", NULL}, {1, 0}},
    {"dotprod", {"DotProd", NULL}, {1, 0}},
    {"random", {"Random", NULL}, {1, 0}},
    /* the multi-tenant scheduler's (seed 000 §3.2); not a trace replay policy */
    {"placement", {"GPUBinPacking", "TopologyScore", "FairnessScore"}, {8, 6, 4}},
};

#define NPOLICIES (sizeof(policies) / sizeof(policies[0]) - 1)

const char *const *gs_policy_names(void)
{
    static const char *names[NPOLICIES + 1];
    for (size_t i = 0; i < NPOLICIES; i++)
        names[i] = policies[i].policy;
    names[NPOLICIES] = NULL;
    return names;
}

static int enable_named(struct gs_profile *p, enum gs_ext_point ep, const char *name, int weight,
                        struct gs_diag *d)
{
    int id = gs_plugin_find(name);
    if (id < 0)
        return gs_diag_error(d, "internal: plugin %s missing", name);
    return gs_profile_enable(p, ep, id, weight, d);
}

/* The profile of policies[@k], named @name. */
static int profile_of(size_t k, const char *name, struct gs_profile **out, struct gs_diag *d)
{
    struct gs_profile *p;
    if (gs_profile_new(name, &p) < 0)
        return -ENOMEM;
    int rc = enable_named(p, GS_EP_QUEUE_SORT, "GPUQueueSort", 1, d);
    if (!rc)
        rc = enable_named(p, GS_EP_PRE_FILTER, "GPUAvailability", 1, d);
    if (!rc)
        rc = enable_named(p, GS_EP_FILTER, "NodeGPUFilter", 1, d);
    for (int i = 0; !rc && i < 3 && policies[k].score[i]; i++)
        rc = enable_named(p, GS_EP_SCORE, policies[k].score[i], policies[k].weight[i], d);
    if (!rc)
        rc = enable_named(p, GS_EP_RESERVE, "NodeGPUReserve", 1, d);
    if (rc) {
        gs_profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int gs_profile_for_policy(const char *policy, struct gs_profile **out, struct gs_diag *d)
{
    size_t k;
    for (k = 0; k < NPOLICIES; k++)
        if (strcmp(policies[k].policy, policy) == 0)
            break;
    if (k == NPOLICIES)
        return gs_diag_error(d,
                             "unknown policy \"%s\" (known: gpusched, fgd, bestfit, "
                             "gpupacking, gpuclustering, dotprod, random)",
                             policy);
    return profile_of(k, policy, out, d);
}

int gs_profile_new_default(const char *scheduler_name, struct gs_profile **out, struct gs_diag *d)
{
    return profile_of(0, scheduler_name, out, d);
}

int gs_profile_new_placement(const char *scheduler_name, struct gs_profile **out, struct gs_diag *d)
{
    return profile_of(NPOLICIES, scheduler_name, out, d);
}

int gs_queue_less(int32_t a_prio, uint64_t a_seq, int32_t b_prio, uint64_t b_seq)
{
    if (a_prio != b_prio)
        return a_prio > b_prio;
    return a_seq < b_seq;
}
