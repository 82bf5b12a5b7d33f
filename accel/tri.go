package accel

import (
	"fmt"
	"math"
	"math/big"
	"os"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/reference"
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
	out, _, err := d.triIndicesTimed(rows, cols, offset, upper, dtype)
	return out, err
}

// triIndicesTimed is triIndices returning the kernel's device seconds too.
func (d *Device) triIndicesTimed(rows, cols, offset int64, upper bool, dtype DType) (*DeviceTensor, float64, error) {
	op := triOp(upper)
	l, err := newTriLayout(op, rows, cols, offset, upper, dtype)
	if err != nil {
		return nil, 0, err
	}
	out, err := d.alloc(op, dtype, []int64{2, l.N})
	if err != nil {
		return nil, 0, err
	}
	secs, err := d.triRun(op, l, 0, out)
	if err != nil {
		out.Release()
		return nil, 0, err
	}
	return out, secs, nil
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
	_, err = d.triRun(op, l, 0, out)
	return err
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
	if _, err := d.triRun(op, l, k0, out); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// triRun launches the kernel for the window [k0, k0+out.shape[1]) and
// returns the kernel's device time in seconds.
func (d *Device) triRun(op string, l triLayout, k0 int64, out *DeviceTensor) (float64, error) {
	count := out.shape[1]
	if count == 0 {
		return 0, nil
	}
	variant := "i64"
	if out.dtype == Int32 {
		variant = "i32"
	}
	spec := host.KernelSpec{File: "tri_indices", Variant: variant, Entry: "tri_indices"}
	plan := d.plan(host.PlanElementwise(op, d.caps, count))
	secs, err := d.launch(spec, plan, host.BufArg(out.raw()), host.I64(count), host.I64(k0), host.I64(l.C),
		host.I64(l.lead), host.I64(l.n), host.I64(l.a), host.I64(l.T), host.I64(b2i(l.upper)))
	if err != nil {
		return 0, fmt.Errorf("accel: %s: %w", op, err)
	}
	return secs, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TrilIndices computes tril_indices on the host with the scalar reference
// (see Device.TrilIndices for the semantics).
func TrilIndices(rows, cols, offset int64, dtype DType) (*Tensor, error) {
	return refTriIndices(rows, cols, offset, false, dtype)
}

// TriuIndices computes triu_indices on the host with the scalar reference.
func TriuIndices(rows, cols, offset int64, dtype DType) (*Tensor, error) {
	return refTriIndices(rows, cols, offset, true, dtype)
}

func refTriIndices(rows, cols, offset int64, upper bool, dtype DType) (*Tensor, error) {
	l, err := newTriLayout(triOp(upper), rows, cols, offset, upper, dtype)
	if err != nil {
		return nil, err
	}
	if l.N > math.MaxInt32*4 {
		return nil, argErr(triOp(upper), "row*col", l.N, "at most 2^33 elements for the host reference", ErrTooLarge)
	}
	r, c := reference.TriIndices(rows, cols, offset, upper)
	out, err := NewTensor(dtype, 2, l.N)
	if err != nil {
		return nil, err
	}
	if dtype == Int64 {
		v := out.Int64s()
		copy(v, r)
		copy(v[l.N:], c)
	} else {
		v := out.Int32s()
		for i := range r {
			v[i] = int32(r[i])
			v[int(l.N)+i] = int32(c[i])
		}
	}
	return out, nil
}

// plan applies a test's plan override, if any.
func (d *Device) plan(p host.Plan) host.Plan {
	if d.planHook != nil {
		return d.planHook(p)
	}
	return p
}

// launch compiles (or takes from the cache) and runs one kernel.
func (d *Device) launch(spec host.KernelSpec, plan host.Plan, args ...host.Arg) (float64, error) {
	k, err := d.h.Kernel(spec, plan)
	if err != nil {
		return 0, err
	}
	dur, err := d.h.Launch(k, plan, args...)
	if d.trace {
		fmt.Fprintf(os.Stderr, "accel: %s %s.%s %s: %v\n", d.caps.ID(), spec.File, spec.Variant, plan, dur)
	}
	return dur.Seconds(), err
}
