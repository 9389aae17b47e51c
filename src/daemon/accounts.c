/*
 * gpuschedd: what each tenant uses, deserves and owes — GET /v1/tenants, /v1/queues, /v1/bills.
 *
 * /v1/queues is queue.c's: the scheduler's queues. Bills price the store's ledger (every
 * run of every pod, a run still going counted up to now) with the rate card by gs_bill_add_use():
 * whole cards as exclusive use, shares of a card as shared use. A tenant's token sees its own
 * tenant and bill only (another's: 403), every queue (cluster-wide, as in Volcano); the admin's
 * all.
 */
#include "accounts.h"
#include "api.h"
#include "queue.h"
#include "sched.h"
#include "quota.h"
#include "store.h"

#include "gpusched/billing.h"
#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/fleet.h"
#include "gpusched/tenancy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct use {
    int64_t running, pending, gpus, milli, pending_milli;
};

/* Every tenant's use in config order; NULL when out of memory. */
static struct use *tenant_use(const struct gsd_state *st)
{
    size_t n = st->cfg->ntenants;
    struct use *u = calloc(n ? n : 1, sizeof(*u));
    for (const struct gsd_pod *p = st->head; u && p; p = p->next) {
        const struct gsd_tenant *t = gsd_tenant_named(st->cfg, p->tenant);
        if (!t)
            continue; /* a namespace no tenant owns (admin's), or a tenant since removed */
        struct use *x = &u[t - st->cfg->tenants];
        /* one evicted through Kubernetes (GSD_EVICTING) waits again, as its view and
         * GET /v1/status show it */
        x->running += p->state == GSD_RUNNING;
        x->pending += p->state != GSD_RUNNING;
        x->milli += p->state == GSD_RUNNING ? p->milli : 0;
        x->pending_milli += p->state != GSD_RUNNING ? p->milli : 0;
        x->gpus += p->state == GSD_RUNNING && p->req.gpu_milli == 1000 ? p->req.num_gpu : 0;
    }
    return u;
}

int64_t gsd_capacity_milli(const struct gsd_state *st)
{
    const struct gs_fleet *f = gs_tenancy_fleet(st->sched.tn);
    int64_t capacity = 0;
    for (size_t i = 0; i < gs_fleet_node_count(f); i++)
        for (int g = 0; gs_fleet_node_ready(f, i) && g < gs_fleet_node_gpus(f, i); g++)
            capacity += gs_fleet_card_healthy(f, i, g) ? 1000 : 0;
    return capacity;
}

/* @t with its use @u. `cpu_weight` is the DaemonConfig's: its pods' CPU weight on a node. A
 * tenant has no queue of its own: its pods run in the queue they name, else `default` (Volcano). */
static json_t *tenant_json(const struct gsd_tenant *t, const struct use *u)
{
    json_t *ns = json_array();
    for (size_t k = 0; k < t->nns; k++)
        json_array_append_new(ns, json_string(t->ns[k]));
    return json_pack("{s:s, s:o, s:i, s:I, s:I, s:I, s:I, s:I}", "name", t->name, "namespaces", ns,
                     "cpu_weight", t->weight, "pods_running", (json_int_t)u->running,
                     "pods_pending", (json_int_t)u->pending, "gpus_allocated", (json_int_t)u->gpus,
                     "gpu_milli_allocated", (json_int_t)u->milli, "gpu_milli_pending",
                     (json_int_t)u->pending_milli);
}

/* A tenant's entry with its quotas, hard and used. */
static json_t *with_quota(const struct gsd_state *st, const struct gsd_tenant *t, json_t *o)
{
    if (o)
        json_object_set_new(o, "quota", gsd_quota_json(st, t));
    return o;
}

/* The tenant named @name that @viewer (NULL: the admin) may see; else NULL after a 403/404
 * naming @field (the query argument that gave @name; "" when the path did: a 403 then names the
 * token, Authorization). */
static const struct gsd_tenant *visible(const struct gsd_state *st, struct gsd_req *r,
                                        const struct gsd_tenant *viewer, const char *name,
                                        const char *field)
{
    for (size_t i = 0; i < st->cfg->ntenants; i++)
        if (!strcmp(st->cfg->tenants[i].name, name)) {
            if (!viewer || viewer == &st->cfg->tenants[i])
                return &st->cfg->tenants[i];
            break;
        }
    if (viewer)
        gsd_reply_error(r, 403, field[0] ? field : "Authorization",
                        "tenant %.64s: a tenant token sees its own tenant only", name);
    else
        gsd_reply_error(r, 404, field, "tenant %.64s not found", name);
    return NULL;
}

