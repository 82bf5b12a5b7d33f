package reference

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// The union-pattern ops against their definition on dense operands: at
// every union position op(X, Y) with X, Y the dense sums of the entries
// (missing = 0), nothing else stored; CSR and COO agree.
func TestSparseBinaryAgainstDense(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	specials := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1, -2.5}
	for trial := 0; trial < 60; trial++ {
		shape := []int64{int64(1 + rng.Intn(4)), int64(1 + rng.Intn(5)), int64(1 + rng.Intn(6))}
		if trial%3 == 0 {
			shape = shape[1:]
		}
		size, _ := SparseSize(shape)
		gen := func() COO[float64] {
			nnz := int64(rng.Intn(int(size) + 2))
			c := COO[float64]{Shape: shape, Indices: make([]int64, int64(len(shape))*nnz), Values: make([]float64, nnz)}
			for k := int64(0); k < nnz; k++ {
				for d := range shape {
					c.Indices[int64(d)*nnz+k] = rng.Int63n(shape[d])
				}
				c.Values[k] = specials[rng.Intn(len(specials))]
				if rng.Intn(2) == 0 {
					c.Values[k] = rng.NormFloat64()
				}
			}
			return c
		}
		x, y := gen(), gen()
		require.Nil(t, ValidateCOO(shape, x.Indices, x.Nnz()))
		dx, dy := SparseToDense(x), SparseToDense(y)
		inX := make([]bool, size)
		inY := make([]bool, size)
		for _, k := range linearKeys(shape, x.Indices, x.Nnz()) {
			inX[k] = true
		}
		for _, k := range linearKeys(shape, y.Indices, y.Nnz()) {
			inY[k] = true
		}
		for op := SparseAdd; op <= SparseDiv; op++ {
			got, res := SparseBinaryCOO(op, x, y)
			dense := SparseToDense(got)
			n := 0
			for k := int64(0); k < size; k++ {
				want := 0.0
				if inX[k] || inY[k] {
					want = SparseApply(op, dx[k], dy[k])
					n++
				}
				require.Equal(t, math.Float64bits(want), math.Float64bits(dense[k]), "op %d trial %d pos %d", op, trial, k)
			}
			require.Equal(t, n, len(got.Values))
			require.Equal(t, n, len(res.Keys))
			if len(shape) >= 2 && len(shape) <= 3 {
				xc, yc := COOToCSR(x), COOToCSR(y)
				require.Nil(t, ValidateCSR(shape, xc.Crows, xc.Cols))
				gc, _ := SparseBinaryCSR(op, xc, yc)
				require.Equal(t, f64bits(dense), f64bits(SparseToDense(CSRToCOO(gc))))
				require.Equal(t, COOToCSR(got).Crows, gc.Crows)
			}
		}
	}
}

func TestSparseValidate(t *testing.T) {
	require.Equal(t, "indices[1][2]", ValidateCOO([]int64{2, 3}, []int64{0, 1, 1, 0, 2, 3}, 3).Arg)
	require.Equal(t, "crows[0]", ValidateCSR([]int64{2, 3}, []int64{1, 1, 2}, []int64{0, 1}).Arg)
	require.Equal(t, "crows[2]", ValidateCSR([]int64{2, 3}, []int64{0, 2, 1}, []int64{0, 1}).Arg)
	require.Equal(t, "crows[2]", ValidateCSR([]int64{2, 3}, []int64{0, 1, 1}, []int64{0, 1}).Arg)
	require.Equal(t, "cols[1]", ValidateCSR([]int64{2, 3}, []int64{0, 1, 2}, []int64{0, 3}).Arg)
	require.Equal(t, "crows[2]", ValidateCSR([]int64{2, 1, 3}, []int64{0, 1, 1, 0}, []int64{0, 1}).Arg)
	require.Nil(t, ValidateCSR([]int64{2, 1, 3}, []int64{0, 1, 0, 1}, []int64{0, 1}))
	ga, gb := SparseGrad(SparseDiv, 3.0, 0.0, 1.0)
	require.True(t, math.IsInf(ga, 1) && math.IsNaN(gb) == false && math.IsInf(gb, -1))
}

func f64bits(v []float64) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = math.Float64bits(x)
	}
	return out
}
