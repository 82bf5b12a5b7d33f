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
 * Tiled passes (GPUs; knob RADIX_KPT > 0, RADIX_BITS <= 10): the keys are
 * cut into tiles of TILE = LOCAL_SIZE * RADIX_KPT, one work-group per tile
 * at a time (grid stride), so global loads and stores are by consecutive
 * lanes and coalesce where per-item chunks do not:
 *   radix_tcount   hist[d*T + t] = keys of tile t with digit d (T tiles),
 *                  counted with work-group atomics
 *   radix_tscatter after an exclusive scan of hist, each group ranks its
 *                  tile stably in work-group scratch (lane l holds tile
 *                  keys l*KPT .. l*KPT+KPT-1; per-lane digit counts, packed
 *                  two 16-bit counters a word, are scanned across lanes;
 *                  digits wider than 5 bits in two rounds, low bits first),
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
 *                   to pout (the last pass)
 * Keys too wide to pack, with entries below 2^32, keep their own buffers
 * and move their entries as 32-bit words between the passes (12 bytes a
 * 64-bit key each way, not 16):
 *   RADIX_E32_OUT   reads keys and entries as an unpacked pass does,
 *                   writes keys and 32-bit entries (the first pass)
 *   RADIX_E32       reads and writes keys and 32-bit entries
 *   RADIX_E32_IN    reads keys and 32-bit entries, writes keys and int64
 *                   entries (the last pass) */
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

INLINE void radix_prep(RADIX_PREP_PARAMS) {
	RADIX_CHUNK
	for (i64 i = lo; i < hi; i++) {
		STK(kout, i, radix_order(LDK(kin, i), kind, descending));
	}
}

/* What a pass of packing pack reads and writes: packed words, or keys
 * with 32-bit entries. */
#define RADIX_READS_WORDS(pack) ((pack) == I64C(RADIX_PACKED) || (pack) == I64C(RADIX_UNPACK))
#define RADIX_WRITES_WORDS(pack) ((pack) == I64C(RADIX_PACK_OUT) || (pack) == I64C(RADIX_PACKED))
#define RADIX_READS_E32(pack) ((pack) == I64C(RADIX_E32) || (pack) == I64C(RADIX_E32_IN))
#define RADIX_WRITES_E32(pack) ((pack) == I64C(RADIX_E32_OUT) || (pack) == I64C(RADIX_E32))

/* Entry i of an unpacked pass's input: the position (first), or pin's
 * word (32- or 64-bit as pack says). */
#define RADIX_ENTRY(i) \
	(first != I64C(0) ? CAST(u64, i) : (RADIX_READS_E32(pack) ? CAST(u64, LD32(pin, i)) : LD64(pin, i)))

/* Stores entry e at position to of pout (32- or 64-bit as pack says). */
#define RADIX_PUT_ENTRY(to, e) \
	if (RADIX_WRITES_E32(pack)) { \
		ST32(pout, to, CAST(uint, (e) & 0xfffffffful)); /* 32-ok: an entry below 2^32 (RADIX_E32*) */ \
	} else { \
		ST64(pout, to, e); \
	}

/* The key at position i of a pass's input (packed: the high half of its
 * word in pin). */
KEY radix_key(BPTR kin, BPTR pin, i64 i, i64 pack) {
	if (RADIX_READS_WORDS(pack)) {
		return CAST(KEY, LD64(pin, i) >> 32);
	}
	return LDK(kin, i);
}

/* The chunked passes (CPUs) skip a pass whose digit is the same for
 * every key, as the sweep does (knob RADIX_SKIP, and skip: where a sort
 * has three passes or more and enough keys): the first count also writes
 * each chunk's OR and AND of its keys (agree), radix_aroles turns them into each pass's role in
 * the sweep's form (RADIX_ROLE_RUNS | runs << 16 | at, or 0), after the
 * chunks' words, and every later launch reads its pass's role: a skipped
 * pass's count and scatter move nothing (its count writes zero counts),
 * and a running pass reads the buffers pass at-1 wrote (the caller's
 * where at is 0) and writes ka/pa where runs-1-at is even, else kb/pb, so
 * the last one writes ka and pa. The first pass always runs (its count
 * makes the roles). A pass's packing is its place's (radix_pack_of) where
 * the driver reads it at run time; where it is folded (RADIX_PACK >= 0:
 * a driver that runs both sides of a branch) it is the host's for a sort
 * of all the passes (radixPack), and the host has the last pass run
 * where it unpacks what the passes carry (aroles' last). Nothing waits:
 * the host queues every pass. The first pass makes the order bits of
 * keys of kind and descending as it reads them (no radix_prep): the later
 * passes get KIND_UNSIGNED and 0, and radix_order leaves their keys as
 * they are. */
#define RADIX_ROLE_RUNS (1ul << 32)
#define RADIX_CROLE_AT(items, pass) (I64C(2) * (items) + (pass))

/* The packing of pass at of runs, for carrying carry (CARRY_*). */
i64 radix_pack_of(i64 carry, i64 at, i64 runs) {
	if (carry == I64C(CARRY_WORDS)) {
		return I64C(RADIX_PACKED);
	}
	if (runs < I64C(2) || carry == I64C(CARRY_NONE)) {
		return I64C(RADIX_UNPACKED);
	}
	if (carry == I64C(CARRY_PACKED)) {
		return at == I64C(0) ? I64C(RADIX_PACK_OUT) : (at == runs - I64C(1) ? I64C(RADIX_UNPACK) : I64C(RADIX_PACKED));
	}
	return at == I64C(0) ? I64C(RADIX_E32_OUT) : (at == runs - I64C(1) ? I64C(RADIX_E32_IN) : I64C(RADIX_E32));
}

/* A running pass's place from its role: at of runs, and its buffers by
 * parity (the caller's k0 and p0 where at is 0, else what pass at-1
 * wrote; out to ka and pa where runs-1-at is even), and kxor, the XOR of
 * the keys it writes: kx in the last pass that runs (where the caller
 * passes one), else 0. The sweep's and the chunked passes'. */
#define RADIX_ROLE_PLACE(role) \
	const i64 at = CAST(i64, (role) & 0xfffful); \
	const i64 runs = CAST(i64, ((role) >> 16) & 0xfffful); \
	BPTR kin = at == I64C(0) ? k0 : (((runs - at) & I64C(1)) == I64C(0) ? ka : kb); \
	BPTR pin = at == I64C(0) ? p0 : (((runs - at) & I64C(1)) == I64C(0) ? pa : pb); \
	BPTR kout = ((runs - I64C(1) - at) & I64C(1)) == I64C(0) ? ka : kb; \
	BPTR pout = ((runs - I64C(1) - at) & I64C(1)) == I64C(0) ? pa : pb; \
	const KEY kxor = at == runs - I64C(1) ? CAST(KEY, kx) : CAST(KEY, 0);

/* the pass's role: read where the sort skips and readable (not the first
 * count, which comes before the roles), else every pass running; its
 * place (RADIX_ROLE_PLACE), packing and digit */
#define RADIX_CHUNK_ROLE(readable) \
	const u64 role = (RADIX_SKIP != 0 && skip != I64C(0) && (readable)) ? LD64(roles, RADIX_CROLE_AT(items, pass)) \
		: (RADIX_ROLE_RUNS | (CAST(u64, passes) << 16) | CAST(u64, pass)); \
	const bool runsHere = (role & RADIX_ROLE_RUNS) != 0ul; \
	RADIX_ROLE_PLACE(role) \
	const i64 pack = RADIX_PACK >= 0 ? hpack : radix_pack_of(carry, at, runs); \
	const i64 shift = pass * I64C(RADIX_BITS);

/* The chunk's count loop, with the order bits of kind and descending and
 * the OR and AND of its keys where AGREE: the first pass's; the later
 * passes keep the loop without them (on PoCL the counts took 20-30%
 * longer with them). */
#define RADIX_COUNT_LOOP(AGREE, ORDER) \
	for (i64 i = lo; i < end; i++) { \
		const KEY k = (ORDER) ? radix_order(radix_key(kin, pin, i, pack), kind, descending) : radix_key(kin, pin, i, pack); \
		if (AGREE) { \
			any = any | k; \
			all = all & k; \
		} \
		const int d = CAST(int, (k >> CAST(KEY, shift)) & mask); /* 32-ok: a digit, < 2^RADIX_BITS */ \
		cnt[d] = cnt[d] + I64C(1); \
	}
