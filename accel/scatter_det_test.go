package accel

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// The bit-reproducible mode gives the reference's bits (which reduces in
// index order) on every backend, for every reduction, with random floats
// whose sums depend on the order, heavy collisions, NaN, and assign with
// duplicates (the last in index order wins). Since each backend matches the
// reference bit for bit, they match each other.
func TestScatterReduceDeterministic(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, strategy := range []scatterPath{planned, scatterSorted, partitioned, slotted, scatterOwned, scatterBucket} {
			t.Run("strategy="+strategyName(strategy), func(t *testing.T) {
				defer forceScatter(d, strategy)()
				testScatterDeterministic(t, d)
			})
		}
	})
}

// planned stands for the planner's own scatter path in the tests' lists
// of paths to force.
const planned scatterPath = -1

// partitioned stands for the sorted path with the GPUs' counted
// partition tried at any hits per target (scatterPlan.Part, CountFirst;
// 32-bit values): where a target has more than kernels.ScPartMax hits it
// sorts after all.
const partitioned scatterPath = -2

// slotted stands for the sorted path with the GPUs' slotted partition
// tried (scatterPlan.Slot) where its buckets fit (planSlots), else the
// counted one: a bucket past its slots counts first, a target past
// kernels.ScPartMax hits sorts.
const slotted scatterPath = -3

// strategyName names a forced path in a subtest ("" for planned).
func strategyName(p scatterPath) string {
	if p == planned {
		return ""
	}
	if p == partitioned {
		return "partition"
	}
	if p == slotted {
		return "slots"
	}
	return p.String()
}

// forceScatter makes d's scatters take strategy (planned leaves the
// planner's choice) where the device can run it, and returns the undo.
// The CPU strategies run on any device with three work-items, but on a
// driver with a loop limit only where the loops stay under it.
func forceScatter(d *Device, strategy scatterPath) func() {
	if strategy == planned {
		return func() {}
	}
	plans(d).scatterFn = func(sp scatterPlan, s scatterShape) scatterPlan {
		c := d.caps
		switch strategy {
		case scatterOwned, scatterPrivate, scatterFew:
			if c.LoopLimit > 0 && (s.n > c.LoopLimit/4 || s.targets > c.LoopLimit/4) {
				return sp
			}
			c.Type, c.LoopLimit, c.ComputeUnits = host.TypeCPU, 0, 3
			s.det = strategy == scatterOwned
			if p := chooseScatter(c, s); p.Path == strategy {
				return p
			}
			return sp
		case scatterBucket:
			// at any size, with buckets of few targets (four per worker),
			// on the drivers that plan it (CPU OpenCL: lavapipe's builds
			// of the passes would take minutes of the suite)
			if c.Backend != host.OpenCL {
				return sp
			}
			c.Type, c.LoopLimit, c.ComputeUnits = host.TypeCPU, 0, 3
			if p, ok := planBucket(c, s, 3, 1<<40, true); ok {
				return p
			}
			return sp
		case scatterAtomic:
			if s.det || (s.elemBytes == 8 && !c.Int64Atomics) {
				return sp
			}
		case partitioned:
			return scatterPlan{Path: scatterSorted, Part: true, CountFirst: true, Reason: "forced by a test"}
		case slotted:
			return scatterPlan{Path: scatterSorted, Part: true, Slot: true, Reason: "forced by a test"}
		case scatterFewGroups:
			// the GPUs' pass on any device, at any size
			if !s.fewGroupsFit() {
				return sp
			}
			if p, ok := planFewGroups(c, s.n, s.targets, s.elemBytes, fewGroupsScratch(c)); ok {
				return p
			}
			return sp
		}
		return scatterPlan{Path: strategy, Reason: "forced by a test"}
	}
	return func() { plans(d).scatterFn = nil }
}

