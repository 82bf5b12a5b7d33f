/* Word gathers, scatters and compactions for OpenCL C: a thin wrapper over
 * common/move_body.h (shared with shaders/move.comp). Variant define: WB
 * (word bits, 32 or 64). Knobs: LOCAL_SIZE, ITEMS, CONTIG. */
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

#include "move_body.h"

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void move(__global uchar* dst, __global uchar* src, __global uchar* idx, __global uchar* flags,
	__global uchar* pos, long n, long kind, long add, long has_src, long has_idx, long mode) {
	move_run(dst, src, idx, flags, pos, n, kind, add, has_src, has_idx, mode);
}
