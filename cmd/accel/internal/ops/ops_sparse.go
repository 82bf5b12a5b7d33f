package ops

import (
	"fmt"
	"slices"
	"strings"

	"github.com/accelkern/accel/accel"
)

// The sparse ops: Paddle's elementwise divide, add, subtract and multiply
// of two COO or CSR tensors (and the divide's gradients), coalescing and
// the format conversions. Their arrays depend on the format parameter
// (OpSpec.IO).

var sparseFormats = map[string]bool{"coo": true, "csr": true, "csr_batched": true}

func sparseFormat(args map[string]string) string {
	f := strings.TrimSpace(args["format"])
	if f == "" {
		return "coo"
	}
	return f
}

// sparseArrays are the arrays of a sparse operand with prefix ("x_", ...).
func sparseArrays(format, prefix string) []string {
	if format == "coo" {
		return []string{prefix + "indices", prefix + "values"}
	}
	return []string{prefix + "crow", prefix + "col", prefix + "values"}
}

var cooCoalesced = []string{"x_coalesced_indices", "x_coalesced_values", "y_coalesced_indices", "y_coalesced_values"}

// binaryIO is the arrays of a binary sparse op for its format.
func binaryIO(backward bool) func(args map[string]string) ([]string, []string) {
	return func(args map[string]string) ([]string, []string) {
		f := sparseFormat(args)
		in := append(sparseArrays(f, "x_"), sparseArrays(f, "y_")...)
		out := append(sparseArrays(f, ""), "dense")
		if backward {
			in = append(in, "grad_out_values")
			out = append(out, "grad_x", "grad_y")
		} else if f == "coo" {
			out = append(out, cooCoalesced...)
		}
		return in, out
	}
}

