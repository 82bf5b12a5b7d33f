// Package fuzzgen decodes arbitrary bytes into op invocations for the
// command line's registry (package ops): an op of a family, its string
// parameters (in range and not: negative, huge, malformed) and its host
// inputs (shapes, dtypes, index values in and out of range, floats with
// NaN, inf and -0), with how a device's outputs must compare with the
// reference's. The fuzz targets (cmd/accel/internal/ops) and the soak
// (accel soak) share it.
package fuzzgen

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/cmd/accel/internal/ops"
	"github.com/accelkern/accel/reference"
)

// Bytes decodes the fuzzer's bytes into choices; past the end it reads
// zeros, so every input decodes.
type Bytes struct {
	b []byte
	i int
}

func (z *Bytes) byte() byte {
	if z.i >= len(z.b) {
		return 0
	}
	c := z.b[z.i]
	z.i++
	return c
}

// intn returns a choice in [0, n).
func (z *Bytes) intn(n int) int {
	if n <= 1 {
		return 0
	}
	return (int(z.byte()) | int(z.byte())<<8) % n
}

func (z *Bytes) bool() bool { return z.byte()&1 == 1 }

// oneIn is true about once in n draws.
func (z *Bytes) oneIn(n int) bool { return z.intn(n) == n-1 }

// size returns a dimension: mostly 0..max, sometimes an edge or a bad one.
func (z *Bytes) size(max int) int64 {
	if z.oneIn(24) {
		return []int64{-1, -7, 1 << 31, math.MaxInt64}[z.intn(4)]
	}
	return int64(z.intn(max + 1))
}

// scalar returns an integer parameter: mostly small, sometimes huge.
func (z *Bytes) scalar(small int) int64 {
	if z.oneIn(8) {
		return []int64{math.MinInt64, math.MaxInt64, -1 << 31, 1<<31 - 1, 1 << 31, 1 << 32, 1 << 40, -1 << 40}[z.intn(8)]
	}
	return int64(z.intn(2*small+1) - small)
}

// valueKind says which values a tensor may hold so that a device's order
// of operations cannot change the result: exact integers for sums, powers
// of two without fractions for products, anything for copies and
// comparisons.
type valueKind int

const (
	valuesAny  valueKind = iota // copies, min/max, sorts
	valuesSum                   // small integers, inf, NaN
	valuesProd                  // 0, -0, +-1, +-2, inf, NaN
)

var specials = []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)}

func (z *Bytes) float(kind valueKind) float64 {
	if z.oneIn(10) {
		return specials[z.intn(len(specials))]
	}
	switch kind {
	case valuesProd:
		return []float64{0, 1, -1, 2, -2}[z.intn(5)]
	case valuesSum:
		return float64(z.intn(17) - 8)
	}
	return float64(z.intn(4001)-2000) / 16
}

// tensor returns a tensor of dt and shape with values of kind (nil when the
// shape cannot be a host tensor: such inputs are not what the fuzzer tests).
func (z *Bytes) tensor(dt accel.DType, shape []int64, kind valueKind) *accel.Tensor {
	n := int64(1)
	for _, s := range shape {
		if s < 0 || s > 1<<12 {
			return nil
		}
		n *= s
	}
	if n > 1<<14 {
		return nil
	}
	x, err := accel.NewTensor(dt, shape...)
	if err != nil {
		return nil
	}
	for i := int64(0); i < n; i++ {
		switch dt {
		case accel.Float32:
			x.Float32s()[i] = float32(z.float(kind))
		case accel.Float64:
			x.Float64s()[i] = z.float(kind)
		case accel.Int32:
			x.Int32s()[i] = int32(z.scalarValue())
		case accel.Int64:
			x.Int64s()[i] = z.scalarValue()
		case accel.Uint32:
			x.Uint32s()[i] = uint32(z.scalarValue())
		case accel.Uint64:
			x.Uint64s()[i] = uint64(z.scalarValue())
		case accel.Bool:
			x.Bools()[i] = z.byte() & 1
		}
	}
	return x
}

// scalarValue is an integer element: small, sometimes an extreme.
func (z *Bytes) scalarValue() int64 {
	if z.oneIn(16) {
		return []int64{math.MinInt64, math.MaxInt64, math.MinInt32, math.MaxInt32, -1}[z.intn(5)]
	}
	return int64(z.intn(33) - 16)
}

