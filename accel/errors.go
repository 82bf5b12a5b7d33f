package accel

import (
	"errors"
	"fmt"

	"github.com/accelkern/accel/host"
)

// Sentinel errors. Every error an op returns wraps one of them, so callers
// can test with errors.Is.
var (
	// ErrInvalidArgument: an argument is out of its domain (negative size,
	// shape mismatch, axis or index out of range, unknown dtype).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrTooLarge: a result would not fit in int64 or in the device's
	// largest allocation.
	ErrTooLarge = errors.New("too large")
	// ErrUnsupported: the device or the op does not support a dtype or feature.
	ErrUnsupported = host.ErrUnsupported
	// ErrNoDevice: no device matched a selector.
	ErrNoDevice = host.ErrNoDevice
	// ErrOutOfMemory: the device could not allocate memory.
	ErrOutOfMemory = host.ErrOutOfMemory
	// ErrClosed: use of a closed device or a released tensor.
	ErrClosed = host.ErrClosed
	// ErrGuardBand: a kernel wrote outside a tensor, into one of the guard
	// bands Options.GuardBytes puts before and after it (a bug in the
	// library: report it).
	ErrGuardBand = errors.New("write outside a tensor")
)

// ArgError describes a rejected argument: which op, which argument, its
// value and the bound it broke. It unwraps to its sentinel (Err). A
// released tensor passed to an op is one (Arg names it, ErrClosed), and so
// is any op on a closed device (Arg "device", ErrClosed).
type ArgError struct {
	Op    string // e.g. "tril_indices"
	Arg   string // e.g. "rows"
	Value string // the offending value, formatted
	Bound string // the rule it broke, e.g. ">= 0"
	Err   error  // ErrInvalidArgument, ErrTooLarge, ErrUnsupported or ErrClosed
}

// Error formats as "op: arg = value: must be bound: sentinel".
func (e *ArgError) Error() string {
	return fmt.Sprintf("%s: %s = %s: must be %s: %v", e.Op, e.Arg, e.Value, e.Bound, e.Err)
}

// Unwrap returns the sentinel.
func (e *ArgError) Unwrap() error { return e.Err }

func argErr(op, arg string, value any, bound string, sentinel error) error {
	return &ArgError{Op: op, Arg: arg, Value: fmt.Sprint(value), Bound: bound, Err: sentinel}
}
