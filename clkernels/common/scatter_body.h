/* scatter_body.h: scatter / scatter_reduce / put_along_axis /
 * take_along_axis, shared by clkernels/scatter.cl and shaders/scatter.comp.
 * The entry points and their parameters are declared in host/kernels
 * (gen/scatter.h); each is one pass:
 *   scatter_validate  (over positions): an index outside [0, dim_size)
 *                     records its tile (position >> ERR_TILE_SHIFT) with an
 *                     atomic min into err[0]; nothing else is written
 *   scatter_init      (over positions): every hit target starts from the
 *                     reduction's identity (include_self false)
 *   scatter_reduce    (over positions): dst[target] = combine(dst[target],
 *                     src[p]) with a compare-and-swap loop on the element's
 *                     bits (a stored NaN cannot make it spin: bits are
 *                     compared), or a plain store for assign; counts[target]++
 *                     for mean. Float sums and means use the device's
 *                     native atomic add where the wrapper defines
 *                     ATOM_ADD_T (variants with FADD=1, chosen only on
 *                     devices that have it)
 *   scatter_mean      (over outputs): dst /= count (+1 with include_self)
 *                     where count > 0; integers floor
 *   scatter_gather    (over positions): dst[p] = arr[target] (take_along_axis)
 *   scatter_dest      (over positions): the 64-bit words keys[p] = the
 *                     target's offset and soffs[p] = the source's offset,
 *                     which the bit-reproducible mode sorts
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
 *                     shape, at most SC_FEW_MAX targets, a reduction that
 *                     needs no hit counts): worker w keeps SC_LANES
 *                     accumulators per target and folds SC_LANES positions
 *                     a step, every target testing every lane (a select,
 *                     no data-dependent address: the compiler vectorizes
 *                     it), then folds its lanes in lane order into its
 *                     private copy, validating as it goes
 *   scatter_merge     (over outputs): folds the private copies into dst in
 *                     worker order (and divides the mean)
 * Every pass after validate returns at once when err[0] != ERR_NONE (an
 * index was flagged): the host reads the flag once, at the end of the op,
 * and nothing is read or written out of bounds meanwhile.
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
 * the old bits), TO_BITS/FROM_BITS, ATOM_MIN_U32 and ATOM_INC_U32, and
 * dtypes.h's helpers. */
#ifndef ACCEL_SCATTER_BODY_H
#define ACCEL_SCATTER_BODY_H

#include "elementwise.h"
#include "reduce_ops.h"

#define SC_META(block, k) LOADI(meta, I64C(block) * rank + (k))

/* The target offset without the dim term (o), the source offset (s) and
 * the index offset (io) of position p. */
#define SC_POSITION(p, o, s, io) \
	{ \
		i64 rem_ = (p); \
		if (rank == I64C(1)) { /* no division on the common 1-d path */ \
			s = (p) * LOADI(meta, I64C(SC_META_SRC)); \
			io = (p) * LOADI(meta, I64C(SC_META_IDX)); \
		} \
		for (i64 k_ = rank - I64C(1); k_ >= I64C(0) && rank > I64C(1); k_--) { \
			const i64 size_ = SC_META(SC_META_LOOP, k_); \
			const i64 pk_ = rem_ % size_; \
			rem_ = rem_ / size_; \
			if (k_ != dim) { \
				o += pk_ * SC_META(SC_META_OUT, k_); \
			} \
			s += pk_ * SC_META(SC_META_SRC, k_); \
			io += pk_ * SC_META(SC_META_IDX, k_); \
		} \
	}

/* The elementwise passes over positions: STEP(p, o, s, ix) runs for every
 * position p of this work-item's tiles with o the target offset without
 * the dim term, s the source offset and ix the index value (a negative one
 * wrapped once where wrap != 0). */
#define SC_EACH_POSITION(STEP) \
	{ \
		const i64 tiles_ = ew_tiles(count); \
		for (i64 tile_ = GROUP_LINEAR_ID(); tile_ < tiles_; tile_ += GROUP_TOTAL()) { \
			for (i64 j_ = I64C(0); j_ < I64C(ITEMS); j_++) { \
				const i64 p = ew_index(tile_, j_); \
				if (p >= count) { \
					continue; \
				} \
				i64 o = I64C(0); \
				i64 s = I64C(0); \
				i64 io = I64C(0); \
				SC_POSITION(p, o, s, io) \
				i64 ix = LOADI(index, io); \
				if (wrap != I64C(0) && ix < I64C(0)) { \
					ix += dim_size; \
				} \
				STEP(p, o, s, ix) \
			} \
		} \
	}

