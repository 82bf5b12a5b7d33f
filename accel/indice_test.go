package accel

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ipCase is a get_indice_pairs input: sites and parameters.
type ipCase struct {
	name   string
	idx    *Tensor
	p      SparseConvParams
	shape  indiceShape // a forced layout (shapeAuto: the planner's)
	noGrid bool        // rows without the dense grid or the line table
}

// randSites draws l distinct sites over batch x shape, the grid's corners
// first (every face and corner of the grid gets sites), then random ones.
func randSites(rng *rand.Rand, batch int64, shape []int64, want int) *Tensor {
	D := len(shape)
	total := batch
	for _, s := range shape {
		total *= s
	}
	l := min(int64(want), total)
	seen := map[int64]bool{}
	var rows []int32
	add := func(b int64, c []int64) {
		key := b
		for d := range D {
			key = key*shape[d] + c[d]
		}
		if seen[key] || int64(len(seen)) >= l {
			return
		}
		seen[key] = true
		rows = append(rows, int32(b))
		for _, v := range c {
			rows = append(rows, int32(v))
		}
	}
	// corners of a random batch
	b := rng.Int63n(batch)
	for m := 0; m < 1<<D && int64(len(seen)) < l/2; m++ {
		c := make([]int64, D)
		for d := range D {
			if m>>d&1 == 1 {
				c[d] = shape[d] - 1
			}
		}
		add(b, c)
	}
	for int64(len(seen)) < l {
		c := make([]int64, D)
		for d := range D {
			c[d] = rng.Int63n(shape[d])
		}
		add(rng.Int63n(batch), c)
	}
	// shuffle the rows
	w := D + 1
	n := len(rows) / w
	for i := n - 1; i > 0; i-- {
		j := rng.Intn(i + 1)
		for k := 0; k < w; k++ {
			rows[i*w+k], rows[j*w+k] = rows[j*w+k], rows[i*w+k]
		}
	}
	t, err := FromInt32s([]int64{int64(n), int64(w)}, rows)
	if err != nil {
		panic(err)
	}
	return t
}

func randIPCases(seed int64, count int) []ipCase {
	rng := rand.New(rand.NewSource(seed))
	var cs []ipCase
	for i := range count {
		D := 1 + i%4
		p := SparseConvParams{BatchSize: 1 + rng.Int63n(3)}
		mode := i / 4 % 4 // regular, subm, transposed, inverse
		dil := rng.Intn(3) == 0
		for range D {
			ks := 1 + rng.Int63n(5)
			p.KSize = append(p.KSize, ks)
			// per dim a stride or a dilation (spconv's rule), mixed
			// across dims
			s, dl := int64(1), int64(1)
			if dil && (mode == 1 || rng.Intn(2) == 0) {
				dl = 1 + rng.Int63n(3)
			} else if mode != 1 {
				s = 1 + rng.Int63n(3)
			}
			p.Stride = append(p.Stride, s)
			p.Dilation = append(p.Dilation, dl)
			p.Padding = append(p.Padding, rng.Int63n(ks+1))
			p.OutPadding = append(p.OutPadding, rng.Int63n(max(s, dl)+1))
			p.SpatialShape = append(p.SpatialShape, 1+rng.Int63n(int64([]int{40, 12, 7, 5}[D-1])))
		}
		if mode != 2 {
			for d := range p.OutPadding {
				p.OutPadding[d] = 0
			}
		}
		p.Subm, p.Transpose, p.Inverse = mode == 1, mode == 2, mode == 3
		p.Split = IndiceSplits[i%len(IndiceSplits)]
		if i%5 == 0 {
			p.Split = SplitAuto
		}
		shape := shapeAuto
		if mode != 3 && i%3 == 1 {
			shape = shapeCandidates // the GPU-shaped path on the CPU drivers
		}
		noGrid := mode != 3 && i%3 == 2 // rows sorting the targets, or merging (subm)
		l := []int{0, 1, 7, 60, 200}[rng.Intn(5)]
		idx := randSites(rng, p.BatchSize, p.SpatialShape, l)
		cs = append(cs, ipCase{name: fmt.Sprintf("%d/D%d/%s/%s/L%d", i, D, []string{"conv", "subm", "tconv", "inv"}[mode], p.Split, idx.shape[0]),
			idx: idx, p: p, shape: shape, noGrid: noGrid})
	}
	return cs
}

