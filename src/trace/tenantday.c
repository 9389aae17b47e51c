/*
 * The tenant-day scenario: the seeds' three tenants and four workload kinds (seed 004 section 1.1)
 * on a two-zone cluster built from the topology of seed 000 section 1.1, written as YAML.
 *
 * Plan: split the node count over five node templates and two zones; split the pod count over the
 * four kinds; draw every job (a pod, or a gang of pods) with its arrival from the kind's daily
 * shape; stretch the durations of the batch kinds (training, HPO) so the day asks for LOAD_PERMILLE
 * of the cluster's GPU time; sort by arrival; write. All arithmetic is integer, all randomness
 * comes from one gs_rng stream drawn in a fixed order, so the bytes depend on the parameters only.
 */
#include "gpusched/tenantday.h"

#include "gpusched/diag.h"
#include "gpusched/rng.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NTMPL   5
#define NMODEL  4
#define NTENANT 3
#define NPROF   3

#define LOAD_PERMILLE     1500 /* GPU time asked for over the horizon, per mille of capacity */
#define STANDING_PERMILLE 250  /* at most this share of capacity goes to all-day replicas */
/* Mean milli-GPU of an inference replica: 80 % at 0.3 of a card, 20 % at 1.25 cards. */
#define REPLICA_MILLI_MEAN   490
#define SCALE_MIN_PERMILLE   100 /* batch durations stretch between 0.1x and 8x of their base */
#define SCALE_MAX_PERMILLE   8000
#define BURST_S              2700 /* an HPO sweep's trials arrive within 45 minutes */
#define STANDING_WINDOW_S    600  /* all-day replicas arrive in the first ten minutes */
#define CARRY_PERMILLE       900  /* training waiting at midnight, per mille of capacity */
#define CARRY_WINDOW_S       300  /* the overnight queue is restated in the first five minutes */
#define MAX_BURSTS           (GS_TENANTDAY_HOURS_MAX / 4 + 1)
#define TIMESLICE_REPLICAS   4           /* --sharing timeslice: replicas per card */
#define ELASTIC_CHECKPOINT_S 1800        /* an elastic gang's pods save their state every 30 min */
#define TRAFFIC_MAX          (1LL << 40) /* an hour's traffic: x 10^6 replicas stays in 64 bits */

/* Seed 000 section 1.1: AZ -> node -> PCIe domain -> NVLink group -> GPU. */
struct tmpl {
    const char *name, *shortname, *model; /* model: catalog name */
    int model_idx;                        /* into models[] */
    unsigned gpus, cpu_milli, memory_mib;
    const char *pcie, *nvlink; /* flow sequences of GPU indexes; nvlink NULL = none */
    unsigned weight;           /* nodes of this template per 16 */
};

static const struct tmpl tmpls[NTMPL] = {
    /* HGX boards: NVSwitch joins all eight cards; two PCIe switches of four. */
    {"hgx-a100-80", "a100", "A100-SXM4-80GB", 0, 8, 256000, 1048576, "[[0,1,2,3],[4,5,6,7]]",
     "[[0,1,2,3,4,5,6,7]]", 8},
    {"hgx-h100-80", "h100", "H100-SXM5-80GB", 1, 8, 224000, 2097152, "[[0,1,2,3],[4,5,6,7]]",
     "[[0,1,2,3,4,5,6,7]]", 2},
    /* PCIe cards bridged in pairs: each PCIe domain holds two NVLink groups, the seed's tree. */
    {"nvl-h100-94", "h100nvl", "H100-NVL-94GB", 2, 8, 192000, 1048576, "[[0,1,2,3],[4,5,6,7]]",
     "[[0,1],[2,3],[4,5],[6,7]]", 2},
    {"pcie-l40s-8", "l40s8", "L40S", 3, 8, 128000, 1048576, "[[0,1,2,3],[4,5,6,7]]", NULL, 2},
    {"pcie-l40s-4", "l40s4", "L40S", 3, 4, 64000, 524288, "[[0,1],[2,3]]", NULL, 2},
};

/* GPUQuota keys, spelled as seed 000 section 1.2 does (a100-80gb, h100); each is a catalog alias.
 */
static const char *const models[NMODEL] = {"a100-80gb", "h100", "h100-nvl", "l40s"};

struct tenant {
    const char *name, *tier, *prio_class;
    unsigned priority;      /* topology-gpu-policy tenants map (seed 000 section 3.1) */
    unsigned dedicated_pct; /* of each model's cards; the three sum to 80 % */
    unsigned max_gpus_per_pod, max_pods_per_user, pods_per_user;
    char letter;
};

static const struct tenant tenants[NTENANT] = {
    {"tenant-a", "nvlink", "normal", 100, 40, 8, 32, 24, 'a'},
    {"tenant-b", "pcie", "medium", 80, 25, 4, 16, 12, 'b'},
    {"tenant-c", "node", "high", 50, 15, 2, 64, 48, 'c'},
};

enum prof { PROF_NIGHT, PROF_DAY, PROF_ALLDAY };

/* Arrival weight per hour of the day (00-23), repeated for longer horizons. */
static const uint8_t hourly[NPROF][24] = {
    [PROF_NIGHT] = {100, 100, 100, 100, 100, 90, 70, 40, 20, 10, 10,  10,
                    10,  10,  10,  10,  15,  20, 30, 50, 70, 90, 100, 100},
    [PROF_DAY] = {3,  2,  2,   2,   2,  3,  5,  15, 50, 90, 100, 100,
                  60, 90, 100, 100, 90, 70, 40, 25, 20, 15, 8,   5},
    [PROF_ALLDAY] = {30,  20,  15,  15,  15,  20,  35, 60, 85, 100, 100, 100,
                     100, 100, 100, 100, 100, 100, 95, 90, 80, 65,  50,  40},
};

struct kind {
    const char *label, *prefix, *queue, *prio_class;
    int tenant;
    unsigned pod_pct; /* share of the pods */
    unsigned util_lo, util_hi;
    int scaled; /* durations stretched to reach LOAD_PERMILLE */
};

static const struct kind kinds[GS_WORKLOAD_KINDS] = {
    [GS_WORKLOAD_TRAINING] = {"training", "train", "data-team", "normal", 0, 25, 80, 95, 1},
    [GS_WORKLOAD_INTERACTIVE] = {"interactive", "exp", "algo-team", "medium", 1, 35, 10, 40, 0},
    [GS_WORKLOAD_INFERENCE] = {"inference", "infer", "online-inference", "high", 2, 20, 20, 40, 0},
    [GS_WORKLOAD_HPO] = {"hpo", "hpo", "batch-hpo", "low", 0, 20, 70, 90, 1},
};

