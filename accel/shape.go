package accel

import "fmt"

// Shape helpers shared by the ops.

// strides returns the row-major element strides of shape.
func strides(shape []int64) []int64 {
	st := make([]int64, len(shape))
	s := int64(1)
	for k := len(shape) - 1; k >= 0; k-- {
		st[k] = s
		s *= shape[k]
	}
	return st
}

func sameShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// wrapDim checks dim, op's argument arg, against a rank and wraps a
// negative one.
func wrapDim(op, arg string, dim int64, rank int) (int, error) {
	r := int64(rank)
	if dim < -r || dim >= r {
		return 0, argErr(op, arg, dim, fmt.Sprintf("in [%d, %d) for a rank-%d input", -r, r, rank), ErrInvalidArgument)
	}
	if dim < 0 {
		dim += r
	}
	return int(dim), nil
}
