package accel

import (
	"github.com/accelkern/accel/reference"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
)

// TestKnobOverrides: $ACCEL_KNOBS parses into per-file overrides, bad
// text is an ErrInvalidArgument naming the variable, and a device applies
// the overrides to its plans, the reason saying so.
func TestKnobOverrides(t *testing.T) {
	m, err := knobOverrides(" scan:ITEMS=16,CHAIN=2; radix:RADIX_BITS=5,LOCAL=128,GROUPS=7")
	require.NoError(t, err)
	assert.Equal(t, map[string][]host.Knob{
		"scan":  {{Name: "ITEMS", Value: 16}, {Name: "CHAIN", Value: 2}},
		"radix": {{Name: "RADIX_BITS", Value: 5}, {Name: "LOCAL", Value: 128}, {Name: "GROUPS", Value: 7}},
	}, m)
	m, err = knobOverrides("")
	require.NoError(t, err)
	assert.Nil(t, m)
	for _, bad := range []string{"scan", "scan:ITEMS", "scan:ITEMS=x", ":ITEMS=1", "scan:LOCAL=0", "radix:MAXREG=-1", "radix:MAXREG=256"} {
		_, err := knobOverrides(bad)
		assert.ErrorIs(t, err, ErrInvalidArgument, bad)
		assert.ErrorContains(t, err, "ACCEL_KNOBS", bad)
	}
	d := &Device{knobs: m}
	d.knobs, _ = knobOverrides("radix:RADIX_BITS=5,LOCAL=128,GROUPS=7,RADIX_KPT=2")
	p := d.tuned(host.Plan{Kernel: "radix", LocalSize: 256, Groups: [3]int64{100, 1, 1}, Reason: "gpu",
		Knobs: []host.Knob{host.KnobRadixBits.Set(4)}})
	assert.Equal(t, int64(5), host.KnobRadixBits.Of(p))
	assert.Equal(t, int64(2), host.KnobRadixKpt.Of(p))
	assert.Equal(t, 128, p.LocalSize)
	assert.Equal(t, int64(7), p.TotalGroups())
	assert.Equal(t, "gpu [ACCEL_KNOBS]", p.Reason)
	q := host.Plan{Kernel: "scan", Reason: "x"}
	assert.Equal(t, q, d.tuned(q), "another file's plan is untouched")
	// the ranking's subgroups follow a LOCAL, unless set too (radixTuned:
	// the H100's Vulkan plan, 512 lanes, 16 subgroups of 32)
	d.caps, d.planner = h100, devicePlanner{}
	d.knobs = nil
	require.Equal(t, int64(16), host.KnobRadixSgs.Of(d.radixTuned(1<<20, 4, 1<<20)))
	for env, want := range map[string]int64{"radix:LOCAL=1024": 32, "radix:LOCAL=256,RADIX_SGS=4": 4, "radix:LOCAL=16": 0, "radix:RADIX_KPT=8": 16} {
		d.knobs, _ = knobOverrides(env)
		assert.Equal(t, want, host.KnobRadixSgs.Of(d.radixTuned(1<<20, 4, 1<<20)), env)
	}
	d.caps.SubgroupBallot = false
	d.knobs, _ = knobOverrides("radix:LOCAL=1024")
	assert.Equal(t, int64(0), host.KnobRadixSgs.Of(d.radixTuned(1<<20, 4, 1<<20)), "no ranking by subgroups: none added")
	d.caps = h100
	// a tile slot's entry in one scratch word only where the entries fit
	// it, whatever the override says
	d.knobs, _ = knobOverrides("radix:RADIX_EW=1")
	assert.Equal(t, int64(1), host.KnobRadixEw.Of(d.radixPlan("sort", 1<<20, 4, 1<<20)))
	assert.Equal(t, int64(2), host.KnobRadixEw.Of(d.radixPlan("sort", 1<<20, 4, 1<<33)), "entries past 2^32")
	d.knobs = nil
	assert.Equal(t, int64(2), host.KnobRadixEw.Of(d.radixPlan("sort", 1<<20, 4, 1<<32+1)), "the planner's own")
	// the tiles and their groups follow LOCAL x RADIX_KPT (an H200 run:
	// RADIX_KPT=8 on the 4096-key tiles' plan left half the tiles to
	// the fixup, 0.6 s against 1.3 ms)
	for env, tile := range map[string]int64{"radix:RADIX_KPT=4": 512 * 4, "radix:LOCAL=256": 256 * 6, "radix:LOCAL=128,RADIX_KPT=3": 384} {
		d.knobs, _ = knobOverrides(env)
		p := d.radixTuned(1<<24, 4, 1<<24)
		assert.Equal(t, tile, p.TileElems, env)
		assert.Equal(t, int64(p.LocalSize)*host.KnobRadixKpt.Of(p), p.TileElems, env)
		assert.Equal(t, (int64(1<<24)+tile-1)/tile, p.Tiles, env)
		assert.Equal(t, p.Tiles, p.TotalGroups(), env)
	}
	d.knobs, _ = knobOverrides("radix:RADIX_KPT=4,GROUPS=7")
	assert.Equal(t, int64(7), d.radixTuned(1<<24, 4, 1<<24).TotalGroups(), "GROUPS stays")
	// a register cap (NVIDIA's OpenCL builds take it, host.CLOptions)
	// leaves the tiles as they were
	d.knobs = nil
	before := d.radixTuned(1<<24, 4, 1<<24)
	d.knobs, _ = knobOverrides("radix:MAXREG=80")
	capped := d.radixTuned(1<<24, 4, 1<<24)
	assert.Equal(t, 80, capped.MaxRegs)
	capped.MaxRegs, capped.Reason = 0, before.Reason
	assert.Equal(t, before, capped, "only the cap changed")
	d.knobs, _ = knobOverrides("scan:MAXREG=64")
	assert.Equal(t, 64, d.tuned(host.Plan{Kernel: "scan", LocalSize: 256}).MaxRegs)
	assert.Equal(t, 0, d.radixTuned(1<<24, 4, 1<<24).MaxRegs, "another file's cap")
}

