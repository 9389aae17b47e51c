/*
 * The MIG geometry of each model, compiled in. The same rows, in the same order, are
 * data/mig/mig_profiles.csv, and tests/unit/test_mig.c checks that the two agree field by field;
 * change both together. Where each figure comes from is in data/mig/README.md; in short:
 *   id, Instances Total, SM, GiB, OFA  <- `nvidia-smi mig -lgip` of the model
 *   starts and size                    <- `nvidia-smi mig -lgipp` of the model
 *   names, instance counts, fractions  <- NVIDIA MIG User Guide, "Supported MIG Profiles"
 * memory_mib is the -lgip GiB figure times 1024, exact: every size is a multiple of 64 MiB, and
 * nvidia-smi's per-instance MiB figures in tests/data/mig/ agree (README, "Memory").
 */
#include "gpusched/mig.h"

/* Start-slot sets as -lgipp prints them, bit s = slot s. */
#define AT_0      0x01u /* {0} */
#define AT_0_4    0x11u /* {0,4} */
#define AT_0_2_4  0x15u /* {0,2,4} */
#define AT_EVEN   0x55u /* {0,2,4,6} */
#define AT_0_TO_6 0x7fu /* {0,1,2,3,4,5,6} */
#define AT_0_2    0x05u /* {0,2}, A30 */
#define AT_0_TO_3 0x0fu /* {0,1,2,3}, A30 */

/*
 * The 8-slice cards (GA100, GH100) share one geometry: the same seven profile IDs, slices, starts,
 * instance counts and OFA holders, in the same -lgip order; only names, SMs and memory differ.
 * Arguments: the seven names (1g, 1g+me, 1g with two memory slices, 2g, 3g, 4g, 7g), the SMs of
 * the 1g, 1g-two-slice, 2g, 3g, 4g and 7g profiles, then the MiB of one, two, four and eight
 * memory slices. A profile row: name, ID, compute slices, memory slices, starts, max instances,
 * OFA, SMs, MiB.
 */
/* clang-format off */
#define EIGHT_SLICES(n1, n1me, n1x2, n2, n3, n4, n7, sm1, sm1x2, sm2, sm3, sm4, sm7,              \
                     mib1, mib2, mib4, mib8)                                                       \
    {                                                                                              \
        {n1,   19, 1, 1, AT_0_TO_6, 7, 0, sm1,   mib1},                                            \
        {n1me, 20, 1, 1, AT_0_TO_6, 1, 1, sm1,   mib1},                                            \
        {n1x2, 15, 1, 2, AT_EVEN,   4, 0, sm1x2, mib2},                                            \
        {n2,   14, 2, 2, AT_0_2_4,  3, 0, sm2,   mib2},                                            \
        {n3,    9, 3, 4, AT_0_4,    2, 0, sm3,   mib4},                                            \
        {n4,    5, 4, 4, AT_0,      1, 0, sm4,   mib4},                                            \
        {n7,    0, 7, 8, AT_0,      1, 1, sm7,   mib8},                                            \
    }
/* clang-format on */

/* Each model: name, memory slices, compute slices, profile count, profiles, sources. */
static const struct gs_mig_model models[] = {
    {"A100-SXM4-40GB", 8, 7, 7,
     EIGHT_SLICES("1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb", 14,
                  14, 28, 42, 56, 98, 4864, 9984, 20096, 40448),
     "MIG User Guide Table 6 and its A100-40GB -lgipp example; -lgip of A100 40GB"},
    {"A100-SXM4-80GB", 8, 7, 7,
     EIGHT_SLICES("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb",
                  14, 14, 28, 42, 56, 98, 9728, 19968, 40192, 80896),
     "MIG User Guide Table 6 (80GB names), A100 -lgipp; -lgip of A100 80GB, driver 515"},
    {"H100-SXM5-80GB", 8, 7, 7,
     EIGHT_SLICES("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb",
                  16, 26, 32, 60, 64, 132, 9984, 20096, 40448, 81152),
     "MIG User Guide Table 7; -lgip and -lgipp of H100 80GB HBM3"},
    {"H100-NVL-94GB", 8, 7, 7,
     EIGHT_SLICES("1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb",
                  16, 26, 32, 60, 64, 132, 11008, 22144, 47488, 95360),
     "-lgip and -lgipp of H100 NVL 94GB, driver 560.35.03"},
    {"H200", 8, 7, 7,
     EIGHT_SLICES("1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb",
                  16, 26, 32, 60, 64, 132, 16384, 33280, 71424, 143360),
     "MIG User Guide Table 8; -lgip and -lgipp of an H200, driver 580.159.04"},
    {"A30",
     4,
     4,
     5,
     {
         {"1g.6gb", 14, 1, 1, AT_0_TO_3, 4, 0, 14, 5952},
         {"1g.6gb+me", 21, 1, 1, AT_0_TO_3, 1, 1, 14, 5952},
         {"2g.12gb", 5, 2, 2, AT_0_2, 2, 0, 28, 11968},
         {"2g.12gb+me", 6, 2, 2, AT_0_2, 1, 1, 28, 11968},
         {"4g.24gb", 0, 4, 4, AT_0, 1, 1, 56, 24000},
     },
     "MIG User Guide A30 table; -lgip and -lgipp of A30, driver 535.183.01"},
};

int gs_mig_model_count(void)
{
    return (int)(sizeof(models) / sizeof(models[0]));
}

const struct gs_mig_model *gs_mig_model_at(int idx)
{
    if (idx < 0 || idx >= gs_mig_model_count())
        return NULL;
    return &models[idx];
}
