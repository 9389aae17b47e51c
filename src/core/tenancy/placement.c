/*
 * Placement: binding a pod to cards and undoing it, the search for the best node (filter and
 * score every node a pod may use, or only those freed since a search of its kind failed), one
 * pod's attempt with preemption or reclaim behind it, and gangs placed all or nothing.
 */
#include "tenancy_impl.h"

#include "../sched_impl.h"
#include "gpusched/diag.h"
#include "gpusched/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int gs__vec_push(struct vec *v, int32_t x)
{
    int32_t *p = gs_grow(v->v, &v->cap, v->n + 1, sizeof(*p), 8);
    if (!p)
        return -ENOMEM;
    v->v = p;
    v->v[v->n++] = x;
    return 0;
}

int gs__tn_log(struct nodelog *l, int32_t node)
{
    if (l->v.n == GS_NODE_LOG_MAX) {
        size_t half = GS_NODE_LOG_MAX / 2;
        memmove(l->v.v, l->v.v + half, (l->v.n - half) * sizeof(*l->v.v));
        l->v.n -= half;
        l->base += half;
    }
    return gs__vec_push(&l->v, node);
}

/* Account a pod arriving on (+1) or leaving (-1) its devices; the fleet is done by the caller.
 * Return: 1 when its gang's running members crossed minMember (their work starts or stops). */
static int account(struct gs_tenancy *t, int32_t pod, int sign, int restore)
{
    struct rpod *p = &t->pods[pod];
    int model = p->fit.ncards > 0 ? gs_fleet_node_model(t->fleet, (size_t)p->node) : -1;
    gs__quota_charge(t, p, model, sign, restore);
    gs__tn_usable_charge(t, p, 1, sign);
    gs__tn_gang_changed(t, p->group);
    gs__tn_gang_changed(t, p->wgroup);
    if (p->group >= 0) {
        struct gang *pg = &t->gangs[p->group];
        int32_t extras = pg->running + pg->done - pg->min;
        pg->running += sign;
        t->extras_gen += sign > 0 && extras >= 0 && gs__tn_gang_elastic(pg);
        t->elastic_running += pg->el ? sign : 0;
        pg->inqueue &= pg->running + pg->done < pg->min; /* phase Running: admitted no more */
    }
    t->running_by_level[p->level] += sign;
    if (p->charged != 1)
        t->borrowed[(size_t)p->tenant * t->nlevels + (size_t)p->level] += sign;
    if (p->wgroup < 0)
        return 0;
    struct gang *g = &t->gangs[p->wgroup];
    int before = g->working + g->done >= g->min;
    g->working += sign;
    return (g->working + g->done >= g->min) != before;
}

int gs__tn_bind(struct gs_tenancy *t, int32_t pod, size_t node, uint32_t mask, struct txn *x)
{
    struct rpod *p = &t->pods[pod];
    int r = gs_fleet_commit(t->fleet, node, &p->fit, mask, pod);
    if (r < 0)
        return r;
    p->node = (int32_t)node;
    p->mask = mask;
    p->state = GS_POD_RUNNING;
    if (pod == t->head) { /* the promise is kept: nothing is held for it any more */
        t->head = -1;
        t->resv_gen++;
    }
    gs__tn_pending_left(t, pod);
    if ((int32_t)node == t->resv_node && t->head >= 0 && !gs__tn_late(t, p) &&
        (gs__tn_walltime(p->sp) == GS_UNSET || t->now + gs__tn_walltime(p->sp) > t->shadow_t))
        t->resv_stale = 1; /* it will still be there when the head was promised the node */
    p->start = t->now;
    if (p->first_start < 0) {
        p->first_start = t->now;
        p->first_in_txn = x != NULL;
    }
    p->reason[0] = 0;
    int crossed = account(t, pod, 1, 0);
    gs__tn_victims_update(t, node);
    if ((x && (r = gs__vec_push(&x->bound, pod)) < 0) ||
        (p->preemptions > 0 && (r = gs__tn_readmitted(t, t->now)) < 0))
        return r;
    gs__tn_work_start(t, pod);
    r = gs__tn_work_retime(t, node);
    return r == 0 && crossed ? gs__tn_work_gang(t, p->wgroup) : r;
}

/* Take a pod off its devices; its expected end goes stale. */
int gs__tn_unplace(struct gs_tenancy *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    gs__tn_work_stop(t, pod);
    int crossed = account(t, pod, -1, 0);
    gs_fleet_release(t->fleet, (size_t)p->node, &p->fit, p->mask, pod);
    gs__tn_victims_update(t, (size_t)p->node);
    p->gen++;
    int r = gs__tn_work_retime(t, (size_t)p->node);
    return r == 0 && crossed ? gs__tn_work_gang(t, p->wgroup) : r;
}

int gs__tn_evict(struct gs_tenancy *t, int32_t pod, struct txn *x)
{
    struct rpod *p = &t->pods[pod];
    int r = gs__tn_unplace(t, pod);
    p->state = GS_POD_PENDING;
    return r < 0 ? r : gs__vec_push(&x->evicted, pod);
}

int gs__tn_rollback(struct gs_tenancy *t, struct txn *x, size_t bound_to, size_t evicted_to)
{
    while (x->bound.n > bound_to) {
        int32_t pod = x->bound.v[--x->bound.n];
        struct rpod *p = &t->pods[pod];
        int r = gs__tn_unplace(t, pod);
        if (r < 0)
            return r;
        p->state = GS_POD_PENDING;
        p->node = -1;
        if (p->first_in_txn) /* it had never run (a node lost counts as a run too) */
            p->first_start = -1;
        p->first_in_txn = 0;
    }
    while (x->evicted.n > evicted_to) {
        int32_t pod = x->evicted.v[--x->evicted.n];
        struct rpod *p = &t->pods[pod];
        int r = gs_fleet_commit(t->fleet, (size_t)p->node, &p->fit, p->mask, pod);
        if (r < 0)
            return r; /* cannot happen: the exact state it left is restored in reverse order */
        p->state = GS_POD_RUNNING;
        p->gen--; /* its expected end is valid again */
        int crossed = account(t, pod, 1, 1);
        gs__tn_victims_update(t, (size_t)p->node);
        if ((r = gs__tn_work_retime(t, (size_t)p->node)) < 0 ||
            (crossed && (r = gs__tn_work_gang(t, p->wgroup)) < 0))
            return r;
    }
    return 0;
}

/*
 * The attempt succeeded: its evictions stand (each victim queues again, its reason naming the
 * pod it made room for) and its decisions go to the driver, evictions first, then binds, each
 * in the order made.
 */
int gs__tn_commit(struct gs_tenancy *t, struct txn *x, int32_t by)
{
    for (size_t i = 0; i < x->evicted.n; i++) {
        int32_t pod = x->evicted.v[i];
        struct rpod *p = &t->pods[pod];
        int reclaim = p->reclaimed;
        struct gs_decision d = {.kind = GS_DECIDE_EVICT,
                                .pod = pod,
                                .node = p->node,
                                .gpu_mask = p->mask,
                                .share_milli = gs__tn_slice_share(t, pod),
                                .by = by,
                                .reclaim = reclaim};
        if (gs__tn_log(&t->rlog, p->node) < 0 || gs__tn_decide(t, &d) < 0)
            return -ENOMEM;
        gs__tn_work_lost(t, pod);
        p->preemptions++;
        p->node = -1;
        gs__say(p->reason, sizeof(p->reason), "%s by %s/%s", reclaim ? "reclaimed" : "preempted",
                t->pods[by].sp->ns, t->pods[by].sp->name);
        int r = gs__tn_pending_add(t, pod);
        if (r < 0)
            return r;
        t->epoch++;
    }
    for (size_t i = 0; i < x->bound.n; i++) {
        int32_t pod = x->bound.v[i];
        struct rpod *p = &t->pods[pod];
        p->first_in_txn = 0;
        struct gs_decision d = {.kind = GS_DECIDE_BIND,
                                .pod = pod,
                                .node = p->node,
                                .gpu_mask = p->mask,
                                .share_milli = gs__tn_slice_share(t, pod),
                                .by = -1};
        if (gs__tn_decide(t, &d) < 0)
            return -ENOMEM;
    }
    x->bound.n = x->evicted.n = 0;
    return 0;
}

/* Zone spread of a gang: 1000 when no member runs in @node's zone, less for each that does. */
static int32_t zone_spread(const struct gs_tenancy *t, const struct rpod *p, size_t node)
{
    if (p->group < 0)
        return 1000;
    const struct gang *g = &t->gangs[p->group];
    int zone = gs_fleet_node_zone(t->fleet, node), same = 0;
    for (size_t i = 0; i < g->members.n; i++) {
        const struct rpod *m = &t->pods[g->members.v[i]];
        same += m->state == GS_POD_RUNNING && gs_fleet_node_zone(t->fleet, (size_t)m->node) == zone;
    }
    return gs__spread_score(same);
}