func testScatterDeterministic(t *testing.T, d *Device) {
	rng := rand.New(rand.NewSource(21))
	type shp struct {
		in, idx, src []int64
		dim          int64
	}
	shapes := []shp{
		{[]int64{1}, []int64{1}, []int64{1}, 0},
		{[]int64{5}, []int64{0}, []int64{3}, 0},
		{[]int64{7}, []int64{300}, []int64{301}, 0},
		{[]int64{3, 9}, []int64{3, 40}, []int64{4, 41}, 1},
		{[]int64{4, 5, 6}, []int64{2, 7, 3}, []int64{3, 8, 6}, -2},
		{[]int64{16}, []int64{200003}, []int64{200003}, 0}, // hot: ~12500 per target
		{[]int64{1000}, []int64{70001}, []int64{70001}, 0}, // ~70 per target
		{[]int64{2}, []int64{140000}, []int64{140000}, 0},  // runs longer than llvmpipe's loop limit
	}
	for si, s := range shapes {
		for _, dt := range []DType{Int32, Int64, Float32, Float64} {
			if !d.supports(dt) {
				continue
			}
			for _, red := range []Reduction{Assign, Sum, Prod, Mean, Amax, Amin} {
				for _, self := range []bool{true, false} {
					if red == Assign && !self {
						continue
					}
					name := fmt.Sprintf("shape %d %s %s self=%v", si, dt, red, self)
					in, _ := NewTensor(dt, s.in...)
					src, _ := NewTensor(dt, s.src...)
					fillDet(rng, in, red)
					fillDet(rng, src, red)
					idx, _ := NewTensor(Int64, s.idx...)
					dim := (s.dim + int64(len(s.in))) % int64(len(s.in))
					for i := range idx.Int64s() {
						idx.Int64s()[i] = rng.Int63n(s.in[dim])
					}
					var want *Tensor
					var err error
					if red == Assign {
						want, err = RefScatter(in, s.dim, idx, src)
					} else {
						want, err = RefScatterReduce(in, s.dim, idx, src, red, self)
					}
					require.NoError(t, err, name)
					ts, release := uploadAll(t, d, in, idx, src)
					var out *DeviceTensor
					if red == Assign {
						out, err = d.ScatterDeterministic(ts[0], s.dim, ts[1], ts[2])
					} else {
						out, err = d.ScatterReduceDeterministic(ts[0], s.dim, ts[1], ts[2], red, self)
					}
					require.NoError(t, err, name)
					got := mustHost(t, out)
					release()
					require.NoError(t, sameBits(got, want), name)
				}
			}
		}
	}
}

// fillDet fills with values whose folds depend on the order: random floats
// of mixed magnitude (products near 1 so they neither vanish nor overflow
// at once), a NaN now and then for amax/amin, full-range integers.
func fillDet(rng *rand.Rand, x *Tensor, red Reduction) {
	for i := int64(0); i < x.Len(); i++ {
		f := rng.NormFloat64() * math.Pow(10, float64(rng.Intn(7)-3))
		if red == Prod {
			f = 1 + rng.NormFloat64()*0.01
		}
		if (red == Amax || red == Amin) && rng.Intn(5000) == 0 {
			f = math.NaN()
		}
		switch x.dtype {
		case Int32:
			x.Int32s()[i] = int32(rng.Uint32())
		case Int64:
			x.Int64s()[i] = int64(rng.Uint64())
		case Float32:
			x.Float32s()[i] = float32(f)
		case Float64:
			x.Float64s()[i] = f
		}
	}
}

// TestScatterSlots runs the GPUs' slotted partition of the
// bit-reproducible scatter (scatterPlan.Slot) on both drivers: buckets of
// one target and of several (planSlots' 2^bits for n / targets hits a
// target), tiles of buckets whose words overflow the fold's scratch (sorted
// in place), a bucket past its slots (counted first, and from there to the
// sort where a target has more than kernels.ScPartMax hits), and a target
// past kernels.ScPartMax hits in a bucket of its own (straight to the
// sort), each as the plan report says; each result with the reference's
// bits, and a bad index named. Both ways on both drivers, as
// TestScatterPartition.
func TestScatterSlots(t *testing.T) { forEachDeviceBothWaysCAS(t, testScatterSlots) }

