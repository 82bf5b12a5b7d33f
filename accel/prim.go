package accel

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/accelkern/accel/host"
)

// Device primitives: prefix sums, compaction, stable radix sort, unique and
// segmented reductions. They are public ops and the building blocks of the
// bit-reproducible scatter and the sparse kernels. Each runs on 1-D data
// (tensors of any shape are taken flattened, as NumPy does without an
// axis) with int64 counters and offsets throughout.

// Flag sources of the scan and move kernels (memory.h).
const (
	flagNone   = 0
	flagMask8  = 1
	flagHead32 = 2
	flagHead64 = 3
)

// Modes of the kernels (scan_body.h, radix_body.h, move_body.h,
// segment_body.h).
const (
	scanReduce   = 0
	scanPartials = 1
	scanApply    = 2

	radixPrep    = 0
	radixCount   = 1
	radixScatter = 2

	radixUnpacked = 0 // radix_body.h's pack argument
	radixPackOut  = 1
	radixPacked   = 2
	radixUnpack   = 3

	mvGather  = 0
	mvScatter = 1
	mvCompact = 2
	mvEnds    = 3
	mvCounts  = 4

	segValidate = 0
	segReduce   = 1
)

// Key kinds of radix_body.h.
const (
	kindUnsigned = 0
	kindSigned   = 1
	kindFloat    = 2
)

func scanVariant(dt DType) string {
	switch dt {
	case Int32, Uint32:
		return "u32"
	case Int64, Uint64:
		return "u64"
	case Float32:
		return "f32"
	}
	return "f64"
}

func wordVariant(dt DType) string {
	if dt.Size() == 8 {
		return "w64"
	}
	return "w32"
}

func bufArg(b host.Buffer) host.Arg {
	if b == nil {
		return host.U64(0)
	}
	return host.BufArg(b)
}

// scanSubgroups says whether the device has the scan's subgroup variant
// for dt: Vulkan with subgroup arithmetic, on 64-bit integers also
// shaderSubgroupExtendedTypes.
func (d *Device) scanSubgroups(dt DType) bool {
	c := d.caps
	if c.Backend != host.Vulkan || !c.SubgroupArith {
		return false
	}
	switch dt {
	case Int64, Uint64:
		return c.SubgroupArith64
	case Float64:
		return c.FP64
	}
	return true
}

// scanBuf writes the inclusive or exclusive prefix sums of n elements (or
// of n flags of the given kind) of x into y as dt, and returns the total's
// bits when asked (one 8-byte read).
func (d *Device) scanBuf(op string, dt DType, x, y host.Buffer, n, kind int64, exclusive, wantTotal bool) (uint64, float64, error) {
	if n == 0 {
		return 0, 0, nil
	}
	size := int64(dt.Size())
	plan := d.plan(host.PlanScan(d.caps, n, size, d.scanSubgroups(dt)))
	variant := scanVariant(dt)
	if plan.Knob("SCAN_SG") != 0 {
		variant += "s"
	}
	g := plan.TotalGroups()
	partials, err := d.alloc(op, dt, []int64{g + 1})
	if err != nil {
		return 0, 0, err
	}
	defer partials.Release()
	var secs float64
	run := func(p host.Plan, count, mode int64) error {
		// OpenCL has one entry per mode; Vulkan's one entry takes the mode.
		entry := [...]string{"scan_reduce_k", "scan_partials_k", "scan_apply_k"}[mode]
		spec := host.KernelSpec{File: "scan", Variant: variant, Entry: entry}
		p = host.Fold(d.caps, p, host.Knob{Name: "SCAN_MODE", ID: 5, Value: mode},
			host.Knob{Name: "SCAN_EXCL", ID: 6, Value: b2i(exclusive)}, host.Knob{Name: "SCAN_KIND", ID: 7, Value: kind})
		s, err := d.launch(spec, p, host.BufArg(x), host.BufArg(y), host.BufArg(partials.raw()),
			host.I64(count), host.I64(kind), host.I64(b2i(exclusive)), host.I64(mode))
		secs += s
		if err != nil {
			return fmt.Errorf("accel: %s: scan: %w", op, err)
		}
		return nil
	}
	one := plan
	one.Groups = [3]int64{1, 1, 1}
	if err := run(plan, n, scanReduce); err != nil {
		return 0, 0, err
	}
	if err := run(one, g, scanPartials); err != nil {
		return 0, 0, err
	}
	if err := run(plan, n, scanApply); err != nil {
		return 0, 0, err
	}
	if !wantTotal {
		return 0, secs, nil
	}
	tb := make([]byte, size)
	if err := d.h.Download(partials.raw(), g*size, tb); err != nil {
		return 0, 0, err
	}
	if size == 4 {
		return uint64(binary.LittleEndian.Uint32(tb)), secs, nil
	}
	return binary.LittleEndian.Uint64(tb), secs, nil
}

