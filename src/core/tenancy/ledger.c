/*
 * The ledger: what the running pods hold against every quota, and whether a pod may start as
 * far as quotas go. GPUQuota (per tenant and GPU model: dedicated, shared, total; seed 000
 * §1.2), namespace ResourceQuotas (requests.nvidia.com/gpu, requests.nvidia.com/gpumem,
 * requests.cpu, requests.memory, pods, with PriorityClass scopes), maxPodsPerUser, and the
 * Volcano queues' capability (with overcommitRatio for shares) and deserved shares.
 */
#include "tenancy_impl.h"

#include "gpusched/fairshare.h"

#include <stdio.h>
#include <string.h>

static const struct gs_model_quota *model_quota(const struct gs_tenancy *t, int32_t tenant,
                                                int model)
{
    if (tenant < 0 || (size_t)tenant >= t->pol->ntenants)
        return NULL;
    return gs_tenant_model_quota(&t->pol->tenants[tenant], model);
}

void gs__milli_str(char *buf, size_t size, int64_t m)
{
    int64_t frac = m % 1000;
    if (frac == 0) {
        gs__say(buf, size, "%lld", (long long)(m / 1000));
        return;
    }
    int digits = frac % 100 == 0 ? 1 : frac % 10 == 0 ? 2 : 3;
    int64_t shown = digits == 1 ? frac / 100 : digits == 2 ? frac / 10 : frac;
    gs__say(buf, size, "%lld.%0*lld", (long long)(m / 1000), digits, (long long)shown);
}

/* GPUQuota: 1 dedicated, 2 shared, 0 with @why over quota. */
static int gpuquota_bucket(const struct gs_tenancy *t, const struct rpod *p, int model, char *why,
                           size_t size)
{
    const struct gs_tenant_spec *ts = &t->pol->tenants[p->tenant];
    const struct gs_model_quota *q = model_quota(t, p->tenant, model);
    if (!q) {
        gs__say(why, size, "tenant %s: no GPUQuota for %s", ts->name,
                gs_catalog_at(model) ? gs_catalog_at(model)->name : "this model");
        return 0;
    }
    size_t k = (size_t)p->tenant * GS_MODEL_MAX + (size_t)model;
    int64_t ded = t->ded_used[k], sh = t->sh_used[k];
    int bucket = gs_quota_bucket(q, ded, sh, t->shw_used[k], p->fit.whole, p->milli);
    if (bucket)
        return bucket;
    char a[32], b[32], c[32];
    int over_total = ded + sh + p->milli > q->total_milli;
    int64_t used = over_total ? ded + sh : gs_quota_borrowed(q, ded, sh, t->shw_used[k]);
    int64_t cap = over_total ? q->total_milli : q->shared_milli;
    gs__milli_str(a, sizeof(a), used);
    gs__milli_str(b, sizeof(b), cap);
    gs__milli_str(c, sizeof(c), p->milli);
    int n = gs__say(why, size, "tenant %s: GPUQuota %s %s %s/%s GPUs", ts->name, q->key,
                    over_total ? "total" : "shared", a, b);
    if (used < cap) /* room is left, only not enough for this pod */
        gs__say(why + n, size - (size_t)n, ", the pod asks %s", c);
    return 0;
}

static int rquota_ok(const struct gs_tenancy *t, const struct rpod *p, char *why, size_t size)
{
    static const char *const res[5] = {"requests.nvidia.com/gpu", "requests.nvidia.com/gpumem",
                                       "requests.cpu", "requests.memory", "pods"};
    static const enum gs__unit unit[5] = {GS_UNIT_COUNT, GS_UNIT_COUNT, GS_UNIT_MILLI, GS_UNIT_MIB,
                                          GS_UNIT_COUNT};
    int64_t add[5] = {p->gpus, p->gpumem_mib, p->fit.cpu_milli, p->fit.memory_mib, 1};
    for (uint64_t m = p->rq_mask; m; m &= m - 1) {
        int32_t i = gs__tn_rquota_at(t, p, __builtin_ctzll(m));
        const struct gs_rquota_spec *q = &t->pol->rquotas[i];
        int64_t hard[5] = {q->gpu_milli == GS_UNSET ? GS_UNSET : q->gpu_milli / 1000, q->gpumem_mib,
                           q->cpu_milli, q->memory_mib, q->pods};
        for (int r = 0; r < 5; r++)
            if (hard[r] != GS_UNSET && t->rq_used[i][r] + add[r] > hard[r]) {
                char u[GS_QUANTITY_STR_MAX], a[GS_QUANTITY_STR_MAX], h[GS_QUANTITY_STR_MAX];
                gs__say(why, size, "namespace %s: %s %s+%s > %s (ResourceQuota %s)", q->ns, res[r],
                        gs__amount(unit[r], t->rq_used[i][r], u), gs__amount(unit[r], add[r], a),
                        gs__amount(unit[r], hard[r], h), q->name);
                return 0;
            }
    }
    return 1;
}

