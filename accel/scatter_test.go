package accel

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/accelkern/accel/host"
)

// scatterStrategies are the strategies the scatter tests force on every
// device ("" is the planner's own choice).
var scatterStrategies = []string{"", host.ScatterAtomic, host.ScatterSorted, host.ScatterOwned, host.ScatterPrivate}

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

// sameValues compares exactly, or for float sums, means and products
// within a relative tolerance (atomics reduce in another order).
func sameValues(got, want *Tensor, reduce string) error {
	loose := reduce == ReduceSum || reduce == ReduceMean || reduce == ReduceProd
	for i := int64(0); i < want.Len(); i++ {
		var g, w float64
		switch want.dtype {
		case Int32:
			if got.Int32s()[i] != want.Int32s()[i] {
				return fmt.Errorf("element %d = %d, want %d", i, got.Int32s()[i], want.Int32s()[i])
			}
			continue
		case Int64:
			if got.Int64s()[i] != want.Int64s()[i] {
				return fmt.Errorf("element %d = %d, want %d", i, got.Int64s()[i], want.Int64s()[i])
			}
			continue
		case Float32:
			g, w = float64(got.Float32s()[i]), float64(want.Float32s()[i])
		case Float64:
			g, w = got.Float64s()[i], want.Float64s()[i]
		}
		if math.IsNaN(w) && math.IsNaN(g) || g == w {
			continue
		}
		tol := 0.0
		if loose {
			tol = 1e-4 * (1 + math.Abs(w))
		}
		if !(math.Abs(g-w) <= tol) {
			return fmt.Errorf("element %d = %v, want %v", i, g, w)
		}
	}
	return nil
}

func TestScatterReduceRandom(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, strategy := range scatterStrategies {
			t.Run("strategy="+strategy, func(t *testing.T) {
				defer forceScatter(d, strategy)()
				testScatterReduceRandom(t, d)
			})
		}
	})
}

func testScatterReduceRandom(t *testing.T, d *Device) {
	{
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
		}
		for ci, c := range cases {
			for _, dt := range []DType{Int32, Int64, Float32, Float64} {
				for _, reduce := range []string{ReduceSum, ReduceProd, ReduceMean, ReduceAmax, ReduceAmin} {
					for _, self := range []bool{true, false} {
						in, _ := NewTensor(dt, c.in...)
						src, _ := NewTensor(dt, c.src...)
						randValues(rng, in, true)
						randValues(rng, src, true)
						if reduce == ReduceProd && (dt == Float32 || dt == Float64) {
							// keep products of many factors finite and comparable
							randValues(rng, in, false)
							randValues(rng, src, false)
						}
						idx, _ := NewTensor(Int64, c.idx...)
						for i := range idx.Int64s() {
							idx.Int64s()[i] = rng.Int63n(c.maxIdx)
						}
						name := fmt.Sprintf("case%d/%s/%s/self=%v", ci, dt, reduce, self)
						want, err := ScatterReduce(in, c.dim, idx, src, reduce, self)
						if err != nil {
							t.Fatal(name, err)
						}
						ts, release, err := uploadAll(d, in, idx, src)
						if err != nil {
							t.Fatal(err)
						}
						out, err := d.ScatterReduce(ts[0], c.dim, ts[1], ts[2], reduce, self)
						if err != nil {
							t.Fatal(name, err)
						}
						got, _ := out.ToHost()
						out.Release()
						release()
						if err := sameValues(got, want, reduce); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
					}
				}
			}
		}
	}
}

func TestScatterAssignPermutation(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, strategy := range scatterStrategies {
			t.Run("strategy="+strategy, func(t *testing.T) {
				defer forceScatter(d, strategy)()
				testScatterAssignPermutation(t, d)
			})
		}
	})
}

