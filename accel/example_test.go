package accel_test

import (
	"errors"
	"fmt"

	"github.com/accelkern/accel/accel"
)

// Computes tril_indices on the host with the scalar reference.
func ExampleTrilIndices() {
	t, err := accel.TrilIndices(3, 3, 0, accel.Int64)
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
	_, err := accel.TrilIndices(-1, 3, 0, accel.Int64)
	var ae *accel.ArgError
	fmt.Println(errors.Is(err, accel.ErrInvalidArgument), errors.As(err, &ae), ae.Arg)
	fmt.Println(err)
	// Output:
	// true true row
	// tril_indices: row = -1: must be >= 0: invalid argument
}

// Lists the ops the CLI and the batch runner accept.
func ExampleOps() {
	for _, op := range accel.Ops() {
		fmt.Println(op.Name, op.Outputs)
	}
	// Output:
	// diagonal_scatter [out]
	// put_along_axis [out taken]
	// scatter [out]
	// scatter_reduce [out]
	// take_along_axis [out]
	// tril_indices [out]
	// triu_indices [out]
}

// Runs an op by name with string parameters, as `accel run` does.
func ExampleRunOp() {
	out, err := accel.RunOp(nil, "tril_indices", map[string]string{"row": "2", "col": "3", "offset": "1"}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(out["out"].Shape(), out["out"].Int64s())
	// Output: [2 5] [0 0 1 1 1 0 1 0 1 2]
}