/*
 * The profile's score plugins (the policy's, else the seed's: gs_profile_new_placement()) that
 * score in this way, and the most their weighted sum can be. Return: 0; -EINVAL with @d for a
 * plugin that does not score placements; -ENOMEM.
 */
int gs__tn_scores_init(struct gs_tenancy *t, struct gs_diag *d)
{
    struct gs_score_spec seed[GS_SCN_SCORES];
    const struct gs_score_spec *v = t->pol->scores;
    int n = t->pol->nscores;
    if (!t->pol->has_scores) {
        struct gs_profile *p;
        int rc = gs_profile_new_placement(NULL, &p, d);
        if (rc)
            return rc;
        n = gs_profile_count(p, GS_EP_SCORE);
        for (int i = 0; i < n; i++)
            seed[i].plugin = gs_profile_at(p, GS_EP_SCORE, i, &seed[i].weight);
        gs_profile_free(p);
        v = seed;
    }
    t->nscore = 0;
    t->score_max = 0;
    t->binpack = -1;
    for (int i = 0; i < n && i < GS_SCN_SCORES; i++) {
        if (!gs_plugin_places(v[i].plugin))
            return gs_diag_error(d, "score plugin %s does not score multi-tenant placements",
                                 gs_plugin_name(v[i].plugin) ? gs_plugin_name(v[i].plugin) : "?");
        const struct gs_plugin *pl = gs__plugins[v[i].plugin];
        if (pl->place_full_only && t->way != GS_WAY_FULL)
            continue;
        if (!strcmp(pl->name, "GPUBinPacking"))
            t->binpack = t->nscore;
        t->score_plugin[t->nscore] = pl;
        t->score_weight[t->nscore++] = v[i].weight;
        t->score_max += (int64_t)v[i].weight * GS_SCORE_MAX;
    }
    return 0;
}

/*
 * A node's weighted score: the profile's score plugins (GPUBinPacking, TopologyScore,
 * FairnessScore), each 0..GS_SCORE_MAX times its weight, then demoted as they ask (place_demote)
 * and once more for a PreferNoSchedule taint the pod does not tolerate.
 */
/* Whether score plugin @i scores @p the other way round: GPUBinPacking, for a tenant whose
 * GPUQuota says schedulingPolicy.binPacking false, prefers the emptiest node instead (spread). */
static int reversed(const struct gs_tenancy *t, const struct rpod *p, int i)
{
    return i == t->binpack && (size_t)p->tenant < t->pol->ntenants &&
           !t->pol->tenants[p->tenant].bin_packing;
}

static int64_t score(const struct gs_tenancy *t, const struct rpod *p, size_t node,
                     const struct gs_fit_choice *c)
{
    struct gs_place_view v = {
        .fleet = t->fleet,
        .node = node,
        .pod = &p->fit,
        .choice = c,
        .zone_spread = p->fit.tier == GS_TIER_AZ ? zone_spread(t, p, node) : 1000,
        .full = t->way == GS_WAY_FULL,
    };
    int64_t s = 0;
    for (int i = 0; i < t->nscore; i++)
        s += (int64_t)t->score_weight[i] * (reversed(t, p, i)
                                                ? GS_SCORE_MAX - t->score_plugin[i]->place(&v)
                                                : t->score_plugin[i]->place(&v));
    for (int i = 0; i < t->nscore; i++)
        for (int k = t->score_plugin[i]->place_demote ? t->score_plugin[i]->place_demote(&v) : 0;
             k > 0; k--)
            s /= GS_PLACE_DEMOTE;
    /* A PreferNoSchedule taint it does not tolerate: the node only when no other does as well
     * (kube-scheduler's TaintToleration score ranks the nodes with fewer such taints first). */
    int cls = gs_fleet_node_taint_class(t->fleet, node);
    if (cls && (p->fit.prefer_not >> (cls - 1) & 1))
        s /= GS_PLACE_DEMOTE;
    return s;
}

#define SCORE_MAX(t) ((t)->score_max)

/* The plugins' bounds for one pod, made once per search: a scan asks them of every node. */
struct bound {
    struct gs_place_view v;
    int64_t most;  /* every plugin at its most */
    int n, lazy;   /* lazy: no weight below 0, so each bound only lowers the sum */
    int64_t wpack; /* the weight of the plugins bounded by packing (place_bound_packing) */
    const struct gs_plugin *pl[GS_SCN_SCORES];
    int32_t w[GS_SCN_SCORES];
};

static void bound_init(const struct gs_tenancy *t, const struct rpod *p, struct bound *b)
{
    memset(b, 0, sizeof(*b));
    b->v = (struct gs_place_view){.fleet = t->fleet, .pod = &p->fit, .full = t->way == GS_WAY_FULL};
    b->lazy = 1;
    for (int i = 0; i < t->nscore; i++) {
        b->most += (int64_t)t->score_weight[i] * GS_SCORE_MAX;
        b->lazy &= t->score_weight[i] >= 0;
        if (reversed(t, p, i)) /* its bounds are the packing score's: only the most holds */
            continue;
        if (t->score_plugin[i]->place_bound_packing && t->score_weight[i] > 0)
            b->wpack += t->score_weight[i];
        if (t->score_plugin[i]->place_bound) {
            b->pl[b->n] = t->score_plugin[i];
            b->w[b->n++] = t->score_weight[i];
        }
    }
}

/* Does @node lack the free cards of a whole-card pod, or the room on one card of a shared
 * slice (gs_fleet_slice_room())? Then gs_fleet_fit() fails there: read from packed arrays. */
static int lacks_cards(const struct gs_tenancy *t, const struct gs_fit *f, size_t node)
{
    if (f->mig || f->ncards <= 0)
        return 0;
    if (f->whole)
        return gs_fleet_node_free_cards(t->fleet, node) < f->ncards;
    return !f->timeslice && f->overcommit <= 1000 &&
           gs_fleet_slice_room(t->fleet, node) < f->compute;
}

/*
 * Could the pod's score on @node beat the best so far (@best on @at; the lower node wins a
 * tie, whatever order nodes come in)? The plugins' bounds, before the node is fitted, in the
 * profile's order, the first that rules the node out ending the question (GPUBinPacking's,
 * first in the seed's profile, rules out most); then its cards (lacks_cards()). Before any node
 * fits, every node is fitted (@strict), for the reasons, unless the search will ask again
 * should none fit. The node held for the head of the queue is always fitted: finding it held
 * is what the pass learns (gs__tn_held()).
 */
static int may_beat(const struct gs_tenancy *t, struct bound *b, size_t node, int64_t best,
                    size_t at, int strict)
{
    if ((int32_t)node == t->resv_node)
        return 1;
    if (best < 0)
        return strict || !lacks_cards(t, b->v.pod, node);
    b->v.node = node;
    int64_t up = b->most;
    for (int i = 0; i < b->n; i++) {
        up -= (int64_t)b->w[i] * (GS_SCORE_MAX - b->pl[i]->place_bound(&b->v));
        if (b->lazy && (up < best || (up == best && node >= at)))
            return 0;
    }
    if (lacks_cards(t, b->v.pod, node))
        return 0;
    return up > best || (up == best && node < at);
}

/*
 * A whole-card pod no node had cards enough for, though the cluster has them free: say how
 * thinly they are spread ("; 4 free nvidia.com/gpu in the cluster, at most 3 on one node"), over
 * the ready nodes of the models, zone and taints it may use. Return: the length written at @at.
 */
static int spread_thin(const struct gs_tenancy *t, const struct rpod *p, char *at, size_t size)
{
    const struct gs_fit *f = &p->fit;
    int64_t total = 0;
    int most = 0;
    size_t nopen = 0;
    const int32_t *open = gs_fleet_open(t->fleet, &nopen); /* the only nodes with free cards */
    for (size_t k = 0; f->whole && !f->mig && f->ncards > 1 && k < nopen; k++) {
        size_t i = (size_t)open[k];
        int model = gs_fleet_node_model(t->fleet, i),
            n = gs_fleet_node_sound_free_cards(t->fleet, i);
        int taint = gs_fleet_node_taint_class(t->fleet, i);
        if (!gs_fleet_node_ready(t->fleet, i) || (taint && !(f->tolerated >> (taint - 1) & 1)) ||
            (model >= 0 && !gs__model_allowed(f->model_mask, model)) ||
            (f->zone_only && gs_fleet_node_zone(t->fleet, i) + 1 != f->zone_only))
            continue;
        total += n;
        most = n > most ? n : most;
    }
    if (total < f->ncards)
        return 0;
    return gs__say(at, size, "; %lld free nvidia.com/gpu in the cluster, at most %d on one node",
                   (long long)total, most);
}

