package accel

import (
	"fmt"
	"strings"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// The traffic model: what a plan costs a device, computed from the plan
// itself. Each pass's bytes read and written of device memory (each
// element once per pass that touches it: caches and atomics' extra lines
// aside), its launches and the host's waits. On a GPU, where the passes
// stream through memory, the bytes over the copy bandwidth are the time a
// plan cannot beat; the families' unit tests bound the model of their GPU
// plans against the op's minimum (each input read once, each output
// written once), so a GPU plan's traffic is checked on a machine without
// a GPU, and a GPU run checks the model (bench JSON: model_bytes beside
// min_bytes).

// traffic is a plan's modelled memory traffic and launches.
type traffic struct {
	Passes []trafficPass
	Waits  int // host waits for the device the plan itself needs
}

// trafficPass is one launch (or a driver's fill or copy): its bytes.
type trafficPass struct {
	Name        string
	Read, Write int64
	Kind        passKind
}

// passKind is what runs a pass: a kernel, the driver's fill, or a copy
// (the driver's or the copy kernel, as the device's copy plan says), or
// the driver's copy of a word (a scan's total beside an op's flags).
type passKind int

// The kinds of passes.
const (
	passKernel passKind = iota
	passFill
	passCopy
	passWord
)

// add appends a kernel's pass.
func (t *traffic) add(name string, read, write int64) {
	t.Passes = append(t.Passes, trafficPass{Name: name, Read: read, Write: write})
}

// word appends the driver's copy of a scan's total of size bytes
// (scan.copyTotal).
func (t *traffic) word(size int64) {
	t.Passes = append(t.Passes, trafficPass{Name: "copy (total)", Read: size, Write: size, Kind: passWord})
}

// fill appends a driver's fill of write bytes.
func (t *traffic) fill(name string, write int64) {
	t.Passes = append(t.Passes, trafficPass{Name: name, Write: write, Kind: passFill})
}

// then appends u's passes and waits.
func (t *traffic) then(u traffic) {
	t.Passes = append(t.Passes, u.Passes...)
	t.Waits += u.Waits
}

// Bytes is the traffic of every pass, read and written.
func (t traffic) Bytes() int64 {
	var b int64
	for _, p := range t.Passes {
		b += p.Read + p.Write
	}
	return b
}

// Launches is the number of passes.
func (t traffic) Launches() int { return len(t.Passes) }

// transfers counts the passes the driver runs, not a kernel: the fills
// and copies that kernel (whether a fill or copy of so many bytes runs the
// fill or copy kernel) leaves to it, and its copies of a word.
func (t traffic) transfers(kernel func(kind passKind, bytes int64) bool) int {
	n := 0
	for _, p := range t.Passes {
		switch {
		case p.Kind == passWord, p.Kind == passFill && !kernel(passFill, p.Write), p.Kind == passCopy && !kernel(passCopy, p.Read):
			n++
		}
	}
	return n
}

// String prints the total and each pass.
func (t traffic) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model %d B, %d launches, %d waits:", t.Bytes(), t.Launches(), t.Waits)
	for _, p := range t.Passes {
		fmt.Fprintf(&b, " %s %d/%d", p.Name, p.Read, p.Write)
	}
	return b.String()
}

// scanTraffic models a scan of n elements of inBytes each (the source:
// elements, or the words its flags are computed from) into outBytes each
// on plan p (planScan): the chained scan reads and writes each element
// once (its fixup pass rescans only tiles whose carry timed out);
// reduce-then-scan reads the input twice.
func scanTraffic(p host.Plan, n, inBytes, outBytes int64) traffic {
	var t traffic
	if n == 0 {
		return t
	}
	if chain := host.KnobChain.Of(p); chain != 0 {
		// the tiles' flags zeroed first (scanChain): a ticket and a state
		// per tile (CHAIN 1), or two tagged words per 32 bits of a tile's
		// sum and prefix (CHAIN 2)
		tile := host.KnobItems.Of(p)
		if chain == 2 {
			tile *= int64(p.LocalSize)
		}
		tiles := (n + tile - 1) / tile
		flags := 4 * (tiles + 1)
		if chain == 2 {
			flags = 8 * 2 * tiles * max(outBytes/4, 1)
		}
		t.fill("fill", flags)
		t.add("scan_chain", n*inBytes, n*outBytes)
		t.add("scan_fixup", 0, 0)
		return t
	}
	g := p.TotalGroups()
	t.add("scan_reduce", n*inBytes, (g+1)*outBytes)
	t.add("scan_partials", (g+1)*outBytes, (g+1)*outBytes)
	t.add("scan_apply", n*inBytes+g*outBytes, n*outBytes)
	return t
}

