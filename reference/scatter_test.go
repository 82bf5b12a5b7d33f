package reference

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// Cases from PyTorch's scatter_reduce documentation, plus the rules the
// project pins: integer mean floors, NaN propagates through amax.
func TestScatterReduceDocs(t *testing.T) {
	src := []float64{1, 2, 3, 4, 5, 6}
	index := []int64{0, 1, 0, 1, 2, 1}
	input := []float64{1, 2, 3, 4}
	sh := func(n int64) []int64 { return []int64{n} }
	got := ScatterReduce(input, sh(4), 0, index, sh(6), src, sh(6), ReduceSum, true)
	require.Equal(t, []float64{5, 14, 8, 4}, got)
	got = ScatterReduce(input, sh(4), 0, index, sh(6), src, sh(6), ReduceSum, false)
	require.Equal(t, []float64{4, 12, 5, 4}, got)
	got = ScatterReduce(input, sh(4), 0, index, sh(6), src, sh(6), ReduceAmax, true)
	require.Equal(t, []float64{3, 6, 5, 4}, got)
	got = ScatterReduce(input, sh(4), 0, index, sh(6), src, sh(6), ReduceMean, true)
	require.InDeltaSlice(t, []float64{5.0 / 3, 14.0 / 4, 8.0 / 2, 4}, got, 1e-15)

	mi := ScatterReduce([]int32{0, 9}, sh(2), 0, []int64{0, 0}, sh(2), []int32{-7, 0}, sh(2), ReduceMean, false)
	require.Equal(t, []int32{-4, 9}, mi, "integer mean floors; unhit positions keep the input")

	nan := ScatterReduce([]float32{0, 0}, sh(2), 0, []int64{1, 1}, sh(2), []float32{float32(math.NaN()), 1}, sh(2), ReduceAmax, true)
	require.True(t, math.IsNaN(float64(nan[1])), fmt.Sprint(nan))

	wrap := ScatterReduce([]int32{math.MaxInt32}, sh(1), 0, []int64{0}, sh(1), []int32{1}, sh(1), ReduceSum, true)
	require.Equal(t, []int32{math.MinInt32}, wrap, "integer sums wrap")
}
