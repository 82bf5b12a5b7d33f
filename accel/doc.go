// Package accel is the public API of a library of vendor-neutral GPU
// compute kernels: tensor-index and sparse kernels written once in OpenCL C
// and once as Vulkan compute shaders, run on AMD, Intel and NVIDIA GPUs, or
// on a plain CPU through PoCL (OpenCL) and Mesa lavapipe (Vulkan), and
// checked against a scalar Go reference.
//
// Open a device, run ops on it, and copy results back:
//
//	dev, err := accel.Open("")           // $ACCEL_DEVICE, else the best device
//	defer dev.Close()
//	idx, err := dev.TrilIndices(4, 4, 0, accel.Int64) // a DeviceTensor
//	defer idx.Release()
//	host, err := idx.ToHost()            // a Tensor; host.Int64s() holds [2, N]
//
// Selectors name a backend and a device: "opencl", "vulkan:0",
// "vulkan:llvmpipe", "opencl:NVIDIA". Device methods are safe for concurrent
// use. Results stay on the device as DeviceTensors, so ops chain without
// host round trips; the Into forms write into an existing tensor so loops
// allocate nothing. Ops queue their work and return without waiting for the
// device; the host waits only where it needs data (ToHost, a count an op
// must read, the index validation an op reports once at its end) or on
// Device.Sync. Device.Stats counts the submits and waits.
//
// Errors wrap the sentinels ErrInvalidArgument, ErrTooLarge,
// ErrUnsupported, ErrNoDevice, ErrOutOfMemory and ErrClosed; argument errors
// are *ArgError values naming the op, the argument and the bound it broke,
// and are reported before any device work.
//
// The Ref functions (RefTrilIndices, RefScatterReduce, ...) compute each op
// on the host with the scalar reference, on host Tensors.
package accel
