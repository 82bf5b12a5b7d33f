package host

import (
	"fmt"
	"math/bits"
	"slices"
)

// PlanElementwise plans a kernel that writes n elements in tiles of
// LocalSize*items elements, looping over tiles with a grid stride.
//
// The choice is plain data from caps: on CPU drivers each work-item takes a
// contiguous run (CONTIG=1, long fill loops the compiler vectorizes) and
// there are a few work-groups per compute unit; on GPUs consecutive
// work-items take consecutive elements (CONTIG=0, coalesced) with enough
// groups to fill every compute unit. The
// group count is folded into up to three dimensions within the device's
// per-dimension limits.
func PlanElementwise(kernel string, caps Caps, n int64) Plan {
	p := Plan{Kernel: kernel}
	contig := int64(0)
	items := int64(4)
	local := 256
	groupsPerCU := int64(32)
	switch {
	case caps.Type == TypeCPU && caps.Backend == OpenCL:
		contig, items, local, groupsPerCU = 1, 4096, 64, 32
		p.Reason = "cpu opencl: contiguous runs per work-item"
	case caps.Type == TypeCPU:
		// Measured on lavapipe: contiguous runs per invocation are 4x
		// faster than per-element index recovery in SIMD lanes.
		contig, items, local, groupsPerCU = 1, 1024, 64, 8
		p.Reason = "cpu vulkan driver: contiguous runs per invocation"
	default:
		p.Reason = "gpu: coalesced strided lanes"
	}
	if caps.MaxWorkGroupSize > 0 && local > caps.MaxWorkGroupSize {
		local = caps.MaxWorkGroupSize
	}
	p.LocalSize = local
	p.Knobs = []Knob{{Name: "ITEMS", Value: items}, {Name: "CONTIG", Value: contig}}
	p.TileElems = int64(local) * items
	p.Tiles = (n + p.TileElems - 1) / p.TileElems
	cu := int64(caps.ComputeUnits)
	if cu < 1 {
		cu = 1
	}
	groups := p.Tiles
	if limit := cu * groupsPerCU; groups > limit && caps.LoopLimit == 0 {
		groups = limit
	}
	if caps.LoopLimit > 0 {
		// One tile per group where the grid allows, so no invocation's
		// loops come near the driver's iteration limit.
		p.Reason += fmt.Sprintf("; loop limit %d: one tile per group", caps.LoopLimit)
	}
	if groups < 1 {
		groups = 1
	}
	p.Groups = FoldGroups(groups, caps.MaxWorkGroupCount)
	return p
}

// PlanElementwiseWrite is PlanElementwise for a kernel whose output of
// outBytes is written and not read: on CPU drivers an output of
// StreamMinBytes or more takes knob STREAM = 1 (non-temporal stores where
// the kernel language has them, OpenCL C). Measured on PoCL for
// tril_indices 10000^2 int64 (bench, alternating binaries): 22-31 ->
// 17.3-17.5 ms in one sitting, where a C loop over both cores wrote 800 MB
// in 20.1 ms with plain stores and 16.1 ms with non-temporal ones.
func PlanElementwiseWrite(kernel string, caps Caps, n, outBytes int64) Plan {
	p := PlanElementwise(kernel, caps, n)
	if caps.Type == TypeCPU && outBytes >= StreamMinBytes {
		p.Knobs = append(p.Knobs, Knob{Name: "STREAM", Value: 1})
		p.Reason += "; non-temporal stores"
	}
	return p
}

// PlanScatterMerge plans the merge of ScatterPrivate's and ScatterFew's
// copies into outputs targets: PlanElementwise, except under a loop limit,
// where each work-item takes one output (ITEMS 1), so that the merge's
// loop over the copies is all of its iterations (PlanScatter keeps the
// copies under half the limit).
func PlanScatterMerge(kernel string, caps Caps, outputs int64) Plan {
	p := PlanElementwise(kernel, caps, outputs)
	if caps.LoopLimit == 0 {
		return p
	}
	for i := range p.Knobs {
		if p.Knobs[i].Name == "ITEMS" {
			p.Knobs[i].Value = 1
		}
	}
	p.TileElems = int64(p.LocalSize)
	p.Tiles = (outputs + p.TileElems - 1) / p.TileElems
	p.Groups = FoldGroups(max(p.Tiles, 1), caps.MaxWorkGroupCount)
	p.Reason += "; one output per work-item (the merge loops over the copies)"
	return p
}

