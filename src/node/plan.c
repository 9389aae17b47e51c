/* The agent's plan: bound pods, device IDs, kubelet's Allocate matched to a pod. See plan.h. */
#include "plan.h"

#include "nvml.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/gpushare_env.h"
#include "gpusched/mig.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPU_RES "nvidia.com/gpu"

/* Copy @src (NULL: "") to @dst of GS_PLAN_PATH_MAX bytes. Return: 0, -EINVAL when too long. */
static int path_set(char *dst, const char *src)
{
    return snprintf(dst, GS_PLAN_PATH_MAX, "%s", src ? src : "") >= GS_PLAN_PATH_MAX ? -EINVAL : 0;
}

int gs_plan_init(struct gs_plan *p, const struct gs_topo *topo, int replicas, const char *shim_host,
                 const char *pod_dir, const char *mps_pipe)
{
    if (replicas < 1 || replicas > GS_PLAN_REPLICAS_MAX || (shim_host && !pod_dir))
        return -EINVAL;
    memset(p, 0, sizeof(*p));
    p->topo = topo;
    p->replicas = replicas;
    if (path_set(p->shim_host, shim_host) || path_set(p->pod_dir, shim_host ? pod_dir : NULL) ||
        path_set(p->mps_pipe, mps_pipe))
        return -EINVAL;
    memcpy(p->shim_ctr, p->shim_host, sizeof(p->shim_ctr));
    gs_plan_ctx_set(p, NULL);
    return 0;
}

/* Estimates, erring high (plan.h says why): by architecture, as the context grows with the
 * card's SMs and with what the driver loads into it. */
static const struct {
    const char *model;
    uint32_t mib;
} ctx_mib[] = {
    {"P100", 384},
    {"T4", 384},
    {"V100M16", 384},
    {"V100M32", 384},
    {"G1", 384},
    {"G2", 384},
    {"A10", 512},
    {"A30", 512},
    {"A100-SXM4-40GB", 512},
    {"A100-SXM4-80GB", 512},
    {"G3", 512},
    {"L40S", 512},
    {"H100-SXM5-80GB", 768},
    {"H100-NVL-94GB", 768},
    {"H200", 768},
};
/* a model the catalog does not know: the most of any above, which is the library's own default */
#define CTX_MIB_UNKNOWN GS_GPUSHARE_DEFAULT_CONTEXT_MIB

uint32_t gs_plan_ctx_default(int model)
{
    const struct gs_gpu_model *m = gs_catalog_at(model);
    for (size_t i = 0; m && i < sizeof(ctx_mib) / sizeof(ctx_mib[0]); i++)
        if (!strcmp(ctx_mib[i].model, m->name))
            return ctx_mib[i].mib;
    return CTX_MIB_UNKNOWN;
}

/* One entry of --context-mib, @len bytes at @e. */
static int ctx_entry(const char *e, size_t len, struct gs_plan_ctx *c, struct gs_diag *d)
{
    const char *eq = memchr(e, '=', len), *num = eq ? eq + 1 : e;
    char buf[16], *end;
    size_t nlen = len - (size_t)(num - e);
    int model = eq ? gs_catalog_find(e, (int)(eq - e)) : -1;
    char names[300];
    if (eq && model < 0)
        return gs_diag_error(d,
                             "--context-mib: %.*s: no GPU model of that name (the catalog has: %s)",
                             (int)(eq - e), e, gs_catalog_names(names, sizeof(names)));
    long v = -1;
    if (nlen > 0 && nlen < sizeof(buf) && strspn(num, "0123456789") >= nlen) {
        memcpy(buf, num, nlen);
        buf[nlen] = '\0';
        v = strtol(buf, &end, 10);
    }
    if (v < 0 || v > GS_PLAN_CTX_MIB_MAX)
        return gs_diag_error(d, "--context-mib: %.*s: MiB 0..%d expected", (int)len, e,
                             GS_PLAN_CTX_MIB_MAX);
    int32_t *slot = eq ? &c->mib[model] : &c->dflt;
    if (*slot >= 0)
        return gs_diag_error(d, "--context-mib: %.*s: given twice", (int)len, e);
    *slot = (int32_t)v;
    return 0;
}

int gs_plan_ctx_parse(const char *spec, struct gs_plan_ctx *out, struct gs_diag *d)
{
    struct gs_plan_ctx c;
    c.dflt = -1;
    for (int i = 0; i < GS_MODEL_MAX; i++)
        c.mib[i] = -1;
    for (const char *e = spec;;) {
        size_t len = strcspn(e, ",");
        int rc = ctx_entry(e, len, &c, d);
        if (rc)
            return rc;
        if (!e[len])
            break;
        e += len + 1;
    }
    *out = c;
    return 0;
}

