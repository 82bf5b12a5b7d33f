package bench

import (
	"math/rand"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/cmd/accel/internal/ops"
	"github.com/accelkern/accel/reference"
)

// Bench cases of scatter_reduce and diagonal_scatter (the case names the
// issue tracker asks for: rand16M_1M_<reduce>, hot16M_16_<reduce>,
// perm16M_sum, diag4096, diag64x512x512; the bit-reproducible mode's
// rand16M_1M_sum_det and perm16M_sum_det; --quick runs smaller ones).

func scatterCases(quick bool) []benchCase {
	nSrc, nOut, tagSrc, tagOut := int64(16<<20), int64(1<<20), "16M", "1M"
	if quick {
		nSrc, nOut, tagSrc, tagOut = 1<<20, 64<<10, "1M", "64K"
	}
	type spec struct {
		name        string
		nOut, slots int64 // index values in [0, slots)
		perm        bool
		reduce      accel.Reduction
		det         bool // the bit-reproducible (sort-based) mode
	}
	var specs []spec
	for _, r := range []accel.Reduction{accel.Sum, accel.Amax, accel.Mean} {
		specs = append(specs, spec{"rand" + tagSrc + "_" + tagOut + "_" + r.String(), nOut, nOut, false, r, false})
	}
	specs = append(specs, spec{"rand" + tagSrc + "_" + tagOut + "_sum_det", nOut, nOut, false, accel.Sum, true})
	for _, r := range []accel.Reduction{accel.Sum, accel.Amax, accel.Mean} {
		specs = append(specs, spec{"hot" + tagSrc + "_16_" + r.String(), 16, 16, false, r, false})
	}
	specs = append(specs, spec{"perm" + tagSrc + "_sum", nSrc, nSrc, true, accel.Sum, false})
	// a hit a target: the GPUs' slotted partition in buckets of 16 targets
	specs = append(specs, spec{"perm" + tagSrc + "_sum_det", nSrc, nSrc, true, accel.Sum, true})
	var cases []benchCase
	for _, s := range specs {
		s := s
		var in, idx, src *accel.Tensor
		makeInputs := func() {
			if in != nil {
				return
			}
			rng := rand.New(rand.NewSource(7))
			in, _ = accel.NewTensor(accel.Float32, s.nOut)
			src, _ = accel.NewTensor(accel.Float32, nSrc)
			for i := range src.Float32s() {
				src.Float32s()[i] = rng.Float32()
			}
			idx, _ = accel.NewTensor(accel.Int64, nSrc)
			v := idx.Int64s()
			if s.perm {
				for i, p := range rng.Perm(int(nSrc)) {
					v[i] = int64(p)
				}
			} else {
				for i := range v {
					v[i] = rng.Int63n(s.slots)
				}
			}
		}
		cases = append(cases, benchCase{
			op: "scatter_reduce", name: s.name, bytes: nSrc*(4+8) + 2*s.nOut*4,
			setup: func(dev *accel.Device) (caseRun, error) {
				makeInputs()
				ts, release, err := ops.UploadAll(dev, in, idx, src)
				if err != nil {
					return caseRun{}, err
				}
				call := func() error {
					f := dev.ScatterReduce
					if s.det {
						f = dev.ScatterReduceDeterministic
					}
					out, err := f(ts[0], 0, ts[1], ts[2], s.reduce, true)
					if err == nil {
						out.Release()
					}
					return err
				}
				return caseRun{call: call, plan: "includes index validation", done: release}, nil
			},
			ref: func() (func(), func()) {
				makeInputs()
				return func() { accel.RefScatterReduce(in, 0, idx, src, s.reduce, true) }, func() {}
			},
		})
	}
	return cases
}

func diagCases(quick bool) []benchCase {
	shapes := map[string][]int64{"diag4096": {4096, 4096}, "diag64x512x512": {64, 512, 512}}
	order := []string{"diag4096", "diag64x512x512"}
	if quick {
		shapes = map[string][]int64{"diag1024": {1024, 1024}, "diag16x256x256": {16, 256, 256}}
		order = []string{"diag1024", "diag16x256x256"}
	}
	var cases []benchCase
	for _, name := range order {
		shape := shapes[name]
		r := len(shape)
		// the diagonal of the last two dims: the batch dims, then its length
		diagShape := append(append([]int64(nil), shape[:r-2]...), reference.DiagLen(shape[r-2], shape[r-1], 0))
		var in, src *accel.Tensor
		makeInputs := func() {
			if in == nil {
				in, _ = accel.NewTensor(accel.Float32, shape...)
				src, _ = accel.NewTensor(accel.Float32, diagShape...)
			}
		}
		n, _ := accel.NumElements(shape)
		srcN, _ := accel.NumElements(diagShape)
		cases = append(cases, benchCase{
			op: "diagonal_scatter", name: name, bytes: 2*n*4 + srcN*4,
			setup: func(dev *accel.Device) (caseRun, error) {
				makeInputs()
				ts, release, err := ops.UploadAll(dev, in, src)
				if err != nil {
					return caseRun{}, err
				}
				call := func() error {
					out, err := dev.DiagonalScatter(ts[0], ts[1], 0, -2, -1)
					if err == nil {
						out.Release()
					}
					return err
				}
				return caseRun{call: call, plan: "device copy of input + diagonal kernel", done: release}, nil
			},
			ref: func() (func(), func()) {
				makeInputs()
				return func() { accel.RefDiagonalScatter(in, src, 0, -2, -1) }, func() {}
			},
		})
	}
	return cases
}
