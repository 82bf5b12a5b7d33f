/* device_tricks.h: the device-class tricks, all in one place. Everything
 * else in the kernels is OpenCL C or GLSL and their built-ins only
 * (TestNoBuiltinsOutsideTricks in clkernels fails on a __builtin_
 * anywhere else). Each trick speeds up CPU drivers (PoCL: clang, x86) and
 * is compiled in only where the host builds for a CPU device (knob
 * CPU_TRICKS=1, host.DeviceKnobs); elsewhere each falls back to plain
 * OpenCL C, and GLSL never has them. A GPU compiler need not accept
 * them: NVIDIA's refused __builtin_prefetch of a __global pointer
 * ("changes address space of pointer"), which failed every scatter
 * program on the H100.
 *
 *   STREAM_STORE(v, p)  stores v at p (a __global pointer to v's type,
 *                       aligned to its size) with a non-temporal store
 *                       (PoCL emits vmovntdq), so a write-only stream
 *                       larger than the caches does not first read every
 *                       line it overwrites; else a plain store
 *   PREFETCH_RW(p)      a hint that the line at p (a __global pointer)
 *                       will be read and written soon (prefetchw on x86),
 *                       so a loop of data-dependent read-modify-writes
 *                       keeps more misses in flight than its out-of-order
 *                       window reaches; never faults, whatever p; else
 *                       nothing
 *   VSHUFFLE(a, b, ...) clang's __builtin_shufflevector of two vectors of
 *                       one type (lanes of a, then of b, picked by
 *                       constant indices); undefined where the trick is
 *                       off, and the caller spells the shuffle with
 *                       swizzles instead
 *
 * One trick is for NVIDIA's OpenCL, compiled in only where the host
 * builds for it (knob NV_TRICKS=1, host.DeviceKnobs), and where a build
 * with it fails the host builds again without it (host.clDevice.build):
 *
 *   NV_ATOM_ADD_F32(p, v) adds float v to *p (a __global float pointer)
 *                       atomically (relaxed, device scope) by PTX's
 *                       atom.global.add.f32 and is the value *p held
 *                       before; on global memory that add flushes
 *                       subnormal operands and results to a signed zero
 *                       (PTX ISA; .noftz needs sm_90 and PTX 9.4), so
 *                       the caller checks the old value and the sum and
 *                       adds back what was flushed
 *   NV_RED_ADD_F64(p, v) adds double v to *p (a __global double pointer)
 *                       atomically by red.global.add.f64 (sm_60 on; f64
 *                       adds keep subnormals)
 * NVIDIA's OpenCL offers no cl_ext_float_atomics: without these a float
 * sum is a compare-and-swap loop, a read and a retry per collision. Both
 * are undefined where the trick is off (the caller keeps its loop).
 *
 * The same trick gives NVIDIA's OpenCL, which has no cl_khr_subgroups,
 * the warp's votes (the radix sort's ranking by subgroup ballots). A
 * warp is 2^NV_WARP_LOG lanes, work-items with consecutive local ids
 * (warp w of a one-dimensional group: local ids 32w .. 32w+31); every
 * lane of the warp must reach each of these together:
 *   NV_LANE()           the lane's place in its warp (%laneid)
 *   NV_BALLOT(p)        a bit per lane of the warp whose p is true
 *                       (vote.sync.ballot.b32)
 *   NV_LANES_BELOW()    the bits of the lanes below this one
 *                       (%lanemask_lt)
 *   NV_WARP_SYNC()      the warp's lanes meet, and the work-group memory
 *                       each wrote before is seen by all after
 *                       (bar.warp.sync)
 * They are undefined where the trick is off (the callers then rank in
 * work-group scratch).
 *
 * NV_TRICKS=2 (ACCEL_NV_TRICKS=emulate, any OpenCL device) defines them
 * all in OpenCL C with PTX's results, the float adds' flush included and
 * a warp of one lane, so that the tests run the callers' NVIDIA paths on
 * PoCL. */
#ifndef ACCEL_DEVICE_TRICKS_H
#define ACCEL_DEVICE_TRICKS_H

#ifndef CPU_TRICKS
#define CPU_TRICKS 0
#endif

#if defined(ACCEL_CL) && CPU_TRICKS && defined(__has_builtin)
#if __has_builtin(__builtin_nontemporal_store)
#define STREAM_STORE(v, p) __builtin_nontemporal_store((v), (p))
#endif
#if __has_builtin(__builtin_prefetch)
#define PREFETCH_RW(p) __builtin_prefetch((p), 1, 3)
#endif
#if __has_builtin(__builtin_shufflevector)
#define VSHUFFLE(a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#endif
#endif

