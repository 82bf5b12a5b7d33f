package accel

import (
	"math"
	"unsafe"

	"github.com/accelkern/accel/reference"
)

// The reference entry points: each op computed on the host with the scalar
// reference (package reference), on host Tensors, with the device op's
// argument checks. They are the oracle of the tests and the CLI's
// reference backend.

// RefTrilIndices computes tril_indices on the host with the scalar
// reference (see Device.TrilIndices for the semantics).
func RefTrilIndices(rows, cols, offset int64, dtype DType) (*Tensor, error) {
	return refTriIndices(rows, cols, offset, false, dtype)
}

// RefTriuIndices computes triu_indices on the host with the scalar
// reference.
func RefTriuIndices(rows, cols, offset int64, dtype DType) (*Tensor, error) {
	return refTriIndices(rows, cols, offset, true, dtype)
}

func refTriIndices(rows, cols, offset int64, upper bool, dtype DType) (*Tensor, error) {
	l, err := newTriLayout(triOp(upper), rows, cols, offset, upper, dtype)
	if err != nil {
		return nil, err
	}
	if l.N > math.MaxInt32*4 {
		return nil, argErr(triOp(upper), "row*col", l.N, "at most 2^33 elements for the host reference", ErrTooLarge)
	}
	r, c := reference.TriIndices(rows, cols, offset, upper)
	out, err := NewTensor(dtype, 2, l.N)
	if err != nil {
		return nil, err
	}
	if dtype == Int64 {
		v := out.Int64s()
		copy(v, r)
		copy(v[l.N:], c)
	} else {
		v := out.Int32s()
		for i := range r {
			v[i] = int32(r[i])
			v[int(l.N)+i] = int32(c[i])
		}
	}
	return out, nil
}

// words views a tensor's bytes as its element-size words, for bit copies.
func words[T uint32 | uint64](t *Tensor) []T {
	var z T
	if len(t.data) == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&t.data[0])), len(t.data)/int(unsafe.Sizeof(z)))
}

// RefDiagonalScatter computes diagonal_scatter on the host with the scalar
// reference (see Device.DiagonalScatter).
func RefDiagonalScatter(input, src *Tensor, offset, dim1, dim2 int64) (*Tensor, error) {
	g, err := diagScatterGeom("diagonal_scatter", input.dtype, input.shape, src.dtype, src.shape, offset, dim1, dim2)
	if err != nil {
		return nil, err
	}
	out := &Tensor{dtype: input.dtype, shape: input.Shape(), data: alignedBytes(int64(len(input.data)))}
	if input.dtype.Size() == 8 {
		copy(words[uint64](out), reference.DiagonalScatter(words[uint64](input), input.shape, words[uint64](src), offset, g.d1, g.d2))
	} else {
		copy(words[uint32](out), reference.DiagonalScatter(words[uint32](input), input.shape, words[uint32](src), offset, g.d1, g.d2))
	}
	return out, nil
}

// RefDiagonalScatterBackward computes the gradients of diagonal_scatter on
// the host with the scalar reference (see Device.DiagonalScatterBackward).
func RefDiagonalScatterBackward(grad *Tensor, offset, dim1, dim2 int64) (gradInput, gradSrc *Tensor, err error) {
	const op = "diagonal_scatter_backward"
	if err := checkDiagDType(op, grad.dtype); err != nil {
		return nil, nil, err
	}
	g, err := newDiagGeom(op, grad.shape, offset, dim1, dim2)
	if err != nil {
		return nil, nil, err
	}
	gs, _ := NewTensor(grad.dtype, g.diagShape...)
	zeros, _ := NewTensor(grad.dtype, g.diagShape...)
	if grad.dtype.Size() == 8 {
		copy(words[uint64](gs), reference.Diagonal(words[uint64](grad), grad.shape, offset, g.d1, g.d2))
	} else {
		copy(words[uint32](gs), reference.Diagonal(words[uint32](grad), grad.shape, offset, g.d1, g.d2))
	}
	gi, err := RefDiagonalScatter(grad, zeros, offset, dim1, dim2)
	return gi, gs, err
}

