package accel

import (
	"errors"
	"math"
	"math/rand"
	"strconv"
	"testing"

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
	if err != nil {
		t.Fatal(err)
	}
	return mustUpload(t, d, x)
}

// checkInsertDense inserts keys into tab and ref and compares ids, unique
// and lookups of the keys and of queries.
func checkInsertDense(t *testing.T, d *Device, tab *HashTable, ref *reference.HashTable, keys, queries []int64, what string) {
	t.Helper()
	dk := hostInt64s(t, d, keys)
	defer dk.Release()
	ids, u, err := tab.InsertDense(dk)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	got := mustHost(t, ids).Int64s()
	want := make([]int64, len(keys))
	if !ref.InsertDense(keys, want) {
		t.Fatalf("%s: the reference is full", what)
	}
	if u != ref.Len() || tab.Len() != ref.Len() {
		t.Fatalf("%s: unique %d, Len %d, want %d", what, u, tab.Len(), ref.Len())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: ids[%d] (key %d) = %d, want %d (first occurrence order)", what, i, keys[i], got[i], want[i])
		}
	}
	dq := hostInt64s(t, d, queries)
	defer dq.Release()
	lk, err := tab.Lookup(dq)
	if err != nil {
		t.Fatalf("%s: lookup: %v", what, err)
	}
	gl := mustHost(t, lk).Int64s()
	wl := make([]int64, len(queries))
	ref.Lookup(queries, wl)
	for i := range wl {
		if gl[i] != wl[i] {
			t.Fatalf("%s: lookup[%d] (key %d) = %d, want %d", what, i, queries[i], gl[i], wl[i])
		}
	}
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
				if err != nil {
					t.Fatal(err)
				}
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
		if err != nil {
			t.Fatal(err)
		}
		defer tab.Release()
		ref := reference.NewHashTable(capacity)
		for i, part := range [][]int64{all[:1], all[1:100], all[100:100], all[100:20000], all[20000:]} {
			checkInsertDense(t, d, tab, ref, part, absentMix(rng, all[:2000]), "part "+itoa(int64(i)))
		}
		// Insert (no ids) after a Reset numbers keys as InsertDense does.
		if err := tab.Reset(); err != nil {
			t.Fatal(err)
		}
		ref.Reset()
		dk := hostInt64s(t, d, all)
		defer dk.Release()
		if err := tab.Insert(dk); err != nil {
			t.Fatal(err)
		}
		ref.InsertDense(all, nil)
		checkInsertDense(t, d, tab, ref, all[:500], absentMix(rng, all), "after Insert")
	})
}