#ifndef NV_TRICKS
#define NV_TRICKS 0
#endif

#if defined(ACCEL_CL) && NV_TRICKS == 1
#define NV_ATOM_ADD_F32(p, v) nv_atom_add_f32((p), (v))
float nv_atom_add_f32(volatile __global float* p, float v) {
	float old;
	__asm__ __volatile__("atom.global.add.f32 %0, [%1], %2;" : "=f"(old) : "l"((ulong)(p)), "f"(v) : "memory");
	return old;
}
#define NV_RED_ADD_F64(p, v) \
	__asm__ __volatile__("red.global.add.f64 [%0], %1;" : : "l"((ulong)(p)), "d"((double)(v)) : "memory")
#define NV_WARP_LOG 5
uint nv_lane(void) { /* 32-ok: a lane of the warp, < 32 */
	uint r; /* 32-ok: a lane of the warp */
	__asm__("mov.u32 %0, %%laneid;" : "=r"(r));
	return r;
}
#define NV_LANE() nv_lane()
uint nv_ballot(bool p) { /* 32-ok: a bit per lane of the warp */
	uint r; /* 32-ok: a bit per lane of the warp */
	__asm__ __volatile__("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %1, 0;\n\tvote.sync.ballot.b32 %0, q, 0xffffffff;\n\t}"
			     : "=r"(r)
			     : "r"(p ? 1u : 0u));
	return r;
}
#define NV_BALLOT(p) nv_ballot(p)
uint nv_lanes_below(void) { /* 32-ok: a bit per lane of the warp */
	uint r; /* 32-ok: a bit per lane of the warp */
	__asm__("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
	return r;
}
#define NV_LANES_BELOW() nv_lanes_below()
#define NV_WARP_SYNC() __asm__ __volatile__("bar.warp.sync 0xffffffff;" : : : "memory")
#endif
#if defined(ACCEL_CL) && NV_TRICKS == 2
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
/* PTX's atom.global.add.f32 as NVIDIA documents it, for the tests: a
 * subnormal operand or sum becomes a zero of its sign */
#define NV_FTZ32(x) (((x) != 0.0f && fabs(x) < FLT_MIN) ? copysign(0.0f, (x)) : (x))
#define NV_ATOM_ADD_F32(p, v) nv_atom_add_f32((p), (v))
float nv_atom_add_f32(volatile __global float* p, float v) {
	uint old = as_uint(*p); /* 32-ok: float32 bits */
	for (;;) {
		const uint next = as_uint(NV_FTZ32(NV_FTZ32(as_float(old)) + NV_FTZ32(v))); /* 32-ok: float32 bits */
		const uint seen = atomic_cmpxchg((volatile __global uint*)p, old, next); /* 32-ok: float32 bits */
		if (seen == old) {
			return as_float(old);
		}
		old = seen;
	}
}
#define NV_RED_ADD_F64(p, v) nv_red_add_f64((p), (v))
void nv_red_add_f64(volatile __global double* p, double v) {
	ulong old = as_ulong(*p);
	for (;;) {
		const ulong seen = atom_cmpxchg((volatile __global ulong*)p, old, as_ulong(as_double(old) + v));
		if (seen == old) {
			return;
		}
		old = seen;
	}
}
/* a warp of one lane */
#define NV_WARP_LOG 0
#define NV_LANE() 0u
#define NV_BALLOT(p) ((p) ? 1u : 0u)
#define NV_LANES_BELOW() 0u
#define NV_WARP_SYNC() mem_fence(CLK_LOCAL_MEM_FENCE)
#endif

/* CPU builds use 512-bit vectors (16 floats, 8 longs) on x86 machines
 * without AVX-512, and clang warns (-Wpsabi) at every call of a built-in
 * with such an argument that its ABI differs from an AVX-512 build's.
 * PoCL compiles the kernel and its built-ins for the same target and
 * inlines them, so no call crosses that boundary: the note is noise, and
 * PoCL printed its count ("4 warnings generated.") to the embedding
 * program's stderr on every cold build (issue #30). Only this warning is
 * silenced, and only in CPU builds. */
#if defined(ACCEL_CL) && CPU_TRICKS && defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#endif

#ifndef STREAM_STORE
#define STREAM_STORE(v, p) (*(p) = (v))
#endif
#ifndef PREFETCH_RW
#define PREFETCH_RW(p)
#endif

#endif
