/*
 * gpusched validate FILE...: load scenario files as the simulator would, resolve them, and print
 * what was understood (text, or JSON with --json), with every warning naming file:line:col.
 * Exit status: 0 loaded (warnings or not), 2 bad input or usage, 1 out of memory or I/O failure.
 */
#include "cli.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/fleet.h"
#include "gpusched/grow.h"
#include "gpusched/mig.h"
#include "gpusched/scenario.h"
#include "gpusched/sched.h"
#include "gpusched/tenancy.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARN_KEEP  10000 /* warnings kept for the report; the count goes on */
#define LIST_SHOWN 50    /* namespaces of pods listed one by one */

struct warnings {
    char **msg;
    size_t n, kept, cap;
    int oom;
};

static void on_warn(void *ud, const char *msg)
{
    struct warnings *w = ud;
    w->n++;
    if (w->kept >= WARN_KEEP)
        return;
    char **m = gs_grow(w->msg, &w->cap, w->kept + 1, sizeof(*m), 64);
    if (!m) {
        w->oom = 1;
        return;
    }
    w->msg = m;
    if ((w->msg[w->kept] = strdup(msg)) != NULL)
        w->kept++;
    else
        w->oom = 1;
}

static void warnings_free(struct warnings *w)
{
    for (size_t i = 0; i < w->kept; i++)
        free(w->msg[i]);
    free(w->msg);
}

/* milli() - @v thousandths as a decimal: 16000 "16", 1300 "1.3", 500 "0.5"; "-" when unset. */
static const char *milli(int64_t v, char *buf, size_t size)
{
    if (v == GS_UNSET)
        return "-";
    int64_t frac = v % 1000;
    int digits = 3;
    if (!frac) {
        snprintf(buf, size, "%lld", (long long)(v / 1000));
        return buf;
    }
    while (frac % 10 == 0) {
        frac /= 10;
        digits--;
    }
    snprintf(buf, size, "%lld.%0*lld", (long long)(v / 1000), digits, (long long)frac);
    return buf;
}

static const char *num(int64_t v, char *buf, size_t size)
{
    if (v == GS_UNSET)
        return "-";
    snprintf(buf, size, "%lld", (long long)v);
    return buf;
}

/* where() - "FILE:LINE:COL", the file name escaped as messages write it (a name may hold any
 * byte but '/' and NUL: none of it may move the cursor or recolour the terminal). */
static const char *where(const struct gs_scn_src *s, char *buf, size_t size)
{
    char file[sizeof(s->file) + 1];
    snprintf(file, sizeof(file), "%.*s", (int)sizeof(s->file), s->file);
    size_t n = gs_text_escape(buf, size, file);
    snprintf(buf + n, size - n, ":%u:%u", s->line, s->col);
    return buf;
}

static const char *model_name(int m)
{
    const struct gs_gpu_model *g = gs_catalog_at(m);
    return g ? g->name : "-";
}

/* --- effective limits per namespace --- */