// move runs one mode of the move kernel over n positions.
func (d *Device) move(op string, wordBytes int, mode int64, n int64, dst, src, idx, flags, pos host.Buffer, kind, add int64) (float64, error) {
	if n == 0 {
		return 0, nil
	}
	variant := "w32"
	if wordBytes == 8 {
		variant = "w64"
	}
	spec := host.KernelSpec{File: "move", Variant: variant, Entry: "move"}
	plan := host.Fold(d.caps, d.plan(host.PlanElementwise(op, d.caps, n)), host.Knob{Name: "MOVE_MODE", ID: 3, Value: mode},
		host.Knob{Name: "MOVE_KIND", ID: 4, Value: kind}, host.Knob{Name: "MOVE_HAS_SRC", ID: 5, Value: b2i(src != nil)},
		host.Knob{Name: "MOVE_HAS_IDX", ID: 6, Value: b2i(idx != nil)})
	secs, err := d.launch(spec, plan, bufArg(dst), bufArg(src), bufArg(idx), bufArg(flags), bufArg(pos),
		host.I64(n), host.I64(kind), host.I64(add), host.I64(b2i(src != nil)), host.I64(b2i(idx != nil)), host.I64(mode))
	if err != nil {
		return 0, fmt.Errorf("accel: %s: move: %w", op, err)
	}
	return secs, nil
}

// sortKeys is the result of a radix sort: the keys' order bits, sorted,
// and the permutation (int64). The caller releases both.
type sortKeys struct {
	keys *DeviceTensor // order bits (uint32 or uint64 words)
	perm *DeviceTensor
}

func (s sortKeys) release() {
	s.keys.Release()
	s.perm.Release()
}

