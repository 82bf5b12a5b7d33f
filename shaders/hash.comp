#version 460
// Hash table of 64-bit keys for Vulkan: a thin wrapper over
// clkernels/common/hash_body.h (shared with clkernels/hash.cl). Needs
// shaderBufferInt64Atomics (the host checks Caps.Int64Atomics first).
// Variant define: KB (key bits, 64). Knobs (specialization constants):
// local size (id 0), ITEMS (id 1), CONTIG (id 2), MODE (id 3: a
// compile-time mode, so each mode compiles to just its own path).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#include "portable.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int ITEMS = 16;
layout(constant_id = 2) const int CONTIG = 0;
layout(constant_id = 3) const int MODE = 0;
#define LOCAL_SIZE gl_WorkGroupSize.x

#include "memory.h"
#define CAS64(p, i, cmp, val) atomicCompSwap(Mem64((p) + uint64_t(i) * 8ul).x, (cmp), (val))
#define ADD64(p, i, v) atomicAdd(Mem64((p) + uint64_t(i) * 8ul).x, (v))

layout(push_constant) uniform Args {
	uint64_t table;
	uint64_t keys;
	uint64_t out_addr;
	uint64_t meta;
	uint64_t aux;
	int64_t n;
	int64_t slots;
	int64_t max_probes;
	int64_t budget;
	int64_t step;
	int64_t capacity;
	int64_t base;
} args;

#include "hash_body.h"

void main() {
	hash_run(args.table, args.keys, args.out_addr, args.meta, args.aux, args.n, args.slots, args.max_probes,
		args.budget, args.step, args.capacity, args.base, I64C(MODE));
}