struct eff {
    const char *ns;
    int tenant;                           /* -1 = none */
    int64_t container_gpu;                /* tightest LimitRange max, milli */
    int64_t limit_pod_gpu;                /* tightest LimitRange max per Pod, milli */
    const struct gs_limit_range_spec *lr; /* which */
    int64_t ns_gpu;                       /* tightest ResourceQuota, milli */
    const struct gs_rquota_spec *rq;      /* which */
    int64_t pod_gpu;                      /* what a one-container pod may ask, milli */
    const char *pod_from;                 /* which limit that is */
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ns_index() - the place of @ns in the sorted, distinct @v. */
static size_t ns_index(const char **v, size_t n, const char *ns)
{
    const char **p = bsearch(&ns, v, n, sizeof(*v), cmp_str);
    return (size_t)(p - v);
}

/* pod_limit() - what a one-container pod of @e may ask: the tightest cap, and which it is. */
static void pod_limit(const struct gs_scenario *s, struct eff *e)
{
    int64_t per_pod = e->tenant >= 0 && s->policy.tenants[e->tenant].max_gpus_per_pod != GS_UNSET
                          ? (int64_t)s->policy.tenants[e->tenant].max_gpus_per_pod * 1000
                          : GS_UNSET;
    e->pod_gpu = per_pod;
    e->pod_from = per_pod != GS_UNSET ? "GPUQuota maxGPUsPerPod" : NULL;
    if (e->container_gpu != GS_UNSET && (per_pod == GS_UNSET || e->container_gpu < per_pod)) {
        e->pod_gpu = e->container_gpu;
        e->pod_from = "LimitRange max per container";
    }
    if (e->limit_pod_gpu != GS_UNSET && (e->pod_gpu == GS_UNSET || e->limit_pod_gpu < e->pod_gpu)) {
        e->pod_gpu = e->limit_pod_gpu;
        e->pod_from = "LimitRange max per Pod";
    }
    if (e->ns_gpu != GS_UNSET && (e->pod_gpu == GS_UNSET || e->ns_gpu < e->pod_gpu)) {
        e->pod_gpu = e->ns_gpu;
        e->pod_from = "ResourceQuota of the namespace";
    }
}

/*
 * effective() - the GPU limits of every namespace that has a tenant, quota or limit range,
 * sorted by namespace; O(records log namespaces). Return: the array (*@n entries) or NULL.
 */
static struct eff *effective(const struct gs_scenario *s, size_t *n)
{
    size_t cap = s->policy.nrquotas + s->policy.nlimit_ranges + 1, k = 0, u = 0;
    for (size_t t = 0; t < s->policy.ntenants; t++)
        cap += (size_t)s->policy.tenants[t].nnamespaces;
    const char **v = malloc(cap * sizeof(*v));
    struct eff *e = calloc(cap, sizeof(*e));
    if (!v || !e) {
        free(v);
        free(e);
        return NULL;
    }
    for (size_t t = 0; t < s->policy.ntenants; t++)
        for (int i = 0; i < s->policy.tenants[t].nnamespaces; i++)
            v[k++] = s->policy.tenants[t].namespaces[i];
    for (size_t i = 0; i < s->policy.nrquotas; i++)
        v[k++] = s->policy.rquotas[i].ns;
    for (size_t i = 0; i < s->policy.nlimit_ranges; i++)
        v[k++] = s->policy.limit_ranges[i].ns;
    qsort(v, k, sizeof(*v), cmp_str);
    for (size_t i = 0; i < k; i++)
        if (!u || strcmp(v[u - 1], v[i]) != 0)
            v[u++] = v[i];
    for (size_t i = 0; i < u; i++) {
        e[i].ns = v[i];
        e[i].tenant = gs_scenario_tenant_of(s, v[i]);
        e[i].container_gpu = e[i].ns_gpu = e[i].limit_pod_gpu = GS_UNSET;
    }
    for (size_t i = 0; i < s->policy.nlimit_ranges; i++) { /* the tightest of each namespace */
        const struct gs_limit_range_spec *r = &s->policy.limit_ranges[i];
        struct eff *x = &e[ns_index(v, u, r->ns)];
        if (r->max_gpu_milli != GS_UNSET &&
            (x->container_gpu == GS_UNSET || r->max_gpu_milli < x->container_gpu))
            x->container_gpu = r->max_gpu_milli, x->lr = r;
        if (r->pod_max_gpu_milli != GS_UNSET &&
            (x->limit_pod_gpu == GS_UNSET || r->pod_max_gpu_milli < x->limit_pod_gpu))
            x->limit_pod_gpu = r->pod_max_gpu_milli;
    }
    for (size_t i = 0; i < s->policy.nrquotas; i++) {
        const struct gs_rquota_spec *q = &s->policy.rquotas[i];
        struct eff *x = &e[ns_index(v, u, q->ns)];
        if (q->gpu_milli != GS_UNSET && (x->ns_gpu == GS_UNSET || q->gpu_milli < x->ns_gpu))
            x->ns_gpu = q->gpu_milli, x->rq = q;
    }
    for (size_t i = 0; i < u; i++)
        pod_limit(s, &e[i]);
    free(v);
    *n = u;
    return e;
}

/* model_per_pod() - what one pod may ask of a quota's model: maxGPUsPerPod, or the total. */
static int64_t model_per_pod(const struct gs_tenant_spec *t, const struct gs_model_quota *q)
{
    int64_t cap = q->total_milli / 1000 * 1000; /* a pod asks for whole cards of a quota */
    if (t->max_gpus_per_pod != GS_UNSET && (int64_t)t->max_gpus_per_pod * 1000 < cap)
        cap = (int64_t)t->max_gpus_per_pod * 1000;
    return cap;
}

/* What the reports derive from the records, computed once: O(records log records). */
struct derived {
    struct eff *eff; /* per namespace, sorted */
    size_t neff;
    size_t *tpl_nodes; /* nodes per template */
};

static int derive(const struct gs_scenario *s, struct derived *dv)
{
    dv->eff = effective(s, &dv->neff);
    dv->tpl_nodes = calloc(s->policy.ntemplates + 1, sizeof(*dv->tpl_nodes));
    if (!dv->eff || !dv->tpl_nodes)
        return -ENOMEM;
    for (size_t k = 0; k < s->policy.nnodes; k++)
        if (s->policy.nodes[k].template_index >= 0 &&
            (size_t)s->policy.nodes[k].template_index < s->policy.ntemplates)
            dv->tpl_nodes[s->policy.nodes[k].template_index]++;
    return 0;
}

/* --- text report --- */

static void text_cluster(const struct gs_scenario *s, const struct derived *dv, FILE *f)
{
    char a[32], b[32];
    fprintf(f, "cluster: %zu node templates, %zu nodes\n", s->policy.ntemplates, s->policy.nnodes);
    for (size_t i = 0; i < s->policy.ntemplates; i++) {
        const struct gs_node_template *t = &s->policy.templates[i];
        size_t n = dv->tpl_nodes[i];
        fprintf(f, "  template %s: %d x %s, cpu %s milli, memory %s MiB, %d pods, %zu nodes; pcie",
                t->name, t->gpus, t->gpus ? model_name(t->model) : "no GPU",
                num(t->cpu_milli, a, sizeof(a)), num(t->memory_mib, b, sizeof(b)),
                (int)gs_node_max_pods(t), n);
        for (int g = 0; g < t->gpus; g++)
            fprintf(f, " %d", t->pcie_domain[g]);
        fprintf(f, "; nvlink");
        for (int g = 0; g < t->gpus; g++)
            t->nvlink_group[g] == GS_NO_GROUP ? fprintf(f, " -")
                                              : fprintf(f, " %d", t->nvlink_group[g]);
        if (t->timeslice_replicas > 0)
            fprintf(f, "; time slicing %d replicas per GPU", t->timeslice_replicas);
        fprintf(f, "\n");
    }
    for (size_t i = 0; i < s->policy.nnodes; i++) { /* as kubectl describe node writes them */
        const struct gs_scn_node *n = &s->policy.nodes[i];
        for (int32_t k = 0; k < n->ntaints; k++) {
            const struct gs_taint *tn = &s->policy.taints[n->taint_first + k];
            if (!k)
                fprintf(f, "  node %s taints:", n->name);
            fprintf(f, " %s%s%s:%s%s", tn->key, tn->value[0] ? "=" : "", tn->value,
                    gs_effect_name(tn->effect), k + 1 == n->ntaints ? "\n" : ",");
        }
    }
}

static void text_tiers(const struct gs_scenario *s, FILE *f)
{
    static const char *const strat[] = {"colocate", "prefer-colocate", "spread"};
    static const char *const iso[] = {"exclusive", "soft", "hard"};
    char a[32], b[32], w[160];
    fprintf(f, "tiers:\n");
    for (int t = GS_TIER_NVLINK; t <= GS_TIER_AZ; t++) {
        const struct gs_tier_spec *ts = &s->policy.tiers[t];
        if (!ts->defined) {
            fprintf(f, "  %-6s (not defined)\n", gs_tier_name((enum gs_tier)t));
            continue;
        }
        fprintf(f,
                "  %-6s strategy %s, sharing %s%s, overcommit %s, isolation %s, maxSkew %s  "
                "(%s)\n",
                gs_tier_name((enum gs_tier)t), strat[ts->strategy], ts->sharing ? "on" : "off",
                ts->timeslice ? " (time slicing)" : "", milli(ts->overcommit_milli, a, sizeof(a)),
                iso[ts->isolation], num(ts->max_skew, b, sizeof(b)), where(&ts->src, w, sizeof(w)));
    }
}

static void text_tenant(const struct gs_tenant_spec *t, FILE *f)
{
    char a[32], b[32], c[32], d[32], w[160];
    fprintf(f, "  %s  namespaces", t->name);
    for (int i = 0; i < t->nnamespaces; i++)
        fprintf(f, "%s%s", i ? ", " : " ", t->namespaces[i]);
    fprintf(f,
            "; tier %s; priority %s; gpuCount %s; priority class %s; GPUQuota %s, topology policy "
            "entry %s  "
            "(%s)\n",
            gs_tier_name(t->tier), num(t->priority, a, sizeof(a)),
            milli(t->gpu_count_milli, b, sizeof(b)), *t->priority_class ? t->priority_class : "-",
            t->has_quota ? "yes" : "no", t->in_policy ? "yes" : "no", where(&t->src, w, sizeof(w)));
    for (int i = 0; i < t->nquotas; i++) {
        const struct gs_model_quota *q = &t->quotas[i];
        fprintf(f, "    %s (%s): total %s, dedicated %s, shared %s; per pod at most %s\n", q->key,
                model_name(q->model), milli(q->total_milli, a, sizeof(a)),
                milli(q->dedicated_milli, b, sizeof(b)), milli(q->shared_milli, c, sizeof(c)),
                milli(model_per_pod(t, q), d, sizeof(d)));
    }
    if (t->has_quota)
        fprintf(f,
                "    limits: maxGPUsPerPod %s, maxPodsPerUser %s; topologyAwareness %s, "
                "gangScheduling %s, binPacking %s\n",
                num(t->max_gpus_per_pod, a, sizeof(a)), num(t->max_pods_per_user, b, sizeof(b)),
                t->topology_awareness ? "on" : "off", t->gang_scheduling ? "on" : "off",
                t->bin_packing ? "on" : "off");
}

static void text_queues(const struct gs_scenario *s, FILE *f)
{
    char a[32], b[32], c[32], d[32], e[32], w[160];
    fprintf(f, "queues:%s\n", s->policy.nqueues ? "" : " none");
    for (size_t i = 0; i < s->policy.nqueues; i++) {
        const struct gs_queue_spec *q = &s->policy.queues[i];
        fprintf(f,
                "  %s  weight %d, capability gpu %s cpu %s memory %s MiB pods %s, reclaimable %s, "
                "overcommit %s  (%s)\n",
                q->name, q->weight, milli(q->cap_gpu_milli, a, sizeof(a)),
                milli(q->cap_cpu_milli, b, sizeof(b)), num(q->cap_memory_mib, c, sizeof(c)),
                num(q->cap_pods, e, sizeof(e)), q->reclaimable ? "yes" : "no",
                milli(q->overcommit_milli, d, sizeof(d)), where(&q->src, w, sizeof(w)));
    }
    fprintf(f, "podgroups:%s\n", s->policy.npodgroups ? "" : " none");
    for (size_t i = 0; i < s->policy.npodgroups; i++) {
        const struct gs_podgroup_spec *g = &s->policy.podgroups[i];
        char mr[128] = "-";
        if (g->min_gpu_milli || g->min_cpu_milli || g->min_memory_mib || g->min_pods)
            snprintf(mr, sizeof(mr), "gpu %s cpu %s memory %s MiB pods %lld", /* 0: not named */
                     milli(g->min_gpu_milli, a, sizeof(a)), milli(g->min_cpu_milli, b, sizeof(b)),
                     num(g->min_memory_mib, c, sizeof(c)), (long long)g->min_pods);
        fprintf(f, "  %s/%s  minMember %d, queue %s, priority class %s, minResources %s  (%s)\n",
                g->ns, g->name, g->min_member, gs_podgroup_queue(g),
                *g->priority_class ? g->priority_class : "-", mr, where(&g->src, w, sizeof(w)));
    }
    fprintf(f, "priority classes:%s\n", s->policy.npriority_classes ? "" : " none");
    for (size_t i = 0; i < s->policy.npriority_classes; i++) {
        const struct gs_priority_class_spec *p = &s->policy.priority_classes[i];
        fprintf(f, "  %s  value %d%s%s  (%s)\n", p->name, p->value,
                p->never_preempt ? ", never preempts" : "",
                p->global_default ? ", global default" : "", where(&p->src, w, sizeof(w)));
    }
}

static void text_profiles(const struct gs_scenario *s, FILE *f)
{
    char a[32], b[32], w[160];
    fprintf(f, "step profiles:%s\n", s->policy.nprofiles ? "" : " none");
    for (size_t i = 0; i < s->policy.nprofiles; i++) {
        struct gs_step_profile eff; /* an override is shown as the tenant gets the profile */
        const struct gs_step_profile *p = &s->policy.profiles[i];
        if (p->tenant[0] && gs_step_profile_for(&s->policy, p->name, p->tenant, &eff) == 0) {
            eff.src = p->src;
            p = &eff;
        }
        fprintf(f,
                "  %s%s%s  gpuShare %s, maxMemory %s MiB, overcommit %s, priority %d, preemptible "
                "%s  (%s)\n",
                p->tenant[0] ? p->tenant : "", p->tenant[0] ? " override of " : "", p->name,
                p->gpu_share ? "on" : "off", num(p->max_memory_mib, a, sizeof(a)),
                milli(p->overcommit_milli, b, sizeof(b)), p->priority,
                p->preemptible ? "yes" : "no", where(&p->src, w, sizeof(w)));
    }
}

/* The GpuClusterPolicy: which models may turn MIG, with which profiles. */
static void text_mig_policy(const struct gs_scenario *s, FILE *f)
{
    static const char *const strategy[] = {"none", "single", "mixed"};
    if (!s->policy.has_mig_policy) {
        fprintf(f, "MIG policy: none (every MIG-capable model may turn MIG, any profile)\n");
        return;
    }
    const struct gs_mig_policy *p = &s->policy.mig_policy;
    char w[200];
    fprintf(f, "MIG policy: strategy %s  (%s)\n", strategy[p->strategy],
            where(&s->policy.mig_policy_src, w, sizeof(w)));
    if (p->ndevices == 0) /* only the models listed may turn MIG: a policy of none says so */
        fprintf(f, "  no spec.devices: no model turns MIG\n");
    for (int i = 0; i < p->ndevices; i++) {
        const struct gs_mig_model *m = gs_mig_model_at(p->devices[i].model);
        struct gs_scn_src at = s->policy.mig_policy_src;
        at.line = p->devices[i].line;
        at.col = p->devices[i].column;
        fprintf(f, "  %s: %s", m->name, p->devices[i].mig_enabled ? "MIG on," : "MIG off");
        for (int k = 0; k < m->nprofiles; k++)
            if (p->devices[i].allowed & (1u << k))
                fprintf(f, " %s", m->profiles[k].name);
        fprintf(f, "  (%s)\n", where(&at, w, sizeof(w)));
    }
}

static void text_rquotas(const struct gs_scenario *s, FILE *f)
{
    char a[32], b[32], c[32], d[32], m[32], w[160];
    fprintf(f, "namespace quotas:%s\n", s->policy.nrquotas ? "" : " none");
    for (size_t i = 0; i < s->policy.nrquotas; i++) {
        const struct gs_rquota_spec *q = &s->policy.rquotas[i];
        fprintf(f,
                "  %s/%s  nvidia.com/gpu %s, nvidia.com/gpumem %s MiB, cpu %s, memory %s MiB, "
                "pods %s",
                q->ns, q->name, milli(q->gpu_milli, a, sizeof(a)), num(q->gpumem_mib, m, sizeof(m)),
                milli(q->cpu_milli, b, sizeof(b)), num(q->memory_mib, c, sizeof(c)),
                num(q->pods, d, sizeof(d)));
        for (int k = 0; k < q->nscope_classes; k++)
            fprintf(f, "%s%s", k ? ", " : "; scope PriorityClass in ", q->scope_classes[k]);
        fprintf(f, "  (%s)\n", where(&q->src, w, sizeof(w)));
    }
    fprintf(f, "limit ranges:%s\n", s->policy.nlimit_ranges ? "" : " none");
    for (size_t i = 0; i < s->policy.nlimit_ranges; i++) {
        const struct gs_limit_range_spec *r = &s->policy.limit_ranges[i];
        char e[32], g[32], h[32], k2[32];
        fprintf(f,
                "  %s/%s  container nvidia.com/gpu max %s min %s default %s defaultRequest %s; "
                "memory MiB max %s min %s default %s defaultRequest %s  (%s)\n",
                r->ns, r->name, milli(r->max_gpu_milli, a, sizeof(a)),
                milli(r->min_gpu_milli, b, sizeof(b)), milli(r->default_gpu_milli, c, sizeof(c)),
                milli(r->default_request_gpu_milli, d, sizeof(d)),
                num(r->max_memory_mib, e, sizeof(e)), num(r->min_memory_mib, g, sizeof(g)),
                num(r->default_memory_mib, h, sizeof(h)),
                num(r->default_request_memory_mib, k2, sizeof(k2)), where(&r->src, w, sizeof(w)));
        if (r->pod_max_gpu_milli != GS_UNSET || r->pod_min_gpu_milli != GS_UNSET ||
            r->pod_max_memory_mib != GS_UNSET || r->pod_min_memory_mib != GS_UNSET ||
            r->pod_max_cpu_milli != GS_UNSET || r->pod_min_cpu_milli != GS_UNSET)
            fprintf(
                f,
                "  %s/%s  pod nvidia.com/gpu max %s min %s; memory MiB max %s min %s; cpu "
                "max %s min %s\n",
                r->ns, r->name, milli(r->pod_max_gpu_milli, a, sizeof(a)),
                milli(r->pod_min_gpu_milli, b, sizeof(b)), num(r->pod_max_memory_mib, e, sizeof(e)),
                num(r->pod_min_memory_mib, g, sizeof(g)), milli(r->pod_max_cpu_milli, c, sizeof(c)),
                milli(r->pod_min_cpu_milli, d, sizeof(d)));
    }
    fprintf(f, "vGPU classes:%s\n", s->policy.nvgpu_classes ? "" : " none");
    for (size_t i = 0; i < s->policy.nvgpu_classes; i++) {
        const struct gs_vgpu_class_spec *v = &s->policy.vgpu_classes[i];
        fprintf(f, "  %s  memory %lld MiB, cores %d %%, maxClients %d, shareable %s  (%s)\n",
                v->name, (long long)v->memory_mib, v->cores_pct, v->max_clients,
                v->shareable ? "yes" : "no", where(&v->src, w, sizeof(w)));
    }
    text_mig_policy(s, f);
}

static void text_effective(const struct gs_scenario *s, const struct derived *dv, FILE *f)
{
    char a[32], b[32], c[32];
    fprintf(f, "effective GPU limits:%s\n", dv->neff ? "" : " none");
    for (size_t i = 0; i < dv->neff; i++) {
        struct eff e = dv->eff[i];
        fprintf(f,
                "  namespace %s (tenant %s): per container %s%s%s, per pod %s%s%s%s, namespace "
                "%s%s%s\n",
                e.ns, e.tenant >= 0 ? s->policy.tenants[e.tenant].name : "-",
                milli(e.container_gpu, a, sizeof(a)), e.lr ? " by LimitRange " : "",
                e.lr ? e.lr->name : "", milli(e.pod_gpu, b, sizeof(b)), e.pod_from ? " (" : "",
                e.pod_from ? e.pod_from : "", e.pod_from ? ")" : "", milli(e.ns_gpu, c, sizeof(c)),
                e.rq ? " by ResourceQuota " : "", e.rq ? e.rq->name : "");
    }
}

/* count_pods() - pods asking for GPUs (cards, shares, vGPU slices, time-slice replicas or MIG)
 * and pods in gangs. */
static void count_pods(const struct gs_scenario *s, size_t *gpu, size_t *gang)
{
    *gpu = *gang = 0;
    for (size_t i = 0; i < s->npods; i++) {
        *gang += *s->pods[i].group != 0;
        for (int k = 0; k < s->pods[i].ncontainers; k++)
            if (s->pods[i].containers[k].gpu > 0 || *s->pods[i].containers[k].mig_profile ||
                s->pods[i].containers[k].gpu_shared > 0 || *s->pods[i].vgpu_class) {
                ++*gpu;
                break;
            }
    }
}

/* text_failure() - one nodeFailures, cardFailures or cardHolds entry as what it is: the three
 * share one array (gs_node_failure), told apart by gpu and xid, and a card's failure differs from
 * a node's in whether its pods wait again, which its Xid decides. */
static void text_failure(const struct gs_node_failure *x, FILE *f)
{
    char at[48], end[48];
    gs_duration_format(x->at_us, at, sizeof(at));
    if (x->restore_us != GS_UNSET)
        gs_duration_format(x->restore_us, end, sizeof(end));
    if (x->gpu < 0) {
        fprintf(f, "  node %s fails at %s", x->node, at);
        if (x->restore_us != GS_UNSET)
            fprintf(f, ", ready again at %s", end);
    } else if (x->xid == GS_XID_HELD) {
        fprintf(f, "  card %d of node %s held from %s until %s (its pods run on)", (int)x->gpu,
                x->node, at, end);
    } else {
        fprintf(f, "  card %d of node %s fails at %s", (int)x->gpu, x->node, at);
        if (x->xid)
            fprintf(f, ", Xid %d", (int)x->xid);
        else
            fprintf(f, ", no Xid given");
        fprintf(f, " (its pods %s)", gs_xid_loses_work(x->xid) ? "wait again" : "run on");
        if (x->restore_us != GS_UNSET)
            fprintf(f, ", healthy again at %s", end);
    }
    fputc('\n', f);
}

static void text_pods(const struct gs_scenario *s, FILE *f)
{
    size_t gang, gpu;
    count_pods(s, &gpu, &gang);
    fprintf(f, "pods: %zu (%zu ask for GPUs, %zu in gangs)\n", s->npods, gpu, gang);
    if (s->sim.defined) {
        char a[48];
        fprintf(f, "simulation: compare");
        for (int i = 0; i < s->sim.ncompare; i++)
            fprintf(f, " %s", s->sim.compare[i]);
        fprintf(f, "%s; horizon %s\n", s->sim.ncompare ? "" : " -",
                s->sim.horizon_us == GS_UNSET
                    ? "- (until the last pod ends)"
                    : gs_duration_format(s->sim.horizon_us, a, sizeof(a)));
        if (s->sim.now_us != GS_UNSET)
            fprintf(f, "  now %s\n", gs_duration_format(s->sim.now_us, a, sizeof(a)));
        if (s->sim.modes_defined)
            fprintf(f, "  card modes: convert %s, min hold %s\n", s->sim.convert ? "yes" : "no",
                    gs_duration_format(s->sim.min_hold_us, a, sizeof(a)));
        for (size_t i = 0; i < s->sim.ncards; i++) { /* a snapshot's, for --from-now */
            const struct gs_card_history *h = &s->sim.cards[i];
            fprintf(f, "  card %d of %s: %s since %s\n", (int)h->gpu, gs__cli_cell(h->node),
                    gs_card_mode_name((enum gs_card_mode)h->mode),
                    gs_duration_format(h->since_us, a, sizeof(a)));
        }
        for (size_t i = 0; i < s->sim.nfailures; i++)
            text_failure(&s->sim.failures[i], f);
    }
}

/* --- the scheduler profile (a KubeSchedulerConfiguration document) --- */

/* text_scores() - the score plugins and weights the scenario's pods are placed by, as the
 * multi-tenant scheduler reads the profile (gs__kubesched_policy()), not as the trace replay's
 * --config reads it: its other extension points are the scheduler's own. */
static void text_scores(const struct gs_scenario *s, FILE *f)
{
    const struct gs_policy *pol = &s->policy;
    char at[sizeof(pol->scores_src.file) + 32];
    if (!pol->has_scores)
        return;
    fprintf(f, "scheduler profile %s (%s): score", gs_policy_scheduler_name(pol),
            where(&pol->scores_src, at, sizeof(at)));
    for (int i = 0; i < pol->nscores; i++)
        fprintf(f, "%s %s x%d", i ? "," : "", gs_plugin_name(pol->scores[i].plugin),
                (int)pol->scores[i].weight);
    fprintf(f, "%s\n", pol->nscores ? "" : " none (the first node that fits)");
}

static void text_report(const struct gs_scenario *s, const struct derived *dv,
                        const struct warnings *w, FILE *f)
{
    text_cluster(s, dv, f);
    text_tiers(s, f);
    fprintf(f, "tenants:%s\n", s->policy.ntenants ? "" : " none");
    for (size_t i = 0; i < s->policy.ntenants; i++)
        text_tenant(&s->policy.tenants[i], f);
    text_queues(s, f);
    text_profiles(s, f);
    text_rquotas(s, f);
    text_effective(s, dv, f);
    text_pods(s, f);
    text_scores(s, f);
    fprintf(f, "%zu warning%s\n", w->n, w->n == 1 ? "" : "s");
}

/* --- JSON report: the same, in the units of the records --- */

static json_t *jint(int64_t v)
{
    return v == GS_UNSET ? json_null() : json_integer((json_int_t)v);
}

static json_t *jsrc(const struct gs_scn_src *src)
{
    char w[160];
    return json_string(where(src, w, sizeof(w)));
}

static json_t *jstrs(const char (*v)[GS_SCN_NAME_MAX], int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static json_t *json_tenant(const struct gs_tenant_spec *t)
{
    json_t *q = json_array();
    for (int i = 0; i < t->nquotas; i++)
        json_array_append_new(q,
                              json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "key", t->quotas[i].key,
                                        "model", model_name(t->quotas[i].model), "total_milli",
                                        (json_int_t)t->quotas[i].total_milli, "dedicated_milli",
                                        (json_int_t)t->quotas[i].dedicated_milli, "shared_milli",
                                        (json_int_t)t->quotas[i].shared_milli, "per_pod_milli",
                                        (json_int_t)model_per_pod(t, &t->quotas[i])));
    return json_pack("{s:s, s:o, s:s, s:o, s:o, s:s?, s:o, s:o, s:o, s:b, s:b, s:b, s:b, s:b, "
                     "s:o}",
                     "name", t->name, "namespaces", jstrs(t->namespaces, t->nnamespaces), "tier",
                     gs_tier_name(t->tier), "priority", jint(t->priority), "gpu_count_milli",
                     jint(t->gpu_count_milli), "priority_class",
                     *t->priority_class ? t->priority_class : NULL, "quotas", q, "max_gpus_per_pod",
                     jint(t->max_gpus_per_pod), "max_pods_per_user", jint(t->max_pods_per_user),
                     "topology_awareness", t->topology_awareness, "gang_scheduling",
                     t->gang_scheduling, "bin_packing", t->bin_packing, "has_quota", t->has_quota,
                     "in_policy", t->in_policy, "src", jsrc(&t->src));
}

static json_t *json_tiers(const struct gs_scenario *s)
{
    static const char *const strat[] = {"colocate", "prefer-colocate", "spread"};
    static const char *const iso[] = {"exclusive", "soft", "hard"};
    json_t *o = json_object();
    for (int t = GS_TIER_NVLINK; t <= GS_TIER_AZ; t++) {
        const struct gs_tier_spec *ts = &s->policy.tiers[t];
        json_object_set_new(o, gs_tier_name((enum gs_tier)t),
                            ts->defined ? json_pack("{s:s, s:b, s:i, s:s, s:o, s:o}", "strategy",
                                                    strat[ts->strategy], "sharing", ts->sharing,
                                                    "overcommit_milli", ts->overcommit_milli,
                                                    "isolation", iso[ts->isolation], "max_skew",
                                                    jint(ts->max_skew), "src", jsrc(&ts->src))
                                        : json_null());
    }
    return o;
}

static json_t *json_queues(const struct gs_scenario *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->policy.nqueues; i++) {
        const struct gs_queue_spec *q = &s->policy.queues[i];
        json_array_append_new(
            a, json_pack("{s:s, s:i, s:o, s:o, s:o, s:o, s:b, s:i, s:o}", "name", q->name, "weight",
                         q->weight, "capability_gpu_milli", jint(q->cap_gpu_milli),
                         "capability_cpu_milli", jint(q->cap_cpu_milli), "capability_memory_mib",
                         jint(q->cap_memory_mib), "capability_pods", jint(q->cap_pods),
                         "reclaimable", q->reclaimable, "overcommit_milli", q->overcommit_milli,
                         "src", jsrc(&q->src)));
    }
    return a;
}

