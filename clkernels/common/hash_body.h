/* hash_body.h: a hash table of 64-bit keys with open addressing and linear
 * probing, shared by clkernels/hash.cl and shaders/hash.comp (entry points,
 * knobs and the HT_* codes declared in host/kernels: gen/hash.h). Wrappers
 * define CAS64(p, i, cmp, val) (64-bit compare-and-swap on word i of a
 * BPTR, returning the old word) and ADD64(p, i, v) (64-bit atomic add).
 *
 * The table is 2*(slots+1) 64-bit words: slot s is the pair (key, value)
 * at words 2s and 2s+1, for s in [0, slots) with slots a power of two, plus
 * slot `slots`, the one place of the key HT_EMPTY (all ones, the marker of
 * a free slot): its key word is HT_EMPTY while that key is absent and 0
 * once present. Every word starts as all ones. A value word holds the
 * key's dense id (>= 0 as int64); while an insert is running it may hold
 * HT_CLAIM | i instead, i being the smallest input position of that key
 * among the keys new to the table in this insert, and all ones (HT_NOVAL)
 * before that.
 *
 * meta: 64-bit word HT_META_COUNT counts the keys in the table (claimed
 * slots, added once per work-item); 32-bit word HT_META_FULL is the "full"
 * flag, 32-bit word HT_META_MORE the "more" flag (some item ran out of this
 * launch's probe budget).
 *
 * Each entry runs over i in [0, n):
 *   hash_insert  inserts keys[i]: res[i] = its slot, and the value word
 *                takes the atomic min of HT_CLAIM | i when the key is new
 *   hash_lookup  res[i] = the value of keys[i], or -1 when absent
 *   hash_mark    aux[i] = 1 where input i is the first occurrence of a key
 *                new to the table (its slot res[i] holds HT_CLAIM | i),
 *                else 0
 *   hash_commit  aux is the exclusive scan of hash_mark's flags: the first
 *                occurrence i of a new key stores the dense id base + aux[i]
 *   hash_ids     aux[i] = the dense id in slot res[i]
 * and, for Unique (a table of counts, not ids):
 *   hash_count   inserts keys[i] as hash_insert does, but adds 1 to the
 *                value word of its slot (from all ones: the key's count
 *                less one)
 *   hash_gather  the held slots' keys and slots into keys and held: each
 *                work-group counts a tile's held slots and claims a run of
 *                that many below the table's key count (one atomic
 *                subtraction from meta's HT_META_COUNT, which ends at 0),
 *                and its lanes write theirs in slot order; the runs land
 *                in whatever order the groups claim them (Unique sorts the
 *                keys after)
 *   hash_rank    perm sorts keys: values[i] = the key of slot
 *                s = held[perm[i]], counts[i] = its count, and its value
 *                word becomes i (hash_ids then reads every input's rank)
 * so dense ids follow the order of first occurrence in the input, whatever
 * order the device inserts in. (In hash_commit other occurrences may read a
 * value word while its first occurrence writes it: they compare it with
 * their own claim, which neither the old nor the new value equals.)
 *
 * Inserts and lookups load the first probe of a batch of HT_BATCH keys up
 * front, so that the cache misses overlap; a stale load of a free slot is
 * harmless, since slots only go from free to a key and the compare-and-
 * swap returns what is there.
 *
 * Probing is bounded twice. A key probes at most max_probes slots: the
 * host passes min(slots, capacity + 1), since while the table holds at most
 * `capacity` keys no run of occupied slots is longer, so a key that gets
 * further proves the table over capacity and sets the full flag. And each
 * work-item spends at most `budget` probes (and compare-and-swap retries)
 * per launch, for drivers that stop long loops: an item that runs out
 * stores -2 - (probes done) in res[i], sets the more flag and continues
 * from there at the next launch (step > 0 skips finished items: res[i] >= 0
 * for inserts, >= -1 for lookups). An insert also stops early, setting the
 * full flag, once the table's key count exceeds `capacity`. */
#ifndef ACCEL_HASH_BODY_H
#define ACCEL_HASH_BODY_H

#include "elementwise.h"
#include "hash_mix.h"

