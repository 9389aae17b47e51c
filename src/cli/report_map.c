/*
 * The cluster map of gpusched report: the state of every card at each time of the slider.
 *
 * A card's state at time t is what its spans of use covering t (start <= t < end) make of it: its
 * mode (whole, shared, MIG, time-sliced; free when none) and its tenants, and for MIG each
 * instance's profile, first memory slice and tenant. Distinct states are numbered once for the
 * whole page; each run's map is a matrix of state numbers, card by card (in the cluster's order:
 * zones, their nodes, their cards), time by time, one byte a cell (two, little-endian, past 256
 * states), in base64. The slider's times are a round step (1 min ... 1 day) chosen so the cells of
 * all runs stay within MAP_CELLS_MAX bytes: a 37,500-card cluster run three ways gets an hourly
 * slider over a day, a 480-card one a five-minute one.
 */
#include "report.h"

#include "gpusched/billing.h"
#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/fleet.h"
#include "gpusched/mig.h"

#include <errno.h>
#include <nettle/base64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAP_CELLS_MAX  3000000
#define MAP_TIMES_MAX  289
#define MAP_STATES_MAX 65535
#define KEY_MAX        1024

_Static_assert(RP_WHOLE == (int)GS_CARD_EXCLUSIVE && RP_SHARED == (int)GS_CARD_SHARED &&
                   RP_MIG == (int)GS_CARD_MIG && RP_TIMESLICE == (int)GS_CARD_TIMESLICED,
               "a span's mode is named as gpuschedd names a card's");

/* The cluster's nodes, in map order, found by name. */
struct cl {
    struct gs_names names;
    int32_t *base, *gpus, *model; /* first card, cards, catalog model (-1 none) per node */
    size_t nnodes, ncards;
    int32_t *of_doc; /* doc->nodes index -> cluster node */
};

struct states {
    struct gs_names keys;
    json_t *list;
};

/* card_lists() - node @n (zones[@z].nodes[@i]) gives each of its @gpus cards a PCIe domain (an
 * integer 0..63) and an NVLink group (one, or null), as the simulator writes them: the page draws
 * the cards by them. */
static int card_lists(const struct rp_doc *doc, const json_t *n, int gpus, size_t z, size_t i,
                      struct gs_diag *d)
{
    static const char *const key[] = {"pcie_domain", "nvlink_group"};
    for (int k = 0; k < 2; k++) {
        const json_t *a = json_object_get(n, key[k]), *v;
        size_t g;
        if (!json_is_array(a) || json_array_size(a) != (size_t)gpus)
            return gs_diag_error(d, "%s: cluster.zones[%zu].nodes[%zu].%s: expected an array of %d",
                                 doc->path, z, i, key[k], gpus);
        json_array_foreach(a, g, v)
        {
            int64_t x = json_integer_value(v);
            if ((k == 1 && json_is_null(v)) || (json_is_integer(v) && x >= 0 && x <= 63))
                continue;
            return gs_diag_error(d,
                                 "%s: cluster.zones[%zu].nodes[%zu].%s[%zu]: expected an "
                                 "integer 0..63%s",
                                 doc->path, z, i, key[k], g, k ? " or null" : "");
        }
    }
    return 0;
}

/* A key of @o (at path @at) not among @keys is named in a warning: the map reads no other. */
static void warn_keys(const struct rp_doc *doc, const json_t *o, const char *at,
                      const char *const *keys, size_t n)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v)
    {
        size_t k = 0;
        while (k < n && strcmp(keys[k], key))
            k++;
        if (k == n)
            gs__cli_say("report", "warning: %s: %s.%s is not read by this report", doc->path, at,
                        key);
    }
}

