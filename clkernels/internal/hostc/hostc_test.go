package hostc

import (
	"math"
	"math/big"
	"math/rand"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/reference"
)

// TestFDiv32Bits checks the integer float32 division every Vulkan device
// (and OpenCL devices without fp64 or the capability) runs against the
// host's float32 division, bit for bit: special values, subnormal
// operands and results, overflow, ties, and random bits. On amd64 NaN
// results match too (x86's rules, the reference's machine); elsewhere any
// NaN matches any NaN.
func TestFDiv32Bits(t *testing.T) {
	special := []uint32{0, 0x80000000, 1, 0x80000001, 0x7fffff, 0x800000, 0x807fffff, 0x7f7fffff, 0xff7fffff,
		0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x7fbfffff, 0x3f800000, 0x40000000, 0x3fc00000,
		0x400000, 0x34000000, 0x0a000000, 0x75000000, 0x00000003, 0x3f7fffff, 0x3f800001}
	check := func(a, b uint32) {
		want := math.Float32bits(math.Float32frombits(a) / math.Float32frombits(b))
		got := FDiv32Bits(a, b)
		wn, gn := want&0x7fffffff > 0x7f800000, got&0x7fffffff > 0x7f800000
		if got != want && !(wn && gn && runtime.GOARCH != "amd64") {
			require.Failf(t, "wrong quotient", "%#08x / %#08x (%g / %g): got %#08x (%g), want %#08x (%g)", a, b,
				math.Float32frombits(a), math.Float32frombits(b), got, math.Float32frombits(got), want, math.Float32frombits(want))
		}
	}
	for _, a := range special {
		for _, b := range special {
			check(a, b)
		}
	}
	rng := rand.New(rand.NewSource(1))
	n := 2_000_000
	if testing.Short() {
		n = 100_000
	}
	for i := 0; i < n; i++ {
		a, b := rng.Uint32(), rng.Uint32()
		switch i % 4 {
		case 1: // a subnormal
			a &= 0x807fffff
		case 2: // b subnormal or tiny: results near overflow
			b &= 0x80ffffff
		case 3: // nearby exponents: every rounding case of a normal result
			a = a&0x80ffffff | 0x3f000000
			b = b&0x80ffffff | 0x3f000000
		}
		check(a, b)
	}
}

// TestIntegerDivision checks arith.h's helpers against Go's exact
// integers at the sizes a GPU reaches: operands around 2^31, 2^32, 2^62
// and the int64 extremes, every sign.
func TestIntegerDivision(t *testing.T) {
	vals := []int64{0, 1, 2, 3, 7, 1<<31 - 1, 1 << 31, 1<<31 + 1, 1<<32 - 1, 1 << 32, 1<<32 + 3, 1 << 40, 1<<62 - 1, 1 << 62,
		math.MaxInt64 - 1, math.MaxInt64}
	floor := func(a, b int64) (q, m int64) {
		// Euclidean: m >= 0; floor is one less where b < 0, the
		// remainder then taking b's sign.
		bq, bm := new(big.Int).DivMod(big.NewInt(a), big.NewInt(b), new(big.Int))
		if bm.Sign() != 0 && b < 0 {
			bq.Sub(bq, big.NewInt(1))
			bm.Add(bm, big.NewInt(b))
		}
		return bq.Int64(), bm.Int64()
	}
	for _, x := range vals {
		for _, y := range vals {
			if y == 0 {
				continue
			}
			assert.Equal(t, x/y, UDiv64(x, y), "udiv64(%d, %d)", x, y)
			assert.Equal(t, x%y, UMod64(x, y), "umod64(%d, %d)", x, y)
			if x <= math.MaxInt64-y {
				assert.Equal(t, (x+y-1)/y, CDiv64(x, y), "cdiv64(%d, %d)", x, y)
			}
			for _, sa := range []int64{1, -1} {
				for _, sb := range []int64{1, -1} {
					a, b := sa*x, sb*y
					q, m := floor(a, b)
					assert.Equal(t, q, FloorDiv64(a, b), "floordiv64(%d, %d)", a, b)
					assert.Equal(t, m, FloorMod64(a, b), "floormod64(%d, %d)", a, b)
				}
			}
		}
	}
	assert.Equal(t, int64(math.MinInt64)/3-1, FloorDiv64(math.MinInt64, 3))
	assert.Equal(t, int64(1), FloorMod64(math.MinInt64, 3))
	for _, w := range []uint32{0, 1, 0x7fffffff, 0x80000000, 0xffffffff} {
		assert.Equal(t, int64(int32(w)), Sext32(w), "sext32(%#x)", w)
	}
}

