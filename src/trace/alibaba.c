/*
 * The Alibaba GPU-sharing trace (github.com/alibaba/clusterdata, cluster-trace-gpu-v2023; Weng et
 * al., USENIX ATC '23) and arrival sequences in the format of the FGD study's reference runs.
 */
#include "gpusched/trace.h"

#include "csv.h"
#include "gpusched/catalog.h"
#include "gpusched/diag.h"
#include "gpusched/grow.h"
#include "gpusched/policy.h"
#include "gpusched/sched.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CPU_MILLI_MAX  100000000LL  /* 100,000 cores */
#define MEMORY_MIB_MAX 1073741824LL /* 1 PiB: sums over 10M rows stay in 64 bits */

/*
 * Name -> row index, open addressing; used for duplicate checks and sequence look-ups. Rows are
 * structs whose first member is the NUL-terminated name, @size bytes apart.
 */
struct name_index {
    int32_t *slot;
    size_t cap;
    const char *rows;
    size_t size;
};

_Static_assert(offsetof(struct gs_trace_pod, name) == 0, "name first");
_Static_assert(offsetof(struct gs_trace_node, name) == 0, "name first");

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static const char *name_at(const struct name_index *ix, int32_t i)
{
    return ix->rows + (size_t)i * ix->size;
}

/* Find @name; insert @row when absent and @row >= 0. Return: the row found, or -1. */
static int32_t index_get(struct name_index *ix, const char *name, int32_t row)
{
    size_t h = hash_name(name) & (ix->cap - 1);
    while (ix->slot[h] >= 0) {
        if (strcmp(name_at(ix, ix->slot[h]), name) == 0)
            return ix->slot[h];
        h = (h + 1) & (ix->cap - 1);
    }
    if (row >= 0)
        ix->slot[h] = row;
    return -1;
}

/* (Re)build @ix over the first @n rows at @rows, with room for @room rows at most half full. */
static int index_build(struct name_index *ix, const void *rows, size_t size, size_t n, size_t room)
{
    free(ix->slot);
    ix->cap = gs_grow_cap(0, room * 2 + 2, 16);
    ix->slot = malloc(ix->cap * sizeof(*ix->slot));
    if (!ix->slot)
        return -ENOMEM;
    memset(ix->slot, 0xff, ix->cap * sizeof(*ix->slot));
    ix->rows = rows;
    ix->size = size;
    for (size_t i = 0; i < n; i++)
        index_get(ix, name_at(ix, (int32_t)i), (int32_t)i);
    return 0;
}

static int parse_name(struct csv *c, int col, char *dst, size_t cap, struct gs_diag *d)
{
    size_t len = strlen(c->field[col]);
    if (len == 0)
        return csv_error(c, col, d, "empty name");
    if (len >= cap)
        return csv_error(c, col, d, "name longer than %zu bytes", cap - 1);
    if (!gs_text_plain(c->field[col]))
        return csv_error(c, col, d, "a name must be %s", GS_TEXT_PLAIN_IS);
    memcpy(dst, c->field[col], len + 1);
    return 0;
}

static int is_nan(const char *s)
{
    return *s == '\0' || strcasecmp(s, "nan") == 0;
}

static int parse_node(struct csv *c, const int *col, struct gs_trace_node *n, struct gs_diag *d)
{
    int64_t gpus;
    memset(n, 0, sizeof(*n)); /* what no column gives (pods) is not given */
    int rc = parse_name(c, col[0], n->name, sizeof(n->name), d);
    if (!rc && !gs_dns_subdomain_ok(n->name, strlen(n->name))) /* as a Cluster's nodes are */
        return csv_error(c, col[0], d,
                         "\"%s\" is not a Kubernetes node name (a DNS-1123 subdomain: 1-253 "
                         "bytes of a-z, 0-9, '-' and '.', each dot-separated part starting and "
                         "ending with a letter or digit), which gpusched-agent and the API server "
                         "name a node by",
                         n->name);
    if (!rc)
        rc = csv_uint(c, col[1], CPU_MILLI_MAX, &n->cpu_milli, d);
    if (!rc)
        rc = csv_uint(c, col[2], MEMORY_MIB_MAX, &n->memory_mib, d);
    if (!rc)
        rc = csv_uint(c, col[3], GS_GPUS_MAX, &gpus, d);
    if (rc)
        return rc;
    if (n->cpu_milli == 0)
        return csv_error(c, col[1], d, "a node needs CPU (0 given)");
    if (n->memory_mib == 0)
        return csv_error(c, col[2], d, "a node needs memory (0 given)");
    n->gpus = (int)gpus;
    n->model = -1;
    const char *m = c->field[col[4]];
    if (gpus == 0) {
        if (!is_nan(m) && gs_catalog_find(m, -1) < 0)
            return csv_error(c, col[4], d, "unknown GPU model \"%s\"", m);
        return 0;
    }
    if (is_nan(m))
        return csv_error(c, col[4], d, "a node with %d GPUs needs a GPU model", n->gpus);
    n->model = gs_catalog_find(m, -1);
    if (n->model < 0)
        return csv_error(c, col[4], d, "unknown GPU model \"%s\"", m);
    return 0;
}

