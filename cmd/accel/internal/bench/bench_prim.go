package bench

import (
	"math/rand"
	"slices"

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

	var sortKeys *accel.Tensor
	makeSort := func() {
		if sortKeys == nil {
			sortKeys, _ = accel.NewTensor(accel.Uint32, nSort)
			rng := rand.New(rand.NewSource(2))
			for i := range sortKeys.Uint32s() {
				sortKeys.Uint32s()[i] = rng.Uint32()
			}
		}
	}
	cases = append(cases, benchCase{
		op: "sort", name: "uint32_16M_perm" + tag, bytes: nSort * (4 + 4 + 8), items: nSort,
		setup: func(dev *accel.Device) (caseRun, error) {
			makeSort()
			dk, err := dev.Upload(sortKeys)
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
		ref: func() (func(), func()) {
			makeSort()
			buf := make([]uint32, nSort)
			return func() {
				copy(buf, sortKeys.Uint32s())
				slices.Sort(buf)
			}, func() {}
		},
	})

	// int64 keys below 2^20 (indices, PyTorch's default integer dtype):
	// five of the sort's eight 8-bit digits are one for every key, which
	// the GPU plans' sweep skips (knob RADIX_SKIP)
	var smallKeys *accel.Tensor
	makeSmall := func() {
		if smallKeys == nil {
			smallKeys, _ = accel.NewTensor(accel.Int64, nSort)
			rng := rand.New(rand.NewSource(4))
			for i := range smallKeys.Int64s() {
				smallKeys.Int64s()[i] = rng.Int63n(distinct)
			}
		}
	}
	cases = append(cases, benchCase{
		op: "sort", name: "int64_16M_below1M" + tag, bytes: nSort * (8 + 8 + 8), items: nSort,
		setup: func(dev *accel.Device) (caseRun, error) {
			makeSmall()
			dk, err := dev.Upload(smallKeys)
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
		ref: func() (func(), func()) {
			makeSmall()
			buf := make([]int64, nSort)
			return func() {
				copy(buf, smallKeys.Int64s())
				slices.Sort(buf)
			}, func() {}
		},
	})

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
