package bench

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"

	"github.com/sbinet/npyio/npy"

	"github.com/accelkern/accel/accel"
)

// Bench cases of get_indice_pairs (issue 13): the seed's two layers on the
// LiDAR-like sites of shared/datasets/indice_pairs (found from
// $ACCEL_DATASETS, else the nearest shared/datasets above the working
// folder): subm248636 (submanifold, batch 4, 41x1440x1440, k3) and
// conv149100 (batch 4, 11x360x360, k3, stride 2, padding (0,1,1)), with
// the planner's split and then every split forced (rows named _LL, _LK,
// _KL, _KK), so the default's choice is visible; and conv248636 (the
// subm248636 sites, stride 2, padding 1: a target space larger than its
// candidates) with the planner's split. Without the datasets the rows are
// left out. --quick runs small random sites instead.

// datasetDir returns the folder of the indice_pairs datasets, or "".
func datasetDir() string {
	if d := os.Getenv("ACCEL_DATASETS"); d != "" {
		return filepath.Join(d, "indice_pairs")
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for i := 0; i < 6; i++ {
		d := filepath.Join(wd, "..", "shared", "datasets", "indice_pairs")
		if _, err := os.Stat(d); err == nil {
			return d
		}
		wd = filepath.Dir(wd)
	}
	return ""
}

// readSites reads an int32 [L, 4] .npy of sites.
func readSites(path string) (*accel.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := npy.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Header.Descr.Type != "<i4" || len(r.Header.Descr.Shape) != 2 {
		return nil, fmt.Errorf("%s: want int32 [L, 4], got %s %v", path, r.Header.Descr.Type, r.Header.Descr.Shape)
	}
	var v []int32
	if err := r.Read(&v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return accel.FromInt32s([]int64{int64(r.Header.Descr.Shape[0]), int64(r.Header.Descr.Shape[1])}, v)
}

// quickSites are n random distinct sites of batch x shape.
func quickSites(n int, batch int64, shape []int64) *accel.Tensor {
	rng := rand.New(rand.NewSource(13))
	seen := map[[4]int32]bool{}
	var v []int32
	for len(seen) < n {
		s := [4]int32{int32(rng.Int63n(batch)), int32(rng.Int63n(shape[0])), int32(rng.Int63n(shape[1])), int32(rng.Int63n(shape[2]))}
		if !seen[s] {
			seen[s] = true
			v = append(v, s[:]...)
		}
	}
	t, _ := accel.FromInt32s([]int64{int64(n), 4}, v)
	return t
}

func indiceCases(quick bool) []benchCase {
	type layer struct {
		name, file string
		n          int
		p          accel.SparseConvParams
		auto       bool // the planner's split only
	}
	k3 := []int64{3, 3, 3}
	layers := []layer{
		{"subm248636", "subm248636_indices.npy", 248636, accel.SparseConvParams{BatchSize: 4, SpatialShape: []int64{41, 1440, 1440},
			KSize: k3, Padding: []int64{1, 1, 1}, Subm: true}, false},
		{"conv149100", "conv149100_indices.npy", 149100, accel.SparseConvParams{BatchSize: 4, SpatialShape: []int64{11, 360, 360},
			KSize: k3, Stride: []int64{2, 2, 2}, Padding: []int64{0, 1, 1}}, false},
		// the first downsampling of subm248636's grid: 43.5M target
		// keys, more than its 6.7M candidates (the dense grid's bits)
		{"conv248636", "subm248636_indices.npy", 248636, accel.SparseConvParams{BatchSize: 4, SpatialShape: []int64{41, 1440, 1440},
			KSize: k3, Stride: []int64{2, 2, 2}, Padding: []int64{1, 1, 1}}, true},
	}
	dir := datasetDir()
	if quick {
		layers[0].name, layers[0].n, layers[0].p.SpatialShape = "subm20000_quick", 20000, []int64{41, 200, 200}
		layers[1].name, layers[1].n, layers[1].p.SpatialShape = "conv12000_quick", 12000, []int64{11, 100, 100}
		layers[2].name, layers[2].n, layers[2].p.SpatialShape = "conv20000_quick", 20000, []int64{41, 200, 200}
	} else if dir == "" {
		return nil
	}
	var cases []benchCase
	for _, l := range layers {
		var sites *accel.Tensor
		var loadErr error
		load := func() (*accel.Tensor, error) {
			if sites == nil && loadErr == nil {
				if quick {
					sites = quickSites(l.n, l.p.BatchSize, l.p.SpatialShape)
				} else {
					sites, loadErr = readSites(filepath.Join(dir, l.file))
				}
			}
			return sites, loadErr
		}
		k := int64(27)
		for _, split := range append([]accel.IndiceSplit{accel.SplitAuto}, accel.IndiceSplits...) {
			name := l.name
			if split != accel.SplitAuto {
				name += "_" + split.String()
			}
			p := l.p
			p.Split = split
			// bytes: the sites read, the pairs written (each once)
			bytes := int64(l.n)*16 + k*2*int64(l.n)*4
			cases = append(cases, benchCase{
				op: "get_indice_pairs", name: name, bytes: bytes, items: int64(l.n),
				setup: func(dev *accel.Device) (caseRun, error) {
					h, err := load()
					if err != nil {
						return caseRun{}, err
					}
					di, err := dev.Upload(h)
					if err != nil {
						return caseRun{}, err
					}
					res := &accel.IndicePairs{}
					call := func() error { return dev.IndicePairsInto(res, di, p) }
					done := func() { res.Release(); di.Release() }
					return caseRun{call: call, done: done}, nil
				},
				ref: func() (func(), func()) {
					h, err := load()
					if err != nil {
						return func() {}, func() {}
					}
					return func() { _, _ = accel.RefIndicePairs(h, p) }, func() {}
				},
			})
			if quick || l.auto {
				break
			}
		}
	}
	return cases
}

// convSpace is a regular conv's target key space: batch x its output
// shape (the bench's convs set every list).
func convSpace(p accel.SparseConvParams) int64 {
	s := p.BatchSize
	for d, v := range p.SpatialShape {
		s *= (v+2*p.Padding[d]-(p.KSize[d]-1)-1)/p.Stride[d] + 1
	}
	return s
}

// submLines is the lines of a submanifold conv's site grid (the batch
// times every spatial size but the last), for its plan.
func submLines(p accel.SparseConvParams) int64 {
	s := p.BatchSize
	for _, v := range p.SpatialShape[:len(p.SpatialShape)-1] {
		s *= v
	}
	return s
}
