#version 460
// In-order segmented reductions for Vulkan: a thin wrapper over
// clkernels/common/segment_body.h (shared with clkernels/segment.cl).
// Variant define: DT (1 int32, 2 int64, 3 float32, 4 float64). Knobs
// (specialization constants): local size (id 0), ITEMS (id 1), CONTIG (id 2),
// the folded arguments SEG_RED, SEG_SELF, SEG_HAS_PERM, SEG_MODE (ids 3-6;
// -1: run-time).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int ITEMS = 16;
layout(constant_id = 2) const int CONTIG = 0;
layout(constant_id = 3) const int SEG_RED = -1;
layout(constant_id = 4) const int SEG_SELF = -1;
layout(constant_id = 5) const int SEG_HAS_PERM = -1;
layout(constant_id = 6) const int SEG_MODE = -1;
#define LOCAL_SIZE gl_WorkGroupSize.x

#include "dtypes.h"
#include "memory.h"
layout(buffer_reference, std430, buffer_reference_align = BYTES) buffer VRef { T x; };
#define LDV(p, i) (VRef((p) + uint64_t(i) * uint64_t(BYTES)).x)
#define STV(p, i, v) (VRef((p) + uint64_t(i) * uint64_t(BYTES)).x = (v))
#define ATOM_MIN_U32(p, i, v) atomicMin(Mem32((p) + uint64_t(i) * 4ul).x, (v))

layout(push_constant) uniform Args {
	uint64_t out_addr;
	uint64_t vals;
	uint64_t keys;
	uint64_t perm;
	uint64_t err;
	int64_t n;
	int64_t segments;
	int64_t red;
	int64_t include_self;
	int64_t has_perm;
	int64_t limit;
	int64_t step;
	int64_t mode;
} args;

#include "segment_body.h"

void main() {
	segment_run(args.out_addr, args.vals, args.keys, args.perm, args.err, args.n, args.segments, args.red,
		args.include_self, args.has_perm, args.limit, args.step, args.mode);
}
