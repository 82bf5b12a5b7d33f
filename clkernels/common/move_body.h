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
#include "lane_scan.h"
#include "flags.h"

INLINE void move_gather(MOVE_GATHER_PARAMS) {
	EW_FOR(n, i)
		STW(dst, i, LDW(src, CAST(i64, LD64(idx, i))));
	EW_END
}

INLINE void move_scatter(MOVE_SCATTER_PARAMS) {
	EW_FOR(n, i)
		STW(dst, CAST(i64, LD64(idx, i)), LDW(src, i) + CAST(WORD, add));
	EW_END
}

INLINE void move_compact(MOVE_COMPACT_PARAMS) {
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

/* Compaction by tiles (Device.Compact): the n elements are cut into tiles
 * of LOCAL_SIZE * ITEMS, a tile per work-group at a time (grid stride),
 * whose lane l takes elements base + l*ITEMS .. base + l*ITEMS + ITEMS - 1
 * in order (whatever CONTIG says). move_tcount counts each tile's flagged
 * elements into tcnt; after the host's exclusive scan of tcnt,
 * move_tcompact writes each tile's flagged elements (and positions) from
 * tcnt[tile] + add on, each lane after the lanes before it (lane_scan.h).
 * No position per element is written: the flags are read twice, the
 * source once, where a scan of the flags wrote and read an int64
 * position per element. */
u32 mv_lane_count(BPTR flags, i64 kind, i64 lo, i64 hi) { /* 32-ok: a lane's flagged elements, <= ITEMS */
	u32 c = 0u; /* 32-ok: a lane's flagged elements */
	for (i64 i = lo; i < hi; i++) {
		if (flag_at(flags, i, kind)) {
			c++;
		}
	}
	return c;
}

INLINE void move_tcount(MOVE_TCOUNT_PARAMS) {
	const i64 tiles = ew_tiles(n);
	for (i64 t = GROUP_LINEAR_ID(); t < tiles; t += GROUP_TOTAL()) {
		const i64 lo = lane_lo(t);
		const u64 sc = lane_scan(mv_lane_count(flags, kind, lo, min64(lo + I64C(ITEMS), n)) SCRATCH_ARG);
		if (LOCAL_ID() == I64C(0)) {
			ST64(tcnt, t, sc >> 32);
		}
	}
}

INLINE void move_tcompact(MOVE_TCOMPACT_PARAMS) {
	const i64 tiles = ew_tiles(n);
	for (i64 t = GROUP_LINEAR_ID(); t < tiles; t += GROUP_TOTAL()) {
		const i64 lo = lane_lo(t);
		const i64 hi = min64(lo + I64C(ITEMS), n);
		const u64 sc = lane_scan(mv_lane_count(flags, kind, lo, hi) SCRATCH_ARG);
		i64 to = CAST(i64, LD64(tcnt, t)) + CAST(i64, sc & 0xfffffffful) + add;
		for (i64 i = lo; i < hi; i++) {
			if (flag_at(flags, i, kind)) {
				if (has_src != I64C(0)) {
					STW(dst, to, LDW(src, i));
				}
				if (has_idx != I64C(0)) {
					ST64(idx, to, CAST(u64, i));
				}
				to++;
			}
		}
	}
}

INLINE void move_ends(MOVE_ENDS_PARAMS) {
	EW_FOR(n, i)
		const u64 s = LD64(seg, i);
		if (i == n - I64C(1) || LD64(seg, i + I64C(1)) != s) {
			ST64(dst, CAST(i64, s) - I64C(1), CAST(u64, i + I64C(1)));
		}
	EW_END
}

INLINE void move_widen(MOVE_WIDEN_PARAMS) {
	EW_FOR(n, i)
		ST64(dst, i, CAST(u64, CAST(i64, CAST(i32, LD32(src, i))))); /* 32-ok: an int32 element's value */
	EW_END
}

INLINE void move_counts(MOVE_COUNTS_PARAMS) {
	EW_FOR(n, i)
		const u64 e = LD64(ends, i);
		ST64(dst, i, i > I64C(0) ? e - LD64(ends, i - I64C(1)) : e);
	EW_END
}

#endif
