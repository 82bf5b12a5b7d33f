package accel

import (
	"fmt"

	"github.com/accelkern/accel/host"
)

// planHash plans the launches of the hash table kernel over n keys (see
// clkernels/common/hash_body.h) and returns the probe budget of one
// work-item per launch (0: unbounded). It is host.PlanElementwise's layout
// (contiguous runs per work-item on CPUs, coalesced lanes on GPUs), except
// under a driver loop limit: there each work-item takes 64 keys and gets a
// budget of probes that keeps its loops well under the limit, and the host
// relaunches for the keys that ran out of it.
func planHash(caps host.Caps, n int64) (host.Plan, int64) {
	p := host.PlanElementwise("hash", caps, n)
	if caps.LoopLimit <= 0 {
		if caps.Type != host.TypeCPU {
			// Each work-item adds its count of new keys to one counter
			// once, at its end: 8 groups per compute unit keep that to
			// about a hundred thousand atomics on a large GPU while
			// every lane still has several keys' loads in flight.
			cu := max(int64(caps.ComputeUnits), 1)
			p.Groups = host.FoldGroups(max(min(p.Tiles, 8*cu), 1), caps.MaxWorkGroupCount)
			p.Reason += "; 8 groups per compute unit (one counter update per work-item)"
		}
		return p, 0
	}
	items := int64(64)
	p = p.WithItems(caps, n, items)
	// The tile and item loops take ITEMS+1 iterations of the limit; the
	// probe and compare-and-swap loops share the rest. The driver runs a
	// subgroup's invocations as SIMD lanes of one loop, which iterates
	// while any lane still probes, so the lanes' budgets add up.
	lanes := int64(caps.SubgroupSize)
	if lanes <= 0 {
		lanes = 16
	}
	budget := max((host.LoopCap(caps)-2*items-8)/lanes, 2)
	p.Reason += fmt.Sprintf("; %d keys per work-item, %d probes per launch", items, budget)
	return p, budget
}

// hashReport prints a hash plan and its probe budget.
type hashReport struct {
	plan   host.Plan
	budget int64
}

func (r hashReport) String() string { return fmt.Sprintf("%s budget=%d", r.plan, r.budget) }
