package accel

import (
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// scatterBwdGeom checks scatter_reduce_backward's arguments (shapes and
// dtypes only, no data) and returns the forward's geometry.
func scatterBwdGeom(op string, inShape []int64, inDT DType, dim int64, idxShape []int64, idxDT DType,
	srcShape []int64, srcDT DType, reduce Reduction, gShape []int64, gDT DType) (scatterGeom, error) {
	if reduce == Assign {
		return scatterGeom{}, argErr(op, "reduce", reduce, "one of Sum, Prod, Mean, Amax, Amin", ErrInvalidArgument)
	}
	g, err := newScatterGeom(op, inShape, inDT, dim, idxShape, idxDT, srcShape, srcDT, reduce)
	if err != nil {
		return g, err
	}
	if inDT != Float32 && inDT != Float64 {
		return g, argErr(op, "input", "dtype "+inDT.String(), "float32 or float64 (gradients need a floating dtype)", ErrUnsupported)
	}
	if reduce != Sum && g.idxN > maxHits {
		// the count pass keeps each target's count in 32 bits of aux
		return g, argErr(op, "index", fmt.Sprintf("%d positions", g.idxN),
			fmt.Sprintf("at most %d for the gradients of %s (hit counts are 32-bit)", int64(maxHits), reduce), ErrUnsupported)
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
// offending position, found on the device; nothing is read or written out
// of bounds.
func (d *Device) ScatterReduceBackward(input *DeviceTensor, dim int64, index, src *DeviceTensor, reduce Reduction,
	includeSelf bool, gradOutput *DeviceTensor) (out, gradInput, gradSrc *DeviceTensor, err error) {
	const op = "scatter_reduce_backward"
	for _, a := range []struct {
		name string
		t    *DeviceTensor
	}{{"input", input}, {"index", index}, {"src", src}, {"grad_output", gradOutput}} {
		if err := d.checkIn(op, a.name, a.t); err != nil {
			return nil, nil, nil, err
		}
	}
	index, done, err := d.index64(op, "index", index) // int32 indices too (index.go)
	if err != nil {
		return nil, nil, nil, err
	}
	defer done()
	g, err := scatterBwdGeom(op, input.shape, input.dtype, dim, index.shape, index.dtype, src.shape, src.dtype,
		reduce, gradOutput.shape, gradOutput.dtype)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := d.supportsScatter(op, input.dtype); err != nil {
		return nil, nil, nil, err
	}
	b := &scatterBwd{d: d, op: op, g: g, input: input, src: src, grad: gradOutput, includeSelf: includeSelf}
	if err := b.run(index); err != nil {
		b.outs.release()
		return nil, nil, nil, err
	}
	return b.out, b.gi, b.gs, nil
}

// scatterBwd is one scatter_reduce_backward on the device.
type scatterBwd struct {
	d                *Device
	op               string
	g                scatterGeom
	input, src, grad *DeviceTensor
	includeSelf      bool
	out, gi, gs      *DeviceTensor
	outs, tmp        temps
	sorted           sortKeys
	flag, aux        *DeviceTensor
	variant          string
	elementBytes     int64
}

func (b *scatterBwd) run(index *DeviceTensor) error {
	d, g := b.d, b.g
	defer b.tmp.release()
	b.variant, b.elementBytes = dtVariant(b.input.dtype), int64(b.input.dtype.Size())
	for _, t := range []**DeviceTensor{&b.out, &b.gi} {
		var err error
		if *t, err = b.outs.alloc(d, b.op, b.input.dtype, b.input.shape...); err != nil {
			return err
		}
	}
	var err error
	if b.gs, err = b.outs.alloc(d, b.op, b.input.dtype, b.src.shape...); err != nil {
		return err
	}
	// the forward's starting point, gradInput = grad_output, gradSrc = 0
	for _, c := range []struct {
		dst, from *DeviceTensor
	}{{b.out, b.input}, {b.gi, b.grad}} {
		if c.dst.n == 0 {
			continue
		}
		if err := b.d.copyBytes(b.op, c.dst.raw(), 0, c.from.raw(), 0, c.dst.n*b.elementBytes); err != nil {
			return err
		}
	}
	if b.gs.n > 0 {
		if err := d.fill(b.gs.raw(), 0, b.gs.n*b.elementBytes, make([]byte, b.elementBytes)); err != nil {
			return fmt.Errorf("accel: %s: %w", b.op, err)
		}
	}
	// an input NaN gets NaN, hit or not (amax/amin)
	if (g.red == Amax || g.red == Amin) && b.out.n > 0 {
		if err := d.launch(b.op, b.variant, d.elementwise(b.op, b.out.n), kernels.ScatterBwdNanself{Gi: b.gi.raw(),
			SelfIn: b.input.raw(), N: b.out.n}); err != nil {
			return err
		}
	}
	if g.idxN > 0 {
		if err := b.gradients(index); err != nil {
			return err
		}
	}
	return d.flush(b.op)
}

// gradients runs the forward in index order, keeping its sort and
// validation flag, then the gradient passes on the sort, and reads the
// flag once at the end.
func (b *scatterBwd) gradients(index *DeviceTensor) error {
	d, g := b.d, b.g
	sorted, flag, err := d.scatterSortedKeep(b.op, g, b.out, index, b.src, b.includeSelf)
	if err != nil {
		return err
	}
	defer sorted.release()
	b.tmp.add(flag)
	b.sorted, b.flag = sorted, flag
	if b.aux, err = b.tmp.alloc(d, b.op, b.input.dtype, b.out.n); err != nil {
		return err
	}
	if err := d.fill(b.aux.raw(), 0, b.out.n*b.elementBytes, make([]byte, b.elementBytes)); err != nil {
		return fmt.Errorf("accel: %s: %w", b.op, err)
	}
	n := g.idxN
	plan := d.elementwise(b.op, n)
	red, self := int64(g.red), b.includeSelf
	keys, perm := sorted.keys.raw(), sorted.perm.raw()
	switch g.red {
	case Mean, Amax, Amin:
		if err := d.launch(b.op, b.variant, plan, kernels.ScatterBwdCount{Aux: b.aux.raw(), Keys: keys, Perm: perm, Src: b.src.raw(),
			SelfIn: b.input.raw(), Res: b.out.raw(), Err: flag.raw(), N: n, Red: red, IncludeSelf: b2i(self)}); err != nil {
			return err
		}
		fallthrough
	case Sum:
		if err := d.launch(b.op, b.variant, plan, kernels.ScatterBwdApply{Gi: b.gi.raw(), Gs: b.gs.raw(), G: b.grad.raw(),
			SelfIn: b.input.raw(), Src: b.src.raw(), Res: b.out.raw(), Keys: keys, Perm: perm, Aux: b.aux.raw(),
			Err: flag.raw(), N: n, Red: red, IncludeSelf: b2i(self)}); err != nil {
			return err
		}
	case Prod:
		if err := b.products(n, plan, keys, perm); err != nil {
			return err
		}
	}
	return d.checkIndexFlag(b.op, g, index, flag)
}

// products runs prod's suffix then prefix walks, each in as many steps as
// the driver's loop limit needs.
func (b *scatterBwd) products(n int64, plan host.Plan, keys, perm host.Buffer) error {
	d := b.d
	if err := d.steps(b.op, n, b.flag, func(limit, step int64) error {
		return d.launch(b.op, b.variant, plan, kernels.ScatterBwdSuffix{Gs: b.gs.raw(), Aux: b.aux.raw(), Keys: keys,
			Perm: perm, Src: b.src.raw(), Err: b.flag.raw(), N: n, Limit: limit, Step: step})
	}); err != nil {
		return err
	}
	return d.steps(b.op, n, b.flag, func(limit, step int64) error {
		return d.launch(b.op, b.variant, plan, kernels.ScatterBwdPrefix{Gi: b.gi.raw(), Gs: b.gs.raw(), G: b.grad.raw(),
			SelfIn: b.input.raw(), Aux: b.aux.raw(), Keys: keys, Perm: perm, Src: b.src.raw(), Err: b.flag.raw(), N: n,
			IncludeSelf: b2i(b.includeSelf), Limit: limit, Step: step})
	})
}
