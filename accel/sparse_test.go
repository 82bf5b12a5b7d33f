package accel

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/reference"
)

// spGen describes a random sparse operand.
type spGen struct {
	nnz      int
	dups     bool // repeat some coordinates
	unsorted bool // shuffle the entries
	specials bool // NaN, +-inf, +-0 among the values
	pattern  []int64
}

var spSpecials = []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN()}

// spValue is a random value, or a special one.
func spValue(rng *rand.Rand, specials bool) float64 {
	if specials && rng.Intn(3) == 0 {
		return spSpecials[rng.Intn(len(spSpecials))]
	}
	return math.Round(rng.NormFloat64()*1e3) / 64
}

// spKeys returns g.nnz linear keys below size: sorted unique unless asked
// otherwise (or the given pattern).
func spKeys(rng *rand.Rand, size int64, g spGen) []int64 {
	if g.pattern != nil {
		return slices.Clone(g.pattern)
	}
	if size == 0 {
		return []int64{}
	}
	set := map[int64]bool{}
	var keys []int64
	for len(keys) < g.nnz && int64(len(set)) < size {
		k := rng.Int63n(size)
		if !set[k] {
			set[k] = true
			keys = append(keys, k)
		}
	}
	if g.dups {
		for i := 0; i < g.nnz/5+1 && len(keys) > 0; i++ {
			keys = append(keys, keys[rng.Intn(len(keys))])
		}
	}
	if !g.unsorted {
		sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
	} else {
		rng.Shuffle(len(keys), func(a, b int) { keys[a], keys[b] = keys[b], keys[a] })
	}
	if keys == nil {
		keys = []int64{}
	}
	return keys
}

func spValues(rng *rand.Rand, dt DType, n int, specials bool) *Tensor {
	v := make([]float64, n)
	for i := range v {
		v[i] = spValue(rng, specials)
	}
	if dt == Float32 {
		f := make([]float32, n)
		for i, x := range v {
			f[i] = float32(x)
		}
		return tensorOf(Float32, f)
	}
	return tensorOf(Float64, v)
}

func spIndexTensor(idt DType, shape []int64, v []int64) *Tensor {
	if idt == Int64 {
		t, _ := fromSlice(Int64, shape, v)
		return t
	}
	w := make([]int32, len(v))
	for i, x := range v {
		w[i] = int32(x)
	}
	t, _ := fromSlice(Int32, shape, w)
	return t
}

func genCOO(rng *rand.Rand, shape []int64, dt, idt DType, g spGen) HostCOO {
	size, _ := reference.SparseSize(shape)
	keys := spKeys(rng, size, g)
	n := int64(len(keys))
	idx := make([]int64, int64(len(shape))*n)
	for k, key := range keys {
		for d := len(shape) - 1; d >= 0; d-- {
			idx[int64(d)*n+int64(k)] = key % shape[d]
			key /= shape[d]
		}
	}
	return HostCOO{Indices: spIndexTensor(idt, []int64{int64(len(shape)), n}, idx), Values: spValues(rng, dt, len(keys), g.specials), Shape: shape}
}

// genCSR builds a CSR operand: rows in order, columns within a row
// shuffled when unsorted.
func genCSR(rng *rand.Rand, shape []int64, dt, idt DType, g spGen) HostCSR {
	uns := g.unsorted
	g.unsorted = false
	size, _ := reference.SparseSize(shape)
	keys := spKeys(rng, size, g)
	if g.dups {
		sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
	}
	b, r, c := reference.CSRDims(shape)
	crows := make([]int64, b*(r+1))
	cols := make([]int64, len(keys))
	for k, key := range keys {
		row := key / c
		cols[k] = key % c
		crows[(row/r)*(r+1)+row%r+1]++
	}
	for bi := int64(0); bi < b; bi++ {
		for i := int64(1); i <= r; i++ {
			crows[bi*(r+1)+i] += crows[bi*(r+1)+i-1]
		}
	}
	if uns { // shuffle within rows
		off := int64(0)
		for bi := int64(0); bi < b; bi++ {
			for i := int64(0); i < r; i++ {
				row := cols[off+crows[bi*(r+1)+i] : off+crows[bi*(r+1)+i+1]]
				rng.Shuffle(len(row), func(a, b int) { row[a], row[b] = row[b], row[a] })
			}
			off += crows[bi*(r+1)+r]
		}
	}
	return HostCSR{Crows: spIndexTensor(idt, crowShape(shape), crows), Cols: spIndexTensor(idt, []int64{int64(len(cols))}, cols),
		Values: spValues(rng, dt, len(keys), g.specials), Shape: shape}
}

