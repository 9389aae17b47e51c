/*
 * gpuschedd's durable store: one SQLite file, pods, their cards, the ledger, PodGroups and
 * node health.
 */
#ifndef GSD_STORE_H
#define GSD_STORE_H

#include "gang.h"
#include "state.h"

#include "gpusched/cluster.h"

struct gs_diag;

struct gsd_store;
struct gsd_ext_names;
struct gsd_bind;

/*
 * gsd_store_open() - open or create DIR/gpusched.db (WAL, foreign keys; synchronous=FULL when
 * @sync_full, else NORMAL: store.c says what each guarantees). A store of an older schema is
 * brought forward first (store.c says what each step adds).
 * Return: 0 and *@out; -EIO with @d (cannot open, not a gpusched store, newer schema, a step
 * failed).
 */
int gsd_store_open(const char *dir, int sync_full, struct gsd_store **out, struct gs_diag *d);
void gsd_store_close(struct gsd_store *s);
int gsd_store_begin(struct gsd_store *s);
/* gsd_store_commit() - commit the open transaction. Return: 0; -EIO (then it was rolled back). */
int gsd_store_commit(struct gsd_store *s);
void gsd_store_rollback(struct gsd_store *s);
/*
 * gsd_store_probe() - commit a transaction of its own that writes one row (meta 'probe' = @now_us,
 * the scheduler's clock, the ledger's: readers such as `gpusched forecast --store` take it as the
 * time runs still open have reached), to learn whether the store can commit now (a full disk, a
 * file size limit, an I/O error say it cannot). Call outside a transaction. Return: 0; -EIO
 * (rolled back; logged).
 */
int gsd_store_probe(struct gsd_store *s, int64_t now_us);
/* gsd_store_pod_insert() - insert @p (sets p->id), its cards and, when running, its ledger row.
 * @node, @model: the node's name and GPU model (catalog name, "" none) when running; the ledger
 * keeps the model (and the MIG profile) so bills price a run as it was. Return: 0; -EIO. */
int gsd_store_pod_insert(struct gsd_store *s, struct gsd_pod *p, const char *node,
                         const char *model);
/* gsd_store_pod_start() - a pending pod got @p->pl on @node (GPU @model): state, cards, ledger. */
int gsd_store_pod_start(struct gsd_store *s, const struct gsd_pod *p, const char *node,
                        const char *model);
/* gsd_store_pod_unstart() - a running pod goes back to pending (its node vanished). */
int gsd_store_pod_unstart(struct gsd_store *s, const struct gsd_pod *p, int64_t end_us);
/* gsd_store_pod_nominated() - @p's nominated flag (state.h), as it is now, and @nodes, the names
 * of the nodes it may use (comma-separated; NULL any: not nominated, or no set). Return: 0;
 * -EIO. */
int gsd_store_pod_nominated(struct gsd_store *s, const struct gsd_pod *p, const char *nodes);
/* gsd_store_pod_evicting() - a running pod bound through Kubernetes is evicted at @end_us: its
 * ledger row closes and its cards go, the row stays in state GSD_EVICTING on its node @node
 * (with p->reason) until the API server says it is gone. Return: 0; -EIO. */
int gsd_store_pod_evicting(struct gsd_store *s, const struct gsd_pod *p, const char *node,
                           int64_t end_us);
/* gsd_store_pod_delete() - remove @p and its cards; close its ledger row at @end_us. */
int gsd_store_pod_delete(struct gsd_store *s, const struct gsd_pod *p, int64_t end_us);
/* gsd_store_next_seq() - one past the largest seq ever stored (pods and ledger). */
int64_t gsd_store_next_seq(struct gsd_store *s);

/* gsd_store_clock() - within the open transaction, the manual clock moved to @now_us (meta
 * 'clock'). Return: 0; -EIO. */
int gsd_store_clock(struct gsd_store *s, int64_t now_us);

/* gsd_store_last_us() - the latest scheduler time the store holds (the manual clock, its last
 * probe, a pod's submission, start or eviction, a run's start or end): where a manual clock
 * resumes after a restart, so that it never goes back and no stored time lies in its future.
 * 0 for a new store. */
int64_t gsd_store_last_us(struct gsd_store *s);

/*
 * Node and card health, stored only when it changes (not every heartbeat): a node row says the
 * node is watched by heartbeats and whether it is Ready; a card row exists while it is unhealthy.
 * gsd_store_node_put() / gsd_store_gpu_put() replace the row (@healthy 1 deletes the card's).
 * Return: 0; -EIO.
 */
