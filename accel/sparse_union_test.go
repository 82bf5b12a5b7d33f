package accel

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/reference"
)

// clusteredCOO is an unsorted COO operand of n entries over k distinct
// keys from [base, base+span) (long runs of duplicates: sub-buckets past
// the insertion sort's bound take the LSD radix).
func clusteredCOO(rng *rand.Rand, shape []int64, dt, idt DType, n int, k, base, span int64, specials bool) HostCOO {
	size, _ := reference.SparseSize(shape)
	span = max(min(span, size-base), 1)
	keys := make([]int64, k)
	for i := range keys {
		keys[i] = base + rng.Int63n(span)
	}
	pat := make([]int64, n)
	for i := range pat {
		pat[i] = keys[rng.Intn(len(keys))]
	}
	return genCOO(rng, shape, dt, idt, spGen{pattern: pat, specials: specials})
}

// TestSparseUnionBuckets: the bucket union (unionByBuckets) forced on
// each device, against the reference bit for bit: random unsorted
// operands with duplicates, all entries on one key, clustered keys (long
// sub-buckets: the LSD radix), one bucket holding everything, more
// buckets than keys, chunks of 1 to 64 entries (buckets' segments in many
// chunks), sizes 0 and 1, ranks 1 to 4, int32 and int64 indices, float32
// and float64, the four ops and their gradients.
func TestSparseUnionBuckets(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		defer func() { plans(d).unionFn = nil }()
		rng := rand.New(rand.NewSource(77))
		shapes := [][]int64{{1}, {7}, {5, 6}, {3, 4, 5}, {2, 3, 2, 4}, {300, 200}, {5000, 3}, {0, 4}}
		forced := []struct {
			bits  int
			chunk int64
		}{{-1, 0}, {0, 3}, {2, 1}, {5, 7}, {12, 64}}
		for si, shape := range shapes {
			size, _ := reference.SparseSize(shape)
			for ci := 0; ci < 6; ci++ {
				dt := []DType{Float32, Float64}[(si+ci)%2]
				idt := []DType{Int64, Int32}[(si+ci/2)%2]
				var x, y HostCOO
				name := ""
				switch ci {
				case 0:
					name = "random"
					x = genCOO(rng, shape, dt, idt, spGen{nnz: int(size / 3), dups: true, unsorted: true, specials: true})
					y = genCOO(rng, shape, dt, idt, spGen{nnz: int(size / 4), dups: true, unsorted: true, specials: true})
				case 1:
					name = "one_key"
					k := int64(0)
					if size > 0 {
						k = rng.Int63n(size)
					}
					x = clusteredCOO(rng, shape, dt, idt, int(min(size, 1)*300), 1, k, 1, true)
					y = clusteredCOO(rng, shape, dt, idt, int(min(size, 1)*70), 1, k, 1, false)
				case 2:
					name = "clustered"
					x = clusteredCOO(rng, shape, dt, idt, int(min(size, 1)*2000), 40, size/3, 300, true)
					y = clusteredCOO(rng, shape, dt, idt, int(min(size, 1)*900), 25, size/3, 300, false)
				case 3:
					name = "sizes_0_1"
					x = genCOO(rng, shape, dt, idt, spGen{nnz: int(min(size, 1))})
					y = genCOO(rng, shape, dt, idt, spGen{})
				case 4:
					name = "one_sorted"
					x = genCOO(rng, shape, dt, idt, spGen{nnz: int(size / 2)})
					y = genCOO(rng, shape, dt, idt, spGen{nnz: int(size / 5), dups: true, unsorted: true, specials: true})
				case 5:
					name = "sparse_rows"
					x = genCOO(rng, shape, dt, idt, spGen{nnz: int(min(size, 40)), unsorted: true})
					y = genCOO(rng, shape, dt, idt, spGen{nnz: int(min(size, 30)), dups: true, unsorted: true})
				}
				dx, err := d.UploadCOO(x)
				require.NoError(t, err)
				dy, err := d.UploadCOO(y)
				require.NoError(t, err)
				for pi, p := range forced {
					plans(d).unionFn = func(up unionPlan, n int64, keyBits int) unionPlan {
						if p.bits < 0 {
							return planUnionBuckets(n, keyBits, up.BucketBits, max(up.Chunk, 16))
						}
						return planUnionBuckets(n, keyBits, p.bits, p.chunk)
					}
					op := spOps[(si+ci+pi)%4]
					what := fmt.Sprintf("%v %s %s %s plan %d", shape, name, dt, op, pi)
					want, err := RefSparseBinary(op, x, y)
					require.NoError(t, err, what)
					got, err := d.SparseBinary(op, dx, dy)
					require.NoError(t, err, what)
					sameCOO(t, want, got, what)
					got.Release()
					if pi == 2 || pi == 3 { // the gradients, on the union pattern
						g := spValues(rng, dt, int(want.Values.Len()), true)
						dg := mustUpload(t, d, g)
						sameBackwardCOO(t, d, spOps[(si+ci+pi+1)%4], x, y, dx, dy, g, dg, what+" backward")
						dg.Release()
					}
				}
				dx.Release()
				dy.Release()
			}
		}
	})
}

// TestSparseUnionBucketsBad: a bad entry under the bucket union is an
// error naming the first one, and an Into form's destination is left as
// it was.
func TestSparseUnionBucketsBad(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		defer func() { plans(d).unionFn = nil }()
		plans(d).unionFn = func(up unionPlan, n int64, keyBits int) unionPlan {
			return planUnionBuckets(n, keyBits, 1, 2)
		}
		shape := []int64{4, 5}
		good, err := d.UploadCOO(HostCOO{Indices: mustTensor(FromInt64s([]int64{2, 3}, []int64{3, 0, 3, 1, 2, 1})),
			Values: mustTensor(FromFloat32s([]int64{3}, []float32{1, 2, 3})), Shape: shape})
		require.NoError(t, err)
		defer good.Release()
		bad, err := d.UploadCOO(HostCOO{Indices: mustTensor(FromInt32s([]int64{2, 4}, []int32{1, 0, 4, -1, 0, 5, 2, 7})),
			Values: mustTensor(FromFloat32s([]int64{4}, []float32{1, 2, 3, 4})), Shape: shape})
		require.NoError(t, err)
		defer bad.Release()
		_, err = d.SparseDivide(good, bad)
		require.ErrorIs(t, err, ErrInvalidArgument)
		require.ErrorContains(t, err, "y.indices[1][1] = 5")
		dst, err := d.SparseAdd(good, good)
		require.NoError(t, err)
		defer dst.Release()
		before, err := dst.ToHost()
		require.NoError(t, err)
		err = d.SparseBinaryInto(dst, SparseMulOp, bad, good)
		require.ErrorIs(t, err, ErrInvalidArgument)
		require.ErrorContains(t, err, "x.indices[1][1] = 5")
		sameCOO(t, before, dst, "dst after an error")
	})
}
