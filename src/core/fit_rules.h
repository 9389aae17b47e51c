/*
 * The placement rules both of the core's engines apply: the trace replay's (engine.c, over
 * interned node states, and its plugins) and the multi-tenant scheduler's (fleet.c, over cards
 * with modes, and src/core/tenancy). Each is written here once, so the two cannot drift apart;
 * what each engine keeps to itself, and why, is in docs/hacking.md ("Two engines").
 */
#ifndef GS_FIT_RULES_H
#define GS_FIT_RULES_H

#include "gpusched/cluster.h"

#include <stdint.h>
#include <string.h>

/*
 * kube-scheduler's words for a node that lacks a resource, NodeResourcesFit's "Insufficient "
 * followed by the resource's name (pkg/scheduler/framework/plugins/noderesources/fit.go), and the
 * head of its FitError ("0/%d nodes are available", pkg/scheduler/framework/types.go), which
 * takes the cluster's node count as a size_t. Both engines' pending reasons use these texts.
 */
#define GS_WORDS_INSUFFICIENT(resource) "Insufficient " resource
#define GS_WORDS_CPU                    GS_WORDS_INSUFFICIENT("cpu")
#define GS_WORDS_MEMORY                 GS_WORDS_INSUFFICIENT("memory")
#define GS_WORDS_GPU                    GS_WORDS_INSUFFICIENT("nvidia.com/gpu")
#define GS_WORDS_FIT_ERROR              "0/%zu nodes are available"

/*
 * Does @after, the text right after a reason's words inside a pod's reason, end them: one of
 * @stops (NUL-terminated; the text's end counts when the caller lists none), or the reason's full
 * stop, which is the last character or followed by a blank? Not ".shared", which makes
 * "Insufficient nvidia.com/gpu" the words of nvidia.com/gpu.shared. Return: 1 or 0.
 */
static inline int gs__words_end(const char *after, const char *stops)
{
    if (*after == '.')
        return !after[1] || after[1] == ' ';
    return strchr(stops, *after) != NULL;
}

/*
 * Does a pod whose GPU models are @mask (bit m: catalog index m, gs_catalog_at(); 0: any
 * model) allow a node of model @model (0..GS_MODEL_MAX - 1)? Return: 1 yes, 0 no.
 */
static inline int gs__model_allowed(uint32_t mask, int model)
{
    return !mask || (mask & (1u << model)) != 0;
}

/*
 * The @n (>= 0) lowest-indexed cards of @mask (bit i: card i, below GS_GPUS_MAX): what either
 * engine takes of a set of free cards that holds more than a pod's whole cards. Return: that
 * mask; all of @mask when it has fewer than @n cards.
 */
static inline uint32_t gs__cards_lowest(uint32_t mask, int n)
{
    uint32_t m = 0;
    for (int i = 0; i < GS_GPUS_MAX && n > 0; i++)
        if (mask & (1u << i)) {
            m |= 1u << i;
            n--;
        }
    return m;
}

/*
 * Spread of a gang's replicas (TopologyScore's node and az tiers, docs/topology.md): @same (>= 0)
 * of its members already run in the node (or its zone). Return: the score, 0..1000: 1000 for
 * none, 250 less for each, 0 from four on.
 */
static inline int32_t gs__spread_score(int same)
{
    return same >= 4 ? 0 : 1000 - 250 * same;
}

#endif