static int read_cluster(const struct rp_doc *doc, struct cl *cl, struct gs_diag *d)
{
    static const char *const ckeys[] = {"zones"}, *const zkeys[] = {"name", "nodes"};
    static const char *const nkeys[] = {
        "name", "gpus", "model", "nvlink_group", "pcie_domain", "template", "timeslice_replicas"};
    json_t *zones = json_object_get(doc->cluster, "zones"), *z, *nodes, *n;
    size_t i, j;
    char at[64];
    if (!json_is_array(zones))
        return gs_diag_error(d, "%s: cluster.zones: expected an array", doc->path);
    warn_keys(doc, doc->cluster, "cluster", ckeys, 1);
    json_array_foreach(zones, i, z) json_array_foreach(json_object_get(z, "nodes"), j, n)
        cl->nnodes++;
    if (!(cl->base = calloc(cl->nnodes + 1, sizeof(*cl->base))) ||
        !(cl->gpus = calloc(cl->nnodes + 1, sizeof(*cl->gpus))) ||
        !(cl->model = calloc(cl->nnodes + 1, sizeof(*cl->model))))
        return -ENOMEM;
    size_t k = 0;
    json_array_foreach(zones, i, z)
    {
        nodes = json_object_get(z, "nodes");
        if (!json_is_array(nodes))
            return gs_diag_error(d, "%s: cluster.zones[%zu].nodes: expected an array", doc->path,
                                 i);
        snprintf(at, sizeof(at), "cluster.zones[%zu]", i);
        warn_keys(doc, z, at, zkeys, 2);
        json_array_foreach(nodes, j, n)
        {
            snprintf(at, sizeof(at), "cluster.zones[%zu].nodes[%zu]", i, j);
            if (json_is_object(n))
                warn_keys(doc, n, at, nkeys, 7);
            json_t *name = json_object_get(n, "name"), *gpus = json_object_get(n, "gpus");
            json_t *model = json_object_get(n, "model");
            if (!json_is_string(name) || !json_is_integer(gpus) || json_integer_value(gpus) < 0 ||
                json_integer_value(gpus) > 64 ||
                (model && !json_is_null(model) && !json_is_string(model)))
                return gs_diag_error(d,
                                     "%s: cluster.zones[%zu].nodes[%zu]: expected name, gpus "
                                     "(0..64) and model",
                                     doc->path, i, j);
            int rc = card_lists(doc, n, (int)json_integer_value(gpus), i, j, d);
            if (rc)
                return rc;
            if (json_is_string(model) && gs_catalog_find(json_string_value(model), -1) < 0)
                return gs_diag_error(d,
                                     "%s: cluster.zones[%zu].nodes[%zu].model: unknown GPU model "
                                     "\"%.40s\"",
                                     doc->path, i, j, json_string_value(model));
            int32_t id = gs_names_intern(&cl->names, json_string_value(name));
            if (id < 0)
                return id;
            if ((size_t)id != k)
                return gs_diag_error(d, "%s: cluster: node \"%.80s\" is listed twice", doc->path,
                                     json_string_value(name));
            cl->base[k] = (int32_t)cl->ncards;
            cl->gpus[k] = (int32_t)json_integer_value(gpus);
            cl->model[k] =
                json_is_string(model) ? gs_catalog_find(json_string_value(model), -1) : -1;
            cl->ncards += (size_t)cl->gpus[k++];
        }
    }
    /* The nodes the placements name, by their index among the cluster's. */
    if (!(cl->of_doc = malloc((doc->nodes.n + 1) * sizeof(*cl->of_doc))))
        return -ENOMEM;
    for (size_t x = 0; x < doc->nodes.n; x++) {
        int32_t id = gs_names_intern(&cl->names, doc->nodes.v[x]);
        if (id < 0)
            return id;
        if ((size_t)id >= cl->nnodes)
            return gs_diag_error(d,
                                 "%s: a placement names node \"%.80s\", which the cluster has "
                                 "not",
                                 doc->path, doc->nodes.v[x]);
        cl->of_doc[x] = id;
    }
    return 0;
}

static void cl_free(struct cl *cl)
{
    gs_names_free(&cl->names);
    free(cl->base);
    free(cl->gpus);
    free(cl->model);
    free(cl->of_doc);
}

/* The card a span is on, sorting key: card, then start, then what tells equal starts apart (so
 * the first clash card_ok() names is the same in every run). */
static const struct cl *sort_cl;

static size_t card_of(const struct cl *cl, const struct rp_span *s)
{
    return (size_t)cl->base[cl->of_doc[s->node]] + (size_t)s->gpu;
}

static int by_card(const void *a, const void *b)
{
    const struct rp_span *x = a, *y = b;
    size_t cx = card_of(sort_cl, x), cy = card_of(sort_cl, y);
    if (cx != cy)
        return cx < cy ? -1 : 1;
    if (x->start_s != y->start_s)
        return x->start_s < y->start_s ? -1 : 1;
    if (x->mode != y->mode)
        return x->mode < y->mode ? -1 : 1;
    if (x->end_s != y->end_s)
        return x->end_s < y->end_s ? -1 : 1;
    return (x->mig_start > y->mig_start) - (x->mig_start < y->mig_start);
}

