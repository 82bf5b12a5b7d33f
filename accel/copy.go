package accel

import (
	"encoding/binary"
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// fill queues a fill of size bytes of dst at off with pattern (1, 2, 4
// or 8 bytes; off a multiple of its length): the fill kernel where
// planFill picks it and the range is whole 32-bit words (8-byte patterns
// from an 8-byte boundary), else the driver's fill. Its errors are the
// driver's, unwrapped, as host's Fill returns them.
func (d *Device) fill(dst host.Buffer, off, size int64, pattern []byte) error {
	if size == 0 {
		return nil
	}
	lo, hi, ok := fillWords(pattern)
	if ok && off%4 == 0 && size%4 == 0 && (lo == hi || off%8 == 0) {
		if plan, ours := d.planner.fill(d.caps, size/4); ours {
			return host.Dispatch(d.h, string(kernels.CopyAny), d.plan(plan), kernels.CopyFill{Dst: dst, DstOff: off / 4, N: size / 4,
				Lo: int64(lo), Hi: int64(hi)})
		}
	}
	return d.h.Fill(dst, off, size, pattern)
}

// fillWords is a fill pattern of 1, 2, 4 or 8 bytes as the 32-bit words
// it puts at even and odd word positions (little-endian); ok is false
// for other lengths.
func fillWords(pattern []byte) (lo, hi uint32, ok bool) {
	switch len(pattern) {
	case 1, 2, 4:
		var w [4]byte
		for i := range w {
			w[i] = pattern[i%len(pattern)]
		}
		lo = binary.LittleEndian.Uint32(w[:])
		return lo, lo, true
	case 8:
		return binary.LittleEndian.Uint32(pattern[:4]), binary.LittleEndian.Uint32(pattern[4:]), true
	}
	return 0, 0, false
}

// copyBytes queues a copy of size bytes from src at srcOff to dst at
// dstOff: the copy kernel where planCopy picks it (CPU OpenCL drivers
// from 4 MiB, Vulkan GPUs) and the offsets and size are whole 32-bit
// words, else the driver's buffer copy.
func (d *Device) copyBytes(op string, dst host.Buffer, dstOff int64, src host.Buffer, srcOff, size int64) error {
	return d.copyBytesBy(op, dst, dstOff, src, srcOff, size, CopyAuto)
}

// copyBytesBy is copyBytes by the method how (CopyBy): CopyKernel and
// CopyDriver name the copy whatever the plan says; the caller checks that
// the kernel's range is whole 32-bit words.
func (d *Device) copyBytesBy(op string, dst host.Buffer, dstOff int64, src host.Buffer, srcOff, size int64, how CopyMethod) error {
	if size == 0 {
		return nil
	}
	plan, ours := d.planner.copy(d.caps, size/4)
	words := dstOff%4 == 0 && srcOff%4 == 0 && size%4 == 0
	if how == CopyKernel || how == CopyAuto && ours && words {
		return run(d, op, kernels.CopyAny, d.plan(plan), kernels.CopyWords{Dst: dst, Src: src, DstOff: dstOff / 4,
			SrcOff: srcOff / 4, N: size / 4})
	}
	if err := d.h.Copy(dst, dstOff, src, srcOff, size); err != nil {
		return fmt.Errorf("accel: %s: copy: %w", op, err)
	}
	return nil
}
