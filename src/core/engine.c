/*
 * The scheduling cycle over interned node states.
 *
 * Why states: in a large cluster most nodes look alike (empty, or full, or holding the same mix),
 * and every filter and score here is a function of what a node has free, its GPU model and shape.
 * Interning those makes a cycle O(distinct states), and because a state never changes, the result
 * of a (state, pod class) pair is cached while the state keeps its id (sweep() frees the ids of
 * states no node is in); binding a pod moves one node to another state.
 */
#include "fit_rules.h"
#include "heap.h"
#include "sched_impl.h"

#include "gpusched/diag.h"
#include "gpusched/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Empty states kept before sweep() frees their ids: a sweep costs a look at every class. */
#define SWEEP_MIN 1024

static const char *const reason_text[GS_REASON_COUNT] = {
    [GS_REASON_CPU] = GS_WORDS_CPU,
    [GS_REASON_MEMORY] = GS_WORDS_MEMORY,
    [GS_REASON_GPU_MODEL] = "node(s) didn't match the requested GPU model",
    [GS_REASON_GPU_COUNT] = GS_WORDS_GPU,
    [GS_REASON_GPU_SHARE] = "no GPU with enough free share",
    [GS_REASON_NO_GPU] = "node(s) had no GPU",
};

/* Combine @v into @h; the murmur3 finaliser spreads every input bit over the low bits too. */
static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

static uint64_t state_hash(const struct gs_nstate *st)
{
    uint64_t h = mix(0, (uint64_t)st->cpu_milli);
    h = mix(h, (uint64_t)st->memory_mib);
    h = mix(h, (uint64_t)st->cpu_left);
    h = mix(h, (uint64_t)st->memory_left);
    h = mix(h, (uint64_t)st->model << 8 | st->ngpu);
    h = mix(h, st->tags);
    h = mix(h, st->topo);
    for (int i = 0; i < st->ngpu; i++)
        h = mix(h, st->gpu_left[i]);
    return h;
}

static int state_eq(const struct gs_nstate *a, const struct gs_nstate *b)
{
    if (a->hash != b->hash || a->cpu_milli != b->cpu_milli || a->memory_mib != b->memory_mib ||
        a->cpu_left != b->cpu_left || a->memory_left != b->memory_left || a->model != b->model ||
        a->ngpu != b->ngpu || a->tags != b->tags || a->topo != b->topo)
        return 0;
    return memcmp(a->gpu_left, b->gpu_left, a->ngpu * sizeof(a->gpu_left[0])) == 0;
}

static void key_of_node(const struct gs_node *n, struct gs_nstate *st)
{
    memset(st, 0, sizeof(*st));
    st->cpu_milli = n->cpu_milli;
    st->memory_mib = n->memory_mib;
    st->cpu_left = n->cpu_left;
    st->memory_left = n->memory_left;
    st->model = n->model;
    st->ngpu = n->ngpu;
    st->topo = n->topo;
    for (int i = 0; i < n->ngpu; i++) {
        st->gpu_left[i] = n->gpu_left[i];
        st->gpu_left_sum += n->gpu_left[i];
    }
    for (int k = 0; k <= GS_GPUS_MAX; k++)
        if (n->tag_pods[k])
            st->tags |= 1u << k;
    st->hash = state_hash(st);
    st->frag = st->frag_pack = FRAG_UNKNOWN;
    st->active_pos = UINT32_MAX;
}

/*
 * Fill @t, an open-addressing table of ids (stored + 1, 0 = empty) with @c slots (a power of two)
 * and all zero, with ids 0..@n-1, leaving out those @gone names (NULL: none). @hash_of gives the
 * hash of id i. Used for the state and the pod-class tables.
 */
static void ids_fill(const struct gs_sched *s, uint32_t *t, size_t c, size_t n,
                     uint64_t (*hash_of)(const struct gs_sched *, size_t),
                     int (*gone)(const struct gs_sched *, size_t))
{
    for (size_t i = 0; i < n; i++) {
        if (gone && gone(s, i))
            continue;
        size_t h = hash_of(s, i) & (c - 1);
        while (t[h])
            h = (h + 1) & (c - 1);
        t[h] = (uint32_t)i + 1;
    }
}

/* Replace the table *@tab by one of @c slots filled as ids_fill() does. Return: 0, -ENOMEM. */
static int ids_build(const struct gs_sched *s, uint32_t **tab, size_t *cap, size_t c, size_t n,
                     uint64_t (*hash_of)(const struct gs_sched *, size_t),
                     int (*gone)(const struct gs_sched *, size_t))
{
    uint32_t *t = calloc(c, sizeof(*t));
    if (!t)
        return -ENOMEM;
    ids_fill(s, t, c, n, hash_of, gone);
    free(*tab);
    *tab = t;
    *cap = c;
    return 0;
}

static uint64_t state_hash_of(const struct gs_sched *s, size_t i)
{
    return s->states[i].hash;
}

static int state_gone(const struct gs_sched *s, size_t i)
{
    return s->states[i].freed;
}

/* Make room for one more state id: a free one, or a new one at the end. Return: 0, -ENOMEM. */
static int state_room(struct gs_sched *s)
{
    if ((s->nstates + 1) * 2 > s->intern_cap &&
        ids_build(s, &s->intern, &s->intern_cap, s->intern_cap ? s->intern_cap * 2 : 1024,
                  s->nstates, state_hash_of, state_gone) < 0)
        return -ENOMEM;
    if (s->nfree || s->nstates < s->states_cap)
        return 0;
    size_t cap = gs_grow_cap(s->states_cap, s->nstates + 1, 256);
    struct gs_nstate *n = realloc(s->states, cap * sizeof(*n));
    if (!n)
        return -ENOMEM;
    s->states = n;
    struct gs_nlive *l = realloc(s->live, cap * sizeof(*l));
    if (!l)
        return -ENOMEM;
    s->live = l;
    uint32_t *f = realloc(s->free_ids, cap * sizeof(*f));
    if (!f)
        return -ENOMEM;
    s->free_ids = f;
    struct gs_netent *ne = realloc(s->net, cap * sizeof(*ne));
    if (!ne)
        return -ENOMEM;
    s->net = ne;
    memset(ne + s->states_cap, 0, (cap - s->states_cap) * sizeof(*ne));
    uint32_t *t = realloc(s->touched, cap * sizeof(*t));
    if (!t)
        return -ENOMEM;
    s->touched = t;
    s->states_cap = cap;
    return 0;
}

