package reference

import (
	"math/rand"
	"testing"
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
			var wr, wc []int64
			for r := int64(0); r < rows; r++ {
				for c := int64(0); c < cols; c++ {
					if (!upper && c-r <= off) || (upper && c-r >= off) {
						wr, wc = append(wr, r), append(wc, c)
					}
				}
			}
			gr, gc := TriIndices(rows, cols, off, upper)
			if len(gr) != len(wr) {
				t.Fatalf("(%d, %d, %d, upper=%v): %d elements, want %d", rows, cols, off, upper, len(gr), len(wr))
			}
			for i := range wr {
				if gr[i] != wr[i] || gc[i] != wc[i] {
					t.Fatalf("(%d, %d, %d, upper=%v) element %d", rows, cols, off, upper, i)
				}
				er, ec := TriElement(rows, cols, off, upper, int64(i))
				if er != wr[i] || ec != wc[i] {
					t.Fatalf("TriElement(%d, %d, %d, %v, %d) = (%d, %d), want (%d, %d)", rows, cols, off, upper, i, er, ec, wr[i], wc[i])
				}
			}
		}
	}
}
