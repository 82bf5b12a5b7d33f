// Package kernels declares the interface of every kernel, once: for each
// kernel file its variants, its knobs and its entry points (one per pass)
// with their arguments, and the integer codes kernels and host share.
// `go generate` writes from these declarations the header each kernel
// source includes (clkernels/common/gen/FILE.h, for OpenCL C and GLSL
// alike); the Go argument structs in args_gen.go, one per entry point,
// from which the host packs a launch's arguments, and each file's typed
// variant constants (ScatterF32: a ScatterVariant, which only scatter's
// calls take in Spec and Dispatch); host/knobs_gen.go, a typed key per
// knob name (host.KnobItems); and shaders/variants.txt, which
// shaders/build.sh compiles. See host.FileDecl for what the header holds.
package kernels

//go:generate go run gen_main.go

import "github.com/accelkern/accel/host"

func buf(name string, a host.Access, doc string) host.ArgDecl {
	return host.ArgDecl{Name: name, Kind: host.ArgBuf, Access: a, Doc: doc}
}

func in(name, doc string) host.ArgDecl    { return buf(name, host.In, doc) }
func out(name, doc string) host.ArgDecl   { return buf(name, host.Out, doc) }
func inout(name, doc string) host.ArgDecl { return buf(name, host.InOut, doc) }

func i64(name, doc string) host.ArgDecl {
	return host.ArgDecl{Name: name, Kind: host.ArgI64, Doc: doc}
}

// variant declares a build of a kernel file with its defines (NAME=VALUE,
// -D options to both compilers). The element-type define DT is 1 int32,
// 2 int64, 3 float32, 4 float64; a variant V.strict (STRICT=1) is V's
// Vulkan build declaring SignedZeroInfNanPreserve, V.strictd (STRICT=2,
// float32) one declaring DenormPreserve too, and V.strictf (STRICT=1,
// DENORM_FIX=1, float32) one that keeps subnormals itself, for devices
// that may flush them (host.StrictVariant; dtypes.h).
func variant(name string, defines ...string) host.Variant {
	return host.Variant{Name: name, Defines: defines}
}

// folded is an int64 argument that drivers with Caps.FoldArgs get as the
// compile-time knob.
func folded(name, knob, doc string) host.ArgDecl {
	return host.ArgDecl{Name: name, Kind: host.ArgI64, Fold: knob, Doc: doc}
}

// The elementwise tile loop's knobs (clkernels/common/elementwise.h).
var tileKnobs = []host.KnobDecl{
	{Name: "ITEMS", Default: 16, Doc: "elements per work-item per tile"},
	{Name: "CONTIG", Default: 0, Doc: "1: each work-item takes ITEMS consecutive elements (CPU drivers); 0: interleaved (GPUs)"},
}

// fdivKnob is the float32 division of the files that divide floats
// (dtypes.h's T_DIV); the host sets it per device (host.DeviceKnobs).
var fdivKnob = host.KnobDecl{Name: "FDIV", Default: 2,
	Doc: "float32 division: 0 the device's own (correctly rounded there), 2 in integers"}

// withFdiv is the tile loop's knobs and FDIV.
func withFdiv() []host.KnobDecl { return append(append([]host.KnobDecl(nil), tileKnobs...), fdivKnob) }

// Codes shared by kernels and host.
var (
	// Reduce are the reductions of scatter_reduce, put_along_axis and the
	// segmented reductions.
	Reduce = &host.CodeGroup{Prefix: "RED", Doc: "reductions", Codes: []host.Code{
		{Name: "ASSIGN", Value: 0}, {Name: "SUM", Value: 1}, {Name: "PROD", Value: 2},
		{Name: "MEAN", Value: 3}, {Name: "AMAX", Value: 4}, {Name: "AMIN", Value: 5}}}
	// Flag are the flag sources of the scan and move kernels (memory.h):
	// what a scan or a compaction counts at position i.
	Flag = &host.CodeGroup{Prefix: "FLAG", Doc: "flag sources of scans and compactions", Codes: []host.Code{
		{Name: "NONE", Value: 0, Doc: "the elements themselves"},
		{Name: "MASK8", Value: 1, Doc: "a bool byte (nonzero is true)"},
		{Name: "HEAD32", Value: 2, Doc: "position i starts a run of equal 32-bit words"},
		{Name: "HEAD64", Value: 3, Doc: "position i starts a run of equal 64-bit words"},
		{Name: "POPC32", Value: 4, Doc: "the set bits of 32-bit word i (scans only)"}}}
	// Err is the word a validating pass leaves untouched when every index
	// is in range; else it holds the smallest flagged tile (position >> 16).
	Err = &host.CodeGroup{Prefix: "ERR", Doc: "validation flags", Codes: []host.Code{
		{Name: "NONE", Value: 0xffffffff, Doc: "no index flagged"},
		{Name: "TILE_SHIFT", Value: 16, Doc: "a flagged position p is recorded as p >> ERR_TILE_SHIFT"}}}
	// Key are the key kinds of the radix sort.
	Key = &host.CodeGroup{Prefix: "KIND", Doc: "radix sort key kinds", Codes: []host.Code{
		{Name: "UNSIGNED", Value: 0}, {Name: "SIGNED", Value: 1}, {Name: "FLOAT", Value: 2}}}
	// Pack are the radix sort's packing modes (radix_body.h).
	Pack = &host.CodeGroup{Prefix: "RADIX", Doc: "radix pass packing", Codes: []host.Code{
		{Name: "UNPACKED", Value: 0, Doc: "keys and int64 entries in their own buffers"},
		{Name: "PACK_OUT", Value: 1, Doc: "reads keys, writes packed words (first of several passes)"},
		{Name: "PACKED", Value: 2, Doc: "reads and writes packed words"},
		{Name: "UNPACK", Value: 3, Doc: "reads packed words, writes keys and entries (last pass)"},
		{Name: "E32_OUT", Value: 4, Doc: "reads keys and entries, writes keys and 32-bit entries (first of several passes)"},
		{Name: "E32", Value: 5, Doc: "reads and writes keys and 32-bit entries"},
		{Name: "E32_IN", Value: 6, Doc: "reads keys and 32-bit entries, writes keys and int64 entries (last pass)"}}}
	// Carry are how a sweep sort carries its entries between its passes
	// (radix_body.h's radix_sweep: each pass takes its packing from it,
	// by its place among the passes that run).
	Carry = &host.CodeGroup{Prefix: "CARRY", Doc: "radix sweep carrying", Codes: []host.Code{
		{Name: "NONE", Value: 0, Doc: "keys and int64 entries in their own buffers (RADIX_UNPACKED every pass)"},
		{Name: "PACKED", Value: 1, Doc: "packed words between the passes (RADIX_PACK_OUT, RADIX_PACKED, RADIX_UNPACK)"},
		{Name: "E32", Value: 2, Doc: "32-bit entries between the passes (RADIX_E32_OUT, RADIX_E32, RADIX_E32_IN)"},
		{Name: "WORDS", Value: 3, Doc: "packed words in, between and out (RADIX_PACKED every pass)"}}}
	// SegVals are where segment_reduce reads a run's values (segment_body.h).
	SegVals = &host.CodeGroup{Prefix: "SEG_VALS", Doc: "segment_reduce's values", Codes: []host.Code{
		{Name: "DIRECT", Value: 0, Doc: "vals[j]"},
		{Name: "PERM", Value: 1, Doc: "vals[perm[j]]"},
		{Name: "PACKED", Value: 2, Doc: "the low half of keys[j], a packed word whose high half is the key (32-bit values)"}}}
	// ScatterCodes are the scatter kernel's metadata layout and constants.
	ScatterCodes = &host.CodeGroup{Prefix: "SC", Doc: "scatter metadata", Codes: []host.Code{
		{Name: "META_LOOP", Value: 0, Doc: "meta[SC_META_LOOP*rank + k]: the loop shape"},
		{Name: "META_OUT", Value: 1, Doc: "meta[SC_META_OUT*rank + k]: output strides"},
		{Name: "META_SRC", Value: 2, Doc: "meta[SC_META_SRC*rank + k]: source strides"},
		{Name: "META_IDX", Value: 3, Doc: "meta[SC_META_IDX*rank + k]: index strides"},
		{Name: "META_BLOCKS", Value: 4, Doc: "meta holds SC_META_BLOCKS*rank entries"},
		{Name: "SPARE", Value: 8, Doc: "the owned pass's spare slots per owner"},
		{Name: "FEW_MAX", Value: 16, Doc: "the most targets the few-targets pass takes"},
		{Name: "PART_MAX", Value: 128, Doc: "the most hits per target the GPUs' partition of the bit-reproducible mode sorts in place"},
		{Name: "PART_MANY", Value: 1, Doc: "err[1] bit of the partition's passes: a target has more than SC_PART_MAX hits (the host sorts instead)"},
		{Name: "PART_OVER", Value: 2, Doc: "err[1] bit of the slotted partition's placing: a bucket has more hits than its slots (the host counts first instead)"},
		{Name: "PB", Value: 2048, Doc: "the private and few passes' block of 1-d positions checked at once"},
		{Name: "PF", Value: 64, Doc: "the private pass's prefetch distance, in positions"},
		{Name: "PF_MIN", Value: 65536, Doc: "the fewest targets the private pass prefetches for (smaller copies stay in cache)"}}}
	// HashCodes are the hash table's word markers.
	HashCodes = &host.CodeGroup{Prefix: "HT", Unsigned: true, Doc: "hash table markers", Codes: []host.Code{
		{Name: "EMPTY", Value: -1, Doc: "the key of a free slot, and every word's initial value"},
		{Name: "CLAIM", Value: -1 << 63, Doc: "a value word claimed by an insert: HT_CLAIM | position"}}}
	// HashMeta are the words of the hash table's meta buffer.
	HashMeta = &host.CodeGroup{Prefix: "HT_META", Doc: "hash table meta words", Codes: []host.Code{
		{Name: "COUNT", Value: 0, Doc: "64-bit word: keys in the table"},
		{Name: "FULL", Value: 2, Doc: "32-bit word: the full flag"},
		{Name: "MORE", Value: 3, Doc: "32-bit word: some work-item ran out of probes"}}}
)

