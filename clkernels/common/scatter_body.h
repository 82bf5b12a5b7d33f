/* scatter_body.h: scatter / scatter_reduce, shared by
 * clkernels/scatter.cl and shaders/scatter.comp. The wrappers define the
 * element type T, its bit type UBITS, VPTR/LOADV/STOREV for values,
 * LOADI for int64 indices and metadata, CAS_BITS (compare-and-swap on the
 * element's bits, returning the old bits), TO_BITS/FROM_BITS, WRAP_ADD and
 * WRAP_MUL (integers wrap), ATOM_MIN_U32 and ATOM_INC_U32 for 32-bit
 * counters, T_LOWEST/T_HIGHEST, and the knobs.
 *
 * One launch runs one mode over `count` elements:
 *   SC_VALIDATE  (over index): an index outside [0, dim_size) records its
 *                tile (position >> 16) with an atomic min into err[0];
 *                nothing else is written
 *   SC_INIT      (over index): every hit output starts from the identity
 *   SC_REDUCE    (over index): out[target] = combine(out[target], src[p])
 *                with a compare-and-swap loop on the element's bits (a
 *                stored NaN cannot make it spin: bits are compared), or
 *                a plain store for assign; counts[target]++ for mean.
 *                Float sums and means use the device's native atomic add
 *                where the wrapper defines ATOM_ADD_T (variants with
 *                FADD=1, chosen only on devices that have it)
 *   SC_MEAN      (over out): out /= count (+1 with include_self) where
 *                count > 0; integers floor
 *   SC_GATHER    (over positions): src[p] = dst[target] (take_along_axis)
 *   SC_DEST      (over positions): the 64-bit words counts[p] = the
 *                target's offset and err[p] = the source's offset, the
 *                keys and payload the bit-reproducible mode sorts
 *   SC_OWNED     (CPU drivers; one work-item per owner): work-item w of W
 *                owns the output offsets [w*span, (w+1)*span) and walks
 *                every position in index order, folding those it owns
 *                with plain loads and stores: no atomics, and each target
 *                sees its values in index order (the reference's bits).
 *                It validates as it goes (a bad index is skipped and its
 *                tile recorded in err[0]), keeps per-target counts in
 *                counts when it needs them (mean, or include_self == 0,
 *                where the first hit starts from the identity), and sends
 *                the stores of positions it does not own to its own spare
 *                slot, so the loop has no data-dependent branch.
 *   SC_PRIVATE   (CPU drivers; one work-item per worker): worker w folds
 *                its chunk of positions, in order, into a private copy
 *                of the output (no atomics), validating as it goes
 *   SC_MERGE     (over out): folds the private copies into out in worker
 *                order (and divides the mean)
 * The CPU passes read meta's tail: meta[4*rank] = the output's element
 * count, meta[4*rank+1] = the private copies, meta[4*rank+2] = whether the
 * private pass counts hits.
 * Positions p run over the loop shape (the index shape, or for
 * put/take_along_axis the broadcast of index and array) and decompose with
 * the metadata buffer meta = [loop sizes, out strides, src strides, index
 * strides] (rank entries each; a broadcast dim has stride 0, and so has an
 * out dim of size 1 that the loop broadcasts). With wrap != 0 a negative
 * index counts once from the end (NumPy). */
#ifndef ACCEL_SCATTER_BODY_H
#define ACCEL_SCATTER_BODY_H

#include "elementwise.h"

#define SC_VALIDATE 0
#define SC_INIT 1
#define SC_REDUCE 2
#define SC_MEAN 3
#define SC_GATHER 4
#define SC_DEST 5
#define SC_OWNED 6
#define SC_PRIVATE 7
#define SC_MERGE 8
#define SC_SPARE 8

#include "reduce_ops.h"

/* The target offset without the dim term (o), the source offset (s) and
 * the index offset (io) of position p. */
