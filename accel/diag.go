package accel

import (
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
	"github.com/accelkern/accel/reference"
)

// diagGeom locates a diagonal inside a row-major tensor, in the form the
// kernel takes (see clkernels/common/diag_body.h).
type diagGeom struct {
	d1, d2     int
	L, count   int64
	base, dstr int64
	n1, n2     int64
	s0, s1, s2 int64
	diagShape  []int64
}

// newDiagGeom validates dims and computes the diagonal's geometry.
func newDiagGeom(op string, shape []int64, offset, dim1, dim2 int64) (diagGeom, error) {
	var g diagGeom
	if len(shape) < 2 {
		return g, argErr(op, "input", fmt.Sprintf("rank %d (shape %v)", len(shape), shape), "rank >= 2", ErrInvalidArgument)
	}
	var err error
	if g.d1, err = wrapDim(op, "dim1", dim1, len(shape)); err != nil {
		return g, err
	}
	if g.d2, err = wrapDim(op, "dim2", dim2, len(shape)); err != nil {
		return g, err
	}
	if g.d1 == g.d2 {
		return g, argErr(op, "dim2", fmt.Sprintf("%d (dim %d after wrapping, same as dim1 = %d)", dim2, g.d2, dim1), "a different dim from dim1", ErrInvalidArgument)
	}
	g.L = reference.DiagLen(shape[g.d1], shape[g.d2], offset)
	strides := strides(shape)
	lo, hi := min(g.d1, g.d2), max(g.d1, g.d2)
	// Coalesce the batch dims into three runs, each contiguous in the full
	// tensor: [0, lo), (lo, hi), (hi, rank).
	run := func(from, to int) (n, s int64) {
		n, s = 1, 0
		for k := from; k < to; k++ {
			n *= shape[k]
			s = strides[k]
		}
		return n, s
	}
	n0, s0 := run(0, lo)
	g.n1, g.s1 = run(lo+1, hi)
	g.n2, g.s2 = run(hi+1, len(shape))
	g.s0 = s0
	batch := n0 * g.n1 * g.n2
	g.count = batch * g.L
	for k := range shape {
		if k != g.d1 && k != g.d2 {
			g.diagShape = append(g.diagShape, shape[k])
		}
	}
	g.diagShape = append(g.diagShape, g.L)
	if g.L > 0 {
		row0, col0 := int64(0), offset
		if offset < 0 {
			row0, col0 = -offset, 0
		}
		g.base = row0*strides[g.d1] + col0*strides[g.d2]
		g.dstr = strides[g.d1] + strides[g.d2]
	}
	return g, nil
}

func checkDiagSrc(op string, g diagGeom, inDType DType, srcDType DType, srcShape []int64) error {
	if srcDType != inDType {
		return argErr(op, "src", "dtype "+srcDType.String(), "the input's dtype "+inDType.String(), ErrInvalidArgument)
	}
	if !sameShape(srcShape, g.diagShape) {
		return argErr(op, "src", fmt.Sprintf("shape %v", srcShape), fmt.Sprintf("shape %v, the diagonal's shape", g.diagShape), ErrInvalidArgument)
	}
	return nil
}

// diagScatterGeom checks diagonal_scatter's arguments (dtypes, dims,
// src's shape) and returns the diagonal's geometry.
func diagScatterGeom(op string, inDT DType, inShape []int64, srcDT DType, srcShape []int64, offset, dim1, dim2 int64) (diagGeom, error) {
	if err := checkDiagDType(op, inDT); err != nil {
		return diagGeom{}, err
	}
	g, err := newDiagGeom(op, inShape, offset, dim1, dim2)
	if err != nil {
		return g, err
	}
	return g, checkDiagSrc(op, g, inDT, srcDT, srcShape)
}

func checkDiagDType(op string, dt DType) error {
	switch dt {
	case Int32, Int64, Float32, Float64, Uint32, Uint64:
		return nil
	}
	return argErr(op, "input", "dtype "+dt.String(), "int32, int64, uint32, uint64, float32 or float64", ErrUnsupported)
}

// diagRun queues one pass of the diag kernel over g between the full and
// diagonal tensors on plan (diagPlan).
func (d *Device) diagRun(op string, plan host.Plan, g diagGeom, dt DType, call func(a diagArgs) host.Call) error {
	if g.count == 0 {
		return nil
	}
	variant := kernels.DiagW32
	if dt.Size() == 8 {
		variant = kernels.DiagW64
	}
	return d.launch(op, string(variant), plan, call(diagArgs{Count: g.count, L: g.L, Base: g.base,
		Dstride: g.dstr, N1: g.n1, N2: g.n2, S0: g.s0, S1: g.s1, S2: g.s2}))
}

// diagPlan plans g's diag passes and reports it with the op's traffic
// model t and least bytes.
func (d *Device) diagPlan(op string, g diagGeom, t func() traffic, minBytes int64) host.Plan {
	plan := d.plan(planDiag(d.caps, g.count))
	d.reportModel(op, "diag", plan, t, minBytes)
	return plan
}

// diagArgs are the geometry arguments every diag entry takes.
type diagArgs struct {
	Count, L, Base, Dstride, N1, N2, S0, S1, S2 int64
}

func diagScatter(full, diag host.Buffer) func(diagArgs) host.Call {
	return func(a diagArgs) host.Call {
		return kernels.DiagScatter{Full: full, Diag: diag, Count: a.Count, L: a.L, Base: a.Base, Dstride: a.Dstride,
			N1: a.N1, N2: a.N2, S0: a.S0, S1: a.S1, S2: a.S2}
	}
}

