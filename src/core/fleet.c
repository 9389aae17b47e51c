/* Device-level cluster state for multi-tenant scheduling. Invariants: see gpusched/fleet.h. */
#include "gpusched/fleet.h"

#include "fit_rules.h"

#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/grow.h"
#include "gpusched/mig.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct card {
    int64_t mem_mib, mem_used;
    int32_t compute, cap; /* milli used; milli cap while shared */
    int32_t busy;         /* shared: what its slices keep it busy at full speed (their rates) */
    int32_t clients;      /* pods on it (MIG: instances) */
    int32_t max_clients;  /* shared: the smallest client cap of its pods, 0 = none */
    uint8_t mode, pcie, nvlink;
    uint8_t bad; /* unhealthy: it takes no new pod, whatever its mode */
    /* Mode history: the last mode it was in (free: never used) and since when; what they were
     * before its last pod came, and that pod, so a bind undone at once leaves no trace. */
    uint8_t last_mode, prev_mode;
    int32_t entered_by;
    int64_t since_us, prev_since_us;
    struct gs_mig_card mig; /* its instances while in MIG mode */
};

struct slot {
    int32_t pod, tenant, group;
    int32_t overcommit;  /* shared pods: their compute cap; 0 for exclusive ones */
    int32_t max_clients; /* shared pods: their client cap, 0 = none */
    int32_t units;       /* clients it is on each of its cards */
    uint32_t mask;
    int hard;
    int64_t cpu_milli, memory_mib;
};

struct fnode {
    int32_t model, zone;
    int32_t taint_class; /* gs_fleet_node_taint_class() */
    int ngpu, nfree, nshared, nmig, nsliced;
    int32_t replicas;     /* time-slice replicas per card, 0 = none */
    int32_t split;        /* pods per card at most (gpu_replicas), 0 = no such bound */
    int mig_model;        /* gs_mig_model index of its cards, -1 when they have no MIG geometry */
    unsigned mig_allowed; /* profiles its cards may create (GpuClusterPolicy); 0: MIG off */
    int nvlink_max;       /* cards in its largest NVLink group, 0 when none */
    int32_t links;        /* its NVLink pair counts in the fleet's links[], -1 none */
    int32_t
        own_links; /* 1 + its own entry in links[] once gs_fleet_set_topology() made one, else 0 */
    int32_t open_pos; /* position in the fleet's open list, -1 when not there */
    int64_t cpu_left, mem_left;
    int32_t max_pods;    /* pods it runs at most (its template's maxPods) */
    int32_t sole_tenant; /* tenant of every pod here; -1 none, -2 several */
    int down;            /* not ready: it takes no new pod */
    int nbad;            /* unhealthy cards */
    int free_sound; /* its free, healthy cards while it is ready (gs_fleet_model_free_cards()) */
    int hard;       /* pods with hard isolation here */
    struct slot *pods;
    size_t npods, cap;
    struct card cards[GS_GPUS_MAX];
};

struct gs_fleet {
    struct fnode *nodes;
    size_t n;
    int32_t taint_rep[GS_TAINT_CLASSES]; /* per taint class c >= 1: its first node, at c - 1 */
    int ntaint_classes;
    /* Per node, packed: what searches ask of every node they pass (a node is over 1 KB). */
    uint8_t *model, *nvlink, *nfree, *ngpu;
    int32_t *used;  /* per node: its cards' compute held, each card's up to 1000 (packing) */
    uint8_t *bare;  /* per node: no pod and sound (gs_fleet_node_bare()) */
    int32_t *sole;  /* per node: its fnode's sole_tenant */
    int16_t *room;  /* per node: gs_fleet_slice_room() */
    uint32_t *ver;  /* per node: moves with every change gs_fleet_fit() could see there */
    uint32_t epoch; /* moves with what every node's fits could see (gs_fleet_node_version()) */
    int32_t *open;  /* nodes with a free or shared card, ascending */
    size_t nopen;
    /* Nodes whose cards changed since the open lists were last read: they are put right when
     * next read (open_settle()), so a release undone by a commit before then, as trial moves
     * are, costs the lists nothing. */
    int32_t *moved;
    uint8_t *is_moved;
    size_t nmoved;
    /* The open nodes again, per card count, by packing level (gs_fleet_open_level()): one array
     * per card count, its levels from GS_FLEET_LEVELS down to 0, each ascending; off[] where
     * each level starts (rank GS_FLEET_LEVELS - level), off[GS_FLEET_LEVELS + 1] the count. */
    int32_t *lv[GS_GPUS_MAX + 1];
    int32_t off[GS_GPUS_MAX + 1][GS_FLEET_LEVELS + 2];
    int8_t *rank; /* per node: its rank in lv[its cards], -1 when not open */
    int64_t cards, allocated;
    int nvlink_max;
    /* per GPU model: the most GPUs of a node of it, the largest NVLink group of one (cards) */
    int8_t model_gpus[GS_MODEL_MAX], model_nvlink[GS_MODEL_MAX];
    int32_t model_free[GS_MODEL_MAX];           /* per GPU model: its nodes' free_sound */
    uint8_t (*links)[GS_GPUS_MAX][GS_GPUS_MAX]; /* per template, then per node that has its own
                                                   (gs_fleet_set_topology()): bonded NVLinks per
                                                   GPU pair */
    size_t nlinks;
    /* Mode conversion (gs_fleet_set_modes()): allowed, the hold time, the clock, the count. */
    int convert;
    int64_t hold_us, now_us, conversions;
    struct mig_empty *mig_empty; /* per MIG geometry (gs_mig_model index) */
};

/* An empty card's best place for each MIG profile, made once per geometry: a MIG fit asks it of
 * every node it passes. For the profiles @allowed (its nodes' mig_allowed). */
struct mig_empty {
    unsigned allowed;
    int16_t score[GS_MIG_PROFILES_MAX]; /* gs_mig_card_score(); -1: the profile does not fit */
    int8_t start[GS_MIG_PROFILES_MAX];  /* gs_mig_card_best_start() */
};

static const char *const reason_text[GS_FIT_REASONS] = {
    [GS_FIT_OK] = "fits",
    [GS_FIT_MODEL] = "node(s) didn't match Pod's node affinity/selector",
    [GS_FIT_CPU] = GS_WORDS_CPU,
    [GS_FIT_MEMORY] = GS_WORDS_MEMORY,
    [GS_FIT_GPU] = GS_WORDS_GPU,
    [GS_FIT_GPUMEM] = GS_WORDS_INSUFFICIENT("nvidia.com/gpumem"),
    [GS_FIT_GPUCORES] = GS_WORDS_INSUFFICIENT("nvidia.com/gpucores"),
    [GS_FIT_NVLINK] = "no NVLink group with enough free GPUs",
    [GS_FIT_ISOLATION] = "hard isolation: node used by another tenant",
    [GS_FIT_MIG] = "no free MIG slot for profile",
    [GS_FIT_MIG_POLICY] = "MIG profile not allowed here by the GpuClusterPolicy",
    [GS_FIT_NOT_READY] = "node(s) had untolerated taint {node.kubernetes.io/not-ready: }",
    [GS_FIT_MIG_MODEL] = "GPU model has no MIG profile",
    [GS_FIT_NODE_NAME] = "node(s) didn't match the requested node name",
    [GS_FIT_TAINT] = "node(s) had untolerated taint",
    [GS_FIT_PODS] = "Too many pods",
};

const char *gs_fit_reason_text(enum gs_fit_reason r)
{
    return (unsigned)r < GS_FIT_REASONS ? reason_text[r] : "unknown";
}

const char *gs_fit_reason_words(enum gs_fit_reason r, int replicas)
{
    return r == GS_FIT_GPU && replicas ? GS_WORDS_INSUFFICIENT("nvidia.com/gpu.shared")
                                       : gs_fit_reason_text(r);
}

static int nvlink_groups_max(const struct fnode *nd)
{
    int count[GS_GPUS_MAX] = {0}, best = 0;
    for (int i = 0; i < nd->ngpu; i++)
        if (nd->cards[i].nvlink < GS_GPUS_MAX && ++count[nd->cards[i].nvlink] > best)
            best = count[nd->cards[i].nvlink];
    return best;
}

/* The largest NVLink group of the fleet, and the most GPUs and cards in one NVLink group of a
 * node of each model: at the start and whenever a node's topology changes. */
static void most_of_models(struct gs_fleet *f)
{
    f->nvlink_max = 0;
    memset(f->model_gpus, 0, sizeof(f->model_gpus));
    memset(f->model_nvlink, 0, sizeof(f->model_nvlink));
    for (size_t i = 0; i < f->n; i++) {
        const struct fnode *nd = &f->nodes[i];
        f->nvlink_max = nd->nvlink_max > f->nvlink_max ? nd->nvlink_max : f->nvlink_max;
        if (nd->model < 0 || nd->model >= GS_MODEL_MAX)
            continue;
        if (nd->ngpu > f->model_gpus[nd->model])
            f->model_gpus[nd->model] = (int8_t)nd->ngpu;
        if (nd->nvlink_max > f->model_nvlink[nd->model])
            f->model_nvlink[nd->model] = (int8_t)nd->nvlink_max;
    }
}

