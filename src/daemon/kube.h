/*
 * The Kubernetes API server: what an extender bind writes, and the pods it still runs.
 */
#ifndef GSD_KUBE_H
#define GSD_KUBE_H

#include "config.h"
#include "podspec.h"

#include "gpusched/cluster.h"
#include "gpusched/diag.h"

#include <jansson.h>
#include <stdatomic.h>

struct gsd_pod;

/*
 * What an extender bind leaves to the API server once its cards are committed. It is done on the
 * HTTP connection's thread, never on the scheduler thread, where a slow API server would stall
 * every request; a refusal is handed back to the scheduler thread (GSD_REQ_UNBIND).
 */
struct gsd_bind {
    char ns[GSD_NAME_MAX], name[GSD_OBJ_MAX], uid[GSD_UID_MAX], node[GS_NAME_MAX];
    int64_t seq;           /* the pod held: a release touches no later pod of that name */
    char *patch, *binding; /* the request bodies, JSON text: the label, the Binding */
    char *event;           /* an eviction's: the pod's Event saying why (JSON text), or NULL */
    int evict;   /* not a bind: 1 an eviction (gsd_evict_new()), 2 a nudge (gsd_nudge_new()) */
    int again;   /* an eviction decided before a restart: sent unless the pod is being deleted */
    int outcome; /* a bind's, once its API calls are over: GSD_KUBE_BOUND, _REFUSED, _UNKNOWN */
    struct gsd_kube kube;          /* a copy: a reload meanwhile changes nothing */
    char err[2 * GS_DIAG_MSG_MAX]; /* why it failed: our words, then the API server's */
};

/*
 * gsd_bind_new() - the API calls that bind running pod @p to node @node in the API server @k: a
 * v1 Binding (metadata name, namespace, annotations @assignment (gsd_pod_assignment()) and,
 * when known, uid; target the Node), as kube-scheduler's DefaultBinder sends it plus the
 * annotations, and the merge patch of the label GSD_MANAGED_LABEL (with the uid) that follows it.
 * Return: the job (free with gsd_bind_free()); NULL out of memory.
 */
struct gsd_bind *gsd_bind_new(const struct gsd_kube *k, const struct gsd_pod *p, const char *node,
                              const json_t *assignment);
void gsd_bind_free(struct gsd_bind *b);

/*
 * gsd_evict_new() - the API call that evicts pod @p (its namespace, name and UID) from the API
 * server @k, as a job of the same shape as a bind's (b->evict set), and the v1 Event that tells
 * the pod's owners why (`kubectl describe pod`, `kubectl get events`): reason Preempted (as
 * kube-scheduler's preemption records it) when p->last_eviction says preempted or reclaimed,
 * else Evicted, its message that reason in the words its own tenant may read, from component
 * gpuschedd. Return: the job (free with gsd_bind_free()); NULL out of memory.
 */
struct gsd_bind *gsd_evict_new(const struct gsd_kube *k, const struct gsd_pod *p);

/*
 * gsd_kube_evict() - POST /api/v1/namespaces/NS/pods/NAME/eviction: an Eviction (policy/v1, or
 * policy/v1beta1 where the API server serves no policy/v1 Eviction: Kubernetes before 1.22, as
 * GET /apis/policy/v1 and a 400 naming the version tell) with the pod's UID as a precondition,
 * as kube-scheduler's preemption and `kubectl drain` evict. Sent again only when no answer came,
 * or the answer was 429 (a PodDisruptionBudget allows no disruption now) or 5xx: after 0.5 s,
 * doubling, GSD_EVICT_TRIES times in all, each within b->kube.timeout_ms. Blocks; call it on no
 * thread that holds the state. With b->again the pod is read first, and nothing is sent when it
 * is gone, made again under its name or already being deleted: the Eviction sent before a crash
 * is not sent twice. Once evicted, b->event is posted (POST /api/v1/namespaces/NS/events, one
 * try within b->kube.timeout_ms; a refusal is logged, the eviction stands). Return: 0 evicted,
 * or gone already (404, or 409: another pod of that name now); 1 (b->again) not sent: evicted
 * before; -EIO with b->err (refused, or no answer after every try).
 */
int gsd_kube_evict(struct gsd_bind *b);

