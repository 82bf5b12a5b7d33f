package accel

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// randTensor fills a tensor of dtype and shape with random bits, including
// NaNs with payloads for floats (values must be copied bit-exactly).
func randTensor(t *testing.T, rng *rand.Rand, dt DType, shape ...int64) *Tensor {
	t.Helper()
	x, err := NewTensor(dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
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
					if err != nil {
						t.Fatal(err)
					}
					src := randTensor(t, rng, dt, g.diagShape...)
					want, err := DiagonalScatter(in, src, offset, d1, d2)
					if err != nil {
						t.Fatal(name, err)
					}
					ts, release, err := uploadAll(d, in, src)
					if err != nil {
						t.Fatal(err)
					}
					out, err := d.DiagonalScatter(ts[0], ts[1], offset, d1, d2)
					if err != nil {
						t.Fatal(name, err)
					}
					got, err := out.ToHost()
					out.Release()
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got.data, want.data) || !sameShape(got.shape, want.shape) {
						t.Fatalf("%s: device result differs from the reference", name)
					}
					// in place
					if err := d.DiagonalScatterInPlace(ts[0], ts[1], offset, d1, d2); err != nil {
						t.Fatal(name, err)
					}
					got, _ = ts[0].ToHost()
					if !bytes.Equal(got.data, want.data) {
						t.Fatalf("%s: in-place result differs from the reference", name)
					}
					// backward
					gi, gs, err := d.DiagonalScatterBackward(ts[0], offset, d1, d2)
					if err != nil {
						t.Fatal(name, err)
					}
					wgi, wgs, err := DiagonalScatterBackward(want, offset, d1, d2)
					if err != nil {
						t.Fatal(err)
					}
					hgi, _ := gi.ToHost()
					hgs, _ := gs.ToHost()
					gi.Release()
					gs.Release()
					if !bytes.Equal(hgi.data, wgi.data) || !bytes.Equal(hgs.data, wgs.data) || !sameShape(hgs.shape, wgs.shape) {
						t.Fatalf("%s: backward differs from the reference", name)
					}
					if !bytes.Equal(hgs.data, src.data) {
						t.Fatalf("%s: grad_src is not the scattered src", name)
					}
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
	out, err := DiagonalScatter(in, src, 1, 0, 1) // torch.diagonal_scatter(zeros(3,3), ones(2), 1)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(out.Float32s()) != "[0 1 0 0 0 1 0 0 0]" {
		t.Fatalf("offset 1: %v", out.Float32s())
	}
	src3, _ := FromFloat32s([]int64{3}, []float32{1, 2, 3})
	out, _ = DiagonalScatter(in, src3, 0, 0, 1)
	if fmt.Sprint(out.Float32s()) != "[1 0 0 0 2 0 0 0 3]" {
		t.Fatalf("offset 0: %v", out.Float32s())
	}
	in23, _ := FromInt64s([]int64{2, 3}, make([]int64, 6))
	src2, _ := FromInt64s([]int64{2}, []int64{7, 8})
	out, _ = DiagonalScatter(in23, src2, -1, 1, 0) // dim1 > dim2: elements (t+1, t) of the transpose
	if fmt.Sprint(out.Int64s()) != "[0 7 0 0 0 8]" {
		t.Fatalf("dims (1, 0) offset -1: %v", out.Int64s())
	}
}

func TestDiagonalScatterErrors(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		mk := func(dt DType, shape ...int64) *DeviceTensor {
			x, _ := NewTensor(dt, shape...)
			dx, err := d.Upload(x)
			if err != nil {
				t.Fatal(err)
			}
			return dx
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
				if err != nil {
					t.Fatalf("case %d: %v", i, err)
				}
				out.Release()
				continue
			}
			var ae *ArgError
			if !errors.As(err, &ae) || ae.Arg != c.arg || !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("case %d: %v, want an error on %q", i, err, c.arg)
			}
		}
		if err := d.DiagonalScatterInPlace(src, src, 0, 0, 1); err == nil {
			t.Fatal("rank-1 in place: no error")
		}
	})
}
