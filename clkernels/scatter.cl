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
#define ATOM_MIN_U32(p, i, v) atomic_min(&((volatile __global uint*)(p))[(i)], (v))
#define ATOM_INC_U32(p, i) atomic_inc(&((volatile __global uint*)(p))[(i)])
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
#define ATOM_ADD_T(p, i, v) atomic_fetch_add_explicit(&((volatile __global ATOMIC_T*)(p))[(i)], (v), \
	memory_order_relaxed, memory_scope_device)
#endif

#include "gen/scatter.h"
#include "scatter_body.h"

SCATTER_ENTRIES
