/* move_body.h: gathers, scatters and compactions of 32- or 64-bit words,
 * shared by clkernels/move.cl and shaders/move.comp. Values are moved as
 * bits, so one variant serves every dtype of a word size. Wrappers define
 * WORD with LDW/STW and the knobs LOCAL_SIZE, ITEMS, CONTIG. Indices and
 * positions are int64. One launch runs one mode over i in [0, n):
 *   MV_GATHER   dst[i] = src[idx[i]]
 *   MV_SCATTER  dst[idx[i]] = src[i] + add  (add: 0 for a plain scatter;
 *               64-bit words add as integers: unique's inverse = id - 1)
 *   MV_COMPACT  where flag_at(flags, i, kind), with to = pos[i] + add:
 *               dst[to] = src[i] (when src is given) and idx[to] = i (when
 *               idx is given); pos is a scan of the flags (exclusive with
 *               add 0, inclusive with add -1)
 *   MV_ENDS     seg = an inclusive scan of run-start flags (1-based ids):
 *               where run seg[i] ends at i, dst[seg[i]-1] = i + 1
 *   MV_COUNTS   over the runs: dst[r] = src[r] - (r > 0 ? src[r-1] : 0),
 *               turning run ends into counts (64-bit words) */
#ifndef ACCEL_MOVE_BODY_H
#define ACCEL_MOVE_BODY_H

#include "memory.h"
#include "elementwise.h"

#define MV_GATHER 0
#define MV_SCATTER 1
#define MV_COMPACT 2
#define MV_ENDS 3
#define MV_COUNTS 4

void move_run(BPTR dst, BPTR src, BPTR idx, BPTR flags, BPTR pos, i64 n, i64 kind, i64 add, i64 has_src,
	i64 has_idx, i64 mode) {
	kind = FOLD(MOVE_KIND, kind);
	has_src = FOLD(MOVE_HAS_SRC, has_src);
	has_idx = FOLD(MOVE_HAS_IDX, has_idx);
	mode = FOLD(MOVE_MODE, mode);
	const i64 tiles = ew_tiles(n);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 i = ew_index(tile, j);
			if (i >= n) {
				continue;
			}
			if (mode == I64C(MV_GATHER)) {
				STW(dst, i, LDW(src, CAST(i64, LD64(idx, i))));
			} else if (mode == I64C(MV_SCATTER)) {
				STW(dst, CAST(i64, LD64(idx, i)), LDW(src, i) + CAST(WORD, add));
			} else if (mode == I64C(MV_COMPACT)) {
				if (flag_at(flags, i, kind)) {
					const i64 to = CAST(i64, LD64(pos, i)) + add;
					if (has_src != I64C(0)) {
						STW(dst, to, LDW(src, i));
					}
					if (has_idx != I64C(0)) {
						ST64(idx, to, CAST(u64, i));
					}
				}
			} else if (mode == I64C(MV_ENDS)) {
				const u64 s = LD64(src, i);
				if (i == n - I64C(1) || LD64(src, i + I64C(1)) != s) {
					ST64(dst, CAST(i64, s) - I64C(1), CAST(u64, i + I64C(1)));
				}
			} else {
				const u64 e = LD64(src, i);
				ST64(dst, i, i > I64C(0) ? e - LD64(src, i - I64C(1)) : e);
			}
		}
	}
}

#endif
