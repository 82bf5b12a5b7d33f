package accel

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/accelkern/accel/host"
)

// Devices lists every OpenCL device and Vulkan physical device, and the
// errors of backends that could not be loaded.
func Devices() ([]DeviceInfo, []error) {
	all, errs := host.Enumerate(host.Options{})
	infos := make([]DeviceInfo, len(all))
	for i, c := range all {
		infos[i] = DeviceInfo(c)
	}
	return infos, errs
}

// Device runs ops on one OpenCL or Vulkan device. It is safe for concurrent
// use by many goroutines. Close it when done.
//
// Ops queue their work and return without waiting for the device: an op
// waits only where it must read a result to go on (the count of distinct
// values Unique returns, say) and, where it validates indices on the
// device, once at its end to report them. ToHost waits for the work that
// produced its tensor; Sync waits for all queued work.
type Device struct {
	h    host.Device
	caps host.Caps
	pool *host.Pool

	mu     sync.Mutex
	closed bool

	// guard is the guard band past every tensor (Options.GuardBytes);
	// leadBand the one before it.
	guard int64

	// poison, when non-nil, is written over every fresh output buffer
	// before its kernel runs (Options.Poison).
	poison []byte

	// onPlan is the OnPlan hook, or nil; trace receives the plans too
	// where the device traces (Options.Trace, ACCEL_TRACE).
	onPlan atomic.Pointer[func(PlanReport)]
	trace  func(string)

	// planner makes every plan the device runs (plan.go): devicePlanner,
	// or a test's, which forces paths.
	planner planner
	// knobs are $ACCEL_KNOBS's overrides per kernel file (tune.go).
	knobs map[string][]host.Knob
}

// Open opens a device by selector: "" (then $ACCEL_DEVICE, then the default:
// a discrete GPU, an integrated GPU, then the CPU drivers), "opencl",
// "vulkan", "opencl:0", "vulkan:llvmpipe", "opencl:NVIDIA" (an index, or a
// case-insensitive substring of the name, vendor, platform or driver).
func Open(selector string) (*Device, error) { return OpenWith(selector, Options{}) }

// OpenWith is Open with options (Vulkan validation, tracing).
func OpenWith(selector string, opts Options) (*Device, error) {
	h, err := host.Open(selector, opts.host())
	if err != nil {
		return nil, fmt.Errorf("accel: open %q: %w", selector, err)
	}
	capBytes, err := host.DefaultPoolCap(h.Caps())
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("accel: open %q: %w: %w", selector, err, ErrInvalidArgument)
	}
	knobs, err := envKnobs()
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("accel: open %q: %w", selector, err)
	}
	caps := h.Caps()
	if opts.gpuPlans() {
		caps.Type = host.TypeDiscreteGPU
	}
	return &Device{h: h, caps: caps, pool: host.NewPool(h, capBytes), guard: opts.host().GuardBand(), planner: devicePlanner{},
		poison: append([]byte(nil), opts.Poison...), trace: planTrace(opts), knobs: knobs}, nil
}

// PoolStats returns the counters of the device's buffer pool: hits, misses
// (driver allocations), bytes held idle and in use.
func (d *Device) PoolStats() PoolStats { return PoolStats(d.pool.Stats()) }

// ResetPoolPeak starts the pool's peak (PoolStats().PeakBytes: the most
// bytes held in tensors at once) again from the bytes held now.
func (d *Device) ResetPoolPeak() { d.pool.ResetPeak() }

// TrimPool frees every idle pooled buffer and returns the bytes freed.
func (d *Device) TrimPool() int64 { return d.pool.Trim(0) }

// Stats returns the device's counters since it was opened: submits and
// waits (the host round trips), launches, transfers, barriers, device time
// of the finished work and kernel compiles.
func (d *Device) Stats() Stats { return Stats(d.h.Stats()) }

// Sync waits until all work queued on the device has finished, and
// returns the first error any of it met.
func (d *Device) Sync() error {
	if err := d.h.Sync(); err != nil {
		return fmt.Errorf("accel: sync %s: %w", d, err)
	}
	return nil
}

// Info returns the device's capabilities.
func (d *Device) Info() DeviceInfo { return DeviceInfo(d.caps) }

// String returns "backend:index name".
func (d *Device) String() string { return d.caps.ID() + " " + d.caps.Name }

// Close waits for the device's queued work, then frees every buffer and
// compiled kernel of the device. Tensors of a closed device are invalid.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	d.pool.Close()
	return d.h.Close()
}

