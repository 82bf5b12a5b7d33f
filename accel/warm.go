package accel

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Warm builds ahead the kernels that the named ops launch on this device,
// so that their first calls do not wait for the driver's compiler. A name
// is an op (as in docs/ops.md and `accel run`: "scatter_reduce",
// "cumsum", "get_indice_pairs", ...) or a family, which names all its ops:
// "tri", "diag", "scatter", "prim", "sparse", "indice"; WarmOps lists
// them. With no names Warm does nothing.
//
// Each op is warmed by a small call of its common form on the device
// (float32 values, int64 indices, the op's default parameters, sum where
// it takes a reduction), run to the end, so that it builds exactly the
// entry points and variants such a call's plan launches and nothing else
// (and the drivers' own first-dispatch work, which lavapipe and PoCL do
// then); ops run concurrently, one per core, where the driver builds
// different kernels at the same time (PoCL and lavapipe do not). A later
// call of another form (another dtype or
// reduction, or a size whose plan differs) builds what it needs on first
// use, as it would without Warm.
//
// An unknown name is an *ArgError (ErrInvalidArgument) naming it, before
// anything is built. A failed op's error names it and wraps the op's own
// (errors.Is with the package's sentinels); the errors of several are
// joined.
func (d *Device) Warm(ops ...string) error {
	var names []string
	for _, o := range ops {
		switch {
		case warmFamilies[o] != nil:
			names = append(names, warmFamilies[o]...)
		case warmers[o] != nil:
			names = append(names, o)
		default:
			return argErr("warm", "op", fmt.Sprintf("%q", o), "an op or family of WarmOps ("+strings.Join(WarmOps(), ", ")+")", ErrInvalidArgument)
		}
	}
	sort.Strings(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return nil
	}
	if err := d.checkOpen("warm"); err != nil {
		return err
	}
	errs := make([]error, len(names))
	next := make(chan int, len(names))
	for i := range names {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(len(names), warmWorkers()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				w := &warmRun{d: d}
				warmers[names[i]](w)
				w.release()
				if w.err != nil {
					errs[i] = fmt.Errorf("accel: warm %s: %w", names[i], w.err)
				}
			}
		}()
	}
	wg.Wait()
	if err := d.Sync(); err != nil {
		errs = append(errs, fmt.Errorf("accel: warm: %w", err))
	}
	return errors.Join(errs...)
}

// warmWorkers is how many ops Warm runs at once: one per core. On the CPU
// drivers it makes no difference (every family with empty caches on the
// 2-core VM: lavapipe 14.7 / 13.6 / 12.8 s and PoCL 32.5 / 33.8 / 32.6 s
// with 24 / 2 / 1 workers): PoCL compiles under one lock per process,
// and lavapipe compiles a shader at its first dispatch, on the device's
// one queue. Drivers that build in parallel can use more.
func warmWorkers() int { return max(runtime.NumCPU(), 1) }

// WarmOps returns the names Warm takes, sorted: the op families, then
// every op.
func WarmOps() []string {
	var fams, ops []string
	for f := range warmFamilies {
		fams = append(fams, f)
	}
	for o := range warmers {
		ops = append(ops, o)
	}
	sort.Strings(fams)
	sort.Strings(ops)
	return append(fams, ops...)
}

// warmFamilies are the op families Warm takes, as the README and the fuzz
// targets group the ops.
var warmFamilies = map[string][]string{
	"tri":  {"tril_indices", "triu_indices"},
	"diag": {"diagonal_scatter"},
	"scatter": {"scatter", "scatter_reduce", "scatter_reduce_backward", "put_along_axis", "take_along_axis",
		"index_add", "index_reduce"},
	"prim":   {"cumsum", "compact", "sort", "unique", "segment_reduce"},
	"sparse": {"sparse_add", "sparse_sub", "sparse_mul", "sparse_div", "sparse_div_backward", "sparse_coalesce", "sparse_to_csr", "sparse_to_coo"},
	"indice": {"get_indice_pairs"},
}

// warmRun is one op's warm-up: the tensors it made (released at its end)
// and its first error, after which its steps do nothing.
type warmRun struct {
	d   *Device
	err error
	rel []interface{ Release() }
}

// step runs f unless an earlier step failed.
func (w *warmRun) step(f func() error) {
	if w.err == nil {
		w.err = f()
	}
}

func (w *warmRun) keep(r interface{ Release() }) { w.rel = append(w.rel, r) }

func (w *warmRun) release() {
	for _, r := range w.rel {
		r.Release()
	}
}

// up uploads a host tensor made by mk (nil once a step has failed).
func (w *warmRun) up(mk func() (*Tensor, error)) *DeviceTensor {
	var t *DeviceTensor
	w.step(func() error {
		h, err := mk()
		if err == nil {
			t, err = w.d.Upload(h)
		}
		if err == nil {
			w.keep(t)
		}
		return err
	})
	return t
}

