/* scatter / scatter_reduce for OpenCL C: a thin wrapper over
 * common/scatter_body.h (shared with shaders/scatter.comp).
 * Variant defines: DT (1 int32, 2 int64, 3 float32, 4 float64); FADD=1 (native
 * float add, see below).
 * Knobs: LOCAL_SIZE, ITEMS, CONTIG, SC_RED (the reduction compiled into the
 * CPU passes, or -1), and the folded arguments SC_MODE, SC_SELF, SC_WRAP
 * (host.Fold; -1: run-time). */
#include "portable.h"

#ifndef SC_RED
#define SC_RED -1
#endif
#ifndef SC_MODE
#define SC_MODE -1
#endif
#ifndef SC_SELF
#define SC_SELF -1
#endif
#ifndef SC_WRAP
#define SC_WRAP -1
#endif

#if DT == 2 || DT == 4
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

#include "dtypes.h"
#include "memory.h"

#define VPTR __global T*
#define IPTR __global const long*
#define UPTR __global uint*
#define LOADV(p, i) ((p)[(i)])
#define STOREV(p, i, v) ((p)[(i)] = (v))
#define LOADI(p, i) ((p)[(i)])
#define LOADU(p, i) ((p)[(i)])
#define STOREU(p, i, v) ((p)[(i)] = (v))
#define CAST_UPTR(p) ((__global uint*)(p))
#if DT == 2 || DT == 4
#define CAS_BITS(p, i, cmp, val) atom_cmpxchg((volatile __global ulong*)&(p)[(i)], (cmp), (val))
#else
#define CAS_BITS(p, i, cmp, val) atomic_cmpxchg((volatile __global uint*)&(p)[(i)], (cmp), (val))
#endif
#define ATOM_MIN_U32(p, i, v) atomic_min(&(p)[(i)], (v))
#define ATOM_INC_U32(p, i) atomic_inc(&(p)[(i)])
/* FADD=1 variants use cl_ext_float_atomics' add where the compiler
 * announces it (an OpenCL C 3.0 build); elsewhere they keep the
 * compare-and-swap loop, which gives the same results. */
#if defined(FADD) && FADD == 1 && ((DT == 3 && defined(__opencl_c_ext_fp32_global_atomic_add)) || \
	(DT == 4 && defined(__opencl_c_ext_fp64_global_atomic_add)))
#if DT == 3
#define ATOMIC_T atomic_float
#else
#define ATOMIC_T atomic_double
#endif
#define ATOM_ADD_T(p, i, v) atomic_fetch_add_explicit((volatile __global ATOMIC_T*)&(p)[(i)], (v), \
	memory_order_relaxed, memory_scope_device)
#endif

#include "scatter_body.h"

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void scatter(__global T* out, __global T* src, __global const long* index, __global const long* meta,
	__global uint* counts, __global uint* err, __global T* spare, long count, long rank, long dim, long dim_size,
	long red, long mode, long include_self, long wrap) {
	scatter_run(out, src, index, meta, counts, err, spare, count, rank, dim, dim_size, red, mode, include_self, wrap);
}
