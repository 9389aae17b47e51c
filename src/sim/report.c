/* Reports of trace replays: table, JSON, curve. */
#include "gpusched/report.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"

#include <errno.h>
#include <stddef.h>
#include <jansson.h>
#include <string.h>

const int gs_report_points[6] = {80, 90, 95, 100, 110, 130};
#define NPOINTS  6
#define NREASONS 8

/* The integer figures of one run (or their mean over seeds). */
struct figures {
    int64_t at[NPOINTS]; /* basis points, -1 = not reached */
    int64_t alloc_bp, arrived_bp, cpu_bp, mem_bp;
    int64_t unalloc_milli, frag_milli, idle, partial;
    int64_t arrived, placed, failed, states;
    const char *reason[NREASONS];
    int64_t reason_count[NREASONS];
    int64_t same_node_bp, same_outcome_bp, compared;
};

/* figures_mean() sums the 12 counters from alloc_bp to states as one array. */
_Static_assert(offsetof(struct figures, states) - offsetof(struct figures, alloc_bp) ==
                   11 * sizeof(int64_t),
               "figures counters must be contiguous");

/* part / whole in basis points, rounded; 128-bit so huge memory totals cannot overflow */
static int64_t bp(int64_t part, int64_t whole)
{
    __extension__ typedef __int128 wide;
    return whole > 0 ? (int64_t)(((wide)part * 20000 / whole + 1) / 2) : 0;
}

static void count_reasons(const struct gs_sim_run *r, struct figures *f)
{
    for (size_t i = 0; i < r->n; i++) {
        const char *why = r->ev[i].reason;
        if (!why)
            continue;
        int k;
        for (k = 0; k < NREASONS && f->reason[k] && strcmp(f->reason[k], why) != 0; k++)
            ;
        if (k == NREASONS)
            k = NREASONS - 1; /* more kinds than slots: fold into the last */
        f->reason[k] = f->reason[k] ? f->reason[k] : why;
        f->reason_count[k]++;
    }
}

static void sort_reasons(struct figures *f)
{
    for (int i = 1; i < NREASONS; i++) /* most frequent first, insertion sort */
        for (int k = i; k > 0 && f->reason_count[k] > f->reason_count[k - 1]; k--) {
            const char *t = f->reason[k];
            int64_t c = f->reason_count[k];
            f->reason[k] = f->reason[k - 1], f->reason_count[k] = f->reason_count[k - 1];
            f->reason[k - 1] = t, f->reason_count[k - 1] = c;
        }
}

static void figures_of(const struct gs_sim_run *r, struct figures *f)
{
    memset(f, 0, sizeof(*f));
    int64_t used = r->n ? r->ev[r->n - 1].used_milli : 0;
    int64_t arrived = r->n ? r->ev[r->n - 1].arrived_milli : 0;
    for (int i = 0; i < NPOINTS; i++)
        f->at[i] = gs_sim_alloc_at(r, gs_report_points[i]);
    f->alloc_bp = bp(used, r->capacity_milli);
    f->arrived_bp = bp(arrived, r->capacity_milli);
    f->cpu_bp = bp(r->cpu_used, r->cpu_milli);
    f->mem_bp = bp(r->memory_used, r->memory_mib);
    f->unalloc_milli = r->capacity_milli - used;
    f->frag_milli = r->frag_milli;
    f->idle = r->gpus_idle;
    f->partial = r->gpus_partial;
    f->arrived = (int64_t)r->n;
    f->placed = (int64_t)r->placed;
    f->failed = (int64_t)r->failed;
    f->states = (int64_t)r->states;
    f->compared = r->peer_compared;
    f->same_node_bp = bp(r->peer_same_node, r->peer_ref_placed);
    f->same_outcome_bp = bp(r->peer_same_outcome, r->peer_compared);
    count_reasons(r, f);
    sort_reasons(f);
}

static int64_t avg(int64_t sum, int64_t n)
{
    return n ? (2 * sum + n) / (2 * n) : 0;
}

