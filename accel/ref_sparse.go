package accel

import (
	"fmt"
	"slices"

	"github.com/accelkern/accel/reference"
)

// The reference entry points of the sparse ops, computed on the host with
// the scalar reference (a per-row merge).

func refCOO[T reference.Float](h HostCOO, vals []T) reference.COO[T] {
	return reference.COO[T]{Shape: h.Shape, Indices: int64sOf(h.Indices), Values: vals}
}

func refCSR[T reference.Float](h HostCSR, vals []T) reference.CSR[T] {
	return reference.CSR[T]{Shape: h.Shape, Crows: int64sOf(h.Crows), Cols: int64sOf(h.Cols), Values: vals}
}

func hostCOO[T reference.Float](dt DType, c reference.COO[T]) HostCOO {
	n := int64(len(c.Values))
	idx, _ := fromSlice(Int64, []int64{int64(len(c.Shape)), n}, c.Indices)
	return HostCOO{Indices: idx, Values: tensorOf(dt, c.Values), Shape: slices.Clone(c.Shape)}
}

func hostCSR[T reference.Float](dt DType, c reference.CSR[T]) HostCSR {
	cr, _ := fromSlice(Int64, crowShape(c.Shape), c.Crows)
	return HostCSR{Crows: cr, Cols: tensorOf(Int64, c.Cols), Values: tensorOf(dt, c.Values), Shape: slices.Clone(c.Shape)}
}

// checkHostCOO checks a host COO tensor's structure and entries.
func checkHostCOO(op, arg string, h HostCOO) error {
	if err := nilTensors(op, []string{arg + ".indices", arg + ".values"}, h.Indices, h.Values); err != nil {
		return err
	}
	if err := checkSparse(op, arg, hostArrays(false, h.Shape, nil, h.Indices, h.Values), true); err != nil {
		return err
	}
	if bad := reference.ValidateCOO(h.Shape, int64sOf(h.Indices), h.Values.Len()); bad != nil {
		return argErr(op, arg+"."+bad.Arg, bad.Value, bad.Bound, ErrInvalidArgument)
	}
	return nil
}

func checkHostCSR(op, arg string, h HostCSR) error {
	if err := nilTensors(op, []string{arg + ".crows", arg + ".cols", arg + ".values"}, h.Crows, h.Cols, h.Values); err != nil {
		return err
	}
	if err := checkSparse(op, arg, hostArrays(true, h.Shape, h.Crows, h.Cols, h.Values), true); err != nil {
		return err
	}
	if bad := reference.ValidateCSR(h.Shape, int64sOf(h.Crows), int64sOf(h.Cols)); bad != nil {
		return argErr(op, arg+"."+bad.Arg, bad.Value, bad.Bound, ErrInvalidArgument)
	}
	return nil
}

func checkHostPair(op string, sop SparseOp, xa, ya spArrays, gradOut *Tensor) error {
	if err := checkSparseOp(op, sop); err != nil {
		return err
	}
	if err := checkPair(op, xa, ya); err != nil {
		return err
	}
	if gradOut != nil && gradOut.dtype != xa.values {
		return argErr(op, "grad_out", "dtype "+gradOut.dtype.String(), "the values' dtype "+xa.values.String(), ErrInvalidArgument)
	}
	return nil
}

func checkGradLen(op string, gradOut *Tensor, u int) error {
	if gradOut != nil && gradOut.Len() != int64(u) {
		return argErr(op, "grad_out", fmt.Sprintf("%d values", gradOut.Len()), fmt.Sprintf("the result's %d entries (its union pattern)", u), ErrInvalidArgument)
	}
	return nil
}

// refGrads computes the gradients on the host where gradOut is given.
func refGrads[T reference.Float](op string, sop SparseOp, dt DType, r reference.SparseResult[T], gradOut *Tensor, g []T) (gx, gy *Tensor, err error) {
	if gradOut == nil {
		return nil, nil, nil
	}
	if err := checkGradLen(op, gradOut, len(r.Keys)); err != nil {
		return nil, nil, err
	}
	a, b := reference.SparseGrads(reference.SparseOp(sop), r, g)
	return tensorOf(dt, a), tensorOf(dt, b), nil
}

// RefSparseBinaryBackward computes SparseBinaryBackward on the host (and,
// with a nil gradOut, SparseBinary: the gradients are then nil).
func RefSparseBinaryBackward(op SparseOp, x, y HostCOO, gradOut *Tensor) (out HostCOO, gradX, gradY *Tensor, err error) {
	name := sparseOpName(op, gradOut != nil)
	if err := checkHostCOO(name, "x", x); err != nil {
		return HostCOO{}, nil, nil, err
	}
	if err := checkHostCOO(name, "y", y); err != nil {
		return HostCOO{}, nil, nil, err
	}
	if err := checkHostPair(name, op, hostArrays(false, x.Shape, nil, x.Indices, x.Values), hostArrays(false, y.Shape, nil, y.Indices, y.Values), gradOut); err != nil {
		return HostCOO{}, nil, nil, err
	}
	dt := x.Values.dtype
	if dt == Float32 {
		o, r := reference.SparseBinaryCOO(reference.SparseOp(op), refCOO(x, x.Values.Float32s()), refCOO(y, y.Values.Float32s()))
		var g []float32
		if gradOut != nil {
			g = gradOut.Float32s()
		}
		gx, gy, err := refGrads(name, op, dt, r, gradOut, g)
		return hostCOO(dt, o), gx, gy, err
	}
	o, r := reference.SparseBinaryCOO(reference.SparseOp(op), refCOO(x, x.Values.Float64s()), refCOO(y, y.Values.Float64s()))
	var g []float64
	if gradOut != nil {
		g = gradOut.Float64s()
	}
	gx, gy, err := refGrads(name, op, dt, r, gradOut, g)
	return hostCOO(dt, o), gx, gy, err
}