// Groups lists every code group, for the generator. Groups declared in
// other files of the package add themselves with registerCodes.
var Groups = []*host.CodeGroup{Reduce, Flag, Err, Key, Pack, Carry, SegVals, ScatterCodes, HashCodes, HashMeta}

// register adds kernel files declared in other files of the package (one
// file per op family: decl_FAMILY.go, calling it from an init function)
// to Files.
func register(fs ...*host.FileDecl) { Files = append(Files, fs...) }

// registerCodes adds code groups declared in other files to Groups.
func registerCodes(gs ...*host.CodeGroup) { Groups = append(Groups, gs...) }

// TriIndices is tril_indices/triu_indices (tri_indices_body.h).
var TriIndices = (&host.FileDecl{
	Name: "tri_indices",
	Variants: []host.Variant{
		variant("i32", "IDX_BITS=32"),
		variant("i64", "IDX_BITS=64"),
	},
	Doc: "tril_indices / triu_indices: rows then columns of elements k0 .. k0+count-1 of the result",
	Knobs: append(append([]host.KnobDecl(nil), tileKnobs...),
		host.KnobDecl{Name: "STREAM", Default: 0, Doc: "1: CONTIG runs go in non-temporal stores from each run's first 64-byte boundary on (OpenCL C; outputs larger than the caches)"}),
	Entries: []*host.EntryDecl{{
		Name: "run", Doc: "writes elements k0 .. k0+count-1",
		Args: []host.ArgDecl{
			out("dst", "[2, count]: rows, then columns"),
			i64("count", "elements to write"), i64("k0", "the first element's index in the whole result"),
			i64("C", "columns"), i64("lead", "rows before the trapezoid"), i64("n", "trapezoid rows"),
			i64("a", "the trapezoid's first row length"), i64("T", "the trapezoid's elements"),
			i64("upper", "1: triu, 0: tril"),
		},
	}},
}).Init()

var diagArgs = []host.ArgDecl{
	i64("count", "batch * L diagonal elements"), i64("L", "diagonal length"),
	i64("base", "offset of the first diagonal element"), i64("dstride", "stride along the diagonal"),
	i64("n1", "middle batch run size"), i64("n2", "inner batch run size"),
	i64("s0", "outer batch run stride"), i64("s1", "middle batch run stride"), i64("s2", "inner batch run stride"),
}

// Diag is diagonal_scatter and its backward (diag_body.h).
var Diag = (&host.FileDecl{
	Name: "diag",
	Variants: []host.Variant{
		variant("w32", "WORD_BITS=32"),
		variant("w64", "WORD_BITS=64"),
	},
	Doc:   "diagonal_scatter and its backward, on element bits",
	Knobs: tileKnobs,
	Entries: []*host.EntryDecl{
		{Name: "scatter", Doc: "full[off(j)] = diag[j]",
			Args: append([]host.ArgDecl{inout("full", "the full tensor"), in("diag", "the diagonal")}, diagArgs...)},
		{Name: "gather", Doc: "diag[j] = full[off(j)]",
			Args: append([]host.ArgDecl{in("full", "the full tensor"), out("diag", "the diagonal")}, diagArgs...)},
		{Name: "zero", Doc: "full[off(j)] = 0",
			Args: append([]host.ArgDecl{inout("full", "the full tensor")}, diagArgs...)},
	},
}).Init()

