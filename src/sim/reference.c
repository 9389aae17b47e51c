/*
 * Recovering a reference run's tie-break order from its placements.
 *
 * The FGD study's simulator breaks ties between equally scored nodes by a random permutation of
 * the nodes drawn from Go's math/rand, which is not recorded. Its placements are: wherever several
 * nodes share the best score, the node it chose ranks before the others. Replaying its decisions
 * collects these constraints; any order that satisfies them all makes every one of its decisions
 * again, which separates the policy logic (ours to compare) from its random draws.
 */
#include "gpusched/sim.h"

#include "gpusched/diag.h"
#include "gpusched/sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define REF_NODES_MAX 20000 /* the constraint matrix is n x n bits */

struct order {
    size_t n;
    uint64_t *before; /* bit (a, b): a must rank before b */
    size_t words;     /* per row */
    size_t edges;
};

static void add_edge(struct order *o, size_t a, size_t b)
{
    uint64_t *w = &o->before[a * o->words + b / 64];
    if (!(*w & (1ULL << (b % 64)))) {
        *w |= 1ULL << (b % 64);
        o->edges++;
    }
}

/* Score every node; add "chosen before each other best node"; bind on the chosen node. */
static int follow_one(struct gs_sched *s, struct order *o, const struct gs_trace_pod *pod,
                      int32_t ref, int64_t *score, const char *where, struct gs_diag *d)
{
    struct gs_diag why;
    int64_t best = -1;
    for (size_t i = 0; i < o->n; i++) {
        score[i] = gs_sched_score_node(s, &pod->req, i, &why);
        if (score[i] < 0)
            return gs_diag_error_code(d, (int)score[i], "pod %s: %s", pod->name, why.msg);
        if (score[i] > best)
            best = score[i];
    }
    if (ref < 0)
        return 0; /* the reference could not place it; nothing to learn */
    if (score[ref] < 2 || score[ref] != best)
        return gs_diag_error(d, "%s (pod %s): the reference's node is not among the best here",
                             where, pod->name);
    for (size_t i = 0; i < o->n; i++)
        if (score[i] == best && i != (size_t)ref)
            add_edge(o, (size_t)ref, i);
    struct gs_placement pl;
    int rc = gs_sched_bind_node(s, &pod->req, (size_t)ref, &pl, &why);
    return rc ? gs_diag_error_code(d, rc < 0 ? rc : -EINVAL, "pod %s: %s", pod->name, why.msg) : 0;
}

static int follow_policy(const struct gs_trace_node *nodes, const struct gs_trace_pod *pods,
                         size_t npods, const struct gs_sequence *seq, int col,
                         const struct gs_profile *prof, struct order *o, struct gs_diag *d)
{
    struct gs_cluster *c = NULL;
    struct gs_sched *s = NULL;
    int64_t *score = malloc(o->n * sizeof(*score));
    struct gs_pod_req *w = malloc(npods * sizeof(*w));
    int rc = score && w ? 0 : -ENOMEM;
    for (size_t i = 0; !rc && i < npods; i++)
        w[i] = pods[i].req;
    if (!rc)
        rc = gs_trace_build_cluster(nodes, o->n, &c, d);
    if (!rc)
        rc = gs_sched_new(c, prof, 0, &s, d);
    if (!rc)
        rc = gs_sched_set_workload(s, w, npods);
    char where[96];
    for (size_t i = 0; !rc && i < seq->n; i++) {
        snprintf(where, sizeof(where), "row %zu, column peer_%s", i + 1, seq->peer_policy[col]);
        rc = follow_one(s, o, &pods[seq->pod[i]], seq->peer[i * (size_t)seq->npeers + (size_t)col],
                        score, where, d);
    }
    gs_sched_free(s);
    gs_cluster_free(c);
    free(score);
    free(w);
    return rc;
}

/* Kahn's algorithm, the lowest node index first among those free to go. O(n^2 / 64) per step. */
static int topo_sort(const struct order *o, uint32_t *prio)
{
    size_t n = o->n;
    uint32_t *indeg = calloc(n, sizeof(*indeg));
    char *done = calloc(n, 1);
    if (!indeg || !done) {
        free(indeg);
        free(done);
        return -ENOMEM;
    }
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++)
            indeg[b] += (o->before[a * o->words + b / 64] >> (b % 64)) & 1;
    size_t rank = 0;
    for (; rank < n; rank++) {
        size_t pick = n;
        for (size_t i = 0; i < n && pick == n; i++)
            if (!done[i] && indeg[i] == 0)
                pick = i;
        if (pick == n)
            break; /* a cycle: the constraints conflict */
        done[pick] = 1;
        prio[pick] = (uint32_t)rank;
        for (size_t b = 0; b < n; b++)
            indeg[b] -= (o->before[pick * o->words + b / 64] >> (b % 64)) & 1;
    }
    free(indeg);
    free(done);
    return rank == n ? 0 : -EINVAL;
}

int gs_sim_reference_order(const struct gs_trace_node *nodes, size_t nnodes,
                           const struct gs_trace_pod *pods, size_t npods,
                           const struct gs_sequence *seq, uint32_t **prio, size_t *constraints,
                           int *policies, struct gs_diag *d)
{
    if (nnodes > REF_NODES_MAX)
        return gs_diag_error_code(d, -E2BIG, "more than %d nodes: no reference order",
                                  REF_NODES_MAX);
    struct order o = {.n = nnodes, .words = (nnodes + 63) / 64};
    o.before = calloc(nnodes * o.words + 1, sizeof(*o.before));
    uint32_t *p = malloc((nnodes + 1) * sizeof(*p));
    int rc = o.before && p ? 0 : -ENOMEM, used = 0;
    for (const char *const *name = gs_policy_names(); !rc && *name; name++) {
        int col = -1;
        for (int k = 0; k < seq->npeers; k++)
            if (strcasecmp(seq->peer_policy[k], *name) == 0)
                col = k;
        if (col < 0 || strcmp(*name, "random") == 0) /* random draws per pod, not by rank */
            continue;
        struct gs_profile *prof;
        rc = gs_profile_for_policy(*name, &prof, d);
        if (!rc)
            rc = follow_policy(nodes, pods, npods, seq, col, prof, &o, d);
        gs_profile_free(prof);
        used++;
    }
    if (!rc && used == 0)
        rc = gs_diag_error(d, "the sequence has no reference placements of a ranked policy");
    if (!rc && (rc = topo_sort(&o, p)) == -EINVAL)
        gs_diag_error(d, "the reference placements contradict each other: no single node order");
    free(o.before);
    if (rc) {
        free(p);
        return rc;
    }
    *prio = p;
    *constraints = o.edges;
    *policies = used;
    return 0;
}