// checkIP runs a case on d and compares every output byte with the
// reference (or the error, where the reference rejects the case).
func checkIP(t *testing.T, d *Device, c ipCase) {
	t.Helper()
	want, wantErr := RefIndicePairs(c.idx, c.p)
	di := mustUpload(t, d, c.idx)
	defer di.Release()
	plans(d).shape, plans(d).noGrid = c.shape, c.noGrid
	got, err := d.IndicePairs(di, c.p)
	plans(d).shape, plans(d).noGrid = shapeAuto, false
	if wantErr != nil {
		require.Error(t, err, c.name)
		require.Equal(t, wantErr.Error(), err.Error(), c.name)
		return
	}
	require.NoError(t, err, c.name)
	defer got.Release()
	require.Equal(t, want.OutSpatialShape, got.OutSpatialShape, c.name)
	for _, o := range []struct {
		what      string
		want, got any
	}{{"pairs", want.Pairs, got.Pairs}, {"out_indices", want.OutIndices, got.OutIndices}, {"indice_num", want.Num, got.Num}} {
		w, g := o.want.(*Tensor), o.got.(*DeviceTensor)
		require.Equal(t, w.shape, g.Shape(), "%s: %s shape", c.name, o.what)
		h, err := g.ToHost()
		require.NoError(t, err)
		requireElems(t, w.Int32s(), h.Int32s(), "%s: %s", c.name, o.what)
	}
}

func TestIndicePairsRandom(t *testing.T) {
	cases := randIPCases(13, 96)
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, c := range cases {
			checkIP(t, d, c)
		}
	})
}

// ipModes is one conv of each mode over batch 3 x shape: submanifold,
// regular (stride 2), transposed and inverse.
func ipModes(shape []int64) []SparseConvParams {
	k3 := []int64{3, 3, 3}
	return []SparseConvParams{
		{BatchSize: 3, SpatialShape: shape, KSize: k3, Subm: true},
		{BatchSize: 3, SpatialShape: shape, KSize: k3, Stride: []int64{2, 2, 2}, Padding: []int64{0, 1, 1}},
		{BatchSize: 3, SpatialShape: shape, KSize: []int64{2, 3, 2}, Stride: []int64{2, 1, 2}, Transpose: true},
		{BatchSize: 3, SpatialShape: shape, KSize: k3, Stride: []int64{2, 2, 2}, Padding: []int64{1, 1, 1}, Inverse: true},
	}
}

// TestIndicePairsSplits forces every split policy on one case of each
// mode (and each layout of all but the inverse, with and without the
// dense grid or line table), large enough that a loop-limited driver cuts
// the KK and KL expansions into several launches: the same bytes as the
// reference.
func TestIndicePairsSplits(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	shape := []int64{9, 40, 40}
	idx := randSites(rng, 3, shape, 3000)
	modes := ipModes(shape)
	forEachDevice(t, func(t *testing.T, d *Device) {
		for i, p := range modes {
			for _, s := range append([]IndiceSplit{SplitAuto}, IndiceSplits...) {
				p.Split = s
				checkIP(t, d, ipCase{name: fmt.Sprintf("mode %d split %s", i, s), idx: idx, p: p})
				if p.Inverse {
					// the forward's outputs sorted, not numbered through
					// the dense grid
					checkIP(t, d, ipCase{name: fmt.Sprintf("mode %d split %s, no grid", i, s), idx: idx, p: p, noGrid: true})
				} else {
					// both layouts, whichever the device class picks
					for _, sh := range []indiceShape{shapeCandidates, shapeRows} {
						checkIP(t, d, ipCase{name: fmt.Sprintf("mode %d split %s shape %s", i, s, sh), idx: idx, p: p, shape: sh})
					}
					// rows without the table: a regular or transposed conv
					// sorting the targets, not numbering them through the
					// dense grid; a submanifold one merging, not looking
					// the lines up
					checkIP(t, d, ipCase{name: fmt.Sprintf("mode %d split %s shape rows, no table", i, s), idx: idx, p: p,
						shape: shapeRows, noGrid: true})
					// candidates sorting the targets, not numbering them
					// through the dense grid (the GPUs' way where the
					// target space is larger than the candidates)
					checkIP(t, d, ipCase{name: fmt.Sprintf("mode %d split %s shape candidates, no grid", i, s), idx: idx, p: p,
						shape: shapeCandidates, noGrid: true})
				}
			}
		}
	})
}