/* Volcano's capacity and proportion plugins (allocatable: allocated + the pod's request within
 * the queue's capability in every resource the capability names; the request counts pods: 1):
 * whole cards within nvidia.com/gpu, shares within it x overcommitRatio; cpu, memory, pods. */
static int queue_cap_ok(const struct gs_tenancy *t, const struct rpod *p, char *why, size_t size)
{
    if ((size_t)p->queue >= t->pol->nqueues)
        return 1;
    const struct gs_queue_spec *q = &t->pol->queues[p->queue];
    if (q->cap_gpu_milli != GS_UNSET) {
        int64_t cap = gs_queue_gpu_cap_milli(q, p->fit.whole);
        if (t->q_used[p->queue] + p->milli > cap) {
            char a[32], b[32], c[32];
            gs__milli_str(a, sizeof(a), t->q_used[p->queue]);
            gs__milli_str(b, sizeof(b), p->milli);
            gs__milli_str(c, sizeof(c), cap);
            gs__say(why, size, "queue %s: nvidia.com/gpu %s+%s > capability %s", q->name, a, b, c);
            return 0;
        }
    }
    static const char *const res[3] = {"cpu", "memory", "pods"};
    static const enum gs__unit unit[3] = {GS_UNIT_MILLI, GS_UNIT_MIB, GS_UNIT_COUNT};
    const int64_t cap[3] = {q->cap_cpu_milli, q->cap_memory_mib, q->cap_pods};
    const int64_t add[3] = {p->fit.cpu_milli, p->fit.memory_mib, 1};
    for (int r = 0; r < 3; r++) {
        const int64_t *used = t->q_res[p->queue];
        if (cap[r] == GS_UNSET || used[r] + add[r] <= cap[r])
            continue;
        char u[GS_QUANTITY_STR_MAX], a[GS_QUANTITY_STR_MAX], c[GS_QUANTITY_STR_MAX];
        gs__say(why, size, "queue %s: %s %s+%s > capability %s", q->name, res[r],
                gs__amount(unit[r], used[r], u), gs__amount(unit[r], add[r], a),
                gs__amount(unit[r], cap[r], c));
        return 0;
    }
    return 1;
}

int gs__quota_check(struct gs_tenancy *t, struct rpod *p, int model, char *why, size_t size)
{
    if (!rquota_ok(t, p, why, size))
        return 0;
    if (t->way != GS_WAY_FULL)
        return 1;
    const struct gs_policy *pol = t->pol;
    if (!queue_cap_ok(t, p, why, size))
        return 0;
    if ((size_t)p->tenant < pol->ntenants) {
        const struct gs_tenant_spec *ts = &pol->tenants[p->tenant];
        if (ts->max_pods_per_user != GS_UNSET && p->sp->user[0] &&
            gs__tn_user_running(t, p) >= ts->max_pods_per_user) {
            gs__say(why, size, "tenant %s: user %s has %d pods running (maxPodsPerUser %d)",
                    ts->name, p->sp->user[0] ? p->sp->user : "(none)", gs__tn_user_running(t, p),
                    ts->max_pods_per_user);
            return 0;
        }
        if (ts->has_quota && p->milli > 0 && model >= 0)
            return gpuquota_bucket(t, p, model, why, size) ? 1 : 0;
    }
    return 1;
}

/*
 * The part of its GPUQuota a running pod put back (a reload, a restart) counts in: the part it was
 * held in, whatever the order pods are put back in, or else the one the quota gives it now; and
 * always one, over the quota too (a quota lowered under pods that run counts them all, as a
 * Kubernetes ResourceQuota lowered under its pods does). Dedicated only while the tenant's
 * dedicated cards last, so no lowered quota keeps more out of the guarantee's reach than it
 * dedicates; the rest is borrowed, which the guarantee may take back.
 */