// indices returns an int64 tensor of shape with values in [0, n), and,
// when bad, sometimes negative or >= n.
func (z *Bytes) indices(shape []int64, n int64, bad bool) *accel.Tensor {
	x := z.tensor(accel.Int64, shape, valuesAny)
	if x == nil {
		return nil
	}
	v := x.Int64s()
	for i := range v {
		switch {
		case bad && z.oneIn(20):
			v[i] = []int64{-1, n, n + 1, math.MaxInt64, math.MinInt64}[z.intn(5)]
		case n > 0:
			v[i] = int64(z.intn(int(min(n, 1<<16))))
		default:
			v[i] = 0
		}
	}
	return x
}

func (z *Bytes) dtype(dts ...accel.DType) accel.DType { return dts[z.intn(len(dts))] }

func (z *Bytes) pick(s ...string) string { return s[z.intn(len(s))] }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// Case is one decoded input: an op, its parameters and inputs, and how to
// compare float outputs.
type Case struct {
	Op     string // "" when the input decodes to a valid call too big to run
	Params map[string]string
	Inputs map[string]*accel.Tensor
	// Exact: outputs must have the reference's bits; otherwise float
	// outputs must be equal values (NaN matching NaN, -0 matching 0, where
	// the order of a reduction may pick either zero) or within Rtol (where
	// a mean divides differently).
	Exact bool
	Rtol  float64
	// DeviceOnly: the reference is not run (its output would be huge); a
	// device must reject the input (too large, or an int32 output that
	// cannot hold the indices).
	DeviceOnly bool
}

// Representable reports whether every input could be built on the host
// (a decoded shape past the decoder's bounds gives a nil input).
func (c Case) Representable() bool {
	for _, x := range c.Inputs {
		if x == nil {
			return false
		}
	}
	return true
}

// Families are the decoders by op family.
var Families = map[string]func(*Bytes) Case{
	"tri": DecodeTri, "diag": DecodeDiag, "scatter": DecodeScatter, "prim": DecodePrim,
	"sparse": DecodeSparse, "indice": DecodeIndice,
}

// New returns a decoder of b; past its end it reads zeros, so every input
// decodes.
func New(b []byte) *Bytes { return &Bytes{b: b} }

// sentinels are the errors every rejection must wrap.
var sentinels = []error{accel.ErrInvalidArgument, accel.ErrTooLarge, accel.ErrUnsupported, accel.ErrOutOfMemory}

// Sentinel returns the sentinel of accel's that err wraps (invalid
// argument, too large, unsupported, out of memory), or nil.
func Sentinel(err error) error {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return s
		}
	}
	return nil
}

// DecodeTri decodes tril_indices or triu_indices: sizes, offsets and dtypes
// in range and not; huge valid triangles are device-only (must be rejected)
// or skipped (Op "").
func DecodeTri(z *Bytes) Case {
	op := z.pick("tril_indices", "triu_indices")
	row, col, off := z.scalar(40), z.scalar(40), z.scalar(45)
	if z.bool() { // sizes are mostly non-negative
		row, col = max(row, -row), max(col, -col)
	}
	p := map[string]string{"row": itoa(row), "col": itoa(col), "offset": itoa(off)}
	if dt := z.pick("", "int32", "int64", "int32", "int64", "float32", "bogus"); dt != "" {
		p["dtype"] = dt
	}
	c := Case{Op: op, Params: p, Exact: true}
	if row >= 0 && col >= 0 {
		switch n := reference.TriPrefix(row, col, off, op == "triu_indices"); {
		case n.Cmp(big.NewInt(1<<33)) >= 0:
			c.DeviceOnly = p["dtype"] != "float32" && p["dtype"] != "bogus"
		case n.Cmp(big.NewInt(1<<16)) > 0:
			return Case{} // valid but slow: the tests cover big triangles
		}
	}
	return c
}

// shape returns a shape of rank in [lo, hi] with dims up to max.
func (z *Bytes) shape(lo, hi, max int) []int64 {
	r := lo + z.intn(hi-lo+1)
	s := make([]int64, r)
	for i := range s {
		s[i] = z.size(max)
	}
	return s
}

