package accel

import (
	"fmt"
	"slices"

	"github.com/accelkern/accel/host/kernels"
)

// Sparse tensors between host and device, coalescing, and the conversions
// between COO, CSR and dense, all on the device.

func hostArrays(csr bool, shape []int64, crows, idx, vals *Tensor) spArrays {
	a := spArrays{csr: csr, shape: shape, index: idx.dtype, indexShape: idx.shape, values: vals.dtype, valueShape: vals.shape}
	if csr {
		a.crows, a.crowShape = crows.dtype, crows.shape
	}
	return a
}

func nilTensors(op string, names []string, ts ...*Tensor) error {
	for i, t := range ts {
		if t == nil {
			return argErr(op, names[i], "nil", "a tensor", ErrInvalidArgument)
		}
	}
	return nil
}

// UploadCOO copies a host COO tensor to the device (its structure is
// checked here, its entries by the ops that use it).
func (d *Device) UploadCOO(h HostCOO) (*SparseCOO, error) {
	const op = "upload_coo"
	if err := nilTensors(op, []string{"indices", "values"}, h.Indices, h.Values); err != nil {
		return nil, err
	}
	if err := checkSparse(op, "x", hostArrays(false, h.Shape, nil, h.Indices, h.Values), d.caps.FP64); err != nil {
		return nil, err
	}
	var outs temps
	idx, err := d.Upload(h.Indices)
	if err != nil {
		return nil, err
	}
	outs.add(idx)
	vals, err := d.Upload(h.Values)
	if err != nil {
		outs.release()
		return nil, err
	}
	return &SparseCOO{Indices: idx, Values: vals, Shape: slices.Clone(h.Shape)}, nil
}

// UploadCSR copies a host CSR tensor to the device (as UploadCOO). Crows
// and Cols are int32 or int64, both the same.
func (d *Device) UploadCSR(h HostCSR) (*SparseCSR, error) {
	const op = "upload_csr"
	if err := nilTensors(op, []string{"crows", "cols", "values"}, h.Crows, h.Cols, h.Values); err != nil {
		return nil, err
	}
	if err := checkSparse(op, "x", hostArrays(true, h.Shape, h.Crows, h.Cols, h.Values), d.caps.FP64); err != nil {
		return nil, err
	}
	if h.Crows.dtype != h.Cols.dtype {
		return nil, argErr(op, "x.cols", "dtype "+h.Cols.dtype.String(), "crows' dtype "+h.Crows.dtype.String(), ErrInvalidArgument)
	}
	var outs temps
	for _, t := range []*Tensor{h.Crows, h.Cols, h.Values} {
		dt, err := d.Upload(t)
		if err != nil {
			outs.release()
			return nil, err
		}
		outs.add(dt)
	}
	return &SparseCSR{Crows: outs[0], Cols: outs[1], Values: outs[2], Shape: slices.Clone(h.Shape)}, nil
}

// ToHost copies the tensor to the host.
func (s *SparseCOO) ToHost() (HostCOO, error) {
	idx, err := s.Indices.ToHost()
	if err != nil {
		return HostCOO{}, err
	}
	vals, err := s.Values.ToHost()
	if err != nil {
		return HostCOO{}, err
	}
	return HostCOO{Indices: idx, Values: vals, Shape: slices.Clone(s.Shape)}, nil
}

// ToHost copies the tensor to the host.
func (s *SparseCSR) ToHost() (HostCSR, error) {
	var ts [3]*Tensor
	for i, t := range []*DeviceTensor{s.Crows, s.Cols, s.Values} {
		h, err := t.ToHost()
		if err != nil {
			return HostCSR{}, err
		}
		ts[i] = h
	}
	return HostCSR{Crows: ts[0], Cols: ts[1], Values: ts[2], Shape: slices.Clone(s.Shape)}, nil
}

// one returns the preparation of a single operand: validated, keyed and
// coalesced.
func (d *Device) one(op string, o *spOperand) func(tmp *temps) (*spOperand, error) {
	return func(tmp *temps) (*spOperand, error) {
		_, err := d.prepare(op, []*spOperand{o}, tmp)
		return o, err
	}
}

func cooOperand(x *SparseCOO) *spOperand { return &spOperand{arg: "x", coo: x, n: x.Values.Len()} }
func csrOperand(x *SparseCSR) *spOperand { return &spOperand{arg: "x", csr: x, n: x.Values.Len()} }

