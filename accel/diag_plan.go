package accel

import (
	"github.com/accelkern/accel/host"
)

// planDiag plans the diag kernel's walk over count diagonal elements
// (clkernels/common/diag_body.h): host.PlanElementwise's, except on CPU OpenCL
// drivers, where a diagonal is short next to the copy before it (4096
// elements of a 4096^2 matrix) and elementwise tiles of 262144 elements
// would leave it to one core: there one work-item per group and a group
// per run of 1024 elements, which the driver's threads share.
func planDiag(caps host.Caps, count int64) host.Plan {
	p := host.PlanElementwise("diag", caps, count)
	if caps.Type != host.TypeCPU || caps.Backend != host.OpenCL {
		return p
	}
	const items = 1024 // a fixed knob: one compiled variant
	p.LocalSize = 1
	p.Knobs = []host.Knob{host.KnobItems.Set(items), host.KnobContig.Set(1)}
	p.TileElems = items
	p.Tiles = (count + items - 1) / items
	p.Groups = host.FoldGroups(max(p.Tiles, 1), caps.MaxWorkGroupCount)
	p.Reason = "cpu opencl: one work-item per group, runs of 1024 elements"
	return p
}
