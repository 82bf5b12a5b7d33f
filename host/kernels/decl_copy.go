package kernels

import "github.com/accelkern/accel/host"

// Copy is a word copy shaped for CPU drivers (copy_body.h): PoCL runs its
// own buffer copy on one thread, at about half of what the memory moves,
// so CPU OpenCL devices copy with this kernel instead (accel's planCopy).
var Copy = (&host.FileDecl{
	Name: "copy",
	Variants: []host.Variant{
		variant("any"),
	},
	Doc: "a copy of 32-bit words in contiguous chunks, one chunk per work-item at a time",
	Knobs: append(append([]host.KnobDecl(nil), tileKnobs...),
		host.KnobDecl{Name: "STREAM", Default: 0, Doc: "1: non-temporal stores from dst's first 64-byte boundary on (OpenCL C; copies larger than the caches)"}),
	Entries: []*host.EntryDecl{
		{Name: "words", Doc: "dst[dst_off + i] = src[src_off + i] for i in [0, n), in chunks of ITEMS words",
			Args: []host.ArgDecl{out("dst", "32-bit words"), in("src", "32-bit words"), i64("dst_off", "first word of dst"),
				i64("src_off", "first word of src"), i64("n", "words")}},
	},
}).Init()

func init() { register(Copy) }
