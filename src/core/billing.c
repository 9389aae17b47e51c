/*
 * Billing: rate card, meters and bill lines; the contract is in gpusched/billing.h.
 *
 * A bill keeps its lines in insertion order, found by an open-addressing hash on (tenant,
 * resource, day); report order is a sorted array of pointers rebuilt only after a line is added.
 * gs_bill_add_use() plans before it writes (new lines, overflow of every touched line and of the
 * total) and reserves all memory first, so a failed call leaves the bill as it was.
 */
#include "gpusched/billing.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/grow.h"
#include "gpusched/mig.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNSET        (-1)
#define STEP_MILLI   100 /* shared use is metered in 10 % steps of a card */
#define SHARED_SHARE 16  /* default: a 10 % step costs 1/16 of the card's exclusive rate */
#define LABEL_MAX    64

static const char *const mode_names[GS_BILL_MODE_COUNT] = {"exclusive", "mig", "shared",
                                                           "timeslice"};
static const char *const mode_units[GS_BILL_MODE_COUNT] = {"card-s", "instance-s", "step-s",
                                                           "step-s"};

const char *gs_bill_mode_name(enum gs_bill_mode mode)
{
    return (unsigned)mode < GS_BILL_MODE_COUNT ? mode_names[mode] : "?";
}

const char *gs_bill_mode_unit(enum gs_bill_mode mode)
{
    return (unsigned)mode < GS_BILL_MODE_COUNT ? mode_units[mode] : "?";
}

int gs_bill_mode_find(const char *name)
{
    for (int m = 0; name && m < GS_BILL_MODE_COUNT; m++)
        if (strcmp(name, mode_names[m]) == 0)
            return m;
    return -ENOENT;
}

/* ---- Money ---- */

int gs_money_parse(const char *s, int64_t *out, struct gs_diag *d)
{
    const char *p = s;
    int64_t whole = 0, frac = 0, scale = GS_UDOLLARS_PER_DOLLAR;
    char cap[GS_MONEY_HUMAN_MAX];
    if (*p == '-')
        return gs_diag_error_code(d, -EDOM, "\"%.40s\" is negative", s);
    for (; *p >= '0' && *p <= '9'; p++) {
        if (whole > GS_MONEY_MAX / GS_UDOLLARS_PER_DOLLAR)
            return gs_diag_error_code(d, -ERANGE, "\"%.40s\" is above the largest amount, %s", s,
                                      gs_money_format_human(GS_MONEY_MAX, NULL, cap));
        whole = whole * 10 + (*p - '0');
    }
    bool digits = p > s, decimals = false;
    if (digits && *p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, decimals = true) {
            if (scale == 1)
                return gs_diag_error_code(d, -ENOTSUP,
                                          "\"%.40s\" has more than 6 decimals (finer than a "
                                          "micro-dollar)",
                                          s);
            scale /= 10;
            frac += (*p - '0') * scale;
        }
    if (!digits || *p || (p[-1] == '.' && !decimals))
        return gs_diag_error(d,
                             "\"%.40s\" is not an amount (digits, optionally '.' and up to 6 "
                             "decimals, e.g. \"8.00\")",
                             s);
    if (whole > (GS_MONEY_MAX - frac) / GS_UDOLLARS_PER_DOLLAR)
        return gs_diag_error_code(d, -ERANGE, "\"%.40s\" is above the largest amount, %s", s,
                                  gs_money_format_human(GS_MONEY_MAX, NULL, cap));
    *out = whole * GS_UDOLLARS_PER_DOLLAR + frac;
    return 0;
}

char *gs_money_format(int64_t udollars, char *buf)
{
    /* The magnitude as unsigned, so INT64_MIN has one too. */
    uint64_t v = udollars < 0 ? 0u - (uint64_t)udollars : (uint64_t)udollars;
    uint64_t whole = v / GS_UDOLLARS_PER_DOLLAR, micro = v % GS_UDOLLARS_PER_DOLLAR;
    int n = snprintf(buf, GS_MONEY_STR_MAX, "%s%llu.%06llu", udollars < 0 ? "-" : "",
                     (unsigned long long)whole, (unsigned long long)micro);
    /* Drop the zeros past the cents: "15.500000" -> "15.50", "0.000139" stays. */
    for (char *end = buf + n - 1; end > buf + n - 5 && *end == '0'; end--)
        *end = '\0';
    return buf;
}

