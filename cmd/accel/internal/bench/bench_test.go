package bench_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/cmd/accel/internal/bench"
	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/reference"
)

// openDevice opens backend b's device as the library's tests do
// (ACCEL_TEST_opencl / ACCEL_TEST_vulkan pick another device than the
// backend's default), with Vulkan validation as asked. The error is the
// reason the device is missing.
func openDevice(b string, validation bool) (*accel.Device, error) {
	sel := b
	if env := os.Getenv("ACCEL_TEST_" + b); env != "" {
		sel = env
	}
	return accel.OpenWith(sel, accel.Options{Validation: validation, Timing: true})
}

// needDevice fails (under CI=true) or skips tb when its backend's device
// could not be opened.
func needDevice(tb testing.TB, b string, d *accel.Device, err error) {
	tb.Helper()
	if d != nil {
		return
	}
	if os.Getenv("CI") == "true" {
		require.NoError(tb, err, "no %s device in CI", b)
		require.FailNow(tb, "no device in CI", b)
	}
	tb.Skipf("no %s device: %v", b, err)
}

// BenchmarkTrilIndices10000 measures tril_indices(10000, 10000) int64 into
// a reused output on each device, and reports its throughput (device time
// from the device's counters) against the device's own copy bandwidth
// measured in the same run.
func BenchmarkTrilIndices10000(b *testing.B) {
	const n = 10000
	count, ok := reference.TriCount(n, n, 0, false)
	require.True(b, ok)
	bytes := 2 * count * 8
	for _, name := range []string{host.OpenCL, host.Vulkan} {
		d, openErr := openDevice(name, false)
		b.Run(name, func(b *testing.B) {
			needDevice(b, name, d, openErr)
			copyGBps, err := bench.CopyBandwidth(d, 256<<20, 5)
			require.NoError(b, err)
			require.Greater(b, copyGBps, 0.0)
			out, err := d.TrilIndices(n, n, 0, accel.Int64)
			require.NoError(b, err)
			defer out.Release()
			require.NoError(b, d.Sync())
			b.SetBytes(bytes)
			b.ResetTimer()
			s0 := d.Stats()
			for i := 0; i < b.N; i++ {
				// each call waits for its kernel, as the old synchronous
				// launch did
				require.NoError(b, d.TrilIndicesInto(out, n, n, 0))
				require.NoError(b, d.Sync())
			}
			b.StopTimer()
			devS := float64(d.Stats().Sub(s0).DeviceNs) / 1e9
			require.Greater(b, devS, 0.0, "no device time counted")
			gbps := float64(bytes) * float64(b.N) / devS / 1e9
			b.ReportMetric(gbps, "devGB/s")
			b.ReportMetric(copyGBps, "copyGB/s")
			b.ReportMetric(gbps/copyGBps, "frac_copy")
		})
		if d != nil {
			require.NoError(b, d.Close())
		}
	}
	b.Run("reference", func(b *testing.B) {
		r, c := make([]int64, count), make([]int64, count)
		b.SetBytes(bytes)
		for i := 0; i < b.N; i++ {
			reference.TriIndicesInto(n, n, 0, false, r, c)
		}
	})
}