// radixSort sorts n keys of wordBytes each (stable, LSD), looking at the
// low keyBits bits of their order bits (keys of a kindUnsigned sort with
// keyBits < 8*wordBytes must be below 2^keyBits). kind says how keys map to
// order bits (radix_body.h); with initPerm the permutation starts from its
// entries, which lie in [0, entryLimit), instead of the positions (so a
// sort can carry an int64 payload).
func (d *Device) radixSort(op string, keys host.Buffer, n int64, wordBytes int, kind int64, descending bool,
	keyBits int, initPerm host.Buffer, entryLimit int64) (sortKeys, float64, error) {
	wdt, variant := Uint32, "k32"
	if wordBytes == 8 {
		wdt, variant = Uint64, "k64"
	}
	var res sortKeys
	var err error
	if res.keys, err = d.alloc(op, wdt, []int64{n}); err != nil {
		return res, 0, err
	}
	if res.perm, err = d.alloc(op, Int64, []int64{n}); err != nil {
		res.keys.Release()
		return res, 0, err
	}
	if n == 0 {
		return res, 0, nil
	}
	fail := func(err error) (sortKeys, float64, error) {
		res.release()
		return sortKeys{}, 0, err
	}
	tmpK, err := d.alloc(op, wdt, []int64{n})
	if err != nil {
		return fail(err)
	}
	defer tmpK.Release()
	tmpP, err := d.alloc(op, Int64, []int64{n})
	if err != nil {
		return fail(err)
	}
	defer tmpP.Release()

	plan := host.PlanRadix(d.caps, n)
	radixBits := int(plan.Knob("RADIX_BITS"))
	items := plan.TotalGroups() * int64(plan.LocalSize)
	chunk := (n + items - 1) / items
	hist, err := d.alloc(op, Uint64, []int64{int64(1<<radixBits) * items})
	if err != nil {
		return fail(err)
	}
	defer hist.Release()
	spec := host.KernelSpec{File: "radix", Variant: variant, Entry: "radix"}
	var secs float64
	run := func(mode int64, kin, kout, pin, pout host.Buffer, shift, first, pack int64) error {
		plan := radixFold(d.caps, plan, mode, first, kind, descending, pack)
		s, err := d.launch(spec, plan, host.BufArg(kin), host.BufArg(kout), bufArg(pin), host.BufArg(pout),
			host.BufArg(hist.raw()), host.I64(n), host.I64(chunk), host.I64(shift), host.I64(kind),
			host.I64(b2i(descending)), host.I64(first), host.I64(mode), host.I64(pack))
		secs += s
		if err != nil {
			return fmt.Errorf("accel: %s: radix sort: %w", op, err)
		}
		return nil
	}
	// At least one pass, which also lays out the permutation.
	passes := max((keyBits+radixBits-1)/radixBits, 1)
	// keys and entries below 2^32 travel packed in one word between the
	// passes (radix_body.h), through bufP
	if initPerm == nil {
		entryLimit = n
	}
	packed := (wordBytes == 4 || keyBits <= 32) && entryLimit <= 1<<32 && passes > 1
	// Buffers alternate so that the last pass writes into res.
	bufK := [2]host.Buffer{res.keys.raw(), tmpK.raw()}
	bufP := [2]host.Buffer{res.perm.raw(), tmpP.raw()}
	cur := passes % 2 // where pass 0's input lives
	kin := keys
	if kind != kindUnsigned || descending {
		// order bits first, into the buffer pass 0 reads
		s, err := d.radixPrep(op, keys, bufK[cur], n, wordBytes, kind, descending)
		if err != nil {
			return fail(err)
		}
		secs += s
		kin = bufK[cur]
	}
	pin := initPerm
	for pass := 0; pass < passes; pass++ {
		out := 1 - cur
		if pass == passes-1 {
			out = 0
		}
		pack := int64(radixUnpacked)
		if packed {
			switch pass {
			case 0:
				pack = radixPackOut
			case passes - 1:
				pack = radixUnpack
			default:
				pack = radixPacked
			}
		}
		if err := run(radixCount, kin, bufK[out], pin, bufP[out], int64(pass*radixBits), 0, pack); err != nil {
			return fail(err)
		}
		if _, s, err := d.scanBuf(op, Uint64, hist.raw(), hist.raw(), hist.n, flagNone, true, false); err != nil {
			return fail(err)
		} else {
			secs += s
		}
		first := int64(0)
		if pass == 0 && initPerm == nil {
			first = 1
		}
		if err := run(radixScatter, kin, bufK[out], pin, bufP[out], int64(pass*radixBits), first, pack); err != nil {
			return fail(err)
		}
		kin, pin = bufK[out], bufP[out]
		cur = out
	}
	return res, secs, nil
}

// radixPrep writes the order bits of n keys of wordBytes each (the radix
// sort's first step; for integer kinds also its inverse) from kin to kout.
func (d *Device) radixPrep(op string, kin, kout host.Buffer, n int64, wordBytes int, kind int64, descending bool) (float64, error) {
	if n == 0 {
		return 0, nil
	}
	variant := "k32"
	if wordBytes == 8 {
		variant = "k64"
	}
	plan := host.PlanRadix(d.caps, n)
	items := plan.TotalGroups() * int64(plan.LocalSize)
	s, err := d.launch(host.KernelSpec{File: "radix", Variant: variant, Entry: "radix"}, radixFold(d.caps, plan, radixPrep, 1, kind, descending, radixUnpacked),
		host.BufArg(kin), host.BufArg(kout), host.U64(0), host.BufArg(kout), host.BufArg(kout), host.I64(n),
		host.I64((n+items-1)/items), host.I64(0), host.I64(kind), host.I64(b2i(descending)), host.I64(1), host.I64(radixPrep), host.I64(radixUnpacked))
	if err != nil {
		return 0, fmt.Errorf("accel: %s: radix sort: %w", op, err)
	}
	return s, nil
}

// segmentFold folds the segment kernel's mode-like arguments into plan's
// knobs where the driver wants them (host.Fold).
func segmentFold(caps host.Caps, plan host.Plan, red int64, includeSelf, hasPerm bool, mode int64) host.Plan {
	return host.Fold(caps, plan, host.Knob{Name: "SEG_RED", ID: 3, Value: red}, host.Knob{Name: "SEG_SELF", ID: 4, Value: b2i(includeSelf)},
		host.Knob{Name: "SEG_HAS_PERM", ID: 5, Value: b2i(hasPerm)}, host.Knob{Name: "SEG_MODE", ID: 6, Value: mode})
}

