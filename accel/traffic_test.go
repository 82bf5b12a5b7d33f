package accel

import (
	"testing"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/reference"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// h100 is the H100 of ../shared/gpu-runs/2026-11-25-h100 as the planners
// see it (Vulkan caps; OpenCL's differ only in the subgroup fields).
var h100 = host.Caps{Backend: host.Vulkan, Type: host.TypeDiscreteGPU, ComputeUnits: 132, MaxWorkGroupSize: 1024,
	MaxWorkGroupCount: [3]int64{2147483647, 65535, 65535}, LocalMemBytes: 48 << 10, SubgroupSize: 32, SubgroupBallot: true,
	GlobalMemBytes: 80 << 30, MaxAllocBytes: 80 << 30, Int64: true, Int64Atomics: true, Float32Atomics: true}

// h100CopyBps is its device copy, read plus written bytes per second, as
// measured there (OpenCL's clEnqueueCopyBuffer).
const h100CopyBps = 2.97e12

// h100Radix and h100Scan are the plans of the sorts and scans a model on
// the H100 makes (its Vulkan scans on subgroups, as the older rows take
// them).
func h100Radix(n int64) host.Plan { return planRadix(h100, n, 8, n) }

func h100Scan(n int64, dt DType) host.Plan { return planScan(h100, n, int64(dt.Size()), true) }

// TestTrafficModel bounds the modelled traffic of the GPU plans against
// each op's least, and logs the time each needs on the H100 at its copy
// bandwidth (5 us a launch), next to the times measured there.
func TestTrafficModel(t *testing.T) {
	cpu := host.Caps{Backend: host.OpenCL, Type: host.TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 4096,
		MaxWorkGroupCount: [3]int64{1 << 31, 65535, 65535}, GlobalMemBytes: 8 << 30, MaxAllocBytes: 2 << 30, Int64Atomics: true}
	predict := func(name string, tr traffic, min int64, measured string) {
		s := float64(tr.Bytes())/h100CopyBps + 5e-6*float64(tr.Launches())
		t.Logf("%-28s model %6.2fx the least, %2d launches: %.3f ms on the H100 at its copy bandwidth (measured there: %s)",
			name, float64(tr.Bytes())/float64(min), tr.Launches(), 1e3*s, measured)
	}

	// cumsum: the chained scans (OpenCL GPUs, CPU OpenCL drivers) read x
	// and write y once, the least, beside their tiles' flags (zeroed
	// first: within 0.1%); reduce-then-scan (Vulkan with subgroups,
	// lavapipe) reads x twice: at most 1.5x, and the partials.
	for _, n := range []int64{1 << 20, 64 << 20} {
		tr := scanTraffic(planScan(h100, n, 4, true), n, 4, 4)
		min := 2 * 4 * n
		assert.LessOrEqual(t, tr.Bytes(), min*3/2+64<<10, "gpu cumsum %d: %s", n, tr)
		ocl := h100
		ocl.Backend, ocl.SubgroupSize = host.OpenCL, 0
		for _, c := range []host.Caps{ocl, cpu} {
			b := scanTraffic(planScan(c, n, 4, false), n, 4, 4).Bytes()
			assert.True(t, b >= min && b <= min*1001/1000, "%s %s cumsum %d: %d bytes", c.Backend, c.Type, n, b)
		}
		if n == 64<<20 {
			predict("cumsum int32 64M", tr, min, "0.913 OpenCL, 0.460 Vulkan, PyTorch 0.271")
		}
	}

	// compact: 64M int32 elements, half kept: the mask read twice, the
	// kept elements read and written with their positions, the tiles'
	// counts scanned: within 1.2x the least (a scan of the mask into int64
	// positions wrote and read 16 bytes an element more)
	{
		n, k := int64(64<<20), int64(32<<20)
		tiles := (n + 1023) / 1024
		tr := compactTraffic(planScan(h100, tiles+1, 8, true), n, k, 4, tiles)
		assert.LessOrEqual(t, tr.Bytes(), compactMinBytes(n, k, 4)*6/5, "compact: %s", tr)
		predict("compact int32 64M, half kept", tr, compactMinBytes(n, k, 4), "-")
	}

	// a sort of 32-bit keys carrying the permutation: at most (digit
	// passes + 1) x 2 x the least, on every plan
	for _, c := range []host.Caps{h100, cpu} {
		n := int64(16 << 20)
		p := planRadix(c, n, 4, n)
		passes := (32 + host.KnobRadixBits.Of(p) - 1) / host.KnobRadixBits.Of(p)
		tr := radixTraffic(c, p, n, 4, 32, false, false, n)
		min := n * (4 + 4 + 8)
		assert.LessOrEqual(t, tr.Bytes(), (passes+1)*2*min, "%s sort: %d passes, %s", c.Type, passes, tr)
		if c.Type != host.TypeCPU {
			// Onesweep reads a pass's input once, where the count pass
			// read it twice: less than count, scan and scatter
			require.Equal(t, int64(1), host.KnobRadixSweep.Of(p), "gpu sort plan: %v", p)
			old := p
			old.Knobs = []host.Knob{host.KnobRadixBits.Set(host.KnobRadixBits.Of(p)), host.KnobRadixKpt.Set(host.KnobRadixKpt.Of(p))}
			tro := radixTraffic(c, old, n, 4, 32, false, false, n)
			assert.Less(t, tr.Bytes(), tro.Bytes(), "sweep %s, count-scan-scatter %s", tr, tro)
			predict("sort 16M uint32 + perm", tr, min, "H200 1.81 OpenCL, 1.80 Vulkan without the sweep; PyTorch 0.94 on the H100")
			predict("  (without the sweep)", tro, min, "the same")
		}
	}

	// unique of 16M int64 keys, 1M distinct: the 64-bit sort, whose
	// passes each move a key and a 32-bit entry both ways (1.5x the least
	// a pass, 2x with int64 entries), its status words and the order bits,
	// and five light passes: at most (digit passes + 2) x 2 x the least
	{
		n, u := int64(16<<20), int64(1<<20)
		rp := planRadix(h100, n, 8, n)
		tr := uniqueTraffic(h100, rp, planScan(h100, n, 8, true), n, u, 8, keyKind(Int64))
		passes := (64 + host.KnobRadixBits.Of(rp) - 1) / host.KnobRadixBits.Of(rp)
		min := uniqueMinBytes(n, u, 8)
		assert.LessOrEqual(t, tr.Bytes(), (passes+2)*2*min, "unique: %s", tr)
		assert.Equal(t, 1, tr.Waits)
		predict("  (the sort of every key)", tr, min, "H200 6.24 OpenCL, 7.13 Vulkan without the sweep; PyTorch 2.93")
		// the GPUs' plan: the keys counted in a hash table, only the
		// distinct ones sorted: within 4.5x the least (the keys read, their
		// slots written and read back, the inverse written: 1.8x; the
		// table's 4M slots cleared, counted into and gathered from, the
		// u keys sorted), under a third of the sort's bytes
		up := planUnique(h100, n, 8)
		require.True(t, up.Hash, "h100 unique plan: %s", up)
		ht := hashUniqueTraffic(h100, planRadix(h100, u, 8, u), n, u, up.Capacity, keyKind(Int64))
		assert.LessOrEqual(t, ht.Bytes(), 9*min/2, "hashed unique: %s", ht)
		assert.Less(t, 3*ht.Bytes(), tr.Bytes(), "hashed unique %s, sorted %s", ht, tr)
		assert.Equal(t, 1, ht.Waits)
		predict("unique int64 16M, 1M distinct", ht, min, "H200 6.24 OpenCL, 7.13 Vulkan (the sort of every key); PyTorch 2.93")
		// at the most distinct keys the table takes (n/8), still under
		// half the sort's bytes
		u8 := up.Capacity
		ht8 := hashUniqueTraffic(h100, planRadix(h100, u8, 8, u8), n, u8, up.Capacity, keyKind(Int64))
		tr8 := uniqueTraffic(h100, rp, planScan(h100, n, 8, true), n, u8, 8, keyKind(Int64))
		assert.Less(t, 2*ht8.Bytes(), tr8.Bytes(), "hashed unique of n/8 distinct %s, sorted %s", ht8, tr8)
		predict("  (n/8 distinct)", ht8, uniqueMinBytes(n, u8, 8), "-")
	}

	// tril_indices writes its pairs once; diagonal_scatter copies its
	// input and writes the diagonal from src: both at the least (the
	// diagonal's old values, copied first, within 0.1%)
	tri := triTraffic(50_005_000, 8)
	assert.Equal(t, int64(2*8*50_005_000), tri.Bytes())
	predict("tril_indices 10000^2 int64", tri, 2*8*50_005_000, "H100 0.416 OpenCL, 1.379 Vulkan; PyTorch 0.582")
	n := int64(4096 * 4096)
	dg := diagTraffic(4096, 4, 4*n)
	assert.LessOrEqual(t, dg.Bytes(), diagMinBytes(4096, 4, 4*n)*1001/1000)
	predict("diagonal_scatter 4096^2", dg, diagMinBytes(4096, 4, 4*n), "H200 0.044 OpenCL, 0.172 Vulkan; PyTorch 0.044")
	// its backward: the gather reads the diagonal the copy reads too
	db := diagBackwardTraffic(4096, 4, 4*n)
	assert.Equal(t, diagBackwardMinBytes(4096, 4, 4*n)+2*4*4096, db.Bytes())

	// get_indice_pairs subm248636 on the GPUs' candidates (3-d, k3: 27
	// offsets), whose least is its output (a pair of int32 rows per
	// candidate slot, 8 bytes): each candidate's found row written, then
	// read twice (the tiles' counts, the pairs' write), 20 bytes a
	// candidate beside the sites' hash table: within 3.5x the least (it
	// was 40 bytes a candidate, 5.2x, while every candidate's flag was
	// written, scanned and read); the goal is 0.3 ms. The table
	// (1M slots, 8 MB, 4x the sites) takes 2 launches where the sites'
	// sort and its duplicate check took 15, and a lookup a probe or two
	// where a binary search took 18 dependent loads.
	{
		l, k := int64(248636), int64(27)
		sub := convGeom{l: l, k: k, d: 3, inBits: keyBitsFor(4 * 41 * 1440 * 1440), p: reference.SparseConv{Subm: true, BatchSize: 4,
			SpatialShape: []int64{41, 1440, 1440}, KSize: []int64{3, 3, 3}}}
		ps := planIndice(h100, sub, SplitAuto, shapeAuto, false)
		require.Equal(t, pathSubmLookup, ps.Path)
		require.Equal(t, sitesTable{Slots: 1 << 20, RowBits: 18, Probes: sitesTableProbes}, ps.Table)
		tr := indiceTraffic(h100, h100Radix, h100Scan, sub, SplitAuto, ps, 0, 0)
		min := indiceMinBytes(pathSubmLookup, sub, 0)
		assert.LessOrEqual(t, tr.Bytes(), 7*min/2, "subm: %s", tr)
		assert.Equal(t, 1, tr.Waits)
		predict("get_indice_pairs subm248636", tr, min, "H100 1.02 OpenCL, 0.79 Vulkan; PyTorch (sort + searchsorted) 7.16; goal 0.3")
		sorted := indiceTraffic(h100, h100Radix, h100Scan, sub, SplitAuto, withSitesTable(h100, sub, SplitAuto, ps, sitesTable{}), 0, 0)
		assert.Equal(t, tr.Launches()+14, sorted.Launches(), "the table's fill and insert for the sort's 15 launches (two fills, the passes' roles) and the check's")
		predict("  (sites sorted)", sorted, min, "H200 0.599 OpenCL (session 3, before the tiles)")
	}

	// get_indice_pairs conv149100 (batch 4, 11x360x360, k3, stride 2,
	// padding (0,1,1): 463,349 of its 4.03M candidates hit one of 321,173
	// outputs, as the reference counts them on the bench's sites): each
	// candidate's flag written, scanned (read twice on Vulkan) and read
	// twice (the keys' emit, the pairs' write), the pairs written once; the
	// hits' keys sorted and numbered: within 6x its least, which the pairs
	// dominate (8 bytes a candidate slot). Its target space (648,000
	// keys) is smaller than its candidates, so the planner numbers them
	// through the dense grid: each candidate's target key written and read
	// twice (the tiles' counts, the pairs), no flag, position or sort:
	// within 3.5x the least, 11 launches and a wait fewer.
	{
		l, k, v, m := int64(149100), int64(27), int64(463349), int64(321173)
		p := reference.SparseConv{BatchSize: 4, SpatialShape: []int64{11, 360, 360}, KSize: []int64{3, 3, 3},
			Stride: []int64{2, 2, 2}, Padding: []int64{0, 1, 1}, Dilation: []int64{1, 1, 1}}
		g := convGeom{l: l, k: k, d: 3, p: p, target: []int64{5, 180, 180}, inBits: keyBitsFor(4 * 11 * 360 * 360),
			outBits: keyBitsFor(4 * 5 * 180 * 180)}
		space := int64(4 * 5 * 180 * 180)
		p1 := planIndice(h100, g, SplitAuto, shapeAuto, false)
		require.Equal(t, pathConvCandidates, p1.Path)
		require.Equal(t, space, p1.Grid, "the target space is smaller than the candidates: the dense grid")
		require.Positive(t, p1.Table.Slots, "the sites in their hash table")
		tr := indiceTraffic(h100, h100Radix, h100Scan, g, SplitAuto, p1, v, m)
		min := indiceMinBytes(pathConvCandidates, g, m)
		assert.LessOrEqual(t, tr.Bytes(), 7*min/2, "conv: %s", tr)
		assert.Equal(t, 1, tr.Waits, "the validation flag read with the grid's total")
		predict("get_indice_pairs conv149100", tr, min, "H100 0.94 OpenCL, 2.81 Vulkan; H200 0.584 OpenCL; PyTorch (sort + searchsorted) 7.16")
		ps := p1
		ps.Grid = 0
		sorted := indiceTraffic(h100, h100Radix, h100Scan, g, SplitAuto, ps, v, m)
		assert.LessOrEqual(t, sorted.Bytes(), 6*min, "conv, targets sorted: %s", sorted)
		assert.Equal(t, 2, sorted.Waits)
		predict("  (targets sorted)", sorted, min, "")
		// its inverse (the forward's 321,173 outputs through the grid,
		// each looking its 27 inputs up among the sorted sites): one wait
		gi := g
		gi.p.Inverse = true
		pi := planIndice(h100, gi, SplitAuto, shapeAuto, false)
		require.Equal(t, pathInverse, pi.Path)
		require.Equal(t, space, pi.Grid)
		inv := indiceTraffic(h100, h100Radix, h100Scan, gi, SplitAuto, pi, 0, m)
		assert.Equal(t, 1, inv.Waits)
		predict("  (its inverse)", inv, indiceMinBytes(pathInverse, gi, m), "")
	}

	// get_indice_pairs conv248636 (the subm248636 sites, stride 2,
	// padding 1: 834,407 of its 6.71M candidates hit one of 511,063
	// outputs): its target space (43.5M keys) is larger than its
	// candidates but its grid's words (1.36M) are not, so the targets go
	// through the grid's bits: within 3.5x its least, one wait, where
	// sorting them takes more launches and a wait more
	{
		l, k, v, m := int64(248636), int64(27), int64(834407), int64(511063)
		p := reference.SparseConv{BatchSize: 4, SpatialShape: []int64{41, 1440, 1440}, KSize: []int64{3, 3, 3},
			Stride: []int64{2, 2, 2}, Padding: []int64{1, 1, 1}, Dilation: []int64{1, 1, 1}}
		g := convGeom{l: l, k: k, d: 3, p: p, target: []int64{21, 720, 720}, inBits: keyBitsFor(4 * 41 * 1440 * 1440),
			outBits: keyBitsFor(4 * 21 * 720 * 720)}
		pg := planIndice(h100, g, SplitAuto, shapeAuto, false)
		require.Equal(t, int64(4*21*720*720), pg.Grid, "more keys than candidates, fewer words")
		tr := indiceTraffic(h100, h100Radix, h100Scan, g, SplitAuto, pg, v, m)
		min := indiceMinBytes(pathConvCandidates, g, m)
		assert.LessOrEqual(t, tr.Bytes(), 7*min/2, "conv248636: %s", tr)
		assert.Equal(t, 1, tr.Waits)
		predict("get_indice_pairs conv248636", tr, min, "")
		ps := pg
		ps.Grid = 0
		sorted := indiceTraffic(h100, h100Radix, h100Scan, g, SplitAuto, ps, v, m)
		assert.Greater(t, sorted.Launches(), tr.Launches())
		assert.Equal(t, 2, sorted.Waits)
		predict("  (targets sorted)", sorted, min, "")
	}

	// the hash table: 8M distinct keys into a table made for them (16M
	// slots), with their ids, and looked up: the probes touch each table
	// word once a pass (the model's rule): an insert with ids in order of
	// first occurrence (mark, scan, commit and ids passes after the
	// probes) moves at most 5x its least, a lookup its least
	{
		n, slots := int64(8<<20), hashSlots(8<<20)
		ins := hashTableTraffic(planScan(h100, n, 8, true), n, slots, true, true, false)
		assert.LessOrEqual(t, ins.Bytes(), 5*hashTableMinBytes(n, slots, true), "insert: %s", ins)
		predict("hash_table insert_dense8M", ins, hashTableMinBytes(n, slots, true), "-")
		look := hashTableTraffic(host.Plan{}, n, slots, false, false, false)
		assert.Equal(t, hashTableMinBytes(n, slots, true)+8, look.Bytes(), "the least and the probes' progress words")
		predict("hash_table lookup8M", look, hashTableMinBytes(n, slots, true), "-")
	}

	// the sparse union of two coalesced operands on the GPUs' merge path:
	// each operand's keys written and read twice (the count, the emit)
	// beside its arrays: the 2x the least (inputs plus output) for
	// a 2-d COO add, 3x for the bench's CSR divide (csr200k_5M: 200,000
	// rows, 5M float32 entries each, int64 columns), whose keys cost more
	// beside its smaller arrays (a CSR entry is 12 bytes, its key 8)
	for _, c := range []struct {
		name  string
		s     sparseShape
		bound int64
	}{
		{"sparse_div csr200k_5M", sparseShape{nx: 5e6, ny: 5e6, u: 1e7, csr: true, rows: 2e5, idxBytes: 8, valBytes: 4, chunk: 32}, 3},
		{"sparse_add coo 2-d 5M+5M", sparseShape{nx: 5e6, ny: 5e6, u: 1e7, ndim: 2, idxBytes: 8, valBytes: 4, chunk: 32}, 2},
		{"  (with gradients)", sparseShape{nx: 5e6, ny: 5e6, u: 1e7, ndim: 2, idxBytes: 8, valBytes: 4, chunk: 32, grad: true}, 2},
	} {
		tr := sparseMergeTraffic(h100, c.s)
		min := sparseMinBytes(c.s)
		assert.LessOrEqual(t, tr.Bytes(), c.bound*min, "%s: %s", c.name, tr)
		assert.Equal(t, 1, tr.Waits, c.name)
		predict(c.name, tr, min, map[string]string{"sparse_div csr200k_5M": "H100 8.68 OpenCL, over 60 s Vulkan; H200 9.13 OpenCL, 14.3 Vulkan (chunks of 512: 19 groups); cuSPARSE add 2.41; goal 2.4"}[c.name])
	}

	// scatter_reduce: the atomic pass, and the few-groups pass for 16
	// targets, within 2x the least (2.5x for a mean, whose hit counts are
	// a word per position); the bench's rows on the H100
	for _, c := range []struct {
		name     string
		n, tg    int64
		red      Reduction
		path     scatterPath
		measured string
	}{
		{"scatter 16M->1M sum", 16 << 20, 1 << 20, Sum, scatterAtomic, "build error, panic; PyTorch 0.231"},
		{"scatter 16M->16 sum", 16 << 20, 16, Sum, scatterFewGroups,
			"atomics: build error, panic; H200 1M->16 with atomics 2,368 OpenCL (compare-and-swap), 0.28 Vulkan; PyTorch 4.33"},
		{"scatter 16M->16M sum (perm)", 16 << 20, 16 << 20, Sum, scatterAtomic, "build error, panic; PyTorch 0.838"},
		{"scatter 16M->1M mean", 16 << 20, 1 << 20, Mean, scatterAtomic, "-"},
	} {
		s := scatterShape{n: c.n, targets: c.tg, elemBytes: 4, red: c.red, includeSelf: true, flat: true}
		sp := planScatter(h100, s)
		tr := scatterTraffic(h100, sp, s)
		assert.Equal(t, c.path, sp.Path, c.name)
		bound := 2 * scatterMinBytes(s)
		if c.red == Mean {
			bound = 5 * scatterMinBytes(s) / 2
		}
		assert.LessOrEqual(t, tr.Bytes(), bound, "%s: %s", c.name, tr)
		assert.Equal(t, 1, tr.Waits, c.name)
		predict(c.name, tr, scatterMinBytes(s), c.measured)
		det := s
		det.det = true
		dp := planScatter(h100, det)
		dt := scatterTraffic(h100, dp, det)
		assert.Equal(t, scatterSorted, dp.Path, c.name)
		// 32-bit values travel in one word with their targets: a word
		// written and read per digit pass, where the sort of targets and
		// offsets moved two in its first and last passes and the fold
		// gathered the values
		require.True(t, dp.Packed, c.name)
		// with few hits per target (all but 16 targets) the partition,
		// slotted: per position the index and value read, a slot claimed
		// in its bucket, the word written and read (32 bytes); per target
		// 16 bytes (the input's copy, the fold's read of it and its
		// write), per bucket its count cleared and read; one wait (the
		// flag at the end)
		assert.Equal(t, c.tg > 16, dp.Part, c.name)
		assert.Equal(t, c.tg > 16, dp.Slot, c.name)
		part := dt
		var counted traffic
		if dp.Part {
			assert.LessOrEqual(t, dt.Bytes(), 32*c.n+16*c.tg+8*dp.slotBuckets(c.tg), "%s (det, slotted partition): %s", c.name, dt)
			assert.Equal(t, 1, dt.Waits, c.name)
			// counted first: per position the index read twice and the
			// value once, a count and a slot claimed, the word written
			// and read (44 bytes; the sort's passes alone move 48); per
			// target 36 bytes (the input's copy, the counts cleared and
			// scanned, the fold's reads of a count, an end and the input,
			// and its write), and the scan's tile flags; two waits (the
			// count's flag)
			cf := dp
			cf.Slot = false
			counted = scatterTraffic(h100, cf, det)
			assert.LessOrEqual(t, counted.Bytes(), 44*c.n+36*c.tg+c.tg/8, "%s (det, counted partition): %s", c.name, counted)
			assert.Equal(t, 2, counted.Waits, c.name)
			assert.Less(t, part.Bytes(), counted.Bytes(), "%s (det): slotted %s, counted %s", c.name, part, counted)
			sorted := dp
			sorted.Part = false
			dt = scatterTraffic(h100, sorted, det)
			assert.Less(t, counted.Bytes(), dt.Bytes(), "%s (det): partition %s, sort %s", c.name, counted, dt)
		}
		unpacked := dp
		unpacked.Packed, unpacked.Part = false, false
		du := scatterTraffic(h100, unpacked, det)
		assert.Less(t, dt.Bytes(), du.Bytes(), "%s (det): packed %s, unpacked %s", c.name, dt, du)
		// per position: the index and value read and the word written (20
		// bytes), the histogram's read of the words (8), each pass's word
		// read and written with its tiles' status (at most 20), the fold's
		// read (8); per target the input's copy, the fold's read of it and
		// its write
		passes := int64(keyBitsFor(c.tg)+7) / 8
		assert.LessOrEqual(t, dt.Bytes(), (20*passes+40)*c.n+4*4*c.tg, "%s (det): %s", c.name, dt)
		if dp.Part {
			predict(c.name+" (det)", part, scatterMinBytes(s), det1M[c.name])
			predict("  (counted first)", counted, scatterMinBytes(s), "")
			predict("  (packed words sorted)", dt, scatterMinBytes(s), "")
		} else {
			predict(c.name+" (det)", dt, scatterMinBytes(s), det1M[c.name])
		}
		predict("  (offsets sorted)", du, scatterMinBytes(s), "")
	}
	wide := scatterShape{n: 16 << 20, targets: 1 << 20, elemBytes: 8, red: Sum, includeSelf: true, det: true, flat: true}
	assert.False(t, planScatter(h100, wide).Packed, "64-bit values are sorted by offset")
}

// det1M are the bit-reproducible rows measured on the H200 (session 3),
// before the packed sort.
var det1M = map[string]string{"scatter 16M->1M sum": "H200 2.53 OpenCL, 12.99 Vulkan; PyTorch (not reproducible) 0.198"}

// TestPlanFewGroups: the few-groups pass folds in scratch columns on
// Vulkan and in registers on OpenCL (fewGroupsScratch), with 128 lanes
// where the scratch fits half the local memory and fewer where it does
// not (float64 columns, two words per lane and target, on a 48 KiB
// device), and one copy per group.
func TestPlanFewGroups(t *testing.T) {
	ocl := h100
	ocl.Backend = host.OpenCL
	for _, c := range []struct {
		caps      host.Caps
		elemBytes int
		scratch   int64
		local     int
	}{
		{h100, 4, 1, 128},
		{h100, 8, 1, 64},
		{ocl, 4, 0, 128},
		{ocl, 8, 0, 128},
	} {
		s := scatterShape{n: 16 << 20, targets: 16, elemBytes: c.elemBytes, red: Sum, includeSelf: true, flat: true}
		sp := planScatter(c.caps, s)
		assert.Equal(t, scatterFewGroups, sp.Path)
		assert.Equal(t, c.scratch, host.KnobScFewgSh.Of(sp.Pass), "%s %d", c.caps.Backend, c.elemBytes)
		assert.Equal(t, c.local, sp.Pass.LocalSize, "%s %d", c.caps.Backend, c.elemBytes)
		assert.Equal(t, min((s.n+int64(c.local)*fewGroupsPerLane-1)/(int64(c.local)*fewGroupsPerLane), 16*132), sp.Pass.TotalGroups())
	}
}

// TestPlanBucket: the CPU drivers' bucketed bit-reproducible scatter:
// buckets of a power of two targets, about bucketBytes of output and hit
// counts each and at least four per core; refused over the memory budget;
// its modelled traffic at most three times the least (two walks of the
// positions and the slots written and read once) and its launches the
// input's copy and four passes (and a mean's counts' fill and divide).
func TestPlanBucket(t *testing.T) {
	for _, c := range []struct {
		name             string
		cores            int64
		n, tg            int64
		red              Reduction
		spanLog, buckets int64
	}{
		{"rand16M_1M sum, 2 cores", 2, 16 << 20, 1 << 20, Sum, 16, 16},
		{"rand16M_1M mean, 2 cores (hit counts)", 2, 16 << 20, 1 << 20, Mean, 15, 32},
		{"rand16M_1M sum, 64 cores", 64, 16 << 20, 1 << 20, Sum, 12, 256},
		{"16M into 1G, 16 cores", 16, 16 << 20, 1 << 30, Sum, 16, 1 << 14},
	} {
		s := scatterShape{n: c.n, targets: c.tg, elemBytes: 4, red: c.red, includeSelf: true, det: true, flat: true}
		sp, ok := planBucket(host.Caps{Type: host.TypeCPU}, s, c.cores, 1<<34, false)
		if !assert.True(t, ok, c.name) {
			continue
		}
		assert.Equal(t, scatterBucket, sp.Path, c.name)
		assert.Equal(t, c.spanLog, sp.SpanLog, c.name)
		assert.Equal(t, c.buckets, sp.Buckets, c.name)
		assert.Equal(t, c.cores, sp.Pass.TotalGroups(), c.name)
		tr := scatterTraffic(host.Caps{Type: host.TypeCPU}, sp, s)
		bound, launches := 3*scatterMinBytes(s)+8*bucketRow(sp.Buckets)*c.cores*4, 5 // the input's copy and 4 passes
		if c.red == Mean {
			bound, launches = bound+3*8*c.tg, 7 // the hit counts (zeroed), the divide
		}
		assert.LessOrEqual(t, tr.Bytes(), bound, "%s: %s", c.name, tr)
		assert.Equal(t, launches, tr.Launches(), "%s: %s", c.name, tr)
	}
	s := scatterShape{n: 16 << 20, targets: 1 << 20, elemBytes: 4, red: Sum, includeSelf: true, det: true, flat: true}
	_, ok := planBucket(host.Caps{Type: host.TypeCPU}, s, 2, 100<<20, false)
	assert.False(t, ok, "slots of 128 MB over a budget of 100 MB")
	s.targets = 1 << 16
	_, ok = planBucket(host.Caps{Type: host.TypeCPU}, s, 2, 1<<34, false)
	assert.False(t, ok, "an output a core's cache holds: the owners")
}
