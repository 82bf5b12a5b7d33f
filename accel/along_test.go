package accel

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"
)

func TestAlongAxisRandom(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, strategy := range scatterStrategies {
			t.Run("strategy="+strategy, func(t *testing.T) {
				defer forceScatter(d, strategy)()
				testAlongAxisRandom(t, d)
			})
		}
	})
}

func testAlongAxisRandom(t *testing.T, d *Device) {
	{
		rng := rand.New(rand.NewSource(8))
		cases := []struct {
			arr, idx, vals []int64
			axis           int64
		}{
			{[]int64{7}, []int64{5}, []int64{5}, 0},
			{[]int64{7}, []int64{3}, []int64{}, 0}, // scalar values broadcast
			{[]int64{4, 6}, []int64{4, 3}, []int64{4, 3}, 1},
			{[]int64{4, 6}, []int64{1, 3}, []int64{3}, -1},   // indices broadcast over rows, values right-aligned
			{[]int64{1, 6}, []int64{5, 2}, []int64{5, 2}, 1}, // arr broadcast (size-1 dim): all 5 index rows hit row 0
			{[]int64{3, 4, 5}, []int64{3, 2, 1}, []int64{1, 2, 5}, 1},
			{[]int64{2, 3, 4, 5}, []int64{2, 3, 2, 5}, []int64{2, 3, 2, 5}, 2},
			{[]int64{3, 4}, []int64{5}, []int64{5}, AxisNone},
			{[]int64{3, 0}, []int64{3, 0}, []int64{3, 0}, 1},
		}
		for ci, c := range cases {
			for _, dt := range []DType{Int32, Int64, Float32, Float64} {
				for _, red := range []string{"assign", "add", "mul", "mean", "amax", "amin"} {
					for _, self := range []bool{true, false} {
						arr, _ := NewTensor(dt, c.arr...)
						vals, _ := NewTensor(dt, c.vals...)
						fillSmallT(rng, arr)
						fillSmallT(rng, vals)
						if red == "assign" && ci == 4 {
							// The 5 index rows all land on arr's single row, so
							// assign has duplicates whose winner is unspecified
							// (GPUs do not keep index order): give every row the
							// same values so any winner is right. Order is tested
							// by the deterministic mode.
							v := vals.Shape()
							for r := int64(1); r < v[0]; r++ {
								for c := int64(0); c < v[1]; c++ {
									copy(vals.data[(r*v[1]+c)*int64(dt.Size()):(r*v[1]+c+1)*int64(dt.Size())], vals.data[c*int64(dt.Size()):(c+1)*int64(dt.Size())])
								}
							}
						}
						idx, _ := NewTensor(Int64, c.idx...)
						axisLen := int64(0)
						if c.axis == AxisNone {
							axisLen, _ = NumElements(c.arr)
						} else {
							axisLen = c.arr[(c.axis+int64(len(c.arr)))%int64(len(c.arr))]
						}
						// Unique indices along the axis in every slice (assign's order
						// is unspecified otherwise): a shifted permutation, negative half the time.
						for i := range idx.Int64s() {
							v := int64(i) % max(axisLen, 1)
							if rng.Intn(2) == 0 {
								v -= axisLen
							}
							idx.Int64s()[i] = v
						}
						if c.axis != AxisNone && c.idx[(c.axis+int64(len(c.idx)))%int64(len(c.idx))] > axisLen {
							t.Fatalf("bad test case %d", ci)
						}
						name := fmt.Sprintf("case%d/%s/%s/self=%v", ci, dt, red, self)
						want, err := PutAlongAxis(arr, idx, vals, c.axis, red, self)
						if err != nil {
							t.Fatal(name, err)
						}
						ts, release, err := uploadAll(d, arr, idx, vals)
						if err != nil {
							t.Fatal(err)
						}
						out, err := d.PutAlongAxis(ts[0], ts[1], ts[2], c.axis, red, self)
						if err != nil {
							t.Fatal(name, err)
						}
						got, _ := out.ToHost()
						if err := sameValues(got, want, "exact"); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						wt, err := TakeAlongAxis(want, idx, c.axis)
						if err != nil {
							t.Fatal(name, err)
						}
						tk, err := d.TakeAlongAxis(out, ts[1], c.axis)
						if err != nil {
							t.Fatal(name, err)
						}
						gt, _ := tk.ToHost()
						if fmt.Sprint(gt.Shape()) != fmt.Sprint(wt.Shape()) || sameValues(gt, wt, "exact") != nil {
							t.Fatalf("%s: take_along_axis differs", name)
						}
						tk.Release()
						out.Release()
						release()
					}
				}
			}
		}
	}
}

// fillSmallT fills with small integers, exact in every dtype and every
// reduction order.
func fillSmallT(rng *rand.Rand, x *Tensor) {
	for i := int64(0); i < x.Len(); i++ {
		v := rng.Int63n(5) - 2
		switch x.dtype {
		case Int32:
			x.Int32s()[i] = int32(v)
		case Int64:
			x.Int64s()[i] = v
		case Float32:
			x.Float32s()[i] = float32(v)
		case Float64:
			x.Float64s()[i] = float64(v)
		}
	}
}

func TestAlongAxisErrors(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		up := func(x *Tensor) *DeviceTensor {
			dx, err := d.Upload(x)
			if err != nil {
				t.Fatal(err)
			}
			return dx
		}
		arr := mustTensor(Float32, 3, 4)
		idx := mustTensor(Int64, 3, 2)
		idx.Int64s()[3] = 4 // position (1, 1): out of range for axis 1
		_, err := d.PutAlongAxis(up(arr), up(idx), up(mustTensor(Float32, 3, 2)), 1, "assign", true)
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Arg != "indices[1, 1]" {
			t.Fatalf("out-of-range index: %v", err)
		}
		idx.Int64s()[3] = -5 // wraps to -1: still out of range
		_, err = d.TakeAlongAxis(up(arr), up(idx), 1)
		if !errors.As(err, &ae) || ae.Arg != "indices[1, 1]" {
			t.Fatalf("out-of-range negative index: %v", err)
		}
		ok := mustTensor(Int64, 3, 2)
		for i, c := range []struct {
			idx, vals *Tensor
			axis      int64
			reduce    string
			arg       string
		}{
			{ok, mustTensor(Float32, 3, 2), 2, "assign", "axis"},
			{ok, mustTensor(Float32, 3, 2), 0, "max", "reduce"},
			{mustTensor(Int64, 2), mustTensor(Float32, 2), 1, "assign", "indices"},       // rank
			{mustTensor(Int64, 2, 2), mustTensor(Float32, 2, 2), 1, "assign", "indices"}, // 2 vs 3 rows
			{ok, mustTensor(Float32, 3, 3), 1, "assign", "values"},                       // does not broadcast
			{ok, mustTensor(Float32, 3, 2), AxisNone, "assign", "indices"},               // not 1-d
		} {
			_, err := d.PutAlongAxis(up(arr), up(c.idx), up(c.vals), c.axis, c.reduce, true)
			if !errors.As(err, &ae) || ae.Arg != c.arg || !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("case %d: %v, want an error on %q", i, err, c.arg)
			}
		}
	})
}
