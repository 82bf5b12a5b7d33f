package accel

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// scatterPath is how a scatter reduction runs (planScatter).
type scatterPath int

const (
	// scatterAtomic runs one position per lane and folds it into its
	// target with an atomic (a compare-and-swap on the element's bits).
	scatterAtomic scatterPath = iota
	// scatterSorted sorts the positions by target (a stable radix sort)
	// and folds each target's run in index order: bit-reproducible.
	scatterSorted
	// scatterOwned gives each work-item a range of targets; every
	// work-item walks all positions in index order and folds those it
	// owns with plain loads and stores: bit-reproducible, no atomics.
	scatterOwned
	// scatterPrivate gives each work-item a chunk of positions and a
	// private copy of the output to fold them into with plain loads and
	// stores, then merges the copies in work-item order: no atomics, the
	// same bits for the same number of work-items.
	scatterPrivate
	// scatterFew is scatterPrivate for at most kernels.ScFewMax targets:
	// each worker keeps its accumulators per target in registers (on CPU
	// OpenCL a vector register per target, folding a vector of positions
	// under each target's lane mask; under a loop limit a short run per
	// invocation) and writes its private copy; the merge is
	// scatterPrivate's. It takes what scatterShape.fewFits says; the rest
	// runs scatterPrivate's passes, or under a loop limit the shared
	// strategies.
	scatterFew
	// scatterFewGroups is the GPUs' pass for at most kernels.ScFewMax
	// targets (scatter_fewg): each work-group's lanes fold strided
	// positions of its range into accumulators per target in registers,
	// the group folds its lanes in scratch and writes one copy per group,
	// and scatterPrivate's merge folds the copies in group order. No
	// atomics: every dtype and reduction, the same bits on every run of
	// one plan (not the reference's order).
	scatterFewGroups
	// scatterBucket is the CPU drivers' bit-reproducible path where the
	// output outgrows a core's cache (planBucket): the workers split the
	// positions in order, sort them stably into buckets of consecutive
	// targets (a count, a prefix sum, a placing pass), and each folds its
	// own buckets' positions in index order with plain loads and stores
	// (the reference's bits), the bucket's targets in its cache.
	scatterBucket
)

var scatterPathNames = [...]string{"atomic", "sorted", "owned", "private", "few", "fewgroups", "bucket"}

// scatterPaths lists the paths the random tests force on every op
// (scatterFewGroups, whose kernel builds take PoCL long, is forced by the
// few-targets tests, and the GPU plans take it for hot targets;
// scatterBucket, which only CPU OpenCL drivers plan, by the
// bit-reproducible and fault tests there).
var scatterPaths = []scatterPath{scatterAtomic, scatterSorted, scatterOwned, scatterPrivate, scatterFew}

func (p scatterPath) String() string {
	if p >= 0 && int(p) < len(scatterPathNames) {
		return scatterPathNames[p]
	}
	return fmt.Sprintf("scatterPath(%d)", int(p))
}

// cpuPass says whether the path runs a reducing pass of its own
// (scatterPlan.Pass): the CPU drivers' passes and the GPUs' few-groups.
func (p scatterPath) cpuPass() bool {
	return p == scatterOwned || p == scatterPrivate || p == scatterFew || p == scatterFewGroups || p == scatterBucket
}

// scatterShape is what a scatter's plan depends on.
type scatterShape struct {
	n, targets  int64 // positions, outputs
	elemBytes   int
	red         Reduction
	includeSelf bool
	det         bool // the reference's bits (index order per target)
	flat        bool // a 1-d loop shape (the few pass takes no other)
}

// shape is the plan input of a scatter of g into targets outputs.
func (g scatterGeom) shape(targets int64, dt DType, includeSelf, det bool) scatterShape {
	return scatterShape{n: g.idxN, targets: targets, elemBytes: dt.Size(), red: g.red,
		includeSelf: includeSelf, det: det, flat: len(g.loopShape) == 1}
}

// counted says whether the CPU passes count hits per target (a mean, an
// assign, or a reduction without the input).
func (s scatterShape) counted() bool { return s.red == Mean || s.red == Assign || !s.includeSelf }

