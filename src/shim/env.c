/*
 * libgpushare — parsing of the limit variables. Strict on purpose: a limit that cannot be read is
 * a tenant running without its limit, so every malformed value is an error with its column.
 */
#include "env.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int fail(char *err, const char *var, size_t col, const char *what)
{
    snprintf(err, GS_SHIM_ERR_MAX, "%s, column %zu: %s", var, col + 1, what);
    return -EINVAL;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* "GPU-" or "MIG-" then 8-4-4-4-12 hex digits: 40 characters. Return the length consumed, or -1
 * with *@bad the offset of the first wrong character. */
static int parse_uuid(const char *s, unsigned char out[16], size_t *bad)
{
    static const char dash_at[] = {12, 17, 22, 27};
    if (strncmp(s, "GPU-", 4) != 0 && strncmp(s, "MIG-", 4) != 0) {
        *bad = 0;
        return -1;
    }
    int nib = 0;
    for (int i = 4; i < 40; i++) {
        if (i == dash_at[0] || i == dash_at[1] || i == dash_at[2] || i == dash_at[3]) {
            if (s[i] != '-') {
                *bad = (size_t)i;
                return -1;
            }
            continue;
        }
        int v = hexval(s[i]);
        if (v < 0) {
            *bad = (size_t)i;
            return -1;
        }
        if (nib % 2 == 0)
            out[nib / 2] = (unsigned char)(v << 4);
        else
            out[nib / 2] |= (unsigned char)v;
        nib++;
    }
    return 40;
}

/* Decimal digits into *@v, at most @max. Return the length, or -1 (no digit or too large). */
static int parse_uint(const char *s, uint64_t max, uint64_t *v)
{
    uint64_t x = 0;
    int n = 0;
    while (s[n] >= '0' && s[n] <= '9') {
        x = x * 10 + (uint64_t)(s[n] - '0');
        if (x > max)
            return -1;
        n++;
    }
    if (n == 0)
        return -1;
    *v = x;
    return n;
}

static int parse_entry(const char *var, const char *val, size_t *pos, uint64_t min, uint64_t max,
                       struct gs_shim_list *l, char *err)
{
    const char *s = val + *pos;
    unsigned char uuid[16];
    int named = s[0] == 'G' || s[0] == 'M';
    if (named) {
        size_t bad;
        if (parse_uuid(s, uuid, &bad) < 0)
            return fail(err, var, *pos + bad, "expected a device UUID (GPU-... or MIG-...)");
        if (s[40] != '=')
            return fail(err, var, *pos + 40, "expected '=' after the device UUID");
        for (int i = 0; i < l->nentries; i++)
            if (memcmp(l->entry[i].uuid, uuid, 16) == 0)
                return fail(err, var, *pos, "this device is named twice");
        if (l->nentries == GS_GPUSHARE_MAX_ENTRIES)
            return fail(err, var, *pos, "more entries than the library accepts (64)");
        s += 41;
    }
    uint64_t v;
    int n = parse_uint(s, max, &v);
    if (n < 0 || v < min) {
        char what[96];
        snprintf(what, sizeof(what), "expected an integer from %llu to %llu",
                 (unsigned long long)min, (unsigned long long)max);
        return fail(err, var, (size_t)(s - val), what);
    }
    if (!named && l->has_default)
        return fail(err, var, *pos, "a second value for all devices");
    if (named) {
        memcpy(l->entry[l->nentries].uuid, uuid, 16);
        l->entry[l->nentries++].value = v;
    } else {
        l->has_default = 1;
        l->dflt = v;
    }
    *pos = (size_t)(s - val) + (size_t)n;
    return 0;
}

static int parse_list(const char *var, const char *val, uint64_t min, uint64_t max,
                      struct gs_shim_list *l, char *err)
{
    memset(l, 0, sizeof(*l));
    if (!val)
        return 0;
    l->present = 1;
    if (strlen(val) > GS_GPUSHARE_MAX_VALUE_LEN)
        return fail(err, var, GS_GPUSHARE_MAX_VALUE_LEN, "value longer than 4096 characters");
    size_t pos = 0;
    for (;;) {
        int rc = parse_entry(var, val, &pos, min, max, l, err);
        if (rc < 0)
            return rc;
        if (val[pos] == '\0')
            return 0;
        if (val[pos] != ',')
            return fail(err, var, pos, "expected ',' or the end of the value");
        pos++;
    }
}

/* A region: a shared-memory name "/name", or a file's absolute path "/dir/.../file" (a value
 * with a '/' past its first character), of letters, digits, '.', '_', '-' and single '/' between
 * components that are not "." or "..". */
static int parse_region(const char *val, char *out, char *err)
{
    const char *var = GS_GPUSHARE_ENV_REGION;
    if (!val)
        val = GS_GPUSHARE_DEFAULT_REGION;
    size_t n = strlen(val);
    if (val[0] != '/')
        return fail(err, var, 0, "expected '/' and a name, or a file's absolute path");
    if (n < 2 || n > GS_SHIM_REGION_MAX)
        return fail(err, var, n < 2 ? n : GS_SHIM_REGION_MAX, "expected 1 to 200 characters");
    for (size_t i = 1, start = 1; i <= n; i++) {
        char c = val[i];
        if (c == '/' || c == '\0') { /* the end of a component: [start, i) */
            size_t len = i - start;
            if (len == 0 ||
                (val[start] == '.' && (len == 1 || (len == 2 && val[start + 1] == '.'))))
                return fail(err, var, start, "expected a file or folder name");
            start = i + 1;
            continue;
        }
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        if (!ok)
            return fail(err, var, i, "expected a letter, digit, '.', '_', '-' or '/'");
    }
    memcpy(out, val, n + 1);
    return 0;
}

int gs_shim_env_parse(const char *mem, const char *cores, const char *ctx, const char *region,
                      struct gs_shim_env *out, char *err)
{
    struct gs_shim_env e;
    int rc = parse_list(GS_GPUSHARE_ENV_MEMORY_MIB, mem, 0, GS_SHIM_MAX_MIB, &e.memory_mib, err);
    if (rc == 0)
        rc = parse_list(GS_GPUSHARE_ENV_CORES_PERCENT, cores, 1, 100, &e.cores_pct, err);
    if (rc == 0)
        rc = parse_region(region, e.region, err);
    e.context_mib = GS_GPUSHARE_DEFAULT_CONTEXT_MIB;
    if (rc == 0 && ctx) {
        int n = parse_uint(ctx, GS_SHIM_MAX_CTXMIB, &e.context_mib);
        if (n < 0)
            rc = fail(err, GS_GPUSHARE_ENV_CONTEXT_MIB, 0, "expected an integer from 0 to 65536");
        else if (ctx[n] != '\0')
            rc = fail(err, GS_GPUSHARE_ENV_CONTEXT_MIB, (size_t)n, "expected the end of the value");
    }
    if (rc == 0)
        *out = e;
    return rc;
}

int gs_shim_list_lookup(const struct gs_shim_list *l, const unsigned char uuid[16], uint64_t *value)
{
    for (int i = 0; i < l->nentries; i++) {
        if (memcmp(l->entry[i].uuid, uuid, 16) == 0) {
            *value = l->entry[i].value;
            return 1;
        }
    }
    if (!l->has_default)
        return 0;
    *value = l->dflt;
    return 1;
}

void gs_shim_uuid_format(const unsigned char u[16], int mig, char out[41])
{
    snprintf(out, 41, "%s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             mig ? "MIG" : "GPU", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
             u[11], u[12], u[13], u[14], u[15]);
}