typedef int (*parse_fn)(struct csv *c, const int *col, void *row, struct gs_diag *d);

/*
 * Read a whole table: the columns @names (found by name; @unread, NULL-terminated, the format's
 * columns not read, any other refused), one row struct of @size bytes per line filled by @parse,
 * names unique (@what names a row in messages; @empty is the message for a table without rows).
 * Return: 0 and *@out (free()) of *@nout rows; -errno with @d.
 */
static int read_table(const char *path, const char *const *names, int ncols,
                      const char *const *unread, size_t size, parse_fn parse, const char *what,
                      const char *empty, void **out, size_t *nout, struct gs_diag *d)
{
    struct csv c;
    char *v = NULL;
    size_t n = 0, cap = 0;
    struct name_index ix = {0};
    int col[CSV_COLS_MAX], rc = csv_open(&c, path, d);
    if (rc)
        return rc;
    rc = csv_columns(&c, names, ncols, NULL, unread, col, d);
    while (!rc && (rc = csv_next(&c, d)) == 1) {
        size_t old = cap;
        char *g = gs_grow(v, &cap, n + 1, size, 1024);
        rc = g ? 0 : -ENOMEM;
        v = g ? g : v;
        if (!rc && (cap != old || !ix.slot)) /* rows moved or first row: re-index */
            rc = index_build(&ix, v, size, n, cap);
        if (!rc)
            rc = parse(&c, col, v + n * size, d);
        if (!rc && index_get(&ix, v + n * size, (int32_t)n) >= 0)
            rc = csv_error(&c, col[0], d, "duplicate %s \"%s\"", what, v + n * size);
        if (!rc)
            n++;
    }
    if (!rc && n == 0)
        rc = gs_diag_error(d, "%s: %s", path, empty);
    csv_close(&c);
    free(ix.slot);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *nout = n;
    return 0;
}

static int parse_node_row(struct csv *c, const int *col, void *row, struct gs_diag *d)
{
    if (c->rows > GS_NODES_MAX)
        return gs_diag_error(d, "%s:%lu:1: more than %d nodes", c->path, c->line, GS_NODES_MAX);
    return parse_node(c, col, row, d);
}

int gs_trace_read_nodes(const char *path, struct gs_trace_node **out, size_t *nout,
                        struct gs_diag *d)
{
    static const char *const names[] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
    void *v;
    int rc = read_table(path, names, 5, NULL, sizeof(**out), parse_node_row, "node",
                        "no nodes: the cluster is empty", &v, nout, d);
    if (!rc)
        *out = v;
    return rc;
}

int csv_gpu_spec(struct csv *c, int col, uint32_t *mask, struct gs_diag *d)
{
    const char *s = c->field[col];
    *mask = 0;
    if (is_nan(s))
        return 0;
    for (;;) { /* every name between bars, the one after a trailing bar included */
        const char *bar = strchr(s, '|');
        int len = bar ? (int)(bar - s) : (int)strlen(s);
        if (len == 0)
            return csv_error(c, col, d, "an empty model name in \"%s\"", c->field[col]);
        int m = gs_catalog_find(s, len);
        if (m < 0)
            return csv_error(c, col, d, "unknown GPU model \"%.*s\"", len, s);
        *mask |= 1u << m;
        if (!bar)
            break;
        s = bar + 1;
    }
    return 0;
}

