/* JSON and text reports of multi-tenant runs (SCENARIO.md's output contract). */
#include "tsim_impl.h"

#include "gpusched/billing.h"

#include <errno.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEC(us) ((json_int_t)((us) / 1000000))

static json_t *ratio(int64_t milli)
{
    return json_real((double)milli / 1000.0);
}

static json_t *gpus_of(uint32_t mask)
{
    json_t *a = json_array();
    for (int g = 0; a && g < GS_GPUS_MAX; g++)
        if (mask & (1u << g))
            json_array_append_new(a, json_integer(g));
    return a;
}

static const char *model_name(const struct gs_tsim *t, int32_t node)
{
    const struct gs_gpu_model *m = gs_catalog_at(gs_tsim_node_model(t, node));
    return m && gs_fleet_node_gpus(t->fleet, (size_t)node) > 0 ? m->name : NULL;
}

/* meter() - use @x as billing meters it: the same fields the JSON "usage" entries carry. */
static struct gs_bill_use meter(const struct gs_tsim *t, const struct gs_tsim_use *x)
{
    return (struct gs_bill_use){
        .tenant = t->out[x->pod].tenant,
        .mode = x->mig         ? GS_BILL_MIG
                : x->whole     ? GS_BILL_EXCLUSIVE
                : x->timeslice ? GS_BILL_TIMESLICE
                               : GS_BILL_SHARED,
        .model = gs_tsim_node_model(t, x->node),
        .profile = x->mig,
        .cards = __builtin_popcount(x->gpu_mask) * x->units,
        .share_milli = x->mig ? 1000 : x->share_milli,
        .start_s = SEC(x->start_us),
        .end_s = SEC(x->end_us),
    };
}

static json_t *uses_of(const struct gs_tsim *t, size_t pod, const size_t *first, const size_t *next)
{
    json_t *a = json_array();
    for (size_t u = first[pod]; a && u != SIZE_MAX; u = next[u]) {
        if (!t->uses[u].gpu_mask)
            continue;
        struct gs_bill_use m = meter(t, &t->uses[u]);
        json_array_append_new(
            a, json_pack("{s:s,s:s?,s:s?,s:I,s:I,s:I,s:I}", "mode", gs_bill_mode_name(m.mode),
                         "model", model_name(t, t->uses[u].node), "profile", m.profile, "cards",
                         (json_int_t)m.cards, "share_milli", (json_int_t)m.share_milli, "start_s",
                         (json_int_t)m.start_s, "end_s", (json_int_t)m.end_s));
    }
    return a;
}

int gs_tsim_bill(const struct gs_tsim *t, struct gs_bill *b, struct gs_diag *d)
{
    for (size_t u = 0; u < t->nuses; u++) {
        if (!t->uses[u].gpu_mask)
            continue;
        struct gs_bill_use m = meter(t, &t->uses[u]);
        int rc = gs_bill_add_use(b, &m, d);
        if (rc)
            return rc;
    }
    return 0;
}

/* Where each use of the pod ran, one entry per "usage" entry: node, cards and MIG instance. */
static json_t *placements_of(const struct gs_tsim *t, size_t pod, const size_t *first,
                             const size_t *next)
{
    json_t *a = json_array();
    char mig[40];
    for (size_t u = first[pod]; a && u != SIZE_MAX; u = next[u]) {
        const struct gs_tsim_use *x = &t->uses[u];
        if (!x->gpu_mask)
            continue;
        if (x->mig)
            snprintf(mig, sizeof(mig), "%s@%d", x->mig, (int)x->mig_start);
        json_array_append_new(a,
                              json_pack("{s:s,s:o,s:s?}", "node", gs_tsim_node_name(t, x->node),
                                        "gpus", gpus_of(x->gpu_mask), "mig", x->mig ? mig : NULL));
    }
    return a;
}