/* Keys a work-item probes at once: 8 on the CPU plans, whose compilers
 * keep them all in flight (PoCL's lookup8M 219-249 ms, 279-285 at 4);
 * 4 on the GPU plans, their ITEMS (8 took RADV's lookup from 48 to 72
 * registers). In GLSL a specialization-constant expression (CONTIG):
 * the loops over it carry the Unroll hint (portable.h), which the
 * driver takes once the constant is known. */
#define HT_BATCH (CONTIG == 1 ? 8 : 4)

/* Element i of a pass over an insert's slots (ht_slot_pass): s its slot
 * (res[i], in the table), v the slot's value word, a aux[i] (commit's
 * exclusive scan; loaded only by commit). */
void ht_slot_op(BPTR table, BPTR aux, i64 i, i64 s, u64 v, u64 a, i64 base, int op) { /* 32-ok: an op code, 0..2 */
	const u64 mine = HT_CLAIM | CAST(u64, i);
	if (op == 0) {
		ST64(aux, i, v == mine ? CAST(u64, 1) : CAST(u64, 0));
	} else if (op == 1) {
		if (v == mine) {
			ST64(table, I64C(2) * s + I64C(1), CAST(u64, base) + a);
		}
	} else {
		ST64(aux, i, v);
	}
}

/* The passes over an insert's slots; op is a literal at each entry: 0
 * mark, 1 commit, 2 ids. The CPU plans' (CONTIG 1) are plain loops that
 * vectorize. The GPU plans' take HT_BATCH elements at a time: their
 * slots (and commit's scan) loaded first, then the slots' value words,
 * two round trips a batch where each element's two loads came one after
 * the other, and the next element's after them (RADV: 8 round trips for
 * a work-item's 4 elements). A batch's values enter at its back and
 * leave from its front, so the arrays are indexed at constant slots only
 * and stay in registers where a compiler leaves the loops rolled (see
 * ht_probe). */
void ht_slot_pass(BPTR table, BPTR res, BPTR aux, i64 n, i64 slots, i64 base, int op) { /* 32-ok: an op code, 0..2 */
	if (CONTIG == 1) {
		EW_FOR(n, i)
			const i64 s = CAST(i64, LD64(res, i));
			if (s < I64C(0) || s > slots) {
				continue; /* never after a finished insert; no stray access if it were */
			}
			const u64 v = LD64(table, I64C(2) * s + I64C(1));
			/* commit's scan read only where the element commits */
			const bool commits = op == 1 && v == (HT_CLAIM | CAST(u64, i));
			ht_slot_op(table, aux, i, s, v, commits ? LD64(aux, i) : CAST(u64, 0), base, op);
		EW_END
		return;
	}
	const i64 tiles = ew_tiles(n);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 j0 = I64C(0); j0 < I64C(ITEMS); j0 += I64C(HT_BATCH)) {
			i64 sb[HT_BATCH]; /* the slots (-1: past the tile or n, or out of the table) */
			u64 ab[HT_BATCH]; /* commit's scan */
			u64 vb[HT_BATCH]; /* the value words */
			UNROLL for (int b = 0; b < HT_BATCH; b++) { /* 32-ok: a batch slot, < HT_BATCH */
				const i64 i = ew_index(tile, j0 + I64C(b));
				const bool live = j0 + I64C(b) < I64C(ITEMS) && i < n;
				const i64 s = CAST(i64, LD64(res, live ? i : I64C(0)));
				const u64 a = op == 1 ? LD64(aux, live ? i : I64C(0)) : CAST(u64, 0);
				UNROLL for (int c = 0; c < HT_BATCH - 1; c++) { /* 32-ok: a batch slot, < HT_BATCH */
					sb[c] = sb[c + 1];
					ab[c] = ab[c + 1];
				}
				/* never out of the table after a finished insert; no stray access if it were */
				sb[HT_BATCH - 1] = live && s >= I64C(0) && s <= slots ? s : I64C(-1);
				ab[HT_BATCH - 1] = a;
			}
			UNROLL for (int b = 0; b < HT_BATCH; b++) { /* 32-ok: a batch slot, < HT_BATCH */
				const i64 s = sb[0];
				const u64 v = LD64(table, I64C(2) * max64(s, I64C(0)) + I64C(1));
				UNROLL for (int c = 0; c < HT_BATCH - 1; c++) { /* 32-ok: a batch slot, < HT_BATCH */
					sb[c] = sb[c + 1];
					vb[c] = vb[c + 1];
				}
				sb[HT_BATCH - 1] = s; /* the slots come round again */
				vb[HT_BATCH - 1] = v;
			}
			UNROLL for (int b = 0; b < HT_BATCH; b++) { /* 32-ok: a batch slot, < HT_BATCH */
				const i64 s = sb[0];
				const u64 v = vb[0];
				const u64 a = ab[0];
				UNROLL for (int c = 0; c < HT_BATCH - 1; c++) { /* 32-ok: a batch slot, < HT_BATCH */
					sb[c] = sb[c + 1];
					vb[c] = vb[c + 1];
					ab[c] = ab[c + 1];
				}
				if (s >= I64C(0)) {
					ht_slot_op(table, aux, ew_index(tile, j0 + I64C(b)), s, v, a, base, op);
				}
			}
		}
	}
}

