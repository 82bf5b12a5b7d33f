/* The gradient of scatter_reduce for OpenCL C: a thin wrapper over
 * common/scatter_bwd_body.h (shared with shaders/scatter_bwd.comp).
 * Variant define: DT (3 float32, 4 float64). Knobs: LOCAL_SIZE, ITEMS,
 * CONTIG. */
#include "portable.h"
#include "dtypes.h"
#include "memory.h"
#define LDV(p, i) (((__global T*)(p))[(i)])
#define STV(p, i, v) (((__global T*)(p))[(i)] = (v))
#define ATOM_INC_U32(p, i) atomic_inc(&((__global uint*)(p))[(i)])

#include "scatter_bwd_body.h"

__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void scatter_bwd(__global uchar* gi, __global uchar* gs, __global uchar* g, __global uchar* self_in,
	__global uchar* src, __global uchar* res, __global uchar* keys, __global uchar* perm, __global uchar* aux,
	__global uchar* err, long n, long red, long include_self, long limit, long step, long mode) {
	scatter_bwd_run(gi, gs, g, self_in, src, res, keys, perm, aux, err, n, red, include_self, limit, step, mode);
}
