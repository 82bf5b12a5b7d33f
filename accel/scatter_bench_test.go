package accel

import (
	"fmt"
	"math/rand"
	"testing"
)

// BenchmarkScatterPaths times scatter_reduce sum of n float32 positions
// into targets on each path the planner could take on this machine's
// devices (go test -bench ScatterPaths -run '^$'): the measurements
// behind chooseScatter's choice between private copies, owners and
// atomics.
func BenchmarkScatterPaths(b *testing.B) {
	for _, backend := range []string{"opencl", "vulkan"} {
		d, err := openTestDevice(backend)
		if err != nil {
			b.Logf("no %s device: %v", backend, err)
			continue
		}
		for _, c := range []struct {
			name   string
			n, tgt int64
			perm   bool
		}{{"perm16M", 16 << 20, 16 << 20, true}, {"rand16M_1M", 16 << 20, 1 << 20, false}} {
			rng := rand.New(rand.NewSource(1))
			in, _ := NewTensor(Float32, c.tgt)
			src, _ := NewTensor(Float32, c.n)
			idx, _ := NewTensor(Int64, c.n)
			if c.perm {
				for i, v := range rng.Perm(int(c.n)) {
					idx.Int64s()[i] = int64(v)
				}
			} else {
				for i := range idx.Int64s() {
					idx.Int64s()[i] = rng.Int63n(c.tgt)
				}
			}
			di, _ := d.Upload(in)
			dx, _ := d.Upload(idx)
			ds, _ := d.Upload(src)
			for _, path := range []scatterPath{planned, scatterAtomic, scatterPrivate, scatterOwned} {
				undo := forceScatter(d, path)
				b.Run(fmt.Sprintf("%s/%s/%s", backend, c.name, strategyName(path)), func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						out, err := d.ScatterReduce(di, 0, dx, ds, Sum, true)
						if err != nil {
							b.Fatal(err)
						}
						if err := d.Sync(); err != nil {
							b.Fatal(err)
						}
						out.Release()
					}
				})
				undo()
			}
			di.Release()
			dx.Release()
			ds.Release()
		}
		d.Close()
	}
}