// scatterPlan is a scatter's plan: its path and, for the CPU passes, the
// launch of the reducing pass (one work-item per owner or worker, the
// reduction compiled in as knob SC_RED) and of the merge of the copies.
type scatterPlan struct {
	Path  scatterPath
	Pass  host.Plan // owned, private, few: the reducing pass
	Merge host.Plan // private, few: the merge of the copies into the output
	Few   int64     // few, fewgroups: the targets each worker tests (SC_FEW: 8 or 16)
	// bucket: Merge is the one-item prefix sum's launch, and the output's
	// offsets fall in Buckets buckets of 2^SpanLog.
	Buckets, SpanLog int64
	// sorted: the values' bits travel with their targets in one word
	// through the sort (32-bit elements, fewer than 2^32 targets).
	Packed bool
	// Part (packed only): each target's positions grouped in one pass and
	// sorted in place by position (scatter_pcount, scatter_place,
	// scatter_pfold), with the sort as the way back where a target has
	// more than kernels.ScPartMax hits.
	Part bool
	// Slot (Part only): the slotted partition (planSlots): buckets of
	// 2^SlotBits consecutive targets with SlotCap slots each, placed with
	// no count before (scatter_pslot, scatter_sfold), the counted
	// partition where a bucket overflows its slots. CountFirst keeps the
	// counted partition (a knob, or a test).
	Slot       bool
	CountFirst bool
	SlotBits   int64
	SlotCap    int64
	// CAS (atomic, and the partitions' count, place and slot passes):
	// sums, means, hit counts and slot claims go by compare-and-swap
	// loops that start from a plain load (knob SC_CAS), not by the
	// device's atomic adds: on drivers that run a vector's atomics a lane
	// at a time (host.Caps.SerialAtomics).
	CAS    bool
	Reason string
}

// partAvgHits is the most hits per target on average (positions over
// targets) for which GPUs try the partition plan (CPU drivers sort: on
// lavapipe rand16M_1M_sum_det took 573-664 ms partitioned against
// 503-535 sorted, its placing pass's atomics alone about 360): at 32,
// uniform random
// targets keep every target's hits under kernels.ScPartMax (128) but with
// odds far below 1e-9 per call; skewed indices are caught by the count
// pass, which sends the scatter to the sort.
const partAvgHits = 32

// tunedScatter is sp with $ACCEL_KNOBS's "scatter_plan" overrides, for
// trying the bit-reproducible plans on a GPU without a rebuild: PART=0
// sorts the packed words, PART=1 tries the partition (packed plans of
// fewer than 2^32 positions); SLOT=0 counts the partition's hits first,
// SLOT=1 tries its slots (planSlots) on any device.
func (d *Device) tunedScatter(sp scatterPlan, s scatterShape) scatterPlan {
	ks, ok := d.knobs["scatter_plan"]
	if !ok {
		return sp
	}
	want := sp.Slot || d.caps.Type != host.TypeCPU
	for _, k := range ks {
		switch k.Name {
		case "PART":
			sp.Part = k.Value != 0 && sp.Packed && s.partFits()
		case "SLOT":
			want, sp.CountFirst = k.Value != 0, k.Value == 0
		}
	}
	sp = withCAS(d.caps, s, withSlots(sp, s, want))
	sp.Reason += " [ACCEL_KNOBS]"
	return sp
}

// pfoldLocal is the work-group size of the partitions' folds
// (scatter_pfold, scatter_sfold), whose scratch is the GPU few-targets
// pass's: kernels.ScFewMax words a work-item (OpenCL C), 128 work-items'
// worth in the SPIR-V, twice that with the knob SC_FEWG_SH (the few pass's
// scratch columns), so pfoldCap(pfoldLocal, wide) position and value words
// a tile on both backends.
const pfoldLocal = 128

// pfoldCap is the words a tile of a partition's fold sorts in scratch at
// a work-group size of local (at most pfoldLocal: the SPIR-V holds no
// more), twice as many where wide (SC_FEWG_SH).
func pfoldCap(local int64, wide bool) int64 {
	return min(local, pfoldLocal) * kernels.ScFewMax / 2 * int64(1+b2i(wide))
}

// foldWide says whether the partitions' folds take the doubled scratch
// (SC_FEWG_SH=1: 16 KB a group of 32-bit words): where half the local
// memory holds it at pfoldLocal work-items, as on every GPU with 48 KB or
// more. A tile then holds twice the targets or buckets, and with a
// work-item each, about three quarters of the group's work-items sort and
// fold where three eighths did (rand16M_1M: 96 buckets a tile of 128
// work-items, from 48); the group's scratch doubles (an H100 keeps 14
// groups of 128 on a multiprocessor where it kept 16).
func foldWide(caps host.Caps) bool {
	return host.Pow2Local(caps, pfoldLocal, 2*kernels.ScFewMax*4) == pfoldLocal
}

// foldScratch is foldWide for d, or what ACCEL_KNOBS sets SC_FEWG_SH to
// in kernel's plans (scatter_pfold, scatter_sfold), so that the fold's
// tiles follow its scratch and a GPU run compares the two widths on
// tiles that fit each.
func (d *Device) foldScratch(kernel string) bool {
	if v, ok := d.knobValue(kernel, "SC_FEWG_SH"); ok {
		return v != 0
	}
	return foldWide(d.caps)
}