/*
 * Count @hash among the states seen (gs_sched_state_count()): a state freed and created again
 * is counted once. States are told apart by their 64-bit hash here, where a collision would only
 * cost one in the count. Return: 0, -ENOMEM.
 */
static int seen_add(struct gs_sched *s, uint64_t hash)
{
    hash = hash ? hash : 1; /* 0 marks an empty slot */
    if ((s->nseen + 1) * 2 > s->seen_cap) {
        size_t cap = s->seen_cap ? s->seen_cap * 2 : 1024;
        uint64_t *t = calloc(cap, sizeof(*t));
        if (!t)
            return -ENOMEM;
        for (size_t i = 0; i < s->seen_cap; i++)
            for (size_t h = s->seen[i] & (cap - 1); s->seen[i]; h = (h + 1) & (cap - 1))
                if (!t[h]) {
                    t[h] = s->seen[i];
                    break;
                }
        free(s->seen);
        s->seen = t;
        s->seen_cap = cap;
    }
    size_t h = hash & (s->seen_cap - 1);
    while (s->seen[h] && s->seen[h] != hash)
        h = (h + 1) & (s->seen_cap - 1);
    s->nseen += !s->seen[h];
    s->seen[h] = hash;
    return 0;
}

/*
 * The id of the state equal to @key, created when new: the lowest id sweep() freed (its member
 * heap and epoch kept), or a new one. Return: id, or -ENOMEM.
 */
static int64_t intern(struct gs_sched *s, const struct gs_nstate *key)
{
    if (state_room(s) < 0)
        return -ENOMEM;
    /* A new state is looked up in the seen table next: start loading its slot (a hint only, so
     * seen_add()'s mapping of hash 0 is not repeated) while the state table is probed. */
    if (s->seen_cap)
        __builtin_prefetch(&s->seen[key->hash & (s->seen_cap - 1)]);
    size_t h = key->hash & (s->intern_cap - 1);
    while (s->intern[h]) {
        if (state_eq(&s->states[s->intern[h] - 1], key))
            return s->intern[h] - 1;
        h = (h + 1) & (s->intern_cap - 1);
    }
    if (seen_add(s, key->hash) < 0)
        return -ENOMEM;
    uint32_t id, epoch = 0;
    struct gs_nstate *st;
    if (s->nfree) {
        id = s->free_ids[--s->nfree];
        st = &s->states[id];
        uint32_t *heap = st->heap, heap_cap = st->heap_cap;
        epoch = s->live[id].epoch; /* no class heap entry of the old state may match the new */
        *st = *key;
        st->heap = heap;
        st->heap_cap = heap_cap;
    } else {
        id = (uint32_t)s->nstates++;
        st = &s->states[id];
        *st = *key;
    }
    s->live[id] = (struct gs_nlive){0, epoch, UINT32_MAX, GS_NO_STATE, GS_NO_STATE, 0};
    s->intern[h] = id + 1;
    return id;
}

/* Member heaps: the node with the lowest tie-break priority on top. */
static void heap_swap(struct gs_sched *s, struct gs_nstate *st, uint32_t a, uint32_t b)
{
    uint32_t t = st->heap[a];
    st->heap[a] = st->heap[b];
    st->heap[b] = t;
    s->state_pos[st->heap[a]] = a;
    s->state_pos[st->heap[b]] = b;
}

/* Restore the heap order of the @n members of @st around position @i. */
static void heap_fix(struct gs_sched *s, struct gs_nstate *st, uint32_t n, uint32_t i)
{
    while (i > 0 && s->prio[st->heap[(i - 1) / 2]] > s->prio[st->heap[i]]) {
        heap_swap(s, st, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && s->prio[st->heap[l]] < s->prio[st->heap[m]])
            m = l;
        if (r < n && s->prio[st->heap[r]] < s->prio[st->heap[m]])
            m = r;
        if (m == i)
            return;
        heap_swap(s, st, i, m);
        i = m;
    }
}

/* Room for two more log entries and one more member of state @id. Return: 0, -ENOMEM. */
static int change_room(struct gs_sched *s, uint32_t id)
{
    if (s->nlog + 2 > s->log_cap) {
        struct gs_logent *l = gs_grow(s->log, &s->log_cap, s->nlog + 2, sizeof(*l), 4096);
        if (!l)
            return -ENOMEM;
        s->log = l;
    }
    struct gs_nstate *st = &s->states[id];
    if (s->live[id].count + 1 > st->heap_cap) {
        size_t cap = st->heap_cap;
        uint32_t *h = gs_grow(st->heap, &cap, s->live[id].count + 1, sizeof(*h), 4);
        if (!h)
            return -ENOMEM;
        st->heap = h;
        st->heap_cap = (uint32_t)cap;
    }
    return 0;
}

/* Log a membership change, for the classes counting reasons: while none does there is nothing to
 * keep, since a class that starts counting first looks afresh at the active states. */
static void log_push(struct gs_sched *s, uint32_t id, int32_t delta, uint32_t better)
{
    if (s->ncounting)
        s->log[s->nlog++] = (struct gs_logent){id, s->live[id].epoch, delta, better};
}

/* Take active state @id out of the fresh list. */
static void fresh_unlink(struct gs_sched *s, uint32_t id)
{
    struct gs_nlive *lv = &s->live[id];
    if (lv->older != GS_NO_STATE)
        s->live[lv->older].newer = lv->newer;
    if (lv->newer != GS_NO_STATE)
        s->live[lv->newer].older = lv->older;
    else
        s->newest = lv->older;
}

/* The epoch of @id moved (@was_active: it was in the list): make it the newest of the list. */
static void fresh_bump(struct gs_sched *s, uint32_t id, int was_active)
{
    struct gs_nlive *lv = &s->live[id];
    if (was_active)
        fresh_unlink(s, id);
    lv->older = s->newest;
    lv->newer = GS_NO_STATE;
    if (s->newest != GS_NO_STATE)
        s->live[s->newest].newer = id;
    s->newest = id;
    lv->bumped = ++s->bumps;
}

/* Node @node joins state @id (change_room() made room). */
static void state_add(struct gs_sched *s, uint32_t id, uint32_t node)
{
    struct gs_nstate *st = &s->states[id];
    struct gs_nlive *lv = &s->live[id];
    uint32_t better = lv->count == 0 || s->prio[node] < lv->top;
    if (lv->count == 0) {
        st->active_pos = (uint32_t)s->nactive;
        s->active[s->nactive++] = id;
    }
    st->heap[lv->count] = node;
    s->state_of[node] = id;
    s->state_pos[node] = lv->count;
    lv->count++;
    heap_fix(s, st, lv->count, lv->count - 1);
    lv->top = s->prio[st->heap[0]];
    lv->epoch += better;
    if (better)
        fresh_bump(s, id, lv->count > 1);
    log_push(s, id, 1, better);
}

