#version 460
// tril_indices / triu_indices for Vulkan: a thin wrapper over
// clkernels/common/tri_indices_body.h (shared with clkernels/tri_indices.cl).
// Variant define: IDX_BITS (32 or 64). Knobs (specialization constants):
// local size (id 0), ITEMS (id 1), CONTIG (id 2).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int ITEMS = 16;
layout(constant_id = 2) const int CONTIG = 0;
#define LOCAL_SIZE gl_WorkGroupSize.x

// Buffers arrive as device addresses; elements are addressed with 64-bit
// arithmetic (GLSL array indices are 32-bit), so any size is reachable.
#if IDX_BITS == 64
#define OUT_T int64_t
layout(buffer_reference, std430, buffer_reference_align = 8) buffer OutElem { int64_t x; };
#else
#define OUT_T int
layout(buffer_reference, std430, buffer_reference_align = 4) buffer OutElem { int x; };
#endif
#define OUT_PTR uint64_t
#define STORE(p, i, v_) (OutElem((p) + uint64_t(i) * uint64_t(IDX_BITS / 8)).x = (v_))

layout(push_constant) uniform Args {
	uint64_t out_addr;
	int64_t count;
	int64_t k0;
	int64_t C;
	int64_t lead;
	int64_t n;
	int64_t a;
	int64_t T;
	int64_t upper;
} args;

#include "tri_indices_body.h"

void main() {
	tri_indices_run(args.out_addr, args.count, args.k0, args.C, args.lead, args.n, args.a, args.T, args.upper);
}
