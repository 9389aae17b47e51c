/*
 * gpuschedd: what-if on the live cluster. GET /v1/snapshot (the admin's) answers the state now as
 * a scenario (multi-document YAML) that `gpusched simulate --scenario FILE --from-now` continues
 * from, so the two drivers of the one scheduler can be asked what the next hours bring.
 */
#ifndef GSD_WHATIF_H
#define GSD_WHATIF_H

#include "server.h"

struct gsd_state;

/*
 * gsd_whatif_snapshot() - answer @r (GET /v1/snapshot, admin checked by the caller) with the
 * snapshot of @st: 200 application/yaml; 507 past 1 GiB; 500 out of memory. The scheduler thread,
 * holding the state; O(nodes + pods + policy text).
 */
void gsd_whatif_snapshot(struct gsd_state *st, struct gsd_req *r);

#endif
