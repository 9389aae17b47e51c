/*
 * The reads answered from snapshots on reader threads, never on the scheduler thread (reads.c):
 * GET /v1/pods, GET /v1/pods/NS/NAME, GET /v1/status and GET /metrics.
 */
#ifndef GSD_READS_H
#define GSD_READS_H

struct gsd_config;
struct gsd_http_stats;
struct gsd_req;
struct gsd_snaps;
struct gsd_tenant;

struct gsd_reads;
/* gsd_reads_new() - reads from @snaps, scrapes counting @http. Return: 0; -ENOMEM. */
int gsd_reads_new(struct gsd_snaps *snaps, const struct gsd_http_stats *http,
                  struct gsd_reads **out);
void gsd_reads_free(struct gsd_reads *rd);
/* gsd_reads_route() - whether @r is one of the reads (method and path). */
int gsd_reads_route(const struct gsd_req *r);
/* gsd_reads_handle() - answer read @r from the snapshot in place. Any thread; O(pods) at most. */
void gsd_reads_handle(struct gsd_reads *rd, struct gsd_req *r);

/* gsd_pod_path() - "NS/NAME" (what follows /v1/pods/) into @ns (GSD_NAME_MAX bytes) and @name
 * (GSD_OBJ_MAX bytes).
 * Return: 0; -E2BIG when a part is longer than any pod's (Kubernetes' 63 and 253 bytes); -1 when
 * the path has another shape. gsd_pod_path_why() - the 404's words for either (static text). */
int gsd_pod_path(const char *rest, char *ns, char *name);
const char *gsd_pod_path_why(int rc);
/*
 * gsd_may_use_ns() - may @viewer (NULL: the admin) act in namespace @ns of config @c? Otherwise
 * answers @r 403 on metadata.namespace. Return: 1 yes; 0 answered.
 */
int gsd_may_use_ns(const struct gsd_config *c, const struct gsd_tenant *viewer, const char *ns,
                   struct gsd_req *r);

#endif