/* The most of a host resource one node offers: INT64_MAX when a node does not constrain it. */
static int64_t most_of(int64_t most, int64_t v)
{
    return v == GS_UNSET ? INT64_MAX : (v > most ? v : most);
}

/*
 * A pod asking more host memory or CPU than any node has, which no release of the cluster's pods
 * can ever place: say so ("; no node has 1099511627776 MiB of memory, the most is 786432").
 * Return: the length written at @at.
 */
static int beyond_every_node(const struct gs_tenancy *t, const struct rpod *p, char *at,
                             size_t size)
{
    const struct gs_policy *pol = t->pol;
    int64_t cpu = 0, mem = 0;
    for (size_t i = 0; i < pol->nnodes; i++) {
        const struct gs_node_template *tp = &pol->templates[pol->nodes[i].template_index];
        cpu = most_of(cpu, tp->cpu_milli);
        mem = most_of(mem, tp->memory_mib);
    }
    if (p->fit.memory_mib > mem)
        return gs__say(at, size, "; no node has %lld MiB of memory, the most is %lld",
                       (long long)p->fit.memory_mib, (long long)mem);
    char want[GS_QUANTITY_STR_MAX], most[GS_QUANTITY_STR_MAX];
    if (p->fit.cpu_milli > cpu)
        return gs__say(at, size, "; no node has %s of cpu, the most is %s",
                       gs__amount(GS_UNIT_MILLI, p->fit.cpu_milli, want),
                       gs__amount(GS_UNIT_MILLI, cpu, most));
    return 0;
}

/* The taint kube-scheduler names when a pod is kept off nodes by taints ("{key: value}"): the
 * first it does not tolerate on @only_node, else on the first taint class it does not tolerate.
 * Return: the length written at @at. */
static int untolerated(const struct gs_tenancy *t, const struct rpod *p, int only_node, char *at,
                       size_t size)
{
    size_t first[GS_TAINT_CLASSES];
    int nc = gs_fleet_taint_classes(t->fleet, first);
    const struct gs_taint *tn = NULL;
    if (only_node >= 0)
        tn = gs_node_untolerated(t->pol, (size_t)only_node, p->sp);
    for (int c = 0; !tn && c < nc; c++)
        if (!(p->fit.tolerated >> c & 1))
            tn = gs_node_untolerated(t->pol, first[c], p->sp);
    return tn ? gs__say(at, size, " {%s: %s}", tn->key, tn->value) : 0;
}

/* Do words @r count nodes short of cards ("Insufficient nvidia.com/gpu", not ".../gpumem" nor
 * ".../gpu.shared")? */
static int says_short_of_cards(const char *r)
{
    static const char w[] = " " GS_WORDS_GPU;
    for (const char *q = strstr(r, w); q; q = strstr(q + 1, w)) {
        if (q[sizeof(w) - 1] && gs__words_end(q + sizeof(w) - 1, ",;"))
            return 1;
    }
    return 0;
}

void gs__tn_recount_thin(const struct gs_tenancy *t, struct rpod *p)
{
    static const char mark[] = " free nvidia.com/gpu in the cluster, at most ";
    char *r = p->reason, *head;
    size_t len = strlen(r);
    if (!p->fit.whole || p->fit.mig || p->fit.ncards < 2 || strncmp(r, "0/", 2) != 0 ||
        !says_short_of_cards(r) || len < 2 || r[len - 1] != '.')
        return; /* no words spread_thin() could have had a part in, or cut short */
    char *m = strstr(r, mark), *tail = r + len - 1; /* the clauses after it, or the full stop */
    while (m && m > r && m[-1] >= '0' && m[-1] <= '9')
        m--;
    if (m && m - r >= 2 && m[-2] == ';' && m[-1] == ' ') { /* the clause as said: in its place */
        head = m - 2;
        tail = strstr(m, "; ") ? strstr(m, "; ") : tail;
    } else { /* none was said: one goes before the other clauses */
        head = strstr(r, "; no node has");
        head = head ? head : tail;
        tail = head;
    }
    char rest[GS_REASON_MAX];
    memcpy(rest, tail, strlen(tail) + 1);
    size_t n = (size_t)(head - r);
    n += (size_t)spread_thin(t, p, head, sizeof(p->reason) - n);
    if (n < sizeof(p->reason))
        gs__say(r + n, sizeof(p->reason) - n, "%s", rest);
}

/* kube-scheduler's words for a node that fails pod @p for @r: a pod asking nvidia.com/gpu.shared
 * is short of those, not of nvidia.com/gpu. */
static const char *fit_words(const struct rpod *p, enum gs_fit_reason r)
{
    int replicas = 0;
    for (int k = 0; r == GS_FIT_GPU && k < p->sp->ncontainers; k++)
        replicas |= p->sp->containers[k].gpu_shared > 0;
    return gs_fit_reason_words(r, replicas);
}

static void why_nodes(struct gs_tenancy *t, struct rpod *p, const int64_t *count, int64_t quota,
                      const char *quota_why, int64_t reserved, int only_node)
{
    if (quota == (int64_t)t->pol->nnodes && quota_why[0]) {
        gs__say(p->reason, sizeof(p->reason), "%s", quota_why);
        return;
    }
    int n = only_node >= 0
                ? gs__say(p->reason, sizeof(p->reason), "node %s:", t->pol->nodes[only_node].name)
                : gs__say(p->reason, sizeof(p->reason), GS_WORDS_FIT_ERROR ":", t->pol->nnodes);
    for (int r = 1; r < GS_FIT_REASONS && n < (int)sizeof(p->reason); r++) {
        int mig = r == GS_FIT_MIG || r == GS_FIT_MIG_MODEL; /* which profile, too */
        const char *text = fit_words(p, (enum gs_fit_reason)r), *sp = mig ? " " : "",
                   *prof = mig && p->fit.mig ? p->fit.mig : "";
        char c[24] = "";
        if (!count[r])
            continue;
        if (only_node < 0)
            gs__say(c, sizeof(c), " %lld", (long long)count[r]);
        if (r == GS_FIT_TAINT) {
            n += gs__say(p->reason + n, sizeof(p->reason) - (size_t)n, "%s %s", c, text);
            if (n < (int)sizeof(p->reason))
                n += untolerated(t, p, only_node, p->reason + n, sizeof(p->reason) - (size_t)n);
            if (n < (int)sizeof(p->reason))
                n += gs__say(p->reason + n, sizeof(p->reason) - (size_t)n, ",");
        } else
            n += gs__say(p->reason + n, sizeof(p->reason) - (size_t)n, "%s %s%s%s,", c, text, sp,
                         prof);
    }
    if (quota && n < (int)sizeof(p->reason))
        n += gs__say(p->reason + n, sizeof(p->reason) - (size_t)n, " %lld %s,", (long long)quota,
                     quota_why);
    if (reserved && n < (int)sizeof(p->reason))
        n += gs__say(p->reason + n, sizeof(p->reason) - (size_t)n,
                     " %lld reserved for a pod ahead in the queue,", (long long)reserved);
    if (n > 0 && n < (int)sizeof(p->reason) && p->reason[n - 1] == ',')
        n--;
    if (count[GS_FIT_GPU] && only_node < 0 && n < (int)sizeof(p->reason))
        n += spread_thin(t, p, p->reason + n, sizeof(p->reason) - (size_t)n);
    if ((count[GS_FIT_MEMORY] || count[GS_FIT_CPU]) && n < (int)sizeof(p->reason))
        n += beyond_every_node(t, p, p->reason + n, sizeof(p->reason) - (size_t)n);
    if (n > 0 && n + 1 < (int)sizeof(p->reason) && p->reason[n - 1] != '.' &&
        p->reason[n - 1] != ':') {
        p->reason[n] = '.';
        p->reason[n + 1] = '\0';
    }
}

/* A pod's shape (admission.c, static_shape()), and whether it ends after the reservation of
 * the blocked head, the one thing about it a run changes. */
static uint64_t shape_of(const struct gs_tenancy *t, const struct rpod *p)
{
    /* a search on some models only (find_keeping_room()) is remembered apart from one on all */
    uint64_t limit = (uint64_t)t->model_limit * 0x9e3779b97f4a7c15ULL;
    return (p->shape ^ (uint64_t)gs__tn_late(t, p) ^ limit) * 1099511628211ULL | 1;
}

static struct clean *clean_of(struct gs_tenancy *t, uint64_t key)
{
    struct clean *c = &t->clean[key & (GS_MEMO_SLOTS - 1)];
    return c->key == key ? c : NULL;
}

int gs__cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The nodes of @bits in [@lo, @hi), ascending, appended to @out from @w, their bits cleared: the
 * new count. */