// sameFloats compares float tensors bit for bit, any NaN equal to any NaN.
func sameFloats(t *testing.T, want, got *Tensor, what string) {
	t.Helper()
	require.Equal(t, want.dtype, got.dtype, what)
	require.Equal(t, want.Len(), got.Len(), what)
	f := func(x *Tensor, i int) (uint64, bool) {
		if x.dtype == Float32 {
			v := x.Float32s()[i]
			return uint64(math.Float32bits(v)), v != v
		}
		v := x.Float64s()[i]
		return math.Float64bits(v), v != v
	}
	for i := 0; i < int(want.Len()); i++ {
		wb, wn := f(want, i)
		gb, gn := f(got, i)
		if wn && gn {
			continue
		}
		if wb != gb {
			require.Failf(t, "values differ", "%s: element %d: want bits %#x, got %#x", what, i, wb, gb)
		}
	}
}

func sameCOO(t *testing.T, want HostCOO, got *SparseCOO, what string) {
	t.Helper()
	h, err := got.ToHost()
	require.NoError(t, err, what)
	require.Equal(t, want.Shape, h.Shape, what)
	require.True(t, got.Coalesced, what)
	requireElems(t, want.Indices.Int64s(), h.Indices.Int64s(), "%s: indices", what)
	require.Equal(t, want.Indices.shape, h.Indices.shape, what)
	sameFloats(t, want.Values, h.Values, what+": values")
}

func sameCSR(t *testing.T, want HostCSR, got *SparseCSR, what string) {
	t.Helper()
	h, err := got.ToHost()
	require.NoError(t, err, what)
	require.Equal(t, want.Shape, h.Shape, what)
	requireElems(t, want.Crows.Int64s(), h.Crows.Int64s(), "%s: crows", what)
	require.Equal(t, want.Crows.shape, h.Crows.shape, what)
	requireElems(t, want.Cols.Int64s(), h.Cols.Int64s(), "%s: cols", what)
	sameFloats(t, want.Values, h.Values, what+": values")
}

var spOps = []SparseOp{SparseAddOp, SparseSubOp, SparseMulOp, SparseDivOp}

// spCase is a pair of operand generators under a name.
type spCase struct {
	name string
	x, y spGen
}

func spCases(size int) []spCase {
	n := size / 3
	return []spCase{
		{"random", spGen{nnz: n, specials: true}, spGen{nnz: n, specials: true}},
		{"unsorted_dups", spGen{nnz: n, dups: true, unsorted: true, specials: true}, spGen{nnz: n, dups: true, unsorted: true}},
		{"both_empty", spGen{}, spGen{}},
		{"x_empty", spGen{}, spGen{nnz: n}},
		{"y_empty", spGen{nnz: n, specials: true}, spGen{}},
		{"dense", spGen{nnz: size, specials: true}, spGen{nnz: size, specials: true}},
	}
}

// forEachSparsePlan runs f on d under each union and coalescing plan: the
// device's own; the GPU-shaped merge path with the radix sort; the
// CPU-shaped rows in chunks of 7 positions (rows split across chunks,
// pairs straddle their ends) with buckets (of a few high bits where no
// loop limit forbids long buckets: they take the heapsort), once with
// the driver's choice of one pass or two and once with the other. The
// forced plans turn the bucket union of COO operands off
// (TestSparseUnionBuckets forces it on).
func forEachSparsePlan(t *testing.T, d *Device, f func(t *testing.T)) {
	defer func() { plans(d).sparseFn, plans(d).coalesceFn, plans(d).unionFn = nil, nil, nil }()
	noUnion := func(unionPlan, int64, int) unionPlan { return unionPlan{} }
	for _, p := range []struct {
		name string
		hook func(sp sparsePlan, total int64) sparsePlan
		co   func(cp coalescePlan, n int64, keyBits int) coalescePlan
	}{
		{"default", nil, nil},
		{"mergepath_radix", func(sparsePlan, int64) sparsePlan { return sparsePlan{Strategy: sparseByMergePath} },
			func(coalescePlan, int64, int) coalescePlan {
				return coalescePlan{Strategy: coalesceByRadix}
			}},
		{"rows7_buckets", func(_ sparsePlan, total int64) sparsePlan { return planSparseRows(d.caps, total, 7) },
			func(_ coalescePlan, n int64, keyBits int) coalescePlan {
				cp := planCoalesceBuckets(n, keyBits)
				if d.caps.LoopLimit == 0 { // a long bucket's heapsort would pass a loop limit
					cp.BucketBits = min(cp.BucketBits, 2)
				}
				return cp
			}},
	} {
		plans(d).sparseFn, plans(d).coalesceFn, plans(d).unionFn = p.hook, p.co, nil
		if p.hook != nil {
			plans(d).unionFn = noUnion
		}
		t.Run(p.name, f)
		if p.name == "rows7_buckets" {
			plans(d).sparseFn = func(_ sparsePlan, total int64) sparsePlan {
				sp := planSparseRows(d.caps, total, 7)
				sp.OnePass = !sp.OnePass
				return sp
			}
			t.Run("rows7_flipped", f)
		}
	}
}