/* Tenants of a card in the order of their names, so a state reads the same in every file. */
static const struct gs_names *sort_tenants;

static int by_name(const void *a, const void *b)
{
    return strcmp(sort_tenants->v[*(const int32_t *)a], sort_tenants->v[*(const int32_t *)b]);
}

static int by_slot(const void *a, const void *b)
{
    const struct rp_span *x = *(const struct rp_span *const *)a;
    const struct rp_span *y = *(const struct rp_span *const *)b;
    return (x->mig_start > y->mig_start) - (x->mig_start < y->mig_start);
}

/* The MIG model of catalog model @model, or -1. */
static int mig_model(int model)
{
    return model >= 0 ? gs_mig_model_find(gs_catalog_at(model)->name) : -1;
}

/* The memory slices [*@lo, *@hi) MIG span @s holds on a card of catalog model @model: its
 * profile's, at a start NVIDIA's placements allow (nvidia-smi mig -lgipp). Return: 0; -1 not a
 * start of the profile; -2 no profile of the model. */
static int mig_slices(const struct rp_doc *doc, const struct rp_span *s, int model, int *lo,
                      int *hi)
{
    int mm = mig_model(model);
    int p = mm >= 0 ? gs_mig_profile_find(mm, doc->profiles.v[s->profile], -1) : -1;
    if (p < 0)
        return -2;
    const struct gs_mig_profile *pr = &gs_mig_model_at(mm)->profiles[p];
    *lo = s->mig_start;
    *hi = s->mig_start + pr->memory_slices;
    return pr->starts & (1u << s->mig_start) ? 0 : -1;
}

/* state_of() - the number of the state the spans @on[0..@n) make of a card of @model. */
static int32_t state_of(const struct rp_doc *doc, struct states *st, const struct rp_span **on,
                        size_t n, int model, struct gs_diag *d)
{
    char key[KEY_MAX];
    int32_t tenants[64];
    size_t nt = 0, len = 0;
    int mode = n ? on[0]->mode : RP_FREE;
    if (mode == RP_MIG)
        qsort(on, n, sizeof(*on), by_slot);
    for (size_t i = 0; i < n && nt < 64; i++)
        tenants[nt++] = on[i]->tenant;
    sort_tenants = &doc->tenants;
    qsort(tenants, nt, sizeof(*tenants), by_name);
    len += (size_t)snprintf(key, sizeof(key), "%d", mode);
    for (size_t i = 0; mode == RP_MIG && i < n && len < sizeof(key); i++)
        len += (size_t)snprintf(key + len, sizeof(key) - len, "|%d@%d=%d/%d", on[i]->profile,
                                on[i]->mig_start, on[i]->tenant, model);
    for (size_t i = 0; mode != RP_MIG && i < nt && len < sizeof(key); i++)
        if (i == 0 || tenants[i] != tenants[i - 1])
            len += (size_t)snprintf(key + len, sizeof(key) - len, "|%d", tenants[i]);
    if (len >= sizeof(key))
        return gs_diag_error(d, "%s: a card held by more pods than the map can show", doc->path);
    size_t before = st->keys.n;
    int32_t id = gs_names_intern(&st->keys, key);
    if (id < 0 || (size_t)id < before)
        return id;
    if (id > MAP_STATES_MAX)
        return gs_diag_error(d, "%s: more than %d card states", doc->path, MAP_STATES_MAX);
    json_t *s = json_pack("{s:s,s:[]}", "mode", gs_card_mode_name((enum gs_card_mode)mode),
                          "tenants"),
           *mig = json_array();
    for (size_t i = 0; s && i < nt; i++)
        if (i == 0 || tenants[i] != tenants[i - 1])
            json_array_append_new(json_object_get(s, "tenants"),
                                  json_string(doc->tenants.v[tenants[i]]));
    /* card_ok() has checked each MIG span's profile and start against the model */
    for (size_t i = 0; mode == RP_MIG && mig && i < n; i++) {
        int lo = 0, hi = 0;
        mig_slices(doc, on[i], model, &lo, &hi);
        json_array_append_new(mig, json_pack("{s:s,s:i,s:i,s:s}", "profile",
                                             doc->profiles.v[on[i]->profile], "start", lo, "size",
                                             hi - lo, "tenant", doc->tenants.v[on[i]->tenant]));
    }
    if (mode == RP_MIG &&
        json_object_set_new(s, "slices",
                            json_integer(gs_mig_model_at(mig_model(model))->memory_slices)) != 0)
        s = NULL;
    if (!s || json_object_set_new(s, "mig", mig) != 0 || json_array_append_new(st->list, s) != 0)
        return -ENOMEM;
    return id;
}