/* "$" or "EUR ", the sign, @whole grouped by thousands, '.' and @frac into @buf. */
static char *human(int neg, uint64_t whole, const char *frac, const char *currency, char *buf)
{
    char digits[24], *w = buf;
    int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)whole);
    if (neg)
        *w++ = '-';
    if (!currency || strcmp(currency, "USD") == 0)
        *w++ = '$';
    else
        w += snprintf(w, 8, "%.3s ", currency);
    for (int i = 0; i < n; i++) { /* a ',' before each group of three digits but the first */
        *w++ = digits[i];
        if (i < n - 1 && (n - 1 - i) % 3 == 0)
            *w++ = ',';
    }
    snprintf(w, 8, ".%s", frac);
    return buf;
}

char *gs_money_format_human(int64_t udollars, const char *currency, char *buf)
{
    uint64_t v = udollars < 0 ? 0u - (uint64_t)udollars : (uint64_t)udollars;
    uint64_t cents = v / 10000 + (v % 10000 >= 5000);
    char frac[4];
    snprintf(frac, sizeof(frac), "%02llu", (unsigned long long)(cents % 100));
    return human(udollars < 0 && cents > 0, cents / 100, frac, currency, buf);
}

char *gs_money_format_rate(int64_t udollars, const char *currency, char *buf)
{
    uint64_t v = udollars < 0 ? 0u - (uint64_t)udollars : (uint64_t)udollars;
    char frac[8];
    int n = snprintf(frac, sizeof(frac), "%06llu", (unsigned long long)(v % 1000000));
    while (n > 2 && frac[n - 1] == '0')
        frac[--n] = '\0';
    return human(udollars < 0, v / 1000000, frac, currency, buf);
}

/* round_half_up(num / den) for num >= 0, den > 0, 2 * num + den within int64. */
static int64_t div_half_up(int64_t num, int64_t den)
{
    return (2 * num + den) / (2 * den);
}

/* ---- MIG profiles: the one table, gpusched/mig.h ---- */

/* The MIG model of catalog model @model, or NULL when it has no MIG. */
static const struct gs_mig_model *mig_of(int model)
{
    return gs_mig_model_at(gs_mig_model_find(gs_catalog_at(model)->name));
}

/* profile_index() - @profile's index in @model's geometry, or -ENOENT with @d saying which exist.
 */
static int profile_index(int model, const char *profile, struct gs_diag *d)
{
    const struct gs_mig_model *g = mig_of(model);
    const char *mname = gs_catalog_at(model)->name;
    char list[160] = "";
    size_t off = 0;
    if (!g)
        return gs_diag_error_code(d, -ENOENT, "%s has no MIG profiles", mname);
    for (int i = 0; i < g->nprofiles; i++) {
        if (strcmp(profile, g->profiles[i].name) == 0)
            return i;
        off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s", i ? ", " : "",
                                g->profiles[i].name);
    }
    return gs_diag_error_code(d, -ENOENT, "\"%.40s\" is not a MIG profile of %s (its profiles: %s)",
                              profile, mname, list);
}

/* ---- Rate card ---- */

struct model_rates {
    int64_t rate[GS_BILL_MODE_COUNT]; /* per mode; the mig slot is unused; UNSET when not given */
    int64_t mig[GS_MIG_PROFILES_MAX]; /* by index in the model's geometry; UNSET when not given */
};

struct gs_ratecard {
    char currency[4];
    struct model_rates m[GS_MODEL_MAX];
};

