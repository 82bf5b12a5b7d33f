/* arith.h: every integer division and remainder of the kernels, and the
 * float32 division computed in integers, for both languages (portable.h
 * includes it). Shared bodies and wrappers never
 * write / or % themselves (TestNoRawDivision in clkernels fails on one
 * outside this header and dtypes.h's T_DIV): GLSL leaves % undefined where
 * an operand is negative, and drivers differ (NVIDIA's Vulkan compiler
 * floored an integer mean of -5 / 2 to -2 where lavapipe gave -3), so each
 * call site says which division it means:
 *
 *   udiv64, umod64, cdiv64   operands known non-negative (sizes, counts,
 *                            positions): computed unsigned, so their bits
 *                            are defined whatever the operands
 *   udiv32, umod32           the same on 32-bit words
 *   floordiv64, floormod64   any signs: the quotient rounds toward
 *                            negative infinity and the remainder takes
 *                            the divisor's sign (Python's // and %),
 *                            computed on magnitudes, unsigned
 *   fdiv32_bits              float32 division on the values' bits, in
 *                            integers: correctly rounded on every device
 *                            (dtypes.h's T_DIV)
 *   fadd32_fix, fmul32_fix   a float32 sum or product the device computed,
 *                            redone in integers where subnormals were at
 *                            stake (dtypes.h's T_ADD, T_MUL on devices
 *                            that flush them)
 *
 * A divisor of 0 gives whatever the device's unsigned division gives; the
 * host never launches one (the planners and argument checks see to it). */
#ifndef ACCEL_ARITH_H
#define ACCEL_ARITH_H

i64 udiv64(i64 a, i64 b) { return CAST(i64, CAST(u64, a) / CAST(u64, b)); }
i64 umod64(i64 a, i64 b) { return CAST(i64, CAST(u64, a) % CAST(u64, b)); }
u32 udiv32(u32 a, u32 b) { return a / b; } /* 32-ok: 32-bit operands by contract (ip_div checks both < 2^32) */
u32 umod32(u32 a, u32 b) { return a % b; } /* 32-ok: 32-bit operands by contract (ip_div checks both < 2^32) */

/* The int32 value of a 32-bit word, as an int64: the sign extended by
 * arithmetic from the zero-extended word (lavapipe on Mesa 22.3 compiled
 * int64_t(int(w)) to a zero extension in places, so the sparse kernels
 * read an index of -1 as 4294967295 and let it pass their range check:
 * the soak's find). */
i64 sext32(u32 w) { /* 32-ok: a 32-bit word, its int32 value sign-extended to 64 bits */
	const i64 u = CAST(i64, w);
	return u >= (I64C(1) << 31) ? u - (I64C(1) << 32) : u;
}

/* ceil(a / b) for a >= 0, b > 0 (a + b - 1 below 2^63). */
i64 cdiv64(i64 a, i64 b) { return udiv64(a + b - I64C(1), b); }

/* floor(a / b) for any signs, b != 0. */
i64 floordiv64(i64 a, i64 b) {
	const u64 ua = a < I64C(0) ? CAST(u64, 0) - CAST(u64, a) : CAST(u64, a);
	const u64 ub = b < I64C(0) ? CAST(u64, 0) - CAST(u64, b) : CAST(u64, b);
	const u64 q = ua / ub;
	if ((a < I64C(0)) != (b < I64C(0))) {
		/* -(q + 1) where the division left a remainder, else -q */
		const u64 up = ua - q * ub != CAST(u64, 0) ? CAST(u64, 1) : CAST(u64, 0);
		return CAST(i64, CAST(u64, 0) - q - up);
	}
	return CAST(i64, q);
}

/* a - floor(a / b) * b for any signs, b != 0: 0 or the sign of b. */
i64 floormod64(i64 a, i64 b) {
	return CAST(i64, CAST(u64, a) - CAST(u64, floordiv64(a, b)) * CAST(u64, b));
}

/* The bits of a / b for the float32 values with bits a and b: IEEE 754
 * division rounded to nearest, ties to even, subnormals included, computed
 * in integers only, so that no device's float division (GPUs: within 2.5
 * ulp), float64 division (lavapipe's, rounded to float32, was 1 ulp off)
 * or float rules (flushing subnormals, folding NaNs) can change a bit.
 * NaN results follow x86's SSE, the reference's machine: a NaN operand
 * comes back quieted (the first one), an invalid quotient (0/0, inf/inf)
 * is the default NaN 0xffc00000. One 64-bit integer division: the
 * significands' quotient to 40-41 bits, and its remainder for the sticky
 * bit. */
