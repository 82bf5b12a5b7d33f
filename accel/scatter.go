package accel

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/reference"
)

// The reductions of ScatterReduce (PyTorch's names; "assign" is scatter).
const (
	ReduceAssign = reference.ReduceAssign
	ReduceSum    = reference.ReduceSum
	ReduceProd   = reference.ReduceProd
	ReduceMean   = reference.ReduceMean
	ReduceAmax   = reference.ReduceAmax
	ReduceAmin   = reference.ReduceAmin
)

// Modes of the scatter kernel (scatter_body.h).
const (
	scValidate = 0
	scInit     = 1
	scReduce   = 2
	scMean     = 3
	scGather   = 4
	scDest     = 5
	scOwned    = 6
	scPrivate  = 7
	scMerge    = 8

	// scSpare is SC_SPARE: the owned pass's spare slots per owner.
	scSpare = 8
)

// reduceCodes are the kernel's RED_* values (scatter_body.h).
var reduceCodes = map[string]int64{ReduceAssign: 0, ReduceSum: 1, ReduceProd: 2, ReduceMean: 3, ReduceAmax: 4, ReduceAmin: 5}

// scatterGeom is a validated scatter: shapes, the wrapped dim, and the
// metadata the kernel decomposes positions with.
type scatterGeom struct {
	dim                         int
	inShape, idxShape, srcShape []int64
	loopShape                   []int64 // positions the kernel runs over
	idxN                        int64   // positions (the product of loopShape)
	meta                        []int64 // loop sizes, out, src and index strides
	red                         string
	wrap                        bool // negative indices count from the end
}

func strides(shape []int64) []int64 {
	st := make([]int64, len(shape))
	s := int64(1)
	for k := len(shape) - 1; k >= 0; k-- {
		st[k] = s
		s *= shape[k]
	}
	return st
}

