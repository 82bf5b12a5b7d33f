package accel

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrMismatch: Compare found tensors that differ.
var ErrMismatch = errors.New("mismatch")

// Tolerance says how Compare matches float elements. The zero value, Bits,
// asks for the same bits (any NaN matches any NaN, whose payload hardware
// picks; -0 and +0 differ). A non-zero one matches got to want where
// |got-want| <= Abs + Rel*|want|, equal infinities, or both NaN.
// Integers always match exactly.
type Tolerance struct {
	Rel float64 // relative to |want|
	Abs float64 // absolute
}

// Bits is the exact tolerance: the same bits, NaN matching NaN.
var Bits = Tolerance{}

// Compare checks got against want, as the library's tests check results
// against the scalar reference (RefX functions and package reference): the
// same dtype and shape, and every element within tol. It returns nil, or
// an error wrapping ErrMismatch that names the first differing element
// (its flat position and coordinates), its value and the wanted one.
func Compare(got, want *Tensor, tol Tolerance) error {
	const op = "compare"
	if got == nil || want == nil {
		return argErr(op, "got/want", "nil", "two tensors", ErrInvalidArgument)
	}
	if got.dtype != want.dtype {
		return fmt.Errorf("%s: dtype %s, want %s: %w", op, got.dtype, want.dtype, ErrMismatch)
	}
	if !slices.Equal(got.shape, want.shape) {
		return fmt.Errorf("%s: shape %v, want %v: %w", op, got.shape, want.shape, ErrMismatch)
	}
	diff := func(i int64, g, w any) error {
		return fmt.Errorf("%s: element %d %v = %v, want %v (tolerance %+v): %w", op, i, unravel(i, want.shape), g, w, tol, ErrMismatch)
	}
	match := func(g, w float64, gb, wb uint64) bool {
		if math.IsNaN(g) || math.IsNaN(w) {
			return math.IsNaN(g) && math.IsNaN(w)
		}
		if tol == Bits {
			return gb == wb
		}
		if math.IsInf(g, 0) || math.IsInf(w, 0) {
			return g == w
		}
		return math.Abs(g-w) <= tol.Abs+tol.Rel*math.Abs(w)
	}
	switch want.dtype {
	case Float32:
		gs, ws := got.Float32s(), want.Float32s()
		for i, w := range ws {
			g := gs[i]
			if !match(float64(g), float64(w), uint64(math.Float32bits(g)), uint64(math.Float32bits(w))) {
				return diff(int64(i), g, w)
			}
		}
	case Float64:
		gs, ws := got.Float64s(), want.Float64s()
		for i, w := range ws {
			g := gs[i]
			if !match(g, w, math.Float64bits(g), math.Float64bits(w)) {
				return diff(int64(i), g, w)
			}
		}
	case Int32:
		gs, ws := got.Int32s(), want.Int32s()
		for i, w := range ws {
			if gs[i] != w {
				return diff(int64(i), gs[i], w)
			}
		}
	case Int64:
		gs, ws := got.Int64s(), want.Int64s()
		for i, w := range ws {
			if gs[i] != w {
				return diff(int64(i), gs[i], w)
			}
		}
	default:
		for i := range want.data {
			if got.data[i] != want.data[i] {
				return fmt.Errorf("%s: byte %d = %#x, want %#x: %w", op, i, got.data[i], want.data[i], ErrMismatch)
			}
		}
	}
	return nil
}

// unravel returns the coordinates of flat position i in shape.
func unravel(i int64, shape []int64) []int64 {
	c := make([]int64, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			c[d] = i % shape[d]
			i /= shape[d]
		}
	}
	return c
}
