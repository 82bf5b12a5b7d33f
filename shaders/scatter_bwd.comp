#version 460
// The gradient of scatter_reduce for Vulkan: a thin wrapper over
// clkernels/common/scatter_bwd_body.h (shared with clkernels/scatter_bwd.cl),
// whose entry points and knobs are declared in host/kernels
// (clkernels/common/gen/scatter_bwd.h). Variant define: DT (3 float32,
// 4 float64).
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
#define ATOM_INC_U32(p, i) atomicAdd(Mem32((p) + uint64_t(i) * 4ul).x, 1u)

#include "gen/scatter_bwd.h"
#include "scatter_bwd_body.h"

SCATTER_BWD_ENTRIES