// wrapDim maps a dim in [-rank, rank) to [0, rank), or -1 when out of range.
func wrapDim(d int64, rank int) int {
	if d < 0 {
		d += int64(rank)
	}
	if d < 0 || d >= int64(rank) {
		return -1
	}
	return int(d)
}

var allDTypes = []accel.DType{accel.Float32, accel.Float64, accel.Int32, accel.Int64}

// DecodeDiag decodes diagonal_scatter on 1-D to 4-D tensors: dims, offsets
// and src shapes, mostly the right ones.
func DecodeDiag(z *Bytes) Case {
	dt := z.dtype(allDTypes...)
	in := z.shape(1, 4, 5)
	off, d1, d2 := z.scalar(6), int64(z.intn(11)-5), int64(z.intn(11)-5)
	if r := len(in); r >= 2 && !z.oneIn(8) {
		// mostly two distinct dims in range, either sign
		a := z.intn(r)
		b := (a + 1 + z.intn(r-1)) % r
		d1, d2 = int64(a-r*z.intn(2)), int64(b-r*z.intn(2))
	}
	// The src shape diagonal_scatter needs, then sometimes a wrong one.
	var src []int64
	a, b := wrapDim(d1, len(in)), wrapDim(d2, len(in))
	if a >= 0 && b >= 0 && a != b && in[a] >= 0 && in[b] >= 0 && off > -1<<40 && off < 1<<40 {
		for i, s := range in {
			if i != a && i != b {
				src = append(src, s)
			}
		}
		src = append(src, max(0, min(in[a]-max(-off, 0), in[b]-max(off, 0))))
	} else {
		src = z.shape(0, 3, 5)
	}
	if z.oneIn(8) {
		src = z.shape(0, 3, 5)
	}
	return Case{Op: "diagonal_scatter", Exact: true,
		Params: map[string]string{"offset": itoa(off), "dim1": itoa(d1), "dim2": itoa(d2)},
		Inputs: map[string]*accel.Tensor{"input": z.tensor(dt, in, valuesAny), "src": z.tensor(z.maybeOther(dt), src, valuesAny)}}
}

// maybeOther returns dt, or now and then another dtype (a mismatch).
func (z *Bytes) maybeOther(dt accel.DType) accel.DType {
	if z.oneIn(16) {
		return z.dtype(append(allDTypes, accel.Uint32, accel.Bool)...)
	}
	return dt
}

// distinctAlong rewrites idx (of shape) so that the values along dim are
// distinct for every position of the other dims (assignments with one
// source per target, whose result is defined); n is the target's size.
func distinctAlong(z *Bytes, idx *accel.Tensor, dim int, n int64) {
	shape := idx.Shape()
	if shape[dim] > n || n > 1<<12 {
		return // not representable, or an input the fuzzer skips anyway
	}
	inner := int64(1)
	for _, s := range shape[dim+1:] {
		inner *= s
	}
	v := idx.Int64s()
	for base := int64(0); base < int64(len(v)); base++ {
		if (base/inner)%shape[dim] != 0 {
			continue
		}
		perm := make([]int64, n)
		for i := range perm {
			perm[i] = int64(i)
		}
		for i := int64(0); i < shape[dim]; i++ {
			j := i + int64(z.intn(int(n-i)))
			perm[i], perm[j] = perm[j], perm[i]
			v[base+i*inner] = perm[i]
		}
	}
}

