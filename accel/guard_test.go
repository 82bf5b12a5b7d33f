package accel

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGuardBand: with Options.GuardBytes every tensor carries a poisoned
// band past its end that ToHost checks. The ops leave it alone at odd
// sizes of every element width (32-bit elements that kernels move in
// pairs included), and a write into it fails the read with ErrGuardBand.
func TestGuardBand(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b string) {
		d := openOwnDeviceWith(t, b, Options{Validation: true, GuardBytes: 61})
		defer d.Close()
		require.EqualValues(t, 64, d.guard, "the band rounds up to a multiple of 4")
		rng := rand.New(rand.NewSource(5))
		for _, n := range []int64{0, 1, 3, 7, 255, 257, 4097} {
			for _, dt := range []DType{Int32, Float32, Int64, Float64, Uint32} {
				if !d.supports(dt) {
					continue
				}
				x, _ := NewTensor(dt, n)
				fillKeys(rng, x, "small")
				dx := mustUpload(t, d, x)
				c := must(t)(d.Cumsum(dx, n%2 == 1))
				_, err := c.ToHost()
				require.NoError(t, err, "cumsum n=%d %s", n, dt)
				s, p, err := d.Sort(dx, false)
				require.NoError(t, err)
				_, err = s.ToHost()
				require.NoError(t, err, "sort n=%d %s", n, dt)
				_, err = p.ToHost()
				require.NoError(t, err, "sort perm n=%d %s", n, dt)
				for _, y := range []*DeviceTensor{c, s, p, dx} {
					y.Release()
				}
			}
		}
		for _, rows := range []int64{1, 3, 17} {
			for _, dt := range []DType{Int32, Int64} {
				tri := must(t)(d.TrilIndices(rows, rows+2, -1, dt))
				_, err := tri.ToHost()
				require.NoError(t, err, "tril_indices %d %s", rows, dt)
				tri.Release()
			}
		}
		// A write past the end is caught.
		x := mustUpload(t, d, mustTensor(FromInt32s([]int64{3}, []int32{1, 2, 3})))
		defer x.Release()
		require.NoError(t, d.h.Fill(x.raw(), 12+8, 4, []byte{1, 2, 3, 4}))
		_, err := x.ToHost()
		require.ErrorIs(t, err, ErrGuardBand)
		require.ErrorContains(t, err, "byte 8 past its end")
	})
}
