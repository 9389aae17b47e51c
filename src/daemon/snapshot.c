/*
 * gpuschedd: snapshots for reads (snapshot.h). The scheduler thread publishes one after each
 * batch; readers hold one as long as they render from it.
 *
 * Publishing: the pods touched since the last publish get a new view when what they show changed
 * (their old view is retired); the chunks of views are the last ones, those holding a view
 * replaced or gone copied with it changed, the new pods appended (they arrive last); the chunks
 * of node records are the last ones, those of the nodes a touched pod left or joined, or whose
 * health changed, copied and made again. The views and chunks retired go with the snapshot they
 * were last part of, and are freed once it and every older one are released.
 */
#include "snapshot.h"
#include "accounts.h"
#include "forecast.h"
#include "log.h"
#include "nodes.h"
#include "queue.h"
#include "sched.h"

#include "gpusched/diag.h"
#include "gpusched/grow.h"
#include "gpusched/scenario.h"
#include "gpusched/tenancy.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BILLS_WANTED_US                                                                            \
    (300 * 1000000LL) /* bills go on being read this long after a reader asked */

struct gsd_snaps {
    pthread_mutex_t mu; /* current, oldest and every snapshot's refs */
    struct gsd_snap *current, *oldest;
    _Atomic int64_t bills_until_us;    /* monotonic: read the bills into snapshots until then */
    _Atomic int64_t forecast_until_us; /* the forecast too (only once a scrape asked: it is
                                        * fitted on the ledger as it is when first asked) */
    void (*wake)(void *ud);            /* gsd_snap_set_wake()'s, NULL none */
    void *wake_ud;
    /* the nodes' names (owned copies), models and cards: the inventory's; a node added makes
     * the arrays anew (gsd_snap_nodes()), the old ones kept for the snapshots that use them */
    const char **names;
    int *models, *gpus;
    size_t nnames;
    void **retired_arrays;
    size_t nretired_arrays;
    /* the scheduler thread's, between publishes */
    uint64_t gen;
    struct gsd_pod **touched;
    size_t ntouched, cap;
    int all;                     /* every pod is touched */
    struct gsd_podview *retired; /* views retired since the last publish */
    uint8_t *mark;               /* per node: its record is made again */
    size_t *marked, nmarked;     /* those nodes, each once */
    int verify;                  /* GPUSCHEDD_VERIFY_SNAPSHOTS: check untouched pods at publish */
    struct gsd_hist publish_lat; /* the scheduler thread's time making snapshots */
};

static void snaps_free(struct gsd_snaps *s)
{
    free(s->touched);
    free(s->mark);
    free(s->marked);
    for (size_t i = 0; s->names && i < s->nnames; i++)
        free((char *)s->names[i]);
    free(s->names);
    free(s->models);
    free(s->gpus);
    for (size_t i = 0; i < s->nretired_arrays; i++)
        free(s->retired_arrays[i]);
    free(s->retired_arrays);
    free(s);
}

/* Node @i's name, model and cards from the inventory into @s's arrays. Return: 0; -ENOMEM. */
static int node_fill(struct gsd_snaps *s, const struct gsd_state *st, size_t i)
{
    struct gs_node_info ni;
    gs_cluster_node_info(st->cluster, i, &ni);
    s->names[i] = strdup(ni.name);
    s->models[i] = ni.model;
    s->gpus[i] = ni.gpus;
    return s->names[i] ? 0 : -ENOMEM;
}

/* Whether node @i's model or cards in @s are no longer the inventory's (gsd_state_reshape_node()).
 */
static int node_moved(const struct gsd_snaps *s, const struct gsd_state *st, size_t i)
{
    struct gs_node_info ni;
    gs_cluster_node_info(st->cluster, i, &ni);
    return s->models[i] != ni.model || s->gpus[i] != ni.gpus;
}

int gsd_snap_nodes(struct gsd_state *st)
{
    struct gsd_snaps *s = st->snaps;
    size_t n = gs_cluster_node_count(st->cluster), moved = 0;
    for (size_t i = 0; s && i < s->nnames && i < n; i++)
        moved += (size_t)node_moved(s, st, i);
    if (!s || (n <= s->nnames && !moved))
        return 0;
    const char **names = calloc(n, sizeof(*names));
    int *models = calloc(n, sizeof(int)), *gpus = calloc(n, sizeof(int));
    uint8_t *mark = realloc(s->mark, n);
    size_t *marked = realloc(s->marked, n * sizeof(*marked));
    void **ret = realloc(s->retired_arrays, (s->nretired_arrays + 3) * sizeof(void *));
    s->mark = mark ? mark : s->mark;
    s->marked = marked ? marked : s->marked;
    s->retired_arrays = ret ? ret : s->retired_arrays;
    if (!names || !models || !gpus || !mark || !marked || !ret) {
        free(names);
        free(models);
        free(gpus);
        return -ENOMEM;
    }
    memcpy(names, s->names, s->nnames * sizeof(*names));
    memcpy(models, s->models, s->nnames * sizeof(int));
    memcpy(gpus, s->gpus, s->nnames * sizeof(int));
    ret[s->nretired_arrays++] = (void *)s->names; /* published snapshots still read them */
    ret[s->nretired_arrays++] = s->models;
    ret[s->nretired_arrays++] = s->gpus;
    s->names = names;
    s->models = models;
    s->gpus = gpus;
    for (size_t i = 0; moved && i < s->nnames; i++)
        if (node_moved(s, st, i)) { /* its name stays; its model, cards and record anew */
            struct gs_node_info ni;
            gs_cluster_node_info(st->cluster, i, &ni);
            models[i] = ni.model;
            gpus[i] = ni.gpus;
            if (!mark[i]) {
                mark[i] = 1;
                s->marked[s->nmarked++] = i;
            }
        }
    int rc = 0;
    for (size_t i = s->nnames; i < n && !rc; i++) {
        if ((rc = node_fill(s, st, i)) != 0)
            break;
        s->nnames++;
        mark[i] = 1;
        s->marked[s->nmarked++] = i;
    }
    return rc;
}

int gsd_snap_init(struct gsd_state *st)
{
    struct gsd_snaps *s = calloc(1, sizeof(*s));
    size_t n = gs_cluster_node_count(st->cluster), m = n ? n : 1;
    if (!s || !(s->mark = calloc(m, 1)) || !(s->marked = calloc(m, sizeof(*s->marked))) ||
        !(s->names = calloc(m, sizeof(*s->names))) || !(s->models = calloc(m, sizeof(int))) ||
        !(s->gpus = calloc(m, sizeof(int)))) {
        if (s)
            snaps_free(s);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        if (node_fill(s, st, i)) {
            snaps_free(s);
            return -ENOMEM;
        }
        s->nnames++;
        s->mark[i] = 1; /* the first publish makes every record */
        s->marked[s->nmarked++] = i;
    }
    pthread_mutex_init(&s->mu, NULL);
    s->all = 1; /* the first publish makes every view */
    s->publish_lat = (struct gsd_hist){st->commit_lat.bounds, st->commit_lat.n, {0}, 0, 0};
    if (st->cfg->metrics.has_token) /* Prometheus will scrape: its first scrape has the bills */
        gsd_snap_want_bills(s);
    s->verify = getenv("GPUSCHEDD_VERIFY_SNAPSHOTS") != NULL;
    st->snaps = s;
    return 0;
}