static json_t *json_groups_classes(const struct gs_scenario *s, json_t **classes)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->policy.npodgroups; i++) {
        const struct gs_podgroup_spec *g = &s->policy.podgroups[i];
        json_array_append_new(
            a,
            json_pack("{s:s, s:s, s:i, s:s, s:s?, s:{s:I, s:I, s:I, s:I}, s:o}", "namespace", g->ns,
                      "name", g->name, "min_member", g->min_member, "queue", gs_podgroup_queue(g),
                      "priority_class", *g->priority_class ? g->priority_class : NULL,
                      "min_resources", "gpu_milli", (json_int_t)g->min_gpu_milli, "cpu_milli",
                      (json_int_t)g->min_cpu_milli, "memory_mib", (json_int_t)g->min_memory_mib,
                      "pods", (json_int_t)g->min_pods, "src", jsrc(&g->src)));
    }
    *classes = json_array();
    for (size_t i = 0; i < s->policy.npriority_classes; i++) {
        const struct gs_priority_class_spec *p = &s->policy.priority_classes[i];
        json_array_append_new(*classes,
                              json_pack("{s:s, s:i, s:b, s:b, s:o}", "name", p->name, "value",
                                        p->value, "never_preempt", p->never_preempt,
                                        "global_default", p->global_default, "src", jsrc(&p->src)));
    }
    return a;
}

