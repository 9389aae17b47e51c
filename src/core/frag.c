/*
 * GPU fragmentation, after Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads
 * with Fragmentation Gradient Descent", USENIX ATC '23, §4, and the rules of its public simulator.
 *
 * Typical pods: the request classes (CPU, per-GPU share, GPU count, GPU model set) of the
 * workload, most frequent first, up to the smallest prefix covering 95 % of its pods; each
 * weighted by its pod count. A node's fragmentation for one class is the free GPU share the class
 * could not use: all of it when the class asks for no GPU or cannot be hosted at all (model, too
 * few cards with enough free share, too little CPU); otherwise the free share of each card whose
 * free share is below the class's per-GPU demand. Weights stay integer counts; the normaliser is
 * their sum, so no floating point enters a decision.
 */
#include "fit_rules.h"
#include "sched_impl.h"

#include "gpusched/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int gs__share_fits(const struct gs_nstate *st, const struct gs_podclass *pc)
{
    uint32_t fit = 0;
    for (int i = 0; i < st->ngpu; i++)
        if (st->gpu_left[i] >= pc->req.gpu_milli)
            fit++;
    return fit >= pc->req.num_gpu;
}

int gs__best_fit_gpu(const uint16_t *left, int n, uint32_t milli)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (left[i] >= milli && (best < 0 || left[i] < left[best]))
            best = i;
    return best;
}

void gs__apply(struct gs_nstate *st, const struct gs_podclass *pc, int gpu)
{
    st->cpu_left -= pc->cpu_score;
    st->memory_left -= pc->req.memory_mib;
    st->frag = st->frag_pack = FRAG_UNKNOWN;
    if (pc->req.num_gpu == 0)
        return;
    if (gpu >= 0) {
        st->gpu_left[gpu] = (uint16_t)(st->gpu_left[gpu] - pc->req.gpu_milli);
        st->gpu_left_sum -= pc->req.gpu_milli;
        return;
    }
    /* Cards taken smallest free share first, lowest index among equals. */
    for (uint32_t k = 0; k < pc->req.num_gpu; k++) {
        int g = gs__best_fit_gpu(st->gpu_left, st->ngpu, pc->req.gpu_milli);
        if (g < 0)
            return;
        st->gpu_left[g] = (uint16_t)(st->gpu_left[g] - pc->req.gpu_milli);
        st->gpu_left_sum -= pc->req.gpu_milli;
    }
}

static int64_t class_frag(const struct gs_nstate *st, const struct gs_podclass *pc)
{
    if (pc->req.num_gpu == 0 || pc->req.gpu_milli == 0)
        return st->gpu_left_sum;
    if (!gs__model_allowed(pc->req.model_mask, st->model))
        return st->gpu_left_sum;
    if (st->cpu_left < pc->cpu_score || !gs__share_fits(st, pc))
        return st->gpu_left_sum;
    int64_t f = 0;
    for (int i = 0; i < st->ngpu; i++)
        if (st->gpu_left[i] < pc->req.gpu_milli)
            f += st->gpu_left[i];
    return f;
}

/*
 * Both fragmentation measures sum over every typical class (a hundred or so) and depend only on
 * the model, the CPU (and for the stranded share the memory) left and the multiset of free card
 * shares; many (state, pod class) pairs lead to the same such key, and more of them the larger
 * the cluster. A direct-mapped cache of results, shared by all pod classes, computes each key
 * about once. Its entries are pure functions of the key, so a collision only costs a recompute.
 */
#define MEMO_BITS 12

struct gs_fragmemo {
    int64_t cpu_left, memory_left;
    uint16_t gpu_left[GS_GPUS_MAX]; /* sorted, unused cards 0 */
    uint8_t model, ngpu, kind;      /* kind: 1 fragmentation, 2 stranded share, 0 empty slot */
    int64_t val;
};

