package accel

import (
	"fmt"
	"math/bits"
	"strings"
	"testing"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanScatter(t *testing.T) {
	cpu := host.Caps{Backend: host.OpenCL, Type: host.TypeCPU, ComputeUnits: 2, GlobalMemBytes: 8 << 30, MaxAllocBytes: 2 << 30,
		MaxWorkGroupCount: [3]int64{1 << 31, 65535, 65535}, Int64Atomics: true}
	lavapipe := cpu
	lavapipe.Backend, lavapipe.LoopLimit = host.Vulkan, 65535
	gpu := host.Caps{Backend: host.Vulkan, Type: host.TypeDiscreteGPU, ComputeUnits: 132, GlobalMemBytes: 80 << 30, Int64Atomics: true}
	noI64 := gpu
	noI64.Int64Atomics = false
	for _, c := range []struct {
		name       string
		caps       host.Caps
		n, targets int64
		elem       int
		det        bool
		want       scatterPath
		workers    int64
	}{
		{"cpu 16M into 1M", cpu, 16 << 20, 1 << 20, 4, false, scatterPrivate, 2},
		{"cpu 16M into 16", cpu, 16 << 20, 16, 4, false, scatterFew, 2},
		{"cpu 16M into 16 (8 bytes)", cpu, 16 << 20, 16, 8, false, scatterFew, 2},
		{"cpu 16M into 17", cpu, 16 << 20, 17, 4, false, scatterPrivate, 2},
		{"cpu det", cpu, 16 << 20, 1 << 20, 4, true, scatterBucket, 2},
		{"cpu det, an output in a core's cache", cpu, 16 << 20, 1 << 16, 4, true, scatterOwned, 2},
		{"cpu det, few positions", cpu, 1 << 17, 1 << 20, 4, true, scatterOwned, 2},
		{"cpu det, one target", cpu, 100, 1, 8, true, scatterOwned, 1},
		{"cpu: copies far larger than the work", cpu, 10, 1 << 30, 4, false, scatterOwned, 2},
		{"cpu: copies over the memory budget", cpu, 1 << 30, 1 << 30, 8, false, scatterOwned, 2},
		{"lavapipe (loop limit)", lavapipe, 16 << 20, 1 << 20, 4, false, scatterAtomic, 0},
		{"lavapipe det", lavapipe, 16 << 20, 1 << 20, 4, true, scatterSorted, 0},
		{"lavapipe 16M into 16", lavapipe, 16 << 20, 16, 4, false, scatterFew, 145 * 64},
		{"lavapipe 16M into 5 (8 bytes)", lavapipe, 16 << 20, 5, 8, false, scatterFew, 81 * 64},
		{"lavapipe 10 into 16", lavapipe, 10, 16, 4, false, scatterFew, 64},
		{"lavapipe 16M into 17", lavapipe, 16 << 20, 17, 4, false, scatterAtomic, 0},
		{"lavapipe 16M into 16 det", lavapipe, 16 << 20, 16, 4, true, scatterSorted, 0},
		{"lavapipe 1G into 16: too many workers for the merge", lavapipe, 1 << 30, 16, 4, false, scatterAtomic, 0},
		{"gpu", gpu, 16 << 20, 1 << 20, 4, false, scatterAtomic, 0},
		{"gpu det", gpu, 16 << 20, 1 << 20, 8, true, scatterSorted, 0},
		{"gpu without 64-bit atomics", noI64, 16 << 20, 1 << 20, 8, false, scatterSorted, 0},
		{"gpu without 64-bit atomics, 4-byte", noI64, 16 << 20, 1 << 20, 4, false, scatterAtomic, 0},
	} {
		sp := chooseScatter(c.caps, scatterShape{n: c.n, targets: c.targets, elemBytes: c.elem, red: Sum, includeSelf: true, det: c.det, flat: true})
		if !assert.Equal(t, c.want, sp.Path, "%s: strategy (%s)", c.name, sp) {
			continue
		}
		assert.Equal(t, c.workers, sp.Pass.TotalGroups()*int64(sp.Pass.LocalSize), "%s: work-items (%s)", c.name, sp)
		if c.workers > 0 {
			assert.NoError(t, sp.Pass.Validate(c.caps), c.name)
		}
		if lc := int64(c.caps.LoopLimit) / 2; lc > 0 && sp.Path == scatterFew {
			// a worker's positions, each testing every target, and the
			// merge's loop over the workers stay under half the limit
			workers := sp.Pass.TotalGroups() * int64(sp.Pass.LocalSize)
			chunk := (c.n + workers - 1) / workers
			assert.LessOrEqual(t, chunk*(fewTargets(c.targets)+2), lc, "%s: a worker's iterations", c.name)
			assert.LessOrEqual(t, workers, lc, "%s: the merge's iterations", c.name)
		}
		assert.NotEmpty(t, sp.String(), "%s: no reason printed", c.name)
		assert.NotEmpty(t, sp.Reason, "%s: no reason printed", c.name)
	}
}

// planHash: no budget without a loop limit; under one, a work-item's loops
// (its subgroup's lanes' probes added up, plus the tile and item loops) stay
// under half the limit.
func TestPlanHash(t *testing.T) {
	for _, c := range []host.Caps{
		{Backend: host.OpenCL, Type: host.TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 4096},
		{Backend: host.Vulkan, Type: host.TypeDiscreteGPU, ComputeUnits: 132, MaxWorkGroupSize: 1024, MaxWorkGroupCount: [3]int64{2147483647, 65535, 65535}},
		{Backend: host.Vulkan, Type: host.TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 1024, SubgroupSize: 8, LoopLimit: 65535},
		{Backend: host.Vulkan, Type: host.TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 1024, LoopLimit: 65535},
	} {
		for _, n := range []int64{0, 1, 4097, 8 << 20} {
			p, budget := planHash(c, n)
			require.NoError(t, p.Validate(c))
			items := host.KnobItems.Of(p)
			if c.Type != host.TypeCPU {
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

// TestPlanRadixTiled: GPUs get the tiled passes (8-bit digits; 256 lanes
// x 8 keys where local memory allows, 512 x 4 on Vulkan where that
// scratch fits the keys' width; one group per tile); a small local memory
// shrinks the tile until the scratch fits; entries below 2^32 take one
// scratch word (RADIX_EW) and the lanes then up to twice the keys that
// still fit; CPU plans keep the per-item chunks (RADIX_KPT 0). Devices
// with subgroup ballots (Vulkan's, NVIDIA OpenCL's warp votes) rank by
// subgroups (RADIX_SGS: the group's subgroups, whose counters the scratch
// holds).
func TestPlanRadixTiled(t *testing.T) {
	gpu := host.Caps{Backend: host.Vulkan, Type: host.TypeDiscreteGPU, ComputeUnits: 132, MaxWorkGroupSize: 1024, LocalMemBytes: 48 << 10,
		MaxWorkGroupCount: [3]int64{1<<31 - 1, 65535, 65535}}
	ocl := gpu
	ocl.Backend = host.OpenCL
	ballot := gpu
	ballot.SubgroupSize, ballot.SubgroupBallot = 32, true
	oclBallot := ballot // NVIDIA's OpenCL, its warp votes: no SG build there
	oclBallot.Backend = host.OpenCL
	wave64 := ballot
	wave64.SubgroupSize = 64
	small := gpu
	small.LocalMemBytes = 4 << 10
	mid := gpu
	mid.LocalMemBytes = 32 << 10
	pocl := host.Caps{Backend: host.OpenCL, Type: host.TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 4096, LocalMemBytes: 512 << 10}
	lavapipe := host.Caps{Backend: host.Vulkan, Type: host.TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 1024, LocalMemBytes: 32 << 10,
		LoopLimit: 65535, MaxWorkGroupCount: [3]int64{65535, 65535, 65535}}
	lavaBallot := lavapipe // lavapipe's caps, for the GPU plans forced on it
	lavaBallot.SubgroupSize, lavaBallot.SubgroupBallot = 8, true
	const wide = int64(1) << 33 // entries past 2^32: two scratch words each
	for _, c := range []struct {
		name           string
		caps           host.Caps
		keyBytes       int
		entries        int64 // the entries' bound; 0: the positions
		local          int
		kpt, bits, sgs int64
	}{
		// entries below 2^32 take a scratch word (RADIX_EW=1), and where
		// ballots rank, the lanes as many more keys as the scratch then
		// holds, up to twice
		{"vulkan gpu", gpu, 4, 0, 512, 4, 8, 0},
		{"vulkan gpu", gpu, 4, wide, 512, 4, 8, 0},
		{"vulkan gpu", gpu, 8, 0, 512, 4, 8, 0},
		{"vulkan gpu", gpu, 8, wide, 256, 8, 8, 0},
		{"vulkan gpu with ballots", ballot, 4, 0, 512, 6, 8, 16},
		{"vulkan gpu with ballots", ballot, 4, wide, 512, 4, 8, 16},
		{"vulkan gpu with ballots", ballot, 8, 0, 512, 4, 8, 16},
		{"vulkan gpu with ballots", ballot, 8, wide, 256, 8, 8, 8},
		{"vulkan gpu with ballots, subgroups of 64", wave64, 4, 0, 512, 6, 8, 8},
		{"vulkan gpu with ballots, subgroups of 64", wave64, 4, wide, 512, 4, 8, 8},
		{"opencl gpu", ocl, 4, 0, 256, 8, 8, 0},
		{"opencl gpu", ocl, 4, wide, 256, 8, 8, 0},
		{"opencl gpu", ocl, 8, 0, 256, 8, 8, 0},
		{"opencl gpu", ocl, 8, wide, 256, 8, 8, 0},
		{"opencl gpu with warp votes", oclBallot, 4, 0, 256, 16, 8, 8},
		{"opencl gpu with warp votes", oclBallot, 4, wide, 256, 8, 8, 8},
		{"opencl gpu with warp votes", oclBallot, 8, 0, 256, 11, 8, 8},
		{"opencl gpu with warp votes", oclBallot, 8, wide, 256, 8, 8, 8},
		{"gpu, 32 KiB of local memory", mid, 4, 0, 256, 8, 8, 0},
		{"gpu, 32 KiB of local memory", mid, 4, wide, 256, 4, 8, 0},
		{"gpu, 32 KiB of local memory", mid, 8, 0, 256, 4, 8, 0},
		{"gpu, 32 KiB of local memory", mid, 8, wide, 256, 4, 8, 0},
		{"gpu, 4 KiB of local memory", small, 4, 0, 32, 1, 8, 0},
		{"gpu, 4 KiB of local memory", small, 4, wide, 32, 1, 8, 0},
		{"gpu, 4 KiB of local memory", small, 8, 0, 32, 1, 8, 0},
		{"gpu, 4 KiB of local memory", small, 8, wide, 32, 1, 8, 0},
		{"pocl", pocl, 8, 0, 64, 0, 8, 0},
		{"lavapipe (8-bit digits: its compiler's time grows fast with more)", lavapipe, 4, 0, 8, 0, 8, 0},
		// forced (ACCEL_TEST_PLANS=gpu): subgroups of 8 take 32 groups'
		// counters, 16 KiB, which the scratch of 256 x 6 tiles still fits
		{"lavapipe, the GPU plan", lavaBallot, 4, 0, 256, 6, 8, 32},
		{"lavapipe, the GPU plan", lavaBallot, 4, wide, 256, 4, 8, 32},
		{"lavapipe, the GPU plan", lavaBallot, 8, 0, 256, 4, 8, 32},
		{"lavapipe, the GPU plan", lavaBallot, 8, wide, 256, 2, 8, 32},
	} {
		for _, n := range []int64{1, 1000, 1 << 24} {
			entries := c.entries
			if entries == 0 {
				entries = n
			}
			p := planRadix(c.caps, n, c.keyBytes, entries)
			if c.caps.Type == host.TypeCPU && c.sgs > 0 {
				p = planRadixTiled(c.caps, n, c.keyBytes, entries)
			}
			name := fmt.Sprintf("%s, %d-byte keys, entries below %d", c.name, c.keyBytes, entries)
			require.NoError(t, p.Validate(c.caps), "%s: %v", name, p)
			assert.Equal(t, c.kpt, host.KnobRadixKpt.Of(p), "%s: %v: keys per lane", name, p)
			assert.Equal(t, c.bits, host.KnobRadixBits.Of(p), "%s: %v: digit bits", name, p)
			assert.Equal(t, c.local, p.LocalSize, "%s: %v: local size", name, p)
			assert.Equal(t, c.sgs, host.KnobRadixSgs.Of(p), "%s: %v: subgroups ranking", name, p)
			if c.kpt > 0 {
				assert.Equal(t, radixEntryWords(entries), host.KnobRadixEw.Of(p), "%s: %v: an entry's scratch words", name, p)
			}
			assert.Equal(t, c.sgs > 0 && c.caps.Backend == host.Vulkan, strings.HasSuffix(string(radixVariant(c.caps, p, c.keyBytes)), "s"),
				"%s: %v: the SG build (Vulkan's)", name, p)
			if c.kpt > 0 {
				assert.LessOrEqual(t, radixTiledScratchBytes(p, c.keyBytes), c.caps.LocalMemBytes, "%s: %v: scratch", name, p)
				assert.Equal(t, (n+p.TileElems-1)/p.TileElems, p.Tiles, "%s: %v: tiles", name, p)
				assert.GreaterOrEqual(t, p.TotalGroups(), p.Tiles, "%s: %v: a group per tile", name, p)
			}
		}
	}
}

// TestFixupPlan: a fixup launch after a chained pass (the sort's sweep,
// the GPUs' chained scan) takes at most eight groups per compute unit,
// and never more than its pass had; the grid stride covers every tile.
func TestFixupPlan(t *testing.T) {
	h100 := host.Caps{Backend: host.OpenCL, Type: host.TypeDiscreteGPU, ComputeUnits: 132, MaxWorkGroupSize: 1024, LocalMemBytes: 48 << 10,
		MaxWorkGroupCount: [3]int64{1<<31 - 1, 65535, 65535}}
	for _, c := range []struct{ tiles, want int64 }{{1, 1}, {100, 100}, {1056, 1056}, {4096, 1056}, {1 << 20, 1056}} {
		p := host.Plan{Kernel: "radix", LocalSize: 256, Groups: host.FoldGroups(c.tiles, h100.MaxWorkGroupCount), Tiles: c.tiles}
		f := fixupPlan(h100, p)
		require.NoError(t, f.Validate(h100))
		assert.Equal(t, c.want, f.TotalGroups(), "%d tiles", c.tiles)
		assert.Equal(t, p.LocalSize, f.LocalSize)
		assert.Equal(t, p.Tiles, f.Tiles)
	}
}

func TestPlanScan(t *testing.T) {
	pocl := host.Caps{Backend: host.OpenCL, Type: host.TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 4096, LocalMemBytes: 4 << 20}
	lavapipe := host.Caps{Backend: host.Vulkan, Type: host.TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 1024, LocalMemBytes: 32 << 10,
		SubgroupSize: 8, SubgroupArith: true, SubgroupFixed: true, LoopLimit: 65535, MaxWorkGroupCount: [3]int64{65535, 65535, 65535}}
	loose := lavapipe
	loose.SubgroupFixed = false
	gpu := host.Caps{Backend: host.Vulkan, Type: host.TypeDiscreteGPU, ComputeUnits: 64, MaxWorkGroupSize: 1024, LocalMemBytes: 48 << 10,
		SubgroupSize: 32, SubgroupArith: true}
	tiny := gpu
	tiny.MaxWorkGroupSize = 16 // smaller than a subgroup
	oclGPU := host.Caps{Backend: host.OpenCL, Type: host.TypeDiscreteGPU, ComputeUnits: 132, MaxWorkGroupSize: 1024, LocalMemBytes: 48 << 10}
	small := oclGPU
	small.LocalMemBytes = 16 << 10
	for _, c := range []struct {
		name      string
		caps      host.Caps
		n, elem   int64
		sub       bool
		local     int
		sg, items int64
		unit      int64 // elements per unit
	}{
		{"pocl", pocl, 64 << 20, 4, false, 1, 0, 65536, 1},
		{"pocl int64", pocl, 1 << 20, 8, false, 1, 0, 32768, 1},
		{"lavapipe int32", lavapipe, 64 << 20, 4, true, 8, 3, 1024, 2},
		{"lavapipe int64", lavapipe, 64 << 20, 8, true, 8, 3, 1024, 1},
		{"lavapipe, no subgroup variant", lavapipe, 64 << 20, 8, false, 8, 0, 2048, 1},
		{"cpu, subgroup size not fixed", loose, 1 << 20, 4, true, 8, 1, 1024, 2},
		// GPUs: reduce-then-scan on subgroups, else the chained scan on
		// tiles as large as 4/5 of the local memory allows
		{"gpu", gpu, 64 << 20, 4, true, 256, 1, 8, 2},
		{"gpu, no subgroup variant", gpu, 64 << 20, 8, false, 256, 0, 16, 1},
		{"gpu, groups smaller than a subgroup", tiny, 1000, 4, true, 16, 0, 8, 1},
		{"opencl gpu", oclGPU, 64 << 20, 4, false, 256, 0, 32, 1},
		{"opencl gpu int64", oclGPU, 64 << 20, 8, false, 256, 0, 16, 1},
		{"opencl gpu, 16 KiB local memory", small, 64 << 20, 4, false, 256, 0, 8, 1},
		{"one element", lavapipe, 1, 4, true, 8, 3, 1024, 2},
	} {
		p := planScan(c.caps, c.n, c.elem, c.sub)
		chain := c.caps.Backend == host.OpenCL && c.caps.Type == host.TypeCPU
		gpuChain := c.caps.Type != host.TypeCPU && !c.sub
		assert.Equal(t, b2i(chain)+2*b2i(gpuChain), host.KnobChain.Of(p), "%s: %s: the chained scans: CPU OpenCL drivers 1, GPUs 2", c.name, p)
		if gpuChain {
			assert.Equal(t, p.Tiles, p.TotalGroups(), "%s: %s: a tile per group", c.name, p)
		}
		if chain {
			// one work-item per core; non-temporal stores from 16 MiB of output
			assert.Equal(t, min(int64(c.caps.ComputeUnits), p.Tiles), p.TotalGroups(), "%s: %s: groups", c.name, p)
			assert.Equal(t, b2i(c.n*c.elem >= host.StreamMinBytes), host.KnobStream.Of(p), "%s: %s: STREAM", c.name, p)
		}
		assert.Equal(t, c.local, p.LocalSize, "%s: %s: local size", c.name, p)
		assert.Equal(t, c.sg, host.KnobScanSg.Of(p), "%s: %s: SCAN_SG", c.name, p)
		assert.Equal(t, c.items, host.KnobItems.Of(p), "%s: %s: ITEMS", c.name, p)
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

// TestPlanCopyDiag: the copy kernel is chosen on CPU OpenCL devices, with
// one group per core (copies of copyKernelMinBytes and more), and on
// Vulkan GPUs, in the elementwise GPU plan (CONTIG 0, lanes of a group on
// consecutive words, at most 32 groups per compute unit), not on OpenCL
// GPUs; under a
// loop limit each group takes one chunk;
// the diag plan on CPU OpenCL runs one work-item per group with a fixed
// ITEMS (one compiled variant for every size). Every plan covers its
// elements and fits the device.
func TestPlanCopyDiag(t *testing.T) {
	pocl := host.Caps{Backend: host.OpenCL, Type: host.TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 4096,
		MaxWorkGroupCount: [3]int64{1 << 31, 1 << 31, 1 << 31}}
	lvp := host.Caps{Backend: host.Vulkan, Type: host.TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 1024, LoopLimit: 65535,
		MaxWorkGroupCount: [3]int64{65535, 65535, 65535}}
	gpu := host.Caps{Backend: host.Vulkan, Type: host.TypeDiscreteGPU, ComputeUnits: 132, MaxWorkGroupSize: 1024,
		MaxWorkGroupCount: [3]int64{2147483647, 65535, 65535}}
	oclGPU := gpu
	oclGPU.Backend = host.OpenCL
	for _, c := range []host.Caps{pocl, lvp, gpu, oclGPU} {
		for _, n := range []int64{0, 1, 16<<10 + 1, copyKernelMinBytes/4 - 1, copyKernelMinBytes / 4, 1 << 26, 1 << 36} {
			p, ours := planCopy(c, n)
			cpu := c.Type == host.TypeCPU
			want := c.Backend == host.Vulkan && !cpu || c.Backend == host.OpenCL && cpu && 4*n >= copyKernelMinBytes
			require.Equal(t, want, ours, "%v %v: copy kernel chosen for %d words", c.Backend, c.Type, n)
			if !cpu {
				require.Equal(t, int64(0), host.KnobContig.Of(p), "%v: the GPU shape", p)
				require.Equal(t, 256, p.LocalSize, "%v", p)
				require.LessOrEqual(t, p.TotalGroups(), 32*int64(c.ComputeUnits), "%v: groups", p)
				require.Equal(t, host.PlanElementwise("copy", c, n), p, "the elementwise GPU plan")
			}
			require.NoError(t, p.Validate(c), "%v", p)
			require.GreaterOrEqual(t, p.Tiles*p.TileElems, n, "%v does not cover %d words", p, n)
			require.LessOrEqual(t, host.KnobItems.Of(p), host.LoopCap(c), "%v: a chunk's loop", p)
			if c.LoopLimit > 0 && n <= 1<<26 {
				require.GreaterOrEqual(t, p.TotalGroups(), p.Tiles, "%v: one chunk per group under a loop limit", p)
			}
			d := planDiag(c, n)
			require.NoError(t, d.Validate(c), "%v", d)
			require.GreaterOrEqual(t, d.Tiles*d.TileElems, n, "%v does not cover %d elements", d, n)
		}
	}
	p, _ := planCopy(pocl, 1<<26)
	assert.Equal(t, int64(2), p.TotalGroups(), "one group per core: %v", p)
	assert.Equal(t, 1, p.LocalSize, "one work-item per group: %v", p)
	d1, d2 := planDiag(pocl, 4096), planDiag(pocl, 1<<20)
	assert.Equal(t, host.KnobItems.Of(d1), host.KnobItems.Of(d2), "one ITEMS for every size")
	assert.Equal(t, 1, d1.LocalSize, "%v", d1)
}

// planScatterMerge takes one output per work-item under a loop limit;
// elsewhere it is the elementwise plan.
func TestPlanScatterMerge(t *testing.T) {
	cpu := host.Caps{Backend: host.OpenCL, Type: host.TypeCPU, ComputeUnits: 2}
	lavapipe := host.Caps{Backend: host.Vulkan, Type: host.TypeCPU, ComputeUnits: 2, LoopLimit: 65535}
	gpu := host.Caps{Backend: host.Vulkan, Type: host.TypeDiscreteGPU, ComputeUnits: 132}
	for _, c := range []host.Caps{cpu, lavapipe, gpu} {
		for _, n := range []int64{1, 16, 1000} {
			p := planScatterMerge(c, n)
			assert.NoError(t, p.Validate(c))
			assert.GreaterOrEqual(t, p.Tiles*p.TileElems, n, "%+v: %d outputs", c, n)
			if c.LoopLimit > 0 {
				assert.Equal(t, int64(1), host.KnobItems.Of(p), "%+v: one output per work-item", c)
				assert.Equal(t, int64(p.LocalSize), p.TileElems)
			} else {
				assert.Equal(t, host.PlanElementwise("scatter_merge", c, n), p)
			}
		}
	}
}

// planPfold: tiles of targets whose words fill three quarters of the
// scratch on average, a target a work-item, at most 16 groups a compute
// unit (a tile a group and a target a work-item under a loop limit), the
// reduction compiled in, and the doubled scratch (SC_FEWG_SH) where half
// the local memory holds it (not on a GPU of Vulkan's least, 16 KB).
func TestPlanPfold(t *testing.T) {
	lavapipe := host.Caps{Backend: host.Vulkan, Type: host.TypeCPU, ComputeUnits: 2, LoopLimit: 65535}
	small := host.Caps{Backend: host.Vulkan, Type: host.TypeDiscreteGPU, ComputeUnits: 8, MaxWorkGroupSize: 1024, LocalMemBytes: 16 << 10}
	for _, c := range []struct {
		name        string
		caps        host.Caps
		n, tg       int64
		per, groups int64
		wide        bool
	}{
		{"H100 rand16M_1M", h100, 16 << 20, 1 << 20, 96, 16 * 132, true},
		{"H100 32 hits a target", h100, 32 << 20, 1 << 20, 48, 16 * 132, true},
		{"H100 a hit every four targets", h100, 1 << 20, 4 << 20, 6144, 683, true},
		{"H100 one target", h100, 20, 1, 1, 1, true},
		{"lavapipe a hit every four targets", lavapipe, 1 << 20, 4 << 20, 128, 32768, true},
		{"16 KB of local memory, rand16M_1M", small, 16 << 20, 1 << 20, 48, 16 * 8, false},
	} {
		require.Equal(t, c.wide, foldWide(c.caps), c.name)
		p := planPfold(c.caps, c.n, c.tg, Amax, c.wide)
		require.NoError(t, p.Validate(c.caps), c.name)
		assert.Equal(t, pfoldLocal, p.LocalSize, c.name)
		assert.Equal(t, c.per, p.TileElems, c.name)
		assert.Equal(t, (c.tg+c.per-1)/c.per, p.Tiles, c.name)
		assert.Equal(t, c.groups, p.TotalGroups(), c.name)
		assert.Equal(t, int64(Amax), p.Knob("SC_RED"), c.name)
		assert.Equal(t, b2i(c.wide), p.Knob("SC_FEWG_SH"), c.name)
		assert.LessOrEqual(t, 4*c.per*c.n, 3*pfoldCap(pfoldLocal, c.wide)*c.tg+4*c.n, "%s: a tile's average words", c.name)
		sp := planSfold(c.caps, c.n, c.tg, Amax, c.wide)
		assert.Equal(t, min(c.per, pfoldLocal), sp.TileElems, "%s: sfold's buckets a tile, a work-item each", c.name)
		assert.Equal(t, b2i(c.wide), sp.Knob("SC_FEWG_SH"), c.name)
	}
	assert.Equal(t, int64(1024), pfoldCap(pfoldLocal, false), "the SPIR-V's scratch: 128 x SC_FEW_MAX words, two a word")
	assert.Equal(t, int64(2048), pfoldCap(pfoldLocal, true), "the SPIR-V's scratch with SC_FEWG_SH: 128 x SC_FEW_MAX x 2 words, two a word")
	// an ACCEL_KNOBS width of a fold's scratch: its tiles follow it
	d := &Device{caps: h100}
	assert.True(t, d.foldScratch("scatter_sfold"))
	var err error
	d.knobs, err = knobOverrides("scatter_sfold:SC_FEWG_SH=0")
	require.NoError(t, err)
	assert.False(t, d.foldScratch("scatter_sfold"), "the override")
	assert.True(t, d.foldScratch("scatter_pfold"), "the other fold keeps the device's")
}

// completeScatter: the few pass only where fewFits says, the sorted path
// past maxHits counted positions, and the CPU passes' knobs and merge.
func TestCompleteScatter(t *testing.T) {
	cpu := host.Caps{Backend: host.OpenCL, Type: host.TypeCPU, ComputeUnits: 2, GlobalMemBytes: 8 << 30, MaxAllocBytes: 2 << 30,
		MaxWorkGroupCount: [3]int64{1 << 31, 65535, 65535}, Int64Atomics: true}
	lavapipe := cpu
	lavapipe.Backend, lavapipe.LoopLimit = host.Vulkan, 65535
	base := scatterShape{n: 1 << 20, targets: 16, elemBytes: 4, red: Sum, includeSelf: true, flat: true}
	for _, c := range []struct {
		name string
		caps host.Caps
		edit func(*scatterShape)
		want scatterPath
	}{
		{"cpu sum 1-d", cpu, func(*scatterShape) {}, scatterFew},
		{"cpu sum 2-d", cpu, func(s *scatterShape) { s.flat = false }, scatterPrivate},
		{"cpu mean", cpu, func(s *scatterShape) { s.red = Mean }, scatterPrivate},
		{"cpu amax 16 x 8 bytes", cpu, func(s *scatterShape) { s.red, s.elemBytes = Amax, 8 }, scatterPrivate},
		{"lavapipe mean (counts)", lavapipe, func(s *scatterShape) { s.red = Mean }, scatterFew},
		{"lavapipe 2-d", lavapipe, func(s *scatterShape) { s.flat = false }, scatterAtomic},
		{"cpu mean past 2^32", cpu, func(s *scatterShape) { s.red, s.n = Mean, 1<<32 }, scatterSorted},
		{"cpu sum past 2^32 with the input", cpu, func(s *scatterShape) { s.n = 1 << 32 }, scatterFew},
	} {
		s := base
		c.edit(&s)
		sp := planScatter(c.caps, s)
		require.Equal(t, c.want, sp.Path, "%s: %s", c.name, sp)
		if !sp.Path.cpuPass() {
			continue
		}
		assert.Equal(t, int64(s.red), host.KnobScRed.Of(sp.Pass), c.name)
		if sp.Path == scatterFew {
			assert.Equal(t, fewTargets(s.targets), host.KnobScFew.Of(sp.Pass), c.name)
			assert.Equal(t, sp.Few, host.KnobScFew.Of(sp.Pass), c.name)
		}
		if sp.Path != scatterOwned && sp.Path != scatterBucket {
			assert.Equal(t, planScatterMerge(c.caps, s.targets), sp.Merge, c.name)
		}
	}
}

// TestPlanScatterCores: the CPU planner's choice for 2, 16 and 64 compute
// units. Private copies grow with the cores, the owners' walk does not
// shrink with them: perm16M stays on private copies from 2 to 64 cores
// (16 cores chose owners before the cost model: 551 ms on a 16-core Xeon
// against 156 ms on 2 of its cores), and a few positions into many
// targets go to the owners.
func TestPlanScatterCores(t *testing.T) {
	for _, c := range []struct {
		name  string
		n, tg int64
		want  [3]scatterPath // for 2, 16, 64 compute units
	}{
		{"perm16M", 16 << 20, 16 << 20, [3]scatterPath{scatterPrivate, scatterPrivate, scatterPrivate}},
		{"rand16M_1M", 16 << 20, 1 << 20, [3]scatterPath{scatterPrivate, scatterPrivate, scatterPrivate}},
		{"hot16M_16", 16 << 20, 16, [3]scatterPath{scatterFew, scatterFew, scatterFew}},
		{"16K into 16M", 16 << 10, 16 << 20, [3]scatterPath{scatterOwned, scatterOwned, scatterOwned}},
		{"1M into 1M", 1 << 20, 1 << 20, [3]scatterPath{scatterPrivate, scatterPrivate, scatterPrivate}},
		{"64K into 16M", 64 << 10, 16 << 20, [3]scatterPath{scatterOwned, scatterOwned, scatterOwned}},
	} {
		for i, cu := range []int{2, 16, 64} {
			caps := host.Caps{Backend: host.OpenCL, Type: host.TypeCPU, ComputeUnits: cu, GlobalMemBytes: int64(cu) * 4 << 30,
				MaxAllocBytes: 64 << 30, MaxWorkGroupCount: [3]int64{1 << 31, 65535, 65535}, Int64Atomics: true}
			s := scatterShape{n: c.n, targets: c.tg, elemBytes: 4, red: Sum, includeSelf: true, flat: true}
			sp := planScatter(caps, s)
			assert.Equal(t, c.want[i], sp.Path, "%s on %d cores: %s (private %d ns, owned %d ns)", c.name, cu, sp,
				cpuPrivateNs(int64(cu), c.n, c.tg, 4), cpuOwnedNs(min(int64(cu), c.tg, 4), int64(cu), c.n))
		}
	}
}

// TestRadixReadPack: the count passes are told only how their input is
// packed, which is all they read (radix_key: packed words from
// RadixPacked and RadixUnpack, keys from kin otherwise), so passes that
// read alike share one folded kernel.
func TestRadixReadPack(t *testing.T) {
	for pack, want := range map[int64]int64{
		kernels.RadixUnpacked: kernels.RadixUnpacked,
		kernels.RadixPackOut:  kernels.RadixUnpacked, // reads keys, writes words
		kernels.RadixPacked:   kernels.RadixPacked,
		kernels.RadixUnpack:   kernels.RadixPacked,   // reads words, writes keys
		kernels.RadixE32Out:   kernels.RadixUnpacked, // keys beside entries, whatever their width
		kernels.RadixE32:      kernels.RadixUnpacked,
		kernels.RadixE32In:    kernels.RadixUnpacked,
	} {
		assert.Equal(t, want, radixReadPack(pack), "pack %d", pack)
	}
	// a packed sort of four passes, and one with 32-bit entries: two
	// count kernels, one
	for _, c := range []struct {
		packed, e32 bool
		kernels     int
		modes       []int64
	}{
		{true, false, 2, []int64{kernels.RadixPackOut, kernels.RadixPacked, kernels.RadixPacked, kernels.RadixUnpack}},
		{false, true, 1, []int64{kernels.RadixE32Out, kernels.RadixE32, kernels.RadixE32, kernels.RadixE32In}},
		{false, false, 1, []int64{kernels.RadixUnpacked, kernels.RadixUnpacked, kernels.RadixUnpacked, kernels.RadixUnpacked}},
	} {
		reads := map[int64]bool{}
		for pass := range 4 {
			pack := radixPack(c.packed, c.e32, pass, 4)
			assert.Equal(t, c.modes[pass], pack, "packed %v e32 %v pass %d", c.packed, c.e32, pass)
			reads[radixReadPack(pack)] = true
		}
		assert.Len(t, reads, c.kernels, "packed %v e32 %v", c.packed, c.e32)
	}
	// which carry a sort takes (radixSort and radixTraffic alike)
	for _, c := range []struct {
		wordBytes, keyBits, passes int
		entryLimit                 int64
		packed, e32                bool
	}{
		{4, 32, 4, 1 << 24, true, false},
		{8, 20, 3, 1 << 24, true, false},    // 64-bit keys below 2^32
		{8, 64, 8, 1 << 24, false, true},    // wide keys: 32-bit entries
		{8, 64, 8, 1<<32 + 1, false, false}, // entries past 2^32
		{4, 8, 1, 1 << 24, false, false},    // one pass carries nothing
	} {
		packed, e32 := radixCarry(c.wordBytes, c.keyBits, c.entryLimit, c.passes)
		assert.Equal(t, c.packed, packed, "%+v", c)
		assert.Equal(t, c.e32, e32, "%+v", c)
	}
}
