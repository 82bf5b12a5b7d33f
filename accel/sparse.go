package accel

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
	"github.com/accelkern/accel/reference"
)

// Sparse COO and CSR tensors on the device and Paddle's elementwise sparse
// ops (divide, add, subtract, multiply, and their gradients).
//
// Every entry is addressed inside an op by its key, the row-major linear
// index of its coordinates (int64). An operand is validated and keyed on
// the device (clkernels/common/sparse_body.h); an operand whose keys are
// not strictly ascending is coalesced (stable radix sort of the keys, runs
// of equal keys summed in input order by the in-order segmented
// reduction, so the bits are the scalar reference's on every device).
// Two coalesced operands merge by a merge path (each work-item finds its
// split of the merged sequence by binary search, so long and empty rows
// balance), a scan of the merged keys' run starts numbers the union
// entries, and one pass writes each union entry's coordinates and value.

// SparseOp is an elementwise op of two sparse tensors.
type SparseOp int

// The elementwise sparse ops (Paddle's paddle.sparse.add, subtract,
// multiply and divide).
const (
	SparseAddOp SparseOp = iota
	SparseSubOp
	SparseMulOp
	SparseDivOp
)

// String returns the op's name: add, sub, mul or div.
func (o SparseOp) String() string {
	if o >= SparseAddOp && o <= SparseDivOp {
		return reference.SparseOpNames[o]
	}
	return fmt.Sprintf("SparseOp(%d)", int(o))
}

// SparseCOO is a sparse tensor of any rank >= 1 in coordinate form on a
// device: Indices [ndim, nnz] (int64, or int32 on input) and Values [nnz]
// (float32 or float64). Entries may be unsorted and duplicated (they add
// up); Coalesced records that they are sorted lexicographically without
// duplicates, as every op's result is, so that the next op skips the work.
type SparseCOO struct {
	Indices   *DeviceTensor
	Values    *DeviceTensor
	Shape     []int64
	Coalesced bool
}

// Nnz returns the number of stored entries.
func (s *SparseCOO) Nnz() int64 { return s.Values.Len() }

// Release releases the tensor's arrays.
func (s *SparseCOO) Release() {
	if s != nil {
		s.Indices.Release()
		s.Values.Release()
	}
}

// SparseCSR is a 2-D [rows, cols] or batched 3-D [batch, rows, cols]
// sparse tensor in compressed-row form on a device (Paddle's layout):
// Crows holds batch*(rows+1) row pointers, each batch's restarting at 0;
// Cols and Values hold the batches' entries in order. Columns may be
// unsorted or duplicated within a row (they add up); Coalesced records that
// every row's columns are sorted and unique, as every op's result's are.
type SparseCSR struct {
	Crows     *DeviceTensor
	Cols      *DeviceTensor
	Values    *DeviceTensor
	Shape     []int64
	Coalesced bool
}

// Nnz returns the number of stored entries.
func (s *SparseCSR) Nnz() int64 { return s.Values.Len() }

// Release releases the tensor's arrays.
func (s *SparseCSR) Release() {
	if s != nil {
		s.Crows.Release()
		s.Cols.Release()
		s.Values.Release()
	}
}

// HostCOO is a COO tensor on the host (see SparseCOO).
type HostCOO struct {
	Indices *Tensor
	Values  *Tensor
	Shape   []int64
}

// HostCSR is a CSR tensor on the host (see SparseCSR).
type HostCSR struct {
	Crows  *Tensor
	Cols   *Tensor
	Values *Tensor
	Shape  []int64
}

// spArrays are a sparse tensor's arrays and shape, whichever its format
// and side, for the structural checks.
type spArrays struct {
	csr                   bool
	shape                 []int64
	index, crows          DType // indices (COO) or cols (CSR); crows
	indexShape, crowShape []int64
	values                DType
	valueShape            []int64
}

func cooArrays(idx, val *DeviceTensor, shape []int64) spArrays {
	return spArrays{shape: shape, index: idx.dtype, indexShape: idx.shape, values: val.dtype, valueShape: val.shape}
}

func csrArrays(crows, cols, val *DeviceTensor, shape []int64) spArrays {
	return spArrays{csr: true, shape: shape, index: cols.dtype, indexShape: cols.shape, crows: crows.dtype,
		crowShape: crows.shape, values: val.dtype, valueShape: val.shape}
}

