package accel

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
)

// TestSubnormalFloat32 runs the float32 ops whose bits are promised
// (the bit-reproducible scatter_reduce, segment_reduce, the sparse
// binary ops and their gradients) on subnormal operands and on values
// whose sums and products fall into the subnormals or round out of them:
// on both drivers as they are, and on Vulkan in the builds that keep
// subnormals themselves: V.strictf (ACCEL_DENORM_FIX=1), which an NVIDIA
// GPU's Vulkan loads (its compiler flushed a product of -1.47e-43 to -0
// on an H200), and the plain ones. Each must give the reference's bits.
func TestSubnormalFloat32(t *testing.T) {
	for _, m := range []struct{ backend, fix, strict string }{
		{host.OpenCL, "", ""}, {host.Vulkan, "", ""}, {host.Vulkan, "1", "1"}, {host.Vulkan, "1", "0"},
	} {
		t.Run(fmt.Sprintf("%s/fix=%s/strict=%s", m.backend, m.fix, m.strict), func(t *testing.T) {
			t.Setenv("ACCEL_DENORM_FIX", m.fix)
			t.Setenv("ACCEL_VK_STRICT", m.strict)
			testSubnormals(t, ownTestDevice(t, m.backend))
		})
	}
}

// tinyFloat32 is a value near or in the float32 subnormals, or one whose
// product with another such lands there, or an ordinary one, and now and
// then a NaN, an infinity or a signed zero (the V.strictf builds compare
// floats on their bits, as the plain ones do).
func tinyFloat32(rng *rand.Rand) float32 {
	b := rng.Uint32()
	switch r := rng.Intn(40); {
	case r == 0:
		specials := []uint32{0x7fc00001, 0xffc00000, 0x7f800000, 0xff800000, 0x80000000, 0}
		return math.Float32frombits(specials[rng.Intn(len(specials))])
	case r < 14: // subnormal
		b &= 0x807fffff
	case r < 20: // the least normal binades
		b = b&0x807fffff | uint32(1+rng.Intn(3))<<23
	case r < 26: // about 2^-63: products of two are about 2^-126
		b = b&0x807fffff | uint32(127-63+rng.Intn(5)-2)<<23
	case r < 33: // short significands in the subnormals: ties
		b &= 0x80000fff
	default:
		return float32(rng.NormFloat64())
	}
	return math.Float32frombits(b)
}

func testSubnormals(t *testing.T, d *Device) {
	rng := rand.New(rand.NewSource(149))
	tiny := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = tinyFloat32(rng)
		}
		return v
	}
	// scatter_reduce, bit-reproducible: 2000 positions into 61 targets
	for _, red := range []Reduction{Sum, Prod, Amax, Amin, Mean} {
		for _, self := range []bool{true, false} {
			what := fmt.Sprintf("scatter_reduce %s self=%v", red, self)
			in, err := FromFloat32s([]int64{61}, tiny(61))
			require.NoError(t, err)
			src, err := FromFloat32s([]int64{2000}, tiny(2000))
			require.NoError(t, err)
			ix := make([]int64, 2000)
			for i := range ix {
				ix[i] = rng.Int63n(61)
			}
			idx, err := FromInt64s([]int64{2000}, ix)
			require.NoError(t, err)
			want, err := RefScatterReduce(in, 0, idx, src, red, self)
			require.NoError(t, err, what)
			ts, release := uploadAll(t, d, in, idx, src)
			got := mustHost(t, must(t)(d.ScatterReduceDeterministic(ts[0], 0, ts[1], ts[2], red, self)))
			release()
			require.NoError(t, sameBits(got, want), what)
		}
	}
	// segment_reduce over sorted runs of 1 to 6
	for _, red := range []Reduction{Sum, Amax, Amin} {
		ids := make([]int64, 0, 1500)
		for s := int64(0); len(ids) < 1500; s++ {
			for k := rng.Intn(6) + 1; k > 0; k-- {
				ids = append(ids, s)
			}
		}
		segs := ids[len(ids)-1] + 1
		vals, err := FromFloat32s([]int64{int64(len(ids))}, tiny(len(ids)))
		require.NoError(t, err)
		ht, err := FromInt64s([]int64{int64(len(ids))}, ids)
		require.NoError(t, err)
		want, err := RefSegmentReduce(vals, ht, red, segs)
		require.NoError(t, err)
		ts, release := uploadAll(t, d, vals, ht)
		got := mustHost(t, must(t)(d.SegmentReduce(ts[0], ts[1], red, segs)))
		release()
		require.NoError(t, sameBits(got, want), "segment_reduce %s", red)
	}
	// the sparse binary ops and their gradients, on tiny values
	shape := []int64{40, 50}
	x := genCSR(rng, shape, Float32, Int64, spGen{nnz: 900})
	y := genCSR(rng, shape, Float32, Int64, spGen{nnz: 900})
	for _, h := range []HostCSR{x, y} {
		copy(h.Values.Float32s(), tiny(int(h.Values.Len())))
	}
	dx, err := d.UploadCSR(x)
	require.NoError(t, err)
	defer dx.Release()
	dy, err := d.UploadCSR(y)
	require.NoError(t, err)
	defer dy.Release()
	for _, op := range []SparseOp{SparseAddOp, SparseSubOp, SparseMulOp, SparseDivOp} {
		what := fmt.Sprintf("sparse %v", op)
		want, err := RefSparseBinaryCSR(op, x, y)
		require.NoError(t, err, what)
		got, err := d.SparseBinaryCSR(op, dx, dy)
		require.NoError(t, err, what)
		sameCSR(t, want, got, what)
		got.Release()
		g, err := FromFloat32s([]int64{want.Values.Len()}, tiny(int(want.Values.Len())))
		require.NoError(t, err)
		checkCSRBackward(t, d, op, x, y, dx, dy, g, what)
	}
}