// The row union on random CSR operands whose rows mix long runs, empty
// stretches and single entries, in chunks of a few positions up to the
// planner's (chunk ends inside long rows, on markers, between a pair's
// halves), one pass and two, with x's and y's index dtypes differing.
func TestSparseRowsRandom(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		defer func() { plans(d).sparseFn = nil }()
		rng := rand.New(rand.NewSource(45))
		for it := 0; it < 6; it++ {
			shape := []int64{int64(1 + rng.Intn(40)), int64(1 + rng.Intn(300))}
			if it%3 == 2 {
				shape = append([]int64{int64(1 + rng.Intn(4))}, shape...)
			}
			b, rows, cols := reference.CSRDims(shape)
			// each row empty, short, or long (up to every column)
			var kx, ky []int64
			for r := int64(0); r < b*rows; r++ {
				for _, keys := range []*[]int64{&kx, &ky} {
					n := []int64{0, 0, 1, 3, cols / 2, cols}[rng.Intn(6)]
					for c := int64(0); c < cols; c++ {
						if rng.Int63n(cols) < n {
							*keys = append(*keys, r*cols+c)
						}
					}
				}
			}
			dt := []DType{Float32, Float64}[it%2]
			idx, idy := []DType{Int64, Int32}[it%2], []DType{Int32, Int64}[(it/2)%2]
			x := genCSR(rng, shape, dt, idx, spGen{pattern: kx, specials: true})
			y := genCSR(rng, shape, dt, idy, spGen{pattern: ky, specials: true})
			dx, err := d.UploadCSR(x)
			require.NoError(t, err)
			dy, err := d.UploadCSR(y)
			require.NoError(t, err)
			op := spOps[it%len(spOps)]
			want, err := RefSparseBinaryCSR(op, x, y)
			require.NoError(t, err)
			for _, chunk := range []int64{1, 2, 3, 5, 16, 0} {
				for _, one := range []bool{false, true} {
					plans(d).sparseFn = func(_ sparsePlan, total int64) sparsePlan {
						sp := planSparseRows(d.caps, total, chunk)
						sp.OnePass = one
						return sp
					}
					what := fmt.Sprintf("%v %s %s x %s y %s chunk %d one pass %v", shape, op, dt, idx, idy, chunk, one)
					got, err := d.SparseBinaryCSR(op, dx, dy)
					require.NoError(t, err, what)
					sameCSR(t, want, got, what)
					got.Release()
				}
			}
			dx.Release()
			dy.Release()
		}
	})
}

func TestSparseBinaryCOO(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		forEachSparsePlan(t, d, func(t *testing.T) { testSparseBinaryCOO(t, d) })
	})
}

func testSparseBinaryCOO(t *testing.T, d *Device) {
	{
		rng := rand.New(rand.NewSource(41))
		shapes := [][]int64{{7}, {5, 6}, {3, 4, 5}, {2, 3, 2, 4}, {0, 4}, {1, 1}, {40, 1000}}
		for _, shape := range shapes {
			size, _ := reference.SparseSize(shape)
			for ci, c := range spCases(int(size)) {
				dt := []DType{Float32, Float64}[ci%2]
				idt := []DType{Int64, Int32}[(ci/2)%2]
				x := genCOO(rng, shape, dt, idt, c.x)
				y := genCOO(rng, shape, dt, idt, c.y)
				if c.name == "dense" { // identical patterns
					y = HostCOO{Indices: x.Indices, Values: spValues(rng, dt, int(x.Values.Len()), true), Shape: shape}
				}
				dx, err := d.UploadCOO(x)
				require.NoError(t, err)
				dy, err := d.UploadCOO(y)
				require.NoError(t, err)
				for _, op := range spOps {
					what := fmt.Sprintf("%v %s %s %s", shape, c.name, dt, op)
					want, err := RefSparseBinary(op, x, y)
					require.NoError(t, err, what)
					got, err := d.SparseBinary(op, dx, dy)
					require.NoError(t, err, what)
					sameCOO(t, want, got, what)
					got.Release()
				}
				// the gradients, on the union pattern
				want, err := RefSparseBinary(SparseDivOp, x, y)
				require.NoError(t, err)
				g := spValues(rng, dt, int(want.Values.Len()), false)
				dg := mustUpload(t, d, g)
				for _, op := range spOps {
					sameBackwardCOO(t, d, op, x, y, dx, dy, g, dg, fmt.Sprintf("%v %s %s %s backward", shape, c.name, dt, op))
				}
				dg.Release()
				dx.Release()
				dy.Release()
			}
		}
	}
}