// radixFold folds the radix kernel's mode-like arguments into plan's knobs
// where the driver wants them (host.Fold).
func radixFold(caps host.Caps, plan host.Plan, mode, first, kind int64, descending bool, pack int64) host.Plan {
	return host.Fold(caps, plan, host.Knob{Name: "RADIX_MODE", ID: 4, Value: mode}, host.Knob{Name: "RADIX_FIRST", ID: 5, Value: first},
		host.Knob{Name: "RADIX_KIND", ID: 6, Value: kind}, host.Knob{Name: "RADIX_DESC", ID: 7, Value: b2i(descending)},
		host.Knob{Name: "RADIX_PACK", ID: 8, Value: pack})
}

// keyKind maps a key dtype to the radix sort's kind.
func keyKind(dt DType) int64 {
	switch dt {
	case Int32, Int64:
		return kindSigned
	case Float32, Float64:
		return kindFloat
	}
	return kindUnsigned
}

func checkSortDType(op, arg string, dt DType, ints bool) error {
	switch dt {
	case Int32, Int64, Uint32, Uint64:
		return nil
	case Float32, Float64:
		if !ints {
			return nil
		}
	}
	want := "int32, int64, uint32, uint64, float32 or float64"
	if ints {
		want = "int32, int64, uint32 or uint64"
	}
	return argErr(op, arg, "dtype "+dt.String(), want, ErrUnsupported)
}

// Cumsum returns the prefix sums of x taken flattened, as a 1-D tensor of
// x's dtype: inclusive (out[i] = x[0] + ... + x[i]) or exclusive (out[0] =
// 0). Integer sums wrap around; float sums are added in a parallel order,
// so they may differ from a sequential sum in the last bits.
func (d *Device) Cumsum(x *DeviceTensor, exclusive bool) (*DeviceTensor, error) {
	out, _, err := d.cumsum(x, exclusive)
	return out, err
}

func (d *Device) cumsum(x *DeviceTensor, exclusive bool) (*DeviceTensor, float64, error) {
	const op = "cumsum"
	if err := d.checkIn(op, "x", x); err != nil {
		return nil, 0, err
	}
	if err := checkSortDType(op, "x", x.dtype, false); err != nil {
		return nil, 0, err
	}
	out, err := d.alloc(op, x.dtype, []int64{x.n})
	if err != nil {
		return nil, 0, err
	}
	_, secs, err := d.scanBuf(op, x.dtype, x.raw(), out.raw(), x.n, flagNone, exclusive, false)
	if err != nil {
		out.Release()
		return nil, 0, err
	}
	return out, secs, nil
}

// Compact returns the elements of x where mask (a Bool tensor of x's
// shape) is true, and their flat positions (int64), in order: NumPy's
// x[mask] and nonzero(mask) on the flattened tensors.
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
	pos, err := d.alloc(op, Int64, []int64{x.n})
	if err != nil {
		return nil, nil, err
	}
	defer pos.Release()
	total, _, err := d.scanBuf(op, Int64, mask.raw(), pos.raw(), x.n, flagMask8, true, true)
	if err != nil {
		return nil, nil, err
	}
	k := int64(total)
	if out, err = d.alloc(op, x.dtype, []int64{k}); err != nil {
		return nil, nil, err
	}
	if index, err = d.alloc(op, Int64, []int64{k}); err != nil {
		out.Release()
		return nil, nil, err
	}
	if k > 0 {
		if _, err := d.move(op, x.dtype.Size(), mvCompact, x.n, out.raw(), x.raw(), index.raw(), mask.raw(), pos.raw(), flagMask8, 0); err != nil {
			out.Release()
			index.Release()
			return nil, nil, err
		}
	}
	return out, index, nil
}

// Sort sorts keys (taken flattened) with a stable radix sort and returns
// the sorted keys and the permutation (int64: sorted[i] = keys[perm[i]]).
// Floats order as NumPy's: -inf < ... < +inf < NaN ascending, NaN first
// descending, -0.0 equal to 0.0; equal keys keep their input order.
func (d *Device) Sort(keys *DeviceTensor, descending bool) (sorted, perm *DeviceTensor, err error) {
	sorted, _, perm, _, err = d.sortByKey("sort", keys, nil, descending)
	return sorted, perm, err
}

