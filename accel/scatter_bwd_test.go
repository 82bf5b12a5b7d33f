package accel

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// bwdShape is one scatter_reduce_backward geometry; with perm no target is
// hit twice (each line along dim gets distinct targets).
type bwdShape struct {
	in, idx, src []int64
	dim          int64
	perm         bool
}

var bwdShapes = []bwdShape{
	{in: []int64{}, idx: []int64{}, src: []int64{}}, // 0-d
	{in: []int64{1}, idx: []int64{1}, src: []int64{1}},
	{in: []int64{5}, idx: []int64{0}, src: []int64{3}},                              // empty index
	{in: []int64{0, 3}, idx: []int64{0, 2}, src: []int64{1, 3}, dim: 1},             // empty input
	{in: []int64{7}, idx: []int64{300}, src: []int64{301}},                          // heavy collisions
	{in: []int64{9}, idx: []int64{9}, src: []int64{12}, perm: true},                 // none
	{in: []int64{3, 9}, idx: []int64{3, 40}, src: []int64{4, 41}, dim: -1},          // index smaller than src
	{in: []int64{6, 4}, idx: []int64{6, 3}, src: []int64{6, 5}, dim: 0, perm: true}, // 2-d, no collisions
	{in: []int64{4, 5, 6}, idx: []int64{2, 7, 3}, src: []int64{3, 8, 6}, dim: -2},
	{in: []int64{2, 3, 4, 5}, idx: []int64{2, 9, 4, 2}, src: []int64{3, 9, 4, 5}, dim: 1},
	{in: []int64{2, 3, 4, 5}, idx: []int64{1, 2, 3, 10}, src: []int64{2, 3, 4, 11}, dim: -1},
	{in: []int64{1000}, idx: []int64{3001}, src: []int64{3001}},
}

// fillBwd fills with values that make the gradients' special cases common:
// ties (small integers) and a NaN now and then for amax/amin, values near
// 1 with zeros (and rarer NaN) for prod, mixed magnitudes for sum and mean.
func fillBwd(rng *rand.Rand, x *Tensor, red Reduction, zeroRate, nanRate int) {
	for i := int64(0); i < x.Len(); i++ {
		f := rng.NormFloat64() * math.Pow(10, float64(rng.Intn(5)-2))
		switch red {
		case Prod:
			f = 1 + rng.NormFloat64()*0.01
			if zeroRate > 0 && rng.Intn(zeroRate) == 0 {
				f = 0
			}
			if nanRate > 0 && rng.Intn(4*nanRate) == 0 {
				f = math.NaN()
			}
		case Amax, Amin:
			f = float64(rng.Intn(4))
			if nanRate > 0 && rng.Intn(nanRate) == 0 {
				f = math.NaN()
			}
		}
		if x.dtype == Float32 {
			x.Float32s()[i] = float32(f)
		} else {
			x.Float64s()[i] = f
		}
	}
}

// bwdIndex fills index: uniform targets along dim, or with perm distinct
// targets for every line along dim.
func bwdIndex(rng *rand.Rand, s bwdShape) *Tensor {
	idx, _ := NewTensor(Int64, s.idx...)
	r := int64(len(s.in))
	if r == 0 {
		return idx // 0-d: the one index is 0
	}
	dim := (s.dim + r) % r
	size := s.in[dim]
	v := idx.Int64s()
	if !s.perm {
		for i := range v {
			v[i] = rng.Int63n(size)
		}
		return idx
	}
	// idx.size(dim) <= input.size(dim): a prefix of a permutation per line
	inner := int64(1)
	for k := dim + 1; k < r; k++ {
		inner *= s.idx[k]
	}
	n := s.idx[dim]
	for base := int64(0); base < int64(len(v)); base += n * inner {
		for in := int64(0); in < inner; in++ {
			p := rng.Perm(int(size))
			for k := int64(0); k < n; k++ {
				v[base+k*inner+in] = int64(p[k])
			}
		}
	}
	return idx
}

// closeTo compares elementwise: NaN matches NaN, infinities must be equal,
// others within rel (0: bit-exact values).
func closeTo(got, want *Tensor, rel float64) error {
	if got.dtype != want.dtype || !sameShape(got.shape, want.shape) {
		return fmt.Errorf("got %s, want %s", got, want)
	}
	at := func(t *Tensor, i int64) float64 {
		if t.dtype == Float32 {
			return float64(t.Float32s()[i])
		}
		return t.Float64s()[i]
	}
	for i := int64(0); i < want.Len(); i++ {
		g, w := at(got, i), at(want, i)
		if math.IsNaN(g) && math.IsNaN(w) || g == w {
			continue
		}
		if rel == 0 || math.IsInf(w, 0) || math.IsNaN(g) || math.IsNaN(w) ||
			math.Abs(g-w) > rel*math.Max(math.Abs(g), math.Abs(w)) {
			return fmt.Errorf("element %d: got %v, want %v", i, g, w)
		}
	}
	return nil
}

