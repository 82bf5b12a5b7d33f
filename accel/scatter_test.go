package accel

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// scatterStrategies are the strategies the scatter tests force on every
// device ("" is the planner's own choice).
var scatterStrategies = append([]scatterPath{planned}, scatterPaths...)

func randValues(rng *rand.Rand, t *Tensor, withNaN bool) {
	switch t.dtype {
	case Int32:
		for i := range t.Int32s() {
			t.Int32s()[i] = int32(rng.Intn(21) - 10)
		}
	case Int64:
		for i := range t.Int64s() {
			t.Int64s()[i] = rng.Int63n(2001) - 1000
		}
	case Float32:
		for i := range t.Float32s() {
			t.Float32s()[i] = float32(rng.NormFloat64())
			if withNaN && rng.Intn(50) == 0 {
				t.Float32s()[i] = float32(math.NaN())
			}
		}
	case Float64:
		for i := range t.Float64s() {
			t.Float64s()[i] = rng.NormFloat64()
			if withNaN && rng.Intn(50) == 0 {
				t.Float64s()[i] = math.NaN()
			}
		}
	}
}

// looseFor says whether results of reduce may differ from the reference's
// in rounding: float sums, means and products, which atomics reduce in
// another order.
func looseFor(reduce Reduction) bool { return reduce == Sum || reduce == Mean || reduce == Prod }

// sameValues compares equal values (-0 equal to +0, NaN to NaN: what
// ScatterReduce promises for amax and amin, whose zeros' signs the
// reference's order picks), or with loose floats within a relative
// tolerance (see looseFor), with Compare; shapes must match too. Bits
// are requireSameBits's.
func sameValues(got, want *Tensor, loose bool) error {
	if loose {
		return Compare(got, want, Tolerance{Rel: 1e-4, Abs: 1e-4})
	}
	return Compare(got, want, sameValue)
}

// sameValue is the tolerance of equal values: |got-want| <= the smallest
// float64, so only -0 against +0 (and NaN against NaN) differ in bits.
var sameValue = Tolerance{Abs: math.SmallestNonzeroFloat64}

func TestScatterReduceRandom(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, strategy := range scatterStrategies {
			t.Run("strategy="+strategyName(strategy), func(t *testing.T) {
				defer forceScatter(d, strategy)()
				testScatterReduceRandom(t, d)
			})
		}
	})
}

func testScatterReduceRandom(t *testing.T, d *Device) {
	rng := rand.New(rand.NewSource(5))
	type shapeCase struct {
		in, idx, src []int64
		dim          int64
		maxIdx       int64 // index values drawn from [0, maxIdx): small means heavy collisions
	}
	cases := []shapeCase{
		{[]int64{1}, []int64{1}, []int64{1}, 0, 1},
		{[]int64{5}, []int64{0}, []int64{3}, 0, 5},
		{[]int64{10}, []int64{40}, []int64{50}, 0, 3},
		{[]int64{1000}, []int64{5000}, []int64{5000}, 0, 1000},
		{[]int64{4, 6}, []int64{3, 5}, []int64{4, 6}, 0, 4},
		{[]int64{4, 6}, []int64{4, 9}, []int64{5, 9}, -1, 2},
		{[]int64{3, 4, 5}, []int64{2, 7, 5}, []int64{3, 7, 6}, 1, 4},
		{[]int64{2, 3, 4, 5}, []int64{2, 3, 4, 2}, []int64{2, 3, 4, 5}, 3, 5},
		{[]int64{0, 3}, []int64{0, 3}, []int64{0, 3}, 1, 3},
		{[]int64{64, 16}, []int64{64, 64}, []int64{64, 64}, 1, 16},
		// 1-d into few targets (ScatterFew): whole lane steps, tails, every target
		{[]int64{16}, []int64{2003}, []int64{2003}, 0, 16},
		{[]int64{32}, []int64{777}, []int64{800}, 0, 32},
		{[]int64{3}, []int64{9}, []int64{9}, 0, 3},
	}
	for ci, c := range cases {
		for _, dt := range []DType{Int32, Int64, Float32, Float64} {
			for _, reduce := range []Reduction{Sum, Prod, Mean, Amax, Amin} {
				for _, self := range []bool{true, false} {
					in, _ := NewTensor(dt, c.in...)
					src, _ := NewTensor(dt, c.src...)
					randValues(rng, in, true)
					randValues(rng, src, true)
					if reduce == Prod && (dt == Float32 || dt == Float64) {
						// keep products of many factors finite and comparable
						randValues(rng, in, false)
						randValues(rng, src, false)
					}
					idx, _ := NewTensor(Int64, c.idx...)
					for i := range idx.Int64s() {
						idx.Int64s()[i] = rng.Int63n(c.maxIdx)
					}
					name := fmt.Sprintf("case%d/%s/%s/self=%v", ci, dt, reduce, self)
					want, err := RefScatterReduce(in, c.dim, idx, src, reduce, self)
					require.NoError(t, err, name)
					ts, release := uploadAll(t, d, in, idx, src)
					out, err := d.ScatterReduce(ts[0], c.dim, ts[1], ts[2], reduce, self)
					require.NoError(t, err, name)
					got := mustHost(t, out)
					release()
					require.NoError(t, sameValues(got, want, looseFor(reduce)), name)
				}
			}
		}
	}
}

