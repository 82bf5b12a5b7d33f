package reference

// DiagLen is the length of the diagonal of a matrix of n1 x n2 (the sizes
// along dim1 and dim2) at offset: elements (t, t+offset) when offset >= 0,
// (t-offset, t) when offset < 0, as torch.diagonal takes them.
func DiagLen(n1, n2, offset int64) int64 {
	var l int64
	if offset >= 0 {
		if offset >= n2 {
			return 0
		}
		l = min(n1, n2-offset)
	} else {
		if offset <= -n1 {
			return 0
		}
		l = min(n1+offset, n2)
	}
	return max(l, 0)
}

// DiagonalScatter returns a copy of in (shape, row-major, any element type)
// with src written onto the diagonal of dims d1 and d2 (already wrapped,
// d1 != d2) at offset; src has the shape of in without d1 and d2, with the
// diagonal's length appended. It walks every element of in, from the
// definition.
func DiagonalScatter[T any](in []T, shape []int64, src []T, offset int64, d1, d2 int) []T {
	out := append([]T(nil), in...)
	diagWalk(shape, offset, d1, d2, func(outIdx, srcIdx int64) { out[outIdx] = src[srcIdx] })
	return out
}

// Diagonal returns the diagonal of in as torch.diagonal does (batch dims
// first in order, the diagonal last), materialized.
func Diagonal[T any](in []T, shape []int64, offset int64, d1, d2 int) []T {
	n := DiagLen(shape[d1], shape[d2], offset)
	for i, s := range shape {
		if i != d1 && i != d2 {
			n *= s
		}
	}
	out := make([]T, n)
	diagWalk(shape, offset, d1, d2, func(outIdx, srcIdx int64) { out[srcIdx] = in[outIdx] })
	return out
}

// diagWalk calls f(index in the full tensor, index in the diagonal tensor)
// for every element on the diagonal, by enumerating every element of the
// full tensor and testing its multi-index.
func diagWalk(shape []int64, offset int64, d1, d2 int, f func(full, diag int64)) {
	total := int64(1)
	for _, s := range shape {
		total *= s
	}
	l := DiagLen(shape[d1], shape[d2], offset)
	idx := make([]int64, len(shape))
	for lin := int64(0); lin < total; lin++ {
		rem := lin
		for k := len(shape) - 1; k >= 0; k-- {
			idx[k] = rem % shape[k]
			rem /= shape[k]
		}
		if idx[d2]-idx[d1] != offset {
			continue
		}
		t := idx[d1]
		if offset < 0 {
			t = idx[d2]
		}
		// diagonal tensor index: batch dims in order, then t
		di := int64(0)
		for k := range shape {
			if k != d1 && k != d2 {
				di = di*shape[k] + idx[k]
			}
		}
		f(lin, di*l+t)
	}
}
