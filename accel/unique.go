package accel

import (
	"errors"
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// Unique returns the sorted distinct values of integer keys x (taken
// flattened), the inverse index of every element (int64: values[inverse[i]]
// = x[i]) and how often each value occurs (int64): NumPy's unique with
// return_inverse and return_counts. It waits once, for the number of
// distinct values; where its plan counts 64-bit keys in a hash table
// (GPUs) and more of them are distinct than the table takes, twice (it
// sorts them after all), and on a driver that cuts long loops the table's
// probes wait after each launch.
func (d *Device) Unique(x *DeviceTensor) (values, inverse, counts *DeviceTensor, err error) {
	const op = "unique"
	if err := d.checkIn(op, "x", x); err != nil {
		return nil, nil, nil, err
	}
	if err := checkSortDType(op, "x", x.dtype, true); err != nil {
		return nil, nil, nil, err
	}
	var outs temps
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
	up := d.tunedUnique(d.planner.unique(d.caps, n, w), n)
	tried := false
	if up.Hash && hashable(d.caps, w) { // a forced plan may not be
		var ok bool
		values, counts, ok, err = d.uniqueHashed(op, x, inverse, up, &outs)
		if err != nil {
			return fail(err)
		}
		if ok {
			return values, inverse, counts, nil
		}
		tried = true
	}
	if values, counts, err = d.uniqueSorted(op, x, inverse, up, tried, &outs); err != nil {
		return fail(err)
	}
	return values, inverse, counts, nil
}

// uniqueSorted is Unique on the sort of every key: the runs of the sorted
// keys are the distinct values (tried: a hash plan's table overflowed
// first).
func (d *Device) uniqueSorted(op string, x, inverse *DeviceTensor, up uniquePlan, tried bool, outs *temps) (values, counts *DeviceTensor, err error) {
	var tmp temps
	defer tmp.release()
	fail := func(err error) (*DeviceTensor, *DeviceTensor, error) { return nil, nil, err }
	n, w := x.n, x.dtype.Size()
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
		rp, sp := d.radixTuned(n, w, n), d.plan(planScan(d.caps, n, 8, d.scanSubgroups(Int64)))
		if tried {
			up.Reason += "; the table overflowed: the sort"
		}
		d.reportModel(op, "unique", uniqueReport{up, rp}, func() traffic {
			t := traffic{}
			if tried {
				// an overflowed table: the count, no further
				t = hashTryTraffic(n, up.Capacity)
			}
			t.then(uniqueTraffic(d.caps, rp, sp, n, u, w, keyKind(x.dtype)))
			return t
		}, uniqueMinBytes(n, u, w))
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
	return values, counts, nil
}

// uniqueHashed is Unique on a hash table for up.Capacity keys (planUnique):
// each key's slot, whose value word counts it, into inverse; the held
// slots' keys gathered (in any order) and sorted; each distinct key's rank
// written into its value word beside its count; the inverse read from the
// slots. ok is false, with nothing allocated, where more keys than the
// table takes are distinct (or one probed up.ProbeCap held slots): the
// caller sorts instead. It waits once, for u and the full flag.
func (d *Device) uniqueHashed(op string, x, inverse *DeviceTensor, up uniquePlan, outs *temps) (values, counts *DeviceTensor, ok bool, err error) {
	fail := func(err error) (*DeviceTensor, *DeviceTensor, bool, error) { return nil, nil, false, err }
	t, err := d.newHashTable(op, up.Capacity)
	if errors.Is(err, ErrTooLarge) {
		return nil, nil, false, nil
	}
	if err != nil {
		return fail(err)
	}
	defer t.Release()
	t.probeCap = up.ProbeCap
	var tmp temps
	defer tmp.release()
	n, slots := x.n, t.slots
	read, full, err := t.probe(op, probeCount, x.raw(), inverse.raw(), n)
	if err != nil || read && full {
		return fail(err)
	}
	// the table's key count is u (each new key claimed one slot), read
	// with the full flag: the op's one wait (on drivers that cut long
	// loops the probes' launches read them already)
	var count uint64
	if read {
		count, full = t.metaWords()
	} else {
		if err := d.flush(op); err != nil {
			return fail(err)
		}
		if count, full, err = t.readMeta(op); err != nil {
			return fail(err)
		}
	}
	if full {
		return nil, nil, false, nil
	}
	u := int64(count)
	if u < 1 || u > slots+1 {
		return fail(fmt.Errorf("accel: %s: the table counts %d keys in %d slots: %w", op, u, slots+1, host.ErrDriver))
	}
	if d.reporting() {
		rp := d.radixTuned(u, 8, u)
		d.reportModel(op, "unique", uniqueReport{up, rp}, func() traffic {
			return hashUniqueTraffic(d.caps, rp, n, u, up.Capacity, keyKind(x.dtype))
		}, uniqueMinBytes(n, u, 8))
	}
	// the held slots' keys and slots, each group's run claimed below the
	// key count
	keys, err := tmp.alloc(d, op, x.dtype, u)
	if err != nil {
		return fail(err)
	}
	held, err := tmp.alloc(d, op, Int64, u)
	if err != nil {
		return fail(err)
	}
	if err := t.pass(op, kernels.HashGather{Table: t.table.raw(), Keys: keys.raw(), Held: held.raw(), Meta: t.meta.raw(), Slots: slots,
		U: u}, slots+1); err != nil {
		return fail(err)
	}
	res, err := d.radixSort(op, keys.raw(), u, 8, keyKind(x.dtype), false, 64, nil, 0)
	if err != nil {
		return fail(err)
	}
	tmp.add(res.keys)
	tmp.add(res.perm)
	if values, err = outs.alloc(d, op, x.dtype, u); err != nil {
		return fail(err)
	}
	if counts, err = outs.alloc(d, op, Int64, u); err != nil {
		return fail(err)
	}
	if err := t.pass(op, kernels.HashRank{Table: t.table.raw(), Held: held.raw(), Perm: res.perm.raw(), Values: values.raw(),
		Counts: counts.raw(), U: u, Slots: slots}, u); err != nil {
		return fail(err)
	}
	// every key's rank, read from its slot (in place: inverse held the slots)
	if err := t.pass(op, kernels.HashIds{Table: t.table.raw(), Res: inverse.raw(), Aux: inverse.raw(), N: n, Slots: slots}, n); err != nil {
		return fail(err)
	}
	if err := d.flush(op); err != nil {
		return fail(err)
	}
	return values, counts, true, nil
}

// uniqueReport prints Unique's plan and, where it sorts every key or the
// distinct ones, the sort's.
type uniqueReport struct {
	up uniquePlan
	rp host.Plan
}

func (r uniqueReport) String() string { return r.up.String() + " | radix: " + r.rp.String() }
