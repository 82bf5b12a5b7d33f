package accel

import (
	"github.com/accelkern/accel/host"
)

// copyKernelMinBytes is the smallest copy planCopy gives the copy kernel.
// Below it PoCL's own buffer copy was as fast (medians of 15 on the 2-core
// VM, driver against kernel: 256 KiB 0.044 / 0.077 ms, 1 MiB 0.097 /
// 0.080, 2 MiB 0.193 / 0.147; 16 MiB 1.68 / 1.21, 64 MiB 9.6 / 7.5), and
// it needs no build: the kernel's first build with PoCL's cache empty
// costs 0.5-1 s, which a small copy, as the one of scatter_reduce's
// input, would pay on its first call (issue #30).
const copyKernelMinBytes = 4 << 20

// planCopy plans a copy of n 32-bit words with the copy kernel
// (clkernels/common/copy_body.h) and says whether the device should use
// it rather than its driver's buffer copy: on CPU OpenCL drivers, whose
// buffer copy runs on one thread (PoCL: about half of what the memory
// moves). The plan is one work-item per group and one group per core, each
// copying a contiguous run of 64 KiB chunks; under a driver loop limit,
// one chunk per group; copies under copyKernelMinBytes keep the driver's
// copy there. Vulkan GPUs take the kernel too, in the elementwise GPU plan
// (host.PlanElementwise: CONTIG 0, consecutive lanes on consecutive
// words, tiles taken by a grid stride): NVIDIA's Vulkan buffer
// copy moved 843 GB/s on the H200 where its OpenCL one moved 4.08 TB/s and
// our other Vulkan kernels 1.6 TB/s. Other devices keep their driver's
// copy (lavapipe's vkCmdCopyBuffer is several times faster than any of its
// shaders; NVIDIA's OpenCL copy runs at the device's bandwidth); tests run
// the kernel there by forcing it.
func planCopy(caps host.Caps, n int64) (host.Plan, bool) {
	if caps.Type != host.TypeCPU {
		return host.PlanElementwise("copy", caps, n), caps.Backend == host.Vulkan
	}
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
	ours := caps.Backend == host.OpenCL && 4*n >= copyKernelMinBytes
	p.Reason = "driver copy"
	if ours {
		p.Reason = "cpu opencl: one work-item per group, one group per core, a contiguous run of 64 KiB chunks each"
		if stream != 0 {
			p.Reason += ", non-temporal stores"
		}
	}
	return p, ours
}

// fillKernelMinBytes is the smallest fill planFill gives the fill kernel
// on GPUs: smaller fills (a scan's total word, a table's meta words) cost
// a launch either way and keep the driver's, which needs no build.
const fillKernelMinBytes = 1 << 20

// planFill plans a fill of n 32-bit words with the fill kernel
// (copy_body.h's copy_fill) and says whether the device should use it
// rather than its driver's fill:
//   - GPUs, fills of at least fillKernelMinBytes, in the elementwise GPU
//     plan: NVIDIA's OpenCL fill moved 413 GB/s on the H100, whose copy
//     moved 2.97 TB/s, and fills clear whole tables and counts (Unique's
//     hash table, the scatter's hit counts, zeroed outputs);
//   - CPU OpenCL drivers, fills of at least copyKernelMinBytes (as their
//     copies: the kernel's first build is not paid for small ones), in
//     the copy's CPU plan (a contiguous run of chunks per core,
//     non-temporal stores from StreamMinBytes): PoCL's own fill runs on
//     one thread (2-core VM, 20 fills each: 64 MiB 14 GB/s, the kernel
//     36-39; 16 MiB 14 and 51-56; 1 MiB 8 and 14-18);
//   - other devices keep their driver's (lavapipe's fill is a memset,
//     47-63 GB/s for 16-64 MiB where the kernel moved 7-10); tests run
//     the kernel there by forcing it.
func planFill(caps host.Caps, n int64) (host.Plan, bool) {
	if caps.Type == host.TypeCPU {
		p, _ := planCopy(caps, n)
		p.Kernel = "fill"
		ours := caps.Backend == host.OpenCL && 4*n >= copyKernelMinBytes
		p.Reason = "driver fill"
		if ours {
			p.Reason = "cpu opencl: one work-item per group, one group per core, a contiguous run of 64 KiB chunks each"
			if host.KnobStream.Of(p) != 0 {
				p.Reason += ", non-temporal stores"
			}
		}
		return p, ours
	}
	p := host.PlanElementwise("fill", caps, n)
	return p, 4*n >= fillKernelMinBytes
}
