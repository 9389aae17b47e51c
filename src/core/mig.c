/*
 * MIG look-ups and the per-card instance allocator; the contract is in gpusched/mig.h.
 *
 * A card's occupancy is one byte: bit s = memory slice s held. An instance of profile p at start s
 * holds the bits [s, s + memory_slices), so "fits" is one AND. Every placement of one profile has
 * the same size, so the most instances of it that fit together is found greedily from the lowest
 * free start (interval scheduling with equal lengths: earliest start is earliest finish).
 */
#include "gpusched/mig.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define SHOW_MAX 64 /* bytes of a caller's string quoted back in a message */

static const struct gs_mig_profile *profile_at(int model, int profile)
{
    const struct gs_mig_model *m = gs_mig_model_at(model);
    if (!m || profile < 0 || profile >= m->nprofiles)
        return NULL;
    return &m->profiles[profile];
}

/* span() - the memory slices an instance of @p at @start holds. */
static unsigned span(const struct gs_mig_profile *p, int start)
{
    return ((1u << p->memory_slices) - 1u) << start;
}

/* show() - @s for a message: at most SHOW_MAX bytes. @buf: SHOW_MAX+1. */
static const char *show(const char *s, char *buf)
{
    size_t i = 0;
    for (; s[i] && i < SHOW_MAX; i++)
        buf[i] = s[i]; /* control bytes: gs_diag writes them \xNN */
    buf[i] = '\0';
    return buf;
}

int gs_mig_model_find(const char *name)
{
    int ci = name ? gs_catalog_find(name, -1) : -ENOENT;
    if (ci < 0)
        return -ENOENT;
    const char *canonical = gs_catalog_at(ci)->name;
    for (int i = 0; i < gs_mig_model_count(); i++)
        if (strcmp(gs_mig_model_at(i)->name, canonical) == 0)
            return i;
    return -EOPNOTSUPP;
}

int gs_mig_profile_find(int model, const char *name, int len)
{
    const struct gs_mig_model *m = gs_mig_model_at(model);
    if (!m || !name)
        return -EINVAL;
    size_t n = len < 0 ? strlen(name) : (size_t)len;
    for (int i = 0; i < m->nprofiles; i++)
        if (strlen(m->profiles[i].name) == n && memcmp(m->profiles[i].name, name, n) == 0)
            return i;
    return -ENOENT;
}

/* put() - copy @len bytes of @src and a NUL into @buf when they fit. Return: @len or -ENOSPC. */
int gs_mig_profile_share_milli(int model, int profile)
{
    const struct gs_mig_profile *p = profile_at(model, profile);
    if (!p)
        return -EINVAL;
    return p->compute_slices * 1000 / gs_mig_model_at(model)->compute_slices;
}

static int put(char *buf, size_t size, const char *src, size_t len)
{
    if (!buf || len >= size)
        return -ENOSPC;
    memcpy(buf, src, len);
    buf[len] = '\0';
    return (int)len;
}

int gs_mig_profile_placements(int model, int profile, char *buf, size_t size)
{
    const struct gs_mig_profile *p = profile_at(model, profile);
    char tmp[32];
    size_t k = 0;
    if (!p)
        return -EINVAL;
    tmp[k++] = '{';
    for (int s = 0; s < GS_MIG_SLOTS_MAX; s++)
        if (p->starts & (1u << s))
            k +=
                (size_t)snprintf(tmp + k, sizeof(tmp) - k, "%s%d", tmp[k - 1] == '{' ? "" : ",", s);
    k += (size_t)snprintf(tmp + k, sizeof(tmp) - k, "}:%d", p->memory_slices);
    return put(buf, size, tmp, k);
}

/* resource_eq() - profile name @name as the device plugin spells it ('+' -> '.') equals @s. */
static int resource_eq(const char *name, const char *s)
{
    for (; *name && *s; name++, s++)
        if (*name != *s && !(*name == '+' && *s == '.'))
            return 0;
    return *name == *s;
}

static int resource_profile(const struct gs_mig_model *m, const char *want)
{
    for (int i = 0; i < m->nprofiles; i++)
        if (resource_eq(m->profiles[i].name, want))
            return i;
    return -ENOENT;
}