static int node_init(struct fnode *nd, const struct gs_policy *s, size_t i, struct gs_diag *d)
{
    const struct gs_scn_node *sn = &s->nodes[i];
    if (sn->template_index < 0 || (size_t)sn->template_index >= s->ntemplates)
        return gs_diag_error(d, "node %s: unknown template", sn->name);
    const struct gs_node_template *t = &s->templates[sn->template_index];
    const struct gs_gpu_model *m = gs_catalog_at(t->model);
    if (t->gpus > 0 && !m)
        return gs_diag_error(d, "node %s: template %s has an unknown GPU model", sn->name, t->name);
    nd->model = t->model < 0 ? 0 : t->model;
    nd->mig_model = t->gpus > 0 && m ? gs_mig_model_find(m->name) : -1;
    if (nd->mig_model < 0)
        nd->mig_model = -1;
    nd->mig_allowed = 0;
    for (int k = 0; nd->mig_model >= 0 && k < GS_MIG_PROFILES_MAX; k++)
        nd->mig_allowed |= gs_fleet_mig_allowed(s, nd->mig_model, k) ? 1u << k : 0;
    nd->ngpu = nd->nfree = t->gpus;
    nd->replicas = t->timeslice_replicas;
    nd->split = t->gpu_replicas;
    /* Host resources left out of a template do not constrain placement. */
    nd->cpu_left = t->cpu_milli == GS_UNSET ? INT64_MAX / 4 : t->cpu_milli;
    nd->mem_left = t->memory_mib == GS_UNSET ? INT64_MAX / 4 : t->memory_mib;
    nd->max_pods = gs_node_max_pods(t);
    nd->sole_tenant = -1;
    for (int g = 0; g < t->gpus; g++) {
        nd->cards[g].mem_mib = m->memory_mib;
        nd->cards[g].pcie = t->pcie_domain[g];
        nd->cards[g].nvlink = t->nvlink_group[g];
    }
    return 0;
}

/* Whether nodes @a and @b carry the same taints, in the same order. */
static int same_taints(const struct gs_policy *s, size_t a, size_t b)
{
    const struct gs_scn_node *x = &s->nodes[a], *y = &s->nodes[b];
    if (x->ntaints != y->ntaints)
        return 0;
    for (int32_t i = 0; i < x->ntaints; i++) {
        const struct gs_taint *p = &s->taints[x->taint_first + i],
                              *q = &s->taints[y->taint_first + i];
        if (p->effect != q->effect || strcmp(p->key, q->key) || strcmp(p->value, q->value))
            return 0;
    }
    return 1;
}

/* Node @i's taint class, numbered in order of first appearance; -E2BIG past GS_TAINT_CLASSES. */
static int taint_class(struct gs_fleet *f, const struct gs_policy *s, size_t i)
{
    if (!s->nodes[i].ntaints)
        return 0;
    for (int c = 0; c < f->ntaint_classes; c++)
        if (same_taints(s, (size_t)f->taint_rep[c], i))
            return c + 1;
    if (f->ntaint_classes == GS_TAINT_CLASSES)
        return -E2BIG;
    f->taint_rep[f->ntaint_classes++] = (int32_t)i;
    return f->ntaint_classes;
}

/* Zones are numbered in order of first appearance; a scenario has few of them. */
static int zone_number(const struct gs_policy *s, const char **names, int *nzones, size_t i)
{
    for (int z = 0; z < *nzones; z++)
        if (strcmp(names[z], s->nodes[i].zone) == 0)
            return z;
    names[*nzones] = s->nodes[i].zone;
    return (*nzones)++;
}

/* Node @i's template's NVLink pair counts, copied into @f->links once; -1 when it gives none. */
static int32_t node_links(struct gs_fleet *f, const struct gs_policy *s, size_t i)
{
    int t = s->nodes[i].template_index;
    const struct gs_node_template *tp = &s->templates[t];
    static const uint8_t none[GS_GPUS_MAX][GS_GPUS_MAX];
    if (memcmp(tp->nvlinks, none, sizeof(none)) == 0)
        return -1;
    memcpy(f->links[t], tp->nvlinks, sizeof(f->links[t]));
    return t;
}

/* Node @i's packed bareness, tenant and room for a slice, and its version, after its pods,
 * readiness or cards' health changed. */
static void set_bare(struct gs_fleet *f, size_t i)
{
    struct fnode *nd = &f->nodes[i];
    f->bare[i] = nd->npods == 0 && !nd->down && !nd->nbad;
    f->sole[i] = nd->sole_tenant;
    int room = 0, sound = 0;
    for (int g = 0; g < nd->ngpu; g++) {
        const struct card *c = &nd->cards[g];
        int left = c->mode == GS_CARD_FREE ? 1000 : 1000 - c->compute;
        if (!c->bad && (c->mode == GS_CARD_FREE || c->mode == GS_CARD_SHARED) && left > room)
            room = left;
        sound += !c->bad && c->mode == GS_CARD_FREE && !nd->down;
    }
    f->room[i] = (int16_t)room;
    if (nd->model >= 0 && nd->model < GS_MODEL_MAX)
        f->model_free[nd->model] += sound - nd->free_sound;
    nd->free_sound = sound;
    f->ver[i]++;
}

/* The packing level of @node: its cards' compute held, in GS_FLEET_LEVELS steps of its whole. */
static int level_of(const struct gs_fleet *f, size_t node)
{
    int64_t whole = (int64_t)f->ngpu[node] * 1000, used = f->used[node];
    used = used < 0 ? 0 : used > whole ? whole : used;
    return (int)(used * GS_FLEET_LEVELS / whole);
}

