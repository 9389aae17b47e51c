/*
 * The probe's answers kept by pod shape (gs_tenancy_probe_node()): what a node's filter and score
 * say of a pod depend only on what the pod asks of a node (struct gs_fit: cards or share, MIG
 * profile, tier, tenant, gang, ...) and the node's state. kube-scheduler asks the extender about
 * every pod it places, most of them of a few shapes, so a pod of a shape asked about before costs
 * one comparison per node whose version (gs_fleet_node_version()) has not moved since.
 * The az tier's score reads where the pod's gang runs, beyond the node: such pods are not kept.
 *
 * Shares of a size not asked before are each a shape of their own; what a node offers them
 * (gs_fleet_share_view()) is the same for every size, so it is kept too, by the kind of slice
 * (the shape less its compute, memory and rate), and such a pod's fit is a pick from the view.
 */
#include "tenancy_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SHAPES 8 /* shapes kept, the least recently asked about going first */
#define KINDS  4 /* kinds of shared slice whose views are kept, likewise */

struct shape {
    struct gs_fit fit; /* the key: mig NULL and mig_start 0 (the profile is in mig) */
    char mig[32];
    uint64_t id;   /* given when the slot took this shape: a probe of an older one misses */
    uint64_t used; /* when last taken */
    uint64_t *ver; /* per node: its version when ans was kept; 0 none */
    int32_t *ans;  /* per node: the score 0..1000, or -1 - the gs_fit_reason */
};

struct kind {
    struct gs_fit fit; /* the key: a shape less compute, mem_mib and rate */
    uint64_t id, used; /* as a shape's */
    uint64_t *ver;     /* per node: its version when view was made; 0 none */
    struct gs_share_view *view;
};

struct gs__shapes {
    struct shape s[SHAPES];
    struct kind k[KINDS];
    uint64_t tick;
};

/* A slot's per-node arrays, made when it is first taken: *@ver and the returned array of @nn
 * elements of @esize bytes. Return: the array; NULL with *@ver NULL when either allocation failed.
 */
static void *per_node(uint64_t **ver, size_t esize, size_t nn)
{
    *ver = malloc((nn ? nn : 1) * sizeof(**ver));
    void *a = malloc((nn ? nn : 1) * esize);
    if (!*ver || !a) {
        free(*ver);
        free(a);
        *ver = NULL;
        return NULL;
    }
    return a;
}

/* @fit as a key: a copy without the pointer and the commit's choice. */
static void key_of(const struct gs_fit *fit, struct gs_fit *k)
{
    memcpy(k, fit, sizeof(*k));
    k->mig = NULL;
    k->mig_start = 0;
}

uint64_t gs__tn_shape_of(struct gs_tenancy *t, const struct gs_fit *fit)
{
    size_t nn = gs_fleet_node_count(t->fleet);
    if (fit->tier == GS_TIER_AZ || fit->nodes_ok ||
        (fit->mig && strlen(fit->mig) >= sizeof(t->shapes->s[0].mig)))
        return 0; /* nodes_ok: its own nodes, not a shape others share */
    if (!t->shapes && !(t->shapes = calloc(1, sizeof(*t->shapes))))
        return 0;
    struct gs__shapes *m = t->shapes;
    struct gs_fit k;
    key_of(fit, &k);
    struct shape *lru = &m->s[0];
    for (int i = 0; i < SHAPES; i++) {
        struct shape *s = &m->s[i];
        if (s->id && !memcmp(&s->fit, &k, sizeof(k)) && !strcmp(s->mig, fit->mig ? fit->mig : "")) {
            s->used = ++m->tick;
            return s->id;
        }
        lru = s->used < lru->used ? s : lru;
    }
    if (!lru->ver && !(lru->ans = per_node(&lru->ver, sizeof(*lru->ans), nn))) {
        lru->id = 0;
        return 0;
    }
    memcpy(&lru->fit, &k, sizeof(k));
    strcpy(lru->mig, fit->mig ? fit->mig : "");
    memset(lru->ver, 0, nn * sizeof(*lru->ver));
    lru->used = ++m->tick;
    lru->id = (uint64_t)(lru - m->s) + 1 + SHAPES * m->tick; /* never 0, never given before */
    return lru->id;
}

