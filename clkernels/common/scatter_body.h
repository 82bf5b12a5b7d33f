/* scatter_body.h: scatter / scatter_reduce / put_along_axis /
 * take_along_axis, shared by clkernels/scatter.cl and shaders/scatter.comp.
 * The entry points and their parameters are declared in host/kernels
 * (gen/scatter.h); each is one pass:
 *   scatter_validate  (over positions): an index outside [0, dim_size)
 *                     records its tile (position >> ERR_TILE_SHIFT) with an
 *                     atomic min into err[0]; nothing else is written
 *   scatter_init      (over positions): every hit target starts from the
 *                     reduction's identity (include_self false); a bad
 *                     index is recorded as scatter_validate does, and
 *                     skipped
 *   scatter_reduce    (over positions; a bad index recorded and skipped
 *                     too): dst[target] = combine(dst[target],
 *                     src[p]) with a compare-and-swap loop on the element's
 *                     bits (a stored NaN cannot make it spin: bits are
 *                     compared), or a plain store for assign; counts[target]++
 *                     for mean. Sums and means use the device's atomic
 *                     add where the wrapper defines ATOM_ADD_T (integers
 *                     always, floats in the variants with FADD=1, chosen
 *                     only on devices that have it) and SC_CAS is 0
 *   scatter_mean      (over outputs): dst /= count (+1 with include_self)
 *                     where count > 0; integers floor
 *   scatter_gather    (over positions): dst[p] = arr[target] (take_along_axis)
 *   scatter_dest      (over positions): the 64-bit words keys[p] = the
 *                     target's offset and soffs[p] = the source's offset,
 *                     which the bit-reproducible mode sorts
 *   scatter_pcount, scatter_place, scatter_pfold: the GPUs' partition of
 *                     the bit-reproducible mode for 32-bit values and fewer
 *                     than 2^32 positions (see scatter_pfold)
 *   scatter_pslot, scatter_sfold: its slotted form, with no count before
 *                     the placing (see scatter_sfold)
 *   scatter_owned     (CPU drivers; one work-item per owner): work-item w of
 *                     W owns the output offsets [w*span, (w+1)*span) and
 *                     walks every position in index order, folding those it
 *                     owns with plain loads and stores: no atomics, and each
 *                     target sees its values in index order (the reference's
 *                     bits). It validates as it goes (a bad index is skipped
 *                     and its tile recorded in err[0]), keeps per-target
 *                     counts in counts when it needs them (mean, or
 *                     include_self == 0, where the first hit starts from the
 *                     identity), and sends the stores of positions it does
 *                     not own to its own spare slot, so the loop has no
 *                     data-dependent branch.
 *   scatter_private   (CPU drivers; one work-item per worker): worker w folds
 *                     its chunk of positions, in order, into a private copy
 *                     of the output (no atomics), validating as it goes
 *   scatter_few       (CPU drivers; one work-item per worker; a 1-d loop
 *                     shape, at most SC_FEW_MAX targets; sum, prod, amax,
 *                     amin, and with counted != 0 (hit counts per copy in
 *                     pcnt, for the merge) mean or no input too): worker w keeps a vector of
 *                     accumulators per target in registers and folds a
 *                     vector of positions a step, every target under its
 *                     lane mask (no data-dependent address), then writes
 *                     its private copy, validating as it goes
 *   scatter_merge     (over outputs): folds the private copies into dst in
 *                     worker order (and divides the mean)
 * The other passes after validate return at once when err[0] != ERR_NONE
 * (an index was flagged), except init and reduce, which check each index
 * themselves (the atomic strategy runs no validate pass); the host reads
 * the flag once, at the end of the op, and nothing is read or written out
 * of bounds meanwhile.
 *
 * Positions p run over the loop shape (the index shape, or for
 * put/take_along_axis the broadcast of index and array) and decompose with
 * the metadata buffer meta = [loop sizes, out strides, src strides, index
 * strides] (rank entries each, at SC_META_*·rank; a broadcast dim has
 * stride 0, and so has an out dim of size 1 that the loop broadcasts).
 * With wrap != 0 a negative index counts once from the end (NumPy). The
 * wrappers define the element type T, its bit type UBITS, LOADV/STOREV for
 * values, LOADI for int64 indices and metadata, LOADU/STOREU for 32-bit
 * counters, CAS_BITS (compare-and-swap on the element's bits, returning
 * the old bits), CAS_U32 (the same on a 32-bit counter), TO_BITS/FROM_BITS,
 * ATOM_MIN_U32, ATOM_ADD_U32 and ATOM_OR_U32, and dtypes.h's helpers. */
#ifndef ACCEL_SCATTER_BODY_H
#define ACCEL_SCATTER_BODY_H

#include "elementwise.h"
#include "reduce_ops.h"
#include "lane_scan.h"

#define SC_META(block, k) LOADI(meta, I64C(block) * rank + (k))

/* The strides a pass keeps in registers: the index's and the source's
 * (the 1-d loop's) and the output's along dim, loaded from meta once,
 * before the pass's loop. In the loop a load of meta would come after
 * the previous position's store or atomic, which no compiler moves it
 * across (they could alias meta for all it knows): a round trip to
 * memory for every position on a GPU. */
STRUCT(sc_strides) {
	i64 idx;
	i64 src;
	i64 dsto;
};

INLINE sc_strides sc_strides_of(BPTR meta, i64 rank, i64 dim) {
	sc_strides r;
	r.idx = LOADI(meta, I64C(SC_META_IDX));
	r.src = LOADI(meta, I64C(SC_META_SRC));
	r.dsto = SC_META(SC_META_OUT, dim);
	return r;
}

/* A position's offsets and index value (sc_position). */
STRUCT(sc_pos) {
	i64 o;  /* the target offset without the dim term */
	i64 s;  /* the source offset */
	i64 ix; /* the index value, a negative one wrapped once where wrap != 0 */
};

/* Position p's offsets, decomposed with the metadata (the 1-d path with
 * the strides st alone), and its index value. */
INLINE sc_pos sc_position(BPTR meta, BPTR index, sc_strides st, i64 rank, i64 dim, i64 dim_size, i64 wrap, i64 p) {
	sc_pos r;
	r.o = I64C(0);
	r.s = I64C(0);
	i64 io = I64C(0);
	i64 rem = p;
	if (rank == I64C(1)) { /* no division on the common 1-d path */
		r.s = p * st.src;
		io = p * st.idx;
	}
	for (i64 k = rank - I64C(1); k >= I64C(0) && rank > I64C(1); k--) {
		const i64 size = SC_META(SC_META_LOOP, k);
		const i64 q = udiv64(rem, size);
		const i64 pk = rem - q * size;
		rem = q;
		if (k != dim) {
			r.o += pk * SC_META(SC_META_OUT, k);
		}
		r.s += pk * SC_META(SC_META_SRC, k);
		io += pk * SC_META(SC_META_IDX, k);
	}
	r.ix = LOADI(index, io);
	if (wrap != I64C(0) && r.ix < I64C(0)) {
		r.ix += dim_size;
	}
	return r;
}

/* true when a validation flagged an index: the pass has nothing to do */
bool sc_flagged(BPTR err) {
	return LD32(err, 0) != ERR_NONE;
}

/* true when index value ix is outside [0, dim_size) */
bool sc_bad(i64 ix, i64 dim_size) {
	return ix < I64C(0) || ix >= dim_size;
}

/* Records position p's tile in err[0] (the smallest flagged one wins). */
void sc_flag(BPTR err, i64 p) {
	ATOM_MIN_U32(err, 0, CAST(u32, p >> ERR_TILE_SHIFT)); /* 32-ok: p >> ERR_TILE_SHIFT (16) < 2^32 for positions < 2^48 */
}

/* The elementwise passes over positions (validate, init, reduce, gather,
 * dest) take each position p of this work-item's tiles in the tile loop
 * of elementwise.h, with its offsets and index value from sc_position. */
INLINE void scatter_validate(SCATTER_VALIDATE_PARAMS) {
	const sc_strides st = sc_strides_of(meta, rank, dim);
	const i64 tiles = ew_tiles(count);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 p = ew_index(tile, j);
			if (p >= count) {
				continue;
			}
			const sc_pos q = sc_position(meta, index, st, rank, dim, dim_size, wrap, p);
			if (sc_bad(q.ix, dim_size)) {
				sc_flag(err, p);
			}
		}
	}
}

/* The target offset of a position: o plus the index's term. */
i64 sc_target(sc_strides st, sc_pos q) {
	return q.o + q.ix * st.dsto;
}

/* The atomic passes check their own indices (a bad one is recorded, as
 * scatter_validate does, and skipped): the output is a fresh tensor that
 * the host drops when the flag is raised, so no separate validation pass
 * has to read every index first.
 * No early return on the flag (in init or reduce): a group that starts
 * after another flagged an index must still record its own, or the first
 * bad index would not be the one named. */
INLINE void scatter_init(SCATTER_INIT_PARAMS) {
	const sc_strides st = sc_strides_of(meta, rank, dim);
	const i64 tiles = ew_tiles(count);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 p = ew_index(tile, j);
			if (p >= count) {
				continue;
			}
			const sc_pos q = sc_position(meta, index, st, rank, dim, dim_size, wrap, p);
			if (sc_bad(q.ix, dim_size)) {
				sc_flag(err, p);
			} else {
				STOREV(dst, sc_target(st, q), sc_identity(red));
			}
		}
	}
}

/* Whether the fold of red (sc_fold_at) is a compare-and-swap loop on
 * the element's bits: every reduction but assign, except the sums and
 * means that the device's atomic add takes (ATOM_ADD_T: integers, and
 * floats in the FADD=1 variants; SC_CAS 0). */
bool sc_cas_fold(i64 red) {
#ifdef ATOM_ADD_T
	if (SC_CAS == 0 && (red == I64C(RED_SUM) || red == I64C(RED_MEAN))) {
		return false;
	}
#endif
	return red != I64C(RED_ASSIGN);
}

/* The words a fold starts from, loaded before any of a batch's atomics
 * (scatter_reduce) where SC_PRELOAD says so: the target's bits where the
 * fold is a compare-and-swap loop, and with SC_CAS a mean's hit count. A
 * loop that starts from a stale word only retries, and a stale word that
 * the fold would leave as it is (next == old) linearizes the fold at the
 * load, which an unordered scatter allows. Loaded together, their misses
 * overlap: a GPU waits one round trip for a batch's words, not one a
 * position, and a driver that runs a vector's atomics a lane at a time
 * (SC_CAS) gathers the lanes' lines at once where each locked
 * instruction would wait for its own miss. A bad index loads target 0's
 * words, never folded (every index is bad where dim_size is 0, and the
 * output may be empty: nothing is loaded). */
STRUCT(sc_first) {
	UBITS old; /* the target's bits (sc_cas_fold) */
	u32 hits;  /* 32-ok: the target's hit count (SC_CAS, mean) */
};
/* SC_PRELOAD: whether scatter_reduce loads the folds' first words before
 * a batch's atomics: with SC_CAS, and in the variants without an atomic
 * add, whose folds (but assign's) are all compare-and-swap loops; the
 * variants with one (integers, FADD=1) keep their sums' and means' adds
 * free of loads. */