// TestIndicePairsEdges: a single site, every site in one batch with the
// other batches empty, sites on the grid's corners with kernels larger
// than the grid, even kernels and dilations in every mode.
func TestIndicePairsEdges(t *testing.T) {
	rows := func(shape []int64, v ...int32) *Tensor {
		return mustTensor(FromInt32s([]int64{int64(len(v)) / shape[1], shape[1]}, v))
	}
	var cs []ipCase
	for _, mode := range []int{0, 1, 2, 3} {
		base := SparseConvParams{BatchSize: 4, SpatialShape: []int64{5, 6, 7}, KSize: []int64{4, 3, 5}, Dilation: []int64{1, 2, 1},
			Padding: []int64{3, 1, 0}, Subm: mode == 1, Transpose: mode == 2, Inverse: mode == 3}
		name := []string{"conv", "subm", "tconv", "inv"}[mode]
		cs = append(cs,
			ipCase{name: name + "/single", idx: rows([]int64{1, 4}, 2, 4, 5, 6), p: base},
			ipCase{name: name + "/corners-one-batch", idx: rows([]int64{8, 4},
				3, 0, 0, 0, 3, 4, 0, 0, 3, 0, 5, 0, 3, 0, 0, 6, 3, 4, 5, 0, 3, 4, 0, 6, 3, 0, 5, 6, 3, 4, 5, 6), p: base})
	}
	one := SparseConvParams{BatchSize: 1, SpatialShape: []int64{1}, KSize: []int64{5}, Padding: []int64{2}}
	cs = append(cs, ipCase{name: "1x1-grid", idx: rows([]int64{1, 2}, 0, 0), p: one})
	one.Subm = true
	cs = append(cs, ipCase{name: "1x1-grid-subm", idx: rows([]int64{1, 2}, 0, 0), p: one})
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, c := range cs {
			checkIP(t, d, c)
		}
	})
}

