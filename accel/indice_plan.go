package accel

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// IndiceSplit is how get_indice_pairs' candidate expansion (rows x kernel
// offsets) is split over the device, modeled on the mlu-ops design: what
// the jobs (work-groups) split, then what the cores of a job (its
// work-items) split. Every policy gives the same bytes. A forced policy's
// value is the kernels' code (IP_SPLIT_*); SplitAuto, the zero value, lets
// the planner choose for the device.
type IndiceSplit int

// The split policies of get_indice_pairs.
const (
	SplitAuto IndiceSplit = 0                 // the planner's choice for the device class
	SplitLL   IndiceSplit = kernels.IpSplitLl // jobs and cores split the rows; each core takes every offset of its rows
	SplitLK   IndiceSplit = kernels.IpSplitLk // jobs split the rows, cores the offsets
	SplitKL   IndiceSplit = kernels.IpSplitKl // jobs split the offsets, cores the rows
	SplitKK   IndiceSplit = kernels.IpSplitKk // jobs and cores split the offsets; each core walks every row
)

// IndiceSplits lists the forced policies, in order.
var IndiceSplits = []IndiceSplit{SplitLL, SplitLK, SplitKL, SplitKK}

var splitNames = map[IndiceSplit]string{SplitAuto: "auto", SplitLL: "LL", SplitLK: "LK", SplitKL: "KL", SplitKK: "KK"}

// String returns the policy's name: auto, LL, LK, KL or KK.
func (s IndiceSplit) String() string {
	if n, ok := splitNames[s]; ok {
		return n
	}
	return fmt.Sprintf("IndiceSplit(%d)", int(s))
}

// ParseIndiceSplit parses a policy name (auto, LL, LK, KL, KK; any case;
// empty is auto).
func ParseIndiceSplit(s string) (IndiceSplit, error) {
	if s == "" || strings.EqualFold(s, "auto") {
		return SplitAuto, nil
	}
	for _, sp := range IndiceSplits {
		if strings.EqualFold(s, sp.String()) {
			return sp, nil
		}
	}
	return SplitAuto, fmt.Errorf("split %q: must be one of auto, LL, LK, KL, KK: %w", s, ErrInvalidArgument)
}

// valid says whether s is a policy.
func (s IndiceSplit) valid() bool { _, ok := splitNames[s]; return ok }

// indiceShape is how get_indice_pairs lays out a submanifold conv's work.
type indiceShape int

// The shapes.
const (
	// shapeAuto: rows on CPU drivers, candidates on GPUs.
	shapeAuto indiceShape = iota
	// shapeCandidates (GPU-shaped): one flag per candidate (row x
	// offset), scanned over all of them, and one work-item per candidate
	// in the pairs' write; the sites are walked in key order with a
	// galloping cursor per offset.
	shapeCandidates
	// shapeRows (CPU-shaped): each work-item walks a contiguous run of
	// sites in key order with a merge cursor per kernel plane (the
	// offsets that differ only in the last dim are consecutive keys: one
	// search, then steps) and stores each row's found rows as one record;
	// then each work-item counts, and after a scan of the K x chunks
	// counts writes, one offset's pairs over a contiguous chunk of rows
	// (streaming stores).
	shapeRows
)

var shapeNames = []string{"auto", "candidates", "rows"}

// String returns the shape's name.
func (s indiceShape) String() string {
	if s >= 0 && int(s) < len(shapeNames) {
		return shapeNames[s]
	}
	return fmt.Sprintf("IndiceShape(%d)", int(s))
}

// indiceCursors is IP_CURSORS of indice_body.h: the offsets (or planes)
// one core keeps search cursors for.
const indiceCursors = 128

// indiceGridMax is the most keys of a dense grid over the target space: a
// candidate's target key is an int32 (512 MiB of bits and as many of the
// words' rows at most; a plan takes the grid only where its words are no
// more than the candidates, denseGridFits).
const indiceGridMax = 1<<31 - 1

// indiceLinesMax is the most lines of a submanifold conv's line table
// (64 MiB of first positions).
const indiceLinesMax = 16 << 20

// denseGridFits says whether a target space of space keys goes through
// the dense grid (a bit a key) for n x k candidates: at most
// indiceGridMax keys, and no more of its 32-bit words than the candidates,
// whose sort the grid replaces (its words are filled, scanned and read
// twice; the sort moves each candidate with a target through several
// passes).
func denseGridFits(space, n, k int64) bool {
	return space > 0 && space <= indiceGridMax && gridWords(space) <= n*k
}