// alloc allocates an output tensor, checking its size against the device's
// largest allocation first, and poisons it when a test asked for that.
func (d *Device) alloc(op string, dtype DType, shape []int64) (*DeviceTensor, error) {
	if err := d.checkOpen(op); err != nil {
		return nil, err
	}
	if !d.supports(dtype) {
		return nil, argErr(op, "dtype", dtype, "a dtype this device supports ("+d.caps.ID()+" "+d.caps.Name+")", ErrUnsupported)
	}
	n, err := NumElements(shape)
	if err != nil {
		return nil, err
	}
	size := int64(dtype.Size())
	if n > d.caps.MaxAllocBytes/size {
		return nil, argErr(op, "output", fmt.Sprintf("%s%v (%d elements)", dtype, shape, n),
			fmt.Sprintf("at most %d bytes, the device's largest allocation", d.caps.MaxAllocBytes), ErrTooLarge)
	}
	lead := d.leadBand()
	buf, err := d.pool.Alloc(lead + n*size + guardAt(n*size, d.guard))
	if err != nil {
		return nil, fmt.Errorf("accel: %s: allocate %s%v: %w", op, dtype, shape, err)
	}
	t := &DeviceTensor{dev: d, buf: buf, dtype: dtype, shape: append([]int64(nil), shape...), n: n}
	if d.guard > 0 {
		// The tensor is a view at lead of a buffer poisoned before and
		// after it.
		all := buf.Underlying()
		if t.view, err = d.h.Sub(all, lead, alignUp4(n*size)+d.guard); err == nil {
			err = d.h.Fill(all, 0, lead, guardPattern)
		}
		if err == nil {
			err = d.h.Fill(t.raw(), alignUp4(n*size), d.guard, guardPattern)
		}
		if err != nil {
			t.Release()
			return nil, fmt.Errorf("accel: %s: guard bands of %s%v: %w", op, dtype, shape, err)
		}
	}
	if d.poison != nil && n > 0 {
		pat := d.poison
		if int64(len(pat)) > size {
			pat = pat[:size]
		}
		if err := d.h.Fill(t.raw(), 0, n*size, pat); err != nil {
			t.Release()
			return nil, fmt.Errorf("accel: %s: poison %s%v: %w", op, dtype, shape, err)
		}
	}
	return t, nil
}

// guardPattern fills guard bands (Options.GuardBytes).
var guardPattern = []byte{0x5b, 0xa4, 0x3c, 0xc3}

func alignUp4(b int64) int64 { return (b + 3) &^ 3 }

// guardAt returns the bytes to allocate past a tensor of size bytes for a
// guard band of guard bytes: the band starts at the next multiple of 4.
func guardAt(size, guard int64) int64 {
	if guard <= 0 {
		return 0
	}
	return alignUp4(size) - size + guard
}

// leadBand returns the guard band before every tensor: GuardBytes rounded
// up to the alignment of a view's offset (host.Caps.SubAlign), or 0 without
// guard bands.
func (d *Device) leadBand() int64 {
	if d.guard <= 0 {
		return 0
	}
	a := max(d.caps.SubAlign, 4)
	return (d.guard + a - 1) / a * a
}

// checkGuard checks t's guard bands, as read back (lead: the band before
// it, tail: the band past it), and fails with ErrGuardBand where a kernel
// wrote into one.
func (t *DeviceTensor) checkGuard(lead, tail []byte) error {
	for i, b := range lead {
		if b != guardPattern[i%len(guardPattern)] {
			return fmt.Errorf("accel: %s%v: byte %d before its start was overwritten (%#02x): %w",
				t.dtype, t.shape, len(lead)-i, b, ErrGuardBand)
		}
	}
	for i, b := range tail {
		if b != guardPattern[i%len(guardPattern)] {
			end := t.n * int64(t.dtype.Size())
			return fmt.Errorf("accel: %s%v: byte %d past its end was overwritten (%#02x): %w",
				t.dtype, t.shape, alignUp4(end)+int64(i)-end, b, ErrGuardBand)
		}
	}
	return nil
}

// supports reports whether kernels of this dtype can run on the device.
func (d *Device) supports(dt DType) bool {
	switch dt {
	case Int32, Float32, Uint32, Bool:
		return true
	case Int64, Uint64:
		return d.caps.Int64
	case Float64:
		return d.caps.FP64
	}
	return false
}

// checkIn checks that t, the argument arg of op, is a live tensor of this
// device.
func (d *Device) checkIn(op, arg string, t *DeviceTensor) error {
	if t == nil || t.buf == nil {
		return argErr(op, arg, "a released or nil tensor", "a live tensor", ErrClosed)
	}
	if err := d.checkOpen(op); err != nil {
		return err
	}
	if t.dev != d {
		return argErr(op, arg, "a tensor of "+t.dev.String(), "a tensor of "+d.String(), ErrInvalidArgument)
	}
	return nil
}

// checkOut checks that out is a live tensor of this device.
func (d *Device) checkOut(op string, out *DeviceTensor) error { return d.checkIn(op, "out", out) }
