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
 *                     (include_self) or the identity, then the values of
 *                     the run's positions j in order: vals[j]
 *                     (SEG_VALS_DIRECT), vals[perm[j]] (SEG_VALS_PERM), or
 *                     (SEG_VALS_PACKED) the low half of keys[j], a word
 *                     whose high half is the key and whose low half a
 *                     32-bit value's bits, which the bit-reproducible
 *                     scatter sorts in place of its source offsets, so the
 *                     fold reads its values in order instead of gathering
 *                     them; assign keeps the last; mean divides by the
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

INLINE void segment_validate(SEGMENT_VALIDATE_PARAMS) {
	EW_FOR(n, i)
		const i64 id = CAST(i64, LD64(keys, i));
		if (id < I64C(0) || id >= segments || (i > I64C(0) && CAST(i64, LD64(keys, i - I64C(1))) > id)) {
			ATOM_MIN_U32(err, 0, CAST(u32, i >> ERR_TILE_SHIFT)); /* 32-ok: p >> ERR_TILE_SHIFT (16) < 2^32 for positions < 2^48 */
		}
	EW_END
}

/* The key of word i: the word, or its high half where packed. */
u64 seg_key(BPTR keys, i64 i, bool packed) {
	const u64 word = LD64(keys, i);
	return packed ? word >> 32 : word;
}

INLINE void segment_reduce(SEGMENT_REDUCE_PARAMS) {
	if (LD32(err, 0) != ERR_NONE) {
		return;
	}
	const bool packed = vals_at == I64C(SEG_VALS_PACKED);
	EW_FOR(n, i)
		const u64 key = seg_key(keys, i, packed);
		if (i > I64C(0) && seg_key(keys, i - I64C(1), packed) == key) {
			continue; /* not a run start */
		}
		const i64 from = i + step * limit;
		if (from >= n || seg_key(keys, from, packed) != key) {
			continue; /* finished in an earlier step */
		}
		const i64 dest = CAST(i64, key);
		T acc = (step > I64C(0) || include_self != I64C(0)) ? LDV(dst, dest) : sc_identity(red);
		const i64 to = min64(from + limit, n);
		i64 j = from;
		for (; j < to; j++) {
			const u64 word = LD64(keys, j);
			if ((packed ? word >> 32 : word) != key) {
				break;
			}
			T v;
			if (packed) {
				v = FROM_BITS(CAST(UBITS, word & 0xfffffffful));
			} else {
				v = LDV(vals, vals_at == I64C(SEG_VALS_PERM) ? CAST(i64, LD64(perm, j)) : j);
			}
			acc = sc_fold(acc, v, red);
		}
		const bool more = j == to && j < n && seg_key(keys, j, packed) == key;
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