// bwdCase makes one backward case of shape s: input and src filled for red
// (fillBwd with the given zero and NaN rates), a gradient without zeros or
// NaNs, and an index.
func bwdCase(rng *rand.Rand, s bwdShape, dt DType, red Reduction, inZero, inNaN, srcZero, srcNaN int) (in, idx, src, grad *Tensor) {
	in, _ = NewTensor(dt, s.in...)
	src, _ = NewTensor(dt, s.src...)
	grad, _ = NewTensor(dt, s.in...)
	fillBwd(rng, in, red, inZero, inNaN)
	fillBwd(rng, src, red, srcZero, srcNaN)
	fillBwd(rng, grad, Sum, 0, 0)
	return in, bwdIndex(rng, s), src, grad
}

// runBwd runs the device op and compares its three outputs with the
// reference's.
func runBwd(t *testing.T, d *Device, what string, in, idx, src, grad *Tensor, dim int64, red Reduction, self bool) {
	t.Helper()
	want, wgi, wgs, err := RefScatterReduceBackward(in, dim, idx, src, red, self, grad)
	require.NoError(t, err, "%s: reference", what)
	ts, release := uploadAll(t, d, in, idx, src, grad)
	defer release()
	out, gi, gs, err := d.ScatterReduceBackward(ts[0], dim, ts[1], ts[2], red, self, ts[3])
	require.NoError(t, err, what)
	// the forward is bit-reproducible; sum, mean, amax and amin gradients
	// are one operation each; prod's products run in the reference's order
	// too, allowed a few ulps per element of the run
	rel := 0.0
	if red == Prod {
		eps := 0x1p-52
		if in.dtype == Float32 {
			eps = 0x1p-23
		}
		rel = 4 * eps * float64(idx.Len()+2)
	}
	require.NoError(t, sameBits(mustHost(t, out), want), "%s: out", what)
	require.NoError(t, closeTo(mustHost(t, gi), wgi, rel), "%s: grad_input", what)
	require.NoError(t, closeTo(mustHost(t, gs), wgs, rel), "%s: grad_src", what)
}

func TestScatterReduceBackward(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		testScatterBackward(t, d, []Reduction{Sum, Prod, Mean, Amax, Amin})
	})
}

// testScatterBackward checks scatter_reduce's backward by reds on d
// against the reference, over bwdShapes, float32 and float64.
func testScatterBackward(t *testing.T, d *Device, reds []Reduction) {
	rng := rand.New(rand.NewSource(31))
	for si, s := range bwdShapes {
		for _, dt := range []DType{Float32, Float64} {
			if !d.supports(dt) {
				continue
			}
			for _, red := range reds {
				for _, self := range []bool{true, false} {
					in, idx, src, grad := bwdCase(rng, s, dt, red, 20, 30, 40, 60)
					runBwd(t, d, fmt.Sprintf("shape %d %s %s self=%v", si, dt, red, self), in, idx, src, grad, s.dim, red, self)
				}
			}
		}
	}
}

// Runs longer than llvmpipe's loop limit (65535): the prod walks and the
// counts go on over several launches.
func TestScatterReduceBackwardLongRuns(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(32))
		s := bwdShape{in: []int64{3}, idx: []int64{210001}, src: []int64{210001}} // ~70000 per target
		for _, dt := range []DType{Float32, Float64} {
			if !d.supports(dt) {
				continue
			}
			for _, red := range []Reduction{Sum, Prod, Mean, Amax, Amin} {
				for _, self := range []bool{true, false} {
					in, idx, src, grad := bwdCase(rng, s, dt, red, 0, 0, 0, 0)
					if red == Prod {
						// one zero in target 0's run (only it gets a
						// gradient), two in target 1's (all 0), none in target 2's
						zeros := map[int64]int{0: 1, 1: 2}
						for p := int64(idx.Len()) - 1; p >= 0 && (zeros[0] > 0 || zeros[1] > 0); p -= 997 {
							if k := idx.Int64s()[p]; zeros[k] > 0 {
								zeros[k]--
								setF(src, p, 0)
							}
						}
					}
					runBwd(t, d, fmt.Sprintf("%s %s self=%v", dt, red, self), in, idx, src, grad, 0, red, self)
				}
			}
		}
	})
}

func setF(x *Tensor, i int64, v float64) {
	if x.dtype == Float32 {
		x.Float32s()[i] = float32(v)
	} else {
		x.Float64s()[i] = v
	}
}

