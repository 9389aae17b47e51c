/*
 * gpuschedd: GET /metrics in the Prometheus text format (version 0.0.4), rendered from a snapshot
 * (snapshot.h) on a reader thread.
 *
 * Who sees what: without a token, aggregates only — nothing that names a tenant, a namespace, a
 * queue, a pod or a node; with the metrics token (or the admin's), series per tenant, queue and
 * namespace, per node and card, quotas and bills; with metrics.perPod as well, a series per card
 * of each running pod.
 *
 * Conventions (prometheus.io/docs/practices/naming): base units — seconds, bytes, cores; a share
 * of a card is a ratio (0..1), a sum of shares a count of GPUs — one unit per name, counters end
 * in _total, label names are snake_case. dcgm-exporter's Hostname and modelName are hostname and
 * model_name here; deploy/prometheus/rules.yaml renames dcgm-exporter's labels with label_replace
 * so the series join on (hostname, gpu).
 */
#include "metrics.h"
#include "access.h"
#include "nodes.h"
#include "snapshot.h"
#include "textbuf.h"

#include "gpusched/billing.h"
#include "gpusched/catalog.h"
#include "gpusched/fleet.h"
#include "gpusched/scenario.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define METRICS_MAX (512u << 20) /* bytes of one scrape */

/* @v thousandths (>= 0) as "I.FFF" at @out, without printf. Return: the bytes written. */
static size_t fmt_milli(char *out, int64_t v)
{
    char tmp[24];
    size_t n = 0, o = 0;
    int64_t whole = v / 1000;
    do
        tmp[n++] = (char)('0' + whole % 10);
    while ((whole /= 10) > 0);
    while (n)
        out[o++] = tmp[--n];
    out[o++] = '.';
    out[o++] = (char)('0' + v / 100 % 10);
    out[o++] = (char)('0' + v / 10 % 10);
    out[o++] = (char)('0' + v % 10);
    return o;
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

/* An integer in thousandths (milli-GPU, milli-cores) as its exact decimal. */
static const char *milli(int64_t v, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%lld.%03lld", v < 0 ? "-" : "", (long long)(llabs(v) / 1000),
             (long long)(llabs(v) % 1000));
    return buf;
}

static void header(struct gsd_text *b, const char *name, const char *type, const char *help)
{
    gsd_text_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
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

static void hist(struct gsd_text *b, const char *name, const char *help, const struct gsd_hist *h)
{
    header(b, name, "histogram", help);
    uint64_t cum = 0;
    for (int i = 0; i < h->n; i++) {
        cum += h->count[i];
        gsd_text_printf(b, "%s_bucket{le=\"%g\"} %llu\n", name, h->bounds[i],
                        (unsigned long long)cum);
    }
    gsd_text_printf(b, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)h->total);
    gsd_text_printf(b, "%s_sum %lld.%06lld\n%s_count %llu\n", name,
                    (long long)(h->sum_us / 1000000), (long long)(h->sum_us % 1000000), name,
                    (unsigned long long)h->total);
}

/* ---- aggregates: what anyone may see ---- */

static void pending(struct gsd_text *b, const struct gsd_snap *n)
{
    /* one label per reason: a fit reason (gs_fit_reason_words()), "other" or "not tried yet" */
    enum { LABELS = GS_FIT_REASONS + 3 };
    const char *why[LABELS];
    uint64_t cnt[LABELS] = {0};
    int k = 0;
    struct gsd_snap_it it = {0, 0};
    for (const struct gsd_podview *v; (v = gsd_snap_next(n, &it)) != NULL;) {
        if (v->running)
            continue;
        const char *w = v->why ? v->why : v->reason[0] ? "other" : "not tried yet";
        int i = 0;
        while (i < k && strcmp(why[i], w))
            i++;
        if (i == k && k < LABELS)
            why[k++] = w;
        cnt[i < LABELS ? i : LABELS - 1]++;
    }
    header(b, "gpusched_pending_pods", "gauge",
           "Pods waiting, by the reason most nodes gave (kube-scheduler words); other: a quota, "
           "a gang, an eviction (the pod's reason says which).");
    for (int i = 0; i < k; i++) {
        char e[256];
        gsd_text_printf(b, "gpusched_pending_pods{reason=\"%s\"} %llu\n", esc(why[i], e, sizeof(e)),
                        (unsigned long long)cnt[i]);
    }
}

