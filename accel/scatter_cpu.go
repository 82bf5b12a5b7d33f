package accel

import (
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// The CPU drivers' strategies: one work-item per core walking positions
// with plain loads and stores, validating as it goes (a bad index is
// skipped and its tile flagged).

// owned: each work-item owns a range of targets and folds them in index
// order (the reference's bits), counting hits where the mean or a first
// hit without the input needs them; the mean divides after.
func (j *scatterJob) owned(sp scatterPlan) error {
	d, g := j.d, j.g
	plan, workers, counts, err := j.inOrder(sp)
	if err != nil {
		return err
	}
	index, meta, count, rank, dim, dimSize, wrap := j.pos()
	spare, err := j.tmp.alloc(d, j.op, Uint64, 2*kernels.ScSpare*workers)
	if err != nil {
		return err
	}
	variant := dtVariant(j.out.dtype)
	if err := j.run(variant, plan, kernels.ScatterOwned{Dst: j.out.raw(), Src: j.src.raw(), Counts: counts,
		Err: j.flag.raw(), Spare: spare.raw(), Index: index, Meta: meta, Count: count, Rank: rank, Dim: dim,
		DimSize: dimSize, Wrap: wrap, OutN: j.out.n, Red: int64(g.red), IncludeSelf: b2i(j.includeSelf)}); err != nil {
		return err
	}
	return j.mean(variant, counts)
}

// bucket: the workers count their positions per bucket of targets, a
// one-item prefix sum turns the counts into slots, the workers place
// their positions (offset in the bucket, value) there in order, and each
// folds its buckets' slots in order into out (scatter_body.h's bucketed
// passes): the reference's bits, as owned gives them.
func (j *scatterJob) bucket(sp scatterPlan) error {
	d, g := j.d, j.g
	plan, workers, counts, err := j.inOrder(sp)
	if err != nil {
		return err
	}
	index, meta, count, rank, dim, dimSize, wrap := j.pos()
	bcnt, err := j.tmp.alloc(d, j.op, Uint64, bucketRow(sp.Buckets)*workers)
	if err != nil {
		return err
	}
	ploc, err := j.tmp.alloc(d, j.op, Uint32, max(count, 1))
	if err != nil {
		return err
	}
	pval, err := j.tmp.alloc(d, j.op, j.out.dtype, max(count, 1))
	if err != nil {
		return err
	}
	variant := dtVariant(j.out.dtype)
	if err := j.run(variant, plan, kernels.ScatterBcount{Err: j.flag.raw(), Bcnt: bcnt.raw(), Index: index, Meta: meta,
		Count: count, Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap, Buckets: sp.Buckets, SpanLog: sp.SpanLog}); err != nil {
		return err
	}
	if err := j.run(variant, d.plan(sp.Merge), kernels.ScatterBscan{Bcnt: bcnt.raw(), Buckets: sp.Buckets, Workers: workers}); err != nil {
		return err
	}
	if err := j.run(variant, plan, kernels.ScatterBplace{Src: j.src.raw(), Err: j.flag.raw(), Bcnt: bcnt.raw(), Ploc: ploc.raw(),
		Pval: pval.raw(), Index: index, Meta: meta, Count: count, Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap,
		Buckets: sp.Buckets, SpanLog: sp.SpanLog}); err != nil {
		return err
	}
	if err := j.run(variant, plan, kernels.ScatterBfold{Dst: j.out.raw(), Counts: counts, Err: j.flag.raw(), Bcnt: bcnt.raw(),
		Ploc: ploc.raw(), Pval: pval.raw(), Buckets: sp.Buckets, SpanLog: sp.SpanLog, Red: int64(g.red),
		IncludeSelf: b2i(j.includeSelf)}); err != nil {
		return err
	}
	return j.mean(variant, counts)
}

// inOrder is what the passes that fold in index order (owned, bucket)
// start from: the pass's plan, its workers, and the hit counts
// (ownedCounts).
func (j *scatterJob) inOrder(sp scatterPlan) (host.Plan, int64, host.Buffer, error) {
	plan := j.d.plan(sp.Pass)
	counts, err := j.ownedCounts()
	return plan, plan.TotalGroups() * int64(plan.LocalSize), counts, err
}

// ownedCounts is the zeroed hit counts per target of the passes that
// fold whole targets (owned, bucket) where the mean or a first hit
// without the input needs them, else nil.
func (j *scatterJob) ownedCounts() (host.Buffer, error) {
	if j.g.red == Mean || (!j.includeSelf && j.g.red != Assign) {
		return j.zeroed(Uint32, j.out.n)
	}
	return nil, nil
}

// bucketRow is a worker's row of the bucketed passes' counts: the
// buckets rounded up to whole 64-byte lines (scatter_body.h's SC_BROW).
func bucketRow(buckets int64) int64 { return (buckets + 7) &^ 7 }

// private: each work-item folds its chunk of positions into its own copy
// of the output (filled with the identity), and a merge folds the copies
// into out in work-item order (dividing the mean); without hit counts the
// first work-item folds into out itself.
func (j *scatterJob) private(sp scatterPlan) error {
	d, g := j.d, j.g
	plan := d.plan(sp.Pass)
	index, meta, count, rank, dim, dimSize, wrap := j.pos()
	workers := plan.TotalGroups() * int64(plan.LocalSize)
	counted := g.red == Mean || !j.includeSelf || g.red == Assign
	var pcnt host.Buffer
	if counted {
		c, err := j.zeroed(Uint32, workers*j.out.n)
		if err != nil {
			return err
		}
		pcnt = c
	}
	// Without counts (the input included, no mean) worker 0 folds into out
	// itself, which holds the input: one copy fewer to fill and merge.
	inplace := b2i(!counted && workers > 1)
	copies := workers - inplace
	priv, err := j.tmp.alloc(d, j.op, j.out.dtype, copies*j.out.n)
	if err != nil {
		return err
	}
	if err := d.fill(priv.raw(), 0, priv.n*int64(j.out.dtype.Size()), privateFill(j.out.dtype, g.red)); err != nil {
		return fmt.Errorf("accel: %s: %w", j.op, err)
	}
	variant := dtVariant(j.out.dtype)
	if err := j.run(variant, plan, kernels.ScatterPrivate{Dst: j.out.raw(), Src: j.src.raw(), Pcnt: pcnt, Err: j.flag.raw(),
		Priv: priv.raw(), Index: index, Meta: meta, Count: count, Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap,
		OutN: j.out.n, Counted: b2i(counted), Inplace: inplace, Red: int64(g.red)}); err != nil {
		return err
	}
	if j.out.n == 0 {
		return nil
	}
	return j.run(variant, d.plan(sp.Merge), kernels.ScatterMerge{Dst: j.out.raw(), Pcnt: pcnt, Priv: priv.raw(),
		Count: j.out.n, Workers: copies, Counted: b2i(counted), Red: int64(g.red), IncludeSelf: b2i(j.includeSelf)})
}

// few: the private pass for few targets (scatterShape.fewFits; on GPUs
// scatterFewGroups, one copy per work-group): each worker folds its
// positions into accumulators per target and writes its whole private
// copy, which private's merge folds into out. On CPU OpenCL a worker is a
// core; under a loop limit (llvmpipe) an invocation with a short run
// (chooseScatter): measured on lavapipe, 16M float32 positions into 16
// targets, sum, 252 ms with atomics and 38-41 ms here.
func (j *scatterJob) few(sp scatterPlan) error {
	d, g := j.d, j.g
	plan := d.plan(sp.Pass)
	index, meta, count, rank, dim, dimSize, wrap := j.pos()
	workers := plan.TotalGroups() * int64(plan.LocalSize)
	if sp.Path == scatterFewGroups {
		workers = plan.TotalGroups() // one copy per group
	}
	priv, err := j.tmp.alloc(d, j.op, j.out.dtype, workers*j.out.n)
	if err != nil {
		return err
	}
	counted := g.red == Mean || !j.includeSelf
	var pcnt host.Buffer
	if counted { // every worker writes its counts: no fill
		c, err := j.tmp.alloc(d, j.op, Uint32, workers*j.out.n)
		if err != nil {
			return err
		}
		pcnt = c.raw()
	}
	variant := dtVariant(j.out.dtype)
	args := kernels.ScatterFew{Src: j.src.raw(), Err: j.flag.raw(), Priv: priv.raw(), Pcnt: pcnt,
		Index: index, Meta: meta, Count: count, Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap, OutN: j.out.n,
		Counted: b2i(counted), Few: sp.Few, Red: int64(g.red)}
	var pass host.Call = args
	if sp.Path == scatterFewGroups {
		pass = kernels.ScatterFewg(args) // the same arguments (host/kernels decl.go: fewArgs)
	}
	if err := j.run(variant, plan, pass); err != nil {
		return err
	}
	if j.out.n == 0 {
		return nil
	}
	return j.run(variant, d.plan(sp.Merge), kernels.ScatterMerge{Dst: j.out.raw(), Pcnt: pcnt, Priv: priv.raw(),
		Count: j.out.n, Workers: workers, Counted: b2i(counted), Red: int64(g.red), IncludeSelf: b2i(j.includeSelf)})
}

// zeroed allocates a zero-filled scratch tensor.
func (j *scatterJob) zeroed(dt DType, n int64) (host.Buffer, error) {
	t, err := j.tmp.alloc(j.d, j.op, dt, n)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		if err := j.d.fill(t.raw(), 0, n*int64(dt.Size()), make([]byte, dt.Size())); err != nil {
			return nil, fmt.Errorf("accel: %s: %w", j.op, err)
		}
	}
	return t.raw(), nil
}

// privateFill is the fill pattern of the private copies: the reduction's
// identity, with -0.0 for float sums and means (x + -0.0 is x for every x,
// so a target no worker hit keeps its bits).
func privateFill(dt DType, reduce Reduction) []byte {
	if (reduce == Sum || reduce == Mean) && (dt == Float32 || dt == Float64) {
		b := make([]byte, dt.Size())
		b[len(b)-1] = 0x80
		return b
	}
	return identityBytes(dt, reduce)
}