int gs_ratecard_new(struct gs_ratecard **out)
{
    struct gs_ratecard *rc = malloc(sizeof(*rc));
    if (!rc)
        return -ENOMEM;
    memcpy(rc->currency, "USD", 4);
    for (int i = 0; i < GS_MODEL_MAX; i++) {
        for (int k = 0; k < GS_BILL_MODE_COUNT; k++)
            rc->m[i].rate[k] = UNSET;
        for (int k = 0; k < GS_MIG_PROFILES_MAX; k++)
            rc->m[i].mig[k] = UNSET;
    }
    *out = rc;
    return 0;
}

void gs_ratecard_free(struct gs_ratecard *rc)
{
    free(rc);
}

int gs_ratecard_set_currency(struct gs_ratecard *rc, const char *code)
{
    for (int i = 0; i < 3; i++)
        if (!code || code[i] < 'A' || code[i] > 'Z')
            return -EINVAL;
    if (code[3])
        return -EINVAL;
    memcpy(rc->currency, code, 4);
    return 0;
}

const char *gs_ratecard_currency(const struct gs_ratecard *rc)
{
    return rc->currency;
}

/* check_resource() - the shape of (model, mode, profile); *@idx the profile's index for mig. */
static int check_resource(int model, enum gs_bill_mode mode, const char *profile, int *idx,
                          struct gs_diag *d)
{
    *idx = -1;
    if (!gs_catalog_at(model))
        return gs_diag_error(d, "model %d is not in the catalog", model);
    if ((unsigned)mode >= GS_BILL_MODE_COUNT)
        return gs_diag_error(d, "mode %d is not a billing mode", (int)mode);
    if (mode == GS_BILL_MIG && !profile)
        return gs_diag_error(d, "profile is missing: a mig use names its MIG profile");
    if (mode != GS_BILL_MIG && profile)
        return gs_diag_error(d, "profile \"%.40s\" belongs only to a mig use, not %s", profile,
                             mode_names[mode]);
    if (mode == GS_BILL_MIG && (*idx = profile_index(model, profile, d)) < 0)
        return *idx;
    return 0;
}

int gs_ratecard_set(struct gs_ratecard *rc, int model, enum gs_bill_mode mode, const char *profile,
                    int64_t udollars_per_hour, struct gs_diag *d)
{
    int idx, err = check_resource(model, mode, profile, &idx, d);
    if (err)
        return err;
    if (udollars_per_hour < 0 || udollars_per_hour > GS_RATE_MAX)
        return gs_diag_error(d, "rate %lld micro-dollars is not in 0..%lld",
                             (long long)udollars_per_hour, GS_RATE_MAX);
    int64_t *slot = idx >= 0 ? &rc->m[model].mig[idx] : &rc->m[model].rate[mode];
    if (*slot != UNSET)
        return gs_diag_error_code(d, -EEXIST, "%s %s%s%s is priced twice",
                                  gs_catalog_at(model)->name, mode_names[mode], idx >= 0 ? " " : "",
                                  idx >= 0 ? profile : "");
    *slot = udollars_per_hour;
    return 0;
}

/* rate_of() - gs_ratecard_rate() with the reason in @d. */
static int rate_of(const struct gs_ratecard *rc, int model, enum gs_bill_mode mode,
                   const char *profile, int64_t *out, int *derived, struct gs_diag *d)
{
    int idx, err = check_resource(model, mode, profile, &idx, d);
    if (err)
        return err;
    const struct model_rates *r = &rc->m[model];
    int64_t excl = r->rate[GS_BILL_EXCLUSIVE], given = idx >= 0 ? r->mig[idx] : r->rate[mode];
    if (excl == UNSET)
        return gs_diag_error_code(d, -ENOENT, "the rate card does not price %s",
                                  gs_catalog_at(model)->name);
    int def = given == UNSET;
    if (!def)
        *out = given;
    else if (mode == GS_BILL_MIG)
        *out = div_half_up(excl * mig_of(model)->profiles[idx].memory_slices,
                           mig_of(model)->memory_slices);
    else if (mode == GS_BILL_TIMESLICE && r->rate[GS_BILL_SHARED] != UNSET)
        *out = r->rate[GS_BILL_SHARED];
    else
        *out = div_half_up(excl, SHARED_SHARE);
    if (derived)
        *derived = def;
    return 0;
}

