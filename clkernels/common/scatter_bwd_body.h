/* scatter_bwd_body.h: the gradient of scatter_reduce (float variants),
 * shared by clkernels/scatter_bwd.cl and shaders/scatter_bwd.comp (entry
 * points and knobs declared in host/kernels: gen/scatter_bwd.h). It
 * works on the bit-reproducible forward's sort: keys[j] (64-bit words,
 * sorted) is the target offset of sorted position j and perm[j] its source
 * offset, so each run of equal keys lists one target's contributors in
 * index order. The host starts with gi = g (grad_input, input's shape) and
 * gs = 0 (grad_src), aux = 0 (one T-sized word per target) and runs:
 *
 *   nanself    (over input, amax/amin): gi[p] = NaN where input[p] is
 *               NaN (torch's (self == result) mask is false there)
 *   count      (over sorted positions, mean/amax/amin): aux[key] (u32)
 *               counts the run's contributors (mean) or those equal to the
 *               result res[key] (amax/amin), self included with
 *               include_self (mean) or where it equals the result
 *               (amax/amin, include_self or not, as torch counts it);
 *               32-bit atomic increments
 *   apply      (over sorted positions, sum/mean/amax/amin): gs[perm[j]] =
 *               g, g / count, or mask * (g / count) (NaN where no
 *               contributor equals the result); run starts write gi[key]
 *               (the self term, or 0 without include_self)
 *   suffix     (prod, one work-item per run, from its end): gs[perm[j]] =
 *               the product of the run's values after j; aux[key] ends as
 *               the product of the whole run (self's suffix)
 *   prefix     (prod, one work-item per run, from its start): gs[perm[j]]
 *               = g * (prefix * suffix), the prefix starting from self with
 *               include_self; gi[key] = g * (1 * aux[key]) or 0
 * The passes over sorted positions do nothing when err[0] != ERR_NONE
 * (the forward's validation flagged an index, so keys may lie outside the
 * targets). suffix and prefix walk at most `limit` elements per launch
 * (drivers that stop long loops): launch `step` continues each run
 * `step * limit` elements on with the running product kept in aux[key],
 * and a run left unfinished sets err[1] = 1 so the host launches the next
 * step. Include
 * after dtypes.h, memory.h, the generated header and the wrapper's LDV/STV
 * (elements of T on a BPTR) and ATOM_INC_U32. */
#ifndef ACCEL_SCATTER_BWD_BODY_H
#define ACCEL_SCATTER_BWD_BODY_H

#include "elementwise.h"
#include "reduce_ops.h"

#if DT == 3
#define SB_NAN FROM_BITS(0x7fc00000u)
#else
#define SB_NAN FROM_BITS(0x7ff8000000000000ul)
#endif

T sb_mask(bool b) {
	return b ? CAST(T, 1) : CAST(T, 0);
}

/* Sorted position j of keys: its target and whether it starts its run. */
#define SB_POSITION(j) \
	const u64 key = LD64(keys, j); \
	const i64 dest = CAST(i64, key); \
	const bool start = j == I64C(0) || LD64(keys, j - I64C(1)) != key;

INLINE void scatter_bwd_nanself(SCATTER_BWD_NANSELF_PARAMS) {
	EW_FOR(n, j)
		const T x = LDV(self_in, j);
		if (T_IS_NAN(x)) {
			STV(gi, j, SB_NAN);
		}
	EW_END
}

INLINE void scatter_bwd_count(SCATTER_BWD_COUNT_PARAMS) {
	if (LD32(err, 0) != ERR_NONE) {
		return;
	}
	const bool extremum = red == I64C(RED_AMAX) || red == I64C(RED_AMIN);
	EW_FOR(n, j)
		SB_POSITION(j)
		const i64 s = CAST(i64, LD64(perm, j));
		const T r = LDV(res, dest);
		if (!extremum || T_EQ(LDV(src, s), r)) {
			ATOM_INC_U32(aux, dest);
		}
		/* torch counts input's own value among the ties whenever it equals
		 * the result, include_self or not (its own gradient is then 0) */
		if (start && (extremum ? T_EQ(LDV(self_in, dest), r) : include_self != I64C(0))) {
			ATOM_INC_U32(aux, dest);
		}
	EW_END
}