// convert prepares an operand and writes it out in another form; the
// outputs are released on failure.
func convert[T any](op string, prep func(tmp *temps) (*spOperand, error), emit func(op string, o *spOperand, outs, tmp *temps) (T, error)) (T, error) {
	var zero T
	var tmp, outs temps
	defer tmp.release()
	o, err := prep(&tmp)
	if err != nil {
		return zero, err
	}
	out, err := emit(op, o, &outs, &tmp)
	if err != nil {
		outs.release()
		return zero, err
	}
	return out, nil
}

// emit queues a coalesced operand's coordinates (the last ndim dims of
// shape; ndim 0: the columns of a CSR shape, flat) and a copy of its values.
func (d *Device) emit(op string, o *spOperand, shape []int64, ndim int, outs, tmp *temps) (idx, vals *DeviceTensor, err error) {
	idxShape := []int64{int64(ndim), o.n}
	if ndim == 0 { // the columns of a CSR shape
		ndim, idxShape = 1, idxShape[1:]
	}
	if idx, err = outs.alloc(d, op, Int64, idxShape...); err != nil {
		return nil, nil, err
	}
	dt := o.dtype()
	if vals, err = outs.alloc(d, op, dt, o.n); err != nil {
		return nil, nil, err
	}
	if o.n == 0 {
		return idx, vals, nil
	}
	sh, err := d.uploadInt64s(op, tmp, shape[len(shape)-ndim:])
	if err != nil {
		return nil, nil, err
	}
	if err := run(d, op, kernels.SparseF32, d.elementwise(op, o.n), kernels.SparseUnkey{Keys: o.keys.raw(), Idx: idx.raw(), Shape: sh.raw(),
		Ndim: int64(ndim), N: o.n}); err != nil {
		return nil, nil, err
	}
	if err := d.copyBytes(op, vals.raw(), 0, o.vals, 0, o.n*int64(dt.Size())); err != nil {
		return nil, nil, err
	}
	return idx, vals, nil
}

func (d *Device) emitCOO(op string, o *spOperand, outs, tmp *temps) (*SparseCOO, error) {
	shape := o.shape()
	idx, vals, err := d.emit(op, o, shape, len(shape), outs, tmp)
	if err == nil {
		err = d.flush(op)
	}
	if err != nil {
		return nil, err
	}
	return &SparseCOO{Indices: idx, Values: vals, Shape: slices.Clone(shape), Coalesced: true}, nil
}

func (d *Device) emitCSR(op string, o *spOperand, outs, tmp *temps) (*SparseCSR, error) {
	shape := o.shape()
	if len(shape) != 2 && len(shape) != 3 {
		return nil, argErr(op, "x.shape", fmt.Sprint(shape), "of rank 2 or 3 (CSR)", ErrInvalidArgument)
	}
	cols, vals, err := d.emit(op, o, shape, 0, outs, tmp)
	if err != nil {
		return nil, err
	}
	crows, err := outs.alloc(d, op, Int64, crowShape(shape)...)
	if err == nil {
		err = d.crowsOf(op, spResult{keys: o.keys, u: o.n}, shape, crows, tmp)
	}
	if err == nil {
		err = d.flush(op)
	}
	if err != nil {
		return nil, err
	}
	return &SparseCSR{Crows: crows, Cols: cols, Values: vals, Shape: slices.Clone(shape), Coalesced: true}, nil
}

// Coalesce returns x with its entries sorted lexicographically and
// duplicates summed in input order (the scalar reference's bits on every
// device). An out-of-range index is an error naming the first.
func (d *Device) Coalesce(x *SparseCOO) (*SparseCOO, error) {
	const op = "sparse_coalesce"
	if _, err := d.checkCOO(op, "x", x); err != nil {
		return nil, err
	}
	return convert(op, d.one(op, cooOperand(x)), d.emitCOO)
}

// COOToCSR converts a 2-D or 3-D (batched) COO tensor to CSR, coalescing it.
func (d *Device) COOToCSR(x *SparseCOO) (*SparseCSR, error) {
	const op = "sparse_to_csr"
	if _, err := d.checkCOO(op, "x", x); err != nil {
		return nil, err
	}
	if len(x.Shape) != 2 && len(x.Shape) != 3 {
		return nil, argErr(op, "x.shape", fmt.Sprint(x.Shape), "of rank 2 or 3 (CSR)", ErrInvalidArgument)
	}
	return convert(op, d.one(op, cooOperand(x)), d.emitCSR)
}

// CSRToCOO converts a CSR tensor to COO, coalescing it.
func (d *Device) CSRToCOO(x *SparseCSR) (*SparseCOO, error) {
	const op = "sparse_to_coo"
	if _, err := d.checkCSR(op, "x", x); err != nil {
		return nil, err
	}
	return convert(op, d.one(op, csrOperand(x)), d.emitCOO)
}