static json_t *pod_json(const struct gs_tsim *t, size_t i, const size_t *first, const size_t *next)
{
    const struct gs_tsim_pod *p = &t->out[i];
    char name[GS_SCN_POD_KEY_MAX];
    snprintf(name, sizeof(name), "%s/%s", p->ns, p->name);
    char mig[40] = "";
    if (p->mig)
        snprintf(mig, sizeof(mig), "%s@%d", p->mig, (int)p->mig_start);
    json_t *o =
        json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s?,s:o,s:s?,s:s?,s:i,s:i,s:I,s:o,s:i,s:s?}", "name",
                  name, "tenant", p->tenant, "namespace", p->ns, "queue", p->queue, "workload",
                  p->workload, "state", gs_pod_state_name(p->state), "node",
                  p->node >= 0 ? gs_tsim_node_name(t, p->node) : NULL, "gpus",
                  p->node >= 0 ? gpus_of(p->gpu_mask) : json_null(), "mig", p->mig ? mig : NULL,
                  "gpu_model", p->node >= 0 ? model_name(t, p->node) : NULL, "share_milli",
                  p->share_milli, "priority", p->priority, "submit_s", SEC(p->submit_us), "wait_s",
                  /* not submitted within the run, or refused at admission: it never waited */
                  (p->start_us < 0 && p->submit_us > t->now) || p->state == GS_POD_REJECTED
                      ? json_null()
                      : json_integer(SEC((p->start_us >= 0 ? p->start_us : t->now) - p->submit_us)),
                  "preemptions", p->preemptions, "reason", p->reason);
    if (!o)
        return NULL;
    json_object_set_new(o, "start_s",
                        p->start_us >= 0 ? json_integer(SEC(p->start_us)) : json_null());
    json_object_set_new(o, "end_s", p->end_us >= 0 ? json_integer(SEC(p->end_us)) : json_null());
    json_object_set_new(o, "usage", uses_of(t, i, first, next));
    json_object_set_new(o, "placements", placements_of(t, i, first, next));
    return o;
}

static json_t *waits(const struct gs_tsim_waits *w)
{
    return json_pack("{s:I,s:I,s:I,s:I}", "p50", SEC(w->p50_us), "p95", SEC(w->p95_us), "p99",
                     SEC(w->p99_us), "max", SEC(w->max_us));
}

#define GPU_H(milli_s) ((double)(milli_s) / 3600000.0)

/* What a ledger holds: allocated, busy, goodput and discarded GPU-hours. */
static json_t *usage_json(json_t *o, const struct gs_tsim_usage *u)
{
    json_object_set_new(o, "gpu_hours", json_real(GPU_H(u->gpu_milli_s)));
    json_object_set_new(o, "busy_gpu_hours", json_real(GPU_H(u->busy_milli_s)));
    json_object_set_new(o, "goodput_gpu_hours", json_real(GPU_H(u->goodput_milli_s)));
    json_object_set_new(o, "discarded_gpu_hours", json_real(GPU_H(u->lost_milli_s)));
    return o;
}

