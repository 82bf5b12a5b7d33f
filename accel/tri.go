package accel

import (
	"fmt"
	"math"
	"math/big"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// triLayout is the row structure of a tril/triu result that the kernels
// take (see clkernels/common/tri_math.h): lead rows (empty for tril, full
// for triu), n trapezoid rows whose first has length a, the trapezoid's
// element count T, and the total N.
type triLayout struct {
	N, C, lead, n, a, T int64
	upper               bool
	maxRow, maxCol      int64 // largest row and column index written (N > 0)
}

func bigClamp(x, lo, hi *big.Int) *big.Int {
	if x.Cmp(lo) < 0 {
		return new(big.Int).Set(lo)
	}
	if x.Cmp(hi) > 0 {
		return new(big.Int).Set(hi)
	}
	return x
}

// maxTriN bounds N so that 2*N (the output's element count) fits in int64.
const maxTriN = math.MaxInt64 / 2

// newTriLayout validates the arguments and computes the layout exactly
// (in big integers, so no offset or size can overflow on the way).
func newTriLayout(op string, rows, cols, offset int64, upper bool, dtype DType) (triLayout, error) {
	if rows < 0 {
		return triLayout{}, argErr(op, "row", rows, ">= 0", ErrInvalidArgument)
	}
	if cols < 0 {
		return triLayout{}, argErr(op, "col", cols, ">= 0", ErrInvalidArgument)
	}
	if dtype != Int32 && dtype != Int64 {
		return triLayout{}, argErr(op, "dtype", dtype, "int32 or int64", ErrInvalidArgument)
	}
	b := big.NewInt
	R, C, off := b(rows), b(cols), b(offset)
	zero, one := b(0), b(1)
	add := func(x, y *big.Int) *big.Int { return new(big.Int).Add(x, y) }
	sub := func(x, y *big.Int) *big.Int { return new(big.Int).Sub(x, y) }
	mul := func(x, y *big.Int) *big.Int { return new(big.Int).Mul(x, y) }
	negR := new(big.Int).Neg(R)
	off = bigClamp(off, negR, C) // offsets beyond the matrix give the same result
	var lead, end, a, T, N, maxRow, maxCol *big.Int
	if !upper {
		lead = bigClamp(new(big.Int).Neg(off), zero, R)              // empty rows
		end = bigClamp(sub(sub(C, off), one), lead, R)               // end of the trapezoid
		a = add(add(lead, off), one)                                 // its first row's length
		n := sub(end, lead)                                          // its rows
		T = add(mul(n, a), new(big.Int).Rsh(mul(n, sub(n, one)), 1)) // its elements
		N = add(T, mul(sub(R, end), C))
		maxRow = sub(R, one)
		maxCol = add(maxRow, off)
		if lim := sub(C, one); maxCol.Cmp(lim) > 0 {
			maxCol = lim
		}
	} else {
		lead = bigClamp(sub(one, off), zero, R) // full rows
		end = bigClamp(sub(C, off), lead, R)
		a = sub(C, add(lead, off))
		n := sub(end, lead)
		T = sub(mul(n, a), new(big.Int).Rsh(mul(n, sub(n, one)), 1))
		N = add(mul(lead, C), T)
		maxRow = sub(end, one)
		maxCol = sub(C, one)
	}
	if !N.IsInt64() || N.Cmp(b(maxTriN)) > 0 {
		return triLayout{}, argErr(op, "row*col", fmt.Sprintf("%d*%d (offset %d)", rows, cols, offset),
			fmt.Sprintf("small enough that 2*N fits in int64 (N = %s)", N), ErrTooLarge)
	}
	l := triLayout{N: N.Int64(), C: cols, lead: lead.Int64(), n: sub(end, lead).Int64(), T: T.Int64(), upper: upper}
	if l.n > 0 {
		l.a = a.Int64()
	}
	if l.N > 0 {
		l.maxRow, l.maxCol = maxRow.Int64(), maxCol.Int64()
		if dtype == Int32 && (l.maxRow > math.MaxInt32 || l.maxCol > math.MaxInt32) {
			return triLayout{}, argErr(op, "dtype", dtype,
				fmt.Sprintf("wide enough for the largest index %d (use int64)", max(l.maxRow, l.maxCol)), ErrInvalidArgument)
		}
	}
	return l, nil
}

func triOp(upper bool) string {
	if upper {
		return "triu_indices"
	}
	return "tril_indices"
}

// TrilIndices returns the indices of the lower triangle of a rows x cols
// matrix, with PyTorch's semantics: a [2, N] tensor whose first row holds
// row indices and second column indices, in row-major order, of every
// (r, c) with c - r <= offset. Any int64 offset is allowed; rows or cols may
// be 0. dtype is Int32 or Int64.
func (d *Device) TrilIndices(rows, cols, offset int64, dtype DType) (*DeviceTensor, error) {
	return d.triIndices(rows, cols, offset, false, dtype)
}

// TriuIndices is TrilIndices for the upper triangle: every (r, c) with
// c - r >= offset.
func (d *Device) TriuIndices(rows, cols, offset int64, dtype DType) (*DeviceTensor, error) {
	return d.triIndices(rows, cols, offset, true, dtype)
}

// TrilIndicesInto is TrilIndices writing into out, which must be a live
// tensor of this device with shape [2, N] and dtype Int32 or Int64: a loop
// of calls allocates nothing.
func (d *Device) TrilIndicesInto(out *DeviceTensor, rows, cols, offset int64) error {
	return d.triIndicesInto(out, rows, cols, offset, false)
}

// TriuIndicesInto is TriuIndices writing into out (see TrilIndicesInto).
func (d *Device) TriuIndicesInto(out *DeviceTensor, rows, cols, offset int64) error {
	return d.triIndicesInto(out, rows, cols, offset, true)
}

func (d *Device) triIndices(rows, cols, offset int64, upper bool, dtype DType) (*DeviceTensor, error) {
	op := triOp(upper)
	l, err := newTriLayout(op, rows, cols, offset, upper, dtype)
	if err != nil {
		return nil, err
	}
	out, err := d.alloc(op, dtype, []int64{2, l.N})
	if err != nil {
		return nil, err
	}
	if err := d.triRun(op, l, 0, out); err != nil {
		out.Release()
		return nil, err
	}
	return out, d.flush(op)
}

func (d *Device) triIndicesInto(out *DeviceTensor, rows, cols, offset int64, upper bool) error {
	op := triOp(upper)
	if err := d.checkOut(op, out); err != nil {
		return err
	}
	l, err := newTriLayout(op, rows, cols, offset, upper, out.dtype)
	if err != nil {
		return err
	}
	if len(out.shape) != 2 || out.shape[0] != 2 || out.shape[1] != l.N {
		return argErr(op, "out", fmt.Sprintf("shape %v", out.shape), fmt.Sprintf("shape [2 %d]", l.N), ErrInvalidArgument)
	}
	if err := d.triRun(op, l, 0, out); err != nil {
		return err
	}
	return d.flush(op)
}

// triWindow computes elements [k0, k0+count) of a tril/triu result into a
// new [2, count] tensor. The whole result is the window [0, N); tests use
// small windows of results too large to hold to check the index math at
// element indices beyond 2^31 and up to 2^62.
func (d *Device) triWindow(op string, l triLayout, k0, count int64, dtype DType) (*DeviceTensor, error) {
	out, err := d.alloc(op, dtype, []int64{2, count})
	if err != nil {
		return nil, err
	}
	if err := d.triRun(op, l, k0, out); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// triRun queues the kernel for the window [k0, k0+out.shape[1]).
func (d *Device) triRun(op string, l triLayout, k0 int64, out *DeviceTensor) error {
	count := out.shape[1]
	if count == 0 {
		return nil
	}
	variant := kernels.TriIndicesI64
	if out.dtype == Int32 {
		variant = kernels.TriIndicesI32
	}
	plan := d.plan(host.PlanElementwiseWrite(op, d.caps, count, 2*count*int64(out.dtype.Size())))
	e := int64(out.dtype.Size())
	d.reportModel(op, "elementwise", plan, func() traffic { return triTraffic(count, e) }, 2*count*e)
	return run(d, op, variant, plan, kernels.TriIndicesRun{Dst: out.raw(), Count: count, K0: k0,
		C: l.C, Lead: l.lead, N: l.n, A: l.a, T: l.T, Upper: b2i(l.upper)})
}