// SortByKey sorts keys as Sort does and carries values (of any 4- or 8-byte
// dtype and keys' length) along: sortedValues[i] = values[perm[i]].
func (d *Device) SortByKey(keys, values *DeviceTensor, descending bool) (sortedKeys, sortedValues, perm *DeviceTensor, err error) {
	sortedKeys, sortedValues, perm, _, err = d.sortByKey("sort_by_key", keys, values, descending)
	return sortedKeys, sortedValues, perm, err
}

func (d *Device) sortByKey(op string, keys, values *DeviceTensor, descending bool) (sk, sv, perm *DeviceTensor, secs float64, err error) {
	if err := d.checkIn(op, "keys", keys); err != nil {
		return nil, nil, nil, 0, err
	}
	if err := checkSortDType(op, "keys", keys.dtype, false); err != nil {
		return nil, nil, nil, 0, err
	}
	if values != nil {
		if err := d.checkIn(op, "values", values); err != nil {
			return nil, nil, nil, 0, err
		}
		if values.n != keys.n {
			return nil, nil, nil, 0, argErr(op, "values", fmt.Sprintf("%d elements", values.n), fmt.Sprintf("%d elements, as keys", keys.n), ErrInvalidArgument)
		}
		if values.dtype.Size() != 4 && values.dtype.Size() != 8 {
			return nil, nil, nil, 0, argErr(op, "values", "dtype "+values.dtype.String(), "a 4- or 8-byte dtype", ErrUnsupported)
		}
	}
	w := keys.dtype.Size()
	res, secs, err := d.radixSort(op, keys.raw(), keys.n, w, keyKind(keys.dtype), descending, 8*w, nil, 0)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	var s float64
	kind := keyKind(keys.dtype)
	if kind == kindUnsigned && !descending {
		// the order bits are the keys, of the same unsigned dtype
		sk, res.keys = res.keys, nil
	} else if sk, err = d.alloc(op, keys.dtype, []int64{keys.n}); err != nil {
		res.release()
		return nil, nil, nil, 0, err
	} else if kind == kindFloat {
		// Order bits fold -0.0 into 0.0 and every NaN into one: gather
		// the keys themselves.
		s, err = d.move(op, w, mvGather, keys.n, sk.raw(), keys.raw(), res.perm.raw(), nil, nil, 0, 0)
	} else {
		// An integer key's order bits map back to it with the same map
		// (a sign flip, a complement: both undo themselves), one
		// sequential pass instead of a gather.
		s, err = d.radixPrep(op, res.keys.raw(), sk.raw(), keys.n, w, kind, descending)
	}
	if res.keys != nil {
		res.keys.Release()
	}
	secs += s
	if err == nil && values != nil {
		if sv, err = d.alloc(op, values.dtype, []int64{values.n}); err == nil {
			s, err = d.move(op, values.dtype.Size(), mvGather, values.n, sv.raw(), values.raw(), res.perm.raw(), nil, nil, 0, 0)
			secs += s
		}
	}
	if err != nil {
		for _, t := range []*DeviceTensor{sk, sv, res.perm} {
			if t != nil {
				t.Release()
			}
		}
		return nil, nil, nil, 0, err
	}
	return sk, sv, res.perm, secs, nil
}

// Unique returns the sorted distinct values of integer keys x (taken
// flattened), the inverse index of every element (int64: values[inverse[i]]
// = x[i]) and how often each value occurs (int64): NumPy's unique with
// return_inverse and return_counts.
func (d *Device) Unique(x *DeviceTensor) (values, inverse, counts *DeviceTensor, err error) {
	values, inverse, counts, _, err = d.unique(x)
	return values, inverse, counts, err
}