INLINE void radix_count(RADIX_COUNT_PARAMS) {
	const i64 kx = I64C(0); /* (the count writes no keys) */
	RADIX_CHUNK
	RADIX_CHUNK_ROLE(pass > I64C(0))
	const i64 end = runsHere ? hi : lo;
	i64 cnt[1 << RADIX_BITS];
	for (int d = 0; d < (1 << RADIX_BITS); d++) { /* 32-ok: a digit, < 2^RADIX_BITS */
		cnt[d] = I64C(0);
	}
	KEY any = CAST(KEY, 0);
	KEY all = ~CAST(KEY, 0);
	if (kind != I64C(KIND_UNSIGNED) || descending != I64C(0)) {
		RADIX_COUNT_LOOP(true, true)
	} else if (agree != I64C(0)) {
		RADIX_COUNT_LOOP(true, false)
	} else {
		RADIX_COUNT_LOOP(false, false)
	}
	if (agree != I64C(0)) {
		ST64(roles, I64C(2) * w, CAST(u64, any));
		ST64(roles, I64C(2) * w + I64C(1), CAST(u64, all));
	}
	for (int d = 0; d < (1 << RADIX_BITS); d++) { /* 32-ok: a digit, < 2^RADIX_BITS */
		ST64(hist, I64C(d) * items + w, CAST(u64, cnt[d]));
	}
}

INLINE void radix_scatter(RADIX_SCATTER_PARAMS) {
	RADIX_CHUNK
	RADIX_CHUNK_ROLE(true)
	if (lo >= hi || !runsHere) {
		return;
	}
	i64 cnt[1 << RADIX_BITS];
	for (int d = 0; d < (1 << RADIX_BITS); d++) { /* 32-ok: a digit, < 2^RADIX_BITS */
		cnt[d] = CAST(i64, LD64(hist, I64C(d) * items + w));
	}
	for (i64 i = lo; i < hi; i++) {
		KEY k;
		u64 e; /* the permutation entry */
		if (RADIX_READS_WORDS(pack)) {
			const u64 word = LD64(pin, i);
			k = CAST(KEY, word >> 32);
			e = word & 0xfffffffful;
		} else {
			k = radix_order(LDK(kin, i), kind, descending);
			e = RADIX_ENTRY(i);
		}
		const int d = CAST(int, (k >> CAST(KEY, shift)) & mask); /* 32-ok: a digit, < 2^RADIX_BITS */
		const i64 to = cnt[d];
		cnt[d] = to + I64C(1);
		if (RADIX_WRITES_WORDS(pack)) {
			ST64(pout, to, (CAST(u64, k) << 32) | e);
		} else {
			STK(kout, to, k ^ kxor);
			RADIX_PUT_ENTRY(to, e)
		}
	}
}

/* The chunked passes' roles (see RADIX_CHUNK_ROLE) from the first count's
 * OR and AND of each of the items chunks' keys: pass q runs where the
 * keys differ in its digit, and the first always, and the last where
 * last is 1. One work-item. */
INLINE void radix_aroles(RADIX_AROLES_PARAMS) {
	if (CAST(i64, GROUP_LINEAR_ID()) != I64C(0) || CAST(i64, LOCAL_ID()) != I64C(0)) {
		return;
	}
	u64 any = 0ul;
	u64 all = ~0ul;
	for (i64 w = I64C(0); w < items; w++) {
		any = any | LD64(roles, I64C(2) * w);
		all = all & LD64(roles, I64C(2) * w + I64C(1));
	}
	const u64 vary = any & ~all;
	const u64 mask = (1ul << RADIX_BITS) - 1ul;
	/* the passes that run, a bit each (passes <= 64: keys of 64 bits at
	 * most), and their number */
	u64 ran = 0ul;
	i64 runs = I64C(0);
	for (i64 q = I64C(0); q < passes; q++) {
		if (q == I64C(0) || (last != I64C(0) && q == passes - I64C(1)) ||
			((vary >> CAST(u64, q * I64C(RADIX_BITS))) & mask) != 0ul) {
			ran = ran | (1ul << CAST(u64, q));
			runs += I64C(1);
		}
	}
	i64 at = I64C(0);
	for (i64 q = I64C(0); q < passes; q++) {
		const bool run = ((ran >> CAST(u64, q)) & 1ul) != 0ul;
		ST64(roles, RADIX_CROLE_AT(items, q), run ? (RADIX_ROLE_RUNS | (CAST(u64, runs) << 16) | CAST(u64, at)) : 0ul);
		at += run ? I64C(1) : I64C(0);
	}
}

/* A tiled pass's keys of the lane into ks[0..RADIX_KPT) (where KEYS)
 * and their entries into es (where ENTS; KEYS and ENTS are constants),
 * all loads in flight at once: key j at position (base) + POS(j) where
 * VALID(j), else the tile's first key (never used: the ranking and
 * counting test VALID again), in loops that UNR unrolls (UNROLL, or
 * RADIX_WL_UNROLL); a packed word is the key's high half and the entry's
 * low half, one load for both. The pass's kind of input is tested once,
 * outside the loops, and nothing between the loads branches (RADV's
 * compiler waits for every load in flight where a branch ends: the loads
 * one under the other's test took a round trip each). RADIX_LOAD_KEYS
 * loads both; the ranking by ballots under knob RADIX_LATE the keys
 * first and the entries once the keys are ranked (RADIX_LATE_ENTRIES).
 * Where ordk (in scope: the sweep's first pass, which reads the caller's
 * keys of kind KIND_* kind and descending) the keys become their order
 * bits (radix_order) as they arrive. */
#define RADIX_LOAD_LANE(base, POS, VALID, UNR, KEYS, ENTS) \
	if (RADIX_READS_WORDS(pack)) { \
		RADIX_LANE_LOOP(base, POS, VALID, UNR, KEYS, ENTS, LD64(pin, i_), CAST(KEY, w_ >> 32), w_ & 0xfffffffful) \
	} else if (!(ENTS) || first != I64C(0)) { /* keys alone: one way whatever the entries */ \
		RADIX_LANE_LOOP(base, POS, VALID, UNR, KEYS, ENTS, 0ul, LDK(kin, i_), CAST(u64, i_)) \
	} else if (RADIX_READS_E32(pack)) { \
		RADIX_LANE_LOOP(base, POS, VALID, UNR, KEYS, ENTS, 0ul, LDK(kin, i_), CAST(u64, LD32(pin, i_))) \
	} else { \
		RADIX_LANE_LOOP(base, POS, VALID, UNR, KEYS, ENTS, 0ul, LDK(kin, i_), LD64(pin, i_)) \
	} \
	if ((KEYS) && ordk) { /* the sweep's first pass: order bits from the keys */ \
		UNR for (int j_ = 0; j_ < RADIX_KPT; j_++) { /* 32-ok: a key of the lane, < RADIX_KPT */ \
			ks[j_] = radix_order(ks[j_], kind, descending); \
		} \
	}
/* RADIX_LOAD_LANE's loop for one kind of input: WORD (a packed word at
 * position i_, or 0ul where the kind has none) is loaded once, then key
 * j_ is KEYV and its entry ENTV (expressions of i_ and w_). */
#define RADIX_LANE_LOOP(base, POS, VALID, UNR, KEYS, ENTS, WORD, KEYV, ENTV) \
	UNR for (int j_ = 0; j_ < RADIX_KPT; j_++) { /* 32-ok: a key of the lane, < RADIX_KPT */ \
		const i64 i_ = (base) + (VALID(j_) ? I64C(POS(j_)) : I64C(0)); \
		const u64 w_ = WORD; \
		if (KEYS) { \
			ks[j_] = KEYV; \
		} \
		if (ENTS) { \
			es[j_] = ENTV; \
		} \
	}
#define RADIX_LOAD_KEYS(base, POS, VALID, UNR) RADIX_LOAD_LANE(base, POS, VALID, UNR, true, true)

/* Tile t's digit counts in the scratch's first DIGITS words: each lane
 * takes RADIX_KPT consecutive keys and adds each run of equal digits among
 * them with one work-group atomic (a constant digit, common in the high
 * passes, costs a lane one atomic, not RADIX_KPT); counts do not depend on
 * the order the atomics land in. */
