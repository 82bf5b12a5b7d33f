/* radix_body.h: the passes of a stable LSD radix sort, shared by
 * clkernels/radix.cl and shaders/radix.comp (entry points and knobs
 * declared in host/kernels: gen/radix.h). Wrappers define the key word KEY
 * (32 or 64 bits) with LDK/STK, KEY_SIGN, KEY_INF (the bits of +inf) and
 * KEY_NAN (a canonical quiet NaN).
 *
 * The work is split into B = work-groups x LOCAL_SIZE work-items, item w
 * owning the contiguous chunk [w*chunk, (w+1)*chunk) of the n keys, so a
 * pass is stable by construction:
 *   radix_prep    kout[i] = the key's bits in an order where unsigned
 *                 comparison sorts as NumPy does (signed: sign flipped;
 *                 floats: negatives inverted, -0.0 as +0.0, every NaN as
 *                 one NaN above +inf; descending: all bits inverted)
 *   radix_count   hist[d*B + w] = how many keys of chunk w have digit d
 *   radix_scatter after an exclusive scan of hist (digit-major, so digit d
 *                 of chunk w lands after every smaller digit and after
 *                 digit d of every earlier chunk), each item moves its keys
 *                 and their permutation entries (int64; first pass: the
 *                 positions themselves) to their places, in order.
 *
 * Packed passes (pack != 0; keys below 2^32, that is 32-bit keys or 64-bit
 * ones the host knows to be, with entries below 2^32): a key and its entry
 * travel as one 64-bit word, the key in the high half, through the
 * permutation buffers, which halves the words a middle pass moves:
 *   RADIX_PACK_OUT  reads keys from kin (entries: the positions, or pin),
 *                   writes words to pout (the first of several passes)
 *   RADIX_PACKED    reads words from pin, writes words to pout
 *   RADIX_UNPACK    reads words from pin, writes keys to kout and entries
 *                   to pout (the last pass) */
#ifndef ACCEL_RADIX_BODY_H
#define ACCEL_RADIX_BODY_H


KEY radix_order(KEY k, i64 kind, i64 descending) {
	if (kind == I64C(KIND_SIGNED)) {
		k = k ^ KEY_SIGN;
	} else if (kind == I64C(KIND_FLOAT)) {
		if ((k & ~KEY_SIGN) > KEY_INF) {
			k = KEY_NAN;
		}
		if (k == KEY_SIGN) {
			k = CAST(KEY, 0);
		}
		k = (k & KEY_SIGN) != CAST(KEY, 0) ? ~k : (k | KEY_SIGN);
	}
	return descending != I64C(0) ? ~k : k;
}

/* This work-item's chunk of keys, [lo, hi). */
#define RADIX_CHUNK \
	const i64 items = GROUP_TOTAL() * I64C(LOCAL_SIZE); \
	const i64 w = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID(); \
	const i64 lo = w * chunk; \
	const i64 hi = min64(lo + chunk, n); \
	const KEY mask = CAST(KEY, (1 << RADIX_BITS) - 1);

void radix_prep(RADIX_PREP_PARAMS) {
	RADIX_CHUNK
	for (i64 i = lo; i < hi; i++) {
		STK(kout, i, radix_order(LDK(kin, i), kind, descending));
	}
}

void radix_count(RADIX_COUNT_PARAMS) {
	RADIX_CHUNK
	i64 cnt[1 << RADIX_BITS];
	for (int d = 0; d < (1 << RADIX_BITS); d++) {
		cnt[d] = I64C(0);
	}
	for (i64 i = lo; i < hi; i++) {
		KEY k;
		if (pack >= I64C(RADIX_PACKED)) {
			k = CAST(KEY, LD64(pin, i) >> 32);
		} else {
			k = LDK(kin, i);
		}
		const int d = CAST(int, (k >> CAST(KEY, shift)) & mask);
		cnt[d] = cnt[d] + I64C(1);
	}
	for (int d = 0; d < (1 << RADIX_BITS); d++) {
		ST64(hist, I64C(d) * items + w, CAST(u64, cnt[d]));
	}
}

void radix_scatter(RADIX_SCATTER_PARAMS) {
	RADIX_CHUNK
	if (lo >= hi) {
		return;
	}
	i64 cnt[1 << RADIX_BITS];
	for (int d = 0; d < (1 << RADIX_BITS); d++) {
		cnt[d] = CAST(i64, LD64(hist, I64C(d) * items + w));
	}
	for (i64 i = lo; i < hi; i++) {
		KEY k;
		u64 e; /* the permutation entry */
		if (pack >= I64C(RADIX_PACKED)) {
			const u64 word = LD64(pin, i);
			k = CAST(KEY, word >> 32);
			e = word & 0xfffffffful;
		} else {
			k = LDK(kin, i);
			e = first != I64C(0) ? CAST(u64, i) : LD64(pin, i);
		}
		const int d = CAST(int, (k >> CAST(KEY, shift)) & mask);
		const i64 to = cnt[d];
		cnt[d] = to + I64C(1);
		if (pack == I64C(RADIX_PACK_OUT) || pack == I64C(RADIX_PACKED)) {
			ST64(pout, to, (CAST(u64, k) << 32) | e);
		} else {
			STK(kout, to, k);
			ST64(pout, to, e);
		}
	}
}

#endif
