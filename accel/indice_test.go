package accel

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelkern/accel/host"
)

// ipCase is a get_indice_pairs input: sites and parameters.
type ipCase struct {
	name string
	idx  *Tensor
	p    SparseConvParams
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
			s, dl := int64(1), int64(1)
			if dil {
				dl = 1 + rng.Int63n(3)
			} else if mode != 1 {
				s = 1 + rng.Int63n(3)
			}
			p.Stride = append(p.Stride, s)
			p.Dilation = append(p.Dilation, dl)
			p.Padding = append(p.Padding, rng.Int63n(ks+1))
			p.OutPadding = append(p.OutPadding, rng.Int63n(max(s, dl)))
			p.SpatialShape = append(p.SpatialShape, 1+rng.Int63n(int64([]int{40, 12, 7, 5}[D-1])))
		}
		if mode != 2 {
			for d := range p.OutPadding {
				p.OutPadding[d] = 0
			}
		}
		p.Subm, p.Transpose, p.Inverse = mode == 1, mode == 2, mode == 3
		p.Split = host.IndiceSplits[i%len(host.IndiceSplits)]
		if i%5 == 0 {
			p.Split = SplitAuto
		}
		l := []int{0, 1, 7, 60, 200}[rng.Intn(5)]
		idx := randSites(rng, p.BatchSize, p.SpatialShape, l)
		cs = append(cs, ipCase{name: fmt.Sprintf("%d/D%d/%s/%s/L%d", i, D, []string{"conv", "subm", "tconv", "inv"}[mode], p.Split, idx.shape[0]),
			idx: idx, p: p})
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
	got, err := d.IndicePairs(di, c.p)
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