func (d *Device) unique(x *DeviceTensor) (values, inverse, counts *DeviceTensor, secs float64, err error) {
	const op = "unique"
	if err := d.checkIn(op, "x", x); err != nil {
		return nil, nil, nil, 0, err
	}
	if err := checkSortDType(op, "x", x.dtype, true); err != nil {
		return nil, nil, nil, 0, err
	}
	n := x.n
	w := x.dtype.Size()
	var tmps []*DeviceTensor
	defer func() {
		for _, t := range tmps {
			t.Release()
		}
	}()
	fail := func(err error) (*DeviceTensor, *DeviceTensor, *DeviceTensor, float64, error) {
		for _, t := range []*DeviceTensor{values, inverse, counts} {
			if t != nil {
				t.Release()
			}
		}
		return nil, nil, nil, 0, err
	}
	if inverse, err = d.alloc(op, Int64, []int64{n}); err != nil {
		return fail(err)
	}
	if n == 0 {
		if values, err = d.alloc(op, x.dtype, []int64{0}); err != nil {
			return fail(err)
		}
		if counts, err = d.alloc(op, Int64, []int64{0}); err != nil {
			return fail(err)
		}
		return values, inverse, counts, 0, nil
	}
	res, s, err := d.radixSort(op, x.raw(), n, w, keyKind(x.dtype), false, 8*w, nil, 0)
	if err != nil {
		return fail(err)
	}
	secs += s
	tmps = append(tmps, res.keys, res.perm)
	head := int64(flagHead32)
	if w == 8 {
		head = flagHead64
	}
	// seg[i]: 1-based run id of sorted position i; the total is the count
	seg, err := d.alloc(op, Int64, []int64{n})
	if err != nil {
		return fail(err)
	}
	tmps = append(tmps, seg)
	u64, s, err := d.scanBuf(op, Int64, res.keys.raw(), seg.raw(), n, head, false, true)
	if err != nil {
		return fail(err)
	}
	secs += s
	u := int64(u64)
	sortedX, err := d.alloc(op, x.dtype, []int64{n})
	if err != nil {
		return fail(err)
	}
	tmps = append(tmps, sortedX)
	ends, err := d.alloc(op, Int64, []int64{u})
	if err != nil {
		return fail(err)
	}
	tmps = append(tmps, ends)
	if values, err = d.alloc(op, x.dtype, []int64{u}); err != nil {
		return fail(err)
	}
	if counts, err = d.alloc(op, Int64, []int64{u}); err != nil {
		return fail(err)
	}
	steps := []func() (float64, error){
		func() (float64, error) {
			return d.move(op, w, mvGather, n, sortedX.raw(), x.raw(), res.perm.raw(), nil, nil, 0, 0)
		},
		func() (float64, error) {
			return d.move(op, w, mvCompact, n, values.raw(), sortedX.raw(), nil, res.keys.raw(), seg.raw(), head, -1)
		},
		func() (float64, error) {
			return d.move(op, 8, mvScatter, n, inverse.raw(), seg.raw(), res.perm.raw(), nil, nil, 0, -1)
		},
		func() (float64, error) {
			return d.move(op, 8, mvEnds, n, ends.raw(), seg.raw(), nil, nil, nil, 0, 0)
		},
		func() (float64, error) {
			return d.move(op, 8, mvCounts, u, counts.raw(), ends.raw(), nil, nil, nil, 0, 0)
		},
	}
	for _, f := range steps {
		s, err := f()
		if err != nil {
			return fail(err)
		}
		secs += s
	}
	return values, inverse, counts, secs, nil
}

// Segment reductions of SegmentReduce.
const (
	SegmentSum = "sum"
	SegmentMin = "min"
	SegmentMax = "max"
)

var segmentCodes = map[string]int64{SegmentSum: 1, SegmentMin: 5, SegmentMax: 4} // RED_SUM, RED_AMIN, RED_AMAX

// SegmentReduce reduces values by segment id: out[s] folds, in order, the
// values whose id (int64, sorted ascending, in [0, numSegments)) is s.
// reduce is "sum", "min" or "max"; empty segments hold the identity (0,
// +inf or the dtype's max, -inf or the dtype's min); min and max propagate
// NaN. An unsorted or out-of-range id is an error naming its position.
func (d *Device) SegmentReduce(values, segmentIDs *DeviceTensor, reduce string, numSegments int64) (*DeviceTensor, error) {
	out, _, err := d.segmentReduce(values, segmentIDs, reduce, numSegments)
	return out, err
}

