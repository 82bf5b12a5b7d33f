/* sparse_body.h: sparse COO/CSR tensors and their elementwise ops, shared
 * by clkernels/sparse.cl and shaders/sparse.comp (entry points and knobs
 * declared in host/kernels: gen/sparse.h). An entry is addressed by its
 * key, the row-major linear index of its coordinates in the tensor's shape
 * (64-bit; the host checks that the shape's size fits). Include after
 * dtypes.h, memory.h and the wrapper's LDV/STV (elements of T on a BPTR)
 * and ATOM_MIN_U32.
 *
 *   sparse_coo_keys    keys of COO entries; a coordinate outside the shape
 *                      flags the entry's tile (err[0], atomic min)
 *   sparse_csr_totals  each batch's entry count (its last row pointer)
 *   sparse_csr_ptrs    global row pointers over the batches (each batch's
 *                      pointers restart at 0); a pointer that does not start
 *                      a batch at 0, decreases, or a total other than nnz
 *                      flags tile 0
 *   sparse_rowmerge    a merge path of the rows with the entries (so any mix
 *                      of long and empty rows balances: each work-item takes
 *                      `chunk` rows and entries together): mode 0, the keys
 *                      of CSR entries (a bad column flags its tile); mode 1,
 *                      where each row starts in sorted keys
 *   sparse_sorted      marks keys that are not strictly ascending
 *   sparse_runs        0-based run ids and the distinct keys of sorted keys
 *   sparse_count       a merge path of two ascending key lists (x first on
 *                      ties): each work-item finds its chunk's split by a
 *                      binary search, walks `chunk` merged positions and
 *                      counts the union entries starting there; the same
 *                      positions of x then y, by index, are checked for
 *                      ascent and set the unsorted marks
 *   sparse_emit        the same walk, after a scan of the counts: each union
 *                      entry's key, coordinates, op(x, y) with a missing
 *                      operand read as 0, and the gradients
 *   sparse_unkey, sparse_crows, sparse_to_dense, sparse_nonzero,
 *   sparse_from_dense  the conversions */
#ifndef ACCEL_SPARSE_BODY_H
#define ACCEL_SPARSE_BODY_H

#include "elementwise.h"

/* Index word i of p: int64 when wide, else int32 widened. */
i64 sp_ld(BPTR p, i64 i, i64 wide) {
	if (wide != I64C(0)) {
		return CAST(i64, LD64(p, i));
	}
	return LD32S(p, i);
}

i64 sp_key(BPTR p, i64 i) { return CAST(i64, LD64(p, i)); }

/* i clamped into [0, n) (0 when n is 0: buffers hold at least one word) */
i64 sp_clamp(i64 i, i64 n) { return max64(min64(i, n - I64C(1)), I64C(0)); }

void sp_flag(BPTR err, i64 k) { ATOM_MIN_U32(err, 0, CAST(u32, k >> ERR_TILE_SHIFT)); }

/* Writes key's coordinates (the last ndim dims of shape) into column k of
 * idx [ndim, n]. */
void sp_unkey(i64 key, BPTR idx, BPTR shape, i64 ndim, i64 k, i64 n) {
	for (i64 d = ndim - I64C(1); d >= I64C(0); d--) {
		const i64 s = sp_key(shape, d);
		ST64(idx, d * n + k, CAST(u64, key % s));
		key /= s;
	}
}

void sparse_coo_keys(SPARSE_COO_KEYS_PARAMS) {
	EW_FOR(nnz, k)
		i64 key = I64C(0);
		bool bad = false;
		for (i64 d = I64C(0); d < ndim; d++) {
			const i64 v = sp_ld(indices, d * nnz + k, wide);
			const i64 s = sp_key(shape, d);
			bad = bad || v < I64C(0) || v >= s;
			key = key * s + v;
		}
		if (bad) {
			sp_flag(err, k);
		}
		ST64(keys, k, CAST(u64, key));
	EW_END
}

void sparse_csr_totals(SPARSE_CSR_TOTALS_PARAMS) {
	EW_FOR(batch, b)
		ST64(tot, b, CAST(u64, sp_ld(crow, b * (rows + I64C(1)) + rows, wide)));
	EW_END
}

void sparse_csr_ptrs(SPARSE_CSR_PTRS_PARAMS) {
	const i64 per = rows + I64C(1);
	const i64 last = batch * per - I64C(1);
	EW_FOR(batch * per, q)
		const i64 b = q / per;
		const i64 r = q - b * per;
		const i64 v = sp_ld(crow, q, wide);
		const i64 o = has_off != I64C(0) ? sp_key(off, b) : I64C(0); /* off: crow when unused */
		if ((r == I64C(0) && v != I64C(0)) || (r > I64C(0) && v < sp_ld(crow, max64(q - I64C(1), I64C(0)), wide)) || v > nnz) {
			sp_flag(err, I64C(0));
		}
		if (r < rows) {
			ST64(gptr, b * rows + r, CAST(u64, o + v));
		}
		if (q == last) {
			ST64(gptr, batch * rows, CAST(u64, o + v));
			if (o + v != nnz) {
				sp_flag(err, I64C(0));
			}
		}
	EW_END
}