// planPfold is the partition's fold of n words over tg targets: tiles of
// consecutive targets whose words, n/tg a target on average, fill three
// quarters of the scratch (uniformly spread targets' tiles then overflow
// with odds far below 1e-9; a tile that does is sorted in device memory,
// a round trip a step, and folded all the same). A work-item takes a
// target; groups loop over the tiles, at most 16 a compute unit, or one
// tile each under a loop limit (where a tile is at most a group's
// targets, so that a work-item sorts at most one). The reduction is
// compiled in (SC_RED): with it a run-time value, RADV's compiler gave
// the pass 96 registers a lane where 36 serve one reduction.
func planPfold(caps host.Caps, n, tg int64, red Reduction, wide bool) host.Plan {
	return planFoldTiles(caps, "scatter_pfold", "target", n, tg, caps.LoopLimit > 0, red, wide)
}

// planFoldTiles is a partition's fold of n words over units (targets, or
// buckets of them) for kernel: tiles of consecutive units whose words, n
// / units a unit on average, fill three quarters of the scratch (doubled
// where wide: foldWide), at most a group's work-items where perLocal (a
// work-item a unit); groups loop over the tiles, at most 16 a compute
// unit, or one tile each under a loop limit.
func planFoldTiles(caps host.Caps, kernel, unit string, n, units int64, perLocal bool, red Reduction, wide bool) host.Plan {
	local := int64(host.Pow2Local(caps, pfoldLocal, int64(1+b2i(wide))*kernels.ScFewMax*4))
	capw := pfoldCap(local, wide)
	per := max(min(3*capw*units/max(4*n, 1), units), 1)
	if perLocal {
		per = min(per, local)
	}
	tiles := (units + per - 1) / per
	groups := tiles
	if caps.LoopLimit == 0 {
		groups = min(groups, 16*max(int64(caps.ComputeUnits), 1))
	}
	return host.Plan{Kernel: kernel, LocalSize: int(local), Groups: host.FoldGroups(max(groups, 1), caps.MaxWorkGroupCount),
		Tiles: tiles, TileElems: per, Knobs: []host.Knob{host.KnobScRed.Set(int64(red)), host.KnobScFewgSh.Set(b2i(wide))},
		Reason: fmt.Sprintf("tiles of %d %ss (about %d of the scratch's %d words each), a work-item a %s", per, unit, (per*n+units-1)/max(units, 1), capw, unit)}
}

// partFits says whether the partition takes s: its words hold a
// position in 32 bits (the value's bits in the other 32).
func (s scatterShape) partFits() bool { return s.n < 1<<32 }

// The slotted partition's buckets (planSlots): at least slotMinHits hits
// expected in each, of at most 2^slotMaxBits targets.
const (
	slotMinHits = 16
	slotMaxBits = 6
)

// planSlots is the slotted partition's geometry for s: buckets of 2^bits
// consecutive targets, the fewest that expect at least slotMinHits hits
// (n / targets a target on average), each with room for capw words: the
// expected hits m, six standard deviations of a Poisson count of mean m
// and 8 more, rounded up to 8. Uniformly spread targets overflow a bucket
// with odds of about 1e-10 (a call over a million buckets, 1e-4), and
// the slots take at most 3x the counted partition's words (m = 16: 48
// slots). ok is false where no bucket of at most 2^slotMaxBits targets
// expects slotMinHits hits, where a bucket would take more than
// kernels.ScPartMax slots (its words are sorted in place, as a target's
// are), or where a position does not fit the 32 - bits bits its word
// keeps for it (the target within its bucket above it).
func planSlots(s scatterShape) (bits, capw int64, ok bool) {
	if s.n <= 0 || s.targets <= 0 {
		return 0, 0, false
	}
	for bits = 0; bits <= slotMaxBits; bits++ {
		m := float64(s.n) * float64(int64(1)<<bits) / float64(s.targets)
		if m < slotMinHits {
			continue
		}
		capw = (int64(math.Ceil(m+6*math.Sqrt(m)+8)) + 7) &^ 7
		return bits, capw, capw <= kernels.ScPartMax && s.n <= 1<<(32-bits)
	}
	return 0, 0, false
}

