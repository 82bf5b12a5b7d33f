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

// IndiceShape is how get_indice_pairs lays out a submanifold conv's work.
type IndiceShape int

// The shapes.
const (
	// ShapeAuto: rows on CPU drivers, candidates on GPUs.
	ShapeAuto IndiceShape = iota
	// ShapeCandidates (GPU-shaped): one flag per candidate (row x
	// offset), scanned over all of them, and one work-item per candidate
	// in the pairs' write; the sites are walked in key order with a
	// galloping cursor per offset.
	ShapeCandidates
	// ShapeRows (CPU-shaped): each work-item walks a contiguous run of
	// sites in key order with a merge cursor per kernel plane (the
	// offsets that differ only in the last dim are consecutive keys: one
	// search, then steps) and stores each row's found rows as one record;
	// then each work-item counts, and after a scan of the K x chunks
	// counts writes, one offset's pairs over a contiguous chunk of rows
	// (streaming stores).
	ShapeRows
)

var shapeNames = []string{"auto", "candidates", "rows"}

// String returns the shape's name.
func (s IndiceShape) String() string {
	if s >= 0 && int(s) < len(shapeNames) {
		return shapeNames[s]
	}
	return fmt.Sprintf("IndiceShape(%d)", int(s))
}

// IndiceCursors is IP_CURSORS of indice_body.h: the offsets (or planes)
// one core keeps search cursors for.
const IndiceCursors = 128

// IndiceGridMax is the most keys of a dense grid over the target space
// (64 MiB of flags).
const IndiceGridMax = 16 << 20

// IndiceKD is IP_KD of indice_body.h: the largest kernel size per dim of
// the regular and transposed convs' rows shape.
const IndiceKD = 16

// IndicePlan is the plan of get_indice_pairs' expansion pass, as data.
type IndicePlan struct {
	Shape IndiceShape `json:"shape"` // never ShapeAuto
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
	// numbered by run), "dense grid" (a small target space: a flag per key,
	// scanned), "sort+search" (submanifold and inverse: a binary
	// search among the sorted keys of the sites), "sort+merge" (a
	// submanifold conv in rows walking the sites in key order, galloping
	// from a cursor per kernel plane) or "line table" (a submanifold conv
	// in rows looking each plane's target line up in a table of the lines'
	// first sorted sites). Never a grid over the output space.
	Search string `json:"search"`
	// WorkspaceBytes is the expansion's own workspace: the candidates'
	// flags (scanned in place into positions) and, for looked-up rules,
	// their found rows; O(rows x offsets), never the output grid.
	WorkspaceBytes int64 `json:"workspace_bytes"`
	Plan           Plan  `json:"plan"` // the expand launch (Groups >= Jobs)
	// ShapeRows: the count and emit passes' tiles, (chunk of ChunkRows
	// rows, offset), Chunks chunks, and their launch (a tile per
	// work-item).
	ChunkRows int64 `json:"chunk_rows,omitempty"`
	Chunks    int64 `json:"chunks,omitempty"`
	Emit      Plan  `json:"emit,omitempty"`
	// Grid (regular and transposed convs in rows): the keys of the
	// target space when they are numbered through a dense grid of flags
	// (scanned) instead of sorted; 0 otherwise.
	Grid int64 `json:"grid,omitempty"`
	// Lines (submanifold convs in rows): the lines of the site grid (the
	// batch times every spatial size but the last) when the targets are
	// looked up through a table of each line's first sorted site
	// (indice_lines, indice_tsearch) instead of merge cursors; 0
	// otherwise.
	Lines  int64  `json:"lines,omitempty"`
	Reason string `json:"reason"`
}

// String prints the plan on one line.
func (p IndicePlan) String() string {
	emit := ""
	if p.Shape == ShapeRows {
		emit = fmt.Sprintf(" emit=%dx%d rows", p.Chunks, p.ChunkRows)
	}
	return fmt.Sprintf("indice_pairs: shape=%s split=%s jobs=%d cores=%d chunk=%dx%d rows/launch=%d repeats=%d search=%s%s workspace=%dB (%s)",
		p.Shape, p.Split, p.Jobs, p.Cores, p.RowsPerCore, p.OffsetsPerCore, p.Rows, p.Repeats, p.Search, emit, p.WorkspaceBytes, p.Reason)
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
	n, k = max(n, 1), max(k, 1)
	// Loop iterations: per row 1 + 4 (its coordinates), per candidate 1 +
	// 8 (offset and rule loops over up to 4 dims) + the search.
	perCand := int64(9)
	if lookup {
		// a binary search, or a gallop and a binary search
		perCand += 2*int64(bits.Len64(uint64(max(nkeys, 1)))) + 2
	}
	p := planIndice(caps, max(n, 1), max(k, 1), 0, perCand, split)
	p.Shape, p.Search = ShapeCandidates, "sort+unique"
	if lookup {
		p.Search = "sort+search"
	}
	p.WorkspaceBytes = (n*k + 1) * 4
	if n*k+1 >= 1<<32 {
		p.WorkspaceBytes *= 2
	}
	if lookup {
		p.WorkspaceBytes += n * k * 4
	}
	return p
}

