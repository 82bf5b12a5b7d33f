package accel

import (
	"math"
	"math/rand"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/reference"
)

// hashSizes are the key counts the hash table is tested at.
var hashSizes = []int64{0, 1, 2, 3, 7, 63, 64, 65, 255, 256, 257, 1000, 4095, 4096, 4097, 65535, 65536, 65537, 1 << 20}

// distinctCount is the number of distinct values in keys.
func distinctCount(keys []int64) int64 {
	m := map[int64]struct{}{}
	for _, k := range keys {
		m[k] = struct{}{}
	}
	return int64(len(m))
}

// hashKeys draws n keys: from a pool of about n/2 values (duplicates),
// negatives, the table's free-slot marker -1 (all ones) and its claim bit
// pattern math.MinInt64 mixed in.
func hashKeys(rng *rand.Rand, n int64) []int64 {
	pool := make([]int64, max(n/2, 1))
	for i := range pool {
		switch rng.Intn(4) {
		case 0:
			pool[i] = int64(rng.Uint64())
		case 1:
			pool[i] = -rng.Int63n(1000)
		default:
			pool[i] = rng.Int63n(4 * n)
		}
	}
	pool[0] = -1
	if len(pool) > 1 {
		pool[1] = math.MinInt64
	}
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = pool[rng.Intn(len(pool))]
	}
	return keys
}

// unfmix inverts the kernels' hash (hash_body.h's MurmurHash3 finalizer),
// so tests can craft keys that land on chosen slots.
func unfmix(h uint64) uint64 {
	inv := func(a uint64) uint64 { // a^-1 mod 2^64 (a odd), Newton's iteration
		x := a
		for i := 0; i < 6; i++ {
			x *= 2 - a*x
		}
		return x
	}
	h ^= h >> 33
	h *= inv(0xc4ceb9fe1a85ec53)
	h ^= h >> 33
	h *= inv(0xff51afd7ed558ccd)
	h ^= h >> 33
	return h
}

func fmix(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

func hostInt64s(t *testing.T, d *Device, v []int64) *DeviceTensor {
	t.Helper()
	x, err := FromInt64s([]int64{int64(len(v))}, v)
	require.NoError(t, err)
	return mustUpload(t, d, x)
}

// checkInsertDense inserts keys into tab and ref and compares ids, unique
// and lookups of the keys and of queries.
func checkInsertDense(t *testing.T, d *Device, tab *HashTable, ref *reference.HashTable, keys, queries []int64, what string) {
	t.Helper()
	dk := hostInt64s(t, d, keys)
	defer dk.Release()
	ids, u, err := tab.InsertDense(dk)
	require.NoError(t, err, what)
	got := mustHost(t, ids).Int64s()
	want := make([]int64, len(keys))
	require.True(t, ref.InsertDense(keys, want), "%s: the reference is full", what)
	require.Equal(t, ref.Len(), u, "%s: unique", what)
	require.Equal(t, ref.Len(), tab.Len(), "%s: Len", what)
	requireElems(t, want, got, "%s: ids (first occurrence order)", what)
	dq := hostInt64s(t, d, queries)
	defer dq.Release()
	lk, err := tab.Lookup(dq)
	require.NoError(t, err, "%s: lookup", what)
	gl := mustHost(t, lk).Int64s()
	wl := make([]int64, len(queries))
	ref.Lookup(queries, wl)
	requireElems(t, wl, gl, "%s: lookup", what)
}

// absentMix returns keys followed by as many fresh random queries (mostly
// absent) and the marker values.
func absentMix(rng *rand.Rand, keys []int64) []int64 {
	q := append([]int64(nil), keys...)
	for range keys {
		q = append(q, int64(rng.Uint64()))
	}
	return append(q, -1, 0, math.MinInt64, math.MaxInt64)
}

func TestHashTableRandom(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(21))
		for _, n := range hashSizes {
			keys := hashKeys(rng, n)
			u := distinctCount(keys)
			for _, capacity := range []int64{u, 2*u + 3} {
				tab, err := d.NewHashTable(capacity)
				require.NoError(t, err)
				ref := reference.NewHashTable(capacity)
				checkInsertDense(t, d, tab, ref, keys, absentMix(rng, keys[:min(n, 5000)]), "n="+itoa(n)+" capacity="+itoa(capacity))
				tab.Release()
			}
		}
	})
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// Inserts in several calls: keys already in the table keep their ids, new
// ones continue the numbering; plain Insert assigns the same ids.
func TestHashTableIncremental(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(22))
		all := hashKeys(rng, 30000)
		capacity := distinctCount(all)
		tab, err := d.NewHashTable(capacity)
		require.NoError(t, err)
		defer tab.Release()
		ref := reference.NewHashTable(capacity)
		for i, part := range [][]int64{all[:1], all[1:100], all[100:100], all[100:20000], all[20000:]} {
			checkInsertDense(t, d, tab, ref, part, absentMix(rng, all[:2000]), "part "+itoa(int64(i)))
		}
		// Insert (no ids) after a Reset numbers keys as InsertDense does.
		require.NoError(t, tab.Reset())
		ref.Reset()
		dk := hostInt64s(t, d, all)
		defer dk.Release()
		require.NoError(t, tab.Insert(dk))
		ref.InsertDense(all, nil)
		checkInsertDense(t, d, tab, ref, all[:500], absentMix(rng, all), "after Insert")
	})
}

