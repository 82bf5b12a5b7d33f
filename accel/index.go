package accel

import (
	"fmt"
	"math"
)

// Index dtypes. Every op that takes index tensors (Scatter, ScatterReduce
// and their deterministic and backward forms, TakeAlongAxis, PutAlongAxis,
// SegmentReduce, IndicePairs and RefIndicePairs, the sparse uploads) takes
// int32 and int64 ones alike, with the same results: the public entry
// points convert the ones their kernels do not take (helpers below), so
// the planners see one dtype.

// index64 returns index (op's argument arg) as int64: int64 tensors and
// tensors of other dtypes (which the op's own checks reject, naming the
// argument) as they are, int32 ones sign-extended on the device into a
// temporary that done releases. A nil or foreign tensor is returned as it
// is too, for the op's own checks.
func (d *Device) index64(op, arg string, index *DeviceTensor) (*DeviceTensor, func(), error) {
	if index == nil || index.dtype != Int32 || d.checkIn(op, arg, index) != nil {
		return index, func() {}, nil
	}
	return d.wideIndices(op, index)
}

// index32 returns index (op's argument arg) as int32: tensors of other
// dtypes than int64 as they are, int64 ones narrowed on the host (read
// once, which waits for the device) into a temporary that done releases.
// A value outside int32 is an *ArgError naming op, arg, its position and
// the bound (ErrTooLarge).
func (d *Device) index32(op, arg string, index *DeviceTensor) (*DeviceTensor, func(), error) {
	if index == nil || index.dtype != Int64 || d.checkIn(op, arg, index) != nil {
		return index, func() {}, nil
	}
	h, err := index.ToHost()
	if err != nil {
		return nil, nil, err
	}
	n, err := hostIndex32(op, arg, h)
	if err != nil {
		return nil, nil, err
	}
	t, err := d.Upload(n)
	if err != nil {
		return nil, nil, err
	}
	return t, t.Release, nil
}

// hostIndex32 returns a host index tensor as int32 (int64 ones narrowed,
// others as they are), or an *ArgError naming op, arg and the first value
// outside int32.
func hostIndex32(op, arg string, t *Tensor) (*Tensor, error) {
	if t == nil || t.dtype != Int64 {
		return t, nil
	}
	v := t.Int64s()
	w := make([]int32, len(v))
	for i, x := range v {
		if x < math.MinInt32 || x > math.MaxInt32 {
			return nil, argErr(op, arg, fmt.Sprintf("%d at flat position %d", x, i),
				fmt.Sprintf("in [%d, %d] (the op indexes in 32 bits)", math.MinInt32, math.MaxInt32), ErrTooLarge)
		}
		w[i] = int32(x)
	}
	return FromInt32s(t.Shape(), w)
}

// rejectAssign refuses Assign in the reducing ops: a plain store is
// Scatter's (or PutAlongAxis'), not a reduction.
func rejectAssign(op string, r Reduction) error {
	if r == Assign {
		return argErr(op, "reduce", r, "one of Sum, Prod, Mean, Amax, Amin (Assign is Scatter's)", ErrInvalidArgument)
	}
	return nil
}

// ToHost copies the result's tensors to the host, once the work queued to
// make them has finished. It fails with ErrClosed where a tensor was
// released.
func (r *IndicePairs) ToHost() (*HostIndicePairs, error) {
	if r == nil {
		return nil, argErr("indice_pairs_to_host", "r", "nil", "a result", ErrInvalidArgument)
	}
	h := &HostIndicePairs{OutSpatialShape: append([]int64(nil), r.OutSpatialShape...)}
	for _, p := range []struct {
		dst **Tensor
		src *DeviceTensor
	}{{&h.Pairs, r.Pairs}, {&h.OutIndices, r.OutIndices}, {&h.Num, r.Num}} {
		t, err := p.src.ToHost()
		if err != nil {
			return nil, err
		}
		*p.dst = t
	}
	return h, nil
}

// checkOpen refuses work on a closed device with an *ArgError naming op
// and the device (ErrClosed).
func (d *Device) checkOpen(op string) error {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return argErr(op, "device", d.String()+" (closed)", "an open device", ErrClosed)
	}
	return nil
}

// hostIndex64 returns a host index tensor as int64 (int32 ones widened,
// others as they are, for the op's own checks), for the RefX functions.
func hostIndex64(t *Tensor) *Tensor {
	if t == nil || t.dtype != Int32 {
		return t
	}
	v := t.Int32s()
	w := make([]int64, len(v))
	for i, x := range v {
		w[i] = int64(x)
	}
	out, _ := FromInt64s(t.Shape(), w) // the shape is t's, valid
	return out
}
