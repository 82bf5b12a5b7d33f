package accel

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
)

// waits runs f and returns the host waits it made and its error.
func waits(d *Device, f func() error) (int64, error) {
	s0 := d.Stats()
	err := f()
	return d.Stats().Sub(s0).Waits, err
}

func randInts(rng *rand.Rand, n int, limit int64) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = rng.Int63n(limit)
	}
	return v
}

func upload[T any](t *testing.T, d *Device, dt DType, shape []int64, v []T) *DeviceTensor {
	h, err := fromSlice(dt, shape, v)
	require.NoError(t, err)
	x, err := d.Upload(h)
	require.NoError(t, err)
	t.Cleanup(x.Release)
	return x
}

// TestSyncBounds checks the host round trips of ops: ops that read nothing
// back never wait (the ToHost of their result waits once), ops that
// validate indices on the device wait once, at their end, whatever their
// strategy, and a radix sort of any size waits at most once more than the
// host reads it needs (none for Sort, one for Unique's count).
func TestSyncBounds(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(12))
		require.NoError(t, d.Sync())
		// noRead: the op itself waits 0 times, its ToHost once.
		noRead := func(name string, op func() (*DeviceTensor, error)) {
			var out *DeviceTensor
			w, err := waits(d, func() error {
				var err error
				out, err = op()
				return err
			})
			require.NoError(t, err, name)
			assert.Equal(t, int64(0), w, "%s waits for the device", name)
			w, err = waits(d, func() error { _, err := out.ToHost(); return err })
			require.NoError(t, err, name)
			assert.Equal(t, int64(1), w, "%s: ToHost waits once", name)
			out.Release()
		}
		noRead("tril_indices", func() (*DeviceTensor, error) { return d.TrilIndices(300, 200, -3, Int64) })
		in := upload(t, d, Float32, []int64{64, 48}, make([]float32, 64*48))
		diag := upload(t, d, Float32, []int64{48}, make([]float32, 48))
		noRead("diagonal_scatter", func() (*DeviceTensor, error) { return d.DiagonalScatter(in, diag, 0, 0, 1) })
		x := upload(t, d, Int32, []int64{100003}, make([]int32, 100003))
		noRead("cumsum", func() (*DeviceTensor, error) { return d.Cumsum(x, true) })
		// all distinct (a hash plan's table overflows), then 1000 values
		// (it takes them)
		for i, n := range []int{1, 1000, 70001, 1 << 20, 70001} {
			limit := int64(1 << 62)
			if i == 4 {
				limit = 1000
			}
			keys := upload(t, d, Int64, []int64{int64(n)}, randInts(rng, n, limit))
			noRead(fmt.Sprintf("sort of %d", n), func() (*DeviceTensor, error) {
				s, p, err := d.Sort(keys, false)
				if err == nil {
					s.Release()
				}
				return p, err
			})
			// Unique reads its count: one wait in the op (two where its
			// hash table overflows and it sorts; under a loop limit the
			// table's probes read their flags per launch), and its outputs
			// are ready once the final ToHost has waited once more.
			var v, inv, c *DeviceTensor
			var plan string
			d.OnPlan(func(r PlanReport) {
				if r.Family == "unique" {
					plan = r.Plan
				}
			})
			w, err := waits(d, func() error {
				var err error
				v, inv, c, err = d.Unique(keys)
				return err
			})
			d.OnPlan(nil)
			require.NoError(t, err)
			switch {
			case strings.HasPrefix(plan, "hash:") && d.caps.LoopLimit > 0:
				assert.GreaterOrEqual(t, w, int64(1), "unique of %d: %s", n, plan)
			case strings.Contains(plan, "overflowed"):
				assert.Equal(t, int64(2), w, "unique of %d waits for its table, then for its count: %s", n, plan)
			default:
				assert.Equal(t, int64(1), w, "unique of %d waits once, for its count: %s", n, plan)
			}
			w, err = waits(d, func() error { _, err := c.ToHost(); return err })
			require.NoError(t, err)
			assert.LessOrEqual(t, w, int64(1), "unique of %d: at most one wait more than its one read", n)
			v.Release()
			inv.Release()
			c.Release()
		}

		// Ops that validate indices wait once, for the flag, and their
		// result needs no further wait.
		const targets, positions = 1000, 20000
		idx := upload(t, d, Int64, []int64{positions}, randInts(rng, positions, targets))
		src := upload(t, d, Float32, []int64{positions}, make([]float32, positions))
		base := upload(t, d, Float32, []int64{targets}, make([]float32, targets))
		// (the GPUs' counted partition of the bit-reproducible scatter
		// waits twice: for the count's flag, then for the validation's;
		// the slotted one, which GPU plans take first, once, for its flag
		// at the end)
		for _, strategy := range append(slices.Clone(scatterPaths), partitioned, slotted) {
			for _, red := range []Reduction{Sum, Mean} {
				plans(d).scatterFn = forceStrategy(d, strategy)
				if strategy == partitioned || strategy == slotted {
					forceScatter(d, strategy) // the counted partition, the slotted one
				}
				var plan string
				d.OnPlan(func(r PlanReport) {
					if r.Family == "scatter" {
						plan = r.Plan
					}
				})
				var out *DeviceTensor
				w, err := waits(d, func() error {
					var err error
					out, err = d.ScatterReduce(base, 0, idx, src, red, false)
					return err
				})
				plans(d).scatterFn = nil
				d.OnPlan(nil)
				if errors.Is(err, ErrUnsupported) {
					continue // a strategy the device cannot run (loop limits)
				}
				require.NoError(t, err, "%s %v", strategy, red)
				switch strategy {
				case slotted:
					require.Contains(t, plan, "placed with no count first", "the slotted partition")
				case partitioned:
					require.Contains(t, plan, "grouped in one pass", "the counted partition")
					require.NotContains(t, plan, "placed with no count first", "the counted partition")
				}
				switch {
				case strings.Contains(plan, "placed with no count first"):
					assert.Equal(t, int64(1), w, "scatter_reduce %v (%s), slotted, waits once: %s", red, strategy, plan)
				case strings.Contains(plan, "grouped in one pass"):
					assert.Equal(t, int64(2), w, "scatter_reduce %v (%s) waits twice: %s", red, strategy, plan)
				default:
					assert.Equal(t, int64(1), w, "scatter_reduce %v (%s) waits once: %s", red, strategy, plan)
				}
				w, err = waits(d, func() error { _, err := out.ToHost(); return err })
				require.NoError(t, err)
				assert.Equal(t, int64(0), w, "scatter_reduce %v (%s): its result is ready", red, strategy)
				out.Release()
			}
		}
		// the few-targets pass (16 targets, with the input)
		idx16 := upload(t, d, Int64, []int64{positions}, randInts(rng, positions, 16))
		base16 := upload(t, d, Float32, []int64{16}, make([]float32, 16))
		plans(d).scatterFn = forceStrategy(d, scatterFew)
		w, err := waits(d, func() error {
			out, err := d.ScatterReduce(base16, 0, idx16, src, Sum, true)
			if err == nil {
				out.Release()
			}
			return err
		})
		plans(d).scatterFn = nil
		if !errors.Is(err, ErrUnsupported) {
			require.NoError(t, err, "few")
			assert.Equal(t, int64(1), w, "scatter_reduce into 16 targets (few) waits once")
		}
		w, err = waits(d, func() error {
			s, err := d.SegmentReduce(src, upload(t, d, Int64, []int64{positions}, make([]int64, positions)), Sum, 3)
			if err == nil {
				s.Release()
			}
			return err
		})
		require.NoError(t, err)
		if d.caps.LoopLimit == 0 {
			assert.Equal(t, int64(1), w, "segment_reduce waits once")
		}

		// get_indice_pairs waits once for the rows' check (submanifold),
		// or for the check and the candidates' count, then the outputs'
		// count (regular, inverse), or once for the check and the dense
		// grid's counts (a regular conv on the GPUs' candidates, an
		// inverse whose forward's target space is small); its result
		// needs no further wait.
		sites := mustUpload(t, d, ipSyncSites())
		defer sites.Release()
		for _, c := range ipSyncCases {
			var r *IndicePairs
			w, err := waits(d, func() error {
				var err error
				r, err = d.IndicePairs(sites, c.p)
				return err
			})
			require.NoError(t, err, c.name)
			want := c.waits
			g, err := newConvGeom("get_indice_pairs", Int32, []int64{500, 4}, c.p)
			require.NoError(t, err)
			if p := planIndice(d.caps, g, SplitAuto, shapeAuto, false); p.Grid > 0 && p.Path != pathConvRows {
				want = 1 // the validation flag read with the dense grid's totals
			}
			assert.Equal(t, want, w, "get_indice_pairs %s waits", c.name)
			w, err = waits(d, func() error { _, err := r.Pairs.ToHost(); return err })
			require.NoError(t, err)
			assert.LessOrEqual(t, w, int64(1), "get_indice_pairs %s: its result is ready", c.name)
			r.Release()
		}
		sparseSyncBounds(t, d)
	})
}

