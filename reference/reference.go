// Package reference holds scalar Go implementations of every kernel: plain
// loops in the order the definition states them, with no shared code with
// the device kernels. They are the oracle the tests check the devices
// against, and the baseline the benchmarks compare with.
package reference

// TriCount returns the number of (row, col) pairs of tril_indices
// (upper=false: col-row <= offset) or triu_indices (upper=true:
// col-row >= offset) for a rows x cols matrix, and ok=false when that count
// does not fit in an int64. rows and cols must be >= 0.
func TriCount(rows, cols, offset int64, upper bool) (n int64, ok bool) {
	first, end := triRows(rows, cols, offset, upper)
	for r := first; r < end; r++ {
		l := triRowLen(r, cols, offset, upper)
		if n > (1<<63-1)-l {
			return 0, false
		}
		n += l
	}
	return n, true
}

// triRows returns the range [first, end) of rows that can hold elements:
// every row outside it is empty (tril's rows above the diagonal's start,
// triu's rows below its end), so the walks cost the rows that hold
// elements, not rows (2^32 rows with 8 columns hold a few hundred).
func triRows(rows, cols, offset int64, upper bool) (first, end int64) {
	if cols <= 0 {
		return 0, 0
	}
	end = rows
	if upper {
		// row r is empty when r+offset >= cols, that is r >= cols-offset.
		// (cols-offset overflows only when it exceeds every row.)
		if offset >= cols-(1<<63-1) && cols-offset < end {
			end = max(cols-offset, 0)
		}
		return 0, end
	}
	// row r is empty when r+offset+1 <= 0, that is r < -offset.
	if offset < 0 {
		if offset <= -rows {
			return rows, rows
		}
		first = -offset
	}
	return first, end
}

// triRowLen is the number of elements of row r (0 <= r < rows), from the
// definition, written so that no intermediate overflows for any int64 offset.
func triRowLen(r, cols, offset int64, upper bool) int64 {
	if offset < -r-1 {
		offset = -r - 1 // every such offset gives the same row
	}
	if upper {
		if offset >= cols-r {
			return 0 // first column c = r+offset is past the last
		}
		start := r + offset
		if start < 0 {
			start = 0
		}
		return cols - start
	}
	if offset >= cols-r-1 {
		return cols // the whole row is on or below the diagonal
	}
	return r + offset + 1 // >= 0 after the clamp above
}

// TriIndices returns the rows and columns of tril_indices (upper=false) or
// triu_indices (upper=true) in row-major order: the [2, N] tensor as two
// slices. It walks every row, so it is meant for sizes a test can afford.
func TriIndices(rows, cols, offset int64, upper bool) (rowIdx, colIdx []int64) {
	n, _ := TriCount(rows, cols, offset, upper)
	rowIdx, colIdx = make([]int64, n), make([]int64, n)
	TriIndicesInto(rows, cols, offset, upper, rowIdx, colIdx)
	return rowIdx, colIdx
}

// TriIndicesInto writes the rows and columns of tril_indices or
// triu_indices into rowIdx and colIdx, which must hold TriCount elements.
func TriIndicesInto(rows, cols, offset int64, upper bool, rowIdx, colIdx []int64) {
	k := 0
	first, end := triRows(rows, cols, offset, upper)
	for r := first; r < end; r++ {
		l := triRowLen(r, cols, offset, upper)
		first := int64(0)
		if upper {
			first = cols - l
		}
		for c := first; c < first+l; c++ {
			rowIdx[k] = r
			colIdx[k] = c
			k++
		}
	}
}