// scatterPos are the arguments that place a scatter position.
// fewArgs are the arguments of the few-targets passes (few, fewg), whose
// copies priv holds.
func fewArgs(priv string) []host.ArgDecl {
	return with([]host.ArgDecl{in("src", "the values"), inout("err", "the validation flag"), out("priv", priv),
		out("pcnt", "uint32 hit counts per copy (counted)")},
		with(scatterPos(true), i64("out_n", "output elements"), folded("counted", "SC_COUNTED", "1: count hits (mean, or without the input)"),
			folded("few", "SC_FEW", "targets the loop tests (a power of two >= out_n, <= SC_FEW_MAX)"), scRed)...)
}

func scatterPos(wrapped bool) []host.ArgDecl {
	a := []host.ArgDecl{
		in("index", "int64 indices"), in("meta", "[loop shape, out, src and index strides] (SC_META_*)"),
		i64("count", "positions"), i64("rank", "rank of the loop shape"), i64("dim", "the indexed dim"),
		i64("dim_size", "the output's size along dim"),
	}
	if wrapped {
		a = append(a, folded("wrap", "SC_WRAP", "1: a negative index counts once from the end"))
	}
	return a
}

func with(a []host.ArgDecl, more ...host.ArgDecl) []host.ArgDecl {
	return append(append([]host.ArgDecl(nil), a...), more...)
}

var (
	scRed  = folded("red", "SC_RED", "the reduction (RED_*)")
	scSelf = folded("include_self", "SC_SELF", "1: the output's own values take part")
	scErr  = in("err", "the validation flag (ERR_NONE: no bad index; any other value skips the pass)")
)

