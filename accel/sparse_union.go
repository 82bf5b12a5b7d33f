package accel

import (
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
	"github.com/accelkern/accel/reference"
)

// The CPU-shaped union of two COO operands that are not both coalesced
// (unionByBuckets; clkernels/common/sparse_body.h, sparse_upart ..
// sparse_uemit). Each entry of x then y gets the tagged key 2*key + (is
// y's): chunks of entries that stay in cache count their records per
// bucket of the tagged keys' high bits and place them by bucket in their
// own range (no atomics, input order kept); after one wait (the
// validation flag and the buckets' sizes), each work-group gathers its
// buckets chunk by chunk into its own cache-sized slot, sorts them stably
// by sub-buckets of the next bits and sums each key's x and y entries in
// input order from -0 (the scalar reference's bits), writing op(x, y)
// per key; after a second wait (the union's size), one pass writes the
// coordinates (a running quotient, no division per entry) and values.

// slotPlan is the launch of count work-groups of one work-item each (a
// chunk, a bucket or a slot per group).
func slotPlan(kernel string, caps host.Caps, count int64) host.Plan {
	count = max(count, 1)
	return host.Plan{Kernel: kernel, LocalSize: 1, Knobs: []host.Knob{host.KnobItems.Set(1), host.KnobContig.Set(1)},
		TileElems: 1, Tiles: count, Groups: host.FoldGroups(count, caps.MaxWorkGroupCount),
		Reason: "one chunk, bucket or slot per work-group"}
}

// cooArgs are a COO operand's indices and values for a kernel that reads
// them: one-element stand-ins for an empty operand.
func (d *Device) cooArgs(op string, o *spOperand, tmp *temps) (idx, vals host.Buffer, wideIdx int64, err error) {
	if o.n > 0 {
		return o.coo.Indices.raw(), o.coo.Values.raw(), wide(o.coo.Indices.dtype), nil
	}
	i, err := tmp.alloc(d, op, Int64, 1)
	if err != nil {
		return nil, nil, 0, err
	}
	v, err := tmp.alloc(d, op, o.dtype(), 1)
	if err != nil {
		return nil, nil, 0, err
	}
	return i.raw(), v.raw(), 1, nil
}

// bucketBinary is binary on the unionByBuckets plan (COO operands).
func (d *Device) bucketBinary(op string, sop SparseOp, x, y *spOperand, up unionPlan, keyBits int, gradOut *DeviceTensor,
	alloc spAlloc, tmp *temps) (spResult, error) {
	var r spResult
	b := &bucketUnion{d: d, op: op, sop: sop, x: x, y: y, up: up, tmp: tmp, n: x.n + y.n, shape: x.shape(), dt: x.dtype(),
		nb: int64(1) << up.BucketBits, shift: int64(keyBits + 1 - up.BucketBits), grad: gradOut != nil}
	b.v = dtVariant(b.dt)
	// the flag words, then the buckets' sizes
	words := kernels.SpFlagWords + b.nb
	var err error
	if b.flag, err = d.newFlagWords(op, words); err != nil {
		return r, err
	}
	tmp.add(b.flag)
	if b.sh, err = d.uploadInt64s(op, tmp, b.shape); err != nil {
		return r, err
	}
	if b.n > 0 {
		if err := b.partition(); err != nil {
			return r, err
		}
	}
	if err := d.flush(op); err != nil {
		return r, err
	}
	w, err := d.readFlagWords(op, b.flag, words)
	if err != nil {
		return r, err
	}
	if flagged(w) {
		return r, d.sparseBadEntry(op, []*spOperand{x, y})
	}
	// the buckets' starts and the largest
	bst := make([]int64, b.nb)
	capRec, at := int64(1), int64(0)
	for i := range bst {
		m := int64(w[kernels.SpFlagWords+int64(i)])
		bst[i], at = at, at+m
		capRec = max(capRec, m)
	}
	if b.bs, err = d.uploadInt64s(op, tmp, bst); err != nil {
		return r, err
	}
	if b.ucnt, err = tmp.alloc(d, op, Int64, b.nb); err != nil {
		return r, err
	}
	b.ub = b.rv
	if b.n > 0 {
		err = b.sort(capRec)
	} else if err = d.fill(b.ucnt.raw(), 0, b.nb*8, []byte{0}); err != nil {
		err = fmt.Errorf("accel: %s: %w", op, err)
	}
	if err != nil {
		return r, err
	}
	if w, err = d.scanCounts(op, b.ucnt, b.nb, b.flag); err != nil {
		return r, err
	}
	r.u = int64(w[kernels.SpFlagTotal]) | int64(w[kernels.SpFlagTotal+1])<<32
	if err := d.allocResult(op, b.dt, len(b.shape), false, gradOut, alloc, &r); err != nil {
		return r, err
	}
	if r.u == 0 {
		return r, nil
	}
	var g, gx, gy host.Buffer = b.rv.raw(), r.vals.raw(), r.vals.raw() // stand-ins the kernel does not touch
	if b.grad {
		g, gx, gy = gradOut.raw(), r.gx.raw(), r.gy.raw()
	}
	return r, d.launch(op, b.v, slotPlan("sparse_uemit", d.caps, b.nb), kernels.SparseUemit{Uk: b.rk.raw(), Ua: b.rv.raw(), Ub: b.ub.raw(),
		Bst: b.bs.raw(), Uoff: b.ucnt.raw(), Gout: g, Uidx: r.idx.raw(), Uval: r.vals.raw(), Gxo: gx, Gyo: gy, Shape: b.sh.raw(),
		Ndim: int64(len(b.shape)), Nb: b.nb, Shift: b.shift, U: r.u, Op: int64(b.sop), Grad: b2i(b.grad)})
}

