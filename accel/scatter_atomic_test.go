package accel

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/accelkern/accel/host"
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

// TestScatterAtomicFolds runs the atomic path's folds both ways on each
// driver: by the device's atomic adds (the native float add where the
// device has one, lavapipe's included, and the atomic increment of a
// mean's counts) and by compare-and-swap loops from a plain load
// (scatterPlan.CAS, knob SC_CAS: lavapipe's default, which PoCL never
// plans), with every fold's first words loaded before the batch's
// atomics. Values are small integers (and ±1, ±2 for products), so every
// order gives the same sums and products and the bits must be the
// reference's; hot targets (70001 positions into 7) make the loops
// retry from stale words.
func TestScatterAtomicFolds(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		defer forceScatter(d, scatterAtomic)()
		defer func() { plans(d).scatterCAS = 0 }()
		rng := rand.New(rand.NewSource(29))
		for _, cas := range []int{-1, 1} {
			plans(d).scatterCAS = cas
			for _, dt := range []DType{Int32, Int64, Float32, Float64} {
				if err := d.supportsScatter("scatter_reduce", dt); err != nil {
					continue
				}
				for _, c := range []struct{ n, targets int64 }{{1, 1}, {5, 3}, {1000, 1000}, {70001, 7}, {70001, 20011}} {
					for _, reduce := range []Reduction{Sum, Mean, Prod, Amax} {
						self := rng.Intn(2) == 0
						name := fmt.Sprintf("cas=%d/%v/n=%d/targets=%d/%v/self=%v", cas, dt, c.n, c.targets, reduce, self)
						in, _ := NewTensor(dt, c.targets)
						src, _ := NewTensor(dt, c.n)
						small := func() float64 {
							if reduce == Prod {
								return float64((1 + rng.Intn(2)) * (1 - 2*rng.Intn(2)))
							}
							return float64(rng.Intn(9) - 4)
						}
						for i := range c.targets {
							setAny(in, i, small())
						}
						for i := range c.n {
							setAny(src, i, small())
						}
						got, want := scatterVsRef(t, d, rng, in, src, reduce, self, name)
						if reduce == Mean && (dt == Float32 || dt == Float64) {
							// the exact sum divided once, as the reference does
							require.NoError(t, Compare(got, want, sameValue), name)
						} else {
							requireSameBits(t, got, want, name)
						}
					}
				}
			}
		}
	})
}

// setAny sets element i of a tensor of any of the scatter dtypes to v.
func setAny(x *Tensor, i int64, v float64) {
	switch x.dtype {
	case Int32:
		x.Int32s()[i] = int32(v)
	case Int64:
		x.Int64s()[i] = int64(v)
	default:
		setFloat(x, i, v)
	}
}

// TestScatterCASPlan: the atomic path folds sums and means by
// compare-and-swap loops exactly where the driver runs a vector's atomics
// a lane at a time (host.Caps.SerialAtomics, lavapipe's), and says so in
// its reason; amax and amin, which fold that way everywhere, and the
// other paths are left as they were.
func TestScatterCASPlan(t *testing.T) {
	gpu := host.Caps{Backend: host.Vulkan, Type: host.TypeDiscreteGPU, ComputeUnits: 132, MaxWorkGroupSize: 1024,
		MaxWorkGroupCount: [3]int64{1 << 31, 65535, 65535}, LocalMemBytes: 48 << 10, GlobalMemBytes: 80 << 30,
		MaxAllocBytes: 80 << 30, Int64: true, Int64Atomics: true, Float32Atomics: true}
	serial := gpu
	serial.SerialAtomics = true
	for _, red := range []Reduction{Sum, Mean, Amax, Prod} {
		s := scatterShape{n: 1 << 24, targets: 1 << 20, elemBytes: 4, red: red, includeSelf: true, flat: true}
		sp := planScatter(gpu, s)
		require.Equal(t, scatterAtomic, sp.Path, "%v", red)
		require.False(t, sp.CAS, "%v: a GPU's atomic adds", red)
		sp = planScatter(serial, s)
		require.Equal(t, scatterAtomic, sp.Path, "%v", red)
		want := red == Sum || red == Mean
		require.Equal(t, want, sp.CAS, "%v", red)
		require.Equal(t, want, strings.Contains(sp.Reason, "compare-and-swap"), "%v: %s", red, sp.Reason)
		// the bit-reproducible path folds with no atomics; the partition
		// counts hits and claims slots by compare-and-swap where the
		// driver serializes (the sort has no atomics at all)
		s.det = true
		require.False(t, planScatter(gpu, s).CAS, "%v", red)
		dp := planScatter(serial, s)
		require.True(t, dp.Part, "%v: %s", red, dp.Reason)
		require.True(t, dp.CAS, "%v: %s", red, dp.Reason)
		s.n = 1 << 30 // too many hits a target for the partition: the sort
		dp = planScatter(serial, s)
		require.False(t, dp.Part || dp.CAS, "%v: %s", red, dp.Reason)
	}
}
