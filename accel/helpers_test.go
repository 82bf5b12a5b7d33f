package accel

import (
	"os"
	"sync"
	"testing"

	"github.com/accelkern/accel/host"
)

// The devices every test runs on: the first usable OpenCL device and the
// first usable Vulkan device (PoCL and lavapipe in CI), Vulkan with the
// Khronos validation layer on. A missing backend fails the test under
// CI=true and skips it otherwise.
var (
	devOnce sync.Once
	devs    = map[string]*Device{}
	devErrs = map[string]error{}
)

func openTestDevices() {
	for _, b := range []string{host.OpenCL, host.Vulkan} {
		sel := b
		if env := os.Getenv("ACCEL_TEST_" + b); env != "" {
			sel = env
		}
		d, err := OpenWith(sel, Options{Validation: true})
		if err != nil {
			devErrs[b] = err
			continue
		}
		d.poison = []byte{0xA5, 0x5A, 0xC3, 0x3C}
		devs[b] = d
	}
}

// forEachDevice runs f as a subtest on each backend's device.
func forEachDevice(t *testing.T, f func(t *testing.T, d *Device)) {
	t.Helper()
	devOnce.Do(openTestDevices)
	for _, b := range []string{host.OpenCL, host.Vulkan} {
		t.Run(b, func(t *testing.T) {
			d := devs[b]
			if d == nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("no %s device in CI: %v", b, devErrs[b])
				}
				t.Skipf("no %s device: %v", b, devErrs[b])
			}
			f(t, d)
		})
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range devs {
		if err := d.Close(); err != nil && code == 0 {
			os.Stderr.WriteString("closing device: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
