/*
 * Compiled, never run: proves that every entry point in src/shim/fns.def has NVIDIA's signature.
 * Each wrapper is declared again after cuda.h has declared it (a mismatch is a conflicting-types
 * error) and assigned to the PFN_ typedef of the version fns.def claims (a wrong version or
 * parameter list is an incompatible-pointer error). Needs the CUDA toolkit's headers:
 *     cc -std=c11 -Wall -Werror -fsyntax-only -I/usr/local/cuda/include bench/gpushare/abi_check.c
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>

#define GS_PFN_p(base, ver)    PFN_##base##_v##ver
#define GS_PFN_ptsz(base, ver) PFN_##base##_v##ver##_ptsz

#define GS_FN(name, base, version, variant, params)                                                \
    CUresult CUDAAPI name params;                                                                  \
    GS_PFN_##variant(base, version) gs_check_##name = name;
#define GS_LAUNCH(name, base, version, variant, params, args)                                      \
    GS_FN(name, base, version, variant, params)
#define GS_HELPER(name, base, version, params) GS_FN(name, base, version, p, params)
#include "../../src/shim/fns.def"
