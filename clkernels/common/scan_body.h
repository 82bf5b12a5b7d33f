/* scan_body.h: prefix sums, shared by clkernels/scan.cl and shaders/scan.comp
 * (entry points and knobs declared in host/kernels: gen/scan.h). Wrappers
 * define the accumulator type T, ADD(a, b) (integers wrap: they add in the
 * unsigned type), LDT/STT (element access on a BPTR), the work-group
 * scratch SH(i) of LOCAL_SIZE elements (SCRATCH_T and SCRATCH_LEN for the
 * generated entries; OpenCL passes it as the __local parameter sh, GLSL
 * wrappers declare the shared array sh) with SCRATCH_PARAM / SCRATCH_ARG
 * to hand it on to functions. The knobs: LOCAL_SIZE (a power of two),
 * ITEMS and FLAT (1: with one work-item per group, scan the group's whole
 * range in one loop; only where the driver has no loop limit).
 *
 * A scan of n elements runs as reduce-then-scan over G work-groups, each
 * owning a contiguous range of tiles (LOCAL_SIZE*ITEMS elements):
 *   scan_reduce   each group sums its range into partials[g]
 *   scan_partials one work-item turns partials[0..G) into exclusive
 *                 prefixes and writes the total to partials[G]
 *   scan_apply    each group rescans its range from partials[g]: every
 *                 work-item sums its ITEMS consecutive elements, the group
 *                 scans those sums in scratch, then each item writes its run
 * The input is either elements (kind FLAG_NONE), the 0/1 flags of
 * flags.h, so the positions of a compaction come from the same code, or
 * the set bits of 32-bit words (FLAG_POPC32: a bitmap's words numbered, as
 * get_indice_pairs' dense grid). y may be x.
 *
 * Subgroup path (knob SCAN_SG = 1, or 2 where the plan makes each group
 * exactly one subgroup: no scratch and no barriers, which llvmpipe runs
 * far faster, or 3: as 2, with each lane a run of consecutive units in
 * batches, so a subgroup scan comes once a batch; compiled where the
 * wrapper defines
 * SCAN_SG_OK with SG_SIZE, SG_ID, SG_LANE, SG_COUNT, SG_ADD and SG_EXCL:
 * the GLSL variants built with SG=1). The work-group must be whole
 * subgroups. A tile of LOCAL_SIZE*ITEMS units is split into one segment
 * per subgroup, walked in rows of SG_SIZE consecutive units, one per lane,
 * so every row is one contiguous load and store. A unit is one element,
 * or two where the wrapper defines LD_PAIR/ST_PAIR/PAIR_LO/PAIR_HI/
 * PAIR_PACK (32-bit types read and written as 64-bit words: half the
 * memory operations). Rows lying wholly before n run without bounds
 * checks; the rest check each element. Each row is an exclusive subgroup
 * scan plus the running carry; with several subgroups a group first sums
 * every segment and exchanges the sums through scratch. */
#ifndef ACCEL_SCAN_BODY_H
#define ACCEL_SCAN_BODY_H

#include "flags.h"
#include "scan_wg.h"

/* y[i] = the running sum run (exclusive) or run + x's unit i (inclusive),
 * and run moves past unit i: one step of the scalar scan loops. */
#define SCAN_EMIT(x, y, i, run, kind, exclusive) \
	{ \
		const T v_ = scan_load(x, i, kind); \
		if (exclusive != I64C(0)) { \
			STT(y, i, run); \
			run = ADD(run, v_); \
		} else { \
			run = ADD(run, v_); \
			STT(y, i, run); \
		} \
	}

#ifndef SCAN_SG_OK
#define SCAN_SG_PV 1
#elif defined(LD_PAIR)
#define SCAN_SG_PV 2
#else
#define SCAN_SG_PV 1
#endif

T scan_load(BPTR x, i64 i, i64 kind) {
	if (kind == I64C(FLAG_NONE)) {
		return LDT(x, i);
	}
	if (kind == I64C(FLAG_POPC32)) {
		return CAST(T, POPC32(LD32(x, i)));
	}
	return flag_at(x, i, kind) ? CAST(T, 1) : CAST(T, 0);
}

/* The end of the range of tiles group g owns, [g*tpg, end). */
i64 scan_tiles_per_group(i64 n) {
	const i64 tile = I64C(LOCAL_SIZE) * I64C(ITEMS);
	return cdiv64(cdiv64(n, tile), GROUP_TOTAL());
}

i64 scan_tiles_end(i64 n, i64 g, i64 tpg) {
	const i64 tile = I64C(LOCAL_SIZE) * I64C(ITEMS);
	return min64((g + I64C(1)) * tpg, cdiv64(n, tile));
}