static int parse_pod(struct csv *c, const int *col, struct gs_trace_pod *p, struct gs_diag *d)
{
    int64_t num, milli;
    int rc = parse_name(c, col[0], p->name, sizeof(p->name), d);
    if (!rc)
        rc = csv_uint(c, col[1], CPU_MILLI_MAX, &p->req.cpu_milli, d);
    if (!rc)
        rc = csv_uint(c, col[2], MEMORY_MIB_MAX, &p->req.memory_mib, d);
    if (!rc)
        rc = csv_uint(c, col[3], GS_GPUS_MAX, &num, d);
    if (!rc)
        rc = csv_uint(c, col[4], GS_MILLI_GPU, &milli, d);
    if (!rc)
        rc = csv_gpu_spec(c, col[5], &p->req.model_mask, d);
    if (rc)
        return rc;
    p->req.num_gpu = (uint32_t)num;
    p->req.gpu_milli = (uint32_t)milli;
    if (num == 0 && milli != 0)
        return csv_error(c, col[4], d, "%lld milli-GPU asked with num_gpu 0", (long long)milli);
    if (num == 0 && p->req.model_mask)
        return csv_error(c, col[5], d, "a GPU model for a pod that asks for no GPU");
    if (num > 0 && milli == 0)
        return csv_error(c, col[4], d, "num_gpu %lld with 0 milli-GPU each", (long long)num);
    if (num > 1 && milli < GS_MILLI_GPU)
        return csv_error(c, col[4], d, "a share (%lld) of more than one GPU", (long long)milli);
    return 0;
}

static int parse_pod_row(struct csv *c, const int *col, void *row, struct gs_diag *d)
{
    ((struct gs_trace_pod *)row)->line = (uint32_t)c->line;
    return parse_pod(c, col, row, d);
}

int gs_trace_read_pods(const char *path, struct gs_trace_pod **out, size_t *nout, struct gs_diag *d)
{
    static const char *const names[] = {"name",    "cpu_milli", "memory_mib",
                                        "num_gpu", "gpu_milli", "gpu_spec"};
    /* the trace's columns a replay does not read (docs/replay.md) */
    static const char *const unread[] = {"qos",           "pod_phase",      "creation_time",
                                         "deletion_time", "scheduled_time", NULL};
    void *v;
    int rc = read_table(path, names, 6, unread, sizeof(**out), parse_pod_row, "pod", "no pods", &v,
                        nout, d);
    if (!rc)
        *out = v;
    return rc;
}

/* is_policy() - whether @name is a placement policy's, in any case (peer_FGD, peer_fgd). */
static int is_policy(const char *name)
{
    for (const char *const *p = gs_policy_names(); *p; p++)
        if (strcasecmp(*p, name) == 0)
            return 1;
    return 0;
}

/*
 * seq_columns() - a sequence's columns: pod, seq (the row's place), peer_<Policy> (where that
 * policy placed it). Any other is refused, as is a peer column naming no policy: each would be
 * read as something and compared with nothing.
 */
static int seq_columns(struct csv *c, struct gs_sequence *seq, int *peer_col, int *seq_col,
                       struct gs_diag *d)
{
    seq->npeers = 0;
    *seq_col = csv_find(c, "seq");
    for (int i = 0; i < c->ncols; i++) {
        const char *h = c->header[i];
        if (i == *seq_col || strcmp(h, "pod") == 0)
            continue;
        if (strncmp(h, "peer_", 5) != 0)
            return gs_diag_error(d,
                                 "%s:1:%d: column \"%s\" is not read: a sequence has the columns "
                                 "seq, pod and peer_<Policy>",
                                 c->path, c->col[i], h);
        if (!is_policy(h + 5))
            return gs_diag_error(d, "%s:1:%d: column %s names no policy (%s)", c->path, c->col[i],
                                 h, "peer_FGD, peer_BestFit, ...");
        for (int k = 0; k < seq->npeers; k++)
            if (strcasecmp(seq->peer_policy[k], h + 5) == 0) /* policies match in any case */
                return gs_diag_error(d, "%s:1:%d: column %s: a second peer_ column of policy %s",
                                     c->path, c->col[i], h, seq->peer_policy[k]);
        if (seq->npeers == GS_SEQ_PEERS_MAX)
            return gs_diag_error(d, "%s:1:%d: more than %d peer_ columns", c->path, c->col[i],
                                 GS_SEQ_PEERS_MAX);
        snprintf(seq->peer_policy[seq->npeers], sizeof(seq->peer_policy[0]), "%s", h + 5);
        peer_col[seq->npeers++] = i;
    }
    return 0;
}

