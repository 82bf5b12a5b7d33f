package accel

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modelRun is one call of a modelled op for TestModelMatchesRun: setup
// uploads its inputs (not counted), call runs the op alone and frees
// what it made.
type modelRun struct {
	name  string
	setup func(t *testing.T, d *Device) (call func() error, release func())
}

// TestModelMatchesRun runs each op that reports a traffic model and
// checks the model's pass graph against what the device recorded for the
// call: its kernel launches (the model's passes less the driver's fills
// and copies) and its host waits. The model is how a GPU plan is judged
// without a GPU; this is how it is kept true to the code (under
// ACCEL_TEST_PLANS=gpu, to the GPU plans').
func TestModelMatchesRun(t *testing.T) {
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, kernels := range []bool{false, true} {
			// and with every fill and copy on the kernels
			plans(d).fillKernel, plans(d).copyKernel = kernels, kernels
			modelMatchesRun(t, d)
		}
		plans(d).fillKernel, plans(d).copyKernel = false, false
	})
}

func modelMatchesRun(t *testing.T, d *Device) {
	t.Helper()
	{
		for _, c := range modelRuns(d) {
			call, release := c.setup(t, d)
			if call == nil {
				continue // not on this device
			}
			var got []PlanReport
			d.OnPlan(func(r PlanReport) {
				if r.ModelBytes > 0 || r.Launches > 0 {
					got = append(got, r)
				}
			})
			require.NoError(t, d.Sync())
			before := d.Stats()
			err := call()
			ran := d.Stats().Sub(before)
			d.OnPlan(nil)
			release()
			require.NoError(t, err, c.name)
			if !assert.Len(t, got, 1, "%s: one op's model", c.name) {
				continue
			}
			r := got[0]
			assert.Equal(t, int64(r.Launches-r.Transfers), ran.Launches, "%s %s (fill and copy kernels %v): kernel launches: %s", d.caps.Backend, c.name,
				plans(d).fillKernel, r)
			assert.Equal(t, int64(r.Waits), ran.Waits, "%s: waits: %s", c.name, r)
		}
	}
}

// forceMergePath makes d's sparse unions take the GPUs' merge path, which
// the model is of; the returned func undoes it.
func forceMergePath(d *Device) func() {
	plans(d).sparseFn = func(sparsePlan, int64) sparsePlan {
		return sparsePlan{Strategy: sparseByMergePath, Reason: "forced by a test"}
	}
	plans(d).unionFn = func(unionPlan, int64, int) unionPlan { return unionPlan{} }
	return func() { plans(d).sparseFn, plans(d).unionFn = nil, nil }
}