func testScatterSlots(t *testing.T, d *Device, cas bool) {
	var plan, fold string
	defer partitionSetup(d, slotted, &plan, &fold)()
	rng := rand.New(rand.NewSource(23))
	for _, c := range []struct {
		n, targets, hot int64 // hot: hits of each of the first hotN targets (at least 1), the rest spread
		hotN            int64
		bucket          int64 // the targets a bucket
		counted, sorted bool  // the call counts first, sorts
	}{
		{0, 5, 0, 0, 0, false, false},
		{1, 1, 0, 0, 16, false, false},
		{100003, 20000, 0, 0, 4, false, false},
		{100003, 6000, 0, 0, 1, false, false},
		{3001, 12000, 0, 0, 64, false, false},
		// the first targets' words fill the fold's tiles past its
		// scratch: sorted in place in the slots
		{40000, 2000, 50, 100, 1, false, false},
		// a target past its bucket's 56 slots: counted first
		{5000, 300, 100, 1, 1, true, false},
		// a target past kernels.ScPartMax hits: the sort at once
		{5000, 300, kernels.ScPartMax + 1, 1, 1, false, true},
		// buckets of 8 targets: one past its slots is counted first,
		// and where a target in it has too many hits, then sorted
		{20000, 8000, 60, 1, 8, true, false},
		{20000, 8000, kernels.ScPartMax + 1, 1, 8, true, true},
	} {
		for _, dt := range []DType{Float32, Int32} {
			for _, red := range []Reduction{Sum, Mean, Amax, Prod} {
				plan, fold = "", ""
				name := partitionCase(t, d, rng, c.n, c.targets, c.hot, c.hotN, dt, red)
				if c.n == 0 {
					continue // no positions: no plan to run
				}
				bucket := "slotted: a bucket a target,"
				if c.bucket > 1 {
					bucket = fmt.Sprintf("slotted: buckets of %d targets,", c.bucket)
				}
				require.Contains(t, plan, bucket, name)
				require.Equal(t, cas, strings.Contains(plan, "slots claimed by compare-and-swap"), "%s: %s", name, plan)
				require.Equal(t, c.counted, strings.Contains(plan, "its slots: counted first"), "%s: %s", name, plan)
				require.Equal(t, c.sorted, strings.Contains(plan, "hits: the sort"), "%s: %s", name, plan)
				switch {
				case c.sorted:
				case c.counted:
					require.Contains(t, fold, "tiles of", name)
					require.Contains(t, fold, "targets", name)
				default:
					require.Contains(t, fold, "buckets", name)
				}
			}
		}
	}
	// a bad index: named, with the flag read once at the end
	in, idx, src := hostZeros(Float32, 5000), hostZeros(Int64, 40000), hostZeros(Float32, 40000)
	for i := range idx.Int64s() {
		idx.Int64s()[i] = int64(i) % 5000
	}
	idx.Int64s()[33333] = -1
	ts, release := uploadAll(t, d, in, idx, src)
	defer release()
	_, err := d.ScatterReduceDeterministic(ts[0], 0, ts[1], ts[2], Sum, true)
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.ErrorContains(t, err, "33333")
}

// forEachDeviceBothWaysCAS runs fn on every device twice, as subtests:
// with the partitions' counters claimed by the device's atomic adds, then
// by compare-and-swap loops from a plain load (host.Caps.SerialAtomics
// off, then on: the plan sets SC_CAS from it); each device's own setting
// is restored after.
func forEachDeviceBothWaysCAS(t *testing.T, fn func(t *testing.T, d *Device, cas bool)) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		serial := d.caps.SerialAtomics
		defer func() { d.caps.SerialAtomics = serial }()
		for _, cas := range []bool{false, true} {
			t.Run(fmt.Sprintf("cas=%v", cas), func(t *testing.T) {
				d.caps.SerialAtomics = cas
				fn(t, d, cas)
			})
		}
	})
}

// partitionSetup forces strategy (a partition) on d with its passes on
// strided lanes (strideClaims), and reports the scatter's plan and its
// fold's into plan and fold; it returns the undo.
func partitionSetup(d *Device, strategy scatterPath, plan, fold *string) func() {
	undoForce, undoStride := forceScatter(d, strategy), strideClaims(d)
	d.OnPlan(func(r PlanReport) {
		switch r.Family {
		case "scatter":
			*plan = r.Plan
		case "partition":
			*fold = r.Plan
		}
	})
	return func() {
		d.OnPlan(nil)
		undoStride()
		undoForce()
	}
}

