package accel_test

import (
	"fmt"

	"github.com/accelkern/accel/accel"
)

// exampleUpload copies host tensors to dev; release frees them. It panics on an
// error, as the examples do.
func exampleUpload(dev *accel.Device, ts ...*accel.Tensor) (out []*accel.DeviceTensor, release func()) {
	for _, t := range ts {
		d, err := dev.Upload(t)
		if err != nil {
			panic(err)
		}
		out = append(out, d)
	}
	return out, func() {
		for _, d := range out {
			d.Release()
		}
	}
}

// exampleHost copies a device tensor back and releases it.
func exampleHost(t *accel.DeviceTensor, err error) *accel.Tensor {
	if err != nil {
		panic(err)
	}
	defer t.Release()
	h, err := t.ToHost()
	if err != nil {
		panic(err)
	}
	return h
}

// Writes src onto the first superdiagonal of a 3x4 matrix (PyTorch's
// torch.diagonal_scatter(input, src, offset=1)).
func ExampleDevice_DiagonalScatter() {
	input, _ := accel.NewTensor(accel.Float32, 3, 4)
	src, _ := accel.FromFloat32s([]int64{3}, []float32{1, 2, 3})
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("[0 1 0 0 0 0 2 0 0 0 0 3]") // no device here
		return
	}
	defer dev.Close()
	in, release := exampleUpload(dev, input, src)
	defer release()
	out := exampleHost(dev.DiagonalScatter(in[0], in[1], 1, 0, 1))
	fmt.Println(out.Float32s())
	// Output: [0 1 0 0 0 0 2 0 0 0 0 3]
}

// Sums and maxima of src by target along dim 0, with and without the
// input's own values (PyTorch's scatter_reduce).
func ExampleDevice_ScatterReduce() {
	input, _ := accel.FromFloat32s([]int64{3}, []float32{10, 20, 30})
	index, _ := accel.FromInt64s([]int64{5}, []int64{0, 2, 0, 2, 2})
	src, _ := accel.FromFloat32s([]int64{5}, []float32{1, 2, 3, 4, 5})
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("[14 20 41] [3 20 5]") // no device here
		return
	}
	defer dev.Close()
	in, release := exampleUpload(dev, input, index, src)
	defer release()
	sum := exampleHost(dev.ScatterReduce(in[0], 0, in[1], in[2], accel.Sum, true))
	amax := exampleHost(dev.ScatterReduce(in[0], 0, in[1], in[2], accel.Amax, false))
	fmt.Println(sum.Float32s(), amax.Float32s())
	// Output: [14 20 41] [3 20 5]
}

// Puts one value per row at the column its index names, adding to what is
// there (Paddle's put_along_axis with reduce "add"); -1 counts from the
// end of the row. TakeAlongAxis reads them back.
func ExampleDevice_PutAlongAxis() {
	arr, _ := accel.FromInt32s([]int64{2, 3}, []int32{1, 1, 1, 2, 2, 2})
	index, _ := accel.FromInt64s([]int64{2, 1}, []int64{-1, 0})
	values, _ := accel.FromInt32s([]int64{2, 1}, []int32{5, 7})
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("[1 1 6 9 2 2] [6 9]") // no device here
		return
	}
	defer dev.Close()
	in, release := exampleUpload(dev, arr, index, values)
	defer release()
	put, err := dev.PutAlongAxis(in[0], in[1], in[2], 1, accel.Sum, true)
	if err != nil {
		panic(err)
	}
	taken := exampleHost(dev.TakeAlongAxis(put, in[1], 1))
	fmt.Println(exampleHost(put, nil).Int32s(), taken.Int32s())
	// Output: [1 1 6 9 2 2] [6 9]
}

