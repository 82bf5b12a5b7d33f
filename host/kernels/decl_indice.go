package kernels

import "github.com/accelkern/accel/host"

// IndiceCodes are get_indice_pairs' rules, split policies and the layout of
// its parameter block (indice_body.h).
var IndiceCodes = &host.CodeGroup{Prefix: "IP", Doc: "get_indice_pairs rules, splits and parameter block", Codes: []host.Code{
	{Name: "RULE_CONV", Value: 0, Doc: "regular conv from an input: out*stride = in + padding - kidx*dilation"},
	{Name: "RULE_TCONV", Value: 1, Doc: "transposed conv from an input: out = in*stride - padding + kidx*dilation"},
	{Name: "RULE_SUBM", Value: 2, Doc: "submanifold from an input: out = in - (kidx - ksize/2)*dilation, looked up"},
	{Name: "RULE_INV", Value: 3, Doc: "inverse from a forward output: in = out*stride - padding + kidx*dilation, looked up"},
	{Name: "SPLIT_LL", Value: 0, Doc: "jobs split the rows, cores split the rows"},
	{Name: "SPLIT_LK", Value: 1, Doc: "jobs split the rows, cores split the offsets"},
	{Name: "SPLIT_KL", Value: 2, Doc: "jobs split the offsets, cores split the rows"},
	{Name: "SPLIT_KK", Value: 3, Doc: "jobs and cores split the offsets"},
	{Name: "P_D", Value: 0, Doc: "params[IP_P_D]: spatial dims D"},
	{Name: "P_BATCH", Value: 1, Doc: "params[IP_P_BATCH]: batch size"},
	{Name: "P_K", Value: 2, Doc: "params[IP_P_K]: kernel volume K"},
	{Name: "P_SHAPE", Value: 4, Doc: "params[IP_P_SHAPE + d]: the input spatial shape"},
	{Name: "P_OUT", Value: 8, Doc: "params[IP_P_OUT + d]: the rule's target spatial shape"},
	{Name: "P_KSIZE", Value: 12, Doc: "params[IP_P_KSIZE + d]: kernel size"},
	{Name: "P_STRIDE", Value: 16, Doc: "params[IP_P_STRIDE + d]: stride"},
	{Name: "P_PAD", Value: 20, Doc: "params[IP_P_PAD + d]: padding"},
	{Name: "P_DIL", Value: 24, Doc: "params[IP_P_DIL + d]: dilation"},
	{Name: "P_LEN", Value: 28, Doc: "params holds IP_P_LEN int64 words"},
}}

