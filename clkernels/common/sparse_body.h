/* sparse_body.h: sparse COO/CSR tensors and their elementwise ops, shared
 * by clkernels/sparse.cl and shaders/sparse.comp (entry points and knobs
 * declared in host/kernels: gen/sparse.h). An entry is addressed by its
 * key, the row-major linear index of its coordinates in the tensor's shape
 * (64-bit; the host checks that the shape's size fits). Include after
 * dtypes.h, memory.h and the wrapper's LDV/STV (elements of T on a BPTR)
 * and ATOM_MIN_U32, ATOM_ADD_U32 (returning the old value).
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
 *   sparse_rcount      the CPU-shaped union of two row-sorted operands (CSR
 *                      rows, or COO keys as one row): a sequence of each
 *                      row's marker then its x and y entries, cut into
 *                      chunks of `chunk` positions (one per work-item, so a
 *                      long row splits and empty rows cost a step each);
 *                      each chunk finds its start and end by a search over
 *                      the rows and one merge-path search inside the row,
 *                      then runs a plain two-pointer merge per row and
 *                      counts the union entries; its share of each
 *                      operand's entries, by index, is checked for range
 *                      and ascent within its row (the unsorted marks)
 *   sparse_remit       the same walk after a scan of the counts: each union
 *                      entry's column (or coordinates), value and gradients,
 *                      and where each row starts in the result
 *   sparse_rmerge      the one-pass union (CSR, no gradients): the walk
 *                      writes each chunk's entries into a scratch from
 *                      the chunk's first position on, counts them and checks
 *                      the chunk's entries as sparse_rcount does
 *   sparse_rcopy       after a scan of those counts: each chunk's entries
 *                      copied to their place, its rows' starts shifted
 *   sparse_bhist       the CPU-shaped coalescing: counts keys per bucket
 *                      (the keys' high bits, key >> shift; atomic adds)
 *   sparse_bscatter    scatters each key, its input position and value into
 *                      its bucket, one record each (after an exclusive scan
 *                      of the counts; in any order inside the bucket)
 *   sparse_bsort       sorts each bucket by (key, input position):
 *                      insertion sort, heapsort for long buckets; counts
 *                      its distinct keys
 *   sparse_bsum        after a scan of those counts: each distinct key and
 *                      its values summed in input order from -0 (the
 *                      reference's bits)
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

void sp_flag(BPTR err, i64 k) { ATOM_MIN_U32(err, 0, CAST(u32, k >> ERR_TILE_SHIFT)); } /* 32-ok: k >> ERR_TILE_SHIFT (16) < 2^32 for positions < 2^48 */

/* Writes key's coordinates (the last ndim dims of shape) into column k of
 * idx [ndim, n]. */
void sp_unkey(i64 key, BPTR idx, BPTR shape, i64 ndim, i64 k, i64 n) {
	for (i64 d = ndim - I64C(1); d >= I64C(0); d--) {
		const i64 s = sp_key(shape, d);
		const i64 q = udiv64(key, s);
		ST64(idx, d * n + k, CAST(u64, key - q * s));
		key = q;
	}
}

/* The key of COO entry k of indices [ndim, nnz], or -1 where a coordinate
 * lies outside shape. */
i64 sp_ckey(BPTR indices, i64 wide, BPTR shape, i64 ndim, i64 nnz, i64 k) {
	i64 key = I64C(0);
	bool bad = false;
	for (i64 d = I64C(0); d < ndim; d++) {
		const i64 v = sp_ld(indices, d * nnz + k, wide);
		const i64 s = sp_key(shape, d);
		bad = bad || v < I64C(0) || v >= s;
		key = key * s + v;
	}
	return bad ? I64C(-1) : key;
}