void gsd_snap_touch(struct gsd_state *st, struct gsd_pod *p)
{
    struct gsd_snaps *s = st->snaps;
    if (!s || p->touched)
        return;
    if (s->ntouched == s->cap) {
        struct gsd_pod **m = gs_grow(s->touched, &s->cap, s->ntouched + 1, sizeof(*m), 256);
        if (!m) { /* no room to list it: make every view at the next publish instead */
            s->all = 1;
            return;
        }
        s->touched = m;
    }
    s->touched[s->ntouched++] = p;
    p->touched = s->ntouched;
}

void gsd_snap_node_touch(struct gsd_state *st, size_t i)
{
    struct gsd_snaps *s = st->snaps;
    if (!s || i >= s->nnames || s->mark[i])
        return;
    s->mark[i] = 1;
    s->marked[s->nmarked++] = i;
}

void gsd_snap_touch_all(struct gsd_state *st)
{
    if (st->snaps)
        st->snaps->all = 1;
}

static void retire(struct gsd_snaps *s, struct gsd_podview *v, struct gsd_podview *by)
{
    v->retired = 1;
    v->replaced_by = by;
    v->retired_next = s->retired;
    s->retired = v;
}

void gsd_snap_forget(struct gsd_state *st, struct gsd_pod *p)
{
    struct gsd_snaps *s = st->snaps;
    if (!s)
        return;
    if (p->touched)
        s->touched[p->touched - 1] = NULL;
    p->touched = 0;
    if (p->view) { /* the cards it held are free now */
        if (p->view->running && p->view->node >= 0)
            gsd_snap_node_touch(st, (size_t)p->view->node);
        retire(s, p->view, NULL);
    }
    p->view = NULL;
}

void gsd_snap_want_bills(struct gsd_snaps *s)
{
    int64_t now = gsd_mono_us();
    if (atomic_exchange(&s->bills_until_us, now + BILLS_WANTED_US) <= now && s->wake)
        s->wake(s->wake_ud); /* the snapshot in place has none: the reader waits for the next */
}

void gsd_snap_set_wake(struct gsd_snaps *s, void (*fn)(void *ud), void *ud)
{
    s->wake = fn;
    s->wake_ud = ud;
}

void gsd_snap_want_names(struct gsd_snaps *s)
{
    gsd_snap_want_bills(s);
    atomic_store(&s->forecast_until_us, gsd_mono_us() + BILLS_WANTED_US);
}

void gsd_podview_fill(const struct gsd_state *st, const struct gsd_pod *p, struct gsd_podview *v)
{
    int running = p->state == GSD_RUNNING;
    memset(v, 0, sizeof(*v));
    v->seq = p->seq;
    memcpy(v->ns, p->spec.ns, sizeof(v->ns));
    memcpy(v->name, p->spec.name, sizeof(v->name));
    memcpy(v->tenant, p->tenant, sizeof(v->tenant));
    memcpy(v->uid, p->uid, sizeof(v->uid));
    memcpy(v->queue, p->queue, sizeof(v->queue));
    memcpy(v->mig, p->mig, sizeof(v->mig));
    v->running = (uint8_t)running;
    v->allocated = (uint8_t)gsd_pod_allocated(p);
    v->extender = p->source == GSD_SRC_EXTENDER;
    v->node = running ? p->pl.node : -1;
    v->node_name = !running ? NULL
                   : st->snaps && (size_t)p->pl.node < st->snaps->nnames
                       ? st->snaps->names[p->pl.node] /* stable: the inventory may grow */
                       : gs_cluster_node_name(st->cluster, (size_t)p->pl.node);
    v->cards = running ? p->pl.gpu_mask : 0;
    v->card_milli = running && p->pl.gpu_mask ? p->pl.gpu_milli : 0;
    v->mig_start = running ? p->mig_start : 0;
    v->share_milli = p->milli;
    v->req = p->req;
    v->gpumem_mib = p->gpumem_mib;
    v->gpucores = p->gpucores;
    v->priority = p->priority;
    v->why = running ? NULL : p->why;
    v->reason = !running        ? gsd_reason(p)
                : !v->allocated ? ""
                : p->grp && p->grp->short_us
                    ? "allocated: its cards are held, its gang waits for a member to replace one "
                      "deleted (extender.shortGangHoldSeconds)"
                    : "allocated: its cards are held until kube-scheduler binds it";
    v->meta = p->meta;
    v->submit_us = p->submit_us;
    v->start_us = p->start_us;
    v->evictions = p->evictions;
    v->last_eviction = p->last_eviction ? p->last_eviction : "";
    v->last_eviction_us = p->last_eviction_us;
}

