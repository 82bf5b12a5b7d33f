package reference

// IndexReduce is torch.Tensor.index_reduce(dim, index, source, reduce,
// include_self), and index_add(dim, index, source) for reduce "sum": for
// every position p of source (row-major), out[p with p[dim] :=
// index[p[dim]]] is folded with source[p], in that order. index is 1-D
// with source's size in dim; source has input's shape in every other dim.
// Index values must be in range (the caller validates). Means and the
// identity without include_self are ScatterReduce's.
func IndexReduce[T Number](input []T, inShape []int64, dim int, index []int64,
	src []T, srcShape []int64, reduce string, includeSelf bool) []T {
	out := append([]T(nil), input...)
	count := make([]int64, len(out))
	inSt, srcSt := stridesOf(inShape), stridesOf(srcShape)
	p := make([]int64, len(srcShape))
	for s := int64(0); s < int64(len(src)); s++ {
		rem := s
		for k := len(srcShape) - 1; k >= 0; k-- {
			p[k] = rem % srcShape[k]
			rem /= srcShape[k]
		}
		var o, so int64
		for k := range srcShape {
			so += p[k] * srcSt[k]
			if k == dim {
				o += index[p[k]] * inSt[k]
			} else {
				o += p[k] * inSt[k]
			}
		}
		if !includeSelf && count[o] == 0 {
			out[o] = identity[T](reduce)
		}
		count[o]++
		out[o] = combine(reduce, out[o], src[so])
	}
	if reduce == ReduceMean {
		for o, c := range count {
			if c == 0 {
				continue
			}
			if includeSelf {
				c++
			}
			out[o] = floorDiv(out[o], c)
		}
	}
	return out
}
