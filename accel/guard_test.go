package accel

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
)

// TestGuardBand: with Options.GuardBytes every tensor is a view into a
// larger buffer, with poisoned bands before its start and past its end
// that ToHost checks. The ops leave them alone at odd sizes of every
// element width (32-bit elements that kernels move in pairs included), and
// a write into either fails the read with ErrGuardBand.
func TestGuardBand(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b string) {
		d := openOwnDeviceWith(t, b, Options{Validation: true, GuardBytes: 61})
		defer d.Close()
		require.EqualValues(t, 64, d.guard, "the band rounds up to a multiple of 4")
		lead := d.leadBand()
		require.GreaterOrEqual(t, lead, d.guard)
		require.Zero(t, lead%d.caps.SubAlign, "the band before a tensor keeps its start aligned")
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
		// So is a write before the start (through the whole buffer: no
		// view reaches before its own start).
		y := mustUpload(t, d, mustTensor(FromInt32s([]int64{3}, []int32{1, 2, 3})))
		defer y.Release()
		require.NoError(t, d.h.Fill(y.buf.Underlying(), lead-8, 4, []byte{1, 2, 3, 4}))
		_, err = y.ToHost()
		require.ErrorIs(t, err, ErrGuardBand)
		require.ErrorContains(t, err, "byte 8 before its start")
	})
}

// TestGuardViews: kernels, copies and fills on a tensor in a view land at
// the view's offset in its buffer, and a device copy between two views of
// one buffer that overlap is refused.
func TestGuardViews(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b string) {
		d := openOwnDeviceWith(t, b, Options{Validation: true, GuardBytes: 16})
		defer d.Close()
		lead := d.leadBand()
		x := mustUpload(t, d, mustTensor(FromInt32s([]int64{5}, []int32{1, 2, 3, 4, 5})))
		defer x.Release()
		c := must(t)(d.Cumsum(x, false))
		defer c.Release()
		whole := make([]byte, lead+20)
		require.NoError(t, d.h.Download(c.buf.Underlying(), 0, whole))
		got, err := FromBytes(Int32, []int64{5}, whole[lead:lead+20])
		require.NoError(t, err)
		require.Equal(t, []int32{1, 3, 6, 10, 15}, got.Int32s(), "the kernel wrote at the view's offset")
		_, err = c.ToHost()
		require.NoError(t, err)

		all := c.buf.Underlying()
		v1, err := d.h.Sub(all, 0, lead+8)
		require.NoError(t, err)
		defer v1.Release()
		v2, err := d.h.Sub(all, lead, 8)
		require.NoError(t, err)
		defer v2.Release()
		require.Error(t, d.h.Copy(v1, lead-4, v2, 0, 8), "overlapping ranges of one buffer")
		require.Error(t, mustErr(d.h.Sub(all, 4, 8)), "a view's offset must be aligned")
		require.Error(t, mustErr(d.h.Sub(all, 0, all.Size()+1)), "a view must lie inside its buffer")
		require.Error(t, mustErr(d.h.Sub(all, 0, 0)), "an empty view")
	})
}

func mustErr(_ host.Buffer, err error) error { return err }
