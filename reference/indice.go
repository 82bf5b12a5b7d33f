package reference

import (
	"slices"
)

// SparseConv are the parameters of a sparse convolution's index pairs
// (get_indice_pairs, spconv/mmcv semantics). Every slice has D entries, one
// per spatial dim. The reference assumes them valid (the accel package
// checks them).
type SparseConv struct {
	BatchSize    int64
	SpatialShape []int64
	KSize        []int64
	Stride       []int64
	Padding      []int64
	Dilation     []int64
	OutPadding   []int64
	Subm         bool // submanifold: the outputs are the input sites, offsets centred
	Transpose    bool // transposed conv: out = in*stride - padding + kidx*dilation
	Inverse      bool // the swapped pairs of the forward (regular) conv of these sites
}

// ConvOutShape returns the spatial shape of a regular conv's output,
// (s + 2p - dil*(k-1) - 1)/stride + 1 per dim, or of a transposed conv's,
// (s-1)*stride - 2p + k + out_padding: spconv's and mmcv's
// get_deconv_output_size, which leaves dilation out (PyTorch's
// ConvTranspose has dil*(k-1) + 1 where they have k), so a dilated
// transposed conv's targets past it are not stored, as in spconv. An entry
// below 1 means the conv has no output along that dim (callers reject it).
func ConvOutShape(p SparseConv, transpose bool) []int64 {
	out := make([]int64, len(p.SpatialShape))
	for d, s := range p.SpatialShape {
		if transpose {
			out[d] = (s-1)*p.Stride[d] - 2*p.Padding[d] + p.KSize[d] + p.OutPadding[d]
			continue
		}
		n := s + 2*p.Padding[d] - p.Dilation[d]*(p.KSize[d]-1) - 1
		if n < 0 {
			out[d] = 0
			continue
		}
		out[d] = n/p.Stride[d] + 1
	}
	return out
}

// IndicePairsResult is get_indice_pairs' output: Pairs is [K, 2, N] (N the
// number of the conv's input rows): for offset k the first Num[k] columns
// hold (input row, output row), the rest -1; OutIndices is [M, 1+D] rows
// (batch, coords); OutShape the output's spatial shape.
type IndicePairsResult struct {
	Pairs      []int32
	OutIndices []int32
	Num        []int32
	OutShape   []int64
	M          int64
}

// siteKey is a site's (batch, coords) as a comparable value (D <= 4).
type siteKey [5]int64

func rowKey(indices []int32, w, r int) siteKey {
	var k siteKey
	for j := 0; j < w; j++ {
		k[j] = int64(indices[r*w+j])
	}
	return k
}

// kernelIndex returns the multi-index of offset k over ksize (row-major).
func kernelIndex(k int64, ksize []int64) []int64 {
	kidx := make([]int64, len(ksize))
	for d := len(ksize) - 1; d >= 0; d-- {
		kidx[d] = k % ksize[d]
		k /= ksize[d]
	}
	return kidx
}

func kernelVolume(ksize []int64) int64 {
	k := int64(1)
	for _, v := range ksize {
		k *= v
	}
	return k
}

