package reference

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Sparse tensors and Paddle's elementwise sparse ops (divide, add,
// subtract, multiply and their gradients), as plain per-row merges: the
// oracle of the device ops.
//
// COO: Indices is [ndim, nnz] row-major (dimension d of entry k at
// d*nnz + k), Values [nnz], Shape of any rank >= 1. CSR: Shape [rows, cols]
// or [batch, rows, cols]; Crows holds batch*(rows+1) row pointers, each
// batch restarting at 0 (Paddle's layout), Cols and Values the entries of
// the batches in order.

// COO is a sparse tensor in coordinate form.
type COO[T Float] struct {
	Shape   []int64
	Indices []int64 // [ndim, nnz]
	Values  []T     // [nnz]
}

// Nnz is the number of stored entries.
func (c COO[T]) Nnz() int64 { return int64(len(c.Values)) }

// CSR is a 2-D or batched 3-D sparse tensor in compressed-row form.
type CSR[T Float] struct {
	Shape  []int64 // [rows, cols] or [batch, rows, cols]
	Crows  []int64 // [batch*(rows+1)]
	Cols   []int64 // [nnz]
	Values []T     // [nnz]
}

// Nnz is the number of stored entries.
func (c CSR[T]) Nnz() int64 { return int64(len(c.Values)) }

// SparseOp is an elementwise op of two sparse tensors.
type SparseOp int

// The elementwise sparse ops.
const (
	SparseAdd SparseOp = iota
	SparseSub
	SparseMul
	SparseDiv
)

// SparseOpNames are the ops' names (as the CLI spells them).
var SparseOpNames = []string{"add", "sub", "mul", "div"}

// SparseBad describes the first bad entry of a sparse tensor's arrays:
// which array (Arg, e.g. "indices[1][4]"), its value and the rule it broke.
type SparseBad struct {
	Arg   string
	Value int64
	Bound string
}

// SparseSize is the number of elements of shape, ok false when a dimension
// is negative or the product passes int64.
func SparseSize(shape []int64) (n int64, ok bool) {
	n = 1
	for _, s := range shape {
		if s < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(uint64(n), uint64(s))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		n = int64(lo)
	}
	return n, true
}

// ValidateCOO returns the first out-of-range index of a COO tensor of
// shape with nnz entries (indices of length len(shape)*nnz), in entry
// order, or nil.
func ValidateCOO(shape, indices []int64, nnz int64) *SparseBad {
	nd := int64(len(shape))
	for k := int64(0); k < nnz; k++ {
		for d := int64(0); d < nd; d++ {
			v := indices[d*nnz+k]
			if v < 0 || v >= shape[d] {
				return &SparseBad{Arg: fmt.Sprintf("indices[%d][%d]", d, k), Value: v,
					Bound: fmt.Sprintf("in [0, %d) (shape[%d])", shape[d], d)}
			}
		}
	}
	return nil
}

// ValidateCSR returns the first bad row pointer or column of a CSR tensor
// of shape ([rows, cols] or [batch, rows, cols]) with nnz entries, or nil:
// each batch's pointers start at 0 and do not decrease, the batches' last
// pointers add up to nnz, columns lie in [0, cols).
func ValidateCSR(shape, crows, cols []int64) *SparseBad {
	b, r, c := CSRDims(shape)
	nnz := int64(len(cols))
	total := int64(0)
	for bi := int64(0); bi < b; bi++ {
		base := bi * (r + 1)
		if v := crows[base]; v != 0 {
			return &SparseBad{Arg: fmt.Sprintf("crows[%d]", base), Value: v, Bound: "0 (each batch's row pointers start at 0)"}
		}
		for i := int64(1); i <= r; i++ {
			if v, p := crows[base+i], crows[base+i-1]; v < p {
				return &SparseBad{Arg: fmt.Sprintf("crows[%d]", base+i), Value: v, Bound: fmt.Sprintf(">= crows[%d] = %d (row pointers must not decrease)", base+i-1, p)}
			}
			if v := crows[base+i]; v > nnz-total {
				return &SparseBad{Arg: fmt.Sprintf("crows[%d]", base+i), Value: v, Bound: fmt.Sprintf("<= %d (the entries left for batch %d of nnz = %d)", nnz-total, bi, nnz)}
			}
		}
		total += crows[base+r]
	}
	if total != nnz {
		last := b*(r+1) - 1
		v := int64(0)
		if last >= 0 {
			v = crows[last]
		}
		return &SparseBad{Arg: fmt.Sprintf("crows[%d]", last), Value: v, Bound: fmt.Sprintf("such that the batches' entries add up to nnz = %d (they add up to %d)", nnz, total)}
	}
	for k, v := range cols {
		if v < 0 || v >= c {
			return &SparseBad{Arg: fmt.Sprintf("cols[%d]", k), Value: v, Bound: fmt.Sprintf("in [0, %d) (columns)", c)}
		}
	}
	return nil
}