func testScatterAssignPermutation(t *testing.T, d *Device) {
	{
		rng := rand.New(rand.NewSource(6))
		for _, n := range []int{1, 2, 1000, 100003} {
			for _, dt := range []DType{Int32, Float32, Int64, Float64} {
				in, _ := NewTensor(dt, int64(n))
				src, _ := NewTensor(dt, int64(n))
				randValues(rng, in, false)
				randValues(rng, src, false)
				idx, _ := NewTensor(Int64, int64(n))
				for i, p := range rng.Perm(n) {
					idx.Int64s()[i] = int64(p)
				}
				want, _ := Scatter(in, 0, idx, src)
				ts, release, _ := uploadAll(d, in, idx, src)
				out, err := d.Scatter(ts[0], 0, ts[1], ts[2])
				if err != nil {
					t.Fatal(err)
				}
				got, _ := out.ToHost()
				out.Release()
				release()
				if err := sameValues(got, want, ReduceAssign); err != nil {
					t.Fatalf("n=%d %s: %v", n, dt, err)
				}
			}
		}
	}
}

func TestScatterErrors(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, strategy := range scatterStrategies {
			t.Run("strategy="+strategy, func(t *testing.T) {
				defer forceScatter(d, strategy)()
				testScatterErrors(t, d)
			})
		}
	})
}

func testScatterErrors(t *testing.T, d *Device) {
	{
		up := func(x *Tensor) *DeviceTensor {
			dx, err := d.Upload(x)
			if err != nil {
				t.Fatal(err)
			}
			return dx
		}
		in, _ := NewTensor(Float32, 4, 5)
		src, _ := NewTensor(Float32, 4, 5)
		idx, _ := NewTensor(Int64, 3, 5)
		idx.Int64s()[7] = 4 // position (1, 2): out of range for dim 0 (size 4)
		idx.Int64s()[12] = -1
		_, err := d.ScatterReduce(up(in), 0, up(idx), up(src), ReduceSum, true)
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Arg != "index[1, 2]" || !strings.Contains(err.Error(), "[0, 4)") {
			t.Fatalf("out-of-range index: %v", err)
		}
		// A bad index far into a large index tensor is found on the device.
		big, _ := NewTensor(Int64, 300000)
		bsrc, _ := NewTensor(Float32, 300000)
		bin, _ := NewTensor(Float32, 10)
		big.Int64s()[234567] = 10
		_, err = d.ScatterReduce(up(bin), 0, up(big), up(bsrc), ReduceAmax, false)
		if !errors.As(err, &ae) || ae.Arg != "index[234567]" {
			t.Fatalf("far bad index: %v", err)
		}
		ok, _ := NewTensor(Int64, 3, 5)
		bad := []struct {
			in, idx, src *Tensor
			dim          int64
			reduce, arg  string
		}{
			{in, ok, src, 2, ReduceSum, "dim"},
			{in, ok, src, 0, "max", "reduce"},
			{in, mustTensor(Int64, 5, 5), src, 0, ReduceSum, "index"},                       // larger than src in dim 0
			{in, mustTensor(Int64, 3, 6), mustTensor(Float32, 4, 6), 0, ReduceSum, "index"}, // larger than input in dim 1
			{in, mustTensor(Int64, 3), src, 0, ReduceSum, "index"},                          // rank
			{in, mustTensor(Int32, 3, 5), src, 0, ReduceSum, "index"},                       // dtype
			{in, ok, mustTensor(Float64, 4, 5), 0, ReduceSum, "src"},                        // dtype
		}
		for i, b := range bad {
			_, err := d.ScatterReduce(up(b.in), b.dim, up(b.idx), up(b.src), b.reduce, true)
			if !errors.As(err, &ae) || ae.Arg != b.arg || !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("case %d: %v, want an error on %q", i, err, b.arg)
			}
		}
	}
}

func mustTensor(dt DType, shape ...int64) *Tensor {
	t, err := NewTensor(dt, shape...)
	if err != nil {
		panic(err)
	}
	return t
}