// scanBufTraffic models Device.scanBuf's scan of n elements of inBytes
// each into dt on caps, planned as scanBuf plans it (the subgroup variant
// where the device has it for dt).
func scanBufTraffic(caps host.Caps, dt DType, n, inBytes int64) traffic {
	e := int64(dt.Size())
	return scanTraffic(planScan(caps, n, e, scanSubgroups(caps, dt.Size(), dt == Int64 || dt == Uint64)), n, inBytes, e)
}

// radixTraffic models a stable radix sort of n keys of wordBytes (sorted
// on keyBits bits) on plan p (planRadix), carrying int64 entries below
// entryLimit: per digit pass a count and a scatter, which move keys and
// entries as radixCarry says radixSort does between the passes (packed in
// one word, or 32-bit entries, or unpacked); a scan of the histogram per
// pass; with prep on the tiled plan without the sweep, the order bits
// written first; on the chunked plan's skipping sorts (radixSkipMin), the
// first count's OR and AND and the roles. With the sweep (knob RADIX_SWEEP) a pass is
// one read and one write, after one count of every pass's digits.
func radixTraffic(caps host.Caps, p host.Plan, n int64, wordBytes int, keyBits int, prep, initPerm bool, entryLimit int64) traffic {
	return radixModel(caps, p, n, wordBytes, keyBits, prep, initPerm, entryLimit, false)
}

// radixWordsTraffic models radixSortWords: n packed 64-bit words sorted on
// keyBits bits of their high halves, every pass reading and writing words.
func radixWordsTraffic(caps host.Caps, p host.Plan, n int64, keyBits int) traffic {
	return radixModel(caps, p, n, 8, keyBits, false, false, n, true)
}

func radixModel(caps host.Caps, p host.Plan, n int64, wordBytes int, keyBits int, prep, initPerm bool, entryLimit int64, words bool) traffic {
	var t traffic
	if n == 0 {
		return t
	}
	bits := int(host.KnobRadixBits.Of(p))
	passes := max((keyBits+bits-1)/bits, 1)
	packed, e32 := radixCarry(wordBytes, keyBits, entryLimit, passes)
	wb := int64(wordBytes)
	sweep := host.KnobRadixSweep.Of(p) > 0 && host.KnobRadixKpt.Of(p) > 0
	tiled := host.KnobRadixKpt.Of(p) > 0
	if prep && tiled && !sweep {
		// (the sweep's first pass and its counts, and the chunked plans'
		// first pass, make the order bits as they read the keys)
		t.add("radix_prep", n*wb, n*wb)
	}
	items := p.TotalGroups() * int64(p.LocalSize)
	if kpt := host.KnobRadixKpt.Of(p); kpt > 0 {
		tile := int64(p.LocalSize) * kpt
		items = (n + tile - 1) / tile
	}
	hist := int64(1<<bits) * items * 8
	if sweep {
		// Onesweep: the status words (a count and an inclusive count per
		// digit and tile, a done mark per tile) and the counts of every
		// pass zeroed, the first pass's keys read once for the counts of
		// as many passes as the work-group scratch holds (radixSweepHist),
		// and those scanned
		digits := int64(1) << bits
		status := ((digits+1)*items + int64(passes)) * 8
		t.fill("fill", digits*int64(passes)*8)
		t.fill("fill", status)
		per := max(radixTiledScratchBytes(p, wordBytes)/4/digits, 1)
		for from := int64(0); from < int64(passes); from += per {
			t.add("radix_thist", n*wb, digits*min(per, int64(passes)-from)*8)
		}
		t.then(scanBufTraffic(caps, Uint64, digits*int64(passes), 8))
		// each pass's role (radix_roles); the model runs every pass, as
		// keys whose digits all differ make it
		if host.KnobRadixSkip.Of(p) != 0 {
			t.add("radix_roles", digits*int64(passes)*8, int64(passes)*8)
		}
		hist = status
	}
	for pass := 0; pass < passes; pass++ {
		first, last := pass == 0, pass == passes-1
		var in, out int64 // bytes per key read and written by the scatter
		switch {
		case words:
			in, out = 8, 8
		case e32:
			in, out = wb+4, wb+4
			if first {
				in = wb + 8 // the positions, or int64 entries
				if !initPerm {
					in = wb
				}
			}
			if last {
				out = wb + 8
			}
		case !packed:
			in, out = wb+8, wb+8
			if first && !initPerm {
				in = wb // the positions are the entries
			}
		case first:
			in, out = wb, 8
			if initPerm {
				in += 8
			}
		case last:
			in, out = 8, wb+8
		default:
			in, out = 8, 8
		}
		if sweep {
			// a tile publishes its counts and inclusive counts (two words
			// a digit), reads its predecessor's (one, where the look-back
			// finds an inclusive count there) and its digits' starts; the
			// fixup reads the done marks
			words := hist / 8
			t.add("radix_sweep", n*in+16*words, n*out+16*words)
			t.add("radix_sweep(fix)", items*8, 0)
			continue
		}
		count := wb // the count reads the keys, or the packed words
		if words || packed && !first {
			count = 8
		}
		if first && radixChunkSkips(p, n, passes) {
			// the chunks' OR and AND of their keys, and each pass's role
			// from them (radixRun.chunkPasses); the model runs every
			// pass, as keys whose digits all differ make it
			t.add("radix_count", n*count, hist+16*items)
			t.add("radix_aroles", 16*items, 8*int64(passes))
		} else {
			t.add("radix_count", n*count, hist)
		}
		t.then(scanBufTraffic(caps, Uint64, hist/8, 8))
		t.add("radix_scatter", n*in+hist, n*out)
	}
	return t
}