// TestScatterPrivateBlocks covers the CPU private pass's 1-d path, which
// checks blocks of kernels.ScPb positions at once and folds the clean ones
// without a test per position: several blocks per worker and a tail, float
// amax/amin with no NaN (every block clean) and with one NaN in a late
// block or at the last position (that block takes the checked fold, the
// clean blocks after it must keep the NaN), on the planner's strategy and
// on private copies forced; into few targets (the copy in cache, no
// prefetch) and into kernels.ScPfMin (the prefetched fold).
func TestScatterPrivateBlocks(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, strategy := range []scatterPath{planned, scatterPrivate} {
			t.Run("strategy="+strategyName(strategy), func(t *testing.T) {
				defer forceScatter(d, strategy)()
				testScatterPrivateBlocks(t, d)
			})
		}
	})
}

func testScatterPrivateBlocks(t *testing.T, d *Device) {
	rng := rand.New(rand.NewSource(11))
	n := 6*int64(kernels.ScPb) + 777
	for _, targets := range []int64{1000, kernels.ScPfMin} {
		for _, dt := range []DType{Float32, Float64, Int32} {
			for _, reduce := range []Reduction{Sum, Mean, Amax, Amin} {
				for _, nanAt := range []int64{-1, 4*int64(kernels.ScPb) + 5, n - 1} {
					if nanAt >= 0 && dt == Int32 {
						continue
					}
					self := rng.Intn(2) == 0
					in, _ := NewTensor(dt, targets)
					src, _ := NewTensor(dt, n)
					randValues(rng, in, false)
					randValues(rng, src, false)
					if nanAt >= 0 {
						if dt == Float32 {
							src.Float32s()[nanAt] = float32(math.NaN())
						} else {
							src.Float64s()[nanAt] = math.NaN()
						}
					}
					name := fmt.Sprintf("%d/%s/%s/nan@%d/self=%v", targets, dt, reduce, nanAt, self)
					got, want := scatterVsRef(t, d, rng, in, src, reduce, self, name)
					require.NoError(t, sameValues(got, want, looseFor(reduce)), name)
				}
			}
		}
	}
}

func TestScatterAssignPermutation(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, strategy := range scatterStrategies {
			t.Run("strategy="+strategyName(strategy), func(t *testing.T) {
				defer forceScatter(d, strategy)()
				testScatterAssignPermutation(t, d)
			})
		}
	})
}

