/*
 * Kubernetes quantities and Go-style durations as exact integers.
 *
 * A quantity is <sign><digits>[.<digits>]<suffix>, the suffix one of the binary SI units
 * (Ki Mi Gi Ti Pi Ei), the decimal SI units (n u m "" k M G T P E) or a decimal exponent (e3, E-2),
 * as in k8s.io/apimachinery's resource.Quantity. It is held as mant x 10^e10 x 2^e2 with mant the
 * leading significant digits that fit 64 bits (19 or 20, so 9223372036854775807 is exact), then
 * scaled to the caller's unit by integer multiplication and one exact division, so "1.5" x 1000 is
 * 1500 and "0.1" Gi in MiB is exactly 102.4 (an error, or 103 when rounding up is asked): never a
 * float. Digits past those are kept only as "some were not zero", as a remainder is: Kubernetes
 * takes any number of digits (inf.Dec), and no value that fits int64 needs them.
 */
#include "scenario_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#define EXP_MAX 10000 /* |exponent| beyond this is nonsense, and bounds the scaling loops */

struct dec {
    uint64_t mant;
    long e10, e2;
    bool neg;
    bool more; /* a non-zero digit past those mant holds: the value is a little above it */
};

/* widen() - @m x 10^(@zeros + 1) + @d into *@m, or 0 (*@m as it was) when it exceeds 64 bits. */
static int widen(uint64_t *m, long zeros, unsigned d)
{
    uint64_t v = *m;
    for (long k = 0; k <= zeros; k++)
        if (v > UINT64_MAX / 10)
            return 0;
        else
            v *= 10;
    if (v > UINT64_MAX - d)
        return 0;
    *m = v + d;
    return 1;
}

/* number() - sign, digits, optional fraction from *@p; advances *@p. */
static int number(const char **p, struct dec *v, const char **why)
{
    const char *s = *p;
    int ndig = 0;
    long pend = 0, nfrac = 0, dropped = 0; /* zeros waiting; integer digits mant has no room for */
    bool frac = false, full = false;
    v->mant = 0;
    v->e2 = 0;
    v->more = false;
    v->neg = *s == '-';
    if (*s == '+' || *s == '-')
        s++;
    for (;; s++) {
        if (*s == '.' && !frac) {
            frac = true;
            continue;
        }
        if (*s < '0' || *s > '9')
            break;
        ndig++;
        if (full) { /* past mant's room: an integer digit still counts as a power of ten */
            dropped += !frac;
            v->more |= *s != '0';
            continue;
        }
        nfrac += frac;
        if (*s == '0') { /* leading zeros are dropped; others wait for a non-zero digit */
            pend += v->mant > 0;
            continue;
        }
        if (!widen(&v->mant, pend, (unsigned)(*s - '0'))) {
            full = true;
            nfrac -= frac; /* this digit is past mant too */
            dropped += !frac;
            v->more = true;
            continue;
        }
        pend = 0;
    }
    if (ndig == 0) {
        *why = "is not a number";
        return -EINVAL;
    }
    v->e10 = pend - nfrac + dropped;
    *p = s;
    return 0;
}