// TestTileMathHuge checks elementwise.h's tile loop (every kernel that
// walks elements runs it) with counts and tiles far past 2^32: the tile
// count, and the element of every lane of the first, a middle and the
// last tile, for both lane layouts.
func TestTileMathHuge(t *testing.T) {
	for _, l := range []Launch{
		{Groups: [3]int64{1 << 20, 3, 2}, Group: [3]int64{1<<20 - 1, 2, 1}, LocalID: 255, Local: 256, Items: 4},
		{Groups: [3]int64{16, 1, 1}, Group: [3]int64{15, 0, 0}, LocalID: 0, Local: 1, Items: 16, Contig: true},
		{Groups: [3]int64{2147483647, 65535, 65535}, Group: [3]int64{2147483646, 65534, 65534}, LocalID: 1023, Local: 1024, Items: 16},
	} {
		id, total := GroupLinearID(l)
		wantID := l.Group[0] + l.Group[1]*l.Groups[0] + l.Group[2]*l.Groups[0]*l.Groups[1]
		assert.Equal(t, wantID, id, "%+v: group linear id", l)
		assert.Equal(t, l.Groups[0]*l.Groups[1]*l.Groups[2], total, "%+v: groups", l)
		tile := l.Local * l.Items
		for _, count := range []int64{1<<31 + 5, 1<<32 + 7, 1<<40 + 3, 1<<62 - 1} {
			tiles := (count-1)/tile + 1
			require.Equal(t, tiles, EWTiles(l, count), "%+v: tiles of %d", l, count)
			for _, tl := range []int64{0, tiles / 2, tiles - 1} {
				for j := int64(0); j < l.Items; j++ {
					want := tl*tile + j*l.Local + l.LocalID
					if l.Contig {
						want = tl*tile + l.LocalID*l.Items + j
					}
					require.Equal(t, want, EWIndex(l, tl, j), "%+v: tile %d item %d", l, tl, j)
				}
			}
		}
	}
}

// TestDiagOffsetHuge checks diag_body.h's element offsets where the
// diagonal's index, the batch and the offsets pass 2^32: a [2^11, 2^11,
// 2^20, 2^20] tensor's diagonal of the last two dims (2^42 diagonal
// elements at offsets up to 2^62), against the same sum in big integers.
func TestDiagOffsetHuge(t *testing.T) {
	const n0, n1, n2, L = 1 << 11, 1 << 11, 1, 1 << 20
	s0, s1, s2 := int64(1<<51), int64(1<<40), int64(0)
	dstride := int64(1<<20 + 1)
	for _, j := range []int64{0, L - 1, L, 1<<31 + 12345, 1<<32 - 1, 1 << 32, n0*n1*L/2 + 17, n0*n1*L - 1} {
		t0, b := j%L, j/L
		b2, b := b%n2, b/n2
		b1, b0 := b%n1, b/n1
		want := new(big.Int).Mul(big.NewInt(t0), big.NewInt(dstride))
		for _, p := range [][2]int64{{b0, s0}, {b1, s1}, {b2, s2}} {
			want.Add(want, new(big.Int).Mul(big.NewInt(p[0]), big.NewInt(p[1])))
		}
		require.True(t, want.IsInt64(), "offset of %d fits", j)
		assert.Equal(t, want.Int64(), DiagOffset(j, L, 0, dstride, n1, n2, s0, s1, s2), "diagonal element %d", j)
	}
}

// TestTriRowColHuge checks tri_math.h's row recovery for tril_indices of
// square matrices with up to 2^61 elements against the reference.
func TestTriRowColHuge(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, r := range []int64{1 << 16, 1<<31 + 9, 2_999_999_999, 3037000499} { // r(r+1) < 2^63
		N := r * (r + 1) / 2 // tril(r, r, 0): lead 0, r trapezoid rows from length 1
		for _, k := range []int64{0, 1, N / 2, N - 2, N - 1, rng.Int63n(N), rng.Int63n(N)} {
			wr, wc := reference.TriElement(r, r, 0, false, k)
			gr, gc := TriRowCol(k, 0, r, 0, r, 1, N)
			require.Equal(t, [2]int64{wr, wc}, [2]int64{gr, gc}, "tril(%d, %d) element %d", r, r, k)
		}
	}
}

