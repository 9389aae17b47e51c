/*
 * gpuschedd: GET /metrics in the Prometheus text format (version 0.0.4).
 *
 * Label names follow NVIDIA's DCGM exporter where the meaning is the same, so allocation joins
 * with utilisation in one query: Hostname (node), gpu (index on the node), modelName, namespace,
 * pod. DCGM's UUID is not exported: the inventory does not know card UUIDs yet.
 */
#include "metrics.h"
#include "accounts.h"
#include "api.h"
#include "mig.h"
#include "nodes.h"
#include "queue.h"
#include "server.h"
#include "state.h"

#include "gpusched/billing.h"
#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/grow.h"
#include "gpusched/scenario.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define METRICS_MAX (512u << 20) /* bytes of one scrape */

struct sbuf {
    char *s;
    size_t len, cap;
    int full; /* past METRICS_MAX or out of memory: the scrape fails */
};

static void put(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (int tries = 0; tries < 2 && !b->full; tries++) {
        va_start(ap, fmt);
        int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0 || b->len + (size_t)n + 1 > METRICS_MAX) {
            b->full = 1;
            return;
        }
        if (b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        char *m = gs_grow(b->s, &b->cap, b->len + (size_t)n + 1, 1, 1);
        if (!m) {
            b->full = 1;
            return;
        }
        b->s = m;
    }
}

/* A label value with \\, " and newline escaped; @v is short (names, reasons). */
static const char *esc(const char *v, char *buf, size_t cap)
{
    size_t o = 0;
    for (; *v && o + 3 < cap; v++) {
        if (*v == '\\' || *v == '"' || *v == '\n')
            buf[o++] = '\\';
        buf[o++] = *v == '\n' ? 'n' : *v;
    }
    buf[o] = '\0';
    return buf;
}

static void header(struct sbuf *b, const char *name, const char *type, const char *help)
{
    put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void gsd_hist_observe(struct gsd_hist *h, int64_t us)
{
    int i = 0;
    while (i < h->n && (double)us / 1e6 > h->bounds[i])
        i++;
    h->count[i]++;
    h->total++;
    h->sum_us += us;
}

static void hist(struct sbuf *b, const char *name, const char *help, const struct gsd_hist *h)
{
    header(b, name, "histogram", help);
    uint64_t cum = 0;
    for (int i = 0; i < h->n; i++) {
        cum += h->count[i];
        put(b, "%s_bucket{le=\"%g\"} %llu\n", name, h->bounds[i], (unsigned long long)cum);
    }
    put(b, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)h->total);
    put(b, "%s_sum %lld.%06lld\n%s_count %llu\n", name, (long long)(h->sum_us / 1000000),
        (long long)(h->sum_us % 1000000), name, (unsigned long long)h->total);
}

/* A running pod, its queue's name and the GPU share it holds (a MIG instance's part too). */
struct pq {
    const struct gsd_pod *p;
    const char *queue;
    int64_t milli;
};

static int by_tenant_queue_ns(const void *a, const void *b)
{
    const struct pq *x = a, *y = b;
    int c = strcmp(x->p->tenant, y->p->tenant);
    c = c ? c : strcmp(x->queue, y->queue);
    return c ? c : strcmp(x->p->ns, y->p->ns);
}

static int by_tenant_queue_ns_mig(const void *a, const void *b)
{
    int c = by_tenant_queue_ns(a, b);
    return c ? c : strcmp(((const struct pq *)a)->p->mig, ((const struct pq *)b)->p->mig);
}

/* The running pods with their queues, sorted by tenant, queue, namespace and MIG profile (*@n
 * of them); NULL: no memory. */
static struct pq *running_sorted(const struct gsd_state *st, size_t *n)
{
    struct pq *v = malloc((st->nrunning ? st->nrunning : 1) * sizeof(*v));
    *n = 0;
    for (const struct gsd_pod *p = st->head; v && p; p = p->next)
        if (p->state == GSD_RUNNING && *n < st->nrunning)
            v[(*n)++] = (struct pq){p, gsd_pod_queue(st, p), gsd_pod_share_milli(st, p)};
    if (v)
        qsort(v, *n, sizeof(*v), by_tenant_queue_ns_mig);
    return v;
}

