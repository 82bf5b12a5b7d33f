/* Radix sort passes for OpenCL C: a thin wrapper over common/radix_body.h
 * (shared with shaders/radix.comp), whose entry points and knobs are
 * declared in host/kernels (common/gen/radix.h). Variant defines: KB (key
 * bits, 32 or 64); SG is Vulkan's (its subgroup builds; here the ranking
 * by subgroup ballots comes with NVIDIA's warp votes, NV_TRICKS). */
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
#if NV_TRICKS
/* the ranking by subgroup ballots (radix_body.h's RADIX_RANK_TILE_WL) on
 * NVIDIA's warps (device_tricks.h) */
#define RADIX_SG_OK 1
#define RADIX_SG_ID CAST(int, LOCAL_ID() >> NV_WARP_LOG) /* 32-ok: the lane's warp */
#define RADIX_SG_LANE CAST(int, NV_LANE()) /* 32-ok: a lane of the warp */
#define RADIX_SG_SIZE (1 << NV_WARP_LOG)
#define RADIX_SG_COUNT (RADIX_LS >> NV_WARP_LOG)
#define RADIX_SG_SYNC() NV_WARP_SYNC()
#define RADIX_SG_MASK uint /* 32-ok: a bit per lane of the warp */
#define RADIX_SG_BALLOT(p) NV_BALLOT(p)
#define RADIX_SG_BELOW NV_LANES_BELOW()
#define RADIX_SG_BITS(m) popcount(m)
#if NV_TRICKS == 2
/* the ranking's loops over a lane's keys stay rolled where the votes are
 * emulated on a CPU driver: PoCL 3.1 crashed (a segmentation fault) on
 * the emulated ranking with them unrolled */
#define RADIX_WL_UNROLL
#endif
#endif
#include "radix_body.h"

RADIX_ENTRIES
