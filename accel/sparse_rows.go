package accel

import (
	"fmt"
	"slices"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
	"github.com/accelkern/accel/reference"
)

// The CPU-shaped union of two sparse operands (sparseByRows): rows of
// a CSR operand are read as stored, through its global row pointers and
// its columns (no keys); a COO operand is one row whose columns are its
// keys. A sequence of each row's marker followed by its x and y entries
// is cut into chunks, one per work-item (clkernels/common/sparse_body.h,
// sparse_rcount and sparse_remit): a long row splits across chunks and an
// empty row costs one step, so any mix balances, while each chunk runs a
// plain two-pointer merge per row. The count pass also checks each
// operand's entries by index (range, ascent within rows); an operand that
// turns out unsorted is coalesced (COO) or sends the op to the keyed merge
// path (CSR, whose rows must be sorted first). With sparsePlan's
// OnePass (CPU drivers without a loop limit; CSR results without
// gradients) a single walk writes each chunk's entries into a scratch
// slot as long as the chunk (sparse_rmerge, which also counts and
// checks), and after the scan a copy moves them to their place
// (sparse_rcopy): one merge instead of two, for a copy of each entry.

// rowKnobs returns a row-union plan with the operands' index widths and
// more modes compiled in, so that the merge loops hold no run-time switch.
func rowKnobs(p host.Plan, wideX, wideY int64, more ...host.Knob) host.Plan {
	k := append(slices.Clone(p.Knobs), host.KnobSpWideX.Set(wideX), host.KnobSpWideY.Set(wideY))
	p.Knobs = append(k, more...)
	return p
}

// rowOperand is an operand's view for the row union.
type rowOperand struct {
	ptrs *DeviceTensor // int64 [G+1] global row pointers
	cols host.Buffer   // columns (CSR) or keys (COO)
	wide int64
}

// rowView returns a prepared (keyed, for COO) operand's row view: a CSR
// operand's pointers and columns, or a COO operand's keys as one row.
func (d *Device) rowView(op string, o *spOperand, gptr *DeviceTensor, tmp *temps) (rowOperand, error) {
	if err := d.nonEmpty(op, o, tmp); err != nil {
		return rowOperand{}, err
	}
	if o.csr != nil && o.n > 0 {
		return rowOperand{ptrs: gptr, cols: o.csr.Cols.raw(), wide: wide(o.csr.Cols.dtype)}, nil
	}
	if o.csr != nil { // empty: the dummy key buffer stands for the columns
		return rowOperand{ptrs: gptr, cols: o.keys.raw(), wide: 1}, nil
	}
	p, err := d.uploadInt64s(op, tmp, []int64{0, o.n})
	return rowOperand{ptrs: p, cols: o.keys.raw(), wide: 1}, err
}

// rowBinary is binary on the sparseByRows plan.
func (d *Device) rowBinary(op string, sop SparseOp, x, y *spOperand, cols bool, gradOut *DeviceTensor, alloc spAlloc, tmp *temps) (spResult, error) {
	var r spResult
	u := &rowUnion{d: d, op: op, sop: sop, x: x, y: y, cols: cols, gradOut: gradOut, tmp: tmp}
	if err := u.operands(); err != nil {
		return r, err
	}
	w, err := u.count()
	if err != nil {
		return r, err
	}
	if flagged(w) {
		return r, d.sparseBadEntry(op, []*spOperand{x, y})
	}
	if w[spFlagSlot(0)] != 0 || w[spFlagSlot(1)] != 0 {
		if cols { // unsorted rows: keys, coalescing and the keyed merge
			return d.mergeBinary(op, sparsePlan{Strategy: sparseByMergePath, Reason: "unsorted rows: keys, coalescing and the keyed merge"},
				sop, x, y, cols, gradOut, alloc, tmp)
		}
		for i, o := range []*spOperand{x, y} {
			if w[spFlagSlot(i)] != 0 {
				if err := d.coalesceOperand(op, o, u.flag, tmp); err != nil {
					return r, err
				}
			}
		}
		if w, err = u.count(); err != nil {
			return r, err
		}
	}
	r.u = int64(w[kernels.SpFlagTotal]) | int64(w[kernels.SpFlagTotal+1])<<32
	shape := x.shape()
	ndim := len(shape)
	if cols {
		ndim = 1
	}
	if err := d.allocResult(op, x.dtype(), ndim, cols, gradOut, alloc, &r); err != nil {
		return r, err
	}
	if r.gstart = u.sstart; u.sstart == nil {
		if r.gstart, err = tmp.alloc(d, op, Int64, u.g+1); err != nil {
			return r, err
		}
	}
	if r.u == 0 {
		if err := d.fill(r.gstart.raw(), 0, (u.g+1)*8, []byte{0}); err != nil {
			return r, fmt.Errorf("accel: %s: %w", op, err)
		}
		return r, nil
	}
	return r, u.emit(&r, shape[len(shape)-ndim:])
}

