/* Radix sort passes for OpenCL C: a thin wrapper over common/radix_body.h
 * (shared with shaders/radix.comp), whose entry points and knobs are
 * declared in host/kernels (common/gen/radix.h). Variant define: KB (key
 * bits, 32 or 64). */
#include "portable.h"
#include "memory.h"
#if KB == 64
#define KEY ulong
#define LDK(p, i) LD64(p, i)
#define STK(p, i, v) ST64(p, i, v)
#define KEY_SIGN 0x8000000000000000UL
#define KEY_INF 0x7ff0000000000000UL
#define KEY_NAN 0x7ff8000000000000UL
#else
#define KEY uint
#define LDK(p, i) LD32(p, i)
#define STK(p, i, v) ST32(p, i, v)
#define KEY_SIGN 0x80000000U
#define KEY_INF 0x7f800000U
#define KEY_NAN 0x7fc00000U
#endif

#include "gen/radix.h"
#include "radix_tile.h"
#define SCRATCH_T uint
#define SCRATCH_LEN RADIX_SCRATCH_LEN
/* adds v to scratch word i (the tiled count pass) */
#define RADIX_SH_ADD(i, v) atomic_add(&sh[(i)], (v))
/* the sweep's scratch parameter of its helpers, and the global words */
#define RADIX_SCRATCH_PARAM , __local SCRATCH_T* sh
#define RADIX_SCRATCH_ARG , sh
#define RADIX_GADD32(p, i, v) atomic_add(((volatile __global uint *)(p)) + (i), (v))
#define RADIX_WLD(w, i) (((volatile __global ulong *)(w))[(i)])
#define RADIX_WST(w, i, v) (((volatile __global ulong *)(w))[(i)] = (v))
#include "radix_body.h"

RADIX_ENTRIES