static int str_eq(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Whether two views show the same (their bookkeeping aside). */
static int view_eq(const struct gsd_podview *a, const struct gsd_podview *b)
{
    return a->seq == b->seq && !strcmp(a->ns, b->ns) && !strcmp(a->name, b->name) &&
           !strcmp(a->tenant, b->tenant) && !strcmp(a->uid, b->uid) &&
           !strcmp(a->queue, b->queue) && !strcmp(a->mig, b->mig) && a->running == b->running &&
           a->allocated == b->allocated && a->extender == b->extender && a->node == b->node &&
           a->cards == b->cards && a->card_milli == b->card_milli && a->mig_start == b->mig_start &&
           a->share_milli == b->share_milli && a->req.cpu_milli == b->req.cpu_milli &&
           a->req.memory_mib == b->req.memory_mib && a->req.num_gpu == b->req.num_gpu &&
           a->req.gpu_milli == b->req.gpu_milli && a->req.model_mask == b->req.model_mask &&
           a->gpumem_mib == b->gpumem_mib && a->gpucores == b->gpucores &&
           a->priority == b->priority && str_eq(a->why, b->why) && str_eq(a->reason, b->reason) &&
           str_eq(a->meta, b->meta) && a->submit_us == b->submit_us && a->start_us == b->start_us &&
           a->evictions == b->evictions && str_eq(a->last_eviction, b->last_eviction) &&
           a->last_eviction_us == b->last_eviction_us;
}

struct gsd_podview *gsd_podview_dup(const struct gsd_podview *v)
{
    size_t lr = strlen(v->reason) + 1, lm = v->meta ? strlen(v->meta) + 1 : 0;
    size_t le = strlen(v->last_eviction) + 1;
    struct gsd_podview *d = malloc(sizeof(*d) + lr + lm + le);
    if (!d)
        return NULL;
    *d = *v;
    char *text = (char *)(d + 1);
    memcpy(text, v->reason, lr);
    d->reason = text;
    d->last_eviction = memcpy(text + lr, v->last_eviction, le);
    d->meta = v->meta ? memcpy(text + lr + le, v->meta, lm) : NULL;
    d->retired_next = d->replaced_by = NULL;
    d->retired = 0;
    atomic_init(&d->text, NULL);
    return d;
}

static void view_free(struct gsd_podview *v)
{
    free(atomic_load(&v->text));
    free(v);
}

static void views_free(struct gsd_podview *v)
{
    while (v) {
        struct gsd_podview *next = v->retired_next;
        view_free(v);
        v = next;
    }
}

const char *gsd_podview_text(const struct gsd_podview *v)
{
    struct gsd_podview *w = (struct gsd_podview *)v; /* the cache is the one field that changes */
    char *text = atomic_load(&w->text), *none = NULL;
    if (text)
        return text;
    text = gsd_podview_dumps(v);
    if (text && !atomic_compare_exchange_strong(&w->text, &none, text)) {
        free(text); /* another reader made it first */
        text = none;
    }
    return text;
}

static void snap_free(struct gsd_snap *n)
{
    views_free(n->garbage);
    for (struct gsd_podchunk *c = n->pgarbage, *next; c; c = next) {
        next = c->retired_next;
        free(c);
    }
    for (struct gsd_nodechunk *c = n->ngarbage, *next; c; c = next) {
        next = c->retired_next;
        free(c);
    }
    free(n->pchunk);
    free(n->nchunk);
    gsd_config_free(n->cfg);
    json_decref(n->bills);
    free(n->forecast);
    free(n->quse);
    free(n->rq_used);
    free(n->queues);
    free(n);
}

/* Free the snapshots no one holds from the oldest on, up to the first one held (the current one
 * is held by being current). Called with s->mu held; returns them linked by ->newer. */
static struct gsd_snap *unlink_released(struct gsd_snaps *s)
{
    struct gsd_snap *head = NULL, **tail = &head;
    while (s->oldest && s->oldest != s->current && s->oldest->refs == 0) {
        struct gsd_snap *n = s->oldest;
        s->oldest = n->newer;
        n->newer = NULL;
        *tail = n;
        tail = &n->newer;
    }
    return head;
}

static void free_list(struct gsd_snap *n)
{
    while (n) {
        struct gsd_snap *next = n->newer;
        snap_free(n);
        n = next;
    }
}

const struct gsd_snap *gsd_snap_get(struct gsd_snaps *s)
{
    pthread_mutex_lock(&s->mu);
    struct gsd_snap *n = s->current;
    if (n)
        n->refs++;
    pthread_mutex_unlock(&s->mu);
    return n;
}

void gsd_snap_put(struct gsd_snaps *s, const struct gsd_snap *snap)
{
    if (!snap)
        return;
    pthread_mutex_lock(&s->mu);
    ((struct gsd_snap *)snap)->refs--;
    struct gsd_snap *gone = unlink_released(s);
    pthread_mutex_unlock(&s->mu);
    free_list(gone);
}

static int by_seq(const void *a, const void *b)
{
    int64_t x = (*(const struct gsd_podview *const *)a)->seq;
    int64_t y = (*(const struct gsd_podview *const *)b)->seq;
    return x < y ? -1 : x > y;
}

/* Mark the node running view @v is on. */
static void mark_node(struct gsd_state *st, const struct gsd_podview *v)
{
    if (v && v->running && v->node >= 0)
        gsd_snap_node_touch(st, (size_t)v->node);
}

/*
 * New views for the pods touched: into *@fresh (the pods without one before, @nfresh of them);
 * others replace theirs in place (retire(..., new)). Return: 0; -ENOMEM (nothing changed).
 */
static int make_views(struct gsd_state *st, struct gsd_podview ***fresh, size_t *nfresh)
{
    struct gsd_snaps *s = st->snaps;
    size_t n = s->ntouched;
    if (s->all) {
        n = 0;
        for (struct gsd_pod *p = st->head; p; p = p->next)
            n++;
    }
    struct gsd_podview **made = malloc((n ? n : 1) * sizeof(*made));
    struct gsd_pod **of = malloc((n ? n : 1) * sizeof(*of));
    size_t k = 0;
    int rc = made && of ? 0 : -ENOMEM;
    struct gsd_pod *walk = st->head;
    for (size_t i = 0; !rc && i < n; i++) {
        struct gsd_pod *p = s->all ? walk : s->touched[i];
        walk = s->all ? walk->next : walk;
        struct gsd_podview v;
        if (!p)
            continue;
        gsd_podview_fill(st, p, &v);
        if (p->view && view_eq(p->view, &v))
            continue;
        of[k] = p;
        made[k] = gsd_podview_dup(&v);
        rc = made[k++] ? 0 : -ENOMEM;
    }
    if (rc) { /* undo: nothing changes */
        for (size_t i = 0; made && i < k; i++)
            view_free(made[i]);
        free(made);
        free(of);
        return rc;
    }
    *nfresh = 0;
    for (size_t i = 0; i < k; i++) {
        struct gsd_pod *p = of[i];
        mark_node(st, p->view);
        mark_node(st, made[i]);
        if (p->view)
            retire(s, p->view, made[i]);
        else
            made[(*nfresh)++] = made[i];
        p->view = made[i];
    }
    free(of);
    qsort(made, *nfresh, sizeof(*made), by_seq);
    *fresh = made;
    return 0;
}

/* What a publish under way made and replaced: undone if it fails, retired if it succeeds. */
struct build {
    uint64_t gen; /* the snapshot's: chunks of this gen are its own, still writable */
    struct gsd_podchunk *pdrop;
    struct gsd_nodechunk *ndrop;
};

struct gsd_snap_it gsd_snap_from(const struct gsd_snap *n, int64_t seq)
{
    size_t lo = 0, hi = n->npchunks; /* the first chunk whose last pod is at @seq or after */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct gsd_podchunk *c = n->pchunk[mid];
        if (c->v[c->n - 1]->seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    struct gsd_snap_it it = {lo, 0};
    if (lo == n->npchunks)
        return it;
    const struct gsd_podchunk *c = n->pchunk[lo];
    size_t l = 0, h = c->n;
    while (l < h) {
        size_t mid = l + (h - l) / 2;
        if (c->v[mid]->seq < seq)
            l = mid + 1;
        else
            h = mid;
    }
    it.k = l;
    return it;
}

/* Pod chunk @i of @n, made writable (a copy of the published one, which is dropped). */
static struct gsd_podchunk *pod_chunk_own(struct gsd_snap *n, size_t i, struct build *b)
{
    struct gsd_podchunk *c = n->pchunk[i];
    if (c->gen == b->gen)
        return c;
    struct gsd_podchunk *d = malloc(sizeof(*d));
    if (!d)
        return NULL;
    memcpy(d, c, offsetof(struct gsd_podchunk, v) + c->n * sizeof(c->v[0]));
    d->gen = b->gen;
    c->retired_next = b->pdrop;
    b->pdrop = c;
    return n->pchunk[i] = d;
}

/* The view that stands for @v now: the last one replacing it; NULL when its pod is gone. */
static const struct gsd_podview *final_view(const struct gsd_podview *v)
{
    while (v && v->retired)
        v = v->replaced_by;
    return v;
}

/* Each retired view's place in @n: its replacement, or left to be dropped by compact(). */
static int replace_retired(struct gsd_snaps *s, struct gsd_snap *n, struct build *b)
{
    for (const struct gsd_podview *r = s->retired; r; r = r->retired_next) {
        struct gsd_snap_it it = gsd_snap_from(n, r->seq);
        if (it.c == n->npchunks || n->pchunk[it.c]->v[it.k]->seq != r->seq)
            continue; /* never published */
        const struct gsd_podview *q = n->pchunk[it.c]->v[it.k], *f = final_view(q);
        if (!q->retired) /* replaced already */
            continue;
        struct gsd_podchunk *c = pod_chunk_own(n, it.c, b);
        if (!c)
            return -ENOMEM;
        if (!f) /* gone: compact() drops it */
            continue;
        c->v[it.k] = f;
        n->nrunning += f->running;
        n->nrunning -= q->running;
    }
    return 0;
}

/* New chunks at the end of @n for @v[0..@k) (arriving after every pod of @n). */
static int append(struct gsd_snap *n, const struct gsd_podview *const *v, size_t k, struct build *b)
{
    for (size_t i = 0; i < k;) {
        struct gsd_podchunk *c = NULL;
        if (n->npchunks && n->pchunk[n->npchunks - 1]->n < GSD_POD_CHUNK)
            c = pod_chunk_own(n, n->npchunks - 1, b);
        else if ((c = malloc(sizeof(*c))) != NULL) {
            c->n = 0;
            c->gen = b->gen;
            n->pchunk[n->npchunks++] = c;
        }
        if (!c)
            return -ENOMEM;
        for (; i < k && c->n < GSD_POD_CHUNK; i++) {
            c->v[c->n++] = v[i];
            n->nrunning += v[i]->running;
        }
    }
    return 0;
}

/* Drop the gone pods' views (retired, replaced by none) from @n's own chunks, and the chunks
 * left empty. */
static void compact(struct gsd_snap *n, struct build *b)
{
    size_t w = 0;
    for (size_t i = 0; i < n->npchunks; i++) {
        struct gsd_podchunk *c = n->pchunk[i];
        if (c->gen == b->gen) {
            size_t k = 0;
            for (size_t j = 0; j < c->n; j++)
                if (!c->v[j]->retired)
                    c->v[k++] = c->v[j];
                else
                    n->nrunning -= c->v[j]->running;
            c->n = k;
        }
        if (c->n)
            n->pchunk[w++] = c;
        else
            free(c); /* its own: never published */
    }
    n->npchunks = w;
}

/* Every chunk of @n made again, full, from its pods and @fresh merged in by arrival order: when
 * new pods arrive out of order, or the chunks have thinned. Return: 0; -ENOMEM. */
static int repack(struct gsd_snap *n, struct gsd_podview **fresh, size_t nfresh, struct build *b)
{
    size_t total = nfresh;
    for (size_t i = 0; i < n->npchunks; i++)
        total += n->pchunk[i]->n;
    const struct gsd_podview **all = malloc((total ? total : 1) * sizeof(*all));
    struct gsd_podchunk **was = malloc((n->npchunks ? n->npchunks : 1) * sizeof(*was));
    size_t k = 0, j = 0, nwas = n->npchunks;
    if (!all || !was) {
        free(all);
        free(was);
        return -ENOMEM;
    }
    memcpy(was, n->pchunk, nwas * sizeof(*was));
    for (size_t i = 0; i < nwas; i++)
        for (size_t m = 0; m < was[i]->n; m++) {
            for (; j < nfresh && fresh[j]->seq < was[i]->v[m]->seq; j++)
                all[k++] = fresh[j];
            all[k++] = was[i]->v[m];
        }
    while (j < nfresh)
        all[k++] = fresh[j++];
    size_t nrunning = n->nrunning;
    n->npchunks = 0; /* append() makes every chunk anew: none of @was is reused */
    n->nrunning = 0;
    int rc = append(n, all, k, b);
    for (size_t i = 0; i < nwas && !rc; i++)
        if (was[i]->gen == b->gen)
            free(was[i]);
        else {
            was[i]->retired_next = b->pdrop;
            b->pdrop = was[i];
        }
    if (rc) { /* put back what was */
        for (size_t i = 0; i < n->npchunks; i++)
            free(n->pchunk[i]);
        memcpy(n->pchunk, was, nwas * sizeof(*was));
        n->npchunks = nwas;
        n->nrunning = nrunning;
    }
    free(all);
    free(was);
    return rc;
}

/* @n's pods: @old's chunks, those with a view replaced or gone copied, @fresh (sorted by
 * arrival) appended. O(touched x log pods + chunks). Return: 0; -ENOMEM. */
static int merge_pods(struct gsd_snaps *s, struct gsd_snap *n, const struct gsd_snap *old,
                      struct gsd_podview **fresh, size_t nfresh, struct build *b)
{
    size_t nold = old ? old->npchunks : 0;
    n->pchunk = malloc((nold + nfresh / GSD_POD_CHUNK + 2) * sizeof(*n->pchunk));
    if (!n->pchunk)
        return -ENOMEM;
    if (nold)
        memcpy(n->pchunk, old->pchunk, nold * sizeof(*n->pchunk));
    n->npchunks = nold;
    n->nrunning = old ? old->nrunning : 0;
    int rc = replace_retired(s, n, b);
    if (!rc) {
        compact(n, b);
        const struct gsd_podchunk *last = n->npchunks ? n->pchunk[n->npchunks - 1] : NULL;
        size_t npods = 0;
        for (size_t i = 0; i < n->npchunks; i++)
            npods += n->pchunk[i]->n;
        if (nfresh && last && fresh[0]->seq < last->v[last->n - 1]->seq)
            rc = repack(n, fresh, nfresh, b);
        else if (n->npchunks > 2 * ((npods + nfresh) / GSD_POD_CHUNK) + 8)
            rc = repack(n, fresh, nfresh, b);
        else
            rc = append(n, (const struct gsd_podview *const *)fresh, nfresh, b);
    }
    n->npods = 0;
    for (size_t i = 0; i < n->npchunks; i++)
        n->npods += n->pchunk[i]->n;
    n->npending = n->npods - n->nrunning;
    return rc;
}

/* Node @i's record as it is now, into @nv. */
static void node_record(const struct gsd_state *st, size_t i, struct gsd_nodeview *nv)
{
    memset(nv, 0, sizeof(*nv));
    nv->health = st->health[i];
    for (int g = 0; g < st->snaps->gpus[i] && g < GS_GPUS_MAX; g++) {
        int32_t alloc, down;
        gsd_card_use(st, i, g, &alloc, &down);
        nv->alloc_milli[g] = (uint16_t)alloc;
        nv->down_milli[g] = (uint16_t)down;
    }
}

/* The nodes' records: @old's chunks, those of marked nodes copied and their records made
 * again. O(marked + chunks). Return: 0; -ENOMEM. */
static int make_nodes(struct gsd_state *st, struct gsd_snap *n, const struct gsd_snap *old,
                      struct build *b)
{
    struct gsd_snaps *s = st->snaps;
    size_t nc = (s->nnames + GSD_NODE_CHUNK - 1) / GSD_NODE_CHUNK;
    size_t oc = old ? (old->nnodes + GSD_NODE_CHUNK - 1) / GSD_NODE_CHUNK : 0;
    n->nnodes = s->nnames; /* the nodes the arrays published with it know */
    n->nchunk = calloc(nc ? nc : 1, sizeof(*n->nchunk));
    if (!n->nchunk)
        return -ENOMEM;
    if (oc)
        memcpy(n->nchunk, old->nchunk, (oc < nc ? oc : nc) * sizeof(*n->nchunk));
    for (size_t k = 0; k < s->nmarked; k++) {
        size_t c = s->marked[k] / GSD_NODE_CHUNK;
        struct gsd_nodechunk *was = n->nchunk[c];
        if (was && was->gen == b->gen)
            continue;
        struct gsd_nodechunk *d = malloc(sizeof(*d));
        if (!d)
            return -ENOMEM;
        if (was) {
            memcpy(d, was, sizeof(*d));
            was->retired_next = b->ndrop;
            b->ndrop = was;
        } else {
            memset(d, 0, sizeof(*d));
        }
        d->gen = b->gen;
        n->nchunk[c] = d;
    }
    return 0;
}

/* Fill the marked nodes' records (the publish can no longer fail). */
static void fill_nodes(struct gsd_state *st, struct gsd_snap *n)
{
    struct gsd_snaps *s = st->snaps;
    for (size_t k = 0; k < s->nmarked; k++) {
        size_t i = s->marked[k];
        node_record(st, i, &n->nchunk[i / GSD_NODE_CHUNK]->v[i % GSD_NODE_CHUNK]);
        s->mark[i] = 0;
    }
    s->nmarked = 0;
}

/* A failed publish: free what @n made, leave what it would have replaced. */
static void undo(struct gsd_snap *n, struct build *b)
{
    for (size_t i = 0; n->pchunk && i < n->npchunks; i++)
        if (n->pchunk[i]->gen == b->gen)
            free(n->pchunk[i]);
    for (size_t i = 0; n->nchunk && i * GSD_NODE_CHUNK < n->nnodes; i++)
        if (n->nchunk[i] && n->nchunk[i]->gen == b->gen)
            free(n->nchunk[i]);
    n->npchunks = 0;
    n->nnodes = 0;
}

/* Each config tenant's GPUQuota use per model, as the scheduler counts it, into @q. */
static void quota_use(const struct gsd_state *st, struct gsd_quota_use *q)
{
    for (size_t i = 0; i < st->cfg->ntenants; i++) {
        const struct gs_tenant_spec *ts = st->cfg->tenants[i].quota;
        int ti = gsd_sched_tenant(st, st->cfg->tenants[i].name);
        memset(&q[i], 0, sizeof(q[i]));
        for (int k = 0; ts && ti >= 0 && k < ts->nquotas; k++) {
            int m = ts->quotas[k].model;
            gs_tenancy_quota_used(st->sched.tn, (size_t)ti, m, &q[i].dedicated[m], &q[i].shared[m]);
        }
    }
}

/* Each queue's weight, deserved, allocated and pending share as the scheduler holds them, into
 * @n (the implicit `default` left out when a Queue document defines one). Return: 0; -ENOMEM. */
static int queue_views(const struct gsd_state *st, struct gsd_snap *n)
{
    const struct gs_policy *pol = &st->sched.pol;
    const struct gs_tenancy *tn = st->sched.tn;
    size_t nq = pol->nqueues;
    int shadowed = gsd_queue_find(st, "default") < (int)nq;
    n->queues = calloc(nq + 1, sizeof(*n->queues));
    if (!n->queues)
        return -ENOMEM;
    for (size_t i = 0; i <= nq && i < gs_tenancy_queue_count(tn); i++) {
        if (i == nq && shadowed)
            break;
        struct gsd_queueview *q = &n->queues[n->nqueues++];
        int64_t used = gs_tenancy_queue_milli(tn, i),
                pending = gs_tenancy_queue_demand(tn, i) - used;
        snprintf(q->name, sizeof(q->name), "%s", i < nq ? pol->queues[i].name : "default");
        q->weight = gs_tenancy_queue_weight(tn, i);
        q->deserved_milli = gs_tenancy_queue_deserved(tn, i);
        q->allocated_milli = used;
        q->pending_milli = pending > 0 ? pending : 0;
    }
    return 0;
}

/* The counters, histograms and quota use of @st into @n. */
static int copy_counts(struct gsd_state *st, struct gsd_snap *n)
{
    struct gsd_snaps *s = st->snaps;
    size_t nt = st->cfg->ntenants, nrq = st->cfg->quotas ? st->cfg->quotas->policy.nrquotas : 0;
    n->cfg = gsd_config_ref(st->cfg);
    n->started_us = st->started_us;
    n->taken_us = gsd_now_us();
    n->sched_lat = st->sched_lat;
    n->commit_lat = st->commit_lat;
    n->publish_lat = s->publish_lat;
    n->placed_total = st->placed_total;
    n->cancelled_total = st->cancelled_total;
    n->requeued_total = st->requeued_total;
    n->preempted_total = st->preempted_total;
    n->reclaimed_total = st->reclaimed_total;
    n->adopted_total = st->adopted_total;
    n->adopt_refused_total = st->adopt_refused_total;
    n->quse = malloc((nt ? nt : 1) * sizeof(*n->quse));
    n->rq_used = malloc((nrq ? nrq : 1) * sizeof(*n->rq_used));
    if (!n->quse || !n->rq_used)
        return -ENOMEM;
    quota_use(st, n->quse);
    if (queue_views(st, n) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < nrq; i++)
        gsd_rquota_used(st, i, n->rq_used[i]);
    if (gsd_mono_us() < atomic_load(&s->bills_until_us)) {
        n->bills = gsd_bill_accrued(st); /* read from the ledger once a minute at most */
        json_incref(n->bills);
    }
    if (gsd_mono_us() < atomic_load(&s->forecast_until_us)) {
        n->forecast = gsd_forecast_metrics(st); /* forecastRefreshSeconds apart */
    }
    return 0;
}

/* Pending pods' reasons are the scheduler's, written by its passes: after one, each pending
 * pod is read again, and those whose words changed get a new view. O(pending pods). */
static void sync_pending(struct gsd_state *st)
{
    if (!st->sched.passed)
        return;
    st->sched.passed = 0;
    for (struct gsd_pod *p = st->pending; p; p = p->pnext) {
        if (gsd_sched_sync(st, p) > 0) /* what else it shows a pass does not change */
            gsd_snap_touch(st, p);
    }
}

/* Debug aid: every pod's published view shows what a fresh one would, the snapshot holds each
 * pod's once, in arrival order, and every node's record is what a fresh one would be. */
static void verify(struct gsd_state *st)
{
    const struct gsd_snap *cur = st->snaps->current;
    size_t npods = 0, nrunning = 0;
    for (struct gsd_pod *p = st->head; p; p = p->next, npods++) {
        struct gsd_podview v;
        gsd_podview_fill(st, p, &v);
        if (!p->view || !view_eq(p->view, &v)) {
            char key[GSD_KEY_MAX];
            snprintf(key, sizeof(key), "%s/%s", p->spec.ns, p->spec.name);
            gsd_log("error", "snapshot: a pod changed without gsd_snap_touch()", "pod", key, NULL);
            abort();
        }
    }
    struct gsd_snap_it it = {0, 0};
    int64_t last = INT64_MIN;
    for (const struct gsd_podview *v; (v = gsd_snap_next(cur, &it)) != NULL; last = v->seq) {
        nrunning += v->running;
        if (v->retired || v->seq <= last || --npods == SIZE_MAX) {
            gsd_log("error", "snapshot: its pods are not the daemon's in arrival order", NULL);
            abort();
        }
    }
    if (npods || nrunning != cur->nrunning || cur->npods != cur->nrunning + cur->npending) {
        gsd_log("error", "snapshot: its pod counts are not the daemon's", NULL);
        abort();
    }
    for (size_t i = 0; i < cur->nnodes; i++) {
        struct gsd_nodeview nv;
        node_record(st, i, &nv);
        if (memcmp(&nv, gsd_snap_node(cur, i), sizeof(nv))) {
            gsd_log("error", "snapshot: a node changed without gsd_snap_node_touch()", "node",
                    cur->node_name[i], NULL);
            abort();
        }
    }
}

int gsd_snap_publish(struct gsd_state *st)
{
    struct gsd_snaps *s = st->snaps;
    int64_t t0 = gsd_mono_us();
    struct gsd_podview **fresh = NULL;
    size_t nfresh = 0;
    struct gsd_snap *n = calloc(1, sizeof(*n));
    struct build b = {.gen = s->gen + 1};
    sync_pending(st);
    int rc = n ? make_views(st, &fresh, &nfresh) : -ENOMEM;
    const struct gsd_snap *old = s->current;
    if (!rc)
        rc = copy_counts(st, n);
    if (!rc)
        rc = merge_pods(s, n, old, fresh, nfresh, &b);
    if (!rc)
        rc = make_nodes(st, n, old, &b);
    free(fresh);
    if (rc) {
        /* the views made stay the pods' own; retired ones still wait for a publish */
        if (n) {
            undo(n, &b);
            snap_free(n);
        }
        return rc;
    }
    fill_nodes(st, n);
    n->gen = ++s->gen;
    n->node_name = s->names;
    n->node_model = s->models;
    n->node_gpus = s->gpus;
    n->refs = 1; /* held by being current */
    for (size_t i = 0; i < s->ntouched; i++)
        if (s->touched[i])
            s->touched[i]->touched = 0;
    s->ntouched = 0;
    s->all = 0;
    pthread_mutex_lock(&s->mu);
    if (s->current) {
        s->current->garbage = s->retired; /* part of it and of older ones, none newer */
        s->current->pgarbage = b.pdrop;
        s->current->ngarbage = b.ndrop;
        s->current->newer = n;
        s->current->refs--;
    } else {
        views_free(s->retired); /* nothing published held them */
        s->oldest = n;
    }
    s->retired = NULL;
    s->current = n;
    struct gsd_snap *gone = unlink_released(s);
    pthread_mutex_unlock(&s->mu);
    free_list(gone);
    gsd_hist_observe(&s->publish_lat, gsd_mono_us() - t0);
    if (s->verify)
        verify(st);
    return 0;
}

void gsd_snap_free(struct gsd_state *st)
{
    struct gsd_snaps *s = st->snaps;
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    struct gsd_snap *cur = s->current;
    if (cur) { /* its views are every pod's, and those retired since it was made */
        for (size_t i = 0; i < cur->npchunks; i++) {
            for (size_t k = 0; k < cur->pchunk[i]->n; k++)
                view_free((struct gsd_podview *)cur->pchunk[i]->v[k]);
            free(cur->pchunk[i]);
        }
        for (size_t i = 0; i * GSD_NODE_CHUNK < cur->nnodes; i++)
            free(cur->nchunk[i]);
        cur->npchunks = cur->npods = cur->nnodes = 0;
        cur->refs--;
        s->current = NULL;
    }
    struct gsd_snap *gone = unlink_released(s); /* the server stopped: no reader holds one */
    pthread_mutex_unlock(&s->mu);
    free_list(gone);
    if (!cur)
        views_free(s->retired);
    for (struct gsd_pod *p = st->head; p; p = p->next) {
        p->view = NULL;
        p->touched = 0;
    }
    pthread_mutex_destroy(&s->mu);
    snaps_free(s);
    st->snaps = NULL;
}

static json_t *cards_json(const struct gsd_podview *v)
{
    json_t *a = json_array();
    for (int g = 0; a && v->running && g < GS_GPUS_MAX; g++)
        if (v->cards & (1u << g))
            json_array_append_new(a, json_integer(g));
    return a;
}

json_t *gsd_podview_assignment(const struct gsd_podview *v)
{
    json_t *a = json_object();
    if (!a || !v->running)
        return a;
    char idx[GS_GPU_LIST_MAX], milli[16];
    gs_gpu_list_text(v->cards, idx);
    snprintf(milli, sizeof(milli), "%u", v->card_milli);
    json_object_set_new(a, GSD_NODE_ANNOTATION, json_string(v->node_name));
    json_object_set_new(a, GSD_CARDS_ANNOTATION, json_string(idx));
    json_object_set_new(a, "gpusched.io/gpu-milli", json_string(milli));
    if (v->mig[0]) { /* the instance NVIDIA's tools would create: -cgi PROFILE at START */
        snprintf(milli, sizeof(milli), "%d", v->mig_start);
        json_object_set_new(a, "gpusched.io/mig-profile", json_string(v->mig));
        json_object_set_new(a, "gpusched.io/mig-placement", json_string(milli));
    }
    return a;
}

json_t *gsd_podview_json(const struct gsd_podview *v)
{
    json_t *meta = v->meta ? json_loads(v->meta, 0, NULL) : NULL;
    json_t *labels = json_incref(json_object_get(meta, "labels"));
    json_t *ann = json_object_get(meta, "annotations");
    ann = ann ? json_incref(ann) : json_object();
    json_decref(meta);
    json_t *assigned = gsd_podview_assignment(v);
    if (ann && assigned) /* what a device plugin reads to pick the cards */
        json_object_update(ann, assigned);
    json_decref(assigned);
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:I, s:I, s:I, s:I, s:i, s:i, s:i, s:o, "
        "s:o, s:o, s:o, s:o, s:s}",
        "namespace", v->ns, "name", v->name, "uid", v->uid, "tenant", v->tenant, "state",
        !v->running    ? "pending"
        : v->allocated ? "allocated"
                       : "running",
        "source", v->extender ? "extender" : "api", "node",
        v->node_name ? json_string(v->node_name) : json_null(), "gpus", cards_json(v), "num_gpu",
        (json_int_t)v->req.num_gpu, "gpu_milli", (json_int_t)v->req.gpu_milli, "cpu_milli",
        (json_int_t)v->req.cpu_milli, "memory_mib", (json_int_t)v->req.memory_mib, "gpumem_mib",
        v->gpumem_mib, "gpucores", v->gpucores, "priority", v->priority, "reason",
        v->running && !v->allocated ? json_null() : json_string(v->reason), "submit_time",
        gsd_time_json(v->submit_us), "start_time",
        v->running ? gsd_time_json(v->start_us) : json_null(), "labels",
        labels ? labels : json_object(), "annotations", ann ? ann : json_object(), "queue",
        v->queue);
    if (o && v->mig[0]) /* the start while running, else null */
        json_object_set_new(o, "mig",
                            json_pack("{s:s, s:o}", "profile", v->mig, "start",
                                      v->running ? json_integer(v->mig_start) : json_null()));
    if (o) { /* what the reason no longer says once a pass has tried it again */
        json_object_set_new(o, "evictions", json_integer(v->evictions));
        json_object_set_new(o, "last_eviction",
                            v->last_eviction[0] /* at 0 s on a manual clock too */
                                ? json_pack("{s:s, s:o}", "reason", v->last_eviction, "time",
                                            gsd_time_json(v->last_eviction_us))
                                : json_null());
    }
    return o;
}

/*
 * The compact text json_dumps() makes of gsd_podview_json(), written here without building the
 * tree (a submission's 201 answer, a list's pods): the same bytes, checked by test_daemon against
 * jansson for every kind of view. Written here only when every string is ASCII and the labels and
 * annotations (the view's meta, jansson's compact text) hold only plain strings (no escape, no
 * byte over 0x7E): those jansson reads and writes again unchanged, so they are copied. Anything
 * else (UTF-8 jansson checks, escapes it would rewrite) goes through jansson.
 */
struct out {
    char *at, *end;
    int bad; /* something to leave to jansson (or, never expected, no room) */
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->bad || (size_t)(o->end - o->at) < n) {
        o->bad = 1;
        return;
    }
    memcpy(o->at, s, n);
    o->at += n;
}

