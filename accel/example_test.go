package accel_test

import (
	"errors"
	"fmt"
	"math"

	"github.com/accelkern/accel/accel"
)

// Computes tril_indices on the host with the scalar reference.
func ExampleRefTrilIndices() {
	t, err := accel.RefTrilIndices(3, 3, 0, accel.Int64)
	if err != nil {
		panic(err)
	}
	v := t.Int64s()
	fmt.Println(t.Shape(), v[:6], v[6:])
	// Output: [2 6] [0 1 1 2 2 2] [0 0 1 0 1 2]
}

// Runs triu_indices on the default device and copies the result back.
func ExampleDevice_TriuIndices() {
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("[2 6] [0 0 0 1 1 2] [1 2 3 2 3 3]") // no device here
		return
	}
	defer dev.Close()
	idx, err := dev.TriuIndices(3, 4, 1, accel.Int64)
	if err != nil {
		panic(err)
	}
	defer idx.Release()
	h, err := idx.ToHost()
	if err != nil {
		panic(err)
	}
	v := h.Int64s()
	fmt.Println(h.Shape(), v[:6], v[6:])
	// Output: [2 6] [0 0 0 1 1 2] [1 2 3 2 3 3]
}

// Writes into an existing device tensor, so a loop allocates nothing.
func ExampleDevice_TrilIndicesInto() {
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("[0 1 1] [0 0 1]")
		return
	}
	defer dev.Close()
	out, err := dev.TrilIndices(2, 2, 0, accel.Int32)
	if err != nil {
		panic(err)
	}
	defer out.Release()
	for i := 0; i < 3; i++ {
		if err := dev.TrilIndicesInto(out, 2, 2, 0); err != nil {
			panic(err)
		}
	}
	h, _ := out.ToHost()
	fmt.Println(h.Int32s()[:3], h.Int32s()[3:])
	// Output: [0 1 1] [0 0 1]
}

// Bad arguments are rejected before any device work, with an error naming
// the argument and the bound.
func ExampleArgError() {
	_, err := accel.RefTrilIndices(-1, 3, 0, accel.Int64)
	var ae *accel.ArgError
	fmt.Println(errors.Is(err, accel.ErrInvalidArgument), errors.As(err, &ae), ae.Arg)
	fmt.Println(err)
	// Output:
	// true true row
	// tril_indices: row = -1: must be >= 0: invalid argument
}

// Sorts float keys on the default device: NaN last, equal keys in input
// order, and the permutation that sorts them.
func ExampleDevice_Sort() {
	keys, _ := accel.FromFloat32s([]int64{6}, []float32{2, float32(math.NaN()), -1, 2, float32(math.Inf(-1)), 0})
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("[-Inf -1 0 2 2 NaN] [4 2 5 0 3 1]") // no device here
		return
	}
	defer dev.Close()
	dk, err := dev.Upload(keys)
	if err != nil {
		panic(err)
	}
	defer dk.Release()
	sorted, perm, err := dev.Sort(dk, false)
	if err != nil {
		panic(err)
	}
	defer sorted.Release()
	defer perm.Release()
	s, _ := sorted.ToHost()
	p, _ := perm.ToHost()
	fmt.Println(s.Float32s(), p.Int64s())
	// Output: [-Inf -1 0 2 2 NaN] [4 2 5 0 3 1]
}

// Unique values, the inverse index and the counts on the default device.
func ExampleDevice_Unique() {
	x, _ := accel.FromInt64s([]int64{7}, []int64{3, 1, 3, 3, -2, 1, 9})
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("[-2 1 3 9] [2 1 2 2 0 1 3] [1 2 3 1]")
		return
	}
	defer dev.Close()
	dx, err := dev.Upload(x)
	if err != nil {
		panic(err)
	}
	defer dx.Release()
	v, inv, c, err := dev.Unique(dx)
	if err != nil {
		panic(err)
	}
	hv, _ := v.ToHost()
	hi, _ := inv.ToHost()
	hc, _ := c.ToHost()
	fmt.Println(hv.Int64s(), hi.Int64s(), hc.Int64s())
	// Output: [-2 1 3 9] [2 1 2 2 0 1 3] [1 2 3 1]
}

// Prefix sums on the host reference (the device's Cumsum is the same call
// on a DeviceTensor).
func ExampleRefCumsum() {
	x, _ := accel.FromInt32s([]int64{5}, []int32{1, 2, 3, 4, 5})
	in, _ := accel.RefCumsum(x, false)
	ex, _ := accel.RefCumsum(x, true)
	fmt.Println(in.Int32s(), ex.Int32s())
	// Output: [1 3 6 10 15] [0 1 3 6 10]
}