/*
 * gsd_nudge_new() - the API call that tells kube-scheduler to try pod @p again now that gpusched
 * holds its cards on node @node: a merge patch of the annotations GSD_NOMINATED_ANNOTATION and
 * GSD_NUDGED_ANNOTATION, the wall clock at @now_us in RFC 3339 to the microsecond (with the pod's
 * UID, so a pod made again under the name is not touched). kube-scheduler moves an unschedulable
 * pod whose metadata changed back to its active queue (an event it would otherwise wait up to a
 * minute for); the time makes each nudge a change, the same node named again too (a patch that
 * changes nothing writes nothing and tells nobody). gsd_kube_nudge() sends it, within
 * b->kube.timeout_ms. Blocks. Return: the job (NULL out of memory); gsd_kube_nudge(): 0; -ENOENT
 * the pod is gone (404) or another under its name (409: the UID precondition failed); -EIO with
 * b->err.
 */
struct gsd_bind *gsd_nudge_new(const struct gsd_kube *k, const struct gsd_pod *p, const char *node,
                               int64_t now_us);
int gsd_kube_nudge(struct gsd_bind *b);

/* The most pods gsd_kube_nudge_waiting() nudges: past them, kube-scheduler's own retry. */
#define GSD_NUDGE_WAITING_MAX 2000

/*
 * gsd_kube_nudge_waiting() - the pods kube-scheduler found no node for while gpuschedd was away
 * (unbound, Pending, PodScheduled False with reason Unschedulable, not being deleted, asking a
 * resource nvidia.com/...: those its filter could not answer) tried again now: each gets
 * GSD_NUDGED_ANNOTATION at @now_us (wall clock), as gsd_nudge_new() writes it, with its UID as
 * a precondition, so kube-scheduler moves it back to its active queue rather than wait up to a
 * minute. GET /api/v1/pods?fieldSelector=spec.nodeName=,status.phase=Pending in pages, then one
 * PATCH per pod (GSD_NUDGE_WAITING_MAX at most), each within k->timeout_ms; a refusal other than
 * 404 or 409 (gone, or made again) is logged. Blocks; stops between pods once *@stop is set.
 * Return: the pods nudged (>= 0); -EIO with @why (the list failed, or the token); -ENOMEM.
 */
int gsd_kube_nudge_waiting(const struct gsd_kube *k, const atomic_int *stop, int64_t now_us,
                           char *why, size_t cap);
#define GSD_NOMINATED_ANNOTATION "gpusched.io/nominated-node"
#define GSD_NUDGED_ANNOTATION    "gpusched.io/nudged-at"
#define GSD_EVICT_TRIES          7

enum { GSD_KUBE_BOUND = 0, GSD_KUBE_REFUSED = 1, GSD_KUBE_UNKNOWN = 2 };
/*
 * gsd_kube_bind() - GET /api/v1/namespaces/NS/pods/NAME (the pod must have b->uid, when known,
 * not be being deleted, and have no node or b->node), then POST .../binding (and GET the pod
 * after a 409 whose message does not settle it), then PATCH the label, within b->kube.timeout_ms
 * in all, with the bearer token read from b->kube.token_file now. Blocks; call it on no thread
 * that holds the state. Return: GSD_KUBE_BOUND, also when the pod is already on that very node
 * (a retry: no Binding is sent) or a 409 says so (a Binding sent again; its message, or a GET,
 * shows it), whether or not the label was accepted (a refusal is logged); GSD_KUBE_REFUSED: the
 * pod is not bound and nothing was written when the GET refused it (another UID, being deleted,
 * on another node, not found), or the Binding was refused (an answer other than 2xx, no
 * connection, an unreadable token), b->err names why (the API server's Status message and
 * code); GSD_KUBE_UNKNOWN: the Binding went unanswered (the connection broke after it was sent,
 * or a 504) and so did its second send, so it may have been applied (b->err says so).
 */
int gsd_kube_bind(struct gsd_bind *b);

/* The label bind puts on every pod it binds (after the Binding), for people to select them. */
#define GSD_MANAGED_LABEL "gpusched.io/managed"
/* The pods followed: every pod that has a node (fieldSelector spec.nodeName!=, escaped). */
#define GSD_BOUND_PODS_QUERY "spec.nodeName%21%3D"
#define GSD_KUBE_RV_MAX      128 /* bytes of a resourceVersion kept, with the NUL */
/* The oldest Kubernetes gpuschedd supports, 1.20: the extender protocol and scheduler
 * configuration (kubescheduler.config.k8s.io/v1beta1) it is tested with (tests/e2e). */
#define GSD_KUBE_MIN_MINOR 20