// sameBackwardCOO checks op's backward on d (operands dx, dy of x, y;
// gradient dg of g) against the reference.
func sameBackwardCOO(t *testing.T, d *Device, op SparseOp, x, y HostCOO, dx, dy *SparseCOO, g *Tensor, dg *DeviceTensor, what string) {
	t.Helper()
	wo, wx, wy, err := RefSparseBinaryBackward(op, x, y, g)
	require.NoError(t, err, what)
	out, gx, gy, err := d.SparseBinaryBackward(op, dx, dy, dg)
	require.NoError(t, err, what)
	sameCOO(t, wo, out, what)
	sameFloats(t, wx, mustHost(t, gx), what+": grad_x")
	sameFloats(t, wy, mustHost(t, gy), what+": grad_y")
	out.Release()
}

// checkCSROp checks op of the CSR operands x and y (dx, dy on d) against
// the reference, bit for bit, and for divide its backward too, for a
// random gradient.
func checkCSROp(t *testing.T, d *Device, rng *rand.Rand, op SparseOp, x, y HostCSR, dx, dy *SparseCSR, what string) {
	t.Helper()
	want, err := RefSparseBinaryCSR(op, x, y)
	require.NoError(t, err, what)
	got, err := d.SparseBinaryCSR(op, dx, dy)
	require.NoError(t, err, what)
	sameCSR(t, want, got, what)
	got.Release()
	if op != SparseDivOp {
		return
	}
	checkCSRBackward(t, d, op, x, y, dx, dy, spValues(rng, want.Values.dtype, int(want.Values.Len()), false), what)
}

// checkCSRBackward checks op's backward on the device against the
// reference's bits for the result's gradient g.
func checkCSRBackward(t *testing.T, d *Device, op SparseOp, x, y HostCSR, dx, dy *SparseCSR, g *Tensor, what string) {
	t.Helper()
	dg := mustUpload(t, d, g)
	defer dg.Release()
	wo, wx, wy, err := RefSparseBinaryBackwardCSR(op, x, y, g)
	require.NoError(t, err, what)
	out, gx, gy, err := d.SparseBinaryBackwardCSR(op, dx, dy, dg)
	require.NoError(t, err, what)
	sameCSR(t, wo, out, what+" backward")
	sameFloats(t, wx, mustHost(t, gx), what+": grad_x")
	sameFloats(t, wy, mustHost(t, gy), what+": grad_y")
	out.Release()
}

func TestSparseBinaryCSR(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		forEachSparsePlan(t, d, func(t *testing.T) { testSparseBinaryCSR(t, d) })
	})
}

func testSparseBinaryCSR(t *testing.T, d *Device) {
	{
		rng := rand.New(rand.NewSource(42))
		shapes := [][]int64{{6, 7}, {3, 5, 6}, {1, 1}, {0, 3}, {4, 0}, {2, 0, 3}, {64, 300}, {5, 8, 40}}
		for _, shape := range shapes {
			size, _ := reference.SparseSize(shape)
			for ci, c := range spCases(int(size)) {
				dt := []DType{Float32, Float64}[ci%2]
				idt := []DType{Int64, Int32}[(ci/2)%2]
				x := genCSR(rng, shape, dt, idt, c.x)
				y := genCSR(rng, shape, dt, idt, c.y)
				dx, err := d.UploadCSR(x)
				require.NoError(t, err)
				dy, err := d.UploadCSR(y)
				require.NoError(t, err)
				for _, op := range spOps {
					checkCSROp(t, d, rng, op, x, y, dx, dy, fmt.Sprintf("%v %s %s %s", shape, c.name, dt, op))
				}
				dx.Release()
				dy.Release()
			}
		}
	}
}