// RefSparseBinary computes SparseBinary on the host.
func RefSparseBinary(op SparseOp, x, y HostCOO) (HostCOO, error) {
	out, _, _, err := RefSparseBinaryBackward(op, x, y, nil)
	return out, err
}

// RefSparseBinaryBackwardCSR computes SparseBinaryBackwardCSR on the host
// (and, with a nil gradOut, SparseBinaryCSR).
func RefSparseBinaryBackwardCSR(op SparseOp, x, y HostCSR, gradOut *Tensor) (out HostCSR, gradX, gradY *Tensor, err error) {
	name := sparseOpName(op, gradOut != nil)
	if err := checkHostCSR(name, "x", x); err != nil {
		return HostCSR{}, nil, nil, err
	}
	if err := checkHostCSR(name, "y", y); err != nil {
		return HostCSR{}, nil, nil, err
	}
	if err := checkHostPair(name, op, hostArrays(true, x.Shape, x.Crows, x.Cols, x.Values), hostArrays(true, y.Shape, y.Crows, y.Cols, y.Values), gradOut); err != nil {
		return HostCSR{}, nil, nil, err
	}
	dt := x.Values.dtype
	if dt == Float32 {
		o, r := reference.SparseBinaryCSR(reference.SparseOp(op), refCSR(x, x.Values.Float32s()), refCSR(y, y.Values.Float32s()))
		var g []float32
		if gradOut != nil {
			g = gradOut.Float32s()
		}
		gx, gy, err := refGrads(name, op, dt, r, gradOut, g)
		return hostCSR(dt, o), gx, gy, err
	}
	o, r := reference.SparseBinaryCSR(reference.SparseOp(op), refCSR(x, x.Values.Float64s()), refCSR(y, y.Values.Float64s()))
	var g []float64
	if gradOut != nil {
		g = gradOut.Float64s()
	}
	gx, gy, err := refGrads(name, op, dt, r, gradOut, g)
	return hostCSR(dt, o), gx, gy, err
}

// RefSparseBinaryCSR computes SparseBinaryCSR on the host.
func RefSparseBinaryCSR(op SparseOp, x, y HostCSR) (HostCSR, error) {
	out, _, _, err := RefSparseBinaryBackwardCSR(op, x, y, nil)
	return out, err
}

// RefCoalesce computes Coalesce on the host.
func RefCoalesce(x HostCOO) (HostCOO, error) {
	if err := checkHostCOO("sparse_coalesce", "x", x); err != nil {
		return HostCOO{}, err
	}
	if x.Values.dtype == Float32 {
		return hostCOO(Float32, reference.Coalesce(refCOO(x, x.Values.Float32s()))), nil
	}
	return hostCOO(Float64, reference.Coalesce(refCOO(x, x.Values.Float64s()))), nil
}

// RefCOOToCSR computes COOToCSR on the host.
func RefCOOToCSR(x HostCOO) (HostCSR, error) {
	const op = "sparse_to_csr"
	if err := checkHostCOO(op, "x", x); err != nil {
		return HostCSR{}, err
	}
	if len(x.Shape) != 2 && len(x.Shape) != 3 {
		return HostCSR{}, argErr(op, "x.shape", fmt.Sprint(x.Shape), "of rank 2 or 3 (CSR)", ErrInvalidArgument)
	}
	if x.Values.dtype == Float32 {
		return hostCSR(Float32, reference.COOToCSR(refCOO(x, x.Values.Float32s()))), nil
	}
	return hostCSR(Float64, reference.COOToCSR(refCOO(x, x.Values.Float64s()))), nil
}

// RefCSRToCOO computes CSRToCOO on the host (coalesced).
func RefCSRToCOO(x HostCSR) (HostCOO, error) {
	if err := checkHostCSR("sparse_to_coo", "x", x); err != nil {
		return HostCOO{}, err
	}
	if x.Values.dtype == Float32 {
		return hostCOO(Float32, reference.Coalesce(reference.CSRToCOO(refCSR(x, x.Values.Float32s())))), nil
	}
	return hostCOO(Float64, reference.Coalesce(reference.CSRToCOO(refCSR(x, x.Values.Float64s())))), nil
}

// RefSparseToDense computes SparseToDense on the host.
func RefSparseToDense(x HostCOO) (*Tensor, error) {
	if err := checkHostCOO("sparse_to_dense", "x", x); err != nil {
		return nil, err
	}
	if x.Values.dtype == Float32 {
		t, _ := fromSlice(Float32, x.Shape, reference.SparseToDense(refCOO(x, x.Values.Float32s())))
		return t, nil
	}
	t, _ := fromSlice(Float64, x.Shape, reference.SparseToDense(refCOO(x, x.Values.Float64s())))
	return t, nil
}