/* Node @node leaves its state (change_room() made room in the log). */
static void state_remove(struct gs_sched *s, uint32_t node)
{
    uint32_t id = s->state_of[node];
    struct gs_nstate *st = &s->states[id];
    struct gs_nlive *lv = &s->live[id];
    uint32_t pos = s->state_pos[node];
    lv->count--;
    if (pos != lv->count) {
        heap_swap(s, st, pos, lv->count);
        heap_fix(s, st, lv->count, pos);
    }
    lv->top = lv->count ? s->prio[st->heap[0]] : UINT32_MAX;
    if (lv->count == 0) {
        fresh_unlink(s, id);
        uint32_t last = s->active[--s->nactive];
        s->active[st->active_pos] = last;
        s->states[last].active_pos = st->active_pos;
        st->active_pos = UINT32_MAX;
    }
    log_push(s, id, -1, 0);
}

/*
 * Re-file node @i under the state its resources now have (@first: it is in none yet). All that
 * can fail is done before the node leaves its state: on -ENOMEM it is where it was (a state
 * interned for it and left empty is freed by a later sweep()).
 */
static int refile(struct gs_sched *s, uint32_t i, int first)
{
    struct gs_nstate key;
    key_of_node(&s->c->nodes[i], &key);
    int64_t id = intern(s, &key);
    if (id < 0)
        return (int)id;
    int rc = change_room(s, (uint32_t)id);
    if (rc)
        return rc;
    if (!first)
        state_remove(s, i);
    state_add(s, (uint32_t)id, i);
    return 0;
}

static int check_profile(const struct gs_profile *p, struct gs_diag *d)
{
    for (int i = 0; i < p->n[GS_EP_SCORE]; i++)
        if (!gs__plugins[p->id[GS_EP_SCORE][i]]->score)
            return gs_diag_error(d,
                                 "profile %s: %s scores the multi-tenant scheduler's placements, "
                                 "not the trace replay's node states",
                                 p->name, gs__plugins[p->id[GS_EP_SCORE][i]]->name);
    for (int i = 0; i < p->n[GS_EP_SCORE]; i++)
        if (gs__plugins[p->id[GS_EP_SCORE][i]]->tie == GS_TIE_UNIFORM && p->n[GS_EP_SCORE] > 1)
            return gs_diag_error(d,
                                 "profile %s: %s draws among all feasible nodes and cannot be "
                                 "combined with other score plugins",
                                 p->name, gs__plugins[p->id[GS_EP_SCORE][i]]->name);
    if (p->n[GS_EP_FILTER] == 0)
        return gs_diag_error(d, "profile %s: no filter plugin enabled", p->name);
    if (p->n[GS_EP_RESERVE] == 0)
        return gs_diag_error(d, "profile %s: no reserve plugin enabled", p->name);
    return 0;
}

int gs_sched_new(struct gs_cluster *c, const struct gs_profile *p, uint64_t seed,
                 struct gs_sched **out, struct gs_diag *d)
{
    int rc = check_profile(p, d);
    if (rc)
        return rc;
    struct gs_sched *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    s->c = c;
    s->prof = *p;
    s->sweep_min = SWEEP_MIN;
    s->newest = GS_NO_STATE;
    gs_rng_seed(&s->rng, seed);
    for (int i = 0; i < p->n[GS_EP_SCORE]; i++)
        if (gs__plugins[p->id[GS_EP_SCORE][i]]->tie == GS_TIE_UNIFORM)
            s->tie = GS_TIE_UNIFORM;
    if (p->n[GS_EP_SCORE] > 0)
        s->card_tie = gs__plugins[p->id[GS_EP_SCORE][0]]->card_tie;
    s->prio = malloc((c->n + 1) * sizeof(*s->prio));
    s->state_of = malloc((c->n + 1) * sizeof(*s->state_of));
    s->state_pos = malloc((c->n + 1) * sizeof(*s->state_pos));
    s->active = malloc((c->n + 1) * sizeof(*s->active));
    if (!s->prio || !s->state_of || !s->state_pos || !s->active) {
        gs_sched_free(s);
        return -ENOMEM;
    }
    /* A seeded permutation of the nodes: which of equally good nodes wins (Fisher-Yates). */
    for (size_t i = 0; i < c->n; i++)
        s->prio[i] = (uint32_t)i;
    gs_rng_shuffle(&s->rng, s->prio, c->n);
    for (size_t i = 0; i < c->n; i++) {
        rc = refile(s, (uint32_t)i, 1);
        if (rc) {
            gs_sched_free(s);
            return rc;
        }
    }
    *out = s;
    return 0;
}

void gs_sched_free(struct gs_sched *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nstates; i++)
        free(s->states[i].heap);
    free(s->states);
    free(s->live);
    free(s->free_ids);
    free(s->net);
    free(s->touched);
    free(s->seen);
    free(s->intern);
    free(s->active);
    free(s->prio);
    free(s->state_of);
    free(s->state_pos);
    for (size_t i = 0; i < s->nclasses; i++) {
        free(s->queues[i].v);
        free(s->queues[i].val);
    }
    free(s->queues);
    free(s->log);
    free(s->classes);
    free(s->class_index);
    free(s->typical);
    free(s->waste);
    free(s->fragmemo);
    free(s);
}

const char *gs_sched_last_reason(const struct gs_sched *s)
{
    return s->last_reason > 0 ? reason_text[s->last_reason] : "no node";
}

void gs_sched_stats(const struct gs_sched *s, struct gs_sched_stats *out)
{
    *out = s->stats;
}

size_t gs_sched_state_count(const struct gs_sched *s)
{
    return s->nseen;
}

static uint64_t req_hash(const struct gs_pod_req *r)
{
    uint64_t h = mix(0, (uint64_t)r->cpu_milli);
    h = mix(h, (uint64_t)r->memory_mib);
    h = mix(h, (uint64_t)r->num_gpu << 32 | r->gpu_milli);
    return mix(h, r->model_mask);
}

static int req_eq(const struct gs_pod_req *a, const struct gs_pod_req *b)
{
    return a->cpu_milli == b->cpu_milli && a->memory_mib == b->memory_mib &&
           a->num_gpu == b->num_gpu && a->gpu_milli == b->gpu_milli &&
           a->model_mask == b->model_mask;
}