// Rows with very many entries beside empty ones, and a disjoint pair: the
// merge balances by positions, not rows.
func TestSparseSkewedRows(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(43))
		shape := []int64{300, 20000}
		var kx, ky []int64
		for c := int64(0); c < 20000; c += 2 { // row 7: 10000 entries each, disjoint
			kx = append(kx, 7*20000+c)
			ky = append(ky, 7*20000+c+1)
		}
		kx = append(kx, 299*20000+5)
		x := genCSR(rng, shape, Float32, Int64, spGen{pattern: kx, specials: true})
		y := genCSR(rng, shape, Float32, Int64, spGen{pattern: ky})
		dx, err := d.UploadCSR(x)
		require.NoError(t, err)
		defer dx.Release()
		dy, err := d.UploadCSR(y)
		require.NoError(t, err)
		defer dy.Release()
		want, err := RefSparseBinaryCSR(SparseDivOp, x, y)
		require.NoError(t, err)
		got, err := d.SparseDivideCSR(dx, dy)
		require.NoError(t, err)
		sameCSR(t, want, got, "skewed")
		got.Release()
	})
}

// Coalescing (and the conversions) give the reference's bits on every
// device: duplicates are summed in input order.
func TestSparseCoalesceAndConvert(t *testing.T) {
	results := map[string][]byte{}
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(44))
		for _, shape := range [][]int64{{9}, {6, 5}, {3, 4, 5}, {2, 2, 3, 3}, {120, 170}} {
			size, _ := reference.SparseSize(shape)
			for _, dt := range []DType{Float32, Float64} {
				what := fmt.Sprintf("%v %s", shape, dt)
				x := genCOO(rng, shape, dt, Int64, spGen{nnz: int(size) / 2, dups: true, unsorted: true, specials: true})
				// many duplicates of one entry, in an order that rounds
				dx, err := d.UploadCOO(x)
				require.NoError(t, err)
				want, err := RefCoalesce(x)
				require.NoError(t, err)
				got, err := d.Coalesce(dx)
				require.NoError(t, err, what)
				sameCOO(t, want, got, what+" coalesce")
				h, err := got.Values.ToHost()
				require.NoError(t, err)
				key := what
				if prev, ok := results[key]; ok {
					require.Equal(t, prev, h.Bytes(), "%s: coalesced bits differ between backends", what)
				}
				results[key] = slices.Clone(h.Bytes())
				got.Release()

				wantDense, err := RefSparseToDense(x)
				require.NoError(t, err)
				dense, err := d.SparseToDense(dx)
				require.NoError(t, err)
				dh := mustHost(t, dense)
				sameFloats(t, wantDense, dh, what+" to dense")

				ddense := mustUpload(t, d, dh)
				back, err := d.DenseToCOO(ddense)
				require.NoError(t, err)
				var wantBack HostCOO
				if dt == Float32 {
					wantBack = hostCOO(dt, reference.DenseToCOO(dh.Float32s(), shape))
				} else {
					wantBack = hostCOO(dt, reference.DenseToCOO(dh.Float64s(), shape))
				}
				sameCOO(t, wantBack, back, what+" from dense")
				back.Release()

				if len(shape) == 2 || len(shape) == 3 {
					wantCSR, err := RefCOOToCSR(x)
					require.NoError(t, err)
					csr, err := d.COOToCSR(dx)
					require.NoError(t, err)
					sameCSR(t, wantCSR, csr, what+" to csr")
					coo, err := d.CSRToCOO(csr)
					require.NoError(t, err)
					sameCOO(t, want, coo, what+" csr to coo")
					dcsr, err := d.SparseCSRToDense(csr)
					require.NoError(t, err)
					sameFloats(t, wantDense, mustHost(t, dcsr), what+" csr to dense")
					fromDense, err := d.DenseToCSR(ddense)
					require.NoError(t, err)
					wantFD, err := RefCOOToCSR(wantBack)
					require.NoError(t, err)
					sameCSR(t, wantFD, fromDense, what+" dense to csr")
					fromDense.Release()
					coo.Release()
					csr.Release()
				}
				ddense.Release()
				dx.Release()
			}
		}
	})
}