static json_t *summary_json(const struct gs_tsim *t)
{
    const struct gs_tsim_summary *s = &t->sum;
    json_t *o = json_pack("{s:o,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:I}",
                          "gpu_allocation_ratio", ratio(s->allocation_milli), "gpu_utilization",
                          ratio(s->utilization_milli), "gpus", (json_int_t)s->gpus, "horizon_s",
                          SEC(s->horizon_us), "pods", (json_int_t)s->pods, "completed",
                          (json_int_t)s->completed, "running", (json_int_t)s->running, "pending",
                          (json_int_t)s->pending, "rejected", (json_int_t)s->rejected,
                          "preempted_pods", (json_int_t)s->preempted_pods, "preemptions",
                          (json_int_t)s->preemptions, "reclaims", (json_int_t)s->reclaims,
                          "jain_fairness", ratio(s->jain_milli), "events", (json_int_t)s->events);
    if (s->modes)
        json_object_set_new(o, "card_mode_conversions", json_integer(s->conversions));
    json_object_set_new(o, "gpu_goodput", ratio(s->goodput_milli));
    json_object_set_new(o, "gpu_busy_ceiling", ratio(s->ceiling_milli));
    usage_json(o, &s->usage);
    json_t *ten = json_array(), *qs = json_array(), *ks = json_array(), *ms = json_array();
    for (size_t i = 0; i <= t->s->policy.ntenants; i++) {
        const struct gs_tsim_tenant *x = &t->tout[i];
        if (x->pods == 0)
            continue;
        json_array_append_new(
            ten,
            usage_json(json_pack("{s:s,s:I,s:I,s:I,s:f,s:f,s:o}", "name", x->name, "pods",
                                 (json_int_t)x->pods, "completed", (json_int_t)x->completed,
                                 "preemptions", (json_int_t)x->preemptions, "entitlement_gpus",
                                 (double)x->entitlement_milli / 1000.0, "below_dedicated_gpu_hours",
                                 GPU_H(x->short_milli_s), "wait_s", waits(&x->wait)),
                       &x->usage));
        if (s->timeslice) /* only then: other runs keep the output they always had */
            json_object_set_new(
                json_array_get(ten, json_array_size(ten) - 1), "timeslice",
                json_pack("{s:f,s:f,s:f}", "asked_gpu_hours",
                          (double)x->ts_asked_milli_s / 3600000.0, "entitled_gpu_hours",
                          (double)x->ts_entitled_milli_s / 3600000.0, "received_gpu_hours",
                          (double)x->ts_received_milli_s / 3600000.0));
    }
    for (size_t q = 0; q < t->nqueues; q++)
        json_array_append_new(qs, usage_json(json_pack("{s:s,s:i,s:f}", "name", t->qout[q].name,
                                                       "weight", t->qout[q].weight, "deserved_gpus",
                                                       (double)t->qout[q].deserved_milli / 1000.0),
                                             &t->qout[q].usage));
    for (size_t m = 0; m < t->nmodels; m++)
        json_array_append_new(ms, usage_json(json_pack("{s:s,s:I}", "name", t->mout[m].name, "gpus",
                                                       (json_int_t)t->mout[m].gpus),
                                             &t->mout[m].usage));
    for (size_t k = 0; k < t->nkinds; k++) {
        const struct gs_tsim_kind *x = &t->kout[k];
        json_array_append_new(ks, json_pack("{s:s,s:I,s:I,s:o}", "name", x->name, "pods",
                                            (json_int_t)x->pods, "started", (json_int_t)x->started,
                                            "wait_s", waits(&x->wait)));
    }
    json_object_set_new(o, "tenants", ten);
    json_object_set_new(o, "queues", qs);
    json_object_set_new(o, "models", ms);
    json_object_set_new(o, "workloads", ks);
    return o;
}

/* One run: uses are threaded per pod so each pod lists its own in time order. */
static json_t *run_json(const struct gs_tsim *t)
{
    size_t *first = malloc((t->npods + 1) * sizeof(*first));
    size_t *last = malloc((t->npods + 1) * sizeof(*last));
    size_t *next = malloc((t->nuses + 1) * sizeof(*next));
    json_t *pods = json_array(), *o = NULL;
    if (!first || !last || !next || !pods)
        goto out;
    for (size_t i = 0; i < t->npods; i++)
        first[i] = last[i] = SIZE_MAX;
    for (size_t u = 0; u < t->nuses; u++) {
        size_t p = (size_t)t->uses[u].pod;
        next[u] = SIZE_MAX;
        if (first[p] == SIZE_MAX)
            first[p] = u;
        else
            next[last[p]] = u;
        last[p] = u;
    }
    for (size_t i = 0; i < t->npods; i++)
        if (json_array_append_new(pods, pod_json(t, i, first, next)))
            goto out;
    o = json_pack("{s:s,s:O,s:o,s:o}", "way", gs_way_name(t->way), "pods", pods, "summary",
                  summary_json(t), "timeline", gs__tsim_timeline_json(t));
out:
    json_decref(pods);
    free(first);
    free(last);
    free(next);
    return o;
}