static int8_t restored_part(const struct gs_tenancy *t, const struct rpod *p, int model)
{
    int part = t->restore_charged ? t->restore_charged : p->charged ? p->charged : 1;
    size_t k = (size_t)p->tenant * GS_MODEL_MAX + (size_t)model;
    return part == 1 &&
                   t->ded_used[k] + p->milli <= model_quota(t, p->tenant, model)->dedicated_milli
               ? 1
               : 2;
}

void gs__quota_charge(struct gs_tenancy *t, struct rpod *p, int model, int sign, int restore)
{
    int64_t add[5] = {p->gpus, p->gpumem_mib, p->fit.cpu_milli, p->fit.memory_mib, 1};
    for (uint64_t m = p->rq_mask; m; m &= m - 1)
        for (int r = 0; r < 5; r++)
            t->rq_used[gs__tn_rquota_at(t, p, __builtin_ctzll(m))][r] += sign * add[r];
    if (p->user >= 0) /* a probed pod's user may be one no pod has had: it holds nothing */
        t->user_running[p->user] += sign;
    t->q_used[p->queue] += sign * p->milli;
    t->q_res[p->queue][0] += sign * p->fit.cpu_milli;
    t->q_res[p->queue][1] += sign * p->fit.memory_mib;
    t->q_res[p->queue][2] += sign;
    if (sign > 0 && !restore) {
        char why[8];
        p->model = model;
        int quota = t->way == GS_WAY_FULL && (size_t)p->tenant < t->pol->ntenants &&
                    t->pol->tenants[p->tenant].has_quota && p->milli > 0 && model >= 0;
        p->charged = quota ? (int8_t)gpuquota_bucket(t, p, model, why, sizeof(why)) : 0;
        if (quota && t->restoring && model_quota(t, p->tenant, model))
            p->charged = restored_part(t, p, model);
    }
    if (p->charged && p->model >= 0) {
        size_t k = (size_t)p->tenant * GS_MODEL_MAX + (size_t)p->model;
        (p->charged == 1 ? t->ded_used : t->sh_used)[k] += sign * p->milli;
        t->shw_used[k] += p->charged == 2 && p->fit.whole ? sign * p->milli : 0;
    }
}

int gs__tn_in_dedicated(const struct gs_tenancy *t, const struct rpod *p, int model)
{
    const struct gs_model_quota *q = model_quota(t, p->tenant, model);
    return q && t->pol->tenants[p->tenant].has_quota &&
           t->ded_used[(size_t)p->tenant * GS_MODEL_MAX + (size_t)model] + p->milli <=
               q->dedicated_milli;
}

int gs__tn_takes_dedicated(const struct gs_tenancy *t, const struct rpod *p, int model)
{
    if (gs__tn_in_dedicated(t, p, model))
        return 0;
    int64_t unused = 0;
    for (size_t u = 0; u < t->pol->ntenants; u++) {
        const struct gs_model_quota *q = model_quota(t, (int32_t)u, model);
        int64_t ded = t->ded_used[u * GS_MODEL_MAX + (size_t)model];
        if ((int32_t)u != p->tenant && q && t->pol->tenants[u].has_quota &&
            q->dedicated_milli > ded)
            unused += q->dedicated_milli - ded;
    }
    /* Dedicated quota is asked in whole cards: what is left of a shared card is no room for it. */
    return unused > 0 && gs_fleet_model_free_cards(t->fleet, model) * 1000LL - p->milli < unused;
}

/* Deserved shares of the queues over the cluster's cards (Volcano proportion). */
void gs__tn_deserve(struct gs_tenancy *t)
{
    int64_t *limit = t->q_deserved + t->nqueues; /* scratch half of the array */
    for (size_t q = 0; q < t->nqueues; q++) {
        limit[q] = t->q_demand[q];
        if (q < t->pol->nqueues && t->pol->queues[q].cap_gpu_milli != GS_UNSET &&
            t->pol->queues[q].cap_gpu_milli < limit[q])
            limit[q] = t->pol->queues[q].cap_gpu_milli;
    }
    gs_fairshare_waterfill(gs_fleet_card_count(t->fleet) * 1000, t->q_weight, limit, t->nqueues,
                           t->q_deserved);
}

