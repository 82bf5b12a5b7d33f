package accel

import (
	"fmt"

	"github.com/accelkern/accel/host"
)

// DeviceTensor is a tensor resident in device memory. Ops on the same device
// take and return DeviceTensors, so chains run without host round trips.
// Release it when done (Close on the device releases all).
type DeviceTensor struct {
	dev *Device
	buf *host.PooledBuffer
	// view, with guard bands (Options.GuardBytes), is the tensor's part of
	// buf, between the bands; nil without them.
	view  host.Buffer
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
	if t == nil || t.buf == nil {
		return nil
	}
	if t.view != nil {
		return t.view
	}
	return t.buf.Underlying()
}

// Release returns the tensor's memory to the device's pool, for reuse by
// later outputs (work already queued on it finishes first). It is safe to
// call more than once.
func (t *DeviceTensor) Release() {
	if t != nil && t.buf != nil {
		if t.view != nil {
			t.view.Release()
		}
		t.buf.Release()
		t.buf = nil
	}
}

// ToHost copies the tensor to a new host Tensor, once the work queued to
// produce it has finished. With Options.GuardBytes it also checks the
// tensor's guard band (ErrGuardBand).
func (t *DeviceTensor) ToHost() (*Tensor, error) {
	if t == nil || t.buf == nil {
		return nil, argErr("to_host", "tensor", "a released or nil tensor", "a live tensor", ErrClosed)
	}
	out, err := NewTensor(t.dtype, t.shape...)
	if err != nil {
		return nil, err
	}
	if t.dev.guard > 0 {
		// One download of the bands and the data between them (one wait,
		// as without).
		lead := t.dev.leadBand()
		at := lead + alignUp4(int64(len(out.data)))
		all := make([]byte, at+t.dev.guard)
		if err := t.dev.h.Download(t.buf.Underlying(), 0, all); err != nil {
			return nil, fmt.Errorf("accel: download %s: %w", out, err)
		}
		if err := t.checkGuard(all[:lead], all[at:]); err != nil {
			return nil, err
		}
		copy(out.data, all[lead:])
		return out, nil
	}
	if err := t.dev.h.Download(t.raw(), 0, out.data); err != nil {
		return nil, fmt.Errorf("accel: download %s: %w", out, err)
	}
	return out, nil
}

// Upload copies a host tensor to the device (the copy is queued; t may be
// changed once Upload returns).
func (d *Device) Upload(t *Tensor) (*DeviceTensor, error) {
	dt, err := d.alloc("upload", t.dtype, t.shape)
	if err != nil {
		return nil, err
	}
	if err := d.h.Upload(dt.raw(), 0, t.data); err != nil {
		dt.Release()
		return nil, fmt.Errorf("accel: upload %s: %w", t, err)
	}
	return dt, d.flush("upload")
}

// Zeros returns a new tensor of dtype and shape filled with zero bits.
func (d *Device) Zeros(dtype DType, shape ...int64) (*DeviceTensor, error) {
	const op = "zeros"
	t, err := d.alloc(op, dtype, shape)
	if err != nil {
		return nil, err
	}
	if t.n > 0 {
		if err := d.fill(t.raw(), 0, t.n*int64(dtype.Size()), []byte{0}); err != nil {
			t.Release()
			return nil, fmt.Errorf("accel: %s: %w", op, err)
		}
	}
	return t, d.flush(op)
}

// Copy copies src into dst on the device: both tensors of this device,
// of one dtype and element count (shapes may differ), and not the same
// tensor.
func (d *Device) Copy(dst, src *DeviceTensor) error { return d.CopyBy(dst, src, CopyAuto) }

// CopyMethod is how Device.CopyBy copies.
type CopyMethod int

// The copy methods.
const (
	// CopyAuto copies as Copy does: with the copy kernel where the
	// device's plan picks it (CPU OpenCL drivers from 4 MiB, Vulkan GPUs),
	// else with the driver's buffer copy.
	CopyAuto CopyMethod = iota
	// CopyDriver copies with the driver's buffer copy
	// (clEnqueueCopyBuffer, vkCmdCopyBuffer).
	CopyDriver
	// CopyKernel copies with the library's copy kernel, in the device's
	// plan for it; the tensors must hold whole 32-bit words.
	CopyKernel
)

// CopyBy is Copy by the method how: accel bench times both the driver's
// copy and the copy kernel, and takes the faster as the device's copy
// ceiling. A method that is not one of the CopyMethod constants, or
// CopyKernel on tensors that are not whole 32-bit words, is an
// ErrInvalidArgument.
func (d *Device) CopyBy(dst, src *DeviceTensor, how CopyMethod) error {
	const op = "copy"
	if how < CopyAuto || how > CopyKernel {
		return argErr(op, "how", int(how), "CopyAuto, CopyDriver or CopyKernel", ErrInvalidArgument)
	}
	if err := d.checkIn(op, "dst", dst); err != nil {
		return err
	}
	if err := d.checkIn(op, "src", src); err != nil {
		return err
	}
	if dst.dtype != src.dtype || dst.n != src.n {
		return argErr(op, "dst", fmt.Sprintf("%s with %d elements", dst.dtype, dst.n),
			fmt.Sprintf("src's dtype %s and element count %d", src.dtype, src.n), ErrInvalidArgument)
	}
	if dst.raw() == src.raw() {
		return argErr(op, "dst", "src itself", "a different tensor from src", ErrInvalidArgument)
	}
	size := dst.n * int64(dst.dtype.Size())
	if how == CopyKernel && size%4 != 0 {
		return argErr(op, "dst", fmt.Sprintf("%d bytes", size), "whole 32-bit words for the copy kernel", ErrInvalidArgument)
	}
	if err := d.copyBytesBy(op, dst.raw(), 0, src.raw(), 0, size, how); err != nil {
		return err
	}
	return d.flush(op)
}
