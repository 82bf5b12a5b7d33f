package host

import (
	"fmt"
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

// WithItems is p, an elementwise plan over n elements, with items of them
// a work-item per tile (knob ITEMS) and its tiles and groups to match,
// one tile per group: how a planner bounds a work-item's loops under a
// driver's loop limit where each element loops more than once.
func (p Plan) WithItems(caps Caps, n, items int64) Plan {
	p.Knobs = slices.Clone(p.Knobs)
	for i := range p.Knobs {
		if p.Knobs[i].Name == KnobItems.Name() {
			p.Knobs[i].Value = items
		}
	}
	p.TileElems = int64(p.LocalSize) * items
	p.Tiles = (n + p.TileElems - 1) / p.TileElems
	p.Groups = FoldGroups(max(p.Tiles, 1), caps.MaxWorkGroupCount)
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
	if p.MaxRegs < 0 || p.MaxRegs > MaxRegsCap {
		return fmt.Errorf("plan %s: register cap %d outside [0, %d]", p.Kernel, p.MaxRegs, MaxRegsCap)
	}
	return nil
}

// LoopCap is how many iterations planners let one loop of one work-item
// run on a driver with Caps.LoopLimit (a margin under the limit).
func LoopCap(caps Caps) int64 {
	if caps.LoopLimit > 0 {
		return int64(caps.LoopLimit) / 2
	}
	return 1 << 62
}

// Pow2Local is the largest power of two at most want that the device's
// work-group size and its local memory (bytesPerItem each) allow.
func Pow2Local(caps Caps, want int, bytesPerItem int64) int {
	l := want
	for l > 1 && ((caps.MaxWorkGroupSize > 0 && l > caps.MaxWorkGroupSize) ||
		(caps.LocalMemBytes > 0 && int64(l)*bytesPerItem > caps.LocalMemBytes/2)) {
		l /= 2
	}
	return l
}

// StreamMinBytes is the size of a write-only stream from which CPU plans
// write it with non-temporal stores (knob STREAM): larger than the caches
// of a core or two, so the lines written would be evicted before anyone
// read them anyway, while the stores skip reading every line first.
const StreamMinBytes = 16 << 20

// EntryKnobs returns p without the knobs of folded arguments (ArgDecl.Fold)
// that entry e does not take: a planner sets such a knob on a plan that
// several passes share (SC_RED on a scatter's passes), and the passes
// whose code it does not touch then build once for every value of it
// (kernel caches key on the knobs). p itself where there are none.
func EntryKnobs(p Plan, e *EntryDecl) Plan {
	if !slices.ContainsFunc(p.Knobs, func(k Knob) bool { return e.foreign[k.Name] }) {
		return p
	}
	p.Knobs = slices.DeleteFunc(slices.Clone(p.Knobs), func(k Knob) bool { return e.foreign[k.Name] })
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