void gs_plan_ctx_set(struct gs_plan *p, const struct gs_plan_ctx *c)
{
    for (int g = 0; g < p->topo->ngpus && g < GS_GPUS_MAX; g++) {
        int m = gs_catalog_find_product(p->topo->gpu[g].name);
        int32_t v = c && m >= 0 ? c->mib[m] : -1;
        if (v < 0 && c)
            v = c->dflt;
        p->context_mib[g] = v >= 0 ? (uint32_t)v : gs_plan_ctx_default(m);
    }
}

int gs_plan_pod_shared(const struct gs_plan_pod *q)
{
    return !q->mig[0] && (q->gpumem_mib || q->gpucores);
}

static int str_field(json_t *o, const char *key, char *out, size_t n, int idx, struct gs_diag *d)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (!s || !*s || strlen(s) >= n)
        return gs_diag_error(d, "pods[%d].%s: a string of 1..%zu bytes is needed", idx, key, n - 1);
    memcpy(out, s, strlen(s) + 1);
    return 0;
}

static int int_field(json_t *o, const char *key, int64_t lo, int64_t hi, int64_t *v, int idx,
                     struct gs_diag *d)
{
    json_t *j = json_object_get(o, key);
    *v = 0;
    if (!j || json_is_null(j))
        return 0;
    if (!json_is_integer(j) || json_integer_value(j) < lo || json_integer_value(j) > hi)
        return gs_diag_error(d, "pods[%d].%s: an integer in %lld..%lld is needed", idx, key,
                             (long long)lo, (long long)hi);
    *v = json_integer_value(j);
    return 0;
}

static int one_pod(json_t *o, int i, struct gs_plan_pod *p, struct gs_diag *d)
{
    int64_t v;
    memset(p, 0, sizeof(*p));
    p->mig_start = -1;
    if (!json_is_object(o))
        return gs_diag_error(d, "pods[%d]: an object is needed", i);
    int rc = str_field(o, "namespace", p->ns, sizeof(p->ns), i, d);
    if (!rc)
        rc = str_field(o, "name", p->name, sizeof(p->name), i, d);
    if (!rc)
        rc = str_field(o, "uid", p->uid, sizeof(p->uid), i, d);
    if (!rc && !gs_uid_ok(p->uid))
        rc = gs_diag_error(
            d, "pods[%d].uid: 1..63 letters, digits, '.', '_' and '-', not first '.'", i);
    if (!rc)
        rc = str_field(o, "tenant", p->tenant, sizeof(p->tenant), i, d);
    json_t *gpus = json_object_get(o, "gpus"), *g;
    size_t k;
    if (!rc && gpus && !json_is_array(gpus))
        rc = gs_diag_error(d, "pods[%d].gpus: a list of GPU indexes is needed", i);
    json_array_foreach(gpus, k, g)
    {
        if (rc)
            break;
        if (!json_is_integer(g) || json_integer_value(g) < 0 ||
            json_integer_value(g) >= GS_GPUS_MAX)
            rc = gs_diag_error(d, "pods[%d].gpus[%zu]: a GPU index 0..%d is needed", i, k,
                               GS_GPUS_MAX - 1);
        else
            p->cards |= 1u << json_integer_value(g);
    }
    if (!rc && !(rc = int_field(o, "gpumem_mib", 0, INT64_MAX / 2, &v, i, d)))
        p->gpumem_mib = v;
    if (!rc && !(rc = int_field(o, "gpucores", 0, 100, &v, i, d)))
        p->gpucores = (int32_t)v;
    if (!rc && !(rc = int_field(o, "tenant_weight", 1, 10000, &v, i, d)))
        p->tenant_weight = v ? (int32_t)v : 1;
    if (!rc && !(rc = int_field(o, "tenant_weight_min", 1, 10000, &v, i, d)))
        p->tenant_weight_min = v ? (int32_t)v : 1;
    json_t *mig = json_object_get(o, "mig");
    if (!rc && mig && !json_is_null(mig)) {
        rc = str_field(mig, "profile", p->mig, sizeof(p->mig), i, d);
        if (!rc && !(rc = int_field(mig, "start", 0, GS_MIG_SLOTS_MAX - 1, &v, i, d)))
            p->mig_start = (int)v;
        if (!rc && __builtin_popcount(p->cards) != 1)
            rc = gs_diag_error(d, "pods[%d]: a MIG instance is on exactly one card", i);
    }
    return rc;
}

