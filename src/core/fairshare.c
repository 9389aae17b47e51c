/* Deserved shares by water-filling (Volcano proportion) and Jain's index. */
#include "gpusched/fairshare.h"

void gs_fairshare_waterfill(int64_t capacity, const int32_t *weight, const int64_t *limit, size_t n,
                            int64_t *deserved)
{
    for (size_t i = 0; i < n; i++)
        deserved[i] = 0;
    int64_t left = capacity > 0 ? capacity : 0;
    for (;;) {
        int64_t wsum = 0;
        for (size_t i = 0; i < n; i++)
            if (deserved[i] < limit[i])
                wsum += weight[i] > 0 ? weight[i] : 1;
        if (wsum == 0 || left == 0)
            return;
        /* Cap first every queue whose proportional share would pass its limit. */
        int capped = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t w = weight[i] > 0 ? weight[i] : 1;
            if (deserved[i] < limit[i] && deserved[i] + left * w / wsum >= limit[i]) {
                left -= limit[i] - deserved[i];
                deserved[i] = limit[i];
                capped = 1;
            }
        }
        if (capped)
            continue;
        int64_t given = 0;
        for (size_t i = 0; i < n; i++)
            if (deserved[i] < limit[i]) {
                int64_t s = left * (weight[i] > 0 ? weight[i] : 1) / wsum;
                deserved[i] += s;
                given += s;
            }
        left -= given;
        for (size_t i = 0; i < n && left > 0; i++)
            if (deserved[i] < limit[i]) {
                deserved[i]++;
                left--;
            }
        return;
    }
}

int32_t gs_fairshare_jain(const int64_t *x, size_t n)
{
    /* long double keeps the squares of large sums exact enough for a 3-digit index. */
    long double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) {
        sum += (long double)x[i];
        sq += (long double)x[i] * (long double)x[i];
    }
    if (n == 0 || sq == 0)
        return 1000;
    return (int32_t)(sum * sum * 1000 / ((long double)n * sq) + 0.5L);
}
