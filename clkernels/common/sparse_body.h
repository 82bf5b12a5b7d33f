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
 *   sparse_csr_keys    keys of CSR entries: the entry's global row by a
 *                      binary search of the row pointers (so any mix of long
 *                      and empty rows balances: one entry per position)
 *   sparse_sorted      marks keys that are not strictly ascending
 *   sparse_runs        0-based run ids and the distinct keys of sorted keys
 *   sparse_merge       merge path of two ascending key lists, x first on
 *                      ties: each work-item finds its diagonal's split by a
 *                      binary search and merges `chunk` positions
 *   sparse_combine     one union entry per run of merged keys: its key,
 *                      coordinates, op(x, y) with a missing operand read as
 *                      0, and the gradients
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
	return CAST(i64, CAST(i32, LD32(p, i)));
}

i64 sp_key(BPTR p, i64 i) { return CAST(i64, LD64(p, i)); }

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

/* The first position in keys [0, n) whose key is >= t. */
i64 sp_lower(BPTR keys, i64 n, i64 t) {
	i64 lo = I64C(0);
	i64 hi = n;
	while (lo < hi) {
		const i64 mid = (lo + hi) >> 1;
		if (sp_key(keys, mid) < t) {
			lo = mid + I64C(1);
		} else {
			hi = mid;
		}
	}
	return lo;
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

void sparse_csr_keys(SPARSE_CSR_KEYS_PARAMS) {
	if (grows == I64C(0)) {
		return; /* no rows: nnz must be 0, which csr_ptrs checks */
	}
	EW_FOR(nnz, k)
		i64 lo = I64C(0);
		i64 hi = grows - I64C(1);
		while (lo < hi) { /* the last row whose pointer is <= k */
			const i64 mid = (lo + hi + I64C(1)) >> 1;
			if (sp_key(gptr, mid) <= k) {
				lo = mid;
			} else {
				hi = mid - I64C(1);
			}
		}
		const i64 c = sp_ld(cols, k, wide);
		if (c < I64C(0) || c >= cols_n) {
			sp_flag(err, k);
		}
		ST64(keys, k, CAST(u64, lo * cols_n + c));
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

void sparse_merge(SPARSE_MERGE_PARAMS) {
	const i64 n = nx + ny;
	EW_FOR((n + chunk - I64C(1)) / chunk, c)
		const i64 d0 = c * chunk;
		const i64 d1 = min64(d0 + chunk, n);
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
		i64 i = lo;
		i64 j = d0 - lo;
		for (i64 p = d0; p < d1; p++) {
			if (j >= ny || (i < nx && sp_key(kx, min64(i, nx - I64C(1))) <= sp_key(ky, min64(j, ny - I64C(1))))) {
				ST64(mk, p, LD64(kx, min64(i, nx - I64C(1))));
				ST64(ms, p, CAST(u64, i));
				i++;
			} else {
				ST64(mk, p, LD64(ky, min64(j, ny - I64C(1))));
				ST64(ms, p, CAST(u64, nx + j));
				j++;
			}
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

void sparse_combine(SPARSE_COMBINE_PARAMS) {
	EW_FOR(n, p)
		const u64 key = LD64(mk, p);
		if (p > I64C(0) && LD64(mk, max64(p - I64C(1), I64C(0))) == key) {
			continue; /* not a run start */
		}
		const i64 r = sp_key(seg, p) - I64C(1);
		const i64 s = sp_key(ms, p);
		i64 xi = I64C(-1);
		i64 yi = s - nx;
		if (s < nx) {
			xi = s;
			const i64 q = min64(p + I64C(1), n - I64C(1));
			yi = (p + I64C(1) < n && LD64(mk, q) == key) ? sp_key(ms, q) - nx : I64C(-1);
		}
		/* loads at clamped positions: drivers that run both sides of a
		 * branch must not read out of bounds (the operands are never
		 * empty buffers, see union in accel/sparse.go) */
		const T a = xi >= I64C(0) ? LDV(xv, max64(xi, I64C(0))) : CAST(T, 0);
		const T b = yi >= I64C(0) ? LDV(yv, max64(yi, I64C(0))) : CAST(T, 0);
		const T v = sp_apply(op, a, b);
		STV(uval, r, v);
		ST64(ukeys, r, key);
		sp_unkey(CAST(i64, key), uidx, shape, ndim, r, u);
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
		const i64 start = sp_lower(keys, n, b * rows * cols_n);
		ST64(crow, q, CAST(u64, sp_lower(keys, n, (b * rows + r) * cols_n) - start));
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
