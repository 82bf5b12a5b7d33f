package ops

import "github.com/accelkern/accel/accel"

// optList parses an optional list parameter: absent or empty is nil (the
// op's default).
func (p params) optList(name string) ([]int64, error) {
	v, err := p.int64s(name)
	if err != nil || len(v) == 0 {
		return nil, err
	}
	return v, nil
}

func sparseConvParams(p params) (accel.SparseConvParams, error) {
	var q accel.SparseConvParams
	var err error
	if q.BatchSize, err = p.int64("batch_size"); err != nil {
		return q, err
	}
	for _, l := range []struct {
		name string
		dst  *[]int64
	}{{"spatial_shape", &q.SpatialShape}, {"ksize", &q.KSize}, {"stride", &q.Stride}, {"padding", &q.Padding},
		{"dilation", &q.Dilation}, {"out_padding", &q.OutPadding}} {
		if *l.dst, err = p.optList(l.name); err != nil {
			return q, err
		}
	}
	for _, b := range []struct {
		name string
		dst  *bool
	}{{"subm", &q.Subm}, {"transpose", &q.Transpose}, {"inverse", &q.Inverse}} {
		if *b.dst, err = p.bool(b.name); err != nil {
			return q, err
		}
	}
	if q.Split, err = accel.ParseIndiceSplit(p.vals["split"]); err != nil {
		return q, argErr(p.op, "split", p.vals["split"], "one of auto, LL, LK, KL, KK", accel.ErrInvalidArgument)
	}
	return q, nil
}

func init() {
	register(&OpSpec{
		Name: "get_indice_pairs",
		Doc: "get_indice_pairs(indices, ...): sparse convolution index pairs (spconv semantics; regular, transposed, " +
			"submanifold, inverse; outputs sorted, pairs in input order per offset)",
		Params: []ParamSpec{
			{Name: "batch_size", Required: true, Doc: "batch size (>= 1)"},
			{Name: "spatial_shape", Required: true, Doc: "input spatial shape, D = 1..4 entries"},
			{Name: "ksize", Required: true, Doc: "kernel size per dim"},
			{Name: "stride", Doc: "stride per dim (default 1)"},
			{Name: "padding", Doc: "padding per dim (default 0; unused with subm)"},
			{Name: "dilation", Doc: "dilation per dim (default 1)"},
			{Name: "out_padding", Doc: "output padding per dim of a transposed conv (default 0)"},
			{Name: "subm", Default: "false", Doc: "submanifold conv: outputs are the inputs, offsets centred"},
			{Name: "transpose", Default: "false", Doc: "transposed conv"},
			{Name: "inverse", Default: "false", Doc: "the inverse of the regular conv of these sites"},
			{Name: "split", Default: "auto", Doc: "the expansion's split policy: auto, LL, LK, KL, KK (same result)"},
		},
		Inputs:  []string{"indices"},
		Outputs: []string{"indice_pairs", "out_indices", "indice_num", "out_spatial_shape"},
		run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			q, err := sparseConvParams(p)
			if err != nil {
				return nil, err
			}
			idx := in["indices"]
			var shape []int64
			out, err := devOrRef(dev, []string{"indice_pairs", "out_indices", "indice_num"}, []*accel.Tensor{idx},
				func(ts []*accel.DeviceTensor) ([]*accel.DeviceTensor, error) {
					r, err := dev.IndicePairs(ts[0], q)
					if err != nil {
						return nil, err
					}
					shape = r.OutSpatialShape
					return []*accel.DeviceTensor{r.Pairs, r.OutIndices, r.Num}, nil
				},
				func() ([]*accel.Tensor, error) {
					r, err := accel.RefIndicePairs(idx, q)
					if err != nil {
						return nil, err
					}
					shape = r.OutSpatialShape
					return []*accel.Tensor{r.Pairs, r.OutIndices, r.Num}, nil
				})
			if err != nil {
				return nil, err
			}
			if out["out_spatial_shape"], err = accel.FromInt64s([]int64{int64(len(shape))}, shape); err != nil {
				return nil, err
			}
			return out, nil
		},
	})
}
