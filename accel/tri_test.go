package accel

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/reference"
)

func checkTri(t *testing.T, d *Device, rows, cols, offset int64, upper bool, dtype DType) {
	t.Helper()
	var got *DeviceTensor
	var err error
	if upper {
		got, err = d.TriuIndices(rows, cols, offset, dtype)
	} else {
		got, err = d.TrilIndices(rows, cols, offset, dtype)
	}
	if err != nil {
		t.Fatalf("%s(%d, %d, %d, %s): %v", triOp(upper), rows, cols, offset, dtype, err)
	}
	defer got.Release()
	h, err := got.ToHost()
	if err != nil {
		t.Fatal(err)
	}
	wr, wc := reference.TriIndices(rows, cols, offset, upper)
	n := int64(len(wr))
	if s := h.Shape(); len(s) != 2 || s[0] != 2 || s[1] != n {
		t.Fatalf("%s(%d, %d, %d): shape %v, want [2 %d]", triOp(upper), rows, cols, offset, s, n)
	}
	for i := int64(0); i < n; i++ {
		if h.Int64At(i) != wr[i] || h.Int64At(n+i) != wc[i] {
			t.Fatalf("%s(%d, %d, %d, %s) element %d = (%d, %d), want (%d, %d)", triOp(upper), rows, cols, offset, dtype,
				i, h.Int64At(i), h.Int64At(n+i), wr[i], wc[i])
		}
	}
}

func TestTriIndicesRandom(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(1))
		type tc struct{ r, c, o int64 }
		cases := []tc{{0, 0, 0}, {0, 5, 0}, {5, 0, 0}, {1, 1, 0}, {1, 1, -1}, {1, 1, 1}, {3, 3, 0},
			{4, 3, 0}, {3, 4, 0}, {5, 5, -10}, {5, 5, 10}, {7, 3, -2}, {3, 7, 2}, {1, 1000, 0}, {1000, 1, 0},
			{5, 5, math.MaxInt64}, {5, 5, math.MinInt64}, {300, 257, -100}, {257, 300, 100}}
		for i := 0; i < 40; i++ {
			r, c := rng.Int63n(200), rng.Int63n(200)
			o := rng.Int63n(2*(r+c)+3) - (r + c + 1)
			cases = append(cases, tc{r, c, o})
		}
		for _, x := range cases {
			for _, upper := range []bool{false, true} {
				for _, dt := range []DType{Int64, Int32} {
					checkTri(t, d, x.r, x.c, x.o, upper, dt)
				}
			}
		}
	})
}

// TestTriIndicesGroupShapes forces tiny tiles and 3-D group grids smaller
// and larger than the work, so the grid-stride loop and the 3-D group
// linearization are exercised on both layouts.
func TestTriIndicesGroupShapes(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		defer func() { d.planHook = nil }()
		for _, contig := range []int64{0, 1} {
			for _, groups := range [][3]int64{{1, 1, 1}, {3, 2, 1}, {2, 3, 5}, {7, 1, 3}} {
				d.planHook = func(p host.Plan) host.Plan {
					p.LocalSize = 8
					p.Knobs = []host.Knob{{Name: "ITEMS", ID: 1, Value: 3}, {Name: "CONTIG", ID: 2, Value: contig}}
					p.Groups = groups
					return p
				}
				t.Run(fmt.Sprint(contig, groups), func(t *testing.T) {
					checkTri(t, d, 37, 29, 3, false, Int64)
					checkTri(t, d, 29, 37, -3, true, Int32)
				})
			}
		}
	})
}

func TestTriIndicesErrors(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		cases := []struct {
			r, c, o int64
			dt      DType
			want    error
			arg     string
		}{
			{-1, 3, 0, Int64, ErrInvalidArgument, "row"},
			{3, -1, 0, Int64, ErrInvalidArgument, "col"},
			{3, 3, 0, Float32, ErrInvalidArgument, "dtype"},
			{math.MaxInt64, math.MaxInt64, 0, Int64, ErrTooLarge, "row*col"},
			{1 << 32, 1 << 32, 0, Int64, ErrTooLarge, "row*col"},
			{1 << 20, 1 << 20, 0, Int64, ErrTooLarge, "output"}, // 2^40 elements: beyond any allocation here
			{1, 1 << 40, 1 << 40, Int32, ErrInvalidArgument, "dtype"},
		}
		for _, c := range cases {
			out, err := d.TrilIndices(c.r, c.c, c.o, c.dt)
			if err == nil {
				out.Release()
				t.Fatalf("tril_indices(%d, %d, %d, %s): no error", c.r, c.c, c.o, c.dt)
			}
			var ae *ArgError
			if !errors.Is(err, c.want) || !errors.As(err, &ae) || ae.Arg != c.arg {
				t.Fatalf("tril_indices(%d, %d, %d, %s): %v, want %v on %q", c.r, c.c, c.o, c.dt, err, c.want, c.arg)
			}
		}
	})
}

// TestTriLayoutLarge checks the closed-form layout against the reference
// count for shapes far beyond what a test can enumerate, where the count is
// still cheap to compute row by row, and the device at large row indices
// through element spot checks.
func TestTriLayoutCount(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 2000; i++ {
		r, c := rng.Int63n(3000), rng.Int63n(3000)
		o := rng.Int63n(8000) - 4000
		for _, upper := range []bool{false, true} {
			l, err := newTriLayout("t", r, c, o, upper, Int64)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := reference.TriCount(r, c, o, upper)
			if l.N != want {
				t.Fatalf("%s(%d, %d, %d): N = %d, want %d", triOp(upper), r, c, o, l.N, want)
			}
		}
	}
}

