/*
 * Node agents (gpusched-agent): registration, each node's own token, and the pods bound to a node.
 *
 * Credentials, as kubelet's TLS bootstrap does it: the DaemonConfig's nodeToken is a bootstrap
 * token every agent is given. An agent registers its node with it once (POST
 * /v1/nodes/NAME/register) and gets a token of its own, 32 random bytes shown once and stored only
 * as a SHA-256; from then on that node's requests need that token, which reaches nothing but
 * /v1/nodes/NAME/... of its own node, and the bootstrap token no longer changes that node. The
 * admin token may register a node again (a new token; the old one stops working). A node whose
 * agent never registered still takes heartbeats and card health with the bootstrap token, as
 * before.
 *
 * The topology a registration reports (gpus[].pcieDomain, gpus[].nvlinkGroup and nvlinks, the
 * JSON form of `gpusched topo --json`, as the agent discovers it) replaces the inventory's
 * template for that node's placement at once and across restarts (it is stored); NUMA affinity
 * and NICs are kept and shown, not placed on (the scheduler has no NUMA level). A registration
 * without a topology puts the template's back.
 *
 * GET /v1/nodes/NAME/pods lists the pods running on the node, in bind order, as GET /v1/pods shows
 * them, each with tenant_weight (its tenant's DaemonConfig weight) and tenant_weight_min (the
 * smallest of the DaemonConfig's tenants), which the agent scales the pod's cgroup cpu.weight by.
 * GET /v1/nodes/NAME with the node's own token is the node as the admin sees it without its cards
 * and agent (its unhealthy_gpus, which the agent clears at start where it sees a card healthy).
 */
#ifndef GSD_AGENTS_H
#define GSD_AGENTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct gs_node_template;
struct gsd_podspec;
struct gs_node_info;
struct gsd_req;
struct gsd_state;

/* gsd_agents_init() - load the stored node tokens. Return: 0; -EIO; -ENOMEM. */
int gsd_agents_init(struct gsd_state *st);
/* gsd_agents_apply() - tell a new scheduler (a reload) the topology each registered node
 * reported. Return: 0; -ENOMEM. */
int gsd_agents_apply(struct gsd_state *st);
/* gsd_agent_cards_agree() - whether node @i's agent registered the cards @ni gives (as many, of
 * its model), or registered none: 1; else 0. */
int gsd_agent_cards_agree(const struct gsd_state *st, size_t i, const struct gs_node_info *ni);
/* gsd_agent_topology() - the topology node @i's agent registered, in place of template @tp's
 * (its pcieDomains, nvlinkGroups and nvlinks overwritten): 1; 0 when it registered none (@tp
 * unchanged). */
int gsd_agent_topology(const struct gsd_state *st, size_t i, struct gs_node_template *tp);
/* gsd_agents_grow() - room for the nodes added to the inventory since, none registered.
 * Return: 0; -ENOMEM. */
int gsd_agents_grow(struct gsd_state *st);
/* gsd_agents_free() - what gsd_agents_init() and registrations kept. */
void gsd_agents_free(struct gsd_state *st);

/* gsd_agent_auth() - the node whose own token hashes to @sha, or -1. Constant time in the hash. */
int gsd_agent_auth(const struct gsd_state *st, const uint8_t *sha);

/*
 * gsd_agent_handle() - a request under /v1/nodes/ (@rest follows "nodes/") from node @self's own
 * token (>= 0), the bootstrap token (-1) or the admin (-2): POST NAME/register, GET NAME/pods,
 * GET NAME (the node's own token only) and the heartbeat and card health endpoints
 * (gsd_node_post()), each checked against who asks.
 */
void gsd_agent_handle(struct gsd_state *st, struct gsd_req *r, const char *rest, int self);

/* gsd_agents_version() - changes whenever a node's own token does (0 before any). */
uint64_t gsd_agents_version(const struct gsd_state *st);
/* gsd_agent_tokens() - every node's own token hash into @sha[i], @has[i] 1 when it has one (the
 * arrays: a node each): what authenticates agents before their bodies are read (access.c). */
void gsd_agent_tokens(const struct gsd_state *st, uint8_t (*sha)[32], uint8_t *has);
/* gsd_agent_json() - node @i's registration for GET /v1/nodes/NAME (new reference), or NULL. */
json_t *gsd_agent_json(const struct gsd_state *st, int i);
/* gsd_agent_warnings() - what node @i's registration reports that gpuschedd's plan lacks, for
 * GET /v1/nodes/NAME (new reference: an array of texts), or NULL for nothing: MIG instances on a
 * card that the scheduler holds no such instance on (it places pods there as if they were not). */
json_t *gsd_agent_warnings(const struct gsd_state *st, size_t i);

#endif