int gs_plan_pods_json(const char *text, struct gs_plan_pod *out, int max, struct gs_diag *d)
{
    json_error_t e;
    json_t *a = json_loads(text, JSON_REJECT_DUPLICATES, &e), *o;
    size_t i;
    int rc = 0;
    if (!json_is_array(a)) {
        json_decref(a);
        return gs_diag_error(d, "pods: %s", a ? "a JSON list is needed" : e.text);
    }
    size_t n = json_array_size(a);
    if (n > (size_t)max) {
        json_decref(a);
        return gs_diag_error_code(d, -E2BIG, "pods: %zu bound pods; at most %d", n, max);
    }
    json_array_foreach(a, i, o)
    {
        if ((rc = one_pod(o, (int)i, &out[i], d)) != 0)
            break;
    }
    json_decref(a);
    return rc ? rc : (int)n;
}

static const struct gs_plan_pod *find_uid(const struct gs_plan *p, const char *uid)
{
    for (int i = 0; i < p->npods; i++)
        if (!strcmp(p->pods[i].uid, uid))
            return &p->pods[i];
    return NULL;
}

/* Give every card of @q one replica no pod of @taken holds yet, or none when a card has none
 * left (so a pod left out holds nothing). Return: 0; -ENOSPC with @d. */
static int give_replicas(const struct gs_plan *p, uint64_t *taken, struct gs_plan_pod *q,
                         struct gs_diag *d)
{
    uint8_t k[GS_GPUS_MAX] = {0};
    for (uint32_t m = q->cards; m; m &= m - 1) {
        int c = __builtin_ctz(m);
        while (k[c] < p->replicas && (taken[c] >> k[c] & 1u))
            k[c]++;
        if (k[c] == p->replicas)
            return gs_diag_error_code(d, -ENOSPC,
                                      "pod %s/%s: card %d has no free nvidia.com/gpu replica (%d "
                                      "per card, --replicas): left out, kubelet cannot give it "
                                      "its card",
                                      q->ns, q->name, c, p->replicas);
    }
    for (uint32_t m = q->cards; m; m &= m - 1) {
        int c = __builtin_ctz(m);
        q->replica[c] = k[c];
        taken[c] |= 1ull << k[c];
    }
    return 0;
}

int gs_plan_set_pods(struct gs_plan *p, const struct gs_plan_pod *pods, int n, struct gs_diag *d)
{
    static struct gs_plan_pod next[GS_PLAN_PODS_MAX]; /* the agent has one plan */
    uint64_t taken[GS_GPUS_MAX] = {0};
    int m = 0, out = 0, k = 0;
    if (n > GS_PLAN_PODS_MAX)
        return gs_diag_error(d, "%d bound pods; at most %d", n, GS_PLAN_PODS_MAX);
    for (int i = 0; i < n; i++) {
        const struct gs_plan_pod *old = find_uid(p, pods[i].uid);
        /* bound elsewhere since (requeued and placed again): a new binding */
        if (old && (old->cards != pods[i].cards || strcmp(old->mig, pods[i].mig) ||
                    old->mig_start != pods[i].mig_start))
            old = NULL;
        if ((pods[i].cards >> p->topo->ngpus) != 0) {
            gs_diag_error(out++ ? NULL : d, "pod %s/%s: bound to a card this node does not have",
                          pods[i].ns, pods[i].name);
            continue;
        }
        next[m] = pods[i];
        next[m].seen = old != NULL;
        if (old) { /* keeps its IDs, what kubelet got of them and its cgroup weight */
            next[m].given = old->given;
            next[m].ngot = old->ngot;
            memcpy(next[m].got, old->got, sizeof(old->got));
            next[m].cg_base = old->cg_base;
            next[m].cg_wrote = old->cg_wrote;
            memcpy(next[m].replica, old->replica, sizeof(next[m].replica));
            for (uint32_t c = old->cards & pods[i].cards; c; c &= c - 1)
                taken[__builtin_ctz(c)] |= 1ull << old->replica[__builtin_ctz(c)];
        }
        m++;
    }
    for (int i = 0; i < m; i++) {
        if (!next[i].seen) {
            next[i].given = 0;
            next[i].ngot = 0;
            next[i].cg_base = next[i].cg_wrote = 0;
            memset(next[i].replica, 0, sizeof(next[i].replica));
            if (give_replicas(p, taken, &next[i], out ? NULL : d)) {
                out++;
                continue;
            }
        }
        next[k++] = next[i];
    }
    memcpy(p->pods, next, (size_t)k * sizeof(*next));
    p->npods = k;
    if (out > 1) {
        char first[GS_DIAG_MSG_MAX];
        snprintf(first, sizeof(first), "%s", d->msg);
        gs_diag_error(d, "%.400s; and %d pods more", first, out - 1);
    }
    return out;
}