// TestIndicePairsBadInput: every rejected input is an *ArgError naming the
// argument (and the row), with the reference's message, and the device
// result stays unset.
func TestIndicePairsBadInput(t *testing.T) {
	sh := []int64{8, 9, 10}
	k3 := []int64{3, 3, 3}
	ok := SparseConvParams{BatchSize: 2, SpatialShape: sh, KSize: k3}
	good := mustTensor(FromInt32s([]int64{3, 4}, []int32{0, 1, 2, 3, 1, 7, 8, 9, 0, 0, 0, 0}))
	far := mustTensor(FromInt32s([]int64{2, 4}, []int32{0, 1, 2, 3, math.MaxInt32, 1, 2, 3}))
	with := func(f func(p *SparseConvParams)) SparseConvParams {
		p := ok
		f(&p)
		return p
	}
	cases := []struct {
		name, arg, has string
		idx            *Tensor
		p              SparseConvParams
	}{
		{"rank", "indices", "rank 1", mustTensor(FromInt32s([]int64{4}, []int32{0, 1, 2, 3})), ok},
		{"width", "indices", "[L, 4]", mustTensor(FromInt32s([]int64{2, 3}, []int32{0, 1, 2, 0, 1, 3})), ok},
		{"dtype", "indices", "float32", mustTensor(FromFloat32s([]int64{1, 4}, []float32{0, 1, 2, 3})), ok},
		{"int64-range", "indices", "2147483648 at flat position 1", mustTensor(FromInt64s([]int64{1, 4}, []int64{0, 1 << 31, 2, 3})), ok},
		{"batch-high", "indices", "row 1", mustTensor(FromInt32s([]int64{2, 4}, []int32{0, 1, 2, 3, 2, 1, 2, 3})), ok},
		{"batch-neg", "indices", "row 0", mustTensor(FromInt32s([]int64{2, 4}, []int32{-1, 1, 2, 3, 0, 1, 2, 3})), ok},
		// a batch far out of range: its rows' targets lie far past every
		// table and grid (the expansion marked a grid bit there before the
		// host read the flag: a soak's segmentation fault on both drivers)
		{"batch-far", "indices", "row 1", far, ok},
		{"batch-far-transpose", "indices", "row 1", far, with(func(p *SparseConvParams) { p.Transpose = true })},
		{"batch-far-inverse", "indices", "row 1", far, with(func(p *SparseConvParams) { p.Inverse = true })},
		{"batch-far-subm", "indices", "row 1", far, with(func(p *SparseConvParams) { p.Subm = true })},
		{"batch-far-neg", "indices", "row 0", mustTensor(FromInt32s([]int64{2, 4}, []int32{math.MinInt32, 1, 2, 3, 0, 1, 2, 3})), ok},
		{"coord-equal", "indices", "spatial_shape[2] = 10", mustTensor(FromInt32s([]int64{2, 4}, []int32{0, 1, 2, 3, 0, 1, 2, 10})), ok},
		{"coord-neg", "indices", "dim 1", mustTensor(FromInt32s([]int64{1, 4}, []int32{1, 1, -2, 3})), ok},
		{"duplicate", "indices", "row 2 = [1 7 8 9], the same site as row 1",
			mustTensor(FromInt32s([]int64{3, 4}, []int32{0, 1, 2, 3, 1, 7, 8, 9, 1, 7, 8, 9})), ok},
		{"dims", "spatial_shape", "5 dims", good, with(func(p *SparseConvParams) { p.SpatialShape = []int64{1, 2, 3, 4, 5} })},
		{"ksize-len", "ksize", "2 entries", good, with(func(p *SparseConvParams) { p.KSize = []int64{3, 3} })},
		{"ksize-zero", "ksize", "dim 1: 0", good, with(func(p *SparseConvParams) { p.KSize = []int64{3, 0, 3} })},
		{"stride-zero", "stride", "dim 0: 0", good, with(func(p *SparseConvParams) { p.Stride = []int64{0, 1, 1} })},
		{"dilation-neg", "dilation", "dim 2: -1", good, with(func(p *SparseConvParams) { p.Dilation = []int64{1, 1, -1} })},
		{"padding-neg", "padding", "dim 0: -1", good, with(func(p *SparseConvParams) { p.Padding = []int64{-1, 0, 0} })},
		{"stride-and-dilation", "dilation", "stride", good, with(func(p *SparseConvParams) {
			p.Stride, p.Dilation = []int64{2, 1, 3}, []int64{1, 1, 2}
		})},
		{"subm-transpose", "transpose", "subm", good, with(func(p *SparseConvParams) { p.Subm, p.Transpose = true, true })},
		{"subm-stride", "stride", "subm", good, with(func(p *SparseConvParams) { p.Subm, p.Stride = true, []int64{1, 2, 1} })},
		{"inverse-subm", "inverse", "regular", good, with(func(p *SparseConvParams) { p.Subm, p.Inverse = true, true })},
		{"batch-size", "batch_size", "0", good, with(func(p *SparseConvParams) { p.BatchSize = 0 })},
		{"no-output", "spatial_shape", "along dim 0", good, with(func(p *SparseConvParams) { p.KSize = []int64{11, 3, 3} })},
		{"key-space", "spatial_shape", "2^62", mustTensor(FromInt32s([]int64{1, 5}, []int32{0, 0, 0, 0, 0})), SparseConvParams{
			BatchSize: 2, SpatialShape: []int64{1 << 30, 1 << 30, 1 << 30, 2}, KSize: []int64{1, 1, 1, 1}}},
	}
	forEachDevice(t, func(t *testing.T, d *Device) {
		for _, c := range cases {
			_, wantErr := RefIndicePairs(c.idx, c.p)
			require.Error(t, wantErr, c.name)
			var ae *ArgError
			require.ErrorAs(t, wantErr, &ae, c.name)
			require.Equal(t, c.arg, ae.Arg, "%s: %v", c.name, wantErr)
			require.Contains(t, wantErr.Error(), c.has, c.name)
			di := mustUpload(t, d, c.idx)
			res := &IndicePairs{}
			err := d.IndicePairsInto(res, di, c.p)
			di.Release()
			require.Error(t, err, c.name)
			require.Equal(t, wantErr.Error(), err.Error(), c.name)
			require.Nil(t, res.Pairs, c.name)
			require.Nil(t, res.OutIndices, c.name)
		}
	})
}

