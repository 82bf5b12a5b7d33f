package accel

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// primSizes are the lengths the primitives are tested at: 0, 1, 2, powers
// of two and their neighbours, primes, and sizes past a work-group's tile
// and past several histogram chunks.
var primSizes = []int64{0, 1, 2, 3, 7, 63, 64, 65, 255, 256, 257, 1000, 4095, 4096, 4097, 65535, 65536, 65537, 100003, 1<<20 + 3}

var allPrimDTypes = []DType{Int32, Int64, Uint32, Uint64, Float32, Float64}

// fillKeys fills x by pattern: "rand" (full range; floats with NaN, ±0,
// ±inf mixed in), "dups" (few distinct values), "equal", "sorted",
// "reverse", "small" (small integers, exact in every dtype and order).
func fillKeys(rng *rand.Rand, x *Tensor, pattern string) {
	n := x.Len()
	val := func(i int64) float64 {
		switch pattern {
		case "dups":
			return float64(rng.Intn(7) - 3)
		case "equal":
			return 5
		case "sorted":
			return float64(i/3 - n/6)
		case "reverse":
			return float64(n/6 - i/3)
		case "small":
			return float64(rng.Intn(5) - 2)
		}
		return math.NaN() // rand: filled per dtype below
	}
	for i := int64(0); i < n; i++ {
		v := val(i)
		r := pattern == "rand"
		switch x.dtype {
		case Int32:
			if r {
				x.Int32s()[i] = int32(rng.Uint32())
			} else {
				x.Int32s()[i] = int32(v)
			}
		case Int64:
			if r {
				x.Int64s()[i] = int64(rng.Uint64())
			} else {
				x.Int64s()[i] = int64(v)
			}
		case Uint32:
			if r {
				x.Uint32s()[i] = rng.Uint32()
			} else {
				x.Uint32s()[i] = uint32(int32(v)) // negatives wrap to large keys
			}
		case Uint64:
			if r {
				x.Uint64s()[i] = rng.Uint64()
			} else {
				x.Uint64s()[i] = uint64(int64(v))
			}
		case Float32, Float64:
			if r {
				specials := []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1), -math.NaN()}
				if rng.Intn(8) == 0 {
					v = specials[rng.Intn(len(specials))]
				} else {
					v = rng.NormFloat64() * 1e3
				}
			}
			if x.dtype == Float32 {
				x.Float32s()[i] = float32(v)
			} else {
				x.Float64s()[i] = v
			}
		}
	}
}

// sameBits compares element bits exactly, except that any NaN matches any
// NaN: which NaN an addition of NaNs returns is up to the hardware
// (Compare with Bits).
func sameBits(got, want *Tensor) error { return Compare(got, want, Bits) }

func TestCumsumRandom(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(11))
		for _, n := range primSizes {
			for _, dt := range allPrimDTypes {
				if !d.supports(dt) {
					continue
				}
				for _, excl := range []bool{false, true} {
					x, _ := NewTensor(dt, n)
					pattern := "rand"
					if dt == Float32 || dt == Float64 {
						pattern = "small" // exact sums in any order
					}
					fillKeys(rng, x, pattern)
					if pattern == "small" && n%2 == 1 {
						// NaN and infinities too: their sums do not depend on
						// the order either (an exclusive scan computed as
						// inclusive minus x gave NaN after them).
						injectSpecials(rng, x)
					}
					want, err := RefCumsum(x, excl)
					require.NoError(t, err)
					dx := mustUpload(t, d, x)
					got := mustHost(t, must(t)(d.Cumsum(dx, excl)))
					dx.Release()
					require.NoError(t, sameBits(got, want), "n=%d %s exclusive=%v", n, dt, excl)
				}
			}
		}
		// Random floats: within a relative tolerance of the in-order sums.
		x, _ := NewTensor(Float32, 300001)
		for i := range x.Float32s() {
			x.Float32s()[i] = float32(rng.Float64())
		}
		want, err := RefCumsum(x, false)
		require.NoError(t, err)
		dx := mustUpload(t, d, x)
		got := mustHost(t, must(t)(d.Cumsum(dx, false)))
		dx.Release()
		var off []string
		for i, w := range want.Float32s() {
			if g := got.Float32s()[i]; math.Abs(float64(g-w)) > 2e-4*math.Abs(float64(w)) && len(off) < 5 {
				off = append(off, fmt.Sprintf("element %d = %v, want %v", i, g, w))
			}
		}
		require.Empty(t, off, "float32 cumsum beyond a relative 2e-4 of the in-order sums")
	})
}