#define PUT(o, lit) put(o, lit, sizeof(lit) - 1)

/* @s as a JSON string, escaped as jansson's dump escapes ASCII; bad past 0x7F. */
static void put_str(struct out *o, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    PUT(o, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p && !o->bad;) {
        const unsigned char *run = p;
        while (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
            p++;
        put(o, (const char *)run, (size_t)(p - run));
        if (!*p)
            break;
        const char *named = *p == '"'    ? "\\\""
                            : *p == '\\' ? "\\\\"
                            : *p == '\b' ? "\\b"
                            : *p == '\f' ? "\\f"
                            : *p == '\n' ? "\\n"
                            : *p == '\r' ? "\\r"
                            : *p == '\t' ? "\\t"
                                         : NULL;
        char u[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
        if (*p >= 0x80)
            o->bad = 1;
        else if (named)
            put(o, named, 2);
        else
            put(o, u, sizeof(u));
        p++;
    }
    PUT(o, "\"");
}

/* @v in decimal (as jansson writes an integer) at @at. Return: the bytes written (at most 20). */
static size_t decimal(char *at, int64_t v)
{
    char buf[24], *p = buf + sizeof(buf);
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        *--p = '-';
    memcpy(at, p, (size_t)(buf + sizeof(buf) - p));
    return (size_t)(buf + sizeof(buf) - p);
}

static void put_int(struct out *o, int64_t v)
{
    char buf[24];
    put(o, buf, decimal(buf, v));
}

/* @us as gsd_time_json() writes it: a time, 0 too (a manual clock's start). */
static void put_time(struct out *o, int64_t us)
{
    char buf[GS_TIME_TEXT_MAX];
    put_str(o, gs_time_text(buf, us, 1));
}

/* The plain string at @p: past its closing quote; NULL when @p holds none. */
static const char *plain_str(const char *p)
{
    if (*p != '"')
        return NULL;
    for (p++; *p != '"'; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e || *p == '\\')
            return NULL;
    return p + 1;
}

/* The object of plain strings at @p (its "key":"value" pairs, compact): past its '}'; NULL else. */
static const char *plain_obj(const char *p)
{
    if (*p++ != '{')
        return NULL;
    if (*p == '}')
        return p + 1;
    for (;;) {
        if (!(p = plain_str(p)) || *p++ != ':' || !(p = plain_str(p)))
            return NULL;
        if (*p == '}')
            return p + 1;
        if (*p++ != ',')
            return NULL;
    }
}

/* Does the plain string at @p, of @n bytes with its quotes, say @key? */
static int str_is(const char *p, size_t n, const char *key)
{
    return n == strlen(key) + 2 && !memcmp(p + 1, key, n - 2);
}

/* Where the meta's labels and annotations objects are ([0] begin, [1] end; NULL absent).
 * Return: 0; -1 when the meta is not plain (left to jansson). */
static int meta_spans(const char *m, const char *labels[2], const char *ann[2])
{
    labels[0] = labels[1] = ann[0] = ann[1] = NULL;
    if (!m)
        return 0;
    if (*m++ != '{')
        return -1;
    if (*m == '}')
        return m[1] ? -1 : 0;
    for (;;) {
        const char *k = m, *v;
        if (!(m = plain_str(m)) || *m++ != ':')
            return -1;
        const char **span = str_is(k, (size_t)(m - 1 - k), "labels")        ? labels
                            : str_is(k, (size_t)(m - 1 - k), "annotations") ? ann
                                                                            : NULL;
        if (!(v = span ? plain_obj(m) : plain_str(m)) || (span && span[0]))
            return -1;
        if (span) {
            span[0] = m;
            span[1] = v;
        }
        m = v;
        if (*m == '}')
            return m[1] ? -1 : 0;
        if (*m++ != ',')
            return -1;
    }
}

/* The annotations: the meta's (@ann, may be NULL) with what a device plugin reads to pick the
 * cards put in, as gsd_podview_assignment()'s json_object_update() puts them: a key there
 * already keeps its place, the others follow in order. */
static void put_annotations(struct out *o, const struct gsd_podview *v, const char *ann[2])
{
    char idx[GS_GPU_LIST_MAX], milli[24], start[24];
    gs_gpu_list_text(v->cards, idx);
    milli[decimal(milli, v->card_milli)] = start[decimal(start, v->mig_start)] = '\0';
    const char *keys[] = {GSD_NODE_ANNOTATION, GSD_CARDS_ANNOTATION, "gpusched.io/gpu-milli",
                          "gpusched.io/mig-profile", "gpusched.io/mig-placement"};
    const char *vals[] = {v->node_name, idx, milli, v->mig, start};
    int n = !v->running ? 0 : v->mig[0] ? 5 : 3, put_yet[5] = {0}, first = 1;
    PUT(o, "{");
    for (const char *p = ann[0] ? ann[0] + 1 : NULL; p && *p == '"';) {
        const char *k = p, *ke = plain_str(k), *ve = plain_str(ke + 1);
        int i = 0;
        while (i < n && !str_is(k, (size_t)(ke - k), keys[i]))
            i++;
        if (!first)
            PUT(o, ",");
        first = 0;
        put(o, k, (size_t)(ke + 1 - k));
        if (i < n) {
            put_str(o, vals[i]);
            put_yet[i] = 1;
        } else {
            put(o, ke + 1, (size_t)(ve - ke - 1));
        }
        p = *ve == ',' ? ve + 1 : NULL;
    }
    for (int i = 0; i < n; i++)
        if (!put_yet[i]) {
            if (!first)
                PUT(o, ",");
            first = 0;
            put_str(o, keys[i]);
            PUT(o, ":");
            put_str(o, vals[i]);
        }
    PUT(o, "}");
}

/* The fields, in gsd_podview_json()'s order. */
static void put_view(struct out *o, const struct gsd_podview *v, const char *labels[2],
                     const char *ann[2])
{
    const char *keys[] = {"{\"namespace\":", ",\"name\":", ",\"uid\":", ",\"tenant\":"};
    const char *strs[] = {v->ns, v->name, v->uid, v->tenant};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        put(o, keys[i], strlen(keys[i]));
        put_str(o, strs[i]);
    }
    if (v->allocated)
        PUT(o, ",\"state\":\"allocated\"");
    else if (v->running)
        PUT(o, ",\"state\":\"running\"");
    else
        PUT(o, ",\"state\":\"pending\"");
    if (v->extender)
        PUT(o, ",\"source\":\"extender\",\"node\":");
    else
        PUT(o, ",\"source\":\"api\",\"node\":");
    if (v->node_name)
        put_str(o, v->node_name);
    else
        PUT(o, "null");
    char idx[GS_GPU_LIST_MAX] = "";
    if (v->running)
        gs_gpu_list_text(v->cards, idx);
    PUT(o, ",\"gpus\":[");
    put(o, idx, strlen(idx));
    const int64_t nums[] = {v->req.num_gpu, v->req.gpu_milli, v->req.cpu_milli, v->req.memory_mib,
                            v->gpumem_mib,  v->gpucores,      v->priority};
    const char *names[] = {
        "],\"num_gpu\":",   ",\"gpu_milli\":", ",\"cpu_milli\":", ",\"memory_mib\":",
        ",\"gpumem_mib\":", ",\"gpucores\":",  ",\"priority\":"};
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        put(o, names[i], strlen(names[i]));
        put_int(o, nums[i]);
    }
    PUT(o, ",\"reason\":");
    if (v->running && !v->allocated)
        PUT(o, "null");
    else
        put_str(o, v->reason);
    PUT(o, ",\"submit_time\":");
    put_time(o, v->submit_us);
    PUT(o, ",\"start_time\":");
    if (v->running)
        put_time(o, v->start_us);
    else
        PUT(o, "null");
    PUT(o, ",\"labels\":");
    if (labels[0])
        put(o, labels[0], (size_t)(labels[1] - labels[0]));
    else
        PUT(o, "{}");
    PUT(o, ",\"annotations\":");
    put_annotations(o, v, ann);
    PUT(o, ",\"queue\":");
    put_str(o, v->queue);
    if (v->mig[0]) {
        PUT(o, ",\"mig\":{\"profile\":");
        put_str(o, v->mig);
        PUT(o, ",\"start\":");
        if (v->running)
            put_int(o, v->mig_start);
        else
            PUT(o, "null");
        PUT(o, "}");
    }
    PUT(o, ",\"evictions\":");
    put_int(o, v->evictions);
    PUT(o, ",\"last_eviction\":");
    if (v->last_eviction[0]) {
        PUT(o, "{\"reason\":");
        put_str(o, v->last_eviction);
        PUT(o, ",\"time\":");
        put_time(o, v->last_eviction_us);
        PUT(o, "}");
    } else {
        PUT(o, "null");
    }
    PUT(o, "}");
}