static json_t *json_profiles(const struct gs_scenario *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->policy.nprofiles; i++) {
        const struct gs_step_profile *p = &s->policy.profiles[i];
        json_array_append_new(a, json_pack("{s:s, s:s?, s:b, s:o, s:i, s:i, s:b, s:o}", "name",
                                           p->name, "tenant", p->tenant[0] ? p->tenant : NULL,
                                           "gpu_share", p->gpu_share, "max_memory_mib",
                                           jint(p->max_memory_mib), "overcommit_milli",
                                           p->overcommit_milli, "priority", p->priority,
                                           "preemptible", p->preemptible, "src", jsrc(&p->src)));
    }
    return a;
}

static json_t *json_limits(const struct gs_scenario *s, json_t **ranges)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->policy.nrquotas; i++) {
        const struct gs_rquota_spec *q = &s->policy.rquotas[i];
        json_array_append_new(
            a, json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "namespace", q->ns,
                         "name", q->name, "gpu_milli", jint(q->gpu_milli), "gpumem_mib",
                         jint(q->gpumem_mib), "cpu_milli", jint(q->cpu_milli), "memory_mib",
                         jint(q->memory_mib), "pods", jint(q->pods), "scope_priority_classes",
                         jstrs(q->scope_classes, q->nscope_classes), "src", jsrc(&q->src)));
    }
    *ranges = json_array();
    for (size_t i = 0; i < s->policy.nlimit_ranges; i++) {
        const struct gs_limit_range_spec *r = &s->policy.limit_ranges[i];
        json_array_append_new(
            *ranges,
            json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
                      "s:o}",
                      "namespace", r->ns, "name", r->name, "max_gpu_milli", jint(r->max_gpu_milli),
                      "min_gpu_milli", jint(r->min_gpu_milli), "default_gpu_milli",
                      jint(r->default_gpu_milli), "default_request_gpu_milli",
                      jint(r->default_request_gpu_milli), "max_memory_mib", jint(r->max_memory_mib),
                      "min_memory_mib", jint(r->min_memory_mib), "default_memory_mib",
                      jint(r->default_memory_mib), "default_request_memory_mib",
                      jint(r->default_request_memory_mib), "max_cpu_milli", jint(r->max_cpu_milli),
                      "min_cpu_milli", jint(r->min_cpu_milli), "default_cpu_milli",
                      jint(r->default_cpu_milli), "default_request_cpu_milli",
                      jint(r->default_request_cpu_milli), "src", jsrc(&r->src)));
        json_t *x = json_array_get(*ranges, json_array_size(*ranges) - 1);
        const struct {
            const char *key;
            int64_t v;
        } pod[] = {{"pod_max_gpu_milli", r->pod_max_gpu_milli},
                   {"pod_min_gpu_milli", r->pod_min_gpu_milli},
                   {"pod_max_memory_mib", r->pod_max_memory_mib},
                   {"pod_min_memory_mib", r->pod_min_memory_mib},
                   {"pod_max_cpu_milli", r->pod_max_cpu_milli},
                   {"pod_min_cpu_milli", r->pod_min_cpu_milli}};
        for (size_t k = 0; k < sizeof(pod) / sizeof(pod[0]); k++)
            json_object_set_new(x, pod[k].key, jint(pod[k].v));
    }
    return a;
}