// DecodeScatter decodes scatter, scatter_reduce, put_along_axis,
// take_along_axis, scatter_reduce_backward, index_add and index_reduce:
// shapes, dims, reductions, index values in and out of range (distinct
// per target where the op assigns, whose winner is otherwise undefined).
func DecodeScatter(z *Bytes) Case {
	op := z.pick("scatter", "scatter_reduce", "put_along_axis", "take_along_axis", "scatter_reduce_backward",
		"index_add", "index_reduce")
	if op == "index_add" || op == "index_reduce" {
		return decodeIndexReduce(z, op)
	}
	dt := z.dtype(allDTypes...)
	if op == "scatter_reduce_backward" && !z.oneIn(8) {
		dt = z.dtype(accel.Float32, accel.Float64) // its dtypes, mostly
	}
	in := z.shape(1, 3, 5)
	rank := len(in)
	dim := int64(z.intn(2*rank+2) - rank - 1)
	d := wrapDim(dim, rank)
	// The index: no larger than the input off the dim (sometimes larger),
	// values within the dim's size (sometimes not).
	idxShape := make([]int64, rank)
	for i := range idxShape {
		idxShape[i] = int64(z.intn(5))
		if i != d && in[i] >= 0 && !z.oneIn(12) {
			idxShape[i] = min(idxShape[i], in[i])
		}
	}
	if z.oneIn(16) {
		idxShape = z.shape(0, 3, 4)
	}
	var n int64
	if d >= 0 && in[d] > 0 {
		n = in[d]
	}
	if (op == "scatter" || op == "put_along_axis") && d >= 0 && len(idxShape) == rank && n > 0 && idxShape[d] > n {
		// more positions along dim than targets: an assign could not
		// keep its targets distinct (distinctAlong), and which duplicate
		// wins is undefined off the deterministic mode (a GPU's last
		// writer is not the reference's)
		idxShape[d] = n
	}
	idx := z.indices(idxShape, n, true)
	srcShape := append([]int64(nil), idxShape...)
	for i := range srcShape {
		srcShape[i] += int64(z.intn(2))
	}
	c := Case{Op: op, Exact: true, Params: map[string]string{}}
	reduce, kind := "assign", valuesAny
	switch op {
	case "scatter_reduce":
		reduce = z.pick("sum", "prod", "mean", "amax", "amin", "bogus")
		c.Params["reduce"] = reduce
		c.Params["include_self"] = z.pick("true", "false")
		c.Params["deterministic"] = z.pick("false", "true")
	case "scatter_reduce_backward":
		// Bit-reproducible: any values, exact outputs.
		reduce = z.pick("sum", "prod", "mean", "amax", "amin")
		c.Params["reduce"] = reduce
		c.Params["include_self"] = z.pick("true", "false")
		c.Params["deterministic"] = "true"
	case "put_along_axis":
		reduce = z.pick("assign", "sum", "prod", "mean", "amax", "amin")
		c.Params["reduce"] = reduce
		c.Params["include_self"] = z.pick("true", "false")
		srcShape = idxShape
	}
	switch reduce {
	case "sum", "mean":
		kind = valuesSum
	case "prod":
		kind = valuesProd
	}
	if reduce != "assign" && c.Params["deterministic"] != "true" {
		// The order of a parallel reduction may pick either zero, and a
		// mean divides in float.
		c.Exact, c.Rtol = false, 1e-6
	}
	if reduce == "assign" && op != "take_along_axis" && idx != nil && d >= 0 && len(idxShape) == rank {
		distinctAlong(z, idx, d, n)
	}
	switch op {
	case "put_along_axis", "take_along_axis":
		c.Params["axis"] = itoa(dim)
		if z.oneIn(10) {
			c.Params["axis"] = "none"
		}
		c.Inputs = map[string]*accel.Tensor{"arr": z.tensor(dt, in, kind), "indices": idx}
		if op == "put_along_axis" {
			c.Inputs["values"] = z.tensor(z.maybeOther(dt), srcShape, kind)
		}
	default:
		c.Params["dim"] = itoa(dim)
		c.Inputs = map[string]*accel.Tensor{"input": z.tensor(dt, in, kind), "index": idx, "src": z.tensor(z.maybeOther(dt), srcShape, kind)}
	}
	if op == "scatter_reduce_backward" {
		delete(c.Params, "deterministic")
		c.Exact = true
		gshape := in
		if z.oneIn(12) {
			gshape = z.shape(1, 3, 5)
		}
		c.Inputs["input"] = z.tensor(dt, in, valuesAny)
		c.Inputs["src"] = z.tensor(z.maybeOther(dt), srcShape, valuesAny)
		c.Inputs["grad_output"] = z.tensor(z.maybeOther(dt), gshape, valuesAny)
	}
	return c
}

