package accel

import (
	"fmt"
	"math"

	"github.com/accelkern/accel/host/kernels"
)

// AxisNone as the axis of PutAlongAxis or TakeAlongAxis flattens the array
// first (NumPy's axis=None); indices must then be 1-d.
const AxisNone = math.MinInt64

// newAlongGeom validates put/take_along_axis arguments (NumPy semantics:
// indices have arr's rank and broadcast against arr in the non-axis dims,
// values broadcast to that loop shape) and lays out the kernel metadata.
// valShape nil means take_along_axis (the output is the loop shape).
func newAlongGeom(op string, arrShape []int64, arrDT DType, axis int64, idxShape []int64, idxDT DType,
	valShape []int64, valDT DType, take bool, reduce Reduction) (scatterGeom, error) {
	var g scatterGeom
	if !reduce.valid() {
		return g, argErr(op, "reduce", reduce, "one of Assign, Sum (add), Prod (mul), Mean, Amax, Amin", ErrInvalidArgument)
	}
	g.red, g.wrap = reduce, true
	switch arrDT {
	case Int32, Int64, Float32, Float64:
	default:
		return g, argErr(op, "arr", "dtype "+arrDT.String(), "int32, int64, float32 or float64", ErrUnsupported)
	}
	if idxDT != Int64 && idxDT != Int32 {
		return g, argErr(op, "indices", "dtype "+idxDT.String(), "int32 or int64", ErrInvalidArgument)
	}
	if !take && valDT != arrDT {
		return g, argErr(op, "values", "dtype "+valDT.String(), "arr's dtype "+arrDT.String(), ErrInvalidArgument)
	}
	if axis == AxisNone {
		n, err := NumElements(arrShape)
		if err != nil {
			return g, err
		}
		if len(idxShape) != 1 {
			return g, argErr(op, "indices", fmt.Sprintf("shape %v", idxShape), "1-d when axis is None", ErrInvalidArgument)
		}
		arrShape, axis = []int64{n}, 0
	}
	if len(arrShape) == 0 {
		return g, argErr(op, "arr", "a 0-d array", "at least 1-d (or axis None)", ErrInvalidArgument)
	}
	if len(idxShape) != len(arrShape) {
		return g, argErr(op, "indices", fmt.Sprintf("rank %d (shape %v)", len(idxShape), idxShape),
			fmt.Sprintf("arr's rank %d", len(arrShape)), ErrInvalidArgument)
	}
	dim, err := wrapDim(op, "axis", axis, len(arrShape))
	if err != nil {
		return g, err
	}
	r := len(arrShape)
	loop := make([]int64, r)
	for k := 0; k < r; k++ {
		a, i := arrShape[k], idxShape[k]
		switch {
		case k == dim:
			loop[k] = i
		case a == i || i == 1:
			loop[k] = a
		case a == 1:
			loop[k] = i
		default:
			return g, argErr(op, "indices", fmt.Sprintf("shape %v", idxShape),
				fmt.Sprintf("broadcastable against arr's shape %v outside axis %d (dim %d: %d vs %d)", arrShape, dim, k, i, a), ErrInvalidArgument)
		}
	}
	bcast := func(shape []int64) []int64 { // strides, 0 where a size-1 dim is broadcast
		st := strides(shape)
		off := r - len(shape)
		out := make([]int64, r)
		for k := off; k < r; k++ {
			if shape[k-off] == 1 && loop[k] != 1 {
				st[k-off] = 0
			}
			out[k] = st[k-off]
		}
		return out
	}
	var srcSt []int64
	if take {
		srcSt = strides(loop)
		g.srcShape = loop
	} else {
		if len(valShape) > r {
			return g, argErr(op, "values", fmt.Sprintf("shape %v", valShape), fmt.Sprintf("broadcastable to %v", loop), ErrInvalidArgument)
		}
		off := r - len(valShape)
		for k, v := range valShape {
			if v != 1 && v != loop[k+off] {
				return g, argErr(op, "values", fmt.Sprintf("shape %v", valShape), fmt.Sprintf("broadcastable to %v", loop), ErrInvalidArgument)
			}
		}
		srcSt = bcast(valShape)
		g.srcShape = valShape
	}
	outSt := bcast(arrShape)
	outSt[dim] = strides(arrShape)[dim]
	g.dim, g.inShape, g.idxShape, g.loopShape = dim, arrShape, idxShape, loop
	g.idxN, _ = NumElements(loop)
	g.setMeta(outSt, srcSt, bcast(idxShape))
	return g, nil
}