func checkSegmentArgs(op string, vdt DType, vshape []int64, idt DType, ishape []int64, reduce string, numSegments int64) error {
	if _, ok := segmentCodes[reduce]; !ok {
		return argErr(op, "reduce", fmt.Sprintf("%q", reduce), `"sum", "min" or "max"`, ErrInvalidArgument)
	}
	if numSegments < 0 {
		return argErr(op, "num_segments", numSegments, ">= 0", ErrInvalidArgument)
	}
	switch vdt {
	case Int32, Int64, Float32, Float64:
	default:
		return argErr(op, "values", "dtype "+vdt.String(), "int32, int64, float32 or float64", ErrUnsupported)
	}
	if idt != Int64 {
		return argErr(op, "segment_ids", "dtype "+idt.String(), "int64", ErrInvalidArgument)
	}
	if !sameShape(vshape, ishape) {
		return argErr(op, "segment_ids", fmt.Sprintf("shape %v", ishape), fmt.Sprintf("values' shape %v", vshape), ErrInvalidArgument)
	}
	return nil
}

// identityBytes is the identity of a reduction code as dt's bytes.
func identityBytes(dt DType, red int64) []byte {
	b := make([]byte, dt.Size())
	put := func(u uint64) {
		if len(b) == 4 {
			binary.LittleEndian.PutUint32(b, uint32(u))
		} else {
			binary.LittleEndian.PutUint64(b, u)
		}
	}
	switch red {
	case 2: // prod
		switch dt {
		case Float32:
			put(uint64(math.Float32bits(1)))
		case Float64:
			put(math.Float64bits(1))
		default:
			put(1)
		}
	case 4: // amax: lowest
		switch dt {
		case Float32:
			put(uint64(math.Float32bits(float32(math.Inf(-1)))))
		case Float64:
			put(math.Float64bits(math.Inf(-1)))
		case Int32:
			put(uint64(uint32(1 << 31)))
		default:
			put(1 << 63)
		}
	case 5: // amin: highest
		switch dt {
		case Float32:
			put(uint64(math.Float32bits(float32(math.Inf(1)))))
		case Float64:
			put(math.Float64bits(math.Inf(1)))
		case Int32:
			put(math.MaxInt32)
		default:
			put(math.MaxInt64)
		}
	}
	return b
}

func dtVariant(dt DType) string {
	return map[DType]string{Int32: "i32", Int64: "i64", Float32: "f32", Float64: "f64"}[dt]
}

// segmentRun folds runs of equal sorted 64-bit keys into out (segment
// kernel, SEG_REDUCE), in as many steps as the driver's loop limit needs.
func (d *Device) segmentRun(op string, dt DType, out, vals, keys, perm host.Buffer, n, red int64, includeSelf bool) (float64, error) {
	if n == 0 {
		return 0, nil
	}
	spec := host.KernelSpec{File: "segment", Variant: dtVariant(dt), Entry: "segment"}
	plan := segmentFold(d.caps, d.plan(host.PlanElementwise(op, d.caps, n)), red, includeSelf, perm != nil, segReduce)
	return d.steps(op, n, func(errBuf host.Buffer, limit, step int64) (float64, error) {
		s, err := d.launch(spec, plan, host.BufArg(out), host.BufArg(vals), host.BufArg(keys), bufArg(perm),
			host.BufArg(errBuf), host.I64(n), host.I64(0), host.I64(red), host.I64(b2i(includeSelf)),
			host.I64(b2i(perm != nil)), host.I64(limit), host.I64(step), host.I64(segReduce))
		if err != nil {
			return s, fmt.Errorf("accel: %s: segmented reduction: %w", op, err)
		}
		return s, nil
	})
}

// steps runs a kernel whose work-items walk runs of up to n elements, at
// most limit elements per launch (Caps.LoopLimit): launch(errBuf, limit,
// step) for step 0, 1, ... until a launch leaves err[1] (a uint32 word the
// kernel sets for an unfinished run) 0.
func (d *Device) steps(op string, n int64, launch func(errBuf host.Buffer, limit, step int64) (float64, error)) (float64, error) {
	errBuf, err := d.alloc(op, Uint32, []int64{2})
	if err != nil {
		return 0, err
	}
	defer errBuf.Release()
	limit := n
	if d.caps.LoopLimit > 0 {
		limit = d.caps.LoopLimit / 2 // as host.PlanRadix: well under the limit
	}
	var secs float64
	for step := int64(0); ; step++ {
		if err := d.h.Fill(errBuf.raw(), 0, 8, []byte{0, 0, 0, 0}); err != nil {
			return 0, err
		}
		s, err := launch(errBuf.raw(), limit, step)
		secs += s
		if err != nil {
			return 0, err
		}
		if limit >= n {
			return secs, nil
		}
		eb := make([]byte, 8)
		if err := d.h.Download(errBuf.raw(), 0, eb); err != nil {
			return 0, err
		}
		if binary.LittleEndian.Uint32(eb[4:]) == 0 {
			return secs, nil
		}
	}
}