// Indice is get_indice_pairs, sparse convolution's rule generation
// (indice_body.h).
var Indice = (&host.FileDecl{
	Name:  "indice",
	Doc:   "sparse convolution index pairs (get_indice_pairs): site keys, candidate expansion, pair writes",
	Knobs: tileKnobs,
	Codes: []*host.CodeGroup{IndiceCodes, Err},
	Entries: []*host.EntryDecl{
		{Name: "keys", Doc: "checks row i of indices (batch and coordinates in range) and writes its site key; a bad row records its tile in err[0]",
			Args: []host.ArgDecl{in("indices", "int32 [n, 1+D] rows"), in("params", "int64 parameter block (IP_P_*)"),
				out("keys", "uint64 site keys over the input shape"), inout("err", "the validation flag"), i64("n", "rows")}},
		{Name: "dups", Doc: "sorted site keys: a key equal to its predecessor records its tile in err[0]",
			Args: []host.ArgDecl{in("keys", "sorted uint64 site keys"), inout("err", "the validation flag"), i64("n", "keys")}},
		{Name: "expand", Doc: "the candidates (offset k, row q) of this launch's rows: cnt[k*n + q] = 1 where the rule gives a target (found in the sorted keys for the looked-up rules), else 0; orow[k*n + q] = the found row (looked-up rules)",
			Args: []host.ArgDecl{in("rows", "int32 [n, 1+D] query rows"), in("params", "int64 parameter block"),
				in("skeys", "sorted uint64 site keys (looked-up rules)"), in("sperm", "int64 rows of the sorted keys"),
				out("cnt", "the candidates' flags (32- or 64-bit words; not sorted)"), out("orow", "int32 found rows (looked-up rules)"),
				out("rank", "int32 sorted position of each row (sorted)"),
				i64("n", "rows"), i64("nkeys", "sorted keys"), i64("row0", "this launch's first row"), i64("rows_n", "this launch's rows"),
				i64("jobs", "work-groups that take work"), folded("rule", "IP_RULE", "IP_RULE_*"), folded("split", "IP_SPLIT", "IP_SPLIT_*"),
				folded("wide", "IP_WIDE", "1: 64-bit cnt words"),
				folded("sorted", "IP_SORTED", "1: SUBM over the sites in key order, galloping, orow by sorted position"),
				out("ckey", "uint64 target keys (emit)"),
				folded("emit", "IP_EMIT", "1: CONV/TCONV with cnt scanned: the valid candidates' target keys into ckey[cnt[p]]")}},
		{Name: "flags", Doc: "sorted expansion: cnt[k*n + q] = 1 where orow[k*n + rank[q]] >= 0, else 0",
			Args: []host.ArgDecl{in("orow", "int32 found rows by sorted position"), in("rank", "int32 sorted position of each row"),
				out("cnt", "the candidates' flags"), i64("n", "rows"), i64("count", "candidates n*K"), folded("wide", "IP_WIDE", "1: 64-bit cnt words")}},
		{Name: "outs", Doc: "sorted target keys: the first of each run writes its site into out_indices[seg[j]-1]",
			Args: []host.ArgDecl{in("skeys", "sorted uint64 target keys"), in("seg", "int64 1-based run ids"), in("params", "int64 parameter block"),
				out("outs", "int32 [M, 1+D] sites"), in("err", "the validation flag (skip when set)"), i64("n", "keys")}},
		{Name: "write", Doc: "candidate p = k*n + q: a valid one writes (q, its target's row) at column pos[p] - pos[k*n] of offset k, an invalid one -1 at a column past num[k]; num[k] = pos[(k+1)*n] - pos[k*n]",
			Args: []host.ArgDecl{in("pos", "exclusive scan of the candidates' flags (count+1 words)"), in("orow", "int32 found rows (looked-up rules)"),
				in("rank", "int32 sorted position of each row (lookup 2)"),
				in("crow", "int64 target rows by compacted candidate (other rules)"), out("pairs", "int32 [K, 2, n]"),
				out("num", "int32 [K]"), in("err", "the validation flag (skip when set)"), i64("n", "rows"), i64("count", "candidates n*K"),
				folded("lookup", "IP_LOOKUP", "1: rows through orow, 2: through orow by sorted position (rank)"), folded("wide", "IP_WIDE", "1: 64-bit pos words")}},
		{Name: "search", Doc: "SUBM in rows: this launch's sorted positions j x kernel planes, a merge cursor per plane; the found rows into j's record orow[j*K + k] (and, sym, the mirrored finds into the found sites' records), rank[q] = j",
			Args: []host.ArgDecl{in("rows", "int32 [n, 1+D] sites"), in("params", "int64 parameter block"),
				in("skeys", "sorted uint64 site keys"), in("sperm", "int64 rows of the sorted keys"),
				out("orow", "int32 [n, K] found rows by sorted position (-1: none; filled with -1 first where sym)"),
				out("rank", "int32 sorted position of each row"),
				i64("nkeys", "sorted keys"), i64("row0", "this launch's first sorted position"), i64("rows_n", "this launch's rows"),
				i64("jobs", "work-groups that take work"), i64("sym", "1: every ksize odd, search half the planes and mirror"),
				folded("split", "IP_SPLIT", "IP_SPLIT_*")}},
		{Name: "count", Doc: "rows shape: chunk c copies its rows' records into row order and counts each offset k's found rows among rows [c*chunk, (c+1)*chunk) into cnt[k*chunks + c]",
			Args: []host.ArgDecl{in("orow", "int32 [n, K] found rows by sorted position"), in("rank", "int32 sorted position of each row"),
				out("orowq", "int32 [n, K] found rows by row"), out("cnt", "uint64 [K*chunks] counts"),
				i64("n", "rows"), i64("K", "offsets (<= IP_CURSORS)"), i64("chunk", "rows per chunk"), i64("chunks", "chunks")}},
		{Name: "emit", Doc: "rows shape: tile (chunk c, offset k) writes offset k's pairs of its rows from the scanned counts, the invalid rows' -1 past num[k]",
			Args: []host.ArgDecl{in("orowq", "int32 [n, K] found rows by row"),
				in("cnt", "uint64 exclusive scan of the counts (K*chunks+1 words)"),
				out("pairs", "int32 [K, 2, n]"), out("num", "int32 [K]"), in("err", "the validation flag (skip when set)"),
				i64("n", "rows"), i64("K", "offsets"), i64("chunk", "rows per chunk"), i64("chunks", "chunks")}},
		{Name: "crows", Doc: "CONV/TCONV in rows: this launch's chunks of rows x offsets, each row's targets enumerated per dim; counts each offset k's targets among chunk c's rows into cnt[k*chunks + c], or (emit, cnt scanned) writes their keys into ckey and their rows into offset k's pairs, in row order",
			Args: []host.ArgDecl{in("rows", "int32 [n, 1+D] input sites"), in("params", "int64 parameter block"),
				inout("cnt", "uint64 [K*chunks+1] counts, or (emit) their exclusive scan"),
				out("ckey", "uint64 target keys by compacted candidate (emit)"), out("qrow", "int32 input rows by compacted candidate (emit)"),
				i64("n", "rows"), i64("chunk", "rows per chunk"), i64("chunks", "chunks"), i64("chunk0", "this launch's first chunk"),
				i64("chunks_n", "this launch's chunks"), i64("jobs", "work-groups that take work"),
				folded("rule", "IP_RULE", "IP_RULE_CONV or IP_RULE_TCONV"), folded("split", "IP_SPLIT", "IP_SPLIT_*"),
				folded("emit", "IP_EMIT", "1: cnt scanned, write the keys and the input rows")}},
		{Name: "cpairs", Doc: "CONV/TCONV in rows: column col of offset k gets the pair (qrow, crow)[cnt[k*chunks] + col] below num[k], else -1 in both rows; num[k] from the scanned counts",
			Args: []host.ArgDecl{in("cnt", "uint64 exclusive scan of the counts (K*chunks+1 words)"), in("qrow", "int32 input rows by compacted candidate"),
				in("crow", "int64 target rows by compacted candidate"), out("pairs", "int32 [K, 2, n]"), out("num", "int32 [K]"),
				in("err", "the validation flag (skip when set)"), i64("n", "rows"), i64("count", "n*K"), i64("chunks", "chunks")}},
	},
}).Init()

func init() {
	registerCodes(IndiceCodes)
	register(Indice)
}