// FoldGroups lays out g work-groups over three dimensions, each within
// limits (a zero limit means 65535, the minimum Vulkan guarantees). The
// product is at least g when the limits allow, and at most the product of
// the limits; kernels skip the surplus groups through their grid stride.
func FoldGroups(g int64, limits [3]int64) [3]int64 {
	var lim [3]int64
	for i := range lim {
		lim[i] = limits[i]
		if lim[i] <= 0 {
			lim[i] = 65535
		}
	}
	var out [3]int64
	rest := g
	for i := 0; i < 3; i++ {
		d := rest
		if d > lim[i] {
			d = lim[i]
		}
		if d < 1 {
			d = 1
		}
		out[i] = d
		rest = (rest + d - 1) / d
	}
	return out
}

// Validate checks a plan against caps before a launch.
func (p Plan) Validate(caps Caps) error {
	if p.LocalSize < 1 || (caps.MaxWorkGroupSize > 0 && p.LocalSize > caps.MaxWorkGroupSize) {
		return fmt.Errorf("plan %s: local size %d outside [1, %d]", p.Kernel, p.LocalSize, caps.MaxWorkGroupSize)
	}
	for i, g := range p.Groups {
		if g < 1 || (caps.MaxWorkGroupCount[i] > 0 && g > caps.MaxWorkGroupCount[i]) {
			return fmt.Errorf("plan %s: groups[%d] = %d outside [1, %d]", p.Kernel, i, g, caps.MaxWorkGroupCount[i])
		}
	}
	return nil
}

// loopCap is how many iterations planners let one loop of one work-item
// run on a driver with Caps.LoopLimit (a margin under the limit).
func loopCap(caps Caps) int64 {
	if caps.LoopLimit > 0 {
		return int64(caps.LoopLimit) / 2
	}
	return 1 << 62
}

// pow2Local is the largest power of two at most want that the device's
// work-group size and its local memory (bytesPerItem each) allow.
func pow2Local(caps Caps, want int, bytesPerItem int64) int {
	l := want
	for l > 1 && ((caps.MaxWorkGroupSize > 0 && l > caps.MaxWorkGroupSize) ||
		(caps.LocalMemBytes > 0 && int64(l)*bytesPerItem > caps.LocalMemBytes/2)) {
		l /= 2
	}
	return l
}