static void cluster(struct gsd_text *b, const struct gsd_snap *n)
{
    int64_t cards = 0, alloc = 0, held = 0, bad = 0;
    size_t ready = 0;
    for (size_t i = 0; i < n->nnodes; i++) {
        const struct gsd_nodeview *v = gsd_snap_node(n, i);
        cards += n->node_gpus[i];
        ready += gsd_node_ready(&v->health);
        for (int g = 0; g < n->node_gpus[i]; g++) {
            alloc += v->alloc_milli[g];
            held += v->down_milli[g];
            bad += (v->health.bad_mask >> g) & 1;
        }
    }
    char a[32], h[32];
    header(b, "gpusched_nodes", "gauge", "Nodes in the inventory, by whether they are Ready.");
    gsd_text_printf(b, "gpusched_nodes{ready=\"true\"} %zu\ngpusched_nodes{ready=\"false\"} %zu\n",
                    ready, n->nnodes - ready);
    header(b, "gpusched_gpus", "gauge", "GPUs (cards) in the inventory.");
    gsd_text_printf(b, "gpusched_gpus %lld\n", (long long)cards);
    header(b, "gpusched_gpus_allocated", "gauge",
           "GPUs allocated to running pods: whole cards plus shares of cards, in GPUs.");
    gsd_text_printf(b, "gpusched_gpus_allocated %s\n", milli(alloc, a, sizeof(a)));
    header(b, "gpusched_gpus_unavailable", "gauge",
           "GPUs held back from placement: free capacity of NotReady nodes and unhealthy cards.");
    gsd_text_printf(b, "gpusched_gpus_unavailable %s\n", milli(held, h, sizeof(h)));
    header(b, "gpusched_gpus_unhealthy", "gauge", "Cards their node's agent reported unhealthy.");
    gsd_text_printf(b, "gpusched_gpus_unhealthy %lld\n", (long long)bad);
}

static void counter(struct gsd_text *b, const char *name, const char *help, uint64_t v)
{
    header(b, name, "counter", help);
    gsd_text_printf(b, "%s %llu\n", name, (unsigned long long)v);
}

static void counters(struct gsd_text *b, const struct gsd_snap *n, const struct gsd_http_stats *h)
{
    header(b, "gpusched_build_info", "gauge", "The gpusched version that runs; always 1.");
    gsd_text_printf(b, "gpusched_build_info{version=\"%s\"} 1\n", GS_VERSION);
    header(b, "gpusched_pods", "gauge", "Pods held, by state.");
    gsd_text_printf(b,
                    "gpusched_pods{state=\"running\"} %zu\ngpusched_pods{state=\"pending\"} %zu\n",
                    n->nrunning, n->npending);
    counter(b, "gpusched_pods_placed_total", "Pods given cards since the start.", n->placed_total);
    counter(b, "gpusched_pods_cancelled_total", "Pods cancelled since the start.",
            n->cancelled_total);
    counter(b, "gpusched_pods_adopted_total",
            "Pods found bound in Kubernetes by gpusched's annotations, not in its store, and "
            "taken in on the cards they name, since the start.",
            n->adopted_total);
    counter(b, "gpusched_pods_adoption_refused_total",
            "Pods found bound in Kubernetes by gpusched's annotations, not in its store, left out "
            "(annotations malformed, or the cards not free for them), once per pod per list.",
            n->adopt_refused_total);
    counter(b, "gpusched_pods_requeued_total",
            "Running pods sent back to pending since the start because a node or card failed, "
            "or, held for a gang that lost a member, none came within "
            "extender.shortGangHoldSeconds.",
            n->requeued_total);
    counter(b, "gpusched_preemption_victims_total",
            "Running pods preempted since the start: evicted for a pod of higher priority, or for "
            "a pod within its tenant's dedicated GPUQuota taking back cards others borrowed.",
            n->preempted_total);
    header(b, "gpusched_pods_evicted_total", "counter",
           "Running pods the scheduler evicted since the start, by reason: preemption (priority, "
           "or a tenant's dedicated quota taken back), "
           "reclaim (between queues), node_failure (a node or card failed).");
    gsd_text_printf(b,
                    "gpusched_pods_evicted_total{reason=\"preemption\"} %llu\n"
                    "gpusched_pods_evicted_total{reason=\"reclaim\"} %llu\n"
                    "gpusched_pods_evicted_total{reason=\"node_failure\"} %llu\n",
                    (unsigned long long)n->preempted_total, (unsigned long long)n->reclaimed_total,
                    (unsigned long long)n->requeued_total);
    if (!h)
        return;
    header(b, "gpusched_http_requests_total", "counter", "HTTP answers by status class.");
    for (int c = 1; c <= 5; c++)
        gsd_text_printf(
            b, "gpusched_http_requests_total{code=\"%dxx\"} %llu\n", c,
            (unsigned long long)atomic_load(&((struct gsd_http_stats *)h)->answered[c]));
    header(b, "gpusched_http_rejected_total", "counter",
           "Requests the listener refused before reading their bodies, or cut off, by why.");
    for (int r = 0; r < GSD_REJECT_N; r++)
        gsd_text_printf(
            b, "gpusched_http_rejected_total{reason=\"%s\"} %llu\n", gsd_reject_names[r],
            (unsigned long long)atomic_load(&((struct gsd_http_stats *)h)->rejected[r]));
    header(b, "gpusched_http_connections", "gauge", "HTTP connections open.");
    gsd_text_printf(b, "gpusched_http_connections %lld\n",
                    (long long)atomic_load(&((struct gsd_http_stats *)h)->connections));
    header(b, "gpusched_http_request_body_bytes_in_flight", "gauge",
           "Bytes of request bodies being read now (capped by http.maxBytesInFlight).");
    gsd_text_printf(b, "gpusched_http_request_body_bytes_in_flight %lld\n",
                    (long long)atomic_load(&((struct gsd_http_stats *)h)->in_flight));
    header(b, "gpusched_http_response_bytes_in_flight", "gauge",
           "Bytes of answers over 4 KiB being sent now (capped by http.maxBytesInFlight with the "
           "bodies).");
    gsd_text_printf(b, "gpusched_http_response_bytes_in_flight %lld\n",
                    (long long)atomic_load(&((struct gsd_http_stats *)h)->answers));
}