// TestIndiceSubmModel: a submanifold conv on the GPUs' candidates reports
// its traffic model (indiceTraffic, from the plans its passes make),
// its least beside it, one wait; other paths report no model.
func TestIndiceSubmModel(t *testing.T) {
	rng := rand.New(rand.NewSource(15))
	shape := []int64{9, 40, 40}
	idx := randSites(rng, 3, shape, 3000)
	p := SparseConvParams{BatchSize: 3, SpatialShape: shape, KSize: []int64{3, 3, 3}, Subm: true}
	forEachDevice(t, func(t *testing.T, d *Device) {
		var got []PlanReport
		d.OnPlan(func(r PlanReport) {
			if r.Family == "indice" {
				got = append(got, r)
			}
		})
		defer d.OnPlan(nil)
		for _, sh := range []indiceShape{shapeCandidates, shapeRows} {
			got = nil
			checkIP(t, d, ipCase{name: "subm " + sh.String(), idx: idx, p: p, shape: sh})
			require.Len(t, got, 1, sh)
			if sh == shapeRows {
				assert.Zero(t, got[0].ModelBytes, "rows: no model yet")
				continue
			}
			g, err := newConvGeom("get_indice_pairs", Int32, idx.shape, p)
			require.NoError(t, err)
			plan := planIndice(d.caps, g, SplitAuto, sh, false)
			require.Equal(t, pathSubmLookup, plan.Path)
			assert.Equal(t, d.indiceModel(g, SplitAuto, plan, 0, 0).Bytes(), got[0].ModelBytes, "%+v", got[0])
			assert.Equal(t, indiceMinBytes(pathSubmLookup, g, 0), got[0].MinBytes)
			assert.Equal(t, 1, got[0].Waits)
		}
	})
}

// TestIndiceSitesTable forces the GPUs' hash table of the input sites
// ($ACCEL_KNOBS' indice_plan:TABLE=1) on both drivers: the submanifold
// conv's lookups on candidates, the regular, transposed and inverse convs'
// duplicate check (and the inverse's lookups), on candidates and in rows
// (where a submanifold conv keeps its sites sorted), with the reference's
// bytes and errors; then with PROBES=0 (a site placed at its home only),
// where sites that collide make the op sort its sites instead, with the
// same bytes.
func TestIndiceSitesTable(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	shape := []int64{9, 40, 40}
	modes := ipModes(shape)
	sites := []*Tensor{randSites(rng, 3, shape, 1), randSites(rng, 3, shape, 200), randSites(rng, 3, shape, 3000)}
	dup := mustTensor(FromInt32s([]int64{4, 4}, []int32{0, 1, 2, 3, 1, 7, 8, 9, 2, 0, 0, 0, 1, 7, 8, 9}))
	forEachDevice(t, func(t *testing.T, d *Device) {
		if !d.caps.Int64Atomics {
			t.Skip("no 64-bit compare-and-swap: the sites are sorted")
		}
		var tabled, sorted int
		d.OnPlan(func(r PlanReport) {
			if r.Family == "indice" && !strings.Contains(r.Plan, "path=subm-rows") { // the rows' merge walks sorted sites
				if strings.Contains(r.Plan, "sites=table") {
					tabled++
				} else {
					sorted++
				}
			}
		})
		defer d.OnPlan(nil)
		old := d.knobs
		defer func() { d.knobs = old }()
		for _, knobs := range []string{"indice_plan:TABLE=1", "indice_plan:TABLE=1,PROBES=0"} {
			var err error
			d.knobs, err = knobOverrides(knobs)
			require.NoError(t, err)
			tabled, sorted = 0, 0
			for i, p := range modes {
				for _, idx := range append(sites, dup) {
					for _, sh := range []indiceShape{shapeCandidates, shapeRows} {
						for _, noGrid := range []bool{false, true} {
							checkIP(t, d, ipCase{name: fmt.Sprintf("%s: mode %d, %d sites, %s, no grid %v", knobs, i, idx.shape[0], sh, noGrid),
								idx: idx, p: p, shape: sh, noGrid: noGrid})
						}
					}
				}
			}
			assert.Positive(t, tabled, "%s: plans with the table", knobs)
			if strings.HasSuffix(knobs, "PROBES=0") {
				assert.Positive(t, sorted, "%s: the sites sorted once the table overflowed", knobs)
			} else {
				assert.Zero(t, sorted, "%s: every plan with the table", knobs)
			}
		}
	})
}

