package reference

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTriAgainstDefinition checks the reference against the definition
// itself (every (r, c) with c-r <= offset, or >= offset), and the
// closed-form single-element oracle against the enumeration.
func TestTriAgainstDefinition(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for it := 0; it < 300; it++ {
		rows, cols := rng.Int63n(40), rng.Int63n(40)
		off := rng.Int63n(100) - 50
		for _, upper := range []bool{false, true} {
			wr, wc := []int64{}, []int64{}
			for r := int64(0); r < rows; r++ {
				for c := int64(0); c < cols; c++ {
					if (!upper && c-r <= off) || (upper && c-r >= off) {
						wr, wc = append(wr, r), append(wc, c)
					}
				}
			}
			gr, gc := TriIndices(rows, cols, off, upper)
			require.Equal(t, wr, gr, "(%d, %d, %d, upper=%v): rows", rows, cols, off, upper)
			require.Equal(t, wc, gc, "(%d, %d, %d, upper=%v): columns", rows, cols, off, upper)
			er, ec := make([]int64, len(wr)), make([]int64, len(wr))
			for i := range wr {
				er[i], ec[i] = TriElement(rows, cols, off, upper, int64(i))
			}
			require.Equal(t, wr, er, "TriElement(%d, %d, %d, %v, k) rows, k = 0 .. %d", rows, cols, off, upper, len(wr)-1)
			require.Equal(t, wc, ec, "TriElement(%d, %d, %d, %v, k) columns, k = 0 .. %d", rows, cols, off, upper, len(wr)-1)
		}
	}
}
