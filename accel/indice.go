package accel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
	"github.com/accelkern/accel/reference"
)

// SparseConvParams are the parameters of a sparse convolution's index
// pairs (spconv/mmcv's get_indice_pairs). The slices have one entry per
// spatial dim D (1 to 4); nil Stride and Dilation mean 1, nil Padding and
// OutPadding 0. A dim may have a stride or a dilation above 1, not both
// (spconv's rule).
type SparseConvParams struct {
	BatchSize    int64
	SpatialShape []int64
	KSize        []int64
	Stride       []int64
	Padding      []int64
	Dilation     []int64
	OutPadding   []int64 // transposed conv only
	// Subm: a submanifold conv: the outputs are the input sites in input
	// order, stride 1, and offsets are centred on every dilation (in = out
	// + (kidx - ksize/2)*dilation; spconv centres only for dilation 1).
	// Padding is unused.
	Subm bool
	// Transpose: a transposed conv, out = in*stride - padding +
	// kidx*dilation inside (s-1)*stride - 2p + k + out_padding (spconv's
	// and mmcv's get_deconv_output_size, which leaves dilation out).
	Transpose bool
	// Inverse: the pairs of a SparseInverseConv that undoes the regular
	// conv with these parameters. Pass the forward conv's input sites
	// (its indices) and its parameters: the result's OutIndices are those
	// sites (in their order), its Pairs have one column per row of the
	// forward's OutIndices (which this library orders the same on every
	// call and device) and pair (forward output row, forward input row).
	Inverse bool
	// Split forces a split policy of the candidate expansion; SplitAuto
	// (the zero value) lets the planner choose. The result is the same.
	Split IndiceSplit
}

// IndicePairs are the device outputs of get_indice_pairs. Pairs is int32
// [K, 2, N], K the kernel volume and N the conv's input rows: for offset k
// (the row-major ravel of the kernel index over KSize) the first Num[k]
// columns hold (input row, output row) in ascending input row, the rest -1.
// OutIndices is int32 [M, 1+D], the output sites (batch, coords): sorted
// by (batch, coords) for regular and transposed convs, the input sites for
// submanifold and inverse ones. Num is int32 [K].
type IndicePairs struct {
	Pairs           *DeviceTensor
	OutIndices      *DeviceTensor
	Num             *DeviceTensor
	OutSpatialShape []int64
}

// Release frees the result's device tensors. It is safe to call more than
// once.
func (r *IndicePairs) Release() {
	if r == nil {
		return
	}
	for _, t := range []*DeviceTensor{r.Pairs, r.OutIndices, r.Num} {
		t.Release()
	}
	r.Pairs, r.OutIndices, r.Num = nil, nil, nil
}

// HostIndicePairs is RefIndicePairs' result, the host form of IndicePairs.
type HostIndicePairs struct {
	Pairs           *Tensor
	OutIndices      *Tensor
	Num             *Tensor
	OutSpatialShape []int64
}

// convGeom is a checked get_indice_pairs call: its normalized parameters,
// shapes and the kernels' parameter block.
type convGeom struct {
	p        reference.SparseConv
	d        int
	l, k     int64
	outShape []int64 // the result's spatial shape
	target   []int64 // the expansion's target shape (regular, transposed)
	inBits   int     // key bits of the input sites
	outBits  int     // key bits of the targets
}

func onesOr(v []int64, d int, fill int64) []int64 {
	if v != nil {
		return slices.Clone(v)
	}
	out := make([]int64, d)
	for i := range out {
		out[i] = fill
	}
	return out
}

// keySpace returns batch*prod(shape) and whether it stays below 2^62.
func keySpace(batch int64, shape []int64) (int64, bool) {
	s := batch
	for _, v := range shape {
		if v <= 0 || s > (1<<62)/v {
			return 0, false
		}
		s *= v
	}
	return s, true
}

// newConvGeom checks everything but the rows' values: indices' dtype and
// shape, the parameters and the output shape.
func newConvGeom(op string, dt DType, shape []int64, q SparseConvParams) (convGeom, error) {
	var g convGeom
	D := len(q.SpatialShape)
	if D < 1 || D > 4 {
		return g, argErr(op, "spatial_shape", fmt.Sprintf("%v (%d dims)", q.SpatialShape, D), "1 to 4 spatial dims", ErrInvalidArgument)
	}
	if dt != Int32 {
		return g, argErr(op, "indices", "dtype "+dt.String(), "int32 or int64", ErrInvalidArgument)
	}
	if len(shape) != 2 {
		return g, argErr(op, "indices", fmt.Sprintf("rank %d (shape %v)", len(shape), shape), "rank 2: [L, 1+D] rows (batch, coords)", ErrInvalidArgument)
	}
	if shape[1] != int64(1+D) {
		return g, argErr(op, "indices", fmt.Sprintf("shape %v", shape), fmt.Sprintf("[L, %d]: 1+D columns, D = len(spatial_shape) = %d", 1+D, D), ErrInvalidArgument)
	}
	if shape[0] > math.MaxInt32 {
		return g, argErr(op, "indices", fmt.Sprintf("%d rows", shape[0]), fmt.Sprintf("at most %d rows (int32 row numbers)", math.MaxInt32), ErrTooLarge)
	}
	if q.BatchSize < 1 || q.BatchSize > math.MaxInt32 {
		return g, argErr(op, "batch_size", q.BatchSize, fmt.Sprintf("in [1, %d]", math.MaxInt32), ErrInvalidArgument)
	}
	p := reference.SparseConv{BatchSize: q.BatchSize, SpatialShape: slices.Clone(q.SpatialShape), KSize: slices.Clone(q.KSize),
		Stride: onesOr(q.Stride, D, 1), Padding: onesOr(q.Padding, D, 0), Dilation: onesOr(q.Dilation, D, 1),
		OutPadding: onesOr(q.OutPadding, D, 0), Subm: q.Subm, Transpose: q.Transpose, Inverse: q.Inverse}
	lists := []struct {
		name string
		v    []int64
		min  int64
	}{{"spatial_shape", p.SpatialShape, 1}, {"ksize", p.KSize, 1}, {"stride", p.Stride, 1}, {"padding", p.Padding, 0},
		{"dilation", p.Dilation, 1}, {"out_padding", p.OutPadding, 0}}
	for _, l := range lists {
		if len(l.v) != D {
			return g, argErr(op, l.name, fmt.Sprintf("%v (%d entries)", l.v, len(l.v)), fmt.Sprintf("%d entries, one per spatial dim", D), ErrInvalidArgument)
		}
		for d, v := range l.v {
			if v < l.min || v > math.MaxInt32 {
				return g, argErr(op, l.name, fmt.Sprintf("%v (dim %d: %d)", l.v, d, v), fmt.Sprintf("in [%d, %d] in every dim", l.min, math.MaxInt32), ErrInvalidArgument)
			}
		}
	}
	for d := range D {
		// spconv's rule (its get_indice_pairs asserts it): per dim, a
		// stride or a dilation, not both
		if p.Stride[d] > 1 && p.Dilation[d] > 1 {
			return g, argErr(op, "dilation", fmt.Sprintf("%v with stride %v (dim %d: both %d and %d)", p.Dilation, p.Stride, d, p.Dilation[d], p.Stride[d]),
				"1 in every dim whose stride is > 1 (spconv's rule)", ErrInvalidArgument)
		}
	}
	switch {
	case p.Subm && p.Transpose:
		return g, argErr(op, "transpose", true, "false with subm (a submanifold conv has no transposed form)", ErrInvalidArgument)
	case p.Inverse && (p.Subm || p.Transpose):
		return g, argErr(op, "inverse", true, "false with subm or transpose (it inverts a regular conv)", ErrInvalidArgument)
	case p.Subm && slices.ContainsFunc(p.Stride, func(v int64) bool { return v != 1 }):
		return g, argErr(op, "stride", fmt.Sprint(p.Stride), "1 in every dim with subm", ErrInvalidArgument)
	}
	g.p, g.d, g.l = p, D, shape[0]
	g.k = 1
	for _, v := range p.KSize {
		if g.k > math.MaxInt32/v {
			return g, argErr(op, "ksize", fmt.Sprint(p.KSize), fmt.Sprintf("a kernel volume of at most %d", math.MaxInt32), ErrTooLarge)
		}
		g.k *= v
	}
	g.target = slices.Clone(p.SpatialShape)
	if !p.Subm {
		g.target = reference.ConvOutShape(p, p.Transpose)
		for d, o := range g.target {
			rule := "(s + 2*padding - dilation*(ksize-1) - 1)/stride + 1"
			if p.Transpose {
				rule = "(s-1)*stride - 2*padding + ksize + out_padding"
			}
			if o < 1 {
				return g, argErr(op, "spatial_shape", fmt.Sprintf("%v: output size %d along dim %d by %s", p.SpatialShape, o, d, rule),
					"large enough for an output size >= 1 in every dim", ErrInvalidArgument)
			}
			if o > math.MaxInt32 {
				return g, argErr(op, "spatial_shape", fmt.Sprintf("%v: output size %d along dim %d by %s", p.SpatialShape, o, d, rule),
					fmt.Sprintf("small enough for output sizes <= %d (int32 coordinates)", math.MaxInt32), ErrTooLarge)
			}
		}
	}
	g.outShape = g.target
	if p.Inverse {
		g.outShape = slices.Clone(p.SpatialShape)
	}
	in, ok1 := keySpace(p.BatchSize, p.SpatialShape)
	out, ok2 := keySpace(p.BatchSize, g.target)
	if !ok1 || !ok2 {
		return g, argErr(op, "spatial_shape", fmt.Sprintf("%v (output %v) with batch_size %d", p.SpatialShape, g.target, p.BatchSize),
			"batch_size * prod(shape) below 2^62 for the input and the output", ErrTooLarge)
	}
	g.inBits, g.outBits = keyBitsFor(in), keyBitsFor(out)
	return g, nil
}

