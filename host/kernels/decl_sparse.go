package kernels

import "github.com/accelkern/accel/host"

// SparseCodes are the elementwise sparse ops and the words of the sparse
// ops' flag buffer.
var SparseCodes = &host.CodeGroup{Prefix: "SP", Doc: "sparse ops and flag words", Codes: []host.Code{
	{Name: "ADD", Value: 0}, {Name: "SUB", Value: 1}, {Name: "MUL", Value: 2}, {Name: "DIV", Value: 3},
	{Name: "FLAG_X_UNSORTED", Value: 2, Doc: "flag word: x's keys are not strictly ascending"},
	{Name: "FLAG_Y_UNSORTED", Value: 3, Doc: "flag word: y's keys are not strictly ascending"},
	{Name: "FLAG_TOTAL", Value: 4, Doc: "flag words 4-5: the union's size (a copy of the scan's total)"},
	{Name: "FLAG_WORDS", Value: 6, Doc: "words of the flag buffer (0: validation, 1: unfinished run)"},
	{Name: "UDIG", Value: 14, Doc: "the bucket union's most bits per LSD radix digit"},
	{Name: "UCNT", Value: 3 << 14, Doc: "the bucket union's counters per slot (3 digits: 32-bit records)"},
}}

var spErr = inout("err", "flag words: [0] the validation flag (atomic min of the tile), [2..3] unsorted marks (SP_FLAG_*)")

var spWide = folded("wide", "SP_WIDE", "1: int64 indices, 0: int32")

var (
	spWideX = folded("wide_x", "SP_WIDE_X", "1: x's columns are int64, 0: int32")
	spWideY = folded("wide_y", "SP_WIDE_Y", "1: y's columns are int64, 0: int32")
)

