package accel

import (
	"testing"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/reference"
)

// BenchmarkTrilIndices10000 measures tril_indices(10000, 10000) int64 into
// a reused output on each device, and reports its throughput against the
// device's own copy bandwidth measured in the same run.
func BenchmarkTrilIndices10000(b *testing.B) {
	devOnce.Do(openTestDevices)
	const n = 10000
	l, _ := newTriLayout("tril_indices", n, n, 0, false, Int64)
	bytes := 2 * l.N * 8
	for _, name := range []string{host.OpenCL, host.Vulkan} {
		d := devs[name]
		if d == nil {
			continue
		}
		b.Run(name, func(b *testing.B) {
			copyGBps, err := d.CopyBandwidth(256<<20, 5)
			if err != nil {
				b.Fatal(err)
			}
			out, err := d.TrilIndices(n, n, 0, Int64)
			if err != nil {
				b.Fatal(err)
			}
			defer out.Release()
			b.SetBytes(bytes)
			b.ResetTimer()
			var dev float64
			for i := 0; i < b.N; i++ {
				s, err := d.triRun("tril_indices", l, 0, out)
				if err != nil {
					b.Fatal(err)
				}
				dev += s
			}
			gbps := float64(bytes) * float64(b.N) / dev / 1e9
			b.ReportMetric(gbps, "devGB/s")
			b.ReportMetric(copyGBps, "copyGB/s")
			b.ReportMetric(gbps/copyGBps, "frac_copy")
		})
	}
	b.Run("reference", func(b *testing.B) {
		r, c := make([]int64, l.N), make([]int64, l.N)
		b.SetBytes(bytes)
		for i := 0; i < b.N; i++ {
			reference.TriIndicesInto(n, n, 0, false, r, c)
		}
	})
}
