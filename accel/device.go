package accel

import (
	"fmt"
	"os"
	"sync"

	"github.com/accelkern/accel/host"
)

// DeviceInfo describes a device: its backend, index, name and capabilities.
type DeviceInfo = host.Caps

// Options configure Open.
type Options = host.Options

// Devices lists every OpenCL device and Vulkan physical device, and the
// errors of backends that could not be loaded.
func Devices() ([]DeviceInfo, []error) { return host.Enumerate(host.Options{}) }

// Device runs ops on one OpenCL or Vulkan device. It is safe for concurrent
// use by many goroutines. Close it when done.
type Device struct {
	h    host.Device
	caps host.Caps
	pool *host.Pool

	mu     sync.Mutex
	closed bool

	// poison, when non-nil, is written over every fresh output buffer
	// before its kernel runs (tests set it so an unwritten element shows).
	poison []byte

	// planHook, when non-nil, may rewrite launch plans (tests force odd
	// group shapes with it).
	planHook func(host.Plan) host.Plan

	// scatterHook, when non-nil, may rewrite a scatter's strategy, given
	// host.PlanScatter's choice and arguments (tests run every strategy on
	// every device with it).
	scatterHook func(sp host.ScatterPlan, n, targets int64, elemBytes int, det bool) host.ScatterPlan

	// trace prints every launch's plan and device time ($ACCEL_TRACE).
	trace bool
}

// Open opens a device by selector: "" (then $ACCEL_DEVICE, then the default:
// a discrete GPU, an integrated GPU, then the CPU drivers), "opencl",
// "vulkan", "opencl:0", "vulkan:llvmpipe", "opencl:NVIDIA" (an index, or a
// case-insensitive substring of the name, vendor, platform or driver).
func Open(selector string) (*Device, error) { return OpenWith(selector, Options{}) }

// OpenWith is Open with options (e.g. Vulkan validation).
func OpenWith(selector string, opts Options) (*Device, error) {
	h, err := host.Open(selector, opts)
	if err != nil {
		return nil, fmt.Errorf("accel: open %q: %w", selector, err)
	}
	capBytes, err := host.DefaultPoolCap(h.Caps())
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("accel: open %q: %w: %w", selector, err, ErrInvalidArgument)
	}
	return &Device{h: h, caps: h.Caps(), pool: host.NewPool(h, capBytes), trace: os.Getenv("ACCEL_TRACE") != ""}, nil
}

// PoolStats returns the counters of the device's buffer pool: hits, misses
// (driver allocations), bytes held idle and in use.
func (d *Device) PoolStats() host.PoolStats { return d.pool.Stats() }

// TrimPool frees every idle pooled buffer and returns the bytes freed.
func (d *Device) TrimPool() int64 { return d.pool.Trim(0) }

// Info returns the device's capabilities.
func (d *Device) Info() DeviceInfo { return d.caps }

// String returns "backend:index name".
func (d *Device) String() string { return d.caps.ID() + " " + d.caps.Name }

// Close frees every buffer and compiled kernel of the device. Tensors of a
// closed device are invalid.
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

// DeviceTensor is a tensor resident in device memory. Ops on the same device
// take and return DeviceTensors, so chains run without host round trips.
// Release it when done (Close on the device releases all).
type DeviceTensor struct {
	dev   *Device
	buf   *host.PooledBuffer
	dtype DType
	shape []int64
	n     int64
}

// DType returns the element type.
func (t *DeviceTensor) DType() DType { return t.dtype }

// Shape returns a copy of the shape.
func (t *DeviceTensor) Shape() []int64 { return append([]int64(nil), t.shape...) }

// Len returns the number of elements.
func (t *DeviceTensor) Len() int64 { return t.n }

// Device returns the device holding the tensor.
func (t *DeviceTensor) Device() *Device { return t.dev }

// raw returns the driver buffer (nil once released).
func (t *DeviceTensor) raw() host.Buffer {
	if t.buf == nil {
		return nil
	}
	return t.buf.Underlying()
}

// Release returns the tensor's memory to the device's pool, for reuse by
// later outputs. It is safe to call more than once.
func (t *DeviceTensor) Release() {
	if t.buf != nil {
		t.buf.Release()
		t.buf = nil
	}
}

// ToHost copies the tensor to a new host Tensor.
func (t *DeviceTensor) ToHost() (*Tensor, error) {
	if t.buf == nil {
		return nil, fmt.Errorf("accel: ToHost of a released tensor: %w", ErrClosed)
	}
	out, err := NewTensor(t.dtype, t.shape...)
	if err != nil {
		return nil, err
	}
	if err := t.dev.h.Download(t.raw(), 0, out.data); err != nil {
		return nil, fmt.Errorf("accel: download %s: %w", out, err)
	}
	return out, nil
}

// Upload copies a host tensor to the device.
func (d *Device) Upload(t *Tensor) (*DeviceTensor, error) {
	dt, err := d.alloc("upload", t.dtype, t.shape)
	if err != nil {
		return nil, err
	}
	if err := d.h.Upload(dt.raw(), 0, t.data); err != nil {
		dt.Release()
		return nil, fmt.Errorf("accel: upload %s: %w", t, err)
	}
	return dt, nil
}

// alloc allocates an output tensor, checking its size against the device's
// largest allocation first, and poisons it when a test asked for that.
func (d *Device) alloc(op string, dtype DType, shape []int64) (*DeviceTensor, error) {
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
	buf, err := d.pool.Alloc(n * size)
	if err != nil {
		return nil, fmt.Errorf("accel: %s: allocate %s%v: %w", op, dtype, shape, err)
	}
	t := &DeviceTensor{dev: d, buf: buf, dtype: dtype, shape: append([]int64(nil), shape...), n: n}
	if d.poison != nil && n > 0 {
		pat := d.poison
		if int64(len(pat)) > size {
			pat = pat[:size]
		}
		if err := d.h.Fill(t.raw(), 0, n*size, pat); err != nil {
			t.Release()
			return nil, err
		}
	}
	return t, nil
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

// checkOut checks that out is a live tensor of this device.
func (d *Device) checkOut(op string, out *DeviceTensor) error {
	if out == nil || out.buf == nil {
		return argErr(op, "out", "a released or nil tensor", "a live tensor", ErrClosed)
	}
	if out.dev != d {
		return argErr(op, "out", "a tensor of "+out.dev.String(), "a tensor of "+d.String(), ErrInvalidArgument)
	}
	return nil
}