// Scatter is scatter / scatter_reduce / put_along_axis / take_along_axis
// (scatter_body.h). Every pass after validate skips its work when the
// validation flagged an index, so nothing is read or written out of
// bounds whatever the indices.
var Scatter = (&host.FileDecl{
	Name:           "scatter",
	ModulePerEntry: true, // 20 entries: the whole module is 270-530 KB
	Variants: []host.Variant{
		variant("i32", "DT=1"),
		variant("i64", "DT=2"),
		variant("f32", "DT=3"),
		variant("f64", "DT=4"),
		variant("f32a", "DT=3", "FADD=1"),
		variant("f64a", "DT=4", "FADD=1"),
		variant("f32.strict", "DT=3", "STRICT=1"),
		variant("f64.strict", "DT=4", "STRICT=1"),
		variant("f32a.strict", "DT=3", "FADD=1", "STRICT=1"),
		variant("f64a.strict", "DT=4", "FADD=1", "STRICT=1"),
		variant("f32.strictd", "DT=3", "STRICT=2"),
		variant("f32a.strictd", "DT=3", "FADD=1", "STRICT=2"),
		variant("f32.strictf", "DT=3", "STRICT=1", "DENORM_FIX=1"),
		variant("f32a.strictf", "DT=3", "FADD=1", "STRICT=1", "DENORM_FIX=1"),
	},
	Doc: "scatter, scatter_reduce, put_along_axis and take_along_axis",
	Knobs: append(withFdiv(), host.KnobDecl{Name: "SC_FEWG_SH", Default: 0,
		Doc: "fewg: 1 folds each lane's targets in its own scratch column (one scratch read and write a position), 0 in registers (a compare per target and position); pfold, sfold: 1 doubles their scratch (a tile of twice the words)"},
		host.KnobDecl{Name: "SC_CAS", Default: 0,
			Doc: "reduce: 1 folds sums, means and hit counts by compare-and-swap loops that start from a plain load (drivers that run a vector's atomics a lane at a time: host.Caps.SerialAtomics), 0 by the device's atomic adds where it has them; pcount, place, pslot: 1 counts hits and claims slots the same way"}),
	Codes: []*host.CodeGroup{Reduce, Err, ScatterCodes},
	Entries: []*host.EntryDecl{
		{Name: "validate", Doc: "an index out of range records its tile with an atomic min into err[0]",
			Args: with([]host.ArgDecl{inout("err", "the validation flag")}, scatterPos(true)...)},
		{Name: "init", Doc: "every hit target starts from the reduction's identity (include_self false)",
			Args: with([]host.ArgDecl{inout("dst", "the output"), scErr}, with(scatterPos(true), scRed)...)},
		{Name: "reduce", Doc: "out[target] = combine(out[target], src[p]) with atomics; counts[target]++ for mean",
			Args: with([]host.ArgDecl{inout("dst", "the output"), in("src", "the values"),
				inout("counts", "uint32 hit counts (mean only)"), scErr}, with(scatterPos(true), scRed)...)},
		{Name: "mean", Doc: "out /= hits (+1 with include_self) where hit",
			Args: []host.ArgDecl{inout("dst", "the output"), in("counts", "uint32 hit counts"), scErr,
				i64("count", "outputs"), scSelf}},
		{Name: "gather", Doc: "out[p] = arr[target] (take_along_axis)",
			Args: with([]host.ArgDecl{out("dst", "the gathered values"), in("arr", "the array"), scErr}, scatterPos(true)...)},
		{Name: "dest", Doc: "validates p (a bad index is flagged, its words 0) and writes keys[p] = target offset, soffs[p] = source offset, or with packed keys[p] = target << 32 | the 32 bits of src[source offset] (the bit-reproducible mode's sort input)",
			Args: with([]host.ArgDecl{out("keys", "uint64 target offsets, or packed words"), out("soffs", "int64 source offsets (not packed)"),
				in("src", "32-bit values (packed)"), scErr}, with(scatterPos(true), i64("packed", "1: target and value bits in one word (targets below 2^32, 32-bit values)"))...)},
		{Name: "pcount", Doc: "GPUs' partition: validates p (a bad index is flagged and skipped) and counts its target's hits; a target past SC_PART_MAX hits sets err[1]",
			Args: with([]host.ArgDecl{inout("counts", "uint32 hits per target"), inout("err", "the validation flag, then the too-many-hits flag")}, scatterPos(true)...)},
		{Name: "place", Doc: "GPUs' partition: words[off[target]++] = p << 32 | the 32 bits of src[source offset]",
			Args: with([]host.ArgDecl{inout("off", "uint32 next slot per target (from the exclusive scan of the counts)"), out("words", "uint64 position and value words"),
				in("src", "32-bit values"), scErr}, scatterPos(true)...)},
		{Name: "pfold", Doc: "GPUs' partition: group g takes tiles of per targets; a tile's words go to scratch, where each target's are sorted by position and folded in that order (segment_reduce's fold); a tile of more words than the scratch holds is sorted in place in words",
			Scratch: true,
			Args: []host.ArgDecl{inout("dst", "the output"), in("counts", "uint32 hits per target"), in("off", "uint32 end of each target's words"),
				inout("words", "uint64 position and value words (sorted in place where a tile overflows the scratch)"), scErr, i64("n", "words"), i64("out_n", "targets"),
				i64("per", "targets a tile"), scRed, scSelf}},
		{Name: "pslot", Doc: "GPUs' slotted partition: validates p (a bad index is flagged and skipped) and claims the next slot r of its target's bucket of 2^slot_bits targets (cur[bucket]++); below cap, slots[bucket * cap + r] = (target within the bucket << (32 - slot_bits) | p) << 32 | the 32 bits of src[source offset]; a bucket past cap sets SC_PART_OVER in err[1], a target past SC_PART_MAX (slot_bits 0) SC_PART_MANY too",
			Args: with([]host.ArgDecl{inout("cur", "uint32 hits per bucket"), out("slots", "uint64 words, cap a bucket"), in("src", "32-bit values"),
				inout("err", "the validation flag, then the partition's flags")},
				with(scatterPos(true), i64("slot_bits", "log2 of the targets a bucket (at most 6; positions below 2^(32 - slot_bits))"),
					i64("cap", "the slots a bucket (at most SC_PART_MAX)"))...)},
		{Name: "sfold", Doc: "GPUs' slotted partition: group g takes tiles of per buckets (per <= LOCAL_SIZE), a work-item a bucket; a tile's words go to scratch, where each bucket's are sorted by target and position and each target's run folded in that order (segment_reduce's fold); a tile of more words than the scratch holds is sorted in place in slots; nothing is done where err[0] or err[1] is set",
			Scratch: true,
			Args: []host.ArgDecl{inout("dst", "the output"), in("cur", "uint32 hits per bucket"),
				inout("slots", "uint64 words, cap a bucket (sorted in place where a tile overflows the scratch)"), scErr, i64("out_n", "targets"),
				i64("per", "buckets a tile"), i64("slot_bits", "log2 of the targets a bucket"), i64("cap", "the slots a bucket"), scRed, scSelf}},
		{Name: "owned", Doc: "CPU drivers: work-item w owns a range of targets and folds them in index order",
			Args: with([]host.ArgDecl{inout("dst", "the output"), in("src", "the values"),
				inout("counts", "uint32 hit counts"), inout("err", "the validation flag"),
				inout("spare", "SC_SPARE value slots, then as many count slots, per owner")},
				with(scatterPos(true), i64("out_n", "output elements"), scRed, scSelf)...)},
		{Name: "private", Doc: "CPU drivers: worker w folds its chunk of positions into its own copy of the output",
			Args: with([]host.ArgDecl{inout("dst", "the output (worker 0's copy where inplace)"), in("src", "the values"),
				inout("pcnt", "uint32 hit counts per copy"), inout("err", "the validation flag"), inout("priv", "the private copies")},
				with(scatterPos(true), i64("out_n", "output elements"), i64("counted", "1: count hits"),
					i64("inplace", "1: worker 0 folds into dst, worker w > 0 into copy w - 1 (no counts)"), scRed)...)},
		{Name: "bcount", Doc: "CPU drivers: worker w counts its chunk's valid positions per bucket of 2^span_log output offsets (a bad index flagged and skipped)",
			Args: with([]host.ArgDecl{inout("err", "the validation flag"), out("bcnt", "uint64 counts, worker-major (a worker's row of SC_BROW(buckets) words)")},
				with(scatterPos(true), i64("buckets", "buckets of output offsets"), i64("span_log", "log2 of a bucket's offsets"))...)},
		{Name: "bscan", Doc: "one work-item: bcnt becomes its exclusive prefix sum in bucket-major order (each bucket and worker's first slot)",
			Args: []host.ArgDecl{inout("bcnt", "uint64 counts, then first slots"), i64("buckets", "buckets of output offsets"), i64("workers", "rows of bcnt")}},
		{Name: "bplace", Doc: "CPU drivers: worker w writes its chunk's positions (offset within the bucket, value) at its slots, in order",
			Args: with([]host.ArgDecl{in("src", "the values"), scErr, inout("bcnt", "uint64 next slots, a row per worker"),
				out("ploc", "uint32 offsets within the bucket, per slot"), out("pval", "values per slot")},
				with(scatterPos(true), i64("buckets", "buckets of output offsets"), i64("span_log", "log2 of a bucket's offsets"))...)},
		{Name: "bfold", Doc: "CPU drivers: worker w folds its buckets' slots in order into out (the reference's bits), counting hits where counted",
			Args: []host.ArgDecl{inout("dst", "the output"), inout("counts", "uint32 hit counts (mean, or without the input)"), scErr,
				in("bcnt", "uint64 bucket and worker ends"), in("ploc", "uint32 offsets within the bucket"), in("pval", "values per slot"),
				i64("buckets", "buckets of output offsets"), i64("span_log", "log2 of a bucket's offsets"), scRed, scSelf}},
		{Name: "few", Doc: "CPU drivers, 1-d, at most SC_FEW_MAX targets: worker w folds its blocks into registers per target (vector lanes on OpenCL C), then writes its private copy",
			Args: fewArgs("the private copies")},
		{Name: "fewg", Doc: "GPUs, 1-d, at most SC_FEW_MAX targets: group g's lanes fold strided positions of its range into registers or scratch columns per target (SC_FEWG_SH), the group folds its lanes in scratch, and writes copy g",
			Scratch: true, Args: fewArgs("the private copies, one per group")},
		{Name: "merge", Doc: "folds the private copies into out in worker order (and divides the mean)",
			Args: []host.ArgDecl{inout("dst", "the output"), in("pcnt", "uint32 hit counts per copy"), in("priv", "the private copies"),
				i64("count", "outputs"), i64("workers", "private copies"), i64("counted", "1: hit counts were kept"),
				scRed, scSelf}},
	},
}).Init()