// injectSpecials sets about one float element in 64 (at least one) to NaN,
// +inf or -inf.
func injectSpecials(rng *rand.Rand, x *Tensor) {
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	for k := int64(0); k < max(1, x.Len()/64); k++ {
		i, v := rng.Int63n(x.Len()), specials[rng.Intn(len(specials))]
		if x.dtype == Float32 {
			x.Float32s()[i] = float32(v)
		} else {
			x.Float64s()[i] = v
		}
	}
}

// compactOn runs Compact on d and compares both outputs with the
// reference's bits.
func compactOn(t *testing.T, d *Device, x, mask *Tensor, name string) {
	t.Helper()
	wo, wi, err := RefCompact(x, mask)
	require.NoError(t, err, name)
	ts, release := uploadAll(t, d, x, mask)
	defer release()
	go1, gi1, err := d.Compact(ts[0], ts[1])
	require.NoError(t, err, name)
	require.NoError(t, sameBits(mustHost(t, go1), wo), "%s: out", name)
	require.NoError(t, sameBits(mustHost(t, gi1), wi), "%s: index", name)
}

func TestCompactRandom(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(12))
		for _, n := range primSizes {
			for _, p := range []float64{0, 0.1, 0.5, 1} {
				for _, dt := range []DType{Int32, Float64} {
					x, _ := NewTensor(dt, n)
					fillKeys(rng, x, "rand")
					mask, _ := NewTensor(Bool, n)
					for i := range mask.Bools() {
						if rng.Float64() < p {
							mask.Bools()[i] = 1
						}
					}
					compactOn(t, d, x, mask, fmt.Sprintf("n=%d p=%v %s", n, p, dt))
				}
			}
		}
	})
}

func TestSortRandom(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		sortRandomOn(t, d, rand.New(rand.NewSource(13)), primSizes, allPrimDTypes, 70000)
	})
}

// sortRandomOn checks SortByKey (keys, permutation, values carried)
// against the reference for every size and dtype given, on random and
// duplicated keys and, up to maxPatterned keys, equal, sorted and reversed
// ones, ascending and descending.
func sortRandomOn(t *testing.T, d *Device, rng *rand.Rand, sizes []int64, dtypes []DType, maxPatterned int64) {
	for _, n := range sizes {
		for _, dt := range dtypes {
			if !d.supports(dt) {
				continue
			}
			for _, pattern := range []string{"rand", "dups", "equal", "sorted", "reverse"} {
				if n > maxPatterned && pattern != "rand" && pattern != "dups" {
					continue
				}
				for _, desc := range []bool{false, true} {
					keys, _ := NewTensor(dt, n)
					fillKeys(rng, keys, pattern)
					checkSortByKey(t, d, rng, keys, desc, fmt.Sprintf("n=%d %s %s descending=%v", n, dt, pattern, desc))
				}
			}
		}
	}
}

// checkSortByKey sorts keys on d with random float32 values carried
// along and checks the sorted keys, the permutation and the values
// against RefSort, bit for bit.
func checkSortByKey(t *testing.T, d *Device, rng *rand.Rand, keys *Tensor, desc bool, name string) {
	t.Helper()
	n := keys.Len()
	ws, wp, err := RefSort(keys, desc)
	require.NoError(t, err, name)
	vals, _ := NewTensor(Float32, n)
	fillKeys(rng, vals, "rand")
	ts, release := uploadAll(t, d, keys, vals)
	gs, gv, gp, err := d.SortByKey(ts[0], ts[1], desc)
	release()
	require.NoError(t, err, name)
	require.NoError(t, sameBits(mustHost(t, gp), wp), "%s: perm", name)
	require.NoError(t, sameBits(mustHost(t, gs), ws), "%s: keys", name)
	hv := mustHost(t, gv)
	wantBits, gotBits := make([]uint32, n), make([]uint32, n)
	for i, p := range wp.Int64s() {
		wantBits[i] = math.Float32bits(vals.Float32s()[p])
		gotBits[i] = math.Float32bits(hv.Float32s()[i])
	}
	requireElems(t, wantBits, gotBits, "%s: values carried (bits)", name)
}