// uniqueTraffic models Unique of n keys of w bytes with u distinct, on
// the radix plan rp and the scan plan sp: the sort carrying the positions
// (the order bits first, for signed keys), the scan of the runs' heads
// (the sorted keys read, a 64-bit run id written), the distinct order bits
// compacted, each element's run id scattered to its position (the
// inverse), the runs' ends and lengths, the distinct values mapped back
// from their order bits, and the wait for u.
func uniqueTraffic(caps host.Caps, rp, sp host.Plan, n, u int64, w int, kind int64) traffic {
	wb := int64(w)
	prep := kind != kernels.KindUnsigned
	t := radixTraffic(caps, rp, n, w, 8*w, prep, false, n)
	t.then(scanTraffic(sp, n, wb, 8))
	t.add("move_compact", n*(wb+8), u*wb)
	t.add("move_scatter", 16*n, 8*n)
	t.add("move_ends", 8*n, 8*u)
	t.add("move_counts", 8*u, 8*u)
	if prep {
		t.add("radix_prep", u*wb, u*wb)
	}
	t.Waits = 1
	return t
}

// partTryTraffic models the part of the GPUs' partition of the
// bit-reproducible scatter (scatterPlan.Part) that runs before it knows
// whether every target has at most kernels.ScPartMax hits: the counts
// cleared, each position's index read and its target's count incremented
// (the atomic's word, as the atomic pass counts it), the counts scanned
// into first slots, and the wait for the flag.
func partTryTraffic(caps host.Caps, s scatterShape) traffic {
	n, tg := s.n, s.targets
	t := traffic{Waits: 1}
	t.fill("fill", 4*tg)
	t.add("scatter_pcount", 8*n, 4*n)
	t.then(scanBufTraffic(caps, Uint32, tg, 4)) // the counts' scan
	return t
}

// slotTraffic models the slotted partition (scatterPlan.Slot) where every
// bucket's words fit its slots: the buckets' counts cleared, each
// position placed (its index and value read, its bucket's count claimed,
// its word written), each bucket's count and words read, and each
// target's output read (with the input) and written.
func slotTraffic(sp scatterPlan, s scatterShape) traffic {
	n, tg, e := s.n, s.targets, int64(s.elemBytes)
	b := sp.slotBuckets(tg)
	self := int64(0)
	if s.includeSelf {
		self = e * tg
	}
	var t traffic
	t.fill("fill", 4*max(b, 1))
	t.add("scatter_pslot", 8*n+e*n, 8*n+4*n)
	t.add("scatter_sfold", 4*b+8*n+self, e*tg)
	return t
}

// slotTryTraffic models a slotted partition whose buckets overflowed (a
// bucket past its slots): slotTraffic's clearing and placing, the fold's
// launch that finds the flag and does nothing, and the wait for the flag.
func slotTryTraffic(sp scatterPlan, s scatterShape) traffic {
	t := slotTraffic(sp, s)
	t.Passes[len(t.Passes)-1] = trafficPass{Name: "scatter_sfold"}
	t.Waits = 1
	return t
}

// hashTryTraffic models the part of Unique's hash plan (planUnique) run
// before it knows whether the keys fit its table for capacity keys: the
// table cleared, each of the n keys read and counted in its slot and its
// slot written, and the wait for the table's key count and full flag. A
// pass touches each table word once (the model's rule, caches aside): a
// table made for n/8 keys, as large as a GPU's L2 cache for the bench's
// 16M keys, takes the keys' probes and atomics while they stream past. An
// overflowed table goes no further (Unique sorts every key).
func hashTryTraffic(n, capacity int64) traffic {
	slots := hashSlots(capacity) + 1
	t := traffic{Waits: 1}
	t.fill("hash_reset", 16*slots)
	t.fill("hash_reset (meta)", 16)
	t.fill("fill", 8) // the probes' progress words
	t.add("hash_count", 8*n+16*slots, 8*n+16*slots)
	return t
}