/* One job: a pod, or a gang of `members` equal pods. */
struct job {
    uint32_t arrival_s, duration_s;
    uint32_t seq;        /* draw order: the tie-break of equal arrivals */
    uint32_t user;       /* index within the tenant */
    uint32_t gpumem_mib; /* per pod; 0 = whole cards */
    uint8_t kind, members, gpus, cores, util, standing;
};
_Static_assert(sizeof(struct job) == 28, "the header promises 28 bytes per pod");

struct gen {
    struct gs_rng rng;
    const struct gs_tenantday_params *p;
    uint32_t horizon_s;
    uint32_t count[NTMPL][2]; /* nodes per template and zone */
    uint32_t nodes, gpus, model_gpus[NMODEL];
    uint32_t budget[GS_WORKLOAD_KINDS], users[NTENANT], standing_left;
    uint64_t carry_left_milli; /* overnight training queue still to draw */
    uint32_t carry_pods_left;
    uint64_t cum[NPROF][GS_TENANTDAY_HOURS_MAX]; /* running sums of the hourly weights */
    uint32_t burst[MAX_BURSTS], nbursts;
    struct job *jobs;
    size_t njobs;
    struct span { /* elastic inference: the replicas' lives, in the order they are drawn */
        uint32_t start, end;
    } * elastic;
    uint32_t nelastic, next_elastic;
    uint64_t fixed_ms, scalable_ms; /* milli-GPU x seconds, before stretching */
};

const char *const gs_tenantday_sharing_names[GS_TENANTDAY_SHARINGS] = {"slices", "mig",
                                                                       "timeslice"};

/* uses() - whether either kind of fractional pod shares cards the way @s. */
static int uses(const struct gs_tenantday_params *p, enum gs_tenantday_sharing s)
{
    return p->sharing[0] == s || p->sharing[1] == s;
}

void gs_tenantday_defaults(struct gs_tenantday_params *p)
{
    *p = (struct gs_tenantday_params){.nodes = 64,
                                      .pods = 2000,
                                      .hours = 24,
                                      .seed = 42,
                                      .checkpoint_s = GS_TENANTDAY_CHECKPOINT_S};
}

int gs_tenantday_check(const struct gs_tenantday_params *p, struct gs_diag *d)
{
    if (p->nodes < 1 || p->nodes > GS_TENANTDAY_NODES_MAX)
        return gs_diag_error(d, "nodes: %" PRIu32 " is outside 1..%d", p->nodes,
                             GS_TENANTDAY_NODES_MAX);
    if (p->pods < 1 || p->pods > GS_TENANTDAY_PODS_MAX)
        return gs_diag_error(d, "pods: %" PRIu32 " is outside 1..%d", p->pods,
                             GS_TENANTDAY_PODS_MAX);
    if (p->hours < 1 || p->hours > GS_TENANTDAY_HOURS_MAX)
        return gs_diag_error(d, "hours: %" PRIu32 " is outside 1..%d", p->hours,
                             GS_TENANTDAY_HOURS_MAX);
    int64_t peak = 0;
    for (uint32_t h = 0; p->traffic && h < p->ntraffic && h < GS_TENANTDAY_HOURS_MAX; h++) {
        if (p->traffic[h] < 0 || p->traffic[h] > TRAFFIC_MAX)
            return gs_diag_error(d, "traffic: hour %" PRIu32 " is %" PRId64 ", outside 0..2^40", h,
                                 p->traffic[h]);
        peak = p->traffic[h] > peak ? p->traffic[h] : peak;
    }
    if (p->traffic && (p->ntraffic < 1 || p->ntraffic > GS_TENANTDAY_HOURS_MAX))
        return gs_diag_error(d, "traffic: %" PRIu32 " hours: want 1..%d", p->ntraffic,
                             GS_TENANTDAY_HOURS_MAX);
    if (p->traffic && peak == 0)
        return gs_diag_error(d, "traffic: %" PRIu32 " hours, none above 0: want some traffic",
                             p->ntraffic);
    for (int k = 0; k < 2; k++)
        if ((unsigned)p->sharing[k] >= GS_TENANTDAY_SHARINGS)
            return gs_diag_error(d, "sharing: %d is not slices, mig or timeslice",
                                 (int)p->sharing[k]);
    return 0;
}

/* Split @total by @weight[0..n) (summing to @wsum) with the largest remainders, ties to the first.
 */
static void apportion(uint32_t total, const unsigned *weight, unsigned wsum, uint32_t *out, int n)
{
    uint32_t given = 0;
    uint64_t rem[8];
    for (int i = 0; i < n; i++) {
        out[i] = (uint32_t)((uint64_t)total * weight[i] / wsum);
        rem[i] = (uint64_t)total * weight[i] % wsum;
        given += out[i];
    }
    for (; given < total; given++) {
        int best = 0;
        for (int i = 1; i < n; i++)
            if (rem[i] > rem[best])
                best = i;
        out[best]++;
        rem[best] = 0;
    }
}

static uint32_t div_up(uint32_t a, uint32_t b)
{
    return a / b + (a % b != 0);
}

static void plan_cluster(struct gen *g)
{
    unsigned w[NTMPL];
    uint32_t per[NTMPL];
    for (int t = 0; t < NTMPL; t++)
        w[t] = tmpls[t].weight;
    apportion(g->p->nodes, w, 16, per, NTMPL);
    for (int t = 0; t < NTMPL; t++) {
        g->count[t][0] = div_up(per[t], 2); /* az-1 takes the odd node */
        g->count[t][1] = per[t] / 2;
        g->nodes += per[t];
        g->gpus += per[t] * tmpls[t].gpus;
        g->model_gpus[tmpls[t].model_idx] += per[t] * tmpls[t].gpus;
    }
}