// denseGridBytes is the workspace of a dense grid over space keys: its
// bits and its words' rows, one word more each.
func denseGridBytes(space int64) int64 { return 8 * (gridWords(space) + 1) }

// indiceKD is IP_KD of indice_body.h: the largest kernel size per dim of
// the regular and transposed convs' rows shape.
const indiceKD = 16

// indicePlan is the plan of get_indice_pairs' expansion pass, as data.
type indicePlan struct {
	Path  indicePath  `json:"path"`  // planIndice's; the others leave it 0
	Shape indiceShape `json:"shape"` // never shapeAuto
	Split IndiceSplit `json:"split"` // never SplitAuto
	Jobs  int64       `json:"jobs"`  // work-groups that take work
	Cores int64       `json:"cores"` // work-items per work-group
	// RowsPerCore and OffsetsPerCore bound one core's share of a launch:
	// it walks at most RowsPerCore rows and, for each, OffsetsPerCore
	// offsets (its chunk: their product candidates).
	RowsPerCore    int64 `json:"rows_per_core"`
	OffsetsPerCore int64 `json:"offsets_per_core"`
	// Rows is the rows one launch covers, Repeats the launches: a core's
	// loops stay under half the driver's loop limit (host.Caps.LoopLimit).
	Rows    int64 `json:"rows"`
	Repeats int64 `json:"repeats"`
	// Search is how targets become output rows: "sort+unique" (regular
	// and transposed conv: the candidates' target keys radix-sorted and
	// numbered by run), "dense grid" (a target space of no more 32-bit
	// words than candidates: a bit per key, the words' bits scanned), "sort+search" (submanifold and inverse: a binary
	// search among the sorted keys of the sites), "hash table" (a
	// submanifold conv on the GPUs' candidates: probes of the sites' hash
	// table, Table), "sort+merge" (a
	// submanifold conv in rows walking the sites in key order, galloping
	// from a cursor per kernel plane) or "line table" (a submanifold conv
	// in rows looking each plane's target line up in a table of the lines'
	// first sorted sites). Never a grid over the output space.
	Search string `json:"search"`
	// WorkspaceBytes is the expansion's own workspace: the candidates'
	// flags (scanned in place into positions) and, for looked-up rules,
	// their found rows; O(rows x offsets), never the output grid.
	WorkspaceBytes int64     `json:"workspace_bytes"`
	Plan           host.Plan `json:"plan"` // the expand launch (Groups >= Jobs)
	// shapeRows: the count and emit passes' tiles, (chunk of ChunkRows
	// rows, offset), Chunks chunks, and their launch (a tile per
	// work-item).
	ChunkRows int64     `json:"chunk_rows,omitempty"`
	Chunks    int64     `json:"chunks,omitempty"`
	Emit      host.Plan `json:"emit,omitempty"`
	// Grid (regular and transposed convs in rows): the keys of the
	// target space when they are numbered through a dense grid (a bit a
	// key, the words' set bits scanned) instead of sorted; 0 otherwise.
	Grid int64 `json:"grid,omitempty"`
	// Lines (submanifold convs in rows): the lines of the site grid (the
	// batch times every spatial size but the last) when the targets are
	// looked up through a table of each line's first sorted site
	// (indice_lines, indice_tsearch) instead of merge cursors; 0
	// otherwise.
	Lines int64 `json:"lines,omitempty"`
	// Table is the input sites' hash table, where the GPUs' candidates
	// paths keep the sites (planSitesTable); its zero value sorts them.
	Table  sitesTable `json:"table,omitempty"`
	Reason string     `json:"reason"`
}

// sitesTable is the plan of get_indice_pairs' hash table of the input
// sites (indice_body.h's indice_table and ip_table_find): each site's key
// and row in one 64-bit word of a table with open addressing and linear
// probing. It replaces the sites' radix sort (a dozen launches on a GPU),
// the check of sorted neighbours for duplicate sites, and the looked-up
// rules' binary search among the sorted keys (a dependent load per step,
// 18 steps for 250k sites) with one insert pass and a probe or two per
// lookup.
type sitesTable struct {
	// Slots is the table's 64-bit words, a power of two of at least 4x
	// the sites; 0: the sites are sorted instead.
	Slots int64 `json:"slots"`
	// RowBits is the bits of a row below the key in a word: the bits of
	// the site count, so no word is all ones (a free slot).
	RowBits int64 `json:"row_bits"`
	// Probes is the most slots a site is placed past its home, so a
	// lookup loads at most Probes+1. A site that finds none free flags the
	// table, and the op sorts its sites instead.
	Probes int64 `json:"probes"`
}

