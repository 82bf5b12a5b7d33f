package accel

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIndexReduceRandom checks index_add and index_reduce against the
// reference on every scatter path, dtype, reduction and shape (sizes 0 and
// 1 among them), and the deterministic mode bit for bit.
func TestIndexReduceRandom(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, strategy := range scatterStrategies {
			t.Run("strategy="+strategyName(strategy), func(t *testing.T) {
				defer forceScatter(d, strategy)()
				testIndexReduceRandom(t, d, strategy)
			})
		}
	})
}

// testIndexReduceRandom runs the cases with strategy forced; the
// deterministic mode's bits are checked where the strategy keeps them
// (the planner's, sorted, owned: a forced private or few pass is not
// bit-reproducible).
func testIndexReduceRandom(t *testing.T, d *Device, strategy scatterPath) {
	checkBits := strategy == planned || strategy == scatterSorted || strategy == scatterOwned
	rng := rand.New(rand.NewSource(11))
	cases := []struct {
		in     []int64
		dim    int64
		n      int64 // index length: source's size in dim
		maxIdx int64
	}{
		{[]int64{1}, 0, 1, 1},
		{[]int64{5}, 0, 0, 5},
		{[]int64{16}, 0, 2003, 16},
		{[]int64{1000}, 0, 5000, 1000},
		{[]int64{4, 6}, 0, 9, 4},
		{[]int64{4, 6}, -1, 13, 2},
		{[]int64{3, 4, 5}, 1, 7, 4},
		{[]int64{0, 3}, 1, 4, 3},
		{[]int64{2, 3, 4, 5}, 3, 1, 5},
	}
	for ci, c := range cases {
		dim := int(c.dim+int64(len(c.in))) % len(c.in)
		srcShape := append([]int64(nil), c.in...)
		srcShape[dim] = c.n
		for _, dt := range []DType{Int32, Int64, Float32, Float64} {
			for _, reduce := range []Reduction{Sum, Prod, Mean, Amax, Amin} {
				for _, self := range []bool{true, false} {
					in, _ := NewTensor(dt, c.in...)
					src, _ := NewTensor(dt, srcShape...)
					nan := reduce != Prod
					randValues(rng, in, nan)
					randValues(rng, src, nan)
					idx, _ := NewTensor(Int64, c.n)
					for i := range idx.Int64s() {
						idx.Int64s()[i] = rng.Int63n(c.maxIdx)
					}
					name := fmt.Sprintf("case%d/%s/%s/self=%v", ci, dt, reduce, self)
					want, err := RefIndexReduce(in, c.dim, idx, src, reduce, self)
					require.NoError(t, err, name)
					ts, release := uploadAll(t, d, in, idx, src)
					got := mustHost(t, must(t)(d.IndexReduce(ts[0], c.dim, ts[1], ts[2], reduce, self)))
					require.NoError(t, sameValues(got, want, looseFor(reduce)), name)
					det := mustHost(t, must(t)(d.IndexReduceDeterministic(ts[0], c.dim, ts[1], ts[2], reduce, self)))
					switch {
					case checkBits && (reduce == Amax || reduce == Amin):
						// a NaN kept, not computed: its payload too
						requireElems(t, want.data, det.data, "%s: deterministic", name)
					case checkBits:
						// bits, but a NaN a sum makes has the hardware's
						// payload (an NVIDIA GPU's is 0x7fffffff), as
						// ScatterReduceDeterministic's doc says
						require.NoError(t, sameBits(det, want), "%s: deterministic", name)
					default:
						require.NoError(t, sameValues(det, want, looseFor(reduce)), name+": deterministic")
					}
					if reduce == Sum && self {
						add := mustHost(t, must(t)(d.IndexAdd(ts[0], c.dim, ts[1], ts[2])))
						require.NoError(t, sameValues(add, want, true), name+": index_add")
						// int32 indices: the same result
						i32, _ := NewTensor(Int32, c.n)
						for i, v := range idx.Int64s() {
							i32.Int32s()[i] = int32(v)
						}
						d32 := mustUpload(t, d, i32)
						got32 := mustHost(t, must(t)(d.IndexReduceDeterministic(ts[0], c.dim, d32, ts[2], reduce, self)))
						d32.Release()
						requireElems(t, det.data, got32.data, "%s: int32 indices", name)
					}
					release()
				}
			}
		}
	}
}

// TestIndexReduceErrors: bad arguments name the op, the argument and the
// bound, before device work; an index out of range names its position.
func TestIndexReduceErrors(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		in, _ := NewTensor(Float32, 4, 3)
		src, _ := NewTensor(Float32, 4, 2)
		idx, _ := FromInt64s([]int64{2}, []int64{0, 2})
		ts, release := uploadAll(t, d, in, idx, src)
		defer release()
		for _, c := range []struct {
			name string
			call func() (*DeviceTensor, error)
			arg  string
			want error
		}{
			{"assign", func() (*DeviceTensor, error) { return d.IndexReduce(ts[0], 1, ts[1], ts[2], Assign, true) }, "reduce", ErrInvalidArgument},
			{"source size in dim", func() (*DeviceTensor, error) { return d.IndexAdd(ts[0], 0, ts[1], ts[2]) }, "source", ErrInvalidArgument},
			{"dim", func() (*DeviceTensor, error) { return d.IndexAdd(ts[0], 2, ts[1], ts[2]) }, "dim", ErrInvalidArgument},
			{"index rank", func() (*DeviceTensor, error) { return d.IndexAdd(ts[0], 1, ts[2], ts[2]) }, "index", ErrInvalidArgument},
		} {
			_, err := c.call()
			var ae *ArgError
			require.ErrorAs(t, err, &ae, c.name)
			assert.Equal(t, c.arg, ae.Arg, "%s: %v", c.name, err)
			assert.ErrorIs(t, err, c.want, c.name)
		}
		bad, _ := FromInt64s([]int64{2}, []int64{1, 3})
		db := mustUpload(t, d, bad)
		defer db.Release()
		_, err := d.IndexAdd(ts[0], 1, db, ts[2])
		var ae *ArgError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, "index[1]", ae.Arg, "%v", err)
		assert.True(t, errors.Is(err, ErrInvalidArgument), "%v", err)
		_, err = RefIndexReduce(in, 1, bad, src, Sum, true)
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, "index[1]", ae.Arg, "%v", err)
	})
}
