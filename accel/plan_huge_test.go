package accel

import (
	"fmt"
	"testing"

	"github.com/accelkern/accel/host"

	"github.com/stretchr/testify/require"
)

// TestPlansAtIndexBoundaries checks the launch math of every planner at
// element counts around 2^31 and 2^32 (and up to the largest tensor each
// device can hold) on the device classes the planners tell apart: the
// grid fits the device's limits, the tiles cover exactly n elements (no
// tile past the end, none missing), the work-item chunks cover n, and on
// a driver with a loop limit no work-item's loop over its share comes near
// the limit for any size the device can allocate. Kernels index in 64 bits
// (i64 in clkernels/common), so these host-side numbers are where a 32-bit
// count would break first.
func TestPlansAtIndexBoundaries(t *testing.T) {
	gpu := host.Caps{Backend: host.Vulkan, Type: host.TypeDiscreteGPU, ComputeUnits: 132, MaxWorkGroupSize: 1024,
		LocalMemBytes: 48 << 10, SubgroupSize: 32, SubgroupArith: true, Int64Atomics: true,
		MaxWorkGroupCount: [3]int64{2147483647, 65535, 65535}, MaxAllocBytes: 64 << 30, GlobalMemBytes: 80 << 30}
	gpuCL := gpu
	gpuCL.Backend, gpuCL.SubgroupArith, gpuCL.MaxWorkGroupCount = host.OpenCL, false, [3]int64{1 << 31, 1 << 31, 1 << 31}
	pocl := host.Caps{Backend: host.OpenCL, Type: host.TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 4096, LocalMemBytes: 512 << 10,
		MaxWorkGroupCount: [3]int64{1 << 31, 1 << 31, 1 << 31}, MaxAllocBytes: 8 << 30, GlobalMemBytes: 16 << 30, Int64Atomics: true}
	lavapipe := host.Caps{Backend: host.Vulkan, Type: host.TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 1024, LocalMemBytes: 32 << 10,
		SubgroupSize: 8, SubgroupArith: true, SubgroupFixed: true, LoopLimit: 65535, Int64Atomics: true,
		MaxWorkGroupCount: [3]int64{65535, 65535, 65535}, MaxAllocBytes: 2 << 30, GlobalMemBytes: 24 << 30}
	devices := []struct {
		name string
		caps host.Caps
	}{{"gpu vulkan", gpu}, {"gpu opencl", gpuCL}, {"pocl", pocl}, {"lavapipe", lavapipe}}

	sizes := func(elemBytes int64, caps host.Caps) []int64 {
		var s []int64
		for _, b := range []int64{1 << 31, 1 << 32} {
			s = append(s, b-1, b, b+1)
		}
		s = append(s, 1<<40+12345)
		maxN := caps.MaxAllocBytes / elemBytes
		s = append(s, maxN-1, maxN)
		return s
	}
	cover := func(what string, p host.Plan, n int64) {
		t.Helper()
		require.NoError(t, p.Validate(host.Caps{MaxWorkGroupSize: 1 << 20}), "%s: %v", what, p)
		require.GreaterOrEqual(t, p.Tiles*p.TileElems, n, "%s: %v does not cover %d elements", what, p, n)
		require.Less(t, (p.Tiles-1)*p.TileElems, max(n, 1), "%s: %v has a tile wholly past %d elements", what, p, n)
	}
	for _, dv := range devices {
		c := dv.caps
		for _, elem := range []int64{4, 8} {
			for _, n := range sizes(elem, c) {
				what := fmt.Sprintf("%s, n=%d, %d-byte elements", dv.name, n, elem)
				fits := n*elem <= c.MaxAllocBytes

				p := host.PlanElementwise("ew", c, n)
				require.NoError(t, p.Validate(c), "%s: %v", what, p)
				cover(what+", elementwise", p, n)
				if c.LoopLimit > 0 && fits {
					// a work-item's loop runs over its tiles (grid stride)
					// and ITEMS elements of each
					perItem := (p.Tiles + p.TotalGroups() - 1) / p.TotalGroups() * host.KnobItems.Of(p)
					require.LessOrEqual(t, perItem, int64(c.LoopLimit)/2, "%s: elementwise %v: %d iterations per work-item", what, p, perItem)
				}

				sg := c.Backend == host.Vulkan && c.SubgroupArith
				p = planScan(c, n, elem, sg)
				require.NoError(t, p.Validate(c), "%s: %v", what, p)
				cover(what+", scan", p, n)
				if c.LoopLimit > 0 && fits {
					tilesPerGroup := (p.Tiles + p.Groups[0] - 1) / p.Groups[0]
					perItem := tilesPerGroup * (2*host.KnobItems.Of(p) + int64(p.LocalSize) + 2)
					require.LessOrEqual(t, perItem, int64(c.LoopLimit)/2+int64(p.LocalSize), "%s: scan %v: %d iterations per work-item", what, p, perItem)
					require.LessOrEqual(t, p.Groups[0], int64(c.LoopLimit)/2, "%s: scan %v: the partials loop runs over every group", what, p)
				}

				p = planRadix(c, n, 8, n)
				require.NoError(t, p.Validate(c), "%s: %v", what, p)
				require.GreaterOrEqual(t, p.Tiles*p.TileElems, n, "%s: radix %v: chunks do not cover %d keys", what, p, n)
				if kpt := host.KnobRadixKpt.Of(p); kpt > 0 {
					// GPUs' tiled passes: a grid stride over tiles of
					// LOCAL_SIZE x RADIX_KPT keys, each within the packed
					// 16-bit counters and the scratch within local memory
					require.Equal(t, int64(p.LocalSize)*kpt, p.TileElems, "%s: radix %v: tile", what, p)
					require.LessOrEqual(t, p.TileElems, int64(65535), "%s: radix %v: tile", what, p)
					if c.LocalMemBytes > 0 {
						require.LessOrEqual(t, radixTiledScratchBytes(p, 8), c.LocalMemBytes, "%s: radix %v: scratch", what, p)
					}
				} else {
					require.Equal(t, p.Tiles, p.TotalGroups()*int64(p.LocalSize), "%s: radix %v: one chunk per work-item", what, p)
				}
				if c.LoopLimit > 0 && fits {
					require.LessOrEqual(t, p.TileElems, int64(c.LoopLimit)/2, "%s: radix %v: chunk of %d keys", what, p, p.TileElems)
				}

				hp, budget := planHash(c, n)
				require.NoError(t, hp.Validate(c), "%s: %v", what, hp)
				cover(what+", hash", hp, n)
				if c.LoopLimit > 0 {
					require.Positive(t, budget, "%s: hash %v", what, hp)
				}

				for _, det := range []bool{false, true} {
					sp := planScatter(c, scatterShape{n: n, targets: n/3 + 1, elemBytes: int(elem), red: Sum, includeSelf: true, det: det, flat: true})
					if sp.Path.cpuPass() {
						require.NoError(t, sp.Pass.Validate(c), "%s: %v", what, sp)
						require.GreaterOrEqual(t, sp.Pass.Tiles*sp.Pass.TileElems, n, "%s: %v does not cover %d positions", what, sp, n)
					}
				}
			}
		}
	}
}