// TestTriIndicesHuge checks windows of results with N far beyond 2^31
// (up to about 2^62 elements) against an independent closed-form oracle, at
// the start, at random points and at the very end, on both triangles.
// This is where a float sqrt alone would misplace elements.
func TestTriIndicesHuge(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(3))
		shapes := []struct{ r, c, o int64 }{
			{1 << 31, 1 << 31, 0}, {3_000_000_000, 3_000_000_000, 0}, {1 << 31, 1 << 30, -12345},
			{3037000499, 3037000499, 0}, {2_000_000_000, 3, 1}, {5, 1 << 59, 1 << 58}, {1 << 40, 1 << 20, 7},
			{1 << 20, 1 << 41, -(1 << 19)}, {(1 << 31) + 7, (1 << 31) - 3, 1000},
		}
		for _, s := range shapes {
			for _, upper := range []bool{false, true} {
				op := triOp(upper)
				l, err := newTriLayout(op, s.r, s.c, s.o, upper, Int64)
				if err != nil {
					t.Fatalf("%s(%d, %d, %d): %v", op, s.r, s.c, s.o, err)
				}
				if l.N == 0 {
					continue
				}
				const w = 2048
				starts := []int64{0, max(l.N-w, 0), l.N / 2, l.T - w/2}
				for i := 0; i < 3; i++ {
					starts = append(starts, rng.Int63n(l.N))
				}
				for _, k0 := range starts {
					k0 = min(max(k0, 0), l.N-1)
					cnt := min(int64(w), l.N-k0)
					out, err := d.triWindow(op, l, k0, cnt, Int64)
					if err != nil {
						t.Fatal(err)
					}
					h, err := out.ToHost()
					out.Release()
					if err != nil {
						t.Fatal(err)
					}
					v := h.Int64s()
					for i := int64(0); i < cnt; i += 97 {
						wr, wc := reference.TriElement(s.r, s.c, s.o, upper, k0+i)
						if v[i] != wr || v[cnt+i] != wc {
							t.Fatalf("%s(%d, %d, %d) element %d = (%d, %d), want (%d, %d)", op, s.r, s.c, s.o, k0+i, v[i], v[cnt+i], wr, wc)
						}
					}
					// consecutive elements must walk the rows without gaps
					for i := int64(1); i < cnt; i++ {
						r0, c0, r1, c1 := v[i-1], v[cnt+i-1], v[i], v[cnt+i]
						if !(r1 == r0 && c1 == c0+1) && !(r1 > r0) {
							t.Fatalf("%s(%d, %d, %d) elements %d, %d: (%d, %d) then (%d, %d)", op, s.r, s.c, s.o, k0+i-1, k0+i, r0, c0, r1, c1)
						}
					}
				}
			}
		}
	})
}

// TestConcurrentTriIndices runs many ops at once on one Device (run under
// -race by make test).
func TestConcurrentTriIndices(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		done := make(chan error, 8)
		for g := 0; g < 8; g++ {
			go func(g int) {
				for i := 0; i < 5; i++ {
					r, c, o := int64(10+g*7+i), int64(20+g*3), int64(i-2)
					out, err := d.TriuIndices(r, c, o, Int64)
					if err != nil {
						done <- err
						return
					}
					h, err := out.ToHost()
					out.Release()
					if err != nil {
						done <- err
						return
					}
					wr, wc := reference.TriIndices(r, c, o, true)
					v := h.Int64s()
					for k := range wr {
						if v[k] != wr[k] || v[len(wr)+k] != wc[k] {
							done <- fmt.Errorf("goroutine %d: triu(%d, %d, %d) element %d wrong", g, r, c, o, k)
							return
						}
					}
				}
				done <- nil
			}(g)
		}
		for g := 0; g < 8; g++ {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestPoolReuseLoop: a program calling the same op in a loop allocates no
// driver buffers after the first call, with fresh outputs and with Into.
func TestPoolReuseLoop(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		first, err := d.TrilIndices(50, 40, 3, Int64)
		if err != nil {
			t.Fatal(err)
		}
		first.Release()
		before := d.PoolStats().Misses
		for i := 0; i < 1000; i++ {
			out, err := d.TrilIndices(50, 40, 3, Int64)
			if err != nil {
				t.Fatal(err)
			}
			if i%250 == 0 {
				h, err := out.ToHost()
				if err != nil {
					t.Fatal(err)
				}
				wr, _ := reference.TriIndices(50, 40, 3, false)
				if h.Int64s()[len(wr)-1] != wr[len(wr)-1] {
					t.Fatal("wrong result from a reused buffer")
				}
			}
			out.Release()
		}
		if got := d.PoolStats().Misses - before; got != 0 {
			t.Fatalf("1000 calls made %d driver allocations after the first call, want 0", got)
		}
		out, err := d.TrilIndices(50, 40, 3, Int32)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Release()
		before = d.PoolStats().Misses
		for i := 0; i < 1000; i++ {
			if err := d.TrilIndicesInto(out, 50, 40, 3); err != nil {
				t.Fatal(err)
			}
		}
		if got := d.PoolStats().Misses - before; got != 0 {
			t.Fatalf("1000 Into calls made %d driver allocations", got)
		}
		if err := d.TrilIndicesInto(out, 50, 41, 3); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("Into with a wrong-shaped out: %v", err)
		}
	})
}
