#version 460
// tril_indices / triu_indices for Vulkan: a thin wrapper over
// clkernels/common/tri_indices_body.h (shared with clkernels/tri_indices.cl),
// whose entry point and knobs are declared in host/kernels
// (clkernels/common/gen/tri_indices.h). Variant define: IDX_BITS (32 or 64).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"

// Buffers arrive as device addresses; elements are addressed with 64-bit
// arithmetic (GLSL array indices are 32-bit), so any size is reachable.
#if IDX_BITS == 64
#define OUT_T int64_t
layout(buffer_reference, std430, buffer_reference_align = 8) buffer OutElem { int64_t x; };
#else
#define OUT_T int
layout(buffer_reference, std430, buffer_reference_align = 4) buffer OutElem { int x; }; /* 32-ok: an int32 output element; the host checks the rows and columns <= MaxInt32 (accel/tri.go) */
#endif
#define STORE(p, i, v_) (OutElem((p) + uint64_t(i) * uint64_t(IDX_BITS >> 3)).x = (v_))

#include "gen/tri_indices.h"
#include "tri_indices_body.h"

TRI_INDICES_ENTRIES
