package ops

import "github.com/accelkern/accel/accel"

func init() {
	for _, name := range []string{"index_add", "index_reduce"} {
		name := name
		spec := &OpSpec{
			Name:    name,
			Params:  []ParamSpec{{Name: "dim", Required: true, Doc: "the dim index addresses (negative counts from the end)"}},
			Inputs:  []string{"input", "index", "source"},
			Outputs: []string{"out"},
		}
		if name == "index_add" {
			spec.Doc = "index_add(input, dim, index, source): PyTorch's Tensor.index_add (alpha 1)"
		} else {
			spec.Doc = "index_reduce(input, dim, index, source, reduce, include_self): PyTorch's Tensor.index_reduce"
			spec.Params = append(spec.Params,
				ParamSpec{Name: "reduce", Required: true, Doc: "sum, prod, mean, amax or amin"},
				ParamSpec{Name: "include_self", Default: "true", Doc: "reduce the input's values too"})
		}
		spec.Params = append(spec.Params, ParamSpec{Name: "deterministic", Default: "false",
			Doc: "bit-reproducible mode: fold in source order (the reference's bits on every device)"})
		spec.run = func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			dim, err := p.int64("dim")
			if err != nil {
				return nil, err
			}
			reduce, includeSelf := accel.Sum, true
			if name == "index_reduce" {
				if reduce, err = p.reduction("reduce"); err != nil {
					return nil, err
				}
				if includeSelf, err = p.bool("include_self"); err != nil {
					return nil, err
				}
			}
			det, err := p.bool("deterministic")
			if err != nil {
				return nil, err
			}
			input, index, source := in["input"], in["index"], in["source"]
			return devOrRef(dev, []string{"out"}, []*accel.Tensor{input, index, source},
				func(ts []*accel.DeviceTensor) ([]*accel.DeviceTensor, error) {
					var out *accel.DeviceTensor
					var err error
					switch {
					case det:
						out, err = dev.IndexReduceDeterministic(ts[0], dim, ts[1], ts[2], reduce, includeSelf)
					case name == "index_add":
						out, err = dev.IndexAdd(ts[0], dim, ts[1], ts[2])
					default:
						out, err = dev.IndexReduce(ts[0], dim, ts[1], ts[2], reduce, includeSelf)
					}
					return []*accel.DeviceTensor{out}, err
				},
				func() ([]*accel.Tensor, error) {
					out, err := accel.RefIndexReduce(input, dim, index, source, reduce, includeSelf)
					return []*accel.Tensor{out}, err
				})
		}
		register(spec)
	}
}