static size_t take_bits(uint64_t *bits, size_t lo, size_t hi, int32_t *out, size_t w)
{
    for (size_t k = lo / 64; k * 64 < hi; k++) {
        uint64_t m = bits[k];
        if (k * 64 < lo)
            m &= ~0ULL << (lo % 64);
        if (hi - k * 64 < 64)
            m &= ~(~0ULL << (hi - k * 64));
        bits[k] &= ~m;
        for (; m; m &= m - 1)
            out[w++] = (int32_t)(k * 64 + (size_t)__builtin_ctzll(m));
    }
    return w;
}

size_t gs__tn_logged_since(struct gs_tenancy *t, const struct nodelog *log, size_t since,
                           size_t cap, size_t n0)
{
    if (since < log->base || gs__tn_log_end(log) - since > cap)
        return SIZE_MAX;
    /* A bit per node: each comes out once, in O(n + nodes / 64), where a sort took O(n log n). */
    for (size_t i = since - log->base; i < log->v.n; i++)
        t->logbits[(size_t)log->v.v[i] / 64] |= 1ULL << ((size_t)log->v.v[i] % 64);
    size_t w = take_bits(t->logbits, n0, t->pol->nnodes, t->scratch, 0);
    return take_bits(t->logbits, 0, n0, t->scratch, w);
}

/*
 * The GPU model whose quotas @p is held to on node @n: -1 none, for a pod that asks no card; -2
 * none either on a node without cards, whose model index (gs_fleet_node_model(), 0 for such a
 * node) names no card: the pod fails there as short of cards (Insufficient nvidia.com/gpu, the
 * fit's word), never as over or without the quota of a model the node does not have.
 */
static int quota_model(const struct gs_tenancy *t, const struct rpod *p, size_t n)
{
    if (p->fit.ncards <= 0)
        return -1;
    return gs_fleet_node_gpus(t->fleet, n) > 0 ? gs_fleet_node_model(t->fleet, n) : -2;
}

/* Does some model of the cluster pass @p's quotas? @ok caches the answer per model; @why gets
 * the last model's refusal, @all each model's, joined by "; ". */
static int quota_anywhere(struct gs_tenancy *t, struct rpod *p, int8_t *ok, char *why, char *all)
{
    int any = 0, n = 0;
    all[0] = '\0';
    for (uint32_t mm = t->models; mm; mm &= mm - 1) {
        int m = __builtin_ctz(mm);
        if (!gs__model_allowed(p->fit.model_mask, m))
            continue;
        if (t->model_limit && !(t->model_limit & (1u << m))) {
            ok[m] = 0;
            continue;
        }
        ok[m] = (int8_t)gs__quota_check(t, p, m, why, GS_REASON_MAX);
        any |= ok[m];
        if (!ok[m] && why[0] && !strstr(all, why))
            n += gs__say(all + n, GS_REASON_MAX - (size_t)n, "%s%s", n ? "; " : "", why);
    }
    return any;
}

/* What one search saw: per-reason node counts, and the best node. */
struct scan {
    int64_t count[GS_FIT_REASONS], quota, reserved, best;
    size_t node;
    uint32_t mask;
    int mig_start;
    int8_t model_ok[GS_MODEL_MAX];
    char quota_why[GS_REASON_MAX];
};

/*
 * One node of a search: filtered and scored when it may beat the best so far. Return: 1 when it
 * became the best with the most any node can score: in an ascending search none after can win.
 */
static int visit(struct gs_tenancy *t, struct rpod *p, int32_t pod, struct bound *b, size_t n,
                 int only_node, int strict, struct scan *o)
{
    /* Once a node fits, the reasons are not needed: a node that cannot win is passed unread. */
    if (!may_beat(t, b, n, o->best, o->node, strict))
        return 0;
    t->work.node_fits++;
    int model = quota_model(t, p, n);
    size_t key = (size_t)t->node_key[n]; /* packed: most nodes passed here are empty */
    int empty = only_node < 0 && (int32_t)n != t->resv_node && gs_fleet_node_bare(t->fleet, n);
    if (empty && t->seen[key] == t->stamp) {
        if (t->seen_reason[key] >= 0)
            o->count[t->seen_reason[key]]++;
        else
            o->quota += t->seen_reason[key] == -2;
        return 0;
    }
    if (empty) {
        t->seen[key] = t->stamp;
        t->seen_reason[key] = -1;
    }
    int m = model >= 0 ? model : 0;
    if (model != -2 && o->model_ok[m] < 0)
        o->model_ok[m] = (int8_t)gs__quota_check(t, p, model, o->quota_why, sizeof(o->quota_why));
    if (model != -2 && !o->model_ok[m]) {
        o->quota++;
        if (empty)
            t->seen_reason[key] = -2;
        return 0;
    }
    struct gs_fit_choice c;
    enum gs_fit_reason why = gs_fleet_fit(t->fleet, n, &p->fit, &c);
    if (why != GS_FIT_OK) {
        o->count[why]++;
        if (empty)
            t->seen_reason[key] = (int8_t)why;
        return 0;
    }
    if (gs__tn_held(t, p, pod, n, &c)) {
        o->reserved++;
        return 0;
    }
    int64_t sc = score(t, p, n, &c);
    if (sc > o->best || (sc == o->best && n < o->node)) {
        o->best = sc;
        o->node = n;
        o->mask = c.mask;
        o->mig_start = c.mig_start;
        return sc == SCORE_MAX(t);
    }
    return 0;
}

/* Filter and score @p on the nodes @list[lo..hi) (all nodes from @lo when @list is NULL); with
 * @strict, every node is fitted until one fits (visit()), for the reasons. */
static void scan(struct gs_tenancy *t, struct rpod *p, int32_t pod, const int32_t *list, size_t lo,
                 size_t hi, int only_node, int strict, struct scan *o)
{
    struct bound b;
    bound_init(t, p, &b);
    t->stamp++;
    for (size_t i = lo; i < hi; i++)
        if (visit(t, p, pod, &b, list ? (size_t)list[i] : i, only_node, strict, o))
            break;
}

/*
 * Does every node of @ngpu cards at packing level @level lack the free cards of whole-card pod
 * @f (lacks_cards())? Such a node holds at least @level / GS_FLEET_LEVELS of its cards' compute,
 * and a free card holds none: it has fewer free cards than @f asks once that exceeds the compute
 * of all but @f->ncards of its cards.
 */
static int level_lacks(const struct gs_fit *f, int ngpu, int level)
{
    return f->whole && !f->mig && f->ncards > 0 &&
           (int64_t)level * ngpu > (int64_t)(ngpu - f->ncards) * GS_FLEET_LEVELS;
}

/*
 * scan() over every open node, the most packed first (the fleet's packing levels, each
 * ascending, gs_fleet_open_level()), stopping at the first level whose bound cannot beat the
 * best found, and passing nodes without the cards the pod needs unread: the same node and cards
 * as scan() in ascending order, which keeps the lowest node of the best score. Equal empty
 * nodes are one level, ascending, so the first of them stands for the rest as in scan(). The
 * node held for the head of the queue is visited where scan() would: always, unless a lower
 * node scored the most any node can (what the pass learns there, gs__tn_held(), is the same).
 * When no node fits, scan() itself runs: it gives every node's reason.
 */
static void scan_levels(struct gs_tenancy *t, struct rpod *p, int32_t pod, const int32_t *open,
                        size_t nopen, struct scan *o)
{
    struct bound b;
    bound_init(t, p, &b);
    if (!b.lazy || !b.wpack) { /* the levels bound nothing */
        scan(t, p, pod, open, 0, nopen, -1, 1, o);
        return;
    }
    struct scan lv = *o;
    t->stamp++;
    int level[GS_GPUS_MAX + 1];
    const int32_t *at[GS_GPUS_MAX + 1];
    size_t n[GS_GPUS_MAX + 1];
    int32_t up[GS_GPUS_MAX + 1];
    int live[GS_GPUS_MAX], nlive = 0; /* card counts with levels left, ascending */
    for (int g = 1; g <= GS_GPUS_MAX; g++) {
        n[g] = 0;
        level[g] = GS_FLEET_LEVELS + 1;
        live[nlive++] = g;
    }
    for (;;) {
        int pick = 0, w = 0;
        for (int i = 0; i < nlive; i++) {
            int g = live[i];
            /* taken or not yet read: the next level down that holds a node, empty ones passed */
            if (n[g] == 0 && (level[g] = gs_fleet_open_next_level(t->fleet, g, level[g] - 1)) >= 0)
                at[g] = gs_fleet_open_level(t->fleet, g, level[g], &p->fit, &n[g], &up[g]);
            if (level[g] < 0)
                continue; /* none left: not read again */
            live[w++] = g;
            if (!pick || up[g] > up[pick])
                pick = g;
        }
        nlive = w;
        if (!pick || (lv.best >= 0 && b.most - b.wpack * (GS_SCORE_MAX - up[pick]) < lv.best))
            break;
        for (size_t k = 0; k < n[pick] && !level_lacks(&p->fit, pick, level[pick]); k++)
            if (at[pick][k] != t->resv_node)
                visit(t, p, pod, &b, (size_t)at[pick][k], -1, 0, &lv);
        n[pick] = 0; /* taken: the next level down */
    }
    if (lv.best < 0) {
        scan(t, p, pod, open, 0, nopen, -1, 1, o);
        return;
    }
    *o = lv;
    int32_t r = t->resv_node;
    if (r >= 0 && (o->best < SCORE_MAX(t) || r < (int32_t)o->node) &&
        bsearch(&r, open, nopen, sizeof(*open), gs__cmp_i32))
        visit(t, p, pod, &b, (size_t)r, -1, 1, o);
}