// planIndice is the expansion's split of n rows (or chunks of rows) x k
// offsets (or planes) whose rows cost perRow loop iterations and
// candidates perCand each.
func planIndice(caps Caps, n, k, perRow, perCand int64, split IndiceSplit) IndicePlan {
	p := IndicePlan{Split: split}
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
	cost := func(r int64) int64 {
		rows, offs := share(r)
		return rows*(5+perRow+offs*perCand) + 130 // and the cursors' set-up
	}
	lc := loopCap(caps)
	if caps.LoopLimit > 0 && (p.Split == SplitLL || p.Split == SplitLK) {
		// more jobs rather than more launches: each core's rows stay
		// under the limit in one launch where the grid allows
		_, offs := share(n)
		rowsMax := max((lc-130)/(5+perRow+offs*perCand), 1)
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

// PlanIndiceSubm plans a submanifold conv over n sites with kernel ksize:
// shape forces a layout, ShapeAuto takes rows on CPU drivers (long
// sequential runs per work-item) and candidates elsewhere (see
// IndiceShape). Rows needs at most IndiceCursors kernel planes per core
// (else it plans candidates). In the rows shape the expansion splits n
// rows x prod(ksize[:D-1]) planes by the split policy; each plane costs a
// gallop and ksize[D-1] steps. lines is the number of lines of the site
// grid (the batch times every spatial size but the last; 0: none): where
// the split is LL (or auto) and the table of lines+1 words holds at most
// IndiceGridMax words and no more than the n x K records, the rows shape
// looks the targets up through a line table instead (Lines), writing the
// records in row order: no -1 fill, no rank scatter, no gather. Measured
// on PoCL for subm248636 (kernel times, three alternating runs): the merge
// search, its fill and its gather 41-53 ms, the table, its search and the
// count 36-38 ms; on lavapipe the whole subm kernels 160 -> 99 ms (best
// of four).
func PlanIndiceSubm(caps Caps, n int64, ksize []int64, split IndiceSplit, shape IndiceShape, lines int64) IndicePlan {
	k := int64(1)
	for _, v := range ksize {
		k *= v
	}
	kl := int64(1)
	if len(ksize) > 0 {
		kl = ksize[len(ksize)-1]
	}
	if shape == ShapeAuto && caps.Type != TypeCPU {
		shape = ShapeCandidates
	}
	n, k = max(n, 1), max(k, 1)
	log := int64(bits.Len64(uint64(n)))
	planes := k / max(kl, 1)
	sym := IndiceSubmSym(ksize)
	searched := planes
	if sym {
		searched = (planes + 1) / 2
	}
	// per plane: its dims (4), a gallop to the first target, then a
	// step or two per offset
	p := planIndice(caps, n, searched, 0, 9+2*log+2+4*kl, split)
	if shape == ShapeCandidates || p.OffsetsPerCore > IndiceCursors || k > IndiceCursors {
		p = PlanIndicePairs(caps, n, k, true, n, split)
		p.Reason += ", subm"
		return p
	}
	p.Shape, p.Search = ShapeRows, "sort+merge"
	p.Reason += fmt.Sprintf(", subm rows: %d of %d planes x %d offsets", searched, planes, kl)
	// the count and emit tiles: a chunk of rows x one offset each
	local := int64(pow2Local(caps, 64, 0))
	if caps.Type == TypeCPU {
		local = int64(pow2Local(caps, 8, 0))
	}
	p.ChunkRows = max(min(n, 1024, loopCap(caps)/(2*k+4)), 1)
	p.Chunks = ceilDiv(n, p.ChunkRows)
	tiles := p.Chunks * k
	p.Emit = Plan{Kernel: "indice_emit", LocalSize: int(local), Groups: FoldGroups(ceilDiv(tiles, local), caps.MaxWorkGroupCount),
		Tiles: tiles, TileElems: p.ChunkRows, Knobs: []Knob{{Name: "ITEMS", Value: 1}, {Name: "CONTIG", Value: 1}}}
	if g := p.Emit.TotalGroups(); ceilDiv(tiles, g*local)*p.ChunkRows > loopCap(caps) {
		// a folded grid's work-items take several tiles: shorter chunks
		p.ChunkRows = max(loopCap(caps)/ceilDiv(tiles, g*local), 1)
		p.Chunks = ceilDiv(n, p.ChunkRows)
		p.Emit.Tiles, p.Emit.TileElems = p.Chunks*k, p.ChunkRows
		p.Emit.Groups = FoldGroups(ceilDiv(p.Emit.Tiles, local), caps.MaxWorkGroupCount)
	}
	// the found rows (a record of K per row, by sorted position and by
	// row), the rows' ranks and the tiles' counts
	p.WorkspaceBytes = 2*n*k*4 + n*4 + (p.Chunks*k+1)*8
	p.Plan.Kernel = "indice_search"
	if (split == SplitAuto || split == SplitLL) && lines > 0 && lines < IndiceGridMax && lines <= n*k {
		// the line table: the records in row order (no gather), the
		// table, the tiles' counts; the search runs the count's tiles
		p.Lines, p.Search = lines, "line table"
		p.WorkspaceBytes = n*k*4 + (lines+1)*4 + (p.Chunks*k+1)*8
		// PoCL: one work-item per group (its work-group vectorizer runs
		// the items' divergent searches in lock step: 2x slower)
		local := int64(p.Emit.LocalSize)
		if caps.Backend == OpenCL {
			local = 1
		}
		p.Plan = Plan{Kernel: "indice_tsearch", LocalSize: int(local),
			Groups: FoldGroups(ceilDiv(p.Chunks, local), caps.MaxWorkGroupCount),
			Tiles:  p.Chunks, TileElems: p.ChunkRows, Knobs: p.Emit.Knobs}
		p.Reason += fmt.Sprintf(", line table of %d lines", lines)
	}
	return p
}

// PlanIndiceConv plans a regular or transposed conv over n sites with
// kernel ksize: shape forces a layout, ShapeAuto takes rows on CPU drivers
// and candidates elsewhere. Rows needs a kernel volume of at most
// IndiceCursors and sizes of at most IndiceKD per dim (else it plans
// candidates). In the rows shape the count and emit passes split chunks
// of ChunkRows rows x the offsets by the split policy; a row costs a test
// per kernel index of each dim and a step per valid candidate (at most
// K), so one chunk stays under the loop limit. The targets are numbered
// through a dense grid of flags over the target space of space keys where
// it holds at most IndiceGridMax keys and no more than the n x K
// candidates (whose flags the candidates shape scans anyway); else they
// are sorted.
func PlanIndiceConv(caps Caps, n int64, ksize []int64, space int64, split IndiceSplit, shape IndiceShape) IndicePlan {
	k, ks := int64(1), int64(0)
	fits := true
	for _, v := range ksize {
		k *= v
		ks += v
		fits = fits && v <= IndiceKD
	}
	// The rows layout gives a unit of work every offset of its rows; a
	// policy that splits the offsets (LK, KL, KK) makes each unit walk its
	// rows once per offset it owns. Measured on PoCL (conv149100): KL 93 ->
	// 281 ms and KK 100 -> 357 ms in rows against candidates, so only LL
	// (auto's choice) takes rows unless the shape is forced.
	if shape == ShapeAuto && (caps.Type != TypeCPU || (split != SplitAuto && split != SplitLL)) {
		shape = ShapeCandidates
	}
	if shape == ShapeCandidates || !fits || k > IndiceCursors {
		return PlanIndicePairs(caps, n, k, false, n, split)
	}
	n, k = max(n, 1), max(k, 1)
	perRow := 10 + 2*ks + 2*k
	lc := loopCap(caps)
	chunk := max(min(n, 512, (lc-140-4*k)/perRow), 1)
	chunks := ceilDiv(n, chunk)
	p := planIndice(caps, chunks, k, chunk*perRow, 2, split)
	p.Shape, p.Search = ShapeRows, "sort+unique"
	p.ChunkRows, p.Chunks = chunk, chunks
	p.Reason += fmt.Sprintf(", conv rows: %d chunks of %d rows", chunks, chunk)
	p.Plan.Kernel = "indice_crows"
	// the counts (scanned in place); the targets' keys and rows are the
	// output's (2 words a pair)
	p.WorkspaceBytes = (chunks*k + 1) * 8
	if space > 0 && space <= IndiceGridMax && space <= n*k {
		p.Grid, p.Search = space, "dense grid"
		p.WorkspaceBytes += (space + 1) * 4
		p.Reason += fmt.Sprintf(", dense grid of %d keys", space)
	}
	return p
}

// IndiceSubmSym says whether a submanifold kernel is symmetric (every size
// odd): offsets k and K-1-k then give mirrored pairs.
func IndiceSubmSym(ksize []int64) bool {
	for _, v := range ksize {
		if v%2 == 0 {
			return false
		}
	}
	return true
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
