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
 * Tiled passes (GPUs; knob RADIX_KPT > 0, RADIX_BITS <= 5): the keys are
 * cut into tiles of TILE = LOCAL_SIZE * RADIX_KPT, one work-group per tile
 * at a time (grid stride), so global loads and stores are by consecutive
 * lanes and coalesce where per-item chunks do not:
 *   radix_tcount   hist[d*T + t] = keys of tile t with digit d (T tiles)
 *   radix_tscatter after an exclusive scan of hist, each group ranks its
 *                  tile stably in work-group scratch (lane l holds tile
 *                  keys l*KPT .. l*KPT+KPT-1; per-lane digit counts, packed
 *                  two 16-bit counters a word, are scanned across lanes),
 *                  moves keys and entries to their tile-sorted places in
 *                  scratch, then writes position p = j*LOCAL_SIZE + lane of
 *                  the sorted tile to hist[d*T + t] + p - (tile start of
 *                  d): each digit's run of a tile is one contiguous store.
 * The wrappers give them a scratch of RADIX_SCRATCH_LEN 32-bit words (sh).
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

#include "radix_tile.h"


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

/* The key at position i of a pass's input (packed: the high half of its
 * word in pin). */
KEY radix_key(BPTR kin, BPTR pin, i64 i, i64 pack) {
	if (pack >= I64C(RADIX_PACKED)) {
		return CAST(KEY, LD64(pin, i) >> 32);
	}
	return LDK(kin, i);
}

void radix_count(RADIX_COUNT_PARAMS) {
	RADIX_CHUNK
	i64 cnt[1 << RADIX_BITS];
	for (int d = 0; d < (1 << RADIX_BITS); d++) { /* 32-ok: a digit, < 2^RADIX_BITS */
		cnt[d] = I64C(0);
	}
	for (i64 i = lo; i < hi; i++) {
		const KEY k = radix_key(kin, pin, i, pack);
		const int d = CAST(int, (k >> CAST(KEY, shift)) & mask); /* 32-ok: a digit, < 2^RADIX_BITS */
		cnt[d] = cnt[d] + I64C(1);
	}
	for (int d = 0; d < (1 << RADIX_BITS); d++) { /* 32-ok: a digit, < 2^RADIX_BITS */
		ST64(hist, I64C(d) * items + w, CAST(u64, cnt[d]));
	}
}