/* true when a validation flagged an index: the pass has nothing to do */
bool sc_flagged(BPTR err) {
	return LD32(err, 0) != ERR_NONE;
}

#define SC_VALIDATE_STEP(p, o, s, ix) \
	if (ix < I64C(0) || ix >= dim_size) { \
		ATOM_MIN_U32(err, 0, CAST(u32, (p) >> ERR_TILE_SHIFT)); \
	}

void scatter_validate(SCATTER_VALIDATE_PARAMS) {
	SC_EACH_POSITION(SC_VALIDATE_STEP)
}

#define SC_TARGET(o, ix) ((o) + (ix) * SC_META(SC_META_OUT, dim))

#define SC_INIT_STEP(p, o, s, ix) STOREV(dst, SC_TARGET(o, ix), sc_identity(red));

void scatter_init(SCATTER_INIT_PARAMS) {
	if (sc_flagged(err)) {
		return;
	}
	SC_EACH_POSITION(SC_INIT_STEP)
}

/* The atomic fold of v into dst[t]. */
#ifdef ATOM_ADD_T
#define SC_NATIVE_ADD(t, v) \
	if (red == I64C(RED_SUM) || red == I64C(RED_MEAN)) { \
		ATOM_ADD_T(dst, t, v); /* the device's native float add */ \
		if (red == I64C(RED_MEAN)) { \
			ATOM_INC_U32(counts, t); \
		} \
		continue; \
	}
#else
#define SC_NATIVE_ADD(t, v)
#endif

#define SC_REDUCE_STEP(p, o, s, ix) \
	{ \
		const i64 t_ = SC_TARGET(o, ix); \
		const T v_ = LOADV(src, s); \
		if (red == I64C(RED_ASSIGN)) { \
			STOREV(dst, t_, v_); \
			continue; \
		} \
		SC_NATIVE_ADD(t_, v_) \
		UBITS old_ = TO_BITS(LOADV(dst, t_)); \
		for (;;) { \
			const UBITS next_ = TO_BITS(sc_combine(FROM_BITS(old_), v_, red)); \
			if (next_ == old_) { \
				break; \
			} \
			const UBITS seen_ = CAS_BITS(dst, t_, old_, next_); \
			if (seen_ == old_) { \
				break; \
			} \
			old_ = seen_; \
		} \
		if (red == I64C(RED_MEAN)) { \
			ATOM_INC_U32(counts, t_); \
		} \
	}

void scatter_reduce(SCATTER_REDUCE_PARAMS) {
	if (sc_flagged(err)) {
		return;
	}
	SC_EACH_POSITION(SC_REDUCE_STEP)
}