// decodeIndexReduce decodes index_add and index_reduce: a 1-D index along
// dim (sometimes of another rank or length than source's dim), values in
// and out of range.
func decodeIndexReduce(z *Bytes, op string) Case {
	dt := z.dtype(allDTypes...)
	in := z.shape(1, 3, 5)
	rank := len(in)
	dim := int64(z.intn(2*rank+2) - rank - 1)
	d := wrapDim(dim, rank)
	var n int64
	if d >= 0 && in[d] > 0 {
		n = in[d]
	}
	l := int64(z.intn(6))
	idxShape := []int64{l}
	if z.oneIn(16) {
		idxShape = z.shape(0, 2, 3)
	}
	idx := z.indices(idxShape, n, true)
	srcShape := append([]int64(nil), in...)
	if d >= 0 {
		srcShape[d] = l
		if z.oneIn(12) {
			srcShape[d]++
		}
	}
	c := Case{Op: op, Exact: true, Params: map[string]string{"dim": itoa(dim), "deterministic": z.pick("false", "true")}}
	reduce, kind := "sum", valuesSum
	if op == "index_reduce" {
		reduce = z.pick("sum", "prod", "mean", "amax", "amin", "bogus")
		c.Params["reduce"] = reduce
		c.Params["include_self"] = z.pick("true", "false")
	}
	switch reduce {
	case "prod":
		kind = valuesProd
	case "amax", "amin", "bogus":
		kind = valuesAny
	}
	if c.Params["deterministic"] != "true" {
		c.Exact, c.Rtol = false, 1e-6
	}
	c.Inputs = map[string]*accel.Tensor{"input": z.tensor(dt, in, kind), "index": idx, "source": z.tensor(z.maybeOther(dt), srcShape, kind)}
	return c
}

// DecodePrim decodes cumsum, compact, sort, unique and segment_reduce.
func DecodePrim(z *Bytes) Case {
	op := z.pick("cumsum", "compact", "sort", "unique", "segment_reduce")
	shape := z.shape(0, 2, 40)
	c := Case{Op: op, Exact: true, Params: map[string]string{}}
	switch op {
	case "cumsum":
		dt := z.dtype(append(allDTypes, accel.Uint32, accel.Uint64)...)
		c.Params["exclusive"] = z.pick("false", "true")
		c.Inputs = map[string]*accel.Tensor{"x": z.tensor(dt, shape, valuesSum)}
	case "compact":
		dt := z.dtype(allDTypes...)
		mshape := shape
		if z.oneIn(10) {
			mshape = z.shape(0, 2, 40)
		}
		c.Inputs = map[string]*accel.Tensor{"x": z.tensor(dt, shape, valuesAny), "mask": z.tensor(z.dtype(accel.Bool, accel.Bool, accel.Bool, accel.Int32), mshape, valuesAny)}
	case "sort":
		dt := z.dtype(append(allDTypes, accel.Uint32, accel.Uint64)...)
		c.Params["descending"] = z.pick("false", "true")
		c.Inputs = map[string]*accel.Tensor{"keys": z.tensor(dt, shape, valuesAny)}
	case "unique":
		dt := z.dtype(append(allDTypes, accel.Uint32, accel.Uint64)...)
		c.Inputs = map[string]*accel.Tensor{"x": z.tensor(dt, shape, valuesAny)}
	case "segment_reduce":
		dt := z.dtype(allDTypes...)
		red := z.pick("sum", "min", "max", "prod", "bogus")
		kind := valuesAny
		if red == "sum" {
			kind = valuesSum
		}
		segs := z.scalar(12)
		if z.bool() {
			segs = max(segs, -segs)
		}
		c.Params["reduce"], c.Params["num_segments"] = red, itoa(segs)
		switch {
		case segs >= 1<<36:
			c.DeviceOnly = true // an output of at least 256 GB
		case segs > 1<<16:
			return Case{} // valid but big: the tests cover big outputs
		}
		n := int64(0)
		if len(shape) > 0 {
			n = shape[0]
		}
		ids := z.indices([]int64{max(n, 0)}, max(min(segs, 1<<12), 0), true)
		if ids != nil && !z.oneIn(6) { // mostly sorted, as the op requires
			v := ids.Int64s()
			for i := 1; i < len(v); i++ {
				if v[i] < v[i-1] {
					v[i], v[i-1] = v[i-1], v[i]
					i = 0
				}
			}
		}
		c.Inputs = map[string]*accel.Tensor{"values": z.tensor(dt, []int64{n}, kind), "segment_ids": ids}
		if z.oneIn(12) {
			c.Inputs["values"] = z.tensor(dt, z.shape(0, 2, 6), kind)
		}
	}
	return c
}

