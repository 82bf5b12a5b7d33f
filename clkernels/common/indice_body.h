/* indice_body.h: sparse convolution's index pairs (get_indice_pairs),
 * shared by clkernels/indice.cl and shaders/indice.comp (entry points,
 * knobs and the IP_* codes declared in host/kernels: gen/indice.h). The
 * wrappers define ATOM_MIN_U32(p, i, v), ATOM_OR_U32(p, i, v) and
 * CAS64(p, i, cmp, val).
 *
 * A site is a row (batch, c_0 .. c_{D-1}) of int32; its key over a spatial
 * shape X is the row-major ravel ((batch*X_0 + c_0)*X_1 + c_1)... as a
 * 64-bit word, so keys sort as the rows do, lexicographically. params is
 * the int64 parameter block (IP_P_*): D, batch, K, the input shape, the
 * rule's target shape, ksize, stride, padding, dilation.
 *
 * A candidate is a pair (offset k, query row q), numbered p = k*n + q, so
 * that the candidates of an offset are consecutive and in row order. Its
 * rule (IP_RULE_*) gives the target site of q through offset k, or none:
 *   CONV   out*stride = in + padding - kidx*dilation, out inside the shape
 *   TCONV  out = in*stride - padding + kidx*dilation, out inside the shape
 *   SUBM   out = in - (kidx - ksize/2)*dilation, then looked up among the
 *          sites (sorted keys, or their hash table)
 *   INV    in = out*stride - padding + kidx*dilation from a forward output
 *          q, then looked up among the forward's input sites
 *
 * The sites' hash table (hashed): open addressing with linear probing over
 * slots 64-bit words (a power of two, at least 4x the sites: a load of at
 * most 1/4, where 250k sites probe at most about 20 slots past their
 * home), the home of a key ht_hash(key) & (slots - 1). Site q's word is
 * key << rb | q, rb the bits of the site count, so no word is all ones,
 * a free slot's marker, and one compare-and-swap places key and row
 * together. A site placed at most probes slots past its home is found by
 * probes + 1 loads at most; one that finds no free slot there sets
 * err[IP_FLAG_TABLE], and the host sorts the sites instead.
 *
 *   indice_keys     checks each row (batch in [0, batch), coordinates in
 *                   [0, shape)) and writes its key; a bad row records its
 *                   tile (row >> ERR_TILE_SHIFT) into err[0]
 *   indice_dups     sorted keys: an equal neighbour records its tile
 *   indice_table    the sites' hash table (in place of the sort and
 *                   indice_dups where the plan takes one): each site's
 *                   word into a free slot near its home, a key found
 *                   there twice recording its tile
 *   indice_expand   the candidates' flags cnt[p] (CONV/TCONV; dense:
 *                   their targets' keys orow[p], marked in the grid), or
 *                   for the looked-up rules their found rows orow[p], with the
 *                   work split between work-groups (jobs) and their
 *                   work-items (cores) by the split policy (IP_SPLIT_*)
 *                   over this launch's rows (sorted: SUBM over the sites in
 *                   key order, found rows stored by sorted position j at
 *                   k*n + j, and rank[q] = j)
 *                   (emit: CONV/TCONV over the scanned flags, the
 *                   target key of valid candidate p into ckey[pos[p]])
 *   indice_outs     the first of each run of equal sorted target keys
 *                   writes its site into out_indices[seg - 1]
 *   indice_write    CONV/TCONV: every candidate writes one column of its
 *                   offset: a valid one (q, target row) at pos[p] -
 *                   pos[k*n], an invalid one -1 at num[k] + (its rank
 *                   among the invalid ones), so each offset's pairs are in
 *                   row order and its tail is -1; num[k] = pos[(k+1)*n] -
 *                   pos[k*n]
 *   indice_tcount   each tile of an offset's rows counts its candidates
 *                   with a target: found rows (looked-up rules), or keys
 *                   (a regular or transposed conv whose expansion wrote
 *                   its targets' keys into orow and marked them in the
 *                   dense grid)
 *   indice_wpairs   the tiles' counts scanned (and the grid's words): each tile's
 *                   rows write their columns as indice_write does, from
 *                   the found rows or the grid's output rows (a scan of
 *                   the lanes' counts in work-group scratch places them),
 *                   so the candidates' flags and positions are never
 *                   written
 * outs, write and wpairs do nothing when err[0] is set, so a rejected input leaves
 * the outputs unwritten. */
#ifndef ACCEL_INDICE_BODY_H
#define ACCEL_INDICE_BODY_H

#include "elementwise.h"
#include "hash_mix.h"
#include "lane_scan.h"

#define IP_MAXD 4
#define IP_CURSORS 128 /* offsets one work-item may keep cursors for */
#define IP_KD 16 /* kernel sizes per dim of indice_crows (accel's indiceKD) */

i64 ip_param(BPTR params, int at) { /* 32-ok: a params slot, < IP_P_LEN + 8 * K */
	return CAST(i64, LD64(params, at));
}

u64 ip_pos(BPTR pos, i64 i, i64 wide) {
	if (wide != I64C(0)) {
		return LD64(pos, i);
	}
	return CAST(u64, LD32(pos, i));
}

/* a / b for a >= 0, b > 0: in 32 bits where both fit (a 64-bit
 * division costs several 32-bit ones on CPUs) */
i64 ip_div(i64 a, i64 b) {
	if (((CAST(u64, a) | CAST(u64, b)) >> 32) == CAST(u64, 0)) {
		return CAST(i64, udiv32(CAST(u32, a), CAST(u32, b))); /* 32-ok: a and b < 2^32, tested above */
	}
	return udiv64(a, b);
}

/* A target coordinate splits into a part of the row, computed once per
 * row and dim, and a part of the offset, from the host's table after the
 * parameter block (params[IP_P_LEN + 8*k + 2*d] and the word after it):
 *   CONV   (x + pad) = v*stride + r: the offset (kq, kr) reaches o = v - kq
 *          where kr == r (stride > 1, so dilation 1: kq = kidx/stride, kr =
 *          kidx%stride; stride 1: kq = kidx*dilation, kr = 0)
 *   others v = x*stride - pad, o = v + kq (TCONV, INV: kq = kidx*dilation;
 *          SUBM, whose block holds stride 1 and padding 0: kq =
 *          -(kidx - ksize/2)*dilation)
 * so no division runs per candidate. */
i64 ip_rowv(BPTR params, i64 rule, i64 x, int d) { /* 32-ok: a dim, < IP_MAXD */
	const i64 st = ip_param(params, IP_P_STRIDE + d);
	const i64 pad = ip_param(params, IP_P_PAD + d);
	if (rule == I64C(IP_RULE_CONV)) {
		return ip_div(x + pad, st);
	}
	return x * st - pad;
}

i64 ip_rowr(BPTR params, i64 rule, i64 x, int d) { /* 32-ok: a dim, < IP_MAXD */
	if (rule == I64C(IP_RULE_CONV)) {
		const i64 st = ip_param(params, IP_P_STRIDE + d);
		const i64 xp = x + ip_param(params, IP_P_PAD + d);
		return xp - ip_div(xp, st) * st;
	}
	return I64C(0);
}

/* The target key of a row (batch b, row parts v and r per dim) through
 * offset k under rule, or -1 where the target lies outside the target
 * shape or b outside the batch. */
