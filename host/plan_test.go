package host

import (
	"math/bits"
	"strings"
	"testing"
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
			if g[i] < 1 || g[i] > lim {
				t.Fatalf("FoldGroups(%d, %v) = %v: dim %d outside [1, %d]", c.g, c.limits, g, i, lim)
			}
			capacity *= lim
		}
		if total < min(c.g, capacity) {
			t.Fatalf("FoldGroups(%d, %v) = %v: %d groups < %d", c.g, c.limits, g, total, min(c.g, capacity))
		}
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
			if err := p.Validate(c); err != nil {
				t.Fatalf("%v: %v", p, err)
			}
			if p.Tiles*p.TileElems < n {
				t.Fatalf("%v does not cover %d elements", p, n)
			}
			if !strings.Contains(p.String(), "groups=") {
				t.Fatalf("plan prints as %q", p.String())
			}
		}
	}
	if p := PlanElementwise("k", cpu, 1<<20); p.Knobs[1].Value != 1 {
		t.Fatalf("cpu opencl plan %v: want CONTIG=1", p)
	}
	if p := PlanElementwise("k", gpu, 1<<20); p.Knobs[1].Value != 0 {
		t.Fatalf("gpu plan %v: want CONTIG=0", p)
	}
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
		if err != nil || c.ID() != want {
			t.Errorf("Select(%q) = %s, %v; want %s", sel, c.ID(), err, want)
		}
	}
	for _, sel := range []string{"cuda:0", "opencl:7", "vulkan:amd", "opencl:1"} {
		if _, err := Select(all, sel); err == nil {
			t.Errorf("Select(%q): no error", sel)
		}
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
		{"cpu 16M into 16", cpu, 16 << 20, 16, 4, false, ScatterPrivate, 2},
		{"cpu det", cpu, 16 << 20, 1 << 20, 4, true, ScatterOwned, 2},
		{"cpu det, one target", cpu, 100, 1, 8, true, ScatterOwned, 1},
		{"cpu: copies far larger than the work", cpu, 10, 1 << 30, 4, false, ScatterOwned, 2},
		{"cpu: copies over the memory budget", cpu, 1 << 30, 1 << 30, 8, false, ScatterOwned, 2},
		{"lavapipe (loop limit)", lavapipe, 16 << 20, 1 << 20, 4, false, ScatterAtomic, 0},
		{"lavapipe det", lavapipe, 16 << 20, 1 << 20, 4, true, ScatterSorted, 0},
		{"gpu", gpu, 16 << 20, 1 << 20, 4, false, ScatterAtomic, 0},
		{"gpu det", gpu, 16 << 20, 1 << 20, 8, true, ScatterSorted, 0},
		{"gpu without 64-bit atomics", noI64, 16 << 20, 1 << 20, 8, false, ScatterSorted, 0},
		{"gpu without 64-bit atomics, 4-byte", noI64, 16 << 20, 1 << 20, 4, false, ScatterAtomic, 0},
	} {
		sp := PlanScatter(c.caps, c.n, c.targets, c.elem, c.det)
		if sp.Strategy != c.want {
			t.Errorf("%s: strategy %s, want %s (%s)", c.name, sp.Strategy, c.want, sp)
			continue
		}
		if got := sp.Plan.TotalGroups() * int64(sp.Plan.LocalSize); got != c.workers {
			t.Errorf("%s: %d work-items, want %d (%s)", c.name, got, c.workers, sp)
		}
		if c.workers > 0 {
			if err := sp.Plan.Validate(c.caps); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		}
		if sp.String() == "" || sp.Reason == "" {
			t.Errorf("%s: no reason printed", c.name)
		}
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
			if err := p.Validate(c); err != nil {
				t.Fatal(err)
			}
			items := int64(0)
			for _, k := range p.Knobs {
				if k.Name == "ITEMS" {
					items = k.Value
				}
			}
			if c.Type != TypeCPU && p.TotalGroups() > 8*int64(c.ComputeUnits) {
				t.Fatalf("n=%d: %s: more than 8 groups per compute unit", n, p)
			}
			if c.LoopLimit == 0 {
				if budget != 0 {
					t.Fatalf("%s %s: budget %d without a loop limit", c.Backend, c.Type, budget)
				}
				continue
			}
			if p.TotalGroups()*int64(p.LocalSize)*items < n {
				t.Fatalf("n=%d: %s: fewer work-items than tiles under a loop limit", n, p)
			}
			lanes := int64(c.SubgroupSize)
			if lanes == 0 {
				lanes = 16
			}
			if budget < 1 || budget*lanes+2*items > c.LoopLimit/2 {
				t.Fatalf("%s n=%d: budget %d x %d lanes + %d items exceeds half the loop limit %d", p, n, budget, lanes, items, c.LoopLimit)
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
		{"pocl", pocl, 64 << 20, 4, false, 1, 0, 4096, 1},
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
		if p.LocalSize != c.local || p.Knob("SCAN_SG") != c.sg || p.Knob("ITEMS") != c.items {
			t.Errorf("%s: %s; want local %d, SCAN_SG %d, ITEMS %d", c.name, p, c.local, c.sg, c.items)
		}
		if p.TileElems != int64(c.local)*c.items*c.unit {
			t.Errorf("%s: tile of %d elements, want %d", c.name, p.TileElems, int64(c.local)*c.items*c.unit)
		}
		if g := p.TotalGroups(); g < 1 || g > max(p.Tiles, 1) {
			t.Errorf("%s: %d groups for %d tiles", c.name, g, p.Tiles)
		}
		if c.caps.LoopLimit > 0 {
			// each invocation's loops stay under the limit: tiles per
			// group times the iterations per tile, and the partials loop
			perGroup := (p.Tiles + p.TotalGroups() - 1) / p.TotalGroups()
			perTile := 2*c.items + 2*int64(bits.Len(uint(c.local))) + 2 // rows, scratch scan
			if c.sg != 0 {
				perTile = 2*c.items + int64(c.local) + 2 // rows, subgroup sums
			}
			if it := perGroup * perTile; it > c.caps.LoopLimit/2 || p.TotalGroups() > c.caps.LoopLimit/2 {
				t.Errorf("%s: %d iterations per invocation, %d groups: over the loop limit", c.name, it, p.TotalGroups())
			}
		}
	}
}

func TestFold(t *testing.T) {
	p := Plan{Kernel: "k", Knobs: []Knob{{Name: "A", ID: 1, Value: 2}}}
	args := []Knob{{Name: "A", ID: 1, Value: 5}, {Name: "B", ID: 2, Value: 1}}
	if got := Fold(Caps{}, p, args...); len(got.Knobs) != 1 {
		t.Errorf("no FoldArgs: knobs %v, want the plan's alone", got.Knobs)
	}
	got := Fold(Caps{FoldArgs: true}, p, args...)
	if len(got.Knobs) != 2 || got.Knob("A") != 2 || got.Knob("B") != 1 {
		t.Errorf("FoldArgs: knobs %v, want A=2 (the plan's) and B=1", got.Knobs)
	}
	if len(p.Knobs) != 1 {
		t.Errorf("Fold changed its input plan: %v", p.Knobs)
	}
}