/* Mean over @n runs; a point any run did not reach stays -1. */
static void figures_mean(struct gs_sim_run *const *runs, size_t n, struct figures *m)
{
    struct figures f, s;
    memset(&s, 0, sizeof(s));
    for (size_t k = 0; k < n; k++) {
        figures_of(runs[k], &f);
        for (int i = 0; i < NPOINTS; i++)
            s.at[i] = (s.at[i] < 0 || f.at[i] < 0) ? -1 : s.at[i] + f.at[i];
        int64_t *a = &s.alloc_bp, *b = &f.alloc_bp;
        for (int i = 0; i < 12; i++) /* alloc_bp .. states: 12 consecutive int64_t */
            a[i] += b[i];
        s.same_node_bp += f.same_node_bp;
        s.same_outcome_bp += f.same_outcome_bp;
        s.compared += f.compared;
        for (int i = 0; i < NREASONS && f.reason[i]; i++) { /* merge by name */
            int j = 0;
            while (j < NREASONS - 1 && s.reason[j] && strcmp(s.reason[j], f.reason[i]) != 0)
                j++;
            s.reason[j] = s.reason[j] ? s.reason[j] : f.reason[i];
            s.reason_count[j] += f.reason_count[i];
        }
    }
    *m = s;
    for (int i = 0; i < NPOINTS; i++)
        m->at[i] = s.at[i] < 0 ? -1 : avg(s.at[i], (int64_t)n);
    int64_t *a = &m->alloc_bp;
    for (int i = 0; i < 12; i++)
        a[i] = avg(a[i], (int64_t)n);
    m->same_node_bp = avg(s.same_node_bp, (int64_t)n);
    m->same_outcome_bp = avg(s.same_outcome_bp, (int64_t)n);
    for (int i = 0; i < NREASONS; i++)
        m->reason_count[i] = avg(s.reason_count[i], (int64_t)n);
    sort_reasons(m);
}

static const char *fmt_bp(char *buf, int64_t v)
{
    if (v < 0)
        return strcpy(buf, "-");
    snprintf(buf, 24, "%lld.%02lld", (long long)(v / 100), (long long)(v % 100));
    return buf;
}

/* milli-units with one decimal, rounded half up (v >= 0) */
static const char *fmt_milli(char *buf, int64_t v)
{
    int64_t tenths = (v + 50) / 100;
    snprintf(buf, 24, "%lld.%lld", (long long)(tenths / 10), (long long)(tenths % 10));
    return buf;
}

static void text_header(FILE *f, const struct gs_report_ctx *ctx, struct gs_sim_run *const *runs,
                        size_t nseeds)
{
    int64_t per_model[GS_MODEL_MAX] = {0}, gpus = 0;
    for (size_t i = 0; i < ctx->nnodes; i++)
        if (ctx->nodes[i].gpus > 0) {
            per_model[ctx->nodes[i].model] += ctx->nodes[i].gpus;
            gpus += ctx->nodes[i].gpus;
        }
    fprintf(f, "cluster  %s: %zu nodes, %lld GPUs (", ctx->nodes_path, ctx->nnodes,
            (long long)gpus);
    const char *sep = "";
    for (int m = 0; m < GS_MODEL_MAX; m++)
        if (per_model[m]) {
            fprintf(f, "%s%s %lld", sep, gs_catalog_at(m)->name, (long long)per_model[m]);
            sep = ", ";
        }
    fprintf(f, ")\n");
    if (ctx->sequence_path)
        fprintf(f, "arrivals %s: %zu pods in the recorded order\n", ctx->sequence_path, runs[0]->n);
    else if (nseeds == 1)
        fprintf(f,
                "arrivals %s: %zu pods, drawn from its %zu until they ask %g x the "
                "cluster's GPUs (--tune; seed %llu)\n",
                ctx->pods_path, runs[0]->n, ctx->npods, ctx->tune_permille / 1000.0,
                (unsigned long long)runs[0]->seed);
    else {
        size_t sum = 0;
        for (size_t k = 0; k < nseeds; k++)
            sum += runs[k]->n;
        fprintf(f,
                "arrivals %s: %zu pods on average, drawn from its %zu until they ask %g x "
                "the cluster's GPUs (--tune)\n",
                ctx->pods_path, (sum + nseeds / 2) / nseeds, ctx->npods,
                ctx->tune_permille / 1000.0);
    }
    if (nseeds > 1)
        fprintf(f, "every figure is a mean over seeds %llu..%llu\n",
                (unsigned long long)runs[0]->seed, (unsigned long long)runs[nseeds - 1]->seed);
    if (ctx->note)
        fprintf(f, "%s\n", ctx->note);
}

