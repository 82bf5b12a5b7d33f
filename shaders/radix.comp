#version 460
// Radix sort passes for Vulkan: a thin wrapper over
// clkernels/common/radix_body.h (shared with clkernels/radix.cl), whose
// entry points and knobs are declared in host/kernels
// (clkernels/common/gen/radix.h). Variant defines: KB (key bits, 32 or
// 64) and SG (1: the tiled passes may rank by subgroup ballots, knob
// RADIX_SGS; for devices with subgroup ballots).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#if SG == 1
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#endif
#include "portable.h"

#include "memory.h"

#if KB == 64
#define KEY uint64_t
#define LDK(p, i) LD64(p, i)
#define STK(p, i, v) ST64(p, i, v)
#define KEY_SIGN 0x8000000000000000ul
#define KEY_INF 0x7ff0000000000000ul
#define KEY_NAN 0x7ff8000000000000ul
#else
#define KEY uint
#define LDK(p, i) LD32(p, i)
#define STK(p, i, v) ST32(p, i, v)
#define KEY_SIGN 0x80000000u
#define KEY_INF 0x7f800000u
#define KEY_NAN 0x7fc00000u
#endif

#include "gen/radix.h"
#include "radix_tile.h"
// the scratch's layout as specialization constants computed once each,
// where the macros would spell the whole expression at every use
const int radix_seg_at = RADIX_SEG_AT; /* 32-ok: a scratch word */
#undef RADIX_SEG_AT
#define RADIX_SEG_AT radix_seg_at
const int radix_keys_at = RADIX_KEYS_AT; /* 32-ok: a scratch word */
#undef RADIX_KEYS_AT
#define RADIX_KEYS_AT radix_keys_at
const int radix_ents_at = RADIX_ENTS_AT; /* 32-ok: a scratch word */
#undef RADIX_ENTS_AT
#define RADIX_ENTS_AT radix_ents_at
// the tiled passes' work-group scratch (one word where they are off)
shared uint sh[RADIX_SCRATCH_LEN]; /* 32-ok: scratch words: packed digit counts (< 2^16 each), a tile's keys and entry halves */
// adds v to scratch word i (the tiled count pass)
#define RADIX_SH_ADD(i, v) atomicAdd(sh[(i)], (v))
// the sweep's scratch parameter of its helpers (none: sh is shared), and
// the global words: status words read anew every time, 32-bit adds
#define RADIX_SCRATCH_PARAM
#define RADIX_SCRATCH_ARG
layout(buffer_reference, std430, buffer_reference_align = 8) coherent volatile buffer RadixWRef { uint64_t x; };
#define RADIX_WLD(w, i) (RadixWRef((w) + uint64_t(i) * 8ul).x)
#define RADIX_WST(w, i, v) (RadixWRef((w) + uint64_t(i) * 8ul).x = (v))
#define RADIX_GADD32(p, i, v) atomicAdd(Mem32((p) + uint64_t(i) * 4ul).x, (v))
#if SG == 1
// the ranking by subgroup ballots (radix_body.h's RADIX_RANK_TILE_WL)
#define RADIX_SG_OK 1
#define RADIX_SG_ID int(gl_SubgroupID) /* 32-ok: a subgroup of the group */
#define RADIX_SG_LANE int(gl_SubgroupInvocationID) /* 32-ok: a lane of the subgroup */
#define RADIX_SG_SIZE int(gl_SubgroupSize) /* 32-ok: the subgroup's lanes */
#define RADIX_SG_COUNT int(gl_NumSubgroups) /* 32-ok: the group's subgroups */
#define RADIX_SG_SYNC() subgroupBarrier()
#define RADIX_SG_MASK uvec4
#define RADIX_SG_BALLOT(p) subgroupBallot(p)
#define RADIX_SG_BELOW gl_SubgroupLtMask
#define RADIX_SG_BITS(m) subgroupBallotBitCount(m)
#endif
#include "radix_body.h"

RADIX_ENTRIES