// checkSites checks the rows of indices: batch in [0, batch_size),
// coordinates in [0, spatial_shape), no site twice. It names the first bad
// row (range errors before duplicates).
func (g convGeom) checkSites(op string, idx []int32) error {
	w := g.d + 1
	for r := int64(0); r < g.l; r++ {
		row := idx[r*int64(w) : (r+1)*int64(w)]
		if b := int64(row[0]); b < 0 || b >= g.p.BatchSize {
			return argErr(op, "indices", fmt.Sprintf("row %d = %v: batch %d", r, row, b), fmt.Sprintf("in [0, batch_size = %d)", g.p.BatchSize), ErrInvalidArgument)
		}
		for d := 0; d < g.d; d++ {
			if c := int64(row[1+d]); c < 0 || c >= g.p.SpatialShape[d] {
				return argErr(op, "indices", fmt.Sprintf("row %d = %v: coordinate %d along dim %d", r, row, c, d),
					fmt.Sprintf("in [0, spatial_shape[%d] = %d)", d, g.p.SpatialShape[d]), ErrInvalidArgument)
			}
		}
	}
	seen := make(map[[5]int32]int64, g.l)
	for r := int64(0); r < g.l; r++ {
		var key [5]int32
		copy(key[:], idx[r*int64(w):(r+1)*int64(w)])
		if j, ok := seen[key]; ok {
			return argErr(op, "indices", fmt.Sprintf("row %d = %v, the same site as row %d", r, key[:w], j),
				"distinct sites (spconv gives ill-defined pairs for duplicates)", ErrInvalidArgument)
		}
		seen[key] = r
	}
	return nil
}

// params is the kernels' parameter block (IP_P_*) with target shape t,
// then the offsets' table of rule (indice_body.h, ip_target).
func (g convGeom) params(t []int64, rule int64) []byte {
	v := make([]int64, kernels.IpPLen+8*g.k)
	v[kernels.IpPD], v[kernels.IpPBatch], v[kernels.IpPK] = int64(g.d), g.p.BatchSize, g.k
	for d := 0; d < g.d; d++ {
		v[kernels.IpPShape+d] = g.p.SpatialShape[d]
		v[kernels.IpPOut+d] = t[d]
		v[kernels.IpPKsize+d] = g.p.KSize[d]
		v[kernels.IpPStride+d] = g.p.Stride[d]
		v[kernels.IpPPad+d] = g.p.Padding[d]
		v[kernels.IpPDil+d] = g.p.Dilation[d]
	}
	if rule == kernels.IpRuleSubm {
		for d := 0; d < g.d; d++ {
			v[kernels.IpPStride+d], v[kernels.IpPPad+d] = 1, 0
		}
	}
	for k := int64(0); k < g.k; k++ {
		kidx := make([]int64, g.d)
		for d, rest := g.d-1, k; d >= 0; d-- {
			kidx[d], rest = rest%g.p.KSize[d], rest/g.p.KSize[d]
		}
		for d, kd := range kidx {
			st, dil := g.p.Stride[d], g.p.Dilation[d]
			var kq, kr int64
			switch {
			case rule == kernels.IpRuleSubm:
				kq = -(kd - g.p.KSize[d]/2) * dil
			case rule != kernels.IpRuleConv:
				kq = kd * dil
			case st == 1:
				kq = kd * dil
			default: // stride > 1 comes with dilation 1
				kq, kr = kd/st, kd%st
			}
			v[kernels.IpPLen+8*k+int64(2*d)], v[kernels.IpPLen+8*k+int64(2*d)+1] = kq, kr
		}
	}
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}

// RefIndicePairs computes get_indice_pairs on the host with the scalar
// reference (see Device.IndicePairs), with the same checks and errors.
func RefIndicePairs(indices *Tensor, p SparseConvParams) (*HostIndicePairs, error) {
	const op = "get_indice_pairs"
	indices, err := hostIndex32(op, "indices", indices) // int64 indices too (index.go)
	if err != nil {
		return nil, err
	}
	g, err := newConvGeom(op, indices.dtype, indices.shape, p)
	if err != nil {
		return nil, err
	}
	idx := indices.Int32s()
	if err := g.checkSites(op, idx); err != nil {
		return nil, err
	}
	r := reference.IndicePairs(idx, g.p)
	if r.M > math.MaxInt32 {
		return nil, argErr(op, "out_indices", fmt.Sprintf("%d rows", r.M), fmt.Sprintf("at most %d rows", math.MaxInt32), ErrTooLarge)
	}
	n := g.l
	if p.Inverse {
		n = int64(len(r.Pairs)) / (2 * g.k)
	}
	res := &HostIndicePairs{OutSpatialShape: r.OutShape}
	if res.Pairs, err = FromInt32s([]int64{g.k, 2, n}, r.Pairs); err != nil {
		return nil, err
	}
	if res.OutIndices, err = FromInt32s([]int64{int64(len(r.OutIndices)) / int64(g.d+1), int64(g.d + 1)}, r.OutIndices); err != nil {
		return nil, err
	}
	if res.Num, err = FromInt32s([]int64{g.k}, r.Num); err != nil {
		return nil, err
	}
	return res, nil
}

// IndicePairs computes the index pairs of a sparse convolution (spconv's
// get_indice_pairs) over the active sites indices ([L, 1+D] rows (batch,
// coords), distinct; int32, or int64 whose values fit int32, narrowed on
// the host first), with the same bytes on every device and
// split policy: regular and transposed convs' output sites sorted by
// (batch, coords), and each offset's pairs in ascending input row. The
// workspace is O(L*K) (no grid over the output space). Bad input (see
// RefIndicePairs: rank, width, dtype, batch or coordinate out of range,
// duplicate sites, bad parameters) is an *ArgError naming the argument,
// row and bound; the rows are checked on the device, read once. A
// submanifold conv waits once; a regular, transposed or inverse one waits
// twice (the candidates', then the outputs' count), or once where its
// (forward's) target space is small enough to number through a dense grid
// (no larger than its candidates: an inverse on every device, a regular or
// transposed conv on GPUs).
func (d *Device) IndicePairs(indices *DeviceTensor, p SparseConvParams) (*IndicePairs, error) {
	res := &IndicePairs{}
	if err := d.IndicePairsInto(res, indices, p); err != nil {
		return nil, err
	}
	return res, nil
}