// TestSortTiled runs the GPUs' tiled radix passes (planRadixTiled:
// tiles ranked in work-group scratch) on the CPU drivers: every dtype
// (32-bit keys take the packed passes, 64-bit ones the unpacked), both
// directions, sizes around the tiles, then forced tile shapes (lanes,
// keys per lane, digit bits: one round of 4 or 5, two rounds of 4+4 or
// 4+3) with grids smaller than the tiles (the grid stride), each with the
// count, scan and scatter of a pass and with Onesweep's passes, and
// the bit-reproducible scatter's sort, whose permutation starts from given
// entries.
func TestSortTiled(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		plans(d).radixTiles = true
		defer func() { plans(d).radixTiles, plans(d).launchFn, plans(d).scatterFn = false, nil, nil }()
		rng := rand.New(rand.NewSource(31))
		sortRandomOn(t, d, rng, []int64{0, 1, 2, 7, 1023, 1024, 1025, 4097, 65537}, allPrimDTypes, 5000)
		for _, shape := range []struct {
			local               int
			kpt, bits, spin, ew int64
			groups              [3]int64
		}{{8, 1, 4, 256, 2, [3]int64{3, 1, 1}}, {2, 7, 4, 0, 1, [3]int64{2, 2, 1}}, {16, 3, 5, 256, 2, [3]int64{3, 1, 1}},
			{4, 5, 8, -1, 1, [3]int64{3, 1, 1}}, {32, 2, 7, 256, 2, [3]int64{2, 2, 1}}, {1, 3, 8, 0, 1, [3]int64{5, 1, 1}}} {
			// each shape count-scan-scatter (sweep 0) and Onesweep's
			// passes (sweep 1), half of them with the look-back polling a
			// while, the others giving up at the first tile not there yet
			// (spin 0), which leaves those tiles to the fixup, or at once
			// (-1), which leaves every tile to it (llvmpipe compiles every
			// knob set anew, a second or more each, so not every pair)
			// where the device ranks by subgroup ballots (lavapipe: 8
			// lanes), the shapes whose group is whole subgroups also rank
			// that way (sgs > 0; local 32 with 7-bit digits: fewer lanes
			// than counter words); ew: an entry's scratch words (the
			// planner's is 1, for entries below 2^32)
			// late: the entries loaded after the ballots' ranking (knob
			// RADIX_LATE, the planner's where they rank) and with the keys;
			// counters for one subgroup where the group has more: the
			// subgroup build's own raking rounds, which load them with the
			// keys whatever the knob
			type rank struct{ sgs, late int64 }
			ranks := []rank{{0, 0}}
			if sgs := radixSubgroups(d.caps, shape.bits, shape.local); sgs > 0 {
				ranks = append(ranks, rank{sgs, 1}, rank{sgs, 0})
				if sgs > 1 {
					ranks = append(ranks, rank{1, 1})
				}
			}
			for _, rk := range ranks {
				for _, sweep := range []int64{0, 1} {
					plans(d).launchFn = func(p host.Plan) host.Plan {
						if p.Kernel == "radix" && host.KnobRadixKpt.Of(p) > 0 {
							p.LocalSize = shape.local
							p.Knobs = []host.Knob{host.KnobRadixBits.Set(shape.bits), host.KnobRadixKpt.Set(shape.kpt), host.KnobRadixSgs.Set(rk.sgs),
								host.KnobRadixEw.Set(shape.ew), host.KnobRadixLate.Set(rk.late)}
							if sweep != 0 {
								p.Knobs = append(p.Knobs, host.KnobRadixSweep.Set(sweep), host.KnobRadixSpin.Set(shape.spin))
							}
							p.Groups = shape.groups
						}
						return p
					}
					t.Run(fmt.Sprintf("local=%d kpt=%d bits=%d groups=%v sgs=%d late=%d ew=%d sweep=%d spin=%d", shape.local, shape.kpt, shape.bits, shape.groups, rk.sgs, rk.late, shape.ew, sweep, shape.spin*sweep), func(t *testing.T) {
						sortRandomOn(t, d, rng, []int64{1, 5, 100, 1000}, []DType{Uint32, Int64}, 1000)
					})
				}
			}
		}
		plans(d).launchFn = nil
		plans(d).scatterFn = forceStrategy(d, scatterSorted)
		for _, n := range []int64{1, 1000, 20000} {
			checkSortedScatter(t, d, rng, n, 300, 300, Sum, Mean, Amax)
		}
	})
}

