// Package ops is the command line's registry of ops: each op by name, with
// its string parameters, named host inputs and outputs, run on a device
// through the public API of package accel (or on the host with its
// reference entry points). The CLI's single runs, batches, selftest and
// bench table read it.
package ops

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/accelkern/accel/accel"
)

// ParamSpec describes one parameter of an op as the CLI and batch runner
// take it: by name, as a string.
type ParamSpec struct {
	Name     string
	Default  string // "" with Required false means "absent"
	Required bool
	Doc      string
}

// OpSpec describes an op for the CLI (`accel run`), the batch runner and
// `make run`: its parameters, input names and output names.
type OpSpec struct {
	Name    string
	Doc     string
	Params  []ParamSpec
	Inputs  []string
	Outputs []string
	// IO, when set, gives the inputs an invocation takes and the outputs
	// it writes for its parameters (ops whose arrays depend on one, such
	// as a sparse format); Inputs and Outputs then list every name.
	IO func(args map[string]string) (inputs, outputs []string)

	run func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error)
}

var registry = map[string]*OpSpec{}

func register(op *OpSpec) { registry[op.Name] = op }

// Ops lists every op, sorted by name.
func Ops() []OpSpec {
	out := make([]OpSpec, 0, len(registry))
	for _, op := range registry {
		out = append(out, *op)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Run runs the op called name on dev, or on the host with the scalar
// reference when dev is nil, with string parameters and host inputs, and
// returns its host outputs by name. Unknown ops, unknown or malformed
// parameters and missing or extra inputs are errors wrapping
// accel.ErrInvalidArgument, reported before any device work; the op itself
// checks its inputs once they are uploaded, before any kernel runs.
func Run(dev *accel.Device, name string, args map[string]string, inputs map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
	op, ok := registry[name]
	if !ok {
		names := make([]string, 0, len(registry))
		for n := range registry {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, argErr("run", "op", strconv.Quote(name), "one of "+strings.Join(names, ", "), accel.ErrInvalidArgument)
	}
	p := params{op: name, vals: map[string]string{}}
	known := map[string]bool{}
	for _, ps := range op.Params {
		known[ps.Name] = true
		if v, ok := args[ps.Name]; ok {
			p.vals[ps.Name] = v
		} else if ps.Required {
			return nil, argErr(name, ps.Name, "missing", "given (required parameter)", accel.ErrInvalidArgument)
		} else if ps.Default != "" {
			p.vals[ps.Name] = ps.Default
		}
	}
	for k := range args {
		if !known[k] {
			return nil, argErr(name, k, args[k], "a parameter of "+name+" ("+paramNames(op)+")", accel.ErrInvalidArgument)
		}
	}
	ins, _ := op.IOFor(args)
	for _, in := range ins {
		if inputs[in] == nil {
			return nil, argErr(name, "input "+in, "missing", "given", accel.ErrInvalidArgument)
		}
	}
	for k := range inputs {
		found := false
		for _, in := range ins {
			found = found || in == k
		}
		if !found {
			return nil, argErr(name, "input "+k, "given", "one of ["+strings.Join(ins, ", ")+"]", accel.ErrInvalidArgument)
		}
	}
	return op.run(dev, p, inputs)
}

// IOFor returns the inputs an invocation of the op with args takes and
// the outputs it writes.
func (op OpSpec) IOFor(args map[string]string) (inputs, outputs []string) {
	if op.IO != nil {
		return op.IO(args)
	}
	return op.Inputs, op.Outputs
}

func paramNames(op *OpSpec) string {
	var s []string
	for _, p := range op.Params {
		s = append(s, p.Name)
	}
	return strings.Join(s, ", ")
}

// params holds an op's string parameters and parses them with errors that
// name the parameter.
type params struct {
	op   string
	vals map[string]string
}

func (p params) has(name string) bool { _, ok := p.vals[name]; return ok }

func (p params) int64(name string) (int64, error) {
	v := strings.TrimSpace(p.vals[name])
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, argErr(p.op, name, strconv.Quote(v), "an integer in [-2^63, 2^63)", accel.ErrInvalidArgument)
	}
	return n, nil
}

// int64s parses a list parameter: integers separated by commas on the
// command line (--param ksize=3,3,3), a JSON array in a batch job (which
// the batch runner passes in the same form). An empty value is an empty
// list.
func (p params) int64s(name string) ([]int64, error) {
	v := strings.TrimSpace(p.vals[name])
	if v == "" {
		return []int64{}, nil
	}
	parts := strings.Split(v, ",")
	out := make([]int64, len(parts))
	for i, s := range parts {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, argErr(p.op, name, strconv.Quote(v), "a comma-separated list of integers", accel.ErrInvalidArgument)
		}
		out[i] = n
	}
	return out, nil
}

func (p params) bool(name string) (bool, error) {
	v := strings.TrimSpace(p.vals[name])
	switch strings.ToLower(v) {
	case "1", "true", "yes":
		return true, nil
	case "0", "false", "no", "":
		return false, nil
	}
	return false, argErr(p.op, name, strconv.Quote(v), "true or false", accel.ErrInvalidArgument)
}

func (p params) dtype(name string) (accel.DType, error) {
	d, err := accel.ParseDType(p.vals[name])
	if err != nil {
		return 0, argErr(p.op, name, strconv.Quote(p.vals[name]), "a dtype name such as int64", accel.ErrInvalidArgument)
	}
	return d, nil
}

// reduction parses a reduction parameter (accel.ParseReduction's names).
func (p params) reduction(name string) (accel.Reduction, error) {
	r, err := accel.ParseReduction(p.vals[name])
	if err != nil {
		return 0, argErr(p.op, name, strconv.Quote(p.vals[name]), "a reduction such as sum, prod, mean, amax, amin", accel.ErrInvalidArgument)
	}
	return r, nil
}

// argErr is accel's argument error, for the registry's own checks.
func argErr(op, arg string, value any, bound string, sentinel error) error {
	return &accel.ArgError{Op: op, Arg: arg, Value: fmt.Sprint(value), Bound: bound, Err: sentinel}
}

// download converts a device result to a host tensor and releases it.
func download(t *accel.DeviceTensor, err error) (*accel.Tensor, error) {
	if err != nil {
		return nil, err
	}
	defer t.Release()
	return t.ToHost()
}

func init() {
	for _, upper := range []bool{false, true} {
		upper := upper
		name := map[bool]string{false: "tril_indices", true: "triu_indices"}[upper]
		register(&OpSpec{
			Name: name,
			Doc:  fmt.Sprintf("%s(row, col, offset): [2, N] indices of the %s triangle (PyTorch semantics)", name, map[bool]string{false: "lower", true: "upper"}[upper]),
			Params: []ParamSpec{
				{Name: "row", Required: true, Doc: "number of rows (>= 0)"},
				{Name: "col", Required: true, Doc: "number of columns (>= 0)"},
				{Name: "offset", Default: "0", Doc: "diagonal offset (any int64)"},
				{Name: "dtype", Default: "int64", Doc: "int32 or int64"},
			},
			Outputs: []string{"out"},
			run: func(dev *accel.Device, p params, _ map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
				r, err := p.int64("row")
				if err != nil {
					return nil, err
				}
				c, err := p.int64("col")
				if err != nil {
					return nil, err
				}
				o, err := p.int64("offset")
				if err != nil {
					return nil, err
				}
				dt, err := p.dtype("dtype")
				if err != nil {
					return nil, err
				}
				var out *accel.Tensor
				switch {
				case dev == nil && upper:
					out, err = accel.RefTriuIndices(r, c, o, dt)
				case dev == nil:
					out, err = accel.RefTrilIndices(r, c, o, dt)
				case upper:
					out, err = download(dev.TriuIndices(r, c, o, dt))
				default:
					out, err = download(dev.TrilIndices(r, c, o, dt))
				}
				if err != nil {
					return nil, err
				}
				return map[string]*accel.Tensor{"out": out}, nil
			},
		})
	}
}