// bucketUnion is one bucketed COO union's state (bucketBinary).
type bucketUnion struct {
	d         *Device
	op        string
	sop       SparseOp
	x, y      *spOperand
	up        unionPlan
	tmp       *temps
	n         int64 // entries of both operands
	shape     []int64
	dt        DType
	v         string // the kernels' variant for dt
	nb, shift int64  // buckets, and the shift of a tagged key to its bucket
	grad      bool
	flag, sh  *DeviceTensor
	rk, rv    *DeviceTensor // the records by bucket: key bits, values
	bs, ucnt  *DeviceTensor // the buckets' starts; their unique counts
	ub        *DeviceTensor // y's values by record (gradients), else rv
}

// partition counts each chunk's records per bucket, scans the counts and
// places every record (its key's low bits, its value) in its bucket.
func (b *bucketUnion) partition() error {
	d, op, x, y, tmp := b.d, b.op, b.x, b.y, b.tmp
	chunks := (b.n + b.up.Chunk - 1) / b.up.Chunk
	tab, err := tmp.alloc(d, op, Uint32, b.nb*chunks)
	if err != nil {
		return err
	}
	loc, err := tmp.alloc(d, op, Uint32, b.nb*chunks)
	if err != nil {
		return err
	}
	if b.rk, err = tmp.alloc(d, op, Uint32, b.n); err != nil {
		return err
	}
	if b.rv, err = tmp.alloc(d, op, b.dt, b.n); err != nil {
		return err
	}
	xi, xv, wx, err := d.cooArgs(op, x, tmp)
	if err != nil {
		return err
	}
	yi, yv, wy, err := d.cooArgs(op, y, tmp)
	if err != nil {
		return err
	}
	cp := slotPlan("sparse_upart", d.caps, chunks)
	if err := d.launch(op, b.v, cp, kernels.SparseUhist{Xi: xi, Yi: yi, Shape: b.sh.raw(), Tab: tab.raw(), Loc: loc.raw(), Err: b.flag.raw(),
		Ndim: int64(len(b.shape)), Nx: x.n, Ny: y.n, Ch: b.up.Chunk, Nb: b.nb, Shift: b.shift, WideX: wx, WideY: wy}); err != nil {
		return err
	}
	s, err := d.scanBuf(op, Uint32, tab.raw(), tab.raw(), b.nb*chunks, kernels.FlagNone, true)
	if err != nil {
		return err
	}
	s.release()
	return d.launch(op, b.v, cp, kernels.SparseUpart{Xi: xi, Yi: yi, Xv: xv, Yv: yv, Shape: b.sh.raw(), Tab: tab.raw(),
		Loc: loc.raw(), Rk: b.rk.raw(), Rv: b.rv.raw(), Ndim: int64(len(b.shape)), Nx: x.n, Ny: y.n, Ch: b.up.Chunk, Nb: b.nb, Shift: b.shift,
		WideX: wx, WideY: wy})
}

// sort sorts and reduces each bucket in a slot's cache-sized area (a few
// slots per core, within twice the records in all; capRec records the
// largest bucket), counting each bucket's unique keys.
func (b *bucketUnion) sort(capRec int64) error {
	d, op, tmp := b.d, b.op, b.tmp
	slots := min(4*int64(max(d.caps.ComputeUnits, 1)), b.nb, max(2*b.n/capRec, 1))
	sk, err := tmp.alloc(d, op, Uint32, slots*2*capRec)
	if err != nil {
		return err
	}
	sv, err := tmp.alloc(d, op, b.dt, slots*2*capRec)
	if err != nil {
		return err
	}
	cnt, err := tmp.alloc(d, op, Uint32, slots*kernels.SpUcnt)
	if err != nil {
		return err
	}
	if b.grad {
		if b.ub, err = tmp.alloc(d, op, b.dt, b.n); err != nil {
			return err
		}
	}
	return d.launch(op, b.v, slotPlan("sparse_usort", d.caps, slots), kernels.SparseUsort{Rk: b.rk.raw(), Rv: b.rv.raw(), Ub: b.ub.raw(),
		Err: b.flag.raw(), Bst: b.bs.raw(), Sk: sk.raw(), Sv: sv.raw(), Cnt: cnt.raw(), Ucnt: b.ucnt.raw(), Nb: b.nb, Shift: b.shift,
		Cap: capRec, Op: int64(b.sop), Grad: b2i(b.grad)})
}

// bucketEligible returns the union plan of two COO operands that are not
// both coalesced, and their keys' bits.
func (d *Device) bucketEligible(x, y *spOperand) (unionPlan, int) {
	if x.coo == nil || y.coo == nil || (x.coo.Coalesced && y.coo.Coalesced) {
		return unionPlan{}, 0
	}
	size, _ := reference.SparseSize(x.shape())
	kb := keyBitsFor(size)
	return d.planner.union(d.caps, x.n+y.n, kb), kb
}
