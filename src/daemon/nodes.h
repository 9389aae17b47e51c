/*
 * Node and card health as the node agents report it, and the node-monitor clock.
 */
#ifndef GSD_NODES_H
#define GSD_NODES_H

#include "gpusched/cluster.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct gsd_req;
struct gsd_state;

/*
 * One node's health as its agent reports it (nodes.c); the scheduler keeps a NotReady node's
 * cards, and unhealthy cards, from placement (gs_tenancy_node_ready(), gs_tenancy_card_health()).
 */
struct gsd_node_health {
    uint8_t watched;   /* a heartbeat came once: the grace period applies from then on */
    uint8_t ready;     /* as its agent's heartbeats say (stored) */
    uint8_t api_down;  /* its Node object is NotReady or deleted (--nodes kubernetes) */
    uint8_t reshaped;  /* its Node object's shape is no longer the inventory's (logged once) */
    uint32_t bad_mask; /* unhealthy cards */
    int32_t xid[GS_GPUS_MAX]; /* per unhealthy card: the Xid reported, 0 = none given */
    int64_t last_beat_us;     /* node-monitor clock (gsd_clock_us()) of the last heartbeat */
    int64_t since_us;         /* wall clock of the last Ready change (agent or Node object); 0
                               * none since the start for a node no agent watches */
};

/* gsd_node_ready() - whether the node is Ready: its agent and its Node object both say so. */
static inline int gsd_node_ready(const struct gsd_node_health *h)
{
    return h->ready && !h->api_down;
}

/* gsd_clock_us() - the node-monitor clock: monotonic, or the manual one with --manual-clock. */
int64_t gsd_clock_us(const struct gsd_state *st);
/*
 * gsd_health_init() - read the stored node and card health, take @api_down (per node, 1: its
 * Node object is not Ready; NULL: none known) and tell the scheduler; watched Ready nodes count
 * their grace period from now. Call after the pods are restored. Return: 0; -ENOMEM; -EIO.
 */
int gsd_health_init(struct gsd_state *st, const uint8_t *api_down);
/* gsd_health_api() - node @node's Node object in the API server says it is Ready (@ready 1) or
 * not, or it was deleted (0): NotReady, its pods requeued, until both say Ready. Return: 0;
 * -ENOMEM. */
int gsd_health_api(struct gsd_state *st, size_t node, int ready);
/* gsd_health_apply() - tell a new scheduler (a reload, a node added) which nodes are not ready
 * and which cards unhealthy, and the registered topologies. Return: 0; -ENOMEM. */
int gsd_health_apply(struct gsd_state *st);
/* gsd_health_grow() - room for the nodes added to the inventory since, each Ready and unwatched.
 * Return: 0; -ENOMEM. */
int gsd_health_grow(struct gsd_state *st);
/* gsd_health_beat() - a heartbeat from node @node: watched from now on, Ready again when it was
 * not (its cards come back). Return: 0; -EIO. */
int gsd_health_beat(struct gsd_state *st, size_t node);
/*
 * gsd_health_gpu() - node @node's agent reports card @gpu healthy or not, with the Xid it saw
 * (0 = none given). An unhealthy card takes no new pods; gs_xid_loses_work() says whether the
 * pods on it are requeued too. Return: 0; -EIO.
 */
int gsd_health_gpu(struct gsd_state *st, size_t node, int gpu, int healthy, int xid);
/* gsd_health_expire() - mark NotReady every watched node silent for the grace period and
 * requeue its pods. Return: 0; -EIO. */
int gsd_health_expire(struct gsd_state *st);
/* gsd_health_deadline() - monotonic time of the next possible expiry; INT64_MAX for none. */
int64_t gsd_health_deadline(const struct gsd_state *st);

/* gsd_card_use() - card @g of node @i: *@alloc what pods hold (at most the card), *@down the
 * rest while the card or its node is down (else 0), milli-GPU. */
void gsd_card_use(const struct gsd_state *st, size_t i, int g, int32_t *alloc, int32_t *down);

/* Node endpoints (nodes.c): POST /v1/nodes/NAME/heartbeat, POST .../gpus/INDEX/health and
 * POST /v1/clock; @rest is what follows "/v1/nodes/" (or NULL for /v1/clock). */
void gsd_node_post(struct gsd_state *st, struct gsd_req *r, const char *rest);
/* gsd_node_json() - node @i as GET /v1/nodes shows it (new reference); @cards adds its cards
 * and the pods on each, only @tenant's when not NULL (others count as allocated, unnamed). */
json_t *gsd_node_json(const struct gsd_state *st, size_t i, int cards, const char *tenant);

#endif