static json_t *json_effective(const struct gs_scenario *s, const struct derived *dv)
{
    json_t *a = json_array();
    for (size_t i = 0; i < dv->neff; i++) {
        struct eff e = dv->eff[i];
        json_array_append_new(
            a, json_pack("{s:s, s:s?, s:o, s:s?, s:o, s:s?, s:o, s:s?}", "namespace", e.ns,
                         "tenant", e.tenant >= 0 ? s->policy.tenants[e.tenant].name : NULL,
                         "per_container_gpu_milli", jint(e.container_gpu), "limit_range",
                         e.lr ? e.lr->name : NULL, "per_pod_gpu_milli", jint(e.pod_gpu),
                         "per_pod_from", e.pod_from, "namespace_gpu_milli", jint(e.ns_gpu),
                         "resource_quota", e.rq ? e.rq->name : NULL));
    }
    return a;
}

static json_t *json_cluster(const struct gs_scenario *s, const struct derived *dv)
{
    json_t *t = json_array();
    for (size_t i = 0; i < s->policy.ntemplates; i++) {
        const struct gs_node_template *nt = &s->policy.templates[i];
        json_t *pcie = json_array(), *nv = json_array();
        size_t n = dv->tpl_nodes[i];
        for (int g = 0; g < nt->gpus; g++) {
            json_array_append_new(pcie, json_integer(nt->pcie_domain[g]));
            json_array_append_new(nv, nt->nvlink_group[g] == GS_NO_GROUP
                                          ? json_null()
                                          : json_integer(nt->nvlink_group[g]));
        }
        json_array_append_new(
            t, json_pack("{s:s, s:s?, s:i, s:o, s:o, s:i, s:o, s:o, s:I, s:o}", "name", nt->name,
                         "model", nt->gpus ? model_name(nt->model) : NULL, "gpus", nt->gpus,
                         "cpu_milli", jint(nt->cpu_milli), "memory_mib", jint(nt->memory_mib),
                         "max_pods", (int)gs_node_max_pods(nt), "pcie_domains", pcie,
                         "nvlink_groups", nv, "nodes", (json_int_t)n, "src", jsrc(&nt->src)));
    }
    return json_pack("{s:o, s:I}", "templates", t, "nodes", (json_int_t)s->policy.nnodes);
}

