package accel

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
	"github.com/stretchr/testify/require"
)

// orderBitsOf is radix_body.h's radix_order in Go: the bits of key k (a
// word of w bytes, of kind KIND_*) in an order unsigned comparison sorts.
func orderBitsOf(k uint64, w int, kind int64, descending bool) uint64 {
	bits := 8 * uint(w)
	all := uint64(math.MaxUint64) >> (64 - bits)
	sign := uint64(1) << (bits - 1)
	inf := uint64(0x7f800000)
	nan := uint64(0x7fc00000)
	if w == 8 {
		inf, nan = 0x7ff0000000000000, 0x7ff8000000000000
	}
	switch kind {
	case kernels.KindSigned:
		k ^= sign
	case kernels.KindFloat:
		if k&^sign > inf {
			k = nan
		}
		if k == sign {
			k = 0
		}
		if k&sign != 0 {
			k = ^k & all
		} else {
			k |= sign
		}
	}
	if descending {
		k = ^k & all
	}
	return k
}

// skipKeys are n keys of dt whose bytes at the places fixed marks (bit b:
// byte b, from the lowest) are one value for every key, the others random.
func skipKeys(rng *rand.Rand, dt DType, n int64, fixed uint) *Tensor {
	w := dt.Size()
	x, _ := NewTensor(dt, n)
	same := rng.Uint64()
	word := make([]byte, 8)
	for i := int64(0); i < n; i++ {
		v := rng.Uint64()
		for b := 0; b < w; b++ {
			if fixed&(1<<b) != 0 {
				v = v&^(0xff<<(8*b)) | same&(0xff<<(8*b))
			}
		}
		binary.LittleEndian.PutUint64(word, v)
		copy(x.data[int(i)*w:], word[:w])
	}
	return x
}

// keyWord is key i of x as a word of its size.
func keyWord(x *Tensor, i int) uint64 {
	w := x.dtype.Size()
	word := make([]byte, 8)
	copy(word, x.data[i*w:(i+1)*w])
	return binary.LittleEndian.Uint64(word)
}

