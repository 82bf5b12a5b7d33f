/* Radix sort passes for OpenCL C: a thin wrapper over common/radix_body.h
 * (shared with shaders/radix.comp). Variant define: KB (key bits, 32 or 64).
 * Knobs: LOCAL_SIZE, RADIX_BITS, and the folded arguments RADIX_MODE,
 * RADIX_FIRST, RADIX_KIND, RADIX_DESC, RADIX_PACK. */
#include "portable.h"
#if KB == 64
#define KEY ulong
#define LDK(p, i) LD64(p, i)
#define STK(p, i, v) ST64(p, i, v)
#define KEY_SIGN 0x8000000000000000UL
#define KEY_INF 0x7ff0000000000000UL
#define KEY_NAN 0x7ff8000000000000UL
#else
#define KEY uint
#define LDK(p, i) LD32(p, i)
#define STK(p, i, v) ST32(p, i, v)
#define KEY_SIGN 0x80000000U
#define KEY_INF 0x7f800000U
#define KEY_NAN 0x7fc00000U
#endif

/* Folded arguments (host.Fold): unset, so the run-time values count. */
#ifndef RADIX_MODE
#define RADIX_MODE -1
#endif
#ifndef RADIX_FIRST
#define RADIX_FIRST -1
#endif
#ifndef RADIX_KIND
#define RADIX_KIND -1
#endif
#ifndef RADIX_DESC
#define RADIX_DESC -1
#endif
#ifndef RADIX_PACK
#define RADIX_PACK -1
#endif

#include "radix_body.h"

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void radix(__global uchar* kin, __global uchar* kout, __global uchar* pin, __global uchar* pout,
	__global uchar* hist, long n, long chunk, long shift, long kind, long descending, long first, long mode, long pack) {
	radix_run(kin, kout, pin, pout, hist, n, chunk, shift, kind, descending, first, mode, pack);
}
