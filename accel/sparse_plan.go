package accel

import (
	"fmt"
	"math/bits"

	"github.com/accelkern/accel/host"
)

// sparsePath is how a sparse elementwise op merges its operands
// (planSparse).
type sparsePath string

// The union paths of the sparse elementwise ops.
const (
	// sparseByRows is the CPU-shaped union: each work-item takes a chunk of
	// a sequence of the rows' markers and entries (long rows split, empty
	// rows cost a step) and merges row by row with two plain pointers,
	// reading the columns as they are stored (no keys).
	sparseByRows sparsePath = "rows"
	// sparseByMergePath is the GPU-shaped union: every entry gets its 64-bit
	// key, and short chunks of the merged keys find their splits by binary
	// search and walk in lock-step branch-free steps.
	sparseByMergePath sparsePath = "mergepath"
)

// coalescePath is how sparse COO keys are coalesced (planCoalesce).
type coalescePath string

// The coalescing paths.
const (
	// coalesceByBuckets counts the keys per bucket of their high bits
	// (atomics), scatters them into their buckets, sorts each bucket by
	// (key, input position) and sums each key's values in input order.
	coalesceByBuckets coalescePath = "buckets"
	// coalesceByRadix sorts the keys by a stable radix sort over their
	// significant bits and sums the runs by the in-order segmented sum.
	coalesceByRadix coalescePath = "radix"
)

// unionPath is how a binary op on two COO operands unites them
// (planUnion).
type unionPath string

// The COO union paths.
const (
	// unionByCoalescing coalesces each operand (planCoalesce) and merges
	// them (planSparse).
	unionByCoalescing unionPath = ""
)

// sparsePlan is how a sparse elementwise op merges its operands: the
// strategy and, for sparseByRows, the launch (one chunk of TileElems
// positions per work-item).
type sparsePlan struct {
	Strategy sparsePath `json:"strategy"`
	Plan     host.Plan  `json:"plan"`
	// OnePass (sparseByRows, CSR results without gradients): one merge pass
	// writes each chunk's entries into a scratch sized by its positions,
	// and a copy moves them to their place after the scan of the counts,
	// instead of a count pass and an emit pass that both merge.
	OnePass bool   `json:"one_pass,omitempty"`
	Reason  string `json:"reason"`
}

// planSparse plans the union of two sparse operands whose row-union
// sequence (rows' markers plus both operands' entries) has total
// positions: sparseByRows on CPU drivers (planSparseRows), whose cores run
// long plain loops over the columns as stored; sparseByMergePath on GPUs.
func planSparse(caps host.Caps, total int64) sparsePlan {
	if caps.Type != host.TypeCPU {
		return sparsePlan{Strategy: sparseByMergePath, Reason: fmt.Sprintf("gpu: keys merged in lock-step chunks of %d positions, a lane each", sparseChunk(caps))}
	}
	return planSparseRows(caps, total, 0)
}

// planSparseRows plans sparseByRows with chunks of chunk positions, or with
// chunk 0 of about total/(64 per compute unit) positions (at least 4096),
// so that rows of any length balance over the cores; under a loop limit
// at most 2048, well under it.
func planSparseRows(caps host.Caps, total, chunk int64) sparsePlan {
	cu := max(int64(caps.ComputeUnits), 1)
	local := 1
	reason := "chunks of rows and entries per work-item, plain merges"
	if chunk <= 0 {
		chunk = max((total+64*cu-1)/(64*cu), 4096)
		if caps.LoopLimit > 0 {
			chunk = min(2048, host.LoopCap(caps)/8)
		}
	}
	if caps.LoopLimit > 0 {
		local = host.Pow2Local(caps, 8, 0)
		reason += fmt.Sprintf("; loop limit %d: %d positions per invocation", caps.LoopLimit, chunk)
	}
	chunks := max((total+chunk-1)/chunk, 1)
	p := host.Plan{Kernel: "sparse_rows", LocalSize: local, Knobs: []host.Knob{host.KnobItems.Set(1), host.KnobContig.Set(1)},
		Tiles: chunks, TileElems: chunk, Reason: fmt.Sprintf("%s; %d chunks of %d", reason, chunks, chunk)}
	p.Groups = host.FoldGroups((chunks+int64(local)-1)/int64(local), caps.MaxWorkGroupCount)
	// A merge step costs a CPU core several cycles and the copy of an
	// entry a fraction of one: one merge and a copy beat two merges. Under
	// a loop limit (lavapipe's SIMD lanes) the two short walks stay.
	onePass := caps.LoopLimit <= 0
	if onePass {
		reason += "; one merge pass into a scratch, then a copy"
	}
	return sparsePlan{Strategy: sparseByRows, Plan: p, OnePass: onePass, Reason: reason}
}

// coalescePlan is how n sparse keys of keyBits significant bits are
// coalesced: the strategy and, for coalesceByBuckets, the bucket bits.
type coalescePlan struct {
	Strategy   coalescePath `json:"strategy"`
	BucketBits int          `json:"bucket_bits"`
	Reason     string       `json:"reason"`
}