// RefScatterReduce computes scatter_reduce on the host with the scalar
// reference, reducing in index order (see Device.ScatterReduce).
func RefScatterReduce(input *Tensor, dim int64, index, src *Tensor, reduce Reduction, includeSelf bool) (*Tensor, error) {
	if err := rejectAssign("scatter_reduce", reduce); err != nil {
		return nil, err
	}
	return refScatter("scatter_reduce", input, dim, index, src, reduce, includeSelf)
}

// RefScatter computes scatter on the host with the scalar reference; with
// duplicate indices the last in index order wins.
func RefScatter(input *Tensor, dim int64, index, src *Tensor) (*Tensor, error) {
	return refScatter("scatter", input, dim, index, src, Assign, true)
}

func refScatter(op string, input *Tensor, dim int64, index, src *Tensor, reduce Reduction, includeSelf bool) (*Tensor, error) {
	index = hostIndex64(index) // int32 indices too (index.go)
	g, err := newScatterGeom(op, input.shape, input.dtype, dim, index.shape, index.dtype, src.shape, src.dtype, reduce)
	if err != nil {
		return nil, err
	}
	idx := index.Int64s()
	if err := g.firstBadIndex(op, idx, 0); err != nil {
		return nil, err
	}
	out := &Tensor{dtype: input.dtype, shape: input.Shape(), data: alignedBytes(int64(len(input.data)))}
	red := reduce.ref()
	switch input.dtype {
	case Int32:
		copy(out.Int32s(), reference.ScatterReduce(input.Int32s(), g.inShape, g.dim, idx, g.idxShape, src.Int32s(), g.srcShape, red, includeSelf))
	case Int64:
		copy(out.Int64s(), reference.ScatterReduce(input.Int64s(), g.inShape, g.dim, idx, g.idxShape, src.Int64s(), g.srcShape, red, includeSelf))
	case Float32:
		copy(out.Float32s(), reference.ScatterReduce(input.Float32s(), g.inShape, g.dim, idx, g.idxShape, src.Float32s(), g.srcShape, red, includeSelf))
	case Float64:
		copy(out.Float64s(), reference.ScatterReduce(input.Float64s(), g.inShape, g.dim, idx, g.idxShape, src.Float64s(), g.srcShape, red, includeSelf))
	}
	return out, nil
}

// RefPutAlongAxis computes put_along_axis on the host with the scalar
// reference (see Device.PutAlongAxis).
func RefPutAlongAxis(arr, indices, values *Tensor, axis int64, reduce Reduction, includeSelf bool) (*Tensor, error) {
	const op = "put_along_axis"
	g, err := newAlongGeom(op, arr.shape, arr.dtype, axis, indices.shape, indices.dtype, values.shape, values.dtype, false, reduce)
	if err != nil {
		return nil, err
	}
	ix := int64sOf(indices)
	out := &Tensor{dtype: arr.dtype, shape: arr.Shape(), data: alignedBytes(int64(len(arr.data)))}
	var ok bool
	var bad int64
	red := g.red.ref()
	switch arr.dtype {
	case Int32:
		var v []int32
		v, ok, bad = reference.PutAlongAxis(arr.Int32s(), g.inShape, ix, g.idxShape, values.Int32s(), values.shape, g.dim, red, includeSelf)
		copy(out.Int32s(), v)
	case Int64:
		var v []int64
		v, ok, bad = reference.PutAlongAxis(arr.Int64s(), g.inShape, ix, g.idxShape, values.Int64s(), values.shape, g.dim, red, includeSelf)
		copy(out.Int64s(), v)
	case Float32:
		var v []float32
		v, ok, bad = reference.PutAlongAxis(arr.Float32s(), g.inShape, ix, g.idxShape, values.Float32s(), values.shape, g.dim, red, includeSelf)
		copy(out.Float32s(), v)
	case Float64:
		var v []float64
		v, ok, bad = reference.PutAlongAxis(arr.Float64s(), g.inShape, ix, g.idxShape, values.Float64s(), values.shape, g.dim, red, includeSelf)
		copy(out.Float64s(), v)
	}
	if !ok {
		return nil, g.indexError(op, bad, ix[bad])
	}
	return out, nil
}