i64 ip_target(BPTR params, i64 rule, i64 D, i64 b, i64 v0, i64 v1, i64 v2, i64 v3, i64 r0, i64 r1, i64 r2, i64 r3, i64 k) {
	if (CAST(u64, b) >= CAST(u64, ip_param(params, IP_P_BATCH))) {
		/* a bad row's batch (indice_keys flags it; the host reads the
		 * flag only after the op's passes ran): no target, so nothing
		 * marks a grid bit or reads a table past the key space */
		return I64C(-1);
	}
	i64 key = b;
	const bool conv = rule == I64C(IP_RULE_CONV);
	for (int d = 0; d < IP_MAXD; d++) { /* 32-ok: a dim, < IP_MAXD */
		if (I64C(d) >= D) {
			break;
		}
		const i64 v = d == 0 ? v0 : (d == 1 ? v1 : (d == 2 ? v2 : v3));
		const i64 kq = CAST(i64, LD64(params, I64C(IP_P_LEN) + I64C(8) * k + I64C(2 * d)));
		const i64 lim = ip_param(params, IP_P_OUT + d);
		i64 o = v + kq;
		if (conv) {
			const i64 r = d == 0 ? r0 : (d == 1 ? r1 : (d == 2 ? r2 : r3));
			if (CAST(i64, LD64(params, I64C(IP_P_LEN) + I64C(8) * k + I64C(2 * d + 1))) != r) {
				return I64C(-1);
			}
			o = v - kq;
		}
		if (CAST(u64, o) >= CAST(u64, lim)) { /* o < 0 or o >= lim (see indice_keys) */
			return I64C(-1);
		}
		key = key * lim + o;
	}
	return key;
}

/* Row q's batch and coordinates (D of them, 1 <= D <= IP_MAXD), loaded
 * into b and x0..x3 (a macro: portable code has no out-parameters); a
 * coordinate past D is never used. The GPU plans (CONTIG 0) load them
 * together: a coordinate past D loads the row's last one again (its
 * address clamped inside the row, never past the buffer), so no load
 * waits behind a test of D and a row costs one round trip to memory
 * where each coordinate's load came after the previous one's (RADV:
 * indice_keys 21 round trips on its longest path, 5 now). The CPU plans
 * load only the D coordinates (the clamped loads cost PoCL's keys pass a
 * quarter more). */
#define IP_COORD(rows, D, w, q, d) \
	(CONTIG == 1 ? ((D) > I64C(d) ? LD32S(rows, (q) * (w) + I64C(1 + d)) : I64C(0)) \
		     : LD32S(rows, (q) * (w) + min64(I64C(1 + d), D)))
#define IP_ROW_WORDS(rows, D, w, q, b, x0, x1, x2, x3) \
	const i64 b = LD32S(rows, (q) * (w)); \
	const i64 x0 = LD32S(rows, (q) * (w) + I64C(1)); \
	const i64 x1 = IP_COORD(rows, D, w, q, 1); \
	const i64 x2 = IP_COORD(rows, D, w, q, 2); \
	const i64 x3 = IP_COORD(rows, D, w, q, 3);

/* Loads row q's batch and row parts (ip_rowv, ip_rowr) into b, v0..v3,
 * r0..r3 (a macro: portable code has no out-parameters); a part past D
 * is 0. */
#define IP_LOAD_ROW(rows, params, rl, D, w, q) \
	IP_ROW_WORDS(rows, D, w, q, b, x0_, x1_, x2_, x3_) \
	i64 v0 = ip_rowv(params, rl, x0_, 0); \
	i64 r0 = ip_rowr(params, rl, x0_, 0); \
	i64 v1 = I64C(0), v2 = I64C(0), v3 = I64C(0); \
	i64 r1 = I64C(0), r2 = I64C(0), r3 = I64C(0); \
	if ((D) > I64C(1)) { \
		v1 = ip_rowv(params, rl, x1_, 1); \
		r1 = ip_rowr(params, rl, x1_, 1); \
	} \
	if ((D) > I64C(2)) { \
		v2 = ip_rowv(params, rl, x2_, 2); \
		r2 = ip_rowr(params, rl, x2_, 2); \
	} \
	if ((D) > I64C(3)) { \
		v3 = ip_rowv(params, rl, x3_, 3); \
		r3 = ip_rowr(params, rl, x3_, 3); \
	}

/* A work-item's share of a launch's rows (ip_split_range). */
STRUCT(ip_split) {
	i64 r_lo;  /* its rows [r_lo, r_hi) */
	i64 r_hi;
	i64 k0;    /* its offsets (or planes) k0, k0 + kstep, ... */
	i64 kstep;
};

/* The share of rows_n rows x the offsets (or planes) under split policy
 * sp (IP_SPLIT_*) of work-item c of cores in group g of jobs. */
INLINE ip_split ip_split_range(i64 sp, i64 g, i64 c, i64 cores, i64 jobs, i64 rows_n) {
	ip_split r;
	r.r_lo = I64C(0);
	r.r_hi = rows_n;
	r.k0 = I64C(0);
	r.kstep = I64C(1);
	if (sp == I64C(IP_SPLIT_LL)) {
		const i64 chunk = cdiv64(rows_n, jobs * cores);
		r.r_lo = (g * cores + c) * chunk;
		r.r_hi = r.r_lo + chunk;
	} else if (sp == I64C(IP_SPLIT_LK)) {
		const i64 chunk = cdiv64(rows_n, jobs);
		r.r_lo = g * chunk;
		r.r_hi = r.r_lo + chunk;
		r.k0 = c;
		r.kstep = cores;
	} else if (sp == I64C(IP_SPLIT_KL)) {
		const i64 chunk = cdiv64(rows_n, cores);
		r.r_lo = c * chunk;
		r.r_hi = r.r_lo + chunk;
		r.k0 = g;
		r.kstep = jobs;
	} else {
		r.k0 = g * cores + c;
		r.kstep = jobs * cores;
	}
	r.r_hi = min64(r.r_hi, rows_n);
	return r;
}

INLINE void indice_keys(INDICE_KEYS_PARAMS) {
	const i64 D = ip_param(params, IP_P_D);
	const i64 w = D + I64C(1);
	const i64 batch = ip_param(params, IP_P_BATCH);
	/* the GPU plans: the shape's IP_MAXD slots loaded once (a dim past D
	 * is never used), not once per row and dim after the previous dim's
	 * test */
	const i64 s0 = ip_param(params, IP_P_SHAPE);
	const i64 s1 = ip_param(params, IP_P_SHAPE + 1);
	const i64 s2 = ip_param(params, IP_P_SHAPE + 2);
	const i64 s3 = ip_param(params, IP_P_SHAPE + 3);
	EW_FOR(n, i)
		IP_ROW_WORDS(indices, D, w, i, b, x0, x1, x2, x3)
		/* one unsigned compare per bound (0 <= v < limit, limit > 0):
		 * lavapipe loses the sign test of `v < 0 || v >= limit` on int64 */
		bool bad = CAST(u64, b) >= CAST(u64, batch);
		i64 key = b;
		for (int d = 0; d < IP_MAXD; d++) { /* 32-ok: a dim, < IP_MAXD */
			if (I64C(d) >= D) {
				break;
			}
			/* the CPU plans load at d (the row's words and the shape
			 * above are then unused), as fast as their vector loops go */
			const i64 x = CONTIG == 1 ? LD32S(indices, i * w + I64C(1 + d)) : (d == 0 ? x0 : (d == 1 ? x1 : (d == 2 ? x2 : x3)));
			const i64 s = CONTIG == 1 ? ip_param(params, IP_P_SHAPE + d) : (d == 0 ? s0 : (d == 1 ? s1 : (d == 2 ? s2 : s3)));
			if (CAST(u64, x) >= CAST(u64, s)) {
				bad = true;
			}
			key = key * s + x;
		}
		if (bad) {
			ATOM_MIN_U32(err, 0, CAST(u32, i >> ERR_TILE_SHIFT)); /* 32-ok: p >> ERR_TILE_SHIFT (16) < 2^32 for positions < 2^48 */
			key = I64C(0);
		}
		ST64(keys, i, CAST(u64, key));
	EW_END
}

INLINE void indice_dups(INDICE_DUPS_PARAMS) {
	EW_FOR(n, i)
		if (i > I64C(0) && LD64(keys, i) == LD64(keys, i - I64C(1))) {
			ATOM_MIN_U32(err, 0, CAST(u32, i >> ERR_TILE_SHIFT)); /* 32-ok: p >> ERR_TILE_SHIFT (16) < 2^32 for positions < 2^48 */
		}
	EW_END
}

/* The row of the site whose key is key in the sites' hash table, or -1:
 * at most probes + 1 slots from its home, up to the first free one. */