// Into reuses the outputs of the same pattern.
func TestSparseInto(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(45))
		x := genCSR(rng, []int64{30, 40}, Float32, Int64, spGen{nnz: 200})
		y := genCSR(rng, []int64{30, 40}, Float32, Int64, spGen{nnz: 200})
		dx, err := d.UploadCSR(x)
		require.NoError(t, err)
		defer dx.Release()
		dy, err := d.UploadCSR(y)
		require.NoError(t, err)
		defer dy.Release()
		dst := &SparseCSR{}
		require.NoError(t, d.SparseBinaryCSRInto(dst, SparseMulOp, dx, dy))
		vals := dst.Values
		require.NoError(t, d.SparseBinaryCSRInto(dst, SparseDivOp, dx, dy))
		require.Same(t, vals, dst.Values, "the values are reused")
		want, err := RefSparseBinaryCSR(SparseDivOp, x, y)
		require.NoError(t, err)
		sameCSR(t, want, dst, "into")
		dst.Release()

		xc, yc := genCOO(rng, []int64{5, 6}, Float64, Int64, spGen{nnz: 10}), genCOO(rng, []int64{5, 6}, Float64, Int64, spGen{nnz: 10})
		dxc, err := d.UploadCOO(xc)
		require.NoError(t, err)
		defer dxc.Release()
		dyc, err := d.UploadCOO(yc)
		require.NoError(t, err)
		defer dyc.Release()
		dc := &SparseCOO{}
		require.NoError(t, d.SparseBinaryInto(dc, SparseSubOp, dxc, dyc))
		wc, err := RefSparseBinary(SparseSubOp, xc, yc)
		require.NoError(t, err)
		sameCOO(t, wc, dc, "into coo")
		dc.Release()
	})
}

// Every bad input is an error naming the argument and its first bad entry.
func TestSparseBadInputs(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		i64 := func(shape []int64, v ...int64) *Tensor { t, _ := fromSlice(Int64, shape, v); return t }
		f32 := func(v ...float32) *Tensor { return tensorOf(Float32, v) }
		coo := func(shape []int64, idx *Tensor, vals *Tensor) *SparseCOO {
			s, err := d.UploadCOO(HostCOO{Indices: idx, Values: vals, Shape: shape})
			require.NoError(t, err)
			return s
		}
		csr := func(shape []int64, crows, cols []int64, vals *Tensor) *SparseCSR {
			s, err := d.UploadCSR(HostCSR{Crows: i64(crowShape(shape), crows...), Cols: i64([]int64{int64(len(cols))}, cols...), Values: vals, Shape: shape})
			require.NoError(t, err)
			return s
		}
		good := coo([]int64{3, 4}, i64([]int64{2, 2}, 0, 2, 1, 3), f32(1, 2))
		defer good.Release()
		expect := func(err error, sentinel error, parts ...string) {
			t.Helper()
			require.Error(t, err)
			require.True(t, errors.Is(err, sentinel), "%v", err)
			for _, p := range parts {
				require.Contains(t, err.Error(), p)
			}
		}
		// entries: on the device
		bad := coo([]int64{3, 4}, i64([]int64{2, 3}, 0, 2, 1, 3, 4, 0), f32(1, 2, 3))
		_, err := d.SparseDivide(good, bad)
		expect(err, ErrInvalidArgument, "y.indices[1][1]", "= 4", "[0, 4)")
		neg := coo([]int64{3, 4}, i64([]int64{2, 2}, 0, -1, 1, 3), f32(1, 2))
		_, err = d.Coalesce(neg)
		expect(err, ErrInvalidArgument, "x.indices[0][1]", "-1")
		bad.Release()
		neg.Release()
		gc := csr([]int64{2, 3}, []int64{0, 1, 2}, []int64{0, 2}, f32(1, 2))
		defer gc.Release()
		for _, c := range []struct {
			crows, cols []int64
			want        string
		}{
			{[]int64{1, 1, 2}, []int64{0, 2}, "y.crows[0]"},
			{[]int64{0, 2, 1}, []int64{0, 2}, "y.crows[2]"},
			{[]int64{0, 1, 1}, []int64{0, 2}, "y.crows[2]"},
			{[]int64{0, 1, 2}, []int64{0, 3}, "y.cols[1]"},
			{[]int64{0, 1, 2}, []int64{-1, 0}, "y.cols[0]"},
		} {
			b := csr([]int64{2, 3}, c.crows, c.cols, f32(1, 2))
			_, err := d.SparseDivideCSR(gc, b)
			expect(err, ErrInvalidArgument, c.want)
			b.Release()
		}
		bb := csr([]int64{2, 1, 3}, []int64{0, 1, 1, 1}, []int64{0, 2}, f32(1, 2))
		gb := csr([]int64{2, 1, 3}, []int64{0, 1, 0, 1}, []int64{0, 2}, f32(1, 2))
		_, err = d.SparseBinaryCSR(SparseAddOp, gb, bb)
		expect(err, ErrInvalidArgument, "y.crows[2]")
		bb.Release()
		gb.Release()
		// structure: on the host
		_, err = d.UploadCOO(HostCOO{Indices: i64([]int64{2, 3}, 0, 0, 0, 0, 0, 0), Values: f32(1, 2), Shape: []int64{3, 4}})
		expect(err, ErrInvalidArgument, "x.indices", "[ndim, nnz]")
		_, err = d.UploadCOO(HostCOO{Indices: i64([]int64{1, 1}, 0), Values: tensorOf(Int32, []int32{1}), Shape: []int64{3}})
		expect(err, ErrUnsupported, "x.values", "int32")
		_, err = d.UploadCOO(HostCOO{Indices: tensorOf(Float32, []float32{0}), Values: f32(1), Shape: []int64{3}})
		expect(err, ErrInvalidArgument, "x.indices", "float32")
		_, err = d.UploadCSR(HostCSR{Crows: i64([]int64{2}, 0, 1), Cols: i64([]int64{1}, 0), Values: f32(1), Shape: []int64{2, 3}})
		expect(err, ErrInvalidArgument, "x.crows", "batch*(rows+1)")
		other := coo([]int64{3, 5}, i64([]int64{2, 2}, 0, 2, 1, 3), f32(1, 2))
		_, err = d.SparseMultiply(good, other)
		expect(err, ErrInvalidArgument, "y.shape", "[3 5]", "[3 4]")
		other.Release()
		f64 := coo([]int64{3, 4}, i64([]int64{2, 1}, 0, 1), tensorOf(Float64, []float64{1}))
		_, err = d.SparseAdd(good, f64)
		expect(err, ErrInvalidArgument, "y.values", "float64", "float32")
		f64.Release()
		_, err = d.SparseBinary(SparseOp(7), good, good)
		expect(err, ErrInvalidArgument, "op")
		_, _, _, err = d.SparseBinaryBackward(SparseDivOp, good, good, mustUpload(t, d, f32(1, 2, 3)))
		expect(err, ErrInvalidArgument, "grad_out", "2 entries")
	})
}