func union(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, s := range l {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// sparseShapes parses shape (or x_shape and y_shape) and checks format,
// ndim and the value dtype against the inputs.
func sparseShapes(p params, in map[string]*accel.Tensor) (xs, ys []int64, err error) {
	f := sparseFormat(p.vals)
	if !sparseFormats[f] {
		return nil, nil, argErr(p.op, "format", fmt.Sprintf("%q", f), "coo, csr or csr_batched", accel.ErrInvalidArgument)
	}
	if p.has("shape") {
		if xs, err = p.int64s("shape"); err != nil {
			return nil, nil, err
		}
		ys = xs
	} else {
		if !p.has("x_shape") || !p.has("y_shape") {
			return nil, nil, argErr(p.op, "shape", "missing", "given (or x_shape and y_shape)", accel.ErrInvalidArgument)
		}
		if xs, err = p.int64s("x_shape"); err != nil {
			return nil, nil, err
		}
		if ys, err = p.int64s("y_shape"); err != nil {
			return nil, nil, err
		}
	}
	if p.has("ndim") {
		nd, err := p.int64("ndim")
		if err != nil {
			return nil, nil, err
		}
		if nd != int64(len(xs)) {
			return nil, nil, argErr(p.op, "ndim", nd, fmt.Sprintf("the shape's rank %d", len(xs)), accel.ErrInvalidArgument)
		}
	}
	want := map[string]int{"coo": -1, "csr": 2, "csr_batched": 3}[f]
	if want > 0 && len(xs) != want {
		return nil, nil, argErr(p.op, "shape", fmt.Sprint(xs), fmt.Sprintf("of rank %d (format %s)", want, f), accel.ErrInvalidArgument)
	}
	if p.has("dtype") {
		dt, err := p.dtype("dtype")
		if err != nil {
			return nil, nil, err
		}
		for name, t := range in {
			if strings.HasSuffix(name, "values") && t.DType() != dt {
				return nil, nil, argErr(p.op, "input "+name, "dtype "+t.DType().String(), "the dtype parameter "+dt.String(), accel.ErrInvalidArgument)
			}
		}
	}
	return xs, ys, nil
}

func hostCOO(in map[string]*accel.Tensor, prefix string, shape []int64) accel.HostCOO {
	return accel.HostCOO{Indices: in[prefix+"indices"], Values: in[prefix+"values"], Shape: shape}
}

func hostCSR(in map[string]*accel.Tensor, prefix string, shape []int64) accel.HostCSR {
	return accel.HostCSR{Crows: in[prefix+"crow"], Cols: in[prefix+"col"], Values: in[prefix+"values"], Shape: shape}
}

// outs collects host outputs by name.
type outs map[string]*accel.Tensor

func (o outs) coo(prefix string, h accel.HostCOO) {
	o[prefix+"indices"], o[prefix+"values"] = h.Indices, h.Values
}

func (o outs) csr(h accel.HostCSR) {
	o["crow"], o["col"], o["values"] = h.Crows, h.Cols, h.Values
}

// runSparseBinary runs a binary sparse op (backward: with grad_out_values).
func runSparseBinary(dev *accel.Device, p params, in map[string]*accel.Tensor, sop accel.SparseOp, backward bool) (map[string]*accel.Tensor, error) {
	xs, ys, err := sparseShapes(p, in)
	if err != nil {
		return nil, err
	}
	g := in["grad_out_values"]
	o := outs{}
	if sparseFormat(p.vals) == "coo" {
		x, y := hostCOO(in, "x_", xs), hostCOO(in, "y_", ys)
		if dev == nil {
			r, gx, gy, err := accel.RefSparseBinaryBackward(sop, x, y, g)
			if err != nil {
				return nil, err
			}
			o.coo("", r)
			if o["dense"], err = accel.RefSparseToDense(r); err != nil {
				return nil, err
			}
			if backward {
				o["grad_x"], o["grad_y"] = gx, gy
				return o, nil
			}
			for pre, s := range map[string]accel.HostCOO{"x_": x, "y_": y} {
				c, err := accel.RefCoalesce(s)
				if err != nil {
					return nil, err
				}
				o.coo(pre+"coalesced_", c)
			}
			return o, nil
		}
		return o.or(onDevice(dev, func(rel *releaser) error {
			dx, err := dev.UploadCOO(x)
			if err != nil {
				return err
			}
			rel.coo(dx)
			dy, err := dev.UploadCOO(y)
			if err != nil {
				return err
			}
			rel.coo(dy)
			var r *accel.SparseCOO
			if backward {
				err := o.grads(dev, rel, g, func(dg *accel.DeviceTensor) (gx, gy *accel.DeviceTensor, err error) {
					r, gx, gy, err = dev.SparseBinaryBackward(sop, dx, dy, dg)
					return gx, gy, err
				})
				if err != nil {
					return err
				}
			} else if r, err = dev.SparseBinary(sop, dx, dy); err != nil {
				return err
			}
			rel.coo(r)
			if err := o.deviceCOO("", r); err != nil {
				return err
			}
			if err := o.dense(rel)(dev.SparseToDense(r)); err != nil {
				return err
			}
			if backward {
				return nil
			}
			for pre, s := range map[string]*accel.SparseCOO{"x_": dx, "y_": dy} {
				c, err := dev.Coalesce(s)
				if err != nil {
					return err
				}
				rel.coo(c)
				if err := o.deviceCOO(pre+"coalesced_", c); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	x, y := hostCSR(in, "x_", xs), hostCSR(in, "y_", ys)
	if dev == nil {
		r, gx, gy, err := accel.RefSparseBinaryBackwardCSR(sop, x, y, g)
		if err != nil {
			return nil, err
		}
		o.csr(r)
		coo, err := accel.RefCSRToCOO(r)
		if err == nil {
			o["dense"], err = accel.RefSparseToDense(coo)
		}
		if err != nil {
			return nil, err
		}
		if backward {
			o["grad_x"], o["grad_y"] = gx, gy
		}
		return o, nil
	}
	return o.or(onDevice(dev, func(rel *releaser) error {
		dx, err := dev.UploadCSR(x)
		if err != nil {
			return err
		}
		rel.csr(dx)
		dy, err := dev.UploadCSR(y)
		if err != nil {
			return err
		}
		rel.csr(dy)
		var r *accel.SparseCSR
		if backward {
			err := o.grads(dev, rel, g, func(dg *accel.DeviceTensor) (gx, gy *accel.DeviceTensor, err error) {
				r, gx, gy, err = dev.SparseBinaryBackwardCSR(sop, dx, dy, dg)
				return gx, gy, err
			})
			if err != nil {
				return err
			}
		} else if r, err = dev.SparseBinaryCSR(sop, dx, dy); err != nil {
			return err
		}
		rel.csr(r)
		if err := o.deviceCSR(r); err != nil {
			return err
		}
		return o.dense(rel)(dev.SparseCSRToDense(r))
	}))
}

// grads uploads g, runs a backward op on it and downloads its gradients.
func (o outs) grads(dev *accel.Device, rel *releaser, g *accel.Tensor, f func(dg *accel.DeviceTensor) (gx, gy *accel.DeviceTensor, err error)) error {
	dg, err := dev.Upload(g)
	if err != nil {
		return err
	}
	rel.t(dg)
	gx, gy, err := f(dg)
	if err != nil {
		return err
	}
	rel.t(gx, gy)
	if o["grad_x"], err = gx.ToHost(); err != nil {
		return err
	}
	o["grad_y"], err = gy.ToHost()
	return err
}

// dense downloads a dense result as the output "dense".
func (o outs) dense(rel *releaser) func(t *accel.DeviceTensor, err error) error {
	return func(t *accel.DeviceTensor, err error) error {
		if err != nil {
			return err
		}
		rel.t(t)
		o["dense"], err = t.ToHost()
		return err
	}
}

// or returns the outputs, or nil with err.
func (o outs) or(err error) (map[string]*accel.Tensor, error) {
	if err != nil {
		return nil, err
	}
	return o, nil
}

func (o outs) deviceCOO(prefix string, s *accel.SparseCOO) error {
	h, err := s.ToHost()
	if err == nil {
		o.coo(prefix, h)
	}
	return err
}

func (o outs) deviceCSR(s *accel.SparseCSR) error {
	h, err := s.ToHost()
	if err == nil {
		o.csr(h)
	}
	return err
}

// releaser releases a run's device tensors at its end.
type releaser struct{ ts []*accel.DeviceTensor }

func (r *releaser) t(ts ...*accel.DeviceTensor) { r.ts = append(r.ts, ts...) }
func (r *releaser) coo(s *accel.SparseCOO)      { r.t(s.Indices, s.Values) }
func (r *releaser) csr(s *accel.SparseCSR)      { r.t(s.Crows, s.Cols, s.Values) }

// onDevice runs f, then releases what it registered.
func onDevice(_ *accel.Device, f func(rel *releaser) error) error {
	var rel releaser
	defer func() {
		for _, t := range rel.ts {
			t.Release()
		}
	}()
	return f(&rel)
}

var sparseParams = []ParamSpec{
	{Name: "format", Default: "coo", Doc: "coo, csr (2-D) or csr_batched (3-D, each batch's row pointers restarting at 0)"},
	{Name: "shape", Doc: "the dense shape (comma list)"},
	{Name: "x_shape", Doc: "x's shape, with y_shape instead of shape (they must match)"},
	{Name: "y_shape", Doc: "y's shape"},
	{Name: "ndim", Doc: "the shape's rank (checked)"},
	{Name: "dtype", Doc: "the values' dtype (checked): float32 or float64"},
}

func init() {
	for _, c := range []struct {
		name string
		op   accel.SparseOp
		doc  string
	}{
		{"sparse_div", accel.SparseDivOp, "x / y (a missing operand read as 0: x-only +-inf or NaN, y-only 0)"},
		{"sparse_add", accel.SparseAddOp, "x + y"},
		{"sparse_sub", accel.SparseSubOp, "x - y"},
		{"sparse_mul", accel.SparseMulOp, "x * y on the union of the patterns (one-sided entries are x*0)"},
	} {
		c := c
		allIn, allOut := binaryIO(false)(map[string]string{"format": "coo"})
		csrIn, csrOut := binaryIO(false)(map[string]string{"format": "csr"})
		register(&OpSpec{
			Name: c.name,
			Doc: fmt.Sprintf("%s(x, y, format, shape): %s elementwise on sparse COO or CSR tensors; the result's pattern is the union "+
				"of the coalesced patterns (Paddle's paddle.sparse semantics), COO results with x and y coalesced", c.name, c.doc),
			Params:  sparseParams,
			Inputs:  union(allIn, csrIn),
			Outputs: union(allOut, csrOut),
			IO:      binaryIO(false),
			run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
				return runSparseBinary(dev, p, in, c.op, false)
			},
		})
	}
	bIn, bOut := binaryIO(true)(map[string]string{"format": "coo"})
	bcIn, bcOut := binaryIO(true)(map[string]string{"format": "csr"})
	register(&OpSpec{
		Name: "sparse_div_backward",
		Doc: "sparse_div_backward(x, y, grad_out_values, format, shape): x / y and the gradients grad_x = g/y, grad_y = -g*(out/y) " +
			"on the result's (union) pattern (Paddle's ElementWiseDivide*GradKernel)",
		Params:  sparseParams,
		Inputs:  union(bIn, bcIn),
		Outputs: union(bOut, bcOut),
		IO:      binaryIO(true),
		run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			return runSparseBinary(dev, p, in, accel.SparseDivOp, true)
		},
	})
	register(&OpSpec{
		Name:    "sparse_coalesce",
		Doc:     "sparse_coalesce(indices, values, shape): COO entries sorted lexicographically, duplicates summed in input order",
		Params:  []ParamSpec{{Name: "shape", Required: true, Doc: "the dense shape (comma list)"}},
		Inputs:  []string{"indices", "values"},
		Outputs: []string{"indices", "values"},
		run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			shape, err := p.int64s("shape")
			if err != nil {
				return nil, err
			}
			x, o := hostCOO(in, "", shape), outs{}
			if dev == nil {
				r, err := accel.RefCoalesce(x)
				o.coo("", r)
				return o, err
			}
			return o.or(onDevice(dev, func(rel *releaser) error {
				dx, err := dev.UploadCOO(x)
				if err != nil {
					return err
				}
				rel.coo(dx)
				r, err := dev.Coalesce(dx)
				if err != nil {
					return err
				}
				rel.coo(r)
				return o.deviceCOO("", r)
			}))
		},
	})
	register(&OpSpec{
		Name:    "sparse_to_csr",
		Doc:     "sparse_to_csr(indices, values, shape): a 2-D or 3-D (batched) COO tensor as coalesced CSR",
		Params:  []ParamSpec{{Name: "shape", Required: true, Doc: "the dense shape (comma list)"}},
		Inputs:  []string{"indices", "values"},
		Outputs: []string{"crow", "col", "values"},
		run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			shape, err := p.int64s("shape")
			if err != nil {
				return nil, err
			}
			x, o := hostCOO(in, "", shape), outs{}
			if dev == nil {
				r, err := accel.RefCOOToCSR(x)
				o.csr(r)
				return o, err
			}
			return o.or(onDevice(dev, func(rel *releaser) error {
				dx, err := dev.UploadCOO(x)
				if err != nil {
					return err
				}
				rel.coo(dx)
				r, err := dev.COOToCSR(dx)
				if err != nil {
					return err
				}
				rel.csr(r)
				return o.deviceCSR(r)
			}))
		},
	})
	register(&OpSpec{
		Name:    "sparse_to_coo",
		Doc:     "sparse_to_coo(crow, col, values, shape): a CSR tensor (2-D or batched 3-D) as coalesced COO",
		Params:  []ParamSpec{{Name: "shape", Required: true, Doc: "the dense shape (comma list)"}},
		Inputs:  []string{"crow", "col", "values"},
		Outputs: []string{"indices", "values"},
		run: func(dev *accel.Device, p params, in map[string]*accel.Tensor) (map[string]*accel.Tensor, error) {
			shape, err := p.int64s("shape")
			if err != nil {
				return nil, err
			}
			x, o := hostCSR(in, "", shape), outs{}
			if dev == nil {
				r, err := accel.RefCSRToCOO(x)
				o.coo("", r)
				return o, err
			}
			return o.or(onDevice(dev, func(rel *releaser) error {
				dx, err := dev.UploadCSR(x)
				if err != nil {
					return err
				}
				rel.csr(dx)
				r, err := dev.CSRToCOO(dx)
				if err != nil {
					return err
				}
				rel.coo(r)
				return o.deviceCOO("", r)
			}))
		},
	})
}
