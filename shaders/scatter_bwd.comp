#version 460
// The gradient of scatter_reduce for Vulkan: a thin wrapper over
// clkernels/common/scatter_bwd_body.h (shared with clkernels/scatter_bwd.cl).
// Variant define: DT (3 float32, 4 float64). Knobs (specialization
// constants): local size (id 0), ITEMS (id 1), CONTIG (id 2).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int ITEMS = 16;
layout(constant_id = 2) const int CONTIG = 0;
#define LOCAL_SIZE gl_WorkGroupSize.x

#include "dtypes.h"
#include "memory.h"
layout(buffer_reference, std430, buffer_reference_align = BYTES) buffer VRef { T x; };
#define LDV(p, i) (VRef((p) + uint64_t(i) * uint64_t(BYTES)).x)
#define STV(p, i, v) (VRef((p) + uint64_t(i) * uint64_t(BYTES)).x = (v))
#define ATOM_INC_U32(p, i) atomicAdd(Mem32((p) + uint64_t(i) * 4ul).x, 1u)

layout(push_constant) uniform Args {
	uint64_t gi;
	uint64_t gs;
	uint64_t g;
	uint64_t self_in;
	uint64_t src;
	uint64_t out_addr;
	uint64_t keys;
	uint64_t perm;
	uint64_t aux;
	uint64_t err;
	int64_t n;
	int64_t red;
	int64_t include_self;
	int64_t limit;
	int64_t step;
	int64_t mode;
} args;

#include "scatter_bwd_body.h"

void main() {
	scatter_bwd_run(args.gi, args.gs, args.g, args.self_in, args.src, args.out_addr, args.keys, args.perm, args.aux,
		args.err, args.n, args.red, args.include_self, args.limit, args.step, args.mode);
}