// planCoalesce plans the coalescing of n keys of keyBits significant bits.
// CPU drivers without a loop limit take coalesceByBuckets (for n below
// 2^31): about 8 keys per bucket, so that one pass scatters the keys
// near their place and each core sorts short buckets in cache. Elsewhere
// (a GPU, a loop limit that a long bucket's sort could pass) the radix
// sort.
func planCoalesce(caps host.Caps, n int64, keyBits int) coalescePlan {
	if caps.Type != host.TypeCPU || caps.LoopLimit > 0 || n >= 1<<31 {
		return coalescePlan{Strategy: coalesceByRadix, Reason: "stable radix sort of the significant key bits"}
	}
	return planCoalesceBuckets(n, keyBits)
}

// planCoalesceBuckets is coalesceByBuckets with about 8 keys per bucket.
func planCoalesceBuckets(n int64, keyBits int) coalescePlan {
	b := min(max(bits.Len64(uint64(n/8)), 1), max(keyBits, 1))
	return coalescePlan{Strategy: coalesceByBuckets, BucketBits: b,
		Reason: fmt.Sprintf("cpu: %d buckets of the keys' high bits, each sorted in cache", 1<<b)}
}

// unionByBuckets is the CPU-shaped union of two COO operands that are not
// both coalesced (clkernels/common/sparse_body.h, sparse_upart ..
// sparse_uemit): chunks of the entries of x then y, each small enough to
// stay in cache between its two walks, count and place their records by
// bucket of their keys' high bits (a tag bit below the key puts x's
// entries before y's); each bucket is gathered chunk by chunk into a
// per-slot cache-sized area, sorted by sub-buckets of the next bits and
// reduced in one go (each operand's duplicates summed in input order, op
// applied), and a last pass writes the coordinates. It replaces the keys,
// a sortedness check, a coalescing of each operand and the merge: every
// entry's record is written once and read once.
const (
	unionByBuckets unionPath = "buckets"
)

// unionPlan is how a binary op on two COO operands unites them: Strategy
// unionByBuckets with its buckets and chunks, or "" (the per-operand
// coalescing, planCoalesce, and the merge, planSparse).
type unionPlan struct {
	Strategy   unionPath `json:"strategy"`
	BucketBits int       `json:"bucket_bits"` // buckets of the tagged keys' high bits
	Chunk      int64     `json:"chunk"`       // entries per partition work-item
	Reason     string    `json:"reason"`
}

// unionMaxBucketBits bounds the buckets (each chunk keeps a counter per
// bucket): with records of 32 low bits, keys of up to 43 bits.
const unionMaxBucketBits = 12

// planUnion plans the union of two COO operands of n entries in all,
// whose keys have keyBits significant bits: unionByBuckets on CPU drivers
// without a loop limit (for n below 2^31 and keys of at most 43 bits),
// with buckets of about 32K records (256 KiB: a core's cache sorts one)
// and chunks of 32K entries (their indices and values stay in cache
// between the chunk's two walks); elsewhere "".
func planUnion(caps host.Caps, n int64, keyBits int) unionPlan {
	if caps.Type != host.TypeCPU || caps.LoopLimit > 0 || n >= 1<<31 || keyBits+1 > 32+unionMaxBucketBits {
		return unionPlan{Reason: "per-operand coalescing and the merge"}
	}
	bb := bits.Len64(uint64(n / (32 << 10)))
	chunk := int64(32 << 10)
	if per := (n + 8*int64(max(caps.ComputeUnits, 1)) - 1) / (8 * int64(max(caps.ComputeUnits, 1))); per < chunk {
		chunk = max(per, 1024) // small inputs: several chunks per core
	}
	return planUnionBuckets(n, keyBits, bb, chunk)
}

// planUnionBuckets is unionByBuckets with 2^bucketBits buckets (raised to
// what 32-bit records need; lowered to at most 2^12, and so that a bucket
// holds both tags of a key) and chunks of chunk entries, or no strategy
// where the keys are too wide for it.
func planUnionBuckets(n int64, keyBits, bucketBits int, chunk int64) unionPlan {
	kb := keyBits + 1
	bb := min(max(bucketBits, kb-32, 0), kb-1, unionMaxBucketBits)
	if kb-bb > 32 {
		return unionPlan{Reason: "keys too wide for 32-bit records"}
	}
	chunk = max(chunk, 1)
	chunks := max((n+chunk-1)/chunk, 1)
	return unionPlan{Strategy: unionByBuckets, BucketBits: bb, Chunk: chunk,
		Reason: fmt.Sprintf("cpu: %d chunks of %d entries into %d buckets, each sorted in cache", chunks, chunk, 1<<bb)}
}

// String prints the strategy, its reason and its launch.
func (p sparsePlan) String() string {
	if p.Strategy == sparseByRows {
		return fmt.Sprintf("%s: %s; %s", p.Strategy, p.Reason, p.Plan)
	}
	return fmt.Sprintf("%s: %s", p.Strategy, p.Reason)
}

// String prints the strategy and its reason.
func (p coalescePlan) String() string { return fmt.Sprintf("%s: %s", p.Strategy, p.Reason) }

// String prints the strategy and its reason.
func (p unionPlan) String() string {
	if p.Strategy == unionByCoalescing {
		return "coalesce each operand, then merge: " + p.Reason
	}
	return fmt.Sprintf("%s: %s", p.Strategy, p.Reason)
}