#define SC_POSITION(p, o, s, io) \
	{ \
		i64 rem_ = (p); \
		if (rank == I64C(1)) { /* no division on the common 1-d path */ \
			s = (p) * LOADI(meta, 2); \
			io = (p) * LOADI(meta, 3); \
		} \
		for (i64 k_ = rank - I64C(1); k_ >= I64C(0) && rank > I64C(1); k_--) { \
			const i64 size_ = LOADI(meta, k_); \
			const i64 pk_ = rem_ % size_; \
			rem_ = rem_ / size_; \
			if (k_ != dim) { \
				o += pk_ * LOADI(meta, rank + k_); \
			} \
			s += pk_ * LOADI(meta, I64C(2) * rank + k_); \
			io += pk_ * LOADI(meta, I64C(3) * rank + k_); \
		} \
	}

/* The position walk of the CPU passes over [from, to): 1-d positions with
 * their strides in registers, others through SC_POSITION. STEP(p, o, s,
 * ix) gets each position's target offset without the dim term, its source
 * offset and its index value. */
#define SC_WALK(from, to, STEP) \
	if (rank == I64C(1)) { \
		const i64 src_stride_ = LOADI(meta, 2); \
		const i64 index_stride_ = LOADI(meta, 3); \
		for (i64 p = (from); p < (to); p++) { \
			i64 o = I64C(0); \
			i64 ix = LOADI(index, p * index_stride_); \
			STEP(p, o, p * src_stride_, ix) \
		} \
	} else { \
		for (i64 p = (from); p < (to); p++) { \
			i64 o = I64C(0); \
			i64 s = I64C(0); \
			i64 io = I64C(0); \
			SC_POSITION(p, o, s, io) \
			i64 ix = LOADI(index, io); \
			STEP(p, o, s, ix) \
		} \
	}

/* The ownership pass (SC_OWNED): see the top of the file. The spare
 * buffer holds SC_SPARE T slots per owner, then as many u32 count slots
 * from u32 index 2*SC_SPARE*W; rotating over them keeps the stores of
 * positions owned elsewhere off one long dependency chain. */
#define SC_OWNED_STEP(p, o, s, ix) \
	{ \
		if (wrap != I64C(0) && ix < I64C(0)) { \
			ix += dim_size; \
		} \
		const bool valid_ = ix >= I64C(0) && ix < dim_size; \
		if (!valid_ && w == I64C(0)) { \
			ATOM_MIN_U32(err, 0, CAST(u32, (p) >> 16)); \
		} \
		o += ix * dim_stride; \
		const bool mine_ = valid_ && o >= lo && o < hi; \
		const i64 slot_ = w * I64C(SC_SPARE) + ((p) & I64C(SC_SPARE - 1)); \
		VPTR vb_ = mine_ ? dst : spare; \
		const i64 vo_ = mine_ ? o : slot_; \
		const T v_ = LOADV(src, s); \
		if (r == I64C(RED_ASSIGN)) { \
			STOREV(vb_, vo_, v_); \
		} else if (counted) { \
			UPTR cb_ = mine_ ? counts : spare_counts; \
			const i64 co_ = mine_ ? o : I64C(2 * SC_SPARE) * owners + slot_; \
			const u32 c_ = LOADU(cb_, co_); \
			STOREU(cb_, co_, c_ + 1u); \
			const T acc_ = (c_ == 0u && include_self == I64C(0)) ? ident : LOADV(vb_, vo_); \
			STOREV(vb_, vo_, sc_combine(acc_, v_, r)); \
		} else { \
			STOREV(vb_, vo_, sc_combine(LOADV(vb_, vo_), v_, r)); \
		} \
	}

