package accel_test

import (
	"fmt"

	"github.com/accelkern/accel/accel"
)

// Divides two 2x3 COO tensors: the result holds the union of the patterns
// (y-only entries are 0/y = 0, x-only entries x/0 = +-inf), coalesced.
func ExampleDevice_SparseDivide() {
	// x: (0,1)=6, (1,2)=-1 given twice as -0.5 (duplicates add up); y: (0,1)=3, (1,0)=2
	xi, _ := accel.FromInt64s([]int64{2, 3}, []int64{1, 0, 1, 2, 1, 2})
	xv, _ := accel.FromFloat32s([]int64{3}, []float32{-0.5, 6, -0.5})
	yi, _ := accel.FromInt64s([]int64{2, 2}, []int64{1, 0, 0, 1})
	yv, _ := accel.FromFloat32s([]int64{2}, []float32{2, 3})
	x := accel.HostCOO{Indices: xi, Values: xv, Shape: []int64{2, 3}}
	y := accel.HostCOO{Indices: yi, Values: yv, Shape: []int64{2, 3}}

	dev, err := accel.Open("")
	if err != nil { // no device here: the scalar reference
		out, err := accel.RefSparseBinary(accel.SparseDivOp, x, y)
		if err != nil {
			panic(err)
		}
		fmt.Println(out.Indices.Int64s(), out.Values.Float32s())
		return
	}
	defer dev.Close()
	dx, err := dev.UploadCOO(x)
	if err != nil {
		panic(err)
	}
	defer dx.Release()
	dy, err := dev.UploadCOO(y)
	if err != nil {
		panic(err)
	}
	defer dy.Release()
	out, err := dev.SparseDivide(dx, dy)
	if err != nil {
		panic(err)
	}
	defer out.Release()
	h, err := out.ToHost()
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Indices.Int64s(), h.Values.Float32s())
	// Output: [0 1 1 1 0 2] [2 0 -Inf]
}