func diagGather(full, diag host.Buffer) func(diagArgs) host.Call {
	return func(a diagArgs) host.Call {
		return kernels.DiagGather{Full: full, Diag: diag, Count: a.Count, L: a.L, Base: a.Base, Dstride: a.Dstride,
			N1: a.N1, N2: a.N2, S0: a.S0, S1: a.S1, S2: a.S2}
	}
}

func diagZero(full host.Buffer) func(diagArgs) host.Call {
	return func(a diagArgs) host.Call {
		return kernels.DiagZero{Full: full, Count: a.Count, L: a.L, Base: a.Base, Dstride: a.Dstride,
			N1: a.N1, N2: a.N2, S0: a.S0, S1: a.S1, S2: a.S2}
	}
}

// DiagonalScatter returns a new tensor equal to input with src written onto
// the diagonal of dims dim1 and dim2 at offset, with PyTorch's semantics:
// src has input's shape without dim1 and dim2, with the diagonal's length
// appended (as torch.diagonal returns it). Negative dims count from the end;
// offsets beyond the matrix give an empty diagonal. Values are copied
// bit-exactly.
func (d *Device) DiagonalScatter(input, src *DeviceTensor, offset, dim1, dim2 int64) (*DeviceTensor, error) {
	return d.diagonalScatter(input, src, offset, dim1, dim2, false)
}

// DiagonalScatterInPlace writes src onto the diagonal of input itself.
func (d *Device) DiagonalScatterInPlace(input, src *DeviceTensor, offset, dim1, dim2 int64) error {
	_, err := d.diagonalScatter(input, src, offset, dim1, dim2, true)
	return err
}

func (d *Device) diagonalScatter(input, src *DeviceTensor, offset, dim1, dim2 int64, inPlace bool) (*DeviceTensor, error) {
	const op = "diagonal_scatter"
	if err := d.checkIn(op, "input", input); err != nil {
		return nil, err
	}
	if err := d.checkIn(op, "src", src); err != nil {
		return nil, err
	}
	g, err := diagScatterGeom(op, input.dtype, input.shape, src.dtype, src.shape, offset, dim1, dim2)
	if err != nil {
		return nil, err
	}
	if inPlace && src.raw() == input.raw() && g.count > 0 {
		return nil, argErr(op, "src", "the input tensor itself", "a different tensor from input", ErrInvalidArgument)
	}
	target := input
	fail := func(err error) (*DeviceTensor, error) {
		if !inPlace {
			target.Release()
		}
		return nil, err
	}
	if !inPlace {
		if target, err = d.alloc(op, input.dtype, input.shape); err != nil {
			return nil, err
		}
		if target.n > 0 {
			if err := d.copyBytes(op, target.raw(), 0, input.raw(), 0, target.n*int64(input.dtype.Size())); err != nil {
				return fail(err)
			}
		}
	}
	copied := int64(0)
	if !inPlace {
		copied = target.n * int64(input.dtype.Size())
	}
	e := int64(input.dtype.Size())
	plan := d.diagPlan(op, g, func() traffic { return diagTraffic(g.count, e, copied) }, diagMinBytes(g.count, e, copied))
	if err := d.diagRun(op, plan, g, input.dtype, diagScatter(target.raw(), src.raw())); err != nil {
		return fail(err)
	}
	if err := d.flush(op); err != nil {
		return fail(err)
	}
	return target, nil
}

// DiagonalScatterBackward returns the gradients of diagonal_scatter given
// the gradient of its output: gradInput is grad with the diagonal zeroed,
// gradSrc is the diagonal of grad.
func (d *Device) DiagonalScatterBackward(grad *DeviceTensor, offset, dim1, dim2 int64) (gradInput, gradSrc *DeviceTensor, err error) {
	const op = "diagonal_scatter_backward"
	if err := d.checkIn(op, "grad", grad); err != nil {
		return nil, nil, err
	}
	if err := checkDiagDType(op, grad.dtype); err != nil {
		return nil, nil, err
	}
	g, err := newDiagGeom(op, grad.shape, offset, dim1, dim2)
	if err != nil {
		return nil, nil, err
	}
	gs, err := d.alloc(op, grad.dtype, g.diagShape)
	if err != nil {
		return nil, nil, err
	}
	gi, err := d.alloc(op, grad.dtype, grad.shape)
	if err != nil {
		gs.Release()
		return nil, nil, err
	}
	fail := func(err error) (*DeviceTensor, *DeviceTensor, error) {
		gs.Release()
		gi.Release()
		return nil, nil, err
	}
	e, size := int64(grad.dtype.Size()), gi.n*int64(grad.dtype.Size())
	plan := d.diagPlan(op, g, func() traffic { return diagBackwardTraffic(g.count, e, size) }, diagBackwardMinBytes(g.count, e, size))
	if err := d.diagRun(op, plan, g, grad.dtype, diagGather(grad.raw(), gs.raw())); err != nil {
		return fail(err)
	}
	if err := d.copyBytes(op, gi.raw(), 0, grad.raw(), 0, size); err != nil {
		return fail(err)
	}
	if err := d.diagRun(op, plan, g, grad.dtype, diagZero(gi.raw())); err != nil {
		return fail(err)
	}
	if err := d.flush(op); err != nil {
		return fail(err)
	}
	return gi, gs, nil
}