INLINE void scatter_bwd_apply(SCATTER_BWD_APPLY_PARAMS) {
	if (LD32(err, 0) != ERR_NONE) {
		return;
	}
	const bool extremum = red == I64C(RED_AMAX) || red == I64C(RED_AMIN);
	EW_FOR(n, j)
		SB_POSITION(j)
		const i64 s = CAST(i64, LD64(perm, j));
		const T gv = LDV(g, dest);
		T q = gv;
		T self_g = gv;
		T src_g = gv;
		if (red != I64C(RED_SUM)) {
			const u32 c = LD32(aux, dest); /* 32-ok: the forward's hit count, < 2^32: the host refuses more positions (accel maxHits) */
			q = c == 0u ? SB_NAN : T_DIV(gv, CAST(T, c));
			self_g = q;
			src_g = q;
		}
		if (extremum) {
			const T r = LDV(res, dest);
			src_g = WRAP_MUL(sb_mask(T_EQ(LDV(src, s), r)), q);
			self_g = WRAP_MUL(sb_mask(T_EQ(LDV(self_in, dest), r)), q);
		}
		STV(gs, s, src_g);
		if (start) {
			STV(gi, dest, include_self != I64C(0) ? self_g : CAST(T, 0));
		}
	EW_END
}

INLINE void scatter_bwd_suffix(SCATTER_BWD_SUFFIX_PARAMS) {
	if (LD32(err, 0) != ERR_NONE) {
		return;
	}
	EW_FOR(n, j)
		SB_POSITION(j)
		if (j + I64C(1) < n && LD64(keys, j + I64C(1)) == key) {
			continue; /* not a run end */
		}
		const i64 from = j - step * limit;
		if (from < I64C(0) || LD64(keys, from) != key) {
			continue; /* finished in an earlier step */
		}
		T acc = step > I64C(0) ? LDV(aux, dest) : CAST(T, 1);
		const i64 to = max64(from - limit, I64C(-1));
		i64 k = from;
		for (; k > to; k--) {
			if (LD64(keys, k) != key) {
				break;
			}
			const i64 s = CAST(i64, LD64(perm, k));
			STV(gs, s, acc);
			acc = WRAP_MUL(acc, LDV(src, s));
		}
		STV(aux, dest, acc);
		if (k == to && k >= I64C(0) && LD64(keys, k) == key) {
			ST32(err, 1, 1u);
		}
	EW_END
}

INLINE void scatter_bwd_prefix(SCATTER_BWD_PREFIX_PARAMS) {
	if (LD32(err, 0) != ERR_NONE) {
		return;
	}
	EW_FOR(n, j)
		SB_POSITION(j)
		if (!start) {
			continue;
		}
		const i64 from = j + step * limit;
		if (from >= n || LD64(keys, from) != key) {
			continue; /* finished in an earlier step */
		}
		const T gv = LDV(g, dest);
		T acc = CAST(T, 1);
		if (step > I64C(0)) {
			acc = LDV(aux, dest);
		} else if (include_self != I64C(0)) {
			STV(gi, dest, WRAP_MUL(gv, WRAP_MUL(acc, LDV(aux, dest))));
			acc = WRAP_MUL(acc, LDV(self_in, dest));
		} else {
			STV(gi, dest, CAST(T, 0));
		}
		const i64 to = min64(from + limit, n);
		i64 k = from;
		for (; k < to; k++) {
			if (LD64(keys, k) != key) {
				break;
			}
			const i64 s = CAST(i64, LD64(perm, k));
			STV(gs, s, WRAP_MUL(gv, WRAP_MUL(acc, LDV(gs, s))));
			acc = WRAP_MUL(acc, LDV(src, s));
		}
		STV(aux, dest, acc);
		if (k == to && k < n && LD64(keys, k) == key) {
			ST32(err, 1, 1u);
		}
	EW_END
}

#endif