// IndicePairs computes the index pairs of a sparse convolution over the
// active sites indices ([L, 1+D] rows (batch, coords), valid and distinct)
// with a plain map-based walk:
//   - regular conv: input i pairs with output o through offset k where
//     in[d] = out[d]*stride[d] - padding[d] + kidx[d]*dilation[d] for every
//     d, the output inside ConvOutShape; the outputs are the distinct such
//     sites sorted by (batch, coords);
//   - transposed: out[d] = in[d]*stride[d] - padding[d] + kidx[d]*dilation[d];
//   - submanifold: the outputs are the input sites in input order, and
//     in = out + (kidx - ksize/2)*dilation;
//   - inverse: the regular conv's pairs swapped, (forward output row,
//     forward input row), the outputs being the input sites.
//
// Within each offset the pairs are in ascending input row.
func IndicePairs(indices []int32, p SparseConv) IndicePairsResult {
	D := len(p.SpatialShape)
	w := D + 1
	L := len(indices) / w
	K := kernelVolume(p.KSize)
	var res IndicePairsResult
	res.Num = make([]int32, K)
	switch {
	case p.Subm:
		res.OutShape = slices.Clone(p.SpatialShape)
		res.OutIndices = slices.Clone(indices)
		res.M = int64(L)
		rows := make(map[siteKey]int, L)
		for r := 0; r < L; r++ {
			rows[rowKey(indices, w, r)] = r
		}
		res.Pairs = newPairs(K, L)
		for k := int64(0); k < K; k++ {
			kidx := kernelIndex(k, p.KSize)
			for i := 0; i < L; i++ {
				s := rowKey(indices, w, i)
				for d := 0; d < D; d++ {
					s[1+d] -= (kidx[d] - p.KSize[d]/2) * p.Dilation[d] // in = out + (kidx - k/2)*dil
				}
				if o, ok := rows[s]; ok {
					addPair(res.Pairs, res.Num, k, L, int32(i), int32(o))
				}
			}
		}
		return res
	case p.Inverse:
		fwd := p
		fwd.Inverse = false
		f := IndicePairs(indices, fwd)
		res.OutShape = slices.Clone(p.SpatialShape)
		res.OutIndices = slices.Clone(indices)
		res.M = int64(L)
		M := int(f.M)
		res.Pairs = newPairs(K, M)
		for k := int64(0); k < K; k++ {
			n := int(f.Num[k])
			type pr struct{ in, out int32 }
			ps := make([]pr, n)
			for j := 0; j < n; j++ {
				ps[j] = pr{f.Pairs[(2*k+1)*int64(L)+int64(j)], f.Pairs[2*k*int64(L)+int64(j)]}
			}
			slices.SortFunc(ps, func(a, b pr) int { return int(a.in) - int(b.in) })
			for _, q := range ps {
				addPair(res.Pairs, res.Num, k, M, q.in, q.out)
			}
		}
		return res
	}
	res.OutShape = ConvOutShape(p, p.Transpose)
	type cand struct {
		k, i int64
		out  siteKey
	}
	var cands []cand
	seen := map[siteKey]bool{}
	for k := int64(0); k < K; k++ {
		kidx := kernelIndex(k, p.KSize)
		for i := 0; i < L; i++ {
			in := rowKey(indices, w, i)
			out := in
			ok := true
			for d := 0; d < D && ok; d++ {
				var o int64
				if p.Transpose {
					o = in[1+d]*p.Stride[d] - p.Padding[d] + kidx[d]*p.Dilation[d]
				} else {
					num := in[1+d] + p.Padding[d] - kidx[d]*p.Dilation[d]
					if num < 0 || num%p.Stride[d] != 0 {
						ok = false
						break
					}
					o = num / p.Stride[d]
				}
				ok = o >= 0 && o < res.OutShape[d]
				out[1+d] = o
			}
			if ok {
				cands = append(cands, cand{k, int64(i), out})
				seen[out] = true
			}
		}
	}
	outs := make([]siteKey, 0, len(seen))
	for s := range seen {
		outs = append(outs, s)
	}
	slices.SortFunc(outs, func(a, b siteKey) int {
		for j := 0; j < w; j++ {
			if a[j] != b[j] {
				if a[j] < b[j] {
					return -1
				}
				return 1
			}
		}
		return 0
	})
	row := make(map[siteKey]int32, len(outs))
	res.OutIndices = make([]int32, 0, len(outs)*w)
	for r, s := range outs {
		row[s] = int32(r)
		for j := 0; j < w; j++ {
			res.OutIndices = append(res.OutIndices, int32(s[j]))
		}
	}
	res.M = int64(len(outs))
	res.Pairs = newPairs(K, L)
	for _, c := range cands { // by offset, then input row
		addPair(res.Pairs, res.Num, c.k, L, int32(c.i), row[c.out])
	}
	return res
}

func newPairs(K int64, n int) []int32 {
	p := make([]int32, K*2*int64(n))
	for i := range p {
		p[i] = -1
	}
	return p
}

func addPair(pairs, num []int32, k int64, n int, in, out int32) {
	j := int64(num[k])
	pairs[2*k*int64(n)+j] = in
	pairs[(2*k+1)*int64(n)+j] = out
	num[k]++
}
