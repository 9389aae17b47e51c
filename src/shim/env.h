/*
 * libgpushare — the limits a process reads from its environment (include/gpusched/gpushare_env.h
 * names the variables; docs/libgpushare.md is the contract).
 *
 * Invariants: parsing is pure (values are handed in, nothing is read from the process), so the
 * unit tests drive it directly; a struct gs_shim_env is filled completely or the call fails with a
 * message naming the variable and the 1-based column of the first bad character.
 */
#ifndef GPUSHARE_ENV_H
#define GPUSHARE_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "gpusched/gpushare_env.h"

#define GS_SHIM_ERR_MAX    256
#define GS_SHIM_REGION_MAX 201 /* "/" + 200 characters */
#define GS_SHIM_MAX_MIB    (UINT64_C(1) << 30)
#define GS_SHIM_MAX_CTXMIB 65536

/* One limit variable: entries by device UUID and an optional value for all other devices. */
struct gs_shim_list {
    int present; /* the variable is set */
    int nentries;
    struct {
        unsigned char uuid[16];
        uint64_t value;
    } entry[GS_GPUSHARE_MAX_ENTRIES];
    int has_default;
    uint64_t dflt;
};

struct gs_shim_env {
    struct gs_shim_list memory_mib;
    struct gs_shim_list cores_pct;
    uint64_t context_mib;
    char region[GS_SHIM_REGION_MAX + 1];
};

/*
 * gs_shim_env_parse() - parse the four variables.
 * @mem, @cores, @ctx, @region: the variables' values, NULL when unset (then the documented
 *                              default applies; for @region, GS_GPUSHARE_DEFAULT_REGION itself:
 *                              the library hands in its per-user name instead). Not retained.
 * @out: filled on success only.
 * @err: GS_SHIM_ERR_MAX bytes; on failure "VARIABLE, column N: what was expected".
 * Return: 0, or -EINVAL for a malformed value. O(length of the values).
 */
int gs_shim_env_parse(const char *mem, const char *cores, const char *ctx, const char *region,
                      struct gs_shim_env *out, char *err);

/*
 * gs_shim_list_lookup() - the value @l gives the device whose UUID is @uuid.
 * Return: 1 and *@value set when an entry names the device or a default exists; 0 when the list
 * does not cover the device (*@value untouched).
 */
int gs_shim_list_lookup(const struct gs_shim_list *l, const unsigned char uuid[16],
                        uint64_t *value);

/* Format @uuid as "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (or "MIG-..." when @mig) in @out (41
 * bytes). */
void gs_shim_uuid_format(const unsigned char uuid[16], int mig, char out[41]);

#endif
