/* tri_math.h: row/column recovery for tril_indices and triu_indices,
 * shared by clkernels/tri_indices.cl and shaders/tri_indices.comp.
 *
 * The host (accel/tri.go) reduces (rows, cols, offset) to a layout of at
 * most three zones of rows, in order:
 *   lower (tril): `lead` empty rows, `n` trapezoid rows of lengths a, a+1, ...,
 *                 then full rows of length C;
 *   upper (triu): `lead` full rows of length C, `n` trapezoid rows of lengths
 *                 a, a-1, ..., then empty rows.
 * T is the trapezoid's element count. Every element index k is in [0, N),
 * N < 2^63, and every product below is bounded by N, so int64 never
 * overflows. Row recovery inside a trapezoid is integer-exact: a float
 * estimate of the quadratic's root is corrected by exact integer steps, so
 * no rounding can misplace an element at any size. */
#ifndef ACCEL_TRI_MATH_H
#define ACCEL_TRI_MATH_H

/* Start of row r in an increasing trapezoid whose first row has length a. */
i64 trap_start(i64 r, i64 a) { return r * a + ((r * (r - I64C(1))) >> 1); }

/* The row r in [0, n) of an increasing trapezoid (first length a >= 1)
 * holding element k, 0 <= k < trap_start(n, a). */
i64 trap_row(i64 k, i64 a, i64 n) {
	float fb = CAST(float, I64C(2) * a - I64C(1));
	float fk = CAST(float, k);
	/* S(r) = k  <=>  r^2 + (2a-1) r - 2k = 0; the positive root, written
	 * without cancellation: r = 4k / ((2a-1) + sqrt((2a-1)^2 + 8k)). */
	float est = (4.0f * fk) / (fb + sqrt(fb * fb + 8.0f * fk)); /* div-ok: an estimate, corrected in integers */
	i64 r = min64(max64(CAST(i64, est), I64C(0)), n - I64C(1));
	/* One exact integer Newton step removes the float's relative error
	 * (rows near r have length about a + r), then unit steps finish. */
	r = min64(max64(r + floordiv64(k - trap_start(r, a), a + r), I64C(0)), n - I64C(1));
	while (r > I64C(0) && trap_start(r, a) > k) {
		r -= I64C(1);
	}
	while (r + I64C(1) < n && trap_start(r + I64C(1), a) <= k) {
		r += I64C(1);
	}
	return r;
}

/* Length of row r. */
i64 tri_row_len(i64 r, i64 upper, i64 C, i64 lead, i64 n, i64 a) {
	if (r < lead) {
		return upper != I64C(0) ? C : I64C(0);
	}
	if (r < lead + n) {
		return upper != I64C(0) ? a - (r - lead) : a + (r - lead);
	}
	return upper != I64C(0) ? I64C(0) : C;
}

/* First column of row r that holds an element. */
i64 tri_col_start(i64 r, i64 upper, i64 C, i64 lead, i64 n, i64 a) {
	return upper != I64C(0) ? C - tri_row_len(r, upper, C, lead, n, a) : I64C(0);
}

/* Row of element k. */
i64 tri_row(i64 k, i64 upper, i64 C, i64 lead, i64 n, i64 a, i64 T) {
	if (upper != I64C(0)) {
		if (k < lead * C) {
			return udiv64(k, C);
		}
		/* Walk the decreasing trapezoid backwards: an increasing one whose
		 * first row has length b = a - n + 1. */
		i64 kr = T - I64C(1) - (k - lead * C);
		return lead + n - I64C(1) - trap_row(kr, a - n + I64C(1), n);
	}
	if (k < T) {
		return lead + trap_row(k, a, n);
	}
	return lead + n + udiv64(k - T, C);
}

/* Column of element k, given its row r. */
i64 tri_col(i64 k, i64 r, i64 upper, i64 C, i64 lead, i64 n, i64 a, i64 T) {
	if (upper != I64C(0)) {
		if (r < lead) {
			return k - r * C;
		}
		i64 kr = T - I64C(1) - (k - lead * C);
		i64 rr = lead + n - I64C(1) - r;
		return C - I64C(1) - (kr - trap_start(rr, a - n + I64C(1)));
	}
	if (r < lead + n) {
		return k - trap_start(r - lead, a);
	}
	return (k - T) - (r - lead - n) * C;
}

#endif