int gs_ratecard_rate(const struct gs_ratecard *rc, int model, enum gs_bill_mode mode,
                     const char *profile, int64_t *out, int *derived)
{
    if (!rc || !out)
        return -EINVAL;
    return rate_of(rc, model, mode, profile, out, derived, NULL);
}

/* ---- Bill ---- */

struct resource {
    int model;
    enum gs_bill_mode mode;
    const char *profile; /* the geometry table's string, or NULL */
    int64_t rate;
    char label[LABEL_MAX];
};

struct line {
    struct gs_bill_line pub;
    uint32_t tenant, res;
};

/* Open addressing with linear probing; v[i] = item index + 1, 0 = empty; load at most 1/2. */
struct slots {
    uint32_t *v;
    size_t cap; /* 0 or a power of two */
};

struct gs_bill {
    const struct gs_ratecard *rc;
    char **tenant;
    size_t ntenant, captenant;
    struct slots tenant_slots;
    struct resource **res;
    size_t nres, capres;
    struct line *line;
    size_t nline, capline;
    struct slots line_slots;
    const struct line **order; /* report order, capacity capline */
    bool sorted;
    int64_t total;
};

int gs_bill_new(const struct gs_ratecard *rc, struct gs_bill **out)
{
    if (!rc || !out)
        return -EINVAL;
    struct gs_bill *b = calloc(1, sizeof(*b));
    if (!b)
        return -ENOMEM;
    b->rc = rc;
    b->sorted = true;
    *out = b;
    return 0;
}

void gs_bill_free(struct gs_bill *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->ntenant; i++)
        free(b->tenant[i]);
    for (size_t i = 0; i < b->nres; i++)
        free(b->res[i]);
    free(b->tenant);
    free(b->tenant_slots.v);
    free(b->res);
    free(b->line);
    free(b->line_slots.v);
    free(b->order);
    free(b);
}

size_t gs_bill_count(const struct gs_bill *b)
{
    return b->nline;
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return mix(h);
}

static uint64_t hash_line(uint32_t tenant, uint32_t res, int64_t day)
{
    return mix(((uint64_t)tenant << 40) ^ ((uint64_t)res << 24) ^ (uint64_t)day);
}

typedef uint64_t (*hash_at_fn)(const struct gs_bill *b, uint32_t idx);

static uint64_t tenant_hash_at(const struct gs_bill *b, uint32_t idx)
{
    return hash_str(b->tenant[idx]);
}

static uint64_t line_hash_at(const struct gs_bill *b, uint32_t idx)
{
    const struct line *l = &b->line[idx];
    return hash_line(l->tenant, l->res, l->pub.day);
}

/* slots_reserve() - room for @n items at load 1/2, rehashing what is there. */
static int slots_reserve(struct slots *s, size_t n, hash_at_fn hash_at, const struct gs_bill *b)
{
    size_t cap = gs_grow_cap(s->cap, 2 * n, 64);
    if (cap == s->cap)
        return 0;
    uint32_t *v = calloc(cap, sizeof(*v));
    if (!v)
        return -ENOMEM;
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->v[i])
            continue;
        size_t j = hash_at(b, s->v[i] - 1) & (cap - 1);
        while (v[j])
            j = (j + 1) & (cap - 1);
        v[j] = s->v[i];
    }
    free(s->v);
    s->v = v;
    s->cap = cap;
    return 0;
}

/* tenant_find() - the slot of @name, or the empty slot where it would go. Needs cap > 0. */
static size_t tenant_find(const struct gs_bill *b, const char *name, uint64_t h)
{
    size_t mask = b->tenant_slots.cap - 1, i = h & mask;
    while (b->tenant_slots.v[i] && strcmp(b->tenant[b->tenant_slots.v[i] - 1], name) != 0)
        i = (i + 1) & mask;
    return i;
}