static void plan_pods(struct gen *g)
{
    unsigned w[GS_WORKLOAD_KINDS];
    uint32_t tenant_pods[NTENANT] = {0};
    for (int k = 0; k < GS_WORKLOAD_KINDS; k++)
        w[k] = kinds[k].pod_pct;
    apportion(g->p->pods, w, 100, g->budget, GS_WORKLOAD_KINDS);
    for (int k = 0; k < GS_WORKLOAD_KINDS; k++)
        tenant_pods[kinds[k].tenant] += g->budget[k];
    for (int t = 0; t < NTENANT; t++)
        g->users[t] = tenant_pods[t] ? div_up(tenant_pods[t], tenants[t].pods_per_user) : 1;
    /* Three replicas in four serve all day, on no more than STANDING_PERMILLE of the cards. */
    uint64_t cap = (uint64_t)g->gpus * STANDING_PERMILLE / REPLICA_MILLI_MEAN;
    g->standing_left = g->budget[GS_WORKLOAD_INFERENCE] / 4 * 3;
    if (g->standing_left > cap)
        g->standing_left = (uint32_t)cap;
    /* The day starts with the queue a running cluster has at midnight, not an empty one. */
    g->carry_left_milli = (uint64_t)g->gpus * CARRY_PERMILLE;
    g->carry_pods_left = g->budget[GS_WORKLOAD_TRAINING] / 2;
}

/* Elastic inference: replicas at hour @h out of @n at the traffic's peak. */
static uint32_t replicas_at(const struct gs_tenantday_params *p, int64_t peak, uint32_t n,
                            uint32_t h)
{
    if (n == 0)
        return 0;
    int64_t t = p->traffic[h % p->ntraffic];
    uint64_t need = ((uint64_t)n * (uint64_t)t + (uint64_t)peak - 1) / (uint64_t)peak; /* < 2^60 */
    return need < 1 ? 1 : (uint32_t)need;
}

/* Replicas started over the horizon with @n at the peak: each rise of the count starts some. */
static uint64_t started(const struct gs_tenantday_params *p, int64_t peak, uint32_t n)
{
    uint64_t sum = 0;
    for (uint32_t h = 0, prev = 0; h < p->hours; h++) {
        uint32_t k = replicas_at(p, peak, n, h);
        sum += k > prev ? k - prev : 0;
        prev = k;
    }
    return sum;
}

/* The lives of the elastic replicas: the most at the peak whose starts fit the @budget pods;
 * a rise starts replicas within its first minutes, a fall ends the newest first. */
