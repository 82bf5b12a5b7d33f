package host

import (
	"fmt"
	"math/bits"
	"strings"
)

// IndiceSplit is how get_indice_pairs' candidate expansion (rows x kernel
// offsets) is split over the device, modeled on the mlu-ops design: what
// the jobs (work-groups) split, then what the cores of a job (its
// work-items) split.
type IndiceSplit int

// The split policies.
const (
	SplitAuto IndiceSplit = iota // the planner's choice for the device class
	SplitLL                      // jobs and cores split the rows; each core takes every offset of its rows
	SplitLK                      // jobs split the rows, cores the offsets
	SplitKL                      // jobs split the offsets, cores the rows
	SplitKK                      // jobs and cores split the offsets; each core walks every row
)

var splitNames = []string{"auto", "LL", "LK", "KL", "KK"}

// String returns the policy's name: auto, LL, LK, KL or KK.
func (s IndiceSplit) String() string {
	if s >= 0 && int(s) < len(splitNames) {
		return splitNames[s]
	}
	return fmt.Sprintf("IndiceSplit(%d)", int(s))
}

// ParseIndiceSplit parses a policy name (auto, LL, LK, KL, KK; any case;
// empty is auto).
func ParseIndiceSplit(s string) (IndiceSplit, error) {
	if s == "" {
		return SplitAuto, nil
	}
	for i, n := range splitNames {
		if strings.EqualFold(s, n) {
			return IndiceSplit(i), nil
		}
	}
	return 0, fmt.Errorf("split %q: must be one of auto, LL, LK, KL, KK", s)
}

// IndiceSplits lists the forced policies, in order.
var IndiceSplits = []IndiceSplit{SplitLL, SplitLK, SplitKL, SplitKK}

// IndicePlan is the plan of get_indice_pairs' expansion pass, as data.
type IndicePlan struct {
	Split IndiceSplit `json:"split"` // never SplitAuto
	Jobs  int64       `json:"jobs"`  // work-groups that take work
	Cores int64       `json:"cores"` // work-items per work-group
	// RowsPerCore and OffsetsPerCore bound one core's share of a launch:
	// it walks at most RowsPerCore rows and, for each, OffsetsPerCore
	// offsets (its chunk: their product candidates).
	RowsPerCore    int64 `json:"rows_per_core"`
	OffsetsPerCore int64 `json:"offsets_per_core"`
	// Rows is the rows one launch covers, Repeats the launches: a core's
	// loops stay under half the driver's loop limit (Caps.LoopLimit).
	Rows    int64 `json:"rows"`
	Repeats int64 `json:"repeats"`
	// Search is how targets become output rows: "sort+unique" (regular
	// and transposed conv: the candidates' target keys radix-sorted and
	// numbered by run) or "sort+search" (submanifold and inverse: a binary
	// search among the sorted keys of the sites; a submanifold conv walks
	// the sites in key order and gallops from a cursor per offset). No
	// dense grid.
	Search string `json:"search"`
	// WorkspaceBytes is the expansion's own workspace: the candidates'
	// flags (scanned in place into positions) and, for looked-up rules,
	// their found rows; O(rows x offsets), never the output grid.
	WorkspaceBytes int64  `json:"workspace_bytes"`
	Plan           Plan   `json:"plan"` // the expand launch (Groups >= Jobs)
	Reason         string `json:"reason"`
}

// String prints the plan on one line.
func (p IndicePlan) String() string {
	return fmt.Sprintf("indice_pairs: split=%s jobs=%d cores=%d chunk=%dx%d rows/launch=%d repeats=%d search=%s workspace=%dB (%s)",
		p.Split, p.Jobs, p.Cores, p.RowsPerCore, p.OffsetsPerCore, p.Rows, p.Repeats, p.Search, p.WorkspaceBytes, p.Reason)
}

