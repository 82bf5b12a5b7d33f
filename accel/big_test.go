package accel

import (
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/reference"
)

// bigBytes is the size every tensor of TestBeyond4GiB passes: byte offsets
// past 2^32, so any 32-bit byte or word arithmetic on the host, in the
// driver or in a kernel shows up as a wrong or missing element.
const bigBytes = int64(1)<<32 + 1<<28

// TestBeyond4GiB runs one op per family on a device tensor of more than
// 4 GiB (4.25 GiB and up) and checks windows of the result at the start,
// at byte offsets around 2^31 and 2^32 and at the very end: tril/triu,
// diagonal_scatter, scatter_reduce, cumsum (the primitives' scan) and
// sparse to dense. Element counts past 2^31 and 2^32 are covered on every
// device by TestTriIndicesHuge (windows of results of up to 2^62 elements);
// here the memory is real.
//
// It needs a device whose largest allocation holds such a tensor (PoCL:
// 8 GiB; lavapipe's 2 GiB and 128 MiB storage range are covered by
// limits_test.go) and about 12 GB of free host memory, so it runs only
// with ACCEL_BIG=1 (about two minutes on PoCL with 2 cores).
func TestBeyond4GiB(t *testing.T) {
	if os.Getenv("ACCEL_BIG") != "1" {
		t.Skip("set ACCEL_BIG=1 to run ops on tensors past 4 GiB (needs ~12 GB of host memory)")
	}
	forEachDevice(t, func(t *testing.T, d *Device) {
		if d.caps.MaxAllocBytes < bigBytes+1<<20 {
			t.Skipf("%s: largest allocation %d MiB, below the %d MiB this test needs", d, d.caps.MaxAllocBytes>>20, bigBytes>>20)
		}
		// word reads n int64 or float32 words of x at element e.
		i64s := func(x *DeviceTensor, e, n int64) []int64 {
			b := make([]byte, 8*n)
			require.NoError(t, d.h.Download(x.raw(), 8*e, b))
			v := make([]int64, n)
			for i := range v {
				v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
			}
			return v
		}
		f32s := func(x *DeviceTensor, e, n int64) []float32 {
			b := make([]byte, 4*n)
			require.NoError(t, d.h.Download(x.raw(), 4*e, b))
			v := make([]float32, n)
			for i := range v {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
			return v
		}
		// windows of w elements of a tensor of n elements of size sz:
		// the start, byte offsets 2^31 and 2^32 (minus a few), the end.
		windows := func(n, sz, w int64) []int64 {
			var s []int64
			for _, e := range []int64{0, (1<<31)/sz - w/2, (1<<32)/sz - w/2, n - w} {
				s = append(s, min(max(e, 0), n-w))
			}
			return s
		}
		const w = 4096

		t.Run("triu_indices", func(t *testing.T) {
			// [2, N] int64 with N*16 > bigBytes: the column half starts
			// past 2^31 bytes and ends past 2^32.
			r := int64(math.Sqrt(float64(bigBytes)/8)) + 1
			out := must(t)(d.TriuIndices(r, r, 0, Int64))
			defer out.Release()
			n := out.Shape()[1]
			require.Greater(t, 16*n, bigBytes)
			for _, k0 := range windows(2*n, 8, w) {
				v := i64s(out, k0, w)
				for i, got := range v {
					k := k0 + int64(i)
					row, col := reference.TriElement(r, r, 0, true, k%n)
					want := row
					if k >= n {
						want = col
					}
					if got != want {
						require.Equal(t, want, got, "triu_indices(%d, %d): element %d of the flat [2, %d] result", r, r, k, n)
					}
				}
			}
		})

		t.Run("cumsum", func(t *testing.T) {
			// tril_indices(R, 1) is [arange(R), zeros(R)]; its flat
			// inclusive cumsum is k(k+1)/2, then flat at R(R-1)/2.
			rr := bigBytes/16 + 1
			x := must(t)(d.TrilIndices(rr, 1, 0, Int64))
			defer x.Release()
			y := must(t)(d.Cumsum(x, false))
			defer y.Release()
			for _, k0 := range windows(2*rr, 8, w) {
				v := i64s(y, k0, w)
				for i, got := range v {
					k := k0 + int64(i)
					want := k * (k + 1) / 2
					if k >= rr {
						want = rr * (rr - 1) / 2
					}
					if got != want {
						require.Equal(t, want, got, "cumsum of tril_indices(%d, 1): element %d", rr, k)
					}
				}
			}
		})

		t.Run("diagonal_scatter", func(t *testing.T) {
			// Two batches of an n x n float32 matrix; the second batch's
			// diagonal lies past 2^31 bytes, its end past 2^32.
			n := int64(math.Sqrt(float64(bigBytes)/8)) + 1
			in := must(t)(d.Zeros(Float32, 2, n, n))
			defer in.Release()
			sv := make([]float32, 2*n)
			for i := range sv {
				sv[i] = float32(i%1000 + 1)
			}
			src := mustUpload(t, d, mustTensor(FromFloat32s([]int64{2, n}, sv)))
			defer src.Release()
			out := must(t)(d.DiagonalScatter(in, src, 0, 1, 2))
			defer out.Release()
			total := 2 * n * n
			for _, e0 := range windows(total, 4, w) {
				v := f32s(out, e0, w)
				for i, got := range v {
					e := e0 + int64(i)
					b, rc := e/(n*n), e%(n*n)
					var want float32
					if rc/n == rc%n {
						want = sv[b*n+rc/n]
					}
					if got != want {
						require.Equal(t, want, got, "diagonal_scatter of [2, %d, %d]: element %d (batch %d, row %d, col %d)", n, n, e, b, rc/n, rc%n)
					}
				}
			}
		})

		t.Run("scatter_reduce", func(t *testing.T) {
			// A sum into a 1-D float32 input past 4 GiB at positions in
			// every window, some repeated.
			n := bigBytes / 4
			in := must(t)(d.Zeros(Float32, n))
			defer in.Release()
			wins := windows(n, 4, w)
			for i := 1; i < len(wins); i++ {
				require.GreaterOrEqual(t, wins[i]-wins[i-1], int64(w), "windows overlap")
			}
			var idx []int64
			var val []float32
			for wi, e0 := range wins {
				for i := int64(0); i < w; i += 7 {
					idx = append(idx, e0+i, e0+i)
					val = append(val, float32(wi+1), 0.5)
				}
			}
			it := mustUpload(t, d, mustTensor(FromInt64s([]int64{int64(len(idx))}, idx)))
			defer it.Release()
			st := mustUpload(t, d, mustTensor(FromFloat32s([]int64{int64(len(val))}, val)))
			defer st.Release()
			out := must(t)(d.ScatterReduce(in, 0, it, st, Sum, true))
			defer out.Release()
			for wi, e0 := range wins {
				v := f32s(out, e0, w)
				for i, got := range v {
					var want float32
					if i%7 == 0 {
						want = float32(wi+1) + 0.5 // the two entries at each position
					}
					if got != want {
						require.Equal(t, want, got, "scatter_reduce sum into [%d]: element %d", n, e0+int64(i))
					}
				}
			}
		})

		t.Run("sparse_to_dense", func(t *testing.T) {
			// A COO matrix whose dense form passes 4 GiB, entries around
			// the 2^31 and 2^32 byte offsets and in the last row.
			cols := int64(1 << 16)
			rows := bigBytes/4/cols + 1
			var ri, ci []int64
			var vals []float32
			for _, e0 := range windows(rows*cols, 4, w) {
				for i := int64(0); i < w; i += 13 {
					e := e0 + i
					ri = append(ri, e/cols)
					ci = append(ci, e%cols)
					vals = append(vals, float32(len(vals)+1))
				}
			}
			idx := mustTensor(FromInt64s([]int64{2, int64(len(ri))}, append(ri, ci...)))
			x, err := d.UploadCOO(HostCOO{Indices: idx, Values: mustTensor(FromFloat32s([]int64{int64(len(vals))}, vals)), Shape: []int64{rows, cols}})
			require.NoError(t, err)
			defer x.Release()
			dense := must(t)(d.SparseToDense(x))
			defer dense.Release()
			want := map[int64]float32{}
			for i := range ri {
				want[ri[i]*cols+ci[i]] = vals[i]
			}
			for _, e0 := range windows(rows*cols, 4, w) {
				v := f32s(dense, e0, w)
				for i, got := range v {
					e := e0 + int64(i)
					if got != want[e] {
						require.Equal(t, want[e], got, "sparse to dense [%d, %d]: element %d (row %d, col %d)", rows, cols, e, e/cols, e%cols)
					}
				}
			}
		})
	})
}