// TestSparseSoakFinds: the soak's two finds on lavapipe. Negative int32
// indices were read as large positive ones and passed the range check; and
// an unsorted operand went unnoticed when the merge path's short chunks
// (lavapipe's loop limit) skipped the entries out of order, so it was not
// coalesced. Both backends must give the reference's result or error.
func TestSparseSoakFinds(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, v := range []int32{-1, -2147483648, 3} {
			idx := mustTensor(FromInt32s([]int64{1, 2}, []int32{0, v}))
			x, err := d.UploadCOO(HostCOO{Indices: idx, Values: mustTensor(FromFloat32s([]int64{2}, []float32{1, 2})), Shape: []int64{3}})
			require.NoError(t, err)
			_, err = d.Coalesce(x)
			require.ErrorIs(t, err, ErrInvalidArgument, "int32 index %d", v)
			require.ErrorContains(t, err, fmt.Sprintf("x.indices[0][1] = %d", v))
			x.Indices.Release()
			x.Values.Release()
		}
		xh := HostCOO{Indices: mustTensor(FromInt64s([]int64{1, 9}, []int64{1, 0, 0, 0, 0, 2, 1, 0, 0})),
			Values: mustTensor(FromFloat32s([]int64{9}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9})), Shape: []int64{3}}
		for _, k := range []int64{15, 16, 17, 40, 300} {
			yh := HostCOO{Indices: mustTensor(NewTensor(Int64, 1, k)), Values: mustTensor(NewTensor(Float32, k)), Shape: []int64{3}}
			for i := range yh.Values.Float32s() {
				yh.Values.Float32s()[i] = 1
			}
			want, err := RefSparseBinary(SparseAddOp, xh, yh)
			require.NoError(t, err)
			x, err := d.UploadCOO(xh)
			require.NoError(t, err)
			y, err := d.UploadCOO(yh)
			require.NoError(t, err)
			r, err := d.SparseAdd(x, y)
			require.NoError(t, err, "y: %d equal keys", k)
			got, err := r.ToHost()
			require.NoError(t, err)
			require.Equal(t, want.Indices.Int64s(), got.Indices.Int64s(), "y: %d equal keys: indices", k)
			require.Equal(t, want.Values.Float32s(), got.Values.Float32s(), "y: %d equal keys: values", k)
			for _, s := range []*SparseCOO{x, y, r} {
				s.Indices.Release()
				s.Values.Release()
			}
		}
	})
}

