package accel

import (
	"fmt"

	"github.com/accelkern/accel/reference"
)

// index_add and index_reduce: scatter reductions whose index is 1-D along
// dim (target of source's slice i is input's slice index[i]). They run on
// the scatter family's plans and kernels: the index is read through a
// stride of 0 in every dim but dim, so no expanded index is ever built.

// newIndexGeom validates index_reduce's arguments and lays out its
// scatter: the loop over source's positions, the index read at p[dim].
func newIndexGeom(op string, inShape []int64, inDT DType, dim int64, idxShape []int64, idxDT DType,
	srcShape []int64, srcDT DType, reduce Reduction) (scatterGeom, error) {
	var g scatterGeom
	if !reduce.valid() || reduce == Assign {
		return g, argErr(op, "reduce", reduce, "one of Sum, Prod, Mean, Amax, Amin", ErrInvalidArgument)
	}
	g.red = reduce
	if err := scatterDTypes(op, inDT, idxDT, srcDT, "source"); err != nil {
		return g, err
	}
	if len(idxShape) > 1 {
		return g, argErr(op, "index", fmt.Sprintf("shape %v", idxShape), "1-D (or 0-d)", ErrInvalidArgument)
	}
	if len(srcShape) != len(inShape) {
		return g, argErr(op, "source", fmt.Sprintf("rank %d", len(srcShape)), fmt.Sprintf("the input's rank %d", len(inShape)), ErrInvalidArgument)
	}
	inShape, idxShape, srcShape = norm0d(inShape), norm0d(idxShape), norm0d(srcShape)
	d, err := wrapDim(op, "dim", dim, len(inShape))
	if err != nil {
		return g, err
	}
	for k := range srcShape {
		if k == d && srcShape[k] != idxShape[0] {
			return g, argErr(op, "source", fmt.Sprintf("shape %v", srcShape),
				fmt.Sprintf("size %d in dim %d, the index's length", idxShape[0], d), ErrInvalidArgument)
		}
		if k != d && srcShape[k] != inShape[k] {
			return g, argErr(op, "source", fmt.Sprintf("shape %v", srcShape),
				fmt.Sprintf("the input's shape %v in every dim but dim %d (dim %d)", inShape, d, k), ErrInvalidArgument)
		}
	}
	g.dim = d
	g.inShape, g.idxShape, g.srcShape, g.loopShape = inShape, idxShape, srcShape, srcShape
	g.idxN, _ = NumElements(srcShape)
	idxSt := make([]int64, len(srcShape))
	idxSt[d] = 1
	g.setMeta(strides(inShape), strides(srcShape), idxSt)
	return g, nil
}

// IndexReduce is PyTorch's input.index_reduce(dim, index, source, reduce,
// include_self) with reduce Sum (index_add), Prod, Mean, Amax or Amin:
// index is 1-D int64 or int32 with source.size(dim) values in [0,
// input.size(dim)); source has input's shape in every other dim; slice i
// of source along dim is folded into slice index[i] of input. Rounding,
// means and NaNs are ScatterReduce's: float sums, products and means may
// differ from the reference's in rounding (IndexReduceDeterministic has
// its bits). An index out of range is an error naming it, found on the
// device; the op waits for the device once, at its end.
func (d *Device) IndexReduce(input *DeviceTensor, dim int64, index, source *DeviceTensor, reduce Reduction, includeSelf bool) (*DeviceTensor, error) {
	return d.indexReduce("index_reduce", input, dim, index, source, reduce, includeSelf, false)
}

// IndexReduceDeterministic is IndexReduce in the bit-reproducible mode:
// each target's values are folded in the order of source's positions
// (row-major), so the result has the scalar reference's bits on every
// device.
func (d *Device) IndexReduceDeterministic(input *DeviceTensor, dim int64, index, source *DeviceTensor, reduce Reduction, includeSelf bool) (*DeviceTensor, error) {
	return d.indexReduce("index_reduce", input, dim, index, source, reduce, includeSelf, true)
}

// IndexAdd is PyTorch's input.index_add(dim, index, source) (alpha 1:
// scale source first for another): IndexReduce with Sum and the input
// included.
func (d *Device) IndexAdd(input *DeviceTensor, dim int64, index, source *DeviceTensor) (*DeviceTensor, error) {
	return d.indexReduce("index_add", input, dim, index, source, Sum, true, false)
}

func (d *Device) indexReduce(op string, input *DeviceTensor, dim int64, index, source *DeviceTensor, reduce Reduction, includeSelf, det bool) (*DeviceTensor, error) {
	return d.scatterWith(op, input, index, source, "source", includeSelf, det, func(index *DeviceTensor) (scatterGeom, error) {
		return newIndexGeom(op, input.shape, input.dtype, dim, index.shape, index.dtype, source.shape, source.dtype, reduce)
	})
}

// RefIndexReduce computes index_reduce on the host with the scalar
// reference (index_add: reduce Sum, includeSelf true).
func RefIndexReduce(input *Tensor, dim int64, index, source *Tensor, reduce Reduction, includeSelf bool) (*Tensor, error) {
	const op = "index_reduce"
	index = hostIndex64(index) // int32 indices too (index.go)
	g, err := newIndexGeom(op, input.shape, input.dtype, dim, index.shape, index.dtype, source.shape, source.dtype, reduce)
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
		copy(out.Int32s(), reference.IndexReduce(input.Int32s(), g.inShape, g.dim, idx, source.Int32s(), g.srcShape, red, includeSelf))
	case Int64:
		copy(out.Int64s(), reference.IndexReduce(input.Int64s(), g.inShape, g.dim, idx, source.Int64s(), g.srcShape, red, includeSelf))
	case Float32:
		copy(out.Float32s(), reference.IndexReduce(input.Float32s(), g.inShape, g.dim, idx, source.Float32s(), g.srcShape, red, includeSelf))
	case Float64:
		copy(out.Float64s(), reference.IndexReduce(input.Float64s(), g.inShape, g.dim, idx, source.Float64s(), g.srcShape, red, includeSelf))
	}
	return out, nil
}
