package accel

import (
	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// Unique returns the sorted distinct values of integer keys x (taken
// flattened), the inverse index of every element (int64: values[inverse[i]]
// = x[i]) and how often each value occurs (int64): NumPy's unique with
// return_inverse and return_counts. It waits once, for the number of
// distinct values.
func (d *Device) Unique(x *DeviceTensor) (values, inverse, counts *DeviceTensor, err error) {
	const op = "unique"
	if err := d.checkIn(op, "x", x); err != nil {
		return nil, nil, nil, err
	}
	if err := checkSortDType(op, "x", x.dtype, true); err != nil {
		return nil, nil, nil, err
	}
	var outs, tmp temps
	defer tmp.release()
	fail := func(err error) (*DeviceTensor, *DeviceTensor, *DeviceTensor, error) {
		outs.release()
		return nil, nil, nil, err
	}
	n, w := x.n, x.dtype.Size()
	if inverse, err = outs.alloc(d, op, Int64, n); err != nil {
		return fail(err)
	}
	if n == 0 {
		if values, err = outs.alloc(d, op, x.dtype, 0); err == nil {
			counts, err = outs.alloc(d, op, Int64, 0)
		}
		if err != nil {
			return fail(err)
		}
		return values, inverse, counts, nil
	}
	res, err := d.radixSort(op, x.raw(), n, w, keyKind(x.dtype), false, 8*w, nil, 0)
	if err != nil {
		return fail(err)
	}
	tmp.add(res.keys)
	tmp.add(res.perm)
	head := int64(kernels.FlagHead32)
	if w == 8 {
		head = kernels.FlagHead64
	}
	// seg[i]: 1-based run id of sorted position i; the total is the count
	seg, err := tmp.alloc(d, op, Int64, n)
	if err != nil {
		return fail(err)
	}
	s, err := d.scanBuf(op, Int64, res.keys.raw(), seg.raw(), n, head, false)
	if err != nil {
		return fail(err)
	}
	defer s.release()
	if err := d.flush(op); err != nil {
		return fail(err)
	}
	u64, err := s.total(op)
	if err != nil {
		return fail(err)
	}
	u := int64(u64)
	if d.reporting() {
		rp, sp := d.plan(d.planner.radix(d.caps, n, w)), d.plan(planScan(d.caps, n, 8, d.scanSubgroups(Int64)))
		d.reportModel(op, "unique", rp, func() traffic { return uniqueTraffic(d.caps, rp, sp, n, u, w, keyKind(x.dtype)) },
			uniqueMinBytes(n, u, w))
	}
	ends, err := tmp.alloc(d, op, Int64, u)
	if err != nil {
		return fail(err)
	}
	if values, err = outs.alloc(d, op, x.dtype, u); err != nil {
		return fail(err)
	}
	if counts, err = outs.alloc(d, op, Int64, u); err != nil {
		return fail(err)
	}
	// The distinct values are the sorted order bits at the runs' starts,
	// mapped back to keys (an integer's order bits undo themselves:
	// radixPrep) once there are only u of them: no gather of x by the
	// permutation.
	kind := keyKind(x.dtype)
	ordered := values
	if kind != kernels.KindUnsigned {
		if ordered, err = tmp.alloc(d, op, x.dtype, u); err != nil {
			return fail(err)
		}
	}
	// the order bits at run starts, every element's run, the runs' ends
	// and their lengths
	calls := []struct {
		variant kernels.MoveVariant
		n       int64
		call    host.Call
	}{
		{wordVariant(x.dtype), n, kernels.MoveCompact{Dst: ordered.raw(), Src: res.keys.raw(), Flags: res.keys.raw(),
			Pos: seg.raw(), N: n, Kind: head, Add: -1, HasSrc: 1, HasIdx: 0}},
		{kernels.MoveW64, n, kernels.MoveScatter{Dst: inverse.raw(), Src: seg.raw(), Idx: res.perm.raw(), N: n, Add: -1}},
		{kernels.MoveW64, n, kernels.MoveEnds{Dst: ends.raw(), Seg: seg.raw(), N: n}},
		{kernels.MoveW64, u, kernels.MoveCounts{Dst: counts.raw(), Ends: ends.raw(), N: u}},
	}
	for _, c := range calls {
		if c.n == 0 {
			continue
		}
		if err := d.launch(op, string(c.variant), d.elementwise(op, c.n), c.call); err != nil {
			return fail(err)
		}
	}
	if ordered != values {
		if err := d.radixPrep(op, ordered.raw(), values.raw(), u, w, kind, false); err != nil {
			return fail(err)
		}
	}
	if err := d.flush(op); err != nil {
		return fail(err)
	}
	return values, inverse, counts, nil
}