// Scan is the reduce-then-scan prefix sum (scan_body.h).
var Scan = (&host.FileDecl{
	Name: "scan",
	Variants: []host.Variant{
		variant("u32", "DT=1"),
		variant("u64", "DT=2"),
		variant("f32", "DT=3"),
		variant("f64", "DT=4"),
		variant("u32s", "DT=1", "SG=1"),
		variant("u64s", "DT=2", "SG=1"),
		variant("f32s", "DT=3", "SG=1"),
		variant("f64s", "DT=4", "SG=1"),
	},
	Doc: "prefix sums of elements or of 0/1 flags",
	Knobs: []host.KnobDecl{
		{Name: "ITEMS", Default: 16, Doc: "units per work-item per tile"},
		{Name: "FLAT", Default: 0, Doc: "1: one work-item per group scans its range in one loop (CPU drivers)"},
		{Name: "SCAN_SG", Default: 0, Doc: "1: the subgroup path; 2: one subgroup per group, no scratch; 3: as 2, each lane a run of ITEMS units (variants built with SG=1)"},
		{Name: "CHAIN", Default: 0, Doc: "the single-pass chained scan (entries chain and fixup): 1 one work-item per group (CPU OpenCL drivers), 2 whole work-groups on tiles of LOCAL_SIZE x ITEMS (GPUs); 0 reduce-then-scan"},
		{Name: "SPIN", Default: 16384, Doc: "the chained scan's polls for a tile's sum before it leaves its own tile to the fixup"},
		{Name: "STREAM", Default: 0, Doc: "1: the chained scan writes y with non-temporal stores (outputs larger than the caches)"},
	},
	Codes: []*host.CodeGroup{Flag},
	Entries: []*host.EntryDecl{
		{Name: "reduce", Doc: "each group sums its range into partials[g]", Scratch: true,
			Args: []host.ArgDecl{in("x", "the input"), out("partials", "G+1 partial sums"), i64("n", "elements"),
				folded("kind", "SCAN_KIND", "what is summed (FLAG_*)")}},
		{Name: "partials", Doc: "one work-item turns the partials into exclusive prefixes and writes the total at [groups]",
			Args: []host.ArgDecl{inout("partials", "G+1 partial sums"), i64("groups", "G")}},
		{Name: "apply", Doc: "each group rescans its range from partials[g] into y (y may be x)", Scratch: true,
			Args: []host.ArgDecl{in("x", "the input"), out("y", "the prefix sums"), in("partials", "G+1 exclusive prefixes"),
				i64("n", "elements"), folded("kind", "SCAN_KIND", "what is summed (FLAG_*)"),
				folded("exclusive", "SCAN_EXCL", "1: exclusive sums")}},
		{Name: "chain", Doc: "the single-pass chained scan (knob CHAIN): each tile's owner looks back for its carry (bounded polls; a tile left unwritten is the fixup's)", Scratch: true,
			Args: []host.ArgDecl{in("x", "the input"), out("y", "the prefix sums (y may be x)"),
				inout("partials", "CHAIN 1: [2*tiles+1], the tiles' sums, the total at [tiles], the tiles' inclusive prefixes from [tiles+1]; CHAIN 2: the total at [tiles]"),
				inout("flags", "zeroed; CHAIN 1: uint32 [tiles+1], the ticket counter, then each tile's state (1: sum, 2: prefix); CHAIN 2: uint64 tagged words, the tiles' sums then prefixes"),
				i64("n", "elements"), folded("kind", "SCAN_KIND", "what is summed (FLAG_*)"),
				folded("exclusive", "SCAN_EXCL", "1: exclusive sums")}},
		{Name: "fixup", Doc: "after chain: scans the tiles chain left unwritten and writes the total where the last tile did not", Scratch: true,
			Args: []host.ArgDecl{in("x", "the input"), out("y", "the prefix sums"), inout("partials", "chain's partials"),
				in("flags", "chain's flags"), i64("n", "elements"), folded("kind", "SCAN_KIND", "what is summed (FLAG_*)"),
				folded("exclusive", "SCAN_EXCL", "1: exclusive sums")}},
	},
}).Init()

// radixBufs are the buffers a radix pass takes its keys and entries from
// by its place among the passes that run (k0, p0: the first pass's; ka,
// kb, pa, pb: the two of each the passes alternate through, as dir
// declares them), k0's doc ending in note, then rest.
func radixBufs(dir func(name, doc string) host.ArgDecl, note string, rest ...host.ArgDecl) []host.ArgDecl {
	return append([]host.ArgDecl{in("k0", "the first pass's keys (kind's bits"+note+")"),
		in("p0", "the first pass's entries or packed words (null: the positions)"),
		dir("ka", "keys, the last pass's output (and every other pass's, back from it)"), dir("kb", "keys, the other buffer"),
		dir("pa", "entries or packed words, the last pass's output"), dir("pb", "entries or packed words, the other buffer")}, rest...)
}

// radixChunkArgs are a chunked radix pass's arguments: its histogram and
// roles (hist, roles), its words (n, chunk, pass, passes, skip, carry),
// then rest.
func radixChunkArgs(hist, roles host.ArgDecl, rest ...host.ArgDecl) []host.ArgDecl {
	return append([]host.ArgDecl{hist, roles,
		i64("n", "keys"), i64("chunk", "keys per work-item"), i64("pass", "the pass (its digit: bits pass*RADIX_BITS up)"),
		i64("passes", "the sort's passes"), i64("skip", "1: the pass reads its role (where RADIX_SKIP is 1)"),
		i64("carry", "CARRY_*: the pass's packing, from its place, where hpack is not folded")}, rest...)
}

