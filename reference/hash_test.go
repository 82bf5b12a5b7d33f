package reference

import (
	"math/rand"
	"testing"
)

// The oracle against a Go map: ids by first insertion, -1 when absent, the
// capacity enforced.
func TestHashTableAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 2, 100, 5000} {
		for _, spread := range []int64{3, 1 << 40} {
			keys := make([]int64, n)
			for i := range keys {
				keys[i] = rng.Int63n(spread) - spread/2
				if i%17 == 0 {
					keys[i] = -1 // the table's free-slot marker
				}
			}
			m := map[int64]int64{}
			want := make([]int64, n)
			for i, k := range keys {
				if _, ok := m[k]; !ok {
					m[k] = int64(len(m))
				}
				want[i] = m[k]
			}
			h := NewHashTable(int64(len(m)))
			ids := make([]int64, n)
			if !h.InsertDense(keys, ids) {
				t.Fatalf("n=%d: full at capacity %d", n, len(m))
			}
			if h.Len() != int64(len(m)) {
				t.Fatalf("n=%d: Len %d, want %d", n, h.Len(), len(m))
			}
			for i := range ids {
				if ids[i] != want[i] {
					t.Fatalf("n=%d: ids[%d] = %d, want %d", n, i, ids[i], want[i])
				}
			}
			q := []int64{spread, -spread, -1, 0}
			got := make([]int64, len(q))
			h.Lookup(q, got)
			for i, k := range q {
				w, ok := m[k]
				if !ok {
					w = -1
				}
				if got[i] != w {
					t.Fatalf("n=%d: Lookup(%d) = %d, want %d", n, k, got[i], w)
				}
			}
			if len(m) > 0 {
				h2 := NewHashTable(int64(len(m) - 1))
				if h2.InsertDense(keys, nil) {
					t.Fatalf("n=%d: %d keys fit a table for %d", n, len(m), len(m)-1)
				}
			}
		}
	}
}
