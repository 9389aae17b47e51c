/*
 * Volcano queues as gpuschedd's API shows and names them (the scheduler runs them).
 */
#ifndef GSD_QUEUE_H
#define GSD_QUEUE_H

struct gsd_req;
struct gsd_state;
struct gsd_tenant;

/*
 * gsd_queue_find() - the index of queue @name among the scheduler's queues (the Queue documents,
 * then the tenants' own); their count for the implicit `default`; -1 when no such queue exists.
 */
int gsd_queue_find(const struct gsd_state *st, const char *name);

/*
 * gsd_queue_known() - whether queue @name ("" = none named) may be named; otherwise answers @r
 * 400 on @field, as Volcano's admission refuses a job or PodGroup of an unknown queue, whether or
 * not Queue documents are loaded (`default` aside). Return: 1 known, 0 answered.
 */
int gsd_queue_known(const struct gsd_state *st, const char *name, const char *field,
                    struct gsd_req *r);

/*
 * gsd_queues_list() - GET /v1/queues (or /v1/queues/@name: 404 when unknown): weight,
 * capability, reclaimable, deserved, allocated and pending GPU share, pods, as the scheduler
 * holds them after its last pass. The Queue documents and `default` are cluster-wide, as in
 * Volcano: any token sees them all.
 */
void gsd_queues_list(struct gsd_state *st, struct gsd_req *r, const char *name);

#endif
