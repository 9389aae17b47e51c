/*
 * Elastic provisioning replayed (gpusched/elastic.h): replicas placed by the scheduling core on
 * the nodes that are on, nodes turned on and off by the forecast's advice.
 */
#include "gpusched/elastic.h"

#include "gpusched/cluster.h"
#include "gpusched/diag.h"
#include "gpusched/sched.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DAY_S  86400
#define HOUR_S 3600

enum node_state { OFF = 0, BOOTING, UP, CORDONED };

struct rep {
    int64_t start, end;
    struct gs_pod_req req;
    int64_t work;  /* milli-GPU busy while it runs: what it asked before right-sizing x util */
    int state;     /* 0 not arrived, 1 pending, 2 running, 3 gone */
    int64_t began; /* start of its run, -1 never */
    struct gs_placement pl;
    uint32_t pod;  /* whose measured utilisation it has */
    uint32_t slot; /* running on a shared card: its place in run.shared */
};

struct node {
    enum node_state st;
    int64_t since;    /* when it was asked for (node-seconds count from then) */
    int64_t ready_at; /* booting: when it is up */
    uint16_t held[GS_GPUS_MAX];
    int pods;
};

struct run {
    const struct gs_elastic_params *p;
    struct gs_cluster *c;
    struct gs_sched *s;
    struct rep *r;
    size_t nr;
    uint32_t *by_end; /* replicas by end time */
    struct node *node;
    size_t nn;
    int64_t base;        /* the hour of the first record: the replay clock starts there */
    int64_t now, t0, t1; /* clock; the measured window [t0, t1) */
    int64_t alloc_milli, busy_milli; /* held by running replicas now (busy: x utilisation) */
    int64_t node_s, alloc_ms, busy_ms, gpu_on_s, unserved;
    struct gs_demand *sized; /* the replicas' right-sized demand, what the forecast sees */
    int64_t *advice;         /* nodes per hour (elastic), -1 unknown */
    size_t hours;
    int64_t on_max;
    uint32_t *shared; /* running replicas on a share of a card, when duty is measured */
    size_t nshared;
    int32_t *card;     /* duty asked of each card at a sample time, per mille */
    uint32_t *touched; /* the cards it is asked of */
    int64_t duty_ms, over_ms;
    struct gs_diag *d;
};

/* Hold (or give back) every free share of node @i's cards so placement cannot use it. */
static void hold(struct run *R, size_t i, int take)
{
    struct node *n = &R->node[i];
    struct gs_node_info ni;
    struct gs_diag why;
    gs_diag_init(&why);
    gs_cluster_node_info(R->c, i, &ni);
    for (int g = 0; g < ni.gpus; g++) {
        uint32_t m = take ? ni.gpu_left[g] : n->held[g];
        if (!m)
            continue;
        struct gs_pod_req req = {.num_gpu = 1, .gpu_milli = m};
        struct gs_placement pl = {(int32_t)i, 1u << g, m};
        if (take && !gs_sched_bind_placement(R->s, &req, &pl, &why))
            n->held[g] = (uint16_t)(n->held[g] + m);
        else if (!take && !gs_sched_release(R->s, &req, &pl))
            n->held[g] = 0;
    }
}

/* Node-seconds between @a and @b inside the window. */
static int64_t in_window(const struct run *R, int64_t a, int64_t b)
{
    a = a > R->t0 ? a : R->t0;
    b = b < R->t1 ? b : R->t1;
    return b > a ? b - a : 0;
}

static void turn_off(struct run *R, size_t i)
{
    struct node *n = &R->node[i];
    R->node_s += in_window(R, n->since, R->now);
    n->st = OFF;
    hold(R, i, 1);
}

static size_t count(const struct run *R, enum node_state st)
{
    size_t k = 0;
    for (size_t i = 0; i < R->nn; i++)
        k += R->node[i].st == st;
    return k;
}

