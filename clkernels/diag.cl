/* diagonal_scatter (and its backward) for OpenCL C: a thin wrapper over
 * common/diag_body.h (shared with shaders/diag.comp).
 * Variant define: WORD_BITS (32 or 64). Knobs: LOCAL_SIZE, ITEMS, CONTIG. */
#include "portable.h"

#if WORD_BITS == 64
#define WORD ulong
#else
#define WORD uint
#endif
#define WPTR __global WORD*
#define LOAD(p, i) ((p)[(i)])
#define STORE(p, i, v) ((p)[(i)] = (v))

#include "diag_body.h"

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void diagonal(__global WORD* full, __global WORD* diag, long count, long L, long base, long dstride,
	long n1, long n2, long s0, long s1, long s2, long mode) {
	diag_run(full, diag, count, L, base, dstride, n1, n2, s0, s1, s2, mode);
}