#ifdef ATOM_ADD_T
#define SC_PRELOAD (SC_CAS != 0)
#else
#define SC_PRELOAD true
#endif
sc_first sc_first_of(BPTR dst, BPTR counts, sc_strides st, i64 dim_size, i64 red, sc_pos q) {
	sc_first f;
	f.old = TO_BITS(CAST(T, 0));
	f.hits = 0u;
	if (SC_PRELOAD && dim_size > I64C(0)) {
		const i64 t = sc_bad(q.ix, dim_size) ? I64C(0) : sc_target(st, q);
		if (sc_cas_fold(red)) {
			f.old = TO_BITS(LOADV(dst, t));
		}
		if (SC_CAS != 0 && red == I64C(RED_MEAN)) {
			f.hits = LOADU(counts, t);
		}
	}
	return f;
}

/* Counter i of c plus inc, returning the counter before it: the device's
 * atomic add, or with SC_CAS a compare-and-swap loop from first, the
 * counter as loaded before the batch's atomics (on a driver that runs a
 * vector's atomics a lane at a time, each locked instruction waits for
 * its own cache miss; the plain load is a vector gather whose misses
 * overlap, and the loop's locked instruction then finds its line). With
 * SC_CAS an inc of 0 (a batch slot that takes no part) touches nothing
 * and returns first, which its caller ignores. */
u32 sc_add_u32(BPTR c, i64 i, u32 inc, u32 first) { /* 32-ok: a 32-bit counter */
	if (SC_CAS == 0) {
		return ATOM_ADD_U32(c, i, inc);
	}
	u32 old = first; /* 32-ok: a 32-bit counter, not an index */
	while (inc != 0u) {
		const u32 seen = CAS_U32(c, i, old, old + inc); /* 32-ok: a 32-bit counter */
		if (seen == old) {
			break;
		}
		old = seen;
	}
	return old;
}

/* The counter sc_add_u32 starts from: with SC_CAS, counter i of c as it
 * is now (a plain load, before the batch's atomics); else nothing. */
u32 sc_add_first(BPTR c, i64 i) { /* 32-ok: a 32-bit counter */
	return SC_CAS != 0 ? LOADU(c, i) : 0u;
}

/* Folds position p (offsets and index value q, value v) into its
 * target, from the words f that sc_first_of loaded: a plain store for
 * assign, the device's atomic add for sums and means where the wrapper
 * defines ATOM_ADD_T and SC_CAS is 0, else a compare-and-swap
 * loop on the element's bits; mean counts the hit (sc_add_u32). A bad
 * index is flagged instead. */
#define SC_FOLD_ARGS dst, counts, st, err, dim_size, red
void sc_fold_at(BPTR dst, BPTR counts, sc_strides st, BPTR err, i64 dim_size, i64 red, i64 p, sc_pos q, T v, sc_first f) {
	if (sc_bad(q.ix, dim_size)) {
		sc_flag(err, p);
		return;
	}
	const i64 t = sc_target(st, q);
	if (red == I64C(RED_ASSIGN)) {
		STOREV(dst, t, v);
		return;
	}
	if (!sc_cas_fold(red)) {
#ifdef ATOM_ADD_T
		ATOM_ADD_T(dst, t, v); /* the device's atomic add */
#endif
	} else {
		UBITS old = SC_PRELOAD ? f.old : TO_BITS(LOADV(dst, t));
		for (;;) {
			const UBITS next = TO_BITS(sc_combine(FROM_BITS(old), v, red));
			if (next == old) {
				break;
			}
			const UBITS seen = CAS_BITS(dst, t, old, next);
			if (seen == old) {
				break;
			}
			old = seen;
		}
	}
	if (red == I64C(RED_MEAN)) {
		sc_add_u32(counts, t, 1u, f.hits); /* the hit, from the count sc_first_of loaded */
	}
}

/* The atomic pass: each position folded into its target (sc_fold_at).
 * A work-item takes its positions SC_AB at a time: their index and value
 * loads first, all in flight at once, then their folds (a load after an
 * atomic, which no compiler moves it across, waited a round trip to
 * memory each position: NVIDIA's atomic float add is volatile assembly
 * in OpenCL C). */
#define SC_AB 4
/* batch slot b (q, v) of the positions from j0: loaded, then folded (in
 * scalars: glslc leaves a loop over arrays of them rolled, in a stack).
 * The 1-d loads (SC_AB_LOAD1) take no branch on the lane's position: a
 * slot past the positions loads position 0's and is never folded (RADV's
 * compiler waited for a slot's loads where such a branch ended, one
 * round trip after another); the n-d ones decompose each position in a
 * loop of divisions, under the branch. */
#define SC_AB_OK(b) (j0 + I64C(b) < I64C(ITEMS) && ew_index(tile, j0 + I64C(b)) < count)
#define SC_AB_POS1(b, q) \
	{ \
		const i64 p_ = SC_AB_OK(b) ? ew_index(tile, j0 + I64C(b)) : I64C(0); \
		const i64 ix_ = LOADI(index, p_ * st.idx); \
		q.o = I64C(0); \
		q.s = p_ * st.src; \
		q.ix = wrap != I64C(0) && ix_ < I64C(0) ? ix_ + dim_size : ix_; \
	}
#define SC_AB_POS(b, q) \
	if (SC_AB_OK(b)) { \
		q = sc_position(meta, index, st, rank, dim, dim_size, wrap, ew_index(tile, j0 + I64C(b))); \
	} else { \
		q.o = I64C(0); /* a slot past the positions: never folded */ \
		q.s = I64C(0); \
		q.ix = I64C(0); \
	}
/* the value at a slot's source offset: in range whatever the index says */
#define SC_AB_LOAD1(b, q, v) SC_AB_POS1(b, q) v = LOADV(src, q.s);
#define SC_AB_LOAD(b, q, v) SC_AB_POS(b, q) v = LOADV(src, q.s);
/* the four slots' positions, in the 1-d way where rank is 1; with their
 * values (SC_AB_LOADS) in the same branch, so that the 1-d index and
 * value loads are in flight together */
#define SC_AB_POSITIONS(q0, q1, q2, q3) \
	if (rank == I64C(1)) { \
		SC_AB_POS1(0, q0) SC_AB_POS1(1, q1) SC_AB_POS1(2, q2) SC_AB_POS1(3, q3) \
	} else { \
		SC_AB_POS(0, q0) SC_AB_POS(1, q1) SC_AB_POS(2, q2) SC_AB_POS(3, q3) \
	}
#define SC_AB_LOADS(q0, q1, q2, q3, v0, v1, v2, v3) \
	if (rank == I64C(1)) { \
		SC_AB_LOAD1(0, q0, v0) SC_AB_LOAD1(1, q1, v1) SC_AB_LOAD1(2, q2, v2) SC_AB_LOAD1(3, q3, v3) \
	} else { \
		SC_AB_LOAD(0, q0, v0) SC_AB_LOAD(1, q1, v1) SC_AB_LOAD(2, q2, v2) SC_AB_LOAD(3, q3, v3) \
	}
/* The batch loop of the passes that take their positions SC_AB at a
 * time (scatter_reduce, the partition's count and place), in the shape of
 * EW_FOR: the strides, then each of the group's tiles and each batch of a
 * work-item's ITEMS positions (tile and j0, as SC_AB_OK and the loads
 * read them), with its slots' positions q0..q3 declared; SC_AB_END
 * closes it. */
#define SC_AB_FOR \
	{ \
		const sc_strides st = sc_strides_of(meta, rank, dim); \
		const i64 sc_tiles_ = ew_tiles(count); \
		for (i64 tile = GROUP_LINEAR_ID(); tile < sc_tiles_; tile += GROUP_TOTAL()) { \
			for (i64 j0 = I64C(0); j0 < I64C(ITEMS); j0 += I64C(SC_AB)) { \
				sc_pos q0, q1, q2, q3;
#define SC_AB_END \
			} \
		} \
	}
/* batch slot b's value of four scalars (the folds' loop over the slots
 * stays rolled: one fold's code, the loads before it in flight) */
#define SC_PICK(b, a0, a1, a2, a3) ((b) == 0 ? (a0) : ((b) == 1 ? (a1) : ((b) == 2 ? (a2) : (a3))))
/* name(b, a0, a1, a2, a3): batch slot b's value of four structs of type S */
#define SC_PICK_FN(name, S) \
	S name(int b, S a0, S a1, S a2, S a3) { /* 32-ok: a batch slot, < SC_AB */ \
		if (b == 0) { \
			return a0; \
		} \
		if (b == 1) { \
			return a1; \
		} \
		return b == 2 ? a2 : a3; \
	}
SC_PICK_FN(sc_pick, sc_pos)
SC_PICK_FN(sc_pick_first, sc_first)
INLINE void scatter_reduce(SCATTER_REDUCE_PARAMS) {
	SC_AB_FOR
		T v0 = CAST(T, 0), v1 = CAST(T, 0), v2 = CAST(T, 0), v3 = CAST(T, 0);
		SC_AB_LOADS(q0, q1, q2, q3, v0, v1, v2, v3)
		/* the folds' first words, in flight together before the first atomic */
		const sc_first f0 = sc_first_of(dst, counts, st, dim_size, red, q0);
		const sc_first f1 = sc_first_of(dst, counts, st, dim_size, red, q1);
		const sc_first f2 = sc_first_of(dst, counts, st, dim_size, red, q2);
		const sc_first f3 = sc_first_of(dst, counts, st, dim_size, red, q3);
		for (int b = 0; b < SC_AB; b++) { /* 32-ok: a batch slot, < SC_AB */
			if (SC_AB_OK(b)) {
				sc_fold_at(SC_FOLD_ARGS, ew_index(tile, j0 + I64C(b)), sc_pick(b, q0, q1, q2, q3), SC_PICK(b, v0, v1, v2, v3),
					sc_pick_first(b, f0, f1, f2, f3));
			}
		}
	SC_AB_END
}

INLINE void scatter_mean(SCATTER_MEAN_PARAMS) {
	if (sc_flagged(err)) {
		return;
	}
	const i64 tiles = ew_tiles(count);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 t = ew_index(tile, j);
			if (t < count) {
				const i64 c = CAST(i64, LOADU(counts, t));
				if (c > I64C(0)) {
					STOREV(dst, t, MEAN_DIV(LOADV(dst, t), c + include_self));
				}
			}
		}
	}
}

INLINE void scatter_gather(SCATTER_GATHER_PARAMS) {
	if (sc_flagged(err)) {
		return;
	}
	const sc_strides st = sc_strides_of(meta, rank, dim);
	const i64 tiles = ew_tiles(count);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 p = ew_index(tile, j);
			if (p >= count) {
				continue;
			}
			const sc_pos q = sc_position(meta, index, st, rank, dim, dim_size, wrap, p);
			STOREV(dst, q.s, LOADV(arr, sc_target(st, q)));
		}
	}
}

/* The bit-reproducible mode's sort input, validating as it goes (a bad
 * index is flagged and its words are 0, in range for every later pass,
 * which the host abandons on the flag). packed: one word per position,
 * the target in the high half and the bits of a 32-bit value in the low
 * (the sort carries the values, not their offsets). */
