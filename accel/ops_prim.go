package accel

import "fmt"

// devOrRef runs f on dev with the inputs uploaded, or g on the host when
// dev is nil, and downloads the device outputs.
func devOrRef(dev *Device, names []string, in []*Tensor, f func(ts []*DeviceTensor) ([]*DeviceTensor, error),
	g func() ([]*Tensor, error)) (map[string]*Tensor, error) {
	var outs []*Tensor
	if dev == nil {
		var err error
		if outs, err = g(); err != nil {
			return nil, err
		}
	} else {
		ts, release, err := uploadAll(dev, in...)
		if err != nil {
			return nil, err
		}
		defer release()
		douts, err := f(ts)
		if err != nil {
			return nil, err
		}
		for _, t := range douts {
			h, err := download(t, nil)
			if err != nil {
				return nil, err
			}
			outs = append(outs, h)
		}
	}
	m := map[string]*Tensor{}
	for i, n := range names {
		m[n] = outs[i]
	}
	return m, nil
}

func init() {
	register(&OpSpec{
		Name:    "cumsum",
		Doc:     "cumsum(x, exclusive): prefix sums of x flattened (integers wrap)",
		Params:  []ParamSpec{{Name: "exclusive", Default: "false", Doc: "start from 0 (out[i] sums x[:i])"}},
		Inputs:  []string{"x"},
		Outputs: []string{"out"},
		run: func(dev *Device, p params, in map[string]*Tensor) (map[string]*Tensor, error) {
			excl, err := p.bool("exclusive")
			if err != nil {
				return nil, err
			}
			x := in["x"]
			if err := checkSortDType("cumsum", "x", x.dtype, false); err != nil {
				return nil, err
			}
			return devOrRef(dev, []string{"out"}, []*Tensor{x},
				func(ts []*DeviceTensor) ([]*DeviceTensor, error) {
					out, err := dev.Cumsum(ts[0], excl)
					return []*DeviceTensor{out}, err
				},
				func() ([]*Tensor, error) {
					out, err := Cumsum(x, excl)
					return []*Tensor{out}, err
				})
		},
	})
	register(&OpSpec{
		Name:    "compact",
		Doc:     "compact(x, mask): the elements of x where mask is true and their positions (NumPy x[mask], nonzero(mask))",
		Inputs:  []string{"x", "mask"},
		Outputs: []string{"out", "index"},
		run: func(dev *Device, p params, in map[string]*Tensor) (map[string]*Tensor, error) {
			x, mask := in["x"], in["mask"]
			if mask.dtype != Bool {
				return nil, argErr("compact", "mask", "dtype "+mask.dtype.String(), "bool", ErrInvalidArgument)
			}
			if !sameShape(mask.shape, x.shape) {
				return nil, argErr("compact", "mask", fmt.Sprintf("shape %v", mask.shape), fmt.Sprintf("x's shape %v", x.shape), ErrInvalidArgument)
			}
			return devOrRef(dev, []string{"out", "index"}, []*Tensor{x, mask},
				func(ts []*DeviceTensor) ([]*DeviceTensor, error) {
					out, idx, err := dev.Compact(ts[0], ts[1])
					return []*DeviceTensor{out, idx}, err
				},
				func() ([]*Tensor, error) {
					out, idx, err := Compact(x, mask)
					return []*Tensor{out, idx}, err
				})
		},
	})
	register(&OpSpec{
		Name:    "sort",
		Doc:     "sort(keys, descending): stable radix sort, sorted keys and permutation (NumPy order for floats)",
		Params:  []ParamSpec{{Name: "descending", Default: "false", Doc: "largest first (NaN first), ties keep input order"}},
		Inputs:  []string{"keys"},
		Outputs: []string{"keys", "perm"},
		run: func(dev *Device, p params, in map[string]*Tensor) (map[string]*Tensor, error) {
			desc, err := p.bool("descending")
			if err != nil {
				return nil, err
			}
			keys := in["keys"]
			if err := checkSortDType("sort", "keys", keys.dtype, false); err != nil {
				return nil, err
			}
			return devOrRef(dev, []string{"keys", "perm"}, []*Tensor{keys},
				func(ts []*DeviceTensor) ([]*DeviceTensor, error) {
					s, perm, err := dev.Sort(ts[0], desc)
					return []*DeviceTensor{s, perm}, err
				},
				func() ([]*Tensor, error) {
					s, perm, err := Sort(keys, desc)
					return []*Tensor{s, perm}, err
				})
		},
	})
	register(&OpSpec{
		Name:    "unique",
		Doc:     "unique(x): sorted distinct integer values, inverse index and counts (NumPy unique)",
		Inputs:  []string{"x"},
		Outputs: []string{"values", "inverse", "counts"},
		run: func(dev *Device, p params, in map[string]*Tensor) (map[string]*Tensor, error) {
			x := in["x"]
			if err := checkSortDType("unique", "x", x.dtype, true); err != nil {
				return nil, err
			}
			return devOrRef(dev, []string{"values", "inverse", "counts"}, []*Tensor{x},
				func(ts []*DeviceTensor) ([]*DeviceTensor, error) {
					v, inv, c, err := dev.Unique(ts[0])
					return []*DeviceTensor{v, inv, c}, err
				},
				func() ([]*Tensor, error) {
					v, inv, c, err := Unique(x)
					return []*Tensor{v, inv, c}, err
				})
		},
	})
	register(&OpSpec{
		Name: "segment_reduce",
		Doc:  "segment_reduce(values, segment_ids, reduce, num_segments): in-order reduction by sorted segment id",
		Params: []ParamSpec{
			{Name: "reduce", Required: true, Doc: "sum, min or max"},
			{Name: "num_segments", Required: true, Doc: "number of segments (>= 0)"},
		},
		Inputs:  []string{"values", "segment_ids"},
		Outputs: []string{"out"},
		run: func(dev *Device, p params, in map[string]*Tensor) (map[string]*Tensor, error) {
			s, err := p.int64("num_segments")
			if err != nil {
				return nil, err
			}
			red := p.vals["reduce"]
			v, ids := in["values"], in["segment_ids"]
			if err := checkSegmentArgs("segment_reduce", v.dtype, v.shape, ids.dtype, ids.shape, red, s); err != nil {
				return nil, err
			}
			return devOrRef(dev, []string{"out"}, []*Tensor{v, ids},
				func(ts []*DeviceTensor) ([]*DeviceTensor, error) {
					out, err := dev.SegmentReduce(ts[0], ts[1], red, s)
					return []*DeviceTensor{out}, err
				},
				func() ([]*Tensor, error) {
					out, err := SegmentReduce(v, ids, red, s)
					return []*Tensor{out}, err
				})
		},
	})
}
