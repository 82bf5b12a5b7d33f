package ops_test

import (
	"errors"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/cmd/accel/internal/fuzzgen"
	"github.com/accelkern/accel/cmd/accel/internal/ops"
)

// The fuzz targets, one per op family: package fuzzgen decodes the
// fuzzer's bytes into an op, its parameters and inputs. Each input runs
// through ops.Run on the reference and on each device, and must either give
// the reference's outputs or be rejected by both with an error wrapping one
// of accel's sentinels. A panic, a hang, a Vulkan validation message (an
// error wrapping none of them) or a wrong output is a finding. `go test`
// replays the seeds below and the corpus in testdata/fuzz; `make fuzz
// FUZZTIME=10m` runs each target for a while.

// checkFuzzCase runs c on the reference and on each device and compares.
func checkFuzzCase(t *testing.T, c fuzzgen.Case) {
	t.Helper()
	if c.Op == "" {
		t.Skip("a valid call too big to fuzz")
	}
	if !c.Representable() {
		t.Skip("input not representable on the host")
	}
	var want map[string]*accel.Tensor
	var werr error
	if !c.DeviceOnly {
		want, werr = ops.Run(nil, c.Op, c.Params, c.Inputs)
		if werr != nil {
			require.NotNil(t, fuzzgen.Sentinel(werr), "reference %s %v: error wraps no sentinel: %v", c.Op, c.Params, werr)
		}
	}
	forEachDevice(t, func(t *testing.T, d *accel.Device) {
		got, err := ops.Run(d, c.Op, c.Params, c.Inputs)
		switch {
		case c.DeviceOnly:
			require.Error(t, err, "%s %v: a huge output must be rejected", c.Op, c.Params)
			require.NotNil(t, fuzzgen.Sentinel(err), "%s %v: device error wraps no sentinel: %v", c.Op, c.Params, err)
		case werr != nil:
			require.Error(t, err, "%s %v: the reference rejects the input (%v), the device does not", c.Op, c.Params, werr)
			require.NotNil(t, fuzzgen.Sentinel(err), "%s %v: device error wraps no sentinel: %v", c.Op, c.Params, err)
		case err != nil:
			// A valid input the device cannot run: a dtype it lacks, or a
			// size past its limits.
			require.NotNil(t, fuzzgen.Sentinel(err), "%s %v: device error wraps no sentinel: %v", c.Op, c.Params, err)
			require.False(t, errors.Is(err, accel.ErrInvalidArgument),
				"%s %v: the device rejects what the reference accepts: %v", c.Op, c.Params, err)
		default:
			require.NoError(t, fuzzgen.Compare(c, want, got))
		}
	})
}

