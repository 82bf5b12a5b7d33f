package accel

import (
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/reference"
)

// Modes of the scatter_bwd kernel (scatter_bwd_body.h).
const (
	sbNaNSelf = 0
	sbCount   = 1
	sbApply   = 2
	sbSuffix  = 3
	sbPrefix  = 4
)

// scatterBwdGeom checks scatter_reduce_backward's arguments (shapes and
// dtypes only, no data) and returns the forward's geometry.
func scatterBwdGeom(op string, inShape []int64, inDT DType, dim int64, idxShape []int64, idxDT DType,
	srcShape []int64, srcDT DType, reduce string, gShape []int64, gDT DType) (scatterGeom, error) {
	if reduce == ReduceAssign {
		return scatterGeom{}, argErr(op, "reduce", fmt.Sprintf("%q", reduce), "one of sum, prod, mean, amax, amin", ErrInvalidArgument)
	}
	g, err := newScatterGeom(op, inShape, inDT, dim, idxShape, idxDT, srcShape, srcDT, reduce)
	if err != nil {
		return g, err
	}
	if inDT != Float32 && inDT != Float64 {
		return g, argErr(op, "input", "dtype "+inDT.String(), "float32 or float64 (gradients need a floating dtype)", ErrUnsupported)
	}
	if gDT != inDT || !sameShape(gShape, inShape) {
		return g, argErr(op, "grad_output", fmt.Sprintf("dtype %s shape %v", gDT, gShape),
			fmt.Sprintf("the input's dtype %s and shape %v", inDT, inShape), ErrInvalidArgument)
	}
	return g, nil
}

// ScatterReduceBackward returns the result of
// input.scatter_reduce(dim, index, src, reduce, include_self) and its
// gradients with respect to input and src given gradOutput (the gradient
// of the result: input's shape and dtype), with PyTorch's autograd rules:
//   - sum: every contributor gets gradOutput at its target;
//   - mean: gradOutput / count (count includes input's value iff
//     includeSelf);
//   - amax/amin: gradOutput split evenly among the contributors equal to
//     the result; where the result is NaN every contributor gets NaN, and
//     so does a NaN input value that is not zeroed (as torch computes it);
//   - prod: gradOutput times the product of the other contributors,
//     computed as prefix and suffix products in index order (no division:
//     with one zero only the zero gets a nonzero gradient, with two or more
//     every gradient is 0).
//
// With includeSelf false gradInput is 0 at every position an index hits
// and input's value takes no part (torch still counts it among tied
// maxima where it equals the result; this does not); positions never hit
// get gradOutput. Prod gradients are products of the others, never
// result / x, so they may differ from torch's where it divides an infinite
// or NaN result. gradSrc has src's shape and is 0 outside index's extent.
// Only float32 and float64 are supported (float64 where the device has
// fp64).
//
// The result is computed in the bit-reproducible mode
// (ScatterReduceDeterministic) and the gradients on its sort, each target's
// contributors in index order, so every backend gives the scalar
// reference's values. An index out of range is an error naming the first
// offending position, found on the device before anything is written.
func (d *Device) ScatterReduceBackward(input *DeviceTensor, dim int64, index, src *DeviceTensor, reduce string,
	includeSelf bool, gradOutput *DeviceTensor) (out, gradInput, gradSrc *DeviceTensor, err error) {
	out, gradInput, gradSrc, _, err = d.scatterReduceBackward(input, dim, index, src, reduce, includeSelf, gradOutput)
	return out, gradInput, gradSrc, err
}