void gs__podclass_init(struct gs_podclass *pc, const struct gs_pod_req *r)
{
    memset(pc, 0, sizeof(*pc));
    pc->req = *r;
    /* kube-scheduler scores a zero CPU request as 100m (GetNonzeroRequests). */
    pc->cpu_score = r->cpu_milli ? r->cpu_milli : 100;
    if (r->num_gpu == 0 || r->gpu_milli == 0)
        pc->tag = 0;
    else if (r->gpu_milli < GS_MILLI_GPU)
        pc->tag = 1u;
    else
        pc->tag = 1u << (r->num_gpu < GS_GPUS_MAX ? r->num_gpu : GS_GPUS_MAX);
}

static uint64_t class_hash_of(const struct gs_sched *s, size_t i)
{
    return req_hash(&s->classes[i].req);
}

static int64_t class_intern(struct gs_sched *s, const struct gs_pod_req *r)
{
    if ((s->nclasses + 1) * 2 > s->class_index_cap &&
        ids_build(s, &s->class_index, &s->class_index_cap,
                  s->class_index_cap ? s->class_index_cap * 2 : 256, s->nclasses, class_hash_of,
                  NULL) < 0)
        return -ENOMEM;
    size_t h = req_hash(r) & (s->class_index_cap - 1);
    while (s->class_index[h]) {
        if (req_eq(&s->classes[s->class_index[h] - 1].req, r))
            return s->class_index[h] - 1;
        h = (h + 1) & (s->class_index_cap - 1);
    }
    if (s->nclasses == s->classes_cap) {
        size_t cn = s->classes_cap, cq = s->classes_cap;
        struct gs_podclass *n = gs_grow(s->classes, &cn, s->nclasses + 1, sizeof(*n), 64);
        if (!n)
            return -ENOMEM;
        s->classes = n;
        struct gs_classq *q = gs_grow(s->queues, &cq, s->nclasses + 1, sizeof(*q), 64);
        if (!q)
            return -ENOMEM;
        s->queues = q;
        s->classes_cap = cn;
    }
    gs__podclass_init(&s->classes[s->nclasses], r);
    memset(&s->queues[s->nclasses], 0, sizeof(s->queues[0]));
    s->queues[s->nclasses].pos = SIZE_MAX; /* not yet seeded from the active states */
    s->class_index[h] = (uint32_t)s->nclasses + 1;
    return (int64_t)s->nclasses++;
}

static int64_t weighted(const struct gs_sched *s, const struct gs_nstate *st,
                        const struct gs_podclass *pc, int gpu)
{
    const struct gs_profile *p = &s->prof;
    int64_t total = 0;
    for (int i = 0; i < p->n[GS_EP_SCORE]; i++) {
        int sc = gs__plugins[p->id[GS_EP_SCORE][i]]->score(s, st, pc, gpu);
        sc = sc < 0 ? 0 : sc > GS_SCORE_MAX ? GS_SCORE_MAX : sc;
        total += (int64_t)sc * p->weight[GS_EP_SCORE][i];
    }
    return total;
}

/*
 * Filter and score class @pc on state @st: score << 8 | (card + 2), or -reason. A share of one
 * card is scored on every card it fits, so the card is part of the decision.
 */
static int64_t evaluate(const struct gs_sched *s, const struct gs_nstate *st,
                        const struct gs_podclass *pc)
{
    const struct gs_profile *p = &s->prof;
    for (int i = 0; i < p->n[GS_EP_FILTER]; i++) {
        int r = gs__plugins[p->id[GS_EP_FILTER][i]]->filter(s, st, pc);
        if (r)
            return -(int64_t)r;
    }
    if (!(pc->req.num_gpu == 1 && pc->req.gpu_milli < GS_MILLI_GPU))
        return weighted(s, st, pc, -1) << 8 | 1;
    int64_t best = -1;
    int gpu = -1;
    for (int i = 0; i < st->ngpu; i++) {
        if (st->gpu_left[i] < pc->req.gpu_milli)
            continue;
        int64_t t = weighted(s, st, pc, i);
        if (t > best ||
            (t == best && s->card_tie == GS_CARD_BEST_FIT && st->gpu_left[i] < st->gpu_left[gpu])) {
            best = t;
            gpu = i;
        }
    }
    if (s->card_tie == GS_CARD_RANDOM)
        gpu = -2; /* the reserve plugin draws among the cards that fit */
    return best << 8 | (int64_t)(gpu + 2);
}

/*
 * The (state, class) result, computed once: a value >= 0 is score << 8 | (gpu + 2), < 0 is
 * -reason. Each class keeps a dense array indexed by state id, since states are numbered in
 * creation order and a class mostly asks about recent ones.
 */
#define UNSET INT32_MIN

static int64_t lookup(struct gs_sched *s, uint32_t state, uint32_t cls)
{
    struct gs_classq *q = &s->queues[cls];
    if (state >= q->val_cap) {
        size_t old = q->val_cap;
        int32_t *v = gs_grow(q->val, &q->val_cap, (size_t)state + 1, sizeof(*v), 1024);
        if (!v) /* no room to remember: compute again next time */
            return evaluate(s, &s->states[state], &s->classes[cls]);
        for (size_t k = old; k < q->val_cap; k++)
            v[k] = UNSET;
        q->val = v;
    }
    if (q->val[state] == UNSET) { /* fits: scores < 1000 x 16 x GS_WEIGHT_MAX < 2^23 */
        q->val[state] = (int32_t)evaluate(s, &s->states[state], &s->classes[cls]);
        s->stats.evaluations++;
    }
    return q->val[state];
}

/* kube-scheduler's FitError wording: "0/N nodes are available: 3 Insufficient cpu, ...". */
static void explain(struct gs_sched *s, const uint64_t *reasons, struct gs_diag *why)
{
    char buf[GS_DIAG_MSG_MAX];
    size_t off = (size_t)snprintf(buf, sizeof(buf), GS_WORDS_FIT_ERROR, s->c->n);
    const char *sep = ": ";
    uint64_t most = 0;
    s->last_reason = GS_REASON_NONE;
    for (int r = 1; r < GS_REASON_COUNT; r++)
        if (reasons[r] > most) {
            most = reasons[r];
            s->last_reason = r;
        }
    for (int r = 1; r < GS_REASON_COUNT && off < sizeof(buf); r++) {
        if (!reasons[r])
            continue;
        off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%llu %s", sep,
                                (unsigned long long)reasons[r], reason_text[r]);
        sep = ", ";
    }
    if (off < sizeof(buf))
        snprintf(buf + off, sizeof(buf) - off, ".");
    gs_diag_error(why, "%s", buf);
}