void scan_reduce_local(BPTR x, BPTR partials, i64 n, i64 kind SCRATCH_PARAM) {
	const i64 tile = I64C(LOCAL_SIZE) * I64C(ITEMS);
	const i64 tpg = scan_tiles_per_group(n);
	const i64 g = GROUP_LINEAR_ID();
	const i64 lid = LOCAL_ID();
	T acc = CAST(T, 0);
	const i64 tend = scan_tiles_end(n, g, tpg);
	if (I64C(LOCAL_SIZE) * I64C(FLAT) == I64C(1) && kind == I64C(FLAG_NONE)) { /* LOCAL_SIZE 1 and FLAT 1 */
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
	for (i64 s = I64C(LOCAL_SIZE) >> 1; s > I64C(0); s = s >> 1) {
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
INLINE void scan_partials(SCAN_PARTIALS_PARAMS) {
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

void scan_apply_local(BPTR x, BPTR y, BPTR partials, i64 n, i64 kind, i64 exclusive SCRATCH_PARAM) {
	const i64 tile = I64C(LOCAL_SIZE) * I64C(ITEMS);
	const i64 tpg = scan_tiles_per_group(n);
	const i64 g = GROUP_LINEAR_ID();
	const i64 lid = LOCAL_ID();
	T carry = LDT(partials, g);
	const i64 tend = scan_tiles_end(n, g, tpg); /* uniform: barriers stay matched */
	if (I64C(LOCAL_SIZE) * I64C(FLAT) == I64C(1) && kind == I64C(FLAG_NONE)) { /* LOCAL_SIZE 1 and FLAT 1 */
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
				SCAN_EMIT(x, y, i, run, kind, exclusive)
			}
		}
	}
}

#ifdef SCAN_SG_OK
/* The first unit of subgroup SG_ID's segment of tile t. */
i64 sg_seg(i64 t) {
	return (t * I64C(LOCAL_SIZE) + SG_ID * SG_SIZE) * I64C(ITEMS);
}

/* How many rows of the segment at seg hold only elements below n. */
i64 sg_full_rows(i64 seg, i64 n) {
	const i64 whole = udiv64(n, I64C(SCAN_SG_PV)); /* units with every element below n */
	return min64(udiv64(max64(whole - seg, I64C(0)), SG_SIZE), I64C(ITEMS));
}

#if SCAN_SG_PV == 2
/* Unit u (elements 2u and 2u+1) as a packed pair; 0 past n when checked. */
u64 sg_pair(BPTR x, i64 n, i64 u, i64 kind, i64 checked) {
	const i64 i = I64C(2) * u;
	if (checked == I64C(0) && kind == I64C(FLAG_NONE)) {
		return LD_PAIR(x, u);
	}
	const T a = i < n ? scan_load(x, i, kind) : CAST(T, 0);
	const T b = i + I64C(1) < n ? scan_load(x, i + I64C(1), kind) : CAST(T, 0);
	return PAIR_PACK(a, b);
}
#else
T sg_one(BPTR x, i64 n, i64 u, i64 kind, i64 checked) {
	if (checked != I64C(0) && u >= n) {
		return CAST(T, 0);
	}
	return scan_load(x, u, kind);
}
#endif

/* A unit as loaded (SG_UNIT), unchecked, of plain elements (FLAG_NONE),
 * and its sum. */
#if SCAN_SG_PV == 2
#define SG_UNIT u64
#define SG_UNIT_LD(x, u) LD_PAIR(x, u)
#define SG_UNIT_SUM(w) ADD(PAIR_LO(w), PAIR_HI(w))
#else
#define SG_UNIT T
#define SG_UNIT_LD(x, u) LDT(x, u)
#define SG_UNIT_SUM(w) (w)
#endif

/* Whether the segment at seg is loaded as a batch (SG_ROWS_LOAD): the
 * plan's rows are few (the GPU plans' 8; lavapipe's plans take 1024 a
 * segment, too many to hold, which its compiler took minutes to find),
 * the segment lies wholly below n and holds plain elements. */
#define SG_BATCH_MAX 16
#define SG_BATCH_N (ITEMS < SG_BATCH_MAX ? ITEMS : SG_BATCH_MAX)
#define SG_BATCH(seg) (ITEMS <= SG_BATCH_MAX && kind == I64C(FLAG_NONE) && sg_full_rows(seg, n) == I64C(ITEMS))

/* The segment at seg's rows into rows[SG_BATCH_N] (ITEMS of them where
 * SG_BATCH), all loads in flight at once: loaded row by row, each between
 * subgroup operations (which no compiler moves a load across), a segment
 * waited ITEMS round trips to memory. */
#define SG_ROWS_LOAD(rows, seg) \
	UNROLL for (int j_ = 0; j_ < SG_BATCH_N; j_++) { /* 32-ok: a row, < ITEMS */ \
		rows[j_] = SG_UNIT_LD(x, (seg) + I64C(j_) * SG_SIZE + SG_LANE); \
	}

/* acc plus the sum of a batch's rows, in row order. */
#define SG_ROWS_SUM(rows, acc) \
	UNROLL for (int j_ = 0; j_ < SG_BATCH_N; j_++) { /* 32-ok: a row, < ITEMS */ \
		acc = ADD(acc, SG_UNIT_SUM(rows[j_])); \
	}

/* The sum of unit u. Spelled out, not SG_UNIT_SUM(sg_unit(...)): that
 * spelling took RADV's Navi 31 build of the pair path from 18 round trips
 * to 31 in the reduce pass and 8 to 9 in the folded apply
 * (TestVulkanAMDLoads, session 23). */
T sg_unit_sum(BPTR x, i64 n, i64 u, i64 kind, i64 checked) {
#if SCAN_SG_PV == 2
	const u64 w = sg_pair(x, n, u, kind, checked);
	return ADD(PAIR_LO(w), PAIR_HI(w));
#else
	return sg_one(x, n, u, kind, checked);
#endif
}

/* This lane's sum over the rows of the segment at seg. */
T sg_seg_sum(BPTR x, i64 n, i64 seg, i64 kind) {
	const i64 full = sg_full_rows(seg, n);
	T acc = CAST(T, 0);
	if (SG_BATCH(seg)) {
		SG_UNIT rows[SG_BATCH_N];
		SG_ROWS_LOAD(rows, seg)
		SG_ROWS_SUM(rows, acc)
		return acc;
	}
	for (i64 j = I64C(0); j < full; j++) {
		acc = ADD(acc, sg_unit_sum(x, n, seg + j * SG_SIZE + SG_LANE, kind, I64C(0)));
	}
	for (i64 j = full; j < I64C(ITEMS); j++) {
		acc = ADD(acc, sg_unit_sum(x, n, seg + j * SG_SIZE + SG_LANE, kind, I64C(1)));
	}
	return acc;
}

#if SCAN_SG_PV == 2
/* Unit u's two elements, lo and hi, stored (checked: each below n). */
void sg_store_pair(BPTR y, i64 n, i64 u, T lo, T hi, i64 checked) {
	const i64 i = I64C(2) * u;
	if (checked == I64C(0)) {
		ST_PAIR(y, u, PAIR_PACK(lo, hi));
	} else {
		if (i < n) {
			STT(y, i, lo);
		}
		if (i + I64C(1) < n) {
			STT(y, i + I64C(1), hi);
		}
	}
}
#endif

/* The unit u as loaded (sg_pair or sg_one), 0 past n when checked. */
SG_UNIT sg_unit(BPTR x, i64 n, i64 u, i64 kind, i64 checked) {
#if SCAN_SG_PV == 2
	return sg_pair(x, n, u, kind, checked);
#else
	return sg_one(x, n, u, kind, checked);
#endif
}

/* Scans the row holding unit u (one per lane), its unit w as loaded, from
 * run, the sum of everything before the row; returns the sum through the
 * row. */
T sg_row_w(BPTR y, i64 n, i64 u, SG_UNIT w, i64 exclusive, T run, i64 checked) {
#if SCAN_SG_PV == 2
	const T a = PAIR_LO(w);
	const T v = ADD(a, PAIR_HI(w));
	const T e = ADD(run, SG_EXCL(v));
	const T lo = exclusive != I64C(0) ? e : ADD(e, a);
	const T hi = exclusive != I64C(0) ? ADD(e, a) : ADD(ADD(e, a), PAIR_HI(w));
	sg_store_pair(y, n, u, lo, hi, checked);
#else
	const T v = w;
	const T e = ADD(run, SG_EXCL(v));
	if (checked == I64C(0) || u < n) {
		STT(y, u, exclusive != I64C(0) ? e : ADD(e, v));
	}
#endif
	return ADD(run, SG_ADD(v));
}

/* sg_row_w of unit u, loaded (sg_pair or sg_one). */
T sg_row(BPTR x, BPTR y, i64 n, i64 u, i64 kind, i64 exclusive, T run, i64 checked) {
	return sg_row_w(y, n, u, sg_unit(x, n, u, kind, checked), exclusive, run, checked);
}

/* SCAN_SG = 3 (llvmpipe, one subgroup per group): the segment is walked
 * in batches of SG_SIZE*SG_RB units (fewer at a segment's end, where
 * ITEMS is not a multiple of SG_RB), lane l taking the batch's l-th run of
 * consecutive units: loaded at once (where the batch lies wholly below n;
 * else twice, checked), summed in the lane, one subgroup scan of the
 * lanes' sums, then each lane scans its run from registers.
 * llvmpipe runs a subgroup scan lane by lane (an extract, a test, a
 * branch and an add a lane); the rows above pay two a row of SG_SIZE
 * units, this path two a batch. The reduce pass keeps the rows (one
 * subgroup sum a segment). Runs of 4 ran as fast as runs of 8 on
 * llvmpipe and cost less to build (a process's first scan: 0.07-0.13 s
 * of CPU more than the rows, where runs of 8, with the reduce on runs
 * too, cost 0.37); runs of 2 ran 1.7x slower. */
#define SG_RB 4

/* Scans unit u, its value w as loaded, within this lane from run, the sum
 * of everything before it; returns the sum through it. */
T sg_unit_scan_w(BPTR y, i64 n, i64 u, SG_UNIT w, i64 exclusive, T run, i64 checked) {
#if SCAN_SG_PV == 2
	const T a = PAIR_LO(w);
	const T b = PAIR_HI(w);
	const T mid = ADD(run, a);
	const T last = ADD(mid, b);
	const T lo = exclusive != I64C(0) ? run : mid;
	const T hi = exclusive != I64C(0) ? mid : last;
	sg_store_pair(y, n, u, lo, hi, checked);
	return last;
#else
	const T next = ADD(run, w);
	if (checked == I64C(0) || u < n) {
		STT(y, u, exclusive != I64C(0) ? run : next);
	}
	return next;
#endif
}

/* SCAN_SG = 3's apply over tiles [t0, tend) from carry. */
void scan_apply_runs(BPTR x, BPTR y, i64 n, i64 kind, i64 exclusive, i64 t0, i64 tend, T carry) {
	const i64 whole = udiv64(n, I64C(SCAN_SG_PV)); /* units with every element below n */
	for (i64 t = t0; t < tend; t++) {
		const i64 seg = sg_seg(t);
		for (i64 b = I64C(0); b < I64C(ITEMS); b += I64C(SG_RB)) {
			const i64 rb = min64(I64C(SG_RB), I64C(ITEMS) - b); /* uniform */
			const i64 base = seg + b * SG_SIZE;
			const i64 lo = base + SG_LANE * rb;
			if (rb == I64C(SG_RB) && base + SG_SIZE * I64C(SG_RB) <= whole) {
				SG_UNIT w[SG_RB];
				T mine = CAST(T, 0);
				UNROLL for (int j = 0; j < SG_RB; j++) { /* 32-ok: a unit of the run, < SG_RB */
					w[j] = sg_unit(x, n, lo + I64C(j), kind, I64C(0));
				}
				UNROLL for (int j = 0; j < SG_RB; j++) { /* 32-ok: a unit of the run, < SG_RB */
					mine = ADD(mine, SG_UNIT_SUM(w[j]));
				}
				T run = ADD(carry, SG_EXCL(mine));
				carry = ADD(carry, SG_ADD(mine));
				UNROLL for (int j = 0; j < SG_RB; j++) { /* 32-ok: a unit of the run, < SG_RB */
					run = sg_unit_scan_w(y, n, lo + I64C(j), w[j], exclusive, run, I64C(0));
				}
			} else {
				T mine = CAST(T, 0);
				for (i64 j = I64C(0); j < rb; j++) {
					mine = ADD(mine, sg_unit_sum(x, n, lo + j, kind, I64C(1)));
				}
				T run = ADD(carry, SG_EXCL(mine));
				carry = ADD(carry, SG_ADD(mine));
				for (i64 j = I64C(0); j < rb; j++) {
					run = sg_unit_scan_w(y, n, lo + j, sg_unit(x, n, lo + j, kind, I64C(1)), exclusive, run, I64C(1));
				}
			}
		}
	}
}

void scan_reduce_sg(BPTR x, BPTR partials, i64 n, i64 kind SCRATCH_PARAM) {
	const i64 units = cdiv64(n, I64C(SCAN_SG_PV));
	const i64 tpg = scan_tiles_per_group(units);
	const i64 g = GROUP_LINEAR_ID();
	const i64 tend = scan_tiles_end(units, g, tpg);
	T acc = CAST(T, 0);
	for (i64 t = g * tpg; t < tend; t++) {
		acc = ADD(acc, sg_seg_sum(x, n, sg_seg(t), kind));
	}
	acc = SG_ADD(acc);
	if (SCAN_SG >= 2) {
		if (SG_LANE == I64C(0)) {
			STT(partials, g, acc);
		}
		return;
	}
	if (SG_LANE == I64C(0)) {
		SH(SG_ID) = acc;
	}
	LOCAL_BARRIER();
	if (LOCAL_ID() == I64C(0)) {
		T s = CAST(T, 0);
		for (i64 k = I64C(0); k < SG_COUNT; k++) {
			s = ADD(s, SH(k));
		}
		STT(partials, g, s);
	}
}

void scan_apply_sg(BPTR x, BPTR y, BPTR partials, i64 n, i64 kind, i64 exclusive SCRATCH_PARAM) {
	const i64 units = cdiv64(n, I64C(SCAN_SG_PV));
	const i64 tpg = scan_tiles_per_group(units);
	const i64 g = GROUP_LINEAR_ID();
	const i64 tend = scan_tiles_end(units, g, tpg); /* uniform: barriers stay matched */
	T carry = LDT(partials, g);
	if (SCAN_SG == 3) {
		scan_apply_runs(x, y, n, kind, exclusive, g * tpg, tend, carry);
		return;
	}
	for (i64 t = g * tpg; t < tend; t++) {
		const i64 seg = sg_seg(t);
		/* a whole segment of plain elements is loaded once, summed and
		 * scanned from registers; the rest row by row, twice */
		const bool batch = SG_BATCH(seg);
		SG_UNIT rows[SG_BATCH_N];
		T mine = CAST(T, 0); /* this lane's sum over the segment */
		if (batch) {
			SG_ROWS_LOAD(rows, seg)
			SG_ROWS_SUM(rows, mine)
		} else if (SCAN_SG != 2) {
			mine = sg_seg_sum(x, n, seg, kind);
		}
		T pre = CAST(T, 0);
		T tot = CAST(T, 0);
		if (SCAN_SG != 2) {
			/* the sums of the earlier segments of the tile, and of all */
			const T s = SG_ADD(mine);
			if (SG_LANE == I64C(0)) {
				SH(SG_ID) = s;
			}
			LOCAL_BARRIER();
			for (i64 k = I64C(0); k < SG_COUNT; k++) {
				const T v = SH(k);
				pre = k < SG_ID ? ADD(pre, v) : pre;
				tot = ADD(tot, v);
			}
			LOCAL_BARRIER(); /* everyone has read the scratch before the next tile */
		}
		const i64 full = sg_full_rows(seg, n);
		T run = ADD(carry, pre);
		if (batch) {
			UNROLL for (int j = 0; j < SG_BATCH_N; j++) { /* 32-ok: a row, < ITEMS */
				run = sg_row_w(y, n, seg + I64C(j) * SG_SIZE + SG_LANE, rows[j], exclusive, run, I64C(0));
			}
		} else {
			for (i64 j = I64C(0); j < full; j++) {
				run = sg_row(x, y, n, seg + j * SG_SIZE + SG_LANE, kind, exclusive, run, I64C(0));
			}
			for (i64 j = full; j < I64C(ITEMS); j++) {
				run = sg_row(x, y, n, seg + j * SG_SIZE + SG_LANE, kind, exclusive, run, I64C(1));
			}
		}
		carry = SCAN_SG != 2 ? ADD(carry, tot) : run;
	}
}
#endif

/* The chained scans (entries chain and fixup): single-pass, x read and y
 * written once. The n elements are cut into tiles; a tile's owner sums it,
 * publishes the sum (partials[t], then flags[1+t] = 1), looks back for
 * the inclusive prefix before its tile, publishes its own
 * (partials[tiles+1+t], then flags[1+t] = 2) and scans the tile into y.
 *
 * The look-back walks from tile t-1 down to the nearest tile with a
 * prefix (or the start), over tiles that have published their sums, and
 * then adds those sums in tile order: every tile's carry is the left fold
 * carry[t+1] = carry[t] + sum[t] whatever the timing, so float results
 * are the same run to run and on any number of cores. A tile that has not
 * published its sum yet is waited for, but only SPIN polls: its owner may
 * not be running (descheduled, or a work-group the device has not started
 * yet, since neither OpenCL nor Vulkan promises forward progress between
 * work-groups), and the one looking back then leaves its tile unwritten at
 * state 1 and moves on. The fixup launch after it scans those tiles (the
 * same code, so the same bits) with carries from the same look-back, now
 * over final states, and writes the total (partials[tiles]) where the
 * last tile did not. So nothing waits unboundedly and the scan cannot
 * deadlock on any device. The flags must be zeroed before the launch.
 *
 * Two shapes (knob CHAIN):
 *   1  CPU OpenCL drivers: one work-item per group takes tiles of ITEMS
 *      elements (a core's cache holds one) in ticket order (an atomic
 *      counter, flags[0]), summing a tile into the cache and scanning it
 *      again from there; the wrapper defines SCAN_CHAIN_OK and
 *      SCAN_TILE_SUM(x, lo, hi) and SCAN_TILE_WRITE(x, y, lo, hi, carry,
 *      exclusive), the element loops of one tile (vectorized).
 *      The wrapper defines the flag and partial accesses: CH_FLAG_LD(f, i)
 *      (a uint32 state, read anew every time), CH_FLAG_ST(f, i, v)
 *      (atomic), CH_PV_LD(p, i) and CH_PV_ST(p, i, v), and CH_FENCE(): a
 *      partial is written, fenced, then its flag; a flag is read, fenced,
 *      then the partials.
 *   2  GPUs: work-group g takes tiles g, g + groups, ... of LOCAL_SIZE *
 *      ITEMS elements (scan_wg.h), loads a tile into scratch with
 *      consecutive lanes on consecutive elements, scans it there (each
 *      lane its ITEMS consecutive elements, then the lanes' sums) while
 *      lane 0 publishes and looks back, and stores it the same way. Here
 *      no fence orders a value before its flag (NVIDIA's OpenCL
 *      mem_fence did not: the H200 read a partial before it was written):
 *      every published value travels in 64-bit words (flags, zeroed),
 *      each holding a 32-bit piece of it under a tag (1 << 32), so a word
 *      read either has the tag and its piece or is not there yet: tile t's
 *      sum at words [t*P, (t+1)*P), its inclusive prefix at [(tiles+t)*P,
 *      ...), P = T_PIECES words. The wrapper defines CHW_LD(w, i) and
 *      CHW_ST(w, i, v) (a 64-bit word, read anew every time), T_PIECES,
 *      T_PIECE(v, q) (piece q of v's bits) and T_JOIN(lo, hi). */

#ifdef SCAN_CHAIN_OK

/* The nearest tile before t whose prefix is published (-1: none, the
 * start), after waiting at most spin polls (spin < 0: without bound, the
 * fixup, where every state is final) for each tile in between to publish
 * its sum; -2 where one did not. */
i64 scan_chain_back(BPTR flags, i64 t, i64 spin) {
	i64 j = t - I64C(1);
	i64 polls = I64C(0);
	while (j >= I64C(0)) {
		const uint f = CH_FLAG_LD(flags, I64C(1) + j); /* 32-ok: a tile's state flag, 0..2 */
		if (f == 2u) {
			break;
		}
		if (f == 1u) {
			j--;
		} else if (spin >= I64C(0) && ++polls > spin) {
			return I64C(-2);
		}
	}
	CH_FENCE();
	return j;
}

/* The carry into tile t from the nearest prefix j (scan_chain_back): the
 * prefix, then the sums of tiles j+1 .. t-1 in order. */
T scan_chain_carry(BPTR partials, i64 tiles, i64 j, i64 t) {
	T carry = j >= I64C(0) ? CH_PV_LD(partials, tiles + I64C(1) + j) : CAST(T, 0);
	for (i64 k = j + I64C(1); k < t; k++) {
		carry = ADD(carry, CH_PV_LD(partials, k));
	}
	return carry;
}

T scan_chain_sum(BPTR x, i64 lo, i64 hi, i64 kind) {
	if (kind == I64C(FLAG_NONE)) {
		return SCAN_TILE_SUM(x, lo, hi);
	}
	T agg = CAST(T, 0);
	for (i64 i = lo; i < hi; i++) {
		agg = ADD(agg, scan_load(x, i, kind));
	}
	return agg;
}

void scan_chain_write(BPTR x, BPTR y, i64 lo, i64 hi, T carry, i64 kind, i64 exclusive) {
	if (kind == I64C(FLAG_NONE)) {
		SCAN_TILE_WRITE(x, y, lo, hi, carry, exclusive);
		return;
	}
	T run = carry;
	for (i64 i = lo; i < hi; i++) {
		SCAN_EMIT(x, y, i, run, kind, exclusive)
	}
}

void scan_chain_cpu(BPTR x, BPTR y, BPTR partials, BPTR flags, i64 n, i64 kind, i64 exclusive) {
	const i64 tiles = cdiv64(n, I64C(ITEMS));
	for (;;) {
		const i64 t = CAST(i64, atomic_inc((volatile __global uint *)flags));
		if (t >= tiles) {
			return;
		}
		const i64 lo = t * I64C(ITEMS);
		const i64 hi = min64(lo + I64C(ITEMS), n);
		const T agg = scan_chain_sum(x, lo, hi, kind);
		CH_PV_ST(partials, t, agg);
		CH_FENCE();
		CH_FLAG_ST(flags, I64C(1) + t, 1u);
		const i64 j = scan_chain_back(flags, t, I64C(SPIN));
		if (j == I64C(-2)) {
			continue; /* the fixup scans it */
		}
		const T carry = scan_chain_carry(partials, tiles, j, t);
		const T incl = ADD(carry, agg);
		CH_PV_ST(partials, tiles + I64C(1) + t, incl);
		if (t == tiles - I64C(1)) {
			CH_PV_ST(partials, tiles, incl); /* the total, where reduce-then-scan leaves it */
		}
		CH_FENCE();
		CH_FLAG_ST(flags, I64C(1) + t, 2u);
		scan_chain_write(x, y, lo, hi, carry, kind, exclusive);
	}
}

void scan_fixup_cpu(BPTR x, BPTR y, BPTR partials, BPTR flags, i64 n, i64 kind, i64 exclusive) {
	const i64 tiles = cdiv64(n, I64C(ITEMS));
	const i64 workers = GROUP_TOTAL();
	for (i64 t = GROUP_LINEAR_ID(); t < tiles; t += workers) {
		if (CH_FLAG_LD(flags, I64C(1) + t) == 2u) {
			continue;
		}
		const T carry = scan_chain_carry(partials, tiles, scan_chain_back(flags, t, I64C(-1)), t);
		const i64 lo = t * I64C(ITEMS);
		if (t == tiles - I64C(1)) {
			CH_PV_ST(partials, tiles, ADD(carry, CH_PV_LD(partials, t)));
		}
		scan_chain_write(x, y, lo, min64(lo + I64C(ITEMS), n), carry, kind, exclusive);
	}
}
#endif

/* The GPUs' chained scan's tagged words (CHAIN = 2): whether value slot s
 * (tile s's sum, or tile s-tiles's prefix) is published, its value, and
 * publishing it. */
bool chw_ready(BPTR w, i64 s) {
	bool ok = true;
	for (int q = 0; q < T_PIECES; q++) { /* 32-ok: a piece, < T_PIECES */
		ok = ok && (CHW_LD(w, s * I64C(T_PIECES) + I64C(q)) >> 32) == 1ul;
	}
	return ok;
}

T chw_value(BPTR w, i64 s) {
	const uint lo = CAST(uint, CHW_LD(w, s * I64C(T_PIECES)) & 0xfffffffful); /* 32-ok: a 32-bit piece */
	const uint hi = T_PIECES > 1 ? CAST(uint, CHW_LD(w, s * I64C(T_PIECES) + I64C(T_PIECES - 1)) & 0xfffffffful) : 0u; /* 32-ok: a 32-bit piece */
	return T_JOIN(lo, hi);
}

void chw_put(BPTR w, i64 s, T v) {
	for (int q = 0; q < T_PIECES; q++) { /* 32-ok: a piece, < T_PIECES */
		CHW_ST(w, s * I64C(T_PIECES) + I64C(q), (1ul << 32) | CAST(u64, T_PIECE(v, q)));
	}
}

/* Slot s's words read once (a piece each, independent loads): whether
 * every piece is there (rd) and the value they hold (v, meaningful where
 * rd). */
#define CHW_READ(w, s, rd, v) \
	{ \
		const u64 a_ = CHW_LD(w, (s) * I64C(T_PIECES)); \
		const u64 b_ = T_PIECES > 1 ? CHW_LD(w, (s) * I64C(T_PIECES) + I64C(T_PIECES - 1)) : a_; \
		rd = (a_ >> 32) == 1ul && (b_ >> 32) == 1ul; \
		v = T_JOIN(CAST(uint, a_ & 0xfffffffful), CAST(uint, b_ & 0xfffffffful)); /* 32-ok: 32-bit pieces */ \
	}

/* Integer sums are exact in any order (they wrap alike), so the look-back
 * adds the values it meets as it walks; a float carry is folded again in
 * tile order (chw_carry), so that its bits do not depend on where the
 * walk found a prefix. */
#define CHW_EXACT (DT == 1 || DT == 2)

/* The look-back of tile t on the tagged words, by the group's first
 * SCANG_W lanes at once (one round trip to memory looks at SCANG_W
 * tiles, where one lane walking alone paid one per tile: 1.4 ms for 64M
 * int32 on the H200, four times a copy): the nearest tile before t with a
 * published prefix (-1: the start; -2: a sum in between did not come
 * within spin polls; spin < 0 waits without bound). Each lane reads one
 * tile's prefix and sum words at once (one round trip, where reading the
 * sum only after a missing prefix took two) and puts its state into
 * scratch, and every lane takes the same decision from it, so the loop
 * and its barriers stay uniform. For integer sums (CHW_EXACT) the lanes
 * also put the value they found, and lane 0 adds those the walk passes,
 * and the prefix it stops at: the carry, left in SH(SCANG_ACC) (lane
 * 0's), with no second walk. */
i64 chw_back(BPTR w, i64 tiles, i64 t, i64 spin SCRATCH_PARAM) {
	const i64 lid = LOCAL_ID();
	i64 j = t - I64C(1);
	i64 polls = I64C(0);
	T acc = CAST(T, 0); /* lane 0's: the values passed (CHW_EXACT) */
	i64 res = I64C(-3); /* undecided; one exit, as PoCL's barrier regions want */
	while (res == I64C(-3)) {
		if (lid < SCANG_W) {
			const i64 k = j - lid;
			T st = CAST(T, 3); /* before the start */
			T val = CAST(T, 0);
			if (k >= I64C(0)) {
				bool pr;
				bool sr;
				T pv;
				T sv;
				CHW_READ(w, tiles + k, pr, pv)
				CHW_READ(w, k, sr, sv)
				st = pr ? CAST(T, 2) : (sr ? CAST(T, 1) : CAST(T, 0));
				val = pr ? pv : (sr ? sv : CAST(T, 0));
			}
			SH(SCANG_WIN + lid) = st;
			if (CHW_EXACT) {
				SH(SCANG_VALS + lid) = val;
			}
		}
		LOCAL_BARRIER();
		i64 l = I64C(0);
		while (l < SCANG_W && SH(SCANG_WIN + l) == CAST(T, 1)) {
			l++;
		}
		const T st = l < SCANG_W ? SH(SCANG_WIN + l) : CAST(T, 1);
		if (CHW_EXACT && lid == I64C(0)) {
			/* the sums walked past, and the prefix where it stops */
			for (i64 q = I64C(0); q < l + (st == CAST(T, 2) ? I64C(1) : I64C(0)); q++) {
				acc = ADD(acc, SH(SCANG_VALS + q));
			}
		}
		LOCAL_BARRIER(); /* everyone has read the window before the next */
		if (st == CAST(T, 2)) {
			res = j - l;
		} else if (st == CAST(T, 3)) {
			res = I64C(-1);
		} else {
			j -= l; /* sums up to there: look on from the first tile without one */
			if (st == CAST(T, 0) && spin >= I64C(0) && ++polls > spin) {
				res = I64C(-2);
			}
		}
	}
	if (CHW_EXACT && lid == I64C(0)) {
		SH(SCANG_ACC) = acc;
	}
	return res;
}

/* The carry into tile t from the nearest prefix j (chw_back): the prefix,
 * then the sums of tiles j+1 .. t-1 folded in tile order by lane 0 (the
 * same bits whatever j was), read SCANG_W at a time by the first lanes.
 * Lane 0's value is the carry. */
T chw_carry(BPTR w, i64 tiles, i64 j, i64 t SCRATCH_PARAM) {
	const i64 lid = LOCAL_ID();
	T carry = j >= I64C(0) && lid == I64C(0) ? chw_value(w, tiles + j) : CAST(T, 0);
	for (i64 from = j + I64C(1); from < t; from += SCANG_W) {
		if (lid < SCANG_W && from + lid < t) {
			SH(SCANG_WIN + lid) = chw_value(w, from + lid);
		}
		LOCAL_BARRIER();
		if (lid == I64C(0)) {
			const i64 m = min64(SCANG_W, t - from);
			for (i64 k = I64C(0); k < m; k++) {
				carry = ADD(carry, SH(SCANG_WIN + k));
			}
		}
		LOCAL_BARRIER();
	}
	return carry;
}

/* Tile t of the GPUs' chained scan (CHAIN = 2) by the whole work-group:
 * with fix = 0 the chain's (publish, look back at most SPIN polls), with
 * fix = 1 the fixup's (only a tile the chain left unwritten, looking back
 * without bound). Every lane reaches every barrier: the branches on the
 * flag and on found are uniform (the flag is final in the fixup, every
 * lane takes found from the same scratch). */
INLINE void scan_tile_wg(BPTR x, BPTR y, BPTR partials, BPTR flags, i64 n, i64 kind, i64 exclusive, i64 tiles, i64 t,
	i64 fix SCRATCH_PARAM) {
	const i64 lid = LOCAL_ID();
	const i64 ls = I64C(LOCAL_SIZE);
	const i64 base = t * SCANG_TILE;
	if (fix != I64C(0) && chw_ready(flags, tiles + t)) {
		return; /* the chain wrote it */
	}
	/* every element loaded at a position inside x (the tile's last ones
	 * at n - 1, and dropped), plain elements' loads with no branch
	 * between them: the kind tested once, outside the loop (inlined
	 * where the kind is compiled in: GPUs', accel/scan.go), so that a
	 * work-item's ITEMS loads are in flight together (RADV's compiler
	 * waited for each, before the kind's branch, or the tile's end's) */
	if (kind == I64C(FLAG_NONE)) {
		UNROLL for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 i = base + j * ls + lid;
			const T v = LDT(x, min64(i, n - I64C(1)));
			SH(SCANG_PAD(j * ls + lid)) = i < n ? v : CAST(T, 0);
		}
	} else {
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 i = base + j * ls + lid;
			const T v = scan_load(x, min64(i, n - I64C(1)), kind);
			SH(SCANG_PAD(j * ls + lid)) = i < n ? v : CAST(T, 0);
		}
	}
	LOCAL_BARRIER();
	T s = CAST(T, 0);
	for (i64 k = I64C(0); k < I64C(ITEMS); k++) {
		s = ADD(s, SH(SCANG_PAD(lid * I64C(ITEMS) + k)));
	}
	SH(SCANG_SUMS + lid) = s;
	LOCAL_BARRIER();
	for (i64 off = I64C(1); off < ls; off = off * I64C(2)) {
		const T v = lid >= off ? SH(SCANG_SUMS + lid - off) : CAST(T, 0);
		LOCAL_BARRIER();
		SH(SCANG_SUMS + lid) = ADD(SH(SCANG_SUMS + lid), v);
		LOCAL_BARRIER();
	}
	const T agg = SH(SCANG_SUMS + ls - I64C(1));
	if (fix == I64C(0) && lid == I64C(0)) {
		chw_put(flags, t, agg);
	}
	const i64 j = chw_back(flags, tiles, t, fix != I64C(0) ? I64C(-1) : I64C(SPIN) SCRATCH_ARG);
	const bool found = j != I64C(-2); /* uniform */
	/* lane 0's: integer carries come with the walk (CHW_EXACT) */
	const T carry = !found ? CAST(T, 0) : (CHW_EXACT ? (lid == I64C(0) ? SH(SCANG_ACC) : CAST(T, 0)) : chw_carry(flags, tiles, j, t SCRATCH_ARG));
	if (found && lid == I64C(0)) {
		const T incl = ADD(carry, agg);
		if (fix == I64C(0)) {
			chw_put(flags, tiles + t, incl);
		}
		if (t == tiles - I64C(1)) {
			STT(partials, tiles, incl); /* the total, where reduce-then-scan leaves it */
		}
		SH(SCANG_CARRY) = carry;
	}
	LOCAL_BARRIER();
	if (found) {
		T run = ADD(SH(SCANG_CARRY), lid > I64C(0) ? SH(SCANG_SUMS + lid - I64C(1)) : CAST(T, 0));
		for (i64 k = I64C(0); k < I64C(ITEMS); k++) {
			const i64 at = SCANG_PAD(lid * I64C(ITEMS) + k);
			const T v = SH(at);
			if (exclusive != I64C(0)) {
				SH(at) = run;
				run = ADD(run, v);
			} else {
				run = ADD(run, v);
				SH(at) = run;
			}
		}
		LOCAL_BARRIER();
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 i = base + j * ls + lid;
			if (i < n) {
				STT(y, i, SH(SCANG_PAD(j * ls + lid)));
			}
		}
	}
	LOCAL_BARRIER(); /* everyone has read the scratch before the next tile */
}