void scatter_mean(SCATTER_MEAN_PARAMS) {
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

#define SC_GATHER_STEP(p, o, s, ix) STOREV(dst, s, LOADV(arr, SC_TARGET(o, ix)));

void scatter_gather(SCATTER_GATHER_PARAMS) {
	if (sc_flagged(err)) {
		return;
	}
	SC_EACH_POSITION(SC_GATHER_STEP)
}

#define SC_DEST_STEP(p, o, s, ix) \
	ST64(keys, p, CAST(u64, SC_TARGET(o, ix))); \
	ST64(soffs, p, CAST(u64, s));

void scatter_dest(SCATTER_DEST_PARAMS) {
	if (sc_flagged(err)) {
		return;
	}
	SC_EACH_POSITION(SC_DEST_STEP)
}

/* The position walk of the CPU passes over [from, to): 1-d positions with
 * their strides in registers, others through SC_POSITION. STEP(p, o, s,
 * ix) gets each position's target offset without the dim term, its source
 * offset and its index value. */
#define SC_WALK(from, to, STEP) \
	if (rank == I64C(1)) { \
		const i64 src_stride_ = LOADI(meta, I64C(SC_META_SRC)); \
		const i64 index_stride_ = LOADI(meta, I64C(SC_META_IDX)); \
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

/* The ownership pass: see the top of the file. The spare buffer holds
 * SC_SPARE T slots per owner, then as many u32 count slots from u32 index
 * 2*SC_SPARE*W; rotating over them keeps the stores of positions owned
 * elsewhere off one long dependency chain. */
#define SC_OWNED_STEP(p, o, s, ix) \
	{ \
		if (wrap != I64C(0) && ix < I64C(0)) { \
			ix += dim_size; \
		} \
		const bool valid_ = ix >= I64C(0) && ix < dim_size; \
		if (!valid_ && w == I64C(0)) { \
			ATOM_MIN_U32(err, 0, CAST(u32, (p) >> ERR_TILE_SHIFT)); \
		} \
		o += ix * dim_stride; \
		const bool mine_ = valid_ && o >= lo && o < hi; \
		const i64 slot_ = w * I64C(SC_SPARE) + ((p) & I64C(SC_SPARE - 1)); \
		BPTR vb_ = mine_ ? dst : spare; \
		const i64 vo_ = mine_ ? o : slot_; \
		const T v_ = LOADV(src, s); \
		if (red == I64C(RED_ASSIGN)) { \
			STOREV(vb_, vo_, v_); \
		} else if (counted) { \
			BPTR cb_ = mine_ ? counts : spare; \
			const i64 co_ = mine_ ? o : I64C(2 * SC_SPARE) * owners + slot_; \
			const u32 c_ = LOADU(cb_, co_); \
			STOREU(cb_, co_, c_ + 1u); \
			const T acc_ = (c_ == 0u && include_self == I64C(0)) ? ident : LOADV(vb_, vo_); \
			STOREV(vb_, vo_, sc_combine(acc_, v_, red)); \
		} else { \
			STOREV(vb_, vo_, sc_combine(LOADV(vb_, vo_), v_, red)); \
		} \
	}

void scatter_owned(SCATTER_OWNED_PARAMS) {
	const i64 owners = GROUP_TOTAL() * I64C(LOCAL_SIZE);
	const i64 w = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID();
	const i64 span = (out_n + owners - I64C(1)) / owners;
	const i64 lo = w * span;
	const i64 hi = min64(lo + span, out_n);
	const i64 dim_stride = SC_META(SC_META_OUT, dim);
	const bool counted = red == I64C(RED_MEAN) || include_self == I64C(0);
	const T ident = sc_identity(red);
	SC_WALK(I64C(0), count, SC_OWNED_STEP)
}

/* The private pass: worker w of W folds the positions of its chunk, in
 * order, into its own copy priv[w*out_n ...] (filled with the identity by
 * the host; with inplace, worker 0 into dst and worker w into copy w - 1) with plain loads and stores, counting hits in pcnt[w*out_n
 * ...] where the merge needs them (counted != 0). A bad index is skipped
 * and its tile recorded in err[0]. SC_RED, a knob, is the reduction when
 * the host compiles it in (>= 0): the loop then carries no reduction
 * switch. */
#define SC_PRIVATE_STEP(p, o, s, ix) \
	{ \
		if (wrap != I64C(0) && ix < I64C(0)) { \
			ix += dim_size; \
		} \
		if (ix < I64C(0) || ix >= dim_size) { \
			ATOM_MIN_U32(err, 0, CAST(u32, (p) >> ERR_TILE_SHIFT)); \
			continue; \
		} \
		o = base + o + ix * dim_stride; \
		const T v_ = LOADV(src, s); \
		STOREV(priv, o, red == I64C(RED_ASSIGN) ? v_ : sc_combine(LOADV(priv, o), v_, red)); \
		if (counted != I64C(0)) { \
			STOREU(pcnt, o, LOADU(pcnt, o) + 1u); \
		} \
	}

/* The private pass's contiguous 1-d path, in blocks of SC_PB positions.
 * A block's indices are checked first with one min/max pass (vector code;
 * for amax/amin its values for NaN too), then, where all are in range and
 * no value is NaN, it folds with no test per position: a load, a combine
 * and a store (amax/amin as one compare: a NaN already in the copy stays,
 * as every compare with it is false, which is sc_combine's result). Other
 * blocks (a bad or, with wrap, a negative index, a NaN value) fold with
 * SC_PRIVATE_STEP. The target of position p + SC_PF is prefetched for
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
			r_ = v_ > acc_ ? v_ : acc_; /* no NaN: sc_combine's result */ \
		} else if (red == I64C(RED_AMIN)) { \
			r_ = v_ < acc_ ? v_ : acc_; \
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
		int nans = 0;
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
				i64 o = I64C(0);
				i64 ix = LOADI(index, p);
				SC_PRIVATE_STEP(p, o, p, ix)
			}
			continue;
		}
		i64 p = b;
		if (SC_PF > 0 && dim_size >= I64C(SC_PF_MIN)) {
			const i64 pe = min64(e, count - I64C(SC_PF)); /* the prefetch reads index[p + SC_PF] */
			for (; p < pe; p++) {
				const i64 f = LOADI(index, p + I64C(SC_PF));
				PREFETCH_RW(&LOADV(priv, base + (CAST(u64, f) < CAST(u64, dim_size) ? f : I64C(0))));
				SC_FAST_FOLD(p)
			}
		}
		for (; p < e; p++) {
			SC_FAST_FOLD(p)
		}
	}
}