// TestIndiceSparseGrid: sites sparse in a large grid, whose target space
// has more keys than the candidates but fewer 32-bit words, go through the
// dense grid (a bit a key) on both layouts, and the inverse's forward too,
// with the reference's bytes; so do targets at a word's every bit (a
// dense block of sites) and a space whose last word is partial.
func TestIndiceSparseGrid(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	shape := []int64{30, 45, 61} // 2 x 82,350 keys: a partial last word
	k3 := []int64{3, 3, 3}
	sparse := randSites(rng, 2, shape, 300)
	var block []int32 // a 4x8x32 block of batch 1: whole words of targets
	for x := int32(0); x < 4; x++ {
		for y := int32(0); y < 8; y++ {
			for z := int32(0); z < 32; z++ {
				block = append(block, 1, 10+x, 20+y, 29+z)
			}
		}
	}
	dense := mustTensor(FromInt32s([]int64{int64(len(block) / 4), 4}, block))
	modes := []SparseConvParams{
		{BatchSize: 2, SpatialShape: shape, KSize: k3, Padding: []int64{1, 1, 1}},
		{BatchSize: 2, SpatialShape: shape, KSize: k3, Stride: []int64{2, 2, 2}, Padding: []int64{0, 1, 1}},
		{BatchSize: 2, SpatialShape: shape, KSize: []int64{2, 3, 2}, Stride: []int64{2, 1, 2}, Transpose: true},
		{BatchSize: 2, SpatialShape: shape, KSize: k3, Padding: []int64{1, 1, 1}, Inverse: true},
	}
	fit := 0
	for i, p := range modes {
		g, err := newConvGeom("get_indice_pairs", Int32, sparse.shape, p)
		require.NoError(t, err)
		space, _ := keySpace(p.BatchSize, g.target)
		require.Greater(t, space, g.l*g.k, "mode %d: more target keys than candidates", i)
		if denseGridFits(space, g.l, g.k) {
			fit++
		}
	}
	require.Equal(t, 3, fit, "all but the transposed conv (12 offsets into 688k keys) fit the grid")
	forEachDevice(t, func(t *testing.T, d *Device) {
		var grids int
		d.OnPlan(func(r PlanReport) {
			if r.Family == "indice" && strings.Contains(r.Plan, "dense grid") {
				grids++
			}
		})
		defer d.OnPlan(nil)
		for i, p := range modes {
			g, err := newConvGeom("get_indice_pairs", Int32, sparse.shape, p)
			require.NoError(t, err)
			space, _ := keySpace(p.BatchSize, g.target)
			for _, idx := range []*Tensor{sparse, dense} {
				for _, sh := range []indiceShape{shapeCandidates, shapeRows} {
					grids = 0
					checkIP(t, d, ipCase{name: fmt.Sprintf("mode %d, %d sites, %s", i, idx.shape[0], sh), idx: idx, p: p, shape: sh})
					if idx == sparse {
						assert.Equal(t, denseGridFits(space, g.l, g.k), grids > 0, "mode %d %s: through the dense grid", i, sh)
					}
				}
			}
		}
	})
}
