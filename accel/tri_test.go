package accel

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/reference"
)

func checkTri(t *testing.T, d *Device, rows, cols, offset int64, upper bool, dtype DType) {
	t.Helper()
	name := fmt.Sprintf("%s(%d, %d, %d, %s)", triOp(upper), rows, cols, offset, dtype)
	var got *DeviceTensor
	var err error
	if upper {
		got, err = d.TriuIndices(rows, cols, offset, dtype)
	} else {
		got, err = d.TrilIndices(rows, cols, offset, dtype)
	}
	require.NoError(t, err, name)
	h := mustHost(t, got)
	wr, wc := reference.TriIndices(rows, cols, offset, upper)
	n := int64(len(wr))
	require.Equal(t, []int64{2, n}, h.Shape(), "%s: shape", name)
	gr, gc := make([]int64, n), make([]int64, n)
	for i := int64(0); i < n; i++ {
		gr[i], gc[i] = h.Int64At(i), h.Int64At(n+i)
	}
	requireElems(t, wr, gr, "%s: rows", name)
	requireElems(t, wc, gc, "%s: cols", name)
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
		defer func() { plans(d).launchFn = nil }()
		for _, contig := range []int64{0, 1} {
			for _, groups := range [][3]int64{{1, 1, 1}, {3, 2, 1}, {2, 3, 5}, {7, 1, 3}} {
				plans(d).launchFn = func(p host.Plan) host.Plan {
					p.LocalSize = 8
					p.Knobs = []host.Knob{host.KnobItems.Set(3), host.KnobContig.Set(contig)}
					p.Groups = groups
					return p
				}
				t.Run(fmt.Sprint(contig, groups), func(t *testing.T) {
					checkTri(t, d, 37, 29, 3, false, Int64)
					checkTri(t, d, 29, 37, -3, true, Int32)
				})
			}
		}
		// STREAM (non-temporal stores from each run's first 64-byte
		// boundary, OpenCL C; the plan picks it for outputs of 16 MiB and
		// more): runs shorter than a vector, with heads, bodies and tails
		for _, items := range []int64{3, 100, 4096} {
			plans(d).launchFn = func(p host.Plan) host.Plan {
				p.LocalSize = 8
				p.Knobs = []host.Knob{host.KnobItems.Set(items), host.KnobContig.Set(1), host.KnobStream.Set(1)}
				p.Groups = [3]int64{3, 2, 1}
				return p
			}
			t.Run(fmt.Sprint("stream ", items), func(t *testing.T) {
				for _, dt := range []DType{Int64, Int32} {
					checkTri(t, d, 300, 257, -100, false, dt)
					checkTri(t, d, 257, 300, 100, true, dt)
					checkTri(t, d, 123, 131, 0, false, dt)
				}
			})
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
			name := fmt.Sprintf("tril_indices(%d, %d, %d, %s)", c.r, c.c, c.o, c.dt)
			out, err := d.TrilIndices(c.r, c.c, c.o, c.dt)
			if err == nil {
				out.Release()
			}
			require.ErrorIs(t, err, c.want, name)
			var ae *ArgError
			require.ErrorAs(t, err, &ae, name)
			require.Equal(t, c.arg, ae.Arg, "%s: %v", name, err)
		}
	})
}

// TestTriLayoutCount checks the closed-form layout against the reference
// count for shapes far beyond what a test can enumerate, where the count is
// still cheap to compute row by row.
func TestTriLayoutCount(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 2000; i++ {
		r, c := rng.Int63n(3000), rng.Int63n(3000)
		o := rng.Int63n(8000) - 4000
		for _, upper := range []bool{false, true} {
			l, err := newTriLayout("t", r, c, o, upper, Int64)
			require.NoError(t, err)
			want, _ := reference.TriCount(r, c, o, upper)
			require.Equal(t, want, l.N, "%s(%d, %d, %d): N", triOp(upper), r, c, o)
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
				name := fmt.Sprintf("%s(%d, %d, %d)", op, s.r, s.c, s.o)
				l, err := newTriLayout(op, s.r, s.c, s.o, upper, Int64)
				require.NoError(t, err, name)
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
					require.NoError(t, err, name)
					v := mustHost(t, out).Int64s()
					var want, got [][2]int64
					for i := int64(0); i < cnt; i += 97 {
						wr, wc := reference.TriElement(s.r, s.c, s.o, upper, k0+i)
						want = append(want, [2]int64{wr, wc})
						got = append(got, [2]int64{v[i], v[cnt+i]})
					}
					requireElems(t, want, got, "%s: (row, col) of every 97th element from %d", name, k0)
					// consecutive elements must walk the rows without gaps
					var gaps []string
					for i := int64(1); i < cnt && len(gaps) < 5; i++ {
						r0, c0, r1, c1 := v[i-1], v[cnt+i-1], v[i], v[cnt+i]
						if !(r1 == r0 && c1 == c0+1) && !(r1 > r0) {
							gaps = append(gaps, fmt.Sprintf("elements %d, %d: (%d, %d) then (%d, %d)", k0+i-1, k0+i, r0, c0, r1, c1))
						}
					}
					require.Empty(t, gaps, "%s: consecutive elements skip or go back", name)
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
			assert.NoError(t, <-done)
		}
	})
}

// TestPoolReuseLoop: a program calling the same op in a loop allocates no
// driver buffers after the first call, with fresh outputs and with Into.
func TestPoolReuseLoop(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		first, err := d.TrilIndices(50, 40, 3, Int64)
		require.NoError(t, err)
		first.Release()
		wr, _ := reference.TriIndices(50, 40, 3, false)
		before := d.PoolStats().Misses
		for i := 0; i < 1000; i++ {
			out, err := d.TrilIndices(50, 40, 3, Int64)
			require.NoError(t, err)
			if i%250 == 0 {
				h, err := out.ToHost()
				require.NoError(t, err)
				require.Equal(t, wr[len(wr)-1], h.Int64s()[len(wr)-1], "wrong result from a reused buffer")
			}
			out.Release()
		}
		require.Zero(t, d.PoolStats().Misses-before, "driver allocations by 1000 calls after the first call")
		out, err := d.TrilIndices(50, 40, 3, Int32)
		require.NoError(t, err)
		defer out.Release()
		before = d.PoolStats().Misses
		for i := 0; i < 1000; i++ {
			require.NoError(t, d.TrilIndicesInto(out, 50, 40, 3))
		}
		require.Zero(t, d.PoolStats().Misses-before, "driver allocations by 1000 Into calls")
		require.ErrorIs(t, d.TrilIndicesInto(out, 50, 41, 3), ErrInvalidArgument, "Into with a wrong-shaped out")
	})
}