func testScatterAssignPermutation(t *testing.T, d *Device) {
	rng := rand.New(rand.NewSource(6))
	for _, n := range []int{1, 2, 1000, 100003} {
		for _, dt := range []DType{Int32, Float32, Int64, Float64} {
			name := fmt.Sprintf("n=%d %s", n, dt)
			in, _ := NewTensor(dt, int64(n))
			src, _ := NewTensor(dt, int64(n))
			randValues(rng, in, false)
			randValues(rng, src, false)
			idx, _ := NewTensor(Int64, int64(n))
			for i, p := range rng.Perm(n) {
				idx.Int64s()[i] = int64(p)
			}
			want, err := RefScatter(in, 0, idx, src)
			require.NoError(t, err, name)
			ts, release := uploadAll(t, d, in, idx, src)
			out, err := d.Scatter(ts[0], 0, ts[1], ts[2])
			require.NoError(t, err, name)
			got := mustHost(t, out)
			release()
			require.NoError(t, sameValues(got, want, looseFor(Assign)), name)
		}
	}
}

func TestScatterErrors(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, strategy := range scatterStrategies {
			t.Run("strategy="+strategyName(strategy), func(t *testing.T) {
				defer forceScatter(d, strategy)()
				testScatterErrors(t, d)
			})
		}
	})
}

func testScatterErrors(t *testing.T, d *Device) {
	up := func(x *Tensor) *DeviceTensor {
		dx := mustUpload(t, d, x)
		t.Cleanup(dx.Release)
		return dx
	}
	in, _ := NewTensor(Float32, 4, 5)
	src, _ := NewTensor(Float32, 4, 5)
	idx, _ := NewTensor(Int64, 3, 5)
	idx.Int64s()[7] = 4 // position (1, 2): out of range for dim 0 (size 4)
	idx.Int64s()[12] = -1
	_, err := d.ScatterReduce(up(in), 0, up(idx), up(src), Sum, true)
	var ae *ArgError
	require.ErrorAs(t, err, &ae, "out-of-range index")
	require.Equal(t, "index[1, 2]", ae.Arg, "out-of-range index: %v", err)
	require.Contains(t, err.Error(), "[0, 4)", "out-of-range index")
	// A bad index far into a large index tensor is found on the device.
	big, _ := NewTensor(Int64, 300000)
	bsrc, _ := NewTensor(Float32, 300000)
	bin, _ := NewTensor(Float32, 10)
	big.Int64s()[234567] = 10
	_, err = d.ScatterReduce(up(bin), 0, up(big), up(bsrc), Amax, false)
	require.ErrorAs(t, err, &ae, "far bad index")
	require.Equal(t, "index[234567]", ae.Arg, "far bad index: %v", err)
	// The first of several bad indices is the one named (include_self: the
	// few-targets pass on CPU drivers).
	big.Int64s()[299999] = -11
	big.Int64s()[70001] = 10
	_, err = d.ScatterReduce(up(bin), 0, up(big), up(bsrc), Sum, true)
	require.ErrorAs(t, err, &ae, "first bad index")
	require.Equal(t, "index[70001]", ae.Arg, "first bad index: %v", err)
	ok, _ := NewTensor(Int64, 3, 5)
	bad := []struct {
		in, idx, src *Tensor
		dim          int64
		reduce       Reduction
		arg          string
	}{
		{in, ok, src, 2, Sum, "dim"},
		{in, ok, src, 0, Amin + 1, "reduce"},                                    // no such reduction
		{in, ok, src, 0, Reduction(-1), "reduce"},                               // no such reduction
		{in, hostZeros(Int64, 5, 5), src, 0, Sum, "index"},                      // larger than src in dim 0
		{in, hostZeros(Int64, 3, 6), hostZeros(Float32, 4, 6), 0, Sum, "index"}, // larger than input in dim 1
		{in, hostZeros(Int64, 3), src, 0, Sum, "index"},                         // rank
		{in, hostZeros(Float32, 3, 5), src, 0, Sum, "index"},                    // dtype
		{in, ok, hostZeros(Float64, 4, 5), 0, Sum, "src"},                       // dtype
	}
	for i, b := range bad {
		_, err := d.ScatterReduce(up(b.in), b.dim, up(b.idx), up(b.src), b.reduce, true)
		require.ErrorAs(t, err, &ae, "case %d: want an error on %q", i, b.arg)
		require.Equal(t, b.arg, ae.Arg, "case %d: %v", i, err)
		require.ErrorIs(t, err, ErrInvalidArgument, "case %d", i)
	}
}