static void memo_key(const struct gs_nstate *st, int kind, struct gs_fragmemo *k)
{
    memset(k, 0, sizeof(*k));
    k->cpu_left = st->cpu_left;
    k->memory_left = kind == 2 ? st->memory_left : 0;
    k->model = st->model;
    k->ngpu = st->ngpu;
    k->kind = (uint8_t)kind;
    for (int i = 0; i < st->ngpu; i++) { /* insertion sort: at most GS_GPUS_MAX cards */
        int j = i;
        for (; j > 0 && k->gpu_left[j - 1] > st->gpu_left[i]; j--)
            k->gpu_left[j] = k->gpu_left[j - 1];
        k->gpu_left[j] = st->gpu_left[i];
    }
}

static size_t memo_slot(const struct gs_fragmemo *k)
{
    uint64_t h = (uint64_t)k->cpu_left * 0x9e3779b97f4a7c15ULL;
    h ^= (uint64_t)k->memory_left + (h << 6) + (h >> 2);
    h ^= (uint64_t)k->model << 16 | (uint64_t)k->ngpu << 8 | k->kind;
    for (int i = 0; i < GS_GPUS_MAX; i++)
        h = (h ^ k->gpu_left[i]) * 0x100000001b3ULL;
    h ^= h >> 29;
    return (size_t)(h * 0xbf58476d1ce4e5b9ULL >> (64 - MEMO_BITS));
}

static int memo_same(const struct gs_fragmemo *a, const struct gs_fragmemo *b)
{
    return a->kind == b->kind && a->cpu_left == b->cpu_left && a->memory_left == b->memory_left &&
           a->model == b->model && a->ngpu == b->ngpu &&
           memcmp(a->gpu_left, b->gpu_left, sizeof(a->gpu_left)) == 0;
}

typedef int64_t (*frag_fn)(const struct gs_sched *s, const struct gs_nstate *st);

/* @fn on @st through the cache (computed directly when the cache cannot be allocated). */
static int64_t memo(const struct gs_sched *cs, const struct gs_nstate *st, int kind, frag_fn fn)
{
    struct gs_sched *s = (struct gs_sched *)cs; /* a cache of pure results */
    if (!s->fragmemo && !(s->fragmemo = calloc((size_t)1 << MEMO_BITS, sizeof(*s->fragmemo))))
        return fn(s, st);
    struct gs_fragmemo k;
    memo_key(st, kind, &k);
    struct gs_fragmemo *e = &s->fragmemo[memo_slot(&k)];
    if (!memo_same(e, &k)) {
        k.val = fn(s, st);
        *e = k;
    }
    return e->val;
}

static int64_t frag_sum(const struct gs_sched *s, const struct gs_nstate *st)
{
    int64_t f = 0;
    for (size_t k = 0; k < s->ntypical; k++)
        f += s->typical[k].count * class_frag(st, &s->typical[k].pc);
    return f;
}

int64_t gs__frag_raw(const struct gs_sched *s, const struct gs_nstate *st)
{
    return st->ngpu == 0 ? 0 : memo(s, st, 1, frag_sum);
}

int64_t gs__frag(const struct gs_sched *s, const struct gs_nstate *st)
{
    if (st->frag == FRAG_UNKNOWN)
        ((struct gs_nstate *)st)->frag = gs__frag_raw(s, st); /* memo on an immutable state */
    return st->frag;
}

static int cmp_typical(const void *a, const void *b)
{
    const struct gs_typical *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    const struct gs_pod_req *p = &x->pc.req, *q = &y->pc.req;
    if (x->pc.cpu_score != y->pc.cpu_score)
        return x->pc.cpu_score > y->pc.cpu_score ? -1 : 1;
    if (p->gpu_milli != q->gpu_milli)
        return p->gpu_milli > q->gpu_milli ? -1 : 1;
    if (p->num_gpu != q->num_gpu)
        return p->num_gpu > q->num_gpu ? -1 : 1;
    if (p->model_mask != q->model_mask)
        return p->model_mask > q->model_mask ? -1 : 1;
    return 0;
}

static int same_class(const struct gs_podclass *a, const struct gs_pod_req *r, int64_t cpu)
{
    return a->cpu_score == cpu && a->req.gpu_milli == r->gpu_milli &&
           a->req.num_gpu == r->num_gpu && a->req.model_mask == r->model_mask;
}