INLINE void hash_mark(HASH_MARK_PARAMS) {
	ht_slot_pass(table, res, aux, n, slots, I64C(0), 0);
}

INLINE void hash_commit(HASH_COMMIT_PARAMS) {
	ht_slot_pass(table, res, aux, n, slots, base, 1);
}

INLINE void hash_ids(HASH_IDS_PARAMS) {
	ht_slot_pass(table, res, aux, n, slots, I64C(0), 2);
}

/* Inserts (ins) or looks up keys[i] for this work-item's i; with cnt an
 * insert counts each key's occurrences in its value word instead of
 * claiming it. ins and cnt are literals at each entry. */
INLINE void ht_probe(BPTR table, BPTR keys, BPTR res, BPTR meta, i64 n, i64 slots, i64 max_probes, i64 budget,
	i64 step, i64 capacity, const bool ins, const bool cnt) {
	const i64 tiles = ew_tiles(n);
	const u64 mask = CAST(u64, slots - I64C(1));
	i64 left = budget;
	u64 claims = CAST(u64, 0);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 j0 = I64C(0); j0 < I64C(ITEMS); j0 += I64C(HT_BATCH)) {
		/* A batch's keys are loaded first, then their first probes: the
		 * loads of each round are independent, so their cache misses
		 * overlap, two round trips a batch. No branch on a lane's own
		 * values comes between them (a slot past the tile or past n loads
		 * key 0 and drops it; the plans' ITEMS are multiples of HT_BATCH,
		 * so only the last tile's lanes past n ever do): RADV's compiler
		 * waited for a slot's loads at each such branch, one round trip
		 * after another. The batch is only ever indexed at constant slots
		 * (a value goes in at the back and is taken from the front, the
		 * rest moving one slot), so it stays in registers even where a
		 * compiler leaves these loops rolled, as glslc does the last: an
		 * array indexed at a run-time slot lives in the work-item's stack,
		 * local memory on a GPU. */
		u64 kb[HT_BATCH];  /* the keys (HT_EMPTY past the tile or n) */
		u64 pre[HT_BATCH]; /* their first probes */
		/* the early stops' flags, read once a batch beside its keys (a
		 * key each, they took a round trip before every key's probing):
		 * an insert's table over capacity, Unique's try failed already.
		 * Both only save work; the keys a batch probes past either are
		 * thrown away with the try, whose full flag the host reads */
		const bool over = ins && LD64(meta, HT_META_COUNT) > CAST(u64, capacity);
		const bool failed = cnt && LD32(meta, HT_META_FULL) != 0u;
		UNROLL for (int b = 0; b < HT_BATCH; b++) { /* 32-ok: a batch slot, < HT_BATCH */
			const i64 i = ew_index(tile, j0 + I64C(b));
			const bool live = step == I64C(0) && j0 + I64C(b) < I64C(ITEMS) && i < n;
			const u64 key = LD64(keys, live ? i : I64C(0));
			UNROLL for (int c = 0; c < HT_BATCH - 1; c++) { /* 32-ok: a batch slot, < HT_BATCH */
				kb[c] = kb[c + 1];
			}
			kb[HT_BATCH - 1] = live ? key : HT_EMPTY;
		}
		UNROLL for (int b = 0; b < HT_BATCH; b++) { /* 32-ok: a batch slot, < HT_BATCH */
			const u64 key = kb[0];
			const u64 at = LD64(table, I64C(2) * CAST(i64, ht_hash(key) & mask));
			UNROLL for (int c = 0; c < HT_BATCH - 1; c++) { /* 32-ok: a batch slot, < HT_BATCH */
				kb[c] = kb[c + 1];
				pre[c] = pre[c + 1];
			}
			kb[HT_BATCH - 1] = key; /* the keys come round again for the probing */
			pre[HT_BATCH - 1] = key != HT_EMPTY ? at : HT_EMPTY;
		}
		UNROLL for (int b = 0; b < HT_BATCH; b++) { /* 32-ok: a batch slot, < HT_BATCH */
			const u64 first = pre[0];
			const u64 kfirst = kb[0];
			UNROLL for (int c = 0; c < HT_BATCH - 1; c++) { /* 32-ok: a batch slot, < HT_BATCH */
				pre[c] = pre[c + 1];
				kb[c] = kb[c + 1];
			}
			const i64 j = j0 + I64C(b);
			const i64 i = ew_index(tile, j);
			if (j >= I64C(ITEMS) || i >= n) {
				continue;
			}
			const u64 mine = HT_CLAIM | CAST(u64, i);
			i64 done = I64C(0); /* probes done in earlier launches */
			if (step > I64C(0)) {
				const i64 st = CAST(i64, LD64(res, i));
				if (st >= (ins ? I64C(0) : I64C(-1))) {
					continue;
				}
				done = I64C(-2) - st;
			}
			if (left <= I64C(0)) {
				if (step == I64C(0)) {
					ST64(res, i, CAST(u64, I64C(-2)));
				}
				ST32(meta, HT_META_MORE, 1u);
				continue;
			}
			if (over) {
				ST32(meta, HT_META_FULL, 1u); /* over capacity already: stop early */
				continue;
			}
			if (failed) {
				continue; /* Unique's try failed already: stop early */
			}
			const u64 key = step == I64C(0) ? kfirst : LD64(keys, i);
			/* state: 0 probing, 1 found, 2 absent (or no slot), 3 out of budget */
			int state = 0; /* 32-ok: a probe state, 0..3 */
			i64 s = slots;
			if (key == HT_EMPTY) {
				u64 k = LD64(table, I64C(2) * slots);
				if (ins && k == HT_EMPTY) {
					k = CAS64(table, I64C(2) * slots, HT_EMPTY, CAST(u64, 0));
					if (k == HT_EMPTY) {
						claims += CAST(u64, 1);
					}
					k = CAST(u64, 0);
				}
				state = k != HT_EMPTY ? 1 : 2;
			} else {
				s = CAST(i64, (ht_hash(key) + CAST(u64, done)) & mask);
				while (state == 0) {
					if (done >= max_probes) {
						state = 2;
						if (ins) {
							ST32(meta, HT_META_FULL, 1u);
						}
						break;
					}
					if (left <= I64C(0)) {
						state = 3;
						break;
					}
					left--;
					u64 k = step == I64C(0) && done == I64C(0) ? first : LD64(table, I64C(2) * s);
					if (ins && k == HT_EMPTY) {
						k = CAS64(table, I64C(2) * s, HT_EMPTY, key);
						if (k == HT_EMPTY) {
							claims += CAST(u64, 1);
							k = key;
						}
					}
					if (k == key) {
						state = 1;
					} else if (k == HT_EMPTY) {
						state = 2; /* lookups only: inserts claimed it above */
					} else {
						s = CAST(i64, CAST(u64, s + I64C(1)) & mask);
						done++;
					}
				}
			}
			if (ins && cnt && state == 1) {
				ADD64(table, I64C(2) * s + I64C(1), CAST(u64, 1)); /* from all ones: the count less one */
			} else if (ins && state == 1) {
				/* a new key's value word: atomic min of the claims of its
				 * occurrences; ids of keys already in the table stay. The
				 * first compare-and-swap guesses the word unclaimed (all
				 * ones, every word's first value, as in a slot this insert
				 * claimed) instead of loading it: where the guess is wrong
				 * it returns the word, as the load would have, so a new
				 * key's claim takes one round trip, not two. Like the load
				 * it replaces, it costs no budget: a key that took its last
				 * probe finds and claims its word in the same launch */
				u64 cur = CAS64(table, I64C(2) * s + I64C(1), HT_EMPTY, mine);
				while (cur != HT_EMPTY && cur >= HT_CLAIM && mine < cur) {
					if (left <= I64C(0)) {
						state = 3; /* the next launch finds the key again at probe `done` */
						break;
					}
					left--;
					const u64 old = CAS64(table, I64C(2) * s + I64C(1), cur, mine);
					if (old == cur) {
						break;
					}
					cur = old;
				}
			}
			if (state == 3) {
				ST64(res, i, CAST(u64, I64C(-2) - done));
				ST32(meta, HT_META_MORE, 1u);
			} else if (ins) {
				ST64(res, i, CAST(u64, state == 1 ? s : I64C(-1)));
			} else {
				i64 v = I64C(-1);
				if (state == 1) {
					v = CAST(i64, LD64(table, I64C(2) * s + I64C(1)));
				}
				ST64(res, i, CAST(u64, v >= I64C(0) ? v : I64C(-1)));
			}
		}
		}
	}
	if (claims != CAST(u64, 0)) {
		ADD64(meta, HT_META_COUNT, claims);
	}
}