// TestRunQuick runs bench.Run on tril_indices's quick cases on each
// device and checks every field of every result, and that the reference
// timings are shared through the cache across devices.
func TestRunQuick(t *testing.T) {
	const reps = 2
	// the quick tril_indices cases and their bytes: each index written once
	wantBytes := map[string]int64{}
	for _, c := range []struct {
		name string
		n    int64
		size int64
	}{{"1000x1000_int64", 1000, 8}, {"3000x3000_int64", 3000, 8}, {"3000x3000_int32", 3000, 4}} {
		count, ok := reference.TriCount(c.n, c.n, 0, false)
		require.True(t, ok)
		wantBytes[c.name] = 2 * count * c.size
	}
	refCache := map[string]float64{}
	refSeen := map[string]float64{}
	for _, b := range []string{host.OpenCL, host.Vulkan} {
		t.Run(b, func(t *testing.T) {
			d, err := openDevice(b, true)
			needDevice(t, b, d, err)
			defer func() { assert.NoError(t, d.Close()) }()
			rs, err := bench.Run(d, bench.Options{Ops: []string{"tril_indices"}, Reps: reps, Quick: true}, refCache)
			require.NoError(t, err)
			require.Len(t, rs, len(wantBytes))
			info := d.Info()
			for _, r := range rs {
				what := r.Op + "/" + r.Case
				assert.Equal(t, "tril_indices", r.Op, what)
				require.Contains(t, wantBytes, r.Case, "unexpected case %s", what)
				assert.Equal(t, wantBytes[r.Case], r.Bytes, "%s: bytes", what)
				assert.Equal(t, info.Backend, r.Backend, what)
				assert.Equal(t, b, r.Backend, what)
				assert.Equal(t, info.Name, r.Device, what)
				assert.Equal(t, reps, r.Reps, what)

				assert.Greater(t, r.MedianS, 0.0, "%s: median_s", what)
				assert.Greater(t, r.WallS, 0.0, "%s: wall_s", what)
				assert.Greater(t, r.ColdS, 0.0, "%s: cold_s", what)
				// tril_indices queues one kernel and never waits: each
				// call's only wait is the Sync that ends it.
				assert.Equal(t, 1.0, r.Syncs, "%s: syncs per call", what)
				assert.GreaterOrEqual(t, r.Submits, 1.0, "%s: submits per call", what)
				assert.GreaterOrEqual(t, r.Launches, 1.0, "%s: launches per call", what)

				assert.Greater(t, r.GBps, 0.0, "%s: gbps", what)
				assert.InEpsilon(t, float64(r.Bytes)/r.MedianS/1e9, r.GBps, 1e-9, "%s: gbps", what)
				assert.Greater(t, r.CopyGBps, 0.0, "%s: copy_gbps", what)
				assert.InEpsilon(t, r.GBps/r.CopyGBps, r.FracCopy, 1e-9, "%s: frac_copy", what)
				assert.GreaterOrEqual(t, r.CeilingGBps, r.CopyGBps, "%s: the ceiling is at least the device's copy", what)
				assert.Greater(t, r.DriverCopyGBps, 0.0, "%s: driver_copy_gbps", what)
				assert.Greater(t, r.KernelCopyGBps, 0.0, "%s: kernel_copy_gbps", what)
				assert.GreaterOrEqual(t, r.CeilingGBps, max(r.DriverCopyGBps, r.KernelCopyGBps), "%s: the ceiling is at least the faster copy", what)
				if r.HostCopyGBps > 0 {
					assert.GreaterOrEqual(t, r.CeilingGBps, r.HostCopyGBps, "%s: the ceiling is at least the host copy", what)
				}
				assert.InEpsilon(t, r.GBps/r.CeilingGBps, r.FracCeiling, 1e-9, "%s: frac_ceiling", what)
				assert.Greater(t, r.RefMedianS, 0.0, "%s: ref_median_s", what)
				assert.InEpsilon(t, r.RefMedianS/r.MedianS, r.Speedup, 1e-9, "%s: speedup", what)
				assert.Zero(t, r.Items, "%s: items (tril_indices is not rated per key)", what)
				assert.Zero(t, r.MItemsPerS, "%s: mkeys_per_s", what)
				assert.Contains(t, r.Plan, "tril_indices", "%s: plan", what)

				// warm calls take their outputs from the pool, and every
				// buffer is back in it after the case
				assert.GreaterOrEqual(t, r.Hits, int64(reps), "%s: pool hits", what)
				assert.Greater(t, r.Misses, int64(0), "%s: pool misses", what)
				assert.Zero(t, r.BytesInUse, "%s: pool bytes in use", what)
				assert.Greater(t, r.CapBytes, int64(0), "%s: pool cap", what)

				// the reference ran once per case, on the first device
				key := r.Op + "/" + r.Case
				assert.Equal(t, refCache[key], r.RefMedianS, "%s: ref_median_s is the cached one", what)
				if prev, ok := refSeen[key]; ok {
					assert.Equal(t, prev, r.RefMedianS, "%s: reference timed again on a second device", what)
				}
				refSeen[key] = r.RefMedianS
			}
		})
	}
}

// TestRunCasesNoRef: Options.Cases picks cases by name, and NoRef leaves
// the scalar reference out (no time, no speed-up).
func TestRunCasesNoRef(t *testing.T) {
	d, err := openDevice(host.OpenCL, true)
	needDevice(t, host.OpenCL, d, err)
	defer func() { assert.NoError(t, d.Close()) }()
	refCache := map[string]float64{}
	rs, err := bench.Run(d, bench.Options{Ops: []string{"tril_indices"}, Cases: []string{"3000x3000_int32"}, Reps: 1, Quick: true, NoRef: true}, refCache)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, "3000x3000_int32", rs[0].Case)
	assert.Greater(t, rs[0].MedianS, 0.0)
	assert.Zero(t, rs[0].RefMedianS)
	assert.Zero(t, rs[0].Speedup)
	assert.Empty(t, refCache, "no reference ran")
	assert.Zero(t, rs[0].WarmupCalls, "no warm-up asked for")
	rs, err = bench.Run(d, bench.Options{Ops: []string{"tril_indices"}, Cases: []string{"no such case"}, Reps: 1, Quick: true}, refCache)
	require.NoError(t, err)
	assert.Empty(t, rs)
}

// TestRunWarmup: Options.Warmup calls a case for at least that long
// before its measured calls.
func TestRunWarmup(t *testing.T) {
	d, err := openDevice(host.OpenCL, true)
	needDevice(t, host.OpenCL, d, err)
	defer func() { assert.NoError(t, d.Close()) }()
	rs, err := bench.Run(d, bench.Options{Ops: []string{"tril_indices"}, Cases: []string{"1000x1000_int64"}, Reps: 1, Quick: true, NoRef: true,
		Warmup: 50 * time.Millisecond}, nil)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Positive(t, rs[0].WarmupCalls)
	assert.Greater(t, float64(rs[0].WarmupCalls)*rs[0].WallS*3, 0.05*0.5, "the warm-up's calls took about its time: %d calls of %g s", rs[0].WarmupCalls, rs[0].WallS)
}

// TestCopyBandwidth checks the copy ceiling on each device: positive and
// finite.
func TestCopyBandwidth(t *testing.T) {
	for _, b := range []string{host.OpenCL, host.Vulkan} {
		t.Run(b, func(t *testing.T) {
			d, err := openDevice(b, true)
			needDevice(t, b, d, err)
			defer func() { assert.NoError(t, d.Close()) }()
			gbps, err := bench.CopyBandwidth(d, 16<<20, 3)
			require.NoError(t, err)
			assert.Greater(t, gbps, 0.0)
			assert.Less(t, gbps, 1e6, "GB/s beyond any memory")
		})
	}
}
