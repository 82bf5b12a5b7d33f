package kernels

import "github.com/accelkern/accel/host"

// Copy is a word copy and fill (copy_body.h): PoCL runs its own buffer
// copy on one thread, at about half of what the memory moves, so CPU
// OpenCL devices copy with this kernel instead (accel's planCopy); GPUs
// fill with it (NVIDIA's OpenCL fill moved 413 GB/s on the H100, its copy
// 2.97 TB/s: accel's planFill).
var Copy = (&host.FileDecl{
	Name: "copy",
	Variants: []host.Variant{
		variant("any"),
	},
	Doc: "a copy or fill of 32-bit words: interleaved tiles (GPUs) or contiguous chunks, one chunk per work-item at a time (CPU drivers)",
	Knobs: append(append([]host.KnobDecl(nil), tileKnobs...),
		host.KnobDecl{Name: "STREAM", Default: 0, Doc: "1: non-temporal stores from dst's first 64-byte boundary on (OpenCL C; copies larger than the caches)"}),
	Entries: []*host.EntryDecl{
		{Name: "words", Doc: "dst[dst_off + i] = src[src_off + i] for i in [0, n), in chunks of ITEMS words",
			Args: []host.ArgDecl{out("dst", "32-bit words"), in("src", "32-bit words"), i64("dst_off", "first word of dst"),
				i64("src_off", "first word of src"), i64("n", "words")}},
		{Name: "fill", Doc: "dst[w] = lo where w is even, hi where odd, for w in [dst_off, dst_off + n): a pattern of one 32-bit word (lo = hi) or two",
			Args: []host.ArgDecl{out("dst", "32-bit words"), i64("dst_off", "first word of dst"), i64("n", "words"),
				i64("lo", "the even words' value (its low 32 bits)"), i64("hi", "the odd words' value (its low 32 bits)")}},
	},
}).Init()

func init() { register(Copy) }
