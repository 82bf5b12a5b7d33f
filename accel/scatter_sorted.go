package accel

import (
	"errors"
	"fmt"

	"github.com/accelkern/accel/host/kernels"
)

// The sorted strategy (bit-reproducible on GPUs, and 64-bit elements
// without 64-bit atomics): every position's target and source offset
// (the indices validated on the way), a stable radix sort of the targets
// carrying the source offsets, then one in-order fold per run of equal
// targets. On return keep holds the sort (targets and source offsets in
// sorted order); the caller releases it.
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
	// targets touch no values: the int32 variant serves every dtype and
	// needs no 64-bit atomics
	if err := run(j.d, j.op, kernels.ScatterI32, d.elementwise(j.op, count), kernels.ScatterDest{Keys: keys.raw(), Soffs: soffs.raw(),
		Err: j.flag.raw(), Index: index, Meta: meta, Count: count, Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap}); err != nil {
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

// sortedPacked is the sorted strategy for 32-bit values and fewer than
// 2^32 targets (scatterPlan.Packed): each position's target and its
// value's bits in one word (validated on the way), the words sorted by
// target, and each run folded in order from the words themselves. The
// sort carries the values in place of their offsets, so it moves one word
// a position, not a key and an offset, and the fold reads its values in
// order where it gathered them.
func (j *scatterJob) sortedPacked() error {
	d, g := j.d, j.g
	index, meta, count, rank, dim, dimSize, wrap := j.pos()
	words, err := j.tmp.alloc(d, j.op, Uint64, count)
	if err != nil {
		return err
	}
	if err := run(j.d, j.op, kernels.ScatterI32, d.elementwise(j.op, count), kernels.ScatterDest{Keys: words.raw(), Src: j.src.raw(),
		Err: j.flag.raw(), Index: index, Meta: meta, Count: count, Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap,
		Packed: 1}); err != nil {
		return err
	}
	sorted, err := d.radixSortWords(j.op, words.raw(), count, keyBitsFor(j.out.n))
	if err != nil {
		return err
	}
	j.tmp.add(sorted)
	return d.segmentRun(j.op, j.out.dtype, j.out.raw(), nil, sorted.raw(), nil, count, g.red, j.includeSelf, j.flag)
}

// partitioned is the GPUs' bit-reproducible scatter of 32-bit values
// where targets have few hits (scatterPlan.Part; scatter_body.h): each
// valid position counts a hit of its target, the counts' exclusive scan
// gives each target its first slot, each position claims the next slot of
// its target for its position and value bits, and each target sorts its
// words by position in place and folds them in that order. It reads the
// flag once after the count (a wait): with a bad index it returns done (the
// caller's check names it), and where a target has more than
// kernels.ScPartMax hits it returns not done, nothing written: the caller
// sorts.
func (j *scatterJob) partitioned(sp scatterPlan) (done bool, err error) {
	d, g := j.d, j.g
	index, meta, count, rank, dim, dimSize, wrap := j.pos()
	tg := j.out.n
	// at least one count and slot: a slot past the positions or with a
	// bad index adds 0 to the first (scatter_pcount, scatter_place)
	counts, err := j.tmp.alloc(d, j.op, Uint32, max(tg, 1))
	if err != nil {
		return false, err
	}
	if err := d.fill(counts.raw(), 0, 4*tg, []byte{0, 0, 0, 0}); err != nil {
		return false, fmt.Errorf("accel: %s: %w", j.op, err)
	}
	plan := d.elementwise(j.op, count, sp.casKnobs()...)
	if err := j.run(string(kernels.ScatterI32), plan, kernels.ScatterPcount{Counts: counts.raw(), Err: j.flag.raw(), Index: index,
		Meta: meta, Count: count, Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap}); err != nil {
		return false, err
	}
	off, err := j.tmp.alloc(d, j.op, Uint32, max(tg, 1))
	if err != nil {
		return false, err
	}
	s, err := d.scanBuf(j.op, Uint32, counts.raw(), off.raw(), tg, kernels.FlagNone, true)
	if err != nil {
		return false, err
	}
	s.release()
	if err := d.flush(j.op); err != nil {
		return false, err
	}
	w, err := d.readFlagWords(j.op, j.flag, 2)
	if err != nil || flagged(w) {
		return true, err
	}
	if w[1] != 0 {
		if err := d.fill(j.flag.raw(), 4, 4, []byte{0, 0, 0, 0}); err != nil {
			return false, fmt.Errorf("accel: %s: %w", j.op, err)
		}
		return false, nil
	}
	words, err := j.tmp.alloc(d, j.op, Uint64, count)
	if err != nil {
		return false, err
	}
	if err := j.run(string(kernels.ScatterI32), plan, kernels.ScatterPlace{Off: off.raw(), Words: words.raw(), Src: j.src.raw(),
		Err: j.flag.raw(), Index: index, Meta: meta, Count: count, Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap}); err != nil {
		return false, err
	}
	fold := d.plan(planPfold(d.caps, count, tg, g.red, d.foldScratch("scatter_pfold")))
	d.report(j.op, "partition", fold)
	return true, j.run(dtVariant(j.out.dtype), fold, kernels.ScatterPfold{Dst: j.out.raw(), Counts: counts.raw(),
		Off: off.raw(), Words: words.raw(), Err: j.flag.raw(), N: count, OutN: tg, Per: fold.TileElems, Red: int64(g.red),
		IncludeSelf: b2i(j.includeSelf)})
}

// slotted is the GPUs' slotted partition of the bit-reproducible
// scatter (scatterPlan.Slot; scatter_body.h): each valid position claims
// the next of its target's bucket's sp.SlotCap slots for its position and
// value bits, with no count before, and each bucket's words are sorted by
// target and position and folded in that order. It reads the flag once,
// at the end (the op's one wait): done, with the flag read (j.checked),
// or with a bad index (the caller's check names it); or not done, dst as
// it was, with the flag's partition bits (kernels.ScPartMany: a target
// has more than kernels.ScPartMax hits, kernels.ScPartOver: a bucket
// more than its slots), which it clears, or with none where the slots
// found no room in the device's memory (nothing ran).
func (j *scatterJob) slotted(sp scatterPlan) (done bool, bits uint32, err error) {
	d, g := j.d, j.g
	index, meta, count, rank, dim, dimSize, wrap := j.pos()
	tg := j.out.n
	buckets := sp.slotBuckets(tg)
	var tmp temps // released once the flag is read: the way back allocates its own
	defer tmp.release()
	slots, err := tmp.alloc(d, j.op, Uint64, max(buckets*sp.SlotCap, 1))
	if errors.Is(err, ErrOutOfMemory) || errors.Is(err, ErrTooLarge) {
		// the slots (up to three times the counted partition's words)
		// did not fit: nothing run, the caller counts first
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	// at least one bucket: a slot past the positions or with a bad index
	// adds 0 to the first (scatter_pslot)
	cur, err := tmp.alloc(d, j.op, Uint32, max(buckets, 1))
	if err != nil {
		return false, 0, err
	}
	if err := d.fill(cur.raw(), 0, 4*max(buckets, 1), []byte{0, 0, 0, 0}); err != nil {
		return false, 0, fmt.Errorf("accel: %s: %w", j.op, err)
	}
	if err := j.run(string(kernels.ScatterI32), d.elementwise(j.op, count, sp.casKnobs()...), kernels.ScatterPslot{Cur: cur.raw(), Slots: slots.raw(),
		Src: j.src.raw(), Err: j.flag.raw(), Index: index, Meta: meta, Count: count, Rank: rank, Dim: dim, DimSize: dimSize, Wrap: wrap,
		SlotBits: sp.SlotBits, Cap: sp.SlotCap}); err != nil {
		return false, 0, err
	}
	fold := d.plan(planSfold(d.caps, count, buckets, g.red, d.foldScratch("scatter_sfold")))
	d.report(j.op, "partition", fold)
	if err := j.run(dtVariant(j.out.dtype), fold, kernels.ScatterSfold{Dst: j.out.raw(), Cur: cur.raw(), Slots: slots.raw(),
		Err: j.flag.raw(), OutN: tg, Per: fold.TileElems, SlotBits: sp.SlotBits, Cap: sp.SlotCap, Red: int64(g.red),
		IncludeSelf: b2i(j.includeSelf)}); err != nil {
		return false, 0, err
	}
	if err := d.flush(j.op); err != nil {
		return false, 0, err
	}
	w, err := d.readFlagWords(j.op, j.flag, 2)
	if err != nil || flagged(w) {
		return true, 0, err
	}
	if w[1] != 0 {
		if err := d.fill(j.flag.raw(), 4, 4, []byte{0, 0, 0, 0}); err != nil {
			return false, 0, fmt.Errorf("accel: %s: %w", j.op, err)
		}
		return false, w[1], nil
	}
	j.checked = true
	return true, 0, nil
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
