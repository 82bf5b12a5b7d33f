/* diag_body.h: diagonal_scatter and its backward, shared by
 * clkernels/diag.cl and shaders/diag.comp. Wrappers define WORD (the
 * element word type: elements are copied as bits), WPTR, LOAD(p, i),
 * STORE(p, i, v) and the knobs.
 *
 * The diagonal tensor (src of diagonal_scatter) has the batch dims of the
 * full tensor, in order, then the diagonal of length L. The host coalesces
 * the batch dims into at most three runs that are contiguous in the full
 * tensor (sizes n0 x n1 x n2, strides s0, s1, s2), so any rank fits in the
 * kernel's arguments. Diagonal element t of batch b sits at
 *   base + t*dstride + b0*s0 + b1*s1 + b2*s2   (elements)
 * where base is the offset of the diagonal's first element and dstride the
 * sum of the strides of dim1 and dim2. */
#ifndef ACCEL_DIAG_BODY_H
#define ACCEL_DIAG_BODY_H

#include "elementwise.h"

#define DIAG_SCATTER 0 /* full[off(j)] = diag[j] */
#define DIAG_GATHER 1  /* diag[j] = full[off(j)] */
#define DIAG_ZERO 2    /* full[off(j)] = 0 */

i64 diag_offset(i64 j, i64 L, i64 base, i64 dstride, i64 n1, i64 n2, i64 s0, i64 s1, i64 s2) {
	const i64 t = j % L;
	i64 b = j / L;
	const i64 b2 = b % n2;
	b = b / n2;
	const i64 b1 = b % n1;
	const i64 b0 = b / n1;
	return base + t * dstride + b0 * s0 + b1 * s1 + b2 * s2;
}

void diag_run(WPTR full, WPTR diag, i64 count, i64 L, i64 base, i64 dstride,
	i64 n1, i64 n2, i64 s0, i64 s1, i64 s2, i64 mode) {
	const i64 tiles = ew_tiles(count);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 i = ew_index(tile, j);
			if (i < count) {
				const i64 off = diag_offset(i, L, base, dstride, n1, n2, s0, s1, s2);
				if (mode == I64C(DIAG_SCATTER)) {
					STORE(full, off, LOAD(diag, i));
				} else if (mode == I64C(DIAG_GATHER)) {
					STORE(diag, i, LOAD(full, off));
				} else {
					STORE(full, off, CAST(WORD, 0));
				}
			}
		}
	}
}

#endif
