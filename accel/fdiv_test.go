package accel

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
)

// TestFP32DivisionModes runs the ops whose float32 results divide, with
// the reference's bits promised, in the ways a GPU may divide
// (host.FP32DivMode) besides the CPU drivers' own, which every other test
// runs: in integers (FDIV=2: every Vulkan GPU, and OpenCL devices without
// the capability), picked with ACCEL_FP32_DIV; on Vulkan in the STRICT and the
// plain SPIR-V builds (ACCEL_VK_STRICT=0 picks the plain one, which
// devices without the float controls load). Each must give the
// reference's bits.
func TestFP32DivisionModes(t *testing.T) {
	modes := []struct {
		backend, div, strict string
		want                 host.FP32DivMode
	}{
		{host.OpenCL, "native", "", host.FP32DivNative},
		{host.OpenCL, "integer", "", host.FP32DivInteger},
		{host.Vulkan, "native", "1", host.FP32DivNative},
		{host.Vulkan, "integer", "1", host.FP32DivInteger},
		{host.Vulkan, "integer", "0", host.FP32DivInteger},
	}
	for _, m := range modes {
		t.Run(fmt.Sprintf("%s/div=%s/strict=%s", m.backend, m.div, m.strict), func(t *testing.T) {
			t.Setenv("ACCEL_FP32_DIV", m.div)
			t.Setenv("ACCEL_VK_STRICT", m.strict)
			d := ownTestDevice(t, m.backend)
			if m.want == host.FP32DivNative && !d.caps.FP32DivCorrect {
				t.Skipf("%s: its own float32 division is not known to be correctly rounded", d)
			}
			require.Equal(t, m.want, d.caps.FP32Div, "%s", d)
			testFP32Division(t, d)
		})
	}
}

// testFP32Division checks sparse divide (values and gradients), the
// bit-reproducible scatter_reduce mean and its backward, on float32,
// against the reference's bits.
func testFP32Division(t *testing.T, d *Device) {
	rng := rand.New(rand.NewSource(77))
	for _, shape := range [][]int64{{64, 300}, {5, 8, 40}} {
		x := genCSR(rng, shape, Float32, Int64, spGen{nnz: 3000, specials: true})
		y := genCSR(rng, shape, Float32, Int64, spGen{nnz: 3000, specials: true})
		dx, err := d.UploadCSR(x)
		require.NoError(t, err)
		dy, err := d.UploadCSR(y)
		require.NoError(t, err)
		checkCSROp(t, d, rng, SparseDivOp, x, y, dx, dy, fmt.Sprintf("%v divide", shape))
		dx.Release()
		dy.Release()
	}
	s := bwdShape{in: []int64{97}, idx: []int64{5000}, src: []int64{5000}}
	for _, self := range []bool{true, false} {
		in, idx, src, grad := bwdCase(rng, s, Float32, Mean, 5, 5, 5, 5)
		what := fmt.Sprintf("mean self=%v", self)
		want, err := RefScatterReduce(in, 0, idx, src, Mean, self)
		require.NoError(t, err, what)
		ts, release := uploadAll(t, d, in, idx, src)
		got := mustHost(t, must(t)(d.ScatterReduceDeterministic(ts[0], 0, ts[1], ts[2], Mean, self)))
		release()
		require.NoError(t, sameBits(got, want), "%s: deterministic scatter_reduce", what)
		runBwd(t, d, what+" backward", in, idx, src, grad, 0, Mean, self)
	}
}

// TestVulkanPlainBuilds runs the float tests that turn on NaNs, infinities
// and signed zeros (amax and amin of scatter_reduce on each CPU strategy
// and on atomics, of segment_reduce, and their gradients' ties) with the
// plain SPIR-V builds, which compare floats on their bits: devices
// without SignedZeroInfNanPreserve load them, and lavapipe, which has
// the control, loads the STRICT ones in every other test.
func TestVulkanPlainBuilds(t *testing.T) {
	t.Setenv("ACCEL_VK_STRICT", "0")
	d := ownTestDevice(t, host.Vulkan)
	for _, strategy := range []scatterPath{planned, scatterFew, scatterFewGroups, scatterAtomic} {
		t.Run("scatter/strategy="+strategyName(strategy), func(t *testing.T) {
			defer forceScatter(d, strategy)()
			testScatterFewBlocks(t, d, strategy == scatterFew || strategy == planned && d.caps.Type == host.TypeCPU)
		})
	}
	t.Run("segment_reduce", func(t *testing.T) {
		testSegmentReduce(t, d, []DType{Float32, Float64}, []Reduction{Amin, Amax})
	})
	t.Run("scatter_reduce backward", func(t *testing.T) {
		testScatterBackward(t, d, []Reduction{Amax, Amin})
	})
}
