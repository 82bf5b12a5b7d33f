package ops

import (
	"strconv"

	"github.com/accelkern/accel/accel"
)

func init() {
	register(&OpSpec{
		Name:    "cumsum",
		Doc:     "cumsum(x, exclusive): prefix sums of x flattened (integers wrap)",
		Params:  []ParamSpec{{Name: "exclusive", Default: "false", Doc: "start from 0 (out[i] sums x[:i])"}},
		Inputs:  []string{"x"},
		Outputs: []string{"out"},
		run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			excl, err := p.bool("exclusive")
			if err != nil {
				return nil, err
			}
			x := in["x"]
			return devOrRef(dev, []string{"out"}, []*accel.Tensor{x},
				func(ts []*accel.DeviceTensor) ([]*accel.DeviceTensor, error) {
					out, err := dev.Cumsum(ts[0], excl)
					return []*accel.DeviceTensor{out}, err
				},
				func() ([]*accel.Tensor, error) {
					out, err := accel.RefCumsum(x, excl)
					return []*accel.Tensor{out}, err
				})
		},
	})
	register(&OpSpec{
		Name:    "compact",
		Doc:     "compact(x, mask): the elements of x where mask is true and their positions (NumPy x[mask], nonzero(mask))",
		Inputs:  []string{"x", "mask"},
		Outputs: []string{"out", "index"},
		run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			x, mask := in["x"], in["mask"]
			return devOrRef(dev, []string{"out", "index"}, []*accel.Tensor{x, mask},
				func(ts []*accel.DeviceTensor) ([]*accel.DeviceTensor, error) {
					out, idx, err := dev.Compact(ts[0], ts[1])
					return []*accel.DeviceTensor{out, idx}, err
				},
				func() ([]*accel.Tensor, error) {
					out, idx, err := accel.RefCompact(x, mask)
					return []*accel.Tensor{out, idx}, err
				})
		},
	})
	register(&OpSpec{
		Name:    "sort",
		Doc:     "sort(keys, descending): stable radix sort, sorted keys and permutation (NumPy order for floats)",
		Params:  []ParamSpec{{Name: "descending", Default: "false", Doc: "largest first (NaN first), ties keep input order"}},
		Inputs:  []string{"keys"},
		Outputs: []string{"keys", "perm"},
		run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			desc, err := p.bool("descending")
			if err != nil {
				return nil, err
			}
			keys := in["keys"]
			return devOrRef(dev, []string{"keys", "perm"}, []*accel.Tensor{keys},
				func(ts []*accel.DeviceTensor) ([]*accel.DeviceTensor, error) {
					s, perm, err := dev.Sort(ts[0], desc)
					return []*accel.DeviceTensor{s, perm}, err
				},
				func() ([]*accel.Tensor, error) {
					s, perm, err := accel.RefSort(keys, desc)
					return []*accel.Tensor{s, perm}, err
				})
		},
	})
	register(&OpSpec{
		Name:    "unique",
		Doc:     "unique(x): sorted distinct integer values, inverse index and counts (NumPy unique)",
		Inputs:  []string{"x"},
		Outputs: []string{"values", "inverse", "counts"},
		run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			x := in["x"]
			return devOrRef(dev, []string{"values", "inverse", "counts"}, []*accel.Tensor{x},
				func(ts []*accel.DeviceTensor) ([]*accel.DeviceTensor, error) {
					v, inv, c, err := dev.Unique(ts[0])
					return []*accel.DeviceTensor{v, inv, c}, err
				},
				func() ([]*accel.Tensor, error) {
					v, inv, c, err := accel.RefUnique(x)
					return []*accel.Tensor{v, inv, c}, err
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
		run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			s, err := p.int64("num_segments")
			if err != nil {
				return nil, err
			}
			// PyTorch's segment_reduce names (its "max" is accel's Amax),
			// parsed strictly
			red, ok := map[string]accel.Reduction{"sum": accel.Sum, "max": accel.Amax, "min": accel.Amin}[p.vals["reduce"]]
			if !ok {
				return nil, argErr("segment_reduce", "reduce", strconv.Quote(p.vals["reduce"]), "sum, max or min (torch.segment_reduce's names)", accel.ErrInvalidArgument)
			}
			v, ids := in["values"], in["segment_ids"]
			return devOrRef(dev, []string{"out"}, []*accel.Tensor{v, ids},
				func(ts []*accel.DeviceTensor) ([]*accel.DeviceTensor, error) {
					out, err := dev.SegmentReduce(ts[0], ts[1], red, s)
					return []*accel.DeviceTensor{out}, err
				},
				func() ([]*accel.Tensor, error) {
					out, err := accel.RefSegmentReduce(v, ids, red, s)
					return []*accel.Tensor{out}, err
				})
		},
	})
}
