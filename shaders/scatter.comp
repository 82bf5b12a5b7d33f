#version 460
// scatter / scatter_reduce for Vulkan: a thin wrapper over
// clkernels/common/scatter_body.h (shared with clkernels/scatter.cl).
// Variant defines: DT (1 int32, 2 int64, 3 float32, 4 float64); FADD=1 uses
// VK_EXT_shader_atomic_float's native add for float sums and means. Knobs
// (specialization constants): local size (id 0), ITEMS (id 1), CONTIG (id 2),
// SC_RED (id 3: the reduction compiled into the CPU passes, or -1), the
// folded arguments SC_MODE, SC_SELF, SC_WRAP (ids 4-6; -1: run-time).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_buffer_reference : require
#extension GL_GOOGLE_include_directive : require
#if DT == 2 || DT == 4
#extension GL_EXT_shader_atomic_int64 : require
#endif
#if defined(FADD) && FADD == 1
#extension GL_EXT_shader_atomic_float : require
#endif
#include "portable.h"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int ITEMS = 16;
layout(constant_id = 2) const int CONTIG = 0;
layout(constant_id = 3) const int SC_RED = -1;
layout(constant_id = 4) const int SC_MODE = -1;
layout(constant_id = 5) const int SC_SELF = -1;
layout(constant_id = 6) const int SC_WRAP = -1;
#define LOCAL_SIZE gl_WorkGroupSize.x

#include "dtypes.h"
#include "memory.h"

layout(buffer_reference, std430, buffer_reference_align = BYTES) buffer VRef { T x; };
layout(buffer_reference, std430, buffer_reference_align = BYTES) buffer BRef { UBITS x; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer IRef { int64_t x; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer URef { uint x; };
#define VPTR uint64_t
#define IPTR uint64_t
#define UPTR uint64_t
#define LOADV(p, i) (VRef((p) + uint64_t(i) * uint64_t(BYTES)).x)
#define STOREV(p, i, v) (VRef((p) + uint64_t(i) * uint64_t(BYTES)).x = (v))
#define LOADI(p, i) (IRef((p) + uint64_t(i) * 8ul).x)
#define LOADU(p, i) (URef((p) + uint64_t(i) * 4ul).x)
#define STOREU(p, i, v) (URef((p) + uint64_t(i) * 4ul).x = (v))
#define CAST_UPTR(p) (p)
#define CAS_BITS(p, i, cmp, val) atomicCompSwap(BRef((p) + uint64_t(i) * uint64_t(BYTES)).x, (cmp), (val))
#define ATOM_MIN_U32(p, i, v) atomicMin(URef((p) + uint64_t(i) * 4ul).x, (v))
#define ATOM_INC_U32(p, i) atomicAdd(URef((p) + uint64_t(i) * 4ul).x, 1u)
#if defined(FADD) && FADD == 1
#define ATOM_ADD_T(p, i, v) atomicAdd(VRef((p) + uint64_t(i) * uint64_t(BYTES)).x, (v))
#endif

layout(push_constant) uniform Args {
	uint64_t out_addr;
	uint64_t src;
	uint64_t index;
	uint64_t meta;
	uint64_t counts;
	uint64_t err;
	uint64_t spare;
	int64_t count;
	int64_t rank;
	int64_t dim;
	int64_t dim_size;
	int64_t red;
	int64_t mode;
	int64_t include_self;
	int64_t wrap;
} args;

#include "scatter_body.h"

void main() {
	scatter_run(args.out_addr, args.src, args.index, args.meta, args.counts, args.err, args.spare, args.count, args.rank,
		args.dim, args.dim_size, args.red, args.mode, args.include_self, args.wrap);
}