// forceStrategy returns a scatter hook that picks strategy where the
// device's planner could (the CPU passes need a driver without a loop
// limit); elsewhere it keeps the planner's choice.
func forceStrategy(d *Device, strategy scatterPath) func(scatterPlan, scatterShape) scatterPlan {
	return func(sp scatterPlan, s scatterShape) scatterPlan {
		cpu := host.Caps{Type: host.TypeCPU, ComputeUnits: 2, GlobalMemBytes: 1 << 34, MaxAllocBytes: 1 << 33,
			MaxWorkGroupCount: d.caps.MaxWorkGroupCount}
		switch strategy {
		case scatterOwned:
			s.det = true
			return chooseScatter(cpu, s)
		case scatterPrivate, scatterFew:
			s.det = false
			if p := chooseScatter(cpu, s); p.Path == strategy {
				return p
			}
			return sp
		case scatterBucket:
			if d.caps.Backend != host.OpenCL {
				return sp // planned on CPU OpenCL only (forceScatter)
			}
			if p, ok := planBucket(cpu, s, 2, 1<<33, true); ok {
				return p
			}
			return sp
		}
		return scatterPlan{Path: strategy, Reason: "test"}
	}
}

// TestReleaseWhileQueued releases a tensor while queued work still reads
// it, then reuses its buffer at once (the pool hands the same driver
// buffer out again) and overwrites it: the queued work must still see the
// old contents. Then it trims the pool while work is queued, which frees
// driver buffers the queue still uses: they must outlive that work (the
// validation layer reports a buffer destroyed in use).
func TestReleaseWhileQueued(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		const n = 1 << 16
		ones := make([]int64, n)
		twos := make([]int64, n)
		for i := range ones {
			ones[i], twos[i] = 1, 2
		}
		h, err := FromInt64s([]int64{n}, ones)
		require.NoError(t, err)
		for round := 0; round < 3; round++ {
			x, err := d.Upload(h)
			require.NoError(t, err)
			sum, err := d.Cumsum(x, false)
			require.NoError(t, err)
			x.Release() // queued work still reads it
			h2, _ := FromInt64s([]int64{n}, twos)
			y, err := d.Upload(h2) // most likely x's buffer again
			require.NoError(t, err)
			if round == 2 {
				d.TrimPool()
			}
			got, err := sum.ToHost()
			require.NoError(t, err)
			assert.Equal(t, int64(n), got.Int64s()[n-1], "round %d: the cumsum saw the overwrite", round)
			yh, err := y.ToHost()
			require.NoError(t, err)
			assert.Equal(t, twos, yh.Int64s())
			sum.Release()
			y.Release()
		}
		require.NoError(t, d.Sync())
	})
}

