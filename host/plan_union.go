package host

import (
	"fmt"
	"math/bits"
)

// UnionBuckets is the CPU-shaped union of two COO operands that are not
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
const UnionBuckets = "buckets"

// UnionPlan is how a binary op on two COO operands unites them: Strategy
// UnionBuckets with its buckets and chunks, or "" (the per-operand
// coalescing, PlanCoalesce, and the merge, PlanSparse).
type UnionPlan struct {
	Strategy   string `json:"strategy"`
	BucketBits int    `json:"bucket_bits"` // buckets of the tagged keys' high bits
	Chunk      int64  `json:"chunk"`       // entries per partition work-item
	Reason     string `json:"reason"`
}

// unionMaxBucketBits bounds the buckets (each chunk keeps a counter per
// bucket): with records of 32 low bits, keys of up to 43 bits.
const unionMaxBucketBits = 12

// PlanUnion plans the union of two COO operands of n entries in all,
// whose keys have keyBits significant bits: UnionBuckets on CPU drivers
// without a loop limit (for n below 2^31 and keys of at most 43 bits),
// with buckets of about 32K records (256 KiB: a core's cache sorts one)
// and chunks of 32K entries (their indices and values stay in cache
// between the chunk's two walks); elsewhere "".
func PlanUnion(caps Caps, n int64, keyBits int) UnionPlan {
	if caps.Type != TypeCPU || caps.LoopLimit > 0 || n >= 1<<31 || keyBits+1 > 32+unionMaxBucketBits {
		return UnionPlan{Reason: "per-operand coalescing and the merge"}
	}
	bb := bits.Len64(uint64(n / (32 << 10)))
	chunk := int64(32 << 10)
	if per := (n + 8*int64(max(caps.ComputeUnits, 1)) - 1) / (8 * int64(max(caps.ComputeUnits, 1))); per < chunk {
		chunk = max(per, 1024) // small inputs: several chunks per core
	}
	return PlanUnionBuckets(n, keyBits, bb, chunk)
}

// PlanUnionBuckets is UnionBuckets with 2^bucketBits buckets (raised to
// what 32-bit records need; lowered to at most 2^12, and so that a bucket
// holds both tags of a key) and chunks of chunk entries, or no strategy
// where the keys are too wide for it.
func PlanUnionBuckets(n int64, keyBits, bucketBits int, chunk int64) UnionPlan {
	kb := keyBits + 1
	bb := min(max(bucketBits, kb-32, 0), kb-1, unionMaxBucketBits)
	if kb-bb > 32 {
		return UnionPlan{Reason: "keys too wide for 32-bit records"}
	}
	chunk = max(chunk, 1)
	chunks := max((n+chunk-1)/chunk, 1)
	return UnionPlan{Strategy: UnionBuckets, BucketBits: bb, Chunk: chunk,
		Reason: fmt.Sprintf("cpu: %d chunks of %d entries into %d buckets, each sorted in cache", chunks, chunk, 1<<bb)}
}