INLINE void radix_tcount(RADIX_TCOUNT_PARAMS) {
	const i64 tiles = RADIX_KPT > 0 ? cdiv64(n, max64(RADIX_TILE, I64C(1))) : I64C(0);
	const KEY mask = CAST(KEY, RADIX_DIGITS - 1);
	const int lid = CAST(int, LOCAL_ID()); /* 32-ok: local id */
	for (i64 t = GROUP_LINEAR_ID(); t < tiles; t += GROUP_TOTAL()) {
		const i64 base = t * RADIX_TILE;
		const i64 hi = min64(base + RADIX_TILE, n);
		LOCAL_BARRIER(); /* the previous tile's counts are out */
		for (int d = lid; d < RADIX_DIGITS; d += RADIX_LS) { /* 32-ok: a digit, < RADIX_DIGITS */
			sh[d] = 0u;
		}
		LOCAL_BARRIER();
		int run = -1; /* 32-ok: the digit of the lane's current run, -1: none */
		uint len = 0u; /* 32-ok: the run's length, <= RADIX_KPT */
		for (int j = 0; j < RADIX_KPT; j++) { /* 32-ok: a key of the lane, < RADIX_KPT */
			const i64 i = base + LOCAL_ID() * I64C(RADIX_KPT) + I64C(j);
			if (i < hi) {
				const int d = CAST(int, (radix_key(kin, pin, i, pack) >> CAST(KEY, shift)) & mask); /* 32-ok: a digit, < 2^RADIX_BITS */
				if (d != run) {
					if (len > 0u) {
						RADIX_SH_ADD(run, len);
					}
					run = d;
					len = 0u;
				}
				len += 1u;
			}
		}
		if (len > 0u) {
			RADIX_SH_ADD(run, len);
		}
		LOCAL_BARRIER();
		for (int d = lid; d < RADIX_DIGITS; d += RADIX_LS) { /* 32-ok: a digit, < RADIX_DIGITS */
			ST64(hist, I64C(d) * tiles + t, CAST(u64, sh[d]));
		}
	}
}

/* Puts key k and its entry e at slot r of the scratch tile (the entry in
 * RADIX_EW words: one where every entry is below 2^32). */
#define RADIX_SH_PUT(r, k, e) \
	RADIX_SH_PUTK(RADIX_KEYS_AT, r, k); \
	sh[RADIX_ENTS_AT + RADIX_EW * RADIX_SLOT(r)] = CAST(uint, (e) & 0xfffffffful); /* 32-ok: an entry's low half */ \
	if (RADIX_EW == 2) { \
		sh[RADIX_ENTS_AT + 2 * RADIX_SLOT(r) + 1] = CAST(uint, (e) >> 32); /* 32-ok: an entry's high half */ \
	}

/* Writes the ranked tile (count keys, in scratch) by digit runs: slot p_
 * of the tile, of digit d_, goes to position TO (an expression of d_ and
 * p_), lane by lane, so each digit's run is one contiguous store. */
#define RADIX_WRITE_TILE(count, TO) \
	for (int j_ = 0; j_ < RADIX_KPT; j_++) { /* 32-ok: a key of the lane, < RADIX_KPT */ \
		const int p_ = j_ * RADIX_LS + lid; /* 32-ok: a slot of the tile, < RADIX_TILE < 2^16 */ \
		if (p_ < (count)) { \
			const KEY k_ = RADIX_SH_GETK(RADIX_KEYS_AT, p_); \
			const u64 e_ = RADIX_SH_GETE(p_); \
			const int d_ = CAST(int, (k_ >> CAST(KEY, shift)) & mask); /* 32-ok: a digit, < 2^RADIX_BITS */ \
			const i64 to_ = TO; \
			if (RADIX_WRITES_WORDS(pack)) { \
				ST64(pout, to_, (CAST(u64, k_) << 32) | e_); \
			} else { \
				STK(kout, to_, k_ ^ kxor); \
				RADIX_PUT_ENTRY(to_, e_) \
			} \
		} \
	}

/* The pass's digit of the key at slot p of the ranked scratch tile. */
#define RADIX_DIGIT_AT(p) CAST(int, (RADIX_SH_GETK(RADIX_KEYS_AT, p) >> CAST(KEY, shift)) & mask) /* 32-ok: a digit, < 2^RADIX_BITS */

/* The entry at slot p of the scratch tile (its high half, where RADIX_EW
 * is 2, in the word after the low one; with one word that read stays on
 * the low word, in the scratch, and is dropped). */
#define RADIX_SH_GETE(p) (CAST(u64, sh[RADIX_ENTS_AT + RADIX_EW * RADIX_SLOT(p)]) | \
	(RADIX_EW == 2 ? CAST(u64, sh[RADIX_ENTS_AT + RADIX_EW * RADIX_SLOT(p) + RADIX_EW - 1]) << 32 : CAST(u64, 0)))

/* One round of a tile's stable ranking by a raking scan (see
 * radix_tile.h): the lane's keys ks[0..RADIX_KPT) with entries es, the
 * first nk of them valid, are the keys at slots lid * RADIX_KPT + j of the
 * tile in its order so far; the round's digit is NB bits at bit RS of the
 * pass's digit (bit shift + RS of the key: shifted in two steps, so a
 * round past the top of the key reads zeros). Each
 * lane counts its keys in its own column of packed counters, the group
 * scans the counters in word-major order (each lane sums a segment of
 * RADIX_WORDS words, the segment sums are scanned, each lane rescans its
 * segment), which gives every (digit, lane) the keys of smaller digits and
 * of the same digit in earlier lanes, the high halves after every low one;
 * then each lane places its keys at their ranks in scratch, in order,
 * taking and bumping its own counters. Two scratch scans' worth of work
 * where a per-lane Hillis-Steele scan of every word took RADIX_WORDS times
 * log2(LOCAL_SIZE) steps (16M uint32 keys with their permutation on the
 * H200, 4-bit digits: 2.38 ms OpenCL and 2.76 Vulkan, against 4.88 and
 * 3.68 with that scan). */
#define RADIX_RANK_ROUND(RS, NB) \
	{ \
		const KEY rmask_ = CAST(KEY, (1 << (NB)) - 1); \
		const int hs_ = (NB) - 1; /* 32-ok: the bit that picks a counter's half */ \
		LOCAL_BARRIER(); /* the scratch's readers are done */ \
		for (int q_ = 0; q_ < RADIX_WORDS; q_++) { /* 32-ok: a word row, < RADIX_WORDS */ \
			sh[RADIX_RW(q_ * RADIX_LS + lid)] = 0u; \
		} \
		UNROLL for (int j_ = 0; j_ < RADIX_KPT; j_++) { /* 32-ok: a key of the lane, < RADIX_KPT */ \
			if (j_ < nk) { \
				const int d_ = CAST(int, ((ks[j_] >> CAST(KEY, shift)) >> CAST(KEY, RS)) & rmask_); /* 32-ok: a round digit, < 2^NB */ \
				sh[RADIX_RW((d_ & (RADIX_WORDS - 1)) * RADIX_LS + lid)] += 1u << (CAST(uint, d_ >> hs_) * 16u); /* 32-ok: a digit's half, 0 or 1 */ \
			} \
		} \
		LOCAL_BARRIER(); \
		uint s_ = 0u; /* 32-ok: packed counts of a tile, < 2^16 each */ \
		for (int k_ = 0; k_ < RADIX_WORDS; k_++) { /* 32-ok: a word of the segment, < RADIX_WORDS */ \
			s_ += sh[RADIX_RW(lid * RADIX_WORDS + k_)]; \
		} \
		sh[RADIX_SEG_AT + lid] = s_; \
		for (int off_ = 1; off_ < RADIX_LS; off_ <<= 1) { /* 32-ok: a lane offset, < local size */ \
			LOCAL_BARRIER(); \
			const uint a_ = lid >= off_ ? sh[RADIX_SEG_AT + lid - off_] : 0u; /* 32-ok: packed counts, < 2^16 each */ \
			LOCAL_BARRIER(); \
			sh[RADIX_SEG_AT + lid] += a_; \
		} \
		LOCAL_BARRIER(); \
		uint run_ = lid > 0 ? sh[RADIX_SEG_AT + lid - 1] : 0u; /* 32-ok: packed counts, < 2^16 each */ \
		const uint low_ = sh[RADIX_SEG_AT + RADIX_LS - 1] & 0xffffu; /* 32-ok: the tile's keys of the low digits */ \
		for (int k_ = 0; k_ < RADIX_WORDS; k_++) { /* 32-ok: a word of the segment, < RADIX_WORDS */ \
			const uint v_ = sh[RADIX_RW(lid * RADIX_WORDS + k_)]; /* 32-ok: packed counts, < 2^16 each */ \
			sh[RADIX_RW(lid * RADIX_WORDS + k_)] = run_; \
			run_ += v_; \
		} \
		LOCAL_BARRIER(); \
		UNROLL for (int j_ = 0; j_ < RADIX_KPT; j_++) { /* 32-ok: a key of the lane, < RADIX_KPT */ \
			if (j_ < nk) { \
				const int d_ = CAST(int, ((ks[j_] >> CAST(KEY, shift)) >> CAST(KEY, RS)) & rmask_); /* 32-ok: a round digit, < 2^NB */ \
				const uint h_ = CAST(uint, d_ >> hs_); /* 32-ok: a digit's half, 0 or 1 */ \
				const int at_ = RADIX_RW((d_ & (RADIX_WORDS - 1)) * RADIX_LS + lid); /* 32-ok: a scratch word */ \
				const uint word_ = sh[at_]; /* 32-ok: packed counts, < 2^16 each */ \
				const int r_ = CAST(int, ((word_ >> (h_ * 16u)) & 0xffffu) + h_ * low_); /* 32-ok: a rank in the tile, < RADIX_TILE < 2^16 */ \
				sh[at_] = word_ + (1u << (h_ * 16u)); \
				RADIX_SH_PUT(r_, ks[j_], es[j_]); \
			} \
		} \
	}

