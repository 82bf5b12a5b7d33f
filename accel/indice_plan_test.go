package accel

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/accelkern/accel/host"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanIndicePairs checks get_indice_pairs' plans as data: every split
// on a CPU driver, a GPU and a loop-limited driver covers every candidate
// (jobs x cores x a core's chunk), keeps a core's loops under half the
// limit by repeating over the rows, and reports an O(L*K) workspace.
func TestPlanIndicePairs(t *testing.T) {
	pocl := host.Caps{Backend: host.OpenCL, Type: host.TypeCPU, ComputeUnits: 2, MaxWorkGroupSize: 4096, LocalMemBytes: 4 << 20}
	lavapipe := pocl
	lavapipe.Backend, lavapipe.LoopLimit, lavapipe.MaxWorkGroupCount = host.Vulkan, 65535, [3]int64{65535, 65535, 65535}
	gpu := host.Caps{Backend: host.Vulkan, Type: host.TypeDiscreteGPU, ComputeUnits: 132, MaxWorkGroupSize: 1024,
		MaxWorkGroupCount: [3]int64{1 << 31, 65535, 65535}}
	for _, dev := range []struct {
		name string
		caps host.Caps
	}{{"pocl", pocl}, {"lavapipe", lavapipe}, {"gpu", gpu}} {
		for _, c := range []struct{ n, k int64 }{{1, 1}, {7, 27}, {248636, 27}, {149100, 27}, {100000, 625}, {3, 125}} {
			for _, look := range []bool{false, true} {
				for _, split := range append([]IndiceSplit{SplitAuto}, IndiceSplits...) {
					search := int64(0)
					if look {
						search = searchSteps(c.n)
					}
					p := planIndicePairs(dev.caps, c.n, c.k, search, split)
					what := p.String()
					require.NotEqual(t, SplitAuto, p.Split, what)
					if split != SplitAuto {
						assert.Equal(t, split, p.Split, what)
					} else {
						assert.Equal(t, SplitLL, p.Split, what)
					}
					require.Positive(t, p.Jobs, what)
					require.Positive(t, p.Cores, what)
					assert.Equal(t, int(p.Cores), p.Plan.LocalSize, what)
					assert.GreaterOrEqual(t, p.Plan.TotalGroups(), p.Jobs, what)
					// every candidate of a launch is some core's
					rows, offs := p.Jobs*p.Cores*p.RowsPerCore, p.OffsetsPerCore
					switch p.Split {
					case SplitLK:
						rows, offs = p.Jobs*p.RowsPerCore, p.Cores*p.OffsetsPerCore
					case SplitKL:
						rows, offs = p.Cores*p.RowsPerCore, p.Jobs*p.OffsetsPerCore
					case SplitKK:
						rows, offs = p.RowsPerCore, p.Jobs*p.Cores*p.OffsetsPerCore
					}
					assert.GreaterOrEqual(t, rows, p.Rows, what)
					assert.GreaterOrEqual(t, offs, c.k, what)
					assert.GreaterOrEqual(t, p.Rows*p.Repeats, c.n, what)
					assert.Less(t, (p.Repeats-1)*p.Rows, c.n, what)
					if dev.caps.LoopLimit > 0 {
						perCand := int64(9)
						if look {
							perCand += 2*int64(bits.Len64(uint64(c.n))) + 2
						}
						iters := p.RowsPerCore*(5+p.OffsetsPerCore*perCand) + 130
						assert.LessOrEqual(t, iters, dev.caps.LoopLimit/2, what)
					} else {
						assert.Equal(t, int64(1), p.Repeats, what)
					}
					assert.Equal(t, (c.n*c.k+1)*4+map[bool]int64{false: 0, true: c.n * c.k * 4}[look], p.WorkspaceBytes, what)
				}
			}
		}
	}
	// the CPU drivers: groups of one SIMD vector, a few jobs per core
	p := planIndicePairs(pocl, 248636, 27, searchSteps(248636), SplitAuto)
	assert.Equal(t, int64(8), p.Cores)
	assert.Equal(t, int64(32), p.Jobs)
	// a GPU: one row per core
	p = planIndicePairs(gpu, 248636, 27, searchSteps(248636), SplitLL)
	assert.Equal(t, int64(64), p.Cores)
	assert.Equal(t, int64(1), p.RowsPerCore)
	// lavapipe's KK walks every row per core: many launches
	p = planIndicePairs(lavapipe, 248636, 27, searchSteps(248636), SplitKK)
	assert.Greater(t, p.Repeats, int64(100))

	// a submanifold conv: rows on the CPU drivers, candidates on a GPU
	// and where a core would keep too many cursors
	for _, dev := range []struct {
		name string
		caps host.Caps
	}{{"pocl", pocl}, {"lavapipe", lavapipe}, {"gpu", gpu}} {
		for _, ks := range [][]int64{{3, 3, 3}, {2, 3, 4}, {5}, {3, 3, 3, 3}, {5, 5, 5, 5}} {
			for _, n := range []int64{1, 7, 248636} {
				for _, split := range append([]IndiceSplit{SplitAuto}, IndiceSplits...) {
					p := planIndiceSubm(dev.caps, n, ks, split, shapeAuto, 0)
					what := dev.name + ": " + p.String()
					k := int64(1)
					for _, v := range ks {
						k *= v
					}
					if dev.caps.Type != host.TypeCPU || k > indiceCursors {
						assert.Equal(t, shapeCandidates, p.Shape, what)
						continue
					}
					require.Equal(t, shapeRows, p.Shape, what)
					assert.Equal(t, "indice_search", p.Plan.Kernel, what)
					assert.LessOrEqual(t, p.OffsetsPerCore, int64(indiceCursors), what)
					assert.GreaterOrEqual(t, p.Chunks*p.ChunkRows, n, what)
					assert.Less(t, (p.Chunks-1)*p.ChunkRows, n, what)
					assert.Equal(t, p.Chunks*k, p.Emit.Tiles, what)
					assert.GreaterOrEqual(t, p.Emit.TotalGroups()*int64(p.Emit.LocalSize), p.Emit.Tiles, what)
					assert.GreaterOrEqual(t, p.Rows*p.Repeats, n, what)
					if dev.caps.LoopLimit > 0 {
						// the gather's loop: a chunk's rows x K
						assert.LessOrEqual(t, p.ChunkRows*k, dev.caps.LoopLimit/2, what)
					}
					assert.Equal(t, 2*n*k*4+n*4+(p.Chunks*k+1)*8, p.WorkspaceBytes, what)
				}
			}
		}
	}
	assert.Equal(t, shapeCandidates, planIndiceSubm(pocl, 1000, []int64{3, 3, 3}, SplitAuto, shapeCandidates, 0).Shape)

	// the line table: rows with the LL split (or auto) and a table of at
	// most indiceGridMax words and no more lines than the records
	for _, dev := range []struct {
		name string
		caps host.Caps
	}{{"pocl", pocl}, {"lavapipe", lavapipe}} {
		const n = 248636
		ks := []int64{3, 3, 3}
		for _, split := range append([]IndiceSplit{SplitAuto}, IndiceSplits...) {
			for _, lines := range []int64{0, 1, 4 * 41 * 1440, n * 27, n*27 + 1, indiceGridMax} {
				p := planIndiceSubm(dev.caps, n, ks, split, shapeAuto, lines)
				what := fmt.Sprintf("%s lines %d: %s", dev.name, lines, p)
				require.Equal(t, shapeRows, p.Shape, what)
				if (split != SplitAuto && split != SplitLL) || lines == 0 || lines > n*27 || lines >= indiceGridMax {
					assert.Zero(t, p.Lines, what)
					assert.Equal(t, "indice_search", p.Plan.Kernel, what)
					continue
				}
				assert.Equal(t, lines, p.Lines, what)
				assert.Equal(t, "line table", p.Search, what)
				assert.Equal(t, "indice_tsearch", p.Plan.Kernel, what)
				assert.Equal(t, p.Chunks, p.Plan.Tiles, what)
				assert.GreaterOrEqual(t, p.Plan.TotalGroups()*int64(p.Plan.LocalSize), p.Chunks, what)
				assert.Equal(t, n*27*4+(lines+1)*4+(p.Chunks*27+1)*8, p.WorkspaceBytes, what)
				if dev.caps.LoopLimit > 0 {
					assert.LessOrEqual(t, p.ChunkRows*27, dev.caps.LoopLimit/2, what)
				}
			}
		}
	}
	assert.Zero(t, planIndiceSubm(gpu, 248636, []int64{3, 3, 3}, SplitAuto, shapeAuto, 1000).Lines)

	// a regular or transposed conv: rows on the CPU drivers (kernel sizes
	// up to indiceKD, K up to indiceCursors), candidates elsewhere; the
	// split covers every (chunk, offset) and one chunk's loops stay under
	// the limit
	for _, dev := range []struct {
		name string
		caps host.Caps
	}{{"pocl", pocl}, {"lavapipe", lavapipe}, {"gpu", gpu}} {
		for _, ks := range [][]int64{{3, 3, 3}, {2, 3, 4}, {5}, {17}, {3, 3, 3, 3}, {5, 5, 5, 5}} {
			for _, n := range []int64{1, 7, 149100} {
				for _, split := range append([]IndiceSplit{SplitAuto}, IndiceSplits...) {
					p := planIndiceConv(dev.caps, n, ks, 0, split, shapeAuto)
					what := dev.name + ": " + p.String()
					k, sum := int64(1), int64(0)
					for _, v := range ks {
						k, sum = k*v, sum+v
					}
					if dev.caps.Type != host.TypeCPU || k > indiceCursors || ks[0] > indiceKD {
						assert.Equal(t, shapeCandidates, p.Shape, what)
						continue
					}
					if split != SplitAuto && split != SplitLL {
						// auto keeps offset-splitting policies on candidates
						assert.Equal(t, shapeCandidates, p.Shape, what)
						p = planIndiceConv(dev.caps, n, ks, 0, split, shapeRows)
						what = dev.name + ": " + p.String()
					}
					require.Equal(t, shapeRows, p.Shape, what)
					assert.Equal(t, "indice_crows", p.Plan.Kernel, what)
					assert.GreaterOrEqual(t, p.Chunks*p.ChunkRows, n, what)
					assert.Less(t, (p.Chunks-1)*p.ChunkRows, n, what)
					assert.GreaterOrEqual(t, p.Rows*p.Repeats, p.Chunks, what)
					assert.LessOrEqual(t, p.OffsetsPerCore, int64(indiceCursors), what)
					if dev.caps.LoopLimit > 0 {
						iters := p.RowsPerCore*(5+p.ChunkRows*(10+2*sum+2*k)+2*p.OffsetsPerCore) + 130
						assert.LessOrEqual(t, iters, dev.caps.LoopLimit/2, what)
					}
					assert.Equal(t, (p.Chunks*k+1)*8, p.WorkspaceBytes, what)
				}
			}
		}
	}
	assert.Equal(t, shapeCandidates, planIndiceConv(pocl, 1000, []int64{3, 3, 3}, 0, SplitAuto, shapeCandidates).Shape)
	assert.True(t, indiceSubmSym([]int64{3, 5, 1}))
	assert.False(t, indiceSubmSym([]int64{3, 2, 1}))

	for _, s := range []string{"auto", "", "LL", "lk", "Kl", "KK"} {
		_, err := ParseIndiceSplit(s)
		assert.NoError(t, err, s)
	}
	_, err := ParseIndiceSplit("LX")
	assert.Error(t, err)
}
