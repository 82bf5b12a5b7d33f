package accel

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
)

// TestIndexDTypes: every index-taking op gives the same result for int32
// and int64 indices (the docs' promise), on every device and in the
// reference.
func TestIndexDTypes(t *testing.T) {
	input := mustTensor(FromFloat32s([]int64{4, 3}, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}))
	src := mustTensor(FromFloat32s([]int64{2, 3}, []float32{0.5, -1, 2, 8, 0.25, -3}))
	i64 := mustTensor(FromInt64s([]int64{2, 3}, []int64{3, 0, 3, 1, 0, 3}))
	i32 := mustTensor(FromInt32s([]int64{2, 3}, []int32{3, 0, 3, 1, 0, 3}))
	vals := mustTensor(FromFloat32s([]int64{5}, []float32{1, 2, 3, 4, 5}))
	ids64 := mustTensor(FromInt64s([]int64{5}, []int64{0, 0, 2, 2, 3}))
	ids32 := mustTensor(FromInt32s([]int64{5}, []int32{0, 0, 2, 2, 3}))
	sites32 := mustTensor(FromInt32s([]int64{3, 2}, []int32{0, 1, 0, 4, 1, 2}))
	sites64 := mustTensor(FromInt64s([]int64{3, 2}, []int64{0, 1, 0, 4, 1, 2}))
	conv := SparseConvParams{BatchSize: 2, SpatialShape: []int64{5}, KSize: []int64{3}, Padding: []int64{1}}

	for _, red := range []Reduction{Sum, Amax, Mean} {
		want, err := RefScatterReduce(input, 0, i64, src, red, true)
		require.NoError(t, err)
		got, err := RefScatterReduce(input, 0, i32, src, red, true)
		require.NoError(t, err)
		require.NoError(t, Compare(got, want, Bits), "ref %v", red)
	}
	wantSeg, err := RefSegmentReduce(vals, ids64, Sum, 4)
	require.NoError(t, err)
	gotSeg, err := RefSegmentReduce(vals, ids32, Sum, 4)
	require.NoError(t, err)
	require.NoError(t, Compare(gotSeg, wantSeg, Bits))
	wantIP, err := RefIndicePairs(sites32, conv)
	require.NoError(t, err)
	gotIP, err := RefIndicePairs(sites64, conv)
	require.NoError(t, err)
	for i, p := range [][2]*Tensor{{gotIP.Pairs, wantIP.Pairs}, {gotIP.OutIndices, wantIP.OutIndices}, {gotIP.Num, wantIP.Num}} {
		require.NoError(t, Compare(p[0], p[1], Bits), "ref indice pairs %d", i)
	}

	forEachDevice(t, func(t *testing.T, d *Device) {
		di, ds := mustUpload(t, d, input), mustUpload(t, d, src)
		defer di.Release()
		defer ds.Release()
		for _, idx := range []*Tensor{i64, i32} {
			dx := mustUpload(t, d, idx)
			for _, red := range []Reduction{Sum, Amax, Mean} {
				want, err := RefScatterReduce(input, 0, i64, src, red, true)
				require.NoError(t, err)
				got, err := d.ScatterReduceDeterministic(di, 0, dx, ds, red, true)
				require.NoError(t, err, "%v %v", idx.DType(), red)
				require.NoError(t, Compare(mustHost(t, got), want, Bits), "%v %v", idx.DType(), red)
				got, err = d.ScatterReduce(di, 0, dx, ds, red, true)
				require.NoError(t, err, "%v %v", idx.DType(), red)
				require.NoError(t, Compare(mustHost(t, got), want, Tolerance{Rel: 1e-6}), "%v %v", idx.DType(), red)
			}
			want, err := RefScatter(input, 0, i64, src)
			require.NoError(t, err)
			got, err := d.ScatterDeterministic(di, 0, dx, ds)
			require.NoError(t, err)
			require.NoError(t, Compare(mustHost(t, got), want, Bits), "scatter %v", idx.DType())
			go1 := mustUpload(t, d, mustTensor(FromFloat32s([]int64{4, 3}, make([]float32, 12))))
			o, gi, gs, err := d.ScatterReduceBackward(di, 0, dx, ds, Sum, true, go1)
			require.NoError(t, err, "backward %v", idx.DType())
			o.Release()
			gi.Release()
			gs.Release()
			go1.Release()
			dx.Release()
		}
		dv := mustUpload(t, d, vals)
		defer dv.Release()
		for _, ids := range []*Tensor{ids64, ids32} {
			di := mustUpload(t, d, ids)
			got, err := d.SegmentReduce(dv, di, Sum, 4)
			require.NoError(t, err, "segment_reduce %v", ids.DType())
			require.NoError(t, Compare(mustHost(t, got), wantSeg, Bits), "segment_reduce %v", ids.DType())
			di.Release()
		}
		for _, sites := range []*Tensor{sites32, sites64} {
			ds := mustUpload(t, d, sites)
			res, err := d.IndicePairs(ds, conv)
			require.NoError(t, err, "indice pairs %v", sites.DType())
			h, err := res.ToHost()
			require.NoError(t, err)
			require.Equal(t, wantIP.OutSpatialShape, h.OutSpatialShape)
			for i, p := range [][2]*Tensor{{h.Pairs, wantIP.Pairs}, {h.OutIndices, wantIP.OutIndices}, {h.Num, wantIP.Num}} {
				require.NoError(t, Compare(p[0], p[1], Bits), "indice pairs %v, tensor %d", sites.DType(), i)
			}
			res.Release()
			_, err = res.ToHost()
			require.ErrorIs(t, err, ErrClosed, "ToHost of a released result")
			ds.Release()
		}
	})
}

