/*
 * Who is asking, and whether a request may go on: decided from its request line, client address
 * and headers before its body is read (access.c), with the listener's counters.
 */
#ifndef GSD_ACCESS_H
#define GSD_ACCESS_H

#include <stddef.h>
#include <stdint.h>

struct gsd_config;
struct gsd_req;
struct sockaddr;

/* Why the listener refused a request, as /metrics counts them (gsd_reject_names[]). */
enum gsd_reject {
    GSD_REJECT_UNAUTHENTICATED, /* 401: no token, or an unknown one */
    GSD_REJECT_THROTTLED,       /* 429: too many failed authentications from the address */
    GSD_REJECT_FORBIDDEN,       /* 403: the token's role does not reach the route */
    GSD_REJECT_RATE_LIMITED,    /* 429: a tenant's token bucket is empty */
    GSD_REJECT_TOO_LARGE,       /* 413: a body over its route's cap */
    GSD_REJECT_BUSY,            /* 503: bodies in flight at http.maxBytesInFlight */
    GSD_REJECT_TOO_SLOW,        /* headers or a body not whole within their timeout: closed */
    GSD_REJECT_N
};
extern const char *const gsd_reject_names[GSD_REJECT_N];

/* The listener's counters, written by any HTTP thread, read by /metrics. */
struct gsd_http_stats {
    _Atomic uint64_t rejected[GSD_REJECT_N];
    _Atomic uint64_t answered[6]; /* answers by status class: [2] 2xx, ... [5] 5xx */
    _Atomic int64_t in_flight;    /* bytes of bodies being read now */
    _Atomic int64_t answers;      /* bytes of answers of over 4 KiB being sent now */
    _Atomic int64_t connections;  /* open now */
};

struct gsd_access;
/* gsd_access_new() - the access layer over @cfg (it takes a reference), counting in @stats.
 * Return: 0; -ENOMEM. */
int gsd_access_new(struct gsd_config *cfg, struct gsd_http_stats *stats, struct gsd_access **out);
void gsd_access_free(struct gsd_access *a);
/* gsd_access_reload() - put @cfg in force (a new reference), its tenants' token buckets carried
 * over from the old config by tenant name. Any thread. */
void gsd_access_reload(struct gsd_access *a, struct gsd_config *cfg);
/*
 * gsd_access_agents() - the nodes' own tokens in force from now on (copies of @sha[0..@n) where
 * @has[i] is set): node agents authenticate with them (GSD_AUTH_AGENT). Any thread. Return: 0;
 * -ENOMEM (the ones before stay).
 */
int gsd_access_agents(struct gsd_access *a, const uint8_t (*sha)[32], const uint8_t *has, size_t n);
/* gsd_access_config() - a new reference to the config in force (drop it with gsd_config_free()). */
struct gsd_config *gsd_access_config(struct gsd_access *a);
/*
 * gsd_access_body_cap() - the most bytes a body of @method @path may have: maxBodyBytes for
 * POST /v1/pods and /v1/podgroups, extender.maxBodyBytes for filter, prioritize and preempt,
 * 0 for GET, HEAD and DELETE, 64 KiB for the rest (bind, heartbeats, card health, the clock).
 */
size_t gsd_access_body_cap(const struct gsd_config *c, const char *method, const char *path);
/*
 * gsd_access_check() - steps 1 to 4 of access.c's header, on @r's method, path and Authorization
 * (r->auth, r->token_sha) from client address @addr at monotonic time @now_us. Sets r->who
 * (GSD_AUTH_*, or the tenant's index, with its name in r->tenant; GSD_AUTH_AGENT with the node in
 * r->agent) and *@cap (the body's cap).
 * Any thread; O(tenants). Return: 0 go on; -1 refused, with the answer in @r (401, 403, 429).
 */
int gsd_access_check(struct gsd_access *a, struct gsd_req *r, const struct sockaddr *addr,
                     int64_t now_us, size_t *cap);

#endif