static void text_row(FILE *f, const char *policy, const struct figures *m)
{
    char b[8][24];
    fprintf(f, "%-14s", policy);
    for (int i = 0; i < NPOINTS; i++)
        fprintf(f, " %7s", fmt_bp(b[0], m->at[i]));
    fprintf(f, "  %8s %8s %6s %6s %7lld %6lld\n", fmt_milli(b[1], m->unalloc_milli),
            fmt_milli(b[2], m->frag_milli), fmt_bp(b[3], m->cpu_bp), fmt_bp(b[4], m->mem_bp),
            (long long)m->placed, (long long)m->failed);
}

void gs_report_text(FILE *f, const struct gs_report_ctx *ctx, struct gs_sim_run *const *runs,
                    size_t npol, size_t nseeds)
{
    struct figures m;
    text_header(f, ctx, runs, nseeds);
    fprintf(f, "\nGPU allocation, %% of capacity, when the arrived GPU request reaches:\n");
    fprintf(f, "%-14s %7s %7s %7s %7s %7s %7s  %8s %8s %6s %6s %7s %6s\n", "policy", "80%", "90%",
            "95%", "100%", "110%", "130%", "unalloc", "frag", "cpu%", "mem%", "placed", "failed");
    int64_t short_bp = -1; /* arrived %, when a point was not reached */
    for (size_t p = 0; p < npol; p++) {
        figures_mean(runs + p * nseeds, nseeds, &m);
        text_row(f, runs[p * nseeds]->policy, &m);
        for (int i = 0; i < NPOINTS; i++)
            if (m.at[i] < 0)
                short_bp = m.arrived_bp;
    }
    fprintf(f, "(unalloc, frag: GPUs unallocated and fragmented at the end; cpu%%, mem%%: host "
               "CPU and memory allocated at the end)\n");
    if (short_bp >= 0) {
        char b[24];
        fprintf(
            f, "(-: the arrived GPU request stopped short of that point, at %s %% of capacity%s)\n",
            fmt_bp(b, short_bp), nseeds > 1 ? " on average; a point needs every seed" : "");
    }
    for (size_t p = 0; p < npol; p++) {
        figures_mean(runs + p * nseeds, nseeds, &m);
        fprintf(f, "\n%s: failed pods by reason%s:", runs[p * nseeds]->policy,
                nseeds > 1 ? " (mean per seed)" : "");
        int any = 0;
        for (int i = 0; i < NREASONS; i++)
            if (m.reason[i] && m.reason_count[i]) {
                fprintf(f, "%s %lld %s", any ? "," : "", (long long)m.reason_count[i], m.reason[i]);
                any = 1;
            }
        fprintf(f, "%s", any ? "" : " none");
        if (m.compared) {
            char b1[24], b2[24];
            fprintf(f,
                    "; same node as the reference for %s%% of the pods it placed, same outcome "
                    "for %s%%",
                    fmt_bp(b1, m.same_node_bp), fmt_bp(b2, m.same_outcome_bp));
        }
        fprintf(f, "\n");
    }
}

static json_t *bp_json(int64_t v)
{
    return v < 0 ? json_null() : json_real((double)v / 100.0);
}