// PutAlongAxis is Paddle's put_along_axis over NumPy semantics: a new
// tensor equal to arr with values put at indices along axis (AxisNone
// flattens), reduced with reduce (Assign, Sum (Paddle's "add"), Prod ("mul"), Mean,
// Amax, Amin) and includeSelf as in ScatterReduce. indices has arr's rank
// and broadcasts against arr outside axis (int64, or int32 as Paddle
// takes them); values broadcast to that shape; negative indices count once
// from the end.
func (d *Device) PutAlongAxis(arr, indices, values *DeviceTensor, axis int64, reduce Reduction, includeSelf bool) (*DeviceTensor, error) {
	const op = "put_along_axis"
	for _, a := range []struct {
		n string
		t *DeviceTensor
	}{{"arr", arr}, {"indices", indices}, {"values", values}} {
		if err := d.checkIn(op, a.n, a.t); err != nil {
			return nil, err
		}
	}
	g, err := newAlongGeom(op, arr.shape, arr.dtype, axis, indices.shape, indices.dtype, values.shape, values.dtype, false, reduce)
	if err != nil {
		return nil, err
	}
	if err := d.supportsScatter(op, arr.dtype); err != nil {
		return nil, err
	}
	indices, done, err := d.wideIndices(op, indices)
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := d.alloc(op, arr.dtype, arr.shape)
	if err != nil {
		return nil, err
	}
	if out.n > 0 {
		err = d.copyBytes(op, out.raw(), 0, arr.raw(), 0, out.n*int64(arr.dtype.Size()))
	}
	if err == nil && g.idxN > 0 {
		err = d.scatterRun(op, g, out, indices, values, includeSelf, false)
	}
	if err == nil {
		err = d.flush(op)
	}
	if err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// TakeAlongAxis is numpy.take_along_axis: the elements of arr at indices
// along axis (AxisNone flattens), in the broadcast shape of indices and arr.
func (d *Device) TakeAlongAxis(arr, indices *DeviceTensor, axis int64) (*DeviceTensor, error) {
	const op = "take_along_axis"
	if err := d.checkIn(op, "arr", arr); err != nil {
		return nil, err
	}
	if err := d.checkIn(op, "indices", indices); err != nil {
		return nil, err
	}
	g, err := newAlongGeom(op, arr.shape, arr.dtype, axis, indices.shape, indices.dtype, nil, arr.dtype, true, Assign)
	if err != nil {
		return nil, err
	}
	if err := d.supportsScatter(op, arr.dtype); err != nil {
		return nil, err
	}
	indices, done, err := d.wideIndices(op, indices)
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := d.alloc(op, arr.dtype, g.loopShape)
	if err != nil {
		return nil, err
	}
	if g.idxN > 0 {
		err = d.gatherRun(op, g, arr, indices, out)
	}
	if err == nil {
		err = d.flush(op)
	}
	if err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// wideIndices returns indices as int64: int64 ones as they are, int32 ones
// sign-extended into a temporary tensor on the device, which done
// releases (the kernels index in 64 bits).
func (d *Device) wideIndices(op string, indices *DeviceTensor) (*DeviceTensor, func(), error) {
	if indices.dtype == Int64 {
		return indices, func() {}, nil
	}
	w, err := d.alloc(op, Int64, indices.shape)
	if err != nil {
		return nil, nil, err
	}
	if w.n > 0 {
		if err := run(d, op, kernels.MoveW64, d.elementwise(op, w.n), kernels.MoveWiden{Dst: w.raw(), Src: indices.raw(), N: w.n}); err != nil {
			w.Release()
			return nil, nil, err
		}
	}
	return w, w.Release, nil
}
