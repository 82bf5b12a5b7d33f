package ops

import "github.com/accelkern/accel/accel"

// UploadAll copies host inputs to dev; the returned release frees them.
func UploadAll(dev *accel.Device, ts ...*accel.Tensor) ([]*accel.DeviceTensor, func(), error) {
	var out []*accel.DeviceTensor
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

// devOrRef runs f on dev with the inputs uploaded, or g on the host when
// dev is nil, and returns the outputs by name (device outputs downloaded
// and released).
func devOrRef(dev *accel.Device, names []string, in []*accel.Tensor, f func(ts []*accel.DeviceTensor) ([]*accel.DeviceTensor, error),
	g func() ([]*accel.Tensor, error)) (map[string]*accel.Tensor, error) {
	var outs []*accel.Tensor
	if dev == nil {
		var err error
		if outs, err = g(); err != nil {
			return nil, err
		}
	} else {
		ts, release, err := UploadAll(dev, in...)
		if err != nil {
			return nil, err
		}
		defer release()
		douts, err := f(ts)
		if err != nil {
			return nil, err
		}
		for i, t := range douts {
			h, err := download(t, nil)
			if err != nil {
				for _, r := range douts[i+1:] {
					r.Release()
				}
				return nil, err
			}
			outs = append(outs, h)
		}
	}
	m := map[string]*accel.Tensor{}
	for i, n := range names {
		m[n] = outs[i]
	}
	return m, nil
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
		run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			var v [3]int64
			for i, name := range []string{"offset", "dim1", "dim2"} {
				x, err := p.int64(name)
				if err != nil {
					return nil, err
				}
				v[i] = x
			}
			return devOrRef(dev, []string{"out"}, []*accel.Tensor{in["input"], in["src"]},
				func(ts []*accel.DeviceTensor) ([]*accel.DeviceTensor, error) {
					out, err := dev.DiagonalScatter(ts[0], ts[1], v[0], v[1], v[2])
					return []*accel.DeviceTensor{out}, err
				},
				func() ([]*accel.Tensor, error) {
					out, err := accel.RefDiagonalScatter(in["input"], in["src"], v[0], v[1], v[2])
					return []*accel.Tensor{out}, err
				})
		},
	})
}
