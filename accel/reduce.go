package accel

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/accelkern/accel/host/kernels"
	"github.com/accelkern/accel/reference"
)

// Reduction is how ScatterReduce, PutAlongAxis and SegmentReduce fold
// values into a target. Its values are the kernels' RED_* codes (declared
// in host/kernels).
type Reduction int

// The reductions (PyTorch's names; Assign is scatter's plain store).
const (
	Assign Reduction = kernels.RedAssign
	Sum    Reduction = kernels.RedSum
	Prod   Reduction = kernels.RedProd
	Mean   Reduction = kernels.RedMean
	Amax   Reduction = kernels.RedAmax
	Amin   Reduction = kernels.RedAmin
)

var reductionNames = []string{Assign: "assign", Sum: "sum", Prod: "prod", Mean: "mean", Amax: "amax", Amin: "amin"}

// String returns PyTorch's name: "sum", "prod", "mean", "amax", "amin" or
// "assign".
func (r Reduction) String() string {
	if r >= 0 && int(r) < len(reductionNames) {
		return reductionNames[r]
	}
	return fmt.Sprintf("Reduction(%d)", int(r))
}

func (r Reduction) valid() bool { return r >= Assign && r <= Amin }

// ref is the reference package's name of r.
func (r Reduction) ref() string {
	return map[Reduction]string{Assign: reference.ReduceAssign, Sum: reference.ReduceSum, Prod: reference.ReduceProd,
		Mean: reference.ReduceMean, Amax: reference.ReduceAmax, Amin: reference.ReduceAmin}[r]
}

// ParseReduction parses a reduction by name: PyTorch's ("sum", "prod",
// "mean", "amax", "amin"), "assign", and Paddle's aliases ("add",
// "mul"/"multiply"), and segment_reduce's "min" and "max".
func ParseReduction(s string) (Reduction, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "assign":
		return Assign, nil
	case "sum", "add":
		return Sum, nil
	case "prod", "mul", "multiply":
		return Prod, nil
	case "mean":
		return Mean, nil
	case "amax", "max":
		return Amax, nil
	case "amin", "min":
		return Amin, nil
	}
	return 0, fmt.Errorf("reduction %q is not one of sum (add), prod (mul), mean, amax (max), amin (min), assign: %w", s, ErrInvalidArgument)
}

// identityBytes is the identity of a reduction as dt's bytes.
func identityBytes(dt DType, red Reduction) []byte {
	b := make([]byte, dt.Size())
	put := func(u uint64) {
		if len(b) == 4 {
			binary.LittleEndian.PutUint32(b, uint32(u))
		} else {
			binary.LittleEndian.PutUint64(b, u)
		}
	}
	switch red {
	case Prod:
		switch dt {
		case Float32:
			put(uint64(math.Float32bits(1)))
		case Float64:
			put(math.Float64bits(1))
		default:
			put(1)
		}
	case Amax: // lowest
		switch dt {
		case Float32:
			put(uint64(math.Float32bits(float32(math.Inf(-1)))))
		case Float64:
			put(math.Float64bits(math.Inf(-1)))
		case Int32:
			put(uint64(uint32(1 << 31)))
		default:
			put(1 << 63)
		}
	case Amin: // highest
		switch dt {
		case Float32:
			put(uint64(math.Float32bits(float32(math.Inf(1)))))
		case Float64:
			put(math.Float64bits(math.Inf(1)))
		case Int32:
			put(math.MaxInt32)
		default:
			put(math.MaxInt64)
		}
	}
	return b
}

// dtVariant is the variant of the arithmetic kernels (scatter, segment,
// scatter_bwd) for dt.
func dtVariant(dt DType) string {
	return map[DType]string{Int32: "i32", Int64: "i64", Float32: "f32", Float64: "f64"}[dt]
}
