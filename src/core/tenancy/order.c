/*
 * The pending queue and the scheduling pass.
 *
 * Pending pods are kept in buckets: one per priority level, queue and kind of pod (the static
 * shape of a single pod; the make-up of a gang, for gang members). Within a bucket pods keep
 * arrival order. Pods of a bucket fail alike: when the first one tried cannot be placed, the
 * others cannot either until something is released (the release epoch moves on), so the pass
 * skips the whole bucket at once instead of visiting its pods one by one. Two things are
 * checked per pod all the same: maxPodsPerUser, and whether the pod ends before the reservation
 * of the blocked head (EASY backfill); a failure that met a reserved node stands only for pods
 * that end after it, and only while the reservation is the same one.
 *
 * Within a level the pass serves the queue furthest below its deserved share next (Volcano's
 * proportion), and within a queue the earliest arrival of all its buckets (a heap per queue).
 */
#include "tenancy_impl.h"

#include "../heap.h"

#include "gpusched/fairshare.h"
#include "gpusched/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct bucket {
    uint64_t key;
    int32_t list;      /* level * nqueues + queue */
    int listed;        /* in its list: it has (or had, since the last pass) pending pods */
    struct vec pods;   /* pods [start, n) in (submit, index) order; some no longer pending */
    size_t start, cur; /* first live position; the pass's position */
    size_t dead;       /* pods bound since the last compaction (an upper bound of the dead) */
    int64_t min_dur;   /* a lower bound of its pods' durations, INT64_MAX when none is bounded */
    /* Pods ending before (0) or after (1) the reservation failed as a class at fail_epoch;
     * fail_resv is the reservation it met, 0 when none stood in the way. */
    uint64_t fail_epoch[2], fail_resv[2];
    uint64_t failed_at;   /* t->said at that failure */
    int32_t failed_group; /* the gang of the pod whose failure it was, -1 none */
    uint32_t failed_gen;  /* that gang's gen: another PodGroup may have its place now */
    char reason[GS_REASON_MAX];
};

struct centry {
    int64_t submit, seq;
    int32_t pod, bucket;
};

struct qheap {
    struct centry *v;
    size_t n, cap;
};

static int c_less(const struct centry *a, const struct centry *b)
{
    return a->submit < b->submit || (a->submit == b->submit && a->seq < b->seq);
}

GS_HEAP(qh, struct centry, c_less)

