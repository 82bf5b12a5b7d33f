/* Prefix sums for OpenCL C: a thin wrapper over common/scan_body.h (shared
 * with shaders/scan.comp). Variant define: DT (1 32-bit integers, 2 64-bit
 * integers, 3 float32, 4 float64); integers add in the unsigned type, so
 * signed and unsigned sums wrap alike. Knobs: LOCAL_SIZE, ITEMS, FLAT. */
#include "portable.h"
#if DT == 4
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if DT == 1
#define T uint
#elif DT == 2
#define T ulong
#elif DT == 3
#define T float
#else
#define T double
#endif
#define ADD(a, b) ((a) + (b))
#define LDT(p, i) (((__global T*)(p))[(i)])
#define STT(p, i, v) (((__global T*)(p))[(i)] = (v))
#define SH(i) sh[(i)]
#define SCRATCH_PARAM , __local T* sh
#define SCRATCH_ARG , sh
/* Folded arguments (host.Fold): unset, so the run-time values count. The
 * subgroup path (SCAN_SG_OK) is Vulkan's only. */
#ifndef SCAN_MODE
#define SCAN_MODE -1
#endif
#ifndef SCAN_EXCL
#define SCAN_EXCL -1
#endif
#ifndef SCAN_KIND
#define SCAN_KIND -1
#endif

#include "scan_body.h"

/* One entry per mode (the mode argument is ignored): PoCL's work-group
 * compiler handles each phase's barriers alone far better than one kernel
 * holding every phase behind run-time branches. */
__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void scan_reduce_k(__global uchar* x, __global uchar* y, __global uchar* partials, long n, long kind, long exclusive, long mode) {
	__local T sh[LOCAL_SIZE];
	scan_reduce(x, partials, n, kind, sh);
}

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void scan_partials_k(__global uchar* x, __global uchar* y, __global uchar* partials, long n, long kind, long exclusive, long mode) {
	scan_partials(partials, n);
}

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void scan_apply_k(__global uchar* x, __global uchar* y, __global uchar* partials, long n, long kind, long exclusive, long mode) {
	__local T sh[LOCAL_SIZE];
	scan_apply(x, y, partials, n, kind, exclusive, sh);
}