static json_t *milli_json(int64_t v)
{
    return json_real((double)v / 1000.0);
}

static json_t *summary_json(const struct gs_sim_run *r, const struct figures *m)
{
    json_t *s = json_object(), *at = json_object(), *why = json_object();
    char key[8];
    for (int i = 0; i < NPOINTS; i++) {
        snprintf(key, sizeof(key), "%d", gs_report_points[i]);
        json_object_set_new(at, key, bp_json(m->at[i]));
    }
    for (int i = 0; i < NREASONS; i++)
        if (m->reason[i])
            json_object_set_new(why, m->reason[i], json_integer(m->reason_count[i]));
    json_object_set_new(s, "policy", json_string(r->policy));
    json_object_set_new(s, "gpu_allocation_at_arrived_pct", at);
    json_object_set_new(s, "gpu_allocation_ratio", json_real((double)m->alloc_bp / 10000.0));
    json_object_set_new(s, "gpu_allocation_pct", bp_json(m->alloc_bp));
    json_object_set_new(s, "arrived_gpu_pct", bp_json(m->arrived_bp));
    json_object_set_new(s, "gpu_capacity", json_integer(r->capacity_milli / 1000));
    json_object_set_new(s, "unallocated_gpus", milli_json(m->unalloc_milli));
    json_object_set_new(s, "fragmented_gpus", milli_json(m->frag_milli));
    json_object_set_new(s, "idle_gpus", json_integer(m->idle));
    json_object_set_new(s, "partially_allocated_gpus", json_integer(m->partial));
    json_object_set_new(s, "cpu_allocation_pct", bp_json(m->cpu_bp));
    json_object_set_new(s, "memory_allocation_pct", bp_json(m->mem_bp));
    json_object_set_new(s, "pods_arrived", json_integer(m->arrived));
    json_object_set_new(s, "pods_placed", json_integer(m->placed));
    json_object_set_new(s, "pods_failed", json_integer(m->failed));
    json_object_set_new(s, "failed_by_reason", why);
    json_object_set_new(s, "node_states", json_integer(m->states));
    if (m->compared) {
        json_t *ref = json_object();
        json_object_set_new(ref, "compared", json_integer(m->compared));
        json_object_set_new(ref, "same_node_pct", bp_json(m->same_node_bp));
        json_object_set_new(ref, "same_outcome_pct", bp_json(m->same_outcome_bp));
        json_object_set_new(s, "reference_agreement", ref);
    }
    return s;
}

static json_t *pod_json(const struct gs_report_ctx *ctx, const struct gs_sim_event *e)
{
    json_t *p = json_object(), *gpus = json_array();
    int placed = e->node >= 0;
    json_object_set_new(p, "name", json_string(ctx->pods[e->pod].name));
    json_object_set_new(p, "state", json_string(placed ? "running" : "rejected"));
    json_object_set_new(p, "node", placed ? json_string(ctx->nodes[e->node].name) : json_null());
    for (int g = 0; g < 32; g++)
        if (e->gpu_mask & (1u << g))
            json_array_append_new(gpus, json_integer(g));
    json_object_set_new(p, "gpus", gpus);
    json_object_set_new(p, "gpu_milli", json_integer(placed ? e->gpu_milli : 0));
    json_object_set_new(p, "mig", json_null());
    json_object_set_new(p, "submit_s", json_integer(0));
    json_object_set_new(p, "start_s", placed ? json_integer(0) : json_null());
    json_object_set_new(p, "end_s", json_null());
    json_object_set_new(p, "preemptions", json_integer(0));
    json_object_set_new(p, "reason", e->detail ? json_string(e->detail) : json_null());
    return p;
}

/* The allocation curve: allocation % (gs_sim_alloc_at()) at each whole arrived % up to where the
 * arrivals stopped, rounded as the summary's points are, as the FGD study plots it; null where no
 * arrival came near a point. */