/* Ranks the tile of cnt keys at base stably into scratch (slots
 * RADIX_KEYS_AT / RADIX_ENTS_AT, in digit order) in RADIX_ROUNDS rounds of
 * RADIX_RANK_ROUND (the second, for 8-bit digits, ranks the first's result
 * by the high bits); lane lid's keys are slots lid * RADIX_KPT + j of the
 * tile, loaded into ks and es. */
/* RADIX_RANK_TILE's key j of the lane: its slot, and whether the tile
 * has it (nk: the lane's keys) */
#define RADIX_RT_POS(j) (lid * RADIX_KPT + (j))
#define RADIX_RT_VALID(j) ((j) < nk)
#define RADIX_RANK_TILE(base, cnt) \
	{ \
		const int nk = clamp((cnt) - lid * RADIX_KPT, 0, RADIX_KPT); /* 32-ok: keys of the lane, <= RADIX_KPT */ \
		RADIX_LOAD_KEYS(base, RADIX_RT_POS, RADIX_RT_VALID, UNROLL) \
		RADIX_RANK_ROUND(0, RADIX_RB) \
		if (RADIX_ROUNDS > 1) { \
			LOCAL_BARRIER(); /* the first round's tile is in scratch */ \
			UNROLL for (int j = 0; j < RADIX_KPT; j++) { /* 32-ok: a key of the lane, < RADIX_KPT */ \
				if (j < nk) { \
					ks[j] = RADIX_SH_GETK(RADIX_KEYS_AT, lid * RADIX_KPT + j); \
					es[j] = RADIX_SH_GETE(lid * RADIX_KPT + j); \
				} \
			} \
			RADIX_RANK_ROUND(RADIX_RB, RADIX_BITS - RADIX_RB) \
		} \
	}

/* The ranking by subgroup ballots is the wrappers' that define
 * RADIX_SG_OK (Vulkan's SG=1 builds, NVIDIA's OpenCL) with RADIX_SG_ID,
 * RADIX_SG_LANE, RADIX_SG_SIZE and RADIX_SG_COUNT (the lane's subgroup,
 * its lane in it, the subgroup's size, the group's subgroups),
 * RADIX_SG_SYNC() (a subgroup barrier over work-group memory), and the
 * ballots: RADIX_SG_MASK (a ballot's type), RADIX_SG_BALLOT(p) (in
 * uniform control flow: a bit per lane of the subgroup whose p is true),
 * RADIX_SG_BELOW (the bits of the lanes below this one) and
 * RADIX_SG_BITS(m) (the bits set in ballot m). */
#ifndef RADIX_SG_OK
#define RADIX_SG_OK 0
#endif
/* the ranking's loops over a lane's keys: unrolled, so the keys, entries
 * and ranks stay in registers (a wrapper may leave them rolled) */
#ifndef RADIX_WL_UNROLL
#define RADIX_WL_UNROLL UNROLL
#endif
#if RADIX_SG_OK
/* Of the lanes with v true and digit d (in uniform control flow): pre
 * those in lower lanes, tot all of them with the lane itself, where its
 * own v is true. A ballot of v, then one per digit bit, each keeping the
 * lanes whose bit agrees with this lane's. */
#define RADIX_SG_MATCH(d, v, pre, tot) \
	{ \
		RADIX_SG_MASK m_ = RADIX_SG_BALLOT(v); \
		for (int b_ = 0; b_ < RADIX_BITS; b_++) { /* 32-ok: a digit bit */ \
			const bool t_ = (((d) >> b_) & 1) != 0; \
			const RADIX_SG_MASK bb_ = RADIX_SG_BALLOT(t_); \
			m_ &= t_ ? bb_ : ~bb_; \
		} \
		pre = RADIX_SG_BITS(m_ & RADIX_SG_BELOW); \
		tot = RADIX_SG_BITS(m_); \
	}

/* Whether the group ranks its tiles by subgroup ballots (uniform): the
 * plan asked for it (RADIX_SGS), and the group's subgroups are whole and
 * no more than the scratch has counters for. */
#define RADIX_WL_ON (RADIX_SGS > 0 && RADIX_BITS > 0 && RADIX_SG_COUNT <= RADIX_SGS && RADIX_SG_COUNT * RADIX_SG_SIZE == RADIX_LS)

/* Ranks the tile of cnt keys at base stably into scratch, as
 * RADIX_RANK_TILE does, in one round of warp-level multisplit (Onesweep's
 * ranking, after Ashkiani et al.): subgroup s takes the tile's slots
 * [s * S * RADIX_KPT, (s + 1) * S * RADIX_KPT) of its S lanes, a key a
 * lane at a time (slot (s * RADIX_KPT + j) * S + lane: consecutive lanes
 * load consecutive keys). The lane loads all its keys first, so their
 * loads are in flight at once: loaded between the ballots, which no
 * compiler moves a load across (NVIDIA's are volatile assembly), each
 * key waited a round trip to memory. For each of them RADIX_SG_MATCH
 * finds the lanes holding the same digit (a ballot a digit bit); the key's
 * rank among its subgroup's keys of that digit is the subgroup's count of
 * the digit so far plus its peers in lower lanes, and the peers' first
 * lane adds them to the count. Subgroups are in slot order and so are the
 * keys within one, so the ranking is stable. Then the lanes, a counter
 * word each in turn, turn the counts into each subgroup's start within
 * its digit's run, the words' totals into the runs' starts (two barriers:
 * sums of 8 words, then each word's prefix), which they write to each
 * digit's offset words as [start, end) (as the sweep wants them) and add
 * to every subgroup's counts; each key then lands at its digit's subgroup
 * start plus its rank. Five barriers where the raking rounds take about
 * 40. The words' totals and their sums of 8 use the tile's key and entry
 * slots, free until the keys are placed; the segment word (the sweep's
 * give-up flag) is cleared with the sums of 8 (cleared in a test of its
 * own after the last loop, PoCL 3.1 dropped that loop's stores, with
 * NVIDIA's path emulated). */
/* RADIX_RANK_TILE_WL's key j of the lane: its slot (subgroup-major, a
 * row of the subgroup's lanes per key), and whether the tile has it */