static int seq_row(struct csv *c, struct gs_sequence *seq, int pod_col, const int *peer_col,
                   int seq_col, struct name_index *pix, struct name_index *nix, struct gs_diag *d)
{
    int64_t at;
    if (seq_col >= 0 && csv_uint(c, seq_col, INT64_MAX, &at, d))
        return -EINVAL;
    if (seq_col >= 0 && at != (int64_t)seq->n)
        return csv_error(c, seq_col, d, "%lld is not this row's place in the order, %zu",
                         (long long)at, seq->n);
    int32_t p = index_get(pix, c->field[pod_col], -1);
    if (p < 0)
        return csv_error(c, pod_col, d, "pod \"%s\" is not in the pod list", c->field[pod_col]);
    seq->pod[seq->n] = (uint32_t)p;
    for (int k = 0; k < seq->npeers; k++) {
        const char *nm = c->field[peer_col[k]];
        int32_t node = -1;
        if (*nm && (node = index_get(nix, nm, -1)) < 0)
            return csv_error(c, peer_col[k], d, "node \"%s\" is not in the node list", nm);
        seq->peer[seq->n * (size_t)seq->npeers + (size_t)k] = node;
    }
    seq->n++;
    return 0;
}

int gs_trace_read_sequence(const char *path, const struct gs_trace_pod *pods, size_t npods,
                           const struct gs_trace_node *nodes, size_t nnodes,
                           struct gs_sequence *seq, struct gs_diag *d)
{
    struct csv c;
    struct name_index pix = {0}, nix = {0};
    int peer_col[GS_SEQ_PEERS_MAX], seq_col = -1;
    size_t cap = 0;
    memset(seq, 0, sizeof(*seq));
    int rc = csv_open(&c, path, d);
    if (rc)
        return rc;
    int pod_col = csv_need(&c, "pod", d);
    rc = pod_col < 0 ? pod_col : seq_columns(&c, seq, peer_col, &seq_col, d);
    if (!rc)
        rc = index_build(&pix, pods, sizeof(*pods), npods, npods);
    if (!rc)
        rc = index_build(&nix, nodes, sizeof(*nodes), nnodes, nnodes);
    while (!rc && (rc = csv_next(&c, d)) == 1) {
        if (seq->n == cap) {
            size_t cp = cap, cq = cap, w = seq->npeers ? seq->npeers : 1;
            uint32_t *p = gs_grow(seq->pod, &cp, seq->n + 1, sizeof(*p), 1024);
            if (p)
                seq->pod = p;
            int32_t *q = p ? gs_grow(seq->peer, &cq, seq->n + 1, w * sizeof(*q), 1024) : NULL;
            if (!q) {
                rc = -ENOMEM;
                break;
            }
            seq->peer = q;
            cap = cp;
        }
        rc = seq_row(&c, seq, pod_col, peer_col, seq_col, &pix, &nix, d);
    }
    if (!rc && seq->n == 0)
        rc = gs_diag_error(d, "%s: no pods in the sequence", path);
    csv_close(&c);
    free(pix.slot);
    free(nix.slot);
    if (rc)
        gs_sequence_free(seq);
    return rc;
}

void gs_sequence_free(struct gs_sequence *seq)
{
    if (!seq)
        return;
    free(seq->pod);
    free(seq->peer);
    memset(seq, 0, sizeof(*seq));
}

int gs_trace_build_cluster(const struct gs_trace_node *nodes, size_t n, struct gs_cluster **out,
                           struct gs_diag *d)
{
    struct gs_cluster *c;
    if (gs_cluster_new(&c) < 0)
        return -ENOMEM;
    int64_t gpus = 0;
    for (size_t i = 0; i < n; i++) {
        struct gs_node_spec s = {
            .name = nodes[i].name,
            .model = nodes[i].model,
            .gpus = nodes[i].gpus,
            .cpu_milli = nodes[i].cpu_milli,
            .memory_mib = nodes[i].memory_mib,
        };
        int rc = gs_cluster_add_node(c, &s, d);
        if (rc < 0) {
            gs_cluster_free(c);
            return rc;
        }
        gpus += nodes[i].gpus;
    }
    if (gpus == 0) {
        gs_cluster_free(c);
        return gs_diag_error(d, "the cluster has no GPU: nothing to schedule GPUs on");
    }
    *out = c;
    return 0;
}
