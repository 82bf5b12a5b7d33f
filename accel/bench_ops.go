package accel

import (
	"math/rand"

	"github.com/accelkern/accel/host"
)

// Bench cases of scatter_reduce and diagonal_scatter (the case names the
// issue tracker asks for: rand16M_1M_<reduce>, hot16M_16_<reduce>,
// perm16M_sum, diag4096, diag64x512x512; --quick runs smaller ones).

func scatterBenchCases(quick bool) []benchCase {
	nSrc, nOut, tagSrc, tagOut := int64(16<<20), int64(1<<20), "16M", "1M"
	if quick {
		nSrc, nOut, tagSrc, tagOut = 1<<20, 64<<10, "1M", "64K"
	}
	type spec struct {
		name        string
		nOut, slots int64 // index values in [0, slots)
		perm        bool
		reduce      string
		det         bool // the bit-reproducible (sort-based) mode
	}
	var specs []spec
	for _, r := range []string{ReduceSum, ReduceAmax, ReduceMean} {
		specs = append(specs, spec{"rand" + tagSrc + "_" + tagOut + "_" + r, nOut, nOut, false, r, false})
	}
	specs = append(specs, spec{"rand" + tagSrc + "_" + tagOut + "_sum_det", nOut, nOut, false, ReduceSum, true})
	for _, r := range []string{ReduceSum, ReduceAmax, ReduceMean} {
		specs = append(specs, spec{"hot" + tagSrc + "_16_" + r, 16, 16, false, r, false})
	}
	specs = append(specs, spec{"perm" + tagSrc + "_sum", nSrc, nSrc, true, ReduceSum, false})
	var cases []benchCase
	for _, s := range specs {
		s := s
		var in, idx, src *Tensor
		makeInputs := func() {
			if in != nil {
				return
			}
			rng := rand.New(rand.NewSource(7))
			in, _ = NewTensor(Float32, s.nOut)
			src, _ = NewTensor(Float32, nSrc)
			for i := range src.Float32s() {
				src.Float32s()[i] = rng.Float32()
			}
			idx, _ = NewTensor(Int64, nSrc)
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
			setup: func(dev *Device) (func() error, func() (float64, error), string, func(), error) {
				makeInputs()
				ts, release, err := uploadAll(dev, in, idx, src)
				if err != nil {
					return nil, nil, "", nil, err
				}
				run := func() (float64, error) {
					out, secs, err := dev.scatterReduceTimed("scatter_reduce", ts[0], 0, ts[1], ts[2], s.reduce, true, s.det)
					if err == nil {
						out.Release()
					}
					return secs, err
				}
				cold := func() error { _, err := run(); return err }
				sp := host.PlanScatter(dev.caps, nSrc, s.nOut, Float32.Size(), s.det)
				note := sp.Strategy + ": " + sp.Reason + "; includes index validation"
				if sp.Strategy == host.ScatterAtomic && dev.nativeFloatAdd(Float32) && s.reduce != ReduceAmax {
					note = sp.Strategy + " (native float add): " + sp.Reason + "; includes index validation"
				}
				return cold, run, note, release, nil
			},
			ref: func() (func(), func()) {
				makeInputs()
				return func() { ScatterReduce(in, 0, idx, src, s.reduce, true) }, func() {}
			},
		})
	}
	return cases
}

func diagBenchCases(quick bool) []benchCase {
	shapes := map[string][]int64{"diag4096": {4096, 4096}, "diag64x512x512": {64, 512, 512}}
	order := []string{"diag4096", "diag64x512x512"}
	if quick {
		shapes = map[string][]int64{"diag1024": {1024, 1024}, "diag16x256x256": {16, 256, 256}}
		order = []string{"diag1024", "diag16x256x256"}
	}
	var cases []benchCase
	for _, name := range order {
		shape := shapes[name]
		var in, src *Tensor
		makeInputs := func() {
			if in != nil {
				return
			}
			in, _ = NewTensor(Float32, shape...)
			g, _ := newDiagGeom("diagonal_scatter", shape, 0, -2, -1)
			src, _ = NewTensor(Float32, g.diagShape...)
		}
		n, _ := NumElements(shape)
		srcN := n / shape[len(shape)-1]
		cases = append(cases, benchCase{
			op: "diagonal_scatter", name: name, bytes: 2*n*4 + srcN*4,
			setup: func(dev *Device) (func() error, func() (float64, error), string, func(), error) {
				makeInputs()
				ts, release, err := uploadAll(dev, in, src)
				if err != nil {
					return nil, nil, "", nil, err
				}
				run := func() (float64, error) {
					out, secs, err := dev.diagonalScatter(ts[0], ts[1], 0, -2, -1, false)
					if err == nil {
						out.Release()
					}
					return secs, err
				}
				cold := func() error { _, err := run(); return err }
				return cold, run, "device copy of input + diagonal kernel", release, nil
			},
			ref: func() (func(), func()) {
				makeInputs()
				return func() { DiagonalScatter(in, src, 0, -2, -1) }, func() {}
			},
		})
	}
	return cases
}