// hashUniqueTraffic models Unique's hash plan where the n keys, u of them
// distinct, fit its table: hashTryTraffic, the u held slots' keys and
// slots gathered, the sort of the u keys on plan rp (order bits first,
// for signed keys), their values, counts and ranks (rank), and each key's
// rank read from its slot into the inverse (ids).
func hashUniqueTraffic(caps host.Caps, rp host.Plan, n, u, capacity int64, kind int64) traffic {
	slots := hashSlots(capacity) + 1
	t := hashTryTraffic(n, capacity)
	t.add("hash_gather", 16*slots, 16*u)
	t.then(radixTraffic(caps, rp, u, 8, 64, kind != kernels.KindUnsigned, false, u))
	t.add("hash_rank", 8*u+8*u+16*u, 16*u+8*u)
	t.add("hash_ids", 8*n+8*slots, 8*n)
	return t
}

// compactTraffic models Compact of n elements of elemBytes, k kept, by
// tiles: the tiles' counts' last word zeroed, each tile's mask bytes read
// and counted, the tiles' counts scanned on sp, the wait for k, each
// tile's mask read again and its kept elements read and written with
// their int64 positions.
func compactTraffic(sp host.Plan, n, k, elemBytes, tiles int64) traffic {
	t := traffic{Waits: 1}
	t.fill("fill", 8)
	if n > 0 {
		t.add("move_tcount", n, 8*tiles)
	}
	t.then(scanTraffic(sp, tiles+1, 8, 8))
	if k > 0 {
		t.add("move_tcompact", n+8*tiles+elemBytes*k, (elemBytes+8)*k)
	}
	return t
}

// compactMinBytes is Compact's least: the mask read, the kept elements
// read and written with their positions.
func compactMinBytes(n, k, elemBytes int64) int64 { return n + elemBytes*k + (elemBytes+8)*k }

// uniqueMinBytes is Unique's least traffic: the keys read, the inverse
// written, the distinct values and their counts written.
func uniqueMinBytes(n, u int64, w int) int64 { return n*(int64(w)+8) + u*(int64(w)+8) }

// sparseShape is what the model of a sparse union needs: each operand's
// entries and the union's, the operands' arrays (COO: ndim coordinates
// per entry; CSR: rows row pointers per operand, batches included) and
// their widths, and whether gradients are written.
type sparseShape struct {
	nx, ny, u int64
	csr       bool
	rows      int64 // CSR: batches x rows
	ndim      int64 // COO: coordinates per entry
	idxBytes  int64 // the operands' index words (and CSR row pointers)
	valBytes  int64
	chunk     int64 // merged positions per work-item
	grad      bool
}

// sparseMergeTraffic models the GPUs' union of two coalesced sparse
// operands (sparseByMergePath): each operand's 64-bit keys (CSR: its row
// pointers made global, then each entry's row found by a merge of the
// rows and the entries), the count of the union's entries per chunk of
// merged positions and its scan on caps (one wait for the total), the emit of the
// union's keys, coordinates and values (and gradients), and for CSR the
// row pointers from the union's keys.
func sparseMergeTraffic(caps host.Caps, s sparseShape) traffic {
	t := traffic{Waits: 1}
	ptrs := 8 * (s.rows + 1)
	for _, n := range []int64{s.nx, s.ny} {
		if s.csr {
			t.add("sparse_csr_ptrs", s.idxBytes*(s.rows+1), ptrs)
			if n > 0 {
				t.add("sparse_rowmerge", ptrs+s.idxBytes*n, 8*n)
			}
		} else if n > 0 {
			t.add("sparse_coo_keys", s.ndim*s.idxBytes*n, 8*n)
		}
	}
	n := s.nx + s.ny
	if n == 0 {
		return t
	}
	chunks := (n + max(s.chunk, 1) - 1) / max(s.chunk, 1)
	t.add("sparse_count", 8*n, 8*chunks)
	t.then(scanBufTraffic(caps, Int64, chunks, 8))
	t.word(8) // its total beside the flag words
	coords := s.ndim
	if s.csr {
		coords = 1
	}
	read, write := (8+s.valBytes)*n, (8+8*coords+s.valBytes)*s.u
	if s.grad {
		read, write = read+s.valBytes*s.u, write+2*s.valBytes*s.u
	}
	t.add("sparse_emit", read, write)
	if s.csr && s.rows > 0 {
		t.add("sparse_rowmerge (union)", 8*s.u+ptrs, ptrs)
		t.add("sparse_crows", ptrs, ptrs)
	}
	return t
}

