/*
 * gpusched tenants, queues and bills: gpuschedd's answers as tables, as `list` prints pods.
 * GPU amounts come in milli-GPUs and are shown in GPUs to the hundredth; money comes in exact
 * micro-dollars and is shown as people read it (gs_money_format_human(): cents, thousands
 * separators). `-o json` prints the answer as it came instead.
 */
#include "cli.h"

#include "gpusched/billing.h"

#include <stdio.h>
#include <string.h>

static long long num(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "-";
}

/* Milli-GPUs @m as GPUs to the hundredth ("8.40") into @buf (24 bytes). */
static const char *gpus(long long m, char *buf)
{
    snprintf(buf, 24, "%s%lld.%02lld", m < 0 ? "-" : "", (m < 0 ? -m : m) / 1000,
             (m < 0 ? -m : m) % 1000 / 10);
    return buf;
}

static void tenants(const json_t *ans)
{
    char a[24], p[24];
    size_t i;
    const json_t *t;
    printf("%-24s %10s %8s %8s %10s %12s\n", "TENANT", "CPU-WEIGHT", "RUNNING", "PENDING", "GPUS",
           "GPUS-PENDING");
    json_array_foreach(json_object_get(ans, "items"), i, t)
    {
        printf("%-24s %10lld %8lld %8lld %10s %12s\n", str(t, "name"), num(t, "cpu_weight"),
               num(t, "pods_running"), num(t, "pods_pending"),
               gpus(num(t, "gpu_milli_allocated"), a), gpus(num(t, "gpu_milli_pending"), p));
    }
}

static void queues(const json_t *ans)
{
    char d[24], a[24], p[24], cap[24], share[24];
    size_t i;
    const json_t *q;
    printf("%-24s %6s %10s %10s %10s %7s %8s %8s %10s\n", "QUEUE", "WEIGHT", "DESERVED",
           "ALLOCATED", "PENDING", "SHARE", "RUNNING", "WAITING", "CAPABILITY");
    json_array_foreach(json_object_get(ans, "items"), i, q)
    {
        const json_t *c = json_object_get(json_object_get(q, "capability"), "nvidia.com/gpu");
        const json_t *s = json_object_get(q, "share_milli");
        snprintf(share, sizeof(share), json_is_integer(s) ? "%lld%%" : "-",
                 (long long)json_integer_value(s) / 10);
        printf("%-24s %6lld %10s %10s %10s %7s %8lld %8lld %10s\n", str(q, "name"),
               num(q, "weight"), gpus(num(q, "deserved_milli"), d),
               gpus(num(q, "allocated_milli"), a), gpus(num(q, "pending_milli"), p), share,
               num(q, "pods_running"), num(q, "pods_pending"),
               c ? gpus((long long)json_integer_value(c), cap) : "-");
    }
}

static void bills(const json_t *ans)
{
    const char *cur = json_string_value(json_object_get(ans, "currency"));
    char rate[GS_MONEY_HUMAN_MAX], cost[GS_MONEY_HUMAN_MAX];
    size_t i;
    const json_t *l;
    printf("%-24s %-20s %-10s %10s %-12s %-16s %12s %14s\n", "TENANT", "RESOURCE", "DATE",
           "QUANTITY", "UNIT", "MODEL", "RATE/HOUR", "COST");
    json_array_foreach(json_object_get(ans, "lines"), i, l)
    {
        printf("%-24s %-20s %-10s %10lld %-12s %-16s %12s %14s\n", str(l, "tenant"),
               str(l, "resource"), str(l, "date"), num(l, "quantity"), str(l, "unit"),
               str(l, "model"), gs_money_format_human(num(l, "rate_per_hour_udollars"), cur, rate),
               gs_money_format_human(num(l, "cost_udollars"), cur, cost));
    }
    printf("\n%-24s %14s\n", "TENANT", "TOTAL");
    json_array_foreach(json_object_get(ans, "tenants"), i, l)
    {
        printf("%-24s %14s\n", str(l, "tenant"),
               gs_money_format_human(num(l, "total_udollars"), cur, cost));
    }
    printf("%-24s %14s\n", "all", gs_money_format_human(num(ans, "total_udollars"), cur, cost));
    size_t unpriced = json_array_size(json_object_get(ans, "unpriced"));
    if (unpriced)
        printf("(%zu runs not priced: the rate card has no rate for them; -o json names them)\n",
               unpriced);
}

int gs__client_table(const char *cmd, const json_t *ans)
{
    if (!strcmp(cmd, "tenants"))
        tenants(ans);
    else if (!strcmp(cmd, "queues"))
        queues(ans);
    else if (!strcmp(cmd, "bills"))
        bills(ans);
    else
        return -1;
    return 0;
}