// withSlots is partition plan sp with its slots where want (or a GPU
// plan: the counted partition's count and scan, a pass over every
// position and a wait, are what the slots save) and planSlots allows them,
// unless sp keeps the count (CountFirst).
func withSlots(sp scatterPlan, s scatterShape, want bool) scatterPlan {
	bits, capw, ok := planSlots(s)
	if !sp.Part || sp.CountFirst || !want || !ok {
		sp.Slot, sp.SlotBits, sp.SlotCap = false, 0, 0
		return sp
	}
	if sp.SlotCap == 0 {
		bucket := "a bucket a target"
		if bits > 0 {
			bucket = fmt.Sprintf("buckets of %d targets", int64(1)<<bits)
		}
		sp.Reason += fmt.Sprintf("; slotted: %s, %d slots each (about %.0f hits expected), "+
			"placed with no count first (the counted partition where a bucket overflows)", bucket, capw, float64(s.n)*float64(int64(1)<<bits)/float64(s.targets))
	}
	sp.Slot, sp.SlotBits, sp.SlotCap = true, bits, capw
	return sp
}

// withCAS is sp with CAS set where the driver runs a vector's atomics a
// lane at a time (host.Caps.SerialAtomics) and sp has atomics that
// compare-and-swap loops from a plain load can take: the atomic pass's
// sums and means, the partitions' hit counts and slot claims.
func withCAS(caps host.Caps, s scatterShape, sp scatterPlan) scatterPlan {
	if sp.CAS || !caps.SerialAtomics {
		return sp
	}
	switch {
	case sp.Path == scatterAtomic && (s.red == Sum || s.red == Mean):
		sp.CAS = true
		sp.Reason += "; sums and hit counts by compare-and-swap loops from a plain load: the driver runs a vector's atomics a lane at a time"
	case sp.Path == scatterSorted && sp.Part:
		sp.CAS = true
		sp.Reason += "; hit counts and slots claimed by compare-and-swap loops from a plain load: the driver runs a vector's atomics a lane at a time"
	}
	return sp
}

// casKnobs is the knob the passes with atomics take where sp.CAS: SC_CAS=1.
func (sp scatterPlan) casKnobs() []host.Knob {
	if !sp.CAS {
		return nil
	}
	return []host.Knob{host.KnobScCas.Set(1)}
}

// slotBuckets is the slotted partition's buckets over targets.
func (sp scatterPlan) slotBuckets(targets int64) int64 {
	return (targets + int64(1)<<sp.SlotBits - 1) >> sp.SlotBits
}

// planSfold is the slotted partition's fold of n words in buckets
// (scatter_sfold): tiles of consecutive buckets, at most a group's
// work-items (a work-item a bucket), whose words fill three quarters of
// the scratch on average as planPfold's tiles do; groups loop over the
// tiles, at most 16 a compute unit (one tile each under a loop limit).
func planSfold(caps host.Caps, n, buckets int64, red Reduction, wide bool) host.Plan {
	return planFoldTiles(caps, "scatter_sfold", "bucket", n, buckets, true, red, wide)
}

// partTargetsPerHit is the most targets per position for which the
// partition plan is tried: its counts and its fold cover every target
// (12 bytes each), the sort only the positions (about 60 bytes each).
const partTargetsPerHit = 4

// String prints the path, its reason and its launches.
func (s scatterPlan) String() string {
	if !s.Path.cpuPass() {
		return fmt.Sprintf("%s: %s", s.Path, s.Reason)
	}
	str := fmt.Sprintf("%s: %s; %s", s.Path, s.Reason, s.Pass)
	if s.Path == scatterBucket {
		str += fmt.Sprintf("; %d buckets of %d targets; scan %s", s.Buckets, int64(1)<<s.SpanLog, s.Merge)
	} else if s.Path != scatterOwned && s.Merge.Kernel != "" {
		str += "; merge " + s.Merge.String()
	}
	return str
}

// maxHits is the most positions a scatter path that counts each target's
// hits in a Uint32 buffer takes (the atomic, owned, private and few
// passes, and the backward's count pass): a larger scatter that counts
// hits takes the sorted path.
const maxHits = math.MaxUint32

// planScatter plans a scatter reduction of s on a device of caps: the
// path the sizes call for (chooseScatter), then what the geometry allows
// (completeScatter).
func planScatter(caps host.Caps, s scatterShape) scatterPlan {
	return completeScatter(caps, s, chooseScatter(caps, s))
}