// memoryWayBack is what a scatter's plan report says where the slotted
// partition found no memory for its slots and counted first.
const memoryWayBack = "no memory for the slots: counted first"

// faultCase is one op, run on inputs made beforehand, releasing its
// outputs.
type faultCase struct {
	name string // the op's name, which its errors must mention
	run  func() error
}

// TestFaultInjection makes every device allocation of every op fail in
// turn (the pool's hook): each failure must come back as an error wrapping
// ErrOutOfMemory that names the op, without a panic, with the device still
// working, and with the pool's live bytes back where they were. The one
// allocation an op may do without is the slotted partition's slots (up to
// three times the counted partition's words): where it fails the op
// counts first and succeeds, as its plan report says (memoryWayBack).
func TestFaultInjection(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		cases := faultCases(t, d)
		wayBack := 0 // faults the slotted partition took its way back from
		defer func() {
			assert.Positive(t, wayBack, "no fault took the slots' way back (the slotted partition's case)")
		}()
		for _, c := range cases {
			require.NoError(t, d.Sync())
			base := d.PoolStats().BytesInUse
			count := 0
			d.pool.SetAllocHook(func(int64) error { count++; return nil })
			err := c.run()
			d.pool.SetAllocHook(nil)
			require.NoError(t, err, "%s without faults", c.name)
			require.NoError(t, d.Sync())
			require.Equal(t, base, d.PoolStats().BytesInUse, "%s leaks pooled memory", c.name)
			require.Positive(t, count, "%s allocates nothing?", c.name)
			for k := 0; k < count; k++ {
				i := 0
				d.pool.SetAllocHook(func(int64) error {
					i++
					if i == k+1 {
						return errors.New("injected fault")
					}
					return nil
				})
				var err error
				var reports []string
				d.OnPlan(func(r PlanReport) { reports = append(reports, r.Plan) })
				func() {
					defer func() {
						if p := recover(); p != nil {
							err = fmt.Errorf("panic: %v", p)
						}
					}()
					err = c.run()
				}()
				d.OnPlan(nil)
				d.pool.SetAllocHook(nil)
				if err == nil && slices.ContainsFunc(reports, func(r string) bool { return strings.Contains(r, memoryWayBack) }) {
					wayBack++
					require.NoError(t, d.Sync(), "%s: allocation %d: the device still works", c.name, k+1)
					require.Equal(t, base, d.PoolStats().BytesInUse, "%s: allocation %d of %d leaks pooled memory", c.name, k+1, count)
					continue
				}
				require.Error(t, err, "%s: allocation %d of %d failed, yet the op succeeded (plans: %q)", c.name, k+1, count, reports)
				require.ErrorIs(t, err, ErrOutOfMemory, "%s: allocation %d of %d", c.name, k+1, count)
				require.NotContains(t, err.Error(), "panic:", c.name)
				require.Contains(t, err.Error(), c.name, "the error names the op")
				require.NoError(t, d.Sync(), "%s: allocation %d: the device still works", c.name, k+1)
				require.Equal(t, base, d.PoolStats().BytesInUse, "%s: allocation %d of %d leaks pooled memory", c.name, k+1, count)
			}
			require.NoError(t, c.run(), "%s after the faults", c.name)
			t.Logf("%s: each of %d allocations failed in turn", c.name, count)
		}
	})
}