static void scan_init(struct scan *o)
{
    memset(o, 0, sizeof(*o));
    o->best = -1;
    memset(o->model_ok, -1, sizeof(o->model_ok));
}

int gs__tn_find(struct gs_tenancy *t, int32_t pod, int only_node, const struct txn *x, size_t *node,
                uint32_t *mask, int *capacity)
{
    struct rpod *p = &t->pods[pod];
    struct scan o;
    scan_init(&o);
    if (only_node < 0 && p->fit.node_only) /* spec.nodeName: that node or none */
        only_node = p->fit.node_only - 1;
    size_t lo = only_node >= 0 ? (size_t)only_node : 0;
    size_t hi = only_node >= 0 ? lo + 1 : t->pol->nnodes;
    /* A GPU pod can only go where a card is free or shared: visit those nodes only. */
    const int32_t *open = NULL;
    struct clean *cl = NULL;
    uint64_t shape = 0;
    uint32_t models = 0;
    int settled = 1;
    if (only_node < 0 && p->fit.ncards > 0) {
        char all[GS_REASON_MAX];
        if (!quota_anywhere(t, p, o.model_ok, o.quota_why, all)) {
            *capacity = 0;
            gs__say(p->reason, sizeof(p->reason), "%s",
                    all[0] ? all : "no node has a GPU model this pod allows");
            return 1;
        }
        size_t nopen, nfreed;
        open = gs_fleet_open(t->fleet, &nopen);
        o.count[GS_FIT_GPU] = (int64_t)(t->pol->nnodes - nopen);
        hi = nopen;
        for (int m = 0; m < GS_MODEL_MAX; m++)
            models |= o.model_ok[m] == 1 ? 1u << m : 0;
        /* Pods bound by the attempt under way only take room: a record still bounds where
         * the pod can go. Evicted ones give room the log does not show yet. */
        if (!x || x->evicted.n == 0) {
            shape = shape_of(t, p);
            cl = clean_of(t, shape);
            if (cl && (cl->models != models || (cl->resv && cl->resv != t->resv_gen) ||
                       cl->health != t->health_gen || t->full_searches))
                cl = NULL;
            if (x && x->bound.n > 0) /* ... but a failure now says nothing of the real state */
                settled = 0;
        }
        if (cl && (nfreed = gs__tn_logged_since(t, &t->rlog, cl->since, nopen, 0)) != SIZE_MAX) {
            /* Its reasons are the record's, or the full search's below: nodes without the cards
             * it needs are passed unfitted. */
            scan(t, p, pod, t->scratch, 0, nfreed, only_node, 0, &o);
            if (o.best >= 0) {
                *node = o.node;
                *mask = o.mask;
                p->fit.mig_start = o.mig_start;
                return 0;
            }
            if (o.reserved == 0) { /* still nowhere: the full search's reason stands */
                *capacity = 1;
                gs__reason_copy(p->reason, cl->reason);
                if (settled)
                    cl->since = gs__tn_log_end(&t->rlog);
                return 1;
            }
            /* A freed node is held for the head: only a full search gives the reason right. It
             * starts from the quotas of the models of every freed node, as a strict scan left. */
            int8_t ok[GS_MODEL_MAX];
            memcpy(ok, o.model_ok, sizeof(ok));
            for (size_t i = 0; i < nfreed; i++) {
                int m = quota_model(t, p, (size_t)t->scratch[i]);
                if (m >= 0 && ok[m] < 0)
                    ok[m] = (int8_t)gs__quota_check(t, p, m, o.quota_why, sizeof(o.quota_why));
            }
            scan_init(&o);
            memcpy(o.model_ok, ok, sizeof(ok));
            o.count[GS_FIT_GPU] = (int64_t)(t->pol->nnodes - nopen);
        }
    }
    if (open && lo == 0 && only_node < 0)
        scan_levels(t, p, pod, open, hi, &o);
    else
        scan(t, p, pod, open, lo, hi, only_node, 1, &o);
    if (o.best >= 0) {
        *node = o.node;
        *mask = o.mask;
        p->fit.mig_start = o.mig_start;
        return 0;
    }
    *capacity = 1;
    why_nodes(t, p, o.count, o.quota, o.quota_why, o.reserved, only_node);
    if (shape && settled) {
        cl = &t->clean[shape & (GS_MEMO_SLOTS - 1)];
        cl->key = shape;
        cl->models = models;
        cl->resv = o.reserved ? t->resv_gen : 0;
        cl->health = t->health_gen;
        cl->since = gs__tn_log_end(&t->rlog);
        gs__reason_copy(cl->reason, p->reason);
    }
    return 1;
}

/*
 * A victim search visits every node, so pods of one shape that found no victims wait
 * GS_EVICT_BACKOFF_US before the next search, as kube-scheduler backs off unschedulable pods;
 * a pod's first try after it arrives (or is evicted) always searches. With @failed, a search of
 * @p's shape just found none: the wait starts (a search that found victims starts none, so the
 * next member of a gang still searches). A pod skipped while its shape waits is tried again when
 * the wait ends (t->retry_at), as kube-scheduler moves a pod out of its backoff queue: else it
 * would wait until something else moved, and a restarted scheduler would search for it at once.
 * Return: 1 when @p's shape waits.
 */
static int backing_off(struct gs_tenancy *t, const struct rpod *p, int failed)
{
    /* Coarse on purpose: tenant, priority and card count decide who could be a victim. */
    uint64_t h = ((uint64_t)p->tenant * 1000003u + (uint64_t)p->level) * 1000003u +
                 (uint64_t)(p->fit.ncards * 2 + p->fit.whole) + 1;
    h *= 0x9e3779b97f4a7c15ULL;
    size_t i = (size_t)(h >> 32) & (GS_MEMO_SLOTS - 1);
    if (!failed) { /* skipped: the pod tries again once the wait is over, whatever moves by then */
        int waits = p->tried_epoch != 0 && t->bo_key[i] == h && t->now < t->bo_until[i];
        if (waits && t->bo_until[i] < t->retry_at)
            t->retry_at = t->bo_until[i];
        return waits;
    }
    t->bo_key[i] = h;
    t->bo_until[i] = t->now + GS_EVICT_BACKOFF_US;
    return 1;
}

/*
 * Dedicated quota is kept for its tenant (the full scheme, GPUQuota): a pod first looks only on
 * the GPU models where it leaves the free cards that other tenants' unused dedicated quota of
 * each counts on (gs__tn_takes_dedicated()). Where it would have to borrow that room, a pod that
 * may preempt first takes back its own dedicated quota of a model from whoever borrowed it (the
 * guarantee, eviction.c), and only then borrows: the guarantee never reaches over a higher
 * priority, so room a higher-priority pod borrows stays borrowed while it runs. Kueue's
 * flavorFungibility (whenCanBorrow: TryNextFlavor, whenCanPreempt: Preempt) orders its flavors
 * alike. Return: as gs__tn_find(); with *@evicted set, the guarantee placed @pod (or failed: r<0).
 */
static int find_keeping_room(struct gs_tenancy *t, int32_t pod, int may_evict, struct txn *x,
                             size_t *node, uint32_t *mask, int *capacity, int *evicted)
{
    struct rpod *p = &t->pods[pod];
    uint32_t keep = 0, own = 0;
    *evicted = 0;
    for (uint32_t mm = t->models; mm; mm &= mm - 1)
        keep |= gs__tn_takes_dedicated(t, p, __builtin_ctz(mm)) ? 0 : 1u << __builtin_ctz(mm);
    if (keep != t->models && keep) {
        t->model_limit = keep;
        int r = gs__tn_find(t, pod, -1, x, node, mask, capacity);
        t->model_limit = 0;
        if (r == 0)
            return 0;
    }
    int r = gs__tn_find(t, pod, -1, x, node, mask, capacity);
    for (uint32_t mm = keep == t->models || r || !may_evict ? 0 : t->models; mm; mm &= mm - 1)
        own |= gs__tn_in_dedicated(t, p, __builtin_ctz(mm)) ? 1u << __builtin_ctz(mm) : 0;
    if (!own)
        return r;
    int mig_start = p->fit.mig_start; /* the searches after victims set it anew */
    t->model_limit = own;
    int e = gs__tn_evict_for(t, pod, EVICT_PREEMPT, x);
    t->model_limit = 0;
    if (e > 0) /* no victims: the borrowed place found above stands */
        p->fit.mig_start = mig_start;
    *evicted = e <= 0;
    return e < 0 ? e : 0;
}