// chooseScatter picks a path from the sizes alone.
//
// On a CPU driver without a loop limit a core is a work-item with a long
// plain loop, and atomics are what costs: with det it takes scatterOwned
// (each of one work-item per compute unit reads every index but folds only
// its own range of targets, in index order); without, scatterPrivate (one
// private copy of the output per compute unit, merged at the end) where
// the copies fit in an eighth of the device's memory and the cost model
// (cpuPrivateNs, cpuOwnedNs) says they beat the owners, scatterFew where
// that is so and the
// targets are at most kernels.ScFewMax, else scatterOwned. On a CPU driver
// with a loop limit, scatterFew for at most kernels.ScFewMax targets
// without det, where its workers fit the limit. On other devices det takes
// scatterSorted, and so do 64-bit elements without 64-bit atomics;
// everything else takes scatterAtomic (sharedScatter).
func chooseScatter(caps host.Caps, s scatterShape) scatterPlan {
	n, targets := s.n, s.targets
	if caps.Type == host.TypeCPU && caps.LoopLimit == 0 {
		workers := max(int64(caps.ComputeUnits), 1)
		p := host.Plan{Kernel: "scatter_cpu", LocalSize: 1,
			Knobs: []host.Knob{host.KnobItems.Set(1), host.KnobContig.Set(1)}}
		privBytes := workers * targets * int64(s.elemBytes+4)
		budget := caps.GlobalMemBytes / 8
		if caps.MaxAllocBytes > 0 {
			budget = min(budget, caps.MaxAllocBytes)
		}
		owners := max(min(workers, targets, 4), 1)
		if !s.det && workers > 1 && privBytes <= budget && cpuPrivateNs(workers, n, targets, s.elemBytes) <= cpuOwnedNs(owners, workers, n) {
			p.Groups = host.FoldGroups(workers, caps.MaxWorkGroupCount)
			p.Tiles, p.TileElems = workers, (n+workers-1)/workers
			p.Reason = fmt.Sprintf("%d workers, %d positions each, private copies of %d targets", workers, p.TileElems, targets)
			if targets <= kernels.ScFewMax {
				return scatterPlan{Path: scatterFew, Pass: p,
					Reason: "cpu driver, few targets: per core, a vector of accumulators per target folded under lane masks, merged in core order"}
			}
			return scatterPlan{Path: scatterPrivate, Pass: p,
				Reason: "cpu driver: a private copy of the output per core, plain loads and stores, merged in core order"}
		}
		// Every owner walks all positions, so more owners add reads but
		// cannot take the walk's time below one full pass: a few suffice.
		if bp, ok := planBucket(caps, s, workers, budget, false); ok {
			return bp
		}
		p.Groups = host.FoldGroups(owners, caps.MaxWorkGroupCount)
		p.Tiles, p.TileElems = owners, n
		p.Reason = fmt.Sprintf("%d owners, each walks all %d positions", owners, n)
		return scatterPlan{Path: scatterOwned, Pass: p,
			Reason: "cpu driver: each core owns a range of targets and folds them in index order (the reference's bits)"}
	}
	if caps.Type == host.TypeCPU && !s.det && targets <= kernels.ScFewMax && n > 0 {
		// A CPU driver with a loop limit (llvmpipe), where atomics on a
		// few hot targets serialize: scatterFew with many short workers,
		// each folding a chunk that keeps its iterations (a position, and
		// a test of each of the few targets) under the limit, and as
		// many workers as the merge's loop over them allows.
		lc := host.LoopCap(caps)
		chunk := max(lc/(fewTargets(targets)+2), 1)
		local := int64(host.Pow2Local(caps, 64, 0))
		groups := (n + chunk*local - 1) / (chunk * local)
		if groups*local <= lc {
			p := host.Plan{Kernel: "scatter_cpu", LocalSize: int(local), Knobs: []host.Knob{host.KnobItems.Set(1), host.KnobContig.Set(1)},
				Groups: host.FoldGroups(groups, caps.MaxWorkGroupCount), Tiles: groups * local, TileElems: chunk,
				Reason: fmt.Sprintf("%d workers, at most %d positions each, private copies of %d targets", groups*local, chunk, targets)}
			return scatterPlan{Path: scatterFew, Pass: p,
				Reason: "cpu driver with a loop limit, few targets: short runs per invocation, every target tested, merged in order"}
		}
	}
	if caps.Type != host.TypeCPU && s.fewGroupsFit() && n >= fewGroupsMin {
		if sp, ok := planFewGroups(caps, n, targets, s.elemBytes, fewGroupsScratch(caps)); ok {
			return sp
		}
	}
	return sharedScatter(caps, s)
}

// fewGroupsMin is the fewest positions the GPUs' few-groups pass takes:
// below it the atomics' contention is short and one launch fewer wins.
const fewGroupsMin = 4096

