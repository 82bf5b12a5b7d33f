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
	inSt, srcSt := stridesOf(inShape), stridesOf(srcShape)
	p := make([]int64, len(srcShape))
	return reduceInto(input, src, reduce, includeSelf, func(f func(o, s int64)) {
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
			f(o, so)
		}
	})
}