/* Bring @k more nodes: cordoned ones back at once, then off ones booting for the lead time. */
static void scale_up(struct run *R, int64_t k)
{
    for (size_t i = 0; i < R->nn && k > 0; i++)
        if (R->node[i].st == CORDONED) {
            R->node[i].st = UP;
            hold(R, i, 0);
            k--;
        }
    for (size_t i = 0; i < R->nn && k > 0; i++)
        if (R->node[i].st == OFF) {
            R->node[i].st = BOOTING;
            R->node[i].since = R->now;
            R->node[i].ready_at = R->now + R->p->lead_s;
            k--;
        }
}

/* Cordon @k up nodes, the emptiest first (ties: the highest index); idle ones go off. */
static void scale_down(struct run *R, int64_t k)
{
    while (k-- > 0) {
        size_t best = R->nn;
        for (size_t i = R->nn; i-- > 0;)
            if (R->node[i].st == UP && (best == R->nn || R->node[i].pods < R->node[best].pods))
                best = i;
        if (best == R->nn)
            return;
        R->node[best].st = CORDONED;
        hold(R, best, 1);
        if (R->node[best].pods == 0)
            turn_off(R, best);
    }
}

/* Sum the duty cycle each card's shared replicas ask at sample time @at: what passes 100 % of a
 * card waits, as time slicing makes it. Each replica follows its pod's measured day, laid over
 * every day of the replay. */
static void duty_at(struct run *R, int64_t at, int64_t dt)
{
    const struct gs_elastic_params *p = R->p;
    size_t slot = (size_t)(at % DAY_S) * p->slots / DAY_S, nt = 0;
    for (size_t i = 0; i < R->nshared; i++) {
        const struct rep *r = &R->r[R->shared[i]];
        uint32_t c = (uint32_t)r->pl.node * GS_GPUS_MAX + (uint32_t)__builtin_ctz(r->pl.gpu_mask);
        if (R->card[c] < 0) /* -1: not asked yet at this time */
            R->touched[nt++] = c;
        R->card[c] += (R->card[c] < 0) + p->series[(size_t)r->pod * p->slots + slot];
    }
    for (size_t i = 0; i < nt; i++) {
        int64_t u = R->card[R->touched[i]];
        R->duty_ms += u * dt;
        R->over_ms += (u > 1000 ? u - 1000 : 0) * dt;
        R->card[R->touched[i]] = -1;
    }
}

/* Add what ran since the last event to the window's totals. */
static void advance(struct run *R, int64_t t)
{
    if (R->shared) { /* the duty cycle at every sample time in [now, t) inside the window */
        int64_t step = DAY_S / (int64_t)R->p->slots, a = R->now > R->t0 ? R->now : R->t0;
        step = step ? step : 1;
        for (int64_t at = (a + step - 1) / step * step; at < t && at < R->t1; at += step)
            duty_at(R, at, step);
    }
    int64_t dt = in_window(R, R->now, t);
    R->alloc_ms += R->alloc_milli * dt;
    R->busy_ms += R->busy_milli * dt;
    R->now = t;
}

static void start(struct run *R, struct rep *r, const struct gs_placement *pl)
{
    r->state = 2;
    r->pl = *pl;
    r->began = R->now;
    R->node[pl->node].pods++;
    int64_t m = (int64_t)r->req.num_gpu * r->req.gpu_milli;
    R->unserved += in_window(R, r->start, R->now) * m; /* asked for while it waited */
    R->alloc_milli += m;
    R->busy_milli += r->work;
    if (R->shared && r->req.gpu_milli < 1000) {
        r->slot = (uint32_t)R->nshared;
        R->shared[R->nshared++] = (uint32_t)(r - R->r);
    }
}

static void leave(struct run *R, struct rep *r)
{
    if (r->state == 2) {
        int64_t m = (int64_t)r->req.num_gpu * r->req.gpu_milli;
        gs_sched_release(R->s, &r->req, &r->pl);
        R->alloc_milli -= m;
        R->busy_milli -= r->work;
        if (R->shared && r->req.gpu_milli < 1000) { /* swap the last into its place */
            uint32_t last = R->shared[--R->nshared];
            R->shared[r->slot] = last;
            R->r[last].slot = r->slot;
        }
        struct node *n = &R->node[r->pl.node];
        if (--n->pods == 0 && n->st == CORDONED)
            turn_off(R, (size_t)r->pl.node);
        else if (n->st == CORDONED)
            hold(R, (size_t)r->pl.node, 1); /* what it gave back stays out of reach */
    } else if (r->state == 1) {
        R->unserved += in_window(R, r->start, r->end) * r->req.num_gpu * r->req.gpu_milli;
    }
    r->state = 3;
}