// Keys crafted to hash to the same slot (one run of occupied slots as long
// as the table holds), each repeated, in a table filled exactly; also with
// a probe budget of a few probes per launch, so inserts and lookups resume
// over many launches, as on drivers with a loop limit.
func TestHashTableCollisions(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		rng := rand.New(rand.NewSource(23))
		const distinct = 3000
		base := make([]int64, distinct)
		for j := range base {
			base[j] = int64(unfmix(uint64(j+1) << 40)) // low 40 hash bits zero: slot 0
			if fmix(uint64(base[j]))&(1<<40-1) != 0 {
				t.Fatal("unfmix does not invert the hash")
			}
		}
		keys := make([]int64, 0, 4*distinct)
		for r := 0; r < 4; r++ {
			keys = append(keys, base...)
		}
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		for _, budget := range []int64{0, 50000} {
			tab, err := d.NewHashTable(distinct)
			if err != nil {
				t.Fatal(err)
			}
			tab.budget = budget
			ref := reference.NewHashTable(distinct)
			// queries colliding too but absent: they probe the whole run
			q := absentMix(rng, keys[:2000])
			for j := 0; j < 100; j++ {
				q = append(q, int64(unfmix(uint64(distinct+j+1)<<40)))
			}
			checkInsertDense(t, d, tab, ref, keys, q, "budget "+itoa(budget))
			t.Logf("budget %d: the lookup took %d launches", budget, tab.launches)
			if budget > 0 && tab.launches < 2 {
				t.Errorf("budget %d: lookup ran in %d launch(es), want several", budget, tab.launches)
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
		if err != nil {
			t.Fatal(err)
		}
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
			if err != nil {
				t.Fatal(err)
			}
			ref := reference.NewHashTable(capacity)
			checkInsertDense(t, d, tab, ref, keys, absentMix(rng, keys), "exactly full "+itoa(capacity))
			one := hostInt64s(t, d, []int64{capacity + 7})
			err = tab.Insert(one)
			if !errors.Is(err, ErrTableFull) {
				t.Fatalf("capacity %d: one key over: %v, want ErrTableFull", capacity, err)
			}
			t.Logf("capacity %d: %v", capacity, err)
			if _, err := tab.Lookup(one); !errors.Is(err, ErrTableFull) {
				t.Fatalf("capacity %d: lookup in an overflowed table: %v, want ErrTableFull", capacity, err)
			}
			// the same in one call: capacity+1 distinct keys into a new table
			if err := tab.Reset(); err != nil {
				t.Fatal(err)
			}
			over := hostInt64s(t, d, append(append([]int64(nil), keys...), capacity+7))
			if _, _, err := tab.InsertDense(over); !errors.Is(err, ErrTableFull) {
				t.Fatalf("capacity %d: capacity+1 keys in one call: %v, want ErrTableFull", capacity, err)
			}
			// after Reset the table works again
			if err := tab.Reset(); err != nil {
				t.Fatal(err)
			}
			ref.Reset()
			checkInsertDense(t, d, tab, ref, keys, absentMix(rng, keys), "after reset "+itoa(capacity))
			over.Release()
			one.Release()
			tab.Release()
		}
		// 200000 distinct keys into a table for 100: an error, quickly
		tab, err := d.NewHashTable(100)
		if err != nil {
			t.Fatal(err)
		}
		defer tab.Release()
		many := make([]int64, 200000)
		for i := range many {
			many[i] = int64(rng.Uint64())
		}
		dm := hostInt64s(t, d, many)
		defer dm.Release()
		if err := tab.Insert(dm); !errors.Is(err, ErrTableFull) {
			t.Fatalf("far over capacity: %v, want ErrTableFull", err)
		}
	})
}

// Uint64 keys, the extremes and the argument checks.
func TestHashTableArgs(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		tab, err := d.NewHashTable(8)
		if err != nil {
			t.Fatal(err)
		}
		defer tab.Release()
		u := []uint64{math.MaxUint64, 0, 1 << 63, math.MaxUint64, 5}
		x, _ := NewTensor(Uint64, 5)
		copy(x.Uint64s(), u)
		dx := mustUpload(t, d, x)
		defer dx.Release()
		ids, un, err := tab.InsertDense(dx)
		if err != nil {
			t.Fatal(err)
		}
		if got := mustHost(t, ids).Int64s(); un != 4 || got[0] != 0 || got[1] != 1 || got[2] != 2 || got[3] != 0 || got[4] != 3 {
			t.Fatalf("uint64 keys: ids %v unique %d", got, un)
		}
		f, _ := NewTensor(Float64, 3)
		df := mustUpload(t, d, f)
		defer df.Release()
		if err := tab.Insert(df); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("float64 keys: %v, want ErrInvalidArgument", err)
		}
		if _, err := d.NewHashTable(-1); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("capacity -1: %v", err)
		}
		if _, err := d.NewHashTable(math.MaxInt64 / 2); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("huge capacity: %v", err)
		}
		saved := d.caps.Int64Atomics
		d.caps.Int64Atomics = false
		_, err = d.NewHashTable(8)
		d.caps.Int64Atomics = saved
		if !errors.Is(err, ErrUnsupported) {
			t.Fatalf("without 64-bit atomics: %v, want ErrUnsupported", err)
		}
		t.Log(err)
		tab2, err := d.NewHashTable(1)
		if err != nil {
			t.Fatal(err)
		}
		tab2.Release()
		tab2.Release()
		if err := tab2.Insert(dx); !errors.Is(err, ErrClosed) {
			t.Fatalf("insert into a released table: %v", err)
		}
	})
}