// sparseMinBytes is a sparse union's least traffic: each operand's arrays
// read once, the result's written once (int64 coordinates), gradients
// read and written once.
func sparseMinBytes(s sparseShape) int64 {
	n := s.nx + s.ny
	in := s.valBytes * n
	out := s.valBytes * s.u
	if s.csr {
		in += 2*s.idxBytes*(s.rows+1) + s.idxBytes*n
		out += 8*(s.rows+1) + 8*s.u
	} else {
		in += s.ndim * s.idxBytes * n
		out += 8 * s.ndim * s.u
	}
	if s.grad {
		in, out = in+s.valBytes*s.u, out+2*s.valBytes*s.u
	}
	return in + out
}

// diagTraffic models diagonal_scatter over count diagonal elements of
// elemBytes: the input's copy of copied bytes into the output (none in
// place), then the diagonal's pass, each element of src read and written
// onto the diagonal.
func diagTraffic(count, elemBytes, copied int64) traffic {
	t := copyTraffic(copied)
	if count > 0 {
		t.add("diag_scatter", count*elemBytes, count*elemBytes)
	}
	return t
}

// diagMinBytes is diagonal_scatter's least: the input read and the output
// written once (the copy's bytes; in place, the diagonal written), and
// src read.
func diagMinBytes(count, elemBytes, copied int64) int64 {
	if copied == 0 {
		return 2 * count * elemBytes
	}
	return 2*copied + count*elemBytes
}

// diagBackwardTraffic models diagonal_scatter's backward over count
// diagonal elements of elemBytes in a gradient of size bytes: the
// diagonal gathered into gradSrc, the gradient copied into gradInput and
// its diagonal zeroed there.
func diagBackwardTraffic(count, elemBytes, size int64) traffic {
	var t traffic
	if count > 0 {
		t.add("diag_gather", count*elemBytes, count*elemBytes)
	}
	t.then(copyTraffic(size))
	if count > 0 {
		t.add("diag_zero", 0, count*elemBytes)
	}
	return t
}

// diagBackwardMinBytes is the backward's least: the gradient read, and
// gradInput and gradSrc written once.
func diagBackwardMinBytes(count, elemBytes, size int64) int64 { return 2*size + count*elemBytes }

// triTraffic models tril/triu_indices' one pass, writing count index
// pairs of elemBytes each: the least.
func triTraffic(count, elemBytes int64) traffic {
	var t traffic
	t.add("tri_indices", 0, 2*count*elemBytes)
	return t
}