INLINE void scatter_dest(SCATTER_DEST_PARAMS) {
	const sc_strides st = sc_strides_of(meta, rank, dim);
	const i64 tiles = ew_tiles(count);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 p = ew_index(tile, j);
			if (p >= count) {
				continue;
			}
			const sc_pos q = sc_position(meta, index, st, rank, dim, dim_size, wrap, p);
			const bool bad = sc_bad(q.ix, dim_size);
			if (bad) {
				sc_flag(err, p);
			}
			const u64 target = bad ? 0ul : CAST(u64, sc_target(st, q));
			if (packed != I64C(0)) {
				const u64 bits = CAST(u64, LD32(src, q.s));
				ST64(keys, p, bad ? 0ul : ((target << 32) | bits));
			} else {
				ST64(keys, p, target);
				ST64(soffs, p, bad ? 0ul : CAST(u64, q.s));
			}
		}
	}
}

/* The GPUs' partition of the bit-reproducible scatter (32-bit values,
 * fewer than 2^32 positions): each target's positions grouped in one pass
 * and folded in index order, where the sort groups them in a pass per
 * 8-bit digit of the targets.
 *   scatter_pcount (over positions) validates each position (a bad index
 *                  is flagged and skipped) and counts its target's hits in
 *                  counts; a target reaching SC_PART_MAX + 1 hits sets
 *                  err[1]: the host then sorts instead
 *   (the host scans counts into off: each target's first slot)
 *   scatter_place  (over positions) claims the next slot of its target
 *                  (an atomic increment of off) and writes words[slot] =
 *                  p << 32 | the value's bits: a target's slots hold its
 *                  positions in whatever order the device ran them, and
 *                  off ends as each target's end
 *   scatter_pfold  (over tiles of targets) sorts a target's words (at
 *                  most SC_PART_MAX) by position, in work-group memory
 *                  (in place where a tile overflows it), then folds them
 *                  in that order as segment_reduce folds a run: the same
 *                  bits as the reference. */
/* The partition's passes over positions take them SC_AB at a time as
 * scatter_reduce does: the slots' index loads (and place's values) all
 * in flight, then their atomics, also with no branch between them (RADV's
 * compiler waited for each atomic's result where a branch around it
 * ended): a slot past the positions or with a bad index adds 0 to
 * counts[0] (the host allocates at least one), and the checks and stores
 * that use the results come after all four are issued. */
#define SC_PC_OK(b, q) (SC_AB_OK(b) && !sc_bad(q.ix, dim_size))
#define SC_PC_AT(b, q) (SC_PC_OK(b, q) ? sc_target(st, q) : I64C(0))
/* slot b's counter first (sc_add_first: with SC_CAS, loaded before the
 * batch's atomics), then its add */
#define SC_PC_FIRST(b, q, cnt) sc_add_first(cnt, SC_PC_AT(b, q))
#define SC_PC_ADD(b, q, cnt, f) sc_add_u32(cnt, SC_PC_AT(b, q), SC_PC_OK(b, q) ? 1u : 0u, f)
#define SC_PC_FLAG(b, q) \
	if (SC_AB_OK(b) && sc_bad(q.ix, dim_size)) { \
		sc_flag(err, ew_index(tile, j0 + I64C(b))); \
	}
INLINE void scatter_pcount(SCATTER_PCOUNT_PARAMS) {
	SC_AB_FOR
		SC_AB_POSITIONS(q0, q1, q2, q3)
		const u32 f0 = SC_PC_FIRST(0, q0, counts); /* 32-ok: a hit count */
		const u32 f1 = SC_PC_FIRST(1, q1, counts); /* 32-ok: a hit count */
		const u32 f2 = SC_PC_FIRST(2, q2, counts); /* 32-ok: a hit count */
		const u32 f3 = SC_PC_FIRST(3, q3, counts); /* 32-ok: a hit count */
		/* each slot's target's hits before its own */
		const u32 r0 = SC_PC_ADD(0, q0, counts, f0); /* 32-ok: a hit count, below 2^32 positions */
		const u32 r1 = SC_PC_ADD(1, q1, counts, f1); /* 32-ok: a hit count, below 2^32 positions */
		const u32 r2 = SC_PC_ADD(2, q2, counts, f2); /* 32-ok: a hit count, below 2^32 positions */
		const u32 r3 = SC_PC_ADD(3, q3, counts, f3); /* 32-ok: a hit count, below 2^32 positions */
		SC_PC_FLAG(0, q0)
		SC_PC_FLAG(1, q1)
		SC_PC_FLAG(2, q2)
		SC_PC_FLAG(3, q3)
		/* a slot that added 0 read counts[0]: not its own count */
		const u32 most = max(max(SC_PC_OK(0, q0) ? r0 : 0u, SC_PC_OK(1, q1) ? r1 : 0u), /* 32-ok: a hit count */
			max(SC_PC_OK(2, q2) ? r2 : 0u, SC_PC_OK(3, q3) ? r3 : 0u));
		if (most >= CAST(u32, SC_PART_MAX)) { /* 32-ok: SC_PART_MAX is small */
			ST32(err, 1, CAST(u32, SC_PART_MANY)); /* 32-ok: a flag bit */
		}
	SC_AB_END
}

/* place's slot b: its word at the slot it claimed (r; a slot that added 0
 * writes nothing) */
#define SC_PL_STORE(b, q, v, r) \
	if (SC_PC_OK(b, q) && CAST(i64, r) < count) { \
		ST64(words, CAST(i64, r), (CAST(u64, ew_index(tile, j0 + I64C(b))) << 32) | (CAST(u64, TO_BITS(v)) & 0xfffffffful)); \
	}
INLINE void scatter_place(SCATTER_PLACE_PARAMS) {
	if (LD32(err, 0) != ERR_NONE || LD32(err, 1) != 0u) {
		return;
	}
	SC_AB_FOR
		/* the values as T (the pass runs in the 32-bit integer build:
		 * their bits) */
		T v0 = CAST(T, 0), v1 = CAST(T, 0), v2 = CAST(T, 0), v3 = CAST(T, 0);
		SC_AB_LOADS(q0, q1, q2, q3, v0, v1, v2, v3)
		const u32 f0 = SC_PC_FIRST(0, q0, off); /* 32-ok: a slot */
		const u32 f1 = SC_PC_FIRST(1, q1, off); /* 32-ok: a slot */
		const u32 f2 = SC_PC_FIRST(2, q2, off); /* 32-ok: a slot */
		const u32 f3 = SC_PC_FIRST(3, q3, off); /* 32-ok: a slot */
		const u32 r0 = SC_PC_ADD(0, q0, off, f0); /* 32-ok: a slot, below 2^32 positions */
		const u32 r1 = SC_PC_ADD(1, q1, off, f1); /* 32-ok: a slot, below 2^32 positions */
		const u32 r2 = SC_PC_ADD(2, q2, off, f2); /* 32-ok: a slot, below 2^32 positions */
		const u32 r3 = SC_PC_ADD(3, q3, off, f3); /* 32-ok: a slot, below 2^32 positions */
		SC_PL_STORE(0, q0, v0, r0)
		SC_PL_STORE(1, q1, v1, r1)
		SC_PL_STORE(2, q2, v2, r2)
		SC_PL_STORE(3, q3, v3, r3)
	SC_AB_END
}

/* scatter_pfold's scratch holds SC_PF_CAP words of a tile, each as two
 * scratch words: its position (below 2^32, partFits) and its value's bits
 * (32-bit values). */
#define SC_PF_CAP (I64C(SCRATCH_LEN) >> 1)

/* Sorts a run of k words by their high halves (all distinct: positions,
 * or a target within its bucket over a position): in scratch from pair b0
 * (a word's high half in SH(2 * slot), its low one after it), or with
 * b0 < 0 in words from start, in place. An insertion sort: k is at most
 * SC_PART_MAX, and in scratch its steps are a round trip to the
 * work-group's memory each, not to the device's. */
void sc_psort(BPTR words, i64 start, i64 k, i64 b0 SCRATCH_PARAM) {
	if (b0 >= I64C(0)) {
		for (i64 a = b0 + I64C(1); a < b0 + k; a++) {
			const SCRATCH_T pa = SH(I64C(2) * a);
			const SCRATCH_T va = SH(I64C(2) * a + I64C(1));
			i64 b = a - I64C(1);
			while (b >= b0 && SH(I64C(2) * b) > pa) {
				SH(I64C(2) * b + I64C(2)) = SH(I64C(2) * b);
				SH(I64C(2) * b + I64C(3)) = SH(I64C(2) * b + I64C(1));
				b--;
			}
			SH(I64C(2) * b + I64C(2)) = pa;
			SH(I64C(2) * b + I64C(3)) = va;
		}
	} else {
		const i64 end = start + k;
		for (i64 a = start + I64C(1); a < end; a++) {
			const u64 w = LD64(words, a);
			i64 b = a - I64C(1);
			u64 prev = LD64(words, b);
			while (prev > w) {
				ST64(words, b + I64C(1), prev);
				b--;
				if (b < start) {
					break;
				}
				prev = LD64(words, b);
			}
			ST64(words, b + I64C(1), w);
		}
	}
}

/* Word a of a run sorted by sc_psort: its high half (SC_RUN_KEY) and its
 * value (SC_RUN_VAL), from scratch pair b0 + a or from words[start + a]. */
#define SC_RUN_KEY(a) (b0 >= I64C(0) ? CAST(u64, SH(I64C(2) * (b0 + (a)))) : LD64(words, start + (a)) >> 32)
#define SC_RUN_VAL(a) FROM_BITS(CAST(UBITS, b0 >= I64C(0) ? CAST(u64, SH(I64C(2) * (b0 + (a)) + I64C(1))) : LD64(words, start + (a)) & 0xfffffffful))

/* Folds target t's k words in position order into dst[t]: in scratch
 * from slot b0 (sorted there), or with b0 < 0 in words from start (sorted
 * in place: a tile that overflowed the scratch). dst[t] loads before the
 * sort, whose steps hide its round trip (as sc_sfold_bucket's do). */
void sc_pfold_one(BPTR dst, BPTR words, i64 t, i64 start, i64 k, i64 b0, i64 red, i64 include_self SCRATCH_PARAM) {
	T acc = include_self != I64C(0) ? LOADV(dst, t) : sc_identity(red);
	sc_psort(words, start, k, b0 SCRATCH_ARG);
	for (i64 a = I64C(0); a < k; a++) {
		acc = sc_fold(acc, SC_RUN_VAL(a), red);
	}
	if (red == I64C(RED_MEAN)) {
		acc = MEAN_DIV(acc, k + include_self);
	}
	STOREV(dst, t, acc);
}

