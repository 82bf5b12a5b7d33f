package reference

// alongWalk enumerates the positions of put_along_axis/take_along_axis
// from NumPy's definition: the loop shape is arr and indices broadcast in
// every dim but axis (indices' size along axis); at position q the target
// in arr has q's coordinates (0 where arr's size is 1) with the index value
// (wrapped once if negative) along axis; values broadcast right-aligned.
// f gets the flat target, the flat values position and the flat loop
// position. ok=false means an index out of range (at flat index offset bad).
func alongWalk(arrShape, idxShape, valShape []int64, indices []int64, axis int,
	f func(target, val, pos int64)) (ok bool, bad int64) {
	r := len(arrShape)
	loop := make([]int64, r)
	for d := 0; d < r; d++ {
		// NumPy broadcasting: a size-1 dim takes the other's size, 0
		// included (1 against 0 is 0, not max's 1).
		switch {
		case d == axis || arrShape[d] == 1:
			loop[d] = idxShape[d]
		default:
			loop[d] = arrShape[d]
		}
	}
	total := int64(1)
	for _, s := range loop {
		total *= s
	}
	q := make([]int64, r)
	for pos := int64(0); pos < total; pos++ {
		rem := pos
		for d := r - 1; d >= 0; d-- {
			q[d] = rem % loop[d]
			rem /= loop[d]
		}
		io := int64(0)
		for d := 0; d < r; d++ {
			c := q[d]
			if idxShape[d] == 1 {
				c = 0
			}
			io = io*idxShape[d] + c
		}
		ix := indices[io]
		if ix < 0 {
			ix += arrShape[axis]
		}
		if ix < 0 || ix >= arrShape[axis] {
			return false, io
		}
		t := int64(0)
		for d := 0; d < r; d++ {
			c := q[d]
			if d == axis {
				c = ix
			} else if arrShape[d] == 1 {
				c = 0
			}
			t = t*arrShape[d] + c
		}
		v := int64(0)
		off := r - len(valShape)
		for d := off; d < r; d++ {
			c := q[d]
			if valShape[d-off] == 1 {
				c = 0
			}
			v = v*valShape[d-off] + c
		}
		f(t, v, pos)
	}
	return true, 0
}

// PutAlongAxis is numpy.put_along_axis with Paddle's reductions (assign,
// sum, prod, mean, amax, amin) and include_self, applied in loop order.
// Shapes must already be valid; ok=false reports an out-of-range index at
// flat index offset bad.
func PutAlongAxis[T Number](arr []T, arrShape []int64, indices []int64, idxShape []int64, values []T, valShape []int64,
	axis int, reduce string, includeSelf bool) (out []T, ok bool, bad int64) {
	out = append([]T(nil), arr...)
	count := make([]int64, len(out))
	ok, bad = alongWalk(arrShape, idxShape, valShape, indices, axis, func(t, v, _ int64) {
		if !includeSelf && count[t] == 0 && reduce != ReduceAssign {
			out[t] = identity[T](reduce)
		}
		count[t]++
		out[t] = combine(reduce, out[t], values[v])
	})
	if !ok {
		return nil, false, bad
	}
	if reduce == ReduceMean {
		for t, c := range count {
			if c == 0 {
				continue
			}
			if includeSelf {
				c++
			}
			out[t] = floorDiv(out[t], c)
		}
	}
	return out, true, 0
}

// TakeAlongAxis is numpy.take_along_axis: out has the loop shape.
func TakeAlongAxis[T any](arr []T, arrShape []int64, indices []int64, idxShape []int64, axis int, outLen int64) (out []T, ok bool, bad int64) {
	out = make([]T, outLen)
	ok, bad = alongWalk(arrShape, idxShape, nil, indices, axis, func(t, _, pos int64) { out[pos] = arr[t] })
	return out, ok, bad
}
