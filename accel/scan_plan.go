package accel

import (
	"math/bits"

	"github.com/accelkern/accel/host"
)

// scanSubgroups says whether a device has the scan's subgroup variant for
// elements of elemBytes (64-bit integers: int64 true): Vulkan with subgroup
// arithmetic, on 64-bit integers also shaderSubgroupExtendedTypes, on
// float64 also fp64.
func scanSubgroups(caps host.Caps, elemBytes int, int64s bool) bool {
	if caps.Backend != host.Vulkan || !caps.SubgroupArith {
		return false
	}
	switch {
	case int64s:
		return caps.SubgroupArith64
	case elemBytes == 8:
		return caps.FP64
	}
	return true
}

// planScan plans the three launches of a reduce-then-scan prefix sum over n
// elements of elemBytes each (see clkernels/common/scan_body.h): a
// power-of-two work-group with scratch in local memory, tiles of
// LocalSize*ITEMS units (elements, or pairs of 32-bit elements on the
// subgroup path), and a number of groups from the compute units, each
// group owning a contiguous range of tiles. subgroups says the device has
// the subgroup variant for this element type (Vulkan, subgroup
// arithmetic); the plan then takes the subgroup path (knob SCAN_SG = 1;
// 3 on llvmpipe, one subgroup per group) where its work-group is whole
// subgroups. The group count stays under the
// driver's loop limit, since one work-item scans the per-group partial
// sums.
func planScan(caps host.Caps, n int64, elemBytes int64, subgroups bool) host.Plan {
	if caps.Type == host.TypeCPU && caps.Backend == host.OpenCL && caps.LoopLimit == 0 {
		return planScanChain(caps, n, elemBytes)
	}
	if caps.Type != host.TypeCPU && !(subgroups && caps.SubgroupSize > 0) {
		return planScanChainGPU(caps, n, elemBytes)
	}
	p := host.Plan{Kernel: "scan"}
	local, items, perCU, flat, sg := 256, int64(8), int64(8), int64(0), int64(0)
	switch {
	case caps.Type == host.TypeCPU && caps.LoopLimit == 0:
		// One work-item per group scanning its whole range in one flat
		// loop, with no scratch and no barriers: a CPU core runs a
		// group's items one after another anyway.
		local, items, perCU, flat = 1, 4096, 8, 1
		p.Reason = "cpu: one work-item per group, one flat loop over its range"
	case subgroups && caps.SubgroupSize > 0 && caps.Type == host.TypeCPU:
		// llvmpipe: one subgroup (one SIMD vector) per group, walking
		// rows of consecutive units; measured 5x faster than per-lane
		// runs, whose every load is a gather.
		local, items, perCU, sg = caps.SubgroupSize, 1024, 8, 1
		p.Reason = "cpu with subgroups: rows of consecutive units"
		if caps.SubgroupFixed {
			// one subgroup per group: no scratch and no barriers,
			// which llvmpipe runs 2.5x faster; the apply pass takes
			// batches of a run of 4 units a lane, with a subgroup scan
			// a batch where rows paid one a row (llvmpipe runs those
			// lane by lane): 64M int32's apply pass 52-76 ms -> 31-44
			sg = 3
			p.Reason = "cpu with subgroups: one subgroup per group, rows of consecutive units, no barriers, runs of 4 units a lane in the apply"
		}
	case subgroups && caps.SubgroupSize > 0:
		local, items, sg = 256, 8, 1
		p.Reason = "gpu with subgroups: rows of consecutive units per subgroup"
	case caps.Type == host.TypeCPU:
		// llvmpipe: a group of one SIMD width (8 lanes), each lane a long
		// contiguous run; the loop limit sets the group count.
		local, items, perCU = 8, 2048, 4
		p.Reason = "cpu with a loop limit: groups of 8, long runs per work-item"
	default:
		p.Reason = "gpu: enough groups to fill every compute unit"
	}
	local = host.Pow2Local(caps, local, elemBytes)
	if sg != 0 && local%caps.SubgroupSize != 0 {
		// not whole subgroups (a small work-group limit): the scratch path
		local, items, sg = host.Pow2Local(caps, 256, elemBytes), 8, 0
		p.Reason = "work-group is not whole subgroups: scratch scan"
	}
	unit := int64(1)
	if sg != 0 && elemBytes == 4 {
		unit = 2 // 32-bit elements move in pairs
	}
	p.LocalSize = local
	p.Knobs = []host.Knob{host.KnobItems.Set(items), host.KnobFlat.Set(flat), host.KnobScanSg.Set(sg)}
	p.TileElems = int64(local) * items * unit
	p.Tiles = (n + p.TileElems - 1) / p.TileElems
	cu := max(int64(caps.ComputeUnits), 1)
	groups := min(p.Tiles, cu*perCU)
	// llvmpipe counts every loop iteration of an invocation against its
	// limit, so the iterations of a work-item over its group's tiles (two
	// loops of ITEMS and the scratch scan, or the subgroup sums, per tile)
	// and the single-item partials loop must stay under it together.
	lc := host.LoopCap(caps)
	perTile := 2*items + 2*int64(bits.Len(uint(local))) + 2
	if sg != 0 {
		perTile = 2*items + int64(local) + 2
	}
	// whole tiles per group: at most lc/perTile of them
	if need := (p.Tiles + max(lc/perTile, 1) - 1) / max(lc/perTile, 1); groups < need {
		groups = need
	}
	groups = min(max(groups, 1), lc)
	if caps.MaxWorkGroupCount[0] > 0 {
		groups = min(groups, caps.MaxWorkGroupCount[0])
	}
	p.Groups = [3]int64{groups, 1, 1}
	return p
}