#define SC_PF_AT(j) (i0 + I64C(j) * I64C(LOCAL_SIZE))
#define SC_PF_LOAD(j) const u64 w##j = LD64(words, ws + min64(SC_PF_AT(j), cnt - I64C(1)));
#define SC_PF_STORE(j) \
	if (SC_PF_AT(j) < cnt) { \
		SH(I64C(2) * SC_PF_AT(j)) = CAST(SCRATCH_T, w##j >> 32); \
		SH(I64C(2) * SC_PF_AT(j) + I64C(1)) = CAST(SCRATCH_T, w##j & 0xfffffffful); \
	}
/* Tile i holds targets [i*per, i*per + per) and their words, which lie
 * together in words ([first target's start, last target's end): the
 * counts' scan gave consecutive targets consecutive slots). Where they
 * fit in the scratch, the group copies them there (coalesced), and each
 * target's work-item sorts and folds its own range of it; a target with
 * no hits keeps dst's element, as does one the count pass found past
 * SC_PART_MAX (err[1] set: this pass does nothing). */
INLINE void scatter_pfold(SCATTER_PFOLD_PARAMS) {
	if (LD32(err, 0) != ERR_NONE || LD32(err, 1) != 0u) {
		return;
	}
	const i64 lid = LOCAL_ID();
	const i64 tiles = cdiv64(out_n, max64(per, I64C(1)));
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		const i64 t0 = tile * per;
		const i64 t1 = min64(t0 + per, out_n);
		const i64 ws = CAST(i64, LOADU(off, t0)) - CAST(i64, LOADU(counts, t0));
		const i64 we = CAST(i64, LOADU(off, t1 - I64C(1)));
		/* the same for every work-item of the group: its loads are */
		const bool fits = ws >= I64C(0) && we <= n && ws <= we && we - ws <= SC_PF_CAP;
		if (fits) {
			/* eight words a work-item loaded at once (a slot past the
			 * tile loads its last word and is not stored): a full tile
			 * of 128 work-items in one round trip */
			const i64 cnt = we - ws;
			for (i64 i0 = lid; i0 < cnt; i0 += I64C(8) * I64C(LOCAL_SIZE)) {
				SC_PF_LOAD(0) SC_PF_LOAD(1) SC_PF_LOAD(2) SC_PF_LOAD(3)
				SC_PF_LOAD(4) SC_PF_LOAD(5) SC_PF_LOAD(6) SC_PF_LOAD(7)
				SC_PF_STORE(0) SC_PF_STORE(1) SC_PF_STORE(2) SC_PF_STORE(3)
				SC_PF_STORE(4) SC_PF_STORE(5) SC_PF_STORE(6) SC_PF_STORE(7)
			}
		}
		LOCAL_BARRIER();
		for (i64 t = t0 + lid; t < t1; t += I64C(LOCAL_SIZE)) {
			const i64 k = CAST(i64, LOADU(counts, t));
			const i64 end = CAST(i64, LOADU(off, t));
			const i64 start = end - k;
			if (k == I64C(0) || k > I64C(SC_PART_MAX) || start < I64C(0) || end > n) {
				continue;
			}
			const bool in_sh = fits && start >= ws && end <= we;
			sc_pfold_one(dst, words, t, start, k, in_sh ? start - ws : I64C(-1), red, include_self SCRATCH_ARG);
		}
		LOCAL_BARRIER();
	}
}

/* The slotted partition (32-bit values; scatterPlan.Slot in accel): the
 * positions grouped by target in one pass with no count before it, where
 * the partition above counts every target's hits, scans the counts and
 * places. Targets go in buckets of 2^slot_bits consecutive ones, each
 * with a region of cap slots (cap at most SC_PART_MAX, slot_bits at most
 * 6, positions below 2^(32 - slot_bits)):
 *   scatter_pslot  (over positions) validates each position (a bad index
 *                  is flagged and skipped), claims the next slot r of its
 *                  target's bucket (an atomic increment of cur) and, where
 *                  r < cap, writes slots[bucket * cap + r] = (the target
 *                  within its bucket << (32 - slot_bits) | p) << 32 | the
 *                  value's bits. A bucket past cap sets SC_PART_OVER in
 *                  err[1] (the host then runs the counted partition), and
 *                  with buckets of one target a target past SC_PART_MAX
 *                  hits SC_PART_MANY too (the host sorts), so cur ends as
 *                  each bucket's hits, the slots holding them where they
 *                  fit
 *   scatter_sfold  (over tiles of buckets) folds each bucket's words in
 *                  position order per target, as scatter_pfold does; it
 *                  does nothing where err[0] or err[1] is set, so an
 *                  overflowed bucket leaves dst as it was.
 * Both in the shape of the partition's passes: pslot takes its positions
 * SC_AB at a time (the loads, then the atomics with no branch between
 * them: a slot past the positions or with a bad index adds 0 to cur[0]). */
#define SC_PS_BUCKET(b, q) (SC_PC_OK(b, q) ? sc_target(st, q) >> slot_bits : I64C(0))
#define SC_PS_FIRST(b, q) sc_add_first(cur, SC_PS_BUCKET(b, q))
#define SC_PS_ADD(b, q, f) sc_add_u32(cur, SC_PS_BUCKET(b, q), SC_PC_OK(b, q) ? 1u : 0u, f)
/* pslot's slot b: its word at slot r of its bucket, where r < cap */
#define SC_PS_STORE(b, q, v, r) \
	if (SC_PC_OK(b, q) && CAST(i64, r) < cap) { \
		const i64 t_ = sc_target(st, q); \
		const u64 in_ = CAST(u64, t_ & ((I64C(1) << slot_bits) - I64C(1))); /* the target within its bucket */ \
		const u64 hi_ = (in_ << CAST(u64, I64C(32) - slot_bits)) | CAST(u64, ew_index(tile, j0 + I64C(b))); \
		ST64(slots, (t_ >> slot_bits) * cap + CAST(i64, r), (hi_ << 32) | (CAST(u64, TO_BITS(v)) & 0xfffffffful)); \
	}
INLINE void scatter_pslot(SCATTER_PSLOT_PARAMS) {
	SC_AB_FOR
		/* the values as T (the pass runs in the 32-bit builds: their bits) */
		T v0 = CAST(T, 0), v1 = CAST(T, 0), v2 = CAST(T, 0), v3 = CAST(T, 0);
		SC_AB_LOADS(q0, q1, q2, q3, v0, v1, v2, v3)
		const u32 f0 = SC_PS_FIRST(0, q0); /* 32-ok: a bucket's hits */
		const u32 f1 = SC_PS_FIRST(1, q1); /* 32-ok: a bucket's hits */
		const u32 f2 = SC_PS_FIRST(2, q2); /* 32-ok: a bucket's hits */
		const u32 f3 = SC_PS_FIRST(3, q3); /* 32-ok: a bucket's hits */
		const u32 r0 = SC_PS_ADD(0, q0, f0); /* 32-ok: a bucket's hits, below 2^32 positions */
		const u32 r1 = SC_PS_ADD(1, q1, f1); /* 32-ok: a bucket's hits, below 2^32 positions */
		const u32 r2 = SC_PS_ADD(2, q2, f2); /* 32-ok: a bucket's hits, below 2^32 positions */
		const u32 r3 = SC_PS_ADD(3, q3, f3); /* 32-ok: a bucket's hits, below 2^32 positions */
		SC_PC_FLAG(0, q0)
		SC_PC_FLAG(1, q1)
		SC_PC_FLAG(2, q2)
		SC_PC_FLAG(3, q3)
		SC_PS_STORE(0, q0, v0, r0)
		SC_PS_STORE(1, q1, v1, r1)
		SC_PS_STORE(2, q2, v2, r2)
		SC_PS_STORE(3, q3, v3, r3)
		/* a slot that added 0 read cur[0]: not its own count */
		const u32 most = max(max(SC_PC_OK(0, q0) ? r0 : 0u, SC_PC_OK(1, q1) ? r1 : 0u), /* 32-ok: a bucket's hits */
			max(SC_PC_OK(2, q2) ? r2 : 0u, SC_PC_OK(3, q3) ? r3 : 0u));
		if (CAST(i64, most) >= cap) {
			const bool many = slot_bits == I64C(0) && most >= CAST(u32, SC_PART_MAX); /* 32-ok: SC_PART_MAX is small */
			ATOM_OR_U32(err, 1, CAST(u32, SC_PART_OVER) | (many ? CAST(u32, SC_PART_MANY) : 0u)); /* 32-ok: flag bits */
		}
	SC_AB_END
}

/* The slotted partition's fold of bucket bk's k words (slots from
 * bk * cap): sorted by their high halves (sc_psort: in scratch from pair
 * b0, or with b0 < 0 in place), which orders them by target, then by
 * position; each target's run is folded in that order into dst, as
 * sc_pfold_one folds one target. With the input (include_self) dst's
 * elements are loaded eight consecutive targets at a time, the bucket's
 * first eight before the sort (whose steps hide that round trip), so a
 * bucket of 16 or 64 targets waits on 2 or 8 round trips for them where
 * each target's load waited on the previous target's store. */
#define SC_SF_DST(j) d##j = LOADV(dst, min64(tb + c0 + I64C(j), out_n - I64C(1)));
#define SC_SF_DSTS() \
	if (include_self != I64C(0)) { \
		SC_SF_DST(0) SC_SF_DST(1) SC_SF_DST(2) SC_SF_DST(3) \
		SC_SF_DST(4) SC_SF_DST(5) SC_SF_DST(6) SC_SF_DST(7) \
	}
#define SC_SF_PICK(j) ((j) == I64C(0) ? d0 : (j) == I64C(1) ? d1 : (j) == I64C(2) ? d2 : (j) == I64C(3) ? d3 : \
	(j) == I64C(4) ? d4 : (j) == I64C(5) ? d5 : (j) == I64C(6) ? d6 : d7)
INLINE void sc_sfold_bucket(BPTR dst, BPTR words, i64 bk, i64 k, i64 b0, i64 slot_bits, i64 cap, i64 out_n, i64 red, i64 include_self SCRATCH_PARAM) {
	const i64 start = bk * cap;
	const i64 tb = bk << slot_bits; /* the bucket's first target */
	const T ident = sc_identity(red);
	T d0 = ident, d1 = ident, d2 = ident, d3 = ident, d4 = ident, d5 = ident, d6 = ident, d7 = ident;
	i64 c0 = I64C(0); /* the first of the eight targets loaded */
	SC_SF_DSTS()
	sc_psort(words, start, k, b0 SCRATCH_ARG);
	const u64 kshift = CAST(u64, I64C(32) - slot_bits); /* a key's target within its bucket: key >> kshift */
	i64 a = I64C(0);
	while (a < k) {
		const u64 tin = SC_RUN_KEY(a) >> kshift;
		const i64 t = tb + CAST(i64, tin);
		if ((CAST(i64, tin) & ~I64C(7)) != c0) {
			c0 = CAST(i64, tin) & ~I64C(7);
			SC_SF_DSTS()
		}
		T acc = SC_SF_PICK(CAST(i64, tin) - c0);
		i64 e = a;
		while (e < k && (SC_RUN_KEY(e) >> kshift) == tin) {
			acc = sc_fold(acc, SC_RUN_VAL(e), red);
			e++;
		}
		if (red == I64C(RED_MEAN)) {
			acc = MEAN_DIV(acc, e - a + include_self);
		}
		STOREV(dst, t, acc);
		a = e;
	}
}

