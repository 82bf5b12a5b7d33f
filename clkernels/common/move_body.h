/* move_body.h: gathers, scatters and compactions of 32- or 64-bit words,
 * shared by clkernels/move.cl and shaders/move.comp (entry points and knobs
 * declared in host/kernels: gen/move.h). Values are moved as bits, so one
 * variant serves every dtype of a word size. Wrappers define WORD with
 * LDW/STW. Indices and positions are int64. Each entry runs over i in
 * [0, n):
 *   move_gather   dst[i] = src[idx[i]]
 *   move_scatter  dst[idx[i]] = src[i] + add  (add: 0 for a plain scatter;
 *                 64-bit words add as integers: unique's inverse = id - 1)
 *   move_compact  where flag_at(flags, i, kind), with to = pos[i] + add:
 *                 dst[to] = src[i] (when has_src) and idx[to] = i (when
 *                 has_idx); pos is a scan of the flags (exclusive with add
 *                 0, inclusive with add -1)
 *   move_ends     seg = an inclusive scan of run-start flags (1-based ids):
 *                 where run seg[i] ends at i, dst[seg[i]-1] = i + 1
 *   move_counts   over the runs: dst[r] = ends[r] - (r > 0 ? ends[r-1] : 0),
 *                 turning run ends into counts (64-bit words)
 *   move_widen    dst[i] = src[i], a 32-bit signed integer sign-extended
 *                 to 64 bits (index inputs given as int32) */
#ifndef ACCEL_MOVE_BODY_H
#define ACCEL_MOVE_BODY_H

#include "elementwise.h"
#include "flags.h"

void move_gather(MOVE_GATHER_PARAMS) {
	EW_FOR(n, i)
		STW(dst, i, LDW(src, CAST(i64, LD64(idx, i))));
	EW_END
}

void move_scatter(MOVE_SCATTER_PARAMS) {
	EW_FOR(n, i)
		STW(dst, CAST(i64, LD64(idx, i)), LDW(src, i) + CAST(WORD, add));
	EW_END
}

void move_compact(MOVE_COMPACT_PARAMS) {
	EW_FOR(n, i)
		if (flag_at(flags, i, kind)) {
			const i64 to = CAST(i64, LD64(pos, i)) + add;
			if (has_src != I64C(0)) {
				STW(dst, to, LDW(src, i));
			}
			if (has_idx != I64C(0)) {
				ST64(idx, to, CAST(u64, i));
			}
		}
	EW_END
}

void move_ends(MOVE_ENDS_PARAMS) {
	EW_FOR(n, i)
		const u64 s = LD64(seg, i);
		if (i == n - I64C(1) || LD64(seg, i + I64C(1)) != s) {
			ST64(dst, CAST(i64, s) - I64C(1), CAST(u64, i + I64C(1)));
		}
	EW_END
}

void move_widen(MOVE_WIDEN_PARAMS) {
	EW_FOR(n, i)
		ST64(dst, i, CAST(u64, CAST(i64, CAST(i32, LD32(src, i))))); /* 32-ok: an int32 element's value */
	EW_END
}

void move_counts(MOVE_COUNTS_PARAMS) {
	EW_FOR(n, i)
		const u64 e = LD64(ends, i);
		ST64(dst, i, i > I64C(0) ? e - LD64(ends, i - I64C(1)) : e);
	EW_END
}

#endif