i64 ip_table_find(BPTR table, i64 slots, i64 rb, i64 probes, i64 key) {
	const u64 mask = CAST(u64, slots - I64C(1));
	u64 s = ht_hash(CAST(u64, key)) & mask;
	for (i64 d = I64C(0); d <= probes; d++) {
		const u64 w = LD64(table, CAST(i64, s));
		if (w == ~CAST(u64, 0)) {
			break;
		}
		if ((w >> rb) == CAST(u64, key)) {
			return CAST(i64, w & ((CAST(u64, 1) << rb) - CAST(u64, 1)));
		}
		s = (s + CAST(u64, 1)) & mask;
	}
	return I64C(-1);
}

/* The dense grid over a target space: a bit a key in 32-bit words (bits,
 * zeroed; key j is bit j % 32 of word j / 32), and once the words' set bits
 * are scanned (exclusive, kind FLAG_POPC32) each word's first output row
 * (rows): a target's output row is its word's row plus the set bits below
 * it in the word, the numbering a sort of the targets gives. Marking
 * reads the word first, so a target marked already costs no atomic. */
void ip_grid_mark(BPTR bits, i64 key) {
	const i64 w = key >> 5;
	const u32 bit = 1u << CAST(u32, key & I64C(31)); /* 32-ok: a bit of a word */
	if ((LD32(bits, w) & bit) == 0u) {
		ATOM_OR_U32(bits, w, bit);
	}
}

u32 ip_grid_row(BPTR bits, BPTR rows, i64 key) { /* 32-ok: an output row, < M <= MaxInt32 (accel/indice.go) */
	const i64 w = key >> 5;
	const u32 below = (1u << CAST(u32, key & I64C(31))) - 1u; /* 32-ok: the bits below key's in its word */
	return LD32(rows, w) + CAST(u32, POPC32(LD32(bits, w) & below)); /* 32-ok: an output row */
}

INLINE void indice_table(INDICE_TABLE_PARAMS) {
	const u64 mask = CAST(u64, slots - I64C(1));
	EW_FOR(n, i)
		const u64 key = LD64(keys, i);
		const u64 mine = (key << rb) | CAST(u64, i);
		u64 s = ht_hash(key) & mask;
		bool placed = false;
		for (i64 d = I64C(0); d <= probes; d++) {
			const u64 old = CAS64(table, CAST(i64, s), ~CAST(u64, 0), mine);
			if (old == ~CAST(u64, 0)) {
				placed = true;
				break;
			}
			if ((old >> rb) == key) {
				/* a site twice (or a bad row's key 0, flagged already) */
				ATOM_MIN_U32(err, 0, CAST(u32, i >> ERR_TILE_SHIFT)); /* 32-ok: p >> ERR_TILE_SHIFT (16) < 2^32 for positions < 2^48 */
				placed = true;
				break;
			}
			s = (s + CAST(u64, 1)) & mask;
		}
		if (!placed) {
			ST32(err, IP_FLAG_TABLE, 1u);
		}
	EW_END
}

INLINE void indice_expand(INDICE_EXPAND_PARAMS) {
	const i64 g = GROUP_LINEAR_ID();
	if (g >= jobs) {
		return; /* a surplus group of the folded grid */
	}
	const i64 D = ip_param(params, IP_P_D);
	const i64 K = ip_param(params, IP_P_K);
	const i64 w = D + I64C(1);
	const i64 cores = I64C(LOCAL_SIZE);
	const i64 c = LOCAL_ID();
	const i64 sp = split;
	const i64 rl = rule;
	const bool look = rl == I64C(IP_RULE_SUBM) || rl == I64C(IP_RULE_INV);
	const bool wd = wide != I64C(0);
	/* this work-item's rows [r_lo, r_hi) of the launch's and its offsets
	 * k0, k0 + kstep, ... */
	const ip_split share = ip_split_range(sp, g, c, cores, jobs, rows_n);
	const i64 r_lo = share.r_lo;
	const i64 r_hi = share.r_hi;
	const i64 k0 = share.k0;
	const i64 kstep = share.kstep;
	/* SUBM walks the sites in key order (launch row r is sorted position
	 * row0 + r): for a fixed offset the targets (key + a constant) then
	 * only grow, so each offset keeps a cursor into the sorted keys and
	 * gallops forward from it (a few steps, not a binary search). */
	const bool merge = sorted != I64C(0); /* the host checks the offsets per core <= IP_CURSORS */
	i64 cur[IP_CURSORS];
	if (merge) { /* only a merge reads them: 1 KiB of a GPU work-item's stack (local memory) cleared for nothing otherwise */
		for (int s = 0; s < IP_CURSORS; s++) { /* 32-ok: a cursor, < IP_CURSORS */
			cur[s] = I64C(-1);
		}
	}
	for (i64 r = r_lo; r < r_hi; r++) {
		const i64 q = merge ? CAST(i64, LD64(sperm, row0 + r)) : row0 + r;
		if (merge && k0 == I64C(0)) {
			ST32(rank, q, CAST(u32, row0 + r)); /* once per row: the core with offset 0; 32-ok: a sorted position, < rows <= MaxInt32 (accel/indice.go) */
		}
		IP_LOAD_ROW(rows, params, rl, D, w, q)
		for (i64 k = k0; k < K; k += kstep) {
			/* sorted: the found rows by sorted position, k*n + j, so that
			 * each offset's stores run in order; cnt comes from
			 * indice_flags */
			const i64 p = k * n + (merge ? row0 + r : q);
			i64 key = ip_target(params, rl, D, b, v0, v1, v2, v3, r0, r1, r2, r3, k);
			if (look) {
				i64 found = I64C(-1);
				if (hashed != I64C(0)) {
					if (key >= I64C(0)) {
						found = ip_table_find(table, slots, rb, probes, key);
					}
				} else if (key >= I64C(0)) {
					/* lower bound of key among the sorted site keys: in
					 * [0, nkeys), or galloping from the offset's cursor */
					i64 lo = I64C(0);
					i64 hi = nkeys;
					const int slot = CAST(int, udiv64(k - k0, kstep)); /* 32-ok: slot of the offset window, < IP_CURSORS (host-checked) */
					if (merge && cur[slot] >= I64C(0)) {
						lo = cur[slot];
						i64 step = I64C(1);
						while (lo + step < nkeys && LD64(skeys, lo + step) < CAST(u64, key)) {
							lo += step;
							step += step;
						}
						hi = min64(lo + step, nkeys);
						if (lo < nkeys && LD64(skeys, lo) < CAST(u64, key)) {
							lo++;
						}
					}
					while (lo < hi) {
						const i64 mid = (lo + hi) >> 1;
						if (LD64(skeys, mid) < CAST(u64, key)) {
							lo = mid + I64C(1);
						} else {
							hi = mid;
						}
					}
					if (merge) {
						cur[slot] = lo;
					}
					if (lo < nkeys && LD64(skeys, lo) == CAST(u64, key)) {
						found = CAST(i64, LD64(sperm, lo));
					}
				}
				ST32(orow, p, CAST(u32, CAST(i32, found))); /* 32-ok: a row number or -1, rows <= MaxInt32 (accel/indice.go) */
				continue; /* the pairs come from orow by tiles (indice_tcount, indice_wpairs) */
			}
			if (dense != I64C(0)) {
				/* CONV/TCONV through the dense grid: the target marked
				 * in the grid (its bit), and with dense 1 its key
				 * (below 2^31: the grid's keys) or -1 into orow (an
				 * inverse's forward needs no keys) */
				if (dense == I64C(1)) {
					ST32(orow, p, CAST(u32, CAST(i32, key))); /* 32-ok: a grid key or -1, < indiceGridMax */
				}
				if (key >= I64C(0)) {
					ip_grid_mark(grid, key);
				}
				continue;
			}
			if (emit != I64C(0)) {
				/* CONV/TCONV, cnt scanned: the valid target's key into
				 * its compacted slot */
				if (key >= I64C(0)) {
					ST64(ckey, ip_pos(cnt, p, wide), CAST(u64, key));
				}
				continue;
			}
			if (wd) {
				ST64(cnt, p, key >= I64C(0) ? CAST(u64, 1) : CAST(u64, 0));
			} else {
				ST32(cnt, p, key >= I64C(0) ? 1u : 0u);
			}
		}
	}
}

