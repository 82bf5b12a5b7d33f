package ops_test

import (
	"errors"
	"math"
	"math/big"
	"math/rand"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/cmd/accel/internal/ops"
	"github.com/accelkern/accel/reference"
)

// The fuzz targets, one per op family: the fuzzer's bytes pick an op, its
// parameters (in range and not: negative, huge, malformed) and its inputs
// (shapes, dtypes, index values in and out of range, floats with NaN, inf
// and -0). Each input runs through ops.Run on the reference and on each
// device, and must either give the reference's outputs or be rejected by
// both with an error wrapping one of accel's sentinels. A panic, a hang, a
// Vulkan validation message (an error wrapping none of them) or a wrong
// output is a finding. `go test` replays the seeds below and the corpus in
// testdata/fuzz; `make fuzz FUZZTIME=10m` runs each target for a while.

// fuzzBytes decodes the fuzzer's bytes into choices; past the end it reads
// zeros, so every input decodes.
type fuzzBytes struct {
	b []byte
	i int
}

func (z *fuzzBytes) byte() byte {
	if z.i >= len(z.b) {
		return 0
	}
	c := z.b[z.i]
	z.i++
	return c
}

// intn returns a choice in [0, n).
func (z *fuzzBytes) intn(n int) int {
	if n <= 1 {
		return 0
	}
	return (int(z.byte()) | int(z.byte())<<8) % n
}

func (z *fuzzBytes) bool() bool { return z.byte()&1 == 1 }

// oneIn is true about once in n draws.
func (z *fuzzBytes) oneIn(n int) bool { return z.intn(n) == n-1 }

// size returns a dimension: mostly 0..max, sometimes an edge or a bad one.
func (z *fuzzBytes) size(max int) int64 {
	if z.oneIn(24) {
		return []int64{-1, -7, 1 << 31, math.MaxInt64}[z.intn(4)]
	}
	return int64(z.intn(max + 1))
}