// checkSparse checks a sparse tensor's structure (not its entries): the
// shape, the arrays' dtypes and lengths. arg names it (x, y, ...).
func checkSparse(op, arg string, a spArrays, fp64 bool) error {
	if len(a.shape) == 0 {
		return argErr(op, arg+".shape", "[]", "of rank >= 1", ErrInvalidArgument)
	}
	if a.csr && len(a.shape) != 2 && len(a.shape) != 3 {
		return argErr(op, arg+".shape", fmt.Sprint(a.shape), "of rank 2 or 3 (CSR)", ErrInvalidArgument)
	}
	for i, s := range a.shape {
		if s < 0 {
			return argErr(op, fmt.Sprintf("%s.shape[%d]", arg, i), s, ">= 0", ErrInvalidArgument)
		}
	}
	if _, ok := reference.SparseSize(a.shape); !ok {
		return argErr(op, arg+".shape", fmt.Sprint(a.shape), "of at most 2^63-1 elements", ErrTooLarge)
	}
	switch a.values {
	case Float32:
	case Float64:
		if !fp64 {
			return argErr(op, arg+".values", "dtype float64", "float32 (the device has no float64)", ErrUnsupported)
		}
	default:
		return argErr(op, arg+".values", "dtype "+a.values.String(), "float32 or float64", ErrUnsupported)
	}
	if len(a.valueShape) != 1 {
		return argErr(op, arg+".values", fmt.Sprintf("shape %v", a.valueShape), "1-D [nnz]", ErrInvalidArgument)
	}
	nnz := a.valueShape[0]
	name := arg + ".indices"
	if a.csr {
		name = arg + ".cols"
	}
	if a.index != Int32 && a.index != Int64 {
		return argErr(op, name, "dtype "+a.index.String(), "int32 or int64", ErrInvalidArgument)
	}
	if !a.csr {
		want := []int64{int64(len(a.shape)), nnz}
		if !slices.Equal(a.indexShape, want) {
			return argErr(op, name, fmt.Sprintf("shape %v", a.indexShape), fmt.Sprintf("[ndim, nnz] = %v (values hold %d entries)", want, nnz), ErrInvalidArgument)
		}
		return nil
	}
	if len(a.indexShape) != 1 || a.indexShape[0] != nnz {
		return argErr(op, name, fmt.Sprintf("shape %v", a.indexShape), fmt.Sprintf("[nnz] = [%d] (values hold %d entries)", nnz, nnz), ErrInvalidArgument)
	}
	if a.crows != Int32 && a.crows != Int64 {
		return argErr(op, arg+".crows", "dtype "+a.crows.String(), "int32 or int64", ErrInvalidArgument)
	}
	b, r, _ := reference.CSRDims(a.shape)
	if n, _ := NumElements(a.crowShape); n != b*(r+1) {
		return argErr(op, arg+".crows", fmt.Sprintf("shape %v", a.crowShape), fmt.Sprintf("of batch*(rows+1) = %d elements", b*(r+1)), ErrInvalidArgument)
	}
	return nil
}

// checkPair checks that y matches x: format (the caller's), shape and value
// dtype.
func checkPair(op string, x, y spArrays) error {
	if !slices.Equal(x.shape, y.shape) {
		return argErr(op, "y.shape", fmt.Sprint(y.shape), fmt.Sprintf("x's shape %v", x.shape), ErrInvalidArgument)
	}
	if x.values != y.values {
		return argErr(op, "y.values", "dtype "+y.values.String(), "x's value dtype "+x.values.String(), ErrInvalidArgument)
	}
	return nil
}

func (d *Device) checkCOO(op, arg string, s *SparseCOO) (spArrays, error) {
	if s == nil {
		return spArrays{}, argErr(op, arg, "nil", "a sparse tensor", ErrInvalidArgument)
	}
	if err := d.checkIn(op, arg+".indices", s.Indices); err != nil {
		return spArrays{}, err
	}
	if err := d.checkIn(op, arg+".values", s.Values); err != nil {
		return spArrays{}, err
	}
	a := cooArrays(s.Indices, s.Values, s.Shape)
	return a, checkSparse(op, arg, a, d.caps.FP64)
}

func (d *Device) checkCSR(op, arg string, s *SparseCSR) (spArrays, error) {
	if s == nil {
		return spArrays{}, argErr(op, arg, "nil", "a sparse tensor", ErrInvalidArgument)
	}
	for _, t := range []struct {
		name string
		t    *DeviceTensor
	}{{".crows", s.Crows}, {".cols", s.Cols}, {".values", s.Values}} {
		if err := d.checkIn(op, arg+t.name, t.t); err != nil {
			return spArrays{}, err
		}
	}
	a := csrArrays(s.Crows, s.Cols, s.Values, s.Shape)
	return a, checkSparse(op, arg, a, d.caps.FP64)
}

// spOperand is a sparse tensor inside an op: its keys and values, and
// whether the keys are known strictly ascending.
type spOperand struct {
	arg    string
	coo    *SparseCOO
	csr    *SparseCSR
	keys   *DeviceTensor // int64 [nnz]
	vals   host.Buffer
	n      int64
	sorted bool
}

func (o *spOperand) shape() []int64 {
	if o.csr != nil {
		return o.csr.Shape
	}
	return o.coo.Shape
}

func (o *spOperand) dtype() DType {
	if o.csr != nil {
		return o.csr.Values.dtype
	}
	return o.coo.Values.dtype
}

// spFlagSlot is the flag word of operand i's unsorted mark.
func spFlagSlot(i int) int64 { return kernels.SpFlagXUnsorted + int64(i) }

// newSparseFlag allocates the sparse ops' flag words: the validation flag,
// the unfinished-run word and the unsorted marks.
func (d *Device) newSparseFlag(op string, tmp *temps) (*DeviceTensor, error) {
	f, err := d.newFlagWords(op, kernels.SpFlagWords)
	if err != nil {
		return nil, err
	}
	return tmp.add(f), nil
}

// readSparseFlag reads the flag words (one wait).
func (d *Device) readSparseFlag(op string, flag *DeviceTensor) ([]uint32, error) {
	return d.readFlagWords(op, flag, kernels.SpFlagWords)
}

// uploadInt64s uploads a small int64 array (shapes).
func (d *Device) uploadInt64s(op string, tmp *temps, v []int64) (*DeviceTensor, error) {
	t, err := tmp.alloc(d, op, Int64, int64(len(v)))
	if err != nil || len(v) == 0 {
		return t, err
	}
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	if err := d.h.Upload(t.raw(), 0, b); err != nil {
		return nil, fmt.Errorf("accel: %s: %w", op, err)
	}
	return t, nil
}

func wide(dt DType) int64 { return b2i(dt == Int64) }