/* ---- with a token: tenants, namespaces, queues, nodes and cards ---- */

static int by_tenant_queue_ns(const struct gsd_podview *x, const struct gsd_podview *y)
{
    int c = strcmp(x->tenant, y->tenant);
    c = c ? c : strcmp(x->queue, y->queue);
    return c ? c : strcmp(x->ns, y->ns);
}

static int by_group(const void *a, const void *b)
{
    const struct gsd_podview *x = *(const struct gsd_podview *const *)a;
    const struct gsd_podview *y = *(const struct gsd_podview *const *)b;
    int c = by_tenant_queue_ns(x, y);
    return c ? c : strcmp(x->mig, y->mig);
}

/* GPUs per tenant, queue and namespace, and MIG instances per profile too. */
static void allocation(struct gsd_text *b, const struct gsd_snap *n)
{
    const struct gsd_podview **v = malloc((n->nrunning ? n->nrunning : 1) * sizeof(*v));
    size_t k = 0;
    if (!v) {
        b->full = 1;
        return;
    }
    struct gsd_snap_it it = {0, 0};
    for (const struct gsd_podview *p; (p = gsd_snap_next(n, &it)) != NULL;)
        if (p->running && k < n->nrunning)
            v[k++] = p;
    qsort(v, k, sizeof(*v), by_group);
    char t[160], q[160], ns[160], g[32], prof[48];
    header(b, "gpusched_allocated_gpus", "gauge",
           "GPUs allocated to running pods by tenant, queue and namespace: whole cards plus "
           "shares of cards (a MIG instance counts its part of the card, as GPUQuota does).");
    for (size_t i = 0, j; i < k; i = j) {
        int64_t sum = 0;
        for (j = i; j < k && !by_tenant_queue_ns(v[i], v[j]); j++)
            sum += v[j]->share_milli;
        gsd_text_printf(b,
                        "gpusched_allocated_gpus{tenant=\"%s\",queue=\"%s\",namespace=\"%s\"} %s\n",
                        esc(v[i]->tenant, t, sizeof(t)), esc(v[i]->queue, q, sizeof(q)),
                        esc(v[i]->ns, ns, sizeof(ns)), milli(sum, g, sizeof(g)));
    }
    header(b, "gpusched_mig_instances_allocated", "gauge",
           "MIG instances held by running pods, by tenant, queue, namespace and MIG profile.");
    for (size_t i = 0, j; i < k; i = j) {
        for (j = i + 1; j < k && !by_group(&v[i], &v[j]); j++)
            ;
        if (v[i]->mig[0])
            gsd_text_printf(
                b,
                "gpusched_mig_instances_allocated{tenant=\"%s\",queue=\"%s\",namespace=\"%s\","
                "profile=\"%s\"} %zu\n",
                esc(v[i]->tenant, t, sizeof(t)), esc(v[i]->queue, q, sizeof(q)),
                esc(v[i]->ns, ns, sizeof(ns)), esc(v[i]->mig, prof, sizeof(prof)), j - i);
    }
    free(v);
}