func faultCases(t *testing.T, d *Device) []faultCase {
	rng := rand.New(rand.NewSource(3))
	release := func(ts ...*DeviceTensor) {
		for _, x := range ts {
			x.Release()
		}
	}
	one := func(x *DeviceTensor, err error) error {
		if err == nil {
			x.Release()
		}
		return err
	}
	two := func(x, y *DeviceTensor, err error) error {
		if err == nil {
			release(x, y)
		}
		return err
	}
	const targets, positions = 300, 2000
	f32 := make([]float32, positions)
	for i := range f32 {
		f32[i] = rng.Float32()
	}
	in := upload(t, d, Float32, []int64{targets}, f32[:targets])
	src := upload(t, d, Float32, []int64{positions}, f32)
	idx := upload(t, d, Int64, []int64{positions}, randInts(rng, positions, targets))
	grad := upload(t, d, Float32, []int64{targets}, f32[:targets])
	keys := upload(t, d, Int64, []int64{positions}, randInts(rng, positions, 50))
	sortedIDs := upload(t, d, Int64, []int64{positions}, make([]int64, positions))
	mask := upload(t, d, Bool, []int64{positions}, func() []byte {
		m := make([]byte, positions)
		for i := range m {
			m[i] = byte(i % 3 % 2)
		}
		return m
	}())
	full := upload(t, d, Float32, []int64{40, 50}, f32[:2000])
	sites := mustUpload(t, d, ipSyncSites())
	t.Cleanup(sites.Release)
	diag := upload(t, d, Float32, []int64{40}, f32[:40])
	cases := []faultCase{
		{"upload", func() error { return one(d.Upload(mustTensor(FromFloat32s([]int64{targets}, f32[:targets])))) }},
		{"zeros", func() error { return one(d.Zeros(Int32, 7, 9)) }},
		{"tril_indices", func() error { return one(d.TrilIndices(90, 80, 3, Int64)) }},
		{"triu_indices", func() error { return one(d.TriuIndices(90, 80, -3, Int32)) }},
		{"diagonal_scatter", func() error { return one(d.DiagonalScatter(full, diag, 0, 0, 1)) }},
		{"diagonal_scatter_backward", func() error { return two(d.DiagonalScatterBackward(full, 0, 0, 1)) }},
		{"scatter", func() error { return one(d.Scatter(in, 0, idx, src)) }},
		{"scatter_reduce", func() error { return one(d.ScatterReduce(in, 0, idx, src, Mean, false)) }},
		{"scatter_reduce", func() error { return one(d.ScatterReduceDeterministic(in, 0, idx, src, Amax, true)) }},
		{"scatter_reduce_backward", func() error {
			o, gi, gs, err := d.ScatterReduceBackward(in, 0, idx, src, Prod, true, grad)
			if err == nil {
				release(o, gi, gs)
			}
			return err
		}},
		{"put_along_axis", func() error { return one(d.PutAlongAxis(in, idx, src, 0, Sum, true)) }},
		{"take_along_axis", func() error { return one(d.TakeAlongAxis(in, idx, 0)) }},
		{"cumsum", func() error { return one(d.Cumsum(src, false)) }},
		{"compact", func() error { return two(d.Compact(src, mask)) }},
		{"sort", func() error { return two(d.Sort(src, true)) }},
		{"sort_by_key", func() error {
			a, b, c, err := d.SortByKey(keys, src, false)
			if err == nil {
				release(a, b, c)
			}
			return err
		}},
		{"get_indice_pairs", func() error { return ipFault(d, sites, ipSyncCases[0].p) }},
		{"get_indice_pairs", func() error { return ipFault(d, sites, ipSyncCases[1].p) }},
		{"get_indice_pairs", func() error { return ipFault(d, sites, ipSyncCases[2].p) }},
		{"unique", func() error {
			a, b, c, err := d.Unique(keys)
			if err == nil {
				release(a, b, c)
			}
			return err
		}},
		{"segment_reduce", func() error { return one(d.SegmentReduce(src, sortedIDs, Amin, 4)) }},
	}
	// every scatter strategy the device can run
	for _, strategy := range append(scatterPaths, scatterBucket) {
		strategy := strategy
		cases = append(cases, faultCase{"scatter_reduce", func() error {
			plans(d).scatterFn = forceStrategy(d, strategy)
			defer func() { plans(d).scatterFn = nil }()
			return one(d.ScatterReduce(in, 0, idx, src, Sum, false))
		}})
	}
	// the GPUs' partitions of the bit-reproducible scatter, counted and
	// slotted (whose slots' allocation has a way back: memoryWayBack)
	for _, strategy := range []scatterPath{partitioned, slotted} {
		cases = append(cases, faultCase{"scatter_reduce", func() error {
			defer forceScatter(d, strategy)()
			return one(d.ScatterReduceDeterministic(in, 0, idx, src, Sum, true))
		}})
	}
	// the few-targets pass (into 16 targets, with the input)
	few := upload(t, d, Int64, []int64{positions}, randInts(rng, positions, 16))
	in16 := upload(t, d, Float32, []int64{16}, f32[:16])
	cases = append(cases, faultCase{"scatter_reduce", func() error {
		plans(d).scatterFn = forceStrategy(d, scatterFew)
		defer func() { plans(d).scatterFn = nil }()
		return one(d.ScatterReduce(in16, 0, few, src, Sum, true)) // few takes sums and products
	}})
	cases = append(cases, sparseFaultCases(t, d)...)
	if d.caps.Int64Atomics {
		cases = append(cases,
			faultCase{"hash_table", func() error {
				tab, err := d.NewHashTable(positions)
				if err != nil {
					return err
				}
				defer tab.Release()
				ids, _, err := tab.InsertDense(keys)
				if err != nil {
					return err
				}
				ids.Release()
				return one(tab.Lookup(keys))
			}})
	}
	return cases
}

