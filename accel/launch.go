package accel

import (
	"encoding/binary"
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// The runtime under every op: launches, the end-of-op flush, and the
// device-side validation flag.

// run queues one launch of call's entry point (variant: the compiled
// variant of its kernel file) with plan.
func (d *Device) run(op, variant string, plan host.Plan, call host.Call) error {
	if err := host.Dispatch(d.h, variant, plan, call); err != nil {
		return fmt.Errorf("accel: %s: %w", op, err)
	}
	return nil
}

// plan applies a test's plan override, if any: to the plans of kernels
// whose work does not depend on the plan's shape (elementwise launches,
// the scan, the scatter's CPU passes), not to the radix sort's.
func (d *Device) plan(p host.Plan) host.Plan {
	if d.planHook != nil {
		return d.planHook(p)
	}
	return p
}

// elementwise is the plan of a one-output-per-element launch over n
// (after a test's override).
func (d *Device) elementwise(op string, n int64) host.Plan {
	return d.plan(host.PlanElementwise(op, d.caps, n))
}

// flush hands an op's queued work to the device (without waiting), so
// that the device starts on it while the host goes on.
func (d *Device) flush(op string) error {
	if err := d.h.Flush(); err != nil {
		return fmt.Errorf("accel: %s: %w", op, err)
	}
	return nil
}

// newFlag allocates an op's validation flag: word 0 (ERR_NONE until a pass
// lowers it to the first flagged tile) and word 1 (a pass's "run
// unfinished" bit, see steps).
func (d *Device) newFlag(op string) (*DeviceTensor, error) {
	f, err := d.alloc(op, Uint32, []int64{2})
	if err != nil {
		return nil, err
	}
	var b [8]byte
	binary.LittleEndian.PutUint32(b[:], kernels.ErrNone)
	if err := d.h.Upload(f.raw(), 0, b[:]); err != nil {
		f.Release()
		return nil, fmt.Errorf("accel: %s: %w", op, err)
	}
	return f, nil
}

// flaggedTile reads a validation flag, once the work queued before has
// finished: the first position of the flagged tile, or -1 when no pass
// flagged anything.
func (d *Device) flaggedTile(op string, flag *DeviceTensor) (int64, error) {
	var b [4]byte
	if err := d.h.Download(flag.raw(), 0, b[:]); err != nil {
		return 0, fmt.Errorf("accel: %s: read the validation flag: %w", op, err)
	}
	tile := binary.LittleEndian.Uint32(b[:])
	if tile == kernels.ErrNone {
		return -1, nil
	}
	return int64(tile) << kernels.ErrTileShift, nil
}

// steps runs a kernel whose work-items walk runs of up to n elements, at
// most limit elements per launch where the driver cuts long loops
// (Caps.LoopLimit): launch(limit, step) for step 0, 1, ... until a launch
// leaves flag word 1 (the kernel sets it for an unfinished run) 0. Without
// a loop limit one launch does it all and nothing is read back.
func (d *Device) steps(op string, n int64, flag *DeviceTensor, launch func(limit, step int64) error) error {
	limit := n
	if d.caps.LoopLimit > 0 {
		limit = d.caps.LoopLimit / 2 // as host.PlanRadix: well under the limit
	}
	for step := int64(0); ; step++ {
		if limit < n {
			if err := d.h.Fill(flag.raw(), 4, 4, []byte{0, 0, 0, 0}); err != nil {
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
