package reference

import (
	"cmp"
	"slices"
)

// Word is the element types the primitives take.
type Word interface {
	~int32 | ~int64 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Integer is the key types of Unique.
type Integer interface {
	~int32 | ~int64 | ~uint32 | ~uint64
}

// Cumsum returns the inclusive (or exclusive: starting from 0) prefix sums
// of x, added in order; integer sums wrap around.
func Cumsum[T Word](x []T, exclusive bool) []T {
	out := make([]T, len(x))
	var run T
	for i, v := range x {
		if exclusive {
			out[i] = run
			run += v
		} else {
			run += v
			out[i] = run
		}
	}
	return out
}

// Compact returns the elements of x where mask is true and their positions,
// in order (NumPy's x[mask] and nonzero(mask)).
func Compact[T any](x []T, mask []bool) ([]T, []int64) {
	vals := []T{}
	idx := []int64{}
	for i, m := range mask {
		if m {
			vals = append(vals, x[i])
			idx = append(idx, int64(i))
		}
	}
	return vals, idx
}

// compareNumPy orders as NumPy's sort: NaN after everything (all NaNs
// equal), -0.0 equal to 0.0.
func compareNumPy[T Word](a, b T) int {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// SortPerm returns the stable sorting permutation of keys: ascending in
// NumPy's order (-inf < ... < +inf < NaN, -0.0 equal to 0.0) or descending
// (NaN first); equal keys keep their input order either way.
func SortPerm[T Word](keys []T, descending bool) []int64 {
	perm := make([]int64, len(keys))
	for i := range perm {
		perm[i] = int64(i)
	}
	// Ties are broken by input position, so the order is total and any
	// sort gives the one stable permutation (pdqsort: O(n log n), where
	// sort.SliceStable's in-place merge is O(n log^2 n)).
	slices.SortFunc(perm, func(a, b int64) int {
		c := compareNumPy(keys[a], keys[b])
		if descending {
			c = -c
		}
		if c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return perm
}

// Unique returns the sorted distinct values of x, for each element the
// index of its value (inverse) and how often each value occurs (NumPy's
// unique with return_inverse and return_counts).
func Unique[T Integer](x []T) (values []T, inverse, counts []int64) {
	perm := SortPerm(x, false)
	values, inverse, counts = []T{}, make([]int64, len(x)), []int64{}
	for k, p := range perm {
		if k == 0 || x[p] != values[len(values)-1] {
			values = append(values, x[p])
			counts = append(counts, 0)
		}
		inverse[p] = int64(len(values) - 1)
		counts[len(counts)-1]++
	}
	return values, inverse, counts
}

// Segment reductions.
const (
	SegmentSum = "sum"
	SegmentMin = "min"
	SegmentMax = "max"
)

// SegmentReduce reduces values by segment id, in order: out[s] folds the
// values whose id is s; empty segments hold the identity (sum 0, min +inf
// or the dtype's max, max -inf or the dtype's min); min and max propagate
// NaN. ids must be sorted ascending and in [0, segments): otherwise ok is
// false and bad is the first offending position.
func SegmentReduce[T Number](values []T, ids []int64, reduce string, segments int64) (out []T, ok bool, bad int64) {
	red := map[string]string{SegmentSum: ReduceSum, SegmentMin: ReduceAmin, SegmentMax: ReduceAmax}[reduce]
	if red == "" {
		panic("reference: unknown segment reduce " + reduce)
	}
	for i, id := range ids {
		if id < 0 || id >= segments || (i > 0 && id < ids[i-1]) {
			return nil, false, int64(i)
		}
	}
	out = make([]T, segments)
	for s := range out {
		out[s] = identity[T](red)
	}
	for i, id := range ids {
		out[id] = combine(red, out[id], values[i])
	}
	return out, true, 0
}
