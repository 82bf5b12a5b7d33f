package accel_test

import (
	"fmt"

	"github.com/accelkern/accel/accel"
)

// The index pairs of a 1-D sparse convolution (kernel 3, padding 1) over
// the active sites x = 3 and x = 0 of a length-5 line: the outputs are
// sorted, and each offset lists its (input row, output row) pairs in
// input order, padded with -1.
func ExampleDevice_IndicePairs() {
	sites, _ := accel.FromInt32s([]int64{2, 2}, []int32{0, 3, 0, 0}) // rows (batch, x)
	p := accel.SparseConvParams{BatchSize: 1, SpatialShape: []int64{5}, KSize: []int64{3}, Padding: []int64{1}}
	show := func(pairs, outs, num *accel.Tensor, shape []int64) {
		fmt.Println("out_indices", outs.Int32s(), "shape", shape)
		fmt.Println("indice_num", num.Int32s())
		fmt.Println("indice_pairs", pairs.Int32s())
	}
	dev, err := accel.Open("")
	if err != nil { // no device here: the host reference gives the same
		r, err := accel.RefIndicePairs(sites, p)
		if err != nil {
			panic(err)
		}
		show(r.Pairs, r.OutIndices, r.Num, r.OutSpatialShape)
		return
	}
	defer dev.Close()
	ds, err := dev.Upload(sites)
	if err != nil {
		panic(err)
	}
	defer ds.Release()
	r, err := dev.IndicePairs(ds, p)
	if err != nil {
		panic(err)
	}
	defer r.Release()
	pairs, _ := r.Pairs.ToHost()
	outs, _ := r.OutIndices.ToHost()
	num, _ := r.Num.ToHost()
	show(pairs, outs, num, r.OutSpatialShape)
	// Output:
	// out_indices [0 0 0 1 0 2 0 3 0 4] shape [5]
	// indice_num [2 2 1]
	// indice_pairs [0 1 4 1 0 1 3 0 0 -1 2 -1]
}