// keyOperand queues the keys of an operand and its validation into
// flag[0]; with check (and unless known coalesced), its sortedness check
// into flag[slot] (binary ops check the order in their merge instead).
func (d *Device) keyOperand(op string, o *spOperand, slot int64, flag *DeviceTensor, tmp *temps, check bool) error {
	var err error
	if o.keys, err = tmp.alloc(d, op, Int64, o.n); err != nil {
		return err
	}
	shape := o.shape()
	if o.coo != nil {
		o.vals, o.sorted = o.coo.Values.raw(), o.coo.Coalesced
		sh, err := d.uploadInt64s(op, tmp, shape)
		if err != nil {
			return err
		}
		if o.n > 0 {
			if err := run(d, op, kernels.SparseF32, d.elementwise(op, o.n), kernels.SparseCooKeys{Indices: o.coo.Indices.raw(), Keys: o.keys.raw(),
				Err: flag.raw(), Shape: sh.raw(), Ndim: int64(len(shape)), Nnz: o.n, Wide: wide(o.coo.Indices.dtype)}); err != nil {
				return err
			}
		}
	} else {
		c := o.csr
		o.vals, o.sorted = c.Values.raw(), c.Coalesced
		b, r, cols := reference.CSRDims(shape)
		gptr, err := d.csrPtrs(op, o, flag, tmp)
		if err != nil {
			return err
		}
		if o.n > 0 {
			if err := d.rowMerge(op, 0, gptr, c.Cols.raw(), o.keys, gptr, flag, b*r, cols, o.n, wide(c.Cols.dtype)); err != nil {
				return err
			}
		}
	}
	if check && !o.sorted && o.n > 1 {
		return run(d, op, kernels.SparseF32, d.elementwise(op, o.n), kernels.SparseSorted{Keys: o.keys.raw(), Err: flag.raw(), N: o.n, Slot: slot})
	}
	return nil
}

// csrPtrs queues a CSR operand's global row pointers (int64 [B*R+1], the
// batches' pointers offset by the entries before them) and their
// validation into flag[0].
func (d *Device) csrPtrs(op string, o *spOperand, flag *DeviceTensor, tmp *temps) (*DeviceTensor, error) {
	c := o.csr
	b, r, _ := reference.CSRDims(c.Shape)
	w := wide(c.Crows.dtype)
	gptr, err := tmp.alloc(d, op, Int64, b*r+1)
	if err != nil {
		return nil, err
	}
	off, hasOff := c.Crows.raw(), false // a buffer the kernel may read
	if b > 1 {
		tot, err := tmp.alloc(d, op, Int64, b)
		if err == nil {
			err = run(d, op, kernels.SparseF32, d.elementwise(op, b), kernels.SparseCsrTotals{Crow: c.Crows.raw(), Tot: tot.raw(), Batch: b, Rows: r, Wide: w})
		}
		if err != nil {
			return nil, err
		}
		s, err := d.scanBuf(op, Int64, tot.raw(), tot.raw(), b, kernels.FlagNone, true)
		if err != nil {
			return nil, err
		}
		s.release()
		off, hasOff = tot.raw(), true
	}
	if b*(r+1) == 0 {
		if err := d.fill(gptr.raw(), 0, 8, []byte{0}); err != nil {
			return nil, fmt.Errorf("accel: %s: %w", op, err)
		}
	} else if err := run(d, op, kernels.SparseF32, d.elementwise(op, b*(r+1)), kernels.SparseCsrPtrs{Crow: c.Crows.raw(), Off: off, Gptr: gptr.raw(),
		Err: flag.raw(), Batch: b, Rows: r, Nnz: o.n, Wide: w, HasOff: b2i(hasOff)}); err != nil {
		return nil, err
	}
	return gptr, nil
}

// spChunk is how many merged positions (or rows and entries) a work-item
// of a merge path walks: 512 on CPU drivers (a core takes few long
// walks); 16 under a loop limit, which each invocation's ITEMS chunks
// must stay under; 32 on GPUs, whose hundreds of thousands of lanes each
// take one short walk after their search (chunkPlan). A union of 10M
// positions is then 312k walks; with 512 it was 19.5k, four a work-item:
// 19 work-groups on an H200's 132 multiprocessors, and csr200k_5M's
// sparse_div took 9.1 ms on its OpenCL, 14.3 on its Vulkan.
// $ACCEL_KNOBS' sparse_plan:CHUNK=N sets it.
func (d *Device) spChunk() int64 {
	if v, ok := d.knobValue("sparse_plan", "CHUNK"); ok && v > 0 {
		return v
	}
	return sparseChunk(d.caps)
}

// sparseChunk is spChunk on caps, without overrides.
func sparseChunk(caps host.Caps) int64 {
	switch {
	case caps.LoopLimit > 0:
		return 16
	case caps.Type != host.TypeCPU:
		return 32
	}
	return 512
}

// chunkPlan is the plan of a merge path over chunks of spChunk positions,
// each costing about cost loop iterations: the elementwise plan with few
// chunks per work-item, so that the chunks spread over every core (and,
// under a loop limit, an invocation's iterations stay well under it); on
// GPUs one chunk a work-item, so that every lane walks one
// ($ACCEL_KNOBS' sparse_plan:ITEMS=N sets the chunks a work-item).
func (d *Device) chunkPlan(op string, chunks, cost int64) host.Plan {
	p := host.PlanElementwise(op, d.caps, chunks)
	items := int64(4)
	if d.caps.Type != host.TypeCPU {
		items = 1
	}
	if v, ok := d.knobValue("sparse_plan", "ITEMS"); ok && v > 0 {
		items = v
	}
	if d.caps.LoopLimit > 0 {
		items = 1
		for items*2*cost <= d.caps.LoopLimit/4 {
			items *= 2
		}
	}
	for i := range p.Knobs {
		if p.Knobs[i].Name == "ITEMS" {
			p.Knobs[i].Value = items
		}
	}
	p.TileElems = int64(p.LocalSize) * items
	p.Tiles = (chunks + p.TileElems - 1) / p.TileElems
	groups := p.Tiles
	if limit := int64(max(d.caps.ComputeUnits, 1)) * 32; groups > limit && d.caps.LoopLimit == 0 {
		groups = limit
	}
	p.Groups = host.FoldGroups(max(groups, 1), d.caps.MaxWorkGroupCount)
	return d.plan(p)
}