/* Sequence A of a row merge: mode 0, the rows' ends gptr[i+1]; mode 1, the
 * rows' first keys i*cols_n. Sequence B: mode 0, the entry positions j;
 * mode 1, the sorted keys. */
i64 sp_row_a(BPTR gptr, i64 i, i64 cols_n, i64 mode) {
	return mode == I64C(0) ? sp_key(gptr, i + I64C(1)) : i * cols_n;
}

i64 sp_row_b(BPTR keys, i64 j, i64 mode) { return mode == I64C(0) ? j : sp_key(keys, j); }

void sparse_rowmerge(SPARSE_ROWMERGE_PARAMS) {
	const i64 na = mode == I64C(0) ? grows : grows + I64C(1);
	const i64 total = na + n;
	EW_FOR((total + chunk - I64C(1)) / chunk, c)
		const i64 d0 = c * chunk;
		const i64 d1 = min64(d0 + chunk, total);
		i64 lo = max64(I64C(0), d0 - n);
		i64 hi = min64(d0, na);
		while (lo < hi) { /* merge path: A first on ties */
			const i64 mid = (lo + hi) >> 1;
			if (sp_row_a(gptr, mid, cols_n, mode) <= sp_row_b(keys, d0 - I64C(1) - mid, mode)) {
				lo = mid + I64C(1);
			} else {
				hi = mid;
			}
		}
		i64 i = lo;
		i64 j = d0 - lo;
		for (i64 p = d0; p < d1; p++) {
			const i64 a = sp_row_a(gptr, sp_clamp(i, na), cols_n, mode);
			if (i < na && (j >= n || a <= sp_row_b(keys, sp_clamp(j, n), mode))) {
				if (mode != I64C(0)) {
					ST64(gstart, i, CAST(u64, j)); /* row i starts at entry j */
				}
				i++;
			} else {
				if (mode == I64C(0)) { /* entry j lies in row i */
					const i64 col = sp_ld(cols, j, wide);
					if (col < I64C(0) || col >= cols_n) {
						sp_flag(err, j);
					}
					ST64(keys, j, CAST(u64, i * cols_n + col));
				}
				j++;
			}
		}
	EW_END
}

void sparse_sorted(SPARSE_SORTED_PARAMS) {
	EW_FOR(n, k)
		if (k > I64C(0) && sp_key(keys, k) <= sp_key(keys, max64(k - I64C(1), I64C(0)))) {
			ST32(err, slot, 1u);
		}
	EW_END
}

void sparse_runs(SPARSE_RUNS_PARAMS) {
	EW_FOR(n, i)
		const i64 s = sp_key(seg, i) - I64C(1);
		ST64(rid, i, CAST(u64, s));
		if (i == I64C(0) || LD64(keys, i) != LD64(keys, max64(i - I64C(1), I64C(0)))) {
			ST64(ukeys, s, LD64(keys, i));
		}
	EW_END
}

/* The split of merged position d0 of two ascending key lists (x first on
 * ties): how many of x's keys come before it. */
i64 sp_split(BPTR kx, BPTR ky, i64 nx, i64 ny, i64 d0) {
	i64 lo = max64(I64C(0), d0 - ny);
	i64 hi = min64(d0, nx);
	while (lo < hi) {
		const i64 mid = (lo + hi) >> 1;
		if (sp_key(kx, mid) <= sp_key(ky, d0 - I64C(1) - mid)) {
			lo = mid + I64C(1);
		} else {
			hi = mid;
		}
	}
	return lo;
}

/* The merged key before position i + j (-1 at the start; keys are >= 0). */
i64 sp_prev(BPTR kx, BPTR ky, i64 i, i64 j) {
	const i64 a = i > I64C(0) ? sp_key(kx, max64(i - I64C(1), I64C(0))) : I64C(-1);
	const i64 b = j > I64C(0) ? sp_key(ky, max64(j - I64C(1), I64C(0))) : I64C(-1);
	return max64(a, b);
}