/* The chained scan's launch (fix = 0, entry chain) or its fixup's (fix =
 * 1), in the shape CHAIN says. */
INLINE void scan_chain_run(BPTR x, BPTR y, BPTR partials, BPTR flags, i64 n, i64 kind, i64 exclusive, i64 fix SCRATCH_PARAM) {
#ifdef SCAN_CHAIN_OK
	if (CHAIN != 2) {
		if (fix != I64C(0)) {
			scan_fixup_cpu(x, y, partials, flags, n, kind, exclusive);
		} else {
			scan_chain_cpu(x, y, partials, flags, n, kind, exclusive);
		}
		return;
	}
#endif
	const i64 tiles = cdiv64(n, SCANG_TILE);
	for (i64 t = GROUP_LINEAR_ID(); t < tiles; t += GROUP_TOTAL()) {
		scan_tile_wg(x, y, partials, flags, n, kind, exclusive, tiles, t, fix SCRATCH_ARG);
	}
}

INLINE void scan_chain(SCAN_CHAIN_PARAMS) {
	scan_chain_run(x, y, partials, flags, n, kind, exclusive, I64C(0) SCRATCH_ARG);
}

INLINE void scan_fixup(SCAN_FIXUP_PARAMS) {
	scan_chain_run(x, y, partials, flags, n, kind, exclusive, I64C(1) SCRATCH_ARG);
}

INLINE void scan_reduce(SCAN_REDUCE_PARAMS) {
#ifdef SCAN_SG_OK
	if (SCAN_SG != 0) {
		scan_reduce_sg(x, partials, n, kind SCRATCH_ARG);
		return;
	}
#endif
	scan_reduce_local(x, partials, n, kind SCRATCH_ARG);
}

INLINE void scan_apply(SCAN_APPLY_PARAMS) {
#ifdef SCAN_SG_OK
	if (SCAN_SG != 0) {
		scan_apply_sg(x, y, partials, n, kind, exclusive SCRATCH_ARG);
		return;
	}
#endif
	scan_apply_local(x, y, partials, n, kind, exclusive SCRATCH_ARG);
}

#endif