/* The slot of shape @id, or NULL when it has taken another shape since. */
static struct shape *slot_of(const struct gs_tenancy *t, uint64_t id)
{
    struct shape *s = id && t->shapes ? &t->shapes->s[(id - 1) % SHAPES] : NULL;
    return s && s->id == id ? s : NULL;
}

int gs__tn_shape_get(const struct gs_tenancy *t, uint64_t id, size_t node, int32_t *ans)
{
    const struct shape *s = slot_of(t, id);
    if (!s || s->ver[node] != gs_fleet_node_version(t->fleet, node))
        return 0;
    *ans = s->ans[node];
    return 1;
}

const int32_t *gs__tn_shape_kept(const struct gs_tenancy *t, uint64_t id, const uint64_t **ver)
{
    const struct shape *s = slot_of(t, id);
    *ver = s ? s->ver : NULL;
    return s ? s->ans : NULL;
}

void gs__tn_shape_put(struct gs_tenancy *t, uint64_t id, size_t node, int32_t ans)
{
    struct shape *s = slot_of(t, id);
    if (!s)
        return;
    s->ver[node] = gs_fleet_node_version(t->fleet, node);
    s->ans[node] = ans;
}

uint64_t gs__tn_share_of(struct gs_tenancy *t, const struct gs_fit *fit)
{
    size_t nn = gs_fleet_node_count(t->fleet);
    if (fit->whole || fit->mig || fit->timeslice || fit->ncards <= 0 || fit->nodes_ok)
        return 0;
    if (!t->shapes && !(t->shapes = calloc(1, sizeof(*t->shapes))))
        return 0;
    struct gs__shapes *m = t->shapes;
    struct gs_fit k;
    key_of(fit, &k);
    k.compute = k.rate = 0;
    k.mem_mib = 0;
    struct kind *lru = &m->k[0];
    for (int i = 0; i < KINDS; i++) {
        struct kind *s = &m->k[i];
        if (s->id && !memcmp(&s->fit, &k, sizeof(k))) {
            s->used = ++m->tick;
            return s->id;
        }
        lru = s->used < lru->used ? s : lru;
    }
    if (!lru->ver && !(lru->view = per_node(&lru->ver, sizeof(*lru->view), nn))) {
        lru->id = 0;
        return 0;
    }
    lru->fit = k;
    memset(lru->ver, 0, nn * sizeof(*lru->ver));
    lru->used = ++m->tick;
    lru->id = (uint64_t)(lru - m->k) + 1 + KINDS * m->tick;
    return lru->id;
}

enum gs_fit_reason gs__tn_share_fit(struct gs_tenancy *t, uint64_t id, size_t node,
                                    const struct gs_fit *fit, struct gs_fit_choice *c)
{
    struct kind *s = id && t->shapes ? &t->shapes->k[(id - 1) % KINDS] : NULL;
    struct gs_share_view own, *v = &own;
    uint64_t ver = gs_fleet_node_version(t->fleet, node);
    if (s && s->id == id) {
        v = &s->view[node];
        if (s->ver[node] == ver)
            return gs_fleet_share_pick(v, fit, c);
        s->ver[node] = ver;
    }
    if (gs_fleet_share_view(t->fleet, node, fit, v))
        return gs_fleet_fit(t->fleet, node, fit, c);
    return gs_fleet_share_pick(v, fit, c);
}

void gs__tn_shapes_free(struct gs_tenancy *t)
{
    for (int i = 0; t->shapes && i < KINDS; i++) {
        free(t->shapes->k[i].ver);
        free(t->shapes->k[i].view);
    }
    for (int i = 0; t->shapes && i < SHAPES; i++) {
        free(t->shapes->s[i].ver);
        free(t->shapes->s[i].ans);
    }
    free(t->shapes);
    t->shapes = NULL;
}