// Radix is one pass of the stable LSD radix sort (radix_body.h).
var Radix = (&host.FileDecl{
	Name:           "radix",
	ModulePerEntry: true, // 9 entries: 122-158 KB
	Variants: []host.Variant{
		variant("k32", "KB=32"),
		variant("k64", "KB=64"),
		variant("k32s", "KB=32", "SG=1"),
		variant("k64s", "KB=64", "SG=1"),
	},
	Doc: "passes of a stable LSD radix sort over contiguous chunks (CPUs) or tiles ranked in work-group scratch (GPUs)",
	Knobs: []host.KnobDecl{{Name: "RADIX_BITS", Default: 4, Doc: "digit width"},
		{Name: "RADIX_KPT", Default: 0, Doc: "keys per lane of the tiled passes (GPUs; 0: off, and their scratch one word)"},
		{Name: "RADIX_SWEEP", Default: 0, Doc: "1: the tiled passes as Onesweep's (entries thist and sweep: every pass's digit counts in one read, then each pass one launch that looks back for its tile's offsets, and its fixup); 0: a count, a scan and a scatter per pass"},
		{Name: "RADIX_SGS", Default: 0, Doc: "the tiled passes' ranking by subgroup ballots (Vulkan variants built with SG=1): the most subgroups a group may have, whose digit counters the scratch holds (a group with more, or with a partial subgroup, ranks in the raking rounds); 0: the raking rounds"},
		{Name: "RADIX_EW", Default: 2, Doc: "the tiled passes' scratch words for a slot's entry: 1 where the plan's entries are all below 2^32 (the tile's slots take a word less, so more keys fit), else 2"},
		{Name: "RADIX_SPIN", Default: 16384, Doc: "the sweep's rounds of polls for an earlier tile's counts before it leaves its own tile to the fixup (-1: every tile to the fixup, a test)"},
		{Name: "RADIX_LATE", Default: 0, Doc: "1: where subgroup ballots rank a tile, its entries are loaded after its keys are ranked (no registers while they are) and put at their keys' slots before the tile is written; 0: loaded with the keys"},
		{Name: "RADIX_SKIP", Default: 0, Doc: "1: a pass whose digit is the same for every key is skipped on the device (the sweep's from entry roles, the chunked passes' from entry aroles; the passes that run take their buffers, and in the sweep their packing, by their place among themselves); 0: every pass runs, as the host laid them out"}},
	Codes: []*host.CodeGroup{Key, Pack, Carry},
	Entries: []*host.EntryDecl{
		{Name: "prep", Doc: "kout[i] = the order bits of key i (an involution for integer kinds)",
			Args: []host.ArgDecl{in("kin", "keys"), out("kout", "order bits"), i64("n", "keys"), i64("chunk", "keys per work-item"),
				folded("kind", "RADIX_KIND", "KIND_*"), folded("descending", "RADIX_DESC", "1: descending")}},
		{Name: "count", Doc: "hist[d*B + w] = keys of chunk w with digit d in pass pass; with agree, also each chunk's OR and AND of its keys (roles[2w], roles[2w+1])",
			Args: radixBufs(in, "", radixChunkArgs(out("hist", "digit counts, digit-major"),
				inout("roles", "each chunk's OR and AND of its keys (written by the first count where agree is 1), then each pass's role (aroles; read where RADIX_SKIP and skip are 1)"),
				folded("hpack", "RADIX_PACK", "RADIX_* packing, how the pass reads, for a sort of all the passes (used where folded)"),
				folded("kind", "RADIX_KIND", "KIND_* of k0 (the first pass counts order bits; KIND_UNSIGNED after it)"),
				folded("descending", "RADIX_DESC", "1: descending (the first pass; 0 after it)"),
				folded("agree", "RADIX_AGREE", "1: also write the chunk's OR and AND (the first pass of a sort of three passes or more)"))...)},
		{Name: "scatter", Doc: "after an exclusive scan of hist, each work-item moves its keys and entries to their places in order, from and to the buffers of the pass's role",
			Args: radixBufs(inout, "", radixChunkArgs(in("hist", "exclusive digit offsets"),
				in("roles", "each chunk's OR and AND, then each pass's role (aroles; read where RADIX_SKIP and skip are 1)"),
				folded("first", "RADIX_FIRST", "1: the entries are the positions"),
				folded("hpack", "RADIX_PACK", "RADIX_* packing for a sort of all the passes (used where folded)"),
				i64("kx", "the last running pass writes its keys XOR kx (0; a Sort's integer keys: their order bits mapped back)"),
				folded("kind", "RADIX_KIND", "KIND_* of k0 (the first pass writes order bits; KIND_UNSIGNED after it)"),
				folded("descending", "RADIX_DESC", "1: descending (the first pass; 0 after it)"))...)},
		{Name: "tcount", Doc: "hist[d*T + t] = keys of tile t (LOCAL_SIZE*RADIX_KPT keys) with digit d", Scratch: true,
			Args: []host.ArgDecl{in("kin", "order bits (unpacked passes)"), in("pin", "packed words (packed passes)"),
				out("hist", "digit counts, digit-major"), i64("n", "keys"), i64("shift", "the digit's lowest bit"),
				folded("pack", "RADIX_PACK", "RADIX_* packing")}},
		{Name: "tscatter", Doc: "after an exclusive scan of hist, each group ranks its tile in scratch and writes it by digit runs", Scratch: true,
			Args: []host.ArgDecl{in("kin", "order bits"), out("kout", "order bits, moved"), in("pin", "entries or packed words (null: the positions)"),
				out("pout", "entries or packed words, moved"), in("hist", "exclusive digit offsets"), i64("n", "keys"),
				i64("shift", "the digit's lowest bit"),
				folded("first", "RADIX_FIRST", "1: the entries are the positions"), folded("pack", "RADIX_PACK", "RADIX_* packing")}},
		{Name: "thist", Doc: "hist[q*DIGITS + d] += keys with digit d in pass q, for passes from .. from+passes-1 at once (RADIX_SWEEP)", Scratch: true,
			Args: []host.ArgDecl{in("kin", "order bits or packed words, the first pass's input"), inout("hist", "zeroed; uint64 digit counts, pass-major"),
				i64("n", "keys"), i64("from", "the first pass counted"), i64("passes", "the passes counted, at most the scratch's words / DIGITS"),
				i64("pack", "RADIX_PACKED: kin holds packed words (keys in their high halves)"),
				folded("kind", "RADIX_KIND", "KIND_* of the keys in kin (their order bits are counted)"), folded("descending", "RADIX_DESC", "1: descending")}},
		{Name: "sweep", Doc: "one pass of Onesweep (RADIX_SWEEP): each group ranks its tile in scratch, publishes its digit counts, looks back for the earlier tiles' and writes the tile by digit runs (bounded polls; a tile left unwritten is the fixup's)", Scratch: true,
			Args: radixBufs(inout, "; unused where carry is CARRY_WORDS",
				in("hist", "thist's counts, scanned exclusive (flat)"),
				inout("status", "zeroed once per sort; uint64 tagged words: each tile's digit counts and inclusive prefixes, then each tile's done mark, then each pass's role (roles)"),
				i64("n", "keys"), i64("passes", "the sort's passes (where RADIX_SKIP is 0, every one runs)"),
				i64("pass", "the pass, < 2^14: the words' tag, hist's row and the digit (bits pass*RADIX_BITS up)"),
				i64("fix", "0: the pass; 1: its fixup, which writes only the tiles the pass left unwritten"),
				i64("kx", "the last running pass writes its keys XOR kx (0; a Sort's integer keys: their order bits mapped back)"),
				folded("first", "RADIX_FIRST", "1: the first pass's entries are the positions"), folded("carry", "RADIX_CARRY", "CARRY_*"),
				folded("kind", "RADIX_KIND", "KIND_* of k0 (the first pass writes order bits)"), folded("descending", "RADIX_DESC", "1: descending"))},
		{Name: "roles", Doc: "after the scan of thist's counts, each sweep pass's role in status: skipped where one digit holds every key (RADIX_SKIP), else its place among the passes that run, and their number", Scratch: true,
			Args: []host.ArgDecl{in("hist", "thist's counts, scanned exclusive (flat)"), inout("status", "the sweep's status words; a role word a pass after the tiles' words"),
				i64("n", "keys, at least 1"), i64("passes", "the sort's passes")}},
		{Name: "aroles", Doc: "the chunked passes' roles (RADIX_SKIP): from the first count's OR and AND of each chunk's keys, each pass's role after them in roles: skipped where its digit is one for every key (not the first pass, nor the last where last is 1), else its place among the passes that run, and their number",
			Args: []host.ArgDecl{inout("roles", "items chunks' OR and AND, then a role word a pass"), i64("items", "the chunks (work-items)"),
				i64("passes", "the sort's passes"), i64("last", "1: the last pass runs (it unpacks what the others carry, with the host's packing)")}},
	},
}).Init()