void gsd_accounts_list(struct gsd_state *st, struct gsd_req *r, const struct gsd_tenant *viewer,
                       int queues, const char *name)
{
    if (queues) {
        gsd_queues_list(st, r, name);
        return;
    }
    const struct gsd_tenant *one = name ? visible(st, r, viewer, name, "") : viewer;
    if (name && !one)
        return;
    struct use *u = tenant_use(st);
    if (!u) {
        gsd_reply_error(r, 500, "", "out of memory");
        return;
    }
    size_t i = one ? (size_t)(one - st->cfg->tenants) : 0;
    if (name) {
        gsd_reply_json(r, 200, with_quota(st, one, tenant_json(one, &u[i])));
    } else {
        json_t *items = json_array();
        for (; i < st->cfg->ntenants; i++) {
            const struct gsd_tenant *t = &st->cfg->tenants[i];
            json_array_append_new(items, with_quota(st, t, tenant_json(t, &u[i])));
            if (one)
                break;
        }
        gsd_reply_json(r, 200, json_pack("{s:o}", "items", items));
    }
    free(u);
}

/* ---- bills ---- */

struct billing {
    const struct gsd_state *st;
    struct gs_bill *bill;
    json_t *unpriced;
    int64_t now_s;
};

/* The catalog model a run used: as the ledger recorded it, else (older rows) its node's now. */
static int run_model(const struct gsd_state *st, const struct gsd_run *run)
{
    int m = run->model[0] ? gs_catalog_find(run->model, -1) : -1;
    if (m >= 0)
        return m;
    int node = gs_cluster_find(st->cluster, run->node);
    struct gs_node_info ni;
    if (node < 0 || gs_cluster_node_info(st->cluster, (size_t)node, &ni))
        return -1;
    return ni.model;
}

static int bill_run(void *ud, const struct gsd_run *run)
{
    struct billing *b = ud;
    struct gs_diag why;
    gs_diag_init(&why);
    if (!run->gpu_milli || !run->cards)
        return 0; /* a pod without GPUs: bills price GPUs only */
    int model = run_model(b->st, run);
    if (model < 0) {
        gs_diag_error(&why, "node %s is no longer in the inventory: its GPU model is unknown",
                      run->node);
    } else {
        int64_t end_s = run->end_us >= 0 ? run->end_us / 1000000 : b->now_s;
        struct gs_bill_use use = {
            .tenant = run->tenant,
            .mode = run->mig[0]              ? GS_BILL_MIG
                    : run->gpu_milli == 1000 ? GS_BILL_EXCLUSIVE
                                             : GS_BILL_SHARED,
            .model = model,
            .profile = run->mig[0] ? run->mig : NULL,
            .cards = run->cards,
            .share_milli = run->mig[0] ? 1000 : run->gpu_milli,
            .start_s = run->start_us / 1000000,
            .end_s = end_s > run->start_us / 1000000 ? end_s : run->start_us / 1000000,
        };
        int rc = gs_bill_add_use(b->bill, &use, &why);
        if (rc == -ENOMEM)
            return rc;
        if (!rc)
            return 0;
    }
    char pod[GSD_KEY_MAX];
    snprintf(pod, sizeof(pod), "%s/%s", run->ns, run->name);
    json_array_append_new(b->unpriced, json_pack("{s:s, s:s, s:s}", "tenant", run->tenant, "pod",
                                                 pod, "reason", why.msg));
    return 0;
}

static json_t *money(int64_t udollars)
{
    char buf[GS_MONEY_STR_MAX];
    return json_string(gs_money_format(udollars, buf));
}

/* @udollars as people read it (gs_money_format_human()), for pages that only display it. */
static json_t *money_human(const struct gsd_state *st, int64_t udollars)
{
    char buf[GS_MONEY_HUMAN_MAX];
    return json_string(gs_money_format_human(udollars, gs_ratecard_currency(st->cfg->rates), buf));
}

static json_t *line_json(const struct gs_bill_line *l)
{
    char date[16];
    time_t t = (time_t)(l->day * GS_BILL_DAY_S);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(date, sizeof(date), "%Y-%m-%d", &tm);
    return json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:o, s:I, s:o, s:I}", "tenant", l->tenant,
                     "resource", l->resource, "date", date, "unit", gs_bill_mode_unit(l->mode),
                     "quantity", (json_int_t)l->quantity, "model", gs_catalog_at(l->model)->name,
                     "rate_per_hour", money(l->rate_udollars_per_hour), "rate_per_hour_udollars",
                     (json_int_t)l->rate_udollars_per_hour, "cost", money(l->cost_udollars),
                     "cost_udollars", (json_int_t)l->cost_udollars);
}

