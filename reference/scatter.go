package reference

import "math"

// Number is the element types the scatter references take.
type Number interface {
	~int32 | ~int64 | ~float32 | ~float64
}

// Reductions of scatter_reduce.
const (
	ReduceAssign = "assign"
	ReduceSum    = "sum"
	ReduceProd   = "prod"
	ReduceMean   = "mean"
	ReduceAmax   = "amax"
	ReduceAmin   = "amin"
)

func isNaN[T Number](v T) bool { return v != v }

func isFloat[T Number]() bool {
	var one T = 1
	return one/2 != 0 // 0.5 for floats, 0 for integers
}

// combine folds v into acc in index order; integer sums and products wrap,
// amax/amin propagate NaN.
func combine[T Number](reduce string, acc, v T) T {
	switch reduce {
	case ReduceAssign:
		return v
	case ReduceSum, ReduceMean:
		return acc + v
	case ReduceProd:
		return acc * v
	case ReduceAmax:
		if isNaN(v) { // NaN propagates, as the device kernels fold it
			return v
		}
		if isNaN(acc) {
			return acc
		}
		if v > acc {
			return v
		}
		return acc
	case ReduceAmin:
		if isNaN(v) { // NaN propagates, as the device kernels fold it
			return v
		}
		if isNaN(acc) {
			return acc
		}
		if v < acc {
			return v
		}
		return acc
	}
	panic("reference: unknown reduce " + reduce)
}

// identity is the value a position hit with include_self=false starts from.
func identity[T Number](reduce string) T {
	switch reduce {
	case ReduceProd:
		return 1
	case ReduceAmax:
		if isFloat[T]() {
			return T(math.Inf(-1))
		}
		lo32, lo64 := int64(math.MinInt32), int64(math.MinInt64)
		var v T
		if _, ok := any(v).(int32); ok {
			return T(lo32)
		}
		return T(lo64)
	case ReduceAmin:
		if isFloat[T]() {
			return T(math.Inf(1))
		}
		hi32, hi64 := int64(math.MaxInt32), int64(math.MaxInt64)
		var v T
		if _, ok := any(v).(int32); ok {
			return T(hi32)
		}
		return T(hi64)
	}
	return 0
}

// floorDiv divides integers rounding toward negative infinity (-7/2 = -4)
// and floats exactly.
func floorDiv[T Number](a T, n int64) T {
	if isFloat[T]() {
		return a / T(n)
	}
	ai := int64(a) // exact: a is an int32 or int64 here
	q := ai / n
	if ai%n != 0 && (ai < 0) != (n < 0) {
		q--
	}
	return T(q)
}

// eachPosition calls f with the target offset (into input's shape) and the
// source offset (into src's shape) of every position of index, in index
// order: the target of position p is p with p[dim] := index[p].
func eachPosition(inShape []int64, dim int, index, idxShape, srcShape []int64, f func(o, s int64)) {
	inSt, srcSt := stridesOf(inShape), stridesOf(srcShape)
	total := int64(len(index))
	idx := make([]int64, len(idxShape))
	for lin := int64(0); lin < total; lin++ {
		rem := lin
		for k := len(idxShape) - 1; k >= 0; k-- {
			idx[k] = rem % idxShape[k]
			rem /= idxShape[k]
		}
		var o, s int64
		for k := range idxShape {
			s += idx[k] * srcSt[k]
			if k == dim {
				o += index[lin] * inSt[k]
			} else {
				o += idx[k] * inSt[k]
			}
		}
		f(o, s)
	}
}

func stridesOf(shape []int64) []int64 {
	st := make([]int64, len(shape))
	s := int64(1)
	for k := len(shape) - 1; k >= 0; k-- {
		st[k] = s
		s *= shape[k]
	}
	return st
}

// ScatterReduce is torch.Tensor.scatter_reduce(dim, index, src, reduce,
// include_self) (and scatter for reduce "assign"), reducing in index order
// (row-major over index), which makes it the bit-exact oracle of the
// deterministic mode. Shapes are row-major; index values must be in range
// (the caller validates). For "mean", positions hit by at least one index
// are divided by their count (plus one with include_self); integer means
// use floor division; positions never hit keep the input.
func ScatterReduce[T Number](input []T, inShape []int64, dim int, index []int64, idxShape []int64,
	src []T, srcShape []int64, reduce string, includeSelf bool) []T {
	return reduceInto(input, src, reduce, includeSelf, func(f func(o, s int64)) {
		eachPosition(inShape, dim, index, idxShape, srcShape, f)
	})
}

// reduceInto folds src into a copy of input at the (target, source)
// offset pairs each yields, in its order: a target hit for the first time
// starts from the reduction's identity without includeSelf; a mean divides
// each hit target by its count (plus one with includeSelf), integers with
// floor division.
func reduceInto[T Number](input, src []T, reduce string, includeSelf bool, each func(f func(o, s int64))) []T {
	out := append([]T(nil), input...)
	count := make([]int64, len(out))
	each(func(o, s int64) {
		if !includeSelf && count[o] == 0 && reduce != ReduceAssign {
			out[o] = identity[T](reduce)
		}
		count[o]++
		out[o] = combine(reduce, out[o], src[s])
	})
	if reduce == ReduceMean {
		for o, c := range count {
			if c == 0 {
				continue
			}
			if includeSelf {
				c++
			}
			out[o] = floorDiv(out[o], c)
		}
	}
	return out
}