// TestUniquePlanKnobs: unique_plan:HASH and SHARE pick Unique's plan, and
// planUnique hashes 64-bit keys on GPUs and lavapipe only.
func TestUniquePlanKnobs(t *testing.T) {
	n := int64(1 << 20)
	sorted := planUnique(host.Caps{Backend: host.OpenCL, Type: host.TypeCPU, Int64: true, Int64Atomics: true}, n, 8)
	assert.False(t, sorted.Hash, "PoCL: %s", sorted)
	lvp := planUnique(host.Caps{Backend: host.Vulkan, Type: host.TypeCPU, Int64: true, Int64Atomics: true}, n, 8)
	assert.True(t, lvp.Hash, "lavapipe: %s", lvp)
	assert.False(t, planUnique(h100, n, 4).Hash, "32-bit keys")
	assert.False(t, planUnique(h100, uniqueHashMinN-1, 8).Hash, "few keys")
	gpu := planUnique(h100, n, 8)
	require.True(t, gpu.Hash)
	assert.Equal(t, n/uniqueHashShare, gpu.Capacity)

	d := &Device{}
	assert.Equal(t, gpu, d.tunedUnique(gpu, n), "no overrides")
	d.knobs, _ = knobOverrides("unique_plan:HASH=0")
	assert.False(t, d.tunedUnique(gpu, n).Hash)
	d.knobs, _ = knobOverrides("unique_plan:HASH=1,SHARE=16")
	up := d.tunedUnique(sorted, n)
	assert.True(t, up.Hash)
	assert.Equal(t, n/16, up.Capacity)
	assert.Contains(t, up.Reason, "[ACCEL_KNOBS]")
}

// TestScatterPlanKnobs: scatter_plan:PART turns the GPUs' partition of
// the bit-reproducible scatter on and off, and only for packed plans;
// SLOT its slots (0: count first).
func TestScatterPlanKnobs(t *testing.T) {
	s := scatterShape{n: 16 << 20, targets: 1 << 20, elemBytes: 4, red: Sum, includeSelf: true, det: true, flat: true}
	sp := planScatter(h100, s)
	require.True(t, sp.Part, "h100: %s", sp)
	require.True(t, sp.Slot, "h100: %s", sp)
	d := &Device{caps: h100}
	d.knobs, _ = knobOverrides("scatter_plan:PART=0")
	off := d.tunedScatter(sp, s)
	assert.False(t, off.Part)
	assert.False(t, off.Slot)
	assert.True(t, off.Packed)
	assert.Contains(t, off.Reason, "[ACCEL_KNOBS]")
	d.knobs, _ = knobOverrides("scatter_plan:PART=1")
	on := d.tunedScatter(off, s)
	assert.True(t, on.Part)
	assert.True(t, on.Slot, "a GPU's partition takes its slots")
	d.knobs, _ = knobOverrides("scatter_plan:SLOT=0")
	counted := d.tunedScatter(sp, s)
	assert.True(t, counted.Part && !counted.Slot && counted.CountFirst, "%s", counted)
	d.knobs, _ = knobOverrides("scatter_plan:SLOT=1")
	assert.True(t, d.tunedScatter(counted, s).Slot)
	d.caps = host.Caps{Backend: host.Vulkan, Type: host.TypeCPU}
	d.knobs, _ = knobOverrides("scatter_plan:PART=1,SLOT=1")
	cpuSlots := d.tunedScatter(off, s)
	assert.True(t, cpuSlots.Part && cpuSlots.Slot, "the knobs try the slots on a CPU driver too: %s", cpuSlots)
	wide := s
	wide.elemBytes = 8
	assert.False(t, d.tunedScatter(planScatter(h100, wide), wide).Part, "64-bit values")
	cpu := planScatter(host.Caps{Backend: host.Vulkan, Type: host.TypeCPU, ComputeUnits: 2, Int64: true, Int64Atomics: true}, s)
	assert.False(t, cpu.Part, "lavapipe sorts: %s", cpu)
}