int gsd_store_node_put(struct gsd_store *s, const char *node, int ready, int64_t since_us);
int gsd_store_gpu_put(struct gsd_store *s, const char *node, int gpu, int healthy, int xid,
                      int64_t since_us);
/*
 * gsd_store_health_load() - call @node_fn for every stored node row and @gpu_fn for every
 * unhealthy card, in name order. Return: 0; a callback's negative return; -EIO.
 */
/*
 * Node agents' own tokens (agents.c): the SHA-256 of the token issued to @node when its agent
 * registered, replaced when it registers anew with the admin token. Return: 0; -EIO.
 * gsd_store_cred_load() calls @fn for each row, in node order: 0; @fn's negative return; -EIO.
 */
int gsd_store_cred_put(struct gsd_store *s, const char *node, const uint8_t *sha, int64_t since_us);
int gsd_store_cred_load(struct gsd_store *s,
                        int (*fn)(void *ud, const char *node, const uint8_t *sha), void *ud);
/*
 * What each node agent registered last (agents.c): @body, the registration as JSON text, kept
 * so that a restart places on the topology the node reported. Return: 0; -EIO.
 * gsd_store_reg_load() calls @fn for each row, in node order: 0; @fn's negative return; -EIO.
 */
int gsd_store_reg_put(struct gsd_store *s, const char *node, const char *body, int64_t since_us);
int gsd_store_reg_load(struct gsd_store *s, int (*fn)(void *ud, const char *node, const char *body),
                       void *ud);
int gsd_store_health_load(
    struct gsd_store *s, int (*node_fn)(void *ud, const char *node, int ready, int64_t since_us),
    int (*gpu_fn)(void *ud, const char *node, int gpu, int xid, int64_t since_us), void *ud);

/* One run of a pod on its cards, as the ledger records it. */
struct gsd_run {
    char tenant[GSD_NAME_MAX], ns[GSD_NAME_MAX], name[GSD_OBJ_MAX];
    char node[GS_NAME_MAX];
    char model[GS_NAME_MAX]; /* the node's GPU model when it ran, "" when not recorded */
    char mig[GSD_MIG_MAX];   /* its MIG profile, "" none */
    int cards;               /* cards held */
    int gpu_milli; /* per card: 1000 whole, 1..999 a share or a MIG instance's part, 0 no GPU */
    int64_t start_us, end_us; /* the scheduler's clock; end -1 while it runs (a manual clock
                                 starts at 0, where a run may end) */
};
/*
 * gsd_store_ledger() - call @fn for every ledger row of @tenant (NULL: every tenant), oldest
 * first. Return: 0; the callback's negative return; -EIO.
 */
int gsd_store_ledger(struct gsd_store *s, const char *tenant,
                     int (*fn)(void *ud, const struct gsd_run *run), void *ud);

/* One stored pod handed to gsd_store_load()'s callback; node is "" when pending. */
struct gsd_stored {
    struct gsd_pod pod; /* meta and body are owned by the callback once called */
    char node[GS_NAME_MAX];
    char *nodes_ok; /* a nominated pod's gsd_store_pod_nominated() @nodes, or NULL: freed by
                     * gsd_store_load() after the callback */
};
/*
 * gsd_store_load() - call @fn for every stored pod in seq order, with its cards in pod.pl
 * (gpu_mask, gpu_milli; node left -1 for the caller to resolve), a MIG pod's instance start in
 * pod.mig_start (-1 when it has none stored), and its body (NULL from a store of schema < 4).
 * Return: 0; the callback's negative return; -EIO; -ENOMEM.
 */
int gsd_store_load(struct gsd_store *s, int (*fn)(void *ud, struct gsd_stored *sp), void *ud);

/*
 * PodGroups: gsd_store_group_put() writes @g's row (in place of one of its name), with whether
 * the API server holds it (gsd_group.kube), gsd_store_group_succeeded() writes its
 * count of members completed, gsd_store_group_delete() removes it; gsd_store_group_load() calls
 * @fn for every stored one, oldest first. Return: 0; the callback's negative return; -EIO.
 */
int gsd_store_group_put(struct gsd_store *s, const struct gsd_group *g);
int gsd_store_group_succeeded(struct gsd_store *s, const struct gsd_group *g);
int gsd_store_group_delete(struct gsd_store *s, const struct gsd_group *g);
int gsd_store_group_load(struct gsd_store *s, int (*fn)(void *ud, const struct gsd_group *g),
                         void *ud);

#endif