static json_t *json_pods(const struct gs_scenario *s)
{
    size_t gang, gpu;
    count_pods(s, &gpu, &gang);
    return json_pack("{s:I, s:I, s:I}", "count", (json_int_t)s->npods, "gpu", (json_int_t)gpu,
                     "gang", (json_int_t)gang);
}

/* json_scores() - text_scores() as JSON: an array of the one profile, empty without one. */
static json_t *json_scores(const struct gs_scenario *s)
{
    const struct gs_policy *pol = &s->policy;
    json_t *a = json_array(), *score = json_array();
    for (int i = 0; pol->has_scores && i < pol->nscores; i++)
        json_array_append_new(score,
                              json_pack("{s:s, s:i}", "name", gs_plugin_name(pol->scores[i].plugin),
                                        "weight", (int)pol->scores[i].weight));
    if (pol->has_scores)
        json_array_append_new(a, json_pack("{s:s, s:o, s:{s:O}}", "scheduler_name",
                                           gs_policy_scheduler_name(pol), "src",
                                           jsrc(&pol->scores_src), "plugins", "score", score));
    json_decref(score);
    return a;
}

/* json_simulation() - the Simulation document as text_pods() prints it: null without one; times
 * in microseconds from the start (null: unset), each failure under its own list with the place
 * it was read at. */
