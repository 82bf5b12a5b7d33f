package accel

import (
	"errors"
	"testing"

	"github.com/accelkern/accel/host"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWarm checks Device.Warm on each backend's device, opened fresh so
// that nothing is built yet: Warm of an op builds its kernels, a call of
// the warmed form afterwards builds nothing and is right, an unknown
// name is an *ArgError naming it that builds nothing, no names do
// nothing, and a closed device is ErrClosed.
func TestWarm(t *testing.T) {
	for _, b := range []string{host.OpenCL, host.Vulkan} {
		t.Run(b, func(t *testing.T) {
			d := ownTestDevice(t, b)
			require.NoError(t, d.Warm())
			assert.Zero(t, d.Stats().Compiles, "no names: nothing built")

			err := d.Warm("scatter_reduce", "nope")
			var ae *ArgError
			require.ErrorAs(t, err, &ae)
			assert.ErrorIs(t, err, ErrInvalidArgument)
			assert.Equal(t, "warm", ae.Op)
			assert.Contains(t, err.Error(), `"nope"`)
			assert.Zero(t, d.Stats().Compiles, "an unknown name: nothing built")

			require.NoError(t, d.Warm("tri", "scatter_reduce", "scatter_reduce"))
			warmed := d.Stats().Compiles
			assert.Positive(t, warmed)

			// the warmed forms, at other sizes: nothing left to build
			in, _ := NewTensor(Float32, 3000)
			src, _ := NewTensor(Float32, 50000)
			idx, _ := NewTensor(Int64, 50000)
			for i := range src.Float32s() {
				src.Float32s()[i] = float32(i % 5)
				idx.Int64s()[i] = int64(i) * 31 % 3000
			}
			want, err := RefScatterReduce(in, 0, idx, src, Sum, true)
			require.NoError(t, err)
			ts, free := uploadAll(t, d, in, idx, src)
			defer free()
			out := must(t)(d.ScatterReduce(ts[0], 0, ts[1], ts[2], Sum, true))
			defer out.Release()
			require.NoError(t, Compare(mustHost(t, out), want, Bits), "small integers add up exactly")
			tri := must(t)(d.TriuIndices(300, 200, 1, Int64))
			defer tri.Release()
			wantTri, err := RefTriuIndices(300, 200, 1, Int64)
			require.NoError(t, err)
			require.NoError(t, Compare(mustHost(t, tri), wantTri, Bits))
			assert.Equal(t, warmed, d.Stats().Compiles, "the warmed ops built nothing more")

			require.NoError(t, d.Close())
			assert.ErrorIs(t, d.Warm("cumsum"), ErrClosed)
		})
	}
}

// TestWarmEveryOp warms every family on the shared test devices (guard
// bands, Vulkan's validation layer): every op's warm-up runs.
func TestWarmEveryOp(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		ops := WarmOps()
		require.Equal(t, []string{"diag", "indice", "prim", "scatter", "sparse", "tri"}, ops[:6])
		for _, o := range ops[6:] {
			found := false
			for _, fam := range warmFamilies {
				for _, f := range fam {
					found = found || f == o
				}
			}
			assert.True(t, found, "op %s is in a family", o)
		}
		err := d.Warm(ops[:6]...)
		require.NoError(t, err)
		require.False(t, errors.Is(err, ErrInvalidArgument))
	})
}
