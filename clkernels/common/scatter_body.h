/* scatter_body.h: scatter / scatter_reduce with atomics, shared by
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
 *                a plain store for assign; counts[target]++ for mean
 *   SC_MEAN      (over out): out /= count (+1 with include_self) where
 *                count > 0; integers floor
 *   SC_GATHER    (over positions): src[p] = dst[target] (take_along_axis)
 *   SC_DEST      (over positions): the 64-bit words counts[p] = the
 *                target's offset and err[p] = the source's offset, the
 *                keys and payload the bit-reproducible mode sorts
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

#include "reduce_ops.h"

void scatter_run(VPTR dst, VPTR src, IPTR index, IPTR meta, UPTR counts, UPTR err,
	i64 count, i64 rank, i64 dim, i64 dim_size, i64 red, i64 mode, i64 include_self, i64 wrap) {
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
			i64 rem = p;
			i64 o = I64C(0);
			i64 s = I64C(0);
			i64 io = I64C(0);
			if (rank == I64C(1)) { /* no division on the common 1-d path */
				s = p * LOADI(meta, 2);
				io = p * LOADI(meta, 3);
			}
			for (i64 k = rank - I64C(1); k >= I64C(0) && rank > I64C(1); k--) {
				const i64 size = LOADI(meta, k);
				const i64 pk = rem % size;
				rem = rem / size;
				if (k != dim) {
					o += pk * LOADI(meta, rank + k);
				}
				s += pk * LOADI(meta, I64C(2) * rank + k);
				io += pk * LOADI(meta, I64C(3) * rank + k);
			}
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