// rowUnion is one row union's state (rowBinary): the operands as rows,
// the flag words, the plan and the counts of its chunks.
type rowUnion struct {
	d       *Device
	op      string
	sop     SparseOp
	x, y    *spOperand
	cols    bool
	gradOut *DeviceTensor
	tmp     *temps
	flag    *DeviceTensor
	ptrs    [2]*DeviceTensor // CSR operands' row pointers
	g       int64            // rows (batch x rows), 1 for COO keys
	colsN   int64            // CSR columns, -1 for COO keys
	vx, vy  rowOperand
	sp      sparsePlan
	off     *DeviceTensor // the chunks' counts, scanned
	// the one pass (CSR, no gradients): the merge into the scratch,
	// whose rows' starts become the result's after the copy
	scol, sval, sstart *DeviceTensor
}

// operands allocates the flag words and readies each operand: a CSR's
// row pointers (checked), a COO's keys.
func (u *rowUnion) operands() error {
	d, op := u.d, u.op
	var err error
	if u.flag, err = d.newSparseFlag(op, u.tmp); err != nil {
		return err
	}
	u.g, u.colsN = 1, -1
	for i, o := range []*spOperand{u.x, u.y} {
		if o.csr != nil {
			b, rows, c := reference.CSRDims(o.csr.Shape)
			u.g, u.colsN = b*rows, c
			o.vals, o.sorted = o.csr.Values.raw(), o.csr.Coalesced
			if u.ptrs[i], err = d.csrPtrs(op, o, u.flag, u.tmp); err != nil {
				return err
			}
		} else if err := d.keyOperand(op, o, spFlagSlot(i), u.flag, u.tmp, false); err != nil {
			return err
		}
	}
	return nil
}

// count merges the rows chunk by chunk, counting each chunk's entries
// (the one pass also writes them into the scratch), scans the counts and
// reads the flag words (one wait).
func (u *rowUnion) count() ([]uint32, error) {
	d, op, x, y, tmp := u.d, u.op, u.x, u.y, u.tmp
	var err error
	if u.vx, err = d.rowView(op, x, u.ptrs[0], tmp); err != nil {
		return nil, err
	}
	if u.vy, err = d.rowView(op, y, u.ptrs[1], tmp); err != nil {
		return nil, err
	}
	vx, vy, g := u.vx, u.vy, u.g
	u.sp = d.planner.sparse(d.caps, x.n+y.n+g)
	sp := u.sp
	if u.off, err = tmp.alloc(d, op, Int64, sp.Plan.Tiles); err != nil {
		return nil, err
	}
	if sp.OnePass && u.cols && u.gradOut == nil {
		total := max(x.n+y.n+g, 1)
		if u.scol, err = tmp.alloc(d, op, Int64, total); err != nil {
			return nil, err
		}
		if u.sval, err = tmp.alloc(d, op, x.dtype(), total); err != nil {
			return nil, err
		}
		if u.sstart, err = tmp.alloc(d, op, Int64, g+1); err != nil {
			return nil, err
		}
		if err := d.launch(op, dtVariant(x.dtype()), rowKnobs(sp.Plan, vx.wide, vy.wide, host.KnobSpOp.Set(int64(u.sop))),
			kernels.SparseRmerge{Gx: vx.ptrs.raw(), Gy: vy.ptrs.raw(), Cx: vx.cols, Cy: vy.cols, Xv: x.vals, Yv: y.vals,
				Scol: u.scol.raw(), Sval: u.sval.raw(), Gstart: u.sstart.raw(), Cnt: u.off.raw(), Err: u.flag.raw(), G: g, Nx: x.n, Ny: y.n,
				Chunk: sp.Plan.TileElems, ColsN: u.colsN, WideX: vx.wide, WideY: vy.wide, Op: int64(u.sop)}); err != nil {
			return nil, err
		}
	} else if err := run(d, op, kernels.SparseF32, rowKnobs(sp.Plan, vx.wide, vy.wide), kernels.SparseRcount{Gx: vx.ptrs.raw(), Gy: vy.ptrs.raw(), Cx: vx.cols, Cy: vy.cols,
		Cnt: u.off.raw(), Err: u.flag.raw(), G: g, Nx: x.n, Ny: y.n, Chunk: sp.Plan.TileElems, ColsN: u.colsN,
		WideX: vx.wide, WideY: vy.wide}); err != nil {
		return nil, err
	}
	return d.scanCounts(op, u.off, sp.Plan.Tiles, u.flag)
}

