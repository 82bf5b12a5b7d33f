package accel

import (
	"encoding/binary"
	"fmt"

	"github.com/accelkern/accel/host"
	"github.com/accelkern/accel/host/kernels"
	"github.com/accelkern/accel/reference"
)

// The CPU-shaped union of two COO operands that are not both coalesced
// (host.UnionBuckets; clkernels/common/sparse_body.h, sparse_upart ..
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

// unionPlan is host.PlanUnion for n entries of keyBits-bit keys, after a
// test's override.
func (d *Device) unionPlan(n int64, keyBits int) host.UnionPlan {
	p := host.PlanUnion(d.caps, n, keyBits)
	if d.unionHook != nil {
		p = d.unionHook(p, n, keyBits)
	}
	return p
}

// slotPlan is the launch of count work-groups of one work-item each (a
// chunk, a bucket or a slot per group).
func slotPlan(kernel string, caps host.Caps, count int64) host.Plan {
	count = max(count, 1)
	return host.Plan{Kernel: kernel, LocalSize: 1, Knobs: []host.Knob{{Name: "ITEMS", Value: 1}, {Name: "CONTIG", Value: 1}},
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

// bucketBinary is binary on the host.UnionBuckets plan (COO operands).
func (d *Device) bucketBinary(op string, sop SparseOp, x, y *spOperand, up host.UnionPlan, keyBits int, gradOut *DeviceTensor,
	alloc spAlloc, tmp *temps) (spResult, error) {
	var r spResult
	n := x.n + y.n
	nb, shift := int64(1)<<up.BucketBits, int64(keyBits+1-up.BucketBits)
	shape := x.shape()
	dt := x.dtype()
	v := dtVariant(dt)
	// the flag words, then the buckets' sizes
	words := kernels.SpFlagWords + nb
	flag, err := tmp.alloc(d, op, Uint32, words)
	if err != nil {
		return r, err
	}
	b := make([]byte, 4*words)
	binary.LittleEndian.PutUint32(b, kernels.ErrNone)
	if err := d.h.Upload(flag.raw(), 0, b); err != nil {
		return r, fmt.Errorf("accel: %s: %w", op, err)
	}
	sh, err := d.uploadInt64s(op, tmp, shape)
	if err != nil {
		return r, err
	}
	chunks := (n + up.Chunk - 1) / up.Chunk
	var rk, rv *DeviceTensor
	if n > 0 {
		tab, err := tmp.alloc(d, op, Uint32, nb*chunks)
		if err != nil {
			return r, err
		}
		loc, err := tmp.alloc(d, op, Uint32, nb*chunks)
		if err != nil {
			return r, err
		}
		if rk, err = tmp.alloc(d, op, Uint32, n); err != nil {
			return r, err
		}
		if rv, err = tmp.alloc(d, op, dt, n); err != nil {
			return r, err
		}
		xi, xv, wx, err := d.cooArgs(op, x, tmp)
		if err != nil {
			return r, err
		}
		yi, yv, wy, err := d.cooArgs(op, y, tmp)
		if err != nil {
			return r, err
		}
		cp := slotPlan("sparse_upart", d.caps, chunks)
		if err := d.run(op, v, cp, kernels.SparseUhist{Xi: xi, Yi: yi, Shape: sh.raw(), Tab: tab.raw(), Loc: loc.raw(), Err: flag.raw(),
			Ndim: int64(len(shape)), Nx: x.n, Ny: y.n, Ch: up.Chunk, Nb: nb, Shift: shift, WideX: wx, WideY: wy}); err != nil {
			return r, err
		}
		s, err := d.scanBuf(op, Uint32, tab.raw(), tab.raw(), nb*chunks, kernels.FlagNone, true)
		if err != nil {
			return r, err
		}
		s.release()
		if err := d.run(op, v, cp, kernels.SparseUpart{Xi: xi, Yi: yi, Xv: xv, Yv: yv, Shape: sh.raw(), Tab: tab.raw(),
			Loc: loc.raw(), Rk: rk.raw(), Rv: rv.raw(), Ndim: int64(len(shape)), Nx: x.n, Ny: y.n, Ch: up.Chunk, Nb: nb, Shift: shift,
			WideX: wx, WideY: wy}); err != nil {
			return r, err
		}
	}
	if err := d.flush(op); err != nil {
		return r, err
	}
	if err := d.h.Download(flag.raw(), 0, b); err != nil {
		return r, fmt.Errorf("accel: %s: read the validation flag: %w", op, err)
	}
	if binary.LittleEndian.Uint32(b) != kernels.ErrNone {
		return r, d.sparseBadEntry(op, []*spOperand{x, y})
	}
	// the buckets' starts and the largest
	bst := make([]int64, nb)
	capRec, at := int64(1), int64(0)
	for i := range bst {
		m := int64(binary.LittleEndian.Uint32(b[4*(kernels.SpFlagWords+int64(i)):]))
		bst[i], at = at, at+m
		capRec = max(capRec, m)
	}
	bs, err := d.uploadInt64s(op, tmp, bst)
	if err != nil {
		return r, err
	}
	// slots: a few per core, within twice the records in all
	slots := min(4*int64(max(d.caps.ComputeUnits, 1)), nb, max(2*n/capRec, 1))
	ucnt, err := tmp.alloc(d, op, Int64, nb)
	if err != nil {
		return r, err
	}
	grad := gradOut != nil
	ub := rv
	if n > 0 {
		sk, err := tmp.alloc(d, op, Uint32, slots*2*capRec)
		if err != nil {
			return r, err
		}
		sv, err := tmp.alloc(d, op, dt, slots*2*capRec)
		if err != nil {
			return r, err
		}
		cnt, err := tmp.alloc(d, op, Uint32, slots*kernels.SpUcnt)
		if err != nil {
			return r, err
		}
		if grad {
			if ub, err = tmp.alloc(d, op, dt, n); err != nil {
				return r, err
			}
		}
		if err := d.run(op, v, slotPlan("sparse_usort", d.caps, slots), kernels.SparseUsort{Rk: rk.raw(), Rv: rv.raw(), Ub: ub.raw(),
			Err: flag.raw(), Bst: bs.raw(), Sk: sk.raw(), Sv: sv.raw(), Cnt: cnt.raw(), Ucnt: ucnt.raw(), Nb: nb, Shift: shift,
			Cap: capRec, Op: int64(sop), Grad: b2i(grad)}); err != nil {
			return r, err
		}
	} else if err := d.h.Fill(ucnt.raw(), 0, nb*8, []byte{0}); err != nil {
		return r, fmt.Errorf("accel: %s: %w", op, err)
	}
	w, err := d.scanCounts(op, ucnt, nb, flag)
	if err != nil {
		return r, err
	}
	r.u = int64(w[kernels.SpFlagTotal]) | int64(w[kernels.SpFlagTotal+1])<<32
	if err := d.allocResult(op, dt, len(shape), false, gradOut, alloc, &r); err != nil {
		return r, err
	}
	if r.u == 0 {
		return r, nil
	}
	var g, gx, gy host.Buffer = rv.raw(), r.vals.raw(), r.vals.raw() // stand-ins the kernel does not touch
	if grad {
		g, gx, gy = gradOut.raw(), r.gx.raw(), r.gy.raw()
	}
	return r, d.run(op, v, slotPlan("sparse_uemit", d.caps, nb), kernels.SparseUemit{Uk: rk.raw(), Ua: rv.raw(), Ub: ub.raw(),
		Bst: bs.raw(), Uoff: ucnt.raw(), Gout: g, Uidx: r.idx.raw(), Uval: r.vals.raw(), Gxo: gx, Gyo: gy, Shape: sh.raw(),
		Ndim: int64(len(shape)), Nb: nb, Shift: shift, U: r.u, Op: int64(sop), Grad: b2i(grad)})
}

// bucketEligible returns the union plan of two COO operands that are not
// both coalesced, and their keys' bits.
func (d *Device) bucketEligible(x, y *spOperand) (host.UnionPlan, int) {
	if x.coo == nil || y.coo == nil || (x.coo.Coalesced && y.coo.Coalesced) {
		return host.UnionPlan{}, 0
	}
	size, _ := reference.SparseSize(x.shape())
	kb := keyBitsFor(size)
	return d.unionPlan(x.n+y.n, kb), kb
}