// partitionCase runs one bit-reproducible scatter_reduce of n positions
// of dt into targets outputs on d, the first hotN targets (at least one)
// taking hot hits each where hot > 0 and the rest spread at random, the
// positions shuffled and include_self at random, against the reference's
// bits; it returns the case's name.
func partitionCase(t *testing.T, d *Device, rng *rand.Rand, n, targets, hot, hotN int64, dt DType, red Reduction) string {
	t.Helper()
	name := fmt.Sprintf("n=%d targets=%d hot=%dx%d %s %s", n, targets, hot, max(hotN, 1), dt, red)
	in, _ := NewTensor(dt, targets)
	src, _ := NewTensor(dt, n)
	fillDet(rng, in, red)
	fillDet(rng, src, red)
	idx, _ := NewTensor(Int64, n)
	hotN = max(hotN, 1)
	for i := range idx.Int64s() {
		if int64(i) < hot*hotN {
			idx.Int64s()[i] = int64(i) / hot
		} else if hot > 0 {
			idx.Int64s()[i] = hotN + rng.Int63n(targets-hotN)
		} else {
			idx.Int64s()[i] = rng.Int63n(targets)
		}
	}
	rng.Shuffle(len(idx.Int64s()), func(a, b int) { idx.Int64s()[a], idx.Int64s()[b] = idx.Int64s()[b], idx.Int64s()[a] })
	self := rng.Intn(2) == 0
	want, err := RefScatterReduce(in, 0, idx, src, red, self)
	require.NoError(t, err, name)
	ts, release := uploadAll(t, d, in, idx, src)
	defer release()
	out, err := d.ScatterReduceDeterministic(ts[0], 0, ts[1], ts[2], red, self)
	require.NoError(t, err, name)
	require.NoError(t, sameBits(mustHost(t, out), want), name)
	return name
}

// strideClaims makes scatter_reduce's passes over positions take the
// GPUs' strided lanes (CONTIG 0) on d, and returns the undo: a CPU
// driver's work-item walks its contiguous run of positions in order, so
// the partitions' slots are claimed in position order and their folds'
// sorts (in scratch, and in place where a tile overflows it) would find
// nothing to do; with lanes strided a target's hits are claimed out of
// order, as on a GPU.
func strideClaims(d *Device) func() {
	plans(d).launchFn = func(p host.Plan) host.Plan {
		if p.Kernel == "scatter_reduce" && host.KnobContig.Of(p) == 1 {
			p = withKnob(p, host.KnobContig.Set(0)) // the plan's other knobs (SC_CAS) kept
		}
		return p
	}
	return func() { plans(d).launchFn = nil }
}

// TestPlanSlots: the slotted partition's buckets (planSlots) expect at
// least slotMinHits hits, and its slots are room for six standard
// deviations of them and 8, at most 3x the hits; none where a bucket
// would take more than kernels.ScPartMax slots or positions pass
// 2^(32 - bits).
func TestPlanSlots(t *testing.T) {
	for _, c := range []struct {
		n, targets int64
		bits, capw int64
		ok         bool
	}{
		{16 << 20, 1 << 20, 0, 48, true}, // 16 + 24 + 8
		{32 << 20, 1 << 20, 0, 80, true}, // 32 + 33.9 + 8 = 73.9
		{16 << 20, 16 << 20, 4, 48, true},
		{1, 1, 4, 48, true},
		{1 << 20, 4 << 20, 6, 48, true},
		{1 << 20, 8 << 20, 0, 0, false},   // a bucket of 64 targets expects 8 hits
		{200 << 20, 1 << 20, 0, 0, false}, // 200 + 85 + 8 slots
		{1 << 31, 1 << 31, 4, 0, false},   // 2^31 positions in 28 bits
		{1 << 28, 1 << 28, 4, 48, true},   // the last that fits
		{(1 << 28) + 1, 1 << 28, 4, 0, false},
	} {
		s := scatterShape{n: c.n, targets: c.targets, elemBytes: 4, red: Sum, includeSelf: true, det: true, flat: true}
		bits, capw, ok := planSlots(s)
		require.Equal(t, c.ok, ok, "%d into %d", c.n, c.targets)
		if !ok {
			continue
		}
		require.Equal(t, c.bits, bits, "%d into %d", c.n, c.targets)
		require.Equal(t, c.capw, capw, "%d into %d", c.n, c.targets)
		m := float64(c.n) * float64(int64(1)<<bits) / float64(c.targets)
		require.GreaterOrEqual(t, m, float64(slotMinHits))
		require.LessOrEqual(t, float64(capw), 3*m)
	}
	// the GPUs plan the slots for the bench's bit-reproducible row, a
	// knob or a test keeps the count
	h200 := host.Caps{Backend: host.OpenCL, Type: host.TypeDiscreteGPU, ComputeUnits: 132, MaxWorkGroupSize: 1024,
		LocalMemBytes: 48 << 10, GlobalMemBytes: 140 << 30, Int64Atomics: true}
	s := scatterShape{n: 16 << 20, targets: 1 << 20, elemBytes: 4, red: Sum, includeSelf: true, det: true, flat: true}
	sp := planScatter(h200, s)
	require.True(t, sp.Part && sp.Slot, sp.String())
	require.Equal(t, []int64{0, 48}, []int64{sp.SlotBits, sp.SlotCap})
	require.Contains(t, sp.Reason, "slotted: a bucket a target, 48 slots each (about 16 hits expected)")
	cf := completeScatter(h200, s, scatterPlan{Path: scatterSorted, Part: true, CountFirst: true})
	require.True(t, cf.Part && !cf.Slot, cf.String())
	cpu := h200
	cpu.Type = host.TypeCPU
	require.False(t, planScatter(cpu, s).Slot, "CPU drivers keep their own bit-reproducible plans")
	// the fold's tiles: a work-item a bucket, three quarters of the
	// scratch's words on average
	fp := planSfold(h200, s.n, 1<<20, Sum, foldWide(h200))
	require.LessOrEqual(t, fp.TileElems, int64(fp.LocalSize))
	require.Equal(t, int64(96), fp.TileElems, "the doubled scratch (SC_FEWG_SH): 2048 words")
}