// TestIndicePlanKnobs: ACCEL_KNOBS's indice_plan:GRID switches a regular
// conv on candidates between the dense grid and the sort of its targets,
// TABLE and PROBES the sites' hash table.
func TestIndicePlanKnobs(t *testing.T) {
	p := reference.SparseConv{BatchSize: 4, SpatialShape: []int64{11, 360, 360}, KSize: []int64{3, 3, 3},
		Stride: []int64{2, 2, 2}, Padding: []int64{0, 1, 1}, Dilation: []int64{1, 1, 1}}
	g := convGeom{l: 149100, k: 27, d: 3, p: p, target: []int64{5, 180, 180}}
	plan := planIndice(h100, g, SplitAuto, shapeAuto, false)
	require.Equal(t, int64(648000), plan.Grid)
	d := &Device{}
	d.knobs, _ = knobOverrides("indice_plan:GRID=0")
	off := d.tunedIndice(plan, g, SplitAuto, 648000)
	assert.Zero(t, off.Grid)
	assert.Contains(t, off.Reason, "[ACCEL_KNOBS]")
	d.knobs, _ = knobOverrides("indice_plan:GRID=1")
	assert.Equal(t, int64(648000), d.tunedIndice(off, g, SplitAuto, 648000).Grid)
	assert.Zero(t, d.tunedIndice(off, g, SplitAuto, indiceGridMax+1).Grid, "past the grid's bound")

	// the sites' hash table: a GPU's submanifold conv on candidates takes
	// it; TABLE=0 sorts the sites (the binary search's plan and
	// workspace), TABLE=1 takes it back, PROBES sets its reach
	sub := convGeom{l: 248636, k: 27, d: 3, inBits: keyBitsFor(4 * 41 * 1440 * 1440), p: reference.SparseConv{Subm: true,
		BatchSize: 4, SpatialShape: []int64{41, 1440, 1440}, KSize: []int64{3, 3, 3}}}
	ps := planIndice(h100, sub, SplitAuto, shapeAuto, false)
	require.Equal(t, sitesTable{Slots: 1 << 20, RowBits: 18, Probes: sitesTableProbes}, ps.Table)
	require.Equal(t, "hash table", ps.Search)
	d = &Device{caps: h100}
	d.knobs, _ = knobOverrides("indice_plan:TABLE=0")
	sorted := d.tunedIndice(ps, sub, SplitAuto, 0)
	assert.Zero(t, sorted.Table.Slots)
	assert.Equal(t, "sort+search", sorted.Search)
	assert.Equal(t, ps.WorkspaceBytes-8<<20, sorted.WorkspaceBytes)
	d.knobs, _ = knobOverrides("indice_plan:TABLE=1,PROBES=3")
	back := d.tunedIndice(sorted, sub, SplitAuto, 0)
	assert.Equal(t, sitesTable{Slots: 1 << 20, RowBits: 18, Probes: 3}, back.Table)
	assert.Equal(t, ps.WorkspaceBytes, back.WorkspaceBytes)
	d.knobs, _ = knobOverrides("indice_plan:PROBES=100000")
	assert.Equal(t, int64(sitesTableMaxProbes), d.tunedIndice(ps, sub, SplitAuto, 0).Table.Probes)
	// a CPU driver keeps its rows layout's sorted sites, forced or not
	pocl := host.Caps{Backend: host.OpenCL, Type: host.TypeCPU, ComputeUnits: 2, Int64: true, Int64Atomics: true}
	rows := planIndice(pocl, sub, SplitAuto, shapeAuto, false)
	require.Equal(t, pathSubmRows, rows.Path)
	assert.Zero(t, rows.Table.Slots)
	d = &Device{caps: pocl}
	d.knobs, _ = knobOverrides("indice_plan:TABLE=1")
	assert.Zero(t, d.tunedIndice(rows, sub, SplitAuto, 0).Table.Slots)
	// and takes it for an inverse, whose lookups run on candidates
	inv := g
	inv.p.Inverse = true
	assert.Positive(t, planIndice(pocl, inv, SplitAuto, shapeAuto, false).Table.Slots)
}