func modelRuns(d *Device) []modelRun {
	rng := rand.New(rand.NewSource(77))
	up := func(t *testing.T, xs ...*Tensor) ([]*DeviceTensor, func()) { return uploadAll(t, d, xs...) }
	ints := func(n int, mod int64) *Tensor {
		v := make([]int64, n)
		for i := range v {
			v[i] = rng.Int63n(mod)
		}
		return tensorOf(Int64, v)
	}
	var runs []modelRun
	runs = append(runs, modelRun{"cumsum int32 100000", func(t *testing.T, d *Device) (func() error, func()) {
		v := make([]int32, 100000)
		for i := range v {
			v[i] = int32(rng.Intn(100))
		}
		x, rel := up(t, tensorOf(Int32, v))
		return func() error {
			y, err := d.Cumsum(x[0], false)
			y.Release()
			return err
		}, rel
	}})
	runs = append(runs, modelRun{"compact float32 100000", func(t *testing.T, d *Device) (func() error, func()) {
		mask, _ := NewTensor(Bool, 100000)
		for i := range mask.Bools() {
			if rng.Intn(3) == 0 {
				mask.Bools()[i] = 1
			}
		}
		x, rel := up(t, randTensor(t, rng, Float32, 100000), mask)
		return func() error {
			o, i, err := d.Compact(x[0], x[1])
			o.Release()
			i.Release()
			return err
		}, rel
	}})
	// the chunked plan's roles from radixSkipMin keys on
	for _, n := range []int{1000, 100000} {
		runs = append(runs, modelRun{fmt.Sprintf("sort uint32 %d", n), func(t *testing.T, d *Device) (func() error, func()) {
			v := make([]uint32, n)
			for i := range v {
				v[i] = rng.Uint32()
			}
			x, rel := up(t, tensorOf(Uint32, v))
			return func() error {
				s, p, err := d.Sort(x[0], false)
				s.Release()
				p.Release()
				return err
			}, rel
		}})
	}
	for _, u := range []int64{1000, 1 << 40} {
		runs = append(runs, modelRun{"unique int64 100000", func(t *testing.T, d *Device) (func() error, func()) {
			x, rel := up(t, ints(100000, u))
			return func() error {
				v, i, c, err := d.Unique(x[0])
				v.Release()
				i.Release()
				c.Release()
				return err
			}, rel
		}})
	}
	runs = append(runs, modelRun{"tril_indices 300^2", func(t *testing.T, d *Device) (func() error, func()) {
		return func() error {
			y, err := d.TrilIndices(300, 300, 0, Int64)
			y.Release()
			return err
		}, func() {}
	}})
	runs = append(runs, modelRun{"diagonal_scatter 64^2", func(t *testing.T, d *Device) (func() error, func()) {
		x, rel := up(t, hostZeros(Float32, 64, 64), hostZeros(Float32, 64))
		return func() error {
			y, err := d.DiagonalScatter(x[0], x[1], 0, 0, 1)
			y.Release()
			return err
		}, rel
	}})
	runs = append(runs, modelRun{"get_indice_pairs subm", func(t *testing.T, d *Device) (func() error, func()) {
		shape := []int64{9, 40, 40}
		x, rel := up(t, randSites(rng, 3, shape, 3000))
		plans(d).shape = shapeCandidates // the GPUs' layout, which the model is of
		return func() error {
			r, err := d.IndicePairs(x[0], SparseConvParams{BatchSize: 3, SpatialShape: shape, KSize: []int64{3, 3, 3}, Subm: true})
			r.Release()
			return err
		}, func() { plans(d).shape = shapeAuto; rel() }
	}})
	for _, c := range []struct {
		name string
		p    SparseConvParams
	}{
		{"conv", SparseConvParams{BatchSize: 3, SpatialShape: []int64{9, 40, 40}, KSize: []int64{3, 3, 3}, Stride: []int64{2, 2, 2},
			Padding: []int64{0, 1, 1}}},
		{"transposed conv", SparseConvParams{BatchSize: 3, SpatialShape: []int64{9, 40, 40}, KSize: []int64{2, 2, 2},
			Stride: []int64{2, 2, 2}, Transpose: true}},
		{"inverse conv", SparseConvParams{BatchSize: 3, SpatialShape: []int64{9, 40, 40}, KSize: []int64{3, 3, 3},
			Stride: []int64{2, 2, 2}, Padding: []int64{0, 1, 1}, Inverse: true}},
	} {
		runs = append(runs, modelRun{"get_indice_pairs " + c.name, func(t *testing.T, d *Device) (func() error, func()) {
			x, rel := up(t, randSites(rng, 3, c.p.SpatialShape, 3000))
			plans(d).shape = shapeCandidates
			return func() error {
				r, err := d.IndicePairs(x[0], c.p)
				r.Release()
				return err
			}, func() { plans(d).shape = shapeAuto; rel() }
		}})
	}
	runs = append(runs, modelRun{"diagonal_scatter_backward 64^2", func(t *testing.T, d *Device) (func() error, func()) {
		x, rel := up(t, hostZeros(Float32, 64, 64))
		return func() error {
			gi, gs, err := d.DiagonalScatterBackward(x[0], 1, 0, 1)
			gi.Release()
			gs.Release()
			return err
		}, rel
	}})
	runs = append(runs, modelRun{"hash_table insert_dense", func(t *testing.T, d *Device) (func() error, func()) {
		if !d.caps.Int64Atomics {
			return nil, nil
		}
		x, rel := up(t, ints(50000, 20000))
		tab, err := d.NewHashTable(20000)
		require.NoError(t, err)
		return func() error {
				ids, _, err := tab.InsertDense(x[0])
				ids.Release()
				return err
			}, func() {
				tab.Release()
				rel()
			}
	}})
	runs = append(runs, modelRun{"hash_table lookup", func(t *testing.T, d *Device) (func() error, func()) {
		if !d.caps.Int64Atomics {
			return nil, nil
		}
		x, rel := up(t, ints(50000, 20000))
		tab, err := d.NewHashTable(20000)
		require.NoError(t, err)
		err = tab.Insert(x[0])
		require.NoError(t, err)
		return func() error {
				found, err := tab.Lookup(x[0])
				found.Release()
				return err
			}, func() {
				tab.Release()
				rel()
			}
	}})
	for _, csr := range []bool{true, false} {
		name := map[bool]string{true: "sparse_divide csr", false: "sparse_add coo"}[csr]
		runs = append(runs, modelRun{name, func(t *testing.T, d *Device) (func() error, func()) {
			shape := []int64{64, 300}
			undo := forceMergePath(d)
			var call func() error
			var release []func()
			if csr {
				ax, err := d.UploadCSR(genCSR(rng, shape, Float32, Int64, spGen{nnz: 3000}))
				require.NoError(t, err)
				ay, err := d.UploadCSR(genCSR(rng, shape, Float32, Int64, spGen{nnz: 2000}))
				require.NoError(t, err)
				call = func() error { out, err := d.SparseDivideCSR(ax, ay); out.Release(); return err }
				release = []func(){ax.Release, ay.Release}
			} else {
				ax, err := d.UploadCOO(genCOO(rng, shape, Float32, Int64, spGen{nnz: 3000}))
				require.NoError(t, err)
				ay, err := d.UploadCOO(genCOO(rng, shape, Float32, Int64, spGen{nnz: 2000}))
				require.NoError(t, err)
				call = func() error { out, err := d.SparseAdd(ax, ay); out.Release(); return err }
				release = []func(){ax.Release, ay.Release}
			}
			return call, func() {
				undo()
				for _, f := range release {
					f()
				}
			}
		}})
	}
	// the slotted partition's ways back: a bucket past its slots (2000
	// targets of 50 hits on average get 104 slots; the first takes 110
	// hits) counts first, a target past kernels.ScPartMax hits sorts
	for _, hot := range []int{110, 129} {
		name := fmt.Sprintf("scatter_reduce slots 100000 into 2000, %d on one det=true", hot)
		runs = append(runs, modelRun{name, func(t *testing.T, d *Device) (func() error, func()) {
			in, _ := NewTensor(Float32, 2000)
			src, _ := NewTensor(Float32, 100000)
			fillDet(rng, in, Sum)
			fillDet(rng, src, Sum)
			idx := ints(100000, 2000)
			for i := range idx.Int64s() {
				if i < hot {
					idx.Int64s()[i] = 0
				} else if idx.Int64s()[i] == 0 {
					idx.Int64s()[i] = 1
				}
			}
			x, rel := up(t, in, idx, src)
			undo := forceScatter(d, slotted)
			return func() error {
					y, err := d.ScatterReduceDeterministic(x[0], 0, x[1], x[2], Sum, true)
					y.Release()
					return err
				}, func() {
					undo()
					rel()
				}
		}})
	}
	for _, strategy := range []scatterPath{planned, partitioned, slotted, scatterSorted} {
		for _, tg := range []int64{20000, 10} {
			for _, red := range []Reduction{Sum, Mean} {
				for _, det := range []bool{false, true} {
					if strategy != planned && !det {
						continue
					}
					name := fmt.Sprintf("scatter_reduce %s 100000 into %d %s det=%v", strategyName(strategy), tg, red, det)
					runs = append(runs, modelRun{name, func(t *testing.T, d *Device) (func() error, func()) {
						in, _ := NewTensor(Float32, tg)
						src, _ := NewTensor(Float32, 100000)
						fillDet(rng, in, red)
						fillDet(rng, src, red)
						x, rel := up(t, in, ints(100000, tg), src)
						undo := forceScatter(d, strategy)
						return func() error {
								f := d.ScatterReduce
								if det {
									f = d.ScatterReduceDeterministic
								}
								y, err := f(x[0], 0, x[1], x[2], red, true)
								y.Release()
								return err
							}, func() {
								undo()
								rel()
							}
					}})
				}
			}
		}
	}
	return runs
}