// indiceTraffic models get_indice_pairs on the GPUs' candidates by plan p
// over g's l sites of d spatial dims and k kernel offsets, radix and scan
// giving the plans its sorts and scans make (as the run makes them):
//
//   - every path: the sites' keys from their rows (int32, d+1 each),
//     sorted over inBits bits and checked for duplicates, or placed in
//     their hash table (p.Table, filled first);
//   - pathSubmLookup: each (site, offset) looks its target up among the
//     sites (lookupTraffic), the wait for the validation flag, the
//     sites copied out as the output indices;
//   - pathConvCandidates and pathInverse through a dense grid of p.Grid
//     keys (the target space, a bit a key, no more words than the
//     candidates): each candidate's target key written and marked in the
//     grid, the words' set bits scanned, one wait for the total with the
//     validation flag, the
//     grid's outputs written, then the pairs by tiles from the grid's
//     output rows (or an inverse's lookups and the sites copied out);
//   - pathConvCandidates and pathInverse: a flag per candidate from its
//     row, scanned into positions, the wait for the flag and the v
//     candidates that hit a target; their keys emitted, sorted over
//     outBits bits and numbered by run (a scan of the run heads, each
//     candidate's output row scattered through the permutation), the wait
//     for the m outputs, whose rows are written at the runs' starts; then
//     the pairs from the positions and output rows (a regular or
//     transposed conv), or (an inverse conv) the m outputs looked up among
//     the sorted sites and the sites copied out.
func indiceTraffic(caps host.Caps, radix func(n int64) host.Plan, scan func(n int64, dt DType) host.Plan, g convGeom,
	split IndiceSplit, p indicePlan, v, m int64) traffic {
	row := 4 * (int64(g.d) + 1)
	l, k := g.l, g.k
	path, grid, table := p.Path, p.Grid, p.Table
	var t traffic
	t.add("indice_keys", row*l, 8*l)
	if table.Slots > 0 {
		// the table filled, each site's key read and its word placed
		t.fill("fill", 8*table.Slots)
		t.add("indice_table", 8*l, 8*l)
	} else {
		t.then(radixTraffic(caps, radix(l), l, 8, g.inBits, false, false, l))
		t.add("indice_dups", 8*l, 0)
	}
	if path == pathSubmLookup {
		t.then(lookupTraffic(caps, scan, g, l, kernels.IpRuleSubm, split, table))
		t.Waits++ // the validation flag
		t.then(copyTraffic(row * l))
		return t
	}
	if grid > 0 {
		// the dense grid's bits zeroed; each candidate's target key
		// written and the m targets marked (expand: a word each, at most
		// the grid's); the words' set bits scanned into their rows, the
		// total copied beside the validation flag and read; the grid's
		// outputs; then the pairs by tiles, each candidate with a target
		// reading its output row (the marked words' bits and rows, once),
		// or an inverse's lookups
		w := gridWords(grid)
		marked := 4 * min(m, w)
		t.fill("fill", 4*(w+1))
		keys := int64(0) // an inverse's forward writes no keys
		if path == pathConvCandidates {
			keys = 4 * l * k
		}
		t.add("indice_expand", row*l, keys+marked)
		for i := int64(1); i < expandLaunches(caps, g, l, 0, split); i++ {
			t.add("indice_expand", 0, 0) // the rows of one launch, counted above
		}
		t.then(scanTraffic(scan(w+1, Uint32), w+1, 4, 4))
		t.word(4)
		t.Waits++
		if m > 0 {
			t.add("indice_gouts", 8*(w+1), row*m)
		}
		if path == pathConvCandidates {
			t.then(tilePairsTraffic(caps, scan, g, l, 0, 2*marked))
			return t
		}
		t.then(lookupTraffic(caps, scan, g, m, kernels.IpRuleInv, split, table))
		t.then(copyTraffic(row * l))
		return t
	}
	dt, _, _ := expandLayout(caps, g, l, kernels.IpRuleConv, false, sitesTable{}, split)
	pw, count := int64(dt.Size()), l*k
	t.fill("fill", pw)
	expand := func(read, write int64) {
		t.add("indice_expand", read, write)
		for i := int64(1); i < expandLaunches(caps, g, l, 0, split); i++ {
			t.add("indice_expand", 0, 0) // the rows of one launch, counted above
		}
	}
	expand(row*l, pw*count)
	t.then(scanTraffic(scan(count+1, dt), count+1, pw, pw))
	t.Waits++ // the validation flag and v
	if v > 0 {
		expand(row*l+pw*count, 8*v)
		t.then(radixTraffic(caps, radix(v), v, 8, g.outBits, false, false, v))
		t.then(scanTraffic(scan(v, Int64), v, 8, 8))
		t.add("move_scatter", 16*v, 8*v)
		t.Waits++ // m
		t.add("indice_outs", 16*v, row*m)
	}
	if path == pathInverse {
		t.then(lookupTraffic(caps, scan, g, m, kernels.IpRuleInv, split, table))
		t.then(copyTraffic(row * l))
		return t
	}
	t.add("indice_write", pw*count+8*v, 8*count+4*k)
	return t
}

// lookupTraffic models a looked-up rule over n query rows (each (row,
// offset) searching its target among the sorted site keys, or probing the
// sites' hash table, found in the caches and counted once): each row read
// and each candidate's found row written (with sorted, a submanifold
// conv's cursors in key order, by sorted position, and each row's rank);
// then the pairs by tiles (tilePairsTraffic). Without rows, the counts
// zeroed.
func lookupTraffic(caps host.Caps, scan func(n int64, dt DType) host.Plan, g convGeom, n, rule int64, split IndiceSplit,
	table sitesTable) traffic {
	var t traffic
	if n == 0 {
		t.fill("fill", 4*g.k)
		return t
	}
	row := 4 * (int64(g.d) + 1)
	_, _, sorted := expandLayout(caps, g, n, rule, true, table, split)
	ranks := int64(0)
	if sorted {
		ranks = 4 * n
	}
	sites := 16 * g.l // the sorted keys and their rows
	if table.Slots > 0 {
		sites = 8 * table.Slots
	}
	t.add("indice_expand", row*n+sites, 4*n*g.k+ranks)
	for i := int64(1); i < expandLaunches(caps, g, n, lookupSteps(g, table), split); i++ {
		t.add("indice_expand", 0, 0) // the rows of one launch, counted above
	}
	t.then(tilePairsTraffic(caps, scan, g, n, ranks, 0))
	return t
}

// tilePairsTraffic models ipRun.tilePairs over n query rows: each
// candidate's found row or key read per tile of an offset's rows (and the
// rows' ranks) and counted, the tiles' counts scanned, the candidates
// read again with extra bytes more (a dense grid's output rows) and the
// pairs ([k, 2, n] int32) and counts written.
func tilePairsTraffic(caps host.Caps, scan func(n int64, dt DType) host.Plan, g convGeom, n, ranks, extra int64) traffic {
	var t traffic
	te := host.PlanElementwise("indice", caps, n*g.k).TileElems // the tiles of an offset's rows (ipRun.tilePlan)
	tiles := g.k * ((n + te - 1) / te)
	count := n * g.k
	t.fill("fill", 8)
	t.add("indice_tcount", 4*count+ranks, 8*tiles)
	t.then(scanTraffic(scan(tiles+1, Uint64), tiles+1, 8, 8))
	t.add("indice_wpairs", 4*count+ranks+8*tiles+extra, 8*count+4*g.k)
	return t
}