// rowMerge queues a merge path of G rows with n entries (mode 0: the keys
// of CSR entries from the global row pointers gptr and the columns; mode
// 1: the global row starts gstart of sorted keys).
func (d *Device) rowMerge(op string, mode int64, gptr *DeviceTensor, cols host.Buffer, keys, gstart, flag *DeviceTensor,
	grows, colsN, n, wideIdx int64) error {
	chunk := d.spChunk()
	total := grows + n + mode
	return run(d, op, kernels.SparseF32, d.chunkPlan(op, (total+chunk-1)/chunk, 2*chunk+64), kernels.SparseRowmerge{Gptr: gptr.raw(), Cols: cols,
		Keys: keys.raw(), Gstart: gstart.raw(), Err: flag.raw(), Grows: grows, ColsN: colsN, N: n, Chunk: chunk, Wide: wideIdx, Mode: mode})
}

// prepare keys, validates and coalesces the operands: on return each
// operand's keys are strictly ascending with its values beside them. It
// waits once for the flags, and once more for each operand that needs
// coalescing. flag's word 0 is ERR_NONE on success.
func (d *Device) prepare(op string, ops []*spOperand, tmp *temps) (*DeviceTensor, error) {
	flag, err := d.newSparseFlag(op, tmp)
	if err != nil {
		return nil, err
	}
	for i, o := range ops {
		if err := d.keyOperand(op, o, spFlagSlot(i), flag, tmp, true); err != nil {
			return nil, err
		}
	}
	if err := d.flush(op); err != nil {
		return nil, err
	}
	w, err := d.readSparseFlag(op, flag)
	if err != nil {
		return nil, err
	}
	if flagged(w) {
		return nil, d.sparseBadEntry(op, ops)
	}
	for i, o := range ops {
		o.sorted = o.sorted || o.n <= 1 || w[spFlagSlot(i)] == 0
		if !o.sorted {
			if err := d.coalesceOperand(op, o, flag, tmp); err != nil {
				return nil, err
			}
		}
	}
	return flag, nil
}

// coalesceOperand sorts an operand's keys (stable) and sums the values of
// equal keys in input order (one wait, for the count of distinct keys).
func (d *Device) coalesceOperand(op string, o *spOperand, flag *DeviceTensor, tmp *temps) error {
	size, _ := reference.SparseSize(o.shape())
	cp := d.planner.coalesce(d.caps, o.n, keyBitsFor(size))
	d.report(op, "coalesce", cp)
	if cp.Strategy == coalesceByBuckets {
		return d.coalesceBuckets(op, o, cp, keyBitsFor(size), flag, tmp)
	}
	res, err := d.radixSort(op, o.keys.raw(), o.n, 8, kernels.KindUnsigned, false, keyBitsFor(size), nil, 0)
	if err != nil {
		return err
	}
	tmp.add(res.keys)
	tmp.add(res.perm)
	seg, err := tmp.alloc(d, op, Int64, o.n)
	if err != nil {
		return err
	}
	s, err := d.scanBuf(op, Int64, res.keys.raw(), seg.raw(), o.n, kernels.FlagHead64, false)
	if err != nil {
		return err
	}
	defer s.release()
	if err := d.flush(op); err != nil {
		return err
	}
	u64, err := s.total(op)
	if err != nil {
		return err
	}
	u := int64(u64)
	dt := o.dtype()
	ukeys, err := tmp.alloc(d, op, Int64, u)
	if err != nil {
		return err
	}
	uvals, err := tmp.alloc(d, op, dt, u)
	if err != nil {
		return err
	}
	if err := run(d, op, kernels.SparseF32, d.elementwise(op, o.n), kernels.SparseRuns{Keys: res.keys.raw(), Seg: seg.raw(), Rid: seg.raw(),
		Ukeys: ukeys.raw(), N: o.n}); err != nil {
		return err
	}
	// sums start from -0, the identity of IEEE addition, so that a single
	// -0 stays -0 as in the reference
	if err := d.fill(uvals.raw(), 0, u*int64(dt.Size()), negZero(dt)); err != nil {
		return fmt.Errorf("accel: %s: %w", op, err)
	}
	if err := d.segmentRun(op, dt, uvals.raw(), o.vals, seg.raw(), res.perm.raw(), o.n, Sum, true, flag); err != nil {
		return err
	}
	o.keys, o.vals, o.n, o.sorted = ukeys, uvals.raw(), u, true
	return nil
}

func negZero(dt DType) []byte {
	if dt == Float64 {
		return []byte{0, 0, 0, 0, 0, 0, 0, 0x80}
	}
	return []byte{0, 0, 0, 0x80}
}

// sparseBadEntry downloads the operands and names the first bad entry
// (after the device flagged one).
func (d *Device) sparseBadEntry(op string, ops []*spOperand) error {
	for _, o := range ops {
		var bad *reference.SparseBad
		if o.coo != nil {
			h, err := o.coo.Indices.ToHost()
			if err != nil {
				return err
			}
			bad = reference.ValidateCOO(o.coo.Shape, int64sOf(h), o.n)
		} else {
			cr, err := o.csr.Crows.ToHost()
			if err != nil {
				return err
			}
			cols, err := o.csr.Cols.ToHost()
			if err != nil {
				return err
			}
			bad = reference.ValidateCSR(o.csr.Shape, int64sOf(cr), int64sOf(cols))
		}
		if bad != nil {
			return argErr(op, o.arg+"."+bad.Arg, bad.Value, bad.Bound, ErrInvalidArgument)
		}
	}
	return fmt.Errorf("accel: %s: the device flagged a sparse entry but none is bad: %w", op, host.ErrDriver)
}

