package reference

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
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
			require.True(t, h.InsertDense(keys, ids), "n=%d: full at capacity %d", n, len(m))
			require.Equal(t, int64(len(m)), h.Len(), "n=%d: Len", n)
			require.Equal(t, want, ids, "n=%d: ids", n)
			q := []int64{spread, -spread, -1, 0}
			wantQ := make([]int64, len(q))
			for i, k := range q {
				w, ok := m[k]
				if !ok {
					w = -1
				}
				wantQ[i] = w
			}
			got := make([]int64, len(q))
			h.Lookup(q, got)
			require.Equal(t, wantQ, got, "n=%d: Lookup(%v)", n, q)
			if len(m) > 0 {
				h2 := NewHashTable(int64(len(m) - 1))
				require.False(t, h2.InsertDense(keys, nil), "n=%d: %d keys fit a table for %d", n, len(m), len(m)-1)
			}
		}
	}
}
