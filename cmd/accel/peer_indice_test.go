package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/accelkern/accel/accel"
)

// get_indice_pairs' peer (spconv) numbers its outputs in discovery order,
// so its cases compare canonically, as their manifests say: indice_num and
// out_spatial_shape exactly, out_indices as a set of rows (in order for
// submanifold convs, whose outputs are the inputs), and per kernel offset
// the multiset of (input row, output site) over its indice_num pairs.
func init() {
	peerComparers["get_indice_pairs"] = compareIndicePairs
}

func compareIndicePairs(t *testing.T, what, dir string, m manifest, out string) {
	t.Helper()
	read := func(path string) *accel.Tensor {
		x, err := readNpy(path)
		assert.NoError(t, err, "%s: %s", what, path)
		return x
	}
	want, got := map[string]*accel.Tensor{}, map[string]*accel.Tensor{}
	for _, n := range m.Outputs {
		want[n] = read(filepath.Join(dir, "want_"+n+".npy"))
		got[n] = read(filepath.Join(out, n+".npy"))
		if want[n] == nil || got[n] == nil {
			return
		}
		if !assert.Equal(t, want[n].DType(), got[n].DType(), "%s: %s dtype", what, n) ||
			!assert.Equal(t, want[n].Shape(), got[n].Shape(), "%s: %s shape", what, n) {
			return
		}
	}
	assert.Equal(t, want["indice_num"].Int32s(), got["indice_num"].Int32s(), "%s: indice_num", what)
	assert.Equal(t, want["out_spatial_shape"].Int64s(), got["out_spatial_shape"].Int64s(), "%s: out_spatial_shape", what)
	w := int(want["out_indices"].Shape()[1])
	rows := func(x *accel.Tensor) []string {
		v := x.Int32s()
		r := make([]string, len(v)/w)
		for i := range r {
			r[i] = fmt.Sprint(v[i*w : (i+1)*w])
		}
		return r
	}
	wo, gou := rows(want["out_indices"]), rows(got["out_indices"])
	if subm, _ := m.Params["subm"].(bool); subm {
		assert.Equal(t, wo, gou, "%s: out_indices (the input sites, in order)", what)
	} else {
		assert.ElementsMatch(t, wo, gou, "%s: out_indices as a set of rows", what)
	}
	// per offset, the sorted (input row, output site) pairs
	pairs := func(p *accel.Tensor, outs []string, num []int32) [][]string {
		sh := p.Shape()
		n := int(sh[2])
		v := p.Int32s()
		res := make([][]string, sh[0])
		for k := range res {
			for j := 0; j < int(num[k]); j++ {
				in, o := v[2*k*n+j], v[(2*k+1)*n+j]
				site := "?"
				if o >= 0 && int(o) < len(outs) {
					site = outs[o]
				}
				res[k] = append(res[k], fmt.Sprintf("%d->%s", in, site))
			}
			slices.Sort(res[k])
		}
		return res
	}
	assert.Equal(t, pairs(want["indice_pairs"], wo, want["indice_num"].Int32s()),
		pairs(got["indice_pairs"], gou, got["indice_num"].Int32s()), "%s: pairs per offset (multisets)", what)
}