// Sums values by sorted segment id; segment 1 is empty and holds 0.
func ExampleDevice_SegmentReduce() {
	values, _ := accel.FromFloat32s([]int64{5}, []float32{1, 2, 3, 4, 5})
	ids, _ := accel.FromInt64s([]int64{5}, []int64{0, 0, 2, 2, 3})
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("[3 0 7 5]") // no device here
		return
	}
	defer dev.Close()
	in, release := exampleUpload(dev, values, ids)
	defer release()
	out := exampleHost(dev.SegmentReduce(in[0], in[1], accel.Sum, 4))
	fmt.Println(out.Float32s())
	// Output: [3 0 7 5]
}

// Converts an unsorted COO tensor with a duplicate entry to CSR: the
// duplicate is summed, rows and columns come out sorted.
func ExampleDevice_COOToCSR() {
	idx, _ := accel.FromInt64s([]int64{2, 4}, []int64{
		1, 0, 1, 0, // rows
		2, 3, 2, 0, // columns
	})
	vals, _ := accel.FromFloat64s([]int64{4}, []float64{1, 2, 4, 8})
	x := accel.HostCOO{Indices: idx, Values: vals, Shape: []int64{2, 4}}
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("[0 2 3] [0 3 2] [8 2 5]") // no device here
		return
	}
	defer dev.Close()
	if !dev.Info().FP64 {
		fmt.Println("[0 2 3] [0 3 2] [8 2 5]") // no float64 on this device
		return
	}
	dx, err := dev.UploadCOO(x)
	if err != nil {
		panic(err)
	}
	defer dx.Release()
	csr, err := dev.COOToCSR(dx)
	if err != nil {
		panic(err)
	}
	defer csr.Release()
	h, err := csr.ToHost()
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Crows.Int64s(), h.Cols.Int64s(), h.Values.Float64s())
	// Output: [0 2 3] [0 3 2] [8 2 5]
}

// Multiplies two CSR matrices element by element; the result keeps the
// union of both patterns, a one-sided entry as x*0.
func ExampleDevice_SparseBinaryCSR() {
	xc, _ := accel.FromInt64s([]int64{3}, []int64{0, 2, 3})
	xcol, _ := accel.FromInt64s([]int64{3}, []int64{0, 2, 1})
	xv, _ := accel.FromFloat32s([]int64{3}, []float32{2, 3, 4})
	yc, _ := accel.FromInt64s([]int64{3}, []int64{0, 1, 2})
	ycol, _ := accel.FromInt64s([]int64{2}, []int64{2, 0})
	yv, _ := accel.FromFloat32s([]int64{2}, []float32{10, -1})
	x := accel.HostCSR{Crows: xc, Cols: xcol, Values: xv, Shape: []int64{2, 3}}
	y := accel.HostCSR{Crows: yc, Cols: ycol, Values: yv, Shape: []int64{2, 3}}
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("[0 2 4] [0 2 0 1] [0 30 -0 0]") // no device here
		return
	}
	defer dev.Close()
	dx, err := dev.UploadCSR(x)
	if err != nil {
		panic(err)
	}
	defer dx.Release()
	dy, err := dev.UploadCSR(y)
	if err != nil {
		panic(err)
	}
	defer dy.Release()
	out, err := dev.SparseBinaryCSR(accel.SparseMulOp, dx, dy)
	if err != nil {
		panic(err)
	}
	defer out.Release()
	h, err := out.ToHost()
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Crows.Int64s(), h.Cols.Int64s(), h.Values.Float32s())
	// Output: [0 2 4] [0 2 0 1] [0 30 -0 0]
}

func ExampleDevice_IndexAdd() {
	input, _ := accel.FromFloat32s([]int64{3, 2}, []float32{1, 1, 1, 1, 1, 1})
	index, _ := accel.FromInt64s([]int64{3}, []int64{0, 2, 0})
	source, _ := accel.FromFloat32s([]int64{3, 2}, []float32{1, 2, 3, 4, 5, 6})
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("[7 9 1 1 4 5]") // no device here
		return
	}
	defer dev.Close()
	in, release := exampleUpload(dev, input, index, source)
	defer release()
	out := exampleHost(dev.IndexAdd(in[0], 0, in[1], in[2]))
	fmt.Println(out.Float32s())
	// Output: [7 9 1 1 4 5]
}