#define RADIX_WL_POS(j) ((sg_ * RADIX_KPT + (j)) * RADIX_SG_SIZE + sl_)
#define RADIX_WL_VALID(j) (RADIX_WL_POS(j) < (cnt))
#define RADIX_RANK_TILE_WL(base, cnt) \
	{ \
		const int sg_ = RADIX_SG_ID; /* 32-ok: the lane's subgroup, < RADIX_SGS */ \
		const int sl_ = RADIX_SG_LANE; /* 32-ok: the lane in its subgroup */ \
		const int cw_ = sg_ * RADIX_DW; /* 32-ok: the subgroup's first counter word */ \
		const int tw_ = RADIX_KEYS_AT; /* 32-ok: the scratch word of the counter words' totals */ \
		for (int w_ = lid; w_ < RADIX_SG_COUNT * RADIX_DW; w_ += RADIX_LS) { /* 32-ok: a counter word */ \
			sh[w_] = 0u; \
		} \
		RADIX_LOAD_LANE(base, RADIX_WL_POS, RADIX_WL_VALID, RADIX_WL_UNROLL, true, RADIX_LATE == 0) \
		LOCAL_BARRIER(); \
		RADIX_WL_UNROLL for (int j_ = 0; j_ < RADIX_KPT; j_++) { /* 32-ok: a key of the lane, < RADIX_KPT */ \
			const int p_ = (sg_ * RADIX_KPT + j_) * RADIX_SG_SIZE + sl_; /* 32-ok: a slot of the tile, < RADIX_TILE < 2^16 */ \
			const bool v_ = p_ < (cnt); \
			const int d_ = v_ ? CAST(int, (ks[j_] >> CAST(KEY, shift)) & mask) : 0; /* 32-ok: a digit, < 2^RADIX_BITS */ \
			uint pre_; /* 32-ok: the key's peers in lower lanes, < the subgroup's size */ \
			uint tot_; /* 32-ok: the key's peers and itself, <= the subgroup's size */ \
			RADIX_SG_MATCH(d_, v_, pre_, tot_); \
			const int at_ = cw_ + (d_ & (RADIX_DW - 1)); /* 32-ok: a counter word */ \
			const uint h_ = CAST(uint, d_ >> (RADIX_BITS - 1)) * 16u; /* 32-ok: the digit's half of the word */ \
			rl[j_] = CAST(int, ((sh[at_] >> h_) & 0xffffu) + pre_); /* 32-ok: a rank, < RADIX_TILE */ \
			RADIX_SG_SYNC(); /* the peers have read the count */ \
			if (v_ && pre_ == 0u) { \
				/* an atomic: the word's other half may be another digit's, counted by another lane now */ \
				RADIX_SH_ADD(at_, tot_ << h_); \
			} \
			RADIX_SG_SYNC(); /* the count is in for the next key */ \
		} \
		LOCAL_BARRIER(); \
		for (int w_ = lid; w_ < RADIX_DW; w_ += RADIX_LS) { /* 32-ok: a counter word */ \
			uint acc_ = 0u; /* 32-ok: packed counts of a tile, < 2^16 each */ \
			for (int s_ = 0; s_ < RADIX_SG_COUNT; s_++) { /* 32-ok: a subgroup */ \
				const uint c_ = sh[s_ * RADIX_DW + w_]; /* 32-ok: packed counts */ \
				sh[s_ * RADIX_DW + w_] = acc_; \
				acc_ += c_; \
			} \
			sh[tw_ + w_] = acc_; \
		} \
		LOCAL_BARRIER(); \
		for (int g_ = lid; g_ < ((RADIX_DW + 7) >> 3); g_ += RADIX_LS) { /* 32-ok: a sum of 8 words */ \
			uint a_ = 0u; /* 32-ok: packed counts */ \
			for (int w_ = g_ * 8; w_ < min(g_ * 8 + 8, RADIX_DW); w_++) { /* 32-ok: a counter word */ \
				a_ += sh[tw_ + w_]; \
			} \
			sh[tw_ + RADIX_DW + g_] = a_; \
			if (g_ == 0) { \
				sh[RADIX_SEG_AT] = 0u; \
			} \
		} \
		LOCAL_BARRIER(); \
		for (int w_ = lid; w_ < RADIX_DW; w_ += RADIX_LS) { /* 32-ok: a counter word */ \
			uint e_ = 0u; /* 32-ok: packed counts of the words before this one */ \
			uint all_ = 0u; /* 32-ok: packed counts of the tile */ \
			for (int g_ = 0; g_ < ((RADIX_DW + 7) >> 3); g_++) { /* 32-ok: a sum of 8 words */ \
				const uint a_ = sh[tw_ + RADIX_DW + g_]; /* 32-ok: packed counts */ \
				e_ += g_ < (w_ >> 3) ? a_ : 0u; \
				all_ += a_; \
			} \
			for (int u_ = w_ & ~7; u_ < w_; u_++) { /* 32-ok: a counter word */ \
				e_ += sh[tw_ + u_]; \
			} \
			const uint t_ = sh[tw_ + w_]; /* 32-ok: packed counts of the word's two digits */ \
			const uint lo_ = e_ & 0xffffu; /* 32-ok: digit w's run start, < 2^16 */ \
			const uint hi_ = (e_ >> 16) + (all_ & 0xffffu); /* 32-ok: digit w + DW's run start, < 2^16 */ \
			sh[RADIX_OFF_AT + 2 * w_] = lo_; \
			sh[RADIX_OFF_AT + 2 * w_ + 1] = lo_ + (t_ & 0xffffu); \
			sh[RADIX_OFF_AT + 2 * (w_ + RADIX_DW)] = hi_; \
			sh[RADIX_OFF_AT + 2 * (w_ + RADIX_DW) + 1] = hi_ + (t_ >> 16); \
			for (int s_ = 0; s_ < RADIX_SG_COUNT; s_++) { /* 32-ok: a subgroup */ \
				sh[s_ * RADIX_DW + w_] += lo_ | (hi_ << 16); \
			} \
		} \
		LOCAL_BARRIER(); \
		RADIX_WL_UNROLL for (int j_ = 0; j_ < RADIX_KPT; j_++) { /* 32-ok: a key of the lane, < RADIX_KPT */ \
			const int p_ = (sg_ * RADIX_KPT + j_) * RADIX_SG_SIZE + sl_; /* 32-ok: a slot of the tile, < RADIX_TILE < 2^16 */ \
			if (p_ < (cnt)) { \
				const int d_ = CAST(int, (ks[j_] >> CAST(KEY, shift)) & mask); /* 32-ok: a digit, < 2^RADIX_BITS */ \
				const uint h_ = CAST(uint, d_ >> (RADIX_BITS - 1)) * 16u; /* 32-ok: the digit's half of the word */ \
				const int r_ = CAST(int, (sh[cw_ + (d_ & (RADIX_DW - 1))] >> h_) & 0xffffu) + rl[j_]; /* 32-ok: a rank in the tile, < RADIX_TILE */ \
				if (RADIX_LATE != 0) { \
					RADIX_SH_PUTK(RADIX_KEYS_AT, r_, ks[j_]); \
					rl[j_] = r_; /* the key's slot, where RADIX_LATE_ENTRIES puts its entry */ \
				} else { \
					RADIX_SH_PUT(r_, ks[j_], es[j_]); \
				} \
			} \
		} \
	}
/* Knob RADIX_LATE, where the ballots rank (uniform): the ranking loads
 * the lane's keys alone and leaves each key's slot in the sorted tile in
 * rl; RADIX_LATE_ENTRIES then loads the entries (a packed word again, for
 * its low half: its first read left it in the cache), all in flight at
 * once, and puts each at its key's slot, before the barrier ahead of the
 * tile's writes. So the entries take no registers while the keys are
 * ranked (CUB's Onesweep loads a tile's values after its keys are out,
 * too), nor while the sweep's lanes poll in the look-back, which comes
 * first. What it costs is a round trip to memory a tile, after the tile's
 * counts are published. RADV's compiler (Navi 31, the ranking by ballots
 * alone: 256 x 8 keys) gave the 32-bit sweep 60 registers a lane where it
 * gave 72 with the entries loaded with the keys, the 64-bit one 84 where
 * 108. */
#define RADIX_LATE_ON (RADIX_LATE != 0 && RADIX_WL_ON)
#define RADIX_LATE_ENTRIES(base, cnt) \
	if (RADIX_LATE_ON) { \
		const int sg_ = RADIX_SG_ID; /* 32-ok: the lane's subgroup, < RADIX_SGS */ \
		const int sl_ = RADIX_SG_LANE; /* 32-ok: the lane in its subgroup */ \
		RADIX_LOAD_LANE(base, RADIX_WL_POS, RADIX_WL_VALID, RADIX_WL_UNROLL, false, true) \
		RADIX_WL_UNROLL for (int j_ = 0; j_ < RADIX_KPT; j_++) { /* 32-ok: a key of the lane, < RADIX_KPT */ \
			if (RADIX_WL_VALID(j_)) { \
				sh[RADIX_ENTS_AT + RADIX_EW * RADIX_SLOT(rl[j_])] = CAST(uint, es[j_] & 0xfffffffful); /* 32-ok: an entry's low half */ \
				if (RADIX_EW == 2) { \
					sh[RADIX_ENTS_AT + 2 * RADIX_SLOT(rl[j_]) + 1] = CAST(uint, es[j_] >> 32); /* 32-ok: an entry's high half */ \
				} \
			} \
		} \
	}
#else
#define RADIX_WL_ON false
#define RADIX_RANK_TILE_WL(base, cnt)
#define RADIX_LATE_ENTRIES(base, cnt)
#endif