func (d *Device) segmentReduce(values, ids *DeviceTensor, reduce string, numSegments int64) (*DeviceTensor, float64, error) {
	const op = "segment_reduce"
	if err := d.checkIn(op, "values", values); err != nil {
		return nil, 0, err
	}
	if err := d.checkIn(op, "segment_ids", ids); err != nil {
		return nil, 0, err
	}
	if err := checkSegmentArgs(op, values.dtype, values.shape, ids.dtype, ids.shape, reduce, numSegments); err != nil {
		return nil, 0, err
	}
	red := segmentCodes[reduce]
	n := values.n
	var secs float64
	if n > 0 {
		errBuf, err := d.alloc(op, Uint32, []int64{2})
		if err != nil {
			return nil, 0, err
		}
		defer errBuf.Release()
		if err := d.h.Fill(errBuf.raw(), 0, 4, []byte{0xff, 0xff, 0xff, 0xff}); err != nil {
			return nil, 0, err
		}
		spec := host.KernelSpec{File: "segment", Variant: dtVariant(values.dtype), Entry: "segment"}
		plan := segmentFold(d.caps, d.plan(host.PlanElementwise(op, d.caps, n)), red, true, false, segValidate)
		s, err := d.launch(spec, plan, host.BufArg(values.raw()), host.BufArg(values.raw()), host.BufArg(ids.raw()),
			host.U64(0), host.BufArg(errBuf.raw()), host.I64(n), host.I64(numSegments), host.I64(red), host.I64(1),
			host.I64(0), host.I64(n), host.I64(0), host.I64(segValidate))
		secs += s
		if err != nil {
			return nil, 0, fmt.Errorf("accel: %s: %w", op, err)
		}
		eb := make([]byte, 4)
		if err := d.h.Download(errBuf.raw(), 0, eb); err != nil {
			return nil, 0, err
		}
		if tile := binary.LittleEndian.Uint32(eb); tile != math.MaxUint32 {
			h, err := ids.ToHost()
			if err != nil {
				return nil, 0, err
			}
			return nil, 0, badSegmentID(op, h.Int64s(), int64(tile)<<16, numSegments)
		}
	}
	out, err := d.alloc(op, values.dtype, []int64{numSegments})
	if err != nil {
		return nil, 0, err
	}
	if numSegments > 0 {
		if err := d.h.Fill(out.raw(), 0, numSegments*int64(values.dtype.Size()), identityBytes(values.dtype, red)); err != nil {
			out.Release()
			return nil, 0, err
		}
	}
	s, err := d.segmentRun(op, values.dtype, out.raw(), values.raw(), ids.raw(), nil, n, red, true)
	if err != nil {
		out.Release()
		return nil, 0, err
	}
	return out, secs + s, nil
}

// badSegmentID names the first unsorted or out-of-range id at or after from.
func badSegmentID(op string, ids []int64, from, segments int64) error {
	for i := from; i < int64(len(ids)); i++ {
		id := ids[i]
		if id < 0 || id >= segments {
			return argErr(op, fmt.Sprintf("segment_ids[%d]", i), id, fmt.Sprintf("in [0, %d) (num_segments)", segments), ErrInvalidArgument)
		}
		if i > 0 && id < ids[i-1] {
			return argErr(op, fmt.Sprintf("segment_ids[%d]", i), id, fmt.Sprintf(">= segment_ids[%d] = %d (ids must be sorted ascending)", i-1, ids[i-1]), ErrInvalidArgument)
		}
	}
	return fmt.Errorf("accel: %s: the device flagged segment id tile %d but none in it is bad: %w", op, from>>16, host.ErrDriver)
}

// keyBitsFor is how many low bits hold every value in [0, n).
func keyBitsFor(n int64) int {
	if n <= 1 {
		return 0
	}
	return bits.Len64(uint64(n - 1))
}
