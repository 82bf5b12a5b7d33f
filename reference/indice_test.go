package reference

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Hand-worked 1-D cases: sites x = 0 and x = 3 of a length-5 line in
// batch 0, kernel 3.
func TestIndicePairs1D(t *testing.T) {
	one := []int64{1}
	p := SparseConv{BatchSize: 1, SpatialShape: []int64{5}, KSize: []int64{3}, Stride: one, Padding: one, Dilation: one,
		OutPadding: []int64{0}}
	idx := []int32{0, 3, 0, 0} // rows (0, 3), (0, 0)

	// regular conv, padding 1: out = in + 1 - kidx, outputs 0..4 sorted
	r := IndicePairs(idx, p)
	require.Equal(t, []int64{5}, r.OutShape)
	require.Equal(t, []int32{0, 0, 0, 1, 0, 2, 0, 3, 0, 4}, r.OutIndices)
	// offset 0 (out = in + 1): row 0 -> 4, row 1 -> 1; offset 1: out = in;
	// offset 2 (out = in - 1): row 0 -> 2, row 1 none
	require.Equal(t, []int32{0, 1, 4, 1, 0, 1, 3, 0, 0, -1, 2, -1}, r.Pairs)
	require.Equal(t, []int32{2, 2, 1}, r.Num)

	// submanifold: outputs are the inputs; in = out + (kidx - 1)
	p.Subm = true
	s := IndicePairs([]int32{0, 0, 0, 1}, p)
	require.Equal(t, []int32{0, 0, 0, 1}, s.OutIndices)
	// k0: out = in + 1: row 0 (x=0) -> row 1; k1: identity; k2: out = in - 1: row 1 -> row 0
	require.Equal(t, []int32{0, -1, 1, -1, 0, 1, 0, 1, 1, -1, 0, -1}, s.Pairs)
	require.Equal(t, []int32{1, 2, 1}, s.Num)

	// transposed, stride 2, padding 0: out = 2*in + kidx, shape (5-1)*2 + 2 + 1 = 11
	p.Subm, p.Transpose, p.Stride, p.Padding = false, true, []int64{2}, []int64{0}
	tr := IndicePairs([]int32{0, 1}, p)
	require.Equal(t, []int64{11}, tr.OutShape)
	require.Equal(t, []int32{0, 2, 0, 3, 0, 4}, tr.OutIndices)
	require.Equal(t, []int32{0, 0, 0, 1, 0, 2}, tr.Pairs)

	// transposed, dilation 2, stride 1: out = in + 2*kidx inside spconv's
	// (5-1)*1 + 3 = 7 (get_deconv_output_size leaves dilation out; PyTorch's
	// ConvTranspose would give 9): x = 4's target 8 is not stored
	p.Stride, p.Dilation = one, []int64{2}
	td := IndicePairs([]int32{0, 0, 0, 4}, p)
	require.Equal(t, []int64{7}, td.OutShape)
	require.Equal(t, []int32{0, 0, 0, 2, 0, 4, 0, 6}, td.OutIndices)
	// k0: 0 -> x0 (row 0), 4 -> x4 (row 2); k1: 0 -> x2 (row 1), 4 -> x6
	// (row 3); k2: 0 -> x4 (row 2)
	require.Equal(t, []int32{0, 1, 0, 2, 0, 1, 1, 3, 0, -1, 2, -1}, td.Pairs)
	require.Equal(t, []int32{2, 2, 1}, td.Num)
	p.Stride, p.Dilation = []int64{2}, one

	// inverse of the stride-2, padding-1 conv of x = 3: the forward has
	// out*2 = 4 - kidx, outputs x = 1 (row 0, offset 2) and x = 2 (row 1,
	// offset 0); the inverse pairs them the other way
	p.Transpose, p.Inverse, p.Padding = false, true, []int64{1}
	inv := IndicePairs([]int32{0, 3}, p)
	require.Equal(t, []int32{0, 3}, inv.OutIndices)
	require.Equal(t, []int32{1, -1, 0, -1, -1, -1, -1, -1, 0, -1, 0, -1}, inv.Pairs)
	require.Equal(t, []int32{1, 0, 1}, inv.Num)
}