// Keys crafted to hash to the same slot (one run of occupied slots as long
// as the table holds), each repeated, in a table filled exactly; also with
// a probe budget of 1000 probes per work-item per launch, under the run's
// 3000, so inserts and lookups resume over many launches, as on drivers
// with a loop limit, whatever the plan's work-items (GPU plans give each
// only a key or two, which 50000 probes finished in one launch).
func TestHashTableCollisions(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(23))
		const distinct = 3000
		base := make([]int64, distinct)
		for j := range base {
			base[j] = int64(unfmix(uint64(j+1) << 40)) // low 40 hash bits zero: slot 0
			require.Zero(t, fmix(uint64(base[j]))&(1<<40-1), "unfmix does not invert the hash")
		}
		keys := make([]int64, 0, 4*distinct)
		for r := 0; r < 4; r++ {
			keys = append(keys, base...)
		}
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		for _, budget := range []int64{0, 1000} {
			tab, err := d.NewHashTable(distinct)
			require.NoError(t, err)
			tab.budget = budget
			ref := reference.NewHashTable(distinct)
			// queries colliding too but absent: they probe the whole run
			q := absentMix(rng, keys[:2000])
			for j := 0; j < 100; j++ {
				q = append(q, int64(unfmix(uint64(distinct+j+1)<<40)))
			}
			checkInsertDense(t, d, tab, ref, keys, q, "budget "+itoa(budget))
			t.Logf("budget %d: the lookup took %d launches", budget, tab.launches)
			if budget > 0 {
				assert.GreaterOrEqual(t, tab.launches, 2, "budget %d: lookup launches, want several", budget)
			}
			tab.Release()
		}
	})
}

// The smallest budget, two probes per work-item per launch: keys paused
// mid-probe and mid-compare-and-swap resume and finish.
func TestHashTableTinyBudget(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(25))
		var keys []int64
		for j := 0; j < 40; j++ {
			k := int64(unfmix(uint64(j+1) << 40))
			keys = append(keys, k, k, k)
		}
		keys = append(keys, -1, -1)
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		tab, err := d.NewHashTable(41)
		require.NoError(t, err)
		defer tab.Release()
		tab.budget = 2
		checkInsertDense(t, d, tab, reference.NewHashTable(41), keys, absentMix(rng, keys), "budget 2")
		t.Logf("the lookup took %d launches", tab.launches)
	})
}