// emit writes the union's r.u entries into r: the one pass's copy from
// the scratch, or the emit pass merging again (op applied, gradients
// where asked) with the result's shape.
func (u *rowUnion) emit(r *spResult, shape []int64) error {
	d, op, x, y, sp, vx, vy := u.d, u.op, u.x, u.y, u.sp, u.vx, u.vy
	sh, err := d.uploadInt64s(op, u.tmp, shape)
	if err != nil {
		return err
	}
	if u.sstart != nil {
		return d.launch(op, dtVariant(x.dtype()), sp.Plan, kernels.SparseRcopy{Gx: vx.ptrs.raw(), Gy: vy.ptrs.raw(), Off: u.off.raw(),
			Scol: u.scol.raw(), Sval: u.sval.raw(), Uidx: r.idx.raw(), Uval: r.vals.raw(), Gstart: r.gstart.raw(), G: u.g, Nx: x.n, Ny: y.n,
			U: r.u, Chunk: sp.Plan.TileElems})
	}
	var gout, gx, gy host.Buffer
	if u.gradOut != nil {
		gout, gx, gy = u.gradOut.raw(), r.gx.raw(), r.gy.raw()
	}
	grad := b2i(u.gradOut != nil)
	p := rowKnobs(sp.Plan, vx.wide, vy.wide, host.KnobSpOp.Set(int64(u.sop)), host.KnobSpGrad.Set(grad))
	return d.launch(op, dtVariant(x.dtype()), p, kernels.SparseRemit{Gx: vx.ptrs.raw(), Gy: vy.ptrs.raw(), Cx: vx.cols, Cy: vy.cols,
		Off: u.off.raw(), Xv: x.vals, Yv: y.vals, Gout: gout, Uidx: r.idx.raw(), Uval: r.vals.raw(), Gxo: gx, Gyo: gy,
		Gstart: r.gstart.raw(), Shape: sh.raw(), Err: u.flag.raw(), Ndim: int64(len(shape)), G: u.g, Nx: x.n, Ny: y.n, U: r.u,
		Chunk: sp.Plan.TileElems, ColsN: u.colsN, WideX: vx.wide, WideY: vy.wide, Op: int64(u.sop), Grad: grad})
}

// coalesceBuckets is coalesceOperand on the coalesceByBuckets plan: it
// counts the keys per bucket of their high bits, scatters them (with
// their input positions and values, one record each) into their buckets, sorts each
// bucket by (key, position), and sums each key's values in input order
// from -0, the scalar reference's bits (one wait, for the count of
// distinct keys).
func (d *Device) coalesceBuckets(op string, o *spOperand, cp coalescePlan, keyBits int, flag *DeviceTensor, tmp *temps) error {
	bb := min(cp.BucketBits, keyBits)
	nb, shift := int64(1)<<bb, int64(keyBits-bb)
	dt := o.dtype()
	cnt, err := tmp.alloc(d, op, Uint32, nb)
	if err != nil {
		return err
	}
	start, err := tmp.alloc(d, op, Uint32, nb)
	if err != nil {
		return err
	}
	rw := int64(4) // record words: key, position, value (float64: 6, aligned)
	if dt == Float64 {
		rw = 6
	}
	rec, err := tmp.alloc(d, op, Uint32, o.n*rw)
	if err != nil {
		return err
	}
	ucnt, err := tmp.alloc(d, op, Int64, nb)
	if err != nil {
		return err
	}
	if err := d.fill(cnt.raw(), 0, nb*4, []byte{0}); err != nil {
		return fmt.Errorf("accel: %s: %w", op, err)
	}
	v := dtVariant(dt)
	if err := run(d, op, kernels.SparseF32, d.elementwise(op, o.n), kernels.SparseBhist{Keys: o.keys.raw(), Cnt: cnt.raw(), N: o.n, Shift: shift}); err != nil {
		return err
	}
	s, err := d.scanBuf(op, Uint32, cnt.raw(), start.raw(), nb, kernels.FlagNone, true)
	if err != nil {
		return err
	}
	s.release()
	if err := d.launch(op, v, d.elementwise(op, o.n), kernels.SparseBscatter{Keys: o.keys.raw(), Vals: o.vals, Start: start.raw(),
		Cnt: cnt.raw(), Rec: rec.raw(), N: o.n, Shift: shift}); err != nil {
		return err
	}
	bp := d.chunkPlan(op, nb, 256) // few buckets per invocation under a loop limit
	if err := d.launch(op, v, bp, kernels.SparseBsort{Start: start.raw(), Rec: rec.raw(), Ucnt: ucnt.raw(),
		Nb: nb, N: o.n}); err != nil {
		return err
	}
	w, err := d.scanCounts(op, ucnt, nb, flag)
	if err != nil {
		return err
	}
	u := int64(w[kernels.SpFlagTotal]) | int64(w[kernels.SpFlagTotal+1])<<32
	ukeys, err := tmp.alloc(d, op, Int64, u)
	if err != nil {
		return err
	}
	uvals, err := tmp.alloc(d, op, dt, u)
	if err != nil {
		return err
	}
	if err := d.launch(op, v, bp, kernels.SparseBsum{Start: start.raw(), Rec: rec.raw(), Uoff: ucnt.raw(),
		Ukeys: ukeys.raw(), Uvals: uvals.raw(), Nb: nb, N: o.n}); err != nil {
		return err
	}
	o.keys, o.vals, o.n, o.sorted = ukeys, uvals.raw(), u, true
	return nil
}