// IndicePairsInto is IndicePairs writing into res: it releases res's
// tensors (to the device's pool) and sets new ones, so a network's layer
// loop allocates nothing from the driver after its first pass. On error
// res is left empty.
func (d *Device) IndicePairsInto(res *IndicePairs, indices *DeviceTensor, p SparseConvParams) error {
	const op = "get_indice_pairs"
	if res == nil {
		return argErr(op, "res", "nil", "a result to fill", ErrInvalidArgument)
	}
	res.Release()
	res.OutSpatialShape = nil
	if err := d.checkIn(op, "indices", indices); err != nil {
		return err
	}
	indices, done, err := d.index32(op, "indices", indices) // int64 indices too (index.go)
	if err != nil {
		return err
	}
	defer done()
	g, err := newConvGeom(op, indices.dtype, indices.shape, p)
	if err != nil {
		return err
	}
	if !d.caps.Int64 {
		return argErr(op, "device", d.caps.ID()+" "+d.caps.Name+" without 64-bit integers", "a device with 64-bit integers", ErrUnsupported)
	}
	shape, noGrid := d.planner.indiceLayout()
	r, err := d.indicePairs(op, indices, g, p.Split, shape, noGrid)
	if err != nil {
		return err
	}
	*res = *r
	return nil
}

// ipRun is one get_indice_pairs call's device state.
type ipRun struct {
	d        *Device
	op       string
	g        convGeom
	split    IndiceSplit
	tmp      temps // scratch, released at the op's end
	outs     temps // the result's tensors, released on an error
	flag     *DeviceTensor
	sites    sortKeys      // the input sites' keys, sorted, and their rows
	table    *DeviceTensor // or the sites' hash table (plan.Table)
	inParams host.Buffer
	indices  *DeviceTensor
	plan     indicePlan
}

func (d *Device) indicePairs(op string, indices *DeviceTensor, g convGeom, split IndiceSplit, shape indiceShape, noGrid bool) (*IndicePairs, error) {
	if g.l == 0 {
		return d.noIndicePairs(op, g)
	}
	plan := planIndice(d.caps, g, split, shape, noGrid)
	space, ok := keySpace(g.p.BatchSize, g.target)
	if !ok || noGrid {
		space = 0
	}
	plan = d.tunedIndice(plan, g, split, space)
	res, err := d.indiceRun(op, indices, g, split, plan)
	if errors.Is(err, errSitesTable) {
		// a site found no free slot near its home (a crafted input): the
		// sites sorted instead
		plan = withSitesTable(d.caps, g, split, plan, sitesTable{})
		res, err = d.indiceRun(op, indices, g, split, plan)
	}
	return res, err
}

// errSitesTable says a site of get_indice_pairs found no free slot of the
// sites' hash table within its probes (ipRun.waited), and the op sorts
// its sites instead.
var errSitesTable = errors.New("the sites' hash table overflowed its probes")

// indiceRun runs get_indice_pairs for g by plan.
func (d *Device) indiceRun(op string, indices *DeviceTensor, g convGeom, split IndiceSplit, plan indicePlan) (*IndicePairs, error) {
	switch plan.Path {
	case pathSubmLookup:
		d.reportModel(op, "indice", plan, func() traffic { return d.indiceModel(g, split, plan, 0, 0) },
			indiceMinBytes(plan.Path, g, 0))
	case pathConvCandidates, pathInverse:
		// reported with its model once the targets are counted (reportTargets)
	default:
		d.report(op, "indice", plan)
	}
	r := &ipRun{d: d, op: op, g: g, split: split, indices: indices, plan: plan}
	defer r.tmp.release()
	res, err := r.start()
	if err == nil {
		switch plan.Path {
		case pathSubmRows, pathSubmLookup:
			err = r.subm(res, plan)
		case pathConvRows:
			err = r.convRows(res, plan)
		case pathConvCandidates:
			err = r.convCandidates(res, plan)
		case pathInverse:
			err = r.inverse(res, plan)
		default:
			err = fmt.Errorf("accel: %s: no executor for %s: %w", op, plan.Path, host.ErrDriver)
		}
	}
	if err != nil {
		r.outs.release()
		return nil, err
	}
	return res, nil
}

// indiceModel is get_indice_pairs' traffic model on d for g by plan p
// (indiceTraffic), with the plans its sorts and scans make; v candidates
// hit a target and m outputs (regular, transposed and inverse convs).
func (d *Device) indiceModel(g convGeom, split IndiceSplit, p indicePlan, v, m int64) traffic {
	radix := func(n int64) host.Plan { return d.radixTuned(n, 8, n) }
	scan := func(n int64, dt DType) host.Plan {
		return d.plan(planScan(d.caps, n, int64(dt.Size()), d.scanSubgroups(dt)))
	}
	return indiceTraffic(d.caps, radix, scan, g, split, p, v, m)
}

// reportTargets reports a candidates path's plan with its model once the
// m outputs (and where the targets are sorted, the v candidates that hit
// one) are known.
func (r *ipRun) reportTargets(v, m int64) {
	if r.d.reporting() {
		r.d.reportModel(r.op, "indice", r.plan, func() traffic { return r.d.indiceModel(r.g, r.split, r.plan, v, m) },
			indiceMinBytes(r.plan.Path, r.g, m))
	}
}

// noIndicePairs is the result of a conv without sites: no pairs, no
// outputs, zero counts.
func (d *Device) noIndicePairs(op string, g convGeom) (*IndicePairs, error) {
	var outs temps
	w := int64(g.d + 1)
	res := &IndicePairs{OutSpatialShape: g.outShape}
	var err error
	if res.Pairs, err = outs.alloc(d, op, Int32, g.k, 2, 0); err == nil {
		if res.OutIndices, err = outs.alloc(d, op, Int32, 0, w); err == nil {
			res.Num, err = outs.alloc(d, op, Int32, g.k)
		}
	}
	if err == nil {
		err = d.fill(res.Num.raw(), 0, 4*g.k, []byte{0, 0, 0, 0})
	}
	if err == nil {
		err = d.flush(op)
	}
	if err != nil {
		outs.release()
		return nil, err
	}
	return res, nil
}

