package accel

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
)

// scatterGeom is a validated scatter: shapes, the wrapped dim, and the
// metadata the kernel decomposes positions with.
type scatterGeom struct {
	dim                         int
	inShape, idxShape, srcShape []int64
	loopShape                   []int64 // positions the kernel runs over
	idxN                        int64   // positions (the product of loopShape)
	meta                        []int64 // loop sizes, out, src and index strides (SC_META_*)
	red                         Reduction
	wrap                        bool // negative indices count from the end
}

func newScatterGeom(op string, inShape []int64, inDT DType, dim int64, idxShape []int64, idxDT DType,
	srcShape []int64, srcDT DType, reduce Reduction) (scatterGeom, error) {
	var g scatterGeom
	if !reduce.valid() {
		return g, argErr(op, "reduce", reduce, "one of Sum, Prod, Mean, Amax, Amin (or Assign)", ErrInvalidArgument)
	}
	g.red = reduce
	if err := scatterDTypes(op, inDT, idxDT, srcDT, "src"); err != nil {
		return g, err
	}
	if len(idxShape) != len(inShape) || len(srcShape) != len(inShape) {
		return g, argErr(op, "index", fmt.Sprintf("rank %d (src rank %d)", len(idxShape), len(srcShape)),
			fmt.Sprintf("the input's rank %d, as src's", len(inShape)), ErrInvalidArgument)
	}
	inShape, idxShape, srcShape = norm0d(inShape), norm0d(idxShape), norm0d(srcShape)
	d, err := wrapDim(op, "dim", dim, len(inShape))
	if err != nil {
		return g, err
	}
	g.dim = d
	for k := range idxShape {
		if idxShape[k] > srcShape[k] {
			return g, argErr(op, "index", fmt.Sprintf("shape %v", idxShape),
				fmt.Sprintf("no larger than src's shape %v in every dim (dim %d)", srcShape, k), ErrInvalidArgument)
		}
		if k != d && idxShape[k] > inShape[k] {
			return g, argErr(op, "index", fmt.Sprintf("shape %v", idxShape),
				fmt.Sprintf("no larger than the input's shape %v in every dim but dim %d (dim %d)", inShape, d, k), ErrInvalidArgument)
		}
	}
	g.inShape, g.idxShape, g.srcShape, g.loopShape = inShape, idxShape, srcShape, idxShape
	g.idxN, _ = NumElements(idxShape)
	g.setMeta(strides(inShape), strides(srcShape), strides(idxShape))
	return g, nil
}

// scatterDTypes checks a scatter's dtypes: input one the kernels take,
// the source (argument srcName) of the same, the index int64 (int32 ones
// are widened before, index.go).
func scatterDTypes(op string, inDT, idxDT, srcDT DType, srcName string) error {
	switch inDT {
	case Int32, Int64, Float32, Float64:
	default:
		return argErr(op, "input", "dtype "+inDT.String(), "int32, int64, float32 or float64", ErrUnsupported)
	}
	if srcDT != inDT {
		return argErr(op, srcName, "dtype "+srcDT.String(), "the input's dtype "+inDT.String(), ErrInvalidArgument)
	}
	if idxDT != Int64 {
		return argErr(op, "index", "dtype "+idxDT.String(), "int64 or int32", ErrInvalidArgument)
	}
	return nil
}

// norm0d returns a copy of shape, a 0-d one as the 1-element 1-d one (a
// 0-d scatter is the 1-element 1-d one).
func norm0d(shape []int64) []int64 {
	if len(shape) == 0 {
		return []int64{1}
	}
	return append([]int64(nil), shape...)
}

// setMeta lays out the kernel's metadata: the SC_META_* blocks of rank
// entries each (host/kernels).
func (g *scatterGeom) setMeta(outSt, srcSt, idxSt []int64) {
	r := len(g.loopShape)
	g.meta = make([]int64, kernels.ScMetaBlocks*r)
	copy(g.meta[kernels.ScMetaLoop*r:], g.loopShape)
	copy(g.meta[kernels.ScMetaOut*r:], outSt)
	copy(g.meta[kernels.ScMetaSrc*r:], srcSt)
	copy(g.meta[kernels.ScMetaIdx*r:], idxSt)
}

// indexError reports an out-of-range index at offset io of the index.
func (g scatterGeom) indexError(op string, io, v int64) error {
	pos := make([]string, len(g.idxShape))
	rem := io
	for k := len(g.idxShape) - 1; k >= 0; k-- {
		pos[k] = fmt.Sprint(rem % g.idxShape[k])
		rem /= g.idxShape[k]
	}
	name := "index"
	if g.wrap {
		name = "indices" // put/take_along_axis's argument name
	}
	return argErr(op, fmt.Sprintf("%s[%s]", name, strings.Join(pos, ", ")), v,
		g.indexBound(), ErrInvalidArgument)
}

