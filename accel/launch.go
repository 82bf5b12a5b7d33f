package accel

import (
	"encoding/binary"
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// The runtime under every op: launches, the end-of-op flush, and the
// device-side validation flag.

// run queues one launch of call's entry point with plan, in variant v of
// its kernel file: a typed variant (kernels.ScatterF32), so a variant of
// another file does not compile.
func run[V ~string, C kernels.CallOf[V]](d *Device, op string, v V, plan host.Plan, call C) error {
	return d.launch(op, string(v), plan, call)
}

// launch is run with a variant named at run time (a dtype's, say), which
// dispatch checks against the declarations.
func (d *Device) launch(op, variant string, plan host.Plan, call host.Call) error {
	if err := host.Dispatch(d.h, variant, plan, call); err != nil {
		return fmt.Errorf("accel: %s: %w", op, err)
	}
	return nil
}

// plan is the final launch plan of a kernel whose work does not depend
// on its launch shape (planner.launch), with $ACCEL_KNOBS's overrides.
func (d *Device) plan(p host.Plan) host.Plan { return d.tuned(d.planner.launch(p)) }

// elementwise is the plan of a one-output-per-element launch over n
// with knobs set (an op's compiled-in choices, which $ACCEL_KNOBS may
// still override), after a test's override.
func (d *Device) elementwise(op string, n int64, knobs ...host.Knob) host.Plan {
	p := host.PlanElementwise(op, d.caps, n)
	for _, k := range knobs {
		p = withKnob(p, k)
	}
	p = d.plan(p)
	d.report(op, "elementwise", p)
	return p
}

// elementwiseLoop is elementwise for n elements whose work-item loops up
// to per times on each: under a driver's loop limit a work-item takes a
// per-th of the elements (ITEMS), so its loops stay under the limit.
func (d *Device) elementwiseLoop(op string, n, per int64) host.Plan {
	p := host.PlanElementwise(op, d.caps, n)
	if items := host.KnobItems.Of(p); d.caps.LoopLimit > 0 && per > 1 && items > 1 {
		items = max(items/per, 1)
		p = p.WithItems(d.caps, n, items)
		p.Reason += fmt.Sprintf("; %d elements a work-item (%d loop steps each)", items, per)
	}
	p = d.plan(p)
	d.report(op, "elementwise", p)
	return p
}

// flush hands an op's queued work to the device (without waiting), so
// that the device starts on it while the host goes on.
func (d *Device) flush(op string) error {
	if err := d.h.Flush(); err != nil {
		return fmt.Errorf("accel: %s: %w", op, err)
	}
	return nil
}

// The device-side validation flag: every op that checks its input on the
// device allocates flag words with newFlagWords (word 0 the validation
// flag, kernels.ErrNone until a pass lowers it to the first flagged
// tile; the rest zero: a pass's "run unfinished" bit, the sparse ops'
// unsorted marks, bucket sizes), reads them back once with readFlagWords
// and asks flagged whether a pass found a bad input.

// newFlagWords allocates an op's flag words.
func (d *Device) newFlagWords(op string, words int64) (*DeviceTensor, error) {
	f, err := d.alloc(op, Uint32, []int64{words})
	if err != nil {
		return nil, err
	}
	b := make([]byte, 4*words)
	binary.LittleEndian.PutUint32(b, kernels.ErrNone)
	if err := d.h.Upload(f.raw(), 0, b); err != nil {
		f.Release()
		return nil, fmt.Errorf("accel: %s: %w", op, err)
	}
	return f, nil
}

// readFlagWords reads an op's first n flag words, once the work queued
// before has finished (a wait).
func (d *Device) readFlagWords(op string, flag *DeviceTensor, n int64) ([]uint32, error) {
	b := make([]byte, 4*n)
	if err := d.h.Download(flag.raw(), 0, b); err != nil {
		return nil, fmt.Errorf("accel: %s: read the validation flag: %w", op, err)
	}
	w := make([]uint32, n)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w, nil
}

// flagged says whether flag words w report a bad input.
func flagged(w []uint32) bool { return w[0] != kernels.ErrNone }

// newFlag allocates an op's validation flag and word 1 (a pass's "run
// unfinished" bit, see steps).
func (d *Device) newFlag(op string) (*DeviceTensor, error) { return d.newFlagWords(op, 2) }

// flaggedTile reads a validation flag, once the work queued before has
// finished: the first position of the flagged tile, or -1 when no pass
// flagged anything.
func (d *Device) flaggedTile(op string, flag *DeviceTensor) (int64, error) {
	w, err := d.readFlagWords(op, flag, 1)
	if err != nil || !flagged(w) {
		return -1, err
	}
	return int64(w[0]) << kernels.ErrTileShift, nil
}

// steps runs a kernel whose work-items walk runs of up to n elements, at
// most limit elements per launch where the driver cuts long loops
// (Caps.LoopLimit): launch(limit, step) for step 0, 1, ... until a launch
// leaves flag word 1 (the kernel sets it for an unfinished run) 0. Without
// a loop limit one launch does it all and nothing is read back.
func (d *Device) steps(op string, n int64, flag *DeviceTensor, launch func(limit, step int64) error) error {
	limit := n
	if d.caps.LoopLimit > 0 {
		limit = d.caps.LoopLimit / 2 // as planRadix: well under the limit
	}
	for step := int64(0); ; step++ {
		if limit < n {
			if err := d.fill(flag.raw(), 4, 4, []byte{0, 0, 0, 0}); err != nil {
				return fmt.Errorf("accel: %s: %w", op, err)
			}
		}
		if err := launch(limit, step); err != nil {
			return err
		}
		if limit >= n {
			return nil
		}
		var b [4]byte
		if err := d.h.Download(flag.raw(), 4, b[:]); err != nil {
			return fmt.Errorf("accel: %s: %w", op, err)
		}
		if binary.LittleEndian.Uint32(b[:]) == 0 {
			return nil
		}
	}
}

// temps holds an op's scratch tensors; release frees them all.
type temps []*DeviceTensor

func (ts *temps) add(t *DeviceTensor) *DeviceTensor {
	*ts = append(*ts, t)
	return t
}

// release frees every tensor added so far. It has a pointer receiver so
// that `defer ts.release()` frees what is added after the defer too.
func (ts *temps) release() {
	for _, t := range *ts {
		t.Release()
	}
	*ts = nil
}

// alloc allocates a scratch tensor that ts releases.
func (ts *temps) alloc(d *Device, op string, dt DType, shape ...int64) (*DeviceTensor, error) {
	t, err := d.alloc(op, dt, shape)
	if err != nil {
		return nil, err
	}
	return ts.add(t), nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