static int plan_elastic(struct gen *g, uint32_t budget)
{
    const struct gs_tenantday_params *p = g->p;
    int64_t peak = 0;
    for (uint32_t h = 0; h < p->ntraffic; h++)
        peak = p->traffic[h] > peak ? p->traffic[h] : peak;
    uint32_t lo = 0, hi = budget; /* started() grows with n: the largest n that fits */
    while (lo < hi) {
        uint32_t mid = hi - (hi - lo) / 2;
        if (started(p, peak, mid) <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    uint32_t *open = malloc((lo ? lo : 1) * sizeof(*open)), depth = 0;
    g->elastic = malloc((budget ? budget : 1) * sizeof(*g->elastic));
    if (!open || !g->elastic) {
        free(open);
        return -ENOMEM;
    }
    for (uint32_t h = 0; h <= p->hours; h++) {
        uint32_t k = h < p->hours ? replicas_at(p, peak, lo, h) : 0;
        for (; depth > k; depth--) /* the newest replica ends first */
            g->elastic[g->nelastic++] = (struct span){open[depth - 1], h * 3600};
        for (; depth < k; depth++)
            open[depth] = h * 3600 + (uint32_t)gs_rng_below(&g->rng, STANDING_WINDOW_S);
    }
    free(open);
    g->standing_left = g->nelastic;
    return 0;
}

static void plan_arrivals(struct gen *g)
{
    for (int pr = 0; pr < NPROF; pr++) {
        uint64_t sum = 0;
        for (uint32_t h = 0; h < g->p->hours; h++)
            g->cum[pr][h] = sum += hourly[pr][h % 24];
    }
    g->nbursts = div_up(g->p->hours, 4);
    uint32_t span = g->horizon_s - BURST_S; /* the horizon is at least 3600 s */
    for (uint32_t b = 0; b < g->nbursts; b++)
        g->burst[b] = (uint32_t)gs_rng_below(&g->rng, span);
}

/* An arrival second drawn from profile @pr: an hour by its weight, then a second in it. */
static uint32_t draw_arrival(struct gen *g, enum prof pr)
{
    const uint64_t *cum = g->cum[pr];
    uint32_t hours = g->p->hours;
    uint64_t x = gs_rng_below(&g->rng, cum[hours - 1]);
    uint32_t lo = 0, hi = hours - 1;
    while (lo < hi) { /* the first hour whose running sum exceeds x */
        uint32_t mid = lo + (hi - lo) / 2;
        if (cum[mid] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo * 3600 + (uint32_t)gs_rng_below(&g->rng, 3600);
}

/* An index into @w[0..n) drawn with probability proportional to its weight. */
static unsigned pick(struct gen *g, const unsigned *w, unsigned n)
{
    unsigned sum = 0;
    for (unsigned i = 0; i < n; i++)
        sum += w[i];
    unsigned x = (unsigned)gs_rng_below(&g->rng, sum);
    unsigned i = 0;
    while (x >= w[i])
        x -= w[i++];
    return i;
}

static uint32_t between(struct gen *g, uint32_t lo, uint32_t hi)
{
    return lo + (uint32_t)gs_rng_below(&g->rng, (uint64_t)hi - lo + 1);
}

/* Data team: 2-8 cards; single pods of 2, 4 or 8 cards, or gangs of 2x2, 2x4, 4x2; nights. */
static void shape_training(struct gen *g, struct job *j)
{
    static const unsigned single_w[] = {3, 3, 4}, single_gpus[] = {2, 4, 8};
    static const unsigned gang_members[] = {2, 2, 4}, gang_gpus[] = {2, 4, 2};
    if (gs_rng_below(&g->rng, 100) < 35) {
        unsigned s = (unsigned)gs_rng_below(&g->rng, 3);
        j->members = (uint8_t)gang_members[s];
        j->gpus = (uint8_t)gang_gpus[s];
    } else {
        j->members = 1;
        j->gpus = (uint8_t)single_gpus[pick(g, single_w, 3)];
    }
    uint64_t milli = (uint64_t)j->members * j->gpus * 1000;
    if (g->carry_left_milli > 0 && g->carry_pods_left >= j->members) {
        /* Submitted the evening before, still waiting at midnight. */
        g->carry_left_milli -= milli < g->carry_left_milli ? milli : g->carry_left_milli;
        g->carry_pods_left -= j->members;
        j->arrival_s = (uint32_t)gs_rng_below(&g->rng, CARRY_WINDOW_S);
    } else {
        j->arrival_s = draw_arrival(g, PROF_NIGHT);
    }
    j->duration_s = between(g, 3600, 8 * 3600);
}

/* Algorithm team: 1-4 cards by day; 55 % ask for a fraction of one card (memory and cores). */
static void shape_interactive(struct gen *g, struct job *j)
{
    static const unsigned whole_w[] = {5, 3, 2}, whole_gpus[] = {1, 2, 4};
    j->members = 1;
    if (gs_rng_below(&g->rng, 100) < 55) {
        j->gpus = 1;
        j->gpumem_mib = 4096 * between(g, 1, 4); /* up to light-training's 16Gi */
        j->cores = (uint8_t)(10 * between(g, 1, 5));
    } else {
        j->gpus = (uint8_t)whole_gpus[pick(g, whole_w, 3)];
    }
    j->arrival_s = draw_arrival(g, PROF_DAY);
    j->duration_s = between(g, 1800, 4 * 3600);
}

/* Online inference: 1-2 cards; 80 % of replicas take 20 GiB (some 10 GiB) and 20-40 % cores. */
static void shape_inference(struct gen *g, struct job *j)
{
    static const unsigned cores_w[] = {1, 2, 1}, whole_w[] = {3, 1};
    j->members = 1;
    if (gs_rng_below(&g->rng, 100) < 80) {
        j->gpus = 1;
        j->gpumem_mib = gs_rng_below(&g->rng, 4) ? 20480 : 10240;
        j->cores = (uint8_t)(20 + 10 * pick(g, cores_w, 3));
    } else {
        j->gpus = (uint8_t)(1 + pick(g, whole_w, 2));
    }
    if (g->standing_left > 0 && g->elastic) { /* a replica that follows the traffic */
        const struct span *sp = &g->elastic[g->next_elastic++];
        g->standing_left--;
        j->standing = 1;
        j->arrival_s = sp->start;
        j->duration_s = sp->end - sp->start;
        return;
    }
    if (g->standing_left > 0) { /* a replica that serves all day */
        g->standing_left--;
        j->standing = 1;
        j->arrival_s = (uint32_t)gs_rng_below(&g->rng, STANDING_WINDOW_S);
        j->duration_s = g->horizon_s - j->arrival_s; /* > 0: the horizon is at least 1 h */
        return;
    }
    j->arrival_s = draw_arrival(g, PROF_ALLDAY); /* scale-out with the day's traffic */
    j->duration_s = between(g, 1800, 4 * 3600);
}

/* HPO/NAS: a sweep's trials, gangs of 4-16 cards, arrive together in a burst. */
static void shape_hpo(struct gen *g, struct job *j)
{
    static const unsigned members[] = {4, 2, 4, 2, 4, 8}, gpus[] = {1, 2, 2, 4, 4, 2};
    unsigned s = (unsigned)gs_rng_below(&g->rng, 6);
    j->members = (uint8_t)members[s];
    j->gpus = (uint8_t)gpus[s];
    /* Bursts start before horizon - BURST_S, so every trial arrives inside the horizon. */
    uint32_t b = g->burst[gs_rng_below(&g->rng, g->nbursts)];
    j->arrival_s = b + (uint32_t)gs_rng_below(&g->rng, BURST_S);
    j->duration_s = between(g, 900, 7200);
}

/* milli-GPU one pod of @j holds: whole cards, or its compute share. */
static uint64_t pod_milli(const struct job *j)
{
    return j->gpumem_mib ? (uint64_t)j->cores * 10 : (uint64_t)j->gpus * 1000;
}

static void draw_jobs(struct gen *g)
{
    static void (*const shape[GS_WORKLOAD_KINDS])(struct gen *, struct job *) = {
        shape_training, shape_interactive, shape_inference, shape_hpo};
    for (int k = 0; k < GS_WORKLOAD_KINDS; k++) {
        const struct kind *kd = &kinds[k];
        while (g->budget[k] > 0) {
            struct job *j = &g->jobs[g->njobs];
            *j = (struct job){.kind = (uint8_t)k, .seq = (uint32_t)g->njobs};
            shape[k](g, j);
            if (j->members > g->budget[k]) /* the last gang of the kind shrinks to fit */
                j->members = (uint8_t)g->budget[k];
            g->budget[k] -= j->members;
            j->util = (uint8_t)between(g, kd->util_lo, kd->util_hi);
            j->user = (uint32_t)gs_rng_below(&g->rng, g->users[kd->tenant]);
            uint64_t ms = pod_milli(j) * j->members * j->duration_s;
            if (kd->scaled)
                g->scalable_ms += ms;
            else
                g->fixed_ms += ms;
            g->njobs++;
        }
    }
}

/* Stretch batch durations so the day asks for LOAD_PERMILLE of capacity; round to minutes. */
static void scale_durations(struct gen *g)
{
    /* milli-GPU x seconds; at most 750,000 GPUs x 604,800 s x 1500, times 1000 below: < 2^63 */
    uint64_t target = (uint64_t)g->gpus * g->horizon_s * LOAD_PERMILLE;
    uint64_t f = SCALE_MIN_PERMILLE;
    if (g->scalable_ms > 0 && target > g->fixed_ms)
        f = (target - g->fixed_ms) * 1000 / g->scalable_ms;
    if (f < SCALE_MIN_PERMILLE)
        f = SCALE_MIN_PERMILLE;
    if (f > SCALE_MAX_PERMILLE)
        f = SCALE_MAX_PERMILLE;
    for (size_t i = 0; i < g->njobs; i++) {
        struct job *j = &g->jobs[i];
        if (j->standing)
            continue;
        uint64_t d = kinds[j->kind].scaled ? (uint64_t)j->duration_s * f / 1000 : j->duration_s;
        d = (d + 30) / 60 * 60;
        if (d > g->horizon_s)
            d = g->horizon_s;
        j->duration_s = d < 60 ? 60 : (uint32_t)d;
    }
}

static int by_arrival(const void *a, const void *b)
{
    const struct job *x = a, *y = b;
    if (x->arrival_s != y->arrival_s)
        return x->arrival_s < y->arrival_s ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---- writing --------------------------------------------------------------------------------- */

/* "2h", "90m" or "45s": the largest unit that states @s exactly. */
static void fmt_duration(char *buf, size_t cap, uint32_t s)
{
    if (s % 3600 == 0)
        snprintf(buf, cap, "%" PRIu32 "h", s / 3600);
    else if (s % 60 == 0)
        snprintf(buf, cap, "%" PRIu32 "m", s / 60);
    else
        snprintf(buf, cap, "%" PRIu32 "s", s);
}

static void write_simulation(FILE *f, const struct gen *g)
{
    const struct gs_tenantday_params *p = g->p;
    fprintf(f,
            "# gpusched generate tenant-day --nodes %" PRIu32 " --pods %" PRIu32 " --hours %" PRIu32
            " --seed %" PRIu64 "\n",
            p->nodes, p->pods, p->hours, p->seed);
    if (p->elastic)
        fprintf(f, "#   --elastic\n");
    if (p->checkpoint_s != GS_TENANTDAY_CHECKPOINT_S) {
        char every[16] = "none";
        if (p->checkpoint_s)
            fmt_duration(every, sizeof(every), p->checkpoint_s);
        fprintf(f, "#   --checkpoint %s\n", every);
    }
    if (p->sharing[0] != GS_TENANTDAY_SLICES || p->sharing[1] != GS_TENANTDAY_SLICES)
        fprintf(f, "#   --sharing %s/%s\n", gs_tenantday_sharing_names[p->sharing[0]],
                gs_tenantday_sharing_names[p->sharing[1]]);
    fprintf(f,
            "---\napiVersion: sim.gpusched.io/v1alpha1\nkind: Simulation\n"
            "metadata:\n  name: tenant-day\n"
            "spec:\n  compare: [exclusive, sharing, full]\n  horizon: \"%" PRIu32 "h\"\n",
            p->hours);
}

static unsigned digits(uint32_t n)
{
    unsigned k = 1;
    while (n >= 10) {
        n /= 10;
        k++;
    }
    return k;
}

static void write_cluster(FILE *f, const struct gen *g)
{
    fprintf(f, "---\napiVersion: gpusched.io/v1alpha1\nkind: Cluster\n"
               "metadata:\n  name: tenant-day\nspec:\n  nodeTemplates:\n");
    for (int t = 0; t < NTMPL; t++) {
        const struct tmpl *tp = &tmpls[t];
        if (g->count[t][0] == 0)
            continue;
        fprintf(f,
                "    - name: %s\n      gpuModel: %s\n      gpus: %u\n      cpuMilli: %u\n"
                "      memoryMiB: %u\n      pcieDomains: %s\n",
                tp->name, tp->model, tp->gpus, tp->cpu_milli, tp->memory_mib, tp->pcie);
        if (tp->nvlink)
            fprintf(f, "      nvlinkGroups: %s\n", tp->nvlink);
        if (uses(g->p, GS_TENANTDAY_TIMESLICE))
            fprintf(f, "      timeSlicing: {replicas: %d}\n", TIMESLICE_REPLICAS);
    }
    fprintf(f, "  nodes:\n");
    for (int z = 0; z < 2; z++)
        for (int t = 0; t < NTMPL; t++) {
            uint32_t n = g->count[t][z];
            if (n == 0)
                continue;
            int w = (int)(digits(n) < 2 ? 2 : digits(n));
            /* Quoted: '[' may not start inside a plain scalar of a flow mapping. */
            fprintf(f,
                    "    - {name: \"az%d-%s-[%0*d-%0*" PRIu32 "]\", zone: az-%d, template: %s}\n",
                    z + 1, tmpls[t].shortname, w, 1, w, n, z + 1, tmpls[t].name);
        }
}

static uint32_t dedicated(const struct gen *g, int t, int m)
{
    return g->model_gpus[m] * tenants[t].dedicated_pct / 100;
}

/* Seed 000 section 3.1, the tiers as they are; each tenant's gpuCount is its dedicated cards. */
static void write_topology_policy(FILE *f, const struct gen *g)
{
    fprintf(f, "---\napiVersion: v1\nkind: ConfigMap\n"
               "metadata:\n  name: topology-gpu-policy\n  namespace: kube-system\n"
               "data:\n  policy.yaml: |\n"
               "    scheduling:\n"
               "      nvlink:\n        strategy: colocate\n        sharing: false\n"
               "        isolation: exclusive\n        maxSkew: 0\n"
               "      pcie:\n        strategy: prefer-colocate\n        sharing: true\n"
               "        overcommit: 1.3\n        isolation: soft\n"
               "      node:\n        strategy: spread\n        sharing: true\n"
               "        overcommit: 1.5\n        isolation: soft\n"
               "      az:\n        strategy: spread\n        sharing: false\n"
               "        isolation: hard\n"
               "    tenants:\n");
    for (int t = 0; t < NTENANT; t++) {
        uint32_t count = 0;
        for (int m = 0; m < NMODEL; m++)
            count += dedicated(g, t, m);
        fprintf(f,
                "      %s:\n        topology: %s\n        gpuCount: %" PRIu32 "\n"
                "        priority: %u\n",
                tenants[t].name, tenants[t].tier, count, tenants[t].priority);
    }
}

/* Seed 000 section 1.2: dedicated cards sum to 80 % of each model; shared reaches the rest. */
static void write_quotas(FILE *f, const struct gen *g)
{
    for (int t = 0; t < NTENANT; t++) {
        const struct tenant *tn = &tenants[t];
        fprintf(f,
                "---\napiVersion: gpu.example.com/v1\nkind: GPUQuota\n"
                "metadata:\n  name: %s-gpu-quota\n  namespace: %s\n"
                "spec:\n  tenant: %s\n  priorityClass: %s\n  quotas:\n",
                tn->name, tn->name, tn->name, tn->prio_class);
        for (int m = 0; m < NMODEL; m++) {
            uint32_t total = g->model_gpus[m], ded = dedicated(g, t, m);
            if (total == 0)
                continue;
            fprintf(f,
                    "    %s:\n      total: %" PRIu32 "\n      dedicated: %" PRIu32
                    "\n      shared: %" PRIu32 "\n",
                    models[m], total, ded, total - ded);
        }
        fprintf(f,
                "  limits:\n    maxGPUsPerPod: %u\n    maxPodsPerUser: %u\n"
                "  schedulingPolicy:\n    topologyAwareness: true\n    gangScheduling: true\n"
                "    binPacking: true\n",
                tn->max_gpus_per_pod, tn->max_pods_per_user);
    }
}

/*
 * Seed 004 section 2.1: each queue may grow to the whole cluster; weights set deserved shares.
 * Reclaimable as seed 004 section 1.1's tolerance column says: the team that can wait and the
 * preemptible batch give back; interactive experiments and latency-bound inference do not.
 */
static void write_queues(FILE *f, const struct gen *g)
{
    static const struct {
        const char *name, *overcommit;
        unsigned weight;
        const char *reclaimable;
    } q[] = {
        {"data-team", NULL, 4, "true"},
        {"algo-team", "1.3", 3, "false"},
        {"online-inference", "1.5", 2, "false"},
        {"batch-hpo", NULL, 1, "true"},
    };
    uint64_t cpu = 0, mem_mib = 0;
    for (int t = 0; t < NTMPL; t++) {
        uint64_t n = (uint64_t)g->count[t][0] + g->count[t][1];
        cpu += n * tmpls[t].cpu_milli / 1000;
        mem_mib += n * tmpls[t].memory_mib;
    }
    for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
        fprintf(f,
                "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                "metadata:\n  name: %s\nspec:\n  weight: %u\n  capability:\n"
                "    nvidia.com/gpu: \"%" PRIu32 "\"\n    cpu: \"%" PRIu64 "\"\n"
                "    memory: \"%" PRIu64 "Gi\"\n  reclaimable: %s\n",
                q[i].name, q[i].weight, g->gpus, cpu, mem_mib / 1024, q[i].reclaimable);
        if (q[i].overcommit)
            fprintf(f, "  overcommitRatio:\n    nvidia.com/gpu: %s\n", q[i].overcommit);
    }
}

static void write_priority_classes(FILE *f)
{
    static const struct {
        const char *name;
        unsigned value;
        const char *policy, *what;
    } pc[] = {
        {"high", 1000, "PreemptLowerPriority", "online inference (latency-sensitive)"},
        {"medium", 600, "PreemptLowerPriority", "interactive experiments"},
        {"normal", 400, "PreemptLowerPriority", "training that can wait"},
        {"low", 100, "Never", "preemptible HPO/NAS sweeps"},
    };
    for (size_t i = 0; i < sizeof(pc) / sizeof(pc[0]); i++)
        fprintf(f,
                "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                "metadata:\n  name: %s\nvalue: %u\npreemptionPolicy: %s\n"
                "description: \"%s\"\n",
                pc[i].name, pc[i].value, pc[i].policy, pc[i].what);
}

/* Seed 004 section 1.2, as it is. */
static void write_profiles(FILE *f)
{
    static const struct {
        const char *name, *share, *mem, *ratio;
        unsigned prio;
        const char *preempt;
    } pr[] = {
        {"data-loading", "true", "8Gi", "2.0", 50, "true"},
        {"light-training", "true", "16Gi", "1.5", 100, "false"},
        {"heavy-training", "false", "80Gi", "1.0", 200, "false"},
        {"inference", "true", "20Gi", "1.3", 300, "false"},
    };
    fprintf(f, "---\napiVersion: v1\nkind: ConfigMap\n"
               "metadata:\n  name: kubeflow-gpu-profiles\n  namespace: kubeflow\n"
               "data:\n  profiles.yaml: |\n    profiles:\n");
    for (size_t i = 0; i < sizeof(pr) / sizeof(pr[0]); i++)
        fprintf(f,
                "%s      - name: \"%s\"\n        gpuShare: %s\n        maxMemory: \"%s\"\n"
                "        overcommitRatio: %s\n        priority: %u\n        preemptible: %s\n",
                i ? "\n" : "", pr[i].name, pr[i].share, pr[i].mem, pr[i].ratio, pr[i].prio,
                pr[i].preempt);
}

static const char *pod_profile(const struct job *j)
{
    switch (j->kind) {
    case GS_WORKLOAD_TRAINING:
        return "heavy-training";
    case GS_WORKLOAD_INTERACTIVE:
        return j->gpumem_mib ? "light-training" : NULL;
    case GS_WORKLOAD_INFERENCE:
        return j->gpumem_mib ? "inference" : NULL;
    default:
        return NULL; /* HPO trials: whole cards, no step profile matches */
    }
}

/* Required topology tier: where a pod spans cards, and for every HPO trial (a gang's members
 * spread over nodes, whatever their cards; without one they would take tenant-a's nvlink). */
static const char *pod_tier(const struct job *j)
{
    if (j->kind == GS_WORKLOAD_HPO)
        return "node";
    if (j->gpumem_mib || j->gpus < 2)
        return NULL;
    switch (j->kind) {
    case GS_WORKLOAD_TRAINING:
        return "nvlink";
    case GS_WORKLOAD_INTERACTIVE:
        return "pcie";
    default:
        return "node";
    }
}

/* Host CPU cores and GiB per pod: 8 GiB per card as seed 004 section 2.2's training overrides. */
static void pod_host(const struct job *j, unsigned *cpu, unsigned *mem_gib)
{
    static const unsigned cpu_per_gpu[] = {8, 4, 8, 4};
    static const unsigned gib_per_gpu[] = {8, 8, 16, 8};
    if (j->gpumem_mib) {
        *cpu = j->kind == GS_WORKLOAD_INFERENCE ? 4 : 2;
        *mem_gib = j->kind == GS_WORKLOAD_INFERENCE ? 16 : 8;
        return;
    }
    *cpu = cpu_per_gpu[j->kind] * j->gpus;
    *mem_gib = gib_per_gpu[j->kind] * j->gpus;
}

/*
 * Elastic jobs (seed 000 §5): seed 004 §1.1 gives the data team's jobs 2-8 GPUs and the HPO/NAS
 * sweeps 4-16, so a gang runs from the low end of its kind's range (the members that hold 2, or
 * 4, GPUs: its minMember), its other members growing into free cards as Volcano's elastic
 * PodGroups do (--elastic; by default every gang is whole).
 */
static unsigned min_member(const struct gen *g, const struct job *j)
{
    unsigned lo = j->kind == GS_WORKLOAD_TRAINING ? 2 : 4;
    unsigned m = (lo + j->gpus - 1) / j->gpus;
    return !g->p->elastic || m > j->members ? j->members : m;
}

/*
 * How often @j's pods save their state, seconds (0: never): --checkpoint for training and HPO
 * (GS_TENANTDAY_CHECKPOINT_S by default); with --checkpoint none, still an elastic gang's
 * ELASTIC_CHECKPOINT_S, as elastic training must (PyTorch's torchrun restarts the workers from
 * their last checkpoint whenever the members change).
 */
static uint32_t checkpoint_of(const struct gen *g, const struct job *j)
{
    if (j->kind != GS_WORKLOAD_TRAINING && j->kind != GS_WORKLOAD_HPO)
        return 0;
    if (g->p->checkpoint_s)
        return g->p->checkpoint_s;
    return j->members > 1 && min_member(g, j) < j->members ? ELASTIC_CHECKPOINT_S : 0;
}

static void write_podgroup(FILE *f, const struct gen *g, const struct job *j, size_t id)
{
    const struct kind *kd = &kinds[j->kind];
    fprintf(f,
            "---\n{apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup,"
            " metadata: {name: %s-%06zu, namespace: %s},\n"
            "  spec: {minMember: %u, queue: %s, priorityClassName: %s}}\n",
            kd->prefix, id, tenants[kd->tenant].name, min_member(g, j), kd->queue, kd->prio_class);
}

/* The pod's GPU limits; a fraction of a card as --sharing asks for it. */
static void write_gpu_limits(FILE *f, const struct job *j, enum gs_tenantday_sharing sharing)
{
    if (!j->gpumem_mib)
        fprintf(f, "nvidia.com/gpu: %u", j->gpus);
    else if (sharing == GS_TENANTDAY_MIG)
        fprintf(f, "nvidia.com/mig-%s: 1", j->gpumem_mib <= 10240 ? "1g.10gb" : "2g.20gb");
    else
        fprintf(f, "nvidia.com/gpu%s: %u, nvidia.com/gpumem: %" PRIu32 ", nvidia.com/gpucores: %u",
                sharing == GS_TENANTDAY_TIMESLICE ? ".shared" : "", j->gpus, j->gpumem_mib,
                j->cores);
}

static void write_pod(FILE *f, const struct gen *g, const struct job *j, size_t id, unsigned member)
{
    const struct kind *kd = &kinds[j->kind];
    const struct tenant *tn = &tenants[kd->tenant];
    const char *profile = pod_profile(j), *tier = pod_tier(j);
    char name[48], dur[16];
    unsigned cpu, mem;
    if (j->members > 1)
        snprintf(name, sizeof(name), "%s-%06zu-%u", kd->prefix, id, member);
    else
        snprintf(name, sizeof(name), "%s-%06zu", kd->prefix, id);
    fmt_duration(dur, sizeof(dur), j->duration_s);
    pod_host(j, &cpu, &mem);
    fprintf(f,
            "---\n{apiVersion: v1, kind: Pod,\n  metadata: {name: %s, namespace: %s,"
            " labels: {user: user-%c%03" PRIu32 ", gpusched.io/workload: %s},\n    annotations: {",
            name, tn->name, tn->letter, j->user, kd->label);
    if (j->members > 1)
        fprintf(f, "scheduling.k8s.io/group-name: %s-%06zu, ", kd->prefix, id);
    fprintf(f, "scheduling.volcano.sh/queue-name: %s, ", kd->queue);
    if (tier)
        fprintf(f, "gpusched.io/topology: %s, ", tier);
    if (profile)
        fprintf(f, "gpusched.io/profile: %s, ", profile);
    uint32_t every_s = checkpoint_of(g, j);
    if (every_s) {
        char every[16];
        fmt_duration(every, sizeof(every), every_s);
        fprintf(f, "gpusched.io/checkpoint-interval: \"%s\", ", every);
    }
    fprintf(f,
            "sim.gpusched.io/arrival: \"%" PRIu32 "s\", sim.gpusched.io/duration: \"%s\","
            " sim.gpusched.io/gpu-util: \"%u\"}},\n  spec: {priorityClassName: %s,"
            " containers: [{name: main, resources: {limits: {",
            j->arrival_s, dur, j->util, kd->prio_class);
    write_gpu_limits(f, j, g->p->sharing[j->kind == GS_WORKLOAD_INFERENCE]);
    fprintf(f, ", cpu: \"%u\", memory: %uGi}}}]}}\n", cpu, mem);
}

/* The GPU time the day's pods ask for, per mille of the cluster's over the horizon (whole
 * durations, the hours past its end included). */
static uint32_t offered(const struct gen *g)
{
    uint64_t all = 0;
    for (size_t i = 0; i < g->njobs; i++)
        all += pod_milli(&g->jobs[i]) * g->jobs[i].members * g->jobs[i].duration_s;
    return (uint32_t)(all * 1000 / ((uint64_t)g->gpus * 1000 * g->horizon_s));
}

/* Add @j's pods to the hourly demand (milli-GPU x seconds per hour). */
static void account(const struct gen *g, const struct job *j, uint64_t *hour_ms)
{
    uint64_t milli = pod_milli(j) * j->members;
    uint64_t end = (uint64_t)j->arrival_s + j->duration_s;
    if (end > g->horizon_s)
        end = g->horizon_s;
    for (uint64_t t = j->arrival_s; t < end;) {
        uint64_t h = t / 3600, next = (h + 1) * 3600 < end ? (h + 1) * 3600 : end;
        hour_ms[h] += milli * (next - t);
        t = next;
    }
}

static int write_jobs(FILE *f, const struct gen *g, struct gs_tenantday_stats *st)
{
    uint64_t hour_ms[GS_TENANTDAY_HOURS_MAX] = {0};
    for (size_t i = 0; i < g->njobs; i++) {
        const struct job *j = &g->jobs[i];
        if (j->members > 1) {
            write_podgroup(f, g, j, i);
            st->podgroups++;
        }
        for (unsigned m = 0; m < j->members; m++)
            write_pod(f, g, j, i, m);
        st->pods += j->members;
        st->pods_by_kind[j->kind] += j->members;
        account(g, j, hour_ms);
        if (i % 1024 == 0 && ferror(f)) /* stop early on a full disk */
            return -EIO;
    }
    uint64_t cap_ms = (uint64_t)g->gpus * 1000;
    st->offered_permille = offered(g);
    for (uint32_t h = 0; h < g->p->hours; h++)
        st->hourly_permille[h] = (uint32_t)(hour_ms[h] * 1000 / (cap_ms * 3600));
    return 0;
}

/* --sharing mig: MIG on the 80 GB A100 and H100 boards, any profile (seed 000 section 2.2). */
static void write_mig_policy(FILE *f)
{
    fprintf(f, "---\napiVersion: nvidia.com/v1\nkind: GpuClusterPolicy\n"
               "metadata: {name: gpu-cluster-policy}\nspec:\n  mig: {strategy: mixed}\n"
               "  devices:\n    - {name: A100-SXM4-80GB, migEnabled: true}\n"
               "    - {name: H100-SXM5-80GB, migEnabled: true}\n");
}

static int write_all(FILE *f, struct gen *g, struct gs_tenantday_stats *st)
{
    write_simulation(f, g);
    write_cluster(f, g);
    write_topology_policy(f, g);
    write_quotas(f, g);
    write_queues(f, g);
    write_priority_classes(f);
    write_profiles(f);
    if (uses(g->p, GS_TENANTDAY_MIG))
        write_mig_policy(f);
    *st = (struct gs_tenantday_stats){.nodes = g->nodes, .gpus = g->gpus};
    int rc = write_jobs(f, g, st);
    if (rc == 0 && (fflush(f) != 0 || ferror(f)))
        rc = -EIO;
    return rc;
}

static void gen_free(struct gen *g)
{
    if (g) {
        free(g->jobs);
        free(g->elastic);
        free(g);
    }
}

/* The day of @p drawn, its batch durations not yet stretched. Return: it (gen_free()); NULL out
 * of memory. */
static struct gen *plan(const struct gs_tenantday_params *p)
{
    struct gen *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    g->p = p;
    g->horizon_s = p->hours * 3600;
    g->jobs = calloc(p->pods, sizeof(*g->jobs)); /* a job holds at least one pod */
    gs_rng_seed(&g->rng, p->seed);
    if (g->jobs) {
        plan_cluster(g);
        plan_pods(g);
    }
    if (!g->jobs || (p->traffic && plan_elastic(g, g->standing_left) < 0)) {
        gen_free(g);
        return NULL;
    }
    plan_arrivals(g);
    draw_jobs(g);
    return g;
}

/* Whether @pods pods of @p's day load it about as intended: their durations stretched, they ask
 * for LOAD_PERMILLE of its GPU time to within 5 %: at least that (@more: @p's pods were too few),
 * else at most. Return: 1 yes; 0 no; -1 out of memory. */
static int loads(const struct gs_tenantday_params *p, uint32_t pods, int more)
{
    struct gs_tenantday_params q = *p;
    q.pods = pods;
    struct gen *g = plan(&q);
    if (!g)
        return -1;
    scale_durations(g);
    uint32_t o = offered(g);
    gen_free(g);
    return more ? o >= LOAD_PERMILLE * 95 / 100 : o <= LOAD_PERMILLE * 105 / 100;
}

/*
 * fit_pods() - about how many pods load @p's cluster as intended (loads()): the fewest above
 * @p->pods when @more, else the most below, into *@count. Each count's day is drawn afresh — the
 * kinds' mix and gangs change with the count, so the load is not proportional to it: an
 * exponential search from @p->pods, then a bisection to 1 %, O(log pods) draws.
 * Return: 1 found; 0 none within 1..GS_TENANTDAY_PODS_MAX (*@count: that bound); -1 out of memory.
 */
static int fit_pods(const struct gs_tenantday_params *p, int more, uint32_t *count)
{
    uint32_t no = p->pods, yes; /* a count that does not load it, and one that does */
    int r;
    for (;;) {
        uint64_t next = more ? (uint64_t)no * 2 : no / 2;
        yes = (uint32_t)(next > GS_TENANTDAY_PODS_MAX ? GS_TENANTDAY_PODS_MAX : next ? next : 1);
        *count = yes;
        if (yes == no)
            return 0; /* not even at the options' bound */
        if ((r = loads(p, yes, more)) != 0)
            break;
        no = yes;
    }
    for (;;) {
        uint32_t lo = yes < no ? yes : no, hi = yes < no ? no : yes;
        if (r < 0 || hi - lo <= 1 + hi / 100)
            break;
        uint32_t mid = lo + (hi - lo) / 2; /* strictly between: hi - lo >= 2 */
        if ((r = loads(p, mid, more)) > 0)
            yes = mid;
        else if (r == 0)
            no = mid;
    }
    *count = yes;
    return r < 0 ? -1 : 1;
}

/* Batch durations stretch at most 8x: a cluster too big for the pods stays idle; say so, with
 * the pod count that would load it as intended (found by fit_pods()). */
static void warn_load(const struct gs_tenantday_stats *st, const struct gs_tenantday_params *p,
                      struct gs_diag *d)
{
    uint32_t o = st->offered_permille, fit;
    if (o >= 1000 && o <= 4 * LOAD_PERMILLE)
        return;
    int found = fit_pods(p, o < 1000, &fit);
    char how[128] = ""; /* out of memory to draw the others: the figure alone */
    if (found > 0)
        snprintf(how, sizeof(how), "; about %" PRIu32 " pods would load %" PRIu32 " node(s) so",
                 fit, p->nodes);
    else if (found == 0)
        snprintf(how, sizeof(how), "; even %" PRIu32 " pod(s), the %s --pods takes, would not", fit,
                 o < 1000 ? "most" : "fewest");
    gs_diag_warn(d,
                 "tenant-day: the pods ask for %" PRIu32 ".%02" PRIu32
                 "x the cluster's GPU time, not about %d.%dx%s",
                 o / 1000, o % 1000 / 10, LOAD_PERMILLE / 1000, LOAD_PERMILLE % 1000 / 100, how);
}

int gs_tenantday_write(FILE *f, const struct gs_tenantday_params *p, struct gs_tenantday_stats *st,
                       struct gs_diag *d)
{
    int rc = gs_tenantday_check(p, d);
    if (rc < 0)
        return rc;
    /* --elastic: inference replicas follow the day's traffic (the all-day arrival profile)
     * unless a forecast is given. */
    struct gs_tenantday_params own = *p;
    int64_t curve[24];
    for (int h = 0; h < 24; h++)
        curve[h] = hourly[PROF_ALLDAY][h];
    if (!p->traffic && p->elastic) {
        own.traffic = curve;
        own.ntraffic = 24;
    }
    p = &own;
    struct gen *g = plan(p);
    if (!g)
        return gs_diag_error_code(d, -ENOMEM, "tenant-day: out of memory for %" PRIu32 " pods",
                                  p->pods);
    scale_durations(g);
    qsort(g->jobs, g->njobs, sizeof(*g->jobs), by_arrival);
    struct gs_tenantday_stats local;
    rc = write_all(f, g, &local);
    gen_free(g);
    if (rc < 0)
        gs_diag_error_code(d, rc, "tenant-day: writing the scenario failed");
    else
        warn_load(&local, p, d);
    if (rc == 0 && st)
        *st = local;
    return rc;
}