// start is every path's first pass: the validation flag, the input
// sites' parameters, their keys (each row checked), sorted or placed in
// their hash table, and the check for duplicate sites. It returns the
// result to fill.
func (r *ipRun) start() (*IndicePairs, error) {
	d, g, op := r.d, r.g, r.op
	var err error
	// the validation flag, word 1 for the dense grid's total
	// (gridTargets) and word IP_FLAG_TABLE for the sites' table (waited)
	if r.flag, err = d.newFlagWords(op, kernels.IpFlagTable+1); err != nil {
		return nil, err
	}
	r.tmp.add(r.flag)
	inRule := int64(kernels.IpRuleInv)
	if g.p.Subm {
		inRule = kernels.IpRuleSubm
	}
	if r.inParams, err = r.upload(g.params(g.p.SpatialShape, inRule)); err != nil {
		return nil, err
	}
	keys, err := r.tmp.alloc(d, op, Uint64, g.l)
	if err != nil {
		return nil, err
	}
	if err := run(d, op, kernels.IndiceAny, d.elementwise(op, g.l), kernels.IndiceKeys{Indices: r.indices.raw(), Params: r.inParams,
		Keys: keys.raw(), Err: r.flag.raw(), N: g.l}); err != nil {
		return nil, err
	}
	if t := r.plan.Table; t.Slots > 0 {
		if r.table, err = r.tmp.alloc(d, op, Uint64, t.Slots); err != nil {
			return nil, err
		}
		if err := d.fill(r.table.raw(), 0, 8*t.Slots, []byte{0xff, 0xff, 0xff, 0xff}); err != nil {
			return nil, fmt.Errorf("accel: %s: %w", op, err)
		}
		// a work-item's inserts probe at most t.steps() slots each
		if err := run(d, op, kernels.IndiceAny, d.elementwiseLoop(op, g.l, t.steps()), kernels.IndiceTable{Keys: keys.raw(), Table: r.table.raw(),
			Err: r.flag.raw(), N: g.l, Slots: t.Slots, Rb: t.RowBits, Probes: t.Probes}); err != nil {
			return nil, err
		}
		return &IndicePairs{OutSpatialShape: g.outShape}, nil
	}
	if r.sites, err = d.radixSort(op, keys.raw(), g.l, 8, kernels.KindUnsigned, false, g.inBits, nil, 0); err != nil {
		return nil, err
	}
	r.tmp.add(r.sites.keys)
	r.tmp.add(r.sites.perm)
	if err := run(d, op, kernels.IndiceAny, d.elementwise(op, g.l), kernels.IndiceDups{Keys: r.sites.keys.raw(), Err: r.flag.raw(), N: g.l}); err != nil {
		return nil, err
	}
	return &IndicePairs{OutSpatialShape: g.outShape}, nil
}

// subm is a submanifold conv: in rows (pathSubmRows) or each candidate
// looking its target up (pathSubmLookup); the outputs are the sites.
func (r *ipRun) subm(res *IndicePairs, plan indicePlan) error {
	var pairs, num *DeviceTensor
	var err error
	if plan.Path == pathSubmRows {
		pairs, num, err = r.submRows(&r.outs, plan, r.inParams)
	} else {
		pairs, num, err = r.lookup(&r.outs, r.indices.raw(), r.g.l, r.inParams, kernels.IpRuleSubm)
	}
	if err == nil {
		err = r.check()
	}
	if err == nil {
		err = r.sitesOut(&r.outs, res, pairs, num)
	}
	return err
}

// convStart uploads a regular or transposed conv's target parameters
// (also an inverse's: its forward's) and returns them with the rule.
func (r *ipRun) convStart() (params host.Buffer, rule int64, err error) {
	rule = kernels.IpRuleConv
	if r.g.p.Transpose {
		rule = kernels.IpRuleTconv
	}
	params, err = r.upload(r.g.params(r.g.target, rule))
	return params, rule, err
}

// counted hands the counting passes to the device, checks the rows and
// reads the scan's total: the candidates that hit a target (the op's
// first wait after the sites).
func (r *ipRun) counted(s *scan) (int64, error) {
	if s != nil && s.partials != nil {
		r.tmp.add(s.partials)
	}
	if err := r.d.flush(r.op); err != nil {
		return 0, err
	}
	if err := r.check(); err != nil {
		return 0, err
	}
	v, err := s.total(r.op)
	return int64(v), err
}

// convRows is a regular or transposed conv in rows: the targets counted
// per chunk and offset, their keys and input rows emitted, numbered
// through the dense grid (plan.Grid) or sorted, then the pairs written
// per chunk and offset.
func (r *ipRun) convRows(res *IndicePairs, plan indicePlan) error {
	d, g, op := r.d, r.g, r.op
	params, rule, err := r.convStart()
	if err != nil {
		return err
	}
	cnt, s, err := r.convCount(plan, params, rule)
	if err != nil {
		return err
	}
	v, err := r.counted(s)
	if err != nil {
		return err
	}
	var outIdx, crow, qrow, ckey *DeviceTensor
	var grid denseGrid
	if v > 0 {
		if ckey, err = r.tmp.alloc(d, op, Uint64, v); err != nil {
			return err
		}
		if qrow, err = r.tmp.alloc(d, op, Int32, v); err != nil {
			return err
		}
		var gb host.Buffer
		if plan.Grid > 0 {
			if grid, err = r.newGrid(plan.Grid); err != nil {
				return err
			}
			gb = grid.bits.raw()
		}
		if err := r.convLaunch(plan, params, rule, cnt.raw(), ckey.raw(), qrow.raw(), gb); err != nil {
			return err
		}
	}
	if grid.bits != nil {
		// the dense grid: its words' set bits scanned number the
		// targets in key order, as the sort would
		outIdx, err = r.gridOuts(&r.outs, grid, params)
	} else {
		outIdx, crow, err = r.numberTargets(&r.outs, ckey, v, params)
	}
	if err != nil {
		return err
	}
	pairs, num, err := r.pairsOut(&r.outs, g.l)
	if err != nil {
		return err
	}
	var cb, qb, kb, gb, gr host.Buffer
	if v > 0 {
		qb, kb = qrow.raw(), ckey.raw()
	}
	if crow != nil {
		cb = crow.raw()
	}
	if grid.bits != nil {
		gb, gr = grid.bits.raw(), grid.rows.raw()
	}
	if err := run(d, op, kernels.IndiceAny, r.tilePlan(g.l), kernels.IndiceCpairs{Cnt: cnt.raw(), Qrow: qb, Crow: cb, Pairs: pairs.raw(),
		Num: num.raw(), Err: r.flag.raw(), N: g.l, Count: g.l * g.k, Chunks: plan.Chunks, Ckey: kb, Grid: gb, Grows: gr,
		Dense: b2i(grid.bits != nil)}); err != nil {
		return err
	}
	res.Pairs, res.OutIndices, res.Num = pairs, outIdx, num
	return d.flush(op)
}

// candidateTargets is the first half of the candidates paths (a regular,
// transposed or inverse conv): a flag per (row, offset) scanned into
// positions, the targets' keys emitted, sorted and numbered. outs holds
// the output rows.
func (r *ipRun) candidateTargets(outs *temps) (pos *DeviceTensor, wide int64, outIdx, crow *DeviceTensor, err error) {
	params, rule, err := r.convStart()
	if err != nil {
		return nil, 0, nil, nil, err
	}
	pos, wide, s, err := r.expand(r.indices.raw(), r.g.l, params, rule)
	if err != nil {
		return nil, 0, nil, nil, err
	}
	v, err := r.counted(s)
	if err != nil {
		return nil, 0, nil, nil, err
	}
	var ckey *DeviceTensor
	if v > 0 {
		if ckey, err = r.tmp.alloc(r.d, r.op, Uint64, v); err != nil {
			return nil, 0, nil, nil, err
		}
		if err := r.expandLaunch(r.indices.raw(), r.g.l, params, rule, pos.raw(), wide, nil, nil, false, ckey.raw(), nil); err != nil {
			return nil, 0, nil, nil, err
		}
	}
	if outIdx, crow, err = r.numberTargets(outs, ckey, v, params); err != nil {
		return nil, 0, nil, nil, err
	}
	r.reportTargets(v, outIdx.shape[0])
	return pos, wide, outIdx, crow, nil
}

// convCandidates is a regular or transposed conv on candidates: the
// targets (candidateTargets), then the pairs written per candidate.
func (r *ipRun) convCandidates(res *IndicePairs, plan indicePlan) error {
	if plan.Grid > 0 {
		return r.convGrid(res, plan)
	}
	pos, wide, outIdx, crow, err := r.candidateTargets(&r.outs)
	if err != nil {
		return err
	}
	pairs, num, err := r.write(&r.outs, pos.raw(), wide, crow, r.g.l)
	if err != nil {
		return err
	}
	res.Pairs, res.OutIndices, res.Num = pairs, outIdx, num
	return r.d.flush(r.op)
}

