package accel

import (
	"fmt"
	"math"
	"unsafe"
)

// Tensor is a dense, row-major host tensor. Its data is little-endian
// element bytes, 8-byte aligned.
type Tensor struct {
	dtype DType
	shape []int64
	data  []byte
}

// NumElements returns the product of shape, or an error when a dimension is
// negative or the product overflows int64.
func NumElements(shape []int64) (int64, error) {
	n := int64(1)
	for i, s := range shape {
		if s < 0 {
			return 0, argErr("shape", fmt.Sprintf("shape[%d]", i), s, ">= 0", ErrInvalidArgument)
		}
		if s != 0 && n > math.MaxInt64/s {
			return 0, argErr("shape", "shape", fmt.Sprint(shape), "a product that fits in int64", ErrTooLarge)
		}
		n *= s
	}
	return n, nil
}

func alignedBytes(n int64) []byte {
	words := make([]uint64, (n+7)/8)
	if len(words) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

// NewTensor returns a zeroed host tensor.
func NewTensor(dtype DType, shape ...int64) (*Tensor, error) {
	if dtype.Size() == 0 {
		return nil, argErr("tensor", "dtype", dtype, "a known dtype", ErrInvalidArgument)
	}
	n, err := NumElements(shape)
	if err != nil {
		return nil, err
	}
	if n > math.MaxInt64/int64(dtype.Size()) {
		return nil, argErr("tensor", "shape", fmt.Sprint(shape), "at most MaxInt64 bytes", ErrTooLarge)
	}
	return &Tensor{dtype: dtype, shape: append([]int64(nil), shape...), data: alignedBytes(n * int64(dtype.Size()))}, nil
}

// FromBytes wraps little-endian element bytes (copied) as a tensor.
func FromBytes(dtype DType, shape []int64, data []byte) (*Tensor, error) {
	t, err := NewTensor(dtype, shape...)
	if err != nil {
		return nil, err
	}
	if len(data) != len(t.data) {
		return nil, argErr("tensor", "data", fmt.Sprintf("%d bytes", len(data)), fmt.Sprintf("%d bytes for %s%v", len(t.data), dtype, shape), ErrInvalidArgument)
	}
	copy(t.data, data)
	return t, nil
}

func fromSlice[T any](dtype DType, shape []int64, v []T) (*Tensor, error) {
	var zero T
	return FromBytes(dtype, shape, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(zero))))
}

// FromInt64s returns a tensor of shape holding a copy of v.
func FromInt64s(shape []int64, v []int64) (*Tensor, error) { return fromSlice(Int64, shape, v) }

// FromInt32s returns a tensor of shape holding a copy of v.
func FromInt32s(shape []int64, v []int32) (*Tensor, error) { return fromSlice(Int32, shape, v) }

// FromFloat32s returns a tensor of shape holding a copy of v.
func FromFloat32s(shape []int64, v []float32) (*Tensor, error) { return fromSlice(Float32, shape, v) }

// FromFloat64s returns a tensor of shape holding a copy of v.
func FromFloat64s(shape []int64, v []float64) (*Tensor, error) { return fromSlice(Float64, shape, v) }

// DType returns the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Shape returns a copy of the shape.
func (t *Tensor) Shape() []int64 { return append([]int64(nil), t.shape...) }

// Len returns the number of elements.
func (t *Tensor) Len() int64 { return int64(len(t.data) / t.dtype.Size()) }

// Bytes returns the element bytes (shared, not copied).
func (t *Tensor) Bytes() []byte { return t.data }

func view[T any](t *Tensor, want DType) []T {
	if t.dtype != want {
		panic(fmt.Sprintf("accel: tensor is %s, not %s", t.dtype, want))
	}
	var zero T
	if len(t.data) == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&t.data[0])), len(t.data)/int(unsafe.Sizeof(zero)))
}

// Int64s returns the elements of an Int64 tensor (shared, not copied). It
// panics on another dtype.
func (t *Tensor) Int64s() []int64 { return view[int64](t, Int64) }

// Int32s returns the elements of an Int32 tensor (shared). It panics on another dtype.
func (t *Tensor) Int32s() []int32 { return view[int32](t, Int32) }

// Float32s returns the elements of a Float32 tensor (shared). It panics on another dtype.
func (t *Tensor) Float32s() []float32 { return view[float32](t, Float32) }

// Float64s returns the elements of a Float64 tensor (shared). It panics on another dtype.
func (t *Tensor) Float64s() []float64 { return view[float64](t, Float64) }

// Int64At returns element i of an integer tensor widened to int64.
func (t *Tensor) Int64At(i int64) int64 {
	switch t.dtype {
	case Int32:
		return int64(t.Int32s()[i])
	case Int64:
		return t.Int64s()[i]
	}
	panic(fmt.Sprintf("accel: Int64At on %s tensor", t.dtype))
}

// String describes the tensor, e.g. "int64[2 6]".
func (t *Tensor) String() string { return fmt.Sprintf("%s%v", t.dtype, t.shape) }

// Uint32s returns the elements of a Uint32 tensor (shared). It panics on another dtype.
func (t *Tensor) Uint32s() []uint32 { return view[uint32](t, Uint32) }

// Uint64s returns the elements of a Uint64 tensor (shared). It panics on another dtype.
func (t *Tensor) Uint64s() []uint64 { return view[uint64](t, Uint64) }

// Bools returns the elements of a Bool tensor as bytes, nonzero meaning
// true (shared). It panics on another dtype.
func (t *Tensor) Bools() []byte { return view[byte](t, Bool) }
