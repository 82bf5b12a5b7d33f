package reference

// HashTable is the scalar oracle of the device hash table: a map from
// 64-bit keys to dense ids, assigned in order of first insertion (the first
// new key gets id Len(), and so on), holding at most a fixed number of
// keys. It is a plain open-addressing table with linear probing at load
// factor at most 0.5, with the all-ones key kept beside the slots, so it
// also serves as the baseline the benchmarks compare with.
type HashTable struct {
	keys     []uint64 // hashEmpty marks a free slot
	ids      []int64
	mask     uint64
	capacity int64
	size     int64
	emptyID  int64 // id of the key hashEmpty, -1 while absent
}

const hashEmpty = ^uint64(0)

// HashSlots returns the slot count of a table for capacity keys: the
// smallest power of two at least 2*capacity (and at least 2).
func HashSlots(capacity int64) int64 {
	s := int64(2)
	for s < 2*capacity {
		s *= 2
	}
	return s
}

// NewHashTable returns an empty table for up to capacity keys.
func NewHashTable(capacity int64) *HashTable {
	s := HashSlots(capacity)
	h := &HashTable{keys: make([]uint64, s), ids: make([]int64, s), mask: uint64(s - 1), capacity: capacity}
	h.Reset()
	return h
}

// Reset empties the table.
func (h *HashTable) Reset() {
	for i := range h.keys {
		h.keys[i] = hashEmpty
	}
	h.size, h.emptyID = 0, -1
}

// Len returns the number of keys in the table.
func (h *HashTable) Len() int64 { return h.size }

func hashMix(k uint64) uint64 {
	k *= 0x9e3779b97f4a7c15
	return k ^ k>>29
}

// InsertDense inserts keys in order and writes each one's id into ids (if
// ids is not nil). It returns false, leaving the keys before the first one
// that did not fit inserted, when the table would hold more than its
// capacity.
func (h *HashTable) InsertDense(keys []int64, ids []int64) bool {
	for i, key := range keys {
		k := uint64(key)
		var id int64
		if k == hashEmpty {
			if h.emptyID < 0 {
				if h.size == h.capacity {
					return false
				}
				h.emptyID = h.size
				h.size++
			}
			id = h.emptyID
		} else {
			s := hashMix(k) & h.mask
			for h.keys[s] != k && h.keys[s] != hashEmpty {
				s = (s + 1) & h.mask
			}
			if h.keys[s] == hashEmpty {
				if h.size == h.capacity {
					return false
				}
				h.keys[s], h.ids[s] = k, h.size
				h.size++
			}
			id = h.ids[s]
		}
		if ids != nil {
			ids[i] = id
		}
	}
	return true
}

// Lookup writes the id of each key into out, or -1 where it is absent.
func (h *HashTable) Lookup(keys []int64, out []int64) {
	for i, key := range keys {
		k := uint64(key)
		if k == hashEmpty {
			out[i] = h.emptyID
			continue
		}
		out[i] = -1
		for s := hashMix(k) & h.mask; h.keys[s] != hashEmpty; s = (s + 1) & h.mask {
			if h.keys[s] == k {
				out[i] = h.ids[s]
				break
			}
		}
	}
}