// convGrid is a regular or transposed conv on candidates through the
// dense grid (plan.Grid keys): the targets numbered (gridTargets), then
// the pairs by tiles (tilePairs), each candidate's output row from the
// grid. No flag, position or sort of the candidates.
func (r *ipRun) convGrid(res *IndicePairs, plan indicePlan) error {
	gt, err := r.gridTargets(&r.outs, plan, true)
	if err != nil {
		return err
	}
	pairs, num, err := r.tilePairs(&r.outs, r.g.l, gt.orow, nil, &gt.grid, 3)
	if err != nil {
		return err
	}
	res.Pairs, res.OutIndices, res.Num = pairs, gt.outIdx, num
	return r.d.flush(r.op)
}

// gridRun is what gridTargets leaves: each candidate's target key (orow,
// where asked for), the scanned grid (a target's output row) and the
// output rows (in outs).
type gridRun struct {
	orow, outIdx *DeviceTensor
	grid         denseGrid
}

// denseGrid is get_indice_pairs' dense grid over a target space
// (indice_body.h's ip_grid_mark and ip_grid_row): a bit a key in 32-bit
// words (bits, zeroed, with one word more for the scan's total) and, once
// scanned (scan), each word's first output row (rows).
type denseGrid struct {
	bits, rows *DeviceTensor
	words      int64 // the bits' words a key has one: ceil(keys / 32)
}

// gridWords is the words of a dense grid over keys keys.
func gridWords(keys int64) int64 { return (keys + 31) / 32 }

// newGrid allocates a zeroed dense grid over keys keys (scratch).
func (r *ipRun) newGrid(keys int64) (denseGrid, error) {
	gr := denseGrid{words: gridWords(keys)}
	var err error
	if gr.bits, err = r.zeroed(Uint32, gr.words+1); err != nil {
		return gr, err
	}
	gr.rows, err = r.tmp.alloc(r.d, r.op, Uint32, gr.words+1)
	return gr, err
}

// scan numbers the grid's targets: each word's first output row, the
// total at word gr.words.
func (gr denseGrid) scan(d *Device, op string) (*scan, error) {
	return d.scanBuf(op, Uint32, gr.bits.raw(), gr.rows.raw(), gr.words+1, kernels.FlagPopc32, true)
}

// gouts queues the scanned grid's m outputs into outIdx (indice_gouts: a
// work-item loops once a target of its words).
func (r *ipRun) gouts(gr denseGrid, params host.Buffer, outIdx *DeviceTensor) error {
	return run(r.d, r.op, kernels.IndiceAny, r.d.elementwiseLoop(r.op, gr.words, 32), kernels.IndiceGouts{
		Grid: gr.bits.raw(), Grows: gr.rows.raw(), Params: params, Outs: outIdx.raw(), Err: r.flag.raw(), N: gr.words})
}

// gridTargets numbers a regular, transposed or (the forward of) an
// inverse conv's targets through the dense grid (plan.Grid keys): the
// expansion flags each candidate's target in the grid and, with keys
// (the pairs to write by tiles), writes its key (or -1) into orow; the grid is scanned and its total copied beside the
// validation flag, read with it (the op's one wait); the grid's outputs
// are written into outs (indice_gouts), in key order as the sort would
// give them. It reports the plan with its model.
func (r *ipRun) gridTargets(outs *temps, plan indicePlan, keys bool) (gridRun, error) {
	d, g, op := r.d, r.g, r.op
	var gt gridRun
	params, rule, err := r.convStart()
	if err != nil {
		return gt, err
	}
	if gt.grid, err = r.newGrid(plan.Grid); err != nil {
		return gt, err
	}
	var orow host.Buffer
	if keys {
		if gt.orow, err = r.tmp.alloc(d, op, Int32, g.l*g.k); err != nil {
			return gt, err
		}
		orow = gt.orow.raw()
	}
	if err := r.expandLaunch(r.indices.raw(), g.l, params, rule, nil, 0, orow, nil, false, nil, gt.grid.bits.raw()); err != nil {
		return gt, err
	}
	// the outputs (the grid's total) into flag word 1
	s, err := gt.grid.scan(d, op)
	if err != nil {
		return gt, err
	}
	err = s.copyTotal(op, r.flag.raw(), 4)
	s.release()
	if err != nil {
		return gt, err
	}
	if err := d.flush(op); err != nil {
		return gt, err
	}
	w, err := r.waited(2)
	if err != nil {
		return gt, err
	}
	m := int64(w[1])
	r.reportTargets(0, m)
	if gt.outIdx, err = outs.alloc(d, op, Int32, m, int64(g.d+1)); err != nil {
		return gt, err
	}
	if m > 0 {
		if err := r.gouts(gt.grid, params, gt.outIdx); err != nil {
			return gt, err
		}
	}
	return gt, nil
}

// inverse is an inverse conv: the forward conv's outputs (through the
// dense grid, gridTargets, or sorted, candidateTargets; kept as scratch),
// then from each its inputs looked up among the sites; the outputs are
// the sites.
func (r *ipRun) inverse(res *IndicePairs, plan indicePlan) error {
	var outIdx *DeviceTensor
	var err error
	if plan.Grid > 0 {
		var gt gridRun
		gt, err = r.gridTargets(&r.tmp, plan, false)
		outIdx = gt.outIdx
	} else {
		_, _, outIdx, _, err = r.candidateTargets(&r.tmp)
	}
	if err != nil {
		return err
	}
	pairs, num, err := r.lookup(&r.outs, outIdx.raw(), outIdx.shape[0], r.inParams, kernels.IpRuleInv)
	if err != nil {
		return err
	}
	return r.sitesOut(&r.outs, res, pairs, num)
}

// numberTargets sorts v target keys ckey, numbers their runs (crow: each
// candidate's output row) and writes the output rows (outIdx, into
// outs) from the sorted keys; it waits once, for the number of outputs.
// Without targets it allocates the empty outIdx.
func (r *ipRun) numberTargets(outs *temps, ckey *DeviceTensor, v int64, params host.Buffer) (outIdx, crow *DeviceTensor, err error) {
	d, g, op := r.d, r.g, r.op
	w := int64(g.d + 1)
	if v == 0 {
		outIdx, err = outs.alloc(d, op, Int32, 0, w)
		return outIdx, nil, err
	}
	sk, err := d.radixSort(op, ckey.raw(), v, 8, kernels.KindUnsigned, false, g.outBits, nil, 0)
	if err != nil {
		return nil, nil, err
	}
	r.tmp.add(sk.keys)
	r.tmp.add(sk.perm)
	seg, err := r.tmp.alloc(d, op, Int64, v)
	if err != nil {
		return nil, nil, err
	}
	ss, err := d.scanBuf(op, Int64, sk.keys.raw(), seg.raw(), v, kernels.FlagHead64, false)
	if err != nil {
		return nil, nil, err
	}
	if ss.partials != nil {
		r.tmp.add(ss.partials)
	}
	if crow, err = r.tmp.alloc(d, op, Int64, v); err != nil {
		return nil, nil, err
	}
	if err := run(d, op, kernels.MoveW64, d.elementwise(op, v), kernels.MoveScatter{Dst: crow.raw(), Src: seg.raw(), Idx: sk.perm.raw(),
		N: v, Add: -1}); err != nil {
		return nil, nil, err
	}
	if err := d.flush(op); err != nil {
		return nil, nil, err
	}
	m, err := ss.total(op)
	if err != nil {
		return nil, nil, err
	}
	if m > math.MaxInt32 {
		return nil, nil, argErr(op, "out_indices", fmt.Sprintf("%d rows", m), fmt.Sprintf("at most %d rows (int32 row numbers)", math.MaxInt32), ErrTooLarge)
	}
	if outIdx, err = outs.alloc(d, op, Int32, int64(m), w); err != nil {
		return nil, nil, err
	}
	err = run(d, op, kernels.IndiceAny, d.elementwise(op, v), kernels.IndiceOuts{Skeys: sk.keys.raw(), Seg: seg.raw(), Params: params,
		Outs: outIdx.raw(), Err: r.flag.raw(), N: v})
	return outIdx, crow, err
}