static int tag_index(uint32_t tag)
{
    for (int k = 0; k <= GS_GPUS_MAX; k++)
        if (tag == 1u << k)
            return k;
    return -1;
}

/* Take what @pc asks at @pl; on -ENOMEM the node is left as it was. */
static int bind(struct gs_sched *s, const struct gs_podclass *pc, const struct gs_placement *pl)
{
    struct gs_node *n = &s->c->nodes[pl->node], was = *n;
    n->cpu_left -= pc->req.cpu_milli;
    n->memory_left -= pc->req.memory_mib;
    for (int g = 0; g < n->ngpu; g++)
        if (pl->gpu_mask & (1u << g))
            n->gpu_left[g] = (uint16_t)(n->gpu_left[g] - pl->gpu_milli);
    n->npods++;
    int k = tag_index(pc->tag);
    if (k >= 0)
        n->tag_pods[k]++;
    int rc = refile(s, (uint32_t)pl->node, 0);
    if (rc)
        *n = was;
    return rc;
}

/* Class heaps: max score first, then the lowest node priority. */
static int hent_before(const struct gs_hent *a, const struct gs_hent *b)
{
    return a->score != b->score ? a->score > b->score : a->prio < b->prio;
}

GS_HEAP_ARY(hent, struct gs_hent, hent_before, 4)

/* Account one state (@cnt nodes, or a join/leave of @cnt) for class @cls; push when @push. */
static int account(struct gs_sched *s, uint32_t cls, uint32_t id, int64_t cnt, int push)
{
    struct gs_classq *q = &s->queues[cls];
    const struct gs_nlive *lv = &s->live[id];
    int64_t v = lookup(s, id, cls);
    s->stats.state_visits++;
    if (v < 0) {
        q->reasons[-v < GS_REASON_COUNT ? -v : 0] += cnt;
        return 0;
    }
    if (!push || lv->count == 0 || s->tie == GS_TIE_UNIFORM)
        return 0;
    return hent_push(&q->v, &q->n, &q->cap,
                     (struct gs_hent){(int32_t)(v >> 8), lv->top, id, lv->epoch});
}

/* How far ahead a pass over a list of states fetches the ones it will look up. */
#define FETCH_AHEAD 8

/* Start loading what account() reads of state @id for class queue @q. */
static void fetch_ahead(const struct gs_sched *s, const struct gs_classq *q, uint32_t id)
{
    __builtin_prefetch(&s->live[id]);
    if (id < q->val_cap)
        __builtin_prefetch(&q->val[id]);
}

/*
 * Replay log entries @from.. into class @cls, each state once with its net change: a state that
 * nodes joined and left alike, with no better join since, changes nothing for any class and is
 * not looked up, and one that changed often is looked up once. The heap gets one entry per state
 * whose last better join is still its epoch; its order does not depend on the order of pushes.
 */
static int replay(struct gs_sched *s, uint32_t cls, size_t from)
{
    uint32_t stamp = ++s->net_stamp;
    if (stamp == 0) { /* wrapped: forget every old stamp */
        memset(s->net, 0, s->states_cap * sizeof(*s->net));
        stamp = s->net_stamp = 1;
    }
    size_t nt = 0;
    for (size_t i = from; i < s->nlog; i++) {
        const struct gs_logent *e = &s->log[i];
        struct gs_netent *n = &s->net[e->state];
        if (n->stamp != stamp) {
            *n = (struct gs_netent){stamp, 0, 0};
            s->touched[nt++] = e->state;
        }
        n->delta += e->delta;
        if (e->better)
            n->epoch = e->epoch;
    }
    int rc = 0;
    const struct gs_classq *q = &s->queues[cls];
    for (size_t k = 0; k < nt && !rc; k++) {
        if (k + FETCH_AHEAD < nt)
            fetch_ahead(s, q, s->touched[k + FETCH_AHEAD]);
        const struct gs_netent *n = &s->net[s->touched[k]];
        const struct gs_nlive *lv = &s->live[s->touched[k]];
        int fresh = n->epoch && n->epoch == lv->epoch && lv->count > 0;
        if (n->delta || fresh)
            rc = account(s, cls, s->touched[k], n->delta, fresh);
    }
    s->queues[cls].pos = s->log_base + s->nlog;
    return rc;
}

/*
 * Bring the heap of class @cls, which is not counting reasons, up to date: push each active state
 * whose epoch moved since the class last asked, newest first, until the first it has seen. That
 * is all a heap needs: pick_best() drops the entries of emptied states and re-files those whose
 * best node left, so the nodes that only left a state, and the states born and emptied since, are
 * never looked at, and a class asked rarely looks at most at the active states.
 */
static int walk_fresh(struct gs_sched *s, uint32_t cls)
{
    struct gs_classq *q = &s->queues[cls];
    uint32_t id = s->newest;
    if (id != GS_NO_STATE && s->live[id].older != GS_NO_STATE)
        fetch_ahead(s, q, s->live[id].older);
    for (; id != GS_NO_STATE && s->live[id].bumped > q->bumped; id = s->live[id].older) {
        /* two states ahead: the next one was fetched a step ago, and its misses overlap */
        uint32_t next = s->live[id].older;
        if (next != GS_NO_STATE && s->live[next].older != GS_NO_STATE)
            fetch_ahead(s, q, s->live[next].older);
        s->stats.change_visits++;
        int rc = account(s, cls, id, 0, 1);
        if (rc)
            return rc;
    }
    q->bumped = s->bumps;
    return 0;
}

/* Bring counting class @cls up to date with the membership log (or seed it afresh). */
static int count_up(struct gs_sched *s, uint32_t cls)
{
    struct gs_classq *q = &s->queues[cls];
    int rc = 0;
    size_t since = q->pos;
    size_t behind = since == SIZE_MAX ? SIZE_MAX : s->nlog - (since - s->log_base);
    if (behind > 2 * s->nactive + 64) {
        /* New, or so far behind that a fresh look at the active states costs less than the
         * replay: start the class over from them. */
        q->n = 0;
        memset(q->reasons, 0, sizeof(q->reasons));
        s->stats.change_visits += s->nactive;
        for (size_t a = 0; a < s->nactive && !rc; a++) {
            if (a + FETCH_AHEAD < s->nactive)
                fetch_ahead(s, q, s->active[a + FETCH_AHEAD]);
            rc = account(s, cls, s->active[a], s->live[s->active[a]].count, 1);
        }
        q->pos = s->log_base + s->nlog;
        return rc;
    }
    s->stats.change_visits += behind;
    return replay(s, cls, since - s->log_base);
}