/* Allocation per tenant, queue and namespace: whole cards and milli-GPU. @v: running_sorted(). */
static void per_namespace(struct sbuf *b, const struct pq *v, size_t n)
{
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0)
            header(b, "gpusched_allocated_gpus", "gauge",
                   "Whole GPUs allocated to running pods that asked for whole cards.");
        else
            header(b, "gpusched_allocated_gpu_milli", "gauge",
                   "GPU share allocated to running pods, in milli-GPU (1000 = one card).");
        for (size_t i = 0; i < n;) {
            int64_t sum = 0;
            size_t j = i;
            for (; j < n && !by_tenant_queue_ns(&v[i], &v[j]); j++)
                sum +=
                    pass ? v[j].milli : (v[j].p->req.gpu_milli == 1000 ? v[j].p->req.num_gpu : 0);
            char t[160], q[160], ns[160];
            put(b, "%s{tenant=\"%s\",queue=\"%s\",namespace=\"%s\"} %lld\n",
                pass ? "gpusched_allocated_gpu_milli" : "gpusched_allocated_gpus",
                esc(v[i].p->tenant, t, sizeof(t)), esc(v[i].queue, q, sizeof(q)),
                esc(v[i].p->ns, ns, sizeof(ns)), (long long)sum);
            i = j;
        }
    }
}

/* MIG instances per tenant, queue, namespace and profile (a running MIG pod holds one). */
static void mig_instances(struct sbuf *b, const struct pq *v, size_t n)
{
    header(b, "gpusched_mig_instances_allocated", "gauge",
           "MIG instances held by running pods, by tenant, queue, namespace and MIG profile.");
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && !by_tenant_queue_ns_mig(&v[i], &v[j]); j++)
            ;
        char t[160], q[160], ns[160], prof[48];
        if (v[i].p->mig[0])
            put(b,
                "gpusched_mig_instances_allocated{tenant=\"%s\",queue=\"%s\",namespace=\"%s\","
                "profile=\"%s\"} %zu\n",
                esc(v[i].p->tenant, t, sizeof(t)), esc(v[i].queue, q, sizeof(q)),
                esc(v[i].p->ns, ns, sizeof(ns)), esc(v[i].p->mig, prof, sizeof(prof)), j - i);
    }
}

static void pending(struct sbuf *b, const struct gsd_state *st)
{
    const char *why[16];
    uint64_t cnt[16] = {0};
    int n = 0;
    for (const struct gsd_pod *p = st->phead; p; p = p->pnext) {
        const char *w = p->why ? p->why : "not tried yet";
        int i = 0;
        while (i < n && strcmp(why[i], w))
            i++;
        if (i == n && n < 16)
            why[n++] = w;
        cnt[i < 16 ? i : 15]++;
    }
    header(b, "gpusched_pending_pods", "gauge",
           "Pods waiting for capacity, by the reason most nodes gave (kube-scheduler words).");
    for (int i = 0; i < n; i++) {
        char e[256];
        put(b, "gpusched_pending_pods{reason=\"%s\"} %llu\n", esc(why[i], e, sizeof(e)),
            (unsigned long long)cnt[i]);
    }
}

/* Node @i's info, and its Hostname and modelName label values. */
static void node_labels(const struct gsd_state *st, size_t i, struct gs_node_info *ni, char *host,
                        char *model)
{
    gs_cluster_node_info(st->cluster, i, ni);
    esc(ni->name, host, 160);
    esc(ni->model >= 0 ? gs_catalog_at(ni->model)->name : "", model, 96);
}

static void cards(struct sbuf *b, const struct gsd_state *st)
{
    char host[160], model[96];
    header(b, "gpusched_gpu_allocated_milli", "gauge",
           "Share of each card allocated, in milli-GPU (1000 = the whole card).");
    for (size_t i = 0; i < gs_cluster_node_count(st->cluster); i++) {
        struct gs_node_info ni;
        node_labels(st, i, &ni, host, model);
        for (int g = 0; g < ni.gpus; g++)
            put(b, "gpusched_gpu_allocated_milli{Hostname=\"%s\",gpu=\"%d\",modelName=\"%s\"} %d\n",
                host, g, model, 1000 - ni.gpu_left[g] - st->health[i].held_milli[g]);
    }
    header(b, "gpusched_pod_gpu_allocated_milli", "gauge",
           "Share of a card a running pod holds, in milli-GPU.");
    for (const struct gsd_pod *p = st->head; p; p = p->next) {
        if (p->state != GSD_RUNNING || !p->pl.gpu_mask)
            continue;
        struct gs_node_info ni;
        char ns[160], pod[160];
        node_labels(st, (size_t)p->pl.node, &ni, host, model);
        for (int g = 0; g < ni.gpus; g++)
            if (p->pl.gpu_mask & (1u << g))
                put(b,
                    "gpusched_pod_gpu_allocated_milli{namespace=\"%s\",pod=\"%s\",Hostname="
                    "\"%s\",gpu=\"%d\",modelName=\"%s\"} %u\n",
                    esc(p->ns, ns, sizeof(ns)), esc(p->name, pod, sizeof(pod)), host, g, model,
                    p->pl.gpu_milli);
    }
}