// The gradients of an amax scatter_reduce: tied maxima share the gradient,
// an untouched position passes it through, inputs that lose get 0.
func ExampleDevice_ScatterReduceBackward() {
	input, _ := accel.FromFloat32s([]int64{3}, []float32{1, 5, 2})
	index, _ := accel.FromInt64s([]int64{4}, []int64{0, 0, 2, 2})
	src, _ := accel.FromFloat32s([]int64{4}, []float32{3, 3, 1, 7})
	grad, _ := accel.FromFloat32s([]int64{3}, []float32{1, 1, 1})
	dev, err := accel.Open("")
	if err != nil { // no device here: the host form computes the same
		out, gi, gs, err := accel.RefScatterReduceBackward(input, 0, index, src, accel.Amax, true, grad)
		if err != nil {
			panic(err)
		}
		fmt.Println(out.Float32s(), gi.Float32s(), gs.Float32s())
		return
	}
	defer dev.Close()
	ts := make([]*accel.DeviceTensor, 4)
	for i, t := range []*accel.Tensor{input, index, src, grad} {
		if ts[i], err = dev.Upload(t); err != nil {
			panic(err)
		}
		defer ts[i].Release()
	}
	out, gi, gs, err := dev.ScatterReduceBackward(ts[0], 0, ts[1], ts[2], accel.Amax, true, ts[3])
	if err != nil {
		panic(err)
	}
	var h [3]*accel.Tensor
	for i, t := range []*accel.DeviceTensor{out, gi, gs} {
		defer t.Release()
		if h[i], err = t.ToHost(); err != nil {
			panic(err)
		}
	}
	fmt.Println(h[0].Float32s(), h[1].Float32s(), h[2].Float32s())
	// Output: [3 5 7] [0 1 0] [0.5 0.5 0 1]
}

// Parses reductions by PyTorch's names, strictly: Paddle's "add" and
// segment_reduce's "max" are not names of a Reduction.
func ExampleParseReduction() {
	for _, name := range []string{"sum", "prod", "amax", "amin"} {
		r, err := accel.ParseReduction(name)
		if err != nil {
			panic(err)
		}
		fmt.Println(name, r, r == accel.Sum)
	}
	for _, name := range []string{"avg", "add", "max"} {
		_, err := accel.ParseReduction(name)
		fmt.Println(name, errors.Is(err, accel.ErrInvalidArgument))
	}
	// Output:
	// sum sum true
	// prod prod false
	// amax amax false
	// amin amin false
	// avg true
	// add true
	// max true
}

// Chains ops on the device without waiting for it: the scatter waits once,
// to report its index validation, the cumsum queues behind it, and
// ToHost waits for the result. Stats counts the host's waits.
func ExampleDevice_Stats() {
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("[0 2 2 3]\nwaits: 2") // no device here
		return
	}
	defer dev.Close()
	in, _ := accel.FromInt64s([]int64{4}, []int64{0, 0, 0, 0})
	idx, _ := accel.FromInt64s([]int64{3}, []int64{1, 1, 3})
	src, _ := accel.FromInt64s([]int64{3}, []int64{1, 1, 1})
	var ts []*accel.DeviceTensor
	for _, h := range []*accel.Tensor{in, idx, src} {
		t, err := dev.Upload(h)
		if err != nil {
			panic(err)
		}
		defer t.Release()
		ts = append(ts, t)
	}
	before := dev.Stats()
	sum, err := dev.ScatterReduce(ts[0], 0, ts[1], ts[2], accel.Sum, true) // [0 2 0 1]
	if err != nil {
		panic(err)
	}
	defer sum.Release()
	scan, err := dev.Cumsum(sum, false) // queued behind the scatter
	if err != nil {
		panic(err)
	}
	defer scan.Release()
	h, err := scan.ToHost()
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Int64s())
	fmt.Println("waits:", dev.Stats().Sub(before).Waits)
	// Output:
	// [0 2 2 3]
	// waits: 2
}

// Copies a tensor on the device into a zero-filled one of the same dtype
// and element count, and waits for both with Sync.
func ExampleDevice_Copy() {
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("[0 0 0 0 0 0] [1 2 3 4 5 6]") // no device here
		return
	}
	defer dev.Close()
	dst, err := dev.Zeros(accel.Int32, 2, 3)
	if err != nil {
		panic(err)
	}
	defer dst.Release()
	z, _ := dst.ToHost()
	src, _ := accel.FromInt32s([]int64{6}, []int32{1, 2, 3, 4, 5, 6})
	s, err := dev.Upload(src)
	if err != nil {
		panic(err)
	}
	defer s.Release()
	if err := dev.Copy(dst, s); err != nil {
		panic(err)
	}
	if err := dev.Sync(); err != nil {
		panic(err)
	}
	h, _ := dst.ToHost()
	fmt.Println(z.Int32s(), h.Int32s())
	// Output: [0 0 0 0 0 0] [1 2 3 4 5 6]
}

// CopyBy names how a copy runs: the driver's buffer copy or the library's
// copy kernel give the same bytes (accel bench times both for the
// device's ceiling).
func ExampleDevice_CopyBy() {
	dev, err := accel.Open("")
	if err != nil {
		fmt.Println("[1 2 3 4 5 6] [1 2 3 4 5 6]") // no device here
		return
	}
	defer dev.Close()
	src, _ := accel.FromFloat32s([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	s, err := dev.Upload(src)
	if err != nil {
		panic(err)
	}
	defer s.Release()
	for _, how := range []accel.CopyMethod{accel.CopyDriver, accel.CopyKernel} {
		dst, err := dev.Zeros(accel.Float32, 2, 3)
		if err != nil {
			panic(err)
		}
		if err := dev.CopyBy(dst, s, how); err != nil {
			panic(err)
		}
		h, _ := dst.ToHost()
		fmt.Print(h.Float32s())
		if how == accel.CopyDriver {
			fmt.Print(" ")
		}
		dst.Release()
	}
	fmt.Println()
	// Output: [1 2 3 4 5 6] [1 2 3 4 5 6]
}
