package accel

import (
	"fmt"
	"unsafe"

	"github.com/accelkern/accel/host"
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

func checkDiagSrc(op string, g diagGeom, inDType DType, srcDType DType, srcShape []int64) error {
	if srcDType != inDType {
		return argErr(op, "src", "dtype "+srcDType.String(), "the input's dtype "+inDType.String(), ErrInvalidArgument)
	}
	if !sameShape(srcShape, g.diagShape) {
		return argErr(op, "src", fmt.Sprintf("shape %v", srcShape), fmt.Sprintf("shape %v, the diagonal's shape", g.diagShape), ErrInvalidArgument)
	}
	return nil
}

func checkDiagDType(op string, dt DType) error {
	switch dt {
	case Int32, Int64, Float32, Float64, Uint32, Uint64:
		return nil
	}
	return argErr(op, "input", "dtype "+dt.String(), "int32, int64, uint32, uint64, float32 or float64", ErrUnsupported)
}

// diagMode values, as in diag_body.h.
const (
	diagScatter = 0
	diagGather  = 1
	diagZero    = 2
)

// diagLaunch runs the diag kernel over g between full and diag tensors.
func (d *Device) diagLaunch(op string, g diagGeom, dt DType, full, diag host.Buffer, mode int64) (float64, error) {
	if g.count == 0 {
		return 0, nil
	}
	variant := "w32"
	if dt.Size() == 8 {
		variant = "w64"
	}
	spec := host.KernelSpec{File: "diag", Variant: variant, Entry: "diagonal"}
	plan := d.plan(host.PlanElementwise(op, d.caps, g.count))
	diagArg := host.U64(0)
	if diag != nil {
		diagArg = host.BufArg(diag)
	}
	secs, err := d.launch(spec, plan, host.BufArg(full), diagArg, host.I64(g.count), host.I64(g.L), host.I64(g.base),
		host.I64(g.dstr), host.I64(g.n1), host.I64(g.n2), host.I64(g.s0), host.I64(g.s1), host.I64(g.s2), host.I64(mode))
	if err != nil {
		return 0, fmt.Errorf("accel: %s: %w", op, err)
	}
	return secs, nil
}

func (d *Device) checkIn(op, arg string, t *DeviceTensor) error {
	if t == nil || t.buf == nil {
		return argErr(op, arg, "a released or nil tensor", "a live tensor", ErrClosed)
	}
	if t.dev != d {
		return argErr(op, arg, "a tensor of "+t.dev.String(), "a tensor of "+d.String(), ErrInvalidArgument)
	}
	return nil
}

// DiagonalScatter returns a new tensor equal to input with src written onto
// the diagonal of dims dim1 and dim2 at offset, with PyTorch's semantics:
// src has input's shape without dim1 and dim2, with the diagonal's length
// appended (as torch.diagonal returns it). Negative dims count from the end;
// offsets beyond the matrix give an empty diagonal. Values are copied
// bit-exactly.
func (d *Device) DiagonalScatter(input, src *DeviceTensor, offset, dim1, dim2 int64) (*DeviceTensor, error) {
	out, _, err := d.diagonalScatter(input, src, offset, dim1, dim2, false)
	return out, err
}

// DiagonalScatterInPlace writes src onto the diagonal of input itself.
func (d *Device) DiagonalScatterInPlace(input, src *DeviceTensor, offset, dim1, dim2 int64) error {
	_, _, err := d.diagonalScatter(input, src, offset, dim1, dim2, true)
	return err
}

func (d *Device) diagonalScatter(input, src *DeviceTensor, offset, dim1, dim2 int64, inPlace bool) (*DeviceTensor, float64, error) {
	const op = "diagonal_scatter"
	if err := d.checkIn(op, "input", input); err != nil {
		return nil, 0, err
	}
	if err := d.checkIn(op, "src", src); err != nil {
		return nil, 0, err
	}
	if err := checkDiagDType(op, input.dtype); err != nil {
		return nil, 0, err
	}
	g, err := newDiagGeom(op, input.shape, offset, dim1, dim2)
	if err != nil {
		return nil, 0, err
	}
	if err := checkDiagSrc(op, g, input.dtype, src.dtype, src.shape); err != nil {
		return nil, 0, err
	}
	if inPlace && src.raw() == input.raw() && g.count > 0 {
		return nil, 0, argErr(op, "src", "the input tensor itself", "a different tensor from input", ErrInvalidArgument)
	}
	target := input
	var secs float64
	if !inPlace {
		if target, err = d.alloc(op, input.dtype, input.shape); err != nil {
			return nil, 0, err
		}
		if target.n > 0 {
			dur, err := d.h.Copy(target.raw(), 0, input.raw(), 0, target.n*int64(input.dtype.Size()))
			if err != nil {
				target.Release()
				return nil, 0, fmt.Errorf("accel: %s: copy input: %w", op, err)
			}
			secs += dur.Seconds()
		}
	}
	ks, err := d.diagLaunch(op, g, input.dtype, target.raw(), src.raw(), diagScatter)
	if err != nil {
		if !inPlace {
			target.Release()
		}
		return nil, 0, err
	}
	return target, secs + ks, nil
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
	if _, err := d.diagLaunch(op, g, grad.dtype, grad.raw(), gs.raw(), diagGather); err != nil {
		return fail(err)
	}
	if gi.n > 0 {
		if _, err := d.h.Copy(gi.raw(), 0, grad.raw(), 0, gi.n*int64(grad.dtype.Size())); err != nil {
			return fail(fmt.Errorf("accel: %s: copy grad: %w", op, err))
		}
	}
	if _, err := d.diagLaunch(op, g, grad.dtype, gi.raw(), nil, diagZero); err != nil {
		return fail(err)
	}
	return gi, gs, nil
}

// words views a tensor's bytes as its element-size words, for bit copies.
func words[T uint32 | uint64](t *Tensor) []T {
	var z T
	if len(t.data) == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&t.data[0])), len(t.data)/int(unsafe.Sizeof(z)))
}

// DiagonalScatter computes diagonal_scatter on the host with the scalar
// reference (see Device.DiagonalScatter).
func DiagonalScatter(input, src *Tensor, offset, dim1, dim2 int64) (*Tensor, error) {
	const op = "diagonal_scatter"
	if err := checkDiagDType(op, input.dtype); err != nil {
		return nil, err
	}
	g, err := newDiagGeom(op, input.shape, offset, dim1, dim2)
	if err != nil {
		return nil, err
	}
	if err := checkDiagSrc(op, g, input.dtype, src.dtype, src.shape); err != nil {
		return nil, err
	}
	out := &Tensor{dtype: input.dtype, shape: input.Shape()}
	if input.dtype.Size() == 8 {
		res := reference.DiagonalScatter(words[uint64](input), input.shape, words[uint64](src), offset, g.d1, g.d2)
		out.data = alignedBytes(int64(len(input.data)))
		copy(words[uint64](out), res)
	} else {
		res := reference.DiagonalScatter(words[uint32](input), input.shape, words[uint32](src), offset, g.d1, g.d2)
		out.data = alignedBytes(int64(len(input.data)))
		copy(words[uint32](out), res)
	}
	return out, nil
}

// DiagonalScatterBackward computes the gradients of diagonal_scatter on the
// host with the scalar reference (see Device.DiagonalScatterBackward).
func DiagonalScatterBackward(grad *Tensor, offset, dim1, dim2 int64) (gradInput, gradSrc *Tensor, err error) {
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
	gi, err := DiagonalScatter(grad, zeros, offset, dim1, dim2)
	return gi, gs, err
}