INLINE void hash_insert(HASH_INSERT_PARAMS) {
	ht_probe(table, keys, res, meta, n, slots, max_probes, budget, step, capacity, true, false);
}

INLINE void hash_count(HASH_COUNT_PARAMS) {
	ht_probe(table, keys, res, meta, n, slots, max_probes, budget, step, capacity, true, true);
}

INLINE void hash_lookup(HASH_LOOKUP_PARAMS) {
	ht_probe(table, keys, res, meta, n, slots, max_probes, budget, step, I64C(0), false, false);
}

/* Whether slot s of [0, slots], whose key word is k, holds a key (slot
 * `slots`: the key HT_EMPTY, present once its key word is 0); and the key
 * it holds: for the passes that load the words themselves (ht_held, the
 * GPU batches of hash_gather and hash_rank). */
bool ht_word_held(u64 k, i64 s, i64 slots) {
	return s < slots ? k != HT_EMPTY : k == CAST(u64, 0);
}

u64 ht_word_key(u64 k, i64 s, i64 slots) {
	return s < slots ? k : HT_EMPTY;
}

/* Whether slot s of [0, slots] holds a key (slot `slots`: the key
 * HT_EMPTY, present once its key word is 0). */
bool ht_held(BPTR table, i64 s, i64 slots) {
	return ht_word_held(LD64(table, I64C(2) * s), s, slots);
}

