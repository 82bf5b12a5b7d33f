package accel

import (
	"fmt"
	"math/bits"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// The stable LSD radix sort of clkernels/common/radix_body.h, under Sort,
// SortByKey, Unique and the bit-reproducible scatter.

// sortKeys is the result of a radix sort: the keys' order bits, sorted,
// and the permutation (int64). The caller releases both.
type sortKeys struct {
	keys *DeviceTensor // order bits (uint32 or uint64 words), or XOR kx (mapped)
	perm *DeviceTensor
	// mapped: the last pass wrote the keys XOR the sort's kx
	// (radixSortMapped; the chunked passes and the sweep)
	mapped bool
}

func (s sortKeys) release() {
	s.keys.Release()
	s.perm.Release()
}

// radixSort sorts n keys of wordBytes each (stable, LSD), looking at the
// low keyBits bits of their order bits (keys of a KindUnsigned sort with
// keyBits < 8*wordBytes must be below 2^keyBits). kind (kernels.Kind*)
// says how keys map to order bits; with initPerm the permutation starts
// from its entries, which lie in [0, entryLimit), instead of the positions
// (so a sort can carry an int64 payload). Nothing is read back.
func (d *Device) radixSort(op string, keys host.Buffer, n int64, wordBytes int, kind int64, descending bool,
	keyBits int, initPerm host.Buffer, entryLimit int64) (sortKeys, error) {
	return d.radixSortMapped(op, keys, n, wordBytes, kind, descending, keyBits, initPerm, entryLimit, 0)
}

// radixSortMapped is radixSort whose last pass writes the sorted order
// bits XOR kx where its plan can (the chunked passes and the sweep; the
// result says so): a Sort of integer keys gets them back so, where their
// order bits are the keys XOR a mask (radixKeyMask), without a pass of
// its own.
func (d *Device) radixSortMapped(op string, keys host.Buffer, n int64, wordBytes int, kind int64, descending bool,
	keyBits int, initPerm host.Buffer, entryLimit int64, kx uint64) (sortKeys, error) {
	wdt := Uint32
	if wordBytes == 8 {
		wdt = Uint64
	}
	var res sortKeys
	var outs temps
	var err error
	if res.keys, err = outs.alloc(d, op, wdt, n); err != nil {
		return res, err
	}
	if res.perm, err = outs.alloc(d, op, Int64, n); err != nil {
		outs.release()
		return sortKeys{}, err
	}
	if n == 0 {
		return res, nil
	}
	var tmp temps
	defer tmp.release()
	fail := func(err error) (sortKeys, error) {
		outs.release()
		return sortKeys{}, err
	}
	tmpK, err := tmp.alloc(d, op, wdt, n)
	if err != nil {
		return fail(err)
	}
	tmpP, err := tmp.alloc(d, op, Int64, n)
	if err != nil {
		return fail(err)
	}
	if initPerm == nil {
		entryLimit = n
	}
	r, err := d.newRadixRun(op, &tmp, n, wordBytes, keyBits, entryLimit)
	if err != nil {
		return fail(err)
	}
	passes := r.passes
	// keys and entries below 2^32 travel packed in one word between the
	// passes (radix_body.h), through bufP
	packed, e32 := radixCarry(wordBytes, keyBits, entryLimit, passes)
	// Buffers alternate so that the last pass writes into res.
	bufK := [2]host.Buffer{res.keys.raw(), tmpK.raw()}
	bufP := [2]host.Buffer{res.perm.raw(), tmpP.raw()}
	if r.sweep || !r.tiled {
		// the passes find their buffers on the device (the passes whose
		// digit is one for every key skipped), the first reading the
		// caller's keys and making their order bits as it goes: the
		// sweep's, and the chunked passes' (CPUs)
		b := radixSweepBufs{k0: keys, p0: initPerm, k: bufK, p: bufP, first: b2i(initPerm == nil),
			carry: radixCarryCode(packed, e32), kind: kind, descending: b2i(descending), kx: int64(kx)}
		if err := r.roledPasses(d, op, b, kernels.RadixUnpacked); err != nil {
			return fail(err)
		}
		res.mapped = kx != 0
		return res, nil
	}
	cur := passes % 2 // where pass 0's input lives
	kin := keys
	if kind != kernels.KindUnsigned || descending {
		// order bits first, into the buffer pass 0 reads
		if err := d.radixPrep(op, keys, bufK[cur], n, wordBytes, kind, descending); err != nil {
			return fail(err)
		}
		kin = bufK[cur]
	}
	pin := initPerm
	for pass := 0; pass < passes; pass++ {
		out := 1 - cur
		if pass == passes-1 {
			out = 0
		}
		a := radixPassArgs{kin: kin, pin: pin, kout: bufK[out], pout: bufP[out],
			first: b2i(pass == 0 && initPerm == nil), pack: radixPack(packed, e32, pass, passes)}
		if err := r.pass(d, op, pass, a); err != nil {
			return fail(err)
		}
		kin, pin = bufK[out], bufP[out]
		cur = out
	}
	return res, nil
}

// radixSortWords sorts n packed words by their high halves, stably: each
// word's high half is a key below 2^keyBits (keyBits <= 32) and its low
// half a payload that travels with it (radix_body.h's packed passes from
// the first pass to the last, no permutation beside them). The sorted
// words are a new tensor; nothing is read back.
func (d *Device) radixSortWords(op string, words host.Buffer, n int64, keyBits int) (*DeviceTensor, error) {
	var outs temps
	res, err := outs.alloc(d, op, Uint64, n)
	if err != nil || n == 0 {
		return res, err
	}
	var tmp temps
	defer tmp.release()
	fail := func(err error) (*DeviceTensor, error) {
		outs.release()
		return nil, err
	}
	other, err := tmp.alloc(d, op, Uint64, n)
	if err != nil {
		return fail(err)
	}
	r, err := d.newRadixRun(op, &tmp, n, 8, keyBits, 1<<32) // the payloads are the words' low halves
	if err != nil {
		return fail(err)
	}
	// the last pass writes res: pass p writes buf[(passes-1-p) % 2]
	buf := [2]host.Buffer{res.raw(), other.raw()}
	if r.sweep || !r.tiled {
		if err := r.roledPasses(d, op, radixSweepBufs{p0: words, p: buf, carry: kernels.CarryWords,
			kind: kernels.KindUnsigned}, kernels.RadixPacked); err != nil {
			return fail(err)
		}
		return res, nil
	}
	in := words
	for pass := 0; pass < r.passes; pass++ {
		out := buf[(r.passes-1-pass)%2]
		if err := r.pass(d, op, pass, radixPassArgs{pin: in, pout: out, pack: kernels.RadixPacked}); err != nil {
			return fail(err)
		}
		in = out
	}
	return res, nil
}

// radixRun is what a radix sort's passes share: the plan and its variant,
// the passes, and their histogram (with the sweep, every pass's digit
// counts and the status words).
type radixRun struct {
	plan         host.Plan
	variant      kernels.RadixVariant
	wordBytes    int
	n, chunk     int64
	bits, passes int
	tiled, sweep bool
	hist, status *DeviceTensor
	// roles: the chunked passes' (knob RADIX_SKIP) words, each chunk's OR
	// and AND of its keys, then each pass's role
	roles *DeviceTensor
}

// newRadixRun plans a sort of n keys of wordBytes on keyBits bits (at least
// one pass, which also lays out the entries) and allocates its histogram
// in tmp.
func (d *Device) newRadixRun(op string, tmp *temps, n int64, wordBytes, keyBits int, entryLimit int64) (radixRun, error) {
	r := radixRun{plan: d.radixPlan(op, n, wordBytes, entryLimit), wordBytes: wordBytes, n: n}
	r.variant = radixVariant(d.caps, r.plan, wordBytes)
	r.bits = int(host.KnobRadixBits.Of(r.plan))
	r.tiled = host.KnobRadixKpt.Of(r.plan) > 0
	tiled := r.tiled
	items := r.plan.TotalGroups() * int64(r.plan.LocalSize)
	r.chunk = (n + items - 1) / items
	if tiled {
		// the histogram's columns: one per tile, as the kernels count them
		tile := int64(r.plan.LocalSize) * host.KnobRadixKpt.Of(r.plan)
		items = (n + tile - 1) / tile
	}
	r.passes = max((keyBits+r.bits-1)/r.bits, 1)
	r.sweep = tiled && host.KnobRadixSweep.Of(r.plan) > 0
	digits := int64(1) << r.bits
	histN := digits * items
	var err error
	if r.sweep {
		// every pass's digit counts, scanned flat; the tagged words: tiles
		// x digits, then a done mark per tile, then a role per pass
		histN = digits * int64(r.passes)
		if r.status, err = tmp.alloc(d, op, Uint64, (digits+1)*items+int64(r.passes)); err != nil {
			return r, err
		}
	}
	if !tiled && host.KnobRadixSkip.Of(r.plan) != 0 {
		// (whatever the passes: llvmpipe reads the role word in every pass)
		if r.roles, err = tmp.alloc(d, op, Uint64, 2*items+int64(r.passes)); err != nil {
			return r, err
		}
	}
	r.hist, err = tmp.alloc(d, op, Uint64, histN)
	return r, err
}

// start queues what precedes the sweep's first pass (r.sweep): every
// pass's digit counts of kin (packed words where pack is RadixPacked; the
// order bits of keys of kind KIND_* kind and descending) and each pass's
// role (radix_roles).
func (r radixRun) start(d *Device, op string, kin host.Buffer, pack, kind, descending int64) error {
	return d.radixSweepHist(op, r.variant, r.plan, kin, r.hist, r.status, r.n, r.wordBytes, r.passes, pack, kind, descending)
}

// roledPasses queues the passes that take their buffers by their place
// among the passes that run, b's (the sweep's, after its counts of b.k0,
// or of b.p0 where read is RadixPacked; else the chunked passes').
func (r radixRun) roledPasses(d *Device, op string, b radixSweepBufs, read int64) error {
	if !r.sweep {
		return r.chunkPasses(d, op, b)
	}
	kin := b.k0
	if read == kernels.RadixPacked {
		kin = b.p0
	}
	if err := r.start(d, op, kin, read, b.kind, b.descending); err != nil {
		return err
	}
	return r.sweepPasses(d, op, b)
}

// pass queues digit pass number pass with a's buffers and packing (the
// tiled plan without the sweep).
func (r radixRun) pass(d *Device, op string, pass int, a radixPassArgs) error {
	a.n, a.shift = r.n, int64(pass*r.bits)
	return d.radixPass(op, r.variant, r.plan, r.hist, a)
}

// chunkPasses queues the chunked plans' passes (radix_count, the scan of
// its counts, radix_scatter: the CPUs'), with b's buffers and words as the
// sweep takes them. Where the plan skips (knob RADIX_SKIP) and the sort
// has three passes or more and radixSkipMin keys, the first count also
// writes each chunk's OR and AND of its keys and radix_aroles each pass's
// role from them: every pass is queued, and one whose digit is one for
// every key moves nothing.
// The first pass always runs; a pass's packing is its place's where the
// kernels read it at run time, else the host's (radixPack, folded where
// the driver runs both sides of a branch: Caps.FoldArgs), and there the
// last pass runs too where it unpacks what the passes carry.
func (r radixRun) chunkPasses(d *Device, op string, b radixSweepBufs) error {
	// the first count of three passes or more makes the OR and AND, whose
	// roles the passes read from radixSkipMin keys on (one compiled count
	// for both)
	agreeing := r.roles != nil && r.passes >= 3
	skip := radixChunkSkips(r.plan, r.n, r.passes)
	var roles host.Buffer
	if r.roles != nil {
		roles = r.roles.raw()
	}
	items := r.plan.TotalGroups() * int64(r.plan.LocalSize)
	for pass := 0; pass < r.passes; pass++ {
		pack := radixCarryPack(b.carry, pass, r.passes)
		kind, desc, first := int64(kernels.KindUnsigned), int64(0), int64(0)
		if pass == 0 {
			kind, desc, first = b.kind, b.descending, b.first
		}
		if err := d.launch(op, string(r.variant), r.plan, kernels.RadixCount{K0: b.k0, P0: b.p0, Ka: b.k[0], Kb: b.k[1],
			Pa: b.p[0], Pb: b.p[1], Hist: r.hist.raw(), Roles: roles, N: r.n, Chunk: r.chunk, Pass: int64(pass),
			Passes: int64(r.passes), Skip: b2i(skip), Carry: b.carry, Hpack: radixReadPack(pack), Kind: kind, Descending: desc,
			Agree: b2i(agreeing && pass == 0)}); err != nil {
			return err
		}
		if skip && pass == 0 {
			one := r.plan
			one.Groups = [3]int64{1, 1, 1}
			// where the packing is folded (the host's for all the passes),
			// the last pass unpacks what the passes carry
			last := b2i(d.caps.FoldArgs && (b.carry == kernels.CarryPacked || b.carry == kernels.CarryE32))
			if err := d.launch(op, string(r.variant), one, kernels.RadixAroles{Roles: roles, Items: items,
				Passes: int64(r.passes), Last: last}); err != nil {
				return err
			}
		}
		if err := d.scanHist(op, r.hist); err != nil {
			return err
		}
		if err := d.launch(op, string(r.variant), r.plan, kernels.RadixScatter{K0: b.k0, P0: b.p0, Ka: b.k[0], Kb: b.k[1],
			Pa: b.p[0], Pb: b.p[1], Hist: r.hist.raw(), Roles: roles, N: r.n, Chunk: r.chunk, Pass: int64(pass),
			Passes: int64(r.passes), Skip: b2i(skip), Carry: b.carry, First: first, Hpack: pack, Kx: b.kx, Kind: kind,
			Descending: desc}); err != nil {
			return err
		}
	}
	return nil
}

// radixSkipMin is the least sort whose chunked passes skip (knob
// RADIX_SKIP): below it the roles' launch costs more than the passes it
// might save (on llvmpipe, 0.05-0.1 ms a sort, where a pass of 100000
// keys takes about 0.5 and one of 1000 is its launches; a skipped pass is
// still launched).
const radixSkipMin = 1 << 16

// radixChunkSkips says whether a sort of n keys in passes passes on
// chunked plan p skips passes (radix_aroles' roles): where the plan does
// (knob RADIX_SKIP), there are three passes or more (the first always
// runs, and on llvmpipe the last) and radixSkipMin keys.
func radixChunkSkips(p host.Plan, n int64, passes int) bool {
	return host.KnobRadixSkip.Of(p) != 0 && host.KnobRadixKpt.Of(p) == 0 && passes >= 3 && n >= radixSkipMin
}

// radixCarryCode is radixCarry's answer as a kernels.Carry* code.
func radixCarryCode(packed, e32 bool) int64 {
	switch {
	case packed:
		return kernels.CarryPacked
	case e32:
		return kernels.CarryE32
	}
	return kernels.CarryNone
}

// radixCarryPack is the packing of pass of passes that carry as carry
// says (kernels.Carry*; radixPack, and packed words in every pass of
// kernels.CarryWords).
func radixCarryPack(carry int64, pass, passes int) int64 {
	if carry == kernels.CarryWords {
		return kernels.RadixPacked
	}
	return radixPack(carry == kernels.CarryPacked, carry == kernels.CarryE32, pass, passes)
}

// radixSweepBufs are a sweep sort's buffers and words (radix_body.h's
// radix_sweep): the first pass's keys and entries (k0: of kind KIND_* kind
// and descending, unused where carry is CarryWords; p0 nil where first is
// 1, the positions), and two of each the passes alternate through, index 0
// the last pass's output, whose keys are XOR kx.
type radixSweepBufs struct {
	k0, p0                             host.Buffer
	k, p                               [2]host.Buffer
	first, carry, kind, descending, kx int64
}

// radixKeyMask is the mask whose XOR maps keys of kind (kernels.Kind*)
// and descending on words of wordBytes to their order bits and back
// (radix_order: a sign flip, a complement, or both), and whether there
// is one (not for floats, whose order bits fold -0.0 and the NaNs).
func radixKeyMask(wordBytes int, kind int64, descending bool) (uint64, bool) {
	var m uint64
	switch kind {
	case kernels.KindFloat:
		return 0, false
	case kernels.KindSigned:
		m = 1 << (8*wordBytes - 1)
	}
	if descending {
		m ^= ^uint64(0) >> (64 - 8*wordBytes)
	}
	return m, true
}

// sweepPasses queues every sweep pass and its fixup (radix_sweep), which
// write the tiles the pass left to it (none, where every group ran
// alongside the ones before it) on a grid of its own (fixupPlan). A pass
// radix_roles skipped does nothing.
func (r radixRun) sweepPasses(d *Device, op string, b radixSweepBufs) error {
	for pass := 0; pass < r.passes; pass++ {
		for fix := int64(0); fix < 2; fix++ {
			call := kernels.RadixSweep{K0: b.k0, P0: b.p0, Ka: b.k[0], Kb: b.k[1], Pa: b.p[0], Pb: b.p[1],
				Hist: r.hist.raw(), Status: r.status.raw(), N: r.n, Passes: int64(r.passes), Pass: int64(pass), Fix: fix, Kx: b.kx,
				First: b.first, Carry: b.carry, Kind: b.kind, Descending: b.descending}
			p := r.plan
			if fix == 1 {
				p = fixupPlan(d.caps, r.plan)
			}
			if err := d.launch(op, string(r.variant), p, call); err != nil {
				return err
			}
		}
	}
	return nil
}

// radixPassArgs are one digit pass's buffers and words.
type radixPassArgs struct {
	kin, pin, kout, pout host.Buffer // keys and entries in, out (pin nil: the positions)
	n, shift             int64
	first, pack          int64
}

// radixCarry is how a sort of keys of wordBytes, on keyBits bits, with
// entries below entryLimit carries the entries between its passes (from
// the first pass's output to the last one's input): packed with the keys,
// one word each, where both fit 32 bits; else as 32-bit words beside the
// keys where the entries fit (e32); else as int64 words. A sort of one
// pass carries nothing between passes. radixSort and its model
// (radixTraffic) both take it from here.
func radixCarry(wordBytes, keyBits int, entryLimit int64, passes int) (packed, e32 bool) {
	if passes < 2 || entryLimit > 1<<32 {
		return false, false
	}
	packed = wordBytes == 4 || keyBits <= 32
	return packed, !packed
}

// radixPack is how pass of passes carries keys and entries between the
// passes (kernels.Radix*), from the first pass's output to the last one's
// input: packed in one word where both fit 32 bits (packed), else with
// 32-bit entries beside the keys where the entries fit (e32).
func radixPack(packed, e32 bool, pass, passes int) int64 {
	switch {
	case packed && pass == 0:
		return kernels.RadixPackOut
	case packed && pass == passes-1:
		return kernels.RadixUnpack
	case packed:
		return kernels.RadixPacked
	case e32 && pass == 0:
		return kernels.RadixE32Out
	case e32 && pass == passes-1:
		return kernels.RadixE32In
	case e32:
		return kernels.RadixE32
	}
	return kernels.RadixUnpacked
}

// radixReadPack is how a pass of packing pack reads its keys, all that
// the count passes look at (radix_key): packed words (RadixPacked) or the
// keys' own buffer (RadixUnpacked). The count passes get it instead of
// pack, so that where the driver compiles a kernel per value of the
// argument (Caps.FoldArgs, llvmpipe) the passes that read alike share
// one: a packed sort's first pass reads keys as an unpacked one does, its
// last reads words as the middle ones do (two count kernels, not three).
func radixReadPack(pack int64) int64 {
	if pack == kernels.RadixPacked || pack == kernels.RadixUnpack {
		return kernels.RadixPacked
	}
	return kernels.RadixUnpacked
}

// radixPass queues one digit pass of a radix sort on the tiled plan
// without the sweep: the digit counts per tile, their exclusive scan in
// place, and each tile's ranking and store by digit runs.
func (d *Device) radixPass(op string, variant kernels.RadixVariant, plan host.Plan, hist *DeviceTensor, a radixPassArgs) error {
	count := kernels.RadixTcount{Kin: a.kin, Pin: a.pin, Hist: hist.raw(), N: a.n, Shift: a.shift, Pack: radixReadPack(a.pack)}
	if err := d.launch(op, string(variant), plan, count); err != nil {
		return err
	}
	if err := d.scanHist(op, hist); err != nil {
		return err
	}
	return d.launch(op, string(variant), plan, kernels.RadixTscatter{Kin: a.kin, Kout: a.kout, Pin: a.pin, Pout: a.pout,
		Hist: hist.raw(), N: a.n, Shift: a.shift, First: a.first, Pack: a.pack})
}

// radixSweepHist prepares a sort's sweep passes (knob RADIX_SWEEP,
// radix_body.h): zeroes the status words and the histogram, counts every
// pass's digits of the first pass's input kin (keys, or packed words where
// pack is RadixPacked) in one read (or a read per
// group of passes whose counts fit the work-group scratch), on a grid of a
// few groups per compute unit (each group's counts go out with a global
// atomic per digit, so fewer groups contend less), and scans the counts
// exclusive, flat: pass q's digit d starts at hist[q*DIGITS + d] - q*n.
func (d *Device) radixSweepHist(op string, variant kernels.RadixVariant, plan host.Plan, kin host.Buffer,
	hist, status *DeviceTensor, n int64, wordBytes, passes int, pack, kind, descending int64) error {
	for _, t := range []*DeviceTensor{hist, status} {
		if err := d.fill(t.raw(), 0, 8*t.n, []byte{0, 0, 0, 0}); err != nil {
			return fmt.Errorf("accel: %s: zero the radix sort's counts: %w", op, err)
		}
	}
	digits := int64(1) << host.KnobRadixBits.Of(plan)
	per := radixTiledScratchBytes(plan, wordBytes) / 4 / digits // passes whose counts fit the scratch
	// the scratch holds two words per digit whatever the tile (radix_tile.h)
	if per < 1 {
		return fmt.Errorf("accel: %s: radix plan %v: the scratch holds no pass's digit counts: %w", op, plan, ErrUnsupported)
	}
	hp := radixHistPlan(d.caps, plan)
	for from := int64(0); from < int64(passes); from += per {
		call := kernels.RadixThist{Kin: kin, Hist: hist.raw(), N: n, From: from, Passes: min(per, int64(passes)-from), Pack: pack,
			Kind: kind, Descending: descending}
		if err := d.launch(op, string(variant), hp, call); err != nil {
			return err
		}
	}
	if err := d.scanHist(op, hist); err != nil {
		return err
	}
	if host.KnobRadixSkip.Of(plan) == 0 {
		return nil // every pass runs (radix_sweep reads no role)
	}
	one := plan
	one.Groups = host.FoldGroups(1, d.caps.MaxWorkGroupCount)
	return d.launch(op, string(variant), one, kernels.RadixRoles{Hist: hist.raw(), Status: status.raw(), N: n, Passes: int64(passes)})
}

// scanHist queues the exclusive scan of a radix sort's digit counts, in
// place (the offsets its scatter passes start from).
func (d *Device) scanHist(op string, hist *DeviceTensor) error {
	s, err := d.scanBuf(op, Uint64, hist.raw(), hist.raw(), hist.n, kernels.FlagNone, true)
	if err != nil {
		return err
	}
	s.release()
	return nil
}

// radixHistPlan is the grid of the sweep's histogram pass (radix_thist)
// on the tiled plan p: at most four groups per compute unit, each taking
// tiles in a grid stride.
func radixHistPlan(caps host.Caps, p host.Plan) host.Plan {
	cu := max(int64(caps.ComputeUnits), 1)
	p.Groups = host.FoldGroups(max(min(p.Tiles, 4*cu), 1), caps.MaxWorkGroupCount)
	return p
}

// radixPlan is the radix sort's plan for n keys of keyBytes carrying
// entries below entryLimit (radixTuned), reported as op's.
func (d *Device) radixPlan(op string, n int64, keyBytes int, entryLimit int64) host.Plan {
	p := d.radixTuned(n, keyBytes, entryLimit)
	d.report(op, "radix", p)
	return p
}

// radixTuned is the radix sort's plan for n keys of keyBytes carrying
// entries below entryLimit (planRadix), after $ACCEL_KNOBS (Device.plan),
// kept to what the sort needs: a LOCAL override brings the ranking's
// subgroups along (RADIX_SGS: the scratch lays counters for the group's
// subgroups; a larger group with the plan's count would rank in the
// raking rounds without a word), unless RADIX_SGS is set too; entries
// of 2^32 or more keep two scratch words whatever RADIX_EW says; and a
// tiled plan's tiles and groups follow a LOCAL or RADIX_KPT.
func (d *Device) radixTuned(n int64, keyBytes int, entryLimit int64) host.Plan {
	p := d.plan(d.planner.radix(d.caps, n, keyBytes, entryLimit))
	if host.KnobRadixSgs.Of(p) > 0 && d.overridden("radix", "LOCAL") && !d.overridden("radix", host.KnobRadixSgs.Name()) {
		p = withKnob(p, host.KnobRadixSgs.Set(radixSubgroups(d.caps, host.KnobRadixBits.Of(p), p.LocalSize)))
	}
	if ew, v := radixEntryWords(entryLimit), host.KnobRadixEw.Of(p); v > 0 && v < ew { // unset: the knob's 2
		p = withKnob(p, host.KnobRadixEw.Set(ew))
	}
	if kpt := host.KnobRadixKpt.Of(p); kpt > 0 && (d.overridden("radix", "LOCAL") || d.overridden("radix", host.KnobRadixKpt.Name())) {
		// the kernels' tile is LOCAL x RADIX_KPT: the tiles, and a group
		// each unless GROUPS says otherwise, follow an override of either
		// (else the groups short of the tiles leave theirs to the fixup,
		// one after another: 0.6 s for a 1.3 ms sort on an H200)
		groups := p.Groups
		p = withRadixTiles(d.caps, p, n, kpt)
		if d.overridden("radix", "GROUPS") {
			p.Groups = groups
		}
	}
	return p
}

// radixPrep writes the order bits of n keys of wordBytes each (the radix
// sort's first step; for integer kinds also its inverse) from kin to kout.
func (d *Device) radixPrep(op string, kin, kout host.Buffer, n int64, wordBytes int, kind int64, descending bool) error {
	if n == 0 {
		return nil
	}
	plan := d.radixPlan(op, n, wordBytes, n) // the sort's plan where it carries the positions
	variant := radixVariant(d.caps, plan, wordBytes)
	if host.KnobRadixKpt.Of(plan) > 0 {
		// the tiled plan's prep: one key per lane (chunks of one), so
		// consecutive lanes read and write consecutive keys
		plan.Groups = host.FoldGroups((n+int64(plan.LocalSize)-1)/int64(plan.LocalSize), d.caps.MaxWorkGroupCount)
	}
	items := plan.TotalGroups() * int64(plan.LocalSize)
	return run(d, op, variant, plan, kernels.RadixPrep{Kin: kin, Kout: kout, N: n, Chunk: (n + items - 1) / items,
		Kind: kind, Descending: b2i(descending)})
}

// keyKind maps a key dtype to the radix sort's kind.
func keyKind(dt DType) int64 {
	switch dt {
	case Int32, Int64:
		return kernels.KindSigned
	case Float32, Float64:
		return kernels.KindFloat
	}
	return kernels.KindUnsigned
}

// keyBitsFor is how many low bits hold every value in [0, n).
func keyBitsFor(n int64) int {
	if n <= 1 {
		return 0
	}
	return bits.Len64(uint64(n - 1))
}