/* card_ok() - the spans @s[0..@n) of one card (sorted by start), of catalog model @model, are
 * what one card can hold at once: a whole card alone, the same sharing mode, MIG instances at
 * their profiles' starts on slices no other holds. Return: 0; -EINVAL with @d. */
static int card_ok(const struct rp_doc *doc, const struct rp_span *s, size_t n, int model,
                   struct gs_diag *d)
{
    static const char *const what[] = {"", "whole", "shared", "MIG", "time-sliced"};
    _Static_assert(RP_TIMESLICE == 4, "what[] names every mode"); /* gs__bill_pod() knew each */
    int lo = 0, hi = 0, lo2, hi2;
    for (size_t i = 0; i < n; i++) {
        const char *node = doc->nodes.v[s[i].node];
        int bad = s[i].mode == RP_MIG ? mig_slices(doc, &s[i], model, &lo, &hi) : 0;
        if (bad == -2)
            return gs_diag_error(d, "%s: MIG profile \"%.40s\" is not one of %s's", doc->path,
                                 doc->profiles.v[s[i].profile],
                                 model >= 0 ? gs_catalog_at(model)->name : "the card model");
        if (bad)
            return gs_diag_error(d,
                                 "%s: MIG %s at memory slice %d on card %d of node \"%.80s\": "
                                 "not one of the profile's starts",
                                 doc->path, doc->profiles.v[s[i].profile], s[i].mig_start, s[i].gpu,
                                 node);
        for (size_t j = i + 1; j < n && s[j].start_s < s[i].end_s; j++) {
            /* a run that ended as it started (a pod done within its first second) holds none */
            if (s[j].end_s == s[j].start_s)
                continue;
            int clash = s[i].mode == RP_WHOLE || s[j].mode != s[i].mode;
            if (!clash && s[i].mode == RP_MIG && !mig_slices(doc, &s[j], model, &lo2, &hi2))
                clash = lo < hi2 && lo2 < hi;
            if (clash)
                return gs_diag_error(d,
                                     "%s: card %d of node \"%.80s\" is held %s from %lld s and "
                                     "%s from %lld s at once%s",
                                     doc->path, s[i].gpu, node, what[s[i].mode],
                                     (long long)s[i].start_s, what[s[j].mode],
                                     (long long)s[j].start_s,
                                     s[i].mode == RP_MIG && s[j].mode == RP_MIG
                                         ? ": their MIG instances share memory slices"
                                         : "");
        }
    }
    return 0;
}

/* The slider's step: the shortest round one giving at most @k times over @horizon_s. */
static int64_t slider_step(int64_t horizon_s, size_t k)
{
    static const int64_t round_s[] = {60,   120,   300,   600,   900,   1800,  3600,
                                      7200, 10800, 21600, 43200, 86400, 604800};
    for (size_t i = 0; i < sizeof(round_s) / sizeof(round_s[0]); i++)
        if ((horizon_s + round_s[i] - 1) / round_s[i] <= (int64_t)k)
            return round_s[i];
    return (horizon_s + (int64_t)k - 1) / (int64_t)k;
}