// Move is word gathers, scatters and compactions (move_body.h).
var Move = (&host.FileDecl{
	Name: "move",
	Variants: []host.Variant{
		variant("w32", "WB=32"),
		variant("w64", "WB=64"),
	},
	Doc:   "gathers, scatters and compactions of 32- or 64-bit words",
	Knobs: tileKnobs,
	Codes: []*host.CodeGroup{Flag},
	Entries: []*host.EntryDecl{
		{Name: "gather", Doc: "dst[i] = src[idx[i]]",
			Args: []host.ArgDecl{out("dst", "words"), in("src", "words"), in("idx", "int64 positions"), i64("n", "words")}},
		{Name: "scatter", Doc: "dst[idx[i]] = src[i] + add",
			Args: []host.ArgDecl{out("dst", "words"), in("src", "words"), in("idx", "int64 positions"), i64("n", "words"),
				i64("add", "added to each word (integer words)")}},
		{Name: "compact", Doc: "where flag i is set: dst[pos[i]+add] = src[i], idx[pos[i]+add] = i",
			Args: []host.ArgDecl{out("dst", "compacted words"), in("src", "words"), out("idx", "int64 source positions"),
				in("flags", "the flag source"), in("pos", "int64 scan of the flags"), i64("n", "positions"),
				folded("kind", "MOVE_KIND", "FLAG_*"), i64("add", "added to pos"),
				folded("has_src", "MOVE_HAS_SRC", "1: write dst"), folded("has_idx", "MOVE_HAS_IDX", "1: write idx")}},
		{Name: "tcount", Doc: "tcnt[t] = the flagged elements of tile t (LOCAL_SIZE*ITEMS elements)", Scratch: true,
			Args: []host.ArgDecl{in("flags", "the flag source"), out("tcnt", "uint64 counts per tile"), i64("n", "positions"),
				folded("kind", "MOVE_KIND", "FLAG_*")}},
		{Name: "tcompact", Doc: "tcnt scanned: tile t's flagged elements i, in order, to dst[to] = src[i] and idx[to] = i from to = tcnt[t] + add on", Scratch: true,
			Args: []host.ArgDecl{out("dst", "compacted words"), in("src", "words"), out("idx", "int64 source positions"),
				in("flags", "the flag source"), in("tcnt", "uint64 exclusive scan of the tiles' counts"), i64("n", "positions"),
				folded("kind", "MOVE_KIND", "FLAG_*"), i64("add", "added to the positions"),
				folded("has_src", "MOVE_HAS_SRC", "1: write dst"), folded("has_idx", "MOVE_HAS_IDX", "1: write idx")}},
		{Name: "ends", Doc: "seg is an inclusive scan of run starts: where run seg[i] ends at i, dst[seg[i]-1] = i + 1",
			Args: []host.ArgDecl{out("dst", "int64 run ends"), in("seg", "int64 1-based run ids"), i64("n", "positions")}},
		{Name: "counts", Doc: "dst[r] = ends[r] - ends[r-1]",
			Args: []host.ArgDecl{out("dst", "int64 run lengths"), in("ends", "int64 run ends"), i64("n", "runs")}},
		{Name: "widen", Doc: "dst[i] = src[i] sign-extended: int32 to int64 (index inputs given as int32)",
			Args: []host.ArgDecl{out("dst", "int64 words"), in("src", "int32 words"), i64("n", "words")}},
	},
}).Init()

// Segment is in-order reductions over runs of equal sorted keys
// (segment_body.h).
var Segment = (&host.FileDecl{
	Name: "segment",
	Variants: []host.Variant{
		variant("i32", "DT=1"),
		variant("i64", "DT=2"),
		variant("f32", "DT=3"),
		variant("f64", "DT=4"),
		variant("f32.strict", "DT=3", "STRICT=1"),
		variant("f64.strict", "DT=4", "STRICT=1"),
		variant("f32.strictd", "DT=3", "STRICT=2"),
		variant("f32.strictf", "DT=3", "STRICT=1", "DENORM_FIX=1"),
	},
	Doc:   "in-order reductions over runs of equal sorted keys",
	Knobs: withFdiv(),
	Codes: []*host.CodeGroup{Reduce, Err, SegVals},
	Entries: []*host.EntryDecl{
		{Name: "validate", Doc: "an id outside [0, segments) or below its predecessor records its tile into err[0]",
			Args: []host.ArgDecl{in("keys", "int64 segment ids"), inout("err", "the validation flag"), i64("n", "ids"),
				i64("segments", "the number of segments")}},
		{Name: "reduce", Doc: "each run of equal keys folds, in order, into out[key]; at most limit elements per launch",
			Args: []host.ArgDecl{inout("dst", "the outputs"), in("vals", "the values"),
				in("keys", "sorted 64-bit keys, or packed words sorted by their high halves (SEG_VALS_PACKED)"),
				in("perm", "int64 value positions (SEG_VALS_PERM)"),
				inout("err", "err[0]: the validation flag (skip when set); err[1] = 1: a run is unfinished"),
				i64("n", "keys"), folded("red", "SEG_RED", "RED_*"), folded("include_self", "SEG_SELF", "1: out's values take part"),
				folded("vals_at", "SEG_VALS_AT", "SEG_VALS_*: where the values are"), i64("limit", "elements per run per launch"),
				i64("step", "the launch's number")}},
	},
}).Init()

var bwdErr = inout("err", "err[0]: the forward's validation flag (skip when set); err[1] = 1: a run is unfinished")

