/*
 * kube-scheduler's extender verbs: filter, prioritize, preempt and bind.
 */
#ifndef GSD_EXTENDER_H
#define GSD_EXTENDER_H

#include "podspec.h"

#include <jansson.h>
#include <stdint.h>

struct gsd_bind;
struct gsd_req;
struct gsd_state;

#define GSD_EXT_CACHE                                                                              \
    4096 /* pods remembered from filter calls for bind (and, in bytes, at                          \
          * most extender.maxRememberedBytes of the DaemonConfig) */

struct gsd_extpod {
    char key[GSD_KEY_MAX];
    struct gsd_podspec spec;
    size_t bytes; /* counted against extender.maxRememberedBytes: its Pod's JSON text */
    int used;
};

/* Extender verbs (extender.c): @verb is "filter", "prioritize", "preempt" or "bind". A bind
 * that took cards with `kubernetes:` configured leaves r->bind for the HTTP thread (server.c). */
void gsd_extender_handle(struct gsd_state *st, struct gsd_req *r, const char *verb);
/*
 * gsd_extender_unbind() - the API calls of bind @b are over, with b->outcome; or @b is a nudge
 * (b->evict 2) that found the pod gone, whose pod is released. A refused bind releases the pod
 * it took the cards for (same seq) only when no other bind of that pod is still being made and
 * none was confirmed (extender.c says why). Run on the scheduler thread, inside a batch.
 */
void gsd_extender_unbind(struct gsd_state *st, const struct gsd_bind *b);
/*
 * gsd_extender_sync() - release every pod bind took cards for that Kubernetes no longer runs:
 * absent from @live (gsd_kube_live()), or there under another UID (deleted and made again), as
 * long as it was bound timeoutSeconds and a second before @listed_us (wall clock: when the list
 * was asked for): a bind's API calls, which label the pod, end within timeoutSeconds of its
 * commit, so a pod still being bound is never taken for gone. Then every pod of @live bound by
 * gpuschedd's annotations (an entry with "pod") that it holds under no name is adopted
 * (gsd_pod_adopt()) on the cards they name, or, where they are malformed or not free for it,
 * left out with a warning in the log naming the pod, the annotation and why (counted in
 * st->adopt_refused_total, each list anew). Run on the scheduler thread, inside a batch.
 * Return: pods released; -EIO (the store failed).
 */
int gsd_extender_sync(struct gsd_state *st, const json_t *live, int64_t listed_us);
/*
 * gsd_extender_holds() - whether bind took cards for pod @key ("NS/NAME") of UID @uid (a pod
 * bound without a UID matches any). Read-only: call it with the state lock held. O(1).
 */
int gsd_extender_holds(struct gsd_state *st, const char *key, const char *uid);
/*
 * gsd_extender_gone() - release every pod of @gone (an object of "NS/NAME" to UID: pods deleted
 * or finished in Kubernetes) that bind took cards for under that UID; others are left alone.
 * Run on the scheduler thread, inside a batch. Return: pods released; -EIO (the store failed).
 */
int gsd_extender_gone(struct gsd_state *st, const json_t *gone);
/*
 * gsd_extender_nominate() - pod @key ("NS/NAME"), which filter found no node for, goes to the
 * scheduler as a pending pod of the extender (nominated), from what filter remembered of it: a
 * pass then places it, evicting what the scheduler's policy evicts for it (priority preemption,
 * reclaim), or it waits there with the other pending pods. Filter then offers it only the node
 * its cards are on, once no pod evicted from there still runs, and kube-scheduler binds it there.
 * A nominated pod kube-scheduler stops asking for (GSD_NOMINATED_KEEP_US without a filter: it
 * was deleted, or bound elsewhere) is released by the next list (gsd_extender_sync()). Run on
 * the scheduler thread, inside a batch. Return: 0; -EIO (the store failed).
 */
int gsd_extender_nominate(struct gsd_state *st, const char *key);
/*
 * gsd_extender_nudge() - each nominated pod the scheduler placed, on a node no evicted pod still
 * runs on, is nudged once (gsd_nudge_new(), sent after the batch commits), so kube-scheduler
 * tries it again now and binds it there. Run on the scheduler thread after each batch's pass.
 * O(pods) after a batch that placed a nominated pod or saw an evicted one go, else O(1).
 */
void gsd_extender_nudge(struct gsd_state *st);
/*
 * gsd_extender_short_gangs() - held members (nominated, placed, not bound) of gangs that lost a
 * member before it bound give their cards back once their gang has lacked members for
 * extender.shortGangHoldSeconds, and wait with it again as pending nominated pods, to be placed
 * with the member that completes it; the reason says so. As the coscheduling plugin of
 * kubernetes-sigs/scheduler-plugins lets a gang's waiting members go when its Permit wait ends:
 * a Job whose controller makes no new member would otherwise hold its cards for ever. Each gang's
 * clock starts when it is first seen short (at a restart: from then). On the scheduler thread,
 * after a batch, inside its transaction: O(pods) when a gang member left or a held one was
 * placed, or the earliest hold ended (st->short_due), else O(1). Return: 0; -EIO (the store);
 * -ENOMEM.
 */
int gsd_extender_short_gangs(struct gsd_state *st);
/* kube-scheduler 1.20 tries an unschedulable pod again at least every 60 s
 * (podMaxUnschedulableQDuration, checked every 30 s): five minutes without a filter is gone. */
#define GSD_NOMINATED_KEEP_US (300 * 1000000LL)
/* gsd_extender_free() - free what the extender keeps in @st between calls. */
void gsd_extender_free(struct gsd_state *st);
/* gsd_jget() - member @key of object @obj: exact first, then any case, as Go's encoding/json
 * decodes; NULL when absent or @obj is not an object. Borrowed. */
json_t *gsd_jget(const json_t *obj, const char *key);

#endif