void scatter_private(SCATTER_PRIVATE_PARAMS) {
	const i64 workers = GROUP_TOTAL() * I64C(LOCAL_SIZE);
	const i64 w = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID();
	const i64 chunk = (count + workers - I64C(1)) / workers;
	const i64 from = w * chunk;
	const i64 to = min64(from + chunk, count);
	/* inplace: worker 0 folds straight into the output (which holds the
	 * input: sum, product, amax, amin with the input and no counts), so
	 * there is one copy fewer to fill and merge */
	const bool own = inplace != I64C(0) && w == I64C(0);
	priv = own ? dst : priv;
	const i64 base = own ? I64C(0) : (w - inplace) * out_n;
	const i64 dim_stride = SC_META(SC_META_OUT, dim);
	if (rank == I64C(1) && dim_stride == I64C(1) && LOADI(meta, I64C(SC_META_SRC)) == I64C(1) &&
		LOADI(meta, I64C(SC_META_IDX)) == I64C(1)) {
		sc_private_blocks(src, pcnt, err, priv, index, count, from, to, dim_size, wrap, counted, red, base);
		return;
	}
	SC_WALK(from, to, SC_PRIVATE_STEP)
}

/* The few-targets pass (see the top of the file). The positions of worker
 * w are a run of whole SC_LANES steps; lane l of target t accumulates the
 * values of positions b+l whose index is t, every other lane folding the
 * fold identity (-0.0 for float sums: x + -0.0 is x for every x), so no
 * value is combined that the reduction would not combine. A bad index
 * matches no target and marks its lane; a worker with a marked lane walks
 * its positions again for the first bad one and records it in err[0]. The host passes a 1-d loop shape
 * (target = index value) and few as a knob. A lane's target is a bit of a
 * 32-bit word (one test per target, on 32-bit lanes). */
#define SC_FEW_N CAST(int, few)
/* The step's loops unroll only where few is compiled in (OpenCL C). */
#ifdef __OPENCL_VERSION__
#if SC_FEW < 0
#define SC_FEW_UNROLL
#else
#define SC_FEW_UNROLL UNROLL
#endif
#else
#define SC_FEW_UNROLL
#endif
#define SC_FEW_STEP(b, IN, ISTRIDE, SSTRIDE) \
	{ \
		u32 tl_[SC_LANES]; \
		T vl_[SC_LANES]; \
		SC_FEW_UNROLL \
		for (int l = 0; l < SC_LANES; l++) { \
			const i64 p_ = (b) + I64C(l); \
			const bool in_ = IN; \
			const i64 q_ = in_ ? p_ : from; \
			i64 ix_ = LOADI(index, q_ * (ISTRIDE)); \
			if (wrap != I64C(0) && ix_ < I64C(0)) { \
				ix_ += dim_size; \
			} \
			const bool ok_ = ix_ >= I64C(0) && ix_ < dim_size; \
			bad[l] = bad[l] || (in_ && !ok_); \
			tl_[l] = (in_ && ok_) ? (1u << CAST(u32, ix_)) : 0u; \
			vl_[l] = LOADV(src, q_ * (SSTRIDE)); \
		} \
		SC_FEW_UNROLL \
		for (int t = 0; t < SC_FEW_N; t++) { \
			SC_FEW_UNROLL \
			for (int l = 0; l < SC_LANES; l++) { \
				acc[t * SC_LANES + l] = sc_few_fold(acc[t * SC_LANES + l], (tl_[l] & (1u << CAST(u32, t))) != 0u, vl_[l], red); \
			} \
		} \
	}

