/* diag_body.h: diagonal_scatter and its backward, shared by
 * clkernels/diag.cl and shaders/diag.comp (entry points and knobs declared
 * in host/kernels: gen/diag.h). Wrappers define WORD (the element word
 * type: elements are copied as bits), LOAD(p, i) and STORE(p, i, v).
 *
 * The diagonal tensor (src of diagonal_scatter) has the batch dims of the
 * full tensor, in order, then the diagonal of length L. The host coalesces
 * the batch dims into at most three runs that are contiguous in the full
 * tensor (sizes n0 x n1 x n2, strides s0, s1, s2), so any rank fits in the
 * kernel's arguments. Diagonal element t of batch b sits at
 *   base + t*dstride + b0*s0 + b1*s1 + b2*s2   (elements)
 * where base is the offset of the diagonal's first element and dstride the
 * sum of the strides of dim1 and dim2. The entry points:
 *   diag_scatter  full[off(j)] = diag[j]
 *   diag_gather   diag[j] = full[off(j)]
 *   diag_zero     full[off(j)] = 0 */
#ifndef ACCEL_DIAG_BODY_H
#define ACCEL_DIAG_BODY_H

#include "elementwise.h"

i64 diag_offset(i64 j, i64 L, i64 base, i64 dstride, i64 n1, i64 n2, i64 s0, i64 s1, i64 s2) {
	i64 b = udiv64(j, L);
	const i64 t = j - b * L;
	i64 q = udiv64(b, n2);
	const i64 b2 = b - q * n2;
	b = q;
	q = udiv64(b, n1);
	const i64 b1 = b - q * n1;
	const i64 b0 = q;
	return base + t * dstride + b0 * s0 + b1 * s1 + b2 * s2;
}

/* Element op at offset off of full and i of diag (op: a literal at each
 * entry: 0 scatter, 1 gather, 2 zero). */
#define DIAG_STEP(off, i) \
	if (op == 0) { \
		STORE(full, off, LOAD(diag, i)); \
	} else if (op == 1) { \
		STORE(diag, i, LOAD(full, off)); \
	} else { \
		STORE(full, off, CAST(WORD, 0)); \
	}

/* One walk over the diagonal's count elements; op is a literal at each
 * entry, so each compiles to its own loop. With CONTIG == 1 (CPU plans)
 * each work-item's ITEMS elements of a tile are consecutive: the offset of
 * the first is computed once and the rest step along the diagonal and
 * carry into the batch indices, with no division per element (three 64-bit
 * divisions per element cost more than the element's memory traffic). */
void diag_walk(BPTR full, BPTR diag, i64 count, i64 L, i64 base, i64 dstride,
	i64 n1, i64 n2, i64 s0, i64 s1, i64 s2, int op) { /* 32-ok: an op code, 0..2 */
	if (CONTIG == 1) {
		const i64 tiles = ew_tiles(count);
		for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
			const i64 lo = ew_index(tile, I64C(0));
			const i64 hi = min64(lo + I64C(ITEMS), count);
			if (lo >= hi) {
				continue;
			}
			i64 b = udiv64(lo, L);
			i64 t = lo - b * L;
			i64 q = udiv64(b, n2);
			i64 b2 = b - q * n2;
			b = q;
			q = udiv64(b, n1);
			i64 b1 = b - q * n1;
			i64 b0 = q;
			i64 off = base + t * dstride + b0 * s0 + b1 * s1 + b2 * s2;
			for (i64 i = lo; i < hi; i++) {
				DIAG_STEP(off, i)
				t++;
				off += dstride;
				if (t == L) {
					t = I64C(0);
					b2++;
					if (b2 == n2) {
						b2 = I64C(0);
						b1++;
						if (b1 == n1) {
							b1 = I64C(0);
							b0++;
						}
					}
					off = base + b0 * s0 + b1 * s1 + b2 * s2;
				}
			}
		}
		return;
	}
	EW_FOR(count, i)
		const i64 off = diag_offset(i, L, base, dstride, n1, n2, s0, s1, s2);
		DIAG_STEP(off, i)
	EW_END
}

INLINE void diag_scatter(DIAG_SCATTER_PARAMS) {
	diag_walk(full, diag, count, L, base, dstride, n1, n2, s0, s1, s2, 0);
}

INLINE void diag_gather(DIAG_GATHER_PARAMS) {
	diag_walk(full, diag, count, L, base, dstride, n1, n2, s0, s1, s2, 1);
}

INLINE void diag_zero(DIAG_ZERO_PARAMS) {
	diag_walk(full, full, count, L, base, dstride, n1, n2, s0, s1, s2, 2);
}

#endif