void scatter_owned(VPTR dst, VPTR src, IPTR index, IPTR meta, UPTR counts, UPTR err, VPTR spare,
	i64 count, i64 rank, i64 dim, i64 dim_size, i64 red, i64 include_self, i64 wrap) {
	const i64 owners = GROUP_TOTAL() * I64C(LOCAL_SIZE);
	const i64 w = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID();
	const i64 out_n = LOADI(meta, I64C(4) * rank);
	const i64 span = (out_n + owners - I64C(1)) / owners;
	const i64 lo = w * span;
	const i64 hi = min64(lo + span, out_n);
	const i64 dim_stride = LOADI(meta, rank + dim);
	const i64 r = SC_RED >= 0 ? I64C(SC_RED) : red;
	const bool counted = r == I64C(RED_MEAN) || include_self == I64C(0);
	const T ident = sc_identity(r);
	UPTR spare_counts = CAST_UPTR(spare);
	SC_WALK(I64C(0), count, SC_OWNED_STEP)
}

/* The private pass (SC_PRIVATE): worker w of W folds the positions of its
 * chunk, in order, into its own copy priv[w*out_n ...] (filled with the
 * identity by the host) with plain loads and stores, counting hits in
 * pcnt[w*out_n ...] where the merge needs them (meta[4*rank+2] != 0). A
 * bad index is skipped and its tile recorded in err[0]. SC_RED, a knob,
 * is the reduction when the host compiles it in (>= 0): the loop then
 * carries no reduction switch. */
#define SC_PRIVATE_STEP(p, o, s, ix) \
	{ \
		if (wrap != I64C(0) && ix < I64C(0)) { \
			ix += dim_size; \
		} \
		if (ix < I64C(0) || ix >= dim_size) { \
			ATOM_MIN_U32(err, 0, CAST(u32, (p) >> 16)); \
			continue; \
		} \
		o = base + o + ix * dim_stride; \
		const T v_ = LOADV(src, s); \
		STOREV(priv, o, r == I64C(RED_ASSIGN) ? v_ : sc_combine(LOADV(priv, o), v_, r)); \
		if (counted) { \
			STOREU(pcnt, o, LOADU(pcnt, o) + 1u); \
		} \
	}

void scatter_private(VPTR src, IPTR index, IPTR meta, UPTR pcnt, UPTR err, VPTR priv,
	i64 count, i64 rank, i64 dim, i64 dim_size, i64 red, i64 wrap) {
	const i64 workers = GROUP_TOTAL() * I64C(LOCAL_SIZE);
	const i64 w = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID();
	const i64 out_n = LOADI(meta, I64C(4) * rank);
	const bool counted = LOADI(meta, I64C(4) * rank + I64C(2)) != I64C(0);
	const i64 chunk = (count + workers - I64C(1)) / workers;
	const i64 from = w * chunk;
	const i64 to = min64(from + chunk, count);
	const i64 base = w * out_n;
	const i64 dim_stride = LOADI(meta, rank + dim);
	const i64 r = SC_RED >= 0 ? I64C(SC_RED) : red;
	SC_WALK(from, to, SC_PRIVATE_STEP)
}

/* The merge (SC_MERGE, over the outputs): out[t] folds the W private
 * copies in worker order. With hit counts, a target no worker hit keeps
 * its value, include_self == 0 starts from the identity, assign takes the
 * last worker's value and mean divides by the total (+1 with the input);
 * without, out[t] = fold(out[t], priv[0][t], priv[1][t], ...), where the
 * identity fill leaves untouched targets' bits as they were. */
void scatter_merge(VPTR dst, IPTR meta, UPTR pcnt, VPTR priv, i64 count, i64 rank, i64 red,
	i64 include_self) {
	const i64 workers = LOADI(meta, I64C(4) * rank + I64C(1));
	const bool counted = LOADI(meta, I64C(4) * rank + I64C(2)) != I64C(0);
	const i64 tiles = ew_tiles(count);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 t = ew_index(tile, j);
			if (t >= count) {
				continue;
			}
			const T self = LOADV(dst, t);
			if (!counted) {
				T acc = self;
				for (i64 w = I64C(0); w < workers; w++) {
					acc = sc_combine(acc, LOADV(priv, w * count + t), red);
				}
				STOREV(dst, t, acc);
				continue;
			}
			T acc = (include_self != I64C(0) || red == I64C(RED_ASSIGN)) ? self : sc_identity(red);
			i64 total = I64C(0);
			for (i64 w = I64C(0); w < workers; w++) {
				const i64 c = CAST(i64, LOADU(pcnt, w * count + t));
				if (c > I64C(0)) {
					const T v = LOADV(priv, w * count + t);
					acc = red == I64C(RED_ASSIGN) ? v : sc_combine(acc, v, red);
					total += c;
				}
			}
			if (total == I64C(0)) {
				continue;
			}
			if (red == I64C(RED_MEAN)) {
				acc = MEAN_DIV(acc, total + include_self);
			}
			STOREV(dst, t, acc);
		}
	}
}