/* tenant_get() - the index of @name, interning a copy when it is new. */
static int tenant_get(struct gs_bill *b, const char *name, uint32_t *out)
{
    uint64_t h = hash_str(name);
    size_t i = b->tenant_slots.cap ? tenant_find(b, name, h) : 0;
    if (b->tenant_slots.cap && b->tenant_slots.v[i]) {
        *out = b->tenant_slots.v[i] - 1;
        return 0;
    }
    char *copy = strdup(name);
    char **t = copy ? gs_grow(b->tenant, &b->captenant, b->ntenant + 1, sizeof(*t), 16) : NULL;
    if (t)
        b->tenant = t;
    if (!t || slots_reserve(&b->tenant_slots, b->ntenant + 1, tenant_hash_at, b)) {
        free(copy);
        return -ENOMEM;
    }
    i = tenant_find(b, name, h);
    b->tenant[b->ntenant] = copy;
    b->tenant_slots.v[i] = (uint32_t)++b->ntenant;
    *out = (uint32_t)(b->ntenant - 1);
    return 0;
}

/* resource_get() - the index of the use's resource, priced and labelled on first sight. */
static int resource_get(struct gs_bill *b, const struct gs_bill_use *u, uint32_t *out,
                        struct gs_diag *d)
{
    for (size_t i = 0; i < b->nres; i++) {
        const struct resource *r = b->res[i];
        if (r->model == u->model && r->mode == u->mode &&
            (!r->profile || strcmp(r->profile, u->profile) == 0)) {
            *out = (uint32_t)i;
            return 0;
        }
    }
    struct resource r = {u->model, u->mode, NULL, 0, ""};
    const char *mname = gs_catalog_at(u->model)->name;
    struct gs_diag why;
    gs_diag_init(&why);
    int err = rate_of(b->rc, u->model, u->mode, u->profile, &r.rate, NULL, &why);
    snprintf(r.label, sizeof(r.label), "%s %s%s%.20s", mname, mode_names[u->mode],
             u->profile ? " " : "", u->profile ? u->profile : "");
    if (err)
        return gs_diag_error_code(d, err, "no rate for %s: %s", r.label, why.msg);
    if (u->mode == GS_BILL_MIG)
        r.profile = mig_of(u->model)->profiles[profile_index(u->model, u->profile, NULL)].name;
    struct resource *copy = malloc(sizeof(*copy));
    struct resource **all =
        copy ? gs_grow(b->res, &b->capres, b->nres + 1, sizeof(*all), 16) : NULL;
    if (!all) {
        free(copy);
        return gs_diag_error_code(d, -ENOMEM, "out of memory");
    }
    b->res = all;
    *copy = r;
    b->res[b->nres] = copy;
    *out = (uint32_t)b->nres++;
    return 0;
}

static int check_use(const struct gs_bill_use *u, struct gs_diag *d)
{
    int idx, err;
    if (!u->tenant || !*u->tenant)
        return gs_diag_error(d, "tenant is empty");
    if (strnlen(u->tenant, GS_BILL_TENANT_MAX + 1) > GS_BILL_TENANT_MAX)
        return gs_diag_error(d, "tenant is longer than %d bytes", GS_BILL_TENANT_MAX);
    if (!gs_text_plain(u->tenant))
        return gs_diag_error(d, "tenant holds a control, bidirectional or zero-width character");
    if ((err = check_resource(u->model, u->mode, u->profile, &idx, d)) != 0)
        return err;
    if (u->cards < 1 || u->cards > GS_BILL_CARDS_MAX)
        return gs_diag_error(d, "cards %lld is not in 1..%d", (long long)u->cards,
                             GS_BILL_CARDS_MAX);
    bool whole = u->mode == GS_BILL_EXCLUSIVE || u->mode == GS_BILL_MIG;
    if (whole && u->share_milli != 1000)
        return gs_diag_error(d, "share_milli %lld must be 1000 for use of mode %s",
                             (long long)u->share_milli, mode_names[u->mode]);
    if (u->share_milli < 1 || u->share_milli > 1000)
        return gs_diag_error(d, "share_milli %lld is not in 1..1000", (long long)u->share_milli);
    if (u->start_s < 0 || u->start_s > GS_BILL_TIME_MAX_S)
        return gs_diag_error(d, "start_s %lld is not in 0..%lld", (long long)u->start_s,
                             GS_BILL_TIME_MAX_S);
    if (u->end_s < u->start_s || u->end_s > GS_BILL_TIME_MAX_S)
        return gs_diag_error(d, "end_s %lld is not in start_s..%lld (start_s is %lld)",
                             (long long)u->end_s, GS_BILL_TIME_MAX_S, (long long)u->start_s);
    return 0;
}