/* Node readiness and card health, as a node condition and DCGM's XID field would show them. */
static void health(struct sbuf *b, const struct gsd_state *st)
{
    char host[160], model[96];
    header(b, "gpusched_node_ready", "gauge",
           "1 when the node is Ready (heartbeating, or never watched by heartbeats), else 0.");
    for (size_t i = 0; i < gs_cluster_node_count(st->cluster); i++)
        put(b, "gpusched_node_ready{Hostname=\"%s\"} %d\n",
            esc(gs_cluster_node_name(st->cluster, i), host, sizeof(host)), st->health[i].ready);
    header(b, "gpusched_gpu_healthy", "gauge",
           "1 when the card takes pods, 0 after its node reported it unhealthy.");
    for (int pass = 0; pass < 2; pass++) {
        if (pass)
            header(b, "gpusched_gpu_xid", "gauge",
                   "The Xid reported with an unhealthy card (0 when none was given).");
        for (size_t i = 0; i < gs_cluster_node_count(st->cluster); i++) {
            struct gs_node_info ni;
            node_labels(st, i, &ni, host, model);
            for (int g = 0; g < ni.gpus; g++) {
                int bad = (st->health[i].bad_mask >> g) & 1;
                if (!pass || bad)
                    put(b, "%s{Hostname=\"%s\",gpu=\"%d\",modelName=\"%s\"} %d\n",
                        pass ? "gpusched_gpu_xid" : "gpusched_gpu_healthy", host, g, model,
                        pass ? st->health[i].xid[g] : !bad);
            }
        }
    }
}

/* GPUQuota per tenant and model, ResourceQuota per namespace: hard (pass 0), then used. */
static void quotas(struct sbuf *b, const struct gsd_state *st)
{
    static const char *const bucket[3] = {"nvidia.com/gpu", "nvidia.com/gpu.dedicated",
                                          "nvidia.com/gpu.shared"};
    const struct gs_scenario *s = st->cfg->quotas;
    for (int pass = 0; pass < 2; pass++) {
        const char *name = pass ? "gpusched_quota_used" : "gpusched_quota_hard";
        header(b, name, "gauge",
               pass ? "Use counted against a quota; milli-GPU for nvidia.com/gpu*, MiB for "
                      "memory and gpumem, milli-cores for cpu, a count for pods."
                    : "A quota's hard limit (GPUQuota per tenant and model: nvidia.com/gpu is its "
                      "total; ResourceQuota per namespace); units as gpusched_quota_used.");
        for (size_t i = 0; i < st->cfg->ntenants; i++) {
            const struct gs_tenant_spec *ts = st->cfg->tenants[i].quota;
            char t[160], model[96];
            esc(st->cfg->tenants[i].name, t, sizeof(t));
            for (int k = 0; ts && k < ts->nquotas; k++) {
                const struct gs_model_quota *q = &ts->quotas[k];
                int m = q->model;
                int64_t hard[3] = {q->total_milli, q->dedicated_milli, q->shared_milli};
                int64_t used[3] = {st->quse[i].dedicated[m] + st->quse[i].shared[m],
                                   st->quse[i].dedicated[m], st->quse[i].shared[m]};
                esc(gs_catalog_at(m)->name, model, sizeof(model));
                for (int r = 0; r < 3; r++)
                    put(b,
                        "%s{kind=\"GPUQuota\",tenant=\"%s\",modelName=\"%s\",resource=\"%s\"} "
                        "%lld\n",
                        name, t, model, bucket[r], (long long)(pass ? used[r] : hard[r]));
            }
        }
        for (size_t i = 0; s && i < s->nrquotas; i++) {
            const struct gs_rquota_spec *q = &s->rquotas[i];
            const struct gsd_tenant *owner = gsd_tenant_of_ns(st->cfg, q->ns);
            int64_t hard[GSD_RQ_RES] = {q->gpu_milli, q->gpumem_mib, q->cpu_milli, q->memory_mib,
                                        q->pods};
            char t[160], ns[160], qn[160];
            esc(owner ? owner->name : "", t, sizeof(t));
            esc(q->ns, ns, sizeof(ns));
            esc(q->name, qn, sizeof(qn));
            for (int r = 0; r < GSD_RQ_RES; r++)
                if (hard[r] != GS_UNSET)
                    put(b,
                        "%s{kind=\"ResourceQuota\",tenant=\"%s\",namespace=\"%s\",quota=\"%s\","
                        "resource=\"%s\"} %lld\n",
                        name, t, ns, qn, gsd_rq_res[r],
                        (long long)(pass ? st->rq_used[i][r] : hard[r]));
        }
    }
}

