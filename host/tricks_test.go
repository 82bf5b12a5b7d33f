package host

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNVTricks: OpenCL builds for NVIDIA's GPUs get NV_TRICKS=1 (PTX's
// float add, device_tricks.h), no other device does, and the options to
// retry a build without them turn only that knob off.
func TestNVTricks(t *testing.T) {
	nv := Caps{Backend: OpenCL, Type: TypeDiscreteGPU, Vendor: "NVIDIA Corporation", Platform: "NVIDIA CUDA OpenCL 3.0 CUDA 13.0.97"}
	on := Knob{Name: "NV_TRICKS", Value: 1}
	assert.Contains(t, DeviceKnobs(nv, Variant{}), on)
	pocl := Caps{Backend: OpenCL, Type: TypeCPU, Vendor: "AuthenticAMD", Platform: "Portable Computing Language OpenCL 3.0 PoCL 3.1"}
	vk := nv
	vk.Backend = Vulkan
	for _, c := range []Caps{pocl, vk, {Backend: OpenCL, Type: TypeDiscreteGPU, Vendor: "Advanced Micro Devices, Inc.", Platform: "AMD Accelerated Parallel Processing"}} {
		assert.NotContains(t, DeviceKnobs(c, Variant{}), on, "%s %s", c.Backend, c.Vendor)
	}
	opts, err := CLOptions(nv, "scatter", "f32a", Plan{LocalSize: 64})
	require.NoError(t, err)
	require.Contains(t, opts, "-DNV_TRICKS=1")
	bare, was := withoutNVTricks(opts)
	assert.True(t, was)
	assert.Equal(t, strings.Replace(opts, "-DNV_TRICKS=1", "-DNV_TRICKS=0", 1), bare)
	again, was := withoutNVTricks(bare)
	assert.False(t, was, "off already")
	assert.Equal(t, bare, again)
}

// TestDenormFix: the Vulkan backend loads the float32 builds that keep
// subnormals themselves (V.strictf) on GPUs without DenormPreserve
// (NVIDIA's flushed them), not on lavapipe, nor where the DenormPreserve
// builds load, nor for float64; ACCEL_DENORM_FIX overrides.
func TestDenormFix(t *testing.T) {
	t.Setenv("ACCEL_DENORM_FIX", "")
	t.Setenv("ACCEL_VK_STRICT", "")
	nv := Caps{Backend: Vulkan, Type: TypeDiscreteGPU, Vendor: "NVIDIA", FloatPreserve32: true, FloatPreserve64: true}
	lvp := Caps{Backend: Vulkan, Type: TypeCPU, Vendor: "Mesa", FloatPreserve32: true, FloatPreserve64: true}
	keeps := nv
	keeps.DenormPreserve32 = true
	for _, file := range []string{"scatter", "segment", "scatter_bwd", "sparse"} {
		assert.Equal(t, "f32.strictf", StrictVariant(nv, file, "f32"), file)
		assert.Equal(t, "f32.strict", StrictVariant(lvp, file, "f32"), file)
		assert.Equal(t, "f32.strictd", StrictVariant(keeps, file, "f32"), file)
		assert.Equal(t, "f64.strict", StrictVariant(nv, file, "f64"), file)
	}
	assert.Equal(t, "f32a.strictf", StrictVariant(nv, "scatter", "f32a"))
	t.Setenv("ACCEL_DENORM_FIX", "1")
	assert.Equal(t, "f32.strictf", StrictVariant(lvp, "scatter", "f32"))
	t.Setenv("ACCEL_DENORM_FIX", "0")
	assert.Equal(t, "f32.strict", StrictVariant(nv, "scatter", "f32"))
	t.Setenv("ACCEL_VK_STRICT", "0")
	assert.Equal(t, "f32", StrictVariant(nv, "scatter", "f32"), "the plain build, which keeps subnormals itself")
}