// expandLaunches is how many launches the expansion of n rows takes, a
// lookup search loop iterations (expandLaunch: the plan's rows per launch,
// under a driver's loop limit).
func expandLaunches(caps host.Caps, g convGeom, n, search int64, split IndiceSplit) int64 {
	p := planIndicePairs(caps, n, g.k, search, split)
	return (n + max(p.Rows, 1) - 1) / max(p.Rows, 1)
}

// indiceMinBytes is get_indice_pairs' least on path over g, with m
// outputs: the sites' rows read, the pairs ([k, 2, N] int32, N the sites,
// or an inverse's m outputs of its forward) and counts written, the
// output indices written (the sites copied, submanifold and inverse; else
// the m outputs).
func indiceMinBytes(path indicePath, g convGeom, m int64) int64 {
	row := 4 * (int64(g.d) + 1)
	switch path {
	case pathSubmLookup, pathSubmRows:
		return 2*row*g.l + 8*g.l*g.k + 4*g.k
	case pathInverse:
		return 2*row*g.l + 8*m*g.k + 4*g.k
	}
	return row*g.l + 8*g.l*g.k + 4*g.k + row*m
}

// hashTableTraffic models a HashTable insert (ins; with ids, InsertDense)
// or lookup of n keys into a table of slots slots (16 bytes each), each
// pass touching each table word once (the model's rule, caches aside):
// the probes (each key read, its slot or id written), and for an insert
// the first occurrences marked, scanned on sp, their ids committed to the
// table, and with ids every key's id read from its slot, then one wait for
// the table's size (a lookup waits for nothing); bounded: the probes run
// under a driver's loop limit (planHash's budget).
func hashTableTraffic(sp host.Plan, n, slots int64, ins, ids, bounded bool) traffic {
	t := traffic{}
	if ins {
		t.Waits = 1
	}
	tb := 16 * (slots + 1)
	if n == 0 {
		return t
	}
	if bounded {
		// under a driver's loop limit each probe launch waits for its
		// progress words: one, where every key finds its slot in the
		// first launch
		t.Waits++
	}
	t.fill("fill", 8) // the probes' progress words
	if !ins {
		t.add("hash_lookup", 8*n+tb, 8*n)
		return t
	}
	t.add("hash_insert", 8*n+tb, 8*n+tb)
	t.add("hash_mark", 8*n+tb/2, 8*n)
	t.then(scanTraffic(sp, n, 8, 8))
	t.add("hash_commit", 16*n+tb/2, tb/2)
	if ids {
		t.add("hash_ids", 8*n+tb/2, 8*n)
	}
	return t
}

// hashTableMinBytes is an insert's or lookup's least: the keys read, the
// table read or written once, the ids written where the call returns
// them.
func hashTableMinBytes(n, slots int64, ids bool) int64 {
	m := 8*n + 16*(slots+1)
	if ids {
		m += 8 * n
	}
	return m
}

// copyTraffic models a copy of size bytes: the driver's or the copy
// kernel's, each a read and a write of every byte.
func copyTraffic(size int64) traffic {
	var t traffic
	if size > 0 {
		t.Passes = append(t.Passes, trafficPass{Name: "copy", Read: size, Write: size, Kind: passCopy})
	}
	return t
}