/*
 * Volcano's enqueue step, for a PodGroup with spec.minResources ("the minimal resource of
 * members/tasks to run the pod group; if there's not enough resources to start all tasks, the
 * scheduler will not start anyone": volcano-sh/apis, scheduling/v1beta1 PodGroupSpec). The
 * PodGroup moves from Pending to Inqueue, and its members may be placed (minMember all or
 * nothing, as before), only when in every resource its minResources names (> 0, as the
 * overcommit plugin's LessEqualWithDimension compares only the requested ones):
 * - queue (volcano-sh/volcano pkg/scheduler/plugins/proportion and capacity, JobEnqueueableFn):
 *   minResources + the queue's allocated + what its admitted PodGroups hold <= its capability
 *   (capacity's realCapability: at most the cluster's total), where the queue has one; the
 *   capacity plugin's elastic deduction is not made, members beyond minResources count;
 * - tenant (not Volcano's, quota_admits()): minResources nvidia.com/gpu <= the sum of its
 *   tenant's GPUQuota totals, where quotas apply;
 * - cluster (pkg/scheduler/plugins/overcommit): minResources + what admitted PodGroups hold <=
 *   the cluster's total x overcommit-factor (its default, 1.2) - what running pods use.
 * What an admitted PodGroup holds: its minResources while in phase Inqueue; while minMember
 * members or more run (phase Running), what its minResources exceed their requests by (the
 * plugins' GetInqueueResource); else nothing. Units: milli-GPU, milli-CPU, MiB, pods (each pod
 * counts pods: 1, as Volcano's GetPodResourceRequest adds it; the cluster's total is its nodes'
 * maxPods).
 */
enum { R_GPU, R_CPU, R_MEM, R_PODS, R_N };

static int min_of(const struct gs_podgroup_spec *pg, int64_t v[R_N])
{
    v[R_GPU] = pg->min_gpu_milli;
    v[R_CPU] = pg->min_cpu_milli;
    v[R_MEM] = pg->min_memory_mib;
    v[R_PODS] = pg->min_pods;
    return v[R_GPU] > 0 || v[R_CPU] > 0 || v[R_MEM] > 0 || v[R_PODS] > 0;
}

