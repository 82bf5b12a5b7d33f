package accel

import (
	"fmt"

	"github.com/accelkern/accel/reference"
)

// The reference entry points of the primitives, computed on the host with
// the scalar reference: the oracle of the tests and the CLI's reference
// backend.

func refWords[R any](x *Tensor, f32 func([]float32) R, f64 func([]float64) R, i32 func([]int32) R, i64 func([]int64) R,
	u32 func([]uint32) R, u64 func([]uint64) R) R {
	switch x.dtype {
	case Float32:
		return f32(x.Float32s())
	case Float64:
		return f64(x.Float64s())
	case Int32:
		return i32(x.Int32s())
	case Int64:
		return i64(x.Int64s())
	case Uint32:
		return u32(x.Uint32s())
	}
	return u64(x.Uint64s())
}

func tensorOf[T any](dt DType, v []T) *Tensor {
	t, err := fromSlice(dt, []int64{int64(len(v))}, v)
	if err != nil {
		panic(err)
	}
	return t
}

// RefCumsum computes the prefix sums of x (flattened) on the host, adding in
// order (see Device.Cumsum).
func RefCumsum(x *Tensor, exclusive bool) (*Tensor, error) {
	if err := checkSortDType("cumsum", "x", x.dtype, false); err != nil {
		return nil, err
	}
	dt := x.dtype
	return refWords(x,
		func(v []float32) *Tensor { return tensorOf(dt, reference.Cumsum(v, exclusive)) },
		func(v []float64) *Tensor { return tensorOf(dt, reference.Cumsum(v, exclusive)) },
		func(v []int32) *Tensor { return tensorOf(dt, reference.Cumsum(v, exclusive)) },
		func(v []int64) *Tensor { return tensorOf(dt, reference.Cumsum(v, exclusive)) },
		func(v []uint32) *Tensor { return tensorOf(dt, reference.Cumsum(v, exclusive)) },
		func(v []uint64) *Tensor { return tensorOf(dt, reference.Cumsum(v, exclusive)) }), nil
}

// RefCompact selects the elements of x where mask is true on the host (see
// Device.Compact).
func RefCompact(x, mask *Tensor) (out, index *Tensor, err error) {
	if mask.dtype != Bool {
		return nil, nil, argErr("compact", "mask", "dtype "+mask.dtype.String(), "bool", ErrInvalidArgument)
	}
	if !sameShape(mask.shape, x.shape) {
		return nil, nil, argErr("compact", "mask", fmt.Sprintf("shape %v", mask.shape), fmt.Sprintf("x's shape %v", x.shape), ErrInvalidArgument)
	}
	m := make([]bool, len(mask.Bools()))
	for i, b := range mask.Bools() {
		m[i] = b != 0
	}
	size := int64(x.dtype.Size())
	var idx []int64
	for i, b := range m {
		if b {
			idx = append(idx, int64(i))
		}
	}
	out, err = NewTensor(x.dtype, int64(len(idx)))
	if err != nil {
		return nil, nil, err
	}
	for k, i := range idx {
		copy(out.data[int64(k)*size:int64(k+1)*size], x.data[i*size:(i+1)*size])
	}
	if idx == nil {
		idx = []int64{}
	}
	return out, tensorOf(Int64, idx), nil
}

// RefSort sorts keys (flattened) on the host with a stable sort in NumPy's
// order (see Device.Sort).
func RefSort(keys *Tensor, descending bool) (sorted, perm *Tensor, err error) {
	if err := checkSortDType("sort", "keys", keys.dtype, false); err != nil {
		return nil, nil, err
	}
	p := refWords(keys,
		func(v []float32) []int64 { return reference.SortPerm(v, descending) },
		func(v []float64) []int64 { return reference.SortPerm(v, descending) },
		func(v []int32) []int64 { return reference.SortPerm(v, descending) },
		func(v []int64) []int64 { return reference.SortPerm(v, descending) },
		func(v []uint32) []int64 { return reference.SortPerm(v, descending) },
		func(v []uint64) []int64 { return reference.SortPerm(v, descending) })
	sorted, err = NewTensor(keys.dtype, int64(len(p)))
	if err != nil {
		return nil, nil, err
	}
	size := int64(keys.dtype.Size())
	for k, i := range p {
		copy(sorted.data[int64(k)*size:int64(k+1)*size], keys.data[i*size:(i+1)*size])
	}
	return sorted, tensorOf(Int64, p), nil
}

// RefUnique computes the distinct values, inverse and counts of integer keys
// on the host (see Device.Unique).
func RefUnique(x *Tensor) (values, inverse, counts *Tensor, err error) {
	if err := checkSortDType("unique", "x", x.dtype, true); err != nil {
		return nil, nil, nil, err
	}
	switch x.dtype {
	case Int32:
		v, inv, c := reference.Unique(x.Int32s())
		return tensorOf(Int32, v), tensorOf(Int64, inv), tensorOf(Int64, c), nil
	case Int64:
		v, inv, c := reference.Unique(x.Int64s())
		return tensorOf(Int64, v), tensorOf(Int64, inv), tensorOf(Int64, c), nil
	case Uint32:
		v, inv, c := reference.Unique(x.Uint32s())
		return tensorOf(Uint32, v), tensorOf(Int64, inv), tensorOf(Int64, c), nil
	}
	v, inv, c := reference.Unique(x.Uint64s())
	return tensorOf(Uint64, v), tensorOf(Int64, inv), tensorOf(Int64, c), nil
}

// RefSegmentReduce reduces values by sorted segment id on the host, in
// order (see Device.SegmentReduce).
func RefSegmentReduce(values, segmentIDs *Tensor, reduce Reduction, numSegments int64) (*Tensor, error) {
	const op = "segment_reduce"
	segmentIDs = hostIndex64(segmentIDs) // int32 ids too (index.go)
	if err := checkSegmentArgs(op, values.dtype, values.shape, segmentIDs.dtype, segmentIDs.shape, reduce, numSegments); err != nil {
		return nil, err
	}
	ids := segmentIDs.Int64s()
	red := segmentRefNames[reduce]
	var out *Tensor
	ok, bad := true, int64(0)
	switch values.dtype {
	case Int32:
		var v []int32
		v, ok, bad = reference.SegmentReduce(values.Int32s(), ids, red, numSegments)
		out = tensorOf(Int32, v)
	case Int64:
		var v []int64
		v, ok, bad = reference.SegmentReduce(values.Int64s(), ids, red, numSegments)
		out = tensorOf(Int64, v)
	case Float32:
		var v []float32
		v, ok, bad = reference.SegmentReduce(values.Float32s(), ids, red, numSegments)
		out = tensorOf(Float32, v)
	default:
		var v []float64
		v, ok, bad = reference.SegmentReduce(values.Float64s(), ids, red, numSegments)
		out = tensorOf(Float64, v)
	}
	if !ok {
		return nil, badSegmentID(op, ids, bad, numSegments)
	}
	return out, nil
}
