package accel_test

import (
	"fmt"

	"github.com/accelkern/accel/accel"
)

// Builds the kernels of the scatter family and of cumsum ahead, at start,
// so that their first calls do not wait for the driver's compiler.
func ExampleDevice_Warm() {
	fmt.Println(accel.WarmOps()[:6]) // the families; then every op
	dev, err := accel.Open("")
	if err != nil { // no device here: nothing to build
		return
	}
	defer dev.Close()
	if err := dev.Warm("scatter", "cumsum"); err != nil {
		panic(err)
	}
	// ... dev.ScatterReduce(...) and dev.Cumsum(...) of float32 values
	// and int64 indices now find their kernels built.
	// Output: [diag indice prim scatter sparse tri]
}
