/* tril_indices / triu_indices for OpenCL C: a thin wrapper over
 * common/tri_indices_body.h (shared with shaders/tri_indices.comp).
 * Variant define: IDX_BITS (32 or 64). Knobs: LOCAL_SIZE, ITEMS, CONTIG. */
#include "portable.h"

#if IDX_BITS == 64
#define OUT_T long
#else
#define OUT_T int
#endif
#define OUT_PTR __global OUT_T*
#define STORE(p, i, v) ((p)[(i)] = (v))

#include "tri_indices_body.h"

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void tri_indices(__global OUT_T* out, long count, long k0, long C, long lead, long n, long a, long T, long upper) {
	tri_indices_run(out, count, k0, C, lead, n, a, T, upper);
}