/* One node of the cluster: its model and, per card, its PCIe domain and NVLink group. */
static json_t *node_json(const struct gs_scenario *s, size_t n)
{
    const struct gs_node_template *tp = &s->policy.templates[s->policy.nodes[n].template_index];
    const struct gs_gpu_model *m = tp->model >= 0 ? gs_catalog_at(tp->model) : NULL;
    json_t *pcie = json_array(), *nvl = json_array();
    for (int g = 0; g < tp->gpus; g++) {
        json_array_append_new(pcie, json_integer(tp->pcie_domain[g]));
        json_array_append_new(nvl, tp->nvlink_group[g] == GS_NO_GROUP
                                       ? json_null()
                                       : json_integer(tp->nvlink_group[g]));
    }
    return json_pack("{s:s,s:s,s:s?,s:i,s:o,s:o,s:i}", "name", s->policy.nodes[n].name, "template",
                     tp->name, "model", m && tp->gpus > 0 ? m->name : NULL, "gpus", tp->gpus,
                     "pcie_domain", pcie, "nvlink_group", nvl, "timeslice_replicas",
                     (int)tp->timeslice_replicas);
}

/* The cluster as zones of nodes, in the order the scenario names them. */
static json_t *cluster_json(const struct gs_scenario *s)
{
    json_t *zones = json_array();
    for (size_t n = 0; zones && n < s->policy.nnodes; n++) {
        json_t *z = NULL;
        for (size_t k = json_array_size(zones); !z && k-- > 0;)
            if (strcmp(json_string_value(json_object_get(json_array_get(zones, k), "name")),
                       s->policy.nodes[n].zone) == 0)
                z = json_array_get(zones, k);
        if (!z && json_array_append_new(zones, json_pack("{s:s,s:[]}", "name",
                                                         s->policy.nodes[n].zone, "nodes")) == 0)
            z = json_array_get(zones, json_array_size(zones) - 1);
        if (!z || json_array_append_new(json_object_get(z, "nodes"), node_json(s, n)) != 0) {
            json_decref(zones);
            return NULL;
        }
    }
    return json_pack("{s:o}", "zones", zones);
}