// The warm-ups' inputs: warmN source elements over warmTargets targets,
// large enough that the plans are those of ordinary calls on every device
// (the CPU drivers' private copies and runs per core, the GPUs' tiles),
// small enough to run in a few milliseconds.
const (
	warmN       = 1 << 16
	warmTargets = 1 << 12
)

func warmF32(n int64) func() (*Tensor, error) {
	return func() (*Tensor, error) {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%251) / 8
		}
		return FromFloat32s([]int64{n}, v)
	}
}

// warmIdx is n int64 indices into [0, m), scattered.
func warmIdx(n, m int64) func() (*Tensor, error) {
	return func() (*Tensor, error) {
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(i) * 7919 % m
		}
		return FromInt64s([]int64{n}, v)
	}
}

// warmSorted is n int64 indices into [0, m), ascending.
func warmSorted(n, m int64) func() (*Tensor, error) {
	return func() (*Tensor, error) {
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(i) * m / n
		}
		return FromInt64s([]int64{n}, v)
	}
}

// warmCOO is a 2-D COO tensor of n entries in a 256 x 256 shape, every
// third entry of a stride-k pattern, so that two of them overlap in part.
func warmCOO(w *warmRun, n, k int64) *SparseCOO {
	var s *SparseCOO
	w.step(func() error {
		idx := make([]int64, 2*n)
		for i := int64(0); i < n; i++ {
			p := i * k % (256 * 256)
			idx[i], idx[n+i] = p/256, p%256
		}
		hi, err := FromInt64s([]int64{2, n}, idx)
		if err != nil {
			return err
		}
		hv, err := warmF32(n)()
		if err != nil {
			return err
		}
		if s, err = w.d.UploadCOO(HostCOO{Indices: hi, Values: hv, Shape: []int64{256, 256}}); err == nil {
			w.keep(s)
		}
		return err
	})
	return s
}

// result keeps an op's result for release.
func result[T interface{ Release() }](w *warmRun, f func() (T, error)) {
	w.step(func() error {
		r, err := f()
		if err == nil {
			w.keep(r)
		}
		return err
	})
}