static int map_run(const struct rp_doc *doc, const struct cl *cl, struct states *st,
                   struct rp_run *r, size_t k_max, struct gs_diag *d)
{
    int64_t horizon = json_integer_value(json_object_get(r->summary, "horizon_s"));
    for (size_t i = 0; i < r->nspans; i++) {
        const struct rp_span *s = &r->spans[i];
        if (s->gpu >= cl->gpus[cl->of_doc[s->node]])
            return gs_diag_error(d, "%s: a placement names card %d of node \"%.80s\", which has %d",
                                 doc->path, s->gpu, doc->nodes.v[s->node],
                                 cl->gpus[cl->of_doc[s->node]]);
        horizon = s->end_s > horizon ? s->end_s : horizon;
    }
    int64_t step = slider_step(horizon > 0 ? horizon : 1, k_max);
    size_t k = (size_t)((horizon + step - 1) / step), width;
    k = k ? k : 1;
    sort_cl = cl;
    qsort(r->spans, r->nspans, sizeof(*r->spans), by_card);
    uint16_t *cells = calloc(cl->ncards * k + 1, sizeof(*cells));
    const struct rp_span **on = malloc((r->nspans + 1) * sizeof(*on));
    if (!cells || !on) {
        free(cells);
        free(on);
        return -ENOMEM;
    }
    int32_t rc = 0;
    size_t a = 0;
    for (size_t node = 0; node < cl->nnodes && rc >= 0; node++)
        for (int32_t g = 0; g < cl->gpus[node] && rc >= 0; g++) {
            size_t card = (size_t)cl->base[node] + (size_t)g, b = a;
            while (b < r->nspans && card_of(cl, &r->spans[b]) == card)
                b++;
            if (card_ok(doc, &r->spans[a], b - a, cl->model[node], d))
                rc = -EINVAL;
            for (size_t t = 0; t < k && rc >= 0; t++) {
                int64_t at = (int64_t)t * step;
                size_t n = 0;
                for (size_t i = a; i < b && r->spans[i].start_s <= at; i++)
                    if (at < r->spans[i].end_s)
                        on[n++] = &r->spans[i];
                rc = n ? state_of(doc, st, on, n, cl->model[node], d) : 0;
                cells[card * k + t] = (uint16_t)(rc > 0 ? rc : 0);
            }
            a = b;
        }
    free(on);
    width = st->keys.n > 256 ? 2 : 1;
    size_t nbytes = cl->ncards * k * width;
    uint8_t *raw = malloc(nbytes + 1);
    char *b64 = malloc(BASE64_ENCODE_RAW_LENGTH(nbytes) + 1);
    if (rc >= 0 && (!raw || !b64))
        rc = -ENOMEM;
    if (rc >= 0) {
        for (size_t i = 0; i < cl->ncards * k; i++) {
            raw[i * width] = (uint8_t)(cells[i] & 0xff);
            if (width == 2)
                raw[i * width + 1] = (uint8_t)(cells[i] >> 8);
        }
        base64_encode_raw(b64, nbytes, raw);
        b64[BASE64_ENCODE_RAW_LENGTH(nbytes)] = '\0';
        json_t *times = json_array();
        for (size_t t = 0; times && t < k; t++)
            json_array_append_new(times, json_integer((json_int_t)t * step));
        r->map = json_pack("{s:I,s:o,s:i,s:s}", "step_s", (json_int_t)step, "times_s", times,
                           "width", (int)width, "cells", b64);
        rc = r->map ? 0 : -ENOMEM;
    }
    free(cells);
    free(raw);
    free(b64);
    return rc < 0 ? rc : 0;
}

int rp_map(struct rp_doc *doc, struct rp_run **runs, size_t n, json_t **states, struct gs_diag *d)
{
    struct cl cl = {0};
    struct states st = {.list = json_array()};
    int rc = st.list ? read_cluster(doc, &cl, d) : -ENOMEM;
    if (!rc && (gs_names_intern(&st.keys, "0") != 0 ||
                json_array_append_new(
                    st.list, json_pack("{s:s,s:[],s:[]}", "mode", "free", "tenants", "mig")) != 0))
        rc = -ENOMEM;
    size_t per = cl.ncards && n ? MAP_CELLS_MAX / (cl.ncards * n) : MAP_TIMES_MAX;
    per = per < 1 ? 1 : per > MAP_TIMES_MAX ? MAP_TIMES_MAX : per;
    for (size_t i = 0; !rc && i < n; i++)
        rc = map_run(doc, &cl, &st, runs[i], per, d);
    /* A run mapped before the states passed 256 has one-byte cells: make them two. */
    for (size_t i = 0; !rc && st.keys.n > 256 && i < n; i++)
        if (json_integer_value(json_object_get(runs[i]->map, "width")) == 1) {
            json_decref(runs[i]->map);
            runs[i]->map = NULL;
            rc = map_run(doc, &cl, &st, runs[i], per, d);
        }
    cl_free(&cl);
    gs_names_free(&st.keys);
    if (rc == -ENOMEM)
        gs_diag_error_code(d, rc, "out of memory drawing the cluster map");
    if (rc)
        json_decref(st.list);
    else
        *states = st.list;
    return rc;
}