// A table takes exactly its capacity; one key more is ErrTableFull (in a
// later call or in the same call), the table then refuses use until Reset,
// and far too many keys fail fast rather than hang.
func TestHashTableFull(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(24))
		for _, capacity := range []int64{0, 1, 5, 64, 1000} {
			keys := make([]int64, 0, 3*capacity)
			for j := int64(0); j < capacity; j++ {
				keys = append(keys, -j-1) // includes the marker -1
			}
			keys = append(keys, keys...)
			tab, err := d.NewHashTable(capacity)
			require.NoError(t, err)
			ref := reference.NewHashTable(capacity)
			checkInsertDense(t, d, tab, ref, keys, absentMix(rng, keys), "exactly full "+itoa(capacity))
			one := hostInt64s(t, d, []int64{capacity + 7})
			err = tab.Insert(one)
			require.ErrorIs(t, err, ErrTableFull, "capacity %d: one key over", capacity)
			t.Logf("capacity %d: %v", capacity, err)
			_, err = tab.Lookup(one)
			require.ErrorIs(t, err, ErrTableFull, "capacity %d: lookup in an overflowed table", capacity)
			// the same in one call: capacity+1 distinct keys into a new table
			require.NoError(t, tab.Reset())
			over := hostInt64s(t, d, append(append([]int64(nil), keys...), capacity+7))
			_, _, err = tab.InsertDense(over)
			require.ErrorIs(t, err, ErrTableFull, "capacity %d: capacity+1 keys in one call", capacity)
			// after Reset the table works again
			require.NoError(t, tab.Reset())
			ref.Reset()
			checkInsertDense(t, d, tab, ref, keys, absentMix(rng, keys), "after reset "+itoa(capacity))
			over.Release()
			one.Release()
			tab.Release()
		}
		// 200000 distinct keys into a table for 100: an error, quickly
		tab, err := d.NewHashTable(100)
		require.NoError(t, err)
		defer tab.Release()
		many := make([]int64, 200000)
		for i := range many {
			many[i] = int64(rng.Uint64())
		}
		dm := hostInt64s(t, d, many)
		defer dm.Release()
		require.ErrorIs(t, tab.Insert(dm), ErrTableFull, "far over capacity")
	})
}

// Uint64 keys, the extremes and the argument checks.
func TestHashTableArgs(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		tab, err := d.NewHashTable(8)
		require.NoError(t, err)
		defer tab.Release()
		u := []uint64{math.MaxUint64, 0, 1 << 63, math.MaxUint64, 5}
		x, _ := NewTensor(Uint64, 5)
		copy(x.Uint64s(), u)
		dx := mustUpload(t, d, x)
		defer dx.Release()
		ids, un, err := tab.InsertDense(dx)
		require.NoError(t, err)
		require.Equal(t, int64(4), un, "uint64 keys: unique")
		require.Equal(t, []int64{0, 1, 2, 0, 3}, mustHost(t, ids).Int64s(), "uint64 keys: ids")
		f, _ := NewTensor(Float64, 3)
		df := mustUpload(t, d, f)
		defer df.Release()
		require.ErrorIs(t, tab.Insert(df), ErrInvalidArgument, "float64 keys")
		_, err = d.NewHashTable(-1)
		require.ErrorIs(t, err, ErrInvalidArgument, "capacity -1")
		_, err = d.NewHashTable(math.MaxInt64 / 2)
		require.ErrorIs(t, err, ErrTooLarge, "huge capacity")
		saved := d.caps.Int64Atomics
		d.caps.Int64Atomics = false
		_, err = d.NewHashTable(8)
		d.caps.Int64Atomics = saved
		require.ErrorIs(t, err, ErrUnsupported, "without 64-bit atomics")
		t.Log(err)
		tab2, err := d.NewHashTable(1)
		require.NoError(t, err)
		tab2.Release()
		tab2.Release()
		require.ErrorIs(t, tab2.Insert(dx), ErrClosed, "insert into a released table")
	})
}

// TestHashTableModel: inserts and lookups report their traffic model
// (hashTableTraffic) with their least beside it.
func TestHashTableModel(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		if !d.caps.Int64Atomics {
			t.Skipf("%s: no 64-bit atomics", d.caps.ID())
		}
		var got []PlanReport
		d.OnPlan(func(r PlanReport) {
			if r.Family == "hash_table" {
				got = append(got, r)
			}
		})
		defer d.OnPlan(nil)
		tab, err := d.NewHashTable(1000)
		require.NoError(t, err)
		defer tab.Release()
		keys := tensorOf(Int64, []int64{5, 7, 5, -1, 9})
		dk := mustUpload(t, d, keys)
		defer dk.Release()
		ids, _, err := tab.InsertDense(dk)
		require.NoError(t, err)
		ids.Release()
		found, err := tab.Lookup(dk)
		require.NoError(t, err)
		found.Release()
		require.Len(t, got, 2)
		assert.Equal(t, hashTableTraffic(d.plan(planScan(d.caps, 5, 8, d.scanSubgroups(Int64))), 5, 2048, true, true, false).Bytes(), got[0].ModelBytes)
		assert.Equal(t, hashTableMinBytes(5, 2048, true), got[0].MinBytes)
		assert.Equal(t, hashTableMinBytes(5, 2048, true)+8, got[1].ModelBytes, "the least and the probes' progress words")
		assert.Contains(t, got[1].Plan, "lookup of 5 keys into 2048 slots")
	})
}
