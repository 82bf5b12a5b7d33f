#version 460
// diagonal_scatter (and its backward) for Vulkan: a thin wrapper over
// clkernels/common/diag_body.h (shared with clkernels/diag.cl).
// Variant define: WORD_BITS (32 or 64). Knobs (specialization constants):
// local size (id 0), ITEMS (id 1), CONTIG (id 2).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int ITEMS = 16;
layout(constant_id = 2) const int CONTIG = 0;
#define LOCAL_SIZE gl_WorkGroupSize.x

#if WORD_BITS == 64
#define WORD uint64_t
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Word { uint64_t x; };
#else
#define WORD uint
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Word { uint x; };
#endif
#define WPTR uint64_t
#define LOAD(p, i) (Word((p) + uint64_t(i) * uint64_t(WORD_BITS / 8)).x)
#define STORE(p, i, v_) (Word((p) + uint64_t(i) * uint64_t(WORD_BITS / 8)).x = (v_))

layout(push_constant) uniform Args {
	uint64_t full;
	uint64_t diag;
	int64_t count;
	int64_t L;
	int64_t base;
	int64_t dstride;
	int64_t n1;
	int64_t n2;
	int64_t s0;
	int64_t s1;
	int64_t s2;
	int64_t mode;
} args;

#include "diag_body.h"

void main() {
	diag_run(args.full, args.diag, args.count, args.L, args.base, args.dstride,
		args.n1, args.n2, args.s0, args.s1, args.s2, args.mode);
}