/* Writes the site of a target key (over the rule's target shape) into
 * row row of outs ([M, 1+D]). */
void ip_site_out(BPTR outs, BPTR params, i64 D, i64 row, i64 key) {
	const i64 w = D + I64C(1);
	i64 rest = key;
	for (int d = IP_MAXD - 1; d >= 0; d--) { /* 32-ok: a dim, < IP_MAXD */
		if (I64C(d) < D) {
			const i64 lim = ip_param(params, IP_P_OUT + d);
			const i64 up = ip_div(rest, lim);
			ST32(outs, row * w + I64C(1 + d), CAST(u32, CAST(i32, rest - up * lim))); /* 32-ok: a coordinate, < out size <= MaxInt32 (accel/indice.go) */
			rest = up;
		}
	}
	ST32(outs, row * w, CAST(u32, CAST(i32, rest))); /* 32-ok: a coordinate, < out size <= MaxInt32 (accel/indice.go) */
}

INLINE void indice_outs(INDICE_OUTS_PARAMS) {
	if (LD32(err, 0) != ERR_NONE) {
		return;
	}
	const i64 D = ip_param(params, IP_P_D);
	EW_FOR(n, j)
		const u64 key = LD64(skeys, j);
		if (j > I64C(0) && LD64(skeys, j - I64C(1)) == key) {
			continue;
		}
		const i64 row = CAST(i64, LD64(seg, j)) - I64C(1);
		ip_site_out(outs, params, D, row, CAST(i64, key));
	EW_END
}

INLINE void indice_write(INDICE_WRITE_PARAMS) {
	if (LD32(err, 0) != ERR_NONE) {
		return;
	}
	const i64 wd = wide;
	/* tiles never straddle two offsets: an offset's start and count are
	 * loaded once per tile */
	const i64 per = ew_tiles(n);
	const i64 K = udiv64(count, n);
	for (i64 tile = GROUP_LINEAR_ID(); tile < K * per; tile += GROUP_TOTAL()) {
		const i64 k = udiv64(tile, per);
		const i64 t = tile - k * per;
		const i64 start = CAST(i64, ip_pos(pos, k * n, wd));
		const i64 cnt = CAST(i64, ip_pos(pos, (k + I64C(1)) * n, wd)) - start;
		const i64 base = I64C(2) * k * n;
		if (t == I64C(0) && LOCAL_ID() == I64C(0)) {
			ST32(num, k, CAST(u32, CAST(i32, cnt))); /* 32-ok: an offset's pair count, <= rows <= MaxInt32 (accel/indice.go) */
		}
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 q = ew_index(t, j);
			if (q >= n) {
				continue;
			}
			const i64 p = k * n + q;
			const i64 at = CAST(i64, ip_pos(pos, p, wd));
			const i64 col = at - start;
			if (CAST(i64, ip_pos(pos, p + I64C(1), wd)) > at) {
				const i64 o = CAST(i64, LD64(crow, at));
				ST32(pairs, base + col, CAST(u32, CAST(i32, q))); /* 32-ok: a row, < rows <= MaxInt32 (accel/indice.go) */
				ST32(pairs, base + n + col, CAST(u32, CAST(i32, o))); /* 32-ok: an output row, < M <= MaxInt32 (accel/indice.go) */
			} else {
				const i64 tail = cnt + (q - col);
				ST32(pairs, base + tail, 0xffffffffu);
				ST32(pairs, base + n + tail, 0xffffffffu);
			}
		}
	}
}

/* The pairs by tiles (indice_tcount, then the tiles' counts scanned, then
 * indice_wpairs): offset k's rows are cut into tiles of LOCAL_SIZE *
 * ITEMS (per = ew_tiles(n) an offset), tile k*per + t taken by one
 * work-group, whose lane l walks rows base + l*ITEMS .. base + l*ITEMS +
 * ITEMS - 1 in order (whatever CONTIG says: the lanes' counts scanned in
 * scratch then place each lane's rows in row order). Row q's candidate
 * through offset k is orow[k*n + q], or by sorted position
 * orow[k*n + rank[q]] (lookup 2): a found row (looked-up rules), or a
 * target's key in the dense grid (lookup 3: a regular or transposed conv
 * whose expansion wrote its keys, dense), -1 for none. The lanes'
 * counts are scanned by lane_scan.h. */
i64 ip_cand(BPTR orow, BPTR rank, i64 n, i64 k, i64 q, i64 lookup) {
	const i64 at = lookup == I64C(2) ? CAST(i64, LD32(rank, q)) : q;
	return LD32S(orow, k * n + at);
}

/* The candidates with a target among this lane's rows of offset k's tile
 * t, scanned over the group's lanes (lane_scan: the tile's total << 32 |
 * the lanes' before this one). */
u64 ip_tile_scan(BPTR orow, BPTR rank, i64 n, i64 k, i64 t, i64 lookup SCRATCH_PARAM) {
	const i64 lo = lane_lo(t);
	const i64 hi = min64(lo + I64C(ITEMS), n);
	u32 mine = 0u; /* 32-ok: candidates of one lane, <= ITEMS */
	for (i64 q = lo; q < hi; q++) {
		if (ip_cand(orow, rank, n, k, q, lookup) >= I64C(0)) {
			mine++;
		}
	}
	return lane_scan(mine SCRATCH_ARG);
}

INLINE void indice_tcount(INDICE_TCOUNT_PARAMS) {
	const i64 per = ew_tiles(n);
	const i64 K = udiv64(count, n);
	for (i64 tile = GROUP_LINEAR_ID(); tile < K * per; tile += GROUP_TOTAL()) {
		const i64 k = udiv64(tile, per);
		const u64 sc = ip_tile_scan(orow, rank, n, k, tile - k * per, lookup SCRATCH_ARG);
		if (LOCAL_ID() == I64C(0)) {
			ST64(tcnt, tile, sc >> 32);
		}
	}
}

/* tcnt: the exclusive scan of the tiles' counts (K*per+1 words); grid and
 * grows (lookup 3): the dense grid's bits and its words' rows, a target's
 * output row (ip_grid_row). Each
 * lane writes its rows' columns of offset k in row order: one with a
 * target (q, its found row or output row) after the offset's such rows
 * before it, any other -1 at num[k] + (the others before it), so the
 * offset's pairs are in row order and its tail is -1 (as indice_write). */