// Compare checks a device's outputs against the reference's as c says and
// returns the first difference.
func Compare(c Case, want, got map[string]*accel.Tensor) error {
	if len(want) != len(got) {
		return fmt.Errorf("%s: %d outputs, want %d", c.Op, len(got), len(want))
	}
	for name, w := range want {
		g := got[name]
		switch {
		case g == nil:
			return fmt.Errorf("%s: no output %s", c.Op, name)
		case w.DType() != g.DType() || fmt.Sprint(w.Shape()) != fmt.Sprint(g.Shape()):
			return fmt.Errorf("%s %v %s: got %s, want %s", c.Op, c.Params, name, g, w)
		}
		isFloat := w.DType() == accel.Float32 || w.DType() == accel.Float64
		if !isFloat {
			wb, gb := w.Bytes(), g.Bytes()
			for i := range wb {
				if wb[i] != gb[i] {
					e := i / w.DType().Size()
					return fmt.Errorf("%s %v %s: element %d differs from the reference's bits", c.Op, c.Params, name, e)
				}
			}
			continue
		}
		wf, gf := floats(w), floats(g)
		if c.Exact {
			// The bits, except that any NaN matches any NaN: which NaN an
			// operation on NaNs returns is up to the hardware.
			for i := range wf {
				if math.IsNaN(wf[i]) && math.IsNaN(gf[i]) {
					continue
				}
				if math.Float64bits(wf[i]) != math.Float64bits(gf[i]) {
					return fmt.Errorf("%s %v %s[%d]: got %v, want %v (bits)", c.Op, c.Params, name, i, gf[i], wf[i])
				}
			}
			continue
		}
		for i := range wf {
			if math.IsNaN(wf[i]) || math.IsNaN(gf[i]) {
				if !(math.IsNaN(wf[i]) && math.IsNaN(gf[i])) {
					return fmt.Errorf("%s %v %s[%d]: got %v, want %v", c.Op, c.Params, name, i, gf[i], wf[i])
				}
				continue
			}
			if wf[i] != gf[i] && !(math.Abs(wf[i]-gf[i]) <= c.Rtol*math.Abs(wf[i])) {
				return fmt.Errorf("%s %v %s[%d]: got %v, want %v (rtol %g)", c.Op, c.Params, name, i, gf[i], wf[i], c.Rtol)
			}
		}
	}
	return nil
}

func floats(x *accel.Tensor) []float64 {
	if x.DType() == accel.Float64 {
		return x.Float64s()
	}
	f := make([]float64, 0, x.Len())
	for _, v := range x.Float32s() {
		f = append(f, float64(v))
	}
	return f
}

func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = itoa(x)
	}
	return strings.Join(s, ",")
}

// sparseOperand returns the arrays of a COO (format "coo") or CSR operand
// of shape with about nnz entries, named with prefix: indices in range
// (duplicates and any order), now and then out of range, row pointers
// now and then broken, index dtype now and then int32.
func (z *Bytes) sparseOperand(format, prefix string, shape []int64, dt accel.DType) map[string]*accel.Tensor {
	for _, s := range shape {
		if s < 0 || s > 64 {
			return map[string]*accel.Tensor{prefix + "values": nil}
		}
	}
	nnz := int64(z.intn(24))
	idxDT := accel.Int64
	if z.oneIn(12) {
		idxDT = accel.Int32
	}
	coord := func(n int64) int64 {
		if z.oneIn(40) {
			return []int64{-1, n, n + 3}[z.intn(3)]
		}
		if n <= 0 {
			return 0
		}
		return int64(z.intn(int(n)))
	}
	out := map[string]*accel.Tensor{prefix + "values": z.tensor(dt, []int64{nnz}, valuesAny)}
	put := func(name string, v []int64, shape ...int64) {
		x, err := accel.NewTensor(idxDT, shape...)
		if err != nil {
			out[name] = nil
			return
		}
		for i, e := range v {
			if idxDT == accel.Int32 {
				x.Int32s()[i] = int32(e)
			} else {
				x.Int64s()[i] = e
			}
		}
		out[name] = x
	}
	if format == "coo" {
		nd := int64(len(shape))
		v := make([]int64, nd*nnz)
		for k := int64(0); k < nnz; k++ {
			for d := int64(0); d < nd; d++ {
				v[d*nnz+k] = coord(shape[d])
			}
		}
		put(prefix+"indices", v, nd, nnz)
		return out
	}
	// CSR: batches (1 for 2-D) of rows with row pointers from 0 to the
	// batch's entries; nnz splits over the batches.
	batches, rows, cols := int64(1), shape[0], shape[1]
	if len(shape) == 3 {
		batches, rows, cols = shape[0], shape[1], shape[2]
	}
	var crow, col []int64
	for b := int64(0); b < batches; b++ {
		per := nnz / max(batches, 1)
		if b == batches-1 {
			per = nnz - per*(batches-1)
		}
		cuts := make([]int64, rows+1)
		if rows == 0 {
			cuts[0] = per // no rows: entries cannot fit (an error unless per is 0)
		} else {
			for r := int64(1); r < rows; r++ {
				cuts[r] = int64(z.intn(int(per) + 1))
			}
			cuts[rows] = per
			slices.Sort(cuts[1:rows])
		}
		if z.oneIn(30) && rows > 1 {
			cuts[1], cuts[rows-1] = cuts[rows-1]+1, cuts[1] // decreasing pointers
		}
		crow = append(crow, cuts...)
		for k := int64(0); k < per; k++ {
			col = append(col, coord(cols))
		}
	}
	put(prefix+"crow", crow, int64(len(crow)))
	put(prefix+"col", col, int64(len(col)))
	out[prefix+"values"] = z.tensor(dt, []int64{int64(len(col))}, valuesAny)
	return out
}

