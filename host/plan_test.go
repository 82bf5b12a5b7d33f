package host

import (
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

// PlanElementwiseWrite streams large outputs on CPU drivers only.
func TestPlanElementwiseWrite(t *testing.T) {
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

}

// TestPlanWithItems: an elementwise plan reshaped to fewer items a
// work-item keeps its other knobs, covers every element with one tile per
// group, and leaves the plan it came from as it was.
func TestPlanWithItems(t *testing.T) {
	lavapipe := Caps{Backend: Vulkan, Type: TypeCPU, ComputeUnits: 2, LoopLimit: 65535, MaxWorkGroupCount: [3]int64{65535, 65535, 65535}}
	p := PlanElementwise("k", lavapipe, 1<<20)
	q := p.WithItems(lavapipe, 1<<20, 16)
	assert.Equal(t, int64(16), q.Knob("ITEMS"))
	assert.Equal(t, p.Knob("CONTIG"), q.Knob("CONTIG"))
	assert.Equal(t, int64(q.LocalSize)*16, q.TileElems)
	assert.Equal(t, q.Tiles, q.TotalGroups())
	assert.GreaterOrEqual(t, q.Tiles*q.TileElems, int64(1<<20))
	assert.Equal(t, int64(1024), p.Knob("ITEMS"), "the original plan is unchanged")
}