// ftz is v with a subnormal flushed to a zero of its sign, as a device
// without DenormPreserve treats operands and results (NVIDIA's Vulkan).
func ftz(v float32) float32 {
	if b := math.Float32bits(v); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return v
}

// TestFloat32Fix checks arith.h's fadd32_fix and fmul32_fix, which redo in
// integers the float32 sums and products a device flushing subnormals got
// wrong, against the host's float32 arithmetic bit for bit (any NaN
// matches any NaN): given the result such a device computes (operands
// and result flushed) they give the IEEE bits, and given the IEEE result
// they keep it. Special values, subnormal operands, results that fall
// into the subnormals or round out of them, and random bits.
func TestFloat32Fix(t *testing.T) {
	special := []uint32{0, 0x80000000, 1, 0x80000001, 2, 3, 0x7fffff, 0x807fffff, 0x400000, 0x800000, 0x80800000,
		0x800001, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x3f800000,
		0xbf800000, 0x40000000, 0x3fc00000, 0x34000000, 0x33ffffff, 0x0a000000, 0x1f800000, 0x1f000001, 0x20000000,
		0x4b000000, 0xcb000000, 0x00ffffff, 0x01000000, 0x3f7fffff, 0x3f800001, 0x0c800000, 0x8c800000, 0x0d000000,
		0x8d000000, 0x0d800000}
	same := func(got, want uint32) bool {
		return got == want || got&0x7fffffff > 0x7f800000 && want&0x7fffffff > 0x7f800000
	}
	check := func(a, b uint32) {
		fa, fb := math.Float32frombits(a), math.Float32frombits(b)
		for _, op := range []struct {
			name string
			f    func(x, y float32) float32
			fix  func(a, b, r uint32) uint32
		}{{"+", func(x, y float32) float32 { return x + y }, FAdd32Fix}, {"*", func(x, y float32) float32 { return x * y }, FMul32Fix}} {
			want := math.Float32bits(op.f(fa, fb))
			flushed := math.Float32bits(ftz(op.f(ftz(fa), ftz(fb))))
			for _, r := range []uint32{flushed, want} {
				if got := op.fix(a, b, r); !same(got, want) {
					require.Failf(t, "wrong "+op.name, "%#08x %s %#08x (%g %s %g) from %#08x: got %#08x (%g), want %#08x (%g)",
						a, op.name, b, fa, op.name, fb, r, got, math.Float32frombits(got), want, math.Float32frombits(want))
				}
			}
		}
	}
	for _, a := range special {
		for _, b := range special {
			check(a, b)
		}
	}
	rng := rand.New(rand.NewSource(2))
	n := 2_000_000
	if testing.Short() {
		n = 100_000
	}
	for i := 0; i < n; i++ {
		a, b := rng.Uint32(), rng.Uint32()
		switch i % 7 {
		case 1: // a subnormal
			a &= 0x807fffff
		case 2: // both subnormal or in the least binades
			a &= 0x80ffffff
			b &= 0x80ffffff
		case 3: // products near the subnormals: exponents summing to about 0
			ea := 1 + rng.Intn(126)
			a = a&0x807fffff | uint32(ea)<<23
			b = b&0x807fffff | uint32(max(127-ea-rng.Intn(25), 1))<<23
		case 4: // sums of nearby tiny values: cancellations into the subnormals
			a = a&0x80ffffff | uint32(rng.Intn(4))<<23
			b = (a ^ 0x80000000) + uint32(rng.Intn(1<<12)) - 1<<11
		case 5: // a subnormal and a value in the least 27 binades: rounded sums
			a &= 0x807fffff
			b = b&0x807fffff | uint32(1+rng.Intn(27))<<23
		case 6: // short significands near the subnormals: ties of products
			ea := 1 + rng.Intn(126)
			a = a&0x807f0000 | uint32(ea)<<23
			b = b&0x807f0000 | uint32(max(127-ea-rng.Intn(25), 1))<<23
		}
		check(a, b)
	}
}
