package bench

import (
	"math/rand"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/reference"
)

// Bench cases of the hash table (issue 6), in Mkeys/s: insert of 8M random
// int64 keys into a table made for 8M (16M slots), InsertDense of 8M keys
// with 1M distinct values (ids returned), and lookup of 8M keys of which
// half are in the table. Each warm run starts from an emptied table; the
// reference is reference.HashTable (scalar open addressing, emptied in its
// timed run too). --quick runs 1/16 of each.
func hashCases(quick bool) []benchCase {
	n, distinct, tag := int64(8<<20), int64(1<<20), "8M"
	if quick {
		n, distinct, tag = 512<<10, 64<<10, "512K_quick"
	}
	var keys, dupKeys, queries *accel.Tensor
	prep := func() {
		if keys != nil {
			return
		}
		rng := rand.New(rand.NewSource(6))
		keys, _ = accel.NewTensor(accel.Int64, n)
		for i := range keys.Int64s() {
			keys.Int64s()[i] = int64(rng.Uint64())
		}
		dupKeys, _ = accel.NewTensor(accel.Int64, n)
		for i := range dupKeys.Int64s() {
			dupKeys.Int64s()[i] = keys.Int64s()[rng.Int63n(distinct)]
		}
		queries, _ = accel.NewTensor(accel.Int64, n)
		for i := range queries.Int64s() {
			if i%2 == 0 {
				queries.Int64s()[i] = keys.Int64s()[rng.Int63n(n)]
			} else {
				queries.Int64s()[i] = int64(rng.Uint64())
			}
		}
	}
	// insertCase times an insert (dense or not) of x into an emptied table.
	insertCase := func(name string, x func() *accel.Tensor, dense bool) benchCase {
		return benchCase{
			op: "hash_table", name: name, bytes: n * (8 + 16 + 8), items: n,
			setup: func(dev *accel.Device) (caseRun, error) {
				prep()
				dk, err := dev.Upload(x())
				if err != nil {
					return caseRun{}, err
				}
				tab, err := dev.NewHashTable(n)
				if err != nil {
					dk.Release()
					return caseRun{}, err
				}
				call := func() error {
					if !dense {
						return tab.Insert(dk)
					}
					ids, _, err := tab.InsertDense(dk)
					if err == nil {
						ids.Release()
					}
					return err
				}
				done := func() { tab.Release(); dk.Release() }
				return caseRun{call: call, prep: tab.Reset, done: done}, nil
			},
			ref: func() (func(), func()) {
				prep()
				h := reference.NewHashTable(n)
				var ids []int64
				if dense {
					ids = make([]int64, n)
				}
				return func() {
					h.Reset()
					h.InsertDense(x().Int64s(), ids)
				}, func() {}
			},
		}
	}
	return []benchCase{
		insertCase("insert"+tag, func() *accel.Tensor { return keys }, false),
		insertCase("insert_dense"+tag+"_dups", func() *accel.Tensor { return dupKeys }, true),
		{
			op: "hash_table", name: "lookup" + tag, bytes: n * (8 + 16 + 8), items: n,
			setup: func(dev *accel.Device) (caseRun, error) {
				prep()
				tab, err := dev.NewHashTable(n)
				if err != nil {
					return caseRun{}, err
				}
				dk, err := dev.Upload(keys)
				if err == nil {
					err = tab.Insert(dk)
					dk.Release()
				}
				var dq *accel.DeviceTensor
				if err == nil {
					dq, err = dev.Upload(queries)
				}
				if err != nil {
					tab.Release()
					return caseRun{}, err
				}
				call := func() error {
					out, err := tab.Lookup(dq)
					if err == nil {
						out.Release()
					}
					return err
				}
				done := func() { tab.Release(); dq.Release() }
				return caseRun{call: call, done: done}, nil
			},
			ref: func() (func(), func()) {
				prep()
				h := reference.NewHashTable(n)
				h.InsertDense(keys.Int64s(), nil)
				out := make([]int64, n)
				return func() { h.Lookup(queries.Int64s(), out) }, func() {}
			},
		},
	}
}