void sparse_count(SPARSE_COUNT_PARAMS) {
	const i64 n = nx + ny;
	EW_FOR((n + chunk - I64C(1)) / chunk, c)
		const i64 d0 = c * chunk;
		const i64 d1 = min64(d0 + chunk, n);
		i64 i = sp_split(kx, ky, nx, ny, d0);
		i64 j = d0 - i;
		i64 prev = sp_prev(kx, ky, i, j);
		i64 heads = I64C(0);
		i64 bad = I64C(0);
		for (i64 p = d0; p < d1; p++) { /* branch-free steps */
			const i64 a = sp_key(kx, sp_clamp(i, nx));
			const i64 b = sp_key(ky, sp_clamp(j, ny));
			const bool fromx = j >= ny || (i < nx && a <= b);
			const i64 key = fromx ? a : b;
			/* The order check goes by index, not along the merge: on keys
			 * that do not ascend, the chunks' merge-path splits disagree and
			 * a walk may skip the very entries out of order (lavapipe's
			 * short chunks missed them: the soak's find). Position p checks
			 * entry p of the concatenation x then y against its predecessor. */
			const bool inx = p < nx;
			const i64 t = inx ? p : p - nx;
			const i64 cur = inx ? sp_key(kx, sp_clamp(t, nx)) : sp_key(ky, sp_clamp(t, ny));
			const i64 pre = inx ? sp_key(kx, sp_clamp(t - I64C(1), nx)) : sp_key(ky, sp_clamp(t - I64C(1), ny));
			bad |= (t > I64C(0) && cur <= pre) ? (inx ? I64C(1) : I64C(2)) : I64C(0);
			i += fromx ? I64C(1) : I64C(0);
			j += fromx ? I64C(0) : I64C(1);
			heads += key != prev ? I64C(1) : I64C(0);
			prev = key;
		}
		ST64(cnt, c, CAST(u64, heads));
		if ((bad & I64C(1)) != I64C(0)) {
			ST32(err, SP_FLAG_X_UNSORTED, 1u);
		}
		if ((bad & I64C(2)) != I64C(0)) {
			ST32(err, SP_FLAG_Y_UNSORTED, 1u);
		}
	EW_END
}

T sp_apply(i64 op, T a, T b) {
	if (op == I64C(SP_ADD)) {
		return a + b;
	}
	if (op == I64C(SP_SUB)) {
		return a - b;
	}
	if (op == I64C(SP_MUL)) {
		return a * b;
	}
	return a / b;
}

void sparse_emit(SPARSE_EMIT_PARAMS) {
	const i64 n = nx + ny;
	EW_FOR((n + chunk - I64C(1)) / chunk, c)
		const i64 d0 = c * chunk;
		const i64 d1 = min64(d0 + chunk, n);
		i64 i = sp_split(kx, ky, nx, ny, d0);
		i64 j = d0 - i;
		i64 prev = sp_prev(kx, ky, i, j);
		i64 r = sp_key(off, c);
		for (i64 p = d0; p < d1; p++) {
			const i64 ka = sp_key(kx, sp_clamp(i, nx));
			const i64 kb = sp_key(ky, sp_clamp(j, ny));
			const bool fromx = j >= ny || (i < nx && ka <= kb);
			const i64 key = fromx ? ka : kb;
			/* a head from x pairs with y's equal key, the next position */
			const bool pair = fromx && j < ny && kb == ka;
			const i64 xi = i;
			const i64 yj = j;
			i += fromx ? I64C(1) : I64C(0);
			j += fromx ? I64C(0) : I64C(1);
			if (key == prev) {
				continue; /* y's half of a pair, written with its head */
			}
			prev = key;
			/* loads at clamped positions: drivers that run both sides of
			 * a branch must not read out of bounds (the operands are
			 * never empty buffers, see union in accel/sparse.go) */
			const T a = fromx ? LDV(xv, sp_clamp(xi, nx)) : CAST(T, 0);
			const T b = (!fromx || pair) ? LDV(yv, sp_clamp(yj, ny)) : CAST(T, 0);
			const T v = sp_apply(op, a, b);
			STV(uval, r, v);
			ST64(ukeys, r, CAST(u64, key));
			sp_unkey(key, uidx, shape, ndim, r, u);
			if (grad != I64C(0)) {
				const T g = LDV(gout, r);
				T ga = g;
				T gb = g;
				if (op == I64C(SP_SUB)) {
					gb = -g;
				} else if (op == I64C(SP_MUL)) {
					ga = g * b;
					gb = g * a;
				} else if (op == I64C(SP_DIV)) {
					ga = g / b;
					gb = -g * (v / b);
				}
				STV(gx, r, ga);
				STV(gy, r, gb);
			}
			r++;
		}
	EW_END
}

void sparse_unkey(SPARSE_UNKEY_PARAMS) {
	EW_FOR(n, k)
		sp_unkey(sp_key(keys, k), idx, shape, ndim, k, n);
	EW_END
}

void sparse_crows(SPARSE_CROWS_PARAMS) {
	const i64 per = rows + I64C(1);
	EW_FOR(batch * per, q)
		const i64 b = q / per;
		const i64 r = q - b * per;
		ST64(crow, q, CAST(u64, sp_key(gstart, b * rows + r) - sp_key(gstart, b * rows)));
	EW_END
}

void sparse_to_dense(SPARSE_TO_DENSE_PARAMS) {
	EW_FOR(n, k)
		STV(dense, sp_key(keys, k), LDV(vals, k));
	EW_END
}

void sparse_nonzero(SPARSE_NONZERO_PARAMS) {
	EW_FOR(n, i)
		ST64(nz, i, LDV(dense, i) != CAST(T, 0) ? 1ul : 0ul);
	EW_END
}

void sparse_from_dense(SPARSE_FROM_DENSE_PARAMS) {
	EW_FOR(n, i)
		const T v = LDV(dense, i);
		if (v != CAST(T, 0)) {
			const i64 p = sp_key(pos, i);
			ST64(keys, p, CAST(u64, i));
			STV(vals, p, v);
		}
	EW_END
}

#endif