// TestParseReduction checks the reductions' names: PyTorch's and
// "assign", parsed strictly (no aliases, no other spellings), and that
// String gives them back.
func TestParseReduction(t *testing.T) {
	for r, name := range map[Reduction]string{Assign: "assign", Sum: "sum", Prod: "prod", Mean: "mean", Amax: "amax", Amin: "amin"} {
		require.Equal(t, name, r.String())
		got, err := ParseReduction(name)
		require.NoError(t, err, name)
		require.Equal(t, r, got, name)
	}
	for _, name := range []string{"", "avg", "maximum", "sum2", "add", "mul", "multiply", "max", "min", " sum", "Sum", "AMAX"} {
		_, err := ParseReduction(name)
		require.ErrorIs(t, err, ErrInvalidArgument, "%q", name)
		var ae *ArgError
		require.ErrorAs(t, err, &ae, "%q", name)
		require.Equal(t, "name", ae.Arg)
	}
}

// The few pass tests at most its array bound of targets.
func TestScatterFewMax(t *testing.T) {
	for targets := int64(1); targets <= kernels.ScFewMax; targets++ {
		require.LessOrEqual(t, fewTargets(targets), int64(kernels.ScFewMax), "targets %d", targets)
		require.GreaterOrEqual(t, fewTargets(targets), targets)
	}
}

// TestScatterFewBlocks covers the few-targets pass's blocks (OpenCL C
// folds whole contiguous blocks of kernels.ScPb positions as vectors,
// checking each as it goes, and everything else one position at a time):
// several blocks per worker, exact blocks and a tail, 1 to 16 targets,
// every dtype, sum, prod, amax and amin with the input (without it into 5
// targets), and mean (hit counts: on lavapipe the few pass keeps them). Float amax/amin
// get NaNs of distinct payloads, signed zeros and infinities in some
// blocks (a block with a NaN or a zero folds again as scalars) and must
// match the reference's bits, payloads and zero signs included; sums and
// products match within rounding. The planner's choice is few on CPU
// drivers, and few is forced too.
func TestScatterFewBlocks(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, strategy := range []scatterPath{planned, scatterFew, scatterFewGroups} {
			t.Run("strategy="+strategyName(strategy), func(t *testing.T) {
				defer forceScatter(d, strategy)()
				testScatterFewBlocks(t, d, strategy == scatterFew || strategy == planned && d.caps.Type == host.TypeCPU)
			})
		}
	})
}