/* Where node @node goes in (or is) the segment of rank @r of @g's array: ascending there. */
static int32_t level_pos(const struct gs_fleet *f, int g, int r, size_t node)
{
    int32_t lo = f->off[g][r], hi = f->off[g][r + 1];
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if ((size_t)f->lv[g][mid] < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Put @node at rank @want of its card count's array (-1: out of it), from where it is. */
static void level_move(struct gs_fleet *f, size_t node, int want)
{
    int g = f->ngpu[node], have = f->rank[node];
    if (want == have)
        return;
    int32_t *a = f->lv[g], *off = f->off[g], n = off[GS_FLEET_LEVELS + 1];
    if (have >= 0) {
        int32_t p = level_pos(f, g, have, node);
        memmove(&a[p], &a[p + 1], (size_t)(n - p - 1) * sizeof(*a));
        for (int r = have + 1; r <= GS_FLEET_LEVELS + 1; r++)
            off[r]--;
        n--;
    }
    if (want >= 0) {
        int32_t q = level_pos(f, g, want, node);
        memmove(&a[q + 1], &a[q], (size_t)(n - q) * sizeof(*a));
        a[q] = (int32_t)node;
        for (int r = want + 1; r <= GS_FLEET_LEVELS + 1; r++)
            off[r]++;
    }
    f->rank[node] = (int8_t)want;
}

static int levels_init(struct gs_fleet *f)
{
    size_t count[GS_GPUS_MAX + 1] = {0};
    for (size_t i = 0; i < f->n; i++)
        count[f->ngpu[i]]++;
    f->rank = malloc((f->n ? f->n : 1) * sizeof(*f->rank));
    if (!f->rank)
        return -ENOMEM;
    for (int g = 1; g <= GS_GPUS_MAX; g++)
        if (count[g] && !(f->lv[g] = malloc(count[g] * sizeof(*f->lv[g]))))
            return -ENOMEM;
    memset(f->rank, -1, (f->n ? f->n : 1) * sizeof(*f->rank));
    for (size_t k = 0; k < f->nopen; k++) /* ascending: each lands last in its segment */
        level_move(f, (size_t)f->open[k], GS_FLEET_LEVELS - level_of(f, (size_t)f->open[k]));
    return 0;
}

/* An empty card of geometry @model, profiles @allowed: its score and start for each profile. */
static void mig_empty_make(struct mig_empty *e, int model, unsigned allowed)
{
    struct gs_mig_card empty;
    e->allowed = allowed;
    for (int k = 0; k < GS_MIG_PROFILES_MAX; k++) {
        int sc, start;
        int ok = !gs_mig_card_init(&empty, model, allowed) && !gs_mig_card_score(&empty, k, &sc) &&
                 !gs_mig_card_best_start(&empty, k, &start);
        e->score[k] = (int16_t)(ok ? sc : -1);
        e->start[k] = (int8_t)(ok ? start : -1);
    }
}

int gs_fleet_new(const struct gs_policy *s, struct gs_fleet **out, struct gs_diag *d)
{
    struct gs_fleet *f = calloc(1, sizeof(*f));
    const char **zones = calloc(s->nnodes ? s->nnodes : 1, sizeof(*zones));
    size_t cap = s->nnodes ? s->nnodes : 1;
    if (f) {
        f->nodes = calloc(cap, sizeof(*f->nodes));
        f->model = calloc(cap, 1);
        f->nvlink = calloc(cap, 1);
        f->nfree = calloc(cap, 1);
        f->ngpu = calloc(cap, 1);
        f->used = calloc(cap, sizeof(*f->used));
        f->bare = calloc(cap, 1);
        f->sole = calloc(cap, sizeof(*f->sole));
        f->room = calloc(cap, sizeof(*f->room));
        f->ver = calloc(cap, sizeof(*f->ver));
        f->moved = calloc(cap, sizeof(*f->moved));
        f->is_moved = calloc(cap, 1);
        f->links = calloc(s->ntemplates ? s->ntemplates : 1, sizeof(*f->links));
        f->mig_empty = calloc((size_t)gs_mig_model_count() + 1, sizeof(*f->mig_empty));
    }
    if (!f || !zones || !f->nodes || !f->model || !f->nvlink || !f->nfree || !f->ngpu || !f->used ||
        !f->bare || !f->sole || !f->room || !f->ver || !f->moved || !f->is_moved || !f->links ||
        !f->mig_empty) {
        free(zones);
        gs_fleet_free(f);
        return -ENOMEM;
    }
    f->n = s->nnodes;
    f->nlinks = s->ntemplates ? s->ntemplates : 1;
    f->convert = 1;
    f->epoch = 1;
    int nzones = 0;
    for (size_t i = 0; i < s->nnodes; i++) {
        int r = node_init(&f->nodes[i], s, i, d);
        if (r < 0) {
            free(zones);
            gs_fleet_free(f);
            return r;
        }
        f->nodes[i].zone = zone_number(s, zones, &nzones, i);
        if ((r = f->nodes[i].taint_class = taint_class(f, s, i)) < 0) {
            free(zones);
            gs_fleet_free(f);
            return gs_diag_error_code(d, r, "node %s: more than %d different sets of taints",
                                      s->nodes[i].name, GS_TAINT_CLASSES);
        }
        f->nodes[i].links = node_links(f, s, i);
        f->cards += f->nodes[i].ngpu;
        int g = f->nodes[i].nvlink_max = nvlink_groups_max(&f->nodes[i]);
        f->model[i] = (uint8_t)f->nodes[i].model;
        f->nvlink[i] = (uint8_t)g;
        f->nfree[i] = (uint8_t)f->nodes[i].nfree;
        f->ngpu[i] = (uint8_t)f->nodes[i].ngpu;
        set_bare(f, i);
        int mm = f->nodes[i].mig_model;
        if (mm >= 0 && f->mig_empty[mm].allowed != f->nodes[i].mig_allowed)
            mig_empty_make(&f->mig_empty[mm], mm, f->nodes[i].mig_allowed);
    }
    free(zones);
    most_of_models(f);
    f->open = malloc((f->n ? f->n : 1) * sizeof(*f->open));
    if (!f->open) {
        gs_fleet_free(f);
        return -ENOMEM;
    }
    for (size_t i = 0; i < f->n; i++) {
        f->nodes[i].open_pos = -1;
        if (f->nodes[i].nfree > 0) {
            f->nodes[i].open_pos = (int32_t)f->nopen;
            f->open[f->nopen++] = (int32_t)i;
        }
    }
    if (levels_init(f) < 0) {
        gs_fleet_free(f);
        return -ENOMEM;
    }
    *out = f;
    return 0;
}

void gs_fleet_free(struct gs_fleet *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++)
        free(f->nodes[i].pods);
    free(f->nodes);
    free(f->model);
    free(f->nvlink);
    free(f->nfree);
    free(f->ngpu);
    free(f->used);
    free(f->bare);
    free(f->sole);
    free(f->room);
    free(f->ver);
    free(f->moved);
    free(f->is_moved);
    free(f->open);
    for (int g = 0; g <= GS_GPUS_MAX; g++)
        free(f->lv[g]);
    free(f->rank);
    free(f->links);
    free(f->mig_empty);
    free(f);
}

/*
 * Keep @node in the open list exactly while it has a free or shared card: GPU pods need one, so
 * a search for them visits only these nodes. The list stays sorted so ties keep going to the
 * lowest index; an insert or removal moves at most the whole list, once per change of state.
 */
static void open_update(struct gs_fleet *f, size_t node)
{
    struct fnode *nd = &f->nodes[node];
    int want = nd->nfree > 0 || nd->nshared > 0 || nd->nmig > 0 || nd->nsliced > 0;
    level_move(f, node, want ? GS_FLEET_LEVELS - level_of(f, node) : -1);
    if (want == (nd->open_pos >= 0))
        return;
    size_t lo = 0, hi = f->nopen;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((size_t)f->open[mid] < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (want) {
        memmove(&f->open[lo + 1], &f->open[lo], (f->nopen - lo) * sizeof(*f->open));
        f->open[lo] = (int32_t)node;
        f->nopen++;
    } else {
        memmove(&f->open[lo], &f->open[lo + 1], (f->nopen - lo - 1) * sizeof(*f->open));
        f->nopen--;
    }
    nd->open_pos = want ? 0 : -1;
}

/* The open lists put right for the nodes moved since they were last read. Each list is sorted by
 * node, so what it holds is the same whatever order its changes are made in. The lists are a
 * view kept for readers: settling them changes nothing a reader of @f can tell apart. */
static void open_settle(const struct gs_fleet *cf)
{
    struct gs_fleet *f = (struct gs_fleet *)cf; /* allocated mutable by gs_fleet_new() */
    for (size_t k = 0; k < f->nmoved; k++) {
        f->is_moved[f->moved[k]] = 0;
        open_update(f, (size_t)f->moved[k]);
    }
    f->nmoved = 0;
}

const int32_t *gs_fleet_open(const struct gs_fleet *f, size_t *n)
{
    open_settle(f);
    *n = f->nopen;
    return f->open;
}

size_t gs_fleet_node_count(const struct gs_fleet *f)
{
    return f->n;
}

int64_t gs_fleet_card_count(const struct gs_fleet *f)
{
    return f->cards;
}

int gs_fleet_node_model(const struct gs_fleet *f, size_t node)
{
    return f->model[node];
}

int gs_fleet_node_zone(const struct gs_fleet *f, size_t node)
{
    return f->nodes[node].zone;
}

int gs_fleet_node_taint_class(const struct gs_fleet *f, size_t node)
{
    return f->nodes[node].taint_class;
}

int gs_fleet_taint_classes(const struct gs_fleet *f, size_t *first)
{
    for (int c = 0; first && c < f->ntaint_classes; c++)
        first[c] = (size_t)f->taint_rep[c];
    return f->ntaint_classes;
}

int gs_fleet_node_gpus(const struct gs_fleet *f, size_t node)
{
    return f->nodes[node].ngpu;
}

int gs_fleet_node_free_cards(const struct gs_fleet *f, size_t node)
{
    return f->nfree[node];
}

int gs_fleet_node_sound_free_cards(const struct gs_fleet *f, size_t node)
{
    return f->nodes[node].free_sound;
}

int32_t gs_fleet_model_free_cards(const struct gs_fleet *f, int model)
{
    return model >= 0 && model < GS_MODEL_MAX ? f->model_free[model] : 0;
}

/* The packing bound of @r on a node of @ngpu cards whose cards hold @used milli of compute. */
static int32_t packing_bound(int ngpu, int64_t used, const struct gs_fit *r)
{
    int cards = r->mig ? 1 : r->ncards;
    if (!ngpu)
        return 0;
    int64_t up = used + (int64_t)cards * (r->whole ? 1000 : r->compute);
    return up / ngpu < 1000 ? (int32_t)(up / ngpu) : 1000;
}

int32_t gs_fleet_packing_bound(const struct gs_fleet *f, size_t node, const struct gs_fit *r)
{
    return packing_bound(f->ngpu[node], f->used[node], r);
}

const int32_t *gs_fleet_open_level(const struct gs_fleet *f, int ngpu, int level,
                                   const struct gs_fit *r, size_t *n, int32_t *bound)
{
    if (ngpu < 1 || ngpu > GS_GPUS_MAX || level < 0 || level > GS_FLEET_LEVELS || !f->lv[ngpu]) {
        *n = 0;
        *bound = 0;
        return NULL;
    }
    open_settle(f);
    int rk = GS_FLEET_LEVELS - level;
    int64_t whole = (int64_t)ngpu * 1000, most = whole;
    if (level < GS_FLEET_LEVELS) /* one below where the next level starts */
        most = ((level + 1) * whole + GS_FLEET_LEVELS - 1) / GS_FLEET_LEVELS - 1;
    *bound = packing_bound(ngpu, most, r);
    *n = (size_t)(f->off[ngpu][rk + 1] - f->off[ngpu][rk]);
    return f->lv[ngpu] + f->off[ngpu][rk];
}

int gs_fleet_open_next_level(const struct gs_fleet *f, int ngpu, int level)
{
    if (ngpu < 1 || ngpu > GS_GPUS_MAX || !f->lv[ngpu])
        return -1;
    open_settle(f);
    const int32_t *off = f->off[ngpu];
    for (int l = level > GS_FLEET_LEVELS ? GS_FLEET_LEVELS : level; l >= 0; l--)
        if (off[GS_FLEET_LEVELS - l + 1] > off[GS_FLEET_LEVELS - l])
            return l;
    return -1;
}

int32_t gs_fleet_slice_room(const struct gs_fleet *f, size_t node)
{
    return f->room[node];
}

int32_t gs_fleet_isolation(const struct gs_fleet *f, size_t node, const struct gs_fit *r)
{
    return f->sole[node] == -1 || f->sole[node] == r->tenant ? 1000 : 0;
}

enum gs_card_mode gs_fleet_card_mode(const struct gs_fleet *f, size_t node, int gpu)
{
    return (enum gs_card_mode)f->nodes[node].cards[gpu].mode;
}

int32_t gs_fleet_card_compute(const struct gs_fleet *f, size_t node, int gpu)
{
    return f->nodes[node].cards[gpu].compute;
}

int64_t gs_fleet_card_mem_used(const struct gs_fleet *f, size_t node, int gpu)
{
    return f->nodes[node].cards[gpu].mem_used;
}

int64_t gs_fleet_card_mem(const struct gs_fleet *f, size_t node, int gpu)
{
    return f->nodes[node].cards[gpu].mem_mib;
}

const struct gs_mig_card *gs_fleet_card_mig(const struct gs_fleet *f, size_t node, int gpu)
{
    const struct card *c = &f->nodes[node].cards[gpu];
    return c->mode == GS_CARD_MIG ? &c->mig : NULL;
}

void gs_fleet_node_left(const struct gs_fleet *f, size_t node, int64_t *cpu_milli,
                        int64_t *memory_mib)
{
    *cpu_milli = f->nodes[node].cpu_left;
    *memory_mib = f->nodes[node].mem_left;
}

const char *gs_card_mode_name(enum gs_card_mode m)
{
    static const char *const names[] = {"free", "exclusive", "shared", "mig", "timesliced"};
    return (unsigned)m < sizeof(names) / sizeof(names[0]) ? names[m] : "?";
}

size_t gs_fleet_pod_count(const struct gs_fleet *f, size_t node)
{
    return f->nodes[node].npods;
}

int32_t gs_fleet_pod_at(const struct gs_fleet *f, size_t node, size_t i)
{
    return i < f->nodes[node].npods ? f->nodes[node].pods[i].pod : -1;
}

int64_t gs_fleet_allocated(const struct gs_fleet *f)
{
    return f->allocated;
}

int gs_fleet_nvlink_free(const struct gs_fleet *f, size_t node, int free_in[GS_GPUS_MAX])
{
    const struct fnode *nd = &f->nodes[node];
    int best = 0;
    memset(free_in, 0, GS_GPUS_MAX * sizeof(*free_in));
    for (int g = 0; g < nd->ngpu; g++)
        if (nd->cards[g].nvlink < GS_GPUS_MAX && nd->cards[g].mode == GS_CARD_FREE &&
            !nd->cards[g].bad && ++free_in[nd->cards[g].nvlink] > best)
            best = free_in[nd->cards[g].nvlink];
    return best;
}

void gs_fleet_set_node_ready(struct gs_fleet *f, size_t node, int ready)
{
    f->nodes[node].down = !ready;
    set_bare(f, node);
}

/* Node @node's own NVLink pair counts @links (NULL: none), in an entry of its own, made once and
 * kept while it has none: a node that reports links, none, then links again reuses it. */
static int set_links(struct gs_fleet *f, struct fnode *nd, const uint8_t (*links)[GS_GPUS_MAX])
{
    if (!links) {
        nd->links = -1;
        return 0;
    }
    if (!nd->own_links) {
        void *m = realloc(f->links, (f->nlinks + 1) * sizeof(*f->links));
        if (!m)
            return -ENOMEM;
        f->links = m;
        nd->own_links = (int32_t)++f->nlinks;
    }
    nd->links = nd->own_links - 1;
    memcpy(f->links[nd->links], links, sizeof(f->links[0]));
    return 0;
}

int gs_fleet_set_topology(struct gs_fleet *f, size_t node, const uint8_t *pcie,
                          const uint8_t *nvlink, const uint8_t (*links)[GS_GPUS_MAX])
{
    if (node >= f->n)
        return -EINVAL;
    struct fnode *nd = &f->nodes[node];
    for (int g = 0; g < nd->ngpu; g++)
        if (pcie[g] >= GS_GPUS_MAX || (nvlink[g] >= GS_GPUS_MAX && nvlink[g] != GS_NO_GROUP))
            return -EINVAL;
    int rc = set_links(f, nd, links);
    if (rc)
        return rc;
    for (int g = 0; g < nd->ngpu; g++) {
        nd->cards[g].pcie = pcie[g];
        nd->cards[g].nvlink = nvlink[g];
    }
    nd->nvlink_max = nvlink_groups_max(nd);
    f->nvlink[node] = (uint8_t)nd->nvlink_max;
    f->ver[node]++;
    most_of_models(f);
    return 0;
}

int gs_fleet_node_ready(const struct gs_fleet *f, size_t node)
{
    return !f->nodes[node].down;
}

void gs_fleet_set_card_healthy(struct gs_fleet *f, size_t node, int gpu, int healthy)
{
    struct fnode *nd = &f->nodes[node];
    nd->nbad += (!healthy) - nd->cards[gpu].bad;
    nd->cards[gpu].bad = !healthy;
    set_bare(f, node);
}

int gs_fleet_node_sound(const struct gs_fleet *f, size_t node)
{
    return !f->nodes[node].down && !f->nodes[node].nbad;
}

int gs_fleet_node_bare(const struct gs_fleet *f, size_t node)
{
    return f->bare[node];
}

int gs_fleet_card_healthy(const struct gs_fleet *f, size_t node, int gpu)
{
    return !f->nodes[node].cards[gpu].bad;
}

int32_t gs_fleet_node_replicas(const struct gs_fleet *f, size_t node)
{
    return f->nodes[node].replicas;
}

void gs_fleet_set_modes(struct gs_fleet *f, int convert, int64_t hold_us)
{
    f->convert = convert;
    f->hold_us = hold_us;
    f->epoch = f->epoch + 1 ? f->epoch + 1 : 1; /* never 0: a version is never 0 */
}

void gs_fleet_set_now(struct gs_fleet *f, int64_t now_us)
{
    if (f->convert && f->hold_us > 0 && now_us != f->now_us) /* a hold may end: fits move */
        f->epoch = f->epoch + 1 ? f->epoch + 1 : 1;
    f->now_us = now_us;
}

uint64_t gs_fleet_node_version(const struct gs_fleet *f, size_t node)
{
    return (uint64_t)f->epoch << 32 | f->ver[node];
}

int64_t gs_fleet_conversions(const struct gs_fleet *f)
{
    return f->conversions;
}

int64_t gs_fleet_next_convertible(const struct gs_fleet *f, size_t n)
{
    int64_t next = INT64_MAX;
    if (f->convert && f->hold_us > 0)
        for (int g = 0; g < f->nodes[n].ngpu; g++) {
            const struct card *c = &f->nodes[n].cards[g];
            int64_t at = c->since_us + f->hold_us;
            if (c->mode == GS_CARD_FREE && c->last_mode != GS_CARD_FREE && at > f->now_us &&
                at < next)
                next = at;
        }
    return next;
}

enum gs_card_mode gs_fleet_card_history(const struct gs_fleet *f, size_t node, int gpu,
                                        int64_t *since_us)
{
    const struct card *c = &f->nodes[node].cards[gpu];
    *since_us = c->since_us;
    return (enum gs_card_mode)c->last_mode;
}

int gs_fleet_set_card_history(struct gs_fleet *f, size_t node, int gpu, enum gs_card_mode mode,
                              int64_t since_us)
{
    struct fnode *nd = &f->nodes[node];
    struct card *c = &nd->cards[gpu];
    if (mode == GS_CARD_FREE || (c->mode != GS_CARD_FREE && c->mode != mode) ||
        (mode == GS_CARD_MIG && nd->mig_model < 0) || (mode == GS_CARD_TIMESLICED && !nd->replicas))
        return -EINVAL;
    c->last_mode = c->prev_mode = (uint8_t)mode;
    c->since_us = c->prev_since_us = since_us;
    c->entered_by = -1;
    f->ver[node]++; /* the modes a card may take are what a fit sees there */
    return 0;
}

/* May a free card last in mode @last since @since take mode @m now: one never used or last in
 * @m, or, when conversion is on, one that has held its last mode for the hold time. */
static int may_become(const struct gs_fleet *f, uint8_t last, int64_t since, uint8_t m)
{
    return last == GS_CARD_FREE || last == m || (f->convert && f->now_us - since >= f->hold_us);
}

static int may_take(const struct gs_fleet *f, const struct card *c, uint8_t m)
{
    return !c->bad && may_become(f, c->last_mode, c->since_us, m);
}

/* Free card @c took mode @c->mode for pod @pod: a conversion when it last had another. */
static void mode_enter(struct gs_fleet *f, struct card *c, int32_t pod)
{
    c->prev_mode = c->last_mode;
    c->prev_since_us = c->since_us;
    c->entered_by = pod;
    if (c->last_mode == c->mode)
        return;
    f->conversions += c->last_mode != GS_CARD_FREE;
    c->last_mode = c->mode;
    c->since_us = f->now_us;
}

/* Card @c became free as pod @pod left: when the pod that gave it its mode leaves in the same
 * instant (an attempt undone, a probe), the card is as if it never took that mode. */
static void mode_leave(struct gs_fleet *f, struct card *c, int32_t pod)
{
    if (c->entered_by == pod && c->since_us == f->now_us && c->last_mode != c->prev_mode) {
        f->conversions -= c->prev_mode != GS_CARD_FREE;
        c->last_mode = c->prev_mode;
        c->since_us = c->prev_since_us;
    }
    c->entered_by = -1;
}

int gs_fleet_node_nvlink_max(const struct gs_fleet *f, size_t node)
{
    return f->nvlink[node];
}

int gs_fleet_nvlink_max(const struct gs_fleet *f)
{
    return f->nvlink_max;
}

uint32_t gs_fleet_models_with(const struct gs_fleet *f, int cards, int nvlink)
{
    uint32_t m = 0;
    for (int k = 0; k < GS_MODEL_MAX; k++)
        m |= (nvlink ? f->model_nvlink[k] : f->model_gpus[k]) >= cards ? 1u << k : 0;
    return cards > 0 ? m : 0;
}

/* Node @node (@nd) against the nodes @r is held to: kube-scheduler's NodeName and NodeAffinity
 * filters, in their words. */
static enum gs_fit_reason fit_pinned(const struct fnode *nd, size_t node, const struct gs_fit *r)
{
    if (r->node_only && (size_t)r->node_only != node + 1)
        return GS_FIT_NODE_NAME;
    if (r->zone_only && r->zone_only != nd->zone + 1)
        return GS_FIT_MODEL;
    if (r->nodes_ok && (node >= r->nodes_ok_n || !(r->nodes_ok[node / 64] >> (node % 64) & 1)))
        return GS_FIT_MODEL; /* its affinity, as kube-scheduler's filters read it */
    if (nd->taint_class && !(r->tolerated >> (nd->taint_class - 1) & 1))
        return GS_FIT_TAINT;
    return GS_FIT_OK;
}

static enum gs_fit_reason fit_host(const struct fnode *nd, size_t node, const struct gs_fit *r)
{
    enum gs_fit_reason pin = fit_pinned(nd, node, r);
    if (pin != GS_FIT_OK)
        return pin;
    if (nd->down)
        return GS_FIT_NOT_READY;
    if (r->ncards > 0 && !gs__model_allowed(r->model_mask, nd->model))
        return GS_FIT_MODEL;
    if (r->ncards > nd->ngpu)
        return GS_FIT_GPU;
    if (r->hard ? (nd->sole_tenant >= 0 && nd->sole_tenant != r->tenant) || nd->sole_tenant == -2
                : nd->hard && nd->sole_tenant != r->tenant)
        return GS_FIT_ISOLATION;
    if (nd->npods >= (size_t)nd->max_pods) /* kube-scheduler's NodeResourcesFit counts pods too */
        return GS_FIT_PODS;
    if (r->cpu_milli > nd->cpu_left)
        return GS_FIT_CPU;
    if (r->memory_mib > nd->mem_left)
        return GS_FIT_MEMORY;
    return GS_FIT_OK;
}

/*
 * The free cards of the group (PCIe domain or NVLink group, by @by_nvlink; among @allowed groups,
 * 0 = any) with the fewest free cards that still holds @n: best fit keeps the larger groups whole
 * for pods that need them. 0 when none holds @n.
 */
static uint32_t group_free(const struct fnode *nd, uint32_t free, int n, int by_nvlink,
                           uint32_t allowed)
{
    int count[GS_GPUS_MAX] = {0};
    uint32_t members[GS_GPUS_MAX] = {0};
    for (int i = 0; i < nd->ngpu; i++) {
        int g = by_nvlink ? nd->cards[i].nvlink : nd->cards[i].pcie;
        if (g >= GS_GPUS_MAX || !(free & (1u << i)) || (allowed && !(allowed & (1u << g))))
            continue;
        count[g]++;
        members[g] |= 1u << i;
    }
    int best = -1;
    for (int g = 0; g < GS_GPUS_MAX; g++)
        if (count[g] >= n && (best < 0 || count[g] < count[best]))
            best = g;
    return best < 0 ? 0 : members[best];
}

/* @n cards of the best-fitting group of group_free(), the lowest; 0 when no group holds @n. */
static uint32_t best_group(const struct fnode *nd, uint32_t free, int n, int by_nvlink,
                           uint32_t allowed)
{
    uint32_t m = group_free(nd, free, n, by_nvlink, allowed);
    return m ? gs__cards_lowest(m, n) : 0;
}

/* @n cards of the smallest NVLink group holding them (among @allowed, 0 = any), from its
 * smallest PCIe domain that does (else its lowest cards): a pod asking no tier still keeps its
 * cards on one NVLink bridge, and one asking the nvlink tier on one PCIe switch where it can. */
static uint32_t nvlink_then_pcie(const struct fnode *nd, uint32_t free, int n, uint32_t allowed)
{
    uint32_t g = group_free(nd, free, n, 1, allowed), m;
    if (!g)
        return 0;
    return (m = best_group(nd, g, n, 0, 0)) ? m : gs__cards_lowest(g, n);
}

static int domains_of(const struct fnode *nd, uint32_t mask)
{
    uint32_t seen = 0;
    for (int i = 0; i < nd->ngpu; i++)
        if (mask & (1u << i))
            seen |= 1u << (nd->cards[i].pcie % 32);
    return __builtin_popcount(seen);
}

/* TopologyScore of cards over @d PCIe domains (d >= 1): full in one, else 500 / d. */
static int32_t domains_score(int d)
{
    return d == 1 ? 1000 : 500 / d;
}

static uint32_t free_mask(const struct gs_fleet *f, const struct fnode *nd)
{
    uint32_t m = 0;
    for (int i = 0; i < nd->ngpu; i++)
        if (nd->cards[i].mode == GS_CARD_FREE && may_take(f, &nd->cards[i], GS_CARD_EXCLUSIVE))
            m |= 1u << i;
    return m;
}

/*
 * Cards for a pod no NVLink group holds, on a node whose template gives NVLink pair counts (a
 * DGX-1's cross links): start from the free card with the most bonded NVLinks to other free ones,
 * then add the free card with the most bonded NVLinks to those chosen; ties go to the lowest
 * index. @pairs: the NVLink-linked pairs among the cards chosen (TopologyScore's share of them).
 */
static uint32_t span_nvlink(uint8_t (*links)[GS_GPUS_MAX], uint32_t free, int n, int *pairs)
{
    uint32_t m = 0;
    *pairs = 0;
    for (int k = 0; k < n; k++) {
        int best = -1, best_w = -1;
        for (uint32_t c = free & ~m; c; c &= c - 1) {
            int g = __builtin_ctz(c), w = 0;
            for (uint32_t o = m ? m : free & ~(1u << g); o; o &= o - 1)
                w += links[g][__builtin_ctz(o)];
            if (w > best_w) {
                best = g;
                best_w = w;
            }
        }
        for (uint32_t o = m; o; o &= o - 1)
            *pairs += links[best][__builtin_ctz(o)] > 0;
        m |= 1u << best;
    }
    return m;
}

static enum gs_fit_reason pick_whole(const struct gs_fleet *f, const struct fnode *nd,
                                     const struct gs_fit *r, uint32_t *mask, int32_t *topo)
{
    int pairs;
    if (nd->nfree < r->ncards)
        return GS_FIT_GPU;
    uint32_t free = free_mask(f, nd), m;
    if (__builtin_popcount(free) < r->ncards)
        return GS_FIT_GPU;
    if (r->tier == GS_TIER_NVLINK) {
        m = nvlink_then_pcie(nd, free, r->ncards, r->nvlink_only);
        if (m) {
            *mask = m;
            *topo = domains_of(nd, m) == 1 ? 1000 : 800;
            return GS_FIT_OK;
        }
        if (!r->tier_soft || r->nvlink_only)
            return GS_FIT_NVLINK;
    }
    if ((m = nvlink_then_pcie(nd, free, r->ncards, 0))) {
        *topo = domains_of(nd, m) == 1 ? 1000 : 800;
    } else if ((m = best_group(nd, free, r->ncards, 0, 0))) {
        /* one PCIe domain: the best this node can do unless an NVLink group could hold them */
        *topo = r->ncards == 1 || r->ncards > nd->nvlink_max ? 1000 : 700;
    } else if (nd->links >= 0) {
        m = span_nvlink(f->links[nd->links], free, r->ncards, &pairs);
        *topo = 500 / domains_of(nd, m) + 200 * pairs / (r->ncards * (r->ncards - 1) / 2);
    } else {
        m = gs__cards_lowest(free, r->ncards);
        *topo = 500 / domains_of(nd, m);
    }
    if (r->tier == GS_TIER_NVLINK) /* a preferred NVLink group not had: below any that is */
        *topo /= 2;
    *mask = m;
    return GS_FIT_OK;
}

/* The smaller of two client caps, 0 meaning none. */
static int32_t clients_cap(int32_t a, int32_t b)
{
    return a == 0 ? b : b == 0 || a < b ? a : b;
}

/* The mode a slice of @r puts a card in: shared, or time-sliced. */
static uint8_t slice_mode(const struct gs_fit *r)
{
    return r->timeslice ? GS_CARD_TIMESLICED : GS_CARD_SHARED;
}

/* Clients a pod of @r is on each of its cards. */
static int32_t units_of(const struct gs_fit *r)
{
    return r->units > 1 ? r->units : 1;
}

/* Memory a slice of @r takes on a card of @nd: as declared, else its replicas' even part. */
static int64_t slice_mem(const struct fnode *nd, const struct card *c, const struct gs_fit *r)
{
    return r->mem_mib > 0 || !r->timeslice ? r->mem_mib : c->mem_mib / nd->replicas * units_of(r);
}

/* What card @c of @nd, in shared mode or free, leaves a shared slice of @r's kind, whatever its
 * size. */
static void share_card(const struct fnode *nd, const struct card *c, int gpu,
                       const struct gs_fit *r, struct gs_share_card *e)
{
    int shared = c->mode == GS_CARD_SHARED;
    int32_t cap = shared && c->cap < r->overcommit ? c->cap : r->overcommit;
    int32_t most = clients_cap(clients_cap(shared ? c->max_clients : 0, r->max_clients), nd->split);
    e->mem_left = c->mem_mib - c->mem_used;
    e->head = cap - c->compute;
    e->busy_left = cap > 1000 ? 1000 - c->busy : -1;
    e->used = c->compute;
    e->gpu = (uint8_t)gpu;
    e->pcie = c->pcie;
    e->shared = (uint8_t)shared;
    e->room = c->clients + units_of(r) <= (most ? most : GS_CARD_CLIENTS_MAX);
}

/*
 * Does a shared slice of @r's size join the card of @e: memory never overcommitted; compute up
 * to the cap, the smallest of the pods' there and @r's; clients up to the smallest cap of any pod
 * there and of the node's device plugin (its nvidia.com/gpu devices per card). Sharing that follows
 * utilisation: where every pod on the card may be overcommitted (cap above 1000), the shares asked
 * may pass the cap as long as what the pods keep the card busy sums to the card at most.
 */
static enum gs_fit_reason slice_takes(const struct gs_share_card *e, const struct gs_fit *r)
{
    if (e->mem_left < r->mem_mib)
        return GS_FIT_GPUMEM;
    if (r->compute > e->head && r->rate > e->busy_left)
        return GS_FIT_GPUCORES;
    return e->room ? GS_FIT_OK : GS_FIT_GPU;
}

/* Can card @c take a slice in @r's mode at all: only a free card or one in that mode. */
static int slice_mode_ok(const struct gs_fleet *f, const struct card *c, const struct gs_fit *r)
{
    return c->mode == GS_CARD_FREE ? may_take(f, c, slice_mode(r))
                                   : c->mode == slice_mode(r) && !c->bad;
}

/*
 * Can a slice of @r join card @c: one mode per card (slice_mode_ok()); a time-slice replica
 * with its memory, up to the node's replicas; a shared slice as slice_takes() says.
 */
static enum gs_fit_reason slice_fits(const struct gs_fleet *f, const struct fnode *nd,
                                     const struct card *c, const struct gs_fit *r)
{
    if (!slice_mode_ok(f, c, r))
        return GS_FIT_GPU;
    if (r->timeslice) { /* its replicas first: a replica asking no memory is charged its part */
        if (c->clients + units_of(r) > nd->replicas)
            return GS_FIT_GPU;
        return c->mem_mib - c->mem_used < slice_mem(nd, c, r) ? GS_FIT_GPUMEM : GS_FIT_OK;
    }
    struct gs_share_card e;
    share_card(nd, c, 0, r, &e);
    return slice_takes(&e, r);
}

/* Does a slice take card @b before card @a: cards already in its mode first, fullest memory
 * first (best fit), then free cards; else in index order. */
static int slice_before(const struct card *b, const struct card *a)
{
    int a_used = a->mode != GS_CARD_FREE, b_used = b->mode != GS_CARD_FREE;
    return b_used > a_used ||
           (a_used == b_used && b->mem_mib - b->mem_used < a->mem_mib - a->mem_used);
}

/* Where a time-slice replica of compute @ask would go on card @c: 0 a card in the mode whose
 * time it fits without stretching the pods there, 1 a free card, 2 a card whose time it would
 * overcommit. */
static int replica_rank(const struct card *c, int32_t ask)
{
    return c->mode == GS_CARD_FREE ? 1 : c->compute + ask <= 1000 ? 0 : 2;
}

/* Does a replica of @r take card @b before card @a: by replica_rank(), the busiest card first
 * where it fits (best fit), the least overcommitted first where none does; as NVIDIA's device
 * plugin hands out replicas over the cards, fewest taken first, so that a replica does not halve
 * another's time while a card is idle. Else as a slice (slice_before()). */
static int replica_before(const struct card *b, const struct card *a, const struct gs_fit *r)
{
    int rb = replica_rank(b, r->compute), ra = replica_rank(a, r->compute);
    if (rb != ra)
        return rb < ra;
    if (rb != 1 && b->compute != a->compute)
        return rb == 0 ? b->compute > a->compute : b->compute < a->compute;
    return slice_before(b, a);
}

/* Time-slice replicas (replica_before()) and shared slices: cards already in the slice's mode
 * first, fullest memory first (best fit), then free cards. A shared slice takes the cards
 * gs_fleet_share_pick() would from the node's view: the first of that order that take it (ties
 * in index order both ways). */
static enum gs_fit_reason pick_sliced(const struct gs_fleet *f, const struct fnode *nd,
                                      const struct gs_fit *r, uint32_t *mask, int32_t *topo)
{
    int order[GS_GPUS_MAX], n = 0;
    enum gs_fit_reason why = GS_FIT_GPU;
    if (!nd->nfree && !(r->timeslice ? nd->nsliced : nd->nshared))
        return why; /* no card free or in the slice's mode: each would say so */
    for (int i = 0; i < nd->ngpu; i++) {
        enum gs_fit_reason no = slice_fits(f, nd, &nd->cards[i], r);
        if (no != GS_FIT_OK) {
            if (no > why)
                why = no;
            continue;
        }
        int j = n++;
        for (; j > 0 && (r->timeslice ? replica_before(&nd->cards[i], &nd->cards[order[j - 1]], r)
                                      : slice_before(&nd->cards[i], &nd->cards[order[j - 1]]));
             j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    if (n < r->ncards)
        return why;
    uint32_t m = 0;
    for (int k = 0; k < r->ncards; k++)
        m |= 1u << order[k];
    *mask = m;
    *topo = domains_score(domains_of(nd, m));
    return GS_FIT_OK;
}

/* The node's cards' compute held, each card's up to 1000, with @r on @mask; read from the sum the
 * fleet keeps (used[]), put right for the cards of @mask. */
static int32_t packing_after(const struct gs_fleet *f, const struct fnode *nd, size_t node,
                             const struct gs_fit *r, uint32_t mask)
{
    if (!nd->ngpu)
        return 0;
    int64_t used = f->used[node];
    for (uint32_t m = mask; m; m &= m - 1) {
        int32_t c = nd->cards[__builtin_ctz(m)].compute, a = r->whole ? 1000 : c + r->compute;
        used += (a < 1000 ? a : 1000) - (c < 1000 ? c : 1000);
    }
    return (int32_t)(used / nd->ngpu);
}

/* A MIG request: the card (already in MIG mode, else free) and slot that keep the most
 * profiles placeable (gs_mig_card_score(): best fit within the card, and across cards). */
static enum gs_fit_reason pick_mig(const struct gs_fleet *f, const struct fnode *nd,
                                   const struct gs_fit *r, uint32_t *mask, int *start)
{
    int prof = nd->mig_model < 0 ? -1 : gs_mig_profile_find(nd->mig_model, r->mig, -1);
    if (prof < 0)
        return GS_FIT_MIG_MODEL;
    if (!(nd->mig_allowed & (1u << prof)))
        return GS_FIT_MIG_POLICY;
    struct mig_empty own; /* a node whose allowed profiles are not its geometry's first node's */
    const struct mig_empty *e = &f->mig_empty[nd->mig_model];
    if (e->allowed != nd->mig_allowed) {
        mig_empty_make(&own, nd->mig_model, nd->mig_allowed);
        e = &own;
    }
    int best = -1, best_score = -1, empty_seen = 0;
    for (int i = 0; i < nd->ngpu; i++) {
        const struct card *c = &nd->cards[i];
        int sc;
        if (c->mode == GS_CARD_FREE && may_take(f, c, GS_CARD_MIG)) {
            if (empty_seen++) /* every empty card scores as the first one did: it cannot win */
                continue;
            sc = e->score[prof];
        } else if (c->mode != GS_CARD_MIG || c->bad || gs_mig_card_score(&c->mig, prof, &sc)) {
            continue;
        }
        if (sc > best_score) {
            best_score = sc;
            best = i;
        }
    }
    if (best < 0)
        return GS_FIT_MIG;
    if (nd->cards[best].mode == GS_CARD_FREE)
        *start = e->start[prof];
    else if (gs_mig_card_best_start(&nd->cards[best].mig, prof, start) < 0)
        return GS_FIT_MIG;
    *mask = 1u << best;
    return GS_FIT_OK;
}

/* Replicas of gang @group on node @nd: GS_FIT's spread, 1000 with none, 0 from 4 on. */
static int32_t spread_of(const struct fnode *nd, int32_t group)
{
    int same = 0;
    for (size_t i = 0; group >= 0 && i < nd->npods; i++)
        same += nd->pods[i].group == group;
    return gs__spread_score(same);
}

/* gs_fleet_share_view() of node @node (@nd), its host already found to take @r. */
static void share_view(const struct gs_fleet *f, const struct fnode *nd, size_t node,
                       const struct gs_fit *r, struct gs_share_view *v)
{
    v->why = GS_FIT_OK;
    v->n = 0;
    v->ngpu = (uint8_t)nd->ngpu;
    v->isolation = gs_fleet_isolation(f, node, r);
    v->spread = spread_of(nd, r->group);
    v->packed = 0;
    for (int i = 0; i < nd->ngpu; i++)
        v->packed += nd->cards[i].compute < 1000 ? nd->cards[i].compute : 1000;
    if (!nd->nfree && !nd->nshared)
        return; /* no card free or shared: each would say so */
    uint8_t order[GS_GPUS_MAX];
    for (int i = 0; i < nd->ngpu; i++) {
        if (!slice_mode_ok(f, &nd->cards[i], r))
            continue;
        int j = v->n++;
        for (; j > 0 && slice_before(&nd->cards[i], &nd->cards[order[j - 1]]); j--)
            order[j] = order[j - 1];
        order[j] = (uint8_t)i;
    }
    for (int k = 0; k < v->n; k++)
        share_card(nd, &nd->cards[order[k]], order[k], r, &v->card[k]);
}

int gs_fleet_share_view(const struct gs_fleet *f, size_t node, const struct gs_fit *r,
                        struct gs_share_view *v)
{
    if (r->whole || r->mig || r->timeslice || r->ncards <= 0)
        return -EINVAL;
    const struct fnode *nd = &f->nodes[node];
    v->why = (uint8_t)fit_host(nd, node, r);
    if (v->why == GS_FIT_OK)
        share_view(f, nd, node, r, v);
    return 0;
}

/* Shared slices: the first cards of the view's order that take one; a failing node says the
 * gravest of its cards' reasons. */
enum gs_fit_reason gs_fleet_share_pick(const struct gs_share_view *v, const struct gs_fit *r,
                                       struct gs_fit_choice *out)
{
    if (v->why != GS_FIT_OK)
        return (enum gs_fit_reason)v->why;
    enum gs_fit_reason why = GS_FIT_GPU;
    uint32_t mask = 0, domains = 0;
    int64_t packed = v->packed;
    int got = 0;
    for (int k = 0; k < v->n && got < r->ncards; k++) {
        const struct gs_share_card *e = &v->card[k];
        enum gs_fit_reason no = slice_takes(e, r);
        if (no != GS_FIT_OK) {
            why = no > why ? no : why;
            continue;
        }
        int32_t after = e->used + r->compute;
        mask |= 1u << e->gpu;
        domains |= 1u << (e->pcie % 32);
        packed += (after < 1000 ? after : 1000) - (e->used < 1000 ? e->used : 1000);
        got++;
    }
    if (got < r->ncards)
        return why;
    out->mask = mask;
    out->topology = domains_score(__builtin_popcount(domains));
    out->packing = (int32_t)(packed / v->ngpu);
    out->isolation = v->isolation;
    out->spread = v->spread;
    out->mig_start = -1;
    return GS_FIT_OK;
}

enum gs_fit_reason gs_fleet_fit(const struct gs_fleet *f, size_t node, const struct gs_fit *r,
                                struct gs_fit_choice *out)
{
    const struct fnode *nd = &f->nodes[node];
    enum gs_fit_reason why = fit_host(nd, node, r);
    if (why != GS_FIT_OK)
        return why;
    uint32_t mask = 0;
    int32_t topo = 1000;
    out->mig_start = -1;
    if (r->mig) {
        why = pick_mig(f, nd, r, &mask, &out->mig_start);
        if (why != GS_FIT_OK)
            return why;
    } else if (r->timeslice && nd->replicas <= 0) {
        return GS_FIT_GPU;
    } else if (r->ncards > 0) {
        why = r->whole ? pick_whole(f, nd, r, &mask, &topo) : pick_sliced(f, nd, r, &mask, &topo);
        if (why != GS_FIT_OK)
            return why;
    }
    out->mask = mask;
    out->topology = topo;
    out->packing = packing_after(f, nd, node, r, mask);
    out->isolation = gs_fleet_isolation(f, node, r);
    out->spread = spread_of(nd, r->group);
    return GS_FIT_OK;
}

/* Is @sl's pod among @gone[0..@ngone)? */
static int is_gone(const struct slot *sl, const int32_t *gone, size_t ngone)
{
    for (size_t k = 0; k < ngone; k++)
        if (gone[k] == sl->pod)
            return 1;
    return 0;
}

/* The tenant of every pod on @nd that is not in @gone (as release() recomputes it): -1 none, -2
 * several. Read only where isolation asks it. */
static int32_t sole_without(const struct fnode *nd, const int32_t *gone, size_t ngone)
{
    int32_t sole = -1;
    for (size_t i = 0; i < nd->npods; i++)
        if (!is_gone(&nd->pods[i], gone, ngone))
            sole = sole == -1 || sole == nd->pods[i].tenant ? nd->pods[i].tenant : -2;
    return sole;
}

/* Would card @c be free for an exclusive pod with @left of its clients staying? As release()
 * leaves it: its mode forgotten when the pod that gave it leaves in the same instant. */
static int free_without(const struct gs_fleet *f, const struct card *c, int32_t left,
                        const int32_t *gone, size_t ngone)
{
    if ((c->mode != GS_CARD_FREE && left != 0) || c->bad)
        return 0;
    int undone = 0; /* its mode came with a pod leaving now: mode_leave() forgets it */
    for (size_t k = 0; c->mode != GS_CARD_FREE && c->since_us == f->now_us && k < ngone; k++)
        undone |= gone[k] == c->entered_by;
    return undone ? may_become(f, c->prev_mode, c->prev_since_us, GS_CARD_EXCLUSIVE)
                  : may_become(f, c->last_mode, c->since_us, GS_CARD_EXCLUSIVE);
}

/* The host is checked first, then the pods gone: only the cards they are on change their count
 * of clients, and only a node with hard isolation asks whose pods stay. */
int gs_fleet_fits_without(const struct gs_fleet *f, size_t node, const struct gs_fit *r,
                          const int32_t *gone, size_t ngone)
{
    if (!r->whole || r->mig || r->ncards <= 0)
        return -EINVAL;
    const struct fnode *nd = &f->nodes[node];
    if (nd->down || fit_pinned(nd, node, r) != GS_FIT_OK ||
        !gs__model_allowed(r->model_mask, nd->model) || r->ncards > nd->ngpu)
        return 0;
    int32_t taken[GS_GPUS_MAX];
    uint32_t touched = 0;
    int64_t cpu = nd->cpu_left, mem = nd->mem_left;
    int hard = nd->hard;
    size_t pods = nd->npods;
    for (size_t i = 0; i < nd->npods; i++) {
        const struct slot *sl = &nd->pods[i];
        if (!is_gone(sl, gone, ngone))
            continue;
        pods--;
        cpu += sl->cpu_milli;
        mem += sl->memory_mib;
        hard -= sl->hard;
        for (uint32_t m = sl->mask; m; m &= m - 1) {
            int g = __builtin_ctz(m);
            taken[g] = (touched & (1u << g) ? taken[g] : 0) + sl->units;
            touched |= 1u << g;
        }
    }
    if (pods >= (size_t)nd->max_pods || r->cpu_milli > cpu || r->memory_mib > mem)
        return 0;
    if (r->hard || hard) {
        int32_t sole = sole_without(nd, gone, ngone);
        if (r->hard ? (sole >= 0 && sole != r->tenant) || sole == -2 : sole != r->tenant)
            return 0;
    }
    uint32_t free = 0;
    int nfree = 0;
    for (int g = 0; g < nd->ngpu; g++) {
        const struct card *c = &nd->cards[g];
        int32_t left = c->clients - (touched & (1u << g) ? taken[g] : 0);
        if (free_without(f, c, left, gone, ngone)) {
            free |= 1u << g;
            nfree++;
        }
    }
    if (nfree < r->ncards)
        return 0;
    if (r->tier == GS_TIER_NVLINK && (!r->tier_soft || r->nvlink_only))
        return best_group(nd, free, r->ncards, 1, r->nvlink_only) != 0;
    return 1;
}

void gs_fleet_prefetch(const struct gs_fleet *f, size_t node, int pods)
{
    const struct fnode *nd = &f->nodes[node];
    if (pods) {
        for (size_t i = 0; i < nd->npods; i += 64 / sizeof(*nd->pods))
            __builtin_prefetch(&nd->pods[i]);
        return;
    }
    __builtin_prefetch(nd);
    __builtin_prefetch((const char *)nd + 64);
    for (int g = 0; g < f->ngpu[node]; g++)
        __builtin_prefetch(&nd->cards[g]);
}

/* Create (+1) or destroy (-1) the pod's MIG instance; the card leaves MIG mode when empty. */
static void mig_apply(struct fnode *nd, struct card *c, const struct gs_fit *r, int sign)
{
    const struct gs_mig_model *mm = gs_mig_model_at(nd->mig_model);
    int prof = gs_mig_profile_find(nd->mig_model, r->mig, -1);
    int32_t share = mm->profiles[prof].compute_slices * 1000 / mm->compute_slices;
    if (sign > 0) {
        if (c->mode == GS_CARD_FREE) {
            gs_mig_card_init(&c->mig, nd->mig_model, nd->mig_allowed);
            c->mode = GS_CARD_MIG;
            nd->nfree--;
            nd->nmig++;
        }
        gs_mig_card_create(&c->mig, prof, r->mig_start, NULL);
    } else {
        gs_mig_card_destroy(&c->mig, r->mig_start, NULL);
    }
    c->compute += sign * share;
    c->clients += sign;
    if (c->mode == GS_CARD_MIG && c->mig.ninst == 0) {
        c->mode = GS_CARD_FREE;
        c->compute = 0;
        nd->nfree++;
        nd->nmig--;
    }
}

/* The bits of @nd's cards. */
static uint32_t cards_of(const struct fnode *nd)
{
    return nd->ngpu < 32 ? (1u << nd->ngpu) - 1 : ~0u;
}

/* A shared slice or time-slice replica joins (+1) or leaves (-1) card @c. */
static void slice_apply(struct fnode *nd, struct card *c, const struct gs_fit *r, int sign)
{
    int *count = r->timeslice ? &nd->nsliced : &nd->nshared;
    if (sign > 0 && c->mode == GS_CARD_FREE) {
        c->mode = slice_mode(r);
        c->cap = r->overcommit;
        c->max_clients = r->max_clients;
        nd->nfree--;
        (*count)++;
    } else if (sign > 0) {
        c->cap = r->overcommit < c->cap ? r->overcommit : c->cap;
        c->max_clients = clients_cap(c->max_clients, r->max_clients);
    }
    c->compute += sign * r->compute;
    c->busy += sign * r->rate;
    c->mem_used += sign * slice_mem(nd, c, r);
    c->clients += sign * units_of(r);
    if (c->clients == 0) {
        c->mode = GS_CARD_FREE;
        c->cap = c->max_clients = c->busy = 0;
        nd->nfree++;
        (*count)--;
    }
}

/* Adds @sign times the pod's share to the cards of @mask, keeping the fleet's allocated sum. */
static void cards_apply(struct gs_fleet *f, struct fnode *nd, const struct gs_fit *r, uint32_t mask,
                        int sign, int32_t pod)
{
    for (uint32_t m = mask & cards_of(nd); m; m &= m - 1) {
        struct card *c = &nd->cards[__builtin_ctz(m)];
        int32_t before = c->compute < 1000 ? c->compute : 1000;
        uint8_t was = c->mode;
        if (r->mig) {
            mig_apply(nd, c, r, sign);
        } else if (r->whole) {
            c->mode = sign > 0 ? GS_CARD_EXCLUSIVE : GS_CARD_FREE;
            c->compute = sign > 0 ? 1000 : 0;
            c->mem_used = sign > 0 ? c->mem_mib : 0;
            c->clients = sign > 0;
            nd->nfree -= sign;
        } else {
            slice_apply(nd, c, r, sign);
        }
        if (was == GS_CARD_FREE && c->mode != GS_CARD_FREE)
            mode_enter(f, c, pod);
        else if (was != GS_CARD_FREE && c->mode == GS_CARD_FREE)
            mode_leave(f, c, pod);
        int32_t delta = (c->compute < 1000 ? c->compute : 1000) - before;
        f->allocated += delta;
        f->used[nd - f->nodes] += delta;
    }
    size_t node = (size_t)(nd - f->nodes);
    f->nfree[node] = (uint8_t)nd->nfree;
    if (!f->is_moved[node]) {
        f->is_moved[node] = 1;
        f->moved[f->nmoved++] = (int32_t)node;
    }
}

static int mig_valid(const struct gs_fleet *f, const struct fnode *nd, const struct gs_fit *r,
                     uint32_t mask)
{
    int prof = nd->mig_model < 0 ? -1 : gs_mig_profile_find(nd->mig_model, r->mig, -1);
    if (prof < 0 || !(nd->mig_allowed & (1u << prof)) || __builtin_popcount(mask) != 1 ||
        (nd->ngpu < 32 && (mask >> nd->ngpu)))
        return 0;
    const struct card *c = &nd->cards[__builtin_ctz(mask)];
    struct gs_mig_card probe = c->mig;
    if (c->mode == GS_CARD_FREE && may_take(f, c, GS_CARD_MIG))
        gs_mig_card_init(&probe, nd->mig_model, nd->mig_allowed);
    else if (c->mode != GS_CARD_MIG)
        return 0;
    unsigned starts;
    return r->mig_start >= 0 && r->mig_start < 32 &&
           gs_mig_card_starts(&probe, prof, &starts) > 0 && (starts & (1u << r->mig_start));
}

static int mask_valid(const struct gs_fleet *f, const struct fnode *nd, const struct gs_fit *r,
                      uint32_t mask)
{
    if (r->mig)
        return mig_valid(f, nd, r, mask);
    if (__builtin_popcount(mask) != r->ncards || (nd->ngpu < 32 && (mask >> nd->ngpu)))
        return 0;
    if (r->whole)
        return (mask & ~free_mask(f, nd)) == 0;
    for (uint32_t m = mask; m; m &= m - 1)
        if (slice_fits(f, nd, &nd->cards[__builtin_ctz(m)], r) != GS_FIT_OK)
            return 0;
    return 1;
}

/* A shared card's caps (compute ratio, clients) are the smallest of the pods on it now: one
 * leaving may raise them. */
static void caps_recompute(struct fnode *nd, uint32_t mask)
{
    for (uint32_t m = mask & cards_of(nd); m; m &= m - 1) {
        int g = __builtin_ctz(m);
        if (nd->cards[g].mode != GS_CARD_SHARED)
            continue;
        int32_t cap = INT32_MAX, most = 0;
        for (size_t i = 0; i < nd->npods; i++) {
            const struct slot *sl = &nd->pods[i];
            if (!(sl->mask & (1u << g)) || sl->overcommit <= 0)
                continue;
            cap = sl->overcommit < cap ? sl->overcommit : cap;
            most = clients_cap(most, sl->max_clients);
        }
        nd->cards[g].cap = cap;
        nd->cards[g].max_clients = most;
    }
}

int gs_fleet_commit(struct gs_fleet *f, size_t node, const struct gs_fit *r, uint32_t mask,
                    int32_t pod)
{
    struct fnode *nd = &f->nodes[node];
    if (fit_host(nd, node, r) != GS_FIT_OK || !mask_valid(f, nd, r, mask))
        return -EINVAL;
    struct slot *p = gs_grow(nd->pods, &nd->cap, nd->npods + 1, sizeof(*p), 4);
    if (!p)
        return -ENOMEM;
    nd->pods = p;
    int shared = !r->whole && !r->mig && !r->timeslice;
    nd->pods[nd->npods++] = (struct slot){.pod = pod,
                                          .tenant = r->tenant,
                                          .group = r->group,
                                          .overcommit = shared ? r->overcommit : 0,
                                          .max_clients = shared ? r->max_clients : 0,
                                          .units = r->whole || r->mig ? 1 : units_of(r),
                                          .mask = mask,
                                          .hard = r->hard,
                                          .cpu_milli = r->cpu_milli,
                                          .memory_mib = r->memory_mib};
    nd->sole_tenant = nd->sole_tenant == -1 || nd->sole_tenant == r->tenant ? r->tenant : -2;
    nd->hard += r->hard;
    nd->cpu_left -= r->cpu_milli;
    nd->mem_left -= r->memory_mib;
    cards_apply(f, nd, r, mask, 1, pod);
    set_bare(f, node);
    return 0;
}

int gs_fleet_release(struct gs_fleet *f, size_t node, const struct gs_fit *r, uint32_t mask,
                     int32_t pod)
{
    struct fnode *nd = &f->nodes[node];
    size_t i = 0;
    while (i < nd->npods && nd->pods[i].pod != pod)
        i++;
    if (i == nd->npods)
        return -ENOENT;
    nd->pods[i] = nd->pods[--nd->npods];
    nd->sole_tenant = -1;
    for (size_t k = 0; k < nd->npods && nd->sole_tenant != -2; k++)
        if (nd->sole_tenant == -1 || nd->sole_tenant == nd->pods[k].tenant)
            nd->sole_tenant = nd->pods[k].tenant;
        else
            nd->sole_tenant = -2;
    nd->hard -= r->hard;
    nd->cpu_left += r->cpu_milli;
    nd->mem_left += r->memory_mib;
    cards_apply(f, nd, r, mask, -1, pod);
    if (!r->whole && !r->mig && !r->timeslice)
        caps_recompute(nd, mask);
    set_bare(f, node);
    return 0;
}

/* A release swaps the pod's slot with the last and drops it; a commit appends one. Dropped slots
 * kept past the end, in the order they were dropped from it, are what the commits in reverse
 * order would append: each released pod's slot is swapped with the last and the count put back
 * at the end. A card becomes free, and takes its mode back, only when all its pods leave: the
 * last of them to leave is the first to come back. */
int gs_fleet_cycle(struct gs_fleet *f, size_t node, const int32_t *pods, size_t n)
{
    struct fnode *nd = &f->nodes[node];
    size_t all = nd->npods, np = all, k = 0;
    uint32_t cards = 0;
    for (; k < n; k++) {
        size_t i = 0;
        while (i < np && nd->pods[i].pod != pods[k])
            i++;
        if (i == np)
            break;
        struct slot s = nd->pods[i];
        nd->pods[i] = nd->pods[--np];
        nd->pods[np] = s;
        cards |= s.mask;
    }
    for (size_t i = 0; i < np; i++)
        cards &= ~nd->pods[i].mask; /* a card some pod stays on keeps its mode */
    for (uint32_t m = cards; m; m &= m - 1) {
        int g = __builtin_ctz(m);
        size_t last = np; /* the slot of the last to leave: the lowest of those dropped */
        while (!(nd->pods[last].mask & (1u << g)))
            last++;
        mode_leave(f, &nd->cards[g], nd->pods[last].pod);
        mode_enter(f, &nd->cards[g], nd->pods[last].pod);
    }
    nd->npods = all;
    f->ver[node]++;
    return k == n ? 0 : -ENOENT;
}

int gs_fleet_mig_allowed(const struct gs_policy *s, int mig_model, int profile)
{
    if (profile < 0 || profile >= GS_MIG_PROFILES_MAX)
        return 0;
    if (!s->has_mig_policy)
        return 1;
    const struct gs_mig_policy *p = &s->mig_policy;
    for (int i = 0; p->strategy == GS_MIG_STRATEGY_MIXED && i < p->ndevices; i++)
        if (p->devices[i].model == mig_model)
            return p->devices[i].mig_enabled && (p->devices[i].allowed & (1u << profile));
    return 0;
}
