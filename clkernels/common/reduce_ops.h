/* reduce_ops.h: the reductions of scatter_reduce, put_along_axis and the
 * segmented reductions, shared by both kernel languages: codes, identities
 * and the fold step. Include after dtypes.h (T, T_LOWEST, T_HIGHEST,
 * WRAP_ADD, WRAP_MUL). */
#ifndef ACCEL_REDUCE_OPS_H
#define ACCEL_REDUCE_OPS_H

#define RED_ASSIGN 0
#define RED_SUM 1
#define RED_PROD 2
#define RED_MEAN 3
#define RED_AMAX 4
#define RED_AMIN 5

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

/* Folds v into acc; NaN wins in amax/amin (v != v is false for integers). */
T sc_combine(T acc, T v, i64 red) {
	if (red == I64C(RED_SUM) || red == I64C(RED_MEAN)) {
		return WRAP_ADD(acc, v);
	}
	if (red == I64C(RED_PROD)) {
		return WRAP_MUL(acc, v);
	}
	if (v != v) {
		return v;
	}
	if (acc != acc) {
		return acc;
	}
	if (red == I64C(RED_AMAX)) {
		return v > acc ? v : acc;
	}
	return v < acc ? v : acc;
}

#endif