// CSRDims splits a CSR shape into batch, rows and columns (batch 1 for
// 2-D).
func CSRDims(shape []int64) (b, r, c int64) {
	if len(shape) == 3 {
		return shape[0], shape[1], shape[2]
	}
	return 1, shape[0], shape[1]
}

// linearKeys returns the row-major linear index of every COO entry.
func linearKeys(shape, indices []int64, nnz int64) []int64 {
	keys := make([]int64, nnz)
	for d := range shape {
		for k := int64(0); k < nnz; k++ {
			keys[k] = keys[k]*shape[d] + indices[int64(d)*nnz+k]
		}
	}
	return keys
}

// delinearize writes key's coordinates into column k of indices [ndim, n].
func delinearize(shape []int64, key int64, indices []int64, k, n int64) {
	for d := len(shape) - 1; d >= 0; d-- {
		indices[int64(d)*n+k] = key % shape[d]
		key /= shape[d]
	}
}

// coalesceKeys sorts entries by key (stable) and sums equal keys in input
// order.
func coalesceKeys[T Float](keys []int64, vals []T) ([]int64, []T) {
	perm := make([]int, len(keys))
	for i := range perm {
		perm[i] = i
	}
	// Ties broken by input position: a total order, so pdqsort gives the
	// stable permutation.
	slices.SortFunc(perm, func(a, b int) int {
		if c := cmp.Compare(keys[a], keys[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	ok, ov := []int64{}, []T{}
	for j, p := range perm {
		if j > 0 && keys[p] == ok[len(ok)-1] {
			ov[len(ov)-1] += vals[p]
			continue
		}
		ok = append(ok, keys[p])
		ov = append(ov, vals[p])
	}
	return ok, ov
}

// Coalesce sorts a valid COO tensor's entries lexicographically by index
// and sums duplicates in input order.
func Coalesce[T Float](x COO[T]) COO[T] {
	keys, vals := coalesceKeys(linearKeys(x.Shape, x.Indices, x.Nnz()), x.Values)
	return cooFromKeys(x.Shape, keys, vals)
}

func cooFromKeys[T Float](shape []int64, keys []int64, vals []T) COO[T] {
	n := int64(len(keys))
	idx := make([]int64, int64(len(shape))*n)
	for k, key := range keys {
		delinearize(shape, key, idx, int64(k), n)
	}
	return COO[T]{Shape: append([]int64(nil), shape...), Indices: idx, Values: vals}
}

// SparseApply is op on two values (a missing operand is passed as 0).
func SparseApply[T Float](op SparseOp, a, b T) T {
	switch op {
	case SparseAdd:
		return a + b
	case SparseSub:
		return a - b
	case SparseMul:
		return a * b
	}
	return a / b
}

// SparseGrad is the gradient of op at (a, b) for the output gradient g:
// with respect to a and to b. Division's b gradient is -g * ((a/b)/b), as
// PyTorch's autograd computes it.
func SparseGrad[T Float](op SparseOp, a, b, g T) (ga, gb T) {
	switch op {
	case SparseAdd:
		return g, g
	case SparseSub:
		return g, -g
	case SparseMul:
		return g * b, g * a
	}
	out := a / b
	return g / b, -g * (out / b)
}

// mergeUnion merges two sorted, duplicate-free key lists: the union of the
// keys, with op applied to the values (a missing one read as 0), and the
// positions of each union entry in x and y (-1 where missing).
func mergeUnion(kx, ky []int64) (keys, px, py []int64) {
	i, j := 0, 0
	for i < len(kx) || j < len(ky) {
		switch {
		case j == len(ky) || (i < len(kx) && kx[i] < ky[j]):
			keys, px, py = append(keys, kx[i]), append(px, int64(i)), append(py, -1)
			i++
		case i == len(kx) || ky[j] < kx[i]:
			keys, px, py = append(keys, ky[j]), append(px, -1), append(py, int64(j))
			j++
		default:
			keys, px, py = append(keys, kx[i]), append(px, int64(i)), append(py, int64(j))
			i++
			j++
		}
	}
	return keys, px, py
}

func at[T Float](v []T, p int64) T {
	if p < 0 {
		return 0
	}
	return v[p]
}

// SparseResult is the union-pattern result of an elementwise sparse op
// in canonical order, with the operands' values read at each union
// position (0 where missing), for the gradients.
type SparseResult[T Float] struct {
	Keys   []int64 // linear indices of the union pattern, ascending
	Values []T
	X, Y   []T // the operands at the union positions
}

func unionOf[T Float](op SparseOp, kx []int64, vx []T, ky []int64, vy []T) SparseResult[T] {
	keys, px, py := mergeUnion(kx, ky)
	r := SparseResult[T]{Keys: keys, Values: make([]T, len(keys)), X: make([]T, len(keys)), Y: make([]T, len(keys))}
	if r.Keys == nil {
		r.Keys = []int64{}
	}
	for k := range keys {
		a, b := at(vx, px[k]), at(vy, py[k])
		r.X[k], r.Y[k], r.Values[k] = a, b, SparseApply(op, a, b)
	}
	return r
}

// SparseBinaryCOO applies op to two valid COO tensors of one shape: the
// result's pattern is the union of their coalesced patterns (explicit
// zeros stay), each value op(x, y) with a missing operand read as 0.
func SparseBinaryCOO[T Float](op SparseOp, x, y COO[T]) (COO[T], SparseResult[T]) {
	cx, cy := Coalesce(x), Coalesce(y)
	kx := linearKeys(cx.Shape, cx.Indices, cx.Nnz())
	ky := linearKeys(cy.Shape, cy.Indices, cy.Nnz())
	r := unionOf(op, kx, cx.Values, ky, cy.Values)
	return cooFromKeys(x.Shape, r.Keys, r.Values), r
}

// SparseGrads returns the gradients of op with respect to x and y on the
// result's (union) pattern, for gradOut on that pattern.
func SparseGrads[T Float](op SparseOp, r SparseResult[T], gradOut []T) (gx, gy []T) {
	gx, gy = make([]T, len(gradOut)), make([]T, len(gradOut))
	for k, g := range gradOut {
		gx[k], gy[k] = SparseGrad(op, r.X[k], r.Y[k], g)
	}
	return gx, gy
}

// coalesceRow sorts one CSR row's entries by column and sums duplicate
// columns in input order.
func coalesceRow[T Float](cols []int64, vals []T) ([]int64, []T) {
	return coalesceKeys(cols, vals)
}

// SparseBinaryCSR applies op to two valid CSR tensors of one shape, row by
// row (SciPy's general CSR merge: each row's columns may come unsorted or
// duplicated; the result's are sorted and unique). The union result's keys
// are linear indices over the whole shape.
func SparseBinaryCSR[T Float](op SparseOp, x, y CSR[T]) (CSR[T], SparseResult[T]) {
	b, r, c := CSRDims(x.Shape)
	out := CSR[T]{Shape: append([]int64(nil), x.Shape...), Crows: make([]int64, b*(r+1)), Cols: []int64{}, Values: []T{}}
	var res SparseResult[T]
	res.Keys = []int64{}
	var ox, oy int64 // the batches' offsets into the entries
	for bi := int64(0); bi < b; bi++ {
		base := bi * (r + 1)
		start := int64(len(out.Cols))
		for i := int64(0); i < r; i++ {
			xa, xb := ox+x.Crows[base+i], ox+x.Crows[base+i+1]
			ya, yb := oy+y.Crows[base+i], oy+y.Crows[base+i+1]
			kx, vx := coalesceRow(x.Cols[xa:xb], x.Values[xa:xb])
			ky, vy := coalesceRow(y.Cols[ya:yb], y.Values[ya:yb])
			u := unionOf(op, kx, vx, ky, vy)
			out.Cols = append(out.Cols, u.Keys...)
			out.Values = append(out.Values, u.Values...)
			for _, col := range u.Keys {
				res.Keys = append(res.Keys, (bi*r+i)*c+col)
			}
			res.Values = append(res.Values, u.Values...)
			res.X = append(res.X, u.X...)
			res.Y = append(res.Y, u.Y...)
			out.Crows[base+i+1] = int64(len(out.Cols)) - start
		}
		ox += x.Crows[base+r]
		oy += y.Crows[base+r]
	}
	return out, res
}

// CSRToCOO returns the COO form of a valid CSR tensor (rank 2 or 3), its
// entries in the CSR's order.
func CSRToCOO[T Float](x CSR[T]) COO[T] {
	b, r, c := CSRDims(x.Shape)
	keys := make([]int64, 0, len(x.Cols))
	off := int64(0)
	for bi := int64(0); bi < b; bi++ {
		base := bi * (r + 1)
		for i := int64(0); i < r; i++ {
			for k := off + x.Crows[base+i]; k < off+x.Crows[base+i+1]; k++ {
				keys = append(keys, (bi*r+i)*c+x.Cols[k])
			}
		}
		off += x.Crows[base+r]
	}
	return cooFromKeys(x.Shape, keys, append([]T(nil), x.Values...))
}

// COOToCSR returns the CSR form of a valid COO tensor of rank 2 or 3,
// coalesced (rows' columns sorted and unique).
func COOToCSR[T Float](x COO[T]) CSR[T] {
	keys, vals := coalesceKeys(linearKeys(x.Shape, x.Indices, x.Nnz()), x.Values)
	return csrFromKeys(x.Shape, keys, vals)
}

func csrFromKeys[T Float](shape []int64, keys []int64, vals []T) CSR[T] {
	b, r, c := CSRDims(shape)
	out := CSR[T]{Shape: append([]int64(nil), shape...), Crows: make([]int64, b*(r+1)), Cols: make([]int64, len(keys)), Values: vals}
	for k, key := range keys {
		row := key / c
		out.Cols[k] = key % c
		bi, i := row/r, row%r
		out.Crows[bi*(r+1)+i+1]++
	}
	for bi := int64(0); bi < b; bi++ {
		base := bi * (r + 1)
		for i := int64(1); i <= r; i++ {
			out.Crows[base+i] += out.Crows[base+i-1]
		}
	}
	return out
}

// SparseToDense returns the dense row-major form of a valid COO tensor
// (duplicates summed in input order, everything else 0).
func SparseToDense[T Float](x COO[T]) []T {
	n, _ := SparseSize(x.Shape)
	out := make([]T, n)
	keys, vals := coalesceKeys(linearKeys(x.Shape, x.Indices, x.Nnz()), x.Values)
	for k, key := range keys {
		out[key] = vals[k]
	}
	return out
}

// DenseToCOO returns the coalesced COO form of a dense row-major tensor:
// its entries other than zero (NaN is stored; -0 and +0 are not).
func DenseToCOO[T Float](dense []T, shape []int64) COO[T] {
	keys, vals := []int64{}, []T{}
	for k, v := range dense {
		if v != 0 {
			keys = append(keys, int64(k))
			vals = append(vals, v)
		}
	}
	return cooFromKeys(shape, keys, vals)
}