void scatter_run(VPTR dst, VPTR src, IPTR index, IPTR meta, UPTR counts, UPTR err, VPTR spare,
	i64 count, i64 rank, i64 dim, i64 dim_size, i64 red, i64 mode, i64 include_self, i64 wrap) {
	red = FOLD(SC_RED, red);
	mode = FOLD(SC_MODE, mode);
	include_self = FOLD(SC_SELF, include_self);
	wrap = FOLD(SC_WRAP, wrap);
	if (mode == I64C(SC_OWNED)) {
		scatter_owned(dst, src, index, meta, counts, err, spare, count, rank, dim, dim_size, red, include_self, wrap);
		return;
	}
	if (mode == I64C(SC_PRIVATE)) {
		scatter_private(src, index, meta, counts, err, spare, count, rank, dim, dim_size, red, wrap);
		return;
	}
	if (mode == I64C(SC_MERGE)) {
		scatter_merge(dst, meta, counts, spare, count, rank, red, include_self);
		return;
	}
	const i64 tiles = ew_tiles(count);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 p = ew_index(tile, j);
			if (p >= count) {
				continue;
			}
			if (mode == I64C(SC_MEAN)) {
				const i64 c = CAST(i64, LOADU(counts, p));
				if (c > I64C(0)) {
					const i64 d = c + include_self;
					STOREV(dst, p, MEAN_DIV(LOADV(dst, p), d));
				}
				continue;
			}
			/* target, source and index offsets of position p */
			i64 o = I64C(0);
			i64 s = I64C(0);
			i64 io = I64C(0);
			SC_POSITION(p, o, s, io)
			i64 ix = LOADI(index, io);
			if (wrap != I64C(0) && ix < I64C(0)) {
				ix += dim_size;
			}
			if (mode == I64C(SC_VALIDATE)) {
				if (ix < I64C(0) || ix >= dim_size) {
					ATOM_MIN_U32(err, 0, CAST(u32, p >> 16));
				}
				continue;
			}
			o += ix * LOADI(meta, rank + dim);
			if (mode == I64C(SC_DEST)) {
				ST64(counts, p, CAST(u64, o));
				ST64(err, p, CAST(u64, s));
				continue;
			}
			if (mode == I64C(SC_GATHER)) {
				STOREV(src, s, LOADV(dst, o));
				continue;
			}
			if (mode == I64C(SC_INIT)) {
				STOREV(dst, o, sc_identity(red));
				continue;
			}
			const T v = LOADV(src, s);
			if (red == I64C(RED_ASSIGN)) {
				STOREV(dst, o, v);
				continue;
			}
#ifdef ATOM_ADD_T
			if (red == I64C(RED_SUM) || red == I64C(RED_MEAN)) {
				ATOM_ADD_T(dst, o, v); /* the device's native float add */
				if (red == I64C(RED_MEAN)) {
					ATOM_INC_U32(counts, o);
				}
				continue;
			}
#endif
			UBITS old = TO_BITS(LOADV(dst, o));
			for (;;) {
				const UBITS next = TO_BITS(sc_combine(FROM_BITS(old), v, red));
				if (next == old) {
					break;
				}
				const UBITS seen = CAS_BITS(dst, o, old, next);
				if (seen == old) {
					break;
				}
				old = seen;
			}
			if (red == I64C(RED_MEAN)) {
				ATOM_INC_U32(counts, o);
			}
		}
	}
}

#endif