func newScatterGeom(op string, inShape []int64, inDT DType, dim int64, idxShape []int64, idxDT DType,
	srcShape []int64, srcDT DType, reduce string) (scatterGeom, error) {
	var g scatterGeom
	if _, ok := reduceCodes[reduce]; !ok {
		return g, argErr(op, "reduce", fmt.Sprintf("%q", reduce), "one of sum, prod, mean, amax, amin (or assign)", ErrInvalidArgument)
	}
	g.red = reduce
	switch inDT {
	case Int32, Int64, Float32, Float64:
	default:
		return g, argErr(op, "input", "dtype "+inDT.String(), "int32, int64, float32 or float64", ErrUnsupported)
	}
	if srcDT != inDT {
		return g, argErr(op, "src", "dtype "+srcDT.String(), "the input's dtype "+inDT.String(), ErrInvalidArgument)
	}
	if idxDT != Int64 {
		return g, argErr(op, "index", "dtype "+idxDT.String(), "int64", ErrInvalidArgument)
	}
	// A 0-d scatter is the 1-element 1-d one.
	norm := func(s []int64) []int64 {
		if len(s) == 0 {
			return []int64{1}
		}
		return append([]int64(nil), s...)
	}
	if len(idxShape) != len(inShape) || len(srcShape) != len(inShape) {
		return g, argErr(op, "index", fmt.Sprintf("rank %d (src rank %d)", len(idxShape), len(srcShape)),
			fmt.Sprintf("the input's rank %d, as src's", len(inShape)), ErrInvalidArgument)
	}
	inShape, idxShape, srcShape = norm(inShape), norm(idxShape), norm(srcShape)
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

func (g *scatterGeom) setMeta(outSt, srcSt, idxSt []int64) {
	g.meta = append(append(append(append([]int64(nil), g.loopShape...), outSt...), srcSt...), idxSt...)
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
		io += (p % g.loopShape[k]) * g.meta[3*r+k]
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
// the sort-based path (host.PlanScatter).
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
	return d.scatterReduce("scatter", input, dim, index, src, ReduceAssign, true)
}

// ScatterReduce is PyTorch's input.scatter_reduce(dim, index, src, reduce,
// include_self) with reduce sum, prod, mean, amax or amin: index has
// input's rank, index.size(d) <= src.size(d) for every d and <=
// input.size(d) for d != dim; index values lie in [0, input.size(dim)).
// With includeSelf false, positions hit by an index start from the
// reduction's identity and a mean does not count the input; positions
// never hit keep the input. Integer sums and products wrap, integer means
// floor, amax/amin propagate NaN. The strategy is the device's
// (host.PlanScatter): on GPUs float sums and means are reduced with atomics,
// so their rounding may differ from the reference's index order; on CPU
// drivers each core owns a range of targets and the result has the
// reference's bits.
// An index out of range is an error naming the first offending position,
// found on the device; nothing is written out of bounds.
func (d *Device) ScatterReduce(input *DeviceTensor, dim int64, index, src *DeviceTensor, reduce string, includeSelf bool) (*DeviceTensor, error) {
	return d.scatterReduce("scatter_reduce", input, dim, index, src, reduce, includeSelf)
}

// ScatterDeterministic is Scatter with duplicate indices resolved in index
// order: the last write wins, as in the reference, on every device.
func (d *Device) ScatterDeterministic(input *DeviceTensor, dim int64, index, src *DeviceTensor) (*DeviceTensor, error) {
	out, _, err := d.scatterReduceTimed("scatter", input, dim, index, src, ReduceAssign, true, true)
	return out, err
}

// ScatterReduceDeterministic is ScatterReduce in the bit-reproducible mode:
// each target's values are folded in index order, so the result has the
// scalar reference's bits on every backend and device (NaN payloads of
// float sums aside, which hardware picks). On GPUs the positions are sorted
// by target (a stable radix sort, so index order is kept) and each target's
// run is folded by one work-item; on CPU drivers each core owns a range of
// targets and walks the positions in order (host.PlanScatter). It needs no
// atomics beyond 32-bit ones.
func (d *Device) ScatterReduceDeterministic(input *DeviceTensor, dim int64, index, src *DeviceTensor, reduce string, includeSelf bool) (*DeviceTensor, error) {
	out, _, err := d.scatterReduceTimed("scatter_reduce", input, dim, index, src, reduce, includeSelf, true)
	return out, err
}

func (d *Device) scatterReduce(op string, input *DeviceTensor, dim int64, index, src *DeviceTensor, reduce string, includeSelf bool) (*DeviceTensor, error) {
	out, _, err := d.scatterReduceTimed(op, input, dim, index, src, reduce, includeSelf, false)
	return out, err
}

// scatterReduceTimed is scatterReduce returning the device seconds of its
// copy and kernels too.
func (d *Device) scatterReduceTimed(op string, input *DeviceTensor, dim int64, index, src *DeviceTensor, reduce string, includeSelf, det bool) (*DeviceTensor, float64, error) {
	for _, a := range []struct {
		name string
		t    *DeviceTensor
	}{{"input", input}, {"index", index}, {"src", src}} {
		if err := d.checkIn(op, a.name, a.t); err != nil {
			return nil, 0, err
		}
	}
	g, err := newScatterGeom(op, input.shape, input.dtype, dim, index.shape, index.dtype, src.shape, src.dtype, reduce)
	if err != nil {
		return nil, 0, err
	}
	if err := d.supportsScatter(op, input.dtype); err != nil {
		return nil, 0, err
	}
	out, err := d.alloc(op, input.dtype, input.shape)
	if err != nil {
		return nil, 0, err
	}
	var secs float64
	if out.n > 0 {
		dur, err := d.h.Copy(out.raw(), 0, input.raw(), 0, out.n*int64(input.dtype.Size()))
		secs = dur.Seconds()
		if err != nil {
			out.Release()
			return nil, 0, fmt.Errorf("accel: %s: copy input: %w", op, err)
		}
	}
	if g.idxN == 0 {
		return out, secs, nil
	}
	ks, err := d.scatterRun(op, g, out, index, src, includeSelf, false, det)
	if err != nil {
		out.Release()
		return nil, 0, err
	}
	return out, secs + ks, nil
}

// scatterPlan is the strategy of a scatter of g into out (det: the
// reference's bits), after the test hook.
func (d *Device) scatterPlan(g scatterGeom, out *DeviceTensor, det bool) host.ScatterPlan {
	sp := host.PlanScatter(d.caps, g.idxN, out.n, out.dtype.Size(), det)
	if d.scatterHook != nil {
		sp = d.scatterHook(sp, g.idxN, out.n, out.dtype.Size(), det)
	}
	if sp.Strategy == host.ScatterOwned || sp.Strategy == host.ScatterPrivate {
		// only the CPU passes launch sp.Plan; the reduction is compiled in,
		// so the per-position loop has no switch
		sp.Plan = d.plan(sp.Plan)
		sp.Plan.Knobs = append(sp.Plan.Knobs, host.Knob{Name: "SC_RED", ID: 3, Value: reduceCodes[g.red]})
	}
	return sp
}

// scatterRun runs the reduction of g (or, with gather, the take_along_axis
// gather from out into src) with the strategy host.PlanScatter picks:
// owned (one pass that validates as it goes), or a device-side validation
// of every index before anything is written followed by atomics or by
// sorting positions by target and folding each target's run in index
// order. On an index error out may be partly written; callers own out and
// release it.
func (d *Device) scatterRun(op string, g scatterGeom, out, index, src *DeviceTensor, includeSelf, gather, det bool) (float64, error) {
	return d.scatterRunKeep(op, g, out, index, src, includeSelf, gather, det, nil)
}

// scatterRunKeep is scatterRun; with keep non-nil it takes the sort-based
// path and hands the sort (targets and source offsets in sorted order) to
// the caller in *keep, who releases it.
func (d *Device) scatterRunKeep(op string, g scatterGeom, out, index, src *DeviceTensor, includeSelf, gather, det bool, keep *sortKeys) (float64, error) {
	sp := d.scatterPlan(g, out, det)
	if keep != nil {
		sp = host.ScatterPlan{Strategy: host.ScatterSorted, Reason: "the caller keeps the sort"}
	}
	strategy := sp.Strategy
	if gather {
		strategy = "gather"
	}
	workers := sp.Plan.TotalGroups() * int64(sp.Plan.LocalSize)
	// Hits are counted for the mean; and, in the CPU passes, where the
	// first hit starts from the identity (owned) or the merge must know
	// who hit a target (private).
	counted := g.red == ReduceMean ||
		(strategy == host.ScatterOwned && !includeSelf && g.red != ReduceAssign) ||
		(strategy == host.ScatterPrivate && (!includeSelf || g.red == ReduceAssign))
	tail := []int64{out.n, workers, b2i(counted)}
	meta, err := d.alloc(op, Int64, []int64{int64(len(g.meta) + len(tail))})
	if err != nil {
		return 0, err
	}
	defer meta.Release()
	mb := make([]byte, 8*(len(g.meta)+len(tail)))
	for i, v := range append(append([]int64(nil), g.meta...), tail...) {
		binary.LittleEndian.PutUint64(mb[8*i:], uint64(v))
	}
	if err := d.h.Upload(meta.raw(), 0, mb); err != nil {
		return 0, err
	}
	errBuf, err := d.alloc(op, Uint32, []int64{1})
	if err != nil {
		return 0, err
	}
	defer errBuf.Release()
	if err := d.h.Fill(errBuf.raw(), 0, 4, []byte{0xff, 0xff, 0xff, 0xff}); err != nil {
		return 0, err
	}
	// counts: per target (or per private copy's target) hit counts;
	// spare: the owned pass's slots for the stores it does not own, or
	// the private copies. Both are placeholder arguments where unused.
	counts, spare := errBuf, errBuf
	countsN := out.n
	if strategy == host.ScatterPrivate {
		countsN = workers * out.n
	}
	if counted {
		if counts, err = d.alloc(op, Uint32, []int64{countsN}); err != nil {
			return 0, err
		}
		defer counts.Release()
		if err := d.h.Fill(counts.raw(), 0, 4*countsN, []byte{0, 0, 0, 0}); err != nil {
			return 0, err
		}
	}
	switch strategy {
	case host.ScatterOwned:
		spare, err = d.alloc(op, Uint64, []int64{2 * scSpare * workers})
	case host.ScatterPrivate:
		if spare, err = d.alloc(op, out.dtype, []int64{workers * out.n}); err == nil {
			err = d.h.Fill(spare.raw(), 0, workers*out.n*int64(out.dtype.Size()), privateFill(out.dtype, g.red))
		}
	}
	if spare != errBuf {
		defer spare.Release()
	}
	if err != nil {
		return 0, err
	}
	variant := dtVariant(out.dtype)
	if strategy == host.ScatterAtomic && (g.red == ReduceSum || g.red == ReduceMean) && d.nativeFloatAdd(out.dtype) {
		variant += "a"
	}
	if strategy == host.ScatterSorted {
		// validation and targets touch no values: the int32 variant serves
		// every dtype and needs no 64-bit atomics
		variant = "i32"
	}
	spec := host.KernelSpec{File: "scatter", Variant: variant, Entry: "scatter"}
	var secs float64
	launchPlan := func(plan host.Plan, mode, n int64, counts, errBuf host.Buffer) error {
		plan = host.Fold(d.caps, plan, host.Knob{Name: "SC_MODE", ID: 4, Value: mode},
			host.Knob{Name: "SC_SELF", ID: 5, Value: b2i(includeSelf)}, host.Knob{Name: "SC_WRAP", ID: 6, Value: b2i(g.wrap)},
			host.Knob{Name: "SC_RED", ID: 3, Value: reduceCodes[g.red]})
		s, err := d.launch(spec, plan, host.BufArg(out.raw()), host.BufArg(src.raw()), host.BufArg(index.raw()),
			host.BufArg(meta.raw()), host.BufArg(counts), host.BufArg(errBuf), host.BufArg(spare.raw()), host.I64(n),
			host.I64(int64(len(g.idxShape))), host.I64(int64(g.dim)), host.I64(g.inShape[g.dim]),
			host.I64(reduceCodes[g.red]), host.I64(mode), host.I64(b2i(includeSelf)), host.I64(b2i(g.wrap)))
		secs += s
		if err != nil {
			return fmt.Errorf("accel: %s: %w", op, err)
		}
		return nil
	}
	launchWith := func(mode, n int64, counts, errBuf host.Buffer) error {
		return launchPlan(d.plan(host.PlanElementwise(op, d.caps, n)), mode, n, counts, errBuf)
	}
	launch := func(mode, n int64) error { return launchWith(mode, n, counts.raw(), errBuf.raw()) }
	// 1. validate every index on the device before anything is written
	// to out (the CPU passes validate while they reduce: the owned pass
	// skips a bad index, the private pass writes only its copies)
	switch strategy {
	case host.ScatterOwned:
		err = launchPlan(sp.Plan, scOwned, g.idxN, counts.raw(), errBuf.raw())
	case host.ScatterPrivate:
		err = launchPlan(sp.Plan, scPrivate, g.idxN, counts.raw(), errBuf.raw())
	default:
		err = launch(scValidate, g.idxN)
	}
	if err != nil {
		return 0, err
	}
	eb := make([]byte, 4)
	if err := d.h.Download(errBuf.raw(), 0, eb); err != nil {
		return 0, err
	}
	if tile := binary.LittleEndian.Uint32(eb); tile != math.MaxUint32 {
		// The error path only: read the index back and name the first
		// offending position from the tile the device recorded.
		idx, err := index.ToHost()
		if err != nil {
			return 0, err
		}
		if err := g.firstBadIndex(op, idx.Int64s(), int64(tile)<<16); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("accel: %s: the device flagged index tile %d but no index in it is out of range: %w", op, tile, host.ErrDriver)
	}
	switch strategy {
	case "gather":
		if err := launch(scGather, g.idxN); err != nil {
			return 0, err
		}
		return secs, nil
	case host.ScatterPrivate:
		// 2. fold the private copies into out (the mean divides here)
		if err := launch(scMerge, out.n); err != nil {
			return 0, err
		}
		return secs, nil
	case host.ScatterOwned:
	case host.ScatterSorted:
		return d.scatterSorted(op, g, out, src, includeSelf, secs, launchWith, keep)
	default:
		// 2. identities where include_self is false, 3. reduce
		if !includeSelf && g.red != ReduceAssign {
			if err := launch(scInit, g.idxN); err != nil {
				return 0, err
			}
		}
		if err := launch(scReduce, g.idxN); err != nil {
			return 0, err
		}
	}
	// 4. mean
	if g.red == ReduceMean && out.n > 0 {
		if err := launch(scMean, out.n); err != nil {
			return 0, err
		}
	}
	return secs, nil
}

// nativeFloatAdd reports whether the device has a native atomic add for
// dt's elements (a float type); the FADD=1 scatter variants use it.
func (d *Device) nativeFloatAdd(dt DType) bool {
	return (dt == Float32 && d.caps.Float32Atomics) || (dt == Float64 && d.caps.Float64Atomics)
}

// privateFill is the fill pattern of the private copies: the reduction's
// identity, with -0.0 for float sums and means (x + -0.0 is x for every x,
// so a target no worker hit keeps its bits).
func privateFill(dt DType, reduce string) []byte {
	if (reduce == ReduceSum || reduce == ReduceMean) && (dt == Float32 || dt == Float64) {
		b := make([]byte, dt.Size())
		b[len(b)-1] = 0x80
		return b
	}
	return identityBytes(dt, reduceCodes[reduce])
}

// ScatterReduce computes scatter_reduce on the host with the scalar
// reference, reducing in index order (see Device.ScatterReduce).
func ScatterReduce(input *Tensor, dim int64, index, src *Tensor, reduce string, includeSelf bool) (*Tensor, error) {
	return refScatter("scatter_reduce", input, dim, index, src, reduce, includeSelf)
}

// Scatter computes scatter on the host with the scalar reference; with
// duplicate indices the last in index order wins.
func Scatter(input *Tensor, dim int64, index, src *Tensor) (*Tensor, error) {
	return refScatter("scatter", input, dim, index, src, ReduceAssign, true)
}

func refScatter(op string, input *Tensor, dim int64, index, src *Tensor, reduce string, includeSelf bool) (*Tensor, error) {
	g, err := newScatterGeom(op, input.shape, input.dtype, dim, index.shape, index.dtype, src.shape, src.dtype, reduce)
	if err != nil {
		return nil, err
	}
	idx := index.Int64s()
	if err := g.firstBadIndex(op, idx, 0); err != nil {
		return nil, err
	}
	out := &Tensor{dtype: input.dtype, shape: input.Shape(), data: alignedBytes(int64(len(input.data)))}
	switch input.dtype {
	case Int32:
		copy(out.Int32s(), reference.ScatterReduce(input.Int32s(), g.inShape, g.dim, idx, g.idxShape, src.Int32s(), g.srcShape, reduce, includeSelf))
	case Int64:
		copy(out.Int64s(), reference.ScatterReduce(input.Int64s(), g.inShape, g.dim, idx, g.idxShape, src.Int64s(), g.srcShape, reduce, includeSelf))
	case Float32:
		copy(out.Float32s(), reference.ScatterReduce(input.Float32s(), g.inShape, g.dim, idx, g.idxShape, src.Float32s(), g.srcShape, reduce, includeSelf))
	case Float64:
		copy(out.Float64s(), reference.ScatterReduce(input.Float64s(), g.inShape, g.dim, idx, g.idxShape, src.Float64s(), g.srcShape, reduce, includeSelf))
	}
	return out, nil
}

// scatterSorted is the bit-reproducible scatter: every position's target
// and source offset (SC_DEST), a stable radix sort of the targets carrying
// the source offsets, then one in-order fold per run of equal targets.
// With keep non-nil the sort is left in *keep for the caller to release.
func (d *Device) scatterSorted(op string, g scatterGeom, out, src *DeviceTensor, includeSelf bool, secs float64,
	launchWith func(mode, n int64, counts, errBuf host.Buffer) error, keep *sortKeys) (float64, error) {
	keys, err := d.alloc(op, Uint64, []int64{g.idxN})
	if err != nil {
		return 0, err
	}
	defer keys.Release()
	soff, err := d.alloc(op, Int64, []int64{g.idxN})
	if err != nil {
		return 0, err
	}
	defer soff.Release()
	if err := launchWith(scDest, g.idxN, keys.raw(), soff.raw()); err != nil {
		return 0, err
	}
	res, s, err := d.radixSort(op, keys.raw(), g.idxN, 8, kindUnsigned, false, keyBitsFor(out.n), soff.raw(), src.n)
	if err != nil {
		return 0, err
	}
	secs += s
	s, err = d.segmentRun(op, out.dtype, out.raw(), src.raw(), res.keys.raw(), res.perm.raw(), g.idxN, reduceCodes[g.red], includeSelf)
	if err != nil || keep == nil {
		res.release()
	}
	if err != nil {
		return 0, err
	}
	if keep != nil {
		*keep = res
	}
	return secs + s, nil
}
