/* segment_body.h: in-order reductions over runs of equal sorted keys,
 * shared by clkernels/segment.cl and shaders/segment.comp (entry points and
 * knobs declared in host/kernels: gen/segment.h). They serve
 * segment_reduce and the bit-reproducible scatter_reduce: each run is
 * folded by one work-item, strictly in position order, so the result has
 * the scalar reference's bits on every device. Include after dtypes.h,
 * memory.h and the wrapper's LDV/STV (elements of T on a BPTR) and
 * ATOM_MIN_U32.
 *
 *   segment_validate  keys are int64 segment ids: an id outside
 *                     [0, segments) or smaller than its predecessor records
 *                     (i >> ERR_TILE_SHIFT) with an atomic min into err[0]
 *   segment_reduce    for each run of equal keys starting at i (keys are
 *                     64-bit words, sorted): out[key] = fold of out[key]
 *                     (include_self) or the identity, then vals[perm[j]]
 *                     (or vals[j] without a perm) for j over the run in
 *                     order; assign keeps the last; mean divides by the
 *                     count (+1 with include_self). It does nothing when
 *                     err[0] != ERR_NONE (a validation flagged a key, which
 *                     may then lie outside out).
 * A fold runs at most `limit` elements per launch (drivers that stop long
 * loops): launch `step` continues each run from i + step*limit with the
 * partial fold kept in out, and a run left unfinished sets err[1] = 1 so
 * the host launches the next step. */
#ifndef ACCEL_SEGMENT_BODY_H
#define ACCEL_SEGMENT_BODY_H

#include "elementwise.h"
#include "reduce_ops.h"

void segment_validate(SEGMENT_VALIDATE_PARAMS) {
	EW_FOR(n, i)
		const i64 id = CAST(i64, LD64(keys, i));
		if (id < I64C(0) || id >= segments || (i > I64C(0) && CAST(i64, LD64(keys, i - I64C(1))) > id)) {
			ATOM_MIN_U32(err, 0, CAST(u32, i >> ERR_TILE_SHIFT)); /* 32-ok: p >> ERR_TILE_SHIFT (16) < 2^32 for positions < 2^48 */
		}
	EW_END
}

void segment_reduce(SEGMENT_REDUCE_PARAMS) {
	if (LD32(err, 0) != ERR_NONE) {
		return;
	}
	EW_FOR(n, i)
		const u64 key = LD64(keys, i);
		if (i > I64C(0) && LD64(keys, i - I64C(1)) == key) {
			continue; /* not a run start */
		}
		const i64 from = i + step * limit;
		if (from >= n || LD64(keys, from) != key) {
			continue; /* finished in an earlier step */
		}
		const i64 dest = CAST(i64, key);
		T acc = (step > I64C(0) || include_self != I64C(0)) ? LDV(dst, dest) : sc_identity(red);
		const i64 to = min64(from + limit, n);
		i64 j = from;
		for (; j < to; j++) {
			if (LD64(keys, j) != key) {
				break;
			}
			const i64 src = has_perm != I64C(0) ? CAST(i64, LD64(perm, j)) : j;
			const T v = LDV(vals, src);
			acc = red == I64C(RED_ASSIGN) ? v : sc_combine(acc, v, red);
		}
		const bool more = j == to && j < n && LD64(keys, j) == key;
		if (!more && red == I64C(RED_MEAN)) {
			acc = MEAN_DIV(acc, (j - i) + include_self);
		}
		STV(dst, dest, acc);
		if (more) {
			ST32(err, 1, 1u);
		}
	EW_END
}

#endif