// checkSortedScatter runs the bit-reproducible scatter_reduce (on the path
// the test planner forces) of n random floats into targets targets, at
// indices below limit, with each of reds, against the reference, bit for
// bit.
func checkSortedScatter(t *testing.T, d *Device, rng *rand.Rand, n, limit, targets int64, reds ...Reduction) {
	t.Helper()
	idx, src, base := randInts(rng, int(n), limit), make([]float32, n), make([]float32, targets)
	for i := range src {
		src[i] = rng.Float32()*2 - 1
	}
	for i := range base {
		base[i] = rng.Float32()
	}
	for _, red := range reds {
		name := fmt.Sprintf("sorted scatter n=%d indices below %d %v", n, limit, red)
		hi, _ := FromInt64s([]int64{n}, idx)
		hs, _ := FromFloat32s([]int64{n}, src)
		hb, _ := FromFloat32s([]int64{targets}, base)
		want, err := RefScatterReduce(hb, 0, hi, hs, red, true)
		require.NoError(t, err, name)
		ts, release := uploadAll(t, d, hb, hi, hs)
		got, err := d.ScatterReduceDeterministic(ts[0], 0, ts[1], ts[2], red, true)
		release()
		require.NoError(t, err, name)
		require.NoError(t, sameBits(mustHost(t, got), want), "%s: bits", name)
	}
}

// TestSortNVTricksEmulated runs the GPUs' tiled sort on PoCL as NVIDIA's
// OpenCL runs it: ranked by the warp's votes (device_tricks.h's NV_BALLOT
// and the rest, emulated with warps of one lane, ACCEL_NV_TRICKS=emulate),
// with and without Onesweep's passes, and the raking rounds where the
// knob turns the votes off.
func TestSortNVTricksEmulated(t *testing.T) {
	t.Setenv("ACCEL_NV_TRICKS", "emulate")
	d := ownTestDevice(t, "opencl")
	require.True(t, d.Info().SubgroupBallot, "the emulated NVIDIA device has the warp's votes")
	require.Equal(t, 1, d.Info().SubgroupSize, "the emulated warp is one lane")
	plans(d).radixTiles = true
	rng := rand.New(rand.NewSource(41))
	p := planRadixTiled(d.caps, 1<<20, 4, 1<<20)
	require.Equal(t, int64(p.LocalSize), host.KnobRadixSgs.Of(p), "the planner ranks by warps of one lane: %v", p)
	require.Equal(t, int64(1), host.KnobRadixLate.Of(p), "the planner loads the entries after the votes' ranking: %v", p)
	sortRandomOn(t, d, rng, []int64{0, 1, 7, 1025, 4097, 65537}, allPrimDTypes, 5000)
	for _, c := range []struct{ sgs, sweep, late int64 }{{16, 0, 1}, {16, 1, 1}, {16, 0, 0}, {16, 1, 0}, {8, 1, 1}, {0, 1, 1}} {
		// 16 lanes: the votes, the entries loaded after the ranking or
		// with the keys (8 subgroups' counters: fewer, the raking rounds,
		// which load them with the keys whatever the knob; 0: the knob off)
		plans(d).launchFn = func(p host.Plan) host.Plan {
			if p.Kernel == "radix" && host.KnobRadixKpt.Of(p) > 0 {
				p.LocalSize = 16
				p.Knobs = []host.Knob{host.KnobRadixBits.Set(5), host.KnobRadixKpt.Set(3), host.KnobRadixSgs.Set(c.sgs),
					host.KnobRadixSweep.Set(c.sweep), host.KnobRadixSpin.Set(64), host.KnobRadixLate.Set(c.late)}
				p.Groups = [3]int64{3, 1, 1}
			}
			return p
		}
		t.Run(fmt.Sprintf("sgs=%d sweep=%d late=%d", c.sgs, c.sweep, c.late), func(t *testing.T) {
			sortRandomOn(t, d, rng, []int64{1, 100, 1000}, []DType{Uint32, Int64}, 1000)
		})
	}
}

