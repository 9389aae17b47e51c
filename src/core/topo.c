/* The topology tree of one machine: links to domains and groups. Invariants: gpusched/topo.h. */
#include "gpusched/topo.h"

#include <string.h>

const char *gs_link_name(enum gs_link l)
{
    static const char *const names[] = {"?", "SYS", "NODE", "PHB", "PXB", "PIX", "NV", "X"};
    return (unsigned)l < sizeof(names) / sizeof(names[0]) ? names[l] : "?";
}

void gs_topo_init(struct gs_topo *t)
{
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < GS_GPUS_MAX; i++) {
        t->gpu[i].numa = t->gpu[i].gpu_numa = t->gpu[i].mig_mode = t->gpu[i].minor = -1;
        t->nvlink_group[i] = GS_NO_GROUP;
    }
}

static int switched(uint8_t l)
{
    return l == GS_LINK_PIX || l == GS_LINK_PXB;
}

/* Whether GPUs @a and @b share a PCIe switch tree: PIX/PXB to each other or to one NIC. */
static int same_switch(const struct gs_topo *t, int a, int b)
{
    if (switched(t->link[a][b]))
        return 1;
    for (int n = 0; n < t->nnics; n++)
        if (switched(t->nic_link[n][a]) && switched(t->nic_link[n][b]))
            return 1;
    return 0;
}

/* PCIe domains: components of the same_switch() graph, numbered by their lowest GPU. */
static void pcie_domains(struct gs_topo *t)
{
    uint8_t done[GS_GPUS_MAX] = {0};
    t->npcie = 0;
    for (int i = 0; i < t->ngpus; i++) {
        if (done[i])
            continue;
        int stack[GS_GPUS_MAX], n = 0;
        stack[n++] = i;
        done[i] = 1;
        while (n > 0) {
            int g = stack[--n];
            t->pcie_domain[g] = (uint8_t)t->npcie;
            for (int k = 0; k < t->ngpus; k++)
                if (!done[k] && same_switch(t, g, k)) {
                    done[k] = 1;
                    stack[n++] = k;
                }
        }
        t->npcie++;
    }
}

/* Whether every pair of GPUs in @mask is NVLink-linked. */
static int clique(const uint32_t *adj, uint32_t mask)
{
    for (uint32_t m = mask; m; m &= m - 1) {
        int g = __builtin_ctz(m);
        if ((mask & ~(1u << g)) & ~adj[g])
            return 0;
    }
    return 1;
}

/*
 * The largest clique holding GPU @g among @cand (its NVLink peers not yet placed); of equal size,
 * the one with the lowest GPUs (the smallest mask after reversing bit order: compared GPU by GPU).
 */
static uint32_t largest_clique(const uint32_t *adj, int g, uint32_t cand)
{
    uint32_t best = 1u << g;
    int best_n = 1;
    /* every subset of the candidates, walked as submasks of @cand */
    for (uint32_t s = cand;; s = (s - 1) & cand) {
        int n = __builtin_popcount(s) + 1;
        uint32_t m = s | (1u << g);
        if (n >= best_n && clique(adj, m)) {
            uint32_t diff = m ^ best;
            /* of equal size, prefer the set holding the lowest GPU where they differ */
            if (n > best_n || (diff && (m & (diff & -diff)))) {
                best = m;
                best_n = n;
            }
        }
        if (!s)
            break;
    }
    return best;
}

static void nvlink_groups(struct gs_topo *t)
{
    uint32_t adj[GS_GPUS_MAX] = {0}, placed = 0;
    t->nedges = 0;
    for (int a = 0; a < t->ngpus; a++)
        for (int b = a + 1; b < t->ngpus; b++)
            if (t->nvlinks[a][b]) {
                adj[a] |= 1u << b;
                adj[b] |= 1u << a;
                t->edges[t->nedges++] =
                    (struct gs_topo_edge){(uint8_t)a, (uint8_t)b, t->nvlinks[a][b]};
            }
    t->nnvlink = 0;
    memset(t->nvlink_group, GS_NO_GROUP, sizeof(t->nvlink_group));
    for (int g = 0; g < t->ngpus; g++) {
        if (placed & (1u << g))
            continue;
        uint32_t m = largest_clique(adj, g, adj[g] & ~placed);
        placed |= m;
        if (__builtin_popcount(m) < 2)
            continue;
        for (uint32_t k = m; k; k &= k - 1)
            t->nvlink_group[__builtin_ctz(k)] = (uint8_t)t->nnvlink;
        t->nnvlink++;
    }
}

void gs_topo_derive(struct gs_topo *t)
{
    pcie_domains(t);
    nvlink_groups(t);
}

int gs_topo_nvlinks_of(const struct gs_topo *t, uint32_t mask)
{
    int sum = 0;
    for (int e = 0; e < t->nedges; e++)
        if ((mask >> t->edges[e].a & 1u) && (mask >> t->edges[e].b & 1u))
            sum += t->edges[e].links;
    return sum;
}
