package accel

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPastStorageRange runs one op of each family on tensors larger than
// the Vulkan device's maxStorageBufferRange (128 MiB on lavapipe), with
// elements past the range read and written: kernels reach buffers by
// device address, so no binding limits them. OpenCL runs the same sizes.
func TestPastStorageRange(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		limit := int64(128 << 20)
		if r := d.caps.MaxStorageRange; r > 0 {
			limit = r
		}
		if 3*limit > d.caps.MaxAllocBytes*2 || limit > 1<<30 {
			t.Skipf("storage range %d against max allocation %d: too large to test here", limit, d.caps.MaxAllocBytes)
		}
		rng := rand.New(rand.NewSource(9))

		// cumsum (the primitives): int32 elements past the range.
		n := limit/4 + 4099
		x, _ := NewTensor(Int32, n)
		for i := range x.Int32s() {
			x.Int32s()[i] = int32(i%7 - 3)
		}
		dx := mustUpload(t, d, x)
		got := mustHost(t, must(t)(d.Cumsum(dx, false)))
		dx.Release()
		var run int32
		for i, v := range x.Int32s() {
			run += v
			if got.Int32s()[i] != run {
				require.Equal(t, run, got.Int32s()[i], "cumsum element %d of %d", i, n)
			}
		}

		// diagonal_scatter: a float32 matrix past the range, its diagonal
		// running to the last row.
		side := int64(1)
		for side*side*4 <= limit {
			side += 64
		}
		in, _ := NewTensor(Float32, side, side)
		for i := range in.Float32s() {
			in.Float32s()[i] = float32(i % 1000)
		}
		src, _ := NewTensor(Float32, side-1)
		for i := range src.Float32s() {
			src.Float32s()[i] = -float32(i)
		}
		want, err := RefDiagonalScatter(in, src, -1, 0, 1)
		require.NoError(t, err)
		ts, release := uploadAll(t, d, in, src)
		gotD := mustHost(t, must(t)(d.DiagonalScatter(ts[0], ts[1], -1, 0, 1)))
		release()
		require.NoError(t, sameBits(gotD, want), "diagonal_scatter %dx%d", side, side)

		// scatter_reduce (sum, int64): targets past the range, crowded.
		targets := limit/8 + 5003
		base, _ := NewTensor(Int64, targets)
		const m = 1 << 18
		idx, _ := NewTensor(Int64, m)
		vals, _ := NewTensor(Int64, m)
		for i := int64(0); i < m; i++ {
			idx.Int64s()[i] = targets - 1 - rng.Int63n(min(targets, 1<<16)) // the last 64K targets
			if i%2 == 0 {
				idx.Int64s()[i] = rng.Int63n(targets)
			}
			vals.Int64s()[i] = rng.Int63n(100) - 50
		}
		wantS, err := RefScatterReduce(base, 0, idx, vals, Sum, true)
		require.NoError(t, err)
		ts, release = uploadAll(t, d, base, idx, vals)
		gotS := mustHost(t, must(t)(d.ScatterReduce(ts[0], 0, ts[1], ts[2], Sum, true)))
		release()
		requireElems(t, wantS.Int64s(), gotS.Int64s(), "scatter_reduce sum into %d targets", targets)
	})
}
