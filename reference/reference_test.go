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

// TestTriSkipsEmptyRows: a triangle of few elements in very many rows (a
// fuzzer's find: triu_indices(2^32, 8, -45) walked 2^32 empty rows for 15
// s) costs the rows that hold elements, and the counts agree with the
// closed form.
func TestTriSkipsEmptyRows(t *testing.T) {
	for _, c := range []struct {
		rows, cols, offset int64
		upper              bool
	}{
		{1 << 32, 8, -45, true}, {1 << 62, 3, 0, true}, {1 << 62, 5, -(1 << 62) + 2, false},
		{1 << 62, 5, -(1 << 62), false}, {1 << 62, 5, -(1 << 62) - 3, false}, {1<<63 - 1, 2, -(1<<63 - 3), false},
		{1<<63 - 1, 1, 1<<63 - 1, true}, {1 << 40, 0, 0, false}, {1 << 40, 3, -1 << 63, false},
	} {
		n, ok := TriCount(c.rows, c.cols, c.offset, c.upper)
		require.True(t, ok, "%+v", c)
		require.Equal(t, TriPrefix(c.rows, c.cols, c.offset, c.upper).Int64(), n, "%+v", c)
		r, cl := TriIndices(c.rows, c.cols, c.offset, c.upper)
		require.Len(t, r, int(n))
		for k := range r {
			er, ec := TriElement(c.rows, c.cols, c.offset, c.upper, int64(k))
			require.Equal(t, [2]int64{er, ec}, [2]int64{r[k], cl[k]}, "%+v element %d", c, k)
		}
	}
}