// ScanSubgroups says whether a device has the scan's subgroup variant for
// elements of elemBytes (64-bit integers: int64 true): Vulkan with subgroup
// arithmetic, on 64-bit integers also shaderSubgroupExtendedTypes, on
// float64 also fp64.
func ScanSubgroups(caps Caps, elemBytes int, int64s bool) bool {
	if caps.Backend != Vulkan || !caps.SubgroupArith {
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

// PlanScan plans the three launches of a reduce-then-scan prefix sum over n
// elements of elemBytes each (see clkernels/common/scan_body.h): a
// power-of-two work-group with scratch in local memory, tiles of
// LocalSize*ITEMS units (elements, or pairs of 32-bit elements on the
// subgroup path), and a number of groups from the compute units, each
// group owning a contiguous range of tiles. subgroups says the device has
// the subgroup variant for this element type (Vulkan, subgroup
// arithmetic); the plan then takes the subgroup path (knob SCAN_SG = 1)
// where its work-group is whole subgroups. The group count stays under the
// driver's loop limit, since one work-item scans the per-group partial
// sums.
func PlanScan(caps Caps, n int64, elemBytes int64, subgroups bool) Plan {
	if caps.Type == TypeCPU && caps.Backend == OpenCL && caps.LoopLimit == 0 {
		return planScanChain(caps, n, elemBytes)
	}
	p := Plan{Kernel: "scan"}
	local, items, perCU, flat, sg := 256, int64(8), int64(8), int64(0), int64(0)
	switch {
	case caps.Type == TypeCPU && caps.LoopLimit == 0:
		// One work-item per group scanning its whole range in one flat
		// loop, with no scratch and no barriers: a CPU core runs a
		// group's items one after another anyway.
		local, items, perCU, flat = 1, 4096, 8, 1
		p.Reason = "cpu: one work-item per group, one flat loop over its range"
	case subgroups && caps.SubgroupSize > 0 && caps.Type == TypeCPU:
		// llvmpipe: one subgroup (one SIMD vector) per group, walking
		// rows of consecutive units; measured 5x faster than per-lane
		// runs, whose every load is a gather.
		local, items, perCU, sg = caps.SubgroupSize, 1024, 8, 1
		p.Reason = "cpu with subgroups: rows of consecutive units"
		if caps.SubgroupFixed {
			// one subgroup per group: no scratch and no barriers,
			// which llvmpipe runs 2.5x faster
			sg = 2
			p.Reason = "cpu with subgroups: one subgroup per group, rows of consecutive units, no barriers"
		}
	case subgroups && caps.SubgroupSize > 0:
		local, items, sg = 256, 8, 1
		p.Reason = "gpu with subgroups: rows of consecutive units per subgroup"
	case caps.Type == TypeCPU:
		// llvmpipe: a group of one SIMD width (8 lanes), each lane a long
		// contiguous run; the loop limit sets the group count.
		local, items, perCU = 8, 2048, 4
		p.Reason = "cpu with a loop limit: groups of 8, long runs per work-item"
	default:
		p.Reason = "gpu: enough groups to fill every compute unit"
	}
	local = pow2Local(caps, local, elemBytes)
	if sg != 0 && local%caps.SubgroupSize != 0 {
		// not whole subgroups (a small work-group limit): the scratch path
		local, items, sg = pow2Local(caps, 256, elemBytes), 8, 0
		p.Reason = "work-group is not whole subgroups: scratch scan"
	}
	unit := int64(1)
	if sg != 0 && elemBytes == 4 {
		unit = 2 // 32-bit elements move in pairs
	}
	p.LocalSize = local
	p.Knobs = []Knob{{Name: "ITEMS", Value: items}, {Name: "FLAT", Value: flat}, {Name: "SCAN_SG", Value: sg}}
	p.TileElems = int64(local) * items * unit
	p.Tiles = (n + p.TileElems - 1) / p.TileElems
	cu := max(int64(caps.ComputeUnits), 1)
	groups := min(p.Tiles, cu*perCU)
	// llvmpipe counts every loop iteration of an invocation against its
	// limit, so the iterations of a work-item over its group's tiles (two
	// loops of ITEMS and the scratch scan, or the subgroup sums, per tile)
	// and the single-item partials loop must stay under it together.
	lc := loopCap(caps)
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

// scanChainTileBytes is the chained scan's tile: small enough that a
// core's cache still holds it when the core scans it again, large enough
// that a tile's hand-over (a flag and a partial between cores) is noise.
const scanChainTileBytes = 256 << 10

// StreamMinBytes is the size of a write-only stream from which CPU plans
// write it with non-temporal stores (knob STREAM): larger than the caches
// of a core or two, so the lines written would be evicted before anyone
// read them anyway, while the stores skip reading every line first.
const StreamMinBytes = 16 << 20

// planScanChain plans the single-pass chained scan of CPU OpenCL drivers
// (knob CHAIN, entry chain of scan_body.h): one work-item per group and
// one group per core, taking tiles of ITEMS elements in ticket order; x is
// read once from memory where reduce-then-scan reads it twice. The flat
// one-item-per-group reduce-then-scan (FLAT = 1) stays for plans that
// turn CHAIN off.
func planScanChain(caps Caps, n int64, elemBytes int64) Plan {
	p := Plan{Kernel: "scan", LocalSize: 1}
	items := int64(scanChainTileBytes) / elemBytes
	stream := int64(0)
	if n*elemBytes >= StreamMinBytes {
		stream = 1
	}
	p.Knobs = []Knob{{Name: "ITEMS", Value: items}, {Name: "FLAT", Value: 1}, {Name: "SCAN_SG", Value: 0},
		{Name: "CHAIN", Value: 1}, {Name: "SPIN", Value: 16384}, {Name: "STREAM", Value: stream}}
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

// FoldArgs returns p with the entry's foldable arguments (ArgDecl.Fold)
// added as knobs where the driver runs both sides of every branch
// (Caps.FoldArgs), so that each kernel is compiled for its one mode;
// elsewhere it returns p unchanged and the kernel reads the arguments at
// run time. A knob the plan already has (a planner may compile one in
// everywhere) keeps the plan's value, and a negative value stays a
// run-time one (the kernels' FOLD takes knobs >= 0).
func FoldArgs(caps Caps, p Plan, e *EntryDecl, args []Arg) Plan {
	if !caps.FoldArgs {
		return p
	}
	var knobs []Knob
	for i, a := range e.Args {
		if a.Fold == "" || i >= len(args) || int64(args[i].Val) < 0 ||
			slices.ContainsFunc(p.Knobs, func(k Knob) bool { return k.Name == a.Fold }) {
			continue
		}
		if knobs == nil {
			knobs = append([]Knob(nil), p.Knobs...)
		}
		knobs = append(knobs, Knob{Name: a.Fold, Value: int64(args[i].Val)})
	}
	if knobs != nil {
		p.Knobs = knobs
	}
	return p
}

// PlanRadix plans the passes of the stable radix sort of n keys (see
// clkernels/common/radix_body.h): the digit width (8 bits on CPUs, where a
// work-item's 256 counters live in cache, 11 on llvmpipe, where passes are
// dear; 4 on GPUs, where 16 fit in registers) and the number of work-items B, each owning a contiguous chunk
// of keys. B grows with the compute units and shrinks for small inputs (a
// histogram of 2^bits x B counts is scanned every pass), and every chunk
// stays under the driver's loop limit.
func PlanRadix(caps Caps, n int64) Plan {
	p := Plan{Kernel: "radix"}
	local, bits := 64, int64(4)
	perCU, minChunk := int64(2048), int64(64)
	if caps.Type == TypeCPU {
		local, bits, perCU, minChunk = 64, 8, 256, 4096
		p.Reason = "cpu: 8-bit digits, long chunks per work-item"
		if caps.LoopLimit > 0 {
			// llvmpipe: groups of one SIMD vector run 1.3x faster than
			// groups of 64, and each pass costs so much per key that
			// 11-bit digits (3 passes for 32-bit keys, not 4) win.
			local, bits = 8, 11
			p.Reason = "cpu with a loop limit: 11-bit digits, groups of 8, long chunks per work-item"
		}
	} else {
		return PlanRadixTiled(caps, n)
	}
	local = pow2Local(caps, local, 0)
	cu := max(int64(caps.ComputeUnits), 1)
	items := min(cu*perCU, (n+minChunk-1)/minChunk)
	lc := loopCap(caps)
	items = max(items, (n+lc-1)/lc, 1)
	groups := (items + int64(local) - 1) / int64(local)
	if caps.MaxWorkGroupCount[0] > 0 {
		groups = min(groups, caps.MaxWorkGroupCount[0])
	}
	p.LocalSize = local
	p.Groups = [3]int64{groups, 1, 1}
	p.Knobs = []Knob{{Name: "RADIX_BITS", Value: bits}}
	b := groups * int64(local)
	p.TileElems = (n + b - 1) / b // the chunk of each work-item
	p.Tiles = b
	return p
}

// PlanRadixTiled plans the radix sort's tiled passes (radix_tcount and
// radix_tscatter in clkernels/common/radix_body.h), PlanRadix's choice on
// GPUs: 4-bit digits, tiles of LOCAL_SIZE x RADIX_KPT keys (256 x 4 where
// the device allows), one work-group per tile at a time, every global load
// and store by consecutive lanes. The work-group scratch (radix_tile.h:
// the lanes' packed digit counts, then the tile's keys and 64-bit entries)
// must fit the device's local memory, so the tile shrinks where it is
// small. TileElems is the tile, Tiles their count.
func PlanRadixTiled(caps Caps, n int64) Plan {
	p := Plan{Kernel: "radix", Reason: "gpu: 4-bit digits, tiles ranked in work-group scratch, coalesced digit runs"}
	const bits = 4
	local, kpt := pow2Local(caps, 256, 0), int64(4)
	scratch := func() int64 { return radixTiledScratch(bits, local, kpt) }
	for caps.LocalMemBytes > 0 && scratch() > caps.LocalMemBytes && (kpt > 1 || local > 1) {
		if kpt > 1 {
			kpt /= 2
		} else {
			local /= 2
		}
	}
	p.LocalSize = local
	p.TileElems = int64(local) * kpt
	p.Tiles = (n + p.TileElems - 1) / p.TileElems
	p.Groups = FoldGroups(max(p.Tiles, 1), caps.MaxWorkGroupCount)
	p.Knobs = []Knob{{Name: "RADIX_BITS", Value: bits}, {Name: "RADIX_KPT", Value: kpt}}
	return p
}

// radixTiledScratch is the tiled radix passes' work-group scratch in bytes
// for 64-bit keys (clkernels/common/radix_tile.h's RADIX_SCRATCH_LEN words:
// the lanes' packed digit counts, the tile's keys and its 64-bit entries).
func radixTiledScratch(bits int64, local int, kpt int64) int64 {
	return 4 * (int64(local)*(int64(1)<<bits)/2 + int64(local)*kpt*(2+2))
}

// RadixTiledScratchBytes is the work-group scratch a tiled radix plan
// (PlanRadixTiled) takes, in bytes.
func RadixTiledScratchBytes(p Plan) int64 {
	return radixTiledScratch(p.Knob("RADIX_BITS"), p.LocalSize, p.Knob("RADIX_KPT"))
}

// Scatter strategies, chosen by PlanScatter.
const (
	// ScatterAtomic runs one position per lane and folds it into its
	// target with an atomic (a compare-and-swap on the element's bits).
	ScatterAtomic = "atomic"
	// ScatterSorted sorts the positions by target (a stable radix sort)
	// and folds each target's run in index order: bit-reproducible.
	ScatterSorted = "sorted"
	// ScatterOwned gives each work-item a range of targets; every
	// work-item walks all positions in index order and folds those it
	// owns with plain loads and stores: bit-reproducible, no atomics.
	ScatterOwned = "owned"
	// ScatterPrivate gives each work-item a chunk of positions and a
	// private copy of the output to fold them into with plain loads and
	// stores, then merges the copies in work-item order: no atomics, the
	// same bits for the same number of work-items.
	ScatterPrivate = "private"
	// ScatterFew is ScatterPrivate for at most ScatterFewMax targets: each
	// worker keeps its accumulators per target in registers (on CPU
	// OpenCL a vector register per target, folding a vector of positions
	// under each target's lane mask; under a loop limit a short run per
	// invocation) and writes its private copy; the merge is
	// ScatterPrivate's. It takes a 1-d loop shape and sum, prod, amax and
	// amin with the input; under a loop limit mean and no input too, with
	// hit counts (accel's fewFits). Others run ScatterPrivate's passes, or
	// under a loop limit PlanScatterShared's.
	ScatterFew = "few"
)

// ScatterFewMax is the most targets ScatterFew takes (the kernels' code
// SC_FEW_MAX, kernels.ScFewMax): a register per target, and x86-64 has 32
// vector registers. Measured on PoCL (2-core EPYC, AVX-512, 16M float32
// positions, min of 15 calls): into 32 targets the lanes spill and take
// 15.5 ms for a sum where the private pass takes 9.8; into 16, 8.5
// against 11.8.
const ScatterFewMax = 16

// ScatterPlan is the strategy of a scatter reduction and, for
// ScatterOwned and ScatterPrivate, the launch of the reducing pass (one
// work-item per owner or worker).
type ScatterPlan struct {
	Strategy string `json:"strategy"`
	Plan     Plan   `json:"plan"`
	Reason   string `json:"reason"`
}

// String prints the strategy and its reason.
func (s ScatterPlan) String() string {
	if s.Strategy == ScatterOwned || s.Strategy == ScatterPrivate || s.Strategy == ScatterFew {
		return fmt.Sprintf("%s: %s; %s", s.Strategy, s.Reason, s.Plan)
	}
	return fmt.Sprintf("%s: %s", s.Strategy, s.Reason)
}

// PlanScatter chooses how to reduce n positions into targets outputs of
// elemBytes each. det asks for the reference's bits (index order per
// target).
//
// On a CPU driver without a loop limit a core is a work-item with a long
// plain loop, and atomics are what costs: with det it takes ScatterOwned
// (each of one work-item per compute unit reads every index but folds only
// its own range of targets, in index order); without, ScatterPrivate (one
// private copy of the output per compute unit, merged at the end) where
// the copies are no larger than about twice the positions and fit in an
// eighth of the device's memory, ScatterFew where that is so and the
// targets are at most ScatterFewMax, else ScatterOwned. On a CPU driver
// with a loop limit, ScatterFew for at most ScatterFewMax targets without
// det, where its workers fit the limit. On other devices det takes
// ScatterSorted, and so do 64-bit elements without 64-bit atomics;
// everything else takes ScatterAtomic (PlanScatterShared).
func PlanScatter(caps Caps, n, targets int64, elemBytes int, det bool) ScatterPlan {
	if caps.Type == TypeCPU && caps.LoopLimit == 0 {
		workers := max(int64(caps.ComputeUnits), 1)
		p := Plan{Kernel: "scatter_cpu", LocalSize: 1,
			Knobs: []Knob{{Name: "ITEMS", Value: 1}, {Name: "CONTIG", Value: 1}}}
		privBytes := workers * targets * int64(elemBytes+4)
		budget := caps.GlobalMemBytes / 8
		if caps.MaxAllocBytes > 0 {
			budget = min(budget, caps.MaxAllocBytes)
		}
		if !det && workers > 1 && workers*targets <= 2*n+1<<16 && privBytes <= budget {
			p.Groups = FoldGroups(workers, caps.MaxWorkGroupCount)
			p.Tiles, p.TileElems = workers, (n+workers-1)/workers
			p.Reason = fmt.Sprintf("%d workers, %d positions each, private copies of %d targets", workers, p.TileElems, targets)
			if targets <= ScatterFewMax {
				return ScatterPlan{Strategy: ScatterFew, Plan: p,
					Reason: "cpu driver, few targets: per core, a vector of accumulators per target folded under lane masks, merged in core order"}
			}
			return ScatterPlan{Strategy: ScatterPrivate, Plan: p,
				Reason: "cpu driver: a private copy of the output per core, plain loads and stores, merged in core order"}
		}
		// Every owner walks all positions, so more owners add reads but
		// cannot take the walk's time below one full pass: a few suffice.
		owners := max(min(workers, targets, 4), 1)
		p.Groups = FoldGroups(owners, caps.MaxWorkGroupCount)
		p.Tiles, p.TileElems = owners, n
		p.Reason = fmt.Sprintf("%d owners, each walks all %d positions", owners, n)
		return ScatterPlan{Strategy: ScatterOwned, Plan: p,
			Reason: "cpu driver: each core owns a range of targets and folds them in index order (the reference's bits)"}
	}
	if caps.Type == TypeCPU && !det && targets <= ScatterFewMax && n > 0 {
		// A CPU driver with a loop limit (llvmpipe), where atomics on a
		// few hot targets serialize: ScatterFew with many short workers,
		// each folding a chunk that keeps its iterations (a position, and
		// a test of each of the few targets) under the limit, and as
		// many workers as the merge's loop over them allows.
		lc := loopCap(caps)
		chunk := max(lc/(FewTargets(targets)+2), 1)
		local := int64(pow2Local(caps, 64, 0))
		groups := (n + chunk*local - 1) / (chunk * local)
		if groups*local <= lc {
			p := Plan{Kernel: "scatter_cpu", LocalSize: int(local), Knobs: []Knob{{Name: "ITEMS", Value: 1}, {Name: "CONTIG", Value: 1}},
				Groups: FoldGroups(groups, caps.MaxWorkGroupCount), Tiles: groups * local, TileElems: chunk,
				Reason: fmt.Sprintf("%d workers, at most %d positions each, private copies of %d targets", groups*local, chunk, targets)}
			return ScatterPlan{Strategy: ScatterFew, Plan: p,
				Reason: "cpu driver with a loop limit, few targets: short runs per invocation, every target tested, merged in order"}
		}
	}
	return PlanScatterShared(caps, elemBytes, det)
}

// FewTargets is the number of targets the few pass tests for targets
// outputs (compiled in as knob SC_FEW): 8 or 16.
func FewTargets(targets int64) int64 {
	few := int64(8)
	for few < targets {
		few *= 2
	}
	return few
}

// PlanScatterShared is PlanScatter's choice where no CPU pass applies (and
// for ops the few pass does not take on a driver with a loop limit):
// ScatterSorted for det, and for 64-bit elements without 64-bit atomics;
// else ScatterAtomic.
func PlanScatterShared(caps Caps, elemBytes int, det bool) ScatterPlan {
	if det {
		return ScatterPlan{Strategy: ScatterSorted, Reason: "bit-reproducible: stable sort by target, in-order folds"}
	}
	if elemBytes == 8 && !caps.Int64Atomics {
		return ScatterPlan{Strategy: ScatterSorted, Reason: "64-bit elements without 64-bit atomics"}
	}
	return ScatterPlan{Strategy: ScatterAtomic, Reason: "one position per lane, atomic fold into the target"}
}

// PlanHash plans the launches of the hash table kernel over n keys (see
// clkernels/common/hash_body.h) and returns the probe budget of one
// work-item per launch (0: unbounded). It is PlanElementwise's layout
// (contiguous runs per work-item on CPUs, coalesced lanes on GPUs), except
// under a driver loop limit: there each work-item takes 64 keys and gets a
// budget of probes that keeps its loops well under the limit, and the host
// relaunches for the keys that ran out of it.
func PlanHash(caps Caps, n int64) (Plan, int64) {
	p := PlanElementwise("hash", caps, n)
	if caps.LoopLimit <= 0 {
		if caps.Type != TypeCPU {
			// Each work-item adds its count of new keys to one counter
			// once, at its end: 8 groups per compute unit keep that to
			// about a hundred thousand atomics on a large GPU while
			// every lane still has several keys' loads in flight.
			cu := max(int64(caps.ComputeUnits), 1)
			p.Groups = FoldGroups(max(min(p.Tiles, 8*cu), 1), caps.MaxWorkGroupCount)
			p.Reason += "; 8 groups per compute unit (one counter update per work-item)"
		}
		return p, 0
	}
	items := int64(64)
	for i := range p.Knobs {
		if p.Knobs[i].Name == "ITEMS" {
			p.Knobs[i].Value = items
		}
	}
	p.TileElems = int64(p.LocalSize) * items
	p.Tiles = (n + p.TileElems - 1) / p.TileElems
	p.Groups = FoldGroups(max(p.Tiles, 1), caps.MaxWorkGroupCount)
	// The tile and item loops take ITEMS+1 iterations of the limit; the
	// probe and compare-and-swap loops share the rest. The driver runs a
	// subgroup's invocations as SIMD lanes of one loop, which iterates
	// while any lane still probes, so the lanes' budgets add up.
	lanes := int64(caps.SubgroupSize)
	if lanes <= 0 {
		lanes = 16
	}
	budget := max((loopCap(caps)-2*items-8)/lanes, 2)
	p.Reason += fmt.Sprintf("; %d keys per work-item, %d probes per launch", items, budget)
	return p, budget
}

// Union strategies of the sparse elementwise ops, chosen by PlanSparse.
const (
	// SparseRows is the CPU-shaped union: each work-item takes a chunk of
	// a sequence of the rows' markers and entries (long rows split, empty
	// rows cost a step) and merges row by row with two plain pointers,
	// reading the columns as they are stored (no keys).
	SparseRows = "rows"
	// SparseMergePath is the GPU-shaped union: every entry gets its 64-bit
	// key, and short chunks of the merged keys find their splits by binary
	// search and walk in lock-step branch-free steps.
	SparseMergePath = "mergepath"
)

// SparsePlan is how a sparse elementwise op merges its operands: the
// strategy and, for SparseRows, the launch (one chunk of TileElems
// positions per work-item).
type SparsePlan struct {
	Strategy string `json:"strategy"`
	Plan     Plan   `json:"plan"`
	// OnePass (SparseRows, CSR results without gradients): one merge pass
	// writes each chunk's entries into a scratch sized by its positions,
	// and a copy moves them to their place after the scan of the counts,
	// instead of a count pass and an emit pass that both merge.
	OnePass bool   `json:"one_pass,omitempty"`
	Reason  string `json:"reason"`
}

// PlanSparse plans the union of two sparse operands whose row-union
// sequence (rows' markers plus both operands' entries) has total
// positions: SparseRows on CPU drivers (PlanSparseRows), whose cores run
// long plain loops over the columns as stored; SparseMergePath on GPUs.
func PlanSparse(caps Caps, total int64) SparsePlan {
	if caps.Type != TypeCPU {
		return SparsePlan{Strategy: SparseMergePath, Reason: "gpu: keys merged in lock-step chunks"}
	}
	return PlanSparseRows(caps, total, 0)
}

// PlanSparseRows plans SparseRows with chunks of chunk positions, or with
// chunk 0 of about total/(64 per compute unit) positions (at least 4096),
// so that rows of any length balance over the cores; under a loop limit
// at most 2048, well under it.
func PlanSparseRows(caps Caps, total, chunk int64) SparsePlan {
	cu := max(int64(caps.ComputeUnits), 1)
	local := 1
	reason := "chunks of rows and entries per work-item, plain merges"
	if chunk <= 0 {
		chunk = max((total+64*cu-1)/(64*cu), 4096)
		if caps.LoopLimit > 0 {
			chunk = min(2048, loopCap(caps)/8)
		}
	}
	if caps.LoopLimit > 0 {
		local = pow2Local(caps, 8, 0)
		reason += fmt.Sprintf("; loop limit %d: %d positions per invocation", caps.LoopLimit, chunk)
	}
	chunks := max((total+chunk-1)/chunk, 1)
	p := Plan{Kernel: "sparse_rows", LocalSize: local, Knobs: []Knob{{Name: "ITEMS", Value: 1}, {Name: "CONTIG", Value: 1}},
		Tiles: chunks, TileElems: chunk, Reason: fmt.Sprintf("%s; %d chunks of %d", reason, chunks, chunk)}
	p.Groups = FoldGroups((chunks+int64(local)-1)/int64(local), caps.MaxWorkGroupCount)
	// A merge step costs a CPU core several cycles and the copy of an
	// entry a fraction of one: one merge and a copy beat two merges. Under
	// a loop limit (lavapipe's SIMD lanes) the two short walks stay.
	onePass := caps.LoopLimit <= 0
	if onePass {
		reason += "; one merge pass into a scratch, then a copy"
	}
	return SparsePlan{Strategy: SparseRows, Plan: p, OnePass: onePass, Reason: reason}
}

// Coalescing strategies of sparse COO keys, chosen by PlanCoalesce.
const (
	// CoalesceBuckets counts the keys per bucket of their high bits
	// (atomics), scatters them into their buckets, sorts each bucket by
	// (key, input position) and sums each key's values in input order.
	CoalesceBuckets = "buckets"
	// CoalesceRadix sorts the keys by a stable radix sort over their
	// significant bits and sums the runs by the in-order segmented sum.
	CoalesceRadix = "radix"
)

// CoalescePlan is how n sparse keys of keyBits significant bits are
// coalesced: the strategy and, for CoalesceBuckets, the bucket bits.
type CoalescePlan struct {
	Strategy   string `json:"strategy"`
	BucketBits int    `json:"bucket_bits"`
	Reason     string `json:"reason"`
}

// PlanCoalesce plans the coalescing of n keys of keyBits significant bits.
// CPU drivers without a loop limit take CoalesceBuckets (for n below
// 2^31): about 8 keys per bucket, so that one pass scatters the keys
// near their place and each core sorts short buckets in cache. Elsewhere
// (a GPU, a loop limit that a long bucket's sort could pass) the radix
// sort.
func PlanCoalesce(caps Caps, n int64, keyBits int) CoalescePlan {
	if caps.Type != TypeCPU || caps.LoopLimit > 0 || n >= 1<<31 {
		return CoalescePlan{Strategy: CoalesceRadix, Reason: "stable radix sort of the significant key bits"}
	}
	return PlanCoalesceBuckets(n, keyBits)
}

// PlanCoalesceBuckets is CoalesceBuckets with about 8 keys per bucket.
func PlanCoalesceBuckets(n int64, keyBits int) CoalescePlan {
	b := min(max(bits.Len64(uint64(n/8)), 1), max(keyBits, 1))
	return CoalescePlan{Strategy: CoalesceBuckets, BucketBits: b,
		Reason: fmt.Sprintf("cpu: %d buckets of the keys' high bits, each sorted in cache", 1<<b)}
}

// PlanCopy plans a copy of n 32-bit words with the copy kernel
// (clkernels/common/copy_body.h) and says whether the device should use
// it rather than its driver's buffer copy: on CPU OpenCL drivers, whose
// buffer copy runs on one thread (PoCL: about half of what the memory
// moves). The plan is one work-item per group and one group per core, each
// copying a contiguous run of 64 KiB chunks; under a driver loop limit,
// one chunk per group. Other devices keep their driver's copy (lavapipe's
// vkCmdCopyBuffer is several times faster than any of its shaders); tests
// run the kernel there by forcing it.
func PlanCopy(caps Caps, n int64) (Plan, bool) {
	const items = 16 << 10 // words per chunk: 64 KiB, under a loop limit's half
	stream := int64(0)
	if 4*n >= StreamMinBytes {
		stream = 1
	}
	p := Plan{Kernel: "copy", LocalSize: 1, TileElems: items,
		Knobs: []Knob{{Name: "ITEMS", Value: items}, {Name: "CONTIG", Value: 1}, {Name: "STREAM", Value: stream}}}
	p.Tiles = (n + items - 1) / items
	groups := min(p.Tiles, max(int64(caps.ComputeUnits), 1))
	if caps.LoopLimit > 0 {
		groups = p.Tiles
	}
	p.Groups = FoldGroups(max(groups, 1), caps.MaxWorkGroupCount)
	ours := caps.Type == TypeCPU && caps.Backend == OpenCL
	p.Reason = "driver copy"
	if ours {
		p.Reason = "cpu opencl: one work-item per group, one group per core, a contiguous run of 64 KiB chunks each"
		if stream != 0 {
			p.Reason += ", non-temporal stores"
		}
	}
	return p, ours
}

// PlanDiag plans the diag kernel's walk over count diagonal elements
// (clkernels/common/diag_body.h): PlanElementwise's, except on CPU OpenCL
// drivers, where a diagonal is short next to the copy before it (4096
// elements of a 4096^2 matrix) and elementwise tiles of 262144 elements
// would leave it to one core: there one work-item per group and a group
// per run of 1024 elements, which the driver's threads share.
func PlanDiag(caps Caps, count int64) Plan {
	p := PlanElementwise("diag", caps, count)
	if caps.Type != TypeCPU || caps.Backend != OpenCL {
		return p
	}
	const items = 1024 // a fixed knob: one compiled variant
	p.LocalSize = 1
	p.Knobs = []Knob{{Name: "ITEMS", Value: items}, {Name: "CONTIG", Value: 1}}
	p.TileElems = items
	p.Tiles = (count + items - 1) / items
	p.Groups = FoldGroups(max(p.Tiles, 1), caps.MaxWorkGroupCount)
	p.Reason = "cpu opencl: one work-item per group, runs of 1024 elements"
	return p
}