/*
 * Each queue's weight, deserved share, allocated and pending GPUs, as GET /v1/queues gives them:
 * the scheduler's own figures, copied into the snapshot at its publish. O(queues).
 */
static void queues(struct gsd_text *b, const struct gsd_snap *n)
{
    static const char *const what[4] = {"weight", "deserved_gpus", "allocated_gpus",
                                        "pending_gpus"};
    static const char *const help[4] = {
        "Each queue's weight, which its deserved share is in proportion to (Volcano Queue "
        "spec.weight; the implicit default queue weighs 1).",
        "Each queue's deserved GPUs: the schedulable cards water-filled by weight, each queue "
        "capped at its demand (allocated plus pending) and its nvidia.com/gpu capability.",
        "GPUs the running pods of each queue hold (whole cards plus shares of cards).",
        "GPUs the pending pods of each queue ask for."};
    for (int k = 0; k < 4; k++) {
        char name[64], q[160], v[32];
        snprintf(name, sizeof(name), "gpusched_queue_%s", what[k]);
        header(b, name, "gauge", help[k]);
        for (size_t i = 0; i < n->nqueues; i++) {
            const struct gsd_queueview *qv = &n->queues[i];
            if (k == 0)
                snprintf(v, sizeof(v), "%d", (int)qv->weight);
            else
                milli(k == 1   ? qv->deserved_milli
                      : k == 2 ? qv->allocated_milli
                               : qv->pending_milli,
                      v, sizeof(v));
            gsd_text_printf(b, "%s{queue=\"%s\"} %s\n", name, esc(qv->name, q, sizeof(q)), v);
        }
    }
}

/* Node @i's hostname and model_name label values. */
static void node_labels(const struct gsd_snap *n, size_t i, char *host, char *model)
{
    esc(n->node_name[i], host, 160);
    esc(n->node_model[i] >= 0 ? gs_catalog_at(n->node_model[i])->name : "", model, 96);
}

static void nodes(struct gsd_text *b, const struct gsd_snap *n)
{
    char host[160], model[96], pre[256], post[160], line[512];
    header(b, "gpusched_gpu_allocated_ratio", "gauge",
           "Share of each card allocated to pods (0..1; held-back capacity excluded).");
    for (size_t i = 0; i < n->nnodes; i++) { /* by hand: a line per card of the inventory */
        node_labels(n, i, host, model);
        int lp =
            snprintf(pre, sizeof(pre), "gpusched_gpu_allocated_ratio{hostname=\"%s\",gpu=\"", host);
        int lq = snprintf(post, sizeof(post), "\",model_name=\"%s\"} ", model);
        for (int g = 0; g < n->node_gpus[i]; g++) {
            size_t o = (size_t)lp;
            memcpy(line, pre, o);
            if (g >= 10)
                line[o++] = (char)('0' + g / 10);
            line[o++] = (char)('0' + g % 10);
            memcpy(line + o, post, (size_t)lq);
            o += (size_t)lq;
            o += fmt_milli(line + o, gsd_snap_node(n, i)->alloc_milli[g]);
            line[o++] = '\n';
            gsd_text_put(b, line, o);
        }
    }
    header(b, "gpusched_node_ready", "gauge",
           "1 when the node is Ready (heartbeating, or never watched by heartbeats), else 0.");
    for (size_t i = 0; i < n->nnodes; i++)
        gsd_text_printf(b, "gpusched_node_ready{hostname=\"%s\"} %d\n",
                        esc(n->node_name[i], host, sizeof(host)),
                        gsd_node_ready(&gsd_snap_node(n, i)->health));
    header(b, "gpusched_gpu_xid", "gauge",
           "The Xid reported with a card its agent found unhealthy (0 when none was given); "
           "healthy cards have no series.");
    for (size_t i = 0; i < n->nnodes; i++) {
        const struct gsd_node_health *h = &gsd_snap_node(n, i)->health;
        node_labels(n, i, host, model);
        for (int g = 0; g < n->node_gpus[i]; g++)
            if ((h->bad_mask >> g) & 1)
                gsd_text_printf(
                    b, "gpusched_gpu_xid{hostname=\"%s\",gpu=\"%d\",model_name=\"%s\"} %d\n", host,
                    g, model, h->xid[g]);
    }
}