/* Place one pod now, preempting or reclaiming in the full scheme; 0 placed, 1 not. */
int gs__tn_place_one(struct gs_tenancy *t, int32_t pod, struct txn *x, int only_node, int *capacity)
{
    size_t node;
    uint32_t mask;
    struct rpod *p = &t->pods[pod];
    /* A member beyond an elastic gang's minMember (and its tasks' minimums) only grows into
     * free room. */
    int extra = p->group >= 0 && gs__tn_gang_elastic(&t->gangs[p->group]) &&
                gs__tn_gang_lacking(t, p->group) <= 0;
    int r, evicted = 0;
    if (t->way == GS_WAY_FULL && only_node < 0 && p->fit.ncards > 0 && !p->fit.node_only)
        r = find_keeping_room(t, pod, p->group < 0 && !p->never_preempt && !extra, x, &node, &mask,
                              capacity, &evicted);
    else
        r = gs__tn_find(t, pod, only_node, x, &node, &mask, capacity);
    if (evicted || r < 0)
        return r;
    if (r == 0)
        return gs__tn_bind(t, pod, node, mask, x) < 0 ? -ENOMEM : 0;
    if (t->way != GS_WAY_FULL || !*capacity || only_node >= 0 || extra || backing_off(t, p, 0))
        return 1;
    /* A pod that found no victims waits a while before looking again, as kube-scheduler
     * backs off an unschedulable pod: the search visits every node. */
    char why[GS_REASON_MAX];
    gs__reason_copy(why, t->pods[pod].reason);
    /* preemptionPolicy: Never keeps a pod from preempting; its queue may still reclaim. */
    for (int mode = p->never_preempt ? EVICT_RECLAIM : EVICT_PREEMPT; mode <= EVICT_RECLAIM;
         mode++) {
        r = gs__tn_evict_for(t, pod, (enum evict_mode)mode, x);
        if (r <= 0)
            return r;
    }
    gs__reason_copy(t->pods[pod].reason, why);
    return backing_off(t, p, 1);
}

/*
 * Gang colocation for the nvlink tier: when the whole gang fits one NVLink group somewhere in
 * the cluster, it must be placed inside one; NVLink groups are tried best fit first.
 */
static int place_gang_nvlink(struct gs_tenancy *t, int64_t cards, const int32_t *m, int nm,
                             struct txn *x)
{
    int64_t best_free = -1;
    size_t nopen;
    const int32_t *live_open = gs_fleet_open(t->fleet, &nopen);
    int32_t *open = t->gang_open; /* a copy: binds below change the list */
    memcpy(open, live_open, nopen * sizeof(*open));
    for (int pass = 0; pass < 2; pass++) {
        int64_t want = best_free;
        for (size_t i = 0; i < nopen; i++) {
            size_t n = (size_t)open[i];
            int free_in[GS_GPUS_MAX];
            if (gs_fleet_node_free_cards(t->fleet, n) < cards ||
                gs_fleet_node_nvlink_max(t->fleet, n) < cards ||
                gs_fleet_nvlink_free(t->fleet, n, free_in) < cards)
                continue;
            for (int grp = 0; grp < GS_GPUS_MAX; grp++) {
                if (free_in[grp] < cards)
                    continue;
                if (pass == 0) {
                    if (best_free < 0 || free_in[grp] < best_free)
                        best_free = free_in[grp];
                    continue;
                }
                if (free_in[grp] != want)
                    continue;
                size_t b0 = x->bound.n;
                int k = 0, cap, r = 0;
                for (; k < nm; k++) {
                    t->pods[m[k]].fit.nvlink_only = 1u << grp;
                    r = gs__tn_place_one(t, m[k], x, (int)n, &cap);
                    t->pods[m[k]].fit.nvlink_only = 0;
                    if (r)
                        break;
                }
                if (k == nm || r < 0 || gs__tn_rollback(t, x, b0, x->evicted.n) < 0)
                    return k == nm ? 0 : r < 0 ? r : -ENOMEM;
            }
        }
        if (best_free < 0)
            break;
    }
    /* the same words for each, formatted once; where the tier only prefers a group, the members
     * placed one by one say why next (place_members()) */
    for (int k = 0; k < nm && !t->pods[m[0]].fit.tier_soft; k++)
        if (k == 0)
            gs__say(t->pods[m[k]].reason, GS_REASON_MAX,
                    "gang needs %lld GPUs inside one NVLink group (tier nvlink); no group has them "
                    "free",
                    (long long)cards);
        else
            gs__reason_copy(t->pods[m[k]].reason, t->pods[m[0]].reason);
    return 1;
}

/* Members of gang @g waiting to run, in member order. */
static int gang_waiting(const struct gs_tenancy *t, const struct gang *g, int32_t *out)
{
    int n = 0;
    for (size_t i = 0; i < g->members.n; i++) {
        const struct rpod *p = &t->pods[g->members.v[i]];
        if (p->state == GS_POD_PENDING && p->arrived)
            out[n++] = g->members.v[i];
    }
    return n;
}