/* The key slot s holds (ht_held). */
u64 ht_key(BPTR table, i64 s, i64 slots) {
	return s < slots ? LD64(table, I64C(2) * s) : HT_EMPTY; /* no load for slot `slots` */
}

/* hash_gather's slot j of a GPU batch of four (each spelled out): s its
 * slot, k its key word (loaded at a clamped slot, so that the batch's
 * loads go out together), h whether it holds a key (ht_held). */
#define HT_GATHER_SLOT(j, s, k, h) \
	const i64 s = ew_index(tile, j0 + I64C(j)); \
	const u64 k = LD64(table, I64C(2) * min64(s, slots)); \
	const bool h = j0 + I64C(j) < I64C(ITEMS) && s <= slots && ht_word_held(k, s, slots);
#define HT_GATHER_BATCH \
	HT_GATHER_SLOT(0, s0, k0, h0) \
	HT_GATHER_SLOT(1, s1, k1, h1) \
	HT_GATHER_SLOT(2, s2, k2, h2) \
	HT_GATHER_SLOT(3, s3, k3, h3)
/* the held slot s (key word k) into the keys' run at `at`, then the next */
#define HT_GATHER_PUT(s, k, h) \
	if (h && at >= I64C(0) && at < u) { \
		ST64(keys, at, ht_word_key(k, s, slots)); \
		ST64(held, at, CAST(u64, s)); \
		at++; \
	}