/* Bring class @cls up to date. On -ENOMEM (a heap that could not grow) it starts over next time
 * rather than keep what it had half read. */
static int catch_up(struct gs_sched *s, uint32_t cls)
{
    struct gs_classq *q = &s->queues[cls];
    if (!q->counting && s->tie == GS_TIE_UNIFORM)
        return 0; /* draws need nothing kept */
    int rc = q->counting ? count_up(s, cls) : walk_fresh(s, cls);
    if (rc) {
        q->n = 0;
        q->pos = SIZE_MAX;
        q->bumped = 0;
    }
    return rc;
}

/* The best node for class @cls, or -1. Stale heap entries are dropped or re-filed lazily. */
static int64_t pick_best(struct gs_sched *s, uint32_t cls)
{
    struct gs_classq *q = &s->queues[cls];
    while (q->n) {
        struct gs_hent top = q->v[0];
        const struct gs_nlive *lv = &s->live[top.state];
        if (lv->count == 0 || lv->epoch != top.epoch) {
            hent_pop(q->v, &q->n);
            continue;
        }
        if (lv->top != top.prio) { /* its best node left: re-file with the one it has now */
            top.prio = lv->top;
            hent_retop(q->v, q->n, top);
            continue;
        }
        return s->states[top.state].heap[0];
    }
    return -1;
}

/* Nodes feasible for counting class @cls. */
static uint64_t feasible_nodes(const struct gs_sched *s, uint32_t cls)
{
    int64_t bad = 0;
    for (int r = 1; r < GS_REASON_COUNT; r++)
        bad += s->queues[cls].reasons[r];
    return s->c->n - (uint64_t)bad;
}

/*
 * Misses in a row after which a uniform class starts counting reasons, and the share of feasible
 * nodes (one in UNIFORM_EASY) at which it stops: a draw hits with probability feasible / nodes.
 */
#define UNIFORM_DRAWS 64
#define UNIFORM_EASY  16

/*
 * A uniformly drawn feasible node for class @cls, or -1 (GS_TIE_UNIFORM plugins). Drawing nodes
 * until one is feasible is uniform among the feasible and costs nodes / feasible draws, which
 * depends on the share of nodes that fit, not on the size of the cluster (a walk of the active
 * states does); so a class that is not counting only draws (-1 after UNIFORM_DRAWS misses: the
 * caller makes it count), and one that counts walks the active states only when the expected
 * draws would outnumber them. Any path gives each feasible node the same chance, since nothing
 * changes between the draws.
 */
static int64_t pick_uniform(struct gs_sched *s, uint32_t cls)
{
    uint64_t feasible = s->queues[cls].counting ? feasible_nodes(s, cls) : s->c->n;
    if (feasible == 0)
        return -1;
    int draws = s->queues[cls].counting ? INT32_MAX : UNIFORM_DRAWS;
    if (feasible * s->nactive >= s->c->n)
        for (int i = 0; i < draws; i++) {
            uint32_t node = (uint32_t)gs_rng_below(&s->rng, s->c->n);
            if (lookup(s, s->state_of[node], cls) >= 0)
                return node;
        }
    if (!s->queues[cls].counting)
        return -1;
    uint64_t r = gs_rng_below(&s->rng, feasible);
    for (size_t a = 0; a < s->nactive; a++) {
        if (a + FETCH_AHEAD < s->nactive)
            fetch_ahead(s, &s->queues[cls], s->active[a + FETCH_AHEAD]);
        uint32_t cnt = s->live[s->active[a]].count;
        if (lookup(s, s->active[a], cls) < 0)
            continue;
        if (r < cnt)
            return s->states[s->active[a]].heap[r];
        r -= cnt;
    }
    return -1;
}

/*
 * Drop log entries every class has consumed, when that frees half of the log. The look at every
 * class is made once per LOG_CHECK_EVERY entries, not per placement: a cost per pod of the number
 * of pod classes.
 */
#define LOG_DROP_MIN    65536
#define LOG_CHECK_EVERY 4096

static void log_compact(struct gs_sched *s)
{
    if (s->nlog < LOG_DROP_MIN || s->log_base + s->nlog < s->log_check)
        return;
    s->log_check = s->log_base + s->nlog + LOG_CHECK_EVERY;
    size_t low = s->log_base + s->nlog;
    for (size_t c = 0; c < s->nclasses; c++)
        if (s->queues[c].pos != SIZE_MAX && s->queues[c].pos < low)
            low = s->queues[c].pos;
    size_t drop = low - s->log_base;
    if (drop < LOG_DROP_MIN || drop * 2 < s->nlog)
        return;
    memmove(s->log, s->log + drop, (s->nlog - drop) * sizeof(*s->log));
    s->nlog -= drop;
    s->log_base += drop;
}

/*
 * Free the ids of the states no node is in, once they number half the active ones (and
 * sweep_min, SWEEP_MIN unless a test set it lower). Each class keeps its results in an array
 * indexed by state id: numbering only the states of the moment keeps those arrays (and the replay's
 * reads of them) about the size of the active states, not of every state the run has seen, which
 * on a large cluster outgrows the CPU caches (freeing at half rather than all of them took 5 % off
 * the trace replicated ten times). First every class counting reasons consumes the log, or, when it
 * is far enough behind that a fresh look would cost less, is set to start over: no log entry
 * outlives its state's id. A freed state has left the fresh list, and a class heap entry for its id
 * fails its epoch check. A state that comes back later is a new one.
 */
static void sweep(struct gs_sched *s)
{
    size_t empty = s->nstates - s->nfree - s->nactive;
    if (empty < s->sweep_min || empty * 2 < s->nactive)
        return;
    uint32_t *index = calloc(s->intern_cap, sizeof(*index)); /* the new state table, first */
    if (!index)
        return; /* no room: the arrays grow instead */
    for (uint32_t c = 0; c < s->nclasses; c++) {
        struct gs_classq *q = &s->queues[c];
        if (q->pos != SIZE_MAX && (s->log_base + s->nlog - q->pos) * 2 > s->nactive)
            q->pos = SIZE_MAX;
        else if (q->pos != SIZE_MAX)
            (void)catch_up(s, c); /* on -ENOMEM it is set to start over, as if far behind */
    }
    s->log_base += s->nlog;
    s->nlog = 0;
    size_t old = s->nfree;
    for (uint32_t id = 0; id < s->nstates; id++)
        if (s->live[id].count == 0 && !s->states[id].freed) {
            s->states[id].freed = 1;
            s->free_ids[s->nfree++] = id;
        }
    for (size_t c = 0; c < s->nclasses; c++)
        for (size_t k = old; k < s->nfree; k++)
            if (s->free_ids[k] < s->queues[c].val_cap)
                s->queues[c].val[s->free_ids[k]] = UNSET;
    s->nfree = 0; /* the free list again, lowest id last: reused first */
    for (size_t id = s->nstates; id-- > 0;)
        if (s->states[id].freed)
            s->free_ids[s->nfree++] = (uint32_t)id;
    ids_fill(s, index, s->intern_cap, s->nstates, state_hash_of, state_gone);
    free(s->intern);
    s->intern = index;
}