func (d *Device) scatterReduceBackward(input *DeviceTensor, dim int64, index, src *DeviceTensor, reduce string,
	includeSelf bool, gradOutput *DeviceTensor) (out, gi, gs *DeviceTensor, secs float64, err error) {
	const op = "scatter_reduce_backward"
	for _, a := range []struct {
		name string
		t    *DeviceTensor
	}{{"input", input}, {"index", index}, {"src", src}, {"grad_output", gradOutput}} {
		if err := d.checkIn(op, a.name, a.t); err != nil {
			return nil, nil, nil, 0, err
		}
	}
	g, err := scatterBwdGeom(op, input.shape, input.dtype, dim, index.shape, index.dtype, src.shape, src.dtype,
		reduce, gradOutput.shape, gradOutput.dtype)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	if err := d.supportsScatter(op, input.dtype); err != nil {
		return nil, nil, nil, 0, err
	}
	var live []*DeviceTensor
	fail := func(err error) (*DeviceTensor, *DeviceTensor, *DeviceTensor, float64, error) {
		for _, t := range live {
			t.Release()
		}
		return nil, nil, nil, 0, err
	}
	newOut := func(shape []int64) (*DeviceTensor, error) {
		t, err := d.alloc(op, input.dtype, shape)
		if err == nil {
			live = append(live, t)
		}
		return t, err
	}
	if out, err = newOut(input.shape); err != nil {
		return fail(err)
	}
	if gi, err = newOut(input.shape); err != nil {
		return fail(err)
	}
	if gs, err = newOut(src.shape); err != nil {
		return fail(err)
	}
	es := int64(input.dtype.Size())
	// the forward's starting point, gradInput = grad_output, gradSrc = 0
	for _, c := range []struct {
		dst, from *DeviceTensor
		what      string
	}{{out, input, "input"}, {gi, gradOutput, "grad_output"}} {
		if c.dst.n == 0 {
			continue
		}
		dur, err := d.h.Copy(c.dst.raw(), 0, c.from.raw(), 0, c.dst.n*es)
		secs += dur.Seconds()
		if err != nil {
			return fail(fmt.Errorf("accel: %s: copy %s: %w", op, c.what, err))
		}
	}
	if gs.n > 0 {
		if err := d.h.Fill(gs.raw(), 0, gs.n*es, make([]byte, es)); err != nil {
			return fail(err)
		}
	}
	red := reduceCodes[g.red]
	spec := host.KernelSpec{File: "scatter_bwd", Variant: dtVariant(input.dtype), Entry: "scatter_bwd"}
	var sorted sortKeys
	var aux *DeviceTensor
	buf := func(t *DeviceTensor) host.Arg {
		if t == nil {
			return host.U64(0)
		}
		return host.BufArg(t.raw())
	}
	run := func(mode, n int64, errBuf host.Buffer, limit, step int64) (float64, error) {
		s, err := d.launch(spec, d.plan(host.PlanElementwise(op, d.caps, n)), host.BufArg(gi.raw()), host.BufArg(gs.raw()),
			host.BufArg(gradOutput.raw()), host.BufArg(input.raw()), host.BufArg(src.raw()), host.BufArg(out.raw()),
			buf(sorted.keys), buf(sorted.perm), buf(aux), bufArg(errBuf),
			host.I64(n), host.I64(red), host.I64(b2i(includeSelf)), host.I64(limit), host.I64(step), host.I64(mode))
		if err != nil {
			return s, fmt.Errorf("accel: %s: %w", op, err)
		}
		return s, nil
	}
	// an input NaN gets NaN, hit or not (amax/amin)
	if (g.red == ReduceAmax || g.red == ReduceAmin) && out.n > 0 {
		s, err := run(sbNaNSelf, out.n, nil, 0, 0)
		secs += s
		if err != nil {
			return fail(err)
		}
	}
	if g.idxN == 0 {
		return out, gi, gs, secs, nil
	}
	// 1. validate the indices, the forward in index order, and its sort
	s, err := d.scatterRunKeep(op, g, out, index, src, includeSelf, false, true, &sorted)
	if err != nil {
		return fail(err)
	}
	defer sorted.release()
	secs += s
	// 2. the gradients on the sort
	if aux, err = d.alloc(op, input.dtype, []int64{out.n}); err != nil {
		return fail(err)
	}
	defer aux.Release()
	if err := d.h.Fill(aux.raw(), 0, out.n*es, make([]byte, es)); err != nil {
		return fail(err)
	}
	var modes []int64
	switch g.red {
	case ReduceSum:
		modes = []int64{sbApply}
	case ReduceMean:
		modes = []int64{sbCount, sbApply}
	case ReduceAmax, ReduceAmin:
		modes = []int64{sbCount, sbApply}
	case ReduceProd:
		modes = []int64{sbSuffix, sbPrefix}
	}
	for _, mode := range modes {
		var s float64
		var err error
		switch mode {
		case sbSuffix, sbPrefix:
			s, err = d.steps(op, g.idxN, func(errBuf host.Buffer, limit, step int64) (float64, error) {
				return run(mode, g.idxN, errBuf, limit, step)
			})
		default:
			s, err = run(mode, g.idxN, nil, 0, 0)
		}
		secs += s
		if err != nil {
			return fail(err)
		}
	}
	return out, gi, gs, secs, nil
}

// ScatterReduceBackward computes scatter_reduce's result and gradients on
// the host with the scalar reference (see Device.ScatterReduceBackward).
func ScatterReduceBackward(input *Tensor, dim int64, index, src *Tensor, reduce string, includeSelf bool,
	gradOutput *Tensor) (out, gradInput, gradSrc *Tensor, err error) {
	const op = "scatter_reduce_backward"
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
		refScatterBwd(input.Float32s, out.Float32s, gradInput.Float32s, gradSrc.Float32s, src.Float32s, gradOutput.Float32s, g, idx, reduce, includeSelf)
	case Float64:
		refScatterBwd(input.Float64s, out.Float64s, gradInput.Float64s, gradSrc.Float64s, src.Float64s, gradOutput.Float64s, g, idx, reduce, includeSelf)
	}
	return out, gradInput, gradSrc, nil
}

// refScatterBwd runs the reference backward on the element slices the
// getters return and copies its results into out, gradInput and gradSrc.
func refScatterBwd[T float32 | float64](input, out, gradInput, gradSrc, src, gradOutput func() []T,
	g scatterGeom, idx []int64, reduce string, includeSelf bool) {
	o, gi, gs := reference.ScatterReduceBackward(input(), g.inShape, g.dim, idx, g.idxShape,
		src(), g.srcShape, reduce, includeSelf, gradOutput())
	copy(out(), o)
	copy(gradInput(), gi)
	copy(gradSrc(), gs)
}
