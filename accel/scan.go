package accel

import (
	"encoding/binary"
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// Prefix sums: the reduce-then-scan of clkernels/common/scan_body.h, and
// Cumsum on it.

func scanVariant(dt DType) kernels.ScanVariant {
	switch dt {
	case Int32, Uint32:
		return kernels.ScanU32
	case Int64, Uint64:
		return kernels.ScanU64
	case Float32:
		return kernels.ScanF32
	}
	return kernels.ScanF64
}

// scanSubgroups says whether the device has the scan's subgroup variant
// for dt (scanSubgroups).
func (d *Device) scanSubgroups(dt DType) bool {
	return scanSubgroups(d.caps, dt.Size(), dt == Int64 || dt == Uint64)
}

// scan is a prefix sum queued on the device: its partial sums stay until
// release, so that its total can be read after the op has queued the
// rest of its work.
type scan struct {
	d        *Device
	dt       DType
	partials *DeviceTensor // [groups+1]; the total at [groups]
	groups   int64         // reduce-then-scan's groups, or the chained scan's tiles
}

// scanBuf queues the inclusive or exclusive prefix sums of n elements (or
// of n flags of the given kind, kernels.Flag*) of x into y as dt (y may be
// x). Release the returned scan when done.
func (d *Device) scanBuf(op string, dt DType, x, y host.Buffer, n int64, kind int64, exclusive bool) (*scan, error) {
	s := &scan{d: d, dt: dt}
	if n == 0 {
		return s, nil
	}
	plan := d.plan(planScan(d.caps, n, int64(dt.Size()), d.scanSubgroups(dt)))
	if d.caps.Type != host.TypeCPU {
		// GPUs compile the kind and the exclusiveness in: tested at run
		// time, the kind's branch came between a work-item's loads
		// (scan_load), and a GPU compiler waits for a load before such a
		// branch (RADV's did, in every load of the chained scan's tile)
		plan = withKnob(withKnob(plan, host.KnobScanKind.Set(kind)), host.KnobScanExcl.Set(b2i(exclusive)))
	}
	d.report(op, "scan", plan)
	variant := scanVariant(dt)
	if host.KnobScanSg.Of(plan) != 0 {
		variant += "s"
	}
	if host.KnobChain.Of(plan) != 0 {
		return s, d.scanChain(op, s, plan, variant, x, y, n, kind, exclusive)
	}
	s.groups = plan.TotalGroups()
	var err error
	if s.partials, err = d.alloc(op, dt, []int64{s.groups + 1}); err != nil {
		return nil, err
	}
	one := plan
	one.Groups = [3]int64{1, 1, 1}
	for _, l := range []struct {
		plan host.Plan
		call host.Call
	}{
		{plan, kernels.ScanReduce{X: x, Partials: s.partials.raw(), N: n, Kind: kind}},
		{one, kernels.ScanPartials{Partials: s.partials.raw(), Groups: s.groups}},
		{plan, kernels.ScanApply{X: x, Y: y, Partials: s.partials.raw(), N: n, Kind: kind, Exclusive: b2i(exclusive)}},
	} {
		if err := d.launch(op, string(variant), l.plan, l.call); err != nil {
			s.release()
			return nil, err
		}
	}
	return s, nil
}

// scanChain queues the single-pass chained scan (CPU OpenCL drivers, GPUs)
// (plan knob CHAIN) and its fixup. CHAIN 1: its partials are the tiles'
// sums, the total at [tiles] as reduce-then-scan leaves it, and the tiles'
// inclusive prefixes; its flags a zeroed uint32 ticket counter and a state
// per tile. CHAIN 2: the total at partials[tiles]; the sums and prefixes
// in zeroed tagged words (scan_body.h). On error s holds nothing.
func (d *Device) scanChain(op string, s *scan, plan host.Plan, variant kernels.ScanVariant, x, y host.Buffer, n, kind int64, exclusive bool) error {
	tile := host.KnobItems.Of(plan) // the kernels' tile (scan_body.h), whatever TileElems says
	if host.KnobChain.Of(plan) == 2 {
		tile *= int64(plan.LocalSize)
	}
	s.groups = (n + tile - 1) / tile // tiles
	// CHAIN 1: partials [2*tiles+1], flags uint32 [tiles+1]; CHAIN 2: the
	// total at partials[tiles], and each tile's sum and prefix published
	// in tagged 64-bit words, one per 32 bits of an element (scan_body.h)
	pn, flagDT, fn := 2*s.groups+1, Uint32, s.groups+1
	if host.KnobChain.Of(plan) == 2 {
		pn, flagDT, fn = s.groups+1, Uint64, 2*s.groups*int64(s.dt.Size()/4)
	}
	var err error
	if s.partials, err = d.alloc(op, s.dt, []int64{pn}); err != nil {
		return err
	}
	var tmp temps
	defer tmp.release()
	flags, err := tmp.alloc(d, op, flagDT, fn)
	if err == nil {
		if err = d.fill(flags.raw(), 0, int64(flagDT.Size())*fn, []byte{0, 0, 0, 0}); err != nil {
			err = fmt.Errorf("accel: %s: zero the scan's flags: %w", op, err)
		}
	}
	if err == nil {
		err = run(d, op, variant, plan, kernels.ScanChain{X: x, Y: y, Partials: s.partials.raw(), Flags: flags.raw(),
			N: n, Kind: kind, Exclusive: b2i(exclusive)})
	}
	if err == nil {
		fix := plan
		if host.KnobChain.Of(plan) == 2 {
			fix = fixupPlan(d.caps, plan)
		}
		err = run(d, op, variant, fix, kernels.ScanFixup{X: x, Y: y, Partials: s.partials.raw(), Flags: flags.raw(),
			N: n, Kind: kind, Exclusive: b2i(exclusive)})
	}
	if err != nil {
		s.partials.Release()
		s.partials = nil
	}
	return err
}

// total reads the scan's total (one wait for the work queued so far).
func (s *scan) total(op string) (uint64, error) {
	if s.partials == nil {
		return 0, nil
	}
	size := int64(s.dt.Size())
	b := make([]byte, size)
	if err := s.d.h.Download(s.partials.raw(), s.groups*size, b); err != nil {
		return 0, fmt.Errorf("accel: %s: read the scan's total: %w", op, err)
	}
	if size == 4 {
		return uint64(binary.LittleEndian.Uint32(b)), nil
	}
	return binary.LittleEndian.Uint64(b), nil
}

// copyTotal queues the copy of the scan's total (dt's size) into dst at
// byte off, beside an op's flag words, so that one read after the op's
// passes returns both (the driver's copy: a word). Without elements it
// copies nothing; dst keeps its zero.
func (s *scan) copyTotal(op string, dst host.Buffer, off int64) error {
	if s.partials == nil {
		return nil
	}
	size := int64(s.dt.Size())
	if err := s.d.h.Copy(dst, off, s.partials.raw(), s.groups*size, size); err != nil {
		return fmt.Errorf("accel: %s: copy the scan's total: %w", op, err)
	}
	return nil
}

func (s *scan) release() {
	if s != nil {
		s.partials.Release()
	}
}

// Cumsum returns the prefix sums of x taken flattened, as a 1-D tensor of
// x's dtype: inclusive (out[i] = x[0] + ... + x[i]) or exclusive (out[0] =
// 0). Integer sums wrap around; float sums are added in a parallel order,
// so they may differ from a sequential sum in the last bits.
func (d *Device) Cumsum(x *DeviceTensor, exclusive bool) (*DeviceTensor, error) {
	const op = "cumsum"
	if err := d.checkIn(op, "x", x); err != nil {
		return nil, err
	}
	if err := checkSortDType(op, "x", x.dtype, false); err != nil {
		return nil, err
	}
	out, err := d.alloc(op, x.dtype, []int64{x.n})
	if err != nil {
		return nil, err
	}
	e := int64(x.dtype.Size())
	plan := d.plan(planScan(d.caps, x.n, e, d.scanSubgroups(x.dtype)))
	d.reportModel(op, "cumsum", plan, func() traffic { return scanTraffic(plan, x.n, e, e) }, 2*x.n*e)
	s, err := d.scanBuf(op, x.dtype, x.raw(), out.raw(), x.n, kernels.FlagNone, exclusive)
	if err == nil {
		s.release()
		err = d.flush(op)
	}
	if err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// Compact returns the elements of x where mask (a Bool tensor of x's
// shape) is true, and their flat positions (int64), in order: NumPy's
// x[mask] and nonzero(mask) on the flattened tensors. It waits once, for
// the number of elements kept. The mask is read twice (a count per tile
// of elements, then the tiles' writes) and x's kept elements once; no
// position per element is written.
func (d *Device) Compact(x, mask *DeviceTensor) (out, index *DeviceTensor, err error) {
	const op = "compact"
	if err := d.checkIn(op, "x", x); err != nil {
		return nil, nil, err
	}
	if err := d.checkIn(op, "mask", mask); err != nil {
		return nil, nil, err
	}
	if mask.dtype != Bool {
		return nil, nil, argErr(op, "mask", "dtype "+mask.dtype.String(), "bool", ErrInvalidArgument)
	}
	if !sameShape(mask.shape, x.shape) {
		return nil, nil, argErr(op, "mask", fmt.Sprintf("shape %v", mask.shape), fmt.Sprintf("x's shape %v", x.shape), ErrInvalidArgument)
	}
	if x.dtype.Size() != 4 && x.dtype.Size() != 8 {
		return nil, nil, argErr(op, "x", "dtype "+x.dtype.String(), "a 4- or 8-byte dtype", ErrUnsupported)
	}
	// each tile's kept elements counted, the counts scanned (one wait
	// for the total), each tile's kept elements written from its start
	var tmp temps
	defer tmp.release()
	tp := d.elementwise(op, x.n)
	tiles := tp.Tiles
	tcnt, err := tmp.alloc(d, op, Uint64, tiles+1)
	if err != nil {
		return nil, nil, err
	}
	if err := d.fill(tcnt.raw(), 8*tiles, 8, []byte{0, 0, 0, 0}); err != nil {
		return nil, nil, fmt.Errorf("accel: %s: %w", op, err)
	}
	if x.n > 0 {
		if err := run(d, op, kernels.MoveW32, tp, kernels.MoveTcount{Flags: mask.raw(), Tcnt: tcnt.raw(), N: x.n,
			Kind: kernels.FlagMask8}); err != nil {
			return nil, nil, err
		}
	}
	s, err := d.scanBuf(op, Uint64, tcnt.raw(), tcnt.raw(), tiles+1, kernels.FlagNone, true)
	if err != nil {
		return nil, nil, err
	}
	defer s.release()
	if err := d.flush(op); err != nil {
		return nil, nil, err
	}
	total, err := s.total(op)
	if err != nil {
		return nil, nil, err
	}
	k := int64(total)
	if d.reporting() {
		sp := d.plan(planScan(d.caps, tiles+1, 8, d.scanSubgroups(Uint64)))
		e := int64(x.dtype.Size())
		d.reportModel(op, "compact", tp, func() traffic { return compactTraffic(sp, x.n, k, e, tiles) }, compactMinBytes(x.n, k, e))
	}
	var outs temps
	if out, err = outs.alloc(d, op, x.dtype, k); err == nil {
		index, err = outs.alloc(d, op, Int64, k)
	}
	if err == nil && k > 0 {
		err = run(d, op, wordVariant(x.dtype), tp, kernels.MoveTcompact{Dst: out.raw(), Src: x.raw(), Idx: index.raw(),
			Flags: mask.raw(), Tcnt: tcnt.raw(), N: x.n, Kind: kernels.FlagMask8, Add: 0, HasSrc: 1, HasIdx: 1})
	}
	if err == nil {
		err = d.flush(op)
	}
	if err != nil {
		outs.release()
		return nil, nil, err
	}
	return out, index, nil
}

func wordVariant(dt DType) kernels.MoveVariant {
	if dt.Size() == 8 {
		return kernels.MoveW64
	}
	return kernels.MoveW32
}