// planFewGroups is the GPUs' few-targets plan (scatterFewGroups): groups
// of 128 lanes (fewer where the scratch, a word of elemBytes per lane and
// target, twice that with scratch columns, would take more than half the
// local memory), each lane folding at least fewGroupsPerLane positions,
// and at most 16 groups per compute unit (the merge folds one copy per
// group and target, in order, so the copies stay few). scratch picks the
// lanes' accumulators (knob SC_FEWG_SH: fewGroupsScratch). Under a loop
// limit (llvmpipe, where a test forces the path) a lane's loop and the
// merge's stay under it, or ok is false.
func planFewGroups(caps host.Caps, n, targets int64, elemBytes int, scratch bool) (sp scatterPlan, ok bool) {
	words, where := int64(1), "registers"
	if scratch {
		words, where = 2, "scratch columns"
	}
	local := int64(host.Pow2Local(caps, 128, words*kernels.ScFewMax*int64(elemBytes)))
	groups := max(min((n+local*fewGroupsPerLane-1)/(local*fewGroupsPerLane), 16*max(int64(caps.ComputeUnits), 1)), 1)
	if lc := host.LoopCap(caps); caps.LoopLimit > 0 {
		groups = max(groups, (n+local*lc-1)/(local*lc))
		if groups > lc {
			return scatterPlan{}, false
		}
	}
	p := host.Plan{Kernel: "scatter_gpu_few", LocalSize: int(local), Groups: host.FoldGroups(groups, caps.MaxWorkGroupCount),
		Knobs: []host.Knob{host.KnobScFewgSh.Set(b2i(scratch))},
		Tiles: groups, TileElems: (n + groups - 1) / groups,
		Reason: fmt.Sprintf("%d groups of %d lanes, %d positions each group, one copy of %d targets per group", groups, local, (n+groups-1)/groups, targets)}
	return scatterPlan{Path: scatterFewGroups, Pass: p,
		Reason: "gpu, few targets: lanes fold in " + where + ", groups in scratch, one copy per group merged in order (no atomics on hot targets)"}, true
}

// fewGroupsScratch is the few-groups pass's choice of accumulators
// (planFewGroups): scratch columns on Vulkan, whose drivers may see the
// target count (a specialization constant) too late to unroll the
// register loop (the H200's Vulkan took 18x its OpenCL's time on the
// same register plan, session 3); registers on OpenCL, which folds the
// count in as a macro (0.24 ms for 16M float32 positions into 16 targets
// on the H200, 18x PyTorch). ACCEL_KNOBS=scatter_gpu_few:SC_FEWG_SH=0|1
// tries the other on a GPU.
func fewGroupsScratch(caps host.Caps) bool { return caps.Backend == host.Vulkan }

// fewGroupsPerLane is the fewest positions a lane of the few-groups pass
// folds: the group's fold in scratch (a tree of barriers per target)
// stays small beside it.
const fewGroupsPerLane = 32

// The CPU drivers' cost model of chooseScatter, in nanoseconds of the
// slowest core, from BenchmarkScatterPaths on PoCL (2-core EPYC, 16M
// float32 positions): perm16M sum took 357 ms with private copies, 2.51 s
// with 3 owners (each stepping over every position) and 1.38 s with
// atomics; rand16M_1M 86 ms, 804 ms and 539 ms. Atomics never win on a CPU
// driver, so the choice is between private copies, whose fill and merge
// grow with cores x targets, and owners, whose walk does not shrink with
// cores.
const (
	cpuOwnerStepNs      = 100 // an owner's step over one position
	cpuFoldNs           = 10  // a worker's fold of one position into its copy
	cpuCopyBytesPerNs   = 5   // one core's share of filling and merging the copies
	cpuMemBytesPerNsCap = 40  // all cores together
)

// cpuPrivateNs is the private pass's time: each worker's positions, and
// the fill, fold and merge of workers copies of targets elements (and hit
// counts), bound by one core's rate or by the memory's.
func cpuPrivateNs(workers, n, targets int64, elemBytes int) int64 {
	copies := 3 * workers * targets * int64(elemBytes+4)
	return n/workers*cpuFoldNs + copies/min(workers*cpuCopyBytesPerNs, cpuMemBytesPerNsCap)
}

// cpuOwnedNs is the owned pass's time: every owner steps over every
// position, owners sharing the cores.
func cpuOwnedNs(owners, workers, n int64) int64 {
	return (owners + workers - 1) / workers * n * cpuOwnerStepNs
}

// sharedScatter is the choice where no CPU pass applies: scatterSorted for
// det, and for 64-bit elements without 64-bit atomics; else scatterAtomic.
func sharedScatter(caps host.Caps, s scatterShape) scatterPlan {
	if s.det {
		return scatterPlan{Path: scatterSorted, Reason: "bit-reproducible: stable sort by target, in-order folds"}
	}
	if s.elemBytes == 8 && !caps.Int64Atomics {
		return scatterPlan{Path: scatterSorted, Reason: "64-bit elements without 64-bit atomics"}
	}
	return scatterPlan{Path: scatterAtomic, Reason: "one position per lane, atomic fold into the target"}
}

