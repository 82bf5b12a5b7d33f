package accel

import (
	"fmt"
	"strings"
)

// DType is a tensor element type.
type DType int

// The element types. Float16 and BFloat16 are reserved: tensors of them can
// be described and stored on the host, and ops reject them with
// ErrUnsupported until kernels for them land.
const (
	Int32 DType = iota + 1
	Int64
	Float32
	Float64
	Float16
	BFloat16
	Uint32
	Uint64
	Bool
)

var dtypeInfo = map[DType]struct {
	name string
	size int
}{
	Int32: {"int32", 4}, Int64: {"int64", 8}, Float32: {"float32", 4}, Float64: {"float64", 8},
	Float16: {"float16", 2}, BFloat16: {"bfloat16", 2}, Uint32: {"uint32", 4}, Uint64: {"uint64", 8},
	Bool: {"bool", 1},
}

// Size returns the size of one element in bytes (0 for an invalid DType).
func (d DType) Size() int { return dtypeInfo[d].size }

// String returns the NumPy-style name, e.g. "int64".
func (d DType) String() string {
	if i, ok := dtypeInfo[d]; ok {
		return i.name
	}
	return fmt.Sprintf("DType(%d)", int(d))
}

// ParseDType parses a NumPy-style name such as "int32" or "float64".
func ParseDType(s string) (DType, error) {
	for d, i := range dtypeInfo {
		if i.name == strings.ToLower(strings.TrimSpace(s)) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("dtype %q is not one of int32, int64, uint32, uint64, float32, float64, float16, bfloat16, bool: %w", s, ErrInvalidArgument)
}
