package accel

// upload copies host inputs to dev; the returned release frees them.
func uploadAll(dev *Device, ts ...*Tensor) ([]*DeviceTensor, func(), error) {
	var out []*DeviceTensor
	release := func() {
		for _, t := range out {
			t.Release()
		}
	}
	for _, t := range ts {
		dt, err := dev.Upload(t)
		if err != nil {
			release()
			return nil, func() {}, err
		}
		out = append(out, dt)
	}
	return out, release, nil
}

func init() {
	register(&OpSpec{
		Name: "diagonal_scatter",
		Doc:  "diagonal_scatter(input, src, offset, dim1, dim2): input with src written onto a diagonal (PyTorch semantics)",
		Params: []ParamSpec{
			{Name: "offset", Default: "0", Doc: "diagonal offset (any int64)"},
			{Name: "dim1", Default: "0", Doc: "first dim of the diagonal (negative counts from the end)"},
			{Name: "dim2", Default: "1", Doc: "second dim of the diagonal"},
		},
		Inputs:  []string{"input", "src"},
		Outputs: []string{"out"},
		run: func(dev *Device, p params, in map[string]*Tensor) (map[string]*Tensor, error) {
			var v [3]int64
			for i, name := range []string{"offset", "dim1", "dim2"} {
				x, err := p.int64(name)
				if err != nil {
					return nil, err
				}
				v[i] = x
			}
			if dev == nil {
				out, err := DiagonalScatter(in["input"], in["src"], v[0], v[1], v[2])
				return map[string]*Tensor{"out": out}, err
			}
			// Validate on the host shapes before any device work.
			g, err := newDiagGeom("diagonal_scatter", in["input"].shape, v[0], v[1], v[2])
			if err != nil {
				return nil, err
			}
			if err := checkDiagDType("diagonal_scatter", in["input"].dtype); err != nil {
				return nil, err
			}
			if err := checkDiagSrc("diagonal_scatter", g, in["input"].dtype, in["src"].dtype, in["src"].shape); err != nil {
				return nil, err
			}
			ts, release, err := uploadAll(dev, in["input"], in["src"])
			if err != nil {
				return nil, err
			}
			defer release()
			out, err := download(dev.DiagonalScatter(ts[0], ts[1], v[0], v[1], v[2]))
			if err != nil {
				return nil, err
			}
			return map[string]*Tensor{"out": out}, nil
		},
	})
}
