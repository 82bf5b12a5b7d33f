package host_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
)

// TestMaxRegsOptions: a plan's register cap (Plan.MaxRegs) reaches the
// OpenCL build options only on devices that take NVIDIA's options
// (cl_nv_compiler_options), makes a kernel of its own (the cache key and
// the plan's line name it), and stays within [0, 255].
func TestMaxRegsOptions(t *testing.T) {
	nv := host.Caps{Backend: host.OpenCL, Type: host.TypeDiscreteGPU, Vendor: "NVIDIA Corporation",
		Platform: "NVIDIA CUDA OpenCL 3.0 CUDA 13.0.97", Extensions: []string{"cl_khr_fp64", "cl_nv_compiler_options"}}
	plan := host.Plan{Kernel: "radix", LocalSize: 256, Groups: [3]int64{1, 1, 1}, MaxRegs: 80}
	opts, err := host.CLOptions(nv, "radix", "k32", plan)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(opts, " -cl-nv-maxrregcount=80"), opts)
	plain, err := host.CLOptions(nv, "radix", "k32", host.Plan{Kernel: "radix", LocalSize: 256, Groups: [3]int64{1, 1, 1}})
	require.NoError(t, err)
	assert.NotContains(t, plain, "maxrregcount")
	assert.Equal(t, plain+" -cl-nv-maxrregcount=80", opts, "the cap is the only difference")

	other := nv
	other.Extensions = []string{"cl_khr_fp64"}
	for _, c := range []host.Caps{other, {Backend: host.OpenCL, Type: host.TypeCPU, Platform: "Portable Computing Language"}} {
		o, err := host.CLOptions(c, "radix", "k32", plan)
		require.NoError(t, err)
		assert.NotContains(t, o, "maxrregcount", "%s: a device without NVIDIA's options", c.Platform)
	}

	assert.Contains(t, plan.String(), " MAXREG=80")
	assert.NotContains(t, host.Plan{Kernel: "radix", LocalSize: 256}.String(), "MAXREG")
	for _, bad := range []int{-1, 256} {
		p := plan
		p.MaxRegs = bad
		assert.ErrorContains(t, p.Validate(nv), "register cap", "MaxRegs %d", bad)
	}
	assert.NoError(t, plan.Validate(nv))
}

// TestMaxRegsRefused: a device that takes a plan's register cap builds
// and runs the kernel with it; where the driver refuses the option in
// both spellings (PoCL, made to look as if it took NVIDIA's options), the
// kernel builds without the cap and runs, and the log says so.
func TestMaxRegsRefused(t *testing.T) {
	restore := host.SetNVCompilerOptions(func(c host.Caps) bool { return c.Backend == host.OpenCL })
	defer restore()
	var mu sync.Mutex
	var logs []string
	d, err := host.Open(host.OpenCL, host.Options{Log: func(m string) { mu.Lock(); logs = append(logs, m); mu.Unlock() }})
	if err != nil {
		openBackend(t, host.OpenCL) // fails in CI, skips elsewhere
		return
	}
	defer func() { assert.NoError(t, d.Close()) }()
	plan := host.PlanElementwise("tri", d.Caps(), 9)
	plan.MaxRegs = 64
	opts, err := host.CLOptions(d.Caps(), "tri_indices", "i64", plan)
	require.NoError(t, err)
	require.Contains(t, opts, "-cl-nv-maxrregcount=64")
	runTri(t, d, plan)
	// a second program with a cap builds in the form the driver took,
	// with no refused build first (no second log)
	odd := plan
	odd.LocalSize, odd.Groups = 8, [3]int64{3, 2, 1}
	odd.Knobs = []host.Knob{host.KnobItems.Set(1), host.KnobContig.Set(0)}
	before := d.Stats()
	runTri(t, d, odd)
	assert.Equal(t, int64(1), d.Stats().Sub(before).Compiles, "the second program built once")
	mu.Lock()
	defer mu.Unlock()
	refused := 0
	for _, m := range logs {
		if strings.Contains(m, "which the driver refused as -cl-nv-maxrregcount=N") {
			refused++
			assert.Contains(t, m, "built without the register cap", m)
		}
	}
	assert.True(t, refused > 0, "no log of the refused cap: %q", logs)
	assert.Equal(t, 1, refused, "the refusal is remembered: %q", logs)
}
