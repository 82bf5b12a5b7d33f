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

// TestDenormFix: the float32 variants get DENORM_FIX=1 on Vulkan GPUs
// without DenormPreserve (NVIDIA's flushed subnormals), 0 on lavapipe, on
// devices that keep subnormals and on OpenCL; ACCEL_DENORM_FIX overrides.
func TestDenormFix(t *testing.T) {
	t.Setenv("ACCEL_DENORM_FIX", "")
	f32 := Variant{Name: "f32.strict", Defines: []string{"DT=3", "STRICT=1"}}
	nv := Caps{Backend: Vulkan, Type: TypeDiscreteGPU, Vendor: "NVIDIA", FloatPreserve32: true}
	lvp := Caps{Backend: Vulkan, Type: TypeCPU, Vendor: "Mesa", FloatPreserve32: true}
	keeps := nv
	keeps.DenormPreserve32 = true
	cl := nv
	cl.Backend = OpenCL
	on, off := KnobDenormFix.Set(1), KnobDenormFix.Set(0)
	assert.Contains(t, DeviceKnobs(nv, f32), on)
	for name, c := range map[string]Caps{"lavapipe": lvp, "DenormPreserve": keeps, "OpenCL": cl} {
		assert.Contains(t, DeviceKnobs(c, f32), off, name)
	}
	assert.NotContains(t, DeviceKnobs(nv, Variant{Name: "f64", Defines: []string{"DT=4"}}), on, "float64")
	t.Setenv("ACCEL_DENORM_FIX", "1")
	assert.Contains(t, DeviceKnobs(lvp, f32), on)
	t.Setenv("ACCEL_DENORM_FIX", "0")
	assert.Contains(t, DeviceKnobs(nv, f32), off)
}
