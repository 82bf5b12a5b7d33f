#version 460
// scatter / scatter_reduce / put_along_axis / take_along_axis for Vulkan: a
// thin wrapper over clkernels/common/scatter_body.h (shared with
// clkernels/scatter.cl), whose entry points and knobs are declared in
// host/kernels (clkernels/common/gen/scatter.h).
// Variant defines: DT (1 int32, 2 int64, 3 float32, 4 float64); FADD=1 uses
// VK_EXT_shader_atomic_float's native add for float sums and means (integer
// sums and means always add natively).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#if defined(STRICT) && STRICT >= 1
#extension GL_EXT_spirv_intrinsics : require
#endif
#if DT == 2 || DT == 4
#extension GL_EXT_shader_atomic_int64 : require
#endif
#if defined(FADD) && FADD == 1
#extension GL_EXT_shader_atomic_float : require
#endif
#include "portable.h"
#include "dtypes.h"
#include "memory.h"

layout(buffer_reference, std430, buffer_reference_align = BYTES) buffer VRef { T x; };
layout(buffer_reference, std430, buffer_reference_align = BYTES) buffer BRef { UBITS x; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer IRef { int64_t x; };
#define LOADV(p, i) (VRef((p) + uint64_t(i) * uint64_t(BYTES)).x)
#define STOREV(p, i, v) (VRef((p) + uint64_t(i) * uint64_t(BYTES)).x = (v))
#define LOADI(p, i) (IRef((p) + uint64_t(i) * 8ul).x)
#define LOADU(p, i) LD32(p, i)
#define STOREU(p, i, v) ST32(p, i, v)
#define CAS_BITS(p, i, cmp, val) atomicCompSwap(BRef((p) + uint64_t(i) * uint64_t(BYTES)).x, (cmp), (val))
#define CAS_U32(p, i, cmp, val) atomicCompSwap(Mem32((p) + uint64_t(i) * 4ul).x, (cmp), (val))
#define ATOM_MIN_U32(p, i, v) atomicMin(Mem32((p) + uint64_t(i) * 4ul).x, (v))
#define ATOM_ADD_U32(p, i, v) atomicAdd(Mem32((p) + uint64_t(i) * 4ul).x, (v))
#define ATOM_OR_U32(p, i, v) atomicOr(Mem32((p) + uint64_t(i) * 4ul).x, (v))
// integer sums add natively, in the unsigned type (wrapping: the bits
// the compare-and-swap loop's sum gives)
#if DT == 1
#define ATOM_ADD_T(p, i, v) atomicAdd(BRef((p) + uint64_t(i) * 4ul).x, uint(v)) /* 32-ok: an int32 element's bits */
#elif DT == 2
#define ATOM_ADD_T(p, i, v) atomicAdd(BRef((p) + uint64_t(i) * 8ul).x, uint64_t(v))
#elif defined(FADD) && FADD == 1
#define ATOM_ADD_T(p, i, v) atomicAdd(VRef((p) + uint64_t(i) * uint64_t(BYTES)).x, (v))
#endif

#include "gen/scatter.h"
// the GPU few pass's work-group scratch: a word per invocation and target,
// and with SC_FEWG_SH as many again for the hit counts, for at most 128
// invocations (accel's planFewGroups), whatever the pipeline's own size
// (every entry may carry it: 8 or 16 KiB, twice that with SC_FEWG_SH,
// which the fewg pipelines set and the partitions' folds where the device
// has the local memory, accel's foldWide); the partitions' folds
// (scatter_pfold, scatter_sfold) keep half as many position and value
// words there
#define SCRATCH_T UBITS
#define SCRATCH_LEN (128 * SC_FEW_MAX * (SC_FEWG_SH != 0 ? 2 : 1))
shared SCRATCH_T sh[SCRATCH_LEN];
#define SH(i) sh[int(i)] /* 32-ok: a scratch slot, < 128 x SC_FEW_MAX */
#define SCRATCH_PARAM
#define SCRATCH_ARG

#include "scatter_body.h"

SCATTER_ENTRIES
