/* segment_body.h: in-order reductions over runs of equal sorted keys,
 * shared by clkernels/segment.cl and shaders/segment.comp. They serve
 * segment_reduce and the bit-reproducible scatter_reduce: each run is
 * folded by one work-item, strictly in position order, so the result has
 * the scalar reference's bits on every device. Include after dtypes.h,
 * memory.h and the wrapper's LDV/STV (elements of T on a BPTR),
 * ATOM_MIN_U32 and the knobs LOCAL_SIZE, ITEMS, CONTIG.
 *
 *   SEG_VALIDATE  keys are int64 segment ids: an id outside [0, segments)
 *                 or smaller than its predecessor records (i >> 16) with an
 *                 atomic min into err[0]
 *   SEG_REDUCE    for each run of equal keys starting at i (keys are 64-bit
 *                 words, sorted): out[key] = fold of out[key] (include_self)
 *                 or the identity, then vals[perm[j]] (or vals[j] without a
 *                 perm) for j over the run in order; assign keeps the last;
 *                 mean divides by the count (+1 with include_self)
 * A fold runs at most `limit` elements per launch (drivers that stop long
 * loops): launch `step` continues each run from i + step*limit with the
 * partial fold kept in out, and a run left unfinished sets err[1] = 1 so
 * the host launches the next step. */
#ifndef ACCEL_SEGMENT_BODY_H
#define ACCEL_SEGMENT_BODY_H

#include "elementwise.h"
#include "reduce_ops.h"

#define SEG_VALIDATE 0
#define SEG_REDUCE 1

void segment_run(BPTR dst, BPTR vals, BPTR keys, BPTR perm, BPTR err, i64 n, i64 segments, i64 red,
	i64 include_self, i64 has_perm, i64 limit, i64 step, i64 mode) {
	red = FOLD(SEG_RED, red);
	include_self = FOLD(SEG_SELF, include_self);
	has_perm = FOLD(SEG_HAS_PERM, has_perm);
	mode = FOLD(SEG_MODE, mode);
	const i64 tiles = ew_tiles(n);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 jj = I64C(0); jj < I64C(ITEMS); jj++) {
			const i64 i = ew_index(tile, jj);
			if (i >= n) {
				continue;
			}
			const u64 key = LD64(keys, i);
			if (mode == I64C(SEG_VALIDATE)) {
				const i64 id = CAST(i64, key);
				if (id < I64C(0) || id >= segments || (i > I64C(0) && CAST(i64, LD64(keys, i - I64C(1))) > id)) {
					ATOM_MIN_U32(err, 0, CAST(u32, i >> 16));
				}
				continue;
			}
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
		}
	}
}

#endif