func TestUniqueRandom(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(14))
		for _, n := range primSizes {
			for _, dt := range []DType{Int32, Int64, Uint32, Uint64} {
				for _, pattern := range []string{"rand", "dups", "equal", "sorted"} {
					if n > 70000 && pattern == "sorted" {
						continue
					}
					name := fmt.Sprintf("n=%d %s %s", n, dt, pattern)
					x, _ := NewTensor(dt, n)
					fillKeys(rng, x, pattern)
					checkUnique(t, d, x, name)
				}
			}
		}
	})
}

// checkUnique compares Unique of x on d with the reference, bit for bit,
// and returns the number of distinct values.
func checkUnique(t *testing.T, d *Device, x *Tensor, name string) int64 {
	t.Helper()
	wv, wi, wc, err := RefUnique(x)
	require.NoError(t, err, name)
	dx := mustUpload(t, d, x)
	gv, gi, gc, err := d.Unique(dx)
	dx.Release()
	require.NoError(t, err, name)
	for _, c := range []struct {
		what      string
		got, want *Tensor
	}{{"values", mustHost(t, gv), wv}, {"inverse", mustHost(t, gi), wi}, {"counts", mustHost(t, gc), wc}} {
		require.NoError(t, sameBits(c.got, c.want), "%s: %s", name, c.what)
	}
	return wv.Len()
}

// TestUniqueHashed runs Unique's hash plan (planUnique: the GPUs' for
// 64-bit keys) at every size on each device with 64-bit atomics: keys
// with few distinct values (the all-ones key, the table's free-slot
// marker, among them), a sixteenth of them distinct (the bench's share),
// all alike; and its way back to the sort where the keys overflow the
// table (all distinct, a table for one key, probes capped at one), each
// checked against the reference, and the plan the report names.
func TestUniqueHashed(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		if !d.caps.Int64Atomics {
			t.Skipf("%s: no 64-bit atomics: Unique sorts", d.caps.ID())
		}
		var force func(n int64) uniquePlan
		plans(d).uniqueFn = func(_ uniquePlan, n int64, _ int) uniquePlan { return force(n) }
		var reports []PlanReport
		d.OnPlan(func(r PlanReport) {
			if r.Family == "unique" {
				reports = append(reports, r)
			}
		})
		defer func() {
			plans(d).uniqueFn = nil
			d.OnPlan(nil)
		}()
		rng := rand.New(rand.NewSource(41))
		hashed, overflowed := 0, 0
		defer func() {
			assert.Greater(t, hashed, 100, "calls the table took")
			assert.Greater(t, overflowed, 50, "calls that overflowed it")
		}()
		for _, n := range primSizes {
			for _, dt := range []DType{Int64, Uint64} {
				for _, c := range []struct {
					pattern string
					plan    func(n int64) uniquePlan
				}{
					{"dups", hashUniquePlan},
					{"equal", hashUniquePlan},
					{"some", hashUniquePlan},
					{"rand", hashUniquePlan},
					{"rand", func(n int64) uniquePlan { p := hashUniquePlan(n); p.Capacity = 1; return p }},
					{"some", func(n int64) uniquePlan { p := hashUniquePlan(n); p.ProbeCap = 1; return p }},
					{"some", func(n int64) uniquePlan { p := hashUniquePlan(n); p.Capacity = n/16 + 1; return p }},
				} {
					up := c.plan(n)
					if n > 70000 && (up.Capacity == 1 || up.ProbeCap == 1) {
						continue // the way back at a size takes the bench's sort
					}
					name := fmt.Sprintf("n=%d %s %s %s", n, dt, c.pattern, c.plan(n))
					x, _ := NewTensor(dt, n)
					if c.pattern == "some" {
						// n/16+1 distinct values, the all-ones word and 0 among them
						vals := []uint64{^uint64(0), 0}
						for len(vals) < int(n/16+1) {
							vals = append(vals, rng.Uint64())
						}
						for i := range n {
							v := vals[rng.Intn(len(vals))]
							if dt == Int64 {
								x.Int64s()[i] = int64(v)
							} else {
								x.Uint64s()[i] = v
							}
						}
					} else {
						fillKeys(rng, x, c.pattern)
					}
					force, reports = c.plan, nil
					u := checkUnique(t, d, x, name)
					if n == 0 {
						continue
					}
					require.Len(t, reports, 1, name)
					p := reports[0].Plan
					require.True(t, strings.HasPrefix(p, "hash:"), "%s: plan %s", name, p)
					assert.Positive(t, reports[0].ModelBytes, name)
					// more distinct keys than slots overflow; as many as the
					// capacity fit (a false give-up, a run of 128 held slots
					// at load 1/2, is too rare to meet with these seeds)
					over := strings.Contains(p, "overflowed")
					if u > hashSlots(up.Capacity)+1 { // the all-ones key has a slot of its own
						assert.True(t, over, "%s: %d distinct keys: plan %s", name, u, p)
					}
					if u == 1 || u <= up.Capacity && up.ProbeCap >= uniqueProbeCap {
						assert.False(t, over, "%s: %d distinct keys: plan %s", name, u, p)
					}
					if over {
						overflowed++
					} else {
						hashed++
					}
				}
			}
		}
	})
}