// RefTakeAlongAxis computes take_along_axis on the host with the scalar
// reference.
func RefTakeAlongAxis(arr, indices *Tensor, axis int64) (*Tensor, error) {
	const op = "take_along_axis"
	g, err := newAlongGeom(op, arr.shape, arr.dtype, axis, indices.shape, indices.dtype, nil, arr.dtype, true, Assign)
	if err != nil {
		return nil, err
	}
	ix := int64sOf(indices)
	out, err := NewTensor(arr.dtype, g.loopShape...)
	if err != nil {
		return nil, err
	}
	var ok bool
	var bad int64
	switch arr.dtype {
	case Int32, Float32:
		var v []uint32
		v, ok, bad = reference.TakeAlongAxis(words[uint32](arr), g.inShape, ix, g.idxShape, g.dim, out.Len())
		copy(words[uint32](out), v)
	default:
		var v []uint64
		v, ok, bad = reference.TakeAlongAxis(words[uint64](arr), g.inShape, ix, g.idxShape, g.dim, out.Len())
		copy(words[uint64](out), v)
	}
	if !ok {
		return nil, g.indexError(op, bad, ix[bad])
	}
	return out, nil
}

// RefScatterReduceBackward computes scatter_reduce's result and gradients
// on the host with the scalar reference (see Device.ScatterReduceBackward).
func RefScatterReduceBackward(input *Tensor, dim int64, index, src *Tensor, reduce Reduction, includeSelf bool,
	gradOutput *Tensor) (out, gradInput, gradSrc *Tensor, err error) {
	const op = "scatter_reduce_backward"
	index = hostIndex64(index) // int32 indices too (index.go)
	g, err := scatterBwdGeom(op, input.shape, input.dtype, dim, index.shape, index.dtype, src.shape, src.dtype,
		reduce, gradOutput.shape, gradOutput.dtype)
	if err != nil {
		return nil, nil, nil, err
	}
	idx := index.Int64s()
	if err := g.firstBadIndex(op, idx, 0); err != nil {
		return nil, nil, nil, err
	}
	out, _ = NewTensor(input.dtype, input.Shape()...)
	gradInput, _ = NewTensor(input.dtype, input.Shape()...)
	gradSrc, _ = NewTensor(input.dtype, src.Shape()...)
	switch input.dtype {
	case Float32:
		refScatterBwd(input.Float32s, out.Float32s, gradInput.Float32s, gradSrc.Float32s, src.Float32s, gradOutput.Float32s, g, idx, includeSelf)
	case Float64:
		refScatterBwd(input.Float64s, out.Float64s, gradInput.Float64s, gradSrc.Float64s, src.Float64s, gradOutput.Float64s, g, idx, includeSelf)
	}
	return out, gradInput, gradSrc, nil
}

// refScatterBwd runs the reference backward on the element slices the
// getters return and copies its results into out, gradInput and gradSrc.
func refScatterBwd[T float32 | float64](input, out, gradInput, gradSrc, src, gradOutput func() []T,
	g scatterGeom, idx []int64, includeSelf bool) {
	o, gi, gs := reference.ScatterReduceBackward(input(), g.inShape, g.dim, idx, g.idxShape,
		src(), g.srcShape, g.red.ref(), includeSelf, gradOutput())
	copy(out(), o)
	copy(gradInput(), gi)
	copy(gradSrc(), gs)
}