/*
 * gsd_kube_live() - the pods Kubernetes runs on a node or is about to: GET
 * /api/v1/pods?fieldSelector=spec.nodeName!= in pages of 500, each within k->timeout_ms and all
 * of them within 20 of it, less those whose status.phase is Failed; one Succeeded is listed as
 * {"uid": UID, "phase": "Succeeded"} (the cards of both are free though the objects stay; a
 * Succeeded pod counts towards its gang); one not finished and not being deleted that carries
 * the annotation gpusched.io/node as {"uid": UID, "pod": the Pod object} (gpuschedd may have to
 * adopt it). Blocks; call it on no thread that holds the state; it gives up between pages once
 * *@stop is set. Return: 0, *@live, an object of "NS/NAME" to metadata.uid or one of those
 * objects (new reference), and @rv the list's resourceVersion ("" when it gave
 * none; @rv may be NULL); -EIO with @why (no connection, a refusal, not a pod list, an item without
 * namespace, name or uid, a continue token given twice, too slow, the token, @stop); -ENOMEM.
 */
int gsd_kube_live(const struct gsd_kube *k, const atomic_int *stop, json_t **live,
                  char rv[GSD_KUBE_RV_MAX], char *why, size_t cap);

/*
 * gsd_kube_succeeded() - an entry of gsd_kube_live()'s list, or of pods gone (@v: a UID, or
 * {"uid", "phase": "Succeeded"}, or {"uid", "pod"}): its UID, NULL when it is none of them;
 * *@succeeded 1 for the second, else 0.
 */
const char *gsd_kube_succeeded(const json_t *v, int *succeeded);

/*
 * gsd_kube_get() - GET @path (already escaped) from the API server @k, its answer up to 64 MiB,
 * within 20 timeoutSeconds. Blocks. Return: 0 and *@out, the JSON answer (new reference); -EIO
 * with @why (no connection, not 200, not JSON, the token).
 */
int gsd_kube_get(const struct gsd_kube *k, const char *path, json_t **out, char *why, size_t cap);

/* Where gsd_kube_follow() reports; every callback runs on the following thread. */
struct gsd_kube_sink {
    void *ud;
    /* nonzero: return as soon as can be (checked between calls and at least once a second) */
    int (*stop)(void *ud);
    /* a full list (gsd_kube_live()): @live is handed over; @listed_us, wall clock, when asked */
    void (*listed)(void *ud, json_t *live, int64_t listed_us);
    /* pod @key ("NS/NAME") of UID @uid was deleted, or finished (Failed; @succeeded 1 Succeeded) */
    void (*gone)(void *ud, const char *key, const char *uid, int succeeded);
    /* Set to follow the Nodes instead of the pods: @items, every Node (a full list, handed
     * over); @node, one Node object ADDED or MODIFIED, or DELETED (@deleted 1), borrowed. */
    void (*nodes)(void *ud, json_t *items);
    void (*node)(void *ud, const json_t *node, int deleted);
    /* with nodes and node set: follow Volcano's PodGroups (GSD_PODGROUPS_PATH, every namespace)
     * rather than the Nodes, the same callbacks given PodGroup objects */
    int podgroups;
};
/* Volcano's PodGroups, every namespace; and the most a list of them may hold (GSD_GROUPS_MAX). */
#define GSD_PODGROUPS_PATH  "/apis/scheduling.volcano.sh/v1beta1/podgroups"
#define GSD_KUBE_GROUPS_MAX 100000

/*
 * gsd_kube_follow() - follow the pods that have a node (the Nodes, when @s->node is set: GET
 * /api/v1/nodes, one page, and its watch; Volcano's PodGroups when @s->podgroups is also set:
 * GET GSD_PODGROUPS_PATH in pages of 500, at most GSD_KUBE_GROUPS_MAX, and its watch; a 404,
 * the resource not served, is logged once and asked again every minute) until @s->stop says
 * so: a list
 * (gsd_kube_live()), then a watch from its resourceVersion with bookmarks (of every pod: a pod
 * held for its gang, not bound yet, is reported gone too)
 * (?watch=1&allowWatchBookmarks=true, the body read as it streams, one event a line of up to
 * 4 MiB), made again from the last resourceVersion when it ends; the API server's version is
 * logged first, for the pods (an error in the log when older than 1.GSD_KUBE_MIN_MINOR); a fresh
 * list every k->sync_us and after "410 Gone"; failures logged and retried after 0.5 s, doubling up
 * to 30 s. A list with an item that names no object (metadata.namespace, metadata.name, a pod's
 * metadata.uid) is a failure whole; so is a watch event of a type Kubernetes has not (ADDED,
 * MODIFIED, DELETED, BOOKMARK, ERROR) or whose object names none: the stream ends there, said.
 * Blocks; call it on no thread that holds the state.
 */
void gsd_kube_follow(const struct gsd_kube *k, const struct gsd_kube_sink *s);

#endif