static json_t *json_simulation(const struct gs_scenario *s)
{
    const struct gs_sim_spec *sim = &s->sim;
    if (!sim->defined)
        return json_null();
    json_t *ways = json_array(), *nodes = json_array(), *cards = json_array(),
           *holds = json_array();
    for (int i = 0; i < sim->ncompare; i++)
        json_array_append_new(ways, json_string(sim->compare[i]));
    for (size_t i = 0; i < sim->nfailures; i++) {
        const struct gs_node_failure *x = &sim->failures[i];
        if (x->gpu < 0)
            json_array_append_new(nodes, json_pack("{s:s, s:o, s:o, s:o}", "node", x->node, "at_us",
                                                   jint(x->at_us), "restore_us",
                                                   jint(x->restore_us), "src", jsrc(&x->src)));
        else if (x->xid == GS_XID_HELD)
            json_array_append_new(holds,
                                  json_pack("{s:s, s:i, s:o, s:o, s:o}", "node", x->node, "gpu",
                                            (int)x->gpu, "at_us", jint(x->at_us), "until_us",
                                            jint(x->restore_us), "src", jsrc(&x->src)));
        else
            json_array_append_new(
                cards, json_pack("{s:s, s:i, s:o, s:b, s:o, s:o, s:o}", "node", x->node, "gpu",
                                 (int)x->gpu, "xid", x->xid ? json_integer(x->xid) : json_null(),
                                 "work_lost", gs_xid_loses_work(x->xid), "at_us", jint(x->at_us),
                                 "restore_us", jint(x->restore_us), "src", jsrc(&x->src)));
    }
    json_t *history = json_array(); /* cardModes.cards, a snapshot's */
    for (size_t i = 0; i < sim->ncards; i++) {
        const struct gs_card_history *h = &sim->cards[i];
        json_array_append_new(
            history, json_pack("{s:s, s:i, s:s, s:I, s:o}", "node", h->node, "gpu", (int)h->gpu,
                               "mode", gs_card_mode_name((enum gs_card_mode)h->mode), "since_us",
                               (json_int_t)h->since_us, "src", jsrc(&h->src)));
    }
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "compare", ways, "horizon_us",
                     jint(sim->horizon_us), "now_us", jint(sim->now_us), "card_modes",
                     sim->modes_defined
                         ? json_pack("{s:b, s:I, s:o}", "convert", sim->convert, "min_hold_us",
                                     (json_int_t)sim->min_hold_us, "cards", history)
                         : (json_decref(history), json_null()),
                     "node_failures", nodes, "card_failures", cards, "card_holds", holds);
}

static int json_report(const struct gs_scenario *s, const struct derived *dv,
                       const struct warnings *w, FILE *f)
{
    json_t *classes, *ranges, *warns = json_array(), *tenants = json_array();
    for (size_t i = 0; i < s->policy.ntenants; i++)
        json_array_append_new(tenants, json_tenant(&s->policy.tenants[i]));
    for (size_t i = 0; i < w->kept; i++)
        json_array_append_new(warns, json_string(w->msg[i]));
    json_t *groups = json_groups_classes(s, &classes), *quotas = json_limits(s, &ranges);
    json_t *root = json_pack(
        "{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I}", "cluster",
        json_cluster(s, dv), "tiers", json_tiers(s), "tenants", tenants, "queues", json_queues(s),
        "podgroups", groups, "priority_classes", classes, "step_profiles", json_profiles(s),
        "resource_quotas", quotas, "limit_ranges", ranges, "effective_limits",
        json_effective(s, dv), "pods", json_pods(s), "scheduler_profiles", json_scores(s),
        "simulation", json_simulation(s), "warnings", warns, "warning_count", (json_int_t)w->n);
    if (!root)
        return -ENOMEM;
    int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', f);
    json_decref(root);
    return rc ? -EIO : 0;
}

/* --- the command --- */

static void usage(FILE *f)
{
    fprintf(f, "usage: gpusched validate [--json] FILE...\n"
               "  Loads scenario files (Cluster, Pod, GPUQuota, ConfigMap policy and profiles,\n"
               "  Queue, PodGroup, PriorityClass, ResourceQuota, LimitRange, ...; \"-\" reads\n"
               "  standard input) and prints what was understood. Warnings go to standard error\n"
               "  (into the JSON with --json). Exit status: 0 valid, 2 bad input, 1 failure.\n"
               "  --json    print the report as JSON\n");
}

static int fail(int rc, const struct gs_diag *d)
{
    gs__cli_say("validate", "%s", d->msg[0] ? d->msg : strerror(-rc));
    return rc == -ENOMEM || rc == -EIO ? 1 : EXIT_BAD_INPUT;
}

/* A snapshot's now, cards and placed pods, which `simulate` takes with --from-now only: said where,
 * since a file valid to continue is refused by a run from the start. */
static void snapshot_only(const struct gs_scenario *s, struct gs_diag *d)
{
    const struct gs_pod_spec *placed = gs__cli_placed(s);
    if (s->sim.now_us != GS_UNSET)
        gs_diag_warn(
            d, "%s:%u:%u: now gives a snapshot's clock: simulate takes it with --from-now only",
            s->sim.now_src.file, s->sim.now_src.line, s->sim.now_src.col);
    if (s->sim.ncards)
        gs_diag_warn(d,
                     "%s:%u:%u: cardModes.cards gives a snapshot's cards: simulate takes it with "
                     "--from-now only",
                     s->sim.cards[0].src.file, s->sim.cards[0].src.line, s->sim.cards[0].src.col);
    if (placed)
        gs_diag_warn(d,
                     "%s:%u:%u: pod %s/%s is placed (sim.gpusched.io/node): simulate takes it "
                     "with --from-now only",
                     placed->placed_src.file, placed->placed_src.line, placed->placed_src.col,
                     placed->ns, placed->name);
}

