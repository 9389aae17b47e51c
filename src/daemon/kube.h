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
    char ns[GSD_NAME_MAX], name[GSD_NAME_MAX], uid[GSD_UID_MAX], node[GS_NAME_MAX];
    int64_t seq;                   /* the pod held: a release touches no later pod of that name */
    char *patch, *binding;         /* the request bodies, JSON text */
    struct gsd_kube kube;          /* a copy: a reload meanwhile changes nothing */
    char err[2 * GS_DIAG_MSG_MAX]; /* why it failed: our words, then the API server's */
};

/*
 * gsd_bind_new() - the API calls that bind running pod @p to node @node in the API server @k:
 * a merge patch of @assignment (gsd_pod_assignment()) into the pod's annotations and a v1
 * Binding (metadata name, namespace and, when known, uid; target the Node), as kube-scheduler's
 * DefaultBinder sends it. Return: the job (free with gsd_bind_free()); NULL out of memory.
 */
struct gsd_bind *gsd_bind_new(const struct gsd_kube *k, const struct gsd_pod *p, const char *node,
                              const json_t *assignment);
void gsd_bind_free(struct gsd_bind *b);

enum { GSD_KUBE_BOUND = 0, GSD_KUBE_REFUSED = 1, GSD_KUBE_UNKNOWN = 2 };
/*
 * gsd_kube_bind() - PATCH /api/v1/namespaces/NS/pods/NAME (the annotations), then POST
 * .../binding (and GET the pod after a 409 whose message does not settle it), within
 * b->kube.timeout_ms in all, with the bearer token read from b->kube.token_file now. Blocks; call
 * it on no thread that holds the state. Return: GSD_KUBE_BOUND, also for a 409 when the pod is
 * already assigned to that very node (a Binding sent again; its message says so, or GET of the pod
 * shows it); GSD_KUBE_REFUSED: the pod is not bound (an answer other than 2xx, no connection, an
 * unreadable token), b->err names the API server's answer (its Status message and code) or the
 * failure; GSD_KUBE_UNKNOWN: the Binding went unanswered (the connection broke after it was sent,
 * or a 504) and so did its second send, so it may have been applied (b->err says so).
 */
int gsd_kube_bind(struct gsd_bind *b);

/* The label bind puts on every pod it binds, so the pod sync lists only those. */
#define GSD_MANAGED_LABEL       "gpusched.io/managed"
#define GSD_MANAGED_LABEL_QUERY "gpusched.io%2Fmanaged"
/*
 * gsd_kube_live() - the pods bind labelled that Kubernetes still runs or is about to:
 * GET /api/v1/pods?labelSelector=gpusched.io/managed in pages of 500, each within
 * k->timeout_ms and all of them within 20 of it, less those whose status.phase is Succeeded or
 * Failed (their cards are free though the objects stay). Blocks; call it on no thread that holds
 * the state; it gives up between pages once *@stop is set. Return: 0 and *@live, an object of
 * "NS/NAME" to metadata.uid (new reference); -EIO with @why (no connection, a refusal, not a pod
 * list, an item without namespace, name or uid, a continue token given twice, too slow, the
 * token, @stop); -ENOMEM.
 */
int gsd_kube_live(const struct gsd_kube *k, const atomic_int *stop, json_t **live, char *why,
                  size_t cap);

#endif
