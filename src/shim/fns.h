/*
 * libgpushare — an index and a function-pointer type for every entry point of fns.def, for the
 * library and for the test tree's fake driver and test application (one list, three users).
 */
#ifndef GPUSHARE_FNS_H
#define GPUSHARE_FNS_H

#include "cuda_abi.h"

enum {
#define GS_FN(name, base, version, variant, params)           GS_I_##name,
#define GS_LAUNCH(name, base, version, variant, params, args) GS_I_##name,
#define GS_HELPER(name, base, version, params)                GS_I_##name,
#include "fns.def"
    GS_NFN
};

#define GS_FN(name, base, version, variant, params) typedef CUresult(*gs_pfn_##name) params;
#define GS_LAUNCH(name, base, version, variant, params, args)                                      \
    GS_FN(name, base, version, variant, params)
#define GS_HELPER(name, base, version, params) GS_FN(name, base, version, p, params)
#include "fns.def"

typedef void (*gs_fnptr)(void);

#endif