// scalar returns an integer parameter: mostly small, sometimes huge.
func (z *fuzzBytes) scalar(small int) int64 {
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

func (z *fuzzBytes) float(kind valueKind) float64 {
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
func (z *fuzzBytes) tensor(dt accel.DType, shape []int64, kind valueKind) *accel.Tensor {
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
func (z *fuzzBytes) scalarValue() int64 {
	if z.oneIn(16) {
		return []int64{math.MinInt64, math.MaxInt64, math.MinInt32, math.MaxInt32, -1}[z.intn(5)]
	}
	return int64(z.intn(33) - 16)
}

// indices returns an int64 tensor of shape with values in [0, n), and,
// when bad, sometimes negative or >= n.
func (z *fuzzBytes) indices(shape []int64, n int64, bad bool) *accel.Tensor {
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

func (z *fuzzBytes) dtype(dts ...accel.DType) accel.DType { return dts[z.intn(len(dts))] }

func (z *fuzzBytes) pick(s ...string) string { return s[z.intn(len(s))] }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// fuzzCase is one decoded input: an op, its parameters and inputs, and how
// to compare float outputs (exact bits, or equal values with NaN equal to
// NaN and -0 equal to 0 where the order of a reduction may pick either
// zero, or within rtol where a mean divides differently).
type fuzzCase struct {
	op     string
	params map[string]string
	inputs map[string]*accel.Tensor
	exact  bool
	rtol   float64
	// deviceOnly: the reference is not run (its output would be huge); the
	// devices must reject the input (too large, or an int32 output that
	// cannot hold the indices).
	deviceOnly bool
}

// sentinels are the errors every rejection must wrap.
var sentinels = []error{accel.ErrInvalidArgument, accel.ErrTooLarge, accel.ErrUnsupported, accel.ErrOutOfMemory}

func sentinel(err error) error {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return s
		}
	}
	return nil
}

// checkFuzzCase runs c on the reference and on each device and compares.
func checkFuzzCase(t *testing.T, c fuzzCase) {
	t.Helper()
	for _, x := range c.inputs {
		if x == nil {
			t.Skip("input not representable on the host")
		}
	}
	var want map[string]*accel.Tensor
	var werr error
	if !c.deviceOnly {
		want, werr = ops.Run(nil, c.op, c.params, c.inputs)
		if werr != nil {
			require.NotNil(t, sentinel(werr), "reference %s %v: error wraps no sentinel: %v", c.op, c.params, werr)
		}
	}
	forEachDevice(t, func(t *testing.T, d *accel.Device) {
		got, err := ops.Run(d, c.op, c.params, c.inputs)
		switch {
		case c.deviceOnly:
			require.Error(t, err, "%s %v: a huge output must be rejected", c.op, c.params)
			require.NotNil(t, sentinel(err), "%s %v: device error wraps no sentinel: %v", c.op, c.params, err)
		case werr != nil:
			require.Error(t, err, "%s %v: the reference rejects the input (%v), the device does not", c.op, c.params, werr)
			require.NotNil(t, sentinel(err), "%s %v: device error wraps no sentinel: %v", c.op, c.params, err)
		case err != nil:
			// A valid input the device cannot run: a dtype it lacks, or a
			// size past its limits.
			require.NotNil(t, sentinel(err), "%s %v: device error wraps no sentinel: %v", c.op, c.params, err)
			require.False(t, errors.Is(err, accel.ErrInvalidArgument),
				"%s %v: the device rejects what the reference accepts: %v", c.op, c.params, err)
		default:
			requireFuzzOutputs(t, c, want, got)
		}
	})
}

func requireFuzzOutputs(t *testing.T, c fuzzCase, want, got map[string]*accel.Tensor) {
	t.Helper()
	require.ElementsMatch(t, keys(want), keys(got), "%s: outputs", c.op)
	for name, w := range want {
		g := got[name]
		require.Equal(t, w.DType(), g.DType(), "%s %s: dtype", c.op, name)
		require.Equal(t, w.Shape(), g.Shape(), "%s %s: shape", c.op, name)
		if c.exact || (w.DType() != accel.Float32 && w.DType() != accel.Float64) {
			require.Equal(t, w.Bytes(), g.Bytes(), "%s %v %s: bits differ from the reference", c.op, c.params, name)
			continue
		}
		wf, gf := floats(w), floats(g)
		for i := range wf {
			if math.IsNaN(wf[i]) || math.IsNaN(gf[i]) {
				require.True(t, math.IsNaN(wf[i]) && math.IsNaN(gf[i]), "%s %v %s[%d]: got %v, want %v", c.op, c.params, name, i, gf[i], wf[i])
				continue
			}
			if wf[i] == gf[i] {
				continue
			}
			require.InDelta(t, wf[i], gf[i], c.rtol*math.Abs(wf[i]), "%s %v %s[%d]", c.op, c.params, name, i)
		}
	}
}

func decodeTri(z *fuzzBytes) fuzzCase {
	op := z.pick("tril_indices", "triu_indices")
	row, col, off := z.scalar(40), z.scalar(40), z.scalar(45)
	if z.bool() { // sizes are mostly non-negative
		row, col = max(row, -row), max(col, -col)
	}
	p := map[string]string{"row": itoa(row), "col": itoa(col), "offset": itoa(off)}
	if dt := z.pick("", "int32", "int64", "int32", "int64", "float32", "bogus"); dt != "" {
		p["dtype"] = dt
	}
	c := fuzzCase{op: op, params: p, exact: true}
	if row >= 0 && col >= 0 {
		switch n := reference.TriPrefix(row, col, off, op == "triu_indices"); {
		case n.Cmp(big.NewInt(1<<33)) >= 0:
			c.deviceOnly = p["dtype"] != "float32" && p["dtype"] != "bogus"
		case n.Cmp(big.NewInt(1<<16)) > 0:
			return fuzzCase{} // valid but slow: the tests cover big triangles
		}
	}
	return c
}

// FuzzTriIndices fuzzes tril_indices and triu_indices.
func FuzzTriIndices(f *testing.F) {
	for _, seed := range [][]byte{{}, {1, 5, 0, 7, 0, 2, 0, 1, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {1, 1, 7, 0, 0, 3, 0, 9, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := decodeTri(&fuzzBytes{b: data})
		if c.op == "" {
			t.Skip("a valid triangle too big to fuzz")
		}
		checkFuzzCase(t, c)
	})
}

// shape returns a shape of rank in [lo, hi] with dims up to max.
func (z *fuzzBytes) shape(lo, hi, max int) []int64 {
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

func decodeDiag(z *fuzzBytes) fuzzCase {
	dt := z.dtype(allDTypes...)
	in := z.shape(1, 4, 5)
	off, d1, d2 := z.scalar(6), int64(z.intn(11)-5), int64(z.intn(11)-5)
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
	return fuzzCase{op: "diagonal_scatter", exact: true,
		params: map[string]string{"offset": itoa(off), "dim1": itoa(d1), "dim2": itoa(d2)},
		inputs: map[string]*accel.Tensor{"input": z.tensor(dt, in, valuesAny), "src": z.tensor(z.maybeOther(dt), src, valuesAny)}}
}

// maybeOther returns dt, or now and then another dtype (a mismatch).
func (z *fuzzBytes) maybeOther(dt accel.DType) accel.DType {
	if z.oneIn(16) {
		return z.dtype(append(allDTypes, accel.Uint32, accel.Bool)...)
	}
	return dt
}

// FuzzDiagonalScatter fuzzes diagonal_scatter on N-D tensors.
func FuzzDiagonalScatter(f *testing.F) {
	for _, seed := range [][]byte{{}, {0, 0, 2, 0, 3, 0, 4, 0, 0, 0, 5, 0, 6, 0}, {3, 0, 3, 0, 2, 0, 2, 0, 2, 0, 1, 0, 9, 0, 10, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzzCase(t, decodeDiag(&fuzzBytes{b: data})) })
}

// distinctAlong rewrites idx (of shape) so that the values along dim are
// distinct for every position of the other dims (assignments with one
// source per target, whose result is defined); n is the target's size.
func distinctAlong(z *fuzzBytes, idx *accel.Tensor, dim int, n int64) {
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

func decodeScatter(z *fuzzBytes) fuzzCase {
	op := z.pick("scatter", "scatter_reduce", "put_along_axis", "take_along_axis", "scatter_reduce_backward")
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
	idx := z.indices(idxShape, n, true)
	srcShape := append([]int64(nil), idxShape...)
	for i := range srcShape {
		srcShape[i] += int64(z.intn(2))
	}
	c := fuzzCase{op: op, exact: true, params: map[string]string{}}
	reduce, kind := "assign", valuesAny
	switch op {
	case "scatter_reduce":
		reduce = z.pick("sum", "prod", "mean", "amax", "amin", "bogus")
		c.params["reduce"] = reduce
		c.params["include_self"] = z.pick("true", "false")
		c.params["deterministic"] = z.pick("false", "true")
	case "scatter_reduce_backward":
		// Bit-reproducible: any values, exact outputs.
		reduce = z.pick("sum", "prod", "mean", "amax", "amin")
		c.params["reduce"] = reduce
		c.params["include_self"] = z.pick("true", "false")
		c.params["deterministic"] = "true"
	case "put_along_axis":
		reduce = z.pick("assign", "add", "mul", "mean", "amax", "amin")
		c.params["reduce"] = reduce
		c.params["include_self"] = z.pick("true", "false")
		srcShape = idxShape
	}
	switch reduce {
	case "sum", "add", "mean":
		kind = valuesSum
	case "prod", "mul":
		kind = valuesProd
	}
	if reduce != "assign" && c.params["deterministic"] != "true" {
		// The order of a parallel reduction may pick either zero, and a
		// mean divides in float.
		c.exact, c.rtol = false, 1e-6
	}
	if reduce == "assign" && op != "take_along_axis" && idx != nil && d >= 0 && len(idxShape) == rank {
		distinctAlong(z, idx, d, n)
	}
	switch op {
	case "put_along_axis", "take_along_axis":
		c.params["axis"] = itoa(dim)
		if z.oneIn(10) {
			c.params["axis"] = "none"
		}
		c.inputs = map[string]*accel.Tensor{"arr": z.tensor(dt, in, kind), "indices": idx}
		if op == "put_along_axis" {
			c.inputs["values"] = z.tensor(z.maybeOther(dt), srcShape, kind)
		}
	default:
		c.params["dim"] = itoa(dim)
		c.inputs = map[string]*accel.Tensor{"input": z.tensor(dt, in, kind), "index": idx, "src": z.tensor(z.maybeOther(dt), srcShape, kind)}
	}
	if op == "scatter_reduce_backward" {
		delete(c.params, "deterministic")
		c.exact = true
		gshape := in
		if z.oneIn(12) {
			gshape = z.shape(1, 3, 5)
		}
		c.inputs["input"] = z.tensor(dt, in, valuesAny)
		c.inputs["src"] = z.tensor(z.maybeOther(dt), srcShape, valuesAny)
		c.inputs["grad_output"] = z.tensor(z.maybeOther(dt), gshape, valuesAny)
	}
	return c
}

// FuzzScatter fuzzes scatter, scatter_reduce, put_along_axis,
// take_along_axis and scatter_reduce_backward.
func FuzzScatter(f *testing.F) {
	for _, seed := range [][]byte{{}, {1, 0, 0, 0, 1, 0, 4, 0, 1, 0, 3, 0, 2, 0}, {2, 0, 1, 0, 2, 0, 3, 0, 4, 0, 2, 0, 3, 0, 3, 0, 1, 0},
		{3, 0, 3, 0, 1, 0, 5, 0, 0, 0, 4, 0}, {0, 0, 2, 0, 2, 0, 3, 0, 3, 0, 1, 0, 2, 0, 2, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzzCase(t, decodeScatter(&fuzzBytes{b: data})) })
}

func decodePrim(z *fuzzBytes) fuzzCase {
	op := z.pick("cumsum", "compact", "sort", "unique", "segment_reduce")
	shape := z.shape(0, 2, 40)
	c := fuzzCase{op: op, exact: true, params: map[string]string{}}
	switch op {
	case "cumsum":
		dt := z.dtype(append(allDTypes, accel.Uint32, accel.Uint64)...)
		c.params["exclusive"] = z.pick("false", "true")
		c.inputs = map[string]*accel.Tensor{"x": z.tensor(dt, shape, valuesSum)}
	case "compact":
		dt := z.dtype(allDTypes...)
		mshape := shape
		if z.oneIn(10) {
			mshape = z.shape(0, 2, 40)
		}
		c.inputs = map[string]*accel.Tensor{"x": z.tensor(dt, shape, valuesAny), "mask": z.tensor(z.dtype(accel.Bool, accel.Bool, accel.Bool, accel.Int32), mshape, valuesAny)}
	case "sort":
		dt := z.dtype(append(allDTypes, accel.Uint32, accel.Uint64)...)
		c.params["descending"] = z.pick("false", "true")
		c.inputs = map[string]*accel.Tensor{"keys": z.tensor(dt, shape, valuesAny)}
	case "unique":
		dt := z.dtype(append(allDTypes, accel.Uint32, accel.Uint64)...)
		c.inputs = map[string]*accel.Tensor{"x": z.tensor(dt, shape, valuesAny)}
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
		c.params["reduce"], c.params["num_segments"] = red, itoa(segs)
		switch {
		case segs >= 1<<36:
			c.deviceOnly = true // an output of at least 256 GB
		case segs > 1<<16:
			return fuzzCase{} // valid but big: the tests cover big outputs
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
		c.inputs = map[string]*accel.Tensor{"values": z.tensor(dt, []int64{n}, kind), "segment_ids": ids}
		if z.oneIn(12) {
			c.inputs["values"] = z.tensor(dt, z.shape(0, 2, 6), kind)
		}
	}
	return c
}

// FuzzPrimitives fuzzes cumsum, compact, sort, unique and segment_reduce.
func FuzzPrimitives(f *testing.F) {
	for _, seed := range [][]byte{{}, {0, 0, 1, 0, 30, 0, 1, 0, 1, 0}, {2, 0, 1, 0, 33, 0, 0, 0, 1, 0, 40, 0, 7, 7, 7, 7},
		{3, 0, 1, 0, 20, 0, 3, 0}, {4, 0, 1, 0, 9, 0, 0, 0, 0, 0, 5, 0, 0, 1}, {1, 0, 2, 0, 3, 0, 4, 0, 2, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := decodePrim(&fuzzBytes{b: data})
		if c.op == "" {
			t.Skip("a valid output too big to fuzz")
		}
		checkFuzzCase(t, c)
	})
}

// TestFuzzDecoders: the decoders reach every op of their family from
// random bytes (a decoder that always skips would fuzz nothing).
func TestFuzzDecoders(t *testing.T) {
	for name, dec := range map[string]func(*fuzzBytes) fuzzCase{"tri": decodeTri, "diag": decodeDiag, "scatter": decodeScatter, "prim": decodePrim} {
		rng := rand.New(rand.NewSource(3))
		seen := map[string]int{}
		for i := 0; i < 400; i++ {
			b := make([]byte, 256)
			rng.Read(b)
			seen[dec(&fuzzBytes{b: b}).op]++
		}
		want := map[string][]string{"tri": {"tril_indices", "triu_indices"}, "diag": {"diagonal_scatter"},
			"scatter": {"scatter", "scatter_reduce", "put_along_axis", "take_along_axis", "scatter_reduce_backward"},
			"prim":    {"cumsum", "compact", "sort", "unique", "segment_reduce"}}[name]
		delete(seen, "") // skipped inputs
		for _, op := range want {
			assert.Greater(t, seen[op], 20, "%s: %s decoded %d times in 400", name, op, seen[op])
		}
	}
}