int gs_sched_set_workload(struct gs_sched *s, const struct gs_pod_req *pods, size_t n)
{
    if (s->nclasses > 0) /* results cached for pod classes were scored with the old workload */
        return -EBUSY;
    struct gs_typical *t = NULL;
    size_t nt = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        struct gs_pod_req r = pods[i];
        int64_t mem = r.memory_mib;
        r.memory_mib = 0; /* classes are kept apart by CPU and GPU only, as FGD does */
        int64_t cpu = r.cpu_milli ? r.cpu_milli : 100;
        size_t k;
        /* Linear probe: workloads have tens to hundreds of classes. */
        for (k = 0; k < nt; k++)
            if (same_class(&t[k].pc, &r, cpu))
                break;
        if (k == nt) {
            struct gs_typical *g = gs_grow(t, &cap, nt + 1, sizeof(*g), 64);
            if (!g) {
                free(t);
                return -ENOMEM;
            }
            t = g;
            gs__podclass_init(&t[nt].pc, &r);
            t[nt].memory_mib = 0;
            t[nt++].count = 0;
        }
        t[k].count++;
        t[k].memory_mib += mem; /* a sum until the division below */
    }
    for (size_t k = 0; k < nt; k++)
        t[k].memory_mib /= t[k].count;
    qsort(t, nt, sizeof(*t), cmp_typical);
    int64_t cum = 0;
    size_t take = 0;
    int64_t cov = 95;
    while (take < nt && cum * 100 < (int64_t)n * cov)
        cum += t[take++].count;
    free(s->typical);
    free(s->fragmemo); /* its results were for the old typical classes */
    s->fragmemo = NULL;
    for (size_t i = 0; i < s->nstates; i++) /* and so were those kept in the states */
        s->states[i].frag = s->states[i].frag_pack = FRAG_UNKNOWN;
    s->typical = t;
    if (gs__waste_table(s, t, nt))
        return -ENOMEM;
    s->ntypical = take;
    s->typical_total = cum;
    return 0;
}

int64_t gs_sched_frag_milli(const struct gs_sched *s)
{
    if (s->typical_total == 0)
        return 0;
    int64_t f = 0;
    for (size_t a = 0; a < s->nactive; a++) {
        const struct gs_nstate *st = &s->states[s->active[a]];
        f += (int64_t)s->live[s->active[a]].count * gs__frag(s, st);
    }
    return f / s->typical_total;
}

/*
 * Stranded share: for each typical class, the free GPU share left over once as many pods of the
 * class as the node can still host are packed on it, counting CPU and host memory as well as
 * card slots. FGD asks only "can one more pod fit"; a node with four free cards and CPU for one
 * more pod strands three cards, and this measure says so.
 */
static int64_t class_stranded(const struct gs_nstate *st, const struct gs_typical *t)
{
    const struct gs_podclass *pc = &t->pc;
    if (pc->req.num_gpu == 0 || pc->req.gpu_milli == 0)
        return st->gpu_left_sum;
    if (!gs__model_allowed(pc->req.model_mask, st->model))
        return st->gpu_left_sum;
    int64_t slots = 0;
    for (int i = 0; i < st->ngpu; i++)
        slots += st->gpu_left[i] / pc->req.gpu_milli;
    int64_t n = slots / pc->req.num_gpu;
    int64_t by_cpu = st->cpu_left / pc->cpu_score;
    if (by_cpu < n)
        n = by_cpu;
    if (t->memory_mib > 0 && st->memory_left / t->memory_mib < n)
        n = st->memory_left / t->memory_mib;
    int64_t used = n * pc->req.num_gpu * pc->req.gpu_milli;
    return st->gpu_left_sum - used;
}

static int64_t stranded_sum(const struct gs_sched *s, const struct gs_nstate *st)
{
    int64_t f = 0;
    for (size_t k = 0; k < s->ntypical; k++)
        f += s->typical[k].count * class_stranded(st, &s->typical[k]);
    return f;
}

int64_t gs__frag_pack_raw(const struct gs_sched *s, const struct gs_nstate *st)
{
    return st->ngpu == 0 ? 0 : memo(s, st, 2, stranded_sum);
}