const char *gs_plan_mig_uuid(const struct gs_topo *t, int gpu, int start)
{
    for (int i = 0; gpu >= 0 && gpu < t->ngpus && i < t->gpu[gpu].nmig; i++)
        if (t->gpu[gpu].mig[i].start == start && t->gpu[gpu].mig[i].uuid[0])
            return t->gpu[gpu].mig[i].uuid;
    return NULL;
}

/* The MIG resource of the instance of card @g number @i: "nvidia.com/mig-2g.20gb". */
static int mig_res(const struct gs_topo *t, int g, int i, char *out, size_t n)
{
    const struct gs_topo_mig *m = &t->gpu[g].mig[i];
    return m->profile[0] ? snprintf(out, n, "nvidia.com/mig-%s", m->profile) : -1;
}

static void gpu_id(const struct gs_plan *p, int card, int k, char *out)
{
    snprintf(out, GS_PLAN_ID_MAX, "%.90s::%d", p->topo->gpu[card].uuid, k);
}

int gs_plan_devices(const struct gs_plan *p, const char *res, char (*ids)[GS_PLAN_ID_MAX],
                    int *card, int max)
{
    const struct gs_topo *t = p->topo;
    int n = 0;
    char r[GS_PLAN_RES_MAX];
    for (int g = 0; g < t->ngpus; g++) {
        if (!strcmp(res, GPU_RES) && t->gpu[g].mig_mode != 1)
            for (int k = 0; k < p->replicas && n < max; k++, n++) {
                gpu_id(p, g, k, ids[n]);
                card[n] = g;
            }
        for (int i = 0; i < t->gpu[g].nmig && n < max; i++)
            if (mig_res(t, g, i, r, sizeof(r)) > 0 && !strcmp(r, res)) {
                snprintf(ids[n], GS_PLAN_ID_MAX, "%s", t->gpu[g].mig[i].uuid);
                card[n++] = g;
            }
    }
    return n;
}

static int add_res(char (*res)[GS_PLAN_RES_MAX], int n, int max, const char *r)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(res[i], r))
            return n;
    if (n < max)
        snprintf(res[n++], GS_PLAN_RES_MAX, "%s", r);
    return n;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

int gs_plan_resources(const struct gs_plan *p, char (*res)[GS_PLAN_RES_MAX], int max)
{
    const struct gs_topo *t = p->topo;
    int n = 0;
    char r[GS_PLAN_RES_MAX];
    for (int g = 0; g < t->ngpus; g++) {
        if (t->gpu[g].mig_mode != 1)
            n = add_res(res, n, max, GPU_RES);
        for (int i = 0; i < t->gpu[g].nmig; i++)
            if (mig_res(t, g, i, r, sizeof(r)) > 0)
                n = add_res(res, n, max, r);
    }
    qsort(res, (size_t)n, GS_PLAN_RES_MAX, by_name);
    return n;
}

/* The IDs pod @q holds of @res (none when it asks nothing of it), with each one's card. */
static int pod_ids(const struct gs_plan *p, const struct gs_plan_pod *q, const char *res,
                   char (*out)[GS_PLAN_ID_MAX], int *card)
{
    int n = 0;
    if (q->mig[0]) {
        char r[GS_PLAN_RES_MAX];
        const char *uuid = gs_plan_mig_uuid(p->topo, __builtin_ctz(q->cards), q->mig_start);
        snprintf(r, sizeof(r), "nvidia.com/mig-%s", q->mig);
        if (uuid && !strcmp(r, res)) {
            card[n] = __builtin_ctz(q->cards);
            snprintf(out[n++], GS_PLAN_ID_MAX, "%s", uuid);
        }
        return n;
    }
    if (strcmp(res, GPU_RES))
        return 0;
    for (uint32_t m = q->cards; m; m &= m - 1, n++) {
        card[n] = __builtin_ctz(m);
        gpu_id(p, card[n], q->replica[card[n]], out[n]);
    }
    return n;
}

static int in(const char *id, const char *const *set, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(id, set[i]))
            return 1;
    return 0;
}

void gs_plan_kubelet(struct gs_plan *p, const char *const *names, int n)
{
    char key[sizeof(p->pods[0].ns) + sizeof(p->pods[0].name) + 1];
    p->kubelet_view = n >= 0;
    for (int i = 0; i < p->npods; i++) {
        snprintf(key, sizeof(key), "%s/%s", p->pods[i].ns, p->pods[i].name);
        p->pods[i].known = (uint8_t)in(key, names, n);
    }
}

/* Whether pod @i may be the one kubelet is admitting. */
static int candidate(const struct gs_plan *p, int i)
{
    return !p->kubelet_view || p->pods[i].known;
}