// DecodeSparse decodes the sparse ops: sparse_div, sparse_add, sparse_sub,
// sparse_mul (COO of rank 1 to 4, CSR 2-D and batched), sparse_div_backward,
// sparse_coalesce, sparse_to_csr and sparse_to_coo. Their results are the
// reference's bits on every device (coalescing sums in input order).
func DecodeSparse(z *Bytes) Case {
	op := z.pick("sparse_div", "sparse_add", "sparse_sub", "sparse_mul", "sparse_div_backward", "sparse_coalesce", "sparse_to_csr", "sparse_to_coo")
	dt := z.dtype(accel.Float32, accel.Float32, accel.Float64)
	if z.oneIn(16) {
		dt = accel.Int32
	}
	c := Case{Op: op, Exact: true, Params: map[string]string{}, Inputs: map[string]*accel.Tensor{}}
	switch op {
	case "sparse_coalesce", "sparse_to_csr":
		shape := z.shape(1, 4, 6)
		if op == "sparse_to_csr" && !z.oneIn(8) {
			shape = z.shape(2, 3, 6)
		}
		c.Params["shape"] = joinInts(shape)
		for k, v := range z.sparseOperand("coo", "", shape, dt) {
			c.Inputs[k] = v
		}
		return c
	case "sparse_to_coo":
		shape := z.shape(2, 3, 6)
		c.Params["shape"] = joinInts(shape)
		for k, v := range z.sparseOperand("csr", "", shape, dt) {
			c.Inputs[k] = v
		}
		return c
	}
	format := z.pick("coo", "coo", "csr", "csr_batched")
	var shape []int64
	switch format {
	case "coo":
		shape = z.shape(1, 4, 6)
	case "csr":
		shape = z.shape(2, 2, 6)
	default:
		shape = z.shape(3, 3, 5)
	}
	c.Params["format"], c.Params["shape"] = format, joinInts(shape)
	if z.oneIn(20) {
		c.Params["format"] = "bogus"
	}
	yShape := shape
	if z.oneIn(16) {
		delete(c.Params, "shape")
		yShape = z.shape(len(shape), len(shape), 6)
		c.Params["x_shape"], c.Params["y_shape"] = joinInts(shape), joinInts(yShape)
	}
	for k, v := range z.sparseOperand(format, "x_", shape, dt) {
		c.Inputs[k] = v
	}
	if z.oneIn(6) {
		// identical patterns
		for k, v := range c.Inputs {
			if k != "x_values" {
				c.Inputs["y_"+k[2:]] = v
			}
		}
		if x := c.Inputs["x_values"]; x != nil {
			c.Inputs["y_values"] = z.tensor(dt, x.Shape(), valuesAny)
		}
	} else {
		for k, v := range z.sparseOperand(format, "y_", yShape, z.maybeOther(dt)) {
			c.Inputs[k] = v
		}
	}
	if op == "sparse_div_backward" && c.Representable() {
		// grad_out on the result's pattern: as many values as the forward
		// result has (now and then not).
		fwd := map[string]string{}
		for k, v := range c.Params {
			fwd[k] = v
		}
		n := int64(z.intn(8))
		if r, err := sparseForwardNNZ(fwd, c.Inputs); err == nil && !z.oneIn(10) {
			n = r
		}
		c.Inputs["grad_out_values"] = z.tensor(dt, []int64{n}, valuesAny)
	}
	return c
}