// completeScatter makes sp (chooseScatter's, or a path a test forces) one
// the geometry of s allows, and completes its launches:
//   - the few pass takes what fewFits says; the rest takes the private
//     pass of the same launch, or under a loop limit the shared paths;
//   - a scatter that counts hits with more than maxHits positions takes
//     the sorted path, which counts runs in 64 bits;
//   - the CPU passes get the reduction compiled in (SC_RED, so the
//     per-position loop has no switch), the few pass its targets tested
//     and whether it counts (SC_FEW, SC_COUNTED), and the copies' merge
//     its launch.
func completeScatter(caps host.Caps, s scatterShape, sp scatterPlan) scatterPlan {
	if sp.Path == scatterFewGroups && !s.fewGroupsFit() {
		sp = sharedScatter(caps, s)
	}
	if sp.Path == scatterFew && !s.fewFits(caps.LoopLimit > 0) {
		if caps.LoopLimit > 0 {
			sp = sharedScatter(caps, s)
		} else {
			sp.Path, sp.Reason = scatterPrivate, sp.Reason+"; not a 1-d reduction the lanes take: private copies"
		}
	}
	if s.n > maxHits && sp.Path != scatterSorted && (s.red == Mean || s.red == Assign || !s.includeSelf) {
		sp = scatterPlan{Path: scatterSorted,
			Reason: sp.Reason + fmt.Sprintf("; over %d positions with hit counts: the sorted path, which counts runs in 64 bits", int64(maxHits))}
	}
	if sp.Path == scatterSorted && s.elemBytes == 4 && keyBitsFor(s.targets) <= 32 {
		sp.Packed = true
		sp.Reason += "; target and value in one word through the sort (no offsets sorted, no gather)"
		if s.partFits() && (sp.Part || caps.Type != host.TypeCPU && s.n <= partAvgHits*s.targets && s.targets <= partTargetsPerHit*s.n) {
			sp.Part = true
			sp.Reason += fmt.Sprintf("; at most %d hits per target on average: grouped in one pass by per-target slots, "+
				"each target's words sorted in place by position (the sort where one has more than %d)", int64(partAvgHits), int64(kernels.ScPartMax))
		}
	}
	if !sp.Packed {
		sp.Part = false // positions and values in one word, or not at all
	}
	sp = withSlots(sp, s, sp.Slot || caps.Type != host.TypeCPU)
	sp = withCAS(caps, s, sp)
	if !sp.Path.cpuPass() {
		return sp
	}
	if sp.Path == scatterFewGroups {
		// only the target count compiled in (the unrolled registers): the
		// reduction and the counting are uniform branches on a GPU, and
		// one build per dtype and count serves them all
		sp.Few = fewTargets(s.targets)
		sp.Pass.Knobs = append(append([]host.Knob(nil), sp.Pass.Knobs...), host.KnobScFew.Set(sp.Few))
		sp.Merge = planScatterMerge(caps, s.targets)
		return sp
	}
	sp.Pass.Knobs = append(append([]host.Knob(nil), sp.Pass.Knobs...), host.KnobScRed.Set(int64(s.red)))
	if sp.Path == scatterFew {
		sp.Few = fewTargets(s.targets)
		sp.Pass.Knobs = append(sp.Pass.Knobs, host.KnobScFew.Set(sp.Few),
			host.KnobScCounted.Set(b2i(s.red == Mean || !s.includeSelf)))
	}
	if sp.Path != scatterOwned && sp.Path != scatterBucket {
		sp.Merge = planScatterMerge(caps, s.targets)
	}
	return sp
}

// Where the CPU drivers' bit-reproducible scatter takes scatterBucket
// (planBucket): outputs of more than bucketMinBytes (beyond a core's
// L2, where scatter_owned's folds miss), scatters of at least
// bucketMinN positions (the passes' launches and the slots' traffic
// stay small beside them), and buckets of about bucketBytes of output
// and counts (a core's L2 holds one while it folds).
const (
	bucketMinBytes = 1 << 20
	bucketMinN     = 1 << 18
	bucketBytes    = 256 << 10
	bucketMaxPairs = 1 << 22 // buckets x workers: the prefix sum is one work-item's loop
)

