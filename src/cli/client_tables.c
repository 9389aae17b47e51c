/*
 * gpusched status, tenants, queues and bills: gpuschedd's answers as tables, as `list` prints
 * pods and `kubectl get` its objects. GPU amounts come in milli-GPUs and are shown in GPUs to the
 * hundredth; money comes in exact micro-dollars and is shown as people read it
 * (gs_money_format_human(): cents, thousands separators). `-o json` prints the answer as it came
 * instead.
 */
#include "cli.h"

#include "gpusched/billing.h"
#include "gpusched/diag.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static long long num(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

/* A string of gpuschedd's answer as a cell: escaped, as every message is (gs__cli_cell()). */
static const char *str(const json_t *o, const char *key)
{
    return gs__cli_cell(json_string_value(json_object_get(o, key)));
}

/* Milli-GPUs @m as GPUs to the hundredth ("8.40") into @buf (24 bytes). */
static const char *gpus(long long m, char *buf)
{
    unsigned long long a = m < 0 ? 0ull - (unsigned long long)m : (unsigned long long)m;
    snprintf(buf, 24, "%s%llu.%02llu", m < 0 ? "-" : "", a / 1000, a % 1000 / 10);
    return buf;
}

/* "@a@ua@b@ub" into @buf (24 bytes), "@a@ua" alone when @b is 0: kubectl's "3m20s", "25m". */
static void units(char *buf, long long a, char ua, long long b, char ub)
{
    if (b)
        snprintf(buf, 24, "%lld%c%lld%c", a, ua, b, ub);
    else
        snprintf(buf, 24, "%lld%c", a, ua);
}

/* Seconds @s as kubectl's AGE column writes them (k8s.io/apimachinery util/duration
 * HumanDuration(): "45s", "3m20s", "25m", "5h10m", "36h", "3d4h", "200d", "3y20d", "9y") into
 * @buf (24 bytes). */
static const char *age(long long s, char *buf)
{
    long long m = s / 60, h = m / 60, d = h / 24;
    if (s < -1) /* ahead by more than the second kubectl allows two clocks to differ */
        snprintf(buf, 24, "<invalid>");
    else if (s < 120)
        snprintf(buf, 24, "%llds", s < 0 ? 0 : s);
    else if (m < 10)
        units(buf, m, 'm', s % 60, 's');
    else if (m < 180)
        units(buf, m, 'm', 0, 0);
    else if (h < 8)
        units(buf, h, 'h', m % 60, 'm');
    else if (h < 48)
        units(buf, h, 'h', 0, 0);
    else if (h < 24 * 8)
        units(buf, d, 'd', h % 24, 'h');
    else if (d < 365 * 2)
        units(buf, d, 'd', 0, 0);
    else
        units(buf, d / 365, 'y', d < 365 * 8 ? d % 365 : 0, 'd');
    return buf;
}

/* GET /v1/status: one row, the daemon's totals, its age since it started by this clock. */
static void status(const json_t *ans)
{
    char a[24], u[24], t[24];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    long long since;
    if (__builtin_sub_overflow((long long)now.tv_sec * 1000000 + now.tv_nsec / 1000,
                               num(ans, "started_us"), &since))
        since = -2000000; /* a start no clock gives: age() writes <invalid> */
    since /= 1000000;
    printf("%5s %6s %10s %12s %8s %8s %-24s %-10s %s\n", "NODES", "GPUS", "ALLOCATED",
           "UNAVAILABLE", "RUNNING", "PENDING", "CALLER", "VERSION", "AGE");
    printf("%5lld %6lld %10s %12s %8lld %8lld %-24s %-10s %s\n", num(ans, "nodes"),
           num(ans, "gpus"), gpus(num(ans, "gpu_milli_allocated"), a),
           gpus(num(ans, "gpu_milli_unavailable"), u), num(ans, "pods_running"),
           num(ans, "pods_pending"), str(ans, "caller"), str(ans, "version"),
           json_is_integer(json_object_get(ans, "started_us")) ? age(since, t) : "-");
}

/* The width of a column holding @s, at least @w (a name is at most 253 bytes). */
static int width(const char *s, int w)
{
    size_t n = strlen(s);
    return n > (size_t)w ? (int)(n < 253 ? n : 253) : w;
}

/* The widest "name" of @items, at least @w. */
static int names_width(const json_t *items, int w)
{
    size_t i;
    const json_t *o;
    json_array_foreach(items, i, o) w = width(str(o, "name"), w);
    return w;
}

static void tenants(const json_t *ans)
{
    char a[24], p[24];
    size_t i;
    const json_t *t;
    int wn = names_width(json_object_get(ans, "items"), 24);
    printf("%-*s %10s %8s %8s %10s %12s\n", wn, "TENANT", "CPU-WEIGHT", "RUNNING", "PENDING",
           "GPUS", "GPUS-PENDING");
    json_array_foreach(json_object_get(ans, "items"), i, t)
    {
        printf("%-*s %10lld %8lld %8lld %10s %12s\n", wn, str(t, "name"), num(t, "cpu_weight"),
               num(t, "pods_running"), num(t, "pods_pending"),
               gpus(num(t, "gpu_milli_allocated"), a), gpus(num(t, "gpu_milli_pending"), p));
    }
}

