/* tril_indices / triu_indices for OpenCL C: a thin wrapper over
 * common/tri_indices_body.h (shared with shaders/tri_indices.comp), whose
 * entry point and knobs are declared in host/kernels
 * (common/gen/tri_indices.h). Variant define: IDX_BITS (32 or 64). */
#include "portable.h"

#if IDX_BITS == 64
#define OUT_T long
#else
#define OUT_T int
#endif
#define STORE(p, i, v) (((__global OUT_T*)(p))[(i)] = (v))

#include "memory.h"
#include "gen/tri_indices.h"

/* TRI_FILL (tri_indices_body.h): a run of p[i + j] = v + j*step. With
 * STREAM (outputs larger than the caches) the elements from the run's
 * first 64-byte boundary on go in 64-byte non-temporal stores
 * (device_tricks.h's STREAM_STORE, on CPU drivers), so the 2xN output is
 * written without first reading every line it overwrites. */
#if IDX_BITS == 64
#define TRI_VN 8
#define TRI_IOTA ((long8)(0, 1, 2, 3, 4, 5, 6, 7))
#else
#define TRI_VN 16
#define TRI_IOTA ((int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
#endif
#define TRI_VCAT_(a, b) a##b
#define TRI_VCAT(a, b) TRI_VCAT_(a, b)
#define TRI_VT TRI_VCAT(OUT_T, TRI_VN)
void tri_fill(__global OUT_T *d, i64 len, i64 v, i64 step) {
	i64 j = 0;
	if (STREAM != 0) {
		for (; j < len && (CAST(u64, d + j) & 63ul) != 0ul; j++) {
			d[j] = CAST(OUT_T, v + j * step);
		}
		TRI_VT cur = (TRI_VT)(CAST(OUT_T, v + j * step)) + TRI_IOTA * (TRI_VT)(CAST(OUT_T, step));
		const TRI_VT inc = (TRI_VT)(CAST(OUT_T, step * TRI_VN));
		for (; j + TRI_VN <= len; j += TRI_VN) {
			STREAM_STORE(cur, (__global TRI_VT *)(d + j));
			cur = cur + inc;
		}
	}
	for (; j < len; j++) {
		d[j] = CAST(OUT_T, v + j * step);
	}
}
#define TRI_FILL(p, i, len, v, step) tri_fill((__global OUT_T *)(p) + (i), (len), (v), (step));

#include "tri_indices_body.h"

TRI_INDICES_ENTRIES