func mustTensor(t *Tensor, err error) *Tensor {
	if err != nil {
		panic(err)
	}
	return t
}

// TestConcurrentMixedOps runs ops that wait in different places (the
// scatter's flag at its end, Unique's count in its middle, Sort and Cumsum
// never) from several goroutines at once on one device, releasing and
// reusing buffers as they go, and checks every result against the
// reference. Under -race it also checks the queue's bookkeeping.
func TestConcurrentMixedOps(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(21))
		const n, targets = 5000, 97
		keys := randInts(rng, n, 400)
		idx := randInts(rng, n, targets)
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = rng.Int63n(1000) - 500
		}
		hk, _ := FromInt64s([]int64{n}, keys)
		hi, _ := FromInt64s([]int64{n}, idx)
		hv, _ := FromInt64s([]int64{n}, vals)
		hb, _ := NewTensor(Int64, targets)
		wantScatter, err := RefScatterReduce(hb, 0, hi, hv, Amax, false)
		require.NoError(t, err)
		wantSort, wantPerm, err := RefSort(hk, true)
		require.NoError(t, err)
		wantUniq, _, wantCounts, err := RefUnique(hk)
		require.NoError(t, err)
		wantSum, err := RefCumsum(hv, true)
		require.NoError(t, err)
		dk, di, dv, db := upload(t, d, Int64, []int64{n}, keys), upload(t, d, Int64, []int64{n}, idx),
			upload(t, d, Int64, []int64{n}, vals), upload(t, d, Int64, []int64{targets}, make([]int64, targets))
		host := func(x *DeviceTensor) []int64 {
			h, err := x.ToHost()
			if err != nil {
				return nil
			}
			x.Release()
			return h.Int64s()
		}
		const workers, rounds = 4, 6
		errs := make(chan error, workers*rounds)
		done := make(chan struct{})
		for w := 0; w < workers; w++ {
			go func(w int) {
				defer func() { done <- struct{}{} }()
				for r := 0; r < rounds; r++ {
					var err error
					switch (w + r) % 4 {
					case 0:
						var out *DeviceTensor
						if out, err = d.ScatterReduce(db, 0, di, dv, Amax, false); err == nil &&
							!assert.Equal(t, wantScatter.Int64s(), host(out), "worker %d round %d: scatter_reduce", w, r) {
							err = errors.New("scatter_reduce differs")
						}
					case 1:
						var v, inv, c *DeviceTensor
						if v, inv, c, err = d.Unique(dk); err == nil {
							inv.Release()
							if !assert.Equal(t, wantUniq.Int64s(), host(v), "worker %d round %d: unique", w, r) ||
								!assert.Equal(t, wantCounts.Int64s(), host(c), "worker %d round %d: counts", w, r) {
								err = errors.New("unique differs")
							}
						}
					case 2:
						var s, p *DeviceTensor
						if s, p, err = d.Sort(dk, true); err == nil &&
							(!assert.Equal(t, wantSort.Int64s(), host(s), "worker %d round %d: sort", w, r) ||
								!assert.Equal(t, wantPerm.Int64s(), host(p), "worker %d round %d: perm", w, r)) {
							err = errors.New("sort differs")
						}
					default:
						var c *DeviceTensor
						if c, err = d.Cumsum(dv, true); err == nil &&
							!assert.Equal(t, wantSum.Int64s(), host(c), "worker %d round %d: cumsum", w, r) {
							err = errors.New("cumsum differs")
						}
					}
					if err != nil {
						errs <- fmt.Errorf("worker %d round %d: %w", w, r, err)
						return
					}
				}
			}(w)
		}
		for w := 0; w < workers; w++ {
			<-done
		}
		close(errs)
		for err := range errs {
			assert.NoError(t, err)
		}
		require.NoError(t, d.Sync())
	})
}