INLINE void indice_wpairs(INDICE_WPAIRS_PARAMS) {
	if (LD32(err, 0) != ERR_NONE) {
		return;
	}
	const i64 per = ew_tiles(n);
	const i64 K = udiv64(count, n);
	for (i64 tile = GROUP_LINEAR_ID(); tile < K * per; tile += GROUP_TOTAL()) {
		const i64 k = udiv64(tile, per);
		const i64 t = tile - k * per;
		const u64 sc = ip_tile_scan(orow, rank, n, k, t, lookup SCRATCH_ARG);
		const i64 start = CAST(i64, LD64(tcnt, k * per));
		const i64 num_k = CAST(i64, LD64(tcnt, (k + I64C(1)) * per)) - start;
		if (t == I64C(0) && LOCAL_ID() == I64C(0)) {
			ST32(num, k, CAST(u32, CAST(i32, num_k))); /* 32-ok: an offset's pair count, <= rows <= MaxInt32 (accel/indice.go) */
		}
		const i64 lo = lane_lo(t);
		const i64 hi = min64(lo + I64C(ITEMS), n);
		i64 col = CAST(i64, LD64(tcnt, tile)) - start + CAST(i64, sc & 0xfffffffful);
		const i64 base = I64C(2) * k * n;
		/* four rows at a time: their candidates loaded together (a row
		 * past hi loads row hi - 1's and is never written), then their
		 * grid rows, then the stores, where each row's loads came after
		 * the previous row's stores (RADV: 8 round trips a lane) */
		for (i64 q0 = lo; q0 < hi; q0 += I64C(4)) {
			/* ip_cand's loads, a step for the four rows at a time */
			i64 a0 = q0;
			i64 a1 = min64(q0 + I64C(1), hi - I64C(1));
			i64 a2 = min64(q0 + I64C(2), hi - I64C(1));
			i64 a3 = min64(q0 + I64C(3), hi - I64C(1));
			if (lookup == I64C(2)) {
				a0 = CAST(i64, LD32(rank, a0));
				a1 = CAST(i64, LD32(rank, a1));
				a2 = CAST(i64, LD32(rank, a2));
				a3 = CAST(i64, LD32(rank, a3));
			}
			const i64 c0 = LD32S(orow, k * n + a0);
			const i64 c1 = LD32S(orow, k * n + a1);
			const i64 c2 = LD32S(orow, k * n + a2);
			const i64 c3 = LD32S(orow, k * n + a3);
			/* a found or output row, < rows or M <= MaxInt32 (accel/indice.go); a row without a target reads the grid's first word */
			const u32 o0 = lookup == I64C(3) ? ip_grid_row(grid, grows, max64(c0, I64C(0))) : CAST(u32, CAST(i32, c0)); /* 32-ok: as said */
			const u32 o1 = lookup == I64C(3) ? ip_grid_row(grid, grows, max64(c1, I64C(0))) : CAST(u32, CAST(i32, c1)); /* 32-ok: as said */
			const u32 o2 = lookup == I64C(3) ? ip_grid_row(grid, grows, max64(c2, I64C(0))) : CAST(u32, CAST(i32, c2)); /* 32-ok: as said */
			const u32 o3 = lookup == I64C(3) ? ip_grid_row(grid, grows, max64(c3, I64C(0))) : CAST(u32, CAST(i32, c3)); /* 32-ok: as said */
			for (int b = 0; b < 4; b++) { /* 32-ok: a row of the four, < 4 */
				const i64 q = q0 + I64C(b);
				const i64 c = b == 0 ? c0 : (b == 1 ? c1 : (b == 2 ? c2 : c3));
				if (q >= hi) {
					break;
				}
				if (c >= I64C(0)) {
					ST32(pairs, base + col, CAST(u32, CAST(i32, q))); /* 32-ok: a row, < rows <= MaxInt32 (accel/indice.go) */
					ST32(pairs, base + n + col, b == 0 ? o0 : (b == 1 ? o1 : (b == 2 ? o2 : o3)));
					col++;
				} else {
					const i64 tail = num_k + (q - col);
					ST32(pairs, base + tail, 0xffffffffu);
					ST32(pairs, base + n + tail, 0xffffffffu);
				}
			}
		}
	}
}

/* The lower bound of key among the sorted keys at or after lo (every key
 * before lo is smaller): a gallop from lo, then a binary search; lo < 0
 * starts with a binary search over all of them. */
i64 ip_gallop(BPTR skeys, i64 nkeys, i64 lo, u64 key) {
	i64 hi = nkeys;
	if (lo >= I64C(0)) {
		if (lo >= nkeys || LD64(skeys, lo) >= key) {
			return lo;
		}
		/* skeys[lo] < key */
		i64 step = I64C(1);
		while (lo + step < nkeys && LD64(skeys, lo + step) < key) {
			lo += step;
			step += step;
		}
		hi = min64(lo + step, nkeys);
		lo++;
	} else {
		lo = I64C(0);
	}
	while (lo < hi) {
		const i64 mid = (lo + hi) >> 1;
		if (LD64(skeys, mid) < key) {
			lo = mid + I64C(1);
		} else {
			hi = mid;
		}
	}
	return lo;
}

/* SUBM in rows (host.ShapeRows): launch row r is sorted position j = row0 +
 * r; the offsets k = pl*kl + i (kl = ksize[D-1]) of a plane pl share every
 * dim but the last, so their targets are the plane's row key tkey plus the
 * last coordinate x + kq(i), ascending as i descends: one gallop from the
 * plane's cursor to the lowest, then a short gallop per offset. The found
 * rows go into j's record orow[j*K + k], and rank[q] = j.
 * sym (every ksize odd): offsets k and K-1-k are mirrors (q finds o
 * through k exactly when o finds q through K-1-k), so only the planes pl
 * <= P-1-pl are searched and each find of a plane pl < P-1-pl is also
 * stored as q into the found site's record at K-1-k (orow is filled with
 * -1 first). The split policy splits rows x searched planes as
 * indice_expand splits rows x offsets. */
INLINE void indice_search(INDICE_SEARCH_PARAMS) {
	const i64 g = GROUP_LINEAR_ID();
	if (g >= jobs) {
		return;
	}
	const i64 D = ip_param(params, IP_P_D);
	const i64 K = ip_param(params, IP_P_K);
	const i64 w = D + I64C(1);
	const i64 kl = ip_param(params, IP_P_KSIZE + CAST(int, D) - 1); /* 32-ok: a dim, D <= IP_MAXD */
	const i64 xl = ip_param(params, IP_P_OUT + CAST(int, D) - 1); /* 32-ok: a dim, D <= IP_MAXD */
	const i64 P = udiv64(K, kl);
	const bool mirror = sym != I64C(0);
	const i64 PS = mirror ? (P + I64C(1)) >> 1 : P;
	const i64 cores = I64C(LOCAL_SIZE);
	const i64 c = LOCAL_ID();
	const i64 sp = split;
	const ip_split share = ip_split_range(sp, g, c, cores, jobs, rows_n);
	const i64 r_lo = share.r_lo;
	const i64 r_hi = share.r_hi;
	const i64 k0 = share.k0;
	const i64 kstep = share.kstep;
	i64 cur[IP_CURSORS]; /* the host checks the planes per core <= IP_CURSORS */
	for (int s = 0; s < IP_CURSORS; s++) { /* 32-ok: a cursor, < IP_CURSORS */
		cur[s] = I64C(-1);
	}
	for (i64 r = r_lo; r < r_hi; r++) {
		const i64 j = row0 + r;
		const i64 q = CAST(i64, LD64(sperm, j));
		if (k0 == I64C(0)) {
			ST32(rank, q, CAST(u32, j)); /* once per row: the core with plane 0; 32-ok: a sorted position, < rows <= MaxInt32 (accel/indice.go) */
		}
		const i64 rl = I64C(IP_RULE_SUBM);
		IP_LOAD_ROW(rows, params, rl, D, w, q)
		const i64 x = D == I64C(1) ? v0 : (D == I64C(2) ? v1 : (D == I64C(3) ? v2 : v3));
		for (i64 pl = k0; pl < PS; pl += kstep) {
			/* the plane's row key: every dim but the last, which is 0 */
			i64 tkey = b;
			bool ok = true;
			for (int d = 0; d < IP_MAXD; d++) { /* 32-ok: a dim, < IP_MAXD */
				if (I64C(d) >= D) {
					break;
				}
				const i64 lim = ip_param(params, IP_P_OUT + d);
				i64 o = I64C(0);
				if (I64C(d) < D - I64C(1)) {
					const i64 v = d == 0 ? v0 : (d == 1 ? v1 : v2);
					o = v + CAST(i64, LD64(params, I64C(IP_P_LEN) + I64C(8) * pl * kl + I64C(2 * d)));
					if (CAST(u64, o) >= CAST(u64, lim)) {
						ok = false;
					}
				}
				tkey = tkey * lim + o;
			}
			const i64 rec = j * K + pl * kl;
			if (!ok) {
				for (i64 i = I64C(0); i < kl; i++) {
					ST32(orow, rec + i, 0xffffffffu);
				}
				continue;
			}
			const bool both = mirror && pl < P - I64C(1) - pl;
			const int slot = CAST(int, udiv64(pl - k0, kstep)); /* 32-ok: slot of the offset window, < IP_CURSORS (host-checked) */
			/* the cursor: the lower bound of the plane's lowest target,
			 * tkey + x + kq(kl-1) (a key that only grows with the sorted
			 * position, whether inside the grid or not) */
			const i64 kql = I64C(IP_P_LEN) + I64C(8) * pl * kl + I64C(2) * (D - I64C(1));
			const i64 t0 = tkey + x + CAST(i64, LD64(params, kql + I64C(8) * (kl - I64C(1))));
			i64 at = ip_gallop(skeys, nkeys, cur[slot], CAST(u64, max64(t0, I64C(0))));
			cur[slot] = at;
			for (i64 i = kl - I64C(1); i >= I64C(0); i--) {
				const i64 ol = x + CAST(i64, LD64(params, kql + I64C(8) * i));
				i64 found = I64C(-1);
				if (CAST(u64, ol) < CAST(u64, xl)) {
					/* mostly no step or one (a gallop bounds the
					 * loop for large dilations) */
					const u64 t = CAST(u64, tkey + ol);
					at = ip_gallop(skeys, nkeys, at, t);
					if (at < nkeys && LD64(skeys, at) == t) {
						found = CAST(i64, LD64(sperm, at));
						if (both) {
							ST32(orow, at * K + (K - I64C(1) - pl * kl - i), CAST(u32, q)); /* 32-ok: a row, < rows <= MaxInt32 (accel/indice.go) */
						}
					}
				}
				ST32(orow, rec + i, CAST(u32, CAST(i32, found))); /* 32-ok: a row number or -1, rows <= MaxInt32 (accel/indice.go) */
			}
		}
	}
}

