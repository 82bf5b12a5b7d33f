package accel

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// uploadSparse uploads random operands for the runtime tests: sorted CSR
// and unsorted COO with duplicates; t's cleanup releases them.
func uploadSparse(t *testing.T, d *Device, rng *rand.Rand) (xc, yc *SparseCSR, xo, yo *SparseCOO) {
	var err error
	shape := []int64{3, 40, 50}
	xc, err = d.UploadCSR(genCSR(rng, shape, Float32, Int64, spGen{nnz: 600}))
	require.NoError(t, err)
	yc, err = d.UploadCSR(genCSR(rng, shape, Float32, Int32, spGen{nnz: 500}))
	require.NoError(t, err)
	xo, err = d.UploadCOO(genCOO(rng, shape, Float32, Int64, spGen{nnz: 700, dups: true, unsorted: true}))
	require.NoError(t, err)
	yo, err = d.UploadCOO(genCOO(rng, shape, Float32, Int32, spGen{nnz: 400, dups: true, unsorted: true}))
	require.NoError(t, err)
	t.Cleanup(func() {
		xc.Release()
		yc.Release()
		xo.Release()
		yo.Release()
	})
	return xc, yc, xo, yo
}

// sparseSyncBounds (TestSyncBounds): a sparse op waits once for its
// validation flag and the union's size (read together), and where an
// operand must be coalesced, once for each such operand's size and once
// more for the union's; its result is then ready.
func sparseSyncBounds(t *testing.T, d *Device) {
	xc, yc, xo, yo := uploadSparse(t, d, rand.New(rand.NewSource(13)))
	var out *SparseCSR
	w, err := waits(d, func() error {
		var err error
		out, err = d.SparseDivideCSR(xc, yc)
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, int64(1), w, "sparse_div of sorted CSR waits once, for its flag and its size")
	w, err = waits(d, func() error { _, err := out.Values.ToHost(); return err })
	require.NoError(t, err)
	assert.Equal(t, int64(1), w, "sparse_div: its result is ready (ToHost waits once)")
	out.Release()
	var o *SparseCOO
	w, err = waits(d, func() error {
		var err error
		o, err = d.SparseDivide(xo, yo)
		return err
	})
	require.NoError(t, err)
	if up, _ := d.bucketEligible(&spOperand{coo: xo, n: xo.Nnz()}, &spOperand{coo: yo, n: yo.Nnz()}); up.Strategy == unionByBuckets {
		assert.Equal(t, int64(2), w, "sparse_div of unsorted COO (bucket union): flag and bucket sizes, the union's size")
	} else {
		assert.Equal(t, int64(4), w, "sparse_div of unsorted COO: flag and size, two coalesced sizes, the union's size")
	}
	// a coalesced result skips the check of its order and the coalescing
	w, err = waits(d, func() error {
		r, err := d.SparseMultiply(o, o)
		if err == nil {
			r.Release()
		}
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, int64(1), w, "sparse_mul of coalesced operands")
	o.Release()
}

// sparseFaultCases (TestFaultInjection): the sparse ops and conversions.
func sparseFaultCases(t *testing.T, d *Device) []faultCase {
	xc, yc, xo, yo := uploadSparse(t, d, rand.New(rand.NewSource(14)))
	coo := func(s *SparseCOO, err error) error {
		if err == nil {
			s.Release()
		}
		return err
	}
	csr := func(s *SparseCSR, err error) error {
		if err == nil {
			s.Release()
		}
		return err
	}
	dense := upload(t, d, Float32, []int64{4, 30}, make([]float32, 120))
	return []faultCase{
		{"sparse_div", func() error { return coo(d.SparseDivide(xo, yo)) }},
		{"sparse_div", func() error { return csr(d.SparseDivideCSR(xc, yc)) }},
		{"sparse_mul", func() error { // and its backward
			r, err := d.SparseBinaryCSR(SparseMulOp, xc, yc)
			if err != nil {
				return err
			}
			defer r.Release()
			o, gx, gy, err := d.SparseBinaryBackwardCSR(SparseMulOp, xc, yc, r.Values)
			if err == nil {
				o.Release()
				gx.Release()
				gy.Release()
			}
			return err
		}},
		{"sparse_coalesce", func() error { return coo(d.Coalesce(xo)) }},
		{"sparse_to_csr", func() error { return csr(d.COOToCSR(xo)) }},
		{"sparse_to_coo", func() error { return coo(d.CSRToCOO(yc)) }},
		{"sparse_to_dense", func() error {
			x, err := d.SparseToDense(xo)
			if err == nil {
				x.Release()
			}
			return err
		}},
		{"dense_to_csr", func() error { return csr(d.DenseToCSR(dense)) }},
	}
}
