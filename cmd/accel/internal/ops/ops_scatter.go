package ops

import (
	"strings"

	"github.com/accelkern/accel/accel"
)

func init() {
	for _, name := range []string{"scatter", "scatter_reduce"} {
		name := name
		spec := &OpSpec{
			Name:    name,
			Params:  []ParamSpec{{Name: "dim", Required: true, Doc: "the dim index values address (negative counts from the end)"}},
			Inputs:  []string{"input", "index", "src"},
			Outputs: []string{"out"},
		}
		if name == "scatter" {
			spec.Doc = "scatter(input, dim, index, src): PyTorch's Tensor.scatter (assign)"
		} else {
			spec.Doc = "scatter_reduce(input, dim, index, src, reduce, include_self): PyTorch's Tensor.scatter_reduce"
			spec.Params = append(spec.Params,
				ParamSpec{Name: "reduce", Required: true, Doc: "sum, prod, mean, amax or amin"},
				ParamSpec{Name: "include_self", Default: "true", Doc: "reduce the input's values too"},
				ParamSpec{Name: "deterministic", Default: "false", Doc: "bit-reproducible mode: sort by target, fold in index order (the reference's bits on every device)"})
		}
		spec.run = func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			dim, err := p.int64("dim")
			if err != nil {
				return nil, err
			}
			reduce, includeSelf, det := accel.Assign, true, false
			if name == "scatter_reduce" {
				if reduce, err = p.reduction("reduce"); err != nil {
					return nil, err
				}
				if reduce == accel.Assign {
					return nil, argErr(name, "reduce", `"assign"`, "one of sum, prod, mean, amax, amin", accel.ErrInvalidArgument)
				}
				if includeSelf, err = p.bool("include_self"); err != nil {
					return nil, err
				}
				if det, err = p.bool("deterministic"); err != nil {
					return nil, err
				}
			}
			input, index, src := in["input"], in["index"], in["src"]
			return devOrRef(dev, []string{"out"}, []*accel.Tensor{input, index, src},
				func(ts []*accel.DeviceTensor) ([]*accel.DeviceTensor, error) {
					var out *accel.DeviceTensor
					switch {
					case name == "scatter" && det:
						out, err = dev.ScatterDeterministic(ts[0], dim, ts[1], ts[2])
					case name == "scatter":
						out, err = dev.Scatter(ts[0], dim, ts[1], ts[2])
					case det:
						out, err = dev.ScatterReduceDeterministic(ts[0], dim, ts[1], ts[2], reduce, includeSelf)
					default:
						out, err = dev.ScatterReduce(ts[0], dim, ts[1], ts[2], reduce, includeSelf)
					}
					return []*accel.DeviceTensor{out}, err
				},
				func() ([]*accel.Tensor, error) {
					var out *accel.Tensor
					if name == "scatter" {
						out, err = accel.RefScatter(input, dim, index, src)
					} else {
						out, err = accel.RefScatterReduce(input, dim, index, src, reduce, includeSelf)
					}
					return []*accel.Tensor{out}, err
				})
		}
		register(spec)
	}
}

func init() {
	const name = "scatter_reduce_backward"
	register(&OpSpec{
		Name: name,
		Doc:  "scatter_reduce_backward(input, dim, index, src, reduce, include_self, grad_output): scatter_reduce's result and its gradients w.r.t. input and src (PyTorch's autograd; float32/float64)",
		Params: []ParamSpec{
			{Name: "dim", Required: true, Doc: "the dim index values address (negative counts from the end)"},
			{Name: "reduce", Required: true, Doc: "sum, prod, mean, amax or amin"},
			{Name: "include_self", Default: "true", Doc: "reduce the input's values too"},
		},
		Inputs:  []string{"input", "index", "src", "grad_output"},
		Outputs: []string{"out", "grad_input", "grad_src"},
		run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			dim, err := p.int64("dim")
			if err != nil {
				return nil, err
			}
			reduce, err := p.reduction("reduce")
			if err != nil {
				return nil, err
			}
			includeSelf, err := p.bool("include_self")
			if err != nil {
				return nil, err
			}
			input, index, src, grad := in["input"], in["index"], in["src"], in["grad_output"]
			return devOrRef(dev, []string{"out", "grad_input", "grad_src"}, []*accel.Tensor{input, index, src, grad},
				func(ts []*accel.DeviceTensor) ([]*accel.DeviceTensor, error) {
					o, gi, gs, err := dev.ScatterReduceBackward(ts[0], dim, ts[1], ts[2], reduce, includeSelf, ts[3])
					return []*accel.DeviceTensor{o, gi, gs}, err
				},
				func() ([]*accel.Tensor, error) {
					o, gi, gs, err := accel.RefScatterReduceBackward(input, dim, index, src, reduce, includeSelf, grad)
					return []*accel.Tensor{o, gi, gs}, err
				})
		},
	})
}

