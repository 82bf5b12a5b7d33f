package accel

import (
	"fmt"
	"math"
	"strings"

	"github.com/accelkern/accel/reference"
)

// AxisNone as the axis of PutAlongAxis or TakeAlongAxis flattens the array
// first (NumPy's axis=None); indices must then be 1-d.
const AxisNone = math.MinInt64

// paddleReduce maps Paddle's reduction names to the package's.
var paddleReduce = map[string]string{
	"assign": ReduceAssign, "add": ReduceSum, "sum": ReduceSum, "mul": ReduceProd, "multiply": ReduceProd,
	"prod": ReduceProd, "mean": ReduceMean, "amax": ReduceAmax, "amin": ReduceAmin,
}

// newAlongGeom validates put/take_along_axis arguments (NumPy semantics:
// indices have arr's rank and broadcast against arr in the non-axis dims,
// values broadcast to that loop shape) and lays out the kernel metadata.
// valShape nil means take_along_axis (the output is the loop shape).
func newAlongGeom(op string, arrShape []int64, arrDT DType, axis int64, idxShape []int64, idxDT DType,
	valShape []int64, valDT DType, take bool, reduce string) (scatterGeom, error) {
	var g scatterGeom
	red, ok := paddleReduce[reduce]
	if !ok {
		return g, argErr(op, "reduce", fmt.Sprintf("%q", reduce), "one of assign, add, mul, mean, amax, amin", ErrInvalidArgument)
	}
	g.red, g.wrap = red, true
	switch arrDT {
	case Int32, Int64, Float32, Float64:
	default:
		return g, argErr(op, "arr", "dtype "+arrDT.String(), "int32, int64, float32 or float64", ErrUnsupported)
	}
	if idxDT != Int64 {
		return g, argErr(op, "indices", "dtype "+idxDT.String(), "int64", ErrInvalidArgument)
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
// flattens), reduced with reduce ("assign", "add", "mul", "mean", "amax",
// "amin") and includeSelf as in ScatterReduce. indices has arr's rank and
// broadcasts against arr outside axis; values broadcast to that shape;
// negative indices count once from the end.
func (d *Device) PutAlongAxis(arr, indices, values *DeviceTensor, axis int64, reduce string, includeSelf bool) (*DeviceTensor, error) {
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
	out, err := d.alloc(op, arr.dtype, arr.shape)
	if err != nil {
		return nil, err
	}
	if out.n > 0 {
		if _, err := d.h.Copy(out.raw(), 0, arr.raw(), 0, out.n*int64(arr.dtype.Size())); err != nil {
			out.Release()
			return nil, fmt.Errorf("accel: %s: copy arr: %w", op, err)
		}
	}
	if g.idxN > 0 {
		if _, err := d.scatterRun(op, g, out, indices, values, includeSelf, false, false); err != nil {
			out.Release()
			return nil, err
		}
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
	g, err := newAlongGeom(op, arr.shape, arr.dtype, axis, indices.shape, indices.dtype, nil, arr.dtype, true, "assign")
	if err != nil {
		return nil, err
	}
	if err := d.supportsScatter(op, arr.dtype); err != nil {
		return nil, err
	}
	out, err := d.alloc(op, arr.dtype, g.loopShape)
	if err != nil {
		return nil, err
	}
	if g.idxN > 0 {
		if _, err := d.scatterRun(op, g, arr, indices, out, false, true, false); err != nil {
			out.Release()
			return nil, err
		}
	}
	return out, nil
}

// PutAlongAxis computes put_along_axis on the host with the scalar
// reference (see Device.PutAlongAxis).
func PutAlongAxis(arr, indices, values *Tensor, axis int64, reduce string, includeSelf bool) (*Tensor, error) {
	const op = "put_along_axis"
	g, err := newAlongGeom(op, arr.shape, arr.dtype, axis, indices.shape, indices.dtype, values.shape, values.dtype, false, reduce)
	if err != nil {
		return nil, err
	}
	out := &Tensor{dtype: arr.dtype, shape: arr.Shape(), data: alignedBytes(int64(len(arr.data)))}
	var ok bool
	var bad int64
	switch arr.dtype {
	case Int32:
		var v []int32
		v, ok, bad = reference.PutAlongAxis(arr.Int32s(), g.inShape, indices.Int64s(), g.idxShape, values.Int32s(), values.shape, g.dim, g.red, includeSelf)
		copy(out.Int32s(), v)
	case Int64:
		var v []int64
		v, ok, bad = reference.PutAlongAxis(arr.Int64s(), g.inShape, indices.Int64s(), g.idxShape, values.Int64s(), values.shape, g.dim, g.red, includeSelf)
		copy(out.Int64s(), v)
	case Float32:
		var v []float32
		v, ok, bad = reference.PutAlongAxis(arr.Float32s(), g.inShape, indices.Int64s(), g.idxShape, values.Float32s(), values.shape, g.dim, g.red, includeSelf)
		copy(out.Float32s(), v)
	case Float64:
		var v []float64
		v, ok, bad = reference.PutAlongAxis(arr.Float64s(), g.inShape, indices.Int64s(), g.idxShape, values.Float64s(), values.shape, g.dim, g.red, includeSelf)
		copy(out.Float64s(), v)
	}
	if !ok {
		return nil, g.indexError(op, bad, indices.Int64s()[bad])
	}
	return out, nil
}

// TakeAlongAxis computes take_along_axis on the host with the scalar
// reference.
func TakeAlongAxis(arr, indices *Tensor, axis int64) (*Tensor, error) {
	const op = "take_along_axis"
	g, err := newAlongGeom(op, arr.shape, arr.dtype, axis, indices.shape, indices.dtype, nil, arr.dtype, true, "assign")
	if err != nil {
		return nil, err
	}
	out, err := NewTensor(arr.dtype, g.loopShape...)
	if err != nil {
		return nil, err
	}
	var ok bool
	var bad int64
	switch arr.dtype {
	case Int32, Float32:
		var v []uint32
		v, ok, bad = reference.TakeAlongAxis(words[uint32](arr), g.inShape, indices.Int64s(), g.idxShape, g.dim, out.Len())
		copy(words[uint32](out), v)
	default:
		var v []uint64
		v, ok, bad = reference.TakeAlongAxis(words[uint64](arr), g.inShape, indices.Int64s(), g.idxShape, g.dim, out.Len())
		copy(words[uint64](out), v)
	}
	if !ok {
		return nil, g.indexError(op, bad, indices.Int64s()[bad])
	}
	return out, nil
}

func parseAxis(p params) (int64, error) {
	if strings.EqualFold(strings.TrimSpace(p.vals["axis"]), "none") {
		return AxisNone, nil
	}
	return p.int64("axis")
}

func init() {
	register(&OpSpec{
		Name: "put_along_axis",
		Doc:  "put_along_axis(arr, indices, values, axis, reduce, include_self): Paddle's put_along_axis (NumPy semantics); taken = take_along_axis(out, indices, axis)",
		Params: []ParamSpec{
			{Name: "axis", Required: true, Doc: "the axis, or none to flatten"},
			{Name: "reduce", Default: "assign", Doc: "assign, add, mul, mean, amax or amin"},
			{Name: "include_self", Default: "true", Doc: "reduce arr's values too"},
		},
		Inputs:  []string{"arr", "indices", "values"},
		Outputs: []string{"out", "taken"},
		run: func(dev *Device, p params, in map[string]*Tensor) (map[string]*Tensor, error) {
			axis, err := parseAxis(p)
			if err != nil {
				return nil, err
			}
			self, err := p.bool("include_self")
			if err != nil {
				return nil, err
			}
			arr, idx, vals := in["arr"], in["indices"], in["values"]
			if dev == nil {
				out, err := PutAlongAxis(arr, idx, vals, axis, p.vals["reduce"], self)
				if err != nil {
					return nil, err
				}
				taken, err := TakeAlongAxis(out, idx, axis)
				return map[string]*Tensor{"out": out, "taken": taken}, err
			}
			if _, err := newAlongGeom("put_along_axis", arr.shape, arr.dtype, axis, idx.shape, idx.dtype, vals.shape, vals.dtype, false, p.vals["reduce"]); err != nil {
				return nil, err
			}
			ts, release, err := uploadAll(dev, arr, idx, vals)
			if err != nil {
				return nil, err
			}
			defer release()
			out, err := dev.PutAlongAxis(ts[0], ts[1], ts[2], axis, p.vals["reduce"], self)
			if err != nil {
				return nil, err
			}
			defer out.Release()
			taken, err := download(dev.TakeAlongAxis(out, ts[1], axis))
			if err != nil {
				return nil, err
			}
			h, err := out.ToHost()
			return map[string]*Tensor{"out": h, "taken": taken}, err
		},
	})
	register(&OpSpec{
		Name:    "take_along_axis",
		Doc:     "take_along_axis(arr, indices, axis): numpy.take_along_axis",
		Params:  []ParamSpec{{Name: "axis", Required: true, Doc: "the axis, or none to flatten"}},
		Inputs:  []string{"arr", "indices"},
		Outputs: []string{"out"},
		run: func(dev *Device, p params, in map[string]*Tensor) (map[string]*Tensor, error) {
			axis, err := parseAxis(p)
			if err != nil {
				return nil, err
			}
			if dev == nil {
				out, err := TakeAlongAxis(in["arr"], in["indices"], axis)
				return map[string]*Tensor{"out": out}, err
			}
			if _, err := newAlongGeom("take_along_axis", in["arr"].shape, in["arr"].dtype, axis, in["indices"].shape, in["indices"].dtype, nil, in["arr"].dtype, true, "assign"); err != nil {
				return nil, err
			}
			ts, release, err := uploadAll(dev, in["arr"], in["indices"])
			if err != nil {
				return nil, err
			}
			defer release()
			out, err := download(dev.TakeAlongAxis(ts[0], ts[1], axis))
			return map[string]*Tensor{"out": out}, err
		},
	})
}
