#version 460
// diagonal_scatter (and its backward) for Vulkan: a thin wrapper over
// clkernels/common/diag_body.h (shared with clkernels/diag.cl), whose entry
// points and knobs are declared in host/kernels
// (clkernels/common/gen/diag.h). Variant define: WORD_BITS (32 or 64).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"

#if WORD_BITS == 64
#define WORD uint64_t
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Word { uint64_t x; };
#else
#define WORD uint
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Word { uint x; }; /* 32-ok: a 32-bit word of the buffer, not an index */
#endif
#define LOAD(p, i) (Word((p) + uint64_t(i) * uint64_t(WORD_BITS >> 3)).x)
#define STORE(p, i, v) (Word((p) + uint64_t(i) * uint64_t(WORD_BITS >> 3)).x = (v))

#include "gen/diag.h"
#include "diag_body.h"

DIAG_ENTRIES