// toDense writes a prepared operand into a new dense tensor.
func (d *Device) toDense(op string, o *spOperand, _, _ *temps) (*DeviceTensor, error) {
	dt := o.dtype()
	out, err := d.alloc(op, dt, o.shape())
	if err != nil {
		return nil, err
	}
	if out.n > 0 {
		err = d.fill(out.raw(), 0, out.n*int64(dt.Size()), []byte{0})
	}
	if err == nil && o.n > 0 {
		err = d.launch(op, dtVariant(dt), d.elementwise(op, o.n), kernels.SparseToDense{Keys: o.keys.raw(), Vals: o.vals, Dense: out.raw(), N: o.n})
	}
	if err == nil {
		err = d.flush(op)
	}
	if err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// SparseToDense returns the dense form of a COO tensor (duplicates summed,
// everything outside the pattern 0).
func (d *Device) SparseToDense(x *SparseCOO) (*DeviceTensor, error) {
	const op = "sparse_to_dense"
	if _, err := d.checkCOO(op, "x", x); err != nil {
		return nil, err
	}
	return convert(op, d.one(op, cooOperand(x)), d.toDense)
}

// SparseCSRToDense returns the dense form of a CSR tensor.
func (d *Device) SparseCSRToDense(x *SparseCSR) (*DeviceTensor, error) {
	const op = "sparse_to_dense"
	if _, err := d.checkCSR(op, "x", x); err != nil {
		return nil, err
	}
	return convert(op, d.one(op, csrOperand(x)), d.toDense)
}

// fromDense keys the entries of a dense tensor other than 0 (NaN included;
// +0 and -0 not), waiting once for their count.
func (d *Device) fromDense(op string, dense *DeviceTensor, tmp *temps) (*spOperand, error) {
	if err := d.checkIn(op, "dense", dense); err != nil {
		return nil, err
	}
	if dense.dtype != Float32 && dense.dtype != Float64 {
		return nil, argErr(op, "dense", "dtype "+dense.dtype.String(), "float32 or float64", ErrUnsupported)
	}
	if len(dense.shape) == 0 {
		return nil, argErr(op, "dense", "a scalar", "of rank >= 1", ErrInvalidArgument)
	}
	n := dense.n
	pos, err := tmp.alloc(d, op, Int64, n)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		if err := d.launch(op, dtVariant(dense.dtype), d.elementwise(op, n), kernels.SparseNonzero{Dense: dense.raw(), Nz: pos.raw(), N: n}); err != nil {
			return nil, err
		}
	}
	s, err := d.scanBuf(op, Int64, pos.raw(), pos.raw(), n, kernels.FlagNone, true)
	if err != nil {
		return nil, err
	}
	defer s.release()
	if err := d.flush(op); err != nil {
		return nil, err
	}
	u64, err := s.total(op)
	if err != nil {
		return nil, err
	}
	u := int64(u64)
	keys, err := tmp.alloc(d, op, Int64, u)
	if err != nil {
		return nil, err
	}
	vals, err := tmp.alloc(d, op, dense.dtype, u)
	if err != nil {
		return nil, err
	}
	if u > 0 {
		if err := d.launch(op, dtVariant(dense.dtype), d.elementwise(op, n), kernels.SparseFromDense{Dense: dense.raw(), Pos: pos.raw(),
			Keys: keys.raw(), Vals: vals.raw(), N: n}); err != nil {
			return nil, err
		}
	}
	coo := &SparseCOO{Values: vals, Shape: dense.shape}
	return &spOperand{arg: "dense", coo: coo, keys: keys, vals: vals.raw(), n: u, sorted: true}, nil
}

// DenseToCOO returns the COO form of a dense tensor: its entries other
// than 0 (NaN is stored, +0 and -0 are not), coalesced.
func (d *Device) DenseToCOO(dense *DeviceTensor) (*SparseCOO, error) {
	const op = "dense_to_coo"
	return convert(op, func(tmp *temps) (*spOperand, error) { return d.fromDense(op, dense, tmp) }, d.emitCOO)
}

// DenseToCSR returns the CSR form of a 2-D or 3-D (batched) dense tensor
// (as DenseToCOO).
func (d *Device) DenseToCSR(dense *DeviceTensor) (*SparseCSR, error) {
	const op = "dense_to_csr"
	if dense != nil && len(dense.shape) != 2 && len(dense.shape) != 3 {
		return nil, argErr(op, "dense", fmt.Sprintf("shape %v", dense.shape), "of rank 2 or 3 (CSR)", ErrInvalidArgument)
	}
	return convert(op, func(tmp *temps) (*spOperand, error) { return d.fromDense(op, dense, tmp) }, d.emitCSR)
}