// PlanIndicePairs plans the expansion of n rows x k kernel offsets. lookup
// says the rule looks targets up among nkeys sorted site keys (a binary
// search per candidate). split forces a policy; SplitAuto picks LL, the
// measured fastest on the CPU drivers (see README), and the natural one on
// GPUs (one row per work-item, its offsets in registers).
//
// Cores: 8 work-items per group on CPU drivers (one SIMD vector), 64 on
// GPUs. Jobs: LL and LK give each job a share of the rows (on CPUs 16 jobs
// per compute unit, on GPUs one row per core); KL gives each job one
// offset; KK spreads the offsets over jobs x cores. Under a loop limit a
// core's iterations (one per row, one per candidate plus its index math
// and binary search steps) stay under half the limit by cutting the rows
// into launches (Repeats).
func PlanIndicePairs(caps Caps, n, k int64, lookup bool, nkeys int64, split IndiceSplit) IndicePlan {
	p := IndicePlan{Split: split, Search: "sort+unique"}
	if lookup {
		p.Search = "sort+search"
	}
	if p.Split == SplitAuto {
		p.Split = SplitLL
	}
	n, k = max(n, 1), max(k, 1)
	cpu := caps.Type == TypeCPU
	local := 64
	if cpu {
		local = 8
	}
	local = pow2Local(caps, local, 0)
	cu := max(int64(caps.ComputeUnits), 1)
	c := int64(local)
	rowJobs := func(rows int64) int64 {
		if cpu {
			return max(min(16*cu, (rows+c-1)/c), 1)
		}
		return max((rows+c-1)/c, 1)
	}
	var jobs int64
	switch p.Split {
	case SplitLL:
		jobs = rowJobs(n)
	case SplitLK:
		c = min(c, k)
		jobs = rowJobs(n * c)
	case SplitKL:
		jobs = k
	default:
		c = min(c, k)
		jobs = (k + c - 1) / c
	}
	// the groups a folded grid can hold (FoldGroups), saturating at 2^40
	maxGroups := int64(1)
	for _, l := range caps.MaxWorkGroupCount {
		if l <= 0 {
			l = 65535
		}
		maxGroups = min(maxGroups*min(l, 1<<20), 1<<40)
	}
	jobs = min(jobs, maxGroups)
	// A core's share of a launch of r rows.
	share := func(r int64) (rows, offs int64) {
		switch p.Split {
		case SplitLL:
			return ceilDiv(r, jobs*c), k
		case SplitLK:
			return ceilDiv(r, jobs), ceilDiv(k, c)
		case SplitKL:
			return ceilDiv(r, c), ceilDiv(k, jobs)
		}
		return r, ceilDiv(k, jobs*c)
	}
	// Loop iterations: per row 1 + 4 (its coordinates), per candidate 1 +
	// 8 (offset and rule loops over up to 4 dims) + the search.
	perCand := int64(9)
	if lookup {
		// a binary search, or a gallop and a binary search
		perCand += 2*int64(bits.Len64(uint64(max(nkeys, 1)))) + 2
	}
	cost := func(r int64) int64 {
		rows, offs := share(r)
		return rows*(5+offs*perCand) + 130 // and the cursors' set-up
	}
	lc := loopCap(caps)
	if caps.LoopLimit > 0 && (p.Split == SplitLL || p.Split == SplitLK) {
		// more jobs rather than more launches: each core's rows stay
		// under the limit in one launch where the grid allows
		_, offs := share(n)
		rowsMax := max((lc-130)/(5+offs*perCand), 1)
		if p.Split == SplitLL {
			jobs = max(jobs, min(ceilDiv(n, rowsMax*c), maxGroups))
		} else {
			jobs = max(jobs, min(ceilDiv(n, rowsMax), maxGroups))
		}
	}
	p.Rows = n
	if cost(n) > lc {
		// the largest launch under the cap, by bisection over rows
		lo, hi := int64(1), n
		for lo < hi {
			mid := lo + (hi-lo+1)/2
			if cost(mid) <= lc {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		p.Rows = lo
	}
	p.Repeats = ceilDiv(n, p.Rows)
	p.Jobs, p.Cores = jobs, c
	p.RowsPerCore, p.OffsetsPerCore = share(p.Rows)
	p.WorkspaceBytes = (n*k + 1) * 4
	if n*k+1 >= 1<<32 {
		p.WorkspaceBytes *= 2
	}
	if lookup {
		p.WorkspaceBytes += n * k * 4
	}
	p.Plan = Plan{Kernel: "indice_expand", LocalSize: int(c), Groups: FoldGroups(jobs, caps.MaxWorkGroupCount),
		Tiles: jobs * c, TileElems: p.RowsPerCore * p.OffsetsPerCore,
		Knobs: []Knob{{Name: "ITEMS", Value: 1}, {Name: "CONTIG", Value: 1}}}
	dev := "gpu"
	if cpu {
		dev = "cpu"
	}
	p.Reason = fmt.Sprintf("%s: %d jobs x %d cores", dev, jobs, c)
	if split == SplitAuto {
		p.Reason += ", auto split LL"
	}
	if p.Repeats > 1 {
		p.Reason += fmt.Sprintf("; loop limit %d: %d rows per launch", caps.LoopLimit, p.Rows)
	}
	return p
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
