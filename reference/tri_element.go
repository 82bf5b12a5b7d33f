package reference

import "math/big"

// sumClamp returns sum_{i=0}^{r-1} clamp(i+s, 0, c), exactly.
func sumClamp(r, s, c *big.Int) *big.Int {
	zero, one := big.NewInt(0), big.NewInt(1)
	clamp := func(x, lo, hi *big.Int) *big.Int {
		if x.Cmp(lo) < 0 {
			return new(big.Int).Set(lo)
		}
		if x.Cmp(hi) > 0 {
			return new(big.Int).Set(hi)
		}
		return new(big.Int).Set(x)
	}
	// i in [0, lo): value 0; [lo, hi): value i+s in (0, c); [hi, r): value c.
	lo := clamp(new(big.Int).Sub(one, s), zero, r)
	hi := clamp(new(big.Int).Sub(c, s), lo, r)
	// sum_{i=lo}^{hi-1} (i+s) = (hi-lo)*(lo+s + hi-1+s)/2
	cnt := new(big.Int).Sub(hi, lo)
	ends := new(big.Int).Add(new(big.Int).Add(lo, s), new(big.Int).Add(new(big.Int).Sub(hi, one), s))
	mid := new(big.Int).Rsh(new(big.Int).Mul(cnt, ends), 1)
	tail := new(big.Int).Mul(new(big.Int).Sub(r, hi), c)
	return mid.Add(mid, tail)
}

// TriPrefix returns the number of elements of tril_indices (upper=false)
// or triu_indices (upper=true) in rows [0, r), in closed form.
func TriPrefix(r, cols, offset int64, upper bool) *big.Int {
	R, C, off := big.NewInt(r), big.NewInt(cols), big.NewInt(offset)
	if upper {
		// row i has c - clamp(i+offset, 0, c) elements
		full := new(big.Int).Mul(R, C)
		return full.Sub(full, sumClamp(R, off, C))
	}
	// row i has clamp(i+offset+1, 0, c) elements
	return sumClamp(R, new(big.Int).Add(off, big.NewInt(1)), C)
}

// TriElement returns the (row, col) of element k of tril_indices or
// triu_indices of a rows x cols matrix, by binary search over TriPrefix:
// an oracle for single elements of results far too large to enumerate.
func TriElement(rows, cols, offset int64, upper bool, k int64) (row, col int64) {
	K := big.NewInt(k)
	lo, hi := int64(0), rows-1 // the answer is the largest r with prefix(r) <= k
	for lo < hi {
		m := lo + (hi-lo+1)/2
		if TriPrefix(m, cols, offset, upper).Cmp(K) <= 0 {
			lo = m
		} else {
			hi = m - 1
		}
	}
	row = lo
	within := new(big.Int).Sub(K, TriPrefix(row, cols, offset, upper)).Int64()
	if upper {
		start := new(big.Int).Add(big.NewInt(row), big.NewInt(offset))
		if start.Sign() < 0 {
			start.SetInt64(0)
		}
		return row, start.Int64() + within
	}
	return row, within
}