uint32_t gs__tn_task_hash(const char *name)
{
    uint32_t h = 2166136261u;
    for (const char *s = name; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return !name[0] ? 0 : h ? h : 1;
}

/* Which entry of PodGroup @pg's minTaskMember counts member @p (its volcano.sh/task-spec); -1
 * none. */
static int task_of(const struct gs_podgroup_spec *pg, const struct rpod *p)
{
    for (int k = 0; p->task && k < pg->ntasks; k++)
        if (gs__tn_task_hash(pg->tasks[k].name) == p->task)
            return k;
    return -1;
}

/*
 * What each task of gang @group's minTaskMember lacks of its minimum, in @need (one per entry):
 * its members running or completed Succeeded count, as Volcano's ReadyTaskNum counts them. In
 * @unseen, the members counted Succeeded that this scheduler never held (a driver made again
 * after a restart or reload knows only how many completed, gs_tenancy_podgroup_succeeded()):
 * their tasks are not known, so they count for whichever task lacks. Return: the sum of what
 * the tasks lack, less @unseen, at least 0; 0 for a gang whose PodGroup has no minTaskMember.
 */
static int32_t task_needs(const struct gs_tenancy *t, int32_t group, int32_t *need, int32_t *unseen)
{
    const struct gang *g = &t->gangs[group];
    const struct gs_podgroup_spec *pg = t->pgs[group];
    if (!g->tasked)
        return 0;
    for (int k = 0; k < pg->ntasks; k++)
        need[k] = pg->tasks[k].min;
    *unseen = g->done;
    for (size_t i = 0; i < g->members.n; i++) {
        const struct rpod *p = &t->pods[g->members.v[i]];
        int done = p->state == GS_POD_COMPLETED && p->succeeded;
        int k = p->state == GS_POD_RUNNING || done ? task_of(pg, p) : -1;
        *unseen -= done;
        if (k >= 0)
            need[k]--;
    }
    *unseen = *unseen > 0 ? *unseen : 0;
    int32_t sum = 0;
    for (int k = 0; k < pg->ntasks; k++)
        sum += need[k] > 0 ? need[k] : 0;
    return sum > *unseen ? sum - *unseen : 0;
}

int32_t gs__tn_task_spare(const struct gs_tenancy *t, int32_t group, const struct rpod *p)
{
    int32_t need[GS_PG_TASKS_MAX], unseen;
    if (!t->gangs[group].tasked)
        return INT32_MAX;
    task_needs(t, group, need, &unseen);
    int k = task_of(t->pgs[group], p);
    return k < 0 ? INT32_MAX : need[k] < 0 ? -need[k] : 0;
}

/* A member's name as a gang's reason says it, after the PodGroup's whole name and before the
 * cause: up to NAME_SAID - 1 bytes, a longer one (Kubernetes allows 253) cut with "...", so that
 * the cause is not what the reason's GS_REASON_MAX bytes cut off. */
#define NAME_SAID 68
static const char *cut_name(char out[NAME_SAID], const char *name)
{
    if (strlen(name) < NAME_SAID)
        return name;
    gs__say(out, NAME_SAID, "%.*s...", NAME_SAID - 4, name);
    return out;
}

int32_t gs__tn_gang_lacking(const struct gs_tenancy *t, int32_t group)
{
    const struct gang *g = &t->gangs[group];
    int32_t need[GS_PG_TASKS_MAX], unseen;
    int32_t lacking = g->min - g->running - g->done, tasks = task_needs(t, group, need, &unseen);
    return tasks > lacking ? tasks : lacking;
}

/*
 * Volcano's gang plugin starts a job only with each task's minTaskMember among the members
 * placed together, so those go first: of the @nm waiting members @m (arrival order; room for
 * 2 x @nm), what each task lacks, in arrival order, then the rest as they came. Return: 0; 1 when
 * some task has fewer members waiting than it lacks (a task none names yet included, as Volcano
 * waits for it), the words in every member's reason.
 */
static int tasks_first(struct gs_tenancy *t, int32_t group, int32_t *m, int nm)
{
    const struct gs_podgroup_spec *pg = t->pgs[group];
    int32_t need[GS_PG_TASKS_MAX], *rest = m + nm, unseen, left = 0;
    if (task_needs(t, group, need, &unseen) <= 0)
        return 0;
    int n = 0, nrest = 0;
    for (int j = 0; j < nm; j++) {
        int k = task_of(pg, &t->pods[m[j]]);
        if (k >= 0 && need[k] > 0) {
            need[k]--;
            m[n++] = m[j]; /* n <= j: nothing unread is overwritten */
        } else {
            rest[nrest++] = m[j];
        }
    }
    memcpy(m + n, rest, (size_t)nrest * sizeof(*m));
    for (int k = 0; k < pg->ntasks; k++)
        left += need[k] > 0 ? need[k] : 0;
    for (int k = 0; left > unseen && k < pg->ntasks; k++)
        if (need[k] > 0) {
            for (int j = 0; j < nm; j++)
                gs__say(t->pods[m[j]].reason, GS_REASON_MAX,
                        "PodGroup %s: task %s lacks %d of minTaskMember %d: members annotated "
                        "volcano.sh/task-spec: %s are not submitted",
                        pg->name, pg->tasks[k].name, need[k], pg->tasks[k].min, pg->tasks[k].name);
            return 1;
        }
    return 0;
}

/* The waiting members of a gang one by one, all or none. Return: 0 placed, 1 not, < 0 error. */
static int place_members(struct gs_tenancy *t, const int32_t *m, int nm, struct txn *x,
                         int *capacity)
{
    int k = 0, r = 1;
    for (; k < nm; k++)
        if ((r = gs__tn_place_one(t, m[k], x, -1, capacity)) != 0)
            break;
    if (r > 0) {
        char why[GS_REASON_MAX], mname[NAME_SAID];
        gs__reason_copy(why, t->pods[m[k]].reason);
        /* The member itself too: it waits for the gang. Members name their gang alike, so the
         * words are formatted once and copied (a gang fails many times a day, each member). */
        for (int j = 0; j < nm; j++) {
            const struct rpod *v = &t->pods[m[j]], *before = j ? &t->pods[m[j - 1]] : NULL;
            if (before && strcmp(before->sp->group, v->sp->group) == 0)
                gs__reason_copy(t->pods[m[j]].reason, before->reason);
            else
                gs__say(t->pods[m[j]].reason, GS_REASON_MAX,
                        "gang %s: member %s cannot be placed: %s", v->sp->group,
                        cut_name(mname, t->pods[m[k]].sp->name), why);
        }
        r = gs__tn_rollback(t, x, 0, 0) < 0 ? -ENOMEM : 1;
    }
    return r;
}

/*
 * All or nothing: a gang below minMember places its waiting members together, or none of them
 * (every bind and eviction of the attempt is undone). Once minMember run, later members go one
 * by one. Return: 0 placed, 1 not, < 0 error.
 */
/*
 * Do the first @n members of @m (a gang's waiting members, one tenant's) ask more GPUs together
 * than their tenant's GPUQuota totals give over every model any of them may use? Then the gang can
 * never start while its quota stands, and the first member's reason says so (each member's own
 * reason named only its own ask against what was free of the quota).
 */
static int over_quota(struct gs_tenancy *t, const int32_t *m, int n)
{
    struct rpod *p = &t->pods[m[0]];
    const struct gs_tenant_spec *ts =
        (size_t)p->tenant < t->pol->ntenants ? &t->pol->tenants[p->tenant] : NULL;
    if (!ts || !ts->has_quota || t->way != GS_WAY_FULL)
        return 0;
    int64_t need = 0, total = 0;
    uint32_t models = 0; /* the models any member may use; 0, any model */
    int any = 0;
    for (int k = 0; k < n; k++) {
        need += t->pods[m[k]].milli;
        any |= !t->pods[m[k]].fit.model_mask;
        models |= t->pods[m[k]].fit.model_mask;
    }
    models = any ? 0 : models;
    for (int k = 0; k < ts->nquotas; k++)
        if (gs__model_allowed(models, ts->quotas[k].model))
            total += ts->quotas[k].total_milli;
    if (need <= total)
        return 0;
    char a[32], b[32];
    gs__milli_str(a, sizeof(a), need);
    gs__milli_str(b, sizeof(b), total);
    gs__say(p->reason, GS_REASON_MAX,
            "gang %s: its %d members waiting ask %s GPUs together, more than tenant %s's GPUQuota "
            "total of the models they may use (%s): it cannot start while that quota stands",
            p->sp->group, n, a, ts->name, b);
    return 1;
}

int gs__tn_place_gang(struct gs_tenancy *t, int32_t group, int *capacity)
{
    struct gang *g = &t->gangs[group];
    int32_t *m = t->gang_members;
    int nm = gang_waiting(t, g, m), r = 1;
    struct txn *x = &t->txn_gang;
    x->bound.n = x->evicted.n = 0;
    *capacity = 1;
    int lacking = gs__tn_gang_lacking(t, group); /* completed members count, as in Volcano */
    if (lacking > 0 && nm > 0 && !gs__tn_enqueue(t, group, t->pods[m[0]].reason, GS_REASON_MAX)) {
        for (int k = 1; k < nm; k++) /* minResources do not fit: none is tried */
            gs__reason_copy(t->pods[m[k]].reason, t->pods[m[0]].reason);
        *capacity = 0;
    } else if (lacking > 0 && tasks_first(t, group, m, nm)) {
        *capacity = 0;
    } else if (lacking > nm) {
        for (int k = 0; k < nm; k++)
            gs__say(t->pods[m[k]].reason, GS_REASON_MAX,
                    "PodGroup %s: %d of minMember %d pods submitted", t->pods[m[k]].sp->group,
                    g->min - lacking + nm, g->min);
        *capacity = 0;
    } else if (lacking <= 0) {
        r = 1; /* satisfied gangs grow one pod at a time through the normal path */
    } else if (over_quota(t, m, gs__tn_gang_elastic(g) ? lacking : nm)) {
        for (int k = 1; k < nm; k++)
            gs__reason_copy(t->pods[m[k]].reason, t->pods[m[0]].reason);
        *capacity = 0;
    } else {
        /* An elastic gang (minMember below its members) places what minMember lacks all or
         * nothing; the rest grow one by one into room as it comes. A gang that fits one NVLink
         * group goes into one; where the tier only prefers that (prefer-colocate), it starts
         * now elsewhere rather than wait for a group. */
        int n = gs__tn_gang_elastic(g) ? lacking : nm;
        int64_t cards = 0;
        for (int k = 0; k < n; k++)
            cards += t->pods[m[k]].fit.whole ? t->pods[m[k]].fit.ncards : 0;
        int nvlink = t->pods[m[0]].fit.tier == GS_TIER_NVLINK &&
                     gs__tn_gang_in_group(t, &t->pods[m[0]], cards);
        if (nvlink)
            r = place_gang_nvlink(t, cards, m, n, x);
        if (r == 1 && (!nvlink || t->pods[m[0]].fit.tier_soft))
            r = place_members(t, m, n, x, capacity);
    }
    if (r == 0)
        r = gs__tn_commit(t, x, m[0]);
    return r;
}

int gs_tenancy_probe_new(struct gs_tenancy *t, const struct gs_pod_spec *sp,
                         struct gs_tenancy_probe **out, char *why, size_t size)
{
    struct gs_tenancy_probe *pr = calloc(1, sizeof(*pr));
    if (!pr)
        return -ENOMEM;
    pr->p.sp = sp;
    pr->p.seq = INT64_MAX;
    pr->p.submit = t->now;
    int placeholder = 0;
    if (gs__tn_admit(t, &pr->p) || (placeholder = gs__tn_group_parked(t, pr->p.group))) {
        if (placeholder) /* only pods have named it: none passes before it is made */
            gs__say(pr->p.reason, sizeof(pr->p.reason),
                    "PodGroup %s/%s does not exist yet: the pod waits for it to be made", sp->ns,
                    sp->group);
        gs__say(why, size, "%s", pr->p.reason);
        free(pr);
        return 1;
    }
    pr->p.user = gs__tn_user_of(t, &pr->p);
    memset(pr->model_ok, -1, sizeof(pr->model_ok));
    pr->gang_ok = -1;
    pr->shape = gs__tn_shape_of(t, &pr->p.fit);
    pr->share = gs__tn_share_of(t, &pr->p.fit);
    *out = pr;
    return 0;
}

void gs_tenancy_probe_free(struct gs_tenancy_probe *pr)
{
    free(pr);
}

int32_t gs_tenancy_probe_gang_lacking(const struct gs_tenancy *t, const struct gs_tenancy_probe *pr)
{
    int32_t n = pr->p.group >= 0 ? gs__tn_gang_lacking(t, pr->p.group) : 0;
    return n > 0 ? n : 0;
}

/*
 * Could the probed pod's gang run now? kube-scheduler places one member at a time, so a member
 * passes only while its PodGroup's minResources pass the enqueue check (which admits it) and
 * the members the gang lacks (minMember less those running, this pod one of them), each asking
 * what this pod asks, can all be placed: trial binds, all undone. Return: 1 yes; 0 no, with
 * pr->gang_why; -ENOMEM.
 */
static int probe_gang(struct gs_tenancy *t, struct gs_tenancy_probe *pr)
{
    const struct rpod *p = &pr->p;
    const struct gang *g = p->group >= 0 ? &t->gangs[p->group] : NULL;
    int need = g ? g->min - g->running : 0, placed = 0, r = 0, tasks;
    if (g && (tasks = gs__tn_gang_lacking(t, p->group)) > need)
        need = tasks; /* its tasks' minimums ask more members than minMember */
    if (g && g->running + g->done < g->min &&
        !gs__tn_enqueue(t, p->group, pr->gang_why, sizeof(pr->gang_why)))
        return 0; /* its minResources do not pass Volcano's enqueue check */
    if (need <= 1)
        return 1;
    struct gs_pod_spec sp = *p->sp;
    sp.duration_us = GS_UNSET; /* no expected end is left behind */
    struct txn *x = &t->txn_gang;
    x->bound.n = x->evicted.n = 0;
    size_t base = t->npods;
    char why[GS_REASON_MAX] = "";
    for (; placed < need && r == 0; placed++) {
        if ((r = gs__tn_pods_room(t)) < 0)
            break;
        int32_t id = (int32_t)t->npods++;
        struct rpod *m = &t->pods[id];
        *m = *p;
        m->sp = &sp;
        m->group = m->wgroup = -1;
        m->bucket = -1;
        int capacity;
        size_t node;
        uint32_t mask;
        r = gs__tn_find(t, id, -1, x, &node, &mask, &capacity);
        if (r == 0)
            r = gs__tn_bind(t, id, node, mask, x) < 0 ? -ENOMEM : 0;
        else if (r > 0)
            gs__reason_copy(why, m->reason);
    }
    if (gs__tn_rollback(t, x, 0, 0) < 0)
        r = -ENOMEM;
    t->npods = base;
    if (r < 0)
        return r;
    if (r == 0)
        return 1;
    size_t n = strlen(why); /* kube-scheduler ends the sentence it puts this in with its own */
    if (n && why[n - 1] == '.')
        why[n - 1] = '\0';
    gs__say(pr->gang_why, sizeof(pr->gang_why),
            "gang %s: %d members like this one are needed, %d can be placed: %s", p->sp->group,
            need, placed - 1, why);
    return 0;
}

int gs_tenancy_probe_node(struct gs_tenancy *t, struct gs_tenancy_probe *pr, int32_t node,
                          int32_t *scored, const char **why)
{
    struct rpod *p = &pr->p;
    if (node < 0 || (size_t)node >= t->pol->nnodes) {
        *why = "no such node";
        return 1;
    }
    if (pr->gang_ok < 0 && (pr->gang_ok = (int8_t)probe_gang(t, pr)) < 0) {
        pr->gang_ok = -1;
        *why = "out of memory";
        return 1;
    }
    if (!pr->gang_ok) {
        *why = pr->gang_why;
        return 1;
    }
    int model = quota_model(t, p, (size_t)node);
    int m = model >= 0 ? model : 0;
    if (model != -2 && pr->model_ok[m] < 0)
        pr->model_ok[m] = (int8_t)gs__quota_check(t, p, model, pr->why[m], sizeof(pr->why[m]));
    if (model != -2 && !pr->model_ok[m]) {
        *why = pr->why[m];
        return 1;
    }
    /* The node's filter and score depend on the pod's shape alone (shapes.c); the node held
     * for the head of the queue is fitted every time: the backfill check reads its cards. */
    int32_t ans;
    struct gs_fit_choice c = {0};
    int held = (int32_t)node == t->resv_node;
    if (held || !gs__tn_shape_get(t, pr->shape, (size_t)node, &ans)) {
        enum gs_fit_reason r = pr->share ? gs__tn_share_fit(t, pr->share, (size_t)node, &p->fit, &c)
                                         : gs_fleet_fit(t->fleet, (size_t)node, &p->fit, &c);
        ans = r != GS_FIT_OK ? -1 - (int32_t)r
              : SCORE_MAX(t) ? (int32_t)(score(t, p, (size_t)node, &c) * 1000 / SCORE_MAX(t))
                             : 0;
        gs__tn_shape_put(t, pr->shape, (size_t)node, ans);
    }
    if (ans >= 0 && held &&
        gs__tn_probe_held(t, p, (size_t)node, &c, pr->held_why, sizeof(pr->held_why))) {
        *why = pr->held_why;
        return 1;
    }
    if (ans >= 0) {
        *scored = ans;
        return 0;
    }
    enum gs_fit_reason r = (enum gs_fit_reason)(-1 - ans);
    *why = fit_words(p, r);
    if ((r == GS_FIT_MIG || r == GS_FIT_MIG_MODEL) && p->fit.mig) { /* which profile, said once */
        char *b = pr->mig_why[r == GS_FIT_MIG_MODEL];
        if (!b[0])
            gs__say(b, sizeof(pr->mig_why[0]), "%s %s", *why, p->fit.mig);
        *why = b;
    }
    return 1;
}

int gs_tenancy_probe_nodes(struct gs_tenancy *t, struct gs_tenancy_probe *pr, const int32_t *node,
                           size_t n, int32_t *scored, const char **why)
{
    const uint64_t *ver;
    const int32_t *kept = gs__tn_shape_kept(t, pr->shape, &ver);
    int by_model = pr->p.fit.ncards > 0;
    for (size_t i = 0; i < n; i++) {
        int32_t x = node[i], m;
        if (x < 0)
            continue;
        /* A kept answer, once the gang and the quota of the node's model are known to pass: what
         * gs_tenancy_probe_node() would read, without its call (but for a MIG reason, which
         * names the profile, and the node held for the head of the queue). */
        if (kept && pr->gang_ok == 1 && (size_t)x < t->pol->nnodes && x != t->resv_node &&
            pr->model_ok[by_model && (m = gs_fleet_node_model(t->fleet, (size_t)x)) >= 0 ? m : 0] ==
                1 &&
            ver[x] == gs_fleet_node_version(t->fleet, (size_t)x)) {
            int32_t a = kept[x];
            enum gs_fit_reason r = (enum gs_fit_reason)(-1 - a);
            if (a >= 0) {
                scored[i] = a;
                continue;
            }
            if (r != GS_FIT_MIG && r != GS_FIT_MIG_MODEL) {
                scored[i] = -1;
                why[i] = fit_words(&pr->p, r);
                continue;
            }
        }
        int32_t s;
        scored[i] = gs_tenancy_probe_node(t, pr, x, &s, &why[i]) ? -1 : s;
    }
    return 0;
}

int gs_tenancy_probe_without(struct gs_tenancy *t, struct gs_tenancy_probe *pr, int32_t node,
                             const int32_t *gone, size_t n)
{
    size_t k = 0;
    int fits = -EINVAL;
    for (; k < n; k++) { /* stop at one that is not there: the answer would be wrong */
        const struct rpod *v = (size_t)gone[k] < t->npods ? &t->pods[gone[k]] : NULL;
        if (!v || v->state != GS_POD_RUNNING || v->node != node ||
            gs_fleet_release(t->fleet, (size_t)node, &v->fit, v->mask, gone[k]))
            break;
    }
    if (k == n) {
        int32_t scored;
        const char *why;
        fits = gs_tenancy_probe_node(t, pr, node, &scored, &why) == 0;
    }
    while (k-- > 0) { /* the exact state left, restored in reverse order */
        const struct rpod *v = &t->pods[gone[k]];
        if (gs_fleet_commit(t->fleet, (size_t)node, &v->fit, v->mask, gone[k]) < 0)
            fits = -ENOMEM;
    }
    return fits;
}
