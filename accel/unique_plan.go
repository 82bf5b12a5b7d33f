package accel

import (
	"fmt"

	"github.com/accelkern/accel/host"
)

// uniquePlan is Unique's plan: sort every key (the radix sort, then runs),
// or count the keys in a hash table and sort only the distinct ones.
type uniquePlan struct {
	Hash bool
	// Capacity is the hash table's: the most distinct keys the try
	// takes (slots: the power of two at least twice that, 16 bytes
	// each). With more, the try's full flag sends Unique to the sort.
	Capacity int64
	// ProbeCap bounds a key's probes: a longer run of held slots stops
	// the try (the table is then fuller than planned, or its keys
	// collide), so a failed try costs about a pass over the keys.
	ProbeCap int64
	Reason   string
}

func (p uniquePlan) String() string {
	if !p.Hash {
		return "sort: " + p.Reason
	}
	return fmt.Sprintf("hash: capacity=%d slots=%d probes<=%d (%s)", p.Capacity, hashSlots(p.Capacity), p.ProbeCap, p.Reason)
}

// Where Unique hashes (planUnique): 64-bit keys on a GPU with 64-bit
// atomics, at least uniqueHashMinN of them; a table for 1/uniqueHashShare
// of the keys; a key gives up after uniqueProbeCap probes.
//
// Why: the sort of n 64-bit keys is 8 digit passes, each moving a key and
// a 32-bit entry both ways (192n bytes); counting them in a table reads
// the keys once and writes their slots (16n), then the inverse reads the
// slots and writes itself (16n), and only the u distinct keys are sorted.
// With a table for n/8 keys (at most 16n/8 bytes of slots to clear and
// scan) the hash plan moves about a third of the sort's bytes even when
// u reaches n/8, while its table still fits a large GPU's L2 cache for
// the bench's 16M keys with 1M distinct (2M slots, 32 MiB).
//
// The probe cap: linear probing at load factor 1/2 gives a key a run of
// held slots of k or more with probability about (e^0.5/2)^k = 0.824^k,
// 1.7e-11 for 128: a false give-up among a million keys once in tens of
// thousands of calls, and then the result is still right (the sort).
const (
	uniqueHashMinN  = 1 << 16
	uniqueHashShare = 8
	uniqueProbeCap  = 128
)

// planUnique plans Unique of n keys of keyBytes each.
func planUnique(caps host.Caps, n int64, keyBytes int) uniquePlan {
	switch {
	case keyBytes != 8:
		return uniquePlan{Reason: "32-bit keys: four digit passes"}
	case !hashable(caps, keyBytes):
		return uniquePlan{Reason: "no 64-bit atomics for a hash table"}
	case caps.Type == host.TypeCPU && caps.Backend == host.OpenCL:
		// PoCL, 2-core EPYC, accel bench --op unique, two rounds: the sort
		// 476-546 ms, the hash plan 471-505 (its counting pass alone
		// 282-342: each key's atomic add misses the caches). lavapipe's
		// sort is slower (1343-1347 ms) and its hash plan twice as fast
		// (676-775): it takes the hash plan below.
		return uniquePlan{Reason: "cpu opencl driver: the sort streams through the caches, where the table's atomics miss them (no faster on PoCL)"}
	case n < uniqueHashMinN:
		return uniquePlan{Reason: fmt.Sprintf("under %d keys: the sort's launches are as few", int64(uniqueHashMinN))}
	}
	return hashUniquePlan(n)
}

// hashable says whether Unique can hash keys of keyBytes on a device of
// caps: 64-bit keys, 64-bit atomics (the table's).
func hashable(caps host.Caps, keyBytes int) bool {
	return keyBytes == 8 && caps.Int64 && caps.Int64Atomics
}

// hashUniquePlan is the hash plan for n keys.
func hashUniquePlan(n int64) uniquePlan {
	return uniquePlan{Hash: true, Capacity: max(n/uniqueHashShare, 1), ProbeCap: uniqueProbeCap,
		Reason: fmt.Sprintf("64-bit keys: counted in a table for 1/%d of them, then only the distinct ones sorted; more distinct keys: the sort", uniqueHashShare)}
}

// tunedUnique is up with $ACCEL_KNOBS's "unique_plan" overrides (not
// "unique": Unique's elementwise passes plan under that name), for trying
// the plans on a GPU without a rebuild: HASH=0 sorts every key, HASH=1
// hashes (64-bit keys on a device with 64-bit atomics), SHARE=k sizes the
// table for n/k keys.
func (d *Device) tunedUnique(up uniquePlan, n int64) uniquePlan {
	ks, ok := d.knobs["unique_plan"]
	if !ok {
		return up
	}
	for _, k := range ks {
		switch {
		case k.Name == "HASH" && k.Value == 0:
			up.Hash = false
		case k.Name == "HASH" && !up.Hash:
			up = hashUniquePlan(n)
		case k.Name == "SHARE" && k.Value > 0 && up.Hash:
			up.Capacity = max(n/k.Value, 1)
		}
	}
	up.Reason += " [ACCEL_KNOBS]"
	return up
}