// planBucket plans scatterBucket for s on workers cores where it pays
// (bucketMinBytes, bucketMinN) or, with force (the tests), at any size:
// buckets of a power of two targets, about bucketBytes of output and
// counts each and at least four per worker (a worker folds its share of
// whole buckets), and the slots (a 32-bit offset and a value per
// position) within budget.
func planBucket(caps host.Caps, s scatterShape, workers, budget int64, force bool) (scatterPlan, bool) {
	per := int64(s.elemBytes)
	if s.counted() {
		per += 4
	}
	if !force && (s.targets*per <= bucketMinBytes || s.n < bucketMinN) {
		return scatterPlan{}, false
	}
	if s.n*int64(4+s.elemBytes) > budget || s.n > maxHits && s.counted() {
		return scatterPlan{}, false
	}
	spanLog := int64(bits.Len64(uint64(max(bucketBytes/per, 1)))) - 1
	for spanLog > 0 && s.targets>>spanLog < 4*workers {
		spanLog--
	}
	spanLog = min(spanLog, 31)
	buckets := max((s.targets+(int64(1)<<spanLog)-1)>>spanLog, 1)
	if bucketRow(buckets)*workers > bucketMaxPairs {
		return scatterPlan{}, false
	}
	p := host.Plan{Kernel: "scatter_cpu", LocalSize: 1, Groups: host.FoldGroups(workers, caps.MaxWorkGroupCount),
		Knobs: []host.Knob{host.KnobItems.Set(1), host.KnobContig.Set(1)}, Tiles: workers, TileElems: (s.n + workers - 1) / workers,
		Reason: fmt.Sprintf("%d workers, %d positions each, then %d buckets each", workers, (s.n+workers-1)/workers, (buckets+workers-1)/workers)}
	scan := host.Plan{Kernel: "scatter_cpu", LocalSize: 1, Groups: host.FoldGroups(1, caps.MaxWorkGroupCount),
		Knobs: []host.Knob{host.KnobItems.Set(1), host.KnobContig.Set(1)}, Tiles: 1, TileElems: buckets * workers,
		Reason: "one work-item"}
	return scatterPlan{Path: scatterBucket, Pass: p, Merge: scan, Buckets: buckets, SpanLog: spanLog,
		Reason: "cpu driver, an output beyond a core's cache: positions placed in buckets of targets in index order, each core folds its buckets (the reference's bits)"}, true
}

// fewFits says whether the few pass takes s: at most kernels.ScFewMax
// targets, a 1-d loop shape, and a reduction with the input included that
// needs no hit counts: sum or prod, or amax or amin while the targets are
// no more than a 64-byte register's lanes (a compare and a select per
// target and vector, and a NaN and zero check per vector). Measured on
// PoCL (2-core EPYC, AVX-512, 16M positions, min of 15 calls, few against
// private): float32 amax into 16 targets 9.8 against 14.0 ms, into 8 6.1
// against 15.1; float64 amax into 8 9.8 against 15.7, into 16 16.4
// against 15.5; float64 sum into 16 11.5 against 13.6.
//
// With counts (on drivers with a loop limit, where the few pass folds
// scalars anyway) it also takes mean and reductions without the input:
// hit counts per copy, for the merge. On lavapipe, hot16M_16_mean went
// from 272 ms with atomics to 35-60 ms.
func (s scatterShape) fewFits(counts bool) bool {
	if !s.flat || s.targets > kernels.ScFewMax || !s.includeSelf && !counts {
		return false
	}
	switch s.red {
	case Sum, Prod:
		return true
	case Amax, Amin:
		return counts || s.targets*int64(s.elemBytes) <= 64
	case Mean:
		return counts
	}
	return false
}

// fewGroupsFit says whether the few-groups pass takes s: a 1-d loop
// shape, at most kernels.ScFewMax targets, a reduction (an assign's
// winner is the last writer's, which lanes folding in strides do not
// keep), and no det (the order is not the reference's).
func (s scatterShape) fewGroupsFit() bool {
	return s.flat && s.targets <= kernels.ScFewMax && s.red != Assign && !s.det
}

// fewTargets is the number of targets the few pass tests for targets
// outputs (compiled in as knob SC_FEW): 8 or 16. Measured on PoCL (2-core
// EPYC, AVX-512, 16M float32 positions, min of 15 calls): into 32 targets
// the lanes spill and take 15.5 ms for a sum where the private pass takes
// 9.8; into 16, 8.5 against 11.8 (so kernels.ScFewMax is 16).
func fewTargets(targets int64) int64 {
	few := int64(8)
	for few < targets {
		few *= 2
	}
	return few
}

// planScatterMerge plans the merge of the private and few passes' copies
// into outputs targets: host.PlanElementwise, except under a loop limit,
// where each work-item takes one output (ITEMS 1), so that the merge's
// loop over the copies is all of its iterations (chooseScatter keeps the
// copies under half the limit).
func planScatterMerge(caps host.Caps, outputs int64) host.Plan {
	p := host.PlanElementwise("scatter_merge", caps, outputs)
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
	p.Groups = host.FoldGroups(max(p.Tiles, 1), caps.MaxWorkGroupCount)
	p.Reason += "; one output per work-item (the merge loops over the copies)"
	return p
}
