/*
 * PodGroups (Volcano's scheduling.volcano.sh/v1beta1): gangs placed all or nothing.
 */
#ifndef GSD_GANG_H
#define GSD_GANG_H

#include "podspec.h"

struct gsd_req;
struct gsd_state;
struct gsd_tenant;

/*
 * A PodGroup (Volcano's scheduling.volcano.sh/v1beta1), a gang: the pods of its namespace whose
 * gsd_pod_group() names it are placed all or nothing until minMember of them run.
 */
struct gsd_group {
    /* as posted, what the scheduler takes: queue and priorityClassName "" when not given (the
     * queue is then `default`, gs_podgroup_queue()), minMember 1..GSD_GANG_MAX, minResources 0
     * where not named; src unused */
    struct gs_podgroup_spec spec;
    char tenant[GSD_NAME_MAX];
    int64_t created_us; /* wall clock */
    char *meta; /* {"annotations": {...}, "labels": {...}} as posted: JSON text, keys sorted */
    int32_t succeeded; /* members that completed: they count towards minMember (stored) */
    int64_t seq;       /* order of creation, stored: a list's continue token */
    /* the scheduler thread's, not stored */
    int32_t members, running; /* pods held that name it; of them, running */
    int32_t allocated;        /* of the running, those kube-scheduler has not bound yet */
    int64_t bytes;            /* what it counts against maxPodBytesPerTenant (gang.c) */
    uint64_t tried;           /* the retry pass that last tried it */
    int64_t short_us; /* gsd_clock_us() since its held members' gang lacks a member, else 0 */
    /* gsd_kube_podgroups(): kube, the API server holds it (taken from there, or posted with
     * the same spec), so deleting it there deletes it here (stored: a list after a restart
     * that lacks it deletes it); kube_gone, not stored: deleted there while pods named it,
     * deleted here once none do */
    uint8_t kube, kube_gone;
};
#define GSD_GANG_MAX      10000      /* minMember at most */
#define GSD_SUCCEEDED_MAX 1000000000 /* members completed counted at most (then no more) */
#define GSD_GROUPS_MAX    100000

/* gsd_group_find() - the PodGroup @ns/@name, or NULL. O(groups). */
struct gsd_group *gsd_group_find(const struct gsd_state *st, const char *ns, const char *name);
/* gsd_group_of_files() - the PodGroup @ns/@name of config @cfg's policy files, or NULL: those are
 * the files', the API's others, one name one of them. */
const struct gs_podgroup_spec *gsd_group_of_files(const struct gsd_config *cfg, const char *ns,
                                                  const char *name);
/* gsd_groups_apart() - whether config @cfg's policy files name a PodGroup the API holds. Return:
 * 0; -EINVAL with @d naming both. */
int gsd_groups_apart(const struct gsd_state *st, const struct gsd_config *cfg, struct gs_diag *d);
/* gsd_group_min_json() - @g's spec.minResources as Kubernetes quantities ({} when it names none):
 * a new reference, NULL when out of memory. */
json_t *gsd_group_min_json(const struct gsd_group *g);
/* gsd_group_tasks_json() - @g's spec.minTaskMember, task name: members ({} when it has none),
 * as posted and as the store and a snapshot write it: a new reference, NULL when out of memory. */
json_t *gsd_group_tasks_json(const struct gs_podgroup_spec *g);
/* gsd_group_tasks_read() - spec.minTaskMember @v (absent or null: none) into @g, checked as
 * gs_podgroup_task_add() checks each entry (Volcano's rules). Return: 0; -EINVAL with @e's
 * field naming the entry (spec.minTaskMember.TASK) and its message why. */
int gsd_group_tasks_read(const json_t *v, struct gs_podgroup_spec *g, struct gsd_ferr *e);
/* gsd_groups_restore() - load the stored PodGroups (before the pods), each checked as
 * POST /v1/podgroups checks one. Return: 0; -EIO; -ENOMEM; -EINVAL with @d naming the PodGroup
 * and the field the store holds wrong. */
int gsd_groups_restore(struct gsd_state *st, struct gs_diag *d);
/* gsd_groups_recount() - each PodGroup's members and running members, from the pods. */
void gsd_groups_recount(struct gsd_state *st);
void gsd_groups_free(struct gsd_state *st);
/*
 * gsd_podgroups_handle() - POST /v1/podgroups (a Volcano PodGroup: metadata.name, namespace,
 * spec.minMember, spec.queue, spec.priorityClassName, spec.minResources; 400 naming the field,
 * 409 when it exists with another spec),
 * GET /v1/podgroups, GET|DELETE /v1/podgroups/NS/NAME (DELETE: 409 while pods name it).
 * @rest: what follows "/v1/podgroups" ("" or "/NS/NAME"); @viewer: the tenant, NULL for admin.
 */
void gsd_podgroups_handle(struct gsd_state *st, struct gsd_req *r, const struct gsd_tenant *viewer,
                          const char *rest);

/*
 * gsd_kube_podgroups() - Volcano PodGroup objects @items (an array, borrowed) as
 * gsd_kube_follow() reports them: every one (@listed 1), or one ADDED or MODIFIED (@listed 0), or
 * DELETED (@deleted 1). On the scheduler thread, inside the batch's transaction. Each is taken
 * as POST /v1/podgroups with the admin token takes it (the same parse, checks and intake: its
 * namespace's tenant, its queue and PriorityClass known, no unknown field), once what the API
 * server and Volcano's controller write themselves is set aside (metadata.uid, resourceVersion,
 * generation, creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds, managedFields,
 * selfLink, generateName, ownerReferences and finalizers, which Kubernetes acts on, and status).
 * One refused is logged once, naming it and the field, and tried again only once it changes (or
 * after a reload: gsd_kube_podgroups_forget()). One of a name gpuschedd holds already is that
 * one when the spec is the same (followed from then on), else refused as a POST is (409, logged).
 * One deleted, or missing from a list, is deleted as DELETE /v1/podgroups/NS/NAME deletes it; one
 * pods still name stays, logged once, and is deleted by gsd_kube_podgroups_settle() once none
 * do. Nothing is returned: what fails is logged; a store failure sets st->failed.
 */
void gsd_kube_podgroups(struct gsd_state *st, const json_t *items, int listed, int deleted);
/* gsd_kube_podgroups_settle() - delete the PodGroups deleted in the API server that pods named
 * then and none names now. After each batch, inside its transaction: O(1) while none waits,
 * else O(PodGroups). */
void gsd_kube_podgroups_settle(struct gsd_state *st);
/* gsd_kube_podgroups_forget() - try every refused PodGroup again (the config changed). */
void gsd_kube_podgroups_forget(struct gsd_state *st);

#endif