/* After a ranking in the raking rounds (RADIX_RANK_TILE), each digit's
 * run in the ranked tile of cnt keys, as the ranking by ballots leaves
 * them: [start, end) in the digit's two offset words ([0, 0) for a digit
 * the tile lacks), and the segment word (the sweep's give-up flag)
 * cleared; ends after a barrier. */
#define RADIX_RUN_BOUNDS(cnt) \
	LOCAL_BARRIER(); /* the tile is ranked; the counters and segment sums are free */ \
	for (int d_ = lid; d_ < RADIX_DIGITS; d_ += RADIX_LS) { /* 32-ok: a digit, < RADIX_DIGITS */ \
		sh[RADIX_OFF_AT + 2 * d_] = 0u; \
		sh[RADIX_OFF_AT + 2 * d_ + 1] = 0u; \
	} \
	if (lid == 0) { \
		sh[RADIX_SEG_AT] = 0u; /* no lane has given up */ \
	} \
	LOCAL_BARRIER(); \
	for (int j_ = 0; j_ < RADIX_KPT; j_++) { /* 32-ok: a key of the lane, < RADIX_KPT */ \
		const int p_ = j_ * RADIX_LS + lid; /* 32-ok: a slot of the tile, < RADIX_TILE < 2^16 */ \
		if (p_ < (cnt)) { \
			const int d_ = RADIX_DIGIT_AT(p_); /* 32-ok: a digit, < 2^RADIX_BITS */ \
			if (p_ == 0 || RADIX_DIGIT_AT(p_ - 1) != d_) { \
				sh[RADIX_OFF_AT + 2 * d_] = CAST(uint, p_); /* 32-ok: a slot of the tile */ \
			} \
			if (p_ + 1 == (cnt) || RADIX_DIGIT_AT(p_ + 1) != d_) { \
				sh[RADIX_OFF_AT + 2 * d_ + 1] = CAST(uint, p_ + 1); /* 32-ok: a slot of the tile */ \
			} \
		} \
	} \
	LOCAL_BARRIER();

/* Ranks the tile of cnt keys at base into scratch, by subgroup ballots
 * where the group can (RADIX_WL_ON, uniform), else in the raking rounds,
 * and leaves each digit's run bounds [start, end) in its offset words and
 * the segment word cleared, all before a barrier (the ranking by ballots
 * writes the bounds before its last one). */
#define RADIX_RANK_RUNS(base, cnt) \
	if (RADIX_WL_ON) { \
		RADIX_RANK_TILE_WL(base, cnt) \
	} else { \
		RADIX_RANK_TILE(base, cnt) \
		RADIX_RUN_BOUNDS(cnt) \
		if (RADIX_LATE != 0) { \
			/* rl defined on this path too, after its own peak: a compiler \
			 * that builds both paths (RADV) kept registers for the \
			 * ballots' slots through the raking rounds (72 -> 84) */ \
			UNROLL for (int j_ = 0; j_ < RADIX_KPT; j_++) { /* 32-ok: a key of the lane, < RADIX_KPT */ \
				rl[j_] = 0; \
			} \
		} \
	}

/* Tile t's stable ranking in RADIX_ROUNDS rounds of RADIX_RANK_ROUND
 * (the second, for 8-bit digits, ranks the first's result by the high 4
 * bits), then each digit's run of the sorted tile goes out as one
 * contiguous store: the slot where a run starts records the run's global
 * offset less itself. */
INLINE void radix_tscatter(RADIX_TSCATTER_PARAMS) {
	const i64 tiles = RADIX_KPT > 0 ? cdiv64(n, max64(RADIX_TILE, I64C(1))) : I64C(0);
	const KEY mask = CAST(KEY, RADIX_DIGITS - 1);
	const int lid = CAST(int, LOCAL_ID()); /* 32-ok: local id */
	KEY ks[RADIX_KPT1];
	u64 es[RADIX_KPT1];
	int rl[RADIX_KPT1]; /* 32-ok: by subgroups: a key's rank among its subgroup's keys of its digit, < RADIX_TILE < 2^16 */
	const bool ordk = false; /* order bits in, order bits out (radix_prep made them) */
	const KEY kxor = CAST(KEY, 0);
	const i64 kind = I64C(KIND_UNSIGNED);
	const i64 descending = I64C(0);
	for (i64 t = GROUP_LINEAR_ID(); t < tiles; t += GROUP_TOTAL()) {
		const i64 base = t * RADIX_TILE;
		const int cnt = CAST(int, min64(RADIX_TILE, n - base)); /* 32-ok: a tile size, <= RADIX_TILE < 2^16 */
		RADIX_RANK_RUNS(base, cnt)
		/* each digit's run: its global offset less its start in the tile */
		for (int d = lid; d < RADIX_DIGITS; d += RADIX_LS) { /* 32-ok: a digit, < RADIX_DIGITS */
			const uint start = sh[RADIX_OFF_AT + 2 * d]; /* 32-ok: a slot of the tile */
			if (sh[RADIX_OFF_AT + 2 * d + 1] > start) {
				const i64 off = CAST(i64, LD64(hist, I64C(d) * tiles + t)) - CAST(i64, start);
				sh[RADIX_OFF_AT + 2 * d] = CAST(uint, CAST(u64, off) & 0xfffffffful); /* 32-ok: one 32-bit half of an offset */
				sh[RADIX_OFF_AT + 2 * d + 1] = CAST(uint, CAST(u64, off) >> 32); /* 32-ok: one 32-bit half of an offset */
			}
		}
		RADIX_LATE_ENTRIES(base, cnt)
		LOCAL_BARRIER();
		RADIX_WRITE_TILE(cnt, CAST(i64, CAST(u64, sh[RADIX_OFF_AT + 2 * d_]) | (CAST(u64, sh[RADIX_OFF_AT + 2 * d_ + 1]) << 32)) + I64C(p_))
	}
}

/* Onesweep (knob RADIX_SWEEP = 1, GPUs; after Adinets and Merrill's
 * single-pass radix sort): every pass's digit counts come from one read of
 * the keys (radix_thist), scanned once on the host's queue, and a pass is
 * one launch (radix_sweep) in which each group ranks its tile as
 * radix_tscatter does, publishes the tile's count of each digit, looks back
 * over the earlier tiles for the keys of that digit before it (decoupled
 * look-back), publishes its inclusive count and writes the tile by digit
 * runs. A pass reads its input and writes its output once, where the count
 * pass read the input a second time and the histogram went through a scan.
 *
 * The published values are 64-bit words of status, each carrying its own
 * tag in its top 16 bits (2*pass+1: a tile's count of the digit; 2*pass+2:
 * the digit's inclusive count up to and with the tile; anything else: not
 * there yet), so no fence has to order a value before a flag, and the
 * buffer is zeroed once per sort, not per pass. Word t*DIGITS + d is
 * tile t's for digit d; word tiles*DIGITS + t marks tile t written.
 *
 * Like the chained scan (scan_body.h) it cannot deadlock: a tile whose
 * lane waits more than RADIX_SPIN rounds of polls (over all the lane's
 * digits) for an earlier tile's count
 * (whose group the device may not have started: neither OpenCL nor Vulkan
 * promises forward progress between work-groups) leaves its tile unwritten,
 * and the fixup launch (fix = 1) ranks and writes the tiles without a done
 * mark, looking back over final words (RADIX_SPIN = -1 gives every tile
 * up, a test of the fixup). Counts are integers, so whichever way a carry
 * is found it is the same. */

/* The wrappers define RADIX_WLD(w, i) and RADIX_WST(w, i, v) (a 64-bit
 * status word, read anew every time) and RADIX_GADD32(p, i, v) (a global
 * 32-bit atomic add). */
#define RADIX_WTAG(w) ((w) >> 48)
#define RADIX_WVAL(w) ((w) & 0xfffffffffffful)
/* the look-back's window: earlier tiles a lane reads per round trip */
#define RADIX_LBW 8

/* Adds v (below 2^32) to the 64-bit count at word i of hist, as two
 * 32-bit halves: the low half's atomic add, and a carry into the high
 * half where it wrapped (the sum is final once every add has landed). */
void radix_hist_add(BPTR hist, i64 i, uint v) { /* 32-ok: a group's count since its last flush, < 2^31 */
	const uint old = RADIX_GADD32(hist, I64C(2) * i, v); /* 32-ok: the low half of a count */
	if (old + v < old) {
		RADIX_GADD32(hist, I64C(2) * i + I64C(1), 1u);
	}
}