/* Place what waits, in arrival order; the milli-GPU still wanted. */
static int64_t place_pending(struct run *R, size_t upto)
{
    int64_t want = 0;
    for (size_t i = 0; i < upto; i++) {
        struct rep *r = &R->r[i];
        if (r->state != 1)
            continue;
        struct gs_placement pl;
        struct gs_diag why;
        gs_diag_init(&why);
        if (gs_sched_place(R->s, &r->req, &pl, &why) == 0)
            start(R, r, &pl);
        else
            want += (int64_t)r->req.num_gpu * r->req.gpu_milli;
    }
    return want;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* For each hour of the day, how much the replicas held rose within one lead time before each
 * arrival in that hour over the week before @cut (replay clock), at the 95th percentile (nearest
 * rank) of those arrivals, milli-GPU, in @out: what an hourly forecast does not see and nodes
 * asked for by waiting replicas come too late for, at the percentile of the wait target. What
 * was there when the history begins did not arrive. Return: 0; -ENOMEM. */
static int burst(const struct run *R, int64_t cut, int64_t out[GS_FC_DAY])
{
    int64_t from = cut - 7 * DAY_S, held = 0;
    from = from > R->r[0].start ? from : R->r[0].start + 1;
    size_t n = 0, a = 0, e = 0, nrise = 0;
    int64_t *t = malloc(2 * R->nr * sizeof(*t)), *h = malloc(2 * R->nr * sizeof(*h));
    int64_t *rise = malloc(R->nr * sizeof(*rise)), *tmp = malloc(R->nr * sizeof(*tmp));
    int *hod = malloc(R->nr * sizeof(*hod));
    int rc = t && h && rise && tmp && hod ? 0 : -ENOMEM;
    while (!rc && (a < R->nr || e < R->nr)) { /* held after each change, in time order */
        const struct rep *ra = a < R->nr ? &R->r[a] : NULL;
        const struct rep *re = e < R->nr ? &R->r[R->by_end[e]] : NULL;
        int arrive = ra && (!re || ra->start < re->end);
        const struct rep *r = arrive ? ra : re;
        int64_t at = arrive ? r->start : r->end;
        if (at >= cut)
            break;
        held += (arrive ? 1 : -1) * (int64_t)r->req.num_gpu * r->req.gpu_milli;
        a += arrive;
        e += !arrive;
        if (at < from)
            continue;
        t[n] = at;
        h[n] = held;
        int64_t up = 0;
        for (size_t k = n; k-- > 0 && t[k] > at - R->p->lead_s;)
            up = h[n] - h[k] > up ? h[n] - h[k] : up;
        if (arrive) {
            hod[nrise] = (int)(at / HOUR_S % GS_FC_DAY);
            rise[nrise++] = up;
        }
        n++;
    }
    for (int k = 0; !rc && k < GS_FC_DAY; k++) {
        size_t m = 0;
        for (size_t i = 0; i < nrise; i++)
            if (hod[i] == k)
                tmp[m++] = rise[i];
        qsort(tmp, m, sizeof(*tmp), cmp_i64);
        out[k] = m ? tmp[(m * 95 + 99) / 100 - 1] : 0;
    }
    free(t);
    free(h);
    free(rise);
    free(tmp);
    free(hod);
    return rc;
}

/* How full, per mille, the cards that hold replicas are now (0: none do). */
static int32_t fill(const struct run *R)
{
    int64_t used = 0;
    for (size_t i = 0; i < R->nn; i++) {
        struct gs_node_info ni;
        gs_cluster_node_info(R->c, i, &ni);
        for (int g = 0; g < ni.gpus && R->node[i].st != OFF; g++)
            used += (int64_t)ni.gpu_left[g] + R->node[i].held[g] < 1000;
    }
    return used ? (int32_t)(R->alloc_milli / used) : 0;
}

/* The advice of every hour of the day starting at @day, forecast from the history before
 * @day - lead (whole hours). */
static int forecast_day(struct run *R, const struct gs_demand *dm, int64_t day)
{
    const struct gs_elastic_params *p = R->p;
    int64_t cut = (day - p->lead_s) / HOUR_S * HOUR_S;
    size_t h = (size_t)((day + DAY_S - cut) / HOUR_S);
    struct gs_series_set set;
    struct gs_forecast fc;
    int rc =
        gs_demand_series(R->sized ? R->sized : dm, GS_FC_TOTAL, 0, R->base + cut, 0, &set, R->d);
    if (rc)
        return rc;
    int64_t b[GS_FC_DAY];
    rc = gs_fc_fit(set.s[0].milli, set.n, h, p->method, &fc, R->d);
    if (!rc && (rc = burst(R, cut, b)))
        gs_forecast_free(&fc);
    if (!rc) {
        /* the upper quantile the wait target plans at, of the hour's peak rather than its mean */
        for (size_t k = 0; k < h; k++)
            fc.q[GS_FC_QUANTILES - 1][k] += b[(size_t)(cut / HOUR_S + (int64_t)k) % GS_FC_DAY];
        struct gs_advice_target tg = {"", p->wait_target_s, 0, 0};
        struct gs_advice_params ap = {.lead_s = p->lead_s,
                                      .default_gpus = p->node_gpus,
                                      .fill_permille = p->right_size ? fill(R) : 0,
                                      .targets = &tg,
                                      .ntargets = 1};
        struct gs_advice a;
        rc = gs_advice_compute(&set, &fc, &ap, &a, R->d);
        for (size_t k = 0; !rc && k < h; k++) {
            int64_t at = cut / HOUR_S + (int64_t)k;
            if ((size_t)at < R->hours && cut + (int64_t)k * HOUR_S >= day)
                R->advice[at] = a.hour[k].nodes;
        }
        if (!rc)
            gs_advice_free(&a);
        gs_forecast_free(&fc);
    }
    gs_series_set_free(&set);
    return rc;
}

static const struct rep *sort_reps;

static int end_less(const void *a, const void *b)
{
    const struct rep *x = &sort_reps[*(const uint32_t *)a], *y = &sort_reps[*(const uint32_t *)b];
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int start_less(const void *a, const void *b)
{
    const struct rep *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return 0;
}

/* The start of the hour of @dm's first record, seconds. */
static int64_t demand_base(const struct gs_demand *dm)
{
    int64_t base = INT64_MAX, s, e, m;
    for (size_t i = 0; gs_demand_record(dm, i, &s, &e, &m) == 0; i++)
        base = s < base ? s : base;
    return base == INT64_MAX ? 0 : base / HOUR_S * HOUR_S;
}

/* Replicas of @dm until @end_s (the source's clock), by arrival, on the replay's clock. */
static int load(struct run *R, const struct gs_demand *dm, int64_t end_s)
{
    size_t n = gs_demand_count(dm);
    R->base = demand_base(dm);
    end_s -= R->base;
    R->r = calloc(n ? n : 1, sizeof(*R->r));
    R->by_end = malloc((n ? n : 1) * sizeof(*R->by_end));
    if (!R->r || !R->by_end)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        int64_t s, e, m;
        gs_demand_record(dm, i, &s, &e, &m);
        s -= R->base;
        e = e == INT64_MAX ? e : e - R->base;
        if (s >= end_s || e <= s)
            continue;
        struct rep *r = &R->r[R->nr];
        r->start = s;
        r->end = e < end_s ? e : end_s;
        r->began = -1;
        r->req.num_gpu = m >= 1000 ? (uint32_t)(m / 1000) : 1;
        r->req.gpu_milli = m >= 1000 ? 1000 : (uint32_t)m;
        if ((m >= 1000 && m % 1000) || r->req.num_gpu > (uint32_t)R->p->node_gpus)
            return gs_diag_error(R->d,
                                 "a replica of %lld milli-GPU: not whole cards, or more "
                                 "than a node's %d",
                                 (long long)m, R->p->node_gpus);
        R->nr++;
    }
    qsort(R->r, R->nr, sizeof(*R->r), start_less);
    for (size_t i = 0; i < R->nr; i++) {
        struct rep *r = &R->r[i];
        r->pod = R->p->nutil ? (uint32_t)(i % R->p->nutil) : 0;
        int32_t util = R->p->util_permille ? R->p->util_permille[r->pod] : 1000;
        r->work = (int64_t)r->req.num_gpu * r->req.gpu_milli * util / 1000;
        if (R->p->right_size && r->req.num_gpu == 1 && r->req.gpu_milli == 1000)
            r->req.gpu_milli = (uint32_t)gs_elastic_share(
                R->p->peak_permille ? R->p->peak_permille[r->pod] : 1000, R->p->overcommit_milli);
        R->by_end[i] = (uint32_t)i;
    }
    int rc = R->p->right_size ? gs_demand_new(&R->sized) : 0;
    for (size_t i = 0; !rc && R->sized && i < R->nr; i++)
        rc = gs_demand_add(R->sized, R->r[i].start + R->base, R->r[i].end + R->base,
                           (int64_t)R->r[i].req.num_gpu * R->r[i].req.gpu_milli, NULL, NULL, NULL,
                           NULL, R->d);
    if (rc)
        return rc;
    sort_reps = R->r;
    qsort(R->by_end, R->nr, sizeof(*R->by_end), end_less);
    return R->nr ? 0 : gs_diag_error(R->d, "no replica before the end of the replay");
}

int32_t gs_elastic_share(int32_t peak_permille, int32_t overcommit_milli)
{
    int32_t s = (peak_permille + 99) / 100 * 100;
    s = s < 100 ? 100 : s > 1000 ? 1000 : s;
    int32_t oc = overcommit_milli < 1000 ? 1000 : overcommit_milli > 4000 ? 4000 : overcommit_milli;
    return (s * 1000 + oc - 1) / oc;
}

static int check(const struct gs_elastic_params *p, struct gs_diag *d)
{
    if (p->node_gpus < 1 || p->node_gpus > GS_GPUS_MAX || p->lead_s < 0 || p->lead_s > DAY_S ||
        p->wait_target_s < 0 || p->warmup_s < 2 * DAY_S || (p->util_permille && !p->nutil) ||
        (p->peak_permille && !p->util_permille) || (p->series && (!p->slots || !p->util_permille)))
        return gs_diag_error(d,
                             "elastic replay: %d GPUs a node (1..16), lead %lld s (0..1 day), "
                             "wait target %lld s (>= 0), warm-up %lld s (>= 2 days)",
                             p->node_gpus, (long long)p->lead_s, (long long)p->wait_target_s,
                             (long long)p->warmup_s);
    if (p->overcommit_milli > 4000 || (p->overcommit_milli > 1000 && !p->right_size))
        return gs_diag_error(d, "elastic replay: overcommit %d/1000: 1..4, and right-sized only",
                             p->overcommit_milli);
    return 0;
}

/* What a replica holds for the static-at-peak size: its shares right-sized, else whole cards. */
static int64_t held_milli(const struct run *R, const struct rep *r)
{
    return (int64_t)r->req.num_gpu * (R->p->right_size ? r->req.gpu_milli : 1000);
}

int64_t gs_elastic_peak_nodes(const struct gs_demand *dm, int64_t end_s,
                              const struct gs_elastic_params *p, struct gs_diag *d)
{
    struct run R = {.p = p, .d = d};
    int rc = check(p, d);
    if (!rc)
        rc = load(&R, dm, end_s);
    int64_t held = 0, peak = 0;
    for (size_t i = 0, j = 0; !rc && i < R.nr; i++) {
        for (; R.r[R.by_end[j]].end <= R.r[i].start; j++)
            held -= held_milli(&R, &R.r[R.by_end[j]]);
        held += held_milli(&R, &R.r[i]);
        peak = held > peak ? held : peak;
    }
    free(R.r);
    free(R.by_end);
    gs_demand_free(R.sized);
    int64_t node = (int64_t)p->node_gpus * 1000;
    return rc ? rc : (peak + node - 1) / node;
}

static int build(struct run *R, size_t nodes)
{
    struct gs_profile *prof = NULL;
    int rc = gs_cluster_new(&R->c);
    for (size_t i = 0; !rc && i < nodes; i++) {
        char name[32];
        snprintf(name, sizeof(name), "node-%05zu", i);
        struct gs_node_spec sp = {.name = name,
                                  .model = R->p->model,
                                  .gpus = R->p->node_gpus,
                                  .cpu_milli = 1000000,
                                  .memory_mib = 1 << 24};
        rc = gs_cluster_add_node(R->c, &sp, R->d);
        rc = rc < 0 ? rc : 0;
    }
    if (!rc)
        rc = gs_profile_for_policy(R->p->policy ? R->p->policy : "gpusched", &prof, R->d);
    if (!rc)
        rc = gs_sched_new(R->c, prof, 42, &R->s, R->d);
    gs_profile_free(prof);
    struct gs_pod_req *w = rc ? NULL : malloc(R->nr * sizeof(*w));
    if (!rc && !w)
        rc = -ENOMEM;
    for (size_t i = 0; !rc && i < R->nr; i++)
        w[i] = R->r[i].req;
    if (!rc)
        rc = gs_sched_set_workload(R->s, w, R->nr);
    free(w);
    R->node = rc ? NULL : calloc(nodes, sizeof(*R->node));
    if (!rc && !R->node)
        rc = -ENOMEM;
    R->nn = nodes;
    for (size_t i = 0; !rc && i < nodes; i++)
        hold(R, i, 1); /* every node starts off */
    if (!rc && R->p->series && R->p->right_size) {
        R->shared = malloc(R->nr * sizeof(*R->shared));
        R->card = malloc(nodes * GS_GPUS_MAX * sizeof(*R->card));
        R->touched = malloc(nodes * GS_GPUS_MAX * sizeof(*R->touched));
        if (!R->shared || !R->card || !R->touched)
            rc = -ENOMEM;
        for (size_t i = 0; !rc && i < nodes * GS_GPUS_MAX; i++)
            R->card[i] = -1;
    }
    return rc;
}

/* Waits of the replicas that arrived in the window, nearest rank. */
static int waits(struct run *R, struct gs_elastic_result *out)
{
    int64_t *w = malloc((R->nr ? R->nr : 1) * sizeof(*w));
    size_t n = 0;
    if (!w)
        return -ENOMEM;
    for (size_t i = 0; i < R->nr; i++) {
        const struct rep *r = &R->r[i];
        if (r->start < R->t0 || r->start >= R->t1)
            continue;
        w[n] = (r->began >= 0 ? r->began : r->end) - r->start;
        out->waited += w[n] >= 1;
        n++;
    }
    for (size_t i = 1; i < n; i++) /* insertion sort on a nearly sorted array of zeros */
        for (size_t j = i; j > 0 && w[j - 1] > w[j]; j--) {
            int64_t x = w[j];
            w[j] = w[j - 1];
            w[j - 1] = x;
        }
    out->replicas = (int64_t)n;
    if (n) {
        out->wait_p50_s = w[(n * 50 + 99) / 100 - 1];
        out->wait_p95_s = w[(n * 95 + 99) / 100 - 1];
        out->wait_p99_s = w[(n * 99 + 99) / 100 - 1];
        out->wait_max_s = w[n - 1];
    }
    free(w);
    return 0;
}

/* The next instant something happens after now. */
static int64_t next_event(const struct run *R, size_t ai, size_t ei, int elastic)
{
    int64_t t = R->t1;
    if (ai < R->nr && R->r[ai].start < t)
        t = R->r[ai].start;
    if (ei < R->nr && R->r[R->by_end[ei]].end < t)
        t = R->r[R->by_end[ei]].end;
    for (size_t i = 0; i < R->nn; i++)
        if (R->node[i].st == BOOTING && R->node[i].ready_at < t)
            t = R->node[i].ready_at;
    if (elastic) { /* the hour's two ticks: ask lead before it, cordon at it */
        int64_t h = (R->now / HOUR_S + 1) * HOUR_S;
        int64_t ask = (R->now + R->p->lead_s) / HOUR_S * HOUR_S + HOUR_S - R->p->lead_s;
        t = h < t ? h : t;
        t = ask > R->now && ask < t ? ask : t;
    }
    return t;
}

/* Nodes the elastic way wants for the hour starting at @hour_s. */
static int64_t wanted(const struct run *R, int64_t hour_s, int64_t warm_nodes)
{
    if (hour_s < R->t0)
        return warm_nodes;
    size_t at = (size_t)(hour_s / HOUR_S);
    return at < R->hours && R->advice[at] >= 0 ? R->advice[at] : warm_nodes;
}

static int loop(struct run *R, const struct gs_demand *dm, int64_t static_nodes, int64_t warm_nodes)
{
    int elastic = static_nodes == 0, rc = 0;
    size_t ai = 0, ei = 0;
    scale_up(R, elastic ? warm_nodes : static_nodes);
    for (size_t i = 0; i < R->nn; i++)
        if (R->node[i].st == BOOTING)
            R->node[i].ready_at = 0;
    while (!rc && R->now < R->t1) {
        int64_t t = next_event(R, ai, ei, elastic);
        advance(R, t);
        if (t >= R->t1)
            break;
        for (; ei < R->nr && R->r[R->by_end[ei]].end <= t; ei++)
            leave(R, &R->r[R->by_end[ei]]);
        for (size_t i = 0; i < R->nn; i++)
            if (R->node[i].st == BOOTING && R->node[i].ready_at <= t) {
                R->node[i].st = UP;
                hold(R, i, 0);
            }
        for (; ai < R->nr && R->r[ai].start <= t; ai++)
            R->r[ai].state = R->r[ai].end > t ? 1 : 3;
        if (elastic && t >= R->t0 - DAY_S && t % DAY_S == (DAY_S - R->p->lead_s) % DAY_S &&
            t + R->p->lead_s >= R->t0)
            rc = forecast_day(R, dm, t + R->p->lead_s);
        if (elastic && (t + R->p->lead_s) % HOUR_S == 0) { /* ask for the next hour's nodes */
            int64_t want = wanted(R, t + R->p->lead_s, warm_nodes);
            int64_t have = (int64_t)(count(R, UP) + count(R, BOOTING));
            if (want > have)
                scale_up(R, want - have);
        }
        int64_t short_milli = place_pending(R, ai), node = (int64_t)R->p->node_gpus * 1000;
        if (elastic && short_milli > 0) { /* pending replicas ask for nodes at once */
            if (count(R, CORDONED)) {     /* on anyway: back first, then new ones for the rest */
                scale_up(R, (int64_t)count(R, CORDONED));
                short_milli = place_pending(R, ai);
            }
            int64_t free_booting = (int64_t)count(R, BOOTING) * node;
            int64_t more = (short_milli - free_booting + node - 1) / node;
            if (more > 0)
                scale_up(R, more);
        } else if (elastic && t % HOUR_S == 0) {
            int64_t want = wanted(R, t, warm_nodes);
            int64_t up = (int64_t)count(R, UP);
            if (up > want)
                scale_down(R, up - want);
        }
        int64_t on = (int64_t)(R->nn - count(R, OFF));
        R->on_max = on > R->on_max && t >= R->t0 ? on : R->on_max;
    }
    for (size_t i = 0; i < R->nn; i++)
        if (R->node[i].st != OFF)
            R->node_s += in_window(R, R->node[i].since, R->t1);
    for (; !rc && ei < R->nr; ei++)
        if (R->r[R->by_end[ei]].state == 1)
            leave(R, &R->r[R->by_end[ei]]);
    return rc;
}

int gs_elastic_run(const struct gs_demand *dm, int64_t end_s, const struct gs_elastic_params *p,
                   int64_t static_nodes, struct gs_elastic_result *out, struct gs_diag *d)
{
    struct run R = {.p = p, .d = d};
    int rc = check(p, d);
    if (!rc && (end_s - demand_base(dm) <= p->warmup_s + DAY_S || static_nodes < 0))
        rc = gs_diag_error(d,
                           "elastic replay: the demand records span %lld s: want more than the "
                           "warm-up (%lld s, --warmup) and a day",
                           (long long)(end_s - demand_base(dm)), (long long)p->warmup_s);
    if (!rc && (end_s - demand_base(dm)) / HOUR_S > GS_FC_HOURS_MAX) /* an hour's advice each */
        rc = gs_diag_error(d, "elastic replay: %lld hours of history: more than %d",
                           (long long)((end_s - demand_base(dm)) / HOUR_S), GS_FC_HOURS_MAX);
    if (!rc)
        rc = load(&R, dm, end_s);
    /* the warm-up runs as static at its own peak */
    int64_t warm = 0, peak = 0;
    if (!rc) {
        peak = gs_elastic_peak_nodes(dm, end_s, p, d);
        warm = gs_elastic_peak_nodes(dm, R.base + p->warmup_s, p, d);
        rc = peak < 0 ? (int)peak : warm < 0 ? (int)warm : 0;
    }
    size_t nodes = (size_t)(static_nodes ? static_nodes : 2 * peak + 16);
    if (!rc && (nodes > GS_ELASTIC_NODES_MAX))
        rc = gs_diag_error(d, "elastic replay: %zu nodes, more than %d", nodes,
                           GS_ELASTIC_NODES_MAX);
    R.t0 = p->warmup_s;
    R.t1 = end_s - R.base;
    R.hours = (size_t)(R.t1 / HOUR_S + 2);
    R.advice = rc ? NULL : malloc(R.hours * sizeof(*R.advice));
    if (!rc && !R.advice)
        rc = -ENOMEM;
    for (size_t i = 0; !rc && i < R.hours; i++)
        R.advice[i] = -1;
    if (!rc)
        rc = build(&R, nodes);
    if (!rc)
        rc = loop(&R, dm, static_nodes, warm);
    if (!rc) {
        memset(out, 0, sizeof(*out));
        rc = waits(&R, out);
        int64_t gpu_s = R.node_s * p->node_gpus;
        out->nodes = static_nodes ? static_nodes : R.on_max;
        out->node_s = R.node_s;
        out->hours = (R.t1 - R.t0) / HOUR_S;
        out->unserved_milli_s = R.unserved;
        out->alloc_permille = gpu_s ? (int32_t)(R.alloc_ms / gpu_s) : 0;
        /* A card is busy at most all the time: what the measured duty cycle asked past 100 %
         * of a shared card waited, and is not counted busy twice. */
        int64_t busy = R.busy_ms - R.over_ms;
        out->util_permille = gpu_s ? (int32_t)(busy / gpu_s) : 0;
        out->duty_milli_s = R.duty_ms;
        out->over_milli_s = R.over_ms;
    }
    gs_sched_free(R.s);
    gs_cluster_free(R.c);
    free(R.node);
    free(R.r);
    free(R.by_end);
    free(R.advice);
    free(R.shared);
    free(R.card);
    free(R.touched);
    gs_demand_free(R.sized);
    return rc;
}

int64_t gs_elastic_static_fit(const struct gs_demand *dm, int64_t end_s,
                              const struct gs_elastic_params *p, int64_t lo, int64_t hi,
                              struct gs_elastic_result *out, struct gs_diag *d)
{
    struct gs_elastic_result r;
    struct gs_elastic_params q = *p;
    q.series = NULL; /* the probes need no duty cycle: only the size found is measured */
    int rc = gs_elastic_run(dm, end_s, &q, hi, out, d);
    while (!rc && lo < hi) { /* invariant: no replica waits on hi nodes, or hi is the top */
        int64_t mid = lo + (hi - lo) / 2;
        rc = gs_elastic_run(dm, end_s, &q, mid, &r, d);
        if (!rc && r.waited == 0) {
            hi = mid;
            *out = r;
        } else {
            lo = mid + 1;
        }
    }
    if (!rc && p->series)
        rc = gs_elastic_run(dm, end_s, p, hi, out, d);
    return rc ? rc : hi;
}
