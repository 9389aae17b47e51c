/*
 * libgpushare — CUDA graphs' memory allocation nodes. The driver maps a graph's allocations when
 * the graph is launched or uploaded, from the device's graph memory (cuGraphAddMemAllocNode; a
 * stream-ordered allocation captured into a graph becomes such a node), and keeps that memory
 * until cuDeviceGraphMemTrim. So an executable graph's allocations are summed per device when it
 * is instantiated, and each launch or upload first makes sure the device's graph memory can grow
 * by what the graph may need beyond what is free in it; when it cannot, even after the process's
 * caches on the device are trimmed, the launch is refused with CUDA_ERROR_OUT_OF_MEMORY (NVIDIA
 * documents no code for a launch whose allocations the card cannot back; out-of-memory is the
 * driver's for every allocation it cannot back) and the graph does not run. What the graphs
 * really hold is charged at the synchronisation points (pool.c).
 *
 * The table of executable graphs is read without a lock on the launch path: an entry's fields are
 * written before its key is published (release order); a destroyed graph's entries keep their
 * slot as tombstones, so a probe never stops short. A graph launch of a process none of whose
 * graphs allocates costs one relaxed load.
 */
#include "shim.h"

#include <stdlib.h>
#include <string.h>

#define GRAPHS_MAX  4096                 /* slots of (graph, device) pairs */
#define GRAPHS_LIVE (GRAPHS_MAX * 3 / 4) /* pairs at once: probes stay short and always end */
#define TOMB        1u                   /* a destroyed graph's entry */

static struct {
    _Atomic uint64_t key; /* the CUgraphExec; 0: never used, TOMB: free again */
    uint64_t bytes;       /* its allocation nodes' sizes on the device, summed */
    int32_t ordinal;
    uint8_t autofree; /* CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH */
    _Atomic uint8_t launched;
} graphs[GRAPHS_MAX];
static _Atomic int ngraphs; /* entries in use */

static uint32_t slot_of(uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) % GRAPHS_MAX;
}

/* Sum @g's allocation nodes' sizes per device into @bytes, child graphs included. */
static void graph_bytes(CUgraph g, uint64_t *bytes, int depth)
{
    size_t n = 0;
    if (depth > 8 || GS_CALL(cuGraphGetNodes, (g, NULL, &n)) != CUDA_SUCCESS || n == 0)
        return;
    CUgraphNode *node = malloc(n * sizeof(*node));
    if (node && GS_CALL(cuGraphGetNodes, (g, node, &n)) != CUDA_SUCCESS)
        n = 0;
    for (size_t i = 0; node && i < n; i++) {
        CUgraphNodeType type;
        CUDA_MEM_ALLOC_NODE_PARAMS a;
        CUgraph child;
        if (GS_CALL(cuGraphNodeGetType, (node[i], &type)) != CUDA_SUCCESS)
            continue;
        if (type == CU_GRAPH_NODE_TYPE_GRAPH &&
            GS_CALL(cuGraphChildGraphNodeGetGraph, (node[i], &child)) == CUDA_SUCCESS)
            graph_bytes(child, bytes, depth + 1);
        if (type == CU_GRAPH_NODE_TYPE_MEM_ALLOC &&
            GS_CALL(cuGraphMemAllocNodeGetParams, (node[i], &a)) == CUDA_SUCCESS &&
            a.poolProps.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
            a.poolProps.location.id >= 0 && a.poolProps.location.id < GS_REGION_DEVICES) {
            uint64_t *b = &bytes[a.poolProps.location.id];
            *b = *b > UINT64_MAX - a.bytesize ? UINT64_MAX : *b + a.bytesize;
        }
    }
    free(node);
}

/* Enter executable graph @e's allocations (@bytes per device). Return: 0; -1 when the table is
 * full (nothing entered). Under cache_mu. */
static int graph_enter(uint64_t e, const uint64_t *bytes, int autofree)
{
    int want = 0, put = 0;
    for (int o = 0; o < GS_REGION_DEVICES; o++)
        want += bytes[o] != 0;
    if (atomic_load(&ngraphs) + want > GRAPHS_LIVE)
        return -1;
    for (int o = 0; o < GS_REGION_DEVICES && put < want; o++) {
        if (!bytes[o])
            continue;
        uint32_t i = slot_of(e);
        while (atomic_load(&graphs[i].key) > TOMB)
            i = (i + 1) % GRAPHS_MAX;
        graphs[i].bytes = bytes[o];
        graphs[i].ordinal = o;
        graphs[i].autofree = (uint8_t)autofree;
        atomic_store(&graphs[i].launched, 0);
        atomic_store_explicit(&graphs[i].key, e, memory_order_release);
        atomic_fetch_add(&ngraphs, 1);
        put++;
    }
    return 0;
}

