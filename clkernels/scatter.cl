/* scatter / scatter_reduce / put_along_axis / take_along_axis for OpenCL C:
 * a thin wrapper over common/scatter_body.h (shared with
 * shaders/scatter.comp), whose entry points and knobs are declared in
 * host/kernels (common/gen/scatter.h).
 * Variant defines: DT (1 int32, 2 int64, 3 float32, 4 float64); FADD=1
 * (native float add, see below). */
#include "portable.h"

#if DT == 2 || DT == 4
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

#include "dtypes.h"
#include "memory.h"

#define LOADV(p, i) (((__global T*)(p))[(i)])
#define STOREV(p, i, v) (((__global T*)(p))[(i)] = (v))
#define LOADI(p, i) (((__global const long*)(p))[(i)])
#define LOADU(p, i) (((__global uint*)(p))[(i)])
#define STOREU(p, i, v) (((__global uint*)(p))[(i)] = (v))
#if DT == 2 || DT == 4
#define CAS_BITS(p, i, cmp, val) atom_cmpxchg(&((volatile __global ulong*)(p))[(i)], (cmp), (val))
#else
#define CAS_BITS(p, i, cmp, val) atomic_cmpxchg(&((volatile __global uint*)(p))[(i)], (cmp), (val))
#endif
#define CAS_U32(p, i, cmp, val) atomic_cmpxchg(&((volatile __global uint*)(p))[(i)], (cmp), (val))
#define ATOM_MIN_U32(p, i, v) atomic_min(&((volatile __global uint*)(p))[(i)], (v))
#define ATOM_ADD_U32(p, i, v) atomic_add(&((volatile __global uint*)(p))[(i)], (v))
#define ATOM_OR_U32(p, i, v) atomic_or(&((volatile __global uint*)(p))[(i)], (v))
/* Integer sums add with the device's atomic add, in the unsigned type
 * (wrapping: the bits the compare-and-swap loop's sum gives). FADD=1
 * variants use cl_ext_float_atomics' add where the compiler announces it
 * (an OpenCL C 3.0 build), or PTX's on NVIDIA (device_tricks.h);
 * elsewhere they keep the compare-and-swap loop, which gives the same
 * results. */
#if DT == 1
#define ATOM_ADD_T(p, i, v) atomic_add(&((volatile __global uint*)(p))[(i)], as_uint(v))
#elif DT == 2
#define ATOM_ADD_T(p, i, v) atom_add(&((volatile __global ulong*)(p))[(i)], as_ulong(v))
#elif defined(FADD) && FADD == 1 && ((DT == 3 && defined(__opencl_c_ext_fp32_global_atomic_add)) || \
	(DT == 4 && defined(__opencl_c_ext_fp64_global_atomic_add)))
#if DT == 3
#define ATOMIC_T atomic_float
#else
#define ATOMIC_T atomic_double
#endif
#define ATOM_ADD_T(p, i, v) atomic_fetch_add_explicit(&((volatile __global ATOMIC_T*)(p))[(i)], (v), \
	memory_order_relaxed, memory_scope_device)
#elif defined(FADD) && FADD == 1 && DT == 3 && defined(NV_ATOM_ADD_F32)
#define ATOM_ADD_T(p, i, v) sc_nv_add((p), (i), (v))
/* x is a nonzero subnormal float */
#define SC_SUBNORMAL(x) ((x) != 0.0f && fabs(x) < FLT_MIN)
/* x with a subnormal flushed to a zero of its sign, as PTX's add does */
#define SC_FTZ(x) (SC_SUBNORMAL(x) ? copysign(0.0f, (x)) : (x))
/* adds d to element i of p by a compare-and-swap loop */
void sc_cas_add(__global uchar* p, long i, float d) {
	uint old = LOADU(p, i); /* 32-ok: float32 bits */
	for (;;) {
		const uint next = as_uint(as_float(old) + d); /* 32-ok: float32 bits */
		if (next == old) {
			return;
		}
		const uint seen = CAS_BITS(p, i, old, next); /* 32-ok: float32 bits */
		if (seen == old) {
			return;
		}
		old = seen;
	}
}
/* adds v to element i of p by PTX's atomic add; where a subnormal value
 * took part (the element before, or the sum), that add flushed it, and
 * the difference from the IEEE sum is added again by the loop: a sum of
 * the same terms in another order, as any atomic sum is, with the
 * subnormals OpenCL keeps on NVIDIA */
