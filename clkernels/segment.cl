/* In-order segmented reductions for OpenCL C: a thin wrapper over
 * common/segment_body.h (shared with shaders/segment.comp). Variant define:
 * DT (1 int32, 2 int64, 3 float32, 4 float64). Knobs: LOCAL_SIZE, ITEMS,
 * CONTIG, and the folded arguments SEG_RED, SEG_SELF, SEG_HAS_PERM, SEG_MODE
 * (host.Fold; -1: run-time). */
#include "portable.h"
#include "dtypes.h"
#include "memory.h"
#define LDV(p, i) (((__global T*)(p))[(i)])
#define STV(p, i, v) (((__global T*)(p))[(i)] = (v))
#define ATOM_MIN_U32(p, i, v) atomic_min(&((__global uint*)(p))[(i)], (v))

#ifndef SEG_RED
#define SEG_RED -1
#endif
#ifndef SEG_SELF
#define SEG_SELF -1
#endif
#ifndef SEG_HAS_PERM
#define SEG_HAS_PERM -1
#endif
#ifndef SEG_MODE
#define SEG_MODE -1
#endif

#include "segment_body.h"

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void segment(__global uchar* out, __global uchar* vals, __global uchar* keys, __global uchar* perm,
	__global uchar* err, long n, long segments, long red, long include_self, long has_perm, long limit,
	long step, long mode) {
	segment_run(out, vals, keys, perm, err, n, segments, red, include_self, has_perm, limit, step, mode);
}
