package accel

import (
	"github.com/accelkern/accel/host/kernels"
)

// The sorted strategy (bit-reproducible on GPUs, and 64-bit elements
// without 64-bit atomics): every position's target and source offset, a
// stable radix sort of the targets carrying the source offsets, then one
// in-order fold per run of equal targets. On return keep holds the sort
// (targets and source offsets in sorted order); the caller releases it.
func (j *scatterJob) sorted(keep *sortKeys) error {
	d, g := j.d, j.g
	index, meta, count, rank, dim, dimSize, wrap := j.pos()
	keys, err := j.tmp.alloc(d, j.op, Uint64, count)
	if err != nil {
		return err
	}
	soffs, err := j.tmp.alloc(d, j.op, Int64, count)
	if err != nil {
		return err
	}
	// validation and targets touch no values: the int32 variant serves
	// every dtype and needs no 64-bit atomics
	plan := d.elementwise(j.op, count)
	if err := run(j.d, j.op, kernels.ScatterI32, plan, kernels.ScatterValidate{Err: j.flag.raw(), Index: index, Meta: meta, Count: count,
		Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap}); err != nil {
		return err
	}
	if err := run(j.d, j.op, kernels.ScatterI32, plan, kernels.ScatterDest{Keys: keys.raw(), Soffs: soffs.raw(), Err: j.flag.raw(), Index: index,
		Meta: meta, Count: count, Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap}); err != nil {
		return err
	}
	res, err := d.radixSort(j.op, keys.raw(), count, 8, kernels.KindUnsigned, false, keyBitsFor(j.out.n), soffs.raw(), j.src.n)
	if err != nil {
		return err
	}
	if err := d.segmentRun(j.op, j.out.dtype, j.out.raw(), j.src.raw(), res.keys.raw(), res.perm.raw(), count, g.red,
		j.includeSelf, j.flag); err != nil {
		res.release()
		return err
	}
	*keep = res
	return nil
}

// scatterSortedKeep runs the bit-reproducible scatter of g into out and
// hands its sort and its validation flag to the caller (the backward
// reuses both), without reading the flag: the caller checks it with
// checkIndexFlag once its own passes are queued, and releases all three.
func (d *Device) scatterSortedKeep(op string, g scatterGeom, out, index, src *DeviceTensor, includeSelf bool) (sortKeys, *DeviceTensor, error) {
	j, err := d.newScatterJob(op, g, out, index, src, includeSelf)
	if err != nil {
		return sortKeys{}, nil, err
	}
	flag := j.flag
	j.tmp = j.tmp[:len(j.tmp)-1] // the flag outlives the job
	defer j.release()
	var keep sortKeys
	if err := j.sorted(&keep); err != nil {
		flag.Release()
		return sortKeys{}, nil, err
	}
	return keep, flag, nil
}
