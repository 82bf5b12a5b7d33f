package accel

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
		spec.run = func(dev *Device, p params, in map[string]*Tensor) (map[string]*Tensor, error) {
			dim, err := p.int64("dim")
			if err != nil {
				return nil, err
			}
			reduce, includeSelf, det := ReduceAssign, true, false
			if name == "scatter_reduce" {
				reduce = p.vals["reduce"]
				if includeSelf, err = p.bool("include_self"); err != nil {
					return nil, err
				}
				if det, err = p.bool("deterministic"); err != nil {
					return nil, err
				}
			}
			input, index, src := in["input"], in["index"], in["src"]
			if dev == nil {
				out, err := refScatter(name, input, dim, index, src, reduce, includeSelf)
				return map[string]*Tensor{"out": out}, err
			}
			// Shapes and dtypes are checked before any upload.
			if _, err := newScatterGeom(name, input.shape, input.dtype, dim, index.shape, index.dtype, src.shape, src.dtype, reduce); err != nil {
				return nil, err
			}
			if err := dev.supportsScatter(name, input.dtype); err != nil {
				return nil, err
			}
			ts, release, err := uploadAll(dev, input, index, src)
			if err != nil {
				return nil, err
			}
			defer release()
			out, _, err := dev.scatterReduceTimed(name, ts[0], dim, ts[1], ts[2], reduce, includeSelf, det)
			h, err := download(out, err)
			if err != nil {
				return nil, err
			}
			return map[string]*Tensor{"out": h}, nil
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
		run: func(dev *Device, p params, in map[string]*Tensor) (map[string]*Tensor, error) {
			dim, err := p.int64("dim")
			if err != nil {
				return nil, err
			}
			reduce := p.vals["reduce"]
			includeSelf, err := p.bool("include_self")
			if err != nil {
				return nil, err
			}
			input, index, src, grad := in["input"], in["index"], in["src"], in["grad_output"]
			var out [3]*Tensor
			if dev == nil {
				out[0], out[1], out[2], err = ScatterReduceBackward(input, dim, index, src, reduce, includeSelf, grad)
			} else {
				// Shapes and dtypes are checked before any upload.
				if _, err := scatterBwdGeom(name, input.shape, input.dtype, dim, index.shape, index.dtype, src.shape, src.dtype,
					reduce, grad.shape, grad.dtype); err != nil {
					return nil, err
				}
				if err := dev.supportsScatter(name, input.dtype); err != nil {
					return nil, err
				}
				ts, release, err := uploadAll(dev, input, index, src, grad)
				if err != nil {
					return nil, err
				}
				defer release()
				o, gi, gs, err := dev.ScatterReduceBackward(ts[0], dim, ts[1], ts[2], reduce, includeSelf, ts[3])
				if err != nil {
					return nil, err
				}
				for i, t := range []*DeviceTensor{o, gi, gs} {
					if out[i], err = download(t, err); err != nil {
						for _, r := range []*DeviceTensor{o, gi, gs}[i+1:] {
							r.Release()
						}
						return nil, err
					}
				}
			}
			if err != nil {
				return nil, err
			}
			return map[string]*Tensor{"out": out[0], "grad_input": out[1], "grad_src": out[2]}, nil
		},
	})
}