// Every bad argument is an error naming it, on the device and on the host
// (the host form checks the same way); an out-of-range index is found on
// the device and named by position.
func TestScatterReduceBackwardErrors(t *testing.T) {
	type call func(in, idx, src, grad *Tensor, dim int64, reduce Reduction) error
	host := func(in, idx, src, grad *Tensor, dim int64, reduce Reduction) error {
		_, _, _, err := RefScatterReduceBackward(in, dim, idx, src, reduce, true, grad)
		return err
	}
	check := func(t *testing.T, run call) {
		in, src, grad := hostZeros(Float32, 4, 5), hostZeros(Float32, 4, 5), hostZeros(Float32, 4, 5)
		ok := hostZeros(Int64, 3, 5)
		var ae *ArgError
		bad := []struct {
			in, idx, src, grad *Tensor
			dim                int64
			reduce             Reduction
			arg                string
			sentinel           error
			mention            string
		}{
			{hostZeros(Int32, 4, 5), ok, hostZeros(Int32, 4, 5), hostZeros(Int32, 4, 5), 0, Sum, "input", ErrUnsupported, "float32 or float64"},
			{hostZeros(Int64, 4, 5), ok, hostZeros(Int64, 4, 5), hostZeros(Int64, 4, 5), 0, Amax, "input", ErrUnsupported, "float32 or float64"},
			{in, ok, src, hostZeros(Float32, 5, 4), 0, Sum, "grad_output", ErrInvalidArgument, "[4 5]"},
			{in, ok, src, hostZeros(Float32, 20), 0, Sum, "grad_output", ErrInvalidArgument, "[4 5]"},
			{in, ok, src, hostZeros(Float64, 4, 5), 0, Sum, "grad_output", ErrInvalidArgument, "float32"},
			{in, ok, src, grad, 0, Assign, "reduce", ErrInvalidArgument, "Amin"},
			{in, ok, src, grad, 0, Amin + 1, "reduce", ErrInvalidArgument, "Amin"}, // no such reduction
			{in, ok, src, grad, -3, Sum, "dim", ErrInvalidArgument, "[-2, 2)"},
			{in, hostZeros(Int64, 5, 5), src, grad, 0, Sum, "index", ErrInvalidArgument, "src"},
			{in, hostZeros(Float32, 3, 5), src, grad, 0, Sum, "index", ErrInvalidArgument, "int64 or int32"},
			{in, ok, hostZeros(Float64, 4, 5), grad, 0, Sum, "src", ErrInvalidArgument, "float32"},
		}
		for i, b := range bad {
			err := run(b.in, b.idx, b.src, b.grad, b.dim, b.reduce)
			require.ErrorAs(t, err, &ae, "case %d: want an error on %q", i, b.arg)
			require.Equal(t, b.arg, ae.Arg, "case %d: %v", i, err)
			require.ErrorIs(t, err, b.sentinel, "case %d", i)
			require.Contains(t, err.Error(), b.mention, "case %d", i)
		}
		idx := hostZeros(Int64, 3, 5)
		idx.Int64s()[7] = 4 // position (1, 2): out of range for dim 0 (size 4)
		idx.Int64s()[12] = -1
		for _, red := range []Reduction{Sum, Prod, Mean, Amax, Amin} {
			err := run(in, idx, src, grad, 0, red)
			require.ErrorAs(t, err, &ae, "%s: out-of-range index", red)
			require.Equal(t, "index[1, 2]", ae.Arg, "%s: out-of-range index: %v", red, err)
			require.Contains(t, err.Error(), "[0, 4)", "%s: out-of-range index", red)
		}
		big, bsrc, bin := hostZeros(Int64, 300000), hostZeros(Float64, 300000), hostZeros(Float64, 10)
		big.Int64s()[234567] = 10
		err := run(bin, big, bsrc, hostZeros(Float64, 10), 0, Amin)
		require.ErrorAs(t, err, &ae, "far bad index")
		require.Equal(t, "index[234567]", ae.Arg, "far bad index: %v", err)
	}
	t.Run("host", func(t *testing.T) { check(t, host) })
	forEachDevice(t, func(t *testing.T, d *Device) {
		check(t, func(in, idx, src, grad *Tensor, dim int64, reduce Reduction) error {
			if !d.supports(in.dtype) || !d.supports(src.dtype) || !d.supports(grad.dtype) {
				return host(in, idx, src, grad, dim, reduce)
			}
			ts, release := uploadAll(t, d, in, idx, src, grad)
			defer release()
			out, gi, gs, err := d.ScatterReduceBackward(ts[0], dim, ts[1], ts[2], reduce, true, ts[3])
			if err == nil {
				out.Release()
				gi.Release()
				gs.Release()
			} else {
				require.Nil(t, out, "an error with outputs: %v", err)
				require.Nil(t, gi, "an error with outputs: %v", err)
				require.Nil(t, gs, "an error with outputs: %v", err)
			}
			return err
		})
	})
}
