package ops_test

import (
	"errors"
	"math"
	"math/rand"
	"os"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/cmd/accel/internal/ops"
	"github.com/accelkern/accel/host"
)

// The devices, opened once as the library's own tests open them (Vulkan
// validation on; ACCEL_TEST_opencl / ACCEL_TEST_vulkan pick another
// device than the backend's default).
var (
	devOnce sync.Once
	devs    = map[string]*accel.Device{}
	devErrs = map[string]error{}
)

func openTestDevices() {
	for _, b := range []string{host.OpenCL, host.Vulkan} {
		sel := b
		if env := os.Getenv("ACCEL_TEST_" + b); env != "" {
			sel = env
		}
		// Guard bands past every tensor: a write past an output's end fails
		// its download (accel.ErrGuardBand).
		d, err := accel.OpenWith(sel, accel.Options{Validation: true, GuardBytes: 64})
		if err != nil {
			devErrs[b] = err
			continue
		}
		devs[b] = d
	}
}

// forEachDevice runs f as a subtest on each backend's device: a backend
// without a device fails under CI=true and is skipped with the reason
// otherwise.
func forEachDevice(t *testing.T, f func(t *testing.T, d *accel.Device)) {
	t.Helper()
	devOnce.Do(openTestDevices)
	for _, b := range []string{host.OpenCL, host.Vulkan} {
		t.Run(b, func(t *testing.T) {
			d := devs[b]
			if d == nil {
				if os.Getenv("CI") == "true" {
					require.NoError(t, devErrs[b], "no %s device in CI", b)
					require.FailNow(t, "no device in CI", b)
				}
				t.Skipf("no %s device: %v", b, devErrs[b])
			}
			f(t, d)
		})
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range devs {
		if err := d.Close(); err != nil && code == 0 {
			os.Stderr.WriteString("closing device: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// spec returns the registry's entry for an op.
func spec(t *testing.T, name string) ops.OpSpec {
	t.Helper()
	for _, op := range ops.Ops() {
		if op.Name == name {
			return op
		}
	}
	require.FailNow(t, "op not registered", name)
	return ops.OpSpec{}
}

func TestOpsRegistry(t *testing.T) {
	all := ops.Ops()
	var names []string
	for _, op := range all {
		names = append(names, op.Name)
		assert.NotEmpty(t, op.Doc, "%s: doc", op.Name)
		assert.NotEmpty(t, op.Outputs, "%s: outputs", op.Name)
	}
	assert.True(t, sort.StringsAreSorted(names), "Ops() not sorted by name: %v", names)
	for _, want := range []string{"tril_indices", "triu_indices", "diagonal_scatter", "scatter", "scatter_reduce", "index_add", "index_reduce",
		"scatter_reduce_backward", "put_along_axis", "take_along_axis", "cumsum", "compact", "sort", "unique", "segment_reduce"} {
		assert.Contains(t, names, want)
	}
}

// opCase is one ops.Run invocation compared between a device and the
// reference (dev nil).
type opCase struct {
	name   string
	op     string
	params map[string]string
	inputs map[string]*accel.Tensor
	// exact: the device's outputs have the reference's bits; otherwise
	// float outputs agree within rtol/atol (other dtypes are still exact).
	exact      bool
	rtol, atol float64
}

// must returns a function that takes a tensor constructor's results and
// fails the test on its error.
func must(t *testing.T) func(*accel.Tensor, error) *accel.Tensor {
	return func(x *accel.Tensor, err error) *accel.Tensor {
		t.Helper()
		require.NoError(t, err)
		return x
	}
}

// opCases builds one case list per family, from fixed seeds.
func opCases(t *testing.T) []opCase {
	rng := rand.New(rand.NewSource(12))
	var cs []opCase

	// tril_indices: index math, exact.
	for _, p := range []map[string]string{
		{"row": "7", "col": "5", "offset": "-1", "dtype": "int32"},
		{"row": "100", "col": "57", "offset": "-20", "dtype": "int64"},
		{"row": "300", "col": "301", "offset": "3"}, // default dtype int64
	} {
		cs = append(cs, opCase{name: "tril_" + p["row"] + "x" + p["col"], op: "tril_indices", params: p, exact: true})
	}

	// diagonal_scatter: a copy with a diagonal overwritten, exact.
	for _, c := range []struct {
		name        string
		dt          accel.DType
		shape, src  []int64
		off, d1, d2 string
	}{
		{"3x5_off1", accel.Float32, []int64{3, 5}, []int64{3}, "1", "0", "1"},
		{"2x3x4_offm1_d0_1", accel.Float64, []int64{2, 3, 4}, []int64{4, 1}, "-1", "0", "1"},
		{"16x32x32_last2", accel.Int64, []int64{16, 32, 32}, []int64{16, 32}, "0", "-2", "-1"},
		{"5x3_d1_0", accel.Int32, []int64{5, 3}, []int64{3}, "1", "1", "0"},
	} {
		in := randTensor(t, rng, c.dt, c.shape...)
		src := randTensor(t, rng, c.dt, c.src...)
		cs = append(cs, opCase{name: c.name, op: "diagonal_scatter",
			params: map[string]string{"offset": c.off, "dim1": c.d1, "dim2": c.d2},
			inputs: map[string]*accel.Tensor{"input": in, "src": src}, exact: true})
	}

	// scatter_reduce with reduce=sum and reduce=mean: crowded targets (40x7
	// positions onto 10 rows). Integer sums and means are exact; float ones
	// follow the device's order of atomics unless deterministic, which has
	// the reference's bits on every device.
	for _, red := range []string{"sum", "mean"} {
		for _, dt := range []accel.DType{accel.Float32, accel.Int32, accel.Int64} {
			for _, self := range []string{"true", "false"} {
				for _, det := range []string{"false", "true"} {
					if dt != accel.Float32 && det == "true" {
						continue
					}
					in := randTensor(t, rng, dt, 10, 7)
					src := randTensor(t, rng, dt, 60, 7)
					idx := indexTensor(t, rng, 10, 40, 7)
					cs = append(cs, opCase{name: red + "_" + dt.String() + "_self=" + self + "_det=" + det, op: "scatter_reduce",
						params: map[string]string{"dim": "0", "reduce": red, "include_self": self, "deterministic": det},
						inputs: map[string]*accel.Tensor{"input": in, "index": idx, "src": src},
						exact:  dt != accel.Float32 || det == "true", rtol: 1e-5, atol: 1e-5})
				}
			}
		}
	}
	// along dim 1 with a negative dim, the default include_self
	{
		in := randTensor(t, rng, accel.Int32, 6, 9)
		src := randTensor(t, rng, accel.Int32, 6, 20)
		idx := indexTensor(t, rng, 9, 5, 20)
		cs = append(cs, opCase{name: "add_int32_dim-1", op: "scatter_reduce",
			params: map[string]string{"dim": "-1", "reduce": "sum"},
			inputs: map[string]*accel.Tensor{"input": in, "index": idx, "src": src}, exact: true})
	}

	// index_add and index_reduce along dim 1 (9 source columns onto 4):
	// integers exact, floats exact where deterministic.
	for _, c := range []struct {
		op, reduce, det string
		dt              accel.DType
	}{
		{"index_add", "", "false", accel.Int64}, {"index_add", "", "true", accel.Float32},
		{"index_reduce", "amax", "false", accel.Float32}, {"index_reduce", "mean", "true", accel.Float64},
		{"index_reduce", "prod", "false", accel.Int32},
	} {
		in := randTensor(t, rng, c.dt, 5, 4)
		src := randTensor(t, rng, c.dt, 5, 9)
		idx := must(t)(accel.NewTensor(accel.Int64, 9))
		for i := range idx.Int64s() {
			idx.Int64s()[i] = rng.Int63n(4)
		}
		params := map[string]string{"dim": "1", "deterministic": c.det}
		if c.reduce != "" {
			params["reduce"], params["include_self"] = c.reduce, "false"
		}
		cs = append(cs, opCase{name: c.op + "_" + c.reduce + "_" + c.dt.String() + "_det=" + c.det, op: c.op, params: params,
			inputs: map[string]*accel.Tensor{"input": in, "index": idx, "source": src},
			exact:  c.det == "true" || c.dt != accel.Float32 && c.dt != accel.Float64 || c.reduce == "amax", rtol: 1e-5, atol: 1e-5})
	}

	// put_along_axis (and take_along_axis of its result): integer adds and
	// products, assign with distinct indices per row, float amax: exact.
	for _, c := range []struct {
		name, reduce, self, axis string
		dt                       accel.DType
		distinct                 bool
	}{
		{"add_int64", "sum", "true", "1", accel.Int64, false},
		{"add_int64_noself", "sum", "false", "1", accel.Int64, false},
		{"mul_int32", "prod", "true", "1", accel.Int32, false},
		{"assign_float32", "assign", "true", "1", accel.Float32, true},
		{"amax_float32", "amax", "true", "1", accel.Float32, false},
		{"add_int64_axis_none", "sum", "true", "none", accel.Int64, false},
	} {
		arr := randTensor(t, rng, c.dt, 4, 6)
		vals := randTensor(t, rng, c.dt, 4, 3)
		idx := must(t)(accel.NewTensor(accel.Int64, 4, 3))
		for r := 0; r < 4; r++ {
			perm := rng.Perm(6)
			for k := 0; k < 3; k++ {
				v := int64(perm[k])
				if !c.distinct {
					v = rng.Int63n(6)
				}
				if rng.Intn(4) == 0 {
					v -= 6 // negative indices count once from the end
				}
				idx.Int64s()[r*3+k] = v
			}
		}
		if c.axis == "none" {
			// indices (and values) are 1-d when the axis is none
			idx = must(t)(accel.FromInt64s([]int64{12}, append([]int64(nil), idx.Int64s()...)))
			vals = must(t)(accel.FromBytes(c.dt, []int64{12}, append([]byte(nil), vals.Bytes()...)))
		}
		cs = append(cs, opCase{name: c.name, op: "put_along_axis",
			params: map[string]string{"axis": c.axis, "reduce": c.reduce, "include_self": c.self},
			inputs: map[string]*accel.Tensor{"arr": arr, "indices": idx, "values": vals}, exact: true})
	}

	// cumsum: integer prefix sums wrap, exact.
	for _, dt := range []accel.DType{accel.Int32, accel.Int64} {
		for _, excl := range []string{"false", "true"} {
			x := randTensor(t, rng, dt, 10007)
			if dt == accel.Int32 {
				for i := range x.Int32s() {
					x.Int32s()[i] = int32(rng.Uint32()) // wide enough to wrap
				}
			}
			cs = append(cs, opCase{name: dt.String() + "_exclusive=" + excl, op: "cumsum",
				params: map[string]string{"exclusive": excl}, inputs: map[string]*accel.Tensor{"x": x}, exact: true})
		}
	}

	// unique: values, inverse and counts, exact.
	for _, dt := range []accel.DType{accel.Int64, accel.Int32} {
		distinct := make([]int64, 300)
		for i := range distinct {
			distinct[i] = int64(rng.Uint64())
		}
		x := must(t)(accel.NewTensor(dt, 10000))
		for i := int64(0); i < x.Len(); i++ {
			v := distinct[rng.Intn(len(distinct))]
			if dt == accel.Int32 {
				x.Int32s()[i] = int32(v)
			} else {
				x.Int64s()[i] = v
			}
		}
		cs = append(cs, opCase{name: dt.String(), op: "unique", inputs: map[string]*accel.Tensor{"x": x}, exact: true})
	}

	// segment_reduce with reduce=max: sorted ids with empty segments
	// (between and after the used ones); a max is exact.
	for _, dt := range []accel.DType{accel.Float32, accel.Int64} {
		vals := randTensor(t, rng, dt, 1000)
		ids := must(t)(accel.NewTensor(accel.Int64, 1000))
		for i := range ids.Int64s() {
			ids.Int64s()[i] = 2 * rng.Int63n(25)
		}
		sort.Slice(ids.Int64s(), func(i, j int) bool { return ids.Int64s()[i] < ids.Int64s()[j] })
		cs = append(cs, opCase{name: "max_" + dt.String(), op: "segment_reduce",
			params: map[string]string{"reduce": "max", "num_segments": "60"},
			inputs: map[string]*accel.Tensor{"values": vals, "segment_ids": ids}, exact: true})
	}
	return cs
}

// randTensor fills a tensor: floats uniform in [-2, 2), integers small
// (so sums and products stay readable), bools 0/1.
func randTensor(t *testing.T, rng *rand.Rand, dt accel.DType, shape ...int64) *accel.Tensor {
	t.Helper()
	x := must(t)(accel.NewTensor(dt, shape...))
	for i := int64(0); i < x.Len(); i++ {
		switch dt {
		case accel.Float32:
			x.Float32s()[i] = 4*rng.Float32() - 2
		case accel.Float64:
			x.Float64s()[i] = 4*rng.Float64() - 2
		case accel.Int32:
			x.Int32s()[i] = int32(rng.Intn(19) - 9)
		case accel.Int64:
			x.Int64s()[i] = rng.Int63n(19) - 9
		default:
			require.FailNow(t, "randTensor: unsupported dtype", dt.String())
		}
	}
	return x
}

// indexTensor is an int64 [rows, cols] tensor of values in [0, n).
func indexTensor(t *testing.T, rng *rand.Rand, n int64, rows, cols int64) *accel.Tensor {
	t.Helper()
	x := must(t)(accel.NewTensor(accel.Int64, rows, cols))
	for i := range x.Int64s() {
		x.Int64s()[i] = rng.Int63n(n)
	}
	return x
}

// requireSameOutputs compares a device's outputs with the reference's:
// the names the op declares, dtypes, shapes, then bits (or, for float
// outputs of an inexact case, values within rtol/atol).
func requireSameOutputs(t *testing.T, c opCase, want, got map[string]*accel.Tensor) {
	t.Helper()
	outs := spec(t, c.op).Outputs
	require.ElementsMatch(t, outs, keys(want), "reference outputs")
	require.ElementsMatch(t, outs, keys(got), "device outputs")
	for _, name := range outs {
		w, g := want[name], got[name]
		require.NotNil(t, g, name)
		require.Equal(t, w.DType(), g.DType(), "%s: dtype", name)
		require.Equal(t, w.Shape(), g.Shape(), "%s: shape", name)
		if c.exact || (w.DType() != accel.Float32 && w.DType() != accel.Float64) {
			require.Equal(t, w.Bytes(), g.Bytes(), "%s: bits differ from the reference", name)
			continue
		}
		wf, gf := floats(w), floats(g)
		for i := range wf {
			if math.IsNaN(wf[i]) {
				require.True(t, math.IsNaN(gf[i]), "%s[%d]: got %v, want NaN", name, i, gf[i])
				continue
			}
			require.InDelta(t, wf[i], gf[i], c.atol+c.rtol*math.Abs(wf[i]), "%s[%d]", name, i)
		}
	}
}

func keys(m map[string]*accel.Tensor) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}

func floats(x *accel.Tensor) []float64 {
	if x.DType() == accel.Float64 {
		return x.Float64s()
	}
	var f []float64
	for _, v := range x.Float32s() {
		f = append(f, float64(v))
	}
	return f
}

// TestRunMatchesReference runs one op of each family through ops.Run on
// each device and on the reference.
func TestRunMatchesReference(t *testing.T) {
	cases := opCases(t)
	refs := make([]map[string]*accel.Tensor, len(cases))
	for i, c := range cases {
		out, err := ops.Run(nil, c.op, c.params, c.inputs)
		require.NoError(t, err, "reference %s %s", c.op, c.name)
		refs[i] = out
	}
	// A sanity anchor for the reference itself: tril_indices(7, 5, -1).
	require.Equal(t, []int32{1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6,
		0, 0, 1, 0, 1, 2, 0, 1, 2, 3, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4}, refs[0]["out"].Int32s())
	forEachDevice(t, func(t *testing.T, d *accel.Device) {
		for i, c := range cases {
			t.Run(c.op+"/"+c.name, func(t *testing.T) {
				got, err := ops.Run(d, c.op, c.params, c.inputs)
				require.NoError(t, err)
				requireSameOutputs(t, c, refs[i], got)
			})
		}
	})
}

// TestRunErrors checks that the registry's own rejections (unknown ops,
// parameters and inputs, missing ones, malformed values) and the ops'
// rejections of their inputs wrap accel.ErrInvalidArgument, on the
// reference and on each device.
func TestRunErrors(t *testing.T) {
	f32 := func(shape ...int64) *accel.Tensor { return must(t)(accel.NewTensor(accel.Float32, shape...)) }
	i64 := func(shape []int64, v ...int64) *accel.Tensor { return must(t)(accel.FromInt64s(shape, v)) }
	scatterIn := func(idx ...int64) map[string]*accel.Tensor {
		return map[string]*accel.Tensor{"input": f32(4), "index": i64([]int64{int64(len(idx))}, idx...), "src": f32(int64(len(idx)))}
	}
	tri := map[string]string{"row": "3", "col": "3"}
	with := func(base map[string]string, k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range base {
			m[a] = b
		}
		m[k] = v
		return m
	}
	x := map[string]*accel.Tensor{"x": i64([]int64{3}, 1, 2, 3)}
	type errCase struct {
		name   string
		op     string
		params map[string]string
		inputs map[string]*accel.Tensor
		// registry: a rejection by ops.Run's own checks, an *accel.ArgError
		// naming the op (or "run") and the argument; otherwise the op's
		// rejection of its inputs.
		argOp, arg string
	}
	cases := []errCase{
		{"unknown op", "no_such_op", nil, nil, "run", "op"},
		{"unknown param", "tril_indices", with(tri, "rows", "3"), nil, "tril_indices", "rows"},
		{"missing param", "tril_indices", map[string]string{"row": "3"}, nil, "tril_indices", "col"},
		{"unknown input", "tril_indices", tri, x, "tril_indices", "input x"},
		{"extra input", "cumsum", nil, map[string]*accel.Tensor{"x": x["x"], "y": x["x"]}, "cumsum", "input y"},
		{"missing input", "cumsum", nil, nil, "cumsum", "input x"},
		{"nil input", "cumsum", nil, map[string]*accel.Tensor{"x": nil}, "cumsum", "input x"},
		{"malformed int", "tril_indices", with(tri, "row", "3.5"), nil, "tril_indices", "row"},
		{"empty int", "tril_indices", with(tri, "col", ""), nil, "tril_indices", "col"},
		{"int overflow", "tril_indices", with(tri, "offset", "9223372036854775808"), nil, "tril_indices", "offset"},
		{"malformed dtype", "tril_indices", with(tri, "dtype", "int7"), nil, "tril_indices", "dtype"},
		{"malformed bool", "cumsum", map[string]string{"exclusive": "maybe"}, x, "cumsum", "exclusive"},
		{"malformed reduce", "scatter_reduce", map[string]string{"dim": "0", "reduce": "median"}, scatterIn(0), "scatter_reduce", "reduce"},
		{"assign reduce", "scatter_reduce", map[string]string{"dim": "0", "reduce": "assign"}, scatterIn(0), "scatter_reduce", "reduce"},
		{"malformed include_self", "scatter_reduce", map[string]string{"dim": "0", "reduce": "sum", "include_self": "2"}, scatterIn(0), "scatter_reduce", "include_self"},
		{"malformed axis", "put_along_axis", map[string]string{"axis": "first"},
			map[string]*accel.Tensor{"arr": f32(3), "indices": i64([]int64{1}, 0), "values": f32(1)}, "put_along_axis", "axis"},
		{"malformed num_segments", "segment_reduce", map[string]string{"reduce": "max", "num_segments": "many"},
			map[string]*accel.Tensor{"values": f32(2), "segment_ids": i64([]int64{2}, 0, 1)}, "segment_reduce", "num_segments"},
		// the ops' own rejections of their inputs
		{"negative row", "tril_indices", with(tri, "row", "-1"), nil, "", ""},
		{"index out of range", "scatter_reduce", map[string]string{"dim": "0", "reduce": "sum"}, scatterIn(0, 4, 1), "", ""},
		{"unsorted segment ids", "segment_reduce", map[string]string{"reduce": "max", "num_segments": "3"},
			map[string]*accel.Tensor{"values": f32(3), "segment_ids": i64([]int64{3}, 0, 2, 1)}, "", ""},
	}
	check := func(t *testing.T, d *accel.Device) {
		for _, c := range cases {
			out, err := ops.Run(d, c.op, c.params, c.inputs)
			require.ErrorIs(t, err, accel.ErrInvalidArgument, c.name)
			assert.Nil(t, out, c.name)
			if c.argOp != "" {
				var ae *accel.ArgError
				require.True(t, errors.As(err, &ae), "%s: %v is not an *accel.ArgError", c.name, err)
				assert.Equal(t, c.argOp, ae.Op, c.name)
				assert.Equal(t, c.arg, ae.Arg, c.name)
			}
		}
	}
	t.Run("reference", func(t *testing.T) { check(t, nil) })
	forEachDevice(t, check)
}