// ipSyncSites are 500 sites of a 2 x 9x20x20 grid.
func ipSyncSites() *Tensor {
	return randSites(rand.New(rand.NewSource(5)), 2, []int64{9, 20, 20}, 500)
}

// ipSyncCases are get_indice_pairs calls on ipSyncSites, with the host
// waits each makes: the rows' check (subm); the check with the candidates'
// count, then the outputs' count (regular, inverse; through the dense
// grid on candidates once, TestSyncBounds).
var ipSyncCases = []struct {
	name  string
	p     SparseConvParams
	waits int64
}{
	{"subm", SparseConvParams{BatchSize: 2, SpatialShape: []int64{9, 20, 20}, KSize: []int64{3, 3, 3}, Subm: true}, 1},
	{"conv", SparseConvParams{BatchSize: 2, SpatialShape: []int64{9, 20, 20}, KSize: []int64{3, 3, 3}, Stride: []int64{2, 2, 2},
		Padding: []int64{0, 1, 1}}, 2},
	{"inverse", SparseConvParams{BatchSize: 2, SpatialShape: []int64{9, 20, 20}, KSize: []int64{3, 3, 3}, Stride: []int64{2, 2, 2},
		Padding: []int64{0, 1, 1}, Inverse: true}, 2},
}

func ipFault(d *Device, sites *DeviceTensor, p SparseConvParams) error {
	r, err := d.IndicePairs(sites, p)
	r.Release()
	return err
}