static void graph_leave(uint64_t e)
{
    for (uint32_t i = slot_of(e), k = 0; k < GRAPHS_MAX && atomic_load(&graphs[i].key); k++) {
        if (atomic_load(&graphs[i].key) == e) {
            atomic_store(&graphs[i].key, TOMB);
            atomic_fetch_sub(&ngraphs, 1);
        }
        i = (i + 1) % GRAPHS_MAX;
    }
}

/*
 * Room on device @o for a launch of a graph whose allocations sum to @bytes there: the graph
 * memory the driver may have to add (what the allocations need beyond the free part of what the
 * device's graphs hold; for a graph that frees its last launch's allocations on relaunch, those
 * too) is charged in advance. Return: 0; -1 (over the limit even after trimming).
 */
static int graph_room(int o, uint64_t bytes, uint64_t own)
{
    struct gs_shim *s = &gs__shim;
    atomic_fetch_or(&s->cache_devs, 1u << o);
    for (int tries = 0; tries < 2; tries++) {
        cuuint64_t held = 0, used = 0;
        pthread_mutex_lock(&s->cache_mu);
        if (GS_CALL(cuDeviceGetGraphMemAttribute,
                    (o, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &held)) != CUDA_SUCCESS ||
            GS_CALL(cuDeviceGetGraphMemAttribute, (o, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &used)) !=
                CUDA_SUCCESS)
            held = used = 0;
        uint64_t spare = (held > used ? held - used : 0) + (own < used ? own : used);
        uint64_t want = held + (bytes > spare ? bytes - spare : 0);
        uint64_t *c = &s->graph_charged[o];
        struct gs_shim_dev *d = gs__dev(o);
        int ok = !d || d->regdev < 0 || want <= *c ||
                 gs_region_reserve(s->region, s->slot, d->regdev, want - *c, d->limit_bytes) == 0;
        if (ok && d && d->regdev >= 0 && want > *c)
            *c = want;
        pthread_mutex_unlock(&s->cache_mu);
        if (ok)
            return 0;
        if (tries == 0)
            gs__cache_trim(o);
    }
    return -1;
}