/* @a + @b (>= 0), INT64_MAX past it: sums of what the input bounds one by one only. */
static int64_t sat(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static void add_pod(int64_t v[R_N], const struct rpod *p)
{
    v[R_GPU] = sat(v[R_GPU], p->milli);
    v[R_CPU] = sat(v[R_CPU], p->fit.cpu_milli);
    v[R_MEM] = sat(v[R_MEM], p->fit.memory_mib);
    v[R_PODS] = sat(v[R_PODS], 1);
}

/* The queue of gang @g: its members' (-1 before the first). */
static int32_t gang_queue(const struct gs_tenancy *t, const struct gang *g)
{
    return g->members.n ? t->pods[g->members.v[0]].queue : -1;
}

/*
 * The tenant of PodGroup @group: its members' (a pod's tenant is its namespace's), or before the
 * first, the one whose namespaces hold the PodGroup's; -1 none (a namespace no tenant names).
 */
static int32_t gang_tenant(const struct gs_tenancy *t, int32_t group)
{
    const struct gang *g = &t->gangs[group];
    if (g->members.n) {
        int32_t tn = t->pods[g->members.v[0]].tenant;
        return (size_t)tn < t->pol->ntenants ? tn : -1;
    }
    return gs__tn_ns_tenant(t, t->pgs[group]->ns);
}

/* The most milli-GPU the tenant of PodGroup @group may ever hold under its GPUQuota, the sum of
 * its totals over the GPU models it names; INT64_MAX where nothing bounds it (no GPUQuota, no
 * tenant, or a way that applies no quota). */
static int64_t quota_gpu(const struct gs_tenancy *t, int32_t group)
{
    int32_t tn = t->way == GS_WAY_FULL ? gang_tenant(t, group) : -1;
    const struct gs_tenant_spec *ts = tn >= 0 ? &t->pol->tenants[tn] : NULL;
    int64_t total = 0;
    if (!ts || !ts->has_quota)
        return INT64_MAX;
    for (int k = 0; k < ts->nquotas; k++)
        if (ts->quotas[k].model >= 0)
            total = sat(total, ts->quotas[k].total_milli);
    return total;
}

/* What the admitted PodGroups but @self hold, in all queues (@held[0]) and in queue @q (@held[1]):
 * of nvidia.com/gpu, no more than its tenant may ever hold (quota_gpu()), as one admitted before
 * its GPUQuota was lowered (or before that bound was applied) could never use more. */
static void held_by_admitted(const struct gs_tenancy *t, int32_t self, int32_t q,
                             int64_t held[2][R_N])
{
    for (size_t i = 0; i < t->npgs; i++) {
        const struct gang *g = &t->gangs[i];
        int64_t min[R_N], alloc[R_N] = {0};
        int running = g->running >= g->min; /* allocated, not Succeeded, as Volcano counts */
        if ((int32_t)i == self || !min_of(t->pgs[i], min) || (!running && !g->inqueue))
            continue;
        int64_t bound = min[R_GPU] > 0 ? quota_gpu(t, (int32_t)i) : INT64_MAX;
        min[R_GPU] = min[R_GPU] < bound ? min[R_GPU] : bound;
        for (size_t k = 0; running && k < g->members.n; k++)
            if (t->pods[g->members.v[k]].state == GS_POD_RUNNING)
                add_pod(alloc, &t->pods[g->members.v[k]]);
        for (int r = 0; r < R_N; r++) {
            int64_t h = min[r] > alloc[r] ? min[r] - alloc[r] : 0;
            held[0][r] = sat(held[0][r], h);
            held[1][r] = sat(held[1][r], gang_queue(t, g) == q ? h : 0);
        }
    }
}

/* The cluster's total of each resource; INT64_MAX where a node does not bound it (host CPU or
 * memory not given). */
static void cluster_total(const struct gs_tenancy *t, int64_t total[R_N])
{
    const struct gs_policy *pol = t->pol;
    total[R_GPU] = gs_fleet_card_count(t->fleet) * 1000;
    total[R_CPU] = total[R_MEM] = total[R_PODS] = 0;
    for (size_t i = 0; i < pol->nnodes; i++) {
        const struct gs_node_template *nt = &pol->templates[pol->nodes[i].template_index];
        int64_t v[3] = {nt->cpu_milli, nt->memory_mib, gs_node_max_pods(nt)};
        for (int r = 0; r < 3; r++)
            total[R_CPU + r] = v[r] == GS_UNSET ? INT64_MAX : sat(total[R_CPU + r], v[r]);
    }
}

static void amount(char *buf, size_t size, int r, int64_t v)
{
    if (r == R_CPU || r == R_MEM || r == R_PODS) /* as Kubernetes writes them: 2500m, 11Gi, 4 */
        gs__amount(r == R_CPU ? GS_UNIT_MILLI : r == R_MEM ? GS_UNIT_MIB : GS_UNIT_COUNT, v, buf);
    else
        gs__milli_str(buf, size, v);
}

static const char *const res_name[R_N] = {"nvidia.com/gpu", "cpu", "memory", "pods"};

/* Volcano's overcommit plugin's default overcommit-factor, 1.2: @total (>= 0) and a fifth more.
 * OVERCOMMIT_FACTOR is how reasons write it. */
#define OVERCOMMIT_FACTOR "1.2"
static int64_t overcommitted(int64_t total)
{
    return sat(total, total / 5);
}

/* The first resource @min names whose @use + @min passes @cap (INT64_MAX: none), or -1. */
static int over(const int64_t min[R_N], const int64_t use[R_N], const int64_t cap[R_N])
{
    for (int r = 0; r < R_N; r++)
        if (min[r] > 0 && cap[r] != INT64_MAX && sat(use[r], min[r]) > cap[r])
            return r;
    return -1;
}

/* Why PodGroup @pg waits: resource @r's @min exceeds what queue @queue (NULL: the cluster) may
 * admit; @use of @cap (queue) or @use in use and @held held, of @cap x 1.2 (cluster). Return: 0. */
static int say_over(char *why, size_t size, const struct gs_podgroup_spec *pg, int r, int64_t min,
                    const char *queue, int64_t use, int64_t cap, int64_t held)
{
    char a[32], b[32], c[32], d[32];
    amount(a, sizeof(a), r, min);
    amount(b, sizeof(b), r, use);
    amount(c, sizeof(c), r, cap);
    amount(d, sizeof(d), r, held);
    if (queue)
        gs__say(why, size,
                "PodGroup %s/%s minResources %s %s exceed what queue %s may admit: %s of "
                "capability %s in use",
                pg->ns, pg->name, res_name[r], a, queue, b, c);
    else
        gs__say(why, size,
                "PodGroup %s/%s minResources %s %s exceed what the cluster may admit: %s in use "
                "and %s held by PodGroups admitted, of %s x overcommit-factor " OVERCOMMIT_FACTOR,
                pg->ns, pg->name, res_name[r], a, b, d, c);
    return 0;
}

/*
 * Does PodGroup @group's minResources nvidia.com/gpu pass what its tenant may ever hold under its
 * GPUQuota, the sum of its `total` over the GPU models it names? Volcano bounds minResources by
 * its queue's capability only (the proportion plugin's JobEnqueueableFn); a GPUQuota bounds a
 * tenant's pods as a capability bounds a queue's, so a PodGroup of a tenant with no queue
 * capability could otherwise hold, admitted and never to run more than the quota lets, what
 * every other tenant's PodGroups are admitted against. Only where quotas apply (way full); no
 * GPUQuota, no bound. Return: 1 it passes; 0 with @why naming the quota and both figures.
 */
static int quota_admits(const struct gs_tenancy *t, int32_t group, char *why, size_t size)
{
    const struct gs_podgroup_spec *pg = t->pgs[group];
    int64_t total = pg->min_gpu_milli > 0 ? quota_gpu(t, group) : INT64_MAX;
    if (pg->min_gpu_milli <= total)
        return 1;
    char a[32], b[32];
    gs__milli_str(a, sizeof(a), pg->min_gpu_milli);
    gs__milli_str(b, sizeof(b), total);
    gs__say(why, size,
            "PodGroup %s/%s minResources nvidia.com/gpu %s exceed what tenant %s may ever hold: "
            "its GPUQuota's total over its GPU models is %s",
            pg->ns, pg->name, a, t->pol->tenants[gang_tenant(t, group)].name, b);
    return 0;
}

int gs__tn_enqueue(struct gs_tenancy *t, int32_t group, char *why, size_t size)
{
    struct gang *g = &t->gangs[group];
    const struct gs_podgroup_spec *pg = t->pgs[group];
    int64_t min[R_N], total[R_N], used[R_N] = {0}, qalloc[R_N] = {0}, held[2][R_N] = {{0}};
    if (g->inqueue || !min_of(pg, min))
        return 1;
    if (!quota_admits(t, group, why, size))
        return 0;
    int32_t q = gang_queue(t, g);
    for (size_t i = 0; i < t->npods; i++)
        if (t->pods[i].state == GS_POD_RUNNING) {
            add_pod(used, &t->pods[i]);
            if (t->pods[i].queue == q)
                add_pod(qalloc, &t->pods[i]);
        }
    held_by_admitted(t, group, q, held);
    cluster_total(t, total);
    const struct gs_queue_spec *qs =
        q >= 0 && (size_t)q < t->pol->nqueues ? &t->pol->queues[q] : NULL;
    int64_t cap[R_N], quse[R_N], idle[R_N];
    for (int r = 0; r < R_N; r++) {
        int64_t c = !qs          ? GS_UNSET
                    : r == R_GPU ? qs->cap_gpu_milli
                    : r == R_CPU ? qs->cap_cpu_milli
                    : r == R_MEM ? qs->cap_memory_mib
                                 : qs->cap_pods;
        cap[r] = c == GS_UNSET ? INT64_MAX : c > total[r] ? total[r] : c;
        quse[r] = sat(qalloc[r], held[1][r]);
        idle[r] = total[r] == INT64_MAX ? INT64_MAX : overcommitted(total[r]) - used[r];
    }
    int r = qs ? over(min, quse, cap) : -1;
    if (r >= 0)
        return say_over(why, size, pg, r, min[r], qs->name, quse[r], cap[r], 0);
    if ((r = over(min, held[0], idle)) >= 0)
        return say_over(why, size, pg, r, min[r], NULL, used[r], total[r], held[0][r]);
    g->inqueue = 1;
    return 1;
}