/*
 * The candidate ID @id of @res is for, with *@card the card: the pod kubelet handed it to before
 * (the same card again), else the pod whose own ID it is while no container has that card.
 * Return: the pod; -1 none.
 */
static int holder(const struct gs_plan *p, const char *res, const char *id, int *card)
{
    char ids[GS_GPUS_MAX][GS_PLAN_ID_MAX];
    int cards[GS_GPUS_MAX];
    for (int i = 0; i < p->npods; i++)
        for (int k = 0; candidate(p, i) && k < p->pods[i].ngot; k++)
            if (!strcmp(p->pods[i].got[k].id, id)) {
                *card = p->pods[i].got[k].card;
                return i;
            }
    for (int i = 0; i < p->npods; i++) {
        if (!candidate(p, i))
            continue;
        int n = pod_ids(p, &p->pods[i], res, ids, cards);
        for (int k = 0; k < n; k++)
            if (!strcmp(ids[k], id) && !(p->pods[i].given >> cards[k] & 1u)) {
                *card = cards[k];
                return i;
            }
    }
    return -1;
}

/* Cards of pod @q no container has got yet. */
static uint32_t left(const struct gs_plan_pod *q)
{
    return q->cards & ~q->given;
}

/* The pod the last preference or Allocate of @res chose, if still a candidate, or -1. */
static int current(const struct gs_plan *p, const char *res)
{
    for (int i = 0; p->last_res[0] && !strcmp(p->last_res, res) && i < p->npods; i++)
        if (!strcmp(p->pods[i].uid, p->last_uid))
            return candidate(p, i) ? i : -1;
    return -1;
}

static void choose(struct gs_plan *p, const char *res, int i)
{
    snprintf(p->last_res, sizeof(p->last_res), "%s", res);
    memcpy(p->last_uid, p->pods[i].uid, sizeof(p->last_uid));
}

/*
 * Writes to @out the IDs of pod @i for a container of @size devices: @must first (devices reused
 * from its init container), then its own IDs in @avail of cards no container got.
 * Return: the count.
 */
static int pod_prefer(const struct gs_plan *p, int i, const char *res, const char *const *avail,
                      int navail, const char *const *must, int nmust, int size,
                      char (*out)[GS_PLAN_ID_MAX])
{
    char ids[GS_GPUS_MAX][GS_PLAN_ID_MAX];
    int cards[GS_GPUS_MAX], n = 0;
    int k = pod_ids(p, &p->pods[i], res, ids, cards);
    for (int j = 0; j < nmust && n < size; j++)
        snprintf(out[n++], GS_PLAN_ID_MAX, "%s", must[j]);
    for (int j = 0; j < k && n < size; j++)
        if ((left(&p->pods[i]) >> cards[j] & 1u) && in(ids[j], avail, navail) &&
            !in(ids[j], must, nmust))
            snprintf(out[n++], GS_PLAN_ID_MAX, "%.*s", GS_PLAN_ID_MAX - 1, ids[j]);
    return n;
}

/* Candidate @i's cards no container got: -1 too few (or no candidate); 1 exactly @n; 2 more. */
static int rank(const struct gs_plan *p, int i, int n)
{
    int k = __builtin_popcount(left(&p->pods[i]));
    return !candidate(p, i) ? -1 : k == n ? 1 : k > n ? 2 : -1;
}

int gs_plan_prefer(struct gs_plan *p, const char *res, const char *const *avail, int navail,
                   const char *const *must, int nmust, int size, char (*out)[GS_PLAN_ID_MAX])
{
    int pick = -1, card;
    if (size < 1 || size > navail || size > GS_GPUS_MAX || nmust > size)
        return 0;
    if (nmust > 0) { /* devices reused from an init container: their pod */
        pick = holder(p, res, must[0], &card);
        for (int j = 1; pick >= 0 && j < nmust; j++)
            pick = holder(p, res, must[j], &card) == pick ? pick : -1;
    } else {
        pick = current(p, res);
        if (pick >= 0 && rank(p, pick, size) < 0)
            pick = -1;
        /* a pod asking exactly that many first: a container of a pod asking more is likelier
         * one of several */
        for (int want = 1; want <= 2; want++)
            for (int i = 0; pick < 0 && i < p->npods; i++)
                if (rank(p, i, size) == want &&
                    pod_prefer(p, i, res, avail, navail, NULL, 0, size, out) == size)
                    pick = i;
    }
    if (pick >= 0 && pod_prefer(p, pick, res, avail, navail, must, nmust, size, out) == size) {
        choose(p, res, pick);
        return size;
    }
    int n = 0; /* no bound pod fits: kubelet's own choice, must-includes first */
    for (int k = 0; k < nmust && n < size; k++)
        snprintf(out[n++], GS_PLAN_ID_MAX, "%s", must[k]);
    for (int k = 0; k < navail && n < size; k++)
        if (!in(avail[k], must, nmust))
            snprintf(out[n++], GS_PLAN_ID_MAX, "%s", avail[k]);
    p->last_res[0] = '\0';
    return n;
}