// ScatterBwd is the gradient of scatter_reduce on the bit-reproducible
// forward's sort (scatter_bwd_body.h).
var ScatterBwd = (&host.FileDecl{
	Name: "scatter_bwd",
	Variants: []host.Variant{
		variant("f32", "DT=3"),
		variant("f64", "DT=4"),
		variant("f32.strict", "DT=3", "STRICT=1"),
		variant("f64.strict", "DT=4", "STRICT=1"),
		variant("f32.strictd", "DT=3", "STRICT=2"),
		variant("f32.strictf", "DT=3", "STRICT=1", "DENORM_FIX=1"),
	},
	Doc:   "the gradient of scatter_reduce",
	Knobs: withFdiv(),
	Codes: []*host.CodeGroup{Reduce, Err},
	Entries: []*host.EntryDecl{
		{Name: "nanself", Doc: "gi[p] = NaN where input[p] is NaN (amax/amin)",
			Args: []host.ArgDecl{inout("gi", "grad_input"), in("self_in", "the input"), i64("n", "input elements")}},
		{Name: "count", Doc: "aux[key] counts the run's contributors (mean) or those equal to the result (amax/amin)",
			Args: []host.ArgDecl{inout("aux", "uint32 counts per target"), in("keys", "sorted targets"), in("perm", "source offsets"),
				in("src", "the values"), in("self_in", "the input"), in("res", "the forward's result"), bwdErr,
				i64("n", "positions"), i64("red", "RED_*"), i64("include_self", "1: the input takes part")}},
		{Name: "apply", Doc: "gs[perm[j]] = the gradient share; run starts write gi[key]",
			Args: []host.ArgDecl{inout("gi", "grad_input"), out("gs", "grad_src"), in("g", "grad_output"), in("self_in", "the input"),
				in("src", "the values"), in("res", "the forward's result"), in("keys", "sorted targets"), in("perm", "source offsets"),
				in("aux", "uint32 counts per target"), bwdErr, i64("n", "positions"), i64("red", "RED_*"),
				i64("include_self", "1: the input takes part")}},
		{Name: "suffix", Doc: "prod: gs[perm[j]] = the product of the run's values after j; aux[key] = the whole run's",
			Args: []host.ArgDecl{out("gs", "grad_src"), inout("aux", "running products per target"), in("keys", "sorted targets"),
				in("perm", "source offsets"), in("src", "the values"), bwdErr, i64("n", "positions"),
				i64("limit", "elements per run per launch"), i64("step", "the launch's number")}},
		{Name: "prefix", Doc: "prod: gs[perm[j]] = g * prefix * suffix; gi[key] = g * suffix of self",
			Args: []host.ArgDecl{inout("gi", "grad_input"), inout("gs", "grad_src"), in("g", "grad_output"), in("self_in", "the input"),
				inout("aux", "running products per target"), in("keys", "sorted targets"), in("perm", "source offsets"),
				in("src", "the values"), bwdErr, i64("n", "positions"), i64("include_self", "1: the input takes part"),
				i64("limit", "elements per run per launch"), i64("step", "the launch's number")}},
	},
}).Init()

var probeArgs = []host.ArgDecl{
	in("table", "2*(slots+1) words"), in("keys", "64-bit keys"), inout("res", "slots (insert) or ids (lookup); -2-done: unfinished"),
	inout("meta", "key count and flags (HT_META_*)"), i64("n", "keys"), i64("slots", "a power of two"),
	i64("max_probes", "probes before a key gives up"), i64("budget", "probes per work-item per launch"),
	i64("step", "the launch's number"),
}

// Hash is the hash table of 64-bit keys (hash_body.h).
var Hash = (&host.FileDecl{
	Name: "hash",
	Variants: []host.Variant{
		variant("k64", "KB=64"),
	},
	Doc:   "a hash table of 64-bit keys: open addressing, linear probing",
	Knobs: tileKnobs,
	Codes: []*host.CodeGroup{HashCodes, HashMeta},
	Entries: []*host.EntryDecl{
		{Name: "insert", Doc: "inserts keys[i]: res[i] = its slot; a new key's value word takes the atomic min of HT_CLAIM | i",
			Args: with([]host.ArgDecl{inout("table", "2*(slots+1) words")}, with(probeArgs[1:], i64("capacity", "keys the table is made for"))...)},
		{Name: "lookup", Doc: "res[i] = the value of keys[i], or -1",
			Args: probeArgs},
		{Name: "mark", Doc: "aux[i] = 1 where input i is the first occurrence of a key new to the table",
			Args: []host.ArgDecl{in("table", "2*(slots+1) words"), in("res", "slots"), out("aux", "int64 flags"), i64("n", "keys"), i64("slots", "slots")}},
		{Name: "commit", Doc: "the first occurrence i of a new key stores the dense id base + aux[i]",
			Args: []host.ArgDecl{inout("table", "2*(slots+1) words"), in("res", "slots"), in("aux", "exclusive scan of the marks"),
				i64("n", "keys"), i64("slots", "slots"), i64("base", "the table's key count before the insert")}},
		{Name: "ids", Doc: "aux[i] = the dense id in slot res[i]",
			Args: []host.ArgDecl{in("table", "2*(slots+1) words"), in("res", "slots"), out("aux", "int64 ids"), i64("n", "keys"), i64("slots", "slots")}},
		{Name: "count", Doc: "inserts keys[i] as insert does: res[i] = its slot, whose value word counts the key's occurrences (from all ones)",
			Args: with([]host.ArgDecl{inout("table", "2*(slots+1) words")}, with(probeArgs[1:], i64("capacity", "keys the table is made for"))...)},
		{Name: "gather", Doc: "the held slots' keys and slots, each work-group's at a run it claims below the table's key count (one atomic per tile, counting it down to 0; slot order within a run, runs in any order)",
			Scratch: true,
			Args: []host.ArgDecl{in("table", "2*(slots+1) words"), out("keys", "the u held keys"), out("held", "their slots"),
				inout("meta", "key count (HT_META_COUNT: u, counted down to 0) and flags"), i64("slots", "slots"), i64("u", "held slots (the table's key count)")}},
		{Name: "rank", Doc: "s = held[perm[i]]: values[i] = its key, counts[i] = its count, and its value word becomes i",
			Args: []host.ArgDecl{inout("table", "2*(slots+1) words"), in("held", "u slots"), in("perm", "the sort of gather's keys"),
				out("values", "u keys"), out("counts", "int64 counts"), i64("u", "held slots"), i64("slots", "slots")}},
	},
}).Init()

// ProbeArgCount is the number of scalar arguments of the probe kernel.
const ProbeArgCount = 20

func probeKernelArgs() []host.ArgDecl {
	a := []host.ArgDecl{out("dst", "int64[ProbeArgCount+3]"), in("src", "int64[ProbeArgCount]")}
	for i := 0; i < ProbeArgCount; i++ {
		a = append(a, i64(string(rune('a'+i))+"x", "a scalar"))
	}
	return a
}

// Probe is a self-check kernel with more arguments than the push-constant
// block holds: it writes dst[i] = src[i] + arg i for each scalar argument,
// then the PROBE_K knob, the local size and the launch's group count, so
// tests and devinfo can prove that argument packing (the Vulkan parameter
// block), knobs and group counts reach kernels intact on every device.
var Probe = (&host.FileDecl{
	Name: "probe",
	Variants: []host.Variant{
		variant("any"),
	},
	Doc:     "argument, knob and group-count self-check",
	Knobs:   []host.KnobDecl{{Name: "PROBE_K", Default: 7, Doc: "a knob the kernel echoes"}},
	Entries: []*host.EntryDecl{{Name: "args", Doc: "echoes its arguments", Args: probeKernelArgs()}},
}).Init()

// Files lists every kernel file, for the generator and the tests; files
// declared in other files of the package add themselves with register.
var Files = []*host.FileDecl{TriIndices, Diag, Scatter, Scan, Radix, Move, Segment, ScatterBwd, Hash, Probe}

var _ = register // used by the decl_*.go files of op families
var _ = registerCodes