// warmers run each op's warm-up.
var warmers = map[string]func(w *warmRun){
	"tril_indices": func(w *warmRun) {
		result(w, func() (*DeviceTensor, error) { return w.d.TrilIndices(256, 256, 0, Int64) })
	},
	"triu_indices": func(w *warmRun) {
		result(w, func() (*DeviceTensor, error) { return w.d.TriuIndices(256, 256, 0, Int64) })
	},
	"diagonal_scatter": func(w *warmRun) {
		in := w.up(func() (*Tensor, error) {
			t, err := warmF32(256 * 256)()
			if err != nil {
				return nil, err
			}
			return FromFloat32s([]int64{256, 256}, t.Float32s())
		})
		src := w.up(warmF32(256))
		result(w, func() (*DeviceTensor, error) { return w.d.DiagonalScatter(in, src, 0, 0, 1) })
	},
	"scatter": func(w *warmRun) {
		in, idx, src := w.up(warmF32(warmTargets)), w.up(warmIdx(warmN, warmTargets)), w.up(warmF32(warmN))
		result(w, func() (*DeviceTensor, error) { return w.d.Scatter(in, 0, idx, src) })
	},
	"scatter_reduce": func(w *warmRun) {
		in, idx, src := w.up(warmF32(warmTargets)), w.up(warmIdx(warmN, warmTargets)), w.up(warmF32(warmN))
		result(w, func() (*DeviceTensor, error) { return w.d.ScatterReduce(in, 0, idx, src, Sum, true) })
	},
	"scatter_reduce_backward": func(w *warmRun) {
		in, idx, src := w.up(warmF32(warmTargets)), w.up(warmIdx(warmN, warmTargets)), w.up(warmF32(warmN))
		grad := w.up(warmF32(warmTargets))
		w.step(func() error {
			out, gi, gs, err := w.d.ScatterReduceBackward(in, 0, idx, src, Sum, true, grad)
			if err == nil {
				w.keep(out)
				w.keep(gi)
				w.keep(gs)
			}
			return err
		})
	},
	"put_along_axis": func(w *warmRun) {
		in, idx, src := w.up(warmF32(warmTargets)), w.up(warmIdx(warmN, warmTargets)), w.up(warmF32(warmN))
		result(w, func() (*DeviceTensor, error) { return w.d.PutAlongAxis(in, idx, src, 0, Assign, true) })
	},
	"take_along_axis": func(w *warmRun) {
		in, idx := w.up(warmF32(warmTargets)), w.up(warmIdx(warmN, warmTargets))
		result(w, func() (*DeviceTensor, error) { return w.d.TakeAlongAxis(in, idx, 0) })
	},
	"index_add": func(w *warmRun) {
		in, idx, src := w.up(warmF32(warmTargets)), w.up(warmIdx(warmN, warmTargets)), w.up(warmF32(warmN))
		result(w, func() (*DeviceTensor, error) { return w.d.IndexAdd(in, 0, idx, src) })
	},
	"index_reduce": func(w *warmRun) {
		in, idx, src := w.up(warmF32(warmTargets)), w.up(warmIdx(warmN, warmTargets)), w.up(warmF32(warmN))
		result(w, func() (*DeviceTensor, error) { return w.d.IndexReduce(in, 0, idx, src, Sum, true) })
	},
	"cumsum": func(w *warmRun) {
		x := w.up(warmF32(warmN))
		result(w, func() (*DeviceTensor, error) { return w.d.Cumsum(x, false) })
	},
	"compact": func(w *warmRun) {
		x := w.up(warmF32(warmN))
		mask := w.up(func() (*Tensor, error) {
			t, err := NewTensor(Bool, warmN)
			if err == nil {
				for i := range t.Bools() {
					t.Bools()[i] = byte(i % 3 & 1)
				}
			}
			return t, err
		})
		w.step(func() error {
			out, idx, err := w.d.Compact(x, mask)
			if err == nil {
				w.keep(out)
				w.keep(idx)
			}
			return err
		})
	},
	"sort": func(w *warmRun) {
		x := w.up(warmF32(warmN))
		w.step(func() error {
			s, p, err := w.d.Sort(x, false)
			if err == nil {
				w.keep(s)
				w.keep(p)
			}
			return err
		})
	},
	"unique": func(w *warmRun) {
		x := w.up(warmIdx(warmN, warmTargets))
		w.step(func() error {
			v, inv, c, err := w.d.Unique(x)
			if err == nil {
				w.keep(v)
				w.keep(inv)
				w.keep(c)
			}
			return err
		})
	},
	"segment_reduce": func(w *warmRun) {
		x, seg := w.up(warmF32(warmN)), w.up(warmSorted(warmN, warmTargets))
		result(w, func() (*DeviceTensor, error) { return w.d.SegmentReduce(x, seg, Sum, warmTargets) })
	},
	"sparse_add":          warmSparse(SparseAddOp),
	"sparse_sub":          warmSparse(SparseSubOp),
	"sparse_mul":          warmSparse(SparseMulOp),
	"sparse_div":          warmSparse(SparseDivOp),
	"sparse_div_backward": warmSparseBackward,
	"sparse_coalesce": func(w *warmRun) {
		x := warmCOO(w, 4096, 7919)
		result(w, func() (*SparseCOO, error) { return w.d.Coalesce(x) })
	},
	"sparse_to_csr": func(w *warmRun) {
		x := warmCOO(w, 4096, 7919)
		result(w, func() (*SparseCSR, error) { return w.d.COOToCSR(x) })
	},
	"sparse_to_coo": func(w *warmRun) {
		x := warmCOO(w, 4096, 7919)
		var csr *SparseCSR
		w.step(func() error {
			var err error
			if csr, err = w.d.COOToCSR(x); err == nil {
				w.keep(csr)
			}
			return err
		})
		result(w, func() (*SparseCOO, error) { return w.d.CSRToCOO(csr) })
	},
	"get_indice_pairs": func(w *warmRun) {
		// 2048 sites of a 64 x 64 grid, a 3 x 3 kernel with padding 1
		sites := w.up(func() (*Tensor, error) {
			const n = 2048
			v := make([]int32, 3*n)
			for i := 0; i < n; i++ {
				p := i * 2 % (64 * 64)
				v[3*i+1], v[3*i+2] = int32(p/64), int32(p%64)
			}
			return FromInt32s([]int64{n, 3}, v)
		})
		p := SparseConvParams{BatchSize: 1, SpatialShape: []int64{64, 64}, KSize: []int64{3, 3}, Padding: []int64{1, 1}}
		result(w, func() (*IndicePairs, error) { return w.d.IndicePairs(sites, p) })
	},
}

// warmSparse warms an elementwise sparse op on two COO tensors whose
// patterns overlap in part.
func warmSparse(op SparseOp) func(w *warmRun) {
	return func(w *warmRun) {
		x, y := warmCOO(w, 4096, 7919), warmCOO(w, 4096, 7)
		result(w, func() (*SparseCOO, error) { return w.d.SparseBinary(op, x, y) })
	}
}

func warmSparseBackward(w *warmRun) {
	x, y := warmCOO(w, 4096, 7919), warmCOO(w, 4096, 7)
	var out *SparseCOO
	w.step(func() error {
		var err error
		if out, err = w.d.SparseBinary(SparseDivOp, x, y); err == nil {
			w.keep(out)
		}
		return err
	})
	w.step(func() error {
		g, err := w.d.Zeros(Float32, out.Values.Shape()...)
		if err != nil {
			return err
		}
		w.keep(g)
		o, gx, gy, err := w.d.SparseBinaryBackward(SparseDivOp, x, y, g)
		if err == nil {
			w.keep(o)
			w.keep(gx)
			w.keep(gy)
		}
		return err
	})
}