static void env(struct gs_plan_alloc *a, const char *key, const char *val)
{
    snprintf(a->env_key[a->nenv], sizeof(a->env_key[0]), "%s", key);
    snprintf(a->env_val[a->nenv++], GS_PLAN_VAL_MAX, "%s", val);
}

/* "<a>,<b>" lists of cards @cards of pod @q, @what: uuid, mps-mem, mem or cores. */
static void per_card(const struct gs_plan *p, const struct gs_plan_pod *q, uint32_t cards,
                     char *out, const char *what)
{
    size_t off = 0;
    int ord = 0;
    out[0] = '\0';
    for (uint32_t m = cards; m; m &= m - 1, ord++) {
        const char *uuid = p->topo->gpu[__builtin_ctz(m)].uuid;
        const char *sep = ord ? "," : "";
        int w = 0;
        if (!strcmp(what, "uuid"))
            w = snprintf(out + off, GS_PLAN_VAL_MAX - off, "%s%s", sep, uuid);
        else if (!strcmp(what, "mps-mem"))
            w = snprintf(out + off, GS_PLAN_VAL_MAX - off, "%s%d=%lldM", sep, ord,
                         (long long)q->gpumem_mib);
        else if (!strcmp(what, "mem"))
            w = snprintf(out + off, GS_PLAN_VAL_MAX - off, "%s%s=%lld", sep, uuid,
                         (long long)q->gpumem_mib);
        else
            w = snprintf(out + off, GS_PLAN_VAL_MAX - off, "%s%s=%d", sep, uuid, q->gpucores);
        off += w > 0 ? (size_t)w : 0;
        if (off >= GS_PLAN_VAL_MAX)
            break;
    }
}

