/* tri_indices_body.h: the tril_indices/triu_indices kernel body, shared by
 * clkernels/tri_indices.cl and shaders/tri_indices.comp (entry point and
 * knobs declared in host/kernels: gen/tri_indices.h). The wrappers define
 * OUT_T (the output's element type) and STORE(p, i, v), and may define
 * TRI_FILL(p, i, len, v, step): p[i + j] = v + j*step for j in [0, len)
 * (OpenCL C: with STREAM, in non-temporal vector stores).
 *
 * It writes elements k0 .. k0+count-1 of the result (the whole result when
 * k0 = 0 and count = N; a window of a result too large to hold otherwise):
 * rows at dst[0, count), columns at dst[count, 2*count). The work is cut into tiles of LOCAL_SIZE*ITEMS elements; work-groups take tiles
 * with a grid stride. CONTIG selects how a tile is split among work-items:
 *   CONTIG != 0: each work-item writes ITEMS consecutive elements, finding
 *     its first row once and then walking the rows with fill loops (CPU
 *     drivers vectorize them; TRI_FILL streams them past the caches);
 *   CONTIG == 0: consecutive work-items write consecutive elements, each
 *     recovering its own row (coalesced stores on GPUs and SIMD lanes). */
#ifndef ACCEL_TRI_INDICES_BODY_H
#define ACCEL_TRI_INDICES_BODY_H

#include "tri_math.h"

#ifndef TRI_FILL
#define TRI_FILL(p, i, len, v, step) \
	for (i64 j_ = I64C(0); j_ < (len); j_++) { \
		STORE(p, (i) + j_, CAST(OUT_T, (v) + j_ * (step))); \
	}
#endif

INLINE void tri_indices_run(TRI_INDICES_RUN_PARAMS) {
	const i64 items = I64C(ITEMS);
	const i64 tile_elems = I64C(LOCAL_SIZE) * items;
	const i64 tiles = cdiv64(count, tile_elems);
	const i64 lid = LOCAL_ID();
	const i64 stride = GROUP_TOTAL();
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += stride) {
		const i64 base = tile * tile_elems;
		if (CONTIG != 0) {
			i64 i0 = base + lid * items;
			const i64 end = k0 + min64(i0 + items, count);
			i64 k = k0 + i0;
			if (k < end) {
				i64 r = tri_row(k, upper, C, lead, n, a, T);
				i64 c = tri_col(k, r, upper, C, lead, n, a, T);
				while (k < end) {
					const i64 cend = tri_col_start(r, upper, C, lead, n, a) + tri_row_len(r, upper, C, lead, n, a);
					const i64 run = min64(cend - c, end - k);
					TRI_FILL(dst, k - k0, run, r, I64C(0))
					TRI_FILL(dst, count + k - k0, run, c, I64C(1))
					k += run;
					r += I64C(1);
					c = tri_col_start(r, upper, C, lead, n, a);
				}
			}
		} else {
			for (i64 j = I64C(0); j < items; j++) {
				const i64 i = base + j * I64C(LOCAL_SIZE) + lid;
				if (i < count) {
					const i64 r = tri_row(k0 + i, upper, C, lead, n, a, T);
					STORE(dst, i, CAST(OUT_T, r));
					STORE(dst, count + i, CAST(OUT_T, tri_col(k0 + i, r, upper, C, lead, n, a, T)));
				}
			}
		}
	}
}

#endif
