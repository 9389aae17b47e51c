/*
 * gpusched — billing: a rate card, integer meters, and a bill of per tenant / resource / day lines
 * (seed 000 section 4.2: A100-80GB exclusive $8.00/h, MIG 4g.40gb $4.00/h, MIG 2g.20gb $2.00/h,
 * shared $0.50/h per 10 % of the card).
 *
 * Invariants:
 * - Money is integer micro-dollars (int64_t, $1 = 1,000,000), at most GS_MONEY_MAX. No floating
 *   point touches money: amounts are parsed from decimal text and printed from integers exactly.
 * - A rate is micro-dollars per hour per unit of its meter, 0..GS_RATE_MAX.
 * - Meters are integer unit-seconds. Exclusive: card-seconds (cards x seconds). MIG: instance-
 *   seconds, one meter per profile. Shared and time-sliced: step-seconds, cards x seconds x steps,
 *   where steps is the per-card share rounded UP to a 10 % step (share_milli 300 -> 3, 301 -> 4).
 * - A use is split at day boundaries (day = floor(s / 86400) of simulated seconds since the
 *   scenario's start); a bill line is one tenant, one resource, one day.
 * - A line's cost is rate x quantity / 3600, rounded half-up to the micro-dollar once, from the
 *   line's whole quantity; totals are exact sums of line costs, never recomputed from meters.
 * - Default rules, for what a rate card leaves out (each rounded half-up to the micro-dollar):
 *   a MIG profile's rate = the exclusive rate x the profile's memory slices / the card's memory
 *   slices (NVIDIA's MIG geometry: 4g.40gb holds 4 of an A100-80GB's 8 slices, so $8 x 4/8 = $4);
 *   shared per 10 % step = the exclusive rate / 16 ($8 / 16 = $0.50, the seed's ratio); time-sliced
 *   per 10 % step = the shared rate (time-sliced use is billed like shared). The exclusive rate of
 *   a model is never derived: a rate card prices each model it bills explicitly.
 * - Deterministic: lines come in the order tenant, resource label (both bytewise), day.
 * Thread safety: a rate card is read-only once loaded and may be shared; a bill is not
 * thread-safe. No global state.
 */
#ifndef GPUSCHED_BILLING_H
#define GPUSCHED_BILLING_H

#include "gpusched/mig.h"

#include <stddef.h>
#include <stdint.h>

struct gs_diag;

#define GS_UDOLLARS_PER_DOLLAR 1000000LL
#define GS_MONEY_MAX           1000000000000000000LL /* $10^12 in micro-dollars */
#define GS_RATE_MAX            1000000000000LL       /* $1,000,000 per hour per unit */
#define GS_MONEY_STR_MAX       32                    /* "-1000000000000.000000" and NUL */
#define GS_MONEY_HUMAN_MAX     40                    /* "-XXX 9,223,372,036,854.78" and NUL */
#define GS_BILL_DAY_S          86400
#define GS_BILL_TENANT_MAX     253          /* bytes of a tenant name (a DNS subdomain) */
#define GS_BILL_CARDS_MAX      1048576      /* cards or MIG instances one use holds */
#define GS_BILL_TIME_MAX_S     3155760000LL /* 100 years of simulated seconds */
#define GS_BILL_LINES_MAX      (1u << 20)
#define GS_RATECARD_MAX_BYTES  (1u << 20)

/* How a use held its devices. Shared and time-sliced are metered alike, priced separately. */
enum gs_bill_mode {
    GS_BILL_EXCLUSIVE = 0,
    GS_BILL_MIG = 1,
    GS_BILL_SHARED = 2,
    GS_BILL_TIMESLICE = 3,
    GS_BILL_MODE_COUNT
};

/* gs_bill_mode_name() - "exclusive", "mig", "shared", "timeslice"; "?" out of range. */
const char *gs_bill_mode_name(enum gs_bill_mode mode);

/* gs_bill_mode_find() - the mode named @name (as gs_bill_mode_name() spells it), or -ENOENT. */
int gs_bill_mode_find(const char *name);

/* gs_bill_mode_unit() - the meter's unit: "card-s", "instance-s", "step-s"; "?" out of range. */
const char *gs_bill_mode_unit(enum gs_bill_mode mode);

/*
 * gs_money_parse() - an amount of dollars written in decimal ("8", "8.00", "0.000001") into
 * micro-dollars, exactly. Grammar: one or more digits, optionally '.' and 1..6 digits; nothing
 * else (no sign, spaces, exponent or currency symbol).
 * @s: NUL-terminated; @out: written only on success; @d: on failure, a message quoting @s (cut
 * to 40 bytes) and saying what is wrong. May be NULL.
 * Return: 0; -EINVAL not an amount; -EDOM negative; -ERANGE above GS_MONEY_MAX; -ENOTSUP more
 * than 6 decimals (finer than a micro-dollar).
 */
