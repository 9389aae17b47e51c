#include "gpusched/catalog.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/*
 * Memory: total framebuffer as `nvidia-smi` prints it. SMs: NVIDIA product briefs / deviceQuery.
 * The order is part of the ABI of a build only (indexes are not written to files).
 */
static const struct gs_gpu_model models[] = {
    {"P100", "Tesla-P100|P100-PCIE-16GB", 16280, 56, GS_FORM_PCIE, "Tesla P100 PCIe 16 GB", 0},
    {"T4", "Tesla-T4", 15360, 40, GS_FORM_PCIE, "Tesla T4 16 GB", 0},
    {"V100M16", "V100-SXM2-16GB", 16160, 80, GS_FORM_SXM, "Tesla V100 SXM2 16 GB", 1},
    {"V100M32", "V100-SXM2-32GB", 32510, 80, GS_FORM_SXM, "Tesla V100 SXM2 32 GB", 1},
    {"A10", "NVIDIA-A10", 23028, 72, GS_FORM_PCIE, "A10 24 GB PCIe", 0},
    /* G1-G3: undisclosed codes in the Alibaba trace. Assumed from the host shapes they come in:
     * G1 a 16 GB PCIe inference card (T4-class), G2 an 8-GPU 32 GB SXM board (V100-class, the
     * trace's most common training node), G3 an 8-GPU 80 GB SXM board (A100-class, 128-core
     * hosts). The trace requests GPU share in milli-GPU, never memory, so these figures do not
     * change any trace result. */
    {"G1", "", 16384, 40, GS_FORM_PCIE, "undisclosed; assumed 16 GB PCIe (T4-class)", 0},
    {"G2", "", 32768, 80, GS_FORM_SXM, "undisclosed; assumed 32 GB SXM (V100-class)", 1},
    {"G3", "", 81920, 108, GS_FORM_SXM, "undisclosed; assumed 80 GB SXM (A100-class)", 1},
    {"A30", "A30-24GB|NVIDIA-A30", 24576, 56, GS_FORM_PCIE, "A30 24 GB PCIe", 1},
    {"A100-SXM4-40GB", "A100-40GB|A100-SXM4-40G", 40960, 108, GS_FORM_SXM, "A100 SXM4 40 GB", 1},
    {"A100-SXM4-80GB", "A100-80GB|A100-SXM4-80G", 81920, 108, GS_FORM_SXM, "A100 SXM4 80 GB", 1},
    {"H100-SXM5-80GB", "H100-80GB|H100|H100-80GB-HBM3", 81559, 132, GS_FORM_SXM,
     "H100 SXM5 80 GB HBM3", 1},
    {"H100-NVL-94GB", "H100-NVL", 95830, 132, GS_FORM_PCIE, "H100 NVL 94 GB (PCIe, NVLink bridge)",
     1},
    {"H200", "H200-141GB|H200-SXM-141GB", 143771, 132, GS_FORM_SXM, "H200 SXM 141 GB HBM3e", 1},
    {"L40S", "NVIDIA-L40S", 46068, 142, GS_FORM_PCIE, "L40S 48 GB PCIe", 0},
};

_Static_assert(sizeof(models) / sizeof(models[0]) <= GS_MODEL_MAX, "catalog exceeds mask width");

int gs_catalog_count(void)
{
    return (int)(sizeof(models) / sizeof(models[0]));
}

const struct gs_gpu_model *gs_catalog_at(int idx)
{
    if (idx < 0 || idx >= gs_catalog_count())
        return NULL;
    return &models[idx];
}

const char *gs_catalog_names(char *buf, size_t size)
{
    size_t off = 0;
    if (size)
        buf[0] = '\0';
    for (int i = 0; i < gs_catalog_count() && off < size; i++)
        off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? ", " : "", models[i].name);
    return buf;
}

static int name_eq(const char *a, const char *b, size_t blen)
{
    return strlen(a) == blen && strncasecmp(a, b, blen) == 0;
}

static int alias_match(const char *aliases, const char *name, size_t len)
{
    const char *p = aliases;
    while (*p) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncasecmp(p, name, len) == 0)
            return 1;
        if (!bar)
            break;
        p = bar + 1;
    }
    return 0;
}

int gs_catalog_find(const char *name, int len)
{
    size_t n = len < 0 ? strlen(name) : (size_t)len;
    if (n == 0)
        return -ENOENT;
    for (int i = 0; i < gs_catalog_count(); i++)
        if (name_eq(models[i].name, name, n) || alias_match(models[i].aliases, name, n))
            return i;
    return -ENOENT;
}

int gs_catalog_find_product(const char *product)
{
    static const char *const vendor[] = {"NVIDIA-", "Tesla-"};
    char buf[128];
    size_t n = strlen(product);
    if (n >= sizeof(buf))
        return -ENOENT;
    for (size_t i = 0; i <= n; i++)
        buf[i] = product[i] == ' ' ? '-' : product[i];
    int m = gs_catalog_find(buf, -1);
    const char *s = buf;
    for (size_t i = 0; m < 0 && i < sizeof(vendor) / sizeof(vendor[0]); i++)
        if (!strncasecmp(s, vendor[i], strlen(vendor[i])))
            s += strlen(vendor[i]);
    n = strlen(s);
    if (m < 0)
        m = gs_catalog_find(s, -1);
    if (m < 0 && n > 7 && !strcasecmp(s + n - 7, "-SHARED"))
        m = gs_catalog_find(s, (int)n - 7);
    return m;
}

int gs_catalog_product_mig(const char *product, char *profile, size_t size)
{
    char buf[128];
    const char *mig = NULL;
    for (const char *c = product; (c = strstr(c, "-MIG-")) != NULL; c++)
        mig = c;
    if (!mig || (size_t)(mig - product) >= sizeof(buf) || !mig[5])
        return -ENOENT;
    memcpy(buf, product, (size_t)(mig - product));
    buf[mig - product] = '\0';
    const char *prof = mig + 5;
    size_t n = strlen(prof);
    if (n > 7 && !strcasecmp(prof + n - 7, "-SHARED"))
        n -= 7;
    int m = gs_catalog_find_product(buf);
    if (m >= 0 && size)
        snprintf(profile, size, "%.*s", (int)n, prof);
    return m;
}