/* The bill of @name (NULL: every tenant) from the ledger, runs still going priced up to now.
 * Return: 0 and @b filled (gs_bill_free(b->bill), json_decref(b->unpriced)); -ENOMEM; -EIO. */
static int bill_compute(const struct gsd_state *st, const char *name, struct billing *b)
{
    /* a run still going is priced up to the scheduler's clock, the one its start was read on
     * (the manual one with --manual-clock) */
    *b = (struct billing){st, NULL, json_array(), gsd_sched_now(st) / 1000000};
    int rc = b->unpriced ? gs_bill_new(st->cfg->rates, &b->bill) : -ENOMEM;
    if (!rc)
        rc = gsd_store_ledger(st->store, name, bill_run, b);
    if (rc) {
        gs_bill_free(b->bill);
        json_decref(b->unpriced);
    }
    return rc;
}

json_t *gsd_bill_accrued(struct gsd_state *st)
{
    int64_t now = gsd_mono_us(), clock = gsd_sched_now(st);
    /* kept a while by the wall clock; with --manual-clock, only while that clock stands still:
     * a step of it is hours of use the bills already price */
    if (st->bill_cache && now - st->bill_cache_at_us < GSD_BILL_CACHE_US &&
        (!st->manual_clock || clock == st->bill_cache_clock_us))
        return st->bill_cache;
    struct billing b;
    if (!st->cfg->rates || bill_compute(st, NULL, &b))
        return NULL;
    json_t *totals = json_object();
    size_t it = 0;
    /* summed in one pass: a run priced from long ago is a line a day, so a total per line read
     * (gs_bill_total_udollars()) would be quadratic in them */
    for (const struct gs_bill_line *l; totals && (l = gs_bill_next(b.bill, &it)) != NULL;) {
        json_int_t was = json_integer_value(json_object_get(totals, l->tenant));
        json_object_set_new(totals, l->tenant, json_integer(was + l->cost_udollars));
    }
    gs_bill_free(b.bill);
    json_decref(b.unpriced);
    if (!totals)
        return NULL;
    json_decref(st->bill_cache);
    st->bill_cache = totals;
    st->bill_cache_at_us = now;
    st->bill_cache_clock_us = clock;
    return totals;
}

void gsd_bill_handle(struct gsd_state *st, struct gsd_req *r, const struct gsd_tenant *viewer,
                     const char *name)
{
    /* /v1/bills?tenant=NAME names it in the query; /v1/tenants/NAME/bill (no arguments) in the path
     */
    if (name && !visible(st, r, viewer, name, gsd_qarg(r, "tenant") ? "tenant" : ""))
        return;
    if (!name && viewer)
        name = viewer->name;
    if (!st->cfg->rates) {
        gsd_reply_error(r, 503, "", "no rate card: set rateCard in the config");
        return;
    }
    struct billing b;
    int rc = bill_compute(st, name, &b);
    if (rc) {
        gsd_reply_error(r, rc == -EIO ? 503 : 500, "", "cannot read the ledger");
        return;
    }
    json_t *lines = json_array(), *totals = json_array();
    const char *last = NULL;
    size_t it = 0;
    for (const struct gs_bill_line *l; (l = gs_bill_next(b.bill, &it)) != NULL;) {
        json_array_append_new(lines, line_json(l));
        if (!last || strcmp(last, l->tenant)) {
            int64_t sum = gs_bill_total_udollars(b.bill, l->tenant);
            json_array_append_new(totals,
                                  json_pack("{s:s, s:o, s:I, s:o}", "tenant", l->tenant, "total",
                                            money(sum), "total_udollars", (json_int_t)sum,
                                            "total_human", money_human(st, sum)));
        }
        last = l->tenant;
    }
    int64_t total = gs_bill_total_udollars(b.bill, NULL);
    gsd_reply_json(r, 200,
                   json_pack("{s:s, s:o, s:o, s:o, s:I, s:o, s:o}", "currency",
                             gs_ratecard_currency(st->cfg->rates), "lines", lines, "tenants",
                             totals, "total", money(total), "total_udollars", (json_int_t)total,
                             "total_human", money_human(st, total), "unpriced", b.unpriced));
    gs_bill_free(b.bill);
}