/* The line table of the sorted site keys (accel's indicePlan.Lines): a
 * site's key is line*xl + x, its line the batch and every coordinate but
 * the last raveled, x the last (xl values). table[l] is the first sorted
 * position whose line is >= l, for l in [0, lines] (lines+1 words), so
 * line l's sites are the sorted positions [table[l], table[l+1]). Tile t
 * (a work-item each) takes the entries [t*chunk, (t+1)*chunk): a binary
 * search for its first, then a gallop per entry from there. */
INLINE void indice_lines(INDICE_LINES_PARAMS) {
	const i64 D = ip_param(params, IP_P_D);
	const i64 xl = ip_param(params, IP_P_OUT + CAST(int, D) - 1); /* 32-ok: a dim, D <= IP_MAXD */
	for (i64 t = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID(); t < tiles; t += GROUP_TOTAL() * I64C(LOCAL_SIZE)) {
		const i64 hi = min64((t + I64C(1)) * chunk, lines + I64C(1));
		i64 at = I64C(-1);
		for (i64 l = t * chunk; l < hi; l++) {
			at = ip_gallop(skeys, nkeys, at, CAST(u64, l * xl));
			ST32(table, l, CAST(u32, at)); /* 32-ok: a sorted position, <= rows <= MaxInt32 (accel/indice.go) */
		}
	}
}

/* SUBM in rows through the line table (indice_lines): chunk c (sorted
 * positions [c*chunk, (c+1)*chunk) of n, a work-item each) looks up its
 * sites' targets in key order, so that the table and the sorted keys are
 * read almost in order. A kernel plane pl's offsets k = pl*kl + i share
 * every dim but the last, so they share a target line, whose sites are
 * the sorted positions [table[line], table[line+1]); the targets line*xl +
 * x + kq(i) ascend as i descends: a short gallop per offset inside that
 * range. The found rows go into j's record orow[j*K + k] (-1: none), and
 * rank[q] = j, for indice_count's gather. */
INLINE void indice_tsearch(INDICE_TSEARCH_PARAMS) {
	const i64 D = ip_param(params, IP_P_D);
	const i64 K = ip_param(params, IP_P_K);
	const i64 kl = ip_param(params, IP_P_KSIZE + CAST(int, D) - 1); /* 32-ok: a dim, D <= IP_MAXD */
	const i64 xl = ip_param(params, IP_P_OUT + CAST(int, D) - 1); /* 32-ok: a dim, D <= IP_MAXD */
	const i64 P = udiv64(K, kl);
	for (i64 c = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID(); c < chunks; c += GROUP_TOTAL() * I64C(LOCAL_SIZE)) {
		const i64 hi = min64((c + I64C(1)) * chunk, n);
		for (i64 j = c * chunk; j < hi; j++) {
			const i64 q = CAST(i64, LD64(sperm, j));
			/* the site from its key (no read of its row): line*xl + x,
			 * the line (b, v0, v1, v2) raveled */
			const i64 key = CAST(i64, LD64(skeys, j));
			i64 rest = ip_div(key, xl);
			const i64 x = key - rest * xl;
			i64 v0 = I64C(0), v1 = I64C(0), v2 = I64C(0);
			for (int d = IP_MAXD - 2; d >= 0; d--) { /* 32-ok: a dim, < IP_MAXD */
				if (I64C(d) < D - I64C(1)) {
					const i64 lim = ip_param(params, IP_P_OUT + d);
					const i64 t = ip_div(rest, lim);
					const i64 v = rest - t * lim;
					rest = t;
					if (d == 0) {
						v0 = v;
					} else if (d == 1) {
						v1 = v;
					} else {
						v2 = v;
					}
				}
			}
			const i64 b = rest;
			for (i64 pl = I64C(0); pl < P; pl++) {
				/* the plane's target line: every dim but the last */
				i64 line = b;
				bool ok = true;
				for (int d = 0; d < IP_MAXD - 1; d++) { /* 32-ok: a dim, < IP_MAXD */
					if (I64C(d) >= D - I64C(1)) {
						break;
					}
					const i64 lim = ip_param(params, IP_P_OUT + d);
					const i64 v = d == 0 ? v0 : (d == 1 ? v1 : v2);
					const i64 o = v + CAST(i64, LD64(params, I64C(IP_P_LEN) + I64C(8) * pl * kl + I64C(2 * d)));
					ok = ok && CAST(u64, o) < CAST(u64, lim);
					line = line * lim + o;
				}
				const i64 rec = q * K + pl * kl;
				i64 at = I64C(0);
				i64 end = I64C(0);
				/* (a bad row's batch is flagged by indice_keys: no read
				 * outside the table) */
				if (ok && CAST(u64, line) < CAST(u64, lines)) {
					at = CAST(i64, LD32(table, line));
					end = CAST(i64, LD32(table, line + I64C(1)));
				}
				const i64 kql = I64C(IP_P_LEN) + I64C(8) * pl * kl + I64C(2) * (D - I64C(1));
				i64 i = kl - I64C(1);
				if (at < end) {
					/* one gallop to the lowest target, then a merge of
					 * the ascending targets with the line's sites */
					const i64 lo = line * xl + x + CAST(i64, LD64(params, kql + I64C(8) * i));
					at = ip_gallop(skeys, end, at, CAST(u64, max64(lo, line * xl)));
					while (i >= I64C(0) && at < end) {
						const i64 ol = x + CAST(i64, LD64(params, kql + I64C(8) * i));
						const i64 t = line * xl + ol;
						const i64 sk = CAST(i64, LD64(skeys, at));
						if (CAST(u64, ol) < CAST(u64, xl) && sk < t) {
							at++;
						} else {
							i64 found = I64C(-1);
							if (CAST(u64, ol) < CAST(u64, xl) && sk == t) {
								found = CAST(i64, LD64(sperm, at));
							}
							ST32(orowq, rec + i, CAST(u32, CAST(i32, found))); /* 32-ok: a row number or -1, rows <= MaxInt32 (accel/indice.go) */
							i--;
						}
					}
				}
				for (; i >= I64C(0); i--) {
					ST32(orowq, rec + i, 0xffffffffu);
				}
			}
		}
	}
}

/* The rows shape's gather: chunk c (rows [c*chunk, (c+1)*chunk) of n) per
 * work-item copies its rows' records from sorted position (rank) to row
 * order, orowq[q*K + k], and counts each offset's found rows into
 * cnt[k*chunks + c] (a counter per offset, K <= IP_CURSORS). */