/* line_cost() - round_half_up(rate x q / 3600) without overflow; -ERANGE above GS_MONEY_MAX. */
static int line_cost(int64_t rate, int64_t q, int64_t *out)
{
    int64_t hours = q / 3600, part = div_half_up(rate * (q % 3600), 3600);
    if (hours && rate > (GS_MONEY_MAX - part) / hours)
        return -ERANGE;
    *out = rate * hours + part;
    return 0;
}

/* line_find() - the line of (@tenant, @res, @day); *@slot where it is or would go. */
static struct line *line_find(const struct gs_bill *b, uint32_t tenant, uint32_t res, int64_t day,
                              size_t *slot)
{
    const struct slots *s = &b->line_slots;
    if (!s->cap)
        return NULL;
    size_t i = hash_line(tenant, res, day) & (s->cap - 1);
    for (; s->v[i]; i = (i + 1) & (s->cap - 1)) {
        struct line *l = &b->line[s->v[i] - 1];
        if (l->tenant == tenant && l->res == res && l->pub.day == day)
            break;
    }
    *slot = i;
    return s->v[i] ? &b->line[s->v[i] - 1] : NULL;
}

/* One day's part of a use. */
struct piece {
    int64_t day, qty, end_s;
};

static void piece_at(const struct gs_bill_use *u, int64_t s, struct piece *p)
{
    int64_t steps = u->mode == GS_BILL_SHARED || u->mode == GS_BILL_TIMESLICE
                        ? (u->share_milli + STEP_MILLI - 1) / STEP_MILLI
                        : 1;
    p->day = s / GS_BILL_DAY_S;
    p->end_s = (p->day + 1) * GS_BILL_DAY_S < u->end_s ? (p->day + 1) * GS_BILL_DAY_S : u->end_s;
    p->qty = u->cards * steps * (p->end_s - s);
}

/* plan_use() - check every line the use touches for overflow; *@fresh the lines it would add. */
static int plan_use(const struct gs_bill *b, const struct gs_bill_use *u, uint32_t tenant,
                    uint32_t res, size_t *fresh, struct gs_diag *d)
{
    int64_t total = b->total, rate = b->res[res]->rate, cost;
    struct piece p;
    size_t slot;
    char cap[GS_MONEY_HUMAN_MAX]; /* GS_MONEY_MAX as the tables write an amount */
    *fresh = 0;
    for (int64_t s = u->start_s; s < u->end_s; s = p.end_s) {
        piece_at(u, s, &p);
        const struct line *l = line_find(b, tenant, res, p.day, &slot);
        int64_t q = l ? l->pub.quantity : 0;
        if (q > INT64_MAX - p.qty || line_cost(rate, q + p.qty, &cost))
            return gs_diag_error_code(
                d, -ERANGE, "the cost of %s on day %lld passes %s", b->res[res]->label,
                (long long)p.day,
                gs_money_format_human(GS_MONEY_MAX, gs_ratecard_currency(b->rc), cap));
        total += cost - (l ? l->pub.cost_udollars : 0);
        if (total > GS_MONEY_MAX)
            return gs_diag_error_code(
                d, -ERANGE, "the bill's total passes %s",
                gs_money_format_human(GS_MONEY_MAX, gs_ratecard_currency(b->rc), cap));
        *fresh += !l;
    }
    if (b->nline + *fresh > GS_BILL_LINES_MAX)
        return gs_diag_error_code(d, -E2BIG, "the bill would pass %u lines", GS_BILL_LINES_MAX);
    return 0;
}