// zeroed allocates a zero-filled scratch tensor of n elements of dt.
func (r *ipRun) zeroed(dt DType, n int64) (*DeviceTensor, error) {
	t, err := r.tmp.alloc(r.d, r.op, dt, n)
	if err != nil {
		return nil, err
	}
	if err := r.d.fill(t.raw(), 0, n*int64(dt.Size()), make([]byte, dt.Size())); err != nil {
		return nil, fmt.Errorf("accel: %s: %w", r.op, err)
	}
	return t, nil
}

// sitesOut completes a submanifold or inverse result, whose outputs are
// the input sites (copied), and hands the work to the device.
func (r *ipRun) sitesOut(outs *temps, res *IndicePairs, pairs, num *DeviceTensor) error {
	d, g := r.d, r.g
	w := int64(g.d + 1)
	var err error
	if res.OutIndices, err = outs.alloc(d, r.op, Int32, g.l, w); err != nil {
		return err
	}
	if err := d.copyBytes(r.op, res.OutIndices.raw(), 0, r.indices.raw(), 0, 4*g.l*w); err != nil {
		return err
	}
	if err := d.flush(r.op); err != nil {
		return err
	}
	res.Pairs, res.Num = pairs, num
	return nil
}

func (r *ipRun) upload(b []byte) (host.Buffer, error) {
	t, err := r.tmp.alloc(r.d, r.op, Int64, int64(len(b)/8))
	if err != nil {
		return nil, err
	}
	if err := r.d.h.Upload(t.raw(), 0, b); err != nil {
		return nil, fmt.Errorf("accel: %s: %w", r.op, err)
	}
	return t.raw(), nil
}

// check reads the validation flag (a wait for the work queued so far) and
// on a flagged row names it, from the rows read back.
func (r *ipRun) check() error {
	_, err := r.waited(1)
	return err
}

// waited reads the first n (at least 1) of the op's flag words once the
// work queued so far has finished (a wait): on a flagged row the error
// naming it, from the rows read back; else errSitesTable where a site
// found no free slot of the sites' hash table near its home.
func (r *ipRun) waited(n int64) ([]uint32, error) {
	words := n
	if r.table != nil {
		words = max(n, kernels.IpFlagTable+1)
	}
	w, err := r.d.readFlagWords(r.op, r.flag, words)
	if err != nil {
		return nil, err
	}
	if flagged(w) {
		return nil, r.flaggedRows(int64(w[0]) << kernels.ErrTileShift)
	}
	if r.table != nil && w[kernels.IpFlagTable] != 0 {
		return nil, fmt.Errorf("accel: %s: %w", r.op, errSitesTable)
	}
	return w[:n], nil
}

// flaggedRows is the error of rows the device flagged from row tile on,
// named by the host's check of the rows read back.
func (r *ipRun) flaggedRows(tile int64) error {
	h, err := r.indices.ToHost()
	if err != nil {
		return err
	}
	if err := r.g.checkSites(r.op, h.Int32s()); err != nil {
		return err
	}
	return fmt.Errorf("accel: %s: the device flagged row %d or later, the host finds it valid: %w", r.op, tile, host.ErrDriver)
}

// tilePlan is the plan of an elementwise pass over count = n*K candidates
// whose tiles never straddle two offsets (indice_body.h): K times the
// tiles of n, one per group under a loop limit.
func (r *ipRun) tilePlan(n int64) host.Plan {
	plan := r.d.elementwise(r.op, n*r.g.k)
	return r.d.elementwise(r.op, r.g.k*((n+plan.TileElems-1)/plan.TileElems)*plan.TileElems)
}

// expand queues the expansion of a regular or transposed conv's n rows x
// K candidates under rule into their flags and the flags' in-place
// exclusive scan: pos holds n*K+1 words (64-bit where wide), the last one
// the total.
func (r *ipRun) expand(rows host.Buffer, n int64, params host.Buffer, rule int64) (*DeviceTensor, int64, *scan, error) {
	d, g := r.d, r.g
	count := n * g.k
	dt, wide, _ := expandLayout(d.caps, g, n, rule, false, sitesTable{}, r.split)
	pos, err := r.tmp.alloc(d, r.op, dt, count+1)
	if err != nil {
		return nil, 0, nil, err
	}
	if err := d.fill(pos.raw(), count*int64(dt.Size()), int64(dt.Size()), []byte{0, 0, 0, 0}); err != nil {
		return nil, 0, nil, fmt.Errorf("accel: %s: %w", r.op, err)
	}
	if err := r.expandLaunch(rows, n, params, rule, pos.raw(), wide, nil, nil, false, nil, nil); err != nil {
		return nil, 0, nil, err
	}
	s, err := d.scanBuf(r.op, dt, pos.raw(), pos.raw(), count+1, kernels.FlagNone, true)
	if err != nil {
		return nil, 0, nil, err
	}
	return pos, wide, s, nil
}

// expandLayout is how expand and lookup lay out n rows x K candidates under
// rule (look: the rule looks targets up among the sites, sorted or in
// their table): the positions' dtype (wide: 64-bit, where n*K+1 passes
// 2^32) and whether a submanifold conv among sorted sites (no table)
// walks them in key order (sorted: cursors for each of a core's offsets).
// The traffic model (indiceTraffic) takes it from here too.
func expandLayout(caps host.Caps, g convGeom, n, rule int64, look bool, table sitesTable, split IndiceSplit) (dt DType, wide int64, sorted bool) {
	dt = Uint32
	if n*g.k+1 >= 1<<32 {
		dt, wide = Uint64, 1
	}
	search := int64(0)
	if look {
		search = lookupSteps(g, table)
	}
	plan := planIndicePairs(caps, n, g.k, search, split)
	return dt, wide, rule == kernels.IpRuleSubm && table.Slots == 0 && plan.OffsetsPerCore <= ipCursors
}

// lookupSteps is the loop iterations of one looked-up candidate: probes of
// the sites' table t, or a search among g's sorted sites.
func lookupSteps(g convGeom, t sitesTable) int64 {
	if t.Slots > 0 {
		return t.steps()
	}
	return searchSteps(g.l)
}

// convCount queues a regular or transposed conv's count pass in rows
// (shapeRows): each (chunk, offset)'s targets into cnt, offset-major,
// and cnt's in-place exclusive scan (K*chunks+1 words, the last the total).
func (r *ipRun) convCount(plan indicePlan, params host.Buffer, rule int64) (*DeviceTensor, *scan, error) {
	d, g := r.d, r.g
	tiles := plan.Chunks * g.k
	cnt, err := r.tileCounts(tiles)
	if err != nil {
		return nil, nil, err
	}
	if err := r.convLaunch(plan, params, rule, cnt.raw(), nil, nil, nil); err != nil {
		return nil, nil, err
	}
	s, err := d.scanBuf(r.op, Uint64, cnt.raw(), cnt.raw(), tiles+1, kernels.FlagNone, true)
	if err != nil {
		return nil, nil, err
	}
	return cnt, s, nil
}

// tileCounts allocates the counts of tiles tiles and the word after them
// (zeroed: the total once scanned).
func (r *ipRun) tileCounts(tiles int64) (*DeviceTensor, error) {
	cnt, err := r.tmp.alloc(r.d, r.op, Uint64, tiles+1)
	if err != nil {
		return nil, err
	}
	if err := r.d.fill(cnt.raw(), 8*tiles, 8, []byte{0, 0, 0, 0}); err != nil {
		return nil, fmt.Errorf("accel: %s: %w", r.op, err)
	}
	return cnt, nil
}

