package accel

import (
	"github.com/accelkern/accel/host"
)

// planCopy plans a copy of n 32-bit words with the copy kernel
// (clkernels/common/copy_body.h) and says whether the device should use
// it rather than its driver's buffer copy: on CPU OpenCL drivers, whose
// buffer copy runs on one thread (PoCL: about half of what the memory
// moves). The plan is one work-item per group and one group per core, each
// copying a contiguous run of 64 KiB chunks; under a driver loop limit,
// one chunk per group. Other devices keep their driver's copy (lavapipe's
// vkCmdCopyBuffer is several times faster than any of its shaders); tests
// run the kernel there by forcing it.
func planCopy(caps host.Caps, n int64) (host.Plan, bool) {
	const items = 16 << 10 // words per chunk: 64 KiB, under a loop limit's half
	stream := int64(0)
	if 4*n >= host.StreamMinBytes {
		stream = 1
	}
	p := host.Plan{Kernel: "copy", LocalSize: 1, TileElems: items,
		Knobs: []host.Knob{host.KnobItems.Set(items), host.KnobContig.Set(1), host.KnobStream.Set(stream)}}
	p.Tiles = (n + items - 1) / items
	groups := min(p.Tiles, max(int64(caps.ComputeUnits), 1))
	if caps.LoopLimit > 0 {
		groups = p.Tiles
	}
	p.Groups = host.FoldGroups(max(groups, 1), caps.MaxWorkGroupCount)
	ours := caps.Type == host.TypeCPU && caps.Backend == host.OpenCL
	p.Reason = "driver copy"
	if ours {
		p.Reason = "cpu opencl: one work-item per group, one group per core, a contiguous run of 64 KiB chunks each"
		if stream != 0 {
			p.Reason += ", non-temporal stores"
		}
	}
	return p, ours
}