int64_t gs__frag_pack(const struct gs_sched *s, const struct gs_nstate *st)
{
    if (st->frag_pack == FRAG_UNKNOWN)
        ((struct gs_nstate *)st)->frag_pack = gs__frag_pack_raw(s, st);
    return st->frag_pack;
}

/*
 * Expected leftover of a card with free share r (milli), for each r in 0..1000. The card takes
 * one more pod with probability q(r) = min(1, WASTE_REACH x F(r)), F(r) being the fraction of
 * the workload's card requests (pods x cards) that fit in r; that pod is drawn from those that
 * fit, by frequency; otherwise r is left for good. A remainder that only rare pods fit (the
 * 0.19 GPU a 0.81-GPU pod leaves) is expected to stay; one that a common pod fills is not.
 * Kept in milli x 1000 so the recursion stays exact enough in integers.
 */
#define CARD_MILLI  1000
#define WASTE_REACH 5 /* measured 1..30: 95.69-95.72 % on the trace, 5 the best */

/*
 * For a card with r free on a node with c cores left: the share of the pods that fit r (any pod
 * asking for whole cards fits an empty one) whose CPU fits too, and the mean CPU of the one-card
 * pods among them: what the pod that fills the card is expected to take from its neighbours. A
 * pod of 8 cards needs all of its CPU on the node, so an empty card there counts it whole. A
 * share of a card on a node whose CPU is spent is lost however well it would pair.
 */
static void waste_cpu_tables(struct gs_waste *w, const struct gs_typical *t, size_t nt)
{
    for (int r = 0; r <= CARD_MILLI; r += WASTE_STEP) {
        int64_t all = 0, one = 0, one_cpu = 0, at[WASTE_CORES + 2] = {0};
        for (size_t k = 0; k < nt; k++) {
            const struct gs_pod_req *q = &t[k].pc.req;
            if (!q->num_gpu || !q->gpu_milli || q->gpu_milli > (uint32_t)r)
                continue;
            int64_t n = t[k].count, cores = (t[k].pc.cpu_score + 999) / 1000; /* rounded up */
            all += n;
            at[cores > WASTE_CORES ? WASTE_CORES + 1 : cores] += n;
            if (q->num_gpu == 1) {
                one += n;
                one_cpu += n * t[k].pc.cpu_score;
            }
        }
        int64_t fit = 0;
        for (int c = 0; c <= WASTE_CORES; c++) {
            fit += at[c];
            w->cpu_fit[r / WASTE_STEP][c] = (int16_t)(all ? fit * 1000 / all : 1000);
        }
        w->cpu_mean[r / WASTE_STEP] = (int32_t)(one ? one_cpu / one : 0);
    }
}

int gs__waste_table(struct gs_sched *s, const struct gs_typical *t, size_t nt)
{
    struct gs_waste *ws = s->waste ? s->waste : malloc(sizeof(*ws));
    if (!ws)
        return -ENOMEM;
    s->waste = ws;
    int32_t *w = ws->left;
    int64_t total = 0;
    for (size_t k = 0; k < nt; k++)
        if (t[k].pc.req.gpu_milli)
            total += t[k].count * t[k].pc.req.num_gpu;
    for (int r = 0; r <= CARD_MILLI; r++) {
        int64_t fit = 0, sum = 0;
        for (size_t k = 0; k < nt; k++) {
            const struct gs_pod_req *q = &t[k].pc.req;
            if (!q->gpu_milli || q->gpu_milli > (uint32_t)r)
                continue;
            int64_t c = t[k].count * q->num_gpu;
            fit += c;
            sum += c * w[r - (int)q->gpu_milli];
        }
        int64_t qn = WASTE_REACH * fit > total ? total : WASTE_REACH * fit; /* q = qn / total */
        w[r] = fit ? (int32_t)(((total - qn) * r * 1000 + qn * (sum / fit)) / total) : r * 1000;
    }
    w[CARD_MILLI] = 0; /* an empty card is not a remainder: whole-card pods take it all */
    waste_cpu_tables(ws, t, nt);
    return 0;
}