static json_t *curve_json(const struct gs_sim_run *r)
{
    json_t *arrived = json_array(), *alloc = json_array();
    for (int pct = 0; pct <= gs_sim_last_pct(r); pct++) {
        json_array_append_new(arrived, json_integer(pct));
        json_array_append_new(alloc, bp_json(gs_sim_alloc_at(r, pct)));
    }
    return json_pack("{s:o,s:o}", "arrived_pct", arrived, "allocation_pct", alloc);
}

static json_t *run_json(const struct gs_report_ctx *ctx, const struct gs_sim_run *r)
{
    struct figures m;
    json_t *o = json_object(), *pods = json_array();
    figures_of(r, &m);
    for (size_t i = 0; i < r->n; i++)
        json_array_append_new(pods, pod_json(ctx, &r->ev[i]));
    json_object_set_new(o, "policy", json_string(r->policy));
    json_object_set_new(o, "seed", json_integer((json_int_t)r->seed));
    json_object_set_new(o, "pods", pods);
    json_object_set_new(o, "summary", summary_json(r, &m));
    json_object_set_new(o, "curve", curve_json(r));
    return o;
}

/* A report @path ("-": standard output) that could not be written, errno saying why. */
static int write_error(const char *path, struct gs_diag *d)
{
    return gs_diag_error_code(d, -EIO, "%s: cannot write: %s",
                              strcmp(path, "-") ? path : "standard output", strerror(errno));
}

int gs_report_json(const char *path, const struct gs_report_ctx *ctx,
                   struct gs_sim_run *const *runs, size_t npol, size_t nseeds, struct gs_diag *d)
{
    json_t *root;
    if (npol * nseeds == 1) {
        root = run_json(ctx, runs[0]);
        json_object_del(root, "policy");
        json_object_del(root, "seed");
    } else {
        json_t *all = json_array(), *mean = json_object();
        struct figures m;
        for (size_t i = 0; i < npol * nseeds; i++)
            json_array_append_new(all, run_json(ctx, runs[i]));
        for (size_t p = 0; p < npol; p++) {
            figures_mean(runs + p * nseeds, nseeds, &m);
            json_object_set_new(mean, runs[p * nseeds]->policy, summary_json(runs[p * nseeds], &m));
        }
        root = json_object();
        json_object_set_new(root, "runs", all);
        json_object_set_new(root, "mean", mean);
    }
    if (!root)
        return -ENOMEM;
    const size_t flags = JSON_INDENT(1) | JSON_REAL_PRECISION(6);
    int rc = strcmp(path, "-") != 0 ? json_dump_file(root, path, flags)
                                    : json_dumpf(root, stdout, flags) || fputc('\n', stdout) < 0;
    json_decref(root);
    if (rc)
        return write_error(path, d);
    return 0;
}

int gs_report_curve(const char *path, const struct gs_report_ctx *ctx,
                    struct gs_sim_run *const *runs, size_t nruns, struct gs_diag *d)
{
    FILE *f = strcmp(path, "-") != 0 ? fopen(path, "w") : stdout;
    char a[24], b[24];
    if (!f)
        return write_error(path, d);
    fprintf(f, "policy,seed,seq,pod,arrived_milli,allocated_milli,arrived_pct,allocation_pct\n");
    for (size_t k = 0; k < nruns; k++) {
        const struct gs_sim_run *r = runs[k];
        for (size_t i = 0; i < r->n; i++) {
            const struct gs_sim_event *e = &r->ev[i];
            fprintf(f, "%s,%llu,%zu,%s,%lld,%lld,%s,%s\n", r->policy, (unsigned long long)r->seed,
                    i, ctx->pods[e->pod].name, (long long)e->arrived_milli,
                    (long long)e->used_milli, fmt_bp(a, bp(e->arrived_milli, r->capacity_milli)),
                    fmt_bp(b, bp(e->used_milli, r->capacity_milli)));
        }
    }
    if (f != stdout ? fclose(f) != 0 : fflush(f) != 0 || ferror(f))
        return write_error(path, d);
    return 0;
}