// sitesTableProbes is sitesTable.Probes: at a load of at most 1/4 the
// longest displacement of linear probing grows as ln(n)/0.64 (about 20 for
// 250k sites, 26 for 16M); past 64 a set of random keys fails with odds
// below 2^-50 a key, so only a crafted input sorts its sites.
const sitesTableProbes = 64

// sitesTableMaxProbes bounds sitesTable.Probes as ACCEL_KNOBS may set it,
// so a work-item's insert loops stay well under a driver's loop limit.
const sitesTableMaxProbes = 1024

// steps is the loop iterations of one lookup in the table.
func (t sitesTable) steps() int64 { return t.Probes + 2 }

// planSitesTable plans the hash table of l input sites of keys below
// 2^inBits for path, where the device has 64-bit compare-and-swap and a
// key and a row fit one word: on GPUs for every path but a submanifold
// conv in rows (whose merge walks the sites sorted): a submanifold conv's
// lookups on candidates, a regular or transposed conv's duplicate check;
// and on every device for an inverse conv (its lookups too: on the 2-core
// VM, conv149100's inverse took 97-155 ms with the table against 127-180
// sorted on PoCL, 199-250 against 268-293 on lavapipe). A regular conv in
// rows, the CPU drivers' layout, gained nothing measurable there (its
// sites' sort is a small part), so it keeps them sorted. force takes the
// table on any device class ($ACCEL_KNOBS' indice_plan:TABLE=1). Its zero
// value sorts the sites.
func planSitesTable(caps host.Caps, path indicePath, l int64, inBits int, force bool) sitesTable {
	if path == pathSubmRows {
		return sitesTable{}
	}
	cpu := caps.Type == host.TypeCPU && path != pathInverse
	if !force && cpu || l < 1 || !caps.Int64 || !caps.Int64Atomics {
		return sitesTable{}
	}
	rb := int64(bits.Len64(uint64(l)))
	if int64(inBits)+rb > 64 {
		return sitesTable{}
	}
	slots := int64(64)
	for slots < 4*l {
		slots *= 2
	}
	if caps.MaxAllocBytes > 0 && 8*slots > caps.MaxAllocBytes {
		return sitesTable{}
	}
	return sitesTable{Slots: slots, RowBits: rb, Probes: sitesTableProbes}
}

// withSitesTable is p with the sites' table t (its zero value: sorted
// sites) in place of p's: a submanifold conv on candidates plans its
// lookups' launches with t's probes or a binary search's steps, and the
// workspace counts the table.
func withSitesTable(caps host.Caps, g convGeom, split IndiceSplit, p indicePlan, t sitesTable) indicePlan {
	if t == p.Table {
		return p
	}
	if p.Path == pathSubmLookup {
		steps, search := searchSteps(g.l), "sort+search"
		if t.Slots > 0 {
			steps, search = t.steps(), "hash table"
		}
		q := planIndicePairs(caps, g.l, g.k, steps, split)
		q.Path, q.Search = p.Path, search
		q.Reason += ", subm"
		p = q
	}
	p.WorkspaceBytes += 8 * (t.Slots - p.Table.Slots)
	p.Table = t
	return p
}

// String prints the plan on one line.
func (p indicePlan) String() string {
	emit := ""
	if p.Shape == shapeRows {
		emit = fmt.Sprintf(" emit=%dx%d rows", p.Chunks, p.ChunkRows)
	}
	if p.Table.Slots > 0 {
		emit += fmt.Sprintf(" sites=table of %d slots, %d probes", p.Table.Slots, p.Table.Probes)
	}
	return fmt.Sprintf("indice_pairs: path=%s shape=%s split=%s jobs=%d cores=%d chunk=%dx%d rows/launch=%d repeats=%d search=%s%s workspace=%dB (%s)",
		p.Path, p.Shape, p.Split, p.Jobs, p.Cores, p.RowsPerCore, p.OffsetsPerCore, p.Rows, p.Repeats, p.Search, emit, p.WorkspaceBytes, p.Reason)
}