func (g scatterGeom) indexBound() string {
	n := g.inShape[g.dim]
	if g.wrap {
		return fmt.Sprintf("in [%d, %d) (shape[%d] = %d; negative values count from the end)", -n, n, g.dim, n)
	}
	return fmt.Sprintf("in [0, %d) (input.shape[%d])", n, g.dim)
}

// indexOffset is the index offset the kernel reads at loop position p.
func (g scatterGeom) indexOffset(p int64) int64 {
	r := len(g.loopShape)
	io := int64(0)
	for k := r - 1; k >= 0; k-- {
		io += (p % g.loopShape[k]) * g.meta[kernels.ScMetaIdx*r+k]
		p /= g.loopShape[k]
	}
	return io
}

// firstBadIndex scans indices on the host in loop order (the error path
// only) and returns the error for the first out-of-range one, or nil.
func (g scatterGeom) firstBadIndex(op string, idx []int64, from int64) error {
	n := g.inShape[g.dim]
	for p := from; p < g.idxN; p++ {
		io := g.indexOffset(p)
		v := idx[io]
		w := v
		if g.wrap && w < 0 {
			w += n
		}
		if w < 0 || w >= n {
			return g.indexError(op, io, v)
		}
	}
	return nil
}

// supportsScatter checks the dtype against the device. 64-bit elements
// need 64-bit compare-and-swap for the atomic path; without it they take
// the sort-based path (planScatter).
func (d *Device) supportsScatter(op string, dt DType) error {
	if dt == Float64 && !d.caps.FP64 {
		return argErr(op, "input", "dtype float64", "a dtype this device supports (no fp64 on "+d.caps.Name+")", ErrUnsupported)
	}
	return nil
}

// Scatter is PyTorch's input.scatter(dim, index, src): a new tensor equal
// to input with out[p with p[dim] := index[p]] = src[p] for every position p
// of index. With duplicate indices the surviving value is unspecified (as
// in PyTorch).
func (d *Device) Scatter(input *DeviceTensor, dim int64, index, src *DeviceTensor) (*DeviceTensor, error) {
	return d.scatterReduce("scatter", input, dim, index, src, Assign, true, false)
}

// ScatterReduce is PyTorch's input.scatter_reduce(dim, index, src, reduce,
// include_self) with reduce Sum, Prod, Mean, Amax or Amin (Assign is
// Scatter's, and refused here): index (int64 or int32) has
// input's rank, index.size(d) <= src.size(d) for every d and <=
// input.size(d) for d != dim; index values lie in [0, input.size(dim)).
// With includeSelf false, positions hit by an index start from the
// reduction's identity and a mean does not count the input; positions
// never hit keep the input. Integer sums and products wrap, integer means
// floor, amax/amin propagate NaN. The strategy is the device's
// (planScatter): GPUs reduce with atomics, CPU drivers split the
// positions among cores (private copies merged in order, or a pass per
// block of positions for few targets), so float sums, products and means
// are folded in another order than the reference's and may differ from it
// in rounding, on every device. Integer results, and the values of amax
// and amin, are the reference's. ScatterReduceDeterministic gives the
// reference's bits.
// An index out of range is an error naming the first offending position,
// found on the device; nothing is written out of bounds. The op waits for
// the device once, at its end, to learn whether an index was out of range.
func (d *Device) ScatterReduce(input *DeviceTensor, dim int64, index, src *DeviceTensor, reduce Reduction, includeSelf bool) (*DeviceTensor, error) {
	if err := rejectAssign("scatter_reduce", reduce); err != nil {
		return nil, err
	}
	return d.scatterReduce("scatter_reduce", input, dim, index, src, reduce, includeSelf, false)
}

// ScatterDeterministic is Scatter with duplicate indices resolved in index
// order: the last write wins, as in the reference, on every device.
func (d *Device) ScatterDeterministic(input *DeviceTensor, dim int64, index, src *DeviceTensor) (*DeviceTensor, error) {
	return d.scatterReduce("scatter", input, dim, index, src, Assign, true, true)
}

// ScatterReduceDeterministic is ScatterReduce in the bit-reproducible mode:
// each target's values are folded in index order, so the result has the
// scalar reference's bits on every backend and device (NaN payloads of
// float sums aside, which hardware picks). On GPUs the positions are sorted
// by target (a stable radix sort, so index order is kept; 32-bit values
// travel in one word with their targets) and each target's run is folded
// by one work-item, or, where targets have few hits, each target's
// positions are grouped in one pass and sorted by position in place (the
// op then waits twice: for the count of hits, and at its end); on CPU
// drivers the cores place the
// positions, in order, in buckets of consecutive targets and each folds
// its own buckets (an output a core's cache holds: each core owns a range
// of targets and walks the positions in order; planScatter). It needs no
// atomics beyond 32-bit ones.
func (d *Device) ScatterReduceDeterministic(input *DeviceTensor, dim int64, index, src *DeviceTensor, reduce Reduction, includeSelf bool) (*DeviceTensor, error) {
	if err := rejectAssign("scatter_reduce", reduce); err != nil {
		return nil, err
	}
	return d.scatterReduce("scatter_reduce", input, dim, index, src, reduce, includeSelf, true)
}