static uint64_t bucket_hash(uint64_t key, int32_t list)
{
    return (key ^ ((uint64_t)(uint32_t)list * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
}

static int table_grow(struct gs_tenancy *t)
{
    size_t size = t->btable_size ? t->btable_size * 2 : 256;
    int32_t *tab = malloc(size * sizeof(*tab));
    if (!tab)
        return -ENOMEM;
    memset(tab, -1, size * sizeof(*tab));
    for (size_t b = 0; b < t->nbuckets; b++) {
        size_t i = (size_t)bucket_hash(t->buckets[b].key, t->buckets[b].list) & (size - 1);
        while (tab[i] >= 0)
            i = (i + 1) & (size - 1);
        tab[i] = (int32_t)b;
    }
    free(t->btable);
    t->btable = tab;
    t->btable_size = size;
    return 0;
}

/* The bucket of (@key, @list), made when new; its index, or -ENOMEM. */
static int32_t bucket_of(struct gs_tenancy *t, uint64_t key, int32_t list)
{
    if (2 * (t->nbuckets + 1) > t->btable_size && table_grow(t) < 0)
        return -ENOMEM;
    size_t mask = t->btable_size - 1, i = (size_t)bucket_hash(key, list) & mask;
    for (; t->btable[i] >= 0; i = (i + 1) & mask) {
        const struct bucket *b = &t->buckets[t->btable[i]];
        if (b->key == key && b->list == list)
            return t->btable[i];
    }
    struct bucket *v = gs_grow(t->buckets, &t->capbuckets, t->nbuckets + 1, sizeof(*v), 64);
    if (!v)
        return -ENOMEM;
    t->buckets = v;
    struct bucket *b = &t->buckets[t->nbuckets];
    memset(b, 0, sizeof(*b));
    b->failed_group = -1;
    b->key = key;
    b->list = list;
    b->min_dur = INT64_MAX;
    t->btable[i] = (int32_t)t->nbuckets;
    return (int32_t)t->nbuckets++;
}

static int64_t dur_of(const struct rpod *p)
{
    int64_t w = gs__tn_walltime(p->sp);
    return w == GS_UNSET ? INT64_MAX : w;
}

/* Put pending @pod in bucket @bi, in (submit, seq) order. */
static int bucket_insert(struct gs_tenancy *t, int32_t pod, int32_t bi)
{
    struct rpod *p = &t->pods[pod];
    p->bucket = bi;
    struct bucket *b = &t->buckets[bi];
    if (!b->listed) {
        if (gs__vec_push(&t->blists[b->list], bi) < 0)
            return -ENOMEM;
        b->listed = 1;
    }
    struct vec *v = &b->pods;
    if (gs__vec_push(v, pod) < 0)
        return -ENOMEM;
    size_t i = v->n - 1;
    while (i > b->start && gs__tn_before(p, &t->pods[v->v[i - 1]])) {
        v->v[i] = v->v[i - 1];
        i--;
    }
    v->v[i] = pod;
    if (i < b->cur) /* keep the pass's position on the pod it was on */
        b->cur++;
    if (dur_of(p) < b->min_dur)
        b->min_dur = dur_of(p);
    return 0;
}

static int list_of(const struct gs_tenancy *t, const struct rpod *p)
{
    return p->level * (int32_t)t->nqueues + p->queue;
}

int gs__tn_pending_add(struct gs_tenancy *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    if (p->in_pending)
        return 0;
    p->in_pending = 1;
    p->tried_epoch = 0;
    if (p->group >= 0 && t->gangs[p->group].dirty)
        return 0; /* its gang's key is made when the pass begins (rebucket()) */
    if (p->bucket < 0) {
        uint64_t key = p->group >= 0 ? t->gangs[p->group].key : p->shape;
        int32_t b = bucket_of(t, key, list_of(t, p));
        if (b < 0)
            return b;
        p->bucket = b;
    }
    return bucket_insert(t, pod, p->bucket);
}

/*
 * Gangs whose members arrived since the last pass: their key counts the members there are now,
 * and their pending members move to its bucket. The entries left in an older bucket are dropped
 * there (a pod belongs to the bucket its `bucket` names).
 */
static int rebucket(struct gs_tenancy *t)
{
    for (size_t i = 0; i < t->dirty_gangs.n; i++) {
        struct gang *g = &t->gangs[t->dirty_gangs.v[i]];
        g->dirty = 0;
        g->key = gs__tn_gang_key(t, g);
        for (size_t k = 0; k < g->members.n; k++) {
            int32_t pod = g->members.v[k];
            struct rpod *m = &t->pods[pod];
            if (!m->in_pending || m->state != GS_POD_PENDING)
                continue;
            if (m->bucket >= 0 && t->buckets[m->bucket].key == g->key)
                continue;
            if (m->bucket >= 0) { /* its entry there is left behind */
                t->buckets[m->bucket].dead++;
                m->stale++;
            }
            int32_t b = bucket_of(t, g->key, list_of(t, m));
            if (b < 0 || (b = bucket_insert(t, pod, b)) < 0)
                return b;
        }
    }
    t->dirty_gangs.n = 0;
    return 0;
}

void gs__tn_pending_left(struct gs_tenancy *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    if (p->in_pending && p->bucket < 0) /* bound before its gang was put in a bucket (restored, */
        p->in_pending = 0;              /* or bound through the extender): it has no entry */
    else if (p->in_pending)
        t->buckets[p->bucket].dead++;
}

/* Is @pod's entry in @b its own? A gang member moved to its gang's new bucket left one behind. */
static int here(const struct gs_tenancy *t, const struct bucket *b, int32_t pod)
{
    return &t->buckets[t->pods[pod].bucket] == b;
}

/* Drop the pods that left the pending state, when they are many or in front. */
static void tidy(struct gs_tenancy *t, struct bucket *b)
{
    struct vec *v = &b->pods;
    if (2 * b->dead > v->n - b->start) {
        size_t w = 0;
        b->min_dur = INT64_MAX;
        for (size_t i = b->start; i < v->n; i++) {
            struct rpod *p = &t->pods[v->v[i]];
            if (!here(t, b, v->v[i])) {
                p->stale--;
                continue;
            }
            if (p->state != GS_POD_PENDING) {
                p->in_pending = 0;
                continue;
            }
            v->v[w++] = v->v[i];
            if (dur_of(p) < b->min_dur)
                b->min_dur = dur_of(p);
        }
        v->n = w;
        b->start = b->dead = 0;
    }
    for (; b->start < v->n; b->start++) {
        int32_t pod = v->v[b->start];
        if (here(t, b, pod) && t->pods[pod].state == GS_POD_PENDING)
            break;
        if (here(t, b, pod))
            t->pods[pod].in_pending = 0;
        else
            t->pods[pod].stale--;
    }
    if (b->start == v->n)
        v->n = b->start = b->dead = 0;
}

static int class_failed(const struct gs_tenancy *t, const struct bucket *b, int late)
{
    return b->fail_epoch[late] == t->epoch &&
           (b->fail_resv[late] == 0 || b->fail_resv[late] == t->resv_gen);
}

/* The next pod of @b this pass may try, from its position on; -1 none. */
static int32_t candidate(struct gs_tenancy *t, struct bucket *b)
{
    int f0 = class_failed(t, b, 0), f1 = class_failed(t, b, 1);
    if (f0 && (f1 || t->head < 0))
        return -1;
    /* Only pods ending before the reservation are left to try: is there one at all? */
    if (f1 && t->head >= 0 && &t->buckets[t->pods[t->head].bucket] != b &&
        (b->min_dur == INT64_MAX || t->now + b->min_dur > t->shadow_t))
        return -1;
    if (b->cur < b->start)
        b->cur = b->start;
    for (; b->cur < b->pods.n; b->cur++) {
        int32_t pod = b->pods.v[b->cur];
        const struct rpod *p = &t->pods[pod];
        if (p->state == GS_POD_PENDING && here(t, b, pod) &&
            (p->tried_epoch != t->epoch || (p->tried_resv && p->tried_resv != t->resv_gen)) &&
            !class_failed(t, b, gs__tn_late(t, p)))
            return pod;
    }
    return -1;
}

/* Record that @p failed, and why, as a class of @b when @general (see the file's comment). */
static void fail(struct gs_tenancy *t, struct bucket *b, struct rpod *p, int general, int was_late,
                 uint64_t held_before)
{
    p->tried_epoch = t->epoch;
    p->tried_resv = t->held_hits == held_before ? 0 : t->resv_gen;
    p->said = ++t->said;
    if (!general)
        return;
    if (t->held_hits == held_before) {
        b->fail_epoch[0] = b->fail_epoch[1] = t->epoch;
        b->fail_resv[0] = b->fail_resv[1] = 0;
    } else {
        b->fail_epoch[was_late] = t->epoch;
        b->fail_resv[was_late] = t->resv_gen;
    }
    b->failed_at = p->said;
    b->failed_group = p->group;
    b->failed_gen = p->group >= 0 ? t->gangs[p->group].gen : 0;
    gs__reason_copy(b->reason, p->reason);
}

/* How many of gang @g's waiting members are @user's (@user's first such member at *@first). */
static int32_t gang_user_need(const struct gs_tenancy *t, const struct gang *g, int32_t user,
                              size_t *first)
{
    int32_t need = 0;
    for (size_t k = g->members.n; k-- > 0;) {
        const struct rpod *o = &t->pods[g->members.v[k]];
        if (o->state == GS_POD_PENDING && o->arrived && o->sp->user[0] && o->user == user) {
            need++;
            *first = k;
        }
    }
    return need;
}

/* The words for gang @g held by @user's maxPodsPerUser, the user's count as it is now; none
 * when no waiting member is the user's any more. */
static void gang_user_words(const struct gs_tenancy *t, const struct gang *g, int32_t user,
                            char *why, size_t size)
{
    size_t first = 0;
    int32_t need = gang_user_need(t, g, user, &first);
    if (!need)
        return;
    const struct rpod *m = &t->pods[g->members.v[first]];
    const struct gs_tenant_spec *ts = &t->pol->tenants[m->tenant];
    gs__say(why, size,
            "tenant %s: user %s has %d pods running, the gang needs %d more (maxPodsPerUser %d)",
            ts->name, m->sp->user, t->user_running[user], need, ts->max_pods_per_user);
}

/* What gs__tn_settle_reason() says but for the free cards. */
static void settle(struct gs_tenancy *t, struct rpod *p)
{
    const struct gang *g = p->group >= 0 ? &t->gangs[p->group] : NULL;
    if (g && g->capped >= 0 && t->user_running[g->capped] != g->capped_at &&
        p->said <= g->capped_said) /* another of the user's pods came or went */
        gang_user_words(t, g, g->capped, p->reason, sizeof(p->reason));
    const struct bucket *b = &t->buckets[p->bucket];
    if (b->failed_at <= p->said) /* (a bucket that never failed has none of these) */
        return;
    int32_t fg = b->failed_group;
    if (fg >= 0 && t->gangs[fg].gen != b->failed_gen)
        fg = -1;                         /* its PodGroup was deleted */
    if (p->group >= 0 && fg != p->group) /* another gang's words would mislead */
        gs__say(p->reason, sizeof(p->reason),
                "gang %s: not tried while gang %s, alike, could not be placed (%s)", p->sp->group,
                fg >= 0 ? t->pgs[fg]->name : "(deleted)", b->reason);
    else
        gs__reason_copy(p->reason, b->reason);
}

void gs__tn_settle_reason(struct gs_tenancy *t, int32_t pod)
{
    struct rpod *p = &t->pods[pod];
    if (p->state != GS_POD_PENDING || p->bucket < 0)
        return;
    settle(t, p);
    gs__tn_recount_thin(t, p);
}

int gs__tn_hungrier(const struct gs_tenancy *t, size_t a, size_t b, int ties)
{
    gs_i128 l = (gs_i128)t->q_used[a] * (t->q_deserved[b] + 1);
    gs_i128 r = (gs_i128)t->q_used[b] * (t->q_deserved[a] + 1);
    return l < r || (ties && l == r && a < b);
}

/* Gang @g failed: its waiting members are not tried again until something frees. */
static void gang_failed(struct gs_tenancy *t, struct gang *g, const char *why)
{
    for (size_t i = 0; i < g->members.n; i++) {
        struct rpod *m = &t->pods[g->members.v[i]];
        if (m->state != GS_POD_PENDING || !m->arrived)
            continue;
        m->tried_epoch = t->epoch;
        m->tried_resv = 0;
        m->said = ++t->said;
        if (why)
            gs__reason_copy(m->reason, why);
    }
}

/* What user_at_limit() last said of @user, and at which count; NULL out of memory. */
static struct user_said *user_said(struct gs_tenancy *t, int32_t user)
{
    size_t cap = t->cap_user_said;
    if ((size_t)user >= cap) {
        struct user_said *v =
            gs_grow(t->user_said, &t->cap_user_said, (size_t)user + 1, sizeof(*v), 64);
        if (!v)
            return NULL;
        memset(v + cap, 0, (t->cap_user_said - cap) * sizeof(*v));
        t->user_said = v;
    }
    return &t->user_said[user];
}

/* Does @p's user run as many pods as its tenant's maxPodsPerUser lets it? */
static int user_full(const struct gs_tenancy *t, const struct rpod *p)
{
    if (t->way != GS_WAY_FULL || (size_t)p->tenant >= t->pol->ntenants)
        return 0;
    const struct gs_tenant_spec *ts = &t->pol->tenants[p->tenant];
    /* A pod without a `user` label is nobody's: no user's limit counts it. */
    return ts->max_pods_per_user != GS_UNSET && p->sp->user[0] &&
           t->user_running[p->user] >= ts->max_pods_per_user;
}

/* maxPodsPerUser, checked on its own: pods alike but for their user share a bucket. */
static int user_at_limit(struct gs_tenancy *t, struct rpod *p)
{
    if (!user_full(t, p))
        return 0;
    const struct gs_tenant_spec *ts = &t->pol->tenants[p->tenant];
    /* A user's pods at its limit are tried pass after pass: the words are made once per count
     * (a user id names one tenant and user, so they are the same for all its pods). */
    struct user_said *u = user_said(t, p->user);
    if (u && u->running == t->user_running[p->user] + 1) {
        gs__reason_copy(p->reason, u->reason);
        return 1;
    }
    gs__say(p->reason, sizeof(p->reason),
            "tenant %s: user %s has %d pods running (maxPodsPerUser %d)", ts->name,
            p->sp->user[0] ? p->sp->user : "(none)", t->user_running[p->user],
            ts->max_pods_per_user);
    if (u) {
        u->running = t->user_running[p->user] + 1;
        gs__reason_copy(u->reason, p->reason);
    }
    return 1;
}

/* maxPodsPerUser for a gang's waiting members together; the reason goes to every one. */
static int gang_users_at_limit(struct gs_tenancy *t, struct gang *g, struct rpod *p)
{
    g->capped = -1;
    if (t->way != GS_WAY_FULL || (size_t)p->tenant >= t->pol->ntenants)
        return 0;
    const struct gs_tenant_spec *ts = &t->pol->tenants[p->tenant];
    if (ts->max_pods_per_user == GS_UNSET)
        return 0;
    for (size_t i = 0; i < g->members.n; i++) {
        struct rpod *m = &t->pods[g->members.v[i]];
        if (m->state != GS_POD_PENDING || !m->arrived || !m->sp->user[0])
            continue;
        size_t first = i;
        int32_t need = gang_user_need(t, g, m->user, &first);
        if (first < i) /* that user was counted at its first member */
            continue;
        if (t->user_running[m->user] + need > ts->max_pods_per_user) {
            char why[GS_REASON_MAX];
            gang_user_words(t, g, m->user, why, sizeof(why));
            gang_failed(t, g, why);
            g->capped = m->user;
            g->capped_at = t->user_running[m->user];
            g->capped_said = t->said;
            return 1;
        }
    }
    return 0;
}

/* Does gang @g wait whole (no member running, every member arrived)? Its failure then stands
 * for every gang of its bucket; a gang part-way there fails for itself only. */
static int gang_whole(const struct gs_tenancy *t, const struct gang *g)
{
    if (g->running)
        return 0;
    for (size_t i = 0; i < g->members.n; i++) {
        const struct rpod *m = &t->pods[g->members.v[i]];
        if (m->state != GS_POD_PENDING || !m->arrived)
            return 0;
    }
    return 1;
}

/* Try @pod (of bucket @b): 0 done (placed or failed), < 0 error. */
static int try_pod(struct gs_tenancy *t, int32_t pod, struct bucket *b)
{
    struct rpod *p = &t->pods[pod];
    int capacity = 0, r, general, was_late = gs__tn_late(t, p);
    uint64_t held_before = t->held_hits;
    if (p->group >= 0 && gs__tn_gang_lacking(t, p->group) > 0) {
        struct gang *g = &t->gangs[p->group];
        if (gang_users_at_limit(t, g, p))
            return 0;
        general = gang_whole(t, g);
        r = gs__tn_place_gang(t, p->group, &capacity);
        if (r > 0)
            gang_failed(t, g, NULL);
        general &= capacity; /* "minMember not submitted" is this gang's own */
    } else {
        if (user_at_limit(t, p)) {
            fail(t, b, p, 0, was_late, held_before);
            return 0;
        }
        struct txn *x = &t->txn_pod;
        x->bound.n = x->evicted.n = 0;
        r = gs__tn_place_one(t, pod, x, -1, &capacity);
        if (r == 0)
            r = gs__tn_commit(t, x, pod);
        general = p->group < 0; /* a member of a running gang fails for itself */
    }
    if (r <= 0)
        return r;
    fail(t, b, p, general, was_late, held_before);
    /* The head's promise is made again when it fails: what it was counted from may be gone. */
    if (capacity && p->group < 0 &&
        (t->head < 0 || pod == t->head || p->level < t->pods[t->head].level))
        return gs__tn_reserve_for(t, pod);
    return 0;
}

/* Put the next candidate of every listed bucket of @list in @h (emptied first). */
static int fill(struct gs_tenancy *t, size_t list, struct qheap *h, int fresh)
{
    struct vec *lv = &t->blists[list];
    size_t w = 0;
    h->n = 0;
    for (size_t i = 0; i < lv->n; i++) {
        struct bucket *b = &t->buckets[lv->v[i]];
        if (fresh) {
            tidy(t, b);
            b->cur = b->start;
            if (b->pods.n == 0) {
                b->listed = 0;
                continue;
            }
        }
        lv->v[w++] = lv->v[i];
        int32_t c = candidate(t, b);
        if (c >= 0 && qh_push(&h->v, &h->n, &h->cap,
                              (struct centry){t->pods[c].submit, t->pods[c].seq, c, lv->v[i]}) < 0)
            return -ENOMEM;
    }
    lv->n = w;
    return 0;
}

static int level_pass(struct gs_tenancy *t, size_t l)
{
    size_t nq = t->nqueues;
    int r = 0;
    for (size_t q = 0; q < nq && r == 0; q++)
        r = fill(t, l * nq + q, &t->qheaps[q], 1);
    while (r == 0) {
        size_t q = nq;
        for (size_t i = 0; i < nq; i++)
            if (t->qheaps[i].n && (q == nq || gs__tn_hungrier(t, i, q, 1)))
                q = i;
        if (q == nq)
            break;
        struct centry e = qh_pop(t->qheaps[q].v, &t->qheaps[q].n);
        struct bucket *b = &t->buckets[e.bucket];
        int32_t c = candidate(t, b);
        if (c != e.pod) { /* the bucket moved on since: requeue what it offers now */
            if (c >= 0)
                r = qh_push(&t->qheaps[q].v, &t->qheaps[q].n, &t->qheaps[q].cap,
                            (struct centry){t->pods[c].submit, t->pods[c].seq, c, e.bucket});
            continue;
        }
        uint64_t epoch = t->epoch;
        int32_t head = t->head;
        r = try_pod(t, c, b);
        t->work.tries++;
        if (r < 0)
            break;
        /* Evictions freed room, or the head ran and its node is held no more: every bucket may
         * try again, and after the head's, the pods it held back go again from the first. */
        /* A failed attempt rolled its trial binds back: the promised node is as it was, and
         * renewing the promise would make the same attempt look new again, for ever. */
        int changed = t->pods[c].state != GS_POD_PENDING || t->epoch != epoch;
        if (t->resv_stale && changed && t->head >= 0 && t->head == head) { /* outside attempts */
            t->resv_stale = 0;
            if ((r = gs__tn_reserve_for(t, head)) < 0)
                break;
        }
        t->resv_stale = 0;
        int unheld = head >= 0 && t->head < 0;
        if (t->epoch != epoch || unheld) {
            for (size_t i = 0; i < nq && r == 0; i++)
                r = fill(t, l * nq + i, &t->qheaps[i], unheld);
            continue;
        }
        if ((c = candidate(t, b)) >= 0)
            r = qh_push(&t->qheaps[q].v, &t->qheaps[q].n, &t->qheaps[q].cap,
                        (struct centry){t->pods[c].submit, t->pods[c].seq, c, e.bucket});
    }
    return r;
}

/*
 * What a preemption freed goes first to pods waiting at a higher priority than the preemptor's
 * (a class that may not preempt, say): kube-scheduler's queue pops them first, and a pod of
 * higher priority does not count a lower one's nominated node as taken (DefaultPreemption,
 * kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption). Gang members wait
 * for their gang. A bucket's pods fail alike, so a bucket is left at its first pod that does not
 * fit (unless a reservation was what stood in the way: a shorter pod may still fit). The pods
 * tried keep the reasons they had. O(buckets above @level) searches of one node.
 */
int gs__tn_serve_higher(struct gs_tenancy *t, int32_t level, size_t node, struct txn *x)
{
    int served = 0, r = 0;
    char why[GS_REASON_MAX];
    for (size_t list = 0; list < (size_t)level * t->nqueues && r >= 0; list++)
        for (size_t i = 0; i < t->blists[list].n && r >= 0; i++) {
            struct bucket *b = &t->buckets[t->blists[list].v[i]];
            for (size_t k = b->start; k < b->pods.n; k++) {
                int32_t pod = b->pods.v[k];
                struct rpod *p = &t->pods[pod];
                if (p->state != GS_POD_PENDING || !here(t, b, pod) || !p->arrived ||
                    user_full(t, p))
                    continue;
                if (p->group >= 0)
                    break;
                size_t n;
                uint32_t mask;
                int cap;
                uint64_t held = t->held_hits;
                gs__reason_copy(why, p->reason);
                r = gs__tn_find(t, pod, (int)node, x, &n, &mask, &cap);
                gs__reason_copy(p->reason, why);
                if (r == 0 && (r = gs__tn_bind(t, pod, n, mask, x)) >= 0)
                    served++;
                else if (r < 0 || t->held_hits == held)
                    break;
            }
        }
    return r < 0 ? -ENOMEM : served;
}

/*
 * Did victims appear that failed pods have not met: a reclaimable queue further past its
 * deserved share, or a member of an elastic gang past its minMember, since the last look? Binds
 * make them without freeing anything (a queue that borrows more makes its older pods
 * reclaimable), so the release epoch alone would try those pods only once something frees, and
 * a restarted scheduler, trying every pod afresh, would decide otherwise. Pods whose victim
 * search backs off then try once the back-off has passed (gs__tn_retry_due()). Only the full way
 * evicts; reclaim matters only while a queue below its share has pods waiting. O(queues).
 */
static int victims_new(struct gs_tenancy *t)
{
    int more = t->extras_gen != t->extras_seen, over_more = 0, hungry = 0;
    t->extras_seen = t->extras_gen;
    for (size_t q = 0; q < t->nqueues; q++) {
        int64_t over = t->q_used[q] - t->q_deserved[q];
        over = over > 0 && gs__tn_reclaimable(t, (int32_t)q) ? over : 0;
        over_more |= over > t->q_over[q];
        t->q_over[q] = over;
        hungry |= t->q_used[q] < t->q_deserved[q] && t->q_demand[q] > t->q_used[q];
    }
    more = t->way == GS_WAY_FULL && (more || (over_more && hungry));
    return more;
}

int gs__tn_retry_due(struct gs_tenancy *t)
{
    if (t->retry_at > t->now)
        return 0;
    t->retry_at = INT64_MAX;
    t->epoch++;
    return 1;
}

int gs__tn_pass(struct gs_tenancy *t)
{
    if (!t->qheaps && !(t->qheaps = gs__zalloc(t->nqueues, sizeof(*t->qheaps))))
        return -ENOMEM;
    gs__tn_deserve(t);
    if (t->head >= 0 && t->pods[t->head].state != GS_POD_PENDING) {
        t->head = -1;
        t->resv_gen++;
    }
    int r = rebucket(t);
    t->work.passes++;
    /* A round that made victims is followed by one that tries the pods they may serve; a few
     * at most, the rest for the next pass (the epoch has moved on: there will be one). */
    for (int round = 0; r == 0 && round < GS_VICTIM_ROUNDS; round++) {
        if (round > 0 && !victims_new(t))
            break;
        if (round > 0 || victims_new(t))
            t->epoch++;
        for (size_t l = 0; l < t->nlevels && r == 0; l++)
            r = level_pass(t, l);
        r = r ? r : rebucket(t);
    }
    return r;
}

void gs__tn_queue_free(struct gs_tenancy *t)
{
    for (size_t i = 0; i < t->nbuckets; i++)
        free(t->buckets[i].pods.v);
    for (size_t i = 0; t->blists && i < t->nlevels * t->nqueues; i++)
        free(t->blists[i].v);
    for (size_t i = 0; t->qheaps && i < t->nqueues; i++)
        free(t->qheaps[i].v);
    free(t->buckets);
    free(t->btable);
    free(t->blists);
    free(t->qheaps);
}