void radix_scatter(RADIX_SCATTER_PARAMS) {
	RADIX_CHUNK
	if (lo >= hi) {
		return;
	}
	i64 cnt[1 << RADIX_BITS];
	for (int d = 0; d < (1 << RADIX_BITS); d++) { /* 32-ok: a digit, < 2^RADIX_BITS */
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
		const int d = CAST(int, (k >> CAST(KEY, shift)) & mask); /* 32-ok: a digit, < 2^RADIX_BITS */
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

/* Key i of the pass and its entry, as radix_scatter reads them. */
#define RADIX_LOAD(i, k, e) \
	if (pack >= I64C(RADIX_PACKED)) { \
		const u64 word_ = LD64(pin, i); \
		k = CAST(KEY, word_ >> 32); \
		e = word_ & 0xfffffffful; \
	} else { \
		k = LDK(kin, i); \
		e = first != I64C(0) ? CAST(u64, i) : LD64(pin, i); \
	}

/* Counts this lane's keys of tile t (positions [lo, hi) of the tile at
 * base) into packed words w. */
#define RADIX_LANE_COUNT(w) \
	for (int q_ = 0; q_ < RADIX_WORDS; q_++) { /* 32-ok: a word row, < RADIX_WORDS */ \
		w[q_] = 0u; \
	} \
	for (int j_ = 0; j_ < RADIX_KPT; j_++) { /* 32-ok: a key of the lane, < RADIX_KPT */ \
		const i64 i_ = base + LOCAL_ID() * I64C(RADIX_KPT) + I64C(j_); \
		if (i_ < hi) { \
			const KEY k_ = radix_key(kin, pin, i_, pack); \
			const int d_ = CAST(int, (k_ >> CAST(KEY, shift)) & mask); /* 32-ok: a digit, < 2^RADIX_BITS */ \
			w[d_ >> 1] += 1u << (CAST(uint, d_ & 1) * 16u); /* 32-ok: a digit's bit, 0 or 1 */ \
		} \
	}

void radix_tcount(RADIX_TCOUNT_PARAMS) {
	const i64 tiles = RADIX_KPT > 0 ? cdiv64(n, max64(RADIX_TILE, I64C(1))) : I64C(0);
	const KEY mask = CAST(KEY, RADIX_DIGITS - 1);
	const int lid = CAST(int, LOCAL_ID()); /* 32-ok: local id */
	uint w[RADIX_WORDS]; /* 32-ok: packed digit counts of a tile, < 2^16 each */
	for (i64 t = GROUP_LINEAR_ID(); t < tiles; t += GROUP_TOTAL()) {
		const i64 base = t * RADIX_TILE;
		const i64 hi = min64(base + RADIX_TILE, n);
		RADIX_LANE_COUNT(w)
		LOCAL_BARRIER();
		for (int q = 0; q < RADIX_WORDS; q++) { /* 32-ok: a word row, < RADIX_WORDS */
			sh[q * RADIX_LS + lid] = w[q];
		}
		/* a tree sum of the lanes' words, row by row */
		for (int off = RADIX_LS >> 1; off > 0; off >>= 1) { /* 32-ok: a lane offset, < local size */
			LOCAL_BARRIER();
			if (lid < off) {
				for (int q = 0; q < RADIX_WORDS; q++) { /* 32-ok: a word row, < RADIX_WORDS */
					sh[q * RADIX_LS + lid] += sh[q * RADIX_LS + lid + off];
				}
			}
		}
		LOCAL_BARRIER();
		for (int d = lid; d < RADIX_DIGITS; d += RADIX_LS) { /* 32-ok: a digit, < RADIX_DIGITS */
			const uint c = (sh[(d >> 1) * RADIX_LS] >> (CAST(uint, d & 1) * 16u)) & 0xffffu; /* 32-ok: a tile count, < 2^16 */
			ST64(hist, I64C(d) * tiles + t, CAST(u64, c));
		}
	}
}

/* Puts key k and its entry e at slot r of the scratch tile. */
#define RADIX_SH_PUT(r, k, e) \
	RADIX_SH_PUTK(RADIX_KEYS_AT, r, k); \
	sh[RADIX_ENTS_AT + 2 * (r)] = CAST(uint, (e) & 0xfffffffful); /* 32-ok: one 32-bit half of an entry */ \
	sh[RADIX_ENTS_AT + 2 * (r) + 1] = CAST(uint, (e) >> 32) /* 32-ok: one 32-bit half of an entry */

/* Writes the ranked tile (count keys, in scratch) by digit runs: slot p_
 * of the tile, of digit d_, goes to position TO (an expression of d_ and
 * p_), lane by lane, so each digit's run is one contiguous store. */
#define RADIX_WRITE_TILE(count, TO) \
	for (int j_ = 0; j_ < RADIX_KPT; j_++) { /* 32-ok: a key of the lane, < RADIX_KPT */ \
		const int p_ = j_ * RADIX_LS + lid; /* 32-ok: a slot of the tile, < RADIX_TILE < 2^16 */ \
		if (p_ < (count)) { \
			const KEY k_ = RADIX_SH_GETK(RADIX_KEYS_AT, p_); \
			const u64 e_ = CAST(u64, sh[RADIX_ENTS_AT + 2 * p_]) | (CAST(u64, sh[RADIX_ENTS_AT + 2 * p_ + 1]) << 32); \
			const int d_ = CAST(int, (k_ >> CAST(KEY, shift)) & mask); /* 32-ok: a digit, < 2^RADIX_BITS */ \
			const i64 to_ = TO; \
			if (pack == I64C(RADIX_PACK_OUT) || pack == I64C(RADIX_PACKED)) { \
				ST64(pout, to_, (CAST(u64, k_) << 32) | e_); \
			} else { \
				STK(kout, to_, k_); \
				ST64(pout, to_, e_); \
			} \
		} \
	}

/* Tile t's stable ranking by a raking scan (see radix_tile.h): each lane counts its keys in its own column of packed
 * counters, the group scans the counters in word-major order (each lane
 * sums a segment of RADIX_WORDS words, the segment sums are scanned, each
 * lane rescans its segment), which gives every (digit, lane) the keys of
 * smaller digits and of the same digit in earlier lanes, the high halves
 * after every low one; then each lane places its keys in order, taking
 * and bumping its own counters, and the tile goes out by digit runs. Two
 * scratch scans' worth of work where the per-lane Hillis-Steele scan of
 * every word it replaced took RADIX_WORDS times log2(LOCAL_SIZE) steps
 * (16M uint32 keys with their permutation on the H200: 2.38 ms OpenCL and
 * 2.76 Vulkan, against 4.88 and 3.68 with that scan). */
void radix_tscatter(RADIX_TSCATTER_PARAMS) {
	const i64 tiles = RADIX_KPT > 0 ? cdiv64(n, max64(RADIX_TILE, I64C(1))) : I64C(0);
	const KEY mask = CAST(KEY, RADIX_DIGITS - 1);
	const int lid = CAST(int, LOCAL_ID()); /* 32-ok: local id */
	for (i64 t = GROUP_LINEAR_ID(); t < tiles; t += GROUP_TOTAL()) {
		const i64 base = t * RADIX_TILE;
		const i64 hi = min64(base + RADIX_TILE, n);
		LOCAL_BARRIER(); /* the previous tile's readers are done */
		for (int q = 0; q < RADIX_WORDS; q++) { /* 32-ok: a word row, < RADIX_WORDS */
			sh[RADIX_RW(q * RADIX_LS + lid)] = 0u;
		}
		for (int j = 0; j < RADIX_KPT; j++) { /* 32-ok: a key of the lane, < RADIX_KPT */
			const i64 i = base + LOCAL_ID() * I64C(RADIX_KPT) + I64C(j);
			if (i < hi) {
				const KEY k = radix_key(kin, pin, i, pack);
				const int d = CAST(int, (k >> CAST(KEY, shift)) & mask); /* 32-ok: a digit, < 2^RADIX_BITS */
				sh[RADIX_RW((d & (RADIX_WORDS - 1)) * RADIX_LS + lid)] += 1u << (CAST(uint, d >> (RADIX_BITS - 1)) * 16u); /* 32-ok: a digit's half, 0 or 1 */
			}
		}
		LOCAL_BARRIER();
		uint s = 0u; /* 32-ok: packed counts of a tile, < 2^16 each */
		for (int k = 0; k < RADIX_WORDS; k++) { /* 32-ok: a word of the segment, < RADIX_WORDS */
			s += sh[RADIX_RW(lid * RADIX_WORDS + k)];
		}
		sh[RADIX_SEG_AT + lid] = s;
		for (int off = 1; off < RADIX_LS; off <<= 1) { /* 32-ok: a lane offset, < local size */
			LOCAL_BARRIER();
			const uint a = lid >= off ? sh[RADIX_SEG_AT + lid - off] : 0u; /* 32-ok: packed counts, < 2^16 each */
			LOCAL_BARRIER();
			sh[RADIX_SEG_AT + lid] += a;
		}
		LOCAL_BARRIER();
		uint run = lid > 0 ? sh[RADIX_SEG_AT + lid - 1] : 0u; /* 32-ok: packed counts, < 2^16 each */
		const uint low = sh[RADIX_SEG_AT + RADIX_LS - 1] & 0xffffu; /* 32-ok: the tile's keys of the low digits */
		for (int k = 0; k < RADIX_WORDS; k++) { /* 32-ok: a word of the segment, < RADIX_WORDS */
			const uint v = sh[RADIX_RW(lid * RADIX_WORDS + k)]; /* 32-ok: packed counts, < 2^16 each */
			sh[RADIX_RW(lid * RADIX_WORDS + k)] = run;
			run += v;
		}
		LOCAL_BARRIER();
		/* each digit's run: where it starts in the sorted tile (lane 0's
		 * counter), and its global offset less that start */
		for (int d = lid; d < RADIX_DIGITS; d += RADIX_LS) { /* 32-ok: a digit, < RADIX_DIGITS */
			const uint h = CAST(uint, d >> (RADIX_BITS - 1)); /* 32-ok: a digit's half, 0 or 1 */
			const uint st = ((sh[RADIX_RW((d & (RADIX_WORDS - 1)) * RADIX_LS)] >> (h * 16u)) & 0xffffu) + h * low; /* 32-ok: a rank in the tile */
			const i64 off = CAST(i64, LD64(hist, I64C(d) * tiles + t)) - CAST(i64, st);
			sh[RADIX_OFF_AT + 2 * d] = CAST(uint, CAST(u64, off) & 0xfffffffful); /* 32-ok: one 32-bit half of an offset */
			sh[RADIX_OFF_AT + 2 * d + 1] = CAST(uint, CAST(u64, off) >> 32); /* 32-ok: one 32-bit half of an offset */
		}
		LOCAL_BARRIER(); /* lane 0's counters are read before it bumps them */
		for (int j = 0; j < RADIX_KPT; j++) { /* 32-ok: a key of the lane, < RADIX_KPT */
			const i64 i = base + LOCAL_ID() * I64C(RADIX_KPT) + I64C(j);
			if (i < hi) {
				KEY k;
				u64 e;
				RADIX_LOAD(i, k, e)
				const int d = CAST(int, (k >> CAST(KEY, shift)) & mask); /* 32-ok: a digit, < 2^RADIX_BITS */
				const uint h = CAST(uint, d >> (RADIX_BITS - 1)); /* 32-ok: a digit's half, 0 or 1 */
				const int at = RADIX_RW((d & (RADIX_WORDS - 1)) * RADIX_LS + lid); /* 32-ok: a scratch word */
				const uint word = sh[at]; /* 32-ok: packed counts, < 2^16 each */
				const int r = CAST(int, ((word >> (h * 16u)) & 0xffffu) + h * low); /* 32-ok: a rank in the tile, < RADIX_TILE < 2^16 */
				sh[at] = word + (1u << (h * 16u));
				RADIX_SH_PUT(r, k, e);
			}
		}
		LOCAL_BARRIER();
		RADIX_WRITE_TILE(CAST(int, hi - base), CAST(i64, CAST(u64, sh[RADIX_OFF_AT + 2 * d_]) | (CAST(u64, sh[RADIX_OFF_AT + 2 * d_ + 1]) << 32)) + I64C(p_)) /* 32-ok: a tile size, <= RADIX_TILE < 2^16 */
	}
}

#endif