// testScatterFewBlocks checks scatter_reduce into few targets on d, with
// NaNs, signed zeros and infinities for amax and amin; exact: the plan
// keeps the reference's bits for them (the few and private passes do,
// atomics do not).
func testScatterFewBlocks(t *testing.T, d *Device, exact bool) {
	rng := rand.New(rand.NewSource(12))
	pb := int64(kernels.ScPb)
	for _, n := range []int64{6*pb + 777, 2 * pb} {
		for _, targets := range []int64{1, 5, 8, 16} {
			for _, dt := range []DType{Float32, Float64, Int32, Int64} {
				for _, reduce := range []Reduction{Sum, Prod, Amax, Amin, Mean} {
					self := reduce != Mean || rng.Intn(2) == 0
					if reduce != Mean && targets == 5 {
						self = false // hit counts, for the merge (few under a loop limit, else private)
					}
					specials := []string{"none"}
					if (dt == Float32 || dt == Float64) && (reduce == Amax || reduce == Amin) {
						specials = append(specials, "nan", "zero", "inf")
					}
					for _, special := range specials {
						name := fmt.Sprintf("n=%d/%d/%s/%s/%s/self=%v", n, targets, dt, reduce, special, self)
						in, _ := NewTensor(dt, targets)
						src, _ := NewTensor(dt, n)
						randValues(rng, in, false)
						randValues(rng, src, false)
						if reduce == Prod && (dt == Float32 || dt == Float64) {
							for i := int64(0); i < n; i++ { // products of thousands of factors stay finite
								setFloat(src, i, 1+(rng.Float64()-0.5)/256)
							}
						}
						fewSpecials(rng, in, src, special, reduce, n, pb)
						got, want := scatterVsRef(t, d, rng, in, src, reduce, self, name)
						if exact && !looseFor(reduce) {
							requireSameBits(t, got, want, name)
						} else {
							require.NoError(t, sameValues(got, want, looseFor(reduce)), name)
						}
					}
				}
			}
		}
		// put_along_axis (Paddle) counts a negative index from the end: the
		// blocks holding one fold as scalars, the others as vectors
		for _, reduce := range []Reduction{Sum, Amax} {
			name := fmt.Sprintf("put_along_axis n=%d/%s", n, reduce)
			arr, _ := NewTensor(Float32, 16)
			vals, _ := NewTensor(Float32, n)
			randValues(rng, arr, false)
			randValues(rng, vals, false)
			idx, _ := NewTensor(Int64, n)
			for i := range idx.Int64s() {
				idx.Int64s()[i] = rng.Int63n(16)
				if b := int64(i) / pb; (b == 1 || int64(i) >= n-5) && rng.Intn(3) == 0 {
					idx.Int64s()[i] -= 16
				}
			}
			want, err := RefPutAlongAxis(arr, idx, vals, 0, reduce, true)
			require.NoError(t, err, name)
			ts, release := uploadAll(t, d, arr, idx, vals)
			out, err := d.PutAlongAxis(ts[0], ts[1], ts[2], 0, reduce, true)
			require.NoError(t, err, name)
			got := mustHost(t, out)
			release()
			require.NoError(t, sameValues(got, want, looseFor(reduce)), name)
		}
	}
}

// scatterVsRef scatters the 1-d src into in along dim 0 at indices drawn
// from [0, len(in)), on d and in the reference, and returns both results.
func scatterVsRef(t *testing.T, d *Device, rng *rand.Rand, in, src *Tensor, reduce Reduction, self bool, name string) (got, want *Tensor) {
	t.Helper()
	idx, _ := NewTensor(Int64, src.Len())
	for i := range idx.Int64s() {
		idx.Int64s()[i] = rng.Int63n(in.Len())
	}
	want, err := RefScatterReduce(in, 0, idx, src, reduce, self)
	require.NoError(t, err, name)
	ts, release := uploadAll(t, d, in, idx, src)
	defer release()
	out, err := d.ScatterReduce(ts[0], 0, ts[1], ts[2], reduce, self)
	require.NoError(t, err, name)
	return mustHost(t, out), want
}

// setFloat sets element i of a float tensor.
func setFloat(x *Tensor, i int64, v float64) {
	if x.dtype == Float32 {
		x.Float32s()[i] = float32(v)
	} else {
		x.Float64s()[i] = v
	}
}

