package accel

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

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

// ParseReduction parses a reduction by its exact name, the one String
// returns: PyTorch's "sum", "prod", "mean", "amax", "amin", and "assign"
// (scatter's plain store, which only Scatter and PutAlongAxis take). Other
// spellings (Paddle's "add" and "mul", segment_reduce's "max" and "min",
// other cases, spaces) are rejected with ErrInvalidArgument: a name means
// one reduction everywhere.
func ParseReduction(s string) (Reduction, error) {
	for r, name := range reductionNames {
		if s == name {
			return Reduction(r), nil
		}
	}
	return 0, argErr("parse_reduction", "name", strconv.Quote(s), "one of sum, prod, mean, amax, amin, assign", ErrInvalidArgument)
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