INLINE void sparse_coo_keys(SPARSE_COO_KEYS_PARAMS) {
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

INLINE void sparse_csr_totals(SPARSE_CSR_TOTALS_PARAMS) {
	EW_FOR(batch, b)
		ST64(tot, b, CAST(u64, sp_ld(crow, b * (rows + I64C(1)) + rows, wide)));
	EW_END
}

INLINE void sparse_csr_ptrs(SPARSE_CSR_PTRS_PARAMS) {
	const i64 per = rows + I64C(1);
	const i64 last = batch * per - I64C(1);
	EW_FOR(batch * per, q)
		const i64 b = udiv64(q, per);
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

INLINE void sparse_rowmerge(SPARSE_ROWMERGE_PARAMS) {
	const i64 na = mode == I64C(0) ? grows : grows + I64C(1);
	const i64 total = na + n;
	EW_FOR(cdiv64(total, chunk), c)
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

INLINE void sparse_sorted(SPARSE_SORTED_PARAMS) {
	EW_FOR(n, k)
		if (k > I64C(0) && sp_key(keys, k) <= sp_key(keys, max64(k - I64C(1), I64C(0)))) {
			ST32(err, slot, 1u);
		}
	EW_END
}

INLINE void sparse_runs(SPARSE_RUNS_PARAMS) {
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

INLINE void sparse_count(SPARSE_COUNT_PARAMS) {
	const i64 n = nx + ny;
	EW_FOR(cdiv64(n, chunk), c)
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
		return WRAP_ADD(a, b);
	}
	if (op == I64C(SP_SUB)) {
		return T_SUB(a, b);
	}
	if (op == I64C(SP_MUL)) {
		return WRAP_MUL(a, b);
	}
	return T_DIV(a, b);
}

/* The gradients of union entry pos for g, the result's gradient there:
 * va, vb its operands (a missing one 0), v = op(va, vb). */
void sp_grads(i64 op, T g, T va, T vb, T v, BPTR gxo, BPTR gyo, i64 pos) {
	T ga = g;
	T gb = g;
	if (op == I64C(SP_SUB)) {
		gb = T_NEG(g);
	} else if (op == I64C(SP_MUL)) {
		ga = WRAP_MUL(g, vb);
		gb = WRAP_MUL(g, va);
	} else if (op == I64C(SP_DIV)) {
		ga = T_DIV(g, vb);
		gb = WRAP_MUL(T_NEG(g), T_DIV(v, vb));
	}
	STV(gxo, pos, ga);
	STV(gyo, pos, gb);
}

INLINE void sparse_emit(SPARSE_EMIT_PARAMS) {
	const i64 n = nx + ny;
	EW_FOR(cdiv64(n, chunk), c)
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
				sp_grads(op, LDV(gout, r), a, b, v, gx, gy, r);
			}
			r++;
		}
	EW_END
}

/* The row union (sparse_rcount, sparse_remit). Row r's x entries are
 * [gx[r], gx[r+1]) of cx (pointers clamped into [0, nx], so bad pointers
 * cannot read out of bounds); its marker sits at position
 * f(r) = gx[r] + gy[r] + r of the sequence, followed by its merged
 * entries. */
i64 sp_rp(BPTR g, i64 r, i64 n) { return sp_clamp(sp_key(g, r), n + I64C(1)); }

i64 sp_rf(BPTR gx, BPTR gy, i64 r, i64 nx, i64 ny) { return sp_rp(gx, r, nx) + sp_rp(gy, r, ny) + r; }

/* The row of position d: the last r in [0, g] with f(r) <= d. */
i64 sp_rrow(BPTR gx, BPTR gy, i64 g, i64 nx, i64 ny, i64 d) {
	i64 lo = I64C(0);
	i64 hi = g;
	while (lo < hi) {
		const i64 mid = (lo + hi + I64C(1)) >> 1;
		if (sp_rf(gx, gy, mid, nx, ny) <= d) {
			lo = mid;
		} else {
			hi = mid - I64C(1);
		}
	}
	return lo;
}

/* How many of row r's first m merged entries come from x (x first on
 * ties); the row's x entries start at xa (nxr of them), y's at ya. */
i64 sp_rsplit(BPTR cx, i64 wx, BPTR cy, i64 wy, i64 xa, i64 nxr, i64 ya, i64 nyr, i64 m, i64 nx, i64 ny) {
	i64 lo = max64(I64C(0), m - nyr);
	i64 hi = max64(min64(m, nxr), lo);
	while (lo < hi) {
		const i64 mid = (lo + hi) >> 1;
		if (sp_ld(cx, sp_clamp(xa + mid, nx), wx) <= sp_ld(cy, sp_clamp(ya + m - I64C(1) - mid, ny), wy)) {
			lo = mid + I64C(1);
		} else {
			hi = mid;
		}
	}
	return lo;
}

/* Checks entries [k0, k1) of one operand, which rows r0..r1 hold, by
 * index: a column outside [0, lim) flags err[0]; a column not above its
 * predecessor in its row sets flag word slot. The loop over the entries
 * counts every descent c[k] <= c[k-1] (no branch: CPU compilers vectorize
 * it), and the rows' first entries take theirs back. */
void sp_rcheck(BPTR c, i64 w, BPTR gp, i64 g, i64 n, i64 r0, i64 r1, i64 k0, i64 k1, i64 lim, BPTR err, i64 slot) {
	i64 pv = sp_ld(c, sp_clamp(k0 - I64C(1), n), w); /* k0 = 0: entry 0 against itself, a row's first */
	i64 desc = I64C(0);
	i64 range = I64C(0);
	for (i64 k = k0; k < k1; k++) {
		const i64 v = sp_ld(c, k, w);
		range |= CAST(u64, v) >= CAST(u64, lim) ? I64C(1) : I64C(0);
		desc += v <= pv ? I64C(1) : I64C(0);
		pv = v;
	}
	for (i64 r = r0; r <= r1 && r < g; r++) {
		const i64 s = sp_rp(gp, r, n);
		if (s < sp_rp(gp, r + I64C(1), n) && s >= k0 && s < k1 &&
			(s == I64C(0) || sp_ld(c, s, w) <= sp_ld(c, sp_clamp(s - I64C(1), n), w))) {
			desc--;
		}
	}
	if (range != I64C(0)) {
		sp_flag(err, k0);
	}
	if (desc != I64C(0)) {
		ST32(err, slot, 1u);
	}
}

/* v where b holds, else +0 (a selected 0, never a literal one: lavapipe
 * folds 0 * v to 0, which must be NaN for v = inf or NaN). */
T sp_keep(T v, bool b) { return FROM_BITS(TO_BITS(v) & (b ? ~CAST(UBITS, 0) : CAST(UBITS, 0))); }

/* Writes union entry pos: its column (or with ndim > 1 the coordinates of
 * its key), op(va, vb) and, with grad, the gradients. */
INLINE void sp_rput(i64 col, T va, T vb, BPTR gout, BPTR uidx, BPTR uval, BPTR gxo, BPTR gyo, BPTR shape, i64 ndim, i64 u, i64 op,
	i64 grad, i64 pos) {
	const T v = sp_apply(op, va, vb);
	STV(uval, pos, v);
	if (ndim == I64C(1)) {
		ST64(uidx, pos, CAST(u64, col));
	} else {
		sp_unkey(col, uidx, shape, ndim, pos, u);
	}
	if (grad != I64C(0)) {
		sp_grads(op, LDV(gout, pos), va, vb, v, gxo, gyo, pos);
	}
}

/* The walk of chunk c: counts its union entries and, with emit 1 or 2,
 * writes them from position pos0 on (columns, or with ndim > 1 the
 * coordinates of keys in shape), their values and gradients, and each
 * row's start in gstart; with emit 0 or 2 it checks the chunk's entries
 * of each operand (sp_rcheck, columns below lim). Returns the count.
 *
 * Inside a row, while both operands have entries left, a step takes x's
 * column, y's or an equal pair, chosen by selects; the next columns are
 * loaded a step ahead, so that the loop's dependence from one step to
 * the next is a compare and a select, not a load (a merge of random
 * columns mispredicts a branch or waits on a load at every step
 * otherwise). Then one operand's rest: without emit just counted. */
INLINE i64 sp_rwalk(BPTR gx, BPTR gy, BPTR cx, BPTR cy, i64 wx, i64 wy, BPTR xv, BPTR yv, BPTR gout, BPTR uidx, BPTR uval,
	BPTR gxo, BPTR gyo, BPTR gstart, BPTR shape, i64 ndim, i64 g, i64 nx, i64 ny, i64 u, i64 chunk, i64 c,
	i64 emit, i64 op, i64 grad, i64 pos0, i64 lim, BPTR err) {
	const i64 total = nx + ny + g;
	const i64 d0 = c * chunk;
	const i64 d1 = min64(d0 + chunk, total);
	const i64 rs = sp_rrow(gx, gy, g, nx, ny, d0);
	const i64 re = sp_rrow(gx, gy, g, nx, ny, d1);
	const i64 f0 = sp_rf(gx, gy, rs, nx, ny);
	const i64 fe = sp_rf(gx, gy, re, nx, ny);
	/* the start inside row rs, and the merged column before it */
	i64 is = sp_rp(gx, rs, nx);
	i64 js = sp_rp(gy, rs, ny);
	i64 prev = I64C(-1);
	if (d0 > f0 && rs < g) {
		const i64 m = d0 - f0 - I64C(1);
		const i64 t = sp_rsplit(cx, wx, cy, wy, is, sp_rp(gx, rs + I64C(1), nx) - is, js,
			sp_rp(gy, rs + I64C(1), ny) - js, m, nx, ny);
		const i64 a = t > I64C(0) ? sp_ld(cx, sp_clamp(is + t - I64C(1), nx), wx) : I64C(-1);
		const i64 b = m - t > I64C(0) ? sp_ld(cy, sp_clamp(js + m - t - I64C(1), ny), wy) : I64C(-1);
		prev = max64(a, b);
		is += t;
		js += m - t;
	}
	/* the end inside row re */
	i64 ie = sp_rp(gx, re, nx);
	i64 je = sp_rp(gy, re, ny);
	if (d1 > fe && re < g) {
		const i64 m = d1 - fe - I64C(1);
		const i64 t = sp_rsplit(cx, wx, cy, wy, ie, sp_rp(gx, re + I64C(1), nx) - ie, je,
			sp_rp(gy, re + I64C(1), ny) - je, m, nx, ny);
		ie += t;
		je += m - t;
	}
	if (emit != I64C(1)) { /* bounded by the chunk when pointers are bad */
		sp_rcheck(cx, wx, gx, g, nx, rs, min64(re, rs + d1 - d0), is, min64(ie, is + d1 - d0), lim, err, I64C(SP_FLAG_X_UNSORTED));
		sp_rcheck(cy, wy, gy, g, ny, rs, min64(re, rs + d1 - d0), js, min64(je, js + d1 - d0), lim, err, I64C(SP_FLAG_Y_UNSORTED));
	}
	const i64 spbig = ~(I64C(1) << I64C(63)); /* past any column */
	i64 pos = pos0;
	i64 steps = d1 - d0; /* a bound on the walk when pointers are bad */
	for (i64 r = rs; r <= re && r < g && steps > I64C(0); r++) {
		i64 i = r == rs ? is : sp_rp(gx, r, nx);
		i64 j = r == rs ? js : sp_rp(gy, r, ny);
		const i64 yr = sp_rp(gy, r + I64C(1), ny);
		if (r == rs ? d0 == f0 : (r < re || d1 > fe)) { /* the row's marker */
			steps--;
			if (emit != I64C(0)) {
				ST64(gstart, r, CAST(u64, pos));
			}
		}
		const i64 xe = min64(r == re ? ie : sp_rp(gx, r + I64C(1), nx), i + max64(steps, I64C(0)));
		i64 ye = min64(r == re ? je : yr, j + max64(steps, I64C(0)));
		const i64 i0 = i;
		const i64 j0 = j;
		/* the y half of a pair whose x head ended the previous chunk */
		if (r == rs && j < ye && prev >= I64C(0) && sp_ld(cy, sp_clamp(j, ny), wy) == prev) {
			j++;
		}
		/* the fast steps, while both operands have columns left and the
		 * look-ahead stays inside the buffers */
		const i64 xg = min64(xe, nx - I64C(1));
		const i64 yg = min64(ye, ny - I64C(1));
		u64 hi = CAST(u64, 0);
		if (i < xg && j < yg) {
			i64 a0 = sp_ld(cx, i, wx);
			i64 b0 = sp_ld(cy, j, wy);
			i64 a1 = sp_ld(cx, i + I64C(1), wx);
			i64 b1 = sp_ld(cy, j + I64C(1), wy);
			do {
				const bool tx = a0 <= b0;
				const bool ty = b0 <= a0;
				if (emit != I64C(0)) {
					sp_rput(tx ? a0 : b0, sp_keep(LDV(xv, i), tx), sp_keep(LDV(yv, j), ty), gout, uidx, uval, gxo, gyo,
						shape, ndim, u, op, grad, pos);
				}
				/* the look-ahead columns' maximum, checked below: a
				 * second use keeps each load in a register, which LLVM's
				 * x86 backend would otherwise fold into the select and
				 * turn into a branch that mispredicts half the time */
				hi = max(hi, max(CAST(u64, a1), CAST(u64, b1)));
				pos++;
				i += tx ? I64C(1) : I64C(0);
				j += ty ? I64C(1) : I64C(0);
				a0 = tx ? a1 : a0;
				b0 = ty ? b1 : b0;
				a1 = sp_ld(cx, i + I64C(1), wx);
				b1 = sp_ld(cy, j + I64C(1), wy);
			} while (i < xg && j < yg);
			if (hi >= CAST(u64, lim)) { /* columns of either buffer */
				sp_flag(err, i);
			}
		}
		if (emit == I64C(0) && (i >= xe || j >= ye)) { /* one operand's rest */
			pos += max64(xe - i, I64C(0)) + max64(ye - j, I64C(0));
			i = max64(i, xe);
			j = max64(j, ye);
		}
		/* the rest, step by step: one operand's rest, or the last columns
		 * of a buffer (both columns and both values loaded at clamped
		 * positions, the step chosen by selects) */
		while (i < xe || j < ye) {
			const i64 a = sp_ld(cx, sp_clamp(i, nx), wx);
			const i64 b = sp_ld(cy, sp_clamp(j, ny), wy);
			const bool ix = i < xe;
			const bool jy = j < ye;
			const i64 ea = ix ? a : spbig;
			const i64 eb = jy ? b : spbig;
			const bool tx = ix && ea <= eb;
			const bool ty = jy && eb <= ea;
			if (emit != I64C(0)) {
				/* x's head pairs with y's equal column: the same step, or
				 * the next chunk's first */
				const bool pair = tx && j < yr && b == a;
				sp_rput(tx ? a : b, sp_keep(LDV(xv, sp_clamp(i, nx)), tx), sp_keep(LDV(yv, sp_clamp(j, ny)), ty || pair),
					gout, uidx, uval, gxo, gyo, shape, ndim, u, op, grad, pos);
			}
			pos++;
			i += tx ? I64C(1) : I64C(0);
			j += ty ? I64C(1) : I64C(0);
		}
		steps -= (i - i0) + (j - j0);
	}
	if (emit != I64C(0) && d1 == total) {
		ST64(gstart, g, CAST(u64, pos));
	}
	return pos - pos0;
}

INLINE void sparse_rcount(SPARSE_RCOUNT_PARAMS) {
	const i64 total = nx + ny + g;
	const i64 lim = cols_n >= I64C(0) ? cols_n : ~(I64C(1) << I64C(63));
	EW_FOR(max64(cdiv64(total, chunk), I64C(1)), c) /* one chunk for an empty sequence */
		ST64(cnt, c, CAST(u64, sp_rwalk(gx, gy, cx, cy, wide_x, wide_y, cx, cy, cx, cx, cx, cx, cx, cx, cx, I64C(1),
			g, nx, ny, I64C(0), chunk, c, I64C(0), I64C(0), I64C(0), I64C(0), lim, err)));
	EW_END
}

INLINE void sparse_remit(SPARSE_REMIT_PARAMS) {
	const i64 total = nx + ny + g;
	const i64 lim = cols_n >= I64C(0) ? cols_n : ~(I64C(1) << I64C(63));
	EW_FOR(max64(cdiv64(total, chunk), I64C(1)), c)
		sp_rwalk(gx, gy, cx, cy, wide_x, wide_y, xv, yv, gout, uidx, uval, gxo, gyo, gstart, shape, ndim,
			g, nx, ny, u, chunk, c, I64C(1), op, grad, sp_key(off, c), lim, err);
	EW_END
}

/* The one-pass row union (sparse_rmerge, then sparse_rcopy after a scan
 * of the counts): chunk c's walk writes its union entries into a scratch
 * from its first position c*chunk on (a chunk of `chunk` positions holds
 * at most `chunk` entries), with each row's start there, and checks its
 * entries; the copy moves each chunk's entries to their place and shifts
 * the rows' starts by the same distance. */
INLINE void sparse_rmerge(SPARSE_RMERGE_PARAMS) {
	const i64 total = nx + ny + g;
	const i64 lim = cols_n >= I64C(0) ? cols_n : ~(I64C(1) << I64C(63));
	EW_FOR(max64(cdiv64(total, chunk), I64C(1)), c)
		ST64(cnt, c, CAST(u64, sp_rwalk(gx, gy, cx, cy, wide_x, wide_y, xv, yv, xv, scol, sval, xv, xv, gstart, xv, I64C(1),
			g, nx, ny, I64C(0), chunk, c, I64C(2), op, I64C(0), c * chunk, lim, err)));
	EW_END
}

INLINE void sparse_rcopy(SPARSE_RCOPY_PARAMS) {
	const i64 total = nx + ny + g;
	const i64 chunks = max64(cdiv64(total, chunk), I64C(1));
	EW_FOR(chunks, c)
		const i64 d0 = c * chunk;
		const i64 d1 = min64(d0 + chunk, total);
		const i64 o = sp_key(off, c);
		const i64 n = (c + I64C(1) < chunks ? sp_key(off, min64(c + I64C(1), chunks - I64C(1))) : u) - o;
		for (i64 k = I64C(0); k < n; k++) {
			ST64(uidx, o + k, LD64(scol, d0 + k));
			STV(uval, o + k, LDV(sval, d0 + k));
		}
		/* the rows whose markers lie in the chunk */
		i64 r = sp_rrow(gx, gy, g, nx, ny, d0);
		r += sp_rf(gx, gy, r, nx, ny) < d0 ? I64C(1) : I64C(0);
		for (; r < g && sp_rf(gx, gy, r, nx, ny) < d1; r++) {
			ST64(gstart, r, CAST(u64, sp_key(gstart, r) - d0 + o));
		}
		if (d1 == total) {
			ST64(gstart, g, CAST(u64, u));
		}
	EW_END
}

/* The bucket coalescing (sparse_bhist .. sparse_bsum): rec holds the
 * entries by bucket as records of 32-bit words, so that the scatter
 * moves each entry with one cache line instead of three: the key (words
 * 0-1), the input position (word 2) and the value (word 3 with float32;
 * words 4-5 with float64, word 3 unused). */
#if DT == 4
#define SP_RW I64C(6)
#define SP_RV(p) ((p) * I64C(3) + I64C(2))
#else
#define SP_RW I64C(4)
#define SP_RV(p) ((p) * I64C(4) + I64C(3))
#endif

u64 sp_rkey(BPTR rec, i64 p) { return LD64(rec, p * (SP_RW >> I64C(1))); }

u32 sp_rpos(BPTR rec, i64 p) { return LD32(rec, p * SP_RW + I64C(2)); } /* 32-ok: an input position, < n < 2^31 (bucket path only, accel/sparse_plan.go planCoalesce) */

T sp_rval(BPTR rec, i64 p) { return LDV(rec, SP_RV(p)); }

void sp_rset(BPTR rec, i64 p, u64 key, u32 x, T v) { /* 32-ok: an input position, < n < 2^31 (bucket path only, accel/sparse_plan.go planCoalesce) */
	ST64(rec, p * (SP_RW >> I64C(1)), key);
	ST32(rec, p * SP_RW + I64C(2), x);
	STV(rec, SP_RV(p), v);
}

i64 sp_bucket(i64 key, i64 shift) { return CAST(i64, CAST(u64, key) >> CAST(u64, shift)); }

INLINE void sparse_bhist(SPARSE_BHIST_PARAMS) {
	EW_FOR(n, i)
		ATOM_ADD_U32(cnt, sp_bucket(sp_key(keys, i), shift), 1u);
	EW_END
}

INLINE void sparse_bscatter(SPARSE_BSCATTER_PARAMS) {
	EW_FOR(n, i)
		const i64 key = sp_key(keys, i);
		const i64 b = sp_bucket(key, shift);
		const u32 old = ATOM_ADD_U32(cnt, b, 0xffffffffu); /* fills each bucket from its end; 32-ok: a bucket count, < n < 2^31 (accel/sparse_plan.go planCoalesce) */
		const i64 p = sp_clamp(CAST(i64, LD32(start, b)) + CAST(i64, old) - I64C(1), n);
		sp_rset(rec, p, CAST(u64, key), CAST(u32, i), LDV(vals, i)); /* 32-ok: an input position, < n < 2^31 (accel/sparse_plan.go planCoalesce) */
	EW_END
}

/* Entry p before entry q: by key, then by input position. */
bool sp_bless(BPTR rec, i64 p, i64 q) {
	const u64 a = sp_rkey(rec, p);
	const u64 b = sp_rkey(rec, q);
	return a < b || (a == b && sp_rpos(rec, p) < sp_rpos(rec, q));
}

void sp_bswap(BPTR rec, i64 p, i64 q) {
	const u64 k = sp_rkey(rec, p);
	const u32 x = sp_rpos(rec, p); /* 32-ok: an input position, < n < 2^31 (bucket path only, accel/sparse_plan.go planCoalesce) */
	const T v = sp_rval(rec, p);
	sp_rset(rec, p, sp_rkey(rec, q), sp_rpos(rec, q), sp_rval(rec, q));
	sp_rset(rec, q, k, x, v);
}

/* Sifts entry s+root down the max-heap of the len entries from s. */
void sp_bsift(BPTR rec, i64 s, i64 root, i64 len) {
	i64 r = root;
	while (I64C(2) * r + I64C(1) < len) {
		i64 c = I64C(2) * r + I64C(1);
		if (c + I64C(1) < len && sp_bless(rec, s + c, s + c + I64C(1))) {
			c++;
		}
		if (!sp_bless(rec, s + r, s + c)) {
			break;
		}
		sp_bswap(rec, s + r, s + c);
		r = c;
	}
}

i64 sp_bend(BPTR start, i64 b, i64 nb, i64 n) { return b + I64C(1) < nb ? CAST(i64, LD32(start, b + I64C(1))) : n; }

INLINE void sparse_bsort(SPARSE_BSORT_PARAMS) {
	EW_FOR(nb, b)
		const i64 s = CAST(i64, LD32(start, b));
		const i64 e = min64(sp_bend(start, b, nb, n), n);
		const i64 len = e - s;
		if (len <= I64C(32)) {
			for (i64 a = s + I64C(1); a < e; a++) {
				const u64 k = sp_rkey(rec, a);
				const u32 x = sp_rpos(rec, a); /* 32-ok: an input position, < n < 2^31 (bucket path only, accel/sparse_plan.go planCoalesce) */
				const T v = sp_rval(rec, a);
				i64 q = a - I64C(1);
				while (q >= s && (sp_rkey(rec, max64(q, s)) > k || (sp_rkey(rec, max64(q, s)) == k && sp_rpos(rec, max64(q, s)) > x))) {
					sp_rset(rec, q + I64C(1), sp_rkey(rec, q), sp_rpos(rec, q), sp_rval(rec, q));
					q--;
				}
				sp_rset(rec, q + I64C(1), k, x, v);
			}
		} else {
			for (i64 r = (len >> 1) - I64C(1); r >= I64C(0); r--) {
				sp_bsift(rec, s, r, len);
			}
			for (i64 m = len - I64C(1); m > I64C(0); m--) {
				sp_bswap(rec, s, s + m);
				sp_bsift(rec, s, I64C(0), m);
			}
		}
		i64 distinct = I64C(0);
		for (i64 p = s; p < e; p++) {
			distinct += (p == s || sp_rkey(rec, p) != sp_rkey(rec, max64(p - I64C(1), I64C(0)))) ? I64C(1) : I64C(0);
		}
		ST64(ucnt, b, CAST(u64, distinct));
	EW_END
}

INLINE void sparse_bsum(SPARSE_BSUM_PARAMS) {
	EW_FOR(nb, b)
		const i64 s = CAST(i64, LD32(start, b));
		const i64 e = min64(sp_bend(start, b, nb, n), n);
		i64 o = sp_key(uoff, b);
		i64 p = s;
		while (p < e) {
			const u64 key = sp_rkey(rec, p);
			T acc = -CAST(T, 0);
			while (p < e && sp_rkey(rec, min64(p, e - I64C(1))) == key) {
				acc = acc + sp_rval(rec, p);
				p++;
			}
			ST64(ukeys, o, key);
			STV(uvals, o, acc);
			o++;
		}
	EW_END
}

/* The CPU-shaped union of two COO operands (sparse_upart .. sparse_uemit):
 * entry e of the concatenation x then y has the doubled key
 * k2 = 2*key + (e is y's), so that sorting by k2 puts a key's x entries
 * before its y entries; bucket k2 >> shift holds the high bits and a
 * record keeps the low `shift` bits (u32, shift <= 32) and the value.
 * Every step is stable (chunks, buckets, sub-buckets in input order), so
 * a key's entries of each operand are summed in input order. */

/* The doubled key of entry i of an operand (tag 0: x, 1: y), or -1 where
 * a coordinate lies outside the shape; s0, s1: shape[0..1] (2-D: no loop). */
i64 sp_ukey2(BPTR idx, i64 wide, BPTR shape, i64 ndim, i64 s0, i64 s1, i64 n, i64 i, i64 tag) {
	i64 key;
	if (ndim == I64C(2)) {
		const i64 r = sp_ld(idx, i, wide);
		const i64 c = sp_ld(idx, n + i, wide);
		key = (r < I64C(0) || r >= s0 || c < I64C(0) || c >= s1) ? I64C(-1) : r * s1 + c;
	} else {
		key = sp_ckey(idx, wide, shape, ndim, n, i);
	}
	return key < I64C(0) ? I64C(-1) : key * I64C(2) + tag;
}

/* The bucket of k2, clamped (a bad entry's k2 is -1). */
i64 sp_ubucket(i64 k2, i64 shift, i64 nb) {
	return min64(CAST(i64, CAST(u64, k2) >> CAST(u64, shift)), nb - I64C(1));
}

/* The 2-D fast path of uhist (upart's, tried, took twice its time): entries [i, e) of an operand are
 * taken SP_UB at a time; a block whose rows and columns all lie inside the
 * shape (a min/max over the block: vector code) is walked without a check
 * per entry, with the index width known to the loop. sp_ublock_ok says
 * whether block [i, e) of idx (n entries a row) is inside [0, s0) x
 * [0, s1). */
#define SP_UB 256
bool sp_ublock_ok(BPTR idx, i64 w, i64 n, i64 i, i64 e, i64 s0, i64 s1) {
	i64 mn = I64C(0);
	i64 mxr = I64C(0);
	i64 mxc = I64C(0);
	if (w != I64C(0)) {
		for (i64 j = i; j < e; j++) {
			const i64 r = CAST(i64, LD64(idx, j));
			const i64 c = CAST(i64, LD64(idx, n + j));
			mn = min64(mn, min64(r, c));
			mxr = max64(mxr, r);
			mxc = max64(mxc, c);
		}
	} else {
		for (i64 j = i; j < e; j++) {
			const i64 r = LD32S(idx, j);
			const i64 c = LD32S(idx, n + j);
			mn = min64(mn, min64(r, c));
			mxr = max64(mxr, r);
			mxc = max64(mxc, c);
		}
	}
	return mn >= I64C(0) && mxr < s0 && mxc < s1;
}

INLINE void sparse_uhist(SPARSE_UHIST_PARAMS) {
	const i64 n = nx + ny;
	const i64 chunks = cdiv64(n, ch);
	const i64 s0 = sp_key(shape, I64C(0));
	const i64 s1 = sp_key(shape, min64(I64C(1), ndim - I64C(1)));
	EW_FOR(chunks, c)
		const i64 e0 = c * ch;
		const i64 e1 = min64(e0 + ch, n);
		/* the chunk's counters side by side (in L1), then to tab */
		const i64 l0 = c * nb;
		for (i64 b = I64C(0); b < nb; b++) {
			ST32(loc, l0 + b, 0u);
		}
		for (i64 t = I64C(0); t < I64C(2); t++) { /* x's entries, then y's */
			const i64 base = t == I64C(0) ? I64C(0) : nx;
			const i64 no = t == I64C(0) ? nx : ny;
			BPTR idx = t == I64C(0) ? xi : yi;
			const i64 w = t == I64C(0) ? wide_x : wide_y;
			const i64 i1 = min64(e1, base + no) - base;
			for (i64 i = max64(e0, base) - base; i < i1; i += I64C(SP_UB)) {
				const i64 e = min64(i + I64C(SP_UB), i1);
				if (ndim == I64C(2) && sp_ublock_ok(idx, w, no, i, e, s0, s1)) {
					/* every entry inside: k2 >> shift < nb */
					if (w != I64C(0)) {
						for (i64 j = i; j < e; j++) {
							const i64 k2 = (CAST(i64, LD64(idx, j)) * s1 + CAST(i64, LD64(idx, no + j))) * I64C(2) + t;
							const i64 g = l0 + (k2 >> shift);
							ST32(loc, g, LD32(loc, g) + 1u);
						}
					} else {
						for (i64 j = i; j < e; j++) {
							const i64 k2 = (LD32S(idx, j) * s1 + LD32S(idx, no + j)) * I64C(2) + t;
							const i64 g = l0 + (k2 >> shift);
							ST32(loc, g, LD32(loc, g) + 1u);
						}
					}
					continue;
				}
				for (i64 j = i; j < e; j++) {
					const i64 k2 = sp_ukey2(idx, w, shape, ndim, s0, s1, no, j, t);
					if (k2 < I64C(0)) {
						sp_flag(err, base + j);
					}
					const i64 g = l0 + sp_ubucket(k2, shift, nb);
					ST32(loc, g, LD32(loc, g) + 1u);
				}
			}
		}
		for (i64 b = I64C(0); b < nb; b++) {
			const u32 v = LD32(loc, l0 + b); /* 32-ok: a bucket's count or position, < n < 2^31 (host/plan_union.go) */
			ST32(tab, b * chunks + c, v);
			if (v != 0u) {
				ATOM_ADD_U32(err, I64C(SP_FLAG_WORDS) + b, v);
			}
		}
	EW_END
}

INLINE void sparse_upart(SPARSE_UPART_PARAMS) {
	const i64 n = nx + ny;
	const i64 chunks = cdiv64(n, ch);
	const i64 s0 = sp_key(shape, I64C(0));
	const i64 s1 = sp_key(shape, min64(I64C(1), ndim - I64C(1)));
	const u64 mask = (CAST(u64, 1) << CAST(u64, shift)) - CAST(u64, 1);
	EW_FOR(chunks, c)
		const i64 e0 = c * ch;
		const i64 e1 = min64(e0 + ch, n);
		const i64 l0 = c * nb;
		for (i64 b = I64C(0); b < nb; b++) { /* side by side (in L1) */
			ST32(loc, l0 + b, LD32(tab, b * chunks + c));
		}
		for (i64 t = I64C(0); t < I64C(2); t++) {
			const i64 base = t == I64C(0) ? I64C(0) : nx;
			const i64 no = t == I64C(0) ? nx : ny;
			BPTR idx = t == I64C(0) ? xi : yi;
			BPTR val = t == I64C(0) ? xv : yv;
			const i64 w = t == I64C(0) ? wide_x : wide_y;
			const i64 i1 = min64(e1, base + no) - base;
			for (i64 i = max64(e0, base) - base; i < i1; i++) {
				const i64 k2 = sp_ukey2(idx, w, shape, ndim, s0, s1, no, i, t);
				const i64 g = l0 + sp_ubucket(k2, shift, nb);
				const u32 p = LD32(loc, g); /* 32-ok: a position, < n < 2^31 (host/plan_union.go); a key's low shift <= 32 bits */
				ST32(loc, g, p + 1u);
				ST32(rk, CAST(i64, p), CAST(u32, CAST(u64, k2) & mask)); /* 32-ok: a position, < n < 2^31 (host/plan_union.go); a key's low shift <= 32 bits */
				STV(rv, CAST(i64, p), LDV(val, i));
			}
		}
	EW_END
}

/* The digits of the bucket union's LSD radix sort of `shift` low bits:
 * at most SP_UDIG bits each (counters stay in L1). */
i64 sp_udigits(i64 shift) { return cdiv64(shift, I64C(SP_UDIG)); }

INLINE void sparse_usort(SPARSE_USORT_PARAMS) {
	/* one slot per work-group (local size 1): its records A and B
	 * (2*cap of sk, sv) and its counters (SP_UCNT of cnt) */
	const i64 slot = GROUP_LINEAR_ID();
	const i64 c0 = slot * I64C(SP_UCNT);
	const i64 nd = sp_udigits(shift);
	const i64 wd = nd > I64C(0) ? cdiv64(shift, nd) : I64C(0); /* bits per digit */
	const i64 nc = I64C(1) << wd;
	const u32 dmask = CAST(u32, nc - I64C(1)); /* 32-ok: a digit or a record's 32 low key bits (host/plan_union.go) */
	for (i64 b = slot; b < nb; b += GROUP_TOTAL()) {
		const i64 m = min64(CAST(i64, LD32(err, I64C(SP_FLAG_WORDS) + b)), cap);
		const i64 o = sp_key(bst, b);
		for (i64 g = I64C(0); g < nd * nc; g++) {
			ST32(cnt, c0 + g, 0u);
		}
		for (i64 p = o; p < o + m; p++) { /* every digit's counts */
			const u32 k = LD32(rk, p); /* 32-ok: a digit or a record's 32 low key bits (host/plan_union.go) */
			for (i64 t = I64C(0); t < nd; t++) {
				const i64 g = c0 + t * nc + CAST(i64, (k >> CAST(u32, t * wd)) & dmask); /* 32-ok: a digit or a record's 32 low key bits (host/plan_union.go) */
				ST32(cnt, g, LD32(cnt, g) + 1u);
			}
		}
		for (i64 t = I64C(0); t < nd; t++) {
			u32 acc = 0u; /* 32-ok: a digit count, <= cap < 2^31 (host/plan_union.go) */
			for (i64 g = c0 + t * nc; g < c0 + t * nc + nc; g++) {
				const u32 v = LD32(cnt, g); /* 32-ok: a bucket's count or position, < n < 2^31 (host/plan_union.go) */
				ST32(cnt, g, acc);
				acc += v;
			}
		}
		/* stable LSD passes: the bucket (in input order) to B, then
		 * between A and B */
		BPTR srck = rk;
		BPTR srcv = rv;
		i64 src = o;
		i64 dst = slot * I64C(2) * cap + cap;
		for (i64 t = I64C(0); t < nd; t++) {
			const u32 sh = CAST(u32, t * wd); /* 32-ok: a digit or a record's 32 low key bits (host/plan_union.go) */
			const i64 ct = c0 + t * nc;
			for (i64 p = I64C(0); p < m; p++) {
				const u32 k = LD32(srck, src + p); /* 32-ok: a digit or a record's 32 low key bits (host/plan_union.go) */
				const i64 g = ct + CAST(i64, (k >> sh) & dmask);
				const u32 r = LD32(cnt, g); /* 32-ok: a bucket's count or position, < n < 2^31 (host/plan_union.go) */
				ST32(cnt, g, r + 1u);
				ST32(sk, dst + CAST(i64, r), k);
				STV(sv, dst + CAST(i64, r), LDV(srcv, src + p));
			}
			srck = sk;
			srcv = sv;
			src = dst;
			dst = (t & I64C(1)) == I64C(0) ? slot * I64C(2) * cap : slot * I64C(2) * cap + cap;
		}
		/* each key's x and y entries summed in order from -0, without
		 * branches: a record of a new key starts a union entry; every
		 * record rewrites its entry (adding -0 leaves a sum's bits).
		 * The entries go to the bucket's own range of rk, rv (and ub). */
		i64 u = o - I64C(1);
		u32 prev = 0xffffffffu; /* above any key >> 1; 32-ok: a digit or a record's 32 low key bits (host/plan_union.go) */
		T a = -CAST(T, 0);
		T bv = -CAST(T, 0);
		bool hx = false;
		bool hy = false;
		for (i64 p = src; p < src + m; p++) {
			const u32 k = LD32(sk, p); /* 32-ok: a digit or a record's 32 low key bits (host/plan_union.go) */
			const T v = LDV(sv, p);
			const u32 key = k >> 1u; /* 32-ok: a digit or a record's 32 low key bits (host/plan_union.go) */
			const bool fresh = key != prev;
			const bool isy = (k & 1u) != 0u;
			prev = key;
			u += fresh ? I64C(1) : I64C(0);
			a = (fresh ? -CAST(T, 0) : a) + (isy ? -CAST(T, 0) : v);
			bv = (fresh ? -CAST(T, 0) : bv) + (isy ? v : -CAST(T, 0));
			hx = (hx && !fresh) || !isy;
			hy = (hy && !fresh) || isy;
			/* a missing operand reads as 0 (a selected one) */
			const T va = hx ? a : CAST(T, 0);
			const T vb = hy ? bv : CAST(T, 0);
			ST32(rk, u, key);
			if (grad != I64C(0)) {
				STV(rv, u, va);
				STV(ub, u, vb);
			} else {
				STV(rv, u, sp_apply(op, va, vb));
			}
		}
		ST64(ucnt, b, CAST(u64, u + I64C(1) - o));
	}
}

INLINE void sparse_uemit(SPARSE_UEMIT_PARAMS) {
	const i64 sl = sp_key(shape, ndim - I64C(1));
	EW_FOR(nb, b)
		const i64 o = sp_key(bst, b);
		const i64 r0 = sp_key(uoff, b);
		const i64 r1 = b + I64C(1) < nb ? sp_key(uoff, b + I64C(1)) : u;
		const i64 hi = b << (shift - I64C(1));
		/* keys ascend: the last coordinate and the quotient run on,
		 * divided afresh only after a jump of rows */
		i64 q = I64C(0);
		i64 rem = I64C(0);
		i64 prev = I64C(-1);
		for (i64 j = I64C(0); j < r1 - r0; j++) {
			const i64 key = hi | CAST(i64, LD32(uk, o + j));
			const i64 pos = r0 + j;
			if (ndim == I64C(1)) {
				ST64(uidx, pos, CAST(u64, key));
			} else {
				if (prev < I64C(0) || key - prev >= I64C(4) * sl) {
					q = udiv64(key, sl);
					rem = key - q * sl;
				} else {
					rem += key - prev;
					while (rem >= sl) {
						rem -= sl;
						q++;
					}
				}
				prev = key;
				ST64(uidx, (ndim - I64C(1)) * u + pos, CAST(u64, rem));
				i64 t = q;
				for (i64 d = ndim - I64C(2); d >= I64C(1); d--) {
					const i64 s = sp_key(shape, d);
					const i64 tq = udiv64(t, s);
					ST64(uidx, d * u + pos, CAST(u64, t - tq * s));
					t = tq;
				}
				ST64(uidx, pos, CAST(u64, t));
			}
			if (grad == I64C(0)) {
				STV(uval, pos, LDV(ua, o + j));
			} else {
				const T va = LDV(ua, o + j);
				const T vb = LDV(ub, o + j);
				const T v = sp_apply(op, va, vb);
				STV(uval, pos, v);
				sp_grads(op, LDV(gout, pos), va, vb, v, gxo, gyo, pos);
			}
		}
	EW_END
}

INLINE void sparse_unkey(SPARSE_UNKEY_PARAMS) {
	EW_FOR(n, k)
		sp_unkey(sp_key(keys, k), idx, shape, ndim, k, n);
	EW_END
}

INLINE void sparse_crows(SPARSE_CROWS_PARAMS) {
	const i64 per = rows + I64C(1);
	EW_FOR(batch * per, q)
		const i64 b = udiv64(q, per);
		const i64 r = q - b * per;
		ST64(crow, q, CAST(u64, sp_key(gstart, b * rows + r) - sp_key(gstart, b * rows)));
	EW_END
}

INLINE void sparse_to_dense(SPARSE_TO_DENSE_PARAMS) {
	EW_FOR(n, k)
		STV(dense, sp_key(keys, k), LDV(vals, k));
	EW_END
}

INLINE void sparse_nonzero(SPARSE_NONZERO_PARAMS) {
	EW_FOR(n, i)
		ST64(nz, i, T_EQ(LDV(dense, i), CAST(T, 0)) ? 0ul : 1ul);
	EW_END
}

INLINE void sparse_from_dense(SPARSE_FROM_DENSE_PARAMS) {
	EW_FOR(n, i)
		const T v = LDV(dense, i);
		if (!T_EQ(v, CAST(T, 0))) {
			const i64 p = sp_key(pos, i);
			ST64(keys, p, CAST(u64, i));
			STV(vals, p, v);
		}
	EW_END
}

#endif
