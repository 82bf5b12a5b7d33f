package bench

import (
	"fmt"
	"math/rand"
	"slices"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/reference"
)

// Bench cases of the sparse divide (issue 14), in entries/s (both
// operands' entries): csr200k_5M (200,000 x 200,000 float32, 5M random
// entries in each operand, sorted CSR), coo200k_5M_dups (the same as
// unsorted COO with 10% duplicate entries, coalescing included) and
// csrb64_4096 (64 batches of 4096 x 4096, 1% dense). bytes are what each
// entry must move: each input entry's coordinates and value read once,
// each result entry's written once, and the row pointers. The reference
// is the scalar per-row merge (reference.SparseBinaryCSR / COO). --quick
// runs 1/16 of each.
func sparseCases(quick bool) []benchCase {
	div := 1
	tag := ""
	if quick {
		div, tag = 16, "_quick"
	}
	type operands struct {
		x, y   accel.HostCSR
		xo, yo accel.HostCOO
		union  int64
	}
	// sortedKeys returns n distinct random keys below size, ascending.
	sortedKeys := func(rng *rand.Rand, n, size int64) []int64 {
		keys := make([]int64, 0, n+n/8)
		for int64(len(keys)) < n {
			for int64(len(keys)) < n+n/16 {
				keys = append(keys, rng.Int63n(size))
			}
			slices.Sort(keys)
			keys = slices.Compact(keys)
		}
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		keys = keys[:n]
		slices.Sort(keys)
		return keys
	}
	values := func(rng *rand.Rand, n int) *accel.Tensor {
		v := make([]float32, n)
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		t, _ := accel.FromFloat32s([]int64{int64(n)}, v)
		return t
	}
	csrOf := func(shape []int64, keys []int64, vals *accel.Tensor) accel.HostCSR {
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
		cr, _ := accel.FromInt64s([]int64{int64(len(crows))}, crows)
		if len(shape) == 3 {
			cr, _ = accel.FromInt64s([]int64{b, r + 1}, crows)
		}
		cl, _ := accel.FromInt64s([]int64{int64(len(cols))}, cols)
		return accel.HostCSR{Crows: cr, Cols: cl, Values: vals, Shape: shape}
	}
	// cooOf: the entries unsorted, with dups duplicates of random entries
	// appended before the shuffle.
	cooOf := func(rng *rand.Rand, shape []int64, keys []int64, dups int) accel.HostCOO {
		k := slices.Clone(keys)
		for i := 0; i < dups; i++ {
			k = append(k, keys[rng.Intn(len(keys))])
		}
		rng.Shuffle(len(k), func(i, j int) { k[i], k[j] = k[j], k[i] })
		n := int64(len(k))
		idx := make([]int64, 2*n)
		for i, key := range k {
			idx[i], idx[n+int64(i)] = key/shape[1], key%shape[1]
		}
		it, _ := accel.FromInt64s([]int64{2, n}, idx)
		return accel.HostCOO{Indices: it, Values: values(rng, len(k)), Shape: shape}
	}
	unionSize := func(a, b []int64) int64 {
		i, j, u := 0, 0, int64(0)
		for i < len(a) || j < len(b) {
			switch {
			case j == len(b) || (i < len(a) && a[i] < b[j]):
				i++
			case i == len(a) || b[j] < a[i]:
				j++
			default:
				i, j = i+1, j+1
			}
			u++
		}
		return u
	}
	cache := map[string]*operands{}
	gen := func(name string, shape []int64, nnz int64, coo bool) *operands {
		if o := cache[name]; o != nil {
			return o
		}
		rng := rand.New(rand.NewSource(14))
		size, _ := reference.SparseSize(shape)
		kx, ky := sortedKeys(rng, nnz, size), sortedKeys(rng, nnz, size)
		o := &operands{union: unionSize(kx, ky)}
		if coo {
			o.xo, o.yo = cooOf(rng, shape, kx, int(nnz/10)), cooOf(rng, shape, ky, int(nnz/10))
		} else {
			o.x, o.y = csrOf(shape, kx, values(rng, len(kx))), csrOf(shape, ky, values(rng, len(ky)))
		}
		cache[name] = o
		return o
	}
	csrCase := func(name string, shape []int64, nnz int64) benchCase {
		b, r, _ := reference.CSRDims(shape)
		ptrs := 3 * b * (r + 1) * 8
		// inputs: col (8) + value (4) per entry; the result: the same per
		// union entry (about the sum of the inputs at these densities)
		return benchCase{
			op: "sparse_div", name: name + tag, bytes: 2*2*nnz*12 + ptrs, items: 2 * nnz,
			setup: func(dev *accel.Device) (caseRun, error) {
				o := gen(name, shape, nnz, false)
				x, err := dev.UploadCSR(o.x)
				if err != nil {
					return caseRun{}, err
				}
				y, err := dev.UploadCSR(o.y)
				if err != nil {
					x.Release()
					return caseRun{}, err
				}
				call := func() error {
					out, err := dev.SparseDivideCSR(x, y)
					if err == nil {
						out.Release()
					}
					return err
				}
				return caseRun{call: call, plan: fmt.Sprintf("union %d", o.union),
					done: func() { x.Release(); y.Release() }}, nil
			},
			ref: func() (func(), func()) {
				o := gen(name, shape, nnz, false)
				return func() {
					if _, err := accel.RefSparseBinaryCSR(accel.SparseDivOp, o.x, o.y); err != nil {
						panic(err)
					}
				}, func() {}
			},
		}
	}
	nnz := int64(5_000_000) / int64(div)
	dense := int64(4096 * 4096 * 64 / 100 / div)
	return []benchCase{
		csrCase("csr200k_5M", []int64{200_000, 200_000}, nnz),
		{
			// inputs: 2 indices (16) + value (4) per entry, duplicates
			// included; the result: the same per union entry
			op: "sparse_div", name: "coo200k_5M_dups" + tag, bytes: 2*(nnz+nnz/10)*20 + 2*nnz*20, items: 2 * (nnz + nnz/10),
			setup: func(dev *accel.Device) (caseRun, error) {
				o := gen("coo200k_5M_dups", []int64{200_000, 200_000}, nnz, true)
				x, err := dev.UploadCOO(o.xo)
				if err != nil {
					return caseRun{}, err
				}
				y, err := dev.UploadCOO(o.yo)
				if err != nil {
					x.Release()
					return caseRun{}, err
				}
				call := func() error {
					out, err := dev.SparseDivide(x, y)
					if err == nil {
						out.Release()
					}
					return err
				}
				plan := fmt.Sprintf("union %d", o.union)
				return caseRun{call: call, plan: plan, done: func() { x.Release(); y.Release() }}, nil
			},
			ref: func() (func(), func()) {
				o := gen("coo200k_5M_dups", []int64{200_000, 200_000}, nnz, true)
				return func() {
					if _, err := accel.RefSparseBinary(accel.SparseDivOp, o.xo, o.yo); err != nil {
						panic(err)
					}
				}, func() {}
			},
		},
		csrCase("csrb64_4096", []int64{64, 4096, 4096}, dense),
	}
}