// FuzzTriIndices fuzzes tril_indices and triu_indices.
func FuzzTriIndices(f *testing.F) {
	for _, seed := range [][]byte{{}, {1, 5, 0, 7, 0, 2, 0, 1, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {1, 1, 7, 0, 0, 3, 0, 9, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFuzzCase(t, fuzzgen.DecodeTri(fuzzgen.New(data)))
	})
}

// FuzzDiagonalScatter fuzzes diagonal_scatter on N-D tensors.
func FuzzDiagonalScatter(f *testing.F) {
	for _, seed := range [][]byte{{}, {0, 0, 2, 0, 3, 0, 4, 0, 0, 0, 5, 0, 6, 0}, {3, 0, 3, 0, 2, 0, 2, 0, 2, 0, 1, 0, 9, 0, 10, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzzCase(t, fuzzgen.DecodeDiag(fuzzgen.New(data))) })
}

// FuzzScatter fuzzes scatter, scatter_reduce, put_along_axis,
// take_along_axis and scatter_reduce_backward.
func FuzzScatter(f *testing.F) {
	for _, seed := range [][]byte{{}, {1, 0, 0, 0, 1, 0, 4, 0, 1, 0, 3, 0, 2, 0}, {2, 0, 1, 0, 2, 0, 3, 0, 4, 0, 2, 0, 3, 0, 3, 0, 1, 0},
		{3, 0, 3, 0, 1, 0, 5, 0, 0, 0, 4, 0}, {0, 0, 2, 0, 2, 0, 3, 0, 3, 0, 1, 0, 2, 0, 2, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzzCase(t, fuzzgen.DecodeScatter(fuzzgen.New(data))) })
}

// FuzzPrimitives fuzzes cumsum, compact, sort, unique and segment_reduce.
func FuzzPrimitives(f *testing.F) {
	for _, seed := range [][]byte{{}, {0, 0, 1, 0, 30, 0, 1, 0, 1, 0}, {2, 0, 1, 0, 33, 0, 0, 0, 1, 0, 40, 0, 7, 7, 7, 7},
		{3, 0, 1, 0, 20, 0, 3, 0}, {4, 0, 1, 0, 9, 0, 0, 0, 0, 0, 5, 0, 0, 1}, {1, 0, 2, 0, 3, 0, 4, 0, 2, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFuzzCase(t, fuzzgen.DecodePrim(fuzzgen.New(data)))
	})
}

// TestFuzzDecoders: the decoders reach every op of their family from
// random bytes (a decoder that always skips would fuzz nothing).
func TestFuzzDecoders(t *testing.T) {
	want := map[string][]string{"tri": {"tril_indices", "triu_indices"}, "diag": {"diagonal_scatter"},
		"scatter": {"scatter", "scatter_reduce", "put_along_axis", "take_along_axis", "scatter_reduce_backward", "index_add", "index_reduce"},
		"prim":    {"cumsum", "compact", "sort", "unique", "segment_reduce"},
		"sparse":  {"sparse_div", "sparse_add", "sparse_sub", "sparse_mul", "sparse_div_backward", "sparse_coalesce", "sparse_to_csr", "sparse_to_coo"},
		"indice":  {"get_indice_pairs"}}
	require.Len(t, fuzzgen.Families, len(want))
	for name, dec := range fuzzgen.Families {
		rng := rand.New(rand.NewSource(3))
		seen := map[string]int{}
		for i := 0; i < 400; i++ {
			b := make([]byte, 256)
			rng.Read(b)
			seen[dec(fuzzgen.New(b)).Op]++
		}
		for _, op := range want[name] {
			assert.Greater(t, seen[op], 20, "%s: %s decoded %d times in 400", name, op, seen[op])
		}
	}
}

// FuzzSparse fuzzes the sparse ops: divide, add, subtract, multiply (COO
// and CSR), the divide's gradients, coalescing and the conversions.
func FuzzSparse(f *testing.F) {
	for _, seed := range [][]byte{{}, {0, 0, 0, 0, 0, 0, 3, 0, 2, 0, 4, 0, 5, 0, 9, 0}, {2, 0, 2, 0, 2, 0, 4, 0, 5, 0, 7, 0, 3, 0, 3, 0},
		{4, 0, 1, 0, 0, 0, 2, 0, 3, 0, 3, 0, 6, 0, 1, 0}, {5, 0, 0, 0, 2, 0, 3, 0, 3, 0, 8, 0}, {7, 0, 0, 0, 2, 0, 4, 0, 4, 0, 9, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzzCase(t, fuzzgen.DecodeSparse(fuzzgen.New(data))) })
}

// FuzzIndicePairs fuzzes get_indice_pairs.
func FuzzIndicePairs(f *testing.F) {
	for _, seed := range [][]byte{{}, {2, 0, 1, 0, 3, 0, 4, 0, 5, 0, 2, 0, 1, 0, 0, 0, 20, 0}, {0, 0, 0, 0, 7, 0, 2, 0, 2, 0, 2, 0, 2, 0, 0, 0, 30, 0},
		{1, 0, 2, 0, 3, 0, 3, 0, 3, 0, 1, 0, 4, 0, 1, 0, 9, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzzCase(t, fuzzgen.DecodeIndice(fuzzgen.New(data))) })
}