INLINE void indice_count(INDICE_COUNT_PARAMS) {
	for (i64 c = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID(); c < chunks; c += GROUP_TOTAL() * I64C(LOCAL_SIZE)) {
		i64 m[IP_CURSORS];
		for (i64 k = I64C(0); k < K; k++) {
			m[CAST(int, k)] = I64C(0); /* 32-ok: an offset, < K <= IP_CURSORS (host-checked) */
		}
		const i64 hi = min64((c + I64C(1)) * chunk, n);
		for (i64 q = c * chunk; q < hi; q++) {
			if (gather == I64C(0)) {
				/* the records are in row order: count them */
				for (i64 k = I64C(0); k < K; k++) {
					if (CAST(i32, LD32(orowq, q * K + k)) >= 0) { /* 32-ok: a row number or -1 (sign test) */
						m[CAST(int, k)]++; /* 32-ok: an offset, < K <= IP_CURSORS (host-checked) */
					}
				}
				continue;
			}
			const i64 rec = CAST(i64, LD32(rank, q)) * K;
			for (i64 k = I64C(0); k < K; k++) {
				const u32 o = LD32(orow, rec + k); /* 32-ok: a row number or -1, rows <= MaxInt32 */
				ST32(orowq, q * K + k, o);
				if (CAST(i32, o) >= 0) { /* 32-ok: a row number or -1 (sign test) */
					m[CAST(int, k)]++; /* 32-ok: an offset, < K <= IP_CURSORS (host-checked) */
				}
			}
		}
		for (i64 k = I64C(0); k < K; k++) {
			ST64(cnt, k * chunks + c, CAST(u64, m[CAST(int, k)])); /* 32-ok: an offset, < K <= IP_CURSORS (host-checked) */
		}
	}
}

/* cnt: the exclusive scan of the tiles' counts, offset-major (K*chunks+1
 * words). Tile (c, k) writes offset k's pairs of its rows from column
 * cnt[k*chunks + c] - cnt[k*chunks] on, its invalid rows' -1 past num[k]
 * (as indice_write). */
INLINE void indice_emit(INDICE_EMIT_PARAMS) {
	if (LD32(err, 0) != ERR_NONE) {
		return;
	}
	const i64 tiles = chunks * K;
	for (i64 t = GROUP_LINEAR_ID() * I64C(LOCAL_SIZE) + LOCAL_ID(); t < tiles; t += GROUP_TOTAL() * I64C(LOCAL_SIZE)) {
		const i64 c = udiv64(t, K);
		const i64 k = t - c * K;
		const i64 start = CAST(i64, LD64(cnt, k * chunks));
		const i64 num_k = CAST(i64, LD64(cnt, (k + I64C(1)) * chunks)) - start;
		if (c == I64C(0)) {
			ST32(num, k, CAST(u32, CAST(i32, num_k))); /* 32-ok: an offset's pair count, <= rows <= MaxInt32 (accel/indice.go) */
		}
		i64 col = CAST(i64, LD64(cnt, k * chunks + c)) - start;
		const i64 lo = c * chunk;
		const i64 hi = min64(lo + chunk, n);
		i64 tail = num_k + (lo - col);
		const i64 base = I64C(2) * k * n;
		for (i64 q = lo; q < hi; q++) {
			const i64 o = LD32S(orowq, q * K + k);
			if (o >= I64C(0)) {
				ST32(pairs, base + col, CAST(u32, CAST(i32, q))); /* 32-ok: a row, < rows <= MaxInt32 (accel/indice.go) */
				ST32(pairs, base + n + col, CAST(u32, CAST(i32, o))); /* 32-ok: an output row, < M <= MaxInt32 (accel/indice.go) */
				col++;
			} else {
				ST32(pairs, base + tail, 0xffffffffu);
				ST32(pairs, base + n + tail, 0xffffffffu);
				tail++;
			}
		}
	}
}

/* CONV/TCONV in rows (host.ShapeRows): launch chunk r is chunk c = chunk0
 * + r, rows [c*chunk, (c+1)*chunk) of n; the split policy splits chunks x
 * offsets as indice_expand splits rows x offsets. Each row's valid
 * targets are enumerated per dim (the kernel indices whose coordinate is
 * inside the target shape, in ascending order, at most IP_KD each), so
 * only valid candidates cost more than a test. The count pass stores
 * each offset k's valid candidates among the chunk's rows into cnt[k*chunks
 * + c]; the emit pass (cnt scanned, offset-major) walks them again in row
 * order, writing candidate at = cnt[k*chunks + c] + i's target key into
 * ckey[at] and its row into qrow[at] (dense: and marks the target in the
 * grid, ip_grid_mark). */
INLINE void indice_crows(INDICE_CROWS_PARAMS) {
	const i64 g = GROUP_LINEAR_ID();
	if (g >= jobs) {
		return;
	}
	const i64 D = ip_param(params, IP_P_D);
	const i64 K = ip_param(params, IP_P_K);
	const i64 w = D + I64C(1);
	const i64 cores = I64C(LOCAL_SIZE);
	const i64 c = LOCAL_ID();
	const i64 sp = split;
	const i64 rl = rule;
	const bool conv = rl == I64C(IP_RULE_CONV);
	const bool em = emit != I64C(0);
	const ip_split share = ip_split_range(sp, g, c, cores, jobs, chunks_n);
	const i64 r_lo = share.r_lo;
	const i64 r_hi = share.r_hi;
	const i64 k0 = share.k0;
	const i64 kstep = share.kstep;
	if (k0 >= K) {
		return;
	}
	/* dims past D: one kernel index 0, coordinate 0, size 1 */
	i64 ksz[IP_MAXD];
	i64 lim[IP_MAXD];
	i64 kstr[IP_MAXD];
	for (int d = IP_MAXD - 1; d >= 0; d--) { /* 32-ok: a dim, < IP_MAXD */
		ksz[d] = I64C(1);
		lim[d] = I64C(1);
		if (I64C(d) < D) {
			ksz[d] = ip_param(params, IP_P_KSIZE + d);
			lim[d] = ip_param(params, IP_P_OUT + d);
		}
		kstr[d] = d == IP_MAXD - 1 ? I64C(1) : kstr[d + 1] * ksz[d + 1];
	}
	i64 kk[IP_MAXD * IP_KD];
	i64 ko[IP_MAXD * IP_KD];
	i64 nv[IP_MAXD];
	i64 m[IP_CURSORS];
	for (i64 r = r_lo; r < r_hi; r++) {
		const i64 ch = chunk0 + r;
		for (i64 k = k0; k < K; k += kstep) {
			const int slot = CAST(int, udiv64(k - k0, kstep)); /* 32-ok: slot of the offset window, < IP_CURSORS (host-checked) */
			m[slot] = em ? CAST(i64, LD64(cnt, k * chunks + ch)) : I64C(0);
		}
		const i64 hi = min64((ch + I64C(1)) * chunk, n);
		for (i64 q = ch * chunk; q < hi; q++) {
			IP_LOAD_ROW(rows, params, rl, D, w, q)
			for (int d = 0; d < IP_MAXD; d++) { /* 32-ok: a dim, < IP_MAXD */
				i64 cntd = I64C(0);
				if (I64C(d) >= D) {
					kk[d * IP_KD] = I64C(0);
					ko[d * IP_KD] = I64C(0);
					cntd = I64C(1);
				} else {
					const i64 v = d == 0 ? v0 : (d == 1 ? v1 : (d == 2 ? v2 : v3));
					const i64 rr = d == 0 ? r0 : (d == 1 ? r1 : (d == 2 ? r2 : r3));
					for (i64 kd = I64C(0); kd < ksz[d]; kd++) {
						const i64 at = I64C(IP_P_LEN) + I64C(8) * kd * kstr[d] + I64C(2 * d);
						const i64 kq = CAST(i64, LD64(params, at));
						i64 o = v + kq;
						if (conv) {
							if (CAST(i64, LD64(params, at + I64C(1))) != rr) {
								continue;
							}
							o = v - kq;
						}
						if (CAST(u64, o) < CAST(u64, lim[d])) {
							kk[d * IP_KD + CAST(int, cntd)] = kd; /* 32-ok: a kernel index, < IP_KD */
							ko[d * IP_KD + CAST(int, cntd)] = o; /* 32-ok: a kernel index, < IP_KD */
							cntd++;
						}
					}
				}
				nv[d] = cntd;
			}
			for (i64 a0 = I64C(0); a0 < nv[0]; a0++) {
				const i64 ka = kk[CAST(int, a0)] * kstr[0]; /* 32-ok: a kernel index, < IP_KD */
				const i64 ya = b * lim[0] + ko[CAST(int, a0)]; /* 32-ok: a kernel index, < IP_KD */
				for (i64 a1 = I64C(0); a1 < nv[1]; a1++) {
					const i64 kb = ka + kk[IP_KD + CAST(int, a1)] * kstr[1]; /* 32-ok: a kernel index, < IP_KD */
					const i64 yb = ya * lim[1] + ko[IP_KD + CAST(int, a1)]; /* 32-ok: a kernel index, < IP_KD */
					for (i64 a2 = I64C(0); a2 < nv[2]; a2++) {
						const i64 kc = kb + kk[2 * IP_KD + CAST(int, a2)] * kstr[2]; /* 32-ok: a kernel index, < IP_KD */
						const i64 yc = yb * lim[2] + ko[2 * IP_KD + CAST(int, a2)]; /* 32-ok: a kernel index, < IP_KD */
						for (i64 a3 = I64C(0); a3 < nv[3]; a3++) {
							const i64 k = kc + kk[3 * IP_KD + CAST(int, a3)]; /* 32-ok: a kernel index, < IP_KD */
							int slot = CAST(int, k); /* 32-ok: an offset, < K <= IP_CURSORS (host-checked) */
							if (kstep != I64C(1)) { /* no division on LL's path */
								if (k < k0 || umod64(k - k0, kstep) != I64C(0)) {
									continue;
								}
								slot = CAST(int, udiv64(k - k0, kstep)); /* 32-ok: slot of the offset window, < IP_CURSORS (host-checked) */
							}
							if (em) {
								const i64 at = m[slot];
								ST64(ckey, at, CAST(u64, yc * lim[3] + ko[3 * IP_KD + CAST(int, a3)])); /* 32-ok: a kernel index, < IP_KD */
								ST32(qrow, at, CAST(u32, CAST(i32, q))); /* 32-ok: a row, < rows <= MaxInt32 (accel/indice.go) */
								if (dense != I64C(0)) {
									ip_grid_mark(grid, yc * lim[3] + ko[3 * IP_KD + CAST(int, a3)]); /* 32-ok: a kernel index, < IP_KD */
								}
							}
							m[slot] = m[slot] + I64C(1);
						}
					}
				}
			}
		}
		if (!em) {
			for (i64 k = k0; k < K; k += kstep) {
				ST64(cnt, k * chunks + ch, CAST(u64, m[CAST(int, udiv64(k - k0, kstep))])); /* 32-ok: slot of the offset window, < IP_CURSORS (host-checked) */
			}
		}
	}
}