// convLaunch queues indice_crows over the plan's chunks in its launches:
// the count pass, or with ckey and qrow (cnt scanned) the emit pass (and
// with grid, the dense grid's bits).
func (r *ipRun) convLaunch(plan indicePlan, params host.Buffer, rule int64, cnt, ckey, qrow, grid host.Buffer) error {
	lp := plan.Plan
	lp.Reason = plan.String()
	for c0 := int64(0); c0 < plan.Chunks; c0 += plan.Rows {
		if err := run(r.d, r.op, kernels.IndiceAny, lp, kernels.IndiceCrows{Rows: r.indices.raw(), Params: params, Cnt: cnt, Ckey: ckey,
			Qrow: qrow, N: r.g.l, Chunk: plan.ChunkRows, Chunks: plan.Chunks, Chunk0: c0, ChunksN: min(plan.Rows, plan.Chunks-c0),
			Jobs: plan.Jobs, Rule: rule, Split: int64(plan.Split), Emit: b2i(ckey != nil), Grid: grid, Dense: b2i(grid != nil)}); err != nil {
			return err
		}
	}
	return nil
}

// gridOuts numbers the targets marked in the dense grid (its words' set
// bits scanned) and writes out_indices from them, after one wait for
// their count.
func (r *ipRun) gridOuts(outs *temps, grid denseGrid, params host.Buffer) (*DeviceTensor, error) {
	d, op := r.d, r.op
	ss, err := grid.scan(d, op)
	if err != nil {
		return nil, err
	}
	defer ss.release()
	if err := d.flush(op); err != nil {
		return nil, err
	}
	m, err := ss.total(op)
	if err != nil {
		return nil, err
	}
	outIdx, err := outs.alloc(d, op, Int32, int64(m), int64(r.g.d+1))
	if err != nil {
		return nil, err
	}
	if err := r.gouts(grid, params, outIdx); err != nil {
		return nil, err
	}
	return outIdx, nil
}

// submRows is a submanifold conv in rows (shapeRows): the merge
// search into one record of found rows per site, the tiles' counts, their
// scan and the pairs' streaming write.
func (r *ipRun) submRows(outs *temps, plan indicePlan, params host.Buffer) (pairs, num *DeviceTensor, err error) {
	d, g := r.d, r.g
	n := g.l
	if plan.Lines > 0 {
		return r.submLines(outs, plan, params)
	}
	orow, err := r.tmp.alloc(d, r.op, Int32, n*g.k)
	if err != nil {
		return nil, nil, err
	}
	rank, err := r.tmp.alloc(d, r.op, Int32, n)
	if err != nil {
		return nil, nil, err
	}
	sym := indiceSubmSym(g.p.KSize)
	if sym {
		if err := d.fill(orow.raw(), 0, 4*n*g.k, []byte{0xff, 0xff, 0xff, 0xff}); err != nil {
			return nil, nil, fmt.Errorf("accel: %s: %w", r.op, err)
		}
	}
	lp := plan.Plan
	lp.Reason = plan.String()
	for row0 := int64(0); row0 < n; row0 += plan.Rows {
		if err := run(d, r.op, kernels.IndiceAny, lp, kernels.IndiceSearch{Rows: r.indices.raw(), Params: params, Skeys: r.sites.keys.raw(),
			Sperm: r.sites.perm.raw(), Orow: orow.raw(), Rank: rank.raw(), Nkeys: n, Row0: row0, RowsN: min(plan.Rows, n-row0),
			Jobs: plan.Jobs, Sym: b2i(sym), Split: int64(plan.Split)}); err != nil {
			return nil, nil, err
		}
	}
	return r.submGather(outs, plan, orow, rank, nil)
}

// submGather gathers the records by sorted position orow into row order
// (rank: each row's sorted position), or with orowq takes them in row
// order there, counting the tiles; then it scans and writes the pairs.
func (r *ipRun) submGather(outs *temps, plan indicePlan, orow, rank, orowq *DeviceTensor) (pairs, num *DeviceTensor, err error) {
	d, g := r.d, r.g
	n := g.l
	tiles := plan.Chunks * g.k
	cnt, err := r.tileCounts(tiles)
	if err != nil {
		return nil, nil, err
	}
	gather := orowq == nil
	if gather {
		if orowq, err = r.tmp.alloc(d, r.op, Int32, n*g.k); err != nil {
			return nil, nil, err
		}
	}
	ep := plan.Emit
	ep.Reason = plan.String()
	cp := ep
	cp.Tiles = plan.Chunks
	cp.Groups = host.FoldGroups((plan.Chunks+int64(cp.LocalSize)-1)/int64(cp.LocalSize), d.caps.MaxWorkGroupCount)
	var orowb, rankb host.Buffer
	if gather {
		orowb, rankb = orow.raw(), rank.raw()
	}
	if err := run(d, r.op, kernels.IndiceAny, cp, kernels.IndiceCount{Orow: orowb, Rank: rankb, Orowq: orowq.raw(), Cnt: cnt.raw(), N: n,
		K: g.k, Chunk: plan.ChunkRows, Chunks: plan.Chunks, Gather: b2i(gather)}); err != nil {
		return nil, nil, err
	}
	if gather {
		// the records by sorted position are done with (the queue
		// finishes the gather first): the pairs may take their memory
		orow.Release()
		rank.Release()
	}
	return r.submEmit(outs, plan, orowq, cnt)
}

// submLines is submRows through the line table (plan.Lines): the table,
// then the search in key order into the records by sorted position,
// gathered to row order and counted by indice_count.
func (r *ipRun) submLines(outs *temps, plan indicePlan, params host.Buffer) (pairs, num *DeviceTensor, err error) {
	d, g := r.d, r.g
	n := g.l
	table, err := r.tmp.alloc(d, r.op, Uint32, plan.Lines+1)
	if err != nil {
		return nil, nil, err
	}
	// the table's tiles: entries per work-item as the rows' chunks
	chunk := plan.ChunkRows
	tiles := (plan.Lines + chunk) / chunk
	tp := plan.Plan
	tp.Reason = plan.String()
	tp.Tiles, tp.TileElems = tiles, chunk
	tp.Groups = host.FoldGroups((tiles+int64(tp.LocalSize)-1)/int64(tp.LocalSize), d.caps.MaxWorkGroupCount)
	if err := run(d, r.op, kernels.IndiceAny, tp, kernels.IndiceLines{Skeys: r.sites.keys.raw(), Params: params, Table: table.raw(),
		Nkeys: n, Lines: plan.Lines, Chunk: chunk, Tiles: tiles}); err != nil {
		return nil, nil, err
	}
	orowq, err := r.tmp.alloc(d, r.op, Int32, n*g.k)
	if err != nil {
		return nil, nil, err
	}
	lp := plan.Plan
	lp.Reason = plan.String()
	if err := run(d, r.op, kernels.IndiceAny, lp, kernels.IndiceTsearch{Params: params, Skeys: r.sites.keys.raw(),
		Sperm: r.sites.perm.raw(), Table: table.raw(), Orowq: orowq.raw(), N: n, Lines: plan.Lines,
		Chunk: chunk, Chunks: plan.Chunks}); err != nil {
		return nil, nil, err
	}
	table.Release()
	return r.submGather(outs, plan, nil, nil, orowq)
}

// submEmit scans the tiles' counts cnt and writes the pairs from the
// records by row orowq.
func (r *ipRun) submEmit(outs *temps, plan indicePlan, orowq, cnt *DeviceTensor) (pairs, num *DeviceTensor, err error) {
	d, g := r.d, r.g
	n := g.l
	s, err := d.scanBuf(r.op, Uint64, cnt.raw(), cnt.raw(), plan.Chunks*g.k+1, kernels.FlagNone, true)
	if err != nil {
		return nil, nil, err
	}
	s.release()
	if pairs, num, err = r.pairsOut(outs, n); err != nil {
		return nil, nil, err
	}
	ep := plan.Emit
	ep.Reason = plan.String()
	if err := run(d, r.op, kernels.IndiceAny, ep, kernels.IndiceEmit{Orowq: orowq.raw(), Cnt: cnt.raw(), Pairs: pairs.raw(), Num: num.raw(),
		Err: r.flag.raw(), N: n, K: g.k, Chunk: plan.ChunkRows, Chunks: plan.Chunks}); err != nil {
		return nil, nil, err
	}
	return pairs, num, nil
}