/* After a node changed state: drop the log that every class has read, free unused state ids. */
static void tidy(struct gs_sched *s)
{
    log_compact(s);
    sweep(s);
}

static int64_t prepare(struct gs_sched *s, const struct gs_pod_req *pod, struct gs_diag *why);

/* Reserve the cards of class @cls on @node (the card its cached result chose) and bind. */
static int commit(struct gs_sched *s, uint32_t cls, size_t node, struct gs_placement *out)
{
    int gpu = (int)(lookup(s, s->state_of[node], cls) & 0xff) - 2;
    struct gs_placement pl = {.node = (int32_t)node};
    const struct gs_plugin *res = gs__plugins[s->prof.id[GS_EP_RESERVE][0]];
    int rc = res->reserve(s, &s->c->nodes[node], &s->classes[cls], gpu, &pl);
    if (!rc)
        rc = bind(s, &s->classes[cls], &pl);
    if (rc)
        return rc;
    tidy(s);
    *out = pl;
    return 0;
}

/* The node for class @cls (caught up) as the profile picks it, or -1. */
static int64_t pick(struct gs_sched *s, uint32_t cls)
{
    return s->tie == GS_TIE_UNIFORM ? pick_uniform(s, cls) : pick_best(s, cls);
}

int gs_sched_place(struct gs_sched *s, const struct gs_pod_req *pod, struct gs_placement *out,
                   struct gs_diag *why)
{
    int64_t cls = prepare(s, pod, why);
    if (cls < 0)
        return (int)cls;
    int rc = catch_up(s, (uint32_t)cls);
    if (rc)
        return rc;
    int64_t node = pick(s, (uint32_t)cls);
    struct gs_classq *q = &s->queues[cls];
    if (node == -1 && !q->counting) { /* the reasons are wanted now: count them afresh */
        q->counting = 1;
        s->ncounting++;
        q->pos = SIZE_MAX;
        rc = catch_up(s, (uint32_t)cls);
        if (rc)
            return rc;
        node = pick(s, (uint32_t)cls);
    } else if (node >= 0 && q->counting &&
               (s->tie != GS_TIE_UNIFORM ||
                feasible_nodes(s, (uint32_t)cls) * UNIFORM_EASY >= s->c->n)) {
        q->counting = 0; /* fits again: back to the heap alone, which is up to date, or draws */
        s->ncounting--;
        q->pos = SIZE_MAX;
        q->bumped = s->bumps;
    }
    if (node == -ENOMEM)
        return -ENOMEM;
    if (node < 0) {
        uint64_t reasons[GS_REASON_COUNT];
        for (int r = 0; r < GS_REASON_COUNT; r++)
            reasons[r] = (uint64_t)s->queues[cls].reasons[r];
        explain(s, reasons, why);
        return GS_UNSCHEDULABLE;
    }
    return commit(s, (uint32_t)cls, (size_t)node, out);
}

/* Give back to @n what @pod held there at @pl. Return: 0; -EINVAL (more than @n has allocated). */
static int give_back(struct gs_node *n, const struct gs_pod_req *pod, const struct gs_placement *pl)
{
    struct gs_podclass pc;
    gs__podclass_init(&pc, pod);
    int k = tag_index(pc.tag);
    if (n->npods == 0 || n->cpu_left + pod->cpu_milli > n->cpu_milli ||
        n->memory_left + pod->memory_mib > n->memory_mib || (k >= 0 && n->tag_pods[k] == 0))
        return -EINVAL;
    for (int g = 0; g < GS_GPUS_MAX; g++)
        if ((pl->gpu_mask & (1u << g)) &&
            (g >= n->ngpu || n->gpu_left[g] + pl->gpu_milli > GS_MILLI_GPU))
            return -EINVAL;
    n->cpu_left += pod->cpu_milli;
    n->memory_left += pod->memory_mib;
    for (int g = 0; g < n->ngpu; g++)
        if (pl->gpu_mask & (1u << g))
            n->gpu_left[g] = (uint16_t)(n->gpu_left[g] + pl->gpu_milli);
    n->npods--;
    if (k >= 0)
        n->tag_pods[k]--;
    return 0;
}

int gs_sched_release(struct gs_sched *s, const struct gs_pod_req *pod,
                     const struct gs_placement *pl)
{
    if (pl->node < 0 || (size_t)pl->node >= s->c->n)
        return -EINVAL;
    struct gs_node was = s->c->nodes[pl->node];
    int rc = give_back(&s->c->nodes[pl->node], pod, pl);
    if (!rc && (rc = refile(s, (uint32_t)pl->node, 0)) != 0)
        s->c->nodes[pl->node] = was; /* -ENOMEM: the pod still holds its cards */
    if (!rc)
        tidy(s);
    return rc;
}

static int64_t prepare(struct gs_sched *s, const struct gs_pod_req *pod, struct gs_diag *why)
{
    int rc = gs_pod_req_check(pod, "pod", why);
    if (rc)
        return rc;
    int64_t cls = class_intern(s, pod);
    if (cls < 0)
        return cls;
    const struct gs_profile *p = &s->prof;
    for (int i = 0; i < p->n[GS_EP_PRE_FILTER]; i++) {
        const struct gs_plugin *pl = gs__plugins[p->id[GS_EP_PRE_FILTER][i]];
        if (pl->pre_filter && (rc = pl->pre_filter(s, &s->classes[cls], why)) != 0)
            return rc;
    }
    return cls;
}