/* CONV/TCONV in rows: column col of offset k below num[k] gets the pair
 * (qrow, crow)[cnt[k*chunks] + col] (dense: its target's row from the
 * grid, ip_grid_row), the columns past num[k] -1 in both
 * rows. Tiles never
 * straddle two offsets (as indice_write). */
INLINE void indice_cpairs(INDICE_CPAIRS_PARAMS) {
	if (LD32(err, 0) != ERR_NONE) {
		return;
	}
	const i64 per = ew_tiles(n);
	const i64 K = udiv64(count, n);
	for (i64 tile = GROUP_LINEAR_ID(); tile < K * per; tile += GROUP_TOTAL()) {
		const i64 k = udiv64(tile, per);
		const i64 t = tile - k * per;
		const i64 start = CAST(i64, LD64(cnt, k * chunks));
		const i64 num_k = CAST(i64, LD64(cnt, (k + I64C(1)) * chunks)) - start;
		const i64 base = I64C(2) * k * n;
		if (t == I64C(0) && LOCAL_ID() == I64C(0)) {
			ST32(num, k, CAST(u32, CAST(i32, num_k))); /* 32-ok: an offset's pair count, <= rows <= MaxInt32 (accel/indice.go) */
		}
		for (i64 j = I64C(0); j < I64C(ITEMS); j++) {
			const i64 col = ew_index(t, j);
			if (col >= n) {
				continue;
			}
			if (col < num_k) {
				ST32(pairs, base + col, LD32(qrow, start + col));
				if (dense != I64C(0)) {
					ST32(pairs, base + n + col, ip_grid_row(grid, grows, CAST(i64, LD64(ckey, start + col))));
				} else {
					ST32(pairs, base + n + col, CAST(u32, CAST(i32, CAST(i64, LD64(crow, start + col))))); /* 32-ok: an output row, < M <= MaxInt32 (accel/indice.go) */
				}
			} else {
				ST32(pairs, base + col, 0xffffffffu);
				ST32(pairs, base + n + col, 0xffffffffu);
			}
		}
	}
}

/* The dense grid's outputs: word w's set bits, lowest first, are the
 * targets w*32 + b, at output rows grows[w], grows[w] + 1, ... The
 * targets of a word that share the line of its first key (every
 * coordinate but the last) take the line's batch and leading coordinates
 * from the word's first such target, decoded once a word (its
 * divisions), and their last coordinate from their bit; a target past
 * the line (a word across a line's end) decodes its own key. The GPU
 * plans (CONTIG 0) keep the line in registers: no load in the loop over
 * the bits, where each target read the first row back from outs after
 * the previous target's stores (a round trip to memory a target, up to
 * 32 a word). The CPU plans read it back from their cache (registers
 * cost PoCL's pass a tenth more). */
INLINE void indice_gouts(INDICE_GOUTS_PARAMS) {
	if (LD32(err, 0) != ERR_NONE) {
		return;
	}
	const i64 D = ip_param(params, IP_P_D);
	const i64 wd = D + I64C(1);
	const i64 last = ip_param(params, IP_P_OUT + CAST(int, D) - 1); /* 32-ok: a params slot, < IP_P_LEN */
	EW_FOR(n, w)
		u32 b = LD32(grid, w); /* 32-ok: the word's targets */
		if (b == 0u) {
			continue;
		}
		i64 row = CAST(i64, LD32(grows, w));
		const i64 base = w * I64C(32);
		i64 rest = ip_div(base, last); /* base's line */
		const i64 c0 = base - rest * last; /* base's last coordinate */
		/* the GPU plans: the line's leading coordinates 0 .. D-2, then its
		 * batch (rest) */
		i64 l0 = I64C(0), l1 = I64C(0), l2 = I64C(0);
		if (CONTIG != 1) {
			for (int d = IP_MAXD - 2; d >= 0; d--) { /* 32-ok: a dim, < IP_MAXD */
				if (I64C(d) < D - I64C(1)) {
					const i64 lim = ip_param(params, IP_P_OUT + d);
					const i64 up = ip_div(rest, lim);
					const i64 v = rest - up * lim;
					l0 = d == 0 ? v : l0;
					l1 = d == 1 ? v : l1;
					l2 = d == 2 ? v : l2;
					rest = up;
				}
			}
		}
		i64 first = I64C(-1); /* the CPU plans: the row of the word's first target in base's line */
		while (b != 0u) {
			const u32 low = b & (0u - b); /* 32-ok: the lowest set bit */
			const i64 t = I64C(31 - CLZ32(low));
			const bool line = c0 + t < last;
			if (line && CONTIG != 1) {
				/* coordinates < out size <= MaxInt32 (accel/indice.go) */
				ST32(outs, row * wd, CAST(u32, CAST(i32, rest))); /* 32-ok: as said */
				for (int d = 0; d < IP_MAXD - 1; d++) { /* 32-ok: a leading coordinate, < IP_MAXD */
					if (I64C(d) < D - I64C(1)) {
						ST32(outs, row * wd + I64C(1 + d), CAST(u32, CAST(i32, d == 0 ? l0 : (d == 1 ? l1 : l2)))); /* 32-ok: as said */
					}
				}
				ST32(outs, row * wd + D, CAST(u32, c0 + t)); /* 32-ok: as said */
			} else if (line && first >= I64C(0)) {
				for (int d = 0; d < IP_MAXD; d++) { /* 32-ok: a leading coordinate, < IP_MAXD */
					if (I64C(d) < D) {
						ST32(outs, row * wd + I64C(d), LD32(outs, first * wd + I64C(d)));
					}
				}
				ST32(outs, row * wd + D, CAST(u32, c0 + t)); /* 32-ok: a coordinate, < out size <= MaxInt32 */
			} else {
				ip_site_out(outs, params, D, row, base + t);
				if (line) {
					first = row;
				}
			}
			row++;
			b ^= low;
		}
	EW_END
}

#endif