// parseAxis parses put/take_along_axis's axis: an integer, or none.
func parseAxis(p params) (int64, error) {
	if strings.EqualFold(strings.TrimSpace(p.vals["axis"]), "none") {
		return accel.AxisNone, nil
	}
	return p.int64("axis")
}

func init() {
	register(&OpSpec{
		Name: "put_along_axis",
		Doc:  "put_along_axis(arr, indices, values, axis, reduce, include_self): Paddle's put_along_axis (NumPy semantics); taken = take_along_axis(out, indices, axis)",
		Params: []ParamSpec{
			{Name: "axis", Required: true, Doc: "the axis, or none to flatten"},
			{Name: "reduce", Default: "assign", Doc: "assign, add, mul, mean, amax or amin"},
			{Name: "include_self", Default: "true", Doc: "reduce arr's values too"},
		},
		Inputs:  []string{"arr", "indices", "values"},
		Outputs: []string{"out", "taken"},
		run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			axis, err := parseAxis(p)
			if err != nil {
				return nil, err
			}
			reduce, err := p.reduction("reduce")
			if err != nil {
				return nil, err
			}
			self, err := p.bool("include_self")
			if err != nil {
				return nil, err
			}
			arr, idx, vals := in["arr"], in["indices"], in["values"]
			return devOrRef(dev, []string{"out", "taken"}, []*accel.Tensor{arr, idx, vals},
				func(ts []*accel.DeviceTensor) ([]*accel.DeviceTensor, error) {
					out, err := dev.PutAlongAxis(ts[0], ts[1], ts[2], axis, reduce, self)
					if err != nil {
						return nil, err
					}
					taken, err := dev.TakeAlongAxis(out, ts[1], axis)
					if err != nil {
						out.Release()
						return nil, err
					}
					return []*accel.DeviceTensor{out, taken}, nil
				},
				func() ([]*accel.Tensor, error) {
					out, err := accel.RefPutAlongAxis(arr, idx, vals, axis, reduce, self)
					if err != nil {
						return nil, err
					}
					taken, err := accel.RefTakeAlongAxis(out, idx, axis)
					return []*accel.Tensor{out, taken}, err
				})
		},
	})
	register(&OpSpec{
		Name:    "take_along_axis",
		Doc:     "take_along_axis(arr, indices, axis): numpy.take_along_axis",
		Params:  []ParamSpec{{Name: "axis", Required: true, Doc: "the axis, or none to flatten"}},
		Inputs:  []string{"arr", "indices"},
		Outputs: []string{"out"},
		run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			axis, err := parseAxis(p)
			if err != nil {
				return nil, err
			}
			return devOrRef(dev, []string{"out"}, []*accel.Tensor{in["arr"], in["indices"]},
				func(ts []*accel.DeviceTensor) ([]*accel.DeviceTensor, error) {
					out, err := dev.TakeAlongAxis(ts[0], ts[1], axis)
					return []*accel.DeviceTensor{out}, err
				},
				func() ([]*accel.Tensor, error) {
					out, err := accel.RefTakeAlongAxis(in["arr"], in["indices"], axis)
					return []*accel.Tensor{out}, err
				})
		},
	})
}