// fewSpecials puts special values into some blocks of src (blocks of pb
// positions): "nan" NaNs of distinct payloads in blocks 1 and 4 and at the
// last position; "zero" values of one sign (every value, the input's too,
// in (-1, 0] for amax, [0, 1) for amin, so a zero is the result) with
// signed zeros in blocks 0 and 3 only; "inf" infinities of both signs in
// block 2.
func fewSpecials(rng *rand.Rand, in, src *Tensor, special string, reduce Reduction, n, pb int64) {
	switch special {
	case "nan":
		for k, i := range []int64{pb + 3, pb + 700, 4*pb + 9, n - 1} {
			if i >= n {
				continue
			}
			if src.dtype == Float32 {
				src.Float32s()[i] = math.Float32frombits(0x7fc00000 | uint32(k+1))
			} else {
				src.Float64s()[i] = math.Float64frombits(0x7ff8000000000000 | uint64(k+1))
			}
		}
	case "zero":
		sign := -1.0
		if reduce == Amin {
			sign = 1
		}
		for i := int64(0); i < in.Len(); i++ {
			setFloat(in, i, sign*(0.5+rng.Float64()/2))
		}
		for i := int64(0); i < n; i++ {
			v := sign * (0.001 + rng.Float64())
			if b := i / pb; (b == 0 || b == 3) && rng.Intn(8) == 0 {
				v = math.Copysign(0, float64(1-2*rng.Intn(2)))
			}
			setFloat(src, i, v)
		}
	case "inf":
		for i := 2 * pb; i < min(3*pb, n); i += 97 {
			setFloat(src, i, math.Inf(1-2*rng.Intn(2)))
		}
	}
}

// requireSameBits requires got and want to hold the same bits (floats
// compared as bit patterns: NaN payloads and zero signs count).
func requireSameBits(t *testing.T, got, want *Tensor, name string) {
	t.Helper()
	require.Equal(t, want.dtype, got.dtype, name)
	switch want.dtype {
	case Float32:
		for i, w := range want.Float32s() {
			require.Equal(t, math.Float32bits(w), math.Float32bits(got.Float32s()[i]), "%s: element %d = %v, want %v", name, i, got.Float32s()[i], w)
		}
	case Float64:
		for i, w := range want.Float64s() {
			require.Equal(t, math.Float64bits(w), math.Float64bits(got.Float64s()[i]), "%s: element %d = %v, want %v", name, i, got.Float64s()[i], w)
		}
	default:
		require.NoError(t, sameValues(got, want, false), name)
	}
}

// TestScatterPlanPast2p32 checks the plans of scatters with 2^32 or more
// positions, which no test can run on this machine's memory: where hits
// are counted (a mean, an assign, or without the input) only the sorted
// path's 64-bit run lengths hold a target's count, so the plan is sorted
// on every device; a sum with the input keeps the device's plan; the
// backward of a reduction that counts refuses with the bound.
func TestScatterPlanPast2p32(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, n := range []int64{math.MaxUint32, math.MaxUint32 + 1, 1 << 34} {
			for _, c := range []struct {
				red  Reduction
				self bool
			}{{Mean, true}, {Assign, true}, {Sum, false}, {Amax, false}, {Sum, true}, {Amax, true}} {
				what := fmt.Sprintf("%d positions %s self=%v", n, c.red, c.self)
				g, err := newScatterGeom("scatter_reduce", []int64{16}, Float32, 0, []int64{n}, Int64, []int64{n}, Float32, c.red)
				require.NoError(t, err, what)
				out := &DeviceTensor{dtype: Float32, shape: []int64{16}, n: 16}
				sp := d.planner.scatter(d.caps, g.shape(out.n, out.dtype, c.self, false))
				counted := c.red == Mean || c.red == Assign || !c.self
				if n > math.MaxUint32 && counted {
					assert.Equal(t, scatterSorted, sp.Path, "%s: %s", what, sp.Reason)
				} else {
					assert.Equal(t, chooseScatter(d.caps, g.shape(out.n, out.dtype, c.self, false)).Path == scatterSorted,
						sp.Path == scatterSorted, "%s: %s", what, sp.Reason)
				}
				if c.red == Assign {
					continue
				}
				_, err = scatterBwdGeom("scatter_reduce_backward", []int64{16}, Float32, 0, []int64{n}, Int64, []int64{n}, Float32,
					c.red, []int64{16}, Float32)
				if n > math.MaxUint32 && c.red != Sum {
					var ae *ArgError
					require.ErrorAs(t, err, &ae, what)
					assert.ErrorIs(t, err, ErrUnsupported, what)
					assert.Equal(t, "index", ae.Arg, what)
				} else {
					assert.NoError(t, err, what)
				}
			}
		}
	})
}