/* hist[(from+q)*DIGITS + d] += the keys of kin whose digit of pass from+q
 * is d (of their order bits, for keys of kind KIND_* kind and descending:
 * the sweep's first pass makes them as it reads, radix_prep does not run),
 * for q < passes: each group counts its tiles' keys in scratch
 * (passes*DIGITS words, which the host keeps within the scratch) with
 * work-group atomics, and adds its counts to hist when it is done or has
 * counted 2^30 keys. */
INLINE void radix_thist(RADIX_THIST_PARAMS) {
	const i64 tiles = RADIX_KPT > 0 ? cdiv64(n, max64(RADIX_TILE, I64C(1))) : I64C(0);
	const KEY mask = CAST(KEY, RADIX_DIGITS - 1);
	const int lid = CAST(int, LOCAL_ID()); /* 32-ok: local id */
	const int words = CAST(int, passes) * RADIX_DIGITS; /* 32-ok: the counts, within the scratch (host-checked) */
	const bool ordk = kind != I64C(KIND_UNSIGNED) || descending != I64C(0);
	for (int d = lid; d < words; d += RADIX_LS) { /* 32-ok: a count's word */
		sh[d] = 0u;
	}
	i64 held = I64C(0); /* keys counted in scratch since the last flush */
	LOCAL_BARRIER(); /* zeroed */
	/* no barrier between tiles (the scratch's counts only grow until a
	 * flush), so a subgroup loads its next tile's keys while the others
	 * still count theirs, as CUB's Onesweep histogram does */
	for (i64 t = GROUP_LINEAR_ID(); t < tiles; t += GROUP_TOTAL()) {
		const i64 base = t * RADIX_TILE;
		const i64 hi = min64(base + RADIX_TILE, n);
		/* the lane's keys loaded first, all in flight at once (a load
		 * between the work-group atomics, which compilers keep in order
		 * with it, waited a round trip to memory a key) */
		KEY ks[RADIX_KPT1];
		/* no branch on the lane's position between the loads: a key past
		 * the tile loads its first and is not counted */
		UNROLL for (int j = 0; j < RADIX_KPT; j++) { /* 32-ok: a key of the lane, < RADIX_KPT */
			const i64 i = base + I64C(j * RADIX_LS + lid);
			ks[j] = radix_key(kin, kin, i < hi ? i : base, pack);
		}
		if (ordk) {
			UNROLL for (int j = 0; j < RADIX_KPT; j++) { /* 32-ok: a key of the lane, < RADIX_KPT */
				ks[j] = radix_order(ks[j], kind, descending);
			}
		}
		/* where a pass's digit is one for all the lane's keys (the top
		 * bytes of small integers), one work-group atomic adds them all,
		 * not RADIX_KPT on one scratch word, which the lanes of a
		 * subgroup would take in turn; else one a key */
		KEY kor = CAST(KEY, 0);
		KEY kand = ~CAST(KEY, 0);
		uint valid = 0u; /* 32-ok: the lane's keys in the tile, <= RADIX_KPT */
		UNROLL for (int j = 0; j < RADIX_KPT; j++) { /* 32-ok: a key of the lane, < RADIX_KPT */
			if (base + I64C(j * RADIX_LS + lid) < hi) {
				kor = kor | ks[j];
				kand = kand & ks[j];
				valid += 1u;
			}
		}
		for (int q = 0; q < CAST(int, passes); q++) { /* 32-ok: a pass, < passes */
			const KEY at = CAST(KEY, (CAST(int, from) + q) * RADIX_BITS); /* 32-ok: a digit's lowest bit, < 64 */
			if ((((kor ^ kand) >> at) & mask) == CAST(KEY, 0)) {
				if (valid != 0u) {
					RADIX_SH_ADD(q * RADIX_DIGITS + CAST(int, (kand >> at) & mask), valid); /* 32-ok: a digit, < 2^RADIX_BITS */
				}
			} else {
				UNROLL for (int j = 0; j < RADIX_KPT; j++) { /* 32-ok: a key of the lane, < RADIX_KPT */
					if (CAST(uint, j) < valid) { /* 32-ok: the lane's keys in the tile come first */
						RADIX_SH_ADD(q * RADIX_DIGITS + CAST(int, (ks[j] >> at) & mask), 1u); /* 32-ok: a digit, < 2^RADIX_BITS */
					}
				}
			}
		}
		held += RADIX_TILE;
		if (held >= I64C(1) << 30 || t + GROUP_TOTAL() >= tiles) { /* uniform */
			LOCAL_BARRIER(); /* every lane's counts are in */
			for (int d = lid; d < words; d += RADIX_LS) { /* 32-ok: a count's word */
				const uint c = sh[d]; /* 32-ok: keys since the last flush, < 2^31 */
				if (c != 0u) {
					radix_hist_add(hist, from * I64C(RADIX_DIGITS) + I64C(d), c);
					sh[d] = 0u;
				}
			}
			held = I64C(0);
			LOCAL_BARRIER(); /* zeroed before the next tile's counts */
		}
	}
}

/* Tile t of a sweep pass (see above): fix = 0 the pass's (publish, look
 * back at most RADIX_SPIN rounds), fix = 1 the fixup's (a tile without
 * its done mark, looking back without bound, publishing nothing). Every
 * lane reaches every barrier: the lanes take the failure from one scratch
 * word. The scratch's segment word (free after the ranking) holds
 * it; each digit's pair of offset words first hold its run's start and
 * end in the sorted tile, then its global offset less its start. */
INLINE void radix_sweep_tile(BPTR kin, BPTR kout, BPTR pin, BPTR pout, BPTR hist, BPTR status, i64 n, i64 shift, i64 pass,
	i64 fix, i64 first, i64 pack, bool ordk, i64 kind, i64 descending, KEY kxor, i64 tiles, i64 t RADIX_SCRATCH_PARAM) {
	KEY ks[RADIX_KPT1];
	u64 es[RADIX_KPT1];
	int rl[RADIX_KPT1]; /* 32-ok: by subgroups: a key's rank among its subgroup's keys of its digit, < RADIX_TILE < 2^16 */
	const KEY mask = CAST(KEY, RADIX_DIGITS - 1);
	const int lid = CAST(int, LOCAL_ID()); /* 32-ok: local id */
	const u64 aggTag = CAST(u64, I64C(2) * pass + I64C(1));
	const u64 inclTag = aggTag + 1ul;
	const i64 base = t * RADIX_TILE;
	const int cnt = CAST(int, min64(RADIX_TILE, n - base)); /* 32-ok: a tile size, <= RADIX_TILE < 2^16 */
	RADIX_RANK_RUNS(base, cnt) /* the look-back below reads the runs and writes its own digits' words */
	/* publish the tile's counts, then look back, a lane per digit */
	for (int d = lid; d < RADIX_DIGITS; d += RADIX_LS) { /* 32-ok: a digit, < RADIX_DIGITS */
		if (fix == I64C(0)) {
			const u64 c = CAST(u64, sh[RADIX_OFF_AT + 2 * d + 1] - sh[RADIX_OFF_AT + 2 * d]);
			RADIX_WST(status, t * I64C(RADIX_DIGITS) + I64C(d), (aggTag << 48) | c);
		}
	}
	i64 polls = I64C(0); /* the lane's rounds that met a word not there yet, over all its digits */
	const i64 spin = fix == I64C(0) ? I64C(RADIX_SPIN) : I64C(-2); /* -2: without bound (the fixup) */
	for (int d = lid; d < RADIX_DIGITS; d += RADIX_LS) { /* 32-ok: a digit, < RADIX_DIGITS */
		const uint start = sh[RADIX_OFF_AT + 2 * d]; /* 32-ok: a slot of the tile */
		const uint end = sh[RADIX_OFF_AT + 2 * d + 1]; /* 32-ok: a slot of the tile */
		/* the digit's start in the pass, read before the look-back (no
		 * round trip after it) */
		const i64 dstart = CAST(i64, LD64(hist, pass * I64C(RADIX_DIGITS) + I64C(d))) - pass * n;
		i64 k = t - I64C(1); /* the next earlier tile to look at */
		u64 before = 0ul; /* keys of digit d in tiles k+1 .. t-1 */
		int state = spin == I64C(-1) ? 2 : 0; /* 32-ok: 0 looking, 1 found, 2 given up (at once: a test of the fixup) */
		while (state == 0) {
			/* the window's words read at once, then taken in order up to
			 * the first inclusive count or missing word (both loops
			 * unrolled, so the window stays in registers: a loop that
			 * stopped at a run-time slot put it in the lane's stack) */
			u64 wv[RADIX_LBW];
			UNROLL for (int q = 0; q < RADIX_LBW; q++) { /* 32-ok: a window slot, < RADIX_LBW */
				/* before the first tile: an inclusive count of 0 */
				wv[q] = k - I64C(q) >= I64C(0) ? RADIX_WLD(status, (k - I64C(q)) * I64C(RADIX_DIGITS) + I64C(d)) : (inclTag << 48);
			}
			bool stop = false;
			bool missing = false; /* stopped at a word not there yet: look at tile k again */
			UNROLL for (int q = 0; q < RADIX_LBW; q++) { /* 32-ok: a window slot, < RADIX_LBW */
				const u64 tag = RADIX_WTAG(wv[q]);
				if (!stop && (tag == inclTag || tag == aggTag)) {
					before += RADIX_WVAL(wv[q]);
					stop = tag == inclTag;
					k -= tag == aggTag ? I64C(1) : I64C(0);
				} else {
					missing = missing || !stop;
					stop = true;
				}
			}
			if (stop && !missing) {
				state = 1;
			} else if (missing && spin >= I64C(0) && ++polls > spin) {
				state = 2;
			}
		}
		if (state == 2) {
			sh[RADIX_SEG_AT] = 1u;
		} else {
			if (fix == I64C(0)) {
				RADIX_WST(status, t * I64C(RADIX_DIGITS) + I64C(d), (inclTag << 48) | (before + CAST(u64, end - start)));
			}
			const i64 off = dstart + CAST(i64, before) - CAST(i64, start);
			sh[RADIX_OFF_AT + 2 * d] = CAST(uint, CAST(u64, off) & 0xfffffffful); /* 32-ok: one 32-bit half of an offset */
			sh[RADIX_OFF_AT + 2 * d + 1] = CAST(uint, CAST(u64, off) >> 32); /* 32-ok: one 32-bit half of an offset */
		}
	}
	RADIX_LATE_ENTRIES(base, cnt) /* after the look-back: no lane holds them while it polls */
	LOCAL_BARRIER();
	if (sh[RADIX_SEG_AT] == 0u) { /* uniform */
		RADIX_WRITE_TILE(cnt, CAST(i64, CAST(u64, sh[RADIX_OFF_AT + 2 * d_]) | (CAST(u64, sh[RADIX_OFF_AT + 2 * d_ + 1]) << 32)) + I64C(p_))
		if (lid == 0 && fix == I64C(0)) {
			RADIX_WST(status, tiles * I64C(RADIX_DIGITS) + t, inclTag << 48);
		}
	}
}

