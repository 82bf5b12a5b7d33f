/* Word gathers, scatters and compactions for OpenCL C: a thin wrapper over
 * common/move_body.h (shared with shaders/move.comp). Variant define: WB
 * (word bits, 32 or 64). Knobs: LOCAL_SIZE, ITEMS, CONTIG, and the folded
 * arguments MOVE_MODE, MOVE_KIND, MOVE_HAS_SRC, MOVE_HAS_IDX. */
#include "portable.h"
#include "memory.h"
#if WB == 64
#define WORD ulong
#define LDW(p, i) LD64(p, i)
#define STW(p, i, v) ST64(p, i, v)
#else
#define WORD uint
#define LDW(p, i) LD32(p, i)
#define STW(p, i, v) ST32(p, i, v)
#endif

/* Folded arguments (host.Fold): unset, so the run-time values count. */
#ifndef MOVE_MODE
#define MOVE_MODE -1
#endif
#ifndef MOVE_KIND
#define MOVE_KIND -1
#endif
#ifndef MOVE_HAS_SRC
#define MOVE_HAS_SRC -1
#endif
#ifndef MOVE_HAS_IDX
#define MOVE_HAS_IDX -1
#endif

#include "move_body.h"

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void move(__global uchar* dst, __global uchar* src, __global uchar* idx, __global uchar* flags,
	__global uchar* pos, long n, long kind, long add, long has_src, long has_idx, long mode) {
	move_run(dst, src, idx, flags, pos, n, kind, add, has_src, has_idx, mode);
}
