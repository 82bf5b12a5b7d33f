/* scan_body.h: prefix sums, shared by clkernels/scan.cl and shaders/scan.comp.
 * Wrappers define the accumulator type T, ADD(a, b) (integers wrap: they
 * add in the unsigned type), LDT/STT (element access on a BPTR), the
 * work-group scratch SH(i) of LOCAL_SIZE elements with SCRATCH_PARAM /
 * SCRATCH_ARG to hand it to functions (OpenCL passes a __local pointer, GLSL
 * uses a shared array), and the knobs LOCAL_SIZE (a power of two), ITEMS and
 * FLAT (1: with one work-item per group, scan the group's whole range in
 * one loop; only where the driver has no loop limit).
 *
 * A scan of n elements runs as reduce-then-scan over G work-groups, each
 * owning a contiguous range of tiles (LOCAL_SIZE*ITEMS elements):
 *   SCAN_REDUCE   each group sums its range into partials[g]
 *   SCAN_PARTIALS one group turns partials[0..G) into exclusive prefixes
 *                 and writes the total to partials[G]
 *   SCAN_APPLY    each group rescans its range from partials[g]: every
 *                 work-item sums its ITEMS consecutive elements, the group
 *                 scans those sums in scratch, then each item writes its run
 * A single group skips the first two (the host zeroes partials[0]). The
 * input is either elements (kind FLAG_NONE) or the 0/1 flags of memory.h,
 * so the positions of a compaction come from the same code. y may be x. */
#ifndef ACCEL_SCAN_BODY_H
#define ACCEL_SCAN_BODY_H

#include "memory.h"

#define SCAN_REDUCE 0
#define SCAN_PARTIALS 1
#define SCAN_APPLY 2

T scan_load(BPTR x, i64 i, i64 kind) {
	if (kind == I64C(FLAG_NONE)) {
		return LDT(x, i);
	}
	return flag_at(x, i, kind) ? CAST(T, 1) : CAST(T, 0);
}

/* The end of the range of tiles group g owns, [g*tpg, end). */
i64 scan_tiles_per_group(i64 n) {
	const i64 tile = I64C(LOCAL_SIZE) * I64C(ITEMS);
	const i64 tiles = (n + tile - I64C(1)) / tile;
	return (tiles + GROUP_TOTAL() - I64C(1)) / GROUP_TOTAL();
}

i64 scan_tiles_end(i64 n, i64 g, i64 tpg) {
	const i64 tile = I64C(LOCAL_SIZE) * I64C(ITEMS);
	return min64((g + I64C(1)) * tpg, (n + tile - I64C(1)) / tile);
}

void scan_reduce(BPTR x, BPTR partials, i64 n, i64 kind SCRATCH_PARAM) {
	const i64 tile = I64C(LOCAL_SIZE) * I64C(ITEMS);
	const i64 tpg = scan_tiles_per_group(n);
	const i64 g = GROUP_LINEAR_ID();
	const i64 lid = LOCAL_ID();
	T acc = CAST(T, 0);
	const i64 tend = scan_tiles_end(n, g, tpg);
	if (LOCAL_SIZE == 1 && FLAT == 1 && kind == I64C(FLAG_NONE)) {
		const i64 hi = min64(tend * tile, n);
		for (i64 i = g * tpg * tile; i < hi; i++) {
			acc = ADD(acc, LDT(x, i));
		}
		STT(partials, g, acc);
		return;
	}
	for (i64 t = g * tpg; t < tend; t++) {
		const i64 base = t * tile;
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 i = base + j * I64C(LOCAL_SIZE) + lid;
			if (i < n) {
				acc = ADD(acc, scan_load(x, i, kind));
			}
		}
	}
	SH(lid) = acc;
	LOCAL_BARRIER();
	for (i64 s = I64C(LOCAL_SIZE) / I64C(2); s > I64C(0); s = s / I64C(2)) {
		if (lid < s) {
			SH(lid) = ADD(SH(lid), SH(lid + s));
		}
		LOCAL_BARRIER();
	}
	if (lid == I64C(0)) {
		STT(partials, g, SH(0));
	}
}

/* One work-item: the groups are few (the planner keeps them under the
 * drivers' loop limits). */
void scan_partials(BPTR partials, i64 groups) {
	if (LOCAL_ID() != I64C(0) || GROUP_LINEAR_ID() != I64C(0)) {
		return;
	}
	T run = CAST(T, 0);
	for (i64 g = I64C(0); g < groups; g++) {
		const T v = LDT(partials, g);
		STT(partials, g, run);
		run = ADD(run, v);
	}
	STT(partials, groups, run);
}

void scan_apply(BPTR x, BPTR y, BPTR partials, i64 n, i64 kind, i64 exclusive SCRATCH_PARAM) {
	const i64 tile = I64C(LOCAL_SIZE) * I64C(ITEMS);
	const i64 tpg = scan_tiles_per_group(n);
	const i64 g = GROUP_LINEAR_ID();
	const i64 lid = LOCAL_ID();
	T carry = LDT(partials, g);
	const i64 tend = scan_tiles_end(n, g, tpg); /* uniform: barriers stay matched */
	if (LOCAL_SIZE == 1 && FLAT == 1 && kind == I64C(FLAG_NONE)) {
		/* one work-item per group (CPU plans): a plain running sum over
		 * the group's whole range, no scratch, no barriers */
		const i64 hi = min64(tend * tile, n);
		T run = carry;
		if (exclusive != I64C(0)) {
			for (i64 i = g * tpg * tile; i < hi; i++) {
				const T v = LDT(x, i);
				STT(y, i, run);
				run = ADD(run, v);
			}
		} else {
			for (i64 i = g * tpg * tile; i < hi; i++) {
				run = ADD(run, LDT(x, i));
				STT(y, i, run);
			}
		}
		return;
	}
	for (i64 t = g * tpg; t < tend; t++) {
		const i64 base = t * tile;
		const i64 mine = base + lid * I64C(ITEMS);
		T s = CAST(T, 0);
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			if (mine + j < n) {
				s = ADD(s, scan_load(x, mine + j, kind));
			}
		}
		SH(lid) = s;
		LOCAL_BARRIER();
		for (i64 off = I64C(1); off < I64C(LOCAL_SIZE); off = off * I64C(2)) {
			const T v = lid >= off ? SH(lid - off) : CAST(T, 0);
			LOCAL_BARRIER();
			SH(lid) = ADD(SH(lid), v);
			LOCAL_BARRIER();
		}
		T run = ADD(carry, lid > I64C(0) ? SH(lid - I64C(1)) : CAST(T, 0));
		carry = ADD(carry, SH(I64C(LOCAL_SIZE) - I64C(1)));
		LOCAL_BARRIER(); /* everyone has read the scratch before the next tile */
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 i = mine + j;
			if (i < n) {
				const T v = scan_load(x, i, kind);
				if (exclusive != I64C(0)) {
					STT(y, i, run);
					run = ADD(run, v);
				} else {
					run = ADD(run, v);
					STT(y, i, run);
				}
			}
		}
	}
}

void scan_run(BPTR x, BPTR y, BPTR partials, i64 n, i64 kind, i64 exclusive, i64 mode SCRATCH_PARAM) {
	if (mode == I64C(SCAN_REDUCE)) {
		scan_reduce(x, partials, n, kind SCRATCH_ARG);
	} else if (mode == I64C(SCAN_PARTIALS)) {
		scan_partials(partials, n);
	} else {
		scan_apply(x, y, partials, n, kind, exclusive SCRATCH_ARG);
	}
}

#endif
