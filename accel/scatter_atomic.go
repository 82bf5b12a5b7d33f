package accel

import (
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// The atomic strategy (GPUs, lavapipe): start the hit targets from the
// identity where include_self is false, fold each position into its
// target with an atomic (for sums and means the device's atomic add:
// integers always, floats where the device has one; else a
// compare-and-swap on the element's bits, and with sp.CAS always that,
// for the mean's hit counts too), and divide the mean.
// The first pass checks every index as it goes (a bad one is flagged and
// skipped; out is a fresh tensor, dropped on error), and each pass after
// it skips its work on the device when an index was flagged. Folding the
// check into the first pass saves a pass over the indices: on lavapipe
// that pass alone took 55-75 ms of rand16M_1M_sum.
func (j *scatterJob) atomic(sp scatterPlan) error {
	d, g := j.d, j.g
	index, meta, count, rank, dim, dimSize, wrap := j.pos()
	variant := dtVariant(j.out.dtype)
	if (g.red == Sum || g.red == Mean) && d.nativeFloatAdd(j.out.dtype) && !sp.CAS {
		variant += "a"
	}
	var counts host.Buffer
	if g.red == Mean {
		c, err := j.tmp.alloc(d, j.op, Uint32, j.out.n)
		if err != nil {
			return err
		}
		if err := d.fill(c.raw(), 0, 4*j.out.n, []byte{0, 0, 0, 0}); err != nil {
			return fmt.Errorf("accel: %s: %w", j.op, err)
		}
		counts = c.raw()
	}
	plan := d.elementwise(j.op, count, sp.casKnobs()...)
	if !j.includeSelf && g.red != Assign {
		if err := j.run(variant, plan, kernels.ScatterInit{Dst: j.out.raw(), Err: j.flag.raw(), Index: index, Meta: meta,
			Count: count, Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap, Red: int64(g.red)}); err != nil {
			return err
		}
	}
	if err := j.run(variant, plan, kernels.ScatterReduce{Dst: j.out.raw(), Src: j.src.raw(), Counts: counts, Err: j.flag.raw(),
		Index: index, Meta: meta, Count: count, Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap, Red: int64(g.red)}); err != nil {
		return err
	}
	return j.mean(variant, counts)
}

// mean divides each hit target of a mean by its hit count (+1 with the
// input).
func (j *scatterJob) mean(variant string, counts host.Buffer) error {
	if j.g.red != Mean || j.out.n == 0 {
		return nil
	}
	return j.run(variant, j.d.elementwise(j.op, j.out.n), kernels.ScatterMean{Dst: j.out.raw(), Counts: counts,
		Err: j.flag.raw(), Count: j.out.n, IncludeSelf: b2i(j.includeSelf)})
}

// gather is take_along_axis: validate, then src[p] = out[target(p)] (the
// job's out is the array read, its src the output written).
func (j *scatterJob) gather() error {
	index, meta, count, rank, dim, dimSize, wrap := j.pos()
	variant := dtVariant(j.out.dtype)
	plan := j.d.elementwise(j.op, count)
	if err := j.run(variant, plan, kernels.ScatterValidate{Err: j.flag.raw(), Index: index, Meta: meta, Count: count,
		Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap}); err != nil {
		return err
	}
	return j.run(variant, plan, kernels.ScatterGather{Dst: j.src.raw(), Arr: j.out.raw(), Err: j.flag.raw(), Index: index,
		Meta: meta, Count: count, Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap})
}

// nativeFloatAdd reports whether the device has a native atomic add for
// dt's elements (a float type); the FADD=1 scatter variants use it.
func (d *Device) nativeFloatAdd(dt DType) bool {
	return (dt == Float32 && d.caps.Float32Atomics) || (dt == Float64 && d.caps.Float64Atomics)
}