/* Class of @pod and its cached result on @node; GS_UNSCHEDULABLE (with @why) when it fails. */
static int64_t node_value(struct gs_sched *s, const struct gs_pod_req *pod, size_t node,
                          int64_t *cls, struct gs_diag *why)
{
    if (node >= s->c->n)
        return gs_diag_error(why, "node index %zu out of range", node);
    *cls = prepare(s, pod, why);
    if (*cls < 0)
        return *cls;
    int64_t v = lookup(s, s->state_of[node], (uint32_t)*cls);
    if (v < 0) {
        uint64_t reasons[GS_REASON_COUNT] = {0};
        reasons[-v < GS_REASON_COUNT ? -v : 0] = 1;
        explain(s, reasons, why);
        return GS_UNSCHEDULABLE;
    }
    return (v >> 8) + 2; /* shifted past the status codes 0 and 1 */
}

int64_t gs_sched_score_node(struct gs_sched *s, const struct gs_pod_req *pod, size_t node,
                            struct gs_diag *why)
{
    int64_t cls;
    return node_value(s, pod, node, &cls, why);
}

int gs_sched_score_nodes(struct gs_sched *s, const struct gs_pod_req *pod, const int32_t *nodes,
                         size_t n, int64_t *out, const char **reason, struct gs_diag *why)
{
    int64_t cls = prepare(s, pod, why);
    if (cls < 0)
        return (int)cls;
    for (size_t i = 0; i < n; i++) {
        reason[i] = NULL;
        if (nodes[i] < 0 || (size_t)nodes[i] >= s->c->n) {
            out[i] = -ENOENT;
            continue;
        }
        int64_t v = lookup(s, s->state_of[nodes[i]], (uint32_t)cls);
        out[i] = v < 0 ? GS_UNSCHEDULABLE : (v >> 8) + 2;
        if (v < 0) /* what gs_sched_last_reason() says after this node alone failed */
            reason[i] = -v < GS_REASON_COUNT ? reason_text[-v] : "no node";
    }
    return 0;
}

int gs_sched_fits_without(struct gs_sched *s, const struct gs_pod_req *pod, size_t node,
                          const struct gs_pod_req *gone, const struct gs_placement *pl,
                          size_t ngone, struct gs_diag *why)
{
    if (node >= s->c->n)
        return gs_diag_error(why, "node index %zu out of range", node);
    int64_t cls = prepare(s, pod, why);
    if (cls < 0)
        return (int)cls;
    struct gs_node copy = s->c->nodes[node];
    for (size_t i = 0; i < ngone; i++)
        if (pl[i].node != (int32_t)node || give_back(&copy, &gone[i], &pl[i]))
            return gs_diag_error(why, "node %s: pod %zu of the set does not hold what it names",
                                 copy.name, i);
    struct gs_nstate key; /* not interned: a what-if leaves the scheduler as it was */
    key_of_node(&copy, &key);
    return evaluate(s, &key, &s->classes[cls]) >= 0;
}

int gs_sched_bind_node(struct gs_sched *s, const struct gs_pod_req *pod, size_t node,
                       struct gs_placement *out, struct gs_diag *why)
{
    int64_t cls = -1, sc = node_value(s, pod, node, &cls, why); /* set when sc >= 2 */
    return sc < 2 ? (int)sc : commit(s, (uint32_t)cls, node, out);
}

int gs_sched_set_priority(struct gs_sched *s, const uint32_t *prio)
{
    if (s->nclasses > 0)
        return -EBUSY;
    for (size_t i = 0; i < s->c->n; i++)
        if (prio[i] >= s->c->n)
            return -EINVAL;
    memcpy(s->prio, prio, s->c->n * sizeof(*prio));
    for (size_t a = 0; a < s->nactive; a++) { /* re-heap: insert members one by one */
        struct gs_nstate *st = &s->states[s->active[a]];
        for (uint32_t i = 1; i < s->live[s->active[a]].count; i++)
            for (uint32_t k = i; k > 0 && s->prio[st->heap[(k - 1) / 2]] > s->prio[st->heap[k]];
                 k = (k - 1) / 2)
                heap_swap(s, st, k, (k - 1) / 2);
        s->live[s->active[a]].top = s->prio[st->heap[0]];
    }
    return 0;
}

uint32_t gs_sched_priority(const struct gs_sched *s, size_t node)
{
    return node < s->c->n ? s->prio[node] : UINT32_MAX;
}

/* Does @pl name @pod's cards on an existing node? -EINVAL with @why when not. */
static int placement_check(const struct gs_sched *s, const struct gs_pod_req *pod,
                           const struct gs_placement *pl, struct gs_diag *why)
{
    if (pl->node < 0 || (size_t)pl->node >= s->c->n)
        return gs_diag_error(why, "placement: node index %d out of range", (int)pl->node);
    const struct gs_node *n = &s->c->nodes[pl->node];
    if (n->ngpu < GS_GPUS_MAX && (pl->gpu_mask >> n->ngpu) != 0)
        return gs_diag_error(why, "placement: node %s has %d GPUs; mask 0x%x names others", n->name,
                             n->ngpu, pl->gpu_mask);
    if ((uint32_t)__builtin_popcount(pl->gpu_mask) != pod->num_gpu ||
        (pod->num_gpu && pl->gpu_milli != pod->gpu_milli))
        return gs_diag_error(why, "placement: %d cards of %u milli for a pod of %u x %u",
                             __builtin_popcount(pl->gpu_mask), pl->gpu_milli, pod->num_gpu,
                             pod->gpu_milli);
    if (pod->num_gpu && !gs__model_allowed(pod->model_mask, n->model))
        return gs_diag_error(why, "placement: node %s has a GPU model the pod does not allow",
                             n->name);
    return 0;
}

int gs_sched_bind_placement(struct gs_sched *s, const struct gs_pod_req *pod,
                            const struct gs_placement *pl, struct gs_diag *why)
{
    int rc = gs_pod_req_check(pod, "pod", why);
    if (!rc)
        rc = placement_check(s, pod, pl, why);
    if (rc)
        return rc;
    const struct gs_node *n = &s->c->nodes[pl->node];
    if (n->cpu_left < pod->cpu_milli || n->memory_left < pod->memory_mib)
        return gs_diag_error_code(why, GS_UNSCHEDULABLE, "node %s: no room for the CPU or memory",
                                  n->name);
    for (int g = 0; g < n->ngpu; g++)
        if ((pl->gpu_mask & (1u << g)) && n->gpu_left[g] < pl->gpu_milli) {
            gs_diag_error(why, "node %s: GPU %d has %u milli free, %u needed", n->name, g,
                          n->gpu_left[g], pl->gpu_milli);
            return GS_UNSCHEDULABLE;
        }
    struct gs_podclass pc;
    gs__podclass_init(&pc, pod);
    rc = bind(s, &pc, pl);
    if (!rc)
        tidy(s);
    return rc;
}