static int reserve_lines(struct gs_bill *b, size_t n)
{
    if (n > b->capline) {
        size_t cap = b->capline;
        struct line *l = gs_grow(b->line, &cap, n, sizeof(*l), 16);
        if (!l)
            return -ENOMEM;
        b->line = l;
        b->sorted = false; /* the order's pointers went to the old array */
        const struct line **order = realloc(b->order, cap * sizeof(*order));
        if (!order)
            return -ENOMEM; /* the larger line array is kept: harmless */
        b->order = order;
        b->capline = cap;
    }
    return slots_reserve(&b->line_slots, n, line_hash_at, b);
}

/* apply_use() - add the planned pieces; nothing here can fail. */
static void apply_use(struct gs_bill *b, const struct gs_bill_use *u, uint32_t tenant, uint32_t res)
{
    const struct resource *r = b->res[res];
    struct piece p;
    size_t slot;
    for (int64_t s = u->start_s; s < u->end_s; s = p.end_s) {
        piece_at(u, s, &p);
        struct line *l = line_find(b, tenant, res, p.day, &slot);
        if (!l) {
            l = &b->line[b->nline];
            *l = (struct line){
                {b->tenant[tenant], r->label, r->model, r->mode, r->profile, p.day, 0, r->rate, 0},
                tenant,
                res};
            b->line_slots.v[slot] = (uint32_t)++b->nline;
            b->sorted = false;
        }
        int64_t cost = 0; /* plan_use() saw that it fits */
        l->pub.quantity += p.qty;
        line_cost(r->rate, l->pub.quantity, &cost);
        b->total += cost - l->pub.cost_udollars;
        l->pub.cost_udollars = cost;
    }
}

int gs_bill_add_use(struct gs_bill *b, const struct gs_bill_use *u, struct gs_diag *d)
{
    uint32_t tenant, res;
    size_t fresh;
    if (!b || !u)
        return gs_diag_error(d, "gs_bill_add_use: bill and use must not be NULL");
    int err = check_use(u, d);
    if (err || u->start_s == u->end_s)
        return err;
    /* A resource or tenant interned here and then left without lines is invisible. */
    if ((err = resource_get(b, u, &res, d)) != 0)
        return err;
    if ((err = tenant_get(b, u->tenant, &tenant)) != 0 ||
        (err = plan_use(b, u, tenant, res, &fresh, d)) != 0 ||
        (err = reserve_lines(b, b->nline + fresh)) != 0)
        return err == -ENOMEM ? gs_diag_error_code(d, err, "out of memory") : err;
    apply_use(b, u, tenant, res);
    return 0;
}

static int line_order(const void *pa, const void *pb)
{
    const struct gs_bill_line *a = &(*(const struct line *const *)pa)->pub;
    const struct gs_bill_line *b = &(*(const struct line *const *)pb)->pub;
    int c = strcmp(a->tenant, b->tenant);
    if (!c)
        c = strcmp(a->resource, b->resource);
    return c ? c : (a->day > b->day) - (a->day < b->day);
}

const struct gs_bill_line *gs_bill_next(struct gs_bill *b, size_t *it)
{
    if (!b->sorted && b->nline) {
        for (size_t i = 0; i < b->nline; i++)
            b->order[i] = &b->line[i];
        qsort(b->order, b->nline, sizeof(*b->order), line_order);
    }
    b->sorted = true;
    return *it < b->nline ? &b->order[(*it)++]->pub : NULL;
}

int64_t gs_bill_total_udollars(const struct gs_bill *b, const char *tenant)
{
    int64_t sum = 0;
    if (!tenant)
        return b->total;
    for (size_t i = 0; i < b->nline; i++)
        if (strcmp(b->line[i].pub.tenant, tenant) == 0)
            sum += b->line[i].pub.cost_udollars;
    return sum;
}