// TestSortSkipsPasses runs the sorts that skip the passes whose digit is
// one for every key (knob RADIX_SKIP: such a pass moves nothing, and the
// passes that run take their buffers by their place among themselves), on
// both plans: the GPUs' tiled sweep (forced on the CPU drivers; radix_roles
// from the scanned counts) and the CPU drivers' chunked passes
// (radix_aroles from the first count's OR and AND of each chunk's keys,
// the first pass always running, and the last where it unpacks with the
// host's packing). For keys
// of every 32- and 64-bit dtype with constant bytes at the low place, a
// middle one, the top, all but one, every other one and all of them: the
// role each pass gets (read back from the device) against the passes'
// digits computed here; then SortByKey and Unique of those keys against
// the reference, and the bit-reproducible scatter (radixSortWords and the
// sort from given entries) with its indices in one digit's range.
func TestSortSkipsPasses(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		plans(d).uniqueFn = func(up uniquePlan, _ int64, _ int) uniquePlan { up.Hash = false; return up }
		defer func() { plans(d).radixTiles, plans(d).uniqueFn, plans(d).scatterFn = false, nil, nil }()
		for _, tiles := range []bool{true, false} {
			plans(d).radixTiles = tiles
			plans(d).scatterFn = nil
			if !tiles && d.caps.Type != host.TypeCPU {
				continue // a GPU plans the tiles whatever radixTiles says
			}
			sizes := []int64{1, 2, 3001}
			if !tiles {
				// from radixSkipMin keys, in chunks of 4096: several ORs and ANDs
				sizes = append(sizes, radixSkipMin+3001)
			}
			rng := rand.New(rand.NewSource(5))
			for _, dt := range []DType{Uint32, Int32, Float32, Uint64, Int64, Float64} {
				w := dt.Size()
				top := uint(1) << (w - 1)
				all := uint(1)<<w - 1
				for _, fixed := range []uint{0, 1, 2, top, all &^ 1, all &^ top, 0x55 & all, 0xaa & all, all} {
					for _, n := range sizes {
						name := fmt.Sprintf("tiles=%v %s fixed=%#x n=%d", tiles, dt, fixed, n)
						keys := skipKeys(rng, dt, n, fixed)
						for _, desc := range []bool{false, true} {
							if tiles {
								checkRoles(t, d, keys, desc, fmt.Sprintf("%s descending=%v", name, desc))
							} else {
								// 64-bit keys carry 32-bit entries beside them, not packed
								carried := int64(kernels.CarryPacked)
								if w == 8 {
									carried = kernels.CarryE32
								}
								for _, carry := range []int64{kernels.CarryNone, carried} {
									checkChunkRoles(t, d, keys, desc, carry, fmt.Sprintf("%s descending=%v carry=%d", name, desc, carry))
								}
							}
						}
						for _, desc := range []bool{false, true} {
							checkSortByKey(t, d, rng, keys, desc, fmt.Sprintf("%s descending=%v", name, desc))
						}
						if dt == Float32 || dt == Float64 {
							continue
						}
						// Unique by the sort (the GPUs' first try is a hash table)
						wv, wi, wc, err := RefUnique(keys)
						require.NoError(t, err, name)
						dk := mustUpload(t, d, keys)
						gv, gi, gc, err := d.Unique(dk)
						dk.Release()
						require.NoError(t, err, "%s: unique", name)
						require.NoError(t, sameBits(mustHost(t, gv), wv), "%s: unique values", name)
						require.NoError(t, sameBits(mustHost(t, gi), wi), "%s: unique inverse", name)
						require.NoError(t, sameBits(mustHost(t, gc), wc), "%s: unique counts", name)
					}
				}
			}
			plans(d).scatterFn = forceStrategy(d, scatterSorted)
			for _, limit := range []int64{1, 200, 300} {
				checkSortedScatter(t, d, rng, 5000, limit, 300, Sum)
			}
			// targets below 2^17 (three passes of the words' high halves)
			// at indices below 300 (the third pass's digit one for all)
			checkSortedScatter(t, d, rng, radixSkipMin+5000, 300, 1<<17, Sum)
		}
	})
}

// oneDigit says for each of passes digits of bits bits whether every key
// of keys has one digit there (of their order bits).
func oneDigit(keys *Tensor, descending bool, bits, passes int) []bool {
	n, w := keys.Len(), keys.dtype.Size()
	mask := uint64(1)<<bits - 1
	one := make([]bool, passes)
	for q := range one {
		one[q] = true
		first := orderBitsOf(keyWord(keys, 0), w, keyKind(keys.dtype), descending) >> (q * bits) & mask
		for i := 1; i < int(n) && one[q]; i++ {
			one[q] = orderBitsOf(keyWord(keys, i), w, keyKind(keys.dtype), descending)>>(q*bits)&mask == first
		}
	}
	return one
}