func TestSegmentReduceRandom(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		testSegmentReduce(t, d, []DType{Int32, Int64, Float32, Float64}, []Reduction{Sum, Amin, Amax})
	})
}

// testSegmentReduce checks segment_reduce of dtypes by reds on d against
// the reference's bits, on random values (NaNs, infinities and signed
// zeros among the floats) and random segment lengths.
func testSegmentReduce(t *testing.T, d *Device, dtypes []DType, reds []Reduction) {
	rng := rand.New(rand.NewSource(15))
	for _, n := range primSizes {
		for _, dt := range dtypes {
			if !d.supports(dt) {
				continue
			}
			for _, red := range reds {
				for _, segs := range []int64{1, 5, n/3 + 1, 2*n + 2} {
					name := fmt.Sprintf("n=%d %s %s segments=%d", n, dt, red, segs)
					vals, _ := NewTensor(dt, n)
					fillKeys(rng, vals, "rand")
					ids, _ := NewTensor(Int64, n)
					for i := range ids.Int64s() {
						ids.Int64s()[i] = rng.Int63n(segs)
					}
					sortInt64s(t, ids.Int64s())
					want, err := RefSegmentReduce(vals, ids, red, segs)
					require.NoError(t, err, name)
					ts, release := uploadAll(t, d, vals, ids)
					got := mustHost(t, must(t)(d.SegmentReduce(ts[0], ts[1], red, segs)))
					release()
					// In-order folds: the same bits as the reference.
					require.NoError(t, sameBits(got, want), name)
				}
			}
		}
	}
}

// sortInt64s sorts segment ids for a test's input (plain values: no
// oracle involved, so the standard library's sort).
func sortInt64s(t *testing.T, v []int64) {
	t.Helper()
	slices.Sort(v)
}