u32 fdiv32_bits(u32 a, u32 b) { /* 32-ok: float32 bits */
	const u32 sign = (a ^ b) & 0x80000000u; /* 32-ok: float32 bits */
	const u32 ea = (a >> 23) & 0xffu; /* 32-ok: float32 bits */
	const u32 eb = (b >> 23) & 0xffu; /* 32-ok: float32 bits */
	u32 ma = a & 0x7fffffu; /* 32-ok: float32 bits */
	u32 mb = b & 0x7fffffu; /* 32-ok: float32 bits */
	if (ea == 0xffu) {
		if (ma != 0u) {
			return a | 0x400000u; /* NaN / x */
		}
		if (eb == 0xffu) {
			return mb != 0u ? (b | 0x400000u) : 0xffc00000u; /* inf / NaN, inf / inf */
		}
		return sign | 0x7f800000u; /* inf / finite */
	}
	if (eb == 0xffu) {
		return mb != 0u ? (b | 0x400000u) : sign; /* finite / NaN, finite / inf */
	}
	if (eb == 0u && mb == 0u) {
		return (ea == 0u && ma == 0u) ? 0xffc00000u : (sign | 0x7f800000u); /* 0 / 0, x / 0 */
	}
	if (ea == 0u && ma == 0u) {
		return sign; /* 0 / y */
	}
	/* significands in [2^23, 2^24), exponents unbiased by one scale */
	int xa = CAST(int, ea); /* 32-ok: an exponent, < 256 */
	int xb = CAST(int, eb); /* 32-ok: an exponent, < 256 */
	if (ea == 0u) {
		const int s = CLZ32(ma) - 8; /* 32-ok: a shift, < 32 */
		ma = ma << CAST(u32, s); /* 32-ok: a shift, < 32 */
		xa = 1 - s;
	} else {
		ma = ma | 0x800000u;
	}
	if (eb == 0u) {
		const int s = CLZ32(mb) - 8; /* 32-ok: a shift, < 32 */
		mb = mb << CAST(u32, s); /* 32-ok: a shift, < 32 */
		xb = 1 - s;
	} else {
		mb = mb | 0x800000u;
	}
	/* q = ma * 2^40 / mb in [2^39, 2^41); the quotient's value is
	 * q * 2^(xa - xb - 40) */
	const u64 n = CAST(u64, ma) << 40;
	const u64 q = n / CAST(u64, mb);
	const bool sticky = n - q * CAST(u64, mb) != CAST(u64, 0);
	const bool wide = q >= (CAST(u64, 1) << 40);
	int e = xa - xb + (wide ? 127 : 126); /* the biased exponent; 32-ok: an exponent, |e| < 512 */
	int drop = wide ? 17 : 16;            /* q's bits below the 24 kept; 32-ok: a bit count, < 64 */
	if (e <= 0) {
		/* subnormal: drop as many bits more, exponent field 0 */
		drop += 1 - e;
		e = 1;
		if (drop > 41) {
			return sign; /* below half the least subnormal: rounds to 0 */
		}
	}
	if (e >= 255) {
		return sign | 0x7f800000u;
	}
	u64 kept = q >> CAST(u32, drop); /* 32-ok: a bit count, < 64 */
	const u64 rest = q & ((CAST(u64, 1) << CAST(u32, drop)) - CAST(u64, 1)); /* 32-ok: a bit count, < 64 */
	const u64 mid = CAST(u64, 1) << CAST(u32, drop - 1); /* 32-ok: a bit count, < 64 */
	if (rest > mid || (rest == mid && (sticky || (kept & CAST(u64, 1)) != CAST(u64, 0)))) {
		kept = kept + CAST(u64, 1);
	}
	/* kept holds the implicit bit for normal results, so the exponent
	 * field adds up (a rounding carry into 2^24 moves it up one, past 254
	 * to infinity; a subnormal rounding up to 2^23 becomes the least
	 * normal) */
	const u32 bits = (CAST(u32, e - 1) << 23) + CAST(u32, kept); /* 32-ok: float32 bits */
	return sign | min(bits, 0x7f800000u);
}

/* The bit length of m (0 for 0). */
int bitlen64(u64 m) { /* 32-ok: a bit count, <= 64 */
	const u32 hi = CAST(u32, m >> 32); /* 32-ok: the high word */
	return hi != 0u ? 64 - CLZ32(hi) : 32 - CLZ32(CAST(u32, m)); /* 32-ok: the low word */
}

/* The float32 bits of sign | m * 2^(k - 149), m < 2^50, rounded to
 * nearest, ties to even, subnormals included (k = 0: m counts the least
 * subnormal). */
u32 f32_round(u32 sign, u64 m, int k) { /* 32-ok: float32 bits, an exponent */
	if (m == CAST(u64, 0)) {
		return sign;
	}
	int drop = bitlen64(m) - 24; /* m's bits below the 24 kept; 32-ok: a bit count, |drop| < 64 */
	int e = drop + k + 1;        /* the biased exponent; 32-ok: an exponent, |e| < 1024 */
	if (e <= 0) {
		/* subnormal: units of 2^-149, exponent field 0 */
		drop = -k;
		e = 1;
		if (drop > 50) {
			return sign; /* below half the least subnormal: rounds to 0 */
		}
	}
	if (e >= 255) {
		return sign | 0x7f800000u;
	}
	u64 kept;
	if (drop <= 0) {
		kept = m << CAST(u32, -drop); /* exact; 32-ok: a bit count, < 64 */
	} else {
		kept = m >> CAST(u32, drop); /* 32-ok: a bit count, < 64 */
		const u64 rest = m & ((CAST(u64, 1) << CAST(u32, drop)) - CAST(u64, 1)); /* 32-ok: a bit count, < 64 */
		const u64 mid = CAST(u64, 1) << CAST(u32, drop - 1); /* 32-ok: a bit count, < 64 */
		if (rest > mid || (rest == mid && (kept & CAST(u64, 1)) != CAST(u64, 0))) {
			kept = kept + CAST(u64, 1);
		}
	}
	/* as fdiv32_bits: a carry moves the exponent field up */
	const u32 bits = (CAST(u32, e - 1) << 23) + CAST(u32, kept); /* 32-ok: float32 bits */
	return sign | min(bits, 0x7f800000u);
}

