/* radix_tile.h: the layout of the tiled radix passes' work-group scratch
 * (radix_body.h's radix_tcount / radix_tscatter), included by the wrappers
 * clkernels/radix.cl and shaders/radix.comp after gen/radix.h (its knobs)
 * so they can size the scratch, and by the body. */
#ifndef ACCEL_RADIX_TILE_H
#define ACCEL_RADIX_TILE_H

/* The tiled passes' scratch: keys of RADIX_KW 32-bit words. */
#define RADIX_LS CAST(int, LOCAL_SIZE) /* 32-ok: the local size */
#if KB == 64
#define RADIX_KW 2
#define RADIX_SH_PUTK(at, r, k) \
	sh[(at) + 2 * RADIX_SLOT(r)] = CAST(uint, (k) & CAST(KEY, 0xffffffffu)); /* 32-ok: one 32-bit half of a key */ \
	sh[(at) + 2 * RADIX_SLOT(r) + 1] = CAST(uint, (k) >> CAST(KEY, 32)) /* 32-ok: one 32-bit half of a key */
#define RADIX_SH_GETK(at, p) (CAST(KEY, sh[(at) + 2 * RADIX_SLOT(p)]) | (CAST(KEY, sh[(at) + 2 * RADIX_SLOT(p) + 1]) << CAST(KEY, 32)))
#else
#define RADIX_KW 1
#define RADIX_SH_PUTK(at, r, k) sh[(at) + RADIX_SLOT(r)] = CAST(uint, k) /* 32-ok: a 32-bit key */
#define RADIX_SH_GETK(at, p) CAST(KEY, sh[(at) + RADIX_SLOT(p)])
#endif

/* The tiled passes' digits: DIGITS of them. The scatter ranks a tile in
 * RADIX_ROUNDS rounds of at most RADIX_RB bits each (digits of up to 5
 * bits in one round; wider ones, 8 bits on GPUs, in two: the low RB bits,
 * then the rest, each round a stable ranking of the one before), with the
 * per-lane counts of a round's RDIGITS digits packed two to a 32-bit word
 * (a tile holds at most 65535 keys), in RADIX_WORDS rows of LOCAL_SIZE
 * words at the start of the scratch; the tile's keys (RADIX_KW words each)
 * and entries (RADIX_EW words each: one where the plan's entries are all
 * below 2^32, else two) follow. The count pass uses the scratch's
 * first DIGITS words. */
#define RADIX_DIGITS (1 << RADIX_BITS)
#define RADIX_ROUNDS (RADIX_BITS > 5 ? 2 : 1)
#define RADIX_RB (RADIX_BITS > 5 ? ((RADIX_BITS + 1) >> 1) : RADIX_BITS)
#define RADIX_RDIGITS (1 << RADIX_RB)
#define RADIX_WORDS (RADIX_RDIGITS >> 1)
#define RADIX_KPT1 (RADIX_KPT > 0 ? RADIX_KPT : 1) /* private arrays of a lane's keys: at least one */
#define RADIX_TILE (I64C(LOCAL_SIZE) * I64C(RADIX_KPT))
/* A round keeps the counters in scratch: round digit d of lane l counts
 * in half d / RADIX_WORDS of word (d % RADIX_WORDS) * LOCAL_SIZE + l, each
 * word index w at RADIX_RW(w) (one pad word every 32 against bank
 * conflicts); then LOCAL_SIZE segment sums and, per digit, its tile run's
 * global offset less its start in the tile (two words). */
#define RADIX_RW(w) ((w) + ((w) >> 5))
/* The ranking by subgroup ballots (knob RADIX_SGS > 0, radix_body.h's
 * RADIX_RANK_TILE_WL) counts each subgroup's keys of every digit, two
 * digits a word (digit d in half d >> (RADIX_BITS - 1) of word d & (DW -
 * 1)), word w of subgroup s at s * RADIX_DW + w, in the same place: the
 * counters take the larger of the two layouts. */
#define RADIX_DW (RADIX_DIGITS >> 1)
#define RADIX_WL_LEN (RADIX_SGS * RADIX_DW)
#define RADIX_CNT_LEN (RADIX_WL_LEN > RADIX_RW(RADIX_WORDS * RADIX_LS) ? RADIX_WL_LEN : RADIX_RW(RADIX_WORDS * RADIX_LS))
#define RADIX_SEG_AT RADIX_CNT_LEN
#define RADIX_OFF_AT (RADIX_SEG_AT + RADIX_LS)
#define RADIX_KEYS_AT (RADIX_OFF_AT + 2 * RADIX_DIGITS)
/* The tile's slot p lies at RADIX_SLOT(p) of the keys and entries (a pad
 * slot every 32), so a lane's run of RADIX_KPT slots, read by every lane
 * at once in the second round, does not fall in one memory bank. */
#define RADIX_SLOT(p) ((p) + ((p) >> 5))
#define RADIX_SLOTS RADIX_SLOT(RADIX_LS * RADIX_KPT)
#define RADIX_ENTS_AT (RADIX_KEYS_AT + RADIX_SLOTS * RADIX_KW)

/* The scratch's length in 32-bit words: one word where the tiled passes
 * are off (RADIX_KPT = 0, the CPU plans), so their wide digits do not size
 * a scratch nothing uses. */
#define RADIX_SCRATCH_LEN (RADIX_KPT > 0 ? RADIX_ENTS_AT + RADIX_EW * RADIX_SLOTS : 1)

#endif