void sc_nv_add(__global uchar* p, long i, float v) {
	if (SC_SUBNORMAL(v)) {
		sc_cas_add(p, i, v);
		return;
	}
	const float old = NV_ATOM_ADD_F32(&((volatile __global float*)(p))[i], v);
	const float want = old + v;
	if (SC_SUBNORMAL(old) || SC_SUBNORMAL(want)) {
		const float d = want - SC_FTZ(SC_FTZ(old) + v);
		if (d != 0.0f) {
			sc_cas_add(p, i, d);
		}
	}
}
#elif defined(FADD) && FADD == 1 && DT == 4 && defined(NV_RED_ADD_F64)
#define ATOM_ADD_T(p, i, v) NV_RED_ADD_F64(&((__global double*)(p))[(i)], (v))
#endif

/* The few pass's vector steps (scatter_body.h, SC_VN): SC_VN lanes of T
 * fill one 64-byte register; UV is T's bit word in as many lanes (the
 * masks), LV and ULV the int64 indices. Integers wrap: they add and
 * multiply in the unsigned type. SC_VODD(v) sets the lanes whose value is
 * NaN or a signed zero (floats; no lane for integers), SC_VSIGNED(m)
 * reads a mask as signed lanes for any(). */
#if DT == 1 || DT == 3
#define SC_VN 16
#define SC_VSIGNED(m) as_int16(m)
#else
#define SC_VN 8
#define SC_VSIGNED(m) as_long8(m)
#endif
#define SC_VCAT_(a, b) a##b
#define SC_VCAT(a, b) SC_VCAT_(a, b)
#define TV SC_VCAT(T, SC_VN)
#define UV SC_VCAT(UBITS, SC_VN)
#define LV SC_VCAT(long, SC_VN)
#define ULV SC_VCAT(ulong, SC_VN)
#define SC_VLOADV(p, i) SC_VCAT(vload, SC_VN)(0, (__global const T*)(p) + (i))
#define SC_VLOADI(p, i) SC_VCAT(vload, SC_VN)(0, (__global const long*)(p) + (i))
#define SC_VSTORE(v, a) SC_VCAT(vstore, SC_VN)((v), 0, (a))
#define SC_VTO_UV(x) SC_VCAT(convert_, UV)(x)
#if DT == 1 || DT == 2
#define SC_VADD(a, b) SC_VCAT(as_, TV)(SC_VCAT(as_, UV)(a) + SC_VCAT(as_, UV)(b))
#define SC_VMUL(a, b) SC_VCAT(as_, TV)(SC_VCAT(as_, UV)(a) * SC_VCAT(as_, UV)(b))
#define SC_VODD(v) ((UV)(0u))
#else
#define SC_VADD(a, b) ((a) + (b))
#define SC_VMUL(a, b) ((a) * (b))
#define SC_VODD(v) SC_VCAT(as_, UV)(!(fabs(v) > (TV)(0)))
#endif

/* the GPU few pass's work-group scratch: a word per work-item and target,
 * and with SC_FEWG_SH as many again for the hit counts; the partitions'
 * folds (scatter_pfold, scatter_sfold) keep half as many position and
 * value words, twice as many with SC_FEWG_SH (accel's foldWide) */
#define SCRATCH_T UBITS
#define SCRATCH_LEN (LOCAL_SIZE * SC_FEW_MAX * (SC_FEWG_SH != 0 ? 2 : 1))
#define SH(i) sh[(i)]
#define SCRATCH_PARAM , __local SCRATCH_T* sh
#define SCRATCH_ARG , sh

#include "gen/scatter.h"
#include "scatter_body.h"

SCATTER_ENTRIES
