package accel

import "github.com/accelkern/accel/host"

// testPlanner is the tests' planner (the one test seam, Device.planner):
// the device's, with any of its choices replaced.
type testPlanner struct {
	devicePlanner
	// launchFn rewrites launch plans (odd group shapes, knobs).
	launchFn func(host.Plan) host.Plan
	// copyKernel makes copies run the copy kernel on any device, and
	// fillKernel fills the fill kernel.
	copyKernel, fillKernel bool
	// radixTiles makes radix sorts run the GPUs' tiled passes on any
	// device.
	radixTiles bool
	// uniqueFn rewrites Unique's plan.
	uniqueFn func(up uniquePlan, n int64, keyBytes int) uniquePlan
	// scatterFn rewrites chooseScatter's choice (completeScatter then
	// makes it one the geometry allows, as for the device's).
	scatterFn func(sp scatterPlan, s scatterShape) scatterPlan
	// scatterCAS, where nonzero, sets the atomic path's CAS after
	// completeScatter: 1 on, -1 off (the device's native adds).
	scatterCAS int
	// sparseFn, coalesceFn and unionFn rewrite the sparse plans.
	sparseFn   func(sp sparsePlan, total int64) sparsePlan
	coalesceFn func(cp coalescePlan, n int64, keyBits int) coalescePlan
	unionFn    func(up unionPlan, n int64, keyBits int) unionPlan
	// shape and noGrid force get_indice_pairs' layout.
	shape  indiceShape
	noGrid bool
}

// plans returns d's test planner, installing one (which plans as the
// device's until a test sets a field) if d has none.
func plans(d *Device) *testPlanner {
	if tp, ok := d.planner.(*testPlanner); ok {
		return tp
	}
	tp := &testPlanner{}
	d.planner = tp
	return tp
}

func (p *testPlanner) launch(l host.Plan) host.Plan {
	if p.launchFn != nil {
		return p.launchFn(l)
	}
	return l
}

func (p *testPlanner) copy(caps host.Caps, n int64) (host.Plan, bool) {
	l, ours := planCopy(caps, n)
	return l, ours || p.copyKernel
}

func (p *testPlanner) fill(caps host.Caps, n int64) (host.Plan, bool) {
	l, ours := planFill(caps, n)
	return l, ours || p.fillKernel
}

func (p *testPlanner) radix(caps host.Caps, n int64, keyBytes int, entryLimit int64) host.Plan {
	if p.radixTiles {
		return planRadixTiled(caps, n, keyBytes, entryLimit)
	}
	return planRadix(caps, n, keyBytes, entryLimit)
}

func (p *testPlanner) unique(caps host.Caps, n int64, keyBytes int) uniquePlan {
	up := planUnique(caps, n, keyBytes)
	if p.uniqueFn != nil {
		up = p.uniqueFn(up, n, keyBytes)
	}
	return up
}

func (p *testPlanner) scatter(caps host.Caps, s scatterShape) scatterPlan {
	sp := chooseScatter(caps, s)
	if p.scatterFn != nil {
		sp = p.scatterFn(sp, s)
	}
	sp = completeScatter(caps, s, sp)
	if p.scatterCAS != 0 && sp.Path == scatterAtomic {
		sp.CAS = p.scatterCAS > 0
	}
	return sp
}

func (p *testPlanner) sparse(caps host.Caps, total int64) sparsePlan {
	sp := planSparse(caps, total)
	if p.sparseFn != nil {
		sp = p.sparseFn(sp, total)
	}
	return sp
}

func (p *testPlanner) coalesce(caps host.Caps, n int64, keyBits int) coalescePlan {
	cp := planCoalesce(caps, n, keyBits)
	if p.coalesceFn != nil {
		cp = p.coalesceFn(cp, n, keyBits)
	}
	return cp
}

func (p *testPlanner) union(caps host.Caps, n int64, keyBits int) unionPlan {
	up := planUnion(caps, n, keyBits)
	if p.unionFn != nil {
		up = p.unionFn(up, n, keyBits)
	}
	return up
}

func (p *testPlanner) indiceLayout() (indiceShape, bool) { return p.shape, p.noGrid }
