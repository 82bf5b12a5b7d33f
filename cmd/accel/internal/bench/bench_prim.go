package bench

import (
	"cmp"
	"math/rand"
	"slices"
	"sync"

	"github.com/accelkern/accel/accel"
)

// Bench cases of the primitives (issue 4): cumsum of 64M int32 (against
// copy bandwidth), sort of 16M uint32 keys with their permutation (the
// reference is Go's slices.Sort of the same keys) and of 16M int64 keys
// below 2^20, unique of 16M int64 keys with 1M distinct values. --quick
// runs 1/16 of each.
func primCases(quick bool) []benchCase {
	nScan, nSort, nUniq, distinct, tag := int64(64<<20), int64(16<<20), int64(16<<20), int64(1<<20), ""
	if quick {
		nScan, nSort, nUniq, distinct, tag = 4<<20, 1<<20, 1<<20, 64<<10, "_quick"
	}
	var cases []benchCase

	var scanX *accel.Tensor
	cases = append(cases, benchCase{
		op: "cumsum", name: "int32_64M" + tag, bytes: 2 * 4 * nScan, items: nScan,
		setup: func(dev *accel.Device) (caseRun, error) {
			if scanX == nil {
				scanX, _ = accel.NewTensor(accel.Int32, nScan)
				rng := rand.New(rand.NewSource(1))
				for i := range scanX.Int32s() {
					scanX.Int32s()[i] = int32(rng.Uint32())
				}
			}
			dx, err := dev.Upload(scanX)
			if err != nil {
				return caseRun{}, err
			}
			call := func() error {
				out, err := dev.Cumsum(dx, false)
				if err == nil {
					out.Release()
				}
				return err
			}
			return caseRun{call: call, done: dx.Release}, nil
		},
		ref: func() (func(), func()) {
			out := make([]int32, nScan)
			return func() {
				var s int32
				for i, v := range scanX.Int32s() {
					s += v
					out[i] = s
				}
			}, func() {}
		},
	})

	cases = append(cases, sortCase("uint32_16M_perm"+tag, nSort*(4+4+8), nSort, func() *accel.Tensor {
		k, _ := accel.NewTensor(accel.Uint32, nSort)
		rng := rand.New(rand.NewSource(2))
		for i := range k.Uint32s() {
			k.Uint32s()[i] = rng.Uint32()
		}
		return k
	}, func(k *accel.Tensor) func() { return sortedCopy(k.Uint32s()) }))

	// int64 keys below 2^20 (indices, PyTorch's default integer dtype):
	// five of the sort's eight 8-bit digits are one for every key, which
	// the GPU plans' sweep skips (knob RADIX_SKIP)
	cases = append(cases, sortCase("int64_16M_below1M"+tag, nSort*(8+8+8), nSort, func() *accel.Tensor {
		k, _ := accel.NewTensor(accel.Int64, nSort)
		rng := rand.New(rand.NewSource(4))
		for i := range k.Int64s() {
			k.Int64s()[i] = rng.Int63n(distinct)
		}
		return k
	}, func(k *accel.Tensor) func() { return sortedCopy(k.Int64s()) }))

	var uniqX *accel.Tensor
	makeUniq := func() {
		if uniqX == nil {
			uniqX, _ = accel.NewTensor(accel.Int64, nUniq)
			rng := rand.New(rand.NewSource(3))
			vals := make([]int64, distinct)
			for i := range vals {
				vals[i] = int64(rng.Uint64())
			}
			for i := range uniqX.Int64s() {
				uniqX.Int64s()[i] = vals[rng.Int63n(distinct)]
			}
		}
	}
	cases = append(cases, benchCase{
		op: "unique", name: "int64_16M_1M" + tag, bytes: nUniq*(8+8) + 2*8*distinct, items: nUniq,
		setup: func(dev *accel.Device) (caseRun, error) {
			makeUniq()
			dx, err := dev.Upload(uniqX)
			if err != nil {
				return caseRun{}, err
			}
			call := func() error {
				v, inv, c, err := dev.Unique(dx)
				if err == nil {
					v.Release()
					inv.Release()
					c.Release()
				}
				return err
			}
			return caseRun{call: call, done: dx.Release}, nil
		},
		ref: func() (func(), func()) {
			makeUniq()
			return func() { accel.RefUnique(uniqX) }, func() {}
		},
	})
	return cases
}

// sortCase is the bench case of Sort (the sorted keys and the
// permutation) of the keys that makeKeys makes (once, on first use); ref
// gives the host's sort of them.
func sortCase(name string, bytes, items int64, makeKeys func() *accel.Tensor, ref func(*accel.Tensor) func()) benchCase {
	keys := sync.OnceValue(makeKeys)
	return benchCase{
		op: "sort", name: name, bytes: bytes, items: items,
		setup: func(dev *accel.Device) (caseRun, error) {
			dk, err := dev.Upload(keys())
			if err != nil {
				return caseRun{}, err
			}
			call := func() error {
				s, p, err := dev.Sort(dk, false)
				if err == nil {
					s.Release()
					p.Release()
				}
				return err
			}
			return caseRun{call: call, done: dk.Release}, nil
		},
		ref: func() (func(), func()) { return ref(keys()), func() {} },
	}
}

// sortedCopy is a run of the host's sort of a copy of src.
func sortedCopy[T cmp.Ordered](src []T) func() {
	buf := make([]T, len(src))
	return func() {
		copy(buf, src)
		slices.Sort(buf)
	}
}