/* A queue's capability into @buf (@size bytes), each resource it names as a user wrote it: GPUs
 * with two decimals, CPU in cores or millicores, memory in Mi, pods; "-" when it names none. */
static const char *capability(const json_t *c, char *buf, size_t size)
{
    static const char *const keys[] = {"nvidia.com/gpu", "cpu", "memory", "pods"};
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < 4 && len < size; k++) {
        const json_t *v = json_object_get(c, keys[k]);
        long long x = (long long)json_integer_value(v);
        char one[24];
        if (!v)
            continue;
        if (k == 0)
            gpus(x, one);
        else if (k == 1)
            snprintf(one, sizeof(one), x % 1000 ? "%lldm" : "%lld", x % 1000 ? x : x / 1000);
        else
            snprintf(one, sizeof(one), k == 2 ? "%lldMi" : "%lld", x);
        len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", len ? "," : "",
                                k == 0 ? "gpu" : keys[k], one);
    }
    return len ? buf : "-";
}

static void queues(const json_t *ans)
{
    char d[24], a[24], p[24], cap[128], share[24];
    size_t i;
    const json_t *q;
    int wn = names_width(json_object_get(ans, "items"), 24);
    printf("%-*s %6s %10s %10s %10s %7s %8s %8s %s\n", wn, "QUEUE", "WEIGHT", "DESERVED",
           "ALLOCATED", "PENDING", "SHARE", "RUNNING", "WAITING", "CAPABILITY");
    json_array_foreach(json_object_get(ans, "items"), i, q)
    {
        const json_t *c = json_object_get(q, "capability");
        const json_t *s = json_object_get(q, "share_milli");
        snprintf(share, sizeof(share), json_is_integer(s) ? "%lld%%" : "-",
                 (long long)json_integer_value(s) / 10);
        printf("%-*s %6lld %10s %10s %10s %7s %8lld %8lld %s\n", wn, str(q, "name"),
               num(q, "weight"), gpus(num(q, "deserved_milli"), d),
               gpus(num(q, "allocated_milli"), a), gpus(num(q, "pending_milli"), p), share,
               num(q, "pods_running"), num(q, "pods_pending"), capability(c, cap, sizeof(cap)));
    }
}

static void bills(const json_t *ans)
{
    const char *given = json_string_value(json_object_get(ans, "currency"));
    char rate[GS_MONEY_HUMAN_MAX], cost[GS_MONEY_HUMAN_MAX], currency[32];
    if (given)
        gs_text_escape(currency, sizeof(currency), given);
    const char *cur = given ? currency : NULL;
    size_t i;
    const json_t *l;
    /* columns as wide as their widest entry, as kubectl's are: a resource names a model, a mode
     * and a MIG profile ("H100-NVL-94GB mig 1g.12gb+me") */
    int wt = 24, wr = 20, wm = 16;
    json_array_foreach(json_object_get(ans, "lines"), i, l)
    {
        wt = width(str(l, "tenant"), wt);
        wr = width(str(l, "resource"), wr);
        wm = width(str(l, "model"), wm);
    }
    json_array_foreach(json_object_get(ans, "tenants"), i, l) wt = width(str(l, "tenant"), wt);
    printf("%-*s %-*s %-10s %10s %-12s %-*s %12s %14s\n", wt, "TENANT", wr, "RESOURCE",
           GS__BILL_HEAD_DAY, "QUANTITY", "UNIT", wm, "MODEL", GS__BILL_HEAD_RATE, "COST");
    json_array_foreach(json_object_get(ans, "lines"), i, l)
    {
        printf("%-*s %-*s %-10s %10lld %-12s %-*s %12s %14s\n", wt, str(l, "tenant"), wr,
               str(l, "resource"), str(l, "date"), num(l, "quantity"), str(l, "unit"), wm,
               str(l, "model"), gs_money_format_rate(num(l, "rate_per_hour_udollars"), cur, rate),
               gs_money_format_human(num(l, "cost_udollars"), cur, cost));
    }
    printf("\n%-*s %14s\n", wt, "TENANT", "TOTAL");
    json_array_foreach(json_object_get(ans, "tenants"), i, l)
    {
        printf("%-*s %14s\n", wt, str(l, "tenant"),
               gs_money_format_human(num(l, "total_udollars"), cur, cost));
    }
    printf("%-*s %14s\n", wt, "all", gs_money_format_human(num(ans, "total_udollars"), cur, cost));
    size_t unpriced = json_array_size(json_object_get(ans, "unpriced"));
    if (unpriced)
        printf("(%zu runs not priced: the rate card has no rate for them; -o json names them)\n",
               unpriced);
}

int gs__client_table(const char *cmd, const json_t *ans)
{
    if (!strcmp(cmd, "status"))
        status(ans);
    else if (!strcmp(cmd, "tenants"))
        tenants(ans);
    else if (!strcmp(cmd, "queues"))
        queues(ans);
    else if (!strcmp(cmd, "bills"))
        bills(ans);
    else
        return -1;
    return 0;
}
