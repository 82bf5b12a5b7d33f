package accel

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScatterNVTricksEmulated runs NVIDIA's float sums on PoCL: with
// ACCEL_NV_TRICKS=emulate the OpenCL builds take the NVIDIA path (the
// native-add variants, PTX's atomic add as device_tricks.h emulates it,
// subnormals flushed as NVIDIA documents), so the fix-up that adds back
// what the flush dropped is checked where no NVIDIA GPU is. The values
// are multiples of the smallest subnormal below 2^17 of them, so every
// sum is exact in any order and the bits must be the reference's: sums
// of subnormals, subnormal sums of normal values, subnormal elements
// before an add. Without the fix-up the flushed sums differ.
func TestScatterNVTricksEmulated(t *testing.T) {
	t.Setenv("ACCEL_NV_TRICKS", "emulate")
	d := ownTestDevice(t, "opencl")
	require.True(t, d.Info().Float32Atomics, "the emulated NVIDIA device adds floats natively")
	defer forceScatter(d, scatterAtomic)()
	rng := rand.New(rand.NewSource(7))
	for _, dt := range []DType{Float32, Float64} {
		for _, c := range []struct{ n, targets, span int64 }{{1, 1, 3}, {500, 7, 40}, {4000, 64, 1 << 16}, {3000, 1000, 1 << 9}} {
			for _, reduce := range []Reduction{Sum, Mean} {
				for _, self := range []bool{true, false} {
					in, _ := NewTensor(dt, c.targets)
					src, _ := NewTensor(dt, c.n)
					idx, _ := NewTensor(Int64, c.n)
					tiny := func() float64 { return float64(rng.Int63n(2*c.span+1)-c.span) * math.Ldexp(1, -149) }
					for i := range c.targets {
						setFloat(in, i, tiny())
					}
					for i := range c.n {
						setFloat(src, i, tiny())
						idx.Int64s()[i] = rng.Int63n(c.targets)
					}
					name := dt.String() + "/" + reduce.String()
					want, err := RefScatterReduce(in, 0, idx, src, reduce, self)
					require.NoError(t, err, name)
					ts, release := uploadAll(t, d, in, idx, src)
					out, err := d.ScatterReduce(ts[0], 0, ts[1], ts[2], reduce, self)
					require.NoError(t, err, name)
					got := mustHost(t, out)
					release()
					if reduce == Sum {
						requireSameBits(t, got, want, name)
					} else { // a mean divides the exact sum once
						require.NoError(t, Compare(got, want, sameValue), name)
					}
				}
			}
		}
	}
}
