package accel

import (
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// copyBytes queues a copy of size bytes from src at srcOff to dst at
// dstOff: the copy kernel where planCopy picks it (CPU OpenCL
// drivers) and the offsets and size are whole 32-bit words, else the
// driver's buffer copy.
func (d *Device) copyBytes(op string, dst host.Buffer, dstOff int64, src host.Buffer, srcOff, size int64) error {
	if size == 0 {
		return nil
	}
	plan, ours := d.planner.copy(d.caps, size/4)
	if ours && dstOff%4 == 0 && srcOff%4 == 0 && size%4 == 0 {
		return run(d, op, kernels.CopyAny, d.plan(plan), kernels.CopyWords{Dst: dst, Src: src, DstOff: dstOff / 4,
			SrcOff: srcOff / 4, N: size / 4})
	}
	if err := d.h.Copy(dst, dstOff, src, srcOff, size); err != nil {
		return fmt.Errorf("accel: %s: copy: %w", op, err)
	}
	return nil
}