// TestScatterReduceRejectsAssign: Assign is Scatter's, not a reduction
// (ScatterReduce's doc lists five).
func TestScatterReduceRejectsAssign(t *testing.T) {
	input := mustTensor(FromFloat32s([]int64{2}, []float32{1, 2}))
	idx := mustTensor(FromInt64s([]int64{1}, []int64{0}))
	src := mustTensor(FromFloat32s([]int64{1}, []float32{5}))
	_, err := RefScatterReduce(input, 0, idx, src, Assign, true)
	requireArg(t, err, "scatter_reduce", "reduce", ErrInvalidArgument)
	forEachDevice(t, func(t *testing.T, d *Device) {
		di, dx, ds := mustUpload(t, d, input), mustUpload(t, d, idx), mustUpload(t, d, src)
		defer di.Release()
		defer dx.Release()
		defer ds.Release()
		_, err := d.ScatterReduce(di, 0, dx, ds, Assign, true)
		requireArg(t, err, "scatter_reduce", "reduce", ErrInvalidArgument)
		_, err = d.ScatterReduceDeterministic(di, 0, dx, ds, Assign, true)
		requireArg(t, err, "scatter_reduce", "reduce", ErrInvalidArgument)
	})
}

// TestClosedDevice: an op on a closed device is an *ArgError naming the op
// and the device (ErrClosed), as ArgError's doc says.
func TestClosedDevice(t *testing.T) {
	for _, b := range []string{host.OpenCL, host.Vulkan} {
		t.Run(b, func(t *testing.T) {
			d := ownTestDevice(t, b)
			x := mustUpload(t, d, mustTensor(FromInt64s([]int64{3}, []int64{1, 2, 3})))
			require.NoError(t, d.Close())
			_, err := d.TrilIndices(3, 3, 0, Int64)
			requireArg(t, err, "tril_indices", "device", ErrClosed)
			_, err = d.Cumsum(x, false)
			requireArg(t, err, "cumsum", "device", ErrClosed)
		})
	}
}