static void counters(struct sbuf *b, const struct gsd_state *st)
{
    header(b, "gpusched_pods", "gauge", "Pods held, by state.");
    put(b, "gpusched_pods{state=\"running\"} %zu\ngpusched_pods{state=\"pending\"} %zu\n",
        st->nrunning, st->npending);
    header(b, "gpusched_pods_placed_total", "counter", "Pods given cards since the start.");
    put(b, "gpusched_pods_placed_total %llu\n", (unsigned long long)st->placed_total);
    header(b, "gpusched_pods_cancelled_total", "counter", "Pods cancelled since the start.");
    put(b, "gpusched_pods_cancelled_total %llu\n", (unsigned long long)st->cancelled_total);
    header(b, "gpusched_pods_requeued_total", "counter",
           "Running pods sent back to pending since the start: a node or card failed, or they "
           "were preempted.");
    put(b, "gpusched_pods_requeued_total %llu\n", (unsigned long long)st->requeued_total);
    header(b, "gpusched_preemption_victims_total", "counter",
           "Running pods sent back to pending to make room for pods of higher priority.");
    put(b, "gpusched_preemption_victims_total %llu\n", (unsigned long long)st->preempted_total);
    header(b, "gpusched_http_requests_total", "counter", "HTTP answers by status class.");
    for (int c = 1; c <= 5; c++)
        put(b, "gpusched_http_requests_total{code=\"%dxx\"} %llu\n", c,
            (unsigned long long)st->http_requests[c]);
}

static void bill_line(struct sbuf *b, const struct gsd_state *st, const char *tenant, long long u)
{
    char t[160];
    put(b, "gpusched_bill_accrued{tenant=\"%s\",currency=\"%s\"} %lld.%06lld\n",
        esc(tenant, t, sizeof(t)), gs_ratecard_currency(st->cfg->rates), u / 1000000, u % 1000000);
}

/* Each tenant's accrued bill, in the rate card's currency with six decimals (exact): the config's
 * tenants (0 before any use), then any other the ledger names (a tenant since removed). */
static void bills(struct sbuf *b, struct gsd_state *st)
{
    json_t *totals = gsd_bill_accrued(st), *v;
    const char *tenant;
    if (!totals)
        return;
    header(b, "gpusched_bill_accrued", "gauge",
           "What each tenant's GPU use has cost so far, in the rate card's currency; runs still "
           "going are priced up to the last minute.");
    for (size_t i = 0; i < st->cfg->ntenants; i++)
        bill_line(b, st, st->cfg->tenants[i].name,
                  (long long)json_integer_value(json_object_get(totals, st->cfg->tenants[i].name)));
    json_object_foreach(totals, tenant, v)
    {
        if (!gsd_tenant_named(st->cfg, tenant))
            bill_line(b, st, tenant, (long long)json_integer_value(v));
    }
}

void gsd_metrics_handle(struct gsd_state *st, struct gsd_req *r)
{
    struct sbuf b = {malloc(1 << 16), 0, 1 << 16, 0};
    b.full = !b.s;
    size_t nrun;
    struct pq *run = b.full ? NULL : running_sorted(st, &nrun);
    b.full = !run;
    if (run) {
        per_namespace(&b, run, nrun);
        mig_instances(&b, run, nrun);
    }
    free(run);
    pending(&b, st);
    hist(&b, "gpusched_scheduling_duration_seconds",
         "Time of one scheduling cycle of the engine (one pod, one placement attempt).",
         &st->sched_lat);
    hist(&b, "gpusched_store_commit_duration_seconds",
         "Time to commit one batch of requests to the store, fsync included.", &st->commit_lat);
    cards(&b, st);
    health(&b, st);
    quotas(&b, st);
    counters(&b, st);
    bills(&b, st);
    if (b.full) {
        free(b.s);
        gsd_reply_error(r, 500, "", "the scrape is larger than %u bytes or memory ran out",
                        METRICS_MAX);
        return;
    }
    r->status = 200;
    r->ctype = "text/plain; version=0.0.4; charset=utf-8";
    r->resp = b.s;
    r->resp_len = b.len;
}
