package accel

import (
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

func checkSortDType(op, arg string, dt DType, ints bool) error {
	switch dt {
	case Int32, Int64, Uint32, Uint64:
		return nil
	case Float32, Float64:
		if !ints {
			return nil
		}
	}
	want := "int32, int64, uint32, uint64, float32 or float64"
	if ints {
		want = "int32, int64, uint32 or uint64"
	}
	return argErr(op, arg, "dtype "+dt.String(), want, ErrUnsupported)
}

// Sort sorts keys (taken flattened) with a stable radix sort and returns
// the sorted keys and the permutation (int64: sorted[i] = keys[perm[i]]).
// Floats order as NumPy's: -inf < ... < +inf < NaN ascending, NaN first
// descending, -0.0 equal to 0.0; equal keys keep their input order.
func (d *Device) Sort(keys *DeviceTensor, descending bool) (sorted, perm *DeviceTensor, err error) {
	sorted, _, perm, err = d.sortByKey("sort", keys, nil, descending)
	return sorted, perm, err
}

// SortByKey sorts keys as Sort does and carries values (of any 4- or 8-byte
// dtype and keys' length) along: sortedValues[i] = values[perm[i]].
func (d *Device) SortByKey(keys, values *DeviceTensor, descending bool) (sortedKeys, sortedValues, perm *DeviceTensor, err error) {
	return d.sortByKey("sort_by_key", keys, values, descending)
}

func (d *Device) sortByKey(op string, keys, values *DeviceTensor, descending bool) (sk, sv, perm *DeviceTensor, err error) {
	if err := d.checkIn(op, "keys", keys); err != nil {
		return nil, nil, nil, err
	}
	if err := checkSortDType(op, "keys", keys.dtype, false); err != nil {
		return nil, nil, nil, err
	}
	if values != nil {
		if err := d.checkIn(op, "values", values); err != nil {
			return nil, nil, nil, err
		}
		if values.n != keys.n {
			return nil, nil, nil, argErr(op, "values", fmt.Sprintf("%d elements", values.n), fmt.Sprintf("%d elements, as keys", keys.n), ErrInvalidArgument)
		}
		if values.dtype.Size() != 4 && values.dtype.Size() != 8 {
			return nil, nil, nil, argErr(op, "values", "dtype "+values.dtype.String(), "a 4- or 8-byte dtype", ErrUnsupported)
		}
	}
	w := keys.dtype.Size()
	kind := keyKind(keys.dtype)
	d.reportSort(op, keys, values, descending)
	// integer keys come back from the last pass (their order bits XOR a
	// mask), where the plan can; float keys are gathered (below)
	kx, maps := radixKeyMask(w, kind, descending)
	res, err := d.radixSortMapped(op, keys.raw(), keys.n, w, kind, descending, 8*w, nil, 0, kx)
	if err != nil {
		return nil, nil, nil, err
	}
	var outs temps
	outs.add(res.perm)
	fail := func(err error) (*DeviceTensor, *DeviceTensor, *DeviceTensor, error) {
		res.keys.Release()
		outs.release()
		return nil, nil, nil, err
	}
	if maps && (kx == 0 || res.mapped) {
		// the keys themselves (the order bits of unsigned keys, or the last
		// pass's mapped back), of their dtype
		res.keys.dtype = keys.dtype
		sk, res.keys = outs.add(res.keys), nil
	} else {
		if sk, err = outs.alloc(d, op, keys.dtype, keys.n); err != nil {
			return fail(err)
		}
		if kind == kernels.KindFloat {
			// Order bits fold -0.0 into 0.0 and every NaN into one: gather
			// the keys themselves.
			err = d.gather(op, w, keys.n, sk.raw(), keys.raw(), res.perm.raw())
		} else {
			// An integer key's order bits map back to it with the same map
			// (a sign flip, a complement: both undo themselves), one
			// sequential pass instead of a gather.
			err = d.radixPrep(op, res.keys.raw(), sk.raw(), keys.n, w, kind, descending)
		}
		res.keys.Release()
		res.keys = nil
		if err != nil {
			return fail(err)
		}
	}
	if values != nil {
		if sv, err = outs.alloc(d, op, values.dtype, values.n); err != nil {
			return fail(err)
		}
		if err := d.gather(op, values.dtype.Size(), values.n, sv.raw(), values.raw(), res.perm.raw()); err != nil {
			return fail(err)
		}
	}
	if err := d.flush(op); err != nil {
		return fail(err)
	}
	return sk, sv, res.perm, nil
}

// gather queues dst[i] = src[idx[i]] over n words of wordBytes each.
func (d *Device) gather(op string, wordBytes int, n int64, dst, src, idx host.Buffer) error {
	if n == 0 {
		return nil
	}
	variant := kernels.MoveW32
	if wordBytes == 8 {
		variant = kernels.MoveW64
	}
	return run(d, op, variant, d.elementwise(op, n), kernels.MoveGather{Dst: dst, Src: src, Idx: idx, N: n})
}

// reportSort reports a sort's plan and its model: the radix passes, the
// sorted keys' recovery (none for ascending unsigned keys: the order bits
// are the keys), and the values' gather.
func (d *Device) reportSort(op string, keys, values *DeviceTensor, descending bool) {
	n, w := keys.n, keys.dtype.Size()
	kind := keyKind(keys.dtype)
	plan := d.radixTuned(n, w, n)
	wb, vb := int64(w), int64(0)
	if values != nil {
		vb = int64(values.dtype.Size())
	}
	model := func() traffic {
		prep := kind != kernels.KindUnsigned || descending
		t := radixTraffic(d.caps, plan, n, w, 8*w, prep, false, n)
		if kind == kernels.KindFloat || prep && !radixMaps(plan) {
			t.add("sort_keys", n*(wb+8), n*wb) // a gather (floats) or the order bits mapped back
		}
		if values != nil {
			t.add("sort_values", n*(8+vb), n*vb)
		}
		return t
	}
	d.reportModel(op, "sort", plan, model, n*(2*wb+8+2*vb))
}
