/*
 * Tenants, queues and bills as the API shows them.
 */
#ifndef GSD_ACCOUNTS_H
#define GSD_ACCOUNTS_H

#include <jansson.h>
#include <stdint.h>

struct gsd_req;
struct gsd_state;
struct gsd_tenant;

/* Tenants, queues and bills (accounts.c). @viewer: the tenant asking, NULL for the admin. */
/* gsd_accounts_list() - GET /v1/tenants (@queues 0) or /v1/queues (1), or the one named @name. */
void gsd_accounts_list(struct gsd_state *st, struct gsd_req *r, const struct gsd_tenant *viewer,
                       int queues, const char *name);
/* gsd_bill_handle() - GET /v1/bills: the bill of tenant @name (NULL: the viewer's, or all). */
void gsd_bill_handle(struct gsd_state *st, struct gsd_req *r, const struct gsd_tenant *viewer,
                     const char *name);

/* gsd_capacity_milli() - the GPU share placement may use: every card, less those of NotReady
 * nodes and unhealthy cards (accounts.c). O(nodes x cards). */
int64_t gsd_capacity_milli(const struct gsd_state *st);

/*
 * gsd_bill_accrued() - every tenant's bill so far, runs still going priced up to now, as
 * GET /v1/bills totals it: a JSON object of tenant name to micro-dollars, borrowed (valid until
 * the next call). Read from the ledger at most once per GSD_BILL_CACHE_US, so frequent scrapes
 * cost no more than that. Return: NULL without a rate card, or when the ledger cannot be read.
 */
#define GSD_BILL_CACHE_US (60 * 1000000LL)
json_t *gsd_bill_accrued(struct gsd_state *st);

#endif