int gs_tsim_write_json(FILE *f, struct gs_tsim *const *runs, size_t n)
{
    if (n == 0)
        return -EINVAL;
    json_t *top = run_json(runs[n - 1]), *ways = NULL;
    if (top && n > 1) {
        ways = json_array();
        for (size_t i = 0; ways && i < n; i++)
            json_array_append_new(ways, i + 1 == n ? json_deep_copy(top) : run_json(runs[i]));
    }
    if (!top || json_object_set_new(top, "cluster", cluster_json(runs[0]->s)) != 0) {
        json_decref(ways);
        json_decref(top);
        return -ENOMEM;
    }
    if (n > 1 && json_object_set_new(top, "ways", ways) != 0) { /* it takes @ways either way */
        json_decref(top);
        return -ENOMEM;
    }
    int r = json_dumpf(top, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    json_decref(top);
    if (r == 0 && fputc('\n', f) == EOF)
        r = -1;
    return r < 0 ? -EIO : 0;
}

/* Per mille @milli as a percentage to the tenth ("71.8") into @buf (24 bytes). */
static const char *tenths(int64_t milli, char *buf)
{
    snprintf(buf, 24, "%lld.%lld", (long long)(milli / 10), (long long)(milli % 10));
    return buf;
}

static void pct(FILE *f, int64_t milli)
{
    char buf[24];
    fprintf(f, " %11s %%", tenths(milli, buf));
}

static void row_i(FILE *f, const char *label, struct gs_tsim *const *runs, size_t n, size_t offset)
{
    fprintf(f, "%-28s", label);
    for (size_t i = 0; i < n; i++)
        fprintf(f, " %11lld", (long long)*(const int64_t *)((const char *)&runs[i]->sum + offset));
    fputc('\n', f);
}

/* A row of percentages: the int32_t per mille at @offset of each run's summary. */
static void row_pct(FILE *f, const char *label, struct gs_tsim *const *runs, size_t n,
                    size_t offset)
{
    fprintf(f, "%-28s", label);
    for (size_t i = 0; i < n; i++)
        pct(f, *(const int32_t *)((const char *)&runs[i]->sum + offset));
    fputc('\n', f);
}

/* Wait percentile of workload kind @kind in @t, or -1 when the run has no such kind. */
static int64_t kind_wait(const struct gs_tsim *t, const char *kind, int which)
{
    for (size_t k = 0; k < t->nkinds; k++)
        if (strcmp(t->kout[k].name, kind) == 0)
            return which == 0   ? t->kout[k].wait.p50_us
                   : which == 1 ? t->kout[k].wait.p95_us
                                : t->kout[k].wait.p99_us;
    return -1;
}

static void side_by_side(FILE *f, struct gs_tsim *const *runs, size_t n)
{
    fprintf(f, "%-28s", "");
    for (size_t i = 0; i < n; i++)
        fprintf(f, " %11s", gs_way_name(runs[i]->way));
    fputc('\n', f);
    row_pct(f, "GPU allocation (time avg)", runs, n,
            offsetof(struct gs_tsim_summary, allocation_milli));
    row_pct(f, "GPU busy (modelled)", runs, n, offsetof(struct gs_tsim_summary, utilization_milli));
    row_pct(f, "GPU goodput (modelled)", runs, n, offsetof(struct gs_tsim_summary, goodput_milli));
    row_pct(f, "GPU busy ceiling (run's mix)", runs, n,
            offsetof(struct gs_tsim_summary, ceiling_milli));
    fprintf(f, "%-28s", "GPU-hours discarded");
    for (size_t i = 0; i < n; i++)
        fprintf(f, " %11.1f", GPU_H(runs[i]->sum.usage.lost_milli_s));
    fprintf(f, "\n%-28s", "Jain fairness (x1000)");
    for (size_t i = 0; i < n; i++)
        fprintf(f, " %11d", runs[i]->sum.jain_milli);
    fputc('\n', f);
    row_i(f, "pods completed", runs, n, offsetof(struct gs_tsim_summary, completed));
    row_i(f, "pods running at the end", runs, n, offsetof(struct gs_tsim_summary, running));
    row_i(f, "pods pending at the end", runs, n, offsetof(struct gs_tsim_summary, pending));
    row_i(f, "pods rejected", runs, n, offsetof(struct gs_tsim_summary, rejected));
    row_i(f, "preemptions", runs, n, offsetof(struct gs_tsim_summary, preemptions));
    row_i(f, "reclaims", runs, n, offsetof(struct gs_tsim_summary, reclaims));
    if (runs[0]->sum.modes) /* only then: other scenarios keep the report they always had */
        row_i(f, "card mode conversions", runs, n, offsetof(struct gs_tsim_summary, conversions));
    for (size_t k = 0; k < runs[0]->nkinds; k++) {
        const char *kind = runs[0]->kout[k].name;
        /* "-" holds the pods without a gpusched.io/workload label: all of them when alone */
        const char *shown = strcmp(kind, "-") ? kind : runs[0]->nkinds > 1 ? "unlabelled" : "";
        for (int w = 0; w < 3; w++) {
            char label[80];
            snprintf(label, sizeof(label), "wait p%s%s%.14s (s)",
                     w == 0   ? "50"
                     : w == 1 ? "95"
                              : "99",
                     *shown ? " " : "", shown);
            fprintf(f, "%-28s", label);
            for (size_t i = 0; i < n; i++)
                fprintf(f, " %11lld", (long long)(kind_wait(runs[i], kind, w) / 1000000));
            fputc('\n', f);
        }
    }
}

/* The first pods admission rejected, and those submitted that waited to the end, with why: a
 * count alone leaves the reader to --json (a gang that can never start ran nothing, waited 0 s). */
static void unplaced(FILE *f, const struct gs_tsim *t, enum gs_pod_state state, const char *what)
{
    enum { SHOWN = 5 };
    size_t n = 0;
    for (size_t i = 0; i < gs_tsim_pod_count(t); i++) {
        const struct gs_tsim_pod *p = &t->out[i];
        if (p->state != state || p->submit_us > t->now)
            continue;
        if (n++ < SHOWN)
            fprintf(f, "  %s %s/%s: %s\n", what, p->ns, p->name, p->reason ? p->reason : "");
    }
    if (n > SHOWN)
        fprintf(f, "  %s: %zu more (--json lists every pod with its reason)\n", what, n - SHOWN);
}

static void one_run(FILE *f, const struct gs_tsim *t)
{
    const struct gs_tsim_summary *s = &t->sum;
    fprintf(f, "\nway %s: %lld GPUs over %lld s, %lld events\n", gs_way_name(t->way),
            (long long)s->gpus, (long long)(s->horizon_us / 1000000), (long long)s->events);
    fprintf(f, "  %-16s %6s %9s %8s %10s %9s %9s %9s %9s %8s %8s %8s\n", "tenant", "pods",
            "completed", "preempt", "GPU-hours", "busy-h", "goodput-h", "lost-h", "below-ded",
            "wait-p50", "wait-p95", "wait-p99");
    for (size_t i = 0; i <= t->s->policy.ntenants; i++) {
        const struct gs_tsim_tenant *x = &t->tout[i];
        if (x->pods)
            fprintf(f,
                    "  %-16.16s %6lld %9lld %8lld %10.1f %9.1f %9.1f %9.1f %9.1f %8lld %8lld "
                    "%8lld\n",
                    x->name, (long long)x->pods, (long long)x->completed, (long long)x->preemptions,
                    GPU_H(x->usage.gpu_milli_s), GPU_H(x->usage.busy_milli_s),
                    GPU_H(x->usage.goodput_milli_s), GPU_H(x->usage.lost_milli_s),
                    GPU_H(x->short_milli_s), (long long)(x->wait.p50_us / 1000000),
                    (long long)(x->wait.p95_us / 1000000), (long long)(x->wait.p99_us / 1000000));
    }
    fprintf(f, "  %-16s %6s %10s %9s %9s %9s %8s %8s\n", "GPU model", "GPUs", "GPU-hours", "busy-h",
            "goodput-h", "lost-h", "alloc-%", "busy-%");
    for (size_t m = 0; m < t->nmodels; m++) {
        const struct gs_tsim_model *x = &t->mout[m];
        char a[24], b[24];
        fprintf(f, "  %-16.16s %6lld %10.1f %9.1f %9.1f %9.1f %8s %8s\n", x->name,
                (long long)x->gpus, GPU_H(x->usage.gpu_milli_s), GPU_H(x->usage.busy_milli_s),
                GPU_H(x->usage.goodput_milli_s), GPU_H(x->usage.lost_milli_s),
                tenths(gs__tsim_permille(x->usage.gpu_milli_s, x->gpus, s->horizon_us), a),
                tenths(gs__tsim_permille(x->usage.busy_milli_s, x->gpus, s->horizon_us), b));
    }
    if (s->timeslice)
        fprintf(f, "  %-16s %10s %10s %10s\n", "time-sliced", "asked-h", "entitled-h",
                "received-h");
    for (size_t i = 0; s->timeslice && i <= t->s->policy.ntenants; i++) {
        const struct gs_tsim_tenant *x = &t->tout[i];
        if (x->ts_asked_milli_s)
            fprintf(f, "  %-16.16s %10.2f %10.2f %10.2f\n", x->name,
                    (double)x->ts_asked_milli_s / 3600000.0,
                    (double)x->ts_entitled_milli_s / 3600000.0,
                    (double)x->ts_received_milli_s / 3600000.0);
    }
    /* deserved: GPUs, as the scheduler's last pass shared them out (no demand left: 0) */
    fprintf(f, "  %-16s %6s %12s %10s\n", "queue", "weight", "deserved@end", "GPU-hours");
    for (size_t q = 0; q < t->nqueues; q++)
        if (t->qout[q].gpu_milli_s || q < t->s->policy.nqueues)
            fprintf(f, "  %-16.16s %6d %12.1f %10.1f\n", t->qout[q].name, t->qout[q].weight,
                    (double)t->qout[q].deserved_milli / 1000.0,
                    (double)t->qout[q].gpu_milli_s / 3600000.0);
    unplaced(f, t, GS_POD_REJECTED, "rejected");
    unplaced(f, t, GS_POD_PENDING, "pending at the end");
}

void gs_tsim_write_text(FILE *f, struct gs_tsim *const *runs, size_t n)
{
    side_by_side(f, runs, n);
    for (size_t i = 0; i < n; i++)
        one_run(f, runs[i]);
}