// TestScatterPartition runs the GPUs' partition of the bit-reproducible
// scatter (scatterPlan.Part) on both drivers: targets with up to
// kernels.ScPartMax hits fold from their grouped words; one more hit on
// one target sends the call to the sort, which the plan report says; a bad
// index is named as on every path; each result with the reference's bits.
// Both ways on both drivers: hit counts and slots claimed by the device's
// atomic adds, and by compare-and-swap loops from a plain load (SC_CAS,
// lavapipe's plan: host.Caps.SerialAtomics).
func TestScatterPartition(t *testing.T) { forEachDeviceBothWaysCAS(t, testScatterPartition) }

func testScatterPartition(t *testing.T, d *Device, cas bool) {
	var plan, fold string
	defer partitionSetup(d, partitioned, &plan, &fold)()
	rng := rand.New(rand.NewSource(22))
	for _, c := range []struct {
		n, targets, hot int64 // hot: hits of each of the first hotN targets (at least 1), the rest spread
		hotN            int64
		sorted          bool // the call falls back to the sort
	}{
		{0, 5, 0, 0, false},
		{1, 1, 0, 0, false},
		{100003, 20000, 0, 0, false},
		{5000, 300, kernels.ScPartMax, 0, false},
		{5000, 300, kernels.ScPartMax + 1, 0, true},
		{70001, 10, 0, 0, true},
		// the first tile's words (30 targets of 120 hits) overflow the
		// fold's scratch: sorted in device memory, the other tiles in
		// scratch
		{40000, 4000, 120, 30, false},
		// a hit every four targets: tiles of more targets than a
		// group's work-items (but under a loop limit)
		{3001, 12000, 0, 0, false},
	} {
		for _, dt := range []DType{Float32, Int32} {
			for _, red := range []Reduction{Sum, Mean, Amax, Prod} {
				plan, fold = "", ""
				name := partitionCase(t, d, rng, c.n, c.targets, c.hot, c.hotN, dt, red)
				if c.n == 0 {
					continue // no positions: no plan to run
				}
				require.Contains(t, plan, "grouped in one pass", name)
				require.Equal(t, cas, strings.Contains(plan, "slots claimed by compare-and-swap"), "%s: %s", name, plan)
				require.Equal(t, c.sorted, strings.Contains(plan, "hits: the sort"), "%s: %s", name, plan)
				if !c.sorted {
					require.Contains(t, fold, "tiles of", name)
				}
			}
		}
	}
	// no targets at all: every index is out of range
	{
		in, idx, src := hostZeros(Float32, 0), hostZeros(Int64, 3), hostZeros(Float32, 3)
		ts, release := uploadAll(t, d, in, idx, src)
		_, err := d.ScatterReduceDeterministic(ts[0], 0, ts[1], ts[2], Sum, true)
		release()
		require.ErrorIs(t, err, ErrInvalidArgument)
	}
	// a bad index: named, whatever the path
	in, idx, src := hostZeros(Float32, 50), hostZeros(Int64, 400), hostZeros(Float32, 400)
	idx.Int64s()[333] = 50
	ts, release := uploadAll(t, d, in, idx, src)
	defer release()
	_, err := d.ScatterReduceDeterministic(ts[0], 0, ts[1], ts[2], Sum, true)
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.ErrorContains(t, err, "333")
}
