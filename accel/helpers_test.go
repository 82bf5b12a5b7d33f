package accel

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
)

// The devices every test runs on: the first usable OpenCL device and the
// first usable Vulkan device (PoCL and lavapipe in CI), Vulkan with the
// Khronos validation layer on, every tensor with a guard band that ToHost
// checks. A missing backend fails the test under
// CI=true and skips it otherwise.
var (
	devOnce sync.Once
	devs    = map[string]*Device{}
	devErrs = map[string]error{}
)

func openTestDevices() {
	for _, b := range []string{host.OpenCL, host.Vulkan} {
		d, err := openTestDevice(b)
		if err != nil {
			devErrs[b] = err
			continue
		}
		devs[b] = d
	}
}

// openTestDevice opens backend b's test device (ACCEL_TEST_<b> selects
// another) as the shared ones are: validation, guard bands, poisoned
// outputs. ACCEL_TEST_PLANS=gpu: plan as for a discrete GPU (every
// planner's GPU branch) and keep memory as one does (staged transfers,
// EmulateDiscrete) on whatever device this is: the GPU paths' correctness
// on the CPU drivers, before a GPU is at hand.
func openTestDevice(b string) (*Device, error) {
	sel := b
	if env := os.Getenv("ACCEL_TEST_" + b); env != "" {
		sel = env
	}
	gpu := os.Getenv("ACCEL_TEST_PLANS") == "gpu"
	return OpenWith(sel, Options{Validation: true, GuardBytes: 64, GPUPlans: gpu, Log: logBuild,
		Poison: []byte{0xA5, 0x5A, 0xC3, 0x3C}})
}

// ownTestDevice opens a device of backend b for t alone (a test that
// changes how kernels build through the environment), closed when t
// ends; a missing one fails t under CI=true and skips it otherwise.
func ownTestDevice(t *testing.T, b string) *Device {
	t.Helper()
	d, err := openTestDevice(b)
	if err != nil {
		require.NotEqual(t, "true", os.Getenv("CI"), "no %s device in CI: %v", b, err)
		t.Skipf("no %s device: %v", b, err)
	}
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return d
}

// forEachDevice runs f as a subtest on each backend's device.
func forEachDevice(t *testing.T, f func(t *testing.T, d *Device)) {
	t.Helper()
	devOnce.Do(openTestDevices)
	for _, b := range []string{host.OpenCL, host.Vulkan} {
		t.Run(b, func(t *testing.T) {
			d := devs[b]
			if d == nil {
				require.NotEqual(t, "true", os.Getenv("CI"), "no %s device in CI: %v", b, devErrs[b])
				t.Skipf("no %s device: %v", b, devErrs[b])
			}
			f(t, d)
		})
	}
}

// buildLogs collects the kernel build logs the test devices report
// (Options.Log): a kernel that builds with a warning on a driver fails the
// suite (TestMain), as the offline compiles fail on clang's for GPUs.
var buildLogs struct {
	sync.Mutex
	msgs []string
}

func logBuild(msg string) {
	if strings.Contains(msg, "build log") {
		buildLogs.Lock()
		buildLogs.msgs = append(buildLogs.msgs, msg)
		buildLogs.Unlock()
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if len(buildLogs.msgs) > 0 && code == 0 {
		os.Stderr.WriteString("kernel builds with warnings:\n" + strings.Join(buildLogs.msgs, "\n") + "\n")
		code = 1
	}
	for _, d := range devs {
		if err := d.Close(); err != nil && code == 0 {
			os.Stderr.WriteString("closing device: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// uploadAll copies host inputs to d; the returned release frees them.
func uploadAll(t *testing.T, d *Device, ts ...*Tensor) ([]*DeviceTensor, func()) {
	t.Helper()
	var out []*DeviceTensor
	release := func() {
		for _, x := range out {
			x.Release()
		}
	}
	for _, x := range ts {
		dx, err := d.Upload(x)
		if err != nil {
			release()
		}
		require.NoError(t, err, "upload %s", x)
		out = append(out, dx)
	}
	return out, release
}

// mustUpload copies x to d.
func mustUpload(t *testing.T, d *Device, x *Tensor) *DeviceTensor {
	t.Helper()
	dx, err := d.Upload(x)
	require.NoError(t, err, "upload %s", x)
	return dx
}

// mustHost copies x to the host and releases it.
func mustHost(t *testing.T, x *DeviceTensor) *Tensor {
	t.Helper()
	h, err := x.ToHost()
	require.NoError(t, err)
	x.Release()
	return h
}

// must returns a check of an op's result: the tensor, or the test fails.
func must(t *testing.T) func(x *DeviceTensor, err error) *DeviceTensor {
	t.Helper()
	return func(x *DeviceTensor, err error) *DeviceTensor {
		t.Helper()
		require.NoError(t, err)
		return x
	}
}

// hostZeros returns a zeroed host tensor (it panics on bad arguments:
// test inputs only).
func hostZeros(dt DType, shape ...int64) *Tensor {
	t, err := NewTensor(dt, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// requireElems compares two slices element by element and reports the
// first difference with its index (testify's diff of a long slice is
// unreadable). what describes the comparison (a format and its args).
func requireElems[T comparable](t *testing.T, want, got []T, what string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(what, args...)
	require.Len(t, got, len(want), msg)
	for i := range want {
		if got[i] != want[i] {
			require.Equal(t, want[i], got[i], "%s: element %d", msg, i)
		}
	}
}