char *gsd_podview_dumps(const struct gsd_podview *v)
{
    const char *labels[2], *ann[2];
    size_t room = 2048; /* the keys, numbers and cards; each string as escaped at worst */
    for (const char *s[] = {v->ns, v->name, v->uid, v->tenant, v->queue, v->mig, v->mig,
                            v->node_name, v->node_name, v->reason, v->last_eviction},
                    **q = s;
         q < s + sizeof(s) / sizeof(s[0]); q++)
        room += *q ? 6 * strlen(*q) : 0;
    room += v->meta ? strlen(v->meta) : 0;
    char small[4096]; /* most answers: written here, then copied to a block malloc reuses */
    char *buf = room <= sizeof(small) ? small : malloc(room), *text = NULL;
    struct out o = {buf, buf ? buf + room - 1 : NULL,
                    !buf || (v->running && !v->node_name) ||
                        ((!v->running || v->allocated) && !v->reason)}; /* jansson: NULL */
    if (!o.bad && !meta_spans(v->meta, labels, ann)) {
        put_view(&o, v, labels, ann);
        text = o.bad ? NULL : strndup(buf, (size_t)(o.at - buf));
    }
    if (buf != small)
        free(buf);
    if (text)
        return text;
    json_t *j = gsd_podview_json(v);
    text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    return text;
}