int gs_money_parse(const char *s, int64_t *out, struct gs_diag *d);

/*
 * gs_money_format() - @udollars as exact dollars: two decimals when it is whole cents ("15.50"),
 * otherwise as many as needed, at most six ("0.000139"); a '-' before a negative amount. No
 * currency symbol.
 * @buf: at least GS_MONEY_STR_MAX bytes. Return: @buf.
 */
char *gs_money_format(int64_t udollars, char *buf);

/*
 * gs_money_format_human() - @udollars as a person reads an amount in a table or a report: rounded
 * half away from zero to the cent, thousands separated by ',', after the currency's sign:
 * "$27,112.95", "-$0.50"; a currency other than USD is written as its ISO 4217 code and a space
 * ("EUR 1,234.50"). Exact amounts, for programs, come from gs_money_format().
 * @currency: an ISO 4217 code (gs_ratecard_currency()); NULL means "USD".
 * @buf: at least GS_MONEY_HUMAN_MAX bytes. Return: @buf.
 */
char *gs_money_format_human(int64_t udollars, const char *currency, char *buf);

/*
 * gs_money_format_rate() - a rate @udollars as gs_money_format_human() writes an amount, but
 * exact: two decimals when it is whole cents ("$8.00"), otherwise as many as it has, at most six
 * ("$0.598125"), so that a table's quantity times its rate gives its cost.
 * @currency: as gs_money_format_human(). @buf: at least GS_MONEY_HUMAN_MAX bytes. Return: @buf.
 */
char *gs_money_format_rate(int64_t udollars, const char *currency, char *buf);

/* ---- Rate card ---- */

struct gs_ratecard;

/*
 * gs_ratecard_new() - an empty rate card (no model priced) in currency "USD".
 * Return: 0 with *@out set (free with gs_ratecard_free()); -ENOMEM.
 */
int gs_ratecard_new(struct gs_ratecard **out);

/* gs_ratecard_free() - release @rc; NULL is accepted. */
void gs_ratecard_free(struct gs_ratecard *rc);

/*
 * gs_ratecard_set_currency() - the card's currency, an ISO 4217 code (three capital letters).
 * Return: 0; -EINVAL for anything else (the card is unchanged).
 */
int gs_ratecard_set_currency(struct gs_ratecard *rc, const char *code);

/* gs_ratecard_currency() - the three-letter currency code ("USD" unless set). */
const char *gs_ratecard_currency(const struct gs_ratecard *rc);

/*
 * gs_ratecard_set() - price one resource explicitly, overriding the default rule.
 * @model: catalog index; @mode: how it is held; @profile: a MIG profile of @model (see
 * gs_ratecard_mig_profile()) when @mode is GS_BILL_MIG, else NULL; @udollars_per_hour:
 * 0..GS_RATE_MAX per card (exclusive), per instance (mig) or per 10 % step of a card (shared,
 * timeslice).
 * @d: on failure the reason ("\"5g.50gb\" is not a MIG profile of A100-SXM4-80GB (its profiles:
 * 1g.10gb, ...)"); may be NULL.
 * Return: 0; -EINVAL bad model, mode or rate, or a profile where none belongs; -ENOENT @profile is
 * not a MIG profile of @model; -EEXIST that resource is priced already. The card is unchanged on
 * failure.
 */
int gs_ratecard_set(struct gs_ratecard *rc, int model, enum gs_bill_mode mode, const char *profile,
                    int64_t udollars_per_hour, struct gs_diag *d);

/*
 * gs_ratecard_rate() - the rate of a resource: the explicit one, else the default rule's.
 * @profile: as for gs_ratecard_set(). @out: written on success. @derived: may be NULL; set to 1
 * when the rate came from a default rule, 0 when the card states it.
 * Return: 0; -EINVAL bad arguments; -ENOENT the card has no exclusive rate for @model (nothing
 * else can be priced then), or @profile is not a MIG profile of @model.
 * Complexity: O(GS_MIG_PROFILES_MAX).
 */
int gs_ratecard_rate(const struct gs_ratecard *rc, int model, enum gs_bill_mode mode,
                     const char *profile, int64_t *out, int *derived);