/* suffix() - the unit suffix @s of a quantity into @v's exponents. */
static int suffix(const char *s, struct dec *v, const char **why)
{
    static const char dec_si[] = "n\0u\0m\0k\0M\0G\0T\0P\0E";
    static const int dec_exp[] = {-9, -6, -3, 3, 6, 9, 12, 15, 18};
    static const char *const bin_si[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    *why = "is not a Kubernetes quantity (a number with an optional unit: 500m, 2, 64Gi, 1e3)";
    if (!*s)
        return 0;
    for (int i = 0; i < 6; i++)
        if (strcmp(s, bin_si[i]) == 0) {
            v->e2 += 10 * (i + 1);
            return 0;
        }
    for (int i = 0; i < 9; i++)
        if (strcmp(s, dec_si + 2 * i) == 0) {
            v->e10 += dec_exp[i];
            return 0;
        }
    if ((*s == 'e' || *s == 'E') && s[1]) {
        const char *p = s + 1 + (s[1] == '+' || s[1] == '-');
        long x = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            if ((x = x * 10 + (*p - '0')) > EXP_MAX) {
                *why = "has an exponent out of range";
                return -ERANGE;
            }
        if (!*p && p > s + 1 + (s[1] == '+' || s[1] == '-')) {
            v->e10 += s[1] == '-' ? -x : x;
            return 0;
        }
    }
    return -EINVAL;
}

/* times() - *@num x @base^@n, or 0 when that exceeds 64 bits. */
static int times(uint64_t *num, unsigned base, long n)
{
    for (long k = 0; k < n; k++)
        if (*num > UINT64_MAX / base)
            return 0;
        else
            *num *= base;
    return 1;
}

/*
 * scale() - @v x @mult as an integer: multiplications checked for overflow, then one division by
 * the negative powers; a remainder rounds up with GS__Q_CEIL, down with GS__Q_FLOOR, otherwise it
 * is an error. 10^e10 x 2^e2 is taken as 5^e10 x 2^(e10 + e2), so powers of two cancel before
 * either side overflows: "1e24" bytes in MiB is 5^24 x 2^4, not 10^24 / 2^20.
 */
static int scale(const struct dec *v, uint64_t mult, unsigned flags, int64_t *out, const char **why)
{
    uint64_t num = v->mant, den = 1;
    long e5 = v->e10, e2 = v->e10 + v->e2;
    *why = "is too large";
    if (num == 0 || mult == 0) {
        *out = 0;
        return 0;
    }
    if (num > UINT64_MAX / mult)
        return -ERANGE;
    num *= mult;
    if (!times(&num, 5, e5) || !times(&num, 2, e2))
        return -ERANGE;
    bool den_big = !times(&den, 5, -e5) || !times(&den, 2, -e2);
    uint64_t q = den_big ? 0 : num / den, r = (den_big ? num : num % den) || v->more;
    if (q > INT64_MAX) /* too large whatever its fraction */
        return -ERANGE;
    if (r && !(flags & (GS__Q_CEIL | GS__Q_FLOOR))) {
        *why = "is not a whole number of";
        return -EDOM;
    }
    q += r != 0 && (flags & GS__Q_CEIL);
    if (q > INT64_MAX)
        return -ERANGE;
    *out = (int64_t)q;
    return 0;
}

int gs__qty_parse(const char *s, int e10, int e2, unsigned flags, int64_t *out, const char **why)
{
    struct dec v;
    const char *p = s;
    int rc = number(&p, &v, why);
    if (rc == -EINVAL)
        *why = "is not a Kubernetes quantity (a number with an optional unit: 500m, 2, 64Gi, 1e3)";
    if (rc)
        return rc;
    /* A count in its own unit may come as a real API server writes it back ("20k" for 20000),
     * but a binary suffix there means the writer thought of bytes: "20Gi" MiB is not 20 GiB. */
    if ((flags & GS__Q_PLAIN) && p[0] && p[1] == 'i') {
        *why = "must be a number (decimal suffixes such as k allowed), not a binary quantity";
        return -EINVAL;
    }
    rc = suffix(p, &v, why);
    if (rc)
        return rc;
    if (v.neg && v.mant) {
        *why = "must not be negative";
        return -EDOM;
    }
    v.e10 += e10;
    v.e2 += e2;
    return scale(&v, 1, flags, out, why);
}

/* unit_us() - microseconds in the unit at *@p, advancing past it; 0 when none. */
/* unit_ns() - the duration unit at *@p in nanoseconds, as Go's time.ParseDuration spells them
 * ("µs" and "μs" too), moving *@p past it; 0 for none. */
static uint64_t unit_ns(const char **p)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {{"ns", 1},
                 {"us", 1000},
                 {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
                 {"\xce\xbcs", 1000}, /* U+03BC Greek mu */
                 {"ms", 1000000},
                 {"s", 1000000000ull},
                 {"m", 60000000000ull},
                 {"h", 3600000000000ull},
                 {"d", 86400000000000ull}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        size_t n = strlen(units[i].name);
        /* "m" must not take the "m" of "ms" */
        if (strncmp(*p, units[i].name, n) == 0 && !(n == 1 && (*p)[1] == 's')) {
            *p += n;
            return units[i].ns;
        }
    }
    return 0;
}

int gs__duration_parse(const char *s, int64_t *out, const char **why)
{
    const char *p = s;
    int64_t total = 0;
    if (strcmp(s, "0") == 0) {
        *out = 0;
        return 0;
    }
    do {
        struct dec v;
        int64_t part;
        int rc = number(&p, &v, why);
        if (rc == -EINVAL)
            *why = "is not a duration (a number and a unit: 90s, 1.5h, 1h30m, 2d; ns, us, ms too)";
        if (rc)
            return rc;
        uint64_t ns = unit_ns(&p);
        if (!ns) {
            *why = "is not a duration (a number and a unit: 90s, 1.5h, 1h30m, 2d; ns, us, ms too)";
            return -EINVAL;
        }
        if (v.neg && v.mant) {
            *why = "must not be negative";
            return -EDOM;
        }
        v.e10 -= 3; /* nanoseconds to microseconds: a remainder is an error, not rounded */
        rc = scale(&v, ns, 0, &part, why);
        if (rc == -EDOM)
            *why = "is not a whole number of";
        if (rc)
            return rc;
        if (part > INT64_MAX - total) {
            *why = "is too large";
            return -ERANGE;
        }
        total += part;
    } while (*p);
    *out = total;
    return 0;
}

int gs_duration_parse(const char *s, int64_t *out, const char **why)
{
    const char *w = "";
    int rc = gs__duration_parse(s, out, &w);
    if (!rc) /* a step on the way may have left a reason that no longer holds ("0s") */
        w = "";
    if (!rc && *out > GS_SCN_TIME_MAX_US) {
        w = "is more than 10 years (87600h)";
        rc = -ERANGE;
    }
    if (rc && rc != -ENOMEM)
        rc = -EINVAL;
    if (why)
        *why = !strcmp(w, "is not a whole number of") ? "is not a whole number of microseconds" : w;
    return rc;
}

char *gs_duration_format(int64_t us, char *buf, size_t size)
{
    static const struct {
        const char *name;
        int64_t us;
    } units[] = {{"d", 86400000000ll}, {"h", 3600000000ll}, {"m", 60000000ll},
                 {"s", 1000000},       {"ms", 1000},        {"us", 1}};
    size_t at = 0;
    snprintf(buf, size, "0");
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]) && us > 0; i++)
        if (us >= units[i].us) {
            int n = snprintf(buf + at, at < size ? size - at : 0, "%lld%s",
                             (long long)(us / units[i].us), units[i].name);
            at += n > 0 ? (size_t)n : 0;
            us %= units[i].us;
        }
    return buf;
}

int gs_quantity_parse(const char *s, int e10, int e2, int round, int64_t *out)
{
    const char *why;
    unsigned flags = round > 0 ? GS__Q_CEIL : round < 0 ? GS__Q_FLOOR : 0;
    int rc = gs__qty_parse(s, e10, e2, flags, out, &why);
    return rc == -EDOM || rc == -EINVAL ? -EINVAL : rc;
}