// int64sOf returns an int32 or int64 tensor's elements as int64s.
func int64sOf(t *Tensor) []int64 {
	if t.dtype == Int64 {
		return t.Int64s()
	}
	v := t.Int32s()
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// spResult is the union of two prepared operands.
type spResult struct {
	keys   *DeviceTensor // int64 [u], ascending (merge path)
	gstart *DeviceTensor // int64 [G+1], where each global row starts (rows plan)
	idx    *DeviceTensor // [ndim, u] coordinates (COO) or [u] columns (CSR)
	vals   *DeviceTensor
	gx     *DeviceTensor
	gy     *DeviceTensor
	u      int64
}

// spAlloc allocates an output (or returns a reusable one).
type spAlloc func(name string, dt DType, shape ...int64) (*DeviceTensor, error)

// binary is the union of two operands on the plan planSparse picks
// (see sparse_rows.go for the CPU-shaped one). On the merge path it keys
// and validates two operands and counts their union by a
// merge path, which also checks that each operand's keys ascend; it waits
// once for the flags and the count, and where an operand turns out
// unsorted, coalesces it (a wait for its count) and counts again (one
// more). Then it queues the result's keys, coordinates (only the columns
// with cols), values and, with gradOut, the gradients.
func (d *Device) binary(op string, sop SparseOp, x, y *spOperand, cols bool, gradOut *DeviceTensor, alloc spAlloc, tmp *temps) (spResult, error) {
	g := int64(1)
	if x.csr != nil {
		b, rows, _ := reference.CSRDims(x.csr.Shape)
		g = b * rows
	}
	if up, kb := d.bucketEligible(x, y); up.Strategy == unionByBuckets {
		d.report(op, "union", up)
		return d.bucketBinary(op, sop, x, y, up, kb, gradOut, alloc, tmp)
	}
	sp := d.planner.sparse(d.caps, x.n+y.n+g)
	if sp.Strategy == sparseByRows {
		d.report(op, "sparse", sp)
		return d.rowBinary(op, sop, x, y, cols, gradOut, alloc, tmp)
	}
	return d.mergeBinary(op, sp, sop, x, y, cols, gradOut, alloc, tmp)
}

// mergeBinary is binary on the sparseByMergePath plan sp, which it
// reports with its traffic model once the union's size is known.
func (d *Device) mergeBinary(op string, sp sparsePlan, sop SparseOp, x, y *spOperand, cols bool, gradOut *DeviceTensor, alloc spAlloc,
	tmp *temps) (spResult, error) {
	var r spResult
	flag, err := d.newSparseFlag(op, tmp)
	if err != nil {
		return r, err
	}
	for i, o := range []*spOperand{x, y} {
		if err := d.keyOperand(op, o, spFlagSlot(i), flag, tmp, false); err != nil {
			return r, err
		}
	}
	off, w, err := d.countUnion(op, x, y, flag, tmp)
	if err != nil {
		return r, err
	}
	if flagged(w) {
		return r, d.sparseBadEntry(op, []*spOperand{x, y})
	}
	if w[spFlagSlot(0)] != 0 || w[spFlagSlot(1)] != 0 {
		for i, o := range []*spOperand{x, y} {
			if w[spFlagSlot(i)] != 0 {
				if err := d.coalesceOperand(op, o, flag, tmp); err != nil {
					return r, err
				}
			}
		}
		if off, w, err = d.countUnion(op, x, y, flag, tmp); err != nil {
			return r, err
		}
	}
	r.u = int64(w[kernels.SpFlagTotal]) | int64(w[kernels.SpFlagTotal+1])<<32
	if _, ok := d.knobs["sparse_plan"]; ok {
		sp.Reason += fmt.Sprintf(" [ACCEL_KNOBS: chunks of %d]", d.spChunk())
	}
	if d.reporting() {
		s := d.sparseShapeOf(x, y, r.u, gradOut != nil)
		d.reportModel(op, "sparse", sp, func() traffic { return sparseMergeTraffic(d.caps, s) }, sparseMinBytes(s))
	}
	return r, d.emitUnion(op, sop, x, y, off, cols, gradOut, alloc, tmp, &r)
}

// sparseShapeOf is the model's view of a union of x and y into u entries
// (coalescing an operand on the way is left out: the model is the merge
// of coalesced operands).
func (d *Device) sparseShapeOf(x, y *spOperand, u int64, grad bool) sparseShape {
	s := sparseShape{nx: x.n, ny: y.n, u: u, valBytes: int64(x.dtype().Size()), chunk: d.spChunk(), grad: grad}
	if x.csr != nil {
		b, r, _ := reference.CSRDims(x.csr.Shape)
		s.csr, s.rows, s.idxBytes = true, b*r, int64(x.csr.Cols.dtype.Size())
	} else {
		s.ndim, s.idxBytes = int64(len(x.coo.Shape)), int64(x.coo.Indices.dtype.Size())
	}
	return s
}

// countUnion queues the merge path's count of union entries per chunk
// and its exclusive scan, whose total it copies into the flag words, and
// reads the flag words (one wait).
func (d *Device) countUnion(op string, x, y *spOperand, flag *DeviceTensor, tmp *temps) (*DeviceTensor, []uint32, error) {
	for _, o := range []*spOperand{x, y} {
		if err := d.nonEmpty(op, o, tmp); err != nil {
			return nil, nil, err
		}
	}
	chunk := d.spChunk()
	n := x.n + y.n
	chunks := (n + chunk - 1) / chunk
	off, err := tmp.alloc(d, op, Int64, chunks)
	if err != nil {
		return nil, nil, err
	}
	if n > 0 {
		if err := run(d, op, kernels.SparseF32, d.chunkPlan(op, chunks, 2*chunk+64), kernels.SparseCount{Kx: x.keys.raw(), Ky: y.keys.raw(), Cnt: off.raw(),
			Err: flag.raw(), Nx: x.n, Ny: y.n, Chunk: chunk}); err != nil {
			return nil, nil, err
		}
	}
	w, err := d.scanCounts(op, off, chunks, flag)
	return off, w, err
}

// scanCounts queues the exclusive scan of n per-chunk counts in off (in
// place), copies its total into the flag words and reads them (one wait).
func (d *Device) scanCounts(op string, off *DeviceTensor, n int64, flag *DeviceTensor) ([]uint32, error) {
	if n > 0 {
		s, err := d.scanBuf(op, Int64, off.raw(), off.raw(), n, kernels.FlagNone, true)
		if err != nil {
			return nil, err
		}
		err = s.copyTotal(op, flag.raw(), 4*kernels.SpFlagTotal)
		s.release()
		if err != nil {
			return nil, err
		}
	}
	if err := d.flush(op); err != nil {
		return nil, err
	}
	return d.readSparseFlag(op, flag)
}

// emitUnion allocates the result and queues its entries.
func (d *Device) emitUnion(op string, sop SparseOp, x, y *spOperand, off *DeviceTensor, cols bool, gradOut *DeviceTensor,
	alloc spAlloc, tmp *temps, r *spResult) error {
	shape := x.shape()
	ndim := len(shape)
	if cols {
		ndim = 1
	}
	dt := x.dtype()
	if err := d.allocResult(op, dt, ndim, cols, gradOut, alloc, r); err != nil {
		return err
	}
	sh, err := d.uploadInt64s(op, tmp, shape[len(shape)-ndim:])
	if err != nil {
		return err
	}
	if r.keys, err = tmp.alloc(d, op, Int64, r.u); err != nil {
		return err
	}
	var g, gx, gy host.Buffer
	if gradOut != nil {
		g, gx, gy = gradOut.raw(), r.gx.raw(), r.gy.raw()
	}
	if r.u == 0 {
		return nil
	}
	chunk := d.spChunk()
	chunks := (x.n + y.n + chunk - 1) / chunk
	return d.launch(op, dtVariant(dt), d.chunkPlan(op, chunks, int64(3+ndim)*chunk+64), kernels.SparseEmit{Kx: x.keys.raw(), Ky: y.keys.raw(), Off: off.raw(),
		Xv: x.vals, Yv: y.vals, Gout: g, Ukeys: r.keys.raw(), Uidx: r.idx.raw(), Uval: r.vals.raw(), Gx: gx, Gy: gy,
		Shape: sh.raw(), Ndim: int64(ndim), Nx: x.n, Ny: y.n, U: r.u, Chunk: chunk, Op: int64(sop), Grad: b2i(gradOut != nil)})
}

// allocResult checks gradOut against the union's size r.u and allocates
// the result's coordinates ([ndim, u], or [u] columns with cols), values
// and, with gradOut, gradients.
func (d *Device) allocResult(op string, dt DType, ndim int, cols bool, gradOut *DeviceTensor, alloc spAlloc, r *spResult) error {
	if gradOut != nil && gradOut.n != r.u {
		return argErr(op, "grad_out", fmt.Sprintf("%d values", gradOut.n), fmt.Sprintf("the result's %d entries (its union pattern)", r.u), ErrInvalidArgument)
	}
	idxShape := []int64{int64(ndim), r.u}
	if cols {
		idxShape = idxShape[1:]
	}
	var err error
	if r.idx, err = alloc("indices", Int64, idxShape...); err != nil {
		return err
	}
	if r.vals, err = alloc("values", dt, r.u); err != nil {
		return err
	}
	if gradOut != nil {
		if r.gx, err = alloc("grad_x", dt, r.u); err != nil {
			return err
		}
		if r.gy, err = alloc("grad_y", dt, r.u); err != nil {
			return err
		}
	}
	return nil
}

// crowsOf queues the row pointers of a CSR shape's union: from its row
// starts (rows plan), else from its sorted unique keys.
func (d *Device) crowsOf(op string, u spResult, shape []int64, crows *DeviceTensor, tmp *temps) error {
	b, r, c := reference.CSRDims(shape)
	if b*(r+1) == 0 {
		return nil
	}
	gstart, keys, n := u.gstart, u.keys, u.u
	var err error
	if gstart != nil {
		return run(d, op, kernels.SparseF32, d.elementwise(op, b*(r+1)), kernels.SparseCrows{Gstart: gstart.raw(), Crow: crows.raw(), Batch: b, Rows: r})
	}
	if gstart, err = tmp.alloc(d, op, Int64, b*r+1); err != nil {
		return err
	}
	if n == 0 {
		err = d.fill(gstart.raw(), 0, (b*r+1)*8, []byte{0})
	} else {
		err = d.rowMerge(op, 1, gstart, nil, keys, gstart, gstart, b*r, c, n, 1)
	}
	if err != nil {
		return err
	}
	return run(d, op, kernels.SparseF32, d.elementwise(op, b*(r+1)), kernels.SparseCrows{Gstart: gstart.raw(), Crow: crows.raw(), Batch: b, Rows: r})
}

// crowShape is the shape of a CSR shape's row pointers: [rows+1] or
// [batch, rows+1].
func crowShape(shape []int64) []int64 {
	if len(shape) == 3 {
		return []int64{shape[0], shape[1] + 1}
	}
	return []int64{shape[0] + 1}
}

// newAlloc allocates fresh outputs, released together on failure.
func newAlloc(d *Device, op string, outs *temps) spAlloc {
	return func(_ string, dt DType, shape ...int64) (*DeviceTensor, error) {
		return outs.alloc(d, op, dt, shape...)
	}
}

// reuseAlloc hands out the tensors of dst (by name) where they have the
// wanted dtype and shape, and fresh ones elsewhere.
func reuseAlloc(d *Device, op string, outs *temps, dst map[string]*DeviceTensor) spAlloc {
	return func(name string, dt DType, shape ...int64) (*DeviceTensor, error) {
		if t := dst[name]; t != nil && t.buf != nil && t.dev == d && t.dtype == dt && slices.Equal(t.shape, shape) {
			return t, nil
		}
		return outs.alloc(d, op, dt, shape...)
	}
}

func cooOperands(x, y *SparseCOO) []*spOperand {
	return []*spOperand{{arg: "x", coo: x, n: x.Values.Len()}, {arg: "y", coo: y, n: y.Values.Len()}}
}

func csrOperands(x, y *SparseCSR) []*spOperand {
	return []*spOperand{{arg: "x", csr: x, n: x.Values.Len()}, {arg: "y", csr: y, n: y.Values.Len()}}
}

func sparseOpName(sop SparseOp, backward bool) string {
	name := "sparse_" + sop.String()
	if backward {
		name += "_backward"
	}
	return name
}

func checkSparseOp(op string, sop SparseOp) error {
	if sop < SparseAddOp || sop > SparseDivOp {
		return argErr(op, "op", int(sop), "SparseAddOp, SparseSubOp, SparseMulOp or SparseDivOp", ErrInvalidArgument)
	}
	return nil
}

// binaryCOO is SparseBinary and its Into and backward forms.
func (d *Device) binaryCOO(sop SparseOp, x, y *SparseCOO, gradOut *DeviceTensor, alloc func(*temps) spAlloc) (*SparseCOO, spResult, error) {
	op := sparseOpName(sop, gradOut != nil)
	check := func(arg string) (spArrays, error) {
		return d.checkCOO(op, arg, map[string]*SparseCOO{"x": x, "y": y}[arg])
	}
	if err := d.checkBinary(op, sop, check, gradOut); err != nil {
		return nil, spResult{}, err
	}
	var tmp, outs temps
	defer tmp.release()
	ops := cooOperands(x, y)
	r, err := d.binary(op, sop, ops[0], ops[1], false, gradOut, alloc(&outs), &tmp)
	if err == nil {
		err = d.flush(op)
	}
	if err != nil {
		outs.release()
		return nil, spResult{}, err
	}
	return &SparseCOO{Indices: r.idx, Values: r.vals, Shape: slices.Clone(x.Shape), Coalesced: true}, r, nil
}

// checkBinary checks a binary op's arguments on the host: the op, each
// operand's structure (check), that they match, and gradOut.
func (d *Device) checkBinary(op string, sop SparseOp, check func(arg string) (spArrays, error), gradOut *DeviceTensor) error {
	if err := checkSparseOp(op, sop); err != nil {
		return err
	}
	xa, err := check("x")
	if err != nil {
		return err
	}
	ya, err := check("y")
	if err != nil {
		return err
	}
	if err := checkPair(op, xa, ya); err != nil {
		return err
	}
	return d.checkGradOut(op, gradOut, xa.values)
}

func (d *Device) checkGradOut(op string, g *DeviceTensor, dt DType) error {
	if g == nil {
		return nil
	}
	if err := d.checkIn(op, "grad_out", g); err != nil {
		return err
	}
	if g.dtype != dt {
		return argErr(op, "grad_out", "dtype "+g.dtype.String(), "the values' dtype "+dt.String(), ErrInvalidArgument)
	}
	return nil
}

// binaryCSR is SparseBinaryCSR and its Into and backward forms.
func (d *Device) binaryCSR(sop SparseOp, x, y *SparseCSR, gradOut *DeviceTensor, alloc func(*temps) spAlloc) (*SparseCSR, spResult, error) {
	op := sparseOpName(sop, gradOut != nil)
	check := func(arg string) (spArrays, error) {
		return d.checkCSR(op, arg, map[string]*SparseCSR{"x": x, "y": y}[arg])
	}
	if err := d.checkBinary(op, sop, check, gradOut); err != nil {
		return nil, spResult{}, err
	}
	var tmp, outs temps
	defer tmp.release()
	ops := csrOperands(x, y)
	al := alloc(&outs)
	r, err := d.binary(op, sop, ops[0], ops[1], true, gradOut, al, &tmp)
	var crows *DeviceTensor
	if err == nil {
		crows, err = al("crows", Int64, crowShape(x.Shape)...)
	}
	if err == nil {
		err = d.crowsOf(op, r, x.Shape, crows, &tmp)
	}
	if err == nil {
		err = d.flush(op)
	}
	if err != nil {
		outs.release()
		return nil, spResult{}, err
	}
	return &SparseCSR{Crows: crows, Cols: r.idx, Values: r.vals, Shape: slices.Clone(x.Shape), Coalesced: true}, r, nil
}

func fresh(d *Device, op string) func(*temps) spAlloc {
	return func(outs *temps) spAlloc { return newAlloc(d, op, outs) }
}

// SparseBinary applies op to two COO tensors of one shape and value dtype:
// the result's pattern is the union of their coalesced patterns (explicit
// zeros are entries and stay), each value op(x, y) with a missing operand
// read as 0 under IEEE rules (a divide's x-only entry is +-inf, or NaN
// where x is 0; a multiply's one-sided entry is x*0: 0, -0 or NaN). The
// result is coalesced (entries in lexicographic order). Bad entries are an
// error naming the first, found on the device: the op waits for its
// validation, for the union's size, and once per operand it must coalesce.
func (d *Device) SparseBinary(op SparseOp, x, y *SparseCOO) (*SparseCOO, error) {
	out, _, err := d.binaryCOO(op, x, y, nil, fresh(d, sparseOpName(op, false)))
	return out, err
}

// SparseBinaryInto is SparseBinary writing into dst: dst's arrays are
// reused where they have the result's dtype and shape (a loop over
// operands of one pattern allocates nothing) and replaced (released)
// elsewhere.
func (d *Device) SparseBinaryInto(dst *SparseCOO, op SparseOp, x, y *SparseCOO) error {
	if dst == nil {
		return argErr(sparseOpName(op, false), "dst", "nil", "a sparse tensor", ErrInvalidArgument)
	}
	old := map[string]*DeviceTensor{"indices": dst.Indices, "values": dst.Values}
	out, _, err := d.binaryCOO(op, x, y, nil, func(outs *temps) spAlloc { return reuseAlloc(d, sparseOpName(op, false), outs, old) })
	if err != nil {
		return err
	}
	replace(&dst.Indices, out.Indices)
	replace(&dst.Values, out.Values)
	dst.Shape, dst.Coalesced = out.Shape, true
	return nil
}

// replace sets *slot to t, releasing the tensor it held unless it is t.
func replace(slot **DeviceTensor, t *DeviceTensor) {
	if *slot != t {
		(*slot).Release()
		*slot = t
	}
}

// SparseBinaryBackward returns op's result (as SparseBinary) and the
// gradients with respect to x and y for gradOut, the gradient of the
// result's values: all three on the result's (union) pattern, in its
// order, with a missing operand read as 0 (Paddle's
// ElementWise*CooGradKernel): add (g, g), sub (g, -g), mul (g*y, g*x),
// div (g/y, -g*(out/y)).
func (d *Device) SparseBinaryBackward(op SparseOp, x, y *SparseCOO, gradOut *DeviceTensor) (out *SparseCOO, gradX, gradY *DeviceTensor, err error) {
	if gradOut == nil {
		return nil, nil, nil, argErr(sparseOpName(op, true), "grad_out", "nil", "a tensor", ErrInvalidArgument)
	}
	out, r, err := d.binaryCOO(op, x, y, gradOut, fresh(d, sparseOpName(op, true)))
	if err != nil {
		return nil, nil, nil, err
	}
	return out, r.gx, r.gy, nil
}

// SparseBinaryCSR is SparseBinary on CSR tensors (2-D, or batched 3-D with
// the batches independent): the result's rows hold sorted unique columns.
func (d *Device) SparseBinaryCSR(op SparseOp, x, y *SparseCSR) (*SparseCSR, error) {
	out, _, err := d.binaryCSR(op, x, y, nil, fresh(d, sparseOpName(op, false)))
	return out, err
}

// SparseBinaryCSRInto is SparseBinaryCSR writing into dst (as
// SparseBinaryInto).
func (d *Device) SparseBinaryCSRInto(dst *SparseCSR, op SparseOp, x, y *SparseCSR) error {
	if dst == nil {
		return argErr(sparseOpName(op, false), "dst", "nil", "a sparse tensor", ErrInvalidArgument)
	}
	old := map[string]*DeviceTensor{"crows": dst.Crows, "indices": dst.Cols, "values": dst.Values}
	out, _, err := d.binaryCSR(op, x, y, nil, func(outs *temps) spAlloc { return reuseAlloc(d, sparseOpName(op, false), outs, old) })
	if err != nil {
		return err
	}
	replace(&dst.Crows, out.Crows)
	replace(&dst.Cols, out.Cols)
	replace(&dst.Values, out.Values)
	dst.Shape, dst.Coalesced = out.Shape, true
	return nil
}

// SparseBinaryBackwardCSR is SparseBinaryBackward on CSR tensors.
func (d *Device) SparseBinaryBackwardCSR(op SparseOp, x, y *SparseCSR, gradOut *DeviceTensor) (out *SparseCSR, gradX, gradY *DeviceTensor, err error) {
	if gradOut == nil {
		return nil, nil, nil, argErr(sparseOpName(op, true), "grad_out", "nil", "a tensor", ErrInvalidArgument)
	}
	out, r, err := d.binaryCSR(op, x, y, gradOut, fresh(d, sparseOpName(op, true)))
	if err != nil {
		return nil, nil, nil, err
	}
	return out, r.gx, r.gy, nil
}

// SparseDivide divides two COO tensors elementwise (see SparseBinary):
// Paddle's paddle.sparse.divide.
func (d *Device) SparseDivide(x, y *SparseCOO) (*SparseCOO, error) {
	return d.SparseBinary(SparseDivOp, x, y)
}

// SparseAdd adds two COO tensors elementwise (see SparseBinary).
func (d *Device) SparseAdd(x, y *SparseCOO) (*SparseCOO, error) {
	return d.SparseBinary(SparseAddOp, x, y)
}

// SparseSubtract subtracts two COO tensors elementwise (see SparseBinary).
func (d *Device) SparseSubtract(x, y *SparseCOO) (*SparseCOO, error) {
	return d.SparseBinary(SparseSubOp, x, y)
}

// SparseMultiply multiplies two COO tensors elementwise on the union of
// their patterns (see SparseBinary).
func (d *Device) SparseMultiply(x, y *SparseCOO) (*SparseCOO, error) {
	return d.SparseBinary(SparseMulOp, x, y)
}

// SparseDivideCSR divides two CSR tensors elementwise (see SparseBinaryCSR).
func (d *Device) SparseDivideCSR(x, y *SparseCSR) (*SparseCSR, error) {
	return d.SparseBinaryCSR(SparseDivOp, x, y)
}

// nonEmpty gives an empty operand one-element buffers, so that kernels
// may load at a clamped position 0 of any operand.
func (d *Device) nonEmpty(op string, o *spOperand, tmp *temps) error {
	if o.n > 0 {
		return nil
	}
	k, err := tmp.alloc(d, op, Int64, 1)
	if err != nil {
		return err
	}
	v, err := tmp.alloc(d, op, o.dtype(), 1)
	if err != nil {
		return err
	}
	o.keys, o.vals = k, v.raw()
	return nil
}