static void per_pod(struct gsd_text *b, const struct gsd_snap *n)
{
    char host[160], model[96], ns[160], pod[2 * GSD_OBJ_MAX], r[32];
    header(b, "gpusched_pod_gpu_allocated_ratio", "gauge",
           "Share of a card a running pod holds (0..1), per card (metrics.perPod).");
    struct gsd_snap_it it = {0, 0};
    for (const struct gsd_podview *v; (v = gsd_snap_next(n, &it)) != NULL;) {
        if (!v->running || !v->cards)
            continue;
        node_labels(n, (size_t)v->node, host, model);
        esc(v->ns, ns, sizeof(ns));
        esc(v->name, pod, sizeof(pod));
        milli(v->mig[0] ? v->share_milli : v->card_milli, r, sizeof(r));
        for (int g = 0; g < GS_GPUS_MAX; g++)
            if (v->cards & (1u << g))
                gsd_text_printf(
                    b,
                    "gpusched_pod_gpu_allocated_ratio{namespace=\"%s\",pod=\"%s\",hostname=\"%s\","
                    "gpu=\"%d\",model_name=\"%s\"} %s\n",
                    ns, pod, host, g, model, r);
    }
}

/* GPUQuota per tenant and model, hard and used, in GPUs. */
static void gpuquotas(struct gsd_text *b, const struct gsd_snap *n)
{
    static const char *const bucket[3] = {"nvidia.com/gpu", "nvidia.com/gpu.dedicated",
                                          "nvidia.com/gpu.shared"};
    const struct gsd_config *c = n->cfg;
    header(b, "gpusched_gpuquota_gpus", "gauge",
           "GPUQuota per tenant and GPU model, in GPUs: type=hard its limit (nvidia.com/gpu is "
           "its total), type=used what running pods count against it.");
    for (size_t i = 0; i < c->ntenants; i++) {
        const struct gs_tenant_spec *ts = c->tenants[i].quota;
        char t[160], model[96], v[32];
        esc(c->tenants[i].name, t, sizeof(t));
        for (int k = 0; ts && k < ts->nquotas; k++) {
            const struct gs_model_quota *q = &ts->quotas[k];
            int m = q->model;
            int64_t hard[3] = {q->total_milli, q->dedicated_milli, q->shared_milli};
            int64_t used[3] = {n->quse[i].dedicated[m] + n->quse[i].shared[m],
                               n->quse[i].dedicated[m], n->quse[i].shared[m]};
            esc(gs_catalog_at(m)->name, model, sizeof(model));
            for (int r = 0; r < 6; r++)
                gsd_text_printf(
                    b,
                    "gpusched_gpuquota_gpus{tenant=\"%s\",model_name=\"%s\",resource=\"%s\","
                    "type=\"%s\"} %s\n",
                    t, model, bucket[r % 3], r < 3 ? "hard" : "used",
                    milli(r < 3 ? hard[r] : used[r - 3], v, sizeof(v)));
        }
    }
}

/* A ResourceQuota amount of resource @r (gsd_rq_res) in its metric's unit. */
static const char *rq_value(int r, int64_t v, char *buf, size_t cap)
{
    if (r == 0 || r == 2) /* milli-GPU, milli-cores */
        return milli(v, buf, cap);
    snprintf(buf, cap, "%lld", (long long)(r == 4 ? v : v * 1048576)); /* pods; MiB as bytes */
    return buf;
}