/*
 * gs_ratecard_load() - read a RateCard YAML file (src/config/ratecard.c, in the gpusched_io
 * library; the only function here that does I/O). Shape:
 *   apiVersion: gpusched.io/v1alpha1
 *   kind: RateCard
 *   metadata: {name: ...}          # optional, not interpreted
 *   spec:
 *     currency: USD                # optional, ISO 4217; default USD
 *     models:                      # catalog names or aliases, each model once
 *       A100-SXM4-80GB:
 *         exclusive: "8.00"        # required: $ per card-hour
 *         mig: {"4g.40gb": "4.00"} # optional: $ per instance-hour, by profile
 *         sharedPer10Percent: "0.50"    # optional: $ per hour per 10 % of a card
 *         timeslicePer10Percent: "0.50" # optional: default the shared rate
 * Amounts are decimal strings (quoted or plain; read as text, never as floats).
 * @path: the file, at most GS_RATECARD_MAX_BYTES, one YAML document. @out: on success a card (free
 * with gs_ratecard_free()); untouched on failure. @d: the error, "path:LINE:COL: field: what".
 * Return: 0; -EINVAL not a valid rate card (syntax, unknown or duplicate key, unknown GPU model
 * (named), bad amount, unknown MIG profile, wrong kind/apiVersion, too large); -ENOENT no such
 * file; -EIO unreadable; -ENOMEM.
 */
int gs_ratecard_load(const char *path, struct gs_ratecard **out, struct gs_diag *d);

/* ---- Bill ---- */

/* One contiguous run of a pod on its devices (a pod preempted and run again has two). */
struct gs_bill_use {
    const char *tenant;     /* 1..GS_BILL_TENANT_MAX bytes of gs_text_plain() text */
    enum gs_bill_mode mode; /* how the devices were held */
    int model;              /* catalog index */
    const char *profile;    /* the MIG profile when mode is GS_BILL_MIG, else NULL */
    int64_t cards;          /* cards, or MIG instances, held: 1..GS_BILL_CARDS_MAX */
    int64_t share_milli;    /* per-card compute share: 1000 (exclusive, mig); 1..1000 otherwise */
    int64_t start_s, end_s; /* simulated seconds, 0 <= start_s <= end_s <= GS_BILL_TIME_MAX_S */
};

/*
 * One line of a bill. The line is valid until the next gs_bill_add_use(); its strings until
 * gs_bill_free().
 */
struct gs_bill_line {
    const char *tenant;
    const char *resource; /* "A100-SXM4-80GB exclusive", "A100-SXM4-80GB mig 2g.20gb", ... */
    int model;            /* catalog index */
    enum gs_bill_mode mode;
    const char *profile; /* MIG profile, or NULL */
    int64_t day;         /* floor(s / 86400) */
    int64_t quantity;    /* unit-seconds; unit: gs_bill_mode_unit(mode) */
    int64_t rate_udollars_per_hour;
    int64_t cost_udollars; /* round_half_up(rate x quantity / 3600) */
};

struct gs_bill;

/*
 * gs_bill_new() - an empty bill priced by @rc. @rc is borrowed: it must outlive the bill.
 * Return: 0 with *@out set (free with gs_bill_free()); -EINVAL NULL arguments; -ENOMEM.
 */
int gs_bill_new(const struct gs_ratecard *rc, struct gs_bill **out);

/* gs_bill_free() - release @b; NULL is accepted. */
void gs_bill_free(struct gs_bill *b);

/*
 * gs_bill_add_use() - meter one use: add its quantity, split by day, to the tenant's lines and
 * reprice those lines. A zero-length use (start_s == end_s) adds nothing.
 * @d: on failure the reason, naming the field ("share_milli 1200 is not in 1..1000", "no rate for
 * T4 exclusive in the rate card"). May be NULL.
 * Return: 0; -EINVAL a field out of its range; -ENOENT the rate card cannot price the resource;
 * -ERANGE a line's cost or the bill's total would pass GS_MONEY_MAX; -E2BIG the bill would pass
 * GS_BILL_LINES_MAX lines; -ENOMEM. On failure the bill is as it was (lines and totals).
 * Complexity: O(days the use spans), amortised.
 */
int gs_bill_add_use(struct gs_bill *b, const struct gs_bill_use *u, struct gs_diag *d);

/* gs_bill_count() - number of lines. */
size_t gs_bill_count(const struct gs_bill *b);

/*
 * gs_bill_next() - iterate over the lines in report order (tenant, resource, day):
 *   size_t it = 0;
 *   for (const struct gs_bill_line *l; (l = gs_bill_next(b, &it)) != NULL;) ...
 * @it: a cursor, 0 to start. Return: the next line, or NULL after the last. Adding a use restarts
 * nothing but may reorder: start a new iteration after gs_bill_add_use().
 * Complexity: O(lines log lines) for the first call after a change, O(1) afterwards.
 */
const struct gs_bill_line *gs_bill_next(struct gs_bill *b, size_t *it);

/*
 * gs_bill_total_udollars() - the sum of the line costs of @tenant, or of every line when @tenant
 * is NULL. Never above GS_MONEY_MAX. Complexity: O(1) for NULL, O(lines) otherwise.
 */
int64_t gs_bill_total_udollars(const struct gs_bill *b, const char *tenant);

#endif