// forceFewGroups makes d's scatters into few targets take the GPUs'
// few-groups pass with the given accumulators (knob SC_FEWG_SH), where it
// fits, and returns the undo. Both kinds take the scratch columns' launch
// shape (whose larger scratch may halve the lanes), so they fold the same
// positions in the same order.
func forceFewGroups(d *Device, scratch bool) func() {
	plans(d).scatterFn = func(sp scatterPlan, s scatterShape) scatterPlan {
		if !s.fewGroupsFit() {
			return sp
		}
		shape, ok := planFewGroups(d.caps, s.n, s.targets, s.elemBytes, true)
		if !ok {
			return sp
		}
		p, _ := planFewGroups(d.caps, s.n, s.targets, s.elemBytes, scratch)
		p.Pass.LocalSize, p.Pass.Groups, p.Pass.Tiles, p.Pass.TileElems =
			shape.Pass.LocalSize, shape.Pass.Groups, shape.Pass.Tiles, shape.Pass.TileElems
		return p
	}
	return func() { plans(d).scatterFn = nil }
}

// TestScatterFewGroupsScratch: the few-groups pass gives the same bits
// with its lanes' accumulators in registers and in scratch columns (the
// same folds in the same order), for every reduction the pass takes on
// float32 and float64 (whose sums, products and extremes depend on the
// order) and for integer sums and maxima, with and without hit counts
// (mean, include_self false) and with NaNs, and both match the
// reference. (Each case is a kernel build of each kind, seconds on
// lavapipe, which takes every third.)
func TestScatterFewGroupsScratch(t *testing.T) {
	type fewCase struct {
		dt     DType
		reduce Reduction
	}
	var cases []fewCase
	for _, dt := range []DType{Float32, Float64} {
		for _, reduce := range []Reduction{Sum, Prod, Mean, Amax, Amin} {
			cases = append(cases, fewCase{dt, reduce})
		}
	}
	cases = append(cases, fewCase{Int32, Sum}, fewCase{Int64, Amax})
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(31))
		sizes, counts := []int64{1, 300, 40001}, []int64{1, 3, 16}
		for k, c := range cases {
			if d.caps.Backend == host.Vulkan && k%3 != 2 {
				// lavapipe builds each pipeline in seconds: a float32
				// mean and a float64 sum without the input (hit counts),
				// a float64 amax with NaNs and the int64 amax
				continue
			}
			dt, reduce := c.dt, c.reduce
			// the sizes, target counts and include_self take turns
			n, targets, self := sizes[k%len(sizes)], counts[(k/len(sizes))%len(counts)], k%2 == 0
			name := fmt.Sprintf("n=%d/%d/%s/%s/self=%v", n, targets, dt, reduce, self)
			in, _ := NewTensor(dt, targets)
			src, _ := NewTensor(dt, n)
			randValues(rng, in, false)
			randValues(rng, src, reduce == Amax || reduce == Amin)
			if reduce == Prod {
				for i := int64(0); i < n; i++ {
					setFloat(src, i, 1+(rng.Float64()-0.5)/256)
				}
			}
			idx, _ := NewTensor(Int64, n)
			for i := range idx.Int64s() {
				idx.Int64s()[i] = rng.Int63n(targets)
			}
			want, err := RefScatterReduce(in, 0, idx, src, reduce, self)
			require.NoError(t, err, name)
			ts, release := uploadAll(t, d, in, idx, src)
			var outs [2]*Tensor
			for i, scratch := range []bool{false, true} {
				undo := forceFewGroups(d, scratch)
				out, err := d.ScatterReduce(ts[0], 0, ts[1], ts[2], reduce, self)
				undo()
				require.NoError(t, err, name)
				outs[i] = mustHost(t, out)
				require.NoError(t, sameValues(outs[i], want, looseFor(reduce)), "%s scratch=%v", name, scratch)
			}
			release()
			requireSameBits(t, outs[1], outs[0], name)
		}
	})
}