func (d *Device) scatterReduce(op string, input *DeviceTensor, dim int64, index, src *DeviceTensor, reduce Reduction, includeSelf, det bool) (*DeviceTensor, error) {
	return d.scatterWith(op, input, index, src, "src", includeSelf, det, func(index *DeviceTensor) (scatterGeom, error) {
		return newScatterGeom(op, input.shape, input.dtype, dim, index.shape, index.dtype, src.shape, src.dtype, reduce)
	})
}

// scatterWith checks a scatter's tensors (the source named srcName),
// widens an int32 index, lays the scatter out with geom and runs it.
func (d *Device) scatterWith(op string, input, index, src *DeviceTensor, srcName string, includeSelf, det bool,
	geom func(index *DeviceTensor) (scatterGeom, error)) (*DeviceTensor, error) {
	index, done, err := d.scatterArgs(op, input, index, src, srcName)
	if err != nil {
		return nil, err
	}
	defer done()
	g, err := geom(index)
	if err != nil {
		return nil, err
	}
	return d.scatterInto(op, g, input, index, src, includeSelf, det)
}

// scatterArgs checks a scatter's tensors (the source named srcName) and
// returns its index as int64 (int32 ones widened, index.go), with the
// release of the widened copy.
func (d *Device) scatterArgs(op string, input, index, src *DeviceTensor, srcName string) (*DeviceTensor, func(), error) {
	index, done, err := d.index64(op, "index", index)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range []struct {
		name string
		t    *DeviceTensor
	}{{"input", input}, {"index", index}, {srcName, src}} {
		if err := d.checkIn(op, a.name, a.t); err != nil {
			done()
			return nil, nil, err
		}
	}
	return index, done, nil
}