// scatterTraffic models a scatter of s on plan sp, after the copy of the
// input into the output: index words of 8 bytes, elements of
// s.elemBytes. The atomic pass counts a read and a write of a target per
// position (the atomic's line), the CPU passes their private copies.
func scatterTraffic(caps host.Caps, sp scatterPlan, s scatterShape) traffic {
	t := traffic{Waits: 1} // the validation flag's read at the end
	n, tg, e := s.n, s.targets, int64(s.elemBytes)
	t.then(copyTraffic(tg * e))
	counts := int64(0)
	if s.red == Mean {
		counts = 4
	}
	// the hit counts per target of the passes that fold whole targets
	// (zeroed by the driver first), and whether the mean divides after
	// the fold (the merges and the sorted folds divide as they go)
	inOrderCounts := s.red == Mean || (!s.includeSelf && s.red != Assign)
	divide := false
	switch sp.Path {
	case scatterAtomic:
		if s.red == Mean {
			t.fill("fill", 4*tg)
		}
		if !s.includeSelf && s.red != Assign {
			t.add("scatter_init", 8*n, e*n)
		}
		t.add("scatter_reduce", 8*n+(e+counts)*n, (e+counts)*n)
		divide = true
	case scatterSorted:
		kb := keyBitsFor(tg)
		self := int64(0)
		if s.includeSelf {
			self = e * tg
		}
		if sp.Part && sp.Slot {
			// the positions grouped by bucket in one pass, with no count
			// first: each position's index and value read, its bucket's
			// count claimed and its word written; each bucket's count and
			// words read and sorted (through the caches: at most
			// kernels.ScPartMax), each target folded; the flag's read at
			// the end is the op's one wait
			t.then(slotTraffic(sp, s))
			break
		}
		if sp.Part {
			// the positions grouped by target in one pass (after the
			// count and the scan: partTryTraffic), each target's words
			// sorted in place (through the caches: at most
			// kernels.ScPartMax) and folded
			t.then(partTryTraffic(caps, s))
			t.add("scatter_place", 8*n+e*n, 8*n+4*n)
			t.add("scatter_pfold", 8*tg+8*n+self, e*tg)
			break
		}
		if sp.Packed {
			// a word per position (target and value), sorted, folded in order
			t.add("scatter_dest", 8*n+e*n, 8*n)
			t.then(radixWordsTraffic(caps, planRadix(caps, n, 8, 1<<32), n, kb))
			t.then(segmentStepsTraffic(caps, n))
			t.add("segment_fold", 8*n+self, e*tg)
			break
		}
		t.add("scatter_dest", 8*n, 16*n)
		// the source offsets (below n, as the model takes it) carried as radixSort does
		t.then(radixTraffic(caps, planRadix(caps, n, 8, n), n, 8, kb, false, true, n))
		t.then(segmentStepsTraffic(caps, n))
		t.add("segment_fold", 16*n+e*n+self, e*tg)
	case scatterOwned:
		if inOrderCounts {
			t.fill("fill", 4*tg)
		}
		workers := sp.Pass.TotalGroups() * int64(sp.Pass.LocalSize)
		t.add("scatter_owned", workers*8*n+e*n+e*tg, e*tg)
		divide = true
	case scatterBucket:
		if inOrderCounts {
			t.fill("fill", 4*tg)
		}
		// two walks of the positions (count, place), the slots written
		// and read once, the output read and written once (counts too)
		workers := sp.Pass.TotalGroups() * int64(sp.Pass.LocalSize)
		pairs := 8 * bucketRow(sp.Buckets) * workers
		slots := (4 + e) * n
		t.add("scatter_bcount", 8*n, pairs)
		t.add("scatter_bscan", pairs, pairs)
		t.add("scatter_bplace", 8*n+e*n+pairs, slots+pairs)
		cnt := int64(0)
		if s.counted() && s.red != Assign {
			cnt = 4 * tg
		}
		t.add("scatter_bfold", slots+pairs+e*tg+cnt, e*tg+cnt)
		divide = true
	case scatterPrivate, scatterFew, scatterFewGroups:
		// each worker's copy (and hit counts, where counted), folded in
		// worker order by the merge, which divides the mean
		workers := sp.Pass.TotalGroups() * int64(sp.Pass.LocalSize)
		if sp.Path == scatterFewGroups {
			workers = sp.Pass.TotalGroups()
		}
		copies, cnt := workers, int64(0)
		if sp.Path == scatterPrivate {
			// without counts worker 0 folds into the output itself
			if s.counted() {
				cnt = 4 * workers * tg
				t.fill("fill", cnt)
			} else if workers > 1 {
				copies--
			}
			t.fill("private_fill", copies*tg*e)
		} else if s.red == Mean || !s.includeSelf {
			cnt = 4 * workers * tg // every worker writes its counts
		}
		priv := copies * tg * e
		t.add("scatter_"+sp.Path.String(), 8*n+e*n, priv+cnt)
		if tg > 0 {
			t.add("scatter_merge", priv+cnt+e*tg, e*tg)
		}
	}
	if s.red == Mean && divide && tg > 0 {
		t.add("scatter_mean", (e+4)*tg, e*tg)
	}
	return t
}

// segmentStepsTraffic is what a fold of n sorted positions (Device.steps)
// queues before its launch: under a driver's loop limit that cuts the
// runs, the zeroing of its "run unfinished" word (one step: a run that
// finishes in the first launch).
func segmentStepsTraffic(caps host.Caps, n int64) traffic {
	var t traffic
	if caps.LoopLimit > 0 && caps.LoopLimit/2 < n {
		t.fill("fill", 4)
	}
	return t
}

// scatterMinBytes is a scatter's least traffic: the input read, the index
// and the sources read, the output written, once each.
func scatterMinBytes(s scatterShape) int64 {
	e := int64(s.elemBytes)
	return 2*e*s.targets + (8+e)*s.n
}