// indicePath is the pass graph get_indice_pairs runs (planIndice).
type indicePath int

// The paths.
const (
	// pathSubmRows: a submanifold conv in rows (shapeRows): sites walked
	// in key order with merge cursors per kernel plane or a line table,
	// then counted and emitted per chunk and offset.
	pathSubmRows indicePath = iota + 1
	// pathSubmLookup: a submanifold conv on candidates (shapeCandidates):
	// each (row, offset) looks its target up among the sorted sites.
	pathSubmLookup
	// pathConvRows: a regular or transposed conv in rows: the targets
	// counted per chunk and offset, emitted with their input rows, then
	// numbered through a dense grid or sorted.
	pathConvRows
	// pathConvCandidates: a regular or transposed conv on candidates: a
	// flag per (row, offset) scanned into positions, the targets sorted
	// and numbered by run, the pairs written per candidate.
	pathConvCandidates
	// pathInverse: the forward conv's outputs found as pathConvCandidates
	// does, then each one's inputs looked up among the sorted sites.
	pathInverse
)

var indicePathNames = map[indicePath]string{pathSubmRows: "subm-rows", pathSubmLookup: "subm-lookup",
	pathConvRows: "conv-rows", pathConvCandidates: "conv-candidates", pathInverse: "inverse"}

func (p indicePath) String() string {
	if n, ok := indicePathNames[p]; ok {
		return n
	}
	return fmt.Sprintf("indicePath(%d)", int(p))
}

// planIndice plans get_indice_pairs for g on a device of caps: the path
// from the conv's kind and the layout (shape: shapeAuto, or a layout a
// test forces), and that path's expansion, with the sites in a hash table
// where planSitesTable takes one. noGrid keeps a conv in rows off the
// dense grid and a submanifold one off the line table.
func planIndice(caps host.Caps, g convGeom, split IndiceSplit, shape indiceShape, noGrid bool) indicePlan {
	p := planIndicePath(caps, g, split, shape, noGrid)
	return withSitesTable(caps, g, split, p, planSitesTable(caps, p.Path, g.l, g.inBits, false))
}

// planIndicePath is planIndice's path and expansion, the sites sorted.
func planIndicePath(caps host.Caps, g convGeom, split IndiceSplit, shape indiceShape, noGrid bool) indicePlan {
	switch {
	case g.p.Subm:
		// the lines of the site grid, for a table of each line's first
		// sorted site
		lines, _ := keySpace(g.p.BatchSize, g.p.SpatialShape[:g.d-1])
		if noGrid {
			lines = 0
		}
		p := planIndiceSubm(caps, g.l, g.p.KSize, split, shape, lines)
		p.Path = pathSubmLookup
		if p.Shape == shapeRows {
			p.Path = pathSubmRows
		}
		return p
	case g.p.Inverse:
		p := planIndicePairs(caps, g.l, g.k, 0, split)
		p.Path = pathInverse
		// the forward's outputs through the dense grid where its target
		// space is small enough (as a regular conv's on candidates)
		if space, _ := keySpace(g.p.BatchSize, g.target); !noGrid && denseGridFits(space, g.l, g.k) {
			p.Grid, p.Search = space, "dense grid+search"
			p.WorkspaceBytes = 4*g.l*g.k + denseGridBytes(space)
			p.Reason += fmt.Sprintf(", the forward's outputs through a dense grid of %d keys", space)
		}
		return p
	}
	space, _ := keySpace(g.p.BatchSize, g.target)
	if noGrid {
		space = 0
	}
	p := planIndiceConv(caps, g.l, g.p.KSize, space, split, shape)
	p.Path = pathConvCandidates
	if p.Shape == shapeRows {
		p.Path = pathConvRows
	}
	return p
}