/* The steps of [from, to): whole steps, then the tail's. */
#define SC_FEW_WALK(ISTRIDE, SSTRIDE) \
	{ \
		i64 b = from; \
		for (; b + I64C(SC_LANES) <= to; b += I64C(SC_LANES)) { \
			SC_FEW_STEP(b, true, ISTRIDE, SSTRIDE) \
		} \
		if (b < to) { \
			SC_FEW_STEP(b, p_ < to, ISTRIDE, SSTRIDE) \
		} \
	}

/* sc_combine(acc, v) where hit, else acc, for the reductions the host
 * sends here (sum and product: accel's fewFits; amax and amin measured
 * faster on the private pass): a select of v or the identity, which the
 * compiler turns into a masked operation. */
T sc_few_fold(T acc, bool hit, T v, i64 red) {
	if (red == I64C(RED_PROD)) {
		return WRAP_MUL(acc, hit ? v : CAST(T, 1));
	}
	return WRAP_ADD(acc, hit ? v : -CAST(T, 0));
}

void scatter_few(SCATTER_FEW_PARAMS) {
	const i64 workers = GROUP_TOTAL() * I64C(LOCAL_SIZE);
	const i64 w = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID();
	const i64 steps = (count + I64C(SC_LANES - 1)) / I64C(SC_LANES);
	const i64 chunk = (steps + workers - I64C(1)) / workers * I64C(SC_LANES);
	const i64 from = min64(w * chunk, count);
	const i64 to = min64(from + chunk, count);
	const i64 src_stride = LOADI(meta, I64C(SC_META_SRC));
	const i64 index_stride = LOADI(meta, I64C(SC_META_IDX));
	const T ident = (red == I64C(RED_SUM)) ? -CAST(T, 0) : sc_identity(red);
	T acc[SC_FEW_MAX * SC_LANES];
	bool bad[SC_LANES];
	for (int k = 0; k < SC_FEW_N * SC_LANES; k++) {
		acc[k] = ident;
	}
	for (int l = 0; l < SC_LANES; l++) {
		bad[l] = false;
	}
	if (index_stride == I64C(1) && src_stride == I64C(1)) {
		SC_FEW_WALK(I64C(1), I64C(1)) /* contiguous: vector loads */
	} else {
		SC_FEW_WALK(index_stride, src_stride)
	}
	bool any = false;
	for (int l = 0; l < SC_LANES; l++) {
		any = any || bad[l];
	}
	if (any) { /* find the first bad position again */
		for (i64 p = from; p < to; p++) {
			i64 ix = LOADI(index, p * index_stride);
			if (wrap != I64C(0) && ix < I64C(0)) {
				ix += dim_size;
			}
			if (ix < I64C(0) || ix >= dim_size) {
				ATOM_MIN_U32(err, 0, CAST(u32, p >> ERR_TILE_SHIFT));
				break;
			}
		}
	}
	for (int t = 0; t < CAST(int, out_n); t++) {
		T r = acc[t * SC_LANES];
		for (int l = 1; l < SC_LANES; l++) {
			r = sc_combine(r, acc[t * SC_LANES + l], red);
		}
		STOREV(priv, w * out_n + I64C(t), r);
	}
}

/* The merge, over the outputs: dst[t] folds the W private copies in worker
 * order. With hit counts, a target no worker hit keeps its value,
 * include_self == 0 starts from the identity, assign takes the last
 * worker's value and mean divides by the total (+1 with the input);
 * without, dst[t] = fold(dst[t], priv[0][t], priv[1][t], ...), where the
 * identity fill leaves untouched targets' bits as they were. */
void scatter_merge(SCATTER_MERGE_PARAMS) {
	const i64 tiles = ew_tiles(count);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 t = ew_index(tile, j);
			if (t >= count) {
				continue;
			}
			const T self = LOADV(dst, t);
			if (counted == I64C(0)) {
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

#endif