// checkChunkRoles runs the chunked plan's passes over keys
// (radixRun.chunkPasses, carrying as carry says) and checks each pass's
// role (radix_aroles): the first runs, the last too where the entries
// are carried packed or in 32 bits with the host's packing (folded:
// llvmpipe), and every other where the keys' digits differ, each as its
// place among the passes that run, and their number; and the sorted
// order bits against Go's sort of them.
func checkChunkRoles(t *testing.T, d *Device, keys *Tensor, descending bool, carry int64, name string) {
	t.Helper()
	n, w := keys.Len(), keys.dtype.Size()
	var tmp temps
	defer tmp.release()
	r, dk := skipRun(t, d, &tmp, keys, name)
	require.False(t, r.tiled, "%s: the chunked plan: %v", name, r.plan)
	var bk, bp [2]host.Buffer
	outs := make([]*DeviceTensor, 4)
	for i := range outs {
		dt := keys.dtype
		if i >= 2 {
			dt = Int64
		}
		var err error
		outs[i], err = tmp.alloc(d, "sort", dt, n)
		require.NoError(t, err, name)
	}
	bk[0], bk[1], bp[0], bp[1] = outs[0].raw(), outs[1].raw(), outs[2].raw(), outs[3].raw()
	require.NoError(t, r.chunkPasses(d, "sort", radixSweepBufs{k0: dk.raw(), k: bk, p: bp, first: 1, carry: carry,
		kind: keyKind(keys.dtype), descending: b2i(descending)}), name)
	if radixChunkSkips(r.plan, n, r.passes) { // (else no roles: every pass runs)
		last := carry != kernels.CarryNone && d.caps.FoldArgs // (elsewhere the packing follows the roles)
		runs := make([]bool, r.passes)
		for q, o := range oneDigit(keys, descending, r.bits, r.passes) {
			runs[q] = q == 0 || last && q == r.passes-1 || !o
		}
		checkRoleWords(t, r.roles, runs, name)
	}
	// the result: the order bits sorted, and the positions stably
	got, err := outs[0].ToHost()
	require.NoError(t, err, name)
	perm, err := outs[2].ToHost()
	require.NoError(t, err, name)
	ps := perm.Int64s()
	for i := 0; i < int(n); i++ {
		require.True(t, ps[i] >= 0 && ps[i] < n, "%s: position %d: %d", name, i, ps[i])
		want := orderBitsOf(keyWord(keys, int(ps[i])), w, keyKind(keys.dtype), descending)
		require.Equal(t, want, keyWord(got, i), "%s: key %d is key %d's order bits", name, i, ps[i])
		if i > 0 {
			prev := keyWord(got, i-1)
			require.True(t, prev < keyWord(got, i) || prev == keyWord(got, i) && ps[i-1] < ps[i],
				"%s: keys %d and %d in order, stably", name, i-1, i)
		}
	}
}

// checkRoles queues the sweep's counts and roles for keys (radixRun.start)
// and checks the role of each pass: skipped where every key has one digit
// there, else its place among the passes that run, and their number (the
// first pass alone where every pass has one digit).
func checkRoles(t *testing.T, d *Device, keys *Tensor, descending bool, name string) {
	t.Helper()
	var tmp temps
	defer tmp.release()
	r, dk := skipRun(t, d, &tmp, keys, name)
	require.True(t, r.sweep, "%s: the tiled plan sweeps: %v", name, r.plan)
	require.NoError(t, r.start(d, "sort", dk.raw(), kernels.RadixUnpacked, keyKind(keys.dtype), b2i(descending)), name)
	runs := make([]bool, r.passes)
	none := true
	for q, o := range oneDigit(keys, descending, r.bits, r.passes) {
		runs[q] = !o
		none = none && o
	}
	runs[0] = runs[0] || none
	checkRoleWords(t, r.status, runs, name)
}

// skipRun uploads keys (released with tmp) and plans their sort on every
// bit, carrying their positions, on a plan that skips (knob RADIX_SKIP).
func skipRun(t *testing.T, d *Device, tmp *temps, keys *Tensor, name string) (radixRun, *DeviceTensor) {
	t.Helper()
	n, w := keys.Len(), keys.dtype.Size()
	dk := mustUpload(t, d, keys)
	*tmp = append(*tmp, dk)
	r, err := d.newRadixRun("sort", tmp, n, w, 8*w, n)
	require.NoError(t, err, name)
	require.Equal(t, int64(1), host.KnobRadixSkip.Of(r.plan), "%s: the plan's RADIX_SKIP", name)
	return r, dk
}

// checkRoleWords checks the role words at the end of words, one a pass:
// where runs says a pass runs, its place among those that do and their
// number (RADIX_ROLE_RUNS | runs << 16 | at), else 0.
func checkRoleWords(t *testing.T, words *DeviceTensor, runs []bool, name string) {
	t.Helper()
	h, err := words.ToHost()
	require.NoError(t, err, name)
	all := h.Uint64s()
	roles := all[len(all)-len(runs):]
	count := 0
	for _, r := range runs {
		if r {
			count++
		}
	}
	at := 0
	for q, role := range roles {
		if runs[q] {
			require.Equal(t, uint64(1)<<32|uint64(count)<<16|uint64(at), role, "%s: pass %d runs as %d of %d", name, q, at, count)
			at++
		} else {
			require.Zero(t, role, "%s: pass %d skipped", name, q)
		}
	}
}
