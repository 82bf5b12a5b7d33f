package accel

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randTensor fills a tensor of dtype and shape with random bits, including
// NaNs with payloads for floats (values must be copied bit-exactly).
func randTensor(t *testing.T, rng *rand.Rand, dt DType, shape ...int64) *Tensor {
	t.Helper()
	x, err := NewTensor(dt, shape...)
	require.NoError(t, err)
	rng.Read(x.data)
	if dt == Float32 && len(x.data) >= 8 {
		v := x.Float32s()
		v[0] = math.Float32frombits(0x7fc00123) // a NaN with a payload
		v[1] = float32(math.Copysign(0, -1))
	}
	return x
}

func diagShapes(rng *rand.Rand) [][]int64 {
	shapes := [][]int64{{0, 3}, {3, 0}, {1, 1}, {4, 4}, {3, 5}, {5, 3}, {2, 3, 4}, {3, 4, 0}, {2, 3, 4, 5},
		{2, 1, 3, 1, 2, 2, 3, 2}, {64, 8, 8}, {1, 2, 1, 2, 1, 2, 1, 2}}
	for i := 0; i < 12; i++ {
		r := 2 + rng.Intn(5)
		s := make([]int64, r)
		for k := range s {
			s[k] = int64(rng.Intn(6))
		}
		shapes = append(shapes, s)
	}
	return shapes
}

func TestDiagonalScatterRandom(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(4))
		for _, shape := range diagShapes(rng) {
			r := int64(len(shape))
			for trial := 0; trial < 3; trial++ {
				d1 := rng.Int63n(2*r) - r
				d2 := rng.Int63n(2*r) - r
				if (d1+r)%r == (d2+r)%r {
					continue
				}
				offset := rng.Int63n(13) - 6
				for _, dt := range []DType{Int32, Int64, Float32, Float64} {
					name := fmt.Sprintf("%s%v/off%d/d%d,%d", dt, shape, offset, d1, d2)
					in := randTensor(t, rng, dt, shape...)
					g, err := newDiagGeom("t", shape, offset, d1, d2)
					require.NoError(t, err, name)
					src := randTensor(t, rng, dt, g.diagShape...)
					want, err := RefDiagonalScatter(in, src, offset, d1, d2)
					require.NoError(t, err, name)
					ts, release := uploadAll(t, d, in, src)
					out, err := d.DiagonalScatter(ts[0], ts[1], offset, d1, d2)
					require.NoError(t, err, name)
					got := mustHost(t, out)
					require.Equal(t, want.shape, got.shape, "%s: shape", name)
					require.Equal(t, want.data, got.data, "%s: device result differs from the reference", name)
					// in place
					require.NoError(t, d.DiagonalScatterInPlace(ts[0], ts[1], offset, d1, d2), name)
					got, err = ts[0].ToHost()
					require.NoError(t, err, name)
					require.Equal(t, want.data, got.data, "%s: in-place result differs from the reference", name)
					// backward
					gi, gs, err := d.DiagonalScatterBackward(ts[0], offset, d1, d2)
					require.NoError(t, err, name)
					wgi, wgs, err := RefDiagonalScatterBackward(want, offset, d1, d2)
					require.NoError(t, err, name)
					hgi, hgs := mustHost(t, gi), mustHost(t, gs)
					require.Equal(t, wgi.data, hgi.data, "%s: backward grad_input differs from the reference", name)
					require.Equal(t, wgs.shape, hgs.shape, "%s: backward grad_src shape", name)
					require.Equal(t, wgs.data, hgs.data, "%s: backward grad_src differs from the reference", name)
					require.Equal(t, src.data, hgs.data, "%s: grad_src is not the scattered src", name)
					release()
				}
			}
		}
	})
}

// TestDiagonalScatterByHand checks PyTorch documentation-style cases.
func TestDiagonalScatterByHand(t *testing.T) {
	in, _ := FromFloat32s([]int64{3, 3}, make([]float32, 9))
	src, _ := FromFloat32s([]int64{2}, []float32{1, 1})
	out, err := RefDiagonalScatter(in, src, 1, 0, 1) // torch.diagonal_scatter(zeros(3,3), ones(2), 1)
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 1, 0, 0, 0, 1, 0, 0, 0}, out.Float32s(), "offset 1")
	src3, _ := FromFloat32s([]int64{3}, []float32{1, 2, 3})
	out, err = RefDiagonalScatter(in, src3, 0, 0, 1)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 0, 0, 0, 2, 0, 0, 0, 3}, out.Float32s(), "offset 0")
	in23, _ := FromInt64s([]int64{2, 3}, make([]int64, 6))
	src2, _ := FromInt64s([]int64{2}, []int64{7, 8})
	out, err = RefDiagonalScatter(in23, src2, -1, 1, 0) // dim1 > dim2: elements (t+1, t) of the transpose
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 7, 0, 0, 0, 8}, out.Int64s(), "dims (1, 0) offset -1")
}

func TestDiagonalScatterErrors(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		mk := func(dt DType, shape ...int64) *DeviceTensor {
			return mustUpload(t, d, hostZeros(dt, shape...))
		}
		in := mk(Float32, 3, 4)
		src := mk(Float32, 3)
		cases := []struct {
			in, src     *DeviceTensor
			off, d1, d2 int64
			arg         string
		}{
			{mk(Float32, 5), src, 0, 0, 1, "input"},
			{in, src, 0, 0, 0, "dim2"},
			{in, src, 0, 1, -1, "dim2"},
			{in, src, 0, 2, 1, "dim1"},
			{in, src, 0, 0, -3, "dim2"},
			{in, mk(Float32, 4), 0, 0, 1, "src"},
			{in, mk(Float32, 1, 3), 0, 0, 1, "src"},
			{in, mk(Int32, 3), 0, 0, 1, "src"},
			{in, src, 1, 0, 1, ""}, // valid: offset 1 has length 3 too
		}
		for i, c := range cases {
			out, err := d.DiagonalScatter(c.in, c.src, c.off, c.d1, c.d2)
			if c.arg == "" {
				require.NoError(t, err, "case %d", i)
				out.Release()
				continue
			}
			var ae *ArgError
			require.ErrorAs(t, err, &ae, "case %d: want an error on %q", i, c.arg)
			require.Equal(t, c.arg, ae.Arg, "case %d: %v", i, err)
			require.ErrorIs(t, err, ErrInvalidArgument, "case %d", i)
		}
		require.Error(t, d.DiagonalScatterInPlace(src, src, 0, 0, 1), "rank-1 in place")
	})
}