/* load_all() - every file into @s. */
static int load_all(struct gs_scenario *s, char **files, int n, struct gs_diag *d)
{
    for (int i = 0; i < n; i++) {
        int rc = gs_scenario_load(s, files[i], d);
        if (rc)
            return rc;
    }
    int rc = gs_scenario_resolve(s, d);
    if (!rc)
        snapshot_only(s, d);
    return rc;
}

/* --- admission: what a run would refuse --- */

/* The ways `simulate --scenario` runs without --way: the Simulation's compare list, else full. */
static size_t default_ways(const struct gs_scenario *s, enum gs_way *w)
{
    size_t n = 0;
    for (int i = 0; s->sim.defined && i < s->sim.ncompare && n < GS_WAY_COUNT; i++) {
        int k = gs_way_find(s->sim.compare[i]);
        if (k >= 0)
            w[n++] = (enum gs_way)k;
    }
    if (n == 0)
        w[n++] = GS_WAY_FULL;
    return n;
}

/* refused() - pod @sp of @s through admission in each of @run's ways: one warning per distinct
 * reason, naming the ways that give it, at the field that reason is about (the pod, where no one
 * field of it is). */
static void refused(const struct gs_scenario *s, struct gs_tenancy *const *run,
                    const enum gs_way *w, size_t n, const struct gs_pod_spec *sp, struct gs_diag *d)
{
    char why[GS_WAY_COUNT][256], ways[64], at[sizeof(sp->src.file) + 32];
    int bad[GS_WAY_COUNT];
    struct gs_scn_src src[GS_WAY_COUNT];
    struct gs_tenancy_pod v;
    for (size_t i = 0; i < n; i++) {
        bad[i] = gs_tenancy_admit(run[i], sp, &v, why[i], sizeof(why[i]));
        if (!bad[i] || !gs_scenario_pod_field(s, sp, v.field, v.field_at, &src[i]))
            src[i] = sp->src;
    }
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        for (size_t j = i; bad[i] && j < n; j++)
            if (bad[j] && (j == i || strcmp(why[j], why[i]) == 0)) {
                len += (size_t)snprintf(ways + len, sizeof(ways) - len, "%s%s", len ? ", " : "",
                                        gs_way_name(w[j]));
                bad[j] = j == i ? bad[j] : 0;
            }
        if (bad[i])
            gs_diag_warn(d, "%s: pod %s/%s: a run would refuse it (%s way%s): %s",
                         where(&src[i], at, sizeof(at)), sp->ns, sp->name, ways,
                         strchr(ways, ',') ? "s" : "", why[i]);
    }
}

/*
 * check_admission() - every pod of @s through the scheduler's admission (gs_tenancy_admit(), the
 * rule a run applies), so what a run would refuse (a GPU request without a limit, a quota's
 * bound, an unknown PriorityClass) is a warning before the run. Return: 0; -ENOMEM; without nodes
 * no scheduler can be made and that is one warning.
 */
static int check_admission(const struct gs_scenario *s, struct gs_diag *d)
{
    enum gs_way w[GS_WAY_COUNT];
    struct gs_tenancy *run[GS_WAY_COUNT] = {NULL};
    size_t n = default_ways(s, w);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct gs_tenancy_opts o = {w[i], s->sim.convert, s->sim.min_hold_us, 0};
        struct gs_diag e;
        gs_diag_init(&e);
        rc = gs_tenancy_new(&s->policy, &o, &run[i], &e);
        char at[sizeof(s->pods[0].src.file) + 32];
        if (rc == -EINVAL && s->npods)
            gs_diag_warn(d,
                         "%s: %zu pod%s (the first, %s/%s, here) not checked against "
                         "admission: %s",
                         where(&s->pods[0].src, at, sizeof(at)), s->npods, s->npods == 1 ? "" : "s",
                         s->pods[0].ns, s->pods[0].name, e.msg);
    }
    for (size_t i = 0; rc == 0 && i < s->npods; i++)
        refused(s, run, w, n, &s->pods[i], d);
    for (size_t i = 0; i < n; i++)
        gs_tenancy_free(run[i]);
    return rc == -ENOMEM ? rc : 0;
}

/* print_warnings() - the warnings kept, on standard error. */
static void print_warnings(const struct warnings *w)
{
    for (size_t i = 0; i < w->kept; i++)
        gs__cli_say("validate", "warning: %s", w->msg[i]);
    if (w->n > w->kept)
        gs__cli_say("validate", "%zu more warnings", w->n - w->kept);
}

/* report() - print what @s holds; warnings go to stderr, or into the JSON. */
static int report(const struct gs_scenario *s, const struct warnings *w, int json)
{
    struct derived dv = {NULL, 0, NULL};
    int rc = derive(s, &dv);
    if (!rc && !json)
        print_warnings(w);
    if (!rc && json)
        rc = json_report(s, &dv, w, stdout);
    else if (!rc)
        text_report(s, &dv, w, stdout);
    free(dv.eff);
    free(dv.tpl_nodes);
    if (rc || w->oom) {
        gs__cli_say("validate", "%s", rc == -EIO ? "cannot write" : "out of memory");
        return 1;
    }
    return 0;
}

/* parse_args() - the options into *@json and the files into @files. Return: -1 ok, else exit. */
static int parse_args(int argc, char **argv, int *json, char **files, int *nfiles)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            *json = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            gs__cli_say("validate", "unknown option \"%s\"", argv[i]);
            usage(stderr);
            return EXIT_BAD_INPUT;
        } else {
            files[(*nfiles)++] = argv[i];
        }
    }
    if (*nfiles == 0) {
        usage(stderr);
        return EXIT_BAD_INPUT;
    }
    return -1;
}

int cmd_validate(int argc, char **argv)
{
    int json = 0, nfiles = 0, rc;
    char **files = calloc((size_t)argc, sizeof(*files));
    struct warnings w = {0};
    struct gs_scenario *s = NULL;
    struct gs_diag d;
    gs_diag_init(&d);
    d.warn = on_warn;
    d.warn_ud = &w;
    if (!files) {
        gs__cli_say("validate", "out of memory");
        rc = 1;
    } else if ((rc = parse_args(argc, argv, &json, files, &nfiles)) >= 0) {
        /* help or usage error: rc is the exit status */
    } else if ((rc = gs_scenario_new(&s)) < 0) {
        rc = fail(rc, &d);
    } else if ((rc = load_all(s, files, nfiles, &d)) < 0 || (rc = check_admission(s, &d)) < 0) {
        print_warnings(&w); /* they may explain the error */
        rc = fail(rc, &d);
    } else {
        rc = report(s, &w, json);
    }
    gs_scenario_free(s);
    warnings_free(&w);
    free(files);
    return rc;
}
