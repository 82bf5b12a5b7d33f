#version 460
// Radix sort passes for Vulkan: a thin wrapper over
// clkernels/common/radix_body.h (shared with clkernels/radix.cl). Variant
// define: KB (key bits, 32 or 64). Knobs (specialization constants): local
// size (id 0), RADIX_BITS (id 3), the folded arguments RADIX_MODE,
// RADIX_FIRST, RADIX_KIND, RADIX_DESC and RADIX_PACK (ids 4-8; -1:
// run-time).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 3) const int RADIX_BITS = 4;
layout(constant_id = 4) const int RADIX_MODE = -1;
layout(constant_id = 5) const int RADIX_FIRST = -1;
layout(constant_id = 6) const int RADIX_KIND = -1;
layout(constant_id = 7) const int RADIX_DESC = -1;
layout(constant_id = 8) const int RADIX_PACK = -1;
#define LOCAL_SIZE gl_WorkGroupSize.x

#if KB == 64
#define KEY uint64_t
#define LDK(p, i) LD64(p, i)
#define STK(p, i, v) ST64(p, i, v)
#define KEY_SIGN 0x8000000000000000ul
#define KEY_INF 0x7ff0000000000000ul
#define KEY_NAN 0x7ff8000000000000ul
#else
#define KEY uint
#define LDK(p, i) LD32(p, i)
#define STK(p, i, v) ST32(p, i, v)
#define KEY_SIGN 0x80000000u
#define KEY_INF 0x7f800000u
#define KEY_NAN 0x7fc00000u
#endif

layout(push_constant) uniform Args {
	uint64_t kin;
	uint64_t kout;
	uint64_t pin;
	uint64_t pout;
	uint64_t hist;
	int64_t n;
	int64_t chunk;
	int64_t shift;
	int64_t kind;
	int64_t descending;
	int64_t first;
	int64_t mode;
	int64_t pack;
} args;

#include "radix_body.h"

void main() {
	radix_run(args.kin, args.kout, args.pin, args.pout, args.hist, args.n, args.chunk, args.shift,
		args.kind, args.descending, args.first, args.mode, args.pack);
}