func TestPrimErrors(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		up := func(x *Tensor) *DeviceTensor {
			dx := mustUpload(t, d, x)
			t.Cleanup(dx.Release)
			return dx
		}
		f16 := up(hostZeros(Bool, 4))
		_, err := d.Cumsum(f16, false)
		assert.ErrorIs(t, err, ErrUnsupported, "cumsum of bool")
		x := up(hostZeros(Float32, 4))
		_, _, _, err = d.Unique(x)
		assert.ErrorIs(t, err, ErrUnsupported, "unique of float32")
		_, _, err = d.Compact(x, up(hostZeros(Bool, 5)))
		assert.ErrorIs(t, err, ErrInvalidArgument, "compact with a mask of another shape")
		_, _, err = d.Compact(x, x)
		assert.ErrorIs(t, err, ErrInvalidArgument, "compact with a float mask")
		var ae *ArgError
		ids := tensorOf(Int64, []int64{0, 0, 2, 1})
		_, err = d.SegmentReduce(x, up(ids), Sum, 3)
		if assert.ErrorAs(t, err, &ae, "unsorted ids") {
			assert.Equal(t, "segment_ids[3]", ae.Arg, "unsorted ids: %v", err)
		}
		ids = tensorOf(Int64, []int64{0, 0, 1, 3})
		_, err = d.SegmentReduce(x, up(ids), Sum, 3)
		if assert.ErrorAs(t, err, &ae, "id out of range") {
			assert.Equal(t, "segment_ids[3]", ae.Arg, "id out of range: %v", err)
		}
		_, err = d.SegmentReduce(x, up(ids), Prod, 4)
		assert.ErrorIs(t, err, ErrInvalidArgument, "reduce prod")
	})
}

