#version 460
// Word gathers, scatters and compactions for Vulkan: a thin wrapper over
// clkernels/common/move_body.h (shared with clkernels/move.cl). Variant
// define: WB (word bits, 32 or 64). Knobs (specialization constants): local
// size (id 0), ITEMS (id 1), CONTIG (id 2), the folded arguments MOVE_MODE,
// MOVE_KIND, MOVE_HAS_SRC, MOVE_HAS_IDX (ids 3-6; -1: run-time).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int ITEMS = 16;
layout(constant_id = 2) const int CONTIG = 0;
layout(constant_id = 3) const int MOVE_MODE = -1;
layout(constant_id = 4) const int MOVE_KIND = -1;
layout(constant_id = 5) const int MOVE_HAS_SRC = -1;
layout(constant_id = 6) const int MOVE_HAS_IDX = -1;
#define LOCAL_SIZE gl_WorkGroupSize.x

#include "memory.h"
#if WB == 64
#define WORD uint64_t
#define LDW(p, i) LD64(p, i)
#define STW(p, i, v) ST64(p, i, v)
#else
#define WORD uint
#define LDW(p, i) LD32(p, i)
#define STW(p, i, v) ST32(p, i, v)
#endif

layout(push_constant) uniform Args {
	uint64_t dst;
	uint64_t src;
	uint64_t idx;
	uint64_t flags;
	uint64_t pos;
	int64_t n;
	int64_t kind;
	int64_t add;
	int64_t has_src;
	int64_t has_idx;
	int64_t mode;
} args;

#include "move_body.h"

void main() {
	move_run(args.dst, args.src, args.idx, args.flags, args.pos, args.n, args.kind, args.add,
		args.has_src, args.has_idx, args.mode);
}
