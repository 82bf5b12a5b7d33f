/* reduce_ops.h: the reductions of scatter_reduce, put_along_axis and the
 * segmented reductions, shared by both kernel languages: identities and the
 * fold step (the codes RED_* are declared in host/kernels). Include after
 * dtypes.h (T, T_LOWEST, T_HIGHEST, WRAP_ADD, WRAP_MUL) and the kernel's
 * generated header. */
#ifndef ACCEL_REDUCE_OPS_H
#define ACCEL_REDUCE_OPS_H

T sc_identity(i64 red) {
	if (red == I64C(RED_PROD)) {
		return CAST(T, 1);
	}
	if (red == I64C(RED_AMAX)) {
		return T_LOWEST;
	}
	if (red == I64C(RED_AMIN)) {
		return T_HIGHEST;
	}
	return CAST(T, 0);
}

/* Folds v into acc; NaN wins in amax/amin, and between equal values
 * (-0 and +0 among them) acc stays (dtypes.h's comparisons, on bits in
 * GLSL). */
T sc_combine(T acc, T v, i64 red) {
	if (red == I64C(RED_SUM) || red == I64C(RED_MEAN)) {
		return WRAP_ADD(acc, v);
	}
	if (red == I64C(RED_PROD)) {
		return WRAP_MUL(acc, v);
	}
	if (T_IS_NAN(v)) {
		return v;
	}
	if (T_IS_NAN(acc)) {
		return acc;
	}
	if (red == I64C(RED_AMAX)) {
		return T_SEL(T_GT(v, acc), v, acc);
	}
	return T_SEL(T_LT(v, acc), v, acc);
}

/* One step of an in-order fold: assign keeps the later value, every other
 * reduction combines (sc_combine). */
T sc_fold(T acc, T v, i64 red) {
	return red == I64C(RED_ASSIGN) ? v : sc_combine(acc, v, red);
}

#endif