/* What a container of pod @q given @cards of it gets (environment, mounts, CDI names). */
static void answer(const struct gs_plan *p, const struct gs_plan_pod *q, uint32_t cards,
                   struct gs_plan_alloc *a)
{
    char v[GS_PLAN_VAL_MAX];
    memset(a, 0, sizeof(*a));
    snprintf(a->pod, sizeof(a->pod), "%s/%s", q->ns, q->name);
    const char *mig =
        q->mig[0] ? gs_plan_mig_uuid(p->topo, __builtin_ctz(q->cards), q->mig_start) : NULL;
    if (mig) {
        env(a, "NVIDIA_VISIBLE_DEVICES", mig);
        snprintf(a->cdi[a->ncdi++], sizeof(a->cdi[0]), "gpusched.io/gpu=%s", mig);
        return;
    }
    per_card(p, q, cards, v, "uuid");
    env(a, "NVIDIA_VISIBLE_DEVICES", v);
    for (uint32_t m = cards; m; m &= m - 1)
        snprintf(a->cdi[a->ncdi++], sizeof(a->cdi[0]), "gpusched.io/gpu=%s",
                 p->topo->gpu[__builtin_ctz(m)].uuid);
    if (!gs_plan_pod_shared(q))
        return;           /* whole cards */
    if (p->mps_pipe[0]) { /* NVIDIA MPS client limits (MPS documentation, "Environment") */
        env(a, "CUDA_MPS_PIPE_DIRECTORY", p->mps_pipe);
        if (q->gpucores) {
            snprintf(v, sizeof(v), "%d", q->gpucores);
            env(a, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", v);
        }
        if (q->gpumem_mib) {
            per_card(p, q, cards, v, "mps-mem");
            env(a, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", v);
        }
        snprintf(a->mount[a->nmount].host, GS_PLAN_PATH_MAX, "%s", p->mps_pipe);
        snprintf(a->mount[a->nmount++].ctr, GS_PLAN_PATH_MAX, "%s", p->mps_pipe);
    }
    if (p->shim_host[0]) { /* libgpushare's limits (gpusched/gpushare_env.h) */
        if (q->gpumem_mib) {
            per_card(p, q, cards, v, "mem");
            env(a, GS_GPUSHARE_ENV_MEMORY_MIB, v);
        }
        if (q->gpucores) {
            per_card(p, q, cards, v, "cores");
            env(a, GS_GPUSHARE_ENV_CORES_PERCENT, v);
        }
        snprintf(v, sizeof(v), "%u", p->context_mib[__builtin_ctz(cards)]);
        env(a, GS_GPUSHARE_ENV_CONTEXT_MIB, v);
        env(a, GS_GPUSHARE_ENV_REGION, GS_PLAN_REGION_DIR "/" GS_PLAN_REGION_FILE);
        env(a, "LD_PRELOAD", p->shim_ctr);
        snprintf(a->mount[a->nmount].host, GS_PLAN_PATH_MAX, "%s", p->shim_host);
        snprintf(a->mount[a->nmount].ctr, GS_PLAN_PATH_MAX, "%s", p->shim_ctr);
        a->mount[a->nmount++].ro = 1;
        snprintf(a->mount[a->nmount].host, GS_PLAN_PATH_MAX, "%.180s/%s", p->pod_dir, q->uid);
        snprintf(a->mount[a->nmount++].ctr, GS_PLAN_PATH_MAX, "%s", GS_PLAN_REGION_DIR);
    }
}

/* Rules (2) and (3): the pod to give @n devices to when kubelet named IDs of none. */
static int fallback(const struct gs_plan *p, const char *res, int n, int *several)
{
    char ids[GS_GPUS_MAX][GS_PLAN_ID_MAX];
    int cards[GS_GPUS_MAX], cur = current(p, res);
    if (cur >= 0 && rank(p, cur, n) > 0)
        return cur;
    for (int want = 1; want <= 2; want++) { /* the only pod with exactly that many, else more */
        int only = -1, fits = 0;
        for (int i = 0; i < p->npods; i++)
            if (rank(p, i, n) == want && pod_ids(p, &p->pods[i], res, ids, cards) > 0) {
                fits++;
                only = i;
            }
        *several |= fits > 1;
        if (fits)
            return fits == 1 ? only : -1;
    }
    return -1;
}

int gs_plan_allocate(struct gs_plan *p, const char *res, const char *const *ids, int n,
                     struct gs_plan_alloc *out, struct gs_diag *d)
{
    uint32_t mine = 0;
    int pick = -1, two = 0, several = 0, card[GS_GPUS_MAX];
    if (n < 1 || n > GS_GPUS_MAX)
        return gs_diag_error(d, "Allocate of %d %s devices; 1..%d", n, res, GS_GPUS_MAX);
    for (int k = 0; k < n; k++) {
        int who = holder(p, res, ids[k], &card[k]);
        if (who < 0 || (mine >> card[k] & 1u)) {
            card[k] = -1; /* not the pod's, or named twice: a card of its own below */
            continue;
        }
        two |= pick >= 0 && who != pick;
        pick = who;
        mine |= 1u << card[k];
    }
    if (two)
        return gs_diag_error_code(d, -ENOENT,
                                  "Allocate of %d %s devices (%s...): they belong to two bound "
                                  "pods; refused rather than guessed",
                                  n, res, ids[0]);
    if (pick < 0 && (pick = fallback(p, res, n, &several)) < 0)
        return gs_diag_error_code(
            d, -ENOENT, "Allocate of %d %s device%s (%s...): %s", n, res, n == 1 ? "" : "s", ids[0],
            several           ? "several bound pods ask that many and none holds these "
                                "IDs; refused rather than guessed"
            : p->kubelet_view ? "no pod bound to this node that kubelet has waits for them"
                              : "no pod bound to this node waits for them");
    struct gs_plan_pod *q = &p->pods[pick];
    int need = n - __builtin_popcount(mine);
    uint32_t free = left(q) & ~mine;
    if (__builtin_popcount(free) < need)
        return gs_diag_error_code(d, -ENOENT,
                                  "Allocate of %d %s devices for pod %s/%s: it has %d card%s "
                                  "no container got yet",
                                  n, res, q->ns, q->name, __builtin_popcount(left(q)),
                                  __builtin_popcount(left(q)) == 1 ? "" : "s");
    for (int k = 0; k < n; k++) { /* the lowest cards no container got, for the others */
        if (card[k] < 0) {
            card[k] = __builtin_ctz(free);
            free &= free - 1;
            mine |= 1u << card[k];
        }
        int seen = 0;
        for (int g = 0; g < q->ngot && !seen; g++)
            seen = !strcmp(q->got[g].id, ids[k]);
        if (!seen && q->ngot < GS_GPUS_MAX) {
            snprintf(q->got[q->ngot].id, GS_PLAN_ID_MAX, "%s", ids[k]);
            q->got[q->ngot++].card = (int8_t)card[k];
        }
    }
    q->given |= mine;
    if (left(q))
        choose(p, res, pick); /* its next container follows */
    else
        p->last_res[0] = '\0';
    answer(p, q, mine, out);
    return 0;
}

int gs_plan_save(const struct gs_plan *p, const char *path, struct gs_diag *d)
{
    json_t *a = json_array();
    for (int i = 0; a && i < p->npods; i++) {
        const struct gs_plan_pod *q = &p->pods[i];
        json_t *r = json_array();
        for (uint32_t m = q->cards; r && m; m &= m - 1)
            json_array_append_new(
                r, json_pack("[i,i]", __builtin_ctz(m), q->replica[__builtin_ctz(m)]));
        json_t *got = json_array();
        for (int k = 0; got && k < q->ngot; k++)
            json_array_append_new(got, json_pack("[s,i]", q->got[k].id, q->got[k].card));
        json_array_append_new(a,
                              json_pack("{s:s, s:o, s:o, s:s, s:i, s:i, s:i}", "uid", q->uid, "got",
                                        got, "replicas", r, "mig", q->mig, "migStart", q->mig_start,
                                        "cgBase", q->cg_base, "cgWrote", q->cg_wrote));
    }
    char tmp[GS_PLAN_PATH_MAX + 8];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int rc = a && !json_dump_file(a, tmp, JSON_COMPACT) ? 0 : -EIO;
    json_decref(a);
    if (!rc && rename(tmp, path) != 0)
        rc = -errno;
    return rc ? gs_diag_error_code(d, rc, "%s: cannot write the agent's state", path) : 0;
}

int gs_plan_load(struct gs_plan *p, const char *path, struct gs_diag *d)
{
    json_error_t e;
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? 0 : gs_diag_error_code(d, -errno, "%s: %s", path, strerror(errno));
    json_t *a = json_loadf(f, 0, &e), *o;
    int parsed = a != NULL;
    fclose(f);
    size_t i;
    int rc = json_is_array(a) && json_array_size(a) <= GS_PLAN_PODS_MAX ? 0 : -EINVAL;
    json_array_foreach(a, i, o)
    {
        struct gs_plan_pod *q = &p->pods[i];
        const char *uid = json_string_value(json_object_get(o, "uid"));
        json_t *r = json_object_get(o, "replicas"), *x;
        size_t k;
        if (rc || !uid || strlen(uid) >= sizeof(q->uid) || !json_is_array(r)) {
            rc = -EINVAL;
            break;
        }
        memset(q, 0, sizeof(*q));
        memcpy(q->uid, uid, strlen(uid) + 1);
        const char *mig = json_string_value(json_object_get(o, "mig"));
        snprintf(q->mig, sizeof(q->mig), "%s", mig ? mig : "");
        q->mig_start = (int)json_integer_value(json_object_get(o, "migStart"));
        if (!mig || !json_is_integer(json_object_get(o, "migStart")))
            rc = -EINVAL;
        json_int_t cg[2] = {json_integer_value(json_object_get(o, "cgBase")),
                            json_integer_value(json_object_get(o, "cgWrote"))};
        json_t *got = json_object_get(o, "got");
        if (!json_is_array(got) || json_array_size(got) > GS_GPUS_MAX || cg[0] < 0 ||
            cg[0] > 10000 || cg[1] < 0 || cg[1] > 10000)
            rc = -EINVAL;
        if (rc) /* the loops below fill fixed arrays: nothing of a bad entry is read */
            break;
        q->cg_base = (uint16_t)cg[0];
        q->cg_wrote = (uint16_t)cg[1];
        json_array_foreach(r, k, x)
        {
            json_int_t c = json_integer_value(json_array_get(x, 0));
            json_int_t v = json_integer_value(json_array_get(x, 1));
            if (c < 0 || c >= GS_GPUS_MAX || v < 0 || v >= p->replicas)
                rc = -EINVAL;
            else {
                q->cards |= 1u << c;
                q->replica[c] = (uint8_t)v;
            }
        }
        json_array_foreach(got, k, x)
        {
            const char *id = json_string_value(json_array_get(x, 0));
            json_int_t c = json_integer_value(json_array_get(x, 1));
            if (!id || strlen(id) >= GS_PLAN_ID_MAX || c < 0 || c >= GS_GPUS_MAX ||
                !(q->cards >> c & 1u)) {
                rc = -EINVAL;
                continue;
            }
            snprintf(q->got[q->ngot].id, GS_PLAN_ID_MAX, "%s", id);
            q->got[q->ngot++].card = (int8_t)c;
            q->given |= 1u << c;
        }
        p->npods = (int)i + 1;
    }
    json_decref(a);
    if (rc)
        p->npods = 0;
    return rc ? gs_diag_error(d, "%s: not the agent's state (%s); move it away to start afresh",
                              path, parsed ? "bad content" : e.text)
              : 0;
}