#define SC_SF_LOAD(j) const u64 w##j = LD64(slots, bk * cap + min64(j0 + I64C(j), k - I64C(1)));
#define SC_SF_STORE(j) \
	if (j0 + I64C(j) < k) { \
		SH(I64C(2) * (base + j0 + I64C(j))) = CAST(SCRATCH_T, w##j >> 32); \
		SH(I64C(2) * (base + j0 + I64C(j)) + I64C(1)) = CAST(SCRATCH_T, w##j & 0xfffffffful); \
	}
/* Tile i holds buckets [i*per, i*per + per), per at most LOCAL_SIZE: a
 * work-item a bucket. The lanes scan their buckets' word counts
 * (lane_scan), and where the tile's words fit the scratch each lane
 * copies its bucket's there, eight loads in flight at a time (a slot past
 * the bucket's words loads its last and is not stored), then sorts and
 * folds them (sc_sfold_bucket); a tile of more words sorts each bucket in
 * place in slots. A target with no hits keeps dst's element. */
INLINE void scatter_sfold(SCATTER_SFOLD_PARAMS) {
	if (LD32(err, 0) != ERR_NONE || LD32(err, 1) != 0u) {
		return;
	}
	const i64 lid = LOCAL_ID();
	const i64 buckets = (out_n + (I64C(1) << slot_bits) - I64C(1)) >> slot_bits;
	const i64 tiles = cdiv64(buckets, max64(per, I64C(1)));
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		const i64 bk = tile * per + lid;
		const bool mine = lid < per && bk < buckets;
		/* at most cap: more set err[1], and this pass does nothing */
		const i64 k = mine ? min64(CAST(i64, LOADU(cur, bk)), cap) : I64C(0);
		const u64 scan = lane_scan(CAST(u32, k) SCRATCH_ARG); /* 32-ok: a bucket's words, at most cap */
		const i64 base = CAST(i64, scan & 0xfffffffful);
		const bool fits = CAST(i64, scan >> 32) <= SC_PF_CAP; /* the same for every work-item of the group */
		if (fits) {
			for (i64 j0 = I64C(0); j0 < k; j0 += I64C(8)) {
				SC_SF_LOAD(0) SC_SF_LOAD(1) SC_SF_LOAD(2) SC_SF_LOAD(3)
				SC_SF_LOAD(4) SC_SF_LOAD(5) SC_SF_LOAD(6) SC_SF_LOAD(7)
				SC_SF_STORE(0) SC_SF_STORE(1) SC_SF_STORE(2) SC_SF_STORE(3)
				SC_SF_STORE(4) SC_SF_STORE(5) SC_SF_STORE(6) SC_SF_STORE(7)
			}
		}
		LOCAL_BARRIER();
		if (k > I64C(0)) {
			sc_sfold_bucket(dst, slots, bk, k, fits ? base : I64C(-1), slot_bits, cap, out_n, red, include_self SCRATCH_ARG);
		}
		LOCAL_BARRIER();
	}
}

/* The CPU passes (owned, private) walk positions [from, to) in order:
 * 1-d positions with their strides in registers, others through
 * sc_position; each position folds with the pass's one-position function
 * (sc_owned_one, sc_private_one). */

/* The passes that fold whole targets in index order (owned, bucket):
 * value v into element vo of vb, as the reference does: assign stores
 * it; with counted, hit count co of cb counts it and a first hit without
 * the input starts from the identity. */
INLINE void sc_fold_one(BPTR vb, i64 vo, BPTR cb, i64 co, T v, i64 red, bool counted, i64 include_self, T ident) {
	if (red == I64C(RED_ASSIGN)) {
		STOREV(vb, vo, v);
	} else if (counted) {
		const u32 c = LOADU(cb, co); /* 32-ok: a hit count, < 2^32: larger counted scatters take the sorted path (accel maxHits) */
		STOREU(cb, co, c + 1u);
		const T acc = (c == 0u && include_self == I64C(0)) ? ident : LOADV(vb, vo);
		STOREV(vb, vo, sc_combine(acc, v, red));
	} else {
		STOREV(vb, vo, sc_combine(LOADV(vb, vo), v, red));
	}
}

/* The ownership pass's fold of position p (target offset without the dim
 * term o, source offset s, index value ix, wrapped): see the top of the
 * file. The spare buffer holds SC_SPARE T slots per owner, then as many
 * u32 count slots from u32 index 2*SC_SPARE*W; rotating over them keeps
 * the stores of positions owned elsewhere off one long dependency chain. */
INLINE void sc_owned_one(BPTR dst, BPTR src, BPTR counts, BPTR err, BPTR spare, i64 p, i64 o, i64 s, i64 ix, i64 w,
	i64 owners, i64 lo, i64 hi, i64 dim_size, i64 dim_stride, i64 red, bool counted, i64 include_self, T ident) {
	const bool valid = ix >= I64C(0) && ix < dim_size;
	if (!valid && w == I64C(0)) {
		sc_flag(err, p);
	}
	const i64 t = o + ix * dim_stride;
	const bool mine = valid && t >= lo && t < hi;
	const i64 slot = w * I64C(SC_SPARE) + (p & I64C(SC_SPARE - 1));
	BPTR vb = mine ? dst : spare;
	const i64 vo = mine ? t : slot;
	BPTR cb = mine ? counts : spare;
	const i64 co = mine ? t : I64C(2 * SC_SPARE) * owners + slot;
	sc_fold_one(vb, vo, cb, co, LOADV(src, s), red, counted, include_self, ident);
}

INLINE void scatter_owned(SCATTER_OWNED_PARAMS) {
	const i64 owners = GROUP_TOTAL() * I64C(LOCAL_SIZE);
	const i64 w = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID();
	const i64 span = cdiv64(out_n, owners);
	const i64 lo = w * span;
	const i64 hi = min64(lo + span, out_n);
	const sc_strides st = sc_strides_of(meta, rank, dim);
	const i64 dim_stride = st.dsto;
	const bool counted = red == I64C(RED_MEAN) || include_self == I64C(0);
	const T ident = sc_identity(red);
	if (rank == I64C(1)) {
		for (i64 p = I64C(0); p < count; p++) {
			i64 ix = LOADI(index, p * st.idx);
			if (wrap != I64C(0) && ix < I64C(0)) {
				ix += dim_size;
			}
			sc_owned_one(dst, src, counts, err, spare, p, I64C(0), p * st.src, ix, w, owners, lo, hi, dim_size,
				dim_stride, red, counted, include_self, ident);
		}
	} else {
		for (i64 p = I64C(0); p < count; p++) {
			const sc_pos q = sc_position(meta, index, st, rank, dim, dim_size, wrap, p);
			sc_owned_one(dst, src, counts, err, spare, p, q.o, q.s, q.ix, w, owners, lo, hi, dim_size, dim_stride,
				red, counted, include_self, ident);
		}
	}
}

/* The bucketed passes (CPU drivers, one work-item per worker, W of them):
 * the reference's bits, as scatter_owned gives them, without every owner
 * walking every position (whose folds into a range of targets larger
 * than the caches cost a miss each: 295 ms for 16M float32 positions
 * into 1M targets on PoCL's two cores, ten times the private pass). The
 * output's offsets fall in `buckets` buckets of 2^span_log consecutive
 * offsets (a core's cache holds a bucket's values and counts); worker w
 * takes the positions [w*chunk, (w+1)*chunk), chunk = cdiv(count, W).
 * - scatter_bcount: bcnt[w*R + b] = worker w's valid positions in bucket
 *   b (64-bit; a worker's own row of R = SC_BROW(buckets) words, whole
 *   cache lines, since two cores writing one line take turns holding it:
 *   with the rows interleaved the count and the placing took ten times
 *   the fold); a bad index is flagged (err[0], as scatter_validate does)
 *   and skipped;
 * - scatter_bscan (one work-item): bcnt becomes its exclusive prefix sum
 *   in bucket-major, worker-minor order, each (bucket, worker) pair's
 *   first slot, so a bucket's slots hold its positions in index order;
 * - scatter_bplace: worker w walks its positions again and writes each
 *   one's offset within its bucket (32-bit) and its value at its pair's
 *   next slot (bcnt[w*R + b], which only worker w advances: after the
 *   pass it is the pair's end);
 * - scatter_bfold: worker w takes buckets [w*per, (w+1)*per) and folds
 *   each one's slots in order into dst with plain loads and stores,
 *   counting hits in counts where counted (a mean, or a first hit
 *   without the input, as scatter_owned counts), so each target folds
 *   its values in index order.
 * The passes after bcount do nothing where an index was flagged, so a
 * bad index leaves dst as it was. */

/* The placing pass's prefetch distance in slots of a bucket: two lines
 * of 32-bit offsets ahead. Measured on PoCL (2-core EPYC, 16M float32
 * positions into 1M targets, 16 buckets, three runs each): without it the
 * placing took 65-70 ms, its stores missing in order one line at a time;
 * 8 slots ahead 52-55, 16 46-49, 32 44-47, 64 55, 256 54-55, 1024
 * 69-84. */
#define SC_BPF 32

/* A worker's row of bcnt: the buckets rounded up to whole 64-byte lines
 * of 64-bit words. */
#define SC_BROW(buckets) (((buckets) + I64C(7)) & I64C(-8))

/* A position's target and source offsets (t = -1: a bad index). */
STRUCT(sc_ts) {
	i64 t;
	i64 s;
};

/* Position p's target and source offsets for the bucketed passes (the
 * 1-d loop with the strides st, else sc_position); a bad index is
 * flagged and gives t = -1. */
INLINE sc_ts sc_bucket_target(BPTR meta, BPTR index, BPTR err, i64 rank, i64 dim, i64 dim_size, i64 wrap, i64 p,
	sc_strides st) {
	sc_ts r;
	i64 o = I64C(0);
	i64 ix;
	if (rank == I64C(1)) {
		ix = LOADI(index, p * st.idx);
		if (wrap != I64C(0) && ix < I64C(0)) {
			ix += dim_size;
		}
		r.s = p * st.src;
	} else {
		const sc_pos q = sc_position(meta, index, st, rank, dim, dim_size, wrap, p);
		o = q.o;
		ix = q.ix;
		r.s = q.s;
	}
	r.t = o + ix * st.dsto;
	if (sc_bad(ix, dim_size)) {
		sc_flag(err, p);
		r.t = I64C(-1);
	}
	return r;
}

/* Worker w of workers' positions in the bucketed passes: [t, s), whole
 * cdiv(count, workers) runs (the count's and the placing's alike). */
INLINE sc_ts sc_bucket_chunk(i64 count, i64 workers, i64 w) {
	const i64 chunk = cdiv64(count, workers);
	sc_ts r;
	r.t = min64(w * chunk, count);
	r.s = min64(r.t + chunk, count);
	return r;
}

INLINE void scatter_bcount(SCATTER_BCOUNT_PARAMS) {
	const i64 workers = GROUP_TOTAL() * I64C(LOCAL_SIZE);
	const i64 w = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID();
	const sc_ts r = sc_bucket_chunk(count, workers, w);
	const i64 from = r.t;
	const i64 to = r.s;
	const i64 row = w * SC_BROW(buckets);
	const sc_strides st = sc_strides_of(meta, rank, dim);
	for (i64 b = I64C(0); b < buckets; b++) {
		ST64(bcnt, row + b, 0ul);
	}
	for (i64 p = from; p < to; p++) {
		const sc_ts q = sc_bucket_target(meta, index, err, rank, dim, dim_size, wrap, p, st);
		if (q.t >= I64C(0)) {
			const i64 at = row + (q.t >> span_log);
			ST64(bcnt, at, LD64(bcnt, at) + 1ul);
		}
	}
}

INLINE void scatter_bscan(SCATTER_BSCAN_PARAMS) {
	if (GROUP_LINEAR_ID() != I64C(0) || LOCAL_ID() != I64C(0)) {
		return;
	}
	u64 run = 0ul;
	for (i64 b = I64C(0); b < buckets; b++) {
		for (i64 w = I64C(0); w < workers; w++) {
			const i64 k = w * SC_BROW(buckets) + b;
			const u64 c = LD64(bcnt, k);
			ST64(bcnt, k, run);
			run += c;
		}
	}
}

INLINE void scatter_bplace(SCATTER_BPLACE_PARAMS) {
	if (sc_flagged(err)) {
		return;
	}
	const i64 workers = GROUP_TOTAL() * I64C(LOCAL_SIZE);
	const i64 w = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID();
	const sc_ts r = sc_bucket_chunk(count, workers, w);
	const i64 from = r.t;
	const i64 to = r.s;
	const i64 mask = (I64C(1) << span_log) - I64C(1);
	const i64 row = w * SC_BROW(buckets);
	const sc_strides st = sc_strides_of(meta, rank, dim);
	for (i64 p = from; p < to; p++) {
		const sc_ts q = sc_bucket_target(meta, index, err, rank, dim, dim_size, wrap, p, st);
		if (q.t >= I64C(0)) {
			const i64 at = row + (q.t >> span_log);
			const i64 slot = CAST(i64, LD64(bcnt, at));
			ST64(bcnt, at, CAST(u64, slot + I64C(1)));
			/* CPU drivers: the bucket's slots SC_BPF ahead are fetched for
			 * writing now, so the stores, which leave the core in order,
			 * do not each wait for their line (see SC_BPF) */
			const i64 ahead = min64(slot + I64C(SC_BPF), count - I64C(1));
			PREFETCH_RW(&LOADU(ploc, ahead));
			PREFETCH_RW(&LOADV(pval, ahead));
			STOREU(ploc, slot, CAST(u32, q.t & mask)); /* 32-ok: an offset within a bucket, < 2^span_log <= 2^31 */
			STOREV(pval, slot, LOADV(src, q.s));
		}
	}
}

INLINE void scatter_bfold(SCATTER_BFOLD_PARAMS) {
	if (sc_flagged(err)) {
		return;
	}
	const i64 workers = GROUP_TOTAL() * I64C(LOCAL_SIZE);
	const i64 w = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID();
	const i64 per = cdiv64(buckets, workers);
	const i64 b0 = min64(w * per, buckets);
	const i64 b1 = min64(b0 + per, buckets);
	const bool counted = red == I64C(RED_MEAN) || include_self == I64C(0);
	const T ident = sc_identity(red);
	/* after scatter_bplace, the last worker's row holds the buckets' ends */
	const i64 last = (workers - I64C(1)) * SC_BROW(buckets);
	/* the worker's first slot: bucket b0 - 1's end, or 0 for bucket 0,
	 * loaded at a clamped word and scaled rather than chosen by a test:
	 * Intel's compiler (IGC 1.0.12504, Debian 12's ocloc, for Arc and
	 * Xe-LP) crashed on this loop's slot started from a conditional */
	i64 e = CAST(i64, LD64(bcnt, last + max64(b0 - I64C(1), I64C(0)))) * min64(b0, I64C(1));
	for (i64 b = b0; b < b1; b++) {
		const i64 end = CAST(i64, LD64(bcnt, last + b));
		const i64 base = b << span_log;
		for (; e < end; e++) {
			const i64 t = base + CAST(i64, LOADU(ploc, e));
			sc_fold_one(dst, t, counts, t, LOADV(pval, e), red, counted, include_self, ident);
		}
	}
}

/* The private pass: worker w of W folds the positions of its chunk, in
 * order, into its own copy priv[w*out_n ...] (filled with the identity by
 * the host; with inplace, worker 0 into dst and worker w into copy w - 1) with plain loads and stores, counting hits in pcnt[w*out_n
 * ...] where the merge needs them (counted != 0). A bad index is skipped
 * and its tile recorded in err[0]. SC_RED, a knob, is the reduction when
 * the host compiles it in (>= 0): the loop then carries no reduction
 * switch. sc_private_one folds position p (target offset without the dim
 * term o, source offset s, index value ix, wrapped) into the copy at
 * base. */
INLINE void sc_private_one(BPTR src, BPTR pcnt, BPTR err, BPTR priv, i64 p, i64 o, i64 s, i64 ix, i64 dim_size,
	i64 dim_stride, i64 base, i64 counted, i64 red) {
	if (sc_bad(ix, dim_size)) {
		sc_flag(err, p);
		return;
	}
	const i64 t = base + o + ix * dim_stride;
	const T v = LOADV(src, s);
	STOREV(priv, t, sc_fold(LOADV(priv, t), v, red));
	if (counted != I64C(0)) {
		STOREU(pcnt, t, LOADU(pcnt, t) + 1u);
	}
}

/* The private pass's contiguous 1-d path, in blocks of SC_PB positions.
 * A block's indices are checked first with one min/max pass (vector code;
 * for amax/amin its values for NaN too), then, where all are in range and
 * no value is NaN, it folds with no test per position: a load, a combine
 * and a store (amax/amin as one compare: a NaN already in the copy stays,
 * as every compare with it is false, which is sc_combine's result). Other
 * blocks (a bad or, with wrap, a negative index, a NaN value) fold with
 * sc_private_one. The target of position p + SC_PF is prefetched for
 * writing while p folds, so the data-dependent lines of a copy larger
 * than the caches arrive in parallel (an index out of range prefetches
 * target 0; the prefetch stops SC_PF positions before the index's end).
 * Measured on PoCL (2-core EPYC): the private pass of 16M positions into
 * 1M targets went from 22-31 ms to 11-15 ms, into a 16M permutation from
 * 120-135 ms to 55-65 ms; distances of 32 to 128 did about as well, 16
 * and none worse. Below SC_PF_MIN targets the copy stays in L1/L2 and the
 * prefetch (an index load, a clamp and the prefetch per position) only
 * costs: 16M positions into 16 targets, amax, min of 25 calls in three
 * alternating rounds, 11.1-11.4 ms with it, 9.6-9.8 ms without; into
 * 1024 and 32768 targets 10.8-12.2 ms against 9.7-11.0; from 256K
 * targets on the two were within the noise. */
#define SC_FAST_FOLD(p) \
	{ \
		const i64 o_ = base + LOADI(index, p); \
		const T v_ = LOADV(src, p); \
		const T acc_ = LOADV(priv, o_); \
		T r_ = v_; \
		if (red == I64C(RED_AMAX)) { \
			r_ = T_SEL(T_GT(v_, acc_), v_, acc_); /* no NaN: sc_combine's result */ \
		} else if (red == I64C(RED_AMIN)) { \
			r_ = T_SEL(T_LT(v_, acc_), v_, acc_); \
		} else if (red != I64C(RED_ASSIGN)) { \
			r_ = sc_combine(acc_, v_, red); \
		} \
		STOREV(priv, o_, r_); \
		if (counted != I64C(0)) { \
			STOREU(pcnt, o_, LOADU(pcnt, o_) + 1u); \
		} \
	}

void sc_private_blocks(BPTR src, BPTR pcnt, BPTR err, BPTR priv, BPTR index, i64 count, i64 from, i64 to,
	i64 dim_size, i64 wrap, i64 counted, i64 red, i64 base) {
	const bool nanful = red == I64C(RED_AMAX) || red == I64C(RED_AMIN);
	const i64 dim_stride = I64C(1);
	for (i64 b = from; b < to; b += I64C(SC_PB)) {
		const i64 e = min64(b + I64C(SC_PB), to);
		i64 mn = LOADI(index, b);
		i64 mx = mn;
		int nans = 0; /* 32-ok: a flag, 0 or 1 */
		for (i64 p = b; p < e; p++) {
			const i64 ix = LOADI(index, p);
			mn = min64(mn, ix);
			mx = max64(mx, ix);
			if (nanful) {
				nans = nans | (T_IS_NAN(LOADV(src, p)) ? 1 : 0);
			}
		}
		if (mn < I64C(0) || mx >= dim_size || nans != 0) {
			for (i64 p = b; p < e; p++) {
				i64 ix = LOADI(index, p);
				if (wrap != I64C(0) && ix < I64C(0)) {
					ix += dim_size;
				}
				sc_private_one(src, pcnt, err, priv, p, I64C(0), p, ix, dim_size, dim_stride, base, counted, red);
			}
			continue;
		}
		i64 p = b;
		if (SC_PF > 0 && dim_size >= I64C(SC_PF_MIN)) {
			const i64 pe = min64(e, count - I64C(SC_PF)); /* the prefetch reads index[p + SC_PF] */
			for (; p < pe; p++) {
				const i64 f = LOADI(index, p + I64C(SC_PF));
				const i64 fo = base + (CAST(u64, f) < CAST(u64, dim_size) ? f : I64C(0));
				PREFETCH_RW(&LOADV(priv, fo));
				if (counted != I64C(0)) {
					PREFETCH_RW(&LOADU(pcnt, fo));
				}
				SC_FAST_FOLD(p)
			}
		}
		for (; p < e; p++) {
			SC_FAST_FOLD(p)
		}
	}
}

INLINE void scatter_private(SCATTER_PRIVATE_PARAMS) {
	const i64 workers = GROUP_TOTAL() * I64C(LOCAL_SIZE);
	const i64 w = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID();
	const i64 chunk = cdiv64(count, workers);
	const i64 from = w * chunk;
	const i64 to = min64(from + chunk, count);
	/* inplace: worker 0 folds straight into the output (which holds the
	 * input: sum, product, amax, amin with the input and no counts), so
	 * there is one copy fewer to fill and merge */
	const bool own = inplace != I64C(0) && w == I64C(0);
	priv = own ? dst : priv;
	const i64 base = own ? I64C(0) : (w - inplace) * out_n;
	const sc_strides st = sc_strides_of(meta, rank, dim);
	const i64 dim_stride = st.dsto;
	if (rank == I64C(1) && dim_stride == I64C(1) && st.src == I64C(1) && st.idx == I64C(1)) {
		sc_private_blocks(src, pcnt, err, priv, index, count, from, to, dim_size, wrap, counted, red, base);
		return;
	}
	if (rank == I64C(1)) {
		for (i64 p = from; p < to; p++) {
			i64 ix = LOADI(index, p * st.idx);
			if (wrap != I64C(0) && ix < I64C(0)) {
				ix += dim_size;
			}
			sc_private_one(src, pcnt, err, priv, p, I64C(0), p * st.src, ix, dim_size, dim_stride, base, counted, red);
		}
	} else {
		for (i64 p = from; p < to; p++) {
			const sc_pos q = sc_position(meta, index, st, rank, dim, dim_size, wrap, p);
			sc_private_one(src, pcnt, err, priv, p, q.o, q.s, q.ix, dim_size, dim_stride, base, counted, red);
		}
	}
}

/* The few-targets pass (see the top of the file). Worker w takes a run of
 * whole SC_FEW_UNIT positions (the last worker the rest) and folds into out_n <=
 * few <= SC_FEW_MAX targets (few compiled in) with no private copy in
 * memory:
 * - where the wrapper defines SC_VN (OpenCL C: SC_VN lanes of T in one
 *   64-byte register, vector types TV/UV/LV/ULV), each whole contiguous
 *   block folds as vectors: lane l of a step takes position q+l, whose
 *   target is a bit of a 32-bit word, and every target folds the step's
 *   values under its lane mask (a test, and an add and a blend or a
 *   masked max, per target and vector: about 80 instructions per 16
 *   float32 positions, where the scalar spelling of 8 lanes, which LLVM's
 *   SLP pass vectorized, checked and wrapped each lane every step, about
 *   100 per 8 positions). The block is checked as it folds (the
 *   unsigned maximum of its indices, and for float amax/amin whether a
 *   value is NaN or zero); a block that fails (a bad, or with wrap a
 *   negative, index; a NaN or a signed zero) puts the vector accumulators
 *   back as they were before it and folds again with the scalar loop (a
 *   separate check pass over each block first cost 2-3 ms more over 16M
 *   positions on PoCL);
 * - everything else (the blocks that failed, the tail, a strided index
 *   or source, hit counts, the GLSL build) folds one position at a time,
 *   in order, into a scalar accumulator (and with counted a hit count)
 *   per target, validating as it goes.
 * The worker's result per target is sc_combine(its vector lanes folded in
 * lane order, its scalar accumulator). Sums and products thereby
 * associate differently from index order (as any split across workers
 * does). amax and amin keep the reference's bits: the vector blocks hold
 * no NaN and no zero, so values that compare equal there have equal bits
 * and their order cannot show; the scalar loop sees the rest in order, so
 * its result holds the worker's last NaN (sc_combine's rule) and, between
 * equal zeros, the first; and a zero or NaN never ties with a vector
 * block's value. The merge then folds the workers in order. */
/* The worker's target count. OpenCL C: the knob where the host folded it
 * in (the CPU plans do), a constant trip count for the loops over the
 * targets, which SC_FEW_UNROLL then unrolls (a loop over a run-time count
 * cannot be: clang warned "loop not unrolled" at every GPU build). */
#ifdef ACCEL_CL
#if SC_FEW >= 0
#define SC_FEW_N SC_FEW
#define SC_FEW_UNROLL UNROLL
#endif
#endif
#ifndef SC_FEW_N
#define SC_FEW_N CAST(int, few) /* 32-ok: few <= SC_FEW_MAX */
#define SC_FEW_UNROLL
#endif
/* A worker's run is whole SC_FEW_UNIT positions: SC_PB blocks where the
 * vector steps take them, else single positions (the plan's chunk under
 * a loop limit). */
#ifdef SC_VN
#define SC_FEW_UNIT SC_PB
#else
#define SC_FEW_UNIT 1
#endif

/* The start of the few passes' accumulators: the reduction's identity,
 * and -0 for sums and means (-0 + x is x's bits, a -0 among them, where
 * +0 would turn a -0 into +0). */
T sc_fold_identity(i64 red) {
	return (red == I64C(RED_SUM) || red == I64C(RED_MEAN)) ? -CAST(T, 0) : sc_identity(red);
}

/* The scalar loop over positions [lo, hi) with index and source strides
 * (ISTRIDE, SSTRIDE): a bad index is recorded as scatter_validate does
 * and skipped. */
#define SC_FEW_SCALAR(lo, hi, ISTRIDE, SSTRIDE) \
	for (i64 p_ = (lo); p_ < (hi); p_++) { \
		i64 ix_ = LOADI(index, p_ * (ISTRIDE)); \
		if (wrap != I64C(0) && ix_ < I64C(0)) { \
			ix_ += dim_size; \
		} \
		if (sc_bad(ix_, dim_size)) { \
			sc_flag(err, p_); \
		} else { \
			SC_FEW_ONE(CAST(int, ix_), LOADV(src, p_ * (SSTRIDE))) /* 32-ok: a validated target, < dim_size = out_n <= SC_FEW_MAX */ \
		} \
	}

/* one[t] = sc_combine(one[t], v): OpenCL C indexes the private array (kept
 * in memory, off the vector loop's registers); GLSL compares every target
 * instead, so a driver running invocations as SIMD lanes (llvmpipe) needs
 * no per-lane array address. */
#ifdef SC_VN
#define SC_FEW_ONE(t, v) \
	one[t] = TO_BITS(sc_combine(FROM_BITS(one[t]), v, red)); \
	hits[t] += counted != I64C(0) ? 1u : 0u;
#else
#define SC_FEW_ONE(t, v) \
	{ \
		const T v1_ = v; \
		for (int u_ = 0; u_ < SC_FEW_N; u_++) { /* 32-ok: a target, < SC_FEW_MAX */ \
			one[u_] = u_ == (t) ? TO_BITS(sc_combine(FROM_BITS(one[u_]), v1_, red)) : one[u_]; \
			hits[u_] += (u_ == (t) && counted != I64C(0)) ? 1u : 0u; \
		} \
	}
#endif

#ifdef SC_VN
/* sc_combine of v into acc in the lanes where hit (a lane mask) is set,
 * for the reductions few takes (no NaN in the lanes: see above). */
#define SC_FEW_VFOLD(acc, hit, v) \
	((red == I64C(RED_PROD)) ? SC_VMUL(acc, select((TV)(CAST(T, 1)), v, hit)) \
	 : (red == I64C(RED_AMAX)) ? select(acc, select(acc, v, (v) > (acc)), hit) \
	 : (red == I64C(RED_AMIN)) ? select(acc, select(acc, v, (v) < (acc)), hit) \
				   : SC_VADD(acc, select((TV)(-CAST(T, 0)), v, hit)))
#endif

INLINE void scatter_few(SCATTER_FEW_PARAMS) {
	const i64 workers = GROUP_TOTAL() * I64C(LOCAL_SIZE);
	const i64 w = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID();
	const i64 units = cdiv64(count, I64C(SC_FEW_UNIT));
	const i64 chunk = cdiv64(units, workers) * I64C(SC_FEW_UNIT);
	const i64 from = min64(w * chunk, count);
	const i64 to = min64(from + chunk, count);
	const i64 src_stride = LOADI(meta, I64C(SC_META_SRC));
	const i64 index_stride = LOADI(meta, I64C(SC_META_IDX));
	const T ident = sc_fold_identity(red);
	UBITS one[SC_FEW_MAX]; /* as bits, as scatter_fewg's (see there) */
	u32 hits[SC_FEW_MAX]; /* 32-ok: hits of a target in the run, < 2^32: larger counted scatters take the sorted path (accel maxHits) */
	for (int t = 0; t < SC_FEW_MAX; t++) { /* 32-ok: a target, < SC_FEW_MAX */
		one[t] = TO_BITS(ident);
		hits[t] = 0u;
	}
	i64 b = from;
#ifdef SC_VN
	const bool nanful = red == I64C(RED_AMAX) || red == I64C(RED_AMIN);
	TV acc[SC_FEW_MAX];
	SC_FEW_UNROLL
	for (int t = 0; t < SC_FEW_N; t++) { /* 32-ok: a target, < SC_FEW_MAX */
		acc[t] = (TV)(ident);
	}
	if (index_stride == I64C(1) && src_stride == I64C(1) && counted == I64C(0)) {
		for (; b + I64C(SC_PB) <= to; b += I64C(SC_PB)) {
			TV keep[SC_FEW_MAX];
			SC_FEW_UNROLL
			for (int t = 0; t < SC_FEW_N; t++) { /* 32-ok: a target, < SC_FEW_MAX */
				keep[t] = acc[t];
			}
			ULV mx = (ULV)(0);
			UV odd = (UV)(0);
			for (i64 q = b; q < b + I64C(SC_PB); q += I64C(SC_VN)) {
				const LV x = SC_VLOADI(index, q);
				const TV v = SC_VLOADV(src, q);
				mx = max(mx, SC_VCAT(as_, ULV)(x));
				if (nanful) {
					odd = odd | SC_VODD(v);
				}
				const UV bits = (UV)(1u) << SC_VTO_UV(x);
				SC_FEW_UNROLL
				for (int t = 0; t < SC_FEW_N; t++) { /* 32-ok: a target, < SC_FEW_MAX */
					acc[t] = SC_FEW_VFOLD(acc[t], (bits & (UV)(1u << CAST(u32, t))) != (UV)(0u), v); /* 32-ok: a target, < SC_FEW_MAX */
				}
			}
			if (any(mx >= (ULV)(CAST(u64, dim_size))) || any(SC_VSIGNED(odd))) {
				SC_FEW_UNROLL
				for (int t = 0; t < SC_FEW_N; t++) { /* 32-ok: a target, < SC_FEW_MAX */
					acc[t] = keep[t];
				}
				SC_FEW_SCALAR(b, b + I64C(SC_PB), I64C(1), I64C(1))
			}
		}
	}
#endif
	SC_FEW_SCALAR(b, to, index_stride, src_stride)
	SC_FEW_UNROLL
	for (int t = 0; t < SC_FEW_N; t++) { /* 32-ok: a target, < SC_FEW_MAX */
		T r = FROM_BITS(one[t]);
#ifdef SC_VN
		T lanes[SC_VN];
		SC_VSTORE(acc[t], lanes);
		r = lanes[0];
		for (int l = 1; l < SC_VN; l++) { /* 32-ok: a vector lane, < SC_VN */
			r = sc_combine(r, lanes[l], red);
		}
		r = sc_combine(r, FROM_BITS(one[t]), red);
#endif
		if (t < CAST(int, out_n)) { /* 32-ok: out_n <= few <= SC_FEW_MAX */
			STOREV(priv, w * out_n + I64C(t), r);
			if (counted != I64C(0)) {
				STOREU(pcnt, w * out_n + I64C(t), hits[t]);
			}
		}
	}
}

/* scatter_fewg's batch slot b (index value x, value v) of the positions
 * from p0 (a stride of LOCAL_SIZE apart), loaded (each slot spelled out;
 * scatter_fewg folds them in a loop over the slots). No branch: a slot
 * past the range loads its last position's and is never folded (as
 * SC_AB_LOAD1). */
#define SC_FEWG_P(b) (p0 + I64C(b) * I64C(LOCAL_SIZE))
#define SC_FEWG_LOAD(b, x, v) \
	{ \
		const i64 p_ = min64(SC_FEWG_P(b), to - I64C(1)); \
		x = LOADI(index, p_ * index_stride); \
		v = LOADV(src, p_ * src_stride); \
	}

/* The GPU few-targets pass (scatter_fewg): where few targets take every
 * position, atomics on them serialize (16M float32 positions into 16
 * targets took 2.37 s on an NVIDIA H200's OpenCL, whose float adds are
 * compare-and-swap loops, and 0.28 ms for 1M on its Vulkan with native
 * float atomics). Instead work-group g takes the contiguous range
 * [g*span, (g+1)*span) of positions, its lanes read it in strides of
 * LOCAL_SIZE (each step one coalesced load of indices and of values,
 * SC_AB steps loaded before they are folded) and fold each value into its target's accumulator, one of two ways
 * (knob SC_FEWG_SH), with the same bits:
 * - 0: registers, every target's accumulator under a compare (no
 *   data-dependent address where SC_FEW_N is a constant the compiler
 *   unrolls: OpenCL C with SC_FEW folded);
 * - 1: the lane's own column of scratch, slot t * LOCAL_SIZE + lid for
 *   target t (and as many slots again for its hit counts): one scratch
 *   read and write a position, whatever the target count, and no bank
 *   conflict (a step's lanes take consecutive slots whatever their
 *   targets). A loop over the targets whose count the compiler cannot
 *   see as a constant (GLSL's specialization constants reach the driver
 *   as a run-time count in some: the H200's Vulkan took 4.33 ms for 16M
 *   positions into 16 targets where its OpenCL took 0.24 on the same
 *   plan) keeps a per-lane array in memory; a column does not need one;
 * then the group folds its lanes per target in scratch (a tree in lane
 * order) and lane 0 writes copy g, with the hit counts where counted.
 * The merge folds the G copies in group order: no atomics at all, so
 * every dtype and reduction runs (64-bit ones without 64-bit atomics,
 * products, means with their counts), and the same plan gives the same
 * bits on every run. The order is not the reference's (lanes stride), so
 * float sums round otherwise and amax/amin may keep another zero or NaN
 * of equal value. The accumulators are kept as bits, so that a compiler
 * without the float controls (the plain SPIR-V builds) sees no float phi
 * whose NaN test it could fold away. A bad index is flagged and skipped,
 * as scatter_validate does. */
INLINE void scatter_fewg(SCATTER_FEWG_PARAMS) {
	const i64 lid = LOCAL_ID();
	const i64 g = GROUP_LINEAR_ID();
	const i64 span = cdiv64(count, GROUP_TOTAL());
	const i64 from = min64(g * span, count);
	const i64 to = min64(from + span, count);
	const i64 src_stride = LOADI(meta, I64C(SC_META_SRC));
	const i64 index_stride = LOADI(meta, I64C(SC_META_IDX));
	const T ident = sc_fold_identity(red);
	UBITS acc[SC_FEW_MAX];
	u32 hits[SC_FEW_MAX]; /* 32-ok: a lane's hits of a target, < 2^32 (accel maxHits) */
	/* the hit counts' columns, after the accumulators' (SC_FEWG_SH) */
	const i64 hcol = I64C(LOCAL_SIZE) * I64C(SC_FEW_MAX);
	SC_FEW_UNROLL
	for (int t = 0; t < SC_FEW_N; t++) { /* 32-ok: a target, < SC_FEW_MAX */
		acc[t] = TO_BITS(ident);
		hits[t] = 0u;
		if (SC_FEWG_SH != 0) {
			SH(I64C(t) * I64C(LOCAL_SIZE) + lid) = TO_BITS(ident);
			SH(hcol + I64C(t) * I64C(LOCAL_SIZE) + lid) = CAST(UBITS, 0u);
		}
	}
	/* SC_AB positions a lane at a time: their index and value loads first,
	 * all in flight at once, then their folds in order (a load after a
	 * fold's scratch access, or after the value's load waited on its
	 * index's test, waited a round trip to memory a position) */
	for (i64 p0 = from + lid; p0 < to; p0 += I64C(SC_AB) * I64C(LOCAL_SIZE)) {
		i64 x0 = I64C(0), x1 = I64C(0), x2 = I64C(0), x3 = I64C(0);
		T v0 = ident, v1 = ident, v2 = ident, v3 = ident;
		SC_FEWG_LOAD(0, x0, v0)
		SC_FEWG_LOAD(1, x1, v1)
		SC_FEWG_LOAD(2, x2, v2)
		SC_FEWG_LOAD(3, x3, v3)
		for (int b = 0; b < SC_AB; b++) { /* 32-ok: a batch slot, < SC_AB */
			if (SC_FEWG_P(b) >= to) {
				continue;
			}
			/* into the lane's accumulator of its target (its scratch
			 * column with SC_FEWG_SH); a bad index flagged and skipped */
			i64 ix = SC_PICK(b, x0, x1, x2, x3);
			const T v = SC_PICK(b, v0, v1, v2, v3);
			if (wrap != I64C(0) && ix < I64C(0)) {
				ix += dim_size;
			}
			if (sc_bad(ix, dim_size)) {
				sc_flag(err, SC_FEWG_P(b));
			} else if (SC_FEWG_SH != 0) {
				const i64 at = ix * I64C(LOCAL_SIZE) + lid; /* ix < out_n <= few: an initialized column slot */
				SH(at) = TO_BITS(sc_combine(FROM_BITS(SH(at)), v, red));
				if (counted != I64C(0)) {
					SH(hcol + at) = SH(hcol + at) + CAST(UBITS, 1u);
				}
			} else {
				SC_FEW_UNROLL
				for (int t = 0; t < SC_FEW_N; t++) { /* 32-ok: a target, < SC_FEW_MAX */
					const bool hit = ix == I64C(t);
					acc[t] = hit ? TO_BITS(sc_combine(FROM_BITS(acc[t]), v, red)) : acc[t];
					hits[t] += (hit && counted != I64C(0)) ? 1u : 0u;
				}
			}
		}
	}
	/* The group's lanes in order, every target at once (scratch of
	 * SC_FEW_MAX words per lane, so a tree has log2(LOCAL_SIZE) barriers,
	 * which PoCL's work-item loops also need few of): lane l folds lane
	 * l + s where l is a multiple of 2s. The loops are uniform: every
	 * barrier is reached by the whole group. With SC_FEWG_SH the lanes'
 * accumulators are in place already. */
	if (SC_FEWG_SH == 0) {
		SC_FEW_UNROLL
		for (int t = 0; t < SC_FEW_N; t++) { /* 32-ok: a target, < SC_FEW_MAX */
			SH(I64C(t) * I64C(LOCAL_SIZE) + lid) = acc[t];
		}
	}
	LOCAL_BARRIER();
	for (i64 s = I64C(1); s < I64C(LOCAL_SIZE); s = s << 1) {
		if ((lid & (2 * s - I64C(1))) == I64C(0)) {
			SC_FEW_UNROLL
			for (int t = 0; t < SC_FEW_N; t++) { /* 32-ok: a target, < SC_FEW_MAX */
				const i64 at = I64C(t) * I64C(LOCAL_SIZE) + lid;
				SH(at) = TO_BITS(sc_combine(FROM_BITS(SH(at)), FROM_BITS(SH(at + s)), red));
			}
		}
		LOCAL_BARRIER();
	}
	if (lid < out_n) {
		STOREV(priv, g * out_n + lid, FROM_BITS(SH(lid * I64C(LOCAL_SIZE))));
	}
	if (counted == I64C(0)) {
		return;
	}
	LOCAL_BARRIER();
	SC_FEW_UNROLL
	for (int t = 0; t < SC_FEW_N; t++) { /* 32-ok: a target, < SC_FEW_MAX */
		const i64 at = I64C(t) * I64C(LOCAL_SIZE) + lid;
		SH(at) = SC_FEWG_SH != 0 ? SH(hcol + at) : CAST(UBITS, hits[t]); /* the lane's own column */
	}
	LOCAL_BARRIER();
	for (i64 s = I64C(1); s < I64C(LOCAL_SIZE); s = s << 1) {
		if ((lid & (2 * s - I64C(1))) == I64C(0)) {
			SC_FEW_UNROLL
			for (int t = 0; t < SC_FEW_N; t++) { /* 32-ok: a target, < SC_FEW_MAX */
				const i64 at = I64C(t) * I64C(LOCAL_SIZE) + lid;
				SH(at) = SH(at) + SH(at + s);
			}
		}
		LOCAL_BARRIER();
	}
	if (lid < out_n) {
		STOREU(pcnt, g * out_n + lid, CAST(u32, SH(lid * I64C(LOCAL_SIZE)))); /* 32-ok: a group's hits, < 2^32 */
	}
}

/* The merge, over the outputs: dst[t] folds the W private copies in worker
 * order. With hit counts, a target no worker hit keeps its value,
 * include_self == 0 starts from the identity, assign takes the last
 * worker's value and mean divides by the total (+1 with the input);
 * without, dst[t] = fold(dst[t], priv[0][t], priv[1][t], ...), where the
 * identity fill leaves untouched targets' bits as they were. On GPUs
 * (elementwise plans with CONTIG other than 1) the copies go SC_MB
 * workers at a time: their values (and counts) loaded first, all
 * in flight at once, then folded in order. A fold's loads waited on the
 * fold before it where the compiler kept the loop's branches (a count
 * tested before its value was read, amax's NaN tests): on the GPUs' few
 * targets pass, 16 lanes walking 2112 copies, one round trip each, or
 * two with counts (0.96 ms of the H200's 16M-into-16 mean). */
#define SC_MB 8
#define SC_MB_PICK(b, a) ((b) < 4 ? SC_PICK(b, a##0, a##1, a##2, a##3) : SC_PICK((b) - 4, a##4, a##5, a##6, a##7))
/* the merge's fold of a copy's value v (with its hit count c where
 * counted) into acc and total */
#define SC_MB_FOLD(v, c) \
	if (counted == I64C(0)) { \
		acc = sc_combine(acc, v, red); \
	} else if ((c) > I64C(0)) { \
		acc = sc_fold(acc, v, red); \
		total += (c); \
	}
/* copy b's value, and its hit count (SC_MB_COUNT), of the batch from w0;
 * no branch: a slot past the copies loads the last one's and is never
 * folded (as SC_AB_LOAD1) */
#define SC_MB_W(b) min64(w0 + I64C(b), workers - I64C(1))
#define SC_MB_LOAD(b) v##b = LOADV(priv, SC_MB_W(b) * count + t);
#define SC_MB_COUNT(b) c##b = CAST(i64, LOADU(pcnt, SC_MB_W(b) * count + t));
INLINE void scatter_merge(SCATTER_MERGE_PARAMS) {
	const i64 tiles = ew_tiles(count);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 t = ew_index(tile, j);
			if (t >= count) {
				continue;
			}
			const T self = LOADV(dst, t);
			T acc = (counted == I64C(0) || include_self != I64C(0) || red == I64C(RED_ASSIGN)) ? self : sc_identity(red);
			i64 total = I64C(0);
			const i64 plain = CONTIG == 1 ? workers : I64C(0); /* the workers folded one at a time */
			for (i64 w = I64C(0); w < plain; w++) {
				/* CPU drivers: a worker at a time, which their compilers
				 * vectorize over work-items (the batches took perm16M's
				 * merge of two copies on PoCL from 90-118 to 150-184 ms) */
				const T v = LOADV(priv, w * count + t);
				const i64 c = counted != I64C(0) ? CAST(i64, LOADU(pcnt, w * count + t)) : I64C(0);
				SC_MB_FOLD(v, c)
			}
			for (i64 w0 = plain; w0 < workers; w0 += I64C(SC_MB)) {
				T v0 = acc, v1 = acc, v2 = acc, v3 = acc, v4 = acc, v5 = acc, v6 = acc, v7 = acc;
				i64 c0 = I64C(0), c1 = I64C(0), c2 = I64C(0), c3 = I64C(0), c4 = I64C(0), c5 = I64C(0), c6 = I64C(0), c7 = I64C(0);
				SC_MB_LOAD(0)
				SC_MB_LOAD(1)
				SC_MB_LOAD(2)
				SC_MB_LOAD(3)
				SC_MB_LOAD(4)
				SC_MB_LOAD(5)
				SC_MB_LOAD(6)
				SC_MB_LOAD(7)
				if (counted != I64C(0)) { /* the same for every lane */
					SC_MB_COUNT(0)
					SC_MB_COUNT(1)
					SC_MB_COUNT(2)
					SC_MB_COUNT(3)
					SC_MB_COUNT(4)
					SC_MB_COUNT(5)
					SC_MB_COUNT(6)
					SC_MB_COUNT(7)
				}
				for (int b = 0; b < SC_MB; b++) { /* 32-ok: a batch slot, < SC_MB */
					if (w0 + I64C(b) < workers) {
						SC_MB_FOLD(SC_MB_PICK(b, v), SC_MB_PICK(b, c))
					}
				}
			}
			if (counted != I64C(0)) {
				if (total == I64C(0)) {
					continue;
				}
				if (red == I64C(RED_MEAN)) {
					acc = MEAN_DIV(acc, total + include_self);
				}
			}
			STOREV(dst, t, acc);
		}
	}
}

#endif
