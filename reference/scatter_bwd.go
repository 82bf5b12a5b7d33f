package reference

import "math"

// Float is the element types the gradient references take.
type Float interface {
	~float32 | ~float64
}

// ScatterReduceBackward is the gradient of torch's
// input.scatter_reduce(dim, index, src, reduce, include_self) with respect
// to input and src, given grad (the gradient of the result, input's shape).
// It returns the forward result too. Each target's contributors (input's
// own value first when includeSelf, then src values in index order) are
// walked in that order:
//   - sum: every contributor gets grad[target];
//   - mean: grad[target] / count (count includes self iff includeSelf);
//   - amax/amin: grad[target] split evenly among the contributors equal to
//     the result (mask * (grad / count), as torch multiplies), the input's
//     own value counted when it equals the result even without
//     include_self (torch's N_to_distribute); a target
//     whose result equals no contributor (a NaN result) gives NaN to all of
//     them, and an input NaN gives NaN at its own position (torch's
//     (self == result) mask is false there);
//   - prod: grad[target] * (the product of the contributors before it *
//     the product of those after it), prefix and suffix products in index
//     order, so zeros are exact (one zero: only it gets a nonzero gradient;
//     two: every gradient is 0) and nothing is divided.
//
// With includeSelf false the input's gradient is 0 at every hit target.
// Positions of the input never hit get grad; positions of src outside
// index's extent get 0. Index values must be in range (the caller
// validates).
func ScatterReduceBackward[T Float](input []T, inShape []int64, dim int, index []int64, idxShape []int64,
	src []T, srcShape []int64, reduce string, includeSelf bool, grad []T) (out, gradInput, gradSrc []T) {
	out = ScatterReduce(input, inShape, dim, index, idxShape, src, srcShape, reduce, includeSelf)
	gradInput = append([]T(nil), grad...)
	gradSrc = make([]T, len(src))
	// contributors' source offsets per target, in index order
	runs := map[int64][]int64{}
	var targets []int64
	eachPosition(inShape, dim, index, idxShape, srcShape, func(o, s int64) {
		if _, ok := runs[o]; !ok {
			targets = append(targets, o)
		}
		runs[o] = append(runs[o], s)
	})
	nan := T(math.NaN())
	mask := func(b bool) T {
		if b {
			return 1
		}
		return 0
	}
	if reduce == ReduceAmax || reduce == ReduceAmin {
		for p, v := range input {
			if isNaN(v) {
				gradInput[p] = nan
			}
		}
	}
	for _, o := range targets {
		run := runs[o]
		g := grad[o]
		self := T(0) // the input's gradient at o with include_self
		switch reduce {
		case ReduceSum:
			for _, s := range run {
				gradSrc[s] = g
			}
			self = g
		case ReduceMean:
			c := int64(len(run))
			if includeSelf {
				c++
			}
			q := g / T(c)
			for _, s := range run {
				gradSrc[s] = q
			}
			self = q
		case ReduceAmax, ReduceAmin:
			r := out[o]
			c := int64(0)
			// torch (1.13 and since) counts the input's own value among
			// the ties whenever it equals the result, include_self or not;
			// without include_self its own gradient is then 0, so the
			// contributors share less than grad.
			if input[o] == r {
				c++
			}
			for _, s := range run {
				if src[s] == r {
					c++
				}
			}
			q := nan
			if c > 0 {
				q = g / T(c)
			}
			for _, s := range run {
				gradSrc[s] = mask(src[s] == r) * q
			}
			self = mask(input[o] == r) * q
		case ReduceProd:
			// suffix products (exclusive) first, kept in gradSrc, then the
			// prefix walk: grad * (prefix * suffix)
			acc := T(1)
			for k := len(run) - 1; k >= 0; k-- {
				gradSrc[run[k]] = acc
				acc = acc * src[run[k]]
			}
			pre := T(1)
			if includeSelf {
				self = g * (pre * acc)
				pre = pre * input[o]
			}
			for _, s := range run {
				gradSrc[s] = g * (pre * gradSrc[s])
				pre = pre * src[s]
			}
		default:
			panic("reference: no gradient for reduce " + reduce)
		}
		if includeSelf {
			gradInput[o] = self
		} else {
			gradInput[o] = 0
		}
	}
	return out, gradInput, gradSrc
}