/* The sweep's passes skip those whose digit is the same for every key
 * (knob RADIX_SKIP; after Merrill's early exit, whose passes found their
 * buffers on the device): such a pass moves every key to where it is. A
 * pass's role, written by radix_roles once the counts are scanned, is
 * RADIX_ROLE_RUNS | (runs << 16) | at, where the pass runs, as pass at of
 * the runs that do (at least one: the first pass where none would), and 0
 * where it is skipped. A running pass takes its buffers and packing from
 * that place: pass at of runs reads the caller's keys and entries where
 * at is 0, else the buffers pass at-1 wrote, and writes ka and pa where
 * runs-1-at is even, else kb and pb, so the last one writes ka and pa;
 * it is first and last as the host would have made it for a sort of runs
 * passes (radixPack). The roles sit after the status's tile words. A
 * skipping sort reads its pass's role before its keys: a round trip to
 * memory a tile (the same word for every group, so a cached one). */
#define RADIX_ROLE_AT(tiles, pass) ((I64C(RADIX_DIGITS) + I64C(1)) * (tiles) + (pass))

INLINE void radix_sweep(RADIX_SWEEP_PARAMS) {
	const i64 tiles = RADIX_KPT > 0 ? cdiv64(n, max64(RADIX_TILE, I64C(1))) : I64C(0);
	const u64 inclTag = CAST(u64, I64C(2) * pass + I64C(2));
	const i64 shift = pass * I64C(RADIX_BITS);
	/* without RADIX_SKIP every pass runs as the host laid them out, and
	 * no round trip precedes the keys' loads */
	const u64 role = RADIX_SKIP == 0 ? RADIX_ROLE_RUNS | (CAST(u64, passes) << 16) | CAST(u64, pass)
		: (tiles > I64C(0) ? LD64(status, RADIX_ROLE_AT(tiles, pass)) : 0ul);
	RADIX_ROLE_PLACE(role) /* (runs > at where the pass runs) */
	const i64 firstAt = at == I64C(0) ? first : I64C(0);
	const i64 pack = radix_pack_of(carry, at, runs);
	const bool ordk = at == I64C(0) && carry != I64C(CARRY_WORDS) && (kind != I64C(KIND_UNSIGNED) || descending != I64C(0));
	/* the fixup skips the tiles the pass wrote (final marks, read alike
	 * by every lane) in loops without barriers, so the loop with them
	 * only runs longer or shorter; a test around the tile's work, or an
	 * early return in it, PoCL 3.1 miscompiles where the local size is
	 * below 8 (so a skipped pass starts past the last tile) */
	i64 t = (role & RADIX_ROLE_RUNS) != 0ul ? GROUP_LINEAR_ID() : tiles;
	while (fix != I64C(0) && t < tiles && RADIX_WTAG(RADIX_WLD(status, tiles * I64C(RADIX_DIGITS) + t)) == inclTag) {
		t += GROUP_TOTAL();
	}
	while (t < tiles) {
		radix_sweep_tile(kin, kout, pin, pout, hist, status, n, shift, pass, fix, firstAt, pack, ordk, kind, descending, kxor, tiles, t RADIX_SCRATCH_ARG);
		t += GROUP_TOTAL();
		while (fix != I64C(0) && t < tiles && RADIX_WTAG(RADIX_WLD(status, tiles * I64C(RADIX_DIGITS) + t)) == inclTag) {
			t += GROUP_TOTAL();
		}
	}
}

/* Each sweep pass's role (see radix_sweep) from the scanned counts: a pass
 * is skipped where one digit holds all n keys (n >= 1: at most one digit
 * of a pass can), unless knob RADIX_SKIP is 0 or every pass would be, in
 * which case the first runs alone. One group: its lanes mark the passes in
 * scratch, then lane 0 numbers the ones that run. */
INLINE void radix_roles(RADIX_ROLES_PARAMS) {
	const i64 tiles = RADIX_KPT > 0 ? cdiv64(n, max64(RADIX_TILE, I64C(1))) : I64C(0);
	const int lid = CAST(int, LOCAL_ID()); /* 32-ok: local id */
	const int np = CAST(int, passes); /* 32-ok: the sort's passes, at most 64 */
	for (int q = lid; q < np; q += RADIX_LS) { /* 32-ok: a pass */
		sh[q] = 0u;
	}
	LOCAL_BARRIER();
	if (RADIX_SKIP != 0) {
		const i64 words = passes * I64C(RADIX_DIGITS);
		for (i64 w = CAST(i64, lid); w < words; w += I64C(RADIX_LS)) {
			/* the flat scan: pass q's digit d starts at word q*DIGITS + d,
			 * less q*n, and the last digit of the last pass ends at
			 * passes*n */
			const u64 next = w + I64C(1) < words ? LD64(hist, w + I64C(1)) : CAST(u64, passes * n);
			if (next - LD64(hist, w) == CAST(u64, n)) {
				sh[CAST(int, w >> RADIX_BITS)] = 1u; /* 32-ok: a pass */
			}
		}
	}
	LOCAL_BARRIER();
	if (lid == 0) {
		int runs = 0; /* 32-ok: passes */
		for (int q = 0; q < np; q++) { /* 32-ok: a pass */
			runs += sh[q] == 0u ? 1 : 0;
		}
		const u64 all = CAST(u64, max(runs, 1)) << 16;
		int at = 0; /* 32-ok: a pass */
		for (int q = 0; q < np; q++) { /* 32-ok: a pass */
			u64 role = 0ul;
			if (sh[q] == 0u || (runs == 0 && q == 0)) {
				role = RADIX_ROLE_RUNS | all | CAST(u64, at);
				at++;
			}
			if (tiles > I64C(0)) { /* (the tiled plans; the others have no roles) */
				ST64(status, RADIX_ROLE_AT(tiles, I64C(q)), role);
			}
		}
	}
}

#endif
