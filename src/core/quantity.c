/* Writing a Kubernetes quantity (include/gpusched/quantity.h). */
#include "gpusched/quantity.h"

#include <stdio.h>

char *gs_quantity_format_milli(int64_t milli, char *buf, size_t size)
{
    static const char *const suffix[] = {"m", "", "k", "M", "G", "T", "P", "E"};
    int e = 0;
    while (milli != 0 && milli % 1000 == 0 && e < 7) {
        milli /= 1000;
        e++;
    }
    snprintf(buf, size, "%lld%s", (long long)milli, milli ? suffix[e] : "");
    return buf;
}

char *gs_quantity_format_mib(int64_t mib, char *buf, size_t size)
{
    static const char *const suffix[] = {"Mi", "Gi", "Ti", "Pi", "Ei"};
    int e = 0;
    while (mib != 0 && mib % 1024 == 0 && e < 4) {
        mib /= 1024;
        e++;
    }
    snprintf(buf, size, "%lld%s", (long long)mib, mib ? suffix[e] : "");
    return buf;
}