// TestSparseMergeModel: the GPUs' merge path reports its traffic model
// (sparseMergeTraffic) once it knows the union's size: the bytes of the
// shape it ran, its least beside them, one wait.
func TestSparseMergeModel(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		plans(d).sparseFn = func(sparsePlan, int64) sparsePlan {
			return sparsePlan{Strategy: sparseByMergePath, Reason: "forced by a test"}
		}
		plans(d).unionFn = func(unionPlan, int64, int) unionPlan { return unionPlan{} }
		var got []PlanReport
		d.OnPlan(func(r PlanReport) {
			if r.Family == "sparse" {
				got = append(got, r)
			}
		})
		defer func() {
			plans(d).sparseFn, plans(d).unionFn = nil, nil
			d.OnPlan(nil)
		}()
		rng := rand.New(rand.NewSource(43))
		shape := []int64{64, 300}
		x := genCSR(rng, shape, Float32, Int64, spGen{nnz: 3000})
		y := genCSR(rng, shape, Float32, Int64, spGen{nnz: 2000})
		dx, err := d.UploadCSR(x)
		require.NoError(t, err)
		defer dx.Release()
		dy, err := d.UploadCSR(y)
		require.NoError(t, err)
		defer dy.Release()
		out, err := d.SparseDivideCSR(dx, dy)
		require.NoError(t, err)
		u := out.Values.Len()
		out.Release()
		require.Len(t, got, 1)
		s := sparseShape{nx: 3000, ny: 2000, u: u, csr: true, rows: 64, idxBytes: 8, valBytes: 4, chunk: d.spChunk()}
		assert.Equal(t, sparseMergeTraffic(d.caps, s).Bytes(), got[0].ModelBytes, "%+v", got[0])
		assert.Equal(t, sparseMinBytes(s), got[0].MinBytes)
		assert.Equal(t, 1, got[0].Waits)
		assert.Contains(t, got[0].Plan, "forced by a test")
	})
}

// TestSparseChunkFill: the merge path's walks fill a GPU (a lane each, at
// least 1024 lanes a compute unit, half what an SM holds, for the bench's
// union of 10M positions and for its CSR row merge of 5.2M rows and
// entries), where chunks of
// 512 positions four to a work-item made 19 work-groups on an H200;
// CPU drivers keep long walks, and a loop limit short ones.
func TestSparseChunkFill(t *testing.T) {
	d := &Device{caps: h100, planner: devicePlanner{}}
	require.Equal(t, int64(32), d.spChunk())
	for _, n := range []int64{1e7, 5.2e6} {
		chunks := (n + d.spChunk() - 1) / d.spChunk()
		p := d.chunkPlan("sparse_div", chunks, 2*d.spChunk()+64)
		lanes := p.TotalGroups() * int64(p.LocalSize)
		assert.GreaterOrEqual(t, lanes, chunks, "%d positions: a lane a chunk: %s", n, p)
		assert.GreaterOrEqual(t, lanes, int64(h100.ComputeUnits)*1024, "%d positions: %s", n, p)
		assert.Equal(t, int64(1), host.KnobItems.Of(p), "%d positions", n)
	}
	cpu := &Device{caps: host.Caps{Backend: host.OpenCL, Type: host.TypeCPU, ComputeUnits: 2}, planner: devicePlanner{}}
	assert.Equal(t, int64(512), cpu.spChunk())
	assert.Equal(t, int64(4), host.KnobItems.Of(cpu.chunkPlan("sparse_div", 1000, 1088)))
	lvp := &Device{caps: host.Caps{Backend: host.Vulkan, Type: host.TypeCPU, ComputeUnits: 2, LoopLimit: 1 << 16}, planner: devicePlanner{}}
	assert.Equal(t, int64(16), lvp.spChunk())
	// ACCEL_KNOBS' sparse_plan sets both, for a GPU run to compare
	var err error
	d.knobs, err = knobOverrides("sparse_plan:CHUNK=128,ITEMS=2")
	require.NoError(t, err)
	assert.Equal(t, int64(128), d.spChunk())
	assert.Equal(t, int64(2), host.KnobItems.Of(d.chunkPlan("sparse_div", 1000, 320)))
}
