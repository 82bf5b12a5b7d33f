package accel

import (
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// segmentRefNames are the reference's names of SegmentReduce's reductions.
var segmentRefNames = map[Reduction]string{Sum: "sum", Amin: "min", Amax: "max"}

// SegmentReduce reduces values by segment id: out[s] folds, in order, the
// values whose id (int64 or int32, sorted ascending, in [0, numSegments)) is s.
// reduce is Sum, Amin or Amax; empty segments hold the identity (0, +inf or
// the dtype's max, -inf or the dtype's min); Amin and Amax propagate NaN.
// An unsorted or out-of-range id is an error naming its position, found on
// the device (the op waits once, at its end, for that).
func (d *Device) SegmentReduce(values, segmentIDs *DeviceTensor, reduce Reduction, numSegments int64) (*DeviceTensor, error) {
	const op = "segment_reduce"
	if err := d.checkIn(op, "values", values); err != nil {
		return nil, err
	}
	if err := d.checkIn(op, "segment_ids", segmentIDs); err != nil {
		return nil, err
	}
	segmentIDs, done, err := d.index64(op, "segment_ids", segmentIDs) // int32 ids too (index.go)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := checkSegmentArgs(op, values.dtype, values.shape, segmentIDs.dtype, segmentIDs.shape, reduce, numSegments); err != nil {
		return nil, err
	}
	out, err := d.alloc(op, values.dtype, []int64{numSegments})
	if err != nil {
		return nil, err
	}
	if err := d.segmentReduce(op, out, values, segmentIDs, reduce, numSegments); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

func (d *Device) segmentReduce(op string, out, values, ids *DeviceTensor, reduce Reduction, segments int64) error {
	if segments > 0 {
		if err := d.fill(out.raw(), 0, segments*int64(values.dtype.Size()), identityBytes(values.dtype, reduce)); err != nil {
			return fmt.Errorf("accel: %s: %w", op, err)
		}
	}
	n := values.n
	if n == 0 {
		return d.flush(op)
	}
	flag, err := d.newFlag(op)
	if err != nil {
		return err
	}
	defer flag.Release()
	if err := d.launch(op, dtVariant(values.dtype), d.elementwise(op, n), kernels.SegmentValidate{Keys: ids.raw(),
		Err: flag.raw(), N: n, Segments: segments}); err != nil {
		return err
	}
	if err := d.segmentRun(op, values.dtype, out.raw(), values.raw(), ids.raw(), nil, n, reduce, true, flag); err != nil {
		return err
	}
	if err := d.flush(op); err != nil {
		return err
	}
	from, err := d.flaggedTile(op, flag)
	if err != nil || from < 0 {
		return err
	}
	h, err := ids.ToHost()
	if err != nil {
		return err
	}
	return badSegmentID(op, h.Int64s(), from, segments)
}

func checkSegmentArgs(op string, vdt DType, vshape []int64, idt DType, ishape []int64, reduce Reduction, numSegments int64) error {
	if _, ok := segmentRefNames[reduce]; !ok {
		return argErr(op, "reduce", reduce, "Sum, Amin or Amax", ErrInvalidArgument)
	}
	if numSegments < 0 {
		return argErr(op, "num_segments", numSegments, ">= 0", ErrInvalidArgument)
	}
	switch vdt {
	case Int32, Int64, Float32, Float64:
	default:
		return argErr(op, "values", "dtype "+vdt.String(), "int32, int64, float32 or float64", ErrUnsupported)
	}
	if idt != Int64 {
		return argErr(op, "segment_ids", "dtype "+idt.String(), "int64 or int32", ErrInvalidArgument)
	}
	if !sameShape(vshape, ishape) {
		return argErr(op, "segment_ids", fmt.Sprintf("shape %v", ishape), fmt.Sprintf("values' shape %v", vshape), ErrInvalidArgument)
	}
	return nil
}

// segmentRun folds runs of equal sorted 64-bit keys into out, in as many
// steps as the driver's loop limit needs; it does nothing on the device
// when flag holds a validation error. The values are vals in the keys'
// order, or vals through perm where perm is not nil, or with vals and perm
// nil the low halves of packed words in keys, sorted by their high halves
// (32-bit values: the bit-reproducible scatter's packed sort).
func (d *Device) segmentRun(op string, dt DType, out, vals, keys, perm host.Buffer, n int64, red Reduction, includeSelf bool,
	flag *DeviceTensor) error {
	if n == 0 {
		return nil
	}
	at := int64(kernels.SegValsDirect)
	switch {
	case perm != nil:
		at = kernels.SegValsPerm
	case vals == nil:
		at = kernels.SegValsPacked
	}
	plan := d.elementwise(op, n)
	return d.steps(op, n, flag, func(limit, step int64) error {
		return d.launch(op, dtVariant(dt), plan, kernels.SegmentReduce{Dst: out, Vals: vals, Keys: keys, Perm: perm,
			Err: flag.raw(), N: n, Red: int64(red), IncludeSelf: b2i(includeSelf), ValsAt: at,
			Limit: limit, Step: step})
	})
}

// badSegmentID names the first unsorted or out-of-range id at or after from.
func badSegmentID(op string, ids []int64, from, segments int64) error {
	for i := from; i < int64(len(ids)); i++ {
		id := ids[i]
		if id < 0 || id >= segments {
			return argErr(op, fmt.Sprintf("segment_ids[%d]", i), id, fmt.Sprintf("in [0, %d) (num_segments)", segments), ErrInvalidArgument)
		}
		if i > 0 && id < ids[i-1] {
			return argErr(op, fmt.Sprintf("segment_ids[%d]", i), id, fmt.Sprintf(">= segment_ids[%d] = %d (ids must be sorted ascending)", i-1, ids[i-1]), ErrInvalidArgument)
		}
	}
	return fmt.Errorf("accel: %s: the device flagged segment id tile %d but none in it is bad: %w", op, from>>kernels.ErrTileShift, host.ErrDriver)
}
