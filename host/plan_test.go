package host

import (
	"math/bits"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFoldGroups(t *testing.T) {
	cases := []struct {
		g      int64
		limits [3]int64
	}{
		{1, [3]int64{65535, 65535, 65535}}, {65535, [3]int64{65535, 65535, 65535}},
		{65536, [3]int64{65535, 65535, 65535}}, {1 << 33, [3]int64{65535, 65535, 65535}},
		{10, [3]int64{3, 3, 3}}, {27, [3]int64{3, 3, 3}}, {100, [3]int64{4, 4, 4}}, {7, [3]int64{0, 0, 0}},
	}
	for _, c := range cases {
		g := FoldGroups(c.g, c.limits)
		total := g[0] * g[1] * g[2]
		capacity := int64(1)
		for i := range g {
			lim := c.limits[i]
			if lim == 0 {
				lim = 65535
			}
			require.GreaterOrEqual(t, g[i], int64(1), "FoldGroups(%d, %v) = %v: dim %d outside [1, %d]", c.g, c.limits, g, i, lim)
			require.LessOrEqual(t, g[i], lim, "FoldGroups(%d, %v) = %v: dim %d outside [1, %d]", c.g, c.limits, g, i, lim)
			capacity *= lim
		}
		require.GreaterOrEqual(t, total, min(c.g, capacity), "FoldGroups(%d, %v) = %v: too few groups", c.g, c.limits, g)
	}
}

func TestPlanElementwise(t *testing.T) {
	gpu := Caps{Backend: Vulkan, Type: TypeDiscreteGPU, ComputeUnits: 132, MaxWorkGroupSize: 1024,
		MaxWorkGroupCount: [3]int64{2147483647, 65535, 65535}}
	cpu := Caps{Backend: OpenCL, Type: TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 4096,
		MaxWorkGroupCount: [3]int64{1 << 31, 1 << 31, 1 << 31}}
	small := Caps{Backend: Vulkan, Type: TypeDiscreteGPU, ComputeUnits: 1 << 20, MaxWorkGroupSize: 64,
		MaxWorkGroupCount: [3]int64{5, 5, 5}}
	for _, c := range []Caps{gpu, cpu, small} {
		for _, n := range []int64{0, 1, 1000, 1 << 20, 1 << 40} {
			p := PlanElementwise("k", c, n)
			require.NoError(t, p.Validate(c), "%v", p)
			require.GreaterOrEqual(t, p.Tiles*p.TileElems, n, "%v does not cover %d elements", p, n)
			require.Contains(t, p.String(), "groups=", "plan prints as %q", p.String())
		}
	}
	p := PlanElementwise("k", cpu, 1<<20)
	require.Equal(t, "CONTIG", p.Knobs[1].Name, "cpu opencl plan %v", p)
	require.Equal(t, int64(1), p.Knobs[1].Value, "cpu opencl plan %v: want CONTIG=1", p)
	p = PlanElementwise("k", gpu, 1<<20)
	require.Equal(t, "CONTIG", p.Knobs[1].Name, "gpu plan %v", p)
	require.Equal(t, int64(0), p.Knobs[1].Value, "gpu plan %v: want CONTIG=0", p)
}

func TestSelect(t *testing.T) {
	all := []Caps{
		{Backend: OpenCL, Index: 0, Name: "pthread-cpu", Platform: "Portable Computing Language", Type: TypeCPU},
		{Backend: Vulkan, Index: 0, Name: "llvmpipe (LLVM 15)", Type: TypeCPU},
		{Backend: Vulkan, Index: 1, Name: "NVIDIA H100", Vendor: "NVIDIA", Type: TypeDiscreteGPU},
		{Backend: OpenCL, Index: 1, Name: "old thing", Type: TypeDiscreteGPU, Unusable: "no compiler"},
	}
	for sel, want := range map[string]string{
		"": "vulkan:1", "opencl": "opencl:0", "vulkan": "vulkan:1", "vulkan:0": "vulkan:0",
		"vulkan:llvmpipe": "vulkan:0", "opencl:portable": "opencl:0", "nvidia": "vulkan:1", "VULKAN:NVIDIA": "vulkan:1",
	} {
		c, err := Select(all, sel)
		if assert.NoError(t, err, "Select(%q)", sel) {
			assert.Equal(t, want, c.ID(), "Select(%q)", sel)
		}
	}
	for sel, want := range map[string]error{
		"cuda:0": ErrNoDevice, "opencl:7": ErrNoDevice, "vulkan:amd": ErrNoDevice,
		"opencl:1": ErrUnsupported, // matches only an unusable device
	} {
		_, err := Select(all, sel)
		assert.ErrorIs(t, err, want, "Select(%q)", sel)
	}
}

func TestPlanScatter(t *testing.T) {
	cpu := Caps{Backend: OpenCL, Type: TypeCPU, ComputeUnits: 2, GlobalMemBytes: 8 << 30, MaxAllocBytes: 2 << 30,
		MaxWorkGroupCount: [3]int64{1 << 31, 65535, 65535}, Int64Atomics: true}
	lavapipe := cpu
	lavapipe.Backend, lavapipe.LoopLimit = Vulkan, 65535
	gpu := Caps{Backend: Vulkan, Type: TypeDiscreteGPU, ComputeUnits: 132, GlobalMemBytes: 80 << 30, Int64Atomics: true}
	noI64 := gpu
	noI64.Int64Atomics = false
	for _, c := range []struct {
		name       string
		caps       Caps
		n, targets int64
		elem       int
		det        bool
		want       string
		workers    int64
	}{
		{"cpu 16M into 1M", cpu, 16 << 20, 1 << 20, 4, false, ScatterPrivate, 2},
		{"cpu 16M into 16", cpu, 16 << 20, 16, 4, false, ScatterFew, 2},
		{"cpu 16M into 16 (8 bytes)", cpu, 16 << 20, 16, 8, false, ScatterFew, 2},
		{"cpu 16M into 17", cpu, 16 << 20, 17, 4, false, ScatterPrivate, 2},
		{"cpu det", cpu, 16 << 20, 1 << 20, 4, true, ScatterOwned, 2},
		{"cpu det, one target", cpu, 100, 1, 8, true, ScatterOwned, 1},
		{"cpu: copies far larger than the work", cpu, 10, 1 << 30, 4, false, ScatterOwned, 2},
		{"cpu: copies over the memory budget", cpu, 1 << 30, 1 << 30, 8, false, ScatterOwned, 2},
		{"lavapipe (loop limit)", lavapipe, 16 << 20, 1 << 20, 4, false, ScatterAtomic, 0},
		{"lavapipe det", lavapipe, 16 << 20, 1 << 20, 4, true, ScatterSorted, 0},
		{"lavapipe 16M into 16", lavapipe, 16 << 20, 16, 4, false, ScatterFew, 145 * 64},
		{"lavapipe 16M into 5 (8 bytes)", lavapipe, 16 << 20, 5, 8, false, ScatterFew, 81 * 64},
		{"lavapipe 10 into 16", lavapipe, 10, 16, 4, false, ScatterFew, 64},
		{"lavapipe 16M into 17", lavapipe, 16 << 20, 17, 4, false, ScatterAtomic, 0},
		{"lavapipe 16M into 16 det", lavapipe, 16 << 20, 16, 4, true, ScatterSorted, 0},
		{"lavapipe 1G into 16: too many workers for the merge", lavapipe, 1 << 30, 16, 4, false, ScatterAtomic, 0},
		{"gpu", gpu, 16 << 20, 1 << 20, 4, false, ScatterAtomic, 0},
		{"gpu det", gpu, 16 << 20, 1 << 20, 8, true, ScatterSorted, 0},
		{"gpu without 64-bit atomics", noI64, 16 << 20, 1 << 20, 8, false, ScatterSorted, 0},
		{"gpu without 64-bit atomics, 4-byte", noI64, 16 << 20, 1 << 20, 4, false, ScatterAtomic, 0},
	} {
		sp := PlanScatter(c.caps, c.n, c.targets, c.elem, c.det)
		if !assert.Equal(t, c.want, sp.Strategy, "%s: strategy (%s)", c.name, sp) {
			continue
		}
		assert.Equal(t, c.workers, sp.Plan.TotalGroups()*int64(sp.Plan.LocalSize), "%s: work-items (%s)", c.name, sp)
		if c.workers > 0 {
			assert.NoError(t, sp.Plan.Validate(c.caps), c.name)
		}
		if lc := int64(c.caps.LoopLimit) / 2; lc > 0 && sp.Strategy == ScatterFew {
			// a worker's positions, each testing every target, and the
			// merge's loop over the workers stay under half the limit
			workers := sp.Plan.TotalGroups() * int64(sp.Plan.LocalSize)
			chunk := (c.n + workers - 1) / workers
			assert.LessOrEqual(t, chunk*(FewTargets(c.targets)+2), lc, "%s: a worker's iterations", c.name)
			assert.LessOrEqual(t, workers, lc, "%s: the merge's iterations", c.name)
		}
		assert.NotEmpty(t, sp.String(), "%s: no reason printed", c.name)
		assert.NotEmpty(t, sp.Reason, "%s: no reason printed", c.name)
	}
}

// PlanHash: no budget without a loop limit; under one, a work-item's loops
// (its subgroup's lanes' probes added up, plus the tile and item loops) stay
// under half the limit.
func TestPlanHash(t *testing.T) {
	for _, c := range []Caps{
		{Backend: OpenCL, Type: TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 4096},
		{Backend: Vulkan, Type: TypeDiscreteGPU, ComputeUnits: 132, MaxWorkGroupSize: 1024, MaxWorkGroupCount: [3]int64{2147483647, 65535, 65535}},
		{Backend: Vulkan, Type: TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 1024, SubgroupSize: 8, LoopLimit: 65535},
		{Backend: Vulkan, Type: TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 1024, LoopLimit: 65535},
	} {
		for _, n := range []int64{0, 1, 4097, 8 << 20} {
			p, budget := PlanHash(c, n)
			require.NoError(t, p.Validate(c))
			items := p.Knob("ITEMS")
			if c.Type != TypeCPU {
				require.LessOrEqual(t, p.TotalGroups(), 8*int64(c.ComputeUnits), "n=%d: %s: more than 8 groups per compute unit", n, p)
			}
			if c.LoopLimit == 0 {
				require.Zero(t, budget, "%s %s: budget without a loop limit", c.Backend, c.Type)
				continue
			}
			require.GreaterOrEqual(t, p.TotalGroups()*int64(p.LocalSize)*items, n, "n=%d: %s: fewer work-items than tiles under a loop limit", n, p)
			lanes := int64(c.SubgroupSize)
			if lanes == 0 {
				lanes = 16
			}
			require.GreaterOrEqual(t, budget, int64(1), "%s n=%d: budget", p, n)
			require.LessOrEqual(t, budget*lanes+2*items, c.LoopLimit/2,
				"%s n=%d: budget %d x %d lanes + %d items exceeds half the loop limit %d", p, n, budget, lanes, items, c.LoopLimit)
		}
	}
}

// TestPlanRadixTiled: GPUs get the tiled passes (4-bit digits, 256 lanes
// x 4 keys where local memory allows, one group per tile); a small local
// memory shrinks the tile until the scratch fits; CPU plans keep the
// per-item chunks (RADIX_KPT 0).
func TestPlanRadixTiled(t *testing.T) {
	gpu := Caps{Backend: Vulkan, Type: TypeDiscreteGPU, ComputeUnits: 132, MaxWorkGroupSize: 1024, LocalMemBytes: 48 << 10,
		MaxWorkGroupCount: [3]int64{1<<31 - 1, 65535, 65535}}
	small := gpu
	small.LocalMemBytes = 4 << 10
	pocl := Caps{Backend: OpenCL, Type: TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 4096, LocalMemBytes: 512 << 10}
	for _, c := range []struct {
		name      string
		caps      Caps
		local     int
		kpt, bits int64
	}{
		{"gpu", gpu, 256, 4, 4},
		{"gpu, 4 KiB of local memory", small, 64, 1, 4},
		{"pocl", pocl, 64, 0, 8},
	} {
		for _, n := range []int64{1, 1000, 1 << 24} {
			p := PlanRadix(c.caps, n)
			require.NoError(t, p.Validate(c.caps), "%s: %v", c.name, p)
			assert.Equal(t, c.kpt, p.Knob("RADIX_KPT"), "%s: %v: keys per lane", c.name, p)
			assert.Equal(t, c.bits, p.Knob("RADIX_BITS"), "%s: %v: digit bits", c.name, p)
			assert.Equal(t, c.local, p.LocalSize, "%s: %v: local size", c.name, p)
			if c.kpt > 0 {
				assert.LessOrEqual(t, RadixTiledScratchBytes(p), c.caps.LocalMemBytes, "%s: %v: scratch", c.name, p)
				assert.Equal(t, (n+p.TileElems-1)/p.TileElems, p.Tiles, "%s: %v: tiles", c.name, p)
				assert.GreaterOrEqual(t, p.TotalGroups(), p.Tiles, "%s: %v: a group per tile", c.name, p)
			}
		}
	}
}

func TestPlanScan(t *testing.T) {
	pocl := Caps{Backend: OpenCL, Type: TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 4096, LocalMemBytes: 4 << 20}
	lavapipe := Caps{Backend: Vulkan, Type: TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 1024, LocalMemBytes: 32 << 10,
		SubgroupSize: 8, SubgroupArith: true, SubgroupFixed: true, LoopLimit: 65535, MaxWorkGroupCount: [3]int64{65535, 65535, 65535}}
	loose := lavapipe
	loose.SubgroupFixed = false
	gpu := Caps{Backend: Vulkan, Type: TypeDiscreteGPU, ComputeUnits: 64, MaxWorkGroupSize: 1024, LocalMemBytes: 48 << 10,
		SubgroupSize: 32, SubgroupArith: true}
	tiny := gpu
	tiny.MaxWorkGroupSize = 16 // smaller than a subgroup
	for _, c := range []struct {
		name      string
		caps      Caps
		n, elem   int64
		sub       bool
		local     int
		sg, items int64
		unit      int64 // elements per unit
	}{
		{"pocl", pocl, 64 << 20, 4, false, 1, 0, 65536, 1},
		{"pocl int64", pocl, 1 << 20, 8, false, 1, 0, 32768, 1},
		{"lavapipe int32", lavapipe, 64 << 20, 4, true, 8, 2, 1024, 2},
		{"lavapipe int64", lavapipe, 64 << 20, 8, true, 8, 2, 1024, 1},
		{"lavapipe, no subgroup variant", lavapipe, 64 << 20, 8, false, 8, 0, 2048, 1},
		{"cpu, subgroup size not fixed", loose, 1 << 20, 4, true, 8, 1, 1024, 2},
		{"gpu", gpu, 64 << 20, 4, true, 256, 1, 8, 2},
		{"gpu, no subgroup variant", gpu, 64 << 20, 8, false, 256, 0, 8, 1},
		{"gpu, groups smaller than a subgroup", tiny, 1000, 4, true, 16, 0, 8, 1},
		{"one element", lavapipe, 1, 4, true, 8, 2, 1024, 2},
	} {
		p := PlanScan(c.caps, c.n, c.elem, c.sub)
		chain := c.caps.Backend == OpenCL && c.caps.Type == TypeCPU
		assert.Equal(t, b2i(chain), p.Knob("CHAIN"), "%s: %s: the chained scan on CPU OpenCL drivers only", c.name, p)
		if chain {
			// one work-item per core; non-temporal stores from 16 MiB of output
			assert.Equal(t, min(int64(c.caps.ComputeUnits), p.Tiles), p.TotalGroups(), "%s: %s: groups", c.name, p)
			assert.Equal(t, b2i(c.n*c.elem >= StreamMinBytes), p.Knob("STREAM"), "%s: %s: STREAM", c.name, p)
		}
		assert.Equal(t, c.local, p.LocalSize, "%s: %s: local size", c.name, p)
		assert.Equal(t, c.sg, p.Knob("SCAN_SG"), "%s: %s: SCAN_SG", c.name, p)
		assert.Equal(t, c.items, p.Knob("ITEMS"), "%s: %s: ITEMS", c.name, p)
		assert.Equal(t, int64(c.local)*c.items*c.unit, p.TileElems, "%s: elements per tile", c.name)
		g := p.TotalGroups()
		assert.GreaterOrEqual(t, g, int64(1), "%s: %d groups for %d tiles", c.name, g, p.Tiles)
		assert.LessOrEqual(t, g, max(p.Tiles, 1), "%s: %d groups for %d tiles", c.name, g, p.Tiles)
		if c.caps.LoopLimit > 0 {
			// each invocation's loops stay under the limit: tiles per
			// group times the iterations per tile, and the partials loop
			perGroup := (p.Tiles + p.TotalGroups() - 1) / p.TotalGroups()
			perTile := 2*c.items + 2*int64(bits.Len(uint(c.local))) + 2 // rows, scratch scan
			if c.sg != 0 {
				perTile = 2*c.items + int64(c.local) + 2 // rows, subgroup sums
			}
			assert.LessOrEqual(t, perGroup*perTile, c.caps.LoopLimit/2, "%s: iterations per invocation over the loop limit", c.name)
			assert.LessOrEqual(t, p.TotalGroups(), c.caps.LoopLimit/2, "%s: groups over the loop limit", c.name)
		}
	}
}

// TestFoldArgs folds an entry's foldable arguments into knobs only where
// the driver wants them (Caps.FoldArgs): a knob the plan already has keeps
// the plan's value, arguments without a Fold knob and negative (run-time)
// values stay arguments, and the input plan is left alone. The entry is a
// declaration of the test's own: FoldArgs reads only its arguments' Fold
// names.
func TestFoldArgs(t *testing.T) {
	f := (&FileDecl{Name: "fold_test", Entries: []*EntryDecl{{Name: "e", Args: []ArgDecl{
		{Name: "dst", Kind: ArgBuf, Access: Out},
		{Name: "a", Kind: ArgI64, Fold: "A"},
		{Name: "b", Kind: ArgI64, Fold: "B"},
		{Name: "c", Kind: ArgI64}, // not foldable
		{Name: "z", Kind: ArgI64, Fold: "Z"},
		{Name: "neg", Kind: ArgI64, Fold: "NEG"},
	}}}}).Init()
	e := f.Entries[0]
	knobs := make([]Knob, 1, 8) // room to append: FoldArgs must copy, not append in place
	knobs[0] = Knob{Name: "A", Value: 2}
	p := Plan{Kernel: "k", Knobs: knobs}
	args := []Arg{BufArg(nil), I64(5), I64(1), I64(9), I64(0), I64(-1)}

	got := FoldArgs(Caps{}, p, e, args)
	assert.Equal(t, p, got, "no FoldArgs: the plan unchanged, its knobs alone")

	got = FoldArgs(Caps{FoldArgs: true}, p, e, args)
	assert.Equal(t, []Knob{{Name: "A", Value: 2}, {Name: "B", Value: 1}, {Name: "Z", Value: 0}}, got.Knobs,
		"FoldArgs: A=2 (the plan's), B=1 and Z=0 folded; c (no knob) and neg (run-time) not")
	assert.Equal(t, int64(2), got.Knob("A"), "the plan's value of A")
	got.Knobs[0].Value = 99
	assert.Equal(t, []Knob{{Name: "A", Value: 2}}, p.Knobs, "FoldArgs changed its input plan")
	assert.Equal(t, Knob{}, knobs[:2][1], "FoldArgs wrote into its input plan's spare capacity")

	// nothing to fold: the plan as it was
	got = FoldArgs(Caps{FoldArgs: true}, p, e, args[:2])
	assert.Equal(t, p, got, "FoldArgs with only an argument the plan already folds")
	assert.Equal(t, Plan{Kernel: "k"}, FoldArgs(Caps{FoldArgs: true}, Plan{Kernel: "k"}, e, []Arg{BufArg(nil), I64(-1)}),
		"FoldArgs with only a run-time value")
}

// TestPlanCopyDiag: the copy kernel is chosen on CPU OpenCL devices only,
// with one group per core; under a loop limit each group takes one chunk;
// the diag plan on CPU OpenCL runs one work-item per group with a fixed
// ITEMS (one compiled variant for every size). Every plan covers its
// elements and fits the device.
func TestPlanCopyDiag(t *testing.T) {
	pocl := Caps{Backend: OpenCL, Type: TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 4096,
		MaxWorkGroupCount: [3]int64{1 << 31, 1 << 31, 1 << 31}}
	lvp := Caps{Backend: Vulkan, Type: TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 1024, LoopLimit: 65535,
		MaxWorkGroupCount: [3]int64{65535, 65535, 65535}}
	gpu := Caps{Backend: Vulkan, Type: TypeDiscreteGPU, ComputeUnits: 132, MaxWorkGroupSize: 1024,
		MaxWorkGroupCount: [3]int64{2147483647, 65535, 65535}}
	for _, c := range []Caps{pocl, lvp, gpu} {
		for _, n := range []int64{0, 1, 16<<10 + 1, 1 << 26, 1 << 36} {
			p, ours := PlanCopy(c, n)
			require.Equal(t, c.Backend == OpenCL && c.Type == TypeCPU, ours, "%v: copy kernel chosen", c.Backend)
			require.NoError(t, p.Validate(c), "%v", p)
			require.GreaterOrEqual(t, p.Tiles*p.TileElems, n, "%v does not cover %d words", p, n)
			require.LessOrEqual(t, p.Knob("ITEMS"), loopCap(c), "%v: a chunk's loop", p)
			if c.LoopLimit > 0 && n <= 1<<26 {
				require.GreaterOrEqual(t, p.TotalGroups(), p.Tiles, "%v: one chunk per group under a loop limit", p)
			}
			d := PlanDiag(c, n)
			require.NoError(t, d.Validate(c), "%v", d)
			require.GreaterOrEqual(t, d.Tiles*d.TileElems, n, "%v does not cover %d elements", d, n)
		}
	}
	p, _ := PlanCopy(pocl, 1<<26)
	assert.Equal(t, int64(2), p.TotalGroups(), "one group per core: %v", p)
	assert.Equal(t, 1, p.LocalSize, "one work-item per group: %v", p)
	d1, d2 := PlanDiag(pocl, 4096), PlanDiag(pocl, 1<<20)
	assert.Equal(t, d1.Knob("ITEMS"), d2.Knob("ITEMS"), "one ITEMS for every size")
	assert.Equal(t, 1, d1.LocalSize, "%v", d1)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// PlanElementwiseWrite streams large outputs on CPU drivers only;
// PlanScatterMerge takes one output per work-item under a loop limit.
func TestPlanElementwiseWriteAndMerge(t *testing.T) {
	cpu := Caps{Backend: OpenCL, Type: TypeCPU, ComputeUnits: 2}
	lavapipe := Caps{Backend: Vulkan, Type: TypeCPU, ComputeUnits: 2, LoopLimit: 65535}
	gpu := Caps{Backend: Vulkan, Type: TypeDiscreteGPU, ComputeUnits: 132}
	for _, c := range []struct {
		name   string
		caps   Caps
		bytes  int64
		stream int64
	}{
		{"cpu, large", cpu, StreamMinBytes, 1},
		{"cpu, small", cpu, StreamMinBytes - 1, 0},
		{"lavapipe, large", lavapipe, StreamMinBytes, 1},
		{"gpu, large", gpu, StreamMinBytes, 0},
	} {
		p := PlanElementwiseWrite("k", c.caps, 1<<20, c.bytes)
		assert.Equal(t, c.stream, p.Knob("STREAM"), c.name)
		assert.Equal(t, PlanElementwise("k", c.caps, 1<<20).TileElems, p.TileElems, c.name)
	}
	for _, c := range []Caps{cpu, lavapipe, gpu} {
		for _, n := range []int64{1, 16, 1000} {
			p := PlanScatterMerge("k", c, n)
			assert.NoError(t, p.Validate(c))
			assert.GreaterOrEqual(t, p.Tiles*p.TileElems, n, "%+v: %d outputs", c, n)
			if c.LoopLimit > 0 {
				assert.Equal(t, int64(1), p.Knob("ITEMS"), "%+v: one output per work-item", c)
				assert.Equal(t, int64(p.LocalSize), p.TileElems)
			} else {
				assert.Equal(t, PlanElementwise("k", c, n), p)
			}
		}
	}
}