// TestScanPaths forces every path of the scan kernel (scan_body.h) on each
// backend where it can run, with small tiles so that groups own several
// tiles and rows end mid-tile: the scratch path (local 8 and 64), and on
// Vulkan with subgroup arithmetic the subgroup path with several subgroups
// per group (SCAN_SG 1) and, where the subgroup size is fixed, one
// (SCAN_SG 2). Every dtype, inclusive and exclusive, and the flag inputs of
// a compaction.
func TestScanPaths(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		defer func() { plans(d).launchFn = nil }()
		type path struct {
			name         string
			local, items int64
			sg           int64
		}
		paths := []path{{"scratch local 8", 8, 3, 0}, {"scratch local 64", 64, 2, 0}}
		if d.caps.Backend == host.Vulkan && d.caps.SubgroupArith {
			sgs := int64(d.caps.SubgroupSize)
			paths = append(paths, path{"subgroups, 8 per group", 8 * sgs, 3, 1}, path{"subgroups, 1 per group", sgs, 5, 1})
			if d.caps.SubgroupFixed {
				paths = append(paths, path{"one subgroup per group, no barriers", sgs, 5, 2},
					// runs of 4 units a lane (SG_RB), the last batch of a
					// segment shorter where ITEMS is not a multiple of 4
					path{"one subgroup per group, runs a lane, items 5", sgs, 5, 3},
					path{"one subgroup per group, runs a lane, items 19", sgs, 19, 3})
			}
		}
		chain := d.caps.Backend == host.OpenCL && d.caps.Type == host.TypeCPU
		if chain {
			// the chained scan (CPU OpenCL drivers: see scan_body.h):
			// tiles of 48 and 100 elements (vector runs, heads before the
			// 64-byte boundary with STREAM, tails), plain and streaming
			// stores, and with no polls, so that tiles whose predecessor
			// has not published its sum yet are left to the fixup
			paths = append(paths, path{"chained, tiles of 48", 1, 48, -1}, path{"chained, tiles of 100, streaming", 1, 100, -2},
				path{"chained, tiles of 32, no polls (the fixup scans most tiles)", 1, 32, -3})
		}
		// the GPUs' chained scan (CHAIN = 2): work-groups on tiles of
		// local x items in scratch, with polls and without (tiles whose
		// predecessor has not published its sum go to the fixup)
		paths = append(paths, path{"gpu chained, local 8, items 3", 8, 3, -4},
			path{"gpu chained, local 64, items 2, no polls", 64, 2, -5})
		rng := rand.New(rand.NewSource(13))
		sizes := []int64{1, 2, 3, 17, 255, 256, 257, 1000, 4097, 100003}
		for _, pth := range paths {
			groupCounts := []int64{1, 3, 64}
			switch pth.sg {
			case -4:
				groupCounts = []int64{20000} // a tile per group (up to 160K elements), as the GPU plans launch
			case -5:
				groupCounts = []int64{3} // grid-stride over the tiles; without polls the fixup scans most
			case -1, -2, -3:
				groupCounts = []int64{3} // more work-items than cores; chained tiles go by ticket anyway
			}
			for _, groups := range groupCounts {
				plans(d).launchFn = func(p host.Plan) host.Plan {
					if p.Kernel != "scan" {
						return p
					}
					if pth.sg <= -4 {
						p.Knobs = []host.Knob{host.KnobItems.Set(pth.items), host.KnobFlat.Set(0), host.KnobScanSg.Set(0),
							host.KnobChain.Set(2), host.KnobSpin.Set(16384 * b2i(pth.sg == -4))}
						p.LocalSize = int(pth.local)
						p.TileElems = pth.local * pth.items
						p.Groups = [3]int64{groups, 1, 1}
						return p
					}
					if pth.sg < 0 {
						spin := int64(16384)
						if pth.sg == -3 {
							spin = 0
						}
						p.Knobs = []host.Knob{host.KnobItems.Set(pth.items), host.KnobFlat.Set(1), host.KnobScanSg.Set(0),
							host.KnobChain.Set(1), host.KnobSpin.Set(spin), host.KnobStream.Set(b2i(pth.sg == -2))}
						p.LocalSize = 1
						p.Groups = [3]int64{groups, 1, 1}
						return p
					}
					sg := pth.sg
					if host.KnobScanSg.Of(p) == 0 {
						sg = 0 // this dtype has no subgroup variant here
					}
					p.LocalSize = int(pth.local)
					p.Knobs = []host.Knob{host.KnobItems.Set(pth.items), host.KnobFlat.Set(0),
						host.KnobScanSg.Set(sg)}
					p.Groups = [3]int64{groups, 1, 1}
					return p
				}
				name := fmt.Sprintf("%s, %d groups", pth.name, groups)
				for _, n := range sizes {
					for _, dt := range allPrimDTypes {
						if !d.supports(dt) {
							continue
						}
						x, _ := NewTensor(dt, n)
						fillKeys(rng, x, "small")
						for _, excl := range []bool{false, true} {
							want, err := RefCumsum(x, excl)
							require.NoError(t, err)
							dx := mustUpload(t, d, x)
							got := mustHost(t, must(t)(d.Cumsum(dx, excl)))
							dx.Release()
							require.NoError(t, sameBits(got, want), "%s: cumsum n=%d %s exclusive=%v", name, n, dt, excl)
						}
					}
					x, _ := NewTensor(Int32, n)
					fillKeys(rng, x, "rand")
					mask, _ := NewTensor(Bool, n)
					for i := range mask.Bools() {
						mask.Bools()[i] = uint8(rng.Intn(2))
					}
					compactOn(t, d, x, mask, fmt.Sprintf("%s: compact n=%d", name, n))
				}
			}
		}
	})
}

// TestVulkanSubgroupControl: where the device lets a pipeline require its
// subgroup size (host.Caps.SubgroupControl), the builds with subgroup
// operations require it, with whole subgroups where the group is whole
// subgroups: both pipeline shapes are created without a validation
// message (lavapipe: subgroups of 8; every SG build of the sort and scan
// tests takes the first).
func TestVulkanSubgroupControl(t *testing.T) {
	d := ownTestDevice(t, "vulkan")
	if !d.caps.SubgroupControl {
		t.Skipf("%s: no subgroup size control (VK_EXT_subgroup_size_control)", d.caps.Name)
	}
	sg := d.caps.SubgroupSize
	require.Positive(t, sg)
	for _, local := range []int{32 * sg, 3*sg/2 + 1} { // whole subgroups, and not
		p := planRadixTiled(d.caps, 1<<20, 4, 1<<20)
		p.LocalSize = local
		for _, e := range []string{"sweep", "tscatter"} {
			spec := host.KernelSpec{Entry: kernels.Radix.Entry(e), Variant: string(kernels.RadixK32) + "s"}
			_, err := d.h.Kernel(spec, p)
			require.NoError(t, err, "%s with %d lanes (subgroups of %d)", spec, local, sg)
		}
	}
}
