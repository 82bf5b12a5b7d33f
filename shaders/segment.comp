#version 460
// In-order segmented reductions for Vulkan: a thin wrapper over
// clkernels/common/segment_body.h (shared with clkernels/segment.cl), whose
// entry points and knobs are declared in host/kernels
// (clkernels/common/gen/segment.h). Variant define: DT (1 int32, 2 int64,
// 3 float32, 4 float64).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#if defined(STRICT) && STRICT >= 1
#extension GL_EXT_spirv_intrinsics : require
#endif
#include "portable.h"
#include "dtypes.h"
#include "memory.h"
layout(buffer_reference, std430, buffer_reference_align = BYTES) buffer VRef { T x; };
#define LDV(p, i) (VRef((p) + uint64_t(i) * uint64_t(BYTES)).x)
#define STV(p, i, v) (VRef((p) + uint64_t(i) * uint64_t(BYTES)).x = (v))
#define ATOM_MIN_U32(p, i, v) atomicMin(Mem32((p) + uint64_t(i) * 4ul).x, (v))

#include "gen/segment.h"
#include "segment_body.h"

SEGMENT_ENTRIES