/* Whether float32 bits b are a subnormal (not zero). */
bool f32_sub(u32 b) { return (b & 0x7f800000u) == 0u && (b & 0x7fffffu) != 0u; } /* 32-ok: float32 bits */

/* Whether the device's sum or product r of float32 bits a and b may have
 * lost a subnormal: an operand is one, or r is zero, subnormal or the
 * least normal binade (a flushed result, or one rounded up into the
 * normals) where neither operand is zero. */
bool f32_at_stake(u32 a, u32 b, u32 r) { /* 32-ok: float32 bits */
	return f32_sub(a) || f32_sub(b) ||
	       ((r & 0x7f800000u) <= 0x800000u && (a & 0x7fffffffu) != 0u && (b & 0x7fffffffu) != 0u);
}

/* The significand and the exponent scale of finite nonzero float32 bits
 * b: its value is f32_sig(b) * 2^(f32_exp(b) - 150). */
u32 f32_sig(u32 b) { return (b & 0x7f800000u) == 0u ? (b & 0x7fffffu) : ((b & 0x7fffffu) | 0x800000u); } /* 32-ok: float32 bits */
int f32_exp(u32 b) { /* 32-ok: float32 bits, an exponent */
	const int e = CAST(int, (b >> 23) & 0xffu); /* 32-ok: an exponent */
	return e == 0 ? 1 : e;
}

/* The bits of a + b for float32 bits a and b, given r, the bits of the
 * sum as the device computed it: r itself unless subnormals were at stake
 * (f32_at_stake), where a device without DenormPreserve flushes them to
 * zero (NVIDIA's Vulkan compiler: an operand or the result); then the sum
 * redone exactly in integers and rounded once. An infinite or NaN operand
 * keeps r (a subnormal cannot change it). */
u32 fadd32_fix(u32 a, u32 b, u32 r) { /* 32-ok: float32 bits */
	if (!f32_at_stake(a, b, r) || (a & 0x7f800000u) == 0x7f800000u || (b & 0x7f800000u) == 0x7f800000u) {
		return r;
	}
	const bool aBig = (a & 0x7fffffffu) >= (b & 0x7fffffffu);
	const u32 big = aBig ? a : b;   /* 32-ok: float32 bits */
	const u32 small = aBig ? b : a; /* 32-ok: float32 bits */
	if ((small & 0x7fffffffu) == 0u) {
		return big; /* x + 0 with x subnormal: x */
	}
	const int xb = f32_exp(big);   /* 32-ok: an exponent */
	const int xs = f32_exp(small); /* 32-ok: an exponent */
	if (xb - xs >= 26) {
		return big; /* small is under a quarter of big's last place: big */
	}
	/* both at small's scale, exactly: at most 24 + 25 bits */
	const u64 mb = CAST(u64, f32_sig(big)) << CAST(u32, xb - xs); /* 32-ok: a shift, < 26 */
	const u64 ms = CAST(u64, f32_sig(small));
	if (((big ^ small) & 0x80000000u) == 0u) {
		return f32_round(big & 0x80000000u, mb + ms, xs - 1);
	}
	/* opposite signs: |big| >= |small|, so mb >= ms; an exact zero is +0 */
	return f32_round(mb == ms ? 0u : (big & 0x80000000u), mb - ms, xs - 1);
}

/* The bits of a * b for float32 bits a and b, given r, the device's
 * product: as fadd32_fix. An infinity times a subnormal is that infinity
 * (a device flushing the subnormal made it NaN). */
u32 fmul32_fix(u32 a, u32 b, u32 r) { /* 32-ok: float32 bits */
	if (!f32_at_stake(a, b, r)) {
		return r;
	}
	const u32 sign = (a ^ b) & 0x80000000u; /* 32-ok: float32 bits */
	const bool anan = (a & 0x7fffffffu) > 0x7f800000u;
	const bool bnan = (b & 0x7fffffffu) > 0x7f800000u;
	if (anan || bnan) {
		return r;
	}
	if ((a & 0x7fffffffu) == 0x7f800000u || (b & 0x7fffffffu) == 0x7f800000u) {
		return sign | 0x7f800000u; /* at stake, so the other is a subnormal */
	}
	if ((a & 0x7fffffffu) == 0u || (b & 0x7fffffffu) == 0u) {
		return sign; /* 0 times a finite value */
	}
	return f32_round(sign, CAST(u64, f32_sig(a)) * CAST(u64, f32_sig(b)), f32_exp(a) + f32_exp(b) - 151);
}

#endif