/* ResourceQuota per namespace, hard and used: one metric per unit, kube-state-metrics' labels. */
static void resourcequotas(struct gsd_text *b, const struct gsd_snap *n)
{
    static const struct {
        const char *name, *help;
        int res[2]; /* gsd_rq_res indexes; -1 none */
    } m[4] = {
        {"gpusched_resourcequota_gpus", "requests.nvidia.com/gpu, in GPUs", {0, -1}},
        {"gpusched_resourcequota_memory_bytes",
         "requests.nvidia.com/gpumem (cards x memory per card) and requests.memory, in bytes",
         {1, 3}},
        {"gpusched_resourcequota_cpu_cores", "requests.cpu, in cores", {2, -1}},
        {"gpusched_resourcequota_pods", "pods", {4, -1}},
    };
    const struct gs_scenario *s = n->cfg->quotas;
    for (int k = 0; k < 4; k++) {
        char help[256];
        snprintf(help, sizeof(help),
                 "ResourceQuota %s, as enforced on the pods gpusched holds: type=hard its limit, "
                 "type=used what counts against it.",
                 m[k].help);
        header(b, m[k].name, "gauge", help);
        for (size_t i = 0; s && i < s->policy.nrquotas; i++)
            for (int j = 0; j < 2 && m[k].res[j] >= 0; j++) {
                const struct gs_rquota_spec *q = &s->policy.rquotas[i];
                int r = m[k].res[j];
                int64_t hard[GSD_RQ_RES] = {q->gpu_milli, q->gpumem_mib, q->cpu_milli,
                                            q->memory_mib, q->pods};
                if (hard[r] == GS_UNSET)
                    continue;
                const struct gsd_tenant *owner = gsd_tenant_of_ns(n->cfg, q->ns);
                char t[160], ns[160], qn[160], hv[32], uv[32];
                esc(owner ? owner->name : "", t, sizeof(t));
                esc(q->ns, ns, sizeof(ns));
                esc(q->name, qn, sizeof(qn));
                rq_value(r, hard[r], hv, sizeof(hv));
                rq_value(r, n->rq_used[i][r], uv, sizeof(uv));
                for (int used = 0; used < 2; used++)
                    gsd_text_printf(
                        b,
                        "%s{tenant=\"%s\",namespace=\"%s\",resourcequota=\"%s\",resource=\"%s\","
                        "type=\"%s\"} %s\n",
                        m[k].name, t, ns, qn, gsd_rq_res[r], used ? "used" : "hard",
                        used ? uv : hv);
            }
    }
}

static void bill_line(struct gsd_text *b, const struct gsd_snap *n, const char *tenant, long long u)
{
    char t[160];
    gsd_text_printf(b, "gpusched_bill_accrued_total{tenant=\"%s\",currency=\"%s\"} %lld.%06lld\n",
                    esc(tenant, t, sizeof(t)), gs_ratecard_currency(n->cfg->rates), u / 1000000,
                    u % 1000000);
}

/* Each tenant's accrued bill, in the rate card's currency with six decimals (exact): the config's
 * tenants (0 before any use), then any other the ledger names (a tenant since removed). */
static void bills(struct gsd_text *b, const struct gsd_snap *n)
{
    json_t *v;
    const char *tenant;
    if (!n->bills || !n->cfg->rates)
        return;
    header(b, "gpusched_bill_accrued_total", "counter",
           "What each tenant's GPU use has cost so far, in the rate card's currency; runs still "
           "going are priced up to the last minute.");
    for (size_t i = 0; i < n->cfg->ntenants; i++)
        bill_line(
            b, n, n->cfg->tenants[i].name,
            (long long)json_integer_value(json_object_get(n->bills, n->cfg->tenants[i].name)));
    json_object_foreach(n->bills, tenant, v)
    {
        if (!gsd_tenant_named(n->cfg, tenant))
            bill_line(b, n, tenant, (long long)json_integer_value(v));
    }
}

char *gsd_metrics_render(const struct gsd_snap *n, int level, const struct gsd_http_stats *h,
                         size_t *len)
{
    struct gsd_text b = {.max = METRICS_MAX};
    counters(&b, n, h);
    cluster(&b, n);
    pending(&b, n);
    hist(&b, "gpusched_scheduling_duration_seconds",
         "Time of one scheduling cycle of the engine (one pod, one placement attempt).",
         &n->sched_lat);
    hist(&b, "gpusched_store_commit_duration_seconds",
         "Time to commit one batch of requests to the store, fsync included.", &n->commit_lat);
    hist(&b, "gpusched_snapshot_publish_duration_seconds",
         "Scheduler thread time to publish the snapshot reads are served from, after a batch.",
         &n->publish_lat);
    if (level >= GSD_METRICS_NAMED) {
        allocation(&b, n);
        queues(&b, n);
        nodes(&b, n);
        gpuquotas(&b, n);
        resourcequotas(&b, n);
        bills(&b, n);
        if (n->forecast) /* names tenants: forecast.c's gauges */
            gsd_text_put(&b, n->forecast, strlen(n->forecast));
    }
    if (level >= GSD_METRICS_PER_POD)
        per_pod(&b, n);
    if (b.full) {
        free(b.s);
        return NULL;
    }
    *len = b.len;
    return b.s;
}