/* The held slots' keys into a run of keys (and their slots into held):
 * each tile's held slots counted per lane, scanned in work-group memory,
 * and the tile's run claimed by one atomic add. The GPU plans (CONTIG 0)
 * read the slots four at a time, their loads together (a slot's load
 * came behind its bounds test, and the second loop read each held slot's
 * key again behind it: RADV 13 round trips a work-item); the CPU plans
 * keep their loops. */
INLINE void hash_gather(HASH_GATHER_PARAMS) {
	const i64 lid = LOCAL_ID();
	const i64 ls = I64C(LOCAL_SIZE);
	const i64 tiles = ew_tiles(slots + I64C(1));
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		u32 mine = 0u; /* 32-ok: a lane's held slots, < ITEMS */
		if (CONTIG == 1) {
			for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
				const i64 s = ew_index(tile, j);
				if (s <= slots && ht_held(table, s, slots)) {
					mine++;
				}
			}
		} else {
			for (i64 j0 = I64C(0); j0 < I64C(ITEMS); j0 += I64C(4)) {
				HT_GATHER_BATCH
				mine += (h0 ? 1u : 0u) + (h1 ? 1u : 0u) + (h2 ? 1u : 0u) + (h3 ? 1u : 0u);
			}
		}
		SH(lid) = mine;
		LOCAL_BARRIER();
		/* the lanes' counts scanned in place (inclusive) */
		for (i64 off = I64C(1); off < ls; off = off * I64C(2)) {
			const u32 v = lid >= off ? SH(lid - off) : 0u; /* 32-ok: a tile's held slots, < 2^32 */
			LOCAL_BARRIER();
			SH(lid) = SH(lid) + v;
			LOCAL_BARRIER();
		}
		if (lid == ls - I64C(1)) {
			const u64 run = CAST(u64, SH(lid));
			const u64 base = ADD64(meta, HT_META_COUNT, CAST(u64, 0) - run) - run; /* the run below the count's old value */
			SH(ls) = CAST(u32, base & 0xfffffffful); /* 32-ok: the low half of the run's start */
			SH(ls + I64C(1)) = CAST(u32, base >> 32); /* 32-ok: the high half */
		}
		LOCAL_BARRIER();
		i64 at = CAST(i64, CAST(u64, SH(ls)) | (CAST(u64, SH(ls + I64C(1))) << 32)) + CAST(i64, SH(lid) - mine);
		if (CONTIG == 1) {
			for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
				const i64 s = ew_index(tile, j);
				if (s <= slots && ht_held(table, s, slots) && at >= I64C(0) && at < u) {
					ST64(keys, at, ht_key(table, s, slots));
					ST64(held, at, CAST(u64, s));
					at++;
				}
			}
		} else {
			for (i64 j0 = I64C(0); j0 < I64C(ITEMS); j0 += I64C(4)) {
				HT_GATHER_BATCH
				HT_GATHER_PUT(s0, k0, h0)
				HT_GATHER_PUT(s1, k1, h1)
				HT_GATHER_PUT(s2, k2, h2)
				HT_GATHER_PUT(s3, k3, h3)
			}
		}
		LOCAL_BARRIER(); /* every lane has read the scratch before the next tile */
	}
}

/* hash_rank's element of a GPU batch, a step at a time: i its position
 * (live: inside the tile and u), k its rank's held position, s its slot
 * (-1 where either is out of range: never for a table the gather filled;
 * no stray access if it were), then the slot's key and value words; each
 * load at a clamped address, so that a batch's loads of one step go out
 * together. */
#define HT_RANK_POS(j, i, live) \
	const i64 i = ew_index(tile, j0 + I64C(j)); \
	const bool live = j0 + I64C(j) < I64C(ITEMS) && i < u;