// expandLaunch queues indice_expand over n rows in the plan's launches:
// the candidates' flags into cnt (CONV/TCONV), or their found rows into
// orow (looked-up rules), or with ckey (CONV/TCONV, cnt scanned) the
// valid targets' keys into ckey[cnt[p]], or with grid (CONV/TCONV through
// the dense grid) the targets flagged there and, with orow, their keys.
func (r *ipRun) expandLaunch(rows host.Buffer, n int64, params host.Buffer, rule int64, cnt host.Buffer, wide int64,
	orow, rank host.Buffer, sorted bool, ckey, grid host.Buffer) error {
	d, g := r.d, r.g
	search := int64(0)
	if orow != nil && grid == nil {
		search = lookupSteps(g, r.plan.Table)
	}
	plan := planIndicePairs(d.caps, n, g.k, search, r.split)
	dense := int64(0) // the grid, and with orow the keys (1) or not (2)
	if grid != nil {
		dense = 2 - b2i(orow != nil)
	}
	var table, skeys, sperm host.Buffer
	t := r.plan.Table
	if r.table != nil {
		table = r.table.raw()
	} else {
		skeys, sperm = r.sites.keys.raw(), r.sites.perm.raw()
	}
	lp := plan.Plan
	lp.Reason = plan.String()
	for row0 := int64(0); row0 < n; row0 += plan.Rows {
		if err := run(d, r.op, kernels.IndiceAny, lp, kernels.IndiceExpand{Rows: rows, Params: params, Skeys: skeys,
			Sperm: sperm, Cnt: cnt, Orow: orow, Rank: rank, N: n, Nkeys: g.l, Row0: row0,
			RowsN: min(plan.Rows, n-row0), Jobs: plan.Jobs, Rule: rule, Split: int64(plan.Split), Wide: wide,
			Sorted: b2i(sorted), Ckey: ckey, Emit: b2i(ckey != nil), Grid: grid, Dense: dense,
			Table: table, Slots: t.Slots, Rb: t.RowBits, Probes: t.Probes, Hashed: b2i(r.table != nil)}); err != nil {
			return err
		}
	}
	return nil
}

// pairsOut allocates, in outs, the pairs ([K, 2, n] int32) and counts
// ([K] int32) of n query rows.
func (r *ipRun) pairsOut(outs *temps, n int64) (pairs, num *DeviceTensor, err error) {
	if pairs, err = outs.alloc(r.d, r.op, Int32, r.g.k, 2, n); err != nil {
		return nil, nil, err
	}
	if num, err = outs.alloc(r.d, r.op, Int32, r.g.k); err != nil {
		return nil, nil, err
	}
	return pairs, num, nil
}

// ipCursors is IP_CURSORS of indice_body.h: the offsets a core keeps
// cursors for.
const ipCursors = 128

// lookup runs a looked-up rule (submanifold, inverse) over n query rows:
// each candidate's found row, the found rows counted per tile of an
// offset's rows, the counts scanned, and the pairs written by tiles from
// the found rows (indice_tcount, indice_wpairs): the candidates' flags
// and positions are never written.
func (r *ipRun) lookup(outs *temps, rows host.Buffer, n int64, params host.Buffer, rule int64) (pairs, num *DeviceTensor, err error) {
	d, g := r.d, r.g
	if n == 0 {
		if pairs, num, err = r.pairsOut(outs, 0); err != nil {
			return nil, nil, err
		}
		if err := d.fill(num.raw(), 0, 4*g.k, []byte{0, 0, 0, 0}); err != nil {
			return nil, nil, fmt.Errorf("accel: %s: %w", r.op, err)
		}
		return pairs, num, nil
	}
	// each candidate's found row (by sorted position where the cores
	// walk the sites in key order: rank gives each row's)
	orow, err := r.tmp.alloc(d, r.op, Int32, n*g.k)
	if err != nil {
		return nil, nil, err
	}
	_, _, sorted := expandLayout(d.caps, g, n, rule, true, r.plan.Table, r.split)
	var rank *DeviceTensor
	var rankBuf host.Buffer
	lookup := int64(1)
	if sorted {
		if rank, err = r.tmp.alloc(d, r.op, Int32, n); err != nil {
			return nil, nil, err
		}
		rankBuf, lookup = rank.raw(), 2
	}
	if err := r.expandLaunch(rows, n, params, rule, nil, 0, orow.raw(), rankBuf, sorted, nil, nil); err != nil {
		return nil, nil, err
	}
	return r.tilePairs(outs, n, orow, rank, nil, lookup)
}

// tilePairs writes the pairs of n query rows by tiles of an offset's
// rows from each candidate's found row or target key in orow (lookup as
// indice_body.h's IP_LOOKUP; rank for 2, the scanned grid for 3): each
// tile's candidates with a target counted (indice_tcount), the counts
// scanned, and each tile's pairs written (indice_wpairs).
func (r *ipRun) tilePairs(outs *temps, n int64, orow, rank *DeviceTensor, grid *denseGrid, lookup int64) (pairs, num *DeviceTensor, err error) {
	d, g := r.d, r.g
	var rankBuf, gridBuf, growsBuf host.Buffer
	if rank != nil {
		rankBuf = rank.raw()
	}
	if grid != nil {
		gridBuf, growsBuf = grid.bits.raw(), grid.rows.raw()
	}
	tp := r.tilePlan(n)
	tcnt, err := r.tileCounts(tp.Tiles)
	if err != nil {
		return nil, nil, err
	}
	if err := run(d, r.op, kernels.IndiceAny, tp, kernels.IndiceTcount{Orow: orow.raw(), Rank: rankBuf, Tcnt: tcnt.raw(), N: n,
		Count: n * g.k, Lookup: lookup}); err != nil {
		return nil, nil, err
	}
	s, err := d.scanBuf(r.op, Uint64, tcnt.raw(), tcnt.raw(), tp.Tiles+1, kernels.FlagNone, true)
	if err != nil {
		return nil, nil, err
	}
	s.release()
	if pairs, num, err = r.pairsOut(outs, n); err != nil {
		return nil, nil, err
	}
	if err := run(d, r.op, kernels.IndiceAny, tp, kernels.IndiceWpairs{Orow: orow.raw(), Rank: rankBuf, Grid: gridBuf, Grows: growsBuf, Tcnt: tcnt.raw(),
		Pairs: pairs.raw(), Num: num.raw(), Err: r.flag.raw(), N: n, Count: n * g.k, Lookup: lookup}); err != nil {
		return nil, nil, err
	}
	return pairs, num, nil
}

// write queues a regular or transposed conv's pairs over n rows x K
// offsets from the candidates' positions pos and their output rows crow.
func (r *ipRun) write(outs *temps, pos host.Buffer, wide int64, crow *DeviceTensor, n int64) (pairs, num *DeviceTensor, err error) {
	d, g := r.d, r.g
	if pairs, num, err = r.pairsOut(outs, n); err != nil {
		return nil, nil, err
	}
	var cb host.Buffer
	if crow != nil {
		cb = crow.raw()
	}
	if err := run(d, r.op, kernels.IndiceAny, r.tilePlan(n), kernels.IndiceWrite{Pos: pos, Crow: cb, Pairs: pairs.raw(),
		Num: num.raw(), Err: r.flag.raw(), N: n, Count: n * g.k, Wide: wide}); err != nil {
		return nil, nil, err
	}
	return pairs, num, nil
}