/* Whether executable graph @e may run now (its devices have room for its allocations). */
static CUresult graph_may_run(CUgraphExec e)
{
    uint64_t key = (uintptr_t)e;
    for (uint32_t i = slot_of(key), k = 0; e && k < GRAPHS_MAX; k++, i = (i + 1) % GRAPHS_MAX) {
        uint64_t got = atomic_load_explicit(&graphs[i].key, memory_order_acquire);
        if (!got)
            break;
        if (got != key)
            continue;
        uint64_t own = graphs[i].autofree && atomic_load(&graphs[i].launched) ? graphs[i].bytes : 0;
        if (gs__slot() < 0 || graph_room(graphs[i].ordinal, graphs[i].bytes, own) < 0)
            return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
}

/* @e ran: with CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH its next launch frees this one's
 * allocations first. */
static void graph_ran(CUgraphExec e)
{
    uint64_t key = (uintptr_t)e;
    for (uint32_t i = slot_of(key), k = 0; e && k < GRAPHS_MAX && atomic_load(&graphs[i].key);
         k++) {
        if (atomic_load(&graphs[i].key) == key)
            atomic_store(&graphs[i].launched, 1);
        i = (i + 1) % GRAPHS_MAX;
    }
}

/* Before an instantiation of @g with @flags: its allocations per device into @bytes; with
 * CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD the driver maps them at once, so the room is made first. */
static CUresult graph_before(CUgraph g, uint64_t flags, uint64_t *bytes)
{
    gs__init();
    memset(bytes, 0, GS_REGION_DEVICES * sizeof(*bytes));
    if (!gs__shim.counting)
        return CUDA_SUCCESS;
    graph_bytes(g, bytes, 0);
    for (int o = 0; o < GS_REGION_DEVICES && (flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD); o++)
        if (bytes[o] && (gs__slot() < 0 || graph_room(o, bytes[o], 0) < 0))
            return CUDA_ERROR_OUT_OF_MEMORY;
    return CUDA_SUCCESS;
}

/* After the driver's answer @rc: enter *@e's allocations for its launches. */
static CUresult graph_after(CUresult rc, CUgraphExec *e, const uint64_t *bytes, uint64_t flags)
{
    int any = 0;
    for (int o = 0; o < GS_REGION_DEVICES; o++)
        any |= bytes[o] != 0;
    if (rc != CUDA_SUCCESS || !any)
        return rc;
    pthread_mutex_lock(&gs__shim.cache_mu);
    int full = graph_enter((uintptr_t)*e, bytes,
                           (flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) != 0);
    pthread_mutex_unlock(&gs__shim.cache_mu);
    if (!full)
        return CUDA_SUCCESS;
    gs__say("more than %d executable graphs' allocations on a device; another such graph is "
            "refused",
            GRAPHS_LIVE);
    GS_CALL(cuGraphExecDestroy, (*e));
    return CUDA_ERROR_OUT_OF_MEMORY;
}

#define INSTANTIATE(name, params, args, flags)                                                     \
    CUresult name params                                                                           \
    {                                                                                              \
        uint64_t bytes[GS_REGION_DEVICES];                                                         \
        CUresult rc = graph_before(hGraph, flags, bytes);                                          \
        return rc != CUDA_SUCCESS ? rc                                                             \
                                  : graph_after(GS_CALL(name, args), phGraphExec, bytes, flags);   \
    }

INSTANTIATE(cuGraphInstantiate,
            (CUgraphExec * phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer,
             size_t bufferSize),
            (phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize), 0)
INSTANTIATE(cuGraphInstantiate_v2,
            (CUgraphExec * phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer,
             size_t bufferSize),
            (phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize), 0)
INSTANTIATE(cuGraphInstantiateWithFlags,
            (CUgraphExec * phGraphExec, CUgraph hGraph, unsigned long long flags),
            (phGraphExec, hGraph, flags), flags)
INSTANTIATE(cuGraphInstantiateWithParams,
            (CUgraphExec * phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *p),
            (phGraphExec, hGraph, p), p ? p->flags : 0)
INSTANTIATE(cuGraphInstantiateWithParams_ptsz,
            (CUgraphExec * phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *p),
            (phGraphExec, hGraph, p), p ? p->flags : 0)

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    gs__init();
    CUresult rc = GS_CALL(cuGraphExecDestroy, (hGraphExec));
    if (rc == CUDA_SUCCESS && atomic_load(&ngraphs)) {
        pthread_mutex_lock(&gs__shim.cache_mu);
        graph_leave((uintptr_t)hGraphExec);
        pthread_mutex_unlock(&gs__shim.cache_mu);
    }
    return rc;
}

/* A launch (which also takes a compute token) or an upload of an executable graph: refused with
 * CUDA_ERROR_OUT_OF_MEMORY when its allocations have no room. */
#define GRAPH_RUN(name, launch)                                                                    \
    CUresult name(CUgraphExec hGraphExec, CUstream hStream)                                        \
    {                                                                                              \
        gs__init();                                                                                \
        int mem = atomic_load_explicit(&ngraphs, memory_order_relaxed) != 0;                       \
        if (mem && graph_may_run(hGraphExec) != CUDA_SUCCESS)                                      \
            return CUDA_ERROR_OUT_OF_MEMORY;                                                       \
        if (launch && gs__shim.limiting)                                                           \
            gs__throttle();                                                                        \
        CUresult rc = GS_CALL(name, (hGraphExec, hStream));                                        \
        if (mem && rc == CUDA_SUCCESS)                                                             \
            graph_ran(hGraphExec);                                                                 \
        return rc;                                                                                 \
    }

GRAPH_RUN(cuGraphLaunch, 1)
GRAPH_RUN(cuGraphLaunch_ptsz, 1)
GRAPH_RUN(cuGraphUpload, 0)
GRAPH_RUN(cuGraphUpload_ptsz, 0)

void gs__fork_child_graph(void)
{
    memset(graphs, 0, sizeof(graphs));
    atomic_store(&ngraphs, 0);
}