// scatterInto runs a validated scatter g of src into a copy of input.
func (d *Device) scatterInto(op string, g scatterGeom, input, index, src *DeviceTensor, includeSelf, det bool) (*DeviceTensor, error) {
	if err := d.supportsScatter(op, input.dtype); err != nil {
		return nil, err
	}
	out, err := d.alloc(op, input.dtype, input.shape)
	if err != nil {
		return nil, err
	}
	if out.n > 0 {
		if err := d.copyBytes(op, out.raw(), 0, input.raw(), 0, out.n*int64(input.dtype.Size())); err != nil {
			out.Release()
			return nil, err
		}
	}
	if g.idxN > 0 {
		err = d.scatterRun(op, g, out, index, src, includeSelf, det)
	}
	if err == nil {
		err = d.flush(op)
	}
	if err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// scatterJob is one scatter reduction (or take_along_axis gather) on the
// device: its geometry, tensors and scratch. Each strategy is a method
// (scatter_atomic.go, scatter_sorted.go, scatter_cpu.go); every one
// validates the indices on the device, records the first bad one in flag,
// and never reads or writes out of bounds.
type scatterJob struct {
	d           *Device
	op          string
	g           scatterGeom
	out         *DeviceTensor // the output (a gather reads it: the array)
	index, src  *DeviceTensor // src: the values (a gather writes it)
	includeSelf bool
	meta        *DeviceTensor // g.meta on the device
	flag        *DeviceTensor // the validation flag (Device.newFlag)
	checked     bool          // the flag was read after the last pass, and was clear
	tmp         temps
}

// pos is the position arguments of every pass (host/kernels' scatterPos).
func (j *scatterJob) pos() (index, meta host.Buffer, count, rank, dim, dimSize, wrap int64) {
	return j.index.raw(), j.meta.raw(), j.g.idxN, int64(len(j.g.loopShape)), int64(j.g.dim), j.g.inShape[j.g.dim], b2i(j.g.wrap)
}

func (j *scatterJob) run(variant string, plan host.Plan, call host.Call) error {
	return j.d.launch(j.op, variant, plan, call)
}

// scatterRun runs the reduction of g into out with the path its plan
// (planScatter, through the device's planner) takes, and reads the validation flag once at the end:
// an out-of-range index is an error naming its position. On an error out
// may be partly written; callers own out and release it.
func (d *Device) scatterRun(op string, g scatterGeom, out, index, src *DeviceTensor, includeSelf, det bool) error {
	j, err := d.newScatterJob(op, g, out, index, src, includeSelf)
	if err != nil {
		return err
	}
	defer j.release()
	shape := g.shape(out.n, out.dtype, includeSelf, det)
	sp := d.tunedScatter(d.planner.scatter(d.caps, shape), shape)
	// tries: the partitions run before the plan that finished (each
	// with its flag word 1 cleared after it)
	var tries []traffic
	report := func(sp scatterPlan) {
		d.reportModel(op, "scatter", sp, func() traffic {
			var t traffic
			for _, u := range tries {
				t.then(u)
				t.fill("fill", 4)
			}
			t.then(scatterTraffic(d.caps, sp, shape))
			return t
		}, scatterMinBytes(shape))
	}
	if !sp.Part {
		report(sp)
	}
	switch sp.Path {
	case scatterOwned:
		err = j.owned(sp)
	case scatterBucket:
		err = j.bucket(sp)
	case scatterPrivate:
		err = j.private(sp)
	case scatterFew, scatterFewGroups:
		err = j.few(sp)
	case scatterSorted:
		done, tried := false, sp.Part
		if sp.Part && sp.Slot {
			var bits uint32
			if done, bits, err = j.slotted(sp); err != nil || done {
				report(sp)
				break
			}
			switch {
			case bits == 0:
				sp.Slot = false
				sp.Reason += "; no memory for the slots: counted first"
			case bits&kernels.ScPartMany != 0:
				tries = append(tries, slotTryTraffic(sp, shape))
				sp.Part = false
				sp.Reason += fmt.Sprintf("; a target has more than %d hits: the sort", int64(kernels.ScPartMax))
			default:
				tries = append(tries, slotTryTraffic(sp, shape))
				sp.Slot = false
				sp.Reason += "; a bucket has more hits than its slots: counted first"
			}
		}
		if sp.Part {
			if done, err = j.partitioned(sp); err != nil || done {
				report(sp)
				break
			}
			// a target with more than kernels.ScPartMax hits: the sort
			tries = append(tries, partTryTraffic(d.caps, shape))
			sp.Part = false
			sp.Reason += fmt.Sprintf("; a target has more than %d hits: the sort", int64(kernels.ScPartMax))
		}
		if tried {
			report(sp) // the sort, after the partitions' tries
		}
		if sp.Packed {
			err = j.sortedPacked()
			break
		}
		var s sortKeys
		if err = j.sorted(&s); err == nil {
			s.release()
		}
	default:
		err = j.atomic(sp)
	}
	if err != nil || j.checked {
		return err
	}
	return j.check()
}

// gatherRun is take_along_axis: out[p] = arr[target(p)], validated.
func (d *Device) gatherRun(op string, g scatterGeom, arr, index, out *DeviceTensor) error {
	j, err := d.newScatterJob(op, g, arr, index, out, false)
	if err != nil {
		return err
	}
	defer j.release()
	if err := j.gather(); err != nil {
		return err
	}
	return j.check()
}

func (d *Device) newScatterJob(op string, g scatterGeom, out, index, src *DeviceTensor, includeSelf bool) (*scatterJob, error) {
	j := &scatterJob{d: d, op: op, g: g, out: out, index: index, src: src, includeSelf: includeSelf}
	var err error
	if j.meta, err = j.tmp.alloc(d, op, Int64, int64(len(g.meta))); err != nil {
		return nil, err
	}
	mb := make([]byte, 8*len(g.meta))
	for i, v := range g.meta {
		binary.LittleEndian.PutUint64(mb[8*i:], uint64(v))
	}
	if err := d.h.Upload(j.meta.raw(), 0, mb); err != nil {
		j.release()
		return nil, fmt.Errorf("accel: %s: %w", op, err)
	}
	if j.flag, err = d.newFlag(op); err != nil {
		j.release()
		return nil, err
	}
	j.tmp.add(j.flag)
	return j, nil
}

func (j *scatterJob) release() { j.tmp.release() }

// check reads the job's validation flag (the op's one wait) and names the
// first bad index when a pass flagged one.
func (j *scatterJob) check() error { return j.d.checkIndexFlag(j.op, j.g, j.index, j.flag) }

// checkIndexFlag reads a scatter's validation flag, once the work queued
// before has finished, and names the first bad index when a pass flagged
// one: the error path reads the index back and scans from the flagged
// tile.
func (d *Device) checkIndexFlag(op string, g scatterGeom, index, flag *DeviceTensor) error {
	from, err := d.flaggedTile(op, flag)
	if err != nil || from < 0 {
		return err
	}
	idx, err := index.ToHost()
	if err != nil {
		return err
	}
	if err := g.firstBadIndex(op, idx.Int64s(), from); err != nil {
		return err
	}
	return fmt.Errorf("accel: %s: the device flagged index tile %d but no index in it is out of range: %w",
		op, from>>kernels.ErrTileShift, host.ErrDriver)
}
