#version 460
// Prefix sums for Vulkan: a thin wrapper over clkernels/common/scan_body.h
// (shared with clkernels/scan.cl). Variant define: DT (1 32-bit integers,
// 2 64-bit integers, 3 float32, 4 float64). Knobs (specialization
// constants): local size (id 0, a power of two), ITEMS (id 1), FLAT (id 4).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int ITEMS = 16;
layout(constant_id = 4) const int FLAT = 0;
#define LOCAL_SIZE gl_WorkGroupSize.x

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
shared T sh[gl_WorkGroupSize.x];
#define SH(i) sh[int(i)]
#define SCRATCH_PARAM
#define SCRATCH_ARG

layout(push_constant) uniform Args {
	uint64_t x;
	uint64_t y;
	uint64_t partials;
	int64_t n;
	int64_t kind;
	int64_t exclusive;
	int64_t mode;
} args;

#include "scan_body.h"

void main() {
	scan_run(args.x, args.y, args.partials, args.n, args.kind, args.exclusive, args.mode);
}
