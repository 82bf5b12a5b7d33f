/* Prefix sums for OpenCL C: a thin wrapper over common/scan_body.h (shared
 * with shaders/scan.comp), whose entry points and knobs are declared in
 * host/kernels (common/gen/scan.h). Variant define: DT (1 32-bit integers,
 * 2 64-bit integers, 3 float32, 4 float64); integers add in the unsigned
 * type, so signed and unsigned sums wrap alike. The subgroup path
 * (SCAN_SG_OK) is Vulkan's only. */
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
/* The work-group scratch: each scan entry declares it (generated) and
 * passes it on as sh. */
#define SCRATCH_T T
#define SCRATCH_LEN LOCAL_SIZE
#define SH(i) sh[(i)]
#define SCRATCH_PARAM , __local T* sh
#define SCRATCH_ARG , sh

#include "gen/scan.h"
#include "scan_body.h"

SCAN_ENTRIES