// planScanChainGPU plans the GPUs' single-pass chained scan (knob CHAIN =
// 2, entries chain and fixup of scan_body.h) where the device has no
// subgroup variant (on Vulkan with subgroups, reduce-then-scan on them
// measured faster: 64M int32 on the H200, 0.41 ms against 0.57 for the
// best chained plan): one tile of LocalSize * ITEMS elements per
// work-group, loaded into scratch by consecutive lanes and scanned there
// while the first lanes look back for the carry, so x is read and y
// written once, where reduce-then-scan reads x twice and its per-lane
// runs did not coalesce (NVIDIA OpenCL on the H200, 64M int32:
// reduce-then-scan 0.81 ms; chained with tiles of 2048 elements 0.93,
// 4096 0.52, 8192 0.31; a tile's look-back costs about the same whatever
// its size). So the tile is as large as 4/5 of the local memory allows:
// with 48 KiB, 256 x 32 elements of 4 bytes, 256 x 16 of 8. A device with a loop limit
// (llvmpipe under forced GPU plans) polls less.
func planScanChainGPU(caps host.Caps, n int64, elemBytes int64) host.Plan {
	p := host.Plan{Kernel: "scan", Reason: "gpu: single-pass chained scan, a tile per work-group, bounded look-back and a fixup"}
	local := host.Pow2Local(caps, 256, 0)
	items := 128 / elemBytes
	scratch := func() int64 { t := int64(local) * items; return elemBytes * (t + t/32 + int64(local) + 66) }
	for caps.LocalMemBytes > 0 && scratch() > caps.LocalMemBytes*4/5 && items > 2 {
		items /= 2
	}
	spin := int64(16384)
	if caps.LoopLimit > 0 {
		spin = min(spin, host.LoopCap(caps)/4)
	}
	p.LocalSize = local
	p.Knobs = []host.Knob{host.KnobItems.Set(items), host.KnobFlat.Set(0), host.KnobScanSg.Set(0),
		host.KnobChain.Set(2), host.KnobSpin.Set(spin)}
	p.TileElems = int64(local) * items
	p.Tiles = (n + p.TileElems - 1) / p.TileElems
	p.Groups = host.FoldGroups(max(p.Tiles, 1), caps.MaxWorkGroupCount)
	return p
}

// scanChainTileBytes is the chained scan's tile: small enough that a
// core's cache still holds it when the core scans it again, large enough
// that a tile's hand-over (a flag and a partial between cores) is noise.
const scanChainTileBytes = 256 << 10

// planScanChain plans the single-pass chained scan of CPU OpenCL drivers
// (knob CHAIN, entry chain of scan_body.h): one work-item per group and
// one group per core, taking tiles of ITEMS elements in ticket order; x is
// read once from memory where reduce-then-scan reads it twice. The flat
// one-item-per-group reduce-then-scan (FLAT = 1) stays for plans that
// turn CHAIN off.
func planScanChain(caps host.Caps, n int64, elemBytes int64) host.Plan {
	p := host.Plan{Kernel: "scan", LocalSize: 1}
	items := int64(scanChainTileBytes) / elemBytes
	stream := int64(0)
	if n*elemBytes >= host.StreamMinBytes {
		stream = 1
	}
	p.Knobs = []host.Knob{host.KnobItems.Set(items), host.KnobFlat.Set(1), host.KnobScanSg.Set(0),
		host.KnobChain.Set(1), host.KnobSpin.Set(16384), host.KnobStream.Set(stream)}
	p.TileElems = items
	p.Tiles = (n + items - 1) / items
	groups := min(max(p.Tiles, 1), max(int64(caps.ComputeUnits), 1))
	if caps.MaxWorkGroupCount[0] > 0 {
		groups = min(groups, caps.MaxWorkGroupCount[0])
	}
	p.Groups = [3]int64{groups, 1, 1}
	p.Reason = "cpu opencl: single-pass chained scan, one work-item per core taking cache-sized tiles in order"
	if stream != 0 {
		p.Reason += ", non-temporal stores"
	}
	return p
}

// fixupPlan is the grid of the fixup launch after a chained pass on plan
// p (a sort's sweep, the GPUs' chained scan): at most eight groups per
// compute unit, each walking the tiles in a grid stride past the ones the
// pass wrote. Where the pass wrote every tile the launch only reads their
// marks, which a group a tile made 4096 groups with 45 KB of scratch each
// take 0.014-0.026 ms on an H200 (four times a sort); a group of the
// smaller grid reads a few marks in turn.
func fixupPlan(caps host.Caps, p host.Plan) host.Plan {
	cu := max(int64(caps.ComputeUnits), 1)
	p.Groups = host.FoldGroups(max(min(p.TotalGroups(), 8*cu), 1), caps.MaxWorkGroupCount)
	return p
}
