#version 460
// Prefix sums for Vulkan: a thin wrapper over clkernels/common/scan_body.h
// (shared with clkernels/scan.cl), whose entry points and knobs are
// declared in host/kernels (clkernels/common/gen/scan.h). Variant defines:
// DT (1 32-bit integers, 2 64-bit integers, 3 float32, 4 float64) and SG
// (1: the subgroup path, for devices with subgroup arithmetic; 64-bit
// integers also need shaderSubgroupExtendedTypes).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#if SG == 1
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#if DT == 2
#extension GL_EXT_shader_subgroup_extended_types_int64 : require
#endif
#endif
#include "portable.h"

#if DT == 1
#define T uint
#define BYTES 4
#elif DT == 2
#define T uint64_t
#define BYTES 8
#elif DT == 3
#define T float
#define BYTES 4
#else
#define T double
#define BYTES 8
#endif
layout(buffer_reference, std430, buffer_reference_align = BYTES) buffer TRef { T x; };
#define ADD(a, b) ((a) + (b))
#define LDT(p, i) (TRef((p) + uint64_t(i) * uint64_t(BYTES)).x)
#define STT(p, i, v) (TRef((p) + uint64_t(i) * uint64_t(BYTES)).x = (v))
#define SCRATCH_T T
#define SH(i) sh[int(i)] /* 32-ok: a scratch slot, < the scratch length (local size x a few) */
#define SCRATCH_PARAM
#define SCRATCH_ARG

#if SG == 1
#define SCAN_SG_OK 1
#define SG_SIZE I64C(gl_SubgroupSize)
#define SG_ID I64C(gl_SubgroupID)
#define SG_LANE I64C(gl_SubgroupInvocationID)
#define SG_COUNT I64C(gl_NumSubgroups)
#define SG_ADD(v) subgroupAdd(v)
#if DT >= 3
// Floats: the exclusive scan itself. Inclusive minus v is not it in float
// (NaN or inf in v poisons the lane; x + v - v rounds), a fuzzer's find.
#define SG_EXCL(v) subgroupExclusiveAdd(v)
#else
// Integers wrap, so inclusive minus v is exact, and needs one scan.
#define SG_EXCL(v) (subgroupInclusiveAdd(v) - (v))
#endif
#if BYTES == 4
// 32-bit elements move in pairs, as one 64-bit word.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer PairRef { uint64_t x; };
#define LD_PAIR(p, u) (PairRef((p) + uint64_t(u) * 8ul).x)
#define ST_PAIR(p, u, w) (PairRef((p) + uint64_t(u) * 8ul).x = (w))
#if DT == 3
#define PAIR_LO(w) uintBitsToFloat(uint(w)) /* 32-ok: one 32-bit half of a pair word */
#define PAIR_HI(w) uintBitsToFloat(uint((w) >> 32)) /* 32-ok: one 32-bit half of a pair word */
#define PAIR_PACK(a, b) (uint64_t(floatBitsToUint(a)) | (uint64_t(floatBitsToUint(b)) << 32))
#else
#define PAIR_LO(w) uint(w) /* 32-ok: one 32-bit half of a pair word */
#define PAIR_HI(w) uint((w) >> 32) /* 32-ok: one 32-bit half of a pair word */
#define PAIR_PACK(a, b) (uint64_t(a) | (uint64_t(b) << 32))
#endif
#endif
#endif

#include "gen/scan.h"
#include "scan_wg.h"
// the work-group scratch (OpenCL entries declare theirs)
shared T sh[SCAN_SCRATCH_LEN];
// The GPUs' chained scan publishes values in tagged 64-bit words
// (scan_body.h), read anew every time.
layout(buffer_reference, std430, buffer_reference_align = 8) coherent volatile buffer ChwRef { uint64_t x; };
#define CHW_LD(w, i) (ChwRef((w) + uint64_t(i) * 8ul).x)
#define CHW_ST(w, i, v) (ChwRef((w) + uint64_t(i) * 8ul).x = (v))
#if DT == 1
#define T_PIECES 1
#define T_PIECE(v, q) (v)
#define T_JOIN(lo, hi) (lo)
#elif DT == 2
#define T_PIECES 2
#define T_PIECE(v, q) uint((q) == 0 ? (v) : ((v) >> 32)) /* 32-ok: a 32-bit piece */
#define T_JOIN(lo, hi) (uint64_t(lo) | (uint64_t(hi) << 32))
#elif DT == 3
#define T_PIECES 1
#define T_PIECE(v, q) floatBitsToUint(v)
#define T_JOIN(lo, hi) uintBitsToFloat(lo)
#else
#define T_PIECES 2
#define T_PIECE(v, q) uint((q) == 0 ? doubleBitsToUint64(v) : (doubleBitsToUint64(v) >> 32)) /* 32-ok: a 32-bit piece */
#define T_JOIN(lo, hi) uint64BitsToDouble(uint64_t(lo) | (uint64_t(hi) << 32))
#endif
#include "scan_body.h"

SCAN_ENTRIES