// Sparse is the sparse COO/CSR tensors and their elementwise ops
// (sparse_body.h).
var Sparse = (&host.FileDecl{
	Name:  "sparse",
	Doc:   "sparse COO/CSR tensors: keys, merges and the elementwise ops",
	Knobs: tileKnobs,
	Codes: []*host.CodeGroup{Err, SparseCodes},
	Entries: []*host.EntryDecl{
		{Name: "coo_keys", Doc: "keys[k] = the row-major linear index of COO entry k; an index out of the shape flags its tile",
			Args: []host.ArgDecl{in("indices", "[ndim, nnz] int32 or int64"), out("keys", "int64 keys"), spErr,
				in("shape", "int64 [ndim]"), i64("ndim", "dimensions"), i64("nnz", "entries"), spWide}},
		{Name: "csr_totals", Doc: "tot[b] = crow[b*(R+1)+R] (each batch's entry count)",
			Args: []host.ArgDecl{in("crow", "row pointers"), out("tot", "int64 [batch]"), i64("batch", "batches"),
				i64("rows", "rows per batch"), spWide}},
		{Name: "csr_ptrs", Doc: "gptr[b*R+r] = off[b] + crow[b*(R+1)+r] and gptr[B*R] = the total; a bad pointer flags tile 0",
			Args: []host.ArgDecl{in("crow", "row pointers"), in("off", "int64 batch offsets (has_off)"), out("gptr", "int64 [B*R+1]"),
				spErr, i64("batch", "batches"), i64("rows", "rows per batch"), i64("nnz", "entries"), spWide,
				i64("has_off", "1: off holds the batches' offsets, 0: one batch")}},
		{Name: "rowmerge", Doc: "a merge path of rows and entries: mode 0, keys[j] = row*C + cols[j] (a bad column flags its tile); mode 1, gstart[g] = the first entry of row g in sorted keys",
			Args: []host.ArgDecl{in("gptr", "int64 [G+1] global row pointers (mode 0)"), in("cols", "columns (mode 0)"),
				inout("keys", "int64 keys: written (mode 0) or sorted unique (mode 1)"), out("gstart", "int64 [G+1] (mode 1)"),
				spErr, i64("grows", "G: batch*rows"), i64("cols_n", "columns"), i64("n", "entries"),
				i64("chunk", "rows and entries per work-item"), spWide, folded("mode", "SP_MODE", "0: keys of CSR entries, 1: row starts of keys")}},
		{Name: "sorted", Doc: "err[slot] = 1 where keys[k] <= keys[k-1]",
			Args: []host.ArgDecl{in("keys", "int64 keys"), spErr, i64("n", "keys"), i64("slot", "the flag word")}},
		{Name: "runs", Doc: "over sorted keys with seg their inclusive run-start scan: rid[i] = seg[i]-1; run starts write ukeys",
			Args: []host.ArgDecl{in("keys", "sorted keys"), in("seg", "int64 1-based run ids"), out("rid", "int64 0-based run ids"),
				out("ukeys", "the distinct keys"), i64("n", "keys")}},
		{Name: "count", Doc: "a merge path of two ascending key lists: cnt[c] = union entries starting in chunk c; keys out of order set the unsorted marks",
			Args: []host.ArgDecl{in("kx", "x's keys"), in("ky", "y's keys"), out("cnt", "int64 per chunk"), spErr,
				i64("nx", "x's keys"), i64("ny", "y's keys"), i64("chunk", "merged positions per work-item")}},
		{Name: "emit", Doc: "the same walk after an exclusive scan of the counts: each union entry's key, coordinates, value and gradients",
			Args: []host.ArgDecl{in("kx", "x's keys"), in("ky", "y's keys"), in("off", "int64 exclusive scan of the counts"),
				in("xv", "x's values"), in("yv", "y's values"), in("gout", "the result's gradient (grad)"),
				out("ukeys", "the result's keys"), out("uidx", "[ndim, u] coordinates"), out("uval", "the result's values"),
				out("gx", "grad x (grad)"), out("gy", "grad y (grad)"), in("shape", "int64 [ndim] (the trailing dims written)"),
				i64("ndim", "coordinates written"), i64("nx", "x's entries"), i64("ny", "y's entries"), i64("u", "union entries"),
				i64("chunk", "merged positions per work-item"),
				folded("op", "SP_OP", "SP_ADD .. SP_DIV"), folded("grad", "SP_GRAD", "1: write the gradients")}},
		{Name: "rcount", Doc: "the CPU-shaped row union: cnt[c] = union entries of chunk c of the rows' markers and entries; its share of each operand's entries checked for range and ascent within rows",
			Args: []host.ArgDecl{in("gx", "int64 [G+1] x's global row pointers"), in("gy", "int64 [G+1] y's"),
				in("cx", "x's columns (or keys)"), in("cy", "y's columns (or keys)"), out("cnt", "int64 per chunk"), spErr,
				i64("g", "G: rows"), i64("nx", "x's entries"), i64("ny", "y's entries"), i64("chunk", "positions per work-item"),
				i64("cols_n", "columns (> 0: checked)"), spWideX, spWideY}},
		{Name: "remit", Doc: "the same walk after an exclusive scan of the counts: each union entry's column (or coordinates), value and gradients, and gstart[r] = where row r starts",
			Args: []host.ArgDecl{in("gx", "int64 [G+1] x's global row pointers"), in("gy", "int64 [G+1] y's"),
				in("cx", "x's columns (or keys)"), in("cy", "y's columns (or keys)"), in("off", "int64 exclusive scan of the counts"),
				in("xv", "x's values"), in("yv", "y's values"), in("gout", "the result's gradient (grad)"),
				out("uidx", "[ndim, u] columns or coordinates"), out("uval", "the result's values"),
				out("gxo", "grad x (grad)"), out("gyo", "grad y (grad)"), out("gstart", "int64 [G+1] row starts"),
				in("shape", "int64 [ndim] (ndim > 1: the keys' coordinates)"), i64("ndim", "coordinates written"),
				i64("g", "G: rows"), i64("nx", "x's entries"), i64("ny", "y's entries"), i64("u", "union entries"),
				i64("chunk", "positions per work-item"), spWideX, spWideY,
				folded("op", "SP_OP", "SP_ADD .. SP_DIV"), folded("grad", "SP_GRAD", "1: write the gradients")}},
		{Name: "bhist", Doc: "cnt[keys[i] >> shift] += 1 (uint32 atomics)",
			Args: []host.ArgDecl{in("keys", "int64 keys"), inout("cnt", "uint32 [buckets] counts"), i64("n", "keys"), i64("shift", "bits below the bucket")}},
		{Name: "bscatter", Doc: "each key, its position and value into its bucket, at start[b] + (the bucket's count, decremented)",
			Args: []host.ArgDecl{in("keys", "int64 keys"), in("vals", "values"), in("start", "uint32 [buckets] exclusive scan of the counts"),
				inout("cnt", "uint32 [buckets] counts (decremented to 0)"),
				out("rec", "records by bucket: int64 key, uint32 input position, value (4 words with float32, 6 with float64)"),
				i64("n", "keys"), i64("shift", "bits below the bucket")}},
		{Name: "bsort", Doc: "sorts each bucket by (key, position); ucnt[b] = its distinct keys",
			Args: []host.ArgDecl{in("start", "uint32 [buckets] bucket starts"), inout("rec", "records by bucket"),
				out("ucnt", "int64 [buckets] distinct keys"), i64("nb", "buckets"), i64("n", "keys")}},
		{Name: "bsum", Doc: "each distinct key of the sorted buckets and its values summed in input order from -0, from uoff[b] on",
			Args: []host.ArgDecl{in("start", "uint32 [buckets] bucket starts"), in("rec", "sorted records"),
				in("uoff", "int64 exclusive scan of the distinct counts"), out("ukeys", "the distinct keys"), out("uvals", "their sums"),
				i64("nb", "buckets"), i64("n", "keys")}},
		{Name: "uhist", Doc: "the CPU bucket union of two COO operands, its counts: chunk c of the entries of x then y counts them per bucket of 2*key+(is y) >> shift into tab[b*chunks+c] and err[SP_FLAG_WORDS+b] (atomic adds); a coordinate outside the shape flags its tile",
			Args: []host.ArgDecl{in("xi", "x's indices [ndim, nx]"), in("yi", "y's indices [ndim, ny]"), in("shape", "int64 [ndim]"),
				out("tab", "uint32 [nb*chunks] counts by bucket, then chunk"), spErr,
				i64("ndim", "dimensions"), i64("nx", "x's entries"), i64("ny", "y's entries"), i64("ch", "entries per chunk"),
				i64("nb", "buckets"), i64("shift", "low key bits in a record (1..32)"), spWideX, spWideY}},
		{Name: "upart", Doc: "the bucket union's partition, after an exclusive scan of tab: chunk c places the records of its entries (the tagged key's low shift bits, the value) at their buckets' positions, in input order",
			Args: []host.ArgDecl{in("xi", "x's indices [ndim, nx]"), in("yi", "y's indices [ndim, ny]"), in("xv", "x's values"), in("yv", "y's values"),
				in("shape", "int64 [ndim]"), inout("tab", "uint32 [nb*chunks] exclusive scan of the counts (advanced)"),
				out("rk", "uint32 [nx+ny] the records' low key bits, by bucket"), out("rv", "[nx+ny] the records' values"),
				i64("ndim", "dimensions"), i64("nx", "x's entries"), i64("ny", "y's entries"), i64("ch", "entries per chunk"),
				i64("nb", "buckets"), i64("shift", "low key bits in a record (1..32)"), spWideX, spWideY}},
		{Name: "usort", Doc: "the bucket union's sort: each work-group (local size 1, its own slot of sk, sv, cnt) sorts its buckets by a stable LSD radix sort of the records' low bits, and writes over each bucket's records its keys' low bits and op(x's sum, y's sum) (with grad: x's sum, and y's into ub), ucnt[b] = the bucket's keys",
			Args: []host.ArgDecl{inout("rk", "records' low key bits by bucket; then the union keys' low bits"),
				inout("rv", "records' values by bucket; then op(a, b) (grad: a)"), out("ub", "[nx+ny] b (grad)"),
				in("err", "flag words, then uint32 [nb] bucket sizes"), in("bst", "int64 [nb] exclusive scan of the bucket sizes"),
				inout("sk", "uint32 [slots*2*cap] slot records' keys"), inout("sv", "[slots*2*cap] slot records' values"),
				inout("cnt", "uint32 [slots*SP_UCNT] slot counters"), out("ucnt", "int64 [nb] union keys per bucket"),
				i64("nb", "buckets"), i64("shift", "low key bits in a record"), i64("cap", "records per slot (the largest bucket)"),
				folded("op", "SP_OP", "SP_ADD .. SP_DIV"), folded("grad", "SP_GRAD", "1: keep both sums for the gradients")}},
		{Name: "uemit", Doc: "the bucket union's result after an exclusive scan of ucnt: each union entry's coordinates (a running quotient over the ascending keys), value and gradients",
			Args: []host.ArgDecl{in("uk", "union keys' low bits"), in("ua", "op(a, b) (grad: a)"), in("ub", "b (grad)"),
				in("bst", "int64 [nb] bucket starts in uk"), in("uoff", "int64 [nb] exclusive scan of the union counts"),
				in("gout", "the result's gradient (grad)"), out("uidx", "[ndim, u] coordinates"), out("uval", "the result's values"),
				out("gxo", "grad x (grad)"), out("gyo", "grad y (grad)"), in("shape", "int64 [ndim]"), i64("ndim", "dimensions"),
				i64("nb", "buckets"), i64("shift", "low key bits in a record"), i64("u", "union entries"),
				folded("op", "SP_OP", "SP_ADD .. SP_DIV"), folded("grad", "SP_GRAD", "1: write the gradients")}},
		{Name: "unkey", Doc: "idx[d*n+k] = coordinate d of keys[k]",
			Args: []host.ArgDecl{in("keys", "int64 keys"), out("idx", "[ndim, n]"), in("shape", "int64 [ndim]"),
				i64("ndim", "dimensions"), i64("n", "keys")}},
		{Name: "crows", Doc: "crow[b*(R+1)+r] = gstart[b*R+r] - gstart[b*R] (each batch's pointers restart at 0)",
			Args: []host.ArgDecl{in("gstart", "int64 [B*R+1] global row starts"), out("crow", "int64 [B*(R+1)]"),
				i64("batch", "batches"), i64("rows", "rows per batch")}},
		{Name: "to_dense", Doc: "dense[keys[k]] = vals[k]",
			Args: []host.ArgDecl{in("keys", "unique keys"), in("vals", "values"), inout("dense", "the dense tensor"), i64("n", "keys")}},
		{Name: "nonzero", Doc: "nz[i] = dense[i] != 0 (int64)",
			Args: []host.ArgDecl{in("dense", "the dense tensor"), out("nz", "int64 flags"), i64("n", "elements")}},
		{Name: "from_dense", Doc: "where dense[i] != 0: keys[pos[i]] = i, vals[pos[i]] = dense[i]",
			Args: []host.ArgDecl{in("dense", "the dense tensor"), in("pos", "exclusive scan of the flags"), out("keys", "int64 keys"),
				out("vals", "values"), i64("n", "elements")}},
	},
}).Init()

func init() {
	register(Sparse)
	registerCodes(SparseCodes)
}
