package accel

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAlongAxisRandom(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, strategy := range scatterStrategies {
			t.Run("strategy="+strategyName(strategy), func(t *testing.T) {
				defer forceScatter(d, strategy)()
				testAlongAxisRandom(t, d)
			})
		}
	})
}

func testAlongAxisRandom(t *testing.T, d *Device) {
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
			for _, redName := range []string{"assign", "sum", "prod", "mean", "amax", "amin"} {
				red, err := ParseReduction(redName)
				require.NoError(t, err)
				for _, self := range []bool{true, false} {
					arr, _ := NewTensor(dt, c.arr...)
					vals, _ := NewTensor(dt, c.vals...)
					fillSmallT(rng, arr)
					fillSmallT(rng, vals)
					if red == Assign && ci == 4 {
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
					if c.axis != AxisNone {
						require.LessOrEqual(t, c.idx[(c.axis+int64(len(c.idx)))%int64(len(c.idx))], axisLen, "bad test case %d", ci)
					}
					name := fmt.Sprintf("case%d/%s/%s/self=%v", ci, dt, redName, self)
					want, err := RefPutAlongAxis(arr, idx, vals, c.axis, red, self)
					require.NoError(t, err, name)
					ts, release := uploadAll(t, d, arr, idx, vals)
					out, err := d.PutAlongAxis(ts[0], ts[1], ts[2], c.axis, red, self)
					require.NoError(t, err, name)
					got, err := out.ToHost()
					require.NoError(t, err, name)
					require.NoError(t, sameValues(got, want, false), name)
					wt, err := RefTakeAlongAxis(want, idx, c.axis)
					require.NoError(t, err, name)
					tk, err := d.TakeAlongAxis(out, ts[1], c.axis)
					require.NoError(t, err, name)
					gt := mustHost(t, tk)
					require.Equal(t, wt.Shape(), gt.Shape(), "%s: take_along_axis shape", name)
					require.NoError(t, sameValues(gt, wt, false), "%s: take_along_axis differs", name)
					out.Release()
					release()
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
			dx := mustUpload(t, d, x)
			t.Cleanup(dx.Release)
			return dx
		}
		arr := hostZeros(Float32, 3, 4)
		idx := hostZeros(Int64, 3, 2)
		idx.Int64s()[3] = 4 // position (1, 1): out of range for axis 1
		_, err := d.PutAlongAxis(up(arr), up(idx), up(hostZeros(Float32, 3, 2)), 1, Assign, true)
		var ae *ArgError
		require.ErrorAs(t, err, &ae, "out-of-range index")
		require.Equal(t, "indices[1, 1]", ae.Arg, "out-of-range index: %v", err)
		idx.Int64s()[3] = -5 // wraps to -1: still out of range
		_, err = d.TakeAlongAxis(up(arr), up(idx), 1)
		require.ErrorAs(t, err, &ae, "out-of-range negative index")
		require.Equal(t, "indices[1, 1]", ae.Arg, "out-of-range negative index: %v", err)
		ok := hostZeros(Int64, 3, 2)
		for i, c := range []struct {
			idx, vals *Tensor
			axis      int64
			reduce    Reduction
			arg       string
		}{
			{ok, hostZeros(Float32, 3, 2), 2, Assign, "axis"},
			{ok, hostZeros(Float32, 3, 2), 0, Amin + 1, "reduce"},                    // no such reduction
			{ok, hostZeros(Float32, 3, 2), 0, Reduction(-1), "reduce"},               // no such reduction
			{hostZeros(Int64, 2), hostZeros(Float32, 2), 1, Assign, "indices"},       // rank
			{hostZeros(Int64, 2, 2), hostZeros(Float32, 2, 2), 1, Assign, "indices"}, // 2 vs 3 rows
			{ok, hostZeros(Float32, 3, 3), 1, Assign, "values"},                      // does not broadcast
			{ok, hostZeros(Float32, 3, 2), AxisNone, Assign, "indices"},              // not 1-d
		} {
			_, err := d.PutAlongAxis(up(arr), up(c.idx), up(c.vals), c.axis, c.reduce, true)
			require.ErrorAs(t, err, &ae, "case %d: want an error on %q", i, c.arg)
			require.Equal(t, c.arg, ae.Arg, "case %d: %v", i, err)
			require.ErrorIs(t, err, ErrInvalidArgument, "case %d", i)
		}
	})
}

// TestAlongAxisInt32Indices: int32 indices (Paddle takes them) give what
// the same int64 indices give, on the device and in the reference, and a
// bad one is named as an int64 one is.
func TestAlongAxisInt32Indices(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(81))
		arr, _ := NewTensor(Float32, 3, 5, 4)
		vals, _ := NewTensor(Float32, 3, 2, 4)
		fillSmallT(rng, arr)
		fillSmallT(rng, vals)
		idx64, _ := NewTensor(Int64, 3, 2, 4)
		idx32, _ := NewTensor(Int32, 3, 2, 4)
		for i := range idx64.Int64s() {
			v := int64(i/4%2*2) - 5*int64(rng.Intn(2)) // 0 or 2, or -5 / -3 from the end
			idx64.Int64s()[i], idx32.Int32s()[i] = v, int32(v)
		}
		for _, red := range []Reduction{Assign, Sum, Amax} {
			want, err := RefPutAlongAxis(arr, idx64, vals, 1, red, true)
			require.NoError(t, err)
			ref32, err := RefPutAlongAxis(arr, idx32, vals, 1, red, true)
			require.NoError(t, err)
			require.NoError(t, sameValues(ref32, want, false), "reference, %s", red)
			ts, release := uploadAll(t, d, arr, idx32, vals)
			out, err := d.PutAlongAxis(ts[0], ts[1], ts[2], 1, red, true)
			require.NoError(t, err, red)
			got, err := out.ToHost()
			require.NoError(t, err)
			require.NoError(t, sameValues(got, want, false), "put, %s", red)
			tk, err := d.TakeAlongAxis(out, ts[1], 1)
			require.NoError(t, err)
			wt, err := RefTakeAlongAxis(want, idx64, 1)
			require.NoError(t, err)
			require.NoError(t, sameValues(mustHost(t, tk), wt, false), "take, %s", red)
			out.Release()
			release()
		}
		idx32.Int32s()[13] = 5 // past the axis (length 5)
		ts, release := uploadAll(t, d, arr, idx32, vals)
		defer release()
		_, err := d.PutAlongAxis(ts[0], ts[1], ts[2], 1, Assign, true)
		var ae *ArgError
		require.ErrorAs(t, err, &ae)
		assert.ErrorIs(t, err, ErrInvalidArgument)
		assert.Equal(t, "indices[1, 1, 1]", ae.Arg, "%v", err)
		_, err = RefPutAlongAxis(arr, idx32, vals, 1, Assign, true)
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, "indices[1, 1, 1]", ae.Arg, "reference: %v", err)
	})
}