int gs_mig_profile_names(int model, char *buf, size_t size)
{
    const struct gs_mig_model *m = gs_mig_model_at(model);
    size_t k = 0;
    if (!m)
        return -EINVAL;
    if (!size)
        return 0;
    buf[0] = '\0';
    for (int i = 0; i < m->nprofiles && k + 1 < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%s", i ? ", " : "", m->profiles[i].name);
    return (int)(k < size ? k : size - 1); /* snprintf counts what it cut */
}

/* no_profile() - the -ENOENT message: the model's profiles, and the models that have @want. */
static int no_profile(int model, const char *resource, const char *want, struct gs_diag *d)
{
    const struct gs_mig_model *m = gs_mig_model_at(model);
    char have[160], others[160], buf[SHOW_MAX + 1];
    size_t o = 0;
    others[0] = '\0';
    gs_mig_profile_names(model, have, sizeof(have));
    for (int i = 0; i < gs_mig_model_count() && o < sizeof(others); i++)
        if (i != model && resource_profile(gs_mig_model_at(i), want) >= 0)
            o += (size_t)snprintf(others + o, sizeof(others) - o, "%s%s",
                                  o ? ", "
                                    : "; it is a "
                                      "profile of ",
                                  gs_mig_model_at(i)->name);
    return gs_diag_error_code(d, -ENOENT, "resource %s: %s has no MIG profile \"%s\" (it has %s)%s",
                              show(resource, buf), m->name, want, have, others);
}

int gs_mig_resource_parse(int model, const char *resource, struct gs_diag *d)
{
    const size_t plen = strlen(GS_MIG_RESOURCE_PREFIX);
    char buf[SHOW_MAX + 1], want[SHOW_MAX + 1];
    const struct gs_mig_model *m = gs_mig_model_at(model);
    if (!m)
        return gs_diag_error(d, "MIG resource: no MIG model with index %d", model);
    if (!resource || strncmp(resource, GS_MIG_RESOURCE_PREFIX, plen) != 0 || !resource[plen])
        return gs_diag_error(d,
                             "%s is not a MIG resource name (want " GS_MIG_RESOURCE_PREFIX
                             "<profile>, e.g. " GS_MIG_RESOURCE_PREFIX "1g.10gb)",
                             resource ? show(resource, buf) : "(null)");
    if (strchr(resource + plen, '+'))
        return gs_diag_error(
            d,
            "resource %s: a Kubernetes resource name cannot hold '+'; the "
            "device plugin advertises a \"+me\" profile with a '.', e.g. " GS_MIG_RESOURCE_PREFIX
            "1g.10gb.me",
            show(resource, buf));
    int p = resource_profile(m, resource + plen);
    return p >= 0 ? p : no_profile(model, resource, show(resource + plen, want), d);
}

int gs_mig_resource_name(int model, int profile, char *buf, size_t size)
{
    const struct gs_mig_profile *p = profile_at(model, profile);
    char tmp[GS_MIG_RESOURCE_MAX];
    if (!p)
        return -EINVAL;
    int n = snprintf(tmp, sizeof(tmp), GS_MIG_RESOURCE_PREFIX "%s", p->name);
    for (char *q = tmp; *q; q++)
        if (*q == '+')
            *q = '.';
    return put(buf, size, tmp, (size_t)n);
}

int gs_mig_card_init(struct gs_mig_card *c, int model, unsigned allowed)
{
    const struct gs_mig_model *m = gs_mig_model_at(model);
    if (!c || !m)
        return -EINVAL;
    allowed &= (1u << m->nprofiles) - 1u;
    if (!allowed)
        return -EINVAL;
    memset(c, 0, sizeof(*c));
    c->model = (int16_t)model;
    c->allowed = (uint8_t)allowed;
    return 0;
}

int gs_mig_card_set_mode(struct gs_mig_card *c, bool on)
{
    if (!on && c->ninst > 0)
        return -EBUSY;
    c->mig_mode = on;
    return 0;
}

static int live_of(const struct gs_mig_card *c, int profile)
{
    int n = 0;
    for (int i = 0; i < c->ninst; i++)
        n += c->inst[i].profile == profile;
    return n;
}

static int ofa_held(const struct gs_mig_card *c, const struct gs_mig_model *m)
{
    for (int i = 0; i < c->ninst; i++)
        if (m->profiles[c->inst[i].profile].ofa)
            return 1;
    return 0;
}

/* room() - more instances of @profile the counting rules allow: policy, max_instances, the OFA. */
static int room(const struct gs_mig_card *c, const struct gs_mig_model *m, int profile)
{
    const struct gs_mig_profile *p = &m->profiles[profile];
    int n = p->max_instances - live_of(c, profile);
    if (!(c->allowed & (1u << profile)))
        return 0;
    if (p->ofa) /* one OFA on the card */
        n = ofa_held(c, m) ? 0 : (n > 1 ? 1 : n);
    return n > 0 ? n : 0;
}

/* fit_count() - instances of @p that fit together in the slices free in @used, at most @cap. */
static int fit_count(unsigned used, const struct gs_mig_profile *p, int cap)
{
    int n = 0;
    for (int s = 0; s < GS_MIG_SLOTS_MAX && n < cap; s++)
        if ((p->starts & (1u << s)) && !(used & span(p, s))) {
            used |= span(p, s);
            n++;
        }
    return n;
}

int gs_mig_card_placeable(const struct gs_mig_card *c)
{
    const struct gs_mig_model *m = gs_mig_model_at(c->model);
    int sum = 0;
    for (int p = 0; m && p < m->nprofiles; p++)
        sum += fit_count(c->used, &m->profiles[p], room(c, m, p));
    return sum;
}

int gs_mig_card_starts(const struct gs_mig_card *c, int profile, unsigned *mask)
{
    const struct gs_mig_model *m = gs_mig_model_at(c->model);
    const struct gs_mig_profile *p = profile_at(c->model, profile);
    unsigned out = 0;
    int n = 0;
    if (!p)
        return -EINVAL;
    for (int s = 0; s < GS_MIG_SLOTS_MAX && room(c, m, profile) > 0; s++)
        if ((p->starts & (1u << s)) && !(c->used & span(p, s))) {
            out |= 1u << s;
            n++;
        }
    *mask = out;
    return n;
}

/* add() - record an instance the caller has checked, keeping the list sorted by start. */
static void add(struct gs_mig_card *c, int profile, int start)
{
    const struct gs_mig_profile *p = profile_at(c->model, profile);
    int i = c->ninst;
    while (i > 0 && c->inst[i - 1].start > start) {
        c->inst[i] = c->inst[i - 1];
        i--;
    }
    c->inst[i].profile = (uint8_t)profile;
    c->inst[i].start = (uint8_t)start;
    c->ninst++;
    c->used |= (uint8_t)span(p, start);
    c->mig_mode = true;
}

/* holder() - the live instance holding a slice of @want, for messages. */
static const struct gs_mig_instance *holder(const struct gs_mig_card *c, unsigned want)
{
    for (int i = 0; i < c->ninst; i++)
        if (span(profile_at(c->model, c->inst[i].profile), c->inst[i].start) & want)
            return &c->inst[i];
    return NULL;
}

/* why_not() - the reason @profile cannot be created at @start, as a return code and message. */
static int why_not(const struct gs_mig_card *c, int profile, int start, struct gs_diag *d)
{
    const struct gs_mig_model *m = gs_mig_model_at(c->model);
    const struct gs_mig_profile *p = profile_at(c->model, profile);
    char at[32];
    if (!p)
        return gs_diag_error(d, "MIG: no profile with index %d", profile);
    if (start < 0 || start >= GS_MIG_SLOTS_MAX || !(p->starts & (1u << start))) {
        gs_mig_profile_placements(c->model, profile, at, sizeof(at));
        return gs_diag_error(d, "%s cannot start at memory slice %d of %s (placements %s)", p->name,
                             start, m->name, at);
    }
    if (!(c->allowed & (1u << profile)))
        return gs_diag_error_code(d, -EPERM, "%s is not allowed on this %s by the MIG policy",
                                  p->name, m->name);
    const struct gs_mig_instance *h = holder(c, span(p, start));
    if (h)
        return gs_diag_error_code(d, -EBUSY, "%s@%d needs memory slices %d-%d; %s@%d holds some",
                                  p->name, start, start, start + p->memory_slices - 1,
                                  m->profiles[h->profile].name, h->start);
    if (p->ofa && ofa_held(c, m))
        return gs_diag_error_code(d, -ENOSPC, "%s needs the card's only OFA, which is in use",
                                  p->name);
    if (room(c, m, profile) == 0)
        return gs_diag_error_code(d, -ENOSPC, "%s already has its %d instances on this %s", p->name,
                                  p->max_instances, m->name);
    return 0;
}

int gs_mig_card_create(struct gs_mig_card *c, int profile, int start, struct gs_diag *d)
{
    int rc = why_not(c, profile, start, d);
    if (rc)
        return rc;
    add(c, profile, start);
    return 0;
}

int gs_mig_card_destroy(struct gs_mig_card *c, int start, struct gs_diag *d)
{
    int i = 0;
    while (i < c->ninst && c->inst[i].start != start)
        i++;
    if (i == c->ninst)
        return gs_diag_error_code(d, -ENOENT, "no MIG instance starts at memory slice %d", start);
    memmove(&c->inst[i], &c->inst[i + 1], (size_t)(c->ninst - i - 1) * sizeof(c->inst[0]));
    c->ninst--;
    c->used = 0;
    for (i = 0; i < c->ninst; i++)
        c->used |= (uint8_t)span(profile_at(c->model, c->inst[i].profile), c->inst[i].start);
    return 0;
}

/* best() - best-fit start of @profile and the placeability it leaves; -ENOSPC when none. */
static int best(const struct gs_mig_card *c, int profile, int *start, int *after)
{
    unsigned mask;
    int n = gs_mig_card_starts(c, profile, &mask), top = -1;
    if (n <= 0)
        return n < 0 ? n : -ENOSPC;
    for (int s = 0; s < GS_MIG_SLOTS_MAX; s++) {
        if (!(mask & (1u << s)))
            continue;
        struct gs_mig_card t = *c;
        add(&t, profile, s);
        int v = gs_mig_card_placeable(&t);
        if (v > top) { /* strictly better only: ties keep the lower start */
            top = v;
            *start = s;
        }
    }
    *after = top;
    return 0;
}

int gs_mig_card_best_start(const struct gs_mig_card *c, int profile, int *start)
{
    int s, after, rc = best(c, profile, &s, &after);
    if (rc)
        return rc;
    *start = s;
    return 0;
}

int gs_mig_card_place(struct gs_mig_card *c, int profile, int *start, struct gs_diag *d)
{
    int s, after, rc = best(c, profile, &s, &after);
    if (rc == -ENOSPC)
        return gs_diag_error_code(d, rc, "%s fits nowhere on this %s",
                                  profile_at(c->model, profile)->name,
                                  gs_mig_model_at(c->model)->name);
    if (rc)
        return gs_diag_error(d, "MIG: no profile with index %d", profile);
    add(c, profile, s);
    if (start)
        *start = s;
    return 0;
}

int gs_mig_card_score(const struct gs_mig_card *c, int profile, int *score)
{
    struct gs_mig_card empty;
    int s, after, rc = best(c, profile, &s, &after);
    if (rc)
        return rc;
    gs_mig_card_init(&empty, c->model, c->allowed);
    int full = gs_mig_card_placeable(&empty); /* > 0: the empty card takes @profile */
    int loss = gs_mig_card_placeable(c) - after;
    *score = (c->mig_mode ? 500 : 0) + 499 * (full - loss) / full;
    return 0;
}

int gs_mig_card_list(const struct gs_mig_card *c, char *buf, size_t size)
{
    char tmp[GS_MIG_LIST_MAX];
    size_t k = 0;
    tmp[0] = '\0';
    for (int i = 0; i < c->ninst; i++)
        k += (size_t)snprintf(tmp + k, sizeof(tmp) - k, "%s%s@%d", i ? "," : "",
                              profile_at(c->model, c->inst[i].profile)->name, c->inst[i].start);
    return put(buf, size, tmp, k);
}