// planIndicePairs plans the expansion of n rows x k kernel offsets. search
// is the loop iterations of one candidate's lookup where the rule looks
// targets up (searchSteps among sorted site keys, sitesTable.steps in the
// sites' hash table), 0 where it does not. split forces a policy;
// SplitAuto picks LL, the measured fastest on the CPU drivers
// (docs/indice_pairs.md), and the natural one on GPUs (one row per
// work-item, its offsets in registers).
//
// Cores: 8 work-items per group on CPU drivers (one SIMD vector), 64 on
// GPUs. Jobs: LL and LK give each job a share of the rows (on CPUs 16 jobs
// per compute unit, on GPUs one row per core); KL gives each job one
// offset; KK spreads the offsets over jobs x cores. Under a loop limit a
// core's iterations (one per row, one per candidate plus its index math
// and binary search steps) stay under half the limit by cutting the rows
// into launches (Repeats).
func planIndicePairs(caps host.Caps, n, k, search int64, split IndiceSplit) indicePlan {
	n, k = max(n, 1), max(k, 1)
	lookup := search > 0
	// Loop iterations: per row 1 + 4 (its coordinates), per candidate 1 +
	// 8 (offset and rule loops over up to 4 dims) + the search.
	p := splitIndice(caps, max(n, 1), max(k, 1), 0, 9+search, split)
	p.Shape, p.Search = shapeCandidates, "sort+unique"
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

// searchSteps is the loop iterations of one lookup among nkeys sorted
// site keys: a binary search, or a gallop and a binary search.
func searchSteps(nkeys int64) int64 { return 2*int64(bits.Len64(uint64(max(nkeys, 1)))) + 2 }

// splitIndice is the expansion's split of n rows (or chunks of rows) x k
// offsets (or planes) whose rows cost perRow loop iterations and
// candidates perCand each.
func splitIndice(caps host.Caps, n, k, perRow, perCand int64, split IndiceSplit) indicePlan {
	p := indicePlan{Split: split}
	if p.Split == SplitAuto {
		p.Split = SplitLL
	}
	n, k = max(n, 1), max(k, 1)
	cpu := caps.Type == host.TypeCPU
	local := 64
	if cpu {
		local = 8
	}
	local = host.Pow2Local(caps, local, 0)
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
	// the groups a folded grid can hold (host.FoldGroups), saturating at 2^40
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
	lc := host.LoopCap(caps)
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
	p.Plan = host.Plan{Kernel: "indice_expand", LocalSize: int(c), Groups: host.FoldGroups(jobs, caps.MaxWorkGroupCount),
		Tiles: jobs * c, TileElems: p.RowsPerCore * p.OffsetsPerCore,
		Knobs: []host.Knob{host.KnobItems.Set(1), host.KnobContig.Set(1)}}
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

// planIndiceSubm plans a submanifold conv over n sites with kernel ksize:
// shape forces a layout, shapeAuto takes rows on CPU drivers (long
// sequential runs per work-item) and candidates elsewhere (see
// indiceShape). Rows needs at most indiceCursors kernel planes per core
// (else it plans candidates). In the rows shape the expansion splits n
// rows x prod(ksize[:D-1]) planes by the split policy; each plane costs a
// gallop and ksize[D-1] steps. lines is the number of lines of the site
// grid (the batch times every spatial size but the last; 0: none): where
// the split is LL (or auto) and the table of lines+1 words holds at most
// indiceLinesMax words and no more than the n x K records, the rows shape
// looks the targets up through a line table instead (Lines), writing the
// records in row order: no -1 fill, no rank scatter, no gather. Measured
// on PoCL for subm248636 (kernel times, three alternating runs): the merge
// search, its fill and its gather 41-53 ms, the table, its search and the
// count 36-38 ms; on lavapipe the whole subm kernels 160 -> 99 ms (best
// of four).
func planIndiceSubm(caps host.Caps, n int64, ksize []int64, split IndiceSplit, shape indiceShape, lines int64) indicePlan {
	k := int64(1)
	for _, v := range ksize {
		k *= v
	}
	kl := int64(1)
	if len(ksize) > 0 {
		kl = ksize[len(ksize)-1]
	}
	if shape == shapeAuto && caps.Type != host.TypeCPU {
		shape = shapeCandidates
	}
	n, k = max(n, 1), max(k, 1)
	log := int64(bits.Len64(uint64(n)))
	planes := k / max(kl, 1)
	sym := indiceSubmSym(ksize)
	searched := planes
	if sym {
		searched = (planes + 1) / 2
	}
	// per plane: its dims (4), a gallop to the first target, then a
	// step or two per offset
	p := splitIndice(caps, n, searched, 0, 9+2*log+2+4*kl, split)
	if shape == shapeCandidates || p.OffsetsPerCore > indiceCursors || k > indiceCursors {
		p = planIndicePairs(caps, n, k, searchSteps(n), split)
		p.Reason += ", subm"
		return p
	}
	p.Shape, p.Search = shapeRows, "sort+merge"
	p.Reason += fmt.Sprintf(", subm rows: %d of %d planes x %d offsets", searched, planes, kl)
	// the count and emit tiles: a chunk of rows x one offset each
	local := int64(host.Pow2Local(caps, 64, 0))
	if caps.Type == host.TypeCPU {
		local = int64(host.Pow2Local(caps, 8, 0))
	}
	p.ChunkRows = max(min(n, 1024, host.LoopCap(caps)/(2*k+4)), 1)
	p.Chunks = ceilDiv(n, p.ChunkRows)
	tiles := p.Chunks * k
	p.Emit = host.Plan{Kernel: "indice_emit", LocalSize: int(local), Groups: host.FoldGroups(ceilDiv(tiles, local), caps.MaxWorkGroupCount),
		Tiles: tiles, TileElems: p.ChunkRows, Knobs: []host.Knob{host.KnobItems.Set(1), host.KnobContig.Set(1)}}
	if g := p.Emit.TotalGroups(); ceilDiv(tiles, g*local)*p.ChunkRows > host.LoopCap(caps) {
		// a folded grid's work-items take several tiles: shorter chunks
		p.ChunkRows = max(host.LoopCap(caps)/ceilDiv(tiles, g*local), 1)
		p.Chunks = ceilDiv(n, p.ChunkRows)
		p.Emit.Tiles, p.Emit.TileElems = p.Chunks*k, p.ChunkRows
		p.Emit.Groups = host.FoldGroups(ceilDiv(p.Emit.Tiles, local), caps.MaxWorkGroupCount)
	}
	// the found rows (a record of K per row, by sorted position and by
	// row), the rows' ranks and the tiles' counts
	p.WorkspaceBytes = 2*n*k*4 + n*4 + (p.Chunks*k+1)*8
	p.Plan.Kernel = "indice_search"
	if (split == SplitAuto || split == SplitLL) && lines > 0 && lines < indiceLinesMax && lines <= n*k {
		// the line table: the records in row order (no gather), the
		// table, the tiles' counts; the search runs the count's tiles
		p.Lines, p.Search = lines, "line table"
		p.WorkspaceBytes = n*k*4 + (lines+1)*4 + (p.Chunks*k+1)*8
		// PoCL: one work-item per group (its work-group vectorizer runs
		// the items' divergent searches in lock step: 2x slower)
		local := int64(p.Emit.LocalSize)
		if caps.Backend == host.OpenCL {
			local = 1
		}
		p.Plan = host.Plan{Kernel: "indice_tsearch", LocalSize: int(local),
			Groups: host.FoldGroups(ceilDiv(p.Chunks, local), caps.MaxWorkGroupCount),
			Tiles:  p.Chunks, TileElems: p.ChunkRows, Knobs: p.Emit.Knobs}
		p.Reason += fmt.Sprintf(", line table of %d lines", lines)
	}
	return p
}

// planIndiceConv plans a regular or transposed conv over n sites with
// kernel ksize: shape forces a layout, shapeAuto takes rows on CPU drivers
// and candidates elsewhere. Rows needs a kernel volume of at most
// indiceCursors and sizes of at most indiceKD per dim (else it plans
// candidates). In the rows shape the count and emit passes split chunks
// of ChunkRows rows x the offsets by the split policy; a row costs a test
// per kernel index of each dim and a step per valid candidate (at most
// K), so one chunk stays under the loop limit. The targets are numbered
// through a dense grid over the target space of space keys (a bit a key,
// the words' set bits scanned) where denseGridFits; else they are sorted.
// On candidates through the grid the expansion writes each candidate's
// target key and marks it in the grid, and the pairs are written by tiles
// of an offset's rows (ipRun.convGrid).
func planIndiceConv(caps host.Caps, n int64, ksize []int64, space int64, split IndiceSplit, shape indiceShape) indicePlan {
	k, ks := int64(1), int64(0)
	fits := true
	for _, v := range ksize {
		k *= v
		ks += v
		fits = fits && v <= indiceKD
	}
	// The rows layout gives a unit of work every offset of its rows; a
	// policy that splits the offsets (LK, KL, KK) makes each unit walk its
	// rows once per offset it owns. Measured on PoCL (conv149100): KL 93 ->
	// 281 ms and KK 100 -> 357 ms in rows against candidates, so only LL
	// (auto's choice) takes rows unless the shape is forced.
	if shape == shapeAuto && (caps.Type != host.TypeCPU || (split != SplitAuto && split != SplitLL)) {
		shape = shapeCandidates
	}
	grid := denseGridFits(space, n, k)
	if shape == shapeCandidates || !fits || k > indiceCursors {
		p := planIndicePairs(caps, n, k, 0, split)
		if grid {
			// the candidates' target keys, the grid and the tiles'
			// counts; no flags, positions or sort
			p.Grid, p.Search = space, "dense grid"
			p.WorkspaceBytes = 4*n*k + denseGridBytes(space) + (ceilDiv(max(n, 1), host.PlanElementwise("indice", caps, n*k).TileElems)*k+1)*8
			p.Reason += fmt.Sprintf(", dense grid of %d keys, the pairs by tiles", space)
		}
		return p
	}
	n, k = max(n, 1), max(k, 1)
	perRow := 10 + 2*ks + 2*k
	lc := host.LoopCap(caps)
	chunk := max(min(n, 512, (lc-140-4*k)/perRow), 1)
	chunks := ceilDiv(n, chunk)
	p := splitIndice(caps, chunks, k, chunk*perRow, 2, split)
	p.Shape, p.Search = shapeRows, "sort+unique"
	p.ChunkRows, p.Chunks = chunk, chunks
	p.Reason += fmt.Sprintf(", conv rows: %d chunks of %d rows", chunks, chunk)
	p.Plan.Kernel = "indice_crows"
	// the counts (scanned in place); the targets' keys and rows are the
	// output's (2 words a pair)
	p.WorkspaceBytes = (chunks*k + 1) * 8
	if grid {
		p.Grid, p.Search = space, "dense grid"
		p.WorkspaceBytes += denseGridBytes(space)
		p.Reason += fmt.Sprintf(", dense grid of %d keys", space)
	}
	return p
}

// tunedIndice is p with $ACCEL_KNOBS's "indice_plan" overrides, for a GPU
// run's A/B. On a regular or transposed conv on candidates, or an inverse
// conv's forward part, with a target space of space keys (0: none, or
// the grid kept off): GRID=0 sorts the targets where the planner takes the
// dense grid, GRID=1 takes the grid for any target space of at most
// indiceGridMax keys. On the paths that may keep the sites in a hash
// table (planSitesTable): TABLE=0 sorts them, TABLE=1 takes the table on
// any device class, PROBES=n places a site at most n slots past its home
// (at most sitesTableMaxProbes; a test of the sort the op falls back to).
func (d *Device) tunedIndice(p indicePlan, g convGeom, split IndiceSplit, space int64) indicePlan {
	ks, ok := d.knobs["indice_plan"]
	if !ok {
		return p
	}
	conv := p.Path == pathConvCandidates || p.Path == pathInverse
	t := p.Table
	for _, k := range ks {
		switch {
		case k.Name == "GRID" && conv && space > 0 && k.Value == 0:
			p.Grid, p.Search = 0, "sort+unique"
		case k.Name == "GRID" && conv && space > 0 && space <= indiceGridMax:
			p.Grid, p.Search = space, "dense grid"
		case k.Name == "TABLE" && k.Value == 0:
			t = sitesTable{}
		case k.Name == "TABLE":
			t = planSitesTable(d.caps, p.Path, g.l, g.inBits, true)
		}
	}
	for _, k := range ks {
		if k.Name == "PROBES" && t.Slots > 0 {
			t.Probes = min(max(k.Value, 0), sitesTableMaxProbes)
		}
	}
	if t != p.Table {
		p = withSitesTable(d.caps, g, split, p, t)
	}
	p.Reason += " [ACCEL_KNOBS]"
	return p
}

// indiceSubmSym says whether a submanifold kernel is symmetric (every size
// odd): offsets k and K-1-k then give mirrored pairs.
func indiceSubmSym(ksize []int64) bool {
	for _, v := range ksize {
		if v%2 == 0 {
			return false
		}
	}
	return true
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