// requireArg requires err to be an *ArgError of op and arg wrapping
// sentinel.
func requireArg(t *testing.T, err error, op, arg string, sentinel error) {
	t.Helper()
	var ae *ArgError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, op, ae.Op, "%v", err)
	require.Equal(t, arg, ae.Arg, "%v", err)
	require.ErrorIs(t, err, sentinel)
}

// TestCompare checks Compare's rules as its doc states them.
func TestCompare(t *testing.T) {
	f32 := func(v ...float32) *Tensor { return mustTensor(FromFloat32s([]int64{int64(len(v))}, v)) }
	nan := float32(math.NaN())
	otherNaN := math.Float32frombits(0x7fc00001)
	negZero := float32(math.Copysign(0, -1))
	inf := float32(math.Inf(1))
	require.NoError(t, Compare(f32(1, nan, inf), f32(1, otherNaN, inf), Bits), "any NaN matches any NaN")
	require.ErrorIs(t, Compare(f32(negZero), f32(0), Bits), ErrMismatch, "-0 and +0 differ in bits")
	require.NoError(t, Compare(f32(negZero), f32(0), Tolerance{Abs: 1e-9}))
	require.ErrorIs(t, Compare(f32(1, nan), f32(1, 2), Tolerance{Rel: 1}), ErrMismatch, "NaN matches only NaN")
	require.ErrorIs(t, Compare(f32(inf), f32(1e30), Tolerance{Rel: 1}), ErrMismatch, "infinities match only themselves")
	require.NoError(t, Compare(f32(1.00001), f32(1), Tolerance{Rel: 1e-4}))
	require.ErrorIs(t, Compare(f32(1.001), f32(1), Tolerance{Rel: 1e-4}), ErrMismatch)
	require.NoError(t, Compare(f32(0.001), f32(0), Tolerance{Abs: 0.01}))
	err := Compare(mustTensor(FromInt32s([]int64{2, 2}, []int32{1, 2, 3, 5})), mustTensor(FromInt32s([]int64{2, 2}, []int32{1, 2, 3, 4})), Tolerance{Abs: 10})
	require.ErrorIs(t, err, ErrMismatch, "integers match exactly whatever the tolerance")
	require.Contains(t, err.Error(), "element 3 [1 1] = 5, want 4")
	require.ErrorIs(t, Compare(f32(1, 2), mustTensor(FromFloat32s([]int64{2, 1}, []float32{1, 2})), Bits), ErrMismatch, "shapes")
	require.ErrorIs(t, Compare(f32(1), mustTensor(FromFloat64s([]int64{1}, []float64{1})), Bits), ErrMismatch, "dtypes")
	require.True(t, errors.Is(Compare(nil, f32(1), Bits), ErrInvalidArgument))
}

// TestUploadCSRIndexDTypes: a CSR tensor's crows and cols share one index
// dtype, int32 or int64; mixed ones are refused, naming cols.
func TestUploadCSRIndexDTypes(t *testing.T) {
	vals := mustTensor(FromFloat32s([]int64{2}, []float32{1, 2}))
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, c := range []struct {
			crows, cols *Tensor
			ok          bool
		}{
			{mustTensor(FromInt32s([]int64{3}, []int32{0, 1, 2})), mustTensor(FromInt32s([]int64{2}, []int32{0, 1})), true},
			{mustTensor(FromInt64s([]int64{3}, []int64{0, 1, 2})), mustTensor(FromInt64s([]int64{2}, []int64{0, 1})), true},
			{mustTensor(FromInt32s([]int64{3}, []int32{0, 1, 2})), mustTensor(FromInt64s([]int64{2}, []int64{0, 1})), false},
		} {
			s, err := d.UploadCSR(HostCSR{Crows: c.crows, Cols: c.cols, Values: vals, Shape: []int64{2, 2}})
			if c.ok {
				require.NoError(t, err)
				s.Release()
				continue
			}
			requireArg(t, err, "upload_csr", "x.cols", ErrInvalidArgument)
		}
	})
}