// sparseForwardNNZ is the entry count of sparse_div's result on the host.
func sparseForwardNNZ(params map[string]string, in map[string]*accel.Tensor) (int64, error) {
	out, err := ops.Run(nil, "sparse_div", params, in)
	if err != nil {
		return 0, err
	}
	return out["values"].Len(), nil
}

// DecodeIndice decodes get_indice_pairs: D = 1..4 (now and then 0 or 5),
// sites in range (now and then out of it or repeated), every mode and
// split policy, kernel sizes, strides, paddings and dilations in range and
// not. Its outputs are the same bytes on every device.
func DecodeIndice(z *Bytes) Case {
	D := 1 + z.intn(4)
	if z.oneIn(20) {
		D = []int{0, 5}[z.intn(2)]
	}
	bs := int64(1 + z.intn(3))
	spatial := make([]int64, D)
	for i := range spatial {
		spatial[i] = int64(1 + z.intn(9))
	}
	list := func(lo, hi int) []int64 {
		v := make([]int64, D)
		for i := range v {
			v[i] = int64(lo + z.intn(hi-lo+1))
		}
		if z.oneIn(25) && D > 0 {
			v[z.intn(D)] = []int64{0, -1, 1 << 40}[z.intn(3)]
		}
		return v
	}
	p := map[string]string{"batch_size": itoa(bs), "spatial_shape": joinInts(spatial), "ksize": joinInts(list(1, 5))}
	mode := z.pick("conv", "conv", "subm", "subm", "transpose", "inverse")
	switch mode {
	case "subm":
		p["subm"] = "true"
		if z.bool() {
			p["dilation"] = joinInts(list(1, 2))
		}
	case "transpose":
		p["transpose"] = "true"
		p["stride"], p["padding"] = joinInts(list(1, 3)), joinInts(list(0, 2))
		if z.bool() {
			p["out_padding"] = joinInts(list(0, 1))
		}
	default:
		if mode == "inverse" {
			p["inverse"] = "true"
		}
		p["stride"], p["padding"] = joinInts(list(1, 3)), joinInts(list(0, 2))
		if z.oneIn(3) {
			p["dilation"] = joinInts(list(1, 2))
		}
	}
	if z.oneIn(30) {
		p["subm"], p["transpose"] = "true", "true" // rejected together
	}
	p["split"] = z.pick("auto", "LL", "LK", "KL", "KK")
	if z.oneIn(40) {
		p["batch_size"] = itoa([]int64{0, -1}[z.intn(2)])
	}
	L := int64(z.intn(40))
	x, err := accel.NewTensor(accel.Int32, L, int64(1+D))
	if err != nil {
		return Case{Op: "get_indice_pairs", Params: p, Inputs: map[string]*accel.Tensor{"indices": nil}}
	}
	v := x.Int32s()
	seen := map[string]bool{}
	for r := int64(0); r < L; r++ {
		for try := 0; try < 8; try++ {
			row := v[r*int64(1+D) : (r+1)*int64(1+D)]
			row[0] = int32(z.intn(int(bs)))
			for d := 0; d < D; d++ {
				row[1+d] = int32(z.intn(int(spatial[d])))
			}
			if z.oneIn(60) {
				row[z.intn(1+D)] = []int32{-1, 1 << 20}[z.intn(2)] // out of range
			}
			key := fmt.Sprint(row)
			if !seen[key] || z.oneIn(40) { // distinct sites, now and then a duplicate
				seen[key] = true
				break
			}
		}
	}
	if z.oneIn(30) {
		y, _ := accel.NewTensor(accel.Int64, L, int64(1+D)) // the wrong dtype
		x = y
	}
	return Case{Op: "get_indice_pairs", Exact: true, Params: p, Inputs: map[string]*accel.Tensor{"indices": x}}
}