#define HT_RANK_PERM(i, live, k) \
	const i64 k##p = CAST(i64, LD64(perm, live ? i : I64C(0))); /* u > 0 here */ \
	const i64 k = live && k##p >= I64C(0) && k##p < u ? k##p : I64C(-1);
#define HT_RANK_HELD(k, s) \
	const i64 s##h = CAST(i64, LD64(held, max64(k, I64C(0)))); \
	const i64 s = k >= I64C(0) && s##h >= I64C(0) && s##h <= slots ? s##h : I64C(-1);
#define HT_RANK_STORE(i, s, kw, cw) \
	if (s >= I64C(0)) { \
		ST64(values, i, ht_word_key(kw, s, slots)); \
		ST64(counts, i, cw + CAST(u64, 1)); \
		ST64(table, I64C(2) * s + I64C(1), CAST(u64, i)); \
	}

/* The distinct keys in sorted order (perm: the sorted positions' held
 * positions), their counts, and each slot's value word its key's rank.
 * The CPU plans (CONTIG 1) are a plain loop. The GPU plans take four
 * elements at a time: their perm words, then their held slots, then the
 * slots' key and value words, each step's loads together (three round
 * trips a batch, where each element's chain of three came after the
 * previous element's stores: RADV 16 a work-item). */
INLINE void hash_rank(HASH_RANK_PARAMS) {
	if (CONTIG == 1) {
		EW_FOR(u, i)
			const i64 k = CAST(i64, LD64(perm, i));
			if (k >= I64C(0) && k < u) {
				const i64 s = CAST(i64, LD64(held, k));
				if (s >= I64C(0) && s <= slots) {
					ST64(values, i, ht_key(table, s, slots));
					ST64(counts, i, LD64(table, I64C(2) * s + I64C(1)) + CAST(u64, 1));
					ST64(table, I64C(2) * s + I64C(1), CAST(u64, i));
				}
			}
		EW_END
		return;
	}
	const i64 tiles = ew_tiles(u);
	for (i64 tile = GROUP_LINEAR_ID(); tile < tiles; tile += GROUP_TOTAL()) {
		for (i64 j0 = I64C(0); j0 < I64C(ITEMS); j0 += I64C(4)) {
			HT_RANK_POS(0, i0, l0)
			HT_RANK_POS(1, i1, l1)
			HT_RANK_POS(2, i2, l2)
			HT_RANK_POS(3, i3, l3)
			HT_RANK_PERM(i0, l0, k0)
			HT_RANK_PERM(i1, l1, k1)
			HT_RANK_PERM(i2, l2, k2)
			HT_RANK_PERM(i3, l3, k3)
			HT_RANK_HELD(k0, s0)
			HT_RANK_HELD(k1, s1)
			HT_RANK_HELD(k2, s2)
			HT_RANK_HELD(k3, s3)
			/* the slots' words (slot `slots`: the key HT_EMPTY's) */
			const u64 kw0 = LD64(table, I64C(2) * max64(s0, I64C(0)));
			const u64 kw1 = LD64(table, I64C(2) * max64(s1, I64C(0)));
			const u64 kw2 = LD64(table, I64C(2) * max64(s2, I64C(0)));
			const u64 kw3 = LD64(table, I64C(2) * max64(s3, I64C(0)));
			const u64 cw0 = LD64(table, I64C(2) * max64(s0, I64C(0)) + I64C(1));
			const u64 cw1 = LD64(table, I64C(2) * max64(s1, I64C(0)) + I64C(1));
			const u64 cw2 = LD64(table, I64C(2) * max64(s2, I64C(0)) + I64C(1));
			const u64 cw3 = LD64(table, I64C(2) * max64(s3, I64C(0)) + I64C(1));
			HT_RANK_STORE(i0, s0, kw0, cw0)
			HT_RANK_STORE(i1, s1, kw1, cw1)
			HT_RANK_STORE(i2, s2, kw2, cw2)
			HT_RANK_STORE(i3, s3, kw3, cw3)
		}
	}
}

#endif
