package reference

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// Hand-computed gradients pinning torch's rules: ties share (self counted
// when it ties, with include_self or without), a NaN result
// gives NaN, prod with one and with two zeros, mean counts self iff
// include_self, unhit positions pass the gradient through, src outside
// index's extent gets 0.
func TestScatterReduceBackwardRules(t *testing.T) {
	sh := func(n int64) []int64 { return []int64{n} }
	input := []float64{1, 5, 2, 0}
	index := []int64{0, 0, 2, 2}
	grad := []float64{1, 2, 4, 8}

	// amax, include_self: target 0 ties 3, 3 (self 1 loses); target 2: 7 wins
	src := []float64{3, 3, 1, 7, 99}
	out, gi, gs := ScatterReduceBackward(input, sh(4), 0, index, sh(4), src, sh(5), ReduceAmax, true, grad)
	require.Equal(t, []float64{3, 5, 7, 0}, out)
	require.Equal(t, []float64{0, 2, 0, 8}, gi)
	require.Equal(t, []float64{0.5, 0.5, 0, 4, 0}, gs)

	// self ties with src under include_self: split three ways
	out, gi, gs = ScatterReduceBackward([]float64{3, 5, 2, 0}, sh(4), 0, index, sh(4), src, sh(5), ReduceAmax, true, grad)
	require.Equal(t, []float64{3, 5, 7, 0}, out)
	require.Equal(t, []float64{1.0 / 3, 2, 0, 8}, gi)
	require.Equal(t, []float64{1.0 / 3, 1.0 / 3, 0, 4, 0}, gs)

	// self ties with src without include_self: torch still counts self
	// among the ties (its N_to_distribute), so the two 3s get a third each
	// and self's own gradient is 0
	out, gi, gs = ScatterReduceBackward([]float64{3, 5, 2, 0}, sh(4), 0, index, sh(4), src, sh(5), ReduceAmax, false, grad)
	require.Equal(t, []float64{3, 5, 7, 0}, out)
	require.Equal(t, []float64{0, 2, 0, 8}, gi)
	require.Equal(t, []float64{1.0 / 3, 1.0 / 3, 0, 4, 0}, gs)

	// a NaN among target 2's contributors: all of them get NaN; an unhit
	// NaN input gets NaN too
	nan := math.NaN()
	_, gi, gs = ScatterReduceBackward([]float64{1, 5, 2, nan}, sh(4), 0, index, sh(4), []float64{3, 3, nan, 7, 99}, sh(5), ReduceAmin, true, grad)
	require.Equal(t, []float64{1, 2}, gi[:2])
	require.True(t, math.IsNaN(gi[2]) && math.IsNaN(gi[3]), "%v", gi)
	require.Equal(t, []float64{0, 0}, gs[:2])
	require.True(t, math.IsNaN(gs[2]) && math.IsNaN(gs[3]), "%v", gs)
	require.Equal(t, 0.0, gs[4])

	// prod: one zero (self) -> only it gets the product of the others;
	// two zeros -> all 0
	out, gi, gs = ScatterReduceBackward([]float64{0, 5, 2, 0}, sh(4), 0, index, sh(4), []float64{3, 4, 0, 0, 9}, sh(5), ReduceProd, true, grad)
	require.Equal(t, []float64{0, 5, 0, 0}, out)
	require.Equal(t, []float64{12, 2, 0, 8}, gi)
	require.Equal(t, []float64{0, 0, 0, 0, 0}, gs)
	_, gi, gs = ScatterReduceBackward([]float64{0, 5, 2, 0}, sh(4), 0, index, sh(4), []float64{3, 4, 0, 5, 9}, sh(5), ReduceProd, false, grad)
	require.Equal(t, []float64{0, 2, 0, 8}, gi)
	require.Equal(t, []float64{4, 3, 20, 0, 0}, gs)

	// mean: count 3 with self, 2 without
	_, gi, gs = ScatterReduceBackward(input, sh(4), 0, index, sh(4), src, sh(5), ReduceMean, true, grad)
	require.Equal(t, []float64{1.0 / 3, 2, 4.0 / 3, 8}, gi)
	require.Equal(t, []float64{1.0 / 3, 1.0 / 3, 4.0 / 3, 4.0 / 3, 0}, gs)
	_, gi, gs = ScatterReduceBackward(input, sh(4), 0, index, sh(4), src, sh(5), ReduceMean, false, grad)
	require.Equal(t, []float64{0, 2, 0, 8}, gi)
	require.Equal(t, []float64{0.5, 0.5, 2, 2, 0}, gs)

	// sum
	_, gi, gs = ScatterReduceBackward(input, sh(4), 0, index, sh(4), src, sh(5), ReduceSum, false, grad)
	require.Equal(t, []float64{0, 2, 0, 8}, gi)
	require.Equal(t, []float64{1, 1, 4, 4, 0}, gs)
}
